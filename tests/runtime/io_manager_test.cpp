// The I/O manager of softndk_wdm_io.h: device names and stacks, IoGetDeviceObjectPointer, the
// IRPs the I/O manager builds, cancellation, cancel-safe queues, remove locks, start-I/O
// packets, driver object extensions, the error log and per-IRP attributes.
#include <spdlog/sinks/ostream_sink.h>
#include <wdm.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "death.hpp"
#include "wdk_internal.hpp"

namespace {

using softndk::wdk::pool_live_allocations;

// ---- A test driver: records the major functions it sees; device control echoes or pends.

std::vector<UCHAR> g_majors;
std::vector<PFILE_OBJECT> g_files;
NTSTATUS g_create_status = STATUS_SUCCESS;
PIRP g_pended = nullptr;
bool g_pend = false;

NTSTATUS NTAPI complete(PIRP irp, NTSTATUS status, ULONG_PTR information) {
    irp->IoStatus.Status = status;
    irp->IoStatus.Information = information;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return status;
}

NTSTATUS NTAPI Dispatch(PDEVICE_OBJECT, PIRP irp) {
    PIO_STACK_LOCATION location = IoGetCurrentIrpStackLocation(irp);
    g_majors.push_back(location->MajorFunction);
    g_files.push_back(location->FileObject);
    switch (location->MajorFunction) {
        case IRP_MJ_CREATE:
            return complete(irp, g_create_status, 0);
        case IRP_MJ_DEVICE_CONTROL:
        case IRP_MJ_INTERNAL_DEVICE_CONTROL: {
            if (g_pend) {
                IoMarkIrpPending(irp);
                g_pended = irp;
                return STATUS_PENDING;
            }
            // Buffered: upper-case the input in place and return it (Information = its length).
            const ULONG code = location->Parameters.DeviceIoControl.IoControlCode;
            if (METHOD_FROM_CTL_CODE(code) == METHOD_BUFFERED) {
                auto *buffer = static_cast<char *>(irp->AssociatedIrp.SystemBuffer);
                const ULONG n = location->Parameters.DeviceIoControl.InputBufferLength;
                for (ULONG i = 0; i < n; ++i)
                    buffer[i] = static_cast<char>(std::toupper(buffer[i]));
                return complete(irp, code == 0x222008 ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS,
                                n);
            }
            if (METHOD_FROM_CTL_CODE(code) == METHOD_OUT_DIRECT) {
                auto *out = static_cast<char *>(MmGetSystemAddressForMdlSafe(irp->MdlAddress, 0));
                std::memcpy(out, "direct", 6);
                return complete(irp, STATUS_SUCCESS, 6);
            }
            // METHOD_NEITHER: the caller's pointers.
            std::memcpy(irp->UserBuffer, location->Parameters.DeviceIoControl.Type3InputBuffer, 4);
            return complete(irp, STATUS_SUCCESS, 4);
        }
        case IRP_MJ_READ: {
            const ULONG length = location->Parameters.Read.Length;
            auto *buffer =
                irp->MdlAddress != nullptr
                    ? static_cast<char *>(MmGetSystemAddressForMdlSafe(irp->MdlAddress, 0))
                    : static_cast<char *>(irp->AssociatedIrp.SystemBuffer);
            std::memset(buffer, 'r', length);
            buffer[0] = static_cast<char>('0' + location->Parameters.Read.ByteOffset.QuadPart);
            return complete(irp, STATUS_SUCCESS, length);
        }
        case IRP_MJ_WRITE: {
            auto *buffer =
                irp->MdlAddress != nullptr
                    ? static_cast<char *>(MmGetSystemAddressForMdlSafe(irp->MdlAddress, 0))
                    : static_cast<char *>(irp->AssociatedIrp.SystemBuffer);
            return complete(irp, buffer[0] == 'w' ? STATUS_SUCCESS : STATUS_DATA_ERROR,
                            location->Parameters.Write.Length);
        }
        default:
            return complete(irp, STATUS_SUCCESS, 0);
    }
}

struct Driver {
    DRIVER_OBJECT object{};
    Driver() {
        object.Type = IO_TYPE_DRIVER;
        for (auto &slot : object.MajorFunction)
            slot = Dispatch;
        g_majors.clear();
        g_files.clear();
        g_create_status = STATUS_SUCCESS;
        g_pend = false;
        g_pended = nullptr;
    }
};

PDEVICE_OBJECT create_device(Driver &driver, const wchar_t *name, ULONG flags = 0) {
    UNICODE_STRING string;
    if (name != nullptr) RtlInitUnicodeString(&string, name);
    PDEVICE_OBJECT device = nullptr;
    REQUIRE(IoCreateDevice(&driver.object, 0, name != nullptr ? &string : nullptr,
                           FILE_DEVICE_UNKNOWN, 0, FALSE, &device) == STATUS_SUCCESS);
    device->Flags |= flags;
    device->Flags &= ~DO_DEVICE_INITIALIZING;
    return device;
}

// Routes the "wdk" logger into a string while alive.
class CapturedLog {
  public:
    CapturedLog() : log_(softndk::wdk::logger()), saved_(log_.sinks()), level_(log_.level()) {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
        sink->set_pattern("%l|%v");
        log_.sinks() = {sink};
        log_.set_level(spdlog::level::trace);
    }
    ~CapturedLog() {
        log_.sinks() = saved_;
        log_.set_level(level_);
    }
    std::string text() const { return stream_.str(); }

  private:
    std::ostringstream stream_;
    spdlog::logger &log_;
    std::vector<spdlog::sink_ptr> saved_;
    spdlog::level::level_enum level_;
};

}  // namespace

// ---- Names, stacks, references.

