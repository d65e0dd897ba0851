/*
 * ndkpi.h - Network Direct Kernel Provider Interface (SoftNDK copy).
 *
 * The NDKPI types with the names, member order, parameter lists and constant
 * values of the WDK header (10.0.10240-16299, identical in the three), plus
 * the NDKPI 2.1 additions (NDK_FN_COMPLETE_CONNECT_EX, NDK_FN_ACCEPT_EX,
 * NDK_FN_DISCONNECT_EVENT_CALLBACK_EX, NDK_RESULT_EX.ProviderErrorCode).
 * Declarations follow the WDK file's order. x64 offsets and sizes are checked
 * by tests/headers/layout against reference/ndkpi-api.md.
 *
 * Object model. Every NDK object is a two-member struct:
 *
 *     struct _NDK_xxx {
 *         NDK_OBJECT_HEADER Header;             x64 offset 0x00, 0x28 bytes
 *         CONST NDK_xxx_DISPATCH* Dispatch;     x64 offset 0x28
 *     };                                        0x30 bytes
 *
 * The provider allocates the object, fills Header (Version = the version it
 * runs at, ObjectType, NdkReserved zeroed) and Dispatch, and hands it out.
 * From then on:
 *   - Dispatch belongs to the consumer side: NDIS/WSK may replace it to
 *     interpose. The provider never reads obj->Dispatch again; it finds its
 *     private state from the object's address (the public struct embedded at
 *     a known offset of a private one).
 *   - Header.NdkReserved belongs to the consumer side too; the provider leaves
 *     it alone until the object is closed.
 * Consumers call through the table, passing the object (or &obj->Header for
 * the common functions) first:
 *
 *     pCq->Dispatch->NdkArmCq(pCq, NDK_CQ_NOTIFY_ANY);
 *     pQp->Dispatch->NdkCloseQp(&pQp->Header, CloseDone, Context);
 *
 * Every NDK_FN_* below is a POINTER typedef: `NDK_FN_SEND f;` declares a
 * pointer. Provider functions are written with explicit prototypes and
 * assigned to the dispatch slots. All slots are mandatory; an unsupported
 * feature is reported through a status code, never through a NULL slot.
 *
 * Two spellings to read carefully:
 *   - `CONST PSOCKADDR p` and `CONST PVOID p` make the POINTER const, so the
 *     effective parameter types are `struct sockaddr *` and `void *`. A
 *     function declared with `const struct sockaddr *` does not match.
 *   - `CONST NDK_SGE* p` and `CONST NDK_LOGICAL_ADDRESS* p` are pointers to
 *     const data.
 * NDK_VERSION parameters are passed by value.
 *
 * Asynchronous functions take a completion callback: if the function returns
 * STATUS_PENDING the provider invokes the callback exactly once later;
 * for any other return value it never invokes it. A create that pends
 * delivers the new object as the callback's pNdkObject, not through pp...
 *
 * IRQL annotations are kept for the reader (they expand to nothing here):
 * every function and callback may be called at DISPATCH_LEVEL, so nothing
 * may block, except NdkQueryAdapterInfo(Ex), which is PASSIVE_LEVEL and
 * blocking. Callbacks may run on provider threads or inline inside a
 * provider call.
 *
 * Differences from the WDK file, none of which changes a type:
 *   - It includes <wdm.h> (MDL, GROUP_AFFINITY, PAGE_SIZE, and through it
 *     ntdef.h/ntstatus.h/sal.h), so it can be included alone; the WDK file
 *     expects the consumer to include wdm.h or ntddk.h first.
 *   - Declarations are wrapped in extern "C" for C++ (types only; harmless).
 *   - Where the 2.1 typedefs sit inside the connector section, and their SAL,
 *     comes from the DDI documentation: no public 2.1 header text exists.
 */
#ifndef _NDKPI_H_
#define _NDKPI_H_

/* The declarations below keep the WDK header's shape (one parameter per line,
 * annotations on their own lines), so that they can be compared with it line
 * by line; clang-format would flatten them. */
/* clang-format off */

#if defined(_MSC_VER) && (_MSC_VER > 1000)
#pragma once
#endif

#include <wdm.h>
#include <ndkinfo.h>
#include <ws2def.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Object header and common data types
 * ====================================================================== */

/* NDK_OBJECT_HEADER.ObjectType. */
typedef enum _NDK_OBJECT_TYPE {
    NdkObjectTypeUndefined = 0,
    NdkObjectTypeAdapter,
    NdkObjectTypeQp,
    NdkObjectTypeCq,
    NdkObjectTypeMr,
    NdkObjectTypeMw,
    NdkObjectTypePd,
    NdkObjectTypeSharedEndpoint,
    NdkObjectTypeConnector,
    NdkObjectTypeListener,
    NdkObjectTypeSrq,
    NdkObjectTypeMax
} NDK_OBJECT_TYPE;

