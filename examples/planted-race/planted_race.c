/*
 * planted_race.c - a kernel-style driver with a planted ordering bug, for SoftNDK's
 * simulated time (docs/simulation.md): a seed sweep finds it, and the failing seed
 * replays to the same failure every time.
 *
 * The bug, in the shape it takes in real NDK consumers: completion routines (here work
 * items, as a driver defers CQ notifications to PASSIVE_LEVEL) count the outstanding
 * requests down, and the last one signals the waiter. The count is read, some
 * bookkeeping runs under a spin lock, and the count is written back: not one atomic
 * step. Two routines that overlap in that window lose an update, the count never reaches
 * zero, and the waiter gives up.
 *
 * On a real machine the routines start tens of microseconds apart and the window is a
 * few hundred nanoseconds, so ordinary runs pass almost always. Under
 * SOFTNDK_TIME=simulated, KeAcquireSpinLock is a control transfer point and the seed
 * decides who runs next.
 *
 *   softndk sim --seeds 1..1000 -- planted_race
 *
 * Exit status: 0 when every completion was counted, 1 when one was lost. Built with
 * PR_FIXED (the planted_race_fixed program) it counts with InterlockedDecrement: then
 * every seed passes.
 */
#include <ntddk.h>

#define PR_REQUESTS 2

static WORK_QUEUE_ITEM g_items[PR_REQUESTS];
static KSPIN_LOCK g_statsLock;
static ULONG g_completed; /* statistics, under g_statsLock */
static volatile LONG g_outstanding;
static KEVENT g_allDone;

static VOID PrComplete(PVOID Context) {
    UNREFERENCED_PARAMETER(Context);
    KIRQL irql;
#ifdef PR_FIXED
    KeAcquireSpinLock(&g_statsLock, &irql);
    ++g_completed;
    KeReleaseSpinLock(&g_statsLock, irql);
    if (InterlockedDecrement(&g_outstanding) == 0)
        KeSetEvent(&g_allDone, IO_NO_INCREMENT, FALSE);
#else
    const LONG remaining = g_outstanding; /* THE BUG: read here... */
    KeAcquireSpinLock(&g_statsLock, &irql);
    ++g_completed;
    KeReleaseSpinLock(&g_statsLock, irql);
    g_outstanding = remaining - 1; /* ...written back here */
    if (remaining - 1 == 0) KeSetEvent(&g_allDone, IO_NO_INCREMENT, FALSE);
#endif
}

static VOID PrUnload(PDRIVER_OBJECT DriverObject) {
    UNREFERENCED_PARAMETER(DriverObject);
}

NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    UNREFERENCED_PARAMETER(RegistryPath);
    DriverObject->DriverUnload = PrUnload;
    KeInitializeSpinLock(&g_statsLock);
    KeInitializeEvent(&g_allDone, NotificationEvent, FALSE);
    g_outstanding = PR_REQUESTS;
    for (ULONG i = 0; i < PR_REQUESTS; ++i) {
        ExInitializeWorkItem(&g_items[i], PrComplete, NULL);
        ExQueueWorkItem(&g_items[i], DelayedWorkQueue);
    }
    LARGE_INTEGER timeout;
    timeout.QuadPart = -10 * 1000 * 1000; /* 1 s, relative */
    if (KeWaitForSingleObject(&g_allDone, Executive, KernelMode, FALSE, &timeout) ==
        STATUS_TIMEOUT) {
        DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_ERROR_LEVEL,
                   "planted-race: %lu of %d completions ran, but %ld are still outstanding: "
                   "an update of the count was lost\n",
                   g_completed, PR_REQUESTS, g_outstanding);
        return STATUS_UNSUCCESSFUL;
    }
    return STATUS_SUCCESS;
}
