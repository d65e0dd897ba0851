// The I/O manager beyond irp.cpp's IRP machinery: the object name space of devices, device
// stacks, FILE_OBJECTs from IoGetDeviceObjectPointer, the IRPs the I/O manager builds (and
// its part of their completion), cancellation and the cancel spin lock, cancel-safe queues,
// remove locks, start-I/O packet queues, driver object extensions, the error log and the
// per-IRP attributes (activity id, priority hint).
//
// Runtime state lives in one IoManager (fork_local_instance) under a mutex that is never held
// while a driver's routine runs.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr ULONG kSystemBufferTag = 0x66427249;  // "IrBf"
constexpr ULONG kFileObjectTag = 0x656c6946;    // "File"
constexpr ULONG kErrorLogTag = 0x72457249;      // "IrEr"

struct StartIoPacket {
    ULONG key;
    PIRP irp;
};

struct DeviceState {
    std::wstring name;                     // as created (empty: unnamed)
    PDEVICE_OBJECT attached_to = nullptr;  // the device below, for IoDetachDevice
    LONG references = 0;                   // ObReferenceObject-style references
    bool delete_pending = false;           // IoDeleteDevice ran while referenced
    // Start-I/O.
    bool busy = false;
    std::deque<StartIoPacket> packets;
    bool deferred_start_io = false;
    bool non_cancelable = false;
    int in_start_io = 0;
    int deferred_starts = 0;
    bool deferred_cancelable = false;
};

struct FileState {
    LONG references = 1;
};

struct IrpExtras {
    bool synchronous = false;       // built with an event: freed at completion
    PVOID system_buffer = nullptr;  // allocated by the I/O manager
    ULONG user_buffer_length = 0;
    bool has_activity_id = false;
    GUID activity_id{};
    IO_PRIORITY_HINT priority = IoPriorityNormal;
};

struct IoManager {
    std::mutex mutex;
    std::unordered_map<PDEVICE_OBJECT, DeviceState> devices;
    std::map<std::wstring, PDEVICE_OBJECT> names;  // upper-cased name -> device
    std::unordered_map<PFILE_OBJECT, FileState> files;
    std::unordered_map<PIRP, IrpExtras> irps;
    std::map<std::pair<PDRIVER_OBJECT, PVOID>, std::unique_ptr<std::max_align_t[]>> extensions;
    std::unordered_map<PETHREAD, PDEVICE_OBJECT> devices_to_verify;
    KSPIN_LOCK cancel_lock = 0;
};

IoManager &io() {
    return fork_local_instance<IoManager>();
}

std::wstring name_key(const UNICODE_STRING &name) {
    std::wstring key(name.Buffer, name.Length / sizeof(WCHAR));
    for (auto &c : key)
        c = RtlUpcaseUnicodeChar(c);
    return key;
}

PDEVICE_OBJECT top_of_stack(PDEVICE_OBJECT device) {
    while (device->AttachedDevice != nullptr)
        device = device->AttachedDevice;
    return device;
}

std::string narrow_name(const std::wstring &name) {
    std::string out;
    for (wchar_t c : name)
        out += c < 0x80 ? static_cast<char>(c) : '?';
    return out;
}

// Allocates an IRP for `device`'s stack with its first location's major function set.
PIRP allocate_request(PDEVICE_OBJECT device, UCHAR major) {
    PIRP irp = IoAllocateIrp(device->StackSize, FALSE);
    if (irp == nullptr) return nullptr;
    IoGetNextIrpStackLocation(irp)->MajorFunction = major;
    irp->RequestorMode = KernelMode;
    return irp;
}

// A system buffer of `size` bytes (the I/O manager's, freed with the IRP).
bool attach_system_buffer(PIRP irp, ULONG size, const void *input, ULONG input_length,
                          IrpExtras &extras) {
    void *buffer = ExAllocatePoolWithTag(NonPagedPoolNx, size, kSystemBufferTag);
    if (buffer == nullptr) return false;
    std::memset(buffer, 0, size);
    if (input != nullptr && input_length != 0) std::memcpy(buffer, input, input_length);
    irp->AssociatedIrp.SystemBuffer = buffer;
    irp->Flags |= IRP_BUFFERED_IO | IRP_DEALLOCATE_BUFFER;
    extras.system_buffer = buffer;
    return true;
}

void free_mdls(PIRP irp) {
    PMDL mdl = irp->MdlAddress;
    while (mdl != nullptr) {
        PMDL next = mdl->Next;
        if ((mdl->MdlFlags & MDL_PAGES_LOCKED) != 0) MmUnlockPages(mdl);
        IoFreeMdl(mdl);
        mdl = next;
    }
    irp->MdlAddress = nullptr;
}

// Undoes a half-built request.
void discard_request(PIRP irp) {
    free_mdls(irp);
    IoFreeIrp(irp);  // frees the system buffer through forget_irp
}

void remember_request(PIRP irp, const IrpExtras &extras) {
    std::lock_guard lock(io().mutex);
    io().irps[irp] = extras;
}

