/*
 * ntdef.h - SoftNDK user-mode stand-in for the WDK's base type header.
 *
 * Windows is LLP64; Linux x86-64 is LP64. Every width below is chosen so that
 * structures declared with these types have the same x64 layout on Linux as
 * on Windows:
 *   - ULONG/LONG are 32-bit (never `unsigned long`/`long`, which are 64-bit
 *     on Linux and would silently break every NDK struct);
 *   - ULONG_PTR/SIZE_T/LONG_PTR are pointer-sized;
 *   - BOOLEAN is one byte, not C++ `bool`;
 *   - NTSTATUS is a signed 32-bit value (errors are negative).
 *
 * One deliberate difference: WCHAR is the platform wchar_t (4 bytes on Linux,
 * 2 on Windows), so that unchanged consumer code using L"..." literals with
 * UNICODE_STRING compiles. No NDK structure contains a WCHAR. UNICODE_STRING
 * lengths stay in bytes, so they are 4 per character here (see wdm.h's string
 * helpers); code that uses sizeof(WCHAR) is unaffected.
 *
 * Compiles as C11 and as C++20, alone or after <sys/socket.h>.
 */
#ifndef _NTDEF_
#define _NTDEF_

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* The whole WDK annotation surface, as the WDK's ntdef.h brings it: kernelspecs.h
 * includes driverspecs.h, which includes specstrings.h, which includes sal.h (and so
 * concurrencysal.h), specstrings_strict.h and sdv_driverspecs.h. */
#include <kernelspecs.h>
#include <specstrings.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Calling conventions and storage-class keywords (all no-ops on Linux x86-64). */
#ifndef NTAPI
#define NTAPI
#endif
#ifndef NTSYSAPI
#define NTSYSAPI
#endif
#ifndef NTKERNELAPI
#define NTKERNELAPI
#endif
#ifndef NTHALAPI
#define NTHALAPI
#endif
#ifndef __stdcall
#define __stdcall
#endif
#ifndef __cdecl
#define __cdecl
#endif
#ifndef __fastcall
#define __fastcall
#endif
#ifndef FASTCALL
#define FASTCALL
#endif
#ifndef FORCEINLINE
#define FORCEINLINE static inline __attribute__((always_inline))
#endif
#ifndef DECLSPEC_ALIGN
#define DECLSPEC_ALIGN(x) __attribute__((aligned(x)))
#endif
#ifndef DECLSPEC_NOINLINE
#define DECLSPEC_NOINLINE __attribute__((noinline))
#endif
#ifndef DECLSPEC_NORETURN
#define DECLSPEC_NORETURN __attribute__((noreturn))
#endif
#ifndef DECLSPEC_CACHEALIGN
#define DECLSPEC_CACHEALIGN DECLSPEC_ALIGN(64)
#endif
#ifndef DECLSPEC_SELECTANY
#define DECLSPEC_SELECTANY __attribute__((weak))
#endif
#ifndef DUMMYSTRUCTNAME
#define DUMMYSTRUCTNAME
#endif
#ifndef DUMMYUNIONNAME
#define DUMMYUNIONNAME
#endif

#ifndef VOID
#define VOID void
#endif
#ifndef CONST
#define CONST const
#endif
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef OPTIONAL
#define OPTIONAL
#endif
#ifndef UNALIGNED
#define UNALIGNED
#endif

