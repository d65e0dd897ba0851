/*
 * softndk_wdm_system.h - part of SoftNDK's wdm.h: registry (Zw*Key, Rtl*Registry*), object names
 * and symbolic links, files, transactions, security (SIDs, wdmsec.h),
 * configuration/power/PnP/WMI/ETW callbacks, versions and GUIDs.
 *
 * Included at the end of <wdm.h>. Including it alone includes <wdm.h> first.
 *
 * Declarations have the WDK's exact signatures (wdm.h, ntddk.h, ntifs.h). What each
 * call does in a Linux process is stated above it; the implementations are in
 * runtime/object.cpp (object manager, handles, names, processes/threads), registry.cpp
 * (registry and KTM transactions), file.cpp (files), notify.cpp (callback objects,
 * registry/object/process callbacks, power, PnP, WMI, ETW, driver reinitialization)
 * and system.cpp (versions, GUIDs, UUIDs, SIDs, MmGetSystemRoutineAddress, disks).
 *
 * The object manager. Every object a handle can name (threads, registry keys,
 * files, object directories, callback objects, transaction objects, WMI data
 * blocks, the process) is reference-counted: a handle holds one reference,
 * ObReferenceObject* add one, ObDereferenceObject drops one, and the object goes
 * when the last goes. Named objects (directories, callback objects, symbolic
 * links) live in one process-wide namespace, case-insensitive as Windows' object
 * names are; "\DosDevices\" and "\GLOBAL??\" are spellings of "\??\". A named object
 * created without OBJ_PERMANENT loses its name when its last handle/reference goes
 * (a permanent one keeps it until ZwMakeTemporaryObject and then its last close).
 * Handles are kernel handles: every Zw* handle closes with ZwClose. This widens
 * wdm.h's thread-only object manager: ObReferenceObjectByHandle accepts the object
 * types below (PsProcessType, IoFileObjectType, CmKeyObjectType, ...), and
 * ZwWaitForSingleObject on a handle that is not a thread's returns
 * STATUS_OBJECT_TYPE_MISMATCH (those objects are not dispatcher objects here). A
 * pointer the runtime never handed out, given to an Ob* call, is reported and aborts.
 */
#ifndef SOFTNDK_SOFTNDK_WDM_SYSTEM_H
#define SOFTNDK_SOFTNDK_WDM_SYSTEM_H

#include <wdm.h>

#include <guiddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Access rights the Zw* calls take (winnt.h). The short generic names
 * (DELETE, READ_CONTROL, ...) stay out: they collide with C++ code. */
#define STANDARD_RIGHTS_READ  0x00020000
#define STANDARD_RIGHTS_WRITE 0x00020000
#define STANDARD_RIGHTS_ALL   0x001F0000
#define MAXIMUM_ALLOWED       0x02000000

/* ---- Object manager. */
typedef struct _ACCESS_STATE *PACCESS_STATE;
extern POBJECT_TYPE *PsProcessType;
extern POBJECT_TYPE *IoFileObjectType;
extern POBJECT_TYPE *ExCallbackObjectType;
extern POBJECT_TYPE *CmKeyObjectType;
extern POBJECT_TYPE *TmTransactionObjectType;

/* Adds a reference to Object if ObjectType is NULL or its type, else returns
 * STATUS_OBJECT_TYPE_MISMATCH. An Object the runtime never created is reported and
 * aborts (Windows would corrupt memory). */
_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS NTAPI
    ObReferenceObjectByPointer(_In_ PVOID Object, _In_ ACCESS_MASK DesiredAccess,
                               _In_opt_ POBJECT_TYPE ObjectType, _In_ KPROCESSOR_MODE AccessMode);
/* A new kernel handle to Object (which gains the handle's reference). ObjectType as
 * above; Handle NULL -> STATUS_INVALID_PARAMETER. PassedAccessState is ignored. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ObOpenObjectByPointer(_In_ PVOID Object, _In_ ULONG HandleAttributes,
                          _In_opt_ PACCESS_STATE PassedAccessState, _In_ ACCESS_MASK DesiredAccess,
                          _In_opt_ POBJECT_TYPE ObjectType, _In_ KPROCESSOR_MODE AccessMode,
                          _Out_ PHANDLE Handle);
/* A named object that was created permanent becomes temporary: its name goes with
 * its last handle or reference. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI ZwMakeTemporaryObject(_In_ HANDLE Handle);

/* Object directories: names in the namespace. A name already used ->
 * STATUS_OBJECT_NAME_COLLISION, or with OBJ_OPENIF a handle to the existing
 * directory and STATUS_OBJECT_NAME_EXISTS; a missing parent directory ->
 * STATUS_OBJECT_PATH_NOT_FOUND ("\" and "\??" always exist). An unnamed directory
 * is allowed. */
#define DIRECTORY_QUERY               0x0001
#define DIRECTORY_TRAVERSE            0x0002
#define DIRECTORY_CREATE_OBJECT       0x0004
#define DIRECTORY_CREATE_SUBDIRECTORY 0x0008
#define DIRECTORY_ALL_ACCESS          (STANDARD_RIGHTS_REQUIRED | 0xF)
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwCreateDirectoryObject(_Out_ PHANDLE DirectoryHandle, _In_ ACCESS_MASK DesiredAccess,
                            _In_ POBJECT_ATTRIBUTES ObjectAttributes);

/* Symbolic links in the namespace (\??\Name -> \Device\Name). The target is not
 * checked, as on Windows. An existing name -> STATUS_OBJECT_NAME_COLLISION; deleting
 * a name that is not a link -> STATUS_OBJECT_NAME_NOT_FOUND. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoCreateSymbolicLink(_In_ PUNICODE_STRING SymbolicLinkName, _In_ PUNICODE_STRING DeviceName);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoDeleteSymbolicLink(_In_ PUNICODE_STRING SymbolicLinkName);

/* ---- Processes and threads. The process is the Linux process: PsGetCurrentProcess
 * is its one process object, PsGetCurrentProcessId / PsGetThreadProcessId its pid.
 * PsGetCurrentThread is the thread object of the calling thread (a system thread's
 * own; other threads get one at first call that lives as long as the thread), and
 * PsGetCurrentThreadId its Linux thread id (gettid). ExGetPreviousMode is KernelMode:
 * no request comes from user mode. IoIs32bitProcess is FALSE (x64 process). */
_IRQL_requires_max_(DISPATCH_LEVEL) PEPROCESS NTAPI PsGetCurrentProcess(VOID);
_IRQL_requires_max_(DISPATCH_LEVEL) HANDLE NTAPI PsGetCurrentProcessId(VOID);
_IRQL_requires_max_(DISPATCH_LEVEL) PETHREAD NTAPI PsGetCurrentThread(VOID);
_IRQL_requires_max_(DISPATCH_LEVEL) HANDLE NTAPI PsGetCurrentThreadId(VOID);
_IRQL_requires_max_(DISPATCH_LEVEL) HANDLE NTAPI PsGetThreadProcessId(_In_ PETHREAD Thread);
_IRQL_requires_max_(DISPATCH_LEVEL) KPROCESSOR_MODE NTAPI ExGetPreviousMode(VOID);
_IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI IoIs32bitProcess(_In_opt_ PIRP Irp);

/* Process-creation notification. There is one process and no other is ever created,
 * so a registered routine is never called; registration is checked as Windows does:
 * registering a routine twice, or removing one that is not registered ->
 * STATUS_INVALID_PARAMETER (at most 64 routines). */
typedef struct _PS_CREATE_NOTIFY_INFO {
    SIZE_T Size;
    union {
        ULONG Flags;
        struct {
            ULONG FileOpenNameAvailable : 1;
            ULONG IsSubsystemProcess : 1;
            ULONG Reserved : 30;
        } DUMMYSTRUCTNAME;
    } DUMMYUNIONNAME;
    HANDLE ParentProcessId;
    CLIENT_ID CreatingThreadId;
    struct _FILE_OBJECT *FileObject;
    PCUNICODE_STRING ImageFileName;
    PCUNICODE_STRING CommandLine;
    NTSTATUS CreationStatus;
} PS_CREATE_NOTIFY_INFO, *PPS_CREATE_NOTIFY_INFO;
typedef VOID (*PCREATE_PROCESS_NOTIFY_ROUTINE_EX)(_Inout_ PEPROCESS Process, _In_ HANDLE ProcessId,
                                                  _Inout_opt_ PPS_CREATE_NOTIFY_INFO CreateInfo);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    PsSetCreateProcessNotifyRoutineEx(_In_ PCREATE_PROCESS_NOTIFY_ROUTINE_EX NotifyRoutine,
                                      _In_ BOOLEAN Remove);

/* Object callbacks (ObRegisterCallbacks). Registrations are validated and kept
 * (Version must be OB_FLT_REGISTRATION_VERSION, at least one operation with a
 * non-NULL ObjectType and a pre or post routine, else STATUS_INVALID_PARAMETER; an
 * altitude already registered -> STATUS_FLT_INSTANCE_ALTITUDE_COLLISION). No other
 * process opens handles to this one, so the routines are never called. */
#define OB_FLT_REGISTRATION_VERSION_0100 0x0100
#define OB_FLT_REGISTRATION_VERSION      OB_FLT_REGISTRATION_VERSION_0100
typedef ULONG OB_OPERATION;
#define OB_OPERATION_HANDLE_CREATE    0x00000001
#define OB_OPERATION_HANDLE_DUPLICATE 0x00000002
typedef enum _OB_PREOP_CALLBACK_STATUS {
    OB_PREOP_SUCCESS
} OB_PREOP_CALLBACK_STATUS,
    *POB_PREOP_CALLBACK_STATUS;
