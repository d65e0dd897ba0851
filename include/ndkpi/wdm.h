/*
 * wdm.h - SoftNDK user-mode stand-in for the Windows Driver Model header.
 *
 * It holds the kernel TYPES that ndkpi.h and typical NDK consumers need (IRQL,
 * affinity, MDL, spin lock, dispatcher objects, pool types) and declares the
 * kernel FUNCTIONS that the SoftNDK WDK runtime library (runtime/, CMake target
 * softndk_wdk) implements in user mode:
 *
 *   IRQL        KeGetCurrentIrql, KeRaiseIrql, KeLowerIrql, KeRaiseIrqlToDpcLevel
 *   spin locks  KeInitializeSpinLock, KeAcquireSpinLock, KeReleaseSpinLock,
 *               Ke{Acquire,Release}SpinLock{At,From}DpcLevel, KeTryToAcquire..., KeTestSpinLock
 *   events      KeInitializeEvent, KeSetEvent, KeResetEvent, KeClearEvent, KeReadStateEvent,
 *               KeWaitForSingleObject, KeWaitForMultipleObjects
 *   time        KeQueryPerformanceCounter, KeQuerySystemTime[Precise],
 *               KeQueryInterruptTime[Precise], KeQueryUnbiasedInterruptTime,
 *               KeDelayExecutionThread, KeStallExecutionProcessor
 *   pool        ExAllocatePoolWithTag, ExAllocatePool2, ExAllocatePoolZero, ExFreePool[WithTag]
 *   MDLs        IoAllocateMdl, IoFreeMdl, MmBuildMdlForNonPagedPool, MmProbeAndLockPages,
 *               MmUnlockPages, MmGetSystemAddressForMdlSafe, MmSizeOfMdl, MmInitializeMdl
 *   debugging   DbgPrint, DbgPrintEx, vDbgPrintEx, KdPrint, KdPrintEx, NT_ASSERT, NT_VERIFY,
 *               ASSERT, KeBugCheckEx
 *
 * Where Windows bug-checks (lowering IRQL above the current level, waiting with
 * a timeout at DISPATCH_LEVEL, freeing pool with the wrong tag, ...) the runtime
 * reports "*** BUGCHECK <code> (<name>)" with the reason through the "wdk" logger
 * and stderr, then calls abort(): code that gets away with it here would crash
 * a Windows machine.
 *
 * Compiles as C11 and as C++20, alone or after <sys/socket.h>.
 */
#ifndef _WDMDDK_
#define _WDMDDK_

#include <stdarg.h>
#include <string.h>

#include <ntdef.h>
#include <ntstatus.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Interrupt request levels. User mode has no IRQL; the runtime keeps a
 * per-thread value so that code which raises and lowers it stays balanced. */
typedef UCHAR KIRQL, *PKIRQL;
#define PASSIVE_LEVEL 0
#define LOW_LEVEL 0
#define APC_LEVEL 1
#define DISPATCH_LEVEL 2
#define HIGH_LEVEL 15

/* ---- Processor affinity. */
typedef ULONG_PTR KAFFINITY, *PKAFFINITY;
typedef struct _GROUP_AFFINITY {
    KAFFINITY Mask;
    USHORT Group;
    USHORT Reserved[3];
} GROUP_AFFINITY, *PGROUP_AFFINITY;

/* ---- Pages. */
#define PAGE_SIZE 0x1000
#define PAGE_SHIFT 12L
#define BYTE_OFFSET(Va) ((ULONG)((LONG_PTR)(Va) & (PAGE_SIZE - 1)))
#define PAGE_ALIGN(Va) ((PVOID)((ULONG_PTR)(Va) & ~((ULONG_PTR)PAGE_SIZE - 1)))
#define ROUND_TO_PAGES(Size) (((ULONG_PTR)(Size) + PAGE_SIZE - 1) & ~((ULONG_PTR)PAGE_SIZE - 1))
#define ADDRESS_AND_SIZE_TO_SPAN_PAGES(Va, Size) \
    ((ULONG)((((ULONG_PTR)(Size)) >> PAGE_SHIFT) + \
             ((BYTE_OFFSET(Va) + BYTE_OFFSET(Size) + PAGE_SIZE - 1) >> PAGE_SHIFT)))
#define BYTES_TO_PAGES(Size) ((ULONG)(((ULONG_PTR)(Size) >> PAGE_SHIFT) + (((Size) & (PAGE_SIZE - 1)) != 0)))

