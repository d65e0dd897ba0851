// roce_headers.hpp - InfiniBand transport headers as carried by RoCEv2 (IBA vol. 1 ch. 9,
// annex A17), the RC opcode property table and the AETH syndrome.
//
// Wire structs (Bth, Reth, Aeth, ImmDt, Ieth, AtomicEth, AtomicAckEth) are exactly the
// bytes on the wire: arrays of uint8_t, alignment 1, no padding, no bitfields. Every
// multi-byte field is big-endian on the wire; the accessors convert to and from host
// order with explicit shifts, so the structs may overlay any byte buffer (memcpy a
// header in or out, or reinterpret a byte pointer: alignment 1 makes that valid).
// Setters mask their argument to the field width; nothing here allocates or throws.
//
// The opcode table is the single source of opcode names and properties (what follows
// the BTH, payload, receive-WQE use, position in a message). Engines test properties,
// never lists of opcodes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace softndk::wire {

// ---------------------------------------------------------------------------------------
// Big-endian field access. constexpr so that headers can be built at compile time in tests.
// ---------------------------------------------------------------------------------------
namespace detail {
constexpr std::uint32_t load_be16(const std::uint8_t *p) noexcept {
    return (std::uint32_t{p[0]} << 8) | p[1];
}
constexpr std::uint32_t load_be24(const std::uint8_t *p) noexcept {
    return (std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2];
}
constexpr std::uint32_t load_be32(const std::uint8_t *p) noexcept {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           p[3];
}
constexpr std::uint64_t load_be64(const std::uint8_t *p) noexcept {
    return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4);
}
constexpr void store_be16(std::uint8_t *p, std::uint32_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 8);
    p[1] = static_cast<std::uint8_t>(v);
}
constexpr void store_be24(std::uint8_t *p, std::uint32_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 16);
    p[1] = static_cast<std::uint8_t>(v >> 8);
    p[2] = static_cast<std::uint8_t>(v);
}
constexpr void store_be32(std::uint8_t *p, std::uint32_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 24);
    p[1] = static_cast<std::uint8_t>(v >> 16);
    p[2] = static_cast<std::uint8_t>(v >> 8);
    p[3] = static_cast<std::uint8_t>(v);
}
constexpr void store_be64(std::uint8_t *p, std::uint64_t v) noexcept {
    store_be32(p, static_cast<std::uint32_t>(v >> 32));
    store_be32(p + 4, static_cast<std::uint32_t>(v));
}
constexpr void set_bit(std::uint8_t &byte, std::uint8_t mask, bool on) noexcept {
    byte = static_cast<std::uint8_t>(on ? (byte | mask) : (byte & ~mask));
}
}  // namespace detail

// ---------------------------------------------------------------------------------------
// Opcodes
// ---------------------------------------------------------------------------------------
inline constexpr std::uint16_t kRoceV2UdpPort = 4791;
inline constexpr std::uint16_t kDefaultPkey = 0xFFFF;
inline constexpr std::uint8_t kTransportMask = 0xE0;  // BTH opcode bits 7..5
inline constexpr std::uint8_t kTransportRc = 0x00;
inline constexpr std::uint8_t kTransportUc = 0x20;
inline constexpr std::uint8_t kTransportUd = 0x60;
inline constexpr std::uint8_t kCnpOpcode = 0x81;  // RoCEv2 CNP (annex A17); not an RC opcode

// RC opcodes (kernel include/rdma/ib_pack.h, IBA table 38). Values are the BTH byte.
enum class Opcode : std::uint8_t {
    kSendFirst = 0x00,
    kSendMiddle = 0x01,
    kSendLast = 0x02,
    kSendLastWithImmediate = 0x03,
    kSendOnly = 0x04,
    kSendOnlyWithImmediate = 0x05,
    kRdmaWriteFirst = 0x06,
    kRdmaWriteMiddle = 0x07,
    kRdmaWriteLast = 0x08,
    kRdmaWriteLastWithImmediate = 0x09,
    kRdmaWriteOnly = 0x0A,
    kRdmaWriteOnlyWithImmediate = 0x0B,
    kRdmaReadRequest = 0x0C,
    kRdmaReadResponseFirst = 0x0D,
    kRdmaReadResponseMiddle = 0x0E,
    kRdmaReadResponseLast = 0x0F,
    kRdmaReadResponseOnly = 0x10,
    kAcknowledge = 0x11,
    kAtomicAcknowledge = 0x12,
    kCompareSwap = 0x13,
    kFetchAdd = 0x14,
    kSendLastWithInvalidate = 0x16,
    kSendOnlyWithInvalidate = 0x17,
};

