// End-to-end tests: the real programs (examples/pingpong, tools/softndk) run as
// child processes; the tests check exit codes, what goes to stdout and stderr,
// and parse the JSON reports. Tests tagged [e2e] run twice: on the embedded
// device and, under tests/support/with-daemon.sh, through `softndk rnic`. Tests
// tagged [cross-process] start daemons of their own: two consumer processes
// meet in one daemon, and one of them dies.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

// Boost.JSON, header-only: the implementation is compiled into this one file.
#include <boost/json/src.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
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

// Writes to `to` a copy of the shipped profile `name` with each {text, replacement} of
// `edits` made once (each text must be there): a user's edited copy.
void copy_profile(const std::string &name, const fs::path &to,
                  std::initializer_list<std::pair<std::string_view, std::string_view>> edits) {
    std::string text = slurp(fs::path(SOFTNDK_E2E_PROFILES) / (name + ".ini"));
    for (const auto &[from, replacement] : edits) {
        const size_t at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), replacement);
    }
    std::ofstream(to) << text;
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

// A child process: `program args...` with extra environment `env` (NAME=value
// each; a bare NAME is removed from the child's environment), stdout and stderr to
// files in scratch(), stdin from /dev/null.
struct Child {
    pid_t pid = -1;
    std::string command;  // for messages
    fs::path out, err;
};

Child spawn(const std::string &program, const std::vector<std::string> &args,
            const std::vector<std::string> &env = {}) {
    static int counter = 0;
    Child c;
    c.out = scratch() / ("out" + std::to_string(counter));
    c.err = scratch() / ("err" + std::to_string(counter++));
    for (const auto &e : env)
        c.command += quote(e) + " ";
    c.command += quote(program);
    for (const auto &a : args)
        c.command += " " + quote(a);
    std::vector<char *> argv{const_cast<char *>(program.c_str())};
    for (const auto &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::fflush(nullptr);
    c.pid = fork();
    REQUIRE(c.pid >= 0);
    if (c.pid == 0) {
        for (const auto &e : env) {
            const size_t eq = e.find('=');
            if (eq == std::string::npos)
                unsetenv(e.c_str());
            else
                setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
        }
        const int in = open("/dev/null", O_RDONLY);
        const int out = open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0) _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    return c;
}

// Waits for `c` at most `limit`; a child still running then is killed and
// reported as exit code 124, like timeout(1).
Run wait(const Child &c, std::chrono::seconds limit = std::chrono::seconds(120)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(c.pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    Run r;
    if (done == 0) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &status, 0);
        r.exit_code = 124;
    } else {
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    r.out = slurp(c.out);
    r.err = slurp(c.err);
    INFO("command: " << c.command);
    INFO("stdout:\n" << r.out);
    INFO("stderr:\n" << r.err);
    CHECK(r.exit_code != 124);  // the program hung
    return r;
}

// Runs `program args...` with extra environment `env` under a time limit,
// capturing stdout and stderr.
Run run(const std::string &program, const std::vector<std::string> &args,
        const std::vector<std::string> &env = {}) {
    return wait(spawn(program, args, env));
}
Run run(const std::string &program, const std::vector<std::string> &args, const std::string &env) {
    return run(program, args, std::vector<std::string>{env});
}

bool contains(const std::string &text, const std::string &pattern) {
    return std::regex_search(text, std::regex(pattern));
}

const std::string kPingpong = SOFTNDK_E2E_PINGPONG;
const std::string kSoftndk = SOFTNDK_E2E_SOFTNDK;

// ibv_rc_pingpong's two summary lines and the address lines.
void check_pingpong_report(const Run &r, unsigned long long size, unsigned iters,
                           unsigned server_port = 18515,
                           const std::string &server_ip = "127\\.0\\.0\\.1") {
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "^  local address:  IP 127\\.0\\.0\\.1, port [0-9]+\n"));
    CHECK(contains(r.out, "\n  remote address: IP " + server_ip + ", port " +
                              std::to_string(server_port) + "\n"));
    CHECK(contains(r.out, "\n" + std::to_string(size * iters * 2) +
                              " bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec\n"));
    CHECK(contains(
        r.out, "\n" + std::to_string(iters) + " iters in [0-9.]+ seconds = [0-9.]+ usec/iter\n$"));
}

const char kTwoAdapters[] =
    "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\nipv6 = ::1\n\n"
    "[adapter rnic1]\nif_index = 7\nipv4 = 127.0.0.2\nprofile = iwarp-default\n";
// Two roce-default adapters: two hosts' clocks on one profile (the paced-mode bound).
const char kTwoRoceAdapters[] =
    "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\n\n"
    "[adapter rnic1]\nif_index = 2\nipv4 = 127.0.0.2\n";

bool daemon_mode() {
    const char *mode = std::getenv("SOFTNDK_MODE");
    return mode != nullptr && std::string(mode) == "daemon";
}

// A `softndk rnic` of the test's own, on a fresh socket, with extra environment
// `env` (e.g. SOFTNDK_CONFIG) and extra arguments `args` (e.g. --adapter). Stopped
// with SIGTERM and reaped when it goes.
class Daemon {
  public:
    explicit Daemon(const std::vector<std::string> &env = {},
                    const std::vector<std::string> &args = {}) {
        static int counter = 0;
        socket_ = (scratch() / ("rnic" + std::to_string(counter++) + ".sock")).string();
        std::vector<std::string> argv{"rnic", "--socket", socket_, "--log-level", "info"};
        argv.insert(argv.end(), args.begin(), args.end());
        child_ = spawn(kSoftndk, argv, env);
        for (int i = 0; i < 400 && !listening(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        INFO("daemon stderr:\n" << log());
        REQUIRE(listening());
    }
    ~Daemon() {
        kill(child_.pid, SIGTERM);
        int status = 0;
        waitpid(child_.pid, &status, 0);
    }
    Daemon(const Daemon &) = delete;
    Daemon &operator=(const Daemon &) = delete;

    // What consumers need to attach to this daemon.
    std::vector<std::string> env() const {
        return {"SOFTNDK_MODE=daemon", "SOFTNDK_SOCKET=" + socket_};
    }
    bool alive() const { return waitpid(child_.pid, nullptr, WNOHANG) == 0; }
    std::string log() const { return slurp(child_.err); }

    // `softndk rnic --status`, as key -> value.
    std::map<std::string, std::string> status() const {
        const Run r = run(kSoftndk, {"rnic", "--status", "--socket", socket_});
        REQUIRE(r.exit_code == 0);
        std::map<std::string, std::string> fields;
        std::istringstream in(r.out);
        std::string item;
        while (in >> item) {
            const size_t eq = item.find('=');
            if (eq != std::string::npos) fields[item.substr(0, eq)] = item.substr(eq + 1);
        }
        return fields;
    }

  private:
    bool listening() const { return slurp(child_.out).find("listening on") != std::string::npos; }

    Child child_;
    std::string socket_;
};

// In daemon mode (the [daemon] runs of this suite), a private daemon serving `env`'s
// adapters, with what attaches to it appended to `env`; embedded, none.
std::unique_ptr<Daemon> daemon_for_this_mode(std::vector<std::string> &env) {
    if (!daemon_mode()) return nullptr;
    auto daemon = std::make_unique<Daemon>(env);
    const auto attach = daemon->env();
    env.insert(env.end(), attach.begin(), attach.end());
    return daemon;
}

// The environment for a run on two adapters (rnic0 and rnic1, if_index 7). In
// daemon mode the adapters live in the daemon, which reads the same file, so
// the test starts a daemon of its own with it.
struct TwoAdapters {
    std::unique_ptr<Daemon> daemon;
    std::vector<std::string> env;
};

TwoAdapters two_adapters() {
    const fs::path path = scratch() / "two.ini";
    std::ofstream(path) << kTwoAdapters;
    TwoAdapters t;
    t.env.push_back("SOFTNDK_CONFIG=" + path.string());
    if (daemon_mode()) {
        t.daemon = std::make_unique<Daemon>(t.env);
        const auto attach = t.daemon->env();
        t.env.insert(t.env.end(), attach.begin(), attach.end());
    }
    return t;
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
    const TwoAdapters adapters = two_adapters();
    const Run r = run(kPingpong, {"-l", "-d", "rnic1", "-p", "4000", "-n", "20"}, adapters.env);
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
    const TwoAdapters adapters = two_adapters();
    const Run r = run(
        kSoftndk,
        {"perf", "-t", "write", "--lat", "-d", "rnic0", "--server-dev", "7", "-n", "50", "--json"},
        adapters.env);
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
    // A SOFTNDK_CONFIG that names no file is a usage error (issue 17 item 7).
    const Run r = run(kSoftndk, {"devices"}, "SOFTNDK_CONFIG=/nonexistent/softndk.ini");
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "SOFTNDK_CONFIG"));
}

TEST_CASE("softndk perf: sizes beyond the adapter's limits exit 1", "[e2e][perf]") {
    const Run r = run(kSoftndk, {"perf", "-s", "100m", "-n", "1"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "MaxTransferLength"));
}

// softndk perf --clock model. --profile is embedded-only: under the daemon
// (SOFTNDK_MODE=daemon, inherited from with-daemon.sh) it must exit 2, and the
// model runs use the daemon's adapters (profile roce-default) instead.

std::vector<std::string> with_profile(std::vector<std::string> args) {
    if (!daemon_mode()) {
        args.push_back("--profile");
        args.push_back("roce-default");
    }
    return args;
}

