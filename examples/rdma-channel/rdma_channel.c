/*
 * rdma_channel.c - a Windows kernel NDK driver written the way production RDMA
 * consumers (SMB Direct, NVMe-oF initiators, RDMA-socket libraries) are written,
 * run unchanged under SoftNDK's driver runner.
 *
 * DriverEntry registers with WSK and opens THREE handles on one adapter
 * (WskOpenNdkAdapter on the same interface index, as independent subsystems of
 * one driver would):
 *
 *   handle A   the listeners; the connectors they deliver to their connect event
 *   handle B   the accepting side: PD, receive CQ, initiator CQ and QP of every
 *              accepted connection (NdkAccept joins a connector of A to a QP of B)
 *   handle C   the initiating side: PD, CQs, QP, connector, and per connection
 *              RC_FRMRS_PER_CONNECTION fast-register MRs of FRMRPageCount pages
 *
 * A system thread (the "channel thread") then opens RC_CONNECTIONS connections
 * and drives a credit-based request/response protocol modelled on SMB Direct
 * (MS-SMBD) over each of them:
 *
 *   client (C)                                      server (A + B)
 *   FastRegister(MR, I/O pages) DEFER|SILENT ----
 *   Send(REQUEST: token, VA, length, credits) --->  (receive CQ callback)
 *                                                   repost the receive, grant a credit
 *                                     <--------     Write(I/O) DEFER|SILENT   (PUSH), or
 *                                     -------->     Read(I/O) DEFER           (PULL)
 *                                     <--------     SendAndInvalidate(token) or Send,
 *                                                   READ_FENCE after a Read
 *   ReceiveAndInvalidate: the MR is free again;
 *   plain receive: Invalidate(MR), then free
 *
 * Production habits it exercises, each where a real driver has it:
 * - every buffer (receives, sends, I/O) is non-paged pool described by an MDL and
 *   an NdkBuildLAM mapping (size query first); sends, receives, reads and writes
 *   use the PD's privileged token with the LAM's logical addresses, one SGE per
 *   page (header page + payload pages), since LAM pages need not be contiguous;
 * - fast-register MRs are created once per connection, initialised for
 *   FRMRPageCount pages, and their remote token is read ONCE, right after
 *   NdkInitializeFastRegisterMr, cached and advertised for every later
 *   registration of that MR (register, advertise, peer access, remote or local
 *   invalidation, register again: RC_REQUESTS_PER_CONNECTION /
 *   RC_FRMRS_PER_CONNECTION cycles per MR);
 * - NDK_OP_FLAG_DEFER chains ended by a request without DEFER (the doorbell), and
 *   SILENT_SUCCESS on the fast registrations and writes nobody waits for;
 * - CQ notification callbacks that poll NdkGetCqResultsEx until empty, repost
 *   receives, re-arm with NdkArmCq and poll once more to close the race; receive
 *   CQs moderated (NdkControlCqInterruptModeration) where the adapter can;
 * - connect and disconnect events that only look, then hand the work to an
 *   IO_WORKITEM (accept, teardown), never blocking in the callback;
 * - NdkGetPeerAddress / NdkGetLocalAddress / NdkGetConnectionData in the connect
 *   event, NdkGetConnectionData (private data, IRD/ORD) after NdkConnect;
 * - an EX_RUNDOWN_REF on every connection and one for the listeners: callbacks
 *   and callers acquire it; teardown waits for it and drains the CQs before
 *   closing anything;
 * - close in the documented order: connector, QP, MRs, CQs, PD, NdkReleaseLAM,
 *   MDLs and pool, the listeners, the adapters, WSK.
 * Handle A listens on 127.0.0.1 and on ::1 (one listener each): connections 0
 * and 1 run over IPv4, 2 and 3 over IPv6. Connections with an odd index are
 * disconnected by both sides (the server calls NdkDisconnect from its disconnect
 * work item as well); even ones by the client only.
 *
 * The server reads into privileged-token LAM memory where the adapter allows it
 * (NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, RoCE/InfiniBand); otherwise
 * (iWARP) into the same buffer registered with NdkRegisterMr(RDMA_READ_SINK),
 * through its local token and virtual addresses.
 *
 * DriverUnload logs "rdma-channel: all checks passed", or the failed checks
 * followed by a bug check (the runner then dies with SIGABRT). The driver needs
 * NDKPI 1.2 (GetCqResultsEx, DEFER, SendAndInvalidate); DriverEntry fails with
 * STATUS_NOT_SUPPORTED otherwise, or if the adapter's limits are below its sizes.
 *
 * Only WDK headers; no main(): SoftNDK::driver_main calls DriverEntry and
 * DriverUnload as the I/O manager would.
 */
/* The WDK's order: each header uses what the ones before it declare. */
/* clang-format off */
#include <ntddk.h>
#include <wsk.h>
#include <ndkpi.h>
#include <netioapi.h> /* NET_IFINDEX, which wskndk.h expects declared */
#include <wskndk.h>
#include <ip2string.h>
/* clang-format on */

/* ------------------------------------------------------------------------- */
/* Configuration                                                              */
/* ------------------------------------------------------------------------- */

#define RC_POOL_TAG ((ULONG)0x6E684352) /* 'RChn' in a pool dump */

/* A real driver reads these from its registry key. */
#define RC_ADAPTER_ALIAS   L"rnic0"
#define RC_LISTEN_ADDRESS  "127.0.0.1:18520"
#define RC_CLIENT_ADDRESS  "127.0.0.1" /* no port: the provider picks one */
#define RC_LISTEN_ADDRESS6 "[::1]:18520"
#define RC_CLIENT_ADDRESS6 "::1"

/* Address families, as indexes: one listener each. The first half of the
 * connections run over IPv4, the second half over IPv6. */
#define RC_IPV4     0
#define RC_IPV6     1
#define RC_FAMILIES 2

#define RC_CONNECTIONS             4
#define RC_FRMRS_PER_CONNECTION    256
#define RC_REQUESTS_PER_CONNECTION 1024 /* 4 registration cycles per MR */
#define RC_RECEIVE_DEPTH           16   /* receives posted = credits offered */
#define RC_WINDOW                  4    /* client requests in flight per connection */
#define RC_SERVER_SLOTS            8    /* server requests being served per connection */
#define RC_INITIATOR_DEPTH         64
#define RC_READ_LIMIT              8 /* IRD and ORD asked for */

/* A message: a header page (RC_HEADER_BYTES used) and RC_MAX_PAYLOAD of payload pages. */
#define RC_HEADER_BYTES   256
#define RC_MESSAGE_PAGES  3
#define RC_MESSAGE_BYTES  (RC_MESSAGE_PAGES * PAGE_SIZE)
#define RC_MAX_PAYLOAD    (2 * PAGE_SIZE)
#define RC_RECEIVE_SGES   RC_MESSAGE_PAGES
#define RC_INITIATOR_SGES 4

/* I/O buffers: a slot of RC_IO_PAGES pages per request in flight. The client's
 * registrations start RC_IO_OFFSET bytes into the slot (a non-zero FBO); the
 * server's reads and writes RC_SERVER_IO_OFFSET bytes in (SGEs cross pages). */
#define RC_IO_PAGES         3
#define RC_IO_OFFSET        256
#define RC_SERVER_IO_OFFSET 100
#define RC_MAX_IO           (2 * PAGE_SIZE)

#define RC_POLL_BATCH 16
#define RC_WAIT_MS    10000

/* A driver-defined bug check: this driver's self-test failed. Parameters:
 * failed checks, source line of the first, its NTSTATUS, 0. */
#define RC_SELF_TEST_FAILED ((ULONG)0x52430001)

#define RC_MIN(a, b)       ((a) < (b) ? (a) : (b))
#define RC_RELATIVE_MS(Ms) (-10000LL * (LONGLONG)(Ms))

#define RC_INFO(Format, ...) \
    DbgPrintEx(DPFLTR_IHVNETWORK_ID, DPFLTR_INFO_LEVEL, "rdma-channel: " Format "\n", __VA_ARGS__)
#define RC_ERROR(Format, ...) \
    DbgPrintEx(DPFLTR_IHVNETWORK_ID, DPFLTR_ERROR_LEVEL, "rdma-channel: " Format "\n", __VA_ARGS__)

/* ------------------------------------------------------------------------- */
/* Wire format (host byte order: both ends run on this machine)               */
/* ------------------------------------------------------------------------- */

#define RC_MAGIC   0x4E484352u /* "RCHN" */
#define RC_VERSION 1

/* Private data of NdkConnect and NdkAccept. NDK private data has no length of
 * its own (the provider reports its buffer size), hence the magic. */
typedef struct _RC_HELLO {
    UINT32 Magic;
    UINT16 Version;
    UINT16 Connection;     /* which of the RC_CONNECTIONS */
    UINT16 ReceiveCredits; /* receives posted before connecting: the peer's send credits */
    UINT16 Reserved;
    UINT32 MaxMessageBytes;
} RC_HELLO;

typedef enum _RC_MESSAGE_TYPE { RcMessageRequest = 1, RcMessageResponse = 2 } RC_MESSAGE_TYPE;

/* PULL: the server RDMA-reads the client's buffer (a write to the server).
 * PUSH: the server RDMA-writes into the client's buffer (a read from it). */
typedef enum _RC_OPERATION { RcOperationPull = 1, RcOperationPush = 2 } RC_OPERATION;

/* Response flag: the response came with NdkSendAndInvalidate of the request's token. */
#define RC_FLAG_REMOTE_INVALIDATE 0x1

/* At the start of the header page of every message. Each message grants the
 * peer as many send credits as receives its sender reposted since the last grant. */
typedef struct _RC_MESSAGE_HEADER {
    UINT32 Magic;
    UINT16 Type;
    UINT16 CreditsGranted;
    UINT16 Slot; /* the client's request slot */
    UINT16 Flags;
    UINT32 Sequence;
    UINT32 Operation;
    UINT32 PayloadLength; /* bytes after the header page's RC_HEADER_BYTES */
    UINT64 RemoteAddress; /* request: the registration's base VA */
    UINT32 RemoteToken;   /* request: the MR's remote token */
    UINT32 RemoteLength;  /* request: bytes registered */
} RC_MESSAGE_HEADER;

/* ------------------------------------------------------------------------- */
/* Driver state                                                               */
/* ------------------------------------------------------------------------- */

typedef enum _RC_HANDLE {
    RcHandleListen,
    RcHandleAccept,
    RcHandleConnect,
    RcHandleCount
} RC_HANDLE;

typedef struct _RC_ADAPTER {
    NDK_ADAPTER *Ndk;
    NDK_ADAPTER_INFO Info;
} RC_ADAPTER;

/* Non-paged pool, its MDL and its LAM (FBO 0: pool blocks of a page or more are
 * page aligned). */
typedef struct _RC_BUFFER {
    PUCHAR Data;
    SIZE_T Length;
    PMDL Mdl;
    NDK_LOGICAL_ADDRESS_MAPPING *Lam;
    ULONG LamSize;
    ULONG Fbo;
    BOOLEAN LamBuilt;
} RC_BUFFER;

/* What a RequestContext points to: every posted request has its own. */
typedef enum _RC_WR_KIND {
    RcWrReceive = 1,
    RcWrRequestSend,
    RcWrFastRegister,
    RcWrInvalidate,
    RcWrResponseSend,
    RcWrRead,
    RcWrWrite
} RC_WR_KIND;

typedef struct _RC_WR {
    RC_WR_KIND Kind;
    ULONG Index;
} RC_WR;

typedef struct _RC_FRMR {
    NDK_MR *Mr;
    UINT32 RemoteToken; /* read once after NdkInitializeFastRegisterMr */
    ULONG Request;      /* the request slot using it */
    ULONG Cycles;
    RC_WR FastRegisterWr;
    RC_WR InvalidateWr;
} RC_FRMR;

/* Client: a request in flight. The slot is free when its send completed, its
 * response arrived and its MR was invalidated (remotely or locally). */
