#include "model_time.hpp"

#include "softndk/monotonic.hpp"

namespace softndk::provider {

uint64_t HostClock::now() const {
    const uint64_t seen = seen_.load(std::memory_order_relaxed);
    if (mode_ != hw::TimeMode::kPaced) return seen;
    const uint64_t wall = monotonic_ns();
    return seen > wall ? seen : wall;
}

void HostClock::observe(uint64_t t) {
    uint64_t cur = seen_.load(std::memory_order_relaxed);
    while (cur < t && !seen_.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
    }
}

bool HostClock::reached(uint64_t t) const {
    return mode_ != hw::TimeMode::kPaced || monotonic_ns() >= t;
}

void HostClock::wait_until(uint64_t t) const {
    if (mode_ == hw::TimeMode::kPaced) wait_until_monotonic(t);
}

}  // namespace softndk::provider
