/*
 * kernel_style_c.c - the WDK runtime used the way a kernel driver uses it, in C11:
 * an asynchronous call turned synchronous with a KEVENT on the stack, a timed-out wait, a
 * pool buffer described by an MDL, and a counter guarded by a spin lock from two threads.
 * The threads stand in for the provider's completion context (pthreads: ThreadSanitizer
 * does not follow C11 <threads.h> threads in this toolchain).
 * Then the deferred-work side of a driver: a device context guarded by a fast mutex, an
 * in-stack queued spin lock and rundown protection; requests completed by IO_WORKITEMs that
 * free themselves and by an executive work item; a periodic KTIMER whose DPC counts with
 * Interlocked*; and a system thread referenced by handle, stopped and waited for at
 * "unload". Routines are declared through the WDK's role typedefs, as drivers do.
 *
 * Exit status 0 when every check holds; otherwise the first failed check is on stderr.
 */
#include <ntddk.h>

#include <pthread.h>
#include <stdio.h>

#define SAMPLE_TAG         0x6C6D6153 /* "Saml" */
#define SPINNER_ITERATIONS 100000

#define EXPECT(condition)                                                                 \
    do {                                                                                  \
        if (!(condition)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

/* ---- An "asynchronous operation" that completes on another thread. */
typedef struct _REQUEST_CONTEXT {
    KEVENT Done;
    NTSTATUS Status;
} REQUEST_CONTEXT, *PREQUEST_CONTEXT;

static void *CompleteRequestLater(void *Argument) {
    PREQUEST_CONTEXT context = (PREQUEST_CONTEXT)Argument;
    LARGE_INTEGER delay;
    delay.QuadPart = -10LL * 1000 * 5; /* 5 ms */
    KeDelayExecutionThread(KernelMode, FALSE, &delay);
    context->Status = STATUS_SUCCESS;
    KeSetEvent(&context->Done, IO_NO_INCREMENT, FALSE);
    return NULL;
}

/* Issues the request and waits for it, the usual kernel way. The context (and its event)
 * lives on this stack frame only. */
static NTSTATUS SendRequestSynchronously(void) {
    REQUEST_CONTEXT context;
    LARGE_INTEGER timeout;
    NTSTATUS status;
    pthread_t completer;

    PAGED_CODE();
    RtlZeroMemory(&context, sizeof(context)); /* a zeroed KEVENT: unsignalled notification */
    context.Status = STATUS_PENDING;
    if (pthread_create(&completer, NULL, CompleteRequestLater, &context) != 0) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    timeout.QuadPart = -10LL * 1000 * 1000 * 10; /* 10 s */
    status = KeWaitForSingleObject(&context.Done, Executive, KernelMode, FALSE, &timeout);
    pthread_join(completer, NULL);
    if (status == STATUS_TIMEOUT) {
        return STATUS_IO_TIMEOUT;
    }
    return context.Status;
}

static int CheckEvents(void) {
    KEVENT never;
    LARGE_INTEGER timeout;

    EXPECT(NT_SUCCESS(SendRequestSynchronously()));
    EXPECT(NT_SUCCESS(SendRequestSynchronously())); /* same stack slot, fresh event */

    KeInitializeEvent(&never, SynchronizationEvent, FALSE);
    timeout.QuadPart = -10LL * 1000 * 10; /* 10 ms */
    EXPECT(KeWaitForSingleObject(&never, Executive, KernelMode, FALSE, &timeout) == STATUS_TIMEOUT);
    EXPECT(KeSetEvent(&never, IO_NO_INCREMENT, FALSE) == 0);
    EXPECT(KeReadStateEvent(&never) == 1);
    return 0;
}

static int CheckPoolAndMdl(void) {
    PUCHAR buffer;
    PUCHAR start;
    PMDL mdl;
    PPFN_NUMBER pfns;
    ULONG length = 2 * PAGE_SIZE;
    ULONG i;

    buffer = (PUCHAR)ExAllocatePoolWithTag(NonPagedPoolNx, 3 * PAGE_SIZE, SAMPLE_TAG);
    EXPECT(buffer != NULL);
    EXPECT(((ULONG_PTR)buffer & (PAGE_SIZE - 1)) == 0);
    start = buffer + 100;
    RtlFillMemory(start, length, 0x5A);

    mdl = IoAllocateMdl(start, length, FALSE, FALSE, NULL);
    EXPECT(mdl != NULL);
    MmBuildMdlForNonPagedPool(mdl);
    EXPECT(MmGetMdlVirtualAddress(mdl) == start);
    EXPECT(MmGetMdlByteCount(mdl) == length);
    EXPECT(MmGetMdlByteOffset(mdl) == 100);
    EXPECT(ADDRESS_AND_SIZE_TO_SPAN_PAGES(start, length) == 3);
    EXPECT(mdl->Size == (CSHORT)(sizeof(MDL) + 3 * sizeof(PFN_NUMBER)));
    pfns = MmGetMdlPfnArray(mdl);
    for (i = 0; i < 3; ++i) {
        EXPECT(pfns[i] == ((ULONG_PTR)buffer >> PAGE_SHIFT) + i);
    }
    EXPECT(MmGetSystemAddressForMdlSafe(mdl, NormalPagePriority | MdlMappingNoExecute) == start);
    EXPECT(((PUCHAR)MmGetSystemAddressForMdlSafe(mdl, NormalPagePriority))[length - 1] == 0x5A);
    IoFreeMdl(mdl);
    ExFreePoolWithTag(buffer, SAMPLE_TAG);

    buffer = (PUCHAR)ExAllocatePool2(POOL_FLAG_NON_PAGED, 64, SAMPLE_TAG);
    EXPECT(buffer != NULL);
    for (i = 0; i < 64; ++i) {
        EXPECT(buffer[i] == 0);
    }
    ExFreePool(buffer);
    return 0;
}

/* ---- A counter guarded by a spin lock, from two threads. */
typedef struct _SHARED_COUNTER {
    KSPIN_LOCK Lock;
    LONG Value;
} SHARED_COUNTER, *PSHARED_COUNTER;

static void *Spinner(void *Argument) {
    PSHARED_COUNTER counter = (PSHARED_COUNTER)Argument;
    KIRQL oldIrql;
    int i;
    for (i = 0; i < SPINNER_ITERATIONS; ++i) {
        KeAcquireSpinLock(&counter->Lock, &oldIrql);
        NT_ASSERT(KeGetCurrentIrql() == DISPATCH_LEVEL);
        counter->Value++;
        KeReleaseSpinLock(&counter->Lock, oldIrql);
    }
    return NULL;
}

static int CheckSpinLock(void) {
    SHARED_COUNTER counter;
    pthread_t first;
    pthread_t second;

    KeInitializeSpinLock(&counter.Lock);
    counter.Value = 0;
    EXPECT(pthread_create(&first, NULL, Spinner, &counter) == 0);
    EXPECT(pthread_create(&second, NULL, Spinner, &counter) == 0);
    pthread_join(first, NULL);
    pthread_join(second, NULL);
    EXPECT(counter.Value == 2 * SPINNER_ITERATIONS);
    EXPECT(KeGetCurrentIrql() == PASSIVE_LEVEL);
    return 0;
}

/* ---- Deferred work: a driver's device context. */
typedef struct _SAMPLE_DEVICE {
    FAST_MUTEX ConfigLock;  /* PASSIVE/APC-level state */
    KSPIN_LOCK StatsLock;   /* DPC-level state, queued lock */
    EX_RUNDOWN_REF Rundown; /* outstanding requests */
    LONG RequestsCompleted; /* Interlocked */
    LONG Configured;        /* under ConfigLock */
    LONG64 TimerTicks;      /* Interlocked */
    ULONG StatsUpdates;     /* under StatsLock */
    KTIMER Timer;
    KDPC TimerDpc;
    KEVENT ThreeTicks;
    KEVENT AllRequestsDone;
    KEVENT StopThread;
    PVOID Self; /* InterlockedCompareExchangePointer target */
    WORK_QUEUE_ITEM ExWorkItem;
    DEVICE_OBJECT DeviceObject;
} SAMPLE_DEVICE, *PSAMPLE_DEVICE;

#define SAMPLE_REQUESTS 4

static DRIVER_INITIALIZE SampleDriverEntry;
static DRIVER_UNLOAD SampleDriverUnload;
static KDEFERRED_ROUTINE SampleTimerDpc;
static IO_WORKITEM_ROUTINE SampleCompleteRequest;
static WORKER_THREAD_ROUTINE SampleExWork;
static KSTART_ROUTINE SampleThread;

static SAMPLE_DEVICE g_device;
static PETHREAD g_thread;

static void SampleRequestDone(PSAMPLE_DEVICE Device) {
    KLOCK_QUEUE_HANDLE lockHandle;
    KeAcquireInStackQueuedSpinLock(&Device->StatsLock, &lockHandle);
    Device->StatsUpdates++;
    KeReleaseInStackQueuedSpinLock(&lockHandle);
    if (InterlockedIncrement(&Device->RequestsCompleted) == SAMPLE_REQUESTS + 1) {
        KeSetEvent(&Device->AllRequestsDone, IO_NO_INCREMENT, FALSE);
    }
    ExReleaseRundownProtection(&Device->Rundown);
}

/* The IO_WORKITEM is the context: the routine frees it, as one-shot work items do. */
static VOID SampleCompleteRequest(PDEVICE_OBJECT DeviceObject, PVOID Context) {
    PSAMPLE_DEVICE device = CONTAINING_RECORD(DeviceObject, SAMPLE_DEVICE, DeviceObject);
    PAGED_CODE();
    IoFreeWorkItem((PIO_WORKITEM)Context);
    ExAcquireFastMutex(&device->ConfigLock);
    device->Configured++;
    ExReleaseFastMutex(&device->ConfigLock);
    SampleRequestDone(device);
}

static VOID SampleExWork(PVOID Parameter) {
    SampleRequestDone((PSAMPLE_DEVICE)Parameter);
}

static VOID SampleTimerDpc(PKDPC Dpc, PVOID DeferredContext, PVOID SystemArgument1,
                           PVOID SystemArgument2) {
    PSAMPLE_DEVICE device = (PSAMPLE_DEVICE)DeferredContext;
    KLOCK_QUEUE_HANDLE lockHandle;
    UNREFERENCED_PARAMETER(Dpc);
    UNREFERENCED_PARAMETER(SystemArgument1);
    UNREFERENCED_PARAMETER(SystemArgument2);
    NT_ASSERT(KeGetCurrentIrql() == DISPATCH_LEVEL);
    KeAcquireInStackQueuedSpinLockAtDpcLevel(&device->StatsLock, &lockHandle);
    device->StatsUpdates++;
    KeReleaseInStackQueuedSpinLockFromDpcLevel(&lockHandle);
    if (InterlockedIncrement64(&device->TimerTicks) == 3) {
        KeSetEvent(&device->ThreeTicks, IO_NO_INCREMENT, FALSE);
    }
}

static VOID SampleThread(PVOID StartContext) {
    PSAMPLE_DEVICE device = (PSAMPLE_DEVICE)StartContext;
    KeWaitForSingleObject(&device->StopThread, Executive, KernelMode, FALSE, NULL);
    PsTerminateSystemThread(STATUS_SUCCESS);
}

static NTSTATUS SampleDriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    PSAMPLE_DEVICE device = &g_device;
    OBJECT_ATTRIBUTES attributes;
    HANDLE threadHandle;
    LARGE_INTEGER dueTime;
    NTSTATUS status;
    int i;

    UNREFERENCED_PARAMETER(RegistryPath);
    DriverObject->DriverUnload = SampleDriverUnload;
    RtlZeroMemory(device, sizeof(*device));
    device->DeviceObject.DriverObject = DriverObject;
    ExInitializeFastMutex(&device->ConfigLock);
    KeInitializeSpinLock(&device->StatsLock);
    ExInitializeRundownProtection(&device->Rundown);
    KeInitializeEvent(&device->ThreeTicks, NotificationEvent, FALSE);
    KeInitializeEvent(&device->AllRequestsDone, NotificationEvent, FALSE);
    KeInitializeEvent(&device->StopThread, NotificationEvent, FALSE);
    if (InterlockedCompareExchangePointer(&device->Self, device, NULL) != NULL) {
        return STATUS_UNSUCCESSFUL;
    }

    InitializeObjectAttributes(&attributes, NULL, OBJ_KERNEL_HANDLE, NULL, NULL);
    status = PsCreateSystemThread(&threadHandle, THREAD_ALL_ACCESS, &attributes, NULL, NULL,
                                  SampleThread, device);
    if (!NT_SUCCESS(status)) {
        return status;
    }
    status = ObReferenceObjectByHandle(threadHandle, THREAD_ALL_ACCESS, *PsThreadType, KernelMode,
                                       (PVOID *)&g_thread, NULL);
    ZwClose(threadHandle);
    if (!NT_SUCCESS(status)) {
        return status;
    }

    KeInitializeTimerEx(&device->Timer, NotificationTimer);
    KeInitializeDpc(&device->TimerDpc, SampleTimerDpc, device);
    dueTime.QuadPart = -10LL * 1000; /* 1 ms */
    KeSetTimerEx(&device->Timer, dueTime, 2 /* ms */, &device->TimerDpc);

    for (i = 0; i < SAMPLE_REQUESTS; ++i) {
        PIO_WORKITEM workItem = IoAllocateWorkItem(&device->DeviceObject);
        if (workItem == NULL || !ExAcquireRundownProtection(&device->Rundown)) {
            return STATUS_INSUFFICIENT_RESOURCES;
        }
        IoQueueWorkItem(workItem, SampleCompleteRequest, DelayedWorkQueue, workItem);
    }
    if (!ExAcquireRundownProtection(&device->Rundown)) {
        return STATUS_UNSUCCESSFUL;
    }
    ExInitializeWorkItem(&device->ExWorkItem, SampleExWork, device);
    ExQueueWorkItem(&device->ExWorkItem, CriticalWorkQueue);
    return STATUS_SUCCESS;
}

static VOID SampleDriverUnload(PDRIVER_OBJECT DriverObject) {
    PSAMPLE_DEVICE device = &g_device;
    UNREFERENCED_PARAMETER(DriverObject);
    PAGED_CODE();
    KeCancelTimer(&device->Timer);
    KeFlushQueuedDpcs();
    ExWaitForRundownProtectionRelease(&device->Rundown);
    KeSetEvent(&device->StopThread, IO_NO_INCREMENT, FALSE);
    KeWaitForSingleObject(g_thread, Executive, KernelMode, FALSE, NULL);
    ObDereferenceObject(g_thread);
}

static int CheckDeferredWork(void) {
    DRIVER_OBJECT driver;
    LARGE_INTEGER timeout;
    LONG ticks;
    LARGE_INTEGER zero;

    RtlZeroMemory(&driver, sizeof(driver));
    EXPECT(NT_SUCCESS(SampleDriverEntry(&driver, NULL)));
    timeout.QuadPart = -10LL * 1000 * 1000 * 10; /* 10 s */
    EXPECT(KeWaitForSingleObject(&g_device.ThreeTicks, Executive, KernelMode, FALSE, &timeout) ==
           STATUS_SUCCESS);
    EXPECT(KeWaitForSingleObject(&g_device.AllRequestsDone, Executive, KernelMode, FALSE,
                                 &timeout) == STATUS_SUCCESS);
    driver.DriverUnload(&driver);

    EXPECT(g_device.RequestsCompleted == SAMPLE_REQUESTS + 1);
    EXPECT(g_device.Configured == SAMPLE_REQUESTS);
    EXPECT(ExAcquireRundownProtection(&g_device.Rundown) == FALSE);
    ticks = (LONG)InterlockedCompareExchange64(&g_device.TimerTicks, 0, 0);
    EXPECT(ticks >= 3);
    EXPECT(KeReadStateTimer(&g_device.Timer) == TRUE);
    zero.QuadPart = 0;
    EXPECT(KeWaitForSingleObject(&g_device.Timer, Executive, KernelMode, FALSE, &zero) ==
           STATUS_SUCCESS);
    EXPECT(KeGetCurrentIrql() == PASSIVE_LEVEL);
    return 0;
}

int main(void) {
    if (CheckEvents() != 0 || CheckPoolAndMdl() != 0 || CheckSpinLock() != 0 ||
        CheckDeferredWork() != 0) {
        return 1;
    }
    KdPrint(("kernel_style_c: all checks passed (%lu spinner iterations)\n",
             (ULONG)SPINNER_ITERATIONS));
    return 0;
}
