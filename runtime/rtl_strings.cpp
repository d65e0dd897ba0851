// Counted-string operations beyond rtl.cpp's core: ANSI <-> Unicode conversion (the "ANSI"
// code page is UTF-8 here), freeing converted strings, appending, counted comparison,
// RtlUnicodeStringToInteger and RtlUnicodeToMultiByteN.
#include <cstdint>
#include <cstring>
#include <cwchar>
#include <string>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr ULONG kStringTag = 0x67727453;  // "Strg", as Windows' RtlAllocateStringRoutine

// One UTF-8 character of `text` (at most `size` bytes) decoded; malformed input is U+FFFD
// for one byte.
uint32_t decode_utf8(const unsigned char *text, size_t size, size_t &used) {
    const unsigned char lead = text[0];
    used = 1;
    if (lead < 0x80) return lead;
    const size_t extra = (lead >> 5) == 0x6    ? 1
                         : (lead >> 4) == 0xE  ? 2
                         : (lead >> 3) == 0x1E ? 3
                                               : 0;
    if (extra == 0 || extra >= size) return 0xFFFD;
    uint32_t c = lead & (0x3Fu >> extra);
    for (size_t k = 1; k <= extra; ++k) {
        if ((text[k] & 0xC0) != 0x80) return 0xFFFD;
        c = (c << 6) | (text[k] & 0x3Fu);
    }
    used = extra + 1;
    return c;
}

std::wstring utf8_to_wide(const char *text, size_t size) {
    std::wstring out;
    size_t i = 0;
    while (i < size) {
        size_t used = 0;
        out += static_cast<wchar_t>(
            decode_utf8(reinterpret_cast<const unsigned char *>(text) + i, size - i, used));
        i += used;
    }
    return out;
}

// The UTF-8 bytes of one character (U+FFFD for what is not a Unicode scalar value).
std::string encode_utf8(uint32_t c) {
    std::string out;
    append_utf8(out, c);
    return out;
}