/* Owned by the consumer side (NDIS/WSK). The provider zeroes it when it
 * creates the object and never touches it again. */
typedef struct _NDK_OBJECT_HEADER_RESERVED_BLOCK {
    PVOID rf[4];
} NDK_OBJECT_HEADER_RESERVED_BLOCK;

/* First member of every NDK object; the common functions (NDK_FN_CLOSE_OBJECT,
 * NDK_FN_QUERY_EXTENSION_INTERFACE) and NDK_FN_CREATE_COMPLETION take a
 * pointer to it, which is also a pointer to the object. */
typedef struct _NDK_OBJECT_HEADER {
    NDK_VERSION Version;                    /* version the provider runs at */
    NDK_OBJECT_TYPE ObjectType;             /* non-zero NdkObjectType* */
    NDK_OBJECT_HEADER_RESERVED_BLOCK NdkReserved;
} NDK_OBJECT_HEADER;

/* A completion, as dequeued by NdkGetCqResults. */
typedef struct _NDK_RESULT {
    NTSTATUS Status;
    ULONG BytesTransferred;                 /* meaningful for receives only */
    PVOID QPContext;                        /* QPContext given to NdkCreateQp(WithSrq) */
    PVOID RequestContext;                   /* RequestContext given to the post call */
} NDK_RESULT;

/* NDK_RESULT_EX.Type. Bit values, not 0..7: ReceiveAndInvalidate shares bit 0
 * with Receive, and consumers test `Type & NdkOperationTypeReceive`. */
typedef enum _NDK_OPERATION_TYPE {
    NdkOperationTypeReceive = 1,
    NdkOperationTypeReceiveAndInvalidate = 32769,
    NdkOperationTypeSend = 2,
    NdkOperationTypeFastRegister = 4,
    NdkOperationTypeBind = 8,
    NdkOperationTypeInvalidate = 16,
    NdkOperationTypeRead = 32,
    NdkOperationTypeWrite = 64
} NDK_OPERATION_TYPE;

/* A completion, as dequeued by NdkGetCqResultsEx (NDKPI 1.2+). */
typedef struct _NDK_RESULT_EX {
    NTSTATUS Status;
    ULONG BytesTransferred;
    PVOID QPContext;
    PVOID RequestContext;
    NDK_OPERATION_TYPE Type;
    ULONG ProviderErrorCode;                /* NDKPI 2.1, in former padding; 0 on success */
    ULONG_PTR TypeSpecificCompletionOutput; /* ReceiveAndInvalidate: the invalidated token */
} NDK_RESULT_EX;

/* An adapter logical ("bus") address, as produced by NdkBuildLAM. */
typedef PHYSICAL_ADDRESS NDK_LOGICAL_ADDRESS;

/* Result of NdkBuildLAM: AdapterPageCount PAGE_SIZE pages; variable length,
 * FIELD_OFFSET(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) +
 * AdapterPageCount * sizeof(NDK_LOGICAL_ADDRESS) bytes. AdapterContext is
 * the provider's; the consumer does not modify it. */
typedef
_Struct_size_bytes_(FIELD_OFFSET(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) +
                    (AdapterPageCount * sizeof(NDK_LOGICAL_ADDRESS)))
struct _NDK_LOGICAL_ADDRESS_MAPPING {
    PVOID AdapterContext;
    ULONG AdapterPageCount;
    _Field_size_(AdapterPageCount) NDK_LOGICAL_ADDRESS AdapterPageArray[1];
} NDK_LOGICAL_ADDRESS_MAPPING;

/* Scatter/gather entry. With the PD's privileged token the entry carries a
 * LogicalAddress from a LAM; with any other token a VirtualAddress inside a
 * registered region; with NDK_OP_FLAG_INLINE the token is ignored. */
typedef struct _NDK_SGE {
    union {
        PVOID VirtualAddress;
        NDK_LOGICAL_ADDRESS LogicalAddress;
    };
    ULONG Length;
    UINT32 MemoryRegionToken;
} NDK_SGE;

/* ======================================================================
 * Consumer completion callbacks and the functions common to all objects
 * ====================================================================== */

/* An NDK_FN_CLOSE_OBJECT that returned STATUS_PENDING has finished; the
 * last callback ever made for that object. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_CLOSE_COMPLETION)(
    _In_opt_ PVOID Context
    );

/* A request (other than a create) that returned STATUS_PENDING has finished. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_REQUEST_COMPLETION)(
    _In_opt_ PVOID Context,
    _In_ NTSTATUS Status
    );

/* A create that returned STATUS_PENDING has finished; on success pNdkObject
 * is the new object's header (cast to the object type, header at offset 0). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_CREATE_COMPLETION)(
    _In_opt_ PVOID Context,
    _In_ NTSTATUS Status,
    _In_ NDK_OBJECT_HEADER* pNdkObject
    );

/* Slot 0 of every dispatch table except the adapter's: NdkCloseXxx.
 * Returns STATUS_SUCCESS (closed) or STATUS_PENDING (CloseCompletion later). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CLOSE_OBJECT)(
    _In_ NDK_OBJECT_HEADER* pNdkObject,
    _In_ NDK_FN_CLOSE_COMPLETION CloseCompletion,
    _In_opt_ PVOID RequestContext
    );

/* Filled in by NdkQueryExtension; Dispatch is the extension's own table. */
typedef struct _NDK_EXTENSION_INTERFACE {
    CONST VOID* Dispatch;
} NDK_EXTENSION_INTERFACE;

