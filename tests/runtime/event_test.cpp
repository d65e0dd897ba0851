// KEVENT and KeWaitForSingleObject: zeroed events, timeouts, notification vs synchronization
// semantics, and the stack-lifetime guarantee of KeSetEvent.
#include <wdm.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

LARGE_INTEGER relative_ms(LONGLONG ms) {
    LARGE_INTEGER timeout;
    timeout.QuadPart = -ms * 10'000;
    return timeout;
}

LARGE_INTEGER zero_timeout() {
    LARGE_INTEGER timeout;
    timeout.QuadPart = 0;
    return timeout;
}

NTSTATUS wait_for(PRKEVENT event, LARGE_INTEGER *timeout) {
    return KeWaitForSingleObject(event, Executive, KernelMode, FALSE, timeout);
}

// Polls `condition` for up to 10 s; the bound is generous (sanitizer builds, shared cores).
template <class Condition>
bool eventually(Condition condition) {
    const auto give_up = Clock::now() + 10s;
    while (!condition()) {
        if (Clock::now() > give_up) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

}  // namespace

TEST_CASE("event: KEVENT keeps Windows' x64 size and field offsets") {
    STATIC_REQUIRE(sizeof(KEVENT) == 24);
    STATIC_REQUIRE(offsetof(KEVENT, Header.Type) == 0);
    STATIC_REQUIRE(offsetof(KEVENT, Header.Size) == 2);
    STATIC_REQUIRE(offsetof(KEVENT, Header.SignalState) == 4);
    STATIC_REQUIRE(offsetof(KEVENT, Header.WaitListHead) == 8);
    STATIC_REQUIRE(sizeof(KWAIT_BLOCK) == 48);
    STATIC_REQUIRE(NotificationEvent == 0);
    STATIC_REQUIRE(SynchronizationEvent == 1);
}

TEST_CASE("event: a zeroed KEVENT is an unsignalled notification event") {
    KEVENT event;
    std::memset(&event, 0, sizeof(event));
    CHECK(KeReadStateEvent(&event) == 0);
    LARGE_INTEGER timeout = relative_ms(10);
    CHECK(wait_for(&event, &timeout) == STATUS_TIMEOUT);

    CHECK(KeSetEvent(&event, IO_NO_INCREMENT, FALSE) == 0);
    CHECK(wait_for(&event, &timeout) == STATUS_SUCCESS);
    CHECK(wait_for(&event, &timeout) == STATUS_SUCCESS);  // notification: stays signalled
    CHECK(KeReadStateEvent(&event) == 1);
}

TEST_CASE("event: timeout 0 tests the state and returns at once") {
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    LARGE_INTEGER zero = zero_timeout();
    const auto start = Clock::now();
    CHECK(wait_for(&event, &zero) == STATUS_TIMEOUT);
    CHECK(Clock::now() - start < 2s);
    KeSetEvent(&event, IO_NO_INCREMENT, FALSE);
    CHECK(wait_for(&event, &zero) == STATUS_SUCCESS);
}

TEST_CASE("event: a relative timeout waits about that long") {
    KEVENT event;
    KeInitializeEvent(&event, SynchronizationEvent, FALSE);
    LARGE_INTEGER timeout = relative_ms(50);
    const auto start = Clock::now();
    CHECK(wait_for(&event, &timeout) == STATUS_TIMEOUT);
    const auto waited = Clock::now() - start;
    CHECK(waited >= 49ms);
    CHECK(waited < 10s);
}

TEST_CASE("event: an absolute timeout is a system time, one in the past polls") {
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    LARGE_INTEGER deadline;
    KeQuerySystemTimePrecise(&deadline);
    deadline.QuadPart += 50 * 10'000;  // now + 50 ms
    auto start = Clock::now();
    CHECK(wait_for(&event, &deadline) == STATUS_TIMEOUT);
    CHECK(Clock::now() - start >= 40ms);  // wall and monotonic clocks may drift a little
    CHECK(Clock::now() - start < 10s);

    LARGE_INTEGER past;
    KeQuerySystemTimePrecise(&past);
    past.QuadPart -= 10'000'000;
    start = Clock::now();
    CHECK(wait_for(&event, &past) == STATUS_TIMEOUT);
    CHECK(Clock::now() - start < 2s);
}

TEST_CASE("event: KeSetEvent, KeResetEvent and KeClearEvent report and change the state") {
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, TRUE);
    CHECK(event.Header.Size == sizeof(KEVENT) / sizeof(LONG));
    CHECK(KeReadStateEvent(&event) == 1);
    CHECK(KeSetEvent(&event, IO_NO_INCREMENT, FALSE) == 1);
    CHECK(KeResetEvent(&event) == 1);
    CHECK(KeResetEvent(&event) == 0);
    CHECK(KeSetEvent(&event, IO_NO_INCREMENT, FALSE) == 0);
    KeClearEvent(&event);
    CHECK(KeReadStateEvent(&event) == 0);
}

