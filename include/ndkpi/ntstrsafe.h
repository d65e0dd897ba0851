/*
 * ntstrsafe.h - SoftNDK user-mode stand-in for the WDK's kernel safe-string
 * functions, implemented by the SoftNDK WDK runtime (runtime/strsafe.cpp).
 *
 * Rules, as in the WDK:
 *   - Cch functions take sizes in characters, Cb functions in bytes (a Cb size
 *     is divided by sizeof(CHAR) / sizeof(WCHAR); WCHAR is wchar_t, 4 bytes here,
 *     see ntdef.h). A destination size of 0, or above NTSTRSAFE_MAX_CCH
 *     characters, is STATUS_INVALID_PARAMETER and nothing is written (above the
 *     maximum the destination's first character is set to NUL).
 *   - Copy, Cat and Printf always leave the destination NUL-terminated. When the
 *     result does not fit they store as much as fits (truncated at a character
 *     boundary) plus the terminator and return STATUS_BUFFER_OVERFLOW.
 *   - Cat: a destination with no terminator within its size is
 *     STATUS_INVALID_PARAMETER (and is left as it was).
 *   - CopyN / CatN copy at most cchToCopy / cbToCopy characters of the source
 *     (stopping at its terminator); more than NTSTRSAFE_MAX_CCH is
 *     STATUS_INVALID_PARAMETER.
 *   - Length: STATUS_INVALID_PARAMETER (and *pcchLength / *pcbLength = 0) when
 *     psz is NULL, cchMax is 0 or above NTSTRSAFE_MAX_CCH, or no terminator lies
 *     within cchMax characters; the length pointer may be NULL.
 *   - Printf formats are Windows': "l" is 32 bits, I64/I32/I size prefixes,
 *     %ws/%ls wide and %hs narrow strings, %wZ PUNICODE_STRING, %Z PANSI_STRING
 *     (the runtime's DbgPrint formatter). In the W functions, as in Windows'
 *     wide printf, %s and %c take WIDE arguments and %S / %C narrow ones. Wide
 *     text is UTF-8 inside the narrow (A) results.
 *   - Ex variants take dwFlags: STRSAFE_IGNORE_NULLS (a NULL source is ""),
 *     STRSAFE_FILL_BEHIND_NULL (fill the rest of the buffer with the low byte of
 *     the flags), STRSAFE_FILL_ON_FAILURE (on failure, fill the whole buffer with
 *     that byte, NUL at the end), STRSAFE_NULL_ON_FAILURE (on failure, leave an
 *     empty string), STRSAFE_NO_TRUNCATION (on overflow, leave the destination
 *     as it was before the call: for Cat the old string, for Copy/Printf "").
 *     ppszDestEnd / pcchRemaining (optional) receive the terminator's address and
 *     the characters left including it.
 *   - RtlUnicodeString* work on UNICODE_STRINGs, whose Length / MaximumLength
 *     are in bytes and must be multiples of sizeof(WCHAR) with Length <=
 *     MaximumLength, and a non-NULL Buffer when MaximumLength is not 0; anything
 *     else is STATUS_INVALID_PARAMETER. They never write a terminator: the
 *     result is Length bytes of Buffer. Overflow stores what fits (Length =
 *     MaximumLength rounded down to whole characters) and returns
 *     STATUS_BUFFER_OVERFLOW. NTSTRSAFE_UNICODE_STRING_MAX_CCH is the most a
 *     USHORT byte length can hold (16383 characters with 4-byte WCHAR; 32767 on
 *     Windows).
 *
 * Compiles as C11 and C++20.
 */
#ifndef _NTSTRSAFE_H_INCLUDED_
#define _NTSTRSAFE_H_INCLUDED_

#include <stdarg.h>
#include <stddef.h>

#include <ntdef.h>
#include <ntstatus.h>

#include <sal.h>

/* SAL annotations this header uses that older sal.h stand-ins lack (no effect). */
#ifndef _In_reads_or_z_
#define _In_reads_or_z_(size)
#endif
#ifndef _Outptr_opt_result_buffer_
#define _Outptr_opt_result_buffer_(size)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NTSTRSAFEDDI
#define NTSTRSAFEDDI NTSTATUS NTAPI
#endif
#ifndef NTSTRSAFEWORKERDDI
#define NTSTRSAFEWORKERDDI NTSTATUS NTAPI
#endif

typedef char *NTSTRSAFE_PSTR;
typedef const char *NTSTRSAFE_PCSTR;
typedef wchar_t *NTSTRSAFE_PWSTR;
typedef const wchar_t *NTSTRSAFE_PCWSTR;
typedef ULONG STRSAFE_DWORD;