TEST_CASE(
    "io manager: device names are unique, resolve case-insensitively and go with the device") {
    Driver driver;
    PDEVICE_OBJECT device = create_device(driver, L"\\Device\\SoftNdkIoTest");
    UNICODE_STRING same;
    RtlInitUnicodeString(&same, L"\\DEVICE\\softndkiotest");
    PDEVICE_OBJECT twin = nullptr;
    CHECK(IoCreateDevice(&driver.object, 0, &same, FILE_DEVICE_UNKNOWN, 0, FALSE, &twin) ==
          STATUS_OBJECT_NAME_COLLISION);
    CHECK(twin == nullptr);
    UNICODE_STRING relative;
    RtlInitUnicodeString(&relative, L"NoBackslash");
    CHECK(IoCreateDevice(&driver.object, 0, &relative, FILE_DEVICE_UNKNOWN, 0, FALSE, &twin) ==
          STATUS_OBJECT_NAME_INVALID);

    PFILE_OBJECT file = nullptr;
    PDEVICE_OBJECT found = nullptr;
    REQUIRE(IoGetDeviceObjectPointer(&same, FILE_READ_DATA, &file, &found) == STATUS_SUCCESS);
    CHECK(found == device);
    CHECK(file->Type == IO_TYPE_FILE);
    CHECK(file->DeviceObject == device);
    CHECK(file->ReadAccess);
    CHECK_FALSE(file->WriteAccess);
    CHECK(g_majors == std::vector<UCHAR>{IRP_MJ_CREATE});
    CHECK(g_files == std::vector<PFILE_OBJECT>{file});
    ObDereferenceObject(file);
    CHECK(g_majors == std::vector<UCHAR>{IRP_MJ_CREATE, IRP_MJ_CLEANUP, IRP_MJ_CLOSE});
    CHECK(g_files.back() == file);

    IoDeleteDevice(device);
    CHECK(IoGetDeviceObjectPointer(&same, FILE_READ_DATA, &file, &found) ==
          STATUS_OBJECT_NAME_NOT_FOUND);
    // The name is free again.
    PDEVICE_OBJECT again = create_device(driver, L"\\Device\\SoftNdkIoTest");
    IoDeleteDevice(again);
}

TEST_CASE("io manager: IoGetDeviceObjectPointer returns a failed create and frees everything") {
    const std::size_t live = pool_live_allocations();
    Driver driver;
    PDEVICE_OBJECT device = create_device(driver, L"\\Device\\SoftNdkRefuses");
    g_create_status = STATUS_ACCESS_DENIED;
    UNICODE_STRING name;
    RtlInitUnicodeString(&name, L"\\Device\\SoftNdkRefuses");
    PFILE_OBJECT file = nullptr;
    PDEVICE_OBJECT found = nullptr;
    CHECK(IoGetDeviceObjectPointer(&name, GENERIC_ALL, &file, &found) == STATUS_ACCESS_DENIED);
    CHECK(g_majors == std::vector<UCHAR>{IRP_MJ_CREATE});  // no close for a failed open
    IoDeleteDevice(device);
    CHECK(pool_live_allocations() == live);
}

TEST_CASE("io manager: attaching builds a stack, and opens and references reach its top") {
    const std::size_t live = pool_live_allocations();
    Driver driver;
    PDEVICE_OBJECT bottom = create_device(driver, L"\\Device\\SoftNdkBottom");
    PDEVICE_OBJECT middle = create_device(driver, nullptr);
    PDEVICE_OBJECT top = create_device(driver, nullptr);
    CHECK(IoAttachDeviceToDeviceStack(middle, bottom) == bottom);
    CHECK(middle->StackSize == 2);
    CHECK(IoAttachDeviceToDeviceStack(top, bottom) == middle);  // goes on the current top
    CHECK(top->StackSize == 3);
    CHECK(bottom->AttachedDevice == middle);
    CHECK(middle->AttachedDevice == top);
    CHECK(IoAttachDeviceToDeviceStack(top, nullptr) == nullptr);

    PDEVICE_OBJECT referenced = IoGetAttachedDeviceReference(bottom);
    CHECK(referenced == top);
    CHECK(ObReferenceObject(bottom) == 1);  // device objects take Ob references too
    CHECK(ObDereferenceObject(bottom) == 0);
    UNICODE_STRING name;
    RtlInitUnicodeString(&name, L"\\Device\\SoftNdkBottom");
    PFILE_OBJECT file = nullptr;
    PDEVICE_OBJECT found = nullptr;
    REQUIRE(IoGetDeviceObjectPointer(&name, FILE_ALL_ACCESS, &file, &found) == STATUS_SUCCESS);
    CHECK(found == top);                  // the device to send IRPs to
    CHECK(file->DeviceObject == bottom);  // the device that was opened
    ObDereferenceObject(file);

    // Deleting a referenced device defers the free to the last dereference.
    IoDetachDevice(middle);
    CHECK(middle->AttachedDevice == nullptr);
    IoDeleteDevice(top);
    CHECK(pool_live_allocations() > live);
    ObDereferenceObject(referenced);
    IoDetachDevice(bottom);
    IoDeleteDevice(middle);
    IoDeleteDevice(bottom);
    CHECK(pool_live_allocations() == live);
}

// ---- Built IRPs.

TEST_CASE(
    "io manager: IoBuildDeviceIoControlRequest buffered - copies in and out, signals, frees") {
    const std::size_t live = pool_live_allocations();
    Driver driver;
    PDEVICE_OBJECT device = create_device(driver, nullptr);
    char input[] = "hello";
    char output[16] = {};
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    IO_STATUS_BLOCK status{};
    const ULONG code = CTL_CODE(FILE_DEVICE_UNKNOWN, 0x801, METHOD_BUFFERED, FILE_ANY_ACCESS);
    PIRP irp = IoBuildDeviceIoControlRequest(code, device, input, 5, output, sizeof(output), FALSE,
                                             &event, &status);
    REQUIRE(irp != nullptr);
    PIO_STACK_LOCATION next = IoGetNextIrpStackLocation(irp);
    CHECK(next->MajorFunction == IRP_MJ_DEVICE_CONTROL);
    CHECK(next->Parameters.DeviceIoControl.IoControlCode == code);
    CHECK(next->Parameters.DeviceIoControl.InputBufferLength == 5);
    CHECK(next->Parameters.DeviceIoControl.OutputBufferLength == sizeof(output));
    CHECK((irp->Flags & (IRP_BUFFERED_IO | IRP_DEALLOCATE_BUFFER | IRP_INPUT_OPERATION)) ==
          (IRP_BUFFERED_IO | IRP_DEALLOCATE_BUFFER | IRP_INPUT_OPERATION));
    CHECK(irp->AssociatedIrp.SystemBuffer != input);
    CHECK(IoCallDriver(device, irp) == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&event) == 1);
    CHECK(status.Status == STATUS_SUCCESS);
    CHECK(status.Information == 5);
    CHECK(std::string(output) == "HELLO");
    CHECK(std::string(input) == "hello");

    // An error status copies nothing back.
    KeClearEvent(&event);
    std::memset(output, 0, sizeof(output));
    irp = IoBuildDeviceIoControlRequest(CTL_CODE(FILE_DEVICE_UNKNOWN, 0x802, METHOD_BUFFERED, 0),
                                        device, input, 5, output, sizeof(output), TRUE, &event,
                                        &status);
    CHECK(IoGetNextIrpStackLocation(irp)->MajorFunction == IRP_MJ_INTERNAL_DEVICE_CONTROL);
    CHECK(IoCallDriver(device, irp) == STATUS_INVALID_PARAMETER);
    CHECK(status.Status == STATUS_INVALID_PARAMETER);
    CHECK(output[0] == '\0');
    IoDeleteDevice(device);
    CHECK(pool_live_allocations() == live);  // IRPs and system buffers were freed
}

