#include "model_time.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "softndk/monotonic.hpp"
#include "softndk/sim.hpp"

namespace softndk::provider {

std::shared_ptr<HostClock> HostClock::of_interface(uint32_t if_index, hw::TimeMode mode) {
    static std::mutex mutex;
    static std::unordered_map<uint32_t, std::weak_ptr<HostClock>> clocks;
    std::lock_guard lock(mutex);
    std::weak_ptr<HostClock> &slot = clocks[if_index];
    std::shared_ptr<HostClock> clock = slot.lock();
    if (!clock || clock->mode() != mode) {
        clock = std::make_shared<HostClock>(mode);
        slot = clock;
    }
    return clock;
}

uint64_t HostClock::now() const {
    end_spin();
    const uint64_t seen = seen_.load(std::memory_order_relaxed);
    if (mode_ == hw::TimeMode::kFunctional) return seen;
    const uint64_t wall = sim::clock_ns();  // CLOCK_MONOTONIC, or simulated time
    return seen > wall ? seen : wall;
}

void HostClock::observe(uint64_t t) {
    end_spin();
    uint64_t cur = seen_.load(std::memory_order_relaxed);
    while (cur < t && !seen_.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
    }
}

bool HostClock::reached(uint64_t t) const {
    return mode_ == hw::TimeMode::kFunctional || sim::clock_ns() >= t;
}

void HostClock::consume(uint64_t t) {
    if (mode_ != hw::TimeMode::kFunctional) return observe(t);
    end_spin();
    uint64_t cur = seen_.load(std::memory_order_relaxed);
    while (
        !seen_.compare_exchange_weak(cur, std::max(cur, t) + kCqeNs, std::memory_order_relaxed)) {
    }
}

bool HostClock::poll(uint64_t t, bool first, uint32_t &empty_polls, const void *poller) {
    if (mode_ != hw::TimeMode::kFunctional) return true;
    const uint64_t now = seen_.load(std::memory_order_relaxed);
    if (t <= now) {
        if (first) empty_polls = 0;  // it found one due: the run of empty polls is over
        return true;
    }
    if (!first) return false;  // later completions wait for a later poll
    // The n-th empty poll in a row moves the clock kPollNs << n: a consumer that polls
    // in vain goes on polling, and the steps reach a far completion in a few polls.
    // A spin (model_time.hpp) sees it now: the steps to it would be seen by nobody.
    const uint64_t step = kPollNs << std::min<uint32_t>(empty_polls, 20);
    if (t <= now + step || ++empty_polls > kPollsBeforeWait ||
        spinning_on_.load(std::memory_order_relaxed) == poller) {
        empty_polls = 0;
        return true;  // the caller observes t (and ends the spin)
    }
    observe(now + step);
    spinning_on_.store(poller, std::memory_order_relaxed);
    return false;
}

void HostClock::wait_until(uint64_t t) const {
    if (mode_ == hw::TimeMode::kPaced) wait_until_monotonic(t);
    if (mode_ == hw::TimeMode::kSimulated) sim::sleep_until(t, "model time");
}

}  // namespace softndk::provider
