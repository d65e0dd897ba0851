/*
 * test_driver.c - a Windows kernel driver that runs rdma_socket end to end.
 *
 * DriverEntry registers with WSK, opens two NDK adapter handles (a server side
 * and a client side; both on interface "rnic0", the one adapter SoftNDK
 * declares by default, which accepts loopback connections), starts the client
 * on a system thread and queues the server as a work item, and returns. The
 * two sides then talk over a reliable connection:
 *
 *   client                                  server
 *                                           listen on 127.0.0.1, ND port 18516
 *   connect, private data HELLO   ------>   check HELLO, accept with HELLO
 *   check HELLO, complete connect
 *                                           allocate pool, MDL, NdkBuildLAM,
 *                                           fast-register MR, NdkFastRegister
 *                                           with ALLOW_REMOTE_READ|WRITE
 *                                 <------   send REGION {address, length, token}
 *   RDMA write the first half
 *   RDMA read the whole region back,
 *   check both halves byte for byte
 *   NdkSendAndInvalidate DONE     ------>   check ReceiveAndInvalidate of the token
 *   (NDK 1.2; plain send before)            check the region byte for byte
 *   disconnect event              <------   NdkDisconnect
 *   close everything                        close everything, NdkReleaseLAM,
 *                                           IoFreeMdl, ExFreePool
 *
 * The end that received the last message closes the connection. The other way round,
 * a lost ACK breaks the close: the client would disconnect as soon as DONE left, while
 * the server's REGION send, delivered but not yet acknowledged, waits for its
 * retransmission - which the disconnect flushes. RC gives the sender of the last
 * message the same uncertainty, so the client takes "the peer disconnected" for its
 * DONE as delivered: the server disconnects only after it has DONE.
 *
 * DriverUnload waits for both sides, closes the adapters and WSK, and logs the
 * verdict: "kernel-driver: all checks passed", or the failed checks followed
 * by a bug check, so that a failed self-test cannot go unnoticed (under
 * SoftNDK's driver runner the process then dies with SIGABRT). Run as a Linux
 * program it also prints the verdict to stdout (kd_console.h, not driver code).
 *
 * Only WDK headers; the driver runner (SoftNDK::driver_main) calls DriverEntry
 * and DriverUnload as the I/O manager would.
 */
/* The WDK's order: each header uses what the ones before it declare. */
/* clang-format off */
#include <ntddk.h>
#include <wsk.h>
#include <ndkpi.h>
#include <ifdef.h>
#include <wskndk.h>
#include <netioapi.h>
#include <ip2string.h>
/* clang-format on */

#include "kd_console.h"
#include "rdma_socket.h"

#define KD_POOL_TAG ((ULONG)0x7276444B) /* 'KDvr' in a pool dump */

/* Where the server listens (ND port space) and where the client connects
 * from (no port, i.e. 0: the provider picks one). A real driver would read these from
 * its registry key. */
#define KD_ADAPTER_ALIAS  L"rnic0"
#define KD_SERVER_ADDRESS "127.0.0.1:18516"
#define KD_CLIENT_ADDRESS "127.0.0.1" /* no port: 0 */

/* The fast-registered region starts 256 bytes into a page-aligned pool block
 * and spans three pages, so the LAM has a non-zero FBO and the RDMA write
 * crosses a page boundary. */
#define KD_REGION_OFFSET 256
#define KD_REGION_LENGTH (2 * PAGE_SIZE)
#define KD_HALF          (KD_REGION_LENGTH / 2)

#define KD_QUEUE_DEPTH 8
#define KD_WAIT_MS     10000

/* Message buffer: two slots, one to send from and one to receive into. */
#define KD_SLOT      64
#define KD_SEND_SLOT 0
#define KD_RECV_SLOT KD_SLOT

/* A driver-defined bug check code: this driver's self-test failed.
 * Parameters: failed checks, source line of the first, its NTSTATUS, 0. */
#define KD_SELF_TEST_FAILED ((ULONG)0x4B440001)

