// Dispatcher objects: events (and the signalling of timers and threads), waits, delays. The
// design (one process-wide dispatcher lock, waiters in a table outside the object, the signal
// handed to waiters under the lock) and the reason a KEVENT may live on the waiter's stack are
// explained in wdm.h above KEVENT. Everything here works on the DISPATCHER_HEADER, so events,
// timers (timer.cpp) and thread objects (thread.cpp) share one implementation.
#include <sched.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>

#include <spdlog/fmt/fmt.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

static_assert(sizeof(KEVENT) == 24, "KEVENT must keep Windows' x64 size");
static_assert(offsetof(KEVENT, Header.SignalState) == 4);
static_assert(offsetof(KEVENT, Header.WaitListHead) == 8);
static_assert(sizeof(KWAIT_BLOCK) == 48, "KWAIT_BLOCK must keep Windows' x64 size");

// A thread blocked in KeWaitFor*; lives on that thread's stack. Every member is guarded by
// Dispatcher::lock. Its KWAIT_BLOCKs (Count of them) point back here through ->Thread.
struct Waiter {
    // `what`: the wait as a deadlock report names it (it outlives the Waiter).
    explicit Waiter(const char *what) : wake(what) {}
    sim::ConditionVariable wake;
    WAIT_TYPE type = WaitAny;
    ULONG count = 0;
    PKWAIT_BLOCK blocks = nullptr;
    PKTHREAD thread = nullptr;  // the waiting thread (a KMUTEX wait may make it the owner)
    bool satisfied = false;
    NTSTATUS status = STATUS_TIMEOUT;
};

// The process-wide dispatcher lock and the wait blocks of all waiting threads, hashed on
// the object's address. Every SignalState change happens under `lock`.
struct Dispatcher {
    static constexpr size_t kBucketBits = 6;
    std::mutex lock;
    std::array<LIST_ENTRY, size_t{1} << kBucketBits> buckets;

    Dispatcher() {
        for (LIST_ENTRY &head : buckets) {
            head.Flink = head.Blink = &head;
        }
    }

    LIST_ENTRY &bucket_of(const void *object) {
        const auto address = reinterpret_cast<uintptr_t>(object);
        return buckets[((address >> 3) * 0x9E3779B97F4A7C15ULL) >> (64 - kBucketBits)];
    }
};

Dispatcher &dispatcher() {
    // Deliberately leaked: waits may run while static destructors do.
    static Dispatcher *const instance = new Dispatcher;
    return *instance;
}

void insert_tail(LIST_ENTRY &head, LIST_ENTRY &entry) {
    entry.Flink = &head;
    entry.Blink = head.Blink;
    head.Blink->Flink = &entry;
    head.Blink = &entry;
}

void unlink(LIST_ENTRY &entry) {
    entry.Blink->Flink = entry.Flink;
    entry.Flink->Blink = entry.Blink;
    entry.Flink = entry.Blink = nullptr;
}

using Object = DISPATCHER_HEADER;

std::atomic_ref<LONG> signal_state(Object *object) {
    return std::atomic_ref<LONG>(object->SignalState);
}

PRKMUTEX as_mutex(Object *object) {
    return CONTAINING_RECORD(object, KMUTEX, Header);
}

// Would a wait by `thread` be satisfied by `object` now? A KMUTEX is available when it is free
// (SignalState > 0) or already owned by `thread`; a semaphore while its count is above 0.
bool signalled_for(Object *object, PKTHREAD thread) {
    const LONG state = signal_state(object).load(std::memory_order_relaxed);
    switch (object->Type) {
        case kMutantObject:
            return state > 0 || as_mutex(object)->OwnerThread == thread;
        case kSemaphoreObject:
            return state > 0;
        default:
            return state != 0;
    }
}

// Synchronization objects are consumed by the wait they satisfy.
bool is_synchronization(const Object *object) {
    return object->Type == kEventSynchronizationObject ||
           object->Type == kTimerSynchronizationObject;
}