/* NdkQueryExtension, in every dispatch table. No standard extensions exist;
 * STATUS_NOT_SUPPORTED for every GUID is conformant. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_QUERY_EXTENSION_INTERFACE)(
    _In_ NDK_OBJECT_HEADER* pNdkObject,
    _In_ GUID* ExtensionInterfaceID,
    _In_ NDK_VERSION ExtensionInterfaceVersion,
    _Out_ NDK_EXTENSION_INTERFACE* pExtensionInterface
    );

/* ======================================================================
 * Completion queue (child of the adapter; created by NdkCreateCq)
 * ====================================================================== */

typedef struct _NDK_CQ NDK_CQ;

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_RESIZE_CQ)(
    _In_ NDK_CQ* pNdkCq,
    _In_ ULONG CqDepth,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

/* Consumer callback, once per satisfied arm. CqStatus: STATUS_SUCCESS, or
 * STATUS_BUFFER_OVERFLOW (overrun) / STATUS_INTERNAL_ERROR (fatal): the CQ
 * and its QPs are then dead. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_CQ_NOTIFICATION_CALLBACK)(
    _In_opt_ PVOID CqNotificationContext,
    _In_ NTSTATUS CqStatus
    );

/* NdkArmCq Type. */
#define NDK_CQ_NOTIFY_ERRORS        0
#define NDK_CQ_NOTIFY_ANY           1
#define NDK_CQ_NOTIFY_SOLICITED     2

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_ARM_CQ)(
    _In_ NDK_CQ* pNdkCq,
    _In_ ULONG Type
    );

/* Returns the number of results dequeued (0: empty). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
ULONG
(*NDK_FN_GET_CQ_RESULTS)(
    _In_ NDK_CQ* pNdkCq,
    _Out_writes_to_(nResults, return) NDK_RESULT Results[],
    _In_ ULONG nResults
    );

/* Never returns STATUS_PENDING; STATUS_NOT_SUPPORTED unless the adapter sets
 * NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION)(
    _In_ NDK_CQ* pNdkCq,
    _In_ ULONG ModerationInterval,
    _In_ ULONG ModerationCount
    );

/* NDKPI 1.2+. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
ULONG
(*NDK_FN_GET_CQ_RESULTS_EX)(
    _In_ NDK_CQ* pNdkCq,
    _Out_writes_to_(nResults, return) NDK_RESULT_EX Results[],
    _In_ ULONG nResults
    );

typedef struct _NDK_CQ_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseCq;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_RESIZE_CQ NdkResizeCq;
    NDK_FN_ARM_CQ NdkArmCq;
    NDK_FN_GET_CQ_RESULTS NdkGetCqResults;
    NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION NdkControlCqInterruptModeration;
    NDK_FN_GET_CQ_RESULTS_EX NdkGetCqResultsEx;     /* NDKPI 1.2+ */
} NDK_CQ_DISPATCH;

struct _NDK_CQ {
    NDK_OBJECT_HEADER Header;
    CONST NDK_CQ_DISPATCH* Dispatch;        /* consumer side's; never read back */
};

/* ======================================================================
 * Memory region (child of a PD; created by NdkCreateMr)
 * ====================================================================== */

typedef struct _NDK_MR NDK_MR;

/* NdkRegisterMr Flags. Remote write includes the local-write bit. */
#define NDK_MR_FLAG_ALLOW_LOCAL_READ    0x00000000
#define NDK_MR_FLAG_ALLOW_LOCAL_WRITE   0x00000001
#define NDK_MR_FLAG_ALLOW_REMOTE_READ   0x00000002
#define NDK_MR_FLAG_ALLOW_REMOTE_WRITE  0x00000005
#define NDK_MR_FLAG_RDMA_READ_SINK      0x00000008

