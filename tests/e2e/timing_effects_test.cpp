// The effects docs/timing.md §7 reproduces, one test each: two `softndk perf --clock
// model` runs whose figures must differ in the documented direction (and roughly by
// the documented amount). Model time is deterministic, so these are exact
// comparisons of modeled figures, not timed tests: the host's speed does not enter.
// Embedded mode only (`--profile` sets up perf's own adapters). The commands are the
// ones docs/timing.md §7 prints.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <regex>
#include <stdexcept>
#include <string>

namespace {

// The output of `ENV softndk perf --clock model --profile PROFILE -j ARGS`, which must
// exit 0, and the first match of `pattern`'s group in it.
std::string perf_report(const std::string &env, const std::string &profile, const std::string &args,
                        const std::string &pattern) {
    const std::string command = env + " " + SOFTNDK_E2E_SOFTNDK + " perf --clock model --profile " +
                                profile + " -j " + args + " 2>&1";
    FILE *pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("popen failed");
    std::string out;
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
        out.append(buffer, n);
    const int status = ::pclose(pipe);
    INFO(command << "\n" << out);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(pattern)));
    return m[1].str();
}

// The first number reported under `key` by `softndk perf --clock model --profile
// cx6-200g -j ARGS`.
double perf(const std::string &args, const std::string &key) {
    return std::stod(perf_report("", "cx6-200g", args, "\"" + key + "\": *([0-9.eE+-]+)"));
}

// The "time_mode" of `ENV softndk perf --clock model --profile cx5-100g -j` for an 8 B
// write latency run, with ARGS.
std::string time_mode(const std::string &env, const std::string &args) {
    return perf_report(env, "cx5-100g", "-t write --lat -s 8 -n 50 " + args,
                       "\"time_mode\": *\"([a-z]+)\"");
}

double rate(const std::string &args) {  // Mmsg/s
    return perf("-t write --bw -s 8 -I 8 " + args, "MsgRate");
}
double latency(const std::string &args) {  // us, perftest's t_typical
    return perf(args, "t_typical");
}

}  // namespace

TEST_CASE("Doorbell batching: a post list raises the message rate", "[timing][effects]") {
    const double single = rate("-q 16 -l 1 --cq-mod 64 -n 4000");
    const double batched = rate("-q 16 -l 16 --cq-mod 64 -n 4000");
    CHECK(batched > 1.5 * single);
}

TEST_CASE("Inline data saves the payload's DMA read", "[timing][effects]") {
    const double dma = latency("-t write --lat -s 64 -I 0 -n 200");
    const double inlined = latency("-t write --lat -s 64 -I 64 -n 200");
    CHECK(inlined < dma);
    // One DMA read of the payload (cx6-200g: 450 ns) on each one-way trip.
    CHECK(dma - inlined > 0.3);
    CHECK(dma - inlined < 0.6);
}

TEST_CASE("Unsignaled requests raise the message rate", "[timing][effects]") {
    // Every completion costs the polling host (and a CQE write and unit work on the
    // device): at 16 QPs the host, not the RNIC, is then the bottleneck.
    const double signaled = rate("-q 16 -l 16 --cq-mod 1 -n 4000");
    const double unsignaled = rate("-q 16 -l 16 --cq-mod 64 -n 4000");
    CHECK(unsignaled > 2 * signaled);
}

TEST_CASE("BlueFlame saves the WQE fetch of a doorbell", "[timing][effects]") {
    const double blueflame = latency("-t write --lat -s 8 -n 200");
    const double doorbell = latency("-t write --lat -s 8 -n 200 --set blueflame_bytes=0");
    CHECK(blueflame < doorbell);
    CHECK(doorbell - blueflame > 0.3);  // one DMA read, less the BlueFlame write's extra
}

