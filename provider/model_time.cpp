#include "model_time.hpp"

#include <atomic>

#include "softndk/monotonic.hpp"

namespace softndk::provider::model_time {
namespace {
std::atomic<uint64_t> g_seen{0};
}  // namespace

uint64_t monotonic_ns() { return softndk::monotonic_ns(); }

uint64_t host_now(hw::TimeMode mode) {
    const uint64_t seen = g_seen.load(std::memory_order_relaxed);
    if (mode != hw::TimeMode::kPaced) return seen;
    const uint64_t wall = monotonic_ns();
    return seen > wall ? seen : wall;
}

void observe(uint64_t t) {
    uint64_t cur = g_seen.load(std::memory_order_relaxed);
    while (cur < t && !g_seen.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
    }
}

bool reached(hw::TimeMode mode, uint64_t t) {
    return mode != hw::TimeMode::kPaced || monotonic_ns() >= t;
}

void wait_until(hw::TimeMode mode, uint64_t t) {
    if (mode == hw::TimeMode::kPaced) wait_until_monotonic(t);
}

}  // namespace softndk::provider::model_time
