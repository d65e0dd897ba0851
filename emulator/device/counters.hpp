// counters.hpp - the device's statistics block, one table, Soft-RoCE's names.
//
// SOFTNDK_DEVICE_COUNTERS (hw_interface.hpp section 12, where kQueryCounters reports
// them in this order) is the single list: the enum and the name table are both
// generated from it, so they cannot drift apart. Counters are relaxed
// atomics, bumped from any engine thread; reading them is a snapshot, not a
// consistent cut.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "device/thread_shard.hpp"
#include "softndk/hw_interface.hpp"

namespace softndk::emu {

enum class Counter : uint8_t {
#define SOFTNDK_X(name) name,
    SOFTNDK_DEVICE_COUNTERS(SOFTNDK_X)
#undef SOFTNDK_X
        kCount
};

static_assert(static_cast<size_t>(Counter::kCount) <= hw::kMaxCounters);

inline constexpr std::array<std::string_view, static_cast<size_t>(Counter::kCount)> kCounterNames =
    {
#define SOFTNDK_X(name) #name,
        SOFTNDK_DEVICE_COUNTERS(SOFTNDK_X)
#undef SOFTNDK_X
};

// Sharded by thread (thread_shard.hpp): each thread adds into one of kShards blocks,
// and get() sums them.
class Counters {
  public:
    void add(Counter c, uint64_t n = 1) {
        shards_[thread_shard(kShards)].values[static_cast<size_t>(c)].fetch_add(
            n, std::memory_order_relaxed);
    }
    uint64_t get(Counter c) const {
        uint64_t sum = 0;
        for (const Shard &s : shards_)
            sum += s.values[static_cast<size_t>(c)].load(std::memory_order_relaxed);
        return sum;
    }
    static constexpr std::string_view name(Counter c) {
        return kCounterNames[static_cast<size_t>(c)];
    }

  private:
    static constexpr size_t kShards = 8;
    struct alignas(64) Shard {
        std::array<std::atomic<uint64_t>, static_cast<size_t>(Counter::kCount)> values{};
    };
    std::array<Shard, kShards> shards_{};
};

}  // namespace softndk::emu