/* ---- Memory descriptor list. x64 layout: 48 bytes, followed in memory by an
 * array of PFN_NUMBER (one per page spanned). */
typedef ULONG_PTR PFN_NUMBER, *PPFN_NUMBER;
struct _EPROCESS;
typedef struct _MDL {
    struct _MDL *Next;
    CSHORT Size;
    CSHORT MdlFlags;
    USHORT AllocationProcessorNumber;
    USHORT Reserved;
    struct _EPROCESS *Process;
    PVOID MappedSystemVa;
    PVOID StartVa;
    ULONG ByteCount;
    ULONG ByteOffset;
} MDL, *PMDL;
typedef MDL *PMDLX;

#define MDL_MAPPED_TO_SYSTEM_VA 0x0001
#define MDL_PAGES_LOCKED 0x0002
#define MDL_SOURCE_IS_NONPAGED_POOL 0x0004
#define MDL_ALLOCATED_FIXED_SIZE 0x0008
#define MDL_PARTIAL 0x0010
#define MDL_PARTIAL_HAS_BEEN_MAPPED 0x0020
#define MDL_IO_PAGE_READ 0x0040
#define MDL_WRITE_OPERATION 0x0080
#define MDL_LOCKED_PAGE_TABLES 0x0100
#define MDL_FREE_EXTRA_PTES 0x0200
#define MDL_DESCRIBES_AWE 0x0400
#define MDL_IO_SPACE 0x0800
#define MDL_NETWORK_HEADER 0x1000
#define MDL_MAPPING_CAN_FAIL 0x2000
#define MDL_ALLOCATED_MUST_SUCCEED 0x4000
#define MDL_INTERNAL 0x8000

#define MmGetMdlPfnArray(Mdl) ((PPFN_NUMBER)((Mdl) + 1))
#define MmGetMdlVirtualAddress(Mdl) ((PVOID)((PCHAR)((Mdl)->StartVa) + (Mdl)->ByteOffset))
#define MmGetMdlByteCount(Mdl) ((Mdl)->ByteCount)
#define MmGetMdlByteOffset(Mdl) ((Mdl)->ByteOffset)
#define MmGetMdlBaseVa(Mdl) ((Mdl)->StartVa)

/* ---- Spin lock: a pointer-sized word, as on Windows. */
typedef ULONG_PTR KSPIN_LOCK, *PKSPIN_LOCK;

/* ---- Opaque kernel objects referenced by pointer only. */
struct _IRP;
typedef struct _IRP IRP, *PIRP;
struct _DEVICE_OBJECT;
typedef struct _DEVICE_OBJECT *PDEVICE_OBJECT;
struct _DRIVER_OBJECT;
typedef struct _DRIVER_OBJECT *PDRIVER_OBJECT;
struct _ETHREAD;
typedef struct _EPROCESS *PEPROCESS;
typedef struct _ETHREAD *PETHREAD;
typedef PVOID PSECURITY_DESCRIPTOR;

/* ---- Processor mode and priority increments (accepted and ignored: there is
 * one address space and the Linux scheduler does the scheduling). */
typedef CHAR KPROCESSOR_MODE;
typedef enum _MODE { KernelMode, UserMode, MaximumMode } MODE;
typedef LONG KPRIORITY;
#define IO_NO_INCREMENT 0
#define EVENT_INCREMENT 1
#define IO_NETWORK_INCREMENT 2

/* ---- Bug checks. KeBugCheckEx never returns: it reports the code, its name
 * and the four parameters through the "wdk" logger and stderr, then calls
 * abort(). The codes below are the ones the runtime itself raises. */
#define IRQL_NOT_GREATER_OR_EQUAL 0x00000009
#define IRQL_NOT_LESS_OR_EQUAL 0x0000000A
#define MAXIMUM_WAIT_OBJECTS_EXCEEDED 0x0000000C
#define SPIN_LOCK_ALREADY_OWNED 0x0000000F
#define SPIN_LOCK_NOT_OWNED 0x00000010
#define KMODE_EXCEPTION_NOT_HANDLED 0x0000001E
#define BAD_POOL_CALLER 0x000000C2

DECLSPEC_NORETURN VOID NTAPI KeBugCheckEx(_In_ ULONG BugCheckCode,
                                          _In_ ULONG_PTR BugCheckParameter1,
                                          _In_ ULONG_PTR BugCheckParameter2,
                                          _In_ ULONG_PTR BugCheckParameter3,
                                          _In_ ULONG_PTR BugCheckParameter4);
