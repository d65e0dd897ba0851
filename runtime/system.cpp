// Versions, GUIDs and UUIDs, SIDs, MmGetSystemRoutineAddress, hardware configuration and disks,
// and IoCreateDeviceSecure (contract in softndk_wdm_system.h and wdmsec.h). The GUIDs the
// headers declare with DEFINE_GUID are defined here (initguid.h comes first).
#include <initguid.h>

#include <dlfcn.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <cwctype>
#include <string>

#include <ntddk.h>
#include <wdmsec.h>

#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

// wdmsec.lib's SDDL strings.
#define SOFTNDK_SDDL(name, text) \
    const UNICODE_STRING name = {sizeof(text) - sizeof(WCHAR), sizeof(text), const_cast<PWCH>(text)}
extern "C" {
SOFTNDK_SDDL(SDDL_DEVOBJ_KERNEL_ONLY, L"D:P");
SOFTNDK_SDDL(SDDL_DEVOBJ_SYS_ALL, L"D:P(A;;GA;;;SY)");
SOFTNDK_SDDL(SDDL_DEVOBJ_SYS_ALL_ADM_ALL, L"D:P(A;;GA;;;SY)(A;;GA;;;BA)");
SOFTNDK_SDDL(SDDL_DEVOBJ_SYS_ALL_ADM_RX, L"D:P(A;;GA;;;SY)(A;;GRGX;;;BA)");
SOFTNDK_SDDL(SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_R, L"D:P(A;;GA;;;SY)(A;;GRGWGX;;;BA)(A;;GR;;;WD)");
SOFTNDK_SDDL(SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_RW_RES_R,
             L"D:P(A;;GA;;;SY)(A;;GRGWGX;;;BA)(A;;GRGW;;;WD)(A;;GR;;;RC)");
SOFTNDK_SDDL(SDDL_DEVOBJ_SYS_ALL_ADM_RWX_WORLD_RWX_RES_RWX,
             L"D:P(A;;GA;;;SY)(A;;GRGWGX;;;BA)(A;;GRGWGX;;;WD)(A;;GRGWGX;;;RC)");
}

