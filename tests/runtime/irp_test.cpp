// IRPs: allocation, IoCallDriver dispatch, IoCompleteRequest's walk up the stack locations.
#include <wdm.h>

#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "wdk_internal.hpp"

namespace {

// A two-driver stack: `upper` forwards to `lower`, which queues or completes the IRP.
struct Stack {
    DRIVER_OBJECT upper_driver{};
    DRIVER_OBJECT lower_driver{};
    DEVICE_OBJECT upper{};
    DEVICE_OBJECT lower{};
    Stack() {
        upper.DriverObject = &upper_driver;
        lower.DriverObject = &lower_driver;
        upper.StackSize = 2;
        lower.StackSize = 1;
    }
};

Stack *g_stack = nullptr;
std::vector<const char *> g_trace;
LIST_ENTRY g_pending;
bool g_queue_in_lower = false;

DRIVER_DISPATCH UpperDispatch;
DRIVER_DISPATCH LowerDispatch;
IO_COMPLETION_ROUTINE UpperCompletion;
IO_COMPLETION_ROUTINE OwnerCompletion;

// Kernel sources annotate paged routines this way; it must compile quietly in C++ too.
#pragma alloc_text(PAGE, LowerDispatch)

NTSTATUS UpperCompletion(PDEVICE_OBJECT DeviceObject, PIRP Irp, PVOID Context) {
    g_trace.push_back("upper completion");
    CHECK(DeviceObject == &g_stack->upper);  // the device of the location above
    CHECK(Context == &g_stack->upper);
    if (Irp->PendingReturned) IoMarkIrpPending(Irp);
    Irp->IoStatus.Information += 100;
    return STATUS_SUCCESS;
}

NTSTATUS UpperDispatch(PDEVICE_OBJECT DeviceObject, PIRP Irp) {
    g_trace.push_back("upper dispatch");
    CHECK(IoGetCurrentIrpStackLocation(Irp)->DeviceObject == DeviceObject);
    IoCopyCurrentIrpStackLocationToNext(Irp);
    IoSetCompletionRoutine(Irp, UpperCompletion, DeviceObject, TRUE, TRUE, TRUE);
    return IoCallDriver(&g_stack->lower, Irp);
}

NTSTATUS LowerDispatch(PDEVICE_OBJECT DeviceObject, PIRP Irp) {
    g_trace.push_back("lower dispatch");
    CHECK(DeviceObject == &g_stack->lower);
    PIO_STACK_LOCATION location = IoGetCurrentIrpStackLocation(Irp);
    CHECK(location->MajorFunction == IRP_MJ_DEVICE_CONTROL);
    CHECK(location->Parameters.DeviceIoControl.IoControlCode == 0x222004);
    if (g_queue_in_lower) {
        IoMarkIrpPending(Irp);
        InsertTailList(&g_pending, &Irp->Tail.Overlay.ListEntry);
        return STATUS_PENDING;
    }
    Irp->IoStatus.Status = STATUS_SUCCESS;
    Irp->IoStatus.Information = 5;
    IoCompleteRequest(Irp, IO_NO_INCREMENT);
    return STATUS_SUCCESS;
}

// The completion routine of the driver that allocated the IRP: takes it back.
NTSTATUS OwnerCompletion(PDEVICE_OBJECT DeviceObject, PIRP Irp, PVOID Context) {
    g_trace.push_back("owner completion");
    CHECK(DeviceObject == nullptr);  // there is no location above the top
    *static_cast<IO_STATUS_BLOCK *>(Context) = Irp->IoStatus;
    IoFreeIrp(Irp);
    return STATUS_MORE_PROCESSING_REQUIRED;
}

PIRP DeviceControlIrp(CCHAR stack_size) {
    PIRP irp = IoAllocateIrp(stack_size, FALSE);
    REQUIRE(irp != nullptr);
    PIO_STACK_LOCATION next = IoGetNextIrpStackLocation(irp);
    next->MajorFunction = IRP_MJ_DEVICE_CONTROL;
    next->Parameters.DeviceIoControl.IoControlCode = 0x222004;
    irp->IoStatus.Status = STATUS_NOT_SUPPORTED;
    return irp;
}

struct Fixture {
    Stack stack;
    Fixture() {
        g_stack = &stack;
        g_trace.clear();
        g_queue_in_lower = false;
        InitializeListHead(&g_pending);
        stack.upper_driver.MajorFunction[IRP_MJ_DEVICE_CONTROL] = UpperDispatch;
        stack.lower_driver.MajorFunction[IRP_MJ_DEVICE_CONTROL] = LowerDispatch;
    }
};

}  // namespace