DECLSPEC_NORETURN VOID NTAPI KeBugCheck(_In_ ULONG BugCheckCode);

/* ---- IRQL. Each thread has its own IRQL, PASSIVE_LEVEL when it starts. It is
 * bookkeeping only - raising it masks nothing and does not stop preemption -
 * but the runtime enforces Windows' rules on it: raising to a lower level
 * (IRQL_NOT_GREATER_OR_EQUAL), lowering to a higher level, waiting above
 * DISPATCH_LEVEL or with a timeout other than 0 at DISPATCH_LEVEL, and
 * KeDelayExecutionThread above APC_LEVEL (IRQL_NOT_LESS_OR_EQUAL) bug-check. */
_IRQL_requires_max_(HIGH_LEVEL)
KIRQL NTAPI KeGetCurrentIrql(VOID);
KIRQL NTAPI KfRaiseIrql(_In_ KIRQL NewIrql);
#define KeRaiseIrql(NewIrql, OldIrql) (*(OldIrql) = KfRaiseIrql(NewIrql))
VOID NTAPI KeLowerIrql(_In_ KIRQL NewIrql);
KIRQL NTAPI KeRaiseIrqlToDpcLevel(VOID);

/* ---- Spin locks. The lock is the pointer-sized KSPIN_LOCK word itself:
 * 0 when free (so a zeroed lock is a valid, free lock), otherwise a value that
 * identifies the owning thread. Acquiring spins with the CPU's pause hint,
 * then yields the processor between attempts; it never sleeps on a kernel
 * object. KeAcquireSpinLock raises the IRQL to DISPATCH_LEVEL and stores the
 * previous IRQL in *OldIrql, as in the WDK. Re-acquiring a lock the thread
 * already owns (a deadlock on Windows) bug-checks SPIN_LOCK_ALREADY_OWNED;
 * releasing a free lock bug-checks SPIN_LOCK_NOT_OWNED. */
VOID NTAPI KeInitializeSpinLock(_Out_ PKSPIN_LOCK SpinLock);
_IRQL_raises_(DISPATCH_LEVEL)
KIRQL NTAPI KeAcquireSpinLockRaiseToDpc(_Inout_ PKSPIN_LOCK SpinLock);
#define KeAcquireSpinLock(SpinLock, OldIrql) (*(OldIrql) = KeAcquireSpinLockRaiseToDpc(SpinLock))
VOID NTAPI KeReleaseSpinLock(_Inout_ PKSPIN_LOCK SpinLock, _In_ KIRQL NewIrql);
VOID NTAPI KeAcquireSpinLockAtDpcLevel(_Inout_ PKSPIN_LOCK SpinLock);
VOID NTAPI KeReleaseSpinLockFromDpcLevel(_Inout_ PKSPIN_LOCK SpinLock);
BOOLEAN NTAPI KeTryToAcquireSpinLockAtDpcLevel(_Inout_ PKSPIN_LOCK SpinLock);
BOOLEAN NTAPI KeTestSpinLock(_In_ PKSPIN_LOCK SpinLock); /* TRUE if the lock looks free */

