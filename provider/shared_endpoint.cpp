// Shared endpoints (ndkpi-api.md 3.1, 7.10): NdkCreateSharedEndpoint reserves a local
// IP:port in the device's connection manager; NdkConnectWithSharedEndpoint
// (connector.cpp) connects from it, once per peer address.
#include "provider.hpp"

namespace softndk::provider {

SharedEndpoint::SharedEndpoint(Adapter *a, uint32_t id, const hw::WireSockaddr &bound)
    : Object(a, fmt::format("{} shared-endpoint#{}", a->name(), id)), id_(id), bound_(bound) {
    publish(*static_cast<Embedded<NDK_SHARED_ENDPOINT> *>(this), kType, a->version(),
            &kSharedEndpointDispatch);
    depend_on(a);
}

NTSTATUS create_shared_endpoint(Adapter *a, const sockaddr *address, SharedEndpoint **out) {
    hw::ListenRequest request{};
    request.address = to_wire(address);
    hw::ListenResponse response{};
    const NTSTATUS status = a->execute(hw::CommandOpcode::kCreateSharedEndpoint, request, response);
    if (!NT_SUCCESS(status)) return status;
    *out = new SharedEndpoint(a, response.listener, response.bound);
    log().debug("{}: created", (*out)->name());
    return STATUS_SUCCESS;
}

// The port stays taken by the connections made through the endpoint until they close;
// the endpoint itself goes once its own close and theirs are done.
void SharedEndpoint::on_final() {
    adapter()->execute_object(hw::CommandOpcode::kCloseSharedEndpoint, id_);
}

namespace {

NTSTATUS close_shared_endpoint(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    SharedEndpoint *se = from_header<SharedEndpoint>(h);
    if (se == nullptr) return STATUS_INVALID_PARAMETER;
    return se->close(cb, ctx);
}

NTSTATUS shared_endpoint_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                                         NDK_EXTENSION_INTERFACE *out) {
    if (from_header<SharedEndpoint>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    return query_extension(h, id, v, out);
}

NTSTATUS shared_endpoint_local_address(NDK_SHARED_ENDPOINT *pSe, PSOCKADDR pAddress,
                                       ULONG *pAddressLength) {
    SharedEndpoint *se = from_ndk<SharedEndpoint>(pSe);
    if (se == nullptr || pAddressLength == nullptr) return STATUS_INVALID_PARAMETER;
    return copy_address(se->bound(), pAddress, pAddressLength);
}

}  // namespace

const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch = {
    .NdkCloseSharedEndpoint = close_shared_endpoint,
    .NdkQueryExtension = shared_endpoint_query_extension,
    .NdkGetLocalAddress = shared_endpoint_local_address,
};

}  // namespace softndk::provider
