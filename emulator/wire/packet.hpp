// packet.hpp - the packet descriptor the RC engine passes around inside the host, header
// build/parse, and message segmentation (IBA 9.7.1, rxe rxe_req.c / rxe_resp.c check_length).
//
// Inside one host the engine never serialises a payload: a PacketDescriptor carries the
// header fields in host byte order plus a REFERENCE to the payload bytes (std::span, not
// owned, not copied). Whoever builds the descriptor keeps the payload memory alive and
// unchanged until the packet has been consumed (placed, or dropped). Header bytes are
// built on demand into a small fixed buffer (build_headers) for pcap and for links that
// do carry bytes; parse_ib_packet() is the way back and is the validation point for
// anything that arrives as bytes.
//
// Bad input is never fatal: every parse/build function returns a WireStatus and never
// throws, asserts or reads outside the span it was given.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "wire/roce_headers.hpp"

namespace softndk::wire {

enum class WireStatus : std::uint8_t {
    kOk,
    kTruncated,              // fewer bytes than the BTH + extension headers need
    kBadTver,                // BTH transport version != 0
    kUnknownOpcode,          // not an RC opcode this engine models (incl. UC/UD/CNP)
    kPadInconsistent,        // pad count > bytes after headers, payload + pad not a
                             // multiple of 4, or pad where there must be none (FIRST/
                             // MIDDLE carry a full MTU; some opcodes carry no payload)
    kUnexpectedPayload,      // payload on an opcode that carries none
    kPayloadTooLarge,        // frame would not fit the 16-bit IP/UDP length fields
    kBufferTooSmall,         // output span shorter than the serialised size
    kAddressFamilyMismatch,  // one IPv4 and one IPv6 address in the metadata
    kNotRoce,                // frame is not Ethernet / IPv4|IPv6 / UDP dst 4791
    kBadIpHeader,            // IP version/length fields inconsistent with the frame
    kBadUdpLength,           // UDP length inconsistent with the IP length or too short
    kBadIcrc,                // ICRC mismatch
};
std::string_view to_string(WireStatus s) noexcept;

// An IP address in 16-byte form, network byte order. IPv4 is stored IPv4-mapped
// (::ffff:a.b.c.d), which is also the RoCEv2 GID of an IPv4 address.
struct IpAddr {
    std::array<std::uint8_t, 16> bytes{};

    static constexpr IpAddr v4(std::uint8_t a, std::uint8_t b, std::uint8_t c,
                               std::uint8_t d) noexcept {
        return IpAddr{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, a, b, c, d}};
    }
    static constexpr IpAddr v6(const std::array<std::uint8_t, 16> &b) noexcept { return IpAddr{b}; }
    constexpr bool is_v4() const noexcept {
        for (int i = 0; i < 10; ++i) {
            if (bytes[i] != 0) return false;
        }
        return bytes[10] == 0xFF && bytes[11] == 0xFF;
    }
    // Two 8-byte compares, not the memcmp call a defaulted == on the array becomes: the
    // fabric compares addresses several times per packet (route, loopback, delivery).
    friend bool operator==(const IpAddr &a, const IpAddr &b) noexcept {
        std::uint64_t a_lo, a_hi, b_lo, b_hi;
        std::memcpy(&a_lo, a.bytes.data(), 8);
        std::memcpy(&a_hi, a.bytes.data() + 8, 8);
        std::memcpy(&b_lo, b.bytes.data(), 8);
        std::memcpy(&b_hi, b.bytes.data() + 8, 8);
        return ((a_lo ^ b_lo) | (a_hi ^ b_hi)) == 0;
    }
};

// Where a packet comes from and goes to. Only frame serialisation reads the IP/UDP
// fields; the in-host fabric routes on the virtual ports.
struct PacketMeta {
    std::uint32_t src_vport = 0;  // virtual RNIC port the packet left from
    std::uint32_t dst_vport = 0;  // virtual RNIC port it is delivered to
    IpAddr src_ip{};
    IpAddr dst_ip{};
    std::uint16_t udp_src_port = 0xC000;  // flow entropy; rxe uses 0xC000 | hash(QPN)
    std::uint8_t traffic_class = 0;       // IPv4 TOS / IPv6 TC (DSCP|ECN); not ICRC-covered
    std::uint8_t hop_limit = 64;          // IPv4 TTL / IPv6 hop limit; not ICRC-covered
    // UDP destination port: RoCEv2's 4791. Only the UDP link on a test port
    // (SOFTNDK_FABRIC=udp:PORT) writes another; the ICRC covers it. parse_frame
    // accepts only 4791.
    std::uint16_t udp_dst_port = kRoceV2UdpPort;
    // IPv4 identification. 0 for an atomic datagram (DF, RFC 6864), which every frame
    // SoftNDK builds is; the ICRC covers it. Only a frame of a UDP GSO batch carries
    // another (fabric/udp_link.hpp): the kernel numbers a batch's segments on from 0.
    std::uint16_t ipv4_identification = 0;
};

