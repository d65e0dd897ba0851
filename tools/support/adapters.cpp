// The adapter directory of softndk_adapters.h, read from the embedded device
// registry (emulator/device/config.hpp).
#include "softndk_adapters.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "device/config.hpp"
#include "device/status.hpp"

namespace {

void set_error(char *error, size_t size, const std::string &text) {
    if (error == nullptr || size == 0) return;
    const size_t n = std::min(text.size(), size - 1);
    std::memcpy(error, text.data(), n);
    error[n] = '\0';
}

void copy_string(char *out, size_t size, const std::string &text) {
    const size_t n = std::min(text.size(), size - 1);
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
}

// IPv4-mapped wire addresses become sockaddr_in, the rest sockaddr_in6.
sockaddr_storage to_sockaddr(const softndk::wire::IpAddr &ip) {
    sockaddr_storage s{};
    if (ip.is_v4()) {
        auto *v4 = reinterpret_cast<sockaddr_in *>(&s);
        v4->sin_family = AF_INET;
        std::memcpy(&v4->sin_addr, ip.bytes.data() + 12, 4);
    } else {
        auto *v6 = reinterpret_cast<sockaddr_in6 *>(&s);
        v6->sin6_family = AF_INET6;
        std::memcpy(&v6->sin6_addr, ip.bytes.data(), 16);
    }
    return s;
}

softndk_adapter describe(const softndk::emu::Device &device) {
    const softndk::emu::AdapterConfig &c = device.config();
    softndk_adapter a{};
    a.if_index = c.if_index;
    copy_string(a.alias, sizeof a.alias, c.alias);
    copy_string(a.profile, sizeof a.profile, c.profile.name);
    copy_string(a.profile_source, sizeof a.profile_source, c.profile.source);
    copy_string(a.profile_description, sizeof a.profile_description, c.profile.description);
    copy_string(a.technology, sizeof a.technology,
                device.limits().rdma_technology == softndk::emu::status::kTechnologyIwarp ? "iwarp"
                                                                                          : "roce");
    for (const auto &key : softndk::emu::cost_keys()) {
        if (a.cost_count == SOFTNDK_ADAPTER_MAX_COSTS) break;
        softndk_cost &cost = a.costs[a.cost_count++];
        copy_string(cost.name, sizeof cost.name, std::string(key.name));
        cost.value = device.cost().*key.field;
    }
    a.path_mtu = device.limits().path_mtu;
    for (const auto &ip : c.addresses) {
        if (a.address_count == SOFTNDK_ADAPTER_MAX_ADDRESSES) break;
        a.addresses[a.address_count++] = to_sockaddr(ip);
    }
    return a;
}

}  // namespace

extern "C" int softndk_adapters_list(softndk_adapter *out, int capacity, char *error,
                                     size_t error_size) {
    std::string message;
    const auto devices = softndk::emu::EmbeddedRegistry::instance().devices(message);
    if (devices.empty()) {
        set_error(error, error_size, message.empty() ? "no adapter configured" : message);
        return message.empty() ? 0 : -1;
    }
    for (size_t i = 0; i < devices.size() && static_cast<int>(i) < capacity; ++i)
        out[i] = describe(*devices[i]);
    return static_cast<int>(devices.size());
}

extern "C" int softndk_adapter_find(const char *name, softndk_adapter *out, char *error,
                                    size_t error_size) {
    std::string message;
    const auto devices = softndk::emu::EmbeddedRegistry::instance().devices(message);
    if (devices.empty()) {
        set_error(error, error_size, message.empty() ? "no adapter configured" : message);
        return -1;
    }
    const std::string_view wanted = name == nullptr ? std::string_view() : name;
    if (wanted.empty()) {
        *out = describe(*devices.front());
        return 0;
    }
    for (const auto &d : devices) {
        if (d->config().alias == wanted) {
            *out = describe(*d);
            return 0;
        }
    }
    unsigned int index = 0;
    const auto [end, ec] = std::from_chars(wanted.data(), wanted.data() + wanted.size(), index);
    if (ec == std::errc() && end == wanted.data() + wanted.size()) {
        for (const auto &d : devices) {
            if (d->config().if_index == index) {
                *out = describe(*d);
                return 0;
            }
        }
    }
    std::string known;
    for (const auto &d : devices)
        known += (known.empty() ? "" : ", ") + d->config().alias + " (" +
                 std::to_string(d->config().if_index) + ")";
    set_error(error, error_size,
              "no adapter named '" + std::string(wanted) + "' (adapters: " + known + ")");
    return -1;
}

extern "C" const sockaddr_storage *softndk_adapter_address(const softndk_adapter *adapter,
                                                           int family) {
    if (adapter == nullptr) return nullptr;
    const int order[2] = {family == AF_UNSPEC ? AF_INET : family,
                          family == AF_UNSPEC ? AF_INET6 : family};
    for (int f : order) {
        for (unsigned int i = 0; i < adapter->address_count; ++i) {
            if (adapter->addresses[i].ss_family == f) return &adapter->addresses[i];
        }
    }
    return nullptr;
}

extern "C" const char *softndk_address_string(const sockaddr *address, char *buffer,
                                              size_t buffer_size) {
    if (buffer == nullptr || buffer_size == 0) return buffer;
    const void *bytes = nullptr;
    if (address != nullptr && address->sa_family == AF_INET)
        bytes = &reinterpret_cast<const sockaddr_in *>(address)->sin_addr;
    else if (address != nullptr && address->sa_family == AF_INET6)
        bytes = &reinterpret_cast<const sockaddr_in6 *>(address)->sin6_addr;
    if (bytes == nullptr || inet_ntop(address->sa_family, bytes, buffer,
                                      static_cast<socklen_t>(buffer_size)) == nullptr)
        std::snprintf(buffer, buffer_size, "?");
    return buffer;
}