/* ---- Integer types with their Windows (LLP64) widths. */
typedef char CHAR;
typedef char CCHAR;
typedef int16_t SHORT;
typedef int32_t LONG;
typedef int32_t INT;
typedef unsigned char UCHAR;
typedef uint16_t USHORT;
typedef uint32_t ULONG;
typedef uint32_t UINT;
typedef int16_t CSHORT;
typedef uint8_t BYTE;
typedef uint16_t WORD;
typedef uint32_t DWORD;
typedef int64_t LONGLONG;
typedef uint64_t ULONGLONG;
typedef int64_t LONG64;
typedef uint64_t ULONG64;
typedef uint64_t DWORD64;
typedef int8_t INT8;
typedef int16_t INT16;
typedef int32_t INT32;
typedef int64_t INT64;
typedef uint8_t UINT8;
typedef uint16_t UINT16;
typedef uint32_t UINT32;
typedef uint64_t UINT64;
typedef intptr_t LONG_PTR;
typedef uintptr_t ULONG_PTR;
typedef intptr_t INT_PTR;
typedef uintptr_t UINT_PTR;
typedef ULONG_PTR SIZE_T;
typedef LONG_PTR SSIZE_T;
typedef ULONG_PTR DWORD_PTR;
typedef wchar_t WCHAR;
typedef UCHAR BOOLEAN;
typedef BOOLEAN *PBOOLEAN;
typedef ULONG LOGICAL;
typedef ULONG *PLOGICAL;

typedef void *PVOID;
typedef void *HANDLE;
typedef HANDLE *PHANDLE;
typedef CHAR *PCHAR;
typedef CHAR *PSTR;
typedef const CHAR *PCSTR;
typedef CHAR *PSZ;
typedef const CHAR *PCSZ;
typedef UCHAR *PUCHAR;
typedef SHORT *PSHORT;
typedef USHORT *PUSHORT;
typedef LONG *PLONG;
typedef ULONG *PULONG;
typedef LONGLONG *PLONGLONG;
typedef ULONGLONG *PULONGLONG;
typedef ULONG64 *PULONG64;
typedef UINT32 *PUINT32;
typedef UINT64 *PUINT64;
typedef ULONG_PTR *PULONG_PTR;
typedef SIZE_T *PSIZE_T;
typedef WCHAR *PWCHAR;
typedef WCHAR *PWCH;
typedef WCHAR *PWSTR;
typedef const WCHAR *PCWSTR;
typedef WCHAR *NWPSTR;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

#define MAXUCHAR 0xff
#define MAXUSHORT 0xffff
#define MAXULONG 0xffffffffU
#define MAXLONG 0x7fffffff
#define MINLONG ((LONG)0x80000000)
#define MAXLONGLONG ((LONGLONG)0x7fffffffffffffffLL)
#define MAXULONG_PTR (~((ULONG_PTR)0))
#define MAXSIZE_T ((SIZE_T)~((SIZE_T)0))

/* ---- NTSTATUS and its classification macros. */
typedef LONG NTSTATUS;
typedef NTSTATUS *PNTSTATUS;

/* Success and informational codes are >= 0; warnings (0x8...) and errors (0xC...)
 * are negative as 32-bit signed values. STATUS_PENDING counts as success, so
 * callers test `== STATUS_PENDING` before NT_SUCCESS. */
#define NT_SUCCESS(Status) (((NTSTATUS)(Status)) >= 0)
#define NT_INFORMATION(Status) ((((ULONG)(Status)) >> 30) == 1)
#define NT_WARNING(Status) ((((ULONG)(Status)) >> 30) == 2)
#define NT_ERROR(Status) ((((ULONG)(Status)) >> 30) == 3)

