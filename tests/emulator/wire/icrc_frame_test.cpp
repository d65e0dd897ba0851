// ICRC test vectors and whole-frame serialisation/parsing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "conversation.hpp"
#include "wire/frame.hpp"
#include "wire/icrc.hpp"

using namespace softndk::wire;

namespace {

std::vector<std::uint8_t> from_hex(std::string_view hex) {
    std::vector<std::uint8_t> v;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        v.push_back(
            static_cast<std::uint8_t>(std::stoul(std::string(hex.substr(i, 2)), nullptr, 16)));
    }
    return v;
}

// RoCEv2 CNP captured on a ConnectX-4 Lx (secdev/scapy test/contrib/roce.uts), copied from
// wire_oracle.py CX4LX_CNP_HEX. The last four bytes are the hardware's ICRC.
constexpr std::string_view kCx4LxCnp =
    "e41d2dab2bc27cfe90643b32080045c2003c718c400040119161"
    "0a0011010a0012010000"
    "12b700280000"
    "8100ffff40000118"
    "000000000000000000000000000000000000000082fd002a";

// wire_oracle.py rc_conversation() frame 1 (SEND_ONLY "hello rnic", SE, AckReq, PSN 100),
// as the oracle serialises it (python3 zlib).
constexpr std::string_view kOracleSendOnly =
    "02000000000b02000000000a080045000038000040004011b6b1c0000201c0000202c01112b7002400"
    "0004a0ffff000000128000006468656c6c6f20726e69630000cedce59f";

// IPv6 vector computed with wire_oracle.rocev2_icrc(): traffic class 0xB9, flow label
// 0x12345, hop limit 7, UDP checksum 0x1234, FECN+BECN set, SEND_ONLY PSN 0xFFFFFF with a
// 14-byte payload (pad 2). Every variant field is non-trivial, so a missed mask shows.
constexpr std::string_view kV6Ip =
    "6b9123450028110720010db800000000000000000000000120010db8000000000000000000000002";
constexpr std::string_view kV6Udp = "c01112b700281234";
constexpr std::string_view kV6Ib = "04a0ffffc000001280ffffff68656c6c6f20763620726e6963210000";
constexpr std::uint32_t kV6Icrc = 0x1683ca68;  // on the wire: 68 ca 83 16

}  // namespace

TEST_CASE("ICRC reproduces the ConnectX-4 Lx CNP capture", "[icrc][vector]") {
    const auto f = from_hex(kCx4LxCnp);
    REQUIRE(f.size() == 74);
    const std::span<const std::uint8_t> frame(f);
    const auto ip = frame.subspan(14, 20);
    const auto udp = frame.subspan(34, 8);
    const auto ib = frame.subspan(42, f.size() - 42 - 4);
    const auto icrc = compute_icrc(ip, udp, ib);
    REQUIRE(icrc);
    CHECK(*icrc == 0x2A00FD82);  // 82 fd 00 2a little-endian
    CHECK(*icrc == load_icrc(f.data() + f.size() - 4));

    // The frame passes the ICRC check in parse_frame; then opcode 0x81 (CNP) is refused,
    // because the RC engine does not model congestion notification.
    PacketDescriptor out;
    CHECK(parse_frame(frame, out) == WireStatus::kUnknownOpcode);
}

TEST_CASE("ICRC and frame bytes match the wire oracle's SEND_ONLY", "[icrc][vector][frame]") {
    const auto want = from_hex(kOracleSendOnly);
    const auto ours = test::oracle_rc_conversation().front().bytes;
    REQUIRE(ours.size() == want.size());
    // Identical from the IP header on; the MACs are derived from the IPs by design.
    CHECK(std::equal(ours.begin() + 14, ours.end(), want.begin() + 14));
    CHECK(ours[0] == 0x02);
    CHECK(ours[2] == 192);
    CHECK(ours[5] == 2);  // dst 192.0.2.2 -> 02:00:c0:00:02:02
    CHECK(ours[11] == 1);
}

