// FAST_MUTEX and EX_RUNDOWN_REF: layouts, IRQL effects, contention that sleeps and is released
// in order, rundown that waits for the last user, and the misuse that bug-checks or aborts.
#include <wdm.h>

#include <atomic>
#include <cstring>
#include <thread>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "waits.hpp"

using softndk::test::eventually;
using softndk::test::wait_ms;

TEST_CASE("fast mutex: FAST_MUTEX keeps Windows' x64 layout") {
    STATIC_REQUIRE(sizeof(FAST_MUTEX) == 56);
    STATIC_REQUIRE(offsetof(FAST_MUTEX, Owner) == 8);
    STATIC_REQUIRE(offsetof(FAST_MUTEX, Contention) == 16);
    STATIC_REQUIRE(offsetof(FAST_MUTEX, Event) == 24);
    STATIC_REQUIRE(offsetof(FAST_MUTEX, OldIrql) == 48);
}

TEST_CASE("fast mutex: acquire raises to APC_LEVEL and release restores the caller's IRQL") {
    FAST_MUTEX mutex;
    ExInitializeFastMutex(&mutex);
    CHECK(mutex.Count == 1);
    CHECK(mutex.Owner == nullptr);

    ExAcquireFastMutex(&mutex);
    CHECK(KeGetCurrentIrql() == APC_LEVEL);
    CHECK(mutex.OldIrql == PASSIVE_LEVEL);
    CHECK(mutex.Count == 0);
    CHECK(mutex.Owner != nullptr);
    ExReleaseFastMutex(&mutex);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
    CHECK(mutex.Count == 1);

    // Acquired at APC_LEVEL, it returns to APC_LEVEL.
    KIRQL old;
    KeRaiseIrql(APC_LEVEL, &old);
    ExAcquireFastMutex(&mutex);
    ExReleaseFastMutex(&mutex);
    CHECK(KeGetCurrentIrql() == APC_LEVEL);
    KeLowerIrql(old);
}

TEST_CASE("fast mutex: TryToAcquire fails without waiting while another thread owns it") {
    FAST_MUTEX mutex;
    ExInitializeFastMutex(&mutex);
    ExAcquireFastMutex(&mutex);
    BOOLEAN other_got_it = TRUE;
    KIRQL other_irql = HIGH_LEVEL;
    std::thread([&] {
        other_got_it = ExTryToAcquireFastMutex(&mutex);
        other_irql = KeGetCurrentIrql();  // unchanged on failure
    }).join();
    CHECK(other_got_it == FALSE);
    CHECK(other_irql == PASSIVE_LEVEL);
    ExReleaseFastMutex(&mutex);

    REQUIRE(ExTryToAcquireFastMutex(&mutex) == TRUE);
    CHECK(KeGetCurrentIrql() == APC_LEVEL);
    ExReleaseFastMutex(&mutex);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
}

TEST_CASE("fast mutex: a contending thread sleeps until the owner releases") {
    FAST_MUTEX mutex;
    ExInitializeFastMutex(&mutex);
    KEVENT acquired;
    KeInitializeEvent(&acquired, NotificationEvent, FALSE);
    ExAcquireFastMutex(&mutex);

    std::thread contender([&] {
        ExAcquireFastMutex(&mutex);
        KeSetEvent(&acquired, IO_NO_INCREMENT, FALSE);
        ExReleaseFastMutex(&mutex);
    });
    // Count -1: owned, one waiter (the contender has committed to waiting).
    REQUIRE(eventually([&] { return std::atomic_ref<LONG>(mutex.Count).load() == -1; }));
    CHECK(KeReadStateEvent(&acquired) == 0);
    ExReleaseFastMutex(&mutex);
    CHECK(wait_ms(&acquired) == STATUS_SUCCESS);
    contender.join();
    CHECK(mutex.Count == 1);
    CHECK(mutex.Contention == 1);
}

TEST_CASE("fast mutex: mutual exclusion between two threads") {
    constexpr int kIterations = 20'000;
    FAST_MUTEX mutex;
    ExInitializeFastMutex(&mutex);
    long counter = 0;  // plain: only the mutex orders the increments
    auto work = [&] {
        for (int i = 0; i < kIterations; ++i) {
            ExAcquireFastMutex(&mutex);
            const long seen = counter;
            counter = seen + 1;
            ExReleaseFastMutex(&mutex);
        }
    };
    std::thread first(work);
    std::thread second(work);
    first.join();
    second.join();
    CHECK(counter == 2L * kIterations);
    CHECK(mutex.Count == 1);
}

