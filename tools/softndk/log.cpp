#include "log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include "softndk/sim_log.hpp"

namespace softndk::tool {

spdlog::logger &log() {
    static const std::shared_ptr<spdlog::logger> logger = [] {
        auto l = spdlog::stderr_color_mt("softndk");
        const char *level = std::getenv("SOFTNDK_LOG_LEVEL");
        l->set_level(level != nullptr && *level != '\0' ? spdlog::level::from_str(level)
                                                        : spdlog::level::warn);
        sim::stamp_with_simulated_time(*l);
        return l;
    }();
    return *logger;
}

}  // namespace softndk::tool
