/*
 * consumer_use.c - the WSK/NDK consumer include set USED, not just included,
 * in one translation unit with the Linux socket headers.
 *
 * CMakeLists.txt compiles this file four times, through generated wrappers:
 * as C11 and as C++20, with the socket headers before the WDK stand-ins
 * (SOFTNDK_SOCKETS_FIRST = 1) and after them (0). The code is what a ported
 * kernel consumer writes: the WSK open sequence of ndkpi-api.md section
 * 1.6(b), a SOCKADDR_INET filled through inet_pton and handed on as a
 * PSOCKADDR, and the interface helpers. Compile-only (an object library): the
 * WSK and netioapi functions are implemented by the WDK runtime library.
 */
#ifndef SOFTNDK_SOCKETS_FIRST
#error "compile through a generated wrapper that defines SOFTNDK_SOCKETS_FIRST"
#endif

#if SOFTNDK_SOCKETS_FIRST
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#endif

#include <ntddk.h>
#include <wsk.h>
#include <ndkpi.h>
#include <wskndk.h>

#include <ifdef.h>
#include <ndis.h>
#include <netioapi.h>
#include <ws2ipdef.h>

#if !SOFTNDK_SOCKETS_FIRST
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#endif

#include <assert.h>
#include <stddef.h>
#include <string.h>

/* ---- The shapes this code relies on (x64 Windows values). */
static_assert(sizeof(WSK_PROVIDER_NDK_DISPATCH) == 16, "two function pointers");
static_assert(offsetof(WSK_PROVIDER_NDK_DISPATCH, WskCloseNdkAdapter) == 8, "slot order");
static_assert(WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH == 0x4E444B44u, "'NDKD'");
static_assert(offsetof(WSK_PROVIDER_DISPATCH, WskSocket) == 0x08, "slot order");
static_assert(offsetof(WSK_PROVIDER_DISPATCH, WskControlClient) == 0x18, "slot order");
static_assert(offsetof(WSK_PROVIDER_DISPATCH, WskGetNameInfo) == 0x30, "slot order");
static_assert(sizeof(WSK_PROVIDER_DISPATCH) == 0x38, "8 slots");
static_assert(sizeof(WSK_CLIENT_DISPATCH) == 16, "Version, Reserved, WskClientEvent");
static_assert(sizeof(WSK_CLIENT_NPI) == 16 && sizeof(WSK_PROVIDER_NPI) == 16, "two pointers");
static_assert(sizeof(WSK_REGISTRATION) == 24, "state, context, lock");
static_assert(MAKE_WSK_VERSION(1, 0) == 0x0100, "major in the high byte");
static_assert(sizeof(SOCKADDR_IN6) == 28, "Windows SOCKADDR_IN6 size");
static_assert(offsetof(SOCKADDR_IN6, sin6_addr) == 8, "Windows layout");
static_assert(offsetof(SOCKADDR_IN6, sin6_scope_id) == 24, "Windows layout");
static_assert(sizeof(SOCKADDR_INET) == 28, "largest member: SOCKADDR_IN6");
static_assert(sizeof(SCOPE_ID) == 4, "Zone:28, Level:4");
static_assert(sizeof(NET_LUID) == 8 && sizeof(NET_IFINDEX) == 4, "LLP64 widths");
static_assert(AF_INET6 == 10, "SoftNDK keeps the Linux address-family numbering (ws2def.h)");
static_assert(NDIS_STATUS_BAD_VERSION == STATUS_NDIS_BAD_VERSION, "NDIS_STATUS carries NTSTATUS");

/* ---- The WSK path to an NDK adapter (reference section 1.6(b)). On success
 * the registration and the captured provider NPI stay live until the caller
 * closes the adapter, releases the NPI and deregisters. */
