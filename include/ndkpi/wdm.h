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
 *               Ke{Acquire,Release}SpinLock{At,From}DpcLevel, KeTryToAcquire..., KeTestSpinLock,
 *               Ke{Acquire,Release}InStackQueuedSpinLock[{At,From}DpcLevel]
 *   interlocked Interlocked{Increment,Decrement,Exchange,CompareExchange,ExchangeAdd,Add,Or,And,
 *               Xor}[16|64], Interlocked{Exchange,CompareExchange}Pointer, InterlockedBitTest...
 *   events      KeInitializeEvent, KeSetEvent, KeResetEvent, KeClearEvent, KeReadStateEvent,
 *               KeWaitForSingleObject, KeWaitForMultipleObjects
 *   executive   ExInitializeFastMutex, Ex{Acquire,Release}FastMutex, ExTryToAcquireFastMutex,
 *   locks       Ex{Initialize,Acquire,Release}RundownProtection, ExRundownCompleted,
 *               ExWaitForRundownProtectionRelease, ExReInitializeRundownProtection
 *   DPCs        KeInitializeDpc, KeInsertQueueDpc, KeRemoveQueueDpc, KeFlushQueuedDpcs
 *   timers      KeInitializeTimer[Ex], KeSetTimer[Ex], KeCancelTimer, KeReadStateTimer
 *   work items  IoAllocateWorkItem, IoQueueWorkItem[Ex], IoFreeWorkItem,
 *               ExInitializeWorkItem, ExQueueWorkItem
 *   threads     PsCreateSystemThread, PsTerminateSystemThread, ZwClose, ZwWaitForSingleObject,
 *               ObReferenceObjectByHandle, ObReferenceObject, ObDereferenceObject
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

#include <driverspecs.h>
#include <ntdef.h>
#include <ntstatus.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Interrupt request levels. User mode has no IRQL; the runtime keeps a
 * per-thread value so that code which raises and lowers it stays balanced. */
typedef UCHAR KIRQL, *PKIRQL;
#define PASSIVE_LEVEL  0
#define LOW_LEVEL      0
#define APC_LEVEL      1
#define DISPATCH_LEVEL 2
#define HIGH_LEVEL     15

/* ---- Processor affinity. */
typedef ULONG_PTR KAFFINITY, *PKAFFINITY;
typedef struct _GROUP_AFFINITY {
    KAFFINITY Mask;
    USHORT Group;
    USHORT Reserved[3];
} GROUP_AFFINITY, *PGROUP_AFFINITY;

/* ---- Pages. */
#define PAGE_SIZE            0x1000
#define PAGE_SHIFT           12L
#define BYTE_OFFSET(Va)      ((ULONG)((LONG_PTR)(Va) & (PAGE_SIZE - 1)))
#define PAGE_ALIGN(Va)       ((PVOID)((ULONG_PTR)(Va) & ~((ULONG_PTR)PAGE_SIZE - 1)))
#define ROUND_TO_PAGES(Size) (((ULONG_PTR)(Size) + PAGE_SIZE - 1) & ~((ULONG_PTR)PAGE_SIZE - 1))
#define ADDRESS_AND_SIZE_TO_SPAN_PAGES(Va, Size)   \
    ((ULONG)((((ULONG_PTR)(Size)) >> PAGE_SHIFT) + \
             ((BYTE_OFFSET(Va) + BYTE_OFFSET(Size) + PAGE_SIZE - 1) >> PAGE_SHIFT)))
#define BYTES_TO_PAGES(Size) \
    ((ULONG)(((ULONG_PTR)(Size) >> PAGE_SHIFT) + (((Size) & (PAGE_SIZE - 1)) != 0)))

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

#define MDL_MAPPED_TO_SYSTEM_VA     0x0001
#define MDL_PAGES_LOCKED            0x0002
#define MDL_SOURCE_IS_NONPAGED_POOL 0x0004
#define MDL_ALLOCATED_FIXED_SIZE    0x0008
#define MDL_PARTIAL                 0x0010
#define MDL_PARTIAL_HAS_BEEN_MAPPED 0x0020
#define MDL_IO_PAGE_READ            0x0040
#define MDL_WRITE_OPERATION         0x0080
#define MDL_LOCKED_PAGE_TABLES      0x0100
#define MDL_FREE_EXTRA_PTES         0x0200
#define MDL_DESCRIBES_AWE           0x0400
#define MDL_IO_SPACE                0x0800
#define MDL_NETWORK_HEADER          0x1000
#define MDL_MAPPING_CAN_FAIL        0x2000
#define MDL_ALLOCATED_MUST_SUCCEED  0x4000
#define MDL_INTERNAL                0x8000

#define MmGetMdlPfnArray(Mdl)       ((PPFN_NUMBER)((Mdl) + 1))
#define MmGetMdlVirtualAddress(Mdl) ((PVOID)((PCHAR)((Mdl)->StartVa) + (Mdl)->ByteOffset))
#define MmGetMdlByteCount(Mdl)      ((Mdl)->ByteCount)
#define MmGetMdlByteOffset(Mdl)     ((Mdl)->ByteOffset)
#define MmGetMdlBaseVa(Mdl)         ((Mdl)->StartVa)

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
#define IO_NO_INCREMENT      0
#define EVENT_INCREMENT      1
#define IO_NETWORK_INCREMENT 2

/* ---- Bug checks. KeBugCheckEx never returns: it reports the code, its name
 * and the four parameters through the "wdk" logger and stderr, then calls
 * abort(). The codes below are the ones the runtime itself raises. */
#define IRQL_NOT_GREATER_OR_EQUAL          0x00000009
#define IRQL_NOT_LESS_OR_EQUAL             0x0000000A
#define MAXIMUM_WAIT_OBJECTS_EXCEEDED      0x0000000C
#define SPIN_LOCK_ALREADY_OWNED            0x0000000F
#define SPIN_LOCK_NOT_OWNED                0x00000010
#define KMODE_EXCEPTION_NOT_HANDLED        0x0000001E
#define BAD_POOL_CALLER                    0x000000C2
#define WORKER_THREAD_RETURNED_AT_BAD_IRQL 0x000000E1
#define WORKER_INVALID                     0x000000E4

DECLSPEC_NORETURN VOID NTAPI KeBugCheckEx(_In_ ULONG BugCheckCode,
                                          _In_ ULONG_PTR BugCheckParameter1,
                                          _In_ ULONG_PTR BugCheckParameter2,
                                          _In_ ULONG_PTR BugCheckParameter3,
                                          _In_ ULONG_PTR BugCheckParameter4);
DECLSPEC_NORETURN VOID NTAPI KeBugCheck(_In_ ULONG BugCheckCode);

/* ---- Doubly and singly linked lists, as the WDK's inline helpers. A LIST_ENTRY
 * head is empty when it points to itself (InitializeListHead); a zeroed head is
 * NOT a valid list. Every insertion and removal first checks the links it is about
 * to change, as Windows' list macros do since Windows 8: a neighbour whose back
 * pointer does not point back (Flink->Blink != entry, Blink->Flink != entry) means
 * a corrupted list - a double removal, an entry freed while linked, an overrun -
 * and Windows fails fast (bug check KERNEL_SECURITY_CHECK_FAILURE, parameter 3 =
 * FAST_FAIL_CORRUPT_LIST_ENTRY). Here SoftNdkFatalListEntryError reports it the
 * same way and aborts, before anything is written.
 *   RemoveEntryList   returns TRUE if the list is empty afterwards.
 *   Remove{Head,Tail}List  on an EMPTY list return the head itself and change
 *                     nothing (Windows' behaviour: test IsListEmpty first).
 *   AppendTailList    splices a headless ring: ListToAppend is the FIRST ENTRY of
 *                     the entries to append, not a head. To move all entries of a
 *                     list headed by H2 onto H1: AppendTailList(H1, H2), then
 *                     RemoveEntryList(H2).
 *   Push/PopEntryList a singly linked stack; PopEntryList returns NULL when empty.
 * None of these is thread-safe: the caller holds whatever lock guards the list. */
#define KERNEL_SECURITY_CHECK_FAILURE 0x00000139
#define FAST_FAIL_CORRUPT_LIST_ENTRY  3

DECLSPEC_NORETURN VOID NTAPI SoftNdkFatalListEntryError(_In_ PVOID P1, _In_ PVOID P2,
                                                        _In_ PVOID P3);

FORCEINLINE VOID InitializeListHead(_Out_ PLIST_ENTRY ListHead) {
    ListHead->Flink = ListHead->Blink = ListHead;
}

FORCEINLINE BOOLEAN IsListEmpty(_In_ const LIST_ENTRY *ListHead) {
    return (BOOLEAN)(ListHead->Flink == ListHead);
}

FORCEINLINE VOID RtlpCheckListEntry(_In_ PLIST_ENTRY Entry) {
    if (Entry->Flink->Blink != Entry || Entry->Blink->Flink != Entry) {
        SoftNdkFatalListEntryError(Entry, Entry->Flink, Entry->Blink);
    }
}

FORCEINLINE BOOLEAN RemoveEntryList(_In_ PLIST_ENTRY Entry) {
    PLIST_ENTRY PrevEntry = Entry->Blink;
    PLIST_ENTRY NextEntry = Entry->Flink;
    if (NextEntry->Blink != Entry || PrevEntry->Flink != Entry) {
        SoftNdkFatalListEntryError(PrevEntry, Entry, NextEntry);
    }
    PrevEntry->Flink = NextEntry;
    NextEntry->Blink = PrevEntry;
    return (BOOLEAN)(PrevEntry == NextEntry);
}

FORCEINLINE PLIST_ENTRY RemoveHeadList(_Inout_ PLIST_ENTRY ListHead) {
    PLIST_ENTRY Entry = ListHead->Flink;
    PLIST_ENTRY NextEntry = Entry->Flink;
    if (Entry->Blink != ListHead || NextEntry->Blink != Entry) {
        SoftNdkFatalListEntryError(ListHead, Entry, NextEntry);
    }
    ListHead->Flink = NextEntry;
    NextEntry->Blink = ListHead;
    return Entry;
}

FORCEINLINE PLIST_ENTRY RemoveTailList(_Inout_ PLIST_ENTRY ListHead) {
    PLIST_ENTRY Entry = ListHead->Blink;
    PLIST_ENTRY PrevEntry = Entry->Blink;
    if (Entry->Flink != ListHead || PrevEntry->Flink != Entry) {
        SoftNdkFatalListEntryError(PrevEntry, Entry, ListHead);
    }
    ListHead->Blink = PrevEntry;
    PrevEntry->Flink = ListHead;
    return Entry;
}

FORCEINLINE VOID InsertTailList(_Inout_ PLIST_ENTRY ListHead, _Out_ PLIST_ENTRY Entry) {
    PLIST_ENTRY PrevEntry = ListHead->Blink;
    if (PrevEntry->Flink != ListHead) {
        SoftNdkFatalListEntryError(PrevEntry, ListHead, PrevEntry->Flink);
    }
    Entry->Flink = ListHead;
    Entry->Blink = PrevEntry;
    PrevEntry->Flink = Entry;
    ListHead->Blink = Entry;
}

FORCEINLINE VOID InsertHeadList(_Inout_ PLIST_ENTRY ListHead, _Out_ PLIST_ENTRY Entry) {
    PLIST_ENTRY NextEntry = ListHead->Flink;
    if (NextEntry->Blink != ListHead) {
        SoftNdkFatalListEntryError(ListHead, NextEntry, NextEntry->Blink);
    }
    Entry->Flink = NextEntry;
    Entry->Blink = ListHead;
    NextEntry->Blink = Entry;
    ListHead->Flink = Entry;
}

