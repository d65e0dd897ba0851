// KeWaitForMultipleObjects: WaitAny and WaitAll, which objects are consumed, wait blocks.
#include <wdm.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "death.hpp"

namespace {

using namespace std::chrono_literals;

NTSTATUS wait_multiple(ULONG count, PVOID *objects, WAIT_TYPE type, LARGE_INTEGER *timeout,
                       PKWAIT_BLOCK blocks = nullptr) {
    return KeWaitForMultipleObjects(count, objects, type, Executive, KernelMode, FALSE, timeout,
                                    blocks);
}

LARGE_INTEGER timeout_100ns(LONGLONG value) {
    LARGE_INTEGER timeout;
    timeout.QuadPart = value;
    return timeout;
}

}  // namespace

TEST_CASE("wait multiple: WaitAny returns the lowest signalled index and consumes only it") {
    KEVENT none, sync, notification;
    KeInitializeEvent(&none, NotificationEvent, FALSE);
    KeInitializeEvent(&sync, SynchronizationEvent, TRUE);
    KeInitializeEvent(&notification, NotificationEvent, TRUE);
    PVOID objects[] = {&none, &sync, &notification};
    LARGE_INTEGER zero = timeout_100ns(0);

    CHECK(wait_multiple(3, objects, WaitAny, &zero) == STATUS_WAIT_0 + 1);
    CHECK(KeReadStateEvent(&sync) == 0);
    CHECK(KeReadStateEvent(&notification) == 1);
    CHECK(wait_multiple(3, objects, WaitAny, &zero) == STATUS_WAIT_0 + 2);
    KeClearEvent(&notification);
    CHECK(wait_multiple(3, objects, WaitAny, &zero) == STATUS_TIMEOUT);
}

TEST_CASE("wait multiple: a blocked WaitAny wakes with the index of the object set") {
    KEVENT events[3];
    for (auto &event : events) {
        KeInitializeEvent(&event, SynchronizationEvent, FALSE);
    }
    PVOID objects[] = {&events[0], &events[1], &events[2]};
    std::thread setter([&] {
        std::this_thread::sleep_for(20ms);
        KeSetEvent(&events[2], IO_NO_INCREMENT, FALSE);
    });
    CHECK(wait_multiple(3, objects, WaitAny, nullptr) == STATUS_WAIT_0 + 2);
    setter.join();
    CHECK(KeReadStateEvent(&events[2]) == 0);  // consumed by the wait
}

TEST_CASE("wait multiple: WaitAll needs every object and consumes nothing until then") {
    KEVENT sync, notification;
    KeInitializeEvent(&sync, SynchronizationEvent, TRUE);
    KeInitializeEvent(&notification, NotificationEvent, FALSE);
    PVOID objects[] = {&sync, &notification};
    LARGE_INTEGER zero = timeout_100ns(0);
    LARGE_INTEGER short_wait = timeout_100ns(-10 * 10'000);  // 10 ms

    CHECK(wait_multiple(2, objects, WaitAll, &zero) == STATUS_TIMEOUT);
    CHECK(wait_multiple(2, objects, WaitAll, &short_wait) == STATUS_TIMEOUT);
    CHECK(KeReadStateEvent(&sync) == 1);

    KeSetEvent(&notification, IO_NO_INCREMENT, FALSE);
    CHECK(wait_multiple(2, objects, WaitAll, &zero) == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&sync) == 0);          // synchronization: consumed
    CHECK(KeReadStateEvent(&notification) == 1);  // notification: stays
}

TEST_CASE("wait multiple: a blocked WaitAll is satisfied by the last of its objects") {
    KEVENT sync, notification;
    KeInitializeEvent(&sync, SynchronizationEvent, FALSE);
    KeInitializeEvent(&notification, NotificationEvent, FALSE);
    PVOID objects[] = {&sync, &notification};
    std::atomic<NTSTATUS> result{STATUS_PENDING};
    std::thread waiter([&] { result = wait_multiple(2, objects, WaitAll, nullptr); });

    std::this_thread::sleep_for(20ms);
    // Only one of two: the waiter keeps waiting and the synchronization event keeps its signal.
    CHECK(KeSetEvent(&sync, IO_NO_INCREMENT, FALSE) == 0);
    std::this_thread::sleep_for(20ms);
    CHECK(result.load() == STATUS_PENDING);
    CHECK(KeReadStateEvent(&sync) == 1);

    KeSetEvent(&notification, IO_NO_INCREMENT, FALSE);
    waiter.join();
    CHECK(result.load() == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&sync) == 0);
    CHECK(KeReadStateEvent(&notification) == 1);
}

TEST_CASE("wait multiple: more than THREAD_WAIT_OBJECTS objects use the caller's wait blocks") {
    std::array<KEVENT, 5> events;
    std::array<PVOID, 5> objects;
    for (size_t i = 0; i < events.size(); ++i) {
        KeInitializeEvent(&events[i], SynchronizationEvent, FALSE);
        objects[i] = &events[i];
    }
    std::array<KWAIT_BLOCK, 5> blocks;
    std::thread setter([&] {
        std::this_thread::sleep_for(20ms);
        KeSetEvent(&events[4], IO_NO_INCREMENT, FALSE);
    });
    CHECK(wait_multiple(5, objects.data(), WaitAny, nullptr, blocks.data()) == STATUS_WAIT_0 + 4);
    setter.join();

    const auto child = softndk::test::run_in_child([&] {
        LARGE_INTEGER zero = timeout_100ns(0);
        wait_multiple(4, objects.data(), WaitAny, &zero);  // no wait blocks: a bug check
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("MAXIMUM_WAIT_OBJECTS_EXCEEDED"));
}

TEST_CASE("wait multiple: a WaitAny and a WaitAll waiter on one synchronization event") {
    // Set once with both waiting: the WaitAny waiter (the only one satisfiable) gets it.
    KEVENT shared, other;
    KeInitializeEvent(&shared, SynchronizationEvent, FALSE);
    KeInitializeEvent(&other, NotificationEvent, FALSE);
    PVOID all_objects[] = {&other, &shared};
    std::atomic<NTSTATUS> all_result{STATUS_PENDING};
    std::atomic<NTSTATUS> any_result{STATUS_PENDING};
    std::thread all_waiter([&] { all_result = wait_multiple(2, all_objects, WaitAll, nullptr); });
    std::this_thread::sleep_for(20ms);
    std::thread any_waiter([&] {
        any_result = KeWaitForSingleObject(&shared, Executive, KernelMode, FALSE, nullptr);
    });
    std::this_thread::sleep_for(20ms);

    KeSetEvent(&shared, IO_NO_INCREMENT, FALSE);
    any_waiter.join();
    CHECK(any_result.load() == STATUS_SUCCESS);
    CHECK(all_result.load() == STATUS_PENDING);
    CHECK(KeReadStateEvent(&shared) == 0);

    KeSetEvent(&other, IO_NO_INCREMENT, FALSE);
    KeSetEvent(&shared, IO_NO_INCREMENT, FALSE);
    all_waiter.join();
    CHECK(all_result.load() == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&shared) == 0);
}
