// KDPC and KTIMER: DPCs run once per insertion, at DISPATCH_LEVEL, in order, and can be removed
// and flushed; timers are dispatcher objects with relative, absolute and periodic due times,
// queue their DPC on expiry, and can be cancelled.
#include <wdm.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "waits.hpp"

using softndk::test::relative_ms;
using softndk::test::wait_ms;

namespace {

// Records every run of a DPC routine. The routine's own KDPC is the first member, so the
// routine finds its record from the Dpc argument, as real drivers do with CONTAINING_RECORD.
struct Recorder {
    KDPC dpc;
    std::mutex lock;
    std::vector<PVOID> arguments;  // SystemArgument1 of every run
    std::vector<int> *order = nullptr;
    int id = 0;
    KIRQL irql = PASSIVE_LEVEL;
    bool context_matches = false;
    bool data_cleared = false;
    std::thread::id thread;
    KEVENT ran;
};

VOID record(PKDPC Dpc, PVOID DeferredContext, PVOID SystemArgument1, PVOID SystemArgument2) {
    (void)SystemArgument2;
    // Catch2 assertions are not thread-safe: the routine records, the test thread checks.
    auto *recorder = CONTAINING_RECORD(Dpc, Recorder, dpc);
    {
        std::lock_guard guard(recorder->lock);
        recorder->context_matches = DeferredContext == recorder;
        recorder->arguments.push_back(SystemArgument1);
        recorder->irql = KeGetCurrentIrql();
        recorder->data_cleared = Dpc->DpcData == nullptr;
        recorder->thread = std::this_thread::get_id();
        if (recorder->order != nullptr) recorder->order->push_back(recorder->id);
    }
    KeSetEvent(&recorder->ran, IO_NO_INCREMENT, FALSE);
}

void init_recorder(Recorder &recorder, int id = 0, std::vector<int> *order = nullptr) {
    KeInitializeDpc(&recorder.dpc, record, &recorder);
    KeInitializeEvent(&recorder.ran, NotificationEvent, FALSE);
    recorder.id = id;
    recorder.order = order;
}

size_t runs(Recorder &recorder) {
    std::lock_guard guard(recorder.lock);
    return recorder.arguments.size();
}

// Holds the DPC thread inside a DPC routine until released, without a runtime wait (DPCs may
// not wait). While it is held, every other DPC stays queued.
struct Blocker {
    KDPC dpc;
    std::mutex gate;
    KEVENT started;

    Blocker() {
        KeInitializeEvent(&started, NotificationEvent, FALSE);
        KeInitializeDpc(
            &dpc,
            [](PKDPC, PVOID context, PVOID, PVOID) {
                auto *self = static_cast<Blocker *>(context);
                KeSetEvent(&self->started, IO_NO_INCREMENT, FALSE);
                std::lock_guard hold(self->gate);
            },
            this);
    }

    void hold() {
        gate.lock();
        REQUIRE(KeInsertQueueDpc(&dpc, nullptr, nullptr) == TRUE);
        REQUIRE(wait_ms(&started) == STATUS_SUCCESS);
    }

    void release() { gate.unlock(); }
};

PVOID argument(ULONG_PTR value) {
    return reinterpret_cast<PVOID>(value);
}

}  // namespace

TEST_CASE("dpc: KDPC keeps Windows' x64 layout and KeInitializeDpc fills it") {
    STATIC_REQUIRE(sizeof(KDPC) == 64);
    STATIC_REQUIRE(offsetof(KDPC, DpcListEntry) == 8);
    STATIC_REQUIRE(offsetof(KDPC, DeferredRoutine) == 0x18);
    STATIC_REQUIRE(offsetof(KDPC, DeferredContext) == 0x20);
    STATIC_REQUIRE(offsetof(KDPC, SystemArgument1) == 0x28);
    STATIC_REQUIRE(offsetof(KDPC, DpcData) == 0x38);
    Recorder recorder;
    init_recorder(recorder);
    CHECK(recorder.dpc.Type == 19);
    CHECK(recorder.dpc.Importance == MediumImportance);
    CHECK(recorder.dpc.DeferredRoutine == record);
    CHECK(recorder.dpc.DeferredContext == &recorder);
    CHECK(recorder.dpc.DpcData == nullptr);
    CHECK(KeRemoveQueueDpc(&recorder.dpc) == FALSE);  // never queued
}

