/*
 * pingpong.c - ibv_rc_pingpong, written as a Windows kernel NDK consumer.
 *
 * Two ends of a reliable connection bounce a message back and forth `iters`
 * times and report throughput and round-trip time, with the flags and output
 * of rdma-core's ibv_rc_pingpong. Everything below the command line is code a
 * kernel driver could contain unchanged:
 *
 *   - the adapter is reached the WSK way: WskRegister -> WskCaptureProviderNPI
 *     -> WskControlClient(WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH), which copies a
 *     WSK_PROVIDER_NDK_DISPATCH -> WskOpenNdkAdapter ... WskCloseNdkAdapter ->
 *     WskReleaseProviderNPI -> WskDeregister;
 *   - every asynchronous NDK call becomes a synchronous one with a KEVENT on the
 *     caller's stack and a completion callback that sets it. A call may finish
 *     inline (any status but STATUS_PENDING: the callback is never called) or
 *     later (STATUS_PENDING: the callback is called exactly once);
 *   - the message buffer comes from non-paged pool and is registered through an
 *     MDL (IoAllocateMdl + MmBuildMdlForNonPagedPool + NdkRegisterMr);
 *   - with -e the ends sleep on CQ events (NdkArmCq + a notification callback
 *     that sets a KEVENT) instead of polling.
 *
 * Protocol (as ibv_rc_pingpong): both ends keep receives posted; the client
 * sends first; an end sends its next message once its previous send completed
 * and the peer's message arrived. Each end sends and receives `iters` messages.
 * Every message carries a pattern derived from its sequence number, and the
 * receiver checks every byte.
 *
 * Connection: the server listens on its adapter's address, port -p (the
 * NetworkDirect port space, not TCP); the client connects with a small
 * private-data header carrying the options that must match on both ends
 * (SYMMETRIC in the usage text), and the server refuses a mismatch. A
 * standalone server prints "listening on ADDR:PORT" once it listens; a client
 * whose connect is refused (nobody listens yet) tries again for up to 5 s.
 *
 * What is not kernel code: main(), option parsing and printing, and the adapter
 * directory (softndk_adapters.h), which stands in for the IP helper calls a
 * driver would make to turn an interface alias into the IfIndex and to find
 * the interface's address. NDKPI itself exposes neither the queue pair number
 * nor the packet sequence numbers, so the address lines show what an NDK
 * consumer does see of a connection: its IP addresses and ND ports.
 *
 * Exit status: 0 success, 1 runtime failure (message with the NTSTATUS on
 * stderr), 2 usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getopt_long */
#endif

/* clang-format off: the WDK's ndkpi.h needs ntddk.h's types first */
#include <ndkpi.h>
#include <ntddk.h>
#include <ws2ipdef.h>
#include <wsk.h>
#include <wskndk.h>
/* clang-format on */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softndk_adapters.h"
#include "softndk_status.h"

#define PP_POOL_TAG         ((ULONG)0x676E7050) /* 'gnPp' (hex: -Wmultichar) */
#define PP_DEFAULT_PORT     18515
#define PP_DEFAULT_SIZE     4096
#define PP_DEFAULT_ITERS    1000
#define PP_DEFAULT_RX_DEPTH 500
#define PP_HELLO_MAGIC      0x504E4750u /* "PGNP" */
#define PP_HELLO_VERSION    1
/* Empty polls between two yields of the processor. Polling is what the flag-less
 * mode is about, but the machine may have fewer cores than busy threads. */
#define PP_POLLS_PER_YIELD 64
/* A client that comes before its server (nobody listens yet: the connect is refused,
 * or over UDP times out) tries again every PP_RETRY_INTERVAL_MS for up to
 * PP_CONNECT_RETRY_MS, so a server and a client started together need no sleep. */
#define PP_CONNECT_RETRY_MS  5000
#define PP_RETRY_INTERVAL_MS 100

enum { PP_EXIT_OK = 0, PP_EXIT_FAILURE = 1, PP_EXIT_USAGE = 2 };

/* RequestContext values of the two kinds of work request (as rc_pingpong's
 * wr_id): the pending mask uses the same bits. */
#define PP_RECV_WRID    ((PVOID)(ULONG_PTR)1)
#define PP_SEND_WRID    ((PVOID)(ULONG_PTR)2)
#define PP_PENDING_RECV 1u
#define PP_PENDING_SEND 2u

typedef struct _PP_OPTIONS {
    USHORT Port;
    const char *Device;     /* alias or if_index; NULL: the first adapter */
    ULONG Size;             /* bytes per message */
    ULONG Iters;            /* messages each way */
    ULONG RxDepth;          /* receives kept posted */
    BOOLEAN Events;         /* -e: sleep on CQ events */
    BOOLEAN Loopback;       /* -l: server and client on two threads */
    ULONG ConnectRetryMs;   /* client: how long a refused connect is retried */
    const char *ServerName; /* client mode when set */
} PP_OPTIONS;

/* Private data of the connect request and of the accept: options that must
 * match (SYMMETRIC). Little-endian host order; both ends run on this machine. */
typedef struct _PP_HELLO {
    UINT32 Magic;
    UINT32 Version;
    UINT32 Size;
    UINT32 Iters;
} PP_HELLO;

/* The WSK client: registration and the NDK extension's dispatch (a copy). */
typedef struct _PP_WSK {
    WSK_CLIENT_DISPATCH ClientDispatch;
    WSK_CLIENT_NPI ClientNpi;
    WSK_REGISTRATION Registration;
    WSK_PROVIDER_NPI ProviderNpi;
    WSK_PROVIDER_NDK_DISPATCH Ndk;
    BOOLEAN Registered;
    BOOLEAN Captured;
} PP_WSK;

/* One end of the connection. */
typedef struct _PP_END {
    const PP_OPTIONS *Options;
    const PP_WSK *Wsk;
    BOOLEAN IsServer;
    const char *Role;               /* "server" / "client", for messages */
    struct softndk_adapter Adapter; /* the adapter directory's view */

    NDK_ADAPTER *NdkAdapter;
    NDK_ADAPTER_INFO Info;
    NDK_PD *Pd;
    NDK_CQ *Cq;
    NDK_QP *Qp;
    NDK_MR *Mr;
    BOOLEAN MrRegistered;
    PMDL Mdl;
    PUCHAR Buffer; /* [0, Size): what we send; [Size, 2 Size): what we receive */
    UINT32 LocalToken;
    NDK_LISTENER *Listener;
    NDK_CONNECTOR *Connector;
    BOOLEAN Connected;

    /* Set by the listener's connect event (server). */
    KEVENT ConnectEvent;
    NDK_CONNECTOR *volatile Incoming;
    /* Set by the CQ notification callback (-e). */
    KEVENT CqEvent;
    volatile NTSTATUS CqStatus;
    /* Set by the disconnect event: the peer is gone. */
    KEVENT PeerGoneEvent;
    /* -l: set by the other end when it failed (NULL otherwise). */
    PKEVENT AbortEvent;
    /* -l: set by this end when it fails (NULL otherwise). */
    PKEVENT FailEvent;
    /* Server, -l: set once listening (or failed), so the client may connect. */
    PKEVENT ListeningEvent;
    /* Standalone server: print "listening on ADDR:PORT" once it listens. */
    BOOLEAN AnnounceListening;

    ULONG ReceivesPosted;
    SOCKADDR_STORAGE LocalAddress, PeerAddress;
    double Seconds;
    int ExitCode;
} PP_END;

