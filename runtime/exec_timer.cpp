// Ex timers (ExAllocateTimer, ExSetTimer, ExCancelTimer, ExDeleteTimer), built on a KTIMER and
// KDPCs: the KTIMER expires on the runtime's timer thread and queues the expiry DPC, which runs
// the callback at DISPATCH_LEVEL and re-arms a periodic timer. Deletion goes through a second
// DPC (the reaper): the DPC thread runs DPCs one at a time in FIFO order, so once the reaper
// runs, no expiry DPC of the timer is queued or running and its memory can be freed.
// Contracts are in softndk_wdm_exec.h.
#include <chrono>
#include <mutex>
#include <new>

#include <spdlog/fmt/fmt.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

struct _EX_TIMER {
    KTIMER timer;  // first: KeWaitForSingleObject takes a PEX_TIMER
    KDPC expiry_dpc;
    KDPC reaper_dpc;
    ULONG magic;
    PEXT_CALLBACK callback;
    PVOID context;
    std::mutex lock;       // guards everything below; lock order: this -> timer queue -> dispatcher
    bool pending = false;  // set, and (one-shot) not yet expired
    bool deleting = false;             // ExDeleteTimer has been called
    bool delete_after_expiry = false;  // ExDeleteTimer(Cancel = FALSE) on a pending one-shot
    ULONG generation = 0;              // bumped by every set, cancel and delete
    LONGLONG period = 0;               // 100 ns units
    std::chrono::steady_clock::time_point next_due{};
    PEXT_DELETE_CALLBACK delete_callback = nullptr;
    PVOID delete_context = nullptr;
    PKEVENT deleted = nullptr;  // ExDeleteTimer(Wait = TRUE)'s event, set after the free
};

namespace softndk::wdk {
namespace {

constexpr ULONG kExTimerTag = 0x6D547845;    // "ExTm"
constexpr ULONG kExTimerMagic = 0x524D5445;  // live EX_TIMER
constexpr ULONG kKnownAttributes = EX_TIMER_HIGH_RESOLUTION | EX_TIMER_NO_WAKE;

// The EX_TIMER whose callback runs on this thread (to catch ExDeleteTimer(Wait) from it).
thread_local PEX_TIMER t_in_callback = nullptr;

PEX_TIMER checked(PEX_TIMER timer, const char *caller) {
    if (timer == nullptr || timer->magic != kExTimerMagic) {
        fatal(fmt::format("{}: {} is not a live EX_TIMER from ExAllocateTimer", caller,
                          static_cast<void *>(timer)));
    }
    return timer;
}

void check_irql_at_most(KIRQL highest, const char *caller, const void *object) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > highest) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(object), irql, highest, 0,
                 fmt::format("{} at IRQL {} (the limit is {})", caller, irql, highest));
    }
}

LARGE_INTEGER relative_until(std::chrono::steady_clock::time_point at) {
    const auto now = softndk::sim::steady_now();
    LARGE_INTEGER due;
    const auto units = std::chrono::duration_cast<std::chrono::nanoseconds>(at - now).count() / 100;
    due.QuadPart = units > 0 ? -units : 0;  // 0 expires at once
    return due;
}

// Under timer->lock: stop the KTIMER and drop an expiry DPC that has not started.
bool stop_locked(PEX_TIMER timer) {
    const bool was_pending = timer->pending;
    timer->pending = false;
    ++timer->generation;
    KeCancelTimer(&timer->timer);
    KeRemoveQueueDpc(&timer->expiry_dpc);
    return was_pending;
}

// Frees the timer and runs the delete callback; on the DPC thread at DISPATCH_LEVEL.
void finish_delete(PEX_TIMER timer) {
    const PEXT_DELETE_CALLBACK callback = timer->delete_callback;
    const PVOID context = timer->delete_context;
    const PKEVENT deleted = timer->deleted;
    timer->magic = 0;
    timer->~_EX_TIMER();
    ExFreePoolWithTag(timer, kExTimerTag);
    if (callback != nullptr) callback(context);
    if (deleted != nullptr) KeSetEvent(deleted, IO_NO_INCREMENT, FALSE);  // last access
}

VOID reap(PKDPC, PVOID context, PVOID, PVOID) {
    finish_delete(static_cast<PEX_TIMER>(context));
}

