// softndk - SoftNDK's command-line tool.
//
//   softndk perf      perftest's ib_{send,write,read}_{lat,bw}, both ends in this process
//   softndk ib_write_bw [HOST] ... (and the other five ib_* names): perftest's two
//                     processes, server without HOST, client with it
//   softndk env       every SOFTNDK_* environment variable and its value
//   softndk devices   the virtual adapters (ibv_devices / ibv_devinfo)
//   softndk rnic      the virtual RNIC daemon that SOFTNDK_MODE=daemon consumers attach to
//   softndk sim       a program in simulated time under many seeds, or one seed replayed
//   softndk trace     a SOFTNDK_TRACE event trace as Perfetto JSON, text or pcapng
//   softndk stat      the device's counters (rdma statistic show)
//   softndk res       live objects (rdma resource show): qp, cq, pd, mr
//   softndk --version tool version, hardware ABI version, NDK version
//
// Exit codes (docs/conventions.md): 0 success, 1 runtime failure (message on
// stderr), 2 usage error: an unknown subcommand or option, a malformed value or
// address, a SOFTNDK_CONFIG that names no file. CLI11 exits 105-110 on parse errors by default;
// every CLI::ParseError except --help/--version is mapped to 2 here.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <string>

#include "daemon/cli.hpp"
#include "devices.hpp"
#include "env.hpp"
#include "log.hpp"
#include "ndk.hpp"
#include "perf.hpp"
#include "res.hpp"
#include "sim.hpp"
#include "softndk/hw_interface.hpp"
#include "stat.hpp"
#include "trace.hpp"

#ifndef SOFTNDK_VERSION
#define SOFTNDK_VERSION "0.0.0"
#endif

