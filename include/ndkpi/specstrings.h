/*
 * specstrings.h - SoftNDK user-mode stand-in for the WDK's specstrings.h: the annotations
 * that sal.h does not define - legacy ones (__deref_in_bcount(n), __analysis_noreturn,
 * __allocator, __bound, ...) and later SAL 2 ones (_Frees_ptr_, _User_on_(m),
 * _Accessible_bytes_(k, n), _Kernel_entry_, ...). As in the WDK it includes
 * sal.h first and then specstrings_strict.h and driverspecs.h, and ntdef.h includes it,
 * so every WDK header brings the whole annotation surface.
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
 * No opt-in and no include order is needed in C. In C++ the few legacy names that
 * libstdc++ uses as identifiers need SOFTNDK_LEGACY_SAL; see softndk_sal.h.
 */
#ifndef SOFTNDK_SPECSTRINGS_H
#define SOFTNDK_SPECSTRINGS_H

#include <sal.h>
#include <softndk_sal.h>

/* ---- 39 object-like (no arguments). */
#ifndef __allocator
#define __allocator
#endif
#ifndef __analysis_noreturn
#define __analysis_noreturn
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
#ifndef __deref_nonvolatile
#define __deref_nonvolatile
#endif
#ifndef __deref_opt_in
#define __deref_opt_in
#endif
#ifndef __deref_opt_in_opt
#define __deref_opt_in_opt
#endif
#ifndef __deref_out_bound
#define __deref_out_bound
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
#ifndef __field_encoded_array
#define __field_encoded_array
#endif
#ifndef __field_encoded_pointer
#define __field_encoded_pointer
#endif
#ifndef __field_nullterminated
#define __field_nullterminated
#endif
#ifndef __gdi_entry
#define __gdi_entry
#endif
#ifndef __in_bound
#define __in_bound
#endif
#ifndef __in_opt_z
#define __in_opt_z
#endif
#ifndef __kernel_entry
#define __kernel_entry
#endif
#ifndef __nonvolatile
#define __nonvolatile
#endif
#ifndef __nullnullterminated
#define __nullnullterminated
#endif
#ifndef __out_bound
#define __out_bound
#endif
#ifndef __possibly_notnullterminated
#define __possibly_notnullterminated
#endif
#ifndef __post_invalid
#define __post_invalid
#endif
#ifndef __post_nullnullterminated
#define __post_nullnullterminated
#endif
#ifndef __rpc_entry
#define __rpc_entry
#endif
#ifndef __valueUndefined
#define __valueUndefined
#endif
#ifndef __volatile
#define __volatile
#endif
#ifndef _Flt_CompletionContext_Outptr_
#define _Flt_CompletionContext_Outptr_
#endif
#ifndef _Flt_ConnectionCookie_Outptr_
#define _Flt_ConnectionCookie_Outptr_
#endif
#ifndef _Frees_ptr_
#define _Frees_ptr_
#endif
#ifndef _Frees_ptr_opt_
#define _Frees_ptr_opt_
#endif
#ifndef _Kernel_entry_
#define _Kernel_entry_
#endif
#ifndef _Kernel_entry_always_
#define _Kernel_entry_always_
#endif
#ifndef _Post_equals_last_error_
#define _Post_equals_last_error_
#endif
#ifndef _Translates_last_error_to_HRESULT_
#define _Translates_last_error_to_HRESULT_
#endif
#ifndef _Unreferenced_parameter_
#define _Unreferenced_parameter_
#endif
#ifndef _User_
#define _User_
#endif
#ifndef _User_always_
#define _User_always_
#endif

/* ---- 137 function-like. */
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
#ifndef __class_code_content
#define __class_code_content(x)
#endif
#ifndef __deallocate
#define __deallocate(x)
#endif
#ifndef __deallocate_opt
#define __deallocate_opt(x)
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
#ifndef __deref_inout_ecount_iterator
#define __deref_inout_ecount_iterator(x1, x2)
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
#ifndef __deref_out_ecount_iterator
#define __deref_out_ecount_iterator(x1, x2)
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
#ifndef __failure
#define __failure(x)
#endif
#ifndef __failureDefault
#define __failureDefault(x)
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
#ifndef __in_data_source
#define __in_data_source(x)
#endif
#ifndef __in_ecount_or_z
#define __in_ecount_or_z(x)
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
#ifndef __out_data_source
#define __out_data_source(x)
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
#ifndef __post_bcount
#define __post_bcount(x)
#endif
#ifndef __post_ecount
#define __post_ecount(x)
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
#ifndef __source_code_content
#define __source_code_content(x)
#endif
#ifndef __static_context
#define __static_context(x1, x2)
#endif
#ifndef __struct_bcount
#define __struct_bcount(x)
#endif
#ifndef __struct_xcount
#define __struct_xcount(x)
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
#ifndef __xcount
#define __xcount(size)
#endif
#ifndef __xcount_opt
#define __xcount_opt(x)
#endif
#ifndef _Accessible_bytes_
#define _Accessible_bytes_(x1, x2)
#endif
#ifndef _Accessible_bytes_when_
#define _Accessible_bytes_when_(x1, x2, x3)
#endif
#ifndef _In_NLS_string_
#define _In_NLS_string_(x)
#endif
#ifndef _Memory_origin_
#define _Memory_origin_(x)
#endif
#ifndef _Memory_origin_when_
#define _Memory_origin_when_(x1, x2)
#endif
#ifndef _Pre_accessible_bytes_
#define _Pre_accessible_bytes_(x1, x2)
#endif
#ifndef _Pre_accessible_bytes_when_
#define _Pre_accessible_bytes_when_(x1, x2, x3)
#endif
#ifndef _Reallocation_function_
#define _Reallocation_function_(x1, x2, x3)
#endif
#ifndef _Ret_reallocated_bytes_
#define _Ret_reallocated_bytes_(x1, x2)
#endif
#ifndef _Translates_NTSTATUS_to_HRESULT_
#define _Translates_NTSTATUS_to_HRESULT_(x)
#endif
#ifndef _Translates_Win32_to_HRESULT_
#define _Translates_Win32_to_HRESULT_(x)
#endif
#ifndef _User_always_and_needs_probe_on_
#define _User_always_and_needs_probe_on_(x)
#endif
#ifndef _User_on_
#define _User_on_(x)
#endif
#ifndef _Writes_and_advances_ptr_
#define _Writes_and_advances_ptr_(x)
#endif
#ifndef _Writes_bytes_and_advances_ptr_
#define _Writes_bytes_and_advances_ptr_(x)
#endif

/* ---- Legacy names that the C and C++ libraries also use as identifiers: defined
 * only when SOFTNDK_SAL_LEGACY_NAMES is 1, i.e. after the system headers that use
 * them have been included (softndk_sal.h explains the arrangement). */
#if SOFTNDK_SAL_LEGACY_NAMES
#ifndef __bound
#define __bound
#endif
#endif /* SOFTNDK_SAL_LEGACY_NAMES */

#include <driverspecs.h>
#include <specstrings_strict.h>

#endif /* SOFTNDK_SPECSTRINGS_H */
