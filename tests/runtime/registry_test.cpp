// The in-memory registry: Zw*Key and Zw*ValueKey with Windows' buffer rules, case-insensitive
// names, relative opens, deletion, enumeration order; RtlQueryRegistryValues in the table forms
// drivers use; RtlWriteRegistryValue / RtlDeleteRegistryValue; IoOpenDeviceRegistryKey;
// registry callbacks (Cm*); transacted keys (ZwCreateTransaction, ZwCommitTransaction, ...);
// the registry text the driver runner loads.
#include <wdm.h>

#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "wdk_internal.hpp"

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

constexpr const wchar_t *kServices = L"\\Registry\\Machine\\System\\CurrentControlSet\\Services";

NTSTATUS open(HANDLE *key, const std::wstring &path, HANDLE root = nullptr, bool create = false,
              ULONG *disposition = nullptr) {
    Name name(path);
    OBJECT_ATTRIBUTES attributes;
    InitializeObjectAttributes(&attributes, name.get(), OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE,
                               root, nullptr);
    return create ? ZwCreateKey(key, KEY_ALL_ACCESS, &attributes, 0, nullptr,
                                REG_OPTION_NON_VOLATILE, disposition)
                  : ZwOpenKey(key, KEY_READ, &attributes);
}

HANDLE create(const std::wstring &path, HANDLE root = nullptr) {
    HANDLE key = nullptr;
    REQUIRE(open(&key, path, root, true) == STATUS_SUCCESS);
    return key;
}

void set_dword(HANDLE key, const std::wstring &name, ULONG value) {
    Name n(name);
    REQUIRE(ZwSetValueKey(key, n.get(), 0, REG_DWORD, &value, sizeof value) == STATUS_SUCCESS);
}

void set_string(HANDLE key, const std::wstring &name, const std::wstring &value,
                ULONG type = REG_SZ) {
    Name n(name);
    REQUIRE(ZwSetValueKey(key, n.get(), 0, type, const_cast<wchar_t *>(value.c_str()),
                          static_cast<ULONG>((value.size() + 1) * sizeof(WCHAR))) ==
            STATUS_SUCCESS);
}

std::vector<UCHAR> query(HANDLE key, const std::wstring &name, KEY_VALUE_INFORMATION_CLASS kind,
                         NTSTATUS expected = STATUS_SUCCESS) {
    Name n(name);
    ULONG needed = 0;
    REQUIRE(ZwQueryValueKey(key, n.get(), kind, nullptr, 0, &needed) == STATUS_BUFFER_TOO_SMALL);
    std::vector<UCHAR> buffer(needed);
    ULONG result = 0;
    REQUIRE(ZwQueryValueKey(key, n.get(), kind, buffer.data(), needed, &result) == expected);
    CHECK(result == needed);
    return buffer;
}

struct Fresh {
    Fresh() { softndk::wdk::reset_registry(); }
};

}  // namespace

TEST_CASE("registry: create, open case-insensitively, and report the disposition") {
    Fresh fresh;
    ULONG disposition = 0;
    HANDLE key = nullptr;
    REQUIRE(open(&key, std::wstring(kServices) + L"\\MyDriver", nullptr, true, &disposition) ==
            STATUS_SUCCESS);
    CHECK(disposition == REG_CREATED_NEW_KEY);
    HANDLE again = nullptr;
    REQUIRE(open(&again, std::wstring(kServices) + L"\\MYDRIVER", nullptr, true, &disposition) ==
            STATUS_SUCCESS);
    CHECK(disposition == REG_OPENED_EXISTING_KEY);
    HANDLE opened = nullptr;
    CHECK(open(&opened, L"\\REGISTRY\\machine\\system\\currentcontrolset\\services\\mydriver") ==
          STATUS_SUCCESS);
    // KeyNameInformation reports the full path with the case the key was created with.
    ULONG needed = 0;
    CHECK(ZwQueryKey(opened, KeyNameInformation, nullptr, 0, &needed) == STATUS_BUFFER_TOO_SMALL);
    std::vector<UCHAR> buffer(needed);
    REQUIRE(ZwQueryKey(opened, KeyNameInformation, buffer.data(), needed, &needed) ==
            STATUS_SUCCESS);
    auto *info = reinterpret_cast<PKEY_NAME_INFORMATION>(buffer.data());
    CHECK(std::wstring(info->Name, info->NameLength / sizeof(WCHAR)) ==
          L"\\REGISTRY\\MACHINE\\SYSTEM\\CurrentControlSet\\Services\\MyDriver");
    for (HANDLE h : {key, again, opened})
        CHECK(ZwClose(h) == STATUS_SUCCESS);
    CHECK(ZwClose(key) == STATUS_INVALID_HANDLE);
}

TEST_CASE("registry: name errors - missing key, missing parent, bad syntax, wrong handle") {
    Fresh fresh;
    HANDLE key = nullptr;
    CHECK(open(&key, std::wstring(kServices) + L"\\Nothing") == STATUS_OBJECT_NAME_NOT_FOUND);
    CHECK(key == nullptr);
    CHECK(open(&key, std::wstring(kServices) + L"\\A\\B", nullptr, true) ==
          STATUS_OBJECT_NAME_NOT_FOUND);  // ZwCreateKey makes one level only
    CHECK(open(&key, L"Registry\\Machine") == STATUS_OBJECT_PATH_SYNTAX_BAD);
    CHECK(open(&key, L"\\Device\\Foo") == STATUS_OBJECT_NAME_NOT_FOUND);
    CHECK(open(&key, std::wstring(kServices) + L"\\\\x", nullptr, true) ==
          STATUS_OBJECT_NAME_INVALID);
    CHECK(open(&key, L"x", reinterpret_cast<HANDLE>(0x1234)) == STATUS_INVALID_HANDLE);
    // A handle to another kind of object as RootDirectory.
    OBJECT_ATTRIBUTES attributes;
    InitializeObjectAttributes(&attributes, nullptr, 0, nullptr, nullptr);
    HANDLE transaction = nullptr;
    REQUIRE(ZwCreateTransaction(&transaction, TRANSACTION_ALL_ACCESS, nullptr, nullptr, nullptr, 0,
                                0, 0, nullptr, nullptr) == STATUS_SUCCESS);
    CHECK(open(&key, L"x", transaction) == STATUS_OBJECT_TYPE_MISMATCH);
    ZwClose(transaction);
}