TEST_CASE("softndk perf --clock model reports model time in perftest's fields", "[e2e][perf]") {
    for (const char *verb : {"send", "write", "read"}) {
        for (const char *mode : {"lat", "bw"}) {
            INFO(verb << " " << mode);
            const Run r = run(kSoftndk, with_profile({"perf", "--clock", "model", "-t", verb, "-m",
                                                      mode, "-s", "8", "-n", "200", "--json"}));
            REQUIRE(r.exit_code == 0);
            const boost::json::value report = parse_json(r.out);
            const auto &o = report.as_object();
            CHECK(o.at("clock").as_string() == "model");
            CHECK(o.at("profile").as_string() == "roce-default");
            CHECK(o.at("time_mode").as_string() == "functional");
            const auto &row = o.at("results").as_array().at(0).as_object();
            if (std::string(mode) == "lat") {
                CHECK(number(row.at("t_min")) > 0);
                CHECK(number(row.at("t_min")) <= number(row.at("t_typical")));
                CHECK(number(row.at("t_typical")) <= number(row.at("t_max")));
                CHECK(number(row.at("t_min")) <= number(row.at("t_avg")));
                CHECK(number(row.at("t_avg")) <= number(row.at("t_max")));
            } else {
                CHECK(number(row.at("BW_average")) > 0);
                CHECK(number(row.at("MsgRate")) > 0);
                CHECK(number(row.at("BW_average")) <= number(row.at("BW_peak")) * 1.0001);
            }
        }
    }
    const Run table =
        run(kSoftndk, with_profile({"perf", "--clock", "model", "--lat", "-n", "50"}));
    REQUIRE(table.exit_code == 0);
    CHECK(contains(table.out,
                   "\n Clock +: model \\(profile roce-default, time mode functional\\)\n"));
}

TEST_CASE("softndk perf --clock model is deterministic", "[e2e][perf]") {
    const std::vector<std::string> args = with_profile(
        {"perf", "--clock", "model", "-t", "write", "--lat", "-s", "8", "-n", "300", "--json"});
    const Run first = run(kSoftndk, args);
    const Run second = run(kSoftndk, args);
    REQUIRE(first.exit_code == 0);
    REQUIRE(second.exit_code == 0);
    const boost::json::value report_a = parse_json(first.out), report_b = parse_json(second.out);
    const auto &a = report_a.as_object().at("results").as_array().at(0).as_object();
    const auto &b = report_b.as_object().at("results").as_array().at(0).as_object();
    CHECK(number(a.at("t_avg")) > 0);
    CHECK(number(a.at("t_avg")) == number(b.at("t_avg")));
    CHECK(number(a.at("t_min")) == number(b.at("t_min")));
}

TEST_CASE("softndk perf -q and -l: several QPs, post lists", "[e2e][perf]") {
    for (const char *verb : {"send", "write", "read"}) {
        INFO(verb);
        const Run r =
            run(kSoftndk, with_profile({"perf", "--clock", "model", "-t", verb, "--bw", "-s", "64",
                                        "-q", "4", "-l", "8", "-n", "500", "--json"}));
        REQUIRE(r.exit_code == 0);
        const boost::json::value report = parse_json(r.out);
        const auto &o = report.as_object();
        CHECK(number(o.at("num_of_qps")) == 4);
        CHECK(number(o.at("post_list")) == 8);
        const auto &row = o.at("results").as_array().at(0).as_object();
        CHECK(number(row.at("n_iterations")) == 500);
        CHECK(number(row.at("MsgRate")) > 0);
    }
    // The wall clock takes them too.
    const Run wall = run(kSoftndk, {"perf", "-t", "write", "-q", "4", "-l", "8", "-n", "200"});
    CHECK(wall.exit_code == 0);
    CHECK(contains(wall.out, "Number of qps   : 4"));
}

TEST_CASE("softndk perf: model-time usage errors exit 2", "[e2e][perf]") {
    for (const std::vector<std::string> &args :
         std::vector<std::vector<std::string>>{{"perf", "--profile", "nosuch"},
                                               {"perf", "--time", "paced"},
                                               {"perf", "--clock", "sundial"},
                                               {"perf", "--lat", "-q", "2"},
                                               {"perf", "--lat", "-l", "2"},
                                               {"perf", "-l", "200"}}) {
        const Run r = run(kSoftndk, args);
        INFO("args: " << args.back());
        CHECK(r.exit_code == 2);
        CHECK_FALSE(r.err.empty());
        CHECK(r.out.empty());
    }
    const Run unknown = run(kSoftndk, {"perf", "--profile", "nosuch"});
    if (daemon_mode()) {
        CHECK(contains(unknown.err, "set the daemon's profile in its config"));
    } else {
        CHECK(contains(unknown.err, "roce-default"));
        CHECK(contains(unknown.err, "iwarp-default"));
    }
    CHECK(contains(run(kSoftndk, {"perf", "--time", "paced"}).err, "SOFTNDK_TIME"));
}

#if defined(__SANITIZE_THREAD__)
constexpr bool kTsanBuild = true;
#else
constexpr bool kTsanBuild = false;
#endif

TEST_CASE("softndk perf in paced mode: an end per thread, never faster than the model",
          "[e2e][perf]") {
    // Paced mode holds every placement and completion back to its model time, so a
    // wall-clock ping-pong cannot beat the modeled one-way latency; it is slower by the
    // host's own turn-around (bench/model.sh measures by how much). Embedded, send and
    // write latency run each end on its own thread; the daemon's device thread needs
    // the other core, so there perf keeps one, and so does a TSan build (perf.cpp).
    //
    // The bound is the model clock's figure for the same exchange between two adapters,
    // two hosts as far as time goes (provider/model_time.hpp): each end answers its
    // peer's write a host turn-around after it landed, as a paced end can. Both ends on
    // one adapter share one host clock, so there the model's server answers only after
    // the client's write completed (its ACK back, its CQE): 1.21 us against 0.86 for
    // roce-default's 8 B write, a figure a quick paced host beat (0.98 in CI).
    std::vector<std::string> paced = {"perf", "--profile", "roce-default", "--time", "paced"};
    std::vector<std::string> model = {"perf", "--profile", "roce-default", "--clock", "model"};
    std::vector<std::string> paced_env, model_env;
    std::unique_ptr<Daemon> paced_daemon, model_daemon;
    if (daemon_mode()) {
        const fs::path config = scratch() / "two-roce.ini";
        std::ofstream(config) << kTwoRoceAdapters;
        const std::string config_env = "SOFTNDK_CONFIG=" + config.string();
        paced_daemon =
            std::make_unique<Daemon>(std::vector<std::string>{config_env, "SOFTNDK_TIME=paced"});
        model_daemon = std::make_unique<Daemon>(std::vector<std::string>{config_env});
        paced_env = paced_daemon->env();
        model_env = model_daemon->env();
        paced = {"perf", "-d", "rnic0", "--server-dev", "rnic1"};
        model = {"perf", "-d", "rnic0", "--server-dev", "rnic1", "--clock", "model"};
    }
    auto with = [](std::vector<std::string> args, std::initializer_list<const char *> more) {
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    for (const char *verb : {"send", "write"}) {
        INFO(verb);
        const Run wall =
            run(kSoftndk, with(paced, {"-t", verb, "--lat", "-s", "8", "-n", "2000", "--json"}),
                paced_env);
        const Run modeled =
            run(kSoftndk, with(model, {"-t", verb, "--lat", "-s", "8", "-n", "2000", "--json"}),
                model_env);
        REQUIRE(wall.exit_code == 0);
        REQUIRE(modeled.exit_code == 0);
        const boost::json::value wall_report = parse_json(wall.out);
        const boost::json::value model_report = parse_json(modeled.out);
        CHECK(model_report.as_object().at("time_mode").as_string() == "functional");
        const auto &w = wall_report.as_object().at("results").as_array().at(0).as_object();
        const auto &m = model_report.as_object().at("results").as_array().at(0).as_object();
        // Only paced adapters count paced placements: two per iteration.
        CHECK(number(w.at("paced_placements")) >= 2 * 2000);
        // Both are printed to 0.01 us.
        CHECK(number(m.at("t_min")) > 0);
        CHECK(number(w.at("t_min")) >= number(m.at("t_min")) - 0.01);
        const Run table = run(kSoftndk, with(paced, {"-t", verb, "--lat", "-n", "100"}), paced_env);
        REQUIRE(table.exit_code == 0);
        CHECK(contains(table.out, daemon_mode() || kTsanBuild
                                      ? "Process        : both ends, one thread\n"
                                      : "Process        : both ends, a thread each\n"));
    }
    // Read latency, and functional mode, keep one thread.
    CHECK(contains(run(kSoftndk, with(paced, {"-t", "read", "--lat", "-n", "100"}), paced_env).out,
                   "Process        : both ends, one thread\n"));
    CHECK(contains(run(kSoftndk, {"perf", "-t", "write", "--lat", "-n", "100"}).out,
                   "Process        : both ends, one thread\n"));
}

TEST_CASE("softndk perf in paced mode: how many placements the host reached late", "[e2e][perf]") {
    // Device::pace() counts every payload placed in paced mode, and those the host's own
    // path reached only after their model time; perf reports a row's counts. Ten 8 B
    // writes each way place twenty payloads.
    auto counts = [](const Run &r) {
        REQUIRE(r.exit_code == 0);
        const boost::json::value report = parse_json(r.out);
        const auto &row = report.as_object().at("results").as_array().at(0).as_object();
        return std::array<double, 3>{number(row.at("paced_placements")),
                                     number(row.at("paced_late")),
                                     number(row.at("paced_late_avg_ns"))};
    };
    const std::vector<std::string> writes = {"-t", "write", "--lat", "-s",
                                             "8",  "-n",    "10",    "--json"};
    auto with = [&writes](std::vector<std::string> args) {
        args.insert(args.end(), writes.begin(), writes.end());
        return args;
    };
    if (daemon_mode()) {
        const Daemon paced({"SOFTNDK_TIME=paced"});
        const auto [placed, late, late_ns] = counts(run(kSoftndk, with({"perf"}), paced.env()));
        CHECK(placed == 20);
        CHECK(late <= placed);
        CHECK((late == 0) == (late_ns == 0));
    } else {
        // 20 ms of propagation each way: the host is always there before the model time.
        const auto [placed, late, late_ns] =
            counts(run(kSoftndk, with({"perf", "--profile", "cx5-100g", "--set",
                                       "propagation_ns=20000000", "--time", "paced"})));
        CHECK(placed == 20);
        CHECK(late == 0);
        CHECK(late_ns == 0);
        // Every cost 0: a placement's model time is its doorbell's, which the host's path
        // to the placement can only pass.
        const auto [ideal_placed, ideal_late, ideal_late_ns] =
            counts(run(kSoftndk, with({"perf", "--profile", "ideal", "--time", "paced"})));
        CHECK(ideal_placed == 20);
        CHECK(ideal_late == 20);
        CHECK(ideal_late_ns > 0);
        const Run table = run(kSoftndk, {"perf", "--profile", "ideal", "--time", "paced", "-t",
                                         "write", "--lat", "-n", "10"});
        CHECK(contains(table.out,
                       "\n paced: 20 of 20 placements \\(100\\.0%\\) came after their "
                       "model time, [0-9]+ ns late on average\n"));
    }
    // Functional time paces nothing, and perf reports no such counts.
    const Run functional = run(kSoftndk, with({"perf"}));
    REQUIRE(functional.exit_code == 0);
    CHECK_FALSE(contains(functional.out, "paced"));
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
    const TwoAdapters adapters = two_adapters();
    Run r = run(kSoftndk, {"devices"}, adapters.env);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "^hca_id:\trnic0\n"));
    CHECK(contains(r.out, "\nhca_id:\trnic1\n"));
    CHECK(contains(r.out, "transport: +iWARP \\(1\\)"));
    CHECK(contains(r.out, "MaxTransferLength: +[0-9]+"));

    r = run(kSoftndk, {"devices", "-l"}, adapters.env);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "rnic1 +\t +7\t127\\.0\\.0\\.2\n"));

    r = run(kSoftndk, {"devices", "--json", "-d", "7"}, adapters.env);
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