TEST_CASE("irp: IoAllocateIrp lays out the stack locations after the IRP, from pool") {
    const size_t live_before = softndk::wdk::pool_live_allocations();
    PIRP irp = IoAllocateIrp(3, FALSE);
    REQUIRE(irp != nullptr);
    CHECK(irp->Type == IO_TYPE_IRP);
    CHECK(irp->Size == IoSizeOfIrp(3));
    CHECK(irp->StackCount == 3);
    CHECK(irp->CurrentLocation == 4);
    CHECK(IoGetNextIrpStackLocation(irp) == reinterpret_cast<PIO_STACK_LOCATION>(irp + 1) + 2);
    CHECK(irp->MdlAddress == nullptr);
    CHECK(irp->IoStatus.Status == STATUS_SUCCESS);
    CHECK(softndk::wdk::pool_live_allocations() == live_before + 1);
    IoReuseIrp(irp, STATUS_CANCELLED);
    CHECK(irp->IoStatus.Status == STATUS_CANCELLED);
    CHECK(irp->CurrentLocation == 4);
    IoFreeIrp(irp);
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
    CHECK(IoAllocateIrp(0, FALSE) == nullptr);
    CHECK(sizeof(IO_STACK_LOCATION) == 0x48);
    CHECK(offsetof(IRP, IoStatus) == 0x30);
    CHECK(offsetof(IRP, Tail.Overlay.ListEntry) == 0xA8);
}

TEST_CASE("irp: a synchronous request runs down the stack and completes back up") {
    Fixture fixture;
    IO_STATUS_BLOCK result{};
    PIRP irp = DeviceControlIrp(fixture.stack.upper.StackSize + 1);
    IoSetCompletionRoutine(irp, OwnerCompletion, &result, TRUE, TRUE, TRUE);
    CHECK(IoCallDriver(&fixture.stack.upper, irp) == STATUS_SUCCESS);
    CHECK(g_trace == std::vector<const char *>{"upper dispatch", "lower dispatch",
                                               "upper completion", "owner completion"});
    CHECK(result.Status == STATUS_SUCCESS);
    CHECK(result.Information == 105);
}

TEST_CASE("irp: a queued IRP completes later: PendingReturned reaches the routines above") {
    Fixture fixture;
    g_queue_in_lower = true;
    IO_STATUS_BLOCK result{};
    PIRP irp = DeviceControlIrp(fixture.stack.upper.StackSize + 1);
    IoSetCompletionRoutine(irp, OwnerCompletion, &result, TRUE, TRUE, TRUE);
    CHECK(IoCallDriver(&fixture.stack.upper, irp) == STATUS_PENDING);
    REQUIRE_FALSE(IsListEmpty(&g_pending));

    PIRP queued = CONTAINING_RECORD(RemoveHeadList(&g_pending), IRP, Tail.Overlay.ListEntry);
    CHECK(queued == irp);
    queued->IoStatus.Status = STATUS_CANCELLED;
    queued->IoStatus.Information = 1;
    IoCompleteRequest(queued, IO_NO_INCREMENT);
    CHECK(result.Status == STATUS_CANCELLED);  // InvokeOnError
    CHECK(result.Information == 101);
}

