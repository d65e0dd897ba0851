// Ex timers (ExAllocateTimer / ExSetTimer / ExCancelTimer / ExDeleteTimer and their parameter
// initialisers): the callback's thread and IRQL, one-shot and periodic expiry, cancel and
// re-set results, deletion with and without waiting and its callback, waiting on the timer,
// and the misuse that aborts. Also KeSetCoalescableTimer and the DPC extras.
#include <wdm.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "waits.hpp"
#include "wdk_internal.hpp"

using softndk::test::eventually;
using softndk::test::run_in_child;
using softndk::test::wait_ms;

namespace {

constexpr LONGLONG kMs = 10'000;  // 100 ns units per millisecond

struct Expiries {
    std::atomic<int> count{0};
    std::atomic<int> bad_irql{0};
    std::atomic<PEX_TIMER> timer{nullptr};
    KEVENT fired;
    Expiries() { KeInitializeEvent(&fired, SynchronizationEvent, FALSE); }
};

VOID count_expiry(PEX_TIMER Timer, PVOID Context) {
    auto *expiries = static_cast<Expiries *>(Context);
    if (KeGetCurrentIrql() != DISPATCH_LEVEL) ++expiries->bad_irql;
    expiries->timer = Timer;
    ++expiries->count;
    KeSetEvent(&expiries->fired, IO_NO_INCREMENT, FALSE);
}

VOID note_deleted(PVOID Context) {
    auto *deleted = static_cast<std::atomic<int> *>(Context);
    if (KeGetCurrentIrql() == DISPATCH_LEVEL) ++*deleted;
}

}  // namespace

TEST_CASE("ex timer: parameter initialisers set Windows' defaults") {
    EXT_SET_PARAMETERS set;
    std::memset(&set, 0xAB, sizeof(set));
    ExInitializeSetTimerParameters(&set);
    CHECK(set.Version == 0);
    CHECK(set.NoWakeTolerance == EX_TIMER_UNLIMITED_TOLERANCE);
    EXT_DELETE_PARAMETERS del;
    std::memset(&del, 0xAB, sizeof(del));
    ExInitializeDeleteTimerParameters(&del);
    CHECK(del.Version == 0);
    CHECK(del.DeleteCallback == nullptr);
    CHECK(del.DeleteContext == nullptr);
}

TEST_CASE("ex timer: unknown or conflicting attributes give NULL") {
    CHECK(ExAllocateTimer(nullptr, nullptr, 0x1) == nullptr);
    CHECK(ExAllocateTimer(nullptr, nullptr, EX_TIMER_HIGH_RESOLUTION | EX_TIMER_NO_WAKE) ==
          nullptr);
    const size_t live = softndk::wdk::pool_live_allocations();
    PEX_TIMER timer = ExAllocateTimer(nullptr, nullptr, EX_TIMER_HIGH_RESOLUTION);
    REQUIRE(timer != nullptr);
    CHECK(softndk::wdk::pool_live_allocations() == live + 1);
    CHECK(ExDeleteTimer(timer, TRUE, TRUE, nullptr) == FALSE);  // never set
    CHECK(softndk::wdk::pool_live_allocations() == live);
}

TEST_CASE("ex timer: a one-shot timer calls back once at DISPATCH_LEVEL and is waitable") {
    Expiries expiries;
    PEX_TIMER timer = ExAllocateTimer(count_expiry, &expiries, 0);
    REQUIRE(timer != nullptr);
    EXT_SET_PARAMETERS parameters;
    ExInitializeSetTimerParameters(&parameters);
    CHECK(ExSetTimer(timer, -10 * kMs, 0, &parameters) == FALSE);
    REQUIRE(wait_ms(&expiries.fired) == STATUS_SUCCESS);
    CHECK(wait_ms(timer) == STATUS_SUCCESS);  // the timer object is signalled
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    CHECK(expiries.count.load() == 1);
    CHECK(expiries.bad_irql.load() == 0);
    CHECK(expiries.timer.load() == timer);
    CHECK(ExCancelTimer(timer, nullptr) == FALSE);  // no longer pending
    CHECK(ExDeleteTimer(timer, TRUE, TRUE, nullptr) == FALSE);
}

TEST_CASE("ex timer: a periodic timer keeps expiring until cancelled") {
    Expiries expiries;
    PEX_TIMER timer = ExAllocateTimer(count_expiry, &expiries, EX_TIMER_HIGH_RESOLUTION);
    REQUIRE(timer != nullptr);
    CHECK(ExSetTimer(timer, -2 * kMs, 5 * kMs, nullptr) == FALSE);
    REQUIRE(eventually([&] { return expiries.count.load() >= 3; }));
    CHECK(ExCancelTimer(timer, nullptr) == TRUE);  // periodic: still pending until now
    KeFlushQueuedDpcs();
    const int after_cancel = expiries.count.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    CHECK(expiries.count.load() == after_cancel);
    CHECK(expiries.bad_irql.load() == 0);
    CHECK(ExDeleteTimer(timer, TRUE, TRUE, nullptr) == FALSE);
}

