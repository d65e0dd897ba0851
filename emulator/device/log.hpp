// log.hpp - one spdlog logger per emulator block ("softndk.device", "softndk.rc",
// "softndk.fabric", "softndk.cm"), all writing to stderr (never stdout). The level
// comes from SOFTNDK_LOG_LEVEL (trace, debug, info, warn, error, off; default warn)
// and is read once, at first use. Messages carry an object prefix such as
// "qp#12" or "cq#3" so that a trace can be followed per object.
#pragma once

#include <spdlog/spdlog.h>

namespace softndk::emu {

enum class Component : uint8_t { kDevice, kRc, kFabric, kCm };

spdlog::logger &logger(Component component);

}  // namespace softndk::emu
