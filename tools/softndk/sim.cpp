// sim.cpp - `softndk sim` (contract in sim.hpp).
#include "sim.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include "perf.hpp"
#include "report.hpp"
#include "softndk/sim.hpp"

namespace softndk::tool {
namespace {

enum class Outcome { kPassed, kFailed, kDeadlocked, kTimeLimit, kHung };

const char *outcome_name(Outcome o) {
    switch (o) {
        case Outcome::kPassed:
            return "passed";
        case Outcome::kFailed:
            return "failed";
        case Outcome::kDeadlocked:
            return "deadlocked";
        case Outcome::kTimeLimit:
            return "over simulated time";
        case Outcome::kHung:
            return "hung";
    }
    return "?";
}

struct Run {
    uint64_t seed = 0;
    int status = 0;  // waitpid's
    Outcome outcome = Outcome::kPassed;
};

uint64_t parse_seed(const std::string &text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError(fmt::format("'{}' is not a seed (a number)", text));
    return std::stoull(text);
}

// "A..B" or "N".
std::pair<uint64_t, uint64_t> parse_seed_range(const std::string &text) {
    const auto dots = text.find("..");
    if (dots == std::string::npos) {
        const uint64_t seed = parse_seed(text);
        return {seed, seed};
    }
    const uint64_t first = parse_seed(text.substr(0, dots));
    const uint64_t last = parse_seed(text.substr(dots + 2));
    if (last < first) throw UsageError(fmt::format("--seeds {}: the range is empty", text));
    return {first, last};
}

std::string describe_status(int status) {
    if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return fmt::format("signal {} ({})", sig, strsignal(sig));
    }
    return fmt::format("status {:#x}", status);
}

Outcome classify(int status) {
    if (WIFEXITED(status)) {
        switch (WEXITSTATUS(status)) {
            case 0:
                return Outcome::kPassed;
            case sim::kDeadlockExitCode:
                return Outcome::kDeadlocked;
            case sim::kTimeLimitExitCode:
                return Outcome::kTimeLimit;
            default:
                return Outcome::kFailed;
        }
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return Outcome::kHung;
    return Outcome::kFailed;
}

// Starts one run. `quiet`: its stdout and stderr go to /dev/null.
pid_t start(const SimOptions &o, uint64_t seed, bool quiet,
            const std::map<std::string, std::string> &extra_environment) {
    std::vector<char *> argv;
    for (const auto &a : o.command)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    const std::string seed_text = std::to_string(seed);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
    if (pid > 0) return pid;
    // The child: only async-signal-safe calls from here on, as far as possible.
    setenv("SOFTNDK_TIME", "simulated", 1);
    setenv("SOFTNDK_SEED", seed_text.c_str(), 1);
    if (!o.faults.empty()) setenv("SOFTNDK_FAULTS", o.faults.c_str(), 1);
    for (const auto &[name, value] : extra_environment)
        setenv(name.c_str(), value.c_str(), 1);
    // Replayable from the start (the program would otherwise re-execute itself).
    sim::prepare_environment_for_replay();
    if (quiet) {
        const int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
    alarm(o.timeout_seconds);  // survives exec: a run that hangs dies of SIGALRM
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "softndk sim: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
}

int wait_for(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
    }
    return status;
}


int replay(const SimOptions &o) {
    const uint64_t seed = parse_seed(o.replay);
    std::map<std::string, std::string> environment;
    environment["SOFTNDK_SIM_TRACE"] =
        o.trace.empty() ? fmt::format("softndk-sim-{}.trace", seed) : o.trace;
    if (!o.pcap.empty()) environment["SOFTNDK_PCAP"] = o.pcap;
    const int status = wait_for(start(o, seed, false, environment));
    const Outcome outcome = classify(status);
    std::fprintf(stderr, "softndk sim: seed %llu %s (%s); trace in %s\n",
                 static_cast<unsigned long long>(seed), outcome_name(outcome),
                 describe_status(status).c_str(), environment["SOFTNDK_SIM_TRACE"].c_str());
    if (o.json) {
        std::printf("{\"seed\": %llu, \"outcome\": %s, \"status\": %s, \"trace\": %s}\n",
                    static_cast<unsigned long long>(seed),
                    json_string(outcome_name(outcome)).c_str(),
                    json_string(describe_status(status)).c_str(),
                    json_string(environment["SOFTNDK_SIM_TRACE"]).c_str());
    }
    return outcome == Outcome::kPassed ? 0 : 1;
}

int sweep(const SimOptions &o) {
    const auto [first, last] = parse_seed_range(o.seeds);
    const unsigned jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
    const auto started = std::chrono::steady_clock::now();
    std::map<pid_t, uint64_t> running;
    std::vector<Run> runs;
    uint64_t next = first;
    bool exhausted = false;
    while (!exhausted || !running.empty()) {
        while (!exhausted && running.size() < jobs) {
            running[start(o, next, true, {})] = next;
            if (next == last) {
                exhausted = true;
            } else {
                ++next;
            }
        }
        int status = 0;
        const pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
        }
        const auto it = running.find(pid);
        if (it == running.end()) continue;
        runs.push_back({it->second, status, classify(status)});
        running.erase(it);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::map<Outcome, uint64_t> counts;
    const Run *first_bad = nullptr;
    for (const Run &r : runs) {
        ++counts[r.outcome];
        if (r.outcome != Outcome::kPassed && (first_bad == nullptr || r.seed < first_bad->seed))
            first_bad = &r;
    }
    std::string program;
    for (const auto &a : o.command)
        program += (program.empty() ? "" : " ") + a;
    if (o.json) {
        std::printf(
            "{\n  \"program\": %s,\n  \"seeds\": {\"first\": %llu, \"last\": %llu},\n"
            "  \"faults\": %s,\n  \"jobs\": %u,\n  \"wall_seconds\": %.3f,\n"
            "  \"passed\": %llu,\n  \"failed\": %llu,\n  \"deadlocked\": %llu,\n"
            "  \"over_time\": %llu,\n  \"hung\": %llu,\n",
            json_string(program).c_str(), static_cast<unsigned long long>(first),
            static_cast<unsigned long long>(last),
            o.faults.empty() ? "null" : json_string(o.faults).c_str(), jobs, seconds,
            static_cast<unsigned long long>(counts[Outcome::kPassed]),
            static_cast<unsigned long long>(counts[Outcome::kFailed]),
            static_cast<unsigned long long>(counts[Outcome::kDeadlocked]),
            static_cast<unsigned long long>(counts[Outcome::kTimeLimit]),
            static_cast<unsigned long long>(counts[Outcome::kHung]));
        if (first_bad != nullptr) {
            std::printf(
                "  \"first_failure\": {\"seed\": %llu, \"outcome\": %s, \"status\": %s}\n}\n",
                static_cast<unsigned long long>(first_bad->seed),
                json_string(outcome_name(first_bad->outcome)).c_str(),
                json_string(describe_status(first_bad->status)).c_str());
        } else {
            std::printf("  \"first_failure\": null\n}\n");
        }
    } else {
        std::printf("softndk sim: %zu seeds (%llu..%llu) of %s, %u at a time, %.1f s\n",
                    runs.size(), static_cast<unsigned long long>(first),
                    static_cast<unsigned long long>(last), program.c_str(), jobs, seconds);
        std::printf("  passed %llu  failed %llu  deadlocked %llu  over time %llu  hung %llu\n",
                    static_cast<unsigned long long>(counts[Outcome::kPassed]),
                    static_cast<unsigned long long>(counts[Outcome::kFailed]),
                    static_cast<unsigned long long>(counts[Outcome::kDeadlocked]),
                    static_cast<unsigned long long>(counts[Outcome::kTimeLimit]),
                    static_cast<unsigned long long>(counts[Outcome::kHung]));
        if (first_bad != nullptr) {
            std::printf(
                "  first failing seed: %llu (%s, %s)\n  replay it: softndk sim --replay "
                "%llu%s%s -- %s\n",
                static_cast<unsigned long long>(first_bad->seed), outcome_name(first_bad->outcome),
                describe_status(first_bad->status).c_str(),
                static_cast<unsigned long long>(first_bad->seed),
                o.faults.empty() ? "" : " --faults ", o.faults.c_str(), program.c_str());
        }
    }
    return first_bad == nullptr ? 0 : 1;
}

}  // namespace

int run_sim(const SimOptions &options) {
    if (options.command.empty()) throw UsageError("no program to run: softndk sim ... -- PROGRAM");
    if (options.timeout_seconds == 0) throw UsageError("--timeout must be at least 1 second");
    return options.replay.empty() ? sweep(options) : replay(options);
}

}  // namespace softndk::tool