TEST_CASE("dpc: the routine runs once, on the DPC thread, at DISPATCH_LEVEL") {
    Recorder recorder;
    init_recorder(recorder);
    REQUIRE(KeInsertQueueDpc(&recorder.dpc, argument(7), argument(8)) == TRUE);
    REQUIRE(wait_ms(&recorder.ran) == STATUS_SUCCESS);
    KeFlushQueuedDpcs();
    std::lock_guard guard(recorder.lock);
    CHECK(recorder.arguments == std::vector<PVOID>{argument(7)});
    CHECK(recorder.context_matches);
    CHECK(recorder.irql == DISPATCH_LEVEL);
    CHECK(recorder.data_cleared);  // no longer queued while it runs
    CHECK(recorder.thread != std::this_thread::get_id());
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
}

TEST_CASE("dpc: inserting a queued DPC returns FALSE and keeps the first arguments") {
    Blocker blocker;
    Recorder recorder;
    init_recorder(recorder);
    blocker.hold();

    CHECK(KeInsertQueueDpc(&recorder.dpc, argument(1), nullptr) == TRUE);
    CHECK(recorder.dpc.DpcData != nullptr);
    CHECK(KeInsertQueueDpc(&recorder.dpc, argument(2), nullptr) == FALSE);
    CHECK(KeRemoveQueueDpc(&recorder.dpc) == TRUE);
    CHECK(KeRemoveQueueDpc(&recorder.dpc) == FALSE);
    CHECK(recorder.dpc.DpcData == nullptr);
    CHECK(KeInsertQueueDpc(&recorder.dpc, argument(3), nullptr) == TRUE);
    CHECK(KeInsertQueueDpc(&recorder.dpc, argument(4), nullptr) == FALSE);

    blocker.release();
    KeFlushQueuedDpcs();
    std::lock_guard guard(recorder.lock);
    CHECK(recorder.arguments == std::vector<PVOID>{argument(3)});  // removed one never ran
}

TEST_CASE("dpc: queued DPCs run in FIFO order, and removal from the middle keeps the rest") {
    Blocker blocker;
    std::vector<int> order;  // written by the DPC thread only, read after the flush
    Recorder first;
    Recorder middle;
    Recorder last;
    init_recorder(first, 1, &order);
    init_recorder(middle, 2, &order);
    init_recorder(last, 3, &order);
    blocker.hold();
    REQUIRE(KeInsertQueueDpc(&first.dpc, nullptr, nullptr) == TRUE);
    REQUIRE(KeInsertQueueDpc(&middle.dpc, nullptr, nullptr) == TRUE);
    REQUIRE(KeInsertQueueDpc(&last.dpc, nullptr, nullptr) == TRUE);
    REQUIRE(KeRemoveQueueDpc(&middle.dpc) == TRUE);
    REQUIRE(KeInsertQueueDpc(&middle.dpc, nullptr, nullptr) == TRUE);  // now after `last`
    blocker.release();
    KeFlushQueuedDpcs();
    CHECK(order == std::vector<int>{1, 3, 2});
}

namespace {

struct SelfQueueing {
    KDPC dpc;
    int runs = 0;              // DPC thread only until `done`
    bool all_requeued = true;  // ditto
    KEVENT done;
};

VOID queue_again(PKDPC Dpc, PVOID DeferredContext, PVOID, PVOID) {
    auto *state = static_cast<SelfQueueing *>(DeferredContext);
    if (++state->runs < 3) {
        if (KeInsertQueueDpc(Dpc, nullptr, nullptr) != TRUE) state->all_requeued = false;
    } else {
        KeSetEvent(&state->done, IO_NO_INCREMENT, FALSE);
    }
}

}  // namespace

