// Header build/parse round trips, rejection of bad input, and message segmentation.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "wire/packet.hpp"

using namespace softndk::wire;

namespace {

// BTH + ext headers + payload + pad, as a received IB transport packet (no ICRC).
std::vector<std::uint8_t> ib_bytes(const PacketDescriptor &p) {
    HeaderBuffer h;
    REQUIRE(build_headers(p, h) == WireStatus::kOk);
    std::vector<std::uint8_t> v(h.view().begin(), h.view().end());
    v.insert(v.end(), p.payload.begin(), p.payload.end());
    v.resize(v.size() + p.pad_bytes(), 0);
    return v;
}

PacketDescriptor sample(Opcode op, std::span<const std::uint8_t> payload) {
    PacketDescriptor p;
    p.bth.opcode = op;
    p.bth.solicited = true;
    p.bth.mig_req = true;
    p.bth.pkey = 0x8001;
    p.bth.fecn = true;
    p.bth.becn = false;
    p.bth.dest_qp = 0xABCDEF;
    p.bth.ack_req = true;
    p.bth.psn = 0xFFFFFF;
    p.reth = {0xFEDCBA9876543210, 0x11223344, 0x55667788};
    p.aeth = {aeth_nak_syndrome(NakCode::kRemoteOperationalError), 0x123456};
    p.atomic_eth = {0x0011223344556677, 0x8899AABB, 0xCCDDEEFF00112233, 0x4455667788990011};
    p.atomic_ack_orig = 0xA5A5A5A55A5A5A5A;
    p.imm = 0xCAFEF00D;
    p.invalidate_rkey = 0x0BADF00D;
    if (opcode_info(op).has_payload) p.payload = payload;
    return p;
}

}  // namespace

TEST_CASE("every opcode round-trips through build_headers/parse_ib_packet", "[packet][roundtrip]") {
    std::vector<std::uint8_t> payload(256);
    for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<std::uint8_t>(i * 13);

    for (std::size_t raw = 0; raw < kOpcodeTable.size(); ++raw) {
        const OpcodeInfo &info = kOpcodeTable[raw];
        if (!info.valid) continue;
        const auto op = static_cast<Opcode>(raw);
        const bool full =
            info.position == MsgPosition::kFirst || info.position == MsgPosition::kMiddle;
        // Padded payload sizes only where the position allows a short payload.
        for (std::size_t len : full ? std::vector<std::size_t>{0, 256}
                                    : std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 255}) {
            DYNAMIC_SECTION(info.name << " payload " << len) {
                const PacketDescriptor in = sample(op, std::span(payload).first(len));
                const auto bytes = ib_bytes(in);
                CHECK(bytes.size() % 4 == 0);
                CHECK(bytes.size() == info.header_len + in.payload.size() + in.pad_bytes());

                PacketDescriptor out;
                REQUIRE(parse_ib_packet(bytes, out) == WireStatus::kOk);
                CHECK(out.bth.opcode == op);
                CHECK(out.bth.solicited);
                CHECK(out.bth.mig_req);
                CHECK(out.bth.pad_count == in.pad_bytes());
                CHECK(out.bth.tver == 0);
                CHECK(out.bth.pkey == 0x8001);
                CHECK(out.bth.fecn);
                CHECK_FALSE(out.bth.becn);
                CHECK(out.bth.dest_qp == 0xABCDEF);
                CHECK(out.bth.ack_req);
                CHECK(out.bth.psn == 0xFFFFFF);
                CHECK(out.payload.size() == in.payload.size());
                CHECK(std::equal(out.payload.begin(), out.payload.end(), in.payload.begin()));
                // The payload is referenced in place, not copied.
                if (!out.payload.empty())
                    CHECK(out.payload.data() == bytes.data() + info.header_len);
                if (info.ext & kExtReth) {
                    CHECK(out.reth.va == in.reth.va);
                    CHECK(out.reth.rkey == in.reth.rkey);
                    CHECK(out.reth.dma_length == in.reth.dma_length);
                }
                if (info.ext & kExtAeth) {
                    CHECK(out.aeth.syndrome == in.aeth.syndrome);
                    CHECK(out.aeth.msn == in.aeth.msn);
                }
                if (info.ext & kExtAtomicEth) {
                    CHECK(out.atomic_eth.va == in.atomic_eth.va);
                    CHECK(out.atomic_eth.rkey == in.atomic_eth.rkey);
                    CHECK(out.atomic_eth.swap_add == in.atomic_eth.swap_add);
                    CHECK(out.atomic_eth.compare == in.atomic_eth.compare);
                }
                if (info.ext & kExtAtomicAckEth) CHECK(out.atomic_ack_orig == in.atomic_ack_orig);
                if (info.ext & kExtImmDt) CHECK(out.imm == in.imm);
                if (info.ext & kExtIeth) CHECK(out.invalidate_rkey == in.invalidate_rkey);
            }
        }
    }
}