FORCEINLINE VOID AppendTailList(_Inout_ PLIST_ENTRY ListHead, _Inout_ PLIST_ENTRY ListToAppend) {
    PLIST_ENTRY ListEnd = ListHead->Blink;
    RtlpCheckListEntry(ListHead);
    RtlpCheckListEntry(ListToAppend);
    ListHead->Blink->Flink = ListToAppend;
    ListHead->Blink = ListToAppend->Blink;
    ListToAppend->Blink->Flink = ListHead;
    ListToAppend->Blink = ListEnd;
}

FORCEINLINE PSINGLE_LIST_ENTRY PopEntryList(_Inout_ PSINGLE_LIST_ENTRY ListHead) {
    PSINGLE_LIST_ENTRY FirstEntry = ListHead->Next;
    if (FirstEntry != NULL) {
        ListHead->Next = FirstEntry->Next;
    }
    return FirstEntry;
}

FORCEINLINE VOID PushEntryList(_Inout_ PSINGLE_LIST_ENTRY ListHead,
                               _Inout_ PSINGLE_LIST_ENTRY Entry) {
    Entry->Next = ListHead->Next;
    ListHead->Next = Entry;
}

/* ---- IRQL. Each thread has its own IRQL, PASSIVE_LEVEL when it starts. It is
 * bookkeeping only - raising it masks nothing and does not stop preemption -
 * but the runtime enforces Windows' rules on it: raising to a lower level
 * (IRQL_NOT_GREATER_OR_EQUAL), lowering to a higher level, waiting above
 * DISPATCH_LEVEL or with a timeout other than 0 at DISPATCH_LEVEL, and
 * KeDelayExecutionThread above APC_LEVEL (IRQL_NOT_LESS_OR_EQUAL) bug-check. */
_IRQL_requires_max_(HIGH_LEVEL) KIRQL NTAPI KeGetCurrentIrql(VOID);
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
_IRQL_raises_(DISPATCH_LEVEL) KIRQL NTAPI KeAcquireSpinLockRaiseToDpc(_Inout_ PKSPIN_LOCK SpinLock);
#define KeAcquireSpinLock(SpinLock, OldIrql) (*(OldIrql) = KeAcquireSpinLockRaiseToDpc(SpinLock))
VOID NTAPI KeReleaseSpinLock(_Inout_ PKSPIN_LOCK SpinLock, _In_ KIRQL NewIrql);
VOID NTAPI KeAcquireSpinLockAtDpcLevel(_Inout_ PKSPIN_LOCK SpinLock);
VOID NTAPI KeReleaseSpinLockFromDpcLevel(_Inout_ PKSPIN_LOCK SpinLock);
BOOLEAN NTAPI KeTryToAcquireSpinLockAtDpcLevel(_Inout_ PKSPIN_LOCK SpinLock);
BOOLEAN NTAPI KeTestSpinLock(_In_ PKSPIN_LOCK SpinLock); /* TRUE if the lock looks free */

/* ---- In-stack queued spin locks. The KLOCK_QUEUE_HANDLE lives on the
 * acquiring thread's stack from acquire to release; the lock is handed to
 * waiters in FIFO order (an MCS queue: the KSPIN_LOCK word points to the last
 * waiter's handle, 0 when free, so KeInitializeSpinLock, a zeroed lock and
 * KeTestSpinLock work as for ordinary spin locks). Each waiter spins on its own
 * handle with the pause hint, then yields the CPU between looks. A lock used
 * with these calls must not also be used with KeAcquireSpinLock and friends
 * (the WDK forbids mixing them, and here the word's meaning differs).
 * KeAcquireInStackQueuedSpinLock raises to DISPATCH_LEVEL and keeps the
 * previous IRQL in LockHandle->OldIrql for the release; the AtDpcLevel /
 * FromDpcLevel variants leave the IRQL alone. Re-acquiring a queued lock the
 * thread already holds deadlocks, as on Windows; releasing through a handle
 * whose lock is free bug-checks SPIN_LOCK_NOT_OWNED. */
typedef struct _KSPIN_LOCK_QUEUE {
    struct _KSPIN_LOCK_QUEUE *volatile Next;
    PKSPIN_LOCK volatile Lock; /* low bits are runtime-private state while queued */
} KSPIN_LOCK_QUEUE, *PKSPIN_LOCK_QUEUE;

typedef struct _KLOCK_QUEUE_HANDLE {
    KSPIN_LOCK_QUEUE LockQueue;
    KIRQL OldIrql;
} KLOCK_QUEUE_HANDLE, *PKLOCK_QUEUE_HANDLE;

_IRQL_raises_(DISPATCH_LEVEL) VOID NTAPI
    KeAcquireInStackQueuedSpinLock(_Inout_ PKSPIN_LOCK SpinLock,
                                   _Out_ PKLOCK_QUEUE_HANDLE LockHandle);
VOID NTAPI KeReleaseInStackQueuedSpinLock(_In_ PKLOCK_QUEUE_HANDLE LockHandle);
VOID NTAPI KeAcquireInStackQueuedSpinLockAtDpcLevel(_Inout_ PKSPIN_LOCK SpinLock,
                                                    _Out_ PKLOCK_QUEUE_HANDLE LockHandle);
VOID NTAPI KeReleaseInStackQueuedSpinLockFromDpcLevel(_In_ PKLOCK_QUEUE_HANDLE LockHandle);

/* ---- Interlocked operations, at any IRQL. Each is one sequentially consistent
 * atomic operation (a full barrier, like the x64 LOCK-prefixed instructions the
 * WDK's intrinsics compile to), built on the compiler's __atomic builtins so the
 * same definitions serve C11 and C++20. As in the WDK, Increment, Decrement and
 * Add return the NEW value; Exchange, CompareExchange, ExchangeAdd, Or, And and
 * Xor return the value the target held BEFORE the operation (for
 * CompareExchange: the exchange happened iff the result equals Comperand).
 * Targets must be naturally aligned. */
#define SOFTNDK_INTERLOCKED_ORDER __ATOMIC_SEQ_CST

