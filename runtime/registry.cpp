// The in-memory registry (contract in softndk_wdm_system.h): keys and values, the Zw*Key
// calls, RtlQueryRegistryValues / RtlWriteRegistryValue / RtlDeleteRegistryValue,
// IoOpenDeviceRegistryKey, registry callbacks (CmRegisterCallbackEx, ...) and the KTM
// transaction objects a transacted key defers its changes to.
//
// Registry text (load_registry_text; the driver runner's --registry FILE / SOFTNDK_REGISTRY),
// a subset of regedit's .reg format, one item per line:
//   ; comment   (also #; blank lines are ignored; a first line "Windows Registry Editor
//                Version 5.00" or "REGEDIT4" is ignored)
//   [\Registry\Machine\...]        a key, created with its missing parents; also spelled
//                                  [HKEY_LOCAL_MACHINE\...] (HKLM) or [HKEY_USERS\...] (HKU)
//   "Name"="text"                  REG_SZ   (\" and \\ escape inside quotes)
//   @="text"                       the key's default value
//   "Name"=dword:0000000a          REG_DWORD (hex)
//   "Name"=qword:00000001ffffffff  REG_QWORD (hex)
//   "Name"=hex:01,02,ff            REG_BINARY
//   "Name"=hex(T):..               a value of type T (hex) given as bytes
//   "Name"=multi:"a","b"           REG_MULTI_SZ
//   "Name"=expand:"%SystemRoot%"   REG_EXPAND_SZ
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr ULONG kRegistryTag = 0x52646E53;  // "SndR"

struct Value {
    std::wstring name;
    ULONG type = REG_NONE;
    std::vector<UCHAR> data;
};

struct KeyNode {
    std::wstring name;  // as created
    std::weak_ptr<KeyNode> parent;
    std::map<std::wstring, std::shared_ptr<KeyNode>> subkeys;  // by upcased name
    std::vector<Value> values;                                 // in order of first set
    std::wstring class_name;
    LONGLONG last_write = 0;
    bool deleted = false;
};

// The whole registry, under one lock. Callbacks (Cm, QueryRoutine) run without it.
struct Registry {
    std::mutex lock;
    std::shared_ptr<KeyNode> root;
    Registry() { reset(); }
    void reset();
};

std::shared_ptr<KeyNode> add_child(const std::shared_ptr<KeyNode> &parent,
                                   const std::wstring &name) {
    auto &slot = parent->subkeys[upcase_name(name)];
    if (!slot) {
        slot = std::make_shared<KeyNode>();
        slot->name = name;
        slot->parent = parent;
        slot->last_write = system_time_now();
        parent->last_write = slot->last_write;
    }
    return slot;
}

std::vector<std::wstring> split_path(std::wstring_view path) {
    std::vector<std::wstring> parts;
    size_t start = 0;
    while (start <= path.size()) {
        const size_t end = path.find(L'\\', start);
        parts.emplace_back(path.substr(
            start, end == std::wstring_view::npos ? std::wstring_view::npos : end - start));
        if (end == std::wstring_view::npos) break;
        start = end + 1;
    }
    return parts;
}

void Registry::reset() {
    root = std::make_shared<KeyNode>();
    root->name = L"REGISTRY";
    for (const wchar_t *path : {L"MACHINE\\SYSTEM\\CurrentControlSet\\Services",
                                L"MACHINE\\SYSTEM\\CurrentControlSet\\Control",
                                L"MACHINE\\SYSTEM\\CurrentControlSet\\Enum",
                                L"MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion",
                                L"MACHINE\\HARDWARE\\DEVICEMAP", L"USER\\.DEFAULT"}) {
        std::shared_ptr<KeyNode> node = root;
        for (const auto &part : split_path(path))
            node = add_child(node, part);
    }
}

Registry &registry() {
    return fork_local_instance<Registry>();
}

std::wstring full_path(const std::shared_ptr<KeyNode> &node) {
    std::wstring path;
    for (std::shared_ptr<KeyNode> at = node; at; at = at->parent.lock())
        path = L"\\" + at->name + path;
    return path;
}

Value *find_value(KeyNode &node, std::wstring_view name) {
    const std::wstring key = upcase_name(name);
    for (auto &value : node.values)
        if (upcase_name(value.name) == key) return &value;
    return nullptr;
}

// Finds (or, with `create`, creates the last level of) the key `path` relative to `base`
// (NULL: `path` is absolute, \Registry\...). Caller holds the registry lock.
NTSTATUS walk(const std::shared_ptr<KeyNode> &base, std::wstring_view path, bool create,
              std::shared_ptr<KeyNode> &out, bool *created) {
    if (created != nullptr) *created = false;
    std::shared_ptr<KeyNode> node = base;
    std::vector<std::wstring> parts;
    if (base == nullptr) {
        if (path.empty() || path.front() != L'\\') return STATUS_OBJECT_PATH_SYNTAX_BAD;
        parts = split_path(path.substr(1));
        if (parts.empty() || upcase_name(parts.front()) != L"REGISTRY")
            return STATUS_OBJECT_NAME_NOT_FOUND;
        parts.erase(parts.begin());
        node = registry().root;
    } else {
        if (base->deleted) return STATUS_KEY_DELETED;
        if (!path.empty() && path.front() == L'\\') return STATUS_OBJECT_PATH_SYNTAX_BAD;
        if (!path.empty()) parts = split_path(path);
    }
    if (!parts.empty() && parts.back().empty()) parts.pop_back();  // one trailing backslash
    for (size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].empty()) return STATUS_OBJECT_NAME_INVALID;
        auto found = node->subkeys.find(upcase_name(parts[i]));
        if (found != node->subkeys.end()) {
            node = found->second;
            continue;
        }
        if (!create || i + 1 != parts.size()) return STATUS_OBJECT_NAME_NOT_FOUND;
        node = add_child(node, parts[i]);
        if (created != nullptr) *created = true;
    }
    out = node;
    return STATUS_SUCCESS;
}

// ---- Registry callbacks.
struct CmRegistration {
    LONGLONG cookie;
    PEX_CALLBACK_FUNCTION function;
    PVOID context;
    std::wstring altitude;
};
std::mutex g_cm_lock;
std::vector<CmRegistration> g_cm_registrations;
LONGLONG g_next_cookie = 0x1000;

// ---- Objects.
class TransactionObject;

class KeyObject : public KernelObject {
  public:
    KeyObject(std::shared_ptr<KeyNode> node, KernelObject *transaction)
        : KernelObject(&g_key_type), node(std::move(node)), transaction(transaction) {}
    ~KeyObject() override;

    std::shared_ptr<KeyNode> node;
    KernelObject *transaction;  // referenced, or NULL
    std::mutex contexts_lock;
    std::map<LONGLONG, PVOID> contexts;  // CmSetCallbackObjectContext, by cookie
};

KeyObject::~KeyObject() {
    std::map<LONGLONG, PVOID> pending;
    {
        std::lock_guard guard(contexts_lock);
        pending.swap(contexts);
    }
    for (auto &[cookie, context] : pending) {
        CmRegistration registration{};
        {
            std::lock_guard guard(g_cm_lock);
            for (auto &r : g_cm_registrations)
                if (r.cookie == cookie) registration = r;
        }
        if (registration.function == nullptr) continue;
        REG_CALLBACK_CONTEXT_CLEANUP_INFORMATION info{this, context, nullptr};
        registration.function(
            registration.context,
            reinterpret_cast<PVOID>(static_cast<ULONG_PTR>(RegNtCallbackObjectContextCleanup)),
            &info);
    }
    if (transaction != nullptr) object_dereference(transaction, "key close");
}

// Calls every registration, in order, with (notify class, information); `Info` has an
// ObjectContext, set for each registration to the context it attached to `key`
// (CmSetCallbackObjectContext). For a pre-notification the first failure vetoes and is
// returned; post-notifications cannot fail.
template <class Info>
NTSTATUS notify_registry(REG_NOTIFY_CLASS type, KeyObject *key, Info &info) {
    std::vector<CmRegistration> snapshot;
    {
        std::lock_guard guard(g_cm_lock);
        snapshot = g_cm_registrations;
    }
    for (const auto &registration : snapshot) {
        {
            std::lock_guard guard(key->contexts_lock);
            auto found = key->contexts.find(registration.cookie);
            info.ObjectContext = found == key->contexts.end() ? nullptr : found->second;
        }
        const NTSTATUS status = registration.function(
            registration.context, reinterpret_cast<PVOID>(static_cast<ULONG_PTR>(type)), &info);
        if (!NT_SUCCESS(status)) return status;
    }
    return STATUS_SUCCESS;
}

