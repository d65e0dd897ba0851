#include "device/profile.hpp"

#include "device/status.hpp"

namespace softndk::emu {
namespace {

// Moderate limits: consumers size their allocations straight from them.
hw::DeviceLimits roce_limits() {
    hw::DeviceLimits l{};
    l.vendor_id = 0x534e44;  // "SND"
    l.device_id = 0x0001;
    l.max_registration_bytes = uint64_t{1} << 30;
    l.max_window_bytes = uint64_t{1} << 30;
    l.max_fast_register_pages = 256;
    l.max_send_sge = 16;
    l.max_recv_sge = 16;
    l.max_read_sge = 16;
    l.max_transfer_bytes = 64u << 20;
    l.max_inline_bytes = 256;
    l.max_inbound_reads = 16;
    l.max_outbound_reads = 16;
    l.max_recv_queue_depth = 4096;
    l.max_send_queue_depth = 4096;
    l.max_srq_depth = 4096;
    l.max_cq_depth = 65536;
    l.large_request_threshold = 8192;
    l.max_caller_data = 92;   // IB CM REQ private data
    l.max_callee_data = 148;  // IB CM REJ private data (REP allows 196)
    // Honest flags: CQ moderation (kModerateCq) and resize (kResizeCq) are built;
    // placement order is not guaranteed (memcpy may store the last byte first).
    l.adapter_flags = status::kAdapterFlagReadSinkNotRequired | status::kAdapterFlagLoopback |
                      status::kAdapterFlagReadLocalInvalidate | status::kAdapterFlagCqModeration |
                      status::kAdapterFlagCqResize;
    l.rdma_technology = status::kTechnologyRoceV2;
    // rxe over `lo` (netdev MTU 65536) runs at the largest IB MTU, 4096; over a
    // 1500-byte netdev it would be 1024.
    l.path_mtu = 4096;
    // 1.2: its device-side additions are built (SEND_WITH_INVALIDATE with remote
    // invalidation, READ with local invalidate); GetCqResultsEx and DEFER are provider-side.
    l.ndk_version_major = 2;
    l.ndk_version_minor = 1;
    return l;
}

Profile roce_default() {
    Profile p;
    p.name = "roce-default";
    p.limits = roce_limits();
    return p;
}

Profile iwarp_default() {
    Profile p = roce_default();
    p.name = "iwarp-default";
    p.limits.rdma_technology = status::kTechnologyIwarp;
    p.limits.adapter_flags &= ~status::kAdapterFlagReadSinkNotRequired;  // iWARP needs sinks
    p.limits.max_caller_data = hw::kMaxPrivateData;
    p.limits.max_callee_data = hw::kMaxPrivateData;
    return p;
}

struct Entry {
    std::string_view name;
    Profile (*make)();
};
constexpr Entry kProfiles[] = {{"roce-default", roce_default}, {"iwarp-default", iwarp_default}};

}  // namespace

std::optional<Profile> find_profile(std::string_view name) {
    for (const auto &e : kProfiles) {
        if (e.name == name) return e.make();
    }
    return std::nullopt;
}

std::vector<std::string_view> profile_names() {
    std::vector<std::string_view> names;
    for (const auto &e : kProfiles)
        names.push_back(e.name);
    return names;
}

}  // namespace softndk::emu
