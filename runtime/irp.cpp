// IRPs: allocation, IoCallDriver's dispatch and IoCompleteRequest's walk up the stack
// locations, following Windows' IopfCallDriver / IopfCompleteRequest.
#include <spdlog/fmt/fmt.h>

#include <cstring>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr ULONG kIrpTag = 0x20707249;     // "Irp "
constexpr ULONG kDeviceTag = 0x69766544;  // "Devi"

void initialize_irp(PIRP irp, USHORT size, CCHAR stack_size) {
    std::memset(irp, 0, size);
    irp->Type = IO_TYPE_IRP;
    irp->Size = size;
    irp->StackCount = stack_size;
    irp->CurrentLocation = static_cast<CHAR>(stack_size + 1);
    InitializeListHead(&irp->ThreadListEntry);
    irp->Tail.Overlay.CurrentStackLocation =
        reinterpret_cast<PIO_STACK_LOCATION>(irp + 1) + stack_size;
}

void check_irp(PIRP irp, const char *caller) {
    if (irp == nullptr || irp->Type != IO_TYPE_IRP) {
        bugcheck(
            MULTIPLE_IRP_COMPLETE_REQUESTS, reinterpret_cast<ULONG_PTR>(irp), 0, 0, 0,
            fmt::format("{}({}): not an IRP (freed already?)", caller, static_cast<void *>(irp)));
    }
}

NTSTATUS NTAPI invalid_device_request(PDEVICE_OBJECT, PIRP irp) {
    irp->IoStatus.Status = STATUS_INVALID_DEVICE_REQUEST;
    irp->IoStatus.Information = 0;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return STATUS_INVALID_DEVICE_REQUEST;
}

}  // namespace

void free_device_object(PDEVICE_OBJECT device) {
    device->Type = 0;
    ExFreePoolWithTag(device, kDeviceTag);
}

}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

PIRP NTAPI IoAllocateIrp(CCHAR StackSize, BOOLEAN ChargeQuota) {
    (void)ChargeQuota;
    if (StackSize < 1) {
        wdk::logger().warn("IoAllocateIrp: StackSize {} (at least 1 is needed)",
                           static_cast<int>(StackSize));
        return nullptr;
    }
    const USHORT size = IoSizeOfIrp(StackSize);
    auto *irp = static_cast<PIRP>(ExAllocatePoolWithTag(NonPagedPoolNx, size, wdk::kIrpTag));
    if (irp == nullptr) return nullptr;
    wdk::initialize_irp(irp, size, StackSize);
    return irp;
}

VOID NTAPI IoFreeIrp(PIRP Irp) {
    wdk::check_irp(Irp, "IoFreeIrp");
    wdk::forget_irp(Irp);
    Irp->Type = 0;  // a second free, or a completion of the freed IRP, is then recognised
    ExFreePoolWithTag(Irp, wdk::kIrpTag);
}

VOID NTAPI IoReuseIrp(PIRP Irp, NTSTATUS Iostatus) {
    wdk::check_irp(Irp, "IoReuseIrp");
    wdk::forget_irp(Irp);
    const UCHAR allocation_flags = Irp->AllocationFlags;
    wdk::initialize_irp(Irp, Irp->Size, Irp->StackCount);
    Irp->AllocationFlags = allocation_flags;
    Irp->IoStatus.Status = Iostatus;
}

NTSTATUS FASTCALL IofCallDriver(PDEVICE_OBJECT DeviceObject, PIRP Irp) {
    wdk::check_irp(Irp, "IoCallDriver");
    if (DeviceObject == nullptr || DeviceObject->DriverObject == nullptr) {
        wdk::fatal(fmt::format("IoCallDriver({}, {}): the device object has no DriverObject",
                               static_cast<void *>(DeviceObject), static_cast<void *>(Irp)));
    }
    IoSetNextIrpStackLocation(Irp);
    if (Irp->CurrentLocation <= 0) {
        wdk::bugcheck(NO_MORE_IRP_STACK_LOCATIONS, reinterpret_cast<ULONG_PTR>(Irp), 0, 0, 0,
                      fmt::format("IoCallDriver({}, {}): the IRP has no stack location left for "
                                  "this driver (StackCount {})",
                                  static_cast<void *>(DeviceObject), static_cast<void *>(Irp),
                                  static_cast<int>(Irp->StackCount)));
    }
    PIO_STACK_LOCATION location = IoGetCurrentIrpStackLocation(Irp);
    location->DeviceObject = DeviceObject;
    if (location->MajorFunction > IRP_MJ_MAXIMUM_FUNCTION) {
        wdk::fatal(fmt::format("IoCallDriver({}, {}): MajorFunction 0x{:x} is not an IRP_MJ_ code",
                               static_cast<void *>(DeviceObject), static_cast<void *>(Irp),
                               location->MajorFunction));
    }
    PDRIVER_DISPATCH dispatch = DeviceObject->DriverObject->MajorFunction[location->MajorFunction];
    if (dispatch == nullptr) dispatch = wdk::invalid_device_request;
    return dispatch(DeviceObject, Irp);
}

