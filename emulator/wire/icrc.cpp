// icrc.cpp - RoCEv2 ICRC on top of zlib's crc32.
//
// zlib's crc32 is exactly the CRC the ICRC is defined with (the oracle and rxe's
// reference both use it), it is well kept and already table-driven/vectorised, so there
// is no reason to carry our own CRC tables.
#include "wire/icrc.hpp"

#include <zlib.h>

#include <array>
#include <cstring>

#include "wire/roce_headers.hpp"

namespace softndk::wire {
namespace {

constexpr std::size_t kIpv4MinHeader = 20;
constexpr std::size_t kIpv4MaxHeader = 60;
constexpr std::size_t kIpv6Header = 40;
constexpr std::size_t kUdpHeader = 8;

uLong crc_update(uLong crc, const std::uint8_t *p, std::size_t n) noexcept {
    return crc32_z(crc, p, n);
}

}  // namespace

std::optional<std::uint32_t> compute_icrc(std::span<const std::uint8_t> ip_header,
                                          std::span<const std::uint8_t> udp_header,
                                          std::span<const std::uint8_t> ib_headers,
                                          std::span<const std::uint8_t> payload,
                                          std::size_t pad_bytes) noexcept {
    if (ip_header.empty() || udp_header.size() != kUdpHeader || ib_headers.size() < kBthSize ||
        pad_bytes > 3) {
        return std::nullopt;
    }
    std::array<std::uint8_t, kIpv4MaxHeader> ip{};
    const unsigned version = ip_header[0] >> 4;
    if (version == 4) {
        const std::size_t ihl = std::size_t{ip_header[0] & 0x0Fu} * 4;
        if (ihl < kIpv4MinHeader || ihl != ip_header.size()) return std::nullopt;
        std::memcpy(ip.data(), ip_header.data(), ihl);
        ip[1] = 0xFF;   // TOS
        ip[8] = 0xFF;   // TTL
        ip[10] = 0xFF;  // header checksum
        ip[11] = 0xFF;
    } else if (version == 6) {
        if (ip_header.size() != kIpv6Header) return std::nullopt;
        std::memcpy(ip.data(), ip_header.data(), kIpv6Header);
        ip[0] |= 0x0F;  // traffic class (low nibble of byte 0, high of byte 1)
        ip[1] = 0xFF;   // ... and flow label (low nibble of byte 1, bytes 2-3)
        ip[2] = 0xFF;
        ip[3] = 0xFF;
        ip[7] = 0xFF;  // hop limit
    } else {
        return std::nullopt;
    }

    std::array<std::uint8_t, kUdpHeader> udp{};
    std::memcpy(udp.data(), udp_header.data(), kUdpHeader);
    udp[6] = 0xFF;  // UDP checksum
    udp[7] = 0xFF;

    std::array<std::uint8_t, kBthSize> bth{};
    std::memcpy(bth.data(), ib_headers.data(), kBthSize);
    bth[4] = 0xFF;  // FECN, BECN, resv6a

    static constexpr std::array<std::uint8_t, 8> kLrhStandIn = {0xFF, 0xFF, 0xFF, 0xFF,
                                                                0xFF, 0xFF, 0xFF, 0xFF};
    static constexpr std::array<std::uint8_t, 3> kPad = {0, 0, 0};
    uLong crc = crc32_z(0L, Z_NULL, 0);
    crc = crc_update(crc, kLrhStandIn.data(), kLrhStandIn.size());
    crc = crc_update(crc, ip.data(), ip_header.size());
    crc = crc_update(crc, udp.data(), udp.size());
    crc = crc_update(crc, bth.data(), bth.size());
    crc = crc_update(crc, ib_headers.data() + kBthSize, ib_headers.size() - kBthSize);
    if (!payload.empty()) crc = crc_update(crc, payload.data(), payload.size());
    crc = crc_update(crc, kPad.data(), pad_bytes);
    return static_cast<std::uint32_t>(crc);
}

std::optional<std::uint32_t> compute_icrc(std::span<const std::uint8_t> ip_header,
                                          std::span<const std::uint8_t> udp_header,
                                          std::span<const std::uint8_t> ib_packet) noexcept {
    if (ib_packet.size() < kBthSize) return std::nullopt;
    return compute_icrc(ip_header, udp_header, ib_packet.first(kBthSize),
                        ib_packet.subspan(kBthSize), 0);
}

}  // namespace softndk::wire