/* ---- Dispatcher objects: events and waits.
 *
 * KEVENT is 24 bytes, Windows' x64 size, so consumer structures that embed one
 * keep their size and field offsets. Its DISPATCHER_HEADER keeps the public
 * fields at their Windows offsets (Type @0, Size @2, SignalState @4,
 * WaitListHead @8) but is not Windows' full union: Lock, Signalling and the
 * other bit fields do not exist, and WaitListHead is never used.
 *
 * An all-zero KEVENT is a valid, unsignalled notification event (Type 0 is
 * NotificationEvent, SignalState 0 is not signalled), so code that only
 * RtlZeroMemory's an event may wait on it and set it. Only events are
 * dispatcher objects here: waiting on anything else (Type > 1) is reported and
 * aborts.
 *
 * Design - why an event may live on the waiter's stack:
 *   The event itself holds nothing but its type and SignalState. Waiting
 *   threads are recorded in a process-wide table (hashed on the object's
 *   address) of KWAIT_BLOCKs that live on the waiting threads' stacks, and the
 *   whole table, together with every SignalState change made by KeSetEvent,
 *   KeResetEvent, KeClearEvent and the waits, is guarded by one process-wide
 *   dispatcher lock (Windows before 7 had the same single dispatcher lock).
 *   KeSetEvent, under that lock, hands the signal directly to the waiters it
 *   satisfies (FIFO; a SynchronizationEvent to exactly one of them, in which
 *   case SignalState never becomes 1), and its last access to the event is
 *   the store that publishes SignalState = 1 when no waiter consumed it. A
 *   waiter it satisfied only learns so by taking the lock, i.e. after
 *   KeSetEvent has released it, so once KeWaitForSingleObject returns nothing
 *   inside the runtime touches the event again and the caller may let it go out
 *   of scope. A waiter that times out removes its wait blocks under the same
 *   lock before it returns. KeReadStateEvent reads SignalState without the
 *   lock (an acquire load), which is also safe against the setter because the
 *   publishing store is the setter's last access.
 *   The price is one lock for all events of the process; the lock is held for
 *   a few memory operations and one wake-up per satisfied waiter, never across
 *   a sleep. It is a mutex, so KeSetEvent may block briefly (never spin) at
 *   DISPATCH_LEVEL, which a user-mode program can afford.
 *
 * Alertable and WaitMode are accepted and ignored (there are no APCs), so
 * waits never return STATUS_ALERTED or STATUS_USER_APC. Timeout: NULL waits
 * forever; 0 tests the objects and returns at once; negative is relative, in
 * 100 ns units, measured on CLOCK_MONOTONIC; positive is an absolute system
 * time (100 ns units since 1601-01-01 UTC, as KeQuerySystemTime returns),
 * converted once to a relative timeout when the wait starts. */
typedef enum _EVENT_TYPE { NotificationEvent, SynchronizationEvent } EVENT_TYPE;
typedef enum _WAIT_TYPE { WaitAll, WaitAny, WaitNotification, WaitDequeue, WaitDpc } WAIT_TYPE;
typedef enum _KWAIT_REASON {
    Executive,
    FreePage,
    PageIn,
    PoolAllocation,
    DelayExecution,
    Suspended,
    UserRequest,
    WrExecutive,
    WrFreePage,
    WrPageIn,
    WrPoolAllocation,
    WrDelayExecution,
    WrSuspended,
    WrUserRequest
} KWAIT_REASON;

typedef struct _DISPATCHER_HEADER {
    UCHAR Type;       /* EVENT_TYPE of an event: 0 notification, 1 synchronization */
    UCHAR Reserved1;
    UCHAR Size;       /* sizeof(KEVENT) / sizeof(LONG) after KeInitializeEvent, else 0 */
    UCHAR Reserved2;
    LONG SignalState; /* 0 not signalled, 1 signalled; use KeReadStateEvent */
    LIST_ENTRY WaitListHead; /* unused; KeInitializeEvent makes it an empty list */
} DISPATCHER_HEADER, *PDISPATCHER_HEADER;

typedef struct _KEVENT {
    DISPATCHER_HEADER Header;
} KEVENT, *PKEVENT, *PRKEVENT;

/* A wait block links a waiting thread to one object. Windows x64 size (48
 * bytes); the members are runtime-private. */
typedef struct _KWAIT_BLOCK {
    LIST_ENTRY WaitListEntry;
    UCHAR WaitType;
    UCHAR BlockState;
    USHORT WaitKey;
    LONG SpareLong;
    PVOID Thread;
    PVOID Object;
    PVOID SparePtr;
} KWAIT_BLOCK, *PKWAIT_BLOCK, *PRKWAIT_BLOCK;

/* Waits on up to THREAD_WAIT_OBJECTS objects use wait blocks on the waiter's
 * stack; more (up to MAXIMUM_WAIT_OBJECTS) need a caller-supplied WaitBlockArray
 * of Count elements, or the wait bug-checks MAXIMUM_WAIT_OBJECTS_EXCEEDED. */
#define THREAD_WAIT_OBJECTS 3
#define MAXIMUM_WAIT_OBJECTS 64

VOID NTAPI KeInitializeEvent(_Out_ PRKEVENT Event, _In_ EVENT_TYPE Type, _In_ BOOLEAN State);
/* Returns the previous SignalState. Increment and Wait are ignored. */
LONG NTAPI KeSetEvent(_Inout_ PRKEVENT Event, _In_ KPRIORITY Increment, _In_ BOOLEAN Wait);
LONG NTAPI KeResetEvent(_Inout_ PRKEVENT Event); /* returns the previous SignalState */
VOID NTAPI KeClearEvent(_Inout_ PRKEVENT Event);
LONG NTAPI KeReadStateEvent(_In_ PRKEVENT Event);