// Sends `major` to the top of `device`'s stack for `file` and waits for it.
NTSTATUS send_and_wait(PDEVICE_OBJECT device, UCHAR major, PFILE_OBJECT file) {
    PDEVICE_OBJECT top = IoGetAttachedDevice(device);
    KEVENT event;
    KeInitializeEvent(&event, NotificationEvent, FALSE);
    IO_STATUS_BLOCK status_block{};
    PIRP irp = allocate_request(top, major);
    if (irp == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    IoGetNextIrpStackLocation(irp)->FileObject = file;
    irp->Tail.Overlay.OriginalFileObject = file;
    irp->UserEvent = &event;
    irp->UserIosb = &status_block;
    IrpExtras extras;
    extras.synchronous = true;
    remember_request(irp, extras);
    NTSTATUS status = IoCallDriver(top, irp);
    if (status == STATUS_PENDING) {
        KeWaitForSingleObject(&event, Executive, KernelMode, FALSE, nullptr);
        status = status_block.Status;
    }
    return status;
}

// Drops one reference of a device; frees it when it is the last one of a deleted device.
LONG release_device(PDEVICE_OBJECT device) {
    bool free_now = false;
    LONG left;
    {
        std::lock_guard lock(io().mutex);
        auto it = io().devices.find(device);
        if (it == io().devices.end() || it->second.references <= 0) {
            fatal(fmt::format("ObDereferenceObject({}): the device object has no reference left",
                              static_cast<void *>(device)));
        }
        left = --it->second.references;
        if (left == 0 && it->second.delete_pending) {
            io().devices.erase(it);
            free_now = true;
        }
    }
    if (free_now) free_device_object(device);
    return left;
}

// ---- Start-I/O.

// Ends the current packet and makes the next queued one (the first whose key is >= *key,
// else the first) current; NULL when the device goes idle.
PIRP take_next_packet(PDEVICE_OBJECT device, bool cancelable, const ULONG *key) {
    KIRQL cancel_irql = PASSIVE_LEVEL;
    if (cancelable) IoAcquireCancelSpinLock(&cancel_irql);
    PIRP next = nullptr;
    bool clear_cancel = false;
    {
        std::lock_guard lock(io().mutex);
        DeviceState &state = io().devices[device];
        device->CurrentIrp = nullptr;
        auto &packets = state.packets;
        auto chosen = packets.begin();
        if (key != nullptr) {
            chosen = std::find_if(packets.begin(), packets.end(),
                                  [key](const StartIoPacket &p) { return p.key >= *key; });
            if (chosen == packets.end()) chosen = packets.begin();
        }
        if (chosen != packets.end()) {
            next = chosen->irp;
            packets.erase(chosen);
            device->CurrentIrp = next;
            clear_cancel = state.non_cancelable;
        } else {
            state.busy = false;
        }
    }
    if (next != nullptr && clear_cancel) next->CancelRoutine = nullptr;
    if (cancelable) IoReleaseCancelSpinLock(cancel_irql);
    return next;
}

// Calls DriverStartIo with `irp`; with DeferredStartIo, then runs the start-next requests
// DriverStartIo made, one packet at a time (a loop, not a recursion).
void run_start_io(PDEVICE_OBJECT device, PIRP irp) {
    PDRIVER_STARTIO start_io = device->DriverObject->DriverStartIo;
    if (start_io == nullptr) {
        fatal(fmt::format("IoStartPacket({}): the driver has no DriverStartIo",
                          static_cast<void *>(device)));
    }
    while (irp != nullptr) {
        {
            std::lock_guard lock(io().mutex);
            ++io().devices[device].in_start_io;
        }
        start_io(device, irp);
        bool cancelable = false;
        {
            std::lock_guard lock(io().mutex);
            DeviceState &state = io().devices[device];
            if (--state.in_start_io > 0 || state.deferred_starts == 0) return;
            --state.deferred_starts;
            cancelable = state.deferred_cancelable;
        }
        irp = take_next_packet(device, cancelable, nullptr);
    }
}

void start_next(PDEVICE_OBJECT device, bool cancelable, const ULONG *key) {
    if (PIRP next = take_next_packet(device, cancelable, key)) run_start_io(device, next);
}

// ---- Cancel-safe queues.

PIO_CSQ csq_of(PVOID context, PIO_CSQ_IRP_CONTEXT &irp_context) {
    irp_context = nullptr;
    if (*static_cast<ULONG *>(context) == IO_TYPE_CSQ_IRP_CONTEXT) {
        irp_context = static_cast<PIO_CSQ_IRP_CONTEXT>(context);
        return irp_context->Csq;
    }
    return static_cast<PIO_CSQ>(context);
}

VOID NTAPI csq_cancel_routine(PDEVICE_OBJECT, PIRP irp) {
    IoReleaseCancelSpinLock(irp->CancelIrql);
    PIO_CSQ_IRP_CONTEXT context;
    PIO_CSQ csq = csq_of(irp->Tail.Overlay.DriverContext[3], context);
    KIRQL irql;
    csq->CsqAcquireLock(csq, &irql);
    csq->CsqRemoveIrp(csq, irp);
    if (context != nullptr) context->Irp = nullptr;
    irp->Tail.Overlay.DriverContext[3] = nullptr;
    csq->CsqReleaseLock(csq, irql);
    csq->CsqCompleteCanceledIrp(csq, irp);
}

}  // namespace

// ---- Internal interface (wdk_internal.hpp).

NTSTATUS register_device(PDEVICE_OBJECT device, PCUNICODE_STRING name) {
    std::lock_guard lock(io().mutex);
    DeviceState state;
    if (name != nullptr && name->Length != 0) {
        if (name->Buffer[0] != L'\\') return STATUS_OBJECT_NAME_INVALID;
        std::wstring key = name_key(*name);
        if (io().names.count(key) != 0) return STATUS_OBJECT_NAME_COLLISION;
        io().names.emplace(std::move(key), device);
        state.name.assign(name->Buffer, name->Length / sizeof(WCHAR));
    }
    io().devices[device] = std::move(state);
    return STATUS_SUCCESS;
}

bool unregister_device(PDEVICE_OBJECT device) {
    std::lock_guard lock(io().mutex);
    auto it = io().devices.find(device);
    if (it == io().devices.end()) return true;
    if (!it->second.name.empty()) {
        io().names.erase(name_key(UNICODE_STRING{
            static_cast<USHORT>(it->second.name.size() * sizeof(WCHAR)),
            static_cast<USHORT>(it->second.name.size() * sizeof(WCHAR)), it->second.name.data()}));
    }
    if (it->second.references > 0) {
        it->second.delete_pending = true;
        it->second.name.clear();
        return false;
    }
    io().devices.erase(it);
    return true;
}

void forget_irp(PIRP irp) {
    PVOID system_buffer = nullptr;
    {
        std::lock_guard lock(io().mutex);
        auto it = io().irps.find(irp);
        if (it == io().irps.end()) return;
        system_buffer = it->second.system_buffer;
        io().irps.erase(it);
    }
    if (system_buffer != nullptr && irp->AssociatedIrp.SystemBuffer == system_buffer) {
        ExFreePoolWithTag(system_buffer, kSystemBufferTag);
        irp->AssociatedIrp.SystemBuffer = nullptr;
    }
}

