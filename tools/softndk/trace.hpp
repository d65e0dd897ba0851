// trace.hpp - `softndk trace`: converts a binary event trace (SOFTNDK_TRACE, docs/trace.md)
// into something to read.
//
//   softndk trace FILE [FILE...] [--format chrome|text|pcap|html] [-o OUT] [--clock model|wall]
//
// Several files are one run's traces from several processes (daemon mode: the daemon's
// device records and each consumer's provider records, FILE.consumer-<pid>): they are
// merged on the wall clock into one trace, so posts and callbacks meet their WQEs.
//
//   chrome  Chrome trace-event JSON for Perfetto / chrome://tracing (the default): a
//           process per device, a thread track per QP, CQ, engine (doorbells and WQE
//           fetch, DMA read, DMA write, event queue, CM, faults), per CQ's callbacks and
//           the port; each WQE an async span from its post to its completion, with a flow
//           arrow post -> first packet -> remote receive CQE (or the last packet's arrival
//           when the message consumes no receive); counters as counter tracks.
//   text    one line per event, in record order, aligned columns.
//   html    the teaching viewer (--html FILE is short for --format html -o FILE): one
//           self-contained page that steps through the trace with a slider - the SQ/RQ
//           rings with pi and ci, the doorbell records, the packets on the wire, the CQEs
//           as they are written, the event queue and the CM (trace_viewer.html).
//   pcap    pcapng: every packet sent, rebuilt as a real RoCEv2 frame (zero-filled payload
//           of the recorded length, valid ICRC), CM messages as IB CM MADs on QP1, and an
//           opt_comment on every frame the receiver dropped or a fault touched.
//
// Timestamps are model time (default) or wall time (--clock wall; a trace written in
// simulated time has none). OUT defaults to stdout for text and chrome, and is required
// for pcap and html. Exit codes: 0 done, 1 unreadable trace or unwritable output, 2 usage.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace softndk::tool {

struct TraceOptions {
    std::vector<std::string> files;  // one trace, or several of one run to merge
    std::string format = "chrome";
    std::string output;  // "" = stdout (text, chrome)
    std::string clock = "model";
    std::string html;  // --html FILE
};

// trace_viewer.html, compiled in by tools/softndk/CMakeLists.txt (trace_viewer_page.cpp).
std::string_view trace_viewer_page();

void add_trace(CLI::App &app, TraceOptions &options);
int run_trace(const TraceOptions &options);

}  // namespace softndk::tool
