// Processors, NUMA nodes and group affinity; thread priority; ticks; floating point state;
// ProbeForRead; DbgBreakPoint and free-build assertions; RtlCaptureStackBackTrace; pool quota
// and uninitialised allocations; rundown with a count and the cache-aware rundown; pages for
// MDLs and their mappings; caller-allocated work items; the status codes this part added.
#include <sched.h>
#include <unistd.h>
#include <wdm.h>

#include <atomic>
#include <cfenv>
#include <cstring>
#include <thread>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "waits.hpp"
#include "wdk_internal.hpp"

using softndk::test::eventually;
using softndk::test::run_in_child;
using softndk::test::wait_ms;

namespace {
constexpr ULONG kTag = 0x74736554;  // "Test"
}

// ---- Processors and nodes.

TEST_CASE("processors: counts, indexes and numbers agree with the host") {
    const auto online = static_cast<ULONG>(sysconf(_SC_NPROCESSORS_ONLN));
    CHECK(KeQueryActiveProcessorCountEx(ALL_PROCESSOR_GROUPS) == online);
    CHECK(KeQueryActiveProcessorCountEx(0) == std::min<ULONG>(online, 64));
    CHECK(KeQueryActiveProcessorCountEx(1000) == 0);
    CHECK(KeQueryActiveGroupCount() == (online + 63) / 64);

    const ULONG index = KeGetCurrentProcessorIndex();
    CHECK(index < online);
    CHECK(KeGetCurrentProcessorNumber() < online);
    PROCESSOR_NUMBER number{};
    const ULONG ex_index = KeGetCurrentProcessorNumberEx(&number);
    CHECK(ex_index < online);
    CHECK(ULONG{number.Group} * 64 + number.Number == ex_index);
    CHECK(KeGetCurrentProcessorNumberEx(nullptr) < online);

    PROCESSOR_NUMBER last{};
    REQUIRE(KeGetProcessorNumberFromIndex(online - 1, &last) == STATUS_SUCCESS);
    CHECK(KeGetProcessorIndexFromNumber(&last) == online - 1);
    CHECK(KeGetProcessorNumberFromIndex(online, &last) == STATUS_INVALID_PARAMETER);
    PROCESSOR_NUMBER missing{};
    missing.Group = 1000;
    CHECK(KeGetProcessorIndexFromNumber(&missing) == INVALID_PROCESSOR_INDEX);
}

TEST_CASE("processors: NUMA nodes cover the processors and the current node holds this one") {
    const USHORT highest = KeQueryHighestNodeNumber();
    ULONG total = 0;
    for (USHORT node = 0; node <= highest; ++node) {
        GROUP_AFFINITY affinity{};
        USHORT count = 0;
        KeQueryNodeActiveAffinity(node, &affinity, &count);
        CHECK(static_cast<ULONG>(__builtin_popcountll(affinity.Mask)) == count);
        total += count;
    }
    CHECK(total == std::min<ULONG>(KeQueryActiveProcessorCountEx(ALL_PROCESSOR_GROUPS), 64));

    // Pin the thread so that the processor cannot change under the check.
    GROUP_AFFINITY pin{};
    pin.Mask = 1;  // processor 0
    GROUP_AFFINITY previous{};
    KeSetSystemGroupAffinityThread(&pin, &previous);
    CHECK(KeGetCurrentProcessorNumber() == 0);
    GROUP_AFFINITY node_affinity{};
    KeQueryNodeActiveAffinity(KeGetCurrentNodeNumber(), &node_affinity, nullptr);
    CHECK((node_affinity.Mask & 1) != 0);
    KeRevertToUserGroupAffinityThread(&previous);
    CHECK(previous.Mask != 0);

    GROUP_AFFINITY none{};
    USHORT count = 7;
    none.Mask = 5;
    KeQueryNodeActiveAffinity(static_cast<USHORT>(highest + 1), &none, &count);
    CHECK(none.Mask == 0);
    CHECK(count == 0);
}

