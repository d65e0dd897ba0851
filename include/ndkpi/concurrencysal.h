/*
 * concurrencysal.h - SoftNDK user-mode stand-in for the WDK's concurrency annotations:
 * locks (_Acquires_lock_(l), _Requires_lock_held_(l), _Guarded_by_(l), ...), lock
 * levels, benign races, and their legacy __acquires_lock(l) ... spellings.
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
 * BENIGN_RACE_BEGIN / BENIGN_RACE_END and NO_COMPETING_THREAD_BEGIN /
 * NO_COMPETING_THREAD_END bracket statements that race on purpose. The WDK defines
 * them as __pragma(warning(push)) __pragma(warning(disable: ...)) and
 * __pragma(warning(pop)), so they are not statements themselves: code writes
 *     BENIGN_RACE_BEGIN
 *     Device->Counter++;
 *     BENIGN_RACE_END
 * or puts a block between them. They are defined the same way here, and __pragma
 * (softndk_sal.h) makes the warning pragmas vanish.
 */
#ifndef SOFTNDK_CONCURRENCYSAL_H
#define SOFTNDK_CONCURRENCYSAL_H

#include <softndk_sal.h>

/* ---- 11 object-like (no arguments). */
#ifndef __interlocked
#define __interlocked
#endif
#ifndef __no_competing_thread
#define __no_competing_thread
#endif
#ifndef __requires_no_locks_held
#define __requires_no_locks_held
#endif
#ifndef _Benign_race_begin_
#define _Benign_race_begin_
#endif
#ifndef _Benign_race_end_
#define _Benign_race_end_
#endif
#ifndef _Interlocked_
#define _Interlocked_
#endif
#ifndef _Interlocked_operand_
#define _Interlocked_operand_
#endif
#ifndef _No_competing_thread_
#define _No_competing_thread_
#endif
#ifndef _No_competing_thread_begin_
#define _No_competing_thread_begin_
#endif
#ifndef _No_competing_thread_end_
#define _No_competing_thread_end_
#endif
#ifndef _Requires_no_locks_held_
#define _Requires_no_locks_held_
#endif

