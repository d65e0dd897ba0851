// The WSK entry points through which a consumer reaches the provider
// (ndkpi-api.md 1.6(b)): registration, the provider NPI, the NDK extension
// (WskControlClient -> WSK_PROVIDER_NDK_DISPATCH) and adapter open/close.
// Socket I/O is not part of SoftNDK: those slots answer STATUS_NOT_SUPPORTED.
#include <wsk.h>
#include <wskndk.h>

#include <condition_variable>
#include <mutex>

#include "provider.hpp"

namespace softndk::provider {
namespace {

constexpr ULONGLONG kRegistrationMagic = 0x534b534b444e4b57ull;  // "WKNDKSKS"

// What a WSK_REGISTRATION points at, and what PWSK_CLIENT is.
struct WskClient {
    ULONGLONG magic = kRegistrationMagic;
    WSK_CLIENT_NPI npi{};
    std::mutex mutex;
    sim::ConditionVariable idle{"WskDeregister (captures outstanding)"};
    uint32_t captures = 0;  // WskCaptureProviderNPI minus WskReleaseProviderNPI
    uint32_t adapters = 0;  // open adapters
    bool deregistering = false;
};

WskClient *client_of(PWSK_REGISTRATION r) {
    if (r == nullptr || r->ReservedRegistrationState != kRegistrationMagic) return nullptr;
    return static_cast<WskClient *>(r->ReservedRegistrationContext);
}

WskClient *client_of(PWSK_CLIENT c) {
    auto *client = static_cast<WskClient *>(c);
    return client != nullptr && client->magic == kRegistrationMagic ? client : nullptr;
}

NTSTATUS open_adapter(PWSK_CLIENT Client, NDK_VERSION NdkVersion, NET_IFINDEX IfIndex,
                      NDK_ADAPTER **ppNdkAdapter) {
    WskClient *client = client_of(Client);
    if (client == nullptr || ppNdkAdapter == nullptr) return STATUS_INVALID_PARAMETER;
    Adapter *adapter = nullptr;
    const NTSTATUS status = Adapter::open(NdkVersion, IfIndex, &adapter);
    if (!NT_SUCCESS(status)) return status;
    {
        std::lock_guard lock(client->mutex);
        ++client->adapters;
    }
    *ppNdkAdapter = &adapter->ndk;
    return STATUS_SUCCESS;
}

void close_adapter(PWSK_CLIENT Client, NDK_ADAPTER *pNdkAdapter) {
    WskClient *client = client_of(Client);
    Adapter *adapter = from_ndk<Adapter>(pNdkAdapter);
    if (client == nullptr || adapter == nullptr) {
        log().error("WskCloseNdkAdapter: bad client or adapter");
        return;
    }
    Adapter::close_blocking(adapter);
    std::lock_guard lock(client->mutex);
    --client->adapters;
    client->idle.notify_all();
}

constexpr WSK_PROVIDER_NDK_DISPATCH kNdkDispatch = {
    .WskOpenNdkAdapter = open_adapter,
    .WskCloseNdkAdapter = close_adapter,
};

NTSTATUS control_client(PWSK_CLIENT Client, ULONG ControlCode, SIZE_T InputSize, PVOID,
                        SIZE_T OutputSize, PVOID OutputBuffer, SIZE_T *OutputSizeReturned,
                        PIRP Irp) {
    if (client_of(Client) == nullptr) return STATUS_INVALID_PARAMETER;
    if (ControlCode != WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH) return STATUS_NOT_SUPPORTED;
    // The IRP type is opaque here, so an IRP-based (asynchronous) call cannot be honoured.
    if (Irp != nullptr) return STATUS_NOT_SUPPORTED;
    if (InputSize != 0 || OutputBuffer == nullptr) return STATUS_INVALID_PARAMETER;
    if (OutputSize < sizeof(WSK_PROVIDER_NDK_DISPATCH)) return STATUS_BUFFER_TOO_SMALL;
    if (OutputSize > sizeof(WSK_PROVIDER_NDK_DISPATCH)) return STATUS_INVALID_PARAMETER;
    *static_cast<WSK_PROVIDER_NDK_DISPATCH *>(OutputBuffer) = kNdkDispatch;  // a copy
    if (OutputSizeReturned != nullptr) *OutputSizeReturned = sizeof(WSK_PROVIDER_NDK_DISPATCH);
    return STATUS_SUCCESS;
}

NTSTATUS no_socket(PWSK_CLIENT, ADDRESS_FAMILY, USHORT, ULONG, ULONG, PVOID, const VOID *,
                   PEPROCESS, PETHREAD, PSECURITY_DESCRIPTOR, PIRP) {
    return STATUS_NOT_SUPPORTED;
}

NTSTATUS no_socket_connect(PWSK_CLIENT, USHORT, ULONG, PSOCKADDR, PSOCKADDR, ULONG, PVOID,
                           const WSK_CLIENT_CONNECTION_DISPATCH *, PEPROCESS, PETHREAD,
                           PSECURITY_DESCRIPTOR, PIRP) {
    return STATUS_NOT_SUPPORTED;
}

NTSTATUS no_address_info(PWSK_CLIENT, PUNICODE_STRING, PUNICODE_STRING, ULONG, GUID *, PADDRINFOEXW,
                         PADDRINFOEXW *, PEPROCESS, PETHREAD, PIRP) {
    return STATUS_NOT_SUPPORTED;
}

VOID no_free_address_info(PWSK_CLIENT, PADDRINFOEXW) {}

NTSTATUS no_name_info(PWSK_CLIENT, PSOCKADDR, ULONG, PUNICODE_STRING, PUNICODE_STRING, ULONG,
                      PEPROCESS, PETHREAD, PIRP) {
    return STATUS_NOT_SUPPORTED;
}

constexpr WSK_PROVIDER_DISPATCH kWskProviderDispatch = {
    .Version = MAKE_WSK_VERSION(1, 0),
    .Reserved = 0,
    .WskSocket = no_socket,
    .WskSocketConnect = no_socket_connect,
    .WskControlClient = control_client,
    .WskGetAddressInfo = no_address_info,
    .WskFreeAddressInfo = no_free_address_info,
    .WskGetNameInfo = no_name_info,
};

}  // namespace
}  // namespace softndk::provider