// The pre-notification, the operation (if not vetoed), then the post-notification with the
// operation's status; returns what the caller gets.
template <class Info, class Operation>
NTSTATUS with_notifications(REG_NOTIFY_CLASS pre, REG_NOTIFY_CLASS post, KeyObject *key, Info &info,
                            Operation operation) {
    const NTSTATUS veto = notify_registry(pre, key, info);
    if (!NT_SUCCESS(veto)) return veto;
    const NTSTATUS status = operation();
    REG_POST_OPERATION_INFORMATION after{key, status, &info, status, nullptr, nullptr, nullptr};
    std::vector<CmRegistration> snapshot;
    {
        std::lock_guard guard(g_cm_lock);
        snapshot = g_cm_registrations;
    }
    for (const auto &registration : snapshot) {
        {
            std::lock_guard guard(key->contexts_lock);
            auto found = key->contexts.find(registration.cookie);
            after.ObjectContext = found == key->contexts.end() ? nullptr : found->second;
        }
        after.ReturnStatus = status;
        registration.function(registration.context,
                              reinterpret_cast<PVOID>(static_cast<ULONG_PTR>(post)), &after);
    }
    return status;
}

enum class TransactionState { kActive, kCommitted, kRolledBack };

class TransactionObject : public KernelObject {
  public:
    TransactionObject() : KernelObject(&g_transaction_type) {}
    std::mutex lock;
    TransactionState state = TransactionState::kActive;
    std::vector<std::function<void()>> pending;  // run at commit, under the registry lock
    GUID uow{};
};

class TransactionManagerObject : public KernelObject {
  public:
    TransactionManagerObject() : KernelObject(&g_transaction_manager_type) {}
};

class ResourceManagerObject : public KernelObject {
  public:
    ResourceManagerObject() : KernelObject(&g_resource_manager_type) {}
};

class EnlistmentObject : public KernelObject {
  public:
    EnlistmentObject(KernelObject *transaction, KernelObject *resource_manager)
        : KernelObject(&g_enlistment_type),
          transaction(transaction),
          resource_manager(resource_manager) {}
    ~EnlistmentObject() override {
        object_dereference(transaction, "enlistment close");
        object_dereference(resource_manager, "enlistment close");
    }
    KernelObject *transaction;
    KernelObject *resource_manager;
};

// Opens or creates the key named by ObjectAttributes; a handle in *KeyHandle.
NTSTATUS open_key(PHANDLE key_handle, POBJECT_ATTRIBUTES attributes, bool create,
                  PUNICODE_STRING class_name, PULONG disposition, HANDLE transaction_handle,
                  const char *caller) {
    require_passive(caller);
    if (key_handle == nullptr || attributes == nullptr) return STATUS_INVALID_PARAMETER;
    *key_handle = nullptr;
    KernelObject *transaction = nullptr;
    if (transaction_handle != nullptr) {
        PVOID object = nullptr;
        const NTSTATUS status = reference_handle(transaction_handle, &g_transaction_type, &object);
        if (!NT_SUCCESS(status)) return status;
        auto *tx = static_cast<TransactionObject *>(as_kernel_object(object));
        std::lock_guard guard(tx->lock);
        if (tx->state != TransactionState::kActive) {
            object_dereference(tx, caller);
            return STATUS_TRANSACTION_NOT_ACTIVE;
        }
        transaction = tx;
    }
    std::shared_ptr<KeyNode> base;
    if (attributes->RootDirectory != nullptr) {
        HandleRef<KeyObject> root(attributes->RootDirectory, &g_key_type);
        if (!NT_SUCCESS(root.status())) {
            if (transaction != nullptr) object_dereference(transaction, caller);
            return root.status();
        }
        base = root->node;
    }
    std::shared_ptr<KeyNode> node;
    bool created = false;
    NTSTATUS status;
    {
        std::lock_guard guard(registry().lock);
        status = walk(base, to_wstring(attributes->ObjectName), create, node, &created);
        if (NT_SUCCESS(status) && created && class_name != nullptr)
            node->class_name = to_wstring(class_name);
    }
    if (!NT_SUCCESS(status)) {
        if (transaction != nullptr) object_dereference(transaction, caller);
        return status;
    }
    auto *key = new (std::nothrow) KeyObject(node, transaction);
    if (key == nullptr) {
        if (transaction != nullptr) object_dereference(transaction, caller);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if (disposition != nullptr)
        *disposition = created ? REG_CREATED_NEW_KEY : REG_OPENED_EXISTING_KEY;
    *key_handle = insert_handle(key);
    return STATUS_SUCCESS;
}

// Buffer rules of the query calls (see the header).
NTSTATUS copy_information(const std::vector<UCHAR> &full, ULONG fixed, PVOID buffer, ULONG length,
                          PULONG result_length) {
    if (result_length == nullptr) return STATUS_INVALID_PARAMETER;
    *result_length = static_cast<ULONG>(full.size());
    if (length < fixed || buffer == nullptr) return STATUS_BUFFER_TOO_SMALL;
    if (length < full.size()) {
        std::memcpy(buffer, full.data(), fixed);
        return STATUS_BUFFER_OVERFLOW;
    }
    std::memcpy(buffer, full.data(), full.size());
    return STATUS_SUCCESS;
}

template <class T>
void put(std::vector<UCHAR> &out, size_t offset, T value) {
    if (out.size() < offset + sizeof value) out.resize(offset + sizeof value);
    std::memcpy(out.data() + offset, &value, sizeof value);
}

void put_bytes(std::vector<UCHAR> &out, size_t offset, const void *data, size_t size) {
    if (out.size() < offset + size) out.resize(offset + size);
    if (size != 0) std::memcpy(out.data() + offset, data, size);
}

ULONG bytes_of(const std::wstring &text) {
    return static_cast<ULONG>(text.size() * sizeof(WCHAR));
}

constexpr size_t align_ulong(size_t n) {
    return (n + sizeof(ULONG) - 1) & ~(sizeof(ULONG) - 1);
}

// The KEY_VALUE_* information of `value`; `fixed` receives the fixed part's size.
NTSTATUS value_information(const Value &value, KEY_VALUE_INFORMATION_CLASS kind,
                           std::vector<UCHAR> &out, ULONG &fixed) {
    const ULONG name_bytes = bytes_of(value.name);
    const ULONG data_bytes = static_cast<ULONG>(value.data.size());
    out.clear();
    switch (kind) {
        case KeyValueBasicInformation:
            fixed = offsetof(KEY_VALUE_BASIC_INFORMATION, Name);
            put<ULONG>(out, offsetof(KEY_VALUE_BASIC_INFORMATION, TitleIndex), 0);
            put<ULONG>(out, offsetof(KEY_VALUE_BASIC_INFORMATION, Type), value.type);
            put<ULONG>(out, offsetof(KEY_VALUE_BASIC_INFORMATION, NameLength), name_bytes);
            put_bytes(out, fixed, value.name.data(), name_bytes);
            return STATUS_SUCCESS;
        case KeyValueFullInformation: {
            fixed = offsetof(KEY_VALUE_FULL_INFORMATION, Name);
            const ULONG data_offset = static_cast<ULONG>(align_ulong(fixed + name_bytes));
            put<ULONG>(out, offsetof(KEY_VALUE_FULL_INFORMATION, TitleIndex), 0);
            put<ULONG>(out, offsetof(KEY_VALUE_FULL_INFORMATION, Type), value.type);
            put<ULONG>(out, offsetof(KEY_VALUE_FULL_INFORMATION, DataOffset), data_offset);
            put<ULONG>(out, offsetof(KEY_VALUE_FULL_INFORMATION, DataLength), data_bytes);
            put<ULONG>(out, offsetof(KEY_VALUE_FULL_INFORMATION, NameLength), name_bytes);
            put_bytes(out, fixed, value.name.data(), name_bytes);
            out.resize(data_offset);
            put_bytes(out, data_offset, value.data.data(), data_bytes);
            return STATUS_SUCCESS;
        }
        case KeyValuePartialInformation:
            fixed = offsetof(KEY_VALUE_PARTIAL_INFORMATION, Data);
            put<ULONG>(out, offsetof(KEY_VALUE_PARTIAL_INFORMATION, TitleIndex), 0);
            put<ULONG>(out, offsetof(KEY_VALUE_PARTIAL_INFORMATION, Type), value.type);
            put<ULONG>(out, offsetof(KEY_VALUE_PARTIAL_INFORMATION, DataLength), data_bytes);
            put_bytes(out, fixed, value.data.data(), data_bytes);
            return STATUS_SUCCESS;
        default:
            return STATUS_INVALID_PARAMETER;
    }
}

// The KEY_* information of `node` (named `name`: its own name, or the full path).
NTSTATUS key_information(const KeyNode &node, const std::wstring &name, KEY_INFORMATION_CLASS kind,
                         std::vector<UCHAR> &out, ULONG &fixed) {
    const ULONG name_bytes = bytes_of(name);
    const ULONG class_bytes = bytes_of(node.class_name);
    LARGE_INTEGER last_write;
    last_write.QuadPart = node.last_write;
    ULONG max_name = 0, max_class = 0, max_value_name = 0, max_value_data = 0;
    for (const auto &[upper, child] : node.subkeys) {
        max_name = std::max(max_name, bytes_of(child->name));
        max_class = std::max(max_class, bytes_of(child->class_name));
    }
    for (const auto &value : node.values) {
        max_value_name = std::max(max_value_name, bytes_of(value.name));
        max_value_data = std::max(max_value_data, static_cast<ULONG>(value.data.size()));
    }
    out.clear();
    switch (kind) {
        case KeyBasicInformation:
            fixed = offsetof(KEY_BASIC_INFORMATION, Name);
            put(out, offsetof(KEY_BASIC_INFORMATION, LastWriteTime), last_write);
            put<ULONG>(out, offsetof(KEY_BASIC_INFORMATION, TitleIndex), 0);
            put<ULONG>(out, offsetof(KEY_BASIC_INFORMATION, NameLength), name_bytes);
            put_bytes(out, fixed, name.data(), name_bytes);
            return STATUS_SUCCESS;
        case KeyNodeInformation: {
            fixed = offsetof(KEY_NODE_INFORMATION, Name);
            const ULONG class_offset =
                class_bytes == 0 ? 0xFFFFFFFF : static_cast<ULONG>(align_ulong(fixed + name_bytes));
            put(out, offsetof(KEY_NODE_INFORMATION, LastWriteTime), last_write);
            put<ULONG>(out, offsetof(KEY_NODE_INFORMATION, TitleIndex), 0);
            put<ULONG>(out, offsetof(KEY_NODE_INFORMATION, ClassOffset), class_offset);
            put<ULONG>(out, offsetof(KEY_NODE_INFORMATION, ClassLength), class_bytes);
            put<ULONG>(out, offsetof(KEY_NODE_INFORMATION, NameLength), name_bytes);
            put_bytes(out, fixed, name.data(), name_bytes);
            if (class_bytes != 0) put_bytes(out, class_offset, node.class_name.data(), class_bytes);
            return STATUS_SUCCESS;
        }
        case KeyFullInformation:
            fixed = offsetof(KEY_FULL_INFORMATION, Class);
            put(out, offsetof(KEY_FULL_INFORMATION, LastWriteTime), last_write);
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, TitleIndex), 0);
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, ClassOffset),
                       class_bytes == 0 ? 0xFFFFFFFF : fixed);
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, ClassLength), class_bytes);
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, SubKeys),
                       static_cast<ULONG>(node.subkeys.size()));
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, MaxNameLen), max_name);
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, MaxClassLen), max_class);
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, Values),
                       static_cast<ULONG>(node.values.size()));
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, MaxValueNameLen), max_value_name);
            put<ULONG>(out, offsetof(KEY_FULL_INFORMATION, MaxValueDataLen), max_value_data);
            out.resize(fixed);
            put_bytes(out, fixed, node.class_name.data(), class_bytes);
            return STATUS_SUCCESS;
        case KeyNameInformation:
            fixed = offsetof(KEY_NAME_INFORMATION, Name);
            put<ULONG>(out, 0, name_bytes);
            put_bytes(out, fixed, name.data(), name_bytes);
            return STATUS_SUCCESS;
        case KeyCachedInformation:
            fixed = sizeof(KEY_CACHED_INFORMATION);
            put(out, offsetof(KEY_CACHED_INFORMATION, LastWriteTime), last_write);
            put<ULONG>(out, offsetof(KEY_CACHED_INFORMATION, TitleIndex), 0);
            put<ULONG>(out, offsetof(KEY_CACHED_INFORMATION, SubKeys),
                       static_cast<ULONG>(node.subkeys.size()));
            put<ULONG>(out, offsetof(KEY_CACHED_INFORMATION, MaxNameLen), max_name);
            put<ULONG>(out, offsetof(KEY_CACHED_INFORMATION, Values),
                       static_cast<ULONG>(node.values.size()));
            put<ULONG>(out, offsetof(KEY_CACHED_INFORMATION, MaxValueNameLen), max_value_name);
            put<ULONG>(out, offsetof(KEY_CACHED_INFORMATION, MaxValueDataLen), max_value_data);
            put<ULONG>(out, offsetof(KEY_CACHED_INFORMATION, NameLength), name_bytes);
            out.resize(fixed);
            return STATUS_SUCCESS;
        default:
            return STATUS_INVALID_PARAMETER;
    }
}