typedef struct _RC_REQUEST {
    RC_WR SendWr;
    BOOLEAN Busy;
    ULONG Pending;
    ULONG Sequence;
    RC_OPERATION Operation;
    ULONG Length;
    ULONG Frmr;
} RC_REQUEST;

/* Server: a request being served; free when its response send completed. */
typedef struct _RC_SERVER_SLOT {
    RC_WR ReadWr;
    RC_WR WriteWr;
    RC_WR ResponseWr;
    BOOLEAN Busy;
    RC_MESSAGE_HEADER Request;
} RC_SERVER_SLOT;

struct _RC_DRIVER;

/* One end of a connection. Lock guards the protocol state and serialises posts
 * to the initiator queue (the two CQ callbacks may run at once); the receive
 * queue is posted to only before connecting and from the receive CQ callback. */
typedef struct _RC_CONNECTION {
    struct _RC_DRIVER *Driver;
    ULONG Index;
    BOOLEAN Server;
    BOOLEAN DisconnectBothSides;
    ULONG Family; /* RC_IPV4 or RC_IPV6 */
    RC_ADAPTER *Adapter;
    EX_RUNDOWN_REF Rundown;
    KSPIN_LOCK Lock;

    NDK_PD *Pd;
    UINT32 PrivilegedToken;
    NDK_CQ *ReceiveCq;
    NDK_CQ *InitiatorCq;
    NDK_QP *Qp;
    NDK_CONNECTOR *Connector;
    BOOLEAN Connected;
    BOOLEAN Broken; /* a request failed: the QP is in error, the rest is flushed */
    volatile LONG Disconnecting;
    ULONG PeerInboundReadLimit;
    ULONG PeerOutboundReadLimit;
    USHORT PeerPort; /* server: the client's ND port, from NdkGetPeerAddress */
    RC_HELLO PeerHello;

    RC_BUFFER Receives; /* RC_RECEIVE_DEPTH messages */
    RC_BUFFER Sends;    /* RC_WINDOW (client) or RC_SERVER_SLOTS (server) messages */
    RC_BUFFER Io;       /* as many I/O slots */
    /* Server, when read sinks need rights (iWARP): Io registered as a read sink. */
    NDK_MR *ReadSinkMr;
    BOOLEAN ReadSinkRegistered;
    UINT32 ReadSinkToken;
    RC_WR ReceiveWr[RC_RECEIVE_DEPTH];

    LONG SendCredits;
    ULONG GrantsPending;
    ULONG LongestChain; /* most requests (or responses) posted in one DEFER chain */

    /* Client. */
    ULONG Issued;
    ULONG Completed;
    ULONG RemoteInvalidations;
    ULONG LocalInvalidations;
    RC_REQUEST Requests[RC_WINDOW];
    RC_FRMR Frmrs[RC_FRMRS_PER_CONNECTION];
    ULONG FreeFrmrs[RC_FRMRS_PER_CONNECTION]; /* FIFO ring: every MR cycles in turn */
    ULONG FreeHead;
    ULONG FreeCount;

    /* Server. */
    ULONG Received;
    ULONG Served;
    RC_SERVER_SLOT Slots[RC_SERVER_SLOTS];
    RC_MESSAGE_HEADER Waiting[RC_RECEIVE_DEPTH]; /* requests waiting for a slot or a credit */
    ULONG WaitingHead;
    ULONG WaitingCount;
    PIO_WORKITEM AcceptWork;
    volatile PVOID Incoming; /* the connector the connect event claimed for this slot */

    PIO_WORKITEM DisconnectWork;
    KEVENT Finished; /* client: every request completed; server: torn down */
} RC_CONNECTION;

typedef struct _RC_DRIVER {
    WSK_CLIENT_DISPATCH WskClientDispatch;
    WSK_CLIENT_NPI WskClientNpi;
    WSK_REGISTRATION WskRegistration;
    WSK_PROVIDER_NPI WskProviderNpi;
    WSK_PROVIDER_NDK_DISPATCH WskNdk;
    BOOLEAN WskRegistered;
    BOOLEAN WskCaptured;

    NET_IFINDEX IfIndex;
    RC_ADAPTER Adapters[RcHandleCount];
    SOCKADDR_INET ListenAddress[RC_FAMILIES];
    SOCKADDR_INET ClientAddress[RC_FAMILIES];

    NDK_LISTENER *Listeners[RC_FAMILIES];
    EX_RUNDOWN_REF ListenerRundown; /* guards both listeners' connect events */

    PDEVICE_OBJECT Device;
    PVOID ChannelThread; /* referenced thread object */
    volatile LONG ChannelFinished;
    RC_CONNECTION *Clients[RC_CONNECTIONS];
    RC_CONNECTION *Servers[RC_CONNECTIONS];

    volatile LONG Checks;
    volatile LONG Failures;
    NTSTATUS FirstFailureStatus;
    ULONG FirstFailureLine;
} RC_DRIVER;

static RC_DRIVER *RcDriver;

/* ------------------------------------------------------------------------- */
/* Checks                                                                     */
/* ------------------------------------------------------------------------- */

static BOOLEAN RcCheck(RC_DRIVER *Driver, BOOLEAN Ok, NTSTATUS Status, const char *What,
                       ULONG Line) {
    InterlockedIncrement(&Driver->Checks);
    if (Ok) return TRUE;
    if (InterlockedIncrement(&Driver->Failures) == 1) {
        Driver->FirstFailureStatus = Status;
        Driver->FirstFailureLine = Line;
    }
    RC_ERROR("check failed (line %lu): %s (0x%08X)", Line, What, (unsigned)Status);
    return FALSE;
}

/* TRUE if Condition holds; otherwise logs it and counts a failure. */
#define RC_CHECK(Driver, Condition)                                                           \
    RcCheck((Driver), (BOOLEAN)((Condition) ? TRUE : FALSE), STATUS_UNSUCCESSFUL, #Condition, \
            __LINE__)
/* TRUE if Status is a success status. Status is evaluated twice: pass a variable. */
#define RC_OK(Driver, Status, What) \
    RcCheck((Driver), (BOOLEAN)NT_SUCCESS(Status), (Status), (What), __LINE__)

/* The data of request Sequence on connection Connection: differs per request,
 * per connection and along the buffer. */
static ULONG RcSeed(ULONG Connection, ULONG Sequence) {
    return (Connection + 1) * 0x9E3779B1u ^ Sequence * 0x85EBCA6Bu;
}

static UCHAR RcPatternByte(ULONG Seed, SIZE_T Index) {
    const ULONG x = (ULONG)Index * 2654435761u + Seed;
    return (UCHAR)((x >> 24) ^ (x >> 8) ^ Seed);
}

static VOID RcFill(PUCHAR Data, SIZE_T Length, ULONG Seed) {
    for (SIZE_T i = 0; i < Length; ++i)
        Data[i] = RcPatternByte(Seed, i);
}

/* Byte for byte; logs the first difference. */
static BOOLEAN RcVerify(RC_DRIVER *Driver, const UCHAR *Data, SIZE_T Length, ULONG Seed,
                        const char *What, ULONG Line) {
    for (SIZE_T i = 0; i < Length; ++i) {
        if (Data[i] == RcPatternByte(Seed, i)) continue;
        RC_ERROR("%s: byte %lu of %lu is 0x%02X, expected 0x%02X", What, (ULONG)i, (ULONG)Length,
                 Data[i], RcPatternByte(Seed, i));
        return RcCheck(Driver, FALSE, STATUS_DATA_ERROR, What, Line);
    }
    return RcCheck(Driver, TRUE, STATUS_SUCCESS, What, Line);
}

#define RC_PAYLOAD_SALT 0x5A5A1234u

/* ------------------------------------------------------------------------- */
/* Asynchronous NDK calls made synchronous (PASSIVE_LEVEL callers only)       */
/* ------------------------------------------------------------------------- */

/* On the waiting thread's stack for one call: after STATUS_PENDING the provider
 * calls back exactly once, so the wait has no timeout. */
typedef struct _RC_SYNC {
    KEVENT Event;
    NTSTATUS Status;
    NDK_OBJECT_HEADER *Object;
} RC_SYNC;

static VOID RcSyncInit(RC_SYNC *Sync) {
    KeInitializeEvent(&Sync->Event, NotificationEvent, FALSE);
    Sync->Status = STATUS_PENDING;
    Sync->Object = NULL;
}