TEST_CASE("event: a synchronization event resets when a wait takes it") {
    KEVENT event;
    KeInitializeEvent(&event, SynchronizationEvent, FALSE);
    CHECK(KeSetEvent(&event, IO_NO_INCREMENT, FALSE) == 0);
    CHECK(KeReadStateEvent(&event) == 1);  // nobody waiting: the signal is kept
    LARGE_INTEGER zero = zero_timeout();
    CHECK(wait_for(&event, &zero) == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&event) == 0);
    CHECK(wait_for(&event, &zero) == STATUS_TIMEOUT);
}

TEST_CASE("event: a synchronization event wakes exactly one of two waiters") {
    KEVENT event;
    KeInitializeEvent(&event, SynchronizationEvent, FALSE);
    std::atomic<int> woken{0};
    std::atomic<int> failures{0};
    auto waiter = [&] {
        if (wait_for(&event, nullptr) != STATUS_SUCCESS) failures.fetch_add(1);
        woken.fetch_add(1);
    };
    std::thread first(waiter);
    std::thread second(waiter);
    std::this_thread::sleep_for(50ms);  // let both block (the result holds either way)

    CHECK(KeSetEvent(&event, IO_NO_INCREMENT, FALSE) == 0);
    CHECK(eventually([&] { return woken.load() >= 1; }));
    std::this_thread::sleep_for(100ms);
    CHECK(woken.load() == 1);
    CHECK(KeReadStateEvent(&event) == 0);  // handed to the waiter, not left signalled

    KeSetEvent(&event, IO_NO_INCREMENT, FALSE);
    first.join();
    second.join();
    CHECK(woken.load() == 2);
    CHECK(failures.load() == 0);
    CHECK(KeReadStateEvent(&event) == 0);
}

TEST_CASE("event: a notification event wakes every waiter and stays signalled") {
    KEVENT event;
    std::memset(&event, 0, sizeof(event));
    std::atomic<int> woken{0};
    std::vector<std::thread> waiters;
    for (int i = 0; i < 3; ++i) {
        waiters.emplace_back([&] {
            if (wait_for(&event, nullptr) == STATUS_SUCCESS) woken.fetch_add(1);
        });
    }
    std::this_thread::sleep_for(50ms);
    CHECK(woken.load() == 0);
    KeSetEvent(&event, IO_NO_INCREMENT, FALSE);
    for (auto &t : waiters) {
        t.join();
    }
    CHECK(woken.load() == 3);
    CHECK(KeReadStateEvent(&event) == 1);
}

TEST_CASE("event: a waiter that times out leaves nothing behind for a later KeSetEvent") {
    for (int round = 0; round < 100; ++round) {
        KEVENT event;
        KeInitializeEvent(&event, round % 2 ? SynchronizationEvent : NotificationEvent, FALSE);
        LARGE_INTEGER timeout = relative_ms(0);
        timeout.QuadPart = -1;  // 100 ns: blocks, then times out
        CHECK(wait_for(&event, &timeout) == STATUS_TIMEOUT);
        CHECK(KeSetEvent(&event, IO_NO_INCREMENT, FALSE) == 0);
        CHECK(KeReadStateEvent(&event) == 1);
    }
}

