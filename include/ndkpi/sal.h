/*
 * sal.h - SoftNDK user-mode stand-in for the WDK's sal.h: the Source Annotation
 * Language, SAL 2 (_In_, _Out_writes_bytes_(n), _When_(c, a), _Success_(expr), ...)
 * and the SAL 1 names it also defines (__in, __out_ecount(n), __checkReturn, ...).
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
 * Nine SAL 1 names (__in, __out, __reserved, ...) are also identifiers in the C and
 * C++ libraries; they are defined in C always and in C++ when SOFTNDK_LEGACY_SAL is
 * defined, after the system headers that use them (softndk_sal.h explains why and
 * how). As in the WDK, sal.h ends by including concurrencysal.h.
 */
#ifndef SOFTNDK_SAL_H
#define SOFTNDK_SAL_H

#include <softndk_sal.h>

/* ---- 197 object-like (no arguments). */
#ifndef __checkReturn
#define __checkReturn
#endif
#ifndef __deref
#define __deref
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
#ifndef __deref_opt_out_z
#define __deref_opt_out_z
#endif
#ifndef __deref_opt_out_z_opt
#define __deref_opt_out_z_opt
#endif
#ifndef __deref_out
#define __deref_out
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
#ifndef __exceptthat
#define __exceptthat
#endif
#ifndef __fallthrough
#define __fallthrough
#endif
#ifndef __format_string
#define __format_string
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
#ifndef __maybenull
#define __maybenull
#endif
#ifndef __maybereadonly
#define __maybereadonly
#endif
#ifndef __maybevalid
#define __maybevalid
#endif
#ifndef __nothrow
#define __nothrow
#endif
#ifndef __notnull
#define __notnull
#endif
#ifndef __notreadonly
#define __notreadonly
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
#ifndef __out_z_opt
#define __out_z_opt
#endif
#ifndef __post
#define __post
#endif
#ifndef __post_deref_except_maybenull
#define __post_deref_except_maybenull
#endif
#ifndef __post_except_maybenull
#define __post_except_maybenull
#endif
#ifndef __pre_deref_except_maybenull
#define __pre_deref_except_maybenull
#endif
#ifndef __pre_except_maybenull
#define __pre_except_maybenull
#endif
#ifndef __readonly
#define __readonly
#endif
#ifndef __refparam
#define __refparam
#endif
#ifndef __specstrings
#define __specstrings
#endif
#ifndef __useHeader
#define __useHeader
#endif
#ifndef _Analysis_noreturn_
#define _Analysis_noreturn_
#endif
#ifndef _Check_return_
#define _Check_return_
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
#ifndef _Const_
#define _Const_
#endif
#ifndef _Deref2_pre_readonly_
#define _Deref2_pre_readonly_
#endif
#ifndef _Deref_in_bound_
#define _Deref_in_bound_
#endif
#ifndef _Deref_inout_bound_
#define _Deref_inout_bound_
#endif
#ifndef _Deref_inout_z_
#define _Deref_inout_z_
#endif
#ifndef _Deref_opt_out_
#define _Deref_opt_out_
#endif
#ifndef _Deref_opt_out_opt_
#define _Deref_opt_out_opt_
#endif
#ifndef _Deref_opt_out_opt_z_
#define _Deref_opt_out_opt_z_
#endif
#ifndef _Deref_opt_out_z_
#define _Deref_opt_out_z_
#endif
#ifndef _Deref_out_
#define _Deref_out_
#endif
#ifndef _Deref_out_bound_
#define _Deref_out_bound_
#endif
#ifndef _Deref_out_opt_
#define _Deref_out_opt_
#endif
#ifndef _Deref_out_opt_z_
#define _Deref_out_opt_z_
#endif
#ifndef _Deref_out_z_
#define _Deref_out_z_
#endif
#ifndef _Deref_post_maybenull_
#define _Deref_post_maybenull_
#endif
#ifndef _Deref_post_notnull_
#define _Deref_post_notnull_
#endif
#ifndef _Deref_post_null_
#define _Deref_post_null_
#endif
#ifndef _Deref_post_opt_valid_
#define _Deref_post_opt_valid_
#endif
#ifndef _Deref_post_opt_z_
#define _Deref_post_opt_z_
#endif
#ifndef _Deref_post_valid_
#define _Deref_post_valid_
#endif
#ifndef _Deref_post_z_
#define _Deref_post_z_
#endif
#ifndef _Deref_pre_invalid_
#define _Deref_pre_invalid_
#endif
#ifndef _Deref_pre_maybenull_
#define _Deref_pre_maybenull_
#endif
#ifndef _Deref_pre_notnull_
#define _Deref_pre_notnull_
#endif
#ifndef _Deref_pre_null_
#define _Deref_pre_null_
#endif
#ifndef _Deref_pre_opt_valid_
#define _Deref_pre_opt_valid_
#endif
#ifndef _Deref_pre_opt_z_
#define _Deref_pre_opt_z_
#endif
#ifndef _Deref_pre_readonly_
#define _Deref_pre_readonly_
#endif
#ifndef _Deref_pre_valid_
#define _Deref_pre_valid_
#endif
#ifndef _Deref_pre_writeonly_
#define _Deref_pre_writeonly_
#endif
#ifndef _Deref_pre_z_
#define _Deref_pre_z_
#endif
#ifndef _Deref_prepost_opt_valid_
#define _Deref_prepost_opt_valid_
#endif
#ifndef _Deref_prepost_opt_z_
#define _Deref_prepost_opt_z_
#endif
#ifndef _Deref_prepost_valid_
#define _Deref_prepost_valid_
#endif
#ifndef _Deref_prepost_z_
#define _Deref_prepost_z_
#endif
#ifndef _Deref_ret_bound_
#define _Deref_ret_bound_
#endif
#ifndef _Deref_ret_opt_z_
#define _Deref_ret_opt_z_
#endif
#ifndef _Deref_ret_z_
#define _Deref_ret_z_
#endif
#ifndef _Enum_is_bitflag_
#define _Enum_is_bitflag_
#endif
#ifndef _Field_z_
#define _Field_z_
#endif
#ifndef _In_
#define _In_
#endif
#ifndef _In_bound_
#define _In_bound_
#endif
#ifndef _In_opt_
#define _In_opt_
#endif
#ifndef _In_opt_z_
#define _In_opt_z_
#endif
#ifndef _In_z_
#define _In_z_
#endif
#ifndef _Inout_
#define _Inout_
#endif
#ifndef _Inout_opt_
#define _Inout_opt_
#endif
#ifndef _Inout_opt_z_
#define _Inout_opt_z_
#endif
#ifndef _Inout_z_
#define _Inout_z_
#endif
#ifndef _Literal_
#define _Literal_
#endif
#ifndef _Maybe_raises_SEH_exception_
#define _Maybe_raises_SEH_exception_
#endif
#ifndef _Maybenull_
#define _Maybenull_
#endif
#ifndef _Maybevalid_
#define _Maybevalid_
#endif
#ifndef _Must_inspect_result_
#define _Must_inspect_result_
#endif
#ifndef _Notliteral_
#define _Notliteral_
#endif
#ifndef _Notnull_
#define _Notnull_
#endif
#ifndef _Notref_
#define _Notref_
#endif
#ifndef _Notvalid_
#define _Notvalid_
#endif
#ifndef _Null_
#define _Null_
#endif
#ifndef _Null_terminated_
#define _Null_terminated_
#endif
#ifndef _NullNull_terminated_
#define _NullNull_terminated_
#endif
#ifndef _Out_
#define _Out_
#endif
#ifndef _Out_bound_
#define _Out_bound_
#endif
#ifndef _Out_opt_
#define _Out_opt_
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
#ifndef _Outref_
#define _Outref_
#endif
#ifndef _Outref_result_maybenull_
#define _Outref_result_maybenull_
#endif
#ifndef _Outref_result_nullonfailure_
#define _Outref_result_nullonfailure_
#endif
#ifndef _Points_to_data_
#define _Points_to_data_
#endif
#ifndef _Post_
#define _Post_
#endif
#ifndef _Post_defensive_
#define _Post_defensive_
#endif
#ifndef _Post_invalid_
#define _Post_invalid_
#endif
#ifndef _Post_maybenull_
#define _Post_maybenull_
#endif
#ifndef _Post_maybez_
#define _Post_maybez_
#endif
#ifndef _Post_notnull_
#define _Post_notnull_
#endif
#ifndef _Post_null_
#define _Post_null_
#endif
#ifndef _Post_ptr_invalid_
#define _Post_ptr_invalid_
#endif
#ifndef _Post_valid_
#define _Post_valid_
#endif
#ifndef _Post_z_
#define _Post_z_
#endif
#ifndef _Pre_
#define _Pre_
#endif
#ifndef _Pre_cap_c_one_
#define _Pre_cap_c_one_
#endif
#ifndef _Pre_defensive_
#define _Pre_defensive_
#endif
#ifndef _Pre_invalid_
#define _Pre_invalid_
#endif
#ifndef _Pre_maybenull_
#define _Pre_maybenull_
#endif
#ifndef _Pre_notnull_
#define _Pre_notnull_
#endif
#ifndef _Pre_null_
#define _Pre_null_
#endif
#ifndef _Pre_opt_cap_c_one_
#define _Pre_opt_cap_c_one_
#endif
#ifndef _Pre_opt_valid_
#define _Pre_opt_valid_
#endif
#ifndef _Pre_opt_z_
#define _Pre_opt_z_
#endif
#ifndef _Pre_readonly_
#define _Pre_readonly_
#endif
#ifndef _Pre_unknown_
#define _Pre_unknown_
#endif
#ifndef _Pre_valid_
#define _Pre_valid_
#endif
#ifndef _Pre_writeonly_
#define _Pre_writeonly_
#endif
#ifndef _Pre_z_
#define _Pre_z_
#endif
#ifndef _Prepost_opt_valid_
#define _Prepost_opt_valid_
#endif
#ifndef _Prepost_opt_z_
#define _Prepost_opt_z_
#endif
#ifndef _Prepost_valid_
#define _Prepost_valid_
#endif
#ifndef _Prepost_z_
#define _Prepost_z_
#endif
#ifndef _Printf_format_string_
#define _Printf_format_string_
#endif
#ifndef _Published_
#define _Published_
#endif
#ifndef _Raises_SEH_exception_
#define _Raises_SEH_exception_
#endif
#ifndef _Reserved_
#define _Reserved_
#endif
#ifndef _Result_nullonfailure_
#define _Result_nullonfailure_
#endif
#ifndef _Result_zeroonfailure_
#define _Result_zeroonfailure_
#endif
#ifndef _Ret_
#define _Ret_
#endif
#ifndef _Ret_bound_
#define _Ret_bound_
#endif
#ifndef _Ret_maybenull_
#define _Ret_maybenull_
#endif
#ifndef _Ret_maybenull_z_
#define _Ret_maybenull_z_
#endif
#ifndef _Ret_notnull_
#define _Ret_notnull_
#endif
#ifndef _Ret_null_
#define _Ret_null_
#endif
#ifndef _Ret_opt_
#define _Ret_opt_
#endif
#ifndef _Ret_opt_valid_
#define _Ret_opt_valid_
#endif
#ifndef _Ret_opt_z_
#define _Ret_opt_z_
#endif
#ifndef _Ret_valid_
#define _Ret_valid_
#endif
#ifndef _Ret_z_
#define _Ret_z_
#endif
#ifndef _Scanf_format_string_
#define _Scanf_format_string_
#endif
#ifndef _Scanf_s_format_string_
#define _Scanf_s_format_string_
#endif
#ifndef _Strict_type_match_
#define _Strict_type_match_
#endif
#ifndef _Use_decl_annotations_
#define _Use_decl_annotations_
#endif
#ifndef _Valid_
#define _Valid_
#endif

