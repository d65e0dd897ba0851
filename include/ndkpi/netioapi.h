/*
 * netioapi.h - SoftNDK user-mode stand-in for the Windows network-interface
 * helper API (kernel-mode flavour: results are NTSTATUS).
 *
 * Only the interface-identifier conversions that NDK consumers use (to go
 * between the NET_IFINDEX passed to WskOpenNdkAdapter, the interface LUID
 * and its alias) are declared, with their Windows prototypes. The provider
 * library (SoftNDK::ndk) implements them for the virtual adapters the user
 * declared: index = the adapter's if_index, LUID = IfType 6 (Ethernet) with
 * NetLuidIndex = if_index, alias = the adapter's alias (provider/netio.cpp).
 *
 * The rest of the Windows header (MIB_* tables, routes, neighbours,
 * notifications) is not provided.
 */
#ifndef _NETIOAPI_
#define _NETIOAPI_

#include <ntdef.h>
#include <ntstatus.h>
#include <ifdef.h>
#include <ws2def.h>
#include <ws2ipdef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel-mode definitions: the user-mode IP Helper flavour (_IPHLPAPI_,
 * DWORD results) does not exist here. */
#ifndef NETIO_STATUS
#define NETIO_STATUS NTSTATUS
#endif
#ifndef NETIO_SUCCESS
#define NETIO_SUCCESS(x) NT_SUCCESS(x)
#endif
#ifndef NETIOAPI_API_
#define NETIOAPI_API_ NTAPI
#endif
#ifndef NETIOAPI_API
#define NETIOAPI_API NETIO_STATUS NETIOAPI_API_
#endif

#ifndef ANY_SIZE
#define ANY_SIZE 1
#endif

/* ---- Interface identifier conversions. */

_IRQL_requires_max_(PASSIVE_LEVEL)
NETIOAPI_API
ConvertInterfaceLuidToIndex(
    _In_ CONST NET_LUID *InterfaceLuid,
    _Out_ PNET_IFINDEX InterfaceIndex);

_IRQL_requires_max_(PASSIVE_LEVEL)
NETIOAPI_API
ConvertInterfaceIndexToLuid(
    _In_ NET_IFINDEX InterfaceIndex,
    _Out_ PNET_LUID InterfaceLuid);

/* Length is in characters; NDIS_IF_MAX_STRING_SIZE + 1 always suffices. */
_IRQL_requires_max_(PASSIVE_LEVEL)
NETIOAPI_API
ConvertInterfaceLuidToAlias(
    _In_ CONST NET_LUID *InterfaceLuid,
    _Out_writes_(Length) PWSTR InterfaceAlias,
    _In_ SIZE_T Length);

_IRQL_requires_max_(PASSIVE_LEVEL)
NETIOAPI_API
ConvertInterfaceAliasToLuid(
    _In_ CONST WCHAR *InterfaceAlias,
    _Out_ PNET_LUID InterfaceLuid);

#ifdef __cplusplus
}
#endif

#endif /* _NETIOAPI_ */