typedef struct _OB_PRE_CREATE_HANDLE_INFORMATION {
    ACCESS_MASK DesiredAccess;
    ACCESS_MASK OriginalDesiredAccess;
} OB_PRE_CREATE_HANDLE_INFORMATION, *POB_PRE_CREATE_HANDLE_INFORMATION;
typedef struct _OB_PRE_DUPLICATE_HANDLE_INFORMATION {
    ACCESS_MASK DesiredAccess;
    ACCESS_MASK OriginalDesiredAccess;
    PVOID SourceProcess;
    PVOID TargetProcess;
} OB_PRE_DUPLICATE_HANDLE_INFORMATION, *POB_PRE_DUPLICATE_HANDLE_INFORMATION;
typedef union _OB_PRE_OPERATION_PARAMETERS {
    OB_PRE_CREATE_HANDLE_INFORMATION CreateHandleInformation;
    OB_PRE_DUPLICATE_HANDLE_INFORMATION DuplicateHandleInformation;
} OB_PRE_OPERATION_PARAMETERS, *POB_PRE_OPERATION_PARAMETERS;
typedef struct _OB_PRE_OPERATION_INFORMATION {
    OB_OPERATION Operation;
    union {
        ULONG Flags;
        struct {
            ULONG KernelHandle : 1;
            ULONG Reserved : 31;
        } DUMMYSTRUCTNAME;
    } DUMMYUNIONNAME;
    PVOID Object;
    POBJECT_TYPE ObjectType;
    PVOID CallContext;
    POB_PRE_OPERATION_PARAMETERS Parameters;
} OB_PRE_OPERATION_INFORMATION, *POB_PRE_OPERATION_INFORMATION;
typedef struct _OB_POST_CREATE_HANDLE_INFORMATION {
    ACCESS_MASK GrantedAccess;
} OB_POST_CREATE_HANDLE_INFORMATION, *POB_POST_CREATE_HANDLE_INFORMATION;
typedef struct _OB_POST_DUPLICATE_HANDLE_INFORMATION {
    ACCESS_MASK GrantedAccess;
} OB_POST_DUPLICATE_HANDLE_INFORMATION, *POB_POST_DUPLICATE_HANDLE_INFORMATION;
typedef union _OB_POST_OPERATION_PARAMETERS {
    OB_POST_CREATE_HANDLE_INFORMATION CreateHandleInformation;
    OB_POST_DUPLICATE_HANDLE_INFORMATION DuplicateHandleInformation;
} OB_POST_OPERATION_PARAMETERS, *POB_POST_OPERATION_PARAMETERS;
typedef struct _OB_POST_OPERATION_INFORMATION {
    OB_OPERATION Operation;
    union {
        ULONG Flags;
        struct {
            ULONG KernelHandle : 1;
            ULONG Reserved : 31;
        } DUMMYSTRUCTNAME;
    } DUMMYUNIONNAME;
    PVOID Object;
    POBJECT_TYPE ObjectType;
    PVOID CallContext;
    NTSTATUS ReturnStatus;
    POB_POST_OPERATION_PARAMETERS Parameters;
} OB_POST_OPERATION_INFORMATION, *POB_POST_OPERATION_INFORMATION;
typedef OB_PREOP_CALLBACK_STATUS (*POB_PRE_OPERATION_CALLBACK)(
    _In_ PVOID RegistrationContext, _Inout_ POB_PRE_OPERATION_INFORMATION OperationInformation);
typedef VOID (*POB_POST_OPERATION_CALLBACK)(
    _In_ PVOID RegistrationContext, _In_ POB_POST_OPERATION_INFORMATION OperationInformation);
typedef struct _OB_OPERATION_REGISTRATION {
    POBJECT_TYPE *ObjectType;
    OB_OPERATION Operations;
    POB_PRE_OPERATION_CALLBACK PreOperation;
    POB_POST_OPERATION_CALLBACK PostOperation;
} OB_OPERATION_REGISTRATION, *POB_OPERATION_REGISTRATION;
typedef struct _OB_CALLBACK_REGISTRATION {
    USHORT Version;
    USHORT OperationRegistrationCount;
    UNICODE_STRING Altitude;
    PVOID RegistrationContext;
    OB_OPERATION_REGISTRATION *OperationRegistration;
} OB_CALLBACK_REGISTRATION, *POB_CALLBACK_REGISTRATION;
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    ObRegisterCallbacks(_In_ POB_CALLBACK_REGISTRATION CallbackRegistration,
                        _Outptr_ PVOID *RegistrationHandle);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI ObUnRegisterCallbacks(_In_ PVOID RegistrationHandle);
_IRQL_requires_max_(APC_LEVEL) USHORT NTAPI ObGetFilterVersion(VOID);

/* ---- Registry. A per-process, in-memory registry: keys with case-insensitive names
 * (the case they were created with is kept and reported), values of any REG_* type.
 * It starts with \Registry\Machine\{System\CurrentControlSet\{Services,Control,Enum},
 * Software\Microsoft\Windows NT\CurrentVersion} and \Registry\User; the driver runner
 * loads a file into it and creates the driver's service key (runtime/driver_main.cpp).
 * Absolute names start with \Registry\; with OBJECT_ATTRIBUTES.RootDirectory a
 * registry key handle, ObjectName is relative to it. ZwCreateKey creates one level
 * only (missing parent -> STATUS_OBJECT_NAME_NOT_FOUND). A deleted key's open
 * handles return STATUS_KEY_DELETED; deleting a key with subkeys ->
 * STATUS_CANNOT_DELETE. Subkeys enumerate in case-insensitive name order, values in
 * the order they were first set. Query and enumeration calls follow Windows' buffer
 * rules: Length below the fixed part of the class -> STATUS_BUFFER_TOO_SMALL, room
 * for the fixed part but not the rest -> STATUS_BUFFER_OVERFLOW with the fixed part
 * filled; both set *ResultLength to the size needed. Names in the information
 * structures are WCHARs (4 bytes here) and NameLength is in bytes. Registry callbacks
 * (CmRegisterCallbackEx) see the operations listed with them. */
#define KEY_QUERY_VALUE        0x0001
#define KEY_SET_VALUE          0x0002
#define KEY_CREATE_SUB_KEY     0x0004
#define KEY_ENUMERATE_SUB_KEYS 0x0008
#define KEY_NOTIFY             0x0010
#define KEY_CREATE_LINK        0x0020
#define KEY_WOW64_64KEY        0x0100
#define KEY_WOW64_32KEY        0x0200
#define KEY_READ                                                                      \
    ((STANDARD_RIGHTS_READ | KEY_QUERY_VALUE | KEY_ENUMERATE_SUB_KEYS | KEY_NOTIFY) & \
     (~SYNCHRONIZE))
#define KEY_WRITE   ((STANDARD_RIGHTS_WRITE | KEY_SET_VALUE | KEY_CREATE_SUB_KEY) & (~SYNCHRONIZE))
#define KEY_EXECUTE ((KEY_READ) & (~SYNCHRONIZE))
#define KEY_ALL_ACCESS                                                             \
    ((STANDARD_RIGHTS_ALL | KEY_QUERY_VALUE | KEY_SET_VALUE | KEY_CREATE_SUB_KEY | \
      KEY_ENUMERATE_SUB_KEYS | KEY_NOTIFY | KEY_CREATE_LINK) &                     \
     (~SYNCHRONIZE))

#define REG_OPTION_RESERVED       0x00000000L
#define REG_OPTION_NON_VOLATILE   0x00000000L
#define REG_OPTION_VOLATILE       0x00000001L
#define REG_OPTION_CREATE_LINK    0x00000002L
#define REG_OPTION_BACKUP_RESTORE 0x00000004L
#define REG_OPTION_OPEN_LINK      0x00000008L
#define REG_CREATED_NEW_KEY       0x00000001L
#define REG_OPENED_EXISTING_KEY   0x00000002L

#define REG_NONE                       0
#define REG_SZ                         1
#define REG_EXPAND_SZ                  2
#define REG_BINARY                     3
#define REG_DWORD                      4
#define REG_DWORD_LITTLE_ENDIAN        4
#define REG_DWORD_BIG_ENDIAN           5
#define REG_LINK                       6
#define REG_MULTI_SZ                   7
#define REG_RESOURCE_LIST              8
#define REG_FULL_RESOURCE_DESCRIPTOR   9
#define REG_RESOURCE_REQUIREMENTS_LIST 10
#define REG_QWORD                      11
#define REG_QWORD_LITTLE_ENDIAN        11

typedef enum _KEY_INFORMATION_CLASS {
    KeyBasicInformation,
    KeyNodeInformation,
    KeyFullInformation,
    KeyNameInformation,
    KeyCachedInformation,
    KeyFlagsInformation,
    KeyVirtualizationInformation,
    KeyHandleTagsInformation,
    KeyTrustInformation,
    KeyLayerInformation,
    MaxKeyInfoClass
} KEY_INFORMATION_CLASS;
typedef struct _KEY_BASIC_INFORMATION {
    LARGE_INTEGER LastWriteTime;
    ULONG TitleIndex;
    ULONG NameLength;
    WCHAR Name[1];
} KEY_BASIC_INFORMATION, *PKEY_BASIC_INFORMATION;
typedef struct _KEY_NODE_INFORMATION {
    LARGE_INTEGER LastWriteTime;
    ULONG TitleIndex;
    ULONG ClassOffset;
    ULONG ClassLength;
    ULONG NameLength;
    WCHAR Name[1];
} KEY_NODE_INFORMATION, *PKEY_NODE_INFORMATION;
typedef struct _KEY_FULL_INFORMATION {
    LARGE_INTEGER LastWriteTime;
    ULONG TitleIndex;
    ULONG ClassOffset;
    ULONG ClassLength;
    ULONG SubKeys;
    ULONG MaxNameLen;
    ULONG MaxClassLen;
    ULONG Values;
    ULONG MaxValueNameLen;
    ULONG MaxValueDataLen;
    WCHAR Class[1];
} KEY_FULL_INFORMATION, *PKEY_FULL_INFORMATION;
typedef struct _KEY_NAME_INFORMATION {
    ULONG NameLength;
    WCHAR Name[1];
} KEY_NAME_INFORMATION, *PKEY_NAME_INFORMATION;
typedef struct _KEY_CACHED_INFORMATION {
    LARGE_INTEGER LastWriteTime;
    ULONG TitleIndex;
    ULONG SubKeys;
    ULONG MaxNameLen;
    ULONG Values;
    ULONG MaxValueNameLen;
    ULONG MaxValueDataLen;
    ULONG NameLength;
} KEY_CACHED_INFORMATION, *PKEY_CACHED_INFORMATION;

typedef enum _KEY_VALUE_INFORMATION_CLASS {
    KeyValueBasicInformation,
    KeyValueFullInformation,
    KeyValuePartialInformation,
    KeyValueFullInformationAlign64,
    KeyValuePartialInformationAlign64,
    KeyValueLayerInformation,
    MaxKeyValueInfoClass
} KEY_VALUE_INFORMATION_CLASS;
typedef struct _KEY_VALUE_BASIC_INFORMATION {
    ULONG TitleIndex;
    ULONG Type;
    ULONG NameLength;
    WCHAR Name[1];
} KEY_VALUE_BASIC_INFORMATION, *PKEY_VALUE_BASIC_INFORMATION;
/* The data starts at DataOffset, after the name, on a ULONG boundary. */
typedef struct _KEY_VALUE_FULL_INFORMATION {
    ULONG TitleIndex;
    ULONG Type;
    ULONG DataOffset;
    ULONG DataLength;
    ULONG NameLength;
    WCHAR Name[1];
} KEY_VALUE_FULL_INFORMATION, *PKEY_VALUE_FULL_INFORMATION;
typedef struct _KEY_VALUE_PARTIAL_INFORMATION {
    ULONG TitleIndex;
    ULONG Type;
    ULONG DataLength;
    UCHAR Data[1];
} KEY_VALUE_PARTIAL_INFORMATION, *PKEY_VALUE_PARTIAL_INFORMATION;

_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwCreateKey(_Out_ PHANDLE KeyHandle, _In_ ACCESS_MASK DesiredAccess,
                _In_ POBJECT_ATTRIBUTES ObjectAttributes, _Reserved_ ULONG TitleIndex,
                _In_opt_ PUNICODE_STRING Class, _In_ ULONG CreateOptions,
                _Out_opt_ PULONG Disposition);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwOpenKey(_Out_ PHANDLE KeyHandle, _In_ ACCESS_MASK DesiredAccess,
              _In_ POBJECT_ATTRIBUTES ObjectAttributes);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI ZwDeleteKey(_In_ HANDLE KeyHandle);