// BTH fields in host order. build_headers() writes TVer 0 and derives PadCnt from the
// payload length, ignoring these two members; parse_ib_packet() reports them as received.
struct BthFields {
    Opcode opcode = Opcode::kSendOnly;
    bool solicited = false;
    bool mig_req = false;
    std::uint8_t pad_count = 0;
    std::uint8_t tver = 0;
    std::uint16_t pkey = kDefaultPkey;
    bool fecn = false;
    bool becn = false;
    std::uint32_t dest_qp = 0;  // 24 bits
    bool ack_req = false;
    std::uint32_t psn = 0;  // 24 bits
};

struct RethFields {
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t dma_length = 0;
};

struct AethFields {
    std::uint8_t syndrome = kSyndromeAck | kAethCreditsInvalid;
    std::uint32_t msn = 0;  // 24 bits
};

struct AtomicEthFields {
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint64_t swap_add = 0;
    std::uint64_t compare = 0;
};

// One packet in flight. Extension-header members are meaningful only when the opcode's
// ext bits name that header; others are ignored by build and left untouched by parse.
struct PacketDescriptor {
    BthFields bth{};
    RethFields reth{};
    AethFields aeth{};
    AtomicEthFields atomic_eth{};
    std::uint64_t atomic_ack_orig = 0;        // AtomicAckETH
    std::uint32_t imm = 0;                    // ImmDt (see ImmDt::value for byte order)
    std::uint32_t invalidate_rkey = 0;        // IETH
    std::span<const std::uint8_t> payload{};  // borrowed; pad bytes are NOT included
    PacketMeta meta{};

    const OpcodeInfo &info() const noexcept { return opcode_info(bth.opcode); }
    constexpr std::uint8_t pad_bytes() const noexcept {
        return static_cast<std::uint8_t>((0u - payload.size()) & 3u);
    }
};

// BTH + extension headers of one packet, built in place. No heap.
struct HeaderBuffer {
    std::array<std::uint8_t, kMaxIbHeaderSize> bytes{};
    std::uint8_t size = 0;

    std::span<const std::uint8_t> view() const noexcept { return {bytes.data(), size}; }
};

// Writes BTH (TVer 0, PadCnt = (-payload) & 3) and the opcode's extension headers, in wire
// order, into `out`. Errors: kUnknownOpcode, kUnexpectedPayload (payload on an opcode
// without one). On error out.size == 0.
WireStatus build_headers(const PacketDescriptor &pkt, HeaderBuffer &out) noexcept;

// Parses an IB transport packet: BTH through the pad bytes, WITHOUT the 4-byte ICRC.
// On kOk, out.bth and the opcode's extension fields are set and out.payload refers into
// `bytes` (pad excluded); out.meta is not touched. On error `out` may be partially
// written and must not be used. Never reads outside `bytes`.
WireStatus parse_ib_packet(std::span<const std::uint8_t> bytes, PacketDescriptor &out) noexcept;

// ---------------------------------------------------------------------------------------
// Segmentation. A message of `length` bytes at path MTU `mtu` becomes
// max(1, ceil(length / mtu)) packets: FIRST, MIDDLE..., LAST, or a single ONLY. FIRST and
// MIDDLE carry exactly mtu bytes, LAST 1..mtu, and a zero-length message is one ONLY
// packet with no payload. An RDMA READ request consumes that many PSNs for its responses.
// ---------------------------------------------------------------------------------------
enum class MessageOp : std::uint8_t {
    kSend,
    kSendWithImmediate,
    kSendWithInvalidate,
    kRdmaWrite,
    kRdmaWriteWithImmediate,
    kRdmaReadResponse,
};

inline constexpr std::uint32_t kMinPathMtu = 256;
inline constexpr std::uint32_t kMaxPathMtu = 4096;

// IB path MTUs are 256, 512, 1024, 2048 and 4096 bytes of payload.
constexpr bool is_valid_path_mtu(std::uint32_t mtu) noexcept {
    return mtu >= kMinPathMtu && mtu <= kMaxPathMtu && (mtu & (mtu - 1)) == 0;
}

// Packets (= PSNs) a message of `length` bytes needs; 0 if mtu is not a valid path MTU.
constexpr std::uint32_t packets_for_message(std::uint32_t length, std::uint32_t mtu) noexcept {
    if (!is_valid_path_mtu(mtu)) return 0;
    if (length == 0) return 1;
    return static_cast<std::uint32_t>((std::uint64_t{length} + mtu - 1) / mtu);
}

// PSNs an RDMA READ request of `length` bytes consumes (one per response packet).
constexpr std::uint32_t read_request_psn_count(std::uint32_t length, std::uint32_t mtu) noexcept {
    return packets_for_message(length, mtu);
}

struct Segment {
    Opcode opcode;
    MsgPosition position;
    std::uint32_t offset;  // into the message
    std::uint32_t length;  // payload bytes of this packet
};

// Packet `index` of the message. nullopt if mtu is invalid or index >= packet count.
std::optional<Segment> segment_message(MessageOp op, std::uint32_t length, std::uint32_t mtu,
                                       std::uint32_t index) noexcept;

// The payload slice of `seg` within `message` (empty if out of range).
std::span<const std::uint8_t> segment_payload(std::span<const std::uint8_t> message,
                                              const Segment &seg) noexcept;

}  // namespace softndk::wire