namespace {

using namespace softndk::tool;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// The NDK version an adapter runs at is negotiated when it is opened, so the
// first adapter is opened to report it.
std::string version_text() {
    std::string ndk;
    try {
        softndk_adapter a{};
        char error[512];
        if (softndk_adapter_find(nullptr, &a, error, sizeof error) != 0)
            throw std::runtime_error(error);
        WskClient wsk;
        NDK_ADAPTER *adapter = wsk.open(a.if_index);
        const NDK_ADAPTER_INFO info = query_adapter_info(adapter);
        wsk.close(adapter);
        ndk = fmt::format("{}.{} (adapter {}, NDKPI 2.1 headers)", info.Version.Major,
                          info.Version.Minor, a.alias);
    } catch (const std::exception &e) {
        ndk = fmt::format("unknown ({})", e.what());
    }
    return fmt::format("softndk {}\nhardware ABI version: {}\nNDK version: {}", SOFTNDK_VERSION,
                       softndk::hw::kAbiVersion, ndk);
}

// One footer for every command: the environment table of env.cpp.
const std::string kEnvironment = environment_help();

// perftest's options, shared by `softndk perf` and the ib_* commands. For
// `softndk perf` (`legacy_mode` set), -t and -m also take their old values: -t
// send|write|read is --test and -m lat|bw is --mode (stored in *legacy_mode), so
// that scripts written for earlier versions keep working; a number is perftest's
// tx depth or MTU.
void add_perftest_options(CLI::App &cmd, PerfOptions &o, std::string *legacy_mode = nullptr) {
    cmd.add_option("-s,--size", o.size,
                   "message size in bytes, k/m suffixes (default 2 lat, 65536 bw) (SYMMETRIC)")
        ->transform(CLI::AsSizeValue(false))
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 31));
    cmd.add_flag("-a,--all", o.all_sizes,
                 "run sizes 2 .. 8M (powers of two), capped at the adapter's MaxTransferLength");
    cmd.add_option("-n,--iters", o.iterations,
                   "iterations per size (default 1000 lat, 5000 bw) (SYMMETRIC)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
    const auto number = [](const std::string &text, unsigned low, unsigned high, const char *what) {
        unsigned value = 0;
        size_t used = 0;
        try {
            value = static_cast<unsigned>(std::stoul(text, &used));
        } catch (const std::exception &) {
            used = 0;
        }
        if (used == 0 || used != text.size() || value < low || value > high)
            throw CLI::ValidationError(
                fmt::format("{}: '{}' is not a number in {}..{}", what, text, low, high));
        return value;
    };
    if (legacy_mode == nullptr) {
        cmd.add_option("-t,--tx-depth", o.tx_depth,
                       "work requests in flight (default 128 bw, 1 lat)")
            ->check(CLI::Range(1u, 1u << 16));
    } else {
        cmd.add_option("--tx-depth", o.tx_depth, "work requests in flight (default 128 bw, 1 lat)")
            ->check(CLI::Range(1u, 1u << 16));
        cmd.add_option_function<std::string>(
            "-t",
            [&o, number](const std::string &v) {
                if (v == "send" || v == "write" || v == "read")
                    o.verb = v == "send" ? Verb::kSend : v == "write" ? Verb::kWrite : Verb::kRead;
                else
                    o.tx_depth = number(v, 1, 1u << 16, "-t");
            },
            "tx depth (= --tx-depth); also send|write|read (= --test), as before");
    }
    cmd.add_option("-Q,--cq-mod", o.cq_moderation,
                   "bw: signal one request in this many (default 100, at most the tx depth)")
        ->check(CLI::Range(1u, 1u << 16));
    cmd.add_option("-I,--inline_size", o.inline_size,
                   "max size of message sent inline (default 220 write lat, 236 send lat, else 0)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
    cmd.add_option("-d,--ib-dev,--device", o.device,
                   "adapter of this end (of the client end with both in one process): alias or "
                   "if_index (default: the first)");
    cmd.add_option("-p,--port", o.port, "ND port the server listens on (default 18515)")
        ->check(CLI::Range(1, 65535));
    const char *mtu_help =
        "path MTU 256|512|1024|2048|4096: sets it on adapters perf sets up itself "
        "(embedded without SOFTNDK_CONFIG, or --profile); otherwise it must be the "
        "adapter's (exit 1)";
    if (legacy_mode == nullptr) {
        cmd.add_option("-m,--mtu", o.mtu, mtu_help)
            ->check(CLI::IsMember({256u, 512u, 1024u, 2048u, 4096u}));
    } else {
        cmd.add_option("--mtu", o.mtu, mtu_help)
            ->check(CLI::IsMember({256u, 512u, 1024u, 2048u, 4096u}));
        cmd.add_option_function<std::string>(
            "-m",
            [&o, legacy_mode, number](const std::string &v) {
                if (v == "lat" || v == "bw" || v == "LAT" || v == "BW") {
                    *legacy_mode = v;
                    return;
                }
                o.mtu = number(v, 256, 4096, "-m");
                if ((o.mtu & (o.mtu - 1)) != 0)
                    throw CLI::ValidationError("-m: the MTU is 256, 512, 1024, 2048 or 4096");
            },
            "MTU (= --mtu); also lat|bw (= --mode), as before");
    }
    cmd.add_option("-q,--qp", o.qp_count,
                   "bw: number of QPs (connections); requests go round robin, each QP with its "
                   "own tx depth (default 1; latency tests: 1 only)")
        ->check(CLI::Range(1u, 0xFFFFu));
    cmd.add_option("-l,--post_list", o.post_list,
                   "bw: requests posted per QP in a row, all but the last with "
                   "NDK_OP_FLAG_DEFER: one doorbell each list (default 1; latency: 1 only)")
        ->check(CLI::Range(1u, 1u << 16));
    cmd.add_flag("-e,--events", o.events,
                 "sleep on CQ events (NdkArmCq and the CQ notification) instead of polling");
    cmd.add_option("-D,--duration", o.duration,
                   "run for this many seconds instead of -n iterations (one size)")
        ->check(CLI::Range(1u, 86400u));
    cmd.add_flag("-N,--noPeak", o.no_peak, "bw: do not compute BW peak (reported as 0)");
    cmd.add_option("-c,--connection", o.connection,
                   "connection type: RC (NDK has reliable connections only; UC, UD, XRC, DC "
                   "and SRD exit 1)")
        ->check(CLI::IsMember({"RC", "UC", "UD", "XRC", "DC", "SRD"}));
    cmd.add_option("-u,--qp-timeout", o.qp_timeout,
                   "ACK timeout code, 4.096 us << N (0 = infinite): on adapters perf sets up "
                   "itself only (else set ack_timeout in SOFTNDK_CONFIG)")
        ->check(CLI::Range(0, 31));
    cmd.add_flag("-F,--CPU-freq")
        ->description(
            "accepted for perftest's scripts: SoftNDK never warns about "
            "the CPU frequency governor, so there is nothing to silence");
    cmd.add_flag("--report-both")
        ->description(
            "accepted for perftest's scripts: there is no bidirectional mode (-b), so one "
            "direction to report; in two processes both ends print the table anyway");
    cmd.add_flag("-H,--report-histogram", o.histogram,
                 "latency: after each row, every sample (one way, usec), sorted");
    cmd.add_flag("-U,--report-unsorted", o.unsorted,
                 "latency: after each row, every sample (one way, usec), in iteration order");
    cmd.add_flag("-j,--json", o.json, "print JSON (perftest's field names) instead of the table");
    cmd.add_option("--out_json_file", o.json_file,
                   "also write the JSON report to this file; the table stays on stdout");
    cmd.add_flag_callback(
        "--out_json",
        [&o] {
            if (o.json_file.empty()) o.json_file = "perftest_out.json";
        },
        "write the JSON report to perftest_out.json (or --out_json_file); the table stays on "
        "stdout");
    cmd.add_flag("--report_gbits", o.report_gbits, "bandwidth in Gb/sec instead of MB/sec");
    const std::map<std::string, ClockSource> clocks{{"wall", ClockSource::kWall},
                                                    {"model", ClockSource::kModel}};
    cmd.add_option("--clock", o.clock,
                   "wall|model: figures from the wall clock (default) or from model time (the "
                   "device's dates, through SoftNDK's model-time extension; exit 1 without it; "
                   "both ends in one process only)")
        ->transform(CLI::CheckedTransformer(clocks, CLI::ignore_case));
    cmd.add_option("--stall-timeout", o.stall_timeout,
                   "seconds a wait may see no completion before the run gives up as stalled "
                   "(exit 1; default 10). A run that keeps completing is never stalled")
        ->check(CLI::PositiveNumber);
    cmd.add_option("--profile", o.profile,
                   "embedded mode: run on adapters of this device profile (a name, or a profile "
                   "file path/to/x.ini); in one process rnic0 (client) and rnic1 (server), back "
                   "to back (unknown name: the list)");
    cmd.add_option("--set", o.settings,
                   "KEY=VALUE: change a [timing] or [transport] key of --profile's profile "
                   "for this run, e.g. --set blueflame_bytes=0 (repeatable; requires --profile)");
    cmd.add_option("--time", o.time_mode,
                   "functional|paced: the time mode of --profile's adapters (requires "
                   "--profile; without it SOFTNDK_TIME sets the mode). paced: --clock wall "
                   "shows what the modeled hardware would show")
        ->check(CLI::IsMember({"functional", "paced"}));
}

const char kPerfFooter[] =
    "Latency is one way (half a round trip) for send and write, the whole round trip for\n"
    "read. MB = 2^20 bytes, as in perftest. With -a and no -n, sizes whose iterations\n"
    "would move more than 512 MiB run fewer iterations (at least 16).\n\n"
    "Two processes, as perftest: without HOST this end is the server and waits for a\n"
    "client; with HOST (the server adapter's address) it is the client, which retries\n"
    "for 10 s while nobody listens. Both print the table (the server prints the client's\n"
    "figures). Embedded, they meet over RoCEv2/UDP (SOFTNDK_FABRIC=udp unless set);\n"
    "without SOFTNDK_CONFIG a client aimed at 127.0.0.1 takes 127.0.0.2 (docs/tools.md).\n\n"
    "--clock model reports the modeled RNIC's time instead of the wall clock: latency\n"
    "from the model completion times of successive iterations, bandwidth from the model\n"
    "time of the last completion; it is deterministic in functional time mode. A write\n"
    "latency iteration answers the peer's completion (no CQE dates the placement).\n"
    "--profile sets up two adapters of its own (embedded mode only): rnic0 (if_index 1,\n"
    "127.0.0.1) for the client and rnic1 (if_index 2, 127.0.0.2) for the server.\n\n";

// The perftest names: ib_{send,write,read}_{lat,bw}.
struct PerftestCommand {
    const char *name;
    Verb verb;
    Mode mode;
};
constexpr PerftestCommand kPerftestCommands[] = {
    {"ib_send_lat", Verb::kSend, Mode::kLatency},   {"ib_send_bw", Verb::kSend, Mode::kBandwidth},
    {"ib_write_lat", Verb::kWrite, Mode::kLatency}, {"ib_write_bw", Verb::kWrite, Mode::kBandwidth},
    {"ib_read_lat", Verb::kRead, Mode::kLatency},   {"ib_read_bw", Verb::kRead, Mode::kBandwidth},
};

void add_perf(CLI::App &app, PerfOptions &o, std::string &mode, bool &lat, bool &bw, bool &server) {
    auto *perf = app.add_subcommand(
        "perf",
        "perftest's ib_{send,write,read}_{lat,bw} with --test and --mode: both ends in this "
        "process on one thread (embedded, or the daemon with SOFTNDK_MODE=daemon); with HOST "
        "or --server, one end as the ib_* commands");
    perf->footer(std::string(kPerfFooter) + kEnvironment);
    const std::map<std::string, Verb> verbs{
        {"send", Verb::kSend}, {"write", Verb::kWrite}, {"read", Verb::kRead}};
    perf->add_option("--test", o.verb, "send|write|read (default write)")
        ->transform(CLI::CheckedTransformer(verbs, CLI::ignore_case));
    auto *m = perf->add_option("--mode", mode, "lat|bw (default bw)")
                  ->check(CLI::IsMember({"lat", "bw"}, CLI::ignore_case));
    auto *l = perf->add_flag("--lat", lat, "latency test (= --mode lat)");
    auto *b = perf->add_flag("--bw", bw, "bandwidth test (= --mode bw)");
    m->excludes(l)->excludes(b);
    l->excludes(b);
    perf->add_option(
        "--server-dev", o.server_device,
        "adapter of the server end (default: the same adapter, a loopback connection)");
    auto *host = perf->add_option("HOST", o.host, "the server's address: run the client end");
    perf->add_flag("--server", server, "run the server end: wait for a client")->excludes(host);
    add_perftest_options(*perf, o, &mode);
}

void add_perftest_commands(CLI::App &app, PerfOptions &o) {
    for (const PerftestCommand &c : kPerftestCommands) {
        auto *cmd = app.add_subcommand(
            c.name, fmt::format("perftest's {}: without HOST the server (waits for a client), "
                                "with HOST the client",
                                c.name));
        cmd->footer(std::string(kPerfFooter) + kEnvironment);
        cmd->add_option("HOST", o.host, "the server's address (IPv4 or IPv6): run the client");
        add_perftest_options(*cmd, o);
    }
}

void add_env(CLI::App &app, bool &verbose) {
    auto *env = app.add_subcommand(
        "env", "every SOFTNDK_* environment variable and its value here (like fi_info -e)");
    env->add_flag("-v,--verbose", verbose, "also what each takes and means");
}

void add_devices(CLI::App &app, DevicesOptions &o) {
    auto *devices = app.add_subcommand(
        "devices", "list the virtual adapters and their NDK limits (ibv_devices / ibv_devinfo)");
    devices->footer(kEnvironment);
    devices->add_option("-d,--ib-dev,--device", o.device, "only this adapter: alias or if_index");
    devices->add_flag("-l,--list", o.list, "only names, interface indexes and addresses");
    devices->add_flag("-j,--json", o.json, "print JSON");
    devices->add_option("-i,--ib-port", o.port, "only this port (a virtual adapter has port 1)")
        ->check(CLI::Range(1u, 255u));
    devices->add_flag("-v,--verbose", o.verbose,
                      "also the profile: its source (built-in or file), description, technology "
                      "and timing costs");
}

void add_sim(CLI::App &app, SimOptions &o) {
    auto *sim = app.add_subcommand(
        "sim",
        "run a program in simulated time (SOFTNDK_TIME=simulated) under many seeds, or "
        "replay one seed with its trace (docs/simulation.md)");
    sim->footer(
        "Outcomes: passed (exit 0), failed (another status or a signal), deadlocked (every "
        "thread blocked: exit 86), over time (SOFTNDK_SIM_TIME_LIMIT: exit 87), hung (killed "
        "after --timeout).\nExample: softndk sim --seeds 1..1000 -- ./kernel_driver");
    sim->add_option("--seeds", o.seeds, "the seeds to run: A..B or N")->capture_default_str();
    sim->add_option("--replay", o.replay,
                    "run this seed once, in the foreground, writing its trace");
    sim->add_option("-j,--jobs", o.jobs, "runs at a time (default: one per core)");
    sim->add_option("--faults", o.faults, "a fault file for every run (SOFTNDK_FAULTS)");
    sim->add_option("--trace", o.trace,
                    "--replay: the scheduler's trace file (default softndk-sim-SEED.trace)");
    sim->add_option("--pcap", o.pcap, "--replay: capture the run's RoCEv2 packets here");
    sim->add_option("--timeout", o.timeout_seconds, "wall seconds before a run counts as hung")
        ->capture_default_str();
    sim->add_flag("--json", o.json, "print the summary as JSON");
    sim->add_option("command", o.command, "-- PROGRAM ARGS...")->required();
}

void add_stat(CLI::App &app, StatOptions &o) {
    auto *stat = app.add_subcommand(
        "stat", "every device counter, rxe's names then SoftNDK's own (rdma statistic show)");
    stat->footer(
        "Counters count since the device started. Embedded (the default), the device is this\n"
        "process's own: a fresh one, all zeros but what SOFTNDK_FAULTS did. With\n"
        "SOFTNDK_MODE=daemon it is the daemon's, shared by every consumer, and the daemon's\n"
        "doorbell thread adds daemon_sleeps and daemon_wakeups.\n\n" +
        kEnvironment);
    stat->add_option("DEV", o.device, "only this adapter: alias or if_index, optionally /1");
    stat->add_flag("-j,--json", o.json, "print JSON: an object per adapter");
}

void add_res(CLI::App &app, ResOptions &o) {
    auto *res = app.add_subcommand(
        "res", "live objects: QPs, CQs, MRs, PDs, SRQs, CM connections (rdma resource show)");
    res->require_subcommand(1);
    auto *show = res->add_subcommand("show", "list the live objects of one kind");
    show->add_option("KIND", o.kind, "qp|cq|mr|pd|srq|cm")
        ->required()
        ->check(CLI::IsMember({"qp", "cq", "mr", "pd", "srq", "cm"}));
    show->add_option("DEV", o.device, "only this adapter: alias or if_index, optionally /1");
    show->add_flag("-j,--json", o.json, "print JSON: an object per object");
    show->footer(
        "Embedded (the default), the device is the tool's own: it lists no object of any\n"
        "other process. With SOFTNDK_MODE=daemon it lists every consumer's objects, each\n"
        "with its process id (pid) and context (ctx). cm lists connections, listeners\n"
        "and shared endpoints.\n\n" +
        kEnvironment);
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"softndk - NDKPI on a virtual RNIC, in Linux user mode"};
    app.footer(kEnvironment);
    app.set_version_flag("-V,--version", version_text,
                         "print the tool, hardware ABI and NDK versions");
    app.require_subcommand(1);

    PerfOptions perf;
    std::string mode;
    bool lat = false, bw = false, server = false;
    add_perf(app, perf, mode, lat, bw, server);
    add_perftest_commands(app, perf);
    DevicesOptions devices;
    add_devices(app, devices);
    softndk::emu::daemon::RnicCommandLine rnic;
    auto *rnic_command = app.add_subcommand(
        "rnic", "run the virtual RNIC daemon; consumers attach with SOFTNDK_MODE=daemon");
    rnic_command->footer(kEnvironment);
    softndk::emu::daemon::add_rnic_options(*rnic_command, rnic);
    SimOptions sim;
    add_sim(app, sim);
    TraceOptions trace;
    add_trace(app, trace);
    StatOptions stat;
    add_stat(app, stat);
    ResOptions res;
    add_res(app, res);
    bool env_verbose = false;
    add_env(app, env_verbose);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        const int code = app.exit(e);  // help/version to stdout, errors to stderr
        return code == 0 ? 0 : kExitUsage;
    }

    const std::string command = app.get_subcommands().front()->get_name();
    if (command == "env") return run_env(env_verbose);
    // A SOFTNDK_CONFIG that names no file is a usage error (2), like a missing
    // argument; a file that exists but is wrong is a runtime failure (1). Checked
    // for the commands that open adapters with it; rnic has --config (its own
    // checks), sim hands the environment to its program, trace reads no adapter.
    const bool opens_adapters = command == "perf" || command.rfind("ib_", 0) == 0 ||
                                command == "devices" || command == "stat" || command == "res";
    if (const char *config = std::getenv("SOFTNDK_CONFIG");
        opens_adapters && config != nullptr && *config != '\0') {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(config, ec)) {
            std::fprintf(stderr, "softndk %s: SOFTNDK_CONFIG=%s: no such file\n", command.c_str(),
                         config);
            return kExitUsage;
        }
    }
    try {
        const bool perftest_name = command.rfind("ib_", 0) == 0;
        if (command == "perf" || perftest_name) {
            for (const PerftestCommand &c : kPerftestCommands) {
                if (command != c.name) continue;
                perf.verb = c.verb;
                perf.mode = c.mode;
            }
            if (command == "perf") {
                if (!mode.empty() && (lat || bw)) {
                    std::fprintf(stderr,
                                 "softndk perf: --mode/-m and --lat/--bw exclude each other\n");
                    return kExitUsage;
                }
                if (lat || mode == "lat" || mode == "LAT") perf.mode = Mode::kLatency;
                if (bw) perf.mode = Mode::kBandwidth;
            }
            perf.role = !perf.host.empty()        ? Role::kClient
                        : perftest_name || server ? Role::kServer
                                                  : Role::kBoth;
            try {
                return run_perf(perf);
            } catch (const UsageError &e) {
                std::fflush(stdout);
                std::fprintf(stderr, "softndk %s: %s\n", command.c_str(), e.what());
                return kExitUsage;
            }
        }
        if (command == "rnic") return softndk::emu::daemon::run_rnic(rnic);
        if (command == "sim") {
            try {
                return run_sim(sim);
            } catch (const UsageError &e) {
                std::fflush(stdout);
                std::fprintf(stderr, "softndk sim: %s\n", e.what());
                return kExitUsage;
            }
        }
        if (command == "trace") return run_trace(trace);
        if (command == "stat") return run_stat(stat);
        if (command == "res") return run_res(res);
        return run_devices(devices);
    } catch (const std::exception &e) {
        std::fflush(stdout);
        std::fprintf(stderr, "softndk %s: %s\n", command.c_str(), e.what());
        return kExitFailure;
    }
}