TEST_CASE("registry: RootDirectory opens are relative, an empty name reopens the root") {
    Fresh fresh;
    HANDLE services = nullptr;
    REQUIRE(open(&services, kServices) == STATUS_SUCCESS);
    HANDLE driver = create(L"Drv", services);
    HANDLE parameters = create(L"Parameters", driver);
    set_dword(parameters, L"Depth", 7);
    HANDLE same = nullptr;
    REQUIRE(open(&same, L"", parameters) == STATUS_SUCCESS);
    HANDLE absolute = nullptr;
    REQUIRE(open(&absolute, std::wstring(kServices) + L"\\drv\\PARAMETERS") == STATUS_SUCCESS);
    auto bytes = query(absolute, L"depth", KeyValuePartialInformation);
    auto *partial = reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(bytes.data());
    CHECK(partial->Type == REG_DWORD);
    CHECK(*reinterpret_cast<ULONG *>(partial->Data) == 7);
    HANDLE bad = nullptr;
    CHECK(open(&bad, L"\\Parameters", driver) == STATUS_OBJECT_PATH_SYNTAX_BAD);
    for (HANDLE h : {services, driver, parameters, same, absolute})
        ZwClose(h);
}

TEST_CASE("registry: ZwQueryValueKey's three classes and the buffer rules") {
    Fresh fresh;
    HANDLE key = create(std::wstring(kServices) + L"\\Q");
    set_string(key, L"Name", L"value");
    Name name(L"Name");
    const ULONG name_bytes = 4 * sizeof(WCHAR);
    const ULONG data_bytes = 6 * sizeof(WCHAR);

    SECTION("basic") {
        auto bytes = query(key, L"NAME", KeyValueBasicInformation);
        auto *basic = reinterpret_cast<PKEY_VALUE_BASIC_INFORMATION>(bytes.data());
        CHECK(bytes.size() == FIELD_OFFSET(KEY_VALUE_BASIC_INFORMATION, Name) + name_bytes);
        CHECK(basic->Type == REG_SZ);
        CHECK(basic->NameLength == name_bytes);
        CHECK(std::wstring(basic->Name, 4) == L"Name");
    }
    SECTION("full: the data after the name, at DataOffset") {
        auto bytes = query(key, L"Name", KeyValueFullInformation);
        auto *full = reinterpret_cast<PKEY_VALUE_FULL_INFORMATION>(bytes.data());
        CHECK(full->DataLength == data_bytes);
        CHECK(full->DataOffset >= FIELD_OFFSET(KEY_VALUE_FULL_INFORMATION, Name) + name_bytes);
        CHECK(full->DataOffset % sizeof(ULONG) == 0);
        CHECK(std::wstring(reinterpret_cast<wchar_t *>(bytes.data() + full->DataOffset)) ==
              L"value");
    }
    SECTION("partial") {
        auto bytes = query(key, L"Name", KeyValuePartialInformation);
        auto *partial = reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(bytes.data());
        CHECK(partial->DataLength == data_bytes);
        CHECK(std::wstring(reinterpret_cast<wchar_t *>(partial->Data)) == L"value");
    }
    SECTION("room for the fixed part only: STATUS_BUFFER_OVERFLOW, fixed part filled") {
        std::vector<UCHAR> buffer(FIELD_OFFSET(KEY_VALUE_PARTIAL_INFORMATION, Data) + 2, 0xCC);
        ULONG result = 0;
        CHECK(ZwQueryValueKey(key, name.get(), KeyValuePartialInformation, buffer.data(),
                              static_cast<ULONG>(buffer.size()),
                              &result) == STATUS_BUFFER_OVERFLOW);
        CHECK(result == FIELD_OFFSET(KEY_VALUE_PARTIAL_INFORMATION, Data) + data_bytes);
        auto *partial = reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(buffer.data());
        CHECK(partial->Type == REG_SZ);
        CHECK(partial->DataLength == data_bytes);
    }
    SECTION("below the fixed part: STATUS_BUFFER_TOO_SMALL with the size needed") {
        UCHAR small[4];
        ULONG result = 0;
        CHECK(ZwQueryValueKey(key, name.get(), KeyValueFullInformation, small, sizeof small,
                              &result) == STATUS_BUFFER_TOO_SMALL);
        CHECK(result > sizeof small);
    }
    SECTION("missing value, bad class") {
        Name missing(L"Missing");
        ULONG result = 0;
        UCHAR buffer[64];
        CHECK(ZwQueryValueKey(key, missing.get(), KeyValuePartialInformation, buffer, sizeof buffer,
                              &result) == STATUS_OBJECT_NAME_NOT_FOUND);
        CHECK(ZwQueryValueKey(key, name.get(), KeyValueLayerInformation, buffer, sizeof buffer,
                              &result) == STATUS_INVALID_PARAMETER);
    }
    ZwClose(key);
}