/* The status goes in before KeSetEvent: once the waiter wakes, *Sync may be gone. */
static VOID RcRequestCompletion(PVOID Context, NTSTATUS Status) {
    RC_SYNC *sync = (RC_SYNC *)Context;
    sync->Status = Status;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

static VOID RcCreateCompletion(PVOID Context, NTSTATUS Status, NDK_OBJECT_HEADER *Object) {
    RC_SYNC *sync = (RC_SYNC *)Context;
    sync->Object = Object;
    sync->Status = Status;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

static VOID RcCloseCompletion(PVOID Context) {
    RC_SYNC *sync = (RC_SYNC *)Context;
    sync->Status = STATUS_SUCCESS;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

static NTSTATUS RcFinish(RC_SYNC *Sync, NTSTATUS Status) {
    if (Status != STATUS_PENDING) return Status;
    KeWaitForSingleObject(&Sync->Event, Executive, KernelMode, FALSE, NULL);
    return Sync->Status;
}

/* A create returns its object through *Out when it succeeds inline, and
 * through the completion's header after STATUS_PENDING. */
static NTSTATUS RcFinishCreate(RC_SYNC *Sync, NTSTATUS Status, PVOID *Out) {
    if (Status == STATUS_PENDING) {
        Status = RcFinish(Sync, Status);
        *Out = NT_SUCCESS(Status) ? (PVOID)Sync->Object : NULL;
    } else if (!NT_SUCCESS(Status)) {
        *Out = NULL;
    }
    return Status;
}

/* Close cannot fail: SUCCESS, or PENDING and the callback. */
static VOID RcClose(NDK_OBJECT_HEADER *Object, NDK_FN_CLOSE_OBJECT CloseFn) {
    RC_SYNC sync;
    RcSyncInit(&sync);
    RcFinish(&sync, CloseFn(Object, RcCloseCompletion, &sync));
}

/* A close nobody waits for (from a callback, which must not block). */
static VOID RcIgnoreClose(PVOID Context) {
    UNREFERENCED_PARAMETER(Context);
}

/* ------------------------------------------------------------------------- */
/* Memory: pool + MDL + LAM                                                   */
/* ------------------------------------------------------------------------- */

/* NdkBuildLAM as documented: a size query first, then the call with a buffer of
 * the size the provider asked for. */
static NTSTATUS RcBufferCreate(RC_ADAPTER *Adapter, SIZE_T Length, RC_BUFFER *Buffer) {
    NDK_ADAPTER *adapter = Adapter->Ndk;
    RC_SYNC sync;
    NTSTATUS status;

    RtlZeroMemory(Buffer, sizeof *Buffer);
    Buffer->Length = Length;
    Buffer->Data = (PUCHAR)ExAllocatePool2(POOL_FLAG_NON_PAGED, Length, RC_POOL_TAG);
    if (Buffer->Data == NULL) return STATUS_INSUFFICIENT_RESOURCES;
    Buffer->Mdl = IoAllocateMdl(Buffer->Data, (ULONG)Length, FALSE, FALSE, NULL);
    if (Buffer->Mdl == NULL) return STATUS_INSUFFICIENT_RESOURCES;
    MmBuildMdlForNonPagedPool(Buffer->Mdl);

    RcSyncInit(&sync);
    status = RcFinish(
        &sync, adapter->Dispatch->NdkBuildLAM(adapter, Buffer->Mdl, Length, RcRequestCompletion,
                                              &sync, NULL, &Buffer->LamSize, &Buffer->Fbo));
    if (status != STATUS_BUFFER_TOO_SMALL)
        return NT_SUCCESS(status) ? STATUS_INVALID_DEVICE_STATE : status; /* no buffer, no LAM */
    Buffer->Lam = (NDK_LOGICAL_ADDRESS_MAPPING *)ExAllocatePool2(POOL_FLAG_NON_PAGED,
                                                                 Buffer->LamSize, RC_POOL_TAG);
    if (Buffer->Lam == NULL) return STATUS_INSUFFICIENT_RESOURCES;
    RcSyncInit(&sync);
    status = RcFinish(
        &sync, adapter->Dispatch->NdkBuildLAM(adapter, Buffer->Mdl, Length, RcRequestCompletion,
                                              &sync, Buffer->Lam, &Buffer->LamSize, &Buffer->Fbo));
    if (!NT_SUCCESS(status)) return status;
    Buffer->LamBuilt = TRUE;
    /* The page arithmetic below relies on the documented LAM shape. */
    if (Buffer->Fbo != 0 ||
        Buffer->Lam->AdapterPageCount != (ULONG)((Length + PAGE_SIZE - 1) / PAGE_SIZE))
        return STATUS_INVALID_DEVICE_STATE;
    return STATUS_SUCCESS;
}

/* After every request that used the buffer completed (the QP is closed). */
static VOID RcBufferDelete(RC_ADAPTER *Adapter, RC_BUFFER *Buffer) {
    if (Buffer->LamBuilt) Adapter->Ndk->Dispatch->NdkReleaseLAM(Adapter->Ndk, Buffer->Lam);
    if (Buffer->Lam != NULL) ExFreePoolWithTag(Buffer->Lam, RC_POOL_TAG);
    if (Buffer->Mdl != NULL) IoFreeMdl(Buffer->Mdl);
    if (Buffer->Data != NULL) ExFreePoolWithTag(Buffer->Data, RC_POOL_TAG);
    RtlZeroMemory(Buffer, sizeof *Buffer);
}

/* Appends the SGEs of [Offset, Offset + Length) of Buffer: LAM logical
 * addresses under Token (the privileged token), one SGE per page since the
 * LAM's pages need not be contiguous. Returns how many were appended, or
 * MAXULONG if more than Room would be needed. */
static ULONG RcAppendSges(const RC_BUFFER *Buffer, SIZE_T Offset, SIZE_T Length, UINT32 Token,
                          NDK_SGE *Sges, ULONG Room) {
    ULONG n = 0;
    while (Length > 0) {
        const SIZE_T position = Buffer->Fbo + Offset;
        const ULONG page = (ULONG)(position / PAGE_SIZE);
        const ULONG within = (ULONG)(position % PAGE_SIZE);
        const ULONG piece = (ULONG)RC_MIN((SIZE_T)(PAGE_SIZE - within), Length);
        if (n == Room) return MAXULONG;
        Sges[n].LogicalAddress.QuadPart = Buffer->Lam->AdapterPageArray[page].QuadPart + within;
        Sges[n].Length = piece;
        Sges[n].MemoryRegionToken = Token;
        ++n;
        Offset += piece;
        Length -= piece;
    }
    return n;
}

/* The SGEs of message slot Slot of Buffer: the header and PayloadLength bytes of payload. */
static ULONG RcMessageSges(const RC_CONNECTION *Connection, const RC_BUFFER *Buffer, ULONG Slot,
                           ULONG PayloadLength, NDK_SGE *Sges, ULONG Room) {
    const SIZE_T base = (SIZE_T)Slot * RC_MESSAGE_BYTES;
    const ULONG header =
        RcAppendSges(Buffer, base, RC_HEADER_BYTES, Connection->PrivilegedToken, Sges, Room);
    ULONG payload;
    if (header == MAXULONG) return MAXULONG;
    payload = RcAppendSges(Buffer, base + PAGE_SIZE, PayloadLength, Connection->PrivilegedToken,
                           Sges + header, Room - header);
    return payload == MAXULONG ? MAXULONG : header + payload;
}

static RC_MESSAGE_HEADER *RcMessage(const RC_BUFFER *Buffer, ULONG Slot) {
    return (RC_MESSAGE_HEADER *)(Buffer->Data + (SIZE_T)Slot * RC_MESSAGE_BYTES);
}

static PUCHAR RcPayload(const RC_BUFFER *Buffer, ULONG Slot) {
    return Buffer->Data + (SIZE_T)Slot * RC_MESSAGE_BYTES + PAGE_SIZE;
}

/* Disconnecting is set with InterlockedExchange by the disconnect paths while the CQ
 * handlers run on other threads: read it atomically as well. */
static BOOLEAN RcIsDisconnecting(RC_CONNECTION *Connection) {
    return InterlockedCompareExchange(&Connection->Disconnecting, 0, 0) != 0;
}

/* ------------------------------------------------------------------------- */
/* Posting (any IRQL <= DISPATCH_LEVEL; initiator posts with Lock held)       */
/* ------------------------------------------------------------------------- */

static VOID RcPostReceive(RC_CONNECTION *Connection, ULONG Slot) {
    NDK_SGE sges[RC_RECEIVE_SGES];
    const ULONG n = RcMessageSges(Connection, &Connection->Receives, Slot, RC_MAX_PAYLOAD, sges,
                                  RC_RECEIVE_SGES);
    NTSTATUS status;
    if (!RC_CHECK(Connection->Driver, n != MAXULONG)) return;
    status =
        Connection->Qp->Dispatch->NdkReceive(Connection->Qp, &Connection->ReceiveWr[Slot], sges, n);
    /* After a disconnect the QP may refuse: nothing more arrives anyway. */
    if (!RcIsDisconnecting(Connection)) RC_OK(Connection->Driver, status, "NdkReceive");
}

/* A receive was taken by a message: put it back and owe the peer a credit. */
static VOID RcRepostReceive(RC_CONNECTION *Connection, ULONG Slot) {
    RcPostReceive(Connection, Slot);
    ++Connection->GrantsPending;
}

static UINT16 RcTakeGrants(RC_CONNECTION *Connection) {
    const UINT16 grants = (UINT16)Connection->GrantsPending;
    Connection->GrantsPending = 0;
    return grants;
}

/* ------------------------------------------------------------------------- */
/* Client protocol                                                            */
/* ------------------------------------------------------------------------- */

static VOID RcClientRequestStep(RC_CONNECTION *Connection, RC_REQUEST *Request) {
    if (--Request->Pending != 0) return;
    Request->Busy = FALSE;
    if (++Connection->Completed == RC_REQUESTS_PER_CONNECTION)
        KeSetEvent(&Connection->Finished, IO_NO_INCREMENT, FALSE);
}

static VOID RcClientReleaseFrmr(RC_CONNECTION *Connection, ULONG Frmr) {
    const ULONG tail = (Connection->FreeHead + Connection->FreeCount) % RC_FRMRS_PER_CONNECTION;
    Connection->FreeFrmrs[tail] = Frmr;
    ++Connection->FreeCount;
}

/* Fast-registers an MR over the request's I/O slot (DEFER) and sends the request
 * advertising the MR's cached token: DEFER too unless RingDoorbell, which ends
 * the chain (NDKPI: every DEFER chain ends with a request without DEFER). */
static BOOLEAN RcClientIssue(RC_CONNECTION *Connection, ULONG Slot, BOOLEAN RingDoorbell) {
    RC_DRIVER *driver = Connection->Driver;
    RC_REQUEST *request = &Connection->Requests[Slot];
    const ULONG sequence = Connection->Issued;
    const ULONG seed = RcSeed(Connection->Index, sequence);
    const RC_OPERATION operation = (sequence & 1) ? RcOperationPush : RcOperationPull;
    const ULONG length = 1 + (ULONG)((sequence * 2654435761u) >> 7) % RC_MAX_IO;
    const ULONG payload = (sequence % 3 == 0) ? 0 : 1 + (sequence * 40503u) % RC_MAX_PAYLOAD;
    const SIZE_T ioOffset = (SIZE_T)Slot * RC_IO_PAGES * PAGE_SIZE + RC_IO_OFFSET;
    const ULONG firstPage = Slot * RC_IO_PAGES;
    const ULONG pages = (RC_IO_OFFSET + length + PAGE_SIZE - 1) / PAGE_SIZE;
    PUCHAR io = Connection->Io.Data + ioOffset;
    const ULONG frmrIndex = Connection->FreeFrmrs[Connection->FreeHead];
    RC_FRMR *frmr = &Connection->Frmrs[frmrIndex];
    RC_MESSAGE_HEADER *message = RcMessage(&Connection->Sends, Slot);
    NDK_SGE sges[RC_INITIATOR_SGES];
    ULONG n;
    NTSTATUS status;

    if (operation == RcOperationPull)
        RcFill(io, length, seed);
    else
        RtlFillMemory(io, length, 0xEE);
    status = Connection->Qp->Dispatch->NdkFastRegister(
        Connection->Qp, &frmr->FastRegisterWr, frmr->Mr, pages,
        &Connection->Io.Lam->AdapterPageArray[firstPage], RC_IO_OFFSET, length, io,
        (operation == RcOperationPush ? NDK_OP_FLAG_ALLOW_REMOTE_WRITE
                                      : NDK_OP_FLAG_ALLOW_REMOTE_READ) |
            NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_DEFER);
    if (!RC_OK(driver, status, "NdkFastRegister")) return FALSE;
    Connection->FreeHead = (Connection->FreeHead + 1) % RC_FRMRS_PER_CONNECTION;
    --Connection->FreeCount;

    RtlZeroMemory(message, RC_HEADER_BYTES);
    message->Magic = RC_MAGIC;
    message->Type = RcMessageRequest;
    message->CreditsGranted = RcTakeGrants(Connection);
    message->Slot = (UINT16)Slot;
    message->Sequence = sequence;
    message->Operation = (UINT32)operation;
    message->PayloadLength = payload;
    message->RemoteAddress = (UINT64)(ULONG_PTR)io;
    message->RemoteToken = frmr->RemoteToken; /* cached, never read again */
    message->RemoteLength = length;
    RcFill(RcPayload(&Connection->Sends, Slot), payload, seed ^ RC_PAYLOAD_SALT);
    n = RcMessageSges(Connection, &Connection->Sends, Slot, payload, sges, RC_INITIATOR_SGES);
    if (!RC_CHECK(driver, n != MAXULONG)) return FALSE;
    status = Connection->Qp->Dispatch->NdkSend(Connection->Qp, &request->SendWr, sges, n,
                                               RingDoorbell ? 0 : NDK_OP_FLAG_DEFER);
    if (!RC_OK(driver, status, "NdkSend (request)")) return FALSE;

    --Connection->SendCredits;
    ++Connection->Issued;
    ++frmr->Cycles;
    frmr->Request = Slot;
    request->Busy = TRUE;
    request->Pending = 3; /* the send, the response, the MR's invalidation */
    request->Sequence = sequence;
    request->Operation = operation;
    request->Length = length;
    request->Frmr = frmrIndex;
    return TRUE;
}

/* Issues as many requests as there are free slots, send credits and free MRs,
 * as one DEFER chain whose last send rings the doorbell. Lock held. */
static VOID RcClientPump(RC_CONNECTION *Connection) {
    ULONG ready[RC_WINDOW];
    ULONG count = 0;
    ULONG budget = RC_MIN(RC_REQUESTS_PER_CONNECTION - Connection->Issued, Connection->FreeCount);
    if (Connection->SendCredits <= 0 || RcIsDisconnecting(Connection) || Connection->Broken)
        return;
    budget = RC_MIN(budget, (ULONG)Connection->SendCredits);
    for (ULONG slot = 0; slot < RC_WINDOW && count < budget; ++slot)
        if (!Connection->Requests[slot].Busy) ready[count++] = slot;
    if (count > Connection->LongestChain) Connection->LongestChain = count;
    for (ULONG i = 0; i < count; ++i)
        if (!RcClientIssue(Connection, ready[i], (BOOLEAN)(i + 1 == count))) return;
}

static VOID RcClientOnResponse(RC_CONNECTION *Connection, ULONG Slot, const NDK_RESULT_EX *Result) {
    RC_DRIVER *driver = Connection->Driver;
    const RC_MESSAGE_HEADER message = *RcMessage(&Connection->Receives, Slot);
    RC_REQUEST *request;
    RC_FRMR *frmr;
    NTSTATUS status;

    if (!RC_CHECK(driver, Result->BytesTransferred == RC_HEADER_BYTES &&
                              message.Magic == RC_MAGIC && message.Type == RcMessageResponse &&
                              message.Slot < RC_WINDOW))
        return;
    RcRepostReceive(Connection, Slot);
    Connection->SendCredits += message.CreditsGranted;
    request = &Connection->Requests[message.Slot];
    if (!RC_CHECK(driver, request->Busy && request->Sequence == message.Sequence)) return;
    frmr = &Connection->Frmrs[request->Frmr];
    if (request->Operation == RcOperationPush) {
        const PUCHAR io =
            Connection->Io.Data + (SIZE_T)message.Slot * RC_IO_PAGES * PAGE_SIZE + RC_IO_OFFSET;
        RcVerify(driver, io, request->Length, RcSeed(Connection->Index, request->Sequence),
                 "RDMA write into the fast-registered MR", __LINE__);
    }
    if (message.Flags & RC_FLAG_REMOTE_INVALIDATE) {
        /* The provider invalidated the token before completing the receive. */
        RC_CHECK(driver, Result->Type == NdkOperationTypeReceiveAndInvalidate &&
                             (UINT32)Result->TypeSpecificCompletionOutput == frmr->RemoteToken);
        ++Connection->RemoteInvalidations;
        RcClientReleaseFrmr(Connection, request->Frmr);
        RcClientRequestStep(Connection, request);
    } else {
        RC_CHECK(driver, Result->Type == NdkOperationTypeReceive);
        status = Connection->Qp->Dispatch->NdkInvalidate(Connection->Qp, &frmr->InvalidateWr,
                                                         &frmr->Mr->Header, 0);
        if (RC_OK(driver, status, "NdkInvalidate")) ++Connection->LocalInvalidations;
    }
    RcClientRequestStep(Connection, request);
    RcClientPump(Connection);
}

/* ------------------------------------------------------------------------- */
/* Server protocol                                                            */
/* ------------------------------------------------------------------------- */

/* Serves Request in server slot Slot: the RDMA operation (DEFER) and the
 * response, which rings the doorbell if RingDoorbell (the end of the chain) and
 * is deferred otherwise. Lock held, a send credit available. */
static VOID RcServerStart(RC_CONNECTION *Connection, ULONG Slot, const RC_MESSAGE_HEADER *Request,
                          BOOLEAN RingDoorbell) {
    RC_DRIVER *driver = Connection->Driver;
    RC_SERVER_SLOT *slot = &Connection->Slots[Slot];
    const SIZE_T ioOffset = (SIZE_T)Slot * RC_IO_PAGES * PAGE_SIZE + RC_SERVER_IO_OFFSET;
    const BOOLEAN remoteInvalidate = (BOOLEAN)(((Request->Sequence / 2) % 2) == 0);
    RC_MESSAGE_HEADER *response = RcMessage(&Connection->Sends, Slot);
    NDK_SGE sges[RC_INITIATOR_SGES];
    ULONG responseFlags = RingDoorbell ? 0 : NDK_OP_FLAG_DEFER;
    ULONG n;
    NTSTATUS status;

    slot->Busy = TRUE;
    slot->Request = *Request;
    n = RcAppendSges(&Connection->Io, ioOffset, Request->RemoteLength, Connection->PrivilegedToken,
                     sges, RC_INITIATOR_SGES);
    if (!RC_CHECK(driver, n != MAXULONG)) return;
    if (Request->Operation == RcOperationPush) {
        RcFill(Connection->Io.Data + ioOffset, Request->RemoteLength,
               RcSeed(Connection->Index, Request->Sequence));
        status = Connection->Qp->Dispatch->NdkWrite(Connection->Qp, &slot->WriteWr, sges, n,
                                                    Request->RemoteAddress, Request->RemoteToken,
                                                    NDK_OP_FLAG_DEFER | NDK_OP_FLAG_SILENT_SUCCESS);
        if (!RC_OK(driver, status, "NdkWrite")) return;
    } else {
        RtlFillMemory(Connection->Io.Data + ioOffset, Request->RemoteLength, 0xDD);
        if (Connection->ReadSinkMr != NULL) {
            /* A registered read sink: one SGE of virtual addresses. */
            sges[0].VirtualAddress = Connection->Io.Data + ioOffset;
            sges[0].Length = Request->RemoteLength;
            sges[0].MemoryRegionToken = Connection->ReadSinkToken;
            n = 1;
        }
        status = Connection->Qp->Dispatch->NdkRead(Connection->Qp, &slot->ReadWr, sges, n,
                                                   Request->RemoteAddress, Request->RemoteToken,
                                                   NDK_OP_FLAG_DEFER);
        if (!RC_OK(driver, status, "NdkRead")) return;
        /* The response must not overtake the read: the client reuses the MR. */
        responseFlags |= NDK_OP_FLAG_READ_FENCE;
    }

    RtlZeroMemory(response, RC_HEADER_BYTES);
    response->Magic = RC_MAGIC;
    response->Type = RcMessageResponse;
    response->CreditsGranted = RcTakeGrants(Connection);
    response->Slot = Request->Slot;
    response->Flags = remoteInvalidate ? RC_FLAG_REMOTE_INVALIDATE : 0;
    response->Sequence = Request->Sequence;
    response->Operation = Request->Operation;
    n = RcMessageSges(Connection, &Connection->Sends, Slot, 0, sges, RC_INITIATOR_SGES);
    if (!RC_CHECK(driver, n != MAXULONG)) return;
    if (remoteInvalidate)
        status = Connection->Qp->Dispatch->NdkSendAndInvalidate(
            Connection->Qp, &slot->ResponseWr, sges, n, responseFlags, Request->RemoteToken);
    else
        status = Connection->Qp->Dispatch->NdkSend(Connection->Qp, &slot->ResponseWr, sges, n,
                                                   responseFlags);
    if (!RC_OK(driver, status, remoteInvalidate ? "NdkSendAndInvalidate" : "NdkSend (response)"))
        return;
    --Connection->SendCredits;
}

/* Serves as many waiting requests as there are free slots and send credits, as
 * one DEFER chain whose last response rings the doorbell. Lock held. */
static VOID RcServerPump(RC_CONNECTION *Connection) {
    ULONG ready[RC_SERVER_SLOTS];
    ULONG count = 0;
    ULONG budget = Connection->WaitingCount;
    if (Connection->SendCredits <= 0 || RcIsDisconnecting(Connection) || Connection->Broken)
        return;
    budget = RC_MIN(budget, (ULONG)Connection->SendCredits);
    for (ULONG slot = 0; slot < RC_SERVER_SLOTS && count < budget; ++slot)
        if (!Connection->Slots[slot].Busy) ready[count++] = slot;
    if (count > Connection->LongestChain) Connection->LongestChain = count;
    for (ULONG i = 0; i < count; ++i) {
        RcServerStart(Connection, ready[i], &Connection->Waiting[Connection->WaitingHead],
                      (BOOLEAN)(i + 1 == count));
        Connection->WaitingHead = (Connection->WaitingHead + 1) % RC_RECEIVE_DEPTH;
        --Connection->WaitingCount;
    }
}

static VOID RcServerOnRequest(RC_CONNECTION *Connection, ULONG Slot, const NDK_RESULT_EX *Result) {
    RC_DRIVER *driver = Connection->Driver;
    const RC_MESSAGE_HEADER message = *RcMessage(&Connection->Receives, Slot);
    ULONG tail;

    if (!RC_CHECK(driver, message.Magic == RC_MAGIC && message.Type == RcMessageRequest &&
                              message.Slot < RC_WINDOW && message.PayloadLength <= RC_MAX_PAYLOAD &&
                              Result->BytesTransferred == RC_HEADER_BYTES + message.PayloadLength &&
                              message.RemoteLength > 0 && message.RemoteLength <= RC_MAX_IO))
        return;
    /* One QP: requests arrive in the order they were sent. */
    RC_CHECK(driver, message.Sequence == Connection->Received);
    ++Connection->Received;
    RcVerify(driver, RcPayload(&Connection->Receives, Slot), message.PayloadLength,
             RcSeed(Connection->Index, message.Sequence) ^ RC_PAYLOAD_SALT,
             "request payload (header page + payload pages)", __LINE__);
    RcRepostReceive(Connection, Slot);
    Connection->SendCredits += message.CreditsGranted;
    if (!RC_CHECK(driver, Connection->WaitingCount < RC_RECEIVE_DEPTH)) return;
    tail = (Connection->WaitingHead + Connection->WaitingCount) % RC_RECEIVE_DEPTH;
    Connection->Waiting[tail] = message;
    ++Connection->WaitingCount;
    RcServerPump(Connection);
}

/* ------------------------------------------------------------------------- */
/* Completion handling: CQ notification callbacks                             */
/* ------------------------------------------------------------------------- */

static VOID RcOnCompletion(RC_CONNECTION *Connection, const NDK_RESULT_EX *Result) {
    RC_DRIVER *driver = Connection->Driver;
    const RC_WR *wr = (const RC_WR *)Result->RequestContext;

    if (Result->Status != STATUS_SUCCESS) {
        /* Flushed receives are how a QP ends: no repost, nothing lost. Other
         * requests are flushed only once the connection is going away. */
        if (Result->Status == STATUS_CANCELLED &&
            (wr->Kind == RcWrReceive || RcIsDisconnecting(Connection) || Connection->Broken))
            return;
        RC_ERROR("connection %lu (%s): request kind %d failed with 0x%08X (provider code %lu)",
                 Connection->Index, Connection->Server ? "server" : "client", (int)wr->Kind,
                 (unsigned)Result->Status, Result->ProviderErrorCode);
        RcCheck(driver, FALSE, Result->Status, "a posted request completed with an error",
                __LINE__);
        /* The QP is in error: what follows is flushed. The channel thread need
         * not wait for requests that will never complete. */
        Connection->Broken = TRUE;
        if (!Connection->Server) KeSetEvent(&Connection->Finished, IO_NO_INCREMENT, FALSE);
        return;
    }
    /* NDKPI 2.1: ProviderErrorCode is 0 when Status is a success. */
    if (Connection->Adapter->Info.Version.Major >= 2)
        RC_CHECK(driver, Result->ProviderErrorCode == 0);
    switch (wr->Kind) {
        case RcWrReceive:
            if (Connection->Server)
                RcServerOnRequest(Connection, wr->Index, Result);
            else
                RcClientOnResponse(Connection, wr->Index, Result);
            break;
        case RcWrRequestSend:
            RcClientRequestStep(Connection, &Connection->Requests[wr->Index]);
            break;
        case RcWrInvalidate: {
            RC_FRMR *frmr = &Connection->Frmrs[wr->Index];
            RcClientReleaseFrmr(Connection, wr->Index);
            RcClientRequestStep(Connection, &Connection->Requests[frmr->Request]);
            RcClientPump(Connection);
            break;
        }
        case RcWrRead: {
            /* Before the fenced response: the slot is still this request's. */
            const RC_SERVER_SLOT *slot = &Connection->Slots[wr->Index];
            RcVerify(driver,
                     Connection->Io.Data + (SIZE_T)wr->Index * RC_IO_PAGES * PAGE_SIZE +
                         RC_SERVER_IO_OFFSET,
                     slot->Request.RemoteLength, RcSeed(Connection->Index, slot->Request.Sequence),
                     "RDMA read from the fast-registered MR", __LINE__);
            break;
        }
        case RcWrResponseSend:
            Connection->Slots[wr->Index].Busy = FALSE;
            ++Connection->Served;
            RcServerPump(Connection);
            break;
        case RcWrFastRegister:
        case RcWrWrite:
            /* Posted with SILENT_SUCCESS: a success produces no completion. */
            RcCheck(driver, FALSE, STATUS_INVALID_DEVICE_STATE,
                    "a SILENT_SUCCESS request produced a success completion", __LINE__);
            break;
        default:
            RcCheck(driver, FALSE, STATUS_INVALID_PARAMETER, "a completion with an unknown context",
                    __LINE__);
            break;
    }
}

/* The standard pattern: poll until empty, re-arm, poll once more (a completion
 * that arrived between the last poll and the arm need not notify). NDKPI never
 * runs two notifications of one CQ at once, so polling and arming here are
 * serialised per CQ. Lock is taken per completion, not across the poll. */
static VOID RcDrainCq(RC_CONNECTION *Connection, NDK_CQ *Cq) {
    NDK_RESULT_EX results[RC_POLL_BATCH];
    KIRQL irql;
    ULONG n;
    for (;;) {
        while ((n = Cq->Dispatch->NdkGetCqResultsEx(Cq, results, RC_POLL_BATCH)) != 0) {
            for (ULONG i = 0; i < n; ++i) {
                KeAcquireSpinLock(&Connection->Lock, &irql);
                RcOnCompletion(Connection, &results[i]);
                KeReleaseSpinLock(&Connection->Lock, irql);
            }
        }
        Cq->Dispatch->NdkArmCq(Cq, NDK_CQ_NOTIFY_ANY);
        n = Cq->Dispatch->NdkGetCqResultsEx(Cq, results, RC_POLL_BATCH);
        if (n == 0) return;
        for (ULONG i = 0; i < n; ++i) {
            KeAcquireSpinLock(&Connection->Lock, &irql);
            RcOnCompletion(Connection, &results[i]);
            KeReleaseSpinLock(&Connection->Lock, irql);
        }
    }
}

static VOID RcCqNotification(RC_CONNECTION *Connection, NDK_CQ *Cq, NTSTATUS CqStatus) {
    /* Teardown has begun: leave the CQ alone (it is about to be closed). */
    if (!ExAcquireRundownProtection(&Connection->Rundown)) return;
    if (RC_OK(Connection->Driver, CqStatus, "CQ notification status")) RcDrainCq(Connection, Cq);
    ExReleaseRundownProtection(&Connection->Rundown);
}

static VOID RcReceiveCqNotification(PVOID Context, NTSTATUS CqStatus) {
    RC_CONNECTION *connection = (RC_CONNECTION *)Context;
    RcCqNotification(connection, connection->ReceiveCq, CqStatus);
}

static VOID RcInitiatorCqNotification(PVOID Context, NTSTATUS CqStatus) {
    RC_CONNECTION *connection = (RC_CONNECTION *)Context;
    RcCqNotification(connection, connection->InitiatorCq, CqStatus);
}

/* ------------------------------------------------------------------------- */
/* Connection objects                                                         */
/* ------------------------------------------------------------------------- */

/* PD, the two CQs, the QP and the buffers on Adapter; receives posted. The
 * client side also creates its fast-register MRs. PASSIVE_LEVEL. */
static NTSTATUS RcConnectionCreate(RC_CONNECTION *Connection, RC_ADAPTER *Adapter) {
    NDK_ADAPTER *adapter = Adapter->Ndk;
    const ULONG slots = Connection->Server ? RC_SERVER_SLOTS : RC_WINDOW;
    RC_SYNC sync;
    NTSTATUS status;

    Connection->Adapter = Adapter;
    RcSyncInit(&sync);
    status = RcFinishCreate(
        &sync, adapter->Dispatch->NdkCreatePd(adapter, RcCreateCompletion, &sync, &Connection->Pd),
        (PVOID *)&Connection->Pd);
    if (!NT_SUCCESS(status)) return status;
    Connection->Pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(Connection->Pd,
                                                                &Connection->PrivilegedToken);

    RcSyncInit(&sync);
    status = RcFinishCreate(&sync,
                            adapter->Dispatch->NdkCreateCq(
                                adapter, RC_RECEIVE_DEPTH, RcReceiveCqNotification, Connection,
                                NULL, RcCreateCompletion, &sync, &Connection->ReceiveCq),
                            (PVOID *)&Connection->ReceiveCq);
    if (!NT_SUCCESS(status)) return status;
    RcSyncInit(&sync);
    status = RcFinishCreate(&sync,
                            adapter->Dispatch->NdkCreateCq(
                                adapter, RC_INITIATOR_DEPTH, RcInitiatorCqNotification, Connection,
                                NULL, RcCreateCompletion, &sync, &Connection->InitiatorCq),
                            (PVOID *)&Connection->InitiatorCq);
    if (!NT_SUCCESS(status)) return status;
    RcSyncInit(&sync);
    status = RcFinishCreate(&sync,
                            Connection->Pd->Dispatch->NdkCreateQp(
                                Connection->Pd, Connection->ReceiveCq, Connection->InitiatorCq,
                                Connection, RC_RECEIVE_DEPTH, RC_INITIATOR_DEPTH, RC_RECEIVE_SGES,
                                RC_INITIATOR_SGES, 0, RcCreateCompletion, &sync, &Connection->Qp),
                            (PVOID *)&Connection->Qp);
    if (!NT_SUCCESS(status)) return status;

    status =
        RcBufferCreate(Adapter, (SIZE_T)RC_RECEIVE_DEPTH * RC_MESSAGE_BYTES, &Connection->Receives);
    if (NT_SUCCESS(status))
        status = RcBufferCreate(Adapter, (SIZE_T)slots * RC_MESSAGE_BYTES, &Connection->Sends);
    if (NT_SUCCESS(status))
        status = RcBufferCreate(Adapter, (SIZE_T)slots * RC_IO_PAGES * PAGE_SIZE, &Connection->Io);
    if (!NT_SUCCESS(status)) return status;

    if (Connection->Server &&
        (Adapter->Info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED) == 0) {
        /* The privileged token grants no read-sink right here: register the
         * I/O buffer itself, once, as a read sink. */
        RcSyncInit(&sync);
        status = RcFinishCreate(
            &sync,
            Connection->Pd->Dispatch->NdkCreateMr(Connection->Pd, FALSE, RcCreateCompletion, &sync,
                                                  &Connection->ReadSinkMr),
            (PVOID *)&Connection->ReadSinkMr);
        if (!NT_SUCCESS(status)) return status;
        RcSyncInit(&sync);
        status =
            RcFinish(&sync, Connection->ReadSinkMr->Dispatch->NdkRegisterMr(
                                Connection->ReadSinkMr, Connection->Io.Mdl, Connection->Io.Length,
                                NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK,
                                RcRequestCompletion, &sync));
        if (!NT_SUCCESS(status)) return status;
        Connection->ReadSinkRegistered = TRUE;
        Connection->ReadSinkToken =
            Connection->ReadSinkMr->Dispatch->NdkGetLocalTokenFromMr(Connection->ReadSinkMr);
    }

    if (!Connection->Server) {
        /* Pre-created and pre-initialised, as production drivers keep them: the
         * data path only fast-registers and invalidates. */
        for (ULONG i = 0; i < RC_FRMRS_PER_CONNECTION; ++i) {
            RC_FRMR *frmr = &Connection->Frmrs[i];
            RcSyncInit(&sync);
            status = RcFinishCreate(&sync,
                                    Connection->Pd->Dispatch->NdkCreateMr(
                                        Connection->Pd, TRUE, RcCreateCompletion, &sync, &frmr->Mr),
                                    (PVOID *)&frmr->Mr);
            if (!NT_SUCCESS(status)) return status;
            RcSyncInit(&sync);
            status = RcFinish(&sync, frmr->Mr->Dispatch->NdkInitializeFastRegisterMr(
                                         frmr->Mr, Adapter->Info.FRMRPageCount, TRUE,
                                         RcRequestCompletion, &sync));
            if (!NT_SUCCESS(status)) return status;
            /* Once: the token stays the MR's across its registrations. */
            frmr->RemoteToken = frmr->Mr->Dispatch->NdkGetRemoteTokenFromMr(frmr->Mr);
            frmr->FastRegisterWr.Kind = RcWrFastRegister;
            frmr->FastRegisterWr.Index = i;
            frmr->InvalidateWr.Kind = RcWrInvalidate;
            frmr->InvalidateWr.Index = i;
            Connection->FreeFrmrs[i] = i;
        }
        Connection->FreeHead = 0;
        Connection->FreeCount = RC_FRMRS_PER_CONNECTION;
        for (ULONG i = 0; i < RC_WINDOW; ++i) {
            Connection->Requests[i].SendWr.Kind = RcWrRequestSend;
            Connection->Requests[i].SendWr.Index = i;
        }
    } else {
        for (ULONG i = 0; i < RC_SERVER_SLOTS; ++i) {
            RC_SERVER_SLOT *slot = &Connection->Slots[i];
            slot->ReadWr.Kind = RcWrRead;
            slot->WriteWr.Kind = RcWrWrite;
            slot->ResponseWr.Kind = RcWrResponseSend;
            slot->ReadWr.Index = slot->WriteWr.Index = slot->ResponseWr.Index = i;
        }
    }

    /* Receives before connecting: the peer may send as soon as it is connected,
     * and the credits in the hello promise that many. */
    for (ULONG i = 0; i < RC_RECEIVE_DEPTH; ++i) {
        Connection->ReceiveWr[i].Kind = RcWrReceive;
        Connection->ReceiveWr[i].Index = i;
        RcPostReceive(Connection, i);
    }
    return STATUS_SUCCESS;
}

/* After the rundown: the completions no callback got to (a notification that
 * arrived after the rundown began returned without polling). The QP is still
 * open; Disconnecting keeps the handlers from starting new work. */
static VOID RcDrainAfterRundown(RC_CONNECTION *Connection) {
    NDK_CQ *cqs[2] = {Connection->ReceiveCq, Connection->InitiatorCq};
    NDK_RESULT_EX results[RC_POLL_BATCH];
    KIRQL irql;
    ULONG n;
    InterlockedExchange(&Connection->Disconnecting, 1);
    for (ULONG q = 0; q < 2; ++q) {
        while ((n = cqs[q]->Dispatch->NdkGetCqResultsEx(cqs[q], results, RC_POLL_BATCH)) != 0) {
            for (ULONG i = 0; i < n; ++i) {
                KeAcquireSpinLock(&Connection->Lock, &irql);
                RcOnCompletion(Connection, &results[i]);
                KeReleaseSpinLock(&Connection->Lock, irql);
            }
        }
    }
}

/* Waits for the callbacks to leave and takes what they left in the CQs, then
 * closes in the documented order: connector, QP, MRs, CQs, PD, then the LAMs,
 * MDLs and pool. PASSIVE_LEVEL. */
static VOID RcConnectionClose(RC_CONNECTION *Connection) {
    ExWaitForRundownProtectionRelease(&Connection->Rundown);
    if (Connection->Connected) RcDrainAfterRundown(Connection);
    if (Connection->Connector != NULL)
        RcClose(&Connection->Connector->Header, Connection->Connector->Dispatch->NdkCloseConnector);
    Connection->Connector = NULL;
    if (Connection->Qp != NULL)
        RcClose(&Connection->Qp->Header, Connection->Qp->Dispatch->NdkCloseQp);
    Connection->Qp = NULL;
    if (Connection->ReadSinkMr != NULL) {
        NDK_MR *mr = Connection->ReadSinkMr;
        if (Connection->ReadSinkRegistered) {
            RC_SYNC sync;
            NTSTATUS status;
            RcSyncInit(&sync);
            status = RcFinish(&sync, mr->Dispatch->NdkDeregisterMr(mr, RcRequestCompletion, &sync));
            RC_OK(Connection->Driver, status, "NdkDeregisterMr (read sink)");
        }
        RcClose(&mr->Header, mr->Dispatch->NdkCloseMr);
        Connection->ReadSinkMr = NULL;
        Connection->ReadSinkRegistered = FALSE;
    }
    for (ULONG i = 0; i < RC_FRMRS_PER_CONNECTION; ++i) {
        NDK_MR *mr = Connection->Frmrs[i].Mr;
        if (mr != NULL) RcClose(&mr->Header, mr->Dispatch->NdkCloseMr);
        Connection->Frmrs[i].Mr = NULL;
    }
    if (Connection->ReceiveCq != NULL)
        RcClose(&Connection->ReceiveCq->Header, Connection->ReceiveCq->Dispatch->NdkCloseCq);
    Connection->ReceiveCq = NULL;
    if (Connection->InitiatorCq != NULL)
        RcClose(&Connection->InitiatorCq->Header, Connection->InitiatorCq->Dispatch->NdkCloseCq);
    Connection->InitiatorCq = NULL;
    if (Connection->Pd != NULL)
        RcClose(&Connection->Pd->Header, Connection->Pd->Dispatch->NdkClosePd);
    Connection->Pd = NULL;
    if (Connection->Adapter != NULL) {
        RcBufferDelete(Connection->Adapter, &Connection->Io);
        RcBufferDelete(Connection->Adapter, &Connection->Sends);
        RcBufferDelete(Connection->Adapter, &Connection->Receives);
    }
}

/* Both CQs armed: from now on the callbacks run the connection. */
static VOID RcConnectionStart(RC_CONNECTION *Connection) {
    KIRQL irql;
    /* Callers too hold the rundown while they use the connection. */
    if (!ExAcquireRundownProtection(&Connection->Rundown)) return;
    /* Receive notifications moderated by time (20 us, no count), as SMB Direct
     * does, where the adapter supports it. */
    if (Connection->Adapter->Info.AdapterFlags &
        NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED) {
        const NTSTATUS status = Connection->ReceiveCq->Dispatch->NdkControlCqInterruptModeration(
            Connection->ReceiveCq, 20, MAXULONG);
        RC_OK(Connection->Driver, status, "NdkControlCqInterruptModeration");
    }
    Connection->ReceiveCq->Dispatch->NdkArmCq(Connection->ReceiveCq, NDK_CQ_NOTIFY_ANY);
    Connection->InitiatorCq->Dispatch->NdkArmCq(Connection->InitiatorCq, NDK_CQ_NOTIFY_ANY);
    if (!Connection->Server) {
        KeAcquireSpinLock(&Connection->Lock, &irql);
        RcClientPump(Connection);
        KeReleaseSpinLock(&Connection->Lock, irql);
    }
    ExReleaseRundownProtection(&Connection->Rundown);
}

/* ------------------------------------------------------------------------- */
/* Disconnects: the event only queues the work                                */
/* ------------------------------------------------------------------------- */

static NTSTATUS RcDisconnect(RC_CONNECTION *Connection) {
    RC_SYNC sync;
    InterlockedExchange(&Connection->Disconnecting, 1);
    RcSyncInit(&sync);
    return RcFinish(&sync, Connection->Connector->Dispatch->NdkDisconnect(
                               Connection->Connector, RcRequestCompletion, &sync));
}

static IO_WORKITEM_ROUTINE RcDisconnectWorker;

/* Provider thread, must not block. The rundown reference taken here goes to
 * the work item, which releases it. */
static VOID RcDisconnectEvent(PVOID Context) {
    RC_CONNECTION *connection = (RC_CONNECTION *)Context;
    if (!ExAcquireRundownProtection(&connection->Rundown)) return;
    InterlockedExchange(&connection->Disconnecting, 1);
    IoQueueWorkItem(connection->DisconnectWork, RcDisconnectWorker, DelayedWorkQueue, connection);
}

static VOID RcDisconnectWorker(PDEVICE_OBJECT DeviceObject, PVOID Context) {
    RC_CONNECTION *connection = (RC_CONNECTION *)Context;
    RC_DRIVER *driver = connection->Driver;
    KIRQL irql;
    ULONG done;
    UNREFERENCED_PARAMETER(DeviceObject);

    if (!connection->Server) {
        /* Clients disconnect first; a server that leaves early strands requests. */
        KeAcquireSpinLock(&connection->Lock, &irql);
        done = connection->Completed;
        KeReleaseSpinLock(&connection->Lock, irql);
        if (!RC_CHECK(driver, done == RC_REQUESTS_PER_CONNECTION))
            KeSetEvent(&connection->Finished, IO_NO_INCREMENT, FALSE);
        ExReleaseRundownProtection(&connection->Rundown);
        return;
    }
    if (connection->DisconnectBothSides) {
        const NTSTATUS status = RcDisconnect(connection);
        RC_OK(driver, status, "NdkDisconnect (server, after the peer's)");
    }
    ExReleaseRundownProtection(&connection->Rundown);
    RcConnectionClose(connection);
    /* The client disconnects once it has every response, but the completions
     * of the last response sends may have been reaped only by the drain above. */
    RC_CHECK(driver, connection->Served == RC_REQUESTS_PER_CONNECTION);
    KeSetEvent(&connection->Finished, IO_NO_INCREMENT, FALSE);
}

/* ------------------------------------------------------------------------- */
/* Passive side: connect event -> accept work item                            */
/* ------------------------------------------------------------------------- */

static IO_WORKITEM_ROUTINE RcAcceptWorker;

static ULONG RcFamilyOf(const SOCKADDR_INET *Address) {
    return Address->si_family == AF_INET6 ? RC_IPV6 : RC_IPV4;
}

static USHORT RcPortOf(const SOCKADDR_INET *Address) {
    return Address->si_family == AF_INET6 ? Address->Ipv6.sin6_port : Address->Ipv4.sin_port;
}

static ULONG RcLengthOf(const SOCKADDR_INET *Address) {
    return Address->si_family == AF_INET6 ? sizeof(SOCKADDR_IN6) : sizeof(SOCKADDR_IN);
}

/* Same family and IP address; ports are the callers' business. */
static BOOLEAN RcSameIp(const SOCKADDR_STORAGE *Address, const SOCKADDR_INET *Expected) {
    const SOCKADDR_INET *a = (const SOCKADDR_INET *)Address;
    if (a->si_family != Expected->si_family) return FALSE;
    if (a->si_family == AF_INET)
        return (BOOLEAN)(a->Ipv4.sin_addr.s_addr == Expected->Ipv4.sin_addr.s_addr);
    return (BOOLEAN)RtlEqualMemory(&a->Ipv6.sin6_addr, &Expected->Ipv6.sin6_addr,
                                   sizeof a->Ipv6.sin6_addr);
}

/* Provider thread, must not block: look at the request, claim the server
 * connection it names, and leave the accept (which waits) to a work item. */
static VOID RcConnectEvent(PVOID Context, NDK_CONNECTOR *Connector) {
    RC_DRIVER *driver = (RC_DRIVER *)Context;
    SOCKADDR_STORAGE peer, local;
    ULONG peerLength = sizeof peer, localLength = sizeof local;
    RC_HELLO hello;
    ULONG helloLength = sizeof hello;
    ULONG inbound = 0, outbound = 0;
    RC_CONNECTION *connection = NULL;
    ULONG family;
    NTSTATUS status;

    if (!ExAcquireRundownProtection(&driver->ListenerRundown)) {
        Connector->Dispatch->NdkCloseConnector(&Connector->Header, RcIgnoreClose, NULL);
        return;
    }
    RtlZeroMemory(&peer, sizeof peer);
    RtlZeroMemory(&local, sizeof local);
    RtlZeroMemory(&hello, sizeof hello);
    /* Which listener it came through: the family of the addresses. */
    status = Connector->Dispatch->NdkGetPeerAddress(Connector, (PSOCKADDR)&peer, &peerLength);
    family = RcFamilyOf((const SOCKADDR_INET *)&peer);
    if (RC_OK(driver, status, "NdkGetPeerAddress"))
        RC_CHECK(driver, RcSameIp(&peer, &driver->ClientAddress[family]) &&
                             RcPortOf((const SOCKADDR_INET *)&peer) != 0);
    status = Connector->Dispatch->NdkGetLocalAddress(Connector, (PSOCKADDR)&local, &localLength);
    if (RC_OK(driver, status, "NdkGetLocalAddress"))
        RC_CHECK(driver, RcSameIp(&local, &driver->ListenAddress[family]) &&
                             RcPortOf((const SOCKADDR_INET *)&local) ==
                                 RcPortOf(&driver->ListenAddress[family]));
    /* The provider's private-data buffer may be larger than the hello: the
     * first bytes are copied and BUFFER_TOO_SMALL says there were more. */
    status = Connector->Dispatch->NdkGetConnectionData(Connector, &inbound, &outbound, &hello,
                                                       &helloLength);
    if (status == STATUS_BUFFER_TOO_SMALL) status = STATUS_SUCCESS;
    if (RC_OK(driver, status, "NdkGetConnectionData (passive side)") &&
        RC_CHECK(driver, hello.Magic == RC_MAGIC && hello.Version == RC_VERSION &&
                             hello.Connection < RC_CONNECTIONS &&
                             hello.ReceiveCredits == RC_RECEIVE_DEPTH) &&
        RC_CHECK(driver, inbound >= 1 && inbound <= RC_READ_LIMIT && outbound >= 1 &&
                             outbound <= RC_READ_LIMIT)) {
        connection = driver->Servers[hello.Connection];
        if (!RC_CHECK(driver, connection->Family == family) ||
            InterlockedCompareExchangePointer(&connection->Incoming, Connector, NULL) != NULL)
            connection = NULL; /* the wrong listener, or a second request */
    }
    if (connection == NULL) {
        RcCheck(driver, FALSE, STATUS_CONNECTION_REFUSED, "connect request refused", __LINE__);
        Connector->Dispatch->NdkReject(Connector, NULL, 0);
        Connector->Dispatch->NdkCloseConnector(&Connector->Header, RcIgnoreClose, NULL);
    } else {
        if (hello.Connection == 0)
            RC_INFO(
                "connection 0, passive side: request from handle A's listener, IRD %lu ORD "
                "%lu",
                inbound, outbound);
        connection->PeerHello = hello;
        connection->PeerPort = RcPortOf((const SOCKADDR_INET *)&peer);
        connection->PeerInboundReadLimit = inbound;
        connection->PeerOutboundReadLimit = outbound;
        IoQueueWorkItem(connection->AcceptWork, RcAcceptWorker, DelayedWorkQueue, connection);
    }
    ExReleaseRundownProtection(&driver->ListenerRundown);
}

/* PASSIVE_LEVEL: the accepted connection's objects come from handle B, the
 * connector from handle A's listener. */
static VOID RcAcceptWorker(PDEVICE_OBJECT DeviceObject, PVOID Context) {
    RC_CONNECTION *connection = (RC_CONNECTION *)Context;
    RC_DRIVER *driver = connection->Driver;
    RC_HELLO reply;
    RC_SYNC sync;
    NTSTATUS status;
    UNREFERENCED_PARAMETER(DeviceObject);

    connection->Connector = (NDK_CONNECTOR *)connection->Incoming;
    status = RcConnectionCreate(connection, &driver->Adapters[RcHandleAccept]);
    if (RC_OK(driver, status, "server connection objects (handle B)")) {
        RtlZeroMemory(&reply, sizeof reply);
        reply.Magic = RC_MAGIC;
        reply.Version = RC_VERSION;
        reply.Connection = (UINT16)connection->Index;
        reply.ReceiveCredits = RC_RECEIVE_DEPTH;
        reply.MaxMessageBytes = RC_HEADER_BYTES + RC_MAX_PAYLOAD;
        connection->SendCredits = connection->PeerHello.ReceiveCredits;
        RcSyncInit(&sync);
        status = RcFinish(
            &sync, connection->Connector->Dispatch->NdkAccept(
                       connection->Connector, connection->Qp, RC_READ_LIMIT, RC_READ_LIMIT, &reply,
                       sizeof reply, RcDisconnectEvent, connection, RcRequestCompletion, &sync));
        RC_OK(driver, status, "NdkAccept (connector of handle A, QP of handle B)");
    }
    if (!NT_SUCCESS(status)) {
        /* Closing the connector rejects the request; the client's connect fails. */
        RcConnectionClose(connection);
        KeSetEvent(&connection->Finished, IO_NO_INCREMENT, FALSE);
        return;
    }
    connection->Connected = TRUE;
    RcConnectionStart(connection);
}

/* ------------------------------------------------------------------------- */
/* Active side and the channel thread                                         */
/* ------------------------------------------------------------------------- */

static NTSTATUS RcClientConnect(RC_DRIVER *Driver, RC_CONNECTION *Connection) {
    NDK_ADAPTER *adapter = Driver->Adapters[RcHandleConnect].Ndk;
    const SOCKADDR_INET *source = &Driver->ClientAddress[Connection->Family];
    const SOCKADDR_INET *destination = &Driver->ListenAddress[Connection->Family];
    RC_HELLO hello, peer;
    ULONG peerLength = sizeof peer;
    ULONG inbound = 0, outbound = 0;
    RC_SYNC sync;
    NTSTATUS status;

    status = RcConnectionCreate(Connection, &Driver->Adapters[RcHandleConnect]);
    if (!RC_OK(Driver, status, "client connection objects (handle C)")) return status;
    RcSyncInit(&sync);
    status = RcFinishCreate(&sync,
                            adapter->Dispatch->NdkCreateConnector(adapter, RcCreateCompletion,
                                                                  &sync, &Connection->Connector),
                            (PVOID *)&Connection->Connector);
    if (!RC_OK(Driver, status, "NdkCreateConnector")) return status;

    RtlZeroMemory(&hello, sizeof hello);
    hello.Magic = RC_MAGIC;
    hello.Version = RC_VERSION;
    hello.Connection = (UINT16)Connection->Index;
    hello.ReceiveCredits = RC_RECEIVE_DEPTH;
    hello.MaxMessageBytes = RC_HEADER_BYTES + RC_MAX_PAYLOAD;
    RcSyncInit(&sync);
    status = RcFinish(
        &sync, Connection->Connector->Dispatch->NdkConnect(
                   Connection->Connector, Connection->Qp, (PSOCKADDR)source, RcLengthOf(source),
                   (PSOCKADDR)destination, RcLengthOf(destination), RC_READ_LIMIT, RC_READ_LIMIT,
                   &hello, sizeof hello, RcRequestCompletion, &sync));
    if (!RC_OK(Driver, status, "NdkConnect")) return status;

    RtlZeroMemory(&peer, sizeof peer);
    status = Connection->Connector->Dispatch->NdkGetConnectionData(Connection->Connector, &inbound,
                                                                   &outbound, &peer, &peerLength);
    if (status == STATUS_BUFFER_TOO_SMALL) status = STATUS_SUCCESS;
    if (!RC_OK(Driver, status, "NdkGetConnectionData (active side)") ||
        !RC_CHECK(Driver, peer.Magic == RC_MAGIC && peer.Version == RC_VERSION &&
                              peer.Connection == Connection->Index && peer.ReceiveCredits > 0) ||
        /* Effective limits: at most what both asked for; the server reads from
         * us, so at least one inbound read. */
        !RC_CHECK(Driver, inbound >= 1 && inbound <= RC_READ_LIMIT && outbound <= RC_READ_LIMIT)) {
        Connection->Connector->Dispatch->NdkReject(Connection->Connector, NULL, 0);
        return STATUS_CONNECTION_REFUSED;
    }
    Connection->SendCredits = peer.ReceiveCredits;
    if (Connection->Index == 0)
        RC_INFO("connection 0, active side: accepted with %u credits, IRD %lu ORD %lu",
                (unsigned)peer.ReceiveCredits, inbound, outbound);

    RcSyncInit(&sync);
    status = RcFinish(&sync, Connection->Connector->Dispatch->NdkCompleteConnect(
                                 Connection->Connector, RcDisconnectEvent, Connection,
                                 RcRequestCompletion, &sync));
    if (!RC_OK(Driver, status, "NdkCompleteConnect")) return status;
    Connection->Connected = TRUE;
    RcConnectionStart(Connection);

    /* The port the provider picked for us is the one the server saw. */
    {
        RC_CONNECTION *server = Driver->Servers[Connection->Index];
        SOCKADDR_STORAGE local;
        ULONG localLength = sizeof local;
        RtlZeroMemory(&local, sizeof local);
        status = Connection->Connector->Dispatch->NdkGetLocalAddress(
            Connection->Connector, (PSOCKADDR)&local, &localLength);
        if (RC_OK(Driver, status, "NdkGetLocalAddress (active side)"))
            RC_CHECK(Driver, RcSameIp(&local, source) &&
                                 RcPortOf((const SOCKADDR_INET *)&local) != 0 &&
                                 RcPortOf((const SOCKADDR_INET *)&local) == server->PeerPort);
    }
    return STATUS_SUCCESS;
}

/* One listener per address family, both on handle A. */
static NTSTATUS RcListen(RC_DRIVER *Driver, ULONG Family) {
    NDK_ADAPTER *adapter = Driver->Adapters[RcHandleListen].Ndk;
    NDK_LISTENER **listener = &Driver->Listeners[Family];
    const SOCKADDR_INET *address = &Driver->ListenAddress[Family];
    RC_SYNC sync;
    NTSTATUS status;

    RcSyncInit(&sync);
    status =
        RcFinishCreate(&sync,
                       adapter->Dispatch->NdkCreateListener(adapter, RcConnectEvent, Driver,
                                                            RcCreateCompletion, &sync, listener),
                       (PVOID *)listener);
    if (!NT_SUCCESS(status)) return status;
    RcSyncInit(&sync);
    return RcFinish(
        &sync, (*listener)->Dispatch->NdkListen(*listener, (PSOCKADDR)address, RcLengthOf(address),
                                                RcRequestCompletion, &sync));
}

/* Waits for Event up to the deadline (interrupt time, 100 ns units). */
static BOOLEAN RcWaitUntil(PKEVENT Event, ULONGLONG Deadline) {
    const ULONGLONG now = KeQueryInterruptTime();
    LARGE_INTEGER timeout;
    timeout.QuadPart = now >= Deadline ? 0 : -(LONGLONG)(Deadline - now);
    return (BOOLEAN)(KeWaitForSingleObject(Event, Executive, KernelMode, FALSE, &timeout) ==
                     STATUS_SUCCESS);
}

static KSTART_ROUTINE RcChannelThread;
static VOID RcChannelThread(PVOID Context) {
    RC_DRIVER *driver = (RC_DRIVER *)Context;
    ULONGLONG deadline;
    ULONG remote = 0, local = 0, fewestCycles = MAXULONG, mostCycles = 0, chain = 0;
    NTSTATUS status;

    status = RcListen(driver, RC_IPV4);
    if (NT_SUCCESS(status)) status = RcListen(driver, RC_IPV6);
    if (RC_OK(driver, status, "NdkCreateListener/NdkListen (handle A, IPv4 and IPv6)")) {
        for (ULONG i = 0; i < RC_CONNECTIONS; ++i)
            RcClientConnect(driver, driver->Clients[i]);
    }

    deadline = KeQueryInterruptTime() + (ULONGLONG)RC_WAIT_MS * 10000;
    for (ULONG i = 0; i < RC_CONNECTIONS; ++i) {
        RC_CONNECTION *client = driver->Clients[i];
        if (!client->Connected) continue;
        if (!RC_CHECK(driver, RcWaitUntil(&client->Finished, deadline)))
            RC_ERROR("connection %lu: %lu of %lu requests completed in time", i, client->Completed,
                     (ULONG)RC_REQUESTS_PER_CONNECTION);
    }

    /* Client side: disconnect, wait for the callbacks, close. */
    for (ULONG i = 0; i < RC_CONNECTIONS; ++i) {
        RC_CONNECTION *client = driver->Clients[i];
        if (client->Connected) {
            status = RcDisconnect(client);
            RC_OK(driver, status, "NdkDisconnect (client)");
        }
        RcConnectionClose(client);
        chain = chain > client->LongestChain ? chain : client->LongestChain;
        remote += client->RemoteInvalidations;
        local += client->LocalInvalidations;
        for (ULONG m = 0; m < RC_FRMRS_PER_CONNECTION; ++m) {
            fewestCycles = RC_MIN(fewestCycles, client->Frmrs[m].Cycles);
            mostCycles =
                mostCycles > client->Frmrs[m].Cycles ? mostCycles : client->Frmrs[m].Cycles;
        }
    }
    /* Server side: each disconnect work item tears its connection down. */
    deadline = KeQueryInterruptTime() + (ULONGLONG)RC_WAIT_MS * 10000;
    for (ULONG i = 0; i < RC_CONNECTIONS; ++i) {
        RC_CONNECTION *server = driver->Servers[i];
        if (server->Incoming == NULL) continue; /* never requested: nothing to tear down */
        RC_CHECK(driver, RcWaitUntil(&server->Finished, deadline));
    }
    /* The listener's close pends while accepted connectors live: they are closed. */
    ExWaitForRundownProtectionRelease(&driver->ListenerRundown);
    for (ULONG f = 0; f < RC_FAMILIES; ++f) {
        NDK_LISTENER *listener = driver->Listeners[f];
        if (listener != NULL) RcClose(&listener->Header, listener->Dispatch->NdkCloseListener);
        driver->Listeners[f] = NULL;
    }
    RC_INFO(
        "%lu connections (IPv4, IPv6) x %lu requests; %lu remote and %lu local invalidations; %lu "
        "to "
        "%lu registrations per MR; up to %lu requests per DEFER chain",
        (ULONG)RC_CONNECTIONS, (ULONG)RC_REQUESTS_PER_CONNECTION, remote, local, fewestCycles,
        mostCycles, chain);
    /* The first pump of every client finds RC_WINDOW free slots and the credits. */
    RC_CHECK(driver, chain == RC_WINDOW);
    RC_CHECK(driver, remote > 0 && local > 0 &&
                         remote + local == RC_CONNECTIONS * RC_REQUESTS_PER_CONNECTION);
    /* The FIFO of free MRs cycles every MR, each with its one cached token. */
    RC_CHECK(driver, fewestCycles >= 2);
    InterlockedExchange(&driver->ChannelFinished, 1);
    PsTerminateSystemThread(STATUS_SUCCESS);
}

/* ------------------------------------------------------------------------- */
/* WSK and adapters                                                           */
/* ------------------------------------------------------------------------- */

static NTSTATUS RcWskStart(RC_DRIVER *Driver) {
    NTSTATUS status;
    Driver->WskClientDispatch.Version = MAKE_WSK_VERSION(1, 0);
    Driver->WskClientNpi.Dispatch = &Driver->WskClientDispatch;
    status = WskRegister(&Driver->WskClientNpi, &Driver->WskRegistration);
    if (!NT_SUCCESS(status)) return status;
    Driver->WskRegistered = TRUE;
    status =
        WskCaptureProviderNPI(&Driver->WskRegistration, WSK_INFINITE_WAIT, &Driver->WskProviderNpi);
    if (!NT_SUCCESS(status)) return status;
    Driver->WskCaptured = TRUE;
    /* The output buffer receives the two-pointer table itself. */
    return Driver->WskProviderNpi.Dispatch->WskControlClient(
        Driver->WskProviderNpi.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
        sizeof(WSK_PROVIDER_NDK_DISPATCH), &Driver->WskNdk, NULL, NULL);
}

static NTSTATUS RcOpenAdapter(RC_DRIVER *Driver, RC_ADAPTER *Adapter) {
    /* Major 1, any minor: Info.Version says which. 1.2 brings GetCqResultsEx,
     * DEFER and SendAndInvalidate, which this driver needs. */
    const NDK_VERSION version = {1, 0};
    const NDK_ADAPTER_INFO *info = &Adapter->Info;
    ULONG size = sizeof Adapter->Info;
    NTSTATUS status;

    status = Driver->WskNdk.WskOpenNdkAdapter(Driver->WskProviderNpi.Client, version,
                                              Driver->IfIndex, &Adapter->Ndk);
    if (!NT_SUCCESS(status)) {
        Adapter->Ndk = NULL;
        return status;
    }
    status = Adapter->Ndk->Dispatch->NdkQueryAdapterInfo(Adapter->Ndk, &Adapter->Info, &size);
    if (!NT_SUCCESS(status)) return status;
    /* What this driver's sizes need of the adapter. */
    if (info->Version.Major == 1 && info->Version.Minor < 2) return STATUS_NOT_SUPPORTED;
    if (info->FRMRPageCount < RC_IO_PAGES || info->MaxReceiveRequestSge < RC_RECEIVE_SGES ||
        info->MaxInitiatorRequestSge < RC_INITIATOR_SGES ||
        info->MaxReadRequestSge < RC_INITIATOR_SGES ||
        info->MaxTransferLength < RC_HEADER_BYTES + RC_MAX_PAYLOAD ||
        info->MaxReceiveQueueDepth < RC_RECEIVE_DEPTH ||
        info->MaxInitiatorQueueDepth < RC_INITIATOR_DEPTH ||
        info->MaxCqDepth < RC_INITIATOR_DEPTH || info->MaxInboundReadLimit < 1 ||
        info->MaxOutboundReadLimit < 1 || info->MaxCallerData < sizeof(RC_HELLO) ||
        info->MaxCalleeData < sizeof(RC_HELLO))
        return STATUS_NOT_SUPPORTED;
    return STATUS_SUCCESS;
}

static NTSTATUS RcResolveAddresses(RC_DRIVER *Driver) {
    NET_LUID luid;
    USHORT port;
    ULONG scope;
    NTSTATUS status;

    /* Ports come back in network byte order, as sockaddrs want them. */
    status = RtlIpv4StringToAddressExA(RC_LISTEN_ADDRESS, TRUE,
                                       &Driver->ListenAddress[RC_IPV4].Ipv4.sin_addr, &port);
    if (!NT_SUCCESS(status)) return status;
    Driver->ListenAddress[RC_IPV4].Ipv4.sin_family = AF_INET;
    Driver->ListenAddress[RC_IPV4].Ipv4.sin_port = port;
    status = RtlIpv4StringToAddressExA(RC_CLIENT_ADDRESS, TRUE,
                                       &Driver->ClientAddress[RC_IPV4].Ipv4.sin_addr, &port);
    if (!NT_SUCCESS(status)) return status;
    Driver->ClientAddress[RC_IPV4].Ipv4.sin_family = AF_INET;
    Driver->ClientAddress[RC_IPV4].Ipv4.sin_port = port;
    status = RtlIpv6StringToAddressExA(
        RC_LISTEN_ADDRESS6, &Driver->ListenAddress[RC_IPV6].Ipv6.sin6_addr, &scope, &port);
    if (!NT_SUCCESS(status)) return status;
    Driver->ListenAddress[RC_IPV6].Ipv6.sin6_family = AF_INET6;
    Driver->ListenAddress[RC_IPV6].Ipv6.sin6_port = port;
    Driver->ListenAddress[RC_IPV6].Ipv6.sin6_scope_id = scope;
    status = RtlIpv6StringToAddressExA(
        RC_CLIENT_ADDRESS6, &Driver->ClientAddress[RC_IPV6].Ipv6.sin6_addr, &scope, &port);
    if (!NT_SUCCESS(status)) return status;
    Driver->ClientAddress[RC_IPV6].Ipv6.sin6_family = AF_INET6;
    Driver->ClientAddress[RC_IPV6].Ipv6.sin6_port = port;
    Driver->ClientAddress[RC_IPV6].Ipv6.sin6_scope_id = scope;
    /* Interface alias -> LUID -> index, as WskOpenNdkAdapter wants it. */
    status = ConvertInterfaceAliasToLuid(RC_ADAPTER_ALIAS, &luid);
    if (!NT_SUCCESS(status)) return status;
    return ConvertInterfaceLuidToIndex(&luid, &Driver->IfIndex);
}

/* ------------------------------------------------------------------------- */
/* DriverEntry / DriverUnload                                                 */
/* ------------------------------------------------------------------------- */

static RC_CONNECTION *RcConnectionAllocate(RC_DRIVER *Driver, ULONG Index, BOOLEAN Server) {
    RC_CONNECTION *connection =
        (RC_CONNECTION *)ExAllocatePool2(POOL_FLAG_NON_PAGED, sizeof *connection, RC_POOL_TAG);
    if (connection == NULL) return NULL;
    connection->Driver = Driver;
    connection->Index = Index;
    connection->Server = Server;
    connection->DisconnectBothSides = (BOOLEAN)((Index & 1) != 0);
    connection->Family = Index < RC_CONNECTIONS / 2 ? RC_IPV4 : RC_IPV6;
    ExInitializeRundownProtection(&connection->Rundown);
    KeInitializeSpinLock(&connection->Lock);
    KeInitializeEvent(&connection->Finished, NotificationEvent, FALSE);
    connection->DisconnectWork = IoAllocateWorkItem(Driver->Device);
    if (Server) connection->AcceptWork = IoAllocateWorkItem(Driver->Device);
    if (connection->DisconnectWork == NULL || (Server && connection->AcceptWork == NULL)) {
        if (connection->DisconnectWork != NULL) IoFreeWorkItem(connection->DisconnectWork);
        if (connection->AcceptWork != NULL) IoFreeWorkItem(connection->AcceptWork);
        ExFreePoolWithTag(connection, RC_POOL_TAG);
        return NULL;
    }
    return connection;
}

static VOID RcConnectionFree(RC_CONNECTION *Connection) {
    if (Connection == NULL) return;
    IoFreeWorkItem(Connection->DisconnectWork);
    if (Connection->AcceptWork != NULL) IoFreeWorkItem(Connection->AcceptWork);
    ExFreePoolWithTag(Connection, RC_POOL_TAG);
}

/* Closes what DriverEntry opened; the channel thread and every work item are done. */
static VOID RcCloseDriver(RC_DRIVER *Driver) {
    for (ULONG i = 0; i < RC_CONNECTIONS; ++i) {
        RcConnectionFree(Driver->Clients[i]);
        RcConnectionFree(Driver->Servers[i]);
        Driver->Clients[i] = Driver->Servers[i] = NULL;
    }
    /* Blocking: every callback on every object of the adapter has returned. */
    for (ULONG h = 0; h < RcHandleCount; ++h) {
        if (Driver->Adapters[h].Ndk != NULL)
            Driver->WskNdk.WskCloseNdkAdapter(Driver->WskProviderNpi.Client,
                                              Driver->Adapters[h].Ndk);
        Driver->Adapters[h].Ndk = NULL;
    }
    if (Driver->WskCaptured) WskReleaseProviderNPI(&Driver->WskRegistration);
    if (Driver->WskRegistered) WskDeregister(&Driver->WskRegistration);
    if (Driver->Device != NULL) IoDeleteDevice(Driver->Device);
}

static DRIVER_UNLOAD RcUnload;
static VOID RcUnload(PDRIVER_OBJECT DriverObject) {
    RC_DRIVER *driver = RcDriver;
    LONG checks, failures;
    NTSTATUS firstStatus;
    ULONG firstLine;
    BOOLEAN finished;
    UNREFERENCED_PARAMETER(DriverObject);

    /* The channel thread bounds its waits on the peers, so this wait ends. */
    KeWaitForSingleObject(driver->ChannelThread, Executive, KernelMode, FALSE, NULL);
    ObDereferenceObject(driver->ChannelThread);
    RcCloseDriver(driver);

    checks = driver->Checks;
    failures = driver->Failures;
    firstStatus = driver->FirstFailureStatus;
    firstLine = driver->FirstFailureLine;
    finished = (BOOLEAN)(driver->ChannelFinished != 0);
    RcDriver = NULL;
    ExFreePoolWithTag(driver, RC_POOL_TAG);

    if (failures == 0 && finished && checks > 0) {
        RC_INFO("all checks passed (%ld checks)", (long)checks);
        return;
    }
    RC_ERROR("%ld of %ld checks failed; the first at line %lu (0x%08X)", (long)failures,
             (long)checks, firstLine, (unsigned)firstStatus);
    KeBugCheckEx(RC_SELF_TEST_FAILED, (ULONG_PTR)failures, firstLine, (ULONG)firstStatus, 0);
}

DRIVER_INITIALIZE DriverEntry;
NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    RC_DRIVER *driver;
    HANDLE thread;
    NTSTATUS status;
    UNREFERENCED_PARAMETER(RegistryPath);

    /* Zeroed: ExAllocatePool2 zeroes unless POOL_FLAG_UNINITIALIZED. */
    driver = (RC_DRIVER *)ExAllocatePool2(POOL_FLAG_NON_PAGED, sizeof *driver, RC_POOL_TAG);
    if (driver == NULL) return STATUS_INSUFFICIENT_RESOURCES;
    ExInitializeRundownProtection(&driver->ListenerRundown);

    status = RcResolveAddresses(driver);
    if (NT_SUCCESS(status)) status = RcWskStart(driver);
    /* Three handles on one interface: listener (A), accepting side (B) and
     * initiating side (C), as independent parts of a driver hold them. */
    for (ULONG h = 0; h < RcHandleCount && NT_SUCCESS(status); ++h)
        status = RcOpenAdapter(driver, &driver->Adapters[h]);
    if (NT_SUCCESS(status)) {
        const NDK_ADAPTER_INFO *info = &driver->Adapters[RcHandleConnect].Info;
        RC_INFO(
            "adapter %ws (if_index %lu): 3 handles, NDK %u.%u, FRMRPageCount %lu, flags "
            "0x%08lX",
            RC_ADAPTER_ALIAS, (ULONG)driver->IfIndex, (unsigned)info->Version.Major,
            (unsigned)info->Version.Minor, info->FRMRPageCount, info->AdapterFlags);
        /* A device object, as IoAllocateWorkItem needs one. */
        status = IoCreateDevice(DriverObject, 0, NULL, FILE_DEVICE_NETWORK, FILE_DEVICE_SECURE_OPEN,
                                FALSE, &driver->Device);
    }
    if (NT_SUCCESS(status)) {
        driver->Device->Flags &= ~DO_DEVICE_INITIALIZING;
        for (ULONG i = 0; i < RC_CONNECTIONS && NT_SUCCESS(status); ++i) {
            driver->Clients[i] = RcConnectionAllocate(driver, i, FALSE);
            driver->Servers[i] = RcConnectionAllocate(driver, i, TRUE);
            if (driver->Clients[i] == NULL || driver->Servers[i] == NULL)
                status = STATUS_INSUFFICIENT_RESOURCES;
        }
    }
    if (NT_SUCCESS(status))
        status = PsCreateSystemThread(&thread, THREAD_ALL_ACCESS, NULL, NULL, NULL, RcChannelThread,
                                      driver);
    if (!NT_SUCCESS(status)) {
        RC_ERROR("DriverEntry failed (0x%08X)", (unsigned)status);
        RcCloseDriver(driver);
        ExFreePoolWithTag(driver, RC_POOL_TAG);
        return status;
    }
    /* Unload waits for the thread through a reference on its object; taking
     * one on a handle just created cannot fail. */
    NT_VERIFY(NT_SUCCESS(ObReferenceObjectByHandle(thread, THREAD_ALL_ACCESS, *PsThreadType,
                                                   KernelMode, &driver->ChannelThread, NULL)));
    ZwClose(thread);
    RcDriver = driver;
    DriverObject->DriverUnload = RcUnload;
    return STATUS_SUCCESS;
}
