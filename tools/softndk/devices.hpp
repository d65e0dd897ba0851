// devices.hpp - `softndk devices`: the configured virtual adapters, like
// ibv_devices (-l) and ibv_devinfo (default): interface index, alias,
// addresses and profile from the adapter directory, and the limits the
// adapter reports through NdkQueryAdapterInfo (opened the WSK way). With -v
// (ibv_devinfo -v) also where the profile came from (built-in or its file),
// its description and technology, and every [timing] cost, `key: value`.
#pragma once

#include <string>

namespace softndk::tool {

struct DevicesOptions {
    std::string device;  // only this adapter (alias or if_index); "" = all
    bool list = false;   // names and indexes only
    bool json = false;
    bool verbose = false;  // the profile's source, description and timing costs
};

// Prints to stdout. Returns the exit code: 0, or 1 after a message on stderr.
int run_devices(const DevicesOptions &options);

}  // namespace softndk::tool
