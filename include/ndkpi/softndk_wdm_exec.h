/*
 * softndk_wdm_exec.h - part of SoftNDK's wdm.h: executive and kernel synchronisation beyond wdm.h's
 * core (guarded mutexes, KMUTEX, semaphores, executive resources, push locks, shared spin locks,
 * critical regions, SLists, cache-aware rundown), processors and NUMA nodes, thread priority, Ex
 * timers, memory barriers and the _Interlocked* intrinsic names, Mm page/MDL services.
 *
 * Included at the end of <wdm.h>. Including it alone includes <wdm.h> first.
 *
 * Implemented by the WDK runtime (runtime/exec_sync.cpp, exec_slist.cpp, exec_timer.cpp,
 * exec_system.cpp, exec_mm.cpp, plus additions to sync.cpp, dispatcher.cpp and worker.cpp).
 * Where Windows raises an exception that a driver does not handle (a KMUTEX released by a
 * thread that does not own it, a semaphore released beyond its limit, ProbeForRead on a
 * misaligned address), the unhandled exception is a bug check on Windows
 * (KMODE_EXCEPTION_NOT_HANDLED, parameter 1 = the status raised), and the runtime reports
 * exactly that and aborts: there is no structured exception handling in C on Linux.
 */
#ifndef SOFTNDK_SOFTNDK_WDM_EXEC_H
#define SOFTNDK_SOFTNDK_WDM_EXEC_H

#include <wdm.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bug checks raised by the calls below (codes are Windows'). */
#define RESOURCE_NOT_OWNED 0x000000E3

/* ---- Threads as the kernel sees them. PKTHREAD (= PRKTHREAD) identifies the calling
 * thread: KeGetCurrentThread returns a runtime-owned per-thread object that lives as long as
 * the thread. It is not a dispatcher object (wait on the PETHREAD of a system thread, see
 * PsCreateSystemThread). It carries the thread's critical/guarded region counts and its
 * recorded priorities. */
typedef struct _KTHREAD *PKTHREAD, *PRKTHREAD;
_IRQL_requires_max_(HIGH_LEVEL) PKTHREAD NTAPI KeGetCurrentThread(VOID);

/* ---- Critical and guarded regions. There are no APCs in SoftNDK, so these only count, per
 * thread, as Windows' KernelApcDisable / SpecialApcDisable do - but the count is what the
 * executive resource and push lock calls check, as Driver Verifier does.
 *   KeEnterCriticalRegion / KeLeaveCriticalRegion   IRQL <= APC_LEVEL; nest. Leaving a
 *       region the thread is not in is reported and aborts (Windows' count would underflow).
 *   KeEnterGuardedRegion / KeLeaveGuardedRegion     the same, for guarded regions.
 *   KeAreApcsDisabled      TRUE inside a critical or guarded region (Windows:
 *                          CombinedApcDisable != 0).
 *   KeAreAllApcsDisabled   TRUE inside a guarded region or at IRQL >= APC_LEVEL. */
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI KeEnterCriticalRegion(VOID);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI KeLeaveCriticalRegion(VOID);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI KeEnterGuardedRegion(VOID);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI KeLeaveGuardedRegion(VOID);
_IRQL_requires_max_(HIGH_LEVEL) BOOLEAN NTAPI KeAreApcsDisabled(VOID);
_IRQL_requires_max_(HIGH_LEVEL) BOOLEAN NTAPI KeAreAllApcsDisabled(VOID);

/* ---- Guarded mutexes. Since Windows 8 a KGUARDED_MUTEX is a FAST_MUTEX (same type), and so
 * it is here; the difference is the calls. KeAcquireGuardedMutex (IRQL <= APC_LEVEL) enters a
 * guarded region instead of raising the IRQL, then acquires as ExAcquireFastMutex does
 * (sleeping while another thread owns it; not recursive: re-acquiring is reported and aborts).
 * KeReleaseGuardedMutex releases (only by the owner, else reported and aborts) and leaves the
 * guarded region. KeTryToAcquireGuardedMutex returns FALSE at once when it is owned.
 * The Unsafe variants neither enter nor leave a guarded region: the caller must already be in
 * one or at APC_LEVEL (else reported and aborts, as Verifier does). FAST_MUTEX.Owner holds the
 * owner's PKTHREAD here; OldIrql is unused. */
typedef FAST_MUTEX KGUARDED_MUTEX, *PKGUARDED_MUTEX;
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI KeInitializeGuardedMutex(_Out_ PKGUARDED_MUTEX Mutex);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI KeAcquireGuardedMutex(_Inout_ PKGUARDED_MUTEX Mutex);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI KeReleaseGuardedMutex(_Inout_ PKGUARDED_MUTEX Mutex);
_Must_inspect_result_ _IRQL_requires_max_(APC_LEVEL) BOOLEAN NTAPI
    KeTryToAcquireGuardedMutex(_Inout_ PKGUARDED_MUTEX Mutex);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI
    KeAcquireGuardedMutexUnsafe(_Inout_ PKGUARDED_MUTEX FastMutex);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI
    KeReleaseGuardedMutexUnsafe(_Inout_ PKGUARDED_MUTEX FastMutex);

/* ---- Kernel mutexes (KMUTEX) and semaphores: dispatcher objects, waited on with
 * KeWaitForSingleObject / KeWaitForMultipleObjects (KeWaitForMutexObject is the same call)
 * like events, through the same dispatcher (DISPATCHER_HEADER.Type 2 = mutant, 5 = semaphore).
 *
 * KMUTEX (x64 layout, 56 bytes): SignalState is 1 when free and 1 - n while its owner holds
 * it n times. A wait is satisfied when the mutex is free OR already owned by the waiting thread
 * (recursion); satisfying it makes the waiter the owner (OwnerThread = its PKTHREAD) and, as
 * on Windows, enters a critical region (KeAreApcsDisabled is TRUE while a KMUTEX is held).
 *   KeInitializeMutex   free, not abandoned. Level is ignored (as on Windows).
 *   KeReleaseMutex      IRQL <= DISPATCH_LEVEL. Returns the previous SignalState. The last
 *                       release frees the mutex, leaves the critical region and gives the
 *                       mutex to one waiter (FIFO). Released by a thread that does not own it:
 *                       STATUS_MUTANT_NOT_OWNED is raised, i.e. bug check
 *                       KMODE_EXCEPTION_NOT_HANDLED (0x1E, parameter 1 = 0xC0000046).
 *                       Wait (a wait follows at once) is accepted and ignored.
 *   KeReadStateMutex    SignalState.
 * A thread that ends while owning a KMUTEX does not abandon it here (Windows would mark it
 * abandoned and return STATUS_ABANDONED to the next waiter): it stays owned.
 *
 * KSEMAPHORE (x64 layout, 32 bytes): SignalState is the count, Limit its maximum. A wait is
 * satisfied while the count is > 0 and takes one.
 *   KeInitializeSemaphore  Count >= 0 and Limit > 0 and Count <= Limit, else reported and
 *                          aborts (Windows asserts).
 *   KeReleaseSemaphore     IRQL <= DISPATCH_LEVEL. Adds Adjustment (> 0) and releases up to
 *                          that many waiters; returns the previous count. A count that would
 *                          exceed Limit (or overflow) raises STATUS_SEMAPHORE_LIMIT_EXCEEDED:
 *                          bug check 0x1E with parameter 1 = 0xC0000047; the count is
 *                          unchanged. Increment and Wait are ignored.
 *   KeReadStateSemaphore   the count. */
typedef struct _KMUTANT {
    DISPATCHER_HEADER Header;
    LIST_ENTRY MutantListEntry; /* runtime-private (an empty list) */
    PKTHREAD OwnerThread;
    BOOLEAN Abandoned;
    UCHAR ApcDisable;
} KMUTANT, *PKMUTANT, *PRKMUTANT, KMUTEX, *PKMUTEX, *PRKMUTEX;

typedef struct _KSEMAPHORE {
    DISPATCHER_HEADER Header;
    LONG Limit;
} KSEMAPHORE, *PKSEMAPHORE, *PRKSEMAPHORE;

