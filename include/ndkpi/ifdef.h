/*
 * ifdef.h - SoftNDK user-mode stand-in for the Windows network-interface
 * definitions: interface index (NET_IFINDEX, used by WskOpenNdkAdapter),
 * interface LUID (NET_LUID) and the common NET_IF_* values.
 *
 * Widths are Windows': NET_IFINDEX is a 32-bit ULONG and NET_LUID a 64-bit
 * union. One difference: IF_COUNTED_STRING holds WCHARs, which are 4 bytes
 * here (see ntdef.h), so that struct is larger than on Windows; no NDK
 * structure embeds it.
 */
#ifndef _IFDEF_
#define _IFDEF_

#include <ntdef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IF_MAX_STRING_SIZE 256
#define IF_MAX_PHYS_ADDRESS_LENGTH 32

/* ntddndis.h spells the same limits with an NDIS_ prefix. An interface
 * alias buffer (ConvertInterfaceLuidToAlias) needs NDIS_IF_MAX_STRING_SIZE + 1
 * characters. */
#ifndef NDIS_IF_MAX_STRING_SIZE
#define NDIS_IF_MAX_STRING_SIZE IF_MAX_STRING_SIZE
#endif
#ifndef NDIS_IF_MAX_PHYS_ADDRESS_LENGTH
#define NDIS_IF_MAX_PHYS_ADDRESS_LENGTH IF_MAX_PHYS_ADDRESS_LENGTH
#endif

/* ---- Network compartments (SoftNDK has only the primary one). */
typedef UINT32 NET_IF_COMPARTMENT_ID, *PNET_IF_COMPARTMENT_ID;
#define NET_IF_COMPARTMENT_ID_UNSPECIFIED ((NET_IF_COMPARTMENT_ID)0)
#define NET_IF_COMPARTMENT_ID_PRIMARY ((NET_IF_COMPARTMENT_ID)1)
#define NET_IF_COMPARTMENT_ID_ALL ((NET_IF_COMPARTMENT_ID)-1)

typedef GUID NET_IF_NETWORK_GUID, *PNET_IF_NETWORK_GUID;

typedef ULONG64 NET_IF_OBJECT_ID, *PNET_IF_OBJECT_ID;

/* ---- Interface state (RFC 2863 ifOperStatus / ifAdminStatus values). */
typedef enum _NET_IF_OPER_STATUS {
    NET_IF_OPER_STATUS_UP = 1,
    NET_IF_OPER_STATUS_DOWN = 2,
    NET_IF_OPER_STATUS_TESTING = 3,
    NET_IF_OPER_STATUS_UNKNOWN = 4,
    NET_IF_OPER_STATUS_DORMANT = 5,
    NET_IF_OPER_STATUS_NOT_PRESENT = 6,
    NET_IF_OPER_STATUS_LOWER_LAYER_DOWN = 7
} NET_IF_OPER_STATUS, *PNET_IF_OPER_STATUS;

typedef enum _NET_IF_ADMIN_STATUS {
    NET_IF_ADMIN_STATUS_UP = 1,
    NET_IF_ADMIN_STATUS_DOWN = 2,
    NET_IF_ADMIN_STATUS_TESTING = 3
} NET_IF_ADMIN_STATUS, *PNET_IF_ADMIN_STATUS;

typedef enum {
    IfOperStatusUp = 1,
    IfOperStatusDown,
    IfOperStatusTesting,
    IfOperStatusUnknown,
    IfOperStatusDormant,
    IfOperStatusNotPresent,
    IfOperStatusLowerLayerDown
} IF_OPER_STATUS;

typedef enum _NET_IF_ACCESS_TYPE {
    NET_IF_ACCESS_LOOPBACK = 1,
    NET_IF_ACCESS_BROADCAST = 2,
    NET_IF_ACCESS_POINT_TO_POINT = 3,
    NET_IF_ACCESS_POINT_TO_MULTI_POINT = 4,
    NET_IF_ACCESS_MAXIMUM = 5
} NET_IF_ACCESS_TYPE, *PNET_IF_ACCESS_TYPE;

typedef enum _NET_IF_DIRECTION_TYPE {
    NET_IF_DIRECTION_SENDRECEIVE,
    NET_IF_DIRECTION_SENDONLY,
    NET_IF_DIRECTION_RECEIVEONLY,
    NET_IF_DIRECTION_MAXIMUM
} NET_IF_DIRECTION_TYPE, *PNET_IF_DIRECTION_TYPE;

typedef enum _NET_IF_CONNECTION_TYPE {
    NET_IF_CONNECTION_DEDICATED = 1,
    NET_IF_CONNECTION_PASSIVE = 2,
    NET_IF_CONNECTION_DEMAND = 3,
    NET_IF_CONNECTION_MAXIMUM = 4
} NET_IF_CONNECTION_TYPE, *PNET_IF_CONNECTION_TYPE;

typedef enum _NET_IF_MEDIA_CONNECT_STATE {
    MediaConnectStateUnknown,
    MediaConnectStateConnected,
    MediaConnectStateDisconnected
} NET_IF_MEDIA_CONNECT_STATE, *PNET_IF_MEDIA_CONNECT_STATE;

typedef enum _NET_IF_MEDIA_DUPLEX_STATE {
    MediaDuplexStateUnknown = 0,
    MediaDuplexStateHalf = 1,
    MediaDuplexStateFull = 2
} NET_IF_MEDIA_DUPLEX_STATE, *PNET_IF_MEDIA_DUPLEX_STATE;

#define NET_IF_LINK_SPEED_UNKNOWN ((ULONG64)(-1))

/* ---- Locally unique interface identifier: 24 reserved bits, a 24-bit
 * per-type index and the 16-bit IANA interface type (IF_TYPE_*). */
typedef union _NET_LUID_LH {
    ULONG64 Value;
    struct {
        ULONG64 Reserved : 24;
        ULONG64 NetLuidIndex : 24;
        ULONG64 IfType : 16;
    } Info;
} NET_LUID_LH, *PNET_LUID_LH;
typedef NET_LUID_LH NET_LUID;
typedef NET_LUID *PNET_LUID;
typedef NET_LUID IF_LUID, *PIF_LUID;

#define NET_IFLUID_UNSPECIFIED (0)

/* ---- Interface index and type. */
typedef ULONG NET_IFINDEX, *PNET_IFINDEX;
typedef UINT16 NET_IFTYPE, *PNET_IFTYPE;
typedef NET_IFINDEX IF_INDEX, *PIF_INDEX;

#define NET_IFINDEX_UNSPECIFIED ((NET_IFINDEX)(0))
#define IFI_UNSPECIFIED NET_IFINDEX_UNSPECIFIED

/* ---- Counted strings and physical addresses in interface rows. */
typedef struct _IF_COUNTED_STRING_LH {
    USHORT Length; /* in bytes */
    WCHAR String[IF_MAX_STRING_SIZE + 1];
} IF_COUNTED_STRING_LH, *PIF_COUNTED_STRING_LH;
typedef IF_COUNTED_STRING_LH IF_COUNTED_STRING, *PIF_COUNTED_STRING;

typedef struct _IF_PHYSICAL_ADDRESS_LH {
    USHORT Length;
    UCHAR Address[IF_MAX_PHYS_ADDRESS_LENGTH];
} IF_PHYSICAL_ADDRESS_LH, *PIF_PHYSICAL_ADDRESS_LH;
typedef IF_PHYSICAL_ADDRESS_LH IF_PHYSICAL_ADDRESS, *PIF_PHYSICAL_ADDRESS;

#ifdef __cplusplus
}
#endif

#endif /* _IFDEF_ */
