// Rtl*: list corruption reports, memory comparison, counted strings and the IP address <->
// string conversions of ip2string.h.
#include <arpa/inet.h>
#include <ip2string.h>
#include <locale.h>
#include <spdlog/fmt/fmt.h>
#include <wctype.h>

#include <algorithm>
#include <cstring>
#include <cwchar>
#include <optional>
#include <string>
#include <string_view>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

// ---- Strings.

// RtlInit{Unicode,Ansi}String: the string points at `source` (NULL gives an empty one).
// Windows caps Length at the largest multiple of the character size that fits a USHORT,
// minus one terminator.
template <class CountedString, class Char>
void init_counted_string(CountedString &string, const Char *source) {
    string.Buffer = const_cast<Char *>(source);
    if (source == nullptr) {
        string.Length = string.MaximumLength = 0;
        return;
    }
    constexpr size_t kMaxBytes = sizeof(Char) * (MAXUSHORT / sizeof(Char));
    size_t bytes = std::char_traits<Char>::length(source) * sizeof(Char);
    if (bytes >= kMaxBytes) bytes = kMaxBytes - sizeof(Char);
    string.Length = static_cast<USHORT>(bytes);
    string.MaximumLength = static_cast<USHORT>(bytes + sizeof(Char));
}

// C.UTF-8 has the C library's full Unicode case tables (the plain "C" locale only knows
// ASCII). Created once, never freed.
locale_t utf8_locale() {
    static const locale_t locale = [] {
        locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
        if (l == static_cast<locale_t>(0)) {
            logger().warn("RtlUpcaseUnicodeChar: no C.UTF-8 locale; upper-casing ASCII only");
        }
        return l;
    }();
    return locale;
}

WCHAR upcase(WCHAR c) {
    if (c < 0x80) return (c >= L'a' && c <= L'z') ? static_cast<WCHAR>(c - 0x20) : c;
    const locale_t locale = utf8_locale();
    if (locale == static_cast<locale_t>(0)) return c;
    return static_cast<WCHAR>(towupper_l(static_cast<wint_t>(c), locale));
}

LONG compare_unicode(PCUNICODE_STRING a, PCUNICODE_STRING b, bool case_insensitive) {
    const size_t a_chars = a->Length / sizeof(WCHAR);
    const size_t b_chars = b->Length / sizeof(WCHAR);
    const size_t common = std::min(a_chars, b_chars);
    for (size_t i = 0; i < common; ++i) {
        WCHAR x = a->Buffer[i];
        WCHAR y = b->Buffer[i];
        if (case_insensitive) {
            x = upcase(x);
            y = upcase(y);
        }
        if (x != y) return x < y ? -1 : 1;
    }
    if (a_chars == b_chars) return 0;
    return a_chars < b_chars ? -1 : 1;
}

// ---- IP addresses. Parsing works on narrow text; W forms narrow their input first (any
// character outside ASCII becomes '\x7f', which ends an address like other junk).

std::string narrow(PCWSTR text) {
    std::string out;
    for (; *text != 0; ++text) {
        out.push_back(*text > 0 && *text < 0x7F ? static_cast<char>(*text) : '\x7f');
    }
    return out;
}

int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

// One part of an IPv4 address: decimal, or (not strict) 0-prefixed octal / 0x-prefixed hex.
// Advances `pos` past what it consumed; nullopt if there is no digit or it exceeds 32 bits.
std::optional<uint64_t> parse_ipv4_part(std::string_view s, size_t &pos, bool strict) {
    unsigned base = 10;
    if (pos < s.size() && s[pos] == '0' && pos + 1 < s.size()) {
        if (s[pos + 1] == 'x' || s[pos + 1] == 'X') {
            if (strict) return std::nullopt;
            base = 16;
            pos += 2;
        } else if (s[pos + 1] >= '0' && s[pos + 1] <= '9') {
            if (strict) return std::nullopt;
            base = 8;
            pos += 1;
        }
    }
    uint64_t value = 0;
    bool any = false;
    while (pos < s.size()) {
        const int d = digit_value(s[pos]);
        if (d >= static_cast<int>(base)) break;
        value = value * base + static_cast<unsigned>(d);
        if (value > 0xFFFFFFFFull) return std::nullopt;
        any = true;
        ++pos;
    }
    if (!any) return std::nullopt;
    return value;
}