TEST_CASE("softndk devices -v shows each adapter's profile: source, technology, costs", "[e2e]") {
    // rnic0: a user's copy of t6-25g with one cost changed; rnic1: built-in cx6-200g.
    const fs::path dir = scratch();
    copy_profile("t6-25g", dir / "my-t6.ini",
                 {{"dma_read_ns = 500", "dma_read_ns = 777"}, {"name = t6-25g", "name = my-t6"}});
    const fs::path config = dir / "profiles.ini";
    std::ofstream(config) << "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1 ; loopback\n"
                             "profile = my-t6.ini\n\n"
                             "[adapter rnic1]\nif_index = 2\nipv4 = 127.0.0.2\n"
                             "profile = cx6-200g\n";
    std::vector<std::string> env{"SOFTNDK_CONFIG=" + config.string()};
    const std::unique_ptr<Daemon> daemon = daemon_for_this_mode(env);

    Run r = run(kSoftndk, {"devices", "-v"}, env);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "\tprofile: +my-t6\n"));
    CHECK(contains(r.out, "\tprofile_source: +" + (dir / "my-t6.ini").string() + "\n"));
    CHECK(contains(r.out, "\tprofile_technology: +iwarp\n"));
    CHECK(contains(r.out, "\ttiming:\n\t\tdoorbell_ns: +200\n"));
    CHECK(contains(r.out, "\t\tdma_read_ns: +777\n"));
    CHECK(contains(r.out, "\tprofile: +cx6-200g\n\tprofile_source: +built-in\n"));
    CHECK(contains(r.out, "\t\tlink_mbps: +200000\n"));
    // Without -v: no profile details.
    r = run(kSoftndk, {"devices"}, env);
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(contains(r.out, "profile_source|timing:"));

    r = run(kSoftndk, {"devices", "-v", "-j", "-d", "rnic1"}, env);
    REQUIRE(r.exit_code == 0);
    const boost::json::value report = parse_json(r.out);
    const auto &d = report.as_object().at("devices").as_array().at(0).as_object();
    CHECK(d.at("profile").as_string() == "cx6-200g");
    CHECK(d.at("profile_source").as_string() == "built-in");
    CHECK(d.at("profile_technology").as_string() == "roce");
    const auto &timing = d.at("timing").as_object();
    CHECK(number(timing.at("link_mbps")) == 200000);
    CHECK(number(timing.at("pcie_ps_per_byte")) == 39);
    CHECK(timing.size() >= 20);

    // A bad profile file: embedded, the tool exits 1 naming the file and the line.
    // Through the daemon, the profile is the one the daemon loaded when it started.
    std::ofstream(dir / "my-t6.ini") << "[profile]\nname = my-t6\n[timing]\ndma_read_ns = fast\n";
    r = run(kSoftndk, {"devices", "-v"}, env);
    if (daemon_mode()) {
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "\t\tdma_read_ns: +777\n"));
    } else {
        CHECK(r.exit_code == 1);
        CHECK(contains(r.err, "my-t6\\.ini:4: \\[timing\\] dma_read_ns: 'fast' is not a number"));
    }
}

