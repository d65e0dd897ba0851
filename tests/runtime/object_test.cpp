// The object manager beyond threads: the namespace (symbolic links, directories, temporary and
// permanent names), ObReferenceObjectByPointer / ObOpenObjectByPointer, the process and thread
// objects and ids, object callbacks and process-creation notification registration.
#include <wdm.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "death.hpp"

namespace {

struct Name {
    std::wstring text;
    UNICODE_STRING string{};
    explicit Name(std::wstring value) : text(std::move(value)) {
        string.Buffer = text.data();
        string.Length = static_cast<USHORT>(text.size() * sizeof(WCHAR));
        string.MaximumLength = string.Length;
    }
    PUNICODE_STRING get() { return &string; }
};

NTSTATUS create_directory(HANDLE *handle, const std::wstring &path, ULONG attributes) {
    Name name(path);
    OBJECT_ATTRIBUTES object;
    InitializeObjectAttributes(&object, path.empty() ? nullptr : name.get(), attributes, nullptr,
                               nullptr);
    return ZwCreateDirectoryObject(handle, DIRECTORY_ALL_ACCESS, &object);
}

}  // namespace

TEST_CASE("object manager: symbolic links - create, collide, delete, DosDevices aliases") {
    Name link(L"\\DosDevices\\SoftNdkTestLink");
    Name same(L"\\??\\softndktestlink");
    Name device(L"\\Device\\SoftNdkTest0");
    REQUIRE(IoCreateSymbolicLink(link.get(), device.get()) == STATUS_SUCCESS);
    CHECK(IoCreateSymbolicLink(same.get(), device.get()) == STATUS_OBJECT_NAME_COLLISION);
    CHECK(IoDeleteSymbolicLink(same.get()) == STATUS_SUCCESS);
    CHECK(IoDeleteSymbolicLink(link.get()) == STATUS_OBJECT_NAME_NOT_FOUND);
    // The name is free again.
    CHECK(IoCreateSymbolicLink(same.get(), device.get()) == STATUS_SUCCESS);
    CHECK(IoDeleteSymbolicLink(link.get()) == STATUS_SUCCESS);
    Name relative(L"NoBackslash");
    CHECK(IoCreateSymbolicLink(relative.get(), device.get()) == STATUS_OBJECT_NAME_INVALID);
    Name nested(L"\\NoSuchDirectory\\Link");
    CHECK(IoCreateSymbolicLink(nested.get(), device.get()) == STATUS_OBJECT_PATH_NOT_FOUND);
}

TEST_CASE("object manager: directories - names, OBJ_OPENIF, temporary and permanent") {
    HANDLE first = nullptr, second = nullptr;
    REQUIRE(create_directory(&first, L"\\SoftNdkDir", 0) == STATUS_SUCCESS);
    CHECK(create_directory(&second, L"\\SOFTNDKDIR", 0) == STATUS_OBJECT_NAME_COLLISION);
    REQUIRE(create_directory(&second, L"\\SoftNdkDir", OBJ_OPENIF) == STATUS_OBJECT_NAME_EXISTS);
    CHECK(second != first);
    // A child needs its parent directory.
    HANDLE child = nullptr;
    REQUIRE(create_directory(&child, L"\\SoftNdkDir\\Child", 0) == STATUS_SUCCESS);
    CHECK(create_directory(&child, L"\\Missing\\Child", 0) == STATUS_OBJECT_PATH_NOT_FOUND);
    CHECK(create_directory(&child, L"relative", 0) == STATUS_OBJECT_PATH_SYNTAX_BAD);
    HANDLE unnamed = nullptr;
    CHECK(create_directory(&unnamed, L"", 0) == STATUS_SUCCESS);
    CHECK(ZwClose(unnamed) == STATUS_SUCCESS);
    // A temporary name goes with the last handle.
    ZwClose(first);
    ZwClose(second);
    HANDLE again = nullptr;
    REQUIRE(create_directory(&again, L"\\SoftNdkDir", 0) == STATUS_SUCCESS);
    ZwClose(again);
    // A permanent one stays until ZwMakeTemporaryObject and its last close.
    HANDLE permanent = nullptr;
    REQUIRE(create_directory(&permanent, L"\\SoftNdkPermanent", OBJ_PERMANENT) == STATUS_SUCCESS);
    ZwClose(permanent);
    CHECK(create_directory(&permanent, L"\\SoftNdkPermanent", 0) == STATUS_OBJECT_NAME_COLLISION);
    REQUIRE(create_directory(&permanent, L"\\SoftNdkPermanent", OBJ_OPENIF) ==
            STATUS_OBJECT_NAME_EXISTS);
    CHECK(ZwMakeTemporaryObject(permanent) == STATUS_SUCCESS);
    CHECK(ZwClose(permanent) == STATUS_SUCCESS);
    CHECK(create_directory(&permanent, L"\\SoftNdkPermanent", 0) == STATUS_SUCCESS);
    ZwClose(permanent);
    CHECK(ZwMakeTemporaryObject(reinterpret_cast<HANDLE>(0x8)) == STATUS_INVALID_HANDLE);
}

