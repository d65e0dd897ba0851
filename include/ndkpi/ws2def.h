/*
 * ws2def.h - SoftNDK user-mode stand-in for the Windows socket-address
 * definitions used by NDKPI (PSOCKADDR) and WSK.
 *
 * Address-family numbering: SoftNDK uses the LINUX numbering. SOCKADDR,
 * SOCKADDR_IN, SOCKADDR_STORAGE and IN_ADDR are typedefs of the C library's
 * own struct sockaddr, struct sockaddr_in, ..., and AF_INET/AF_INET6 are the
 * C library's macros (AF_INET = 2, AF_INET6 = 10; Windows uses 23 for
 * AF_INET6). The layouts are identical on both systems, so this costs a
 * consumer nothing unless it hard-codes the number 23, and it lets one
 * translation unit include this header together with <sys/socket.h> and
 * <netinet/in.h>, and pass NDK addresses straight to inet_pton/inet_ntop.
 * The provider accepts only AF_INET (2) and AF_INET6 (10).
 */
#ifndef _WS2DEF_
#define _WS2DEF_

#include <ntdef.h>

#include <netinet/in.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef USHORT ADDRESS_FAMILY;

typedef struct sockaddr SOCKADDR, *PSOCKADDR, *LPSOCKADDR;
typedef struct sockaddr_storage SOCKADDR_STORAGE, SOCKADDR_STORAGE_LH, *PSOCKADDR_STORAGE,
    *PSOCKADDR_STORAGE_LH;
typedef struct sockaddr_in SOCKADDR_IN, *PSOCKADDR_IN, *LPSOCKADDR_IN;
typedef struct in_addr IN_ADDR, *PIN_ADDR, *LPIN_ADDR;

/* Windows spells the "any" address this way; the value is the same. */
#ifndef INADDR_ANY
#define INADDR_ANY ((ULONG)0x00000000)
#endif

#ifdef __cplusplus
}
#endif

#endif /* _WS2DEF_ */