/* Registers the virtually contiguous range at MmGetMdlVirtualAddress(Mdl);
 * the address is an index, never dereferenced by the provider. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_REGISTER_MR)(
    _In_ NDK_MR* pNdkMr,
    _In_ MDL* Mdl,
    _In_ SIZE_T Length,
    _In_ ULONG Flags,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_DEREGISTER_MR)(
    _In_ NDK_MR* pNdkMr,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_INITIALIZE_FAST_REGISTER_MR)(
    _In_ NDK_MR* pNdkMr,
    _In_ ULONG AdapterPageCount,
    _In_ BOOLEAN RemoteAccess,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
UINT32
(*NDK_FN_GET_REMOTE_TOKEN_FROM_MR)(
    _In_ NDK_MR* pNdkMr
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
UINT32
(*NDK_FN_GET_LOCAL_TOKEN_FROM_MR)(
    _In_ NDK_MR* pNdkMr
    );

typedef struct _NDK_MR_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseMr;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_REGISTER_MR NdkRegisterMr;
    NDK_FN_DEREGISTER_MR NdkDeregisterMr;
    NDK_FN_INITIALIZE_FAST_REGISTER_MR NdkInitializeFastRegisterMr;
    NDK_FN_GET_REMOTE_TOKEN_FROM_MR NdkGetRemoteTokenFromMr;
    NDK_FN_GET_LOCAL_TOKEN_FROM_MR NdkGetLocalTokenFromMr;
} NDK_MR_DISPATCH;

struct _NDK_MR {
    NDK_OBJECT_HEADER Header;
    CONST NDK_MR_DISPATCH* Dispatch;        /* consumer side's; never read back */
};

/* ======================================================================
 * Memory window (child of a PD; created by NdkCreateMw, bound by NdkBind)
 * ====================================================================== */

typedef struct _NDK_MW NDK_MW;

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
UINT32
(*NDK_FN_GET_REMOTE_TOKEN_FROM_MW)(
    _In_ NDK_MW* pNdkMw
    );

typedef struct _NDK_MW_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseMw;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_GET_REMOTE_TOKEN_FROM_MW NdkGetRemoteTokenFromMw;
} NDK_MW_DISPATCH;

struct _NDK_MW {
    NDK_OBJECT_HEADER Header;
    CONST NDK_MW_DISPATCH* Dispatch;        /* consumer side's; never read back */
};

/* ======================================================================
 * Shared receive queue (child of a PD; created by NdkCreateSrq)
 * ====================================================================== */

typedef struct _NDK_SRQ NDK_SRQ;

/* SrqDepth 0 keeps the depth; NotifyThreshold > 0 re-arms the notification,
 * 0 keeps the threshold and arm state. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_MODIFY_SRQ)(
    _In_ NDK_SRQ* pNdkSrq,
    _In_ ULONG SrqDepth,
    _In_ ULONG NotifyThreshold,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

/* Consumer callback: queued receives fell below the armed threshold (one-shot). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_SRQ_NOTIFICATION_CALLBACK)(
    _In_opt_ PVOID SrqNotificationContext,
    _In_ NTSTATUS SrqStatus
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_SRQ_RECEIVE)(
    _In_ NDK_SRQ* pNdkSrq,
    _In_opt_ PVOID RequestContext,
    _In_reads_(nSge) CONST NDK_SGE* pSgl,
    _In_ ULONG nSge
    );

typedef struct _NDK_SRQ_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseSrq;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_MODIFY_SRQ NdkModifySrq;
    NDK_FN_SRQ_RECEIVE NdkSrqReceive;
} NDK_SRQ_DISPATCH;

struct _NDK_SRQ {
    NDK_OBJECT_HEADER Header;
    CONST NDK_SRQ_DISPATCH* Dispatch;       /* consumer side's; never read back */
};

/* ======================================================================
 * Queue pair (child of a PD; created by NdkCreateQp / NdkCreateQpWithSrq)
 *
 * Post functions are synchronous: STATUS_SUCCESS means posted and exactly one
 * completion will follow (none for a successful SILENT_SUCCESS request); any
 * failure means nothing was posted and no completion will ever appear.
 * ====================================================================== */

typedef struct _NDK_QP NDK_QP;