TEST_CASE("extension headers appear in wire order", "[packet]") {
    // WRITE_ONLY_WITH_IMMEDIATE: BTH, RETH, ImmDt. ATOMIC_ACKNOWLEDGE: BTH, AETH, AtomicAckETH.
    const std::uint8_t pl[4] = {1, 2, 3, 4};
    auto b = ib_bytes(sample(Opcode::kRdmaWriteOnlyWithImmediate, pl));
    CHECK(b[12] == 0xFE);  // RETH VA MSB
    CHECK(b[28] == 0xCA);  // ImmDt
    CHECK(b[32] == 1);     // payload
    b = ib_bytes(sample(Opcode::kAtomicAcknowledge, {}));
    CHECK(b[12] == 0x63);  // AETH syndrome
    CHECK(b[16] == 0xA5);  // AtomicAckETH
}

TEST_CASE("build_headers refuses what cannot be sent", "[packet][edge]") {
    const std::uint8_t pl[8] = {};
    PacketDescriptor p = sample(Opcode::kAcknowledge, {});
    p.payload = pl;  // ACK carries no payload
    HeaderBuffer h;
    CHECK(build_headers(p, h) == WireStatus::kUnexpectedPayload);
    CHECK(h.size == 0);
    p.bth.opcode = static_cast<Opcode>(0x15);
    CHECK(build_headers(p, h) == WireStatus::kUnknownOpcode);
    p.bth.opcode = static_cast<Opcode>(0x24);  // UC SEND_ONLY
    CHECK(build_headers(p, h) == WireStatus::kUnknownOpcode);
}

TEST_CASE("parse rejects truncated input at every length", "[packet][parse][edge]") {
    const std::uint8_t pl[5] = {1, 2, 3, 4, 5};
    for (Opcode op :
         {Opcode::kSendOnly, Opcode::kRdmaWriteOnlyWithImmediate, Opcode::kRdmaReadRequest,
          Opcode::kAcknowledge, Opcode::kCompareSwap, Opcode::kAtomicAcknowledge}) {
        const auto full = ib_bytes(sample(op, pl));
        const std::size_t hdr = opcode_info(op).header_len;
        for (std::size_t n = 0; n < hdr; ++n) {
            // Copy into an exact-size heap buffer so ASan flags any over-read.
            std::vector<std::uint8_t> cut(full.begin(), full.begin() + static_cast<long>(n));
            PacketDescriptor out;
            CHECK(parse_ib_packet(cut, out) == WireStatus::kTruncated);
        }
    }
    PacketDescriptor out;
    CHECK(parse_ib_packet({}, out) == WireStatus::kTruncated);
}

TEST_CASE("parse rejects a bad transport version before anything else", "[packet][parse][edge]") {
    auto b = ib_bytes(sample(Opcode::kSendOnly, {}));
    for (std::uint8_t tver = 1; tver < 16; ++tver) {
        b[1] = static_cast<std::uint8_t>((b[1] & 0xF0) | tver);
        PacketDescriptor out;
        CHECK(parse_ib_packet(b, out) == WireStatus::kBadTver);
    }
    b[0] = 0x15;  // and unknown opcode: TVer is still the reported reason (rxe order)
    PacketDescriptor out;
    CHECK(parse_ib_packet(b, out) == WireStatus::kBadTver);
}