TEST_CASE("registry: values keep their order, replace in place, and delete") {
    Fresh fresh;
    HANDLE key = create(std::wstring(kServices) + L"\\V");
    set_dword(key, L"b", 1);
    set_dword(key, L"a", 2);
    ULONGLONG big = 0x1122334455667788ULL;
    Name q(L"Q");
    REQUIRE(ZwSetValueKey(key, q.get(), 0, REG_QWORD, &big, sizeof big) == STATUS_SUCCESS);
    set_dword(key, L"B", 3);  // replaces "b", keeps its place
    std::vector<std::wstring> names;
    std::vector<UCHAR> buffer(256);
    ULONG result = 0;
    for (ULONG i = 0;; ++i) {
        const NTSTATUS status = ZwEnumerateValueKey(key, i, KeyValueBasicInformation, buffer.data(),
                                                    static_cast<ULONG>(buffer.size()), &result);
        if (status == STATUS_NO_MORE_ENTRIES) break;
        REQUIRE(status == STATUS_SUCCESS);
        auto *basic = reinterpret_cast<PKEY_VALUE_BASIC_INFORMATION>(buffer.data());
        names.emplace_back(basic->Name, basic->NameLength / sizeof(WCHAR));
    }
    CHECK(names == std::vector<std::wstring>{L"b", L"a", L"Q"});
    auto bytes = query(key, L"b", KeyValuePartialInformation);
    CHECK(*reinterpret_cast<ULONG *>(
              reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(bytes.data())->Data) == 3);
    Name a(L"A");
    CHECK(ZwDeleteValueKey(key, a.get()) == STATUS_SUCCESS);
    CHECK(ZwDeleteValueKey(key, a.get()) == STATUS_OBJECT_NAME_NOT_FOUND);
    CHECK(ZwEnumerateValueKey(key, 2, KeyValueBasicInformation, buffer.data(),
                              static_cast<ULONG>(buffer.size()),
                              &result) == STATUS_NO_MORE_ENTRIES);
    // The default value: an empty name.
    UNICODE_STRING empty{};
    ULONG value = 9;
    CHECK(ZwSetValueKey(key, &empty, 0, REG_DWORD, &value, sizeof value) == STATUS_SUCCESS);
    CHECK(ZwQueryValueKey(key, &empty, KeyValuePartialInformation, buffer.data(),
                          static_cast<ULONG>(buffer.size()), &result) == STATUS_SUCCESS);
    ZwClose(key);
}

TEST_CASE("registry: subkeys enumerate in name order, ZwQueryKey counts and sizes") {
    Fresh fresh;
    HANDLE key = create(std::wstring(kServices) + L"\\E");
    for (const wchar_t *name : {L"zeta", L"Alpha", L"mid"})
        ZwClose(create(name, key));
    set_string(key, L"LongerName", L"twelve chars");
    std::vector<std::wstring> names;
    std::vector<UCHAR> buffer(256);
    ULONG result = 0;
    for (ULONG i = 0;; ++i) {
        const NTSTATUS status = ZwEnumerateKey(key, i, KeyBasicInformation, buffer.data(),
                                               static_cast<ULONG>(buffer.size()), &result);
        if (status == STATUS_NO_MORE_ENTRIES) break;
        REQUIRE(status == STATUS_SUCCESS);
        auto *basic = reinterpret_cast<PKEY_BASIC_INFORMATION>(buffer.data());
        names.emplace_back(basic->Name, basic->NameLength / sizeof(WCHAR));
        CHECK(basic->LastWriteTime.QuadPart > 0);
    }
    CHECK(names == std::vector<std::wstring>{L"Alpha", L"mid", L"zeta"});
    CHECK(ZwEnumerateKey(key, 0, KeyNameInformation, buffer.data(), 256, &result) ==
          STATUS_INVALID_PARAMETER);
    REQUIRE(ZwQueryKey(key, KeyFullInformation, buffer.data(), 256, &result) == STATUS_SUCCESS);
    auto *full = reinterpret_cast<PKEY_FULL_INFORMATION>(buffer.data());
    CHECK(full->SubKeys == 3);
    CHECK(full->Values == 1);
    CHECK(full->MaxNameLen == 5 * sizeof(WCHAR));
    CHECK(full->MaxValueNameLen == 10 * sizeof(WCHAR));
    CHECK(full->MaxValueDataLen == 13 * sizeof(WCHAR));
    CHECK(full->ClassLength == 0);
    REQUIRE(ZwQueryKey(key, KeyCachedInformation, buffer.data(), 256, &result) == STATUS_SUCCESS);
    CHECK(reinterpret_cast<PKEY_CACHED_INFORMATION>(buffer.data())->SubKeys == 3);
    REQUIRE(ZwQueryKey(key, KeyNodeInformation, buffer.data(), 256, &result) == STATUS_SUCCESS);
    auto *node = reinterpret_cast<PKEY_NODE_INFORMATION>(buffer.data());
    CHECK(std::wstring(node->Name, node->NameLength / sizeof(WCHAR)) == L"E");
    CHECK(ZwQueryKey(key, KeyFlagsInformation, buffer.data(), 256, &result) ==
          STATUS_INVALID_PARAMETER);
    ZwClose(key);
}