/* An empty (or NULL-buffer) ValueName is the key's default value. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwSetValueKey(_In_ HANDLE KeyHandle, _In_ PUNICODE_STRING ValueName, _In_opt_ ULONG TitleIndex,
                  _In_ ULONG Type, _In_reads_bytes_opt_(DataSize) PVOID Data, _In_ ULONG DataSize);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwQueryValueKey(_In_ HANDLE KeyHandle, _In_ PUNICODE_STRING ValueName,
                    _In_ KEY_VALUE_INFORMATION_CLASS KeyValueInformationClass,
                    _Out_writes_bytes_opt_(Length) PVOID KeyValueInformation, _In_ ULONG Length,
                    _Out_ PULONG ResultLength);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwDeleteValueKey(_In_ HANDLE KeyHandle, _In_ PUNICODE_STRING ValueName);
/* KeyBasicInformation, KeyNodeInformation, KeyFullInformation of the Index-th subkey;
 * Index past the last -> STATUS_NO_MORE_ENTRIES. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwEnumerateKey(_In_ HANDLE KeyHandle, _In_ ULONG Index,
                   _In_ KEY_INFORMATION_CLASS KeyInformationClass,
                   _Out_writes_bytes_opt_(Length) PVOID KeyInformation, _In_ ULONG Length,
                   _Out_ PULONG ResultLength);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwEnumerateValueKey(_In_ HANDLE KeyHandle, _In_ ULONG Index,
                        _In_ KEY_VALUE_INFORMATION_CLASS KeyValueInformationClass,
                        _Out_writes_bytes_opt_(Length) PVOID KeyValueInformation, _In_ ULONG Length,
                        _Out_ PULONG ResultLength);
/* KeyBasicInformation, KeyNodeInformation, KeyFullInformation, KeyNameInformation
 * (the full path, \REGISTRY\MACHINE\...) and KeyCachedInformation; other classes ->
 * STATUS_INVALID_PARAMETER. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwQueryKey(_In_ HANDLE KeyHandle, _In_ KEY_INFORMATION_CLASS KeyInformationClass,
               _Out_writes_bytes_opt_(Length) PVOID KeyInformation, _In_ ULONG Length,
               _Out_ PULONG ResultLength);

/* RtlQueryRegistryValues / RtlWriteRegistryValue / RtlDeleteRegistryValue. RelativeTo:
 * RTL_REGISTRY_ABSOLUTE (Path is a \Registry\ name), SERVICES, CONTROL, WINDOWS_NT,
 * DEVICEMAP, USER, or RTL_REGISTRY_HANDLE (Path is a key HANDLE); RTL_REGISTRY_OPTIONAL
 * is accepted. The query table forms: a QueryRoutine called per value (per string of
 * a REG_MULTI_SZ unless RTL_QUERY_REGISTRY_NOEXPAND; REG_EXPAND_SZ has %VAR% expanded
 * from the process environment), every value of the key when Name is NULL;
 * RTL_QUERY_REGISTRY_DIRECT into EntryContext (a UNICODE_STRING for string types - its
 * Buffer is allocated from paged pool when NULL, else the string must fit, else
 * STATUS_BUFFER_TOO_SMALL; a ULONG-or-smaller value is stored at EntryContext; a larger
 * one needs a LONG size first: negative = just the data, positive = length, type,
 * data); RTL_QUERY_REGISTRY_TYPECHECK (type in DefaultType's top byte, mismatch ->
 * STATUS_OBJECT_TYPE_MISMATCH); SUBKEY/TOPKEY; REQUIRED (missing ->
 * STATUS_OBJECT_NAME_NOT_FOUND); defaults (DefaultType != REG_NONE, DefaultLength 0
 * for a string means its length); DELETE (the value is deleted after it is queried).
 * A QueryRoutine failure stops the query and is returned. RtlWriteRegistryValue
 * creates the key if it is missing. */
#define RTL_REGISTRY_ABSOLUTE              0
#define RTL_REGISTRY_SERVICES              1
#define RTL_REGISTRY_CONTROL               2
#define RTL_REGISTRY_WINDOWS_NT            3
#define RTL_REGISTRY_DEVICEMAP             4
#define RTL_REGISTRY_USER                  5
#define RTL_REGISTRY_MAXIMUM               6
#define RTL_REGISTRY_HANDLE                0x40000000
#define RTL_REGISTRY_OPTIONAL              0x80000000
#define RTL_QUERY_REGISTRY_SUBKEY          0x00000001
#define RTL_QUERY_REGISTRY_TOPKEY          0x00000002
#define RTL_QUERY_REGISTRY_REQUIRED        0x00000004
#define RTL_QUERY_REGISTRY_NOVALUE         0x00000008
#define RTL_QUERY_REGISTRY_NOEXPAND        0x00000010
#define RTL_QUERY_REGISTRY_DIRECT          0x00000020
#define RTL_QUERY_REGISTRY_DELETE          0x00000040
#define RTL_QUERY_REGISTRY_NOSTRING        0x00000080
#define RTL_QUERY_REGISTRY_TYPECHECK       0x00000100
#define RTL_QUERY_REGISTRY_TYPECHECK_SHIFT 24
#define RTL_QUERY_REGISTRY_TYPECHECK_MASK  (0xff << RTL_QUERY_REGISTRY_TYPECHECK_SHIFT)
typedef _Function_class_(RTL_QUERY_REGISTRY_ROUTINE)
    _IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    RTL_QUERY_REGISTRY_ROUTINE(_In_z_ PWSTR ValueName, _In_ ULONG ValueType,
                               _In_reads_bytes_opt_(ValueLength) PVOID ValueData,
                               _In_ ULONG ValueLength, _In_opt_ PVOID Context,
                               _In_opt_ PVOID EntryContext);
typedef RTL_QUERY_REGISTRY_ROUTINE *PRTL_QUERY_REGISTRY_ROUTINE;
typedef struct _RTL_QUERY_REGISTRY_TABLE {
    PRTL_QUERY_REGISTRY_ROUTINE QueryRoutine;
    ULONG Flags;
    PWSTR Name;
    PVOID EntryContext;
    ULONG DefaultType;
    PVOID DefaultData;
    ULONG DefaultLength;
} RTL_QUERY_REGISTRY_TABLE, *PRTL_QUERY_REGISTRY_TABLE;
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    RtlQueryRegistryValues(_In_ ULONG RelativeTo, _In_ PCWSTR Path,
                           _Inout_ PRTL_QUERY_REGISTRY_TABLE QueryTable, _In_opt_ PVOID Context,
                           _In_opt_ PVOID Environment);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    RtlWriteRegistryValue(_In_ ULONG RelativeTo, _In_ PCWSTR Path, _In_z_ PCWSTR ValueName,
                          _In_ ULONG ValueType, _In_reads_bytes_opt_(ValueLength) PVOID ValueData,
                          _In_ ULONG ValueLength);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    RtlDeleteRegistryValue(_In_ ULONG RelativeTo, _In_ PCWSTR Path, _In_z_ PCWSTR ValueName);

/* The device's or the driver's registry key. There is no PnP manager, so every
 * device object stands in for its PDO: PLUGPLAY_REGKEY_DEVICE opens (creating it)
 * \Registry\Machine\System\CurrentControlSet\Enum\Root\<driver>\<NNNN>\Device Parameters,
 * PLUGPLAY_REGKEY_DRIVER ...\<NNNN>\Driver, NNNN numbering the driver's device objects
 * in the order they first ask. PLUGPLAY_REGKEY_CURRENT_HWPROFILE is ignored. Another
 * type -> STATUS_INVALID_PARAMETER. */
#define PLUGPLAY_REGKEY_DEVICE            1
#define PLUGPLAY_REGKEY_DRIVER            2
#define PLUGPLAY_REGKEY_CURRENT_HWPROFILE 4
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoOpenDeviceRegistryKey(_In_ PDEVICE_OBJECT DeviceObject, _In_ ULONG DevInstKeyType,
                            _In_ ACCESS_MASK DesiredAccess, _Out_ PHANDLE DeviceRegKey);

/* ---- Registry callbacks. Called, in registration order, around ZwSetValueKey
 * (RegNtPreSetValueKey / RegNtPostSetValueKey), ZwDeleteValueKey (RegNtPre/PostDeleteValueKey),
 * ZwQueryValueKey (RegNtPre/PostQueryValueKey) and ZwDeleteKey (RegNtPre/PostDeleteKey),
 * with Argument2 the REG_*_INFORMATION of the operation (a REG_POST_OPERATION_INFORMATION
 * for the post ones, whose PreInformation points at the pre one), ObjectContext the context
 * the registration attached to the key. A pre-callback's failure status vetoes the
 * operation (no post-notification follows) and is what the caller gets; a post-callback's
 * result, and ReturnStatus changes, are ignored. Other operations (create, open,
 * enumerate, ...) are not reported. CmSetCallbackObjectContext attaches a context to a key
 * object for one registration; RegNtCallbackObjectContextCleanup reports it when the key
 * object goes. CmGetCallbackVersion reports 1.0. */
typedef _Function_class_(EX_CALLBACK_FUNCTION) _IRQL_requires_same_ NTSTATUS NTAPI
    EX_CALLBACK_FUNCTION(_In_ PVOID CallbackContext, _In_opt_ PVOID Argument1,
                         _In_opt_ PVOID Argument2);
