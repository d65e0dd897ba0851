#include "daemon/cli.hpp"

#include <fcntl.h>
#include <grp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "daemon/daemon_client.hpp"
#include "daemon/log.hpp"
#include "daemon/protocol.hpp"
#include "daemon/readiness.hpp"
#include "daemon/server.hpp"
#include "device/config.hpp"
#include "trace/hooks.hpp"

namespace softndk::emu::daemon {

namespace {

// "if_index=2,ipv4=127.0.0.2,alias=rnic1[,ipv6=...][,profile=...]"; ipv4/ipv6 repeat;
// profile is a built-in name or a profile file (resolve_profile).
bool parse_adapter(const std::string &spec, AdapterConfig &out, std::string &error) {
    out = AdapterConfig{};
    out.if_index = 0;
    out.alias.clear();
    std::string profile = "roce-default";
    size_t pos = 0;
    while (pos <= spec.size()) {
        const size_t comma = std::min(spec.find(',', pos), spec.size());
        const std::string item = spec.substr(pos, comma - pos);
        pos = comma + 1;
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        if (eq == std::string::npos) {
            error = "'" + item + "' is not KEY=VALUE";
            return false;
        }
        const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
        if (key == "if_index") {
            char *end = nullptr;
            const unsigned long v = std::strtoul(value.c_str(), &end, 10);
            if (value.empty() || *end != '\0' || v == 0 || v > 0xffffffffu) {
                error = "bad if_index '" + value + "'";
                return false;
            }
            out.if_index = static_cast<uint32_t>(v);
        } else if (key == "ipv4" || key == "ipv6") {
            softndk::wire::IpAddr ip;
            if (!parse_ip(value, ip) || ip.is_v4() != (key == "ipv4")) {
                error = "bad " + key + " address '" + value + "'";
                return false;
            }
            out.addresses.push_back(ip);
        } else if (key == "alias") {
            out.alias = value;
        } else if (key == "profile") {
            profile = value;
        } else {
            error = "unknown key '" + key + "' (if_index, ipv4, ipv6, alias, profile)";
            return false;
        }
    }
    if (out.if_index == 0) {
        error = "if_index is required";
        return false;
    }
    if (out.addresses.empty()) {
        error = "at least one ipv4= or ipv6= address is required";
        return false;
    }
    // A built-in profile or a profile file (relative to the working directory).
    if (!resolve_profile(profile, "", out.profile, error)) return false;
    if (out.alias.empty()) out.alias = "rnic" + std::to_string(out.if_index - 1);
    return true;
}

}  // namespace

void add_rnic_options(CLI::App &app, RnicCommandLine &command_line) {
    app.add_option("--socket", command_line.socket_path,
                   "control socket (default: SOFTNDK_SOCKET, $XDG_RUNTIME_DIR/softndk.sock or "
                   "/tmp/softndk-$UID/softndk.sock)");
    app.add_option("--allow-group", command_line.allow_group,
                   "also serve the processes whose primary group is GROUP (a name or a gid); "
                   "by default only this uid and root");
    app.add_option("--config", command_line.config_path,
                   "INI file of adapters (the SOFTNDK_CONFIG format)");
    app.add_option(
        "--adapter", command_line.adapter_specs,
        "an adapter: if_index=N,ipv4=A[,ipv6=A][,alias=NAME][,profile=P] (repeatable); P is "
        "a built-in profile or a profile file (FILE.ini or a path with '/')");
    auto *detach = app.add_flag(
        "--detach,--background", command_line.detach,
        "fork, wait until the daemon listens, print its pid and exit 0 (the daemon's exit "
        "status if it failed to start); the daemon's stdin and stdout go to /dev/null");
    app.add_flag("--foreground")
        ->description("stay in the foreground (the default)")
        ->excludes(detach);
    app.add_option("--ready-fd", command_line.ready_fd,
                   "once the socket listens, write \"READY=1\\n\" to this inherited file "
                   "descriptor and close it (systemd's NOTIFY_SOCKET is also honoured)")
        ->check(CLI::NonNegativeNumber)
        ->excludes(detach);
    app.add_option("--log-level", command_line.log_level,
                   "trace, debug, info, warn, error or off (default: SOFTNDK_LOG_LEVEL, else warn)")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
    app.add_option("--spin-us", command_line.spin_us,
                   "microseconds the device thread polls before it sleeps (0 = never spin; "
                   "default: 25 while the CPUs outnumber the consumer processes, else 0)")
        ->check(CLI::Range(0, 100000));
    app.add_option("--quota", command_line.quotas,
                   "KEY=N (repeatable): per-consumer limit on pds (256), cqs (1024), qps "
                   "(1024), srqs (256), mrs (16384), mws (16384), listeners (256, with shared "
                   "endpoints), mappings (1024 memory windows); daemon-wide sessions (256), "
                   "sessions-per-process (64), request-timeout-ms (5000)");
    app.add_option("--time", command_line.time_mode,
                   "functional (as fast as the host allows) or paced (nothing completes before "
                   "its model time); default SOFTNDK_TIME, else functional (docs/timing.md)")
        ->check(CLI::IsMember({"functional", "paced"}));
    app.add_option("--trace", command_line.trace_path,
                   "write the event trace to FILE (docs/trace.md)");
    auto *status =
        app.add_flag("--status", command_line.status,
                     "print the running daemon's pid, sessions, adapters and live contexts, and "
                     "exit");
    app.add_flag("-j,--json", command_line.json, "--status: print it as one JSON object")
        ->needs(status);
    detach->excludes(status);
}

namespace {

// `text` as a JSON string: quotes, backslashes and control characters escaped.
std::string json_quoted(const std::string &text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            out += escaped;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

int print_status(const RnicCommandLine &command_line) {
    const std::string path =
        command_line.socket_path.empty() ? default_socket_path() : command_line.socket_path;
    DaemonStatusResponse status{};
    std::string error;
    if (!DaemonClient::query_status(path, 0, status, error)) {
        std::fprintf(stderr, "softndk rnic --status: %s\n", error.c_str());
        return 1;
    }
    // `sessions` counts the consumers' control connections: this query's own is left
    // out. -j: one JSON object; otherwise one line, key=value, for scripts and tests.
    if (command_line.json) {
        std::printf(
            "{\"pid\": %u, \"socket\": %s, \"sessions\": %u, \"adapters\": %u, "
            "\"contexts\": %u, \"sleeps\": %llu, \"wakeups\": %llu}\n",
            status.daemon_pid, json_quoted(path).c_str(), status.sessions - 1, status.adapters,
            status.serviced_contexts, static_cast<unsigned long long>(status.device_sleeps),
            static_cast<unsigned long long>(status.device_wakeups));
        return 0;
    }
    std::printf("pid=%u socket=%s sessions=%u adapters=%u contexts=%u sleeps=%llu wakeups=%llu\n",
                status.daemon_pid, path.c_str(), status.sessions - 1, status.adapters,
                status.serviced_contexts, static_cast<unsigned long long>(status.device_sleeps),
                static_cast<unsigned long long>(status.device_wakeups));
    return 0;
}

}  // namespace

int run_rnic(const RnicCommandLine &command_line) {
    if (command_line.status) return print_status(command_line);
    int ready_fd = command_line.ready_fd;
    if (ready_fd >= 0 && ::fcntl(ready_fd, F_GETFD) < 0) {
        std::fprintf(stderr, "softndk rnic: --ready-fd %d is not an open file descriptor\n",
                     ready_fd);
        return 2;
    }
    std::string error;
    // Before anything starts a thread: the parent waits here and never returns.
    if (command_line.detach && !detach_until_ready(ready_fd, error)) {
        std::fprintf(stderr, "softndk rnic: %s\n", error.c_str());
        return 1;
    }
    // Every SoftNDK logger reads SOFTNDK_LOG_LEVEL at first use: an explicit
    // --log-level wins over it (and reaches the device's and provider's loggers that
    // way); without either, loggers default to warn.
    if (!command_line.log_level.empty())
        ::setenv("SOFTNDK_LOG_LEVEL", command_line.log_level.c_str(), 1);

    if (!tracing::open_daemon_trace(command_line.trace_path)) return 1;
    DaemonOptions options;
    options.socket_path = command_line.socket_path;
    if (!command_line.allow_group.empty()) {
        const std::string &g = command_line.allow_group;
        if (const group *entry = ::getgrnam(g.c_str()); entry != nullptr) {
            options.allowed_group = entry->gr_gid;
        } else if (g.find_first_not_of("0123456789") == std::string::npos && g.size() < 10) {
            options.allowed_group = static_cast<gid_t>(std::stoul(g));
        } else {
            std::fprintf(stderr, "softndk rnic: --allow-group %s: no such group\n", g.c_str());
            return 2;
        }
    }
    if (command_line.spin_us >= 0) {
        options.spin = std::chrono::microseconds(command_line.spin_us);
        options.spin_policy = DoorbellThread::SpinPolicy::kAlways;
    }
    for (const auto &quota : command_line.quotas) {
        if (!apply_quota(quota, options.quota, options.limits, error)) {
            std::fprintf(stderr, "softndk rnic: %s\n", error.c_str());
            return 2;
        }
    }
    if (!command_line.config_path.empty() &&
        !load_adapter_config(command_line.config_path, options.adapters, error)) {
        std::fprintf(stderr, "softndk rnic: --config %s: %s\n", command_line.config_path.c_str(),
                     error.c_str());
        return 2;
    }
    for (const auto &spec : command_line.adapter_specs) {
        AdapterConfig a;
        if (!parse_adapter(spec, a, error)) {
            std::fprintf(stderr, "softndk rnic: --adapter %s: %s\n", spec.c_str(), error.c_str());
            return 2;
        }
        for (const auto &other : options.adapters) {
            if (other.if_index == a.if_index) {
                std::fprintf(stderr, "softndk rnic: --adapter %s: if_index %u already used\n",
                             spec.c_str(), a.if_index);
                return 2;
            }
        }
        options.adapters.push_back(std::move(a));
    }
    if (options.adapters.empty()) {
        if (const char *env = std::getenv("SOFTNDK_CONFIG"); env != nullptr && *env != '\0') {
            if (!load_adapter_config(env, options.adapters, error)) {
                std::fprintf(stderr, "softndk rnic: SOFTNDK_CONFIG %s: %s\n", env, error.c_str());
                return 2;
            }
        }
    }
    hw::TimeMode mode = hw::TimeMode::kFunctional;
    if (!command_line.time_mode.empty()) {
        mode = *parse_time_mode(command_line.time_mode);
    } else if (!time_mode_from_environment(mode, error)) {
        std::fprintf(stderr, "softndk rnic: %s\n", error.c_str());
        return 2;
    }
    if (mode == hw::TimeMode::kSimulated) {
        // The scheduler runs the threads of one process; a daemon serves others.
        std::fprintf(stderr,
                     "softndk rnic: simulated time runs the consumer and the device in one "
                     "process (the embedded device; docs/simulation.md), not in a daemon\n");
        return 2;
    }
    if (options.adapters.empty()) options.adapters = default_adapter_config();
    for (auto &a : options.adapters)
        a.time_mode = mode;
    try {
        Daemon daemon(std::move(options));  // listens once constructed
        std::printf("softndk rnic: listening on %s\n", daemon.socket_path().c_str());
        std::fflush(stdout);
        // A reader that went away (or a service manager that cannot be reached) does
        // not stop a daemon that works: warn and serve.
        if (ready_fd >= 0 && !write_ready_fd(ready_fd, error)) log().warn("{}", error);
        if (!notify_service_manager("READY=1\nMAINPID=" + std::to_string(::getpid()), error))
            log().warn("{}", error);
        daemon.run();
        if (!notify_service_manager("STOPPING=1", error)) log().warn("{}", error);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "softndk rnic: %s\n", e.what());
        return 1;
    }
    return 0;
}

}  // namespace softndk::emu::daemon