TEST_CASE("ICRC over IPv6 masks traffic class, flow label and hop limit", "[icrc][vector]") {
    const auto ip = from_hex(kV6Ip);
    const auto udp = from_hex(kV6Udp);
    const auto ib = from_hex(kV6Ib);
    CHECK(compute_icrc(ip, udp, ib) == kV6Icrc);
    // Pieces form: headers + borrowed payload + pad gives the same value.
    const std::span<const std::uint8_t> ibs(ib);
    CHECK(compute_icrc(ip, udp, ibs.first(12), ibs.subspan(12, 14), 2) == kV6Icrc);

    // Variant fields do not matter ...
    auto ip2 = ip;
    ip2[0] = 0x60;
    ip2[1] = 0x00;
    ip2[2] = ip2[3] = 0;
    ip2[7] = 255;
    auto udp2 = udp;
    udp2[6] = udp2[7] = 0;
    auto ib2 = ib;
    ib2[4] = 0x00;  // FECN/BECN cleared
    CHECK(compute_icrc(ip2, udp2, ib2) == kV6Icrc);
    // ... everything else does.
    auto ip3 = ip;
    ip3[39] ^= 1;  // destination address
    CHECK(compute_icrc(ip3, udp, ib) != kV6Icrc);
    auto udp3 = udp;
    udp3[1] ^= 1;  // source port (flow entropy) is covered
    CHECK(compute_icrc(ip, udp3, ib) != kV6Icrc);
    auto ib3 = ib;
    ib3[5] ^= 1;  // DestQP
    CHECK(compute_icrc(ip, udp, ib3) != kV6Icrc);
}

TEST_CASE("compute_icrc refuses impossible header sizes", "[icrc][edge]") {
    const auto f = from_hex(kCx4LxCnp);
    const std::span<const std::uint8_t> frame(f);
    const auto ip = frame.subspan(14, 20);
    const auto udp = frame.subspan(34, 8);
    const auto ib = frame.subspan(42, 28);
    CHECK_FALSE(compute_icrc({}, udp, ib));
    CHECK_FALSE(compute_icrc(ip.first(19), udp, ib));  // IHL 5 but 19 bytes
    CHECK_FALSE(compute_icrc(ip, udp.first(7), ib));
    CHECK_FALSE(compute_icrc(ip, udp, ib.first(11)));
    CHECK_FALSE(compute_icrc(ip, udp, ib.first(12), {}, 4));  // pad > 3
    std::vector<std::uint8_t> bad_version(ip.begin(), ip.end());
    bad_version[0] = 0x55;
    CHECK_FALSE(compute_icrc(bad_version, udp, ib));
    bad_version[0] = 0x44;  // IPv4 with IHL 4 (16 bytes): impossible
    CHECK_FALSE(compute_icrc(std::span(bad_version).first(16), udp, ib));
}

TEST_CASE("frames round-trip through serialize_frame/parse_frame", "[frame][roundtrip]") {
    for (bool v6 : {false, true}) {
        const auto frames = test::every_opcode_conversation(v6);
        CHECK(frames.size() == 23);
        for (const auto &f : frames) {
            PacketDescriptor out;
            REQUIRE(parse_frame(f.bytes, out) == WireStatus::kOk);
            CHECK(out.bth.opcode == f.opcode);
            CHECK(out.bth.psn == f.psn);
            CHECK(out.bth.dest_qp == f.dest_qp);
            CHECK(out.meta.src_ip.is_v4() == !v6);
            CHECK((out.meta.udp_src_port == 0xC011 || out.meta.udp_src_port == 0xC012));
            CHECK(out.meta.hop_limit == 64);
            // Serialising what we parsed reproduces the frame exactly.
            CHECK(serialize_frame(out) == f.bytes);
        }
    }
}