TEST_CASE("dpc: a routine may queue its own DPC again") {
    SelfQueueing state;
    KeInitializeEvent(&state.done, NotificationEvent, FALSE);
    KeInitializeDpc(&state.dpc, queue_again, &state);
    REQUIRE(KeInsertQueueDpc(&state.dpc, nullptr, nullptr) == TRUE);
    REQUIRE(wait_ms(&state.done) == STATUS_SUCCESS);
    KeFlushQueuedDpcs();
    CHECK(state.runs == 3);
    CHECK(state.all_requeued);
}

TEST_CASE("dpc: KeFlushQueuedDpcs returns only after a running DPC has finished") {
    Blocker blocker;  // its routine is the DPC that is running during the flush
    blocker.hold();
    Recorder queued;
    init_recorder(queued);
    REQUIRE(KeInsertQueueDpc(&queued.dpc, argument(5), nullptr) == TRUE);
    KEVENT flushed;
    KeInitializeEvent(&flushed, NotificationEvent, FALSE);
    std::thread flusher([&] {
        KeFlushQueuedDpcs();
        KeSetEvent(&flushed, IO_NO_INCREMENT, FALSE);
    });
    CHECK(wait_ms(&flushed, 50) == STATUS_TIMEOUT);
    blocker.release();
    CHECK(wait_ms(&flushed) == STATUS_SUCCESS);
    flusher.join();
    CHECK(runs(queued) == 1);
}

