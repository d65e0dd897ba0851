// wdk_internal.hpp - what the WDK runtime's translation units share: the "wdk" logger,
// the fatal-error paths (bug checks, failed runtime checks), the Windows printf formatter
// and timeout conversion. Not part of the consumer-facing API (that is include/ndkpi/wdm.h).
#pragma once

#include <spdlog/spdlog.h>
#include <wdm.h>

#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <string>
#include <string_view>

namespace softndk::wdk {

// The spdlog logger "wdk": stderr, level from SOFTNDK_LOG_LEVEL (default warn), created at
// first use, registered with spdlog (spdlog::get("wdk") finds it) and never destroyed, so
// threads may log during process exit.
spdlog::logger &logger();

// The level SOFTNDK_LOG_LEVEL asks for (trace, debug, info, warn, error, critical, off);
// warn when it is unset or not a level name. Read once, when the logger is created.
spdlog::level::level_enum log_level_from_environment();

// Reports `message` on stderr and through the logger (critical), then abort()s.
[[noreturn]] void fatal(std::string_view message);

// A Windows bug check raised by the runtime: "*** BUGCHECK 0x0000000A
// (IRQL_NOT_LESS_OR_EQUAL) (p1, p2, p3, p4): <why>", then fatal().
[[noreturn]] void bugcheck(ULONG code, ULONG_PTR p1, ULONG_PTR p2, ULONG_PTR p3, ULONG_PTR p4,
                           std::string_view why);

// Formats like Windows' DbgPrint: "l" is 32 bits, I64/I32/I size prefixes, %ws/%ls/%S wide
// strings, %wZ/%Z counted strings, %n ignored. Consumes `args`.
std::string format_windows_printf(const char *format, va_list args);

// A wait or delay timeout (NULL, 0, negative relative or positive absolute, in 100 ns units)
// turned into a point on the steady clock. Relative timeouts above 100 years are infinite.
struct Deadline {
    enum class Kind { kPoll, kInfinite, kAt } kind;
    std::chrono::steady_clock::time_point at;
};
Deadline deadline_from_timeout(const LARGE_INTEGER *timeout);

// System time now: 100 ns units since 1601-01-01 UTC.
LONGLONG system_time_now();

// The CPU's spin-wait hint (x86 PAUSE).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Live pool allocations (ExAllocatePool* minus ExFreePool*), for leak checks in tests.
std::size_t pool_live_allocations();

}  // namespace softndk::wdk
