/*
 * wsk.h - SoftNDK user-mode stand-in for Winsock Kernel (WSK), reduced to
 * the part an NDK consumer uses to reach NDKPI (reference: ndkpi-api.md
 * section 1.6(b)):
 *
 *   WskRegister(&clientNpi, &registration);
 *   WskCaptureProviderNPI(&registration, WSK_INFINITE_WAIT, &providerNpi);
 *   providerNpi.Dispatch->WskControlClient(providerNpi.Client,
 *       WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
 *       sizeof(WSK_PROVIDER_NDK_DISPATCH), &ndkDispatch, NULL, NULL);
 *   ... ndkDispatch.WskOpenNdkAdapter / WskCloseNdkAdapter (wskndk.h) ...
 *   WskReleaseProviderNPI(&registration);
 *   WskDeregister(&registration);
 *
 * Registration and NPI types, the provider dispatch table (member order and
 * x64 offsets as on Windows: Version @0, Reserved @2, WskSocket @8,
 * WskSocketConnect @0x10, WskControlClient @0x18, WskGetAddressInfo @0x20,
 * WskFreeAddressInfo @0x28, WskGetNameInfo @0x30; 0x38 bytes) and the
 * function-pointer types of its slots have their Windows definitions.
 *
 * Socket I/O is not part of SoftNDK: the types only needed for it are
 * opaque here (WSK_CLIENT_CONNECTION_DISPATCH, ADDRINFOEXW), and the
 * per-socket dispatch tables and the WSK_FLAG_* / control-code constants are
 * not declared. WSK_SOCKET and WSK_BUF have their Windows layouts (drivers keep
 * them in their own structures). The WskSocket, WskSocketConnect and name
 * resolution slots exist so that the table has the right shape.
 *
 * Declarations only: the four registration functions are implemented by the
 * SoftNDK WDK runtime library in a later step; until then a call compiles but
 * does not link.
 */
#ifndef _WSK_
#define _WSK_

#include <ntdef.h>
#include <ntstatus.h>
#include <wdm.h>
#include <ws2def.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef WSKAPI
#define WSKAPI NTAPI
#endif

/* ---- Versions: major in the high byte, minor in the low byte. */
#define MAKE_WSK_VERSION(Mj, Mn) ((USHORT)((Mj) << 8) | (USHORT)((Mn) & 0xff))
#define WSK_MAJOR_VERSION(V) ((UCHAR)((V) >> 8))
#define WSK_MINOR_VERSION(V) ((UCHAR)(V))

/* ---- WaitTimeout values for WskCaptureProviderNPI (milliseconds otherwise). */
#define WSK_NO_WAIT 0
#define WSK_INFINITE_WAIT 0xffffffff

/* ---- The client's binding handle, as the provider sees it. */
typedef VOID WSK_CLIENT, *PWSK_CLIENT;

/* ---- A socket as the client sees it: its dispatch table (one of the
 * WSK_PROVIDER_*_DISPATCH tables, per socket category) - 8 bytes on x64. */
typedef struct _WSK_SOCKET {
    const VOID *Dispatch;
} WSK_SOCKET, *PWSK_SOCKET;

/* ---- A buffer for socket I/O: Length bytes from byte Offset of the MDL chain
 * Mdl. x64: Mdl @0, Offset @8, Length @16; 24 bytes. */
typedef struct _WSK_BUF {
    PMDL Mdl;
    ULONG Offset;
    SIZE_T Length;
} WSK_BUF, *PWSK_BUF;

/* ---- Opaque: only needed for socket I/O, which SoftNDK does not provide.
 * (On Windows WSK_CLIENT_CONNECTION_DISPATCH is a table of connection event
 * callbacks declared in this header, and ADDRINFOEXW comes from ws2def.h.) */
typedef struct _WSK_CLIENT_CONNECTION_DISPATCH WSK_CLIENT_CONNECTION_DISPATCH,
    *PWSK_CLIENT_CONNECTION_DISPATCH;
typedef struct addrinfoexW ADDRINFOEXW, *PADDRINFOEXW, *LPADDRINFOEXW;

/* ---- Client side: event callback, dispatch table, NPI. */
typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(WSKAPI *PFN_WSK_CLIENT_EVENT)(
    _In_opt_ PVOID ClientContext,
    _In_ ULONG EventType,
    _In_reads_bytes_opt_(InformationLength) PVOID Information,
    _In_ SIZE_T InformationLength);

typedef struct _WSK_CLIENT_DISPATCH {
    USHORT Version;
    USHORT Reserved;
    PFN_WSK_CLIENT_EVENT WskClientEvent;
} WSK_CLIENT_DISPATCH, *PWSK_CLIENT_DISPATCH;

typedef struct _WSK_CLIENT_NPI {
    PVOID ClientContext;
    CONST WSK_CLIENT_DISPATCH *Dispatch;
} WSK_CLIENT_NPI, *PWSK_CLIENT_NPI;

/* ---- Registration state, owned by the WSK subsystem (callers only allocate
 * it and pass its address). */
typedef struct _WSK_REGISTRATION {
    ULONGLONG ReservedRegistrationState;
    PVOID ReservedRegistrationContext;
    KSPIN_LOCK ReservedRegistrationLock;
} WSK_REGISTRATION, *PWSK_REGISTRATION;

