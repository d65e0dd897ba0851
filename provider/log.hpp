// log.hpp - the provider's logger.
//
// One spdlog logger named "provider", writing to stderr (libraries never print
// to stdout). Its level comes from SOFTNDK_LOG_LEVEL (trace, debug, info, warn,
// error, critical, off; default warn). Every line names the object it is
// about, e.g. "qp#12: ...", "adapter#3 cq#5: ...".
#pragma once

#include <spdlog/spdlog.h>

namespace softndk::provider {

spdlog::logger &log();

// Logs `what` at warn level the first time it is called with that address
// (used by the not-yet-built slots, so a consumer learns once, not per call).
void log_once(const char *what);

}  // namespace softndk::provider
