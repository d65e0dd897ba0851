// PsCreateSystemThread and what drivers do with its handle: close it, wait on it, or turn it
// into a referenced PETHREAD to wait on at unload. PsTerminateSystemThread, handle validation
// and object-type checks.
#include <wdm.h>

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "waits.hpp"

using softndk::test::wait_ms;

namespace {

struct ThreadState {
    KEVENT go;       // the thread waits for this before it returns
    KEVENT started;  // the thread sets this first
    KIRQL irql = HIGH_LEVEL;
    std::thread::id id;
    bool after_terminate = false;
    bool destructor_ran = false;
    NTSTATUS terminate_status = STATUS_PENDING;

    ThreadState() {
        KeInitializeEvent(&go, NotificationEvent, FALSE);
        KeInitializeEvent(&started, NotificationEvent, FALSE);
    }
};

VOID wait_for_go(PVOID StartContext) {
    auto *state = static_cast<ThreadState *>(StartContext);
    state->irql = KeGetCurrentIrql();
    state->id = std::this_thread::get_id();
    KeSetEvent(&state->started, IO_NO_INCREMENT, FALSE);
    KeWaitForSingleObject(&state->go, Executive, KernelMode, FALSE, nullptr);
}

HANDLE start(PKSTART_ROUTINE routine, ThreadState &state, PCLIENT_ID client = nullptr) {
    OBJECT_ATTRIBUTES attributes;
    InitializeObjectAttributes(&attributes, nullptr, OBJ_KERNEL_HANDLE, nullptr, nullptr);
    HANDLE handle = nullptr;
    REQUIRE(PsCreateSystemThread(&handle, THREAD_ALL_ACCESS, &attributes, nullptr, client, routine,
                                 &state) == STATUS_SUCCESS);
    REQUIRE(handle != nullptr);
    return handle;
}

}  // namespace

TEST_CASE("system thread: the routine runs on a new thread at PASSIVE_LEVEL") {
    ThreadState state;
    CLIENT_ID client{};
    HANDLE handle = start(wait_for_go, state, &client);
    CHECK((reinterpret_cast<ULONG_PTR>(handle) & 0xFFFFFFFF80000000ULL) ==
          0xFFFFFFFF80000000ULL);  // looks like a kernel handle
    CHECK(client.UniqueThread != nullptr);
    CHECK(client.UniqueProcess != nullptr);
    REQUIRE(wait_ms(&state.started) == STATUS_SUCCESS);
    CHECK(state.irql == PASSIVE_LEVEL);
    CHECK(state.id != std::this_thread::get_id());
    KeSetEvent(&state.go, IO_NO_INCREMENT, FALSE);
    LARGE_INTEGER timeout = softndk::test::relative_ms(softndk::test::kPatienceMs);
    CHECK(ZwWaitForSingleObject(handle, FALSE, &timeout) == STATUS_SUCCESS);
    CHECK(ZwClose(handle) == STATUS_SUCCESS);
}

TEST_CASE("system thread: the handle is waitable, and waiting times out while the thread runs") {
    ThreadState state;
    HANDLE handle = start(wait_for_go, state);
    REQUIRE(wait_ms(&state.started) == STATUS_SUCCESS);
    LARGE_INTEGER short_timeout = softndk::test::relative_ms(20);
    CHECK(ZwWaitForSingleObject(handle, FALSE, &short_timeout) == STATUS_TIMEOUT);
    KeSetEvent(&state.go, IO_NO_INCREMENT, FALSE);
    CHECK(ZwWaitForSingleObject(handle, FALSE, nullptr) == STATUS_SUCCESS);
    // A thread object is a notification object: it stays signalled.
    LARGE_INTEGER zero;
    zero.QuadPart = 0;
    CHECK(ZwWaitForSingleObject(handle, FALSE, &zero) == STATUS_SUCCESS);
    CHECK(ZwClose(handle) == STATUS_SUCCESS);
    CHECK(ZwClose(handle) == STATUS_INVALID_HANDLE);  // closed already
}

