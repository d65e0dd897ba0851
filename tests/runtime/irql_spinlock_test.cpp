// Per-thread IRQL bookkeeping, spin locks and in-stack queued spin locks.
#include <wdm.h>

#include <atomic>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "waits.hpp"

TEST_CASE("irql: raise and lower stay balanced, per thread") {
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
    KIRQL old_passive;
    KeRaiseIrql(APC_LEVEL, &old_passive);
    CHECK(old_passive == PASSIVE_LEVEL);
    CHECK(KeGetCurrentIrql() == APC_LEVEL);
    const KIRQL old_apc = KeRaiseIrqlToDpcLevel();
    CHECK(old_apc == APC_LEVEL);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);

    KIRQL other_thread = HIGH_LEVEL;
    std::thread([&] { other_thread = KeGetCurrentIrql(); }).join();
    CHECK(other_thread == PASSIVE_LEVEL);

    KIRQL same;
    KeRaiseIrql(DISPATCH_LEVEL, &same);  // raising to the current level is allowed
    CHECK(same == DISPATCH_LEVEL);
    KeLowerIrql(old_apc);
    CHECK(KeGetCurrentIrql() == APC_LEVEL);
    KeLowerIrql(old_passive);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
}

TEST_CASE("irql: raising below or lowering above the current IRQL bug-checks") {
    auto child = softndk::test::run_in_child([] {
        KIRQL old;
        KeRaiseIrql(DISPATCH_LEVEL, &old);
        KeRaiseIrql(APC_LEVEL, &old);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_GREATER_OR_EQUAL"));

    child = softndk::test::run_in_child([] { KeLowerIrql(DISPATCH_LEVEL); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
}

TEST_CASE("spin lock: KeAcquireSpinLock raises to DISPATCH_LEVEL, release restores") {
    KSPIN_LOCK lock = 0;  // zeroed is initialised
    KIRQL old;
    KeAcquireSpinLock(&lock, &old);
    CHECK(old == PASSIVE_LEVEL);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    CHECK(KeTestSpinLock(&lock) == FALSE);
    KeReleaseSpinLock(&lock, old);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
    CHECK(KeTestSpinLock(&lock) == TRUE);
    CHECK(lock == 0);
}

TEST_CASE("spin lock: the DPC-level variants do not touch the IRQL") {
    KSPIN_LOCK lock;
    KeInitializeSpinLock(&lock);
    const KIRQL old = KeRaiseIrqlToDpcLevel();
    KeAcquireSpinLockAtDpcLevel(&lock);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    bool other_got_it = true;
    std::thread([&] { other_got_it = KeTryToAcquireSpinLockAtDpcLevel(&lock) != FALSE; }).join();
    CHECK_FALSE(other_got_it);
    KeReleaseSpinLockFromDpcLevel(&lock);
    CHECK(KeTryToAcquireSpinLockAtDpcLevel(&lock) == TRUE);
    KeReleaseSpinLockFromDpcLevel(&lock);
    KeLowerIrql(old);
}

TEST_CASE("spin lock: mutual exclusion between two threads") {
    constexpr int kIterations = 100'000;
    KSPIN_LOCK lock;
    KeInitializeSpinLock(&lock);
    long counter = 0;  // plain: only the lock orders the increments
    std::atomic<bool> irql_ok{true};
    auto work = [&] {
        for (int i = 0; i < kIterations; ++i) {
            KIRQL old;
            KeAcquireSpinLock(&lock, &old);
            const long seen = counter;
            counter = seen + 1;
            if (KeGetCurrentIrql() != DISPATCH_LEVEL) irql_ok = false;
            KeReleaseSpinLock(&lock, old);
        }
    };
    std::thread first(work);
    std::thread second(work);
    first.join();
    second.join();
    CHECK(counter == 2L * kIterations);
    CHECK(irql_ok.load());
}

TEST_CASE("spin lock: re-acquiring an owned lock or releasing a free one bug-checks") {
    auto child = softndk::test::run_in_child([] {
        KSPIN_LOCK lock = 0;
        KIRQL old;
        KeAcquireSpinLock(&lock, &old);
        KeAcquireSpinLockAtDpcLevel(&lock);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("SPIN_LOCK_ALREADY_OWNED"));

    child = softndk::test::run_in_child([] {
        KSPIN_LOCK lock = 0;
        KeReleaseSpinLock(&lock, PASSIVE_LEVEL);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("SPIN_LOCK_NOT_OWNED"));
}

// ---- In-stack queued spin locks.

TEST_CASE("queued spin lock: acquire raises to DISPATCH_LEVEL, release restores OldIrql") {
    KSPIN_LOCK lock = 0;  // zeroed is initialised
    KLOCK_QUEUE_HANDLE handle;
    KeAcquireInStackQueuedSpinLock(&lock, &handle);
    CHECK(handle.OldIrql == PASSIVE_LEVEL);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    CHECK(KeTestSpinLock(&lock) == FALSE);
    // The word names the queue's tail: this thread's handle.
    CHECK(lock == reinterpret_cast<KSPIN_LOCK>(&handle.LockQueue));
    KeReleaseInStackQueuedSpinLock(&handle);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
    CHECK(KeTestSpinLock(&lock) == TRUE);
    CHECK(lock == 0);

    // Nested locks, released in reverse order, restore each level.
    KSPIN_LOCK inner = 0;
    KLOCK_QUEUE_HANDLE inner_handle;
    KeAcquireInStackQueuedSpinLock(&lock, &handle);
    KeAcquireInStackQueuedSpinLock(&inner, &inner_handle);
    CHECK(inner_handle.OldIrql == DISPATCH_LEVEL);
    KeReleaseInStackQueuedSpinLock(&inner_handle);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    KeReleaseInStackQueuedSpinLock(&handle);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
}

TEST_CASE("queued spin lock: the DPC-level variants do not touch the IRQL") {
    KSPIN_LOCK lock;
    KeInitializeSpinLock(&lock);
    const KIRQL old = KeRaiseIrqlToDpcLevel();
    KLOCK_QUEUE_HANDLE handle;
    KeAcquireInStackQueuedSpinLockAtDpcLevel(&lock, &handle);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    CHECK(KeTestSpinLock(&lock) == FALSE);
    KeReleaseInStackQueuedSpinLockFromDpcLevel(&handle);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    CHECK(lock == 0);
    KeLowerIrql(old);
}

TEST_CASE("queued spin lock: waiters get the lock in the order they queued") {
    KSPIN_LOCK lock = 0;
    KLOCK_QUEUE_HANDLE handle;
    KeAcquireInStackQueuedSpinLock(&lock, &handle);
    std::vector<int> order;  // guarded by the lock
    auto waiter = [&](int id) {
        KLOCK_QUEUE_HANDLE mine;
        KeAcquireInStackQueuedSpinLock(&lock, &mine);
        order.push_back(id);
        KeReleaseInStackQueuedSpinLock(&mine);
    };
    auto tail = [&] { return std::atomic_ref<KSPIN_LOCK>(lock).load(); };
    const KSPIN_LOCK owner_tail = tail();
    std::thread first(waiter, 1);
    // A waiter has queued when the tail moves on from the previous one.
    REQUIRE(softndk::test::eventually([&] { return tail() != owner_tail; }));
    const KSPIN_LOCK first_tail = tail();
    std::thread second(waiter, 2);
    REQUIRE(softndk::test::eventually([&] { return tail() != first_tail; }));
    KeReleaseInStackQueuedSpinLock(&handle);
    first.join();
    second.join();
    CHECK(order == std::vector<int>{1, 2});
    CHECK(lock == 0);
}

TEST_CASE("queued spin lock: mutual exclusion between two threads") {
    constexpr int kIterations = 100'000;
    KSPIN_LOCK lock = 0;
    long counter = 0;  // plain: only the lock orders the increments
    std::atomic<bool> irql_ok{true};
    auto work = [&] {
        for (int i = 0; i < kIterations; ++i) {
            KLOCK_QUEUE_HANDLE handle;
            KeAcquireInStackQueuedSpinLock(&lock, &handle);
            const long seen = counter;
            counter = seen + 1;
            if (KeGetCurrentIrql() != DISPATCH_LEVEL) irql_ok = false;
            KeReleaseInStackQueuedSpinLock(&handle);
        }
    };
    std::thread first(work);
    std::thread second(work);
    first.join();
    second.join();
    CHECK(counter == 2L * kIterations);
    CHECK(irql_ok.load());
    CHECK(lock == 0);
}

TEST_CASE("queued spin lock: releasing through a handle that does not hold the lock bug-checks") {
    auto child = softndk::test::run_in_child([] {
        KSPIN_LOCK lock = 0;
        KLOCK_QUEUE_HANDLE handle;
        KeAcquireInStackQueuedSpinLock(&lock, &handle);
        KeReleaseInStackQueuedSpinLock(&handle);
        KeReleaseInStackQueuedSpinLock(&handle);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("SPIN_LOCK_NOT_OWNED"));
}
