/* A kernel-style test driver for the runner (SoftNDK::driver_main): DriverEntry
 * queues a work item, the work item starts a system thread, a timer fires a DPC;
 * the runner must wait for all of them before it calls DriverUnload. Which
 * behaviour DriverEntry picks comes from the registry path's last component,
 * i.e. the program's name: "...fail" makes DriverEntry fail. When the registry
 * file the runner loaded (--registry) gives the service key a Parameters\Greeting
 * string, DriverEntry prints it and registers a reinitialization routine, which
 * the runner calls after DriverEntry. */
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

static DRIVER_REINITIALIZE Reinitialize;
static VOID Reinitialize(PDRIVER_OBJECT DriverObject, PVOID Context, ULONG Count) {
    UNREFERENCED_PARAMETER(DriverObject);
    UNREFERENCED_PARAMETER(Context);
    printf("reinit: %lu\n", (unsigned long)Count);
    fflush(stdout);
}

/* Parameters\Greeting under the service key, if the registry has it. */
static VOID ReadGreeting(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    UNICODE_STRING greeting = {0, 0, NULL};
    RTL_QUERY_REGISTRY_TABLE table[3];
    HANDLE key;
    OBJECT_ATTRIBUTES attributes;
    memset(table, 0, sizeof table);
    table[0].Flags = RTL_QUERY_REGISTRY_SUBKEY;
    table[0].Name = L"Parameters";
    table[1].Flags = RTL_QUERY_REGISTRY_DIRECT;
    table[1].Name = L"Greeting";
    table[1].EntryContext = &greeting;
    InitializeObjectAttributes(&attributes, RegistryPath, OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE,
                               NULL, NULL);
    if (!NT_SUCCESS(ZwOpenKey(&key, KEY_READ, &attributes))) return;
    if (NT_SUCCESS(RtlQueryRegistryValues(RTL_REGISTRY_HANDLE, (PCWSTR)key, table, NULL, NULL)) &&
        greeting.Buffer != NULL) {
        printf("greeting: %ls\n", greeting.Buffer);
        fflush(stdout);
        ExFreePool(greeting.Buffer);
        IoRegisterDriverReinitialization(DriverObject, Reinitialize, NULL);
    }
    ZwClose(key);
}

DRIVER_INITIALIZE DriverEntry;
NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    LARGE_INTEGER due;
    const size_t chars = RegistryPath->Length / sizeof(WCHAR);
    if (chars >= 4 && wcsncmp(RegistryPath->Buffer + chars - 4, L"fail", 4) == 0)
        return STATUS_INSUFFICIENT_RESOURCES;
    printf("entry: %ls\n", DriverObject->DriverName.Buffer);
    fflush(stdout);
    ReadGreeting(DriverObject, RegistryPath);
    DriverObject->DriverUnload = DriverUnload;
    ExInitializeWorkItem(&Work, WorkRoutine, NULL);
    ExQueueWorkItem(&Work, DelayedWorkQueue);
    KeInitializeDpc(&Dpc, DpcRoutine, NULL);
    KeInitializeTimer(&Timer);
    due.QuadPart = -30 * 10000LL; /* 30 ms */
    KeSetTimer(&Timer, due, &Dpc);
    return STATUS_SUCCESS;
}