typedef EX_CALLBACK_FUNCTION *PEX_CALLBACK_FUNCTION;
typedef enum _REG_NOTIFY_CLASS {
    RegNtDeleteKey,
    RegNtPreDeleteKey = RegNtDeleteKey,
    RegNtSetValueKey,
    RegNtPreSetValueKey = RegNtSetValueKey,
    RegNtDeleteValueKey,
    RegNtPreDeleteValueKey = RegNtDeleteValueKey,
    RegNtSetInformationKey,
    RegNtPreSetInformationKey = RegNtSetInformationKey,
    RegNtRenameKey,
    RegNtPreRenameKey = RegNtRenameKey,
    RegNtEnumerateKey,
    RegNtPreEnumerateKey = RegNtEnumerateKey,
    RegNtEnumerateValueKey,
    RegNtPreEnumerateValueKey = RegNtEnumerateValueKey,
    RegNtQueryKey,
    RegNtPreQueryKey = RegNtQueryKey,
    RegNtQueryValueKey,
    RegNtPreQueryValueKey = RegNtQueryValueKey,
    RegNtQueryMultipleValueKey,
    RegNtPreQueryMultipleValueKey = RegNtQueryMultipleValueKey,
    RegNtPreCreateKey,
    RegNtPostCreateKey,
    RegNtPreOpenKey,
    RegNtPostOpenKey,
    RegNtKeyHandleClose,
    RegNtPreKeyHandleClose = RegNtKeyHandleClose,
    RegNtPostDeleteKey,
    RegNtPostSetValueKey,
    RegNtPostDeleteValueKey,
    RegNtPostSetInformationKey,
    RegNtPostRenameKey,
    RegNtPostEnumerateKey,
    RegNtPostEnumerateValueKey,
    RegNtPostQueryKey,
    RegNtPostQueryValueKey,
    RegNtPostQueryMultipleValueKey,
    RegNtPostKeyHandleClose,
    RegNtPreCreateKeyEx,
    RegNtPostCreateKeyEx,
    RegNtPreOpenKeyEx,
    RegNtPostOpenKeyEx,
    RegNtPreFlushKey,
    RegNtPostFlushKey,
    RegNtPreLoadKey,
    RegNtPostLoadKey,
    RegNtPreUnLoadKey,
    RegNtPostUnLoadKey,
    RegNtPreQueryKeySecurity,
    RegNtPostQueryKeySecurity,
    RegNtPreSetKeySecurity,
    RegNtPostSetKeySecurity,
    RegNtCallbackObjectContextCleanup,
    MaxRegNtNotifyClass
} REG_NOTIFY_CLASS;
typedef struct _REG_DELETE_KEY_INFORMATION {
    PVOID Object;
    PVOID CallContext;
    PVOID ObjectContext;
    PVOID Reserved;
} REG_DELETE_KEY_INFORMATION, *PREG_DELETE_KEY_INFORMATION;
typedef struct _REG_SET_VALUE_KEY_INFORMATION {
    PVOID Object;
    PUNICODE_STRING ValueName;
    ULONG TitleIndex;
    ULONG Type;
    PVOID Data;
    ULONG DataSize;
    PVOID CallContext;
    PVOID ObjectContext;
    PVOID Reserved;
} REG_SET_VALUE_KEY_INFORMATION, *PREG_SET_VALUE_KEY_INFORMATION;
typedef struct _REG_DELETE_VALUE_KEY_INFORMATION {
    PVOID Object;
    PUNICODE_STRING ValueName;
    PVOID CallContext;
    PVOID ObjectContext;
    PVOID Reserved;
} REG_DELETE_VALUE_KEY_INFORMATION, *PREG_DELETE_VALUE_KEY_INFORMATION;
typedef struct _REG_QUERY_VALUE_KEY_INFORMATION {
    PVOID Object;
    PUNICODE_STRING ValueName;
    KEY_VALUE_INFORMATION_CLASS KeyValueInformationClass;
    PVOID KeyValueInformation;
    ULONG Length;
    PULONG ResultLength;
    PVOID CallContext;
    PVOID ObjectContext;
    PVOID Reserved;
} REG_QUERY_VALUE_KEY_INFORMATION, *PREG_QUERY_VALUE_KEY_INFORMATION;
typedef struct _REG_POST_OPERATION_INFORMATION {
    PVOID Object;
    NTSTATUS Status;
    PVOID PreInformation;
    NTSTATUS ReturnStatus;
    PVOID CallContext;
    PVOID ObjectContext;
    PVOID Reserved;
} REG_POST_OPERATION_INFORMATION, *PREG_POST_OPERATION_INFORMATION;
typedef struct _REG_CALLBACK_CONTEXT_CLEANUP_INFORMATION {
    PVOID Object;
    PVOID ObjectContext;
    PVOID Reserved;
} REG_CALLBACK_CONTEXT_CLEANUP_INFORMATION, *PREG_CALLBACK_CONTEXT_CLEANUP_INFORMATION;
/* Altitude must be a non-empty string; Cookie NULL -> STATUS_INVALID_PARAMETER. */
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    CmRegisterCallbackEx(_In_ PEX_CALLBACK_FUNCTION Function, _In_ PCUNICODE_STRING Altitude,
                         _In_ PVOID Driver, _In_opt_ PVOID Context, _Out_ PLARGE_INTEGER Cookie,
                         _Reserved_ PVOID Reserved);
/* An unknown Cookie -> STATUS_INVALID_PARAMETER. */
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI CmUnRegisterCallback(_In_ LARGE_INTEGER Cookie);
VOID NTAPI CmGetCallbackVersion(_Out_opt_ PULONG Major, _Out_opt_ PULONG Minor);
/* ObjectID: a value unique to the key (its node); ObjectName: its full path, which
 * stays valid until the registration goes (Ex: until CmCallbackReleaseKeyObjectIDEx). A
 * key object that is not one -> STATUS_INVALID_PARAMETER. */
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    CmCallbackGetKeyObjectID(_In_ PLARGE_INTEGER Cookie, _In_ PVOID Object,
                             _Out_opt_ PULONG_PTR ObjectID,
                             _Outptr_opt_ PCUNICODE_STRING *ObjectName);
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    CmCallbackGetKeyObjectIDEx(_In_ PLARGE_INTEGER Cookie, _In_ PVOID Object,
                               _Out_opt_ PULONG_PTR ObjectID,
                               _Outptr_opt_ PCUNICODE_STRING *ObjectName, _In_ ULONG Flags);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI
    CmCallbackReleaseKeyObjectIDEx(_In_ PCUNICODE_STRING ObjectName);
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    CmSetCallbackObjectContext(_Inout_ PVOID Object, _In_ PLARGE_INTEGER Cookie,
                               _In_ PVOID NewContext, _Out_opt_ PVOID *OldContext);
/* The transaction object a key was opened or created under (ZwOpenKeyTransacted,
 * ZwCreateKeyTransacted), NULL otherwise. */
_IRQL_requires_max_(APC_LEVEL) PVOID NTAPI
    CmGetBoundTransaction(_In_ PLARGE_INTEGER Cookie, _In_ PVOID Object);

/* ---- Kernel transactions (KTM). Transaction managers, resource managers,
 * transactions and enlistments are objects with handles. A key opened or created
 * under a transaction defers the ZwSetValueKey / ZwDeleteValueKey made through it
 * until ZwCommitTransaction (in their order), and drops them at
 * ZwRollbackTransaction; the key itself is created at once (difference: Windows
 * creates it inside the transaction) and reads through the handle do not see pending
 * changes. Committing or rolling back a finished transaction ->
 * STATUS_TRANSACTION_ALREADY_COMMITTED / STATUS_TRANSACTION_ALREADY_ABORTED; using one
 * for a new key or enlistment -> STATUS_TRANSACTION_NOT_ACTIVE. Wait is ignored (all
 * work is synchronous). Enlistments receive no notifications (there is no
 * ZwGetNotificationResourceManager). */
#define TRANSACTIONMANAGER_ALL_ACCESS (STANDARD_RIGHTS_REQUIRED | 0x3F)
#define RESOURCEMANAGER_ALL_ACCESS    (STANDARD_RIGHTS_REQUIRED | SYNCHRONIZE | 0x7F)
#define TRANSACTION_ALL_ACCESS        (STANDARD_RIGHTS_REQUIRED | SYNCHRONIZE | 0x3F)
#define ENLISTMENT_ALL_ACCESS         (STANDARD_RIGHTS_REQUIRED | 0x1F)
#define TRANSACTION_MANAGER_VOLATILE  0x00000001
#define RESOURCE_MANAGER_VOLATILE     0x00000001
#define TRANSACTION_NOTIFY_MASK       0x3FFFFFFF
#define TRANSACTION_NOTIFY_COMMIT     0x00000004
#define TRANSACTION_NOTIFY_ROLLBACK   0x00000008
typedef ULONG NOTIFICATION_MASK;
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    ZwCreateTransactionManager(_Out_ PHANDLE TmHandle, _In_ ACCESS_MASK DesiredAccess,
                               _In_opt_ POBJECT_ATTRIBUTES ObjectAttributes,
                               _In_opt_ PUNICODE_STRING LogFileName, _In_opt_ ULONG CreateOptions,
                               _In_opt_ ULONG CommitStrength);
/* TmHandle must be a transaction manager handle. */
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    ZwCreateResourceManager(_Out_ PHANDLE ResourceManagerHandle, _In_ ACCESS_MASK DesiredAccess,
                            _In_ HANDLE TmHandle, _In_opt_ LPGUID ResourceManagerGuid,
                            _In_opt_ POBJECT_ATTRIBUTES ObjectAttributes,
                            _In_opt_ ULONG CreateOptions, _In_opt_ PUNICODE_STRING Description);
/* TmHandle may be NULL; Uow, when given, receives the transaction's unit-of-work GUID. */
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    ZwCreateTransaction(_Out_ PHANDLE TransactionHandle, _In_ ACCESS_MASK DesiredAccess,
                        _In_opt_ POBJECT_ATTRIBUTES ObjectAttributes, _In_opt_ LPGUID Uow,
                        _In_opt_ HANDLE TmHandle, _In_opt_ ULONG CreateOptions,
                        _In_opt_ ULONG IsolationLevel, _In_opt_ ULONG IsolationFlags,
                        _In_opt_ PLARGE_INTEGER Timeout, _In_opt_ PUNICODE_STRING Description);
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    ZwCreateEnlistment(_Out_ PHANDLE EnlistmentHandle, _In_ ACCESS_MASK DesiredAccess,
                       _In_ HANDLE ResourceManagerHandle, _In_ HANDLE TransactionHandle,
                       _In_opt_ POBJECT_ATTRIBUTES ObjectAttributes, _In_opt_ ULONG CreateOptions,
                       _In_ NOTIFICATION_MASK NotificationMask, _In_opt_ PVOID EnlistmentKey);
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    ZwCommitTransaction(_In_ HANDLE TransactionHandle, _In_ BOOLEAN Wait);
_IRQL_requires_max_(APC_LEVEL) NTSTATUS NTAPI
    ZwRollbackTransaction(_In_ HANDLE TransactionHandle, _In_ BOOLEAN Wait);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwCreateKeyTransacted(_Out_ PHANDLE KeyHandle, _In_ ACCESS_MASK DesiredAccess,
                          _In_ POBJECT_ATTRIBUTES ObjectAttributes, _Reserved_ ULONG TitleIndex,
                          _In_opt_ PUNICODE_STRING Class, _In_ ULONG CreateOptions,
                          _In_ HANDLE TransactionHandle, _Out_opt_ PULONG Disposition);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwOpenKeyTransacted(_Out_ PHANDLE KeyHandle, _In_ ACCESS_MASK DesiredAccess,
                        _In_ POBJECT_ATTRIBUTES ObjectAttributes, _In_ HANDLE TransactionHandle);

/* ---- Files, over the host file system. A name \??\C:\dir\file (also spelled
 * \DosDevices\C:\..., \GLOBAL??\C:\..., or \SystemRoot\... for C:\Windows\...) maps to
 * $SOFTNDK_FILE_ROOT/c/dir/file: the drive letter becomes a lower-case directory and
 * backslashes become slashes; SOFTNDK_FILE_ROOT defaults to the current directory.
 * Other names (\Device\...) -> STATUS_OBJECT_PATH_NOT_FOUND; ".." components ->
 * STATUS_OBJECT_NAME_INVALID. With RootDirectory a directory's file handle, ObjectName
 * is relative to it. Everything is synchronous: IoStatusBlock is filled before the call
 * returns. The runtime makes no event handles, so a ZwReadFile / ZwWriteFile Event must
 * be NULL (else STATUS_INVALID_HANDLE, or STATUS_OBJECT_TYPE_MISMATCH for a handle to
 * another object); ApcRoutine must be NULL too (no user APCs). A file object
 * keeps a current byte offset, used when ByteOffset is NULL or
 * FILE_USE_FILE_POINTER_POSITION; FILE_WRITE_TO_END_OF_FILE appends. Reading at or past
 * the end -> STATUS_END_OF_FILE. AllocationSize, FileAttributes, ShareAccess and EAs are ignored
 * (the host has no share modes). ObReferenceObjectByHandle on a file handle (type
 * *IoFileObjectType) gives SoftNDK's file object: pass it back to the runtime, do not read
 * FILE_OBJECT fields through it. */
