/*
 * ndkinfo.h - NDK adapter information (SoftNDK copy of the WDK's shared header).
 *
 * Declares NDK_VERSION, NDK_RDMA_TECHNOLOGY, NDK_ADAPTER_INFO and the
 * NDK_ADAPTER_FLAG_* bits with the names, member order, types and values of
 * the 10.0.10240-16299 WDK header (reference: ndkpi-api.md sections 1.3, 4.6,
 * 5.3, 5.6). x64 layout: NDK_VERSION 4 bytes, NDK_ADAPTER_INFO 0x68 bytes;
 * tests/headers/layout checks every offset.
 *
 * Differences from the WDK file, none of which changes a type:
 *   - The real file includes <winapifamily.h> and wraps its body in
 *     `#if WINAPI_FAMILY_PARTITION(WINAPI_PARTITION_DESKTOP)` and
 *     `#pragma region Desktop Family`. This copy drops both: there is only one
 *     API family on Linux, and GCC would warn about the unknown pragma.
 *   - It includes <ntdef.h> itself (for USHORT, UINT32, SIZE_T, ULONG), so it
 *     can be included first or alone.
 *   - Declarations are wrapped in extern "C" for C++ (types only; harmless).
 */
#ifndef _NDKINFO_H_
#define _NDKINFO_H_

#if defined(_MSC_VER) && (_MSC_VER > 1000)
#pragma once
#endif

#include <ntdef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * NDKPI version: {1,1} Server 2012, {1,2} Server 2012 R2, {2,0}, {2,1}.
 * Anonymous struct, as in the WDK (there is no _NDK_VERSION tag). Passed by
 * value to NdkQueryExtension, WskOpenNdkAdapter and NDK_FN_QUERY_ADAPTER_INFO_EX.
 * There is no NDK_SPEC_VERSION macro: versions exist only as values of this type.
 */
typedef struct {
    USHORT Major;
    USHORT Minor;
} NDK_VERSION;

/* Transport technology of the adapter (also INF keyword *NetworkDirectTechnology). */
typedef enum _NDK_RDMA_TECHNOLOGY {
    NdkUndefined = 0,
    NdkiWarp = 1,
    NdkInfiniBand = 2,
    NdkRoCE = 3,
    NdkRoCEv2 = 4,
    NdkMaxTechnology
} NDK_RDMA_TECHNOLOGY;

/*
 * Adapter capabilities, returned by NdkQueryAdapterInfo (PASSIVE_LEVEL).
 * Version is the version the provider runs at (its highest supported minor of
 * the requested major), the same value it stores in every object header.
 * Create functions reject requests above these limits with
 * STATUS_INVALID_PARAMETER.
 */
typedef struct _NDK_ADAPTER_INFO {
    NDK_VERSION Version;
    UINT32 VendorId;
    UINT32 DeviceId;
    SIZE_T MaxRegistrationSize;
    SIZE_T MaxWindowSize;
    ULONG FRMRPageCount; /* >= 16 */
    ULONG MaxInitiatorRequestSge;
    ULONG MaxReceiveRequestSge;
    ULONG MaxReadRequestSge; /* governs NdkRead instead of MaxInitiatorRequestSge */
    ULONG MaxTransferLength;
    ULONG MaxInlineDataSize;
    ULONG MaxInboundReadLimit;  /* IRD */
    ULONG MaxOutboundReadLimit; /* ORD */
    ULONG MaxReceiveQueueDepth;
    ULONG MaxInitiatorQueueDepth;
    ULONG MaxSrqDepth; /* 0: no SRQ support */
    ULONG MaxCqDepth;
    ULONG LargeRequestThreshold;
    ULONG MaxCallerData; /* private data on connect */
    ULONG MaxCalleeData; /* private data on accept/reject */
    ULONG AdapterFlags;  /* NDK_ADAPTER_FLAG_* */
    NDK_RDMA_TECHNOLOGY RdmaTechnology;
} NDK_ADAPTER_INFO;

/* NDK_ADAPTER_INFO.AdapterFlags */
#define NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED               0x00000001
#define NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED          0x00000002
#define NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED    0x00000004
#define NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED               0x00000008
#define NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED 0x00000010
#define NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED                  0x00000100
#define NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED       0x00010000

#ifdef __cplusplus
}
#endif

#endif /* _NDKINFO_H_ */