/* STATUS_SUCCESS, or STATUS_TIMEOUT. Bug-checks IRQL_NOT_LESS_OR_EQUAL above
 * DISPATCH_LEVEL, or at DISPATCH_LEVEL with a timeout other than 0. */
NTSTATUS NTAPI KeWaitForSingleObject(_In_ PVOID Object, _In_ KWAIT_REASON WaitReason,
                                     _In_ KPROCESSOR_MODE WaitMode, _In_ BOOLEAN Alertable,
                                     _In_opt_ PLARGE_INTEGER Timeout);
/* WaitAny: STATUS_WAIT_0 + the lowest index of a signalled object (only that
 * object is consumed). WaitAll: STATUS_SUCCESS once all are signalled at the
 * same time (all synchronization events among them are consumed together).
 * STATUS_TIMEOUT otherwise. */
NTSTATUS NTAPI KeWaitForMultipleObjects(_In_ ULONG Count, _In_reads_(Count) PVOID Object[],
                                        _In_ WAIT_TYPE WaitType, _In_ KWAIT_REASON WaitReason,
                                        _In_ KPROCESSOR_MODE WaitMode, _In_ BOOLEAN Alertable,
                                        _In_opt_ PLARGE_INTEGER Timeout,
                                        _Out_opt_ PKWAIT_BLOCK WaitBlockArray);

/* ---- Time. All values are in 100 ns units.
 *   KeQueryPerformanceCounter   CLOCK_MONOTONIC; frequency 10 MHz (as on Windows 10+)
 *   KeQuerySystemTime[Precise]  CLOCK_REALTIME[_COARSE] as 100 ns since 1601-01-01 UTC
 *   KeQueryInterruptTime[...]   CLOCK_BOOTTIME (includes suspend, like interrupt time)
 *   KeQueryUnbiasedInterruptTime CLOCK_MONOTONIC (excludes suspend)
 * KeDelayExecutionThread sleeps (Interval as for waits; 0 yields) and needs
 * IRQL <= APC_LEVEL; KeStallExecutionProcessor busy-waits at any IRQL. */
LARGE_INTEGER NTAPI KeQueryPerformanceCounter(_Out_opt_ PLARGE_INTEGER PerformanceFrequency);
VOID NTAPI KeQuerySystemTime(_Out_ PLARGE_INTEGER CurrentTime);
VOID NTAPI KeQuerySystemTimePrecise(_Out_ PLARGE_INTEGER CurrentTime);
ULONGLONG NTAPI KeQueryInterruptTime(VOID);
ULONG64 NTAPI KeQueryInterruptTimePrecise(_Out_ PULONG64 QpcTimeStamp);
ULONGLONG NTAPI KeQueryUnbiasedInterruptTime(VOID);
NTSTATUS NTAPI KeDelayExecutionThread(_In_ KPROCESSOR_MODE WaitMode, _In_ BOOLEAN Alertable,
                                      _In_ PLARGE_INTEGER Interval);
VOID NTAPI KeStallExecutionProcessor(_In_ ULONG MicroSeconds);

/* ---- Pool. Every allocation is preceded by a 32-byte header that keeps the
 * tag, the size and a magic word; ExFreePoolWithTag with a non-zero tag that
 * differs from the allocation's bug-checks BAD_POOL_CALLER, as does freeing
 * NULL or a block that is not (or no longer) a pool allocation. Allocations of
 * PAGE_SIZE or more start on a page boundary, as on Windows; smaller ones are
 * 16-byte aligned (64-byte for the cache-aligned pool types and
 * POOL_FLAG_CACHE_ALIGNED). Paged, non-paged, NX and session pools are all the
 * C heap; a page-aligned block costs one extra page (its header's). Requests
 * above 2^40 bytes fail. Nothing is zeroed except by ExAllocatePool2 and
 * ExAllocatePoolZero. */
