/*
 * softndk_wdm_io.h - part of SoftNDK's wdm.h: the I/O manager beyond wdm.h's core (device stacks, IRP building and cancellation, cancel-safe queues, remove locks, start-packet queues, driver object extensions, error log), Rtl helpers (bit ops, byte swap, generic tables, time fields, counted-string operations), hardware-only calls (port and register I/O, DMA adapters, I/O space mapping) and the small WDK macros (CTL_CODE, ALIGN_*, Add2Ptr, ...).
 *
 * Included at the end of <wdm.h>. Including it alone includes <wdm.h> first.
 */
#ifndef SOFTNDK_SOFTNDK_WDM_IO_H
#define SOFTNDK_SOFTNDK_WDM_IO_H

#include <wdm.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_SOFTNDK_WDM_IO_H */