// Parses an IPv4 address at the start of s; `end` receives where parsing stopped.
bool parse_ipv4(std::string_view s, bool strict, size_t &end, in_addr &out) {
    uint64_t parts[4];
    int count = 0;
    size_t pos = 0;
    for (;;) {
        if (count == 4) {
            end = pos;
            return false;
        }
        const auto part = parse_ipv4_part(s, pos, strict);
        if (!part) {
            end = pos;
            return false;
        }
        parts[count++] = *part;
        if (pos >= s.size() || s[pos] != '.') break;
        ++pos;
    }
    end = pos;
    if (strict && count != 4) return false;
    uint32_t host = 0;
    // Every part but the last is one byte; the last fills the remaining bytes.
    for (int i = 0; i < count - 1; ++i) {
        if (parts[i] > 0xFF) return false;
        host |= static_cast<uint32_t>(parts[i]) << (24 - 8 * i);
    }
    const int last_bits = 32 - 8 * (count - 1);
    if (last_bits < 32 && parts[count - 1] >> last_bits != 0) return false;
    host |= static_cast<uint32_t>(parts[count - 1]);
    out.s_addr = htonl(host);
    return true;
}

// Decimal number for a port or scope id: at least one digit, at most `max`.
bool parse_decimal(std::string_view s, size_t &pos, uint64_t max, uint64_t &value) {
    value = 0;
    const size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        value = value * 10 + static_cast<unsigned>(s[pos] - '0');
        if (value > max) return false;
        ++pos;
    }
    return pos > start;
}

// The longest prefix of s made of characters an IPv6 address can contain, parsed by
// inet_pton (RFC 4291 text, including an embedded dotted IPv4 tail).
bool parse_ipv6(std::string_view s, size_t &end, in6_addr &out) {
    size_t pos = 0;
    while (pos < s.size() && (digit_value(s[pos]) < 16 || s[pos] == ':' || s[pos] == '.'))
        ++pos;
    end = pos;
    const std::string text(s.substr(0, pos));
    return inet_pton(AF_INET6, text.c_str(), &out) == 1;
}

std::string ipv4_text(const in_addr &address) {
    const auto *b = reinterpret_cast<const unsigned char *>(&address.s_addr);
    return fmt::format("{}.{}.{}.{}", b[0], b[1], b[2], b[3]);
}

std::string ipv6_text(const in6_addr &address) {
    const unsigned char *b = address.s6_addr;
    uint16_t words[8];
    for (int i = 0; i < 8; ++i)
        words[i] = static_cast<uint16_t>(b[2 * i] << 8 | b[2 * i + 1]);
    const auto dotted_tail = [&] { return fmt::format("{}.{}.{}.{}", b[12], b[13], b[14], b[15]); };
    // Windows' forms with a dotted IPv4 tail.
    if (words[0] == 0 && words[1] == 0 && words[2] == 0 && words[3] == 0 && words[6] != 0) {
        if (words[4] == 0 && words[5] == 0) return "::" + dotted_tail();
        if (words[4] == 0 && words[5] == 0xFFFF) return "::ffff:" + dotted_tail();
        if (words[4] == 0xFFFF && words[5] == 0) return "::ffff:0:" + dotted_tail();
    }
    const bool isatap = (words[4] == 0 || words[4] == 0x0200) && words[5] == 0x5EFE;
    const int hex_words = isatap ? 6 : 8;
    // Longest run of at least two zero words (the first of equal runs) becomes "::".
    int best_start = -1;
    int best_length = 1;
    for (int i = 0; i < hex_words;) {
        if (words[i] != 0) {
            ++i;
            continue;
        }
        int j = i;
        while (j < hex_words && words[j] == 0)
            ++j;
        if (j - i > best_length) {
            best_start = i;
            best_length = j - i;
        }
        i = j;
    }
    std::string text;
    for (int i = 0; i < hex_words; ++i) {
        if (i == best_start) {
            text += "::";
            i += best_length - 1;
            continue;
        }
        if (!text.empty() && text.back() != ':') text += ':';
        text += fmt::format("{:x}", words[i]);
    }
    if (isatap) {
        if (text.back() != ':') text += ':';
        text += dotted_tail();
    }
    return text;
}

