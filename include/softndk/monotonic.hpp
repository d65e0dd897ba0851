// monotonic.hpp - CLOCK_MONOTONIC in nanoseconds, and waiting for a point on it.
// Paced mode (hw::TimeMode::kPaced) uses it as model time on both sides of the
// hardware interface (docs/timing.md).
#pragma once

#include <time.h>

#include <cstdint>

namespace softndk {

inline uint64_t monotonic_ns() {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// CLOCK_MONOTONIC_COARSE: the monotonic clock as of the last timer tick, read in a few
// ns where monotonic_ns() takes ~20 (a vDSO read of the TSC and its scaling). It is
// never ahead of monotonic_ns(), and lags it by about a tick
// (coarse_monotonic_resolution_ns()); more just after the CPUs were idle.
inline uint64_t coarse_monotonic_ns() {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// The tick of CLOCK_MONOTONIC_COARSE (1-10 ms, the kernel's HZ), read once.
inline uint64_t coarse_monotonic_resolution_ns() {
    static const uint64_t resolution = [] {
        timespec ts{};
        if (::clock_getres(CLOCK_MONOTONIC_COARSE, &ts) != 0) return uint64_t{10'000'000};
        return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
    }();
    return resolution;
}

// Returns once monotonic_ns() >= t. Sleeps while t is far and spins the last
// 100 us: a sleeping thread wakes tens of microseconds late on a busy machine, and
// the waits that matter (a completion, a placement) are about a microsecond long.
inline void wait_until_monotonic(uint64_t t) {
    constexpr uint64_t kSpinNs = 100000;
    for (uint64_t now = monotonic_ns(); now < t; now = monotonic_ns()) {
        if (t - now > kSpinNs) {
            const uint64_t sleep = t - now - kSpinNs;
            timespec ts{static_cast<time_t>(sleep / 1000000000u),
                        static_cast<long>(sleep % 1000000000u)};
            ::nanosleep(&ts, nullptr);
        }
    }
}

}  // namespace softndk
