/*
 * rdma_socket.h - a small RDMA-socket library for Windows kernel NDK consumers.
 *
 * Written as kernel-mode C against the WDK's headers only; the same source
 * builds for Windows (WDK) and for SoftNDK (include path and link are all that
 * differ). It wraps the NDKPI object dance that every kernel consumer repeats:
 *
 *   RsWskStart / RsWskStop       WskRegister -> WskCaptureProviderNPI ->
 *                                WskControlClient(WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH)
 *   RsOpenAdapter / RsCloseAdapter  WskOpenNdkAdapter + NdkQueryAdapterInfo
 *   RsSocketCreate               PD, CQ (armed on demand, notification -> KEVENT), QP
 *   RsListen, RsWaitConnectRequest, RsAccept / RsReject      passive side
 *   RsConnect, RsCompleteConnect / RsReject                  active side
 *   RsBufferCreate               pool + MDL + NdkRegisterMr (local buffers)
 *   RsRegionCreate, RsRegionFastRegister   pool + MDL + NdkBuildLAM + fast-register MR
 *   RsPostReceive, RsWaitForRequest        receives and their completions
 *   RsSend, RsSendAndInvalidate, RsWrite, RsRead   post and wait for the completion
 *   RsDisconnect, RsWaitForDisconnect, RsShutdown, RsSocketClose, RsRegionDelete, ...
 *
 * Every asynchronous NDK call follows the documented contract: STATUS_PENDING
 * means the completion callback will run exactly once (the caller sleeps on a
 * KEVENT it sets), any other status is the final, synchronous result and the
 * callback never runs. Callers run at PASSIVE_LEVEL. One thread at a time uses
 * a given RS_SOCKET: NDKPI requires the consumer to serialize polling and
 * arming of a CQ and posting to one queue.
 */
#ifndef RDMA_SOCKET_H
#define RDMA_SOCKET_H

/* The WDK's order: ndkpi.h and wskndk.h use what the headers before them declare. */
/* clang-format off */
#include <ntddk.h>
#include <wsk.h>
#include <ndkpi.h>
#include <ifdef.h> /* NET_IFINDEX: the WDK's wskndk.h expects it declared */
#include <wskndk.h>
/* clang-format on */