#define FILE_READ_DATA        0x0001
#define FILE_LIST_DIRECTORY   0x0001
#define FILE_WRITE_DATA       0x0002
#define FILE_ADD_FILE         0x0002
#define FILE_APPEND_DATA      0x0004
#define FILE_READ_EA          0x0008
#define FILE_WRITE_EA         0x0010
#define FILE_EXECUTE          0x0020
#define FILE_TRAVERSE         0x0020
#define FILE_READ_ATTRIBUTES  0x0080
#define FILE_WRITE_ATTRIBUTES 0x0100
#define FILE_ALL_ACCESS       (STANDARD_RIGHTS_REQUIRED | SYNCHRONIZE | 0x1FF)
#define FILE_GENERIC_READ \
    (STANDARD_RIGHTS_READ | FILE_READ_DATA | FILE_READ_ATTRIBUTES | FILE_READ_EA | SYNCHRONIZE)
#define FILE_GENERIC_WRITE                                                             \
    (STANDARD_RIGHTS_WRITE | FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_WRITE_EA | \
     FILE_APPEND_DATA | SYNCHRONIZE)
#define FILE_SHARE_READ                0x00000001
#define FILE_SHARE_WRITE               0x00000002
#define FILE_SHARE_DELETE              0x00000004
#define FILE_ATTRIBUTE_READONLY        0x00000001
#define FILE_ATTRIBUTE_HIDDEN          0x00000002
#define FILE_ATTRIBUTE_SYSTEM          0x00000004
#define FILE_ATTRIBUTE_DIRECTORY       0x00000010
#define FILE_ATTRIBUTE_ARCHIVE         0x00000020
#define FILE_ATTRIBUTE_NORMAL          0x00000080
#define FILE_SUPERSEDE                 0x00000000
#define FILE_OPEN                      0x00000001
#define FILE_CREATE                    0x00000002
#define FILE_OPEN_IF                   0x00000003
#define FILE_OVERWRITE                 0x00000004
#define FILE_OVERWRITE_IF              0x00000005
#define FILE_DIRECTORY_FILE            0x00000001
#define FILE_WRITE_THROUGH             0x00000002
#define FILE_SEQUENTIAL_ONLY           0x00000004
#define FILE_NO_INTERMEDIATE_BUFFERING 0x00000008
#define FILE_SYNCHRONOUS_IO_ALERT      0x00000010
#define FILE_SYNCHRONOUS_IO_NONALERT   0x00000020
#define FILE_NON_DIRECTORY_FILE        0x00000040
#define FILE_DELETE_ON_CLOSE           0x00001000
/* IO_STATUS_BLOCK.Information after ZwCreateFile. */
#define FILE_SUPERSEDED                0x00000000
#define FILE_OPENED                    0x00000001
#define FILE_CREATED                   0x00000002
#define FILE_OVERWRITTEN               0x00000003
#define FILE_EXISTS                    0x00000004
#define FILE_DOES_NOT_EXIST            0x00000005
#define FILE_WRITE_TO_END_OF_FILE      0xffffffff
#define FILE_USE_FILE_POINTER_POSITION 0xfffffffe

#ifndef SOFTNDK_FILE_INFORMATION_CLASS_DEFINED
#define SOFTNDK_FILE_INFORMATION_CLASS_DEFINED
typedef enum _FILE_INFORMATION_CLASS {
    FileDirectoryInformation = 1,
    FileFullDirectoryInformation,
    FileBothDirectoryInformation,
    FileBasicInformation,
    FileStandardInformation,
    FileInternalInformation,
    FileEaInformation,
    FileAccessInformation,
    FileNameInformation,
    FileRenameInformation,
    FileLinkInformation,
    FileNamesInformation,
    FileDispositionInformation,
    FilePositionInformation,
    FileFullEaInformation,
    FileModeInformation,
    FileAlignmentInformation,
    FileAllInformation,
    FileAllocationInformation,
    FileEndOfFileInformation,
    FileMaximumInformation = 76
} FILE_INFORMATION_CLASS,
    *PFILE_INFORMATION_CLASS;
typedef struct _FILE_BASIC_INFORMATION {
    LARGE_INTEGER CreationTime;
    LARGE_INTEGER LastAccessTime;
    LARGE_INTEGER LastWriteTime;
    LARGE_INTEGER ChangeTime;
    ULONG FileAttributes;
} FILE_BASIC_INFORMATION, *PFILE_BASIC_INFORMATION;
typedef struct _FILE_STANDARD_INFORMATION {
    LARGE_INTEGER AllocationSize;
    LARGE_INTEGER EndOfFile;
    ULONG NumberOfLinks;
    BOOLEAN DeletePending;
    BOOLEAN Directory;
} FILE_STANDARD_INFORMATION, *PFILE_STANDARD_INFORMATION;
typedef struct _FILE_POSITION_INFORMATION {
    LARGE_INTEGER CurrentByteOffset;
} FILE_POSITION_INFORMATION, *PFILE_POSITION_INFORMATION;
typedef struct _FILE_END_OF_FILE_INFORMATION {
    LARGE_INTEGER EndOfFile;
} FILE_END_OF_FILE_INFORMATION, *PFILE_END_OF_FILE_INFORMATION;
typedef struct _FILE_DISPOSITION_INFORMATION {
    BOOLEAN DeleteFile;
} FILE_DISPOSITION_INFORMATION, *PFILE_DISPOSITION_INFORMATION;
#endif

typedef _Function_class_(IO_APC_ROUTINE) VOID NTAPI
    IO_APC_ROUTINE(_In_ PVOID ApcContext, _In_ PIO_STATUS_BLOCK IoStatusBlock, _In_ ULONG Reserved);
typedef IO_APC_ROUTINE *PIO_APC_ROUTINE;

_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwCreateFile(_Out_ PHANDLE FileHandle, _In_ ACCESS_MASK DesiredAccess,
                 _In_ POBJECT_ATTRIBUTES ObjectAttributes, _Out_ PIO_STATUS_BLOCK IoStatusBlock,
                 _In_opt_ PLARGE_INTEGER AllocationSize, _In_ ULONG FileAttributes,
                 _In_ ULONG ShareAccess, _In_ ULONG CreateDisposition, _In_ ULONG CreateOptions,
                 _In_reads_bytes_opt_(EaLength) PVOID EaBuffer, _In_ ULONG EaLength);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwOpenFile(_Out_ PHANDLE FileHandle, _In_ ACCESS_MASK DesiredAccess,
               _In_ POBJECT_ATTRIBUTES ObjectAttributes, _Out_ PIO_STATUS_BLOCK IoStatusBlock,
               _In_ ULONG ShareAccess, _In_ ULONG OpenOptions);
/* ApcRoutine is not supported (there are no user APCs): non-NULL ->
 * STATUS_INVALID_PARAMETER. Key is ignored. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwReadFile(_In_ HANDLE FileHandle, _In_opt_ HANDLE Event, _In_opt_ PIO_APC_ROUTINE ApcRoutine,
               _In_opt_ PVOID ApcContext, _Out_ PIO_STATUS_BLOCK IoStatusBlock,
               _Out_writes_bytes_(Length) PVOID Buffer, _In_ ULONG Length,
               _In_opt_ PLARGE_INTEGER ByteOffset, _In_opt_ PULONG Key);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwWriteFile(_In_ HANDLE FileHandle, _In_opt_ HANDLE Event, _In_opt_ PIO_APC_ROUTINE ApcRoutine,
                _In_opt_ PVOID ApcContext, _Out_ PIO_STATUS_BLOCK IoStatusBlock,
                _In_reads_bytes_(Length) PVOID Buffer, _In_ ULONG Length,
                _In_opt_ PLARGE_INTEGER ByteOffset, _In_opt_ PULONG Key);
/* FileBasicInformation, FileStandardInformation, FilePositionInformation; a Length
 * below the class's structure -> STATUS_INFO_LENGTH_MISMATCH, another class ->
 * STATUS_INVALID_INFO_CLASS. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwQueryInformationFile(_In_ HANDLE FileHandle, _Out_ PIO_STATUS_BLOCK IoStatusBlock,
                           _Out_writes_bytes_(Length) PVOID FileInformation, _In_ ULONG Length,
                           _In_ FILE_INFORMATION_CLASS FileInformationClass);
/* FilePositionInformation, FileEndOfFileInformation (truncates or extends),
 * FileDispositionInformation (delete when the last handle closes); as above otherwise. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ZwSetInformationFile(_In_ HANDLE FileHandle, _Out_ PIO_STATUS_BLOCK IoStatusBlock,
                         _In_reads_bytes_(Length) PVOID FileInformation, _In_ ULONG Length,
                         _In_ FILE_INFORMATION_CLASS FileInformationClass);

/* ---- Callback objects (\Callback\Name). ExCreateCallback opens the named object, or
 * with Create creates it (AllowMultipleCallbacks as given); a missing one without
 * Create -> STATUS_OBJECT_NAME_NOT_FOUND. The caller owns one reference
 * (ObDereferenceObject). \Callback\SetSystemTime, \Callback\PowerState and
 * \Callback\ProcessorAdd exist from the start (nothing in user mode notifies them).
 * ExRegisterCallback returns NULL when the object allows one callback and has one.
 * ExNotifyCallback calls the registered functions in order, on the caller's thread. */
typedef struct _CALLBACK_OBJECT *PCALLBACK_OBJECT;
typedef _IRQL_requires_same_ _Function_class_(CALLBACK_FUNCTION) VOID NTAPI
    CALLBACK_FUNCTION(_In_opt_ PVOID CallbackContext, _In_opt_ PVOID Argument1,
                      _In_opt_ PVOID Argument2);
typedef CALLBACK_FUNCTION *PCALLBACK_FUNCTION;
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    ExCreateCallback(_Outptr_ PCALLBACK_OBJECT *CallbackObject,
                     _In_ POBJECT_ATTRIBUTES ObjectAttributes, _In_ BOOLEAN Create,
                     _In_ BOOLEAN AllowMultipleCallbacks);
_IRQL_requires_max_(APC_LEVEL) PVOID NTAPI
    ExRegisterCallback(_Inout_ PCALLBACK_OBJECT CallbackObject,
                       _In_ PCALLBACK_FUNCTION CallbackFunction, _In_opt_ PVOID CallbackContext);
_IRQL_requires_max_(APC_LEVEL) VOID NTAPI ExUnregisterCallback(_Inout_ PVOID CbRegistration);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    ExNotifyCallback(_In_ PVOID CallbackObject, _In_opt_ PVOID Argument1, _In_opt_ PVOID Argument2);

/* ---- Driver runtime and reinitialization. ExInitializeDriverRuntime(DrvRtPoolNxOptIn)
 * makes ExDefaultNonPagedPoolType NonPagedPoolNx (all pools are the C heap either
 * way). Reinitialization routines are called by the driver runner after DriverEntry
 * succeeds, boot-driver ones first, each with Count 1 (a routine that registers again
 * is called again with Count + 1), on the runner's thread at PASSIVE_LEVEL. */