void set_value_locked(KeyNode &node, const std::wstring &name, ULONG type, const UCHAR *data,
                      ULONG size) {
    Value *value = find_value(node, name);
    if (value == nullptr) {
        node.values.push_back(Value{name, type, {}});
        value = &node.values.back();
    }
    value->type = type;
    value->data.assign(data, data + size);
    node.last_write = system_time_now();
}

bool delete_value_locked(KeyNode &node, const std::wstring &name) {
    const std::wstring key = upcase_name(name);
    auto found = std::find_if(node.values.begin(), node.values.end(),
                              [&](const Value &v) { return upcase_name(v.name) == key; });
    if (found == node.values.end()) return false;
    node.values.erase(found);
    node.last_write = system_time_now();
    return true;
}

// The transaction of a transacted key, if still usable; STATUS_TRANSACTION_NOT_ACTIVE if not.
NTSTATUS defer_to_transaction(KeyObject *key, std::function<void()> change) {
    auto *tx = static_cast<TransactionObject *>(key->transaction);
    std::lock_guard guard(tx->lock);
    if (tx->state != TransactionState::kActive) return STATUS_TRANSACTION_NOT_ACTIVE;
    tx->pending.push_back(std::move(change));
    return STATUS_SUCCESS;
}

// ---- RtlQueryRegistryValues and friends.

std::wstring relative_base(ULONG relative_to) {
    switch (relative_to & ~(RTL_REGISTRY_OPTIONAL | RTL_REGISTRY_HANDLE)) {
        case RTL_REGISTRY_ABSOLUTE:
            return L"";
        case RTL_REGISTRY_SERVICES:
            return L"\\Registry\\Machine\\System\\CurrentControlSet\\Services\\";
        case RTL_REGISTRY_CONTROL:
            return L"\\Registry\\Machine\\System\\CurrentControlSet\\Control\\";
        case RTL_REGISTRY_WINDOWS_NT:
            return L"\\Registry\\Machine\\Software\\Microsoft\\Windows NT\\CurrentVersion\\";
        case RTL_REGISTRY_DEVICEMAP:
            return L"\\Registry\\Machine\\Hardware\\DeviceMap\\";
        case RTL_REGISTRY_USER:
            return L"\\Registry\\User\\.Default\\";
        default:
            return L"?";
    }
}

// The key RelativeTo/Path name, found or (create) created with its missing parents.
NTSTATUS rtl_key(ULONG relative_to, PCWSTR path, bool create, std::shared_ptr<KeyNode> &out) {
    if ((relative_to & RTL_REGISTRY_HANDLE) != 0) {
        HandleRef<KeyObject> key(const_cast<PWSTR>(path), &g_key_type);
        if (!NT_SUCCESS(key.status())) return key.status();
        if (key->node->deleted) return STATUS_KEY_DELETED;
        out = key->node;
        return STATUS_SUCCESS;
    }
    const std::wstring base = relative_base(relative_to);
    if (base == L"?") return STATUS_INVALID_PARAMETER;
    if (path == nullptr) return STATUS_INVALID_PARAMETER;
    std::wstring full = base + path;
    while (full.size() > 1 && full.back() == L'\\')
        full.pop_back();
    std::lock_guard guard(registry().lock);
    if (!create) return walk(nullptr, full, false, out, nullptr);
    if (full.empty() || full.front() != L'\\') return STATUS_OBJECT_PATH_SYNTAX_BAD;
    auto parts = split_path(std::wstring_view(full).substr(1));
    if (parts.empty() || upcase_name(parts.front()) != L"REGISTRY")
        return STATUS_OBJECT_NAME_NOT_FOUND;
    std::shared_ptr<KeyNode> node = registry().root;
    for (size_t i = 1; i < parts.size(); ++i) {
        if (parts[i].empty()) return STATUS_OBJECT_NAME_INVALID;
        node = add_child(node, parts[i]);
    }
    out = node;
    return STATUS_SUCCESS;
}

std::wstring expand_environment(const std::wstring &text) {
    std::wstring out;
    for (size_t i = 0; i < text.size();) {
        const size_t end = text[i] == L'%' ? text.find(L'%', i + 1) : std::wstring::npos;
        if (end == std::wstring::npos) {
            out.push_back(text[i++]);
            continue;
        }
        std::string name;
        for (size_t k = i + 1; k < end; ++k)
            name.push_back(static_cast<char>(text[k]));
        const char *value = name.empty() ? nullptr : std::getenv(name.c_str());
        if (value == nullptr) {
            out.append(text, i, end - i + 1);
        } else {
            for (const char *p = value; *p != '\0'; ++p)
                out.push_back(static_cast<unsigned char>(*p));
        }
        i = end + 1;
    }
    return out;
}