// Extension headers that may follow the BTH. As a bit set; on the wire they appear in
// the order of the enumerators (IBA 9.2: RETH, AtomicETH before ImmDt/IETH; AETH before
// AtomicAckETH), which is also the order build/parse use.
enum ExtHeader : std::uint8_t {
    kExtNone = 0,
    kExtReth = 1u << 0,
    kExtAtomicEth = 1u << 1,
    kExtAeth = 1u << 2,
    kExtAtomicAckEth = 1u << 3,
    kExtImmDt = 1u << 4,
    kExtIeth = 1u << 5,
};

// Position of a packet within its message.
enum class MsgPosition : std::uint8_t { kNone, kFirst, kMiddle, kLast, kOnly };

// Operation family of a packet.
enum class OpFamily : std::uint8_t {
    kNone,          // unassigned opcode
    kSend,          // SEND*, incl. immediate and invalidate variants
    kWrite,         // RDMA_WRITE*, incl. immediate
    kReadRequest,   // RDMA_READ_REQUEST
    kReadResponse,  // RDMA_READ_RESPONSE*
    kAtomic,        // COMPARE_SWAP, FETCH_ADD
    kAck,           // ACKNOWLEDGE, ATOMIC_ACKNOWLEDGE
};

struct OpcodeInfo {
    std::string_view name;  // IBA/kernel spelling, e.g. "SEND_ONLY_WITH_IMMEDIATE"
    bool valid;             // false for the unassigned RC codes (0x15, 0x18..0x1F)
    OpFamily family;
    MsgPosition position;
    std::uint8_t ext;         // ExtHeader bits
    bool has_payload;         // packet may carry payload (and therefore pad)
    bool consumes_rwqe;       // message consumes a receive WQE at the responder (see below)
    bool is_request;          // sent by the requester (false: sent by the responder)
    bool requires_ack;        // request that ends a message: requester sets AckReq and
                              // needs an ACK/response before completing it
    bool carries_ack;         // response carrying an AETH that acknowledges PSNs
    std::uint8_t header_len;  // BTH + all extension headers, bytes
};

// consumes_rwqe: every packet of a SEND message (the WQE is taken at FIRST/ONLY and
// held to LAST), and the WRITE-with-immediate packets that carry the ImmDt (the WQE
// gets the immediate and the total length; data goes to the RETH address).

inline constexpr std::size_t kBthSize = 12;
inline constexpr std::size_t kRethSize = 16;
inline constexpr std::size_t kAethSize = 4;
inline constexpr std::size_t kImmDtSize = 4;
inline constexpr std::size_t kIethSize = 4;
inline constexpr std::size_t kAtomicEthSize = 28;
inline constexpr std::size_t kAtomicAckEthSize = 8;
inline constexpr std::size_t kIcrcSize = 4;
// Largest BTH + extension header block any opcode has (BTH + AtomicETH).
inline constexpr std::size_t kMaxIbHeaderSize = kBthSize + kAtomicEthSize;

constexpr std::size_t ext_headers_size(std::uint8_t ext) noexcept {
    return ((ext & kExtReth) ? kRethSize : 0) + ((ext & kExtAtomicEth) ? kAtomicEthSize : 0) +
           ((ext & kExtAeth) ? kAethSize : 0) + ((ext & kExtAtomicAckEth) ? kAtomicAckEthSize : 0) +
           ((ext & kExtImmDt) ? kImmDtSize : 0) + ((ext & kExtIeth) ? kIethSize : 0);
}

namespace detail {
constexpr OpcodeInfo op(std::string_view name, OpFamily fam, MsgPosition pos, std::uint8_t ext,
                        bool payload, bool rwqe, bool request, bool req_ack, bool ack) noexcept {
    return OpcodeInfo{.name = name,
                      .valid = true,
                      .family = fam,
                      .position = pos,
                      .ext = ext,
                      .has_payload = payload,
                      .consumes_rwqe = rwqe,
                      .is_request = request,
                      .requires_ack = req_ack,
                      .carries_ack = ack,
                      .header_len = static_cast<std::uint8_t>(kBthSize + ext_headers_size(ext))};
}
constexpr OpcodeInfo unassigned() noexcept {
    return OpcodeInfo{.name = "UNKNOWN",
                      .valid = false,
                      .family = OpFamily::kNone,
                      .position = MsgPosition::kNone,
                      .ext = kExtNone,
                      .has_payload = false,
                      .consumes_rwqe = false,
                      .is_request = false,
                      .requires_ack = false,
                      .carries_ack = false,
                      .header_len = 0};
}
using F = OpFamily;
using P = MsgPosition;
}  // namespace detail

