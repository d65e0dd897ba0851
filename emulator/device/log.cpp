#include "device/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>
#include "softndk/sim_log.hpp"

namespace softndk::emu {
namespace {

constexpr std::array<const char *, 4> kNames = {"softndk.device", "softndk.rc", "softndk.fabric",
                                                "softndk.cm"};

struct Loggers {
    std::array<std::shared_ptr<spdlog::logger>, kNames.size()> all;
    Loggers() {
        auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        const char *env = std::getenv("SOFTNDK_LOG_LEVEL");
        const auto level = env ? spdlog::level::from_str(env) : spdlog::level::warn;
        for (size_t i = 0; i < kNames.size(); ++i) {
            all[i] = std::make_shared<spdlog::logger>(kNames[i], sink);
            all[i]->set_level(level);
            sim::stamp_with_simulated_time(*all[i]);
        }
    }
};

}  // namespace

spdlog::logger &logger(Component component) {
    static Loggers loggers;
    return *loggers.all[static_cast<size_t>(component)];
}

}  // namespace softndk::emu
