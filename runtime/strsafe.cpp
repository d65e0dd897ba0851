// ntstrsafe.h: the RtlString* safe string functions (A and W, Cch and Cb, Ex) and the
// RtlUnicodeString* ones, following the WDK's inline implementations (RtlString*Worker):
// validation first, then a copy that always terminates and reports truncation with
// STATUS_BUFFER_OVERFLOW. Printf goes through the runtime's Windows printf formatter
// (format_windows_printf), so %ws, %wZ, %I64d, ... mean what they mean on Windows.
#include <ntstrsafe.h>

#include <cstdint>
#include <cstring>
#include <cwchar>
#include <string>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr STRSAFE_DWORD kValidExFlags = 0xFF | STRSAFE_IGNORE_NULLS | STRSAFE_FILL_BEHIND_NULL |
                                        STRSAFE_FILL_ON_FAILURE | STRSAFE_NULL_ON_FAILURE |
                                        STRSAFE_NO_TRUNCATION;

// RtlStringValidateDest: a destination of 0 or more than NTSTRSAFE_MAX_CCH characters.
bool valid_destination_size(size_t cch) {
    return cch != 0 && cch <= NTSTRSAFE_MAX_CCH;
}

template <class Char>
size_t bounded_length(const Char *text, size_t max) {
    size_t n = 0;
    while (n < max && text[n] != Char{0})
        ++n;
    return n;
}

// RtlStringCopyWorker: copies up to `max_to_copy` characters of `source` (stopping at its
// terminator) into `destination` of `cch_destination` (> 0) characters; always terminates.
// `copied` receives the characters copied (the terminator excluded).
template <class Char>
NTSTATUS copy_worker(Char *destination, size_t cch_destination, const Char *source,
                     size_t max_to_copy, size_t *copied) {
    NTSTATUS status = STATUS_SUCCESS;
    size_t n = 0;
    while (cch_destination != 0 && max_to_copy != 0 && *source != Char{0}) {
        *destination++ = *source++;
        --cch_destination;
        --max_to_copy;
        ++n;
    }
    if (cch_destination == 0) {  // no room left for the terminator: give up the last character
        --destination;
        --n;
        status = STATUS_BUFFER_OVERFLOW;
    }
    *destination = Char{0};
    if (copied != nullptr) *copied = n;
    return status;
}

template <class Char>
NTSTATUS copy(Char *destination, size_t cch_destination, const Char *source, size_t max_to_copy) {
    if (!valid_destination_size(cch_destination)) {
        if (cch_destination != 0 && destination != nullptr) *destination = Char{0};
        return STATUS_INVALID_PARAMETER;
    }
    if (max_to_copy > NTSTRSAFE_MAX_CCH) {
        *destination = Char{0};
        return STATUS_INVALID_PARAMETER;
    }
    return copy_worker(destination, cch_destination, source, max_to_copy, nullptr);
}

template <class Char>
NTSTATUS concatenate(Char *destination, size_t cch_destination, const Char *source,
                     size_t max_to_append) {
    if (!valid_destination_size(cch_destination)) return STATUS_INVALID_PARAMETER;
    const size_t length = bounded_length(destination, cch_destination);
    if (length == cch_destination) return STATUS_INVALID_PARAMETER;  // not terminated
    if (max_to_append > NTSTRSAFE_MAX_CCH) return STATUS_INVALID_PARAMETER;
    return copy_worker(destination + length, cch_destination - length, source, max_to_append,
                       nullptr);
}

