// report.hpp - perftest's statistics and report formats.
//
// Latency (ib_*_lat): one sample per iteration, the time from one iteration's
// start to the next. For send and write an iteration is a round trip and the
// reported latency is half of it (one way), as perftest does; a read is one
// request/response, reported whole. t_typical is the median, percentiles are
// nearest-rank. Unlike perftest, no sample is dropped from the tail.
//
// Bandwidth (ib_*_bw): BW average = bytes of all iterations / (last completion
// - first post). BW peak = message size / the smallest average time per
// message over any run of consecutive messages i..j, (completed[j] -
// posted[i]) / (j - i + 1), as perftest computes it (exact up to 20000
// messages; beyond that only every k-th i starts a run, to bound the search).
// The times may be wall-clock or model seconds; only differences count. MB = 2^20 bytes, as in
// perftest; --report_gbits gives Gb/sec (10^9 bits). MsgRate in Mpps = 10^6
// messages per second.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace softndk::tool {

struct LatencyRow {
    uint64_t bytes = 0;
    uint64_t iterations = 0;
    double t_min = 0, t_max = 0, t_typical = 0, t_avg = 0, t_stdev = 0;
    double p99 = 0, p999 = 0;  // usec
};

struct BandwidthRow {
    uint64_t bytes = 0;
    uint64_t iterations = 0;
    double bw_peak = 0, bw_average = 0;  // MB/sec (2^20), or Gb/sec with report_gbits
    double msg_rate = 0;                 // Mpps
};

// `samples_usec` are per-iteration times; each is divided by `divisor` (2 for
// a round trip reported one way). Sorts `samples_usec`.
LatencyRow latency_row(uint64_t bytes, std::vector<double> &samples_usec, double divisor);

// posted[i] / completed[i]: seconds since any fixed origin, per message.
// BW peak (perftest's): the best average time per message over any run of messages
// i..j, (completed[j] - posted[i]) / (j - i + 1); `peak` false leaves it 0 (-N).
BandwidthRow bandwidth_row(uint64_t bytes, const std::vector<double> &posted,
                           const std::vector<double> &completed, bool report_gbits,
                           bool peak = true);
// That best time: returns it and sets `count` to the run's length (n >= 1 messages).
double best_message_time(const std::vector<double> &posted, const std::vector<double> &completed,
                         size_t n, double &count);

// perftest's table headers and rows (rows aligned under the header columns).
extern const char kLatencyHeader[];
std::string bandwidth_header(bool report_gbits);
std::string format_row(const LatencyRow &row);
std::string format_row(const BandwidthRow &row);
extern const char kRule[];  // perftest's line of dashes

// One result as perftest's JSON fields (an object, no trailing newline).
std::string json_object(const LatencyRow &row);
std::string json_object(const BandwidthRow &row);
// A JSON string literal (quotes and escapes).
std::string json_string(const std::string &text);
// Prints `objects` (JSON values) to stdout as one JSON array, a value per line.
void print_json_array(const std::vector<std::string> &objects);

}  // namespace softndk::tool