typedef enum _POOL_TYPE {
    NonPagedPool,
    NonPagedPoolExecute = NonPagedPool,
    PagedPool,
    NonPagedPoolMustSucceed = NonPagedPool + 2,
    DontUseThisType,
    NonPagedPoolCacheAligned = NonPagedPool + 4,
    PagedPoolCacheAligned,
    NonPagedPoolCacheAlignedMustS = NonPagedPool + 6,
    MaxPoolType,
    NonPagedPoolBase = 0,
    NonPagedPoolBaseMustSucceed = NonPagedPoolBase + 2,
    NonPagedPoolBaseCacheAligned = NonPagedPoolBase + 4,
    NonPagedPoolBaseCacheAlignedMustS = NonPagedPoolBase + 6,
    NonPagedPoolSession = 32,
    PagedPoolSession = NonPagedPoolSession + 1,
    NonPagedPoolMustSucceedSession = PagedPoolSession + 1,
    DontUseThisTypeSession = NonPagedPoolMustSucceedSession + 1,
    NonPagedPoolCacheAlignedSession = DontUseThisTypeSession + 1,
    PagedPoolCacheAlignedSession = NonPagedPoolCacheAlignedSession + 1,
    NonPagedPoolCacheAlignedMustSSession = PagedPoolCacheAlignedSession + 1,
    NonPagedPoolNx = 512,
    NonPagedPoolNxCacheAligned = NonPagedPoolNx + 4,
    NonPagedPoolSessionNx = NonPagedPoolNx + 32
} POOL_TYPE;
/* Modifier OR'ed into a POOL_TYPE: bug-check instead of returning NULL. */
#define POOL_RAISE_IF_ALLOCATION_FAILURE 16

typedef ULONG64 POOL_FLAGS;
#define POOL_FLAG_REQUIRED_START 0x0000000000000001ULL
#define POOL_FLAG_USE_QUOTA 0x0000000000000001ULL         /* accepted, no quota */
#define POOL_FLAG_UNINITIALIZED 0x0000000000000002ULL     /* do not zero */
#define POOL_FLAG_SESSION 0x0000000000000004ULL
#define POOL_FLAG_CACHE_ALIGNED 0x0000000000000008ULL
#define POOL_FLAG_RESERVED1 0x0000000000000010ULL
#define POOL_FLAG_RAISE_ON_FAILURE 0x0000000000000020ULL  /* bug-check instead of NULL */
#define POOL_FLAG_NON_PAGED 0x0000000000000040ULL
#define POOL_FLAG_NON_PAGED_EXECUTE 0x0000000000000080ULL
#define POOL_FLAG_PAGED 0x0000000000000100ULL
#define POOL_FLAG_RESERVED2 0x0000000000000200ULL
#define POOL_FLAG_RESERVED3 0x0000000000000400ULL
#define POOL_FLAG_REQUIRED_END 0x0000000080000000ULL
#define POOL_FLAG_OPTIONAL_START 0x0000000100000000ULL
#define POOL_FLAG_SPECIAL_POOL 0x0000000100000000ULL      /* accepted, ignored */
#define POOL_FLAG_OPTIONAL_END 0x8000000000000000ULL

PVOID NTAPI ExAllocatePoolWithTag(_In_ POOL_TYPE PoolType, _In_ SIZE_T NumberOfBytes,
                                  _In_ ULONG Tag);
/* Zeroes the block unless POOL_FLAG_UNINITIALIZED. Exactly one of
 * POOL_FLAG_NON_PAGED, POOL_FLAG_NON_PAGED_EXECUTE and POOL_FLAG_PAGED is
 * required, and no unknown or reserved flag below POOL_FLAG_OPTIONAL_START;
 * otherwise NULL. Returns NULL on failure unless POOL_FLAG_RAISE_ON_FAILURE,
 * which bug-checks KMODE_EXCEPTION_NOT_HANDLED instead (Windows raises
 * STATUS_INSUFFICIENT_RESOURCES, and there is no SEH here to catch it). */
PVOID NTAPI ExAllocatePool2(_In_ POOL_FLAGS Flags, _In_ SIZE_T NumberOfBytes, _In_ ULONG Tag);
PVOID NTAPI ExAllocatePoolZero(_In_ POOL_TYPE PoolType, _In_ SIZE_T NumberOfBytes, _In_ ULONG Tag);
VOID NTAPI ExFreePool(_In_ PVOID P);
VOID NTAPI ExFreePoolWithTag(_In_ PVOID P, _In_ ULONG Tag);