_IRQL_requires_max_(PASSIVE_LEVEL) VOID NTAPI
    KeInitializeMutex(_Out_ PRKMUTEX Mutex, _In_ ULONG Level);
_IRQL_requires_max_(DISPATCH_LEVEL) LONG NTAPI
    KeReleaseMutex(_Inout_ PRKMUTEX Mutex, _In_ BOOLEAN Wait);
LONG NTAPI KeReadStateMutex(_In_ PRKMUTEX Mutex);
#define KeWaitForMutexObject KeWaitForSingleObject

_IRQL_requires_max_(PASSIVE_LEVEL) VOID NTAPI
    KeInitializeSemaphore(_Out_ PRKSEMAPHORE Semaphore, _In_ LONG Count, _In_ LONG Limit);
_IRQL_requires_max_(DISPATCH_LEVEL) LONG NTAPI
    KeReleaseSemaphore(_Inout_ PRKSEMAPHORE Semaphore, _In_ KPRIORITY Increment,
                       _In_ LONG Adjustment, _In_ BOOLEAN Wait);
LONG NTAPI KeReadStateSemaphore(_In_ PRKSEMAPHORE Semaphore);

/* ---- Executive resources (ERESOURCE): reader/writer locks with recursion, per-thread
 * ownership and Windows' grant rules. x64 layout (104 bytes); the members are runtime-private
 * (ExInitializeResourceLite allocates the runtime's state, which Reserved2 points to, and
 * ExDeleteResourceLite frees it: an ERESOURCE must be initialised and deleted in pairs).
 * Every acquire needs IRQL <= APC_LEVEL (else bug check IRQL_NOT_LESS_OR_EQUAL) and, as
 * Driver Verifier insists, kernel APCs disabled: a critical region (KeEnterCriticalRegion)
 * or APC_LEVEL; otherwise the call is reported and aborts. Wait = FALSE returns FALSE at once
 * when the resource cannot be granted; Wait = TRUE sleeps until it can. Grant rules:
 *   exclusive  the resource is unowned, or the caller owns it exclusively (recursion).
 *              Asking for exclusive access while holding it only shared deadlocks on
 *              Windows; here it is reported and aborts.
 *   shared     (ExAcquireResourceSharedLite) the caller owns it (exclusively: recursion
 *              counted as exclusive; or shared); or nobody owns it exclusively and no thread
 *              waits for exclusive access.
 *   ExAcquireSharedStarveExclusive   as shared, but granted beside other sharers even when
 *              exclusive waiters exist.
 *   ExAcquireSharedWaitForExclusive  as shared, but while exclusive waiters exist a new sharer
 *              waits even if the resource is shared-owned; a thread that already owns it is
 *              granted recursively (it would deadlock otherwise).
 * ExReleaseResourceLite (IRQL <= DISPATCH_LEVEL) releases one acquisition by the calling
 * thread; ExReleaseResourceForThreadLite one by ResourceThreadId (an ERESOURCE_THREAD from
 * ExGetCurrentResourceThread). Releasing a resource the thread does not own bug-checks
 * RESOURCE_NOT_OWNED (0xE3). When the last owner leaves, waiting exclusive acquirers are
 * preferred to waiting sharers (FIFO among exclusive waiters).
 * ExIsResourceAcquiredExclusiveLite: TRUE if the caller owns it exclusively.
 * ExIsResourceAcquiredSharedLite: how many times the caller holds it (shared or exclusive),
 * 0 if not at all. ExConvertExclusiveToSharedLite: the caller (exclusive owner) keeps its
 * recursion count as shared ownership, and the sharers waiting at that moment are let in, even
 * if a thread waits for exclusive access.
 * ExGetExclusiveWaiterCount / ExGetSharedWaiterCount: threads waiting now.
 * ExDeleteResourceLite (IRQL <= DISPATCH_LEVEL): STATUS_SUCCESS; deleting a resource that is
 * owned or waited for is reported and aborts. ExReinitializeResourceLite: back to unowned
 * (same rule).
 * ExEnterCriticalRegionAndAcquireResource{Exclusive,Shared} and
 * ExEnterCriticalRegionAndAcquireSharedWaitForExclusive: KeEnterCriticalRegion, then acquire
 * with Wait = TRUE; they return the thread's Win32Thread pointer on Windows, which is NULL here.
 * ExReleaseResourceAndLeaveCriticalRegion: release, then KeLeaveCriticalRegion. */
typedef ULONG_PTR ERESOURCE_THREAD, *PERESOURCE_THREAD;
typedef struct _OWNER_ENTRY {
    ERESOURCE_THREAD OwnerThread;
    union {
        ULONG TableSize;
        ULONG OwnerCount;
    } DUMMYUNIONNAME;
} OWNER_ENTRY, *POWNER_ENTRY;

typedef struct _ERESOURCE {
    LIST_ENTRY SystemResourcesList;
    POWNER_ENTRY OwnerTable;
    SHORT ActiveCount; /* threads owning it (a snapshot, for debuggers) */
    USHORT Flag;       /* ResourceOwnedExclusive (0x80) while owned exclusively */
    struct _KSEMAPHORE *SharedWaiters;
    struct _KEVENT *ExclusiveWaiters;
    OWNER_ENTRY OwnerEntry;
    ULONG ActiveEntries;
    ULONG ContentionCount; /* acquires that had to wait */
    ULONG NumberOfSharedWaiters;
    ULONG NumberOfExclusiveWaiters;
    PVOID Reserved2; /* the runtime's state */
    union {
        PVOID Address;
        ULONG_PTR CreatorBackTraceIndex;
    } DUMMYUNIONNAME2;
    KSPIN_LOCK SpinLock;
} ERESOURCE, *PERESOURCE;
#define ResourceOwnedExclusive 0x0080

#define ExGetCurrentResourceThread() ((ERESOURCE_THREAD)KeGetCurrentThread())

_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS NTAPI
    ExInitializeResourceLite(_Out_ PERESOURCE Resource);
_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS NTAPI
    ExReinitializeResourceLite(_Inout_ PERESOURCE Resource);
_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS NTAPI
    ExDeleteResourceLite(_Inout_ PERESOURCE Resource);
_IRQL_requires_max_(APC_LEVEL) BOOLEAN NTAPI
    ExAcquireResourceExclusiveLite(_Inout_ PERESOURCE Resource, _In_ BOOLEAN Wait);
_IRQL_requires_max_(APC_LEVEL) BOOLEAN NTAPI
    ExAcquireResourceSharedLite(_Inout_ PERESOURCE Resource, _In_ BOOLEAN Wait);
_IRQL_requires_max_(APC_LEVEL) BOOLEAN NTAPI
    ExAcquireSharedStarveExclusive(_Inout_ PERESOURCE Resource, _In_ BOOLEAN Wait);
_IRQL_requires_max_(APC_LEVEL) BOOLEAN NTAPI
    ExAcquireSharedWaitForExclusive(_Inout_ PERESOURCE Resource, _In_ BOOLEAN Wait);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI ExReleaseResourceLite(_Inout_ PERESOURCE Resource);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExReleaseResourceForThreadLite(_Inout_ PERESOURCE Resource,
                                   _In_ ERESOURCE_THREAD ResourceThreadId);
_IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    ExIsResourceAcquiredExclusiveLite(_In_ PERESOURCE Resource);
_IRQL_requires_max_(DISPATCH_LEVEL) ULONG NTAPI
    ExIsResourceAcquiredSharedLite(_In_ PERESOURCE Resource);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExConvertExclusiveToSharedLite(_Inout_ PERESOURCE Resource);
_IRQL_requires_max_(DISPATCH_LEVEL) ULONG NTAPI ExGetExclusiveWaiterCount(_In_ PERESOURCE Resource);
_IRQL_requires_max_(DISPATCH_LEVEL) ULONG NTAPI ExGetSharedWaiterCount(_In_ PERESOURCE Resource);
_IRQL_requires_max_(APC_LEVEL) PVOID NTAPI
    ExEnterCriticalRegionAndAcquireResourceExclusive(_Inout_ PERESOURCE Resource);
