// The object manager beyond threads (contract in softndk_wdm_system.h): KernelObject
// reference counting, the object namespace (directories, symbolic links, named objects),
// ObReferenceObjectByPointer / ObOpenObjectByPointer / ZwMakeTemporaryObject, the process
// object and Ps* ids, and object callbacks (ObRegisterCallbacks).
#include <unistd.h>

#include <cwctype>
#include <map>
#include <mutex>
#include <new>
#include <unordered_set>

#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

// The one process object: the Linux process. PEPROCESS points at it (struct _EPROCESS itself
// stays opaque, as in the WDK).
struct ProcessObject : softndk::wdk::KernelObject {
    ProcessObject() : KernelObject(&softndk::wdk::g_process_type) {}
};

namespace softndk::wdk {

_OBJECT_TYPE g_process_type{"Process"};
_OBJECT_TYPE g_file_type{"File"};
_OBJECT_TYPE g_callback_type{"Callback"};
_OBJECT_TYPE g_key_type{"Key"};
_OBJECT_TYPE g_directory_type{"Directory"};
_OBJECT_TYPE g_symbolic_link_type{"SymbolicLink"};
_OBJECT_TYPE g_transaction_type{"TmTx"};
_OBJECT_TYPE g_transaction_manager_type{"TmTm"};
_OBJECT_TYPE g_resource_manager_type{"TmRm"};
_OBJECT_TYPE g_enlistment_type{"TmEn"};
_OBJECT_TYPE g_wmi_block_type{"WmiGuid"};

namespace {

// The live KernelObjects, so that a raw pointer handed to Ob* can be told apart from a
// thread object or garbage.
class LiveObjects {
  public:
    void add(KernelObject *object) {
        std::lock_guard guard(lock_);
        objects_.insert(object);
    }
    void remove(KernelObject *object) {
        std::lock_guard guard(lock_);
        objects_.erase(object);
    }
    bool contains(const void *object) {
        std::lock_guard guard(lock_);
        return objects_.count(static_cast<KernelObject *>(const_cast<void *>(object))) != 0;
    }

  private:
    std::mutex lock_;
    std::unordered_set<KernelObject *> objects_;
};

LiveObjects &live_objects() {
    return fork_local_instance<LiveObjects>();
}

// An object directory (ZwCreateDirectoryObject).
class DirectoryObject : public KernelObject {
  public:
    DirectoryObject() : KernelObject(&g_directory_type) {}
};

// A symbolic link (IoCreateSymbolicLink).
class SymbolicLinkObject : public KernelObject {
  public:
    explicit SymbolicLinkObject(std::wstring target)
        : KernelObject(&g_symbolic_link_type), target_(std::move(target)) {}

  private:
    std::wstring target_;
};

}  // namespace

// Names -> objects. The map does not own a reference (except for permanent objects, whose
// reference is counted in the object's own count): an object whose count reaches 0 leaves
// the map under its lock before it is destroyed, and a lookup only revives objects whose
// count is above 0.
class ObjectNamespace {
  public:
    NTSTATUS insert(KernelObject *object, const std::wstring &name, bool permanent) {
        std::lock_guard guard(lock_);
        const std::wstring key = upcase_name(name);
        if (names_.count(key) != 0 || builtin(key)) return STATUS_OBJECT_NAME_COLLISION;
        const size_t slash = key.rfind(L'\\');
        const std::wstring parent = slash == 0 ? L"\\" : key.substr(0, slash);
        if (!builtin(parent)) {
            auto found = names_.find(parent);
            if (found == names_.end() || found->second->type() != &g_directory_type)
                return STATUS_OBJECT_PATH_NOT_FOUND;
        }
        names_.emplace(key, object);
        object->name_ = name;
        if (permanent) {
            object->permanent_ = true;
            object->references_.fetch_add(1, std::memory_order_relaxed);
        }
        return STATUS_SUCCESS;
    }

