/*
 * softndk_wdm_system.h - part of SoftNDK's wdm.h: registry (Zw*Key, Rtl*Registry*), object names and symbolic links, files, transactions, security (SIDs, wdmsec.h), configuration/power/PnP/WMI/ETW callbacks, versions and GUIDs.
 *
 * Included at the end of <wdm.h>. Including it alone includes <wdm.h> first.
 */
#ifndef SOFTNDK_SOFTNDK_WDM_SYSTEM_H
#define SOFTNDK_SOFTNDK_WDM_SYSTEM_H

#include <wdm.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_SOFTNDK_WDM_SYSTEM_H */
