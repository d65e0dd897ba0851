// sim_log.hpp - spdlog in simulated time: a log line carries the simulated time instead of
// the wall clock's, so that a seed's output replays byte for byte (softndk/sim.hpp).
#pragma once

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "softndk/sim.hpp"

namespace softndk::sim {

// %* in a pattern: simulated time as seconds.nanoseconds.
class SimulatedTimeFlag final : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg &, const std::tm &,
                spdlog::memory_buf_t &dest) override {
        const uint64_t t = now_ns();
        fmt::format_to(std::back_inserter(dest), "{}.{:09}", t / 1'000'000'000u,
                       t % 1'000'000'000u);
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<SimulatedTimeFlag>();
    }
};

// In simulated time, makes `logger` stamp its lines with simulated time ("[sim 0.000012345]")
// and no thread or process id; otherwise leaves it alone.
inline void stamp_with_simulated_time(spdlog::logger &logger) {
    if (!enabled()) return;
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<SimulatedTimeFlag>('*').set_pattern("[sim %*] [%n] [%^%l%$] %v");
    logger.set_formatter(std::move(formatter));
}

}  // namespace softndk::sim