/* ---- Provider side: the client-level functions. */
typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(WSKAPI *PFN_WSK_SOCKET)(
    _In_ PWSK_CLIENT Client,
    _In_ ADDRESS_FAMILY AddressFamily,
    _In_ USHORT SocketType,
    _In_ ULONG Protocol,
    _In_ ULONG Flags,
    _In_opt_ PVOID SocketContext,
    _In_opt_ CONST VOID *Dispatch,
    _In_opt_ PEPROCESS OwningProcess,
    _In_opt_ PETHREAD OwningThread,
    _In_opt_ PSECURITY_DESCRIPTOR SecurityDescriptor,
    _Inout_ PIRP Irp);

typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(WSKAPI *PFN_WSK_SOCKET_CONNECT)(
    _In_ PWSK_CLIENT Client,
    _In_ USHORT SocketType,
    _In_ ULONG Protocol,
    _In_ PSOCKADDR LocalAddress,
    _In_ PSOCKADDR RemoteAddress,
    _Reserved_ ULONG Flags,
    _In_opt_ PVOID SocketContext,
    _In_opt_ CONST WSK_CLIENT_CONNECTION_DISPATCH *Dispatch,
    _In_opt_ PEPROCESS OwningProcess,
    _In_opt_ PETHREAD OwningThread,
    _In_opt_ PSECURITY_DESCRIPTOR SecurityDescriptor,
    _Inout_ PIRP Irp);

/* Control codes for NDK: WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH (wskndk.h). */
typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(WSKAPI *PFN_WSK_CONTROL_CLIENT)(
    _In_ PWSK_CLIENT Client,
    _In_ ULONG ControlCode,
    _In_ SIZE_T InputSize,
    _In_reads_bytes_opt_(InputSize) PVOID InputBuffer,
    _In_ SIZE_T OutputSize,
    _Out_writes_bytes_opt_(OutputSize) PVOID OutputBuffer,
    _Out_opt_ SIZE_T *OutputSizeReturned,
    _Inout_opt_ PIRP Irp);

typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(WSKAPI *PFN_WSK_GET_ADDRESS_INFO)(
    _In_ PWSK_CLIENT Client,
    _In_opt_ PUNICODE_STRING NodeName,
    _In_opt_ PUNICODE_STRING ServiceName,
    _In_opt_ ULONG NameSpace,
    _In_opt_ GUID *Provider,
    _In_opt_ PADDRINFOEXW Hints,
    _Outptr_ PADDRINFOEXW *Result,
    _In_opt_ PEPROCESS OwningProcess,
    _In_opt_ PETHREAD OwningThread,
    _Inout_ PIRP Irp);

typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
VOID
(WSKAPI *PFN_WSK_FREE_ADDRESS_INFO)(
    _In_ PWSK_CLIENT Client,
    _In_ PADDRINFOEXW AddrInfo);

typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(WSKAPI *PFN_WSK_GET_NAME_INFO)(
    _In_ PWSK_CLIENT Client,
    _In_ PSOCKADDR SockAddr,
    _In_ ULONG SockAddrLength,
    _Out_opt_ PUNICODE_STRING NodeName,
    _Out_opt_ PUNICODE_STRING ServiceName,
    _In_ ULONG Flags,
    _In_opt_ PEPROCESS OwningProcess,
    _In_opt_ PETHREAD OwningThread,
    _Inout_ PIRP Irp);

/* The Windows header puts the last three slots under
 * NTDDI_VERSION >= NTDDI_WIN7; every supported Windows has them. */
typedef struct _WSK_PROVIDER_DISPATCH {
    USHORT Version;
    USHORT Reserved;
    PFN_WSK_SOCKET WskSocket;
    PFN_WSK_SOCKET_CONNECT WskSocketConnect;
    PFN_WSK_CONTROL_CLIENT WskControlClient;
    PFN_WSK_GET_ADDRESS_INFO WskGetAddressInfo;
    PFN_WSK_FREE_ADDRESS_INFO WskFreeAddressInfo;
    PFN_WSK_GET_NAME_INFO WskGetNameInfo;
} WSK_PROVIDER_DISPATCH, *PWSK_PROVIDER_DISPATCH;

typedef struct _WSK_PROVIDER_NPI {
    PWSK_CLIENT Client;
    CONST WSK_PROVIDER_DISPATCH *Dispatch;
} WSK_PROVIDER_NPI, *PWSK_PROVIDER_NPI;

/* ---- Registration with the WSK subsystem. */
_Must_inspect_result_
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
WSKAPI
WskRegister(
    _In_ PWSK_CLIENT_NPI WskClientNpi,
    _Out_ PWSK_REGISTRATION WskRegistration);

/* WSK_NO_WAIT may be used up to DISPATCH_LEVEL; waiting needs PASSIVE_LEVEL. */
_Must_inspect_result_
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
WSKAPI
WskCaptureProviderNPI(
    _In_ PWSK_REGISTRATION WskRegistration,
    _In_ ULONG WaitTimeout,
    _Out_ PWSK_PROVIDER_NPI WskProviderNpi);

_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
WSKAPI
WskReleaseProviderNPI(
    _In_ PWSK_REGISTRATION WskRegistration);

_IRQL_requires_max_(PASSIVE_LEVEL)
VOID
WSKAPI
WskDeregister(
    _In_ PWSK_REGISTRATION WskRegistration);

#ifdef __cplusplus
}
#endif

#endif /* _WSK_ */