// ---------------------------------------------------------------------------
// Two consumer processes through one daemon
// ---------------------------------------------------------------------------
namespace {

// Starts a pingpong server in the background, then runs the client against it,
// retrying while the server is not listening yet. Returns {server, client}.
std::pair<Run, Run> pingpong_pair(const Daemon &daemon, const std::vector<std::string> &args) {
    std::vector<std::string> server_args = args;
    const Child server = spawn(kPingpong, server_args, daemon.env());
    std::vector<std::string> client_args = args;
    client_args.insert(client_args.begin(), "127.0.0.1");
    Run client;
    for (int attempt = 0; attempt < 200; ++attempt) {
        client = run(kPingpong, client_args, daemon.env());
        if (client.exit_code != 1 || !contains(client.err, "STATUS_CONNECTION_REFUSED")) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    Run served = wait(server);
    INFO("server stdout:\n" << served.out << "server stderr:\n" << served.err);
    CHECK(served.exit_code == 0);
    return {served, client};
}

}  // namespace

TEST_CASE("pingpong server and client in two processes through the daemon",
          "[cross-process][daemon]") {
    Daemon daemon;
    SECTION("1 MiB messages, verified") {
        auto [server, client] = pingpong_pair(daemon, {"-p", "5001", "-s", "1m", "-n", "20"});
        check_pingpong_report(client, 1 << 20, 20, 5001);
        CHECK(server.exit_code == 0);
        CHECK(contains(server.out, "\n20 iters in [0-9.]+ seconds"));
    }
    SECTION("10,000 small messages, none lost") {
        auto [server, client] = pingpong_pair(daemon, {"-p", "5002", "-s", "8", "-n", "10000"});
        check_pingpong_report(client, 8, 10000, 5002);
        CHECK(server.exit_code == 0);
        CHECK(contains(server.out, "\n10000 iters in [0-9.]+ seconds"));
    }
    SECTION("sleeping on CQ events") {
        auto [server, client] =
            pingpong_pair(daemon, {"-p", "5003", "-e", "-s", "4096", "-n", "500"});
        check_pingpong_report(client, 4096, 500, 5003);
        CHECK(server.exit_code == 0);
    }
    CHECK(daemon.alive());
}

TEST_CASE(
    "A consumer killed mid-transfer: the daemon survives and frees its resources, "
    "and the peer sees a disconnect",
    "[cross-process][daemon]") {
    Daemon daemon;
    const std::vector<std::string> args{"-p", "5010", "-s", "65536", "-n", "100000000"};
    const Child server = spawn(kPingpong, args, daemon.env());
    std::vector<std::string> client_args = args;
    client_args.insert(client_args.begin(), "127.0.0.1");
    // Start the client once the server listens (two sessions = both attached),
    // and let data flow for a while.
    Child client;
    for (int attempt = 0; attempt < 200; ++attempt) {
        client = spawn(kPingpong, client_args, daemon.env());
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        if (waitpid(client.pid, nullptr, WNOHANG) == 0) break;  // still running: connected
    }
    REQUIRE(waitpid(client.pid, nullptr, WNOHANG) == 0);
    {
        const auto busy = daemon.status();
        CHECK(busy.at("sessions") == "2");
        CHECK(busy.at("contexts") == "2");
    }

    REQUIRE(kill(client.pid, SIGKILL) == 0);
    const Run killed = wait(client, std::chrono::seconds(10));
    CHECK(killed.exit_code == 128 + SIGKILL);

    // The peer is told: its disconnect event fires and pingpong gives up.
    const Run peer = wait(server, std::chrono::seconds(30));
    CHECK(peer.exit_code == 1);
    CHECK(contains(peer.err, "peer went away|disconnect"));

    // The daemon lives on, with nothing left of either process.
    REQUIRE(daemon.alive());
    std::map<std::string, std::string> idle;
    for (int i = 0; i < 200; ++i) {
        idle = daemon.status();
        if (idle.at("sessions") == "0" && idle.at("contexts") == "0") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(idle.at("sessions") == "0");
    CHECK(idle.at("contexts") == "0");
    CHECK(contains(daemon.log(), "pid " + std::to_string(client.pid) + ": ctx#[0-9]+ detached"));

    // And serves the next pair as if nothing had happened.
    auto [server2, client2] = pingpong_pair(daemon, {"-p", "5011", "-n", "100"});
    check_pingpong_report(client2, 4096, 100, 5011);
    CHECK(server2.exit_code == 0);
}

// ---------------------------------------------------------------------------
// Adapters in different processes, over RoCEv2/UDP (SOFTNDK_FABRIC=udp:PORT)
// ---------------------------------------------------------------------------
namespace {

// One adapter per side: rnic0 on 127.0.0.1 (client), rnic1 on 127.0.0.2 (server).
struct UdpSides {
    std::vector<std::string> client, server;
};

UdpSides udp_sides(uint16_t port) {
    const fs::path a = scratch() / ("udp-a-" + std::to_string(port) + ".ini");
    const fs::path b = scratch() / ("udp-b-" + std::to_string(port) + ".ini");
    std::ofstream(a) << "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\n";
    std::ofstream(b) << "[adapter rnic1]\nif_index = 2\nipv4 = 127.0.0.2\n";
    const std::string fabric = "SOFTNDK_FABRIC=udp:" + std::to_string(port);
    return {{fabric, "SOFTNDK_CONFIG=" + a.string()}, {fabric, "SOFTNDK_CONFIG=" + b.string()}};
}

uint16_t udp_port(int offset) {
    return static_cast<uint16_t>(20000 + (getpid() * 7 + offset) % 30000);
}

// Server in the background, client retried until the server listens.
std::pair<Run, Run> udp_pingpong(const std::vector<std::string> &server_env,
                                 const std::vector<std::string> &client_env,
                                 const std::vector<std::string> &args) {
    const Child server = spawn(kPingpong, args, server_env);
    std::vector<std::string> client_args = args;
    client_args.insert(client_args.begin(), "127.0.0.2");
    Run client;
    for (int attempt = 0; attempt < 100; ++attempt) {
        client = run(kPingpong, client_args, client_env);
        // Nobody listening yet: the CM's REQ is answered by no one (IO_TIMEOUT) or
        // refused; try again.
        if (client.exit_code != 1 ||
            !contains(client.err, "STATUS_CONNECTION_REFUSED|STATUS_IO_TIMEOUT"))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return {wait(server), client};
}

}  // namespace

TEST_CASE("Embedded adapters in two processes reach each other over RoCEv2/UDP",
          "[cross-process][udp]") {
    const UdpSides sides = udp_sides(udp_port(1));
    SECTION("1 MiB messages, verified") {
        auto [server, client] =
            udp_pingpong(sides.server, sides.client, {"-p", "6001", "-s", "1m", "-n", "10"});
        INFO("server stderr:\n" << server.err);
        check_pingpong_report(client, 1 << 20, 10, 6001, "127\\.0\\.0\\.2");
        CHECK(server.exit_code == 0);
    }
    SECTION("1,000 small messages") {
        auto [server, client] =
            udp_pingpong(sides.server, sides.client, {"-p", "6002", "-s", "8", "-n", "1000"});
        INFO("server stderr:\n" << server.err);
        check_pingpong_report(client, 8, 1000, 6002, "127\\.0\\.0\\.2");
        CHECK(server.exit_code == 0);
    }
}

TEST_CASE("Adapters in two daemons reach each other over RoCEv2/UDP", "[cross-process][udp]") {
    const UdpSides sides = udp_sides(udp_port(2));
    Daemon daemon_a(sides.client), daemon_b(sides.server);
    std::vector<std::string> client_env = daemon_a.env(), server_env = daemon_b.env();
    client_env.push_back(sides.client[1]);  // the same SOFTNDK_CONFIG as its daemon
    server_env.push_back(sides.server[1]);
    auto [server, client] =
        udp_pingpong(server_env, client_env, {"-p", "6003", "-s", "65536", "-n", "50"});
    INFO("server stderr:\n" << server.err);
    check_pingpong_report(client, 65536, 50, 6003, "127\\.0\\.0\\.2");
    CHECK(server.exit_code == 0);
    CHECK(daemon_a.alive());
    CHECK(daemon_b.alive());
}

// ---------------------------------------------------------------------------
// The daemon's control socket against a client that speaks nonsense
// ---------------------------------------------------------------------------
namespace {

// A control-socket client that writes raw bytes (docs/daemon.md: requests are
// hw_interface.hpp command structs; responses an 8-byte "SNDR" frame + body).
class RawClient {
  public:
    explicit RawClient(const std::string &socket_path) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd_ >= 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
        REQUIRE(::connect(fd_, reinterpret_cast<::sockaddr *>(&address), sizeof address) == 0);
        timeval limit{10, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    }
    ~RawClient() { ::close(fd_); }

    void send(const std::vector<uint8_t> &bytes) {
        REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                static_cast<ssize_t>(bytes.size()));
    }
    // Sends what the daemon may cut off midway (it closes a session at a bad header, and
    // a send still writing then stops short or fails): returns how much it took.
    ssize_t send_until_cut(const std::vector<uint8_t> &bytes) {
        return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    }
    // CommandHeader{opcode, request_bytes, sequence}, then `body_bytes` zero bytes.
    static std::vector<uint8_t> request(uint16_t opcode, uint16_t request_bytes, uint32_t sequence,
                                        size_t body_bytes) {
        std::vector<uint8_t> r(8 + body_bytes, 0);
        std::memcpy(r.data(), &opcode, 2);
        std::memcpy(r.data() + 2, &request_bytes, 2);
        std::memcpy(r.data() + 4, &sequence, 4);
        return r;
    }
    // The next response's NTSTATUS, or nullopt if the daemon closed the session.
    std::optional<int32_t> response(uint32_t expected_sequence) {
        uint8_t frame[8];
        if (!read_exact(frame, sizeof frame)) return std::nullopt;
        uint32_t magic = 0;
        uint16_t bytes = 0;
        std::memcpy(&magic, frame, 4);
        std::memcpy(&bytes, frame + 4, 2);
        CHECK(magic == 0x52444e53u);  // "SNDR"
        std::vector<uint8_t> body(bytes);
        if (bytes < 8 || !read_exact(body.data(), body.size())) return std::nullopt;
        uint32_t sequence = 0;
        int32_t status = 0;
        std::memcpy(&sequence, body.data(), 4);
        std::memcpy(&status, body.data() + 4, 4);
        CHECK(sequence == expected_sequence);
        return status;
    }
    bool closed_by_daemon() {
        uint8_t byte;
        return ::recv(fd_, &byte, 1, 0) == 0;
    }

  private:
    bool read_exact(uint8_t *out, size_t n) {
        for (size_t got = 0; got < n;) {
            const ssize_t r = ::recv(fd_, out + got, n - got, 0);
            if (r <= 0) return false;
            got += static_cast<size_t>(r);
        }
        return true;
    }
    int fd_ = -1;
};

constexpr uint16_t kDaemonStatusOpcode = 0x7f01;   // emulator/daemon/protocol.hpp
constexpr uint16_t kDaemonAdapterOpcode = 0x7f02;  // the same

}  // namespace

TEST_CASE("The daemon refuses malformed control messages and lives on", "[daemon][robustness]") {
    Daemon daemon;
    const std::string socket_path = daemon.env()[1].substr(std::strlen("SOFTNDK_SOCKET="));
    SECTION("an unknown opcode gets an error response and the session goes on") {
        RawClient c(socket_path);
        c.send(RawClient::request(0x7eee, 8, 1, 0));
        const auto unknown = c.response(1);
        REQUIRE(unknown);
        CHECK(*unknown < 0);  // an NTSTATUS error
        c.send(RawClient::request(kDaemonStatusOpcode, 16, 2, 8));
        CHECK(c.response(2) == 0);
    }
    SECTION("a known opcode with the wrong size gets an error response") {
        RawClient c(socket_path);
        c.send(RawClient::request(kDaemonStatusOpcode, 12, 3, 4));
        const auto wrong = c.response(3);
        REQUIRE(wrong);
        CHECK(*wrong < 0);
    }
    SECTION("kDaemonAdapter: a position beyond the adapters or a wrong size is an error") {
        RawClient c(socket_path);
        std::vector<uint8_t> beyond = RawClient::request(kDaemonAdapterOpcode, 16, 5, 8);
        beyond[8] = 1;  // position 1: the daemon has one adapter
        c.send(beyond);
        const auto refused = c.response(5);
        REQUIRE(refused);
        CHECK(*refused < 0);
        c.send(RawClient::request(kDaemonAdapterOpcode, 12, 6, 4));
        const auto wrong = c.response(6);
        REQUIRE(wrong);
        CHECK(*wrong < 0);
        c.send(RawClient::request(kDaemonAdapterOpcode, 16, 7, 8));  // position 0
        CHECK(c.response(7) == 0);
    }
    SECTION("a request size the stream cannot survive closes the session") {
        for (const uint16_t size : {uint16_t{0}, uint16_t{4}, uint16_t{0xffff}}) {
            CAPTURE(size);
            RawClient c(socket_path);
            c.send(RawClient::request(kDaemonStatusOpcode, size, 4, 0));
            // Oversized: answered with INVALID_PARAMETER first; either way, then closed.
            (void)c.response(4);
            CHECK(c.closed_by_daemon());
        }
    }
    SECTION("64 KiB of noise, and a client that leaves mid-request") {
        {
            RawClient c(socket_path);
            // The header asks for 0xabab bytes (more than any request): the daemon
            // answers and closes, perhaps before all of the noise is written, so how
            // much the send took varies. What counts follows: the daemon lives on.
            (void)c.send_until_cut(std::vector<uint8_t>(65536, 0xab));
        }
        {
            RawClient c(socket_path);
            c.send({0x01, 0x7f, 0x10});  // three bytes of a header, then gone
        }
    }
    REQUIRE(daemon.alive());
    std::map<std::string, std::string> idle;
    for (int i = 0; i < 200; ++i) {
        idle = daemon.status();
        if (idle.at("sessions") == "0") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(idle.at("sessions") == "0");
    // And it still serves consumers.
    check_pingpong_report(run(kPingpong, {"-l", "-n", "20"}, daemon.env()), 4096, 20);
}

// ---------------------------------------------------------------------------
// softndk stat, softndk rnic --status -j, softndk res (issue 14, item 3)
// ---------------------------------------------------------------------------
namespace {

// rxe's counter names first, then SoftNDK's own: a sample of each group, in order.
const std::vector<std::string> kSomeCounters{"sent_pkts",
                                             "rcvd_pkts",
                                             "rcvd_rnr_err",
                                             "rdma_sends",
                                             "doorbells",
                                             "cqes",
                                             "eqes",
                                             "faults_injected",
                                             "fault_drops",
                                             "fault_eq_events",
                                             "qpc_cache_misses",
                                             "mpt_cache_misses",
                                             "mtt_cache_hits",
                                             "mtt_cache_misses"};

// `softndk stat -j` with `env`, parsed: the array of per-adapter objects.
boost::json::array stat_json(const std::vector<std::string> &args,
                             const std::vector<std::string> &env = {}) {
    std::vector<std::string> full{"stat", "-j"};
    full.insert(full.end(), args.begin(), args.end());
    const Run r = run(kSoftndk, full, env);
    INFO("stderr:\n" << r.err);
    REQUIRE(r.exit_code == 0);
    const boost::json::value v = parse_json(r.out);
    REQUIRE(v.is_array());
    return v.as_array();
}

uint64_t counter(const boost::json::object &device, const std::string &name) {
    INFO("counter " << name);
    REQUIRE(device.contains(name));
    REQUIRE((device.at(name).is_uint64() || device.at(name).is_int64()));
    return device.at(name).to_number<uint64_t>();
}

}  // namespace

TEST_CASE("softndk stat prints every counter on one line per adapter, rdma's format", "[e2e]") {
    const Run r = run(kSoftndk, {"stat"});
    INFO("stderr:\n" << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "^link rnic0/1 sent_pkts [0-9]+ rcvd_pkts [0-9]+ "));
    size_t last = 0;
    for (const auto &name : kSomeCounters) {
        INFO("counter " << name);
        const size_t at = r.out.find(" " + name + " ");
        REQUIRE(at != std::string::npos);
        CHECK(at > last);
        last = at;
    }
    CHECK(contains(
        r.out, "paced_late_ns [0-9]+" +
                   std::string(daemon_mode() ? " daemon_sleeps [0-9]+ daemon_wakeups [0-9]+" : "") +
                   "\n$"));
}

TEST_CASE("softndk stat -j: an object per adapter, every counter a number", "[e2e]") {
    TwoAdapters two = two_adapters();
    const boost::json::array all = stat_json({}, two.env);
    REQUIRE(all.size() == 2);
    CHECK(all[0].as_object().at("ifname") == "rnic0");
    CHECK(all[1].as_object().at("ifname") == "rnic1");
    CHECK(all[1].as_object().at("if_index") == 7);
    for (const auto &device : all) {
        const auto &o = device.as_object();
        CHECK(o.at("port") == 1);
        for (const auto &name : kSomeCounters)
            (void)counter(o, name);
        CHECK(o.contains("daemon_wakeups") == daemon_mode());
    }
    SECTION("one adapter, by alias/port or by if_index") {
        const boost::json::array one = stat_json({"rnic1/1"}, two.env);
        REQUIRE(one.size() == 1);
        CHECK(one[0].as_object().at("ifname") == "rnic1");
        const boost::json::array by_index = stat_json({"7"}, two.env);
        REQUIRE(by_index.size() == 1);
        CHECK(by_index[0].as_object().at("ifname") == "rnic1");
    }
    if (!daemon_mode()) {
        // Embedded, the device is this run's own and has done nothing yet.
        CHECK(counter(all[0].as_object(), "sent_pkts") == 0);
        CHECK(counter(all[0].as_object(), "doorbells") == 0);
    }
}

TEST_CASE("softndk stat: an unknown adapter or port exits 1, usage errors 2", "[e2e]") {
    const Run unknown = run(kSoftndk, {"stat", "nope"});
    CHECK(unknown.exit_code == 1);
    CHECK(contains(unknown.err, "^softndk stat: no adapter named 'nope'"));
    const Run port = run(kSoftndk, {"stat", "rnic0/2"});
    CHECK(port.exit_code == 1);
    CHECK(contains(port.err, "no port '2'"));
    CHECK(port.out.empty());
    CHECK(run(kSoftndk, {"stat", "rnic0", "rnic1"}).exit_code == 2);
    CHECK(run(kSoftndk, {"stat", "--bogus"}).exit_code == 2);
}

TEST_CASE("softndk stat counts the daemon's traffic from every consumer",
          "[cross-process][daemon]") {
    Daemon daemon;
    const boost::json::array before = stat_json({}, daemon.env());
    REQUIRE(before.size() == 1);
    CHECK(counter(before[0].as_object(), "rdma_sends") == 0);
    // Another process's traffic: 10 round trips over a loopback connection, a SEND each
    // way per iteration.
    check_pingpong_report(run(kPingpong, {"-l", "-n", "10"}, daemon.env()), 4096, 10);
    const boost::json::object after = stat_json({"rnic0"}, daemon.env())[0].as_object();
    CHECK(counter(after, "rdma_sends") == 20);
    CHECK(counter(after, "rdma_recvs") == 20);
    CHECK(counter(after, "sent_pkts") == counter(after, "rcvd_pkts"));
    CHECK(counter(after, "sent_pkts") >= 40);  // 4 KiB SENDs of 1 KiB-MTU packets, and ACKs
    CHECK(counter(after, "cqes") >= 40);
    CHECK(counter(after, "doorbells") > 0);
    CHECK(counter(after, "qpc_cache_hits") + counter(after, "qpc_cache_misses") > 0);
}

TEST_CASE("softndk rnic --status -j prints the status as one JSON object",
          "[cross-process][daemon]") {
    Daemon daemon;
    const std::string socket = daemon.env()[1].substr(std::strlen("SOFTNDK_SOCKET="));
    const std::map<std::string, std::string> text = daemon.status();
    for (const char *flag : {"-j", "--json"}) {
        const Run r = run(kSoftndk, {"rnic", "--status", flag, "--socket", socket});
        REQUIRE(r.exit_code == 0);
        const boost::json::value v = parse_json(r.out);
        REQUIRE(v.is_object());
        const auto &o = v.as_object();
        CHECK(o.at("socket") == socket.c_str());
        CHECK(std::to_string(o.at("pid").to_number<uint64_t>()) == text.at("pid"));
        for (const char *key : {"sessions", "adapters", "contexts", "sleeps", "wakeups"}) {
            INFO(key);
            CHECK(is_number(o.at(key)));
        }
        CHECK(o.at("adapters") == 1);
        CHECK(o.at("sessions") == 0);
    }
    SECTION("no daemon on the socket: exit 1; -j without --status: exit 2") {
        const Run none = run(
            kSoftndk, {"rnic", "--status", "-j", "--socket", (scratch() / "none.sock").string()});
        CHECK(none.exit_code == 1);
        CHECK(none.out.empty());
        CHECK(run(kSoftndk, {"rnic", "-j", "--socket", socket}).exit_code == 2);
    }
}

TEST_CASE("softndk res show: JSON arrays for every kind, usage errors 2", "[e2e]") {
    for (const char *kind : {"qp", "cq", "pd", "mr", "srq", "cm"}) {
        const Run r = run(kSoftndk, {"res", "show", kind, "-j"});
        REQUIRE(r.exit_code == 0);
        const boost::json::value v = parse_json(r.out);
        REQUIRE(v.is_array());
        // Embedded, the device is the tool's own and holds none of its objects.
        if (!daemon_mode()) CHECK(v.as_array().empty());
        const Run text = run(kSoftndk, {"res", "show", kind});
        CHECK(text.exit_code == 0);
        if (!daemon_mode()) CHECK(text.out.empty());
    }
    const Run unknown = run(kSoftndk, {"res", "show", "qp", "nope"});
    CHECK(unknown.exit_code == 1);
    CHECK(contains(unknown.err, "no adapter named 'nope'"));
    CHECK(run(kSoftndk, {"res", "show", "qq"}).exit_code == 2);
    CHECK(run(kSoftndk, {"res", "show"}).exit_code == 2);
    CHECK(run(kSoftndk, {"res"}).exit_code == 2);
}

TEST_CASE("softndk res show lists another consumer's objects through the daemon, with its pid",
          "[cross-process][daemon]") {
    Daemon daemon;
    // A pingpong server holds a PD, a CQ, a QP and an MR while it waits for its client.
    const std::vector<std::string> args{"-p", "5020", "-n", "5"};
    const Child server = spawn(kPingpong, args, daemon.env());
    auto objects = [&](const char *kind) {
        const Run r = run(kSoftndk, {"res", "show", kind, "-j"}, daemon.env());
        REQUIRE(r.exit_code == 0);
        const boost::json::value v = parse_json(r.out);
        REQUIRE(v.is_array());
        return v.as_array();
    };
    // It listens last (after its QP and receives): wait for the listener.
    boost::json::array cms;
    for (int i = 0; i < 400 && cms.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        cms = objects("cm");
    }
    const boost::json::array qps = objects("qp");
    REQUIRE(qps.size() == 1);
    const auto &qp = qps[0].as_object();
    CHECK(qp.at("ifname") == "rnic0");
    CHECK(qp.at("pid") == server.pid);
    CHECK(qp.at("type") == "RC");
    CHECK(qp.at("state") == "RESET");  // not connected yet
    CHECK(qp.at("lqpn").to_number<uint64_t>() >= 2);
    CHECK(qp.at("rq_depth").to_number<uint64_t>() >= 1);
    CHECK(qp.at("sq_outstanding") == 0);
    CHECK(qp.at("sq_unfetched") == 0);
    // pingpong posts its receive before it listens: the RQ holds it.
    CHECK(qp.at("rq_queued").to_number<uint64_t>() >= 1);
    CHECK(qp.at("rq_queued").to_number<uint64_t>() <= qp.at("rq_depth").to_number<uint64_t>());
    REQUIRE(cms.size() == 1);
    CHECK(cms[0].as_object().at("role") == "listener");
    CHECK(cms[0].as_object().at("state") == "listening");
    CHECK(cms[0].as_object().at("pid") == server.pid);
    CHECK(contains(cms[0].as_object().at("src_addr").as_string().c_str(), ":5020$"));
    CHECK(objects("srq").empty());
    const boost::json::array cqs = objects("cq");
    REQUIRE(cqs.size() == 1);
    CHECK(cqs[0].as_object().at("pid") == server.pid);
    CHECK(cqs[0].as_object().at("cqn") == qp.at("scq"));
    CHECK(cqs[0].as_object().at("queued") == 0);
    const boost::json::array pds = objects("pd");
    REQUIRE(pds.size() == 1);
    CHECK(pds[0].as_object().at("pdn") == qp.at("pd"));
    CHECK(pds[0].as_object().at("users").to_number<uint64_t>() >= 2);  // the QP and the MR
    const boost::json::array mrs = objects("mr");
    REQUIRE(mrs.size() == 1);  // the buffer pingpong registered
    const auto &mr = mrs[0].as_object();
    CHECK(mr.at("pid") == server.pid);
    CHECK(mr.at("pd") == qp.at("pd"));
    CHECK(mr.at("type") == "mr");
    CHECK(mr.at("state") == "valid");
    CHECK(mr.at("token").to_number<uint64_t>() >= 0x200);  // MPT index 2 or above
    CHECK(mr.at("iova").to_number<uint64_t>() != 0);
    CHECK(mr.at("mrlen").to_number<uint64_t>() >= 4096);
    CHECK(contains(mr.at("access").as_string().c_str(), "^LR,LW"));
    const Run text = run(kSoftndk, {"res", "show", "qp"}, daemon.env());
    CHECK(contains(text.out, "^link rnic0/1 lqpn [0-9]+ rqpn 0 type RC state RESET .* pid " +
                                 std::to_string(server.pid) + "\n$"));

    // The client connects, both finish; the server's objects go with it.
    std::vector<std::string> client_args = args;
    client_args.insert(client_args.begin(), "127.0.0.1");
    check_pingpong_report(run(kPingpong, client_args, daemon.env()), 4096, 5, 5020);
    CHECK(wait(server).exit_code == 0);
    CHECK(objects("qp").empty());
    CHECK(objects("cq").empty());
    CHECK(objects("pd").empty());
    CHECK(objects("mr").empty());
    CHECK(objects("cm").empty());
}

// ---------------------------------------------------------------------------
// Issue 17 ("A newcomer's first hour"), items 4-7: versions, perftest's flags and
// names in two processes, ibv_devinfo's port block, exit codes and the environment.
// ---------------------------------------------------------------------------
namespace {

// `softndk NAME ARGS...` as the server, in the background, and `softndk NAME HOST
// ARGS...` as the client (started first with client_first: it must retry until
// the server listens). Returns {server, client}.
std::pair<Run, Run> perftest_pair(const std::string &name, const std::vector<std::string> &args,
                                  const std::vector<std::string> &env = {},
                                  bool client_first = false,
                                  const std::string &host = "127.0.0.1") {
    std::vector<std::string> server_args{name}, client_args{name, host};
    server_args.insert(server_args.end(), args.begin(), args.end());
    client_args.insert(client_args.end(), args.begin(), args.end());
    Child server, client;
    if (client_first) {
        client = spawn(kSoftndk, client_args, env);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        server = spawn(kSoftndk, server_args, env);
    } else {
        server = spawn(kSoftndk, server_args, env);
        client = spawn(kSoftndk, client_args, env);
    }
    Run c = wait(client, std::chrono::seconds(90));
    Run srv = wait(server, std::chrono::seconds(90));
    return {srv, c};
}

// Both ends printed perftest's table: the title, the header and a row for `size`
// with `iters` iterations.
void check_both_tables(const Run &server, const Run &client, const std::string &title,
                       const std::string &header, uint64_t size, uint64_t iters) {
    for (const Run *r : {&server, &client}) {
        INFO((r == &server ? "server" : "client") << " stdout:\n"
                                                  << r->out << "stderr:\n"
                                                  << r->err);
        CHECK(r->exit_code == 0);
        CHECK(contains(r->out, title));
        CHECK(contains(r->out, header));
        CHECK(contains(r->out, "\n " + std::to_string(size) + " +" + std::to_string(iters) +
                                   " +[0-9.]+ +[0-9.]+ +[0-9.]+"));
    }
    CHECK(contains(server.out, "Waiting for client to connect"));
    CHECK(contains(server.out, "Process        : server end"));
    CHECK(contains(client.out, "Process        : client end"));
}

const char kBwHeader[] = "\n #bytes     #iterations    BW peak\\[MB/sec\\]";
const char kLatHeader[] = "\n #bytes #iterations    t_min\\[usec\\]";

}  // namespace

TEST_CASE("softndk reports the NDK version the adapter negotiates: 2.1", "[e2e][issue17]") {
    CHECK(contains(run(kSoftndk, {"--version"}).out, "\nNDK version: 2\\.1 \\(adapter rnic0"));
    const Run devices = run(kSoftndk, {"devices", "-j"});
    REQUIRE(devices.exit_code == 0);
    const boost::json::value report = parse_json(devices.out);
    CHECK(report.as_object().at("devices").as_array().at(0).as_object().at("ndk_version") == "2.1");
    CHECK(contains(run(kSoftndk, {"devices"}).out, "\tndk_version: +2\\.1\n"));
    CHECK(contains(run(kSoftndk, {"perf", "-n", "10"}).out, "\n NDK version     : 2\\.1\t"));
}

TEST_CASE("softndk ib_write_bw and ib_write_bw 127.0.0.1: two processes, both print the table",
          "[e2e][issue17]") {
    // Exactly the pair a newcomer types, with no environment: embedded they meet over
    // RoCEv2/UDP (the client takes 127.0.0.2); under the daemon, in the daemon.
    auto [server, client] = perftest_pair("ib_write_bw", {});
    check_both_tables(server, client, "RDMA_Write BW Test", kBwHeader, 65536, 5000);
    CHECK(contains(client.out, daemon_mode() ? "local address: IP 127\\.0\\.0\\.1 "
                                             : "local address: IP 127\\.0\\.0\\.2 "));
    CHECK(contains(client.out, "remote address: IP 127\\.0\\.0\\.1 port 18515 "));
    // The server prints the client's figures: the same row.
    const auto row = [](const std::string &out) {
        std::smatch m;
        std::regex_search(out, m, std::regex("\n 65536 [^\n]*\n"));
        return m.str();
    };
    CHECK_FALSE(row(client.out).empty());
    CHECK(row(server.out) == row(client.out));
}

TEST_CASE("softndk ib_* in two processes: every test, the client first, JSON, a mismatch",
          "[e2e][issue17]") {
    const std::vector<std::string> env{"SOFTNDK_FABRIC=udp:" + std::to_string(udp_port(17))};
    SECTION("ib_send_lat, the client started before the server retries") {
        auto [server, client] = perftest_pair("ib_send_lat", {"-n", "300"}, env, true);
        check_both_tables(server, client, "Send Latency Test", kLatHeader, 2, 300);
    }
    SECTION("ib_write_lat -s 64") {
        auto [server, client] = perftest_pair("ib_write_lat", {"-s", "64", "-n", "300"}, env);
        check_both_tables(server, client, "RDMA_Write Latency Test", kLatHeader, 64, 300);
    }
    SECTION("ib_send_bw -q 2 -t 64 -p 18600") {
        auto [server, client] = perftest_pair(
            "ib_send_bw", {"-q", "2", "-t", "64", "-s", "4096", "-n", "500", "-p", "18600"}, env);
        check_both_tables(server, client, "Send BW Test", kBwHeader, 4096, 500);
        CHECK(contains(client.out, "Number of qps   : 2"));
        CHECK(contains(client.out, "TX depth        : 64\n"));
    }
    SECTION("--out_json_file keeps the table on stdout; -j prints JSON on both ends") {
        const fs::path file = scratch() / "two-process.json";
        auto [server, client] = perftest_pair(
            "ib_write_bw", {"-s", "1024", "-n", "300", "--out_json_file", file.string()}, env);
        check_both_tables(server, client, "RDMA_Write BW Test", kBwHeader, 1024, 300);
        const boost::json::value report = parse_json(slurp(file));
        CHECK(number(report.as_object().at("results").as_array().at(0).as_object().at("MsgSize")) ==
              1024);
        auto [json_server, json_client] = perftest_pair("ib_send_lat", {"-n", "100", "-j"}, env);
        for (const Run *r : {&json_server, &json_client}) {
            REQUIRE(r->exit_code == 0);
            const boost::json::value v = parse_json(r->out);
            CHECK(number(v.as_object().at("results").as_array().at(0).as_object().at(
                      "n_iterations")) == 100);
        }
    }
    SECTION("a client that runs another test than the server: both exit 1") {
        const Child server = spawn(kSoftndk, {"ib_write_bw", "-n", "100"}, env);
        const Run client = wait(spawn(kSoftndk, {"ib_send_bw", "127.0.0.1", "-n", "100"}, env));
        const Run served = wait(server);
        CHECK(client.exit_code == 1);
        CHECK(contains(client.err, "the server runs ib_write_bw .*start both with the same"));
        CHECK(served.exit_code == 1);
        CHECK(contains(served.err, "the client runs ib_send_bw"));
    }
}

// Embedded, the two ends are two processes with a model clock each, over RoCEv2/UDP:
// the server's responder once counted READs in progress by its own clock and refused
// the 17th or so (NAK invalid request). It frees a READ's resource when the READ's last
// response has left, so thousands of READs go through, one at a time and ORD at a time.
TEST_CASE("softndk ib_read_lat and ib_read_bw in two processes: 2000 READs each, both exit 0",
          "[e2e][issue17]") {
    const std::vector<std::string> env{"SOFTNDK_FABRIC=udp:" + std::to_string(udp_port(18))};
    auto [server, client] = perftest_pair("ib_read_lat", {"-n", "2000"}, env);
    check_both_tables(server, client, "RDMA_Read Latency Test", kLatHeader, 2, 2000);
    auto [bw_server, bw_client] = perftest_pair("ib_read_bw", {"-s", "8192", "-n", "2000"}, env);
    check_both_tables(bw_server, bw_client, "RDMA_Read BW Test", kBwHeader, 8192, 2000);
    for (const Run *r : {&server, &client, &bw_server, &bw_client})
        CHECK_FALSE(
            contains(r->err, "more READs in progress than IRD|STATUS_INVALID_DEVICE_REQUEST"));
}

TEST_CASE("softndk perf takes perftest's flags with perftest's meanings", "[e2e][issue17]") {
    // -t is the tx depth, -m the MTU (the old -t send|write|read and -m lat|bw still work).
    Run r = run(kSoftndk, {"perf", "-t", "32", "--test", "write", "-n", "100"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "\n TX depth        : 32\n"));
    r = run(kSoftndk, {"perf", "-t", "send", "-m", "lat", "-n", "50"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "Send Latency Test"));
    r = run(kSoftndk, {"perf", "-m", "1024", "-n", "50"});
    if (daemon_mode()) {  // the daemon's adapter has 4096, and the tool cannot change it
        CHECK(r.exit_code == 1);
        CHECK(contains(r.err, "path MTU 4096"));
    } else {
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "\n Mtu             : 1024\\[B\\]\n"));
    }
    // -e: sleep on CQ events.
    r = run(kSoftndk, {"perf", "--test", "send", "--lat", "-e", "-n", "200"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "CQ events       : ON"));
    CHECK(contains(r.out, "\n 2 +200 +[0-9.]+"));
    r = run(kSoftndk, {"perf", "--test", "read", "--bw", "-e", "-n", "200", "-s", "4096"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "\n 4096 +200 +[0-9.]+"));
    // -D: for a duration, not a count.
    const auto started = std::chrono::steady_clock::now();
    r = run(kSoftndk, {"perf", "--test", "send", "-s", "256", "-D", "1", "-j"});
    CHECK(std::chrono::steady_clock::now() - started >= std::chrono::seconds(1));
    REQUIRE(r.exit_code == 0);
    {
        const boost::json::value v = parse_json(r.out);
        CHECK(number(v.as_object().at("results").as_array().at(0).as_object().at("n_iterations")) >
              0);
    }
    r = run(kSoftndk, {"perf", "--test", "write", "--lat", "-D", "1"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "Duration        : 1\\[sec\\]"));
    // -N: no peak.
    r = run(kSoftndk, {"perf", "-N", "-n", "200", "-j"});
    REQUIRE(r.exit_code == 0);
    {
        const boost::json::value v = parse_json(r.out);
        const auto &row = v.as_object().at("results").as_array().at(0).as_object();
        CHECK(number(row.at("BW_peak")) == 0);
        CHECK(number(row.at("BW_average")) > 0);
    }
    // -c: RC only.
    r = run(kSoftndk, {"perf", "-c", "UD"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "RC"));
    CHECK(run(kSoftndk, {"perf", "-c", "RC", "-n", "20"}).exit_code == 0);
    // -u: the ACK timeout of perf's own adapters.
    r = run(kSoftndk, {"perf", "-u", "14", "-n", "20"});
    CHECK(r.exit_code == (daemon_mode() ? 2 : 0));
    // -H / -U: every sample after the row.
    for (const char *flag : {"-H", "-U"}) {
        r = run(kSoftndk, {"perf", "--test", "send", "--lat", flag, "-n", "20"});
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "\n#, usec\n1, [0-9.]+\n(.*\n){18}20, [0-9.]+\n"));
    }
    // --out_json_file: JSON in the file, the table on stdout; -F and --report-both accepted.
    const fs::path file = scratch() / "perf.json";
    r = run(kSoftndk,
            {"perf", "-n", "100", "-F", "--report-both", "--out_json_file", file.string()});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "RDMA_Write BW Test"));
    const boost::json::value v = parse_json(slurp(file));
    CHECK(v.as_object().at("verb") == "write");
}