using softndk::provider::client_of;
using softndk::provider::WskClient;

NTSTATUS WskRegister(PWSK_CLIENT_NPI WskClientNpi, PWSK_REGISTRATION WskRegistration) {
    if (WskClientNpi == nullptr || WskClientNpi->Dispatch == nullptr || WskRegistration == nullptr)
        return STATUS_INVALID_PARAMETER;
    if (WSK_MAJOR_VERSION(WskClientNpi->Dispatch->Version) != 1) return STATUS_NOT_SUPPORTED;
    auto *client = new WskClient();
    client->npi = *WskClientNpi;
    WskRegistration->ReservedRegistrationState = softndk::provider::kRegistrationMagic;
    WskRegistration->ReservedRegistrationContext = client;
    WskRegistration->ReservedRegistrationLock = 0;
    return STATUS_SUCCESS;
}

NTSTATUS WskCaptureProviderNPI(PWSK_REGISTRATION WskRegistration, ULONG,
                               PWSK_PROVIDER_NPI WskProviderNpi) {
    // The provider is always present in this process, so WSK_NO_WAIT and any
    // timeout (WSK_INFINITE_WAIT included) succeed at once.
    WskClient *client = client_of(WskRegistration);
    if (client == nullptr || WskProviderNpi == nullptr) return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(client->mutex);
    if (client->deregistering) return STATUS_DEVICE_NOT_READY;
    ++client->captures;
    WskProviderNpi->Client = client;
    WskProviderNpi->Dispatch = &softndk::provider::kWskProviderDispatch;
    return STATUS_SUCCESS;
}

VOID WskReleaseProviderNPI(PWSK_REGISTRATION WskRegistration) {
    WskClient *client = client_of(WskRegistration);
    if (client == nullptr) return;
    std::lock_guard lock(client->mutex);
    if (client->captures == 0) {
        softndk::provider::log().error("WskReleaseProviderNPI without a capture");
        return;
    }
    --client->captures;
    client->idle.notify_all();
}

VOID WskDeregister(PWSK_REGISTRATION WskRegistration) {
    WskClient *client = client_of(WskRegistration);
    if (client == nullptr) return;
    {
        // Blocks until every captured NPI is released and every adapter closed.
        std::unique_lock lock(client->mutex);
        client->deregistering = true;
        client->idle.wait(lock,
                          [client] { return client->captures == 0 && client->adapters == 0; });
    }
    WskRegistration->ReservedRegistrationState = 0;
    WskRegistration->ReservedRegistrationContext = nullptr;
    client->magic = 0;
    delete client;
}