/* Cancels everything pending on both queues; each completes STATUS_CANCELLED. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_FLUSH)(
    _In_ NDK_QP* pNdkQp
    );

/* Work-request Flags. ALLOW_REMOTE_WRITE includes the ALLOW_LOCAL_WRITE bit. */
#define NDK_OP_FLAG_SILENT_SUCCESS                  0x00000001
#define NDK_OP_FLAG_READ_FENCE                      0x00000002
#define NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT          0x00000004
#define NDK_OP_FLAG_ALLOW_REMOTE_READ               0x00000008
#define NDK_OP_FLAG_ALLOW_LOCAL_WRITE               0x00000010  /* FRMR */
#define NDK_OP_FLAG_ALLOW_REMOTE_WRITE              0x00000030
#define NDK_OP_FLAG_INLINE                          0x00000040
#define NDK_OP_FLAG_RDMA_READ_SINK                  0x00000080
#define NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE      0x00000100  /* NDKPI 1.2+ */
#define NDK_OP_FLAG_DEFER                           0x00000200  /* NDKPI 1.2+ */

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_SEND)(
    _In_ NDK_QP* pNdkQp,
    _In_opt_ PVOID RequestContext,
    _In_reads_(nSge) CONST NDK_SGE* pSgl,
    _In_ ULONG nSge,
    _In_ ULONG Flags
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_RECEIVE)(
    _In_ NDK_QP* pNdkQp,
    _In_opt_ PVOID RequestContext,
    _In_reads_(nSge) CONST NDK_SGE* pSgl,
    _In_ ULONG nSge
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_BIND)(
    _In_ NDK_QP* pNdkQp,
    _In_opt_ PVOID RequestContext,
    _In_ NDK_MR* pMr,
    _In_ NDK_MW* pMw,
    _In_ PVOID VirtualAddress,
    _In_ SIZE_T Length,
    _In_ ULONG Flags
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_FAST_REGISTER)(
    _In_ NDK_QP* pNdkQp,
    _In_opt_ PVOID RequestContext,
    _In_ NDK_MR* pMr,
    _In_ ULONG AdapterPageCount,
    _In_reads_(AdapterPageCount) CONST NDK_LOGICAL_ADDRESS* AdapterPageArray,
    _In_ ULONG FBO,
    _In_ SIZE_T Length,
    _In_ PVOID BaseVirtualAddress,
    _In_ ULONG Flags
    );

/* pNdkMrOrMw: a fast-registered MR or a bound MW (see its ObjectType). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_INVALIDATE)(
    _In_ NDK_QP* pNdkQp,
    _In_opt_ PVOID RequestContext,
    _In_ NDK_OBJECT_HEADER* pNdkMrOrMw,
    _In_ ULONG Flags
    );

/* RemoteAddress is in host byte order. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_READ)(
    _In_ NDK_QP* pNdkQp,
    _In_opt_ PVOID RequestContext,
    _In_reads_(nSge) CONST NDK_SGE* pSgl,
    _In_ ULONG nSge,
    _In_ UINT64 RemoteAddress,
    _In_ UINT32 RemoteToken,
    _In_ ULONG Flags
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_WRITE)(
    _In_ NDK_QP* pNdkQp,
    _In_opt_ PVOID RequestContext,
    _In_reads_(nSge) CONST NDK_SGE* pSgl,
    _In_ ULONG nSge,
    _In_ UINT64 RemoteAddress,
    _In_ UINT32 RemoteToken,
    _In_ ULONG Flags
    );

/* NDKPI 1.2+. Note RemoteToken comes last, after Flags. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_SEND_AND_INVALIDATE)(
    _In_ NDK_QP* pNdkQp,
    _In_opt_ PVOID RequestContext,
    _In_reads_(nSge) CONST NDK_SGE* pSgl,
    _In_ ULONG nSge,
    _In_ ULONG Flags,
    _In_ UINT32 RemoteToken
    );

typedef struct _NDK_QP_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseQp;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_FLUSH NdkFlush;
    NDK_FN_SEND NdkSend;
    NDK_FN_RECEIVE NdkReceive;
    NDK_FN_BIND NdkBind;
    NDK_FN_FAST_REGISTER NdkFastRegister;
    NDK_FN_INVALIDATE NdkInvalidate;
    NDK_FN_READ NdkRead;
    NDK_FN_WRITE NdkWrite;
    NDK_FN_SEND_AND_INVALIDATE NdkSendAndInvalidate;    /* NDKPI 1.2+ */
} NDK_QP_DISPATCH;

struct _NDK_QP {
    NDK_OBJECT_HEADER Header;
    CONST NDK_QP_DISPATCH* Dispatch;        /* consumer side's; never read back */
};

/* ======================================================================
 * Protection domain (child of the adapter; parent of MR, MW, SRQ, QP)
 * ====================================================================== */

typedef struct _NDK_PD NDK_PD;

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_MR)(
    _In_ NDK_PD* pNdkPd,
    _In_ BOOLEAN FastRegister,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_MR** ppNdkMr
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_MW)(
    _In_ NDK_PD* pNdkPd,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_MW** ppNdkMw
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_SRQ)(
    _In_ NDK_PD* pNdkPd,
    _In_ ULONG SrqDepth,
    _In_ ULONG MaxReceiveRequestSge,
    _In_ ULONG NotifyThreshold,
    _In_opt_ NDK_FN_SRQ_NOTIFICATION_CALLBACK SrqNotification,
    _In_opt_ PVOID SrqNotificationContext,
    _In_opt_ GROUP_AFFINITY* Affinity,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_SRQ** ppNdkSrq
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_QP)(
    _In_ NDK_PD* pNdkPd,
    _In_ NDK_CQ* pReceiveCq,
    _In_ NDK_CQ* pInitiatorCq,
    _In_opt_ PVOID QPContext,
    _In_ ULONG ReceiveQueueDepth,
    _In_ ULONG InitiatorQueueDepth,
    _In_ ULONG MaxReceiveRequestSge,
    _In_ ULONG MaxInitiatorRequestSge,
    _In_ ULONG InlineDataSize,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_QP** ppNdkQp
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_QP_WITH_SRQ)(
    _In_ NDK_PD* pNdkPd,
    _In_ NDK_CQ* pReceiveCq,
    _In_ NDK_CQ* pInitiatorCq,
    _In_ NDK_SRQ* pSrq,
    _In_opt_ PVOID QPContext,
    _In_ ULONG InitiatorQueueDepth,
    _In_ ULONG MaxInitiatorRequestSge,
    _In_ ULONG InlineDataSize,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_QP** ppNdkQp
    );