// The Ex forms' common part: `operation` fills [destination, destination + cch) from
// `start` (0 for copy and printf, the old length for cat) and reports how many characters it
// wrote after `start`; then the flags decide what a failure leaves behind.
template <class Char, class Operation>
NTSTATUS run_ex(Char *destination, size_t cch_destination, Char **destination_end,
                size_t *cch_remaining, STRSAFE_DWORD flags, bool is_cat, Operation operation) {
    if ((flags & ~kValidExFlags) != 0) return STATUS_INVALID_PARAMETER;
    if (cch_destination == 0 && (flags & STRSAFE_IGNORE_NULLS) != 0 && destination == nullptr) {
        // A NULL, empty destination is allowed with STRSAFE_IGNORE_NULLS: only an empty
        // result fits.
        const NTSTATUS status = operation(nullptr, size_t{0}, nullptr);
        if (NT_SUCCESS(status) || status == STATUS_BUFFER_OVERFLOW) {
            if (destination_end != nullptr) *destination_end = destination;
            if (cch_remaining != nullptr) *cch_remaining = 0;
        }
        return status;
    }
    if (!valid_destination_size(cch_destination) || destination == nullptr) {
        if (cch_destination != 0 && destination != nullptr && cch_destination > NTSTRSAFE_MAX_CCH)
            *destination = Char{0};
        return STATUS_INVALID_PARAMETER;
    }
    size_t start = 0;
    if (is_cat) {
        start = bounded_length(destination, cch_destination);
        if (start == cch_destination) return STATUS_INVALID_PARAMETER;
    }
    size_t written = 0;
    NTSTATUS status = operation(destination + start, cch_destination - start, &written);
    Char *end = destination + start + written;
    size_t remaining = cch_destination - start - written;
    if (NT_SUCCESS(status)) {
        if ((flags & STRSAFE_FILL_BEHIND_NULL) != 0 && remaining > 1) {
            std::memset(end + 1, STRSAFE_GET_FILL_PATTERN(flags), (remaining - 1) * sizeof(Char));
        }
    } else {
        if ((flags & STRSAFE_FILL_ON_FAILURE) != 0) {
            const int fill = STRSAFE_GET_FILL_PATTERN(flags);
            std::memset(destination, fill, cch_destination * sizeof(Char));
            if (fill == 0) {
                end = destination;
                remaining = cch_destination;
            } else {
                end = destination + cch_destination - 1;
                remaining = 1;
                *end = Char{0};
            }
        }
        if ((flags & (STRSAFE_NULL_ON_FAILURE | STRSAFE_NO_TRUNCATION)) != 0) {
            // Cat with NO_TRUNCATION keeps the old string; everything else leaves "".
            const size_t keep =
                is_cat && (flags & STRSAFE_NULL_ON_FAILURE) == 0 ? start : size_t{0};
            end = destination + keep;
            remaining = cch_destination - keep;
            *end = Char{0};
        }
    }
    if (NT_SUCCESS(status) || status == STATUS_BUFFER_OVERFLOW) {
        if (destination_end != nullptr) *destination_end = end;
        if (cch_remaining != nullptr) *cch_remaining = remaining;
    }
    return status;
}

// An Ex source: NULL is "" with STRSAFE_IGNORE_NULLS.
template <class Char>
const Char *ex_source(const Char *source, STRSAFE_DWORD flags) {
    static const Char empty[1] = {Char{0}};
    return source == nullptr && (flags & STRSAFE_IGNORE_NULLS) != 0 ? empty : source;
}

// ---- UTF-8 <-> wide, for the W printf forms.

std::string to_utf8(const wchar_t *text, size_t length) {
    std::string out;
    out.reserve(length);
    for (size_t i = 0; i < length; ++i) append_utf8(out, static_cast<uint32_t>(text[i]));
    return out;
}

// Malformed sequences become U+FFFD, one per byte that cannot start a character.
std::wstring from_utf8(const std::string &text) {
    std::wstring out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        if (lead < 0x80) {
            out += static_cast<wchar_t>(lead);
            ++i;
            continue;
        }
        const size_t extra = (lead >> 5) == 0x6    ? 1
                             : (lead >> 4) == 0xE  ? 2
                             : (lead >> 3) == 0x1E ? 3
                                                   : 0;
        bool ok = extra != 0 && i + extra < text.size();
        uint32_t c = lead & (0x3Fu >> extra);
        for (size_t k = 1; ok && k <= extra; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            ok = (next & 0xC0) == 0x80;
            c = (c << 6) | (next & 0x3Fu);
        }
        if (!ok) {
            out += L'\xFFFD';
            ++i;
            continue;
        }
        out += static_cast<wchar_t>(c);
        i += extra + 1;
    }
    return out;
}

