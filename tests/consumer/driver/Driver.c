/* Driver.c - a driver tree as it comes from a Windows build, compiled unchanged by
 * softndk_add_driver(): headers named in the wrong case (<NtDdk.h>, <WSK.H>, <NdkPi.h>,
 * "lam.h" for Lam.h), a WPP .tmh include, MSVC pragmas, multi-character constants. Its
 * DriverEntry takes a tagged pool block, opens virtual adapter 1 through WSK, queues a
 * work item; DriverUnload, which the runner calls once the work item has run, prints
 * "msvc-driver: all checks passed" when every step held. */
#include <NtDdk.h>

#include <NdkPi.h>
#include <WSK.H>
#include <WskNdk.h>

#include "lam.h"

#include "driver.tmh" /* WPP: last, after everything its trace macros use */

#include <stdio.h>

DRIVER_INITIALIZE DriverEntry;
static DRIVER_UNLOAD DriverUnload;
static WORKER_THREAD_ROUTINE LamWork;

#pragma alloc_text(INIT, DriverEntry)
#pragma warning(disable : 4201)

static LAM Lam;
static WORK_QUEUE_ITEM Work;
static volatile LONG WorkChecksumsAgree;
static ULONG AdapterCqDepth;

VOID static LamWork(PVOID Context) {
    PLAM lam = (PLAM)Context;
    if (LamChecksum(lam) == LamCppChecksum(lam->Bytes, lam->Length))
        InterlockedExchange(&WorkChecksumsAgree, 1);
}

static NTSTATUS QueryAdapter(VOID) {
    WSK_CLIENT_DISPATCH clientDispatch = {MAKE_WSK_VERSION(1, 0)};
    WSK_CLIENT_NPI clientNpi = {NULL, &clientDispatch};
    WSK_REGISTRATION registration;
    WSK_PROVIDER_NPI providerNpi;
    WSK_PROVIDER_NDK_DISPATCH ndk;
    NDK_ADAPTER *adapter;
    NDK_ADAPTER_INFO info;
    ULONG size = sizeof info;
    NDK_VERSION version = {1, 0};
    NTSTATUS status;

    status = WskRegister(&clientNpi, &registration);
    if (!NT_SUCCESS(status)) return status;
    status = WskCaptureProviderNPI(&registration, WSK_INFINITE_WAIT, &providerNpi);
    if (NT_SUCCESS(status)) {
        status = providerNpi.Dispatch->WskControlClient(providerNpi.Client, 'NDKD', 0, NULL,
                                                        sizeof ndk, &ndk, NULL, NULL);
        if (NT_SUCCESS(status))
            status = ndk.WskOpenNdkAdapter(providerNpi.Client, version, 1, &adapter);
        if (NT_SUCCESS(status)) {
            status = adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size);
            if (NT_SUCCESS(status)) AdapterCqDepth = info.MaxCqDepth;
            ndk.WskCloseNdkAdapter(providerNpi.Client, adapter);
        }
        WskReleaseProviderNPI(&registration);
    }
    WskDeregister(&registration);
    return status;
}

NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    NTSTATUS status;
    UNREFERENCED_PARAMETER(RegistryPath);
    WPP_INIT_TRACING(DriverObject, RegistryPath);

    status = LamCreate(&Lam, LAM_BLOCK_LENGTH);
    if (!NT_SUCCESS(status)) return status;
    status = QueryAdapter();
    if (!NT_SUCCESS(status)) {
        printf("msvc-driver: adapter 1 through WSK failed: 0x%08X\n", (unsigned)status);
        LamDestroy(&Lam);
        return status;
    }
    DriverObject->DriverUnload = DriverUnload;
    ExInitializeWorkItem(&Work, LamWork, &Lam);
    ExQueueWorkItem(&Work, DelayedWorkQueue);
    return STATUS_SUCCESS;
}

static VOID DriverUnload(PDRIVER_OBJECT DriverObject) {
    UNREFERENCED_PARAMETER(DriverObject);
    if (Lam.Tag == 'maLS' && WorkChecksumsAgree && AdapterCqDepth > 0)
        printf("msvc-driver: all checks passed (max CQ depth %lu)\n",
               (unsigned long)AdapterCqDepth);
    else
        printf("msvc-driver: FAILED tag %d checksums %d cq %lu\n", Lam.Tag == 'maLS',
               (int)WorkChecksumsAgree, (unsigned long)AdapterCqDepth);
    fflush(stdout);
    LamDestroy(&Lam);
    WPP_CLEANUP(DriverObject);
}
