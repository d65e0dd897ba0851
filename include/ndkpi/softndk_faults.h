/* softndk_faults.h - SoftNDK fault injection, callable from kernel-style C.
 *
 * In the style of SPDK's bdev_error_inject_error: a fault has a kind, says what
 * it matches (a QP or any, a direction, packet classes, an operation or a
 * command), how often (Count, Probability) and with what status. The provider
 * hands each fault to the virtual RNIC as a device command, so faults work the
 * same with the embedded device and with a `softndk rnic` daemon. docs/faults.md
 * describes every kind and the equivalent SOFTNDK_FAULTS=FILE format.
 *
 * Determinism: every decision taken with a probability draws from the device's
 * fault PRNG, seeded by SOFTNDK_SEED (default 0). The same seed and the same
 * sequence of matching packets give the same decisions.
 *
 * Every injected fault is counted by the device (faults_injected and a counter
 * per kind, shown by `softndk devices`) and logged with its model time at info
 * level by the "softndk.device" logger.
 *
 * These are SoftNDK functions, not NDKPI: a driver that calls them builds only
 * against SoftNDK. Faults belong to the adapter handle that injected them and go
 * when it is closed (WskCloseNdkAdapter) or on SoftNdkRemoveFault. They reach
 * only this consumer's objects (its QPs' packets, requests and NDK calls, "any"
 * included), never another process's on a shared daemon; a vanished peer is
 * gone for the whole adapter. Faults from a SOFTNDK_FAULTS file reach everyone.
 */
#ifndef SOFTNDK_FAULTS_H
#define SOFTNDK_FAULTS_H

#include <ndkpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum _SOFTNDK_FAULT_KIND {
    /* Packets that match pQp (the sending QP for TX, the receiving QP for RX),
     * Direction and PacketClasses, each with Probability, at most Count times
     * (0 = no limit). */
    SoftNdkFaultDrop = 1,      /* lost on the wire */
    SoftNdkFaultDelay = 2,     /* arrives TimeNs of model time later */
    SoftNdkFaultDuplicate = 3, /* arrives twice */
    SoftNdkFaultReorder = 4,   /* held, and arrives after the next packet */
    SoftNdkFaultCorrupt = 5,   /* its ICRC fails at the receiver, which drops it
                                  (counted as icrc_errors) */
    /* The next Count (>= 1) work requests of Operation on pQp (NULL = any QP)
     * complete with Status, which must be a status an NDK completion can carry
     * (docs/prm.md "Completion statuses"; STATUS_INVALID_PARAMETER otherwise). As
     * every error completion on an RC QP does, it moves the QP to error: the
     * requests behind it complete STATUS_CANCELLED. A failed receive also fails the
     * SEND that consumed it at the peer (a remote operational error). */
    SoftNdkFaultFailOperation = 10,
    /* The next Count (>= 1) NDK calls of Operation (a SOFTNDK_FAULT_COMMAND) fail
     * with Status (an error NTSTATUS) and do nothing. */
    SoftNdkFaultFailCommand = 11,
    /* The receiver of pQp (NULL = any QP) answers SENDs with RNR NAKs, as if no
     * receive were posted, from model time StartNs (0 = now) for TimeNs. The
     * sender retries (rcvd_rnr_err); past its RNR retry count its send completes
     * STATUS_IO_TIMEOUT. Probability applies per SEND. */
    SoftNdkFaultRnrStorm = 20,
    /* Token (a remote token of this consumer's) fails every remote access
     * from model time StartNs (0 = now): the peer's READ or WRITE completes with
     * STATUS_REMOTE_RESOURCES (a remote access error) and its connection fails. */
    SoftNdkFaultExpireToken = 21,
    /* At once, on pQp (required): */
    SoftNdkFaultQpError = 30,        /* QP to error; its requests complete
                                        STATUS_CANCELLED (Status, if non-zero, is
                                        the cause in ProviderErrorCode terms: a
                                        completion status as for FailOperation) */
    SoftNdkFaultKillConnection = 31, /* both ends' disconnect callbacks run, the
                                        QP goes to error;
                                        STATUS_CONNECTION_INVALID if pQp has no
                                        established connection */
    SoftNdkFaultPeerVanish = 32,     /* pQp's peer goes silent: nothing this adapter
                                        sends reaches its address and nothing from
                                        it arrives, without a disconnect; pending
                                        requests end STATUS_IO_TIMEOUT after the
                                        transport retries */
    /* At once, on pCq (required): */
    SoftNdkFaultCqOverrun = 40, /* the CQ behaves as overrun: the notification
                                   callback gets STATUS_BUFFER_OVERFLOW (as the
                                   provider reports a CQ error) and the QPs using
                                   the CQ go to error */
    SoftNdkFaultEqStorm = 41    /* Count (1..1024) spurious completion events for
                                   the CQ: an armed CQ's notification callback runs
                                   with no new completion */
} SOFTNDK_FAULT_KIND;