FORCEINLINE LONG InterlockedIncrement(_Inout_ _Interlocked_operand_ LONG volatile *Addend) {
    return __atomic_add_fetch(Addend, 1, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG InterlockedDecrement(_Inout_ _Interlocked_operand_ LONG volatile *Addend) {
    return __atomic_sub_fetch(Addend, 1, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG InterlockedAdd(_Inout_ _Interlocked_operand_ LONG volatile *Addend,
                                _In_ LONG Value) {
    return __atomic_add_fetch(Addend, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG InterlockedExchange(_Inout_ _Interlocked_operand_ LONG volatile *Target,
                                     _In_ LONG Value) {
    return __atomic_exchange_n(Target, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG InterlockedExchangeAdd(_Inout_ _Interlocked_operand_ LONG volatile *Addend,
                                        _In_ LONG Value) {
    return __atomic_fetch_add(Addend, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG
InterlockedCompareExchange(_Inout_ _Interlocked_operand_ LONG volatile *Destination,
                           _In_ LONG ExChange, _In_ LONG Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, SOFTNDK_INTERLOCKED_ORDER,
                                SOFTNDK_INTERLOCKED_ORDER);
    return Comperand; /* on failure the builtin stored the value it found */
}
FORCEINLINE LONG InterlockedOr(_Inout_ _Interlocked_operand_ LONG volatile *Destination,
                               _In_ LONG Value) {
    return __atomic_fetch_or(Destination, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG InterlockedAnd(_Inout_ _Interlocked_operand_ LONG volatile *Destination,
                                _In_ LONG Value) {
    return __atomic_fetch_and(Destination, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG InterlockedXor(_Inout_ _Interlocked_operand_ LONG volatile *Destination,
                                _In_ LONG Value) {
    return __atomic_fetch_xor(Destination, Value, SOFTNDK_INTERLOCKED_ORDER);
}

FORCEINLINE SHORT InterlockedIncrement16(_Inout_ _Interlocked_operand_ SHORT volatile *Addend) {
    return __atomic_add_fetch(Addend, 1, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE SHORT InterlockedDecrement16(_Inout_ _Interlocked_operand_ SHORT volatile *Addend) {
    return __atomic_sub_fetch(Addend, 1, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE SHORT
InterlockedCompareExchange16(_Inout_ _Interlocked_operand_ SHORT volatile *Destination,
                             _In_ SHORT ExChange, _In_ SHORT Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, SOFTNDK_INTERLOCKED_ORDER,
                                SOFTNDK_INTERLOCKED_ORDER);
    return Comperand;
}

FORCEINLINE LONG64 InterlockedIncrement64(_Inout_ _Interlocked_operand_ LONG64 volatile *Addend) {
    return __atomic_add_fetch(Addend, 1, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG64 InterlockedDecrement64(_Inout_ _Interlocked_operand_ LONG64 volatile *Addend) {
    return __atomic_sub_fetch(Addend, 1, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG64 InterlockedAdd64(_Inout_ _Interlocked_operand_ LONG64 volatile *Addend,
                                    _In_ LONG64 Value) {
    return __atomic_add_fetch(Addend, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG64 InterlockedExchange64(_Inout_ _Interlocked_operand_ LONG64 volatile *Target,
                                         _In_ LONG64 Value) {
    return __atomic_exchange_n(Target, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG64 InterlockedExchangeAdd64(_Inout_ _Interlocked_operand_ LONG64 volatile *Addend,
                                            _In_ LONG64 Value) {
    return __atomic_fetch_add(Addend, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG64
InterlockedCompareExchange64(_Inout_ _Interlocked_operand_ LONG64 volatile *Destination,
                             _In_ LONG64 ExChange, _In_ LONG64 Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, SOFTNDK_INTERLOCKED_ORDER,
                                SOFTNDK_INTERLOCKED_ORDER);
    return Comperand;
}
FORCEINLINE LONG64 InterlockedOr64(_Inout_ _Interlocked_operand_ LONG64 volatile *Destination,
                                   _In_ LONG64 Value) {
    return __atomic_fetch_or(Destination, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG64 InterlockedAnd64(_Inout_ _Interlocked_operand_ LONG64 volatile *Destination,
                                    _In_ LONG64 Value) {
    return __atomic_fetch_and(Destination, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE LONG64 InterlockedXor64(_Inout_ _Interlocked_operand_ LONG64 volatile *Destination,
                                    _In_ LONG64 Value) {
    return __atomic_fetch_xor(Destination, Value, SOFTNDK_INTERLOCKED_ORDER);
}

FORCEINLINE PVOID InterlockedExchangePointer(_Inout_ _Interlocked_operand_ PVOID volatile *Target,
                                             _In_opt_ PVOID Value) {
    return __atomic_exchange_n(Target, Value, SOFTNDK_INTERLOCKED_ORDER);
}
FORCEINLINE PVOID
InterlockedCompareExchangePointer(_Inout_ _Interlocked_operand_ PVOID volatile *Destination,
                                  _In_opt_ PVOID ExChange, _In_opt_ PVOID Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, SOFTNDK_INTERLOCKED_ORDER,
                                SOFTNDK_INTERLOCKED_ORDER);
    return Comperand;
}

/* Bit tests: set or clear bit Offset (0-31, or 0-63 for the 64-bit forms) and
 * return its previous value (0 or 1). */
FORCEINLINE BOOLEAN InterlockedBitTestAndSet(_Inout_ _Interlocked_operand_ LONG volatile *Base,
                                             _In_ LONG Offset) {
    const LONG bit = (LONG)((ULONG)1 << (Offset & 31));
    return (BOOLEAN)((__atomic_fetch_or(Base, bit, SOFTNDK_INTERLOCKED_ORDER) & bit) != 0);
}
FORCEINLINE BOOLEAN InterlockedBitTestAndReset(_Inout_ _Interlocked_operand_ LONG volatile *Base,
                                               _In_ LONG Offset) {
    const LONG bit = (LONG)((ULONG)1 << (Offset & 31));
    return (BOOLEAN)((__atomic_fetch_and(Base, ~bit, SOFTNDK_INTERLOCKED_ORDER) & bit) != 0);
}
FORCEINLINE BOOLEAN InterlockedBitTestAndSet64(_Inout_ _Interlocked_operand_ LONG64 volatile *Base,
                                               _In_ LONG64 Offset) {
    const LONG64 bit = (LONG64)((ULONG64)1 << (Offset & 63));
    return (BOOLEAN)((__atomic_fetch_or(Base, bit, SOFTNDK_INTERLOCKED_ORDER) & bit) != 0);
}
FORCEINLINE BOOLEAN InterlockedBitTestAndReset64(
    _Inout_ _Interlocked_operand_ LONG64 volatile *Base, _In_ LONG64 Offset) {
    const LONG64 bit = (LONG64)((ULONG64)1 << (Offset & 63));
    return (BOOLEAN)((__atomic_fetch_and(Base, ~bit, SOFTNDK_INTERLOCKED_ORDER) & bit) != 0);
}

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
 * RtlZeroMemory's an event may wait on it and set it. The dispatcher objects
 * SoftNDK has are events, timers (KTIMER, below) and thread objects (the
 * PETHREAD that ObReferenceObjectByHandle returns for a PsCreateSystemThread
 * handle); each starts with a DISPATCHER_HEADER whose Type is Windows' object
 * type: 0/1 notification/synchronization event, 6 thread, 8/9
 * notification/synchronization timer. Waiting on anything else is reported and
 * aborts. A synchronization object (event or timer) satisfies one wait and
 * becomes unsignalled again; a notification object stays signalled and
 * satisfies every wait until it is reset. The rules below for events hold for
 * every type: the runtime signals timers and threads through the same path as
 * KeSetEvent.
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
    UCHAR Type; /* object type: 0/1 event, 6 thread, 8/9 timer (see above) */
    UCHAR Reserved1;
    UCHAR Size; /* object size / sizeof(LONG) after its Initialize call, else 0 */
    UCHAR Reserved2;
    LONG SignalState;        /* 0 not signalled, 1 signalled; use KeReadStateEvent */
    LIST_ENTRY WaitListHead; /* unused; the Initialize calls make it an empty list */
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
#define THREAD_WAIT_OBJECTS  3
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

/* ---- Fast mutexes. x64 layout (56 bytes). Count is 1 when free, 0 when owned,
 * and -n when owned with n threads waiting on the embedded synchronization
 * Event; Owner identifies the owning thread (runtime-private value). A
 * FAST_MUTEX must be initialised with ExInitializeFastMutex (a zeroed one is
 * "owned"), is not recursive, and must be released by the thread that acquired
 * it.
 *   ExAcquireFastMutex       IRQL <= APC_LEVEL (else bug-checks
 *                            IRQL_NOT_LESS_OR_EQUAL); raises to APC_LEVEL and
 *                            keeps the previous IRQL in OldIrql; sleeps (never
 *                            spins) while another thread owns the mutex.
 *                            Acquiring a mutex the thread already owns (a
 *                            silent deadlock on Windows) is reported and aborts.
 *   ExTryToAcquireFastMutex  as above, but returns FALSE at once (IRQL unchanged)
 *                            when the mutex is owned.
 *   ExReleaseFastMutex       at APC_LEVEL; wakes one waiter (FIFO) and lowers the
 *                            IRQL to OldIrql. Releasing a mutex the thread does
 *                            not own is reported and aborts. */
typedef struct _FAST_MUTEX {
    LONG Count;
    PVOID Owner;
    ULONG Contention; /* times an acquirer had to wait */
    KEVENT Event;
    ULONG OldIrql;
} FAST_MUTEX, *PFAST_MUTEX;

VOID NTAPI ExInitializeFastMutex(_Out_ PFAST_MUTEX FastMutex);
_IRQL_raises_(APC_LEVEL) VOID NTAPI ExAcquireFastMutex(_Inout_ PFAST_MUTEX FastMutex);
VOID NTAPI ExReleaseFastMutex(_Inout_ PFAST_MUTEX FastMutex);
_Must_inspect_result_ BOOLEAN NTAPI ExTryToAcquireFastMutex(_Inout_ PFAST_MUTEX FastMutex);

/* ---- Rundown protection: guards an object against being torn down while
 * others still use it. Windows' encoding: Count is 0 for "no users", users add
 * 2 each (EX_RUNDOWN_COUNT_INC) and bit 0 (EX_RUNDOWN_ACTIVE) means rundown has
 * begun, so a zeroed EX_RUNDOWN_REF is initialised. While the rundown waits for
 * users to leave, Count holds the address of the waiter's on-stack wait block
 * OR'ed with EX_RUNDOWN_ACTIVE; after it completes Count is EX_RUNDOWN_ACTIVE.
 *   ExAcquireRundownProtection        IRQL <= DISPATCH_LEVEL. TRUE and one more
 *                                     user, or FALSE once rundown has begun.
 *   ExReleaseRundownProtection        IRQL <= DISPATCH_LEVEL; the last user to
 *                                     leave during a rundown wakes the waiter.
 *                                     Releasing with no users is reported and
 *                                     aborts.
 *   ExWaitForRundownProtectionRelease IRQL <= APC_LEVEL (else bug-checks
 *                                     IRQL_NOT_LESS_OR_EQUAL). Begins the rundown
 *                                     (later acquires fail) and sleeps until every
 *                                     user has released; returns at once if rundown
 *                                     had already completed. One waiter at a time.
 *   ExRundownCompleted                marks the rundown complete (Count =
 *                                     EX_RUNDOWN_ACTIVE).
 *   ExReInitializeRundownProtection   after a completed rundown: acquires succeed
 *                                     again (Count = 0). */
typedef struct _EX_RUNDOWN_REF {
    union {
        volatile ULONG_PTR Count;
        volatile PVOID Ptr;
    };
} EX_RUNDOWN_REF, *PEX_RUNDOWN_REF;
#define EX_RUNDOWN_ACTIVE      0x1
#define EX_RUNDOWN_COUNT_SHIFT 0x1
#define EX_RUNDOWN_COUNT_INC   (1 << EX_RUNDOWN_COUNT_SHIFT)

VOID NTAPI ExInitializeRundownProtection(_Out_ PEX_RUNDOWN_REF RunRef);
VOID NTAPI ExReInitializeRundownProtection(_Inout_ PEX_RUNDOWN_REF RunRef);
_Must_inspect_result_ BOOLEAN NTAPI ExAcquireRundownProtection(_Inout_ PEX_RUNDOWN_REF RunRef);
VOID NTAPI ExReleaseRundownProtection(_Inout_ PEX_RUNDOWN_REF RunRef);
VOID NTAPI ExWaitForRundownProtectionRelease(_Inout_ PEX_RUNDOWN_REF RunRef);
VOID NTAPI ExRundownCompleted(_Out_ PEX_RUNDOWN_REF RunRef);

/* ---- Deferred procedure calls. x64 layout (64 bytes). One runtime thread -
 * the "DPC processor", started at the first KeInsertQueueDpc and asleep
 * whenever its queue is empty - runs queued DPCs one at a time in FIFO order,
 * each at DISPATCH_LEVEL (so the routine may take spin locks with the
 * AtDpcLevel calls and must not wait with a timeout). Serialising DPCs the way
 * a single processor does keeps their order deterministic; a DPC routine that
 * waits for another DPC to run therefore deadlocks. Importance and target
 * processor are not modelled.
 *   KeInitializeDpc     sets Type, the routine and its context; DpcData = NULL.
 *   KeInsertQueueDpc    any IRQL. TRUE if it queued the DPC, with the two system
 *                       arguments the routine will receive; FALSE (arguments
 *                       unchanged) if the DPC was already queued. A DPC whose
 *                       routine is running is no longer queued and may be
 *                       queued again, even from its own routine.
 *   KeRemoveQueueDpc    any IRQL. TRUE if the DPC was queued and is now removed
 *                       (its routine will not run for that insertion); FALSE if
 *                       it was not queued (its routine may be running).
 *   KeFlushQueuedDpcs   PASSIVE_LEVEL (else bug-checks IRQL_NOT_LESS_OR_EQUAL).
 *                       Returns once every DPC queued before the call has run -
 *                       what a driver calls before freeing DPCs and timers.
 * A routine that returns at an IRQL other than DISPATCH_LEVEL is reported and
 * aborts. DpcData is non-NULL exactly while the DPC is queued; DpcListEntry
 * links the queue. Both are runtime-private. The KDPC must stay valid while
 * queued. A forked child starts with an empty DPC queue (and no set timers). */
typedef struct _KDPC *PKDPC, *PRKDPC;
typedef _Function_class_(KDEFERRED_ROUTINE)
    _IRQL_requires_(DISPATCH_LEVEL) _IRQL_requires_same_ VOID
    KDEFERRED_ROUTINE(_In_ struct _KDPC *Dpc, _In_opt_ PVOID DeferredContext,
                      _In_opt_ PVOID SystemArgument1, _In_opt_ PVOID SystemArgument2);
typedef KDEFERRED_ROUTINE *PKDEFERRED_ROUTINE;

typedef enum _KDPC_IMPORTANCE {
    LowImportance,
    MediumImportance,
    HighImportance,
    MediumHighImportance
} KDPC_IMPORTANCE;
#define DPC_NORMAL   0
#define DPC_THREADED 1

typedef struct _KDPC {
    union {
        ULONG TargetInfoAsUlong;
        struct {
            UCHAR Type; /* 19 (DpcObject) after KeInitializeDpc */
            UCHAR Importance;
            volatile USHORT Number;
        } DUMMYSTRUCTNAME;
    } DUMMYUNIONNAME;
    SINGLE_LIST_ENTRY DpcListEntry;
    KAFFINITY ProcessorHistory;
    PKDEFERRED_ROUTINE DeferredRoutine;
    PVOID DeferredContext;
    PVOID SystemArgument1;
    PVOID SystemArgument2;
    volatile PVOID DpcData;
} KDPC;

VOID NTAPI KeInitializeDpc(_Out_ PRKDPC Dpc, _In_ PKDEFERRED_ROUTINE DeferredRoutine,
                           _In_opt_ PVOID DeferredContext);
BOOLEAN NTAPI KeInsertQueueDpc(_Inout_ PRKDPC Dpc, _In_opt_ PVOID SystemArgument1,
                               _In_opt_ PVOID SystemArgument2);
BOOLEAN NTAPI KeRemoveQueueDpc(_Inout_ PRKDPC Dpc);
_IRQL_requires_max_(PASSIVE_LEVEL) VOID NTAPI KeFlushQueuedDpcs(VOID);

/* ---- Timers. x64 layout (64 bytes). A KTIMER is a dispatcher object
 * (KeWaitForSingleObject / KeWaitForMultipleObjects wait on it, KeReadStateTimer
 * reads it) that can also queue a DPC when it expires. One runtime thread keeps
 * the set timers ordered by due time and sleeps until the earliest one (or
 * until a set or cancel changes it); it never polls.
 *   KeInitializeTimer[Ex]  NotificationTimer (the only type KeInitializeTimer
 *                          makes) or SynchronizationTimer; unsignalled, not set.
 *                          A KTIMER must be initialised before use.
 *   KeSetTimer[Ex]         IRQL <= DISPATCH_LEVEL. (Re)arms the timer: cancels it
 *                          if set (the result is TRUE in that case), makes it
 *                          unsignalled, and records Dpc (may be NULL) and Period
 *                          (milliseconds, >= 0; 0 fires once). DueTime as for
 *                          waits: negative is relative (100 ns units, on
 *                          CLOCK_MONOTONIC), positive is an absolute system time
 *                          converted once, when the timer is set (a later change
 *                          of the wall clock does not move it), 0 or a time in the
 *                          past expires at once.
 *   expiry                 the timer is signalled exactly as KeSetEvent signals
 *                          an event of the same kind (a notification timer
 *                          releases every waiter and stays signalled; a
 *                          synchronization timer releases one waiter, or stays
 *                          signalled until one wait consumes it), then its DPC,
 *                          if any, is queued with the low and high 32 bits of the
 *                          system time as SystemArgument1 and 2. A periodic timer
 *                          is re-armed Period ms after its previous due time;
 *                          periods missed while the process was descheduled are
 *                          skipped, not replayed.
 *   KeCancelTimer          IRQL <= DISPATCH_LEVEL. TRUE if the timer was set (it
 *                          will not expire); FALSE otherwise. The signal state is
 *                          unchanged, and a DPC already queued by an expiry stays
 *                          queued (KeRemoveQueueDpc or KeFlushQueuedDpcs deal
 *                          with it, as on Windows).
 *   KeReadStateTimer       TRUE if the timer is signalled.
 * DueTime (the expiry on the monotonic clock), TimerListEntry (non-NULL links
 * while set), Processor and Period are runtime-private; read Period only through
 * what you passed. A set timer must stay valid until it is cancelled. */
typedef enum _TIMER_TYPE { NotificationTimer, SynchronizationTimer } TIMER_TYPE;

typedef struct _KTIMER {
    DISPATCHER_HEADER Header;
    ULARGE_INTEGER DueTime;
    LIST_ENTRY TimerListEntry;
    struct _KDPC *Dpc;
    ULONG Processor;
    ULONG Period;
} KTIMER, *PKTIMER, *PRKTIMER;

VOID NTAPI KeInitializeTimer(_Out_ PKTIMER Timer);
VOID NTAPI KeInitializeTimerEx(_Out_ PKTIMER Timer, _In_ TIMER_TYPE Type);
BOOLEAN NTAPI KeSetTimer(_Inout_ PKTIMER Timer, _In_ LARGE_INTEGER DueTime, _In_opt_ PKDPC Dpc);
BOOLEAN NTAPI KeSetTimerEx(_Inout_ PKTIMER Timer, _In_ LARGE_INTEGER DueTime, _In_ LONG Period,
                           _In_opt_ PKDPC Dpc);
BOOLEAN NTAPI KeCancelTimer(_Inout_ PKTIMER Timer);
BOOLEAN NTAPI KeReadStateTimer(_In_ PKTIMER Timer);

/* ---- Driver and device objects: minimal. Each structure is the leading part
 * of Windows' x64 layout (fields keep their Windows offsets; the rest of
 * Windows' structure is absent), enough for DriverEntry/DriverUnload and for
 * the device object a work item is allocated against. The runtime reads and
 * writes nothing in them except DEVICE_OBJECT.ReferenceCount (see work items)
 * and, in IoCallDriver, DEVICE_OBJECT.DriverObject and DRIVER_OBJECT.MajorFunction. */
typedef ULONG DEVICE_TYPE;
typedef struct _DRIVER_EXTENSION *PDRIVER_EXTENSION;
typedef struct _FAST_IO_DISPATCH *PFAST_IO_DISPATCH;
typedef struct _IO_TIMER *PIO_TIMER;
typedef struct _VPB *PVPB;

typedef struct _DEVICE_OBJECT {
    CSHORT Type; /* IO_TYPE_DEVICE (3) when the runtime creates one */
    USHORT Size;
    LONG ReferenceCount;
    struct _DRIVER_OBJECT *DriverObject;
    struct _DEVICE_OBJECT *NextDevice;
    struct _DEVICE_OBJECT *AttachedDevice;
    struct _IRP *CurrentIrp;
    PIO_TIMER Timer;
    ULONG Flags;
    ULONG Characteristics;
    volatile PVPB Vpb;
    PVOID DeviceExtension;
    DEVICE_TYPE DeviceType;
    CHAR StackSize;
} DEVICE_OBJECT;

typedef _Function_class_(DRIVER_INITIALIZE) _IRQL_requires_same_ NTSTATUS
    DRIVER_INITIALIZE(_In_ struct _DRIVER_OBJECT *DriverObject, _In_ PUNICODE_STRING RegistryPath);
typedef DRIVER_INITIALIZE *PDRIVER_INITIALIZE;
typedef _Function_class_(DRIVER_STARTIO) _IRQL_requires_max_(DISPATCH_LEVEL) VOID
    DRIVER_STARTIO(_Inout_ struct _DEVICE_OBJECT *DeviceObject, _Inout_ struct _IRP *Irp);
typedef DRIVER_STARTIO *PDRIVER_STARTIO;
typedef _Function_class_(DRIVER_UNLOAD) _IRQL_requires_(PASSIVE_LEVEL) VOID
    DRIVER_UNLOAD(_In_ struct _DRIVER_OBJECT *DriverObject);
typedef DRIVER_UNLOAD *PDRIVER_UNLOAD;
typedef _Function_class_(DRIVER_DISPATCH) _IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS
    DRIVER_DISPATCH(_In_ struct _DEVICE_OBJECT *DeviceObject, _Inout_ struct _IRP *Irp);
typedef DRIVER_DISPATCH *PDRIVER_DISPATCH;

#define IRP_MJ_MAXIMUM_FUNCTION 0x1b

typedef struct _DRIVER_OBJECT {
    CSHORT Type; /* IO_TYPE_DRIVER (4) when the runtime creates one */
    CSHORT Size;
    PDEVICE_OBJECT DeviceObject;
    ULONG Flags;
    PVOID DriverStart;
    ULONG DriverSize;
    PVOID DriverSection;
    PDRIVER_EXTENSION DriverExtension;
    UNICODE_STRING DriverName;
    PUNICODE_STRING HardwareDatabase;
    PFAST_IO_DISPATCH FastIoDispatch;
    PDRIVER_INITIALIZE DriverInit;
    PDRIVER_STARTIO DriverStartIo;
    PDRIVER_UNLOAD DriverUnload;
    PDRIVER_DISPATCH MajorFunction[IRP_MJ_MAXIMUM_FUNCTION + 1];
} DRIVER_OBJECT;

/* ---- IRPs, minimal. An IRP carries a request down a stack of drivers: each
 * driver it passes through has one IO_STACK_LOCATION, and the I/O status comes
 * back up through the completion routines the drivers above registered. What
 * SoftNDK provides is the machinery a driver uses on IRPs it allocates itself or
 * receives from another SoftNDK driver - there is no I/O manager creating IRPs
 * for user requests, no cancellation (Cancel/CancelRoutine are never acted on),
 * no associated/master IRPs and no thread IRP list.
 *   IoAllocateIrp(StackSize, ChargeQuota)  one pool block (tag 'Irp ') holding the
 *       zeroed IRP and StackSize stack locations; Type IO_TYPE_IRP, StackCount =
 *       StackSize, CurrentLocation = StackSize + 1 (no current location yet: use
 *       IoGetNextIrpStackLocation to fill in the first driver's). NULL when out of
 *       pool or StackSize < 1. ChargeQuota is ignored. IoFreeIrp frees it;
 *       IoReuseIrp re-initialises it for another request.
 *   IoCallDriver(DeviceObject, Irp)  moves to the next stack location (running out
 *       of stack locations bug-checks NO_MORE_IRP_STACK_LOCATIONS), records
 *       DeviceObject in it and returns what
 *       DeviceObject->DriverObject->MajorFunction[location->MajorFunction] returns.
 *       A NULL dispatch slot completes the IRP with STATUS_INVALID_DEVICE_REQUEST
 *       (Windows fills empty slots with a routine that does that).
 *   IoSetCompletionRoutine  registers a routine in the NEXT stack location (the
 *       caller's view of the driver below), called when that driver completes the
 *       IRP, per InvokeOnSuccess / InvokeOnError / InvokeOnCancel.
 *   IoCompleteRequest(Irp, PriorityBoost)  walks the stack upward as Windows
 *       does: for each location it copies SL_PENDING_RETURNED into
 *       Irp->PendingReturned, moves up, then calls that location's completion
 *       routine (with the device object of the location above, NULL at the top).
 *       A routine returning STATUS_MORE_PROCESSING_REQUIRED stops the walk: the IRP
 *       belongs to that routine's driver again (which may free or reuse it). A
 *       routine-less location whose driver returned STATUS_PENDING propagates
 *       IoMarkIrpPending upward. When the walk reaches the top, the status is
 *       copied to *Irp->UserIosb and Irp->UserEvent is set, if present, and the IRP
 *       stays with whoever allocated it (Windows' I/O manager would free IRPs it
 *       built itself; an IoAllocateIrp IRP must be reclaimed by a completion
 *       routine returning STATUS_MORE_PROCESSING_REQUIRED). Completing an IRP that
 *       is not one, or that no driver owns (never sent with IoCallDriver, or
 *       completed up to the top already), bug-checks MULTIPLE_IRP_COMPLETE_REQUESTS;
 *       completing with IoStatus.Status == STATUS_PENDING is reported and aborts.
 *       PriorityBoost is ignored.
 * Tail.Overlay.ListEntry and Tail.Overlay.DriverContext belong to the driver that
 * currently owns the IRP (to queue it while pending). The structure has Windows'
 * x64 field offsets; Tail.Overlay.DeviceQueueEntry and Tail.Apc are absent (so
 * sizeof(IRP) is 0xC8, not 0xD0). */
#define IO_TYPE_IRP 6
#define IO_TYPE_DEVICE 3
#define IO_TYPE_DRIVER 4
#define NO_MORE_IRP_STACK_LOCATIONS 0x00000035
#define MULTIPLE_IRP_COMPLETE_REQUESTS 0x00000044

#define IRP_MJ_CREATE 0x00
#define IRP_MJ_CREATE_NAMED_PIPE 0x01
#define IRP_MJ_CLOSE 0x02
#define IRP_MJ_READ 0x03
#define IRP_MJ_WRITE 0x04
#define IRP_MJ_QUERY_INFORMATION 0x05
#define IRP_MJ_SET_INFORMATION 0x06
#define IRP_MJ_QUERY_EA 0x07
#define IRP_MJ_SET_EA 0x08
#define IRP_MJ_FLUSH_BUFFERS 0x09
#define IRP_MJ_QUERY_VOLUME_INFORMATION 0x0a
#define IRP_MJ_SET_VOLUME_INFORMATION 0x0b
#define IRP_MJ_DIRECTORY_CONTROL 0x0c
#define IRP_MJ_FILE_SYSTEM_CONTROL 0x0d
#define IRP_MJ_DEVICE_CONTROL 0x0e
#define IRP_MJ_INTERNAL_DEVICE_CONTROL 0x0f
#define IRP_MJ_SHUTDOWN 0x10
#define IRP_MJ_LOCK_CONTROL 0x11
#define IRP_MJ_CLEANUP 0x12
#define IRP_MJ_CREATE_MAILSLOT 0x13
#define IRP_MJ_QUERY_SECURITY 0x14
#define IRP_MJ_SET_SECURITY 0x15
#define IRP_MJ_POWER 0x16
#define IRP_MJ_SYSTEM_CONTROL 0x17
#define IRP_MJ_DEVICE_CHANGE 0x18
#define IRP_MJ_QUERY_QUOTA 0x19
#define IRP_MJ_SET_QUOTA 0x1a
#define IRP_MJ_PNP 0x1b

/* IO_STACK_LOCATION.Control */
#define SL_PENDING_RETURNED 0x01
#define SL_ERROR_RETURNED 0x02
#define SL_INVOKE_ON_CANCEL 0x20
#define SL_INVOKE_ON_SUCCESS 0x40
#define SL_INVOKE_ON_ERROR 0x80

typedef struct _IO_STATUS_BLOCK {
    union {
        NTSTATUS Status;
        PVOID Pointer;
    } DUMMYUNIONNAME;
    ULONG_PTR Information;
} IO_STATUS_BLOCK, *PIO_STATUS_BLOCK;

typedef struct _FILE_OBJECT *PFILE_OBJECT;

typedef _Function_class_(IO_COMPLETION_ROUTINE) _IRQL_requires_same_
NTSTATUS IO_COMPLETION_ROUTINE(_In_ PDEVICE_OBJECT DeviceObject, _In_ PIRP Irp,
                               _In_reads_opt_(_Inexpressible_("varies")) PVOID Context);
typedef IO_COMPLETION_ROUTINE *PIO_COMPLETION_ROUTINE;
typedef _Function_class_(DRIVER_CANCEL) _IRQL_requires_min_(DISPATCH_LEVEL)
VOID DRIVER_CANCEL(_Inout_ struct _DEVICE_OBJECT *DeviceObject, _Inout_ struct _IRP *Irp);
typedef DRIVER_CANCEL *PDRIVER_CANCEL;

/* 0x48 bytes on x64, as on Windows; Parameters has the common views. */
typedef struct _IO_STACK_LOCATION {
    UCHAR MajorFunction;
    UCHAR MinorFunction;
    UCHAR Flags;
    UCHAR Control;
    union {
        struct {
            ULONG Length;
            ULONG DECLSPEC_ALIGN(8) Key;
            ULONG Flags;
            LARGE_INTEGER ByteOffset;
        } Read;
        struct {
            ULONG Length;
            ULONG DECLSPEC_ALIGN(8) Key;
            ULONG Flags;
            LARGE_INTEGER ByteOffset;
        } Write;
        struct {
            ULONG OutputBufferLength;
            ULONG DECLSPEC_ALIGN(8) InputBufferLength;
            ULONG DECLSPEC_ALIGN(8) IoControlCode;
            PVOID Type3InputBuffer;
        } DeviceIoControl;
        struct {
            PVOID Argument1;
            PVOID Argument2;
            PVOID Argument3;
            PVOID Argument4;
        } Others;
    } Parameters;
    PDEVICE_OBJECT DeviceObject;
    PFILE_OBJECT FileObject;
    PIO_COMPLETION_ROUTINE CompletionRoutine;
    PVOID Context;
} IO_STACK_LOCATION, *PIO_STACK_LOCATION;

typedef struct _IRP {
    CSHORT Type; /* IO_TYPE_IRP */
    USHORT Size; /* IoSizeOfIrp(StackCount) */
    PMDL MdlAddress;
    ULONG Flags;
    union {
        struct _IRP *MasterIrp;
        volatile LONG IrpCount;
        PVOID SystemBuffer;
    } AssociatedIrp;
    LIST_ENTRY ThreadListEntry;
    IO_STATUS_BLOCK IoStatus;
    KPROCESSOR_MODE RequestorMode;
    BOOLEAN PendingReturned;
    CHAR StackCount;
    CHAR CurrentLocation;
    BOOLEAN Cancel;
    KIRQL CancelIrql;
    CHAR ApcEnvironment;
    UCHAR AllocationFlags;
    PIO_STATUS_BLOCK UserIosb;
    PKEVENT UserEvent;
    union {
        struct {
            PVOID UserApcRoutine;
            PVOID UserApcContext;
        } AsynchronousParameters;
        LARGE_INTEGER AllocationSize;
    } Overlay;
    volatile PDRIVER_CANCEL CancelRoutine;
    PVOID UserBuffer;
    union {
        struct {
            PVOID DriverContext[4];
            PETHREAD Thread;
            PCHAR AuxiliaryBuffer;
            struct {
                LIST_ENTRY ListEntry;
                union {
                    struct _IO_STACK_LOCATION *CurrentStackLocation;
                    ULONG PacketType;
                } DUMMYUNIONNAME;
            } DUMMYSTRUCTNAME;
            PFILE_OBJECT OriginalFileObject;
        } Overlay;
        PVOID CompletionKey;
    } Tail;
} IRP;

#define IoSizeOfIrp(StackSize) \
    ((USHORT)(sizeof(IRP) + ((StackSize) * (sizeof(IO_STACK_LOCATION)))))

_IRQL_requires_max_(DISPATCH_LEVEL) _Must_inspect_result_
PIRP NTAPI IoAllocateIrp(_In_ CCHAR StackSize, _In_ BOOLEAN ChargeQuota);
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID NTAPI IoFreeIrp(_In_ PIRP Irp);
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID NTAPI IoReuseIrp(_Inout_ PIRP Irp, _In_ NTSTATUS Iostatus);
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS FASTCALL IofCallDriver(_In_ PDEVICE_OBJECT DeviceObject, _Inout_ PIRP Irp);
#define IoCallDriver(DeviceObject, Irp) IofCallDriver(DeviceObject, Irp)
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID FASTCALL IofCompleteRequest(_In_ PIRP Irp, _In_ CCHAR PriorityBoost);
#define IoCompleteRequest(Irp, PriorityBoost) IofCompleteRequest(Irp, PriorityBoost)

FORCEINLINE PIO_STACK_LOCATION IoGetCurrentIrpStackLocation(_In_ PIRP Irp) {
    return Irp->Tail.Overlay.CurrentStackLocation;
}
FORCEINLINE PIO_STACK_LOCATION IoGetNextIrpStackLocation(_In_ PIRP Irp) {
    return Irp->Tail.Overlay.CurrentStackLocation - 1;
}
FORCEINLINE VOID IoSkipCurrentIrpStackLocation(_Inout_ PIRP Irp) {
    Irp->CurrentLocation++;
    Irp->Tail.Overlay.CurrentStackLocation++;
}
FORCEINLINE VOID IoSetNextIrpStackLocation(_Inout_ PIRP Irp) {
    Irp->CurrentLocation--;
    Irp->Tail.Overlay.CurrentStackLocation--;
}
FORCEINLINE VOID IoCopyCurrentIrpStackLocationToNext(_Inout_ PIRP Irp) {
    PIO_STACK_LOCATION irpSp = IoGetCurrentIrpStackLocation(Irp);
    PIO_STACK_LOCATION nextIrpSp = IoGetNextIrpStackLocation(Irp);
    memcpy(nextIrpSp, irpSp, FIELD_OFFSET(IO_STACK_LOCATION, CompletionRoutine));
    nextIrpSp->Control = 0;
}
FORCEINLINE VOID IoMarkIrpPending(_Inout_ PIRP Irp) {
    IoGetCurrentIrpStackLocation(Irp)->Control |= SL_PENDING_RETURNED;
}
FORCEINLINE VOID IoSetCompletionRoutine(_In_ PIRP Irp,
                                        _In_opt_ PIO_COMPLETION_ROUTINE CompletionRoutine,
                                        _In_opt_ PVOID Context, _In_ BOOLEAN InvokeOnSuccess,
                                        _In_ BOOLEAN InvokeOnError, _In_ BOOLEAN InvokeOnCancel) {
    PIO_STACK_LOCATION irpSp = IoGetNextIrpStackLocation(Irp);
    irpSp->CompletionRoutine = CompletionRoutine;
    irpSp->Context = Context;
    irpSp->Control = 0;
    if (InvokeOnSuccess) irpSp->Control = SL_INVOKE_ON_SUCCESS;
    if (InvokeOnError) irpSp->Control |= SL_INVOKE_ON_ERROR;
    if (InvokeOnCancel) irpSp->Control |= SL_INVOKE_ON_CANCEL;
}
/* As IoSetCompletionRoutine; always STATUS_SUCCESS. (Windows allocates a context
 * that keeps DeviceObject's driver loaded until the routine has run; drivers are
 * not unloaded under a running routine here.) */
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS NTAPI IoSetCompletionRoutineEx(_In_ PDEVICE_OBJECT DeviceObject, _In_ PIRP Irp,
                                        _In_ PIO_COMPLETION_ROUTINE CompletionRoutine,
                                        _In_opt_ PVOID Context, _In_ BOOLEAN InvokeOnSuccess,
                                        _In_ BOOLEAN InvokeOnError, _In_ BOOLEAN InvokeOnCancel);

/* ---- Device objects. IoCreateDevice allocates a DEVICE_OBJECT (Type
 * IO_TYPE_DEVICE, StackSize 1, Flags DO_DEVICE_INITIALIZING) followed by a zeroed
 * extension of DeviceExtensionSize bytes, and links it at the head of
 * DriverObject->DeviceObject through NextDevice, as Windows does. The name, type
 * and characteristics are recorded or ignored: there is no object namespace, so
 * Exclusive and name collisions have no effect. A driver needs one for
 * IoAllocateWorkItem and IoCallDriver. IoDeleteDevice unlinks it and frees it; a
 * device whose ReferenceCount is not 0 (a work item still queued or running) is
 * reported and left allocated, never freed under the item. */
#define DO_BUFFERED_IO          0x00000004
#define DO_EXCLUSIVE            0x00000008
#define DO_DIRECT_IO            0x00000010
#define DO_DEVICE_INITIALIZING  0x00000080
#define FILE_DEVICE_UNKNOWN     0x00000022
#define FILE_DEVICE_NETWORK     0x00000012
#define FILE_DEVICE_SECURE_OPEN 0x00000100
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    IoCreateDevice(_In_ PDRIVER_OBJECT DriverObject, _In_ ULONG DeviceExtensionSize,
                   _In_opt_ PUNICODE_STRING DeviceName, _In_ DEVICE_TYPE DeviceType,
                   _In_ ULONG DeviceCharacteristics, _In_ BOOLEAN Exclusive,
                   _Out_ PDEVICE_OBJECT *DeviceObject);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI IoDeleteDevice(_In_ PDEVICE_OBJECT DeviceObject);

/* ---- System worker threads: executive work items and I/O work items.
 *
 * Both kinds run on one pool of runtime worker threads at PASSIVE_LEVEL, in
 * FIFO order of queueing; the WORK_QUEUE_TYPE (critical, delayed, normal, ...)
 * is accepted and does not change the order. The pool behaves like Windows'
 * work queues (KQUEUEs): it lets at most as many workers run as the machine has
 * processors (at least 2), but when a running work routine blocks in
 * KeWaitForSingleObject, KeWaitForMultipleObjects or KeDelayExecutionThread
 * with work still queued, another worker is released (a thread is created if
 * none is idle, up to 64), so work items that wait for one another do not
 * deadlock. Blocking by other means (a pthread mutex, a system call) is not
 * seen. Idle workers sleep on a condition variable; workers beyond the
 * processor count exit after 10 s idle. A work routine must return at
 * PASSIVE_LEVEL, else the runtime bug-checks WORKER_THREAD_RETURNED_AT_BAD_IRQL.
 * Queueing is allowed at IRQL <= DISPATCH_LEVEL (else IRQL_NOT_LESS_OR_EQUAL).
 * A forked child starts with no queued work and no workers.
 *
 * WORK_QUEUE_ITEM (caller-owned): ExInitializeWorkItem sets the routine and
 * parameter and List.Flink = NULL; List.Flink is non-NULL exactly while the
 * item is queued. The worker clears it before calling the routine, so the
 * routine may free the item or queue it again. Queueing an item that is already
 * queued bug-checks WORKER_INVALID.
 *
 * IO_WORKITEM (runtime-owned, opaque): IoAllocateWorkItem returns one (NULL if
 * pool is exhausted) for DeviceObject, which the routine receives. While the
 * item is queued or its routine runs, DeviceObject->ReferenceCount is one
 * higher, as Windows' reference on the device keeps a driver from unloading
 * under a pending item (SoftNDK also accepts a NULL DeviceObject, which Windows
 * does not, because device objects come from a driver runner not everyone
 * uses). IoQueueWorkItem[Ex] queues it with a routine and context; queueing it
 * again before its routine has started bug-checks WORKER_INVALID, but the
 * routine may queue it again. IoFreeWorkItem frees it and may be called from
 * inside its own routine (the runtime does not touch the item after calling the
 * routine); freeing an item that is queued is reported and aborts. The
 * IoQueueWorkItemEx routine also receives the IO_WORKITEM. */
typedef enum _WORK_QUEUE_TYPE {
    CriticalWorkQueue,
    DelayedWorkQueue,
    HyperCriticalWorkQueue,
    NormalWorkQueue,
    BackgroundWorkQueue,
    RealTimeWorkQueue,
    SuperCriticalWorkQueue,
    MaximumWorkQueue,
    CustomPriorityWorkQueue = 32
} WORK_QUEUE_TYPE;

typedef _Function_class_(WORKER_THREAD_ROUTINE) _IRQL_requires_(PASSIVE_LEVEL) VOID
    WORKER_THREAD_ROUTINE(_In_ PVOID Parameter);
typedef WORKER_THREAD_ROUTINE *PWORKER_THREAD_ROUTINE;

typedef struct _WORK_QUEUE_ITEM {
    LIST_ENTRY List;
    PWORKER_THREAD_ROUTINE WorkerRoutine;
    volatile PVOID Parameter;
} WORK_QUEUE_ITEM, *PWORK_QUEUE_ITEM;

FORCEINLINE VOID ExInitializeWorkItem(_Out_ PWORK_QUEUE_ITEM Item,
                                      _In_ PWORKER_THREAD_ROUTINE Routine, _In_opt_ PVOID Context) {
    Item->WorkerRoutine = Routine;
    Item->Parameter = Context;
    Item->List.Flink = NULL;
}
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExQueueWorkItem(_Inout_ PWORK_QUEUE_ITEM WorkItem, _In_ WORK_QUEUE_TYPE QueueType);

typedef struct _IO_WORKITEM IO_WORKITEM, *PIO_WORKITEM;
typedef _Function_class_(IO_WORKITEM_ROUTINE) _IRQL_requires_(PASSIVE_LEVEL) VOID
    IO_WORKITEM_ROUTINE(_In_ PDEVICE_OBJECT DeviceObject, _In_opt_ PVOID Context);
typedef IO_WORKITEM_ROUTINE *PIO_WORKITEM_ROUTINE;
typedef _Function_class_(IO_WORKITEM_ROUTINE_EX) _IRQL_requires_(PASSIVE_LEVEL) VOID
    IO_WORKITEM_ROUTINE_EX(_In_ PVOID IoObject, _In_opt_ PVOID Context,
                           _In_ PIO_WORKITEM IoWorkItem);
typedef IO_WORKITEM_ROUTINE_EX *PIO_WORKITEM_ROUTINE_EX;

_IRQL_requires_max_(DISPATCH_LEVEL) _Must_inspect_result_ PIO_WORKITEM NTAPI
    IoAllocateWorkItem(_In_opt_ PDEVICE_OBJECT DeviceObject);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI IoFreeWorkItem(_In_ PIO_WORKITEM IoWorkItem);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    IoQueueWorkItem(_Inout_ PIO_WORKITEM IoWorkItem, _In_ PIO_WORKITEM_ROUTINE WorkerRoutine,
                    _In_ WORK_QUEUE_TYPE QueueType, _In_opt_ PVOID Context);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    IoQueueWorkItemEx(_Inout_ PIO_WORKITEM IoWorkItem, _In_ PIO_WORKITEM_ROUTINE_EX WorkerRoutine,
                      _In_ WORK_QUEUE_TYPE QueueType, _In_opt_ PVOID Context);

/* ---- System threads, handles and object references.
 *
 * PsCreateSystemThread (PASSIVE_LEVEL, else IRQL_NOT_LESS_OR_EQUAL) starts a
 * POSIX thread that runs StartRoutine(StartContext) at PASSIVE_LEVEL and
 * returns a kernel-style handle to its thread object (values look like Windows
 * kernel handles: 0xFFFFFFFF8xxxxxxx). DesiredAccess, ObjectAttributes and
 * ProcessHandle are accepted and ignored; ClientId, if given, receives the
 * process ID and a unique thread ID. STATUS_INSUFFICIENT_RESOURCES if the
 * thread cannot be created. The thread ends when StartRoutine returns or calls
 * PsTerminateSystemThread; either way its thread object becomes signalled
 * (a notification object: it stays signalled).
 *
 * What real drivers do with the handle, and what works here:
 *   - ZwClose(handle) at once, when nobody needs to wait for the thread;
 *   - ObReferenceObjectByHandle(handle, ..., *PsThreadType, KernelMode,
 *     (PVOID *)&thread, NULL), then ZwClose(handle); at unload they ask the
 *     thread to stop, KeWaitForSingleObject(thread, Executive, KernelMode,
 *     FALSE, NULL) and ObDereferenceObject(thread);
 *   - ZwWaitForSingleObject(handle, FALSE, timeout) on the handle itself.
 * The thread object lives while its thread runs, while a handle to it is open
 * and while a reference taken with ObReferenceObject[ByHandle] is held.
 *
 * PsTerminateSystemThread ends the calling system thread and does not return:
 * its stack is unwound as pthread_exit does (C++ destructors run), and only then
 * does the thread object become signalled. Called on a thread
 * PsCreateSystemThread did not create, it returns STATUS_INVALID_PARAMETER.
 *
 * ZwClose, ZwWaitForSingleObject and ObReferenceObjectByHandle return
 * STATUS_INVALID_HANDLE for a handle that is not open (Windows may bug-check
 * INVALID_KERNEL_HANDLE instead), and ObReferenceObjectByHandle returns
 * STATUS_OBJECT_TYPE_MISMATCH for an ObjectType other than NULL or
 * *PsThreadType. Thread objects are the only
 * objects the object manager knows: ObReferenceObject / ObDereferenceObject on
 * anything else is reported and aborts. */
typedef ULONG ACCESS_MASK, *PACCESS_MASK;
/* Only the rights drivers pass when creating and referencing threads; short
 * generic names such as DELETE are left out, as they collide with C++ code. */
#define SYNCHRONIZE              0x00100000
#define STANDARD_RIGHTS_REQUIRED 0x000F0000
#define GENERIC_READ             0x80000000
#define GENERIC_WRITE            0x40000000
#define GENERIC_EXECUTE          0x20000000
#define GENERIC_ALL              0x10000000
#define THREAD_ALL_ACCESS        (STANDARD_RIGHTS_REQUIRED | SYNCHRONIZE | 0xFFFF)

typedef struct _CLIENT_ID {
    HANDLE UniqueProcess;
    HANDLE UniqueThread;
} CLIENT_ID, *PCLIENT_ID;

typedef _Function_class_(KSTART_ROUTINE) _IRQL_requires_same_ VOID
    KSTART_ROUTINE(_In_ PVOID StartContext);
typedef KSTART_ROUTINE *PKSTART_ROUTINE;

typedef struct _OBJECT_TYPE *POBJECT_TYPE;
typedef struct _OBJECT_HANDLE_INFORMATION {
    ULONG HandleAttributes;
    ACCESS_MASK GrantedAccess;
} OBJECT_HANDLE_INFORMATION, *POBJECT_HANDLE_INFORMATION;
extern POBJECT_TYPE *PsThreadType;

_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    PsCreateSystemThread(_Out_ PHANDLE ThreadHandle, _In_ ULONG DesiredAccess,
                         _In_opt_ POBJECT_ATTRIBUTES ObjectAttributes,
                         _In_opt_ HANDLE ProcessHandle, _Out_opt_ PCLIENT_ID ClientId,
                         _In_ PKSTART_ROUTINE StartRoutine, _In_opt_ PVOID StartContext);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI PsTerminateSystemThread(_In_ NTSTATUS ExitStatus);

_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI ZwClose(_In_ HANDLE Handle);
/* ntifs.h in the WDK; here so that a driver including ntddk.h finds it. Waits as
 * KeWaitForSingleObject does on the object behind Handle. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwWaitForSingleObject(_In_ HANDLE Handle, _In_ BOOLEAN Alertable,
                          _In_opt_ PLARGE_INTEGER Timeout);
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    ObReferenceObjectByHandle(_In_ HANDLE Handle, _In_ ACCESS_MASK DesiredAccess,
                              _In_opt_ POBJECT_TYPE ObjectType, _In_ KPROCESSOR_MODE AccessMode,
                              _Out_ PVOID *Object,
                              _Out_opt_ POBJECT_HANDLE_INFORMATION HandleInformation);
/* Return the new reference count. */
LONG_PTR NTAPI ObfReferenceObject(_In_ PVOID Object);
LONG_PTR NTAPI ObfDereferenceObject(_In_ PVOID Object);
#define ObReferenceObject(Object)   ObfReferenceObject(Object)
#define ObDereferenceObject(Object) ObfDereferenceObject(Object)

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
/* Modifier OR'ed into a POOL_TYPE: no-execute (all pool is the C heap here). */
#define POOL_NX_ALLOCATION 512

typedef ULONG64 POOL_FLAGS;
#define POOL_FLAG_REQUIRED_START    0x0000000000000001ULL
#define POOL_FLAG_USE_QUOTA         0x0000000000000001ULL /* accepted, no quota */
#define POOL_FLAG_UNINITIALIZED     0x0000000000000002ULL /* do not zero */
#define POOL_FLAG_SESSION           0x0000000000000004ULL
#define POOL_FLAG_CACHE_ALIGNED     0x0000000000000008ULL
#define POOL_FLAG_RESERVED1         0x0000000000000010ULL
#define POOL_FLAG_RAISE_ON_FAILURE  0x0000000000000020ULL /* bug-check instead of NULL */
#define POOL_FLAG_NON_PAGED         0x0000000000000040ULL
#define POOL_FLAG_NON_PAGED_EXECUTE 0x0000000000000080ULL
#define POOL_FLAG_PAGED             0x0000000000000100ULL
#define POOL_FLAG_RESERVED2         0x0000000000000200ULL
#define POOL_FLAG_RESERVED3         0x0000000000000400ULL
#define POOL_FLAG_REQUIRED_END      0x0000000080000000ULL
#define POOL_FLAG_OPTIONAL_START    0x0000000100000000ULL
#define POOL_FLAG_SPECIAL_POOL      0x0000000100000000ULL /* accepted, ignored */
#define POOL_FLAG_OPTIONAL_END      0x8000000000000000ULL

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

/* ExAllocatePoolWithTagPriority: ExAllocatePoolWithTag; Priority is accepted
 * and ignored (there is no pool pressure to prioritise against; the special-pool
 * variants do not use special pool). */
typedef enum _EX_POOL_PRIORITY {
    LowPoolPriority,
    LowPoolPrioritySpecialPoolOverrun = 8,
    LowPoolPrioritySpecialPoolUnderrun = 9,
    NormalPoolPriority = 16,
    NormalPoolPrioritySpecialPoolOverrun = 24,
    NormalPoolPrioritySpecialPoolUnderrun = 25,
    HighPoolPriority = 32,
    HighPoolPrioritySpecialPoolOverrun = 40,
    HighPoolPrioritySpecialPoolUnderrun = 41
} EX_POOL_PRIORITY;
PVOID NTAPI ExAllocatePoolWithTagPriority(_In_ POOL_TYPE PoolType, _In_ SIZE_T NumberOfBytes,
                                          _In_ ULONG Tag, _In_ EX_POOL_PRIORITY Priority);

/* ExAllocatePool3: ExAllocatePool2 plus extended parameters. A priority or a
 * NUMA node is accepted and ignored; a secure-pool parameter is not supported
 * (no ExCreatePool here) and fails the allocation, as does an invalid type that
 * is not marked Optional (an Optional parameter of unknown type is skipped), or
 * ExtendedParameters == NULL with a non-zero count. */
typedef enum POOL_EXTENDED_PARAMETER_TYPE {
    PoolExtendedParameterInvalidType = 0,
    PoolExtendedParameterPriority,
    PoolExtendedParameterSecurePool,
    PoolExtendedParameterNumaNode,
    PoolExtendedParameterMax
} POOL_EXTENDED_PARAMETER_TYPE, *PPOOL_EXTENDED_PARAMETER_TYPE;
#define POOL_EXTENDED_PARAMETER_TYPE_BITS 8
#define POOL_EXTENDED_PARAMETER_REQUIRED_FIELD_BITS 1
#define POOL_EXTENDED_PARAMETER_RESERVED_BITS \
    (64 - POOL_EXTENDED_PARAMETER_TYPE_BITS - POOL_EXTENDED_PARAMETER_REQUIRED_FIELD_BITS)
#define SECURE_POOL_FLAGS_NONE 0x0
#define SECURE_POOL_FLAGS_FREEABLE 0x1
#define SECURE_POOL_FLAGS_MODIFIABLE 0x2
typedef struct _POOL_EXTENDED_PARAMS_SECURE_POOL {
    HANDLE SecurePoolHandle;
    PVOID Buffer;
    ULONG_PTR Cookie;
    ULONG SecurePoolFlags;
} POOL_EXTENDED_PARAMS_SECURE_POOL;
typedef ULONG POOL_NODE_REQUIREMENT;
#define POOL_NODE_REQUIREMENT_ANY_NODE ((POOL_NODE_REQUIREMENT)0x80000000)
typedef struct _POOL_EXTENDED_PARAMETER {
    struct {
        ULONG64 Type : POOL_EXTENDED_PARAMETER_TYPE_BITS;
        ULONG64 Optional : POOL_EXTENDED_PARAMETER_REQUIRED_FIELD_BITS;
        ULONG64 Reserved : POOL_EXTENDED_PARAMETER_RESERVED_BITS;
    } DUMMYSTRUCTNAME;
    union {
        ULONG64 Reserved2;
        PVOID Reserved3;
        EX_POOL_PRIORITY Priority;
        POOL_EXTENDED_PARAMS_SECURE_POOL *SecurePoolParams;
        POOL_NODE_REQUIREMENT PreferredNode;
    } DUMMYUNIONNAME;
} POOL_EXTENDED_PARAMETER, *PPOOL_EXTENDED_PARAMETER;
typedef const POOL_EXTENDED_PARAMETER *PCPOOL_EXTENDED_PARAMETER;
PVOID NTAPI ExAllocatePool3(_In_ POOL_FLAGS Flags, _In_ SIZE_T NumberOfBytes, _In_ ULONG Tag,
                            _In_reads_opt_(ExtendedParametersCount)
                                PCPOOL_EXTENDED_PARAMETER ExtendedParameters,
                            _In_ ULONG ExtendedParametersCount);
/* ExFreePool2: ExFreePoolWithTag for blocks from ExAllocatePool2/3. Only a secure
 * pool parameter would change how a block is freed, and none is ever allocated, so
 * the parameters are checked for shape and otherwise ignored. */
VOID NTAPI ExFreePool2(_In_ PVOID P, _In_ ULONG Tag,
                       _In_reads_opt_(ExtendedParametersCount)
                           PCPOOL_EXTENDED_PARAMETER ExtendedParameters,
                       _In_ ULONG ExtendedParametersCount);

/* ---- Lookaside lists: a per-list cache of freed fixed-size entries in front of
 * the pool. ExAllocateFrom... pops a cached entry, or calls the list's Allocate
 * routine (default: ExAllocatePoolWithTag(Type, Size, Tag), so entries are pool
 * blocks and count as live pool allocations, cached or not). ExFreeTo... pushes
 * the entry onto the cache, or calls the Free routine (default: ExFreePool) when
 * the cache already holds Depth entries. Delete (and ExFlushLookasideListEx) free
 * every cached entry with the Free routine; entries still allocated are the
 * caller's to free first, as on Windows. A cached entry's first 16 bytes are
 * overwritten (its link), so Size is at least 16.
 *
 * Differences from Windows: Windows ignores Depth ("reserved, must be 0") and
 * tunes the cache depth every second between 4 and 256; here the cache holds up
 * to Depth entries, or 256 when Depth is 0, fixed. The cache is a short
 * runtime-private spin lock around a singly linked list (Windows uses a
 * lock-free SLIST), so every call is thread-safe at IRQL <= DISPATCH_LEVEL;
 * Allocate/Free routines run outside that lock. TotalAllocates, AllocateMisses
 * (allocations that called Allocate), TotalFrees and FreeMisses (frees that called
 * Free) count as on Windows; SingleListHead, ListLock and CachedEntries are
 * runtime-private. Flags on the NPaged/Paged lists are OR'ed into the pool type
 * (POOL_RAISE_IF_ALLOCATION_FAILURE is honoured by the default Allocate). */
typedef struct _LOOKASIDE_LIST_EX *PLOOKASIDE_LIST_EX;
typedef _Function_class_(ALLOCATE_FUNCTION) _IRQL_requires_same_
PVOID NTAPI ALLOCATE_FUNCTION(_In_ POOL_TYPE PoolType, _In_ SIZE_T NumberOfBytes, _In_ ULONG Tag);
typedef ALLOCATE_FUNCTION *PALLOCATE_FUNCTION;
typedef _Function_class_(FREE_FUNCTION) _IRQL_requires_same_
VOID NTAPI FREE_FUNCTION(_In_ PVOID Buffer);
typedef FREE_FUNCTION *PFREE_FUNCTION;
typedef _Function_class_(ALLOCATE_FUNCTION_EX) _IRQL_requires_same_
PVOID NTAPI ALLOCATE_FUNCTION_EX(_In_ POOL_TYPE PoolType, _In_ SIZE_T NumberOfBytes,
                                 _In_ ULONG Tag, _Inout_ PLOOKASIDE_LIST_EX Lookaside);
typedef ALLOCATE_FUNCTION_EX *PALLOCATE_FUNCTION_EX;
typedef _Function_class_(FREE_FUNCTION_EX) _IRQL_requires_same_
VOID NTAPI FREE_FUNCTION_EX(_In_ PVOID Buffer, _Inout_ PLOOKASIDE_LIST_EX Lookaside);
typedef FREE_FUNCTION_EX *PFREE_FUNCTION_EX;

/* 96 bytes, as on x64 Windows; GENERAL_LOOKASIDE is the cache-aligned (128-byte)
 * variant the NPaged/Paged lists embed. */
#define SOFTNDK_GENERAL_LOOKASIDE_LAYOUT                                    \
    SINGLE_LIST_ENTRY SingleListHead; /* cached entries (runtime-private) */ \
    volatile LONG ListLock;           /* runtime-private */                  \
    USHORT CachedEntries;             /* runtime-private */                  \
    USHORT Reserved0;                                                        \
    USHORT Depth;                                                            \
    USHORT MaximumDepth;                                                     \
    ULONG TotalAllocates;                                                    \
    union {                                                                  \
        ULONG AllocateMisses;                                                \
        ULONG AllocateHits;                                                  \
    };                                                                       \
    ULONG TotalFrees;                                                        \
    union {                                                                  \
        ULONG FreeMisses;                                                    \
        ULONG FreeHits;                                                      \
    };                                                                       \
    POOL_TYPE Type;                                                          \
    ULONG Tag;                                                               \
    ULONG Size;                                                              \
    union {                                                                  \
        PALLOCATE_FUNCTION_EX AllocateEx;                                    \
        PALLOCATE_FUNCTION Allocate;                                         \
    };                                                                       \
    union {                                                                  \
        PFREE_FUNCTION_EX FreeEx;                                            \
        PFREE_FUNCTION Free;                                                 \
    };                                                                       \
    LIST_ENTRY ListEntry;                                                    \
    ULONG LastTotalAllocates;                                                \
    union {                                                                  \
        ULONG LastAllocateMisses;                                            \
        ULONG LastAllocateHits;                                              \
    };                                                                       \
    ULONG Future[2]

typedef struct _GENERAL_LOOKASIDE_POOL {
    SOFTNDK_GENERAL_LOOKASIDE_LAYOUT;
} GENERAL_LOOKASIDE_POOL, *PGENERAL_LOOKASIDE_POOL;
typedef struct DECLSPEC_CACHEALIGN _GENERAL_LOOKASIDE {
    SOFTNDK_GENERAL_LOOKASIDE_LAYOUT;
} GENERAL_LOOKASIDE, *PGENERAL_LOOKASIDE;

typedef struct DECLSPEC_CACHEALIGN _NPAGED_LOOKASIDE_LIST {
    GENERAL_LOOKASIDE L;
} NPAGED_LOOKASIDE_LIST, *PNPAGED_LOOKASIDE_LIST;
typedef struct DECLSPEC_CACHEALIGN _PAGED_LOOKASIDE_LIST {
    GENERAL_LOOKASIDE L;
} PAGED_LOOKASIDE_LIST, *PPAGED_LOOKASIDE_LIST;
typedef struct _LOOKASIDE_LIST_EX {
    GENERAL_LOOKASIDE_POOL L;
} LOOKASIDE_LIST_EX;

#define LOOKASIDE_MINIMUM_BLOCK_SIZE 16
#define EX_LOOKASIDE_LIST_EX_FLAGS_RAISE_ON_FAIL 0x00000001UL
#define EX_LOOKASIDE_LIST_EX_FLAGS_FAIL_NO_RAISE 0x00000002UL
#define EX_MAXIMUM_LOOKASIDE_DEPTH_BASE  256
#define EX_MAXIMUM_LOOKASIDE_DEPTH_LIMIT 1024

_IRQL_requires_max_(DISPATCH_LEVEL)
VOID NTAPI ExInitializeNPagedLookasideList(_Out_ PNPAGED_LOOKASIDE_LIST Lookaside,
                                           _In_opt_ PALLOCATE_FUNCTION Allocate,
                                           _In_opt_ PFREE_FUNCTION Free, _In_ ULONG Flags,
                                           _In_ SIZE_T Size, _In_ ULONG Tag, _In_ USHORT Depth);
_IRQL_requires_max_(DISPATCH_LEVEL)
PVOID NTAPI ExAllocateFromNPagedLookasideList(_Inout_ PNPAGED_LOOKASIDE_LIST Lookaside);
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID NTAPI ExFreeToNPagedLookasideList(_Inout_ PNPAGED_LOOKASIDE_LIST Lookaside,
                                       _In_ PVOID Entry);
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID NTAPI ExDeleteNPagedLookasideList(_Inout_ PNPAGED_LOOKASIDE_LIST Lookaside);

_IRQL_requires_max_(APC_LEVEL)
VOID NTAPI ExInitializePagedLookasideList(_Out_ PPAGED_LOOKASIDE_LIST Lookaside,
                                          _In_opt_ PALLOCATE_FUNCTION Allocate,
                                          _In_opt_ PFREE_FUNCTION Free, _In_ ULONG Flags,
                                          _In_ SIZE_T Size, _In_ ULONG Tag, _In_ USHORT Depth);
_IRQL_requires_max_(APC_LEVEL)
PVOID NTAPI ExAllocateFromPagedLookasideList(_Inout_ PPAGED_LOOKASIDE_LIST Lookaside);
_IRQL_requires_max_(APC_LEVEL)
VOID NTAPI ExFreeToPagedLookasideList(_Inout_ PPAGED_LOOKASIDE_LIST Lookaside, _In_ PVOID Entry);
_IRQL_requires_max_(APC_LEVEL)
VOID NTAPI ExDeletePagedLookasideList(_Inout_ PPAGED_LOOKASIDE_LIST Lookaside);

/* STATUS_INVALID_PARAMETER for both EX_LOOKASIDE_LIST_EX_FLAGS_* at once or an
 * unknown flag; otherwise STATUS_SUCCESS. RAISE_ON_FAIL makes a failed default
 * allocation bug-check. */
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS NTAPI ExInitializeLookasideListEx(_Out_ PLOOKASIDE_LIST_EX Lookaside,
                                           _In_opt_ PALLOCATE_FUNCTION_EX Allocate,
                                           _In_opt_ PFREE_FUNCTION_EX Free,
                                           _In_ POOL_TYPE PoolType, _In_ ULONG Flags,
                                           _In_ SIZE_T Size, _In_ ULONG Tag, _In_ USHORT Depth);
_IRQL_requires_max_(DISPATCH_LEVEL)
PVOID NTAPI ExAllocateFromLookasideListEx(_Inout_ PLOOKASIDE_LIST_EX Lookaside);
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID NTAPI ExFreeToLookasideListEx(_Inout_ PLOOKASIDE_LIST_EX Lookaside, _In_ PVOID Entry);
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID NTAPI ExFlushLookasideListEx(_Inout_ PLOOKASIDE_LIST_EX Lookaside);
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID NTAPI ExDeleteLookasideListEx(_Inout_ PLOOKASIDE_LIST_EX Lookaside);

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
 * Lengths above 4 GB - PAGE_SIZE fail (NULL), as on Windows 7 and later. With an
 * Irp, the MDL becomes Irp->MdlAddress, or with SecondaryBuffer is appended to
 * that chain; the IRP does not own it. ChargeQuota has no effect. */
typedef enum _LOCK_OPERATION { IoReadAccess, IoWriteAccess, IoModifyAccess } LOCK_OPERATION;
typedef enum _MM_PAGE_PRIORITY {
    LowPagePriority,
    NormalPagePriority = 16,
    HighPagePriority = 32
} MM_PAGE_PRIORITY;
#define MdlMappingNoWrite   0x80000000
#define MdlMappingNoExecute 0x40000000

#define MmInitializeMdl(MemoryDescriptorList, BaseVa, Length)                                    \
    do {                                                                                         \
        (MemoryDescriptorList)->Next = (PMDL)NULL;                                               \
        (MemoryDescriptorList)->Size =                                                           \
            (CSHORT)(sizeof(MDL) +                                                               \
                     (sizeof(PFN_NUMBER) * ADDRESS_AND_SIZE_TO_SPAN_PAGES((BaseVa), (Length)))); \
        (MemoryDescriptorList)->MdlFlags = 0;                                                    \
        (MemoryDescriptorList)->StartVa = (PVOID)PAGE_ALIGN((BaseVa));                           \
        (MemoryDescriptorList)->ByteOffset = BYTE_OFFSET((BaseVa));                              \
        (MemoryDescriptorList)->ByteCount = (ULONG)(Length);                                     \
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

/* ---- Memory helpers. RtlEqualMemory, RtlMoveMemory, RtlCopyMemory,
 * RtlFillMemory and RtlZeroMemory are the C library's memcmp / memmove / memcpy /
 * memset, as in the WDK (so RtlCopyMemory's buffers must not overlap; use
 * RtlMoveMemory when they may). RtlCompareMemory returns the number of leading
 * bytes that are equal (Length when the blocks are equal), NOT a memcmp-style
 * ordering. RtlSecureZeroMemory is never optimised away (volatile stores). */
#ifndef RtlZeroMemory
#define RtlEqualMemory(Destination, Source, Length) (!memcmp((Destination), (Source), (Length)))
#define RtlMoveMemory(Destination, Source, Length) memmove((Destination), (Source), (Length))
#define RtlCopyMemory(Destination, Source, Length) memcpy((Destination), (Source), (Length))
#define RtlFillMemory(Destination, Length, Fill) memset((Destination), (Fill), (Length))
#define RtlZeroMemory(Destination, Length) memset((Destination), 0, (Length))
#endif
SIZE_T NTAPI RtlCompareMemory(_In_ const VOID *Source1, _In_ const VOID *Source2,
                              _In_ SIZE_T Length);
FORCEINLINE PVOID RtlSecureZeroMemory(_Out_writes_bytes_all_(Cnt) PVOID ptr, _In_ SIZE_T cnt) {
    volatile char *vptr = (volatile char *)ptr;
    while (cnt != 0) {
        *vptr++ = 0;
        --cnt;
    }
    return ptr;
}

/* ---- Counted strings (UNICODE_STRING, ANSI_STRING; see also RTL_CONSTANT_STRING
 * and DECLARE_CONST_UNICODE_STRING in ntdef.h). Lengths are in BYTES, and WCHAR is
 * wchar_t - 4 bytes here, 2 on Windows (ntdef.h says why) - so a UNICODE_STRING's
 * Length is 4 * characters and holds at most 16382 characters instead of 32766.
 * Code that computes lengths with sizeof(WCHAR) is unaffected; code that assumes
 * 2 bytes per character is not.
 *   RtlInitEmpty{Unicode,Ansi}String  an empty string over a caller's buffer.
 *   RtlInitUnicodeString / RtlInitAnsiString / RtlInitString  point the string at
 *       the NUL-terminated Source (no copy): Length = its length, MaximumLength =
 *       Length plus the terminator; a NULL Source gives an empty string with a NULL
 *       Buffer. A Source too long for a USHORT length is truncated, as Windows does.
 *   RtlCopyUnicodeString  copies min(Source->Length, Destination->MaximumLength)
 *       bytes and NUL-terminates when a whole WCHAR of room is left; a NULL Source
 *       makes Destination empty.
 *   RtlEqualUnicodeString / RtlCompareUnicodeString  compare character by character,
 *       optionally after RtlUpcaseUnicodeChar (simple Unicode upper-casing, from the
 *       C library's C.UTF-8 tables, close to Windows' upcase table). Compare returns
 *       < 0, 0 or > 0: the difference of the first differing characters, else of the
 *       lengths. */
VOID NTAPI RtlInitUnicodeString(_Out_ PUNICODE_STRING DestinationString,
                                _In_opt_z_ PCWSTR SourceString);
VOID NTAPI RtlInitAnsiString(_Out_ PANSI_STRING DestinationString, _In_opt_z_ PCSZ SourceString);
VOID NTAPI RtlInitString(_Out_ PSTRING DestinationString, _In_opt_z_ PCSZ SourceString);
VOID NTAPI RtlCopyUnicodeString(_Inout_ PUNICODE_STRING DestinationString,
                                _In_opt_ PCUNICODE_STRING SourceString);
BOOLEAN NTAPI RtlEqualUnicodeString(_In_ PCUNICODE_STRING String1, _In_ PCUNICODE_STRING String2,
                                    _In_ BOOLEAN CaseInSensitive);
LONG NTAPI RtlCompareUnicodeString(_In_ PCUNICODE_STRING String1, _In_ PCUNICODE_STRING String2,
                                   _In_ BOOLEAN CaseInSensitive);
WCHAR NTAPI RtlUpcaseUnicodeChar(_In_ WCHAR SourceCharacter);
/* An empty string over a caller's buffer of BufferSize bytes (no terminator written). */
FORCEINLINE VOID RtlInitEmptyUnicodeString(_Out_ PUNICODE_STRING UnicodeString,
                                           _In_opt_ PWCHAR Buffer, _In_ USHORT BufferSize) {
    UnicodeString->Length = 0;
    UnicodeString->MaximumLength = BufferSize;
    UnicodeString->Buffer = Buffer;
}
FORCEINLINE VOID RtlInitEmptyAnsiString(_Out_ PANSI_STRING AnsiString, _In_opt_ PCHAR Buffer,
                                        _In_ USHORT BufferSize) {
    AnsiString->Length = 0;
    AnsiString->MaximumLength = BufferSize;
    AnsiString->Buffer = Buffer;
}

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
#define DPFLTR_ERROR_LEVEL     0
#define DPFLTR_WARNING_LEVEL   1
#define DPFLTR_TRACE_LEVEL     2
#define DPFLTR_INFO_LEVEL      3
#define DPFLTR_MASK            0x80000000
#define DPFLTR_IHVDRIVER_ID    77
#define DPFLTR_IHVVIDEO_ID     78
#define DPFLTR_IHVAUDIO_ID     79
#define DPFLTR_IHVNETWORK_ID   80
#define DPFLTR_IHVSTREAMING_ID 81
#define DPFLTR_IHVBUS_ID       82
#define DPFLTR_DEFAULT_ID      101

ULONG __cdecl DbgPrint(_In_ PCSTR Format, ...);
ULONG __cdecl DbgPrintEx(_In_ ULONG ComponentId, _In_ ULONG Level, _In_ PCSTR Format, ...);
ULONG NTAPI vDbgPrintEx(_In_ ULONG ComponentId, _In_ ULONG Level, _In_ PCSTR Format,
                        _In_ va_list arglist);
#define KdPrint(_x_)   DbgPrint _x_
#define KdPrintEx(_x_) DbgPrintEx _x_

/* ---- Assertions. Never compiled out (DBG is not consulted): a failing
 * NT_ASSERT, NT_VERIFY or ASSERT reports the expression, the message if any,
 * the file, the line and the function through the "wdk" logger and stderr,
 * then calls abort() - what an unhandled assertion does on a Windows machine
 * without a debugger. Each evaluates its expression exactly once and, as an
 * expression, yields TRUE (so `if (NT_VERIFY(x))` works). */
DECLSPEC_NORETURN VOID NTAPI SoftNdkAssertionFailure(_In_ PCSTR Expression, _In_opt_ PCSTR Message,
                                                     _In_ PCSTR File, _In_ ULONG Line,
                                                     _In_ PCSTR Function);

FORCEINLINE BOOLEAN SoftNdkAssertionCheck(int Passed, PCSTR Expression, PCSTR Message, PCSTR File,
                                          ULONG Line, PCSTR Function) {
    if (!Passed) {
        SoftNdkAssertionFailure(Expression, Message, File, Line, Function);
    }
    return TRUE;
}

#define NT_ASSERT(_exp) \
    SoftNdkAssertionCheck(!!(_exp), #_exp, (PCSTR)NULL, __FILE__, __LINE__, __func__)
#define NT_ASSERTMSG(_msg, _exp) \
    SoftNdkAssertionCheck(!!(_exp), #_exp, (_msg), __FILE__, __LINE__, __func__)
#define NT_VERIFY(_exp)          NT_ASSERT(_exp)
#define NT_VERIFYMSG(_msg, _exp) NT_ASSERTMSG(_msg, _exp)
#define NT_ANALYSIS_ASSUME(_exp) ((void)0)
#ifndef ASSERT
#define ASSERT(_exp) NT_ASSERT(_exp)
#endif
#ifndef ASSERTMSG
#define ASSERTMSG(_msg, _exp) NT_ASSERTMSG(_msg, _exp)
#endif

/* Code that may page: the IRQL must be at most APC_LEVEL. Checked, not
 * compiled out.
 *
 * `#pragma alloc_text(PAGE, Routine)` (and `#pragma code_seg`, `#pragma
 * warning(...)` and other MSVC pragmas) mean nothing to gcc, whose -Wall
 * reports them (-Wunknown-pragmas). A `#pragma GCC diagnostic ignored` in this
 * header cannot silence that: g++ 12 reports unknown pragmas while preprocessing,
 * before such a pragma takes effect (it only works in C, and only without
 * push/pop around it). So a driver adds -Wno-unknown-pragmas:
 * softndk_add_driver() does it for the driver it builds; other consumers add it
 * themselves (SoftNDK imposes no flags on its consumers). */
#define PAGED_CODE() ((void)NT_ASSERT(KeGetCurrentIrql() <= APC_LEVEL))

#ifdef __cplusplus
}
#endif

/* The rest of the WDK's kernel surface, by area (each part has its own extern "C"). */
#include <softndk_wdm_system.h>

#include <softndk_wdm_exec.h>

#include <softndk_wdm_io.h>

#endif /* _WDMDDK_ */
