#include "log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include "softndk/sim_log.hpp"

namespace softndk::provider {

spdlog::logger &log() {
    static const std::shared_ptr<spdlog::logger> logger = [] {
        auto existing = spdlog::get("provider");
        if (existing) return existing;
        auto l = spdlog::stderr_color_mt("provider");
        const char *env = std::getenv("SOFTNDK_LOG_LEVEL");
        l->set_level(env != nullptr ? spdlog::level::from_str(env) : spdlog::level::warn);
        sim::stamp_with_simulated_time(*l);
        return l;
    }();
    return *logger;
}

}  // namespace softndk::provider
