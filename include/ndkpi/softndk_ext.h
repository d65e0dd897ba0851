/* softndk_ext.h - SoftNDK's NDK extension interfaces, reached through
 * NdkQueryExtension.
 *
 * NDKPI defines no standard extension; a provider may offer its own, named by a
 * GUID and a version. A real provider answers STATUS_NOT_SUPPORTED for these
 * GUIDs, so code that uses them must have a path without them.
 */
#ifndef SOFTNDK_EXT_H
#define SOFTNDK_EXT_H

#include <ndkpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Type-1 memory windows, version 1.0. Query it on an NDK_PD.
 *
 * NdkCreateMw makes type-2 windows (IBTA o10-37): NdkBind binds them through
 * one QP, only that QP may use their token, and NdkInvalidate or a peer's
 * NdkSendAndInvalidate retire them. A type-1 window, which this extension
 * creates, is the PD-wide kind:
 *   - NdkBind on any QP of the PD binds it, and rebinds it while it is bound
 *     (the previous token stops working);
 *   - every QP of the PD accepts its token;
 *   - NdkBind with Length 0 unbinds it (pMr and VirtualAddress are ignored);
 *   - it cannot be invalidated: NdkInvalidate completes with
 *     STATUS_ACCESS_VIOLATION (a local protection error), and a peer's
 *     send-and-invalidate fails that connection.
 * NdkGetRemoteTokenFromMw and NdkCloseMw work as for any window.
 */
#define SOFTNDK_MW_EXTENSION_VERSION_MAJOR 1
#define SOFTNDK_MW_EXTENSION_VERSION_MINOR 0

/* {38cb86ba-52c9-47d1-85a6-803230a0d20c} */
#define SOFTNDK_MW_EXTENSION_GUID_INIT                     \
    {                                                      \
        0x38cb86ba, 0x52c9, 0x47d1, {                      \
            0x85, 0xa6, 0x80, 0x32, 0x30, 0xa0, 0xd2, 0x0c \
        }                                                  \
    }

typedef _IRQL_requires_max_(DISPATCH_LEVEL)
    NTSTATUS (*SOFTNDK_FN_CREATE_MW_TYPE1)(_In_ NDK_PD *pNdkPd,
                                           _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
                                           _In_opt_ PVOID RequestContext,
                                           _Outptr_ NDK_MW **ppNdkMw);

/* NDK_EXTENSION_INTERFACE.Dispatch points at this table. */
typedef struct _SOFTNDK_MW_EXTENSION_DISPATCH {
    SOFTNDK_FN_CREATE_MW_TYPE1 SoftNdkCreateMwType1;
} SOFTNDK_MW_EXTENSION_DISPATCH;

/* ---- Model time, version 1.0. Query it on an NDK_CQ.
 *
 * The virtual RNIC dates every request by the path it takes through the modeled
 * hardware (docs/timing.md): doorbell, WQE fetch, processing unit, DMA, pipelines,
 * link. Every completion carries the model time (ns) at which the device wrote it.
 * SoftNdkGetCqResultsWithTime is NdkGetCqResults (and ...Ex) that also stores the
 * model completion time of results[i] in pTimes[i]. SoftNdkGetModelTime is the
 * consumer's clock as the provider keeps it: the latest completion or event time
 * it returned (functional mode), or the monotonic clock (paced mode). TimeMode
 * says which: in functional mode model time starts at 0 and has no fixed relation
 * to the wall clock; in paced mode it is CLOCK_MONOTONIC in ns.
 */
#define SOFTNDK_MODEL_TIME_EXTENSION_VERSION_MAJOR 1
#define SOFTNDK_MODEL_TIME_EXTENSION_VERSION_MINOR 0

/* {5c0a3f1e-7d2b-4e8a-9f61-3b2d8c4e9a07} */
#define SOFTNDK_MODEL_TIME_EXTENSION_GUID_INIT             \
    {                                                      \
        0x5c0a3f1e, 0x7d2b, 0x4e8a, {                      \
            0x9f, 0x61, 0x3b, 0x2d, 0x8c, 0x4e, 0x9a, 0x07 \
        }                                                  \
    }

#define SOFTNDK_TIME_MODE_FUNCTIONAL 0
#define SOFTNDK_TIME_MODE_PACED      1

typedef _IRQL_requires_max_(DISPATCH_LEVEL) ULONG (*SOFTNDK_FN_GET_CQ_RESULTS_WITH_TIME)(
    _In_ NDK_CQ *pNdkCq, _Out_writes_to_(nResults, return ) NDK_RESULT pResults[],
    _Out_writes_to_(nResults, return ) ULONG64 pTimes[], _In_ ULONG nResults);
typedef _IRQL_requires_max_(DISPATCH_LEVEL) ULONG (*SOFTNDK_FN_GET_CQ_RESULTS_EX_WITH_TIME)(
    _In_ NDK_CQ *pNdkCq, _Out_writes_to_(nResults, return ) NDK_RESULT_EX pResults[],
    _Out_writes_to_(nResults, return ) ULONG64 pTimes[], _In_ ULONG nResults);
typedef _IRQL_requires_max_(DISPATCH_LEVEL)
    ULONG64 (*SOFTNDK_FN_GET_MODEL_TIME)(_In_ NDK_CQ *pNdkCq);
typedef _IRQL_requires_max_(DISPATCH_LEVEL) ULONG (*SOFTNDK_FN_GET_TIME_MODE)(_In_ NDK_CQ *pNdkCq);

/* NDK_EXTENSION_INTERFACE.Dispatch points at this table. */
typedef struct _SOFTNDK_MODEL_TIME_DISPATCH {
    SOFTNDK_FN_GET_CQ_RESULTS_WITH_TIME SoftNdkGetCqResultsWithTime;
    SOFTNDK_FN_GET_CQ_RESULTS_EX_WITH_TIME SoftNdkGetCqResultsExWithTime;
    SOFTNDK_FN_GET_MODEL_TIME SoftNdkGetModelTime;
    SOFTNDK_FN_GET_TIME_MODE SoftNdkGetTimeMode;
} SOFTNDK_MODEL_TIME_DISPATCH;

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_EXT_H */