/* ---- MDL services. SoftNDK runs in one process, so a "system address" is the
 * process virtual address, and the PFN array holds virtual page numbers
 * (VA >> PAGE_SHIFT, consecutive for a contiguous buffer), not physical ones:
 * the SoftNDK device reaches memory by process VA. MmProbeAndLockPages fills
 * the PFN array and sets MDL_PAGES_LOCKED (and MDL_WRITE_OPERATION unless
 * IoReadAccess) but does not probe or pin anything: Linux user pages stay
 * pageable, which is harmless because no real DMA reads them.
 *
 * IoAllocateMdl allocates the MDL and its PFN array from pool
 * (MmSizeOfMdl bytes) and initialises it as MmInitializeMdl does: StartVa =
 * PAGE_ALIGN(va), ByteOffset = BYTE_OFFSET(va), ByteCount = Length, Size =
 * sizeof(MDL) + pages * sizeof(PFN_NUMBER) - cast to CSHORT exactly like the
 * WDK's MmInitializeMdl, so Size wraps for MDLs spanning more than 4089 pages
 * (about 16 MB); count PFNs with ADDRESS_AND_SIZE_TO_SPAN_PAGES instead.
 * Lengths above 4 GB - PAGE_SIZE fail (NULL), as on Windows 7 and later. There
 * are no IRPs: a non-NULL Irp is ignored with a warning, and SecondaryBuffer
 * and ChargeQuota have no effect. */
typedef enum _LOCK_OPERATION { IoReadAccess, IoWriteAccess, IoModifyAccess } LOCK_OPERATION;
typedef enum _MM_PAGE_PRIORITY {
    LowPagePriority,
    NormalPagePriority = 16,
    HighPagePriority = 32
} MM_PAGE_PRIORITY;
#define MdlMappingNoWrite 0x80000000
#define MdlMappingNoExecute 0x40000000

#define MmInitializeMdl(MemoryDescriptorList, BaseVa, Length)                                   \
    do {                                                                                        \
        (MemoryDescriptorList)->Next = (PMDL)NULL;                                              \
        (MemoryDescriptorList)->Size =                                                          \
            (CSHORT)(sizeof(MDL) +                                                              \
                     (sizeof(PFN_NUMBER) * ADDRESS_AND_SIZE_TO_SPAN_PAGES((BaseVa), (Length)))); \
        (MemoryDescriptorList)->MdlFlags = 0;                                                   \
        (MemoryDescriptorList)->StartVa = (PVOID)PAGE_ALIGN((BaseVa));                          \
        (MemoryDescriptorList)->ByteOffset = BYTE_OFFSET((BaseVa));                             \
        (MemoryDescriptorList)->ByteCount = (ULONG)(Length);                                    \
    } while (0)

SIZE_T NTAPI MmSizeOfMdl(_In_opt_ PVOID Base, _In_ SIZE_T Length);
PMDL NTAPI IoAllocateMdl(_In_opt_ PVOID VirtualAddress, _In_ ULONG Length,
                         _In_ BOOLEAN SecondaryBuffer, _In_ BOOLEAN ChargeQuota,
                         _Inout_opt_ PIRP Irp);
VOID NTAPI IoFreeMdl(_In_ PMDL Mdl);
/* Fills the PFN array, sets MappedSystemVa = StartVa + ByteOffset and
 * MDL_SOURCE_IS_NONPAGED_POOL. */
VOID NTAPI MmBuildMdlForNonPagedPool(_Inout_ PMDL MemoryDescriptorList);
VOID NTAPI MmProbeAndLockPages(_Inout_ PMDL MemoryDescriptorList, _In_ KPROCESSOR_MODE AccessMode,
                               _In_ LOCK_OPERATION Operation);
/* Clears MDL_PAGES_LOCKED (and any system mapping). The pages must be locked. */
VOID NTAPI MmUnlockPages(_Inout_ PMDL MemoryDescriptorList);
/* Returns MmGetMdlVirtualAddress(Mdl) and records it as the MDL's system
 * mapping. The MDL must be locked or built for non-paged pool, as on Windows
 * (otherwise the runtime reports the misuse and aborts). Priority is ignored. */
PVOID NTAPI MmGetSystemAddressForMdlSafe(_Inout_ PMDL Mdl, _In_ ULONG Priority);

/* ---- Memory helpers. */
#ifndef RtlZeroMemory
#define RtlEqualMemory(Destination, Source, Length) (!memcmp((Destination), (Source), (Length)))
#define RtlMoveMemory(Destination, Source, Length) memmove((Destination), (Source), (Length))
#define RtlCopyMemory(Destination, Source, Length) memcpy((Destination), (Source), (Length))
#define RtlFillMemory(Destination, Length, Fill) memset((Destination), (Fill), (Length))
#define RtlZeroMemory(Destination, Length) memset((Destination), 0, (Length))
#endif

