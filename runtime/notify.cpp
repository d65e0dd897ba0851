// Callbacks and notifications (contract in softndk_wdm_system.h): callback objects
// (ExCreateCallback, ExRegisterCallback, ExNotifyCallback, ExUnregisterCallback), power
// (Po*), Plug and Play (device interfaces and notifications), WMI (IoWMI*), ETW (Etw*),
// driver reinitialization and ExInitializeDriverRuntime.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include <evntrace.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

// A callback object (\Callback\Name).
struct _CALLBACK_OBJECT : softndk::wdk::KernelObject {
    explicit _CALLBACK_OBJECT(bool allow_multiple)
        : KernelObject(&softndk::wdk::g_callback_type), allow_multiple(allow_multiple) {}
    struct Registration {
        _CALLBACK_OBJECT *owner;
        PCALLBACK_FUNCTION function;
        PVOID context;
    };
    bool allow_multiple;
    std::mutex lock;
    std::list<Registration> registrations;  // addresses stable: a registration is the handle
};

POOL_TYPE ExDefaultNonPagedPoolType = NonPagedPool;
ULONG ExDefaultMdlProtection = 0;

namespace softndk::wdk {
namespace {

std::string guid_text(const GUID &guid) {
    return fmt::format("{{{:08x}-{:04x}-{:04x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}}}",
                       guid.Data1, guid.Data2, guid.Data3, guid.Data4[0], guid.Data4[1],
                       guid.Data4[2], guid.Data4[3], guid.Data4[4], guid.Data4[5], guid.Data4[6],
                       guid.Data4[7]);
}

bool same_guid(const GUID &a, const GUID &b) {
    return std::memcmp(&a, &b, sizeof(GUID)) == 0;
}

// The callback objects Windows creates at boot, created here at first use.
void create_system_callbacks() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (const wchar_t *name : {L"\\Callback\\SetSystemTime", L"\\Callback\\PowerState",
                                    L"\\Callback\\ProcessorAdd"}) {
            auto *object = new _CALLBACK_OBJECT(true);
            if (!NT_SUCCESS(insert_named_object(object, name, true)))
                logger().error("ExCreateCallback: could not create {}", fmt::ptr(name));
            object_dereference(object, "create_system_callbacks");  // the namespace keeps it
        }
    });
}

// ---- Driver reinitialization.
struct Reinitialization {
    PDRIVER_OBJECT driver;
    PDRIVER_REINITIALIZE routine;
    PVOID context;
    bool boot;
    ULONG count;
};
std::mutex g_reinit_lock;
std::vector<Reinitialization> g_reinit;
// The Count of the reinitialization routine running on this thread (0: none).
thread_local ULONG t_reinit_count = 0;

void register_reinitialization(PDRIVER_OBJECT driver, PDRIVER_REINITIALIZE routine, PVOID context,
                               bool boot, ULONG count) {
    std::lock_guard guard(g_reinit_lock);
    g_reinit.push_back({driver, routine, context, boot, count});
}

// ---- Power.
struct PowerSettingRegistration {
    GUID setting;
    PPOWER_SETTING_CALLBACK callback;
    PVOID context;
};
std::mutex g_power_lock;
std::vector<std::unique_ptr<PowerSettingRegistration>> g_power_settings;
std::map<std::pair<PDEVICE_OBJECT, int>, POWER_STATE> g_power_states;

// ---- Plug and Play.
struct PnpRegistration {
    IO_NOTIFICATION_EVENT_CATEGORY category;
    GUID interface_class;
    PDRIVER_NOTIFICATION_CALLBACK_ROUTINE callback;
    PVOID context;
    int running = 0;
    bool removed = false;
};
struct DeviceInterface {
    std::wstring name;  // \??\ROOT#SOFTNDK#NNNN#{guid}[\ref]
    GUID interface_class;
    bool enabled = false;
};
std::mutex g_pnp_lock;
sim::ConditionVariable g_pnp_idle{"PnP notification"};
std::list<std::shared_ptr<PnpRegistration>> g_pnp_registrations;
std::vector<DeviceInterface> g_interfaces;
std::map<PDEVICE_OBJECT, ULONG> g_interface_device_numbers;