TEST_CASE("softndk perf: perftest flags that do not go together exit 2", "[e2e][issue17]") {
    for (const std::vector<std::string> &args :
         std::vector<std::vector<std::string>>{{"perf", "--test", "write", "--lat", "-e"},
                                               {"perf", "-D", "1", "-a"},
                                               {"perf", "-D", "1", "--clock", "model"},
                                               {"perf", "-c", "FOO"},
                                               {"perf", "-m", "1000"},
                                               {"perf", "-t", "0"},
                                               {"perf", "--mode", "lat", "--bw"},
                                               {"perf", "-m", "lat", "--bw"},
                                               {"ib_write_bw", "-t", "write"},
                                               {"ib_write_lat", "--clock", "model", "127.0.0.1"},
                                               {"ib_write_bw", "300.1.2.3"},
                                               {"ib_send_lat", "not-an-address"},
                                               {"ib_read_bw", "-u", "99"}}) {
        const Run r = run(kSoftndk, args);
        INFO("args: " << args.back());
        CHECK(r.exit_code == 2);
        CHECK_FALSE(r.err.empty());
    }
}

TEST_CASE("softndk perf --stall-timeout: a run that keeps completing is never stalled",
          "[e2e][perf]") {
    // Runs that last longer than a 0.2 s stall timeout, with completions all along.
    // Until 2026-11-28 a wait counted its idle polls from its start, so a run longer
    // than the timeout was called stalled: a TSan build's two-process ib_write_bw
    // failed so under CI's load with the default 10 s.
    const fs::path dir = scratch();
    if (daemon_mode()) {
        // Through the daemon, where the device's work is not the consumer's: a copy of
        // cx5-100g with a 100 Mb/s link, paced, so that 100 signaled 64 KiB writes take
        // 0.52 s of wall time, a completion every 5.2 ms.
        copy_profile("cx5-100g", dir / "slow-link.ini",
                     {{"link_mbps = 100000", "link_mbps = 100"}});
        const fs::path config = dir / "slow-link-adapters.ini";
        std::ofstream(config) << "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\n"
                                 "profile = slow-link.ini\n\n"
                                 "[adapter rnic1]\nif_index = 2\nipv4 = 127.0.0.2\n"
                                 "profile = slow-link.ini\n";
        std::vector<std::string> env{"SOFTNDK_CONFIG=" + config.string(), "SOFTNDK_TIME=paced"};
        const std::unique_ptr<Daemon> daemon = daemon_for_this_mode(env);
        const Run r = run(kSoftndk,
                          {"perf", "-d", "rnic0", "--server-dev", "rnic1", "-s", "65536", "-n",
                           "100", "-Q", "1", "--stall-timeout", "0.2"},
                          env);
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "\n 65536 +100 "));
    } else {
        // Embedded, the pair that failed: two processes over RoCEv2/UDP, 5,000 64 KiB
        // writes (0.4-2.7 s here), each end waiting on the other's. Under TSan the run
        // is many times longer, and so may be a gap between two completions.
        const std::vector<std::string> env{"SOFTNDK_FABRIC=udp:" + std::to_string(udp_port(19))};
        auto [server, client] =
            perftest_pair("ib_write_bw", {"--stall-timeout", kTsanBuild ? "1" : "0.2"}, env);
        check_both_tables(server, client, "RDMA_Write BW Test", kBwHeader, 65536, 5000);
    }
    // Every packet lost, and an ACK timeout (code 20: 4.3 s) that retries only long after:
    // no completion comes, and the run gives up. Two adapters, so that the writes cross
    // the port where the fault drops them.
    const fs::path config = dir / "black-hole-adapters.ini";
    std::ofstream(config) << "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\nack_timeout = 20\n\n"
                             "[adapter rnic1]\nif_index = 2\nipv4 = 127.0.0.2\nack_timeout = 20\n";
    std::ofstream(dir / "black-hole.ini") << "[black-hole]\nkind = drop\nprobability = 100%\n";
    std::vector<std::string> env{"SOFTNDK_CONFIG=" + config.string(),
                                 "SOFTNDK_FAULTS=" + (dir / "black-hole.ini").string()};
    const std::unique_ptr<Daemon> daemon = daemon_for_this_mode(env);
    const Run r =
        run(kSoftndk,
            {"perf", "-d", "rnic0", "--server-dev", "rnic1", "-n", "10", "--stall-timeout", "0.2"},
            env);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "no progress for 0\\.2 s while waiting for bandwidth completions"));
    CHECK(run(kSoftndk, {"perf", "--stall-timeout", "0"}).exit_code == 2);
}