#define KD_MAGIC   0x4D52444Bu /* "KDRM" */
#define KD_VERSION 1

typedef enum _KD_MESSAGE_TYPE { KdHello = 1, KdRegion = 2, KdDone = 3 } KD_MESSAGE_TYPE;

/* Private data and messages alike: both ends run on this machine, so host
 * byte order. NDK private data has no length of its own, hence the magic. */
typedef struct _KD_MESSAGE {
    UINT32 Magic;
    UINT32 Type;
    UINT32 Version;
    UINT32 Length;  /* KdRegion: bytes the peer may access */
    UINT64 Address; /* KdRegion: the registration's base virtual address */
    UINT32 Token;   /* KdRegion: the remote token */
    UINT32 Reserved;
} KD_MESSAGE;

/* Request contexts of the receives (the sends use their own, in rdma_socket). */
#define KD_RECV_REGION ((PVOID)(ULONG_PTR)0x52454749) /* client: the REGION message */
#define KD_RECV_DONE   ((PVOID)(ULONG_PTR)0x444F4E45) /* server: the DONE message */

typedef struct _KD_SERVER {
    RS_SOCKET Socket;
    RS_LISTENER Listener;
    RS_BUFFER Messages;
    RS_REGION Region;
} KD_SERVER;

typedef struct _KD_CLIENT {
    RS_SOCKET Socket;
    RS_BUFFER Messages;
    RS_BUFFER Data; /* [0, LENGTH): RDMA write source; [LENGTH, 2 LENGTH): read sink */
} KD_CLIENT;

/* The driver's state: non-paged pool, as everything the NDK callbacks touch.
 * Kernel stacks are small, so the sides' state lives here too. */
typedef struct _KD_DRIVER {
    RS_WSK Wsk;
    RS_ADAPTER ServerAdapter;
    RS_ADAPTER ClientAdapter;
    BOOLEAN ServerAdapterOpen;
    BOOLEAN ClientAdapterOpen;
    SOCKADDR_IN ServerAddress;
    SOCKADDR_IN ClientAddress;

    PDEVICE_OBJECT Device; /* for the server's IO_WORKITEM */
    PIO_WORKITEM ServerWork;
    PVOID ClientThread; /* referenced thread object */
    KEVENT Listening;   /* server -> client: listening (or failed: see ServerListening) */
    volatile LONG ServerListening;
    KEVENT ServerDone;
    volatile LONG ServerFinished;
    volatile LONG ClientFinished;

    volatile LONG Checks;
    volatile LONG Failures;
    NTSTATUS FirstFailureStatus;
    ULONG FirstFailureLine;

    KD_SERVER Server;
    KD_CLIENT Client;
} KD_DRIVER;

static KD_DRIVER *KdDriver;

#define KD_INFO(Format, ...) \
    DbgPrintEx(DPFLTR_IHVNETWORK_ID, DPFLTR_INFO_LEVEL, "kernel-driver: " Format "\n", __VA_ARGS__)
#define KD_ERROR(Format, ...) \
    DbgPrintEx(DPFLTR_IHVNETWORK_ID, DPFLTR_ERROR_LEVEL, "kernel-driver: " Format "\n", __VA_ARGS__)

/* ------------------------------------------------------------------------- */
/* Checks                                                                     */
/* ------------------------------------------------------------------------- */

static BOOLEAN KdCheck(KD_DRIVER *Driver, BOOLEAN Ok, NTSTATUS Status, const char *What,
                       ULONG Line) {
    InterlockedIncrement(&Driver->Checks);
    if (Ok) return TRUE;
    if (InterlockedIncrement(&Driver->Failures) == 1) {
        Driver->FirstFailureStatus = Status;
        Driver->FirstFailureLine = Line;
    }
    KD_ERROR("check failed (line %lu): %s (0x%08X)", Line, What, (unsigned)Status);
    return FALSE;
}

/* TRUE if Condition holds; otherwise logs it and counts a failure. */
#define KD_CHECK(Driver, Condition)                                                           \
    KdCheck((Driver), (BOOLEAN)((Condition) ? TRUE : FALSE), STATUS_UNSUCCESSFUL, #Condition, \
            __LINE__)
