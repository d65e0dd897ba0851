/*
 * specstrings.h - SoftNDK user-mode stand-in for the WDK's legacy (pre-SAL 2)
 * annotations: __in, __out, __inout, __in_opt, __out_opt, __in_bcount(n),
 * __out_ecount(n), __deref_out, __checkReturn, ... Each expands to nothing and is
 * defined only if nobody defined it first. It also brings in sal.h (the SAL 2
 * _In_ / _Out_ forms) and driverspecs.h (the __drv_* forms), as the WDK's does.
 *
 * OPT-IN, and INCLUDE IT LAST. On Windows every kernel header pulls these in, but
 * the C and C++ libraries on Linux use some of the same identifiers for their
 * own purposes, and an empty macro breaks every system header included after it:
 *   __in, __out    parameter names in glibc's <netinet/in.h> and <arpa/inet.h>
 *                  and throughout libstdc++ (<algorithm>, <istream>, <utility>...)
 *   __reserved     struct members in the Linux UAPI headers (<linux/stat.h>, ...)
 *   __callback     parameter names in glibc's <link.h> and <thread_db.h>
 *   __override     a parameter name in glibc's <envz.h>
 *   __success, __range  names in libstdc++ and <regex.h> (harmless: these two are
 *                  function-like macros here, and those uses are not calls)
 * (found by grepping /usr/include and /usr/include/c++/12; the other names below
 * appear in neither). That is why sal.h does not define them. A consumer whose
 * code uses them includes <specstrings.h> after every C, C++, POSIX and SoftNDK
 * header that can include a system header (ws2def.h, ws2ipdef.h, ip2string.h,
 * mstcpip.h, wsk.h, ndkpi.h ... - ntddk.h and wdm.h only pull in <stddef.h>,
 * <stdint.h>, <wchar.h>, <stdarg.h> and <string.h>, which use none of them), e.g.
 *
 *     #include <ntddk.h>
 *     #include <wsk.h>
 *     #include <pthread.h>
 *     #include <specstrings.h>   // last
 *
 * In C++, no standard library header may follow it, including those a later
 * header of the consumer's own includes.
 */
#ifndef SOFTNDK_SPECSTRINGS_H
#define SOFTNDK_SPECSTRINGS_H

#include <driverspecs.h>
#include <sal.h>

/* No arguments. */
#ifndef __in
#define __in
#endif
#ifndef __out
#define __out
#endif
#ifndef __inout
#define __inout
#endif
#ifndef __in_opt
#define __in_opt
#endif
#ifndef __out_opt
#define __out_opt
#endif
#ifndef __inout_opt
#define __inout_opt
#endif
#ifndef __in_z
#define __in_z
#endif
#ifndef __in_z_opt
#define __in_z_opt
#endif
#ifndef __in_opt_z
#define __in_opt_z
#endif
#ifndef __out_z
#define __out_z
#endif
#ifndef __out_z_opt
#define __out_z_opt
#endif
#ifndef __inout_z
#define __inout_z
#endif
#ifndef __inout_z_opt
#define __inout_z_opt
#endif
#ifndef __deref_out
#define __deref_out
#endif
#ifndef __deref_out_opt
#define __deref_out_opt
#endif
#ifndef __deref_opt_out
#define __deref_opt_out
#endif
#ifndef __deref_opt_out_opt
#define __deref_opt_out_opt
#endif
#ifndef __deref_in
#define __deref_in
#endif
#ifndef __deref_in_opt
#define __deref_in_opt
#endif
#ifndef __deref_inout
#define __deref_inout
#endif
#ifndef __deref_inout_opt
#define __deref_inout_opt
#endif
#ifndef __deref_out_z
#define __deref_out_z
#endif
#ifndef __deref_out_z_opt
#define __deref_out_z_opt
#endif
#ifndef __reserved
#define __reserved
#endif
#ifndef __checkReturn
#define __checkReturn
#endif
#ifndef __nullterminated
#define __nullterminated
#endif
#ifndef __nullnullterminated
#define __nullnullterminated
#endif
#ifndef __notnull
#define __notnull
#endif
#ifndef __maybenull
#define __maybenull
#endif
#ifndef __callback
#define __callback
#endif
#ifndef __override
#define __override
#endif
#ifndef __fallthrough
#define __fallthrough
#endif
#ifndef __format_string
#define __format_string
#endif