// Indexed by the low 5 bits of an RC opcode (transport bits 000).
// clang-format off
inline constexpr std::array<OpcodeInfo, 32> kOpcodeTable = {{
    //          name                               family               position     ext                     payld  rwqe   req    reqack ack
    detail::op("SEND_FIRST",                      detail::F::kSend,     detail::P::kFirst,  kExtNone,              true,  true,  true,  false, false),
    detail::op("SEND_MIDDLE",                     detail::F::kSend,     detail::P::kMiddle, kExtNone,              true,  true,  true,  false, false),
    detail::op("SEND_LAST",                       detail::F::kSend,     detail::P::kLast,   kExtNone,              true,  true,  true,  true,  false),
    detail::op("SEND_LAST_WITH_IMMEDIATE",        detail::F::kSend,     detail::P::kLast,   kExtImmDt,             true,  true,  true,  true,  false),
    detail::op("SEND_ONLY",                       detail::F::kSend,     detail::P::kOnly,   kExtNone,              true,  true,  true,  true,  false),
    detail::op("SEND_ONLY_WITH_IMMEDIATE",        detail::F::kSend,     detail::P::kOnly,   kExtImmDt,             true,  true,  true,  true,  false),
    detail::op("RDMA_WRITE_FIRST",                detail::F::kWrite,    detail::P::kFirst,  kExtReth,              true,  false, true,  false, false),
    detail::op("RDMA_WRITE_MIDDLE",               detail::F::kWrite,    detail::P::kMiddle, kExtNone,              true,  false, true,  false, false),
    detail::op("RDMA_WRITE_LAST",                 detail::F::kWrite,    detail::P::kLast,   kExtNone,              true,  false, true,  true,  false),
    detail::op("RDMA_WRITE_LAST_WITH_IMMEDIATE",  detail::F::kWrite,    detail::P::kLast,   kExtImmDt,             true,  true,  true,  true,  false),
    detail::op("RDMA_WRITE_ONLY",                 detail::F::kWrite,    detail::P::kOnly,   kExtReth,              true,  false, true,  true,  false),
    detail::op("RDMA_WRITE_ONLY_WITH_IMMEDIATE",  detail::F::kWrite,    detail::P::kOnly,   kExtReth | kExtImmDt,  true,  true,  true,  true,  false),
    detail::op("RDMA_READ_REQUEST",               detail::F::kReadRequest,  detail::P::kOnly,   kExtReth,          false, false, true,  true,  false),
    detail::op("RDMA_READ_RESPONSE_FIRST",        detail::F::kReadResponse, detail::P::kFirst,  kExtAeth,          true,  false, false, false, true),
    detail::op("RDMA_READ_RESPONSE_MIDDLE",       detail::F::kReadResponse, detail::P::kMiddle, kExtNone,          true,  false, false, false, false),
    detail::op("RDMA_READ_RESPONSE_LAST",         detail::F::kReadResponse, detail::P::kLast,   kExtAeth,          true,  false, false, false, true),
    detail::op("RDMA_READ_RESPONSE_ONLY",         detail::F::kReadResponse, detail::P::kOnly,   kExtAeth,          true,  false, false, false, true),
    detail::op("ACKNOWLEDGE",                     detail::F::kAck,      detail::P::kOnly,   kExtAeth,              false, false, false, false, true),
    detail::op("ATOMIC_ACKNOWLEDGE",              detail::F::kAck,      detail::P::kOnly,   kExtAeth | kExtAtomicAckEth, false, false, false, false, true),
    detail::op("COMPARE_SWAP",                    detail::F::kAtomic,   detail::P::kOnly,   kExtAtomicEth,         false, false, true,  true,  false),
    detail::op("FETCH_ADD",                       detail::F::kAtomic,   detail::P::kOnly,   kExtAtomicEth,         false, false, true,  true,  false),
    detail::unassigned(),                                                                   // 0x15
    detail::op("SEND_LAST_WITH_INVALIDATE",       detail::F::kSend,     detail::P::kLast,   kExtIeth,              true,  true,  true,  true,  false),
    detail::op("SEND_ONLY_WITH_INVALIDATE",       detail::F::kSend,     detail::P::kOnly,   kExtIeth,              true,  true,  true,  true,  false),
    // 0x18..0x1F: unassigned here (0x1C FLUSH and 0x1D ATOMIC_WRITE are not modelled).
    detail::unassigned(), detail::unassigned(), detail::unassigned(), detail::unassigned(),
    detail::unassigned(), detail::unassigned(), detail::unassigned(), detail::unassigned(),
}};
// clang-format on