/* Direction */
#define SOFTNDK_FAULT_BOTH                           \
    0 /* either end (a packet between two QPs of one \
         adapter passes both and may be hit twice) */
#define SOFTNDK_FAULT_TX 1
#define SOFTNDK_FAULT_RX 2

/* PacketClasses (0 = every packet) */
#define SOFTNDK_FAULT_PACKET_SEND          0x01
#define SOFTNDK_FAULT_PACKET_WRITE         0x02
#define SOFTNDK_FAULT_PACKET_READ_REQUEST  0x04
#define SOFTNDK_FAULT_PACKET_READ_RESPONSE 0x08
#define SOFTNDK_FAULT_PACKET_ACK           0x10 /* ACKs and NAKs */

/* Probability, in parts per million; 0 means always, like SOFTNDK_FAULT_ALWAYS. */
#define SOFTNDK_FAULT_ALWAYS 1000000

typedef enum _SOFTNDK_FAULT_OPERATION {
    SoftNdkFaultOperationAny = 0, /* any send-queue request (not receives) */
    SoftNdkFaultOperationSend = 1,
    SoftNdkFaultOperationReceive = 2,
    SoftNdkFaultOperationRead = 3,
    SoftNdkFaultOperationWrite = 4,
    SoftNdkFaultOperationFastRegister = 5,
    SoftNdkFaultOperationBind = 6,
    SoftNdkFaultOperationInvalidate = 7
} SOFTNDK_FAULT_OPERATION;

/* The NDK calls SoftNdkFaultFailCommand can fail (each is one device command). */
typedef enum _SOFTNDK_FAULT_COMMAND {
    SoftNdkFaultCommandCreatePd = 1,
    SoftNdkFaultCommandCreateCq = 2,
    SoftNdkFaultCommandResizeCq = 3,
    SoftNdkFaultCommandCreateQp = 4,
    SoftNdkFaultCommandCreateSrq = 5,
    SoftNdkFaultCommandCreateMr = 6,   /* NdkCreateMr */
    SoftNdkFaultCommandRegisterMr = 7, /* NdkRegisterMr */
    SoftNdkFaultCommandCreateMw = 8,
    SoftNdkFaultCommandBuildLam = 9,
    SoftNdkFaultCommandListen = 10,
    SoftNdkFaultCommandConnect = 11,
    SoftNdkFaultCommandAccept = 12
} SOFTNDK_FAULT_COMMAND;

typedef struct _SOFTNDK_FAULT {
    ULONG Kind;        /* SOFTNDK_FAULT_KIND */
    NDK_QP *pQp;       /* the QP, NULL = any (where the kind allows it) */
    NDK_CQ *pCq;       /* SoftNdkFaultCqOverrun, SoftNdkFaultEqStorm */
    ULONG Count;       /* see the kind; 0 = no limit for packets and storms */
    ULONG Probability; /* parts per million, 0 = always */
    ULONG Direction;   /* SOFTNDK_FAULT_BOTH / _TX / _RX */
    ULONG PacketClasses;
    ULONG Operation; /* SOFTNDK_FAULT_OPERATION, or SOFTNDK_FAULT_COMMAND */
    NTSTATUS Status;
    UINT32 Token;     /* SoftNdkFaultExpireToken */
    ULONG64 TimeNs;   /* Delay: the delay; RnrStorm: its length (model time, ns) */
    ULONG64 StartNs;  /* RnrStorm, ExpireToken: model time it starts, 0 = now */
    const char *Name; /* for the device's log, may be NULL (31 characters kept) */
} SOFTNDK_FAULT;

/* Injects one fault through pAdapter. STATUS_SUCCESS with *pFaultId (if given)
 * naming it for SoftNdkRemoveFault; STATUS_INVALID_PARAMETER for a bad field, an
 * object of another consumer, or a kind that needs pQp/pCq without one.
 * PASSIVE_LEVEL: it waits for the device's answer. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    SoftNdkInjectFault(_In_ NDK_ADAPTER *pAdapter, _In_ const SOFTNDK_FAULT *pFault,
                       _Out_opt_ ULONG *pFaultId);

/* Removes fault FaultId injected through pAdapter, or every one of them when
 * FaultId is 0 (faults that already acted stay done). STATUS_INVALID_PARAMETER
 * for an unknown id. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    SoftNdkRemoveFault(_In_ NDK_ADAPTER *pAdapter, _In_ ULONG FaultId);

/* Reads the device counter Name of pAdapter's device into *pValue: the fault
 * counters (faults_injected, fault_drops, ... docs/faults.md) and the engine's own
 * (ack_timeouts, rcvd_rnr_err, icrc_errors, ...; emulator/device/counters.hpp).
 * Counters are device-wide, counted since the device started. STATUS_NOT_FOUND for a
 * name the device does not count. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    SoftNdkQueryCounter(_In_ NDK_ADAPTER *pAdapter, _In_z_ const char *Name, _Out_ ULONG64 *pValue);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_FAULTS_H */