// Windows' wide printf reads %s / %c as wide and %S / %C as narrow; the runtime's formatter
// reads them the other way (as DbgPrint does). Give every unprefixed s/S/c/C an explicit
// size prefix that says what the wide printf means.
std::string wide_printf_format(const std::string &format) {
    std::string out;
    size_t i = 0;
    while (i < format.size()) {
        if (format[i] != '%') {
            out += format[i++];
            continue;
        }
        out += format[i++];
        if (i < format.size() && format[i] == '%') {
            out += format[i++];
            continue;
        }
        while (i < format.size() && std::strchr("-+ #0123456789.*", format[i]) != nullptr) {
            out += format[i++];
        }
        if (i >= format.size()) break;
        const char c = format[i];
        if (c == 's' || c == 'c') {
            out += 'w';
        } else if (c == 'S' || c == 'C') {
            out += 'h';
            out += static_cast<char>(c == 'S' ? 's' : 'c');
            ++i;
            continue;
        }
        // A prefixed spec (hs, ls, ws, I64d, ...) keeps its meaning: copy the rest of it
        // through the main loop.
    }
    return out;
}

std::string format_narrow(const char *format, va_list args) {
    return format_windows_printf(format, args);
}

std::wstring format_wide(const wchar_t *format, va_list args) {
    if (format == nullptr) return L"(null format)";
    const std::string narrow_format = wide_printf_format(to_utf8(format, std::wcslen(format)));
    return from_utf8(format_windows_printf(narrow_format.c_str(), args));
}

template <class Char>
NTSTATUS print(Char *destination, size_t cch_destination,
               const std::basic_string<Char> &formatted) {
    if (!valid_destination_size(cch_destination)) {
        if (cch_destination != 0 && destination != nullptr) *destination = Char{0};
        return STATUS_INVALID_PARAMETER;
    }
    // Embedded NULs (a %c of 0) end the result, as they would on Windows' reading of it.
    return copy_worker(destination, cch_destination, formatted.c_str(), formatted.size(), nullptr);
}

template <class Char>
NTSTATUS length(const Char *text, size_t cch_max, size_t *cch_length) {
    if (text == nullptr || cch_max == 0 || cch_max > NTSTRSAFE_MAX_CCH) {
        if (cch_length != nullptr) *cch_length = 0;
        return STATUS_INVALID_PARAMETER;
    }
    const size_t n = bounded_length(text, cch_max);
    if (n == cch_max) {
        if (cch_length != nullptr) *cch_length = 0;
        return STATUS_INVALID_PARAMETER;
    }
    if (cch_length != nullptr) *cch_length = n;
    return STATUS_SUCCESS;
}

// ---- UNICODE_STRING.

bool valid_unicode_string(PCUNICODE_STRING string) {
    if (string == nullptr) return false;
    if (string->Length % sizeof(WCHAR) != 0 || string->MaximumLength % sizeof(WCHAR) != 0)
        return false;
    if (string->Length > string->MaximumLength) return false;
    if (string->Buffer == nullptr && string->MaximumLength != 0) return false;
    return true;
}