/* ---- Debug output. DbgPrint, DbgPrintEx and KdPrint((...)) go to the spdlog
 * logger "wdk" (stderr; never stdout), whose level comes from SOFTNDK_LOG_LEVEL
 * (trace, debug, info, warn, error, off; default warn). DbgPrintEx levels map
 * to DPFLTR_ERROR_LEVEL -> error, WARNING -> warn, TRACE -> debug,
 * INFO -> info, higher -> trace (with DPFLTR_MASK, the lowest bit set is the
 * level); DbgPrint logs at info (it is DbgPrintEx at DPFLTR_INFO_LEVEL). The
 * component ID is not used for filtering. KdPrint is active in every build
 * (DBG is not consulted); the log level filters it.
 *
 * Formats follow Windows' printf, not glibc's: "l" means 32 bits (ULONG with
 * %lu/%lx), I64 / I32 / I (pointer-sized) size prefixes, %ws / %ls / %S wide
 * strings, %wZ PUNICODE_STRING, %Z PANSI_STRING, %hs / %hc narrow, %wc / %C
 * wide characters (wide text is converted to UTF-8); %n writes nothing. No
 * format attribute is declared, so -Wformat does not reject these spellings.
 * Trailing newlines are dropped (the logger ends each record). */
#define DPFLTR_ERROR_LEVEL 0
#define DPFLTR_WARNING_LEVEL 1
#define DPFLTR_TRACE_LEVEL 2
#define DPFLTR_INFO_LEVEL 3
#define DPFLTR_MASK 0x80000000
#define DPFLTR_IHVDRIVER_ID 77
#define DPFLTR_IHVVIDEO_ID 78
#define DPFLTR_IHVAUDIO_ID 79
#define DPFLTR_IHVNETWORK_ID 80
#define DPFLTR_IHVSTREAMING_ID 81
#define DPFLTR_IHVBUS_ID 82
#define DPFLTR_DEFAULT_ID 101

ULONG __cdecl DbgPrint(_In_ PCSTR Format, ...);
ULONG __cdecl DbgPrintEx(_In_ ULONG ComponentId, _In_ ULONG Level, _In_ PCSTR Format, ...);
ULONG NTAPI vDbgPrintEx(_In_ ULONG ComponentId, _In_ ULONG Level, _In_ PCSTR Format,
                        _In_ va_list arglist);
#define KdPrint(_x_) DbgPrint _x_
#define KdPrintEx(_x_) DbgPrintEx _x_

/* ---- Assertions. Never compiled out (DBG is not consulted): a failing
 * NT_ASSERT, NT_VERIFY or ASSERT reports the expression, the message if any,
 * the file, the line and the function through the "wdk" logger and stderr,
 * then calls abort() - what an unhandled assertion does on a Windows machine
 * without a debugger. Each evaluates its expression exactly once and, as an
 * expression, yields TRUE (so `if (NT_VERIFY(x))` works). */
DECLSPEC_NORETURN VOID NTAPI SoftNdkAssertionFailure(_In_ PCSTR Expression,
                                                     _In_opt_ PCSTR Message,
                                                     _In_ PCSTR File, _In_ ULONG Line,
                                                     _In_ PCSTR Function);

FORCEINLINE BOOLEAN SoftNdkAssertionCheck(int Passed, PCSTR Expression, PCSTR Message,
                                          PCSTR File, ULONG Line, PCSTR Function) {
    if (!Passed) {
        SoftNdkAssertionFailure(Expression, Message, File, Line, Function);
    }
    return TRUE;
}

#define NT_ASSERT(_exp) \
    SoftNdkAssertionCheck(!!(_exp), #_exp, (PCSTR)NULL, __FILE__, __LINE__, __func__)
#define NT_ASSERTMSG(_msg, _exp) \
    SoftNdkAssertionCheck(!!(_exp), #_exp, (_msg), __FILE__, __LINE__, __func__)
#define NT_VERIFY(_exp) NT_ASSERT(_exp)
#define NT_VERIFYMSG(_msg, _exp) NT_ASSERTMSG(_msg, _exp)
#define NT_ANALYSIS_ASSUME(_exp) ((void)0)
#ifndef ASSERT
#define ASSERT(_exp) NT_ASSERT(_exp)
#endif
#ifndef ASSERTMSG
#define ASSERTMSG(_msg, _exp) NT_ASSERTMSG(_msg, _exp)
#endif

/* Code that may page: the IRQL must be at most APC_LEVEL. Checked, not
 * compiled out. */
#define PAGED_CODE() ((void)NT_ASSERT(KeGetCurrentIrql() <= APC_LEVEL))

#ifdef __cplusplus
}
#endif

#endif /* _WDMDDK_ */
