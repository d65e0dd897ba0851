/*
 * driverspecs.h - SoftNDK user-mode stand-in for the WDK's driver annotations: the
 * __drv_* spellings and the SAL 2 driver forms (_IRQL_requires_max_(irql),
 * _Dispatch_type_(t), _Kernel_float_saved_, _IRQL_saves_ ...). As in the WDK
 * it includes specstrings.h and sdv_driverspecs.h; wdm.h includes it.
 *
 * The WDK annotation list (tests/headers/annotations/wdk-annotations.tsv, columns name,
 * params, header) is the reference: every name it gives this header is defined here
 * with the WDK's arity - object-like, function-like with N parameters, or with "()" -
 * and, as in an ordinary (non-analysis) WDK build, expands to nothing: the annotations
 * feed PREfast, SDV and the compiler's /analyze, none of which exist here. Each is
 * defined only if nobody defined it first, so a consumer that brings its own shim, or
 * another annotation header that defines the same name, wins. The test
 * "headers.annotations: every WDK annotation ..." uses every name with its arity.
 *
 * __drv_raisesIRQL is the one name the WDK defines with two arities: object-like here
 * (an alias of _IRQL_raises_) and function-like in kernelspecs.h. Either way
 * __drv_raisesIRQL(irql) is the usable form and expands to nothing.
 */
#ifndef SOFTNDK_DRIVERSPECS_H
#define SOFTNDK_DRIVERSPECS_H

#include <softndk_sal.h>
#include <specstrings.h>

/* ---- 55 object-like (no arguments). */
#ifndef __drv_acquiresCancelSpinLock
#define __drv_acquiresCancelSpinLock
#endif
#ifndef __drv_acquiresCriticalRegion
#define __drv_acquiresCriticalRegion
#endif
#ifndef __drv_acquiresPriorityRegion
#define __drv_acquiresPriorityRegion
#endif
#ifndef __drv_aliasesMem
#define __drv_aliasesMem
#endif
#ifndef __drv_constant
#define __drv_constant
#endif
#ifndef __drv_dispatchType_other
#define __drv_dispatchType_other
#endif
#ifndef __drv_floatRestored
#define __drv_floatRestored
#endif
#ifndef __drv_floatSaved
#define __drv_floatSaved
#endif
#ifndef __drv_floatUsed
#define __drv_floatUsed
#endif
#ifndef __drv_interlocked
#define __drv_interlocked
#endif
#ifndef __drv_inTry
#define __drv_inTry
#endif
#ifndef __drv_IoGetDmaAdapter
#define __drv_IoGetDmaAdapter
#endif
#ifndef __drv_isCancelIRQL
#define __drv_isCancelIRQL
#endif
#ifndef __drv_isObjectPointer
#define __drv_isObjectPointer
#endif
#ifndef __drv_KMDF
#define __drv_KMDF
#endif
#ifndef __drv_mustHoldCancelSpinLock
#define __drv_mustHoldCancelSpinLock
#endif
#ifndef __drv_mustHoldCriticalRegion
#define __drv_mustHoldCriticalRegion
#endif
#ifndef __drv_mustHoldPriorityRegion
#define __drv_mustHoldPriorityRegion
#endif
#ifndef __drv_NDIS
#define __drv_NDIS
#endif
#ifndef __drv_neverHoldCancelSpinLock
#define __drv_neverHoldCancelSpinLock
#endif
#ifndef __drv_neverHoldCriticalRegion
#define __drv_neverHoldCriticalRegion
#endif
#ifndef __drv_neverHoldPriorityRegion
#define __drv_neverHoldPriorityRegion
#endif
#ifndef __drv_nonConstant
#define __drv_nonConstant
#endif
#ifndef __drv_notInTry
#define __drv_notInTry
#endif
#ifndef __drv_notPointer
#define __drv_notPointer
#endif
#ifndef __drv_raisesIRQL
/* Object-like, as in the WDK: an alias of the function-like _IRQL_raises_, so
 * __drv_raisesIRQL(irql) means the same whether driverspecs.h or kernelspecs.h
 * defined it first. */