#ifdef __cplusplus
extern "C" {
#endif

/* Pool tag 'RdSk' as it reads in a pool dump (hex: GCC warns on 'kSdR'). */
#define RS_POOL_TAG ((ULONG)0x6B536452)

/* How long RsSend, RsWrite, ... and RsRegionFastRegister wait for their completion. */
#define RS_REQUEST_TIMEOUT_MS 10000

/* Completions that arrived while the caller waited for another request. */
#define RS_STASH_SIZE 16

/* ---- The WSK client through which adapters are opened. */
typedef struct _RS_WSK {
    WSK_CLIENT_DISPATCH ClientDispatch;
    WSK_CLIENT_NPI ClientNpi;
    WSK_REGISTRATION Registration;
    WSK_PROVIDER_NPI ProviderNpi;
    WSK_PROVIDER_NDK_DISPATCH Ndk; /* a copy, as WskControlClient returns it */
    BOOLEAN Registered;
    BOOLEAN Captured;
} RS_WSK;

typedef struct _RS_ADAPTER {
    RS_WSK *Wsk;
    NDK_ADAPTER *Ndk;
    NDK_ADAPTER_INFO Info;
    NET_IFINDEX IfIndex;
} RS_ADAPTER;

/* A local buffer registered with NdkRegisterMr: the source and sink of sends,
 * receives, RDMA writes and RDMA reads. */
typedef struct _RS_BUFFER {
    PUCHAR Data;
    SIZE_T Length;
    PMDL Mdl;
    NDK_MR *Mr;
    BOOLEAN Registered;
    UINT32 LocalToken;
} RS_BUFFER;

/* Memory that the peer reads and writes: a fast-register MR over a LAM of a
 * non-paged pool allocation. Data starts Offset bytes into the allocation. */
typedef struct _RS_REGION {
    PUCHAR Allocation;
    SIZE_T AllocationLength;
    PUCHAR Data;
    SIZE_T Length;
    PMDL Mdl;
    NDK_LOGICAL_ADDRESS_MAPPING *Lam; /* pool, LamSize bytes */
    ULONG LamSize;
    ULONG Fbo; /* offset of Data in the LAM's first page */
    BOOLEAN LamBuilt;
    NDK_MR *Mr;
    UINT32 RemoteToken;
    BOOLEAN Registered; /* fast-registered and not yet invalidated */
} RS_REGION;

/* One reliable connection: PD, CQ (shared by both queues), QP, connector. */
typedef struct _RS_SOCKET {
    RS_ADAPTER *Adapter;
    NDK_PD *Pd;
    NDK_CQ *Cq;
    NDK_QP *Qp;
    NDK_CONNECTOR *Connector;
    BOOLEAN Connected;
    ULONG InboundReadLimit;  /* IRD asked for at connect/accept */
    ULONG OutboundReadLimit; /* ORD asked for at connect/accept */
    KEVENT CqEvent;          /* set by the CQ notification */
    volatile NTSTATUS CqError;
    KEVENT DisconnectEvent; /* set by the connector's disconnect event */
    ULONG Stashed;
    NDK_RESULT_EX Stash[RS_STASH_SIZE];
} RS_SOCKET;

typedef struct _RS_LISTENER {
    RS_ADAPTER *Adapter;
    NDK_LISTENER *Ndk;
    KSPIN_LOCK Lock;         /* guards Incoming against the connect event */
    NDK_CONNECTOR *Incoming; /* delivered, not yet taken by RsWaitConnectRequest */
    KEVENT ConnectEvent;
} RS_LISTENER;

/* ---- WSK and adapters. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS RsWskStart(_Out_ RS_WSK *Wsk);
_IRQL_requires_(PASSIVE_LEVEL) VOID RsWskStop(_Inout_ RS_WSK *Wsk);
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsOpenAdapter(_In_ RS_WSK *Wsk, _In_ NET_IFINDEX IfIndex, _Out_ RS_ADAPTER *Adapter);
/* Blocks until every callback on every object of the adapter has returned. */
_IRQL_requires_(PASSIVE_LEVEL) VOID RsCloseAdapter(_Inout_ RS_ADAPTER *Adapter);
/* NdkSendAndInvalidate and NdkOperationTypeReceiveAndInvalidate need NDKPI 1.2. */
BOOLEAN RsAdapterSupportsRemoteInvalidate(_In_ const RS_ADAPTER *Adapter);

/* ---- Sockets. Depth bounds the receive queue, the send queue and (twice) the CQ. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsSocketCreate(_In_ RS_ADAPTER *Adapter, _In_ ULONG Depth, _Out_ RS_SOCKET *Socket);
/* Graceful disconnect if still connected, then closes the connector and the QP:
 * what must go before the socket's MRs are closed. */
_IRQL_requires_(PASSIVE_LEVEL) VOID RsShutdown(_Inout_ RS_SOCKET *Socket);
/* RsShutdown, then the CQ and the PD. Buffers and regions must be deleted first. */
_IRQL_requires_(PASSIVE_LEVEL) VOID RsSocketClose(_Inout_ RS_SOCKET *Socket);

/* ---- Passive side. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsListen(_In_ RS_ADAPTER *Adapter, _In_ PSOCKADDR Address, _In_ ULONG AddressLength,
             _Out_ RS_LISTENER *Listener);
_IRQL_requires_(PASSIVE_LEVEL) VOID RsListenerClose(_Inout_ RS_LISTENER *Listener);
/* Waits up to TimeoutMs for a connect request, gives its connector to Socket and
 * copies the request's private data (at most *DataLength bytes; on return
 * *DataLength is the provider's private-data size, not the bytes the peer sent). */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsWaitConnectRequest(_Inout_ RS_LISTENER *Listener, _In_ ULONG TimeoutMs,
                         _Inout_ RS_SOCKET *Socket, _Out_writes_bytes_(*DataLength) PVOID Data,
                         _Inout_ ULONG *DataLength);
/* Completes once the active side completed the connection. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsAccept(_Inout_ RS_SOCKET *Socket, _In_reads_bytes_opt_(ReplyLength) const VOID *Reply,
             _In_ ULONG ReplyLength);
/* Refuses a request (passive side) or the peer's answer (active side). */
_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS
    RsReject(_Inout_ RS_SOCKET *Socket, _In_reads_bytes_opt_(ReplyLength) const VOID *Reply,
             _In_ ULONG ReplyLength);

/* ---- Active side: RsConnect returns once the peer accepted, with the peer's
 * private data (as RsWaitConnectRequest); then RsCompleteConnect or RsReject. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsConnect(_Inout_ RS_SOCKET *Socket, _In_ PSOCKADDR Source, _In_ ULONG SourceLength,
              _In_ PSOCKADDR Destination, _In_ ULONG DestinationLength,
              _In_reads_bytes_opt_(PrivateDataLength) const VOID *PrivateData,
              _In_ ULONG PrivateDataLength, _Out_writes_bytes_(*PeerDataLength) PVOID PeerData,
              _Inout_ ULONG *PeerDataLength);
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS RsCompleteConnect(_Inout_ RS_SOCKET *Socket);

/* Graceful: completes after the peer answered. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS RsDisconnect(_Inout_ RS_SOCKET *Socket);
/* Waits up to TimeoutMs for the peer to disconnect. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsWaitForDisconnect(_Inout_ RS_SOCKET *Socket, _In_ ULONG TimeoutMs);

/* ---- Memory. */
/* Non-paged pool, described by an MDL and registered for local access plus MrFlags. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS RsBufferCreate(_In_ RS_SOCKET *Socket, _In_ SIZE_T Length,
                                                       _In_ ULONG MrFlags, _Out_ RS_BUFFER *Buffer);
_IRQL_requires_(PASSIVE_LEVEL) VOID RsBufferDelete(_Inout_ RS_BUFFER *Buffer);
/* Allocates Offset + Length bytes of non-paged pool, builds the LAM of
 * [Offset, Offset + Length) and prepares a fast-register MR for it. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS RsRegionCreate(_In_ RS_SOCKET *Socket, _In_ SIZE_T Length,
                                                       _In_ ULONG Offset, _Out_ RS_REGION *Region);
/* Posts NdkFastRegister with Flags (NDK_OP_FLAG_ALLOW_*) on the connected QP and
 * waits for its completion; Region->RemoteToken is then what the peer uses. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsRegionFastRegister(_Inout_ RS_SOCKET *Socket, _Inout_ RS_REGION *Region, _In_ ULONG Flags);
/* Closes the MR, releases the LAM, frees the MDL and the pool. No work request
 * may still use the region. */
_IRQL_requires_(PASSIVE_LEVEL) VOID
    RsRegionDelete(_In_ RS_ADAPTER *Adapter, _Inout_ RS_REGION *Region);

/* ---- Data transfer. Offset/Length select a part of Buffer. */
_IRQL_requires_max_(DISPATCH_LEVEL) NTSTATUS
    RsPostReceive(_Inout_ RS_SOCKET *Socket, _In_opt_ PVOID RequestContext,
                  _In_ const RS_BUFFER *Buffer, _In_ SIZE_T Offset, _In_ ULONG Length);
/* Waits up to TimeoutMs for the completion of the request posted with
 * RequestContext; other completions that arrive meanwhile are kept for later
 * calls. STATUS_SUCCESS means *Result holds the completion (whose own Status
 * may be a failure); STATUS_IO_TIMEOUT, STATUS_CONNECTION_DISCONNECTED or a CQ
 * error otherwise. After a timeout the request is still outstanding: close the
 * socket rather than reuse it. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsWaitForRequest(_Inout_ RS_SOCKET *Socket, _In_opt_ PVOID RequestContext, _In_ ULONG TimeoutMs,
                     _Out_ NDK_RESULT_EX *Result);
/* Post, then wait for the request's completion: its status is returned. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsSend(_Inout_ RS_SOCKET *Socket, _In_ const RS_BUFFER *Buffer, _In_ SIZE_T Offset,
           _In_ ULONG Length);
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsSendAndInvalidate(_Inout_ RS_SOCKET *Socket, _In_ const RS_BUFFER *Buffer, _In_ SIZE_T Offset,
                        _In_ ULONG Length, _In_ UINT32 RemoteToken);
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsWrite(_Inout_ RS_SOCKET *Socket, _In_ const RS_BUFFER *Buffer, _In_ SIZE_T Offset,
            _In_ ULONG Length, _In_ UINT64 RemoteAddress, _In_ UINT32 RemoteToken);
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    RsRead(_Inout_ RS_SOCKET *Socket, _In_ const RS_BUFFER *Buffer, _In_ SIZE_T Offset,
           _In_ ULONG Length, _In_ UINT64 RemoteAddress, _In_ UINT32 RemoteToken);

#ifdef __cplusplus
}
#endif

#endif /* RDMA_SOCKET_H */