// Calls `callback` of each live registration of `category` (and, for interfaces, `klass`),
// outside the lock; IoUnregisterPlugPlayNotification waits for running calls.
template <class F>
void for_each_registration(IO_NOTIFICATION_EVENT_CATEGORY category, const GUID *klass, F call) {
    std::vector<std::shared_ptr<PnpRegistration>> targets;
    {
        std::lock_guard guard(g_pnp_lock);
        for (auto &r : g_pnp_registrations) {
            if (r->removed || r->category != category) continue;
            if (klass != nullptr && !same_guid(r->interface_class, *klass)) continue;
            ++r->running;
            targets.push_back(r);
        }
    }
    for (auto &r : targets) {
        call(*r);
        std::lock_guard guard(g_pnp_lock);
        if (--r->running == 0) g_pnp_idle.notify_all();
    }
}

NTSTATUS notify_interface(PnpRegistration &r, const GUID &event, const DeviceInterface &interface) {
    UNICODE_STRING name;
    std::wstring text = interface.name;
    name.Buffer = text.data();
    name.Length = static_cast<USHORT>(text.size() * sizeof(WCHAR));
    name.MaximumLength = name.Length;
    DEVICE_INTERFACE_CHANGE_NOTIFICATION notification{};
    notification.Version = 1;
    notification.Size = sizeof notification;
    notification.Event = event;
    notification.InterfaceClassGuid = interface.interface_class;
    notification.SymbolicLinkName = &name;
    return r.callback(&notification, r.context);
}

// ---- WMI.
class WmiBlockObject : public KernelObject {
  public:
    explicit WmiBlockObject(const GUID &guid) : KernelObject(&g_wmi_block_type), guid(guid) {}
    ~WmiBlockObject() override;
    GUID guid;
    WMI_NOTIFICATION_CALLBACK_POINTER callback = nullptr;
    PVOID context = nullptr;
};
std::mutex g_wmi_lock;
std::vector<WmiBlockObject *> g_wmi_blocks;
std::vector<PDEVICE_OBJECT> g_wmi_devices;
constexpr ULONG kMaxWmiEventSize = 0x10000;
constexpr ULONG kPnpTag = 0x506E7052;  // "RpnP"

WmiBlockObject::~WmiBlockObject() {
    std::lock_guard guard(g_wmi_lock);
    g_wmi_blocks.erase(std::remove(g_wmi_blocks.begin(), g_wmi_blocks.end(), this),
                       g_wmi_blocks.end());
}

// ---- ETW.
struct EtwProvider {
    GUID id;
};
std::mutex g_etw_lock;
std::map<REGHANDLE, EtwProvider> g_etw_providers;
REGHANDLE g_next_etw_handle = 0x1000;

}  // namespace

int run_driver_reinitialization(PDRIVER_OBJECT driver) {
    int calls = 0;
    for (bool boot : {true, false}) {
        for (;;) {
            Reinitialization next{};
            {
                std::lock_guard guard(g_reinit_lock);
                auto found = std::find_if(g_reinit.begin(), g_reinit.end(), [&](auto &r) {
                    return r.driver == driver && r.boot == boot;
                });
                if (found == g_reinit.end()) break;
                next = *found;
                g_reinit.erase(found);
            }
            // A routine that registers again from here is called again with Count + 1.
            t_reinit_count = next.count;
            next.routine(driver, next.context, next.count);
            t_reinit_count = 0;
            ++calls;
        }
    }
    return calls;
}

}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