/* ---- 53 function-like. */
#ifndef __acquires_exclusive_lock
#define __acquires_exclusive_lock(x)
#endif
#ifndef __acquires_lock
#define __acquires_lock(x)
#endif
#ifndef __acquires_shared_lock
#define __acquires_shared_lock(x)
#endif
#ifndef __analysis_assume_lock_acquired
#define __analysis_assume_lock_acquired(x)
#endif
#ifndef __analysis_assume_lock_released
#define __analysis_assume_lock_released(x)
#endif
#ifndef __analysis_suppress_lock_checking
#define __analysis_suppress_lock_checking(x)
#endif
#ifndef __declare_lock_level
#define __declare_lock_level(x)
#endif
#ifndef __function_ignore_lock_checking
#define __function_ignore_lock_checking(x)
#endif
#ifndef __guarded_by
#define __guarded_by(x)
#endif
#ifndef __has_lock_level
#define __has_lock_level(x)
#endif
#ifndef __has_lock_property
#define __has_lock_property(x)
#endif
#ifndef __internal_lock_level_order
#define __internal_lock_level_order(x1, x2)
#endif
#ifndef __lock_level_order
#define __lock_level_order(x1, x2)
#endif
#ifndef __releases_exclusive_lock
#define __releases_exclusive_lock(x)
#endif
#ifndef __releases_lock
#define __releases_lock(x)
#endif
#ifndef __releases_shared_lock
#define __releases_shared_lock(x)
#endif
#ifndef __requires_exclusive_lock_held
#define __requires_exclusive_lock_held(x)
#endif
#ifndef __requires_lock_held
#define __requires_lock_held(x)
#endif
#ifndef __requires_lock_not_held
#define __requires_lock_not_held(x)
#endif
#ifndef __requires_shared_lock_held
#define __requires_shared_lock_held(x)
#endif
#ifndef __write_guarded_by
#define __write_guarded_by(x)
#endif
#ifndef _Acquires_exclusive_lock_
#define _Acquires_exclusive_lock_(x)
#endif
#ifndef _Acquires_lock_
#define _Acquires_lock_(lock)
#endif
#ifndef _Acquires_nonreentrant_lock_
#define _Acquires_nonreentrant_lock_(x)
#endif
#ifndef _Acquires_shared_lock_
#define _Acquires_shared_lock_(x)
#endif
#ifndef _Analysis_assume_lock_acquired_
#define _Analysis_assume_lock_acquired_(x)
#endif
#ifndef _Analysis_assume_lock_held_
#define _Analysis_assume_lock_held_(x)
#endif
#ifndef _Analysis_assume_lock_not_held_
#define _Analysis_assume_lock_not_held_(x)
#endif
#ifndef _Analysis_assume_lock_released_
#define _Analysis_assume_lock_released_(x)
#endif
#ifndef _Analysis_assume_same_lock_
#define _Analysis_assume_same_lock_(x1, x2)
#endif
#ifndef _Analysis_assume_smart_lock_acquired_
#define _Analysis_assume_smart_lock_acquired_(x)
#endif
#ifndef _Analysis_assume_smart_lock_released_
#define _Analysis_assume_smart_lock_released_(x)
#endif
#ifndef _Analysis_suppress_lock_checking_
#define _Analysis_suppress_lock_checking_(x)
#endif
#ifndef _Create_lock_level_
#define _Create_lock_level_(x)
#endif
#ifndef _Detaches_lock_
#define _Detaches_lock_(x1, x2)
#endif
#ifndef _Function_ignore_lock_checking_
#define _Function_ignore_lock_checking_(x)
#endif
#ifndef _Guarded_by_
#define _Guarded_by_(lock)
#endif
#ifndef _Has_lock_kind_
#define _Has_lock_kind_(x)
#endif
#ifndef _Has_lock_level_
#define _Has_lock_level_(x)
#endif
#ifndef _Lock_level_order_
#define _Lock_level_order_(x1, x2)
#endif
#ifndef _Moves_lock_
#define _Moves_lock_(x1, x2)
#endif
#ifndef _Post_same_lock_
#define _Post_same_lock_(x1, x2)
#endif
#ifndef _Releases_exclusive_lock_
#define _Releases_exclusive_lock_(x)
#endif
#ifndef _Releases_lock_
#define _Releases_lock_(lock)
#endif
#ifndef _Releases_nonreentrant_lock_
#define _Releases_nonreentrant_lock_(x)
#endif
#ifndef _Releases_shared_lock_
#define _Releases_shared_lock_(x)
#endif
#ifndef _Replaces_lock_
#define _Replaces_lock_(x1, x2)
#endif
#ifndef _Requires_exclusive_lock_held_
#define _Requires_exclusive_lock_held_(x)
#endif
#ifndef _Requires_lock_held_
#define _Requires_lock_held_(lock)
#endif
#ifndef _Requires_lock_not_held_
#define _Requires_lock_not_held_(x)
#endif
#ifndef _Requires_shared_lock_held_
#define _Requires_shared_lock_held_(x)
#endif
#ifndef _Swaps_locks_
#define _Swaps_locks_(x1, x2)
#endif
#ifndef _Write_guarded_by_
#define _Write_guarded_by_(x)
#endif

/* ---- Brackets around deliberate races. */
#ifndef BENIGN_RACE_BEGIN
#define BENIGN_RACE_BEGIN   \
    __pragma(warning(push)) \
        __pragma(warning(disable : 26100 26101 26150 26130 26180 26131 26181 28112))
#endif
#ifndef BENIGN_RACE_END
#define BENIGN_RACE_END __pragma(warning(pop))
#endif
#ifndef NO_COMPETING_THREAD_BEGIN
#define NO_COMPETING_THREAD_BEGIN             \
    __pragma(warning(push)) __pragma(warning( \
        disable : 26100 26101 26150 26101 26151 26110 26160 26130 26180 26131 26181 28112))
#endif
#ifndef NO_COMPETING_THREAD_END
#define NO_COMPETING_THREAD_END __pragma(warning(pop))
#endif

#endif /* SOFTNDK_CONCURRENCYSAL_H */