NTSTATUS SoftNdkStandaloneOpenAdapter(_In_ NET_IFINDEX IfIndex,
                                      _Out_ PWSK_REGISTRATION Registration,
                                      _Out_ PWSK_PROVIDER_NPI ProviderNpi,
                                      _Out_ PWSK_PROVIDER_NDK_DISPATCH NdkDispatch,
                                      _Outptr_ NDK_ADAPTER **Adapter) {
    static const WSK_CLIENT_DISPATCH clientDispatch = {MAKE_WSK_VERSION(1, 0), 0, NULL};
    WSK_CLIENT_NPI clientNpi;
    NDK_VERSION version;
    SIZE_T returned = 0;
    NTSTATUS status;

    clientNpi.ClientContext = NULL;
    clientNpi.Dispatch = &clientDispatch;
    status = WskRegister(&clientNpi, Registration);
    if (!NT_SUCCESS(status)) {
        return status;
    }
    status = WskCaptureProviderNPI(Registration, WSK_INFINITE_WAIT, ProviderNpi);
    if (!NT_SUCCESS(status)) {
        WskDeregister(Registration);
        return status;
    }
    /* The output buffer receives a copy of the two-pointer table. */
    status = ProviderNpi->Dispatch->WskControlClient(
        ProviderNpi->Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
        sizeof(WSK_PROVIDER_NDK_DISPATCH), NdkDispatch, &returned, NULL);
    if (NT_SUCCESS(status)) {
        version.Major = 1;
        version.Minor = 0;
        status = NdkDispatch->WskOpenNdkAdapter(ProviderNpi->Client, version, IfIndex, Adapter);
    }
    if (!NT_SUCCESS(status)) {
        WskReleaseProviderNPI(Registration);
        WskDeregister(Registration);
    }
    return status;
}

VOID SoftNdkStandaloneCloseAdapter(_In_ PWSK_REGISTRATION Registration,
                                   _In_ PWSK_PROVIDER_NPI ProviderNpi,
                                   _In_ PWSK_PROVIDER_NDK_DISPATCH NdkDispatch,
                                   _In_ NDK_ADAPTER *Adapter) {
    NdkDispatch->WskCloseNdkAdapter(ProviderNpi->Client, Adapter);
    WskReleaseProviderNPI(Registration);
    WskDeregister(Registration);
}

/* ---- An address for NdkConnect/NdkListen: text -> SOCKADDR_INET through the
 * C library, then passed on as the PSOCKADDR the NDK functions take. A
 * link-local IPv6 address gets the interface as its scope zone. */
BOOLEAN SoftNdkStandaloneParseAddress(_In_ const char *Text, _In_ USHORT Port,
                                      _In_ NET_IFINDEX IfIndex, _Out_ SOCKADDR_INET *Address,
                                      _Out_ PSOCKADDR *Sockaddr, _Out_ ULONG *SockaddrLength) {
    memset(Address, 0, sizeof(*Address));
    if (inet_pton(AF_INET6, Text, &Address->Ipv6.sin6_addr) == 1) {
        SCOPE_ID scope;
        Address->Ipv6.sin6_family = AF_INET6;
        Address->Ipv6.sin6_port = htons(Port);
        scope.Value = 0;
        if (IN6_IS_ADDR_LINKLOCAL(&Address->Ipv6.sin6_addr)) {
            scope.Zone = IfIndex;
        }
        Address->Ipv6.sin6_scope_id = scope.Value;
    } else if (inet_pton(AF_INET, Text, &Address->Ipv4.sin_addr) == 1) {
        Address->Ipv4.sin_family = AF_INET;
        Address->Ipv4.sin_port = htons(Port);
    } else {
        return FALSE;
    }
    *Sockaddr = (PSOCKADDR)Address;
    *SockaddrLength =
        (ULONG)(Address->si_family == AF_INET6 ? sizeof(SOCKADDR_IN6) : sizeof(SOCKADDR_IN));
    return TRUE;
}

/* ---- Interface index -> LUID -> alias, as consumers log which NIC they use. */
NTSTATUS SoftNdkStandaloneInterfaceAlias(_In_ NET_IFINDEX IfIndex,
                                         _Out_writes_(Length) PWSTR Alias, _In_ SIZE_T Length) {
    NET_LUID luid;
    NTSTATUS status = ConvertInterfaceIndexToLuid(IfIndex, &luid);
    if (!NETIO_SUCCESS(status)) {
        return status;
    }
    return ConvertInterfaceLuidToAlias(&luid, Alias, Length);
}