bool complete_built_irp(PIRP irp) {
    IrpExtras extras;
    {
        std::lock_guard lock(io().mutex);
        auto it = io().irps.find(irp);
        if (it == io().irps.end() || !it->second.synchronous) return false;
        extras = it->second;
    }
    const NTSTATUS status = irp->IoStatus.Status;
    if ((irp->Flags & IRP_BUFFERED_IO) != 0 && irp->AssociatedIrp.SystemBuffer != nullptr) {
        if ((irp->Flags & IRP_INPUT_OPERATION) != 0 && status != STATUS_VERIFY_REQUIRED &&
            !NT_ERROR(status) && irp->UserBuffer != nullptr) {
            const size_t bytes =
                std::min<ULONG_PTR>(irp->IoStatus.Information, extras.user_buffer_length);
            std::memcpy(irp->UserBuffer, irp->AssociatedIrp.SystemBuffer, bytes);
        }
    }
    free_mdls(irp);
    PIO_STATUS_BLOCK status_block = irp->UserIosb;
    PKEVENT event = irp->UserEvent;
    const IO_STATUS_BLOCK result = irp->IoStatus;
    IoFreeIrp(irp);  // and the system buffer (forget_irp)
    if (status_block != nullptr) *status_block = result;
    if (event != nullptr) KeSetEvent(event, IO_NO_INCREMENT, FALSE);
    return true;
}

bool is_io_object(PVOID object) {
    std::lock_guard lock(io().mutex);
    return io().files.count(static_cast<PFILE_OBJECT>(object)) != 0 ||
           io().devices.count(static_cast<PDEVICE_OBJECT>(object)) != 0;
}

LONG_PTR reference_io_object(PVOID object) {
    std::lock_guard lock(io().mutex);
    auto file = io().files.find(static_cast<PFILE_OBJECT>(object));
    if (file != io().files.end()) return ++file->second.references;
    return ++io().devices[static_cast<PDEVICE_OBJECT>(object)].references;
}

LONG_PTR dereference_io_object(PVOID object) {
    auto *file = static_cast<PFILE_OBJECT>(object);
    bool last_file_reference = false;
    {
        std::lock_guard lock(io().mutex);
        auto it = io().files.find(file);
        if (it != io().files.end()) {
            if (--it->second.references > 0) return it->second.references;
            io().files.erase(it);
            last_file_reference = true;
        }
    }
    if (!last_file_reference) return release_device(static_cast<PDEVICE_OBJECT>(object));
    // The last reference of a file object: the I/O manager closes it.
    send_and_wait(file->DeviceObject, IRP_MJ_CLEANUP, file);
    send_and_wait(file->DeviceObject, IRP_MJ_CLOSE, file);
    release_device(file->DeviceObject);
    file->Type = 0;
    ExFreePoolWithTag(file, kFileObjectTag);
    return 0;
}

}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

// ---- Device stacks and names.

PDEVICE_OBJECT NTAPI IoAttachDeviceToDeviceStack(PDEVICE_OBJECT SourceDevice,
                                                 PDEVICE_OBJECT TargetDevice) {
    if (SourceDevice == nullptr || TargetDevice == nullptr) return nullptr;
    std::lock_guard lock(wdk::io().mutex);
    PDEVICE_OBJECT top = wdk::top_of_stack(TargetDevice);
    auto &devices = wdk::io().devices;
    auto it = devices.find(top);
    if (it != devices.end() && it->second.delete_pending) return nullptr;
    top->AttachedDevice = SourceDevice;
    SourceDevice->StackSize = static_cast<CHAR>(top->StackSize + 1);
    devices[SourceDevice].attached_to = top;
    return top;
}

VOID NTAPI IoDetachDevice(PDEVICE_OBJECT TargetDevice) {
    std::lock_guard lock(wdk::io().mutex);
    PDEVICE_OBJECT attached = TargetDevice->AttachedDevice;
    if (attached == nullptr) {
        wdk::logger().warn("IoDetachDevice({}): no device is attached to it",
                           static_cast<void *>(TargetDevice));
        return;
    }
    TargetDevice->AttachedDevice = nullptr;
    auto it = wdk::io().devices.find(attached);
    if (it != wdk::io().devices.end()) it->second.attached_to = nullptr;
}

PDEVICE_OBJECT NTAPI IoGetAttachedDevice(PDEVICE_OBJECT DeviceObject) {
    std::lock_guard lock(wdk::io().mutex);
    return wdk::top_of_stack(DeviceObject);
}

PDEVICE_OBJECT NTAPI IoGetAttachedDeviceReference(PDEVICE_OBJECT DeviceObject) {
    std::lock_guard lock(wdk::io().mutex);
    PDEVICE_OBJECT top = wdk::top_of_stack(DeviceObject);
    ++wdk::io().devices[top].references;
    return top;
}

