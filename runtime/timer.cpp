// KTIMER: dispatcher objects that a timer thread signals at their due time, queueing their DPC
// (contract in wdm.h above KTIMER). The set timers form an intrusive list through their own
// TimerListEntry, sorted by due time, so setting and cancelling never allocate.
#include <condition_variable>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>

#include <spdlog/fmt/fmt.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

static_assert(sizeof(KTIMER) == 64, "KTIMER must keep Windows' x64 size");
static_assert(offsetof(KTIMER, DueTime) == 0x18);
static_assert(offsetof(KTIMER, Dpc) == 0x30);
static_assert(offsetof(KTIMER, Period) == 0x3C);

using Clock = std::chrono::steady_clock;
// Now on Clock: the steady clock, or simulated time (softndk/sim.hpp).
Clock::time_point clock_now() {
    return sim::steady_now();
}

// KTIMER.DueTime holds the expiry on the steady clock, in 100 ns units since its epoch (the
// analogue of Windows' interrupt time); kNever for a due time beyond 100 years.
constexpr ULONGLONG kNever = std::numeric_limits<ULONGLONG>::max();
constexpr LONGLONG kUnitsPerMillisecond = 10'000;

ULONGLONG to_units(Clock::time_point at) {
    return static_cast<ULONGLONG>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count() / 100);
}

Clock::time_point to_time_point(ULONGLONG units) {
    return Clock::time_point(
        std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(units * 100)));
}

bool is_set(const KTIMER &timer) {
    return timer.TimerListEntry.Flink != nullptr;
}

void unlink(KTIMER &timer) {
    LIST_ENTRY &entry = timer.TimerListEntry;
    entry.Blink->Flink = entry.Flink;
    entry.Flink->Blink = entry.Blink;
    entry.Flink = entry.Blink = nullptr;
}

class TimerQueue {
  public:
    TimerQueue() { armed_.Flink = armed_.Blink = &armed_; }

    bool set(PKTIMER timer, const LARGE_INTEGER &due_time, LONG period, PKDPC dpc) {
        const Deadline deadline = deadline_from_timeout(&due_time);
        std::lock_guard guard(lock_);
        const bool was_set = is_set(*timer);
        if (was_set) unlink(*timer);
        reset_object(&timer->Header);  // lock order: timer -> dispatcher
        timer->Dpc = dpc;
        timer->Period = static_cast<ULONG>(period);
        switch (deadline.kind) {
            case Deadline::Kind::kPoll:
                timer->DueTime.QuadPart = to_units(clock_now());
                break;
            case Deadline::Kind::kAt:
                timer->DueTime.QuadPart = to_units(deadline.at);
                break;
            case Deadline::Kind::kInfinite:
                timer->DueTime.QuadPart = kNever;
                break;
        }
        insert_sorted(*timer);
        if (!started_) start();
        changed_.notify_one();  // the earliest due time may have changed
        return was_set;
    }

    bool none_set() {
        std::lock_guard guard(lock_);
        return armed_.Flink == &armed_;
    }

    bool cancel(PKTIMER timer) {
        std::lock_guard guard(lock_);
        if (!is_set(*timer)) return false;
        // No wake-up needed: if this was the earliest timer, the thread wakes at its due time,
        // finds a later one and sleeps again.
        unlink(*timer);
        return true;
    }

  private:
    // Ascending due time; equal due times keep the order they were set in.
    void insert_sorted(KTIMER &timer) {
        LIST_ENTRY *after = armed_.Blink;
        while (after != &armed_ &&
               CONTAINING_RECORD(after, KTIMER, TimerListEntry)->DueTime.QuadPart >
                   timer.DueTime.QuadPart) {
            after = after->Blink;
        }
        LIST_ENTRY &entry = timer.TimerListEntry;
        entry.Blink = after;
        entry.Flink = after->Flink;
        after->Flink->Blink = &entry;
        after->Flink = &entry;
    }

    // Under lock_. If the thread cannot start, the timers stay set and the next set tries again.
    void start() {
        try {
            sim::start_detached("timer", [this] { run(); });
            started_ = true;
        } catch (const std::system_error &error) {
            logger().error("timers: cannot start the timer thread ({}); set timers wait",
                           error.what());
        }
    }

    void run() {
        std::unique_lock guard(lock_);
        for (;;) {
            if (armed_.Flink == &armed_) {
                changed_.wait(guard);
                continue;
            }
            KTIMER &first = *CONTAINING_RECORD(armed_.Flink, KTIMER, TimerListEntry);
            if (first.DueTime.QuadPart == kNever) {
                changed_.wait(guard);
                continue;
            }
            const Clock::time_point due = to_time_point(first.DueTime.QuadPart);
            if (clock_now() < due) {
                changed_.wait_until(guard, due);
                continue;
            }
            expire(first);
        }
    }