/* TRUE if Status is a success status. */
#define KD_OK(Driver, Status, What) \
    KdCheck((Driver), (BOOLEAN)NT_SUCCESS(Status), (Status), (What), __LINE__)

/* A byte pattern that differs per side and along the buffer. */
static UCHAR KdPatternByte(ULONG Seed, SIZE_T Index) {
    const ULONG x = (ULONG)Index * 2654435761u + Seed;
    return (UCHAR)((x >> 24) ^ (x >> 8) ^ Seed);
}

static VOID KdFill(PUCHAR Data, SIZE_T Length, ULONG Seed) {
    for (SIZE_T i = 0; i < Length; ++i)
        Data[i] = KdPatternByte(Seed, i);
}

/* Byte by byte; logs the first difference. */
static BOOLEAN KdVerify(KD_DRIVER *Driver, const UCHAR *Data, SIZE_T Length, ULONG Seed,
                        const char *What, ULONG Line) {
    for (SIZE_T i = 0; i < Length; ++i) {
        if (Data[i] == KdPatternByte(Seed, i)) continue;
        KD_ERROR("%s: byte %lu is 0x%02X, expected 0x%02X", What, (ULONG)i, Data[i],
                 KdPatternByte(Seed, i));
        return KdCheck(Driver, FALSE, STATUS_DATA_ERROR, What, Line);
    }
    return KdCheck(Driver, TRUE, STATUS_SUCCESS, What, Line);
}

#define KD_SERVER_SEED 0x53525652u /* "SRVR" */
#define KD_CLIENT_SEED 0x434C4E54u /* "CLNT" */

static VOID KdFillMessage(KD_MESSAGE *Message, KD_MESSAGE_TYPE Type) {
    RtlZeroMemory(Message, sizeof *Message);
    Message->Magic = KD_MAGIC;
    Message->Type = (UINT32)Type;
    Message->Version = KD_VERSION;
}

static BOOLEAN KdMessageIs(const KD_MESSAGE *Message, KD_MESSAGE_TYPE Type) {
    return (BOOLEAN)(Message->Magic == KD_MAGIC && Message->Version == KD_VERSION &&
                     Message->Type == (UINT32)Type);
}

static VOID KdLogPeer(const char *Role, NDK_CONNECTOR *Connector) {
    SOCKADDR_IN peer;
    ULONG length = sizeof peer;
    CHAR text[32];
    ULONG textLength = sizeof text;
    RtlZeroMemory(&peer, sizeof peer);
    if (!NT_SUCCESS(Connector->Dispatch->NdkGetPeerAddress(Connector, (PSOCKADDR)&peer, &length)))
        return;
    if (NT_SUCCESS(RtlIpv4AddressToStringExA(&peer.sin_addr, peer.sin_port, text, &textLength)))
        KD_INFO("%s: connected to %s", Role, text);
}

/* ------------------------------------------------------------------------- */
/* Server: a work item                                                        */
/* ------------------------------------------------------------------------- */

static VOID KdServerTeardown(KD_SERVER *Server) {
    /* ndkpi-api 7.5: connector and QP first (RsShutdown); the listener only
     * then, since its close pends while an accepted connector lives; the
     * fast-register MR, then its LAM, MDL and pool (RsRegionDelete); the
     * message MR; the CQ and the PD last (RsSocketClose). */
    RsShutdown(&Server->Socket);
    RsListenerClose(&Server->Listener);
    if (Server->Socket.Adapter != NULL) RsRegionDelete(Server->Socket.Adapter, &Server->Region);
    RsBufferDelete(&Server->Messages);
    RsSocketClose(&Server->Socket);
}

