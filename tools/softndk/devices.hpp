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
// Daemon mode (SOFTNDK_MODE=daemon): everything printed is the daemon's. The adapter
// list - names, indexes, addresses, path MTU, profiles and their costs - comes from the
// daemon (softndk_adapters.h, kDaemonAdapter), each adapter's limits and NDK version
// from opening it through the daemon; the tool's SOFTNDK_CONFIG plays no part and
// need not be set. No daemon on the socket is exit 1.
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
