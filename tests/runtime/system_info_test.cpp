// Versions, GUIDs (DEFINE_GUID / IsEqualGUID / RtlGUIDFromString / ExUuidCreate), SIDs,
// MmGetSystemRoutineAddress, hardware configuration and disks, IoCreateDeviceSecure.
#include <ntddk.h>
#include <wdmsec.h>

#include <cstring>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "guid_test_guids.h"  // declared here, defined in guid_definition.cpp

TEST_CASE("system: RtlGetVersion claims Windows Server 2022 and checks the structure size") {
    RTL_OSVERSIONINFOW plain{};
    plain.dwOSVersionInfoSize = sizeof plain;
    REQUIRE(RtlGetVersion(&plain) == STATUS_SUCCESS);
    CHECK(plain.dwMajorVersion == 10);
    CHECK(plain.dwMinorVersion == 0);
    CHECK(plain.dwBuildNumber == 20348);
    CHECK(plain.dwPlatformId == VER_PLATFORM_WIN32_NT);
    RTL_OSVERSIONINFOEXW ex{};
    ex.dwOSVersionInfoSize = sizeof ex;
    REQUIRE(RtlGetVersion(reinterpret_cast<PRTL_OSVERSIONINFOW>(&ex)) == STATUS_SUCCESS);
    CHECK(ex.wProductType == VER_NT_SERVER);
    CHECK(ex.wServicePackMajor == 0);
    RTL_OSVERSIONINFOW bad{};
    bad.dwOSVersionInfoSize = 12;
    CHECK(RtlGetVersion(&bad) == STATUS_INVALID_PARAMETER);
}

TEST_CASE("system: RtlVerifyVersionInfo and RtlIsNtDdiVersionAvailable") {
    RTL_OSVERSIONINFOEXW wanted{};
    wanted.dwOSVersionInfoSize = sizeof wanted;
    wanted.dwMajorVersion = 6;
    wanted.dwMinorVersion = 3;
    ULONGLONG mask = 0;
    VER_SET_CONDITION(mask, VER_MAJORVERSION, VER_GREATER_EQUAL);
    VER_SET_CONDITION(mask, VER_MINORVERSION, VER_GREATER_EQUAL);
    CHECK(RtlVerifyVersionInfo(&wanted, VER_MAJORVERSION | VER_MINORVERSION, mask) ==
          STATUS_SUCCESS);
    wanted.dwMajorVersion = 11;
    CHECK(RtlVerifyVersionInfo(&wanted, VER_MAJORVERSION | VER_MINORVERSION, mask) ==
          STATUS_REVISION_MISMATCH);
    wanted.dwMajorVersion = 10;
    wanted.dwMinorVersion = 0;
    wanted.dwBuildNumber = 22000;
    ULONGLONG build = 0;
    VER_SET_CONDITION(build, VER_BUILDNUMBER, VER_GREATER_EQUAL);
    CHECK(RtlVerifyVersionInfo(&wanted, VER_BUILDNUMBER, build) == STATUS_REVISION_MISMATCH);
    VER_SET_CONDITION(build, VER_BUILDNUMBER, VER_LESS);
    CHECK(RtlVerifyVersionInfo(&wanted, VER_BUILDNUMBER, build) == STATUS_SUCCESS);
    wanted.wProductType = VER_NT_WORKSTATION;
    ULONGLONG product = 0;
    VER_SET_CONDITION(product, VER_PRODUCT_TYPE, VER_EQUAL);
    CHECK(RtlVerifyVersionInfo(&wanted, VER_PRODUCT_TYPE, product) == STATUS_REVISION_MISMATCH);
    CHECK(RtlVerifyVersionInfo(&wanted, 0, mask) == STATUS_INVALID_PARAMETER);
    CHECK(RtlVerifyVersionInfo(&wanted, VER_BUILDNUMBER, 0) == STATUS_INVALID_PARAMETER);

    CHECK(RtlIsNtDdiVersionAvailable(NTDDI_WIN7));
    CHECK(RtlIsNtDdiVersionAvailable(NTDDI_WIN10_FE));
    CHECK_FALSE(RtlIsNtDdiVersionAvailable(NTDDI_WIN10_CO));
}

