/*
 * ntintsafe.h - SoftNDK user-mode stand-in for the WDK's kernel integer-overflow
 * helpers (ntintsafe.h): Rtl<Type>Add / Rtl<Type>Sub / Rtl<Type>Mult and the
 * Rtl<From>To<To> conversions.
 *
 * Each function returns STATUS_SUCCESS and stores the exact result when it fits
 * the result type; otherwise it returns STATUS_INTEGER_OVERFLOW and stores the
 * type's error value (<TYPE>_ERROR below: all bits set for unsigned types, -1 for
 * signed ones), as the WDK does. The result pointer must not be NULL. Like the
 * WDK's, the functions are inline (static here; taking one's address works).
 *
 * Type names: UShort/Word (16 bits), UInt/ULong/DWord (32), ULongLong/ULong64/
 * DWord64/UInt64 (64), SizeT (size_t) and SIZET (SIZE_T), ULongPtr/UIntPtr/
 * DWordPtr (pointer-sized); signed Short, Int, Long, LongLong/Int64/Long64,
 * LongPtr/IntPtr, SSIZET. Conversions exist for the pairs listed at the end.
 *
 * Compiles as C11 and C++20.
 */
#ifndef _NTINTSAFE_H_INCLUDED_
#define _NTINTSAFE_H_INCLUDED_

#include <stddef.h>

#include <ntdef.h>
#include <ntstatus.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Windows' value, also in ntstatus.h. */
#ifndef STATUS_INTEGER_OVERFLOW
#define STATUS_INTEGER_OVERFLOW ((NTSTATUS)0xC0000095L)
#endif

#define UCHAR_ERROR     '\0'
#define USHORT_ERROR    (0xffff)
#define WORD_ERROR      (0xffff)
#define UINT_ERROR      (0xffffffffU)
#define ULONG_ERROR     (0xffffffffUL)
#define DWORD_ERROR     (0xffffffffUL)
#define ULONGLONG_ERROR (0xffffffffffffffffULL)
#define ULONG64_ERROR   (0xffffffffffffffffULL)
#define DWORD64_ERROR   (0xffffffffffffffffULL)
#define UINT64_ERROR    (0xffffffffffffffffULL)
#define SIZE_T_ERROR    ((SIZE_T) ~(SIZE_T)0)
#define ULONG_PTR_ERROR ((ULONG_PTR) ~(ULONG_PTR)0)
#define UINT_PTR_ERROR  ((UINT_PTR) ~(UINT_PTR)0)
#define DWORD_PTR_ERROR ((DWORD_PTR) ~(DWORD_PTR)0)
#define SHORT_ERROR     (-1)
#define INT_ERROR       (-1)
#define LONG_ERROR      (-1L)
#define LONGLONG_ERROR  (-1LL)
#define INT64_ERROR     (-1LL)
#define LONG64_ERROR    (-1LL)
#define LONG_PTR_ERROR  ((LONG_PTR)-1)
#define INT_PTR_ERROR   ((INT_PTR)-1)
#define SSIZE_T_ERROR   ((SSIZE_T)-1)

/* Rtl<Type><Op>(Type a, Type b, Type *Result): exact arithmetic, checked by the
 * compiler's overflow builtins. */
#define SOFTNDK_INTSAFE_OP(Name, Type, Error, Builtin, First, Second)     \
    static inline NTSTATUS Name(Type First, Type Second, Type *pResult) { \
        Type result;                                                      \
        if (__builtin_##Builtin##_overflow(First, Second, &result)) {     \
            *pResult = (Type)(Error);                                     \
            return STATUS_INTEGER_OVERFLOW;                               \
        }                                                                 \
        *pResult = result;                                                \
        return STATUS_SUCCESS;                                            \
    }

/* Rtl<From>To<To>(From Operand, To *Result): the value if To can hold it. */
#define SOFTNDK_INTSAFE_CONVERT(Name, From, To, Error)       \
    static inline NTSTATUS Name(From Operand, To *pResult) { \
        To result;                                           \
        if (__builtin_add_overflow(Operand, 0, &result)) {   \
            *pResult = (To)(Error);                          \
            return STATUS_INTEGER_OVERFLOW;                  \
        }                                                    \
        *pResult = result;                                   \
        return STATUS_SUCCESS;                               \
    }