    // Under lock_: signals `timer`, queues its DPC and re-arms it if it is periodic.
    void expire(KTIMER &timer) {
        unlink(timer);
        if (timer.Period != 0) {
            const ULONGLONG period = static_cast<ULONGLONG>(timer.Period) * kUnitsPerMillisecond;
            const ULONGLONG now = to_units(clock_now());
            ULONGLONG next = timer.DueTime.QuadPart + period;
            if (next <= now) next += ((now - next) / period + 1) * period;  // skip missed periods
            timer.DueTime.QuadPart = next;
            insert_sorted(timer);
        }
        // A one-shot timer is no longer set: a waiter the signal releases may free it (and its
        // DPC) at once, without taking lock_. So nothing below touches `timer` after the signal,
        // and the DPC is queued inside signal_object, before any released waiter can run.
        struct Expiry {
            PKDPC dpc;
            LARGE_INTEGER system_time;
        } expiry{timer.Dpc, {}};
        KeQuerySystemTime(&expiry.system_time);
        signal_object(
            &timer.Header,
            [](void *context) {
                const auto &what = *static_cast<const Expiry *>(context);
                if (what.dpc == nullptr) return;
                KeInsertQueueDpc(
                    what.dpc,
                    reinterpret_cast<PVOID>(static_cast<ULONG_PTR>(what.system_time.LowPart)),
                    reinterpret_cast<PVOID>(
                        static_cast<ULONG_PTR>(static_cast<ULONG>(what.system_time.HighPart))));
            },
            &expiry);
    }

    std::mutex lock_;
    sim::ConditionVariable changed_{"timer queue"};
    LIST_ENTRY armed_;  // set KTIMERs through TimerListEntry
    bool started_ = false;
};

TimerQueue &timers() {
    return fork_local_instance<TimerQueue>();
}

}  // namespace

bool no_timers_set() {
    return timers().none_set();
}

namespace {

void check_timer_irql(const char *caller, const void *timer) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > DISPATCH_LEVEL) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(timer), irql, 0, 0,
                 fmt::format("{} at IRQL {} (above DISPATCH_LEVEL)", caller, irql));
    }
}

PKTIMER checked_timer(PKTIMER timer, const char *caller) {
    if (timer == nullptr || (timer->Header.Type != kTimerNotificationObject &&
                             timer->Header.Type != kTimerSynchronizationObject)) {
        fatal(fmt::format("{}: {} is not a KTIMER (use KeInitializeTimer[Ex])", caller,
                          static_cast<void *>(timer)));
    }
    return timer;
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI KeInitializeTimerEx(PKTIMER Timer, TIMER_TYPE Type) {
    if (Type != NotificationTimer && Type != SynchronizationTimer) {
        wdk::fatal(
            fmt::format("KeInitializeTimerEx: invalid TIMER_TYPE {}", static_cast<int>(Type)));
    }
    Timer->Header.Type = Type == NotificationTimer ? wdk::kTimerNotificationObject
                                                   : wdk::kTimerSynchronizationObject;
    Timer->Header.Reserved1 = 0;
    Timer->Header.Size = sizeof(KTIMER) / sizeof(LONG);
    Timer->Header.Reserved2 = 0;
    Timer->Header.SignalState = 0;
    Timer->Header.WaitListHead.Flink = Timer->Header.WaitListHead.Blink =
        &Timer->Header.WaitListHead;
    Timer->DueTime.QuadPart = 0;
    Timer->TimerListEntry.Flink = Timer->TimerListEntry.Blink = nullptr;
    Timer->Dpc = nullptr;
    Timer->Processor = 0;
    Timer->Period = 0;
}

VOID NTAPI KeInitializeTimer(PKTIMER Timer) {
    KeInitializeTimerEx(Timer, NotificationTimer);
}

BOOLEAN NTAPI KeSetTimerEx(PKTIMER Timer, LARGE_INTEGER DueTime, LONG Period, PKDPC Dpc) {
    wdk::check_timer_irql("KeSetTimerEx", Timer);
    wdk::checked_timer(Timer, "KeSetTimerEx");
    if (Period < 0) {
        wdk::fatal(fmt::format("KeSetTimerEx: negative Period {} ms", Period));
    }
    return wdk::timers().set(Timer, DueTime, Period, Dpc) ? TRUE : FALSE;
}

BOOLEAN NTAPI KeSetTimer(PKTIMER Timer, LARGE_INTEGER DueTime, PKDPC Dpc) {
    wdk::check_timer_irql("KeSetTimer", Timer);
    wdk::checked_timer(Timer, "KeSetTimer");
    return wdk::timers().set(Timer, DueTime, 0, Dpc) ? TRUE : FALSE;
}

BOOLEAN NTAPI KeCancelTimer(PKTIMER Timer) {
    wdk::check_timer_irql("KeCancelTimer", Timer);
    wdk::checked_timer(Timer, "KeCancelTimer");
    return wdk::timers().cancel(Timer) ? TRUE : FALSE;
}

BOOLEAN NTAPI KeReadStateTimer(PKTIMER Timer) {
    return std::atomic_ref<LONG>(Timer->Header.SignalState).load(std::memory_order_acquire) != 0
               ? TRUE
               : FALSE;
}

}  // extern "C"