TEST_CASE("io manager: a pended built IRP completes later on another thread and wakes the caller") {
    const std::size_t live = pool_live_allocations();
    Driver driver;
    PDEVICE_OBJECT device = create_device(driver, nullptr);
    g_pend = true;
    char output[8] = {};
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    IO_STATUS_BLOCK status{};
    PIRP irp =
        IoBuildDeviceIoControlRequest(CTL_CODE(FILE_DEVICE_UNKNOWN, 1, METHOD_BUFFERED, 0), device,
                                      nullptr, 0, output, sizeof(output), FALSE, &event, &status);
    REQUIRE(IoCallDriver(device, irp) == STATUS_PENDING);
    std::thread completer([] {
        std::memcpy(g_pended->AssociatedIrp.SystemBuffer, "later", 6);
        complete(g_pended, STATUS_SUCCESS, 6);
    });
    CHECK(KeWaitForSingleObject(&event, Executive, KernelMode, FALSE, nullptr) == STATUS_SUCCESS);
    completer.join();
    CHECK(status.Information == 6);
    CHECK(std::string(output) == "later");
    IoDeleteDevice(device);
    CHECK(pool_live_allocations() == live);
}

TEST_CASE("io manager: direct and neither methods pass an MDL or the caller's pointers") {
    const std::size_t live = pool_live_allocations();
    Driver driver;
    PDEVICE_OBJECT device = create_device(driver, nullptr);
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    IO_STATUS_BLOCK status{};
    char output[16] = {};
    PIRP irp = IoBuildDeviceIoControlRequest(CTL_CODE(FILE_DEVICE_UNKNOWN, 3, METHOD_OUT_DIRECT, 0),
                                             device, nullptr, 0, output, sizeof(output), FALSE,
                                             &event, &status);
    REQUIRE(irp->MdlAddress != nullptr);
    CHECK(MmGetMdlVirtualAddress(irp->MdlAddress) == output);
    CHECK((irp->MdlAddress->MdlFlags & MDL_PAGES_LOCKED) != 0);
    CHECK(IoCallDriver(device, irp) == STATUS_SUCCESS);
    CHECK(std::string(output) == "direct");

    char in[4] = {'a', 'b', 'c', 'd'};
    char out[4] = {};
    irp = IoBuildDeviceIoControlRequest(CTL_CODE(FILE_DEVICE_UNKNOWN, 4, METHOD_NEITHER, 0), device,
                                        in, 4, out, 4, FALSE, &event, &status);
    CHECK(irp->UserBuffer == out);
    CHECK(IoGetNextIrpStackLocation(irp)->Parameters.DeviceIoControl.Type3InputBuffer == in);
    CHECK(IoCallDriver(device, irp) == STATUS_SUCCESS);
    CHECK(std::memcmp(out, "abcd", 4) == 0);
    IoDeleteDevice(device);
    CHECK(pool_live_allocations() == live);
}

TEST_CASE("io manager: IoBuildSynchronousFsdRequest reads buffered and writes direct") {
    const std::size_t live = pool_live_allocations();
    Driver driver;
    PDEVICE_OBJECT buffered = create_device(driver, nullptr, DO_BUFFERED_IO);
    PDEVICE_OBJECT direct = create_device(driver, nullptr, DO_DIRECT_IO);
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    IO_STATUS_BLOCK status{};
    char data[8] = {};
    LARGE_INTEGER offset;
    offset.QuadPart = 3;
    PIRP irp =
        IoBuildSynchronousFsdRequest(IRP_MJ_READ, buffered, data, 4, &offset, &event, &status);
    REQUIRE(irp != nullptr);
    CHECK(IoGetNextIrpStackLocation(irp)->Parameters.Read.Length == 4);
    CHECK(IoGetNextIrpStackLocation(irp)->Parameters.Read.ByteOffset.QuadPart == 3);
    CHECK(IoCallDriver(buffered, irp) == STATUS_SUCCESS);
    CHECK(std::string(data) == "3rrr");
    CHECK(status.Information == 4);

    char payload[] = "wxyz";
    KeClearEvent(&event);
    irp = IoBuildSynchronousFsdRequest(IRP_MJ_WRITE, direct, payload, 4, nullptr, &event, &status);
    REQUIRE(irp->MdlAddress != nullptr);
    CHECK(IoCallDriver(direct, irp) == STATUS_SUCCESS);
    CHECK(KeReadStateEvent(&event) == 1);

    irp = IoBuildSynchronousFsdRequest(IRP_MJ_FLUSH_BUFFERS, direct, nullptr, 0, nullptr, &event,
                                       &status);
    CHECK(IoCallDriver(direct, irp) == STATUS_SUCCESS);
    CHECK(g_majors.back() == IRP_MJ_FLUSH_BUFFERS);
    IoDeleteDevice(buffered);
    IoDeleteDevice(direct);
    CHECK(pool_live_allocations() == live);
}

// ---- Cancellation.

namespace {
int g_cancel_calls = 0;
KIRQL g_irql_in_cancel = PASSIVE_LEVEL;
VOID NTAPI CancelRoutine(PDEVICE_OBJECT, PIRP irp) {
    ++g_cancel_calls;
    g_irql_in_cancel = KeGetCurrentIrql();
    CHECK(irp->Cancel);
    CHECK(irp->CancelRoutine == nullptr);
    IoReleaseCancelSpinLock(irp->CancelIrql);
}
}  // namespace