// Appends `count` characters of `source` at character `offset` of `destination` (whose
// Length is set to the result, truncated to MaximumLength).
NTSTATUS unicode_store(PUNICODE_STRING destination, size_t offset, const WCHAR *source,
                       size_t count) {
    const size_t capacity = destination->MaximumLength / sizeof(WCHAR);
    NTSTATUS status = STATUS_SUCCESS;
    size_t fits = count;
    if (offset + count > capacity) {
        fits = capacity - offset;
        status = STATUS_BUFFER_OVERFLOW;
    }
    if (fits != 0) std::memmove(destination->Buffer + offset, source, fits * sizeof(WCHAR));
    destination->Length = static_cast<USHORT>((offset + fits) * sizeof(WCHAR));
    return status;
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

NTSTATUS NTAPI RtlStringCchCopyA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc) {
    return wdk::copy(pszDest, cchDest, pszSrc, NTSTRSAFE_MAX_LENGTH);
}
NTSTATUS NTAPI RtlStringCchCopyW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc) {
    return wdk::copy(pszDest, cchDest, pszSrc, NTSTRSAFE_MAX_LENGTH);
}
NTSTATUS NTAPI RtlStringCbCopyA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc) {
    return wdk::copy(pszDest, cbDest / sizeof(char), pszSrc, NTSTRSAFE_MAX_LENGTH);
}
NTSTATUS NTAPI RtlStringCbCopyW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc) {
    return wdk::copy(pszDest, cbDest / sizeof(wchar_t), pszSrc, NTSTRSAFE_MAX_LENGTH);
}
NTSTATUS NTAPI RtlStringCchCopyNA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc,
                                  size_t cchToCopy) {
    return wdk::copy(pszDest, cchDest, pszSrc, cchToCopy);
}
NTSTATUS NTAPI RtlStringCchCopyNW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc,
                                  size_t cchToCopy) {
    return wdk::copy(pszDest, cchDest, pszSrc, cchToCopy);
}
NTSTATUS NTAPI RtlStringCbCopyNA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc,
                                 size_t cbToCopy) {
    return wdk::copy(pszDest, cbDest / sizeof(char), pszSrc, cbToCopy / sizeof(char));
}
NTSTATUS NTAPI RtlStringCbCopyNW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc,
                                 size_t cbToCopy) {
    return wdk::copy(pszDest, cbDest / sizeof(wchar_t), pszSrc, cbToCopy / sizeof(wchar_t));
}
NTSTATUS NTAPI RtlStringCchCopyExA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc,
                                   NTSTRSAFE_PSTR *ppszDestEnd, size_t *pcchRemaining,
                                   STRSAFE_DWORD dwFlags) {
    const char *source = wdk::ex_source(pszSrc, dwFlags);
    return wdk::run_ex(pszDest, cchDest, ppszDestEnd, pcchRemaining, dwFlags, false,
                       [source](char *to, size_t cch, size_t *written) -> NTSTATUS {
                           if (cch == 0)
                               return *source == '\0' ? STATUS_SUCCESS : STATUS_BUFFER_OVERFLOW;
                           return wdk::copy_worker(to, cch, source, NTSTRSAFE_MAX_LENGTH, written);
                       });
}
NTSTATUS NTAPI RtlStringCchCopyExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc,
                                   NTSTRSAFE_PWSTR *ppszDestEnd, size_t *pcchRemaining,
                                   STRSAFE_DWORD dwFlags) {
    const wchar_t *source = wdk::ex_source(pszSrc, dwFlags);
    return wdk::run_ex(pszDest, cchDest, ppszDestEnd, pcchRemaining, dwFlags, false,
                       [source](wchar_t *to, size_t cch, size_t *written) -> NTSTATUS {
                           if (cch == 0)
                               return *source == L'\0' ? STATUS_SUCCESS : STATUS_BUFFER_OVERFLOW;
                           return wdk::copy_worker(to, cch, source, NTSTRSAFE_MAX_LENGTH, written);
                       });
}