    KernelObject *lookup(const std::wstring &name) {
        std::lock_guard guard(lock_);
        auto found = names_.find(upcase_name(name));
        if (found == names_.end()) return nullptr;
        LONG_PTR count = found->second->references_.load(std::memory_order_relaxed);
        while (count > 0) {
            if (found->second->references_.compare_exchange_weak(count, count + 1))
                return found->second;
        }
        return nullptr;  // being destroyed
    }

    // Called with the object's count at 0: removes its name. True if the object may be
    // destroyed (nobody revived it meanwhile - lookups cannot, so always true).
    void remove(KernelObject *object) {
        std::lock_guard guard(lock_);
        if (object->name_.empty()) return;
        auto found = names_.find(upcase_name(object->name_));
        if (found != names_.end() && found->second == object) names_.erase(found);
    }

    // Clears the permanent flag; true if the namespace's reference must now be dropped.
    bool clear_permanent(KernelObject *object) {
        std::lock_guard guard(lock_);
        const bool was = object->permanent_;
        object->permanent_ = false;
        return was;
    }

  private:
    static bool builtin(const std::wstring &key) {
        return key == L"\\" || key == L"\\??" || key == L"\\DEVICE" || key == L"\\DRIVER" ||
               key == L"\\CALLBACK" || key == L"\\KERNELOBJECTS" || key == L"\\BASENAMEDOBJECTS";
    }

    std::mutex lock_;
    std::map<std::wstring, KernelObject *> names_;
};

namespace {

ObjectNamespace &object_namespace() {
    return fork_local_instance<ObjectNamespace>();
}

[[noreturn]] void unknown_object(PVOID object, const char *caller) {
    fatal(fmt::format("{}: {} is not an object SoftNDK's object manager knows", caller, object));
}

}  // namespace

void require_irql_at_most(KIRQL highest, const char *caller) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > highest)
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, 0, irql, highest, 0,
                 fmt::format("{} at IRQL {} (it needs at most {})", caller, irql, highest));
}

KernelObject::KernelObject(POBJECT_TYPE type) : type_(type) {
    live_objects().add(this);
}

KernelObject::~KernelObject() {
    live_objects().remove(this);
}

KernelObject *as_kernel_object(PVOID object) {
    return live_objects().contains(object) ? static_cast<KernelObject *>(object) : nullptr;
}

LONG_PTR object_reference(PVOID object, const char *caller) {
    if (is_io_object(object)) return reference_io_object(object);  // devices (io_manager.cpp)
    if (KernelObject *kernel = as_kernel_object(object))
        return kernel->references_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!is_thread_object(object)) unknown_object(object, caller);
    return thread_reference(object);
}

LONG_PTR object_dereference(PVOID object, const char *caller) {
    if (is_io_object(object)) return dereference_io_object(object);
    if (KernelObject *kernel = as_kernel_object(object)) {
        const LONG_PTR remaining = kernel->references_.fetch_sub(1, std::memory_order_acq_rel) - 1;
        if (remaining < 0)
            fatal(fmt::format("{}: {} object {} dereferenced more often than referenced", caller,
                              kernel->type()->name, object));
        if (remaining == 0) {
            object_namespace().remove(kernel);
            delete kernel;
        }
        return remaining;
    }
    if (!is_thread_object(object)) unknown_object(object, caller);
    return thread_dereference(object, caller);
}

POBJECT_TYPE object_type(PVOID object, const char *caller) {
    if (KernelObject *kernel = as_kernel_object(object)) return kernel->type();
    if (!is_thread_object(object)) unknown_object(object, caller);
    return *PsThreadType;
}

std::wstring upcase_name(std::wstring_view text) {
    std::wstring out(text);
    for (auto &c : out)
        c = RtlUpcaseUnicodeChar(c);
    return out;
}

std::wstring to_wstring(const UNICODE_STRING *string) {
    if (string == nullptr || string->Buffer == nullptr) return {};
    return std::wstring(string->Buffer, string->Length / sizeof(WCHAR));
}

std::wstring object_name(const OBJECT_ATTRIBUTES *attributes) {
    return attributes == nullptr ? std::wstring{} : to_wstring(attributes->ObjectName);
}

