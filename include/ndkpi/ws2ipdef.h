/*
 * ws2ipdef.h - SoftNDK user-mode stand-in for the Windows IPv4/IPv6 socket
 * address definitions (SOCKADDR_IN6, SOCKADDR_INET, SCOPE_ID).
 *
 * As in ws2def.h, the address structs ARE the C library's: SOCKADDR_IN6 is a
 * typedef of struct sockaddr_in6 and IN6_ADDR of struct in6_addr, so these
 * names coexist with <netinet/in.h> in one translation unit and NDK addresses
 * go straight to inet_pton/inet_ntop/bind. The x64 layouts are identical
 * (sockaddr_in6: 28 bytes, family @0, port @2, flowinfo @4, address @8,
 * scope id @24), and AF_INET6 keeps the Linux value (see ws2def.h).
 *
 * Two spellings of the Windows structs are not available:
 *   - IN6_ADDR's member is glibc's, not `u.Byte[16]`/`u.Word[8]`. Use the
 *     s6_addr macro, which both systems define (on Windows it is u.Byte).
 *   - SOCKADDR_IN6 has sin6_scope_id but no `sin6_scope_struct` view; use
 *     SCOPE_ID's Value member to convert between the two.
 */
#ifndef _WS2IPDEF_
#define _WS2IPDEF_

#include <ws2def.h>

#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- IPv6 address (in6addr.h on Windows). */
typedef struct in6_addr IN6_ADDR, *PIN6_ADDR, *LPIN6_ADDR;

/* ---- Scope identifier: a 28-bit zone index plus the 4-bit scope level. */
typedef struct {
    union {
        struct {
            ULONG Zone : 28;
            ULONG Level : 4;
        } DUMMYSTRUCTNAME;
        ULONG Value;
    } DUMMYUNIONNAME;
} SCOPE_ID, *PSCOPE_ID;

#define SCOPEID_UNSPECIFIED_INIT {0}

/* ---- IPv6 socket address. */
typedef struct sockaddr_in6 SOCKADDR_IN6_LH, *PSOCKADDR_IN6_LH, *LPSOCKADDR_IN6_LH;
typedef SOCKADDR_IN6_LH SOCKADDR_IN6, *PSOCKADDR_IN6, *LPSOCKADDR_IN6;

/* ---- Either an IPv4 or an IPv6 socket address; si_family says which. */
typedef union _SOCKADDR_INET {
    SOCKADDR_IN Ipv4;
    SOCKADDR_IN6 Ipv6;
    ADDRESS_FAMILY si_family;
} SOCKADDR_INET, *PSOCKADDR_INET;

#ifdef __cplusplus
}
#endif

#endif /* _WS2IPDEF_ */
