// adaptive_mutex_test.cpp - AdaptiveMutex: std::mutex's guarantees, with a spin first.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "device/adaptive_mutex.hpp"

using softndk::emu::AdaptiveMutex;

TEST_CASE("AdaptiveMutex try_lock fails while another thread holds it", "[adaptive_mutex]") {
    AdaptiveMutex m;
    m.lock();
    bool got = true;
    std::thread([&] { got = m.try_lock(); }).join();
    CHECK_FALSE(got);
    m.unlock();
    std::thread([&] {
        got = m.try_lock();
        if (got) m.unlock();
    }).join();
    CHECK(got);
}

TEST_CASE("AdaptiveMutex: a waiter that outlasts the spin gets the lock once it is released",
          "[adaptive_mutex]") {
    AdaptiveMutex m;
    std::atomic<bool> released{false};
    std::atomic<bool> acquired_early{false};
    m.lock();
    std::thread waiter([&] {
        std::lock_guard lock(m);
        acquired_early = !released.load();
    });
    // Far longer than kSpins pauses: the waiter has gone to sleep in std::mutex::lock().
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    released = true;
    m.unlock();
    waiter.join();
    CHECK_FALSE(acquired_early);
}

TEST_CASE("AdaptiveMutex excludes: two threads that add under it lose no increment",
          "[adaptive_mutex]") {
    AdaptiveMutex m;
    uint64_t counter = 0;  // plain: only the mutex orders the two threads' updates
    constexpr int kEach = 200000;
    auto add = [&] {
        for (int i = 0; i < kEach; ++i) {
            std::lock_guard lock(m);
            counter = counter + 1;
        }
    };
    std::thread other(add);
    add();
    other.join();
    CHECK(counter == 2 * uint64_t{kEach});
}