TEST_CASE("system: DEFINE_GUID declares, <initguid.h> defines, IsEqualGUID compares") {
    const GUID expected = {
        0x2f7a3f0c, 0x5b8e, 0x4c4a, {0x9c, 0x39, 0x6e, 0x9e, 0x5d, 0x0b, 0x1a, 0x01}};
    CHECK(IsEqualGUID(GUID_SOFTNDK_TEST_INTERFACE, expected));
    CHECK(GUID_SOFTNDK_TEST_INTERFACE == expected);
    GUID other = expected;
    other.Data4[7] ^= 1;
    CHECK_FALSE(IsEqualGUID(other, expected));
    CHECK(other != expected);
    // The runtime defines the GUIDs its headers declare.
    CHECK(GUID_DEVICE_INTERFACE_ARRIVAL.Data1 == 0xcb3a4004);
    CHECK(GUID_ACDC_POWER_SOURCE.Data1 == 0x5D3E9A59);
}

TEST_CASE("system: RtlGUIDFromString parses the braced form and rejects everything else") {
    UNICODE_STRING text;
    GUID guid{};
    RtlInitUnicodeString(&text, L"{2F7A3F0C-5b8e-4C4A-9C39-6E9E5D0B1A01}");
    REQUIRE(RtlGUIDFromString(&text, &guid) == STATUS_SUCCESS);
    CHECK(IsEqualGUID(guid, GUID_SOFTNDK_TEST_INTERFACE));
    for (const wchar_t *bad :
         {L"2F7A3F0C-5B8E-4C4A-9C39-6E9E5D0B1A01", L"{2F7A3F0C-5B8E-4C4A-9C39-6E9E5D0B1A0}",
          L"{2F7A3F0C-5B8E-4C4A-9C39-6E9E5D0B1A0G}", L"{2F7A3F0C+5B8E-4C4A-9C39-6E9E5D0B1A01}",
          L""}) {
        RtlInitUnicodeString(&text, bad);
        CHECK(RtlGUIDFromString(&text, &guid) == STATUS_INVALID_PARAMETER);
    }
}

TEST_CASE("system: ExUuidCreate makes distinct version-4 UUIDs") {
    std::set<std::string> seen;
    for (int i = 0; i < 64; ++i) {
        UUID uuid{};
        REQUIRE(ExUuidCreate(&uuid) == STATUS_SUCCESS);
        CHECK((uuid.Data3 >> 12) == 4);
        CHECK((uuid.Data4[0] & 0xC0) == 0x80);
        seen.emplace(reinterpret_cast<const char *>(&uuid), sizeof uuid);
    }
    CHECK(seen.size() == 64);
}

TEST_CASE("system: SIDs - valid, length, copy") {
    // S-1-5-32-544 (BUILTIN\Administrators)
    struct {
        SID sid;
        ULONG more[1];
    } admins{{SID_REVISION, 2, SECURITY_NT_AUTHORITY, {SECURITY_BUILTIN_DOMAIN_RID}},
             {DOMAIN_ALIAS_RID_ADMINS}};
    CHECK(RtlValidSid(&admins.sid));
    CHECK(RtlLengthSid(&admins.sid) == 16);
    UCHAR copy[SECURITY_MAX_SID_SIZE] = {};
    CHECK(RtlCopySid(15, copy, &admins.sid) == STATUS_BUFFER_TOO_SMALL);
    REQUIRE(RtlCopySid(sizeof copy, copy, &admins.sid) == STATUS_SUCCESS);
    CHECK(std::memcmp(copy, &admins, 16) == 0);
    SID bad = admins.sid;
    bad.Revision = 2;
    CHECK_FALSE(RtlValidSid(&bad));
    bad.Revision = SID_REVISION;
    bad.SubAuthorityCount = SID_MAX_SUB_AUTHORITIES + 1;
    CHECK_FALSE(RtlValidSid(&bad));
    CHECK_FALSE(RtlValidSid(nullptr));
}