#define DrvRtPoolNxOptIn 0x00000001
extern POOL_TYPE ExDefaultNonPagedPoolType;
extern ULONG ExDefaultMdlProtection;
VOID NTAPI ExInitializeDriverRuntime(_In_ ULONG RuntimeFlags);
typedef _Function_class_(DRIVER_REINITIALIZE) _IRQL_requires_(PASSIVE_LEVEL) VOID
    DRIVER_REINITIALIZE(_In_ struct _DRIVER_OBJECT *DriverObject, _In_opt_ PVOID Context,
                        _In_ ULONG Count);
typedef DRIVER_REINITIALIZE *PDRIVER_REINITIALIZE;
_IRQL_requires_max_(PASSIVE_LEVEL) VOID NTAPI
    IoRegisterDriverReinitialization(_In_ PDRIVER_OBJECT DriverObject,
                                     _In_ PDRIVER_REINITIALIZE DriverReinitializationRoutine,
                                     _In_opt_ PVOID Context);
_IRQL_requires_max_(PASSIVE_LEVEL) VOID NTAPI
    IoRegisterBootDriverReinitialization(_In_ PDRIVER_OBJECT DriverObject,
                                         _In_ PDRIVER_REINITIALIZE DriverReinitializationRoutine,
                                         _In_opt_ PVOID Context);

/* ---- Power. SoftNDK has no power manager: the system stays in S0 and no power IRP is
 * sent by anyone but drivers. PoCallDriver is IoCallDriver; PoStartNextPowerIrp does
 * nothing (as on Windows Vista and later); PoSetPowerState records a device's state and
 * returns the previous one (D0 / S0 at first); PoQueryWatchdogTime is FALSE (no power
 * IRP is ever outstanding with the power manager). PoRegisterPowerSettingCallback calls
 * the callback once, during registration, with the current value of the settings
 * SoftNDK knows (GUID_ACDC_POWER_SOURCE = PoAc (0), GUID_CONSOLE_DISPLAY_STATE = on (1),
 * GUID_SYSTEM_AWAYMODE = 0, GUID_LIDSWITCH_STATE_CHANGE = open (1), each a ULONG); other
 * settings are registered and never reported. */
#ifndef SOFTNDK_POWER_TYPES_DEFINED
#define SOFTNDK_POWER_TYPES_DEFINED
typedef enum _SYSTEM_POWER_STATE {
    PowerSystemUnspecified = 0,
    PowerSystemWorking = 1,
    PowerSystemSleeping1 = 2,
    PowerSystemSleeping2 = 3,
    PowerSystemSleeping3 = 4,
    PowerSystemHibernate = 5,
    PowerSystemShutdown = 6,
    PowerSystemMaximum = 7
} SYSTEM_POWER_STATE,
    *PSYSTEM_POWER_STATE;
typedef enum _DEVICE_POWER_STATE {
    PowerDeviceUnspecified = 0,
    PowerDeviceD0,
    PowerDeviceD1,
    PowerDeviceD2,
    PowerDeviceD3,
    PowerDeviceMaximum
} DEVICE_POWER_STATE,
    *PDEVICE_POWER_STATE;
typedef union _POWER_STATE {
    SYSTEM_POWER_STATE SystemState;
    DEVICE_POWER_STATE DeviceState;
} POWER_STATE, *PPOWER_STATE;
typedef enum _POWER_STATE_TYPE {
    SystemPowerState = 0,
    DevicePowerState
} POWER_STATE_TYPE,
    *PPOWER_STATE_TYPE;
#endif
_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS NTAPI
    PoCallDriver(_In_ PDEVICE_OBJECT DeviceObject, _Inout_ PIRP Irp);
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI PoStartNextPowerIrp(_Inout_ PIRP Irp);
_IRQL_requires_max_(DISPATCH_LEVEL) POWER_STATE NTAPI
    PoSetPowerState(_In_ PDEVICE_OBJECT DeviceObject, _In_ POWER_STATE_TYPE Type,
                    _In_ POWER_STATE State);
_IRQL_requires_max_(DISPATCH_LEVEL) BOOLEAN NTAPI
    PoQueryWatchdogTime(_In_ PDEVICE_OBJECT Pdo, _Out_ PULONG SecondsRemaining);
typedef _Function_class_(POWER_SETTING_CALLBACK) _IRQL_requires_same_ NTSTATUS NTAPI
    POWER_SETTING_CALLBACK(_In_ LPCGUID SettingGuid, _In_reads_bytes_(ValueLength) PVOID Value,
                           _In_ ULONG ValueLength, _Inout_opt_ PVOID Context);
typedef POWER_SETTING_CALLBACK *PPOWER_SETTING_CALLBACK;
/* SettingGuid or Callback NULL -> STATUS_INVALID_PARAMETER. Handle may be NULL (the
 * registration then lasts as long as the process). */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    PoRegisterPowerSettingCallback(_In_opt_ PDEVICE_OBJECT DeviceObject, _In_ LPCGUID SettingGuid,
                                   _In_ PPOWER_SETTING_CALLBACK Callback, _In_opt_ PVOID Context,
                                   _Outptr_opt_ PVOID *Handle);
/* An unknown Handle -> STATUS_INVALID_PARAMETER. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    PoUnregisterPowerSettingCallback(_Inout_ PVOID Handle);
DEFINE_GUID(GUID_ACDC_POWER_SOURCE, 0x5D3E9A59, 0xE9D5, 0x4B00, 0xA6, 0xBD, 0xFF, 0x34, 0xFF, 0x51,
            0x65, 0x48);
DEFINE_GUID(GUID_CONSOLE_DISPLAY_STATE, 0x6FE69556, 0x704A, 0x47A0, 0x8F, 0x24, 0xC2, 0x8D, 0x93,
            0x6F, 0xDA, 0x47);
DEFINE_GUID(GUID_SYSTEM_AWAYMODE, 0x98A7F580, 0x01F7, 0x48AA, 0x9C, 0x0F, 0x44, 0x35, 0x2C, 0x29,
            0xE5, 0xC0);
DEFINE_GUID(GUID_LIDSWITCH_STATE_CHANGE, 0xBA3E0F4D, 0xB817, 0x4094, 0xA2, 0xD1, 0xD5, 0x63, 0x79,
            0xE6, 0xA0, 0xF3);

/* ---- Plug and Play. There is no PnP manager and no bus: every device object stands
 * in for its PDO. IoRegisterDeviceInterface names an interface
 * \??\ROOT#SOFTNDK#NNNN#{class-guid}[\ReferenceString] (NNNN per device object) and
 * returns the name in a pool-allocated SymbolicLinkName (RtlFreeUnicodeString frees
 * it); registering the same device, class and reference again returns the same name.
 * IoSetDeviceInterfaceState enables or disables it (enabling an enabled one ->
 * STATUS_OBJECT_NAME_EXISTS, disabling a disabled one -> STATUS_OBJECT_NAME_NOT_FOUND,
 * an unknown name -> STATUS_OBJECT_NAME_NOT_FOUND) and calls the
 * EventCategoryDeviceInterfaceChange registrations of that class with
 * GUID_DEVICE_INTERFACE_ARRIVAL / _REMOVAL, synchronously. With
 * PNPNOTIFY_DEVICE_INTERFACE_INCLUDE_EXISTING_INTERFACES a new registration is told of
 * the enabled interfaces at once. IoReportTargetDeviceChangeAsynchronous passes a custom
 * notification (Version 1, Size >= the structure, not a GUID_TARGET_DEVICE_* event, else
 * STATUS_INVALID_DEVICE_REQUEST) to every EventCategoryTargetDeviceChange registration
 * on a system worker thread, then calls Callback, and returns STATUS_PENDING.
 * IoInvalidateDeviceRelations does nothing (no PnP manager to query the relations).
 * IoGetDeviceProperty / IoGetDevicePropertyData return STATUS_INVALID_DEVICE_REQUEST:
 * there is no device node to hold the properties. */
typedef enum _DEVICE_RELATION_TYPE {
    BusRelations,
    EjectionRelations,
    PowerRelations,
    RemovalRelations,
    TargetDeviceRelation,
    SingleBusRelations,
    TransportRelations
} DEVICE_RELATION_TYPE,
    *PDEVICE_RELATION_TYPE;
_IRQL_requires_max_(DISPATCH_LEVEL) VOID NTAPI
    IoInvalidateDeviceRelations(_In_ PDEVICE_OBJECT DeviceObject, _In_ DEVICE_RELATION_TYPE Type);
typedef enum {
    DevicePropertyDeviceDescription = 0x0,
    DevicePropertyHardwareID = 0x1,
    DevicePropertyCompatibleIDs = 0x2,
    DevicePropertyBootConfiguration = 0x3,
    DevicePropertyBootConfigurationTranslated = 0x4,
    DevicePropertyClassName = 0x5,
    DevicePropertyClassGuid = 0x6,
    DevicePropertyDriverKeyName = 0x7,
    DevicePropertyManufacturer = 0x8,
    DevicePropertyFriendlyName = 0x9,
    DevicePropertyLocationInformation = 0xa,
    DevicePropertyPhysicalDeviceObjectName = 0xb,
    DevicePropertyBusTypeGuid = 0xc,
    DevicePropertyLegacyBusType = 0xd,
    DevicePropertyBusNumber = 0xe,
    DevicePropertyEnumeratorName = 0xf,
    DevicePropertyAddress = 0x10,
    DevicePropertyUINumber = 0x11,
    DevicePropertyInstallState = 0x12,
    DevicePropertyRemovalPolicy = 0x13,
    DevicePropertyResourceRequirements = 0x14,
    DevicePropertyAllocatedResources = 0x15,
    DevicePropertyContainerID = 0x16
} DEVICE_REGISTRY_PROPERTY;
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoGetDeviceProperty(_In_ PDEVICE_OBJECT DeviceObject,
                        _In_ DEVICE_REGISTRY_PROPERTY DeviceProperty, _In_ ULONG BufferLength,
                        _Out_writes_bytes_opt_(BufferLength) PVOID PropertyBuffer,
                        _Out_ PULONG ResultLength);
typedef GUID DEVPROPGUID, *PDEVPROPGUID;
typedef ULONG DEVPROPID, *PDEVPROPID;
typedef ULONG DEVPROPTYPE, *PDEVPROPTYPE;
typedef ULONG LCID;
typedef struct _DEVPROPKEY {
    DEVPROPGUID fmtid;
    DEVPROPID pid;
} DEVPROPKEY, *PDEVPROPKEY;
typedef const DEVPROPKEY *PCDEVPROPKEY;
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoGetDevicePropertyData(_In_ PDEVICE_OBJECT Pdo, _In_ CONST DEVPROPKEY *PropertyKey,
                            _In_ LCID Lcid, _Reserved_ ULONG Flags, _In_ ULONG Size,
                            _Out_writes_bytes_to_(Size, *RequiredSize) PVOID Data,
                            _Out_ PULONG RequiredSize, _Out_ PDEVPROPTYPE Type);