// Stores `count` characters into a counted string, as RtlAnsiStringToUnicodeString and
// RtlUnicodeStringToAnsiString do: allocate (result + terminator) or use the caller's buffer,
// which must hold the result and a terminator.
template <class CountedString, class Char>
NTSTATUS store_converted(CountedString *destination, const Char *text, size_t count,
                         bool allocate) {
    const size_t bytes_with_terminator = (count + 1) * sizeof(Char);
    if (bytes_with_terminator > MAXUSHORT) return STATUS_INVALID_PARAMETER_2;
    const auto length = static_cast<USHORT>(count * sizeof(Char));
    if (allocate) {
        auto *buffer = static_cast<Char *>(
            ExAllocatePoolWithTag(PagedPool, bytes_with_terminator, kStringTag));
        if (buffer == nullptr) return STATUS_NO_MEMORY;
        destination->Buffer = buffer;
        destination->MaximumLength = static_cast<USHORT>(bytes_with_terminator);
    } else if (length >= destination->MaximumLength) {
        return STATUS_BUFFER_OVERFLOW;
    }
    std::memcpy(destination->Buffer, text, length);
    destination->Buffer[count] = Char{0};
    destination->Length = length;
    return STATUS_SUCCESS;
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

NTSTATUS NTAPI RtlAnsiStringToUnicodeString(PUNICODE_STRING DestinationString,
                                            PCANSI_STRING SourceString,
                                            BOOLEAN AllocateDestinationString) {
    const std::wstring wide = wdk::utf8_to_wide(SourceString->Buffer, SourceString->Length);
    return wdk::store_converted(DestinationString, wide.data(), wide.size(),
                                AllocateDestinationString != FALSE);
}

NTSTATUS NTAPI RtlUnicodeStringToAnsiString(PANSI_STRING DestinationString,
                                            PCUNICODE_STRING SourceString,
                                            BOOLEAN AllocateDestinationString) {
    std::string narrow;
    for (size_t i = 0; i < SourceString->Length / sizeof(WCHAR); ++i) {
        narrow += wdk::encode_utf8(static_cast<uint32_t>(SourceString->Buffer[i]));
    }
    return wdk::store_converted(DestinationString, narrow.data(), narrow.size(),
                                AllocateDestinationString != FALSE);
}

VOID NTAPI RtlFreeUnicodeString(PUNICODE_STRING UnicodeString) {
    if (UnicodeString->Buffer != nullptr) ExFreePool(UnicodeString->Buffer);
    std::memset(UnicodeString, 0, sizeof(*UnicodeString));
}

VOID NTAPI RtlFreeAnsiString(PANSI_STRING AnsiString) {
    if (AnsiString->Buffer != nullptr) ExFreePool(AnsiString->Buffer);
    std::memset(AnsiString, 0, sizeof(*AnsiString));
}

NTSTATUS NTAPI RtlAppendUnicodeStringToString(PUNICODE_STRING Destination,
                                              PCUNICODE_STRING Source) {
    const USHORT added = Source->Length;
    if (added == 0) return STATUS_SUCCESS;
    if (static_cast<size_t>(Destination->Length) + added > Destination->MaximumLength)
        return STATUS_BUFFER_TOO_SMALL;
    auto *end = reinterpret_cast<unsigned char *>(Destination->Buffer) + Destination->Length;
    std::memmove(end, Source->Buffer, added);
    Destination->Length = static_cast<USHORT>(Destination->Length + added);
    if (static_cast<size_t>(Destination->Length) + sizeof(WCHAR) <= Destination->MaximumLength)
        Destination->Buffer[Destination->Length / sizeof(WCHAR)] = UNICODE_NULL;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlAppendUnicodeToString(PUNICODE_STRING Destination, PCWSTR Source) {
    if (Source == nullptr) return STATUS_SUCCESS;
    UNICODE_STRING source;
    RtlInitUnicodeString(&source, Source);
    return RtlAppendUnicodeStringToString(Destination, &source);
}

LONG NTAPI RtlCompareUnicodeStrings(PCWCH String1, SIZE_T String1Length, PCWCH String2,
                                    SIZE_T String2Length, BOOLEAN CaseInSensitive) {
    const SIZE_T common = String1Length < String2Length ? String1Length : String2Length;
    for (SIZE_T i = 0; i < common; ++i) {
        WCHAR a = String1[i];
        WCHAR b = String2[i];
        if (CaseInSensitive) {
            a = RtlUpcaseUnicodeChar(a);
            b = RtlUpcaseUnicodeChar(b);
        }
        if (a != b) return a < b ? -1 : 1;
    }
    if (String1Length == String2Length) return 0;
    return String1Length < String2Length ? -1 : 1;
}

NTSTATUS NTAPI RtlUnicodeStringToInteger(PCUNICODE_STRING String, ULONG Base, PULONG Value) {
    const WCHAR *p = String->Buffer;
    size_t remaining = String->Length / sizeof(WCHAR);
    while (remaining != 0 && *p <= L' ') {  // white space (and control characters), as Windows
        ++p;
        --remaining;
    }
    bool negative = false;
    if (remaining != 0 && (*p == L'-' || *p == L'+')) {
        negative = *p == L'-';
        ++p;
        --remaining;
    }
    if (Base == 0) {
        Base = 10;
        if (remaining >= 2 && p[0] == L'0') {
            if (p[1] == L'x') {
                Base = 16;
            } else if (p[1] == L'o') {
                Base = 8;
            } else if (p[1] == L'b') {
                Base = 2;
            }
            if (Base != 10) {
                p += 2;
                remaining -= 2;
            }
        }
    } else if (Base != 2 && Base != 8 && Base != 10 && Base != 16) {
        return STATUS_INVALID_PARAMETER;
    }
    if (Value == nullptr) return STATUS_ACCESS_VIOLATION;
    ULONG total = 0;
    for (; remaining != 0; ++p, --remaining) {
        ULONG digit;
        if (*p >= L'0' && *p <= L'9') {
            digit = static_cast<ULONG>(*p - L'0');
        } else if (*p >= L'a' && *p <= L'z') {
            digit = static_cast<ULONG>(*p - L'a' + 10);
        } else if (*p >= L'A' && *p <= L'Z') {
            digit = static_cast<ULONG>(*p - L'A' + 10);
        } else {
            break;
        }
        if (digit >= Base) break;
        total = total * Base + digit;
    }
    *Value = negative ? 0u - total : total;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlUnicodeToMultiByteN(PCHAR MultiByteString, ULONG MaxBytesInMultiByteString,
                                      PULONG BytesInMultiByteString, PCWCH UnicodeString,
                                      ULONG BytesInUnicodeString) {
    ULONG written = 0;
    for (ULONG i = 0; i < BytesInUnicodeString / sizeof(WCHAR); ++i) {
        const std::string bytes = wdk::encode_utf8(static_cast<uint32_t>(UnicodeString[i]));
        if (written + bytes.size() > MaxBytesInMultiByteString) break;
        std::memcpy(MultiByteString + written, bytes.data(), bytes.size());
        written += static_cast<ULONG>(bytes.size());
    }
    if (BytesInMultiByteString != nullptr) *BytesInMultiByteString = written;
    return STATUS_SUCCESS;
}

}  // extern "C"
