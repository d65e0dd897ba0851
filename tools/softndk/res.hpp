// res.hpp - `softndk res show {qp|cq|pd|mr} [DEV] [-j]`: the device's live objects, as
// iproute2's `rdma resource show` prints them, one line per object:
//
//   link rnic0/1 lqpn 2 rqpn 3 type RC state RTS sq-psn 4660 sq-una-psn 4660 rq-psn 17
//     sq-depth 2 sq-unfetched 0 sq-outstanding 0 rq-depth 1 rq-queued 1 pd 1 scq 1 rcq 1
//     conn 1 ctx 1 pid 4242
//   link rnic0/1 cqn 1 cqe 4 queued 0 armed no dead no arm-type errors ctx 1 pid 4242
//   link rnic0/1 pdn 1 users 2 ctx 1 pid 4242
//   link rnic0/1 mrn 2 type mr state valid token 513 iova 94 mrlen 4096 access LR,LW,RR,RW
//     pd 1 ctx 1 pid 4242
//
// The objects are the whole device's (SoftNdkQueryResources, softndk_resources.h),
// with the process that owns each: embedded, the tool's own device, so none but its
// own (there are none); with SOFTNDK_MODE=daemon, every consumer of the daemon.
// mr lists every memory key (MRs, windows, privileged tokens; iova in decimal,
// access as LR,LW,RR,RW,MW,RS). A QP's fill: sq-unfetched (WQEBBs posted, not yet
// fetched), sq-outstanding (WQEs fetched, not yet completed), rq-queued (receives
// posted, not yet consumed). srq: depth, receives queued,
// the armed limit. cm: connections (active or passive, their state, both addresses,
// QP, the peer's id), listeners and shared endpoints, like `rdma resource show cm_id`.
//
// -j/--json: a JSON array, an object per object, with the same keys ('-' as '_'),
// numbers as numbers, and "ifname", "port".
#pragma once

#include <string>

namespace softndk::tool {

struct ResOptions {
    std::string kind;    // qp | cq | mr | pd | srq | cm
    std::string device;  // alias or if_index, optionally /1; "" = every adapter
    bool json = false;
};

// Prints to stdout. Returns 0, or 1 after a message on stderr for a kind not built
// yet; throws std::runtime_error (exit 1) for an unknown adapter.
int run_res(const ResOptions &options);

}  // namespace softndk::tool