std::vector<UCHAR> wide_bytes(const std::wstring &text, bool terminate = true) {
    std::vector<UCHAR> bytes((text.size() + (terminate ? 1 : 0)) * sizeof(WCHAR), 0);
    std::memcpy(bytes.data(), text.data(), text.size() * sizeof(WCHAR));
    return bytes;
}

bool is_string_type(ULONG type) {
    return type == REG_SZ || type == REG_EXPAND_SZ || type == REG_MULTI_SZ;
}

// RTL_QUERY_REGISTRY_DIRECT: stores one value at EntryContext.
NTSTATUS store_direct(ULONG type, const UCHAR *data, ULONG size, PVOID entry_context) {
    if (entry_context == nullptr) return STATUS_INVALID_PARAMETER;
    if (is_string_type(type)) {
        auto *destination = static_cast<PUNICODE_STRING>(entry_context);
        ULONG bytes = size;
        // Length excludes the terminator (and, for REG_MULTI_SZ, keeps the inner ones).
        if (bytes >= sizeof(WCHAR) &&
            reinterpret_cast<const WCHAR *>(data)[bytes / sizeof(WCHAR) - 1] == 0)
            bytes -= sizeof(WCHAR);
        if (bytes + sizeof(WCHAR) > MAXUSHORT) return STATUS_BUFFER_TOO_SMALL;
        if (destination->Buffer == nullptr) {
            destination->Buffer = static_cast<PWCH>(
                ExAllocatePoolWithTag(PagedPool, bytes + sizeof(WCHAR), kRegistryTag));
            if (destination->Buffer == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
            destination->MaximumLength = static_cast<USHORT>(bytes + sizeof(WCHAR));
        } else if (destination->MaximumLength < bytes + sizeof(WCHAR)) {
            return STATUS_BUFFER_TOO_SMALL;
        }
        std::memcpy(destination->Buffer, data, bytes);
        destination->Buffer[bytes / sizeof(WCHAR)] = 0;
        destination->Length = static_cast<USHORT>(bytes);
        return STATUS_SUCCESS;
    }
    if (size <= sizeof(ULONG)) {
        std::memcpy(entry_context, data, size);
        return STATUS_SUCCESS;
    }
    LONG declared;
    std::memcpy(&declared, entry_context, sizeof declared);
    if (declared < 0) {
        if (static_cast<ULONG>(-declared) < size) return STATUS_BUFFER_TOO_SMALL;
        std::memcpy(entry_context, data, size);
        return STATUS_SUCCESS;
    }
    if (static_cast<ULONG>(declared) < size + 2 * sizeof(ULONG)) return STATUS_BUFFER_TOO_SMALL;
    auto *out = static_cast<UCHAR *>(entry_context);
    std::memcpy(out, &size, sizeof(ULONG));
    std::memcpy(out + sizeof(ULONG), &type, sizeof(ULONG));
    std::memcpy(out + 2 * sizeof(ULONG), data, size);
    return STATUS_SUCCESS;
}

// One value for one table entry: direct, or the QueryRoutine (per string of a MULTI_SZ).
NTSTATUS deliver(const RTL_QUERY_REGISTRY_TABLE &entry, const std::wstring &name, ULONG type,
                 std::vector<UCHAR> data, PVOID context) {
    if ((entry.Flags & RTL_QUERY_REGISTRY_TYPECHECK) != 0) {
        const ULONG expected = entry.DefaultType >> RTL_QUERY_REGISTRY_TYPECHECK_SHIFT;
        if (expected != type) return STATUS_OBJECT_TYPE_MISMATCH;
    }
    const bool expand = (entry.Flags & RTL_QUERY_REGISTRY_NOEXPAND) == 0;
    if (type == REG_EXPAND_SZ && expand) {
        std::wstring text(reinterpret_cast<const WCHAR *>(data.data()),
                          data.size() / sizeof(WCHAR));
        while (!text.empty() && text.back() == 0)
            text.pop_back();
        data = wide_bytes(expand_environment(text));
        type = REG_SZ;
    }
    if ((entry.Flags & RTL_QUERY_REGISTRY_DIRECT) != 0)
        return store_direct(type, data.data(), static_cast<ULONG>(data.size()), entry.EntryContext);
    std::wstring value_name = name;
    if (type == REG_MULTI_SZ && expand) {
        const auto *chars = reinterpret_cast<const WCHAR *>(data.data());
        const size_t count = data.size() / sizeof(WCHAR);
        for (size_t i = 0; i < count && chars[i] != 0;) {
            std::wstring item(chars + i);
            std::vector<UCHAR> bytes = wide_bytes(item);
            const NTSTATUS status =
                entry.QueryRoutine(value_name.data(), REG_SZ, bytes.data(),
                                   static_cast<ULONG>(bytes.size()), context, entry.EntryContext);
            if (!NT_SUCCESS(status)) return status;
            i += item.size() + 1;
        }
        return STATUS_SUCCESS;
    }
    return entry.QueryRoutine(value_name.data(), type, data.empty() ? nullptr : data.data(),
                              static_cast<ULONG>(data.size()), context, entry.EntryContext);
}

}  // namespace

bool load_registry_text(std::string_view text, std::string &error) {
    std::shared_ptr<KeyNode> key;
    size_t line_number = 0;
    auto fail = [&](const std::string &why) {
        error = fmt::format("line {}: {}", line_number, why);
        return false;
    };
    auto widen = [](std::string_view s) {
        std::wstring out;
        for (unsigned char c : s)
            out.push_back(c);
        return out;
    };
    // A quoted string at `s[i]`; advances i past it.
    auto quoted = [](std::string_view s, size_t &i, std::string &out) {
        if (i >= s.size() || s[i] != '"') return false;
        for (++i; i < s.size(); ++i) {
            if (s[i] == '\\' && i + 1 < s.size()) {
                out.push_back(s[++i]);
            } else if (s[i] == '"') {
                ++i;
                return true;
            } else {
                out.push_back(s[i]);
            }
        }
        return false;
    };
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++line_number;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
            line.remove_suffix(1);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        if (line.empty() || line.front() == ';' || line.front() == '#') continue;
        if (line == "Windows Registry Editor Version 5.00" || line == "REGEDIT4") continue;
        if (line.front() == '[') {
            if (line.back() != ']') return fail("a key line must end with ]");
            std::string path(line.substr(1, line.size() - 2));
            for (auto [alias, real] : {std::pair{"HKEY_LOCAL_MACHINE", "\\Registry\\Machine"},
                                       std::pair{"HKLM", "\\Registry\\Machine"},
                                       std::pair{"HKEY_USERS", "\\Registry\\User"},
                                       std::pair{"HKU", "\\Registry\\User"}}) {
                const size_t n = std::strlen(alias);
                if (path.size() >= n && strncasecmp(path.c_str(), alias, n) == 0 &&
                    (path.size() == n || path[n] == '\\')) {
                    path = real + path.substr(n);
                    break;
                }
            }
            const std::wstring wide = widen(path);
            if (!NT_SUCCESS(rtl_key(RTL_REGISTRY_ABSOLUTE, wide.c_str(), true, key)))
                return fail("not a registry key name: " + path);
            continue;
        }
        if (!key) return fail("a value before any [key]");
        size_t i = 0;
        std::string name;
        if (line.front() == '@') {
            i = 1;
        } else if (!quoted(line, i, name)) {
            return fail("a value name must be \"quoted\" or @");
        }
        if (i >= line.size() || line[i] != '=') return fail("expected = after the value name");
        std::string_view data = line.substr(i + 1);
        ULONG type = REG_SZ;
        std::vector<UCHAR> bytes;
        auto hex_number = [&](std::string_view digits, int max_digits, ULONGLONG &out) {
            if (digits.empty() || static_cast<int>(digits.size()) > max_digits) return false;
            out = 0;
            for (char c : digits) {
                if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
                out = out * 16 + static_cast<ULONGLONG>(std::isdigit(static_cast<unsigned char>(c))
                                                            ? c - '0'
                                                            : std::tolower(c) - 'a' + 10);
            }
            return true;
        };
        auto string_list = [&](std::string_view rest, std::vector<std::wstring> &items) {
            size_t k = 0;
            while (k < rest.size()) {
                std::string item;
                if (!quoted(rest, k, item)) return false;
                items.push_back(widen(item));
                if (k < rest.size() && rest[k] != ',') return false;
                if (k < rest.size()) ++k;
            }
            return true;
        };
        if (data.starts_with("\"")) {
            size_t k = 0;
            std::string text_value;
            if (!quoted(data, k, text_value) || k != data.size()) return fail("bad string");
            bytes = wide_bytes(widen(text_value));
        } else if (data.starts_with("dword:")) {
            ULONGLONG n;
            if (!hex_number(data.substr(6), 8, n)) return fail("bad dword");
            type = REG_DWORD;
            const ULONG v = static_cast<ULONG>(n);
            bytes.assign(reinterpret_cast<const UCHAR *>(&v),
                         reinterpret_cast<const UCHAR *>(&v) + 4);
        } else if (data.starts_with("qword:")) {
            ULONGLONG n;
            if (!hex_number(data.substr(6), 16, n)) return fail("bad qword");
            type = REG_QWORD;
            bytes.assign(reinterpret_cast<const UCHAR *>(&n),
                         reinterpret_cast<const UCHAR *>(&n) + 8);
        } else if (data.starts_with("hex")) {
            std::string_view rest = data.substr(3);
            type = REG_BINARY;
            if (rest.starts_with("(")) {
                const size_t close = rest.find(')');
                ULONGLONG n;
                if (close == std::string_view::npos || !hex_number(rest.substr(1, close - 1), 8, n))
                    return fail("bad hex(type)");
                type = static_cast<ULONG>(n);
                rest = rest.substr(close + 1);
            }
            if (!rest.starts_with(":")) return fail("expected : after hex");
            rest.remove_prefix(1);
            while (!rest.empty()) {
                const size_t comma = rest.find(',');
                ULONGLONG n;
                if (!hex_number(rest.substr(0, comma), 2, n)) return fail("bad hex byte");
                bytes.push_back(static_cast<UCHAR>(n));
                rest =
                    comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
            }
        } else if (data.starts_with("multi:")) {
            std::vector<std::wstring> items;
            if (!string_list(data.substr(6), items)) return fail("bad multi string list");
            type = REG_MULTI_SZ;
            for (const auto &item : items) {
                auto b = wide_bytes(item);
                bytes.insert(bytes.end(), b.begin(), b.end());
            }
            bytes.resize(bytes.size() + sizeof(WCHAR), 0);
        } else if (data.starts_with("expand:")) {
            std::vector<std::wstring> items;
            if (!string_list(data.substr(7), items) || items.size() != 1)
                return fail("bad expand string");
            type = REG_EXPAND_SZ;
            bytes = wide_bytes(items.front());
        } else {
            return fail("unknown value data: " + std::string(data));
        }
        std::lock_guard guard(registry().lock);
        set_value_locked(*key, widen(name), type, bytes.data(), static_cast<ULONG>(bytes.size()));
    }
    return true;
}

