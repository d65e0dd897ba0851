// profile.hpp - device profiles: what an adapter reports (hw::DeviceLimits), what
// each resource of the RNIC costs in model time (time/model.hpp), and the RC
// transport defaults.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "softndk/hw_interface.hpp"
#include "softndk/monotonic.hpp"
#include "time/model.hpp"

namespace softndk::emu {

using CostModel = time::CostModel;

// RC transport attributes every QP of the device gets (IB QP attributes; NDK has no
// way to set them, so they belong to the adapter).
struct TransportDefaults {
    uint8_t retry_count = 7;              // 3 bits; PSN-sequence and ACK-timeout retries
    uint8_t rnr_retry = 7;                // 3 bits; 7 = infinite (IBA)
    uint8_t min_rnr_timer = 12;           // 5-bit code, 12 = 0.64 ms (wire::rnr_timer_usec)
    uint8_t ack_timeout = 14;             // 5 bits: 4.096 us << t, 14 = 67 ms; 0 = infinite
    uint32_t window_psns = 128;           // unacknowledged PSNs the requester may have out
    uint32_t ack_req_every = 64;          // AckReq also on every n-th packet of a long message
    uint32_t cm_timeout_ms = 2000;        // REQ without REP/REJ, REP without RTU, DREQ without DREP
    std::optional<uint32_t> initial_psn;  // tests: start every QP at this PSN
};

struct Profile {
    std::string name;
    hw::DeviceLimits limits{};
    CostModel cost{};
    TransportDefaults transport{};
};

// Built-in profiles: "roce-default" (RoCEv2) and "iwarp-default" (reports iWARP;
// the transport inside the host is the same RC engine). nullopt for other names.
std::optional<Profile> find_profile(std::string_view name);
std::vector<std::string_view> profile_names();

// The latest model time a device has seen (a Lamport clock): every timestamp the
// device produces or receives is observed. It dates what has no request behind it
// (CM messages, events, moderation); requests take their time from the resources
// they pass (time/model.hpp), never from this clock, so it serialises nothing.
// In paced mode model time is the monotonic clock, so now() is never behind it.
class VirtualClock {
  public:
    explicit VirtualClock(bool paced = false) : paced_(paced) {}
    uint64_t now() const {
        const uint64_t seen = ns_.load(std::memory_order_relaxed);
        if (!paced_) return seen;
        const uint64_t wall = monotonic_ns();
        return seen > wall ? seen : wall;
    }
    void observe(uint64_t t) {
        uint64_t cur = ns_.load(std::memory_order_relaxed);
        while (cur < t && !ns_.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
        }
    }

  private:
    const bool paced_;
    std::atomic<uint64_t> ns_{0};
};

}  // namespace softndk::emu
