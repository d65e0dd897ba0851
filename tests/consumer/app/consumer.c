/* A kernel-style C consumer with its own main(), as another project would write it: it
 * opens the virtual adapter the kernel way (WskRegister -> WskCaptureProviderNPI ->
 * WskControlClient(WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH) -> WskOpenNdkAdapter), asks it
 * for its limits (NdkQueryAdapterInfo), takes a pool block and signals a KEVENT through
 * the WDK runtime, and closes everything. Built by tests/consumer against SoftNDK from a
 * subdirectory, from an install prefix with find_package(), and with pkg-config; it prints
 * "consumer: ok" and exits 0 only if every call succeeded. */
#include <ndkpi.h>
#include <ntddk.h>
#include <wsk.h>
#include <wskndk.h>

#include <stdio.h>

#define CONSUMER_POOL_TAG 0x736E6F43 /* 'Cons' */

static int Fail(const char *What, NTSTATUS Status) {
    fprintf(stderr, "consumer: %s failed: 0x%08X\n", What, (unsigned)Status);
    return 1;
}

static int RuntimeWorks(void) {
    KEVENT event;
    LARGE_INTEGER timeout;
    PVOID block = ExAllocatePoolWithTag(NonPagedPoolNx, 64, CONSUMER_POOL_TAG);
    if (block == NULL) return Fail("ExAllocatePoolWithTag", STATUS_INSUFFICIENT_RESOURCES);
    RtlZeroMemory(block, 64);
    ExFreePoolWithTag(block, CONSUMER_POOL_TAG);
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    KeSetEvent(&event, IO_NO_INCREMENT, FALSE);
    timeout.QuadPart = 0;
    NTSTATUS status = KeWaitForSingleObject(&event, Executive, KernelMode, FALSE, &timeout);
    if (status != STATUS_SUCCESS) return Fail("KeWaitForSingleObject", status);
    return 0;
}

int main(void) {
    WSK_CLIENT_DISPATCH clientDispatch = {MAKE_WSK_VERSION(1, 0), 0, NULL};
    WSK_CLIENT_NPI clientNpi = {NULL, &clientDispatch};
    WSK_REGISTRATION registration;
    WSK_PROVIDER_NPI providerNpi;
    WSK_PROVIDER_NDK_DISPATCH ndk;
    NDK_ADAPTER *adapter = NULL;
    NDK_ADAPTER_INFO info;
    ULONG size = sizeof info;
    const NDK_VERSION version = {1, 0};
    NTSTATUS status;
    int failed = 0;

    if (RuntimeWorks() != 0) return 1;
    status = WskRegister(&clientNpi, &registration);
    if (!NT_SUCCESS(status)) return Fail("WskRegister", status);
    status = WskCaptureProviderNPI(&registration, WSK_INFINITE_WAIT, &providerNpi);
    if (!NT_SUCCESS(status)) {
        WskDeregister(&registration);
        return Fail("WskCaptureProviderNPI", status);
    }
    status = providerNpi.Dispatch->WskControlClient(providerNpi.Client,
                                                    WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
                                                    sizeof ndk, &ndk, NULL, NULL);
    if (!NT_SUCCESS(status)) {
        failed = Fail("WskControlClient", status);
    } else {
        status = ndk.WskOpenNdkAdapter(providerNpi.Client, version, 1, &adapter);
        if (!NT_SUCCESS(status)) {
            failed = Fail("WskOpenNdkAdapter", status);
        } else {
            status = adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size);
            if (!NT_SUCCESS(status) || info.MaxCqDepth == 0)
                failed = Fail("NdkQueryAdapterInfo", status);
            else
                printf("consumer: adapter 1, NDK %u.%u, max CQ depth %lu\n",
                       (unsigned)info.Version.Major, (unsigned)info.Version.Minor,
                       (unsigned long)info.MaxCqDepth);
            ndk.WskCloseNdkAdapter(providerNpi.Client, adapter);
        }
    }
    WskReleaseProviderNPI(&registration);
    WskDeregister(&registration);
    if (failed) return 1;
    printf("consumer: ok\n");
    return 0;
}
