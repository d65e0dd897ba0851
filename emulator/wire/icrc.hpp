// icrc.hpp - the RoCEv2 invariant CRC (IBA annex A17.3.3; kernel rxe_icrc.c; scapy roce.py).
//
// ICRC = CRC-32 (the zlib/Ethernet one: reflected 0x04C11DB7, init ~0, final ~0) over
//   8 bytes of 0xFF                       (stands in for the IB LRH that RoCEv2 lacks)
//   the IP header with its variant fields set to all ones
//       IPv4: TOS (DSCP+ECN), TTL, header checksum
//       IPv6: traffic class, flow label, hop limit
//   the UDP header with its checksum set to all ones
//   the BTH with byte 4 (FECN, BECN, resv6a) set to all ones
//   the rest of the IB packet: extension headers, payload, pad (zero bytes).
// The result is a host-order uint32_t; on the wire it is stored least-significant byte
// first (store_icrc/load_icrc). Routers may therefore rewrite DSCP/ECN/TTL and the UDP
// checksum without invalidating it; the UDP source port and all lengths are covered.
//
// None of these functions modify their inputs (masking happens on small local copies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace softndk::wire {

// ICRC of one packet whose IB part is given in pieces, so that the in-host engine can
// compute it over header bytes and a borrowed payload without assembling a frame.
//   ip_header:  the complete IPv4 header (20..60 bytes, IHL must match) or the 40-byte
//               IPv6 fixed header (extension headers are not supported)
//   udp_header: 8 bytes
//   ib_headers: BTH (first 12 bytes) + extension headers
//   payload:    payload bytes, then `pad_bytes` (0..3) zero bytes are appended
// nullopt if a piece has an impossible size or the IP version is neither 4 nor 6.
std::optional<std::uint32_t> compute_icrc(std::span<const std::uint8_t> ip_header,
                                          std::span<const std::uint8_t> udp_header,
                                          std::span<const std::uint8_t> ib_headers,
                                          std::span<const std::uint8_t> payload,
                                          std::size_t pad_bytes) noexcept;

// Same, with the IB packet (BTH .. pad, no ICRC) in one piece.
std::optional<std::uint32_t> compute_icrc(std::span<const std::uint8_t> ip_header,
                                          std::span<const std::uint8_t> udp_header,
                                          std::span<const std::uint8_t> ib_packet) noexcept;

// The ICRC travels little-endian.
constexpr void store_icrc(std::uint8_t *out, std::uint32_t icrc) noexcept {
    out[0] = static_cast<std::uint8_t>(icrc);
    out[1] = static_cast<std::uint8_t>(icrc >> 8);
    out[2] = static_cast<std::uint8_t>(icrc >> 16);
    out[3] = static_cast<std::uint8_t>(icrc >> 24);
}
constexpr std::uint32_t load_icrc(const std::uint8_t *in) noexcept {
    return std::uint32_t{in[0]} | (std::uint32_t{in[1]} << 8) | (std::uint32_t{in[2]} << 16) |
           (std::uint32_t{in[3]} << 24);
}

}  // namespace softndk::wire