TEST_CASE("frame layout: IPv4 and IPv6 headers", "[frame]") {
    std::vector<std::uint8_t> payload(10, 0xAB);
    PacketDescriptor p;
    p.bth.opcode = Opcode::kSendOnly;
    p.payload = payload;
    p.meta.src_ip = IpAddr::v4(10, 0, 0, 1);
    p.meta.dst_ip = IpAddr::v4(10, 0, 0, 2);
    p.meta.traffic_class = 0x02;  // ECT(0)
    p.meta.hop_limit = 9;
    p.meta.udp_src_port = 0xC123;
    const auto v4 = serialize_frame(p);
    REQUIRE(v4.size() == 14 + 20 + 8 + 12 + 12 + 4);
    CHECK(v4.size() == frame_size(p));
    CHECK(v4[12] == 0x08);
    CHECK(v4[13] == 0x00);
    CHECK(v4[14] == 0x45);
    CHECK(v4[15] == 0x02);
    CHECK(v4[20] == 0x40);  // DF
    CHECK(v4[22] == 9);
    CHECK(v4[23] == 17);
    CHECK(v4[34] == 0xC1);  // UDP source port
    CHECK(v4[35] == 0x23);
    CHECK(v4[36] == 0x12);  // 4791 = 0x12B7
    CHECK(v4[37] == 0xB7);
    CHECK(v4[38] == 0);  // UDP length 8 + 12 + 12 + 4 = 36
    CHECK(v4[39] == 36);
    CHECK(v4[40] == 0);  // UDP checksum 0 over IPv4, as rxe and ConnectX send
    CHECK(v4[41] == 0);
    // IPv4 header checksum verifies (one's-complement sum of the header is 0xFFFF).
    std::uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += (std::uint32_t{v4[14 + i]} << 8) | v4[15 + i];
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    CHECK(sum == 0xFFFF);

    p.meta.src_ip = IpAddr::v6({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd});
    p.meta.dst_ip = IpAddr::v6({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44});
    p.meta.traffic_class = 0xB8;
    const auto v6 = serialize_frame(p);
    REQUIRE(v6.size() == 14 + 40 + 8 + 12 + 12 + 4);
    CHECK(v6[12] == 0x86);
    CHECK(v6[13] == 0xDD);
    CHECK(v6[14] == 0x6B);  // version 6, traffic class high nibble
    CHECK(v6[15] == 0x80);  // traffic class low nibble, flow label 0
    CHECK(v6[20] == 17);
    CHECK(v6[21] == 9);
    CHECK(v6[0] == 0x02);
    CHECK(v6[2] == 0x11);  // MAC from the low four address bytes
    CHECK(v6[5] == 0x44);
    // IPv6 UDP checksum is real: pseudo-header + UDP segment sums to 0xFFFF.
    std::uint32_t s6 = 0;
    for (int i = 0; i < 32; i += 2)
        s6 += (std::uint32_t{v6[22 + i]} << 8) | v6[23 + i];
    const std::size_t udp_len = v6.size() - 54;
    s6 += static_cast<std::uint32_t>(udp_len) + 17;
    for (std::size_t i = 0; i < udp_len; i += 2) {
        s6 += (std::uint32_t{v6[54 + i]} << 8) | (i + 1 < udp_len ? v6[55 + i] : 0);
    }
    while (s6 >> 16)
        s6 = (s6 & 0xFFFF) + (s6 >> 16);
    CHECK(s6 == 0xFFFF);
    PacketDescriptor back;
    REQUIRE(parse_frame(v6, back) == WireStatus::kOk);
    CHECK(back.meta.traffic_class == 0xB8);
    CHECK(back.meta.src_ip == p.meta.src_ip);
}