TEST_CASE("dpc: flushing above PASSIVE_LEVEL or returning at another IRQL aborts") {
    auto child = softndk::test::run_in_child([] {
        KeRaiseIrqlToDpcLevel();
        KeFlushQueuedDpcs();
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));

    child = softndk::test::run_in_child([] {
        KDPC dpc;
        KeInitializeDpc(
            &dpc, [](PKDPC, PVOID, PVOID, PVOID) { KeLowerIrql(PASSIVE_LEVEL); }, nullptr);
        KeInsertQueueDpc(&dpc, nullptr, nullptr);
        KeFlushQueuedDpcs();
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("must return at DISPATCH_LEVEL"));
}

// ---- Timers.

TEST_CASE("timer: KTIMER keeps Windows' x64 layout and starts unsignalled and not set") {
    STATIC_REQUIRE(sizeof(KTIMER) == 64);
    STATIC_REQUIRE(offsetof(KTIMER, DueTime) == 0x18);
    STATIC_REQUIRE(offsetof(KTIMER, TimerListEntry) == 0x20);
    STATIC_REQUIRE(offsetof(KTIMER, Dpc) == 0x30);
    STATIC_REQUIRE(offsetof(KTIMER, Period) == 0x3C);
    KTIMER timer;
    KeInitializeTimer(&timer);
    CHECK(timer.Header.Type == 8);  // TimerNotificationObject
    CHECK(KeReadStateTimer(&timer) == FALSE);
    CHECK(KeCancelTimer(&timer) == FALSE);
    LARGE_INTEGER zero;
    zero.QuadPart = 0;
    CHECK(KeWaitForSingleObject(&timer, Executive, KernelMode, FALSE, &zero) == STATUS_TIMEOUT);

    KeInitializeTimerEx(&timer, SynchronizationTimer);
    CHECK(timer.Header.Type == 9);  // TimerSynchronizationObject
}

TEST_CASE("timer: due time 0 or in the past expires at once") {
    KTIMER timer;
    KeInitializeTimer(&timer);
    LARGE_INTEGER due;
    due.QuadPart = 0;
    CHECK(KeSetTimer(&timer, due, nullptr) == FALSE);
    CHECK(wait_ms(&timer) == STATUS_SUCCESS);
    CHECK(KeReadStateTimer(&timer) == TRUE);

    // Setting a timer makes it unsignalled again.
    CHECK(KeSetTimer(&timer, relative_ms(60 * 60 * 1000), nullptr) == FALSE);  // had expired
    CHECK(KeReadStateTimer(&timer) == FALSE);

    KeQuerySystemTime(&due);
    due.QuadPart -= 10'000'000;                       // absolute, a second ago
    CHECK(KeSetTimer(&timer, due, nullptr) == TRUE);  // it was set (for an hour)
    CHECK(wait_ms(&timer) == STATUS_SUCCESS);
    CHECK(KeCancelTimer(&timer) == FALSE);  // expired: no longer set
}

TEST_CASE("timer: a relative notification timer releases every waiter and stays signalled") {
    KTIMER timer;
    KeInitializeTimer(&timer);
    std::atomic<int> released{0};
    auto waiter = [&] {
        if (wait_ms(&timer) == STATUS_SUCCESS) ++released;
    };
    std::thread first(waiter);
    std::thread second(waiter);
    CHECK(KeSetTimer(&timer, relative_ms(20), nullptr) == FALSE);
    first.join();
    second.join();
    CHECK(released == 2);
    CHECK(KeReadStateTimer(&timer) == TRUE);
    CHECK(wait_ms(&timer, 0) == STATUS_SUCCESS);
    CHECK(KeCancelTimer(&timer) == FALSE);  // a one-shot timer is not set after it expired
}

TEST_CASE("timer: an absolute due time in the future") {
    KTIMER timer;
    KeInitializeTimer(&timer);
    LARGE_INTEGER due;
    KeQuerySystemTimePrecise(&due);
    due.QuadPart += 20 * 10'000;  // 20 ms from now
    KeSetTimer(&timer, due, nullptr);
    CHECK(wait_ms(&timer) == STATUS_SUCCESS);
    LARGE_INTEGER now;
    KeQuerySystemTimePrecise(&now);
    // Coarse clocks differ by a tick; the timer must not be early by more than that.
    CHECK(now.QuadPart >= due.QuadPart - 20 * 10'000);
}

TEST_CASE("timer: a synchronization timer satisfies one wait, then is unsignalled") {
    KTIMER timer;
    KeInitializeTimerEx(&timer, SynchronizationTimer);
    LARGE_INTEGER due;
    due.QuadPart = 0;
    KeSetTimer(&timer, due, nullptr);
    // Nobody waits: it stays signalled until a wait consumes it.
    REQUIRE(softndk::test::eventually([&] { return KeReadStateTimer(&timer) == TRUE; }));
    CHECK(wait_ms(&timer, 0) == STATUS_SUCCESS);
    CHECK(KeReadStateTimer(&timer) == FALSE);
    CHECK(wait_ms(&timer, 0) == STATUS_TIMEOUT);
}

TEST_CASE("timer: set returns TRUE when re-arming, cancel stops it for good") {
    KTIMER cancelled;
    KeInitializeTimer(&cancelled);
    Recorder recorder;
    init_recorder(recorder);
    CHECK(KeSetTimer(&cancelled, relative_ms(60 * 60 * 1000), &recorder.dpc) == FALSE);
    CHECK(KeSetTimer(&cancelled, relative_ms(10), &recorder.dpc) == TRUE);  // was set
    CHECK(KeCancelTimer(&cancelled) == TRUE);
    CHECK(KeCancelTimer(&cancelled) == FALSE);

    // Timers expire in due-time order: once a later one has fired, the cancelled one would
    // have fired too.
    KTIMER later;
    KeInitializeTimer(&later);
    KeSetTimer(&later, relative_ms(40), nullptr);
    REQUIRE(wait_ms(&later) == STATUS_SUCCESS);
    KeFlushQueuedDpcs();
    CHECK(KeReadStateTimer(&cancelled) == FALSE);
    CHECK(runs(recorder) == 0);
}

TEST_CASE("timer: expiry queues the DPC with the system time as its arguments") {
    KTIMER timer;
    KeInitializeTimer(&timer);
    Recorder recorder;
    init_recorder(recorder);
    LARGE_INTEGER before;
    KeQuerySystemTime(&before);
    KeSetTimer(&timer, relative_ms(5), &recorder.dpc);
    REQUIRE(wait_ms(&recorder.ran) == STATUS_SUCCESS);
    KeFlushQueuedDpcs();
    CHECK(KeReadStateTimer(&timer) == TRUE);  // signalled before the DPC ran
    std::lock_guard guard(recorder.lock);
    REQUIRE(recorder.arguments.size() == 1);
    CHECK(recorder.irql == DISPATCH_LEVEL);
    const auto low = static_cast<ULONG>(reinterpret_cast<ULONG_PTR>(recorder.arguments[0]));
    // SystemArgument1 is the low half of the system time at expiry: a little after `before`.
    CHECK(static_cast<ULONG>(low - before.LowPart) < 10U * 10'000'000U);
}

namespace {

struct Periodic {
    KTIMER timer;
    KDPC dpc;
    std::atomic<int> runs{0};
    KEVENT third_run;
};

VOID count_periods(PKDPC, PVOID DeferredContext, PVOID, PVOID) {
    auto *state = static_cast<Periodic *>(DeferredContext);
    if (++state->runs == 3) KeSetEvent(&state->third_run, IO_NO_INCREMENT, FALSE);
}

}  // namespace

TEST_CASE("timer: a periodic timer fires again every period until cancelled") {
    Periodic state;
    KeInitializeTimer(&state.timer);
    KeInitializeDpc(&state.dpc, count_periods, &state);
    KeInitializeEvent(&state.third_run, NotificationEvent, FALSE);
    CHECK(KeSetTimerEx(&state.timer, relative_ms(1), 5, &state.dpc) == FALSE);
    REQUIRE(wait_ms(&state.third_run) == STATUS_SUCCESS);
    CHECK(KeCancelTimer(&state.timer) == TRUE);  // still set between periods
    KeFlushQueuedDpcs();
    const int settled = state.runs;
    KeFlushQueuedDpcs();
    CHECK(state.runs == settled);  // nothing queued any more

    // A periodic synchronization timer satisfies one wait per period.
    KTIMER ticker;
    KeInitializeTimerEx(&ticker, SynchronizationTimer);
    KeSetTimerEx(&ticker, relative_ms(1), 2, nullptr);
    for (int i = 0; i < 3; ++i) {
        CHECK(wait_ms(&ticker) == STATUS_SUCCESS);
    }
    CHECK(KeCancelTimer(&ticker) == TRUE);
}

TEST_CASE("timer: KeWaitForMultipleObjects mixes timers and events") {
    KTIMER timer;
    KeInitializeTimer(&timer);
    KEVENT never;
    KeInitializeEvent(&never, NotificationEvent, FALSE);
    PVOID objects[] = {&never, &timer};
    KeSetTimer(&timer, relative_ms(10), nullptr);
    LARGE_INTEGER timeout = relative_ms(softndk::test::kPatienceMs);
    CHECK(KeWaitForMultipleObjects(2, objects, WaitAny, Executive, KernelMode, FALSE, &timeout,
                                   nullptr) == STATUS_WAIT_1);
    KeSetEvent(&never, IO_NO_INCREMENT, FALSE);
    CHECK(KeWaitForMultipleObjects(2, objects, WaitAll, Executive, KernelMode, FALSE, &timeout,
                                   nullptr) == STATUS_SUCCESS);
}

TEST_CASE("timer: setting above DISPATCH_LEVEL bug-checks, an uninitialised timer aborts") {
    auto child = softndk::test::run_in_child([] {
        KTIMER timer;
        KeInitializeTimer(&timer);
        KfRaiseIrql(HIGH_LEVEL);
        KeSetTimer(&timer, relative_ms(1), nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));

    child = softndk::test::run_in_child([] {
        KTIMER timer{};
        KeSetTimer(&timer, relative_ms(1), nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("is not a KTIMER"));
}
