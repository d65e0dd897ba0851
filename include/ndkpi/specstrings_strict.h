/*
 * specstrings_strict.h - SoftNDK user-mode stand-in for the WDK's specstrings_strict.h.
 * On Windows it re-defines the SAL 1 and SAL 2 names so that /analyze can reject the
 * ones used in the wrong place (__allowed(on_parameter), ...); in an ordinary build
 * every one of them still expands to nothing, which is what this header gives.
 * specstrings.h includes it.
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
#ifndef SOFTNDK_SPECSTRINGS_STRICT_H
#define SOFTNDK_SPECSTRINGS_STRICT_H

#include <softndk_sal.h>

/* ---- 93 object-like (no arguments). */
#ifndef __allocator
#define __allocator
#endif
#ifndef __checkReturn
#define __checkReturn
#endif
#ifndef __deref
#define __deref
#endif
#ifndef __deref_in
#define __deref_in
#endif
#ifndef __deref_in_opt
#define __deref_in_opt
#endif
#ifndef __deref_in_opt_out
#define __deref_in_opt_out
#endif
#ifndef __deref_inout
#define __deref_inout
#endif
#ifndef __deref_inout_nz
#define __deref_inout_nz
#endif
#ifndef __deref_inout_nz_opt
#define __deref_inout_nz_opt
#endif
#ifndef __deref_inout_opt
#define __deref_inout_opt
#endif
#ifndef __deref_inout_z
#define __deref_inout_z
#endif
#ifndef __deref_inout_z_opt
#define __deref_inout_z_opt
#endif
#ifndef __deref_nonvolatile
#define __deref_nonvolatile
#endif
#ifndef __deref_opt_in
#define __deref_opt_in
#endif
#ifndef __deref_opt_in_opt
#define __deref_opt_in_opt
#endif
#ifndef __deref_opt_inout
#define __deref_opt_inout
#endif
#ifndef __deref_opt_inout_nz
#define __deref_opt_inout_nz
#endif
#ifndef __deref_opt_inout_nz_opt
#define __deref_opt_inout_nz_opt
#endif
#ifndef __deref_opt_inout_opt
#define __deref_opt_inout_opt
#endif
#ifndef __deref_opt_inout_z
#define __deref_opt_inout_z
#endif
#ifndef __deref_opt_inout_z_opt
#define __deref_opt_inout_z_opt
#endif
#ifndef __deref_opt_out
#define __deref_opt_out
#endif
#ifndef __deref_opt_out_nz_opt
#define __deref_opt_out_nz_opt
#endif
#ifndef __deref_opt_out_opt
#define __deref_opt_out_opt
#endif
#ifndef __deref_opt_out_z_opt
#define __deref_opt_out_z_opt
#endif
#ifndef __deref_out
#define __deref_out
#endif
#ifndef __deref_out_bound
#define __deref_out_bound
#endif
#ifndef __deref_out_nz
#define __deref_out_nz
#endif
#ifndef __deref_out_nz_opt
#define __deref_out_nz_opt
#endif
#ifndef __deref_out_opt
#define __deref_out_opt
#endif
#ifndef __deref_out_z
#define __deref_out_z
#endif
#ifndef __deref_out_z_opt
#define __deref_out_z_opt
#endif
#ifndef __deref_volatile
#define __deref_volatile
#endif
#ifndef __encoded_array
#define __encoded_array
#endif
#ifndef __encoded_pointer
#define __encoded_pointer
#endif
#ifndef __exceptthat
#define __exceptthat
#endif
#ifndef __fallthrough
#define __fallthrough
#endif
#ifndef __field_encoded_array
#define __field_encoded_array
#endif
#ifndef __field_encoded_pointer
#define __field_encoded_pointer
#endif
#ifndef __field_nullterminated
#define __field_nullterminated
#endif
#ifndef __format_string
#define __format_string
#endif
#ifndef __gdi_entry
#define __gdi_entry
#endif
#ifndef __in_bound
#define __in_bound
#endif
#ifndef __in_nz
#define __in_nz
#endif
#ifndef __in_nz_opt
#define __in_nz_opt
#endif
#ifndef __in_opt
#define __in_opt
#endif
#ifndef __in_z
#define __in_z
#endif
#ifndef __in_z_opt
#define __in_z_opt
#endif
#ifndef __inout
#define __inout
#endif
#ifndef __inout_nz
#define __inout_nz
#endif
#ifndef __inout_nz_opt
#define __inout_nz_opt
#endif
#ifndef __inout_opt
#define __inout_opt
#endif
#ifndef __inout_z
#define __inout_z
#endif
#ifndef __inout_z_opt
#define __inout_z_opt
#endif
#ifndef __kernel_entry
#define __kernel_entry
#endif
#ifndef __maybenull
#define __maybenull
#endif
#ifndef __maybevalid
#define __maybevalid
#endif
#ifndef __nonvolatile
#define __nonvolatile
#endif
#ifndef __notnull
#define __notnull
#endif
#ifndef __notvalid
#define __notvalid
#endif
#ifndef __nullnullterminated
#define __nullnullterminated
#endif
#ifndef __nullterminated
#define __nullterminated
#endif
#ifndef __out_bound
#define __out_bound
#endif
#ifndef __out_nz
#define __out_nz
#endif
#ifndef __out_nz_opt
#define __out_nz_opt
#endif
#ifndef __out_opt
#define __out_opt
#endif
#ifndef __out_z
#define __out_z
#endif
#ifndef __possibly_notnullterminated
#define __possibly_notnullterminated
#endif
#ifndef __post
#define __post
#endif
#ifndef __post_invalid
#define __post_invalid
#endif
#ifndef __post_nullnullterminated
#define __post_nullnullterminated
#endif
#ifndef __readonly
#define __readonly
#endif
#ifndef __refparam
#define __refparam
#endif
#ifndef __rpc_entry
#define __rpc_entry
#endif
#ifndef __volatile
#define __volatile
#endif
#ifndef _COM_Outptr_
#define _COM_Outptr_
#endif
#ifndef _COM_Outptr_opt_
#define _COM_Outptr_opt_
#endif
#ifndef _COM_Outptr_opt_result_maybenull_
#define _COM_Outptr_opt_result_maybenull_
#endif
#ifndef _COM_Outptr_result_maybenull_
#define _COM_Outptr_result_maybenull_
#endif
#ifndef _Deref_opt_out_
#define _Deref_opt_out_
#endif
#ifndef _Deref_opt_out_opt_
#define _Deref_opt_out_opt_
#endif
#ifndef _Deref_out_
#define _Deref_out_
#endif
#ifndef _Deref_out_opt_
#define _Deref_out_opt_
#endif
#ifndef _Outptr_
#define _Outptr_
#endif
#ifndef _Outptr_opt_
#define _Outptr_opt_
#endif
#ifndef _Outptr_opt_result_maybenull_
#define _Outptr_opt_result_maybenull_
#endif
#ifndef _Outptr_opt_result_maybenull_z_
#define _Outptr_opt_result_maybenull_z_
#endif
#ifndef _Outptr_opt_result_nullonfailure_
#define _Outptr_opt_result_nullonfailure_
#endif
#ifndef _Outptr_opt_result_z_
#define _Outptr_opt_result_z_
#endif
#ifndef _Outptr_result_maybenull_
#define _Outptr_result_maybenull_
#endif
#ifndef _Outptr_result_maybenull_z_
#define _Outptr_result_maybenull_z_
#endif
#ifndef _Outptr_result_nullonfailure_
#define _Outptr_result_nullonfailure_
#endif
#ifndef _Outptr_result_z_
#define _Outptr_result_z_
#endif

