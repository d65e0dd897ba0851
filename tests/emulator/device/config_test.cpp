// SOFTNDK_CONFIG files (emulator/device/config.hpp): inline comments, profile files,
// and errors that name the file, the line and the key.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "device/config.hpp"
#include "device/status.hpp"

using namespace softndk;
using namespace softndk::emu;
namespace fs = std::filesystem;

namespace {

// A scratch directory of this process's own (CTest runs test cases in parallel
// processes), emptied first and removed at exit.
fs::path scratch() {
    static const fs::path dir =
        fs::temp_directory_path() / ("softndk_emu_config_test." + std::to_string(getpid()));
    static const struct Cleanup {
        ~Cleanup() {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } cleanup;
    fs::remove_all(dir);
    fs::create_directories(dir / "profiles");
    return dir;
}

void write(const fs::path &path, const std::string &text) {
    std::ofstream(path) << text;
}

std::string load_error(const fs::path &path) {
    std::vector<AdapterConfig> out;
    std::string error;
    CHECK_FALSE(load_adapter_config(path.string(), out, error));
    CHECK(out.empty());
    return error;
}

}  // namespace

TEST_CASE("SOFTNDK_CONFIG takes inline comments after a value", "[device][config]") {
    const fs::path dir = scratch();
    const fs::path path = dir / "softndk.ini";
    write(path,
          "; the README's example\n"
          "[adapter rnic0]\n"
          "if_index = 1 ; comment\n"
          "ipv4 = 127.0.0.1   ; comma-separated list\n"
          "ipv6 = ::1\n"
          "profile = iwarp-default   ; roce-default | iwarp-default\n"
          "path_mtu = 1024           ; optional RC overrides\n"
          "                          ; a comment on its own, indented\n"
          "fast_register_keys = rotate ; quirk\n");
    std::vector<AdapterConfig> out;
    std::string error;
    REQUIRE(load_adapter_config(path.string(), out, error));
    REQUIRE(out.size() == 1);
    CHECK(out[0].if_index == 1);
    CHECK(out[0].addresses.size() == 2);
    CHECK(out[0].profile.name == "iwarp-default");
    CHECK(out[0].profile.source == "built-in");
    CHECK(out[0].profile.limits.path_mtu == 1024);
    CHECK((out[0].profile.limits.quirks & hw::kQuirkRotateFastRegisterKeys) != 0);
}

TEST_CASE("profile = a path to a profile file", "[device][config]") {
    const fs::path dir = scratch();
    // A user's copy of a shipped profile, edited.
    std::ifstream in(fs::path(SOFTNDK_PROFILES_DIR) / "cx6-200g.ini");
    std::string text{std::istreambuf_iterator<char>(in), {}};
    text.replace(text.find("name = cx6-200g"), 15, "name = my-nic  ");
    text.replace(text.find("dma_read_ns = 450"), 17, "dma_read_ns = 999");
    write(dir / "profiles" / "my.ini", text);
    const fs::path path = dir / "softndk.ini";
    write(path,
          "[adapter a]\nif_index = 1\nipv4 = 10.9.0.1\nprofile = profiles/my.ini\n"
          "rnr_retry = 3\n"
          "[adapter b]\nif_index = 2\nipv4 = 10.9.0.2\nprofile = " +
              (dir / "profiles" / "my.ini").string() +
              "\n"
              "[adapter c]\nif_index = 3\nipv4 = 10.9.0.3\nprofile = cx7-400g\n");
    std::vector<AdapterConfig> out;
    std::string error;
    REQUIRE(load_adapter_config(path.string(), out, error));
    REQUIRE(out.size() == 3);
    // Relative to the configuration file's directory.
    CHECK(out[0].profile.name == "my-nic");
    CHECK(out[0].profile.source == (dir / "profiles/my.ini").string());
    CHECK(out[0].profile.cost.dma_read_ns == 999);
    CHECK(out[0].profile.cost.link_mbps == 200000);
    CHECK(out[0].profile.transport.rnr_retry == 3);  // the adapter's override
    CHECK(out[1].profile.name == "my-nic");
    CHECK(out[2].profile.name == "cx7-400g");
    CHECK(out[2].profile.cost.link_mbps == 400000);
}

TEST_CASE("SOFTNDK_CONFIG errors name the file, the line and the key", "[device][config]") {
    const fs::path dir = scratch();
    const fs::path path = dir / "softndk.ini";
    const std::string file = path.string();
    SECTION("not a number") {
        write(path, "[adapter rnic0]\nipv4 = 127.0.0.1\nif_index = one\n");
        CHECK(load_error(path) == file + ":3: [adapter rnic0] if_index: 'one' is not a number");
    }
    SECTION("unknown key") {
        write(path, "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\nretry_cuont = 3\n");
        CHECK(load_error(path) == file + ":4: [adapter rnic0] unknown key 'retry_cuont'");
    }
    SECTION("unknown section") {
        write(path, "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\n\n[other]\nx = 1\n");
        CHECK(load_error(path).starts_with(file + ":5: unknown section [other]"));
    }
    SECTION("out of range") {
        write(path, "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\nrnr_retry = 8\n");
        CHECK(load_error(path) == file + ":4: [adapter rnic0] rnr_retry: 8 is out of range 0..7");
        write(path, "[adapter rnic0]\nif_index = 0\nipv4 = 127.0.0.1\n");
        CHECK(load_error(path) ==
              file + ":2: [adapter rnic0] if_index: 0 is out of range 1..4294967295");
        write(path, "[adapter rnic0]\nif_index = 1\nipv4 = 127.0.0.1\npath_mtu = 1500\n");
        CHECK(load_error(path).starts_with(file + ":4: [adapter rnic0] path_mtu: 1500 is not"));
    }
    SECTION("bad address, unknown profile, bad quirk") {
        write(path, "[adapter a]\nif_index = 1\nipv4 = 10.0.0.1, not-an-ip\n");
        CHECK(load_error(path) ==
              file + ":3: [adapter a] ipv4: 'not-an-ip' is not an IPv4 address");
        write(path, "[adapter a]\nif_index = 1\nipv4 = 10.0.0.1\nprofile = nope\n");
        CHECK(
            load_error(path).starts_with(file + ":4: [adapter a] profile: unknown profile 'nope'"));
        write(path, "[adapter a]\nif_index = 1\nipv4 = 10.0.0.1\nfast_register_keys = x\n");
        CHECK(load_error(path) ==
              file + ":4: [adapter a] fast_register_keys: 'x' is not stable | rotate");
    }
    SECTION("a bad profile file: its own file and line") {
        write(dir / "profiles" / "bad.ini", "[profile]\nname = bad\n[timing]\nlink_mbps = fast\n");
        write(path, "[adapter a]\nif_index = 1\nipv4 = 10.0.0.1\nprofile = profiles/bad.ini\n");
        const std::string error = load_error(path);
        CHECK(error.starts_with(file + ":4: [adapter a] profile: "));
        CHECK(error.find((dir / "profiles/bad.ini").string() +
                         ":4: [timing] link_mbps: 'fast' is not a number") != std::string::npos);
    }
    SECTION("if_index twice, no address, no adapter, no file") {
        write(path,
              "[adapter a]\nif_index = 1\nipv4 = 10.0.0.1\n[adapter b]\nif_index = 1\n"
              "ipv4 = 10.0.0.2\n");
        CHECK(load_error(path) == file + ":5: [adapter b] if_index: 1 is taken by [adapter a]");
        write(path, "[adapter a]\nif_index = 1\n");
        CHECK(load_error(path) == file + ":1: [adapter a] no address (ipv4 or ipv6)");
        write(path, "; nothing\n");
        CHECK(load_error(path) == file + ": no [adapter NAME] section");
        CHECK(load_error(dir / "missing.ini")
                  .starts_with((dir / "missing.ini").string() + ": cannot open"));
    }
    SECTION("repeated key or section") {
        write(path, "[adapter a]\nif_index = 1\nipv4 = 10.0.0.1\nif_index = 2\n");
        CHECK(load_error(path) == file + ":4: [adapter a] if_index: repeated key");
        write(path, "[adapter a]\nif_index = 1\nipv4 = 10.0.0.1\n[adapter a]\nalias = x\n");
        CHECK(load_error(path) == file + ":4: [adapter a] repeated");
    }
}
