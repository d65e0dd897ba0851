// Callbacks and notifications: callback objects, power (settings, states, PoCallDriver), Plug
// and Play (device interfaces and their notifications, target-device changes), WMI (blocks,
// events), ETW (registration and events on the "wdk" logger), driver reinitialization and
// ExInitializeDriverRuntime.
#include <wdm.h>

#include <spdlog/sinks/ostream_sink.h>

#include <atomic>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "waits.hpp"
#include "wdk_internal.hpp"

namespace {

struct Calls {
    std::vector<std::pair<PVOID, PVOID>> arguments;
    int count = 0;
};

VOID NTAPI record_call(PVOID CallbackContext, PVOID Argument1, PVOID Argument2) {
    auto *calls = static_cast<Calls *>(CallbackContext);
    calls->arguments.emplace_back(Argument1, Argument2);
    ++calls->count;
}

OBJECT_ATTRIBUTES named(UNICODE_STRING &name, const wchar_t *text, ULONG attributes = 0) {
    RtlInitUnicodeString(&name, text);
    OBJECT_ATTRIBUTES object;
    InitializeObjectAttributes(&object, &name, OBJ_CASE_INSENSITIVE | attributes, nullptr, nullptr);
    return object;
}

}  // namespace

TEST_CASE("notifications: callback objects - create, open by name, register, notify, unregister") {
    UNICODE_STRING name;
    OBJECT_ATTRIBUTES attributes = named(name, L"\\Callback\\SoftNdkTest");
    PCALLBACK_OBJECT missing = nullptr;
    CHECK(ExCreateCallback(&missing, &attributes, FALSE, TRUE) == STATUS_OBJECT_NAME_NOT_FOUND);
    PCALLBACK_OBJECT object = nullptr, opened = nullptr;
    REQUIRE(ExCreateCallback(&object, &attributes, TRUE, TRUE) == STATUS_SUCCESS);
    REQUIRE(ExCreateCallback(&opened, &attributes, FALSE, FALSE) == STATUS_SUCCESS);
    CHECK(opened == object);
    Calls first, second;
    PVOID one = ExRegisterCallback(object, record_call, &first);
    PVOID two = ExRegisterCallback(object, record_call, &second);
    REQUIRE(one != nullptr);
    REQUIRE(two != nullptr);
    int a1 = 1, a2 = 2;
    ExNotifyCallback(object, &a1, &a2);
    CHECK(first.arguments == std::vector<std::pair<PVOID, PVOID>>{{&a1, &a2}});
    CHECK(second.count == 1);
    ExUnregisterCallback(one);
    ExNotifyCallback(object, nullptr, nullptr);
    CHECK(first.count == 1);
    CHECK(second.count == 2);
    ExUnregisterCallback(two);
    ObDereferenceObject(opened);
    ObDereferenceObject(object);
    // The last reference went: the name is gone.
    CHECK(ExCreateCallback(&missing, &attributes, FALSE, TRUE) == STATUS_OBJECT_NAME_NOT_FOUND);

    SECTION("an object that allows one callback refuses a second") {
        PCALLBACK_OBJECT single = nullptr;
        OBJECT_ATTRIBUTES unnamed;
        InitializeObjectAttributes(&unnamed, nullptr, 0, nullptr, nullptr);
        REQUIRE(ExCreateCallback(&single, &unnamed, TRUE, FALSE) == STATUS_SUCCESS);
        PVOID only = ExRegisterCallback(single, record_call, &first);
        REQUIRE(only != nullptr);
        CHECK(ExRegisterCallback(single, record_call, &second) == nullptr);
        ExUnregisterCallback(only);
        ObDereferenceObject(single);
    }
    SECTION("Windows' system callback objects exist") {
        UNICODE_STRING power_name;
        OBJECT_ATTRIBUTES power = named(power_name, L"\\Callback\\PowerState");
        PCALLBACK_OBJECT power_object = nullptr;
        REQUIRE(ExCreateCallback(&power_object, &power, FALSE, TRUE) == STATUS_SUCCESS);
        ObDereferenceObject(power_object);
    }
}

