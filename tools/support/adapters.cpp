// The adapter directory of softndk_adapters.h, read from the embedded device
// registry (emulator/device/config.hpp), or in daemon mode from the daemon
// (kDaemonAdapter, emulator/daemon/protocol.hpp).
#include "softndk_adapters.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/daemon_client.hpp"
#include "daemon/protocol.hpp"
#include "device/config.hpp"
#include "device/profile.hpp"
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

// The daemon's description of one of its adapters (kDaemonAdapter), in the same form.
softndk_adapter describe(const softndk::emu::daemon::DaemonAdapterResponse &d) {
    // Strings arrive NUL-terminated from a daemon of our build; terminate them anyway.
    auto text = [](const char *field, size_t size) {
        return std::string(field, strnlen(field, size));
    };
    softndk_adapter a{};
    a.if_index = d.if_index;
    copy_string(a.alias, sizeof a.alias, text(d.alias, sizeof d.alias));
    copy_string(a.profile, sizeof a.profile, text(d.profile, sizeof d.profile));
    copy_string(a.profile_source, sizeof a.profile_source,
                text(d.profile_source, sizeof d.profile_source));
    copy_string(a.profile_description, sizeof a.profile_description,
                text(d.profile_description, sizeof d.profile_description));
    copy_string(a.technology, sizeof a.technology, text(d.technology, sizeof d.technology));
    // The costs come in cost_keys() order (protocol.hpp): the names are ours.
    const auto keys = softndk::emu::cost_keys();
    for (uint32_t i = 0; i < d.cost_count && i < keys.size(); ++i) {
        if (a.cost_count == SOFTNDK_ADAPTER_MAX_COSTS) break;
        softndk_cost &cost = a.costs[a.cost_count++];
        copy_string(cost.name, sizeof cost.name, std::string(keys[i].name));
        cost.value = d.costs[i];
    }
    a.path_mtu = d.path_mtu;
    for (uint32_t i = 0; i < d.address_count && i < SOFTNDK_ADAPTER_MAX_ADDRESSES; ++i) {
        softndk::wire::IpAddr ip;
        std::memcpy(ip.bytes.data(), d.addresses[i], ip.bytes.size());
        a.addresses[a.address_count++] = to_sockaddr(ip);
    }
    return a;
}

bool daemon_mode() {
    const char *mode = std::getenv("SOFTNDK_MODE");
    return mode != nullptr && std::string_view(mode) == "daemon";
}

// The adapters this process can open: in daemon mode the daemon's (asked over its
// socket; SOFTNDK_CONFIG plays no part), else the embedded devices (created now).
// False with `error` set when they cannot be had (no daemon, a bad SOFTNDK_CONFIG).
bool load_adapters(std::vector<softndk_adapter> &out, std::string &error) {
    out.clear();
    if (daemon_mode()) {
        std::vector<softndk::emu::daemon::DaemonAdapterResponse> described;
        if (!softndk::emu::daemon::DaemonClient::query_adapters(
                softndk::emu::daemon::default_socket_path(), described, error))
            return false;
        for (const auto &d : described)
            out.push_back(describe(d));
        return true;
    }
    for (const auto &device : softndk::emu::EmbeddedRegistry::instance().devices(error))
        out.push_back(describe(*device));
    return !out.empty() || error.empty();
}

constexpr char kNoAdapter[] = "no adapter configured";

}  // namespace

extern "C" int softndk_adapters_list(softndk_adapter *out, int capacity, char *error,
                                     size_t error_size) {
    std::vector<softndk_adapter> adapters;
    std::string message;
    if (!load_adapters(adapters, message)) {
        set_error(error, error_size, message);
        return -1;
    }
    if (adapters.empty()) set_error(error, error_size, kNoAdapter);
    for (size_t i = 0; i < adapters.size() && static_cast<int>(i) < capacity; ++i)
        out[i] = adapters[i];
    return static_cast<int>(adapters.size());
}

extern "C" int softndk_adapter_find(const char *name, softndk_adapter *out, char *error,
                                    size_t error_size) {
    std::vector<softndk_adapter> adapters;
    std::string message;
    if (!load_adapters(adapters, message) || adapters.empty()) {
        set_error(error, error_size, message.empty() ? kNoAdapter : message);
        return -1;
    }
    const std::string_view wanted = name == nullptr ? std::string_view() : name;
    if (wanted.empty()) {
        *out = adapters.front();
        return 0;
    }
    for (const auto &a : adapters) {
        if (a.alias == wanted) {
            *out = a;
            return 0;
        }
    }
    unsigned int index = 0;
    const auto [end, ec] = std::from_chars(wanted.data(), wanted.data() + wanted.size(), index);
    if (ec == std::errc() && end == wanted.data() + wanted.size()) {
        for (const auto &a : adapters) {
            if (a.if_index == index) {
                *out = a;
                return 0;
            }
        }
    }
    std::string known;
    for (const auto &a : adapters)
        known += (known.empty() ? "" : ", ") + std::string(a.alias) + " (" +
                 std::to_string(a.if_index) + ")";
    set_error(error, error_size,
              "no adapter named '" + std::string(wanted) + "' (" +
                  (daemon_mode()
                       ? "the daemon at " + softndk::emu::daemon::default_socket_path() + " has "
                       : std::string("adapters: ")) +
                  known + ")");
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
