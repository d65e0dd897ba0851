/*
 * ntddk.h - SoftNDK user-mode stand-in for the WDK's driver entry header.
 *
 * Kernel code usually starts with `#include <ntddk.h>`; on Windows it pulls
 * in wdm.h and adds non-WDM kernel services. Here everything SoftNDK
 * provides lives in wdm.h (types now, the WDK runtime's functions as they are
 * implemented), so this header just includes it.
 */
#ifndef _NTDDK_
#define _NTDDK_

#include <wdm.h>

#endif /* _NTDDK_ */
