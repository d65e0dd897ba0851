// Critical and guarded regions, guarded mutexes, KMUTEX and KSEMAPHORE through the dispatcher,
// executive resources (ERESOURCE), push locks and shared spin locks: layouts, grant rules,
// recursion, contention that sleeps and is released, and the misuse that bug-checks or aborts.
#include <wdm.h>

#include <atomic>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "waits.hpp"

using softndk::test::eventually;
using softndk::test::relative_ms;
using softndk::test::run_in_child;
using softndk::test::wait_ms;

namespace {

NTSTATUS poll(PVOID object) {
    LARGE_INTEGER zero;
    zero.QuadPart = 0;
    return KeWaitForSingleObject(object, Executive, KernelMode, FALSE, &zero);
}

}  // namespace

// ---- Critical and guarded regions.

TEST_CASE("critical region: Enter/Leave nest per thread and KeAreApcsDisabled reports them") {
    CHECK(KeAreApcsDisabled() == FALSE);
    KeEnterCriticalRegion();
    KeEnterCriticalRegion();
    CHECK(KeAreApcsDisabled() == TRUE);
    BOOLEAN other_thread_sees = TRUE;
    std::thread([&] { other_thread_sees = KeAreApcsDisabled(); }).join();
    CHECK(other_thread_sees == FALSE);  // per thread
    KeLeaveCriticalRegion();
    CHECK(KeAreApcsDisabled() == TRUE);
    KeLeaveCriticalRegion();
    CHECK(KeAreApcsDisabled() == FALSE);
}

TEST_CASE("critical region: guarded regions disable all APCs, and so does APC_LEVEL") {
    CHECK(KeAreAllApcsDisabled() == FALSE);
    KeEnterCriticalRegion();
    CHECK(KeAreAllApcsDisabled() == FALSE);  // a critical region leaves special APCs on
    KeLeaveCriticalRegion();
    KeEnterGuardedRegion();
    CHECK(KeAreApcsDisabled() == TRUE);
    CHECK(KeAreAllApcsDisabled() == TRUE);
    KeLeaveGuardedRegion();
    KIRQL old;
    KeRaiseIrql(APC_LEVEL, &old);
    CHECK(KeAreAllApcsDisabled() == TRUE);
    KeLowerIrql(old);
    CHECK(KeAreAllApcsDisabled() == FALSE);
}

