/*
 * kernel_style_system.c - the system services a driver uses at load time, in C11, the way
 * driver sources write them: its own GUID defined with <initguid.h> and compared with
 * IsEqualGUID (pointer arguments in C), a device created with IoCreateDeviceSecure and a
 * symbolic link for it, parameters read from the service key with RtlQueryRegistryValues
 * and written with ZwCreateKey / ZwSetValueKey, a version check with
 * RtlVerifyVersionInfo, a log file written with ZwCreateFile / ZwWriteFile under
 * SOFTNDK_FILE_ROOT, an ETW provider, and MmGetSystemRoutineAddress for an optional
 * routine.
 *
 * Argument: a scratch directory for the files. Exit status 0 when every check holds;
 * otherwise the first failed check is on stderr.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <ntddk.h>
#include <wdmsec.h>

#include <initguid.h> /* after the system headers: the DEFINE_GUIDs below define */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {5E1F3C1A-7D25-4C43-8D0E-0A1B2C3D4E5F} */
DEFINE_GUID(GUID_SAMPLE_PROVIDER, 0x5e1f3c1a, 0x7d25, 0x4c43, 0x8d, 0x0e, 0x0a, 0x1b, 0x2c, 0x3d,
            0x4e, 0x5f);

#define EXPECT(condition)                                                                 \
    do {                                                                                  \
        if (!(condition)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

static DECLARE_CONST_UNICODE_STRING(
    ServiceKey, L"\\Registry\\Machine\\System\\CurrentControlSet\\Services\\sample");

static int CheckGuidsAndDevice(PDRIVER_OBJECT Driver) {
    GUID copy = GUID_SAMPLE_PROVIDER;
    UNICODE_STRING text, device_name, link_name;
    GUID parsed;
    PDEVICE_OBJECT device = NULL;
    EXPECT(IsEqualGUID(&copy, &GUID_SAMPLE_PROVIDER));
    copy.Data2 ^= 1;
    EXPECT(!IsEqualGUID(&copy, &GUID_SAMPLE_PROVIDER));
    RtlInitUnicodeString(&text, L"{5E1F3C1A-7D25-4C43-8D0E-0A1B2C3D4E5F}");
    EXPECT(NT_SUCCESS(RtlGUIDFromString(&text, &parsed)));
    EXPECT(IsEqualGUID(&parsed, &GUID_SAMPLE_PROVIDER));

    RtlInitUnicodeString(&device_name, L"\\Device\\Sample0");
    RtlInitUnicodeString(&link_name, L"\\DosDevices\\Sample0");
    EXPECT(IoCreateDeviceSecure(Driver, 0, &device_name, FILE_DEVICE_UNKNOWN,
                                FILE_DEVICE_SECURE_OPEN, FALSE, &SDDL_DEVOBJ_SYS_ALL_ADM_ALL,
                                &GUID_SAMPLE_PROVIDER, &device) == STATUS_SUCCESS);
    EXPECT(IoCreateSymbolicLink(&link_name, &device_name) == STATUS_SUCCESS);
    EXPECT(IoCreateSymbolicLink(&link_name, &device_name) == STATUS_OBJECT_NAME_COLLISION);
    EXPECT(IoDeleteSymbolicLink(&link_name) == STATUS_SUCCESS);
    IoDeleteDevice(device);
    return 0;
}

static int CheckRegistry(void) {
    OBJECT_ATTRIBUTES attributes;
    UNICODE_STRING parameters, value_name;
    HANDLE service, key;
    ULONG disposition = 0, depth = 0, missing = 5, default_missing = 7, value = 32;
    RTL_QUERY_REGISTRY_TABLE table[3];

    InitializeObjectAttributes(&attributes, (PUNICODE_STRING)&ServiceKey,
                               OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE, NULL, NULL);
    EXPECT(ZwCreateKey(&service, KEY_ALL_ACCESS, &attributes, 0, NULL, REG_OPTION_NON_VOLATILE,
                       &disposition) == STATUS_SUCCESS);
    RtlInitUnicodeString(&parameters, L"Parameters");
    InitializeObjectAttributes(&attributes, &parameters, OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE,
                               service, NULL);
    EXPECT(ZwCreateKey(&key, KEY_ALL_ACCESS, &attributes, 0, NULL, REG_OPTION_NON_VOLATILE,
                       &disposition) == STATUS_SUCCESS);
    EXPECT(disposition == REG_CREATED_NEW_KEY);
    RtlInitUnicodeString(&value_name, L"QueueDepth");
    EXPECT(ZwSetValueKey(key, &value_name, 0, REG_DWORD, &value, sizeof value) == STATUS_SUCCESS);
    ZwClose(key);
    ZwClose(service);

    memset(table, 0, sizeof table);
    table[0].Flags = RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_REQUIRED;
    table[0].Name = L"QueueDepth";
    table[0].EntryContext = &depth;
    table[1].Flags = RTL_QUERY_REGISTRY_DIRECT;
    table[1].Name = L"Missing";
    table[1].EntryContext = &missing;
    table[1].DefaultType = REG_DWORD;
    table[1].DefaultData = &default_missing;
    table[1].DefaultLength = sizeof default_missing;
    EXPECT(RtlQueryRegistryValues(RTL_REGISTRY_SERVICES, L"sample\\Parameters", table, NULL,
                                  NULL) == STATUS_SUCCESS);
    EXPECT(depth == 32);
    EXPECT(missing == 7);
    return 0;
}

static int CheckVersion(void) {
    RTL_OSVERSIONINFOEXW version;
    ULONGLONG mask = 0;
    memset(&version, 0, sizeof version);
    version.dwOSVersionInfoSize = sizeof version;
    version.dwMajorVersion = 10;
    VER_SET_CONDITION(mask, VER_MAJORVERSION, VER_GREATER_EQUAL);
    EXPECT(RtlVerifyVersionInfo(&version, VER_MAJORVERSION, mask) == STATUS_SUCCESS);
    EXPECT(RtlIsNtDdiVersionAvailable(NTDDI_WIN10_RS5));
    return 0;
}

static int CheckLogFile(void) {
    UNICODE_STRING name;
    OBJECT_ATTRIBUTES attributes;
    IO_STATUS_BLOCK io;
    HANDLE file;
    char line[] = "driver loaded\n", back[32];
    LARGE_INTEGER zero;
    RtlInitUnicodeString(&name, L"\\SystemRoot\\sample.log");
    InitializeObjectAttributes(&attributes, &name, OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE, NULL,
                               NULL);
    EXPECT(ZwCreateFile(&file, GENERIC_WRITE | GENERIC_READ, &attributes, &io, NULL,
                        FILE_ATTRIBUTE_NORMAL, FILE_SHARE_READ, FILE_OVERWRITE_IF,
                        FILE_SYNCHRONOUS_IO_NONALERT | FILE_NON_DIRECTORY_FILE, NULL,
                        0) == STATUS_SUCCESS);
    EXPECT(io.Information == FILE_CREATED);
    EXPECT(ZwWriteFile(file, NULL, NULL, NULL, &io, line, (ULONG)strlen(line), NULL, NULL) ==
           STATUS_SUCCESS);
    zero.QuadPart = 0;
    memset(back, 0, sizeof back);
    EXPECT(ZwReadFile(file, NULL, NULL, NULL, &io, back, sizeof back, &zero, NULL) ==
           STATUS_SUCCESS);
    EXPECT(io.Information == strlen(line) && strcmp(back, line) == 0);
    ZwClose(file);
    return 0;
}

static int CheckEtwAndRoutines(void) {
    REGHANDLE provider = 0;
    EVENT_DESCRIPTOR event;
    UNICODE_STRING routine;
    memset(&event, 0, sizeof event);
    event.Id = 1;
    EXPECT(EtwRegister(&GUID_SAMPLE_PROVIDER, NULL, NULL, &provider) == STATUS_SUCCESS);
    EXPECT(EtwWrite(provider, &event, NULL, 0, NULL) == STATUS_SUCCESS);
    EXPECT(EtwUnregister(provider) == STATUS_SUCCESS);
    RtlInitUnicodeString(&routine, L"ExAllocatePool2");
    EXPECT(MmGetSystemRoutineAddress(&routine) == (PVOID)ExAllocatePool2);
    RtlInitUnicodeString(&routine, L"ExAllocatePool4");
    EXPECT(MmGetSystemRoutineAddress(&routine) == NULL);
    return 0;
}

int main(int argc, char **argv) {
    static DRIVER_OBJECT driver;
    char root[1100];
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCRATCH_DIRECTORY\n", argv[0]);
        return 2;
    }
    /* A fresh scratch tree, so the log file is created anew on every run. */
    snprintf(root, sizeof root, "rm -rf '%s' && mkdir -p '%s/c/Windows'", argv[1], argv[1]);
    if (system(root) != 0) return 1;
    setenv("SOFTNDK_FILE_ROOT", argv[1], 1);
    if (CheckGuidsAndDevice(&driver) != 0 || CheckRegistry() != 0 || CheckVersion() != 0 ||
        CheckLogFile() != 0 || CheckEtwAndRoutines() != 0)
        return 1;
    return 0;
}
