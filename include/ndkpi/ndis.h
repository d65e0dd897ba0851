/*
 * ndis.h - SoftNDK user-mode stand-in for the NDIS header, reduced to what
 * NDK code sees of NDIS: the NDIS_STATUS type, NDIS_HANDLE and the status
 * values of the NDK open path (reference: ndkpi-api.md section 1.6).
 *
 * The miniport side of NDK (ndisNDK.h: NDIS_NDK_PROVIDER_CHARACTERISTICS,
 * OPEN_NDK_ADAPTER_HANDLER, ...) is NOT emulated: SoftNDK is the provider
 * itself, and consumers reach it through wskndk.h. NDIS driver services
 * (NdisAllocate..., NET_BUFFER_LISTs, OIDs) are not provided either.
 *
 * Includes ntddk.h and ndkpi.h, as an NDK-aware driver that includes
 * <ndis.h> on Windows gets both.
 */
#ifndef _NDIS_
#define _NDIS_

#include <ntddk.h>
#include <ndkpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NDIS_STATUS is an int (32 bits on both systems) carrying NTSTATUS values. */
typedef int NDIS_STATUS, *PNDIS_STATUS;
typedef PVOID NDIS_HANDLE, *PNDIS_HANDLE;

#define NDIS_STATUS_SUCCESS ((NDIS_STATUS)STATUS_SUCCESS)
#define NDIS_STATUS_PENDING ((NDIS_STATUS)STATUS_PENDING)
#define NDIS_STATUS_BUFFER_OVERFLOW ((NDIS_STATUS)STATUS_BUFFER_OVERFLOW)
#define NDIS_STATUS_FAILURE ((NDIS_STATUS)STATUS_UNSUCCESSFUL)
#define NDIS_STATUS_RESOURCES ((NDIS_STATUS)STATUS_INSUFFICIENT_RESOURCES)
#define NDIS_STATUS_NOT_SUPPORTED ((NDIS_STATUS)STATUS_NOT_SUPPORTED)
#define NDIS_STATUS_INVALID_PARAMETER ((NDIS_STATUS)STATUS_INVALID_PARAMETER)
#define NDIS_STATUS_BUFFER_TOO_SHORT ((NDIS_STATUS)STATUS_BUFFER_TOO_SMALL)
#define NDIS_STATUS_BAD_VERSION ((NDIS_STATUS)STATUS_NDIS_BAD_VERSION)
#define NDIS_STATUS_ADAPTER_NOT_READY ((NDIS_STATUS)STATUS_NDIS_ADAPTER_NOT_READY)

#ifdef __cplusplus
}
#endif

#endif /* _NDIS_ */