TEST_CASE("ex timer: setting a pending timer replaces it and returns TRUE") {
    Expiries expiries;
    PEX_TIMER timer = ExAllocateTimer(count_expiry, &expiries, 0);
    REQUIRE(timer != nullptr);
    CHECK(ExSetTimer(timer, -60'000 * kMs, 0, nullptr) == FALSE);
    CHECK(ExSetTimer(timer, -5 * kMs, 0, nullptr) == TRUE);
    REQUIRE(wait_ms(&expiries.fired) == STATUS_SUCCESS);
    CHECK(expiries.count.load() == 1);
    // An absolute due time in the past expires at once.
    LARGE_INTEGER now;
    KeQuerySystemTime(&now);
    CHECK(ExSetTimer(timer, now.QuadPart - 1, 0, nullptr) == FALSE);
    REQUIRE(wait_ms(&expiries.fired) == STATUS_SUCCESS);
    CHECK(expiries.count.load() == 2);
    ExDeleteTimer(timer, TRUE, TRUE, nullptr);
}

TEST_CASE("ex timer: delete cancels a pending timer and runs the delete callback") {
    Expiries expiries;
    std::atomic<int> deleted{0};
    PEX_TIMER timer = ExAllocateTimer(count_expiry, &expiries, 0);
    REQUIRE(timer != nullptr);
    ExSetTimer(timer, -60'000 * kMs, 0, nullptr);
    EXT_DELETE_PARAMETERS parameters;
    ExInitializeDeleteTimerParameters(&parameters);
    parameters.DeleteCallback = note_deleted;
    parameters.DeleteContext = &deleted;
    CHECK(ExDeleteTimer(timer, TRUE, TRUE, &parameters) == TRUE);
    CHECK(deleted.load() == 1);  // Wait: the callback has run when it returns
    CHECK(expiries.count.load() == 0);
}

TEST_CASE("ex timer: delete without cancel lets a pending one-shot expire first") {
    Expiries expiries;
    std::atomic<int> deleted{0};
    const size_t live = softndk::wdk::pool_live_allocations();
    PEX_TIMER timer = ExAllocateTimer(count_expiry, &expiries, 0);
    REQUIRE(timer != nullptr);
    ExSetTimer(timer, -10 * kMs, 0, nullptr);
    EXT_DELETE_PARAMETERS parameters;
    ExInitializeDeleteTimerParameters(&parameters);
    parameters.DeleteCallback = note_deleted;
    parameters.DeleteContext = &deleted;
    CHECK(ExDeleteTimer(timer, FALSE, FALSE, &parameters) == FALSE);
    REQUIRE(eventually([&] { return deleted.load() == 1; }));
    CHECK(expiries.count.load() == 1);
    CHECK(softndk::wdk::pool_live_allocations() == live);
}

TEST_CASE("ex timer: delete without waiting frees the timer on the DPC thread") {
    std::atomic<int> deleted{0};
    const size_t live = softndk::wdk::pool_live_allocations();
    PEX_TIMER timer = ExAllocateTimer(nullptr, nullptr, 0);
    REQUIRE(timer != nullptr);
    ExSetTimer(timer, -60'000 * kMs, 0, nullptr);
    EXT_DELETE_PARAMETERS parameters;
    ExInitializeDeleteTimerParameters(&parameters);
    parameters.DeleteCallback = note_deleted;
    parameters.DeleteContext = &deleted;
    KIRQL old;
    KeRaiseIrql(DISPATCH_LEVEL, &old);  // allowed at DISPATCH_LEVEL without Wait
    CHECK(ExDeleteTimer(timer, TRUE, FALSE, &parameters) == TRUE);
    KeLowerIrql(old);
    KeFlushQueuedDpcs();
    CHECK(deleted.load() == 1);
    CHECK(softndk::wdk::pool_live_allocations() == live);
}

TEST_CASE(
    "ex timer: misuse aborts - periodic delete without cancel, Wait without Cancel, not a "
    "timer, cancel parameters") {
    auto child = run_in_child([] {
        PEX_TIMER timer = ExAllocateTimer(nullptr, nullptr, 0);
        ExSetTimer(timer, -60'000 * kMs, 10 * kMs, nullptr);
        ExDeleteTimer(timer, FALSE, FALSE, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("periodic"));
    child = run_in_child([] {
        PEX_TIMER timer = ExAllocateTimer(nullptr, nullptr, 0);
        ExDeleteTimer(timer, FALSE, TRUE, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("needs Cancel = TRUE"));
    child = run_in_child([] {
        int not_a_timer[64] = {};
        ExSetTimer(reinterpret_cast<PEX_TIMER>(not_a_timer), -kMs, 0, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not a live EX_TIMER"));
    child = run_in_child([] {
        PEX_TIMER timer = ExAllocateTimer(nullptr, nullptr, 0);
        int reserved = 0;
        ExCancelTimer(timer, &reserved);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("reserved"));
    child = run_in_child([] {
        PEX_TIMER timer = ExAllocateTimer(nullptr, nullptr, 0);
        KIRQL old;
        KeRaiseIrql(DISPATCH_LEVEL, &old);
        ExDeleteTimer(timer, TRUE, TRUE, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
}

// ---- KTIMER and DPC extras.

namespace {

struct DpcRun {
    KEVENT ran;
    std::atomic<KIRQL> irql{PASSIVE_LEVEL};
    DpcRun() { KeInitializeEvent(&ran, NotificationEvent, FALSE); }
};

VOID record_dpc(PKDPC, PVOID Context, PVOID, PVOID) {
    auto *run = static_cast<DpcRun *>(Context);
    run->irql = KeGetCurrentIrql();
    KeSetEvent(&run->ran, IO_NO_INCREMENT, FALSE);
}

}  // namespace

TEST_CASE("dpc extras: a coalescable timer expires like KeSetTimerEx and queues its DPC") {
    KTIMER timer;
    KeInitializeTimerEx(&timer, NotificationTimer);
    DpcRun run;
    KDPC dpc;
    KeInitializeDpc(&dpc, record_dpc, &run);
    LARGE_INTEGER due;
    due.QuadPart = -5 * kMs;
    CHECK(KeSetCoalescableTimer(&timer, due, 0, 50, &dpc) == FALSE);
    REQUIRE(wait_ms(&run.ran) == STATUS_SUCCESS);
    CHECK(KeReadStateTimer(&timer) == TRUE);
    CHECK(run.irql.load() == DISPATCH_LEVEL);
    due.QuadPart = -60'000 * kMs;
    CHECK(KeSetCoalescableTimer(&timer, due, 1000, 0, nullptr) == FALSE);
    CHECK(KeSetCoalescableTimer(&timer, due, 1000, 0, nullptr) == TRUE);  // was set
    CHECK(KeCancelTimer(&timer) == TRUE);
}

TEST_CASE(
    "dpc extras: a threaded DPC runs at DISPATCH_LEVEL, importance and target are "
    "recorded") {
    DpcRun run;
    KDPC dpc;
    KeInitializeThreadedDpc(&dpc, record_dpc, &run);
    CHECK(dpc.Type == 24);
    KeSetImportanceDpc(&dpc, HighImportance);
    CHECK(dpc.Importance == HighImportance);
    KeSetTargetProcessorDpc(&dpc, 0);
    CHECK(dpc.Number == MAXIMUM_PROCESSORS);
    PROCESSOR_NUMBER processor{};
    CHECK(KeSetTargetProcessorDpcEx(&dpc, &processor) == STATUS_SUCCESS);
    CHECK(dpc.Number == MAXIMUM_PROCESSORS);
    processor.Group = 1000;
    CHECK(KeSetTargetProcessorDpcEx(&dpc, &processor) == STATUS_INVALID_PARAMETER);
    processor.Group = 0;
    processor.Number = static_cast<UCHAR>(KeQueryActiveProcessorCountEx(0));
    if (processor.Number < 64) {
        CHECK(KeSetTargetProcessorDpcEx(&dpc, &processor) == STATUS_INVALID_PARAMETER);
    }
    CHECK(KeInsertQueueDpc(&dpc, nullptr, nullptr) == TRUE);
    REQUIRE(wait_ms(&run.ran) == STATUS_SUCCESS);
    CHECK(run.irql.load() == DISPATCH_LEVEL);
}

TEST_CASE("dpc extras: the DPC watchdog reports no limits") {
    KDPC_WATCHDOG_INFORMATION information;
    std::memset(&information, 0xFF, sizeof(information));
    CHECK(KeQueryDpcWatchdogInformation(&information) == STATUS_SUCCESS);
    CHECK(information.DpcTimeLimit == 0);
    CHECK(information.DpcWatchdogLimit == 0);
    CHECK(information.DpcTimeCount == 0);
    CHECK(information.DpcWatchdogCount == 0);
}
