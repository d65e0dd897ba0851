// log.hpp - the daemon's logger ("softndk.daemon", stderr). Level from
// SOFTNDK_LOG_LEVEL like the emulator blocks (softndk-rnic --log-level sets it).
#pragma once

#include <spdlog/spdlog.h>

namespace softndk::emu::daemon {

spdlog::logger &log();

}  // namespace softndk::emu::daemon
