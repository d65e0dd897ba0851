/*
 * softndk_sal.h - what the SoftNDK annotation headers (sal.h, concurrencysal.h,
 * specstrings.h, specstrings_strict.h, driverspecs.h, kernelspecs.h,
 * sdv_driverspecs.h) and ntdef.h share: MSVC's __pragma keyword, and the switch and
 * prelude for the legacy names that the C and C++ libraries also use. Not a WDK
 * header; consumers never need to include it themselves.
 *
 * ---- __pragma(directive)
 * MSVC's in-macro pragma. g++ warns about pragmas it does not know (-Wunknown-pragmas,
 * part of -Wall), so __pragma(x) pastes the pragma's name onto SOFTNDK_MSVC_PRAGMA_
 * and each documented MSVC pragma (plus PREfast's) is defined below:
 *   pack, push_macro, pop_macro   become the same #pragma for g++, which has them with
 *                                 the same meaning (pack changes structure layout, so
 *                                 dropping it would be wrong);
 *   every other MSVC pragma       expands to nothing: warning and prefast steer
 *                                 diagnostics of tools that are not here, the rest
 *                                 (code_seg, alloc_text, optimize, comment, ...) steer
 *                                 MSVC's code generation and linking.
 * A name outside that list fails to compile with SOFTNDK_MSVC_PRAGMA_<name> in the
 * message, rather than being silently dropped.
 *
 * ---- Legacy names shared with the system libraries
 * The SAL 1 names __in, __out, __reserved, __callback, __override, __bound, __valid,
 * __pre and __null are also identifiers in system headers (grep of /usr/include and
 * /usr/include/c++/12 for every annotation name; no other annotation name occurs):
 *   __in, __out     parameter names in glibc's <arpa/inet.h> and <netinet/in.h>
 *                   (prototypes only: harmless when empty), and names in the bodies
 *                   of libstdc++'s <string>, <istream>, <ostream>, <locale>, <tuple>,
 *                   <ranges>, <thread>, <regex>, <charconv> ... (fatal when empty);
 *   __bound, __valid, __pre   names in libstdc++ (<ranges>, <chrono>, <regex>);
 *   __reserved      structure members of Linux UAPI headers: <linux/stat.h> (which
 *                   glibc's <sys/stat.h> includes under _GNU_SOURCE), <linux/fs.h>,
 *                   <linux/perf_event.h>, <linux/io_uring.h>, <linux/loop.h>, ...
 *                   An empty macro deletes the member or breaks the array;
 *   __callback, __override    parameter names in glibc's <link.h>, <thread_db.h>,
 *                   <rpcsvc/nislib.h> and <envz.h> (prototypes only: harmless);
 *   __null          g++'s null pointer constant: NULL is __null in C++.
 * Every other annotation name, and every function-like one (__success(expr),
 * __range(lb, ub), ... appear in libstdc++ too, but never followed by "("), is
 * defined unconditionally.
 *
 * SOFTNDK_SAL_LEGACY_NAMES (0 or 1) decides whether these nine are defined too:
 *   C    1 unless SOFTNDK_NO_LEGACY_SAL is defined. No glibc header breaks (each of
 *        /usr/include's C headers was compiled after them), and <linux/stat.h> is
 *        included first when _GNU_SOURCE is defined, so that <sys/stat.h> stays
 *        whole. The other Linux UAPI headers with a __reserved member must be
 *        included before the WDK headers, or define SOFTNDK_NO_LEGACY_SAL.
 *   C++  1 only when SOFTNDK_LEGACY_SAL is defined (softndk_add_driver(... CXX) sets
 *        it for C++ drivers). Then the first WDK header includes, before it defines
 *        anything, the standard library headers that use these names or call
 *        min()/max() (the prelude below, inside extern "C++" so that it also works
 *        when the WDK headers are included inside an extern "C" block). Their
 *        include guards make every later #include of them a no-op, so a driver can
 *        include any of them after <ntddk.h>. __null stays g++'s NULL. The prelude
 *        costs about 1 s of compile time per translation unit (g++ 12, -O0, CPU time:
 *        <ntddk.h> 1.1 s with it, 0.02 s without; <string> <vector> <memory> <mutex>
 *        alone 0.3 s; <bits/stdc++.h> 1.1 s), which is why SoftNDK's own C++ code,
 *        which never uses the legacy names, does not opt in. A precompiled header of
 *        <ntddk.h> would take most of it back for drivers with many files.
 *        The same switch gives C++ the WDK's min/max macros (ntdef.h), which break
 *        <algorithm>, <limits>, <random> ... when those come later.
 *   Define the switch for the whole translation unit (on the command line), not
 *   between two includes.
 */
#ifndef SOFTNDK_SAL_SHIM_H
#define SOFTNDK_SAL_SHIM_H

/* ---- __pragma. */
#define SOFTNDK_SAL_STRINGIZE(...) #__VA_ARGS__
#define SOFTNDK_SAL_PRAGMA(...)    _Pragma(SOFTNDK_SAL_STRINGIZE(__VA_ARGS__))

#ifndef __pragma
#define __pragma(directive) SOFTNDK_MSVC_PRAGMA_##directive
#endif