TEST_CASE("READ costs about one DMA round trip more than WRITE", "[timing][effects]") {
    // One request at a time, each signaled: 1 / rate is the request's round trip. The
    // WRITE is inline, so neither fetches its payload at the requester; the READ adds
    // the responder's DMA read (450 ns) and the PCIe time of its 8 B of data, which the
    // CQE follows on the write channel (qp_state.cpp, written_before_cqe()).
    const double write_rtt =
        1.0 / perf("-t write --bw -s 8 -I 8 --tx-depth 1 --cq-mod 1 -n 2000", "MsgRate");
    const double read_rtt =
        1.0 / perf("-t read --bw -s 8 --tx-depth 1 --cq-mod 1 -n 2000", "MsgRate");
    const double extra_us = read_rtt - write_rtt;
    CHECK(extra_us > 0.450);
    CHECK(extra_us < 2 * 0.450);
}

TEST_CASE("The message rate scales with QPs up to the processing units, then is flat",
          "[timing][effects]") {
    double previous = 0;
    for (int qps : {1, 2, 4, 8, 16}) {
        const double r = rate("-q " + std::to_string(qps) + " -l 16 --cq-mod 64 -n 4000");
        CHECK(r > 1.6 * previous);
        previous = r;
    }
    const double over = rate("-q 32 -l 16 --cq-mod 64 -n 4000");  // cx6-200g: 16 units
    CHECK(over > 0.9 * previous);
    CHECK(over < 1.1 * previous);
}

TEST_CASE("The rate collapses when the QP working set overflows the context cache",
          "[timing][effects]") {
    // One request per QP in turn (no post list), so that the QPs take turns on the
    // device; 32 QPs against a cache of 16 contexts: every request misses.
    const double fits = rate("-q 32 -l 1 --cq-mod 64 -n 2000");
    const double thrashes = rate("-q 32 -l 1 --cq-mod 64 -n 2000 --set qpc_cache_entries=16");
    CHECK(thrashes < 0.5 * fits);
}

// Not one of the effects above: checks that the model does not make SEND slower than
// hardware does (docs/timing.md §6). A receive's CQE is written behind its data on the
// PCIe write channel; written after the data became visible instead, each one cost a
// second DMA latency and left the channel idle meanwhile, and 4 KiB SENDs ran at 62 %
// of the WRITEs' rate (before that, a server polled once per turn also ran out of
// receives, RNR-waited 640 us each time, and ran at 20 %).
TEST_CASE("A SEND stream runs at the rate of a WRITE stream", "[timing][fidelity]") {
    const double write = perf("-t write --bw -s 4096 -n 5000", "BW_average");
    const double send = perf("-t send --bw -s 4096 -n 5000", "BW_average");
    CHECK(send > 0.9 * write);
    CHECK(send <= write);  // the same link, and a CQE more per message
}

TEST_CASE("A SEND's one-way latency is a WRITE's plus its receive CQE", "[timing][fidelity]") {
    const double write = latency("-t write --lat -s 8");
    const double send = latency("-t send --lat -s 8");
    CHECK(send > write);
    CHECK(send < write + 0.1);  // the CQE's unit time and 64 B behind the data, not a DMA latency
}

// Published latencies are perftest's, host included (docs/timing.md §6): a QP's next
// doorbell is dated the profile's host turn-around (cx6-200g: 150 ns) after what the
// host saw through it - a WRITE's payload, a SEND's receive CQE. A READ's requester
// sees its own completion instead, which costs the host kCqeNs (provider/model_time.hpp).
TEST_CASE("The host turn-around dates the answer to a WRITE or a SEND, not a READ",
          "[timing][fidelity]") {
    const std::string off = " --set host_turnaround_ns=0";
    for (const std::string test : {"-t write --lat -s 8", "-t send --lat -s 8"}) {
        INFO(test);
        const double with = latency(test);
        const double without = latency(test + off);
        CHECK(with - without > 0.12);  // 150 ns less what the host's poll of a CQE costs
        CHECK(with - without < 0.16);
    }
    CHECK(latency("-t read --lat -s 8") == latency("-t read --lat -s 8" + off));
}

TEST_CASE("SOFTNDK_TIME sets the time mode of --profile's adapters and --time overrides it",
          "[timing][cli]") {
    CHECK(time_mode("env -u SOFTNDK_TIME", "") == "functional");
    CHECK(time_mode("SOFTNDK_TIME=paced", "") == "paced");
    CHECK(time_mode("SOFTNDK_TIME=paced", "--time functional") == "functional");
    CHECK(time_mode("env -u SOFTNDK_TIME", "--time paced") == "paced");
}
