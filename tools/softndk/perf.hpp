// perf.hpp - `softndk perf`: perftest's ib_{send,write,read}_{lat,bw} over the
// embedded device, both ends of the connection in this process.
//
// Both ends are driven by ONE thread, as two cooperating state machines that
// poll their CQs (and, for write latency, their buffers) in turn. In embedded
// mode a post runs the whole exchange it starts - packets, ACKs, placement,
// CQEs - on the posting thread before returning, so a second thread would add
// only cross-core hand-offs and scheduler noise; and one thread keeps the tool
// within the machine's cores (docs/conventions.md: never more busy-polling
// threads than cores). The drivers never assume that a post completes inline:
// they poll for everything, so they also work if the device finishes a
// request later (RNR retries, ACK timeouts, or a future daemon mode).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace softndk::tool {

enum class Verb { kSend, kWrite, kRead };
enum class Mode { kLatency, kBandwidth };

const char *verb_name(Verb v);      // "send", "write", "read"
const char *perftest_name(Verb v);  // "Send", "RDMA_Write", "RDMA_Read"

struct PerfOptions {
    Verb verb = Verb::kWrite;
    Mode mode = Mode::kBandwidth;
    uint64_t size = 0;        // 0: perftest's default (2 for latency, 65536 for bandwidth)
    bool all_sizes = false;   // -a: 2 .. 8 MiB, capped at the adapter's MaxTransferLength
    uint64_t iterations = 0;  // 0: default (1000 latency, 5000 bandwidth; see below)
    uint32_t tx_depth = 0;    // 0: 128 for bandwidth, 1 for latency
    uint32_t cq_moderation = 100;
    int64_t inline_size = -1;   // -1: perftest's default (220 write / 236 send latency, else 0)
    std::string device;         // client adapter (alias or if_index); "" = first
    std::string server_device;  // server adapter; "" = same as `device`
    uint16_t port = 18515;      // ND port the server listens on
    bool json = false;
    bool report_gbits = false;
};

// With -a and no -n, each size runs at most this many bytes (both directions
// counted), never fewer than kMinIterations iterations, so that the large
// sizes finish in about a second on the emulator.
inline constexpr uint64_t kAutoIterationBytes = uint64_t{512} << 20;
inline constexpr uint64_t kMinIterations = 16;

// Runs the test and prints the report (stdout: banner and table, or JSON).
// Returns the exit code: 0, or 1 after a message on stderr.
int run_perf(const PerfOptions &options);

}  // namespace softndk::tool
