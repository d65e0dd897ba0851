/* softndk_resources.h - the virtual RNIC's live objects, for monitoring tools
 * (`softndk res show`, like iproute2's `rdma resource show`).
 *
 * SoftNdkQueryResources lists the QPs, CQs, PDs, memory keys, SRQs or CM objects of the
 * WHOLE device behind
 * pAdapter, every consumer's, with the process that owns each: embedded, that is
 * this process's own device (its own objects only); on a `softndk rnic` daemon,
 * every consumer attached to it. It reads and changes nothing else. Each entry is
 * a snapshot of one object; the list is no consistent cut.
 *
 * These are SoftNDK functions, not NDKPI: a driver that calls them builds only
 * against SoftNDK.
 */
#ifndef SOFTNDK_RESOURCES_H
#define SOFTNDK_RESOURCES_H

#include <ndkpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum _SOFTNDK_RESOURCE_KIND {
    SoftNdkResourceQp = 1,
    SoftNdkResourceCq = 2,
    SoftNdkResourcePd = 3,
    SoftNdkResourceMr = 4, /* every memory key: MRs, windows, privileged tokens */
    SoftNdkResourceSrq = 5,
    SoftNdkResourceCm = 6 /* connections, listeners and shared endpoints */
} SOFTNDK_RESOURCE_KIND;

/* CM numbering: a connection's id; a listener is SOFTNDK_CM_LISTENER_BASE + its id, a
 * shared endpoint SOFTNDK_CM_SHARED_ENDPOINT_BASE + its id. State: role << 8 | state,
 * role 1 active, 2 passive, 3 listener, 4 shared endpoint; state 0 REQ sent, 1 replied,
 * 2 requested, 3 accepted, 4 established, 5 disconnecting, 6 disconnected (by the peer),
 * 7 closed, 8 failed, 9 listening, 10 paused, 11 bound. */
#define SOFTNDK_CM_LISTENER_BASE 0x40000000u
#define SOFTNDK_CM_SHARED_ENDPOINT_BASE 0x80000000u

/* Values[] by kind (hw_interface.hpp section 13 is the reference):
 *   QP  State: 0 RESET, 1 INIT, 2 RTR, 3 RTS, 4 ERROR. Values: PD, send CQ, receive
 *       CQ, SRQ (0xffffffff: none), SQ entries, SQ WQEs outstanding in the device, RQ
 *       entries (0 with an SRQ), SQ PSN (next new), SQ unacknowledged PSN, RQ
 *       expected PSN, remote QP number, CM connection id (0: none), SQ WQEBBs posted
 *       and not yet fetched by the device, RQ receives posted and not yet consumed.
 *   CQ  State: bit 0 armed, bit 1 dead (overrun). Values: entries, CQEs queued (not
 *       yet consumed), arm type (0 errors, 1 any, 2 solicited).
 *   PD  Values: users (QPs and memory keys in it).
 *   MR  Number: the key's table index. State: 0 invalid, 1 free, 2 valid. Values:
 *       PD, token, access (1 local read, 2 local write, 4 remote read, 8 remote
 *       write, 16 bind, 32 read sink), address low and high 32 bits, length low and
 *       high 32 bits, type (1 MR, 2 fast-register MR, 3 window type 1, 4 window
 *       type 2, 5 privileged token).
 *   SRQ Values: PD, entries, receives queued (posted, not yet taken by a QP), limit (armed threshold, 0: not armed), max SGEs.
 *   CM  Values: local IP (16 bytes, IPv4-mapped for IPv4, in Values[0..3] as memory),
 *       local port, peer IP (Values[5..8]), peer port, QP (0: none), the peer's
 *       connection id. */
#define SOFTNDK_RESOURCE_VALUES 16
typedef struct _SOFTNDK_RESOURCE {
    ULONG Number;    /* QP / CQ / PD number on the device */
    ULONG Context;   /* the device context (adapter handle) that owns it */
    ULONG ProcessId; /* the owning process (0: unknown) */
    ULONG State;
    ULONG Values[SOFTNDK_RESOURCE_VALUES];
} SOFTNDK_RESOURCE;

/* Fills pEntries with up to Capacity objects of Kind numbered Start or above, in
 * ascending number, and sets *pCount. *pNext is the Start of the next page, 0 when
 * the list is complete. STATUS_INVALID_PARAMETER for an unknown Kind or a NULL
 * pointer. PASSIVE_LEVEL: it waits for the device's answer. */
_IRQL_requires_(PASSIVE_LEVEL) NTSTATUS
    SoftNdkQueryResources(_In_ NDK_ADAPTER *pAdapter, _In_ ULONG Kind, _In_ ULONG Start,
                          _Out_writes_(Capacity) SOFTNDK_RESOURCE *pEntries, _In_ ULONG Capacity,
                          _Out_ ULONG *pCount, _Out_ ULONG *pNext);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_RESOURCES_H */
