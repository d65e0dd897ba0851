// Device profiles as data (emulator/device/profile.hpp): the shipped files of
// profiles/, the built-in copies compiled from them, and the errors of a bad file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "device/profile.hpp"
#include "device/status.hpp"
#include "softndk/monotonic.hpp"

using namespace softndk;
using namespace softndk::emu;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// A valid profile to break one line of: roce-default's file.
std::string roce_default_text() {
    return read_file(fs::path(SOFTNDK_PROFILES_DIR) / "roce-default.ini");
}

// `text` with the first line that starts with `prefix` replaced by `line`; the
// 1-based number of that line in `number`.
std::string replace_line(const std::string &text, const std::string &prefix,
                         const std::string &line, int &number) {
    std::string out;
    size_t pos = 0;
    int n = 0;
    bool done = false;
    number = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        const std::string current = text.substr(pos, end - pos);
        ++n;
        if (!done && current.starts_with(prefix)) {
            out += line;
            number = n;
            done = true;
        } else {
            out += current;
        }
        out += '\n';
        pos = end + 1;
    }
    REQUIRE(done);
    return out;
}

std::string parse_error(const std::string &text) {
    Profile p;
    std::string error;
    CHECK_FALSE(parse_profile(text, "cx9.ini", p, error));
    return error;
}

}  // namespace