#define NTSTRSAFE_MAX_CCH                2147483647
#define NTSTRSAFE_MAX_LENGTH             (NTSTRSAFE_MAX_CCH - 1)
#define NTSTRSAFE_UNICODE_STRING_MAX_CCH (0xffff / sizeof(wchar_t))

#define STRSAFE_IGNORE_NULLS              0x00000100
#define STRSAFE_FILL_BEHIND_NULL          0x00000200
#define STRSAFE_FILL_ON_FAILURE           0x00000400
#define STRSAFE_NULL_ON_FAILURE           0x00000800
#define STRSAFE_NO_TRUNCATION             0x00001000
#define STRSAFE_FILL_BYTE(x)              ((STRSAFE_DWORD)(((x)&0x000000FF) | STRSAFE_FILL_BEHIND_NULL))
#define STRSAFE_FAILURE_BYTE(x)           ((STRSAFE_DWORD)(((x)&0x000000FF) | STRSAFE_FILL_ON_FAILURE))
#define STRSAFE_GET_FILL_PATTERN(dwFlags) ((int)((dwFlags)&0x000000FF))

/* ---- Copy. */
NTSTRSAFEDDI RtlStringCchCopyA(_Out_writes_(cchDest) NTSTRSAFE_PSTR pszDest, _In_ size_t cchDest,
                               _In_ NTSTRSAFE_PCSTR pszSrc);
NTSTRSAFEDDI RtlStringCchCopyW(_Out_writes_(cchDest) NTSTRSAFE_PWSTR pszDest, _In_ size_t cchDest,
                               _In_ NTSTRSAFE_PCWSTR pszSrc);
NTSTRSAFEDDI RtlStringCbCopyA(_Out_writes_bytes_(cbDest) NTSTRSAFE_PSTR pszDest, _In_ size_t cbDest,
                              _In_ NTSTRSAFE_PCSTR pszSrc);
NTSTRSAFEDDI RtlStringCbCopyW(_Out_writes_bytes_(cbDest) NTSTRSAFE_PWSTR pszDest,
                              _In_ size_t cbDest, _In_ NTSTRSAFE_PCWSTR pszSrc);
NTSTRSAFEDDI RtlStringCchCopyNA(_Out_writes_(cchDest) NTSTRSAFE_PSTR pszDest, _In_ size_t cchDest,
                                _In_reads_or_z_(cchToCopy) NTSTRSAFE_PCSTR pszSrc,
                                _In_ size_t cchToCopy);
NTSTRSAFEDDI RtlStringCchCopyNW(_Out_writes_(cchDest) NTSTRSAFE_PWSTR pszDest, _In_ size_t cchDest,
                                _In_reads_or_z_(cchToCopy) NTSTRSAFE_PCWSTR pszSrc,
                                _In_ size_t cchToCopy);
NTSTRSAFEDDI RtlStringCbCopyNA(_Out_writes_bytes_(cbDest) NTSTRSAFE_PSTR pszDest,
                               _In_ size_t cbDest,
                               _In_reads_bytes_(cbToCopy) NTSTRSAFE_PCSTR pszSrc,
                               _In_ size_t cbToCopy);
NTSTRSAFEDDI RtlStringCbCopyNW(_Out_writes_bytes_(cbDest) NTSTRSAFE_PWSTR pszDest,
                               _In_ size_t cbDest,
                               _In_reads_bytes_(cbToCopy) NTSTRSAFE_PCWSTR pszSrc,
                               _In_ size_t cbToCopy);
NTSTRSAFEDDI RtlStringCchCopyExA(_Out_writes_(cchDest) NTSTRSAFE_PSTR pszDest, _In_ size_t cchDest,
                                 _In_ NTSTRSAFE_PCSTR pszSrc,
                                 _Outptr_opt_result_buffer_(*pcchRemaining)
                                     NTSTRSAFE_PSTR *ppszDestEnd,
                                 _Out_opt_ size_t *pcchRemaining, _In_ STRSAFE_DWORD dwFlags);
NTSTRSAFEDDI RtlStringCchCopyExW(_Out_writes_(cchDest) NTSTRSAFE_PWSTR pszDest, _In_ size_t cchDest,
                                 _In_ NTSTRSAFE_PCWSTR pszSrc,
                                 _Outptr_opt_result_buffer_(*pcchRemaining)
                                     NTSTRSAFE_PWSTR *ppszDestEnd,
                                 _Out_opt_ size_t *pcchRemaining, _In_ STRSAFE_DWORD dwFlags);

