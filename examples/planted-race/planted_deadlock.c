/*
 * planted_deadlock.c - a kernel-style driver with a planted lock-order inversion, for
 * SoftNDK's simulated time (docs/simulation.md). Two system threads take two KMUTEXes in
 * opposite orders; only some interleavings deadlock, and a seed sweep finds them: the
 * scheduler then ends the run with exit status 86 and prints every thread's wait.
 *
 *   softndk sim --seeds 1..100 -- planted_deadlock
 */
#include <ntddk.h>

static KMUTEX g_first, g_second;

static VOID PdTakeBoth(PKMUTEX One, PKMUTEX Two) {
    KeWaitForSingleObject(One, Executive, KernelMode, FALSE, NULL);
    KeWaitForSingleObject(Two, Executive, KernelMode, FALSE, NULL);
    KeReleaseMutex(Two, FALSE);
    KeReleaseMutex(One, FALSE);
}

static VOID PdForward(PVOID Context) {
    UNREFERENCED_PARAMETER(Context);
    PdTakeBoth(&g_first, &g_second);
    PsTerminateSystemThread(STATUS_SUCCESS);
}

static VOID PdBackward(PVOID Context) {
    UNREFERENCED_PARAMETER(Context);
    PdTakeBoth(&g_second, &g_first); /* THE BUG: the opposite order */
    PsTerminateSystemThread(STATUS_SUCCESS);
}

static VOID PdUnload(PDRIVER_OBJECT DriverObject) {
    UNREFERENCED_PARAMETER(DriverObject);
}

NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    UNREFERENCED_PARAMETER(RegistryPath);
    DriverObject->DriverUnload = PdUnload;
    KeInitializeMutex(&g_first, 0);
    KeInitializeMutex(&g_second, 0);
    HANDLE forward, backward;
    NTSTATUS status =
        PsCreateSystemThread(&forward, THREAD_ALL_ACCESS, NULL, NULL, NULL, PdForward, NULL);
    if (!NT_SUCCESS(status)) return status;
    ZwClose(forward);
    status = PsCreateSystemThread(&backward, THREAD_ALL_ACCESS, NULL, NULL, NULL, PdBackward, NULL);
    if (!NT_SUCCESS(status)) return status;
    ZwClose(backward);
    return STATUS_SUCCESS; /* the runner waits for both threads to finish */
}