TEST_CASE("io manager: IoCancelIrp calls the cancel routine once, under the cancel spin lock") {
    PIRP irp = IoAllocateIrp(1, FALSE);
    g_cancel_calls = 0;
    CHECK(IoSetCancelRoutine(irp, CancelRoutine) == nullptr);
    CHECK(IoCancelIrp(irp));
    CHECK(g_cancel_calls == 1);
    CHECK(g_irql_in_cancel == DISPATCH_LEVEL);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
    CHECK_FALSE(IoCancelIrp(irp));  // no routine any more
    CHECK(g_cancel_calls == 1);
    IoFreeIrp(irp);

    irp = IoAllocateIrp(1, FALSE);
    CHECK(IoSetCancelRoutine(irp, CancelRoutine) == nullptr);
    CHECK(IoSetCancelRoutine(irp, nullptr) == CancelRoutine);
    CHECK_FALSE(IoCancelIrp(irp));
    CHECK(irp->Cancel);
    IoFreeIrp(irp);

    KIRQL irql;
    IoAcquireCancelSpinLock(&irql);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    IoReleaseCancelSpinLock(irql);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
}

TEST_CASE("io manager: completing an IRP that still has a cancel routine bug-checks") {
    Driver driver;
    auto child = softndk::test::run_in_child([&] {
        DEVICE_OBJECT device{};
        device.DriverObject = &driver.object;
        device.StackSize = 1;
        g_pend = true;
        PIRP irp = IoAllocateIrp(1, FALSE);
        IoGetNextIrpStackLocation(irp)->MajorFunction = IRP_MJ_DEVICE_CONTROL;
        IoCallDriver(&device, irp);
        IoSetCancelRoutine(irp, CancelRoutine);
        complete(irp, STATUS_SUCCESS, 0);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("CANCEL_STATE_IN_COMPLETED_IRP"));
}

// ---- Cancel-safe queues.

namespace {
struct Queue {
    IO_CSQ csq;
    KSPIN_LOCK lock = 0;
    LIST_ENTRY irps;
    std::vector<PIRP> cancelled;
    NTSTATUS insert_status = STATUS_SUCCESS;
};

Queue *queue_of(PIO_CSQ csq) {
    return CONTAINING_RECORD(csq, Queue, csq);
}

VOID NTAPI CsqInsert(PIO_CSQ csq, PIRP irp) {
    InsertTailList(&queue_of(csq)->irps, &irp->Tail.Overlay.ListEntry);
}
NTSTATUS NTAPI CsqInsertEx(PIO_CSQ csq, PIRP irp, PVOID context) {
    CHECK(context == &queue_of(csq)->insert_status);
    if (!NT_SUCCESS(queue_of(csq)->insert_status)) return queue_of(csq)->insert_status;
    CsqInsert(csq, irp);
    return STATUS_SUCCESS;
}
VOID NTAPI CsqRemove(PIO_CSQ, PIRP irp) {
    RemoveEntryList(&irp->Tail.Overlay.ListEntry);
}
PIRP NTAPI CsqPeek(PIO_CSQ csq, PIRP irp, PVOID peek_context) {
    Queue *queue = queue_of(csq);
    PLIST_ENTRY entry = irp == nullptr ? queue->irps.Flink : irp->Tail.Overlay.ListEntry.Flink;
    for (; entry != &queue->irps; entry = entry->Flink) {
        PIRP candidate = CONTAINING_RECORD(entry, IRP, Tail.Overlay.ListEntry);
        // The peek context selects IRPs by their first driver context slot.
        if (peek_context == nullptr || candidate->Tail.Overlay.DriverContext[0] == peek_context)
            return candidate;
    }
    return nullptr;
}
VOID NTAPI CsqAcquire(PIO_CSQ csq, PKIRQL irql) {
    KeAcquireSpinLock(&queue_of(csq)->lock, irql);
}
VOID NTAPI CsqRelease(PIO_CSQ csq, KIRQL irql) {
    KeReleaseSpinLock(&queue_of(csq)->lock, irql);
}
VOID NTAPI CsqCompleteCanceled(PIO_CSQ csq, PIRP irp) {
    queue_of(csq)->cancelled.push_back(irp);
}

// An IRP that looks as if a driver owns it (sent to a device), so IoMarkIrpPending has a
// current location.
PIRP owned_irp() {
    PIRP irp = IoAllocateIrp(1, FALSE);
    IoSetNextIrpStackLocation(irp);
    return irp;
}
}  // namespace

TEST_CASE("io manager: cancel-safe queue - insert, remove next, remove by context, cancel") {
    Queue queue;
    InitializeListHead(&queue.irps);
    REQUIRE(IoCsqInitialize(&queue.csq, CsqInsert, CsqRemove, CsqPeek, CsqAcquire, CsqRelease,
                            CsqCompleteCanceled) == STATUS_SUCCESS);
    PIRP a = owned_irp();
    PIRP b = owned_irp();
    PIRP c = owned_irp();
    int marker = 0;
    b->Tail.Overlay.DriverContext[0] = &marker;
    IO_CSQ_IRP_CONTEXT context_c;
    IoCsqInsertIrp(&queue.csq, a, nullptr);
    IoCsqInsertIrp(&queue.csq, b, nullptr);
    IoCsqInsertIrp(&queue.csq, c, &context_c);
    CHECK((IoGetCurrentIrpStackLocation(a)->Control & SL_PENDING_RETURNED) != 0);
    CHECK(a->CancelRoutine != nullptr);
    CHECK(context_c.Irp == c);

    CHECK(IoCsqRemoveNextIrp(&queue.csq, &marker) == b);  // the peek context selects
    CHECK(b->CancelRoutine == nullptr);

    // Cancelling a queued IRP hands it to CsqCompleteCanceledIrp and empties its context.
    CHECK(IoCancelIrp(c));
    CHECK(queue.cancelled == std::vector<PIRP>{c});
    CHECK(context_c.Irp == nullptr);
    CHECK(IoCsqRemoveIrp(&queue.csq, &context_c) == nullptr);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);

    CHECK(IoCsqRemoveNextIrp(&queue.csq, nullptr) == a);
    CHECK(IoCsqRemoveNextIrp(&queue.csq, nullptr) == nullptr);
    CHECK(IsListEmpty(&queue.irps));
    for (PIRP irp : {a, b, c})
        IoFreeIrp(irp);
}