/* The PD's privileged token: local read/write of LAM logical addresses. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN)(
    _In_ NDK_PD* pNdkPd,
    _Out_ UINT32* pToken
    );

typedef struct _NDK_PD_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkClosePd;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_CREATE_MR NdkCreateMr;
    NDK_FN_CREATE_MW NdkCreateMw;
    NDK_FN_CREATE_SRQ NdkCreateSrq;
    NDK_FN_CREATE_QP NdkCreateQp;
    NDK_FN_CREATE_QP_WITH_SRQ NdkCreateQpWithSrq;
    NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN NdkGetPrivilegedMemoryRegionToken;
} NDK_PD_DISPATCH;

struct _NDK_PD {
    NDK_OBJECT_HEADER Header;
    CONST NDK_PD_DISPATCH* Dispatch;        /* consumer side's; never read back */
};

/* ======================================================================
 * Shared endpoint (child of the adapter): one local IP:port used by many
 * NdkConnectWithSharedEndpoint connections
 * ====================================================================== */

typedef struct _NDK_SHARED_ENDPOINT NDK_SHARED_ENDPOINT;

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS)(
    _In_ NDK_SHARED_ENDPOINT* pNdkSharedEndpoint,
    _Out_writes_bytes_to_opt_(*pAddressLength, *pAddressLength) PSOCKADDR pAddress,
    _Inout_ ULONG* pAddressLength
    );

typedef struct _NDK_SHARED_ENDPOINT_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseSharedEndpoint;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS NdkGetLocalAddress;
} NDK_SHARED_ENDPOINT_DISPATCH;

struct _NDK_SHARED_ENDPOINT {
    NDK_OBJECT_HEADER Header;
    CONST NDK_SHARED_ENDPOINT_DISPATCH* Dispatch;   /* consumer side's; never read back */
};

/* ======================================================================
 * Connector (child of the adapter; created by NdkCreateConnector, or handed
 * to the consumer by a listener's connect event)
 * ====================================================================== */

typedef struct _NDK_CONNECTOR NDK_CONNECTOR;

