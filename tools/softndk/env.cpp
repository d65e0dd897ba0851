#include "env.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace softndk::tool {

namespace {

// The one list (README's "Environment" table says the same in prose).
constexpr EnvironmentVariable kVariables[] = {
    {"SOFTNDK_MODE", "embedded (default) | daemon",
     "embedded: the device runs in this process; daemon: attach to `softndk rnic`"},
    {"SOFTNDK_SOCKET",
     "PATH (default $XDG_RUNTIME_DIR/softndk.sock, else /tmp/softndk-$UID/softndk.sock)",
     "the daemon's control socket"},
    {"SOFTNDK_DAEMON_TIMEOUT", "MILLISECONDS (default 10000; 0 = wait forever)",
     "daemon mode: how long a consumer waits to connect and for each answer of the daemon"},
    {"SOFTNDK_CONFIG", "PATH (default: one adapter, rnic0, if_index 1, 127.0.0.1 and ::1)",
     "INI file of virtual adapters (in daemon mode the daemon's; its consumers ask it)"},
    {"SOFTNDK_LOG_LEVEL", "trace | debug | info | warn (default) | error | off",
     "log level; logs go to stderr, never stdout (trace logs every RoCEv2 packet)"},
    {"SOFTNDK_FABRIC", "local (default) | udp | udp:PORT",
     "udp: frames for addresses no adapter of this process owns travel as RoCEv2 over UDP "
     "(port 4791 by default)"},
    {"SOFTNDK_FABRIC_RAW", "auto (default) | off",
     "udp, IPv4: auto sends each frame through a raw socket (CAP_NET_RAW) with SoftNDK's own "
     "IP header; off, or without the privilege, through the UDP socket with DF, where the "
     "kernel writes identification 0: the ICRC verifies at a real RoCEv2 peer either way "
     "(docs/wire.md)"},
    {"SOFTNDK_FABRIC_GSO", "on (default) | off",
     "udp: a multi-packet message to an address of this host leaves as UDP GSO batches (up "
     "to 64 datagrams per system call); off sends each datagram alone, so that a capture "
     "on lo shows every packet as its own frame (docs/wire.md)"},
    {"SOFTNDK_PCAP", "PATH", "capture every RoCEv2 packet the fabric carries to this pcap file"},
    {"SOFTNDK_TRACE", "PATH",
     "write the event trace here (daemon mode: the consumer's records go to PATH.consumer-<pid>)"},
    {"SOFTNDK_TIME", "functional (default) | paced | simulated",
     "how model time relates to the wall clock (docs/timing.md, docs/simulation.md)"},
    {"SOFTNDK_SEED", "N (default 0)",
     "the seed of simulated time's scheduler and of the fault decisions"},
    {"SOFTNDK_SIM_TRACE", "PATH", "simulated time: write every scheduling decision here"},
    {"SOFTNDK_SIM_TIME_LIMIT", "SECONDS (default 3600)",
     "simulated time: seconds of simulated time before a run ends (exit 87)"},
    {"SOFTNDK_SIM_REEXECUTED", "(internal)",
     "set by simulated time when it re-executes a program; never set it yourself"},
    {"SOFTNDK_FAULTS", "PATH", "a fault file (INI) armed when a device starts (docs/faults.md)"},
    {"SOFTNDK_REGISTRY", "PATH", "registry file (.reg) the driver runner loads before DriverEntry"},
    {"SOFTNDK_FILE_ROOT", "DIR (default: the current directory)",
     "host directory that stands for the drives of ZwCreateFile names"},
};

}  // namespace

std::span<const EnvironmentVariable> environment_variables() {
    return kVariables;
}

std::string environment_help() {
    std::string out = "Environment (`softndk env` shows the values):\n";
    for (const EnvironmentVariable &v : kVariables)
        out += fmt::format("  {:<25}{}\n  {:<25}{}\n", v.name, v.values, "", v.meaning);
    return out;
}

int run_env(bool verbose) {
    std::string out;
    for (const EnvironmentVariable &v : kVariables) {
        if (verbose) out += fmt::format("# {}: {}\n#   {}\n", v.name, v.meaning, v.values);
        const char *value = std::getenv(v.name);
        out += value != nullptr ? fmt::format("{}={}\n", v.name, value)
                                : fmt::format("# {} is unset\n", v.name);
    }
    std::fputs(out.c_str(), stdout);
    return 0;
}

}  // namespace softndk::tool