/* ---- Concatenate. */
NTSTRSAFEDDI RtlStringCchCatA(_Inout_updates_(cchDest) NTSTRSAFE_PSTR pszDest, _In_ size_t cchDest,
                              _In_ NTSTRSAFE_PCSTR pszSrc);
NTSTRSAFEDDI RtlStringCchCatW(_Inout_updates_(cchDest) NTSTRSAFE_PWSTR pszDest, _In_ size_t cchDest,
                              _In_ NTSTRSAFE_PCWSTR pszSrc);
NTSTRSAFEDDI RtlStringCbCatA(_Inout_updates_bytes_(cbDest) NTSTRSAFE_PSTR pszDest,
                             _In_ size_t cbDest, _In_ NTSTRSAFE_PCSTR pszSrc);
NTSTRSAFEDDI RtlStringCbCatW(_Inout_updates_bytes_(cbDest) NTSTRSAFE_PWSTR pszDest,
                             _In_ size_t cbDest, _In_ NTSTRSAFE_PCWSTR pszSrc);
NTSTRSAFEDDI RtlStringCchCatNA(_Inout_updates_(cchDest) NTSTRSAFE_PSTR pszDest, _In_ size_t cchDest,
                               _In_reads_or_z_(cchToAppend) NTSTRSAFE_PCSTR pszSrc,
                               _In_ size_t cchToAppend);
NTSTRSAFEDDI RtlStringCchCatNW(_Inout_updates_(cchDest) NTSTRSAFE_PWSTR pszDest,
                               _In_ size_t cchDest,
                               _In_reads_or_z_(cchToAppend) NTSTRSAFE_PCWSTR pszSrc,
                               _In_ size_t cchToAppend);
NTSTRSAFEDDI RtlStringCchCatExA(_Inout_updates_(cchDest) NTSTRSAFE_PSTR pszDest,
                                _In_ size_t cchDest, _In_ NTSTRSAFE_PCSTR pszSrc,
                                _Outptr_opt_result_buffer_(*pcchRemaining)
                                    NTSTRSAFE_PSTR *ppszDestEnd,
                                _Out_opt_ size_t *pcchRemaining, _In_ STRSAFE_DWORD dwFlags);
NTSTRSAFEDDI RtlStringCchCatExW(_Inout_updates_(cchDest) NTSTRSAFE_PWSTR pszDest,
                                _In_ size_t cchDest, _In_ NTSTRSAFE_PCWSTR pszSrc,
                                _Outptr_opt_result_buffer_(*pcchRemaining)
                                    NTSTRSAFE_PWSTR *ppszDestEnd,
                                _Out_opt_ size_t *pcchRemaining, _In_ STRSAFE_DWORD dwFlags);

/* ---- Formatted output (Windows printf formats, see above). */
NTSTRSAFEDDI RtlStringCchPrintfA(_Out_writes_(cchDest) NTSTRSAFE_PSTR pszDest, _In_ size_t cchDest,
                                 _In_ _Printf_format_string_ NTSTRSAFE_PCSTR pszFormat, ...);