TEST_CASE(
    "critical region: leaving one that was not entered aborts, entering at DISPATCH_LEVEL "
    "bug-checks") {
    auto child = run_in_child([] { KeLeaveCriticalRegion(); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not in a critical region"));
    child = run_in_child([] { KeLeaveGuardedRegion(); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not in a guarded region"));
    child = run_in_child([] {
        KIRQL old;
        KeRaiseIrql(DISPATCH_LEVEL, &old);
        KeEnterCriticalRegion();
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
}

TEST_CASE("critical region: KeGetCurrentThread is one object per thread") {
    const PKTHREAD self = KeGetCurrentThread();
    CHECK(self != nullptr);
    CHECK(KeGetCurrentThread() == self);
    PKTHREAD other = nullptr;
    std::thread([&] { other = KeGetCurrentThread(); }).join();
    CHECK(other != self);
    CHECK(ExGetCurrentResourceThread() == reinterpret_cast<ERESOURCE_THREAD>(self));
}

// ---- Guarded mutexes.

TEST_CASE("guarded mutex: acquire enters a guarded region without raising the IRQL") {
    KGUARDED_MUTEX mutex;
    KeInitializeGuardedMutex(&mutex);
    KeAcquireGuardedMutex(&mutex);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
    CHECK(KeAreAllApcsDisabled() == TRUE);
    CHECK(mutex.Owner == KeGetCurrentThread());
    BOOLEAN other_got_it = TRUE;
    std::thread([&] { other_got_it = KeTryToAcquireGuardedMutex(&mutex); }).join();
    CHECK(other_got_it == FALSE);
    KeReleaseGuardedMutex(&mutex);
    CHECK(KeAreAllApcsDisabled() == FALSE);
    CHECK(mutex.Owner == nullptr);
    REQUIRE(KeTryToAcquireGuardedMutex(&mutex) == TRUE);
    KeReleaseGuardedMutex(&mutex);
}

TEST_CASE("guarded mutex: a contended acquirer sleeps until the owner releases") {
    KGUARDED_MUTEX mutex;
    KeInitializeGuardedMutex(&mutex);
    KeAcquireGuardedMutex(&mutex);
    std::atomic<bool> got_it{false};
    std::thread waiter([&] {
        KeAcquireGuardedMutex(&mutex);
        got_it = true;
        KeReleaseGuardedMutex(&mutex);
    });
    REQUIRE(eventually([&] { return std::atomic_ref<LONG>(mutex.Count).load() < 0; }));  // waiting
    CHECK_FALSE(got_it.load());
    KeReleaseGuardedMutex(&mutex);
    waiter.join();
    CHECK(got_it.load());
    CHECK(mutex.Count == 1);
    CHECK(mutex.Contention == 1);
}

TEST_CASE("guarded mutex: Unsafe variants need a guarded region or APC_LEVEL") {
    KGUARDED_MUTEX mutex;
    KeInitializeGuardedMutex(&mutex);
    KeEnterGuardedRegion();
    KeAcquireGuardedMutexUnsafe(&mutex);
    CHECK(mutex.Owner == KeGetCurrentThread());
    KeReleaseGuardedMutexUnsafe(&mutex);
    KeLeaveGuardedRegion();
    auto child = run_in_child([&] { KeAcquireGuardedMutexUnsafe(&mutex); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("outside a guarded region"));
    child = run_in_child([&] {
        KeAcquireGuardedMutex(&mutex);
        KeAcquireGuardedMutex(&mutex);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("already owns"));
    child = run_in_child([&] { KeReleaseGuardedMutex(&mutex); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not owned by this thread"));
}

// ---- KMUTEX.

TEST_CASE("kernel mutex: KMUTEX and KSEMAPHORE keep Windows' x64 layout") {
    STATIC_REQUIRE(sizeof(KMUTEX) == 56);
    STATIC_REQUIRE(offsetof(KMUTEX, MutantListEntry) == 24);
    STATIC_REQUIRE(offsetof(KMUTEX, OwnerThread) == 40);
    STATIC_REQUIRE(offsetof(KMUTEX, Abandoned) == 48);
    STATIC_REQUIRE(sizeof(KSEMAPHORE) == 32);
    STATIC_REQUIRE(offsetof(KSEMAPHORE, Limit) == 24);
    STATIC_REQUIRE(sizeof(ERESOURCE) == 104);
    STATIC_REQUIRE(sizeof(KGUARDED_MUTEX) == sizeof(FAST_MUTEX));
}

TEST_CASE("kernel mutex: the owner reacquires recursively, the last release frees it") {
    KMUTEX mutex;
    KeInitializeMutex(&mutex, 0);
    CHECK(KeReadStateMutex(&mutex) == 1);
    CHECK(mutex.Header.Type == 2);
    REQUIRE(KeWaitForMutexObject(&mutex, Executive, KernelMode, FALSE, nullptr) == STATUS_SUCCESS);
    CHECK(mutex.OwnerThread == KeGetCurrentThread());
    CHECK(KeAreApcsDisabled() == TRUE);       // owning a KMUTEX is a critical region
    REQUIRE(poll(&mutex) == STATUS_SUCCESS);  // recursion, even with a zero timeout
    CHECK(KeReadStateMutex(&mutex) == -1);

    NTSTATUS other = STATUS_SUCCESS;
    std::thread([&] { other = poll(&mutex); }).join();
    CHECK(other == STATUS_TIMEOUT);

    CHECK(KeReleaseMutex(&mutex, FALSE) == -1);
    CHECK(mutex.OwnerThread == KeGetCurrentThread());
    CHECK(KeAreApcsDisabled() == TRUE);
    CHECK(KeReleaseMutex(&mutex, FALSE) == 0);
    CHECK(KeReadStateMutex(&mutex) == 1);
    CHECK(mutex.OwnerThread == nullptr);
    CHECK(KeAreApcsDisabled() == FALSE);
}

TEST_CASE("kernel mutex: release hands the mutex to one waiter, which becomes the owner") {
    KMUTEX mutex;
    KeInitializeMutex(&mutex, 0);
    REQUIRE(poll(&mutex) == STATUS_SUCCESS);
    // Catch2 assertions are not thread-safe: the waiters count what held, the test checks.
    std::atomic<int> owners{0};
    std::atomic<int> held_correctly{0};
    std::vector<std::thread> waiters;
    for (int i = 0; i < 2; ++i) {
        waiters.emplace_back([&] {
            if (wait_ms(&mutex) != STATUS_SUCCESS) return;
            const bool owned = mutex.OwnerThread == KeGetCurrentThread() &&
                               KeAreApcsDisabled() == TRUE && owners.fetch_add(1) >= 0;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            KeReleaseMutex(&mutex, FALSE);
            if (owned && KeAreApcsDisabled() == FALSE) ++held_correctly;
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(owners.load() == 0);
    KeReleaseMutex(&mutex, FALSE);
    for (auto &waiter : waiters)
        waiter.join();
    CHECK(owners.load() == 2);
    CHECK(held_correctly.load() == 2);
    CHECK(KeReadStateMutex(&mutex) == 1);
}

TEST_CASE("kernel mutex: WaitAll with an event acquires the mutex with the event") {
    KMUTEX mutex;
    KeInitializeMutex(&mutex, 0);
    KEVENT event;
    KeInitializeEvent(&event, SynchronizationEvent, FALSE);
    PVOID objects[] = {&mutex, &event};
    NTSTATUS status = STATUS_PENDING;
    PKTHREAD waiter_thread = nullptr;
    std::thread waiter([&] {
        LARGE_INTEGER timeout = relative_ms(softndk::test::kPatienceMs);
        status = KeWaitForMultipleObjects(2, objects, WaitAll, Executive, KernelMode, FALSE,
                                          &timeout, nullptr);
        waiter_thread = KeGetCurrentThread();
        if (status == STATUS_SUCCESS) KeReleaseMutex(&mutex, FALSE);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(KeReadStateMutex(&mutex) == 1);  // not taken while the event is unsignalled
    KeSetEvent(&event, IO_NO_INCREMENT, FALSE);
    waiter.join();
    CHECK(status == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&event) == 0);  // consumed with the mutex
    CHECK(KeReadStateMutex(&mutex) == 1);
}

TEST_CASE("kernel mutex: release by a thread that does not own it raises STATUS_MUTANT_NOT_OWNED") {
    KMUTEX mutex;
    KeInitializeMutex(&mutex, 0);
    auto child = run_in_child([&] { KeReleaseMutex(&mutex, FALSE); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("BUGCHECK 0x0000001E"));
    CHECK_THAT(child.err, Catch::Contains("0xc0000046"));
    CHECK(STATUS_MUTANT_NOT_OWNED == static_cast<NTSTATUS>(0xC0000046L));
}

// ---- KSEMAPHORE.

TEST_CASE("semaphore: each wait takes one unit, release adds and wakes that many waiters") {
    KSEMAPHORE semaphore;
    KeInitializeSemaphore(&semaphore, 2, 3);
    CHECK(semaphore.Header.Type == 5);
    CHECK(KeReadStateSemaphore(&semaphore) == 2);
    CHECK(poll(&semaphore) == STATUS_SUCCESS);
    CHECK(poll(&semaphore) == STATUS_SUCCESS);
    CHECK(poll(&semaphore) == STATUS_TIMEOUT);
    CHECK(KeReadStateSemaphore(&semaphore) == 0);

    std::atomic<int> passed{0};
    std::vector<std::thread> waiters;
    for (int i = 0; i < 3; ++i) {
        waiters.emplace_back([&] {
            if (wait_ms(&semaphore) == STATUS_SUCCESS) ++passed;
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(KeReleaseSemaphore(&semaphore, IO_NO_INCREMENT, 2, FALSE) == 0);
    REQUIRE(eventually([&] { return passed.load() == 2; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(passed.load() == 2);  // only two units
    CHECK(KeReadStateSemaphore(&semaphore) == 0);
    CHECK(KeReleaseSemaphore(&semaphore, IO_NO_INCREMENT, 3, FALSE) == 0);
    for (auto &waiter : waiters)
        waiter.join();
    CHECK(passed.load() == 3);
    CHECK(KeReadStateSemaphore(&semaphore) == 2);  // 3 released, 1 taken
}

TEST_CASE("semaphore: releasing beyond the limit raises STATUS_SEMAPHORE_LIMIT_EXCEEDED") {
    KSEMAPHORE semaphore;
    KeInitializeSemaphore(&semaphore, 1, 2);
    CHECK(KeReleaseSemaphore(&semaphore, IO_NO_INCREMENT, 1, FALSE) == 1);
    auto child = run_in_child([&] { KeReleaseSemaphore(&semaphore, IO_NO_INCREMENT, 1, FALSE); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("BUGCHECK 0x0000001E"));
    CHECK_THAT(child.err, Catch::Contains("0xc0000047"));
    CHECK(KeReadStateSemaphore(&semaphore) == 2);
    child = run_in_child([] {
        KSEMAPHORE bad;
        KeInitializeSemaphore(&bad, 3, 2);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("Count <= Limit"));
}

// ---- ERESOURCE.

TEST_CASE("executive resource: exclusive is recursive, shared joins an exclusive hold") {
    ERESOURCE resource;
    REQUIRE(ExInitializeResourceLite(&resource) == STATUS_SUCCESS);
    KeEnterCriticalRegion();
    CHECK(ExAcquireResourceExclusiveLite(&resource, TRUE) == TRUE);
    CHECK(ExAcquireResourceExclusiveLite(&resource, FALSE) == TRUE);
    CHECK(ExAcquireResourceSharedLite(&resource, FALSE) == TRUE);
    CHECK(ExIsResourceAcquiredExclusiveLite(&resource) == TRUE);
    CHECK(ExIsResourceAcquiredSharedLite(&resource) == 3);
    CHECK(resource.Flag == ResourceOwnedExclusive);

    BOOLEAN other_shared = TRUE;
    BOOLEAN other_exclusive = TRUE;
    ULONG other_count = 99;
    std::thread([&] {
        KeEnterCriticalRegion();
        other_shared = ExAcquireResourceSharedLite(&resource, FALSE);
        other_exclusive = ExAcquireResourceExclusiveLite(&resource, FALSE);
        other_count = ExIsResourceAcquiredSharedLite(&resource);
        KeLeaveCriticalRegion();
    }).join();
    CHECK(other_shared == FALSE);
    CHECK(other_exclusive == FALSE);
    CHECK(other_count == 0);

    ExReleaseResourceLite(&resource);
    ExReleaseResourceLite(&resource);
    CHECK(ExIsResourceAcquiredExclusiveLite(&resource) == TRUE);
    ExReleaseResourceLite(&resource);
    CHECK(ExIsResourceAcquiredExclusiveLite(&resource) == FALSE);
    CHECK(ExIsResourceAcquiredSharedLite(&resource) == 0);
    KeLeaveCriticalRegion();
    CHECK(ExDeleteResourceLite(&resource) == STATUS_SUCCESS);
}

TEST_CASE(
    "executive resource: sharers share, a waiting writer holds new sharers back except "
    "StarveExclusive") {
    ERESOURCE resource;
    ExInitializeResourceLite(&resource);
    KeEnterCriticalRegion();
    REQUIRE(ExAcquireResourceSharedLite(&resource, TRUE) == TRUE);

    BOOLEAN second_reader = FALSE;
    std::thread([&] {
        KeEnterCriticalRegion();
        second_reader = ExAcquireResourceSharedLite(&resource, FALSE);
        if (second_reader) ExReleaseResourceLite(&resource);
        KeLeaveCriticalRegion();
    }).join();
    CHECK(second_reader == TRUE);

    std::atomic<bool> writer_in{false};
    std::thread writer([&] {
        KeEnterCriticalRegion();
        ExAcquireResourceExclusiveLite(&resource, TRUE);
        writer_in = true;
        ExReleaseResourceLite(&resource);
        KeLeaveCriticalRegion();
    });
    REQUIRE(eventually([&] { return ExGetExclusiveWaiterCount(&resource) == 1; }));
    CHECK(resource.ContentionCount >= 1);

    BOOLEAN normal = TRUE;
    BOOLEAN wait_for_exclusive = TRUE;
    BOOLEAN starve = FALSE;
    std::thread([&] {
        KeEnterCriticalRegion();
        normal = ExAcquireResourceSharedLite(&resource, FALSE);
        wait_for_exclusive = ExAcquireSharedWaitForExclusive(&resource, FALSE);
        starve = ExAcquireSharedStarveExclusive(&resource, FALSE);
        if (starve) ExReleaseResourceLite(&resource);
        KeLeaveCriticalRegion();
    }).join();
    CHECK(normal == FALSE);
    CHECK(wait_for_exclusive == FALSE);
    CHECK(starve == TRUE);
    // The thread that already holds it shared is granted again despite the waiting writer.
    CHECK(ExAcquireResourceSharedLite(&resource, FALSE) == TRUE);
    CHECK(ExIsResourceAcquiredSharedLite(&resource) == 2);
    ExReleaseResourceLite(&resource);

    CHECK_FALSE(writer_in.load());
    ExReleaseResourceLite(&resource);
    writer.join();
    CHECK(writer_in.load());
    KeLeaveCriticalRegion();
    ExDeleteResourceLite(&resource);
}

TEST_CASE("executive resource: convert to shared lets waiting sharers in") {
    ERESOURCE resource;
    ExInitializeResourceLite(&resource);
    ExEnterCriticalRegionAndAcquireResourceExclusive(&resource);
    CHECK(KeAreApcsDisabled() == TRUE);
    std::atomic<bool> reader_in{false};
    std::thread reader([&] {
        ExEnterCriticalRegionAndAcquireResourceShared(&resource);
        reader_in = true;
        ExReleaseResourceAndLeaveCriticalRegion(&resource);
    });
    REQUIRE(eventually([&] { return ExGetSharedWaiterCount(&resource) == 1; }));
    ExConvertExclusiveToSharedLite(&resource);
    reader.join();
    CHECK(reader_in.load());
    CHECK(ExIsResourceAcquiredExclusiveLite(&resource) == FALSE);
    CHECK(ExIsResourceAcquiredSharedLite(&resource) == 1);
    ExReleaseResourceAndLeaveCriticalRegion(&resource);
    CHECK(KeAreApcsDisabled() == FALSE);

    // Released on behalf of the acquiring thread, from another thread.
    ERESOURCE_THREAD owner = 0;
    std::thread([&] {
        ExEnterCriticalRegionAndAcquireSharedWaitForExclusive(&resource);
        owner = ExGetCurrentResourceThread();
        KeLeaveCriticalRegion();
    }).join();
    CHECK(resource.ActiveCount == 1);
    ExReleaseResourceForThreadLite(&resource, owner);
    CHECK(resource.ActiveCount == 0);
    CHECK(ExReinitializeResourceLite(&resource) == STATUS_SUCCESS);
    ExDeleteResourceLite(&resource);
}

TEST_CASE(
    "executive resource: misuse - APCs enabled, non-owner release, shared to exclusive, "
    "delete while owned") {
    ERESOURCE resource;
    ExInitializeResourceLite(&resource);
    auto child = run_in_child([&] { ExAcquireResourceExclusiveLite(&resource, TRUE); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("KeEnterCriticalRegion"));
    child = run_in_child([&] { ExReleaseResourceLite(&resource); });
    CHECK(child.aborted());
    CHECK_THAT(child.err,
               Catch::Contains("RESOURCE_NOT_OWNED") || Catch::Contains("BUGCHECK 0x000000E3"));
    child = run_in_child([&] {
        KeEnterCriticalRegion();
        ExAcquireResourceSharedLite(&resource, TRUE);
        ExAcquireResourceExclusiveLite(&resource, TRUE);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("deadlock"));
    child = run_in_child([&] {
        KeEnterCriticalRegion();
        ExAcquireResourceSharedLite(&resource, TRUE);
        ExDeleteResourceLite(&resource);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("still owned"));
    child = run_in_child([&] {
        KIRQL old;
        KeRaiseIrql(DISPATCH_LEVEL, &old);
        ExAcquireResourceSharedLite(&resource, TRUE);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
    ExDeleteResourceLite(&resource);
}

// ---- Push locks.

TEST_CASE("push lock: sharers share, a writer excludes everyone and sleeping waiters wake") {
    EX_PUSH_LOCK lock;
    ExInitializePushLock(&lock);
    CHECK(lock == 0);
    KeEnterCriticalRegion();
    ExAcquirePushLockShared(&lock);
    std::atomic<bool> reader_in{false};
    std::thread([&] {
        KeEnterCriticalRegion();
        ExAcquirePushLockShared(&lock);
        reader_in = true;
        ExReleasePushLockShared(&lock);
        KeLeaveCriticalRegion();
    }).join();
    CHECK(reader_in.load());

    std::atomic<bool> writer_in{false};
    std::thread writer([&] {
        KeEnterCriticalRegion();
        ExAcquirePushLockExclusive(&lock);
        writer_in = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        writer_in = false;
        ExReleasePushLockExclusive(&lock);
        KeLeaveCriticalRegion();
    });
    // It sleeps, and has marked the lock as waited for.
    REQUIRE(eventually([&] { return (std::atomic_ref<ULONG_PTR>(lock).load() & 2) != 0; }));
    CHECK_FALSE(writer_in.load());
    ExReleasePushLockShared(&lock);
    REQUIRE(eventually([&] { return writer_in.load(); }));
    ExAcquirePushLockShared(&lock);  // waits for the writer
    CHECK_FALSE(writer_in.load());
    ExReleasePushLockShared(&lock);
    writer.join();
    KeLeaveCriticalRegion();
    CHECK(lock == 0);
}

TEST_CASE("push lock: a counter under contention stays exact") {
    EX_PUSH_LOCK lock;
    ExInitializePushLock(&lock);
    long counter = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
        threads.emplace_back([&] {
            KeEnterCriticalRegion();
            for (int i = 0; i < 2000; ++i) {
                ExAcquirePushLockExclusive(&lock);
                ++counter;
                ExReleasePushLockExclusive(&lock);
            }
            KeLeaveCriticalRegion();
        });
    }
    for (auto &thread : threads)
        thread.join();
    CHECK(counter == 6000);
    CHECK(lock == 0);
}

TEST_CASE("push lock: APCs enabled, and releases of a lock not held, abort") {
    EX_PUSH_LOCK lock;
    ExInitializePushLock(&lock);
    auto child = run_in_child([&] { ExAcquirePushLockShared(&lock); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("KeEnterCriticalRegion"));
    child = run_in_child([&] { ExReleasePushLockExclusive(&lock); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not held exclusively"));
    child = run_in_child([&] { ExReleasePushLockShared(&lock); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not held shared"));
}

// ---- Shared spin locks.

TEST_CASE("shared spin lock: readers share at DISPATCH_LEVEL, a writer excludes them") {
    EX_SPIN_LOCK lock = 0;
    const KIRQL old = ExAcquireSpinLockShared(&lock);
    CHECK(old == PASSIVE_LEVEL);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    LOGICAL other_reader = FALSE;
    LOGICAL other_writer = TRUE;
    std::thread([&] {
        KIRQL previous;
        KeRaiseIrql(DISPATCH_LEVEL, &previous);
        other_reader = ExTryAcquireSpinLockSharedAtDpcLevel(&lock);
        if (other_reader) ExReleaseSpinLockSharedFromDpcLevel(&lock);
        other_writer = ExTryAcquireSpinLockExclusiveAtDpcLevel(&lock);
        KeLowerIrql(previous);
    }).join();
    CHECK(other_reader == TRUE);
    CHECK(other_writer == FALSE);
    ExReleaseSpinLockShared(&lock, old);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
    CHECK(lock == 0);

    const KIRQL before = ExAcquireSpinLockExclusive(&lock);
    CHECK(ExTryAcquireSpinLockSharedAtDpcLevel(&lock) == FALSE);
    ExReleaseSpinLockExclusive(&lock, before);
    CHECK(lock == 0);
}

TEST_CASE("shared spin lock: a sole reader converts to exclusive, one of two cannot") {
    EX_SPIN_LOCK lock = 0;
    KIRQL old;
    KeRaiseIrql(DISPATCH_LEVEL, &old);
    ExAcquireSpinLockSharedAtDpcLevel(&lock);
    REQUIRE(ExTryConvertSharedSpinLockExclusive(&lock) == TRUE);
    CHECK(ExTryAcquireSpinLockSharedAtDpcLevel(&lock) == FALSE);
    ExReleaseSpinLockExclusiveFromDpcLevel(&lock);

    ExAcquireSpinLockExclusiveAtDpcLevel(&lock);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    CHECK(ExTryAcquireSpinLockExclusiveAtDpcLevel(&lock) == FALSE);
    ExReleaseSpinLockExclusiveFromDpcLevel(&lock);

    ExAcquireSpinLockSharedAtDpcLevel(&lock);
    ExAcquireSpinLockSharedAtDpcLevel(&lock);  // a second reader (same word)
    CHECK(ExTryConvertSharedSpinLockExclusive(&lock) == FALSE);
    ExReleaseSpinLockSharedFromDpcLevel(&lock);
    ExReleaseSpinLockSharedFromDpcLevel(&lock);
    KeLowerIrql(old);
    CHECK(lock == 0);
}

TEST_CASE("shared spin lock: writers and readers under contention see consistent data") {
    EX_SPIN_LOCK lock = 0;
    long a = 0;
    long b = 0;
    std::atomic<bool> torn{false};
    std::thread writer([&] {
        for (int i = 0; i < 3000; ++i) {
            KIRQL old = ExAcquireSpinLockExclusive(&lock);
            ++a;
            ++b;
            ExReleaseSpinLockExclusive(&lock, old);
        }
    });
    std::thread reader([&] {
        for (int i = 0; i < 3000; ++i) {
            KIRQL old = ExAcquireSpinLockShared(&lock);
            if (a != b) torn = true;
            ExReleaseSpinLockShared(&lock, old);
        }
    });
    writer.join();
    reader.join();
    CHECK_FALSE(torn.load());
    CHECK(a == 3000);
}

TEST_CASE("shared spin lock: releasing a lock not held bug-checks SPIN_LOCK_NOT_OWNED") {
    EX_SPIN_LOCK lock = 0;
    auto child = run_in_child([&] { ExReleaseSpinLockShared(&lock, PASSIVE_LEVEL); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("SPIN_LOCK_NOT_OWNED"));
    child = run_in_child([&] { ExReleaseSpinLockExclusive(&lock, PASSIVE_LEVEL); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("SPIN_LOCK_NOT_OWNED"));
}

TEST_CASE("executive resource: a conversion admits waiting sharers ahead of a waiting writer") {
    ERESOURCE resource;
    ExInitializeResourceLite(&resource);
    ExEnterCriticalRegionAndAcquireResourceExclusive(&resource);
    std::atomic<bool> writer_in{false};
    std::atomic<bool> reader_in{false};
    std::atomic<bool> reader_may_leave{false};
    std::thread writer([&] {
        ExEnterCriticalRegionAndAcquireResourceExclusive(&resource);
        writer_in = true;
        ExReleaseResourceAndLeaveCriticalRegion(&resource);
    });
    REQUIRE(eventually([&] { return ExGetExclusiveWaiterCount(&resource) == 1; }));
    std::thread reader([&] {
        ExEnterCriticalRegionAndAcquireResourceShared(&resource);
        reader_in = true;
        while (!reader_may_leave.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ExReleaseResourceAndLeaveCriticalRegion(&resource);
    });
    REQUIRE(eventually([&] { return ExGetSharedWaiterCount(&resource) == 1; }));
    ExConvertExclusiveToSharedLite(&resource);
    REQUIRE(eventually([&] { return reader_in.load(); }));
    CHECK_FALSE(writer_in.load());
    CHECK(ExGetExclusiveWaiterCount(&resource) == 1);
    ExReleaseResourceAndLeaveCriticalRegion(&resource);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK_FALSE(writer_in.load());  // the reader still holds it
    reader_may_leave = true;
    reader.join();
    writer.join();
    CHECK(writer_in.load());
    ExDeleteResourceLite(&resource);
}