template <class Char>
Char *copy_out(const std::string &text, Char *out) {
    for (char c : text)
        *out++ = static_cast<Char>(c);
    *out = 0;
    return out;
}

// The Ex ToString contract: needs text.size() + 1 characters.
template <class Char>
NTSTATUS copy_out_ex(const std::string &text, Char *out, PULONG length) {
    if (length == nullptr) return STATUS_INVALID_PARAMETER;
    const auto needed = static_cast<ULONG>(text.size() + 1);
    if (out == nullptr || *length < needed) {
        *length = needed;
        return STATUS_INVALID_PARAMETER;
    }
    copy_out(text, out);
    *length = needed;
    return STATUS_SUCCESS;
}

std::string ipv4_text_ex(const in_addr &address, USHORT port) {
    std::string text = ipv4_text(address);
    if (port != 0) text += fmt::format(":{}", ntohs(port));
    return text;
}

std::string ipv6_text_ex(const in6_addr &address, ULONG scope_id, USHORT port) {
    std::string text = ipv6_text(address);
    if (scope_id != 0) text += fmt::format("%{}", scope_id);
    if (port != 0) text = fmt::format("[{}]:{}", text, ntohs(port));
    return text;
}

NTSTATUS ipv4_string_to_address_ex(std::string_view s, bool strict, in_addr *address,
                                   PUSHORT port) {
    if (address == nullptr || port == nullptr) return STATUS_INVALID_PARAMETER;
    size_t pos = 0;
    in_addr parsed{};
    if (!parse_ipv4(s, strict, pos, parsed)) return STATUS_INVALID_PARAMETER;
    uint64_t port_value = 0;
    if (pos < s.size() && s[pos] == ':') {
        ++pos;
        if (!parse_decimal(s, pos, 0xFFFF, port_value) || port_value == 0) {
            return STATUS_INVALID_PARAMETER;
        }
    }
    if (pos != s.size()) return STATUS_INVALID_PARAMETER;
    *address = parsed;
    *port = htons(static_cast<uint16_t>(port_value));
    return STATUS_SUCCESS;
}