TEST_CASE("serialize_frame refuses what it cannot write", "[frame][edge]") {
    PacketDescriptor p;
    p.bth.opcode = Opcode::kSendOnly;
    p.meta.src_ip = IpAddr::v4(10, 0, 0, 1);
    p.meta.dst_ip = IpAddr::v6({0x20, 0x01, 0x0d, 0xb8});
    CHECK(frame_size(p) == 0);
    std::uint8_t buf[256];
    CHECK(serialize_frame(p, buf).status == WireStatus::kAddressFamilyMismatch);
    CHECK(serialize_frame(p).empty());

    p.meta.dst_ip = IpAddr::v4(10, 0, 0, 2);
    const std::size_t need = frame_size(p);
    REQUIRE(need == 14 + 20 + 8 + 12 + 4);
    CHECK(serialize_frame(p, std::span(buf).first(need - 1)).status == WireStatus::kBufferTooSmall);
    const FrameResult r = serialize_frame(p, std::span(buf).first(need));
    CHECK(r.status == WireStatus::kOk);
    CHECK(r.size == need);

    std::vector<std::uint8_t> huge(70000);
    p.payload = huge;
    CHECK(frame_size(p) == 0);
    CHECK(serialize_frame(p, buf).status == WireStatus::kPayloadTooLarge);

    p.payload = {};
    p.bth.opcode = static_cast<Opcode>(0x1E);
    CHECK(serialize_frame(p, buf).status == WireStatus::kUnknownOpcode);
}

TEST_CASE("parse_frame: rewritten variant fields keep the ICRC valid", "[frame][icrc]") {
    auto f = test::oracle_rc_conversation().front().bytes;
    f[15] = 0x03;   // ECN CE marked by a switch
    f[22] = 1;      // TTL decremented
    f[24] ^= 0xFF;  // IP checksum (stale now, but not covered)
    f[40] = 0xAB;   // UDP checksum
    f[46] |= 0xC0;  // FECN/BECN set
    PacketDescriptor out;
    CHECK(parse_frame(f, out) == WireStatus::kOk);
    CHECK(out.meta.traffic_class == 0x03);
    CHECK(out.bth.fecn);
}

TEST_CASE("parse_frame rejects damaged frames", "[frame][edge]") {
    const auto good = test::oracle_rc_conversation().front().bytes;  // IPv4 SEND_ONLY, 70 bytes
    PacketDescriptor out;
    auto expect = [&](std::vector<std::uint8_t> f, WireStatus want) {
        CHECK(parse_frame(f, out) == want);
    };
    auto with = [&](std::size_t off, std::uint8_t v) {
        auto f = good;
        f[off] = v;
        return f;
    };
    expect(good, WireStatus::kOk);
    expect(with(55, 'H'), WireStatus::kBadIcrc);        // payload byte
    expect(with(35, 0x99), WireStatus::kBadIcrc);       // UDP source port
    expect(with(69, 0x00), WireStatus::kBadIcrc);       // ICRC itself
    expect(with(12, 0x88), WireStatus::kNotRoce);       // ethertype
    expect(with(23, 6), WireStatus::kNotRoce);          // TCP
    expect(with(37, 0xB8), WireStatus::kNotRoce);       // UDP dst 4792
    expect(with(20, 0x20), WireStatus::kNotRoce);       // more fragments
    expect(with(14, 0x65), WireStatus::kBadIpHeader);   // version 6 in an IPv4 ethertype
    expect(with(14, 0x44), WireStatus::kBadIpHeader);   // IHL 4
    expect(with(16, 0x01), WireStatus::kBadIpHeader);   // total length past the frame
    expect(with(39, 0x0F), WireStatus::kBadUdpLength);  // UDP length below BTH + ICRC
    expect(with(39, 0xFF), WireStatus::kBadUdpLength);  // UDP length past the IP datagram
    for (std::size_t n = 0; n < good.size(); ++n) {
        std::vector<std::uint8_t> cut(good.begin(), good.begin() + static_cast<long>(n));
        CHECK(parse_frame(cut, out) != WireStatus::kOk);
    }
    // Ethernet padding after the datagram is ignored.
    auto padded = good;
    padded.resize(good.size() + 6, 0);
    expect(padded, WireStatus::kOk);
}