TEST_CASE("parse rejects unknown opcodes", "[packet][parse][edge]") {
    auto b = ib_bytes(sample(Opcode::kSendOnly, {}));
    for (int raw : {0x15, 0x18, 0x1C, 0x1D, 0x1F, 0x24, 0x64, 0x81, 0xFF}) {
        b[0] = static_cast<std::uint8_t>(raw);
        PacketDescriptor out;
        CHECK(parse_ib_packet(b, out) == WireStatus::kUnknownOpcode);
    }
}

TEST_CASE("parse rejects inconsistent pad counts and stray payload", "[packet][parse][edge]") {
    const std::uint8_t pl[6] = {1, 2, 3, 4, 5, 6};
    PacketDescriptor out;

    auto b = ib_bytes(sample(Opcode::kSendOnly, pl));  // 12 + 6 + pad 2
    REQUIRE(parse_ib_packet(b, out) == WireStatus::kOk);
    CHECK(out.payload.size() == 6);
    b[1] = static_cast<std::uint8_t>((b[1] & ~0x30) | (1 << 4));  // pad 1: 7 bytes payload + 1
    REQUIRE(parse_ib_packet(b, out) == WireStatus::kOk);          // consistent, just different
    CHECK(out.payload.size() == 7);

    // Pad count larger than what follows the headers.
    auto empty = ib_bytes(sample(Opcode::kSendOnly, {}));
    empty[1] = static_cast<std::uint8_t>(empty[1] | (3 << 4));
    CHECK(parse_ib_packet(empty, out) == WireStatus::kPadInconsistent);

    // Payload + pad not a multiple of 4: the pad count does not describe this length.
    auto odd = ib_bytes(sample(Opcode::kSendOnly, pl));
    odd.pop_back();
    CHECK(parse_ib_packet(odd, out) == WireStatus::kPadInconsistent);

    // FIRST/MIDDLE carry a full MTU: any pad is wrong.
    std::vector<std::uint8_t> mtu(256, 7);
    auto first = ib_bytes(sample(Opcode::kSendFirst, mtu));
    first[1] = static_cast<std::uint8_t>(first[1] | (2 << 4));
    CHECK(parse_ib_packet(first, out) == WireStatus::kPadInconsistent);

    // Opcodes without payload: no pad, no trailing bytes.
    auto ack = ib_bytes(sample(Opcode::kAcknowledge, {}));
    ack[1] = static_cast<std::uint8_t>(ack[1] | (1 << 4));
    CHECK(parse_ib_packet(ack, out) == WireStatus::kPadInconsistent);
    ack = ib_bytes(sample(Opcode::kAcknowledge, {}));
    ack.insert(ack.end(), {0, 0, 0, 0});
    CHECK(parse_ib_packet(ack, out) == WireStatus::kUnexpectedPayload);
    auto read = ib_bytes(sample(Opcode::kRdmaReadRequest, {}));
    read.insert(read.end(), {1, 2, 3, 4});
    CHECK(parse_ib_packet(read, out) == WireStatus::kUnexpectedPayload);
}

TEST_CASE("parse survives random bytes", "[packet][parse][fuzz]") {
    std::mt19937 rng(0x50F7D);  // fixed seed: failures reproduce
    int ok = 0;
    for (int iter = 0; iter < 60000; ++iter) {
        // A fresh exact-size heap buffer each time, so ASan catches any read past the end.
        std::vector<std::uint8_t> buf(rng() % 97);
        for (auto &b : buf)
            b = static_cast<std::uint8_t>(rng());
        // Bias half the inputs towards plausible headers so the deeper checks run too.
        if (iter % 2 && buf.size() >= 2) {
            buf[0] &= 0x1F;
            buf[1] &= 0xF0;
        }
        PacketDescriptor out;
        const WireStatus s = parse_ib_packet(buf, out);
        if (s == WireStatus::kOk) {
            ++ok;
            const OpcodeInfo &info = out.info();
            REQUIRE(info.valid);
            REQUIRE(out.payload.data() >= buf.data());
            REQUIRE(out.payload.data() + out.payload.size() <= buf.data() + buf.size());
            REQUIRE(info.header_len + out.payload.size() + out.bth.pad_count == buf.size());
        }
    }
    CHECK(ok > 0);  // the fuzzer did reach the success path
}