std::wstring normalize_object_name(std::wstring_view name) {
    const std::wstring upper = upcase_name(name);
    for (std::wstring_view alias :
         {std::wstring_view(L"\\DOSDEVICES\\"), std::wstring_view(L"\\GLOBAL??\\")}) {
        if (upper.starts_with(alias)) return L"\\??\\" + std::wstring(name.substr(alias.size()));
    }
    if (upper == L"\\DOSDEVICES" || upper == L"\\GLOBAL??") return L"\\??";
    return std::wstring(name);
}

NTSTATUS insert_named_object(KernelObject *object, const std::wstring &name, bool permanent) {
    return object_namespace().insert(object, name, permanent);
}

KernelObject *lookup_named_object(const std::wstring &name) {
    return object_namespace().lookup(normalize_object_name(name));
}

void make_temporary(KernelObject *object) {
    if (object_namespace().clear_permanent(object)) object_dereference(object, "make_temporary");
}

namespace {

PEPROCESS process_object() {
    // Created once, never destroyed (its creation reference is the system's).
    static ProcessObject *process = new ProcessObject;
    return reinterpret_cast<PEPROCESS>(static_cast<KernelObject *>(process));
}

// Object-callback registrations (ObRegisterCallbacks), by altitude.
struct ObRegistration {
    std::wstring altitude;
};
std::mutex g_ob_lock;
std::map<std::wstring, ObRegistration *> g_ob_registrations;

// Process-creation notify routines.
std::mutex g_process_notify_lock;
std::vector<PCREATE_PROCESS_NOTIFY_ROUTINE_EX> g_process_notify;
constexpr size_t kMaxProcessNotifyRoutines = 64;

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

namespace {
POBJECT_TYPE g_process_type_pointer = &wdk::g_process_type;
POBJECT_TYPE g_file_type_pointer = &wdk::g_file_type;
POBJECT_TYPE g_callback_type_pointer = &wdk::g_callback_type;
POBJECT_TYPE g_key_type_pointer = &wdk::g_key_type;
POBJECT_TYPE g_transaction_type_pointer = &wdk::g_transaction_type;
}  // namespace

POBJECT_TYPE *PsProcessType = &g_process_type_pointer;
POBJECT_TYPE *IoFileObjectType = &g_file_type_pointer;
POBJECT_TYPE *ExCallbackObjectType = &g_callback_type_pointer;
POBJECT_TYPE *CmKeyObjectType = &g_key_type_pointer;
POBJECT_TYPE *TmTransactionObjectType = &g_transaction_type_pointer;

extern "C" {

NTSTATUS NTAPI ObReferenceObjectByPointer(PVOID Object, ACCESS_MASK DesiredAccess,
                                          POBJECT_TYPE ObjectType, KPROCESSOR_MODE AccessMode) {
    (void)DesiredAccess;
    (void)AccessMode;
    wdk::require_irql_at_most(DISPATCH_LEVEL, "ObReferenceObjectByPointer");
    if (ObjectType != nullptr &&
        wdk::object_type(Object, "ObReferenceObjectByPointer") != ObjectType)
        return STATUS_OBJECT_TYPE_MISMATCH;
    wdk::object_reference(Object, "ObReferenceObjectByPointer");
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ObOpenObjectByPointer(PVOID Object, ULONG HandleAttributes,
                                     PACCESS_STATE PassedAccessState, ACCESS_MASK DesiredAccess,
                                     POBJECT_TYPE ObjectType, KPROCESSOR_MODE AccessMode,
                                     PHANDLE Handle) {
    (void)HandleAttributes;
    (void)PassedAccessState;
    (void)DesiredAccess;
    (void)AccessMode;
    wdk::require_passive("ObOpenObjectByPointer");
    if (Handle == nullptr) return STATUS_INVALID_PARAMETER;
    *Handle = nullptr;
    if (ObjectType != nullptr && wdk::object_type(Object, "ObOpenObjectByPointer") != ObjectType)
        return STATUS_OBJECT_TYPE_MISMATCH;
    wdk::object_reference(Object, "ObOpenObjectByPointer");
    *Handle = wdk::insert_handle(Object);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ZwMakeTemporaryObject(HANDLE Handle) {
    wdk::require_passive("ZwMakeTemporaryObject");
    PVOID object = nullptr;
    const NTSTATUS status = wdk::reference_handle(Handle, nullptr, &object);
    if (!NT_SUCCESS(status)) return status;
    if (wdk::KernelObject *kernel = wdk::as_kernel_object(object)) wdk::make_temporary(kernel);
    wdk::object_dereference(object, "ZwMakeTemporaryObject");
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ZwCreateDirectoryObject(PHANDLE DirectoryHandle, ACCESS_MASK DesiredAccess,
                                       POBJECT_ATTRIBUTES ObjectAttributes) {
    (void)DesiredAccess;
    wdk::require_passive("ZwCreateDirectoryObject");
    if (DirectoryHandle == nullptr || ObjectAttributes == nullptr) return STATUS_INVALID_PARAMETER;
    *DirectoryHandle = nullptr;
    const std::wstring name = wdk::normalize_object_name(wdk::object_name(ObjectAttributes));
    if (!name.empty() && name.front() != L'\\') return STATUS_OBJECT_PATH_SYNTAX_BAD;
    auto *directory = new (std::nothrow) wdk::DirectoryObject;
    if (directory == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    if (!name.empty()) {
        const bool permanent = (ObjectAttributes->Attributes & OBJ_PERMANENT) != 0;
        const NTSTATUS status = wdk::insert_named_object(directory, name, permanent);
        if (!NT_SUCCESS(status)) {
            wdk::object_dereference(directory, "ZwCreateDirectoryObject");
            if (status != STATUS_OBJECT_NAME_COLLISION ||
                (ObjectAttributes->Attributes & OBJ_OPENIF) == 0)
                return status;
            wdk::KernelObject *existing = wdk::lookup_named_object(name);
            if (existing == nullptr) return status;
            if (existing->type() != &wdk::g_directory_type) {
                wdk::object_dereference(existing, "ZwCreateDirectoryObject");
                return STATUS_OBJECT_TYPE_MISMATCH;
            }
            *DirectoryHandle = wdk::insert_handle(existing);
            return STATUS_OBJECT_NAME_EXISTS;
        }
    }
    *DirectoryHandle = wdk::insert_handle(directory);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI IoCreateSymbolicLink(PUNICODE_STRING SymbolicLinkName, PUNICODE_STRING DeviceName) {
    wdk::require_passive("IoCreateSymbolicLink");
    const std::wstring name = wdk::normalize_object_name(wdk::to_wstring(SymbolicLinkName));
    if (name.empty() || name.front() != L'\\' || DeviceName == nullptr)
        return STATUS_OBJECT_NAME_INVALID;
    auto *link = new (std::nothrow) wdk::SymbolicLinkObject(wdk::to_wstring(DeviceName));
    if (link == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    const NTSTATUS status = wdk::insert_named_object(link, name, true);
    // The namespace's permanent reference keeps the link; drop the creation reference.
    wdk::object_dereference(link, "IoCreateSymbolicLink");
    return status;
}

NTSTATUS NTAPI IoDeleteSymbolicLink(PUNICODE_STRING SymbolicLinkName) {
    wdk::require_passive("IoDeleteSymbolicLink");
    wdk::KernelObject *link = wdk::lookup_named_object(wdk::to_wstring(SymbolicLinkName));
    if (link == nullptr) return STATUS_OBJECT_NAME_NOT_FOUND;
    if (link->type() != &wdk::g_symbolic_link_type) {
        wdk::object_dereference(link, "IoDeleteSymbolicLink");
        return STATUS_OBJECT_NAME_NOT_FOUND;
    }
    wdk::make_temporary(link);
    wdk::object_dereference(link, "IoDeleteSymbolicLink");
    return STATUS_SUCCESS;
}

PEPROCESS NTAPI PsGetCurrentProcess(VOID) {
    return wdk::process_object();
}

HANDLE NTAPI PsGetCurrentProcessId(VOID) {
    return reinterpret_cast<HANDLE>(static_cast<ULONG_PTR>(getpid()));
}

KPROCESSOR_MODE NTAPI ExGetPreviousMode(VOID) {
    return KernelMode;
}

BOOLEAN NTAPI IoIs32bitProcess(PIRP Irp) {
    (void)Irp;
    return FALSE;
}

NTSTATUS NTAPI PsSetCreateProcessNotifyRoutineEx(PCREATE_PROCESS_NOTIFY_ROUTINE_EX NotifyRoutine,
                                                 BOOLEAN Remove) {
    wdk::require_passive("PsSetCreateProcessNotifyRoutineEx");
    if (NotifyRoutine == nullptr) return STATUS_INVALID_PARAMETER;
    std::lock_guard guard(wdk::g_process_notify_lock);
    auto &routines = wdk::g_process_notify;
    auto found = std::find(routines.begin(), routines.end(), NotifyRoutine);
    if (Remove) {
        if (found == routines.end()) return STATUS_INVALID_PARAMETER;
        routines.erase(found);
        return STATUS_SUCCESS;
    }
    if (found != routines.end() || routines.size() >= wdk::kMaxProcessNotifyRoutines)
        return STATUS_INVALID_PARAMETER;
    routines.push_back(NotifyRoutine);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ObRegisterCallbacks(POB_CALLBACK_REGISTRATION CallbackRegistration,
                                   PVOID *RegistrationHandle) {
    wdk::require_irql_at_most(APC_LEVEL, "ObRegisterCallbacks");
    if (RegistrationHandle == nullptr || CallbackRegistration == nullptr)
        return STATUS_INVALID_PARAMETER;
    *RegistrationHandle = nullptr;
    const OB_CALLBACK_REGISTRATION &registration = *CallbackRegistration;
    if (registration.Version != OB_FLT_REGISTRATION_VERSION ||
        registration.OperationRegistrationCount == 0 ||
        registration.OperationRegistration == nullptr || registration.Altitude.Length == 0)
        return STATUS_INVALID_PARAMETER;
    for (USHORT i = 0; i < registration.OperationRegistrationCount; ++i) {
        const OB_OPERATION_REGISTRATION &operation = registration.OperationRegistration[i];
        if (operation.ObjectType == nullptr || *operation.ObjectType == nullptr ||
            (operation.Operations & (OB_OPERATION_HANDLE_CREATE | OB_OPERATION_HANDLE_DUPLICATE)) ==
                0 ||
            (operation.PreOperation == nullptr && operation.PostOperation == nullptr))
            return STATUS_INVALID_PARAMETER;
    }
    const std::wstring altitude = wdk::to_wstring(&registration.Altitude);
    std::lock_guard guard(wdk::g_ob_lock);
    if (wdk::g_ob_registrations.count(altitude) != 0) return STATUS_FLT_INSTANCE_ALTITUDE_COLLISION;
    auto *entry = new (std::nothrow) wdk::ObRegistration{altitude};
    if (entry == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    wdk::g_ob_registrations.emplace(altitude, entry);
    *RegistrationHandle = entry;
    return STATUS_SUCCESS;
}

VOID NTAPI ObUnRegisterCallbacks(PVOID RegistrationHandle) {
    wdk::require_irql_at_most(APC_LEVEL, "ObUnRegisterCallbacks");
    auto *entry = static_cast<wdk::ObRegistration *>(RegistrationHandle);
    std::lock_guard guard(wdk::g_ob_lock);
    for (auto it = wdk::g_ob_registrations.begin(); it != wdk::g_ob_registrations.end(); ++it) {
        if (it->second == entry) {
            wdk::g_ob_registrations.erase(it);
            delete entry;
            return;
        }
    }
    wdk::fatal(
        fmt::format("ObUnRegisterCallbacks: {} is not a registration handle", RegistrationHandle));
}

USHORT NTAPI ObGetFilterVersion(VOID) {
    return OB_FLT_REGISTRATION_VERSION;
}

}  // extern "C"
