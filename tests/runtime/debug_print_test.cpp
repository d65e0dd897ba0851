// DbgPrint / DbgPrintEx / KdPrint: Windows printf formats, level mapping, stderr only.
#include <spdlog/sinks/ostream_sink.h>
#include <wdm.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "wdk_internal.hpp"

namespace {

// Routes the "wdk" logger to a string, as "<level>|<message>" lines, at trace level; puts the
// logger back as it was on destruction.
class CapturedLog {
  public:
    CapturedLog()
        : log_(softndk::wdk::logger()), saved_sinks_(log_.sinks()), saved_level_(log_.level()) {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
        sink->set_pattern("%l|%v");
        log_.sinks() = {sink};
        log_.set_level(spdlog::level::trace);
    }
    ~CapturedLog() {
        log_.sinks() = saved_sinks_;
        log_.set_level(saved_level_);
    }
    CapturedLog(const CapturedLog &) = delete;
    CapturedLog &operator=(const CapturedLog &) = delete;

    void set_level(spdlog::level::level_enum level) { log_.set_level(level); }

    std::vector<std::string> lines() const {
        std::vector<std::string> result;
        std::istringstream in(stream_.str());
        for (std::string line; std::getline(in, line);) {
            result.push_back(line);
        }
        return result;
    }
    std::string last() const {
        const auto all = lines();
        return all.empty() ? std::string("<nothing logged>") : all.back();
    }
    size_t count() const { return lines().size(); }

  private:
    std::ostringstream stream_;
    spdlog::logger &log_;
    std::vector<spdlog::sink_ptr> saved_sinks_;
    spdlog::level::level_enum saved_level_;
};

ULONG log_through_va_list(ULONG level, PCSTR format, ...) {
    va_list args;
    va_start(args, format);
    const ULONG status = vDbgPrintEx(DPFLTR_IHVDRIVER_ID, level, format, args);
    va_end(args);
    return status;
}

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
  public:
    ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
        if (const char *old = std::getenv(name)) saved_ = old;
        if (value) {
            setenv(name, value->c_str(), 1);
        } else {
            unsetenv(name);
        }
    }
    ~ScopedEnv() {
        if (saved_) {
            setenv(name_, saved_->c_str(), 1);
        } else {
            unsetenv(name_);
        }
    }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

  private:
    const char *name_;
    std::optional<std::string> saved_;
};

}  // namespace

TEST_CASE("dbgprint: \"l\" is 32 bits, as on Windows") {
    CapturedLog log;
    DbgPrint("%lu %ld %lx %lX %li", ULONG{0xFFFFFFFF}, LONG{-5}, ULONG{0xdeadbeef}, ULONG{0xABC},
             LONG{7});
    CHECK(log.last() == "info|4294967295 -5 deadbeef ABC 7");
}

TEST_CASE("dbgprint: I64, I32, I, ll, z, h and hh size prefixes") {
    CapturedLog log;
    DbgPrint("%I64u %I64d %I64x", ULONG64{18446744073709551615ULL}, LONGLONG{-1},
             ULONGLONG{0x123456789abcdef0ULL});
    CHECK(log.last() == "info|18446744073709551615 -1 123456789abcdef0");
    DbgPrint("%Iu %Id %IX %I32u %llu %zu", SIZE_T{1} << 40, LONG_PTR{-2}, ULONG_PTR{0xBEEF},
             UINT32{7}, 1ULL << 63, size_t{3});
    CHECK(log.last() == "info|1099511627776 -2 BEEF 7 9223372036854775808 3");
    DbgPrint("%hd %hhu %hx", SHORT{-3}, UCHAR{255}, USHORT{0xBEEF});
    CHECK(log.last() == "info|-3 255 beef");
}

TEST_CASE("dbgprint: wide, counted and narrow strings") {
    CapturedLog log;
    WCHAR name_text[] = L"adapter0-and-more";
    UNICODE_STRING name;
    name.Buffer = name_text;
    name.Length = 8 * sizeof(WCHAR);
    name.MaximumLength = sizeof(name_text);
    CHAR ansi_text[] = "abcde";
    ANSI_STRING ansi;
    ansi.Buffer = ansi_text;
    ansi.Length = 3;
    ansi.MaximumLength = sizeof(ansi_text);

    DbgPrint("%ws|%ls|%S|%wZ|%Z|%hs|%s|%s", L"wide", L"wide", L"wide", &name, &ansi, "narrow",
             "plain", static_cast<const char *>(nullptr));
    CHECK(log.last() == "info|wide|wide|wide|adapter0|abc|narrow|plain|(null)");
    DbgPrint("%ws %wc%C%c%hc", L"Gr\u00fc\u00dfe", static_cast<wint_t>(L'\u00e9'),
             static_cast<wint_t>(L'\u20ac'), 'a', 'b');
    CHECK(log.last() ==
          "info|Gr\xc3\xbc\xc3\x9f"
          "e \xc3\xa9\xe2\x82\xac"
          "ab");
}

