/*
 * driverspecs.h - SoftNDK user-mode stand-in for the WDK's driver annotations:
 * the legacy __drv_* spellings (the _IRQL_* / _Dispatch_type_ forms are in
 * sal.h). Every annotation expands to nothing - they feed PREfast/SDV, which do
 * not exist here - and each is defined only if nobody defined it first.
 *
 * None of these identifiers is used by glibc or libstdc++ (checked against
 * /usr/include and /usr/include/c++/12), so, unlike the legacy parameter
 * annotations of specstrings.h, wdm.h includes this header unconditionally,
 * as the WDK's wdm.h does.
 */
#ifndef SOFTNDK_DRIVERSPECS_H
#define SOFTNDK_DRIVERSPECS_H

#include <sal.h>

/* IRQL. */
#ifndef __drv_maxIRQL
#define __drv_maxIRQL(irql)
#endif
#ifndef __drv_minIRQL
#define __drv_minIRQL(irql)
#endif
#ifndef __drv_requiresIRQL
#define __drv_requiresIRQL(irql)
#endif
#ifndef __drv_raisesIRQL
#define __drv_raisesIRQL(irql)
#endif
#ifndef __drv_setsIRQL
#define __drv_setsIRQL(irql)
#endif
#ifndef __drv_savesIRQL
#define __drv_savesIRQL
#endif
#ifndef __drv_restoresIRQL
#define __drv_restoresIRQL
#endif
#ifndef __drv_savesIRQLGlobal
#define __drv_savesIRQLGlobal(kind, param)
#endif
#ifndef __drv_restoresIRQLGlobal
#define __drv_restoresIRQLGlobal(kind, param)
#endif
#ifndef __drv_sameIRQL
#define __drv_sameIRQL
#endif
#ifndef __drv_maxFunctionIRQL
#define __drv_maxFunctionIRQL(irql)
#endif
#ifndef __drv_minFunctionIRQL
#define __drv_minFunctionIRQL(irql)
#endif
#ifndef __drv_useCancelIRQL
#define __drv_useCancelIRQL
#endif
#ifndef __drv_requiresIRQLGlobal
#define __drv_requiresIRQLGlobal(kind, param)
#endif

/* Function roles and dispatch routines. */
#ifndef __drv_functionClass
#define __drv_functionClass(name)
#endif
#ifndef __drv_dispatchType
#define __drv_dispatchType(type)
#endif
#ifndef __drv_dispatchType_other
#define __drv_dispatchType_other
#endif
#ifndef __drv_completionType
#define __drv_completionType(kind)
#endif
#ifndef __drv_clearDoInit
#define __drv_clearDoInit(yes)
#endif

/* Conditions and parameter-level annotations. */
#ifndef __drv_when
#define __drv_when(cond, annotes)
#endif
#ifndef __drv_at
#define __drv_at(expr, annotes)
#endif
#ifndef __drv_arg
#define __drv_arg(expr, annotes)
#endif
#ifndef __drv_in
#define __drv_in(annotes)
#endif
#ifndef __drv_out
#define __drv_out(annotes)
#endif
#ifndef __drv_in_deref
#define __drv_in_deref(annotes)
#endif
#ifndef __drv_out_deref
#define __drv_out_deref(annotes)
#endif
#ifndef __drv_valueIs
#define __drv_valueIs(list)
#endif
#ifndef __drv_strictType
#define __drv_strictType(typename, mode)
#endif
#ifndef __drv_strictTypeMatch
#define __drv_strictTypeMatch(mode)
#endif
#ifndef __drv_notPointer
#define __drv_notPointer
#endif
#ifndef __drv_isObjectPointer
#define __drv_isObjectPointer
#endif
#ifndef __drv_interlocked
#define __drv_interlocked
#endif
#ifndef __drv_inTry
#define __drv_inTry
#endif
#ifndef __drv_notInTry
#define __drv_notInTry
#endif
#ifndef __drv_preferredFunction
#define __drv_preferredFunction(func, why)
#endif
#ifndef __drv_reportError
#define __drv_reportError(why)
#endif
#ifndef __drv_constant
#define __drv_constant
#endif
#ifndef __drv_nonConstant
#define __drv_nonConstant
#endif
#ifndef __drv_formatString
#define __drv_formatString(kind)
#endif

/* Memory and resources. */
#ifndef __drv_aliasesMem
#define __drv_aliasesMem
#endif
#ifndef __drv_allocatesMem
#define __drv_allocatesMem(kind)
#endif
#ifndef __drv_freesMem
#define __drv_freesMem(kind)
#endif
#ifndef __drv_acquiresResource
#define __drv_acquiresResource(kind)
#endif
#ifndef __drv_releasesResource
#define __drv_releasesResource(kind)
#endif
#ifndef __drv_acquiresResourceGlobal
#define __drv_acquiresResourceGlobal(kind, param)
#endif
#ifndef __drv_releasesResourceGlobal
#define __drv_releasesResourceGlobal(kind, param)
#endif
#ifndef __drv_mustHold
#define __drv_mustHold(kind)
#endif
#ifndef __drv_mustHoldGlobal
#define __drv_mustHoldGlobal(kind, param)
#endif
#ifndef __drv_neverHold
#define __drv_neverHold(kind)
#endif
#ifndef __drv_neverHoldGlobal
#define __drv_neverHoldGlobal(kind, param)
#endif
#ifndef __drv_acquiresCancelSpinLock
#define __drv_acquiresCancelSpinLock
#endif
#ifndef __drv_releasesCancelSpinLock
#define __drv_releasesCancelSpinLock
#endif
#ifndef __drv_mustHoldCancelSpinLock
#define __drv_mustHoldCancelSpinLock
#endif
#ifndef __drv_neverHoldCancelSpinLock
#define __drv_neverHoldCancelSpinLock
#endif
#ifndef __drv_acquiresCriticalRegion
#define __drv_acquiresCriticalRegion
#endif
#ifndef __drv_releasesCriticalRegion
#define __drv_releasesCriticalRegion
#endif
#ifndef __drv_acquiresExclusiveResource
#define __drv_acquiresExclusiveResource(kind)
#endif
#ifndef __drv_releasesExclusiveResource
#define __drv_releasesExclusiveResource(kind)
#endif

/* Floating point state. */
#ifndef __drv_floatSaved
#define __drv_floatSaved
#endif
#ifndef __drv_floatRestored
#define __drv_floatRestored
#endif
#ifndef __drv_floatUsed
#define __drv_floatUsed
#endif

#endif /* SOFTNDK_DRIVERSPECS_H */
