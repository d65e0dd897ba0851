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

}  // namespace softndk::provider