namespace {

// One round of the stack-lifetime test: the event lives in this frame only; the setter
// thread sets it through `handoff`; once the wait returns the event is scribbled over and
// goes out of scope, and the next round reuses the same stack slot. A KeSetEvent that
// touched the event after the waiter could return would race with the memset (TSan), write
// to a dead stack object (ASan use-after-scope) or signal the next round's event early.
[[gnu::noinline]] bool stack_event_round(int round, std::atomic<PRKEVENT> &handoff) {
    bool ok = true;
    {
        KEVENT event;
        const int variant = round % 4;
        if (variant == 0 || variant == 2) {
            KeInitializeEvent(&event, SynchronizationEvent, FALSE);
        } else {
            std::memset(&event, 0, sizeof(event));  // zeroed: a notification event
        }
        handoff.store(&event, std::memory_order_release);
        switch (variant) {
            case 0:
            case 1:  // blocking wait
                ok = wait_for(&event, nullptr) == STATUS_SUCCESS;
                break;
            case 2: {  // polling waits, each under the dispatcher lock
                LARGE_INTEGER zero = zero_timeout();
                while (wait_for(&event, &zero) == STATUS_TIMEOUT) {
                    std::this_thread::yield();
                }
                break;
            }
            default:  // lock-free KeReadStateEvent, returning the moment the state flips
                while (KeReadStateEvent(&event) == 0) {
                    std::this_thread::yield();
                }
                break;
        }
        std::memset(&event, 0xA5, sizeof(event));
    }
    return ok;
}

}  // namespace

TEST_CASE("event: KeSetEvent on a stack event racing the waiter's return (10k rounds)") {
    constexpr int kRounds = 10'000;
    std::atomic<PRKEVENT> handoff{nullptr};
    std::thread setter([&] {
        for (int i = 0; i < kRounds; ++i) {
            PRKEVENT event;
            while ((event = handoff.exchange(nullptr, std::memory_order_acquire)) == nullptr) {
                std::this_thread::yield();
            }
            KeSetEvent(event, IO_NO_INCREMENT, FALSE);
        }
    });
    int failed_rounds = 0;
    for (int i = 0; i < kRounds; ++i) {
        if (!stack_event_round(i, handoff)) ++failed_rounds;
    }
    setter.join();
    CHECK(failed_rounds == 0);
    CHECK(handoff.load() == nullptr);
}

TEST_CASE("event: at DISPATCH_LEVEL a wait may only poll, a timed wait bug-checks") {
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    KIRQL old;
    KeRaiseIrql(DISPATCH_LEVEL, &old);
    LARGE_INTEGER zero = zero_timeout();
    CHECK(wait_for(&event, &zero) == STATUS_TIMEOUT);
    KeLowerIrql(old);

    const auto child = softndk::test::run_in_child([&] {
        KIRQL ignored;
        KeRaiseIrql(DISPATCH_LEVEL, &ignored);
        LARGE_INTEGER timeout = relative_ms(10);
        wait_for(&event, &timeout);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));
    CHECK_THAT(child.err, Catch::Contains("KeWaitForSingleObject at IRQL 2"));
}

TEST_CASE("event: waiting on an unknown dispatcher object, or setting a non-event, aborts") {
    struct {
        UCHAR Type = 4;  // a Windows KQUEUE's type, for instance
        UCHAR rest[23] = {};
    } not_an_event;
    auto child = softndk::test::run_in_child([&] {
        LARGE_INTEGER zero = zero_timeout();
        KeWaitForSingleObject(&not_an_event, Executive, KernelMode, FALSE, &zero);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("is not a dispatcher object SoftNDK knows"));

    // A timer is a dispatcher object, but not an event.
    child = softndk::test::run_in_child([] {
        KTIMER timer;
        KeInitializeTimer(&timer);
        KeSetEvent(reinterpret_cast<PRKEVENT>(&timer), IO_NO_INCREMENT, FALSE);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("is not a KEVENT"));
}