VOID FASTCALL IofCompleteRequest(PIRP Irp, CCHAR PriorityBoost) {
    (void)PriorityBoost;
    if (Irp == nullptr || Irp->Type != IO_TYPE_IRP || Irp->CurrentLocation > Irp->StackCount + 1) {
        wdk::bugcheck(MULTIPLE_IRP_COMPLETE_REQUESTS, reinterpret_cast<ULONG_PTR>(Irp), 0, 0, 0,
                      fmt::format("IoCompleteRequest({}): not an IRP, or completed already",
                                  static_cast<void *>(Irp)));
    }
    if (Irp->CancelRoutine != nullptr) {
        wdk::bugcheck(CANCEL_STATE_IN_COMPLETED_IRP, reinterpret_cast<ULONG_PTR>(Irp),
                      reinterpret_cast<ULONG_PTR>(Irp->CancelRoutine), 0, 0,
                      fmt::format("IoCompleteRequest({}): the IRP still has a cancel routine "
                                  "(IoSetCancelRoutine(Irp, NULL) first)",
                                  static_cast<void *>(Irp)));
    }
    if (Irp->IoStatus.Status == STATUS_PENDING) {
        wdk::fatal(
            fmt::format("IoCompleteRequest({}): IoStatus.Status is STATUS_PENDING - set "
                        "the final status before completing",
                        static_cast<void *>(Irp)));
    }
    if (Irp->CurrentLocation == Irp->StackCount + 1) {
        wdk::bugcheck(MULTIPLE_IRP_COMPLETE_REQUESTS, reinterpret_cast<ULONG_PTR>(Irp), 0, 0, 0,
                      fmt::format("IoCompleteRequest({}): the IRP is not owned by any driver "
                                  "(never sent with IoCallDriver, or completed already)",
                                  static_cast<void *>(Irp)));
    }
    while (Irp->CurrentLocation <= Irp->StackCount) {
        PIO_STACK_LOCATION location = IoGetCurrentIrpStackLocation(Irp);
        Irp->PendingReturned = (location->Control & SL_PENDING_RETURNED) != 0;
        const bool error = !NT_SUCCESS(Irp->IoStatus.Status);
        const PIO_COMPLETION_ROUTINE routine = location->CompletionRoutine;
        PVOID context = location->Context;
        const UCHAR control = location->Control;
        // The location is finished with: clear it as Windows does (IopClearStackLocation).
        location->MinorFunction = 0;
        location->Flags = 0;
        location->Control = 0;
        location->CompletionRoutine = nullptr;
        location->Context = nullptr;
        IoSkipCurrentIrpStackLocation(Irp);
        const bool invoke =
            routine != nullptr && ((!error && (control & SL_INVOKE_ON_SUCCESS) != 0) ||
                                   (error && (control & SL_INVOKE_ON_ERROR) != 0) ||
                                   (Irp->Cancel && (control & SL_INVOKE_ON_CANCEL) != 0));
        if (invoke) {
            PDEVICE_OBJECT device = Irp->CurrentLocation <= Irp->StackCount
                                        ? IoGetCurrentIrpStackLocation(Irp)->DeviceObject
                                        : nullptr;
            if (routine(device, Irp, context) == STATUS_MORE_PROCESSING_REQUIRED) return;
        } else if (Irp->PendingReturned && Irp->CurrentLocation <= Irp->StackCount) {
            IoMarkIrpPending(Irp);
        }
    }
    // Past the top: what the I/O manager does for the requester.
    if (wdk::complete_built_irp(Irp)) return;
    if (Irp->UserIosb != nullptr) *Irp->UserIosb = Irp->IoStatus;
    if (Irp->UserEvent != nullptr) KeSetEvent(Irp->UserEvent, IO_NO_INCREMENT, FALSE);
}