NTSTATUS NTAPI RtlStringCchCatA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc) {
    return wdk::concatenate(pszDest, cchDest, pszSrc, NTSTRSAFE_MAX_LENGTH);
}
NTSTATUS NTAPI RtlStringCchCatW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc) {
    return wdk::concatenate(pszDest, cchDest, pszSrc, NTSTRSAFE_MAX_LENGTH);
}
NTSTATUS NTAPI RtlStringCbCatA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc) {
    return wdk::concatenate(pszDest, cbDest / sizeof(char), pszSrc, NTSTRSAFE_MAX_LENGTH);
}
NTSTATUS NTAPI RtlStringCbCatW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc) {
    return wdk::concatenate(pszDest, cbDest / sizeof(wchar_t), pszSrc, NTSTRSAFE_MAX_LENGTH);
}
NTSTATUS NTAPI RtlStringCchCatNA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc,
                                 size_t cchToAppend) {
    return wdk::concatenate(pszDest, cchDest, pszSrc, cchToAppend);
}
NTSTATUS NTAPI RtlStringCchCatNW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc,
                                 size_t cchToAppend) {
    return wdk::concatenate(pszDest, cchDest, pszSrc, cchToAppend);
}
NTSTATUS NTAPI RtlStringCchCatExA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc,
                                  NTSTRSAFE_PSTR *ppszDestEnd, size_t *pcchRemaining,
                                  STRSAFE_DWORD dwFlags) {
    const char *source = wdk::ex_source(pszSrc, dwFlags);
    return wdk::run_ex(pszDest, cchDest, ppszDestEnd, pcchRemaining, dwFlags, true,
                       [source](char *to, size_t cch, size_t *written) -> NTSTATUS {
                           if (cch == 0)
                               return *source == '\0' ? STATUS_SUCCESS : STATUS_BUFFER_OVERFLOW;
                           return wdk::copy_worker(to, cch, source, NTSTRSAFE_MAX_LENGTH, written);
                       });
}
NTSTATUS NTAPI RtlStringCchCatExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc,
                                  NTSTRSAFE_PWSTR *ppszDestEnd, size_t *pcchRemaining,
                                  STRSAFE_DWORD dwFlags) {
    const wchar_t *source = wdk::ex_source(pszSrc, dwFlags);
    return wdk::run_ex(pszDest, cchDest, ppszDestEnd, pcchRemaining, dwFlags, true,
                       [source](wchar_t *to, size_t cch, size_t *written) -> NTSTATUS {
                           if (cch == 0)
                               return *source == L'\0' ? STATUS_SUCCESS : STATUS_BUFFER_OVERFLOW;
                           return wdk::copy_worker(to, cch, source, NTSTRSAFE_MAX_LENGTH, written);
                       });
}