TEST_CASE("softndk devices prints ibv_devinfo's port block", "[e2e][issue17]") {
    const fs::path config = scratch() / "ports.ini";
    std::ofstream(config) << "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\nipv6 = ::1\n\n"
                             "[adapter rnic1]\nif_index = 2\nipv4 = 127.0.0.2\n"
                             "profile = iwarp-default\npath_mtu = 1024\n";
    std::vector<std::string> env{"SOFTNDK_CONFIG=" + config.string()};
    const std::unique_ptr<Daemon> daemon = daemon_for_this_mode(env);
    Run r = run(kSoftndk, {"devices"}, env);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out,
                   "\tphys_port_cnt: +1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE "
                   "\\(4\\)\n\t\t\tmax_mtu:\t\t4096 \\(5\\)\n\t\t\tactive_mtu:\t\t4096 "
                   "\\(5\\)\n\t\t\tlink_layer:\t\tEthernet\n\t\t\tGID\\[  0\\]:\t\t::ffff:"
                   "127\\.0\\.0\\.1, RoCE v2\n\t\t\tGID\\[  1\\]:\t\t::1, RoCE v2\n"));
    // rnic1: iWARP (no RoCE GID type), path MTU 1024.
    CHECK(contains(r.out,
                   "\t\t\tactive_mtu:\t\t1024 \\(3\\)\n\t\t\tlink_layer:\t\tEthernet\n"
                   "\t\t\tGID\\[  0\\]:\t\t::ffff:127\\.0\\.0\\.2\n"));
    r = run(kSoftndk, {"devices", "-d", "rnic1", "-i", "1", "-j"}, env);
    REQUIRE(r.exit_code == 0);
    const boost::json::value v = parse_json(r.out);
    const auto &ports = v.as_object().at("devices").as_array().at(0).as_object().at("ports");
    REQUIRE(ports.as_array().size() == 1);
    const auto &port = ports.as_array().at(0).as_object();
    CHECK(number(port.at("port")) == 1);
    CHECK(port.at("state") == "PORT_ACTIVE");
    CHECK(number(port.at("active_mtu")) == 1024);
    CHECK(port.at("link_layer") == "Ethernet");
    CHECK(port.at("gids").as_array().at(0) == "::ffff:127.0.0.2");
    r = run(kSoftndk, {"devices", "-i", "2"}, env);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "port 1 only"));
}