bool is_known_type(UCHAR type) {
    return type == kEventNotificationObject || type == kEventSynchronizationObject ||
           type == kMutantObject || type == kSemaphoreObject || type == kThreadObject ||
           type == kTimerNotificationObject || type == kTimerSynchronizationObject;
}

// A satisfied wait by `thread` takes its due from `object`: a synchronization event or timer
// becomes unsignalled, a semaphore gives one unit, a KMUTEX one more hold (and `thread` owns it).
void consume(Object *object, PKTHREAD thread) {
    switch (object->Type) {
        case kMutantObject: {
            const LONG state = signal_state(object).load(std::memory_order_relaxed);
            if (state == MINLONG) {
                bugcheck(KMODE_EXCEPTION_NOT_HANDLED,
                         static_cast<ULONG_PTR>(static_cast<ULONG>(STATUS_MUTANT_LIMIT_EXCEEDED)),
                         reinterpret_cast<ULONG_PTR>(object), 0, 0,
                         "a KMUTEX acquired recursively more than MINLONG times raised "
                         "STATUS_MUTANT_LIMIT_EXCEEDED");
            }
            signal_state(object).store(state - 1, std::memory_order_relaxed);
            as_mutex(object)->OwnerThread = thread;
            break;
        }
        case kSemaphoreObject:
            signal_state(object).fetch_sub(1, std::memory_order_relaxed);
            break;
        case kEventSynchronizationObject:
        case kTimerSynchronizationObject:
            signal_state(object).store(0, std::memory_order_relaxed);
            break;
        default:
            break;
    }
}

// Validates that `object` is a dispatcher object SoftNDK has (event, mutex, semaphore, timer,
// thread).
Object *as_object(PVOID object, const char *caller) {
    auto *header = static_cast<Object *>(object);
    if (header == nullptr) {
        fatal(fmt::format("{}: the dispatcher object is NULL", caller));
    }
    if (!is_known_type(header->Type)) {
        fatal(
            fmt::format("{}: object {} is not a dispatcher object SoftNDK knows "
                        "(DISPATCHER_HEADER.Type {}; events are 0-1, mutexes 2, semaphores 5, "
                        "threads 6, timers 8-9)",
                        caller, object, header->Type));
    }
    return header;
}

// Validates that `event` is an event (KeSetEvent and friends take nothing else).
PRKEVENT as_event(PVOID object, const char *caller) {
    Object *header = as_object(object, caller);
    if (header->Type > kEventSynchronizationObject) {
        fatal(fmt::format("{}: object {} is not a KEVENT (DISPATCHER_HEADER.Type {})", caller,
                          object, header->Type));
    }
    return static_cast<PRKEVENT>(object);
}

Object *block_object(const KWAIT_BLOCK &block) {
    return static_cast<Object *>(block.Object);
}

// Wakes `waiter` with `status` and takes all its wait blocks out of the table. The waiter
// reads the result only after it re-acquires the dispatcher lock.
void satisfy(Waiter &waiter, NTSTATUS status) {
    for (ULONG i = 0; i < waiter.count; ++i) {
        unlink(waiter.blocks[i].WaitListEntry);
    }
    waiter.satisfied = true;
    waiter.status = status;
    waiter.wake.notify_one();
}

// WaitAll: is every object signalled, counting `being_set` as signalled?
bool all_signalled(const Waiter &waiter, Object *being_set) {
    for (ULONG i = 0; i < waiter.count; ++i) {
        Object *object = block_object(waiter.blocks[i]);
        if (object != being_set && !signalled_for(object, waiter.thread)) return false;
    }
    return true;
}

// WaitAll satisfied: consume every synchronization object except `being_set` (whose signal
// the caller never publishes).
void consume_all(const Waiter &waiter, Object *being_set) {
    for (ULONG i = 0; i < waiter.count; ++i) {
        Object *object = block_object(waiter.blocks[i]);
        if (object != being_set) consume(object, waiter.thread);
    }
}

