// log_limit.hpp - the daemon's rate-limited log lines: device/log_limit.hpp's LogLimit
// on the daemon's logger (log.hpp). Every log line a client can trigger goes through it.
#pragma once

#include "daemon/log.hpp"
#include "device/log_limit.hpp"

namespace softndk::emu::daemon {

using emu::LogLimit;

// log_limited(log(), limit, level, ...).
template <class... Args>
void log_limited(LogLimit &limit, spdlog::level::level_enum level,
                 spdlog::format_string_t<Args...> format, Args &&...args) {
    emu::log_limited(log(), limit, level, format, std::forward<Args>(args)...);
}

}  // namespace softndk::emu::daemon