TEST_CASE("softndk exit codes: usage errors 2, runtime failures 1", "[e2e][issue17]") {
    for (const char *command : {"devices", "perf", "stat"}) {
        INFO(command);
        const Run r = run(kSoftndk, {command}, "SOFTNDK_CONFIG=/nonexistent/softndk.ini");
        CHECK(r.exit_code == 2);
        CHECK(contains(r.err, "SOFTNDK_CONFIG=/nonexistent/softndk\\.ini: no such file"));
        CHECK(r.out.empty());
    }
    CHECK(run(kSoftndk, {"frobnicate"}).exit_code == 2);
    CHECK(run(kSoftndk, {"ib_write_bw", "1.2.3.4.5"}).exit_code == 2);
    // A config file that exists but is wrong is a runtime failure - embedded, where
    // the tool reads it; through the daemon it lists the daemon's adapters.
    const fs::path bad = scratch() / "bad.ini";
    std::ofstream(bad) << "[adapter rnic0]\nif_index = x\n";
    const Run r = run(kSoftndk, {"devices"}, "SOFTNDK_CONFIG=" + bad.string());
    if (daemon_mode()) {
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "^hca_id:\trnic0\n"));
    } else {
        CHECK(r.exit_code == 1);
        CHECK(contains(r.err, "bad\\.ini:2"));
    }
}

