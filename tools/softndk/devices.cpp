#include "devices.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "ndk.hpp"
#include "report.hpp"
#include "stat.hpp"

namespace softndk::tool {

namespace {

// NDK_ADAPTER_INFO fields, printed under their NDK names: one table for the
// tree and the JSON.
struct InfoField {
    const char *name;
    uint64_t (*get)(const NDK_ADAPTER_INFO &);
};

#define SOFTNDK_INFO_FIELD(member)                                                         \
    InfoField {                                                                            \
#member, [](const NDK_ADAPTER_INFO &i) { return static_cast<uint64_t>(i.member); } \
    }
const InfoField kInfoFields[] = {
    SOFTNDK_INFO_FIELD(MaxTransferLength),
    SOFTNDK_INFO_FIELD(MaxRegistrationSize),
    SOFTNDK_INFO_FIELD(MaxWindowSize),
    SOFTNDK_INFO_FIELD(MaxInlineDataSize),
    SOFTNDK_INFO_FIELD(MaxInitiatorQueueDepth),
    SOFTNDK_INFO_FIELD(MaxReceiveQueueDepth),
    SOFTNDK_INFO_FIELD(MaxCqDepth),
    SOFTNDK_INFO_FIELD(MaxSrqDepth),
    SOFTNDK_INFO_FIELD(MaxInitiatorRequestSge),
    SOFTNDK_INFO_FIELD(MaxReceiveRequestSge),
    SOFTNDK_INFO_FIELD(MaxReadRequestSge),
    SOFTNDK_INFO_FIELD(MaxInboundReadLimit),
    SOFTNDK_INFO_FIELD(MaxOutboundReadLimit),
    SOFTNDK_INFO_FIELD(FRMRPageCount),
    SOFTNDK_INFO_FIELD(LargeRequestThreshold),
    SOFTNDK_INFO_FIELD(MaxCallerData),
    SOFTNDK_INFO_FIELD(MaxCalleeData),
};
#undef SOFTNDK_INFO_FIELD

struct FlagName {
    ULONG flag;
    const char *name;
};
const FlagName kAdapterFlags[] = {
    {NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED, "IN_ORDER_DMA_SUPPORTED"},
    {NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, "RDMA_READ_SINK_NOT_REQUIRED"},
    {NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED, "CQ_INTERRUPT_MODERATION_SUPPORTED"},
    {NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED, "MULTI_ENGINE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED, "RDMA_READ_LOCAL_INVALIDATE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, "CQ_RESIZE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, "LOOPBACK_CONNECTIONS_SUPPORTED"},
};

std::vector<std::string> flag_names(ULONG flags) {
    std::vector<std::string> names;
    for (const FlagName &f : kAdapterFlags) {
        if ((flags & f.flag) != 0) names.emplace_back(f.name);
    }
    return names;
}

std::vector<std::string> addresses(const softndk_adapter &a) {
    std::vector<std::string> out;
    for (unsigned i = 0; i < a.address_count; ++i) {
        char text[SOFTNDK_ADDRESS_STRING_SIZE];
        out.emplace_back(softndk_address_string(reinterpret_cast<const sockaddr *>(&a.addresses[i]),
                                                text, sizeof text));
    }
    return out;
}

std::string join(const std::vector<std::string> &items, const char *separator) {
    std::string out;
    for (const auto &s : items)
        out += (out.empty() ? "" : separator) + s;
    return out;
}

// The only port of a virtual adapter.
constexpr unsigned kPort = 1;
constexpr unsigned kMaxMtu = 4096;

// verbs' enum ibv_mtu: 256 -> 1 ... 4096 -> 5 (0 for another size).
int mtu_code(unsigned bytes) {
    for (int code = 1; code <= 5; ++code)
        if (bytes == (128u << code)) return code;
    return 0;
}

// The port's GIDs: an IPv4 address as its IPv4-mapped IPv6 address (RoCEv2's
// GID), an IPv6 address as it is; with verbs' GID type on a RoCEv2 adapter.
std::vector<std::string> gids(const softndk_adapter &a, const NDK_ADAPTER_INFO &info) {
    std::vector<std::string> out;
    const char *type = info.RdmaTechnology == NdkRoCEv2 ? ", RoCE v2"
                       : info.RdmaTechnology == NdkRoCE ? ", RoCE v1"
                                                        : "";
    for (unsigned i = 0; i < a.address_count && i < SOFTNDK_ADAPTER_MAX_ADDRESSES; ++i) {
        char text[SOFTNDK_ADDRESS_STRING_SIZE];
        softndk_address_string(reinterpret_cast<const sockaddr *>(&a.addresses[i]), text,
                               sizeof text);
        const bool v4 = a.addresses[i].ss_family == AF_INET;
        out.push_back(fmt::format("{}{}{}", v4 ? "::ffff:" : "", text, type));
    }
    return out;
}

// ibv_devinfo's port block.
std::string port_tree(const softndk_adapter &a, const NDK_ADAPTER_INFO &info) {
    std::string out = fmt::format("\t\tport:\t{}\n", kPort);
    out += fmt::format("\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n");
    out += fmt::format("\t\t\tmax_mtu:\t\t{} ({})\n", kMaxMtu, mtu_code(kMaxMtu));
    out += fmt::format("\t\t\tactive_mtu:\t\t{} ({})\n", a.path_mtu, mtu_code(a.path_mtu));
    out += "\t\t\tlink_layer:\t\tEthernet\n";
    const std::vector<std::string> list = gids(a, info);
    for (size_t i = 0; i < list.size(); ++i)
        out += fmt::format("\t\t\tGID[{:3}]:\t\t{}\n", i, list[i]);
    return out;
}

std::string port_json(const softndk_adapter &a, const NDK_ADAPTER_INFO &info) {
    std::string quoted;
    for (const std::string &g : gids(a, info))
        quoted += (quoted.empty() ? "" : ", ") + json_string(g);
    return fmt::format(
        "{{\"port\": {}, \"state\": \"PORT_ACTIVE\", \"max_mtu\": {}, \"active_mtu\": {}, "
        "\"link_layer\": \"Ethernet\", \"gids\": [{}]}}",
        kPort, kMaxMtu, a.path_mtu, quoted);
}

std::string tree(const softndk_adapter &a, const NDK_ADAPTER_INFO &info, bool verbose) {
    auto line = [](const std::string &key, const std::string &value) {
        return fmt::format("\t{:<28}{}\n", key + ":", value);
    };
    std::string out = fmt::format("hca_id:\t{}\n", a.alias);
    out += line("if_index", std::to_string(a.if_index));
    out += line("transport", fmt::format("{} ({})", technology_name(info.RdmaTechnology),
                                         static_cast<int>(info.RdmaTechnology)));
    out += line("ndk_version", fmt::format("{}.{}", info.Version.Major, info.Version.Minor));
    out += line("vendor_id", fmt::format("{:#x}", info.VendorId));
    out += line("device_id", fmt::format("{:#06x}", info.DeviceId));
    out += line("profile", a.profile);
    if (verbose) {
        out += line("profile_source", a.profile_source);
        out += line("profile_description", a.profile_description);
        out += line("profile_technology", a.technology);
    }
    out += line("addresses", join(addresses(a), ", "));
    out += line("path_mtu", fmt::format("{}", a.path_mtu));
    for (const InfoField &f : kInfoFields)
        out += line(f.name, std::to_string(f.get(info)));
    const std::string names = join(flag_names(info.AdapterFlags), ", ");
    out += line("AdapterFlags", fmt::format("{:#010x}{}", info.AdapterFlags,
                                            names.empty() ? "" : " (" + names + ")"));
    if (verbose) {
        // The profile's [timing] section, one cost a line (ibv_devinfo -v's nesting).
        out += "\ttiming:\n";
        for (unsigned i = 0; i < a.cost_count; ++i)
            out +=
                fmt::format("\t\t{:<26}{}\n", std::string(a.costs[i].name) + ":", a.costs[i].value);
    }
    out += line("phys_port_cnt", "1");
    out += port_tree(a, info);
    return out;
}

// With -v: the profile's source, description, technology and [timing] costs.
std::string profile_json(const softndk_adapter &a, bool verbose) {
    if (!verbose) return "";
    std::string costs;
    for (unsigned i = 0; i < a.cost_count; ++i)
        costs += fmt::format("{}{}: {}", costs.empty() ? "" : ", ", json_string(a.costs[i].name),
                             a.costs[i].value);
    return fmt::format(
        ", \"profile_source\": {}, \"profile_description\": {}, \"profile_technology\": {}, "
        "\"timing\": {{{}}}",
        json_string(a.profile_source), json_string(a.profile_description),
        json_string(a.technology), costs);
}

std::string json(const softndk_adapter &a, const NDK_ADAPTER_INFO &info, bool verbose) {
    std::vector<std::string> quoted;
    for (const auto &s : addresses(a))
        quoted.push_back(json_string(s));
    std::string limits;
    for (const InfoField &f : kInfoFields)
        limits += fmt::format("{}\"{}\": {}", limits.empty() ? "" : ", ", f.name, f.get(info));
    std::vector<std::string> flags;
    for (const auto &s : flag_names(info.AdapterFlags))
        flags.push_back(json_string(s));
    return fmt::format(
        "{{\"alias\": {}, \"if_index\": {}, \"profile\": {}, \"addresses\": [{}], "
        "\"path_mtu\": {}, \"transport\": \"{}\", \"ndk_version\": \"{}.{}\", \"vendor_id\": {}, "
        "\"device_id\": {}, \"limits\": {{{}}}, \"AdapterFlags\": {}, \"adapter_flags\": [{}], "
        "\"ports\": [{}]{}}}",
        json_string(a.alias), a.if_index, json_string(a.profile), join(quoted, ", "), a.path_mtu,
        technology_name(info.RdmaTechnology), info.Version.Major, info.Version.Minor, info.VendorId,
        info.DeviceId, limits, info.AdapterFlags, join(flags, ", "), port_json(a, info),
        profile_json(a, verbose));
}

}  // namespace

int run_devices(const DevicesOptions &options) {
    // In daemon mode the daemon's adapters (softndk_adapters.h).
    const std::vector<softndk_adapter> adapters = select_adapters(options.device);
    if (options.port != 0 && options.port != kPort)
        throw std::runtime_error(fmt::format(
            "-i {}: no such port (a virtual adapter has port {} only)", options.port, kPort));
    if (options.list && !options.json) {
        std::string out =
            "    device          \t   if_index\taddresses\n"
            "    ------          \t   --------\t---------\n";
        for (const auto &a : adapters)
            out += fmt::format("    {:<16}\t{:>11}\t{}\n", a.alias, a.if_index,
                               join(addresses(a), ", "));
        std::fputs(out.c_str(), stdout);
        return 0;
    }
    // Each adapter is opened the WSK way and asked for its limits.
    WskClient wsk;
    std::vector<std::string> parts;
    for (const auto &a : adapters) {
        NDK_ADAPTER *adapter = wsk.open(a.if_index);
        NDK_ADAPTER_INFO info{};
        try {
            info = query_adapter_info(adapter);
        } catch (...) {
            wsk.close(adapter);
            throw;
        }
        wsk.close(adapter);
        parts.push_back(options.json ? json(a, info, options.verbose)
                                     : tree(a, info, options.verbose));
    }
    if (options.json)
        std::printf("{\"devices\": [\n  %s\n]}\n", join(parts, ",\n  ").c_str());
    else
        std::fputs(join(parts, "\n").c_str(), stdout);
    return 0;
}

}  // namespace softndk::tool