TEST_CASE(
    "io manager: cancel-safe queue - an IRP cancelled before insertion is handed over at once") {
    Queue queue;
    InitializeListHead(&queue.irps);
    IoCsqInitialize(&queue.csq, CsqInsert, CsqRemove, CsqPeek, CsqAcquire, CsqRelease,
                    CsqCompleteCanceled);
    PIRP irp = owned_irp();
    CHECK_FALSE(IoCancelIrp(irp));  // no cancel routine yet: only marks it
    IO_CSQ_IRP_CONTEXT context;
    IoCsqInsertIrp(&queue.csq, irp, &context);
    CHECK(queue.cancelled == std::vector<PIRP>{irp});
    CHECK(IsListEmpty(&queue.irps));
    CHECK(IoCsqRemoveIrp(&queue.csq, &context) == nullptr);
    CHECK(irp->CancelRoutine == nullptr);
    IoFreeIrp(irp);
}

TEST_CASE(
    "io manager: cancel-safe queue Ex - the insert routine's failure leaves the IRP unqueued") {
    Queue queue;
    InitializeListHead(&queue.irps);
    REQUIRE(IoCsqInitializeEx(&queue.csq, CsqInsertEx, CsqRemove, CsqPeek, CsqAcquire, CsqRelease,
                              CsqCompleteCanceled) == STATUS_SUCCESS);
    CHECK(queue.csq.Type == IO_TYPE_CSQ_EX);
    PIRP irp = owned_irp();
    queue.insert_status = STATUS_DEVICE_NOT_READY;
    IO_CSQ_IRP_CONTEXT context;
    CHECK(IoCsqInsertIrpEx(&queue.csq, irp, &context, &queue.insert_status) ==
          STATUS_DEVICE_NOT_READY);
    CHECK(irp->CancelRoutine == nullptr);
    CHECK(IsListEmpty(&queue.irps));
    queue.insert_status = STATUS_SUCCESS;
    CHECK(IoCsqInsertIrpEx(&queue.csq, irp, &context, &queue.insert_status) == STATUS_SUCCESS);
    CHECK(IoCsqRemoveIrp(&queue.csq, &context) == irp);
    CHECK(IoCsqRemoveIrp(&queue.csq, &context) == nullptr);
    IoFreeIrp(irp);
}

namespace {
// A driver whose device-control IRPs wait in a cancel-safe queue; a cancelled one completes
// with STATUS_CANCELLED.
Queue *g_driver_queue = nullptr;
VOID NTAPI CsqCompleteWithCancelled(PIO_CSQ, PIRP irp) {
    complete(irp, STATUS_CANCELLED, 0);
}
NTSTATUS NTAPI QueueingDispatch(PDEVICE_OBJECT, PIRP irp) {
    IoCsqInsertIrp(&g_driver_queue->csq, irp, nullptr);
    return STATUS_PENDING;
}
}  // namespace

TEST_CASE("io manager: cancelling a built IRP queued in a driver's cancel-safe queue") {
    const std::size_t live = pool_live_allocations();
    Queue queue;
    InitializeListHead(&queue.irps);
    IoCsqInitialize(&queue.csq, CsqInsert, CsqRemove, CsqPeek, CsqAcquire, CsqRelease,
                    CsqCompleteWithCancelled);
    g_driver_queue = &queue;
    Driver driver;
    driver.object.MajorFunction[IRP_MJ_DEVICE_CONTROL] = QueueingDispatch;
    PDEVICE_OBJECT device = create_device(driver, nullptr);
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    IO_STATUS_BLOCK status{};
    char output[4] = {'x', 0, 0, 0};
    PIRP irp =
        IoBuildDeviceIoControlRequest(CTL_CODE(FILE_DEVICE_UNKNOWN, 9, METHOD_BUFFERED, 0), device,
                                      nullptr, 0, output, sizeof(output), FALSE, &event, &status);
    REQUIRE(IoCallDriver(device, irp) == STATUS_PENDING);
    CHECK(KeReadStateEvent(&event) == 0);
    CHECK(IoCancelIrp(irp));  // the queue's cancel routine completes it; the IRP is freed
    CHECK(KeReadStateEvent(&event) == 1);
    CHECK(status.Status == STATUS_CANCELLED);
    CHECK(output[0] == 'x');  // an error copies nothing back
    CHECK(IsListEmpty(&queue.irps));
    IoDeleteDevice(device);
    CHECK(pool_live_allocations() == live);
}

TEST_CASE(
    "io manager: IoBuildAsynchronousFsdRequest IRPs stay with the caller's completion routine") {
    const std::size_t live = pool_live_allocations();
    Driver driver;
    PDEVICE_OBJECT device = create_device(driver, nullptr, DO_BUFFERED_IO);
    char data[4] = {};
    IO_STATUS_BLOCK status{};
    PIRP irp = IoBuildAsynchronousFsdRequest(IRP_MJ_READ, device, data, 4, nullptr, &status);
    REQUIRE(irp != nullptr);
    CHECK(irp->UserEvent == nullptr);
    IO_STATUS_BLOCK seen{};
    IoSetCompletionRoutine(
        irp,
        [](PDEVICE_OBJECT, PIRP done, PVOID context) -> NTSTATUS {
            *static_cast<IO_STATUS_BLOCK *>(context) = done->IoStatus;
            IoFreeIrp(done);  // and its system buffer
            return STATUS_MORE_PROCESSING_REQUIRED;
        },
        &seen, TRUE, TRUE, TRUE);
    CHECK(IoCallDriver(device, irp) == STATUS_SUCCESS);
    CHECK(seen.Information == 4);
    IoDeleteDevice(device);
    CHECK(pool_live_allocations() == live);
}

// ---- Remove locks.

TEST_CASE("io manager: remove lock - acquire and release, then ReleaseAndWait waits for holders") {
    IO_REMOVE_LOCK lock;
    IoInitializeRemoveLock(&lock, 0x74736554, 0, 0);
    CHECK(lock.Common.IoCount == 1);
    REQUIRE(IoAcquireRemoveLock(&lock, nullptr) == STATUS_SUCCESS);
    REQUIRE(IoAcquireRemoveLock(&lock, &lock) == STATUS_SUCCESS);  // another holder
    std::atomic<bool> released{false};
    std::thread holder([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        released = true;
        IoReleaseRemoveLock(&lock, &lock);
    });
    IoReleaseRemoveLockAndWait(&lock, nullptr);  // our acquisition
    CHECK(released);
    holder.join();
    CHECK(lock.Common.Removed);
    CHECK(lock.Common.IoCount == 0);
    CHECK(IoAcquireRemoveLock(&lock, nullptr) == STATUS_DELETE_PENDING);
    CHECK(lock.Common.IoCount == 0);
}