// The wait's condition checked on entry, under the lock.
std::optional<NTSTATUS> satisfy_at_once(ULONG count, Object *const *events, WAIT_TYPE type,
                                        PKTHREAD thread) {
    if (type == WaitAny) {
        for (ULONG i = 0; i < count; ++i) {
            if (signalled_for(events[i], thread)) {
                consume(events[i], thread);
                return STATUS_WAIT_0 + static_cast<NTSTATUS>(i);
            }
        }
        return std::nullopt;
    }
    for (ULONG i = 0; i < count; ++i) {
        if (!signalled_for(events[i], thread)) return std::nullopt;
    }
    for (ULONG i = 0; i < count; ++i) {
        consume(events[i], thread);
    }
    return STATUS_SUCCESS;
}

// After a wait that succeeded with `status`: each KMUTEX it acquired for the first time (not
// recursively) puts its new owner in a critical region, as Windows' KeWaitForMutexObject does.
// Runs on the waiting thread, which alone may now change those mutexes.
void enter_regions_for_mutexes(ULONG count, Object *const *objects, WAIT_TYPE type,
                               NTSTATUS status) {
    if (status == STATUS_TIMEOUT) return;
    for (ULONG i = 0; i < count; ++i) {
        if (type == WaitAny && static_cast<NTSTATUS>(STATUS_WAIT_0 + i) != status) continue;
        if (objects[i]->Type == kMutantObject &&
            signal_state(objects[i]).load(std::memory_order_relaxed) == 0) {
            ++KeGetCurrentThread()->critical_regions;  // any IRQL: a 0-timeout wait may run at
                                                       // DISPATCH_LEVEL
        }
    }
}

// Windows' rule: waits above DISPATCH_LEVEL, or at DISPATCH_LEVEL with a timeout other than
// zero, bug-check.
void check_wait_irql(const char *caller, const LARGE_INTEGER *timeout, const void *object) {
    const KIRQL irql = KeGetCurrentIrql();
    const bool polls = timeout != nullptr && timeout->QuadPart == 0;
    if (irql > DISPATCH_LEVEL || (irql == DISPATCH_LEVEL && !polls)) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(object), irql, 0, 0,
                 fmt::format("{} at IRQL {} {}", caller, irql,
                             irql > DISPATCH_LEVEL ? "(above DISPATCH_LEVEL)"
                                                   : "with a timeout other than 0"));
    }
}

NTSTATUS wait_locked(ULONG count, Object *const *events, WAIT_TYPE type,
                     const LARGE_INTEGER *timeout, PKWAIT_BLOCK blocks) {
    const Deadline deadline = deadline_from_timeout(timeout);
    const PKTHREAD thread = KeGetCurrentThread();
    Dispatcher &d = dispatcher();
    std::unique_lock guard(d.lock);
    if (auto status = satisfy_at_once(count, events, type, thread)) return *status;
    if (deadline.kind == Deadline::Kind::kPoll) return STATUS_TIMEOUT;

    // What simulated time's deadlock report says this thread waits for.
    char what[96];
    const auto type_name = [](const Object *o) {
        switch (o->Type) {
            case kMutantObject:
                return "KMUTEX";
            case kSemaphoreObject:
                return "KSEMAPHORE";
            case kThreadObject:
                return "thread";
            case kTimerNotificationObject:
            case kTimerSynchronizationObject:
                return "KTIMER";
            default:
                return "KEVENT";
        }
    };
    if (count == 1) {
        std::snprintf(what, sizeof what, "KeWaitForSingleObject(%s %p)", type_name(events[0]),
                      static_cast<const void *>(events[0]));
    } else {
        std::snprintf(what, sizeof what, "KeWaitForMultipleObjects(%lu, %s, first %s %p)",
                      static_cast<unsigned long>(count), type == WaitAll ? "WaitAll" : "WaitAny",
                      type_name(events[0]), static_cast<const void *>(events[0]));
    }
    Waiter waiter(what);
    waiter.thread = thread;
    waiter.type = type;
    waiter.count = count;
    waiter.blocks = blocks;
    for (ULONG i = 0; i < count; ++i) {
        KWAIT_BLOCK &block = blocks[i];
        block = KWAIT_BLOCK{};
        block.WaitType = static_cast<UCHAR>(type);
        block.WaitKey = static_cast<USHORT>(i);
        block.Thread = &waiter;
        block.Object = events[i];
        insert_tail(d.bucket_of(events[i]), block.WaitListEntry);
    }
    // Declared after `guard`, so it reports the wake-up under the dispatcher lock too.
    const BlockingScope blocking;
    while (!waiter.satisfied) {
        if (deadline.kind == Deadline::Kind::kInfinite) {
            waiter.wake.wait(guard);
        } else if (waiter.wake.wait_until(guard, deadline.at) == std::cv_status::timeout &&
                   !waiter.satisfied) {
            for (ULONG i = 0; i < count; ++i) {
                unlink(blocks[i].WaitListEntry);
            }
            return STATUS_TIMEOUT;
        }
    }
    return waiter.status;
}

