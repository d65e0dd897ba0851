/*
 * kernel_style_c.c - the WDK runtime used the way a kernel driver uses it, in C11:
 * an asynchronous call turned synchronous with a KEVENT on the stack, a timed-out wait, a
 * pool buffer described by an MDL, and a counter guarded by a spin lock from two threads.
 * The threads stand in for the provider's completion context (pthreads: ThreadSanitizer
 * does not follow C11 <threads.h> threads in this toolchain).
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

int main(void) {
    if (CheckEvents() != 0 || CheckPoolAndMdl() != 0 || CheckSpinLock() != 0) {
        return 1;
    }
    KdPrint(("kernel_style_c: all checks passed (%lu spinner iterations)\n",
             (ULONG)SPINNER_ITERATIONS));
    return 0;
}