void ensure_service_key(const std::wstring &service_name) {
    std::shared_ptr<KeyNode> key;
    rtl_key(RTL_REGISTRY_SERVICES, service_name.c_str(), true, key);
}

void reset_registry() {
    std::lock_guard guard(registry().lock);
    registry().reset();
}

}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

NTSTATUS NTAPI ZwCreateKey(PHANDLE KeyHandle, ACCESS_MASK DesiredAccess,
                           POBJECT_ATTRIBUTES ObjectAttributes, ULONG TitleIndex,
                           PUNICODE_STRING Class, ULONG CreateOptions, PULONG Disposition) {
    (void)DesiredAccess;
    (void)TitleIndex;
    (void)CreateOptions;
    return wdk::open_key(KeyHandle, ObjectAttributes, true, Class, Disposition, nullptr,
                         "ZwCreateKey");
}

NTSTATUS NTAPI ZwOpenKey(PHANDLE KeyHandle, ACCESS_MASK DesiredAccess,
                         POBJECT_ATTRIBUTES ObjectAttributes) {
    (void)DesiredAccess;
    return wdk::open_key(KeyHandle, ObjectAttributes, false, nullptr, nullptr, nullptr,
                         "ZwOpenKey");
}

NTSTATUS NTAPI ZwCreateKeyTransacted(PHANDLE KeyHandle, ACCESS_MASK DesiredAccess,
                                     POBJECT_ATTRIBUTES ObjectAttributes, ULONG TitleIndex,
                                     PUNICODE_STRING Class, ULONG CreateOptions,
                                     HANDLE TransactionHandle, PULONG Disposition) {
    (void)DesiredAccess;
    (void)TitleIndex;
    (void)CreateOptions;
    if (TransactionHandle == nullptr) return STATUS_INVALID_HANDLE;
    return wdk::open_key(KeyHandle, ObjectAttributes, true, Class, Disposition, TransactionHandle,
                         "ZwCreateKeyTransacted");
}

NTSTATUS NTAPI ZwOpenKeyTransacted(PHANDLE KeyHandle, ACCESS_MASK DesiredAccess,
                                   POBJECT_ATTRIBUTES ObjectAttributes, HANDLE TransactionHandle) {
    (void)DesiredAccess;
    if (TransactionHandle == nullptr) return STATUS_INVALID_HANDLE;
    return wdk::open_key(KeyHandle, ObjectAttributes, false, nullptr, nullptr, TransactionHandle,
                         "ZwOpenKeyTransacted");
}

NTSTATUS NTAPI ZwDeleteKey(HANDLE KeyHandle) {
    wdk::require_passive("ZwDeleteKey");
    wdk::HandleRef<wdk::KeyObject> key(KeyHandle, &wdk::g_key_type);
    if (!NT_SUCCESS(key.status())) return key.status();
    REG_DELETE_KEY_INFORMATION info{key.get(), nullptr, nullptr, nullptr};
    return wdk::with_notifications(RegNtPreDeleteKey, RegNtPostDeleteKey, key.get(), info, [&] {
        std::lock_guard guard(wdk::registry().lock);
        auto node = key->node;
        if (node->deleted) return STATUS_KEY_DELETED;
        if (!node->subkeys.empty()) return STATUS_CANNOT_DELETE;
        auto parent = node->parent.lock();
        if (!parent) return STATUS_CANNOT_DELETE;  // \REGISTRY itself
        parent->subkeys.erase(wdk::upcase_name(node->name));
        parent->last_write = wdk::system_time_now();
        node->deleted = true;
        return STATUS_SUCCESS;
    });
}

NTSTATUS NTAPI ZwSetValueKey(HANDLE KeyHandle, PUNICODE_STRING ValueName, ULONG TitleIndex,
                             ULONG Type, PVOID Data, ULONG DataSize) {
    wdk::require_passive("ZwSetValueKey");
    wdk::HandleRef<wdk::KeyObject> key(KeyHandle, &wdk::g_key_type);
    if (!NT_SUCCESS(key.status())) return key.status();
    if (Data == nullptr && DataSize != 0) return STATUS_INVALID_PARAMETER;
    REG_SET_VALUE_KEY_INFORMATION info{key.get(), ValueName, TitleIndex, Type,   Data,
                                       DataSize,  nullptr,   nullptr,    nullptr};
    const std::wstring name = wdk::to_wstring(ValueName);
    const auto *bytes = static_cast<const UCHAR *>(Data);
    return wdk::with_notifications(RegNtPreSetValueKey, RegNtPostSetValueKey, key.get(), info, [&] {
        if (key->transaction != nullptr) {
            {
                std::lock_guard guard(wdk::registry().lock);
                if (key->node->deleted) return STATUS_KEY_DELETED;
            }
            std::vector<UCHAR> copy(bytes, bytes + DataSize);
            return wdk::defer_to_transaction(key.get(), [node = key->node, name, Type, copy] {
                if (!node->deleted)
                    wdk::set_value_locked(*node, name, Type, copy.data(),
                                          static_cast<ULONG>(copy.size()));
            });
        }
        std::lock_guard guard(wdk::registry().lock);
        if (key->node->deleted) return STATUS_KEY_DELETED;
        wdk::set_value_locked(*key->node, name, Type, bytes, DataSize);
        return STATUS_SUCCESS;
    });
}

NTSTATUS NTAPI ZwDeleteValueKey(HANDLE KeyHandle, PUNICODE_STRING ValueName) {
    wdk::require_passive("ZwDeleteValueKey");
    wdk::HandleRef<wdk::KeyObject> key(KeyHandle, &wdk::g_key_type);
    if (!NT_SUCCESS(key.status())) return key.status();
    REG_DELETE_VALUE_KEY_INFORMATION info{key.get(), ValueName, nullptr, nullptr, nullptr};
    const std::wstring name = wdk::to_wstring(ValueName);
    return wdk::with_notifications(
        RegNtPreDeleteValueKey, RegNtPostDeleteValueKey, key.get(), info, [&] {
            std::lock_guard guard(wdk::registry().lock);
            if (key->node->deleted) return STATUS_KEY_DELETED;
            if (wdk::find_value(*key->node, name) == nullptr) return STATUS_OBJECT_NAME_NOT_FOUND;
            if (key->transaction != nullptr) {
                return wdk::defer_to_transaction(key.get(), [node = key->node, name] {
                    if (!node->deleted) wdk::delete_value_locked(*node, name);
                });
            }
            wdk::delete_value_locked(*key->node, name);
            return STATUS_SUCCESS;
        });
}

