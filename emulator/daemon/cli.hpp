// cli.hpp - the command line of the virtual RNIC daemon, shared by `softndk rnic`
// (tools/softndk) and the standalone softndk-rnic executable.
//
//   softndk rnic [--socket PATH] [--config FILE] [--adapter SPEC]... [--log-level LEVEL]
//                [--spin-us N] [--trace FILE] [--allow-group GROUP] [--ready-fd N | --detach]
//   softndk rnic --status [-j] [--socket PATH]
//
// Serves until SIGINT/SIGTERM, then detaches every client and removes the socket.
// Prints "softndk rnic: listening on PATH" to stdout once clients can connect, and
// reports that moment (daemon/readiness.hpp) to --ready-fd N ("READY=1\n", then the fd
// is closed), to systemd when NOTIFY_SOCKET is set (READY=1; STOPPING=1 at shutdown),
// and with --detach (alias --background) by returning to the shell: the command forks,
// prints the daemon's pid once it listens and exits 0 (or exits with the daemon's
// failure status). Logging: --log-level, else SOFTNDK_LOG_LEVEL, else warn; stderr.
// `softndk rnic --status` instead asks the daemon on the socket for its sessions and
// contexts (exit 1 if none answers), e.g. to check that a dead client was cleaned up;
// with -j/--json as one JSON object with the same keys (numbers as numbers).
// Exit codes (docs/conventions.md): 0 clean shutdown, 1 runtime failure, 2 usage error.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace softndk::emu::daemon {

struct RnicCommandLine {
    std::string socket_path;
    std::string allow_group;  // --allow-group: a name or gid also served ("" = none)
    std::string config_path;
    std::vector<std::string> adapter_specs;
    bool detach = false;    // --detach/--background: return once listening, print the pid
    int ready_fd = -1;      // --ready-fd N: write "READY=1\n" to N once listening; -1 = none
    std::string log_level;  // --log-level; "" = SOFTNDK_LOG_LEVEL, else warn
    int spin_us = -1;       // --spin-us; -1 = not given: 25 us while a core is to spare
    // --quota KEY=N, repeatable: server.hpp apply_quota (per-consumer object quotas and
    // the daemon's session/mapping limits).
    std::vector<std::string> quotas;
    bool status = false;     // --status: query the running daemon instead of starting one
    bool json = false;       // --status -j/--json: the status as one JSON object
    std::string time_mode;   // --time: functional | paced ("" = SOFTNDK_TIME, else functional)
    std::string trace_path;  // --trace FILE: the device's event trace ("" = SOFTNDK_TRACE)
};

// Adds the daemon's options to `app` (the top-level app or a subcommand).
void add_rnic_options(CLI::App &app, RnicCommandLine &command_line);

// Validates what add_rnic_options parsed, builds the adapters and serves. Returns
// the exit code.
int run_rnic(const RnicCommandLine &command_line);

}  // namespace softndk::emu::daemon