TEST_CASE("softndk --help and softndk env list every SOFTNDK_ variable the sources read",
          "[e2e][issue17]") {
    // Every getenv("SOFTNDK_...") in the sources, found the way a newcomer would grep.
    std::set<std::string> names;
    const std::regex getenv_call("getenv\\(\"(SOFTNDK_[A-Z0-9_]+)\"\\)");
    const fs::path root = SOFTNDK_E2E_SOURCE_DIR;
    for (const char *dir : {"common", "emulator", "provider", "runtime", "tools", "include"}) {
        for (const auto &entry : fs::recursive_directory_iterator(root / dir)) {
            const std::string ext = entry.path().extension().string();
            if (!entry.is_regular_file() ||
                (ext != ".cpp" && ext != ".hpp" && ext != ".c" && ext != ".h"))
                continue;
            const std::string text = slurp(entry.path());
            for (std::sregex_iterator it(text.begin(), text.end(), getenv_call), end; it != end;
                 ++it)
                names.insert((*it)[1].str());
        }
    }
    // A few the issue names, so that an empty scan cannot pass.
    for (const char *known : {"SOFTNDK_FABRIC", "SOFTNDK_PCAP", "SOFTNDK_TIME", "SOFTNDK_SEED",
                              "SOFTNDK_TRACE", "SOFTNDK_FAULTS"})
        CHECK(names.count(known) == 1);
    const Run help = run(kSoftndk, {"--help"});
    CHECK(help.exit_code == 0);
    const Run env = run(kSoftndk, {"env"}, std::vector<std::string>{"SOFTNDK_SEED=42"});
    CHECK(env.exit_code == 0);
    for (const std::string &name : names) {
        INFO(name);
        CHECK(contains(help.out, "\n  " + name + " "));
        CHECK(contains(env.out, "(^|\n)(# )?" + name + "(=| is unset)"));
    }
    CHECK(contains(env.out, "\nSOFTNDK_SEED=42\n"));
    CHECK(contains(run(kSoftndk, {"env"}, std::vector<std::string>{"SOFTNDK_PCAP="}).out,
                   "\nSOFTNDK_PCAP=\n"));
    CHECK(contains(run(kSoftndk, {"env", "-v"}).out, "# SOFTNDK_FABRIC: "));
}

TEST_CASE("softndk devices in daemon mode lists the daemon's adapters, not the local file's",
          "[e2e][issue17]") {
    // The test's own configuration has two adapters; the daemon of with-daemon.sh has
    // the default one. Embedded, the tool's own devices are the file's: both listed.
    const fs::path config = scratch() / "more-than-the-daemon.ini";
    std::ofstream(config) << "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\n\n"
                             "[adapter rnic1]\nif_index = 2\nipv4 = 127.0.0.2\n";
    const std::string env = "SOFTNDK_CONFIG=" + config.string();
    const Run all = run(kSoftndk, {"devices", "-l"}, env);
    REQUIRE(all.exit_code == 0);
    CHECK(contains(all.out, "rnic0 +\t +1\t127\\.0\\.0\\.1"));
    const Run second = run(kSoftndk, {"devices", "-d", "rnic1"}, env);
    if (daemon_mode()) {
        CHECK_FALSE(contains(all.out, "rnic1"));
        CHECK(second.exit_code == 1);
        CHECK(contains(second.err,
                       "no adapter named 'rnic1' \\(the daemon at .* has rnic0 \\(1\\)\\)"));
    } else {
        CHECK(contains(all.out, "rnic1 +\t +2\t127\\.0\\.0\\.2\n"));
        CHECK(second.exit_code == 0);
    }
}

TEST_CASE(
    "Through the daemon, devices and the examples see the daemon's adapters with no "
    "SOFTNDK_CONFIG",
    "[cross-process][daemon][issue17]") {
    Daemon daemon({"SOFTNDK_CONFIG"}, {"--adapter", "if_index=7,ipv4=127.0.0.7,alias=farnic"});
    std::vector<std::string> env = daemon.env();
    env.push_back("SOFTNDK_CONFIG");  // unset: the consumer has no configuration at all

    Run r = run(kSoftndk, {"devices", "-l"}, env);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "\n    farnic +\t +7\t127\\.0\\.0\\.7\n$"));
    CHECK_FALSE(contains(r.out, "rnic0"));

    r = run(kSoftndk, {"devices"}, env);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "^hca_id:\tfarnic\n\tif_index: +7\n"));
    CHECK(contains(r.out, "\taddresses: +127\\.0\\.0\\.7\n\tpath_mtu: +4096\n"));
    CHECK(contains(r.out, "\tprofile: +roce-default\n"));
    CHECK(contains(r.out, "\t\t\tGID\\[  0\\]:\t\t::ffff:127\\.0\\.0\\.7, RoCE v2\n"));
    CHECK(contains(r.out, "\tMaxInboundReadLimit: +[1-9]"));
    CHECK_FALSE(contains(r.out, "hca_id:\trnic0"));

    r = run(kSoftndk, {"devices", "-v", "-j", "-d", "7", "-i", "1"}, env);
    REQUIRE(r.exit_code == 0);
    {
        const boost::json::value v = parse_json(r.out);
        const auto &devices = v.as_object().at("devices").as_array();
        REQUIRE(devices.size() == 1);
        const auto &d = devices[0].as_object();
        CHECK(d.at("alias") == "farnic");
        CHECK(number(d.at("if_index")) == 7);
        REQUIRE(d.at("addresses").as_array().size() == 1);
        CHECK(d.at("addresses").as_array()[0] == "127.0.0.7");
        CHECK(d.at("profile") == "roce-default");
        CHECK(d.at("profile_source") == "built-in");
        CHECK(d.at("profile_technology") == "roce");
        CHECK(number(d.at("timing").as_object().at("link_mbps")) > 0);
        CHECK(d.at("ports").as_array().at(0).as_object().at("gids").as_array().at(0) ==
              "::ffff:127.0.0.7, RoCE v2");
    }
    r = run(kSoftndk, {"devices", "-d", "rnic0"}, env);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "no adapter named 'rnic0' \\(the daemon at .* has farnic \\(7\\)\\)"));

    // The examples' adapter directory is the daemon's too: pingpong finds farnic by
    // name and talks from its address; softndk perf runs on it.
    r = run(kPingpong, {"-l", "-d", "farnic", "-n", "20"}, env);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "local address:  IP 127\\.0\\.0\\.7"));
    r = run(kSoftndk, {"perf", "-d", "farnic", "-n", "50"}, env);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "local address: IP 127\\.0\\.0\\.7"));
}

TEST_CASE("softndk devices in daemon mode with no daemon: exit 1, nothing on stdout",
          "[cross-process][daemon][issue17]") {
    const Run r =
        run(kSoftndk, {"devices"},
            std::vector<std::string>{"SOFTNDK_MODE=daemon",
                                     "SOFTNDK_SOCKET=" + (scratch() / "none.sock").string(),
                                     "SOFTNDK_CONFIG"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "cannot reach the SoftNDK daemon"));
}
