/*
 * softndk_wdm_exec.h - part of SoftNDK's wdm.h: executive and kernel synchronisation beyond wdm.h's core (guarded mutexes, KMUTEX, semaphores, executive resources, push locks, shared spin locks, critical regions, SLists, cache-aware rundown), processors and NUMA nodes, thread priority, Ex timers, memory barriers and the _Interlocked* intrinsic names, Mm page/MDL services.
 *
 * Included at the end of <wdm.h>. Including it alone includes <wdm.h> first.
 */
#ifndef SOFTNDK_SOFTNDK_WDM_EXEC_H
#define SOFTNDK_SOFTNDK_WDM_EXEC_H

#include <wdm.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_SOFTNDK_WDM_EXEC_H */
