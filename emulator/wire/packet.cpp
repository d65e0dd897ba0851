// packet.cpp - header build/parse and message segmentation.
#include "wire/packet.hpp"

#include <cstring>

namespace softndk::wire {
namespace {

constexpr std::array<std::string_view, 13> kWireStatusNames = {
    "OK",
    "TRUNCATED",
    "BAD_TVER",
    "UNKNOWN_OPCODE",
    "PAD_INCONSISTENT",
    "UNEXPECTED_PAYLOAD",
    "PAYLOAD_TOO_LARGE",
    "BUFFER_TOO_SMALL",
    "ADDRESS_FAMILY_MISMATCH",
    "NOT_ROCE",
    "BAD_IP_HEADER",
    "BAD_UDP_LENGTH",
    "BAD_ICRC",
};
static_assert(kWireStatusNames.size() == static_cast<std::size_t>(WireStatus::kBadIcrc) + 1);

// Per MessageOp: opcodes for FIRST, MIDDLE, LAST, ONLY.
struct SegmentOpcodes {
    Opcode first, middle, last, only;
};
constexpr std::array<SegmentOpcodes, 6> kSegmentOpcodes = {{
    {Opcode::kSendFirst, Opcode::kSendMiddle, Opcode::kSendLast, Opcode::kSendOnly},
    {Opcode::kSendFirst, Opcode::kSendMiddle, Opcode::kSendLastWithImmediate,
     Opcode::kSendOnlyWithImmediate},
    {Opcode::kSendFirst, Opcode::kSendMiddle, Opcode::kSendLastWithInvalidate,
     Opcode::kSendOnlyWithInvalidate},
    {Opcode::kRdmaWriteFirst, Opcode::kRdmaWriteMiddle, Opcode::kRdmaWriteLast,
     Opcode::kRdmaWriteOnly},
    {Opcode::kRdmaWriteFirst, Opcode::kRdmaWriteMiddle, Opcode::kRdmaWriteLastWithImmediate,
     Opcode::kRdmaWriteOnlyWithImmediate},
    {Opcode::kRdmaReadResponseFirst, Opcode::kRdmaReadResponseMiddle, Opcode::kRdmaReadResponseLast,
     Opcode::kRdmaReadResponseOnly},
}};

}  // namespace

std::string_view to_string(WireStatus s) noexcept {
    const auto i = static_cast<std::size_t>(s);
    return i < kWireStatusNames.size() ? kWireStatusNames[i] : "UNKNOWN";
}

WireStatus build_headers(const PacketDescriptor &pkt, HeaderBuffer &out) noexcept {
    out.size = 0;
    const OpcodeInfo &info = pkt.info();
    if (!info.valid) return WireStatus::kUnknownOpcode;
    if (!info.has_payload && !pkt.payload.empty()) return WireStatus::kUnexpectedPayload;

    std::uint8_t *p = out.bytes.data();
    Bth bth{};
    bth.set_opcode(pkt.bth.opcode);
    bth.set_solicited(pkt.bth.solicited);
    bth.set_mig_req(pkt.bth.mig_req);
    bth.set_pad_count(pkt.pad_bytes());
    bth.set_tver(0);
    bth.set_pkey(pkt.bth.pkey);
    bth.set_fecn(pkt.bth.fecn);
    bth.set_becn(pkt.bth.becn);
    bth.set_dest_qp(pkt.bth.dest_qp);
    bth.set_ack_req(pkt.bth.ack_req);
    bth.set_psn(pkt.bth.psn);
    std::memcpy(p, bth.bytes, sizeof bth);
    p += sizeof bth;

    // Wire order is the ExtHeader bit order.
    if (info.ext & kExtReth) {
        Reth h{};
        h.set_va(pkt.reth.va);
        h.set_rkey(pkt.reth.rkey);
        h.set_dma_length(pkt.reth.dma_length);
        std::memcpy(p, h.bytes, sizeof h);
        p += sizeof h;
    }
    if (info.ext & kExtAtomicEth) {
        AtomicEth h{};
        h.set_va(pkt.atomic_eth.va);
        h.set_rkey(pkt.atomic_eth.rkey);
        h.set_swap_add(pkt.atomic_eth.swap_add);
        h.set_compare(pkt.atomic_eth.compare);
        std::memcpy(p, h.bytes, sizeof h);
        p += sizeof h;
    }
    if (info.ext & kExtAeth) {
        Aeth h{};
        h.set_syndrome(pkt.aeth.syndrome);
        h.set_msn(pkt.aeth.msn);
        std::memcpy(p, h.bytes, sizeof h);
        p += sizeof h;
    }
    if (info.ext & kExtAtomicAckEth) {
        AtomicAckEth h{};
        h.set_orig(pkt.atomic_ack_orig);
        std::memcpy(p, h.bytes, sizeof h);
        p += sizeof h;
    }
    if (info.ext & kExtImmDt) {
        ImmDt h{};
        h.set_value(pkt.imm);
        std::memcpy(p, h.bytes, sizeof h);
        p += sizeof h;
    }
    if (info.ext & kExtIeth) {
        Ieth h{};
        h.set_rkey(pkt.invalidate_rkey);
        std::memcpy(p, h.bytes, sizeof h);
        p += sizeof h;
    }
    out.size = static_cast<std::uint8_t>(p - out.bytes.data());
    return WireStatus::kOk;
}

WireStatus parse_ib_packet(std::span<const std::uint8_t> bytes, PacketDescriptor &out) noexcept {
    if (bytes.size() < kBthSize) return WireStatus::kTruncated;
    Bth bth;
    std::memcpy(bth.bytes, bytes.data(), sizeof bth);
    // rxe_recv.c drops TVer != 0 before looking at anything else.
    if (bth.tver() != 0) return WireStatus::kBadTver;
    const OpcodeInfo &info = opcode_info(bth.opcode_raw());
    if (!info.valid) return WireStatus::kUnknownOpcode;
    if (bytes.size() < info.header_len) return WireStatus::kTruncated;

    const std::size_t after_headers = bytes.size() - info.header_len;
    const std::uint8_t pad = bth.pad_count();
    if (!info.has_payload) {
        if (pad != 0) return WireStatus::kPadInconsistent;
        if (after_headers != 0) return WireStatus::kUnexpectedPayload;
    } else {
        if (pad > after_headers) return WireStatus::kPadInconsistent;
        // The pad fills the payload to a 4-byte boundary, so payload + pad is a multiple of
        // 4; FIRST/MIDDLE carry exactly one MTU, so their pad must be 0.
        if ((after_headers & 3u) != 0) return WireStatus::kPadInconsistent;
        const bool full_mtu =
            info.position == MsgPosition::kFirst || info.position == MsgPosition::kMiddle;
        if (full_mtu && pad != 0) return WireStatus::kPadInconsistent;
    }

    out.bth.opcode = bth.opcode();
    out.bth.solicited = bth.solicited();
    out.bth.mig_req = bth.mig_req();
    out.bth.pad_count = pad;
    out.bth.tver = bth.tver();
    out.bth.pkey = bth.pkey();
    out.bth.fecn = bth.fecn();
    out.bth.becn = bth.becn();
    out.bth.dest_qp = bth.dest_qp();
    out.bth.ack_req = bth.ack_req();
    out.bth.psn = bth.psn();

    const std::uint8_t *p = bytes.data() + kBthSize;
    if (info.ext & kExtReth) {
        Reth h;
        std::memcpy(h.bytes, p, sizeof h);
        out.reth = RethFields{h.va(), h.rkey(), h.dma_length()};
        p += sizeof h;
    }
    if (info.ext & kExtAtomicEth) {
        AtomicEth h;
        std::memcpy(h.bytes, p, sizeof h);
        out.atomic_eth = AtomicEthFields{h.va(), h.rkey(), h.swap_add(), h.compare()};
        p += sizeof h;
    }
    if (info.ext & kExtAeth) {
        Aeth h;
        std::memcpy(h.bytes, p, sizeof h);
        out.aeth = AethFields{h.syndrome(), h.msn()};
        p += sizeof h;
    }
    if (info.ext & kExtAtomicAckEth) {
        AtomicAckEth h;
        std::memcpy(h.bytes, p, sizeof h);
        out.atomic_ack_orig = h.orig();
        p += sizeof h;
    }
    if (info.ext & kExtImmDt) {
        ImmDt h;
        std::memcpy(h.bytes, p, sizeof h);
        out.imm = h.value();
        p += sizeof h;
    }
    if (info.ext & kExtIeth) {
        Ieth h;
        std::memcpy(h.bytes, p, sizeof h);
        out.invalidate_rkey = h.rkey();
        p += sizeof h;
    }
    out.payload = bytes.subspan(info.header_len, after_headers - pad);
    return WireStatus::kOk;
}

std::optional<Segment> segment_message(MessageOp op, std::uint32_t length, std::uint32_t mtu,
                                       std::uint32_t index) noexcept {
    const auto op_index = static_cast<std::size_t>(op);
    if (op_index >= kSegmentOpcodes.size()) return std::nullopt;
    const std::uint32_t count = packets_for_message(length, mtu);
    if (count == 0 || index >= count) return std::nullopt;

    const SegmentOpcodes &ops = kSegmentOpcodes[op_index];
    const std::uint32_t offset = index * mtu;  // < length, so no overflow
    if (count == 1) return Segment{ops.only, MsgPosition::kOnly, 0, length};
    if (index == 0) return Segment{ops.first, MsgPosition::kFirst, 0, mtu};
    if (index + 1 < count) return Segment{ops.middle, MsgPosition::kMiddle, offset, mtu};
    return Segment{ops.last, MsgPosition::kLast, offset, length - offset};
}

std::span<const std::uint8_t> segment_payload(std::span<const std::uint8_t> message,
                                              const Segment &seg) noexcept {
    if (seg.offset > message.size() || seg.length > message.size() - seg.offset) return {};
    return message.subspan(seg.offset, seg.length);
}

}  // namespace softndk::wire