NTSTATUS NTAPI ExCreateCallback(PCALLBACK_OBJECT *CallbackObject,
                                POBJECT_ATTRIBUTES ObjectAttributes, BOOLEAN Create,
                                BOOLEAN AllowMultipleCallbacks) {
    wdk::require_passive("ExCreateCallback");
    if (CallbackObject == nullptr || ObjectAttributes == nullptr) return STATUS_INVALID_PARAMETER;
    *CallbackObject = nullptr;
    wdk::create_system_callbacks();
    const std::wstring name = wdk::normalize_object_name(wdk::object_name(ObjectAttributes));
    if (!name.empty()) {
        if (wdk::KernelObject *existing = wdk::lookup_named_object(name)) {
            if (existing->type() != &wdk::g_callback_type) {
                wdk::object_dereference(existing, "ExCreateCallback");
                return STATUS_OBJECT_TYPE_MISMATCH;
            }
            *CallbackObject = static_cast<PCALLBACK_OBJECT>(existing);
            return STATUS_SUCCESS;
        }
    }
    if (!Create) return name.empty() ? STATUS_INVALID_PARAMETER : STATUS_OBJECT_NAME_NOT_FOUND;
    auto *object = new (std::nothrow) _CALLBACK_OBJECT(AllowMultipleCallbacks != FALSE);
    if (object == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    if (!name.empty()) {
        const NTSTATUS status = wdk::insert_named_object(
            object, name, (ObjectAttributes->Attributes & OBJ_PERMANENT) != 0);
        if (!NT_SUCCESS(status)) {
            wdk::object_dereference(object, "ExCreateCallback");
            return status;
        }
    }
    *CallbackObject = object;
    return STATUS_SUCCESS;
}

PVOID NTAPI ExRegisterCallback(PCALLBACK_OBJECT CallbackObject, PCALLBACK_FUNCTION CallbackFunction,
                               PVOID CallbackContext) {
    wdk::require_irql_at_most(APC_LEVEL, "ExRegisterCallback");
    if (CallbackObject == nullptr || CallbackFunction == nullptr) return nullptr;
    std::lock_guard guard(CallbackObject->lock);
    if (!CallbackObject->allow_multiple && !CallbackObject->registrations.empty()) return nullptr;
    // The registration references the object, as on Windows.
    wdk::object_reference(CallbackObject, "ExRegisterCallback");
    CallbackObject->registrations.push_back({CallbackObject, CallbackFunction, CallbackContext});
    return &CallbackObject->registrations.back();
}

VOID NTAPI ExUnregisterCallback(PVOID CbRegistration) {
    wdk::require_irql_at_most(APC_LEVEL, "ExUnregisterCallback");
    auto *registration = static_cast<_CALLBACK_OBJECT::Registration *>(CbRegistration);
    if (registration == nullptr) wdk::fatal("ExUnregisterCallback: NULL registration");
    _CALLBACK_OBJECT *owner = registration->owner;
    {
        std::lock_guard guard(owner->lock);
        auto &all = owner->registrations;
        auto found =
            std::find_if(all.begin(), all.end(), [&](auto &r) { return &r == registration; });
        if (found == all.end()) wdk::fatal("ExUnregisterCallback: not a registration");
        all.erase(found);
    }
    wdk::object_dereference(owner, "ExUnregisterCallback");
}

VOID NTAPI ExNotifyCallback(PVOID CallbackObject, PVOID Argument1, PVOID Argument2) {
    wdk::require_irql_at_most(DISPATCH_LEVEL, "ExNotifyCallback");
    auto *object = static_cast<PCALLBACK_OBJECT>(CallbackObject);
    if (object == nullptr) return;
    std::vector<_CALLBACK_OBJECT::Registration> snapshot;
    {
        std::lock_guard guard(object->lock);
        snapshot.assign(object->registrations.begin(), object->registrations.end());
    }
    for (auto &r : snapshot)
        r.function(r.context, Argument1, Argument2);
}

VOID NTAPI ExInitializeDriverRuntime(ULONG RuntimeFlags) {
    if ((RuntimeFlags & DrvRtPoolNxOptIn) != 0) ExDefaultNonPagedPoolType = NonPagedPoolNx;
}

VOID NTAPI IoRegisterDriverReinitialization(PDRIVER_OBJECT DriverObject,
                                            PDRIVER_REINITIALIZE DriverReinitializationRoutine,
                                            PVOID Context) {
    wdk::require_passive("IoRegisterDriverReinitialization");
    wdk::register_reinitialization(DriverObject, DriverReinitializationRoutine, Context, false,
                                   wdk::t_reinit_count + 1);
}

VOID NTAPI IoRegisterBootDriverReinitialization(PDRIVER_OBJECT DriverObject,
                                                PDRIVER_REINITIALIZE DriverReinitializationRoutine,
                                                PVOID Context) {
    wdk::require_passive("IoRegisterBootDriverReinitialization");
    wdk::register_reinitialization(DriverObject, DriverReinitializationRoutine, Context, true,
                                   wdk::t_reinit_count + 1);
}

// ---- Power.

NTSTATUS NTAPI PoCallDriver(PDEVICE_OBJECT DeviceObject, PIRP Irp) {
    return IoCallDriver(DeviceObject, Irp);
}

VOID NTAPI PoStartNextPowerIrp(PIRP Irp) {
    (void)Irp;
}

POWER_STATE NTAPI PoSetPowerState(PDEVICE_OBJECT DeviceObject, POWER_STATE_TYPE Type,
                                  POWER_STATE State) {
    wdk::require_irql_at_most(DISPATCH_LEVEL, "PoSetPowerState");
    std::lock_guard guard(wdk::g_power_lock);
    const auto key = std::pair{DeviceObject, static_cast<int>(Type)};
    POWER_STATE previous;
    auto found = wdk::g_power_states.find(key);
    if (found != wdk::g_power_states.end()) {
        previous = found->second;
    } else if (Type == DevicePowerState) {
        previous.DeviceState = PowerDeviceD0;
    } else {
        previous.SystemState = PowerSystemWorking;
    }
    wdk::g_power_states[key] = State;
    return previous;
}

BOOLEAN NTAPI PoQueryWatchdogTime(PDEVICE_OBJECT Pdo, PULONG SecondsRemaining) {
    (void)Pdo;
    if (SecondsRemaining != nullptr) *SecondsRemaining = 0;
    return FALSE;
}

NTSTATUS NTAPI PoRegisterPowerSettingCallback(PDEVICE_OBJECT DeviceObject, LPCGUID SettingGuid,
                                              PPOWER_SETTING_CALLBACK Callback, PVOID Context,
                                              PVOID *Handle) {
    (void)DeviceObject;
    wdk::require_passive("PoRegisterPowerSettingCallback");
    if (SettingGuid == nullptr || Callback == nullptr) return STATUS_INVALID_PARAMETER;
    auto registration = std::make_unique<wdk::PowerSettingRegistration>(
        wdk::PowerSettingRegistration{*SettingGuid, Callback, Context});
    if (Handle != nullptr) *Handle = registration.get();  // NULL: a registration for good
    {
        std::lock_guard guard(wdk::g_power_lock);
        wdk::g_power_settings.push_back(std::move(registration));
    }
    struct Known {
        const GUID *guid;
        ULONG value;
    };
    for (const Known &known :
         {Known{&GUID_ACDC_POWER_SOURCE, 0}, Known{&GUID_CONSOLE_DISPLAY_STATE, 1},
          Known{&GUID_SYSTEM_AWAYMODE, 0}, Known{&GUID_LIDSWITCH_STATE_CHANGE, 1}}) {
        if (wdk::same_guid(*known.guid, *SettingGuid)) {
            ULONG value = known.value;
            Callback(SettingGuid, &value, sizeof value, Context);
        }
    }
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI PoUnregisterPowerSettingCallback(PVOID Handle) {
    wdk::require_passive("PoUnregisterPowerSettingCallback");
    std::lock_guard guard(wdk::g_power_lock);
    auto &all = wdk::g_power_settings;
    auto found = std::find_if(all.begin(), all.end(), [&](auto &r) { return r.get() == Handle; });
    if (found == all.end()) return STATUS_INVALID_PARAMETER;
    all.erase(found);
    return STATUS_SUCCESS;
}

// ---- Plug and Play.

VOID NTAPI IoInvalidateDeviceRelations(PDEVICE_OBJECT DeviceObject, DEVICE_RELATION_TYPE Type) {
    wdk::require_irql_at_most(DISPATCH_LEVEL, "IoInvalidateDeviceRelations");
    wdk::logger().debug("IoInvalidateDeviceRelations({}, {}): no PnP manager; nothing to do",
                        static_cast<void *>(DeviceObject), static_cast<int>(Type));
}

NTSTATUS NTAPI IoGetDeviceProperty(PDEVICE_OBJECT DeviceObject,
                                   DEVICE_REGISTRY_PROPERTY DeviceProperty, ULONG BufferLength,
                                   PVOID PropertyBuffer, PULONG ResultLength) {
    (void)DeviceObject;
    (void)DeviceProperty;
    (void)BufferLength;
    (void)PropertyBuffer;
    wdk::require_passive("IoGetDeviceProperty");
    if (ResultLength != nullptr) *ResultLength = 0;
    return STATUS_INVALID_DEVICE_REQUEST;
}

NTSTATUS NTAPI IoGetDevicePropertyData(PDEVICE_OBJECT Pdo, CONST DEVPROPKEY *PropertyKey, LCID Lcid,
                                       ULONG Flags, ULONG Size, PVOID Data, PULONG RequiredSize,
                                       PDEVPROPTYPE Type) {
    (void)Pdo;
    (void)PropertyKey;
    (void)Lcid;
    (void)Flags;
    (void)Size;
    (void)Data;
    wdk::require_passive("IoGetDevicePropertyData");
    if (RequiredSize != nullptr) *RequiredSize = 0;
    if (Type != nullptr) *Type = 0;  // DEVPROP_TYPE_EMPTY
    return STATUS_INVALID_DEVICE_REQUEST;
}

NTSTATUS NTAPI IoRegisterPlugPlayNotification(IO_NOTIFICATION_EVENT_CATEGORY EventCategory,
                                              ULONG EventCategoryFlags, PVOID EventCategoryData,
                                              PDRIVER_OBJECT DriverObject,
                                              PDRIVER_NOTIFICATION_CALLBACK_ROUTINE CallbackRoutine,
                                              PVOID Context, PVOID *NotificationEntry) {
    (void)DriverObject;
    wdk::require_passive("IoRegisterPlugPlayNotification");
    if (NotificationEntry == nullptr) return STATUS_INVALID_PARAMETER;
    *NotificationEntry = nullptr;
    if (CallbackRoutine == nullptr) return STATUS_INVALID_PARAMETER;
    if (EventCategory == EventCategoryDeviceInterfaceChange && EventCategoryData == nullptr)
        return STATUS_INVALID_PARAMETER;
    auto registration = std::make_shared<wdk::PnpRegistration>();
    registration->category = EventCategory;
    if (EventCategory == EventCategoryDeviceInterfaceChange)
        registration->interface_class = *static_cast<const GUID *>(EventCategoryData);
    registration->callback = CallbackRoutine;
    registration->context = Context;
    std::vector<wdk::DeviceInterface> existing;
    {
        std::lock_guard guard(wdk::g_pnp_lock);
        wdk::g_pnp_registrations.push_back(registration);
        if (EventCategory == EventCategoryDeviceInterfaceChange &&
            (EventCategoryFlags & PNPNOTIFY_DEVICE_INTERFACE_INCLUDE_EXISTING_INTERFACES) != 0) {
            for (auto &i : wdk::g_interfaces)
                if (i.enabled && wdk::same_guid(i.interface_class, registration->interface_class))
                    existing.push_back(i);
        }
    }
    for (auto &i : existing)
        wdk::notify_interface(*registration, GUID_DEVICE_INTERFACE_ARRIVAL, i);
    *NotificationEntry = registration.get();
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoUnregisterPlugPlayNotification(PVOID NotificationEntry) {
    wdk::require_passive("IoUnregisterPlugPlayNotification");
    std::unique_lock lock(wdk::g_pnp_lock);
    auto &all = wdk::g_pnp_registrations;
    auto found =
        std::find_if(all.begin(), all.end(), [&](auto &r) { return r.get() == NotificationEntry; });
    if (found == all.end()) return STATUS_INVALID_PARAMETER;
    std::shared_ptr<wdk::PnpRegistration> registration = *found;
    registration->removed = true;
    all.erase(found);
    wdk::g_pnp_idle.wait(lock, [&] { return registration->running == 0; });
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoRegisterDeviceInterface(PDEVICE_OBJECT PhysicalDeviceObject,
                                         CONST GUID *InterfaceClassGuid,
                                         PUNICODE_STRING ReferenceString,
                                         PUNICODE_STRING SymbolicLinkName) {
    wdk::require_passive("IoRegisterDeviceInterface");
    if (PhysicalDeviceObject == nullptr || InterfaceClassGuid == nullptr ||
        SymbolicLinkName == nullptr)
        return STATUS_INVALID_PARAMETER;
    std::wstring name;
    {
        std::lock_guard guard(wdk::g_pnp_lock);
        auto [it, inserted] = wdk::g_interface_device_numbers.emplace(
            PhysicalDeviceObject, static_cast<ULONG>(wdk::g_interface_device_numbers.size()));
        const std::string guid = wdk::guid_text(*InterfaceClassGuid);
        const std::string prefix = fmt::format("\\??\\ROOT#SOFTNDK#{:04}#", it->second);
        for (char c : prefix + guid)
            name.push_back(static_cast<unsigned char>(c));
        if (ReferenceString != nullptr && ReferenceString->Length != 0)
            name += L"\\" + wdk::to_wstring(ReferenceString);
        const std::wstring key = wdk::upcase_name(name);
        if (std::none_of(wdk::g_interfaces.begin(), wdk::g_interfaces.end(),
                         [&](auto &i) { return wdk::upcase_name(i.name) == key; }))
            wdk::g_interfaces.push_back({name, *InterfaceClassGuid, false});
    }
    const size_t bytes = name.size() * sizeof(WCHAR);
    if (bytes + sizeof(WCHAR) > MAXUSHORT) return STATUS_INVALID_PARAMETER;
    auto *buffer =
        static_cast<PWCH>(ExAllocatePoolWithTag(PagedPool, bytes + sizeof(WCHAR), wdk::kPnpTag));
    if (buffer == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    std::memcpy(buffer, name.c_str(), bytes + sizeof(WCHAR));
    SymbolicLinkName->Buffer = buffer;
    SymbolicLinkName->Length = static_cast<USHORT>(bytes);
    SymbolicLinkName->MaximumLength = static_cast<USHORT>(bytes + sizeof(WCHAR));
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoSetDeviceInterfaceState(PUNICODE_STRING SymbolicLinkName, BOOLEAN Enable) {
    wdk::require_passive("IoSetDeviceInterfaceState");
    const std::wstring key =
        wdk::upcase_name(wdk::normalize_object_name(wdk::to_wstring(SymbolicLinkName)));
    wdk::DeviceInterface changed;
    {
        std::lock_guard guard(wdk::g_pnp_lock);
        auto found = std::find_if(wdk::g_interfaces.begin(), wdk::g_interfaces.end(),
                                  [&](auto &i) { return wdk::upcase_name(i.name) == key; });
        if (found == wdk::g_interfaces.end()) return STATUS_OBJECT_NAME_NOT_FOUND;
        if (found->enabled == (Enable != FALSE))
            return Enable ? STATUS_OBJECT_NAME_EXISTS : STATUS_OBJECT_NAME_NOT_FOUND;
        found->enabled = Enable != FALSE;
        changed = *found;
    }
    const GUID &event = Enable ? GUID_DEVICE_INTERFACE_ARRIVAL : GUID_DEVICE_INTERFACE_REMOVAL;
    wdk::for_each_registration(
        EventCategoryDeviceInterfaceChange, &changed.interface_class,
        [&](wdk::PnpRegistration &r) { wdk::notify_interface(r, event, changed); });
    return STATUS_SUCCESS;
}

namespace {
struct TargetChangeWork {
    WORK_QUEUE_ITEM item;
    std::vector<UCHAR> notification;
    PDEVICE_CHANGE_COMPLETE_CALLBACK callback;
    PVOID context;
};

VOID NTAPI deliver_target_change(PVOID parameter) {
    auto *work = static_cast<TargetChangeWork *>(parameter);
    wdk::for_each_registration(
        EventCategoryTargetDeviceChange, nullptr,
        [&](wdk::PnpRegistration &r) { r.callback(work->notification.data(), r.context); });
    if (work->callback != nullptr) work->callback(work->context);
    delete work;
}
}  // namespace

NTSTATUS NTAPI IoReportTargetDeviceChangeAsynchronous(PDEVICE_OBJECT PhysicalDeviceObject,
                                                      PVOID NotificationStructure,
                                                      PDEVICE_CHANGE_COMPLETE_CALLBACK Callback,
                                                      PVOID Context) {
    wdk::require_irql_at_most(DISPATCH_LEVEL, "IoReportTargetDeviceChangeAsynchronous");
    if (PhysicalDeviceObject == nullptr || NotificationStructure == nullptr)
        return STATUS_INVALID_PARAMETER;
    const auto *notification =
        static_cast<const TARGET_DEVICE_CUSTOM_NOTIFICATION *>(NotificationStructure);
    if (notification->Version != 1 ||
        notification->Size < FIELD_OFFSET(TARGET_DEVICE_CUSTOM_NOTIFICATION, CustomDataBuffer))
        return STATUS_INVALID_DEVICE_REQUEST;
    for (const GUID *system :
         {&GUID_TARGET_DEVICE_QUERY_REMOVE, &GUID_TARGET_DEVICE_REMOVE_CANCELLED,
          &GUID_TARGET_DEVICE_REMOVE_COMPLETE}) {
        if (wdk::same_guid(*system, notification->Event)) return STATUS_INVALID_DEVICE_REQUEST;
    }
    auto *work = new (std::nothrow) TargetChangeWork{};
    if (work == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    const auto *bytes = static_cast<const UCHAR *>(NotificationStructure);
    work->notification.assign(bytes, bytes + notification->Size);
    work->callback = Callback;
    work->context = Context;
    ExInitializeWorkItem(&work->item, deliver_target_change, work);
    ExQueueWorkItem(&work->item, DelayedWorkQueue);
    return STATUS_PENDING;
}

// ---- WMI.

NTSTATUS NTAPI IoWMIRegistrationControl(PDEVICE_OBJECT DeviceObject, ULONG Action) {
    wdk::require_passive("IoWMIRegistrationControl");
    if (DeviceObject == nullptr) return STATUS_INVALID_PARAMETER;
    std::lock_guard guard(wdk::g_wmi_lock);
    auto &devices = wdk::g_wmi_devices;
    auto found = std::find(devices.begin(), devices.end(), DeviceObject);
    switch (Action & 0xFF) {
        case WMIREG_ACTION_REGISTER:
            if (found != devices.end()) return STATUS_OBJECT_NAME_COLLISION;
            devices.push_back(DeviceObject);
            return STATUS_SUCCESS;
        case WMIREG_ACTION_DEREGISTER:
            if (found == devices.end()) return STATUS_INVALID_PARAMETER;
            devices.erase(found);
            return STATUS_SUCCESS;
        case WMIREG_ACTION_REREGISTER:
        case WMIREG_ACTION_UPDATE_GUIDS:
        case WMIREG_ACTION_BLOCK_IRPS:
            return found == devices.end() ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
        default:
            return STATUS_INVALID_PARAMETER;
    }
}

ULONG NTAPI IoWMIDeviceObjectToProviderId(PDEVICE_OBJECT DeviceObject) {
    return static_cast<ULONG>(reinterpret_cast<ULONG_PTR>(DeviceObject));
}

NTSTATUS NTAPI IoWMIOpenBlock(LPCGUID Guid, ULONG DesiredAccess, PVOID *DataBlockObject) {
    (void)DesiredAccess;
    wdk::require_passive("IoWMIOpenBlock");
    if (Guid == nullptr || DataBlockObject == nullptr) return STATUS_INVALID_PARAMETER;
    auto *block = new (std::nothrow) wdk::WmiBlockObject(*Guid);
    if (block == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    {
        std::lock_guard guard(wdk::g_wmi_lock);
        wdk::g_wmi_blocks.push_back(block);
    }
    *DataBlockObject = block;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoWMISetNotificationCallback(PVOID Object,
                                            WMI_NOTIFICATION_CALLBACK_POINTER Callback,
                                            PVOID Context) {
    wdk::require_passive("IoWMISetNotificationCallback");
    wdk::KernelObject *object = wdk::as_kernel_object(Object);
    if (object == nullptr || object->type() != &wdk::g_wmi_block_type)
        return STATUS_INVALID_PARAMETER;
    auto *block = static_cast<wdk::WmiBlockObject *>(object);
    std::lock_guard guard(wdk::g_wmi_lock);
    block->callback = Callback;
    block->context = Context;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoWMIWriteEvent(PVOID WnodeEventItem) {
    wdk::require_irql_at_most(DISPATCH_LEVEL, "IoWMIWriteEvent");
    auto *event = static_cast<PWNODE_EVENT_ITEM>(WnodeEventItem);
    if (event == nullptr) return STATUS_INVALID_PARAMETER;
    if (event->WnodeHeader.BufferSize > wdk::kMaxWmiEventSize) return STATUS_BUFFER_OVERFLOW;
    struct Target {
        WMI_NOTIFICATION_CALLBACK_POINTER callback;
        PVOID context;
    };
    std::vector<Target> targets;
    {
        std::lock_guard guard(wdk::g_wmi_lock);
        for (auto *block : wdk::g_wmi_blocks)
            if (block->callback != nullptr && wdk::same_guid(block->guid, event->WnodeHeader.Guid))
                targets.push_back({block->callback, block->context});
    }
    wdk::logger().trace("WMI event {} ({} bytes, provider {:#x}) to {} callback(s)",
                        wdk::guid_text(event->WnodeHeader.Guid), event->WnodeHeader.BufferSize,
                        event->WnodeHeader.ProviderId, targets.size());
    for (auto &t : targets)
        t.callback(event, t.context);
    ExFreePool(event);
    return STATUS_SUCCESS;
}

// ---- ETW.

NTSTATUS NTAPI EtwRegister(LPCGUID ProviderId, PETWENABLECALLBACK EnableCallback,
                           PVOID CallbackContext, PREGHANDLE RegHandle) {
    wdk::require_passive("EtwRegister");
    if (ProviderId == nullptr || RegHandle == nullptr) return STATUS_INVALID_PARAMETER;
    {
        std::lock_guard guard(wdk::g_etw_lock);
        *RegHandle = wdk::g_next_etw_handle++;
        wdk::g_etw_providers.emplace(*RegHandle, wdk::EtwProvider{*ProviderId});
    }
    if (EnableCallback != nullptr && wdk::logger().should_log(spdlog::level::trace))
        EnableCallback(ProviderId, EVENT_CONTROL_CODE_ENABLE_PROVIDER, TRACE_LEVEL_VERBOSE, ~0ULL,
                       0, nullptr, CallbackContext);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI EtwUnregister(REGHANDLE RegHandle) {
    wdk::require_passive("EtwUnregister");
    std::lock_guard guard(wdk::g_etw_lock);
    return wdk::g_etw_providers.erase(RegHandle) != 0 ? STATUS_SUCCESS : STATUS_INVALID_HANDLE;
}

NTSTATUS NTAPI EtwWrite(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor, LPCGUID ActivityId,
                        ULONG UserDataCount, PEVENT_DATA_DESCRIPTOR UserData) {
    (void)ActivityId;
    GUID provider;
    {
        std::lock_guard guard(wdk::g_etw_lock);
        auto found = wdk::g_etw_providers.find(RegHandle);
        if (found == wdk::g_etw_providers.end()) return STATUS_INVALID_HANDLE;
        provider = found->second.id;
    }
    if (EventDescriptor == nullptr || (UserDataCount != 0 && UserData == nullptr))
        return STATUS_INVALID_PARAMETER;
    if (!wdk::logger().should_log(spdlog::level::trace)) return STATUS_SUCCESS;
    std::string data;
    for (ULONG i = 0; i < UserDataCount; ++i) {
        const auto *bytes =
            reinterpret_cast<const UCHAR *>(static_cast<ULONG_PTR>(UserData[i].Ptr));
        data += fmt::format(" [{}]", UserData[i].Size);
        for (ULONG k = 0; k < std::min<ULONG>(UserData[i].Size, 64); ++k)
            data += fmt::format("{:02x}", bytes[k]);
        if (UserData[i].Size > 64) data += "...";
    }
    wdk::logger().trace("ETW {} event {} v{} level {} opcode {} task {} keyword {:#x}:{}",
                        wdk::guid_text(provider), EventDescriptor->Id, EventDescriptor->Version,
                        EventDescriptor->Level, EventDescriptor->Opcode, EventDescriptor->Task,
                        EventDescriptor->Keyword, data);
    return STATUS_SUCCESS;
}

}  // extern "C"