NTSTATUS NTAPI IoGetDeviceObjectPointer(PUNICODE_STRING ObjectName, ACCESS_MASK DesiredAccess,
                                        PFILE_OBJECT *FileObject, PDEVICE_OBJECT *DeviceObject) {
    if (ObjectName == nullptr || ObjectName->Buffer == nullptr || ObjectName->Length == 0)
        return STATUS_OBJECT_NAME_INVALID;
    PDEVICE_OBJECT device;
    {
        std::lock_guard lock(wdk::io().mutex);
        auto it = wdk::io().names.find(wdk::name_key(*ObjectName));
        if (it == wdk::io().names.end()) return STATUS_OBJECT_NAME_NOT_FOUND;
        device = it->second;
        ++wdk::io().devices[device].references;  // the file object's
    }
    auto *file = static_cast<PFILE_OBJECT>(
        ExAllocatePoolWithTag(NonPagedPoolNx, sizeof(FILE_OBJECT), wdk::kFileObjectTag));
    if (file == nullptr) {
        wdk::release_device(device);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    std::memset(file, 0, sizeof(*file));
    file->Type = IO_TYPE_FILE;
    file->Size = sizeof(FILE_OBJECT);
    file->DeviceObject = device;
    file->ReadAccess = (DesiredAccess & (FILE_READ_DATA | GENERIC_READ | GENERIC_ALL)) != 0;
    file->WriteAccess = (DesiredAccess & (FILE_WRITE_DATA | GENERIC_WRITE | GENERIC_ALL)) != 0;
    const NTSTATUS status = wdk::send_and_wait(device, IRP_MJ_CREATE, file);
    if (!NT_SUCCESS(status)) {
        file->Type = 0;
        ExFreePoolWithTag(file, wdk::kFileObjectTag);
        wdk::release_device(device);
        return status;
    }
    {
        std::lock_guard lock(wdk::io().mutex);
        wdk::io().files[file].references = 1;
    }
    *FileObject = file;
    *DeviceObject = IoGetAttachedDevice(device);
    return STATUS_SUCCESS;
}

// ---- IRPs the I/O manager builds.

PIRP NTAPI IoBuildDeviceIoControlRequest(ULONG IoControlCode, PDEVICE_OBJECT DeviceObject,
                                         PVOID InputBuffer, ULONG InputBufferLength,
                                         PVOID OutputBuffer, ULONG OutputBufferLength,
                                         BOOLEAN InternalDeviceIoControl, PKEVENT Event,
                                         PIO_STATUS_BLOCK IoStatusBlock) {
    PIRP irp =
        wdk::allocate_request(DeviceObject, InternalDeviceIoControl ? IRP_MJ_INTERNAL_DEVICE_CONTROL
                                                                    : IRP_MJ_DEVICE_CONTROL);
    if (irp == nullptr) return nullptr;
    PIO_STACK_LOCATION location = IoGetNextIrpStackLocation(irp);
    location->Parameters.DeviceIoControl.OutputBufferLength = OutputBufferLength;
    location->Parameters.DeviceIoControl.InputBufferLength = InputBufferLength;
    location->Parameters.DeviceIoControl.IoControlCode = IoControlCode;
    wdk::IrpExtras extras;
    extras.synchronous = true;
    switch (METHOD_FROM_CTL_CODE(IoControlCode)) {
        case METHOD_BUFFERED:
            if (InputBufferLength != 0 || OutputBufferLength != 0) {
                if (!wdk::attach_system_buffer(irp, std::max(InputBufferLength, OutputBufferLength),
                                               InputBuffer, InputBufferLength, extras)) {
                    wdk::discard_request(irp);
                    return nullptr;
                }
                if (OutputBuffer != nullptr && OutputBufferLength != 0)
                    irp->Flags |= IRP_INPUT_OPERATION;
            }
            irp->UserBuffer = OutputBuffer;
            extras.user_buffer_length = OutputBufferLength;
            break;
        case METHOD_IN_DIRECT:
        case METHOD_OUT_DIRECT:
            if (InputBuffer != nullptr && InputBufferLength != 0 &&
                !wdk::attach_system_buffer(irp, InputBufferLength, InputBuffer, InputBufferLength,
                                           extras)) {
                wdk::discard_request(irp);
                return nullptr;
            }
            if (OutputBuffer != nullptr && OutputBufferLength != 0) {
                PMDL mdl = IoAllocateMdl(OutputBuffer, OutputBufferLength, FALSE, FALSE, irp);
                if (mdl == nullptr) {
                    wdk::remember_request(irp, extras);
                    wdk::discard_request(irp);
                    return nullptr;
                }
                MmProbeAndLockPages(mdl, KernelMode,
                                    METHOD_FROM_CTL_CODE(IoControlCode) == METHOD_IN_DIRECT
                                        ? IoReadAccess
                                        : IoWriteAccess);
            }
            break;
        default:  // METHOD_NEITHER
            irp->UserBuffer = OutputBuffer;
            location->Parameters.DeviceIoControl.Type3InputBuffer = InputBuffer;
            break;
    }
    irp->UserIosb = IoStatusBlock;
    irp->UserEvent = Event;
    wdk::remember_request(irp, extras);
    return irp;
}

namespace {
PIRP build_fsd_request(ULONG MajorFunction, PDEVICE_OBJECT DeviceObject, PVOID Buffer, ULONG Length,
                       PLARGE_INTEGER StartingOffset, bool synchronous) {
    PIRP irp = wdk::allocate_request(DeviceObject, static_cast<UCHAR>(MajorFunction));
    if (irp == nullptr) return nullptr;
    wdk::IrpExtras extras;
    extras.synchronous = synchronous;
    if (MajorFunction == IRP_MJ_READ || MajorFunction == IRP_MJ_WRITE) {
        const bool read = MajorFunction == IRP_MJ_READ;
        PIO_STACK_LOCATION location = IoGetNextIrpStackLocation(irp);
        location->Parameters.Read.Length = Length;
        location->Parameters.Read.ByteOffset.QuadPart =
            StartingOffset != nullptr ? StartingOffset->QuadPart : 0;
        irp->UserBuffer = Buffer;
        extras.user_buffer_length = Length;
        if ((DeviceObject->Flags & DO_BUFFERED_IO) != 0 && Length != 0) {
            if (!wdk::attach_system_buffer(irp, Length, read ? nullptr : Buffer, read ? 0 : Length,
                                           extras)) {
                wdk::discard_request(irp);
                return nullptr;
            }
            if (read) irp->Flags |= IRP_INPUT_OPERATION;
            wdk::remember_request(irp, extras);
        } else if ((DeviceObject->Flags & DO_DIRECT_IO) != 0 && Length != 0) {
            PMDL mdl = IoAllocateMdl(Buffer, Length, FALSE, FALSE, irp);
            if (mdl == nullptr) {
                IoFreeIrp(irp);
                return nullptr;
            }
            MmProbeAndLockPages(mdl, KernelMode, read ? IoWriteAccess : IoReadAccess);
        }
        irp->Flags |= read ? IRP_READ_OPERATION : IRP_WRITE_OPERATION;
    }
    wdk::remember_request(irp, extras);
    return irp;
}
}  // namespace

PIRP NTAPI IoBuildSynchronousFsdRequest(ULONG MajorFunction, PDEVICE_OBJECT DeviceObject,
                                        PVOID Buffer, ULONG Length, PLARGE_INTEGER StartingOffset,
                                        PKEVENT Event, PIO_STATUS_BLOCK IoStatusBlock) {
    PIRP irp = build_fsd_request(MajorFunction, DeviceObject, Buffer, Length, StartingOffset, true);
    if (irp == nullptr) return nullptr;
    irp->UserIosb = IoStatusBlock;
    irp->UserEvent = Event;
    return irp;
}

PIRP NTAPI IoBuildAsynchronousFsdRequest(ULONG MajorFunction, PDEVICE_OBJECT DeviceObject,
                                         PVOID Buffer, ULONG Length, PLARGE_INTEGER StartingOffset,
                                         PIO_STATUS_BLOCK IoStatusBlock) {
    PIRP irp =
        build_fsd_request(MajorFunction, DeviceObject, Buffer, Length, StartingOffset, false);
    if (irp == nullptr) return nullptr;
    irp->UserIosb = IoStatusBlock;
    return irp;
}

VOID NTAPI IoBuildPartialMdl(PMDL SourceMdl, PMDL TargetMdl, PVOID VirtualAddress, ULONG Length) {
    auto *source_start = static_cast<unsigned char *>(MmGetMdlVirtualAddress(SourceMdl));
    auto *start = static_cast<unsigned char *>(VirtualAddress);
    if (start < source_start || start > source_start + SourceMdl->ByteCount) {
        wdk::fatal(fmt::format("IoBuildPartialMdl: {} is outside the source MDL's buffer [{}, +{})",
                               VirtualAddress, static_cast<void *>(source_start),
                               SourceMdl->ByteCount));
    }
    const auto offset = static_cast<ULONG>(start - source_start);
    if (Length == 0) Length = SourceMdl->ByteCount - offset;
    if (Length > SourceMdl->ByteCount - offset) {
        wdk::fatal(fmt::format("IoBuildPartialMdl: {} bytes from {} run past the source MDL's end",
                               Length, VirtualAddress));
    }
    const ULONG pages = ADDRESS_AND_SIZE_TO_SPAN_PAGES(VirtualAddress, Length);
    const size_t capacity =
        (static_cast<size_t>(TargetMdl->Size) - sizeof(MDL)) / sizeof(PFN_NUMBER);
    if (static_cast<size_t>(TargetMdl->Size) < sizeof(MDL) || pages > capacity) {
        wdk::fatal(
            fmt::format("IoBuildPartialMdl: the target MDL ({} bytes) cannot describe {} "
                        "pages",
                        TargetMdl->Size, pages));
    }
    TargetMdl->Process = SourceMdl->Process;
    TargetMdl->StartVa = PAGE_ALIGN(VirtualAddress);
    TargetMdl->ByteOffset = BYTE_OFFSET(VirtualAddress);
    TargetMdl->ByteCount = Length;
    int flags = TargetMdl->MdlFlags & (MDL_ALLOCATED_FIXED_SIZE | MDL_ALLOCATED_MUST_SUCCEED);
    flags |= SourceMdl->MdlFlags &
             (MDL_SOURCE_IS_NONPAGED_POOL | MDL_IO_PAGE_READ | MDL_IO_SPACE | MDL_WRITE_OPERATION);
    flags |= MDL_PARTIAL;
    TargetMdl->MappedSystemVa = nullptr;
    // A system address here is the process address (mdl.cpp): a partial MDL of a source that
    // is locked, mapped or in non-paged pool is mapped already.
    if ((SourceMdl->MdlFlags &
         (MDL_SOURCE_IS_NONPAGED_POOL | MDL_MAPPED_TO_SYSTEM_VA | MDL_PAGES_LOCKED)) != 0) {
        TargetMdl->MappedSystemVa = VirtualAddress;
        if ((SourceMdl->MdlFlags & MDL_SOURCE_IS_NONPAGED_POOL) == 0)
            flags |= MDL_MAPPED_TO_SYSTEM_VA | MDL_PARTIAL_HAS_BEEN_MAPPED;
    }
    TargetMdl->MdlFlags = static_cast<CSHORT>(flags);
    const ULONG_PTR first_page = (reinterpret_cast<ULONG_PTR>(TargetMdl->StartVa) -
                                  reinterpret_cast<ULONG_PTR>(SourceMdl->StartVa)) >>
                                 PAGE_SHIFT;
    std::memcpy(MmGetMdlPfnArray(TargetMdl), MmGetMdlPfnArray(SourceMdl) + first_page,
                pages * sizeof(PFN_NUMBER));
}

// ---- Cancellation.

VOID NTAPI IoAcquireCancelSpinLock(PKIRQL Irql) {
    KeAcquireSpinLock(&wdk::io().cancel_lock, Irql);
}

VOID NTAPI IoReleaseCancelSpinLock(KIRQL Irql) {
    KeReleaseSpinLock(&wdk::io().cancel_lock, Irql);
}

BOOLEAN NTAPI IoCancelIrp(PIRP Irp) {
    if (Irp == nullptr || Irp->Type != IO_TYPE_IRP) {
        wdk::bugcheck(CANCEL_STATE_IN_COMPLETED_IRP, reinterpret_cast<ULONG_PTR>(Irp), 0, 0, 0,
                      fmt::format("IoCancelIrp({}): not an IRP (completed and freed?)",
                                  static_cast<void *>(Irp)));
    }
    KIRQL irql;
    IoAcquireCancelSpinLock(&irql);
    Irp->Cancel = TRUE;
    PDRIVER_CANCEL routine = IoSetCancelRoutine(Irp, nullptr);
    if (routine == nullptr) {
        IoReleaseCancelSpinLock(irql);
        return FALSE;
    }
    Irp->CancelIrql = irql;
    PDEVICE_OBJECT device = Irp->CurrentLocation <= Irp->StackCount
                                ? IoGetCurrentIrpStackLocation(Irp)->DeviceObject
                                : nullptr;
    routine(device, Irp);  // releases the cancel spin lock
    return TRUE;
}

// ---- Cancel-safe queues.

NTSTATUS NTAPI IoCsqInitialize(PIO_CSQ Csq, PIO_CSQ_INSERT_IRP CsqInsertIrp,
                               PIO_CSQ_REMOVE_IRP CsqRemoveIrp,
                               PIO_CSQ_PEEK_NEXT_IRP CsqPeekNextIrp,
                               PIO_CSQ_ACQUIRE_LOCK CsqAcquireLock,
                               PIO_CSQ_RELEASE_LOCK CsqReleaseLock,
                               PIO_CSQ_COMPLETE_CANCELED_IRP CsqCompleteCanceledIrp) {
    Csq->Type = IO_TYPE_CSQ;
    Csq->CsqInsertIrp = CsqInsertIrp;
    Csq->CsqRemoveIrp = CsqRemoveIrp;
    Csq->CsqPeekNextIrp = CsqPeekNextIrp;
    Csq->CsqAcquireLock = CsqAcquireLock;
    Csq->CsqReleaseLock = CsqReleaseLock;
    Csq->CsqCompleteCanceledIrp = CsqCompleteCanceledIrp;
    Csq->ReservePointer = nullptr;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoCsqInitializeEx(PIO_CSQ Csq, PIO_CSQ_INSERT_IRP_EX CsqInsertIrp,
                                 PIO_CSQ_REMOVE_IRP CsqRemoveIrp,
                                 PIO_CSQ_PEEK_NEXT_IRP CsqPeekNextIrp,
                                 PIO_CSQ_ACQUIRE_LOCK CsqAcquireLock,
                                 PIO_CSQ_RELEASE_LOCK CsqReleaseLock,
                                 PIO_CSQ_COMPLETE_CANCELED_IRP CsqCompleteCanceledIrp) {
    // The Ex insert routine is kept in the same slot, as Windows does (Type says which).
    IoCsqInitialize(
        Csq, reinterpret_cast<PIO_CSQ_INSERT_IRP>(reinterpret_cast<void (*)()>(CsqInsertIrp)),
        CsqRemoveIrp, CsqPeekNextIrp, CsqAcquireLock, CsqReleaseLock, CsqCompleteCanceledIrp);
    Csq->Type = IO_TYPE_CSQ_EX;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoCsqInsertIrpEx(PIO_CSQ Csq, PIRP Irp, PIO_CSQ_IRP_CONTEXT Context,
                                PVOID InsertContext) {
    NTSTATUS status = STATUS_SUCCESS;
    KIRQL irql;
    Csq->CsqAcquireLock(Csq, &irql);
    if (Context != nullptr) {
        Context->Type = IO_TYPE_CSQ_IRP_CONTEXT;
        Context->Irp = Irp;
        Context->Csq = Csq;
        Irp->Tail.Overlay.DriverContext[3] = Context;
    } else {
        Irp->Tail.Overlay.DriverContext[3] = Csq;
    }
    if (Csq->Type == IO_TYPE_CSQ_EX) {
        status = reinterpret_cast<PIO_CSQ_INSERT_IRP_EX>(
            reinterpret_cast<void (*)()>(Csq->CsqInsertIrp))(Csq, Irp, InsertContext);
        if (!NT_SUCCESS(status)) {
            if (Context != nullptr) Context->Irp = nullptr;
            Irp->Tail.Overlay.DriverContext[3] = nullptr;
            Csq->CsqReleaseLock(Csq, irql);
            return status;
        }
    } else {
        Csq->CsqInsertIrp(Csq, Irp);
    }
    IoMarkIrpPending(Irp);
    (void)IoSetCancelRoutine(Irp, wdk::csq_cancel_routine);
    if (Irp->Cancel && IoSetCancelRoutine(Irp, nullptr) != nullptr) {
        // Cancelled before the routine was in place (IoCancelIrp found none): cancel it here.
        Csq->CsqRemoveIrp(Csq, Irp);
        if (Context != nullptr) Context->Irp = nullptr;
        Irp->Tail.Overlay.DriverContext[3] = nullptr;
        Csq->CsqReleaseLock(Csq, irql);
        Csq->CsqCompleteCanceledIrp(Csq, Irp);
        return status;
    }
    Csq->CsqReleaseLock(Csq, irql);
    return status;
}

VOID NTAPI IoCsqInsertIrp(PIO_CSQ Csq, PIRP Irp, PIO_CSQ_IRP_CONTEXT Context) {
    (void)IoCsqInsertIrpEx(Csq, Irp, Context, nullptr);
}

PIRP NTAPI IoCsqRemoveNextIrp(PIO_CSQ Csq, PVOID PeekContext) {
    KIRQL irql;
    Csq->CsqAcquireLock(Csq, &irql);
    PIRP irp = Csq->CsqPeekNextIrp(Csq, nullptr, PeekContext);
    while (irp != nullptr) {
        if (IoSetCancelRoutine(irp, nullptr) == nullptr) {
            // Being cancelled: its cancel routine removes it once it gets the lock.
            irp = Csq->CsqPeekNextIrp(Csq, irp, PeekContext);
            continue;
        }
        Csq->CsqRemoveIrp(Csq, irp);
        PVOID context = irp->Tail.Overlay.DriverContext[3];
        if (context != nullptr && *static_cast<ULONG *>(context) == IO_TYPE_CSQ_IRP_CONTEXT)
            static_cast<PIO_CSQ_IRP_CONTEXT>(context)->Irp = nullptr;
        irp->Tail.Overlay.DriverContext[3] = nullptr;
        break;
    }
    Csq->CsqReleaseLock(Csq, irql);
    return irp;
}

PIRP NTAPI IoCsqRemoveIrp(PIO_CSQ Csq, PIO_CSQ_IRP_CONTEXT Context) {
    KIRQL irql;
    Csq->CsqAcquireLock(Csq, &irql);
    PIRP irp = Context->Irp;
    if (irp != nullptr) {
        if (IoSetCancelRoutine(irp, nullptr) == nullptr) {
            irp = nullptr;  // being cancelled
        } else {
            Csq->CsqRemoveIrp(Csq, irp);
            Context->Irp = nullptr;
            irp->Tail.Overlay.DriverContext[3] = nullptr;
        }
    }
    Csq->CsqReleaseLock(Csq, irql);
    return irp;
}

// ---- Remove locks.

VOID NTAPI IoInitializeRemoveLockEx(PIO_REMOVE_LOCK Lock, ULONG AllocateTag, ULONG MaxLockedMinutes,
                                    ULONG HighWatermark, ULONG RemlockSize) {
    (void)AllocateTag;
    (void)MaxLockedMinutes;
    (void)HighWatermark;
    if (RemlockSize != sizeof(IO_REMOVE_LOCK)) {
        wdk::fatal(fmt::format(
            "IoInitializeRemoveLock: RemlockSize {} is not sizeof(IO_REMOVE_LOCK)", RemlockSize));
    }
    Lock->Common.Removed = FALSE;
    Lock->Common.IoCount = 1;
    KeInitializeEvent(&Lock->Common.RemoveEvent, SynchronizationEvent, FALSE);
}

NTSTATUS NTAPI IoAcquireRemoveLockEx(PIO_REMOVE_LOCK RemoveLock, PVOID Tag, PCSTR File, ULONG Line,
                                     ULONG RemlockSize) {
    (void)Tag;
    (void)File;
    (void)Line;
    (void)RemlockSize;
    InterlockedIncrement(&RemoveLock->Common.IoCount);
    if (RemoveLock->Common.Removed) {
        if (InterlockedDecrement(&RemoveLock->Common.IoCount) == 0)
            KeSetEvent(&RemoveLock->Common.RemoveEvent, IO_NO_INCREMENT, FALSE);
        return STATUS_DELETE_PENDING;
    }
    return STATUS_SUCCESS;
}

VOID NTAPI IoReleaseRemoveLockEx(PIO_REMOVE_LOCK RemoveLock, PVOID Tag, ULONG RemlockSize) {
    (void)Tag;
    (void)RemlockSize;
    const LONG count = InterlockedDecrement(&RemoveLock->Common.IoCount);
    if (count < 0) {
        wdk::fatal(fmt::format("IoReleaseRemoveLock({}): released more often than acquired",
                               static_cast<void *>(RemoveLock)));
    }
    if (count == 0) KeSetEvent(&RemoveLock->Common.RemoveEvent, IO_NO_INCREMENT, FALSE);
}

VOID NTAPI IoReleaseRemoveLockAndWaitEx(PIO_REMOVE_LOCK RemoveLock, PVOID Tag, ULONG RemlockSize) {
    (void)Tag;
    (void)RemlockSize;
    RemoveLock->Common.Removed = TRUE;
    // The caller's own acquisition ...
    if (InterlockedDecrement(&RemoveLock->Common.IoCount) <= 0) {
        wdk::fatal(
            fmt::format("IoReleaseRemoveLockAndWait({}): the caller does not hold the lock "
                        "(acquire it first)",
                        static_cast<void *>(RemoveLock)));
    }
    // ... and the initial reference; then wait for everyone else.
    if (InterlockedDecrement(&RemoveLock->Common.IoCount) > 0) {
        KeWaitForSingleObject(&RemoveLock->Common.RemoveEvent, Executive, KernelMode, FALSE,
                              nullptr);
    }
}

// ---- Start-I/O packets.

VOID NTAPI IoStartPacket(PDEVICE_OBJECT DeviceObject, PIRP Irp, PULONG Key,
                         PDRIVER_CANCEL CancelFunction) {
    KIRQL old_irql;
    KeRaiseIrql(DISPATCH_LEVEL, &old_irql);
    KIRQL cancel_irql = PASSIVE_LEVEL;
    if (CancelFunction != nullptr) {
        IoAcquireCancelSpinLock(&cancel_irql);
        Irp->CancelRoutine = CancelFunction;
    }
    bool start_now = false;
    bool non_cancelable = false;
    {
        std::lock_guard lock(wdk::io().mutex);
        wdk::DeviceState &state = wdk::io().devices[DeviceObject];
        non_cancelable = state.non_cancelable;
        if (!state.busy) {
            state.busy = true;
            DeviceObject->CurrentIrp = Irp;
            start_now = true;
        } else {
            const ULONG key = Key != nullptr ? *Key : 0;
            auto &packets = state.packets;
            auto at =
                Key == nullptr
                    ? packets.end()
                    : std::find_if(packets.begin(), packets.end(),
                                   [key](const wdk::StartIoPacket &p) { return p.key > key; });
            packets.insert(at, wdk::StartIoPacket{key, Irp});
        }
    }
    if (start_now) {
        if (CancelFunction != nullptr) {
            if (non_cancelable) Irp->CancelRoutine = nullptr;
            IoReleaseCancelSpinLock(cancel_irql);
        }
        wdk::run_start_io(DeviceObject, Irp);
    } else if (CancelFunction != nullptr) {
        if (Irp->Cancel) {
            // Cancelled before it was queued: out of the queue, to the cancel routine.
            IoRemoveStartIoPacket(DeviceObject, Irp);
            Irp->CancelIrql = cancel_irql;
            Irp->CancelRoutine = nullptr;
            CancelFunction(DeviceObject, Irp);
        } else {
            IoReleaseCancelSpinLock(cancel_irql);
        }
    }
    KeLowerIrql(old_irql);
}

VOID NTAPI IoStartNextPacket(PDEVICE_OBJECT DeviceObject, BOOLEAN Cancelable) {
    {
        std::lock_guard lock(wdk::io().mutex);
        wdk::DeviceState &state = wdk::io().devices[DeviceObject];
        if (state.deferred_start_io && state.in_start_io > 0) {
            ++state.deferred_starts;
            state.deferred_cancelable = Cancelable != FALSE;
            return;
        }
    }
    wdk::start_next(DeviceObject, Cancelable != FALSE, nullptr);
}

VOID NTAPI IoStartNextPacketByKey(PDEVICE_OBJECT DeviceObject, BOOLEAN Cancelable, ULONG Key) {
    wdk::start_next(DeviceObject, Cancelable != FALSE, &Key);
}

VOID NTAPI IoSetStartIoAttributes(PDEVICE_OBJECT DeviceObject, BOOLEAN DeferredStartIo,
                                  BOOLEAN NonCancelable) {
    std::lock_guard lock(wdk::io().mutex);
    wdk::DeviceState &state = wdk::io().devices[DeviceObject];
    state.deferred_start_io = DeferredStartIo != FALSE;
    state.non_cancelable = NonCancelable != FALSE;
}

BOOLEAN NTAPI IoRemoveStartIoPacket(PDEVICE_OBJECT DeviceObject, PIRP Irp) {
    std::lock_guard lock(wdk::io().mutex);
    auto &packets = wdk::io().devices[DeviceObject].packets;
    auto it = std::find_if(packets.begin(), packets.end(),
                           [Irp](const wdk::StartIoPacket &p) { return p.irp == Irp; });
    if (it == packets.end()) return FALSE;
    packets.erase(it);
    return TRUE;
}

// ---- Driver object extensions.

NTSTATUS NTAPI IoAllocateDriverObjectExtension(PDRIVER_OBJECT DriverObject,
                                               PVOID ClientIdentificationAddress,
                                               ULONG DriverObjectExtensionSize,
                                               PVOID *DriverObjectExtension) {
    *DriverObjectExtension = nullptr;
    std::lock_guard lock(wdk::io().mutex);
    const auto key = std::make_pair(DriverObject, ClientIdentificationAddress);
    if (wdk::io().extensions.count(key) != 0) return STATUS_OBJECT_NAME_COLLISION;
    const size_t units =
        (static_cast<size_t>(DriverObjectExtensionSize) + sizeof(std::max_align_t) - 1) /
        sizeof(std::max_align_t);
    std::unique_ptr<std::max_align_t[]> block(new (std::nothrow) std::max_align_t[units + 1]());
    if (block == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    // Value-initialisation does not promise zeroed padding (long double's): clear it all.
    std::memset(block.get(), 0, (units + 1) * sizeof(std::max_align_t));
    *DriverObjectExtension = block.get();
    wdk::io().extensions.emplace(key, std::move(block));
    return STATUS_SUCCESS;
}

PVOID NTAPI IoGetDriverObjectExtension(PDRIVER_OBJECT DriverObject,
                                       PVOID ClientIdentificationAddress) {
    std::lock_guard lock(wdk::io().mutex);
    auto it = wdk::io().extensions.find(std::make_pair(DriverObject, ClientIdentificationAddress));
    return it == wdk::io().extensions.end() ? nullptr : it->second.get();
}

// ---- Error log. Each entry is preceded by a 16-byte header naming its I/O object.

PVOID NTAPI IoAllocateErrorLogEntry(PVOID IoObject, UCHAR EntrySize) {
    if (IoObject == nullptr || EntrySize < sizeof(IO_ERROR_LOG_PACKET) ||
        EntrySize > ERROR_LOG_MAXIMUM_SIZE) {
        return nullptr;
    }
    auto *block = static_cast<unsigned char *>(
        ExAllocatePoolWithTag(NonPagedPoolNx, 16 + EntrySize, wdk::kErrorLogTag));
    if (block == nullptr) return nullptr;
    std::memset(block, 0, 16 + EntrySize);
    std::memcpy(block, &IoObject, sizeof(IoObject));
    block[8] = EntrySize;
    return block + 16;
}

VOID NTAPI IoFreeErrorLogEntry(PVOID ElEntry) {
    ExFreePoolWithTag(static_cast<unsigned char *>(ElEntry) - 16, wdk::kErrorLogTag);
}

VOID NTAPI IoWriteErrorLogEntry(PVOID ElEntry) {
    auto *block = static_cast<unsigned char *>(ElEntry) - 16;
    PVOID object;
    std::memcpy(&object, block, sizeof(object));
    const UCHAR size = block[8];
    const auto *packet = static_cast<const IO_ERROR_LOG_PACKET *>(ElEntry);
    // The source: a device (its driver's name) or a driver object.
    std::string source = fmt::format("{}", object);
    const auto type = *static_cast<const CSHORT *>(object);
    PDRIVER_OBJECT driver = nullptr;
    if (type == IO_TYPE_DEVICE) {
        driver = static_cast<PDEVICE_OBJECT>(object)->DriverObject;
        source = fmt::format("device {}", object);
    } else if (type == IO_TYPE_DRIVER) {
        driver = static_cast<PDRIVER_OBJECT>(object);
        source = "driver";
    }
    if (driver != nullptr && driver->DriverName.Buffer != nullptr) {
        source +=
            " of " + wdk::narrow_name(std::wstring(driver->DriverName.Buffer,
                                                   driver->DriverName.Length / sizeof(WCHAR)));
    }
    std::string strings;
    const auto *bytes = static_cast<const unsigned char *>(ElEntry);
    size_t offset = packet->StringOffset;
    for (USHORT i = 0; i < packet->NumberOfStrings && offset + sizeof(WCHAR) <= size; ++i) {
        std::wstring text;
        while (offset + sizeof(WCHAR) <= size) {
            WCHAR c;
            std::memcpy(&c, bytes + offset, sizeof(c));
            offset += sizeof(WCHAR);
            if (c == UNICODE_NULL) break;
            text += c;
        }
        strings += fmt::format("{}\"{}\"", strings.empty() ? "" : ", ", wdk::narrow_name(text));
    }
    std::string dump;
    const size_t dump_bytes =
        std::min<size_t>(packet->DumpDataSize, size - offsetof(IO_ERROR_LOG_PACKET, DumpData));
    for (size_t i = 0; i + sizeof(ULONG) <= dump_bytes; i += sizeof(ULONG)) {
        ULONG value;
        std::memcpy(&value, bytes + offsetof(IO_ERROR_LOG_PACKET, DumpData) + i, sizeof(value));
        dump += fmt::format("{}{:08x}", dump.empty() ? "" : " ", value);
    }
    wdk::logger().error(
        "error log: {}: ErrorCode 0x{:08X} UniqueErrorValue {} FinalStatus 0x{:08X} "
        "MajorFunctionCode 0x{:02x} RetryCount {} SequenceNumber {} IoControlCode 0x{:08X} "
        "strings [{}] dump [{}]",
        source, static_cast<ULONG>(packet->ErrorCode), packet->UniqueErrorValue,
        static_cast<ULONG>(packet->FinalStatus), packet->MajorFunctionCode, packet->RetryCount,
        packet->SequenceNumber, packet->IoControlCode, strings, dump);
    IoFreeErrorLogEntry(ElEntry);
}

// ---- Per-IRP attributes.

NTSTATUS NTAPI IoSetActivityIdIrp(PIRP Irp, LPCGUID Guid) {
    if (Guid == nullptr) return STATUS_NOT_FOUND;
    std::lock_guard lock(wdk::io().mutex);
    auto &extras = wdk::io().irps[Irp];
    extras.has_activity_id = true;
    extras.activity_id = *Guid;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoGetActivityIdIrp(PIRP Irp, LPGUID Guid) {
    std::lock_guard lock(wdk::io().mutex);
    auto it = wdk::io().irps.find(Irp);
    if (it == wdk::io().irps.end() || !it->second.has_activity_id) return STATUS_NOT_FOUND;
    *Guid = it->second.activity_id;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoSetIoPriorityHint(PIRP Irp, IO_PRIORITY_HINT PriorityHint) {
    if (PriorityHint < IoPriorityVeryLow || PriorityHint >= MaxIoPriorityTypes)
        return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(wdk::io().mutex);
    wdk::io().irps[Irp].priority = PriorityHint;
    return STATUS_SUCCESS;
}

IO_PRIORITY_HINT NTAPI IoGetIoPriorityHint(PIRP Irp) {
    std::lock_guard lock(wdk::io().mutex);
    auto it = wdk::io().irps.find(Irp);
    return it == wdk::io().irps.end() ? IoPriorityNormal : it->second.priority;
}

IO_PAGING_PRIORITY FASTCALL IoGetPagingIoPriority(PIRP Irp) {
    if ((Irp->Flags & IRP_PAGING_IO) == 0) return IoPagingPriorityInvalid;
    return IoGetIoPriorityHint(Irp) >= IoPriorityHigh ? IoPagingPriorityHigh
                                                      : IoPagingPriorityNormal;
}

// ---- Storage-driver helpers.

VOID NTAPI IoSetHardErrorOrVerifyDevice(PIRP Irp, PDEVICE_OBJECT DeviceObject) {
    std::lock_guard lock(wdk::io().mutex);
    wdk::io().devices_to_verify[Irp->Tail.Overlay.Thread] = DeviceObject;
}

PDEVICE_OBJECT NTAPI IoGetDeviceToVerify(PETHREAD Thread) {
    std::lock_guard lock(wdk::io().mutex);
    auto it = wdk::io().devices_to_verify.find(Thread);
    return it == wdk::io().devices_to_verify.end() ? nullptr : it->second;
}

}  // extern "C"
