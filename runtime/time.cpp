// Clocks, in Windows' 100 ns units, and the conversion of wait timeouts.
#include <time.h>

#include <cstdint>
#include <thread>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr int64_t kUnitsPerSecond = 10'000'000;  // 100 ns units
// 1601-01-01 to 1970-01-01 in 100 ns units.
constexpr int64_t kUnixEpochAsSystemTime = 116'444'736'000'000'000;
// Relative timeouts longer than this wait forever (and keep the arithmetic in range).
constexpr uint64_t kLongestFiniteTimeout = 100ULL * 366 * 24 * 3600 * kUnitsPerSecond;

// Simulated time's calendar: the run begins at 2026-01-01 00:00:00 UTC, whatever the host's
// clock says, so that a seed replays to the same timestamps.
constexpr int64_t kSimulatedEpochAsUnixSeconds = 1'767'225'600;

int64_t read_clock(clockid_t clock) {
    if (sim::enabled()) {
        const auto units = static_cast<int64_t>(sim::now_ns() / 100);
        if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)
            return kSimulatedEpochAsUnixSeconds * kUnitsPerSecond + units;
        return units;
    }
    timespec now{};
    clock_gettime(clock, &now);
    return static_cast<int64_t>(now.tv_sec) * kUnitsPerSecond + now.tv_nsec / 100;
}

}  // namespace

LONGLONG system_time_now() {
    return read_clock(CLOCK_REALTIME) + kUnixEpochAsSystemTime;
}

Deadline deadline_from_timeout(const LARGE_INTEGER *timeout) {
    using Kind = Deadline::Kind;
    if (timeout == nullptr) return {Kind::kInfinite, {}};
    const LONGLONG value = timeout->QuadPart;
    if (value == 0) return {Kind::kPoll, {}};
    uint64_t units;  // from now
    if (value < 0) {
        units = 0 - static_cast<uint64_t>(value);
    } else {
        const LONGLONG now = system_time_now();
        if (value <= now) return {Kind::kPoll, {}};
        units = static_cast<uint64_t>(value - now);
    }
    if (units > kLongestFiniteTimeout) return {Kind::kInfinite, {}};
    return {Kind::kAt,
            sim::steady_now() + std::chrono::nanoseconds(static_cast<int64_t>(units) * 100)};
}

}  // namespace softndk::wdk

using softndk::wdk::read_clock;

extern "C" {

LARGE_INTEGER NTAPI KeQueryPerformanceCounter(PLARGE_INTEGER PerformanceFrequency) {
    if (PerformanceFrequency != nullptr) {
        PerformanceFrequency->QuadPart = softndk::wdk::kUnitsPerSecond;
    }
    LARGE_INTEGER counter;
    counter.QuadPart = read_clock(CLOCK_MONOTONIC);
    return counter;
}

VOID NTAPI KeQuerySystemTime(PLARGE_INTEGER CurrentTime) {
    // Windows updates this value at the clock tick; the coarse clock is the Linux analogue.
    CurrentTime->QuadPart =
        read_clock(CLOCK_REALTIME_COARSE) + softndk::wdk::kUnixEpochAsSystemTime;
}

VOID NTAPI KeQuerySystemTimePrecise(PLARGE_INTEGER CurrentTime) {
    CurrentTime->QuadPart = softndk::wdk::system_time_now();
}

ULONGLONG NTAPI KeQueryInterruptTime(VOID) {
    return static_cast<ULONGLONG>(read_clock(CLOCK_BOOTTIME));
}

ULONG64 NTAPI KeQueryInterruptTimePrecise(PULONG64 QpcTimeStamp) {
    const auto interrupt_time = static_cast<ULONG64>(read_clock(CLOCK_BOOTTIME));
    *QpcTimeStamp = static_cast<ULONG64>(KeQueryPerformanceCounter(nullptr).QuadPart);
    return interrupt_time;
}

ULONGLONG NTAPI KeQueryUnbiasedInterruptTime(VOID) {
    return static_cast<ULONGLONG>(read_clock(CLOCK_MONOTONIC));
}

VOID NTAPI KeStallExecutionProcessor(ULONG MicroSeconds) {
    if (softndk::sim::attached()) {  // a busy wait costs simulated time, and lets others run
        softndk::sim::sleep_until(softndk::sim::now_ns() + uint64_t{MicroSeconds} * 1000,
                                  "KeStallExecutionProcessor");
        return;
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(MicroSeconds);
    while (std::chrono::steady_clock::now() < end) {
        softndk::wdk::cpu_relax();
    }
}

}  // extern "C"
