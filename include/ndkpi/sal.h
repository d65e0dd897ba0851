/*
 * sal.h - SoftNDK user-mode stand-in for the WDK's Source Annotation Language.
 *
 * Every annotation expands to nothing: on Windows they feed the static
 * analyser (PREfast), which does not exist here. Each macro is defined only
 * if nobody defined it first, so a consumer that brings its own SAL shim keeps
 * working.
 *
 * The legacy double-underscore spellings (__in, __out, ...) are deliberately
 * NOT defined here: glibc and libstdc++ use identifiers such as __in and
 * __out as parameter names, and defining them as empty macros breaks those
 * headers. Consumers that need them opt in by including <specstrings.h> after
 * every system header (see there); the __drv_* driver annotations, which
 * collide with nothing, come with wdm.h (driverspecs.h).
 */
#ifndef SOFTNDK_SAL_H
#define SOFTNDK_SAL_H

/* Parameter annotations. */
#ifndef _In_
#define _In_
#endif
#ifndef _In_opt_
#define _In_opt_
#endif
#ifndef _Out_
#define _Out_
#endif
#ifndef _Out_opt_
#define _Out_opt_
#endif
#ifndef _Inout_
#define _Inout_
#endif
#ifndef _Inout_opt_
#define _Inout_opt_
#endif
#ifndef _Outptr_
#define _Outptr_
#endif
#ifndef _Outptr_opt_
#define _Outptr_opt_
#endif
#ifndef _Outptr_result_maybenull_
#define _Outptr_result_maybenull_
#endif
#ifndef _In_z_
#define _In_z_
#endif
#ifndef _In_opt_z_
#define _In_opt_z_
#endif
#ifndef _Out_writes_z_
#define _Out_writes_z_(n)
#endif
#ifndef _Out_writes_to_z_
#define _Out_writes_to_z_(n, c)
#endif
#ifndef _In_reads_
#define _In_reads_(n)
#endif
#ifndef _In_reads_opt_
#define _In_reads_opt_(n)
#endif
#ifndef _In_reads_bytes_
#define _In_reads_bytes_(n)
#endif
#ifndef _In_reads_bytes_opt_
#define _In_reads_bytes_opt_(n)
#endif
#ifndef _Out_writes_
#define _Out_writes_(n)
#endif
#ifndef _Out_writes_opt_
#define _Out_writes_opt_(n)
#endif
#ifndef _Out_writes_bytes_
#define _Out_writes_bytes_(n)
#endif
#ifndef _Out_writes_bytes_opt_
#define _Out_writes_bytes_opt_(n)
#endif
#ifndef _Out_writes_to_
#define _Out_writes_to_(n, c)
#endif
#ifndef _Out_writes_to_opt_
#define _Out_writes_to_opt_(n, c)
#endif
#ifndef _Out_writes_bytes_to_
#define _Out_writes_bytes_to_(n, c)
#endif
#ifndef _Out_writes_bytes_to_opt_
#define _Out_writes_bytes_to_opt_(n, c)
#endif
#ifndef _Out_writes_bytes_all_
#define _Out_writes_bytes_all_(n)
#endif
#ifndef _Inout_updates_
#define _Inout_updates_(n)
#endif
#ifndef _Inout_updates_bytes_
#define _Inout_updates_bytes_(n)
#endif
#ifndef _Field_size_
#define _Field_size_(n)
#endif
#ifndef _Field_size_bytes_
#define _Field_size_bytes_(n)
#endif
#ifndef _Field_size_opt_
#define _Field_size_opt_(n)
#endif
#ifndef _Struct_size_bytes_
#define _Struct_size_bytes_(n)
#endif
#ifndef _Reserved_
#define _Reserved_
#endif
#ifndef _Ret_maybenull_
#define _Ret_maybenull_
#endif
#ifndef _Must_inspect_result_
#define _Must_inspect_result_
#endif
#ifndef _Check_return_
#define _Check_return_
#endif
#ifndef _Success_
#define _Success_(expr)
#endif
#ifndef _Post_invalid_
#define _Post_invalid_
#endif
#ifndef _Post_writable_byte_size_
#define _Post_writable_byte_size_(n)
#endif
#ifndef _When_
#define _When_(expr, annos)
#endif
#ifndef _At_
#define _At_(target, annos)
#endif
#ifndef _Analysis_assume_
#define _Analysis_assume_(expr)
#endif
#ifndef _Function_class_
#define _Function_class_(name)
#endif
#ifndef _Use_decl_annotations_
#define _Use_decl_annotations_
#endif
#ifndef _Acquires_lock_
#define _Acquires_lock_(lock)
#endif
#ifndef _Releases_lock_
#define _Releases_lock_(lock)
#endif
#ifndef _Requires_lock_held_
#define _Requires_lock_held_(lock)
#endif
#ifndef _Guarded_by_
#define _Guarded_by_(lock)
#endif
#ifndef _Interlocked_operand_
#define _Interlocked_operand_
#endif
#ifndef _Printf_format_string_
#define _Printf_format_string_
#endif

/* IRQL annotations (driverspecs.h on Windows). */
#ifndef _IRQL_requires_max_
#define _IRQL_requires_max_(irql)
#endif
#ifndef _IRQL_requires_min_
#define _IRQL_requires_min_(irql)
#endif
#ifndef _IRQL_requires_
#define _IRQL_requires_(irql)
#endif
#ifndef _IRQL_raises_
#define _IRQL_raises_(irql)
#endif
#ifndef _IRQL_saves_
#define _IRQL_saves_
#endif
#ifndef _IRQL_restores_
#define _IRQL_restores_
#endif
#ifndef _IRQL_saves_global_
#define _IRQL_saves_global_(kind, param)
#endif
#ifndef _IRQL_restores_global_
#define _IRQL_restores_global_(kind, param)
#endif
#ifndef _IRQL_requires_same_
#define _IRQL_requires_same_
#endif
#ifndef _IRQL_always_function_max_
#define _IRQL_always_function_max_(irql)
#endif
#ifndef _IRQL_always_function_min_
#define _IRQL_always_function_min_(irql)
#endif

/* Dispatch-routine annotations used by driver code. */
#ifndef _Dispatch_type_
#define _Dispatch_type_(type)
#endif
#ifndef _Kernel_float_saved_
#define _Kernel_float_saved_
#endif
#ifndef _Kernel_requires_resource_held_
#define _Kernel_requires_resource_held_(res)
#endif

#endif /* SOFTNDK_SAL_H */