NTSTATUS wait(ULONG count, Object *const *events, WAIT_TYPE type, const LARGE_INTEGER *timeout,
              PKWAIT_BLOCK blocks) {
    sim::yield("KeWaitFor*");  // a control transfer point in simulated time (sim.hpp)
    const NTSTATUS status = wait_locked(count, events, type, timeout, blocks);
    enter_regions_for_mutexes(count, events, type, status);
    return status;
}

// KeSetEvent for any dispatcher object, under the dispatcher lock.
LONG signal_locked(Dispatcher &d, Object *object) {
    const LONG previous = signal_state(object).load(std::memory_order_relaxed);
    // Already signalled: no thread can be waiting for this object alone (it would have been
    // satisfied), and a WaitAll waiter gains nothing from a second signal.
    if (previous != 0) return previous;
    const bool synchronization = is_synchronization(object);

    LIST_ENTRY &head = d.bucket_of(object);
    LIST_ENTRY *next = nullptr;
    for (LIST_ENTRY *link = head.Flink; link != &head; link = next) {
        next = link->Flink;
        const KWAIT_BLOCK *block = CONTAINING_RECORD(link, KWAIT_BLOCK, WaitListEntry);
        if (block->Object != object) continue;
        auto *waiter = static_cast<Waiter *>(block->Thread);
        NTSTATUS status;
        if (waiter->type == WaitAny) {
            status = STATUS_WAIT_0 + block->WaitKey;
        } else if (all_signalled(*waiter, object)) {
            consume_all(*waiter, object);
            status = STATUS_SUCCESS;
        } else {
            continue;
        }
        // satisfy() unlinks all of this waiter's blocks; keep `next` on a block that stays.
        while (next != &head &&
               CONTAINING_RECORD(next, KWAIT_BLOCK, WaitListEntry)->Thread == waiter) {
            next = next->Flink;
        }
        satisfy(*waiter, status);
        // A synchronization object goes to exactly one waiter and stays unsignalled.
        if (synchronization) return previous;
    }
    // The last access to *object: from here on the caller's waiters may free it.
    signal_state(object).store(1, std::memory_order_release);
    return previous;
}

}  // namespace

LONG signal_object(DISPATCHER_HEADER *object, void (*then)(void *), void *context) {
    Dispatcher &d = dispatcher();
    std::lock_guard guard(d.lock);
    const LONG previous = signal_locked(d, object);
    if (then != nullptr) then(context);
    return previous;
}

void reset_object(DISPATCHER_HEADER *object) {
    std::lock_guard guard(dispatcher().lock);
    signal_state(object).store(0, std::memory_order_relaxed);
}