TEST_CASE("object manager: ObReferenceObjectByPointer and ObOpenObjectByPointer") {
    PEPROCESS process = PsGetCurrentProcess();
    REQUIRE(process != nullptr);
    CHECK(PsGetCurrentProcess() == process);
    CHECK(ObReferenceObjectByPointer(process, 0, *PsProcessType, KernelMode) == STATUS_SUCCESS);
    CHECK(ObReferenceObjectByPointer(process, 0, *PsThreadType, KernelMode) ==
          STATUS_OBJECT_TYPE_MISMATCH);
    HANDLE handle = nullptr;
    REQUIRE(ObOpenObjectByPointer(process, OBJ_KERNEL_HANDLE, nullptr, 0, *PsProcessType,
                                  KernelMode, &handle) == STATUS_SUCCESS);
    PVOID object = nullptr;
    REQUIRE(ObReferenceObjectByHandle(handle, 0, *PsProcessType, KernelMode, &object, nullptr) ==
            STATUS_SUCCESS);
    CHECK(object == process);
    CHECK(ObReferenceObjectByHandle(handle, 0, *IoFileObjectType, KernelMode, &object, nullptr) ==
          STATUS_OBJECT_TYPE_MISMATCH);
    CHECK(ObOpenObjectByPointer(process, 0, nullptr, 0, *CmKeyObjectType, KernelMode, &handle) ==
          STATUS_OBJECT_TYPE_MISMATCH);
    CHECK(handle == nullptr);
    CHECK(ObOpenObjectByPointer(process, 0, nullptr, 0, nullptr, KernelMode, nullptr) ==
          STATUS_INVALID_PARAMETER);
    ObDereferenceObject(process);
    ObDereferenceObject(process);
    // The thread object of a thread the runtime did not create.
    PETHREAD thread = PsGetCurrentThread();
    REQUIRE(thread != nullptr);
    CHECK(PsGetCurrentThread() == thread);
    CHECK(ObReferenceObjectByPointer(thread, 0, *PsThreadType, KernelMode) == STATUS_SUCCESS);
    HANDLE thread_handle = nullptr;
    REQUIRE(ObOpenObjectByPointer(thread, 0, nullptr, 0, *PsThreadType, KernelMode,
                                  &thread_handle) == STATUS_SUCCESS);
    CHECK(ZwClose(thread_handle) == STATUS_SUCCESS);
    ObDereferenceObject(thread);
}

TEST_CASE("object manager: an object the runtime never made is reported and aborts") {
    const auto result = softndk::test::run_in_child([] {
        int not_an_object = 0;
        ObReferenceObjectByPointer(&not_an_object, 0, nullptr, KernelMode);
    });
    CHECK(result.aborted());
    CHECK(result.err.find("not an object SoftNDK's object manager knows") != std::string::npos);
}

