// stat.hpp - `softndk stat [DEV]`: every counter of the virtual RNIC, as iproute2's
// `rdma statistic show` prints them: one line per adapter and port,
//
//   link rnic0/1 sent_pkts 12 rcvd_pkts 12 ... mtt_cache_misses 3
//
// under Soft-RoCE's counter names where rxe has one, then SoftNDK's own (doorbells,
// CQEs and EQEs, every injected fault, the timing model's QPC/MPT/MTT cache hits and
// misses). The list and its order are SOFTNDK_DEVICE_COUNTERS (hw_interface.hpp §12).
// In daemon mode (SOFTNDK_MODE=daemon) the daemon's doorbell thread adds
// daemon_sleeps and daemon_wakeups (`softndk rnic --status`); they are the daemon's,
// shared by every adapter, so each line repeats them.
//
// The counters are read through the adapter the WSK way and SoftNdkQueryCounter
// (softndk_faults.h), one call per counter: each value is a relaxed snapshot, not a
// consistent cut. They count since the device started: embedded, that is this
// process's own device (all zeros unless a fault file or the profile did
// something); under a daemon, the daemon's device and every consumer's traffic.
//
// -j/--json prints a JSON array with an object per adapter: "ifname", "port" (1),
// "if_index", then every counter by name, as `rdma -j statistic show` does.
#pragma once

#include <string>
#include <vector>

#include "softndk_adapters.h"

namespace softndk::tool {

struct StatOptions {
    std::string device;  // alias or if_index, optionally "/1" (the only port); "" = all
    bool json = false;
};

// The adapters DEV names (alias or if_index, optionally "/1"), or every adapter for
// "". Throws std::runtime_error for an unknown adapter or another port.
std::vector<softndk_adapter> select_adapters(const std::string &device);

// Prints to stdout. Returns 0; throws std::runtime_error (exit 1) for an unknown
// adapter or port, or a device that does not answer.
int run_stat(const StatOptions &options);

}  // namespace softndk::tool