NTSTATUS NTAPI ZwQueryValueKey(HANDLE KeyHandle, PUNICODE_STRING ValueName,
                               KEY_VALUE_INFORMATION_CLASS KeyValueInformationClass,
                               PVOID KeyValueInformation, ULONG Length, PULONG ResultLength) {
    wdk::require_passive("ZwQueryValueKey");
    wdk::HandleRef<wdk::KeyObject> key(KeyHandle, &wdk::g_key_type);
    if (!NT_SUCCESS(key.status())) return key.status();
    REG_QUERY_VALUE_KEY_INFORMATION info{key.get(),
                                         ValueName,
                                         KeyValueInformationClass,
                                         KeyValueInformation,
                                         Length,
                                         ResultLength,
                                         nullptr,
                                         nullptr,
                                         nullptr};
    return wdk::with_notifications(
        RegNtPreQueryValueKey, RegNtPostQueryValueKey, key.get(), info, [&] {
            std::vector<UCHAR> information;
            ULONG fixed = 0;
            {
                std::lock_guard guard(wdk::registry().lock);
                if (key->node->deleted) return STATUS_KEY_DELETED;
                const wdk::Value *value = wdk::find_value(*key->node, wdk::to_wstring(ValueName));
                if (value == nullptr) return STATUS_OBJECT_NAME_NOT_FOUND;
                const NTSTATUS status =
                    wdk::value_information(*value, KeyValueInformationClass, information, fixed);
                if (!NT_SUCCESS(status)) return status;
            }
            return wdk::copy_information(information, fixed, KeyValueInformation, Length,
                                         ResultLength);
        });
}

NTSTATUS NTAPI ZwEnumerateValueKey(HANDLE KeyHandle, ULONG Index,
                                   KEY_VALUE_INFORMATION_CLASS KeyValueInformationClass,
                                   PVOID KeyValueInformation, ULONG Length, PULONG ResultLength) {
    wdk::require_passive("ZwEnumerateValueKey");
    wdk::HandleRef<wdk::KeyObject> key(KeyHandle, &wdk::g_key_type);
    if (!NT_SUCCESS(key.status())) return key.status();
    std::vector<UCHAR> information;
    ULONG fixed = 0;
    {
        std::lock_guard guard(wdk::registry().lock);
        if (key->node->deleted) return STATUS_KEY_DELETED;
        if (Index >= key->node->values.size()) return STATUS_NO_MORE_ENTRIES;
        const NTSTATUS status = wdk::value_information(
            key->node->values[Index], KeyValueInformationClass, information, fixed);
        if (!NT_SUCCESS(status)) return status;
    }
    return wdk::copy_information(information, fixed, KeyValueInformation, Length, ResultLength);
}

NTSTATUS NTAPI ZwEnumerateKey(HANDLE KeyHandle, ULONG Index,
                              KEY_INFORMATION_CLASS KeyInformationClass, PVOID KeyInformation,
                              ULONG Length, PULONG ResultLength) {
    wdk::require_passive("ZwEnumerateKey");
    wdk::HandleRef<wdk::KeyObject> key(KeyHandle, &wdk::g_key_type);
    if (!NT_SUCCESS(key.status())) return key.status();
    if (KeyInformationClass != KeyBasicInformation && KeyInformationClass != KeyNodeInformation &&
        KeyInformationClass != KeyFullInformation)
        return STATUS_INVALID_PARAMETER;
    std::vector<UCHAR> information;
    ULONG fixed = 0;
    {
        std::lock_guard guard(wdk::registry().lock);
        if (key->node->deleted) return STATUS_KEY_DELETED;
        if (Index >= key->node->subkeys.size()) return STATUS_NO_MORE_ENTRIES;
        auto child = std::next(key->node->subkeys.begin(), Index)->second;
        const NTSTATUS status =
            wdk::key_information(*child, child->name, KeyInformationClass, information, fixed);
        if (!NT_SUCCESS(status)) return status;
    }
    return wdk::copy_information(information, fixed, KeyInformation, Length, ResultLength);
}

NTSTATUS NTAPI ZwQueryKey(HANDLE KeyHandle, KEY_INFORMATION_CLASS KeyInformationClass,
                          PVOID KeyInformation, ULONG Length, PULONG ResultLength) {
    wdk::require_passive("ZwQueryKey");
    wdk::HandleRef<wdk::KeyObject> key(KeyHandle, &wdk::g_key_type);
    if (!NT_SUCCESS(key.status())) return key.status();
    std::vector<UCHAR> information;
    ULONG fixed = 0;
    {
        std::lock_guard guard(wdk::registry().lock);
        if (key->node->deleted) return STATUS_KEY_DELETED;
        const std::wstring name =
            KeyInformationClass == KeyNameInformation ? wdk::full_path(key->node) : key->node->name;
        const NTSTATUS status =
            wdk::key_information(*key->node, name, KeyInformationClass, information, fixed);
        if (!NT_SUCCESS(status)) return status;
    }
    return wdk::copy_information(information, fixed, KeyInformation, Length, ResultLength);
}