// Properties of any BTH opcode byte. Non-RC transports and unassigned codes yield an
// entry with valid == false (name "UNKNOWN"); never out of bounds.
constexpr const OpcodeInfo &opcode_info(std::uint8_t raw) noexcept {
    return (raw & kTransportMask) == kTransportRc ? kOpcodeTable[raw & 0x1F] : kOpcodeTable[0x15];
}
constexpr const OpcodeInfo &opcode_info(Opcode op) noexcept {
    return opcode_info(static_cast<std::uint8_t>(op));
}
constexpr bool is_valid_opcode(std::uint8_t raw) noexcept {
    return opcode_info(raw).valid;
}
constexpr std::string_view to_string(Opcode op) noexcept {
    return opcode_info(op).name;
}

// The MIDDLE opcode of the message family `op` belongs to (SEND, RDMA WRITE or RDMA READ
// response); `op` itself for any other family, which has no multi-packet messages.
constexpr Opcode middle_opcode(Opcode op) noexcept {
    switch (opcode_info(op).family) {
        case OpFamily::kSend:
            return Opcode::kSendMiddle;
        case OpFamily::kWrite:
            return Opcode::kRdmaWriteMiddle;
        case OpFamily::kReadResponse:
            return Opcode::kRdmaReadResponseMiddle;
        default:
            return op;
    }
}

// ---------------------------------------------------------------------------------------
// BTH, 12 bytes:
//   0: opcode | 1: SE MigReq PadCnt(2) TVer(4) | 2-3: P_Key
//   4: FECN BECN resv6 | 5-7: DestQP(24) | 8: AckReq resv7 | 9-11: PSN(24)
// ---------------------------------------------------------------------------------------
struct Bth {
    std::uint8_t bytes[kBthSize];

    constexpr std::uint8_t opcode_raw() const noexcept { return bytes[0]; }
    constexpr Opcode opcode() const noexcept { return static_cast<Opcode>(bytes[0]); }
    constexpr bool solicited() const noexcept { return bytes[1] & 0x80; }
    constexpr bool mig_req() const noexcept { return bytes[1] & 0x40; }
    constexpr std::uint8_t pad_count() const noexcept { return (bytes[1] >> 4) & 0x3; }
    constexpr std::uint8_t tver() const noexcept { return bytes[1] & 0x0F; }
    constexpr std::uint16_t pkey() const noexcept {
        return static_cast<std::uint16_t>(detail::load_be16(bytes + 2));
    }
    constexpr bool fecn() const noexcept { return bytes[4] & 0x80; }
    constexpr bool becn() const noexcept { return bytes[4] & 0x40; }
    constexpr std::uint32_t dest_qp() const noexcept { return detail::load_be24(bytes + 5); }
    constexpr bool ack_req() const noexcept { return bytes[8] & 0x80; }
    constexpr std::uint32_t psn() const noexcept { return detail::load_be24(bytes + 9); }

    constexpr void set_opcode(Opcode op) noexcept { bytes[0] = static_cast<std::uint8_t>(op); }
    constexpr void set_opcode_raw(std::uint8_t op) noexcept { bytes[0] = op; }
    constexpr void set_solicited(bool v) noexcept { detail::set_bit(bytes[1], 0x80, v); }
    constexpr void set_mig_req(bool v) noexcept { detail::set_bit(bytes[1], 0x40, v); }
    constexpr void set_pad_count(std::uint8_t v) noexcept {
        bytes[1] = static_cast<std::uint8_t>((bytes[1] & ~0x30) | ((v & 0x3) << 4));
    }
    constexpr void set_tver(std::uint8_t v) noexcept {
        bytes[1] = static_cast<std::uint8_t>((bytes[1] & ~0x0F) | (v & 0x0F));
    }
    constexpr void set_pkey(std::uint16_t v) noexcept { detail::store_be16(bytes + 2, v); }
    constexpr void set_fecn(bool v) noexcept { detail::set_bit(bytes[4], 0x80, v); }
    constexpr void set_becn(bool v) noexcept { detail::set_bit(bytes[4], 0x40, v); }
    constexpr void set_dest_qp(std::uint32_t v) noexcept { detail::store_be24(bytes + 5, v); }
    constexpr void set_ack_req(bool v) noexcept { detail::set_bit(bytes[8], 0x80, v); }
    constexpr void set_psn(std::uint32_t v) noexcept { detail::store_be24(bytes + 9, v); }
};