NTSTRSAFEDDI RtlStringCchPrintfW(_Out_writes_(cchDest) NTSTRSAFE_PWSTR pszDest, _In_ size_t cchDest,
                                 _In_ _Printf_format_string_ NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTRSAFEDDI RtlStringCbPrintfA(_Out_writes_bytes_(cbDest) NTSTRSAFE_PSTR pszDest,
                                _In_ size_t cbDest,
                                _In_ _Printf_format_string_ NTSTRSAFE_PCSTR pszFormat, ...);
NTSTRSAFEDDI RtlStringCbPrintfW(_Out_writes_bytes_(cbDest) NTSTRSAFE_PWSTR pszDest,
                                _In_ size_t cbDest,
                                _In_ _Printf_format_string_ NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTRSAFEDDI RtlStringCchVPrintfA(_Out_writes_(cchDest) NTSTRSAFE_PSTR pszDest, _In_ size_t cchDest,
                                  _In_ _Printf_format_string_ NTSTRSAFE_PCSTR pszFormat,
                                  _In_ va_list argList);
NTSTRSAFEDDI RtlStringCchVPrintfW(_Out_writes_(cchDest) NTSTRSAFE_PWSTR pszDest,
                                  _In_ size_t cchDest,
                                  _In_ _Printf_format_string_ NTSTRSAFE_PCWSTR pszFormat,
                                  _In_ va_list argList);
NTSTRSAFEDDI RtlStringCbVPrintfA(_Out_writes_bytes_(cbDest) NTSTRSAFE_PSTR pszDest,
                                 _In_ size_t cbDest,
                                 _In_ _Printf_format_string_ NTSTRSAFE_PCSTR pszFormat,
                                 _In_ va_list argList);
NTSTRSAFEDDI RtlStringCbVPrintfW(_Out_writes_bytes_(cbDest) NTSTRSAFE_PWSTR pszDest,
                                 _In_ size_t cbDest,
                                 _In_ _Printf_format_string_ NTSTRSAFE_PCWSTR pszFormat,
                                 _In_ va_list argList);
NTSTRSAFEDDI RtlStringCchPrintfExA(_Out_writes_(cchDest) NTSTRSAFE_PSTR pszDest,
                                   _In_ size_t cchDest,
                                   _Outptr_opt_result_buffer_(*pcchRemaining)
                                       NTSTRSAFE_PSTR *ppszDestEnd,
                                   _Out_opt_ size_t *pcchRemaining, _In_ STRSAFE_DWORD dwFlags,
                                   _In_ _Printf_format_string_ NTSTRSAFE_PCSTR pszFormat, ...);
NTSTRSAFEDDI RtlStringCchPrintfExW(_Out_writes_(cchDest) NTSTRSAFE_PWSTR pszDest,
                                   _In_ size_t cchDest,
                                   _Outptr_opt_result_buffer_(*pcchRemaining)
                                       NTSTRSAFE_PWSTR *ppszDestEnd,
                                   _Out_opt_ size_t *pcchRemaining, _In_ STRSAFE_DWORD dwFlags,
                                   _In_ _Printf_format_string_ NTSTRSAFE_PCWSTR pszFormat, ...);

/* ---- Length. */
NTSTRSAFEDDI RtlStringCchLengthA(_In_reads_or_z_(cchMax) NTSTRSAFE_PCSTR psz, _In_ size_t cchMax,
                                 _Out_opt_ size_t *pcchLength);
NTSTRSAFEDDI RtlStringCchLengthW(_In_reads_or_z_(cchMax) NTSTRSAFE_PCWSTR psz, _In_ size_t cchMax,
                                 _Out_opt_ size_t *pcchLength);
NTSTRSAFEDDI RtlStringCbLengthA(_In_reads_or_z_(cbMax) NTSTRSAFE_PCSTR psz, _In_ size_t cbMax,
                                _Out_opt_ size_t *pcbLength);
NTSTRSAFEDDI RtlStringCbLengthW(_In_reads_or_z_(cbMax / sizeof(wchar_t)) NTSTRSAFE_PCWSTR psz,
                                _In_ size_t cbMax, _Out_opt_ size_t *pcbLength);

/* ---- UNICODE_STRING. */
NTSTRSAFEDDI RtlUnicodeStringInit(_Out_ PUNICODE_STRING DestinationString,
                                  _In_opt_ NTSTRSAFE_PCWSTR pszSrc);
NTSTRSAFEDDI RtlUnicodeStringValidate(_In_opt_ PCUNICODE_STRING SourceString);
NTSTRSAFEDDI RtlUnicodeStringCopy(_Inout_ PUNICODE_STRING DestinationString,
                                  _In_ PCUNICODE_STRING SourceString);
NTSTRSAFEDDI RtlUnicodeStringCopyString(_Inout_ PUNICODE_STRING DestinationString,
                                        _In_ NTSTRSAFE_PCWSTR pszSrc);
NTSTRSAFEDDI RtlUnicodeStringCat(_Inout_ PUNICODE_STRING DestinationString,
                                 _In_ PCUNICODE_STRING SourceString);
NTSTRSAFEDDI RtlUnicodeStringCatString(_Inout_ PUNICODE_STRING DestinationString,
                                       _In_ NTSTRSAFE_PCWSTR pszSrc);
NTSTRSAFEDDI RtlUnicodeStringPrintf(_Inout_ PUNICODE_STRING DestinationString,
                                    _In_ _Printf_format_string_ NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTRSAFEDDI RtlUnicodeStringVPrintf(_Inout_ PUNICODE_STRING DestinationString,
                                     _In_ _Printf_format_string_ NTSTRSAFE_PCWSTR pszFormat,
                                     _In_ va_list argList);

#ifdef __cplusplus
}
#endif

#endif /* _NTSTRSAFE_H_INCLUDED_ */