TEST_CASE("path MTU validity", "[segment][edge]") {
    for (std::uint32_t mtu : {256u, 512u, 1024u, 2048u, 4096u})
        CHECK(is_valid_path_mtu(mtu));
    for (std::uint32_t mtu : {0u, 1u, 128u, 255u, 257u, 1500u, 8192u}) {
        CHECK_FALSE(is_valid_path_mtu(mtu));
        CHECK(packets_for_message(100, mtu) == 0);
        CHECK_FALSE(segment_message(MessageOp::kSend, 100, mtu, 0));
    }
}

TEST_CASE("segmentation: zero length is one ONLY packet", "[segment][edge]") {
    CHECK(packets_for_message(0, 256) == 1);
    CHECK(read_request_psn_count(0, 4096) == 1);
    const auto s = segment_message(MessageOp::kSendWithImmediate, 0, 1024, 0);
    REQUIRE(s);
    CHECK(s->opcode == Opcode::kSendOnlyWithImmediate);
    CHECK(s->position == MsgPosition::kOnly);
    CHECK(s->offset == 0);
    CHECK(s->length == 0);
    CHECK_FALSE(segment_message(MessageOp::kSend, 0, 1024, 1));
}

TEST_CASE("segmentation at exact multiples of the MTU and one byte over", "[segment][edge]") {
    for (std::uint32_t mtu : {256u, 1024u, 4096u}) {
        CHECK(packets_for_message(1, mtu) == 1);
        CHECK(packets_for_message(mtu - 1, mtu) == 1);
        CHECK(packets_for_message(mtu, mtu) == 1);
        CHECK(packets_for_message(mtu + 1, mtu) == 2);
        CHECK(packets_for_message(2 * mtu, mtu) == 2);
        CHECK(packets_for_message(2 * mtu + 1, mtu) == 3);
        CHECK(read_request_psn_count(3 * mtu, mtu) == 3);

        // Exactly one MTU: ONLY with a full payload.
        auto s = segment_message(MessageOp::kRdmaWrite, mtu, mtu, 0);
        REQUIRE(s);
        CHECK(s->opcode == Opcode::kRdmaWriteOnly);
        CHECK(s->length == mtu);

        // One byte over: FIRST with mtu bytes, LAST with 1 byte.
        s = segment_message(MessageOp::kRdmaWrite, mtu + 1, mtu, 0);
        REQUIRE(s);
        CHECK(s->opcode == Opcode::kRdmaWriteFirst);
        CHECK(s->length == mtu);
        s = segment_message(MessageOp::kRdmaWrite, mtu + 1, mtu, 1);
        REQUIRE(s);
        CHECK(s->opcode == Opcode::kRdmaWriteLast);
        CHECK(s->offset == mtu);
        CHECK(s->length == 1);

        // Exactly three MTUs: FIRST, MIDDLE, LAST, all full.
        for (std::uint32_t i = 0; i < 3; ++i) {
            s = segment_message(MessageOp::kRdmaReadResponse, 3 * mtu, mtu, i);
            REQUIRE(s);
            CHECK(s->length == mtu);
            CHECK(s->offset == i * mtu);
        }
        CHECK(segment_message(MessageOp::kRdmaReadResponse, 3 * mtu, mtu, 1)->opcode ==
              Opcode::kRdmaReadResponseMiddle);
        CHECK(segment_message(MessageOp::kRdmaReadResponse, 3 * mtu, mtu, 2)->opcode ==
              Opcode::kRdmaReadResponseLast);
        CHECK_FALSE(segment_message(MessageOp::kRdmaReadResponse, 3 * mtu, mtu, 3));
    }
}