/* ---- 64-bit integers as unions (consumers use .QuadPart, .LowPart, .HighPart). */
typedef union _LARGE_INTEGER {
    struct {
        ULONG LowPart;
        LONG HighPart;
    } DUMMYSTRUCTNAME;
    struct {
        ULONG LowPart;
        LONG HighPart;
    } u;
    LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;

typedef union _ULARGE_INTEGER {
    struct {
        ULONG LowPart;
        ULONG HighPart;
    } DUMMYSTRUCTNAME;
    struct {
        ULONG LowPart;
        ULONG HighPart;
    } u;
    ULONGLONG QuadPart;
} ULARGE_INTEGER, *PULARGE_INTEGER;

typedef LARGE_INTEGER PHYSICAL_ADDRESS, *PPHYSICAL_ADDRESS;

/* ---- GUID (guiddef.h). */
#ifndef GUID_DEFINED
#define GUID_DEFINED
typedef struct _GUID {
    ULONG Data1;
    USHORT Data2;
    USHORT Data3;
    UCHAR Data4[8];
} GUID;
#endif
typedef GUID *LPGUID;
typedef const GUID *LPCGUID;
typedef GUID IID;
#ifndef __cplusplus
#define REFGUID const GUID *const
#else
#define REFGUID const GUID &
#endif

/* ---- Doubly and singly linked lists (inline helpers live in wdm.h). */
typedef struct _LIST_ENTRY {
    struct _LIST_ENTRY *Flink;
    struct _LIST_ENTRY *Blink;
} LIST_ENTRY, *PLIST_ENTRY, *PRLIST_ENTRY;

typedef struct _SINGLE_LIST_ENTRY {
    struct _SINGLE_LIST_ENTRY *Next;
} SINGLE_LIST_ENTRY, *PSINGLE_LIST_ENTRY;

/* ---- Counted strings. Length and MaximumLength are in bytes, not characters. */
typedef struct _UNICODE_STRING {
    USHORT Length;
    USHORT MaximumLength;
    PWCH Buffer;
} UNICODE_STRING, *PUNICODE_STRING;
typedef const UNICODE_STRING *PCUNICODE_STRING;

typedef struct _STRING {
    USHORT Length;
    USHORT MaximumLength;
    PCHAR Buffer;
} STRING, ANSI_STRING, *PSTRING, *PANSI_STRING;
typedef const STRING *PCSTRING;
typedef const ANSI_STRING *PCANSI_STRING;

#define UNICODE_NULL ((WCHAR)0)
#define ANSI_NULL ((CHAR)0)

/* A counted string over a string literal (L"..." for UNICODE_STRING, "..." for
 * ANSI_STRING), usable in static initialisers: Length excludes the terminator,
 * MaximumLength includes it. As in the WDK the literal is not copied and must not
 * be written through Buffer; in C++ the literal's const is cast away (the WDK's
 * C++ template does the same). DECLARE_CONST_UNICODE_STRING(name, L"...") declares
 * a const UNICODE_STRING `name` over a const array `name_buffer`;
 * DECLARE_UNICODE_STRING_SIZE(name, n) an empty one with room for n WCHARs. */
#ifdef __cplusplus
}
/* extern "C++": C++ drivers include the WDK headers inside extern "C". */
extern "C++" {
constexpr PWCH SoftNdkConstantStringBuffer(const WCHAR *s) {
    return const_cast<PWCH>(s);
}
constexpr PCHAR SoftNdkConstantStringBuffer(const CHAR *s) {
    return const_cast<PCHAR>(s);
}
}
extern "C" {
#else
#define SoftNdkConstantStringBuffer(s) (s)
#endif
#define RTL_CONSTANT_STRING(s) \
    {(USHORT)(sizeof(s) - sizeof((s)[0])), (USHORT)sizeof(s), SoftNdkConstantStringBuffer(s)}
#define DECLARE_CONST_UNICODE_STRING(_var, _string)                         \
    const WCHAR _var##_buffer[] = _string;                                  \
    const UNICODE_STRING _var = {(USHORT)(sizeof(_string) - sizeof(WCHAR)), \
                                 (USHORT)sizeof(_string), (PWCH)_var##_buffer}
#define DECLARE_GLOBAL_CONST_UNICODE_STRING(_var, _str) \
    extern const UNICODE_STRING _var;                   \
    DECLARE_CONST_UNICODE_STRING(_var, _str)
#define DECLARE_UNICODE_STRING_SIZE(_var, _size) \
    WCHAR _var##_buffer[_size];                  \
    UNICODE_STRING _var = {0, (USHORT)((_size) * sizeof(WCHAR)), _var##_buffer}

/* ---- Object attributes, as PsCreateSystemThread and the Zw* calls take them.
 * The registry, file, directory and callback calls use ObjectName, RootDirectory
 * and Attributes (softndk_wdm_system.h: the object namespace); security
 * descriptors are accepted and never checked. */
#define OBJ_INHERIT            0x00000002
#define OBJ_PERMANENT          0x00000010
#define OBJ_EXCLUSIVE          0x00000020
#define OBJ_CASE_INSENSITIVE   0x00000040
#define OBJ_OPENIF             0x00000080
#define OBJ_OPENLINK           0x00000100
#define OBJ_KERNEL_HANDLE      0x00000200
#define OBJ_FORCE_ACCESS_CHECK 0x00000400
#define OBJ_VALID_ATTRIBUTES   0x000007F2

typedef struct _OBJECT_ATTRIBUTES {
    ULONG Length;
    HANDLE RootDirectory;
    PUNICODE_STRING ObjectName;
    ULONG Attributes;
    PVOID SecurityDescriptor;
    PVOID SecurityQualityOfService;
} OBJECT_ATTRIBUTES, *POBJECT_ATTRIBUTES;
typedef const OBJECT_ATTRIBUTES *PCOBJECT_ATTRIBUTES;

/* A braced block, exactly as in the WDK, so `InitializeObjectAttributes(...);` is a
 * statement. */
#define InitializeObjectAttributes(p, n, a, r, s) \
    {                                             \
        (p)->Length = sizeof(OBJECT_ATTRIBUTES);  \
        (p)->RootDirectory = (r);                 \
        (p)->Attributes = (a);                    \
        (p)->ObjectName = (n);                    \
        (p)->SecurityDescriptor = (s);            \
        (p)->SecurityQualityOfService = NULL;     \
    }

/* ---- Offsets and containers. */
#define FIELD_OFFSET(type, field) ((LONG)offsetof(type, field))
#define RTL_FIELD_SIZE(type, field) (sizeof(((type *)0)->field))
#define RTL_SIZEOF_THROUGH_FIELD(type, field) (FIELD_OFFSET(type, field) + RTL_FIELD_SIZE(type, field))
#define RTL_NUMBER_OF(a) (sizeof(a) / sizeof((a)[0]))
#define ARRAYSIZE(a) RTL_NUMBER_OF(a)
#define CONTAINING_RECORD(address, type, field) \
    ((type *)((PCHAR)(address) - (ULONG_PTR)offsetof(type, field)))

#define UNREFERENCED_PARAMETER(P) ((void)(P))

/* TRUE when an optional pointer parameter was supplied (not NULL). */
#define ARGUMENT_PRESENT(ArgumentPointer) \
    ((CHAR *)((ULONG_PTR)(ArgumentPointer)) != (CHAR *)(NULL))

/* min/max, as the WDK's ntdef.h defines them unless NOMINMAX - as macros, also in C++.
 * In C always. In C++ only with SOFTNDK_LEGACY_SAL (the C++ driver mode, see
 * softndk_sal.h): function-like macros named min and max break every later
 * standard header that declares or calls min()/max() (<algorithm>, <limits>,
 * <random>, ...), so that mode first includes those headers (softndk_sal.h's
 * prelude, which specstrings.h above has already run) and later #includes of them
 * are no-ops. Driver code then writes (std::min)(a, b) and
 * (std::numeric_limits<T>::max)(), as it must on Windows, or defines NOMINMAX. */
#if !defined(NOMINMAX) && (!defined(__cplusplus) || SOFTNDK_SAL_LEGACY_NAMES)
#ifndef max
#define max(a, b) (((a) > (b)) ? (a) : (b))
#endif
#ifndef min
#define min(a, b) (((a) < (b)) ? (a) : (b))
#endif
#endif
#define DBG_UNREFERENCED_PARAMETER(P) ((void)(P))
#define DBG_UNREFERENCED_LOCAL_VARIABLE(V) ((void)(V))

#ifdef __cplusplus
}
#endif

#endif /* _NTDEF_ */
