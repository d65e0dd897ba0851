// waits.hpp - helpers the deferred-work and synchronisation tests share: timeouts in Windows'
// units, waits on dispatcher objects, and a bounded poll for conditions no event reports.
#pragma once

#include <wdm.h>

#include <chrono>
#include <thread>

namespace softndk::test {

// A relative timeout (negative, 100 ns units) of `ms` milliseconds.
inline LARGE_INTEGER relative_ms(LONGLONG ms) {
    LARGE_INTEGER timeout;
    timeout.QuadPart = -ms * 10'000;
    return timeout;
}

// Generous bound for "this must happen": sanitizer builds on 2 shared cores are slow. A test
// that reaches it has failed, it did not merely run slowly.
inline constexpr LONGLONG kPatienceMs = 10'000;

// Waits for `object` for at most kPatienceMs (or `ms`); STATUS_SUCCESS or STATUS_TIMEOUT.
inline NTSTATUS wait_ms(PVOID object, LONGLONG ms = kPatienceMs) {
    LARGE_INTEGER timeout = relative_ms(ms);
    return KeWaitForSingleObject(object, Executive, KernelMode, FALSE, &timeout);
}

// Polls `condition` every millisecond for up to kPatienceMs; for states that no event
// announces (another thread having blocked, a counter settling).
template <class Condition>
bool eventually(Condition condition) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kPatienceMs);
    while (!condition()) {
        if (std::chrono::steady_clock::now() > give_up) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

}  // namespace softndk::test