/* ---- 673 function-like. */
#ifndef __analysis_assume
#define __analysis_assume(expr)
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
#ifndef __control_entrypoint
#define __control_entrypoint(category)
#endif
#ifndef __data_entrypoint
#define __data_entrypoint(category)
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
#ifndef __inexpressible_readableTo
#define __inexpressible_readableTo(x)
#endif
#ifndef __inexpressible_writableTo
#define __inexpressible_writableTo(x)
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
#ifndef __on_failure
#define __on_failure(x)
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
#ifndef __out_bcount_full_z
#define __out_bcount_full_z(x)
#endif
#ifndef __out_bcount_full_z_opt
#define __out_bcount_full_z_opt(x)
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
#ifndef __out_bcount_part_z
#define __out_bcount_part_z(x1, x2)
#endif
#ifndef __out_bcount_part_z_opt
#define __out_bcount_part_z_opt(x1, x2)
#endif
#ifndef __out_bcount_z
#define __out_bcount_z(size)
#endif
#ifndef __out_bcount_z_opt
#define __out_bcount_z_opt(size)
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
#ifndef __out_ecount_full_z
#define __out_ecount_full_z(x)
#endif
#ifndef __out_ecount_full_z_opt
#define __out_ecount_full_z_opt(x)
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
#ifndef __out_ecount_part_z
#define __out_ecount_part_z(x1, x2)
#endif
#ifndef __out_ecount_part_z_opt
#define __out_ecount_part_z_opt(x1, x2)
#endif
#ifndef __out_ecount_z
#define __out_ecount_z(size)
#endif
#ifndef __out_ecount_z_opt
#define __out_ecount_z_opt(size)
#endif
#ifndef __postcond
#define __postcond(x)
#endif
#ifndef __precond
#define __precond(x)
#endif
#ifndef __readableTo
#define __readableTo(x)
#endif
#ifndef __success
#define __success(expr)
#endif
#ifndef __typefix
#define __typefix(ctype)
#endif
#ifndef __writableTo
#define __writableTo(x)
#endif
#ifndef _Always_
#define _Always_(x)
#endif
#ifndef _Analysis_assume_
#define _Analysis_assume_(expr)
#endif
#ifndef _Analysis_assume_nullterminated_
#define _Analysis_assume_nullterminated_(x)
#endif
#ifndef _Analysis_mode_
#define _Analysis_mode_(x)
#endif
#ifndef _At_
#define _At_(target, annos)
#endif
#ifndef _At_buffer_
#define _At_buffer_(x1, x2, x3, x4)
#endif
#ifndef _Called_from_function_class_
#define _Called_from_function_class_(x)
#endif
#ifndef _Deref_in_range_
#define _Deref_in_range_(x1, x2)
#endif
#ifndef _Deref_inout_z_bytecap_c_
#define _Deref_inout_z_bytecap_c_(x)
#endif
#ifndef _Deref_inout_z_cap_c_
#define _Deref_inout_z_cap_c_(x)
#endif
#ifndef _Deref_out_range_
#define _Deref_out_range_(x1, x2)
#endif
#ifndef _Deref_out_z_bytecap_c_
#define _Deref_out_z_bytecap_c_(x)
#endif
#ifndef _Deref_out_z_cap_c_
#define _Deref_out_z_cap_c_(x)
#endif
#ifndef _Deref_post_bytecap_
#define _Deref_post_bytecap_(x)
#endif
#ifndef _Deref_post_bytecap_c_
#define _Deref_post_bytecap_c_(x)
#endif
#ifndef _Deref_post_bytecap_x_
#define _Deref_post_bytecap_x_(x)
#endif
#ifndef _Deref_post_bytecount_
#define _Deref_post_bytecount_(x)
#endif
#ifndef _Deref_post_bytecount_c_
#define _Deref_post_bytecount_c_(x)
#endif
#ifndef _Deref_post_bytecount_x_
#define _Deref_post_bytecount_x_(x)
#endif
#ifndef _Deref_post_cap_
#define _Deref_post_cap_(x)
#endif
#ifndef _Deref_post_cap_c_
#define _Deref_post_cap_c_(x)
#endif
#ifndef _Deref_post_cap_x_
#define _Deref_post_cap_x_(x)
#endif
#ifndef _Deref_post_count_
#define _Deref_post_count_(x)
#endif
#ifndef _Deref_post_count_c_
#define _Deref_post_count_c_(x)
#endif
#ifndef _Deref_post_count_x_
#define _Deref_post_count_x_(x)
#endif
#ifndef _Deref_post_opt_bytecap_
#define _Deref_post_opt_bytecap_(x)
#endif
#ifndef _Deref_post_opt_bytecap_c_
#define _Deref_post_opt_bytecap_c_(x)
#endif
#ifndef _Deref_post_opt_bytecap_x_
#define _Deref_post_opt_bytecap_x_(x)
#endif
#ifndef _Deref_post_opt_bytecount_
#define _Deref_post_opt_bytecount_(x)
#endif
#ifndef _Deref_post_opt_bytecount_c_
#define _Deref_post_opt_bytecount_c_(x)
#endif
#ifndef _Deref_post_opt_bytecount_x_
#define _Deref_post_opt_bytecount_x_(x)
#endif
#ifndef _Deref_post_opt_cap_
#define _Deref_post_opt_cap_(x)
#endif
#ifndef _Deref_post_opt_cap_c_
#define _Deref_post_opt_cap_c_(x)
#endif
#ifndef _Deref_post_opt_cap_x_
#define _Deref_post_opt_cap_x_(x)
#endif
#ifndef _Deref_post_opt_count_
#define _Deref_post_opt_count_(x)
#endif
#ifndef _Deref_post_opt_count_c_
#define _Deref_post_opt_count_c_(x)
#endif
#ifndef _Deref_post_opt_count_x_
#define _Deref_post_opt_count_x_(x)
#endif
#ifndef _Deref_post_opt_valid_bytecap_
#define _Deref_post_opt_valid_bytecap_(x)
#endif
#ifndef _Deref_post_opt_valid_bytecap_c_
#define _Deref_post_opt_valid_bytecap_c_(x)
#endif
#ifndef _Deref_post_opt_valid_bytecap_x_
#define _Deref_post_opt_valid_bytecap_x_(x)
#endif
#ifndef _Deref_post_opt_valid_cap_
#define _Deref_post_opt_valid_cap_(x)
#endif
#ifndef _Deref_post_opt_valid_cap_c_
#define _Deref_post_opt_valid_cap_c_(x)
#endif
#ifndef _Deref_post_opt_valid_cap_x_
#define _Deref_post_opt_valid_cap_x_(x)
#endif
#ifndef _Deref_post_opt_z_bytecap_
#define _Deref_post_opt_z_bytecap_(x)
#endif
#ifndef _Deref_post_opt_z_bytecap_c_
#define _Deref_post_opt_z_bytecap_c_(x)
#endif
#ifndef _Deref_post_opt_z_bytecap_x_
#define _Deref_post_opt_z_bytecap_x_(x)
#endif
#ifndef _Deref_post_opt_z_cap_
#define _Deref_post_opt_z_cap_(x)
#endif
#ifndef _Deref_post_opt_z_cap_c_
#define _Deref_post_opt_z_cap_c_(x)
#endif
#ifndef _Deref_post_opt_z_cap_x_
#define _Deref_post_opt_z_cap_x_(x)
#endif
#ifndef _Deref_post_valid_bytecap_
#define _Deref_post_valid_bytecap_(x)
#endif
#ifndef _Deref_post_valid_bytecap_c_
#define _Deref_post_valid_bytecap_c_(x)
#endif
#ifndef _Deref_post_valid_bytecap_x_
#define _Deref_post_valid_bytecap_x_(x)
#endif
#ifndef _Deref_post_valid_cap_
#define _Deref_post_valid_cap_(x)
#endif
#ifndef _Deref_post_valid_cap_c_
#define _Deref_post_valid_cap_c_(x)
#endif
#ifndef _Deref_post_valid_cap_x_
#define _Deref_post_valid_cap_x_(x)
#endif
#ifndef _Deref_post_z_bytecap_
#define _Deref_post_z_bytecap_(x)
#endif
#ifndef _Deref_post_z_bytecap_c_
#define _Deref_post_z_bytecap_c_(x)
#endif
#ifndef _Deref_post_z_bytecap_x_
#define _Deref_post_z_bytecap_x_(x)
#endif
#ifndef _Deref_post_z_cap_
#define _Deref_post_z_cap_(x)
#endif
#ifndef _Deref_post_z_cap_c_
#define _Deref_post_z_cap_c_(x)
#endif
#ifndef _Deref_post_z_cap_x_
#define _Deref_post_z_cap_x_(x)
#endif
#ifndef _Deref_pre_bytecap_
#define _Deref_pre_bytecap_(x)
#endif
#ifndef _Deref_pre_bytecap_c_
#define _Deref_pre_bytecap_c_(x)
#endif
#ifndef _Deref_pre_bytecap_x_
#define _Deref_pre_bytecap_x_(x)
#endif
#ifndef _Deref_pre_bytecount_
#define _Deref_pre_bytecount_(x)
#endif
#ifndef _Deref_pre_bytecount_c_
#define _Deref_pre_bytecount_c_(x)
#endif
#ifndef _Deref_pre_bytecount_x_
#define _Deref_pre_bytecount_x_(x)
#endif
#ifndef _Deref_pre_cap_
#define _Deref_pre_cap_(x)
#endif
#ifndef _Deref_pre_cap_c_
#define _Deref_pre_cap_c_(x)
#endif
#ifndef _Deref_pre_cap_x_
#define _Deref_pre_cap_x_(x)
#endif
#ifndef _Deref_pre_count_
#define _Deref_pre_count_(x)
#endif
#ifndef _Deref_pre_count_c_
#define _Deref_pre_count_c_(x)
#endif
#ifndef _Deref_pre_count_x_
#define _Deref_pre_count_x_(x)
#endif
#ifndef _Deref_pre_opt_bytecap_
#define _Deref_pre_opt_bytecap_(x)
#endif
#ifndef _Deref_pre_opt_bytecap_c_
#define _Deref_pre_opt_bytecap_c_(x)
#endif
#ifndef _Deref_pre_opt_bytecap_x_
#define _Deref_pre_opt_bytecap_x_(x)
#endif
#ifndef _Deref_pre_opt_bytecount_
#define _Deref_pre_opt_bytecount_(x)
#endif
#ifndef _Deref_pre_opt_bytecount_c_
#define _Deref_pre_opt_bytecount_c_(x)
#endif
#ifndef _Deref_pre_opt_bytecount_x_
#define _Deref_pre_opt_bytecount_x_(x)
#endif
#ifndef _Deref_pre_opt_cap_
#define _Deref_pre_opt_cap_(x)
#endif
#ifndef _Deref_pre_opt_cap_c_
#define _Deref_pre_opt_cap_c_(x)
#endif
#ifndef _Deref_pre_opt_cap_x_
#define _Deref_pre_opt_cap_x_(x)
#endif
#ifndef _Deref_pre_opt_count_
#define _Deref_pre_opt_count_(x)
#endif
#ifndef _Deref_pre_opt_count_c_
#define _Deref_pre_opt_count_c_(x)
#endif
#ifndef _Deref_pre_opt_count_x_
#define _Deref_pre_opt_count_x_(x)
#endif
#ifndef _Deref_pre_opt_valid_bytecap_
#define _Deref_pre_opt_valid_bytecap_(x)
#endif
#ifndef _Deref_pre_opt_valid_bytecap_c_
#define _Deref_pre_opt_valid_bytecap_c_(x)
#endif
#ifndef _Deref_pre_opt_valid_bytecap_x_
#define _Deref_pre_opt_valid_bytecap_x_(x)
#endif
#ifndef _Deref_pre_opt_valid_cap_
#define _Deref_pre_opt_valid_cap_(x)
#endif
#ifndef _Deref_pre_opt_valid_cap_c_
#define _Deref_pre_opt_valid_cap_c_(x)
#endif
#ifndef _Deref_pre_opt_valid_cap_x_
#define _Deref_pre_opt_valid_cap_x_(x)
#endif
#ifndef _Deref_pre_opt_z_bytecap_
#define _Deref_pre_opt_z_bytecap_(x)
#endif
#ifndef _Deref_pre_opt_z_bytecap_c_
#define _Deref_pre_opt_z_bytecap_c_(x)
#endif
#ifndef _Deref_pre_opt_z_bytecap_x_
#define _Deref_pre_opt_z_bytecap_x_(x)
#endif
#ifndef _Deref_pre_opt_z_cap_
#define _Deref_pre_opt_z_cap_(x)
#endif
#ifndef _Deref_pre_opt_z_cap_c_
#define _Deref_pre_opt_z_cap_c_(x)
#endif
#ifndef _Deref_pre_opt_z_cap_x_
#define _Deref_pre_opt_z_cap_x_(x)
#endif
#ifndef _Deref_pre_valid_bytecap_
#define _Deref_pre_valid_bytecap_(x)
#endif
#ifndef _Deref_pre_valid_bytecap_c_
#define _Deref_pre_valid_bytecap_c_(x)
#endif
#ifndef _Deref_pre_valid_bytecap_x_
#define _Deref_pre_valid_bytecap_x_(x)
#endif
#ifndef _Deref_pre_valid_cap_
#define _Deref_pre_valid_cap_(x)
#endif
#ifndef _Deref_pre_valid_cap_c_
#define _Deref_pre_valid_cap_c_(x)
#endif
#ifndef _Deref_pre_valid_cap_x_
#define _Deref_pre_valid_cap_x_(x)
#endif
#ifndef _Deref_pre_z_bytecap_
#define _Deref_pre_z_bytecap_(x)
#endif
#ifndef _Deref_pre_z_bytecap_c_
#define _Deref_pre_z_bytecap_c_(x)
#endif
#ifndef _Deref_pre_z_bytecap_x_
#define _Deref_pre_z_bytecap_x_(x)
#endif
#ifndef _Deref_pre_z_cap_
#define _Deref_pre_z_cap_(x)
#endif
#ifndef _Deref_pre_z_cap_c_
#define _Deref_pre_z_cap_c_(x)
#endif
#ifndef _Deref_pre_z_cap_x_
#define _Deref_pre_z_cap_x_(x)
#endif
#ifndef _Deref_prepost_bytecap_
#define _Deref_prepost_bytecap_(x)
#endif
#ifndef _Deref_prepost_bytecap_x_
#define _Deref_prepost_bytecap_x_(x)
#endif
#ifndef _Deref_prepost_bytecount_
#define _Deref_prepost_bytecount_(x)
#endif
#ifndef _Deref_prepost_bytecount_x_
#define _Deref_prepost_bytecount_x_(x)
#endif
#ifndef _Deref_prepost_cap_
#define _Deref_prepost_cap_(x)
#endif
#ifndef _Deref_prepost_cap_x_
#define _Deref_prepost_cap_x_(x)
#endif
#ifndef _Deref_prepost_count_
#define _Deref_prepost_count_(x)
#endif
#ifndef _Deref_prepost_count_x_
#define _Deref_prepost_count_x_(x)
#endif
#ifndef _Deref_prepost_opt_bytecap_
#define _Deref_prepost_opt_bytecap_(x)
#endif
#ifndef _Deref_prepost_opt_bytecap_x_
#define _Deref_prepost_opt_bytecap_x_(x)
#endif
#ifndef _Deref_prepost_opt_bytecount_
#define _Deref_prepost_opt_bytecount_(x)
#endif
#ifndef _Deref_prepost_opt_bytecount_x_
#define _Deref_prepost_opt_bytecount_x_(x)
#endif
#ifndef _Deref_prepost_opt_cap_
#define _Deref_prepost_opt_cap_(x)
#endif
#ifndef _Deref_prepost_opt_cap_x_
#define _Deref_prepost_opt_cap_x_(x)
#endif
#ifndef _Deref_prepost_opt_count_
#define _Deref_prepost_opt_count_(x)
#endif
#ifndef _Deref_prepost_opt_count_x_
#define _Deref_prepost_opt_count_x_(x)
#endif
#ifndef _Deref_prepost_opt_valid_bytecap_
#define _Deref_prepost_opt_valid_bytecap_(x)
#endif
#ifndef _Deref_prepost_opt_valid_bytecap_x_
#define _Deref_prepost_opt_valid_bytecap_x_(x)
#endif
#ifndef _Deref_prepost_opt_valid_cap_
#define _Deref_prepost_opt_valid_cap_(x)
#endif
#ifndef _Deref_prepost_opt_valid_cap_x_
#define _Deref_prepost_opt_valid_cap_x_(x)
#endif
#ifndef _Deref_prepost_opt_z_bytecap_
#define _Deref_prepost_opt_z_bytecap_(x)
#endif
#ifndef _Deref_prepost_opt_z_cap_
#define _Deref_prepost_opt_z_cap_(x)
#endif
#ifndef _Deref_prepost_valid_bytecap_
#define _Deref_prepost_valid_bytecap_(x)
#endif
#ifndef _Deref_prepost_valid_bytecap_x_
#define _Deref_prepost_valid_bytecap_x_(x)
#endif
#ifndef _Deref_prepost_valid_cap_
#define _Deref_prepost_valid_cap_(x)
#endif
#ifndef _Deref_prepost_valid_cap_x_
#define _Deref_prepost_valid_cap_x_(x)
#endif
#ifndef _Deref_prepost_z_bytecap_
#define _Deref_prepost_z_bytecap_(x)
#endif
#ifndef _Deref_prepost_z_cap_
#define _Deref_prepost_z_cap_(x)
#endif
#ifndef _Deref_ret_range_
#define _Deref_ret_range_(x1, x2)
#endif
#ifndef _Field_range_
#define _Field_range_(x1, x2)
#endif
#ifndef _Field_size_
#define _Field_size_(n)
#endif
#ifndef _Field_size_bytes_
#define _Field_size_bytes_(n)
#endif
#ifndef _Field_size_bytes_full_
#define _Field_size_bytes_full_(x)
#endif
#ifndef _Field_size_bytes_full_opt_
#define _Field_size_bytes_full_opt_(x)
#endif
#ifndef _Field_size_bytes_opt_
#define _Field_size_bytes_opt_(x)
#endif
#ifndef _Field_size_bytes_part_
#define _Field_size_bytes_part_(x1, x2)
#endif
#ifndef _Field_size_bytes_part_opt_
#define _Field_size_bytes_part_opt_(x1, x2)
#endif
#ifndef _Field_size_full_
#define _Field_size_full_(x)
#endif
#ifndef _Field_size_full_opt_
#define _Field_size_full_opt_(x)
#endif
#ifndef _Field_size_opt_
#define _Field_size_opt_(n)
#endif
#ifndef _Field_size_part_
#define _Field_size_part_(x1, x2)
#endif
#ifndef _Field_size_part_opt_
#define _Field_size_part_opt_(x1, x2)
#endif
#ifndef _Function_class_
#define _Function_class_(name)
#endif
#ifndef _Group_
#define _Group_(x)
#endif
#ifndef _In_bytecount_
#define _In_bytecount_(x)
#endif
#ifndef _In_bytecount_c_
#define _In_bytecount_c_(x)
#endif
#ifndef _In_bytecount_x_
#define _In_bytecount_x_(x)
#endif
#ifndef _In_count_
#define _In_count_(x)
#endif
#ifndef _In_count_c_
#define _In_count_c_(x)
#endif
#ifndef _In_count_x_
#define _In_count_x_(x)
#endif
#ifndef _In_defensive_
#define _In_defensive_(x)
#endif
#ifndef _In_function_class_
#define _In_function_class_(x)
#endif
#ifndef _In_opt_bytecount_
#define _In_opt_bytecount_(x)
#endif
#ifndef _In_opt_bytecount_c_
#define _In_opt_bytecount_c_(x)
#endif
#ifndef _In_opt_bytecount_x_
#define _In_opt_bytecount_x_(x)
#endif
#ifndef _In_opt_count_
#define _In_opt_count_(x)
#endif
#ifndef _In_opt_count_c_
#define _In_opt_count_c_(x)
#endif
#ifndef _In_opt_count_x_
#define _In_opt_count_x_(x)
#endif
#ifndef _In_opt_ptrdiff_count_
#define _In_opt_ptrdiff_count_(x)
#endif
#ifndef _In_opt_z_bytecount_
#define _In_opt_z_bytecount_(x)
#endif
#ifndef _In_opt_z_bytecount_c_
#define _In_opt_z_bytecount_c_(x)
#endif
#ifndef _In_opt_z_count_
#define _In_opt_z_count_(x)
#endif
#ifndef _In_opt_z_count_c_
#define _In_opt_z_count_c_(x)
#endif
#ifndef _In_ptrdiff_count_
#define _In_ptrdiff_count_(x)
#endif
#ifndef _In_range_
#define _In_range_(x1, x2)
#endif
#ifndef _In_reads_
#define _In_reads_(n)
#endif
#ifndef _In_reads_bytes_
#define _In_reads_bytes_(n)
#endif
#ifndef _In_reads_bytes_opt_
#define _In_reads_bytes_opt_(n)
#endif
#ifndef _In_reads_opt_
#define _In_reads_opt_(n)
#endif
#ifndef _In_reads_opt_z_
#define _In_reads_opt_z_(x)
#endif
#ifndef _In_reads_or_z_
#define _In_reads_or_z_(x)
#endif
#ifndef _In_reads_or_z_opt_
#define _In_reads_or_z_opt_(x)
#endif
#ifndef _In_reads_to_ptr_
#define _In_reads_to_ptr_(x)
#endif
#ifndef _In_reads_to_ptr_opt_
#define _In_reads_to_ptr_opt_(x)
#endif
#ifndef _In_reads_to_ptr_opt_z_
#define _In_reads_to_ptr_opt_z_(x)
#endif
#ifndef _In_reads_to_ptr_z_
#define _In_reads_to_ptr_z_(x)
#endif
#ifndef _In_reads_z_
#define _In_reads_z_(x)
#endif
#ifndef _In_z_bytecount_
#define _In_z_bytecount_(x)
#endif
#ifndef _In_z_bytecount_c_
#define _In_z_bytecount_c_(x)
#endif
#ifndef _In_z_count_
#define _In_z_count_(x)
#endif
#ifndef _In_z_count_c_
#define _In_z_count_c_(x)
#endif
#ifndef _Inout_bytecap_
#define _Inout_bytecap_(x)
#endif
#ifndef _Inout_bytecap_c_
#define _Inout_bytecap_c_(x)
#endif
#ifndef _Inout_bytecap_x_
#define _Inout_bytecap_x_(x)
#endif
#ifndef _Inout_bytecount_
#define _Inout_bytecount_(x)
#endif
#ifndef _Inout_bytecount_c_
#define _Inout_bytecount_c_(x)
#endif
#ifndef _Inout_bytecount_x_
#define _Inout_bytecount_x_(x)
#endif
#ifndef _Inout_cap_
#define _Inout_cap_(x)
#endif
#ifndef _Inout_cap_c_
#define _Inout_cap_c_(x)
#endif
#ifndef _Inout_cap_x_
#define _Inout_cap_x_(x)
#endif
#ifndef _Inout_count_
#define _Inout_count_(x)
#endif
#ifndef _Inout_count_c_
#define _Inout_count_c_(x)
#endif
#ifndef _Inout_count_x_
#define _Inout_count_x_(x)
#endif
#ifndef _Inout_defensive_
#define _Inout_defensive_(x)
#endif
#ifndef _Inout_opt_bytecap_
#define _Inout_opt_bytecap_(x)
#endif
#ifndef _Inout_opt_bytecap_c_
#define _Inout_opt_bytecap_c_(x)
#endif
#ifndef _Inout_opt_bytecap_x_
#define _Inout_opt_bytecap_x_(x)
#endif
#ifndef _Inout_opt_bytecount_
#define _Inout_opt_bytecount_(x)
#endif
#ifndef _Inout_opt_bytecount_c_
#define _Inout_opt_bytecount_c_(x)
#endif
#ifndef _Inout_opt_bytecount_x_
#define _Inout_opt_bytecount_x_(x)
#endif
#ifndef _Inout_opt_cap_
#define _Inout_opt_cap_(x)
#endif
#ifndef _Inout_opt_cap_c_
#define _Inout_opt_cap_c_(x)
#endif
#ifndef _Inout_opt_cap_x_
#define _Inout_opt_cap_x_(x)
#endif
#ifndef _Inout_opt_count_
#define _Inout_opt_count_(x)
#endif
#ifndef _Inout_opt_count_c_
#define _Inout_opt_count_c_(x)
#endif
#ifndef _Inout_opt_count_x_
#define _Inout_opt_count_x_(x)
#endif
#ifndef _Inout_opt_ptrdiff_count_
#define _Inout_opt_ptrdiff_count_(x)
#endif
#ifndef _Inout_opt_z_bytecap_
#define _Inout_opt_z_bytecap_(x)
#endif
#ifndef _Inout_opt_z_bytecap_c_
#define _Inout_opt_z_bytecap_c_(x)
#endif
#ifndef _Inout_opt_z_bytecap_x_
#define _Inout_opt_z_bytecap_x_(x)
#endif
#ifndef _Inout_opt_z_bytecount_
#define _Inout_opt_z_bytecount_(x)
#endif
#ifndef _Inout_opt_z_bytecount_c_
#define _Inout_opt_z_bytecount_c_(x)
#endif
#ifndef _Inout_opt_z_cap_
#define _Inout_opt_z_cap_(x)
#endif
#ifndef _Inout_opt_z_cap_c_
#define _Inout_opt_z_cap_c_(x)
#endif
#ifndef _Inout_opt_z_cap_x_
#define _Inout_opt_z_cap_x_(x)
#endif
#ifndef _Inout_opt_z_count_
#define _Inout_opt_z_count_(x)
#endif
#ifndef _Inout_opt_z_count_c_
#define _Inout_opt_z_count_c_(x)
#endif
#ifndef _Inout_ptrdiff_count_
#define _Inout_ptrdiff_count_(x)
#endif
#ifndef _Inout_updates_
#define _Inout_updates_(n)
#endif
#ifndef _Inout_updates_all_
#define _Inout_updates_all_(x)
#endif
#ifndef _Inout_updates_all_opt_
#define _Inout_updates_all_opt_(x)
#endif
#ifndef _Inout_updates_bytes_
#define _Inout_updates_bytes_(n)
#endif
#ifndef _Inout_updates_bytes_all_
#define _Inout_updates_bytes_all_(x)
#endif
#ifndef _Inout_updates_bytes_all_opt_
#define _Inout_updates_bytes_all_opt_(x)
#endif
#ifndef _Inout_updates_bytes_opt_
#define _Inout_updates_bytes_opt_(x)
#endif
#ifndef _Inout_updates_bytes_to_
#define _Inout_updates_bytes_to_(x1, x2)
#endif
#ifndef _Inout_updates_bytes_to_opt_
#define _Inout_updates_bytes_to_opt_(x1, x2)
#endif
#ifndef _Inout_updates_opt_
#define _Inout_updates_opt_(x)
#endif
#ifndef _Inout_updates_opt_z_
#define _Inout_updates_opt_z_(x)
#endif
#ifndef _Inout_updates_to_
#define _Inout_updates_to_(x1, x2)
#endif
#ifndef _Inout_updates_to_opt_
#define _Inout_updates_to_opt_(x1, x2)
#endif
#ifndef _Inout_updates_z_
#define _Inout_updates_z_(x)
#endif
#ifndef _Inout_z_bytecap_
#define _Inout_z_bytecap_(x)
#endif
#ifndef _Inout_z_bytecap_c_
#define _Inout_z_bytecap_c_(x)
#endif
#ifndef _Inout_z_bytecap_x_
#define _Inout_z_bytecap_x_(x)
#endif
#ifndef _Inout_z_bytecount_
#define _Inout_z_bytecount_(x)
#endif
#ifndef _Inout_z_bytecount_c_
#define _Inout_z_bytecount_c_(x)
#endif
#ifndef _Inout_z_cap_
#define _Inout_z_cap_(x)
#endif
#ifndef _Inout_z_cap_c_
#define _Inout_z_cap_c_(x)
#endif
#ifndef _Inout_z_cap_x_
#define _Inout_z_cap_x_(x)
#endif
#ifndef _Inout_z_count_
#define _Inout_z_count_(x)
#endif
#ifndef _Inout_z_count_c_
#define _Inout_z_count_c_(x)
#endif
#ifndef _On_failure_
#define _On_failure_(x)
#endif
#ifndef _Out_bytecap_
#define _Out_bytecap_(x)
#endif
#ifndef _Out_bytecap_c_
#define _Out_bytecap_c_(x)
#endif
#ifndef _Out_bytecap_post_bytecount_
#define _Out_bytecap_post_bytecount_(x1, x2)
#endif
#ifndef _Out_bytecap_x_
#define _Out_bytecap_x_(x)
#endif
#ifndef _Out_bytecapcount_
#define _Out_bytecapcount_(x)
#endif
#ifndef _Out_bytecapcount_x_
#define _Out_bytecapcount_x_(x)
#endif
#ifndef _Out_cap_
#define _Out_cap_(x)
#endif
#ifndef _Out_cap_c_
#define _Out_cap_c_(x)
#endif
#ifndef _Out_cap_m_
#define _Out_cap_m_(x1, x2)
#endif
#ifndef _Out_cap_post_count_
#define _Out_cap_post_count_(x1, x2)
#endif
#ifndef _Out_cap_x_
#define _Out_cap_x_(x)
#endif
#ifndef _Out_capcount_
#define _Out_capcount_(x)
#endif
#ifndef _Out_capcount_x_
#define _Out_capcount_x_(x)
#endif
#ifndef _Out_defensive_
#define _Out_defensive_(x)
#endif
#ifndef _Out_opt_bytecap_
#define _Out_opt_bytecap_(x)
#endif
#ifndef _Out_opt_bytecap_c_
#define _Out_opt_bytecap_c_(x)
#endif
#ifndef _Out_opt_bytecap_post_bytecount_
#define _Out_opt_bytecap_post_bytecount_(x1, x2)
#endif
#ifndef _Out_opt_bytecap_x_
#define _Out_opt_bytecap_x_(x)
#endif
#ifndef _Out_opt_bytecapcount_
#define _Out_opt_bytecapcount_(x)
#endif
#ifndef _Out_opt_bytecapcount_x_
#define _Out_opt_bytecapcount_x_(x)
#endif
#ifndef _Out_opt_cap_
#define _Out_opt_cap_(x)
#endif
#ifndef _Out_opt_cap_c_
#define _Out_opt_cap_c_(x)
#endif
#ifndef _Out_opt_cap_m_
#define _Out_opt_cap_m_(x1, x2)
#endif
#ifndef _Out_opt_cap_post_count_
#define _Out_opt_cap_post_count_(x1, x2)
#endif
#ifndef _Out_opt_cap_x_
#define _Out_opt_cap_x_(x)
#endif
#ifndef _Out_opt_capcount_
#define _Out_opt_capcount_(x)
#endif
#ifndef _Out_opt_capcount_x_
#define _Out_opt_capcount_x_(x)
#endif
#ifndef _Out_opt_ptrdiff_cap_
#define _Out_opt_ptrdiff_cap_(x)
#endif
#ifndef _Out_opt_z_bytecap_
#define _Out_opt_z_bytecap_(x)
#endif
#ifndef _Out_opt_z_bytecap_c_
#define _Out_opt_z_bytecap_c_(x)
#endif
#ifndef _Out_opt_z_bytecap_post_bytecount_
#define _Out_opt_z_bytecap_post_bytecount_(x1, x2)
#endif
#ifndef _Out_opt_z_bytecap_x_
#define _Out_opt_z_bytecap_x_(x)
#endif
#ifndef _Out_opt_z_bytecapcount_
#define _Out_opt_z_bytecapcount_(x)
#endif
#ifndef _Out_opt_z_cap_
#define _Out_opt_z_cap_(x)
#endif
#ifndef _Out_opt_z_cap_c_
#define _Out_opt_z_cap_c_(x)
#endif
#ifndef _Out_opt_z_cap_m_
#define _Out_opt_z_cap_m_(x1, x2)
#endif
#ifndef _Out_opt_z_cap_post_count_
#define _Out_opt_z_cap_post_count_(x1, x2)
#endif
#ifndef _Out_opt_z_cap_x_
#define _Out_opt_z_cap_x_(x)
#endif
#ifndef _Out_opt_z_capcount_
#define _Out_opt_z_capcount_(x)
#endif
#ifndef _Out_ptrdiff_cap_
#define _Out_ptrdiff_cap_(x)
#endif
#ifndef _Out_range_
#define _Out_range_(x1, x2)
#endif
#ifndef _Out_writes_
#define _Out_writes_(n)
#endif
#ifndef _Out_writes_all_
#define _Out_writes_all_(x)
#endif
#ifndef _Out_writes_all_opt_
#define _Out_writes_all_opt_(x)
#endif
#ifndef _Out_writes_bytes_
#define _Out_writes_bytes_(n)
#endif
#ifndef _Out_writes_bytes_all_
#define _Out_writes_bytes_all_(n)
#endif
#ifndef _Out_writes_bytes_all_opt_
#define _Out_writes_bytes_all_opt_(x)
#endif
#ifndef _Out_writes_bytes_opt_
#define _Out_writes_bytes_opt_(n)
#endif
#ifndef _Out_writes_bytes_to_
#define _Out_writes_bytes_to_(n, c)
#endif
#ifndef _Out_writes_bytes_to_opt_
#define _Out_writes_bytes_to_opt_(n, c)
#endif
#ifndef _Out_writes_opt_
#define _Out_writes_opt_(n)
#endif
#ifndef _Out_writes_opt_z_
#define _Out_writes_opt_z_(x)
#endif
#ifndef _Out_writes_to_
#define _Out_writes_to_(n, c)
#endif
#ifndef _Out_writes_to_opt_
#define _Out_writes_to_opt_(n, c)
#endif
#ifndef _Out_writes_to_ptr_
#define _Out_writes_to_ptr_(x)
#endif
#ifndef _Out_writes_to_ptr_opt_
#define _Out_writes_to_ptr_opt_(x)
#endif
#ifndef _Out_writes_to_ptr_opt_z_
#define _Out_writes_to_ptr_opt_z_(x)
#endif
#ifndef _Out_writes_to_ptr_z_
#define _Out_writes_to_ptr_z_(x)
#endif
#ifndef _Out_writes_to_z_
#define _Out_writes_to_z_(n, c)
#endif
#ifndef _Out_writes_z_
#define _Out_writes_z_(n)
#endif
#ifndef _Out_z_bytecap_
#define _Out_z_bytecap_(x)
#endif
#ifndef _Out_z_bytecap_c_
#define _Out_z_bytecap_c_(x)
#endif
#ifndef _Out_z_bytecap_post_bytecount_
#define _Out_z_bytecap_post_bytecount_(x1, x2)
#endif
#ifndef _Out_z_bytecap_x_
#define _Out_z_bytecap_x_(x)
#endif
#ifndef _Out_z_bytecapcount_
#define _Out_z_bytecapcount_(x)
#endif
#ifndef _Out_z_cap_
#define _Out_z_cap_(x)
#endif
#ifndef _Out_z_cap_c_
#define _Out_z_cap_c_(x)
#endif
#ifndef _Out_z_cap_m_
#define _Out_z_cap_m_(x1, x2)
#endif
#ifndef _Out_z_cap_post_count_
#define _Out_z_cap_post_count_(x1, x2)
#endif
#ifndef _Out_z_cap_x_
#define _Out_z_cap_x_(x)
#endif
#ifndef _Out_z_capcount_
#define _Out_z_capcount_(x)
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
#ifndef _Outref_result_buffer_
#define _Outref_result_buffer_(x)
#endif
#ifndef _Outref_result_buffer_all_
#define _Outref_result_buffer_all_(x)
#endif
#ifndef _Outref_result_buffer_all_maybenull_
#define _Outref_result_buffer_all_maybenull_(x)
#endif
#ifndef _Outref_result_buffer_maybenull_
#define _Outref_result_buffer_maybenull_(x)
#endif
#ifndef _Outref_result_buffer_to_
#define _Outref_result_buffer_to_(x1, x2)
#endif
#ifndef _Outref_result_buffer_to_maybenull_
#define _Outref_result_buffer_to_maybenull_(x1, x2)
#endif
#ifndef _Outref_result_bytebuffer_
#define _Outref_result_bytebuffer_(x)
#endif
#ifndef _Outref_result_bytebuffer_all_
#define _Outref_result_bytebuffer_all_(x)
#endif
#ifndef _Outref_result_bytebuffer_all_maybenull_
#define _Outref_result_bytebuffer_all_maybenull_(x)
#endif
#ifndef _Outref_result_bytebuffer_maybenull_
#define _Outref_result_bytebuffer_maybenull_(x)
#endif
#ifndef _Outref_result_bytebuffer_to_
#define _Outref_result_bytebuffer_to_(x1, x2)
#endif
#ifndef _Outref_result_bytebuffer_to_maybenull_
#define _Outref_result_bytebuffer_to_maybenull_(x1, x2)
#endif
#ifndef _Post_bytecap_
#define _Post_bytecap_(x)
#endif
#ifndef _Post_bytecount_
#define _Post_bytecount_(x)
#endif
#ifndef _Post_bytecount_c_
#define _Post_bytecount_c_(x)
#endif
#ifndef _Post_bytecount_x_
#define _Post_bytecount_x_(x)
#endif
#ifndef _Post_cap_
#define _Post_cap_(x)
#endif
#ifndef _Post_count_
#define _Post_count_(x)
#endif
#ifndef _Post_count_c_
#define _Post_count_c_(x)
#endif
#ifndef _Post_count_x_
#define _Post_count_x_(x)
#endif
#ifndef _Post_equal_to_
#define _Post_equal_to_(x)
#endif
#ifndef _Post_readable_byte_size_
#define _Post_readable_byte_size_(x)
#endif
#ifndef _Post_readable_size_
#define _Post_readable_size_(x)
#endif
#ifndef _Post_satisfies_
#define _Post_satisfies_(x)
#endif
#ifndef _Post_writable_byte_size_
#define _Post_writable_byte_size_(n)
#endif
#ifndef _Post_writable_size_
#define _Post_writable_size_(x)
#endif
#ifndef _Post_z_bytecount_
#define _Post_z_bytecount_(x)
#endif
#ifndef _Post_z_bytecount_c_
#define _Post_z_bytecount_c_(x)
#endif
#ifndef _Post_z_bytecount_x_
#define _Post_z_bytecount_x_(x)
#endif
#ifndef _Post_z_count_
#define _Post_z_count_(x)
#endif
#ifndef _Post_z_count_c_
#define _Post_z_count_c_(x)
#endif
#ifndef _Post_z_count_x_
#define _Post_z_count_x_(x)
#endif
#ifndef _Pre_bytecap_
#define _Pre_bytecap_(x)
#endif
#ifndef _Pre_bytecap_c_
#define _Pre_bytecap_c_(x)
#endif
#ifndef _Pre_bytecap_x_
#define _Pre_bytecap_x_(x)
#endif
#ifndef _Pre_bytecount_
#define _Pre_bytecount_(x)
#endif
#ifndef _Pre_bytecount_c_
#define _Pre_bytecount_c_(x)
#endif
#ifndef _Pre_bytecount_x_
#define _Pre_bytecount_x_(x)
#endif
#ifndef _Pre_cap_
#define _Pre_cap_(x)
#endif
#ifndef _Pre_cap_c_
#define _Pre_cap_c_(x)
#endif
#ifndef _Pre_cap_for_
#define _Pre_cap_for_(x)
#endif
#ifndef _Pre_cap_m_
#define _Pre_cap_m_(x1, x2)
#endif
#ifndef _Pre_cap_x_
#define _Pre_cap_x_(x)
#endif
#ifndef _Pre_count_
#define _Pre_count_(x)
#endif
#ifndef _Pre_count_c_
#define _Pre_count_c_(x)
#endif
#ifndef _Pre_count_x_
#define _Pre_count_x_(x)
#endif
#ifndef _Pre_equal_to_
#define _Pre_equal_to_(x)
#endif
#ifndef _Pre_opt_bytecap_
#define _Pre_opt_bytecap_(x)
#endif
#ifndef _Pre_opt_bytecap_c_
#define _Pre_opt_bytecap_c_(x)
#endif
#ifndef _Pre_opt_bytecap_x_
#define _Pre_opt_bytecap_x_(x)
#endif
#ifndef _Pre_opt_bytecount_
#define _Pre_opt_bytecount_(x)
#endif
#ifndef _Pre_opt_bytecount_c_
#define _Pre_opt_bytecount_c_(x)
#endif
#ifndef _Pre_opt_bytecount_x_
#define _Pre_opt_bytecount_x_(x)
#endif
#ifndef _Pre_opt_cap_
#define _Pre_opt_cap_(x)
#endif
#ifndef _Pre_opt_cap_c_
#define _Pre_opt_cap_c_(x)
#endif
#ifndef _Pre_opt_cap_for_
#define _Pre_opt_cap_for_(x)
#endif
#ifndef _Pre_opt_cap_m_
#define _Pre_opt_cap_m_(x1, x2)
#endif
#ifndef _Pre_opt_cap_x_
#define _Pre_opt_cap_x_(x)
#endif
#ifndef _Pre_opt_count_
#define _Pre_opt_count_(x)
#endif
#ifndef _Pre_opt_count_c_
#define _Pre_opt_count_c_(x)
#endif
#ifndef _Pre_opt_count_x_
#define _Pre_opt_count_x_(x)
#endif
#ifndef _Pre_opt_ptrdiff_cap_
#define _Pre_opt_ptrdiff_cap_(x)
#endif
#ifndef _Pre_opt_ptrdiff_count_
#define _Pre_opt_ptrdiff_count_(x)
#endif
#ifndef _Pre_opt_valid_bytecap_
#define _Pre_opt_valid_bytecap_(x)
#endif
#ifndef _Pre_opt_valid_bytecap_c_
#define _Pre_opt_valid_bytecap_c_(x)
#endif
#ifndef _Pre_opt_valid_bytecap_x_
#define _Pre_opt_valid_bytecap_x_(x)
#endif
#ifndef _Pre_opt_valid_cap_
#define _Pre_opt_valid_cap_(x)
#endif
#ifndef _Pre_opt_valid_cap_c_
#define _Pre_opt_valid_cap_c_(x)
#endif
#ifndef _Pre_opt_valid_cap_x_
#define _Pre_opt_valid_cap_x_(x)
#endif
#ifndef _Pre_opt_z_bytecap_
#define _Pre_opt_z_bytecap_(x)
#endif
#ifndef _Pre_opt_z_bytecap_c_
#define _Pre_opt_z_bytecap_c_(x)
#endif
#ifndef _Pre_opt_z_bytecap_x_
#define _Pre_opt_z_bytecap_x_(x)
#endif
#ifndef _Pre_opt_z_cap_
#define _Pre_opt_z_cap_(x)
#endif
#ifndef _Pre_opt_z_cap_c_
#define _Pre_opt_z_cap_c_(x)
#endif
#ifndef _Pre_opt_z_cap_x_
#define _Pre_opt_z_cap_x_(x)
#endif
#ifndef _Pre_ptrdiff_cap_
#define _Pre_ptrdiff_cap_(x)
#endif
#ifndef _Pre_ptrdiff_count_
#define _Pre_ptrdiff_count_(x)
#endif
#ifndef _Pre_readable_byte_size_
#define _Pre_readable_byte_size_(x)
#endif
#ifndef _Pre_readable_size_
#define _Pre_readable_size_(x)
#endif
#ifndef _Pre_satisfies_
#define _Pre_satisfies_(x)
#endif
#ifndef _Pre_valid_bytecap_
#define _Pre_valid_bytecap_(x)
#endif
#ifndef _Pre_valid_bytecap_c_
#define _Pre_valid_bytecap_c_(x)
#endif
#ifndef _Pre_valid_bytecap_x_
#define _Pre_valid_bytecap_x_(x)
#endif
#ifndef _Pre_valid_cap_
#define _Pre_valid_cap_(x)
#endif
#ifndef _Pre_valid_cap_c_
#define _Pre_valid_cap_c_(x)
#endif
#ifndef _Pre_valid_cap_x_
#define _Pre_valid_cap_x_(x)
#endif
#ifndef _Pre_writable_byte_size_
#define _Pre_writable_byte_size_(x)
#endif
#ifndef _Pre_writable_size_
#define _Pre_writable_size_(x)
#endif
#ifndef _Pre_z_bytecap_
#define _Pre_z_bytecap_(x)
#endif
#ifndef _Pre_z_bytecap_c_
#define _Pre_z_bytecap_c_(x)
#endif
#ifndef _Pre_z_bytecap_x_
#define _Pre_z_bytecap_x_(x)
#endif
#ifndef _Pre_z_cap_
#define _Pre_z_cap_(x)
#endif
#ifndef _Pre_z_cap_c_
#define _Pre_z_cap_c_(x)
#endif
#ifndef _Pre_z_cap_x_
#define _Pre_z_cap_x_(x)
#endif
#ifndef _Prepost_bytecount_
#define _Prepost_bytecount_(x)
#endif
#ifndef _Prepost_bytecount_c_
#define _Prepost_bytecount_c_(x)
#endif
#ifndef _Prepost_bytecount_x_
#define _Prepost_bytecount_x_(x)
#endif
#ifndef _Prepost_count_
#define _Prepost_count_(x)
#endif
#ifndef _Prepost_count_c_
#define _Prepost_count_c_(x)
#endif
#ifndef _Prepost_count_x_
#define _Prepost_count_x_(x)
#endif
#ifndef _Prepost_opt_bytecount_
#define _Prepost_opt_bytecount_(x)
#endif
#ifndef _Prepost_opt_bytecount_c_
#define _Prepost_opt_bytecount_c_(x)
#endif
#ifndef _Prepost_opt_bytecount_x_
#define _Prepost_opt_bytecount_x_(x)
#endif
#ifndef _Prepost_opt_count_
#define _Prepost_opt_count_(x)
#endif
#ifndef _Prepost_opt_count_c_
#define _Prepost_opt_count_c_(x)
#endif
#ifndef _Prepost_opt_count_x_
#define _Prepost_opt_count_x_(x)
#endif
#ifndef _Printf_format_string_params_
#define _Printf_format_string_params_(x)
#endif
#ifndef _Readable_bytes_
#define _Readable_bytes_(x)
#endif
#ifndef _Readable_elements_
#define _Readable_elements_(x)
#endif
#ifndef _Ret_bytecap_
#define _Ret_bytecap_(x)
#endif
#ifndef _Ret_bytecap_c_
#define _Ret_bytecap_c_(x)
#endif
#ifndef _Ret_bytecap_x_
#define _Ret_bytecap_x_(x)
#endif
#ifndef _Ret_bytecount_
#define _Ret_bytecount_(x)
#endif
#ifndef _Ret_bytecount_c_
#define _Ret_bytecount_c_(x)
#endif
#ifndef _Ret_bytecount_x_
#define _Ret_bytecount_x_(x)
#endif
#ifndef _Ret_cap_
#define _Ret_cap_(x)
#endif
#ifndef _Ret_cap_c_
#define _Ret_cap_c_(x)
#endif
#ifndef _Ret_cap_x_
#define _Ret_cap_x_(x)
#endif
#ifndef _Ret_count_
#define _Ret_count_(x)
#endif
#ifndef _Ret_count_c_
#define _Ret_count_c_(x)
#endif
#ifndef _Ret_count_x_
#define _Ret_count_x_(x)
#endif
#ifndef _Ret_opt_bytecap_
#define _Ret_opt_bytecap_(x)
#endif
#ifndef _Ret_opt_bytecap_c_
#define _Ret_opt_bytecap_c_(x)
#endif
#ifndef _Ret_opt_bytecap_x_
#define _Ret_opt_bytecap_x_(x)
#endif
#ifndef _Ret_opt_bytecount_
#define _Ret_opt_bytecount_(x)
#endif
#ifndef _Ret_opt_bytecount_c_
#define _Ret_opt_bytecount_c_(x)
#endif
#ifndef _Ret_opt_bytecount_x_
#define _Ret_opt_bytecount_x_(x)
#endif
#ifndef _Ret_opt_cap_
#define _Ret_opt_cap_(x)
#endif
#ifndef _Ret_opt_cap_c_
#define _Ret_opt_cap_c_(x)
#endif
#ifndef _Ret_opt_cap_x_
#define _Ret_opt_cap_x_(x)
#endif
#ifndef _Ret_opt_count_
#define _Ret_opt_count_(x)
#endif
#ifndef _Ret_opt_count_c_
#define _Ret_opt_count_c_(x)
#endif
#ifndef _Ret_opt_count_x_
#define _Ret_opt_count_x_(x)
#endif
#ifndef _Ret_opt_z_bytecap_
#define _Ret_opt_z_bytecap_(x)
#endif
#ifndef _Ret_opt_z_bytecount_
#define _Ret_opt_z_bytecount_(x)
#endif
#ifndef _Ret_opt_z_cap_
#define _Ret_opt_z_cap_(x)
#endif
#ifndef _Ret_opt_z_count_
#define _Ret_opt_z_count_(x)
#endif
#ifndef _Ret_range_
#define _Ret_range_(x1, x2)
#endif
#ifndef _Ret_writes_
#define _Ret_writes_(x)
#endif
#ifndef _Ret_writes_bytes_
#define _Ret_writes_bytes_(x)
#endif
#ifndef _Ret_writes_bytes_maybenull_
#define _Ret_writes_bytes_maybenull_(x)
#endif
#ifndef _Ret_writes_bytes_to_
#define _Ret_writes_bytes_to_(x1, x2)
#endif
#ifndef _Ret_writes_bytes_to_maybenull_
#define _Ret_writes_bytes_to_maybenull_(x1, x2)
#endif
#ifndef _Ret_writes_maybenull_
#define _Ret_writes_maybenull_(x)
#endif
#ifndef _Ret_writes_maybenull_z_
#define _Ret_writes_maybenull_z_(x)
#endif
#ifndef _Ret_writes_to_
#define _Ret_writes_to_(x1, x2)
#endif
#ifndef _Ret_writes_to_maybenull_
#define _Ret_writes_to_maybenull_(x1, x2)
#endif
#ifndef _Ret_writes_z_
#define _Ret_writes_z_(x)
#endif
#ifndef _Ret_z_bytecap_
#define _Ret_z_bytecap_(x)
#endif
#ifndef _Ret_z_bytecount_
#define _Ret_z_bytecount_(x)
#endif
#ifndef _Ret_z_cap_
#define _Ret_z_cap_(x)
#endif
#ifndef _Ret_z_count_
#define _Ret_z_count_(x)
#endif
#ifndef _Return_type_success_
#define _Return_type_success_(x)
#endif
#ifndef _Scanf_format_string_params_
#define _Scanf_format_string_params_(x)
#endif
#ifndef _Scanf_s_format_string_params_
#define _Scanf_s_format_string_params_(x)
#endif
#ifndef _Struct_size_bytes_
#define _Struct_size_bytes_(n)
#endif
#ifndef _Success_
#define _Success_(expr)
#endif
#ifndef _Unchanged_
#define _Unchanged_(x)
#endif
#ifndef _When_
#define _When_(expr, annos)
#endif
#ifndef _Writable_bytes_
#define _Writable_bytes_(x)
#endif
#ifndef _Writable_elements_
#define _Writable_elements_(x)
#endif

/* ---- Legacy names that the C and C++ libraries also use as identifiers: defined
 * only when SOFTNDK_SAL_LEGACY_NAMES is 1, i.e. after the system headers that use
 * them have been included (softndk_sal.h explains the arrangement). */
#if SOFTNDK_SAL_LEGACY_NAMES
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

#include <concurrencysal.h>

#endif /* SOFTNDK_SAL_H */
