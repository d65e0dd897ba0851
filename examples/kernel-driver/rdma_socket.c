/*
 * rdma_socket.c - see rdma_socket.h. Kernel-mode C: WDK headers only.
 */
#include "rdma_socket.h"

#define RS_LOG(Format, ...) \
    DbgPrintEx(DPFLTR_IHVNETWORK_ID, DPFLTR_ERROR_LEVEL, "rdma_socket: " Format "\n", __VA_ARGS__)

/* Relative timeouts are negative multiples of 100 ns. */
#define RS_RELATIVE_MS(Ms) (-10000LL * (LONGLONG)(Ms))

static NTSTATUS RsFailed(const char *What, NTSTATUS Status) {
    RS_LOG("%s failed: 0x%08X", What, (unsigned)Status);
    return Status;
}

/* ------------------------------------------------------------------------- */
/* Asynchronous calls made synchronous                                        */
/* ------------------------------------------------------------------------- */

/* Lives on the waiting thread's stack for the duration of one call: the
 * provider calls back exactly once after STATUS_PENDING, so the wait has no
 * timeout (returning early would leave the callback a dangling pointer). */
typedef struct _RS_SYNC {
    KEVENT Event;
    NTSTATUS Status;
    NDK_OBJECT_HEADER *Object;
} RS_SYNC;

static VOID RsSyncInit(RS_SYNC *Sync) {
    KeInitializeEvent(&Sync->Event, NotificationEvent, FALSE);
    Sync->Status = STATUS_PENDING;
    Sync->Object = NULL;
}

/* The status goes in before KeSetEvent: once the waiter wakes, its stack
 * frame (and *Sync) may be gone. */