TEST_CASE("irp: completion routines run only for the outcomes they asked for") {
    Fixture fixture;
    static int calls;
    calls = 0;
    struct Routines {
        static NTSTATUS Count(PDEVICE_OBJECT, PIRP, PVOID) {
            ++calls;
            return STATUS_SUCCESS;
        }
    };
    IO_STATUS_BLOCK iosb{};
    for (const bool success : {true, false}) {
        PIRP irp = DeviceControlIrp(1);
        IoSetCompletionRoutine(irp, Routines::Count, nullptr, /*success*/ FALSE, /*error*/ TRUE,
                               FALSE);
        irp->UserIosb = &iosb;
        fixture.stack.lower_driver.MajorFunction[IRP_MJ_DEVICE_CONTROL] = nullptr;
        if (success) {
            fixture.stack.lower_driver.MajorFunction[IRP_MJ_DEVICE_CONTROL] = LowerDispatch;
        }
        IoCallDriver(&fixture.stack.lower, irp);
        // Without STATUS_MORE_PROCESSING_REQUIRED the IRP reaches the top: UserIosb is filled.
        CHECK(iosb.Status == (success ? STATUS_SUCCESS : STATUS_INVALID_DEVICE_REQUEST));
        IoFreeIrp(irp);
    }
    CHECK(calls == 1);  // only the failed request (an empty dispatch slot) invoked it
}

TEST_CASE("irp: a request reaching the top signals UserEvent") {
    Fixture fixture;
    KEVENT done;
    KeInitializeEvent(&done, NotificationEvent, FALSE);
    PIRP irp = DeviceControlIrp(1);
    irp->UserEvent = &done;
    CHECK(IoCallDriver(&fixture.stack.lower, irp) == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&done) == 1);
    CHECK(irp->IoStatus.Information == 5);
    IoFreeIrp(irp);
}

TEST_CASE("irp: misuse bug-checks - too few stack locations, completing twice, pending status") {
    Fixture fixture;
    auto child = softndk::test::run_in_child([&] {
        PIRP irp = DeviceControlIrp(1);  // the upper driver needs 2
        IoCallDriver(&fixture.stack.upper, irp);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("NO_MORE_IRP_STACK_LOCATIONS"));

    child = softndk::test::run_in_child([&] {
        PIRP irp = DeviceControlIrp(1);
        IoCallDriver(&fixture.stack.lower, irp);  // completes to the top
        IoCompleteRequest(irp, IO_NO_INCREMENT);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("MULTIPLE_IRP_COMPLETE_REQUESTS"));

    child = softndk::test::run_in_child([&] {
        PIRP irp = DeviceControlIrp(1);
        g_queue_in_lower = true;
        IoCallDriver(&fixture.stack.lower, irp);
        irp->IoStatus.Status = STATUS_PENDING;
        IoCompleteRequest(irp, IO_NO_INCREMENT);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("STATUS_PENDING"));
}

TEST_CASE("irp: IoCreateDevice links devices into the driver, IoDeleteDevice unlinks them") {
    DRIVER_OBJECT driver{};
    driver.Type = IO_TYPE_DRIVER;
    PDEVICE_OBJECT first = nullptr, second = nullptr;
    REQUIRE(IoCreateDevice(&driver, 0, nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE, &first) ==
            STATUS_SUCCESS);
    REQUIRE(IoCreateDevice(&driver, 40, nullptr, FILE_DEVICE_NETWORK, FILE_DEVICE_SECURE_OPEN,
                           FALSE, &second) == STATUS_SUCCESS);
    CHECK(first->Type == IO_TYPE_DEVICE);
    CHECK(first->DeviceExtension == nullptr);
    CHECK(first->DriverObject == &driver);
    CHECK((first->Flags & DO_DEVICE_INITIALIZING) != 0);
    CHECK(first->StackSize == 1);
    // The newest device is at the head, as on Windows.
    CHECK(driver.DeviceObject == second);
    CHECK(second->NextDevice == first);
    CHECK(second->DeviceType == FILE_DEVICE_NETWORK);
    REQUIRE(second->DeviceExtension != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(second->DeviceExtension) % 16 == 0);
    const auto *ext = static_cast<const unsigned char *>(second->DeviceExtension);
    for (int i = 0; i < 40; ++i)
        CHECK(ext[i] == 0);
    CHECK(IoCreateDevice(nullptr, 0, nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE, &first) ==
          STATUS_INVALID_PARAMETER);
    CHECK(first == nullptr);
    IoDeleteDevice(driver.DeviceObject->NextDevice);  // the first one
    CHECK(driver.DeviceObject == second);
    CHECK(second->NextDevice == nullptr);
    IoDeleteDevice(second);
    CHECK(driver.DeviceObject == nullptr);
}