// RETH, 16 bytes: VA(64) R_Key(32) DMA length(32).
struct Reth {
    std::uint8_t bytes[kRethSize];

    constexpr std::uint64_t va() const noexcept { return detail::load_be64(bytes); }
    constexpr std::uint32_t rkey() const noexcept { return detail::load_be32(bytes + 8); }
    constexpr std::uint32_t dma_length() const noexcept { return detail::load_be32(bytes + 12); }
    constexpr void set_va(std::uint64_t v) noexcept { detail::store_be64(bytes, v); }
    constexpr void set_rkey(std::uint32_t v) noexcept { detail::store_be32(bytes + 8, v); }
    constexpr void set_dma_length(std::uint32_t v) noexcept { detail::store_be32(bytes + 12, v); }
};

// AETH, 4 bytes: Syndrome(8) MSN(24).
struct Aeth {
    std::uint8_t bytes[kAethSize];

    constexpr std::uint8_t syndrome() const noexcept { return bytes[0]; }
    constexpr std::uint32_t msn() const noexcept { return detail::load_be24(bytes + 1); }
    constexpr void set_syndrome(std::uint8_t v) noexcept { bytes[0] = v; }
    constexpr void set_msn(std::uint32_t v) noexcept { detail::store_be24(bytes + 1, v); }
};

// ImmDt, 4 bytes. value() reads the four wire bytes big-endian. Verbs treats immediate
// data as opaque network-order bytes; both ends of SoftNDK use this accessor, so the
// value a consumer posts is the value its peer's completion reports.
struct ImmDt {
    std::uint8_t bytes[kImmDtSize];

    constexpr std::uint32_t value() const noexcept { return detail::load_be32(bytes); }
    constexpr void set_value(std::uint32_t v) noexcept { detail::store_be32(bytes, v); }
};

// IETH, 4 bytes: the R_Key to invalidate.
struct Ieth {
    std::uint8_t bytes[kIethSize];

    constexpr std::uint32_t rkey() const noexcept { return detail::load_be32(bytes); }
    constexpr void set_rkey(std::uint32_t v) noexcept { detail::store_be32(bytes, v); }
};

// AtomicETH, 28 bytes: VA(64) R_Key(32) Swap/Add(64) Compare(64).
struct AtomicEth {
    std::uint8_t bytes[kAtomicEthSize];

    constexpr std::uint64_t va() const noexcept { return detail::load_be64(bytes); }
    constexpr std::uint32_t rkey() const noexcept { return detail::load_be32(bytes + 8); }
    constexpr std::uint64_t swap_add() const noexcept { return detail::load_be64(bytes + 12); }
    constexpr std::uint64_t compare() const noexcept { return detail::load_be64(bytes + 20); }
    constexpr void set_va(std::uint64_t v) noexcept { detail::store_be64(bytes, v); }
    constexpr void set_rkey(std::uint32_t v) noexcept { detail::store_be32(bytes + 8, v); }
    constexpr void set_swap_add(std::uint64_t v) noexcept { detail::store_be64(bytes + 12, v); }
    constexpr void set_compare(std::uint64_t v) noexcept { detail::store_be64(bytes + 20, v); }
};

// AtomicAckETH, 8 bytes: the original remote value.
struct AtomicAckEth {
    std::uint8_t bytes[kAtomicAckEthSize];

    constexpr std::uint64_t orig() const noexcept { return detail::load_be64(bytes); }
    constexpr void set_orig(std::uint64_t v) noexcept { detail::store_be64(bytes, v); }
};