TEST_CASE("fast mutex: acquiring above APC_LEVEL, recursively, or releasing unowned aborts") {
    auto child = softndk::test::run_in_child([] {
        FAST_MUTEX mutex;
        ExInitializeFastMutex(&mutex);
        KeRaiseIrqlToDpcLevel();
        ExAcquireFastMutex(&mutex);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));

    child = softndk::test::run_in_child([] {
        FAST_MUTEX mutex;
        ExInitializeFastMutex(&mutex);
        ExAcquireFastMutex(&mutex);
        ExAcquireFastMutex(&mutex);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not recursive"));

    child = softndk::test::run_in_child([] {
        FAST_MUTEX mutex;
        ExInitializeFastMutex(&mutex);
        ExReleaseFastMutex(&mutex);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not owned by this thread"));
}

TEST_CASE("rundown: a zeroed EX_RUNDOWN_REF is initialised and counts users in steps of 2") {
    STATIC_REQUIRE(sizeof(EX_RUNDOWN_REF) == 8);
    STATIC_REQUIRE(EX_RUNDOWN_ACTIVE == 1);
    STATIC_REQUIRE(EX_RUNDOWN_COUNT_INC == 2);
    EX_RUNDOWN_REF ref;
    std::memset(&ref, 0, sizeof(ref));
    REQUIRE(ExAcquireRundownProtection(&ref) == TRUE);
    REQUIRE(ExAcquireRundownProtection(&ref) == TRUE);
    CHECK(ref.Count == 4);
    ExReleaseRundownProtection(&ref);
    ExReleaseRundownProtection(&ref);
    CHECK(ref.Count == 0);
}

TEST_CASE("rundown: without users the wait returns at once and later acquires fail") {
    EX_RUNDOWN_REF ref;
    ExInitializeRundownProtection(&ref);
    ExWaitForRundownProtectionRelease(&ref);
    CHECK(ref.Count == EX_RUNDOWN_ACTIVE);
    CHECK(ExAcquireRundownProtection(&ref) == FALSE);
    ExWaitForRundownProtectionRelease(&ref);  // already run down: returns at once
    ExRundownCompleted(&ref);
    CHECK(ref.Count == EX_RUNDOWN_ACTIVE);
    CHECK(ExAcquireRundownProtection(&ref) == FALSE);

    ExReInitializeRundownProtection(&ref);
    CHECK(ref.Count == 0);
    REQUIRE(ExAcquireRundownProtection(&ref) == TRUE);
    ExReleaseRundownProtection(&ref);
}

TEST_CASE("rundown: the wait sleeps until the last user releases, at DISPATCH_LEVEL too") {
    EX_RUNDOWN_REF ref;
    ExInitializeRundownProtection(&ref);
    REQUIRE(ExAcquireRundownProtection(&ref) == TRUE);
    REQUIRE(ExAcquireRundownProtection(&ref) == TRUE);
    KEVENT done;
    KeInitializeEvent(&done, NotificationEvent, FALSE);
    std::thread waiter([&] {
        ExWaitForRundownProtectionRelease(&ref);
        KeSetEvent(&done, IO_NO_INCREMENT, FALSE);
    });
    // The rundown has begun once Count carries the active bit: new users are refused.
    REQUIRE(eventually(
        [&] { return (__atomic_load_n(&ref.Count, __ATOMIC_ACQUIRE) & EX_RUNDOWN_ACTIVE) != 0; }));
    CHECK(ExAcquireRundownProtection(&ref) == FALSE);

    ExReleaseRundownProtection(&ref);
    // One user is still inside: the waiter must not have returned.
    CHECK(wait_ms(&done, 50) == STATUS_TIMEOUT);

    const KIRQL old = KeRaiseIrqlToDpcLevel();  // releasing at DISPATCH_LEVEL is allowed
    ExReleaseRundownProtection(&ref);
    KeLowerIrql(old);
    CHECK(wait_ms(&done) == STATUS_SUCCESS);
    waiter.join();
    CHECK(ref.Count == EX_RUNDOWN_ACTIVE);
}

TEST_CASE("rundown: many users on two threads, then a rundown that waits for all of them") {
    EX_RUNDOWN_REF ref;
    ExInitializeRundownProtection(&ref);
    std::atomic<bool> refused{false};
    std::atomic<long> inside_after_rundown{0};
    std::atomic<bool> rundown_done{false};
    auto user = [&] {
        while (!refused) {
            if (ExAcquireRundownProtection(&ref)) {
                if (rundown_done) ++inside_after_rundown;  // must never happen
                ExReleaseRundownProtection(&ref);
            } else {
                refused = true;
            }
        }
    };
    std::thread first(user);
    std::thread second(user);
    ExWaitForRundownProtectionRelease(&ref);
    rundown_done = true;
    first.join();
    second.join();
    CHECK(inside_after_rundown == 0);
    CHECK(ref.Count == EX_RUNDOWN_ACTIVE);
}

TEST_CASE("rundown: releasing without a user or waiting above APC_LEVEL aborts") {
    auto child = softndk::test::run_in_child([] {
        EX_RUNDOWN_REF ref;
        ExInitializeRundownProtection(&ref);
        ExReleaseRundownProtection(&ref);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("no users to release"));

    child = softndk::test::run_in_child([] {
        EX_RUNDOWN_REF ref;
        ExInitializeRundownProtection(&ref);
        KeRaiseIrqlToDpcLevel();
        ExWaitForRundownProtectionRelease(&ref);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
}
