// wake.cpp - shared futex system calls for the wake protocol (wake.hpp).
#include "softndk/wake.hpp"

#include "softndk/sim.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>

namespace softndk {

FutexWait futex_wait(uint32_t &word, uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
    if (sim::attached()) {
        // Simulated time: the scheduler, not the kernel, decides when this thread runs
        // again. Only this thread runs now, so the check and the block cannot be split by
        // an attached waker; wakers outside the simulation go through sim::wake too.
        if (std::atomic_ref<uint32_t>(word).load(std::memory_order_acquire) != expected)
            return FutexWait::kValueChanged;
        const uint64_t deadline =
            timeout == kWaitForever
                ? sim::kNever
                : sim::now_ns() + uint64_t(std::max<int64_t>(timeout.count(), 0));
        return sim::block(&word, deadline, "futex wait", nullptr, nullptr, nullptr)
                   ? FutexWait::kWoken
                   : FutexWait::kTimedOut;
    }
    timespec ts{};
    timespec *limit = nullptr;
    if (timeout != kWaitForever) {
        const int64_t ns = timeout.count() > 0 ? timeout.count() : 0;
        ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
        ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
        limit = &ts;
    }
    // FUTEX_WAIT without FUTEX_PRIVATE_FLAG: keyed by the backing page, so it
    // pairs with a FUTEX_WAKE from another process mapping the same memory.
    if (syscall(SYS_futex, &word, FUTEX_WAIT, expected, limit, nullptr, 0) == 0) {
        return FutexWait::kWoken;
    }
    switch (errno) {
        case EAGAIN:
            return FutexWait::kValueChanged;
        case ETIMEDOUT:
            return FutexWait::kTimedOut;
        case EINTR:
            return FutexWait::kInterrupted;
        default:
            return FutexWait::kFailed;
    }
}

int futex_wake(uint32_t &word, int waiters) noexcept {
    if (sim::enabled()) sim::wake(&word, waiters > 1);
    return static_cast<int>(syscall(SYS_futex, &word, FUTEX_WAKE, waiters, nullptr, nullptr, 0));
}

}  // namespace softndk