/* Active side. Completes when the peer accepted (or failed). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CONNECT)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_ NDK_QP* pNdkQp,
    _In_reads_bytes_(SrcAddressLength) CONST PSOCKADDR pSrcAddress,
    _In_ ULONG SrcAddressLength,
    _In_reads_bytes_(DestAddressLength) CONST PSOCKADDR pDestAddress,
    _In_ ULONG DestAddressLength,
    _In_ ULONG InboundReadLimit,
    _In_ ULONG OutboundReadLimit,
    _In_reads_bytes_opt_(PrivateDataLength) CONST PVOID pPrivateData,
    _In_ ULONG PrivateDataLength,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CONNECT_WITH_SHARED_ENDPOINT)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_ NDK_QP* pNdkQp,
    _In_ NDK_SHARED_ENDPOINT* pNdkSharedEndpoint,
    _In_reads_bytes_(DestAddressLength) CONST PSOCKADDR pDestAddress,
    _In_ ULONG DestAddressLength,
    _In_ ULONG InboundReadLimit,
    _In_ ULONG OutboundReadLimit,
    _In_reads_bytes_opt_(PrivateDataLength) CONST PVOID pPrivateData,
    _In_ ULONG PrivateDataLength,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

/* Consumer callback: the peer disconnected (exactly once per connection). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_DISCONNECT_EVENT_CALLBACK)(
    _In_opt_ PVOID DisconnectEventContext
    );

/* NDKPI 2.1: the same plus a provider-specific reason (0: none). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_DISCONNECT_EVENT_CALLBACK_EX)(
    _In_opt_ PVOID DisconnectEventContext,
    _In_ ULONG ProviderDisconnectReason
    );

/* Active side's last step, after NdkConnect succeeded. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_COMPLETE_CONNECT)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_opt_ NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
    _In_opt_ PVOID DisconnectEventContext,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

/* NDKPI 2.1. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_COMPLETE_CONNECT_EX)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_opt_ NDK_FN_DISCONNECT_EVENT_CALLBACK_EX DisconnectEvent,
    _In_opt_ PVOID DisconnectEventContext,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

/* Passive side's answer to a connect event. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_ACCEPT)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_ NDK_QP* pNdkQp,
    _In_ ULONG InboundReadLimit,
    _In_ ULONG OutboundReadLimit,
    _In_reads_bytes_opt_(PrivateDataLength) CONST PVOID pPrivateData,
    _In_ ULONG PrivateDataLength,
    _In_opt_ NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
    _In_opt_ PVOID DisconnectEventContext,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

/* NDKPI 2.1. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_ACCEPT_EX)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_ NDK_QP* pNdkQp,
    _In_ ULONG InboundReadLimit,
    _In_ ULONG OutboundReadLimit,
    _In_reads_bytes_opt_(PrivateDataLength) CONST PVOID pPrivateData,
    _In_ ULONG PrivateDataLength,
    _In_opt_ NDK_FN_DISCONNECT_EVENT_CALLBACK_EX DisconnectEvent,
    _In_opt_ PVOID DisconnectEventContext,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

/* Synchronous: no completion callback. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_REJECT)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_reads_bytes_opt_(PrivateDataLength) CONST PVOID pPrivateData,
    _In_ ULONG PrivateDataLength
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_GET_CONNECTION_DATA)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _Out_opt_ ULONG* pInboundReadLimit,
    _Out_opt_ ULONG* pOutboundReadLimit,
    _Out_writes_bytes_to_opt_(*pPrivateDataLength, *pPrivateDataLength) PVOID pPrivateData,
    _Inout_ ULONG* pPrivateDataLength
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_GET_LOCAL_ADDRESS)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _Out_writes_bytes_to_opt_(*pAddressLength, *pAddressLength) PSOCKADDR pAddress,
    _Inout_ ULONG* pAddressLength
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_GET_PEER_ADDRESS)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _Out_writes_bytes_to_opt_(*pAddressLength, *pAddressLength) PSOCKADDR pAddress,
    _Inout_ ULONG* pAddressLength
    );

/* Graceful disconnect; the QP is flushed afterwards. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_DISCONNECT)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

/* Undocumented, and in no dispatch table; declared for header compatibility. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_DISCONNECT_EX)(
    _In_ NDK_CONNECTOR* pNdkConnector,
    _In_ BOOLEAN Abortive,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

typedef struct _NDK_CONNECTOR_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseConnector;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_CONNECT NdkConnect;
    NDK_FN_CONNECT_WITH_SHARED_ENDPOINT NdkConnectWithSharedEndpoint;
    NDK_FN_COMPLETE_CONNECT NdkCompleteConnect;
    NDK_FN_ACCEPT NdkAccept;
    NDK_FN_REJECT NdkReject;
    NDK_FN_GET_CONNECTION_DATA NdkGetConnectionData;
    NDK_FN_GET_LOCAL_ADDRESS NdkGetLocalAddress;
    NDK_FN_GET_PEER_ADDRESS NdkGetPeerAddress;
    NDK_FN_DISCONNECT NdkDisconnect;
    NDK_FN_COMPLETE_CONNECT_EX NdkCompleteConnectEx;    /* NDKPI 2.1 */
    NDK_FN_ACCEPT_EX NdkAcceptEx;                       /* NDKPI 2.1 */
} NDK_CONNECTOR_DISPATCH;

struct _NDK_CONNECTOR {
    NDK_OBJECT_HEADER Header;
    CONST NDK_CONNECTOR_DISPATCH* Dispatch; /* consumer side's; never read back */
};

/* ======================================================================
 * Listener (child of the adapter; created by NdkCreateListener)
 * ====================================================================== */

typedef struct _NDK_LISTENER NDK_LISTENER;

/* Consumer callback per incoming request. pNdkConnector is a new object
 * owned by the consumer: it accepts, rejects or closes it (close = reject). */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_CONNECT_EVENT_CALLBACK)(
    _In_opt_ PVOID ConnectEventContext,
    _In_ NDK_CONNECTOR* pNdkConnector
    );

/* Pause TRUE: refuse incoming requests as if nobody listened; FALSE resumes. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_CONTROL_CONNECT_EVENTS)(
    _In_ NDK_LISTENER* pNdkListener,
    _In_ BOOLEAN Pause
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_LISTEN)(
    _In_ NDK_LISTENER* pNdkListener,
    _In_reads_bytes_(AddressLength) CONST PSOCKADDR pAddress,
    _In_ ULONG AddressLength,
    _In_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_GET_LISTENER_LOCAL_ADDRESS)(
    _In_ NDK_LISTENER* pNdkListener,
    _Out_writes_bytes_to_opt_(*pAddressLength, *pAddressLength) PSOCKADDR pAddress,
    _Inout_ ULONG* pAddressLength
    );

typedef struct _NDK_LISTENER_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseListener;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_LISTEN NdkListen;
    NDK_FN_GET_LISTENER_LOCAL_ADDRESS NdkGetLocalAddress;
    NDK_FN_CONTROL_CONNECT_EVENTS NdkControlConnectEvents;
} NDK_LISTENER_DISPATCH;

struct _NDK_LISTENER {
    NDK_OBJECT_HEADER Header;
    CONST NDK_LISTENER_DISPATCH* Dispatch;  /* consumer side's; never read back */
};

