/*
 * exec_style_c.c - the executive extras of softndk_wdm_exec.h used from C11, as a driver uses
 * them: a free list on an SLIST_HEADER, a table guarded by an ERESOURCE inside a critical
 * region, a KMUTEX and a KSEMAPHORE waited on with KeWaitForSingleObject, a push lock, a
 * shared spin lock, a one-shot Ex timer whose callback sets an event, pages allocated for an
 * MDL and mapped, and the 8-bit and 128-bit interlocked operations (the inline ones must
 * compile as C). Each routine is declared through the WDK's role typedef, as drivers do.
 *
 * Exit status 0 when every check holds; otherwise the first failed check is on stderr.
 */
#include <ntddk.h>

#include <stdio.h>

#define SAMPLE_TAG 0x63786553 /* "Sexc" */

#define EXPECT(condition)                                                                 \
    do {                                                                                  \
        if (!(condition)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

typedef struct DECLSPEC_ALIGN(16) _FREE_BLOCK {
    SLIST_ENTRY Link;
    ULONG Index;
} FREE_BLOCK, *PFREE_BLOCK;

static EXT_CALLBACK SampleTimerCallback;

static VOID SampleTimerCallback(PEX_TIMER Timer, PVOID Context) {
    UNREFERENCED_PARAMETER(Timer);
    KeSetEvent((PKEVENT)Context, IO_NO_INCREMENT, FALSE);
}

static int CheckSList(void) {
    SLIST_HEADER freeList;
    PFREE_BLOCK blocks;
    ULONG i;
    InitializeSListHead(&freeList);
    blocks = (PFREE_BLOCK)ExAllocatePool2(POOL_FLAG_NON_PAGED, 4 * sizeof(FREE_BLOCK), SAMPLE_TAG);
    EXPECT(blocks != NULL);
    for (i = 0; i < 4; ++i) {
        blocks[i].Index = i;
        InterlockedPushEntrySList(&freeList, &blocks[i].Link);
    }
    EXPECT(ExQueryDepthSList(&freeList) == 4);
    EXPECT(CONTAINING_RECORD(InterlockedPopEntrySList(&freeList), FREE_BLOCK, Link)->Index == 3);
    EXPECT(InterlockedFlushSList(&freeList) == &blocks[2].Link);
    EXPECT(QueryDepthSList(&freeList) == 0);
    ExFreePoolWithTag(blocks, SAMPLE_TAG);
    return 0;
}

static int CheckLocks(void) {
    ERESOURCE resource;
    KMUTEX mutex;
    KSEMAPHORE semaphore;
    EX_PUSH_LOCK pushLock;
    EX_SPIN_LOCK spinLock = 0;
    KIRQL oldIrql;
    LARGE_INTEGER zero;
    zero.QuadPart = 0;

    EXPECT(NT_SUCCESS(ExInitializeResourceLite(&resource)));
    KeEnterCriticalRegion();
    EXPECT(ExAcquireResourceExclusiveLite(&resource, TRUE));
    EXPECT(ExIsResourceAcquiredSharedLite(&resource) == 1);
    ExReleaseResourceLite(&resource);
    KeLeaveCriticalRegion();
    EXPECT(NT_SUCCESS(ExDeleteResourceLite(&resource)));

    KeInitializeMutex(&mutex, 0);
    EXPECT(KeWaitForMutexObject(&mutex, Executive, KernelMode, FALSE, NULL) == STATUS_SUCCESS);
    EXPECT(KeReleaseMutex(&mutex, FALSE) == 0);

    KeInitializeSemaphore(&semaphore, 0, 1);
    EXPECT(KeWaitForSingleObject(&semaphore, Executive, KernelMode, FALSE, &zero) ==
           STATUS_TIMEOUT);
    EXPECT(KeReleaseSemaphore(&semaphore, IO_NO_INCREMENT, 1, FALSE) == 0);
    EXPECT(KeWaitForSingleObject(&semaphore, Executive, KernelMode, FALSE, &zero) ==
           STATUS_SUCCESS);

    ExInitializePushLock(&pushLock);
    KeEnterCriticalRegion();
    ExAcquirePushLockShared(&pushLock);
    ExReleasePushLockShared(&pushLock);
    ExAcquirePushLockExclusive(&pushLock);
    ExReleasePushLockExclusive(&pushLock);
    KeLeaveCriticalRegion();
    EXPECT(pushLock == 0);

    oldIrql = ExAcquireSpinLockShared(&spinLock);
    EXPECT(ExTryConvertSharedSpinLockExclusive(&spinLock));
    ExReleaseSpinLockExclusive(&spinLock, oldIrql);
    EXPECT(spinLock == 0);
    return 0;
}

static int CheckTimerAndPages(void) {
    KEVENT fired;
    PEX_TIMER timer;
    EXT_SET_PARAMETERS setParameters;
    PHYSICAL_ADDRESS low, high, skip;
    PMDL mdl;
    PUCHAR va;
    LARGE_INTEGER patience;
    patience.QuadPart = -10 * 1000 * 10000LL; /* 10 s */

    KeInitializeEvent(&fired, NotificationEvent, FALSE);
    timer = ExAllocateTimer(SampleTimerCallback, &fired, EX_TIMER_HIGH_RESOLUTION);
    EXPECT(timer != NULL);
    ExInitializeSetTimerParameters(&setParameters);
    EXPECT(!ExSetTimer(timer, -10000 /* 1 ms */, 0, &setParameters));
    EXPECT(KeWaitForSingleObject(&fired, Executive, KernelMode, FALSE, &patience) ==
           STATUS_SUCCESS);
    EXPECT(!ExDeleteTimer(timer, TRUE, TRUE, NULL));

    low.QuadPart = 0;
    high.QuadPart = -1;
    skip.QuadPart = 0;
    mdl = MmAllocatePagesForMdlEx(low, high, skip, 2 * PAGE_SIZE, MmCached, 0);
    EXPECT(mdl != NULL);
    va = (PUCHAR)MmMapLockedPagesSpecifyCache(mdl, KernelMode, MmCached, NULL, FALSE,
                                              NormalPagePriority | MdlMappingNoExecute);
    EXPECT(va != NULL && va[0] == 0 && va[2 * PAGE_SIZE - 1] == 0);
    MmUnmapLockedPages(va, mdl);
    MmFreePagesFromMdl(mdl);
    ExFreePool(mdl);
    return 0;
}

static int CheckInterlocked(void) {
    DECLSPEC_ALIGN(16) LONG64 wide[2] = {1, 2};
    LONG64 comparand[2] = {1, 2};
    CHAR flag = 0;
    EXPECT(InterlockedExchange8(&flag, 1) == 0);
    EXPECT(_InterlockedCompareExchange8(&flag, 2, 1) == 1);
    EXPECT(InterlockedCompareExchange128(wide, 4, 3, comparand));
    EXPECT(wide[0] == 3 && wide[1] == 4);
    KeMemoryBarrier();
    return 0;
}

int main(void) {
    if (CheckSList() != 0 || CheckLocks() != 0 || CheckTimerAndPages() != 0 ||
        CheckInterlocked() != 0) {
        return 1;
    }
    return 0;
}
