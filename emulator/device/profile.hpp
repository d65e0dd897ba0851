// profile.hpp - device profiles: what an adapter reports (hw::DeviceLimits), what
// each resource of the RNIC costs in model time (time/model.hpp), and the RC
// transport defaults.
//
// Profiles are INI files (profiles/*.ini in the source tree, installed to
// share/softndk/profiles; each one documents every key). The shipped files are
// compiled into the emulator (CMake generates profile_texts.cpp from them), so
// find_profile() needs nothing installed. Format:
//
//   [profile]    name, description, technology = roce | iwarp (required: name,
//                technology). technology sets rdma_technology and adapter_flags:
//                roce-default's flags; iwarp without READ_SINK_NOT_REQUIRED.
//   [limits]     every hw::DeviceLimits field a profile sets, by its name (all
//                required): vendor_id .. path_mtu, ndk_version_major/minor. quirks,
//                blueflame_bytes and time_mode are not limits (the device sets the
//                last two; quirks come from [quirks]).
//   [timing]     every time::CostModel field by its name (cost_keys()); a key left
//                out keeps CostModel's default.
//   [transport]  TransportDefaults fields by name; left out: the default.
//   [quirks]     fast_register_keys = stable | rotate (default stable).
//
// Numbers are decimal or 0x hexadecimal and range-checked. An unknown section or
// key, a repeated key, a bad number or a value out of range is an error naming the
// file, the line, the section and the key ("cx9.ini:14: [timing] dma_read_ns: 'fast'
// is not a number").
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "device/thread_shard.hpp"
#include "softndk/hw_interface.hpp"
#include "softndk/monotonic.hpp"
#include "softndk/sim.hpp"
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
    std::string description;
    std::string source;  // kBuiltinSource, or the path of the file it was loaded from
    hw::DeviceLimits limits{};
    CostModel cost{};
    TransportDefaults transport{};
};

inline constexpr std::string_view kBuiltinSource = "built-in";

// Built-in profiles, the files of profiles/ by their name: roce-default (RoCEv2),
// iwarp-default (reports iWARP; the transport inside the host is the same RC
// engine), ideal (every cost 0: the timing model is off), cx5-100g, cx6-200g,
// cx7-400g (RoCEv2) and t6-25g (iWARP). nullopt for other names.
std::optional<Profile> find_profile(std::string_view name);
std::vector<std::string_view> profile_names();  // sorted

// Parses profile text (the format above); `origin` names it in errors and becomes
// Profile::source. False with `error` set; `out` is then unspecified.
bool parse_profile(std::string_view text, const std::string &origin, Profile &out,
                   std::string &error);
// Reads the profile file at `path`. The profile's name is its [profile] name, which
// need not match the file name; Profile::source is `path`.
bool load_profile_file(const std::string &path, Profile &out, std::string &error);
// True if a `profile =` value names a file rather than a built-in profile: it has a
// '/' or ends in ".ini".
bool is_profile_path(std::string_view value);
// A built-in profile by name, or a profile file (is_profile_path); a relative path is
// taken from `base_dir` ("" = the working directory). False with `error` set.
bool resolve_profile(std::string_view value, const std::string &base_dir, Profile &out,
                     std::string &error);

// The [timing] keys: every CostModel field (all uint32_t), in declaration order.
struct CostKey {
    std::string_view name;
    uint32_t CostModel::*field;
};
std::span<const CostKey> cost_keys();

// Sets the CostModel field `key` from `value` (range-checked). nullopt if `key` is
// not a [timing] key; false with the reason in `error` for a bad value.
std::optional<bool> set_cost_key(CostModel &cost, std::string_view key, std::string_view value,
                                 std::string &error);
// Sets the TransportDefaults field `key` from `value` (range-checked). nullopt if
// `key` is not a transport key; false with the reason in `error` for a bad value.
std::optional<bool> set_transport_key(TransportDefaults &transport, std::string_view key,
                                      std::string_view value, std::string &error);

// The latest model time a device has seen (a Lamport clock): every timestamp the
// device produces or receives is observed. It dates what has no request behind it
// (CM messages, events, moderation); requests take their time from the resources
// they pass (time/model.hpp), never from this clock, so it serialises nothing.
// In paced mode model time is the monotonic clock, in simulated mode the scheduler's
// (softndk/sim.hpp), so now() is never behind it.
//
// Sharded by thread (thread_shard.hpp): observe() runs for every packet sent and
// received and every CQE, on whichever thread runs the engine, and one shared word
// moved its cache line between the two ends of a ping-pong several times per message.
// A thread raises its own shard; now() takes the maximum of all of them, so it sees
// every observe() that happened before it (relaxed, as before: a snapshot).
class VirtualClock {
  public:
    explicit VirtualClock(bool paced = false) : paced_(paced) {}
    uint64_t now() const {
        uint64_t seen = 0;
        for (const Shard &shard : shards_)
            seen = std::max(seen, shard.ns.load(std::memory_order_relaxed));
        if (!paced_) return seen;
        const uint64_t wall = sim::clock_ns();  // CLOCK_MONOTONIC, or simulated time
        return seen > wall ? seen : wall;
    }
    void observe(uint64_t t) {
        std::atomic<uint64_t> &ns = shards_[thread_shard(kShards)].ns;
        uint64_t cur = ns.load(std::memory_order_relaxed);
        while (cur < t && !ns.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
        }
    }

  private:
    static constexpr size_t kShards = 8;
    struct alignas(64) Shard {
        std::atomic<uint64_t> ns{0};
    };
    const bool paced_;
    std::array<Shard, kShards> shards_{};
};

}  // namespace softndk::emu
