// Clocks and delays. Bounds are generous: the machine is shared and sanitizers slow it down.
#include <wdm.h>

#include <chrono>
#include <ctime>

#include <catch2/catch.hpp>

#include "death.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr LONGLONG kUnixEpochAsSystemTime = 116'444'736'000'000'000;

}  // namespace

TEST_CASE("time: the performance counter runs at 10 MHz and never goes back") {
    LARGE_INTEGER frequency;
    const LARGE_INTEGER first = KeQueryPerformanceCounter(&frequency);
    CHECK(frequency.QuadPart == 10'000'000);
    const auto start = Clock::now();
    while (Clock::now() - start < 20ms) {
    }
    const LARGE_INTEGER second = KeQueryPerformanceCounter(nullptr);
    CHECK(second.QuadPart - first.QuadPart >= 20 * 10'000 - 10'000);  // >= 19 ms
    CHECK(second.QuadPart - first.QuadPart < 10 * frequency.QuadPart);
}

TEST_CASE("time: system time counts 100 ns units since 1601") {
    LARGE_INTEGER precise;
    LARGE_INTEGER coarse;
    KeQuerySystemTimePrecise(&precise);
    KeQuerySystemTime(&coarse);
    const LONGLONG unix_now = static_cast<LONGLONG>(std::time(nullptr));
    const LONGLONG expected = unix_now * 10'000'000 + kUnixEpochAsSystemTime;
    CHECK(precise.QuadPart > expected - 50'000'000);  // within 5 s
    CHECK(precise.QuadPart < expected + 50'000'000);
    CHECK(coarse.QuadPart > expected - 50'000'000);
    CHECK(coarse.QuadPart < expected + 50'000'000);
}

TEST_CASE("time: interrupt times advance") {
    const ULONGLONG interrupt = KeQueryInterruptTime();
    const ULONGLONG unbiased = KeQueryUnbiasedInterruptTime();
    ULONG64 qpc = 0;
    const ULONG64 precise = KeQueryInterruptTimePrecise(&qpc);
    CHECK(interrupt > 0);
    CHECK(precise >= interrupt);
    CHECK(unbiased <= KeQueryUnbiasedInterruptTime());
    CHECK(qpc > 0);
}

TEST_CASE("time: KeDelayExecutionThread sleeps a relative interval, and 0 only yields") {
    LARGE_INTEGER interval;
    interval.QuadPart = -20 * 10'000;  // 20 ms
    auto start = Clock::now();
    CHECK(KeDelayExecutionThread(KernelMode, FALSE, &interval) == STATUS_SUCCESS);
    CHECK(Clock::now() - start >= 19ms);
    CHECK(Clock::now() - start < 10s);

    interval.QuadPart = 0;
    start = Clock::now();
    CHECK(KeDelayExecutionThread(KernelMode, FALSE, &interval) == STATUS_SUCCESS);
    CHECK(Clock::now() - start < 2s);
}

TEST_CASE("time: KeDelayExecutionThread above APC_LEVEL bug-checks") {
    const auto child = softndk::test::run_in_child([] {
        KIRQL old;
        KeRaiseIrql(DISPATCH_LEVEL, &old);
        LARGE_INTEGER interval;
        interval.QuadPart = -1;
        KeDelayExecutionThread(KernelMode, FALSE, &interval);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
}

TEST_CASE("time: KeStallExecutionProcessor busy-waits at least the time asked") {
    const auto start = Clock::now();
    KeStallExecutionProcessor(2000);
    CHECK(Clock::now() - start >= 2ms);
    CHECK(Clock::now() - start < 10s);
}
