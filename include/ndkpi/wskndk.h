/*
 * wskndk.h - SoftNDK user-mode stand-in for the WSK extension through which
 * a kernel consumer opens and closes NDK adapters (reference: ndkpi-api.md
 * section 1.6(b)). The consumer obtains a copy of WSK_PROVIDER_NDK_DISPATCH
 * with WskControlClient(Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0,
 * NULL, sizeof(WSK_PROVIDER_NDK_DISPATCH), &dispatch, NULL, NULL) - the
 * output buffer receives the two-pointer struct itself, not a pointer to it.
 *
 * The Windows header has no #include lines and relies on the consumer having
 * included wsk.h (PWSK_CLIENT), ndkpi.h (NDK_VERSION, NDK_ADAPTER) and
 * ifdef.h (NET_IFINDEX) first. This one includes them itself so that it
 * compiles on its own; the include guards make the usual order harmless.
 * (The Windows header's guard name is not known; this one follows the WDK's
 * _NAME_ convention.)
 */
#ifndef _WSKNDK_
#define _WSKNDK_

#include <wsk.h>
#include <ndkpi.h>
#include <ifdef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NdkVersion is passed by value: the major version and the lowest minor
 * version the consumer accepts. The adapter reports the version it actually
 * runs in NDK_ADAPTER_INFO.Version. */
typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(WSKAPI *PFN_WSK_NDK_OPEN_ADAPTER)(
    _In_ PWSK_CLIENT Client,
    _In_ NDK_VERSION NdkVersion,
    _In_ NET_IFINDEX IfIndex,
    _Out_ NDK_ADAPTER **ppNdkAdapter);

/* Blocks until the adapter is closed. */
typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
VOID
(WSKAPI *PFN_WSK_NDK_CLOSE_ADAPTER)(
    _In_ PWSK_CLIENT Client,
    _In_ NDK_ADAPTER *pNdkAdapter);

typedef struct _WSK_PROVIDER_NDK_DISPATCH {
    PFN_WSK_NDK_OPEN_ADAPTER WskOpenNdkAdapter;
    PFN_WSK_NDK_CLOSE_ADAPTER WskCloseNdkAdapter;
} WSK_PROVIDER_NDK_DISPATCH, *PWSK_PROVIDER_NDK_DISPATCH;

/* WskControlClient control code. The Windows header spells it
 * ((ULONG)'NDKD'), a multi-character constant whose value is 0x4E444B44 with
 * both MSVC and GCC. GCC, however, warns (-Wmultichar, on by default) at
 * every place the macro is USED, which breaks consumers built with -Werror;
 * so the identical value is written in hex. */
#define WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH ((ULONG)0x4E444B44)

#ifdef __cplusplus
}
#endif

#endif /* _WSKNDK_ */