static VOID KdServerRun(KD_DRIVER *Driver, KD_SERVER *Server) {
    RS_SOCKET *socket = &Server->Socket;
    KD_MESSAGE hello;
    ULONG helloLength = sizeof hello;
    NDK_RESULT_EX result;
    NTSTATUS status;

    status = RsSocketCreate(&Driver->ServerAdapter, KD_QUEUE_DEPTH, socket);
    if (!KD_OK(Driver, status, "server: RsSocketCreate")) return;
    status = RsBufferCreate(socket, 2 * KD_SLOT, 0, &Server->Messages);
    if (!KD_OK(Driver, status, "server: RsBufferCreate")) return;
    /* The receive is posted before the connection exists: the peer may send as
     * soon as it is established. */
    status =
        RsPostReceive(socket, KD_RECV_DONE, &Server->Messages, KD_RECV_SLOT, sizeof(KD_MESSAGE));
    if (!KD_OK(Driver, status, "server: RsPostReceive")) return;

    status = RsListen(&Driver->ServerAdapter, (PSOCKADDR)&Driver->ServerAddress,
                      sizeof Driver->ServerAddress, &Server->Listener);
    if (!KD_OK(Driver, status, "server: RsListen")) return;
    InterlockedExchange(&Driver->ServerListening, 1);
    KeSetEvent(&Driver->Listening, IO_NO_INCREMENT, FALSE);
    KD_INFO("server: listening on %s", KD_SERVER_ADDRESS);

    status = RsWaitConnectRequest(&Server->Listener, KD_WAIT_MS, socket, &hello, &helloLength);
    if (!KD_OK(Driver, status, "server: RsWaitConnectRequest")) return;
    if (!KD_CHECK(Driver, KdMessageIs(&hello, KdHello))) {
        RsReject(socket, NULL, 0);
        return;
    }
    KdFillMessage(&hello, KdHello);
    status = RsAccept(socket, &hello, sizeof hello);
    if (!KD_OK(Driver, status, "server: RsAccept")) return;
    KdLogPeer("server", socket->Connector);

    /* Fast registration works on a connected QP: it is a work request. */
    status = RsRegionCreate(socket, KD_REGION_LENGTH, KD_REGION_OFFSET, &Server->Region);
    if (!KD_OK(Driver, status, "server: RsRegionCreate")) return;
    KD_CHECK(Driver, Server->Region.Fbo == KD_REGION_OFFSET % PAGE_SIZE);
    KD_CHECK(Driver, Server->Region.Lam->AdapterPageCount == 3);
    /* The client writes the first half and reads all of it back. */
    KdFill(Server->Region.Data + KD_HALF, KD_HALF, KD_SERVER_SEED);
    status = RsRegionFastRegister(socket, &Server->Region,
                                  NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    if (!KD_OK(Driver, status, "server: RsRegionFastRegister")) return;
    KD_INFO("server: fast-registered %lu bytes at %p, FBO %lu, token 0x%08X",
            (ULONG)Server->Region.Length, Server->Region.Data, Server->Region.Fbo,
            Server->Region.RemoteToken);

    {
        KD_MESSAGE *region = (KD_MESSAGE *)(Server->Messages.Data + KD_SEND_SLOT);
        KdFillMessage(region, KdRegion);
        region->Address = (UINT64)(ULONG_PTR)Server->Region.Data;
        region->Length = (UINT32)Server->Region.Length;
        region->Token = Server->Region.RemoteToken;
    }
    status = RsSend(socket, &Server->Messages, KD_SEND_SLOT, sizeof(KD_MESSAGE));
    if (!KD_OK(Driver, status, "server: RsSend(REGION)")) return;

    status = RsWaitForRequest(socket, KD_RECV_DONE, KD_WAIT_MS, &result);
    if (!KD_OK(Driver, status, "server: waiting for DONE")) return;
    if (!KD_OK(Driver, result.Status, "server: DONE receive completion")) return;
    KD_CHECK(Driver, result.BytesTransferred == sizeof(KD_MESSAGE));
    KD_CHECK(Driver,
             KdMessageIs((const KD_MESSAGE *)(Server->Messages.Data + KD_RECV_SLOT), KdDone));
    if (RsAdapterSupportsRemoteInvalidate(&Driver->ServerAdapter)) {
        /* The client's NdkSendAndInvalidate retired the token before the
         * receive completed. */
        KD_CHECK(Driver, result.Type == NdkOperationTypeReceiveAndInvalidate);
        KD_CHECK(Driver, result.TypeSpecificCompletionOutput == Server->Region.RemoteToken);
        Server->Region.Registered = FALSE;
        KD_INFO("server: token 0x%08X invalidated by the peer",
                (UINT32)result.TypeSpecificCompletionOutput);
    }
    /* RC delivers in order: the client's RDMA write landed before its DONE. */
    KdVerify(Driver, Server->Region.Data, KD_HALF, KD_CLIENT_SEED,
             "server: region first half (RDMA written by the client)", __LINE__);
    KdVerify(Driver, Server->Region.Data + KD_HALF, KD_HALF, KD_SERVER_SEED,
             "server: region second half (untouched)", __LINE__);

    /* DONE was the last message: the server, which received it, ends the connection. */
    status = RsDisconnect(socket);
    KD_OK(Driver, status, "server: RsDisconnect");
}

static IO_WORKITEM_ROUTINE KdServerWorkRoutine;
static VOID KdServerWorkRoutine(PDEVICE_OBJECT DeviceObject, PVOID Parameter) {
    KD_DRIVER *driver = (KD_DRIVER *)Parameter;
    UNREFERENCED_PARAMETER(DeviceObject);
    KdServerRun(driver, &driver->Server);
    KdServerTeardown(&driver->Server);
    /* Released early on failure: the client must not wait for a listener. */
    KeSetEvent(&driver->Listening, IO_NO_INCREMENT, FALSE);
    InterlockedExchange(&driver->ServerFinished, 1);
    KD_INFO("server: %s", "done");
    KeSetEvent(&driver->ServerDone, IO_NO_INCREMENT, FALSE);
}

/* ------------------------------------------------------------------------- */
/* Client: a system thread                                                    */
/* ------------------------------------------------------------------------- */

static VOID KdClientTeardown(KD_CLIENT *Client) {
    RsShutdown(&Client->Socket); /* disconnects if still connected */
    RsBufferDelete(&Client->Data);
    RsBufferDelete(&Client->Messages);
    RsSocketClose(&Client->Socket);
}

static VOID KdClientRun(KD_DRIVER *Driver, KD_CLIENT *Client) {
    RS_SOCKET *socket = &Client->Socket;
    const NDK_ADAPTER_INFO *info = &Driver->ClientAdapter.Info;
    KD_MESSAGE hello, region;
    ULONG helloLength = sizeof hello;
    NDK_RESULT_EX result;
    LARGE_INTEGER timeout;
    ULONG sinkFlags = 0;
    NTSTATUS status;

    timeout.QuadPart = -10000LL * KD_WAIT_MS;
    status = KeWaitForSingleObject(&Driver->Listening, Executive, KernelMode, FALSE, &timeout);
    if (!KD_CHECK(Driver, status == STATUS_SUCCESS && Driver->ServerListening != 0)) return;

    status = RsSocketCreate(&Driver->ClientAdapter, KD_QUEUE_DEPTH, socket);
    if (!KD_OK(Driver, status, "client: RsSocketCreate")) return;
    status = RsBufferCreate(socket, 2 * KD_SLOT, 0, &Client->Messages);
    if (!KD_OK(Driver, status, "client: RsBufferCreate(messages)")) return;
    /* A read sink needs NDK_MR_FLAG_RDMA_READ_SINK unless the adapter says otherwise. */
    if ((info->AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED) == 0)
        sinkFlags = NDK_MR_FLAG_RDMA_READ_SINK;
    status = RsBufferCreate(socket, 2 * KD_REGION_LENGTH, sinkFlags, &Client->Data);
    if (!KD_OK(Driver, status, "client: RsBufferCreate(data)")) return;
    status =
        RsPostReceive(socket, KD_RECV_REGION, &Client->Messages, KD_RECV_SLOT, sizeof(KD_MESSAGE));
    if (!KD_OK(Driver, status, "client: RsPostReceive")) return;

    KdFillMessage(&hello, KdHello);
    status = RsConnect(socket, (PSOCKADDR)&Driver->ClientAddress, sizeof Driver->ClientAddress,
                       (PSOCKADDR)&Driver->ServerAddress, sizeof Driver->ServerAddress, &hello,
                       sizeof hello, &hello, &helloLength);
    if (!KD_OK(Driver, status, "client: RsConnect")) return;
    if (!KD_CHECK(Driver, KdMessageIs(&hello, KdHello))) {
        RsReject(socket, NULL, 0);
        return;
    }
    status = RsCompleteConnect(socket);
    if (!KD_OK(Driver, status, "client: RsCompleteConnect")) return;
    KdLogPeer("client", socket->Connector);

    status = RsWaitForRequest(socket, KD_RECV_REGION, KD_WAIT_MS, &result);
    if (!KD_OK(Driver, status, "client: waiting for REGION")) return;
    if (!KD_OK(Driver, result.Status, "client: REGION receive completion")) return;
    RtlCopyMemory(&region, Client->Messages.Data + KD_RECV_SLOT, sizeof region);
    if (!KD_CHECK(Driver, result.BytesTransferred == sizeof(KD_MESSAGE) &&
                              KdMessageIs(&region, KdRegion) && region.Length == KD_REGION_LENGTH))
        return;

    /* RDMA write into the first half of the server's region... */
    KdFill(Client->Data.Data, KD_HALF, KD_CLIENT_SEED);
    status = RsWrite(socket, &Client->Data, 0, KD_HALF, region.Address, region.Token);
    if (!KD_OK(Driver, status, "client: RsWrite")) return;
    /* ...then read the whole region back: our half and the server's. */
    status = RsRead(socket, &Client->Data, KD_REGION_LENGTH, KD_REGION_LENGTH, region.Address,
                    region.Token);
    if (!KD_OK(Driver, status, "client: RsRead")) return;
    KdVerify(Driver, Client->Data.Data + KD_REGION_LENGTH, KD_HALF, KD_CLIENT_SEED,
             "client: RDMA read of the half it wrote", __LINE__);
    KdVerify(Driver, Client->Data.Data + KD_REGION_LENGTH + KD_HALF, KD_HALF, KD_SERVER_SEED,
             "client: RDMA read of the server's half", __LINE__);

    /* DONE retires the server's token with the message itself, when both
     * ends speak NDKPI 1.2 (here: the same adapter); a plain send otherwise. */
    KdFillMessage((KD_MESSAGE *)(Client->Messages.Data + KD_SEND_SLOT), KdDone);
    if (RsAdapterSupportsRemoteInvalidate(&Driver->ClientAdapter))
        status = RsSendAndInvalidate(socket, &Client->Messages, KD_SEND_SLOT, sizeof(KD_MESSAGE),
                                     region.Token);
    else
        status = RsSend(socket, &Client->Messages, KD_SEND_SLOT, sizeof(KD_MESSAGE));
    /* The server disconnects once it has DONE; if that overtook DONE's ACK, the send
     * completes with the disconnect, and it was delivered all the same. */
    if (status != STATUS_CONNECTION_DISCONNECTED && !KD_OK(Driver, status, "client: sending DONE"))
        return;
    status = RsWaitForDisconnect(socket, KD_WAIT_MS);
    KD_OK(Driver, status, "client: waiting for the server's disconnect");
}

static KSTART_ROUTINE KdClientThread;
static VOID KdClientThread(PVOID Context) {
    KD_DRIVER *driver = (KD_DRIVER *)Context;
    KdClientRun(driver, &driver->Client);
    KdClientTeardown(&driver->Client);
    InterlockedExchange(&driver->ClientFinished, 1);
    KD_INFO("client: %s", "done");
    PsTerminateSystemThread(STATUS_SUCCESS);
}

/* ------------------------------------------------------------------------- */
/* DriverEntry / DriverUnload                                                 */
/* ------------------------------------------------------------------------- */

/* Closes what DriverEntry opened; the sides must have finished. */
static VOID KdCloseDriver(KD_DRIVER *Driver) {
    if (Driver->ClientAdapterOpen) RsCloseAdapter(&Driver->ClientAdapter);
    if (Driver->ServerAdapterOpen) RsCloseAdapter(&Driver->ServerAdapter);
    Driver->ClientAdapterOpen = FALSE;
    Driver->ServerAdapterOpen = FALSE;
    RsWskStop(&Driver->Wsk);
}

static DRIVER_UNLOAD KdUnload;
static VOID KdUnload(PDRIVER_OBJECT DriverObject) {
    KD_DRIVER *driver = KdDriver;
    LONG checks, failures;
    NTSTATUS firstStatus;
    ULONG firstLine;
    BOOLEAN finished;
    UNREFERENCED_PARAMETER(DriverObject);

    /* Both sides bound every wait, so these waits end. */
    KeWaitForSingleObject(driver->ClientThread, Executive, KernelMode, FALSE, NULL);
    ObDereferenceObject(driver->ClientThread);
    KeWaitForSingleObject(&driver->ServerDone, Executive, KernelMode, FALSE, NULL);
    KdCloseDriver(driver);
    /* The work item's reference on the device is gone once its routine returned
     * (the runner unloads only when no work item runs). */
    IoFreeWorkItem(driver->ServerWork);
    IoDeleteDevice(driver->Device);

    checks = driver->Checks;
    failures = driver->Failures;
    firstStatus = driver->FirstFailureStatus;
    firstLine = driver->FirstFailureLine;
    finished = (BOOLEAN)(driver->ServerFinished != 0 && driver->ClientFinished != 0);
    KdDriver = NULL;
    ExFreePoolWithTag(driver, KD_POOL_TAG);

    if (failures == 0 && finished && checks > 0) {
        KD_INFO("all checks passed (%ld checks)", (long)checks);
        KdConsoleSummary((long)checks); /* the example program's stdout, not driver code */
        return;
    }
    KD_ERROR("%ld of %ld checks failed; the first at line %lu (0x%08X)", (long)failures,
             (long)checks, firstLine, (unsigned)firstStatus);
    KeBugCheckEx(KD_SELF_TEST_FAILED, (ULONG_PTR)failures, firstLine, (ULONG)firstStatus, 0);
}

static NTSTATUS KdResolveAddresses(KD_DRIVER *Driver, NET_IFINDEX *IfIndex) {
    NET_LUID luid;
    USHORT port;
    NTSTATUS status;

    /* Ports come back in network byte order, as sockaddrs want them. */
    RtlZeroMemory(&Driver->ServerAddress, sizeof Driver->ServerAddress);
    status =
        RtlIpv4StringToAddressExA(KD_SERVER_ADDRESS, TRUE, &Driver->ServerAddress.sin_addr, &port);
    if (!NT_SUCCESS(status)) return status;
    Driver->ServerAddress.sin_family = AF_INET;
    Driver->ServerAddress.sin_port = port;
    RtlZeroMemory(&Driver->ClientAddress, sizeof Driver->ClientAddress);
    status =
        RtlIpv4StringToAddressExA(KD_CLIENT_ADDRESS, TRUE, &Driver->ClientAddress.sin_addr, &port);
    if (!NT_SUCCESS(status)) return status;
    Driver->ClientAddress.sin_family = AF_INET;
    Driver->ClientAddress.sin_port = port;

    /* Interface alias -> LUID -> index, as WskOpenNdkAdapter wants it. */
    status = ConvertInterfaceAliasToLuid(KD_ADAPTER_ALIAS, &luid);
    if (!NT_SUCCESS(status)) return status;
    return ConvertInterfaceLuidToIndex(&luid, IfIndex);
}

DRIVER_INITIALIZE DriverEntry;
NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
    KD_DRIVER *driver;
    NET_IFINDEX ifIndex = 0;
    HANDLE thread;
    NTSTATUS status;
    UNREFERENCED_PARAMETER(RegistryPath);

    driver = (KD_DRIVER *)ExAllocatePool2(POOL_FLAG_NON_PAGED, sizeof *driver, KD_POOL_TAG);
    if (driver == NULL) return STATUS_INSUFFICIENT_RESOURCES;
    KeInitializeEvent(&driver->Listening, NotificationEvent, FALSE);
    KeInitializeEvent(&driver->ServerDone, NotificationEvent, FALSE);

    status = KdResolveAddresses(driver, &ifIndex);
    if (!NT_SUCCESS(status)) {
        KD_ERROR("cannot resolve adapter %ws or the addresses (0x%08X)", KD_ADAPTER_ALIAS,
                 (unsigned)status);
        ExFreePoolWithTag(driver, KD_POOL_TAG);
        return status;
    }
    status = RsWskStart(&driver->Wsk);
    if (!NT_SUCCESS(status)) {
        ExFreePoolWithTag(driver, KD_POOL_TAG);
        return status;
    }
    /* Two handles on the adapter, one per side, as two drivers (or two
     * subsystems of one) would hold them. */
    status = RsOpenAdapter(&driver->Wsk, ifIndex, &driver->ServerAdapter);
    driver->ServerAdapterOpen = (BOOLEAN)NT_SUCCESS(status);
    if (NT_SUCCESS(status)) {
        status = RsOpenAdapter(&driver->Wsk, ifIndex, &driver->ClientAdapter);
        driver->ClientAdapterOpen = (BOOLEAN)NT_SUCCESS(status);
    }
    if (NT_SUCCESS(status)) {
        const NDK_ADAPTER_INFO *info = &driver->ServerAdapter.Info;
        KD_INFO("adapter %ws (if_index %lu): NDK %u.%u, FRMRPageCount %lu, flags 0x%08lX",
                KD_ADAPTER_ALIAS, (ULONG)ifIndex, (unsigned)info->Version.Major,
                (unsigned)info->Version.Minor, info->FRMRPageCount, info->AdapterFlags);
        if (info->MaxTransferLength < KD_REGION_LENGTH || info->FRMRPageCount < 3)
            status = STATUS_NOT_SUPPORTED;
    }
    /* A device object, as IoAllocateWorkItem needs one. */
    if (NT_SUCCESS(status)) {
        status = IoCreateDevice(DriverObject, 0, NULL, FILE_DEVICE_NETWORK, FILE_DEVICE_SECURE_OPEN,
                                FALSE, &driver->Device);
    }
    if (NT_SUCCESS(status)) {
        driver->Device->Flags &= ~DO_DEVICE_INITIALIZING;
        driver->ServerWork = IoAllocateWorkItem(driver->Device);
        if (driver->ServerWork == NULL) status = STATUS_INSUFFICIENT_RESOURCES;
    }
    if (NT_SUCCESS(status)) {
        status = PsCreateSystemThread(&thread, THREAD_ALL_ACCESS, NULL, NULL, NULL, KdClientThread,
                                      driver);
    }
    if (!NT_SUCCESS(status)) {
        KD_ERROR("DriverEntry failed (0x%08X)", (unsigned)status);
        KdCloseDriver(driver);
        if (driver->ServerWork != NULL) IoFreeWorkItem(driver->ServerWork);
        if (driver->Device != NULL) IoDeleteDevice(driver->Device);
        ExFreePoolWithTag(driver, KD_POOL_TAG);
        return status;
    }
    /* Unload waits for the thread through a reference on its object; taking
     * one on a handle just created cannot fail. */
    NT_VERIFY(NT_SUCCESS(ObReferenceObjectByHandle(thread, THREAD_ALL_ACCESS, *PsThreadType,
                                                   KernelMode, &driver->ClientThread, NULL)));
    ZwClose(thread);

    KdDriver = driver;
    DriverObject->DriverUnload = KdUnload;
    /* The server runs on a system worker thread through an I/O work item. */
    IoQueueWorkItem(driver->ServerWork, KdServerWorkRoutine, DelayedWorkQueue, driver);
    return STATUS_SUCCESS;
}
