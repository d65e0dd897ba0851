// pcap file and record headers, byte for byte.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "wire/pcap_writer.hpp"

using namespace softndk::wire;

namespace {
std::uint32_t le32(const std::string &s, std::size_t off) {
    auto b = [&](std::size_t i) { return std::uint32_t{static_cast<std::uint8_t>(s[off + i])}; };
    return b(0) | (b(1) << 8) | (b(2) << 16) | (b(3) << 24);
}
}  // namespace

TEST_CASE("pcap global header", "[pcap]") {
    std::ostringstream ns, us;
    PcapWriter wn(ns, PcapTimestamp::kNanoseconds);
    PcapWriter wu(us, PcapTimestamp::kMicroseconds, 1500);
    const std::string n = ns.str(), u = us.str();
    REQUIRE(n.size() == 24);
    CHECK(le32(n, 0) == 0xA1B23C4D);
    CHECK(le32(u, 0) == 0xA1B2C3D4);
    CHECK(le32(n, 4) == (2u | (4u << 16)));  // version 2.4
    CHECK(le32(n, 8) == 0);
    CHECK(le32(n, 12) == 0);
    CHECK(le32(n, 16) == 65535);
    CHECK(le32(u, 16) == 1500);
    CHECK(le32(n, 20) == 1);  // LINKTYPE_ETHERNET
}

TEST_CASE("pcap records carry the virtual time at the chosen resolution", "[pcap]") {
    const std::vector<std::uint8_t> frame = {1, 2, 3, 4, 5};
    const std::uint64_t t = 12'345'678'901'234ull;  // 12345 s + 678901234 ns

    std::ostringstream ns;
    PcapWriter wn(ns, PcapTimestamp::kNanoseconds);
    CHECK(wn.write(t, frame));
    std::string s = ns.str();
    REQUIRE(s.size() == 24 + 16 + 5);
    CHECK(le32(s, 24) == 12345);
    CHECK(le32(s, 28) == 678901234);
    CHECK(le32(s, 32) == 5);
    CHECK(le32(s, 36) == 5);
    CHECK(s.substr(40) == std::string("\x01\x02\x03\x04\x05", 5));

    std::ostringstream us;
    PcapWriter wu(us, PcapTimestamp::kMicroseconds);
    CHECK(wu.write(t, frame));
    s = us.str();
    CHECK(le32(s, 24) == 12345);
    CHECK(le32(s, 28) == 678901);  // truncated to microseconds
}

TEST_CASE("pcap truncates to the snap length and keeps the original length", "[pcap][edge]") {
    std::ostringstream os;
    PcapWriter w(os, PcapTimestamp::kMicroseconds, 4);
    const std::vector<std::uint8_t> frame(10, 0xEE);
    CHECK(w.write(0, frame));
    CHECK(w.write(1, {}));  // an empty frame is a valid record
    const std::string s = os.str();
    REQUIRE(s.size() == 24 + 16 + 4 + 16);
    CHECK(le32(s, 32) == 4);
    CHECK(le32(s, 36) == 10);
    CHECK(le32(s, 44 + 8) == 0);
}

TEST_CASE("pcap writer reports a failed stream instead of throwing", "[pcap][edge]") {
    std::ostringstream os;
    PcapWriter w(os);
    os.setstate(std::ios::badbit);
    const std::vector<std::uint8_t> frame(3, 1);
    CHECK_FALSE(w.write(0, frame));
    CHECK_FALSE(w.ok());
}