_IRQL_requires_max_(APC_LEVEL) PVOID NTAPI
    ExEnterCriticalRegionAndAcquireResourceShared(_Inout_ PERESOURCE Resource);
_IRQL_requires_max_(APC_LEVEL) PVOID NTAPI
    ExEnterCriticalRegionAndAcquireSharedWaitForExclusive(_Inout_ PERESOURCE Resource);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExReleaseResourceAndLeaveCriticalRegion(_Inout_ PERESOURCE Resource);

/* ---- Push locks: pointer-sized reader/writer locks, not recursive, not fair. 0 is free
 * (ExInitializePushLock stores 0), bit 0 means owned exclusively, bit 1 that a thread sleeps
 * waiting, and the rest counts shared owners (in units of 4). Acquirers that cannot enter
 * sleep (never spin) and are all woken when the lock becomes free, then compete again.
 * As Verifier requires, acquiring needs IRQL <= APC_LEVEL (else IRQL_NOT_LESS_OR_EQUAL) and
 * kernel APCs disabled (critical region or APC_LEVEL; else reported and aborts). Releasing a
 * lock that is not held in that mode is reported and aborts; a thread re-acquiring a push lock
 * it holds deadlocks, as on Windows. */
typedef ULONG_PTR EX_PUSH_LOCK, *PEX_PUSH_LOCK;
VOID NTAPI ExInitializePushLock(_Out_ PEX_PUSH_LOCK PushLock);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI
    ExAcquirePushLockExclusive(_Inout_ PEX_PUSH_LOCK PushLock);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI ExAcquirePushLockShared(_Inout_ PEX_PUSH_LOCK PushLock);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI
    ExReleasePushLockExclusive(_Inout_ PEX_PUSH_LOCK PushLock);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI ExReleasePushLockShared(_Inout_ PEX_PUSH_LOCK PushLock);

/* ---- Shared (reader/writer) spin locks, EX_SPIN_LOCK: a LONG, 0 when free. Bit 31 means
 * owned exclusively, bit 30 that a writer waits (new readers then hold back, so writers are
 * not starved), bits 0-29 count readers. Waiting spins with the pause hint and then yields the
 * CPU, as KSPIN_LOCKs do. ExAcquireSpinLock{Shared,Exclusive} raise the IRQL to DISPATCH_LEVEL
 * and return the previous one for the matching release; the AtDpcLevel / FromDpcLevel variants
 * leave the IRQL alone. Not recursive (a reader re-acquiring while a writer waits deadlocks, as
 * on Windows). Releasing a lock not held in that mode bug-checks SPIN_LOCK_NOT_OWNED.
 *   ExTryConvertSharedSpinLockExclusive  TRUE (now exclusive) if the caller was the only
 *       reader; FALSE (still shared) otherwise.
 *   ExTryAcquireSpinLock{Shared,Exclusive}AtDpcLevel  TRUE if acquired, FALSE at once if not. */
typedef LONG volatile EX_SPIN_LOCK, *PEX_SPIN_LOCK;
_IRQL_raises_(DISPATCH_LEVEL) KIRQL NTAPI ExAcquireSpinLockShared(_Inout_ PEX_SPIN_LOCK SpinLock);
VOID NTAPI ExReleaseSpinLockShared(_Inout_ PEX_SPIN_LOCK SpinLock, _In_ KIRQL OldIrql);
_IRQL_raises_(DISPATCH_LEVEL) KIRQL NTAPI
    ExAcquireSpinLockExclusive(_Inout_ PEX_SPIN_LOCK SpinLock);
VOID NTAPI ExReleaseSpinLockExclusive(_Inout_ PEX_SPIN_LOCK SpinLock, _In_ KIRQL OldIrql);
VOID NTAPI ExAcquireSpinLockSharedAtDpcLevel(_Inout_ PEX_SPIN_LOCK SpinLock);
VOID NTAPI ExReleaseSpinLockSharedFromDpcLevel(_Inout_ PEX_SPIN_LOCK SpinLock);
VOID NTAPI ExAcquireSpinLockExclusiveAtDpcLevel(_Inout_ PEX_SPIN_LOCK SpinLock);
VOID NTAPI ExReleaseSpinLockExclusiveFromDpcLevel(_Inout_ PEX_SPIN_LOCK SpinLock);
LOGICAL NTAPI ExTryConvertSharedSpinLockExclusive(_Inout_ PEX_SPIN_LOCK SpinLock);
LOGICAL NTAPI ExTryAcquireSpinLockSharedAtDpcLevel(_Inout_ PEX_SPIN_LOCK SpinLock);
LOGICAL NTAPI ExTryAcquireSpinLockExclusiveAtDpcLevel(_Inout_ PEX_SPIN_LOCK SpinLock);

/* ---- Rundown protection with a count, and the cache-aware variant.
 * ExAcquireRundownProtectionEx / ExReleaseRundownProtectionEx take or drop Count references at
 * once (the same rules as the single calls in wdm.h; Count 0 acquires trivially).
 * EX_RUNDOWN_REF_CACHE_AWARE: on Windows one counter per processor; here ONE shared
 * EX_RUNDOWN_REF with the same semantics (less scalable, equally correct). Either allocate it
 * with ExAllocateCacheAwareRundownProtection (pool of PoolType with PoolTag; NULL when out of
 * pool; ExFreeCacheAwareRundownProtection frees it) or allocate
 * ExSizeOfRundownProtectionCacheAware() bytes yourself and call
 * ExInitializeRundownProtectionCacheAware(ref, that size) (a smaller size is reported and
 * aborts). The other calls behave as their EX_RUNDOWN_REF counterparts. */
_Must_inspect_result_ _IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    ExAcquireRundownProtectionEx(_Inout_ PEX_RUNDOWN_REF RunRef, _In_ ULONG Count);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExReleaseRundownProtectionEx(_Inout_ PEX_RUNDOWN_REF RunRef, _In_ ULONG Count);

typedef struct _EX_RUNDOWN_REF_CACHE_AWARE {
    EX_RUNDOWN_REF RunRef; /* the one counter */
    PVOID PoolToFree;      /* non-NULL when ExAllocateCacheAwareRundownProtection made it */
    ULONG RunRefSize;
    ULONG Number;
} EX_RUNDOWN_REF_CACHE_AWARE, *PEX_RUNDOWN_REF_CACHE_AWARE;

_IRQL_requires_max_(DISPATCH_LEVEL) PEX_RUNDOWN_REF_CACHE_AWARE NTAPI
    ExAllocateCacheAwareRundownProtection(_In_ POOL_TYPE PoolType, _In_ ULONG PoolTag);
SIZE_T NTAPI ExSizeOfRundownProtectionCacheAware(VOID);
VOID NTAPI ExInitializeRundownProtectionCacheAware(
    _Out_ PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware, _In_ SIZE_T RunRefSize);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExFreeCacheAwareRundownProtection(_Inout_ PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware);