/* ------------------------------------------------------------------------- */
/* Messages                                                                   */
/* ------------------------------------------------------------------------- */

static void PpError(const PP_END *End, const char *Format, ...) {
    char text[512];
    va_list args;
    va_start(args, Format);
    vsnprintf(text, sizeof text, Format, args);
    va_end(args);
    if (End != NULL && End->Options->Loopback)
        fprintf(stderr, "pingpong (%s): %s\n", End->Role, text);
    else
        fprintf(stderr, "pingpong: %s\n", text);
}

/* "<what> failed: STATUS_X (0x...)"; returns PP_EXIT_FAILURE. */
static int PpFailed(const PP_END *End, const char *What, NTSTATUS Status) {
    PpError(End, "%s failed: %s (0x%08X)", What, softndk_status_name(Status), (unsigned)Status);
    return PP_EXIT_FAILURE;
}

/* ------------------------------------------------------------------------- */
/* Asynchronous calls made synchronous                                        */
/* ------------------------------------------------------------------------- */

/* Lives on the waiting thread's stack for the duration of one call. */
typedef struct _PP_SYNC {
    KEVENT Event;
    NTSTATUS Status;
    NDK_OBJECT_HEADER *Object;
} PP_SYNC;

static void PpSyncInit(PP_SYNC *Sync) {
    KeInitializeEvent(&Sync->Event, NotificationEvent, FALSE);
    Sync->Status = STATUS_PENDING;
    Sync->Object = NULL;
}

/* NDK_FN_REQUEST_COMPLETION. The status is stored before KeSetEvent, whose
 * last access to the event is the one that wakes the waiter: after it the
 * waiter may return and its stack frame (and this PP_SYNC) disappear. */
