// Debug output (DbgPrint*), assertions and bug checks: everything that reports through the
// "wdk" logger.
#include <spdlog/fmt/fmt.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <bit>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <memory>
#include <optional>

#include "softndk/sim_log.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {

spdlog::level::level_enum log_level_from_environment() {
    const char *env = std::getenv("SOFTNDK_LOG_LEVEL");
    if (env == nullptr || *env == '\0') return spdlog::level::warn;
    const auto level = spdlog::level::from_str(env);
    // from_str answers "off" for names it does not know; only "off" itself means off.
    if (level == spdlog::level::off && std::string_view(env) != "off") return spdlog::level::warn;
    return level;
}

namespace {

std::shared_ptr<spdlog::logger> make_logger() {
    if (auto existing = spdlog::get("wdk")) return existing;
    auto created =
        std::make_shared<spdlog::logger>("wdk", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    created->set_level(log_level_from_environment());
    sim::stamp_with_simulated_time(*created);
    created->flush_on(spdlog::level::err);
    try {
        spdlog::register_logger(created);
    } catch (const spdlog::spdlog_ex &) {
        // Someone registered "wdk" between get() and here: use theirs.
        if (auto existing = spdlog::get("wdk")) return existing;
    }
    return created;
}

// ---- DbgPrintEx levels -> spdlog levels (index = DPFLTR_*_LEVEL).
constexpr std::array kDpfltrLevels = {spdlog::level::err, spdlog::level::warn, spdlog::level::debug,
                                      spdlog::level::info};

spdlog::level::level_enum level_for_dpfltr(ULONG level) {
    if ((level & DPFLTR_MASK) != 0) {
        const ULONG mask = level & ~static_cast<ULONG>(DPFLTR_MASK);
        if (mask == 0) return spdlog::level::trace;
        level = static_cast<ULONG>(std::countr_zero(mask));
    }
    return level < kDpfltrLevels.size() ? kDpfltrLevels[level] : spdlog::level::trace;
}

// ---- Windows printf.

// Size prefixes as Windows reads them. kLong is Windows' "l": 32 bits for integers, wide for
// %c and %s.
enum class Length {
    kNone,
    kChar,
    kShort,
    kLong,
    kLongLong,
    kLongDouble,
    kSize,
    kMax,
    kPtrdiff,
    kWide
};

// Wide text to UTF-8: at most `count` characters, stopping early at a NUL.
std::string wide_to_utf8(const wchar_t *text, size_t count) {
    std::string out;
    for (size_t i = 0; i < count && text[i] != L'\0'; ++i) {
        append_utf8(out, static_cast<uint32_t>(text[i]));
    }
    return out;
}

// snprintf of one conversion, with a C-library spec built by the parser.
template <class T>
void append_one(std::string &out, const std::string &spec, T value) {
    char small[128];
    const int n = std::snprintf(small, sizeof(small), spec.c_str(), value);
    if (n < 0) return;
    if (static_cast<size_t>(n) < sizeof(small)) {
        out.append(small, static_cast<size_t>(n));
        return;
    }
    std::string big(static_cast<size_t>(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), spec.c_str(), value);
    out.append(big.data(), static_cast<size_t>(n));
}

constexpr int kMaxFieldWidth = 4096;  // bounds %*d and %.*s taken from arguments

}  // namespace

void append_utf8(std::string &out, uint32_t c) {
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

spdlog::logger &logger() {
    // Deliberately leaked: the logger outlives static destruction.
    static std::shared_ptr<spdlog::logger> *const instance =
        new std::shared_ptr<spdlog::logger>(make_logger());
    return **instance;
}

std::string format_windows_printf(const char *format, va_list args) {
    if (format == nullptr) return "(null format)";
    std::string out;
    const char *p = format;
    while (*p != '\0') {
        if (*p != '%') {
            const char *next = std::strchr(p, '%');
            const size_t n = next != nullptr ? static_cast<size_t>(next - p) : std::strlen(p);
            out.append(p, n);
            p += n;
            continue;
        }
        const char *spec_start = p++;
        if (*p == '%') {
            out += '%';
            ++p;
            continue;
        }

        std::string flags;
        while (*p != '\0' && std::strchr("-+ #0", *p) != nullptr) {
            flags += *p++;
        }
        std::optional<int> width;
        if (*p == '*') {
            int w = va_arg(args, int);
            if (w < 0) {
                flags += '-';
                w = w == INT_MIN ? INT_MAX : -w;
            }
            width = w;
            ++p;
        } else if (std::isdigit(static_cast<unsigned char>(*p))) {
            width = static_cast<int>(std::strtol(p, const_cast<char **>(&p), 10));
        }
        std::optional<int> precision;
        if (*p == '.') {
            ++p;
            if (*p == '*') {
                const int v = va_arg(args, int);
                if (v >= 0) precision = v;  // negative: as if omitted
                ++p;
            } else {
                precision = static_cast<int>(std::strtol(p, const_cast<char **>(&p), 10));
            }
        }
        if (width) width = std::min(*width, kMaxFieldWidth);
        if (precision) precision = std::min(*precision, kMaxFieldWidth);

        Length length = Length::kNone;
        if (p[0] == 'h' && p[1] == 'h') {
            length = Length::kChar, p += 2;
        } else if (p[0] == 'h') {
            length = Length::kShort, p += 1;
        } else if (p[0] == 'l' && p[1] == 'l') {
            length = Length::kLongLong, p += 2;
        } else if (p[0] == 'l') {
            length = Length::kLong, p += 1;
        } else if (p[0] == 'L') {
            length = Length::kLongDouble, p += 1;
        } else if (p[0] == 'I' && p[1] == '6' && p[2] == '4') {
            length = Length::kLongLong, p += 3;
        } else if (p[0] == 'I' && p[1] == '3' && p[2] == '2') {
            length = Length::kNone, p += 3;
        } else if (p[0] == 'I' || p[0] == 'z') {
            length = Length::kSize, p += 1;
        } else if (p[0] == 'j') {
            length = Length::kMax, p += 1;
        } else if (p[0] == 't') {
            length = Length::kPtrdiff, p += 1;
        } else if (p[0] == 'w') {
            length = Length::kWide, p += 1;
        }

        const char conversion = *p;
        if (conversion == '\0') {  // truncated spec: print it as it is
            out.append(spec_start);
            break;
        }
        ++p;

        std::string field = "%" + flags;
        if (width) field += std::to_string(*width);
        std::string field_precision = field;
        if (precision) field_precision += "." + std::to_string(*precision);
        const bool narrow = length == Length::kShort || length == Length::kChar;
        const bool wide = length == Length::kLong || length == Length::kWide;

        switch (conversion) {
            case 'd':
            case 'i':
            case 'u':
            case 'o':
            case 'x':
            case 'X': {
                const bool is_signed = conversion == 'd' || conversion == 'i';
                switch (length) {
                    case Length::kLongLong:
                    case Length::kLongDouble:
                        if (is_signed) {
                            append_one(out, field_precision + "ll" + conversion,
                                       va_arg(args, long long));
                        } else {
                            append_one(out, field_precision + "ll" + conversion,
                                       va_arg(args, unsigned long long));
                        }
                        break;
                    case Length::kSize:
                    case Length::kPtrdiff:
                        if (is_signed) {
                            append_one(out, field_precision + "t" + conversion,
                                       va_arg(args, ptrdiff_t));
                        } else {
                            append_one(out, field_precision + "z" + conversion,
                                       va_arg(args, size_t));
                        }
                        break;
                    case Length::kMax:
                        if (is_signed) {
                            append_one(out, field_precision + "j" + conversion,
                                       va_arg(args, intmax_t));
                        } else {
                            append_one(out, field_precision + "j" + conversion,
                                       va_arg(args, uintmax_t));
                        }
                        break;
                    default: {
                        // int-sized, including Windows "l" (LONG/ULONG are 32 bits).
                        const char *size = length == Length::kChar    ? "hh"
                                           : length == Length::kShort ? "h"
                                                                      : "";
                        if (is_signed) {
                            append_one(out, field_precision + size + conversion, va_arg(args, int));
                        } else {
                            append_one(out, field_precision + size + conversion,
                                       va_arg(args, unsigned int));
                        }
                        break;
                    }
                }
                break;
            }
            case 'c':
            case 'C':
                if ((conversion == 'c' && wide) || (conversion == 'C' && !narrow)) {
                    std::string text;
                    append_utf8(text, static_cast<uint32_t>(va_arg(args, wint_t)));
                    append_one(out, field + "s", text.c_str());
                } else {
                    append_one(out, field + "c", va_arg(args, int));
                }
                break;
            case 's':
            case 'S':
                if ((conversion == 's' && wide) || (conversion == 'S' && !narrow)) {
                    const auto *text = va_arg(args, const wchar_t *);
                    const std::string utf8 =
                        text == nullptr
                            ? std::string("(null)")
                            : wide_to_utf8(text,
                                           precision ? static_cast<size_t>(*precision) : SIZE_MAX);
                    append_one(out, field + "s", utf8.c_str());
                } else {
                    const char *text = va_arg(args, const char *);
                    append_one(out, field_precision + "s", text == nullptr ? "(null)" : text);
                }
                break;
            case 'Z':
                if (wide) {
                    const auto *text = va_arg(args, const UNICODE_STRING *);
                    const std::string utf8 =
                        text == nullptr || text->Buffer == nullptr
                            ? std::string("(null)")
                            : wide_to_utf8(text->Buffer, text->Length / sizeof(WCHAR));
                    append_one(out, field + "s", utf8.c_str());
                } else {
                    const auto *text = va_arg(args, const ANSI_STRING *);
                    const std::string narrow_text =
                        text == nullptr || text->Buffer == nullptr
                            ? std::string("(null)")
                            : std::string(text->Buffer, strnlen(text->Buffer, text->Length));
                    append_one(out, field + "s", narrow_text.c_str());
                }
                break;
            case 'p':
                append_one(out, field + "p", va_arg(args, void *));
                break;
            case 'e':
            case 'E':
            case 'f':
            case 'F':
            case 'g':
            case 'G':
            case 'a':
            case 'A':
                if (length == Length::kLongDouble) {
                    append_one(out, field_precision + "L" + conversion, va_arg(args, long double));
                } else {
                    append_one(out, field_precision + conversion, va_arg(args, double));
                }
                break;
            case 'n':  // Windows disables %n; consume the pointer, write nothing
                (void)va_arg(args, void *);
                break;
            default:  // unknown conversion: print the spec, consume nothing
                out.append(spec_start, static_cast<size_t>(p - spec_start));
                break;
        }
    }
    return out;
}

void fatal(std::string_view message) {
    std::fprintf(stderr, "softndk wdk: %.*s\n", static_cast<int>(message.size()), message.data());
    std::fflush(stderr);
    try {
        auto &log = logger();
        log.critical("{}", message);
        log.flush();
    } catch (...) {
        // The message is on stderr already; abort regardless.
    }
    std::abort();
}

void bugcheck(ULONG code, ULONG_PTR p1, ULONG_PTR p2, ULONG_PTR p3, ULONG_PTR p4,
              std::string_view why) {
    struct Name {
        ULONG code;
        const char *name;
    };
    static constexpr Name kNames[] = {
        {IRQL_NOT_GREATER_OR_EQUAL, "IRQL_NOT_GREATER_OR_EQUAL"},
        {IRQL_NOT_LESS_OR_EQUAL, "IRQL_NOT_LESS_OR_EQUAL"},
        {MAXIMUM_WAIT_OBJECTS_EXCEEDED, "MAXIMUM_WAIT_OBJECTS_EXCEEDED"},
        {SPIN_LOCK_ALREADY_OWNED, "SPIN_LOCK_ALREADY_OWNED"},
        {SPIN_LOCK_NOT_OWNED, "SPIN_LOCK_NOT_OWNED"},
        {KMODE_EXCEPTION_NOT_HANDLED, "KMODE_EXCEPTION_NOT_HANDLED"},
        {NO_MORE_IRP_STACK_LOCATIONS, "NO_MORE_IRP_STACK_LOCATIONS"},
        {MULTIPLE_IRP_COMPLETE_REQUESTS, "MULTIPLE_IRP_COMPLETE_REQUESTS"},
        {CANCEL_STATE_IN_COMPLETED_IRP, "CANCEL_STATE_IN_COMPLETED_IRP"},
        {BAD_POOL_CALLER, "BAD_POOL_CALLER"},
        {WORKER_THREAD_RETURNED_AT_BAD_IRQL, "WORKER_THREAD_RETURNED_AT_BAD_IRQL"},
        {WORKER_INVALID, "WORKER_INVALID"},
        {0xE2, "MANUALLY_INITIATED_CRASH"},
        {KERNEL_SECURITY_CHECK_FAILURE, "KERNEL_SECURITY_CHECK_FAILURE"},
    };
    const char *name = "unknown bug check";
    for (const Name &entry : kNames) {
        if (entry.code == code) name = entry.name;
    }
    fatal(fmt::format("*** BUGCHECK 0x{:08X} ({}) (0x{:x}, 0x{:x}, 0x{:x}, 0x{:x}): {}", code, name,
                      p1, p2, p3, p4, why));
}

}  // namespace softndk::wdk

using softndk::wdk::logger;

extern "C" {

ULONG NTAPI vDbgPrintEx(ULONG ComponentId, ULONG Level, PCSTR Format, va_list arglist) {
    (void)ComponentId;  // no per-component filtering
    const auto level = softndk::wdk::level_for_dpfltr(Level);
    auto &log = logger();
    if (!log.should_log(level)) return static_cast<ULONG>(STATUS_SUCCESS);
    std::string text = softndk::wdk::format_windows_printf(Format, arglist);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.pop_back();
    }
    log.log(level, "{}", text);
    return static_cast<ULONG>(STATUS_SUCCESS);
}

ULONG __cdecl DbgPrintEx(ULONG ComponentId, ULONG Level, PCSTR Format, ...) {
    va_list args;
    va_start(args, Format);
    const ULONG status = vDbgPrintEx(ComponentId, Level, Format, args);
    va_end(args);
    return status;
}

ULONG __cdecl DbgPrint(PCSTR Format, ...) {
    va_list args;
    va_start(args, Format);
    const ULONG status = vDbgPrintEx(DPFLTR_DEFAULT_ID, DPFLTR_INFO_LEVEL, Format, args);
    va_end(args);
    return status;
}

VOID NTAPI SoftNdkAssertionFailure(PCSTR Expression, PCSTR Message, PCSTR File, ULONG Line,
                                   PCSTR Function) {
    softndk::wdk::fatal(
        fmt::format("assertion failed: {}{}{}{} at {}:{} in {}",
                    Expression != nullptr ? Expression : "?", Message != nullptr ? " (" : "",
                    Message != nullptr ? Message : "", Message != nullptr ? ")" : "",
                    File != nullptr ? File : "?", Line, Function != nullptr ? Function : "?"));
}

VOID NTAPI KeBugCheckEx(ULONG BugCheckCode, ULONG_PTR BugCheckParameter1,
                        ULONG_PTR BugCheckParameter2, ULONG_PTR BugCheckParameter3,
                        ULONG_PTR BugCheckParameter4) {
    softndk::wdk::bugcheck(BugCheckCode, BugCheckParameter1, BugCheckParameter2, BugCheckParameter3,
                           BugCheckParameter4, "raised by KeBugCheckEx");
}

VOID NTAPI KeBugCheck(ULONG BugCheckCode) {
    softndk::wdk::bugcheck(BugCheckCode, 0, 0, 0, 0, "raised by KeBugCheck");
}

}  // extern "C"
