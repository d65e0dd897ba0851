/*
 * sdv_driverspecs.h - SoftNDK user-mode stand-in for the WDK's Static Driver Verifier
 * hints (__sdv_save_request(r), ...). driverspecs.h includes it.
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
#ifndef SOFTNDK_SDV_DRIVERSPECS_H
#define SOFTNDK_SDV_DRIVERSPECS_H

/* ---- 3 function-like. */
#ifndef __sdv_retrieve_request
#define __sdv_retrieve_request(x)
#endif
#ifndef __sdv_save_adapter_context
#define __sdv_save_adapter_context(x)
#endif
#ifndef __sdv_save_request
#define __sdv_save_request(x)
#endif

#endif /* SOFTNDK_SDV_DRIVERSPECS_H */
