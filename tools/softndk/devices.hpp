// devices.hpp - `softndk devices`: the configured virtual adapters, like
// ibv_devices (-l) and ibv_devinfo (default): interface index, alias,
// addresses and profile from the adapter directory, and the limits the
// adapter reports through NdkQueryAdapterInfo (opened the WSK way). With -v
// (ibv_devinfo -v) also where the profile came from (built-in or its file),
// its description and technology, and every [timing] cost, `key: value`.
//
// Each adapter has one port, 1, printed as ibv_devinfo prints a port: state
// (PORT_ACTIVE: a configured adapter is always up), max_mtu (4096) and
// active_mtu (the adapter's path MTU) with verbs' enum value, link_layer
// (Ethernet: RoCEv2 and iWARP both run over it) and one GID per address: the
// IPv4-mapped IPv6 address for IPv4, the address itself for IPv6, with the GID
// type ", RoCE v2" on a RoCEv2 adapter. -i PORT selects the port; another port
// than 1 is a runtime failure (exit 1), as ibv_devinfo's.
//
// Daemon mode (SOFTNDK_MODE=daemon): each adapter is opened through the daemon, so
// its limits and NDK version are the daemon's; names, addresses and profiles still
// come from the local configuration, and the daemon is asked (kDaemonStatus)
// whether it has each of them and as many: a difference is exit 1.
#pragma once

#include <string>

namespace softndk::tool {

struct DevicesOptions {
    std::string device;  // only this adapter (alias or if_index); "" = all
    bool list = false;   // names and indexes only
    bool json = false;
    bool verbose = false;  // the profile's source, description and timing costs
    unsigned port = 0;     // -i: only this port (a virtual adapter has port 1); 0 = all
};

// Prints to stdout. Returns the exit code: 0, or 1 after a message on stderr.
int run_devices(const DevicesOptions &options);

}  // namespace softndk::tool
