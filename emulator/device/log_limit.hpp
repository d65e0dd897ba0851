// log_limit.hpp - rate limits for the log lines a consumer can trigger.
//
// Anything a consumer does may make the device or the daemon log (a refused session, a
// bad request, a full event queue, an accept that failed for want of fds). Without a
// limit a hostile or broken client turns that into a log flood (issue 16, item 3:
// 549 MB in 8 s). Every such call site owns one LogLimit, a token bucket: `burst` lines
// at once, then `per_second` lines a second. Lines beyond that are counted, not
// written; the next line that is written is preceded by "N similar messages
// suppressed". Thread-safe.
//
//     static LogLimit limit;   // one per call site
//     log_limited(logger(Component::kDevice), limit, spdlog::level::warn, "cq#{}: ...", n);
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace softndk::emu {

class LogLimit {
  public:
    explicit LogLimit(double per_second = 5, double burst = 20)
        : per_second_(per_second), burst_(burst), tokens_(burst) {}

    // True if a line may be written now; then `suppressed` is how many were dropped
    // since the last one written (and the count starts again).
    bool admit(uint64_t &suppressed) {
        std::lock_guard lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        if (started_) {
            const double elapsed = std::chrono::duration<double>(now - last_).count();
            tokens_ = std::min(burst_, tokens_ + elapsed * per_second_);
        }
        started_ = true;
        last_ = now;
        if (tokens_ < 1) {
            ++suppressed_;
            return false;
        }
        tokens_ -= 1;
        suppressed = suppressed_;
        suppressed_ = 0;
        return true;
    }

  private:
    std::mutex mutex_;
    const double per_second_;
    const double burst_;
    double tokens_;
    bool started_ = false;
    std::chrono::steady_clock::time_point last_{};
    uint64_t suppressed_ = 0;
};

// Logs to `logger` if `limit` admits the line. The level is checked first, so a line
// below the logger's level costs no token.
template <class... Args>
void log_limited(spdlog::logger &logger, LogLimit &limit, spdlog::level::level_enum level,
                 spdlog::format_string_t<Args...> format, Args &&...args) {
    if (!logger.should_log(level)) return;
    uint64_t suppressed = 0;
    if (!limit.admit(suppressed)) return;
    if (suppressed != 0) logger.log(level, "{} similar messages suppressed", suppressed);
    logger.log(level, format, std::forward<Args>(args)...);
}

}  // namespace softndk::emu