#define SOFTNDK_WIRE_ASSERT_WIRE_STRUCT(T, N)                                      \
    static_assert(sizeof(T) == (N), #T " must be exactly its wire size");          \
    static_assert(alignof(T) == 1, #T " must overlay unaligned buffers");          \
    static_assert(std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T>, \
                  #T " must be a plain byte struct")
SOFTNDK_WIRE_ASSERT_WIRE_STRUCT(Bth, 12);
SOFTNDK_WIRE_ASSERT_WIRE_STRUCT(Reth, 16);
SOFTNDK_WIRE_ASSERT_WIRE_STRUCT(Aeth, 4);
SOFTNDK_WIRE_ASSERT_WIRE_STRUCT(ImmDt, 4);
SOFTNDK_WIRE_ASSERT_WIRE_STRUCT(Ieth, 4);
SOFTNDK_WIRE_ASSERT_WIRE_STRUCT(AtomicEth, 28);
SOFTNDK_WIRE_ASSERT_WIRE_STRUCT(AtomicAckEth, 8);
#undef SOFTNDK_WIRE_ASSERT_WIRE_STRUCT

// ---------------------------------------------------------------------------------------
// AETH syndrome (IBA 9.7.5.2.1): bit 7 reserved (0), bits 6..5 type, bits 4..0 value.
//   type 00 ACK      value = credit count (0x1F: "no credit information", what rxe sends)
//   type 01 RNR NAK  value = RNR timer code (see rnr_timer_usec)
//   type 11 NAK      value = NAK code
// ---------------------------------------------------------------------------------------
enum class AethType : std::uint8_t { kAck = 0, kRnrNak = 1, kReserved = 2, kNak = 3 };

enum class NakCode : std::uint8_t {
    kPsnSequenceError = 0,        // syndrome 0x60; the AETH's PSN is the expected PSN
    kInvalidRequest = 1,          // 0x61
    kRemoteAccessError = 2,       // 0x62
    kRemoteOperationalError = 3,  // 0x63
    kInvalidRdRequest = 4,        // 0x64, RD only; decoded but never sent by RC
};

inline constexpr std::uint8_t kAethCreditsInvalid = 0x1F;
inline constexpr std::uint8_t kSyndromeAck = 0x00;
inline constexpr std::uint8_t kSyndromeRnrNak = 0x20;
inline constexpr std::uint8_t kSyndromeNak = 0x60;

constexpr std::uint8_t aeth_ack_syndrome(std::uint8_t credits = kAethCreditsInvalid) noexcept {
    return static_cast<std::uint8_t>(kSyndromeAck | (credits & 0x1F));
}
constexpr std::uint8_t aeth_rnr_nak_syndrome(std::uint8_t timer_code) noexcept {
    return static_cast<std::uint8_t>(kSyndromeRnrNak | (timer_code & 0x1F));
}
constexpr std::uint8_t aeth_nak_syndrome(NakCode code) noexcept {
    return static_cast<std::uint8_t>(kSyndromeNak | (static_cast<std::uint8_t>(code) & 0x1F));
}

struct AethSyndrome {
    AethType type;
    std::uint8_t value;  // credits, RNR timer code or NAK code (5 bits)
    bool valid;          // false: reserved bit 7 set, reserved type 10, or unknown NAK code

    constexpr bool is_ack() const noexcept { return valid && type == AethType::kAck; }
    constexpr bool is_rnr_nak() const noexcept { return valid && type == AethType::kRnrNak; }
    constexpr bool is_nak() const noexcept { return valid && type == AethType::kNak; }
    constexpr NakCode nak_code() const noexcept { return static_cast<NakCode>(value); }
};

constexpr AethSyndrome decode_aeth_syndrome(std::uint8_t syndrome) noexcept {
    const auto type = static_cast<AethType>((syndrome >> 5) & 0x3);
    const std::uint8_t value = syndrome & 0x1F;
    bool valid = (syndrome & 0x80) == 0 && type != AethType::kReserved;
    if (type == AethType::kNak && value > static_cast<std::uint8_t>(NakCode::kInvalidRdRequest)) {
        valid = false;
    }
    return AethSyndrome{type, value, valid};
}

std::string_view to_string(AethType t) noexcept;
std::string_view to_string(NakCode c) noexcept;

// RNR timer code -> minimum wait in microseconds (IBA table 45; rxe rnrnak_usec).
// Code 0 is the longest (655.36 ms), 1 is the shortest (0.01 ms), 31 is 491.52 ms.
// clang-format off
inline constexpr std::array<std::uint32_t, 32> kRnrTimerUsec = {
    655360,    10,    20,    30,    40,    60,    80,   120,
       160,   240,   320,   480,   640,   960,  1280,  1920,
      2560,  3840,  5120,  7680, 10240, 15360, 20480, 30720,
     40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};
// clang-format on
constexpr std::uint32_t rnr_timer_usec(std::uint8_t code) noexcept {
    return kRnrTimerUsec[code & 0x1F];
}

}  // namespace softndk::wire
