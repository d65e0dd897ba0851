// End-to-end tests: the real programs (examples/pingpong, tools/softndk) run as
// child processes on the embedded device; the tests check exit codes, what
// goes to stdout and stderr, and parse the JSON reports.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

// Boost.JSON, header-only: the implementation is compiled into this one file.
#include <boost/json/src.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Run {
    int exit_code = -1;
    std::string out, err;
};

std::string slurp(const fs::path &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string quote(const std::string &arg) {
    std::string q = "'";
    for (char c : arg) {
        if (c == '\'')
            q += "'\\''";
        else
            q += c;
    }
    return q + "'";
}

// A scratch directory per process, removed at exit.
const fs::path &scratch() {
    static const fs::path dir = [] {
        std::string pattern = (fs::temp_directory_path() / "softndk-e2e-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        return fs::path(pattern);
    }();
    static const struct Cleanup {
        ~Cleanup() {
            std::error_code ec;
            fs::remove_all(scratch(), ec);
        }
    } cleanup;
    return dir;
}

// Runs `program args...` with `env` (NAME=value, may be empty) under a time
// limit, capturing stdout and stderr.
Run run(const std::string &program, const std::vector<std::string> &args,
        const std::string &env = "") {
    static int counter = 0;
    const fs::path out = scratch() / ("out" + std::to_string(counter));
    const fs::path err = scratch() / ("err" + std::to_string(counter++));
    std::string command = env.empty() ? "" : "env " + quote(env) + " ";
    command += "timeout -k 5 120 " + quote(program);
    for (const auto &a : args)
        command += " " + quote(a);
    command += " >" + quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
    const int status = std::system(command.c_str());
    Run r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    INFO("command: " << command);
    INFO("stdout:\n" << r.out);
    INFO("stderr:\n" << r.err);
    CHECK(r.exit_code != 124);  // timeout(1): the program hung
    return r;
}

bool contains(const std::string &text, const std::string &pattern) {
    return std::regex_search(text, std::regex(pattern));
}

const std::string kPingpong = SOFTNDK_E2E_PINGPONG;
const std::string kSoftndk = SOFTNDK_E2E_SOFTNDK;

// ibv_rc_pingpong's two summary lines and the address lines.
void check_pingpong_report(const Run &r, unsigned long long size, unsigned iters) {
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "^  local address:  IP 127\\.0\\.0\\.1, port [0-9]+\n"));
    CHECK(contains(r.out, "\n  remote address: IP 127\\.0\\.0\\.1, port 18515\n"));
    CHECK(contains(r.out, "\n" + std::to_string(size * iters * 2) +
                              " bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec\n"));
    CHECK(contains(
        r.out, "\n" + std::to_string(iters) + " iters in [0-9.]+ seconds = [0-9.]+ usec/iter\n$"));
}

const char kTwoAdapters[] =
    "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\nipv6 = ::1\n\n"
    "[adapter rnic1]\nif_index = 7\nipv4 = 127.0.0.2\nprofile = iwarp-default\n";

std::string two_adapter_config() {
    const fs::path path = scratch() / "two.ini";
    std::ofstream(path) << kTwoAdapters;
    return "SOFTNDK_CONFIG=" + path.string();
}

// Parses softndk's JSON report; FAILs (and returns null) if it is not JSON.
boost::json::value parse_json(const std::string &text) {
    boost::json::error_code ec;
    boost::json::value v = boost::json::parse(text, ec);
    INFO("JSON:\n" << text);
    REQUIRE_FALSE(ec);
    return v;
}

bool is_number(const boost::json::value &v) {
    return v.is_double() || v.is_int64() || v.is_uint64();
}

double number(const boost::json::value &v) {
    return v.is_double()  ? v.as_double()
           : v.is_int64() ? double(v.as_int64())
                          : double(v.as_uint64());
}

}  // namespace

// ---------------------------------------------------------------------------
// pingpong
// ---------------------------------------------------------------------------
TEST_CASE("pingpong --loopback exchanges and verifies 4 KiB messages", "[e2e][pingpong]") {
    check_pingpong_report(run(kPingpong, {"--loopback", "-n", "200"}), 4096, 200);
}

TEST_CASE("pingpong --loopback --events sleeps on CQ events", "[e2e][pingpong]") {
    check_pingpong_report(run(kPingpong, {"-l", "-e", "-n", "200"}), 4096, 200);
}

TEST_CASE("pingpong --loopback with 1 MiB messages", "[e2e][pingpong]") {
    check_pingpong_report(run(kPingpong, {"-l", "-s", "1m", "-n", "20"}), 1 << 20, 20);
}

TEST_CASE("pingpong --loopback --events with 1 MiB messages", "[e2e][pingpong]") {
    check_pingpong_report(run(kPingpong, {"-l", "-e", "--size=1048576", "--iters=20"}), 1 << 20,
                          20);
}