TEST_CASE("parse_frame accepts one 802.1Q tag", "[frame]") {
    const auto good = test::oracle_rc_conversation().front().bytes;
    std::vector<std::uint8_t> tagged(good.begin(), good.begin() + 12);
    tagged.insert(tagged.end(), {0x81, 0x00, 0x00, 0x05});
    tagged.insert(tagged.end(), good.begin() + 12, good.end());
    PacketDescriptor out;
    CHECK(parse_frame(tagged, out) == WireStatus::kOk);
    CHECK(out.bth.psn == 100);
}

TEST_CASE("parse_frame survives random and mutated frames", "[frame][fuzz]") {
    std::mt19937 rng(0xF4A3E);  // fixed seed: failures reproduce
    const auto frames = test::every_opcode_conversation(true);
    const auto v4 = test::oracle_rc_conversation();
    int ok = 0;
    for (int iter = 0; iter < 20000; ++iter) {
        const auto &base = (iter & 1)
                               ? frames[static_cast<std::size_t>(iter / 2) % frames.size()].bytes
                               : v4[static_cast<std::size_t>(iter / 2) % v4.size()].bytes;
        std::vector<std::uint8_t> f = base;
        // Mutate a few bytes and maybe truncate: exercises every check past the outer ones.
        const int flips = iter % 4;
        for (int k = 0; k < flips; ++k) {
            f[static_cast<std::size_t>(rng()) % f.size()] = static_cast<std::uint8_t>(rng());
        }
        if (iter % 3 == 0) f.resize(static_cast<std::size_t>(rng()) % (f.size() + 1));
        PacketDescriptor out;
        if (parse_frame(f, out) == WireStatus::kOk) {
            ++ok;
            REQUIRE(out.payload.data() + out.payload.size() <= f.data() + f.size());
        }
    }
    CHECK(ok > 0);
}

TEST_CASE("frame_ib_packet frames IB bytes exactly as serialize_frame frames a packet",
          "[wire][frame]") {
    PacketDescriptor d{};
    d.bth.opcode = Opcode::kSendOnly;
    d.bth.dest_qp = 0x12;
    d.bth.psn = 77;
    d.meta.src_ip = IpAddr::v4(192, 0, 2, 1);
    d.meta.dst_ip = IpAddr::v4(192, 0, 2, 2);
    const std::uint8_t payload[5] = {1, 2, 3, 4, 5};
    d.payload = payload;
    const std::vector<std::uint8_t> frame = serialize_frame(d);
    REQUIRE(!frame.empty());
    const std::size_t ib_offset = kEthernetHeaderSize + kIpv4HeaderSize + kUdpHeaderSize;
    const std::span<const std::uint8_t> ib(frame.data() + ib_offset,
                                           frame.size() - ib_offset - kIcrcSize);
    CHECK(frame_ib_packet(d.meta, ib) == frame);

    // Shorter than a BTH, or mixed address families: nothing.
    CHECK(frame_ib_packet(d.meta, ib.first(kBthSize - 1)).empty());
    PacketMeta mixed = d.meta;
    mixed.dst_ip = IpAddr{};
    mixed.dst_ip.bytes[15] = 1;  // ::1
    CHECK(frame_ib_packet(mixed, ib).empty());
}

TEST_CASE("the UDP destination port is written and covered by the ICRC", "[wire][frame]") {
    PacketDescriptor d{};
    d.bth.opcode = Opcode::kAcknowledge;
    d.meta.src_ip = IpAddr::v4(192, 0, 2, 1);
    d.meta.dst_ip = IpAddr::v4(192, 0, 2, 2);
    const std::vector<std::uint8_t> standard = serialize_frame(d);
    d.meta.udp_dst_port = 24791;  // the UDP link on a test port
    const std::vector<std::uint8_t> test_port = serialize_frame(d);
    REQUIRE(standard.size() == test_port.size());
    const std::size_t udp = kEthernetHeaderSize + kIpv4HeaderSize;
    CHECK(standard[udp + 2] == 4791 >> 8);
    CHECK(test_port[udp + 2] == 24791 >> 8);
    CHECK(test_port[udp + 3] == (24791 & 0xFF));
    // A different port, a different ICRC; and only 4791 is RoCEv2 to parse_frame.
    CHECK(!std::equal(standard.end() - kIcrcSize, standard.end(), test_port.end() - kIcrcSize));
    PacketDescriptor parsed{};
    CHECK(parse_frame(standard, parsed) == WireStatus::kOk);
    CHECK(parsed.meta.udp_dst_port == kRoceV2UdpPort);
    CHECK(parse_frame(test_port, parsed) == WireStatus::kNotRoce);
}