TEST_CASE("registry: ZwDeleteKey refuses keys with subkeys, handles to a deleted key fail") {
    Fresh fresh;
    HANDLE parent = create(std::wstring(kServices) + L"\\D");
    HANDLE child = create(L"Child", parent);
    HANDLE second = nullptr;
    REQUIRE(open(&second, L"Child", parent) == STATUS_SUCCESS);
    CHECK(ZwDeleteKey(parent) == STATUS_CANNOT_DELETE);
    CHECK(ZwDeleteKey(child) == STATUS_SUCCESS);
    set_dword(parent, L"still", 1);  // the parent is untouched
    Name name(L"x");
    ULONG value = 1, result = 0;
    CHECK(ZwSetValueKey(second, name.get(), 0, REG_DWORD, &value, sizeof value) ==
          STATUS_KEY_DELETED);
    UCHAR buffer[64];
    CHECK(ZwQueryKey(second, KeyBasicInformation, buffer, sizeof buffer, &result) ==
          STATUS_KEY_DELETED);
    CHECK(ZwDeleteKey(second) == STATUS_KEY_DELETED);
    HANDLE gone = nullptr;
    CHECK(open(&gone, L"Child", parent) == STATUS_OBJECT_NAME_NOT_FOUND);
    CHECK(ZwDeleteKey(parent) == STATUS_SUCCESS);
    for (HANDLE h : {parent, child, second})
        CHECK(ZwClose(h) == STATUS_SUCCESS);
}

namespace {

struct Seen {
    std::vector<std::wstring> names;
    std::vector<ULONG> types;
    std::vector<std::wstring> strings;
};

NTSTATUS NTAPI collect(PWSTR ValueName, ULONG ValueType, PVOID ValueData, ULONG ValueLength,
                       PVOID Context, PVOID EntryContext) {
    (void)EntryContext;
    auto *seen = static_cast<Seen *>(Context);
    seen->names.emplace_back(ValueName);
    seen->types.push_back(ValueType);
    if (ValueType == REG_SZ)
        seen->strings.emplace_back(static_cast<wchar_t *>(ValueData),
                                   ValueLength / sizeof(WCHAR) - 1);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI refuse(PWSTR, ULONG, PVOID, ULONG, PVOID, PVOID) {
    return STATUS_ACCESS_DENIED;
}

}  // namespace

TEST_CASE("registry: RtlQueryRegistryValues - DIRECT, defaults, REQUIRED, TYPECHECK, DELETE") {
    Fresh fresh;
    ULONG sixteen = 16;
    REQUIRE(RtlWriteRegistryValue(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", L"Depth", REG_DWORD,
                                  &sixteen, sizeof sixteen) == STATUS_SUCCESS);  // creates the key
    const wchar_t text[] = L"hello";
    REQUIRE(RtlWriteRegistryValue(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", L"Text", REG_SZ,
                                  const_cast<wchar_t *>(text), sizeof text) == STATUS_SUCCESS);
    UCHAR blob[6] = {1, 2, 3, 4, 5, 6};
    REQUIRE(RtlWriteRegistryValue(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", L"Blob", REG_BINARY,
                                  blob, sizeof blob) == STATUS_SUCCESS);

    ULONG depth = 0, fallback = 0;
    ULONG default_value = 42;
    UNICODE_STRING string{};
    struct {
        LONG size;
        UCHAR data[12];
    } raw{-static_cast<LONG>(sizeof raw.data), {}};
    RTL_QUERY_REGISTRY_TABLE table[5] = {};
    table[0] = {nullptr,
                RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_TYPECHECK,
                const_cast<PWSTR>(L"Depth"),
                &depth,
                (REG_DWORD << RTL_QUERY_REGISTRY_TYPECHECK_SHIFT) | REG_NONE,
                nullptr,
                0};
    table[1] = {nullptr,
                RTL_QUERY_REGISTRY_DIRECT,
                const_cast<PWSTR>(L"Missing"),
                &fallback,
                REG_DWORD,
                &default_value,
                sizeof default_value};
    table[2] = {
        nullptr, RTL_QUERY_REGISTRY_DIRECT, const_cast<PWSTR>(L"Text"), &string, REG_NONE, nullptr,
        0};
    table[3] = {
        nullptr, RTL_QUERY_REGISTRY_DIRECT, const_cast<PWSTR>(L"Blob"), &raw, REG_NONE, nullptr, 0};
    REQUIRE(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", table, nullptr,
                                   nullptr) == STATUS_SUCCESS);
    CHECK(depth == 16);
    CHECK(fallback == 42);
    REQUIRE(string.Buffer != nullptr);  // allocated from pool
    CHECK(std::wstring(string.Buffer, string.Length / sizeof(WCHAR)) == L"hello");
    ExFreePool(string.Buffer);
    // A negative size: only the data, stored from the start (over the size).
    CHECK(std::memcmp(&raw, blob, sizeof blob) == 0);