typedef enum _IO_NOTIFICATION_EVENT_CATEGORY {
    EventCategoryReserved,
    EventCategoryHardwareProfileChange,
    EventCategoryDeviceInterfaceChange,
    EventCategoryTargetDeviceChange,
    EventCategoryKernelSoftRestart
} IO_NOTIFICATION_EVENT_CATEGORY;
#define PNPNOTIFY_DEVICE_INTERFACE_INCLUDE_EXISTING_INTERFACES 0x00000001
typedef _Function_class_(DRIVER_NOTIFICATION_CALLBACK_ROUTINE)
    _IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    DRIVER_NOTIFICATION_CALLBACK_ROUTINE(_In_ PVOID NotificationStructure,
                                         _Inout_opt_ PVOID Context);
typedef DRIVER_NOTIFICATION_CALLBACK_ROUTINE *PDRIVER_NOTIFICATION_CALLBACK_ROUTINE;
typedef struct _DEVICE_INTERFACE_CHANGE_NOTIFICATION {
    USHORT Version;
    USHORT Size;
    GUID Event;
    GUID InterfaceClassGuid;
    PUNICODE_STRING SymbolicLinkName;
} DEVICE_INTERFACE_CHANGE_NOTIFICATION, *PDEVICE_INTERFACE_CHANGE_NOTIFICATION;
typedef struct _TARGET_DEVICE_CUSTOM_NOTIFICATION {
    USHORT Version;
    USHORT Size;
    GUID Event;
    struct _FILE_OBJECT *FileObject;
    LONG NameBufferOffset;
    UCHAR CustomDataBuffer[1];
} TARGET_DEVICE_CUSTOM_NOTIFICATION, *PTARGET_DEVICE_CUSTOM_NOTIFICATION;
typedef _Function_class_(DEVICE_CHANGE_COMPLETE_CALLBACK)
    _IRQL_requires_max_(PASSIVE_LEVEL) VOID NTAPI
    DEVICE_CHANGE_COMPLETE_CALLBACK(_Inout_opt_ PVOID Context);
typedef DEVICE_CHANGE_COMPLETE_CALLBACK *PDEVICE_CHANGE_COMPLETE_CALLBACK;
DEFINE_GUID(GUID_DEVICE_INTERFACE_ARRIVAL, 0xcb3a4004L, 0x46f0, 0x11d0, 0xb0, 0x8f, 0x00, 0x60,
            0x97, 0x13, 0x05, 0x3f);
DEFINE_GUID(GUID_DEVICE_INTERFACE_REMOVAL, 0xcb3a4005L, 0x46f0, 0x11d0, 0xb0, 0x8f, 0x00, 0x60,
            0x97, 0x13, 0x05, 0x3f);
DEFINE_GUID(GUID_TARGET_DEVICE_QUERY_REMOVE, 0xcb3a4006L, 0x46f0, 0x11d0, 0xb0, 0x8f, 0x00, 0x60,
            0x97, 0x13, 0x05, 0x3f);
DEFINE_GUID(GUID_TARGET_DEVICE_REMOVE_CANCELLED, 0xcb3a4007L, 0x46f0, 0x11d0, 0xb0, 0x8f, 0x00,
            0x60, 0x97, 0x13, 0x05, 0x3f);
DEFINE_GUID(GUID_TARGET_DEVICE_REMOVE_COMPLETE, 0xcb3a4008L, 0x46f0, 0x11d0, 0xb0, 0x8f, 0x00, 0x60,
            0x97, 0x13, 0x05, 0x3f);
/* EventCategoryData: the interface class GUID (DeviceInterfaceChange) or a file object
 * (TargetDeviceChange, not examined). NotificationEntry NULL -> STATUS_INVALID_PARAMETER;
 * EventCategoryHardwareProfileChange / KernelSoftRestart register and are never called. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoRegisterPlugPlayNotification(_In_ IO_NOTIFICATION_EVENT_CATEGORY EventCategory,
                                   _In_ ULONG EventCategoryFlags, _In_opt_ PVOID EventCategoryData,
                                   _In_ PDRIVER_OBJECT DriverObject,
                                   _In_ PDRIVER_NOTIFICATION_CALLBACK_ROUTINE CallbackRoutine,
                                   _Inout_opt_ __drv_aliasesMem PVOID Context,
                                   _Outptr_ PVOID *NotificationEntry);
/* Waits for a notification that is running to return; an unknown entry ->
 * STATUS_INVALID_PARAMETER. */
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoUnregisterPlugPlayNotification(_In_ __drv_freesMem(Pool) PVOID NotificationEntry);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoRegisterDeviceInterface(_In_ PDEVICE_OBJECT PhysicalDeviceObject,
                              _In_ CONST GUID *InterfaceClassGuid,
                              _In_opt_ PUNICODE_STRING ReferenceString,
                              _Out_ __drv_at(SymbolicLinkName->Buffer, __drv_allocatesMem(Mem))
                                  PUNICODE_STRING SymbolicLinkName);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoSetDeviceInterfaceState(_In_ PUNICODE_STRING SymbolicLinkName, _In_ BOOLEAN Enable);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoReportTargetDeviceChangeAsynchronous(_In_ PDEVICE_OBJECT PhysicalDeviceObject,
                                           _In_ PVOID NotificationStructure,
                                           _In_opt_ PDEVICE_CHANGE_COMPLETE_CALLBACK Callback,
                                           _In_opt_ PVOID Context);

/* ---- WMI, in process. There is no WMI service and no consumer outside the process,
 * so IRP_MN_REGINFO and the other WMI IRPs are never sent. IoWMIRegistrationControl
 * records a device's registration (WMIREG_ACTION_REGISTER twice ->
 * STATUS_OBJECT_NAME_COLLISION; DEREGISTER, REREGISTER, UPDATE_GUIDS of an unregistered
 * device -> STATUS_INVALID_PARAMETER). IoWMIOpenBlock opens a data block object for any
 * GUID (the caller dereferences it); IoWMISetNotificationCallback sets (NULL: clears)
 * its event callback. IoWMIWriteEvent delivers the WNODE_EVENT_ITEM, synchronously, to
 * the callbacks of the blocks open on WnodeHeader.Guid, logs it at trace level, and
 * frees it (ExFreePool) as WMI does on success; an event larger than 64 KiB is not
 * delivered, returns STATUS_BUFFER_OVERFLOW and stays with the caller.
 * IoWMIDeviceObjectToProviderId is the low 32 bits of the pointer, as on x64 Windows. */
#define WMIREG_ACTION_REGISTER           1
#define WMIREG_ACTION_DEREGISTER         2
#define WMIREG_ACTION_REREGISTER         3
#define WMIREG_ACTION_UPDATE_GUIDS       4
#define WMIREG_ACTION_BLOCK_IRPS         5
#define WMIGUID_QUERY                    0x0001
#define WMIGUID_SET                      0x0002
#define WMIGUID_NOTIFICATION             0x0004
#define WMIGUID_READ_DESCRIPTION         0x0008
#define WMIGUID_EXECUTE                  0x0010
#define WMIGUID_ALL_ACCESS               (STANDARD_RIGHTS_READ | SYNCHRONIZE | 0xFFF)
#define WNODE_FLAG_ALL_DATA              0x00000001
#define WNODE_FLAG_SINGLE_INSTANCE       0x00000002
#define WNODE_FLAG_EVENT_ITEM            0x00000008
#define WNODE_FLAG_STATIC_INSTANCE_NAMES 0x00000040
typedef struct _WNODE_HEADER {
    ULONG BufferSize;
    ULONG ProviderId;
    union {
        ULONG64 HistoricalContext;
        struct {
            ULONG Version;
            ULONG Linkage;
        } DUMMYSTRUCTNAME;
    } DUMMYUNIONNAME;
    union {
        ULONG CountLost;
        HANDLE KernelHandle;
        LARGE_INTEGER TimeStamp;
    } DUMMYUNIONNAME2;
    GUID Guid;
    ULONG ClientContext;
    ULONG Flags;
} WNODE_HEADER, *PWNODE_HEADER;
typedef struct tagWNODE_EVENT_ITEM {
    struct _WNODE_HEADER WnodeHeader;
} WNODE_EVENT_ITEM, *PWNODE_EVENT_ITEM;
typedef _Function_class_(WMI_NOTIFICATION_CALLBACK) _IRQL_requires_same_ VOID NTAPI
    WMI_NOTIFICATION_CALLBACK(PVOID Wnode, PVOID Context);
typedef WMI_NOTIFICATION_CALLBACK *WMI_NOTIFICATION_CALLBACK_POINTER;
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoWMIRegistrationControl(_In_ PDEVICE_OBJECT DeviceObject, _In_ ULONG Action);
_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS NTAPI IoWMIWriteEvent(_Inout_ PVOID WnodeEventItem);
ULONG NTAPI IoWMIDeviceObjectToProviderId(_In_ PDEVICE_OBJECT DeviceObject);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoWMIOpenBlock(_In_ LPCGUID Guid, _In_ ULONG DesiredAccess, _Out_ PVOID *DataBlockObject);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoWMISetNotificationCallback(_Inout_ PVOID Object,
                                 _In_opt_ WMI_NOTIFICATION_CALLBACK_POINTER Callback,
                                 _In_opt_ PVOID Context);

/* ---- ETW (evntprov.h). EtwRegister returns a registration handle; there are no trace
 * sessions, except that while the "wdk" logger is at trace level every provider counts
 * as enabled at every level and keyword: EnableCallback is then called during
 * EtwRegister with EVENT_CONTROL_CODE_ENABLE_PROVIDER, TRACE_LEVEL_VERBOSE and all
 * keywords. EtwWrite logs the event (provider, id, version, level, opcode, task,
 * keyword, and each user data item in hex, at most 64 bytes each) on the "wdk" logger
 * at trace level. An unknown RegHandle -> STATUS_INVALID_HANDLE. */
typedef ULONGLONG REGHANDLE, *PREGHANDLE;
typedef struct _EVENT_DESCRIPTOR {
    USHORT Id;
    UCHAR Version;
    UCHAR Channel;
    UCHAR Level;
    UCHAR Opcode;
    USHORT Task;
    ULONGLONG Keyword;
} EVENT_DESCRIPTOR, *PEVENT_DESCRIPTOR;
typedef const EVENT_DESCRIPTOR *PCEVENT_DESCRIPTOR;
typedef struct _EVENT_DATA_DESCRIPTOR {
    ULONGLONG Ptr;
    ULONG Size;
    union {
        ULONG Reserved;
        struct {
            UCHAR Type;
            UCHAR Reserved1;
            USHORT Reserved2;
        } DUMMYSTRUCTNAME;
    } DUMMYUNIONNAME;
} EVENT_DATA_DESCRIPTOR, *PEVENT_DATA_DESCRIPTOR;
typedef struct _EVENT_FILTER_DESCRIPTOR {
    ULONGLONG Ptr;
    ULONG Size;
    ULONG Type;
} EVENT_FILTER_DESCRIPTOR, *PEVENT_FILTER_DESCRIPTOR;
#define EVENT_CONTROL_CODE_DISABLE_PROVIDER 0
#define EVENT_CONTROL_CODE_ENABLE_PROVIDER  1
#define EVENT_CONTROL_CODE_CAPTURE_STATE    2
typedef _IRQL_requires_same_ VOID NTAPI
ETWENABLECALLBACK(_In_ LPCGUID SourceId, _In_ ULONG ControlCode, _In_ UCHAR Level,
                  _In_ ULONGLONG MatchAnyKeyword, _In_ ULONGLONG MatchAllKeyword,
                  _In_opt_ PEVENT_FILTER_DESCRIPTOR FilterData, _Inout_opt_ PVOID CallbackContext);