bool change_and_release_waiters(DISPATCHER_HEADER *object,
                                bool (*change)(DISPATCHER_HEADER *object, void *context),
                                void *context) {
    Dispatcher &d = dispatcher();
    std::lock_guard guard(d.lock);
    if (!change(object, context)) return false;
    LIST_ENTRY &head = d.bucket_of(object);
    LIST_ENTRY *next = nullptr;
    for (LIST_ENTRY *link = head.Flink; link != &head; link = next) {
        next = link->Flink;
        const KWAIT_BLOCK *block = CONTAINING_RECORD(link, KWAIT_BLOCK, WaitListEntry);
        if (block->Object != object) continue;
        auto *waiter = static_cast<Waiter *>(block->Thread);
        if (!signalled_for(object, waiter->thread)) break;  // nothing left to hand out
        NTSTATUS status;
        if (waiter->type == WaitAny) {
            consume(object, waiter->thread);
            status = STATUS_WAIT_0 + block->WaitKey;
        } else if (all_signalled(*waiter, nullptr)) {
            consume_all(*waiter, nullptr);
            status = STATUS_SUCCESS;
        } else {
            continue;
        }
        while (next != &head &&
               CONTAINING_RECORD(next, KWAIT_BLOCK, WaitListEntry)->Thread == waiter) {
            next = next->Flink;
        }
        satisfy(*waiter, status);
    }
    return true;
}

}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI KeInitializeEvent(PRKEVENT Event, EVENT_TYPE Type, BOOLEAN State) {
    if (Type != NotificationEvent && Type != SynchronizationEvent) {
        wdk::fatal(fmt::format("KeInitializeEvent: invalid EVENT_TYPE {}", static_cast<int>(Type)));
    }
    Event->Header.Type = static_cast<UCHAR>(Type);
    Event->Header.Reserved1 = 0;
    Event->Header.Size = sizeof(KEVENT) / sizeof(LONG);
    Event->Header.Reserved2 = 0;
    Event->Header.WaitListHead.Flink = Event->Header.WaitListHead.Blink =
        &Event->Header.WaitListHead;
    wdk::signal_state(&Event->Header).store(State ? 1 : 0, std::memory_order_relaxed);
}

LONG NTAPI KeSetEvent(PRKEVENT Event, KPRIORITY Increment, BOOLEAN Wait) {
    (void)Increment;
    (void)Wait;
    const LONG previous = wdk::signal_object(&wdk::as_event(Event, "KeSetEvent")->Header);
    // A control transfer point in simulated time: a waiter the signal released may run
    // before the signaller's next instruction, as a preempting waiter can on Windows.
    softndk::sim::yield("KeSetEvent");
    return previous;
}

LONG NTAPI KeResetEvent(PRKEVENT Event) {
    PRKEVENT event = wdk::as_event(Event, "KeResetEvent");
    std::lock_guard guard(wdk::dispatcher().lock);
    return wdk::signal_state(&event->Header).exchange(0, std::memory_order_relaxed);
}

VOID NTAPI KeClearEvent(PRKEVENT Event) {
    wdk::reset_object(&wdk::as_event(Event, "KeClearEvent")->Header);
}

LONG NTAPI KeReadStateEvent(PRKEVENT Event) {
    return wdk::signal_state(&Event->Header).load(std::memory_order_acquire);
}

NTSTATUS NTAPI KeWaitForSingleObject(PVOID Object, KWAIT_REASON WaitReason,
                                     KPROCESSOR_MODE WaitMode, BOOLEAN Alertable,
                                     PLARGE_INTEGER Timeout) {
    (void)WaitReason;
    (void)WaitMode;
    (void)Alertable;
    wdk::check_wait_irql("KeWaitForSingleObject", Timeout, Object);
    wdk::Object *object = wdk::as_object(Object, "KeWaitForSingleObject");
    KWAIT_BLOCK block;
    return wdk::wait(1, &object, WaitAny, Timeout, &block);
}

