// perf.hpp - `softndk perf`: perftest's ib_{send,write,read}_{lat,bw} over the
// embedded device, both ends of the connection in this process; and `softndk
// ib_write_bw [HOST]` (the six perftest names): one end per process, as perftest.
//
// Two processes (Role::kServer / kClient). The server listens on its adapter's
// first address at the ND port and accepts -q connections; the client connects
// (retrying for 10 s while nobody listens). The private data carries each end's
// buffer and its test (verb, mode, sizes, -n, -D, -q): a mismatch fails both. The
// client measures, as in one process but with its own end only; the server answers
// latency pings (send and write; a read needs nothing from it) and reposts its
// receives (send bandwidth). When done the client RDMA-writes its rows into the
// server's buffer (past the two halves), waits for the write's completion and
// disconnects; the server, seeing the disconnect, prints those rows. Embedded, the
// two processes meet over RoCEv2/UDP: the tool sets SOFTNDK_FABRIC=udp unless it is
// set, and without SOFTNDK_CONFIG sets up its own adapter (the server on 127.0.0.1
// and ::1, a client aimed at 127.0.0.1 or ::1 on 127.0.0.2); docs/tools.md.
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
//
// The exception: send and write latency in paced mode, embedded, with the wall
// clock. There the wall clock is the measurement, and one thread would add both
// ends' host work to every turn-around (the peer polls for the payload only after
// this thread has also handled the ACK and the completion). So each end runs on
// its own thread, as perftest's two processes do: the server's end on a second
// thread, each polling only its own CQ and buffer. Two busy threads, at most the
// machine's two cores; the banner says "a thread each". (Not in a ThreadSanitizer
// build, which cannot see what orders a payload before its last byte.)
//
// Clocks (--clock). wall: perftest's figures from the steady clock. model: every
// figure from model time (the device's dates, softndk_ext.h), never the wall
// clock:
//   - latency: one sample per iteration, the difference between the model
//     completion times of successive iterations' last request: the read (read),
//     the client's receive of the server's answer (send), the server's answering
//     write (write; no CQE marks a write's placement, so the ping-pong reacts to
//     the peer's completion, and an iteration is two full write round trips).
//     The first sample starts at the consumer's clock (SoftNdkGetModelTime)
//     before the first post. Send and write are halved (one way), read is whole.
//     Every latency request is signaled, and each end waits on its own CQ only:
//     a CQE the waiting end has no reason to see would move the consumer's
//     clock past what caused the answer.
//   - two hosts: a process's handles on one interface share one consumer clock
//     (provider/model_time.hpp), so perf gives each end an adapter of its own
//     (rnic0 and rnic1, below). With adapters from SOFTNDK_CONFIG or the daemon,
//     -d and --server-dev should name two; on one, both ends keep one clock, as
//     one host would.
//   - bandwidth: bytes / (latest model completion time - the consumer's clock
//     before the first post); BW peak from the best run of messages, as with
//     the wall clock, on model times.
// A provider without the model-time extension fails --clock model (exit 1).
//
// QPs and post lists (-q, -l): the client opens N QPs to the server's N (N
// connections, one CQ per end sized for all of them); requests go round robin,
// each QP with its own tx depth. A QP posts `post_list` requests in a row, all
// but the last with NDK_OP_FLAG_DEFER, so one doorbell rings for the batch.
// Latency tests take only -q 1 and -l 1 (as perftest).
//
// Profiles (--profile, --time) and --clock model: embedded mode only (without
// SOFTNDK_CONFIG for --clock model). Before anything opens an adapter, perf sets up
// its own two (EmbeddedRegistry::configure): rnic0
// (if_index 1, 127.0.0.1) for the client and rnic1 (if_index 2, 127.0.0.2) for
// the server, back to back, both with the profile and the time mode; -d and
// --server-dev then choose between those two.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace softndk::tool {

enum class Verb { kSend, kWrite, kRead };
// kBoth: both ends in this process (`softndk perf`). kServer / kClient: one end
// each, in two processes, as perftest's two (`softndk ib_write_bw` waits for a
// client; `softndk ib_write_bw HOST` is the client).
enum class Role { kBoth, kServer, kClient };
enum class Mode { kLatency, kBandwidth };
enum class ClockSource { kWall, kModel };

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
    ClockSource clock = ClockSource::kWall;
    uint32_t qp_count = 1;   // -q: QPs (connections); latency: 1 only
    uint32_t post_list = 1;  // -l: requests per doorbell, per QP; latency: 1 only
    std::string profile;     // --profile: perf's own two adapters with this profile
    std::string time_mode;   // --time functional|paced: their time mode ("" = functional)
    std::vector<std::string> settings;  // --set KEY=VALUE: profile keys changed for this run

    // perftest's flags beyond the above (docs/tools.md).
    Role role = Role::kBoth;
    std::string host;               // kClient: the server's address (IPv4 or IPv6 literal)
    uint32_t mtu = 0;               // -m: 0 = the adapter's path MTU
    bool events = false;            // -e: sleep on CQ events instead of polling the CQ
    uint32_t duration = 0;          // -D seconds: run for this long instead of -n iterations
    bool no_peak = false;           // -N: no BW peak (reported as 0)
    std::string connection = "RC";  // -c: RC only (NDK has reliable connections only)
    int qp_timeout = -1;            // -u: ACK timeout code (4.096 us << n); -1 = the adapter's
    std::string json_file;          // --out_json / --out_json_file: JSON here, table on stdout
    bool histogram = false;         // -H: every latency sample, sorted
    bool unsorted = false;          // -U: every latency sample, in iteration order
    double stall_timeout = 10;      // --stall-timeout: seconds without a completion, then exit 1
};

// A usage error found after parsing (an unknown profile, an option that needs
// another): `softndk` prints it and exits 2.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// With -a and no -n, each size runs at most this many bytes (both directions
// counted), never fewer than kMinIterations iterations, so that the large
// sizes finish in about a second on the emulator.
inline constexpr uint64_t kAutoIterationBytes = uint64_t{512} << 20;
inline constexpr uint64_t kMinIterations = 16;

// Runs the test (options.role: both ends, or one of two processes) and prints
// the report (stdout: banner and table, or JSON with -j; --out_json_file also
// writes the JSON there). Returns 0. Throws UsageError for options that do not go
// together or a malformed HOST (before anything is opened), std::runtime_error
// (NdkError) for a failure, including a peer that runs another test.
int run_perf(const PerfOptions &options);

}  // namespace softndk::tool