#define __drv_raisesIRQL _IRQL_raises_
#endif
#ifndef __drv_releasesCancelSpinLock
#define __drv_releasesCancelSpinLock
#endif
#ifndef __drv_releasesCriticalRegion
#define __drv_releasesCriticalRegion
#endif
#ifndef __drv_releasesPriorityRegion
#define __drv_releasesPriorityRegion
#endif
#ifndef __drv_restoresIRQL
#define __drv_restoresIRQL
#endif
#ifndef __drv_sameIRQL
#define __drv_sameIRQL
#endif
#ifndef __drv_savesIRQL
#define __drv_savesIRQL
#endif
#ifndef __drv_typeBitset
#define __drv_typeBitset
#endif
#ifndef __drv_typeCond
#define __drv_typeCond
#endif
#ifndef __drv_typeConst
#define __drv_typeConst
#endif
#ifndef __drv_typeExpr
#define __drv_typeExpr
#endif
#ifndef __drv_useCancelIRQL
#define __drv_useCancelIRQL
#endif
#ifndef __drv_WDM
#define __drv_WDM
#endif
#ifndef __internal_kernel_driver
#define __internal_kernel_driver
#endif
#ifndef __kernel_code
#define __kernel_code
#endif
#ifndef __kernel_driver
#define __kernel_driver
#endif
#ifndef __prefast_operator_new_null
#define __prefast_operator_new_null
#endif
#ifndef __prefast_operator_new_throws
#define __prefast_operator_new_throws
#endif
#ifndef __user_code
#define __user_code
#endif
#ifndef __user_driver
#define __user_driver
#endif
#ifndef _IRQL_inout_
#define _IRQL_inout_
#endif
#ifndef _IRQL_is_cancel_
#define _IRQL_is_cancel_
#endif
#ifndef _IRQL_requires_same_
#define _IRQL_requires_same_
#endif
#ifndef _IRQL_restores_
#define _IRQL_restores_
#endif
#ifndef _IRQL_saves_
#define _IRQL_saves_
#endif
#ifndef _IRQL_uses_cancel_
#define _IRQL_uses_cancel_
#endif
#ifndef _Kernel_float_restored_
#define _Kernel_float_restored_
#endif
#ifndef _Kernel_float_saved_
#define _Kernel_float_saved_
#endif
#ifndef _Kernel_float_used_
#define _Kernel_float_used_
#endif
#ifndef _Kernel_IoGetDmaAdapter_
#define _Kernel_IoGetDmaAdapter_
#endif

/* ---- 3 function-like with no parameters. */
#ifndef __drv_holdsCancelSpinLock
#define __drv_holdsCancelSpinLock()
#endif
#ifndef __drv_holdsCriticalRegion
#define __drv_holdsCriticalRegion()
#endif
#ifndef __drv_holdsPriorityRegion
#define __drv_holdsPriorityRegion()
#endif