/* ---- 311 function-like. */
#ifndef __analysis_assert
#define __analysis_assert(x)
#endif
#ifndef __analysis_assume
#define __analysis_assume(expr)
#endif
#ifndef __analysis_assume_nullterminated
#define __analysis_assume_nullterminated(x)
#endif
#ifndef __analysis_hint
#define __analysis_hint(x)
#endif
#ifndef __assume_bound
#define __assume_bound(x)
#endif
#ifndef __assume_validated
#define __assume_validated(x)
#endif
#ifndef __bcount
#define __bcount(size)
#endif
#ifndef __bcount_opt
#define __bcount_opt(size)
#endif
#ifndef __blocksOn
#define __blocksOn(x)
#endif
#ifndef __byte_readableTo
#define __byte_readableTo(x)
#endif
#ifndef __byte_writableTo
#define __byte_writableTo(x)
#endif
#ifndef __class_code_content
#define __class_code_content(x)
#endif
#ifndef __control_entrypoint
#define __control_entrypoint(category)
#endif
#ifndef __data_entrypoint
#define __data_entrypoint(category)
#endif
#ifndef __deallocate
#define __deallocate(x)
#endif
#ifndef __deallocate_opt
#define __deallocate_opt(x)
#endif
#ifndef __deref_bcount
#define __deref_bcount(x)
#endif
#ifndef __deref_bcount_opt
#define __deref_bcount_opt(x)
#endif
#ifndef __deref_ecount
#define __deref_ecount(x)
#endif
#ifndef __deref_ecount_opt
#define __deref_ecount_opt(x)
#endif
#ifndef __deref_in_bcount
#define __deref_in_bcount(size)
#endif
#ifndef __deref_in_bcount_opt
#define __deref_in_bcount_opt(x)
#endif
#ifndef __deref_in_ecount
#define __deref_in_ecount(size)
#endif
#ifndef __deref_in_ecount_iterator
#define __deref_in_ecount_iterator(x1, x2)
#endif
#ifndef __deref_in_ecount_opt
#define __deref_in_ecount_opt(x)
#endif
#ifndef __deref_in_range
#define __deref_in_range(x1, x2)
#endif
#ifndef __deref_in_xcount
#define __deref_in_xcount(x)
#endif
#ifndef __deref_in_xcount_opt
#define __deref_in_xcount_opt(x)
#endif
#ifndef __deref_inout_bcount
#define __deref_inout_bcount(size)
#endif
#ifndef __deref_inout_bcount_full
#define __deref_inout_bcount_full(x)
#endif
#ifndef __deref_inout_bcount_full_opt
#define __deref_inout_bcount_full_opt(x)
#endif
#ifndef __deref_inout_bcount_nz
#define __deref_inout_bcount_nz(x)
#endif
#ifndef __deref_inout_bcount_nz_opt
#define __deref_inout_bcount_nz_opt(x)
#endif
#ifndef __deref_inout_bcount_opt
#define __deref_inout_bcount_opt(x)
#endif
#ifndef __deref_inout_bcount_part
#define __deref_inout_bcount_part(x1, x2)
#endif
#ifndef __deref_inout_bcount_part_opt
#define __deref_inout_bcount_part_opt(x1, x2)
#endif
#ifndef __deref_inout_bcount_z
#define __deref_inout_bcount_z(x)
#endif
#ifndef __deref_inout_bcount_z_opt
#define __deref_inout_bcount_z_opt(x)
#endif
#ifndef __deref_inout_ecount
#define __deref_inout_ecount(size)
#endif
#ifndef __deref_inout_ecount_full
#define __deref_inout_ecount_full(x)
#endif
#ifndef __deref_inout_ecount_full_opt
#define __deref_inout_ecount_full_opt(x)
#endif
#ifndef __deref_inout_ecount_iterator
#define __deref_inout_ecount_iterator(x1, x2)
#endif
#ifndef __deref_inout_ecount_nz
#define __deref_inout_ecount_nz(x)
#endif
#ifndef __deref_inout_ecount_nz_opt
#define __deref_inout_ecount_nz_opt(x)
#endif
#ifndef __deref_inout_ecount_opt
#define __deref_inout_ecount_opt(x)
#endif
#ifndef __deref_inout_ecount_part
#define __deref_inout_ecount_part(x1, x2)
#endif
#ifndef __deref_inout_ecount_part_opt
#define __deref_inout_ecount_part_opt(x1, x2)
#endif
#ifndef __deref_inout_ecount_z
#define __deref_inout_ecount_z(x)
#endif
#ifndef __deref_inout_ecount_z_opt
#define __deref_inout_ecount_z_opt(x)
#endif
#ifndef __deref_inout_range
#define __deref_inout_range(x1, x2)
#endif
#ifndef __deref_inout_xcount
#define __deref_inout_xcount(x)
#endif
#ifndef __deref_inout_xcount_full
#define __deref_inout_xcount_full(x)
#endif
#ifndef __deref_inout_xcount_full_opt
#define __deref_inout_xcount_full_opt(x)
#endif
#ifndef __deref_inout_xcount_opt
#define __deref_inout_xcount_opt(x)
#endif
#ifndef __deref_inout_xcount_part
#define __deref_inout_xcount_part(x1, x2)
#endif
#ifndef __deref_inout_xcount_part_opt
#define __deref_inout_xcount_part_opt(x1, x2)
#endif
#ifndef __deref_opt_bcount
#define __deref_opt_bcount(x)
#endif
#ifndef __deref_opt_bcount_opt
#define __deref_opt_bcount_opt(x)
#endif
#ifndef __deref_opt_ecount
#define __deref_opt_ecount(x)
#endif
#ifndef __deref_opt_ecount_opt
#define __deref_opt_ecount_opt(x)
#endif
#ifndef __deref_opt_in_bcount
#define __deref_opt_in_bcount(x)
#endif
#ifndef __deref_opt_in_bcount_opt
#define __deref_opt_in_bcount_opt(x)
#endif
#ifndef __deref_opt_in_ecount
#define __deref_opt_in_ecount(x)
#endif
#ifndef __deref_opt_in_ecount_opt
#define __deref_opt_in_ecount_opt(x)
#endif
#ifndef __deref_opt_in_xcount
#define __deref_opt_in_xcount(x)
#endif
#ifndef __deref_opt_in_xcount_opt
#define __deref_opt_in_xcount_opt(x)
#endif
#ifndef __deref_opt_inout_bcount
#define __deref_opt_inout_bcount(x)
#endif
#ifndef __deref_opt_inout_bcount_full
#define __deref_opt_inout_bcount_full(x)
#endif
#ifndef __deref_opt_inout_bcount_full_opt
#define __deref_opt_inout_bcount_full_opt(x)
#endif
#ifndef __deref_opt_inout_bcount_nz
#define __deref_opt_inout_bcount_nz(x)
#endif
#ifndef __deref_opt_inout_bcount_nz_opt
#define __deref_opt_inout_bcount_nz_opt(x)
#endif
#ifndef __deref_opt_inout_bcount_opt
#define __deref_opt_inout_bcount_opt(x)
#endif
#ifndef __deref_opt_inout_bcount_part
#define __deref_opt_inout_bcount_part(x1, x2)
#endif
#ifndef __deref_opt_inout_bcount_part_opt
#define __deref_opt_inout_bcount_part_opt(x1, x2)
#endif
#ifndef __deref_opt_inout_bcount_z
#define __deref_opt_inout_bcount_z(x)
#endif
#ifndef __deref_opt_inout_bcount_z_opt
#define __deref_opt_inout_bcount_z_opt(x)
#endif
#ifndef __deref_opt_inout_ecount
#define __deref_opt_inout_ecount(x)
#endif
#ifndef __deref_opt_inout_ecount_full
#define __deref_opt_inout_ecount_full(x)
#endif
#ifndef __deref_opt_inout_ecount_full_opt
#define __deref_opt_inout_ecount_full_opt(x)
#endif
#ifndef __deref_opt_inout_ecount_nz
#define __deref_opt_inout_ecount_nz(x)
#endif
#ifndef __deref_opt_inout_ecount_nz_opt
#define __deref_opt_inout_ecount_nz_opt(x)
#endif
#ifndef __deref_opt_inout_ecount_opt
#define __deref_opt_inout_ecount_opt(x)
#endif
#ifndef __deref_opt_inout_ecount_part
#define __deref_opt_inout_ecount_part(x1, x2)
#endif
#ifndef __deref_opt_inout_ecount_part_opt
#define __deref_opt_inout_ecount_part_opt(x1, x2)
#endif
#ifndef __deref_opt_inout_ecount_z
#define __deref_opt_inout_ecount_z(x)
#endif
#ifndef __deref_opt_inout_ecount_z_opt
#define __deref_opt_inout_ecount_z_opt(x)
#endif
#ifndef __deref_opt_inout_xcount
#define __deref_opt_inout_xcount(x)
#endif
#ifndef __deref_opt_inout_xcount_full
#define __deref_opt_inout_xcount_full(x)
#endif
#ifndef __deref_opt_inout_xcount_full_opt
#define __deref_opt_inout_xcount_full_opt(x)
#endif
#ifndef __deref_opt_inout_xcount_opt
#define __deref_opt_inout_xcount_opt(x)
#endif
#ifndef __deref_opt_inout_xcount_part
#define __deref_opt_inout_xcount_part(x1, x2)
#endif
#ifndef __deref_opt_inout_xcount_part_opt
#define __deref_opt_inout_xcount_part_opt(x1, x2)
#endif
#ifndef __deref_opt_out_bcount
#define __deref_opt_out_bcount(size)
#endif
#ifndef __deref_opt_out_bcount_full
#define __deref_opt_out_bcount_full(x)
#endif
#ifndef __deref_opt_out_bcount_full_opt
#define __deref_opt_out_bcount_full_opt(x)
#endif
#ifndef __deref_opt_out_bcount_nz_opt
#define __deref_opt_out_bcount_nz_opt(x)
#endif
#ifndef __deref_opt_out_bcount_opt
#define __deref_opt_out_bcount_opt(x)
#endif
#ifndef __deref_opt_out_bcount_part
#define __deref_opt_out_bcount_part(x1, x2)
#endif
#ifndef __deref_opt_out_bcount_part_opt
#define __deref_opt_out_bcount_part_opt(x1, x2)
#endif
#ifndef __deref_opt_out_bcount_z_opt
#define __deref_opt_out_bcount_z_opt(x)
#endif
#ifndef __deref_opt_out_ecount
#define __deref_opt_out_ecount(size)
#endif
#ifndef __deref_opt_out_ecount_full
#define __deref_opt_out_ecount_full(x)
#endif
#ifndef __deref_opt_out_ecount_full_opt
#define __deref_opt_out_ecount_full_opt(x)
#endif
#ifndef __deref_opt_out_ecount_nz_opt
#define __deref_opt_out_ecount_nz_opt(x)
#endif
#ifndef __deref_opt_out_ecount_opt
#define __deref_opt_out_ecount_opt(x)
#endif
#ifndef __deref_opt_out_ecount_part
#define __deref_opt_out_ecount_part(x1, x2)
#endif
#ifndef __deref_opt_out_ecount_part_opt
#define __deref_opt_out_ecount_part_opt(x1, x2)
#endif
#ifndef __deref_opt_out_ecount_z_opt
#define __deref_opt_out_ecount_z_opt(x)
#endif
#ifndef __deref_opt_out_xcount
#define __deref_opt_out_xcount(x)
#endif
#ifndef __deref_opt_out_xcount_full
#define __deref_opt_out_xcount_full(x)
#endif
#ifndef __deref_opt_out_xcount_full_opt
#define __deref_opt_out_xcount_full_opt(x)
#endif
#ifndef __deref_opt_out_xcount_opt
#define __deref_opt_out_xcount_opt(x)
#endif
#ifndef __deref_opt_out_xcount_part
#define __deref_opt_out_xcount_part(x1, x2)
#endif
#ifndef __deref_opt_out_xcount_part_opt
#define __deref_opt_out_xcount_part_opt(x1, x2)
#endif
#ifndef __deref_opt_xcount
#define __deref_opt_xcount(x)
#endif
#ifndef __deref_opt_xcount_opt
#define __deref_opt_xcount_opt(x)
#endif
#ifndef __deref_out_bcount
#define __deref_out_bcount(size)
#endif
#ifndef __deref_out_bcount_full
#define __deref_out_bcount_full(x)
#endif
#ifndef __deref_out_bcount_full_opt
#define __deref_out_bcount_full_opt(x)
#endif
#ifndef __deref_out_bcount_nz
#define __deref_out_bcount_nz(x)
#endif
#ifndef __deref_out_bcount_nz_opt
#define __deref_out_bcount_nz_opt(x)
#endif
#ifndef __deref_out_bcount_opt
#define __deref_out_bcount_opt(size)
#endif
#ifndef __deref_out_bcount_part
#define __deref_out_bcount_part(size, length)
#endif
#ifndef __deref_out_bcount_part_opt
#define __deref_out_bcount_part_opt(x1, x2)
#endif
#ifndef __deref_out_bcount_z
#define __deref_out_bcount_z(x)
#endif
#ifndef __deref_out_bcount_z_opt
#define __deref_out_bcount_z_opt(x)
#endif
#ifndef __deref_out_ecount
#define __deref_out_ecount(size)
#endif
#ifndef __deref_out_ecount_full
#define __deref_out_ecount_full(x)
#endif
#ifndef __deref_out_ecount_full_opt
#define __deref_out_ecount_full_opt(x)
#endif
#ifndef __deref_out_ecount_iterator
#define __deref_out_ecount_iterator(x1, x2)
#endif
#ifndef __deref_out_ecount_nz
#define __deref_out_ecount_nz(x)
#endif
#ifndef __deref_out_ecount_nz_opt
#define __deref_out_ecount_nz_opt(x)
#endif
#ifndef __deref_out_ecount_opt
#define __deref_out_ecount_opt(size)
#endif
#ifndef __deref_out_ecount_part
#define __deref_out_ecount_part(size, length)
#endif
#ifndef __deref_out_ecount_part_opt
#define __deref_out_ecount_part_opt(x1, x2)
#endif
#ifndef __deref_out_ecount_z
#define __deref_out_ecount_z(x)
#endif
#ifndef __deref_out_ecount_z_opt
#define __deref_out_ecount_z_opt(x)
#endif
#ifndef __deref_out_range
#define __deref_out_range(x1, x2)
#endif
#ifndef __deref_out_xcount
#define __deref_out_xcount(x)
#endif
#ifndef __deref_out_xcount_full
#define __deref_out_xcount_full(x)
#endif
#ifndef __deref_out_xcount_full_opt
#define __deref_out_xcount_full_opt(x)
#endif
#ifndef __deref_out_xcount_opt
#define __deref_out_xcount_opt(x)
#endif
#ifndef __deref_out_xcount_part
#define __deref_out_xcount_part(x1, x2)
#endif
#ifndef __deref_out_xcount_part_opt
#define __deref_out_xcount_part_opt(x1, x2)
#endif
#ifndef __deref_realloc_bcount
#define __deref_realloc_bcount(x1, x2)
#endif
#ifndef __deref_xcount
#define __deref_xcount(x)
#endif
#ifndef __deref_xcount_opt
#define __deref_xcount_opt(x)
#endif
#ifndef __ecount
#define __ecount(size)
#endif
#ifndef __ecount_opt
#define __ecount_opt(size)
#endif
#ifndef __elem_readableTo
#define __elem_readableTo(x)
#endif
#ifndef __elem_writableTo
#define __elem_writableTo(x)
#endif
#ifndef __field_bcount
#define __field_bcount(size)
#endif
#ifndef __field_bcount_full
#define __field_bcount_full(x)
#endif
#ifndef __field_bcount_full_opt
#define __field_bcount_full_opt(x)
#endif
#ifndef __field_bcount_opt
#define __field_bcount_opt(size)
#endif
#ifndef __field_bcount_part
#define __field_bcount_part(size, length)
#endif
#ifndef __field_bcount_part_opt
#define __field_bcount_part_opt(size, length)
#endif
#ifndef __field_data_source
#define __field_data_source(x)
#endif
#ifndef __field_ecount
#define __field_ecount(size)
#endif
#ifndef __field_ecount_full
#define __field_ecount_full(x)
#endif
#ifndef __field_ecount_full_opt
#define __field_ecount_full_opt(x)
#endif
#ifndef __field_ecount_opt
#define __field_ecount_opt(size)
#endif
#ifndef __field_ecount_part
#define __field_ecount_part(size, length)
#endif
#ifndef __field_ecount_part_opt
#define __field_ecount_part_opt(size, length)
#endif
#ifndef __field_range
#define __field_range(x1, x2)
#endif
#ifndef __field_xcount
#define __field_xcount(size)
#endif
#ifndef __field_xcount_full
#define __field_xcount_full(x)
#endif
#ifndef __field_xcount_full_opt
#define __field_xcount_full_opt(x)
#endif
#ifndef __field_xcount_opt
#define __field_xcount_opt(x)
#endif
#ifndef __field_xcount_part
#define __field_xcount_part(x1, x2)
#endif
#ifndef __field_xcount_part_opt
#define __field_xcount_part_opt(x1, x2)
#endif
#ifndef __file_parser
#define __file_parser(x)
#endif
#ifndef __file_parser_class
#define __file_parser_class(x)
#endif
#ifndef __file_parser_library
#define __file_parser_library(x)
#endif
#ifndef __in_awcount
#define __in_awcount(x1, x2)
#endif
#ifndef __in_bcount
#define __in_bcount(size)
#endif
#ifndef __in_bcount_nz
#define __in_bcount_nz(size)
#endif
#ifndef __in_bcount_nz_opt
#define __in_bcount_nz_opt(x)
#endif
#ifndef __in_bcount_opt
#define __in_bcount_opt(size)
#endif
#ifndef __in_bcount_z
#define __in_bcount_z(size)
#endif
#ifndef __in_bcount_z_opt
#define __in_bcount_z_opt(size)
#endif
#ifndef __in_data_source
#define __in_data_source(x)
#endif
#ifndef __in_ecount
#define __in_ecount(size)
#endif
#ifndef __in_ecount_nz
#define __in_ecount_nz(size)
#endif
#ifndef __in_ecount_nz_opt
#define __in_ecount_nz_opt(x)
#endif
#ifndef __in_ecount_opt
#define __in_ecount_opt(size)
#endif
#ifndef __in_ecount_z
#define __in_ecount_z(size)
#endif
#ifndef __in_ecount_z_opt
#define __in_ecount_z_opt(size)
#endif
#ifndef __in_range
#define __in_range(lb, ub)
#endif
#ifndef __in_xcount
#define __in_xcount(size)
#endif
#ifndef __in_xcount_opt
#define __in_xcount_opt(size)
#endif
#ifndef __inexpressible_readableTo
#define __inexpressible_readableTo(x)
#endif
#ifndef __inout_bcount
#define __inout_bcount(size)
#endif
#ifndef __inout_bcount_full
#define __inout_bcount_full(size)
#endif
#ifndef __inout_bcount_full_opt
#define __inout_bcount_full_opt(x)
#endif
#ifndef __inout_bcount_nz
#define __inout_bcount_nz(x)
#endif
#ifndef __inout_bcount_nz_opt
#define __inout_bcount_nz_opt(x)
#endif
#ifndef __inout_bcount_opt
#define __inout_bcount_opt(size)
#endif
#ifndef __inout_bcount_part
#define __inout_bcount_part(size, length)
#endif
#ifndef __inout_bcount_part_opt
#define __inout_bcount_part_opt(size, length)
#endif
#ifndef __inout_bcount_z
#define __inout_bcount_z(size)
#endif
#ifndef __inout_bcount_z_opt
#define __inout_bcount_z_opt(x)
#endif
#ifndef __inout_ecount
#define __inout_ecount(size)
#endif
#ifndef __inout_ecount_full
#define __inout_ecount_full(size)
#endif
#ifndef __inout_ecount_full_opt
#define __inout_ecount_full_opt(x)
#endif
#ifndef __inout_ecount_nz
#define __inout_ecount_nz(x)
#endif
#ifndef __inout_ecount_nz_opt
#define __inout_ecount_nz_opt(x)
#endif
#ifndef __inout_ecount_opt
#define __inout_ecount_opt(size)
#endif
#ifndef __inout_ecount_part
#define __inout_ecount_part(size, length)
#endif
#ifndef __inout_ecount_part_opt
#define __inout_ecount_part_opt(size, length)
#endif
#ifndef __inout_ecount_z
#define __inout_ecount_z(size)
#endif
#ifndef __inout_ecount_z_opt
#define __inout_ecount_z_opt(x)
#endif
#ifndef __inout_xcount
#define __inout_xcount(size)
#endif
#ifndef __inout_xcount_full
#define __inout_xcount_full(x)
#endif
#ifndef __inout_xcount_full_opt
#define __inout_xcount_full_opt(x)
#endif
#ifndef __inout_xcount_opt
#define __inout_xcount_opt(size)
#endif
#ifndef __inout_xcount_part
#define __inout_xcount_part(x1, x2)
#endif
#ifndef __inout_xcount_part_opt
#define __inout_xcount_part_opt(x1, x2)
#endif
#ifndef __out_awcount
#define __out_awcount(x1, x2)
#endif
#ifndef __out_bcount
#define __out_bcount(size)
#endif
#ifndef __out_bcount_full
#define __out_bcount_full(size)
#endif
#ifndef __out_bcount_full_opt
#define __out_bcount_full_opt(size)
#endif
#ifndef __out_bcount_nz
#define __out_bcount_nz(size)
#endif
#ifndef __out_bcount_nz_opt
#define __out_bcount_nz_opt(x)
#endif
#ifndef __out_bcount_opt
#define __out_bcount_opt(size)
#endif
#ifndef __out_bcount_part
#define __out_bcount_part(size, length)
#endif
#ifndef __out_bcount_part_opt
#define __out_bcount_part_opt(size, length)
#endif
#ifndef __out_bcount_z
#define __out_bcount_z(size)
#endif
#ifndef __out_bcount_z_opt
#define __out_bcount_z_opt(size)
#endif
#ifndef __out_data_source
#define __out_data_source(x)
#endif
#ifndef __out_ecount
#define __out_ecount(size)
#endif
#ifndef __out_ecount_full
#define __out_ecount_full(size)
#endif
#ifndef __out_ecount_full_opt
#define __out_ecount_full_opt(size)
#endif
#ifndef __out_ecount_nz
#define __out_ecount_nz(size)
#endif
#ifndef __out_ecount_nz_opt
#define __out_ecount_nz_opt(x)
#endif
#ifndef __out_ecount_opt
#define __out_ecount_opt(size)
#endif
#ifndef __out_ecount_part
#define __out_ecount_part(size, length)
#endif
#ifndef __out_ecount_part_opt
#define __out_ecount_part_opt(size, length)
#endif
#ifndef __out_ecount_z
#define __out_ecount_z(size)
#endif
#ifndef __out_ecount_z_opt
#define __out_ecount_z_opt(size)
#endif
#ifndef __out_has_adt_prop
#define __out_has_adt_prop(x1, x2)
#endif
#ifndef __out_has_type_adt_props
#define __out_has_type_adt_props(x)
#endif
#ifndef __out_not_has_adt_prop
#define __out_not_has_adt_prop(x1, x2)
#endif
#ifndef __out_range
#define __out_range(lb, ub)
#endif
#ifndef __out_transfer_adt_prop
#define __out_transfer_adt_prop(x)
#endif
#ifndef __out_validated
#define __out_validated(x)
#endif
#ifndef __out_xcount
#define __out_xcount(size)
#endif
#ifndef __out_xcount_full
#define __out_xcount_full(x)
#endif
#ifndef __out_xcount_full_opt
#define __out_xcount_full_opt(x)
#endif
#ifndef __out_xcount_opt
#define __out_xcount_opt(size)
#endif
#ifndef __out_xcount_part
#define __out_xcount_part(size, length)
#endif
#ifndef __out_xcount_part_opt
#define __out_xcount_part_opt(x1, x2)
#endif
#ifndef __precond
#define __precond(x)
#endif
#ifndef __range
#define __range(lb, ub)
#endif
#ifndef __range_max
#define __range_max(x1, x2)
#endif
#ifndef __range_min
#define __range_min(x1, x2)
#endif
#ifndef __readableTo
#define __readableTo(x)
#endif
#ifndef __source_code_content
#define __source_code_content(x)
#endif
#ifndef __struct_bcount
#define __struct_bcount(x)
#endif
#ifndef __struct_xcount
#define __struct_xcount(x)
#endif
#ifndef __success
#define __success(expr)
#endif
#ifndef __this_out_data_source
#define __this_out_data_source(x)
#endif
#ifndef __this_out_validated
#define __this_out_validated(x)
#endif
#ifndef __transfer
#define __transfer(x)
#endif
#ifndef __type_has_adt_prop
#define __type_has_adt_prop(x1, x2)
#endif
#ifndef __typefix
#define __typefix(ctype)
#endif
#ifndef __writableTo
#define __writableTo(x)
#endif
#ifndef __xcount
#define __xcount(size)
#endif
#ifndef __xcount_opt
#define __xcount_opt(x)
#endif
#ifndef _At_
#define _At_(target, annos)
#endif
#ifndef _Deref_post_bytecap_
#define _Deref_post_bytecap_(x)
#endif
#ifndef _Deref_post_bytecount_
#define _Deref_post_bytecount_(x)
#endif
#ifndef _Deref_post_cap_
#define _Deref_post_cap_(x)
#endif
#ifndef _Deref_post_count_
#define _Deref_post_count_(x)
#endif
#ifndef _Deref_post_opt_bytecap_
#define _Deref_post_opt_bytecap_(x)
#endif
#ifndef _Deref_post_opt_bytecount_
#define _Deref_post_opt_bytecount_(x)
#endif
#ifndef _Deref_post_opt_cap_
#define _Deref_post_opt_cap_(x)
#endif
#ifndef _Deref_post_opt_count_
#define _Deref_post_opt_count_(x)
#endif
#ifndef _In_bytecount_
#define _In_bytecount_(x)
#endif
#ifndef _In_count_
#define _In_count_(x)
#endif
#ifndef _In_opt_bytecount_
#define _In_opt_bytecount_(x)
#endif
#ifndef _In_opt_count_
#define _In_opt_count_(x)
#endif
#ifndef _Out_bytecap_
#define _Out_bytecap_(x)
#endif
#ifndef _Out_cap_
#define _Out_cap_(x)
#endif
#ifndef _Out_opt_bytecap_
#define _Out_opt_bytecap_(x)
#endif
#ifndef _Out_opt_cap_
#define _Out_opt_cap_(x)
#endif
#ifndef _Outptr_opt_result_buffer_
#define _Outptr_opt_result_buffer_(x)
#endif
#ifndef _Outptr_opt_result_buffer_all_
#define _Outptr_opt_result_buffer_all_(x)
#endif
#ifndef _Outptr_opt_result_buffer_all_maybenull_
#define _Outptr_opt_result_buffer_all_maybenull_(x)
#endif
#ifndef _Outptr_opt_result_buffer_maybenull_
#define _Outptr_opt_result_buffer_maybenull_(x)
#endif
#ifndef _Outptr_opt_result_buffer_to_
#define _Outptr_opt_result_buffer_to_(x1, x2)
#endif
#ifndef _Outptr_opt_result_buffer_to_maybenull_
#define _Outptr_opt_result_buffer_to_maybenull_(x1, x2)
#endif
#ifndef _Outptr_opt_result_bytebuffer_
#define _Outptr_opt_result_bytebuffer_(x)
#endif
#ifndef _Outptr_opt_result_bytebuffer_all_
#define _Outptr_opt_result_bytebuffer_all_(x)
#endif
#ifndef _Outptr_opt_result_bytebuffer_all_maybenull_
#define _Outptr_opt_result_bytebuffer_all_maybenull_(x)
#endif
#ifndef _Outptr_opt_result_bytebuffer_maybenull_
#define _Outptr_opt_result_bytebuffer_maybenull_(x)
#endif
#ifndef _Outptr_opt_result_bytebuffer_to_
#define _Outptr_opt_result_bytebuffer_to_(x1, x2)
#endif
#ifndef _Outptr_opt_result_bytebuffer_to_maybenull_
#define _Outptr_opt_result_bytebuffer_to_maybenull_(x1, x2)
#endif
#ifndef _Outptr_result_buffer_
#define _Outptr_result_buffer_(x)
#endif
#ifndef _Outptr_result_buffer_all_
#define _Outptr_result_buffer_all_(x)
#endif
#ifndef _Outptr_result_buffer_all_maybenull_
#define _Outptr_result_buffer_all_maybenull_(x)
#endif
#ifndef _Outptr_result_buffer_maybenull_
#define _Outptr_result_buffer_maybenull_(x)
#endif
#ifndef _Outptr_result_buffer_to_
#define _Outptr_result_buffer_to_(x1, x2)
#endif
#ifndef _Outptr_result_buffer_to_maybenull_
#define _Outptr_result_buffer_to_maybenull_(x1, x2)
#endif
#ifndef _Outptr_result_bytebuffer_
#define _Outptr_result_bytebuffer_(x)
#endif
#ifndef _Outptr_result_bytebuffer_all_
#define _Outptr_result_bytebuffer_all_(x)
#endif
#ifndef _Outptr_result_bytebuffer_all_maybenull_
#define _Outptr_result_bytebuffer_all_maybenull_(x)
#endif
#ifndef _Outptr_result_bytebuffer_maybenull_
#define _Outptr_result_bytebuffer_maybenull_(x)
#endif
#ifndef _Outptr_result_bytebuffer_to_
#define _Outptr_result_bytebuffer_to_(x1, x2)
#endif
#ifndef _Outptr_result_bytebuffer_to_maybenull_
#define _Outptr_result_bytebuffer_to_maybenull_(x1, x2)
#endif
#ifndef _When_
#define _When_(expr, annos)
#endif

/* ---- Legacy names that the C and C++ libraries also use as identifiers: defined
 * only when SOFTNDK_SAL_LEGACY_NAMES is 1, i.e. after the system headers that use
 * them have been included (softndk_sal.h explains the arrangement). */
#if SOFTNDK_SAL_LEGACY_NAMES
#ifndef __bound
#define __bound
#endif
#ifndef __callback
#define __callback
#endif
#ifndef __in
#define __in
#endif
/* Not in C++: there __null is g++'s own null pointer constant (NULL). */
#ifndef __cplusplus
#ifndef __null
#define __null
#endif
#endif
#ifndef __out
#define __out
#endif
#ifndef __override
#define __override
#endif
#ifndef __pre
#define __pre
#endif
#ifndef __reserved
#define __reserved
#endif
#ifndef __valid
#define __valid
#endif
#endif /* SOFTNDK_SAL_LEGACY_NAMES */

#endif /* SOFTNDK_SPECSTRINGS_STRICT_H */