    SECTION("REQUIRED and missing") {
        RTL_QUERY_REGISTRY_TABLE required[2] = {};
        required[0] = {nullptr,
                       RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_REQUIRED,
                       const_cast<PWSTR>(L"Missing"),
                       &fallback,
                       REG_NONE,
                       nullptr,
                       0};
        CHECK(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", required, nullptr,
                                     nullptr) == STATUS_OBJECT_NAME_NOT_FOUND);
    }
    SECTION("TYPECHECK mismatch") {
        RTL_QUERY_REGISTRY_TABLE typed[2] = {};
        typed[0] = {nullptr,
                    RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_TYPECHECK,
                    const_cast<PWSTR>(L"Text"),
                    &depth,
                    (REG_DWORD << RTL_QUERY_REGISTRY_TYPECHECK_SHIFT) | REG_NONE,
                    nullptr,
                    0};
        CHECK(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", typed, nullptr,
                                     nullptr) == STATUS_OBJECT_TYPE_MISMATCH);
    }
    SECTION("a string that does not fit a caller's buffer") {
        wchar_t small[2];
        UNICODE_STRING fixed{0, sizeof small, small};
        RTL_QUERY_REGISTRY_TABLE direct[2] = {};
        direct[0] = {nullptr,
                     RTL_QUERY_REGISTRY_DIRECT,
                     const_cast<PWSTR>(L"Text"),
                     &fixed,
                     REG_NONE,
                     nullptr,
                     0};
        CHECK(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", direct, nullptr,
                                     nullptr) == STATUS_BUFFER_TOO_SMALL);
    }
    SECTION("DELETE removes the value after the query; RtlDeleteRegistryValue") {
        RTL_QUERY_REGISTRY_TABLE once[2] = {};
        once[0] = {nullptr,
                   RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_DELETE,
                   const_cast<PWSTR>(L"Depth"),
                   &depth,
                   REG_NONE,
                   nullptr,
                   0};
        CHECK(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", once, nullptr,
                                     nullptr) == STATUS_SUCCESS);
        CHECK(RtlDeleteRegistryValue(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", L"Depth") ==
              STATUS_OBJECT_NAME_NOT_FOUND);
        CHECK(RtlDeleteRegistryValue(RTL_REGISTRY_SERVICES, L"Drv\\Parameters", L"Text") ==
              STATUS_SUCCESS);
        CHECK(RtlDeleteRegistryValue(RTL_REGISTRY_SERVICES, L"Nope", L"Text") ==
              STATUS_OBJECT_NAME_NOT_FOUND);
    }
    SECTION("a missing key") {
        CHECK(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, L"Nope", table, nullptr, nullptr) ==
              STATUS_OBJECT_NAME_NOT_FOUND);
        CHECK(RtlQueryRegistryValues(RTL_REGISTRY_MAXIMUM, L"Drv", table, nullptr, nullptr) ==
              STATUS_INVALID_PARAMETER);
    }
}

TEST_CASE("registry: RtlQueryRegistryValues - callbacks, MULTI_SZ per string, all values, SUBKEY") {
    Fresh fresh;
    HANDLE key = create(std::wstring(kServices) + L"\\Cb");
    const wchar_t multi[] = L"one\0two\0";
    Name list(L"List");
    REQUIRE(ZwSetValueKey(key, list.get(), 0, REG_MULTI_SZ, const_cast<wchar_t *>(multi),
                          sizeof multi) == STATUS_SUCCESS);
    setenv("SOFTNDK_TEST_ROOT", "C:\\Win", 1);
    set_string(key, L"Path", L"%SOFTNDK_TEST_ROOT%\\x %NOT_SET_ANYWHERE%", REG_EXPAND_SZ);
    HANDLE sub = create(L"Sub", key);
    set_dword(sub, L"Inner", 5);

    Seen seen;
    RTL_QUERY_REGISTRY_TABLE table[5] = {};
    table[0] = {collect, 0, const_cast<PWSTR>(L"List"), nullptr, REG_NONE, nullptr, 0};
    table[1] = {collect, 0, const_cast<PWSTR>(L"Path"), nullptr, REG_NONE, nullptr, 0};
    table[2] = {
        collect, RTL_QUERY_REGISTRY_SUBKEY, const_cast<PWSTR>(L"Sub"), nullptr, REG_NONE, nullptr,
        0};
    REQUIRE(RtlQueryRegistryValues(RTL_REGISTRY_HANDLE, static_cast<PCWSTR>(key), table, &seen,
                                   nullptr) == STATUS_SUCCESS);
    CHECK(seen.names == std::vector<std::wstring>{L"List", L"List", L"Path", L"Inner"});
    CHECK(seen.types == std::vector<ULONG>{REG_SZ, REG_SZ, REG_SZ, REG_DWORD});
    CHECK(seen.strings ==
          std::vector<std::wstring>{L"one", L"two", L"C:\\Win\\x %NOT_SET_ANYWHERE%"});

    Seen all;
    RTL_QUERY_REGISTRY_TABLE every[2] = {};
    every[0] = {collect, RTL_QUERY_REGISTRY_NOEXPAND, nullptr, nullptr, REG_NONE, nullptr, 0};
    REQUIRE(RtlQueryRegistryValues(RTL_REGISTRY_HANDLE, static_cast<PCWSTR>(key), every, &all,
                                   nullptr) == STATUS_SUCCESS);
    CHECK(all.names == std::vector<std::wstring>{L"List", L"Path"});
    CHECK(all.types == std::vector<ULONG>{REG_MULTI_SZ, REG_EXPAND_SZ});

    RTL_QUERY_REGISTRY_TABLE failing[2] = {};
    failing[0] = {refuse, 0, const_cast<PWSTR>(L"List"), nullptr, REG_NONE, nullptr, 0};
    CHECK(RtlQueryRegistryValues(RTL_REGISTRY_HANDLE, static_cast<PCWSTR>(key), failing, nullptr,
                                 nullptr) == STATUS_ACCESS_DENIED);
    ZwClose(sub);
    ZwClose(key);
}