/* ---- 68 function-like. */
#ifndef __drv_acquiresExclusiveResource
#define __drv_acquiresExclusiveResource(kind)
#endif
#ifndef __drv_acquiresExclusiveResourceGlobal
#define __drv_acquiresExclusiveResourceGlobal(x1, x2)
#endif
#ifndef __drv_acquiresResource
#define __drv_acquiresResource(kind)
#endif
#ifndef __drv_acquiresResourceGlobal
#define __drv_acquiresResourceGlobal(kind, param)
#endif
#ifndef __drv_allocatesMem
#define __drv_allocatesMem(kind)
#endif
#ifndef __drv_arg
#define __drv_arg(expr, annotes)
#endif
#ifndef __drv_at
#define __drv_at(expr, annotes)
#endif
#ifndef __drv_callbackType
#define __drv_callbackType(x)
#endif
#ifndef __drv_clearDoInit
#define __drv_clearDoInit(yes)
#endif
#ifndef __drv_completionType
#define __drv_completionType(kind)
#endif
#ifndef __drv_defined
#define __drv_defined(x)
#endif
#ifndef __drv_deref
#define __drv_deref(x)
#endif
#ifndef __drv_dispatchType
#define __drv_dispatchType(type)
#endif
#ifndef __drv_formatString
#define __drv_formatString(kind)
#endif
#ifndef __drv_freesMem
#define __drv_freesMem(kind)
#endif
#ifndef __drv_fun
#define __drv_fun(x)
#endif
#ifndef __drv_functionClass
#define __drv_functionClass(name)
#endif
#ifndef __drv_in
#define __drv_in(annotes)
#endif
#ifndef __drv_in_deref
#define __drv_in_deref(annotes)
#endif
#ifndef __drv_innerAcquiresGlobal
#define __drv_innerAcquiresGlobal(x1, x2)
#endif
#ifndef __drv_innerMustHoldGlobal
#define __drv_innerMustHoldGlobal(x1, x2)
#endif
#ifndef __drv_innerNeverHoldGlobal
#define __drv_innerNeverHoldGlobal(x1, x2)
#endif
#ifndef __drv_innerReleasesGlobal
#define __drv_innerReleasesGlobal(x1, x2)
#endif
#ifndef __drv_maxFunctionIRQL
#define __drv_maxFunctionIRQL(irql)
#endif
#ifndef __drv_maxIRQL
#define __drv_maxIRQL(irql)
#endif
#ifndef __drv_minFunctionIRQL
#define __drv_minFunctionIRQL(irql)
#endif
#ifndef __drv_minIRQL
#define __drv_minIRQL(irql)
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
#ifndef __drv_out
#define __drv_out(annotes)
#endif
#ifndef __drv_out_deref
#define __drv_out_deref(annotes)
#endif
#ifndef __drv_preferredFunction
#define __drv_preferredFunction(func, why)
#endif
#ifndef __drv_releasesExclusiveResource
#define __drv_releasesExclusiveResource(kind)
#endif
#ifndef __drv_releasesExclusiveResourceGlobal
#define __drv_releasesExclusiveResourceGlobal(x1, x2)
#endif
#ifndef __drv_releasesResource
#define __drv_releasesResource(kind)
#endif
#ifndef __drv_releasesResourceGlobal
#define __drv_releasesResourceGlobal(kind, param)
#endif
#ifndef __drv_reportError
#define __drv_reportError(why)
#endif
#ifndef __drv_requiresIRQL
#define __drv_requiresIRQL(irql)
#endif
#ifndef __drv_requiresIRQLGlobal
#define __drv_requiresIRQLGlobal(kind, param)
#endif
#ifndef __drv_restoresIRQLGlobal
#define __drv_restoresIRQLGlobal(kind, param)
#endif
#ifndef __drv_ret
#define __drv_ret(x)
#endif
#ifndef __drv_savesIRQLGlobal
#define __drv_savesIRQLGlobal(kind, param)
#endif
#ifndef __drv_setsIRQL
#define __drv_setsIRQL(irql)
#endif
#ifndef __drv_strictType
#define __drv_strictType(typename, mode)
#endif
#ifndef __drv_strictTypeMatch
#define __drv_strictTypeMatch(mode)
#endif
#ifndef __drv_unit
#define __drv_unit(x)
#endif
#ifndef __drv_valueIs
#define __drv_valueIs(list)
#endif
#ifndef __drv_when
#define __drv_when(cond, annotes)
#endif
#ifndef _Analysis_assume_section_locked_
#define _Analysis_assume_section_locked_(x)
#endif
#ifndef _Analysis_assume_section_unlocked_
#define _Analysis_assume_section_unlocked_(x)
#endif
#ifndef _Dispatch_type_
#define _Dispatch_type_(type)
#endif
#ifndef _IRQL_always_function_max_
#define _IRQL_always_function_max_(irql)
#endif
#ifndef _IRQL_always_function_min_
#define _IRQL_always_function_min_(irql)
#endif
#ifndef _IRQL_limited_to_
#define _IRQL_limited_to_(x)
#endif
#ifndef _IRQL_raises_
#define _IRQL_raises_(irql)
#endif
#ifndef _IRQL_requires_
#define _IRQL_requires_(irql)
#endif
#ifndef _IRQL_requires_max_
#define _IRQL_requires_max_(irql)
#endif
#ifndef _IRQL_requires_min_
#define _IRQL_requires_min_(irql)
#endif
#ifndef _IRQL_restores_global_
#define _IRQL_restores_global_(kind, param)
#endif
#ifndef _IRQL_saves_global_
#define _IRQL_saves_global_(kind, param)
#endif
#ifndef _Kernel_acquires_resource_
#define _Kernel_acquires_resource_(x)
#endif
#ifndef _Kernel_clear_do_init_
#define _Kernel_clear_do_init_(x)
#endif
#ifndef _Kernel_releases_resource_
#define _Kernel_releases_resource_(x)
#endif
#ifndef _Kernel_requires_resource_held_
#define _Kernel_requires_resource_held_(res)
#endif
#ifndef _Kernel_requires_resource_not_held_
#define _Kernel_requires_resource_not_held_(x)
#endif
#ifndef _Landmark_
#define _Landmark_(x)
#endif

#include <sdv_driverspecs.h>

#endif /* SOFTNDK_DRIVERSPECS_H */