SOFTNDK_INTSAFE_OP(RtlUShortAdd, USHORT, USHORT_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlUShortSub, USHORT, USHORT_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlUShortMult, USHORT, USHORT_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlWordAdd, WORD, WORD_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlWordSub, WORD, WORD_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlWordMult, WORD, WORD_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlUIntAdd, UINT, UINT_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlUIntSub, UINT, UINT_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlUIntMult, UINT, UINT_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlULongAdd, ULONG, ULONG_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlULongSub, ULONG, ULONG_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlULongMult, ULONG, ULONG_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlDWordAdd, DWORD, DWORD_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlDWordSub, DWORD, DWORD_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlDWordMult, DWORD, DWORD_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlULongLongAdd, ULONGLONG, ULONGLONG_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlULongLongSub, ULONGLONG, ULONGLONG_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlULongLongMult, ULONGLONG, ULONGLONG_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlULong64Add, ULONG64, ULONG64_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlULong64Sub, ULONG64, ULONG64_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlULong64Mult, ULONG64, ULONG64_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlDWord64Add, DWORD64, DWORD64_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlDWord64Sub, DWORD64, DWORD64_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlDWord64Mult, DWORD64, DWORD64_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlUInt64Add, UINT64, UINT64_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlUInt64Sub, UINT64, UINT64_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlUInt64Mult, UINT64, UINT64_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlSizeTAdd, size_t, SIZE_T_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlSizeTSub, size_t, SIZE_T_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlSizeTMult, size_t, SIZE_T_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlSIZETAdd, SIZE_T, SIZE_T_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlSIZETSub, SIZE_T, SIZE_T_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlSIZETMult, SIZE_T, SIZE_T_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlULongPtrAdd, ULONG_PTR, ULONG_PTR_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlULongPtrSub, ULONG_PTR, ULONG_PTR_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlULongPtrMult, ULONG_PTR, ULONG_PTR_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlUIntPtrAdd, UINT_PTR, UINT_PTR_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlUIntPtrSub, UINT_PTR, UINT_PTR_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlUIntPtrMult, UINT_PTR, UINT_PTR_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlDWordPtrAdd, DWORD_PTR, DWORD_PTR_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlDWordPtrSub, DWORD_PTR, DWORD_PTR_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlDWordPtrMult, DWORD_PTR, DWORD_PTR_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlShortAdd, SHORT, SHORT_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlShortSub, SHORT, SHORT_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlShortMult, SHORT, SHORT_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlIntAdd, INT, INT_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlIntSub, INT, INT_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlIntMult, INT, INT_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlLongAdd, LONG, LONG_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlLongSub, LONG, LONG_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlLongMult, LONG, LONG_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlLongLongAdd, LONGLONG, LONGLONG_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlLongLongSub, LONGLONG, LONGLONG_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlLongLongMult, LONGLONG, LONGLONG_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlInt64Add, INT64, INT64_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlInt64Sub, INT64, INT64_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlInt64Mult, INT64, INT64_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlLong64Add, LONG64, LONG64_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlLong64Sub, LONG64, LONG64_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlLong64Mult, LONG64, LONG64_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlLongPtrAdd, LONG_PTR, LONG_PTR_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlLongPtrSub, LONG_PTR, LONG_PTR_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlLongPtrMult, LONG_PTR, LONG_PTR_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlIntPtrAdd, INT_PTR, INT_PTR_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlIntPtrSub, INT_PTR, INT_PTR_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlIntPtrMult, INT_PTR, INT_PTR_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_OP(RtlSSIZETAdd, SSIZE_T, SSIZE_T_ERROR, add, Augend, Addend)
SOFTNDK_INTSAFE_OP(RtlSSIZETSub, SSIZE_T, SSIZE_T_ERROR, sub, Minuend, Subtrahend)
SOFTNDK_INTSAFE_OP(RtlSSIZETMult, SSIZE_T, SSIZE_T_ERROR, mul, Multiplicand, Multiplier)
SOFTNDK_INTSAFE_CONVERT(RtlULongLongToULong, ULONGLONG, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongLongToUInt, ULONGLONG, UINT, UINT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongLongToSizeT, ULONGLONG, size_t, SIZE_T_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongLongToULongPtr, ULONGLONG, ULONG_PTR, ULONG_PTR_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongLongToLongLong, ULONGLONG, LONGLONG, LONGLONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongLongToLong, ULONGLONG, LONG, LONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongLongToUShort, ULONGLONG, USHORT, USHORT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongToUShort, ULONG, USHORT, USHORT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongToUChar, ULONG, UCHAR, UCHAR_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongToLong, ULONG, LONG, LONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongToInt, ULONG, INT, INT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongToShort, ULONG, SHORT, SHORT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlSizeTToULong, size_t, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlSizeTToUInt, size_t, UINT, UINT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlSizeTToUShort, size_t, USHORT, USHORT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlSizeTToLong, size_t, LONG, LONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlSizeTToInt, size_t, INT, INT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlSIZETToULong, SIZE_T, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongPtrToULong, ULONG_PTR, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongPtrToUInt, ULONG_PTR, UINT, UINT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongPtrToUShort, ULONG_PTR, USHORT, USHORT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlULongPtrToLong, ULONG_PTR, LONG, LONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlUIntPtrToULong, UINT_PTR, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlUIntPtrToUInt, UINT_PTR, UINT, UINT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlUIntToUShort, UINT, USHORT, USHORT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlUIntToLong, UINT, LONG, LONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlUIntToInt, UINT, INT, INT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlUShortToUChar, USHORT, UCHAR, UCHAR_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongToULong, LONG, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongToUInt, LONG, UINT, UINT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongToSizeT, LONG, size_t, SIZE_T_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongToULongPtr, LONG, ULONG_PTR, ULONG_PTR_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongToUShort, LONG, USHORT, USHORT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongToULongLong, LONG, ULONGLONG, ULONGLONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlIntToUInt, INT, UINT, UINT_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlIntToULong, INT, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlIntToSizeT, INT, size_t, SIZE_T_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongLongToULongLong, LONGLONG, ULONGLONG, ULONGLONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongLongToULong, LONGLONG, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongLongToLong, LONGLONG, LONG, LONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongLongToSizeT, LONGLONG, size_t, SIZE_T_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongPtrToULong, LONG_PTR, ULONG, ULONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongPtrToLong, LONG_PTR, LONG, LONG_ERROR)
SOFTNDK_INTSAFE_CONVERT(RtlLongPtrToULongPtr, LONG_PTR, ULONG_PTR, ULONG_PTR_ERROR)

#undef SOFTNDK_INTSAFE_OP
#undef SOFTNDK_INTSAFE_CONVERT

#ifdef __cplusplus
}
#endif

#endif /* _NTINTSAFE_H_INCLUDED_ */