namespace {
struct PowerSeen {
    GUID setting{};
    ULONG value = 0xFFFF;
    ULONG length = 0;
    int calls = 0;
};
NTSTATUS NTAPI power_callback(LPCGUID SettingGuid, PVOID Value, ULONG ValueLength, PVOID Context) {
    auto *seen = static_cast<PowerSeen *>(Context);
    seen->setting = *SettingGuid;
    std::memcpy(&seen->value, Value, sizeof(ULONG));
    seen->length = ValueLength;
    ++seen->calls;
    return STATUS_SUCCESS;
}

NTSTATUS complete_power(PDEVICE_OBJECT, PIRP Irp) {
    Irp->IoStatus.Status = STATUS_SUCCESS;
    IoCompleteRequest(Irp, IO_NO_INCREMENT);
    return STATUS_SUCCESS;
}
}  // namespace

TEST_CASE("notifications: power settings report their value at registration") {
    PowerSeen seen;
    PVOID handle = nullptr;
    REQUIRE(PoRegisterPowerSettingCallback(nullptr, &GUID_ACDC_POWER_SOURCE, power_callback, &seen,
                                           &handle) == STATUS_SUCCESS);
    CHECK(seen.calls == 1);
    CHECK(IsEqualGUID(seen.setting, GUID_ACDC_POWER_SOURCE));
    CHECK(seen.value == 0);  // PoAc
    CHECK(seen.length == sizeof(ULONG));
    PowerSeen display;
    PVOID display_handle = nullptr;
    REQUIRE(PoRegisterPowerSettingCallback(nullptr, &GUID_CONSOLE_DISPLAY_STATE, power_callback,
                                           &display, &display_handle) == STATUS_SUCCESS);
    CHECK(display.value == 1);
    GUID unknown{0x12345678, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
    PowerSeen quiet;
    PVOID quiet_handle = nullptr;
    REQUIRE(PoRegisterPowerSettingCallback(nullptr, &unknown, power_callback, &quiet,
                                           &quiet_handle) == STATUS_SUCCESS);
    CHECK(quiet.calls == 0);
    CHECK(PoRegisterPowerSettingCallback(nullptr, nullptr, power_callback, &quiet, &quiet_handle) ==
          STATUS_INVALID_PARAMETER);
    PowerSeen forever;
    CHECK(PoRegisterPowerSettingCallback(nullptr, &GUID_SYSTEM_AWAYMODE, power_callback, &forever,
                                         nullptr) == STATUS_SUCCESS);
    CHECK(forever.calls == 1);
    CHECK(PoUnregisterPowerSettingCallback(handle) == STATUS_SUCCESS);
    CHECK(PoUnregisterPowerSettingCallback(handle) == STATUS_INVALID_PARAMETER);
    CHECK(PoUnregisterPowerSettingCallback(display_handle) == STATUS_SUCCESS);
    CHECK(PoUnregisterPowerSettingCallback(quiet_handle) == STATUS_SUCCESS);
}

TEST_CASE("notifications: power states, PoCallDriver, PoStartNextPowerIrp, watchdog") {
    DRIVER_OBJECT driver{};
    driver.MajorFunction[IRP_MJ_POWER] = complete_power;
    PDEVICE_OBJECT device = nullptr;
    REQUIRE(IoCreateDevice(&driver, 0, nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE, &device) ==
            STATUS_SUCCESS);
    POWER_STATE d3;
    d3.DeviceState = PowerDeviceD3;
    CHECK(PoSetPowerState(device, DevicePowerState, d3).DeviceState == PowerDeviceD0);
    POWER_STATE d0;
    d0.DeviceState = PowerDeviceD0;
    CHECK(PoSetPowerState(device, DevicePowerState, d0).DeviceState == PowerDeviceD3);
    POWER_STATE s3;
    s3.SystemState = PowerSystemSleeping3;
    CHECK(PoSetPowerState(device, SystemPowerState, s3).SystemState == PowerSystemWorking);

    PIRP irp = IoAllocateIrp(1, FALSE);
    REQUIRE(irp != nullptr);
    IoGetNextIrpStackLocation(irp)->MajorFunction = IRP_MJ_POWER;
    CHECK(PoCallDriver(device, irp) == STATUS_SUCCESS);
    CHECK(irp->IoStatus.Status == STATUS_SUCCESS);
    PoStartNextPowerIrp(irp);  // no-op, as on Windows Vista and later
    IoFreeIrp(irp);
    ULONG seconds = 99;
    CHECK(PoQueryWatchdogTime(device, &seconds) == FALSE);
    IoDeleteDevice(device);
}

namespace {
// {6BDD1FC6-810F-11D0-BEC7-08002BE2092F}
const GUID kTestInterface = {
    0x6bdd1fc6, 0x810f, 0x11d0, {0xbe, 0xc7, 0x08, 0x00, 0x2b, 0xe2, 0x09, 0x2f}};

struct InterfaceLog {
    std::vector<std::pair<bool, std::wstring>> events;  // arrival?, name
};

NTSTATUS NTAPI interface_change(PVOID NotificationStructure, PVOID Context) {
    auto *n = static_cast<PDEVICE_INTERFACE_CHANGE_NOTIFICATION>(NotificationStructure);
    auto *log = static_cast<InterfaceLog *>(Context);
    CHECK(n->Version == 1);
    CHECK(IsEqualGUID(n->InterfaceClassGuid, kTestInterface));
    log->events.emplace_back(
        IsEqualGUID(n->Event, GUID_DEVICE_INTERFACE_ARRIVAL),
        std::wstring(n->SymbolicLinkName->Buffer, n->SymbolicLinkName->Length / sizeof(WCHAR)));
    return STATUS_SUCCESS;
}

struct TargetLog {
    std::atomic<int> notified{0};
    std::atomic<int> completed{0};
    GUID event{};
};
NTSTATUS NTAPI target_change(PVOID NotificationStructure, PVOID Context) {
    auto *log = static_cast<TargetLog *>(Context);
    log->event = static_cast<PTARGET_DEVICE_CUSTOM_NOTIFICATION>(NotificationStructure)->Event;
    log->notified.fetch_add(1);
    return STATUS_SUCCESS;
}
VOID NTAPI target_done(PVOID Context) {
    static_cast<TargetLog *>(Context)->completed.fetch_add(1);
}
}  // namespace

TEST_CASE("notifications: device interfaces - names, state changes, PnP notifications") {
    DRIVER_OBJECT driver{};
    PDEVICE_OBJECT device = nullptr;
    REQUIRE(IoCreateDevice(&driver, 0, nullptr, FILE_DEVICE_NETWORK, 0, FALSE, &device) ==
            STATUS_SUCCESS);
    UNICODE_STRING link{}, again{};
    REQUIRE(IoRegisterDeviceInterface(device, &kTestInterface, nullptr, &link) == STATUS_SUCCESS);
    const std::wstring name(link.Buffer, link.Length / sizeof(WCHAR));
    CHECK(name.starts_with(L"\\??\\ROOT#SOFTNDK#"));
    CHECK(name.ends_with(L"#{6bdd1fc6-810f-11d0-bec7-08002be2092f}"));
    REQUIRE(IoRegisterDeviceInterface(device, &kTestInterface, nullptr, &again) == STATUS_SUCCESS);
    CHECK(std::wstring(again.Buffer, again.Length / sizeof(WCHAR)) == name);
    ExFreePool(again.Buffer);

    InterfaceLog before, after;
    PVOID early = nullptr, late = nullptr;
    REQUIRE(IoRegisterPlugPlayNotification(EventCategoryDeviceInterfaceChange, 0,
                                           const_cast<GUID *>(&kTestInterface), &driver,
                                           interface_change, &before, &early) == STATUS_SUCCESS);
    REQUIRE(IoSetDeviceInterfaceState(&link, TRUE) == STATUS_SUCCESS);
    CHECK(IoSetDeviceInterfaceState(&link, TRUE) == STATUS_OBJECT_NAME_EXISTS);
    CHECK(before.events == std::vector<std::pair<bool, std::wstring>>{{true, name}});
    // A new registration asking for existing interfaces hears of the enabled one at once.
    REQUIRE(IoRegisterPlugPlayNotification(EventCategoryDeviceInterfaceChange,
                                           PNPNOTIFY_DEVICE_INTERFACE_INCLUDE_EXISTING_INTERFACES,
                                           const_cast<GUID *>(&kTestInterface), &driver,
                                           interface_change, &after, &late) == STATUS_SUCCESS);
    CHECK(after.events.size() == 1);
    REQUIRE(IoSetDeviceInterfaceState(&link, FALSE) == STATUS_SUCCESS);
    CHECK(IoSetDeviceInterfaceState(&link, FALSE) == STATUS_OBJECT_NAME_NOT_FOUND);
    CHECK(before.events.size() == 2);
    CHECK(before.events.back().first == false);
    CHECK(after.events.size() == 2);
    CHECK(IoUnregisterPlugPlayNotification(early) == STATUS_SUCCESS);
    CHECK(IoUnregisterPlugPlayNotification(early) == STATUS_INVALID_PARAMETER);
    REQUIRE(IoSetDeviceInterfaceState(&link, TRUE) == STATUS_SUCCESS);
    CHECK(before.events.size() == 2);  // unregistered: not told
    CHECK(after.events.size() == 3);
    CHECK(IoUnregisterPlugPlayNotification(late) == STATUS_SUCCESS);
    UNICODE_STRING unknown;
    RtlInitUnicodeString(&unknown, L"\\??\\ROOT#NOPE");
    CHECK(IoSetDeviceInterfaceState(&unknown, TRUE) == STATUS_OBJECT_NAME_NOT_FOUND);
    PVOID entry = nullptr;
    CHECK(IoRegisterPlugPlayNotification(EventCategoryDeviceInterfaceChange, 0, nullptr, &driver,
                                         interface_change, &before,
                                         &entry) == STATUS_INVALID_PARAMETER);
    ExFreePool(link.Buffer);

    // Target-device changes: a custom event goes to the registrations on a worker thread.
    TargetLog target;
    PVOID target_entry = nullptr;
    REQUIRE(IoRegisterPlugPlayNotification(EventCategoryTargetDeviceChange, 0, nullptr, &driver,
                                           target_change, &target,
                                           &target_entry) == STATUS_SUCCESS);
    TARGET_DEVICE_CUSTOM_NOTIFICATION custom{};
    custom.Version = 1;
    custom.Size = sizeof custom;
    custom.Event = kTestInterface;
    custom.NameBufferOffset = -1;
    REQUIRE(IoReportTargetDeviceChangeAsynchronous(device, &custom, target_done, &target) ==
            STATUS_PENDING);
    REQUIRE(softndk::test::eventually([&] { return target.completed.load() == 1; }));
    CHECK(target.notified.load() == 1);
    CHECK(IsEqualGUID(target.event, kTestInterface));
    custom.Event = GUID_TARGET_DEVICE_REMOVE_COMPLETE;
    CHECK(IoReportTargetDeviceChangeAsynchronous(device, &custom, nullptr, nullptr) ==
          STATUS_INVALID_DEVICE_REQUEST);
    custom.Event = kTestInterface;
    custom.Version = 2;
    CHECK(IoReportTargetDeviceChangeAsynchronous(device, &custom, nullptr, nullptr) ==
          STATUS_INVALID_DEVICE_REQUEST);
    CHECK(IoUnregisterPlugPlayNotification(target_entry) == STATUS_SUCCESS);

    // No PnP manager: relations and properties have nothing behind them.
    IoInvalidateDeviceRelations(device, BusRelations);
    ULONG length = 1;
    WCHAR buffer[64];
    CHECK(IoGetDeviceProperty(device, DevicePropertyDeviceDescription, sizeof buffer, buffer,
                              &length) == STATUS_INVALID_DEVICE_REQUEST);
    CHECK(length == 0);
    DEVPROPKEY key{};
    DEVPROPTYPE type = 7;
    ULONG required = 1;
    CHECK(IoGetDevicePropertyData(device, &key, 0, 0, sizeof buffer, buffer, &required, &type) ==
          STATUS_INVALID_DEVICE_REQUEST);
    CHECK(required == 0);
    IoDeleteDevice(device);
}

namespace {
struct WmiSeen {
    int calls = 0;
    ULONG size = 0;
};
VOID NTAPI wmi_callback(PVOID Wnode, PVOID Context) {
    auto *seen = static_cast<WmiSeen *>(Context);
    ++seen->calls;
    seen->size = static_cast<PWNODE_HEADER>(Wnode)->BufferSize;
}
const GUID kWmiEvent = {0xa1b2c3d4, 0x1111, 0x2222, {1, 2, 3, 4, 5, 6, 7, 8}};

PWNODE_EVENT_ITEM make_event(ULONG size) {
    auto *event = static_cast<PWNODE_EVENT_ITEM>(
        ExAllocatePoolZero(NonPagedPoolNx, size, 0x54576D69 /* "imWT" */));
    event->WnodeHeader.BufferSize = size;
    event->WnodeHeader.Guid = kWmiEvent;
    event->WnodeHeader.Flags = WNODE_FLAG_EVENT_ITEM | WNODE_FLAG_SINGLE_INSTANCE;
    return event;
}
}  // namespace

TEST_CASE("notifications: WMI - registration, data blocks, events delivered and freed") {
    DRIVER_OBJECT driver{};
    PDEVICE_OBJECT device = nullptr;
    REQUIRE(IoCreateDevice(&driver, 0, nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE, &device) ==
            STATUS_SUCCESS);
    CHECK(IoWMIRegistrationControl(device, WMIREG_ACTION_DEREGISTER) == STATUS_INVALID_PARAMETER);
    REQUIRE(IoWMIRegistrationControl(device, WMIREG_ACTION_REGISTER) == STATUS_SUCCESS);
    CHECK(IoWMIRegistrationControl(device, WMIREG_ACTION_REGISTER) == STATUS_OBJECT_NAME_COLLISION);
    CHECK(IoWMIRegistrationControl(device, WMIREG_ACTION_UPDATE_GUIDS) == STATUS_SUCCESS);
    CHECK(IoWMIDeviceObjectToProviderId(device) ==
          static_cast<ULONG>(reinterpret_cast<ULONG_PTR>(device)));

    PVOID block = nullptr;
    REQUIRE(IoWMIOpenBlock(&kWmiEvent, WMIGUID_NOTIFICATION, &block) == STATUS_SUCCESS);
    WmiSeen seen;
    REQUIRE(IoWMISetNotificationCallback(block, wmi_callback, &seen) == STATUS_SUCCESS);
    const size_t live = softndk::wdk::pool_live_allocations();
    REQUIRE(IoWMIWriteEvent(make_event(sizeof(WNODE_EVENT_ITEM) + 8)) == STATUS_SUCCESS);
    CHECK(seen.calls == 1);
    CHECK(seen.size == sizeof(WNODE_EVENT_ITEM) + 8);
    CHECK(softndk::wdk::pool_live_allocations() == live);  // WMI freed the event
    PWNODE_EVENT_ITEM huge = make_event(sizeof(WNODE_EVENT_ITEM));
    huge->WnodeHeader.BufferSize = 0x10001;
    CHECK(IoWMIWriteEvent(huge) == STATUS_BUFFER_OVERFLOW);
    CHECK(seen.calls == 1);
    ExFreePool(huge);  // still the caller's
    REQUIRE(IoWMISetNotificationCallback(block, nullptr, nullptr) == STATUS_SUCCESS);
    REQUIRE(IoWMIWriteEvent(make_event(sizeof(WNODE_EVENT_ITEM))) == STATUS_SUCCESS);
    CHECK(seen.calls == 1);
    int not_a_block = 0;
    CHECK(IoWMISetNotificationCallback(&not_a_block, wmi_callback, &seen) ==
          STATUS_INVALID_PARAMETER);
    ObDereferenceObject(block);
    CHECK(IoWMIRegistrationControl(device, WMIREG_ACTION_DEREGISTER) == STATUS_SUCCESS);
    IoDeleteDevice(device);
}

namespace {
struct EnableSeen {
    int calls = 0;
    ULONG code = 99;
    UCHAR level = 0;
};
VOID NTAPI etw_enable(LPCGUID, ULONG ControlCode, UCHAR Level, ULONGLONG, ULONGLONG,
                      PEVENT_FILTER_DESCRIPTOR, PVOID CallbackContext) {
    auto *seen = static_cast<EnableSeen *>(CallbackContext);
    ++seen->calls;
    seen->code = ControlCode;
    seen->level = Level;
}
const GUID kProvider = {
    0x0badf00d, 0x1234, 0x5678, {0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78}};
}  // namespace

TEST_CASE("notifications: ETW - register, write events to the wdk logger, unregister") {
    auto &logger = softndk::wdk::logger();
    std::ostringstream captured;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
    const auto old_level = logger.level();
    logger.sinks().push_back(sink);
    logger.set_level(spdlog::level::trace);

    EnableSeen seen;
    REGHANDLE handle = 0;
    REQUIRE(EtwRegister(&kProvider, etw_enable, &seen, &handle) == STATUS_SUCCESS);
    CHECK(seen.calls == 1);  // the trace-level logger counts as an enabling session
    CHECK(seen.code == EVENT_CONTROL_CODE_ENABLE_PROVIDER);
    CHECK(seen.level == 5);
    EVENT_DESCRIPTOR descriptor{};
    descriptor.Id = 17;
    descriptor.Level = 4;
    descriptor.Keyword = 0x10;
    ULONG payload = 0xdeadbeef;
    EVENT_DATA_DESCRIPTOR data;
    EventDataDescCreate(&data, &payload, sizeof payload);
    CHECK(EtwWrite(handle, &descriptor, nullptr, 1, &data) == STATUS_SUCCESS);
    CHECK(EtwUnregister(handle) == STATUS_SUCCESS);
    CHECK(EtwUnregister(handle) == STATUS_INVALID_HANDLE);
    CHECK(EtwWrite(handle, &descriptor, nullptr, 1, &data) == STATUS_INVALID_HANDLE);

    logger.sinks().pop_back();
    logger.set_level(old_level);
    const std::string text = captured.str();
    CHECK(text.find("{0badf00d-1234-5678-9abc-def012345678} event 17") != std::string::npos);
    CHECK(text.find("[4]efbeadde") != std::string::npos);
}

namespace {
struct ReinitLog {
    std::vector<std::pair<char, ULONG>> calls;
};
VOID NTAPI reinit_boot(PDRIVER_OBJECT, PVOID Context, ULONG Count) {
    static_cast<ReinitLog *>(Context)->calls.emplace_back('b', Count);
}
VOID NTAPI reinit_again(PDRIVER_OBJECT DriverObject, PVOID Context, ULONG Count) {
    static_cast<ReinitLog *>(Context)->calls.emplace_back('n', Count);
    if (Count < 3) IoRegisterDriverReinitialization(DriverObject, reinit_again, Context);
}
}  // namespace

TEST_CASE("notifications: driver reinitialization - boot first, re-registration counts up") {
    DRIVER_OBJECT driver{};
    ReinitLog log;
    IoRegisterDriverReinitialization(&driver, reinit_again, &log);
    IoRegisterBootDriverReinitialization(&driver, reinit_boot, &log);
    CHECK(softndk::wdk::run_driver_reinitialization(&driver) == 4);
    CHECK(log.calls == std::vector<std::pair<char, ULONG>>{{'b', 1}, {'n', 1}, {'n', 2}, {'n', 3}});
    CHECK(softndk::wdk::run_driver_reinitialization(&driver) == 0);
}

TEST_CASE("notifications: ExInitializeDriverRuntime opts in to NX non-paged pool") {
    ExInitializeDriverRuntime(0);
    CHECK(ExDefaultNonPagedPoolType == NonPagedPool);
    ExInitializeDriverRuntime(DrvRtPoolNxOptIn);
    CHECK(ExDefaultNonPagedPoolType == NonPagedPoolNx);
}
