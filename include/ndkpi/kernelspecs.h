/*
 * kernelspecs.h - SoftNDK user-mode stand-in for the WDK's kernelspecs.h: the IRQL
 * annotations (_IRQL_requires_max_(irql), _IRQL_saves_, __drv_maxIRQL(irql), ...).
 * As in the WDK it includes driverspecs.h, and ntdef.h includes it.
 *
 * The WDK annotation list (tests/headers/annotations/wdk-annotations.tsv, columns name,
 * params, header) is the reference: every name it gives this header is defined here
 * with the WDK's arity - object-like, function-like with N parameters, or with "()" -
 * and, as in an ordinary (non-analysis) WDK build, expands to nothing: the annotations
 * feed PREfast, SDV and the compiler's /analyze, none of which exist here. Each is
 * defined only if nobody defined it first, so a consumer that brings its own shim, or
 * another annotation header that defines the same name, wins. The test
 * "headers.annotations: every WDK annotation ..." uses every name with its arity.
 */
#ifndef SOFTNDK_KERNELSPECS_H
#define SOFTNDK_KERNELSPECS_H

#include <driverspecs.h>
#include <softndk_sal.h>

/* ---- 11 object-like (no arguments). */
#ifndef __drv_isCancelIRQL
#define __drv_isCancelIRQL
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
#ifndef __drv_useCancelIRQL
#define __drv_useCancelIRQL
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

/* ---- 17 function-like. */
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
#ifndef __drv_raisesIRQL
#define __drv_raisesIRQL(irql)
#endif
#ifndef __drv_requiresIRQL
#define __drv_requiresIRQL(irql)
#endif
#ifndef __drv_restoresIRQLGlobal
#define __drv_restoresIRQLGlobal(kind, param)
#endif
#ifndef __drv_savesIRQLGlobal
#define __drv_savesIRQLGlobal(kind, param)
#endif
#ifndef __drv_setsIRQL
#define __drv_setsIRQL(irql)
#endif
#ifndef _IRQL_always_function_max_
#define _IRQL_always_function_max_(irql)
#endif
#ifndef _IRQL_always_function_min_
#define _IRQL_always_function_min_(irql)
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

#endif /* SOFTNDK_KERNELSPECS_H */