TEST_CASE("pingpong: odd sizes, a small receive depth, and a second adapter", "[e2e][pingpong]") {
    // 13 bytes: not a multiple of the 8-byte pattern words; rx depth 2
    // refills after every message.
    check_pingpong_report(run(kPingpong, {"-l", "-s", "13", "-r", "2", "-n", "50"}), 13, 50);
    const Run r =
        run(kPingpong, {"-l", "-d", "rnic1", "-p", "4000", "-n", "20"}, two_adapter_config());
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "remote address: IP 127\\.0\\.0\\.2, port 4000\n"));
}

TEST_CASE("pingpong: usage errors exit 2 with a message", "[e2e][pingpong]") {
    for (const std::vector<std::string> &args :
         std::vector<std::vector<std::string>>{{"--bogus"},
                                               {"-s"},
                                               {"-s", "abc"},
                                               {"-s", "0"},
                                               {"-n", "-3"},
                                               {"-p", "70000"},
                                               {"-l", "10.0.0.1"},
                                               {"a", "b"}}) {
        const Run r = run(kPingpong, args);
        INFO("args: " << args.front());
        CHECK(r.exit_code == 2);
        CHECK(contains(r.err, "^pingpong: "));
        CHECK(contains(r.err, "Usage:"));
        CHECK(r.out.empty());
    }
    const Run help = run(kPingpong, {"--help"});
    CHECK(help.exit_code == 0);
    CHECK(contains(help.out, "--events"));
}

TEST_CASE("pingpong: an unknown device exits 1 with a message", "[e2e][pingpong]") {
    const Run r = run(kPingpong, {"-l", "-d", "nosuch"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "no adapter named 'nosuch'"));
    CHECK(r.out.empty());
}

TEST_CASE("pingpong: runtime failures exit 1 with the NTSTATUS", "[e2e][pingpong]") {
    // No server in this process: the embedded fabric refuses the connection.
    Run r = run(kPingpong, {"127.0.0.1", "-n", "3"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "NdkConnect failed: STATUS_CONNECTION_REFUSED \\(0xC0000236\\)"));
    // No adapter owns the address.
    r = run(kPingpong, {"10.11.12.13", "-n", "3"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "STATUS_HOST_UNREACHABLE \\(0xC000023D\\)"));
    // Larger than the adapter's MaxTransferLength (64 MiB).
    r = run(kPingpong, {"-l", "-s", "100m", "-n", "2"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "exceeds the adapter's MaxTransferLength"));
}

// ---------------------------------------------------------------------------
// softndk perf
// ---------------------------------------------------------------------------
TEST_CASE("softndk perf --json reports perftest's fields for every test", "[e2e][perf]") {
    const std::vector<std::string> lat_fields = {
        "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "percentile_99", "percentile_99.9"};
    const std::vector<std::string> bw_fields = {"BW_peak", "BW_average", "MsgRate"};
    for (const char *verb : {"send", "write", "read"}) {
        for (const char *mode : {"lat", "bw"}) {
            INFO(verb << " " << mode);
            const Run r = run(
                kSoftndk, {"perf", "-t", verb, "-m", mode, "-s", "4096", "-n", "200", "--json"});
            REQUIRE(r.exit_code == 0);
            const boost::json::value v = parse_json(r.out);
            const auto &o = v.as_object();
            CHECK(o.at("verb").as_string() == verb);
            CHECK(o.at("mode").as_string() == mode);
            CHECK(o.at("device").as_string() == "rnic0");
            const auto &results = o.at("results").as_array();
            REQUIRE(results.size() == 1);
            const auto &row = results[0].as_object();
            CHECK(number(row.at("MsgSize")) == 4096);
            CHECK(number(row.at("n_iterations")) == 200);
            for (const auto &f : std::string(mode) == "lat" ? lat_fields : bw_fields) {
                INFO(f);
                REQUIRE(row.contains(f));
                CHECK(is_number(row.at(f)));
                CHECK(number(row.at(f)) > 0);
            }
            if (std::string(mode) == "lat") {
                CHECK(number(row.at("t_min")) <= number(row.at("t_typical")));
                CHECK(number(row.at("t_typical")) <= number(row.at("t_max")));
                CHECK(number(row.at("percentile_99")) <= number(row.at("percentile_99.9")));
            } else {
                CHECK(number(row.at("BW_average")) <= number(row.at("BW_peak")) * 1.0001);
            }
        }
    }
}

TEST_CASE("softndk perf -a runs sizes 2 .. 8 MiB", "[e2e][perf]") {
    const Run r = run(kSoftndk, {"perf", "-t", "write", "-a", "-n", "4", "-j"});
    REQUIRE(r.exit_code == 0);
    const boost::json::value report = parse_json(r.out);
    const auto &results = report.as_object().at("results").as_array();
    REQUIRE(results.size() == 23);
    for (size_t i = 0; i < results.size(); ++i)
        CHECK(number(results[i].as_object().at("MsgSize")) == double(uint64_t{2} << i));
}

TEST_CASE("softndk perf prints perftest's tables", "[e2e][perf]") {
    Run r = run(kSoftndk, {"perf", "-t", "send", "--lat", "-n", "100"});
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "Send Latency Test"));
    CHECK(contains(r.out,
                   "\n #bytes #iterations    t_min\\[usec\\]    t_max\\[usec\\]  "
                   "t_typical\\[usec\\]    t_avg\\[usec\\]    t_stdev\\[usec\\]   99% "
                   "percentile\\[usec\\]   99\\.9% percentile\\[usec\\] \n"));
    CHECK(contains(r.out,
                   "\n 2 +100 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n"));
    r = run(kSoftndk, {"perf", "-t", "read", "-n", "100", "-s", "8k"});
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "RDMA_Read BW Test"));
    CHECK(contains(r.out,
                   "\n #bytes     #iterations    BW peak\\[MB/sec\\]    BW average\\[MB/sec\\]   "
                   "MsgRate\\[Mpps\\]\n"));
    CHECK(contains(r.out, "\n 8192 +100 +[0-9.]+ +[0-9.]+ +[0-9.]+\n"));
}