_Must_inspect_result_ _IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    ExAcquireRundownProtectionCacheAware(_Inout_ PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExReleaseRundownProtectionCacheAware(_Inout_ PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware);
_Must_inspect_result_ _IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    ExAcquireRundownProtectionCacheAwareEx(_Inout_ PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware,
                                           _In_ ULONG Count);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExReleaseRundownProtectionCacheAwareEx(_Inout_ PEX_RUNDOWN_REF_CACHE_AWARE RunRef,
                                           _In_ ULONG Count);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI
    ExWaitForRundownProtectionReleaseCacheAware(_Inout_ PEX_RUNDOWN_REF_CACHE_AWARE RunRef);
VOID NTAPI ExRundownCompletedCacheAware(_Inout_ PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware);
VOID NTAPI
ExReInitializeRundownProtectionCacheAware(_Inout_ PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware);

/* ---- Sequenced singly linked lists (SLIST). x64 layout: a 16-byte, 16-byte-aligned header
 * and 16-byte-aligned entries (MEMORY_ALLOCATION_ALIGNMENT; pool blocks are). The header keeps
 * Windows' encoding - Depth (16 bits) and Sequence (48 bits) in the first word, the first
 * entry's address >> 4 in NextEntry - so QueryDepthSList and RtlFirstEntrySList read it
 * directly. Every change is made under one of 64 runtime locks chosen by the header's address
 * (not lock-free, but safe at any IRQL and against concurrent push/pop/flush; the Sequence
 * advances on every change, as Windows' does). A misaligned entry is reported and aborts.
 *   InterlockedPushEntrySList   returns the previous first entry (NULL if the list was empty)
 *   InterlockedPopEntrySList    the first entry, or NULL
 *   InterlockedFlushSList       detaches the whole chain and returns it (NULL if empty)
 *   ExInterlocked{Push,Pop}EntrySList, ExInterlockedFlushSList  the same; Lock is ignored,
 *                               as on x64 Windows. */
#define MEMORY_ALLOCATION_ALIGNMENT 16
typedef struct DECLSPEC_ALIGN(16) _SLIST_ENTRY {
    struct _SLIST_ENTRY *Next;
} SLIST_ENTRY, *PSLIST_ENTRY;

typedef union DECLSPEC_ALIGN(16) _SLIST_HEADER {
    struct {
        ULONGLONG Alignment;
        ULONGLONG Region;
    } DUMMYSTRUCTNAME;
    struct {
        ULONGLONG Depth : 16;
        ULONGLONG Sequence : 48;
        ULONGLONG Reserved : 4;
        ULONGLONG NextEntry : 60;
    } HeaderX64;
} SLIST_HEADER, *PSLIST_HEADER;

VOID NTAPI InitializeSListHead(_Out_ PSLIST_HEADER SListHead);
PSLIST_ENTRY NTAPI InterlockedPushEntrySList(_Inout_ PSLIST_HEADER ListHead,
                                             _Inout_ PSLIST_ENTRY ListEntry);
PSLIST_ENTRY NTAPI InterlockedPopEntrySList(_Inout_ PSLIST_HEADER ListHead);
PSLIST_ENTRY NTAPI InterlockedFlushSList(_Inout_ PSLIST_HEADER ListHead);
USHORT NTAPI QueryDepthSList(_In_ PSLIST_HEADER ListHead);
PSLIST_ENTRY NTAPI RtlFirstEntrySList(_In_ const SLIST_HEADER *ListHead);
PSLIST_ENTRY NTAPI ExInterlockedPushEntrySList(_Inout_ PSLIST_HEADER ListHead,
                                               _Inout_ PSLIST_ENTRY ListEntry,
                                               _Inout_opt_ PKSPIN_LOCK Lock);
PSLIST_ENTRY NTAPI ExInterlockedPopEntrySList(_Inout_ PSLIST_HEADER ListHead,
                                              _Inout_opt_ PKSPIN_LOCK Lock);
PSLIST_ENTRY NTAPI ExInterlockedFlushSList(_Inout_ PSLIST_HEADER ListHead);
#define ExQueryDepthSList(ListHead)     QueryDepthSList(ListHead)
#define ExInitializeSListHead(ListHead) InitializeSListHead(ListHead)

/* ---- Lists guarded by a spin lock (any IRQL: the lock is taken at DISPATCH_LEVEL or the
 * caller's higher IRQL, which is restored). The list links follow wdm.h's list rules,
 * corruption checks included; every user of the list must go through these calls with the
 * same Lock.
 *   ExInterlockedInsertHeadList  returns the entry that was first before, NULL if empty
 *   ExInterlockedInsertTailList  returns the entry that was last before, NULL if empty
 *   ExInterlockedRemoveHeadList  the removed first entry, NULL if empty
 *   ExInterlockedPushEntryList   returns the entry that was first before, NULL if empty
 *   ExInterlockedPopEntryList    the popped entry, NULL if empty */
PLIST_ENTRY NTAPI ExInterlockedInsertHeadList(_Inout_ PLIST_ENTRY ListHead,
                                              _Inout_ PLIST_ENTRY ListEntry,
                                              _Inout_ PKSPIN_LOCK Lock);
PLIST_ENTRY NTAPI ExInterlockedInsertTailList(_Inout_ PLIST_ENTRY ListHead,
                                              _Inout_ PLIST_ENTRY ListEntry,
                                              _Inout_ PKSPIN_LOCK Lock);
PLIST_ENTRY NTAPI ExInterlockedRemoveHeadList(_Inout_ PLIST_ENTRY ListHead,
                                              _Inout_ PKSPIN_LOCK Lock);
PSINGLE_LIST_ENTRY NTAPI ExInterlockedPushEntryList(_Inout_ PSINGLE_LIST_ENTRY ListHead,
                                                    _Inout_ PSINGLE_LIST_ENTRY ListEntry,
                                                    _Inout_ PKSPIN_LOCK Lock);
PSINGLE_LIST_ENTRY NTAPI ExInterlockedPopEntryList(_Inout_ PSINGLE_LIST_ENTRY ListHead,
                                                   _Inout_ PKSPIN_LOCK Lock);

/* ---- Memory barriers and the remaining interlocked names. KeMemoryBarrier and MemoryBarrier
 * are full (sequentially consistent) fences; KeMemoryBarrierWithoutFence and
 * _ReadWriteBarrier stop only the compiler. KeFlushIoBuffers is a no-op, as on x64 Windows
 * (caches are coherent with DMA). The 8-bit forms and the NoFence / Acquire / Release forms
 * follow the rules of wdm.h's interlocked operations (Exchange, CompareExchange, ExchangeAdd,
 * Or, And, Xor return the previous value); NoFence is a relaxed atomic operation, Acquire /
 * Release have those orders. InterlockedCompareExchange128 compares the 16-byte, 16-byte
 * aligned Destination with ComparandResult[1]:ComparandResult[0] (high:low), stores
 * ExchangeHigh:ExchangeLow if equal, always leaves the previous value in ComparandResult and
 * returns TRUE if it exchanged.
 * The compiler-intrinsic names drivers also use (_InterlockedIncrement, _InterlockedExchange8,
 * _interlockedbittestandset, ...) are macros naming the same operations; the _np ("no
 * prefetch") forms are the plain ones. */
#define KeMemoryBarrier()             __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define MemoryBarrier()               __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define KeMemoryBarrierWithoutFence() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define _ReadWriteBarrier()           __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define KeFlushIoBuffers(Mdl, ReadOperation, DmaOperation) \
    ((void)(Mdl), (void)(ReadOperation), (void)(DmaOperation))

#define SOFTNDK_INTERLOCKED_OP(Name, Type, Builtin, Order)                                        \
    FORCEINLINE Type Name(_Inout_ _Interlocked_operand_ Type volatile *Target, _In_ Type Value) { \
        return Builtin(Target, Value, Order);                                                     \
    }
SOFTNDK_INTERLOCKED_OP(InterlockedExchange8, CHAR, __atomic_exchange_n, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedExchange16, SHORT, __atomic_exchange_n, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedExchangeAdd8, CHAR, __atomic_fetch_add, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedExchangeAdd16, SHORT, __atomic_fetch_add, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedOr8, CHAR, __atomic_fetch_or, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedOr16, SHORT, __atomic_fetch_or, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedAnd8, CHAR, __atomic_fetch_and, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedAnd16, SHORT, __atomic_fetch_and, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedXor8, CHAR, __atomic_fetch_xor, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedXor16, SHORT, __atomic_fetch_xor, __ATOMIC_SEQ_CST)
SOFTNDK_INTERLOCKED_OP(InterlockedExchangeNoFence, LONG, __atomic_exchange_n, __ATOMIC_RELAXED)
SOFTNDK_INTERLOCKED_OP(InterlockedExchangeNoFence64, LONG64, __atomic_exchange_n, __ATOMIC_RELAXED)
SOFTNDK_INTERLOCKED_OP(InterlockedExchangeAcquire64, LONG64, __atomic_exchange_n, __ATOMIC_ACQUIRE)
SOFTNDK_INTERLOCKED_OP(InterlockedOrNoFence, LONG, __atomic_fetch_or, __ATOMIC_RELAXED)
SOFTNDK_INTERLOCKED_OP(InterlockedAndNoFence, LONG, __atomic_fetch_and, __ATOMIC_RELAXED)
SOFTNDK_INTERLOCKED_OP(InterlockedExchangeAddNoFence, LONG, __atomic_fetch_add, __ATOMIC_RELAXED)
SOFTNDK_INTERLOCKED_OP(InterlockedExchangeAddNoFence64, LONG64, __atomic_fetch_add,
                       __ATOMIC_RELAXED)
#undef SOFTNDK_INTERLOCKED_OP

FORCEINLINE CHAR
InterlockedCompareExchange8(_Inout_ _Interlocked_operand_ CHAR volatile *Destination,
                            _In_ CHAR ExChange, _In_ CHAR Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return Comperand;
}
FORCEINLINE LONG InterlockedIncrementNoFence(_Inout_ _Interlocked_operand_ LONG volatile *Addend) {
    return __atomic_add_fetch(Addend, 1, __ATOMIC_RELAXED);
}
FORCEINLINE LONG InterlockedIncrementAcquire(_Inout_ _Interlocked_operand_ LONG volatile *Addend) {
    return __atomic_add_fetch(Addend, 1, __ATOMIC_ACQUIRE);
}
FORCEINLINE LONG InterlockedIncrementRelease(_Inout_ _Interlocked_operand_ LONG volatile *Addend) {
    return __atomic_add_fetch(Addend, 1, __ATOMIC_RELEASE);
}
FORCEINLINE LONG InterlockedDecrementNoFence(_Inout_ _Interlocked_operand_ LONG volatile *Addend) {
    return __atomic_sub_fetch(Addend, 1, __ATOMIC_RELAXED);
}
FORCEINLINE LONG InterlockedDecrementAcquire(_Inout_ _Interlocked_operand_ LONG volatile *Addend) {
    return __atomic_sub_fetch(Addend, 1, __ATOMIC_ACQUIRE);
}
FORCEINLINE LONG InterlockedDecrementRelease(_Inout_ _Interlocked_operand_ LONG volatile *Addend) {
    return __atomic_sub_fetch(Addend, 1, __ATOMIC_RELEASE);
}
FORCEINLINE LONG
InterlockedCompareExchangeAcquire(_Inout_ _Interlocked_operand_ LONG volatile *Destination,
                                  _In_ LONG ExChange, _In_ LONG Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, __ATOMIC_ACQUIRE,
                                __ATOMIC_ACQUIRE);
    return Comperand;
}
FORCEINLINE LONG
InterlockedCompareExchangeRelease(_Inout_ _Interlocked_operand_ LONG volatile *Destination,
                                  _In_ LONG ExChange, _In_ LONG Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, __ATOMIC_RELEASE,
                                __ATOMIC_RELAXED);
    return Comperand;
}
FORCEINLINE LONG
InterlockedCompareExchangeNoFence(_Inout_ _Interlocked_operand_ LONG volatile *Destination,
                                  _In_ LONG ExChange, _In_ LONG Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
    return Comperand;
}
FORCEINLINE BOOLEAN InterlockedCompareExchange128(
    _Inout_updates_(2) _Interlocked_operand_ LONG64 volatile *Destination, _In_ LONG64 ExchangeHigh,
    _In_ LONG64 ExchangeLow, _Inout_updates_(2) LONG64 *ComparandResult) {
#if defined(__x86_64__)
    struct SoftNdkUint128 {
        LONG64 Part[2];
    };
    unsigned char exchanged;
    __asm__ __volatile__("lock cmpxchg16b %1\n\tsetz %0"
                         : "=q"(exchanged), "+m"(*(volatile struct SoftNdkUint128 *)Destination),
                           "+a"(ComparandResult[0]), "+d"(ComparandResult[1])
                         : "b"(ExchangeLow), "c"(ExchangeHigh)
                         : "memory", "cc");
    return (BOOLEAN)exchanged;
#else
    __int128 expected =
        ((__int128)ComparandResult[1] << 64) | (unsigned long long)ComparandResult[0];
    const __int128 desired = ((__int128)ExchangeHigh << 64) | (unsigned long long)ExchangeLow;
    const BOOLEAN exchanged =
        (BOOLEAN)__atomic_compare_exchange_n((volatile __int128 *)Destination, &expected, desired,
                                             0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    ComparandResult[0] = (LONG64)expected;
    ComparandResult[1] = (LONG64)(expected >> 64);
    return exchanged;
#endif
}

#define _InterlockedIncrement              InterlockedIncrement
#define _InterlockedIncrement16            InterlockedIncrement16
#define _InterlockedIncrement64            InterlockedIncrement64
#define _InterlockedDecrement              InterlockedDecrement
#define _InterlockedDecrement16            InterlockedDecrement16
#define _InterlockedDecrement64            InterlockedDecrement64
#define _InterlockedExchange               InterlockedExchange
#define _InterlockedExchange8              InterlockedExchange8
#define _InterlockedExchange16             InterlockedExchange16
#define _InterlockedExchange64             InterlockedExchange64
#define _InterlockedExchangePointer        InterlockedExchangePointer
#define _InterlockedCompareExchange        InterlockedCompareExchange
#define _InterlockedCompareExchange8       InterlockedCompareExchange8
#define _InterlockedCompareExchange16      InterlockedCompareExchange16
#define _InterlockedCompareExchange64      InterlockedCompareExchange64
#define _InterlockedCompareExchange128     InterlockedCompareExchange128
#define _InterlockedCompareExchangePointer InterlockedCompareExchangePointer
#define _InterlockedExchangeAdd            InterlockedExchangeAdd
#define _InterlockedExchangeAdd8           InterlockedExchangeAdd8
#define _InterlockedExchangeAdd16          InterlockedExchangeAdd16
#define _InterlockedExchangeAdd64          InterlockedExchangeAdd64
#define _InterlockedOr                     InterlockedOr
#define _InterlockedOr8                    InterlockedOr8
#define _InterlockedOr16                   InterlockedOr16
#define _InterlockedOr64                   InterlockedOr64
#define _InterlockedAnd                    InterlockedAnd
#define _InterlockedAnd8                   InterlockedAnd8
#define _InterlockedAnd16                  InterlockedAnd16
#define _InterlockedAnd64                  InterlockedAnd64
#define _InterlockedXor                    InterlockedXor
#define _InterlockedXor8                   InterlockedXor8
#define _InterlockedXor16                  InterlockedXor16
#define _InterlockedXor64                  InterlockedXor64
#define _InterlockedOr_np                  InterlockedOr
#define _InterlockedAnd_np                 InterlockedAnd
#define _InterlockedXor_np                 InterlockedXor
#define _InterlockedOr64_np                InterlockedOr64
#define _InterlockedAnd64_np               InterlockedAnd64
#define _InterlockedXor64_np               InterlockedXor64
#define _interlockedbittestandset          InterlockedBitTestAndSet
#define _interlockedbittestandreset        InterlockedBitTestAndReset
#define _interlockedbittestandset64        InterlockedBitTestAndSet64
#define _interlockedbittestandreset64      InterlockedBitTestAndReset64

/* ---- Processors and NUMA nodes. Processors are the host's online CPUs in groups of 64
 * (group = index / 64, number = index % 64); the current processor is sched_getcpu()'s. NUMA
 * nodes are read once from /sys/devices/system/node (nodeN/cpulist); without that directory
 * there is one node, 0, holding every processor. Processors are not reserved: the thread may
 * move to another one right after any of these calls returns, as on Windows at PASSIVE_LEVEL.
 *   KeQueryActiveProcessorCountEx(Group)   processors in Group, or in all groups for
 *                                          ALL_PROCESSOR_GROUPS; 0 for a group that does not
 *                                          exist.
 *   KeGetProcessorNumberFromIndex          STATUS_INVALID_PARAMETER for an index >= the count.
 *   KeGetProcessorIndexFromNumber          INVALID_PROCESSOR_INDEX for a processor that does
 *                                          not exist.
 *   KeQueryNodeActiveAffinity              the node's processors (in the group of its first
 *                                          processor) and their count (Count may be NULL); an
 *                                          unknown node gives an empty mask and 0.
 *   KeSetSystemGroupAffinityThread         really binds the calling thread (sched_setaffinity)
 *                                          to Affinity's processors and returns the previous
 *                                          affinity in PreviousAffinity if given; a mask with
 *                                          no existing processor is reported and aborts
 *                                          (Windows bug-checks). KeRevertToUserGroupAffinityThread
 *                                          restores it.
 *   KeGetRecommendedSharedDataAlignment    the L1 data cache line size (64 if unknown). */
#ifndef SOFTNDK_PROCESSOR_NUMBER_DEFINED
#define SOFTNDK_PROCESSOR_NUMBER_DEFINED
typedef struct _PROCESSOR_NUMBER {
    USHORT Group;
    UCHAR Number;
    UCHAR Reserved;
} PROCESSOR_NUMBER, *PPROCESSOR_NUMBER;
#endif
#define ALL_PROCESSOR_GROUPS    0xffff
#define INVALID_PROCESSOR_INDEX 0xffffffff

ULONG NTAPI KeGetCurrentProcessorNumber(VOID);
ULONG NTAPI KeGetCurrentProcessorIndex(VOID);
ULONG NTAPI KeGetCurrentProcessorNumberEx(_Out_opt_ PPROCESSOR_NUMBER ProcNumber);
ULONG NTAPI KeQueryActiveProcessorCountEx(_In_ USHORT GroupNumber);
USHORT NTAPI KeQueryActiveGroupCount(VOID);
NTSTATUS NTAPI KeGetProcessorNumberFromIndex(_In_ ULONG ProcIndex,
                                             _Out_ PPROCESSOR_NUMBER ProcNumber);
ULONG NTAPI KeGetProcessorIndexFromNumber(_In_ PPROCESSOR_NUMBER ProcNumber);
USHORT NTAPI KeGetCurrentNodeNumber(VOID);
USHORT NTAPI KeQueryHighestNodeNumber(VOID);
VOID NTAPI KeQueryNodeActiveAffinity(_In_ USHORT NodeNumber, _Out_opt_ PGROUP_AFFINITY Affinity,
                                     _Out_opt_ PUSHORT Count);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    KeSetSystemGroupAffinityThread(_In_ PGROUP_AFFINITY Affinity,
                                   _Out_opt_ PGROUP_AFFINITY PreviousAffinity);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    KeRevertToUserGroupAffinityThread(_In_ PGROUP_AFFINITY PreviousAffinity);
ULONG NTAPI KeGetRecommendedSharedDataAlignment(VOID);

/* ---- Thread priority: recorded per thread (see KeGetCurrentThread) and returned; the Linux
 * scheduler is not asked to change anything. A thread starts at priority 8 with base priority
 * increment 0 (a normal Windows thread).
 *   KeSetPriorityThread     Priority 1..31 (LOW_PRIORITY + 1 .. HIGH_PRIORITY, else reported
 *                           and aborts); returns the previous priority.
 *   KeQueryPriorityThread   the recorded priority.
 *   KeSetBasePriorityThread records Increment (the base priority is 8 + Increment, kept in
 *                           1..15, and becomes the priority); returns the previous increment. */
#define LOW_PRIORITY          0
#define LOW_REALTIME_PRIORITY 16
#define HIGH_PRIORITY         31
#define MAXIMUM_PRIORITY      32
_IRQL_requires_max_(DISPATCH_LEVEL) KPRIORITY NTAPI
    KeSetPriorityThread(_Inout_ PKTHREAD Thread, _In_ KPRIORITY Priority);
_IRQL_requires_max_(DISPATCH_LEVEL) KPRIORITY NTAPI KeQueryPriorityThread(_In_ PKTHREAD Thread);
_IRQL_requires_max_(DISPATCH_LEVEL) LONG NTAPI
    KeSetBasePriorityThread(_Inout_ PKTHREAD Thread, _In_ LONG Increment);

/* ---- DPC extras. DPCs all run on the runtime's one DPC thread (wdm.h), so these record what
 * they are given and change nothing else:
 *   KeInitializeThreadedDpc   as KeInitializeDpc, but Type is 24 (ThreadedDpcObject). The routine
 * runs at DISPATCH_LEVEL on the DPC thread - what Windows does when threaded DPCs are disabled,
 * which a threaded DPC must tolerate. KeSetImportanceDpc        stores Importance.
 *   KeSetTargetProcessorDpc   stores Number + MAXIMUM_PROCESSORS in Dpc->Number (so 0
 *                             still means "no target", as in Windows' encoding).
 *   KeSetTargetProcessorDpcEx STATUS_INVALID_PARAMETER for a processor that does not exist,
 *                             else stores it as above and returns STATUS_SUCCESS.
 *   KeQueryDpcWatchdogInformation  STATUS_SUCCESS with every field 0: there is no DPC watchdog
 *                             (0 is Windows' "no limit"). */
#define MAXIMUM_PROCESSORS 64
typedef struct _KDPC_WATCHDOG_INFORMATION {
    ULONG DpcTimeLimit;
    ULONG DpcTimeCount;
    ULONG DpcWatchdogLimit;
    ULONG DpcWatchdogCount;
    ULONG Reserved;
} KDPC_WATCHDOG_INFORMATION, *PKDPC_WATCHDOG_INFORMATION;

VOID NTAPI KeInitializeThreadedDpc(_Out_ PRKDPC Dpc, _In_ PKDEFERRED_ROUTINE DeferredRoutine,
                                   _In_opt_ PVOID DeferredContext);
VOID NTAPI KeSetImportanceDpc(_Inout_ PRKDPC Dpc, _In_ KDPC_IMPORTANCE Importance);
VOID NTAPI KeSetTargetProcessorDpc(_Inout_ PRKDPC Dpc, _In_ CCHAR Number);
NTSTATUS NTAPI KeSetTargetProcessorDpcEx(_Inout_ PKDPC Dpc, _In_ PPROCESSOR_NUMBER ProcNumber);
_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS NTAPI
    KeQueryDpcWatchdogInformation(_Out_ PKDPC_WATCHDOG_INFORMATION WatchdogInformation);

/* ---- Timer extras and ticks.
 *   KeSetCoalescableTimer   KeSetTimerEx(Timer, DueTime, Period, Dpc); TolerableDelay is
 *                           accepted (timers expire on time here).
 *   KeQueryTimeIncrement    156250 (15.625 ms, Windows' default clock tick), in 100 ns.
 *   KeQueryTickCount        KeQueryInterruptTime() / KeQueryTimeIncrement(): ticks since boot.
 *   KeQueryUnbiasedInterruptTimePrecise  KeQueryUnbiasedInterruptTime's clock, precisely, and
 *                           the performance counter at the same moment in *QpcTimeStamp. */
_IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    KeSetCoalescableTimer(_Inout_ PKTIMER Timer, _In_ LARGE_INTEGER DueTime, _In_ ULONG Period,
                          _In_ ULONG TolerableDelay, _In_opt_ PKDPC Dpc);
ULONG NTAPI KeQueryTimeIncrement(VOID);
VOID NTAPI KeQueryTickCount(_Out_ PLARGE_INTEGER CurrentCount);
ULONG64 NTAPI KeQueryUnbiasedInterruptTimePrecise(_Out_ PULONG64 QpcTimeStamp);

/* ---- Ex timers (ExAllocateTimer ...). An EX_TIMER is runtime-owned (pool, tag 'ExTm') and
 * begins with a KTIMER, so KeWaitForSingleObject may wait on it: it is a notification timer,
 * signalled at each expiry and unsignalled again by ExSetTimer.
 *   ExAllocateTimer   Callback (may be NULL) runs at DISPATCH_LEVEL on the runtime's DPC thread
 *                     at each expiry, with the timer and CallbackContext. Attributes:
 *                     EX_TIMER_HIGH_RESOLUTION (accepted: every timer here has the resolution
 *                     of the steady clock) and EX_TIMER_NO_WAKE; any other bit, or both of
 *                     these together, gives NULL, as does running out of pool.
 *   ExSetTimer        IRQL <= DISPATCH_LEVEL. DueTime as for KeSetTimer (negative relative,
 *                     100 ns units; positive absolute system time). Period (100 ns units, >= 0;
 *                     0 = once) re-arms the timer Period after its previous due time (missed
 *                     periods are skipped). Parameters may be NULL or come from
 *                     ExInitializeSetTimerParameters (NoWakeTolerance is accepted). Returns
 *                     TRUE if the timer was pending and has been replaced.
 *   ExCancelTimer     TRUE if the timer was pending (it will not expire again); a callback
 *                     already running finishes. Parameters must be NULL.
 *   ExDeleteTimer     IRQL <= DISPATCH_LEVEL (<= APC_LEVEL with Wait). Cancel = TRUE cancels a
 *                     pending timer; Cancel = FALSE lets a pending one-shot timer expire once
 *                     more first (a pending periodic timer needs Cancel = TRUE: reported and
 *                     aborts). The timer is freed once no callback runs any more, then
 *                     Parameters->DeleteCallback (if any) runs at DISPATCH_LEVEL on the DPC
 *                     thread with DeleteContext. Wait = TRUE (which needs Cancel = TRUE)
 *                     returns only after that; it must not be called from the timer's own
 *                     callback. Returns TRUE if a pending timer was cancelled. The EX_TIMER
 *                     must not be used after ExDeleteTimer. */
typedef struct _EX_TIMER *PEX_TIMER;
typedef _Function_class_(EXT_CALLBACK) _IRQL_requires_(DISPATCH_LEVEL) _IRQL_requires_same_ VOID
    EXT_CALLBACK(_In_ PEX_TIMER Timer, _In_opt_ PVOID Context);
typedef EXT_CALLBACK *PEXT_CALLBACK;
typedef _Function_class_(EXT_DELETE_CALLBACK)
    _IRQL_requires_(DISPATCH_LEVEL) _IRQL_requires_same_ VOID
    EXT_DELETE_CALLBACK(_In_opt_ PVOID Context);
typedef EXT_DELETE_CALLBACK *PEXT_DELETE_CALLBACK;
typedef PVOID PEXT_CANCEL_PARAMETERS;

typedef struct _EXT_SET_PARAMETERS_V0 {
    ULONG Version;
    ULONG Reserved;
    LONGLONG NoWakeTolerance;
} EXT_SET_PARAMETERS, *PEXT_SET_PARAMETERS;

typedef struct _EXT_DELETE_PARAMETERS {
    ULONG Version;
    ULONG Reserved;
    PEXT_DELETE_CALLBACK DeleteCallback;
    PVOID DeleteContext;
} EXT_DELETE_PARAMETERS, *PEXT_DELETE_PARAMETERS;

#define EX_TIMER_HIGH_RESOLUTION     0x4
#define EX_TIMER_NO_WAKE             0x8
#define EX_TIMER_UNLIMITED_TOLERANCE ((LONGLONG)-1)

FORCEINLINE VOID ExInitializeSetTimerParameters(_Out_ PEXT_SET_PARAMETERS Parameters) {
    memset(Parameters, 0, sizeof(*Parameters));
    Parameters->NoWakeTolerance = EX_TIMER_UNLIMITED_TOLERANCE;
}
FORCEINLINE VOID ExInitializeDeleteTimerParameters(_Out_ PEXT_DELETE_PARAMETERS Parameters) {
    memset(Parameters, 0, sizeof(*Parameters));
}

_IRQL_requires_max_(DISPATCH_LEVEL) PEX_TIMER NTAPI
    ExAllocateTimer(_In_opt_ PEXT_CALLBACK Callback, _In_opt_ PVOID CallbackContext,
                    _In_ ULONG Attributes);
_IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    ExSetTimer(_In_ PEX_TIMER Timer, _In_ LONGLONG DueTime, _In_ LONGLONG Period,
               _In_opt_ PEXT_SET_PARAMETERS Parameters);
_IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    ExCancelTimer(_Inout_ PEX_TIMER Timer, _In_opt_ PEXT_CANCEL_PARAMETERS Parameters);
_IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    ExDeleteTimer(_In_ PEX_TIMER Timer, _In_ BOOLEAN Cancel, _In_ BOOLEAN Wait,
                  _In_opt_ PEXT_DELETE_PARAMETERS Parameters);

/* ---- Floating point state. KFLOATING_SAVE keeps the SSE control/status word (MXCSR, low 16
 * bits) and the x87 control word (high 16 bits): KeSaveFloatingPointState (IRQL <=
 * DISPATCH_LEVEL, else IRQL_NOT_LESS_OR_EQUAL) stores them and returns STATUS_SUCCESS;
 * KeRestoreFloatingPointState puts them back (rounding modes, precision, exception masks) and
 * returns STATUS_SUCCESS. User-mode threads always may use the FPU, so nothing else is needed. */
typedef struct _KFLOATING_SAVE {
    ULONG Dummy;
} KFLOATING_SAVE, *PKFLOATING_SAVE;
_Must_inspect_result_ _IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS NTAPI
    KeSaveFloatingPointState(_Out_ PKFLOATING_SAVE FloatSave);
NTSTATUS NTAPI KeRestoreFloatingPointState(_In_ PKFLOATING_SAVE FloatSave);

/* ---- Pool extras.
 *   ExAllocatePoolUninitialized  ExAllocatePoolWithTag (contents undefined).
 *   ExAllocatePoolQuotaZero      zeroed, like ExAllocatePoolZero; quota is not charged. As
 *                                ExAllocatePoolWithQuotaTag does, a failure raises
 *                                STATUS_INSUFFICIENT_RESOURCES (bug check 0x1E here) unless
 *                                PoolType includes POOL_QUOTA_FAIL_INSTEAD_OF_RAISE, which
 *                                makes it return NULL.
 *   ExAllocatePoolWithQuotaTag   the same, not zeroed. */
#define POOL_QUOTA_FAIL_INSTEAD_OF_RAISE 8
_IRQL_requires_max_(DISPATCH_LEVEL) PVOID NTAPI
    ExAllocatePoolUninitialized(_In_ POOL_TYPE PoolType, _In_ SIZE_T NumberOfBytes, _In_ ULONG Tag);
_IRQL_requires_max_(DISPATCH_LEVEL) PVOID NTAPI
    ExAllocatePoolQuotaZero(_In_ POOL_TYPE PoolType, _In_ SIZE_T NumberOfBytes, _In_ ULONG Tag);
_IRQL_requires_max_(DISPATCH_LEVEL) PVOID NTAPI
    ExAllocatePoolWithQuotaTag(_In_ POOL_TYPE PoolType, _In_ SIZE_T NumberOfBytes, _In_ ULONG Tag);

/* ---- Caller-allocated I/O work items. IoSizeofWorkItem() bytes of non-paged memory become an
 * IO_WORKITEM with IoInitializeWorkItem(IoObject, item): IoObject is the driver's DEVICE_OBJECT
 * (Type IO_TYPE_DEVICE, as IoCreateDevice makes it: referenced while the item is queued or
 * running, as with IoAllocateWorkItem) or its DRIVER_OBJECT (not referenced); the routine
 * receives it. The item is then queued with IoQueueWorkItem[Ex] exactly like
 * an allocated one. IoUninitializeWorkItem ends its use (the memory stays the caller's); an item
 * still queued is reported and aborts, as is IoFreeWorkItem on a caller-allocated item. */
_IRQL_requires_max_(DISPATCH_LEVEL) ULONG NTAPI IoSizeofWorkItem(VOID);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    IoInitializeWorkItem(_In_ PVOID IoObject, _Out_ PIO_WORKITEM IoWorkItem);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    IoUninitializeWorkItem(_Inout_ PIO_WORKITEM IoWorkItem);

/* ---- Pages described by MDLs (the MDL conventions of wdm.h: "physical" page numbers are
 * virtual page numbers of this process).
 *   MmAllocatePagesForMdl[Ex]  maps ROUND_TO_PAGES(TotalBytes) of fresh anonymous memory and
 *       returns a pool-allocated MDL describing it (StartVa = the pages, ByteOffset 0,
 *       ByteCount = the rounded size, MDL_PAGES_LOCKED | MDL_ALLOCATED_FIXED_SIZE, PFN array
 *       filled, NOT mapped: call MmMapLockedPagesSpecifyCache). The pages are zeroed unless Ex
 *       is given MM_DONT_ZERO_ALLOCATION (they are zero anyway). NULL for TotalBytes 0, an
 *       unknown Ex flag, or no memory. LowAddress, HighAddress, SkipBytes and CacheType are
 *       accepted: there are no physical addresses to constrain.
 *   MmFreePagesFromMdl  unmaps those pages (the MDL must come from MmAllocatePagesForMdl[Ex] and
 *       must not be mapped any more, else reported and aborts); the caller then frees the MDL
 *       with ExFreePool, as on Windows.
 *   MmMapLockedPagesSpecifyCache  for a locked MDL, or one built for non-paged pool: returns
 *       the address of its first byte (StartVa + ByteOffset) and records the mapping
 *       (MappedSystemVa, MDL_MAPPED_TO_SYSTEM_VA, and MDL_PARTIAL_HAS_BEEN_MAPPED for a partial
 *       MDL). KernelMode and UserMode map to the same address (one address space).
 *       RequestedAddress must be NULL (else NULL is returned, or with BugCheckOnFailure the
 *       failure is reported and aborts); an MDL already mapped, or neither locked nor built,
 *       is reported and aborts. CacheType and Priority are accepted.
 *   MmUnmapLockedPages(BaseAddress, Mdl)  forgets the mapping; BaseAddress must be the one
 *       returned (else reported and aborts).
 *   MmPrepareMdlForReuse  the WDK macro: unmaps a partial MDL that has been mapped. */
#ifndef SOFTNDK_MEMORY_CACHING_TYPE_DEFINED
#define SOFTNDK_MEMORY_CACHING_TYPE_DEFINED
typedef enum _MEMORY_CACHING_TYPE {
    MmNonCached = FALSE,
    MmCached = TRUE,
    MmWriteCombined = 2,
    MmHardwareCoherentCached,
    MmNonCachedUnordered,
    MmUSWCCached,
    MmMaximumCacheType,
    MmNotMapped = -1
} MEMORY_CACHING_TYPE;
#endif
#define MM_DONT_ZERO_ALLOCATION               0x00000001
#define MM_ALLOCATE_FROM_LOCAL_NODE_ONLY      0x00000002
#define MM_ALLOCATE_FULLY_REQUIRED            0x00000004
#define MM_ALLOCATE_NO_WAIT                   0x00000008
#define MM_ALLOCATE_PREFER_CONTIGUOUS         0x00000010
#define MM_ALLOCATE_REQUIRE_CONTIGUOUS_CHUNKS 0x00000020
#define MM_ALLOCATE_FAST_LARGE_PAGES          0x00000040
#define MM_ALLOCATE_TRIM_IF_NECESSARY         0x00000080
#define MM_ALLOCATE_AND_HOT_REMOVE            0x00000100

_IRQL_requires_max_(DISPATCH_LEVEL) PMDL NTAPI
    MmAllocatePagesForMdl(_In_ PHYSICAL_ADDRESS LowAddress, _In_ PHYSICAL_ADDRESS HighAddress,
                          _In_ PHYSICAL_ADDRESS SkipBytes, _In_ SIZE_T TotalBytes);
_IRQL_requires_max_(DISPATCH_LEVEL) PMDL NTAPI
    MmAllocatePagesForMdlEx(_In_ PHYSICAL_ADDRESS LowAddress, _In_ PHYSICAL_ADDRESS HighAddress,
                            _In_ PHYSICAL_ADDRESS SkipBytes, _In_ SIZE_T TotalBytes,
                            _In_ MEMORY_CACHING_TYPE CacheType, _In_ ULONG Flags);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    MmFreePagesFromMdl(_Inout_ PMDL MemoryDescriptorList);
_IRQL_requires_max_(DISPATCH_LEVEL) PVOID NTAPI
    MmMapLockedPagesSpecifyCache(_Inout_ PMDL MemoryDescriptorList, _In_ KPROCESSOR_MODE AccessMode,
                                 _In_ MEMORY_CACHING_TYPE CacheType,
                                 _In_opt_ PVOID RequestedAddress, _In_ ULONG BugCheckOnFailure,
                                 _In_ ULONG Priority);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    MmUnmapLockedPages(_In_ PVOID BaseAddress, _Inout_ PMDL MemoryDescriptorList);
#define MmPrepareMdlForReuse(Mdl)                                        \
    do {                                                                 \
        if (((Mdl)->MdlFlags & MDL_PARTIAL_HAS_BEEN_MAPPED) != 0) {      \
            NT_ASSERT(((Mdl)->MdlFlags & MDL_PARTIAL) != 0);             \
            MmUnmapLockedPages((Mdl)->MappedSystemVa, (Mdl));            \
        } else if (((Mdl)->MdlFlags & MDL_PARTIAL) == 0) {               \
            NT_ASSERT(((Mdl)->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) == 0); \
        }                                                                \
    } while (0)

/* ---- Probing user buffers. There is one address space, so every address below the top of
 * the user address space (MM_USER_PROBE_ADDRESS, Windows x64's 0x7FFFFFFF0000) passes.
 * ProbeForRead(Address, Length, Alignment): nothing for Length 0; Alignment must be 1, 2, 4, 8
 * or 16 (else reported and aborts, Windows asserts); a misaligned Address raises
 * STATUS_DATATYPE_MISALIGNMENT and a range that wraps or ends above MM_USER_PROBE_ADDRESS
 * raises STATUS_ACCESS_VIOLATION. With no structured exception handling, "raise" is what an
 * unhandled raise is on Windows: bug check KMODE_EXCEPTION_NOT_HANDLED (parameter 1 = the
 * status), reported and aborted - a driver that relies on __try/__except around ProbeForRead
 * cannot recover from a bad buffer here. */
#define MM_USER_PROBE_ADDRESS ((ULONG_PTR)0x7FFFFFFF0000ULL)
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI
    ProbeForRead(_In_reads_bytes_(Length) const volatile VOID *Address, _In_ SIZE_T Length,
                 _In_ ULONG Alignment);

/* ---- Debugger hooks and free-build assertions.
 *   DbgBreakPoint            under a debugger (TracerPid in /proc/self/status is not 0) raises
 *                            SIGTRAP, so the debugger stops at the caller; otherwise it logs a
 *                            warning ("DbgBreakPoint without a debugger") through the "wdk"
 *                            logger and returns. (Windows without a kernel debugger would
 *                            bug-check on the breakpoint; a development tool lets it pass.)
 *   DbgRaiseAssertionFailure()  an assertion failure, as NT_ASSERT's: reported with file, line
 *                            and function, then abort() (wdm.h's assertions).
 *   NT_FRE_ASSERT / NT_FRE_ASSERTMSG  assertions kept in free builds: here the same as
 *                            NT_ASSERT / NT_ASSERTMSG, which are never compiled out. */
VOID NTAPI DbgBreakPoint(VOID);
#define DbgRaiseAssertionFailure() \
    SoftNdkAssertionFailure("DbgRaiseAssertionFailure()", (PCSTR)NULL, __FILE__, __LINE__, __func__)
#define NT_FRE_ASSERT(_exp)          NT_ASSERT(_exp)
#define NT_FRE_ASSERTMSG(_msg, _exp) NT_ASSERTMSG(_msg, _exp)

/* ---- Stack traces. RtlCaptureStackBackTrace stores up to FramesToCapture return addresses of
 * the caller's stack (glibc backtrace(); the caller's own frame first after FramesToSkip are
 * skipped) in BackTrace, and, if BackTraceHash is given, their sum (Windows' hash) in it;
 * returns how many it stored. Frames without frame information may be missing. */
USHORT NTAPI RtlCaptureStackBackTrace(_In_ ULONG FramesToSkip, _In_ ULONG FramesToCapture,
                                      _Out_writes_to_(FramesToCapture, return ) PVOID *BackTrace,
                                      _Out_opt_ PULONG BackTraceHash);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_SOFTNDK_WDM_EXEC_H */