TEST_CASE("system: MmGetSystemRoutineAddress finds the runtime's routines, not libc's") {
    UNICODE_STRING name;
    RtlInitUnicodeString(&name, L"KeSetEvent");
    CHECK(MmGetSystemRoutineAddress(&name) == reinterpret_cast<PVOID>(&KeSetEvent));
    RtlInitUnicodeString(&name, L"ExAllocatePool2");
    CHECK(MmGetSystemRoutineAddress(&name) == reinterpret_cast<PVOID>(&ExAllocatePool2));
    RtlInitUnicodeString(&name, L"NoSuchRoutine");
    CHECK(MmGetSystemRoutineAddress(&name) == nullptr);
    RtlInitUnicodeString(&name, L"malloc");
    CHECK(MmGetSystemRoutineAddress(&name) == nullptr);
}

TEST_CASE("system: no disks - configuration counts, MBR, signature, partition table") {
    PCONFIGURATION_INFORMATION configuration = IoGetConfigurationInformation();
    REQUIRE(configuration != nullptr);
    CHECK(configuration->DiskCount == 0);
    CHECK(configuration->CdRomCount == 0);
    CHECK(configuration->SerialCount == 0);
    DRIVER_OBJECT driver{};
    PDEVICE_OBJECT device = nullptr;
    REQUIRE(IoCreateDevice(&driver, 0, nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE, &device) ==
            STATUS_SUCCESS);
    PVOID mbr = &driver;
    HalExamineMBR(device, 512, 0x54, &mbr);
    CHECK(mbr == nullptr);
    DISK_SIGNATURE signature{};
    CHECK(IoReadDiskSignature(device, 512, &signature) == STATUS_INVALID_DEVICE_REQUEST);
    PDRIVE_LAYOUT_INFORMATION_EX layout = reinterpret_cast<PDRIVE_LAYOUT_INFORMATION_EX>(&driver);
    CHECK(IoReadPartitionTableEx(device, &layout) == STATUS_INVALID_DEVICE_REQUEST);
    CHECK(layout == nullptr);
    IoDeleteDevice(device);
}

TEST_CASE("system: IoCreateDeviceSecure checks the SDDL, then creates the device") {
    DRIVER_OBJECT driver{};
    PDEVICE_OBJECT device = nullptr;
    UNICODE_STRING name;
    RtlInitUnicodeString(&name, L"\\Device\\SoftNdkSecure");
    REQUIRE(IoCreateDeviceSecure(&driver, 16, &name, FILE_DEVICE_UNKNOWN, FILE_DEVICE_SECURE_OPEN,
                                 FALSE, &SDDL_DEVOBJ_SYS_ALL_ADM_ALL, &GUID_SOFTNDK_TEST_INTERFACE,
                                 &device) == STATUS_SUCCESS);
    REQUIRE(device != nullptr);
    CHECK(driver.DeviceObject == device);
    CHECK(device->DeviceExtension != nullptr);
    IoDeleteDevice(device);
    REQUIRE(IoCreateDeviceSecure(&driver, 0, nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE,
                                 &SDDL_DEVOBJ_KERNEL_ONLY, nullptr, &device) == STATUS_SUCCESS);
    IoDeleteDevice(device);
    for (const wchar_t *bad : {L"", L"O:BA", L"D:P(A;;GA;;SY)", L"D:P(X;;GA;;;SY)",
                               L"D:P(A;;;;;SY)", L"D:P(A;;GA;;;SY"}) {
        UNICODE_STRING sddl;
        RtlInitUnicodeString(&sddl, bad);
        device = reinterpret_cast<PDEVICE_OBJECT>(&driver);
        CHECK(IoCreateDeviceSecure(&driver, 0, nullptr, FILE_DEVICE_UNKNOWN, 0, FALSE, &sddl,
                                   nullptr, &device) == STATUS_INVALID_PARAMETER);
        CHECK(device == nullptr);
    }
    CHECK(driver.DeviceObject == nullptr);
}