NTSTATUS NTAPI KeWaitForMultipleObjects(ULONG Count, PVOID Object[], WAIT_TYPE WaitType,
                                        KWAIT_REASON WaitReason, KPROCESSOR_MODE WaitMode,
                                        BOOLEAN Alertable, PLARGE_INTEGER Timeout,
                                        PKWAIT_BLOCK WaitBlockArray) {
    (void)WaitReason;
    (void)WaitMode;
    (void)Alertable;
    if (Count > MAXIMUM_WAIT_OBJECTS ||
        (Count > THREAD_WAIT_OBJECTS && WaitBlockArray == nullptr)) {
        wdk::bugcheck(MAXIMUM_WAIT_OBJECTS_EXCEEDED, Count,
                      reinterpret_cast<ULONG_PTR>(WaitBlockArray), 0, 0,
                      fmt::format("KeWaitForMultipleObjects: {} objects need a WaitBlockArray "
                                  "above THREAD_WAIT_OBJECTS ({}) and are limited to "
                                  "MAXIMUM_WAIT_OBJECTS ({})",
                                  Count, THREAD_WAIT_OBJECTS, MAXIMUM_WAIT_OBJECTS));
    }
    if (Count == 0 || Object == nullptr) {
        wdk::fatal("KeWaitForMultipleObjects: no objects to wait for");
    }
    if (WaitType != WaitAll && WaitType != WaitAny) {
        wdk::fatal(fmt::format("KeWaitForMultipleObjects: WaitType {} is not WaitAll or WaitAny",
                               static_cast<int>(WaitType)));
    }
    wdk::check_wait_irql("KeWaitForMultipleObjects", Timeout, Object[0]);
    std::array<wdk::Object *, MAXIMUM_WAIT_OBJECTS> events;
    for (ULONG i = 0; i < Count; ++i) {
        events[i] = wdk::as_object(Object[i], "KeWaitForMultipleObjects");
    }
    std::array<KWAIT_BLOCK, THREAD_WAIT_OBJECTS> thread_blocks;
    PKWAIT_BLOCK blocks = WaitBlockArray != nullptr ? WaitBlockArray : thread_blocks.data();
    return wdk::wait(Count, events.data(), WaitType, Timeout, blocks);
}

NTSTATUS NTAPI KeDelayExecutionThread(KPROCESSOR_MODE WaitMode, BOOLEAN Alertable,
                                      PLARGE_INTEGER Interval) {
    (void)WaitMode;
    (void)Alertable;
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > APC_LEVEL) {
        wdk::bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(Interval), irql, 0, 0,
                      fmt::format("KeDelayExecutionThread at IRQL {} (above APC_LEVEL)", irql));
    }
    if (Interval == nullptr) wdk::fatal("KeDelayExecutionThread: Interval is NULL");
    const wdk::Deadline deadline = wdk::deadline_from_timeout(Interval);
    if (softndk::sim::attached()) {
        // Simulated time: the delay is a block on the scheduler's clock (deadline.at is in
        // simulated time then); an infinite one blocks for good, which the scheduler
        // reports as a deadlock if nothing else can run.
        const wdk::BlockingScope blocking;
        switch (deadline.kind) {
            case wdk::Deadline::Kind::kPoll:
                softndk::sim::yield("KeDelayExecutionThread");
                break;
            case wdk::Deadline::Kind::kAt:
                softndk::sim::sleep_until(
                    static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              deadline.at.time_since_epoch())
                                              .count()),
                    "KeDelayExecutionThread");
                break;
            case wdk::Deadline::Kind::kInfinite:
                softndk::sim::sleep_until(softndk::sim::kNever, "KeDelayExecutionThread (forever)");
                break;
        }
        return STATUS_SUCCESS;
    }
    switch (deadline.kind) {
        case wdk::Deadline::Kind::kPoll:
            sched_yield();
            break;
        case wdk::Deadline::Kind::kAt: {
            const wdk::BlockingScope blocking;
            std::this_thread::sleep_until(deadline.at);
            break;
        }
        case wdk::Deadline::Kind::kInfinite:
            wdk::note_thread_blocking();  // for good
            for (;;) {
                std::this_thread::sleep_for(std::chrono::hours(24));
            }
    }
    return STATUS_SUCCESS;
}

}  // extern "C"