TEST_CASE("system thread: referenced by handle, closed, then waited on as a PETHREAD") {
    ThreadState first_state;
    ThreadState second_state;
    HANDLE first_handle = start(wait_for_go, first_state);
    HANDLE second_handle = start(wait_for_go, second_state);
    PETHREAD threads[2] = {nullptr, nullptr};
    OBJECT_HANDLE_INFORMATION information{};
    REQUIRE(ObReferenceObjectByHandle(first_handle, THREAD_ALL_ACCESS, *PsThreadType, KernelMode,
                                      reinterpret_cast<PVOID *>(&threads[0]),
                                      &information) == STATUS_SUCCESS);
    CHECK(information.GrantedAccess == THREAD_ALL_ACCESS);
    REQUIRE(ObReferenceObjectByHandle(second_handle, SYNCHRONIZE, nullptr, KernelMode,
                                      reinterpret_cast<PVOID *>(&threads[1]),
                                      nullptr) == STATUS_SUCCESS);
    // The object outlives its handle while the reference is held.
    CHECK(ZwClose(first_handle) == STATUS_SUCCESS);
    CHECK(ZwClose(second_handle) == STATUS_SUCCESS);
    CHECK(ObReferenceObject(threads[0]) == 3);  // the thread, this test twice
    CHECK(ObDereferenceObject(threads[0]) == 2);

    LARGE_INTEGER zero;
    zero.QuadPart = 0;
    PVOID objects[] = {threads[0], threads[1]};
    CHECK(KeWaitForMultipleObjects(2, objects, WaitAny, Executive, KernelMode, FALSE, &zero,
                                   nullptr) == STATUS_TIMEOUT);
    KeSetEvent(&second_state.go, IO_NO_INCREMENT, FALSE);
    LARGE_INTEGER timeout = softndk::test::relative_ms(softndk::test::kPatienceMs);
    CHECK(KeWaitForMultipleObjects(2, objects, WaitAny, Executive, KernelMode, FALSE, &timeout,
                                   nullptr) == STATUS_WAIT_1);
    KeSetEvent(&first_state.go, IO_NO_INCREMENT, FALSE);
    CHECK(KeWaitForMultipleObjects(2, objects, WaitAll, Executive, KernelMode, FALSE, &timeout,
                                   nullptr) == STATUS_SUCCESS);
    // The last references (the ended threads may still be dropping their own).
    CHECK(ObDereferenceObject(threads[0]) >= 0);
    CHECK(ObDereferenceObject(threads[1]) >= 0);
}

namespace {

struct SetsFlagWhenDestroyed {
    bool *flag;
    ~SetsFlagWhenDestroyed() { *flag = true; }
};

void terminate_from_a_nested_call(ThreadState &state) {
    SetsFlagWhenDestroyed guard{&state.destructor_ran};
    KeSetEvent(&state.started, IO_NO_INCREMENT, FALSE);
    PsTerminateSystemThread(STATUS_SUCCESS);
    state.after_terminate = true;  // never reached
}

VOID terminate_early(PVOID StartContext) {
    terminate_from_a_nested_call(*static_cast<ThreadState *>(StartContext));
    static_cast<ThreadState *>(StartContext)->after_terminate = true;  // never reached
}

}  // namespace

TEST_CASE("system thread: PsTerminateSystemThread ends the thread and signals its object") {
    ThreadState state;
    HANDLE handle = start(terminate_early, state);
    CHECK(ZwWaitForSingleObject(handle, FALSE, nullptr) == STATUS_SUCCESS);
    CHECK(ZwClose(handle) == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&state.started) == 1);
    CHECK_FALSE(state.after_terminate);
    CHECK(state.destructor_ran);  // the stack was unwound

    // Not a system thread: the call fails and returns.
    CHECK(PsTerminateSystemThread(STATUS_SUCCESS) == STATUS_INVALID_PARAMETER);
}

TEST_CASE("system thread: bad handles, wrong object types and bad arguments are refused") {
    PVOID object = reinterpret_cast<PVOID>(1);
    CHECK(ObReferenceObjectByHandle(reinterpret_cast<HANDLE>(0x1234), 0, *PsThreadType, KernelMode,
                                    &object, nullptr) == STATUS_INVALID_HANDLE);
    CHECK(object == nullptr);
    CHECK(ZwClose(nullptr) == STATUS_INVALID_HANDLE);
    CHECK(ZwWaitForSingleObject(reinterpret_cast<HANDLE>(0x1234), FALSE, nullptr) ==
          STATUS_INVALID_HANDLE);

    ThreadState state;
    HANDLE handle = start(wait_for_go, state);
    int not_a_type = 0;
    CHECK(ObReferenceObjectByHandle(handle, 0, reinterpret_cast<POBJECT_TYPE>(&not_a_type),
                                    KernelMode, &object, nullptr) == STATUS_OBJECT_TYPE_MISMATCH);
    KeSetEvent(&state.go, IO_NO_INCREMENT, FALSE);
    // `state` lives on this stack: the thread must be done with it before the test returns.
    CHECK(ZwWaitForSingleObject(handle, FALSE, nullptr) == STATUS_SUCCESS);
    CHECK(ZwClose(handle) == STATUS_SUCCESS);

    HANDLE unused = nullptr;
    CHECK(PsCreateSystemThread(&unused, 0, nullptr, nullptr, nullptr, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(PsCreateSystemThread(nullptr, 0, nullptr, nullptr, nullptr, wait_for_go, &state) ==
          STATUS_INVALID_PARAMETER);
}

TEST_CASE("system thread: creating above PASSIVE_LEVEL bug-checks, Ob* on non-threads aborts") {
    auto child = softndk::test::run_in_child([] {
        KeRaiseIrqlToDpcLevel();
        HANDLE handle;
        PsCreateSystemThread(
            &handle, 0, nullptr, nullptr, nullptr, [](PVOID) {}, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("IRQL_NOT_LESS_OR_EQUAL"));

    child = softndk::test::run_in_child([] {
        KEVENT event;
        KeInitializeEvent(&event, NotificationEvent, FALSE);
        ObDereferenceObject(&event);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not an object SoftNDK's object manager knows"));
}