TEST_CASE("segmentation picks the right opcode family", "[segment]") {
    struct Row {
        MessageOp op;
        Opcode first, middle, last, only;
    };
    const Row rows[] = {
        {MessageOp::kSend, Opcode::kSendFirst, Opcode::kSendMiddle, Opcode::kSendLast,
         Opcode::kSendOnly},
        {MessageOp::kSendWithImmediate, Opcode::kSendFirst, Opcode::kSendMiddle,
         Opcode::kSendLastWithImmediate, Opcode::kSendOnlyWithImmediate},
        {MessageOp::kSendWithInvalidate, Opcode::kSendFirst, Opcode::kSendMiddle,
         Opcode::kSendLastWithInvalidate, Opcode::kSendOnlyWithInvalidate},
        {MessageOp::kRdmaWrite, Opcode::kRdmaWriteFirst, Opcode::kRdmaWriteMiddle,
         Opcode::kRdmaWriteLast, Opcode::kRdmaWriteOnly},
        {MessageOp::kRdmaWriteWithImmediate, Opcode::kRdmaWriteFirst, Opcode::kRdmaWriteMiddle,
         Opcode::kRdmaWriteLastWithImmediate, Opcode::kRdmaWriteOnlyWithImmediate},
        {MessageOp::kRdmaReadResponse, Opcode::kRdmaReadResponseFirst,
         Opcode::kRdmaReadResponseMiddle, Opcode::kRdmaReadResponseLast,
         Opcode::kRdmaReadResponseOnly},
    };
    for (const Row &r : rows) {
        CHECK(segment_message(r.op, 700, 256, 0)->opcode == r.first);
        CHECK(segment_message(r.op, 700, 256, 1)->opcode == r.middle);
        CHECK(segment_message(r.op, 700, 256, 2)->opcode == r.last);
        CHECK(segment_message(r.op, 700, 256, 2)->length == 700 - 512);
        CHECK(segment_message(r.op, 10, 256, 0)->opcode == r.only);
    }
    CHECK_FALSE(segment_message(static_cast<MessageOp>(99), 10, 256, 0));
}

TEST_CASE("segments tile the message and slice it in place", "[segment]") {
    std::vector<std::uint8_t> msg(5000);
    for (std::size_t i = 0; i < msg.size(); ++i)
        msg[i] = static_cast<std::uint8_t>(i);
    const std::uint32_t len = static_cast<std::uint32_t>(msg.size());
    const std::uint32_t n = packets_for_message(len, 1024);
    REQUIRE(n == 5);
    std::uint32_t next = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const auto s = segment_message(MessageOp::kSend, len, 1024, i);
        REQUIRE(s);
        CHECK(s->offset == next);
        const auto slice = segment_payload(msg, *s);
        CHECK(slice.data() == msg.data() + s->offset);
        CHECK(slice.size() == s->length);
        next += s->length;
    }
    CHECK(next == len);
    // A segment that does not fit the buffer yields an empty slice, not an over-read.
    CHECK(segment_payload(std::span(msg).first(10),
                          Segment{Opcode::kSendLast, MsgPosition::kLast, 8, 4})
              .empty());
}

TEST_CASE("largest messages do not overflow", "[segment][edge]") {
    const std::uint32_t big = 0xFFFFFFFF;
    CHECK(packets_for_message(big, 256) == 0x1000000);  // ceil(2^32-1 / 256)
    const auto last = segment_message(MessageOp::kRdmaWrite, big, 4096, 0xFFFFF);
    REQUIRE(last);
    CHECK(last->opcode == Opcode::kRdmaWriteLast);
    CHECK(last->offset == 0xFFFFF000);
    CHECK(last->length == 0xFFF);
}

TEST_CASE("WireStatus names", "[packet]") {
    CHECK(to_string(WireStatus::kOk) == "OK");
    CHECK(to_string(WireStatus::kBadIcrc) == "BAD_ICRC");
    CHECK(to_string(static_cast<WireStatus>(200)) == "UNKNOWN");
}