TEST_CASE("registry: IoOpenDeviceRegistryKey opens per-device keys under Enum Root") {
    Fresh fresh;
    DRIVER_OBJECT driver{};
    RtlInitUnicodeString(&driver.DriverName, L"\\Driver\\netdrv");
    PDEVICE_OBJECT first = nullptr, second = nullptr;
    REQUIRE(IoCreateDevice(&driver, 0, nullptr, FILE_DEVICE_NETWORK, 0, FALSE, &first) ==
            STATUS_SUCCESS);
    REQUIRE(IoCreateDevice(&driver, 0, nullptr, FILE_DEVICE_NETWORK, 0, FALSE, &second) ==
            STATUS_SUCCESS);
    HANDLE a = nullptr, b = nullptr, c = nullptr;
    REQUIRE(IoOpenDeviceRegistryKey(first, PLUGPLAY_REGKEY_DEVICE, KEY_ALL_ACCESS, &a) ==
            STATUS_SUCCESS);
    REQUIRE(IoOpenDeviceRegistryKey(second, PLUGPLAY_REGKEY_DRIVER, KEY_READ, &b) ==
            STATUS_SUCCESS);
    set_dword(a, L"Speed", 100);
    HANDLE check = nullptr;
    REQUIRE(open(&check,
                 L"\\Registry\\Machine\\System\\CurrentControlSet\\Enum\\Root\\netdrv\\0000"
                 L"\\Device Parameters") == STATUS_SUCCESS);
    query(check, L"Speed", KeyValuePartialInformation);
    CHECK(
        open(&c,
             L"\\Registry\\Machine\\System\\CurrentControlSet\\Enum\\Root\\netdrv\\0001\\Driver") ==
        STATUS_SUCCESS);
    HANDLE bad = nullptr;
    CHECK(IoOpenDeviceRegistryKey(first, 3, KEY_READ, &bad) == STATUS_INVALID_PARAMETER);
    for (HANDLE h : {a, b, c, check})
        ZwClose(h);
    IoDeleteDevice(second);
    IoDeleteDevice(first);
}

namespace {

struct CmLog {
    std::vector<REG_NOTIFY_CLASS> classes;
    std::wstring vetoed_value = L"Forbidden";
    std::vector<PVOID> cleaned;
    std::vector<NTSTATUS> post_statuses;
    std::vector<PVOID> contexts;  // ObjectContext of each pre-set-value notification
    LARGE_INTEGER cookie{};
};

NTSTATUS NTAPI registry_callback(PVOID CallbackContext, PVOID Argument1, PVOID Argument2) {
    auto *log = static_cast<CmLog *>(CallbackContext);
    const auto type = static_cast<REG_NOTIFY_CLASS>(reinterpret_cast<ULONG_PTR>(Argument1));
    log->classes.push_back(type);
    if (type == RegNtPostSetValueKey || type == RegNtPostQueryValueKey ||
        type == RegNtPostDeleteValueKey || type == RegNtPostDeleteKey)
        log->post_statuses.push_back(
            static_cast<PREG_POST_OPERATION_INFORMATION>(Argument2)->Status);
    if (type == RegNtPreSetValueKey) {
        auto *info = static_cast<PREG_SET_VALUE_KEY_INFORMATION>(Argument2);
        log->contexts.push_back(info->ObjectContext);
        const std::wstring name(info->ValueName->Buffer, info->ValueName->Length / sizeof(WCHAR));
        if (name == log->vetoed_value) return STATUS_ACCESS_DENIED;
    }
    if (type == RegNtCallbackObjectContextCleanup)
        log->cleaned.push_back(
            static_cast<PREG_CALLBACK_CONTEXT_CLEANUP_INFORMATION>(Argument2)->ObjectContext);
    return STATUS_SUCCESS;
}

}  // namespace

TEST_CASE("registry: Cm callbacks see and veto operations, key object ids and contexts") {
    Fresh fresh;
    CmLog log;
    Name altitude(L"385100");
    REQUIRE(CmRegisterCallbackEx(registry_callback, &altitude.string, nullptr, &log, &log.cookie,
                                 nullptr) == STATUS_SUCCESS);
    LARGE_INTEGER other{};
    CHECK(CmRegisterCallbackEx(registry_callback, &altitude.string, nullptr, &log, &other,
                               nullptr) == STATUS_FLT_INSTANCE_ALTITUDE_COLLISION);
    ULONG major = 0, minor = 9;
    CmGetCallbackVersion(&major, &minor);
    CHECK(major == 1);
    CHECK(minor == 0);

    HANDLE key = create(std::wstring(kServices) + L"\\Cm");
    set_dword(key, L"Allowed", 1);
    Name forbidden(L"Forbidden");
    ULONG value = 1;
    CHECK(ZwSetValueKey(key, forbidden.get(), 0, REG_DWORD, &value, sizeof value) ==
          STATUS_ACCESS_DENIED);
    ULONG result = 0;
    UCHAR buffer[64];
    CHECK(ZwQueryValueKey(key, forbidden.get(), KeyValuePartialInformation, buffer, sizeof buffer,
                          &result) == STATUS_OBJECT_NAME_NOT_FOUND);
    Name allowed(L"Allowed");
    CHECK(ZwDeleteValueKey(key, allowed.get()) == STATUS_SUCCESS);
    // Set (then post), the vetoed set (no post), the query that finds nothing (pre and post,
    // with the status), the delete.
    CHECK(log.classes == std::vector<REG_NOTIFY_CLASS>{
                             RegNtPreSetValueKey, RegNtPostSetValueKey, RegNtPreSetValueKey,
                             RegNtPreQueryValueKey, RegNtPostQueryValueKey, RegNtPreDeleteValueKey,
                             RegNtPostDeleteValueKey});
    CHECK(log.post_statuses ==
          std::vector<NTSTATUS>{STATUS_SUCCESS, STATUS_OBJECT_NAME_NOT_FOUND, STATUS_SUCCESS});

    PVOID object = nullptr;
    REQUIRE(ObReferenceObjectByHandle(key, KEY_READ, *CmKeyObjectType, KernelMode, &object,
                                      nullptr) == STATUS_SUCCESS);
    ULONG_PTR id = 0;
    PCUNICODE_STRING name = nullptr;
    REQUIRE(CmCallbackGetKeyObjectIDEx(&log.cookie, object, &id, &name, 0) == STATUS_SUCCESS);
    CHECK(id != 0);
    CHECK(std::wstring(name->Buffer, name->Length / sizeof(WCHAR)) ==
          L"\\REGISTRY\\MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Cm");
    CmCallbackReleaseKeyObjectIDEx(name);
    PCUNICODE_STRING kept = nullptr, kept_again = nullptr;
    ULONG_PTR id2 = 0;
    REQUIRE(CmCallbackGetKeyObjectID(&log.cookie, object, &id2, &kept) == STATUS_SUCCESS);
    REQUIRE(CmCallbackGetKeyObjectID(&log.cookie, object, nullptr, &kept_again) == STATUS_SUCCESS);
    CHECK(id2 == id);
    CHECK(kept == kept_again);
    CHECK(CmCallbackGetKeyObjectIDEx(&log.cookie, &value, &id, nullptr, 0) ==
          STATUS_INVALID_PARAMETER);
    CHECK(CmGetBoundTransaction(&log.cookie, object) == nullptr);

    PVOID old = reinterpret_cast<PVOID>(1);
    REQUIRE(CmSetCallbackObjectContext(object, &log.cookie, reinterpret_cast<PVOID>(0x77), &old) ==
            STATUS_SUCCESS);
    CHECK(old == nullptr);
    set_dword(key, L"SeesContext", 1);
    CHECK(log.contexts.back() == reinterpret_cast<PVOID>(0x77));
    ObDereferenceObject(object);
    ZwClose(key);  // the last reference: the context is cleaned up
    CHECK(log.cleaned == std::vector<PVOID>{reinterpret_cast<PVOID>(0x77)});

    CHECK(CmUnRegisterCallback(log.cookie) == STATUS_SUCCESS);
    CHECK(CmUnRegisterCallback(log.cookie) == STATUS_INVALID_PARAMETER);
    Name empty(L"");
    CHECK(CmRegisterCallbackEx(registry_callback, &empty.string, nullptr, &log, &other, nullptr) ==
          STATUS_INVALID_PARAMETER);
}

