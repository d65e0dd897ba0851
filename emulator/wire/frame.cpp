// frame.cpp - Ethernet/IP/UDP framing around an IB transport packet.
#include "wire/frame.hpp"

#include <cstring>

#include "wire/icrc.hpp"

namespace softndk::wire {
namespace {

using detail::load_be16;
using detail::store_be16;
using detail::store_be32;

// RFC 1071 one's-complement sum, not yet complemented; `sum` carries between calls.
std::uint32_t ones_sum(std::uint32_t sum, const std::uint8_t *p, std::size_t n) noexcept {
    for (; n >= 2; p += 2, n -= 2)
        sum += load_be16(p);
    if (n) sum += std::uint32_t{p[0]} << 8;
    return sum;
}
std::uint16_t fold(std::uint32_t sum) noexcept {
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}

// IPv4 total length (and so UDP length) is 16 bits: keep payload + all headers below it.
constexpr std::size_t kMaxFramePayload =
    0xFFFF - kIpv4HeaderSize - kUdpHeaderSize - kMaxIbHeaderSize - 3 - kIcrcSize;

std::size_t l3_header_size(const PacketMeta &m) noexcept {
    return m.src_ip.is_v4() ? kIpv4HeaderSize : kIpv6HeaderSize;
}

}  // namespace

std::size_t frame_size(const PacketDescriptor &pkt) noexcept {
    const OpcodeInfo &info = pkt.info();
    if (!info.valid || (!info.has_payload && !pkt.payload.empty())) return 0;
    if (pkt.meta.src_ip.is_v4() != pkt.meta.dst_ip.is_v4()) return 0;
    if (pkt.payload.size() > kMaxFramePayload) return 0;
    return kEthernetHeaderSize + l3_header_size(pkt.meta) + kUdpHeaderSize + info.header_len +
           pkt.payload.size() + pkt.pad_bytes() + kIcrcSize;
}

namespace {

// Writes Ethernet, IP and UDP headers for `meta` and an IB part of `ib_size` bytes (ICRC
// included) at the start of `out`, which holds the whole frame. Returns the IB part's
// offset. The UDP checksum is left 0.
std::size_t write_outer_headers(const PacketMeta &m, std::size_t ib_size,
                                std::uint8_t *out) noexcept {
    const bool v4 = m.src_ip.is_v4();
    const std::size_t l3_size = l3_header_size(m);
    const std::size_t udp_len = kUdpHeaderSize + ib_size;
    std::uint8_t *eth = out;
    std::uint8_t *l3 = eth + kEthernetHeaderSize;
    std::uint8_t *udp = l3 + l3_size;

    const auto dmac = mac_for_ip(m.dst_ip);
    const auto smac = mac_for_ip(m.src_ip);
    std::memcpy(eth, dmac.data(), 6);
    std::memcpy(eth + 6, smac.data(), 6);
    store_be16(eth + 12, v4 ? kEtherTypeIpv4 : kEtherTypeIpv6);

    if (v4) {
        l3[0] = 0x45;
        l3[1] = m.traffic_class;
        store_be16(l3 + 2, static_cast<std::uint32_t>(kIpv4HeaderSize + udp_len));
        // Identification 0 unless the meta says otherwise: the datagram is atomic (DF,
        // RFC 6864), and the ICRC covers this field, so whoever sends the frame must send
        // exactly this header (fabric/udp_link.hpp: a raw socket, where the kernel keeps
        // it, or a UDP GSO batch, whose segments the kernel numbers 0, 1, 2, ...).
        store_be16(l3 + 4, m.ipv4_identification);
        store_be16(l3 + 6, 0x4000);  // DF
        l3[8] = m.hop_limit;
        l3[9] = 17;  // UDP
        store_be16(l3 + 10, 0);
        std::memcpy(l3 + 12, m.src_ip.bytes.data() + 12, 4);
        std::memcpy(l3 + 16, m.dst_ip.bytes.data() + 12, 4);
        store_be16(l3 + 10, fold(ones_sum(0, l3, kIpv4HeaderSize)));
    } else {
        store_be32(l3, (6u << 28) | (std::uint32_t{m.traffic_class} << 20));  // flow label 0
        store_be16(l3 + 4, static_cast<std::uint32_t>(udp_len));
        l3[6] = 17;  // next header: UDP
        l3[7] = m.hop_limit;
        std::memcpy(l3 + 8, m.src_ip.bytes.data(), 16);
        std::memcpy(l3 + 24, m.dst_ip.bytes.data(), 16);
    }

    store_be16(udp, m.udp_src_port);
    store_be16(udp + 2, m.udp_dst_port);
    store_be16(udp + 4, static_cast<std::uint32_t>(udp_len));
    store_be16(udp + 6, 0);
    return kEthernetHeaderSize + l3_size + kUdpHeaderSize;
}

// The IPv6 UDP checksum (RFC 8200 forbids 0 there); IPv4 keeps 0, as rxe and ConnectX.
// Computed last: the ICRC masks the UDP checksum, so it does not depend on it.
void finish_udp_checksum(const PacketMeta &m, std::uint8_t *frame) noexcept {
    if (m.src_ip.is_v4()) return;
    std::uint8_t *l3 = frame + kEthernetHeaderSize;
    std::uint8_t *udp = l3 + kIpv6HeaderSize;
    const std::size_t udp_len = load_be16(udp + 4);
    // Pseudo-header: src, dst, upper-layer length (32), zero, next header.
    std::uint32_t sum = ones_sum(0, l3 + 8, 32);
    sum += static_cast<std::uint32_t>(udp_len >> 16) + static_cast<std::uint32_t>(udp_len & 0xFFFF);
    sum += 17;
    sum = ones_sum(sum, udp, udp_len);
    const std::uint16_t csum = fold(sum);
    store_be16(udp + 6, csum == 0 ? 0xFFFF : csum);
}

// What serialize_frame and serialize_ib_parts check first, with the IB headers built.
WireStatus build_checked(const PacketDescriptor &pkt, HeaderBuffer &hdr) noexcept {
    if (const WireStatus s = build_headers(pkt, hdr); s != WireStatus::kOk) return s;
    if (pkt.meta.src_ip.is_v4() != pkt.meta.dst_ip.is_v4())
        return WireStatus::kAddressFamilyMismatch;
    if (pkt.payload.size() > kMaxFramePayload) return WireStatus::kPayloadTooLarge;
    return WireStatus::kOk;
}

// The IP and UDP headers `m` gives an IB part of `ib_size` bytes (ICRC included), built
// in a scratch buffer: what an ICRC computed without assembling a frame covers.
struct OuterHeaders {
    std::array<std::uint8_t, kEthernetHeaderSize + kIpv6HeaderSize + kUdpHeaderSize> bytes{};
    std::span<const std::uint8_t> ip, udp;
};
OuterHeaders outer_headers(const PacketMeta &m, std::size_t ib_size) noexcept {
    OuterHeaders o;
    write_outer_headers(m, ib_size, o.bytes.data());
    const std::size_t l3_size = l3_header_size(m);
    o.ip = {o.bytes.data() + kEthernetHeaderSize, l3_size};
    o.udp = {o.bytes.data() + kEthernetHeaderSize + l3_size, kUdpHeaderSize};
    return o;
}

}  // namespace

FrameResult serialize_frame(const PacketDescriptor &pkt, std::span<std::uint8_t> out) noexcept {
    HeaderBuffer hdr;
    if (const WireStatus s = build_checked(pkt, hdr); s != WireStatus::kOk) return {s, 0};
    const PacketMeta &m = pkt.meta;
    const std::size_t total = frame_size(pkt);
    if (out.size() < total) return {WireStatus::kBufferTooSmall, 0};

    const std::size_t l3_size = l3_header_size(m);
    const std::size_t pad = pkt.pad_bytes();
    const std::size_t ib_size = hdr.size + pkt.payload.size() + pad + kIcrcSize;
    const std::size_t ib_offset = write_outer_headers(m, ib_size, out.data());
    std::uint8_t *l3 = out.data() + kEthernetHeaderSize;
    std::uint8_t *udp = l3 + l3_size;

    std::uint8_t *p = out.data() + ib_offset;
    std::memcpy(p, hdr.bytes.data(), hdr.size);
    p += hdr.size;
    if (!pkt.payload.empty()) std::memcpy(p, pkt.payload.data(), pkt.payload.size());
    p += pkt.payload.size();
    std::memset(p, 0, pad);
    p += pad;

    const auto icrc =
        compute_icrc({l3, l3_size}, {udp, kUdpHeaderSize}, hdr.view(), pkt.payload, pad);
    store_icrc(p, icrc.value_or(0));  // sizes are ours: always has a value
    finish_udp_checksum(m, out.data());
    return {WireStatus::kOk, total};
}

WireStatus serialize_ib_parts(const PacketDescriptor &pkt, HeaderBuffer &headers,
                              IbTrailer &trailer) noexcept {
    if (const WireStatus s = build_checked(pkt, headers); s != WireStatus::kOk) return s;
    const std::size_t pad = pkt.pad_bytes();
    // The outer headers only feed the ICRC: the kernel writes its own (the same fields).
    const OuterHeaders outer =
        outer_headers(pkt.meta, headers.size + pkt.payload.size() + pad + kIcrcSize);
    const auto icrc = compute_icrc(outer.ip, outer.udp, headers.view(), pkt.payload, pad);
    trailer.bytes.fill(0);
    store_icrc(trailer.bytes.data() + pad, icrc.value_or(0));
    trailer.size = static_cast<std::uint8_t>(pad + kIcrcSize);
    return WireStatus::kOk;
}

std::vector<std::uint8_t> frame_ib_packet(const PacketMeta &meta,
                                          std::span<const std::uint8_t> ib_packet) {
    if (ib_packet.size() < kBthSize || meta.src_ip.is_v4() != meta.dst_ip.is_v4()) return {};
    if (ib_packet.size() > kMaxFramePayload + kMaxIbHeaderSize) return {};
    const std::size_t l3_size = l3_header_size(meta);
    std::vector<std::uint8_t> frame(kEthernetHeaderSize + l3_size + kUdpHeaderSize +
                                    ib_packet.size() + kIcrcSize);
    const std::size_t ib_offset =
        write_outer_headers(meta, ib_packet.size() + kIcrcSize, frame.data());
    std::memcpy(frame.data() + ib_offset, ib_packet.data(), ib_packet.size());
    const std::uint8_t *l3 = frame.data() + kEthernetHeaderSize;
    const auto icrc = compute_icrc({l3, l3_size}, {l3 + l3_size, kUdpHeaderSize}, ib_packet);
    store_icrc(frame.data() + ib_offset + ib_packet.size(), icrc.value_or(0));
    finish_udp_checksum(meta, frame.data());
    return frame;
}

std::optional<std::uint32_t> ib_packet_icrc(const PacketMeta &meta,
                                            std::span<const std::uint8_t> ib_packet) noexcept {
    if (ib_packet.size() < kBthSize || meta.src_ip.is_v4() != meta.dst_ip.is_v4()) return {};
    if (ib_packet.size() > kMaxFramePayload + kMaxIbHeaderSize) return {};
    const OuterHeaders outer = outer_headers(meta, ib_packet.size() + kIcrcSize);
    return compute_icrc(outer.ip, outer.udp, ib_packet);
}

std::vector<std::uint8_t> serialize_frame(const PacketDescriptor &pkt) {
    std::vector<std::uint8_t> frame(frame_size(pkt));
    if (frame.empty()) return frame;
    if (serialize_frame(pkt, frame).status != WireStatus::kOk) frame.clear();
    return frame;
}

WireStatus parse_frame(std::span<const std::uint8_t> frame, PacketDescriptor &out) noexcept {
    std::size_t off = kEthernetHeaderSize;
    if (frame.size() < off) return WireStatus::kTruncated;
    std::uint32_t ethertype = load_be16(frame.data() + 12);
    if (ethertype == kEtherTypeVlan) {
        off += 4;
        if (frame.size() < off) return WireStatus::kTruncated;
        ethertype = load_be16(frame.data() + 16);
    }
    if (ethertype != kEtherTypeIpv4 && ethertype != kEtherTypeIpv6) return WireStatus::kNotRoce;

    const std::span<const std::uint8_t> rest = frame.subspan(off);
    std::size_t l3_size = 0;
    std::size_t l3_payload = 0;  // bytes after the IP header, per the IP length field
    if (ethertype == kEtherTypeIpv4) {
        if (rest.size() < kIpv4HeaderSize) return WireStatus::kTruncated;
        if ((rest[0] >> 4) != 4) return WireStatus::kBadIpHeader;
        l3_size = std::size_t{rest[0] & 0x0Fu} * 4;
        const std::size_t total_len = load_be16(rest.data() + 2);
        if (l3_size < kIpv4HeaderSize || total_len < l3_size || total_len > rest.size()) {
            return WireStatus::kBadIpHeader;
        }
        if (rest[9] != 17) return WireStatus::kNotRoce;
        // More-fragments or a fragment offset: not a whole datagram.
        if ((load_be16(rest.data() + 6) & 0x3FFF) != 0) return WireStatus::kNotRoce;
        l3_payload = total_len - l3_size;
        out.meta.src_ip = IpAddr::v4(rest[12], rest[13], rest[14], rest[15]);
        out.meta.dst_ip = IpAddr::v4(rest[16], rest[17], rest[18], rest[19]);
        out.meta.traffic_class = rest[1];
        out.meta.hop_limit = rest[8];
        out.meta.ipv4_identification = static_cast<std::uint16_t>(load_be16(rest.data() + 4));
    } else {
        if (rest.size() < kIpv6HeaderSize) return WireStatus::kTruncated;
        if ((rest[0] >> 4) != 6) return WireStatus::kBadIpHeader;
        l3_size = kIpv6HeaderSize;
        l3_payload = load_be16(rest.data() + 4);
        if (l3_payload > rest.size() - kIpv6HeaderSize) return WireStatus::kBadIpHeader;
        if (rest[6] != 17) return WireStatus::kNotRoce;  // extension headers not supported
        IpAddr src, dst;
        std::memcpy(src.bytes.data(), rest.data() + 8, 16);
        std::memcpy(dst.bytes.data(), rest.data() + 24, 16);
        out.meta.src_ip = src;
        out.meta.dst_ip = dst;
        out.meta.traffic_class =
            static_cast<std::uint8_t>(((rest[0] & 0x0F) << 4) | (rest[1] >> 4));
        out.meta.hop_limit = rest[7];
    }

    if (l3_payload < kUdpHeaderSize) return WireStatus::kBadUdpLength;
    const std::span<const std::uint8_t> udp = rest.subspan(l3_size, kUdpHeaderSize);
    if (load_be16(udp.data() + 2) != kRoceV2UdpPort) return WireStatus::kNotRoce;
    const std::size_t udp_len = load_be16(udp.data() + 4);
    if (udp_len > l3_payload || udp_len < kUdpHeaderSize + kBthSize + kIcrcSize) {
        return WireStatus::kBadUdpLength;
    }
    out.meta.udp_src_port = static_cast<std::uint16_t>(load_be16(udp.data()));
    out.meta.udp_dst_port = kRoceV2UdpPort;

    const std::span<const std::uint8_t> ib =
        rest.subspan(l3_size + kUdpHeaderSize, udp_len - kUdpHeaderSize - kIcrcSize);
    const std::uint32_t stored = load_icrc(ib.data() + ib.size());
    const auto computed = compute_icrc(rest.first(l3_size), udp, ib);
    if (!computed || *computed != stored) return WireStatus::kBadIcrc;
    return parse_ib_packet(ib, out);
}

}  // namespace softndk::wire