/* One argument: a size, a condition or a type. */
#ifndef __in_bcount
#define __in_bcount(size)
#endif
#ifndef __in_ecount
#define __in_ecount(size)
#endif
#ifndef __out_bcount
#define __out_bcount(size)
#endif
#ifndef __out_ecount
#define __out_ecount(size)
#endif
#ifndef __inout_bcount
#define __inout_bcount(size)
#endif
#ifndef __inout_ecount
#define __inout_ecount(size)
#endif
#ifndef __in_bcount_opt
#define __in_bcount_opt(size)
#endif
#ifndef __in_ecount_opt
#define __in_ecount_opt(size)
#endif
#ifndef __out_bcount_opt
#define __out_bcount_opt(size)
#endif
#ifndef __out_ecount_opt
#define __out_ecount_opt(size)
#endif
#ifndef __inout_bcount_opt
#define __inout_bcount_opt(size)
#endif
#ifndef __inout_ecount_opt
#define __inout_ecount_opt(size)
#endif
#ifndef __in_bcount_z
#define __in_bcount_z(size)
#endif
#ifndef __in_ecount_z
#define __in_ecount_z(size)
#endif
#ifndef __out_bcount_z
#define __out_bcount_z(size)
#endif
#ifndef __out_ecount_z
#define __out_ecount_z(size)
#endif
#ifndef __inout_bcount_z
#define __inout_bcount_z(size)
#endif
#ifndef __inout_ecount_z
#define __inout_ecount_z(size)
#endif
#ifndef __in_bcount_z_opt
#define __in_bcount_z_opt(size)
#endif
#ifndef __in_ecount_z_opt
#define __in_ecount_z_opt(size)
#endif
#ifndef __out_bcount_z_opt
#define __out_bcount_z_opt(size)
#endif
#ifndef __out_ecount_z_opt
#define __out_ecount_z_opt(size)
#endif
#ifndef __in_bcount_nz
#define __in_bcount_nz(size)
#endif
#ifndef __in_ecount_nz
#define __in_ecount_nz(size)
#endif
#ifndef __out_bcount_nz
#define __out_bcount_nz(size)
#endif
#ifndef __out_ecount_nz
#define __out_ecount_nz(size)
#endif
#ifndef __out_bcount_full
#define __out_bcount_full(size)
#endif
#ifndef __out_ecount_full
#define __out_ecount_full(size)
#endif
#ifndef __out_bcount_full_opt
#define __out_bcount_full_opt(size)
#endif
#ifndef __out_ecount_full_opt
#define __out_ecount_full_opt(size)
#endif
#ifndef __inout_bcount_full
#define __inout_bcount_full(size)
#endif
#ifndef __inout_ecount_full
#define __inout_ecount_full(size)
#endif
#ifndef __in_xcount
#define __in_xcount(size)
#endif
#ifndef __out_xcount
#define __out_xcount(size)
#endif
#ifndef __inout_xcount
#define __inout_xcount(size)
#endif
#ifndef __in_xcount_opt
#define __in_xcount_opt(size)
#endif
#ifndef __out_xcount_opt
#define __out_xcount_opt(size)
#endif
#ifndef __inout_xcount_opt
#define __inout_xcount_opt(size)
#endif
#ifndef __deref_out_bcount
#define __deref_out_bcount(size)
#endif
#ifndef __deref_out_ecount
#define __deref_out_ecount(size)
#endif
#ifndef __deref_out_bcount_opt
#define __deref_out_bcount_opt(size)
#endif
#ifndef __deref_out_ecount_opt
#define __deref_out_ecount_opt(size)
#endif
#ifndef __deref_in_bcount
#define __deref_in_bcount(size)
#endif
#ifndef __deref_in_ecount
#define __deref_in_ecount(size)
#endif
#ifndef __deref_inout_bcount
#define __deref_inout_bcount(size)
#endif
#ifndef __deref_inout_ecount
#define __deref_inout_ecount(size)
#endif
#ifndef __deref_opt_out_bcount
#define __deref_opt_out_bcount(size)
#endif
#ifndef __deref_opt_out_ecount
#define __deref_opt_out_ecount(size)
#endif
#ifndef __field_bcount
#define __field_bcount(size)
#endif
#ifndef __field_ecount
#define __field_ecount(size)
#endif
#ifndef __field_bcount_opt
#define __field_bcount_opt(size)
#endif
#ifndef __field_ecount_opt
#define __field_ecount_opt(size)
#endif
#ifndef __field_xcount
#define __field_xcount(size)
#endif
#ifndef __bcount
#define __bcount(size)
#endif
#ifndef __ecount
#define __ecount(size)
#endif
#ifndef __bcount_opt
#define __bcount_opt(size)
#endif
#ifndef __ecount_opt
#define __ecount_opt(size)
#endif
#ifndef __xcount
#define __xcount(size)
#endif
#ifndef __success
#define __success(expr)
#endif
#ifndef __typefix
#define __typefix(ctype)
#endif
#ifndef __analysis_assume
#define __analysis_assume(expr)
#endif
#ifndef __control_entrypoint
#define __control_entrypoint(category)
#endif
#ifndef __data_entrypoint
#define __data_entrypoint(category)
#endif

/* Two arguments: a capacity and a filled length, or a range. */
#ifndef __out_bcount_part
#define __out_bcount_part(size, length)
#endif
#ifndef __out_ecount_part
#define __out_ecount_part(size, length)
#endif
#ifndef __out_bcount_part_opt
#define __out_bcount_part_opt(size, length)
#endif
#ifndef __out_ecount_part_opt
#define __out_ecount_part_opt(size, length)
#endif
#ifndef __inout_bcount_part
#define __inout_bcount_part(size, length)
#endif
#ifndef __inout_ecount_part
#define __inout_ecount_part(size, length)
#endif
#ifndef __inout_bcount_part_opt
#define __inout_bcount_part_opt(size, length)
#endif
#ifndef __inout_ecount_part_opt
#define __inout_ecount_part_opt(size, length)
#endif
#ifndef __deref_out_bcount_part
#define __deref_out_bcount_part(size, length)
#endif
#ifndef __deref_out_ecount_part
#define __deref_out_ecount_part(size, length)
#endif
#ifndef __field_bcount_part
#define __field_bcount_part(size, length)
#endif
#ifndef __field_ecount_part
#define __field_ecount_part(size, length)
#endif
#ifndef __in_range
#define __in_range(lb, ub)
#endif
#ifndef __out_range
#define __out_range(lb, ub)
#endif
#ifndef __range
#define __range(lb, ub)
#endif
#ifndef __out_xcount_part
#define __out_xcount_part(size, length)
#endif
#ifndef __field_bcount_part_opt
#define __field_bcount_part_opt(size, length)
#endif
#ifndef __field_ecount_part_opt
#define __field_ecount_part_opt(size, length)
#endif

#endif /* SOFTNDK_SPECSTRINGS_H */