/* ======================================================================
 * Adapter (root object). Opened through NDIS (OPEN_NDK_ADAPTER_HANDLER) or
 * WSK (WskOpenNdkAdapter) and closed the same way: the adapter dispatch table
 * has NO close slot.
 * ====================================================================== */

typedef struct _NDK_ADAPTER NDK_ADAPTER;

/* PASSIVE_LEVEL, blocking. STATUS_BUFFER_TOO_SMALL returns the size needed. */
typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(*NDK_FN_QUERY_ADAPTER_INFO)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _Out_writes_bytes_to_opt_(*pBufferSize, *pBufferSize) NDK_ADAPTER_INFO* pInfo,
    _Inout_ ULONG* pBufferSize
    );

/* Undocumented, and in no dispatch table; declared for header compatibility. */
typedef
_IRQL_requires_max_(PASSIVE_LEVEL)
NTSTATUS
(*NDK_FN_QUERY_ADAPTER_INFO_EX)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _In_ NDK_VERSION Version,
    _Out_writes_bytes_to_opt_(*pBufferSize, *pBufferSize) NDK_ADAPTER_INFO* pInfo,
    _Inout_ ULONG* pBufferSize
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_CQ)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _In_ ULONG CqDepth,
    _In_ NDK_FN_CQ_NOTIFICATION_CALLBACK CqNotification,
    _In_opt_ PVOID CqNotificationContext,
    _In_opt_ GROUP_AFFINITY* Affinity,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_CQ** ppNdkCq
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_PD)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_PD** ppNdkPd
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_SHARED_ENDPOINT)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _In_reads_bytes_(AddressLength) CONST PSOCKADDR pAddress,
    _In_ ULONG AddressLength,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_SHARED_ENDPOINT** ppNdkSharedEndpoint
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_CONNECTOR)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_CONNECTOR** ppNdkConnector
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_CREATE_LISTENER)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _In_ NDK_FN_CONNECT_EVENT_CALLBACK ConnectEvent,
    _In_opt_ PVOID ConnectEventContext,
    _In_ NDK_FN_CREATE_COMPLETION CreateCompletion,
    _In_opt_ PVOID RequestContext,
    _Outptr_ NDK_LISTENER** ppNdkListener
    );

/* Maps the first Length bytes at MmGetMdlVirtualAddress(Mdl) to PAGE_SIZE
 * adapter pages; *pFBO is the first byte's offset into page 0. */
typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
NTSTATUS
(*NDK_FN_BUILD_LAM)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _In_ MDL* Mdl,
    _In_ SIZE_T Length,
    _In_opt_ NDK_FN_REQUEST_COMPLETION RequestCompletion,
    _In_opt_ PVOID RequestContext,
    _Out_writes_bytes_to_opt_(*pLAMSize, *pLAMSize) NDK_LOGICAL_ADDRESS_MAPPING* pNdkLAM,
    _Inout_ ULONG* pLAMSize,
    _Out_ ULONG* pFBO
    );

typedef
_IRQL_requires_max_(DISPATCH_LEVEL)
VOID
(*NDK_FN_RELEASE_LAM)(
    _In_ NDK_ADAPTER* pNdkAdapter,
    _In_ NDK_LOGICAL_ADDRESS_MAPPING* pNdkLAM
    );

/* 9 slots; unlike every other table, no close slot comes first. */
typedef struct _NDK_ADAPTER_DISPATCH {
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_QUERY_ADAPTER_INFO NdkQueryAdapterInfo;
    NDK_FN_CREATE_CQ NdkCreateCq;
    NDK_FN_CREATE_PD NdkCreatePd;
    NDK_FN_CREATE_SHARED_ENDPOINT NdkCreateSharedEndpoint;
    NDK_FN_CREATE_CONNECTOR NdkCreateConnector;
    NDK_FN_CREATE_LISTENER NdkCreateListener;
    NDK_FN_BUILD_LAM NdkBuildLAM;
    NDK_FN_RELEASE_LAM NdkReleaseLAM;
} NDK_ADAPTER_DISPATCH;

struct _NDK_ADAPTER {
    NDK_OBJECT_HEADER Header;
    CONST NDK_ADAPTER_DISPATCH* Dispatch;   /* consumer side's; never read back */
};

#ifdef __cplusplus
}
#endif

/* clang-format on */

#endif /* _NDKPI_H_ */
