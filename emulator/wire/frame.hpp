// frame.hpp - whole RoCEv2 frames, for pcap and for links that carry bytes:
//   Ethernet | IPv4 or IPv6 | UDP (dst 4791) | BTH | ext headers | payload | pad | ICRC
// (no FCS: pcap LINKTYPE_ETHERNET frames are captured without it).
//
// What the serialiser writes, matching rxe and ConnectX (and the wire oracle):
//   Ethernet: fake locally administered MACs derived from the IPs (mac_for_ip), no VLAN;
//   IPv4: IHL 5, DF set, identification 0, TOS/TTL from PacketMeta, valid header checksum.
//         The ICRC covers the identification (only TOS, TTL and the checksum are masked),
//         so a frame verifies on the wire only if it leaves with exactly this header:
//         fabric/udp_link.hpp sends it through a raw socket (docs/wire.md);
//   IPv6: traffic class and hop limit from PacketMeta, flow label 0, no extension headers;
//   UDP: source port from PacketMeta, checksum 0 over IPv4 (as rxe and ConnectX send) and
//        a real checksum over IPv6 (RFC 8200 forbids zero there).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "wire/packet.hpp"

namespace softndk::wire {

inline constexpr std::size_t kEthernetHeaderSize = 14;
inline constexpr std::size_t kIpv4HeaderSize = 20;
inline constexpr std::size_t kIpv6HeaderSize = 40;
inline constexpr std::size_t kUdpHeaderSize = 8;
inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr std::uint16_t kEtherTypeVlan = 0x8100;

// 02:00:a:b:c:d from the last four address bytes (the IPv4 address for IPv4): locally
// administered, unicast, stable per address, so captures read naturally.
constexpr std::array<std::uint8_t, 6> mac_for_ip(const IpAddr &ip) noexcept {
    return {0x02, 0x00, ip.bytes[12], ip.bytes[13], ip.bytes[14], ip.bytes[15]};
}

// Bytes serialize_frame() will write for `pkt`; 0 if it cannot be serialised
// (unknown opcode, payload on a payload-less opcode, mixed address families, payload
// too large for the 16-bit IP length).
std::size_t frame_size(const PacketDescriptor &pkt) noexcept;

struct FrameResult {
    WireStatus status;
    std::size_t size;  // bytes written to the output on kOk, else 0
};

// Serialises `pkt` into `out` (caller-owned; must hold frame_size(pkt) bytes).
// Errors: those of build_headers, kAddressFamilyMismatch, kPayloadTooLarge (payload over
// ~64 KiB), kBufferTooSmall.
FrameResult serialize_frame(const PacketDescriptor &pkt, std::span<std::uint8_t> out) noexcept;

// Convenience for tools and tests: a freshly allocated frame, empty on error.
std::vector<std::uint8_t> serialize_frame(const PacketDescriptor &pkt);

// A datagram's IB part around a payload it does not copy, for a sender that hands the
// kernel the payload from where it lies (fabric/udp_link.cpp, GSO batches through a UDP
// socket, which writes the IP and UDP headers itself): BTH and extension headers in
// `headers`, then (after the payload) the pad and the ICRC in `trailer`. The ICRC is the
// one serialize_frame would write for `pkt`. The datagram is headers.view(), pkt.payload,
// then the first `trailer_size` bytes of trailer. Errors: those of serialize_frame but
// kBufferTooSmall.
struct IbTrailer {
    std::array<std::uint8_t, 3 + kIcrcSize> bytes{};  // pad (0..3 zero bytes), ICRC
    std::uint8_t size = 0;
};
WireStatus serialize_ib_parts(const PacketDescriptor &pkt, HeaderBuffer &headers,
                              IbTrailer &trailer) noexcept;

// Frames IB transport bytes that serialize_frame does not build itself (BTH first, no
// ICRC; e.g. the UDP link's manufacturer-specific CM opcode): the same Ethernet/IP/UDP
// headers as serialize_frame for `meta`, then `ib_packet`, then its ICRC. Empty if
// ib_packet is shorter than a BTH or too large, or the address families differ.
std::vector<std::uint8_t> frame_ib_packet(const PacketMeta &meta,
                                          std::span<const std::uint8_t> ib_packet);

// The ICRC `ib_packet` (BTH first, up to and including the pad, no ICRC) carries when it
// travels with the outer headers serialize_frame / frame_ib_packet write for `meta`,
// computed in place without assembling a frame: what a receiver compares with the ICRC
// that arrived. nullopt when frame_ib_packet would return an empty frame.
std::optional<std::uint32_t> ib_packet_icrc(const PacketMeta &meta,
                                            std::span<const std::uint8_t> ib_packet) noexcept;

// Parses and validates a captured frame (Ethernet, optional one 802.1Q tag, IPv4 or IPv6
// without extension headers, UDP dst 4791, ICRC) into `out`: BTH/extension fields and
// payload (a span into `frame`) as parse_ib_packet(), plus meta.src_ip/dst_ip/
// udp_src_port/traffic_class/hop_limit/ipv4_identification. meta.src_vport/dst_vport
// are not touched.
// Bytes past the IP length (Ethernet padding) are ignored. Never reads outside `frame`.
// On error `out` may be partially written and must not be used.
WireStatus parse_frame(std::span<const std::uint8_t> frame, PacketDescriptor &out) noexcept;

}  // namespace softndk::wire
