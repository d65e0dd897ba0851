// log.hpp - the tool's own diagnostics: spdlog logger "softndk" on stderr
// (never stdout, which carries results). The level comes from
// SOFTNDK_LOG_LEVEL (trace, debug, info, warn, error, off; default warn), like
// the provider's and the emulator's loggers.
#pragma once

#include <spdlog/spdlog.h>

namespace softndk::tool {

spdlog::logger &log();

}  // namespace softndk::tool
