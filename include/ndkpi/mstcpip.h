/*
 * mstcpip.h - SoftNDK user-mode stand-in for the WDK's mstcpip.h, reduced to
 * what kernel networking code includes it for: the IP address <-> string
 * conversions of ip2string.h (which the WDK's mstcpip.h also pulls in).
 */
#ifndef _MSTCPIP_
#define _MSTCPIP_

#include <ip2string.h>

#endif /* _MSTCPIP_ */