static VOID RsRequestCompletion(PVOID Context, NTSTATUS Status) {
    RS_SYNC *sync = (RS_SYNC *)Context;
    sync->Status = Status;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

static VOID RsCreateCompletion(PVOID Context, NTSTATUS Status, NDK_OBJECT_HEADER *Object) {
    RS_SYNC *sync = (RS_SYNC *)Context;
    sync->Object = Object;
    sync->Status = Status;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

static VOID RsCloseCompletion(PVOID Context) {
    RS_SYNC *sync = (RS_SYNC *)Context;
    sync->Status = STATUS_SUCCESS;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

static NTSTATUS RsFinish(RS_SYNC *Sync, NTSTATUS Status) {
    if (Status != STATUS_PENDING) return Status;
    KeWaitForSingleObject(&Sync->Event, Executive, KernelMode, FALSE, NULL);
    return Sync->Status;
}

/* A create returns its object through *Out when it succeeds inline, and
 * through the completion's header after STATUS_PENDING. */
static NTSTATUS RsFinishCreate(RS_SYNC *Sync, NTSTATUS Status, PVOID *Out) {
    if (Status == STATUS_PENDING) {
        Status = RsFinish(Sync, Status);
        *Out = NT_SUCCESS(Status) ? (PVOID)Sync->Object : NULL;
    } else if (!NT_SUCCESS(Status)) {
        *Out = NULL;
    }
    return Status;
}

static VOID RsClose(NDK_OBJECT_HEADER *Object, NDK_FN_CLOSE_OBJECT CloseFn) {
    RS_SYNC sync;
    RsSyncInit(&sync);
    /* Close cannot fail: SUCCESS, or PENDING and the callback. */
    RsFinish(&sync, CloseFn(Object, RsCloseCompletion, &sync));
}

/* ------------------------------------------------------------------------- */
/* WSK and adapters                                                           */
/* ------------------------------------------------------------------------- */

NTSTATUS RsWskStart(RS_WSK *Wsk) {
    NTSTATUS status;
    RtlZeroMemory(Wsk, sizeof *Wsk);
    Wsk->ClientDispatch.Version = MAKE_WSK_VERSION(1, 0);
    Wsk->ClientNpi.Dispatch = &Wsk->ClientDispatch;
    status = WskRegister(&Wsk->ClientNpi, &Wsk->Registration);
    if (!NT_SUCCESS(status)) return RsFailed("WskRegister", status);
    Wsk->Registered = TRUE;
    status = WskCaptureProviderNPI(&Wsk->Registration, WSK_INFINITE_WAIT, &Wsk->ProviderNpi);
    if (!NT_SUCCESS(status)) {
        RsWskStop(Wsk);
        return RsFailed("WskCaptureProviderNPI", status);
    }
    Wsk->Captured = TRUE;
    /* The output buffer receives the two-pointer table itself. */
    status = Wsk->ProviderNpi.Dispatch->WskControlClient(
        Wsk->ProviderNpi.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
        sizeof(WSK_PROVIDER_NDK_DISPATCH), &Wsk->Ndk, NULL, NULL);
    if (!NT_SUCCESS(status)) {
        RsWskStop(Wsk);
        return RsFailed("WskControlClient(WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH)", status);
    }
    return STATUS_SUCCESS;
}

VOID RsWskStop(RS_WSK *Wsk) {
    if (Wsk->Captured) WskReleaseProviderNPI(&Wsk->Registration);
    if (Wsk->Registered) WskDeregister(&Wsk->Registration);
    Wsk->Captured = FALSE;
    Wsk->Registered = FALSE;
}

NTSTATUS RsOpenAdapter(RS_WSK *Wsk, NET_IFINDEX IfIndex, RS_ADAPTER *Adapter) {
    const NDK_VERSION version = {1, 0}; /* major 1, any minor: Info.Version says which */
    ULONG size = sizeof Adapter->Info;
    NTSTATUS status;

    RtlZeroMemory(Adapter, sizeof *Adapter);
    Adapter->Wsk = Wsk;
    Adapter->IfIndex = IfIndex;
    status = Wsk->Ndk.WskOpenNdkAdapter(Wsk->ProviderNpi.Client, version, IfIndex, &Adapter->Ndk);
    if (!NT_SUCCESS(status)) {
        Adapter->Ndk = NULL;
        return RsFailed("WskOpenNdkAdapter", status);
    }
    status = Adapter->Ndk->Dispatch->NdkQueryAdapterInfo(Adapter->Ndk, &Adapter->Info, &size);
    if (!NT_SUCCESS(status)) {
        RsCloseAdapter(Adapter);
        return RsFailed("NdkQueryAdapterInfo", status);
    }
    return STATUS_SUCCESS;
}

VOID RsCloseAdapter(RS_ADAPTER *Adapter) {
    if (Adapter->Ndk != NULL)
        Adapter->Wsk->Ndk.WskCloseNdkAdapter(Adapter->Wsk->ProviderNpi.Client, Adapter->Ndk);
    Adapter->Ndk = NULL;
}

BOOLEAN RsAdapterSupportsRemoteInvalidate(const RS_ADAPTER *Adapter) {
    const NDK_VERSION v = Adapter->Info.Version;
    return (BOOLEAN)(v.Major > 1 || (v.Major == 1 && v.Minor >= 2));
}

/* ------------------------------------------------------------------------- */
/* Sockets                                                                    */
/* ------------------------------------------------------------------------- */

/* Provider thread, must not block. One-shot per arm: RsWaitForRequest re-arms. */
static VOID RsCqNotification(PVOID Context, NTSTATUS CqStatus) {
    RS_SOCKET *socket = (RS_SOCKET *)Context;
    if (!NT_SUCCESS(CqStatus)) socket->CqError = CqStatus;
    KeSetEvent(&socket->CqEvent, IO_NO_INCREMENT, FALSE);
}

static VOID RsDisconnectEvent(PVOID Context) {
    RS_SOCKET *socket = (RS_SOCKET *)Context;
    KeSetEvent(&socket->DisconnectEvent, IO_NO_INCREMENT, FALSE);
}

NTSTATUS RsSocketCreate(RS_ADAPTER *Adapter, ULONG Depth, RS_SOCKET *Socket) {
    NDK_ADAPTER *adapter = Adapter->Ndk;
    const NDK_ADAPTER_INFO *info = &Adapter->Info;
    RS_SYNC sync;
    NTSTATUS status;

    RtlZeroMemory(Socket, sizeof *Socket);
    Socket->Adapter = Adapter;
    Socket->CqError = STATUS_SUCCESS;
    KeInitializeEvent(&Socket->CqEvent, SynchronizationEvent, FALSE);
    KeInitializeEvent(&Socket->DisconnectEvent, NotificationEvent, FALSE);
    /* Reads in flight: a few are plenty here; the provider caps them anyway. */
    Socket->InboundReadLimit = info->MaxInboundReadLimit < 4 ? info->MaxInboundReadLimit : 4;
    Socket->OutboundReadLimit = info->MaxOutboundReadLimit < 4 ? info->MaxOutboundReadLimit : 4;

    if (Depth > info->MaxReceiveQueueDepth || Depth > info->MaxInitiatorQueueDepth ||
        2 * Depth > info->MaxCqDepth)
        return RsFailed("RsSocketCreate (depth exceeds the adapter's limits)",
                        STATUS_INVALID_PARAMETER);

    RsSyncInit(&sync);
    status = RsFinishCreate(
        &sync, adapter->Dispatch->NdkCreatePd(adapter, RsCreateCompletion, &sync, &Socket->Pd),
        (PVOID *)&Socket->Pd);
    if (!NT_SUCCESS(status)) return RsFailed("NdkCreatePd", status);

    /* One CQ for both queues: every posted request may complete at once. */
    RsSyncInit(&sync);
    status =
        RsFinishCreate(&sync,
                       adapter->Dispatch->NdkCreateCq(adapter, 2 * Depth, RsCqNotification, Socket,
                                                      NULL, RsCreateCompletion, &sync, &Socket->Cq),
                       (PVOID *)&Socket->Cq);
    if (!NT_SUCCESS(status)) {
        RsSocketClose(Socket);
        return RsFailed("NdkCreateCq", status);
    }

    RsSyncInit(&sync);
    status = RsFinishCreate(
        &sync,
        Socket->Pd->Dispatch->NdkCreateQp(Socket->Pd, Socket->Cq, Socket->Cq, Socket, Depth, Depth,
                                          1, 1, 0, RsCreateCompletion, &sync, &Socket->Qp),
        (PVOID *)&Socket->Qp);
    if (!NT_SUCCESS(status)) {
        RsSocketClose(Socket);
        return RsFailed("NdkCreateQp", status);
    }
    return STATUS_SUCCESS;
}

VOID RsShutdown(RS_SOCKET *Socket) {
    if (Socket->Connected) {
        const NTSTATUS status = RsDisconnect(Socket);
        if (!NT_SUCCESS(status)) RsFailed("NdkDisconnect", status);
    }
    /* Connector before QP (ndkpi-api 7.5): the connector is using the QP. */
    if (Socket->Connector != NULL)
        RsClose(&Socket->Connector->Header, Socket->Connector->Dispatch->NdkCloseConnector);
    Socket->Connector = NULL;
    if (Socket->Qp != NULL) RsClose(&Socket->Qp->Header, Socket->Qp->Dispatch->NdkCloseQp);
    Socket->Qp = NULL;
}

VOID RsSocketClose(RS_SOCKET *Socket) {
    RsShutdown(Socket);
    if (Socket->Cq != NULL) RsClose(&Socket->Cq->Header, Socket->Cq->Dispatch->NdkCloseCq);
    Socket->Cq = NULL;
    if (Socket->Pd != NULL) RsClose(&Socket->Pd->Header, Socket->Pd->Dispatch->NdkClosePd);
    Socket->Pd = NULL;
}

/* ------------------------------------------------------------------------- */
/* Connection establishment and teardown                                      */
/* ------------------------------------------------------------------------- */

/* A close nobody waits for (it must not block a provider thread). */
static VOID RsIgnoreClose(PVOID Context) {
    UNREFERENCED_PARAMETER(Context);
}

/* Provider thread, must not block: the connector is parked for
 * RsWaitConnectRequest. This library serves one request at a time; closing an
 * incoming connector that is not accepted rejects it. */
static VOID RsConnectEvent(PVOID Context, NDK_CONNECTOR *Connector) {
    RS_LISTENER *listener = (RS_LISTENER *)Context;
    KIRQL irql;
    BOOLEAN taken = FALSE;
    KeAcquireSpinLock(&listener->Lock, &irql);
    if (listener->Incoming == NULL) {
        listener->Incoming = Connector;
        taken = TRUE;
    }
    KeReleaseSpinLock(&listener->Lock, irql);
    if (!taken) {
        Connector->Dispatch->NdkCloseConnector(&Connector->Header, RsIgnoreClose, NULL);
        return;
    }
    KeSetEvent(&listener->ConnectEvent, IO_NO_INCREMENT, FALSE);
}

NTSTATUS RsListen(RS_ADAPTER *Adapter, PSOCKADDR Address, ULONG AddressLength,
                  RS_LISTENER *Listener) {
    NDK_ADAPTER *adapter = Adapter->Ndk;
    RS_SYNC sync;
    NTSTATUS status;

    RtlZeroMemory(Listener, sizeof *Listener);
    Listener->Adapter = Adapter;
    KeInitializeSpinLock(&Listener->Lock);
    KeInitializeEvent(&Listener->ConnectEvent, SynchronizationEvent, FALSE);
    RsSyncInit(&sync);
    status = RsFinishCreate(
        &sync,
        adapter->Dispatch->NdkCreateListener(adapter, RsConnectEvent, Listener, RsCreateCompletion,
                                             &sync, &Listener->Ndk),
        (PVOID *)&Listener->Ndk);
    if (!NT_SUCCESS(status)) return RsFailed("NdkCreateListener", status);
    RsSyncInit(&sync);
    status =
        RsFinish(&sync, Listener->Ndk->Dispatch->NdkListen(Listener->Ndk, Address, AddressLength,
                                                           RsRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) {
        RsListenerClose(Listener);
        return RsFailed("NdkListen", status);
    }
    return STATUS_SUCCESS;
}

VOID RsListenerClose(RS_LISTENER *Listener) {
    if (Listener->Ndk != NULL)
        RsClose(&Listener->Ndk->Header, Listener->Ndk->Dispatch->NdkCloseListener);
    Listener->Ndk = NULL;
    /* No connect event runs any more: a request nobody took is rejected. */
    if (Listener->Incoming != NULL)
        RsClose(&Listener->Incoming->Header, Listener->Incoming->Dispatch->NdkCloseConnector);
    Listener->Incoming = NULL;
}

/* The peer's private data. The provider reports its buffer size, which says
 * nothing of how many bytes the peer sent: callers frame their own data. */
static NTSTATUS RsReadConnectionData(NDK_CONNECTOR *Connector, PVOID Data, ULONG *DataLength) {
    ULONG available = *DataLength;
    NTSTATUS status;
    RtlZeroMemory(Data, available);
    status = Connector->Dispatch->NdkGetConnectionData(Connector, NULL, NULL, Data, DataLength);
    if (status == STATUS_BUFFER_TOO_SMALL) {
        /* The first *DataLength bytes were copied: enough for a framed header. */
        *DataLength = available;
        status = STATUS_SUCCESS;
    }
    if (!NT_SUCCESS(status)) return RsFailed("NdkGetConnectionData", status);
    return STATUS_SUCCESS;
}

NTSTATUS RsWaitConnectRequest(RS_LISTENER *Listener, ULONG TimeoutMs, RS_SOCKET *Socket, PVOID Data,
                              ULONG *DataLength) {
    LARGE_INTEGER timeout;
    KIRQL irql;
    NDK_CONNECTOR *incoming;
    NTSTATUS status;

    timeout.QuadPart = RS_RELATIVE_MS(TimeoutMs);
    status = KeWaitForSingleObject(&Listener->ConnectEvent, Executive, KernelMode, FALSE, &timeout);
    if (status == STATUS_TIMEOUT)
        return RsFailed("waiting for a connect request", STATUS_IO_TIMEOUT);
    KeAcquireSpinLock(&Listener->Lock, &irql);
    incoming = Listener->Incoming;
    Listener->Incoming = NULL;
    KeReleaseSpinLock(&Listener->Lock, irql);
    if (incoming == NULL) return RsFailed("RsWaitConnectRequest", STATUS_CONNECTION_ABORTED);
    Socket->Connector = incoming; /* from now on RsShutdown closes (rejects) it */
    return RsReadConnectionData(incoming, Data, DataLength);
}

NTSTATUS RsAccept(RS_SOCKET *Socket, const VOID *Reply, ULONG ReplyLength) {
    RS_SYNC sync;
    NTSTATUS status;
    RsSyncInit(&sync);
    status = RsFinish(&sync, Socket->Connector->Dispatch->NdkAccept(
                                 Socket->Connector, Socket->Qp, Socket->InboundReadLimit,
                                 Socket->OutboundReadLimit, (PVOID)Reply, ReplyLength,
                                 RsDisconnectEvent, Socket, RsRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) return RsFailed("NdkAccept", status);
    Socket->Connected = TRUE;
    return STATUS_SUCCESS;
}

NTSTATUS RsReject(RS_SOCKET *Socket, const VOID *Reply, ULONG ReplyLength) {
    /* Synchronous: NdkReject has no completion callback. */
    const NTSTATUS status =
        Socket->Connector->Dispatch->NdkReject(Socket->Connector, (PVOID)Reply, ReplyLength);
    if (!NT_SUCCESS(status)) return RsFailed("NdkReject", status);
    return STATUS_SUCCESS;
}

NTSTATUS RsConnect(RS_SOCKET *Socket, PSOCKADDR Source, ULONG SourceLength, PSOCKADDR Destination,
                   ULONG DestinationLength, const VOID *PrivateData, ULONG PrivateDataLength,
                   PVOID PeerData, ULONG *PeerDataLength) {
    NDK_ADAPTER *adapter = Socket->Adapter->Ndk;
    RS_SYNC sync;
    NTSTATUS status;

    RsSyncInit(&sync);
    status = RsFinishCreate(&sync,
                            adapter->Dispatch->NdkCreateConnector(adapter, RsCreateCompletion,
                                                                  &sync, &Socket->Connector),
                            (PVOID *)&Socket->Connector);
    if (!NT_SUCCESS(status)) return RsFailed("NdkCreateConnector", status);
    RsSyncInit(&sync);
    status =
        RsFinish(&sync, Socket->Connector->Dispatch->NdkConnect(
                            Socket->Connector, Socket->Qp, Source, SourceLength, Destination,
                            DestinationLength, Socket->InboundReadLimit, Socket->OutboundReadLimit,
                            (PVOID)PrivateData, PrivateDataLength, RsRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) return RsFailed("NdkConnect", status);
    return RsReadConnectionData(Socket->Connector, PeerData, PeerDataLength);
}

NTSTATUS RsCompleteConnect(RS_SOCKET *Socket) {
    RS_SYNC sync;
    NTSTATUS status;
    RsSyncInit(&sync);
    status = RsFinish(
        &sync, Socket->Connector->Dispatch->NdkCompleteConnect(Socket->Connector, RsDisconnectEvent,
                                                               Socket, RsRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) return RsFailed("NdkCompleteConnect", status);
    Socket->Connected = TRUE;
    return STATUS_SUCCESS;
}

NTSTATUS RsDisconnect(RS_SOCKET *Socket) {
    RS_SYNC sync;
    NTSTATUS status;
    if (Socket->Connector == NULL) return STATUS_CONNECTION_INVALID;
    /* Whatever the outcome, the connection is over for this socket. */
    Socket->Connected = FALSE;
    RsSyncInit(&sync);
    status = RsFinish(&sync, Socket->Connector->Dispatch->NdkDisconnect(
                                 Socket->Connector, RsRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) return RsFailed("NdkDisconnect", status);
    return STATUS_SUCCESS;
}

NTSTATUS RsWaitForDisconnect(RS_SOCKET *Socket, ULONG TimeoutMs) {
    LARGE_INTEGER timeout;
    NTSTATUS status;
    timeout.QuadPart = RS_RELATIVE_MS(TimeoutMs);
    status =
        KeWaitForSingleObject(&Socket->DisconnectEvent, Executive, KernelMode, FALSE, &timeout);
    if (status == STATUS_TIMEOUT)
        return RsFailed("waiting for the peer's disconnect", STATUS_IO_TIMEOUT);
    /* The peer ended the connection: NdkDisconnect would only find it gone. */
    Socket->Connected = FALSE;
    return STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Memory                                                                     */
/* ------------------------------------------------------------------------- */

NTSTATUS RsBufferCreate(RS_SOCKET *Socket, SIZE_T Length, ULONG MrFlags, RS_BUFFER *Buffer) {
    RS_SYNC sync;
    NTSTATUS status;

    RtlZeroMemory(Buffer, sizeof *Buffer);
    Buffer->Length = Length;
    Buffer->Data = (PUCHAR)ExAllocatePool2(POOL_FLAG_NON_PAGED, Length, RS_POOL_TAG);
    if (Buffer->Data == NULL) return RsFailed("ExAllocatePool2", STATUS_INSUFFICIENT_RESOURCES);
    Buffer->Mdl = IoAllocateMdl(Buffer->Data, (ULONG)Length, FALSE, FALSE, NULL);
    if (Buffer->Mdl == NULL) {
        RsBufferDelete(Buffer);
        return RsFailed("IoAllocateMdl", STATUS_INSUFFICIENT_RESOURCES);
    }
    MmBuildMdlForNonPagedPool(Buffer->Mdl);

    RsSyncInit(&sync);
    status = RsFinishCreate(&sync,
                            Socket->Pd->Dispatch->NdkCreateMr(Socket->Pd, FALSE, RsCreateCompletion,
                                                              &sync, &Buffer->Mr),
                            (PVOID *)&Buffer->Mr);
    if (!NT_SUCCESS(status)) {
        RsBufferDelete(Buffer);
        return RsFailed("NdkCreateMr", status);
    }
    RsSyncInit(&sync);
    status =
        RsFinish(&sync, Buffer->Mr->Dispatch->NdkRegisterMr(Buffer->Mr, Buffer->Mdl, Length,
                                                            NDK_MR_FLAG_ALLOW_LOCAL_WRITE | MrFlags,
                                                            RsRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) {
        RsBufferDelete(Buffer);
        return RsFailed("NdkRegisterMr", status);
    }
    Buffer->Registered = TRUE;
    Buffer->LocalToken = Buffer->Mr->Dispatch->NdkGetLocalTokenFromMr(Buffer->Mr);
    return STATUS_SUCCESS;
}

VOID RsBufferDelete(RS_BUFFER *Buffer) {
    if (Buffer->Mr != NULL) {
        if (Buffer->Registered) {
            RS_SYNC sync;
            NTSTATUS status;
            RsSyncInit(&sync);
            status = RsFinish(&sync, Buffer->Mr->Dispatch->NdkDeregisterMr(
                                         Buffer->Mr, RsRequestCompletion, &sync));
            if (!NT_SUCCESS(status)) RsFailed("NdkDeregisterMr", status);
        }
        RsClose(&Buffer->Mr->Header, Buffer->Mr->Dispatch->NdkCloseMr);
    }
    /* The MDL and the memory outlive the registration that used them. */
    if (Buffer->Mdl != NULL) IoFreeMdl(Buffer->Mdl);
    if (Buffer->Data != NULL) ExFreePoolWithTag(Buffer->Data, RS_POOL_TAG);
    RtlZeroMemory(Buffer, sizeof *Buffer);
}

/* NdkBuildLAM as the documentation prescribes: a size query first, then the
 * call with a buffer of the size the provider asked for. */
static NTSTATUS RsBuildLam(NDK_ADAPTER *Adapter, RS_REGION *Region) {
    RS_SYNC sync;
    NTSTATUS status;

    Region->LamSize = 0;
    RsSyncInit(&sync);
    status = RsFinish(&sync, Adapter->Dispatch->NdkBuildLAM(Adapter, Region->Mdl, Region->Length,
                                                            RsRequestCompletion, &sync, NULL,
                                                            &Region->LamSize, &Region->Fbo));
    if (status != STATUS_BUFFER_TOO_SMALL) {
        if (NT_SUCCESS(status)) status = STATUS_INVALID_DEVICE_STATE; /* no buffer, no LAM */
        return RsFailed("NdkBuildLAM (size query)", status);
    }
    Region->Lam = (NDK_LOGICAL_ADDRESS_MAPPING *)ExAllocatePool2(POOL_FLAG_NON_PAGED,
                                                                 Region->LamSize, RS_POOL_TAG);
    if (Region->Lam == NULL) return RsFailed("ExAllocatePool2", STATUS_INSUFFICIENT_RESOURCES);
    RsSyncInit(&sync);
    status = RsFinish(&sync, Adapter->Dispatch->NdkBuildLAM(Adapter, Region->Mdl, Region->Length,
                                                            RsRequestCompletion, &sync, Region->Lam,
                                                            &Region->LamSize, &Region->Fbo));
    if (!NT_SUCCESS(status)) return RsFailed("NdkBuildLAM", status);
    Region->LamBuilt = TRUE;
    return STATUS_SUCCESS;
}

NTSTATUS RsRegionCreate(RS_SOCKET *Socket, SIZE_T Length, ULONG Offset, RS_REGION *Region) {
    RS_SYNC sync;
    NTSTATUS status;

    RtlZeroMemory(Region, sizeof *Region);
    Region->AllocationLength = Offset + Length;
    Region->Length = Length;
    /* Pool blocks of PAGE_SIZE or more are page aligned: Data's offset in its
     * first page, and so the LAM's FBO, is Offset % PAGE_SIZE. */
    Region->Allocation =
        (PUCHAR)ExAllocatePool2(POOL_FLAG_NON_PAGED, Region->AllocationLength, RS_POOL_TAG);
    if (Region->Allocation == NULL)
        return RsFailed("ExAllocatePool2", STATUS_INSUFFICIENT_RESOURCES);
    Region->Data = Region->Allocation + Offset;
    Region->Mdl = IoAllocateMdl(Region->Data, (ULONG)Length, FALSE, FALSE, NULL);
    if (Region->Mdl == NULL) {
        RsRegionDelete(Socket->Adapter, Region);
        return RsFailed("IoAllocateMdl", STATUS_INSUFFICIENT_RESOURCES);
    }
    MmBuildMdlForNonPagedPool(Region->Mdl);

    status = RsBuildLam(Socket->Adapter->Ndk, Region);
    if (NT_SUCCESS(status) && Region->Lam->AdapterPageCount > Socket->Adapter->Info.FRMRPageCount)
        status =
            RsFailed("RsRegionCreate (more pages than FRMRPageCount)", STATUS_IMPLEMENTATION_LIMIT);
    if (!NT_SUCCESS(status)) {
        RsRegionDelete(Socket->Adapter, Region);
        return status;
    }

    RsSyncInit(&sync);
    status = RsFinishCreate(
        &sync,
        Socket->Pd->Dispatch->NdkCreateMr(Socket->Pd, TRUE, RsCreateCompletion, &sync, &Region->Mr),
        (PVOID *)&Region->Mr);
    if (!NT_SUCCESS(status)) {
        RsRegionDelete(Socket->Adapter, Region);
        return RsFailed("NdkCreateMr (fast register)", status);
    }
    /* RemoteAccess TRUE: the registrations will grant the peer read and write. */
    RsSyncInit(&sync);
    status = RsFinish(
        &sync, Region->Mr->Dispatch->NdkInitializeFastRegisterMr(
                   Region->Mr, Region->Lam->AdapterPageCount, TRUE, RsRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) {
        RsRegionDelete(Socket->Adapter, Region);
        return RsFailed("NdkInitializeFastRegisterMr", status);
    }
    return STATUS_SUCCESS;
}

NTSTATUS RsRegionFastRegister(RS_SOCKET *Socket, RS_REGION *Region, ULONG Flags) {
    NDK_RESULT_EX result;
    NTSTATUS status;
    /* A stack address is a request context no other outstanding request has. */
    PVOID context = &result;

    status = Socket->Qp->Dispatch->NdkFastRegister(
        Socket->Qp, context, Region->Mr, Region->Lam->AdapterPageCount,
        Region->Lam->AdapterPageArray, Region->Fbo, Region->Length, Region->Data, Flags);
    if (!NT_SUCCESS(status)) return RsFailed("NdkFastRegister", status);
    status = RsWaitForRequest(Socket, context, RS_REQUEST_TIMEOUT_MS, &result);
    if (!NT_SUCCESS(status)) return status;
    if (!NT_SUCCESS(result.Status)) return RsFailed("NdkFastRegister completion", result.Status);
    Region->RemoteToken = Region->Mr->Dispatch->NdkGetRemoteTokenFromMr(Region->Mr);
    Region->Registered = TRUE;
    return STATUS_SUCCESS;
}

VOID RsRegionDelete(RS_ADAPTER *Adapter, RS_REGION *Region) {
    /* The MR maps the LAM's pages: it goes first, the memory last. */
    if (Region->Mr != NULL) RsClose(&Region->Mr->Header, Region->Mr->Dispatch->NdkCloseMr);
    if (Region->LamBuilt) Adapter->Ndk->Dispatch->NdkReleaseLAM(Adapter->Ndk, Region->Lam);
    if (Region->Lam != NULL) ExFreePoolWithTag(Region->Lam, RS_POOL_TAG);
    if (Region->Mdl != NULL) IoFreeMdl(Region->Mdl);
    if (Region->Allocation != NULL) ExFreePoolWithTag(Region->Allocation, RS_POOL_TAG);
    RtlZeroMemory(Region, sizeof *Region);
}

/* ------------------------------------------------------------------------- */
/* Data transfer                                                              */
/* ------------------------------------------------------------------------- */

static NDK_SGE RsSge(const RS_BUFFER *Buffer, SIZE_T Offset, ULONG Length) {
    NDK_SGE sge;
    sge.VirtualAddress = Buffer->Data + Offset;
    sge.Length = Length;
    sge.MemoryRegionToken = Buffer->LocalToken;
    return sge;
}

NTSTATUS RsPostReceive(RS_SOCKET *Socket, PVOID RequestContext, const RS_BUFFER *Buffer,
                       SIZE_T Offset, ULONG Length) {
    const NDK_SGE sge = RsSge(Buffer, Offset, Length);
    const NTSTATUS status = Socket->Qp->Dispatch->NdkReceive(Socket->Qp, RequestContext, &sge, 1);
    if (!NT_SUCCESS(status)) return RsFailed("NdkReceive", status);
    return STATUS_SUCCESS;
}

/* Dequeues what the CQ holds into the stash; FALSE if it was empty. NDKPI 1.2
 * adapters give NDK_RESULT_EX (the operation type, the invalidated token);
 * older ones only NDK_RESULT. */
static BOOLEAN RsPollCq(RS_SOCKET *Socket, NTSTATUS *Status) {
    NDK_CQ *cq = Socket->Cq;
    const ULONG room = RS_STASH_SIZE - Socket->Stashed;
    ULONG n;
    *Status = STATUS_SUCCESS;
    if (room == 0) {
        /* Completions nobody waits for: a consumer bug, not a provider one. */
        *Status = RsFailed("RsWaitForRequest (stash full)", STATUS_BUFFER_OVERFLOW);
        return FALSE;
    }
    if (RsAdapterSupportsRemoteInvalidate(Socket->Adapter)) {
        n = cq->Dispatch->NdkGetCqResultsEx(cq, &Socket->Stash[Socket->Stashed], room);
    } else {
        NDK_RESULT results[RS_STASH_SIZE];
        n = cq->Dispatch->NdkGetCqResults(cq, results, room);
        for (ULONG i = 0; i < n; ++i) {
            NDK_RESULT_EX *r = &Socket->Stash[Socket->Stashed + i];
            RtlZeroMemory(r, sizeof *r);
            r->Status = results[i].Status;
            r->BytesTransferred = results[i].BytesTransferred;
            r->QPContext = results[i].QPContext;
            r->RequestContext = results[i].RequestContext;
        }
    }
    Socket->Stashed += n;
    return (BOOLEAN)(n != 0);
}

static BOOLEAN RsTakeStashed(RS_SOCKET *Socket, PVOID RequestContext, NDK_RESULT_EX *Result) {
    for (ULONG i = 0; i < Socket->Stashed; ++i) {
        if (Socket->Stash[i].RequestContext != RequestContext) continue;
        *Result = Socket->Stash[i];
        /* Keep the rest in arrival order. */
        for (ULONG j = i + 1; j < Socket->Stashed; ++j)
            Socket->Stash[j - 1] = Socket->Stash[j];
        --Socket->Stashed;
        return TRUE;
    }
    return FALSE;
}

NTSTATUS RsWaitForRequest(RS_SOCKET *Socket, PVOID RequestContext, ULONG TimeoutMs,
                          NDK_RESULT_EX *Result) {
    /* Interrupt time: 100 ns units, never set back like the system time. */
    const ULONGLONG start = KeQueryInterruptTime();
    LARGE_INTEGER timeout;
    NTSTATUS status;

    RtlZeroMemory(Result, sizeof *Result);
    for (;;) {
        if (RsTakeStashed(Socket, RequestContext, Result)) return STATUS_SUCCESS;
        if (RsPollCq(Socket, &status)) continue;
        if (!NT_SUCCESS(status)) return status;
        if (!NT_SUCCESS(Socket->CqError)) return RsFailed("CQ notification", Socket->CqError);

        /* Arm, then look once more: a completion that arrived between the
         * empty poll and the arm need not fire the notification. */
        Socket->Cq->Dispatch->NdkArmCq(Socket->Cq, NDK_CQ_NOTIFY_ANY);
        if (RsPollCq(Socket, &status)) continue;
        if (!NT_SUCCESS(status)) return status;

        timeout.QuadPart = RS_RELATIVE_MS(TimeoutMs) + (LONGLONG)(KeQueryInterruptTime() - start);
        if (timeout.QuadPart >= 0) return RsFailed("waiting for a completion", STATUS_IO_TIMEOUT);
        {
            PVOID objects[2] = {&Socket->CqEvent, &Socket->DisconnectEvent};
            status = KeWaitForMultipleObjects(2, objects, WaitAny, Executive, KernelMode, FALSE,
                                              &timeout, NULL);
        }
        if (status == STATUS_WAIT_1) {
            /* The peer is gone. What it sent before leaving is in the CQ. */
            if (RsPollCq(Socket, &status)) continue;
            return RsFailed("waiting for a completion (the peer disconnected)",
                            STATUS_CONNECTION_DISCONNECTED);
        }
    }
}

/* Given what the post returned, waits for the request's own completion and returns its status. */
static NTSTATUS RsCompleteRequest(RS_SOCKET *Socket, const char *What, NTSTATUS PostStatus,
                                  PVOID Context, NDK_RESULT_EX *Result) {
    NTSTATUS status;
    if (!NT_SUCCESS(PostStatus)) return RsFailed(What, PostStatus);
    status = RsWaitForRequest(Socket, Context, RS_REQUEST_TIMEOUT_MS, Result);
    if (!NT_SUCCESS(status)) return status;
    if (!NT_SUCCESS(Result->Status)) {
        RS_LOG("%s completed with 0x%08X", What, (unsigned)Result->Status);
        return Result->Status;
    }
    return STATUS_SUCCESS;
}

NTSTATUS RsSend(RS_SOCKET *Socket, const RS_BUFFER *Buffer, SIZE_T Offset, ULONG Length) {
    NDK_RESULT_EX result;
    const NDK_SGE sge = RsSge(Buffer, Offset, Length);
    return RsCompleteRequest(Socket, "NdkSend",
                             Socket->Qp->Dispatch->NdkSend(Socket->Qp, &result, &sge, 1, 0),
                             &result, &result);
}

NTSTATUS RsSendAndInvalidate(RS_SOCKET *Socket, const RS_BUFFER *Buffer, SIZE_T Offset,
                             ULONG Length, UINT32 RemoteToken) {
    NDK_RESULT_EX result;
    const NDK_SGE sge = RsSge(Buffer, Offset, Length);
    NTSTATUS status = RsCompleteRequest(
        Socket, "NdkSendAndInvalidate",
        Socket->Qp->Dispatch->NdkSendAndInvalidate(Socket->Qp, &result, &sge, 1, 0, RemoteToken),
        &result, &result);
    /* The sender sees a plain send (ndkpi-api 7.9). */
    if (NT_SUCCESS(status) && result.Type != NdkOperationTypeSend)
        status = RsFailed("NdkSendAndInvalidate (completion type)", STATUS_INVALID_DEVICE_STATE);
    return status;
}

NTSTATUS RsWrite(RS_SOCKET *Socket, const RS_BUFFER *Buffer, SIZE_T Offset, ULONG Length,
                 UINT64 RemoteAddress, UINT32 RemoteToken) {
    NDK_RESULT_EX result;
    const NDK_SGE sge = RsSge(Buffer, Offset, Length);
    return RsCompleteRequest(
        Socket, "NdkWrite",
        Socket->Qp->Dispatch->NdkWrite(Socket->Qp, &result, &sge, 1, RemoteAddress, RemoteToken, 0),
        &result, &result);
}

NTSTATUS RsRead(RS_SOCKET *Socket, const RS_BUFFER *Buffer, SIZE_T Offset, ULONG Length,
                UINT64 RemoteAddress, UINT32 RemoteToken) {
    NDK_RESULT_EX result;
    const NDK_SGE sge = RsSge(Buffer, Offset, Length);
    return RsCompleteRequest(
        Socket, "NdkRead",
        Socket->Qp->Dispatch->NdkRead(Socket->Qp, &result, &sge, 1, RemoteAddress, RemoteToken, 0),
        &result, &result);
}
