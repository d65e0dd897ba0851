/* A kernel-style test driver for the runner (SoftNDK::driver_main): DriverEntry
 * queues a work item, the work item starts a system thread, a timer fires a DPC;
 * the runner must wait for all of them before it calls DriverUnload. Which
 * behaviour DriverEntry picks comes from the registry path's last component,
 * i.e. the program's name: "...fail" makes DriverEntry fail. */
#include <ntddk.h>

#include <stdio.h>
#include <string.h>
#include <wchar.h>

static WORK_QUEUE_ITEM Work;
static KTIMER Timer;
static KDPC Dpc;
static volatile LONG ThreadDone, WorkDone, DpcDone;

static KSTART_ROUTINE ThreadMain;
static VOID ThreadMain(PVOID Context) {
    LARGE_INTEGER delay;
    UNREFERENCED_PARAMETER(Context);
    delay.QuadPart = -50 * 10000LL; /* 50 ms */
    KeDelayExecutionThread(KernelMode, FALSE, &delay);
    InterlockedExchange(&ThreadDone, 1);
    PsTerminateSystemThread(STATUS_SUCCESS);
}

static VOID WorkRoutine(PVOID Context) {
    HANDLE thread;
    UNREFERENCED_PARAMETER(Context);
    if (NT_SUCCESS(PsCreateSystemThread(&thread, 0, NULL, NULL, NULL, ThreadMain, NULL)))
        ZwClose(thread);
    InterlockedExchange(&WorkDone, 1);
}

static KDEFERRED_ROUTINE DpcRoutine;
static VOID DpcRoutine(PKDPC Dpc_, PVOID Context, PVOID A1, PVOID A2) {
    UNREFERENCED_PARAMETER(Dpc_);
    UNREFERENCED_PARAMETER(Context);
    UNREFERENCED_PARAMETER(A1);
    UNREFERENCED_PARAMETER(A2);
    InterlockedExchange(&DpcDone, 1);
}

static DRIVER_UNLOAD DriverUnload;
static VOID DriverUnload(PDRIVER_OBJECT DriverObject) {
    UNREFERENCED_PARAMETER(DriverObject);
    /* Everything DriverEntry started has finished by now. */
    printf("unload: work %ld thread %ld dpc %ld\n", (long)WorkDone, (long)ThreadDone,
           (long)DpcDone);
    fflush(stdout);
}

DRIVER_INITIALIZE DriverEntry;
NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    LARGE_INTEGER due;
    const size_t chars = RegistryPath->Length / sizeof(WCHAR);
    if (chars >= 4 && wcsncmp(RegistryPath->Buffer + chars - 4, L"fail", 4) == 0)
        return STATUS_INSUFFICIENT_RESOURCES;
    printf("entry: %ls\n", DriverObject->DriverName.Buffer);
    fflush(stdout);
    DriverObject->DriverUnload = DriverUnload;
    ExInitializeWorkItem(&Work, WorkRoutine, NULL);
    ExQueueWorkItem(&Work, DelayedWorkQueue);
    KeInitializeDpc(&Dpc, DpcRoutine, NULL);
    KeInitializeTimer(&Timer);
    due.QuadPart = -30 * 10000LL; /* 30 ms */
    KeSetTimer(&Timer, due, &Dpc);
    return STATUS_SUCCESS;
}