NTSTATUS NTAPI RtlStringCchVPrintfA(NTSTRSAFE_PSTR pszDest, size_t cchDest,
                                    NTSTRSAFE_PCSTR pszFormat, va_list argList) {
    if (!wdk::valid_destination_size(cchDest)) return wdk::print(pszDest, cchDest, std::string());
    return wdk::print(pszDest, cchDest, wdk::format_narrow(pszFormat, argList));
}
NTSTATUS NTAPI RtlStringCchVPrintfW(NTSTRSAFE_PWSTR pszDest, size_t cchDest,
                                    NTSTRSAFE_PCWSTR pszFormat, va_list argList) {
    if (!wdk::valid_destination_size(cchDest)) return wdk::print(pszDest, cchDest, std::wstring());
    return wdk::print(pszDest, cchDest, wdk::format_wide(pszFormat, argList));
}
NTSTATUS NTAPI RtlStringCbVPrintfA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszFormat,
                                   va_list argList) {
    return RtlStringCchVPrintfA(pszDest, cbDest / sizeof(char), pszFormat, argList);
}
NTSTATUS NTAPI RtlStringCbVPrintfW(NTSTRSAFE_PWSTR pszDest, size_t cbDest,
                                   NTSTRSAFE_PCWSTR pszFormat, va_list argList) {
    return RtlStringCchVPrintfW(pszDest, cbDest / sizeof(wchar_t), pszFormat, argList);
}
NTSTATUS NTAPI RtlStringCchPrintfA(NTSTRSAFE_PSTR pszDest, size_t cchDest,
                                   NTSTRSAFE_PCSTR pszFormat, ...) {
    va_list args;
    va_start(args, pszFormat);
    const NTSTATUS status = RtlStringCchVPrintfA(pszDest, cchDest, pszFormat, args);
    va_end(args);
    return status;
}
NTSTATUS NTAPI RtlStringCchPrintfW(NTSTRSAFE_PWSTR pszDest, size_t cchDest,
                                   NTSTRSAFE_PCWSTR pszFormat, ...) {
    va_list args;
    va_start(args, pszFormat);
    const NTSTATUS status = RtlStringCchVPrintfW(pszDest, cchDest, pszFormat, args);
    va_end(args);
    return status;
}
NTSTATUS NTAPI RtlStringCbPrintfA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszFormat,
                                  ...) {
    va_list args;
    va_start(args, pszFormat);
    const NTSTATUS status = RtlStringCchVPrintfA(pszDest, cbDest / sizeof(char), pszFormat, args);
    va_end(args);
    return status;
}
NTSTATUS NTAPI RtlStringCbPrintfW(NTSTRSAFE_PWSTR pszDest, size_t cbDest,
                                  NTSTRSAFE_PCWSTR pszFormat, ...) {
    va_list args;
    va_start(args, pszFormat);
    const NTSTATUS status =
        RtlStringCchVPrintfW(pszDest, cbDest / sizeof(wchar_t), pszFormat, args);
    va_end(args);
    return status;
}
NTSTATUS NTAPI RtlStringCchPrintfExA(NTSTRSAFE_PSTR pszDest, size_t cchDest,
                                     NTSTRSAFE_PSTR *ppszDestEnd, size_t *pcchRemaining,
                                     STRSAFE_DWORD dwFlags, NTSTRSAFE_PCSTR pszFormat, ...) {
    va_list args;
    va_start(args, pszFormat);
    const std::string text = wdk::format_narrow(pszFormat, args);
    va_end(args);
    return wdk::run_ex(pszDest, cchDest, ppszDestEnd, pcchRemaining, dwFlags, false,
                       [&text](char *to, size_t cch, size_t *written) -> NTSTATUS {
                           if (cch == 0)
                               return text.empty() ? STATUS_SUCCESS : STATUS_BUFFER_OVERFLOW;
                           return wdk::copy_worker(to, cch, text.c_str(), text.size(), written);
                       });
}
NTSTATUS NTAPI RtlStringCchPrintfExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest,
                                     NTSTRSAFE_PWSTR *ppszDestEnd, size_t *pcchRemaining,
                                     STRSAFE_DWORD dwFlags, NTSTRSAFE_PCWSTR pszFormat, ...) {
    va_list args;
    va_start(args, pszFormat);
    const std::wstring text = wdk::format_wide(pszFormat, args);
    va_end(args);
    return wdk::run_ex(pszDest, cchDest, ppszDestEnd, pcchRemaining, dwFlags, false,
                       [&text](wchar_t *to, size_t cch, size_t *written) -> NTSTATUS {
                           if (cch == 0)
                               return text.empty() ? STATUS_SUCCESS : STATUS_BUFFER_OVERFLOW;
                           return wdk::copy_worker(to, cch, text.c_str(), text.size(), written);
                       });
}

NTSTATUS NTAPI RtlStringCchLengthA(NTSTRSAFE_PCSTR psz, size_t cchMax, size_t *pcchLength) {
    return wdk::length(psz, cchMax, pcchLength);
}
NTSTATUS NTAPI RtlStringCchLengthW(NTSTRSAFE_PCWSTR psz, size_t cchMax, size_t *pcchLength) {
    return wdk::length(psz, cchMax, pcchLength);
}
NTSTATUS NTAPI RtlStringCbLengthA(NTSTRSAFE_PCSTR psz, size_t cbMax, size_t *pcbLength) {
    return wdk::length(psz, cbMax / sizeof(char), pcbLength);
}
NTSTATUS NTAPI RtlStringCbLengthW(NTSTRSAFE_PCWSTR psz, size_t cbMax, size_t *pcbLength) {
    size_t cch = 0;
    const NTSTATUS status = wdk::length(psz, cbMax / sizeof(wchar_t), &cch);
    if (pcbLength != nullptr) *pcbLength = cch * sizeof(wchar_t);
    return status;
}

