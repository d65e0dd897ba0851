// wake.cpp - shared futex system calls for the wake protocol (wake.hpp).
#include "softndk/wake.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace softndk {

FutexWait futex_wait(uint32_t &word, uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
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
    return static_cast<int>(syscall(SYS_futex, &word, FUTEX_WAKE, waiters, nullptr, nullptr, 0));
}

}  // namespace softndk