TEST_CASE("softndk perf between two adapters", "[e2e][perf]") {
    const Run r = run(
        kSoftndk,
        {"perf", "-t", "write", "--lat", "-d", "rnic0", "--server-dev", "7", "-n", "50", "--json"},
        two_adapter_config());
    REQUIRE(r.exit_code == 0);
    const boost::json::value report = parse_json(r.out);
    const auto &o = report.as_object();
    CHECK(o.at("server_device").as_string() == "rnic1");
    CHECK(number(o.at("server_if_index")) == 7);
}

TEST_CASE("softndk: usage errors exit 2", "[e2e][perf]") {
    for (const std::vector<std::string> &args :
         std::vector<std::vector<std::string>>{{},
                                               {"--bogus"},
                                               {"frobnicate"},
                                               {"perf", "--bogus"},
                                               {"perf", "-t", "atomic"},
                                               {"perf", "-m", "fast"},
                                               {"perf", "-m", "lat", "--bw"},
                                               {"perf", "--lat", "--bw"},
                                               {"perf", "-s", "0"},
                                               {"perf", "-s", "lots"},
                                               {"perf", "-n"},
                                               {"devices", "extra"}}) {
        const Run r = run(kSoftndk, args);
        INFO("args: " << (args.empty() ? "(none)" : args.back()));
        CHECK(r.exit_code == 2);
        CHECK_FALSE(r.err.empty());
        CHECK(r.out.empty());
    }
    const Run help = run(kSoftndk, {"perf", "--help"});
    CHECK(help.exit_code == 0);
    CHECK(contains(help.out, "--iters"));
}

TEST_CASE("softndk: an unknown device exits 1 with a message", "[e2e][perf]") {
    for (const std::vector<std::string> &args :
         std::vector<std::vector<std::string>>{{"perf", "-d", "nosuch"},
                                               {"perf", "--server-dev", "99"},
                                               {"devices", "-d", "nosuch"}}) {
        const Run r = run(kSoftndk, args);
        CHECK(r.exit_code == 1);
        CHECK(contains(r.err, "no adapter named"));
        CHECK(r.out.empty());
    }
    const Run r = run(kSoftndk, {"devices"}, "SOFTNDK_CONFIG=/nonexistent/softndk.ini");
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "SOFTNDK_CONFIG"));
}

TEST_CASE("softndk perf: sizes beyond the adapter's limits exit 1", "[e2e][perf]") {
    const Run r = run(kSoftndk, {"perf", "-s", "100m", "-n", "1"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "MaxTransferLength"));
}

// ---------------------------------------------------------------------------
// softndk --version, devices
// ---------------------------------------------------------------------------
TEST_CASE("softndk --version names the tool, hardware ABI and NDK versions", "[e2e]") {
    const Run r = run(kSoftndk, {"--version"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "^softndk [0-9]+\\.[0-9]+\\.[0-9]+\n"));
    CHECK(contains(r.out, "\nhardware ABI version: [0-9]+\n"));
    CHECK(contains(r.out, "\nNDK version: [0-9]+\\.[0-9]+ "));
}

TEST_CASE("softndk devices lists the configured adapters", "[e2e]") {
    Run r = run(kSoftndk, {"devices"}, two_adapter_config());
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "^hca_id:\trnic0\n"));
    CHECK(contains(r.out, "\nhca_id:\trnic1\n"));
    CHECK(contains(r.out, "transport: +iWARP \\(1\\)"));
    CHECK(contains(r.out, "MaxTransferLength: +[0-9]+"));

    r = run(kSoftndk, {"devices", "-l"}, two_adapter_config());
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "rnic1 +\t +7\t127\\.0\\.0\\.2\n"));

    r = run(kSoftndk, {"devices", "--json", "-d", "7"}, two_adapter_config());
    REQUIRE(r.exit_code == 0);
    const boost::json::value report = parse_json(r.out);
    const auto &devices = report.as_object().at("devices").as_array();
    REQUIRE(devices.size() == 1);
    const auto &d = devices[0].as_object();
    CHECK(d.at("alias").as_string() == "rnic1");
    CHECK(number(d.at("if_index")) == 7);
    CHECK(d.at("profile").as_string() == "iwarp-default");
    CHECK(d.at("addresses").as_array().size() == 1);
    CHECK(number(d.at("limits").as_object().at("MaxTransferLength")) > 0);
}