NTSTATUS NTAPI RtlUnicodeStringInit(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc) {
    if (DestinationString == nullptr) return STATUS_INVALID_PARAMETER;
    DestinationString->Length = 0;
    DestinationString->MaximumLength = 0;
    DestinationString->Buffer = const_cast<PWCH>(pszSrc);
    if (pszSrc == nullptr) return STATUS_SUCCESS;
    const size_t n = wdk::bounded_length(pszSrc, NTSTRSAFE_UNICODE_STRING_MAX_CCH + 1);
    if (n > NTSTRSAFE_UNICODE_STRING_MAX_CCH) {
        DestinationString->Buffer = nullptr;
        return STATUS_INVALID_PARAMETER;
    }
    DestinationString->Length = static_cast<USHORT>(n * sizeof(WCHAR));
    DestinationString->MaximumLength = static_cast<USHORT>(
        n < NTSTRSAFE_UNICODE_STRING_MAX_CCH ? (n + 1) * sizeof(WCHAR) : n * sizeof(WCHAR));
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlUnicodeStringValidate(PCUNICODE_STRING SourceString) {
    return wdk::valid_unicode_string(SourceString) ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

NTSTATUS NTAPI RtlUnicodeStringCopy(PUNICODE_STRING DestinationString,
                                    PCUNICODE_STRING SourceString) {
    if (!wdk::valid_unicode_string(DestinationString) || !wdk::valid_unicode_string(SourceString))
        return STATUS_INVALID_PARAMETER;
    return wdk::unicode_store(DestinationString, 0, SourceString->Buffer,
                              SourceString->Length / sizeof(WCHAR));
}

NTSTATUS NTAPI RtlUnicodeStringCopyString(PUNICODE_STRING DestinationString,
                                          NTSTRSAFE_PCWSTR pszSrc) {
    if (!wdk::valid_unicode_string(DestinationString) || pszSrc == nullptr)
        return STATUS_INVALID_PARAMETER;
    return wdk::unicode_store(DestinationString, 0, pszSrc,
                              wdk::bounded_length(pszSrc, NTSTRSAFE_UNICODE_STRING_MAX_CCH + 1));
}

NTSTATUS NTAPI RtlUnicodeStringCat(PUNICODE_STRING DestinationString,
                                   PCUNICODE_STRING SourceString) {
    if (!wdk::valid_unicode_string(DestinationString) || !wdk::valid_unicode_string(SourceString))
        return STATUS_INVALID_PARAMETER;
    return wdk::unicode_store(DestinationString, DestinationString->Length / sizeof(WCHAR),
                              SourceString->Buffer, SourceString->Length / sizeof(WCHAR));
}

NTSTATUS NTAPI RtlUnicodeStringCatString(PUNICODE_STRING DestinationString,
                                         NTSTRSAFE_PCWSTR pszSrc) {
    if (!wdk::valid_unicode_string(DestinationString) || pszSrc == nullptr)
        return STATUS_INVALID_PARAMETER;
    return wdk::unicode_store(DestinationString, DestinationString->Length / sizeof(WCHAR), pszSrc,
                              wdk::bounded_length(pszSrc, NTSTRSAFE_UNICODE_STRING_MAX_CCH + 1));
}

NTSTATUS NTAPI RtlUnicodeStringVPrintf(PUNICODE_STRING DestinationString,
                                       NTSTRSAFE_PCWSTR pszFormat, va_list argList) {
    if (!wdk::valid_unicode_string(DestinationString) || pszFormat == nullptr)
        return STATUS_INVALID_PARAMETER;
    const std::wstring text = wdk::format_wide(pszFormat, argList);
    return wdk::unicode_store(DestinationString, 0, text.data(), text.size());
}

NTSTATUS NTAPI RtlUnicodeStringPrintf(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszFormat,
                                      ...) {
    va_list args;
    va_start(args, pszFormat);
    const NTSTATUS status = RtlUnicodeStringVPrintf(DestinationString, pszFormat, args);
    va_end(args);
    return status;
}

}  // extern "C"