TEST_CASE("object manager: process and thread ids are the Linux ones") {
    CHECK(reinterpret_cast<ULONG_PTR>(PsGetCurrentProcessId()) == static_cast<ULONG_PTR>(getpid()));
    CHECK(reinterpret_cast<ULONG_PTR>(PsGetCurrentThreadId()) ==
          static_cast<ULONG_PTR>(syscall(SYS_gettid)));
    CHECK(reinterpret_cast<ULONG_PTR>(PsGetThreadProcessId(PsGetCurrentThread())) ==
          static_cast<ULONG_PTR>(getpid()));
    HANDLE other_id = nullptr;
    PETHREAD other_thread = nullptr;
    std::thread([&] {
        other_id = PsGetCurrentThreadId();
        other_thread = PsGetCurrentThread();
        ObReferenceObject(other_thread);  // keep it past the thread's end
    }).join();
    CHECK(other_id != PsGetCurrentThreadId());
    CHECK(other_thread != PsGetCurrentThread());
    // The ended thread's object is signalled.
    LARGE_INTEGER zero{};
    CHECK(KeWaitForSingleObject(other_thread, Executive, KernelMode, FALSE, &zero) ==
          STATUS_SUCCESS);
    ObDereferenceObject(other_thread);
    CHECK(ExGetPreviousMode() == KernelMode);
    CHECK(IoIs32bitProcess(nullptr) == FALSE);
}

namespace {
VOID notify_one(PEPROCESS, HANDLE, PPS_CREATE_NOTIFY_INFO) {}
VOID notify_two(PEPROCESS, HANDLE, PPS_CREATE_NOTIFY_INFO) {}

OB_PREOP_CALLBACK_STATUS pre_operation(PVOID, POB_PRE_OPERATION_INFORMATION) {
    return OB_PREOP_SUCCESS;
}
}  // namespace

TEST_CASE("object manager: process-notify registration is checked like Windows'") {
    CHECK(PsSetCreateProcessNotifyRoutineEx(notify_one, TRUE) == STATUS_INVALID_PARAMETER);
    REQUIRE(PsSetCreateProcessNotifyRoutineEx(notify_one, FALSE) == STATUS_SUCCESS);
    CHECK(PsSetCreateProcessNotifyRoutineEx(notify_one, FALSE) == STATUS_INVALID_PARAMETER);
    REQUIRE(PsSetCreateProcessNotifyRoutineEx(notify_two, FALSE) == STATUS_SUCCESS);
    CHECK(PsSetCreateProcessNotifyRoutineEx(notify_one, TRUE) == STATUS_SUCCESS);
    CHECK(PsSetCreateProcessNotifyRoutineEx(notify_two, TRUE) == STATUS_SUCCESS);
    CHECK(PsSetCreateProcessNotifyRoutineEx(notify_two, TRUE) == STATUS_INVALID_PARAMETER);
}

TEST_CASE("object manager: ObRegisterCallbacks validates, keeps altitudes unique, unregisters") {
    CHECK(ObGetFilterVersion() == OB_FLT_REGISTRATION_VERSION);
    OB_OPERATION_REGISTRATION operation{PsProcessType, OB_OPERATION_HANDLE_CREATE, pre_operation,
                                        nullptr};
    OB_CALLBACK_REGISTRATION registration{};
    registration.Version = OB_FLT_REGISTRATION_VERSION;
    registration.OperationRegistrationCount = 1;
    RtlInitUnicodeString(&registration.Altitude, L"321000");
    registration.OperationRegistration = &operation;
    PVOID handle = nullptr, second = nullptr;
    REQUIRE(ObRegisterCallbacks(&registration, &handle) == STATUS_SUCCESS);
    CHECK(handle != nullptr);
    CHECK(ObRegisterCallbacks(&registration, &second) == STATUS_FLT_INSTANCE_ALTITUDE_COLLISION);
    CHECK(second == nullptr);
    OB_CALLBACK_REGISTRATION bad = registration;
    bad.Version = 0x0200;
    CHECK(ObRegisterCallbacks(&bad, &second) == STATUS_INVALID_PARAMETER);
    bad = registration;
    bad.OperationRegistrationCount = 0;
    CHECK(ObRegisterCallbacks(&bad, &second) == STATUS_INVALID_PARAMETER);
    OB_OPERATION_REGISTRATION no_routine{PsThreadType, OB_OPERATION_HANDLE_CREATE, nullptr,
                                         nullptr};
    bad = registration;
    bad.OperationRegistration = &no_routine;
    CHECK(ObRegisterCallbacks(&bad, &second) == STATUS_INVALID_PARAMETER);
    ObUnRegisterCallbacks(handle);
    REQUIRE(ObRegisterCallbacks(&registration, &second) == STATUS_SUCCESS);  // altitude free again
    ObUnRegisterCallbacks(second);
}