TEST_CASE("serialize_ib_parts gives serialize_frame's datagram around a payload it does not copy",
          "[wire][frame]") {
    for (bool v6 : {false, true}) {
        for (const auto &f : test::every_opcode_conversation(v6)) {
            PacketDescriptor d;
            REQUIRE(parse_frame(f.bytes, d) == WireStatus::kOk);
            HeaderBuffer headers;
            IbTrailer trailer;
            REQUIRE(serialize_ib_parts(d, headers, trailer) == WireStatus::kOk);
            std::vector<std::uint8_t> datagram(headers.view().begin(), headers.view().end());
            datagram.insert(datagram.end(), d.payload.begin(), d.payload.end());
            datagram.insert(datagram.end(), trailer.bytes.begin(),
                            trailer.bytes.begin() + trailer.size);
            const std::size_t udp_payload =
                kEthernetHeaderSize + (v6 ? kIpv6HeaderSize : kIpv4HeaderSize) + kUdpHeaderSize;
            CHECK(datagram ==
                  std::vector<std::uint8_t>(f.bytes.begin() + udp_payload, f.bytes.end()));
        }
    }
    PacketDescriptor mixed{};
    mixed.meta.src_ip = IpAddr::v4(192, 0, 2, 1);
    mixed.meta.dst_ip.bytes[15] = 1;  // ::1
    HeaderBuffer headers;
    IbTrailer trailer;
    CHECK(serialize_ib_parts(mixed, headers, trailer) == WireStatus::kAddressFamilyMismatch);
}

TEST_CASE("the IPv4 identification is written, covered by the ICRC and parsed", "[wire][frame]") {
    PacketDescriptor d{};
    d.bth.opcode = Opcode::kRdmaWriteMiddle;
    const std::vector<std::uint8_t> payload(256, 0x5a);
    d.payload = payload;
    d.meta.src_ip = IpAddr::v4(127, 0, 0, 1);
    d.meta.dst_ip = IpAddr::v4(127, 0, 0, 2);
    const std::vector<std::uint8_t> first = serialize_frame(d);
    d.meta.ipv4_identification = 7;  // segment 7 of a UDP GSO batch
    const std::vector<std::uint8_t> seventh = serialize_frame(d);
    REQUIRE(first.size() == seventh.size());
    CHECK(first[kEthernetHeaderSize + 4] == 0);
    CHECK(first[kEthernetHeaderSize + 5] == 0);
    CHECK(seventh[kEthernetHeaderSize + 4] == 0);
    CHECK(seventh[kEthernetHeaderSize + 5] == 7);
    CHECK(!std::equal(first.end() - kIcrcSize, first.end(), seventh.end() - kIcrcSize));
    PacketDescriptor parsed{};
    REQUIRE(parse_frame(seventh, parsed) == WireStatus::kOk);  // its ICRC verifies
    CHECK(parsed.meta.ipv4_identification == 7);
    // The ICRC a receiver computes for the IB part depends on the identification it assumes.
    const std::size_t ib = kEthernetHeaderSize + kIpv4HeaderSize + kUdpHeaderSize;
    const std::span<const std::uint8_t> ib_packet(seventh.data() + ib,
                                                  seventh.size() - ib - kIcrcSize);
    CHECK(ib_packet_icrc(parsed.meta, ib_packet) ==
          load_icrc(seventh.data() + seventh.size() - kIcrcSize));
    parsed.meta.ipv4_identification = 0;
    CHECK(ib_packet_icrc(parsed.meta, ib_packet) !=
          load_icrc(seventh.data() + seventh.size() - kIcrcSize));
}
