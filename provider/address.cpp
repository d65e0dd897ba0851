#include <cstring>

#include "provider.hpp"

namespace softndk::provider {

NTSTATUS check_address(const sockaddr *address, ULONG length) {
    if (address == nullptr || length < sizeof(sa_family_t) || length > sizeof(sockaddr_storage))
        return STATUS_INVALID_PARAMETER;
    switch (address->sa_family) {
        case AF_INET:
            return length >= sizeof(sockaddr_in) ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
        case AF_INET6:
            return length >= sizeof(sockaddr_in6) ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
        default:
            return STATUS_INVALID_ADDRESS;
    }
}

hw::WireSockaddr to_wire(const sockaddr *address) {
    hw::WireSockaddr w{};
    w.length = address->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(w.bytes, address, w.length);
    return w;
}

NTSTATUS copy_address(const hw::WireSockaddr &wire, PSOCKADDR out, ULONG *length) {
    if (length == nullptr) return STATUS_INVALID_PARAMETER;
    const ULONG need = std::min<ULONG>(wire.length, sizeof(wire.bytes));
    if (out == nullptr || *length < need) {
        *length = need;
        return STATUS_BUFFER_TOO_SMALL;
    }
    std::memcpy(out, wire.bytes, need);
    *length = need;
    return STATUS_SUCCESS;
}

}  // namespace softndk::provider