TEST_CASE("registry: a transacted key defers its changes to commit, rollback drops them") {
    Fresh fresh;
    HANDLE manager = nullptr, resource_manager = nullptr, transaction = nullptr,
           enlistment = nullptr;
    REQUIRE(ZwCreateTransactionManager(&manager, TRANSACTIONMANAGER_ALL_ACCESS, nullptr, nullptr,
                                       TRANSACTION_MANAGER_VOLATILE, 0) == STATUS_SUCCESS);
    GUID rm_guid{};
    REQUIRE(ZwCreateResourceManager(&resource_manager, RESOURCEMANAGER_ALL_ACCESS, manager,
                                    &rm_guid, nullptr, RESOURCE_MANAGER_VOLATILE,
                                    nullptr) == STATUS_SUCCESS);
    CHECK(ZwCreateResourceManager(&enlistment, RESOURCEMANAGER_ALL_ACCESS, resource_manager,
                                  &rm_guid, nullptr, 0, nullptr) == STATUS_OBJECT_TYPE_MISMATCH);
    GUID uow{};
    REQUIRE(ZwCreateTransaction(&transaction, TRANSACTION_ALL_ACCESS, nullptr, &uow, manager, 0, 0,
                                0, nullptr, nullptr) == STATUS_SUCCESS);
    CHECK((uow.Data3 >> 12) == 4);
    REQUIRE(ZwCreateEnlistment(&enlistment, ENLISTMENT_ALL_ACCESS, resource_manager, transaction,
                               nullptr, 0, TRANSACTION_NOTIFY_COMMIT, nullptr) == STATUS_SUCCESS);

    HANDLE plain = create(std::wstring(kServices) + L"\\Tx");
    Name name(std::wstring(kServices) + L"\\Tx");
    OBJECT_ATTRIBUTES attributes;
    InitializeObjectAttributes(&attributes, name.get(), OBJ_CASE_INSENSITIVE, nullptr, nullptr);
    HANDLE transacted = nullptr;
    REQUIRE(ZwOpenKeyTransacted(&transacted, KEY_ALL_ACCESS, &attributes, transaction) ==
            STATUS_SUCCESS);
    set_dword(transacted, L"Pending", 1);
    Name pending(L"Pending");
    ULONG result = 0;
    UCHAR buffer[64];
    CHECK(ZwQueryValueKey(plain, pending.get(), KeyValuePartialInformation, buffer, sizeof buffer,
                          &result) == STATUS_OBJECT_NAME_NOT_FOUND);
    PVOID key_object = nullptr;
    REQUIRE(ObReferenceObjectByHandle(transacted, 0, *CmKeyObjectType, KernelMode, &key_object,
                                      nullptr) == STATUS_SUCCESS);
    LARGE_INTEGER cookie{};
    PVOID bound = CmGetBoundTransaction(&cookie, key_object);
    CHECK(bound != nullptr);
    ObDereferenceObject(key_object);
    REQUIRE(ZwCommitTransaction(transaction, TRUE) == STATUS_SUCCESS);
    CHECK(ZwQueryValueKey(plain, pending.get(), KeyValuePartialInformation, buffer, sizeof buffer,
                          &result) == STATUS_SUCCESS);
    CHECK(ZwCommitTransaction(transaction, TRUE) == STATUS_TRANSACTION_ALREADY_COMMITTED);
    CHECK(ZwRollbackTransaction(transaction, TRUE) == STATUS_TRANSACTION_ALREADY_COMMITTED);
    Name later(L"Later");
    ULONG value = 2;
    CHECK(ZwSetValueKey(transacted, later.get(), 0, REG_DWORD, &value, sizeof value) ==
          STATUS_TRANSACTION_NOT_ACTIVE);
    HANDLE reopened = nullptr;
    CHECK(ZwOpenKeyTransacted(&reopened, KEY_READ, &attributes, transaction) ==
          STATUS_TRANSACTION_NOT_ACTIVE);
    CHECK(ZwCreateEnlistment(&reopened, ENLISTMENT_ALL_ACCESS, resource_manager, transaction,
                             nullptr, 0, TRANSACTION_NOTIFY_COMMIT,
                             nullptr) == STATUS_TRANSACTION_NOT_ACTIVE);

    HANDLE second = nullptr;
    REQUIRE(ZwCreateTransaction(&second, TRANSACTION_ALL_ACCESS, nullptr, nullptr, nullptr, 0, 0, 0,
                                nullptr, nullptr) == STATUS_SUCCESS);
    Name child(L"Child");
    OBJECT_ATTRIBUTES child_attributes;
    InitializeObjectAttributes(&child_attributes, child.get(), OBJ_CASE_INSENSITIVE, plain,
                               nullptr);
    HANDLE created = nullptr;
    ULONG disposition = 0;
    REQUIRE(ZwCreateKeyTransacted(&created, KEY_ALL_ACCESS, &child_attributes, 0, nullptr, 0,
                                  second, &disposition) == STATUS_SUCCESS);
    CHECK(disposition == REG_CREATED_NEW_KEY);
    set_dword(created, L"Dropped", 1);
    Name dropped(L"Dropped");
    REQUIRE(ZwRollbackTransaction(second, FALSE) == STATUS_SUCCESS);
    CHECK(ZwRollbackTransaction(second, FALSE) == STATUS_TRANSACTION_ALREADY_ABORTED);
    CHECK(ZwCommitTransaction(second, FALSE) == STATUS_TRANSACTION_ALREADY_ABORTED);
    CHECK(ZwQueryValueKey(created, dropped.get(), KeyValuePartialInformation, buffer, sizeof buffer,
                          &result) == STATUS_OBJECT_NAME_NOT_FOUND);
    CHECK(ZwCommitTransaction(plain, FALSE) == STATUS_OBJECT_TYPE_MISMATCH);
    for (HANDLE h :
         {created, second, transacted, plain, enlistment, transaction, resource_manager, manager})
        CHECK(ZwClose(h) == STATUS_SUCCESS);
}