NTSTATUS NTAPI IoSetCompletionRoutineEx(PDEVICE_OBJECT DeviceObject, PIRP Irp,
                                        PIO_COMPLETION_ROUTINE CompletionRoutine, PVOID Context,
                                        BOOLEAN InvokeOnSuccess, BOOLEAN InvokeOnError,
                                        BOOLEAN InvokeOnCancel) {
    (void)DeviceObject;
    IoSetCompletionRoutine(Irp, CompletionRoutine, Context, InvokeOnSuccess, InvokeOnError,
                           InvokeOnCancel);
    return STATUS_SUCCESS;
}

VOID NTAPI IoInitializeIrp(PIRP Irp, USHORT PacketSize, CCHAR StackSize) {
    if (StackSize < 1 || PacketSize < IoSizeOfIrp(StackSize)) {
        wdk::fatal(fmt::format("IoInitializeIrp({}): PacketSize {} cannot hold an IRP with {} stack "
                               "locations (IoSizeOfIrp: {})",
                               static_cast<void *>(Irp), PacketSize, static_cast<int>(StackSize),
                               IoSizeOfIrp(StackSize)));
    }
    wdk::initialize_irp(Irp, PacketSize, StackSize);
}

NTSTATUS NTAPI IoCreateDevice(PDRIVER_OBJECT DriverObject, ULONG DeviceExtensionSize,
                              PUNICODE_STRING DeviceName, DEVICE_TYPE DeviceType,
                              ULONG DeviceCharacteristics, BOOLEAN Exclusive,
                              PDEVICE_OBJECT *DeviceObject) {
    (void)Exclusive;
    if (DeviceObject == nullptr) wdk::fatal("IoCreateDevice: DeviceObject is NULL");
    *DeviceObject = nullptr;
    if (DriverObject == nullptr) return STATUS_INVALID_PARAMETER;
    // The extension starts 16-byte aligned, as pool allocations on x64 are.
    const size_t header = (sizeof(DEVICE_OBJECT) + 15) & ~size_t{15};
    auto *device = static_cast<PDEVICE_OBJECT>(
        ExAllocatePoolWithTag(NonPagedPoolNx, header + DeviceExtensionSize, wdk::kDeviceTag));
    if (device == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    std::memset(device, 0, header + DeviceExtensionSize);
    device->Type = IO_TYPE_DEVICE;
    device->Size = static_cast<USHORT>(sizeof(DEVICE_OBJECT) + DeviceExtensionSize);
    device->DriverObject = DriverObject;
    device->DeviceExtension =
        DeviceExtensionSize != 0 ? reinterpret_cast<unsigned char *>(device) + header : nullptr;
    device->DeviceType = DeviceType;
    device->Characteristics = DeviceCharacteristics;
    device->Flags = DO_DEVICE_INITIALIZING;
    device->StackSize = 1;
    if (const NTSTATUS status = wdk::register_device(device, DeviceName); !NT_SUCCESS(status)) {
        ExFreePoolWithTag(device, wdk::kDeviceTag);
        return status;
    }
    device->NextDevice = DriverObject->DeviceObject;
    DriverObject->DeviceObject = device;
    *DeviceObject = device;
    return STATUS_SUCCESS;
}

VOID NTAPI IoDeleteDevice(PDEVICE_OBJECT DeviceObject) {
    if (DeviceObject == nullptr || DeviceObject->Type != IO_TYPE_DEVICE)
        wdk::fatal("IoDeleteDevice: not a device object from IoCreateDevice");
    if (PDRIVER_OBJECT driver = DeviceObject->DriverObject) {
        for (PDEVICE_OBJECT *link = &driver->DeviceObject; *link != nullptr;
             link = &(*link)->NextDevice) {
            if (*link == DeviceObject) {
                *link = DeviceObject->NextDevice;
                break;
            }
        }
    }
    // Referenced (IoGetAttachedDeviceReference, an open FILE_OBJECT): freed at the last
    // ObDereferenceObject, as on Windows.
    if (!wdk::unregister_device(DeviceObject)) return;
    if (InterlockedCompareExchange(&DeviceObject->ReferenceCount, 0, 0) != 0) {
        wdk::logger().error("IoDeleteDevice: device {} still referenced ({}): left allocated",
                            static_cast<void *>(DeviceObject), DeviceObject->ReferenceCount);
        return;
    }
    wdk::free_device_object(DeviceObject);
}

}  // extern "C"
