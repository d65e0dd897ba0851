/*
 * softndk_status.h - printable names of NTSTATUS values, for messages such as
 * "NdkConnect failed: STATUS_CONNECTION_REFUSED (0xC0000236)".
 *
 * C11 and C++20.
 */
#ifndef SOFTNDK_STATUS_H
#define SOFTNDK_STATUS_H

#include <ntdef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "STATUS_CONNECTION_REFUSED", or "unknown status" for a value that
 * include/ndkpi/ntstatus.h does not define. Never NULL. */
const char *softndk_status_name(NTSTATUS status);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_STATUS_H */