TEST_CASE("dbgprint: width, precision, %%, %p, floats, %n and unknown conversions") {
    CapturedLog log;
    DbgPrint("[%*d|%-4d|%.3s|%5s|%-*s|%.*s]", 5, 42, 7, "abcdef", "ab", 3, "x", 2, "xyz");
    CHECK(log.last() == "info|[   42|7   |abc|   ab|x  |xy]");
    int untouched = 17;
    DbgPrint("100%% %.2f %p%n %y %d", 1.5, reinterpret_cast<void *>(0x1234), &untouched, 9);
    CHECK(log.last() == "info|100% 1.50 0x1234 %y 9");
    CHECK(untouched == 17);
}

TEST_CASE("dbgprint: trailing newlines are dropped") {
    CapturedLog log;
    DbgPrint("line one\n");
    DbgPrint("line two\r\n");
    DbgPrint("\n");
    REQUIRE(log.count() == 3);
    CHECK(log.lines()[0] == "info|line one");
    CHECK(log.lines()[1] == "info|line two");
    CHECK(log.lines()[2] == "info|");
}

TEST_CASE("dbgprint: DbgPrintEx levels map to spdlog levels") {
    CapturedLog log;
    DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_ERROR_LEVEL, "e");
    CHECK(log.last() == "error|e");
    DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_WARNING_LEVEL, "w");
    CHECK(log.last() == "warning|w");
    DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_TRACE_LEVEL, "t");
    CHECK(log.last() == "debug|t");
    DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_INFO_LEVEL, "i");
    CHECK(log.last() == "info|i");
    DbgPrintEx(DPFLTR_IHVDRIVER_ID, 7, "v");
    CHECK(log.last() == "trace|v");
    DbgPrintEx(DPFLTR_IHVNETWORK_ID, DPFLTR_MASK | 0x1, "mask error");
    CHECK(log.last() == "error|mask error");
    DbgPrintEx(DPFLTR_IHVNETWORK_ID, DPFLTR_MASK | 0x8, "mask info");
    CHECK(log.last() == "info|mask info");
    CHECK(log_through_va_list(DPFLTR_WARNING_LEVEL, "va %lu", ULONG{3}) == STATUS_SUCCESS);
    CHECK(log.last() == "warning|va 3");
}

TEST_CASE("dbgprint: KdPrint and KdPrintEx take the double-parenthesised argument list") {
    CapturedLog log;
    KdPrint(("kd %d\n", 1));
    CHECK(log.last() == "info|kd 1");
    KdPrintEx((DPFLTR_IHVNETWORK_ID, DPFLTR_ERROR_LEVEL, "kdx %lu", ULONG{2}));
    CHECK(log.last() == "error|kdx 2");
}

TEST_CASE("dbgprint: the logger's level filters") {
    CapturedLog log;
    log.set_level(spdlog::level::warn);
    DbgPrint("hidden");
    DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_TRACE_LEVEL, "hidden too");
    CHECK(log.count() == 0);
    DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_ERROR_LEVEL, "shown");
    CHECK(log.last() == "error|shown");
}

TEST_CASE("dbgprint: output goes to stderr, never to stdout") {
    const auto child = softndk::test::run_in_child([] {
        softndk::wdk::logger().set_level(spdlog::level::trace);
        DbgPrint("to the log %d", 1);
        DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_ERROR_LEVEL, "an error");
    });
    CHECK(child.exited_zero());
    CHECK(child.out.empty());
    CHECK_THAT(child.err, Catch::Contains("[wdk]") && Catch::Contains("to the log 1"));
    CHECK_THAT(child.err, Catch::Contains("an error"));
}

TEST_CASE("dbgprint: SOFTNDK_LOG_LEVEL sets the level, default and unknown names are warn") {
    using spdlog::level::level_enum;
    {
        ScopedEnv env("SOFTNDK_LOG_LEVEL", std::nullopt);
        CHECK(softndk::wdk::log_level_from_environment() == level_enum::warn);
    }
    {
        ScopedEnv env("SOFTNDK_LOG_LEVEL", "debug");
        CHECK(softndk::wdk::log_level_from_environment() == level_enum::debug);
    }
    {
        ScopedEnv env("SOFTNDK_LOG_LEVEL", "off");
        CHECK(softndk::wdk::log_level_from_environment() == level_enum::off);
    }
    {
        ScopedEnv env("SOFTNDK_LOG_LEVEL", "loud");
        CHECK(softndk::wdk::log_level_from_environment() == level_enum::warn);
    }
}