NTSTATUS ipv6_string_to_address_ex(std::string_view s, in6_addr *address, PULONG scope_id,
                                   PUSHORT port) {
    if (address == nullptr || scope_id == nullptr || port == nullptr) {
        return STATUS_INVALID_PARAMETER;
    }
    size_t pos = 0;
    const bool bracketed = !s.empty() && s[0] == '[';
    if (bracketed) ++pos;
    size_t length = 0;
    in6_addr parsed{};
    if (!parse_ipv6(s.substr(pos), length, parsed)) return STATUS_INVALID_PARAMETER;
    pos += length;
    uint64_t scope_value = 0;
    if (pos < s.size() && s[pos] == '%') {
        ++pos;
        if (!parse_decimal(s, pos, 0xFFFFFFFF, scope_value)) return STATUS_INVALID_PARAMETER;
    }
    uint64_t port_value = 0;
    if (bracketed) {
        if (pos >= s.size() || s[pos] != ']') return STATUS_INVALID_PARAMETER;
        ++pos;
        if (pos < s.size() && s[pos] == ':') {
            ++pos;
            if (!parse_decimal(s, pos, 0xFFFF, port_value) || port_value == 0) {
                return STATUS_INVALID_PARAMETER;
            }
        }
    }
    if (pos != s.size()) return STATUS_INVALID_PARAMETER;
    *address = parsed;
    *scope_id = static_cast<ULONG>(scope_value);
    *port = htons(static_cast<uint16_t>(port_value));
    return STATUS_SUCCESS;
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

// ---- Lists.

VOID NTAPI SoftNdkFatalListEntryError(PVOID P1, PVOID P2, PVOID P3) {
    wdk::bugcheck(KERNEL_SECURITY_CHECK_FAILURE, FAST_FAIL_CORRUPT_LIST_ENTRY,
                  reinterpret_cast<ULONG_PTR>(P1), reinterpret_cast<ULONG_PTR>(P2),
                  reinterpret_cast<ULONG_PTR>(P3),
                  fmt::format("corrupted LIST_ENTRY (FAST_FAIL_CORRUPT_LIST_ENTRY): a neighbour's "
                              "link does not point back (entries {}, {}, {}) - removed twice, "
                              "freed while linked, or never initialised?",
                              P1, P2, P3));
}

// ---- Memory.

SIZE_T NTAPI RtlCompareMemory(const VOID *Source1, const VOID *Source2, SIZE_T Length) {
    const auto *a = static_cast<const unsigned char *>(Source1);
    const auto *b = static_cast<const unsigned char *>(Source2);
    SIZE_T i = 0;
    while (i < Length && a[i] == b[i])
        ++i;
    return i;
}

// ---- Strings.

VOID NTAPI RtlInitUnicodeString(PUNICODE_STRING DestinationString, PCWSTR SourceString) {
    wdk::init_counted_string(*DestinationString, SourceString);
}

VOID NTAPI RtlInitAnsiString(PANSI_STRING DestinationString, PCSZ SourceString) {
    wdk::init_counted_string(*DestinationString, SourceString);
}

VOID NTAPI RtlInitString(PSTRING DestinationString, PCSZ SourceString) {
    RtlInitAnsiString(DestinationString, SourceString);
}

VOID NTAPI RtlCopyUnicodeString(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString) {
    if (SourceString == nullptr) {
        DestinationString->Length = 0;
        return;
    }
    const USHORT bytes = std::min(SourceString->Length, DestinationString->MaximumLength);
    std::memmove(DestinationString->Buffer, SourceString->Buffer, bytes);
    DestinationString->Length = bytes;
    // Windows terminates whenever Length < MaximumLength; a whole WCHAR must fit.
    if (static_cast<size_t>(bytes) + sizeof(WCHAR) <= DestinationString->MaximumLength) {
        DestinationString->Buffer[bytes / sizeof(WCHAR)] = UNICODE_NULL;
    }
}

WCHAR NTAPI RtlUpcaseUnicodeChar(WCHAR SourceCharacter) {
    return wdk::upcase(SourceCharacter);
}

BOOLEAN NTAPI RtlEqualUnicodeString(PCUNICODE_STRING String1, PCUNICODE_STRING String2,
                                    BOOLEAN CaseInSensitive) {
    if (String1->Length != String2->Length) return FALSE;
    return wdk::compare_unicode(String1, String2, CaseInSensitive != FALSE) == 0;
}

LONG NTAPI RtlCompareUnicodeString(PCUNICODE_STRING String1, PCUNICODE_STRING String2,
                                   BOOLEAN CaseInSensitive) {
    return wdk::compare_unicode(String1, String2, CaseInSensitive != FALSE);
}

// ---- IP addresses to text.

PSTR NTAPI RtlIpv4AddressToStringA(const struct in_addr *Addr, PSTR S) {
    return wdk::copy_out(wdk::ipv4_text(*Addr), S);
}

PWSTR NTAPI RtlIpv4AddressToStringW(const struct in_addr *Addr, PWSTR S) {
    return wdk::copy_out(wdk::ipv4_text(*Addr), S);
}

NTSTATUS NTAPI RtlIpv4AddressToStringExA(const struct in_addr *Address, USHORT Port,
                                         PSTR AddressString, PULONG AddressStringLength) {
    if (Address == nullptr) return STATUS_INVALID_PARAMETER;
    return wdk::copy_out_ex(wdk::ipv4_text_ex(*Address, Port), AddressString, AddressStringLength);
}

NTSTATUS NTAPI RtlIpv4AddressToStringExW(const struct in_addr *Address, USHORT Port,
                                         PWSTR AddressString, PULONG AddressStringLength) {
    if (Address == nullptr) return STATUS_INVALID_PARAMETER;
    return wdk::copy_out_ex(wdk::ipv4_text_ex(*Address, Port), AddressString, AddressStringLength);
}

PSTR NTAPI RtlIpv6AddressToStringA(const struct in6_addr *Addr, PSTR S) {
    return wdk::copy_out(wdk::ipv6_text(*Addr), S);
}

PWSTR NTAPI RtlIpv6AddressToStringW(const struct in6_addr *Addr, PWSTR S) {
    return wdk::copy_out(wdk::ipv6_text(*Addr), S);
}

NTSTATUS NTAPI RtlIpv6AddressToStringExA(const struct in6_addr *Address, ULONG ScopeId, USHORT Port,
                                         PSTR AddressString, PULONG AddressStringLength) {
    if (Address == nullptr) return STATUS_INVALID_PARAMETER;
    return wdk::copy_out_ex(wdk::ipv6_text_ex(*Address, ScopeId, Port), AddressString,
                            AddressStringLength);
}

NTSTATUS NTAPI RtlIpv6AddressToStringExW(const struct in6_addr *Address, ULONG ScopeId, USHORT Port,
                                         PWSTR AddressString, PULONG AddressStringLength) {
    if (Address == nullptr) return STATUS_INVALID_PARAMETER;
    return wdk::copy_out_ex(wdk::ipv6_text_ex(*Address, ScopeId, Port), AddressString,
                            AddressStringLength);
}

// ---- Text to IP addresses.

NTSTATUS NTAPI RtlIpv4StringToAddressA(PCSTR S, BOOLEAN Strict, PCSTR *Terminator,
                                       struct in_addr *Addr) {
    if (S == nullptr || Terminator == nullptr || Addr == nullptr) return STATUS_INVALID_PARAMETER;
    size_t end = 0;
    in_addr parsed{};
    const bool ok = wdk::parse_ipv4(S, Strict != FALSE, end, parsed);
    *Terminator = S + end;
    if (!ok) return STATUS_INVALID_PARAMETER;
    *Addr = parsed;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlIpv4StringToAddressW(PCWSTR S, BOOLEAN Strict, PCWSTR *Terminator,
                                       struct in_addr *Addr) {
    if (S == nullptr || Terminator == nullptr || Addr == nullptr) return STATUS_INVALID_PARAMETER;
    const std::string text = wdk::narrow(S);
    size_t end = 0;
    in_addr parsed{};
    const bool ok = wdk::parse_ipv4(text, Strict != FALSE, end, parsed);
    *Terminator = S + end;
    if (!ok) return STATUS_INVALID_PARAMETER;
    *Addr = parsed;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlIpv4StringToAddressExA(PCSTR AddressString, BOOLEAN Strict,
                                         struct in_addr *Address, PUSHORT Port) {
    if (AddressString == nullptr) return STATUS_INVALID_PARAMETER;
    return wdk::ipv4_string_to_address_ex(AddressString, Strict != FALSE, Address, Port);
}

NTSTATUS NTAPI RtlIpv4StringToAddressExW(PCWSTR AddressString, BOOLEAN Strict,
                                         struct in_addr *Address, PUSHORT Port) {
    if (AddressString == nullptr) return STATUS_INVALID_PARAMETER;
    return wdk::ipv4_string_to_address_ex(wdk::narrow(AddressString), Strict != FALSE, Address,
                                          Port);
}

NTSTATUS NTAPI RtlIpv6StringToAddressA(PCSTR S, PCSTR *Terminator, struct in6_addr *Addr) {
    if (S == nullptr || Terminator == nullptr || Addr == nullptr) return STATUS_INVALID_PARAMETER;
    size_t end = 0;
    in6_addr parsed{};
    const bool ok = wdk::parse_ipv6(S, end, parsed);
    *Terminator = S + end;
    if (!ok) return STATUS_INVALID_PARAMETER;
    *Addr = parsed;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlIpv6StringToAddressW(PCWSTR S, PCWSTR *Terminator, struct in6_addr *Addr) {
    if (S == nullptr || Terminator == nullptr || Addr == nullptr) return STATUS_INVALID_PARAMETER;
    const std::string text = wdk::narrow(S);
    size_t end = 0;
    in6_addr parsed{};
    const bool ok = wdk::parse_ipv6(text, end, parsed);
    *Terminator = S + end;
    if (!ok) return STATUS_INVALID_PARAMETER;
    *Addr = parsed;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI RtlIpv6StringToAddressExA(PCSTR AddressString, struct in6_addr *Address,
                                         PULONG ScopeId, PUSHORT Port) {
    if (AddressString == nullptr) return STATUS_INVALID_PARAMETER;
    return wdk::ipv6_string_to_address_ex(AddressString, Address, ScopeId, Port);
}

NTSTATUS NTAPI RtlIpv6StringToAddressExW(PCWSTR AddressString, struct in6_addr *Address,
                                         PULONG ScopeId, PUSHORT Port) {
    if (AddressString == nullptr) return STATUS_INVALID_PARAMETER;
    return wdk::ipv6_string_to_address_ex(wdk::narrow(AddressString), Address, ScopeId, Port);
}

}  // extern "C"