TEST_CASE("registry: the runner's registry text - keys, typed values, aliases, errors") {
    Fresh fresh;
    std::string error;
    REQUIRE(softndk::wdk::load_registry_text(
        "Windows Registry Editor Version 5.00\n"
        "; a comment\n"
        "[HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\loaded\\Parameters]\n"
        "\"Name\"=\"say \\\"hi\\\"\"\n"
        "\"Count\"=dword:0000000a\n"
        "\"Big\"=qword:00000001ffffffff\n"
        "\"Blob\"=hex:01,02,ff\n"
        "\"List\"=multi:\"a\",\"b\"\n"
        "\"Path\"=expand:\"%SystemRoot%\\\\x\"\n"
        "\"Typed\"=hex(8):00\n"
        "@=\"default\"\n",
        error));
    HANDLE key = nullptr;
    REQUIRE(open(&key, std::wstring(kServices) + L"\\loaded\\Parameters") == STATUS_SUCCESS);
    auto name = query(key, L"Name", KeyValuePartialInformation);
    CHECK(std::wstring(reinterpret_cast<wchar_t *>(
              reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(name.data())->Data)) ==
          L"say \"hi\"");
    auto count = query(key, L"Count", KeyValuePartialInformation);
    CHECK(*reinterpret_cast<ULONG *>(
              reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(count.data())->Data) == 10);
    auto big = query(key, L"Big", KeyValuePartialInformation);
    auto *big_info = reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(big.data());
    CHECK(big_info->Type == REG_QWORD);
    ULONGLONG big_value = 0;  // Data sits at offset 12, as on Windows: copy, do not load
    std::memcpy(&big_value, big_info->Data, sizeof big_value);
    CHECK(big_value == 0x1ffffffffULL);
    auto blob = query(key, L"Blob", KeyValuePartialInformation);
    CHECK(reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(blob.data())->DataLength == 3);
    auto list = query(key, L"List", KeyValuePartialInformation);
    CHECK(reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(list.data())->DataLength ==
          5 * sizeof(WCHAR));
    auto typed = query(key, L"Typed", KeyValuePartialInformation);
    CHECK(reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(typed.data())->Type == 8);
    auto path = query(key, L"Path", KeyValuePartialInformation);
    CHECK(reinterpret_cast<PKEY_VALUE_PARTIAL_INFORMATION>(path.data())->Type == REG_EXPAND_SZ);
    query(key, L"", KeyValuePartialInformation);
    ZwClose(key);

    CHECK_FALSE(softndk::wdk::load_registry_text("\"Orphan\"=dword:1\n", error));
    CHECK(error.find("line 1") != std::string::npos);
    CHECK_FALSE(
        softndk::wdk::load_registry_text("[\\Registry\\Machine\\X]\n\"A\"=dword:xyz\n", error));
    CHECK(error.find("line 2") != std::string::npos);
    CHECK_FALSE(softndk::wdk::load_registry_text("[\\Nowhere\\X]\n", error));
    CHECK_FALSE(softndk::wdk::load_registry_text("[\\Registry\\Machine\\X\n", error));
}

TEST_CASE("registry: the Zw key calls need PASSIVE_LEVEL") {
    const auto result = softndk::test::run_in_child([] {
        HANDLE key = nullptr;
        KeRaiseIrqlToDpcLevel();
        open(&key, kServices);
    });
    CHECK(result.aborted());
    CHECK(result.err.find("BUGCHECK 0x0000000A") != std::string::npos);
    CHECK(result.err.find("ZwOpenKey") != std::string::npos);
}