namespace softndk::wdk {
namespace {

// The version SoftNDK claims: Windows Server 2022.
constexpr ULONG kMajor = 10, kMinor = 0, kBuild = 20348;
constexpr UCHAR kProductType = VER_NT_SERVER;
constexpr ULONG kNtddi = NTDDI_WIN10_FE;

// A device-object SDDL string (see wdmsec.h): D:[P](ace)...
bool valid_device_sddl(const std::wstring &sddl) {
    if (!sddl.starts_with(L"D:")) return false;
    size_t i = 2;
    if (i < sddl.size() && sddl[i] == L'P') ++i;
    size_t aces = 0;
    while (i < sddl.size()) {
        if (sddl[i] != L'(') return false;
        const size_t close = sddl.find(L')', i);
        if (close == std::wstring::npos) return false;
        const std::wstring ace = sddl.substr(i + 1, close - i - 1);
        std::vector<std::wstring> fields;
        size_t start = 0;
        for (;;) {
            const size_t semi = ace.find(L';', start);
            fields.push_back(ace.substr(start, semi == std::wstring::npos ? semi : semi - start));
            if (semi == std::wstring::npos) break;
            start = semi + 1;
        }
        if (fields.size() != 6 || (fields[0] != L"A" && fields[0] != L"D") || fields[2].empty() ||
            fields[5].empty())
            return false;
        ++aces;
        i = close + 1;
    }
    return aces > 0 || sddl == L"D:P";
}

int hex_value(WCHAR c) {
    if (c >= L'0' && c <= L'9') return c - L'0';
    if (c >= L'a' && c <= L'f') return c - L'a' + 10;
    if (c >= L'A' && c <= L'F') return c - L'A' + 10;
    return -1;
}

bool parse_hex(const WCHAR *text, int digits, ULONGLONG &out) {
    out = 0;
    for (int i = 0; i < digits; ++i) {
        const int v = hex_value(text[i]);
        if (v < 0) return false;
        out = out * 16 + static_cast<ULONGLONG>(v);
    }
    return true;
}

bool compare(ULONGLONG actual, ULONGLONG wanted, UCHAR condition) {
    switch (condition) {
        case VER_EQUAL:
            return actual == wanted;
        case VER_GREATER:
            return actual > wanted;
        case VER_GREATER_EQUAL:
            return actual >= wanted;
        case VER_LESS:
            return actual < wanted;
        case VER_LESS_EQUAL:
            return actual <= wanted;
        default:
            return false;
    }
}

UCHAR condition_of(ULONGLONG mask, ULONG type) {
    int index = 0;
    while (index < 8 && (type & (1u << index)) == 0)
        ++index;
    return static_cast<UCHAR>((mask >> (index * VER_NUM_BITS_PER_CONDITION_MASK)) &
                              VER_CONDITION_MASK);
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

NTSTATUS NTAPI RtlGetVersion(PRTL_OSVERSIONINFOW lpVersionInformation) {
    if (lpVersionInformation == nullptr) return STATUS_INVALID_PARAMETER;
    const ULONG size = lpVersionInformation->dwOSVersionInfoSize;
    if (size != sizeof(RTL_OSVERSIONINFOW) && size != sizeof(RTL_OSVERSIONINFOEXW))
        return STATUS_INVALID_PARAMETER;
    lpVersionInformation->dwMajorVersion = wdk::kMajor;
    lpVersionInformation->dwMinorVersion = wdk::kMinor;
    lpVersionInformation->dwBuildNumber = wdk::kBuild;
    lpVersionInformation->dwPlatformId = VER_PLATFORM_WIN32_NT;
    std::memset(lpVersionInformation->szCSDVersion, 0, sizeof lpVersionInformation->szCSDVersion);
    if (size == sizeof(RTL_OSVERSIONINFOEXW)) {
        auto *ex = reinterpret_cast<PRTL_OSVERSIONINFOEXW>(lpVersionInformation);
        ex->wServicePackMajor = 0;
        ex->wServicePackMinor = 0;
        ex->wSuiteMask = 0;
        ex->wProductType = wdk::kProductType;
        ex->wReserved = 0;
    }
    return STATUS_SUCCESS;
}

ULONGLONG NTAPI VerSetConditionMask(ULONGLONG ConditionMask, ULONG TypeMask, UCHAR Condition) {
    if (TypeMask == 0) return ConditionMask;
    int index = 0;
    while (index < 8 && (TypeMask & (1u << index)) == 0)
        ++index;
    const int shift = index * VER_NUM_BITS_PER_CONDITION_MASK;
    ConditionMask &= ~(static_cast<ULONGLONG>(VER_CONDITION_MASK) << shift);
    return ConditionMask | (static_cast<ULONGLONG>(Condition & VER_CONDITION_MASK) << shift);
}

NTSTATUS NTAPI RtlVerifyVersionInfo(PRTL_OSVERSIONINFOEXW VersionInfo, ULONG TypeMask,
                                    ULONGLONG ConditionMask) {
    if (VersionInfo == nullptr || TypeMask == 0) return STATUS_INVALID_PARAMETER;
    const ULONG checked = VER_MAJORVERSION | VER_MINORVERSION | VER_BUILDNUMBER | VER_PLATFORMID |
                          VER_SERVICEPACKMAJOR | VER_SERVICEPACKMINOR | VER_PRODUCT_TYPE |
                          VER_SUITENAME;
    if ((TypeMask & ~checked) != 0) return STATUS_INVALID_PARAMETER;
    for (ULONG type : {VER_BUILDNUMBER, VER_PLATFORMID, VER_PRODUCT_TYPE, VER_SUITENAME}) {
        if ((TypeMask & type) == 0) continue;
        const UCHAR condition = wdk::condition_of(ConditionMask, type);
        if (condition == 0) return STATUS_INVALID_PARAMETER;
        ULONGLONG actual = 0, wanted = 0;
        switch (type) {
            case VER_BUILDNUMBER:
                actual = wdk::kBuild;
                wanted = VersionInfo->dwBuildNumber;
                break;
            case VER_PLATFORMID:
                actual = VER_PLATFORM_WIN32_NT;
                wanted = VersionInfo->dwPlatformId;
                break;
            case VER_PRODUCT_TYPE:
                actual = wdk::kProductType;
                wanted = VersionInfo->wProductType;
                break;
            case VER_SUITENAME:
                // VER_AND: all suites present; VER_OR: any. SoftNDK claims no suite.
                if (condition == VER_AND) {
                    if (VersionInfo->wSuiteMask != 0) return STATUS_REVISION_MISMATCH;
                } else if (condition == VER_OR) {
                    if (VersionInfo->wSuiteMask != 0) return STATUS_REVISION_MISMATCH;
                } else {
                    return STATUS_INVALID_PARAMETER;
                }
                continue;
        }
        if (!wdk::compare(actual, wanted, condition)) return STATUS_REVISION_MISMATCH;
    }
    // Major, minor, service pack major/minor compare as one version, most significant first,
    // with the condition of the most significant part given (as Windows does).
    const ULONG parts[] = {VER_MAJORVERSION, VER_MINORVERSION, VER_SERVICEPACKMAJOR,
                           VER_SERVICEPACKMINOR};
    const ULONGLONG actual[] = {wdk::kMajor, wdk::kMinor, 0, 0};
    const ULONGLONG wanted[] = {VersionInfo->dwMajorVersion, VersionInfo->dwMinorVersion,
                                VersionInfo->wServicePackMajor, VersionInfo->wServicePackMinor};
    UCHAR condition = 0;
    for (int i = 0; i < 4; ++i) {
        if ((TypeMask & parts[i]) == 0) continue;
        const UCHAR own = wdk::condition_of(ConditionMask, parts[i]);
        if (own == 0) return STATUS_INVALID_PARAMETER;
        if (condition == 0) condition = own;
        if (actual[i] != wanted[i]) {
            return wdk::compare(actual[i], wanted[i], condition) ? STATUS_SUCCESS
                                                                 : STATUS_REVISION_MISMATCH;
        }
    }
    if (condition != 0 && !wdk::compare(0, 0, condition)) return STATUS_REVISION_MISMATCH;
    return STATUS_SUCCESS;
}

BOOLEAN NTAPI RtlIsNtDdiVersionAvailable(ULONG Version) {
    return Version <= wdk::kNtddi ? TRUE : FALSE;
}

NTSTATUS NTAPI ExUuidCreate(UUID *Uuid) {
    if (Uuid == nullptr) return STATUS_INVALID_PARAMETER;
    UCHAR bytes[16];
    size_t got = 0;
    while (got < sizeof bytes) {
        const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return STATUS_UNSUCCESSFUL;
        }
        got += static_cast<size_t>(n);
    }
    std::memcpy(Uuid, bytes, sizeof bytes);
    Uuid->Data3 = static_cast<USHORT>((Uuid->Data3 & 0x0FFF) | 0x4000);   // version 4
    Uuid->Data4[0] = static_cast<UCHAR>((Uuid->Data4[0] & 0x3F) | 0x80);  // RFC 4122 variant
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlGUIDFromString(PCUNICODE_STRING GuidString, GUID *Guid) {
    wdk::require_passive("RtlGUIDFromString");
    if (GuidString == nullptr || Guid == nullptr || GuidString->Buffer == nullptr)
        return STATUS_INVALID_PARAMETER;
    constexpr size_t kChars = 38;  // {8-4-4-4-12}
    if (GuidString->Length != kChars * sizeof(WCHAR)) return STATUS_INVALID_PARAMETER;
    const WCHAR *s = GuidString->Buffer;
    if (s[0] != L'{' || s[9] != L'-' || s[14] != L'-' || s[19] != L'-' || s[24] != L'-' ||
        s[37] != L'}')
        return STATUS_INVALID_PARAMETER;
    ULONGLONG v;
    GUID out{};
    if (!wdk::parse_hex(s + 1, 8, v)) return STATUS_INVALID_PARAMETER;
    out.Data1 = static_cast<ULONG>(v);
    if (!wdk::parse_hex(s + 10, 4, v)) return STATUS_INVALID_PARAMETER;
    out.Data2 = static_cast<USHORT>(v);
    if (!wdk::parse_hex(s + 15, 4, v)) return STATUS_INVALID_PARAMETER;
    out.Data3 = static_cast<USHORT>(v);
    const int offsets[8] = {20, 22, 25, 27, 29, 31, 33, 35};
    for (int i = 0; i < 8; ++i) {
        if (!wdk::parse_hex(s + offsets[i], 2, v)) return STATUS_INVALID_PARAMETER;
        out.Data4[i] = static_cast<UCHAR>(v);
    }
    *Guid = out;
    return STATUS_SUCCESS;
}

BOOLEAN NTAPI RtlValidSid(PSID Sid) {
    const auto *sid = static_cast<const SID *>(Sid);
    return sid != nullptr && sid->Revision == SID_REVISION &&
                   sid->SubAuthorityCount <= SID_MAX_SUB_AUTHORITIES
               ? TRUE
               : FALSE;
}

ULONG NTAPI RtlLengthSid(PSID Sid) {
    const auto *sid = static_cast<const SID *>(Sid);
    return static_cast<ULONG>(FIELD_OFFSET(SID, SubAuthority) +
                              sid->SubAuthorityCount * sizeof(ULONG));
}

NTSTATUS NTAPI RtlCopySid(ULONG DestinationSidLength, PSID DestinationSid, PSID SourceSid) {
    const ULONG length = RtlLengthSid(SourceSid);
    if (DestinationSidLength < length) return STATUS_BUFFER_TOO_SMALL;
    std::memmove(DestinationSid, SourceSid, length);
    return STATUS_SUCCESS;
}

PVOID NTAPI MmGetSystemRoutineAddress(PUNICODE_STRING SystemRoutineName) {
    wdk::require_passive("MmGetSystemRoutineAddress");
    if (SystemRoutineName == nullptr || SystemRoutineName->Buffer == nullptr) return nullptr;
    std::string name;
    for (size_t i = 0; i < SystemRoutineName->Length / sizeof(WCHAR); ++i) {
        const WCHAR c = SystemRoutineName->Buffer[i];
        if (c <= 0 || c >= 0x80) return nullptr;  // routine names are ASCII
        name.push_back(static_cast<char>(c));
    }
    void *address = dlsym(RTLD_DEFAULT, name.c_str());
    if (address == nullptr) return nullptr;
    // Only what the program itself exports (the runtime is linked into it): the C library's
    // and other shared libraries' functions are not system routines.
    Dl_info found{}, self{};
    if (dladdr(address, &found) == 0 ||
        dladdr(reinterpret_cast<void *>(&MmGetSystemRoutineAddress), &self) == 0 ||
        found.dli_fbase != self.dli_fbase)
        return nullptr;
    return address;
}

PCONFIGURATION_INFORMATION NTAPI IoGetConfigurationInformation(VOID) {
    static CONFIGURATION_INFORMATION configuration{};  // no disks, ports or other devices
    return &configuration;
}

VOID FASTCALL HalExamineMBR(PDEVICE_OBJECT DeviceObject, ULONG SectorSize, ULONG MBRTypeIdentifier,
                            PVOID *Buffer) {
    (void)DeviceObject;
    (void)SectorSize;
    (void)MBRTypeIdentifier;
    if (Buffer != nullptr) *Buffer = nullptr;
}

NTSTATUS NTAPI IoReadDiskSignature(PDEVICE_OBJECT DeviceObject, ULONG BytesPerSector,
                                   PDISK_SIGNATURE Signature) {
    wdk::require_passive("IoReadDiskSignature");
    (void)DeviceObject;
    (void)BytesPerSector;
    (void)Signature;
    return STATUS_INVALID_DEVICE_REQUEST;
}

NTSTATUS NTAPI IoReadPartitionTableEx(PDEVICE_OBJECT DeviceObject,
                                      PDRIVE_LAYOUT_INFORMATION_EX *DriveLayout) {
    wdk::require_passive("IoReadPartitionTableEx");
    (void)DeviceObject;
    if (DriveLayout != nullptr) *DriveLayout = nullptr;
    return STATUS_INVALID_DEVICE_REQUEST;
}

NTSTATUS NTAPI IoCreateDeviceSecure(PDRIVER_OBJECT DriverObject, ULONG DeviceExtensionSize,
                                    PUNICODE_STRING DeviceName, DEVICE_TYPE DeviceType,
                                    ULONG DeviceCharacteristics, BOOLEAN Exclusive,
                                    PCUNICODE_STRING DefaultSDDLString, LPCGUID DeviceClassGuid,
                                    PDEVICE_OBJECT *DeviceObject) {
    (void)DeviceClassGuid;
    wdk::require_passive("IoCreateDeviceSecure");
    if (DeviceObject != nullptr) *DeviceObject = nullptr;
    if (DefaultSDDLString == nullptr || !wdk::valid_device_sddl(wdk::to_wstring(DefaultSDDLString)))
        return STATUS_INVALID_PARAMETER;
    return IoCreateDevice(DriverObject, DeviceExtensionSize, DeviceName, DeviceType,
                          DeviceCharacteristics, Exclusive, DeviceObject);
}

}  // extern "C"
