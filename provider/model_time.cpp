#include "model_time.hpp"

#include <time.h>

#include <atomic>

namespace softndk::provider::model_time {
namespace {
std::atomic<uint64_t> g_seen{0};
constexpr uint64_t kSpinNs = 100000;  // spin the last 100 us; sleep before that
}  // namespace

uint64_t monotonic_ns() {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

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
    if (mode != hw::TimeMode::kPaced) return;
    for (uint64_t now = monotonic_ns(); now < t; now = monotonic_ns()) {
        if (t - now > kSpinNs) {
            const uint64_t sleep = t - now - kSpinNs;
            timespec ts{static_cast<time_t>(sleep / 1000000000u),
                        static_cast<long>(sleep % 1000000000u)};
            ::nanosleep(&ts, nullptr);
        }
    }
}

}  // namespace softndk::provider::model_time