NTSTATUS NTAPI RtlQueryRegistryValues(ULONG RelativeTo, PCWSTR Path,
                                      PRTL_QUERY_REGISTRY_TABLE QueryTable, PVOID Context,
                                      PVOID Environment) {
    (void)Environment;
    wdk::require_passive("RtlQueryRegistryValues");
    if (QueryTable == nullptr) return STATUS_INVALID_PARAMETER;
    std::shared_ptr<wdk::KeyNode> top;
    NTSTATUS status = wdk::rtl_key(RelativeTo, Path, false, top);
    if (!NT_SUCCESS(status)) return status;
    std::shared_ptr<wdk::KeyNode> current = top;
    for (PRTL_QUERY_REGISTRY_TABLE entry = QueryTable;
         entry->QueryRoutine != nullptr || entry->Name != nullptr; ++entry) {
        if ((entry->Flags & RTL_QUERY_REGISTRY_TOPKEY) != 0) current = top;
        if ((entry->Flags & RTL_QUERY_REGISTRY_SUBKEY) != 0) {
            if (entry->Name == nullptr) return STATUS_INVALID_PARAMETER;
            std::shared_ptr<wdk::KeyNode> sub;
            {
                std::lock_guard guard(wdk::registry().lock);
                status = wdk::walk(top, entry->Name, false, sub, nullptr);
            }
            if (!NT_SUCCESS(status)) {
                if ((entry->Flags & RTL_QUERY_REGISTRY_REQUIRED) != 0) return status;
                // Skip this entry and the ones that belong to the missing subkey.
                while ((entry + 1)->QueryRoutine != nullptr && (entry + 1)->Name != nullptr &&
                       ((entry + 1)->Flags &
                        (RTL_QUERY_REGISTRY_TOPKEY | RTL_QUERY_REGISTRY_SUBKEY)) == 0)
                    ++entry;
                continue;
            }
            current = sub;
            if (entry->QueryRoutine == nullptr) continue;
        }
        if ((entry->Flags & RTL_QUERY_REGISTRY_DIRECT) == 0 && entry->QueryRoutine == nullptr)
            return STATUS_INVALID_PARAMETER;
        if ((entry->Flags & RTL_QUERY_REGISTRY_NOVALUE) != 0) {
            status = entry->QueryRoutine(entry->Name, REG_NONE, nullptr, 0, Context,
                                         entry->EntryContext);
            if (!NT_SUCCESS(status)) return status;
            continue;
        }
        std::vector<wdk::Value> values;
        {
            std::lock_guard guard(wdk::registry().lock);
            if (current->deleted) return STATUS_KEY_DELETED;
            if (entry->Name == nullptr || (entry->Flags & RTL_QUERY_REGISTRY_SUBKEY) != 0) {
                values = current->values;
            } else if (const wdk::Value *value = wdk::find_value(*current, entry->Name)) {
                values.push_back(*value);
            }
        }
        if (entry->Name == nullptr || (entry->Flags & RTL_QUERY_REGISTRY_SUBKEY) != 0) {
            if ((entry->Flags & RTL_QUERY_REGISTRY_DIRECT) != 0) return STATUS_INVALID_PARAMETER;
            for (auto &value : values) {
                status = wdk::deliver(*entry, value.name, value.type, value.data, Context);
                if (!NT_SUCCESS(status)) return status;
            }
            continue;
        }
        if (values.empty()) {
            if ((entry->Flags & RTL_QUERY_REGISTRY_REQUIRED) != 0)
                return STATUS_OBJECT_NAME_NOT_FOUND;
            const ULONG default_type = entry->DefaultType & ~RTL_QUERY_REGISTRY_TYPECHECK_MASK;
            if (default_type == REG_NONE || entry->DefaultData == nullptr) continue;
            ULONG length = entry->DefaultLength;
            const auto *data = static_cast<const UCHAR *>(entry->DefaultData);
            if (length == 0 && wdk::is_string_type(default_type)) {
                const auto *chars = static_cast<const WCHAR *>(entry->DefaultData);
                size_t n = 0;
                if (default_type == REG_MULTI_SZ) {
                    while (chars[n] != 0 || chars[n + 1] != 0)
                        ++n;
                    n += 2;
                } else {
                    while (chars[n] != 0)
                        ++n;
                    n += 1;
                }
                length = static_cast<ULONG>(n * sizeof(WCHAR));
            }
            RTL_QUERY_REGISTRY_TABLE defaults = *entry;
            defaults.Flags &= ~RTL_QUERY_REGISTRY_TYPECHECK;  // defaults are not type-checked
            status = wdk::deliver(defaults, entry->Name, default_type,
                                  std::vector<UCHAR>(data, data + length), Context);
            if (!NT_SUCCESS(status)) return status;
            continue;
        }
        status = wdk::deliver(*entry, values.front().name, values.front().type, values.front().data,
                              Context);
        if (!NT_SUCCESS(status)) return status;
        if ((entry->Flags & RTL_QUERY_REGISTRY_DELETE) != 0) {
            std::lock_guard guard(wdk::registry().lock);
            wdk::delete_value_locked(*current, entry->Name);
        }
    }
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlWriteRegistryValue(ULONG RelativeTo, PCWSTR Path, PCWSTR ValueName,
                                     ULONG ValueType, PVOID ValueData, ULONG ValueLength) {
    wdk::require_passive("RtlWriteRegistryValue");
    if (ValueData == nullptr && ValueLength != 0) return STATUS_INVALID_PARAMETER;
    std::shared_ptr<wdk::KeyNode> node;
    const NTSTATUS status = wdk::rtl_key(RelativeTo, Path, true, node);
    if (!NT_SUCCESS(status)) return status;
    std::lock_guard guard(wdk::registry().lock);
    if (node->deleted) return STATUS_KEY_DELETED;
    wdk::set_value_locked(*node, ValueName == nullptr ? L"" : ValueName, ValueType,
                          static_cast<const UCHAR *>(ValueData), ValueLength);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlDeleteRegistryValue(ULONG RelativeTo, PCWSTR Path, PCWSTR ValueName) {
    wdk::require_passive("RtlDeleteRegistryValue");
    std::shared_ptr<wdk::KeyNode> node;
    const NTSTATUS status = wdk::rtl_key(RelativeTo, Path, false, node);
    if (!NT_SUCCESS(status)) return status;
    std::lock_guard guard(wdk::registry().lock);
    if (node->deleted) return STATUS_KEY_DELETED;
    return wdk::delete_value_locked(*node, ValueName == nullptr ? L"" : ValueName)
               ? STATUS_SUCCESS
               : STATUS_OBJECT_NAME_NOT_FOUND;
}

NTSTATUS NTAPI IoOpenDeviceRegistryKey(PDEVICE_OBJECT DeviceObject, ULONG DevInstKeyType,
                                       ACCESS_MASK DesiredAccess, PHANDLE DeviceRegKey) {
    (void)DesiredAccess;
    wdk::require_passive("IoOpenDeviceRegistryKey");
    if (DeviceRegKey == nullptr || DeviceObject == nullptr || DeviceObject->DriverObject == nullptr)
        return STATUS_INVALID_PARAMETER;
    *DeviceRegKey = nullptr;
    const ULONG kind = DevInstKeyType & ~PLUGPLAY_REGKEY_CURRENT_HWPROFILE;
    if (kind != PLUGPLAY_REGKEY_DEVICE && kind != PLUGPLAY_REGKEY_DRIVER)
        return STATUS_INVALID_PARAMETER;
    // NNNN: the device's number among its driver's devices, in the order they first ask.
    static std::mutex lock;
    static std::map<PDEVICE_OBJECT, ULONG> *numbers = new std::map<PDEVICE_OBJECT, ULONG>;
    static std::map<PDRIVER_OBJECT, ULONG> *next = new std::map<PDRIVER_OBJECT, ULONG>;
    ULONG number;
    {
        std::lock_guard guard(lock);
        auto found = numbers->find(DeviceObject);
        if (found == numbers->end())
            found = numbers->emplace(DeviceObject, (*next)[DeviceObject->DriverObject]++).first;
        number = found->second;
    }
    std::wstring driver = wdk::to_wstring(&DeviceObject->DriverObject->DriverName);
    driver = driver.substr(driver.rfind(L'\\') + 1);
    wchar_t instance[8];
    swprintf(instance, 8, L"%04u", number);
    const std::wstring path =
        L"\\Registry\\Machine\\System\\CurrentControlSet\\Enum\\Root\\" + driver + L"\\" +
        instance + (kind == PLUGPLAY_REGKEY_DEVICE ? L"\\Device Parameters" : L"\\Driver");
    std::shared_ptr<wdk::KeyNode> node;
    const NTSTATUS status = wdk::rtl_key(RTL_REGISTRY_ABSOLUTE, path.c_str(), true, node);
    if (!NT_SUCCESS(status)) return status;
    auto *key = new (std::nothrow) wdk::KeyObject(node, nullptr);
    if (key == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    *DeviceRegKey = wdk::insert_handle(key);
    return STATUS_SUCCESS;
}

// ---- Registry callbacks.

NTSTATUS NTAPI CmRegisterCallbackEx(PEX_CALLBACK_FUNCTION Function, PCUNICODE_STRING Altitude,
                                    PVOID Driver, PVOID Context, PLARGE_INTEGER Cookie,
                                    PVOID Reserved) {
    (void)Driver;
    (void)Reserved;
    wdk::require_irql_at_most(APC_LEVEL, "CmRegisterCallbackEx");
    if (Function == nullptr || Cookie == nullptr || Altitude == nullptr || Altitude->Length == 0)
        return STATUS_INVALID_PARAMETER;
    std::lock_guard guard(wdk::g_cm_lock);
    const std::wstring altitude = wdk::to_wstring(Altitude);
    for (const auto &r : wdk::g_cm_registrations)
        if (r.altitude == altitude) return STATUS_FLT_INSTANCE_ALTITUDE_COLLISION;
    const LONGLONG cookie = wdk::g_next_cookie++;
    wdk::g_cm_registrations.push_back({cookie, Function, Context, altitude});
    Cookie->QuadPart = cookie;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI CmUnRegisterCallback(LARGE_INTEGER Cookie) {
    wdk::require_irql_at_most(APC_LEVEL, "CmUnRegisterCallback");
    std::lock_guard guard(wdk::g_cm_lock);
    auto &all = wdk::g_cm_registrations;
    auto found = std::find_if(all.begin(), all.end(), [&](const wdk::CmRegistration &r) {
        return r.cookie == Cookie.QuadPart;
    });
    if (found == all.end()) return STATUS_INVALID_PARAMETER;
    all.erase(found);
    return STATUS_SUCCESS;
}

VOID NTAPI CmGetCallbackVersion(PULONG Major, PULONG Minor) {
    if (Major != nullptr) *Major = 1;
    if (Minor != nullptr) *Minor = 0;
}

NTSTATUS NTAPI CmCallbackGetKeyObjectIDEx(PLARGE_INTEGER Cookie, PVOID Object, PULONG_PTR ObjectID,
                                          PCUNICODE_STRING *ObjectName, ULONG Flags) {
    (void)Flags;
    wdk::require_irql_at_most(APC_LEVEL, "CmCallbackGetKeyObjectIDEx");
    if (Cookie == nullptr) return STATUS_INVALID_PARAMETER;
    wdk::KernelObject *object = wdk::as_kernel_object(Object);
    if (object == nullptr || object->type() != &wdk::g_key_type) return STATUS_INVALID_PARAMETER;
    auto *key = static_cast<wdk::KeyObject *>(object);
    if (ObjectID != nullptr) *ObjectID = reinterpret_cast<ULONG_PTR>(key->node.get());
    if (ObjectName != nullptr) {
        std::wstring path;
        {
            std::lock_guard guard(wdk::registry().lock);
            path = wdk::full_path(key->node);
        }
        const size_t bytes = path.size() * sizeof(WCHAR);
        // One block: the UNICODE_STRING and its text (released by CmCallbackReleaseKeyObjectIDEx).
        auto *name = static_cast<PUNICODE_STRING>(ExAllocatePoolWithTag(
            PagedPool, sizeof(UNICODE_STRING) + bytes + sizeof(WCHAR), wdk::kRegistryTag));
        if (name == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
        name->Buffer = reinterpret_cast<PWCH>(name + 1);
        std::memcpy(name->Buffer, path.c_str(), bytes + sizeof(WCHAR));
        name->Length = static_cast<USHORT>(bytes);
        name->MaximumLength = static_cast<USHORT>(bytes + sizeof(WCHAR));
        *ObjectName = name;
    }
    return STATUS_SUCCESS;
}

VOID NTAPI CmCallbackReleaseKeyObjectIDEx(PCUNICODE_STRING ObjectName) {
    if (ObjectName != nullptr)
        ExFreePoolWithTag(const_cast<PUNICODE_STRING>(ObjectName), wdk::kRegistryTag);
}

NTSTATUS NTAPI CmCallbackGetKeyObjectID(PLARGE_INTEGER Cookie, PVOID Object, PULONG_PTR ObjectID,
                                        PCUNICODE_STRING *ObjectName) {
    // The name stays valid until the registration goes: kept per (cookie, key node).
    PCUNICODE_STRING name = nullptr;
    const NTSTATUS status = CmCallbackGetKeyObjectIDEx(Cookie, Object, ObjectID,
                                                       ObjectName != nullptr ? &name : nullptr, 0);
    if (!NT_SUCCESS(status) || ObjectName == nullptr) return status;
    static std::mutex lock;
    static auto *names = new std::map<std::pair<LONGLONG, std::wstring>, PCUNICODE_STRING>;
    std::lock_guard guard(lock);
    auto [it, inserted] = names->emplace(std::pair{Cookie->QuadPart, wdk::to_wstring(name)}, name);
    if (!inserted) CmCallbackReleaseKeyObjectIDEx(name);
    *ObjectName = it->second;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI CmSetCallbackObjectContext(PVOID Object, PLARGE_INTEGER Cookie, PVOID NewContext,
                                          PVOID *OldContext) {
    wdk::require_irql_at_most(APC_LEVEL, "CmSetCallbackObjectContext");
    if (Cookie == nullptr) return STATUS_INVALID_PARAMETER;
    wdk::KernelObject *object = wdk::as_kernel_object(Object);
    if (object == nullptr || object->type() != &wdk::g_key_type) return STATUS_INVALID_PARAMETER;
    {
        std::lock_guard guard(wdk::g_cm_lock);
        if (std::none_of(
                wdk::g_cm_registrations.begin(), wdk::g_cm_registrations.end(),
                [&](const wdk::CmRegistration &r) { return r.cookie == Cookie->QuadPart; }))
            return STATUS_INVALID_PARAMETER;
    }
    auto *key = static_cast<wdk::KeyObject *>(object);
    std::lock_guard guard(key->contexts_lock);
    PVOID &slot = key->contexts[Cookie->QuadPart];
    if (OldContext != nullptr) *OldContext = slot;
    slot = NewContext;
    return STATUS_SUCCESS;
}

PVOID NTAPI CmGetBoundTransaction(PLARGE_INTEGER Cookie, PVOID Object) {
    (void)Cookie;
    wdk::KernelObject *object = wdk::as_kernel_object(Object);
    if (object == nullptr || object->type() != &wdk::g_key_type) return nullptr;
    return static_cast<wdk::KeyObject *>(object)->transaction;
}

// ---- Transactions.

NTSTATUS NTAPI ZwCreateTransactionManager(PHANDLE TmHandle, ACCESS_MASK DesiredAccess,
                                          POBJECT_ATTRIBUTES ObjectAttributes,
                                          PUNICODE_STRING LogFileName, ULONG CreateOptions,
                                          ULONG CommitStrength) {
    (void)DesiredAccess;
    (void)ObjectAttributes;
    (void)LogFileName;
    (void)CreateOptions;
    (void)CommitStrength;
    wdk::require_irql_at_most(APC_LEVEL, "ZwCreateTransactionManager");
    if (TmHandle == nullptr) return STATUS_INVALID_PARAMETER;
    auto *manager = new (std::nothrow) wdk::TransactionManagerObject;
    if (manager == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    *TmHandle = wdk::insert_handle(manager);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ZwCreateResourceManager(PHANDLE ResourceManagerHandle, ACCESS_MASK DesiredAccess,
                                       HANDLE TmHandle, LPGUID ResourceManagerGuid,
                                       POBJECT_ATTRIBUTES ObjectAttributes, ULONG CreateOptions,
                                       PUNICODE_STRING Description) {
    (void)DesiredAccess;
    (void)ResourceManagerGuid;
    (void)ObjectAttributes;
    (void)CreateOptions;
    (void)Description;
    wdk::require_irql_at_most(APC_LEVEL, "ZwCreateResourceManager");
    if (ResourceManagerHandle == nullptr) return STATUS_INVALID_PARAMETER;
    wdk::HandleRef<wdk::TransactionManagerObject> manager(TmHandle,
                                                          &wdk::g_transaction_manager_type);
    if (!NT_SUCCESS(manager.status())) return manager.status();
    auto *resource_manager = new (std::nothrow) wdk::ResourceManagerObject;
    if (resource_manager == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    *ResourceManagerHandle = wdk::insert_handle(resource_manager);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ZwCreateTransaction(PHANDLE TransactionHandle, ACCESS_MASK DesiredAccess,
                                   POBJECT_ATTRIBUTES ObjectAttributes, LPGUID Uow, HANDLE TmHandle,
                                   ULONG CreateOptions, ULONG IsolationLevel, ULONG IsolationFlags,
                                   PLARGE_INTEGER Timeout, PUNICODE_STRING Description) {
    (void)DesiredAccess;
    (void)ObjectAttributes;
    (void)CreateOptions;
    (void)IsolationLevel;
    (void)IsolationFlags;
    (void)Timeout;
    (void)Description;
    wdk::require_irql_at_most(APC_LEVEL, "ZwCreateTransaction");
    if (TransactionHandle == nullptr) return STATUS_INVALID_PARAMETER;
    if (TmHandle != nullptr) {
        wdk::HandleRef<wdk::TransactionManagerObject> manager(TmHandle,
                                                              &wdk::g_transaction_manager_type);
        if (!NT_SUCCESS(manager.status())) return manager.status();
    }
    auto *transaction = new (std::nothrow) wdk::TransactionObject;
    if (transaction == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
    ExUuidCreate(&transaction->uow);
    if (Uow != nullptr) *Uow = transaction->uow;
    *TransactionHandle = wdk::insert_handle(transaction);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ZwCreateEnlistment(PHANDLE EnlistmentHandle, ACCESS_MASK DesiredAccess,
                                  HANDLE ResourceManagerHandle, HANDLE TransactionHandle,
                                  POBJECT_ATTRIBUTES ObjectAttributes, ULONG CreateOptions,
                                  NOTIFICATION_MASK NotificationMask, PVOID EnlistmentKey) {
    (void)DesiredAccess;
    (void)ObjectAttributes;
    (void)CreateOptions;
    (void)EnlistmentKey;
    wdk::require_irql_at_most(APC_LEVEL, "ZwCreateEnlistment");
    if (EnlistmentHandle == nullptr || NotificationMask == 0 ||
        (NotificationMask & ~TRANSACTION_NOTIFY_MASK) != 0)
        return STATUS_INVALID_PARAMETER;
    PVOID resource_manager = nullptr, transaction = nullptr;
    NTSTATUS status = wdk::reference_handle(ResourceManagerHandle, &wdk::g_resource_manager_type,
                                            &resource_manager);
    if (!NT_SUCCESS(status)) return status;
    status = wdk::reference_handle(TransactionHandle, &wdk::g_transaction_type, &transaction);
    if (NT_SUCCESS(status)) {
        auto *tx = static_cast<wdk::TransactionObject *>(wdk::as_kernel_object(transaction));
        std::lock_guard guard(tx->lock);
        if (tx->state != wdk::TransactionState::kActive) status = STATUS_TRANSACTION_NOT_ACTIVE;
    }
    if (!NT_SUCCESS(status)) {
        wdk::object_dereference(resource_manager, "ZwCreateEnlistment");
        if (transaction != nullptr) wdk::object_dereference(transaction, "ZwCreateEnlistment");
        return status;
    }
    auto *enlistment = new wdk::EnlistmentObject(wdk::as_kernel_object(transaction),
                                                 wdk::as_kernel_object(resource_manager));
    *EnlistmentHandle = wdk::insert_handle(enlistment);
    return STATUS_SUCCESS;
}

namespace {
NTSTATUS finish_transaction(HANDLE handle, bool commit, const char *caller) {
    wdk::require_irql_at_most(APC_LEVEL, caller);
    wdk::HandleRef<wdk::TransactionObject> tx(handle, &wdk::g_transaction_type);
    if (!NT_SUCCESS(tx.status())) return tx.status();
    std::vector<std::function<void()>> pending;
    {
        std::lock_guard guard(tx->lock);
        if (tx->state == wdk::TransactionState::kCommitted)
            return STATUS_TRANSACTION_ALREADY_COMMITTED;
        if (tx->state == wdk::TransactionState::kRolledBack)
            return STATUS_TRANSACTION_ALREADY_ABORTED;
        tx->state = commit ? wdk::TransactionState::kCommitted : wdk::TransactionState::kRolledBack;
        pending.swap(tx->pending);
    }
    if (commit) {
        std::lock_guard guard(wdk::registry().lock);
        for (auto &change : pending)
            change();
    }
    return STATUS_SUCCESS;
}
}  // namespace

NTSTATUS NTAPI ZwCommitTransaction(HANDLE TransactionHandle, BOOLEAN Wait) {
    (void)Wait;
    return finish_transaction(TransactionHandle, true, "ZwCommitTransaction");
}

NTSTATUS NTAPI ZwRollbackTransaction(HANDLE TransactionHandle, BOOLEAN Wait) {
    (void)Wait;
    return finish_transaction(TransactionHandle, false, "ZwRollbackTransaction");
}

}  // extern "C"