typedef ETWENABLECALLBACK *PETWENABLECALLBACK;
#define EventDataDescCreate(EventDataDescriptor, DataPtr, DataSize) \
    ((EventDataDescriptor)->Ptr = (ULONGLONG)(ULONG_PTR)(DataPtr),  \
     (EventDataDescriptor)->Size = (ULONG)(DataSize), (EventDataDescriptor)->Reserved = 0)
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    EtwRegister(_In_ LPCGUID ProviderId, _In_opt_ PETWENABLECALLBACK EnableCallback,
                _In_opt_ PVOID CallbackContext, _Out_ PREGHANDLE RegHandle);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI EtwUnregister(_In_ REGHANDLE RegHandle);
_IRQL_requires_max_(HIGH_LEVEL) NTSTATUS NTAPI
    EtwWrite(_In_ REGHANDLE RegHandle, _In_ PCEVENT_DESCRIPTOR EventDescriptor,
             _In_opt_ LPCGUID ActivityId, _In_ ULONG UserDataCount,
             _In_reads_opt_(UserDataCount) PEVENT_DATA_DESCRIPTOR UserData);

/* ---- Versions. SoftNDK claims Windows Server 2022: 10.0.20348, VER_NT_SERVER, no
 * service pack, NTDDI_WIN10_FE. RtlGetVersion fills a RTL_OSVERSIONINFOW or
 * RTL_OSVERSIONINFOEXW by dwOSVersionInfoSize (another size -> STATUS_INVALID_PARAMETER).
 * RtlVerifyVersionInfo compares as Windows does (major, minor, build, service pack
 * major/minor, product type, by the conditions of ConditionMask built with
 * VER_SET_CONDITION): STATUS_SUCCESS, STATUS_REVISION_MISMATCH, or
 * STATUS_INVALID_PARAMETER for TypeMask 0 or a type without a condition. */
typedef struct _OSVERSIONINFOW {
    ULONG dwOSVersionInfoSize;
    ULONG dwMajorVersion;
    ULONG dwMinorVersion;
    ULONG dwBuildNumber;
    ULONG dwPlatformId;
    WCHAR szCSDVersion[128];
} OSVERSIONINFOW, *POSVERSIONINFOW, *LPOSVERSIONINFOW, RTL_OSVERSIONINFOW, *PRTL_OSVERSIONINFOW;
typedef struct _OSVERSIONINFOEXW {
    ULONG dwOSVersionInfoSize;
    ULONG dwMajorVersion;
    ULONG dwMinorVersion;
    ULONG dwBuildNumber;
    ULONG dwPlatformId;
    WCHAR szCSDVersion[128];
    USHORT wServicePackMajor;
    USHORT wServicePackMinor;
    USHORT wSuiteMask;
    UCHAR wProductType;
    UCHAR wReserved;
} OSVERSIONINFOEXW, *POSVERSIONINFOEXW, *LPOSVERSIONINFOEXW, RTL_OSVERSIONINFOEXW,
    *PRTL_OSVERSIONINFOEXW;
#define VER_PLATFORM_WIN32_NT           2
#define VER_NT_WORKSTATION              0x0000001
#define VER_NT_DOMAIN_CONTROLLER        0x0000002
#define VER_NT_SERVER                   0x0000003
#define VER_MINORVERSION                0x0000001
#define VER_MAJORVERSION                0x0000002
#define VER_BUILDNUMBER                 0x0000004
#define VER_PLATFORMID                  0x0000008
#define VER_SERVICEPACKMINOR            0x0000010
#define VER_SERVICEPACKMAJOR            0x0000020
#define VER_SUITENAME                   0x0000040
#define VER_PRODUCT_TYPE                0x0000080
#define VER_EQUAL                       1
#define VER_GREATER                     2
#define VER_GREATER_EQUAL               3
#define VER_LESS                        4
#define VER_LESS_EQUAL                  5
#define VER_AND                         6
#define VER_OR                          7
#define VER_CONDITION_MASK              7
#define VER_NUM_BITS_PER_CONDITION_MASK 3
ULONGLONG NTAPI VerSetConditionMask(_In_ ULONGLONG ConditionMask, _In_ ULONG TypeMask,
                                    _In_ UCHAR Condition);
#define VER_SET_CONDITION(_m_, _t_, _c_) ((_m_) = VerSetConditionMask((_m_), (_t_), (_c_)))
NTSTATUS NTAPI RtlGetVersion(_Out_ PRTL_OSVERSIONINFOW lpVersionInformation);
NTSTATUS NTAPI RtlVerifyVersionInfo(_In_ PRTL_OSVERSIONINFOEXW VersionInfo, _In_ ULONG TypeMask,
                                    _In_ ULONGLONG ConditionMask);
/* sdkddkver.h values (each only if not defined already). */
#ifndef NTDDI_WIN7
#define NTDDI_WIN7 0x06010000
#endif
#ifndef NTDDI_WIN8
#define NTDDI_WIN8 0x06020000
#endif
#ifndef NTDDI_WINBLUE
#define NTDDI_WINBLUE 0x06030000
#endif
#ifndef NTDDI_WIN10
#define NTDDI_WIN10 0x0A000000
#endif
#ifndef NTDDI_WIN10_RS1
#define NTDDI_WIN10_RS1 0x0A000002
#endif
#ifndef NTDDI_WIN10_RS5
#define NTDDI_WIN10_RS5 0x0A000006
#endif
#ifndef NTDDI_WIN10_VB
#define NTDDI_WIN10_VB 0x0A000008
#endif
#ifndef NTDDI_WIN10_FE
#define NTDDI_WIN10_FE 0x0A00000A
#endif
#ifndef NTDDI_WIN10_CO
#define NTDDI_WIN10_CO 0x0A00000B
#endif
/* TRUE for every NTDDI version up to NTDDI_WIN10_FE. */
BOOLEAN NTAPI RtlIsNtDdiVersionAvailable(_In_ ULONG Version);

/* ---- GUIDs and UUIDs. ExUuidCreate makes a random (version 4, RFC 4122 variant)
 * UUID from getrandom(). RtlGUIDFromString parses "{xxxxxxxx-xxxx-xxxx-xxxx-
 * xxxxxxxxxxxx}" (hex digits either case, braces required) and returns
 * STATUS_INVALID_PARAMETER for anything else. */
typedef GUID UUID;
NTSTATUS NTAPI ExUuidCreate(_Out_ UUID *Uuid);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    RtlGUIDFromString(_In_ PCUNICODE_STRING GuidString, _Out_ GUID *Guid);

/* ---- Security identifiers. */
typedef struct _SID_IDENTIFIER_AUTHORITY {
    UCHAR Value[6];
} SID_IDENTIFIER_AUTHORITY, *PSID_IDENTIFIER_AUTHORITY;
typedef struct _SID {
    UCHAR Revision;
    UCHAR SubAuthorityCount;
    SID_IDENTIFIER_AUTHORITY IdentifierAuthority;
    ULONG SubAuthority[1];
} SID, *PISID;
typedef PVOID PSID;
#define SID_REVISION                    1
#define SID_MAX_SUB_AUTHORITIES         15
#define SID_RECOMMENDED_SUB_AUTHORITIES 1
#define SECURITY_MAX_SID_SIZE \
    (sizeof(SID) - sizeof(ULONG) + (SID_MAX_SUB_AUTHORITIES * sizeof(ULONG)))
#define SECURITY_NT_AUTHORITY \
    { 0, 0, 0, 0, 0, 5 }
#define SECURITY_LOCAL_SYSTEM_RID   0x00000012L
#define SECURITY_BUILTIN_DOMAIN_RID 0x00000020L
#define DOMAIN_ALIAS_RID_ADMINS     0x00000220L
/* Revision SID_REVISION and at most SID_MAX_SUB_AUTHORITIES sub-authorities; NULL is
 * not valid. */
BOOLEAN NTAPI RtlValidSid(_In_ PSID Sid);
/* 8 + 4 * SubAuthorityCount; the SID must be valid. */
ULONG NTAPI RtlLengthSid(_In_ PSID Sid);
/* DestinationSidLength below RtlLengthSid(SourceSid) -> STATUS_BUFFER_TOO_SMALL. */
NTSTATUS NTAPI RtlCopySid(_In_ ULONG DestinationSidLength,
                          _Out_writes_bytes_(DestinationSidLength) PSID DestinationSid,
                          _In_ PSID SourceSid);

/* ---- System routines by name: a function the program exports (SoftNDK's runtime, or
 * the driver itself; the runtime's targets link with --export-dynamic) found with
 * dlsym; NULL for a name nothing in the program defines (C library functions are not
 * system routines and give NULL too). */
_IRQL_requires_max_(PASSIVE_LEVEL) PVOID NTAPI
    MmGetSystemRoutineAddress(_In_ PUNICODE_STRING SystemRoutineName);

/* ---- Hardware configuration and disks. There are no disks, floppies, CD-ROMs, tapes,
 * SCSI ports, serial or parallel ports: IoGetConfigurationInformation's counts are all
 * 0. HalExamineMBR sets *Buffer to NULL (no MBR of that type); IoReadDiskSignature and
 * IoReadPartitionTableEx return STATUS_INVALID_DEVICE_REQUEST (nothing to read). */
typedef struct _CONFIGURATION_INFORMATION {
    ULONG DiskCount;
    ULONG FloppyCount;
    ULONG CdRomCount;
    ULONG TapeCount;
    ULONG ScsiPortCount;
    ULONG SerialCount;
    ULONG ParallelCount;
    BOOLEAN AtDiskPrimaryAddressClaimed;
    BOOLEAN AtDiskSecondaryAddressClaimed;
    ULONG Version;
    ULONG MediumChangerCount;
} CONFIGURATION_INFORMATION, *PCONFIGURATION_INFORMATION;
PCONFIGURATION_INFORMATION NTAPI IoGetConfigurationInformation(VOID);
VOID FASTCALL HalExamineMBR(_In_ PDEVICE_OBJECT DeviceObject, _In_ ULONG SectorSize,
                            _In_ ULONG MBRTypeIdentifier, _Out_ PVOID *Buffer);
typedef struct _DISK_SIGNATURE {
    ULONG PartitionStyle;
    union {
        struct {
            ULONG Signature;
            ULONG CheckSum;
        } Mbr;
        struct {
            GUID DiskId;
        } Gpt;
    } DUMMYUNIONNAME;
} DISK_SIGNATURE, *PDISK_SIGNATURE;
typedef struct _DRIVE_LAYOUT_INFORMATION_EX *PDRIVE_LAYOUT_INFORMATION_EX;
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoReadDiskSignature(_In_ PDEVICE_OBJECT DeviceObject, _In_ ULONG BytesPerSector,
                        _Out_ PDISK_SIGNATURE Signature);
_IRQL_requires_max_(PASSIVE_LEVEL) NTSTATUS NTAPI
    IoReadPartitionTableEx(_In_ PDEVICE_OBJECT DeviceObject,
                           _Out_ PDRIVE_LAYOUT_INFORMATION_EX *DriveLayout);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_SOFTNDK_WDM_SYSTEM_H */