TEST_CASE("every shipped profile file loads, named as its file", "[device][profile]") {
    std::vector<std::string> files;
    for (const auto &entry : fs::directory_iterator(SOFTNDK_PROFILES_DIR)) {
        if (entry.path().extension() == ".ini") files.push_back(entry.path().stem().string());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> builtin;
    for (auto name : profile_names())
        builtin.emplace_back(name);
    // The built-in profiles are exactly the files.
    CHECK(builtin == files);
    for (const auto &name :
         {"roce-default", "iwarp-default", "ideal", "cx5-100g", "cx6-200g", "cx7-400g", "t6-25g"})
        CHECK(std::find(files.begin(), files.end(), name) != files.end());

    for (const auto &name : files) {
        INFO(name);
        Profile from_file;
        std::string error;
        const std::string path = std::string(SOFTNDK_PROFILES_DIR) + "/" + name + ".ini";
        REQUIRE(load_profile_file(path, from_file, error));
        CHECK(error.empty());
        CHECK(from_file.name == name);
        CHECK(from_file.source == path);
        CHECK_FALSE(from_file.description.empty());
        const auto builtin_profile = find_profile(name);
        REQUIRE(builtin_profile);
        CHECK(builtin_profile->name == name);
        CHECK(builtin_profile->source == kBuiltinSource);
        // The compiled-in copy is the file.
        for (const auto &key : cost_keys())
            CHECK(builtin_profile->cost.*key.field == from_file.cost.*key.field);
        CHECK(std::memcmp(&builtin_profile->limits, &from_file.limits, sizeof from_file.limits) ==
              0);
        CHECK(builtin_profile->cost.ideal() == (name == "ideal"));
    }
}

TEST_CASE("shipped profiles keep today's defaults and their technology", "[device][profile]") {
    const auto roce = find_profile("roce-default");
    const auto iwarp = find_profile("iwarp-default");
    const auto t6 = find_profile("t6-25g");
    const auto cx7 = find_profile("cx7-400g");
    REQUIRE((roce && iwarp && t6 && cx7));
    // roce-default: the model's reference figures.
    const CostModel reference{};
    for (const auto &key : cost_keys()) {
        INFO(key.name);
        CHECK(roce->cost.*key.field == reference.*key.field);
        CHECK(iwarp->cost.*key.field == reference.*key.field);
    }
    CHECK(roce->limits.rdma_technology == status::kTechnologyRoceV2);
    CHECK(roce->limits.max_send_sge == 16);
    CHECK(roce->limits.max_inline_bytes == 256);
    CHECK(roce->limits.max_cq_depth == 65536);
    CHECK(roce->limits.path_mtu == 4096);
    CHECK(roce->limits.vendor_id == 0x534e44);
    CHECK((roce->limits.adapter_flags & status::kAdapterFlagReadSinkNotRequired) != 0);
    CHECK(roce->limits.quirks == 0);
    CHECK(iwarp->limits.rdma_technology == status::kTechnologyIwarp);
    CHECK((iwarp->limits.adapter_flags & status::kAdapterFlagReadSinkNotRequired) == 0);
    CHECK(iwarp->limits.max_caller_data == hw::kMaxPrivateData);
    CHECK(t6->limits.rdma_technology == status::kTechnologyIwarp);
    CHECK((t6->limits.adapter_flags & status::kAdapterFlagReadSinkNotRequired) == 0);
    CHECK(t6->cost.link_mbps == 25000);
    CHECK(cx7->cost.link_mbps == 400000);
    CHECK(cx7->cost.pcie_ps_per_byte < roce->cost.pcie_ps_per_byte);
    CHECK_FALSE(find_profile("cx9-800g"));
}

TEST_CASE("a bad profile names the file, the line, the section and the key", "[device][profile]") {
    const std::string text = roce_default_text();
    int line = 0;
    SECTION("not a number") {
        const auto bad = replace_line(text, "dma_read_ns", "dma_read_ns = fast", line);
        CHECK(parse_error(bad) ==
              "cx9.ini:" + std::to_string(line) + ": [timing] dma_read_ns: 'fast' is not a number");
    }
    SECTION("a number with trailing text") {
        const auto bad = replace_line(text, "max_send_sge", "max_send_sge = 16k", line);
        CHECK(parse_error(bad) ==
              "cx9.ini:" + std::to_string(line) + ": [limits] max_send_sge: '16k' is not a number");
    }
    SECTION("unknown key") {
        const auto bad = replace_line(text, "dma_read_ns", "dma_raed_ns = 500", line);
        CHECK(parse_error(bad) ==
              "cx9.ini:" + std::to_string(line) + ": [timing] unknown key 'dma_raed_ns'");
    }
    SECTION("unknown section, even an empty one") {
        const auto bad = replace_line(text, "[quirks]", "[quirkz]", line);
        CHECK(parse_error(bad).starts_with("cx9.ini:" + std::to_string(line) +
                                           ": unknown section [quirkz]"));
        const auto empty = text + "[extra]\n";
        CHECK(parse_error(empty).find(": unknown section [extra]") != std::string::npos);
    }
    SECTION("out of range") {
        const auto bad = replace_line(text, "retry_count", "retry_count = 8", line);
        CHECK(parse_error(bad) == "cx9.ini:" + std::to_string(line) +
                                      ": [transport] retry_count: 8 is out of range 0..7");
        const auto units = replace_line(text, "processing_units", "processing_units = 0", line);
        CHECK(parse_error(units).starts_with("cx9.ini:" + std::to_string(line) +
                                             ": [timing] processing_units: 0 is out of range"));
        const auto huge = replace_line(text, "doorbell_ns", "doorbell_ns = 99999999999", line);
        CHECK(parse_error(huge).starts_with("cx9.ini:" + std::to_string(line) +
                                            ": [timing] doorbell_ns: 99999999999 is out of range"));
        const auto mtu = replace_line(text, "path_mtu", "path_mtu = 1500", line);
        CHECK(parse_error(mtu).starts_with("cx9.ini:" + std::to_string(line) +
                                           ": [limits] path_mtu: 1500 is not a path MTU"));
        const auto sge = replace_line(text, "max_send_sge", "max_send_sge = 0", line);
        CHECK(parse_error(sge) == "cx9.ini:" + std::to_string(line) +
                                      ": [limits] max_send_sge: 0 is out of range 1..253");
    }
    SECTION("bad technology and quirk") {
        const auto tech = replace_line(text, "technology", "technology = infiniband", line);
        CHECK(parse_error(tech) ==
              "cx9.ini:" + std::to_string(line) +
                  ": [profile] technology: 'infiniband' is not a technology (roce | iwarp)");
        const auto quirk =
            replace_line(text, "fast_register_keys", "fast_register_keys = sometimes", line);
        CHECK(parse_error(quirk) == "cx9.ini:" + std::to_string(line) +
                                        ": [quirks] fast_register_keys: 'sometimes' is not "
                                        "stable | rotate");
    }
    SECTION("a repeated key") {
        const auto bad = replace_line(text, "pu_wqe_ns", "pu_wqe_ns = 50\npu_wqe_ns = 60", line);
        CHECK(parse_error(bad) ==
              "cx9.ini:" + std::to_string(line + 1) + ": [timing] pu_wqe_ns: repeated key");
    }
    SECTION("a missing limit") {
        const auto bad = replace_line(text, "max_cq_depth", "; no max_cq_depth", line);
        CHECK(parse_error(bad) == "cx9.ini: [limits] missing key 'max_cq_depth'");
    }
    SECTION("a syntax error and a line inih would cut") {
        const auto bad = replace_line(text, "pu_wqe_ns", "pu_wqe_ns 50", line);
        CHECK(parse_error(bad) ==
              "cx9.ini:" + std::to_string(line) + ": not 'key = value' or '[section]'");
        const auto long_line =
            replace_line(text, "pu_wqe_ns", "pu_wqe_ns = 50 ; " + std::string(200, 'x'), line);
        CHECK(parse_error(long_line).starts_with("cx9.ini:" + std::to_string(line) +
                                                 ": line longer than"));
    }
    SECTION("a file that does not exist") {
        Profile p;
        std::string error;
        CHECK_FALSE(load_profile_file("/nonexistent/cx9.ini", p, error));
        CHECK(error.starts_with("/nonexistent/cx9.ini: cannot open"));
    }
}

TEST_CASE("a profile file sets what it names and timing keys left out keep the model's defaults",
          "[device][profile]") {
    int line = 0;
    std::string text = roce_default_text();
    text = replace_line(text, "link_mbps", "link_mbps = 0x61a8 ; 25000, hexadecimal", line);
    text = replace_line(text, "dma_write_ns", "; dma_write_ns left out", line);
    text = replace_line(text, "fast_register_keys", "fast_register_keys = rotate", line);
    text = replace_line(text, "technology", "technology = iwarp", line);
    text = replace_line(text, "; initial_psn", "initial_psn = 77", line);
    Profile p;
    std::string error;
    REQUIRE(parse_profile(text, "mine.ini", p, error));
    CHECK(p.cost.link_mbps == 25000);
    CHECK(p.cost.dma_write_ns == CostModel{}.dma_write_ns);
    CHECK((p.limits.quirks & hw::kQuirkRotateFastRegisterKeys) != 0);
    CHECK(p.limits.rdma_technology == status::kTechnologyIwarp);
    CHECK((p.limits.adapter_flags & status::kAdapterFlagReadSinkNotRequired) == 0);
    CHECK(p.transport.initial_psn == 77u);
    CHECK(p.source == "mine.ini");
}

TEST_CASE("resolve_profile: a built-in name or a profile file", "[device][profile]") {
    CHECK(is_profile_path("my.ini"));
    CHECK(is_profile_path("dir/profile"));
    CHECK_FALSE(is_profile_path("cx6-200g"));
    Profile p;
    std::string error;
    REQUIRE(resolve_profile("cx6-200g", "", p, error));
    CHECK(p.cost.link_mbps == 200000);
    REQUIRE(resolve_profile("t6-25g.ini", SOFTNDK_PROFILES_DIR, p, error));
    CHECK(p.name == "t6-25g");
    CHECK(p.source == std::string(SOFTNDK_PROFILES_DIR) + "/t6-25g.ini");
    CHECK_FALSE(resolve_profile("cx9", "", p, error));
    CHECK(error.find("unknown profile 'cx9'") != std::string::npos);
    CHECK(error.find("cx7-400g") != std::string::npos);
    CHECK_FALSE(resolve_profile("missing.ini", "/nonexistent", p, error));
    CHECK(error.starts_with("/nonexistent/missing.ini: cannot open"));
}

// The device clock is sharded by thread: whichever threads observed times, and however
// many (more than its shards), now() is the latest of them all, and never goes back.
TEST_CASE("The device clock is the latest time any thread observed", "[device][time]") {
    VirtualClock clock;
    CHECK(clock.now() == 0);
    clock.observe(50);
    clock.observe(40);  // an earlier time changes nothing
    CHECK(clock.now() == 50);
    constexpr int kThreads = 12;  // more threads than shards: two share one
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&clock, t] {
            for (uint64_t i = 1; i <= 1000; ++i)
                clock.observe(i * 100 + static_cast<uint64_t>(t));
        });
    }
    for (auto &t : threads)
        t.join();
    CHECK(clock.now() == 1000 * 100 + kThreads - 1);
    clock.observe(7);
    CHECK(clock.now() == 1000 * 100 + kThreads - 1);
}

TEST_CASE("In paced mode the device clock is never behind the monotonic clock", "[device][time]") {
    VirtualClock clock(/*paced=*/true);
    const uint64_t before = monotonic_ns();
    CHECK(clock.now() >= before);
    clock.observe(before + 3600ull * 1000000000);  // a time the model reached ahead
    CHECK(clock.now() == before + 3600ull * 1000000000);
}