VOID expire(PKDPC, PVOID context, PVOID, PVOID) {
    auto *timer = static_cast<PEX_TIMER>(context);
    ULONG generation;
    bool periodic;
    {
        std::lock_guard guard(timer->lock);
        if (timer->deleting && !timer->delete_after_expiry) return;  // the reaper follows
        generation = timer->generation;
        periodic = timer->period != 0 && timer->pending;
        if (!periodic) timer->pending = false;
    }
    if (timer->callback != nullptr) {
        t_in_callback = timer;
        timer->callback(timer, timer->context);
        t_in_callback = nullptr;
    }
    std::unique_lock guard(timer->lock);
    if (timer->delete_after_expiry) {
        guard.unlock();
        finish_delete(timer);
        return;
    }
    if (!periodic || timer->deleting || generation != timer->generation || !timer->pending) {
        return;
    }
    // The next due time is Period after the previous one; periods already missed are skipped.
    const auto period = std::chrono::nanoseconds(timer->period * 100);
    const auto now = softndk::sim::steady_now();
    timer->next_due += period;
    if (timer->next_due < now) {
        const auto behind = (now - timer->next_due) / period + 1;
        timer->next_due += behind * period;
    }
    KeSetTimerEx(&timer->timer, relative_until(timer->next_due), 0, &timer->expiry_dpc);
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

PEX_TIMER NTAPI ExAllocateTimer(PEXT_CALLBACK Callback, PVOID CallbackContext, ULONG Attributes) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExAllocateTimer", nullptr);
    if ((Attributes & ~wdk::kKnownAttributes) != 0 ||
        (Attributes & wdk::kKnownAttributes) == wdk::kKnownAttributes) {
        return nullptr;
    }
    void *memory = ExAllocatePoolWithTag(NonPagedPoolNx, sizeof(_EX_TIMER), wdk::kExTimerTag);
    if (memory == nullptr) return nullptr;
    auto *timer = new (memory) _EX_TIMER;
    KeInitializeTimerEx(&timer->timer, NotificationTimer);
    KeInitializeDpc(&timer->expiry_dpc, wdk::expire, timer);
    KeInitializeDpc(&timer->reaper_dpc, wdk::reap, timer);
    timer->magic = wdk::kExTimerMagic;
    timer->callback = Callback;
    timer->context = CallbackContext;
    return timer;
}

BOOLEAN NTAPI ExSetTimer(PEX_TIMER Timer, LONGLONG DueTime, LONGLONG Period,
                         PEXT_SET_PARAMETERS Parameters) {
    (void)Parameters;  // NoWakeTolerance: nothing sleeps here
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExSetTimer", Timer);
    wdk::checked(Timer, "ExSetTimer");
    if (Period < 0) wdk::fatal(fmt::format("ExSetTimer: negative Period {}", Period));
    std::lock_guard guard(Timer->lock);
    if (Timer->deleting) wdk::fatal("ExSetTimer: the EX_TIMER is being deleted");
    const bool was_pending = wdk::stop_locked(Timer);
    LARGE_INTEGER due;
    due.QuadPart = DueTime;
    const wdk::Deadline deadline = wdk::deadline_from_timeout(&due);
    const auto now = softndk::sim::steady_now();
    switch (deadline.kind) {
        case wdk::Deadline::Kind::kPoll:
            Timer->next_due = now;
            break;
        case wdk::Deadline::Kind::kAt:
            Timer->next_due = deadline.at;
            break;
        case wdk::Deadline::Kind::kInfinite:
            Timer->next_due = std::chrono::steady_clock::time_point(
                std::chrono::steady_clock::duration::max() / 2);
            break;
    }
    Timer->period = Period;
    Timer->pending = true;
    KeSetTimerEx(&Timer->timer, due, 0, &Timer->expiry_dpc);
    return was_pending ? TRUE : FALSE;
}

BOOLEAN NTAPI ExCancelTimer(PEX_TIMER Timer, PEXT_CANCEL_PARAMETERS Parameters) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExCancelTimer", Timer);
    wdk::checked(Timer, "ExCancelTimer");
    if (Parameters != nullptr) wdk::fatal("ExCancelTimer: Parameters is reserved (NULL)");
    std::lock_guard guard(Timer->lock);
    return wdk::stop_locked(Timer) ? TRUE : FALSE;
}

BOOLEAN NTAPI ExDeleteTimer(PEX_TIMER Timer, BOOLEAN Cancel, BOOLEAN Wait,
                            PEXT_DELETE_PARAMETERS Parameters) {
    wdk::check_irql_at_most(Wait ? APC_LEVEL : DISPATCH_LEVEL, "ExDeleteTimer", Timer);
    wdk::checked(Timer, "ExDeleteTimer");
    if (Wait && !Cancel) wdk::fatal("ExDeleteTimer: Wait = TRUE needs Cancel = TRUE");
    if (Wait && wdk::t_in_callback == Timer) {
        wdk::fatal("ExDeleteTimer: Wait = TRUE from the timer's own callback never returns");
    }
    KEVENT deleted;
    KeInitializeEvent(&deleted, NotificationEvent, FALSE);
    bool cancelled = false;
    {
        std::lock_guard guard(Timer->lock);
        if (Timer->deleting) wdk::fatal("ExDeleteTimer: the EX_TIMER is already being deleted");
        Timer->deleting = true;
        if (Parameters != nullptr) {
            Timer->delete_callback = Parameters->DeleteCallback;
            Timer->delete_context = Parameters->DeleteContext;
        }
        if (Wait) Timer->deleted = &deleted;
        if (!Cancel && Timer->pending) {
            if (Timer->period != 0) {
                wdk::fatal("ExDeleteTimer: a pending periodic EX_TIMER needs Cancel = TRUE");
            }
            Timer->delete_after_expiry = true;  // the expiry DPC frees it
            return FALSE;
        }
        cancelled = wdk::stop_locked(Timer);
    }
    KeInsertQueueDpc(&Timer->reaper_dpc, nullptr, nullptr);
    if (Wait) KeWaitForSingleObject(&deleted, Executive, KernelMode, FALSE, nullptr);
    return cancelled ? TRUE : FALSE;
}

}  // extern "C"