TEST_CASE("processors: group affinity really binds the thread, and an empty mask aborts") {
    const ULONG online = KeQueryActiveProcessorCountEx(0);
    const ULONG target = online - 1;
    GROUP_AFFINITY affinity{};
    affinity.Mask = KAFFINITY{1} << target;
    GROUP_AFFINITY previous{};
    KeSetSystemGroupAffinityThread(&affinity, &previous);
    CHECK(static_cast<ULONG>(sched_getcpu()) == target);
    KeRevertToUserGroupAffinityThread(&previous);
    cpu_set_t set;
    sched_getaffinity(0, sizeof(set), &set);
    CHECK(static_cast<ULONG>(CPU_COUNT(&set)) ==
          static_cast<ULONG>(__builtin_popcountll(previous.Mask)));

    auto child = run_in_child([] {
        GROUP_AFFINITY empty{};
        KeSetSystemGroupAffinityThread(&empty, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("names no processor"));
}

TEST_CASE("processors: the shared-data alignment is a cache line") {
    const ULONG alignment = KeGetRecommendedSharedDataAlignment();
    CHECK(alignment >= 16);
    CHECK((alignment & (alignment - 1)) == 0);
}

// ---- Thread priority.

TEST_CASE("thread priority: set, query and base increment are recorded per thread") {
    std::thread([] {}).join();
    const PKTHREAD self = KeGetCurrentThread();
    const KPRIORITY original = KeQueryPriorityThread(self);
    CHECK(KeSetPriorityThread(self, LOW_REALTIME_PRIORITY) == original);
    CHECK(KeQueryPriorityThread(self) == LOW_REALTIME_PRIORITY);
    KPRIORITY other = 0;
    std::thread([&] { other = KeQueryPriorityThread(KeGetCurrentThread()); }).join();
    CHECK(other == 8);  // a new thread starts at 8
    CHECK(KeSetPriorityThread(self, original) == LOW_REALTIME_PRIORITY);

    const LONG increment = KeSetBasePriorityThread(self, 2);
    CHECK(KeQueryPriorityThread(self) == 10);
    CHECK(KeSetBasePriorityThread(self, 100) == 2);
    CHECK(KeQueryPriorityThread(self) == 15);  // kept in the dynamic range
    KeSetBasePriorityThread(self, increment);
    KeSetPriorityThread(self, original);

    auto child = run_in_child([] { KeSetPriorityThread(KeGetCurrentThread(), 32); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("outside 1..31"));
}

// ---- Time.

TEST_CASE("ticks: the tick count is interrupt time over the time increment") {
    CHECK(KeQueryTimeIncrement() == 156250);
    LARGE_INTEGER before;
    KeQueryTickCount(&before);
    const ULONGLONG interrupt = KeQueryInterruptTime();
    LARGE_INTEGER after;
    KeQueryTickCount(&after);
    CHECK(before.QuadPart <= static_cast<LONGLONG>(interrupt / 156250));
    CHECK(static_cast<LONGLONG>(interrupt / 156250) <= after.QuadPart);
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    LARGE_INTEGER later;
    KeQueryTickCount(&later);
    CHECK(later.QuadPart >= after.QuadPart + 2);  // 40 ms is at least two 15.625 ms ticks

    ULONG64 qpc = 0;
    const ULONGLONG unbiased_before = KeQueryUnbiasedInterruptTime();
    const ULONG64 precise = KeQueryUnbiasedInterruptTimePrecise(&qpc);
    CHECK(precise >= unbiased_before);
    CHECK(precise <= KeQueryUnbiasedInterruptTime());
    CHECK(qpc != 0);
}

// ---- Floating point.

TEST_CASE("floating point: save and restore bring the rounding mode back") {
    KFLOATING_SAVE save;
    REQUIRE(KeSaveFloatingPointState(&save) == STATUS_SUCCESS);
    const int mode = std::fegetround();
    std::fesetround(mode == FE_UPWARD ? FE_DOWNWARD : FE_UPWARD);
    CHECK(std::fegetround() != mode);
    CHECK(KeRestoreFloatingPointState(&save) == STATUS_SUCCESS);
    CHECK(std::fegetround() == mode);
    auto child = run_in_child([] {
        KIRQL old;
        KeRaiseIrql(HIGH_LEVEL, &old);
        KFLOATING_SAVE state;
        (void)KeSaveFloatingPointState(&state);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
}

// ---- Probing and debugging.

TEST_CASE("probe: aligned user buffers pass, misalignment and bad ranges raise") {
    alignas(8) char buffer[32] = {};
    ProbeForRead(buffer, sizeof(buffer), 8);
    ProbeForRead(buffer + 1, 4, 1);
    ProbeForRead(reinterpret_cast<void *>(1), 0, 8);  // length 0: nothing is checked
    auto child = run_in_child([&] { ProbeForRead(buffer + 1, 4, 4); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("BUGCHECK 0x0000001E"));
    CHECK_THAT(child.err, Catch::Contains("0x80000002"));
    child =
        run_in_child([] { ProbeForRead(reinterpret_cast<void *>(MM_USER_PROBE_ADDRESS), 8, 1); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("0xc0000005"));
    child = run_in_child([&] { ProbeForRead(buffer, 4, 3); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("Alignment 3"));
    CHECK(STATUS_DATATYPE_MISALIGNMENT == static_cast<NTSTATUS>(0x80000002L));
}

TEST_CASE("debugger: DbgBreakPoint without a debugger logs and returns") {
    auto child = run_in_child([] {
        DbgBreakPoint();
        std::fputs("returned\n", stdout);
    });
    CHECK(child.exited_zero());
    CHECK(child.out == "returned\n");
    CHECK_THAT(child.err, Catch::Contains("DbgBreakPoint without a debugger"));
}

TEST_CASE("debugger: DbgRaiseAssertionFailure and a failing NT_FRE_ASSERT abort") {
    NT_FRE_ASSERT(1 + 1 == 2);
    NT_FRE_ASSERTMSG("holds", true);
    auto child = run_in_child([] { DbgRaiseAssertionFailure(); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("DbgRaiseAssertionFailure()"));
    CHECK_THAT(child.err, Catch::Contains("exec_system_test.cpp"));
    child = run_in_child([] {
        volatile int zero = 0;
        NT_FRE_ASSERT(zero == 1);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("zero == 1"));
    CHECK(STATUS_ASSERTION_FAILURE == static_cast<NTSTATUS>(0xC0000420L));
}

namespace {
[[gnu::noinline]] USHORT capture_from_here(PVOID *frames, ULONG count, PULONG hash) {
    const USHORT captured = RtlCaptureStackBackTrace(0, count, frames, hash);
    asm volatile("" ::: "memory");  // no tail call: the return address stays in this function
    return captured;
}
}  // namespace

TEST_CASE("stack trace: frames are return addresses, skipped and counted, with their sum") {
    PVOID frames[16] = {};
    ULONG hash = 0;
    const USHORT captured = capture_from_here(frames, 16, &hash);
    REQUIRE(captured >= 2);
    ULONG sum = 0;
    for (USHORT i = 0; i < captured; ++i) {
        CHECK(frames[i] != nullptr);
        sum += static_cast<ULONG>(reinterpret_cast<ULONG_PTR>(frames[i]));
    }
    CHECK(hash == sum);
    // The first frame lies inside capture_from_here (its caller's return address is frame 1).
    const auto first = reinterpret_cast<ULONG_PTR>(frames[0]);
    const auto function = reinterpret_cast<ULONG_PTR>(&capture_from_here);
    CHECK(first > function);
    CHECK(first < function + 4096);  // a small function, even with sanitizer instrumentation

    PVOID skipped[16] = {};
    const USHORT fewer = RtlCaptureStackBackTrace(1, 2, skipped, nullptr);
    CHECK(fewer == 2);
    CHECK(RtlCaptureStackBackTrace(0, 0, skipped, nullptr) == 0);
    CHECK(RtlCaptureStackBackTrace(1000, 4, skipped, nullptr) == 0);
}

// ---- Pool extras.

TEST_CASE("pool extras: quota allocations are zeroed or not, and raise unless told otherwise") {
    auto *zeroed = static_cast<unsigned char *>(ExAllocatePoolQuotaZero(PagedPool, 64, kTag));
    REQUIRE(zeroed != nullptr);
    bool all_zero = true;
    for (int i = 0; i < 64; ++i)
        all_zero = all_zero && zeroed[i] == 0;
    CHECK(all_zero);
    ExFreePoolWithTag(zeroed, kTag);
    void *plain = ExAllocatePoolUninitialized(NonPagedPoolNx, 32, kTag);
    REQUIRE(plain != nullptr);
    ExFreePoolWithTag(plain, kTag);
    void *quota = ExAllocatePoolWithQuotaTag(NonPagedPoolNx, 32, kTag);
    REQUIRE(quota != nullptr);
    ExFreePool(quota);

    constexpr SIZE_T kTooBig = SIZE_T{1} << 50;
    CHECK(ExAllocatePoolQuotaZero(
              static_cast<POOL_TYPE>(NonPagedPoolNx | POOL_QUOTA_FAIL_INSTEAD_OF_RAISE), kTooBig,
              kTag) == nullptr);
    auto child = run_in_child([] { ExAllocatePoolQuotaZero(NonPagedPoolNx, kTooBig, kTag); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("KMODE_EXCEPTION_NOT_HANDLED"));
}

// ---- Rundown with a count and cache-aware rundown.

TEST_CASE("rundown ex: counts are taken and dropped together, the waiter waits for all") {
    EX_RUNDOWN_REF ref;
    ExInitializeRundownProtection(&ref);
    REQUIRE(ExAcquireRundownProtectionEx(&ref, 3) == TRUE);
    CHECK(ref.Count == 3 * EX_RUNDOWN_COUNT_INC);
    ExReleaseRundownProtectionEx(&ref, 2);
    CHECK(ref.Count == EX_RUNDOWN_COUNT_INC);
    std::atomic<bool> done{false};
    std::thread waiter([&] {
        ExWaitForRundownProtectionRelease(&ref);
        done = true;
    });
    REQUIRE(eventually(
        [&] { return (__atomic_load_n(&ref.Count, __ATOMIC_ACQUIRE) & EX_RUNDOWN_ACTIVE) != 0; }));
    CHECK(ExAcquireRundownProtectionEx(&ref, 1) == FALSE);
    CHECK_FALSE(done.load());
    ExReleaseRundownProtectionEx(&ref, 1);
    waiter.join();
    CHECK(done.load());
    CHECK(ref.Count == EX_RUNDOWN_ACTIVE);

    auto child = run_in_child([] {
        EX_RUNDOWN_REF fresh;
        ExInitializeRundownProtection(&fresh);
        (void)ExAcquireRundownProtectionEx(&fresh, 1);
        ExReleaseRundownProtectionEx(&fresh, 2);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("no users to release"));
}

TEST_CASE("rundown cache-aware: allocated or caller-sized, it behaves as EX_RUNDOWN_REF") {
    const size_t live = softndk::wdk::pool_live_allocations();
    PEX_RUNDOWN_REF_CACHE_AWARE ref = ExAllocateCacheAwareRundownProtection(NonPagedPoolNx, kTag);
    REQUIRE(ref != nullptr);
    REQUIRE(ExAcquireRundownProtectionCacheAware(ref) == TRUE);
    REQUIRE(ExAcquireRundownProtectionCacheAwareEx(ref, 2) == TRUE);
    std::atomic<bool> done{false};
    std::thread waiter([&] {
        ExWaitForRundownProtectionReleaseCacheAware(ref);
        done = true;
    });
    REQUIRE(eventually([&] {
        return (__atomic_load_n(&ref->RunRef.Count, __ATOMIC_ACQUIRE) & EX_RUNDOWN_ACTIVE) != 0;
    }));
    CHECK(ExAcquireRundownProtectionCacheAware(ref) == FALSE);
    ExReleaseRundownProtectionCacheAwareEx(ref, 2);
    CHECK_FALSE(done.load());
    ExReleaseRundownProtectionCacheAware(ref);
    waiter.join();
    CHECK(done.load());
    ExReInitializeRundownProtectionCacheAware(ref);
    CHECK(ExAcquireRundownProtectionCacheAware(ref) == TRUE);
    ExReleaseRundownProtectionCacheAware(ref);
    ExRundownCompletedCacheAware(ref);
    CHECK(ExAcquireRundownProtectionCacheAware(ref) == FALSE);
    ExFreeCacheAwareRundownProtection(ref);
    CHECK(softndk::wdk::pool_live_allocations() == live);

    const SIZE_T size = ExSizeOfRundownProtectionCacheAware();
    REQUIRE(size >= sizeof(EX_RUNDOWN_REF));
    auto *own =
        static_cast<PEX_RUNDOWN_REF_CACHE_AWARE>(ExAllocatePoolWithTag(NonPagedPoolNx, size, kTag));
    ExInitializeRundownProtectionCacheAware(own, size);
    CHECK(ExAcquireRundownProtectionCacheAware(own) == TRUE);
    ExReleaseRundownProtectionCacheAware(own);
    ExWaitForRundownProtectionReleaseCacheAware(own);  // no users: returns at once
    CHECK(ExAcquireRundownProtectionCacheAware(own) == FALSE);
    auto child = run_in_child([&] { ExInitializeRundownProtectionCacheAware(own, 1); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("RunRefSize 1"));
    ExFreePoolWithTag(own, kTag);
}

// ---- Pages for MDLs.

TEST_CASE("mdl pages: allocated pages are zeroed, described, mapped and freed") {
    PHYSICAL_ADDRESS low{}, high{}, skip{};
    high.QuadPart = -1;
    const size_t live = softndk::wdk::pool_live_allocations();
    PMDL mdl = MmAllocatePagesForMdl(low, high, skip, 3 * PAGE_SIZE + 100);
    REQUIRE(mdl != nullptr);
    CHECK(MmGetMdlByteCount(mdl) == 4 * PAGE_SIZE);
    CHECK(MmGetMdlByteOffset(mdl) == 0);
    CHECK((mdl->MdlFlags & MDL_PAGES_LOCKED) != 0);
    CHECK((mdl->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) == 0);
    const PPFN_NUMBER pfns = MmGetMdlPfnArray(mdl);
    for (ULONG i = 0; i < 4; ++i) {
        CHECK(pfns[i] == (reinterpret_cast<ULONG_PTR>(mdl->StartVa) >> PAGE_SHIFT) + i);
    }
    auto *va = static_cast<unsigned char *>(MmMapLockedPagesSpecifyCache(
        mdl, KernelMode, MmCached, nullptr, FALSE, NormalPagePriority));
    REQUIRE(va != nullptr);
    CHECK(va == mdl->StartVa);
    CHECK(mdl->MappedSystemVa == va);
    CHECK((mdl->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) != 0);
    bool zero = true;
    for (ULONG i = 0; i < 4 * PAGE_SIZE; ++i)
        zero = zero && va[i] == 0;
    CHECK(zero);
    va[4 * PAGE_SIZE - 1] = 0x5A;  // the whole range is usable
    CHECK(MmGetSystemAddressForMdlSafe(mdl, NormalPagePriority) == va);
    MmUnmapLockedPages(va, mdl);
    CHECK((mdl->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) == 0);
    CHECK(mdl->MappedSystemVa == nullptr);
    MmPrepareMdlForReuse(mdl);  // not partial, not mapped: nothing to do
    MmFreePagesFromMdl(mdl);
    ExFreePool(mdl);
    CHECK(softndk::wdk::pool_live_allocations() == live);

    CHECK(MmAllocatePagesForMdl(low, high, skip, 0) == nullptr);
    CHECK(MmAllocatePagesForMdlEx(low, high, skip, PAGE_SIZE, MmCached, 0x80000000u) == nullptr);
    PMDL ex = MmAllocatePagesForMdlEx(low, high, skip, PAGE_SIZE, MmNonCached,
                                      MM_DONT_ZERO_ALLOCATION | MM_ALLOCATE_FULLY_REQUIRED);
    REQUIRE(ex != nullptr);
    CHECK(MmGetMdlByteCount(ex) == PAGE_SIZE);
    MmFreePagesFromMdl(ex);
    ExFreePool(ex);
}

TEST_CASE("mdl pages: a mapped partial MDL is unmapped by MmPrepareMdlForReuse") {
    alignas(PAGE_SIZE) static unsigned char buffer[2 * PAGE_SIZE];
    PMDL mdl = IoAllocateMdl(buffer + 16, 100, FALSE, FALSE, nullptr);
    REQUIRE(mdl != nullptr);
    MmBuildMdlForNonPagedPool(mdl);
    mdl->MdlFlags =
        static_cast<CSHORT>((mdl->MdlFlags & ~MDL_SOURCE_IS_NONPAGED_POOL) | MDL_PARTIAL);
    mdl->MappedSystemVa = nullptr;
    PVOID va =
        MmMapLockedPagesSpecifyCache(mdl, KernelMode, MmCached, nullptr, FALSE, NormalPagePriority);
    CHECK(va == buffer + 16);
    CHECK((mdl->MdlFlags & MDL_PARTIAL_HAS_BEEN_MAPPED) != 0);
    MmPrepareMdlForReuse(mdl);
    CHECK((mdl->MdlFlags & (MDL_PARTIAL_HAS_BEEN_MAPPED | MDL_MAPPED_TO_SYSTEM_VA)) == 0);
    IoFreeMdl(mdl);
}

TEST_CASE("mdl pages: misuse - requested address, double map, wrong unmap, foreign free") {
    PHYSICAL_ADDRESS low{}, high{}, skip{};
    high.QuadPart = -1;
    PMDL mdl = MmAllocatePagesForMdl(low, high, skip, PAGE_SIZE);
    REQUIRE(mdl != nullptr);
    int somewhere = 0;
    CHECK(MmMapLockedPagesSpecifyCache(mdl, KernelMode, MmCached, &somewhere, FALSE,
                                       NormalPagePriority) == nullptr);
    auto child = run_in_child([&] {
        MmMapLockedPagesSpecifyCache(mdl, KernelMode, MmCached, nullptr, FALSE, 0);
        MmMapLockedPagesSpecifyCache(mdl, UserMode, MmCached, nullptr, FALSE, 0);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("already mapped"));
    child = run_in_child([&] { MmUnmapLockedPages(&somewhere, mdl); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("is not the mapping"));
    child = run_in_child([&] {
        MmMapLockedPagesSpecifyCache(mdl, KernelMode, MmCached, nullptr, FALSE, 0);
        MmFreePagesFromMdl(mdl);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("still mapped"));
    child = run_in_child([] {
        char local[64];
        PMDL other = IoAllocateMdl(local, sizeof(local), FALSE, FALSE, nullptr);
        MmFreePagesFromMdl(other);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("does not describe pages"));
    MmFreePagesFromMdl(mdl);
    ExFreePool(mdl);
}

// ---- Caller-allocated work items.

namespace {
struct ItemRun {
    KEVENT done;
    std::atomic<PVOID> object{nullptr};
    std::atomic<LONG> device_references{-1};
    ItemRun() { KeInitializeEvent(&done, NotificationEvent, FALSE); }
};

VOID run_item(PDEVICE_OBJECT DeviceObject, PVOID Context) {
    auto *run = static_cast<ItemRun *>(Context);
    run->object = DeviceObject;
    if (DeviceObject != nullptr && DeviceObject->Type == IO_TYPE_DEVICE) {
        run->device_references = DeviceObject->ReferenceCount;
    }
    KeSetEvent(&run->done, IO_NO_INCREMENT, FALSE);
}
}  // namespace

TEST_CASE("work item init: a caller-allocated item runs like an allocated one") {
    CHECK(IoSizeofWorkItem() >= sizeof(WORK_QUEUE_ITEM));
    DEVICE_OBJECT device{};
    device.Type = IO_TYPE_DEVICE;
    auto *item =
        static_cast<PIO_WORKITEM>(ExAllocatePoolWithTag(NonPagedPoolNx, IoSizeofWorkItem(), kTag));
    REQUIRE(item != nullptr);
    IoInitializeWorkItem(&device, item);
    ItemRun run;
    IoQueueWorkItem(item, run_item, DelayedWorkQueue, &run);
    REQUIRE(wait_ms(&run.done) == STATUS_SUCCESS);
    CHECK(run.object.load() == &device);
    CHECK(run.device_references.load() == 1);  // referenced while it ran
    REQUIRE(eventually([&] { return std::atomic_ref<LONG>(device.ReferenceCount).load() == 0; }));
    IoUninitializeWorkItem(item);

    // Against a driver object: passed to the routine, not referenced.
    DRIVER_OBJECT driver{};
    driver.Type = IO_TYPE_DRIVER;
    IoInitializeWorkItem(&driver, item);
    ItemRun second;
    IoQueueWorkItem(item, run_item, DelayedWorkQueue, &second);
    REQUIRE(wait_ms(&second.done) == STATUS_SUCCESS);
    CHECK(second.object.load() == static_cast<PVOID>(&driver));
    REQUIRE(eventually([&] { return softndk::wdk::work_items_idle(); }));
    IoUninitializeWorkItem(item);

    auto child = run_in_child([&] {
        IoInitializeWorkItem(&driver, item);
        IoFreeWorkItem(item);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IoUninitializeWorkItem"));
    child = run_in_child([] {
        PIO_WORKITEM allocated = IoAllocateWorkItem(nullptr);
        IoUninitializeWorkItem(allocated);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IoFreeWorkItem"));
    ExFreePoolWithTag(item, kTag);
}

// ---- Status codes.

TEST_CASE("status codes: the values this part added are Windows'") {
    CHECK(STATUS_INVALID_CONNECTION == static_cast<NTSTATUS>(0xC0000140L));
    CHECK(STATUS_INVALID_OWNER == static_cast<NTSTATUS>(0xC000005AL));
    CHECK(STATUS_ALREADY_REGISTERED == static_cast<NTSTATUS>(0xC0000718L));
    CHECK(STATUS_SEMAPHORE_LIMIT_EXCEEDED == static_cast<NTSTATUS>(0xC0000047L));
    CHECK(STATUS_MUTANT_LIMIT_EXCEEDED == static_cast<NTSTATUS>(0xC0000191L));
    CHECK_FALSE(NT_SUCCESS(STATUS_INVALID_CONNECTION));
    CHECK(NT_WARNING(STATUS_DATATYPE_MISALIGNMENT));
}