TEST_CASE("io manager: remove lock misuse - waiting without holding it, releasing too often") {
    auto child = softndk::test::run_in_child([] {
        IO_REMOVE_LOCK lock;
        IoInitializeRemoveLock(&lock, 0, 0, 0);
        IoReleaseRemoveLockAndWait(&lock, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("does not hold the lock"));
    child = softndk::test::run_in_child([] {
        IO_REMOVE_LOCK lock;
        IoInitializeRemoveLock(&lock, 0, 0, 0);
        IoReleaseRemoveLock(&lock, nullptr);
        IoReleaseRemoveLock(&lock, nullptr);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("released more often than acquired"));
}

// ---- Start-I/O.

namespace {
std::vector<PIRP> g_started;
int g_start_depth = 0;
int g_max_start_depth = 0;
bool g_start_next_inside = false;

VOID NTAPI StartIo(PDEVICE_OBJECT device, PIRP irp) {
    ++g_start_depth;
    g_max_start_depth = std::max(g_max_start_depth, g_start_depth);
    CHECK(device->CurrentIrp == irp);
    CHECK(KeGetCurrentIrql() == DISPATCH_LEVEL);
    g_started.push_back(irp);
    if (g_start_next_inside) IoStartNextPacket(device, FALSE);
    --g_start_depth;
}

VOID NTAPI StartIoCancel(PDEVICE_OBJECT device, PIRP irp) {
    ++g_cancel_calls;
    CHECK(irp != device->CurrentIrp);
    IoReleaseCancelSpinLock(irp->CancelIrql);
}

struct StartIoDevice {
    Driver driver;
    PDEVICE_OBJECT device;
    StartIoDevice() {
        driver.object.DriverStartIo = StartIo;
        device = create_device(driver, nullptr);
        g_started.clear();
        g_start_depth = g_max_start_depth = 0;
        g_start_next_inside = false;
        g_cancel_calls = 0;
    }
    ~StartIoDevice() { IoDeleteDevice(device); }
    void start(PIRP irp, ULONG *key = nullptr, PDRIVER_CANCEL cancel = nullptr) {
        KIRQL irql;
        KeRaiseIrql(DISPATCH_LEVEL, &irql);
        IoStartPacket(device, irp, key, cancel);
        KeLowerIrql(irql);
    }
    // An IRP as the driver's dispatch routine holds it: its current location is this device's.
    PIRP irp() const {
        PIRP irp = IoAllocateIrp(1, FALSE);
        IoSetNextIrpStackLocation(irp);
        IoGetCurrentIrpStackLocation(irp)->DeviceObject = device;
        return irp;
    }
    void next() {
        KIRQL irql;
        KeRaiseIrql(DISPATCH_LEVEL, &irql);
        IoStartNextPacket(device, TRUE);
        KeLowerIrql(irql);
    }
};
}  // namespace

TEST_CASE("io manager: start-I/O packets run one at a time, queued by key") {
    StartIoDevice fixture;
    PIRP irps[4];
    for (auto &irp : irps)
        irp = IoAllocateIrp(1, FALSE);
    fixture.start(irps[0]);
    CHECK(g_started == std::vector<PIRP>{irps[0]});
    ULONG key_high = 9;
    ULONG key_low = 2;
    fixture.start(irps[1], &key_high);
    fixture.start(irps[2], &key_low);
    fixture.start(irps[3], &key_high);  // after the other 9
    CHECK(g_started.size() == 1);       // the device is busy
    fixture.next();
    fixture.next();
    fixture.next();
    CHECK(g_started == std::vector<PIRP>{irps[0], irps[2], irps[1], irps[3]});
    fixture.next();
    CHECK(fixture.device->CurrentIrp == nullptr);  // idle
    fixture.start(irps[0]);
    CHECK(g_started.size() == 5);  // an idle device starts at once
    fixture.next();
    for (auto &irp : irps)
        IoFreeIrp(irp);
}

TEST_CASE("io manager: IoStartNextPacketByKey takes the first packet with a key at or above") {
    StartIoDevice fixture;
    PIRP irps[3];
    for (auto &irp : irps)
        irp = IoAllocateIrp(1, FALSE);
    ULONG keys[3] = {0, 5, 10};
    for (int i = 0; i < 3; ++i)
        fixture.start(irps[i], &keys[i]);
    KIRQL irql;
    KeRaiseIrql(DISPATCH_LEVEL, &irql);
    IoStartNextPacketByKey(fixture.device, FALSE, 7);
    CHECK(g_started.back() == irps[2]);
    IoStartNextPacketByKey(fixture.device, FALSE, 50);  // none that high: the first
    CHECK(g_started.back() == irps[1]);
    IoStartNextPacket(fixture.device, FALSE);
    KeLowerIrql(irql);
    for (auto &irp : irps)
        IoFreeIrp(irp);
}

TEST_CASE("io manager: deferred start-I/O does not recurse and non-cancelable clears the routine") {
    StartIoDevice fixture;
    IoSetStartIoAttributes(fixture.device, TRUE, TRUE);
    PIRP irps[3];
    for (auto &irp : irps)
        irp = IoAllocateIrp(1, FALSE);
    fixture.start(irps[0]);
    fixture.start(irps[1], nullptr, StartIoCancel);
    fixture.start(irps[2]);
    CHECK(irps[1]->CancelRoutine == StartIoCancel);  // cancelable while queued
    g_start_next_inside = true;                      // each StartIo finishes its packet at once
    fixture.next();
    CHECK(g_started == std::vector<PIRP>{irps[0], irps[1], irps[2]});
    CHECK(g_max_start_depth == 1);
    CHECK(irps[1]->CancelRoutine == nullptr);  // NonCancelable
    CHECK(fixture.device->CurrentIrp == nullptr);
    for (auto &irp : irps)
        IoFreeIrp(irp);
}

TEST_CASE("io manager: a queued start-I/O packet can be cancelled and removed") {
    StartIoDevice fixture;
    PIRP busy = fixture.irp();
    PIRP queued = fixture.irp();
    fixture.start(busy);
    fixture.start(queued, nullptr, StartIoCancel);
    CHECK(IoCancelIrp(queued));
    CHECK(g_cancel_calls == 1);
    CHECK(IoRemoveStartIoPacket(fixture.device, queued));
    CHECK_FALSE(IoRemoveStartIoPacket(fixture.device, queued));
    fixture.next();
    CHECK(g_started == std::vector<PIRP>{busy});

    // Already cancelled when it reaches the queue: straight to the cancel routine.
    PIRP cancelled = fixture.irp();
    fixture.start(busy);
    cancelled->Cancel = TRUE;
    fixture.start(cancelled, nullptr, StartIoCancel);
    CHECK(g_cancel_calls == 2);
    CHECK_FALSE(IoRemoveStartIoPacket(fixture.device, cancelled));
    fixture.next();
    for (PIRP irp : {busy, queued, cancelled})
        IoFreeIrp(irp);
}

// ---- Driver object extensions, error log, attributes, helpers.

TEST_CASE("io manager: driver object extensions are zeroed, per key, and unique") {
    Driver driver;
    static int key_a;
    static int key_b;
    PVOID a = nullptr;
    REQUIRE(IoAllocateDriverObjectExtension(&driver.object, &key_a, 64, &a) == STATUS_SUCCESS);
    REQUIRE(a != nullptr);
    CHECK(std::all_of(static_cast<char *>(a), static_cast<char *>(a) + 64,
                      [](char c) { return c == 0; }));
    CHECK(IoGetDriverObjectExtension(&driver.object, &key_a) == a);
    CHECK(IoGetDriverObjectExtension(&driver.object, &key_b) == nullptr);
    PVOID again = &again;
    CHECK(IoAllocateDriverObjectExtension(&driver.object, &key_a, 8, &again) ==
          STATUS_OBJECT_NAME_COLLISION);
    CHECK(again == nullptr);
    DRIVER_OBJECT other{};
    CHECK(IoGetDriverObjectExtension(&other, &key_a) == nullptr);
}

TEST_CASE("io manager: error log entries are sized, zeroed and written to the wdk logger") {
    const std::size_t live = pool_live_allocations();
    Driver driver;
    static WCHAR name[] = L"\\Driver\\softndk_io_test";
    RtlInitUnicodeString(&driver.object.DriverName, name);
    PDEVICE_OBJECT device = create_device(driver, nullptr);
    CHECK(IoAllocateErrorLogEntry(nullptr, sizeof(IO_ERROR_LOG_PACKET)) == nullptr);
    CHECK(IoAllocateErrorLogEntry(device, sizeof(IO_ERROR_LOG_PACKET) - 1) == nullptr);
    CHECK(IoAllocateErrorLogEntry(device, ERROR_LOG_MAXIMUM_SIZE + 1) == nullptr);
    const UCHAR size = sizeof(IO_ERROR_LOG_PACKET) + 4 + 6 * sizeof(WCHAR);
    auto *entry = static_cast<PIO_ERROR_LOG_PACKET>(IoAllocateErrorLogEntry(device, size));
    REQUIRE(entry != nullptr);
    CHECK(entry->ErrorCode == 0);
    entry->ErrorCode = STATUS_IO_TIMEOUT;
    entry->UniqueErrorValue = 77;
    entry->FinalStatus = STATUS_DEVICE_NOT_READY;
    entry->MajorFunctionCode = IRP_MJ_READ;
    entry->DumpDataSize = 8;
    entry->DumpData[0] = 0xdeadbeef;
    entry->DumpData[1] = 0x12345678;
    entry->NumberOfStrings = 1;
    entry->StringOffset = sizeof(IO_ERROR_LOG_PACKET) + 4;
    std::memcpy(reinterpret_cast<char *>(entry) + entry->StringOffset, L"disk0", 6 * sizeof(WCHAR));
    {
        CapturedLog log;
        IoWriteErrorLogEntry(entry);
        const std::string text = log.text();
        CHECK_THAT(text, Catch::StartsWith("error|error log: device"));
        CHECK_THAT(text, Catch::Contains("\\Driver\\softndk_io_test"));
        CHECK_THAT(text, Catch::Contains("ErrorCode 0xC00000B5"));
        CHECK_THAT(text, Catch::Contains("UniqueErrorValue 77"));
        CHECK_THAT(text, Catch::Contains("FinalStatus 0xC00000A3"));
        CHECK_THAT(text, Catch::Contains("strings [\"disk0\"]"));
        CHECK_THAT(text, Catch::Contains("dump [deadbeef 12345678]"));
    }
    IoFreeErrorLogEntry(IoAllocateErrorLogEntry(&driver.object, sizeof(IO_ERROR_LOG_PACKET)));
    IoDeleteDevice(device);
    CHECK(pool_live_allocations() == live);
}

TEST_CASE("io manager: activity ids, priority hints and paging priority of an IRP") {
    PIRP irp = IoAllocateIrp(1, FALSE);
    GUID guid{};
    CHECK(IoGetActivityIdIrp(irp, &guid) == STATUS_NOT_FOUND);
    const GUID activity{0x12345678, 0x9abc, 0xdef0, {1, 2, 3, 4, 5, 6, 7, 8}};
    CHECK(IoSetActivityIdIrp(irp, &activity) == STATUS_SUCCESS);
    CHECK(IoGetActivityIdIrp(irp, &guid) == STATUS_SUCCESS);
    CHECK(std::memcmp(&guid, &activity, sizeof(GUID)) == 0);
    CHECK(IoSetActivityIdIrp(irp, nullptr) == STATUS_NOT_FOUND);

    CHECK(IoGetIoPriorityHint(irp) == IoPriorityNormal);
    CHECK(IoGetPagingIoPriority(irp) == IoPagingPriorityInvalid);
    irp->Flags |= IRP_PAGING_IO;
    CHECK(IoGetPagingIoPriority(irp) == IoPagingPriorityNormal);
    CHECK(IoSetIoPriorityHint(irp, IoPriorityHigh) == STATUS_SUCCESS);
    CHECK(IoGetIoPriorityHint(irp) == IoPriorityHigh);
    CHECK(IoGetPagingIoPriority(irp) == IoPagingPriorityHigh);
    CHECK(IoSetIoPriorityHint(irp, MaxIoPriorityTypes) == STATUS_INVALID_PARAMETER);
    IoReuseIrp(irp, STATUS_SUCCESS);  // attributes go with the request
    CHECK(IoGetActivityIdIrp(irp, &guid) == STATUS_NOT_FOUND);
    CHECK(IoGetIoPriorityHint(irp) == IoPriorityNormal);
    IoFreeIrp(irp);
}

TEST_CASE("io manager: IoSetMasterIrpStatus merges statuses as the WDK does") {
    IRP master{};
    master.IoStatus.Status = STATUS_SUCCESS;
    IoSetMasterIrpStatus(&master, STATUS_FT_READ_FROM_COPY);
    CHECK(master.IoStatus.Status == STATUS_SUCCESS);
    IoSetMasterIrpStatus(&master, STATUS_INVALID_PARAMETER);  // 0xC000000D
    CHECK(master.IoStatus.Status == STATUS_INVALID_PARAMETER);
    IoSetMasterIrpStatus(&master, STATUS_UNSUCCESSFUL);  // 0xC0000001: smaller, kept out
    CHECK(master.IoStatus.Status == STATUS_INVALID_PARAMETER);
    IoSetMasterIrpStatus(&master, STATUS_IO_TIMEOUT);  // 0xC00000B5: greater, wins
    CHECK(master.IoStatus.Status == STATUS_IO_TIMEOUT);
    IoSetMasterIrpStatus(&master, STATUS_SUCCESS);
    CHECK(master.IoStatus.Status == STATUS_IO_TIMEOUT);
    IoSetMasterIrpStatus(&master, STATUS_VERIFY_REQUIRED);
    CHECK(master.IoStatus.Status == STATUS_VERIFY_REQUIRED);
}

TEST_CASE("io manager: storage helpers - user-induced errors, verify device, paging path count") {
    CHECK(IoIsErrorUserInduced(STATUS_NO_MEDIA_IN_DEVICE));
    CHECK(IoIsErrorUserInduced(STATUS_MEDIA_WRITE_PROTECTED));
    CHECK(IoIsErrorUserInduced(STATUS_VERIFY_REQUIRED));
    CHECK(IoIsErrorUserInduced(STATUS_DEVICE_NOT_READY));
    CHECK_FALSE(IoIsErrorUserInduced(STATUS_DATA_ERROR));
    CHECK_FALSE(IoIsErrorUserInduced(STATUS_SUCCESS));

    PIRP irp = IoAllocateIrp(1, FALSE);
    DEVICE_OBJECT device{};
    static int thread_marker;
    irp->Tail.Overlay.Thread = reinterpret_cast<PETHREAD>(&thread_marker);
    CHECK(IoGetDeviceToVerify(irp->Tail.Overlay.Thread) == nullptr);
    IoSetHardErrorOrVerifyDevice(irp, &device);
    CHECK(IoGetDeviceToVerify(irp->Tail.Overlay.Thread) == &device);
    IoFreeIrp(irp);

    LONG paging_count = 0;
    IoAdjustPagingPathCount(&paging_count, TRUE);
    IoAdjustPagingPathCount(&paging_count, TRUE);
    IoAdjustPagingPathCount(&paging_count, FALSE);
    CHECK(paging_count == 1);
}

TEST_CASE("io manager: IoInitializeIrp prepares caller memory as IoAllocateIrp does") {
    alignas(16) unsigned char storage[512];
    std::memset(storage, 0xcc, sizeof(storage));
    auto *irp = reinterpret_cast<PIRP>(storage);
    IoInitializeIrp(irp, IoSizeOfIrp(2), 2);
    CHECK(irp->Type == IO_TYPE_IRP);
    CHECK(irp->Size == IoSizeOfIrp(2));
    CHECK(irp->StackCount == 2);
    CHECK(irp->CurrentLocation == 3);
    CHECK(irp->Cancel == FALSE);
    CHECK(IoGetNextIrpStackLocation(irp) == reinterpret_cast<PIO_STACK_LOCATION>(irp + 1) + 1);
    auto child = softndk::test::run_in_child([&] { IoInitializeIrp(irp, IoSizeOfIrp(2) - 1, 2); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("cannot hold an IRP"));
}

TEST_CASE("io manager: IoBuildPartialMdl describes a sub-range of the source") {
    const std::size_t live = pool_live_allocations();
    auto *buffer =
        static_cast<char *>(ExAllocatePool2(POOL_FLAG_NON_PAGED, 3 * PAGE_SIZE, 0x4D547374));
    PMDL source = IoAllocateMdl(buffer + 100, 2 * PAGE_SIZE, FALSE, FALSE, nullptr);
    MmProbeAndLockPages(source, KernelMode, IoWriteAccess);
    PMDL partial = IoAllocateMdl(buffer + 100, 2 * PAGE_SIZE, FALSE, FALSE, nullptr);
    char *start = buffer + 100 + PAGE_SIZE - 10;
    IoBuildPartialMdl(source, partial, start, 20);
    CHECK(MmGetMdlVirtualAddress(partial) == start);
    CHECK(MmGetMdlByteCount(partial) == 20);
    CHECK((partial->MdlFlags & MDL_PARTIAL) != 0);
    const ULONG_PTR first = (reinterpret_cast<ULONG_PTR>(buffer + 100) >> PAGE_SHIFT);
    CHECK(MmGetMdlPfnArray(partial)[0] ==
          MmGetMdlPfnArray(source)[(reinterpret_cast<ULONG_PTR>(start) >> PAGE_SHIFT) - first]);
    CHECK(MmGetSystemAddressForMdlSafe(partial, 0) == start);
    IoBuildPartialMdl(source, partial, start, 0);  // to the end of the source
    CHECK(MmGetMdlByteCount(partial) == 2 * PAGE_SIZE - (PAGE_SIZE - 10));
    auto child = softndk::test::run_in_child(
        [&] { IoBuildPartialMdl(source, partial, buffer + 100 + 2 * PAGE_SIZE - 4, 8); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("run past the source MDL's end"));
    IoFreeMdl(partial);
    MmUnlockPages(source);
    IoFreeMdl(source);
    ExFreePoolWithTag(buffer, 0x4D547374);
    CHECK(pool_live_allocations() == live);
}
