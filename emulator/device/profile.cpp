#include "device/profile.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "device/ini.hpp"
#include "device/log.hpp"
#include "device/profile_texts.hpp"
#include "device/status.hpp"
#include "wire/packet.hpp"

namespace softndk::emu {
namespace {

constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();

// ---- [limits] -----------------------------------------------------------------------
// Ranges: what the device and the NDK structures can hold, not what hardware has.
struct LimitKey {
    std::string_view name;
    uint64_t min, max;
    void (*set)(hw::DeviceLimits &, uint64_t);
};
#define SOFTNDK_LIMIT(field, lo, hi)                                                              \
    LimitKey {                                                                                    \
#field, lo, hi,                                                                           \
            [](hw::DeviceLimits & l, uint64_t v) { l.field = static_cast<decltype(l.field)>(v); } \
    }
const LimitKey kLimitKeys[] = {
    SOFTNDK_LIMIT(vendor_id, 0, kU32),
    SOFTNDK_LIMIT(device_id, 0, kU32),
    SOFTNDK_LIMIT(max_registration_bytes, hw::kPageBytes, uint64_t{1} << 48),
    SOFTNDK_LIMIT(max_window_bytes, hw::kPageBytes, uint64_t{1} << 48),
    SOFTNDK_LIMIT(max_fast_register_pages, 1, 65536),
    // A WQE holds at most kMaxWqeSegments segments: control and remote address first.
    SOFTNDK_LIMIT(max_send_sge, 1, hw::kMaxWqeSegments - 2),
    SOFTNDK_LIMIT(max_recv_sge, 1, hw::kMaxWqeSegments - 2),
    SOFTNDK_LIMIT(max_read_sge, 1, hw::kMaxWqeSegments - 2),
    SOFTNDK_LIMIT(max_transfer_bytes, 1, uint64_t{1} << 31),  // IBA: 2^31 bytes a message
    SOFTNDK_LIMIT(max_inline_bytes, 0, 1024),
    SOFTNDK_LIMIT(max_inbound_reads, 1, 255),  // 8-bit in the QP context
    SOFTNDK_LIMIT(max_outbound_reads, 1, 255),
    SOFTNDK_LIMIT(max_recv_queue_depth, 1, 65536),
    SOFTNDK_LIMIT(max_send_queue_depth, 1, 65536),
    SOFTNDK_LIMIT(max_srq_depth, 1, 65536),
    SOFTNDK_LIMIT(max_cq_depth, 1, uint64_t{1} << 22),
    SOFTNDK_LIMIT(large_request_threshold, 0, uint64_t{1} << 31),
    SOFTNDK_LIMIT(max_caller_data, 0, hw::kMaxPrivateData),
    SOFTNDK_LIMIT(max_callee_data, 0, hw::kMaxPrivateData),
    SOFTNDK_LIMIT(path_mtu, wire::kMinPathMtu, wire::kMaxPathMtu),  // and a power of 2
    SOFTNDK_LIMIT(ndk_version_major, 1, 2),
    SOFTNDK_LIMIT(ndk_version_minor, 0, 99),
};
#undef SOFTNDK_LIMIT

// ---- [timing] -----------------------------------------------------------------------
#define SOFTNDK_COST(field)       \
    CostKey {                     \
#field, &CostModel::field \
    }
const CostKey kCostKeys[] = {
    SOFTNDK_COST(doorbell_ns),        SOFTNDK_COST(doorbell_gap_ns),
    SOFTNDK_COST(blueflame_bytes),    SOFTNDK_COST(blueflame_ns),
    SOFTNDK_COST(dma_read_ns),        SOFTNDK_COST(dma_write_ns),
    SOFTNDK_COST(pcie_ps_per_byte),   SOFTNDK_COST(pcie_tlp_bytes),
    SOFTNDK_COST(pcie_tlp_overhead),  SOFTNDK_COST(processing_units),
    SOFTNDK_COST(pu_wqe_ns),          SOFTNDK_COST(pu_packet_ns),
    SOFTNDK_COST(pu_cqe_ns),          SOFTNDK_COST(cache_miss_ns),
    SOFTNDK_COST(qpc_cache_entries),  SOFTNDK_COST(mpt_cache_entries),
    SOFTNDK_COST(mtt_cache_entries),  SOFTNDK_COST(tx_pipeline_ns),
    SOFTNDK_COST(rx_pipeline_ns),     SOFTNDK_COST(pipeline_packet_ns),
    SOFTNDK_COST(link_mbps),          SOFTNDK_COST(frame_overhead_bytes),
    SOFTNDK_COST(propagation_ns),     SOFTNDK_COST(switch_ns),
    SOFTNDK_COST(host_turnaround_ns),
};
#undef SOFTNDK_COST
// Every CostModel field is a uint32_t with a key here: a field added to the model
// without its key fails this.
static_assert(sizeof(CostModel) == std::size(kCostKeys) * sizeof(uint32_t),
              "a time::CostModel field has no [timing] key in kCostKeys");

// Ranges of the keys that are not plain costs; a cost is any uint32_t (ns: up to 4.2 s).
struct CostRange {
    std::string_view name;
    uint64_t min, max;
};
const CostRange kCostRanges[] = {
    {"blueflame_bytes", 0, 1024},       {"pcie_tlp_bytes", 64, 4096},
    {"pcie_tlp_overhead", 0, 256},      {"processing_units", 1, 1024},
    {"qpc_cache_entries", 0, 1u << 24}, {"mpt_cache_entries", 0, 1u << 24},
    {"mtt_cache_entries", 0, 1u << 24}, {"link_mbps", 0, 1600000},
    {"frame_overhead_bytes", 0, 1024},  {"pcie_ps_per_byte", 0, 1000000},
};

CostRange cost_range(std::string_view name) {
    for (const auto &r : kCostRanges) {
        if (r.name == name) return r;
    }
    return CostRange{name, 0, kU32};
}

// ---- [transport] --------------------------------------------------------------------
struct TransportKey {
    std::string_view name;
    uint64_t min, max;
    void (*set)(TransportDefaults &, uint64_t);
};
#define SOFTNDK_TRANSPORT(field, lo, hi)                                                           \
    TransportKey {                                                                                 \
#field, lo, hi,                                                                            \
            [](TransportDefaults & t, uint64_t v) { t.field = static_cast<decltype(t.field)>(v); } \
    }
const TransportKey kTransportKeys[] = {
    SOFTNDK_TRANSPORT(retry_count, 0, 7),
    SOFTNDK_TRANSPORT(rnr_retry, 0, 7),
    SOFTNDK_TRANSPORT(min_rnr_timer, 0, 31),
    SOFTNDK_TRANSPORT(ack_timeout, 0, 31),
    SOFTNDK_TRANSPORT(window_psns, 1, 1u << 22),  // under half the 24-bit PSN space
    SOFTNDK_TRANSPORT(ack_req_every, 1, 1u << 22),
    SOFTNDK_TRANSPORT(cm_timeout_ms, 1, 3'600'000),
    TransportKey{
        "initial_psn", 0, 0xffffff,
        [](TransportDefaults &t, uint64_t v) { t.initial_psn = static_cast<uint32_t>(v); }},
};
#undef SOFTNDK_TRANSPORT

const std::set<std::string_view> kProfileKeys = {"name", "description", "technology"};

uint32_t technology_flags(uint32_t technology) {
    // Honest flags: CQ moderation (kModerateCq) and resize (kResizeCq) are built;
    // placement order is not guaranteed (memcpy may store the last byte first).
    uint32_t flags = status::kAdapterFlagReadSinkNotRequired | status::kAdapterFlagLoopback |
                     status::kAdapterFlagReadLocalInvalidate | status::kAdapterFlagCqModeration |
                     status::kAdapterFlagCqResize;
    if (technology == status::kTechnologyIwarp)
        flags &= ~status::kAdapterFlagReadSinkNotRequired;  // iWARP needs sinks
    return flags;
}

}  // namespace

std::span<const CostKey> cost_keys() {
    return kCostKeys;
}

std::optional<bool> set_cost_key(CostModel &cost, std::string_view key, std::string_view value,
                                 std::string &error) {
    for (const auto &k : kCostKeys) {
        if (k.name != key) continue;
        const CostRange range = cost_range(k.name);
        uint64_t v = 0;
        if (!parse_ini_number(value, range.min, range.max, v, error)) return false;
        cost.*(k.field) = static_cast<uint32_t>(v);
        return true;
    }
    return std::nullopt;
}

std::optional<bool> set_transport_key(TransportDefaults &transport, std::string_view key,
                                      std::string_view value, std::string &error) {
    for (const auto &k : kTransportKeys) {
        if (k.name != key) continue;
        uint64_t v = 0;
        if (!parse_ini_number(value, k.min, k.max, v, error)) return false;
        k.set(transport, v);
        return true;
    }
    return std::nullopt;
}

bool parse_profile(std::string_view text, const std::string &origin, Profile &out,
                   std::string &error) {
    IniDocument doc;
    if (!parse_ini(text, origin, doc, error)) return false;
    out = Profile{};
    out.source = origin;
    for (const auto &s : doc.sections) {
        if (s.name != "profile" && s.name != "limits" && s.name != "timing" &&
            s.name != "transport" && s.name != "quirks") {
            error = doc.origin + ":" + std::to_string(s.line) + ": unknown section [" + s.name +
                    "] (profile, limits, timing, transport, quirks)";
            return false;
        }
    }
    std::set<std::pair<std::string, std::string>> seen;
    std::set<std::string_view> limits_set;
    std::optional<uint32_t> technology;
    for (const auto &e : doc.entries) {
        auto fail = [&](std::string_view message) {
            error = ini_error(doc, e.line, e.section, e.key, message);
            return false;
        };
        auto unknown = [&] {
            error = ini_error(doc, e.line, e.section, {}, "unknown key '" + e.key + "'");
            return false;
        };
        if (e.section.empty()) return fail("key outside a section");
        if (!seen.emplace(e.section, e.key).second) return fail("repeated key");
        uint64_t v = 0;
        std::string why;
        if (e.section == "profile") {
            if (!kProfileKeys.contains(e.key)) return unknown();
            if (e.key == "name") {
                if (e.value.empty()) return fail("empty name");
                out.name = e.value;
            } else if (e.key == "description") {
                out.description = e.value;
            } else if (e.value == "roce") {
                technology = status::kTechnologyRoceV2;
            } else if (e.value == "iwarp") {
                technology = status::kTechnologyIwarp;
            } else {
                return fail("'" + e.value + "' is not a technology (roce | iwarp)");
            }
        } else if (e.section == "limits") {
            const auto k = std::find_if(std::begin(kLimitKeys), std::end(kLimitKeys),
                                        [&](const LimitKey &l) { return l.name == e.key; });
            if (k == std::end(kLimitKeys)) return unknown();
            if (!parse_ini_number(e.value, k->min, k->max, v, why)) return fail(why);
            if (e.key == "path_mtu" && !wire::is_valid_path_mtu(static_cast<uint32_t>(v)))
                return fail(e.value + " is not a path MTU (256 | 512 | 1024 | 2048 | 4096)");
            k->set(out.limits, v);
            limits_set.insert(k->name);
        } else if (e.section == "timing") {
            const auto set = set_cost_key(out.cost, e.key, e.value, why);
            if (!set) return unknown();
            if (!*set) return fail(why);
        } else if (e.section == "transport") {
            const auto set = set_transport_key(out.transport, e.key, e.value, why);
            if (!set) return unknown();
            if (!*set) return fail(why);
        } else if (e.section == "quirks") {
            if (e.key != "fast_register_keys") return unknown();
            if (e.value == "rotate") {
                out.limits.quirks |= hw::kQuirkRotateFastRegisterKeys;
            } else if (e.value != "stable") {
                return fail("'" + e.value + "' is not stable | rotate");
            }
        } else {
            return fail("unknown section");  // sections were checked: not reached
        }
    }
    auto missing = [&](std::string_view section, std::string_view key) {
        error =
            doc.origin + ": [" + std::string(section) + "] missing key '" + std::string(key) + "'";
        return false;
    };
    if (out.name.empty()) return missing("profile", "name");
    if (!technology) return missing("profile", "technology");
    for (const auto &k : kLimitKeys) {
        if (!limits_set.contains(k.name)) return missing("limits", k.name);
    }
    out.limits.rdma_technology = *technology;
    out.limits.adapter_flags = technology_flags(*technology);
    return true;
}

bool load_profile_file(const std::string &path, Profile &out, std::string &error) {
    std::string text;
    return read_text_file(path, text, error) && parse_profile(text, path, out, error);
}

bool is_profile_path(std::string_view value) {
    return value.find('/') != std::string_view::npos || value.ends_with(".ini");
}

bool resolve_profile(std::string_view value, const std::string &base_dir, Profile &out,
                     std::string &error) {
    if (is_profile_path(value)) {
        std::filesystem::path path(value);
        if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
        return load_profile_file(path.string(), out, error);
    }
    if (auto p = find_profile(value)) {
        out = std::move(*p);
        return true;
    }
    std::string names;
    for (auto n : profile_names())
        names += (names.empty() ? "" : " | ") + std::string(n);
    error =
        "unknown profile '" + std::string(value) + "' (" + names + ", or a path to a .ini file)";
    return false;
}

std::optional<Profile> find_profile(std::string_view name) {
    for (const auto &t : builtin_profile_texts()) {
        if (t.name != name) continue;
        Profile p;
        std::string error;
        if (!parse_profile(t.text, "profiles/" + std::string(t.name) + ".ini", p, error)) {
            // The shipped files are tested (profile_test.cpp); this is a build defect.
            logger(Component::kDevice).error("built-in profile {}: {}", name, error);
            return std::nullopt;
        }
        p.source = kBuiltinSource;
        return p;
    }
    return std::nullopt;
}

std::vector<std::string_view> profile_names() {
    std::vector<std::string_view> names;
    for (const auto &t : builtin_profile_texts())
        names.push_back(t.name);
    return names;
}

}  // namespace softndk::emu