/* Pragmas g++ has with the MSVC meaning. */
#define SOFTNDK_MSVC_PRAGMA_pack(...)       SOFTNDK_SAL_PRAGMA(pack(__VA_ARGS__))
#define SOFTNDK_MSVC_PRAGMA_push_macro(...) SOFTNDK_SAL_PRAGMA(push_macro(__VA_ARGS__))
#define SOFTNDK_MSVC_PRAGMA_pop_macro(...)  SOFTNDK_SAL_PRAGMA(pop_macro(__VA_ARGS__))
/* Pragmas written without arguments. */
#define SOFTNDK_MSVC_PRAGMA_once
#define SOFTNDK_MSVC_PRAGMA_hdrstop
#define SOFTNDK_MSVC_PRAGMA_endregion
/* Diagnostics, code generation and linking directives with no g++ counterpart. */
#define SOFTNDK_MSVC_PRAGMA_alloc_text(...)
#define SOFTNDK_MSVC_PRAGMA_auto_inline(...)
#define SOFTNDK_MSVC_PRAGMA_bss_seg(...)
#define SOFTNDK_MSVC_PRAGMA_check_stack(...)
#define SOFTNDK_MSVC_PRAGMA_code_seg(...)
#define SOFTNDK_MSVC_PRAGMA_comment(...)
#define SOFTNDK_MSVC_PRAGMA_component(...)
#define SOFTNDK_MSVC_PRAGMA_conform(...)
#define SOFTNDK_MSVC_PRAGMA_const_seg(...)
#define SOFTNDK_MSVC_PRAGMA_data_seg(...)
#define SOFTNDK_MSVC_PRAGMA_deprecated(...)
#define SOFTNDK_MSVC_PRAGMA_detect_mismatch(...)
#define SOFTNDK_MSVC_PRAGMA_execution_character_set(...)
#define SOFTNDK_MSVC_PRAGMA_fenv_access(...)
#define SOFTNDK_MSVC_PRAGMA_float_control(...)
#define SOFTNDK_MSVC_PRAGMA_fp_contract(...)
#define SOFTNDK_MSVC_PRAGMA_function(...)
#define SOFTNDK_MSVC_PRAGMA_include_alias(...)
#define SOFTNDK_MSVC_PRAGMA_init_seg(...)
#define SOFTNDK_MSVC_PRAGMA_inline_depth(...)
#define SOFTNDK_MSVC_PRAGMA_inline_recursion(...)
#define SOFTNDK_MSVC_PRAGMA_intrinsic(...)
#define SOFTNDK_MSVC_PRAGMA_loop(...)
#define SOFTNDK_MSVC_PRAGMA_make_public(...)
#define SOFTNDK_MSVC_PRAGMA_managed(...)
#define SOFTNDK_MSVC_PRAGMA_message(...)
#define SOFTNDK_MSVC_PRAGMA_omp(...)
#define SOFTNDK_MSVC_PRAGMA_optimize(...)
#define SOFTNDK_MSVC_PRAGMA_pointers_to_members(...)
#define SOFTNDK_MSVC_PRAGMA_prefast(...)
#define SOFTNDK_MSVC_PRAGMA_region(...)
#define SOFTNDK_MSVC_PRAGMA_runtime_checks(...)
#define SOFTNDK_MSVC_PRAGMA_section(...)
#define SOFTNDK_MSVC_PRAGMA_setlocale(...)
#define SOFTNDK_MSVC_PRAGMA_strict_gs_check(...)
#define SOFTNDK_MSVC_PRAGMA_system_header(...)
#define SOFTNDK_MSVC_PRAGMA_unmanaged(...)
#define SOFTNDK_MSVC_PRAGMA_vtordisp(...)
#define SOFTNDK_MSVC_PRAGMA_warning(...)

/* ---- The legacy-name switch. */
#ifdef __cplusplus
#ifdef SOFTNDK_LEGACY_SAL
#define SOFTNDK_SAL_LEGACY_NAMES 1
#else
#define SOFTNDK_SAL_LEGACY_NAMES 0
#endif
#else
#ifdef SOFTNDK_NO_LEGACY_SAL
#define SOFTNDK_SAL_LEGACY_NAMES 0
#else
#define SOFTNDK_SAL_LEGACY_NAMES 1
#endif
#endif

/* ---- The prelude: system headers that use the legacy names, included before they
 * are defined. */
#if SOFTNDK_SAL_LEGACY_NAMES
/* <stdint.h> first: it brings glibc's <features.h>, without which <linux/stat.h>
 * also defines the S_IF* constants that <sys/stat.h> defines its own way. */
#include <stdint.h>
#if defined(_GNU_SOURCE) && defined(__has_include)
#if __has_include(<linux/stat.h>)
#include <linux/stat.h>
#endif
#endif
#ifdef __cplusplus
extern "C++" {
#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <bitset>
#include <charconv>
#include <chrono>
#include <cmath>
#include <codecvt>
#include <complex>
#include <condition_variable>
#include <deque>
#include <execution>
#include <filesystem>
#include <forward_list>
#include <fstream>
#include <functional>
#include <future>
#include <iomanip>
#include <ios>
#include <istream>
#include <iterator>
#include <latch>
#include <limits>
#include <list>
#include <locale>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <numeric>
#include <ostream>
#include <queue>
#include <random>
#include <ranges>
#include <regex>
#include <scoped_allocator>
#include <semaphore>
#include <set>
#include <shared_mutex>
#include <span>
#include <sstream>
#include <stack>
#include <stdexcept>
#include <stop_token>
#include <streambuf>
#include <string>
#include <string_view>
#include <syncstream>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <valarray>
#include <variant>
#include <vector>
}
#endif /* __cplusplus */
#endif /* SOFTNDK_SAL_LEGACY_NAMES */

#endif /* SOFTNDK_SAL_SHIM_H */