static VOID PpRequestCompletion(PVOID Context, NTSTATUS Status) {
    PP_SYNC *sync = (PP_SYNC *)Context;
    sync->Status = Status;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

/* NDK_FN_CREATE_COMPLETION */
static VOID PpCreateCompletion(PVOID Context, NTSTATUS Status, NDK_OBJECT_HEADER *Object) {
    PP_SYNC *sync = (PP_SYNC *)Context;
    sync->Object = Object;
    sync->Status = Status;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

/* NDK_FN_CLOSE_COMPLETION */
static VOID PpCloseCompletion(PVOID Context) {
    PP_SYNC *sync = (PP_SYNC *)Context;
    sync->Status = STATUS_SUCCESS;
    KeSetEvent(&sync->Event, IO_NO_INCREMENT, FALSE);
}

/* The final status of a call that returned `Status`: itself, or - when it
 * returned STATUS_PENDING - what the completion callback reported. */
static NTSTATUS PpFinish(PP_SYNC *Sync, NTSTATUS Status) {
    if (Status != STATUS_PENDING) return Status;
    KeWaitForSingleObject(&Sync->Event, Executive, KernelMode, FALSE, NULL);
    return Sync->Status;
}

/* A create: the object comes back through *Out inline, or through the
 * completion's NDK_OBJECT_HEADER after STATUS_PENDING. */
static NTSTATUS PpFinishCreate(PP_SYNC *Sync, NTSTATUS Status, void **Out) {
    if (Status == STATUS_PENDING) {
        Status = PpFinish(Sync, Status);
        if (NT_SUCCESS(Status)) *Out = Sync->Object;
    }
    return Status;
}

static void PpClose(NDK_OBJECT_HEADER *Object, NDK_FN_CLOSE_OBJECT CloseFn) {
    PP_SYNC sync;
    PpSyncInit(&sync);
    PpFinish(&sync, CloseFn(Object, PpCloseCompletion, &sync));
}

/* ------------------------------------------------------------------------- */
/* Consumer event callbacks (called on a provider thread, must not block)     */
/* ------------------------------------------------------------------------- */

static VOID PpCqNotification(PVOID Context, NTSTATUS CqStatus) {
    PP_END *end = (PP_END *)Context;
    if (!NT_SUCCESS(CqStatus)) end->CqStatus = CqStatus;
    KeSetEvent(&end->CqEvent, IO_NO_INCREMENT, FALSE);
}

static VOID PpIgnoreClose(PVOID Context) {
    UNREFERENCED_PARAMETER(Context);
}

static VOID PpConnectEvent(PVOID Context, NDK_CONNECTOR *Connector) {
    PP_END *end = (PP_END *)Context;
    if (end->Incoming != NULL) {
        /* One connection per run: closing an unaccepted connector rejects it. */
        Connector->Dispatch->NdkCloseConnector(&Connector->Header, PpIgnoreClose, NULL);
        return;
    }
    end->Incoming = Connector;
    KeSetEvent(&end->ConnectEvent, IO_NO_INCREMENT, FALSE);
}

static VOID PpDisconnectEvent(PVOID Context) {
    PP_END *end = (PP_END *)Context;
    KeSetEvent(&end->PeerGoneEvent, IO_NO_INCREMENT, FALSE);
}

/* Waits for `Event`, or the end's abort event. TRUE if `Event` fired. */
static BOOLEAN PpWaitOrAbort(PP_END *End, PKEVENT Event) {
    PVOID objects[2] = {Event, End->AbortEvent};
    const ULONG count = End->AbortEvent != NULL ? 2 : 1;
    const NTSTATUS s =
        KeWaitForMultipleObjects(count, objects, WaitAny, Executive, KernelMode, FALSE, NULL, NULL);
    return s == STATUS_WAIT_0;
}

/* ------------------------------------------------------------------------- */
/* Resources                                                                  */
/* ------------------------------------------------------------------------- */

static int PpOpenAdapter(PP_END *End) {
    const NDK_VERSION version = {1, 0}; /* major 1, any minor */
    NTSTATUS status = End->Wsk->Ndk.WskOpenNdkAdapter(End->Wsk->ProviderNpi.Client, version,
                                                      End->Adapter.if_index, &End->NdkAdapter);
    if (!NT_SUCCESS(status)) {
        End->NdkAdapter = NULL;
        return PpFailed(End, "WskOpenNdkAdapter", status);
    }
    ULONG size = sizeof End->Info;
    RtlZeroMemory(&End->Info, sizeof End->Info);
    status = End->NdkAdapter->Dispatch->NdkQueryAdapterInfo(End->NdkAdapter, &End->Info, &size);
    if (!NT_SUCCESS(status)) return PpFailed(End, "NdkQueryAdapterInfo", status);
    return PP_EXIT_OK;
}

static int PpCreateResources(PP_END *End) {
    const PP_OPTIONS *o = End->Options;
    NDK_ADAPTER *adapter = End->NdkAdapter;
    PP_SYNC sync;
    NTSTATUS status;

    if (o->Size > End->Info.MaxTransferLength) {
        PpError(End, "message size %lu exceeds the adapter's MaxTransferLength %lu",
                (unsigned long)o->Size, (unsigned long)End->Info.MaxTransferLength);
        return PP_EXIT_FAILURE;
    }
    if (o->RxDepth > End->Info.MaxReceiveQueueDepth || o->RxDepth + 1 > End->Info.MaxCqDepth) {
        PpError(End, "rx depth %lu exceeds the adapter's queue limits", (unsigned long)o->RxDepth);
        return PP_EXIT_FAILURE;
    }

    PpSyncInit(&sync);
    status = PpFinishCreate(
        &sync, adapter->Dispatch->NdkCreatePd(adapter, PpCreateCompletion, &sync, &End->Pd),
        (void **)&End->Pd);
    if (!NT_SUCCESS(status)) {
        End->Pd = NULL;
        return PpFailed(End, "NdkCreatePd", status);
    }

    /* One CQ for both queues: rx_depth receives plus one send in flight. */
    PpSyncInit(&sync);
    status = PpFinishCreate(
        &sync,
        adapter->Dispatch->NdkCreateCq(adapter, o->RxDepth + 1, PpCqNotification, End, NULL,
                                       PpCreateCompletion, &sync, &End->Cq),
        (void **)&End->Cq);
    if (!NT_SUCCESS(status)) {
        End->Cq = NULL;
        return PpFailed(End, "NdkCreateCq", status);
    }

    PpSyncInit(&sync);
    status =
        PpFinishCreate(&sync,
                       End->Pd->Dispatch->NdkCreateQp(End->Pd, End->Cq, End->Cq, End, o->RxDepth, 1,
                                                      1, 1, 0, PpCreateCompletion, &sync, &End->Qp),
                       (void **)&End->Qp);
    if (!NT_SUCCESS(status)) {
        End->Qp = NULL;
        return PpFailed(End, "NdkCreateQp", status);
    }

    /* The buffer, described by an MDL and registered for local access: send
     * and receive need no remote rights. */
    const SIZE_T bytes = (SIZE_T)o->Size * 2;
    End->Buffer = (PUCHAR)ExAllocatePoolWithTag(NonPagedPoolNx, bytes, PP_POOL_TAG);
    if (End->Buffer == NULL) return PpFailed(End, "ExAllocatePoolWithTag", STATUS_NO_MEMORY);
    RtlZeroMemory(End->Buffer, bytes);
    End->Mdl = IoAllocateMdl(End->Buffer, (ULONG)bytes, FALSE, FALSE, NULL);
    if (End->Mdl == NULL) return PpFailed(End, "IoAllocateMdl", STATUS_INSUFFICIENT_RESOURCES);
    MmBuildMdlForNonPagedPool(End->Mdl);

    PpSyncInit(&sync);
    status = PpFinishCreate(
        &sync, End->Pd->Dispatch->NdkCreateMr(End->Pd, FALSE, PpCreateCompletion, &sync, &End->Mr),
        (void **)&End->Mr);
    if (!NT_SUCCESS(status)) {
        End->Mr = NULL;
        return PpFailed(End, "NdkCreateMr", status);
    }
    PpSyncInit(&sync);
    status = PpFinish(&sync, End->Mr->Dispatch->NdkRegisterMr(End->Mr, End->Mdl, bytes,
                                                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                                                              PpRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) return PpFailed(End, "NdkRegisterMr", status);
    End->MrRegistered = TRUE;
    End->LocalToken = End->Mr->Dispatch->NdkGetLocalTokenFromMr(End->Mr);
    return PP_EXIT_OK;
}

static void PpDestroy(PP_END *End) {
    if (End->Connector != NULL) {
        if (End->Connected) {
            /* Graceful: completes after the peer answered (or timed out). */
            PP_SYNC sync;
            PpSyncInit(&sync);
            PpFinish(&sync, End->Connector->Dispatch->NdkDisconnect(End->Connector,
                                                                    PpRequestCompletion, &sync));
        }
        PpClose(&End->Connector->Header, End->Connector->Dispatch->NdkCloseConnector);
    }
    if (End->Listener != NULL)
        PpClose(&End->Listener->Header, End->Listener->Dispatch->NdkCloseListener);
    if (End->Qp != NULL) PpClose(&End->Qp->Header, End->Qp->Dispatch->NdkCloseQp);
    if (End->Mr != NULL) {
        if (End->MrRegistered) {
            PP_SYNC sync;
            PpSyncInit(&sync);
            PpFinish(&sync,
                     End->Mr->Dispatch->NdkDeregisterMr(End->Mr, PpRequestCompletion, &sync));
        }
        PpClose(&End->Mr->Header, End->Mr->Dispatch->NdkCloseMr);
    }
    if (End->Cq != NULL) PpClose(&End->Cq->Header, End->Cq->Dispatch->NdkCloseCq);
    if (End->Pd != NULL) PpClose(&End->Pd->Header, End->Pd->Dispatch->NdkClosePd);
    if (End->Mdl != NULL) IoFreeMdl(End->Mdl);
    if (End->Buffer != NULL) ExFreePoolWithTag(End->Buffer, PP_POOL_TAG);
    /* Blocks until every callback on every object of the adapter returned. */
    if (End->NdkAdapter != NULL)
        End->Wsk->Ndk.WskCloseNdkAdapter(End->Wsk->ProviderNpi.Client, End->NdkAdapter);
    End->Connector = NULL;
    End->Listener = NULL;
    End->Qp = NULL;
    End->Mr = NULL;
    End->Cq = NULL;
    End->Pd = NULL;
    End->Mdl = NULL;
    End->Buffer = NULL;
    End->NdkAdapter = NULL;
}

/* ------------------------------------------------------------------------- */
/* Work requests                                                              */
/* ------------------------------------------------------------------------- */

static NTSTATUS PpPostReceives(PP_END *End, ULONG Count) {
    NDK_SGE sge;
    sge.VirtualAddress = End->Buffer + End->Options->Size;
    sge.Length = End->Options->Size;
    sge.MemoryRegionToken = End->LocalToken;
    for (ULONG i = 0; i < Count; ++i) {
        const NTSTATUS status = End->Qp->Dispatch->NdkReceive(End->Qp, PP_RECV_WRID, &sge, 1);
        if (!NT_SUCCESS(status)) return status;
        ++End->ReceivesPosted;
    }
    return STATUS_SUCCESS;
}

/* Message contents: 64-bit words that differ per end, per message and along
 * the message, so a lost, stale, partial or misplaced message is caught.
 * Words go through memcpy: the receive half need not be 8-byte aligned. */
static UINT64 PpPatternWord(BOOLEAN FromServer, ULONG Sequence, SIZE_T Word) {
    const UINT64 seed = FromServer ? 0xA5A5F00DC0FFEE00ull : 0x5A5A0DDBA11FEED0ull;
    return (seed ^ ((UINT64)Sequence * 0x9E3779B97F4A7C15ull)) +
           (UINT64)Word * 0x0100804020100801ull;
}

static void PpFill(PUCHAR Data, ULONG Size, BOOLEAN FromServer, ULONG Sequence) {
    SIZE_T i = 0;
    for (; i + 8 <= Size; i += 8) {
        const UINT64 w = PpPatternWord(FromServer, Sequence, i / 8);
        RtlCopyMemory(Data + i, &w, 8);
    }
    const UINT64 tail = PpPatternWord(FromServer, Sequence, i / 8);
    RtlCopyMemory(Data + i, &tail, Size - i);
}

/* Offset of the first byte that differs from the pattern, or Size. */
static SIZE_T PpFirstMismatch(const UCHAR *Data, ULONG Size, BOOLEAN FromServer, ULONG Sequence) {
    SIZE_T i = 0;
    for (; i + 8 <= Size; i += 8) {
        const UINT64 w = PpPatternWord(FromServer, Sequence, i / 8);
        if (memcmp(Data + i, &w, 8) != 0) break;
    }
    const UINT64 w = PpPatternWord(FromServer, Sequence, i / 8);
    const UCHAR *expected = (const UCHAR *)&w;
    for (SIZE_T j = 0; i + j < Size && j < 8; ++j) {
        if (Data[i + j] != expected[j]) return i + j;
    }
    return Size;
}

static NTSTATUS PpPostSend(PP_END *End, ULONG Sequence) {
    const ULONG size = End->Options->Size;
    PpFill(End->Buffer, size, End->IsServer, Sequence);
    NDK_SGE sge;
    sge.VirtualAddress = End->Buffer;
    sge.Length = size;
    sge.MemoryRegionToken = End->LocalToken;
    return End->Qp->Dispatch->NdkSend(End->Qp, PP_SEND_WRID, &sge, 1, 0);
}

/* Checks received message `Sequence` byte by byte. */
static BOOLEAN PpVerify(PP_END *End, ULONG Sequence, ULONG Bytes) {
    const ULONG size = End->Options->Size;
    const PUCHAR data = End->Buffer + size;
    if (Bytes != size) {
        PpError(End, "message %lu: received %lu bytes, expected %lu", (unsigned long)Sequence,
                (unsigned long)Bytes, (unsigned long)size);
        return FALSE;
    }
    const SIZE_T bad = PpFirstMismatch(data, size, !End->IsServer, Sequence);
    if (bad != size) {
        PpError(End, "message %lu: wrong data from byte %lu on (0x%02X)", (unsigned long)Sequence,
                (unsigned long)bad, data[bad]);
        return FALSE;
    }
    return TRUE;
}

/* Fills Results with at least one completion: polls (yielding now and then),
 * or with -e arms the CQ and sleeps on the notification. Returns the count,
 * or 0 after printing why there will be none - except when the peer went away
 * and *PeerGone is given: then 0 and *PeerGone = TRUE, for the caller to judge. */
static ULONG PpWaitCompletions(PP_END *End, NDK_RESULT *Results, ULONG Capacity,
                               BOOLEAN *PeerGone) {
    NDK_CQ *cq = End->Cq;
    LARGE_INTEGER zero;
    zero.QuadPart = 0;
    for (ULONG polls = 1;; ++polls) {
        ULONG n = cq->Dispatch->NdkGetCqResults(cq, Results, Capacity);
        if (n != 0) return n;
        if (End->Options->Events) {
            /* Arm, then look once more: a completion that arrived between the
             * empty poll and the arm may not fire the notification. */
            cq->Dispatch->NdkArmCq(cq, NDK_CQ_NOTIFY_ANY);
            n = cq->Dispatch->NdkGetCqResults(cq, Results, Capacity);
            if (n != 0) return n;
            PVOID objects[3] = {&End->CqEvent, &End->PeerGoneEvent, End->AbortEvent};
            const ULONG count = End->AbortEvent != NULL ? 3 : 2;
            const NTSTATUS s = KeWaitForMultipleObjects(count, objects, WaitAny, Executive,
                                                        KernelMode, FALSE, NULL, NULL);
            if (!NT_SUCCESS(End->CqStatus)) {
                PpFailed(End, "CQ notification", End->CqStatus);
                return 0;
            }
            if (s == STATUS_WAIT_0) continue;
        } else {
            if (polls % PP_POLLS_PER_YIELD != 0) continue;
            if (KeReadStateEvent(&End->PeerGoneEvent) == 0 &&
                (End->AbortEvent == NULL || KeReadStateEvent(End->AbortEvent) == 0)) {
                KeDelayExecutionThread(KernelMode, FALSE, &zero);
                continue;
            }
        }
        /* The peer disconnected (or failed) before the exchange ended: take
         * what is already in the CQ, then give up. */
        n = cq->Dispatch->NdkGetCqResults(cq, Results, Capacity);
        if (n != 0) return n;
        if (PeerGone != NULL && KeReadStateEvent(&End->PeerGoneEvent) != 0) {
            *PeerGone = TRUE;
            return 0;
        }
        PpError(End, "the peer went away before the exchange finished");
        return 0;
    }
}

/* The server's last send was delivered if the client disconnected: the client
 * disconnects only once it has received every message. Its completion may still
 * be on the way (the ACK) when the disconnect flushes the QP, so a server in
 * that state ends the exchange as a success. */
static BOOLEAN PpLastSendDelivered(PP_END *End, ULONG Sent, ULONG Received) {
    const ULONG iters = End->Options->Iters;
    return End->IsServer && Received == iters && Sent + 1 == iters &&
           KeReadStateEvent(&End->PeerGoneEvent) != 0;
}

/* The timed exchange (rc_pingpong's main loop). */
static int PpExchange(PP_END *End) {
    const PP_OPTIONS *o = End->Options;
    ULONG sent = 0, received = 0, pending = PP_PENDING_RECV;
    NDK_RESULT results[2];
    LARGE_INTEGER frequency, start, end;
    NTSTATUS status;

    start = KeQueryPerformanceCounter(&frequency);
    if (!End->IsServer) {
        status = PpPostSend(End, sent);
        if (!NT_SUCCESS(status)) return PpFailed(End, "NdkSend", status);
        pending |= PP_PENDING_SEND;
    }
    while (received < o->Iters || sent < o->Iters) {
        if (PpLastSendDelivered(End, sent, received)) break;
        BOOLEAN peerGone = FALSE;
        const ULONG n = PpWaitCompletions(End, results, 2, &peerGone);
        if (n == 0) {
            if (PpLastSendDelivered(End, sent, received)) break;
            if (peerGone) PpError(End, "the peer went away before the exchange finished");
            return PP_EXIT_FAILURE;
        }
        for (ULONG i = 0; i < n; ++i) {
            const NDK_RESULT *r = &results[i];
            if (r->Status == STATUS_CANCELLED && r->RequestContext == PP_SEND_WRID &&
                PpLastSendDelivered(End, sent, received)) {
                ++sent;
                continue;
            }
            if (r->Status != STATUS_SUCCESS) {
                PpError(End, "%s completion failed: %s (0x%08X)",
                        r->RequestContext == PP_SEND_WRID ? "send" : "receive",
                        softndk_status_name(r->Status), (unsigned)r->Status);
                return PP_EXIT_FAILURE;
            }
            if (r->RequestContext == PP_SEND_WRID) {
                ++sent;
                pending &= ~PP_PENDING_SEND;
            } else if (r->RequestContext == PP_RECV_WRID) {
                if (!PpVerify(End, received, r->BytesTransferred)) return PP_EXIT_FAILURE;
                ++received;
                pending &= ~PP_PENDING_RECV;
                /* Refill in batches, as rc_pingpong does, once nearly empty. */
                if (--End->ReceivesPosted <= 1) {
                    status = PpPostReceives(End, o->RxDepth - End->ReceivesPosted);
                    if (!NT_SUCCESS(status)) return PpFailed(End, "NdkReceive", status);
                }
            } else {
                PpError(End, "completion with unknown request context %p", r->RequestContext);
                return PP_EXIT_FAILURE;
            }
            if (sent < o->Iters && pending == 0) {
                status = PpPostSend(End, sent);
                if (!NT_SUCCESS(status)) return PpFailed(End, "NdkSend", status);
                pending = PP_PENDING_RECV | PP_PENDING_SEND;
            }
        }
    }
    end = KeQueryPerformanceCounter(NULL);
    End->Seconds = (double)(end.QuadPart - start.QuadPart) / (double)frequency.QuadPart;
    return PP_EXIT_OK;
}

/* ------------------------------------------------------------------------- */
/* Connection                                                                 */
/* ------------------------------------------------------------------------- */

static ULONG PpSockaddrLength(const SOCKADDR_STORAGE *Address) {
    return Address->ss_family == AF_INET6 ? sizeof(SOCKADDR_IN6) : sizeof(SOCKADDR_IN);
}

static void PpSetPort(SOCKADDR_STORAGE *Address, USHORT Port) {
    if (Address->ss_family == AF_INET6)
        ((SOCKADDR_IN6 *)Address)->sin6_port = htons(Port);
    else
        ((SOCKADDR_IN *)Address)->sin_port = htons(Port);
}

static USHORT PpPort(const SOCKADDR_STORAGE *Address) {
    return ntohs(Address->ss_family == AF_INET6 ? ((const SOCKADDR_IN6 *)Address)->sin6_port
                                                : ((const SOCKADDR_IN *)Address)->sin_port);
}

static void PpFillHello(const PP_OPTIONS *Options, PP_HELLO *Hello) {
    Hello->Magic = PP_HELLO_MAGIC;
    Hello->Version = PP_HELLO_VERSION;
    Hello->Size = Options->Size;
    Hello->Iters = Options->Iters;
}

/* Reads the peer's hello from the connector's private data and checks the
 * SYMMETRIC options. */
static int PpCheckHello(PP_END *End, NDK_CONNECTOR *Connector) {
    UCHAR data[256];
    ULONG length = 0;
    NTSTATUS status =
        Connector->Dispatch->NdkGetConnectionData(Connector, NULL, NULL, NULL, &length);
    if (!NT_SUCCESS(status)) return PpFailed(End, "NdkGetConnectionData", status);
    if (length > sizeof data) length = sizeof data;
    RtlZeroMemory(data, sizeof data);
    status = Connector->Dispatch->NdkGetConnectionData(Connector, NULL, NULL, data, &length);
    if (!NT_SUCCESS(status) && status != STATUS_BUFFER_TOO_SMALL)
        return PpFailed(End, "NdkGetConnectionData", status);
    PP_HELLO hello;
    RtlCopyMemory(&hello, data, sizeof hello);
    if (hello.Magic != PP_HELLO_MAGIC || hello.Version != PP_HELLO_VERSION) {
        PpError(End, "the peer is not a pingpong of this version");
        return PP_EXIT_FAILURE;
    }
    if (hello.Size != End->Options->Size || hello.Iters != End->Options->Iters) {
        PpError(End, "options differ from the peer's (size %lu/%lu, iters %lu/%lu)",
                (unsigned long)End->Options->Size, (unsigned long)hello.Size,
                (unsigned long)End->Options->Iters, (unsigned long)hello.Iters);
        return PP_EXIT_FAILURE;
    }
    return PP_EXIT_OK;
}

static void PpReadAddresses(PP_END *End) {
    ULONG length = sizeof End->LocalAddress;
    End->Connector->Dispatch->NdkGetLocalAddress(End->Connector, (PSOCKADDR)&End->LocalAddress,
                                                 &length);
    length = sizeof End->PeerAddress;
    End->Connector->Dispatch->NdkGetPeerAddress(End->Connector, (PSOCKADDR)&End->PeerAddress,
                                                &length);
}

/* "listening on 127.0.0.1:18515" ("[::1]:18515" for IPv6), flushed: a script may
 * wait for the line before it starts the client. */
static void PpPrintListening(const SOCKADDR_STORAGE *Address) {
    char text[SOFTNDK_ADDRESS_STRING_SIZE];
    softndk_address_string((const struct sockaddr *)Address, text, sizeof text);
    if (Address->ss_family == AF_INET6)
        printf("listening on [%s]:%u\n", text, (unsigned)PpPort(Address));
    else
        printf("listening on %s:%u\n", text, (unsigned)PpPort(Address));
    fflush(stdout);
}

static int PpServerConnect(PP_END *End) {
    NDK_ADAPTER *adapter = End->NdkAdapter;
    PP_SYNC sync;
    NTSTATUS status;
    int rc;

    PpSyncInit(&sync);
    status =
        PpFinishCreate(&sync,
                       adapter->Dispatch->NdkCreateListener(
                           adapter, PpConnectEvent, End, PpCreateCompletion, &sync, &End->Listener),
                       (void **)&End->Listener);
    if (!NT_SUCCESS(status)) {
        End->Listener = NULL;
        return PpFailed(End, "NdkCreateListener", status);
    }
    const SOCKADDR_STORAGE *own = softndk_adapter_address(&End->Adapter, AF_UNSPEC);
    if (own == NULL) {
        PpError(End, "adapter %s has no address", End->Adapter.alias);
        return PP_EXIT_FAILURE;
    }
    SOCKADDR_STORAGE address = *own;
    PpSetPort(&address, End->Options->Port);
    PpSyncInit(&sync);
    status = PpFinish(&sync, End->Listener->Dispatch->NdkListen(End->Listener, (PSOCKADDR)&address,
                                                                PpSockaddrLength(&address),
                                                                PpRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) return PpFailed(End, "NdkListen", status);
    if (End->ListeningEvent != NULL) KeSetEvent(End->ListeningEvent, IO_NO_INCREMENT, FALSE);
    if (End->AnnounceListening) PpPrintListening(&address);

    if (!PpWaitOrAbort(End, &End->ConnectEvent)) return PP_EXIT_FAILURE;
    End->Connector = End->Incoming;
    rc = PpCheckHello(End, End->Connector);
    if (rc != PP_EXIT_OK) {
        End->Connector->Dispatch->NdkReject(End->Connector, NULL, 0);
        return rc;
    }
    PP_HELLO hello;
    PpFillHello(End->Options, &hello);
    PpSyncInit(&sync);
    status = PpFinish(&sync, End->Connector->Dispatch->NdkAccept(
                                 End->Connector, End->Qp, 0, 0, &hello, sizeof hello,
                                 PpDisconnectEvent, End, PpRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) return PpFailed(End, "NdkAccept", status);
    End->Connected = TRUE;
    PpReadAddresses(End);
    return PP_EXIT_OK;
}

static int PpClientConnect(PP_END *End) {
    NDK_ADAPTER *adapter = End->NdkAdapter;
    PP_SYNC sync;
    NTSTATUS status;
    int rc;

    /* The server: a numeric IPv4 or IPv6 address. */
    SOCKADDR_STORAGE server;
    RtlZeroMemory(&server, sizeof server);
    const char *name = End->Options->ServerName;
    if (inet_pton(AF_INET, name, &((SOCKADDR_IN *)&server)->sin_addr) == 1) {
        server.ss_family = AF_INET;
    } else if (inet_pton(AF_INET6, name, &((SOCKADDR_IN6 *)&server)->sin6_addr) == 1) {
        server.ss_family = AF_INET6;
    } else {
        PpError(End, "'%s' is not an IPv4 or IPv6 address", name);
        return PP_EXIT_FAILURE;
    }
    PpSetPort(&server, End->Options->Port);
    const SOCKADDR_STORAGE *own = softndk_adapter_address(&End->Adapter, server.ss_family);
    if (own == NULL) {
        PpError(End, "adapter %s has no %s address", End->Adapter.alias,
                server.ss_family == AF_INET6 ? "IPv6" : "IPv4");
        return PP_EXIT_FAILURE;
    }
    SOCKADDR_STORAGE source = *own; /* port 0: the provider picks one */

    /* Refused (or, over UDP, unanswered) means nobody listens yet: a fresh connector
     * tries again until the retry window closes. The QP stays as it was. */
    const LONGLONG deadline =
        (LONGLONG)KeQueryInterruptTime() + (LONGLONG)End->Options->ConnectRetryMs * 10000;
    for (;;) {
        PpSyncInit(&sync);
        status = PpFinishCreate(&sync,
                                adapter->Dispatch->NdkCreateConnector(adapter, PpCreateCompletion,
                                                                      &sync, &End->Connector),
                                (void **)&End->Connector);
        if (!NT_SUCCESS(status)) {
            End->Connector = NULL;
            return PpFailed(End, "NdkCreateConnector", status);
        }
        PP_HELLO hello;
        PpFillHello(End->Options, &hello);
        PpSyncInit(&sync);
        status = PpFinish(
            &sync, End->Connector->Dispatch->NdkConnect(
                       End->Connector, End->Qp, (PSOCKADDR)&source, PpSockaddrLength(&source),
                       (PSOCKADDR)&server, PpSockaddrLength(&server), 0, 0, &hello, sizeof hello,
                       PpRequestCompletion, &sync));
        if (NT_SUCCESS(status)) break;
        const BOOLEAN nobodyListens =
            (BOOLEAN)(status == STATUS_CONNECTION_REFUSED || status == STATUS_IO_TIMEOUT);
        if (!nobodyListens || (LONGLONG)KeQueryInterruptTime() >= deadline) {
            rc = PpFailed(End, "NdkConnect", status);
            if (status == STATUS_CONNECTION_REFUSED || status == STATUS_HOST_UNREACHABLE)
                PpError(End,
                        "(embedded mode reaches only the adapters of this process: "
                        "is a server listening here? try -l)");
            return rc;
        }
        PpClose(&End->Connector->Header, End->Connector->Dispatch->NdkCloseConnector);
        End->Connector = NULL;
        LARGE_INTEGER interval;
        interval.QuadPart = -(LONGLONG)PP_RETRY_INTERVAL_MS * 10000; /* relative, 100 ns */
        KeDelayExecutionThread(KernelMode, FALSE, &interval);
    }
    rc = PpCheckHello(End, End->Connector);
    if (rc != PP_EXIT_OK) {
        End->Connector->Dispatch->NdkReject(End->Connector, NULL, 0);
        return rc;
    }
    PpSyncInit(&sync);
    status =
        PpFinish(&sync, End->Connector->Dispatch->NdkCompleteConnect(
                            End->Connector, PpDisconnectEvent, End, PpRequestCompletion, &sync));
    if (!NT_SUCCESS(status)) return PpFailed(End, "NdkCompleteConnect", status);
    End->Connected = TRUE;
    PpReadAddresses(End);
    return PP_EXIT_OK;
}

/* ------------------------------------------------------------------------- */
/* One end, start to finish                                                   */
/* ------------------------------------------------------------------------- */

static int PpRunEnd(PP_END *End) {
    int rc = PpOpenAdapter(End);
    if (rc == PP_EXIT_OK) rc = PpCreateResources(End);
    if (rc == PP_EXIT_OK) {
        /* Receives first: the peer's first message may arrive as soon as the
         * connection is established. */
        const NTSTATUS status = PpPostReceives(End, End->Options->RxDepth);
        if (!NT_SUCCESS(status)) rc = PpFailed(End, "NdkReceive", status);
    }
    if (rc == PP_EXIT_OK) rc = End->IsServer ? PpServerConnect(End) : PpClientConnect(End);
    if (rc != PP_EXIT_OK && End->FailEvent != NULL)
        KeSetEvent(End->FailEvent, IO_NO_INCREMENT, FALSE);
    if (End->ListeningEvent != NULL) /* a server that failed early: release the client */
        KeSetEvent(End->ListeningEvent, IO_NO_INCREMENT, FALSE);
    if (rc == PP_EXIT_OK) rc = PpExchange(End);
    if (rc != PP_EXIT_OK && End->FailEvent != NULL)
        KeSetEvent(End->FailEvent, IO_NO_INCREMENT, FALSE);
    if (rc == PP_EXIT_OK && End->IsServer) {
        /* The client disconnects once it has everything; waiting for that
         * keeps the server from tearing the connection down under it. */
        PpWaitOrAbort(End, &End->PeerGoneEvent);
        End->Connected = FALSE; /* nothing left to disconnect gracefully */
    }
    PpDestroy(End);
    End->ExitCode = rc;
    return rc;
}

static void PpPrintAddress(const char *Label, const SOCKADDR_STORAGE *Address) {
    char text[SOFTNDK_ADDRESS_STRING_SIZE];
    printf("  %s IP %s, port %u\n", Label,
           softndk_address_string((const struct sockaddr *)Address, text, sizeof text),
           (unsigned)PpPort(Address));
}

static void PpPrintReport(const PP_END *End) {
    const PP_OPTIONS *o = End->Options;
    const double usec = End->Seconds * 1e6;
    const long long bytes = (long long)o->Size * o->Iters * 2;
    printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, End->Seconds,
           usec > 0 ? (double)bytes * 8.0 / usec : 0.0);
    printf("%lu iters in %.2f seconds = %.2f usec/iter\n", (unsigned long)o->Iters, End->Seconds,
           o->Iters > 0 ? usec / o->Iters : 0.0);
}

/* -l: the server's system thread; PpRunEnd leaves its exit code in End->ExitCode.
 * A system thread (not a POSIX one), as a driver would start it: under
 * SOFTNDK_TIME=simulated the scheduler then runs it deterministically. */
static VOID PpServerThread(PVOID Context) {
    PpRunEnd((PP_END *)Context);
    PsTerminateSystemThread(STATUS_SUCCESS);
}

/* ------------------------------------------------------------------------- */
/* Command line                                                               */
/* ------------------------------------------------------------------------- */

static void PpUsage(FILE *Out, const char *Argv0) {
    fprintf(Out,
            "Usage:\n"
            "  %s            start a server and wait for connection\n"
            "  %s <host>     connect to server at <host> (an IPv4 or IPv6 address)\n"
            "  %s -l         run server and client in this process (two threads)\n"
            "\n"
            "Options:\n"
            "  -p, --port=<port>      listen on/connect to ND port <port> (default %d)\n"
            "  -d, --ib-dev=<dev>     use adapter <dev>: alias or if_index (default first)\n"
            "  -s, --size=<size>      size of message to exchange (default %d; k/m suffixes)"
            " (SYMMETRIC)\n"
            "  -r, --rx-depth=<dep>   number of receives to post at a time (default %d)\n"
            "  -n, --iters=<iters>    number of exchanges (default %d) (SYMMETRIC)\n"
            "  -e, --events           sleep on CQ events (default poll)\n"
            "  -l, --loopback         server and client in this process, on two threads\n"
            "  -h, --help             print this help\n",
            Argv0, Argv0, Argv0, PP_DEFAULT_PORT, PP_DEFAULT_SIZE, PP_DEFAULT_RX_DEPTH,
            PP_DEFAULT_ITERS);
}

/* Unsigned decimal with an optional k/m/g (binary) suffix; FALSE if malformed
 * or outside [Min, Max]. */
static BOOLEAN PpParseNumber(const char *Text, unsigned long long Min, unsigned long long Max,
                             unsigned long long *Value) {
    if (Text == NULL || *Text < '0' || *Text > '9') return FALSE;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(Text, &end, 10);
    if (errno != 0) return FALSE;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K') shift = 10;
    if (*end == 'm' || *end == 'M') shift = 20;
    if (*end == 'g' || *end == 'G') shift = 30;
    if (shift != 0) ++end;
    if (*end != '\0') return FALSE;
    if (v > (Max >> shift)) return FALSE;
    v <<= shift;
    if (v < Min || v > Max) return FALSE;
    *Value = v;
    return TRUE;
}

/* Returns PP_EXIT_OK, or PP_EXIT_USAGE after a message. *Help is set for -h. */
static int PpParseOptions(int Argc, char **Argv, PP_OPTIONS *Options, BOOLEAN *Help) {
    static const struct option longOptions[] = {
        {"port", required_argument, NULL, 'p'},
        {"ib-dev", required_argument, NULL, 'd'},
        {"size", required_argument, NULL, 's'},
        {"rx-depth", required_argument, NULL, 'r'},
        {"iters", required_argument, NULL, 'n'},
        {"events", no_argument, NULL, 'e'},
        {"loopback", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long long v;
    int c;

    Options->Port = PP_DEFAULT_PORT;
    Options->Device = NULL;
    Options->Size = PP_DEFAULT_SIZE;
    Options->Iters = PP_DEFAULT_ITERS;
    Options->RxDepth = PP_DEFAULT_RX_DEPTH;
    Options->Events = FALSE;
    Options->Loopback = FALSE;
    Options->ServerName = NULL;
    *Help = FALSE;

    opterr = 0;
    while ((c = getopt_long(Argc, Argv, ":p:d:s:r:n:elh", longOptions, NULL)) != -1) {
        switch (c) {
            case 'p':
                if (!PpParseNumber(optarg, 1, 65535, &v)) {
                    fprintf(stderr, "pingpong: invalid port '%s' (1..65535)\n", optarg);
                    return PP_EXIT_USAGE;
                }
                Options->Port = (USHORT)v;
                break;
            case 'd':
                Options->Device = optarg;
                break;
            case 's':
                if (!PpParseNumber(optarg, 1, 1ull << 30, &v)) {
                    fprintf(stderr, "pingpong: invalid size '%s' (1..1g)\n", optarg);
                    return PP_EXIT_USAGE;
                }
                Options->Size = (ULONG)v;
                break;
            case 'r':
                if (!PpParseNumber(optarg, 2, 1u << 20, &v)) {
                    fprintf(stderr, "pingpong: invalid rx depth '%s' (2..1m)\n", optarg);
                    return PP_EXIT_USAGE;
                }
                Options->RxDepth = (ULONG)v;
                break;
            case 'n':
                if (!PpParseNumber(optarg, 1, 0x7FFFFFFFull, &v)) {
                    fprintf(stderr, "pingpong: invalid iteration count '%s'\n", optarg);
                    return PP_EXIT_USAGE;
                }
                Options->Iters = (ULONG)v;
                break;
            case 'e':
                Options->Events = TRUE;
                break;
            case 'l':
                Options->Loopback = TRUE;
                break;
            case 'h':
                *Help = TRUE;
                return PP_EXIT_OK;
            case ':':
                fprintf(stderr, "pingpong: option '%s' needs a value\n", Argv[optind - 1]);
                return PP_EXIT_USAGE;
            default:
                fprintf(stderr, "pingpong: unknown option '%s'\n", Argv[optind - 1]);
                return PP_EXIT_USAGE;
        }
    }
    if (optind + 1 < Argc) {
        fprintf(stderr, "pingpong: too many arguments\n");
        return PP_EXIT_USAGE;
    }
    if (optind < Argc) Options->ServerName = Argv[optind];
    if (Options->Loopback && Options->ServerName != NULL) {
        fprintf(stderr, "pingpong: -l runs both ends; do not name a server\n");
        return PP_EXIT_USAGE;
    }
    return PP_EXIT_OK;
}

static void PpWskStop(PP_WSK *Wsk) {
    if (Wsk->Captured) WskReleaseProviderNPI(&Wsk->Registration);
    if (Wsk->Registered) WskDeregister(&Wsk->Registration);
    Wsk->Captured = FALSE;
    Wsk->Registered = FALSE;
}

static int PpWskStart(PP_WSK *Wsk) {
    RtlZeroMemory(Wsk, sizeof *Wsk);
    Wsk->ClientDispatch.Version = MAKE_WSK_VERSION(1, 0);
    Wsk->ClientDispatch.WskClientEvent = NULL;
    Wsk->ClientNpi.ClientContext = NULL;
    Wsk->ClientNpi.Dispatch = &Wsk->ClientDispatch;
    NTSTATUS status = WskRegister(&Wsk->ClientNpi, &Wsk->Registration);
    if (!NT_SUCCESS(status)) return PpFailed(NULL, "WskRegister", status);
    Wsk->Registered = TRUE;
    status = WskCaptureProviderNPI(&Wsk->Registration, WSK_INFINITE_WAIT, &Wsk->ProviderNpi);
    if (!NT_SUCCESS(status)) {
        PpWskStop(Wsk);
        return PpFailed(NULL, "WskCaptureProviderNPI", status);
    }
    Wsk->Captured = TRUE;
    /* The output buffer receives a copy of the two-pointer dispatch table. */
    status = Wsk->ProviderNpi.Dispatch->WskControlClient(
        Wsk->ProviderNpi.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
        sizeof(WSK_PROVIDER_NDK_DISPATCH), &Wsk->Ndk, NULL, NULL);
    if (!NT_SUCCESS(status)) {
        PpWskStop(Wsk);
        return PpFailed(NULL, "WskControlClient(WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH)", status);
    }
    return PP_EXIT_OK;
}

static void PpInitEnd(PP_END *End, const PP_OPTIONS *Options, const PP_WSK *Wsk,
                      const struct softndk_adapter *Adapter, BOOLEAN IsServer) {
    RtlZeroMemory(End, sizeof *End);
    End->Options = Options;
    End->Wsk = Wsk;
    End->Adapter = *Adapter;
    End->IsServer = IsServer;
    End->Role = IsServer ? "server" : "client";
    End->CqStatus = STATUS_SUCCESS;
    KeInitializeEvent(&End->ConnectEvent, NotificationEvent, FALSE);
    KeInitializeEvent(&End->CqEvent, SynchronizationEvent, FALSE);
    KeInitializeEvent(&End->PeerGoneEvent, NotificationEvent, FALSE);
}

/* Whether a server may start listening after the client tried: in daemon mode or
 * over SOFTNDK_FABRIC=udp it is another process; embedded on the in-process fabric,
 * only this process could listen, and it does not. */
static BOOLEAN PpServerMayComeLater(void) {
    const char *mode = getenv("SOFTNDK_MODE");
    const char *fabric = getenv("SOFTNDK_FABRIC");
    const BOOLEAN embedded =
        (BOOLEAN)(mode == NULL || *mode == '\0' || strcmp(mode, "embedded") == 0);
    const BOOLEAN localFabric =
        (BOOLEAN)(fabric == NULL || *fabric == '\0' || strcmp(fabric, "local") == 0);
    return (BOOLEAN)(!embedded || !localFabric);
}

int main(int argc, char **argv) {
    PP_OPTIONS options;
    BOOLEAN help;
    int rc = PpParseOptions(argc, argv, &options, &help);
    if (rc != PP_EXIT_OK || help) {
        PpUsage(help ? stdout : stderr, argv[0]);
        return rc;
    }

    options.ConnectRetryMs = PpServerMayComeLater() ? PP_CONNECT_RETRY_MS : 0;

    struct softndk_adapter adapter;
    char error[256];
    if (softndk_adapter_find(options.Device, &adapter, error, sizeof error) != 0) {
        fprintf(stderr, "pingpong: %s\n", error);
        return PP_EXIT_FAILURE;
    }

    PP_WSK wsk;
    rc = PpWskStart(&wsk);
    if (rc != PP_EXIT_OK) return rc;

    /* Static: a few hundred bytes each, and -l shares them between threads. */
    static PP_END client, server;
    if (!options.Loopback) {
        PP_END *end = options.ServerName != NULL ? &client : &server;
        PpInitEnd(end, &options, &wsk, &adapter, options.ServerName == NULL);
        end->AnnounceListening = end->IsServer;
        rc = PpRunEnd(end);
        if (rc == PP_EXIT_OK) {
            PpPrintAddress("local address: ", &end->LocalAddress);
            PpPrintAddress("remote address:", &end->PeerAddress);
            PpPrintReport(end);
        }
        PpWskStop(&wsk);
        return rc;
    }

    /* -l: the server on a second thread; the client here once it listens.
     * Either end failing sets the other's abort event. */
    KEVENT listening, serverFailed, clientFailed;
    KeInitializeEvent(&listening, NotificationEvent, FALSE);
    KeInitializeEvent(&serverFailed, NotificationEvent, FALSE);
    KeInitializeEvent(&clientFailed, NotificationEvent, FALSE);
    PpInitEnd(&server, &options, &wsk, &adapter, TRUE);
    PpInitEnd(&client, &options, &wsk, &adapter, FALSE);
    server.ListeningEvent = &listening;
    server.FailEvent = &serverFailed;
    server.AbortEvent = &clientFailed;
    client.FailEvent = &clientFailed;
    client.AbortEvent = &serverFailed;

    char serverName[SOFTNDK_ADDRESS_STRING_SIZE];
    const SOCKADDR_STORAGE *own = softndk_adapter_address(&adapter, AF_UNSPEC);
    if (own == NULL) {
        fprintf(stderr, "pingpong: adapter %s has no address\n", adapter.alias);
        PpWskStop(&wsk);
        return PP_EXIT_FAILURE;
    }
    PP_OPTIONS clientOptions = options;
    clientOptions.ServerName =
        softndk_address_string((const struct sockaddr *)own, serverName, sizeof serverName);
    client.Options = &clientOptions;

    HANDLE threadHandle;
    PVOID serverThread = NULL;
    NTSTATUS status = PsCreateSystemThread(&threadHandle, THREAD_ALL_ACCESS, NULL, NULL, NULL,
                                           PpServerThread, &server);
    if (NT_SUCCESS(status)) {
        status = ObReferenceObjectByHandle(threadHandle, THREAD_ALL_ACCESS, *PsThreadType,
                                           KernelMode, &serverThread, NULL);
        ZwClose(threadHandle);
    }
    if (!NT_SUCCESS(status)) {
        fprintf(stderr, "pingpong: cannot start the server thread (0x%08X)\n", (unsigned)status);
        PpWskStop(&wsk);
        return PP_EXIT_FAILURE;
    }
    KeWaitForSingleObject(&listening, Executive, KernelMode, FALSE, NULL);
    int clientRc = PP_EXIT_FAILURE;
    /* A server that failed before listening has already said why. */
    if (KeReadStateEvent(&serverFailed) == 0) clientRc = PpRunEnd(&client);
    KeWaitForSingleObject(serverThread, Executive, KernelMode, FALSE, NULL);
    ObDereferenceObject(serverThread);
    const int serverRc = server.ExitCode;

    if (clientRc == PP_EXIT_OK && serverRc == PP_EXIT_OK) {
        PpPrintAddress("local address: ", &client.LocalAddress);
        PpPrintAddress("remote address:", &client.PeerAddress);
        PpPrintReport(&client);
    }
    PpWskStop(&wsk);
    return clientRc != PP_EXIT_OK ? clientRc : serverRc;
}
