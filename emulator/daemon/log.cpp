#include "daemon/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <memory>

namespace softndk::emu::daemon {

spdlog::logger &log() {
    static const auto logger = [] {
        auto l = std::make_shared<spdlog::logger>(
            "softndk.daemon", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        const char *env = std::getenv("SOFTNDK_LOG_LEVEL");
        l->set_level(env ? spdlog::level::from_str(env) : spdlog::level::warn);
        return l;
    }();
    return *logger;
}

}  // namespace softndk::emu::daemon
