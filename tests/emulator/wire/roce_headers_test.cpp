// Wire structs, opcode table, AETH syndromes and the RNR timer table.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <string>

#include "wire/roce_headers.hpp"

using namespace softndk::wire;

TEST_CASE("BTH fields land on the documented bits", "[headers][bth]") {
    Bth b{};
    b.set_opcode(Opcode::kSendOnly);
    b.set_solicited(true);
    b.set_pad_count(2);
    b.set_pkey(0xFFFF);
    b.set_dest_qp(0x000012);
    b.set_ack_req(true);
    b.set_psn(100);
    // Same bytes as wire_oracle.bth(0x04, 0x12, 100, se=True, pad=2, ackreq=True).
    const std::uint8_t want[12] = {0x04, 0xA0, 0xFF, 0xFF, 0x00, 0x00,
                                   0x00, 0x12, 0x80, 0x00, 0x00, 0x64};
    CHECK(std::memcmp(b.bytes, want, 12) == 0);

    b.set_mig_req(true);
    b.set_tver(0xF);
    b.set_fecn(true);
    b.set_becn(true);
    CHECK(b.bytes[1] == 0xEF);
    CHECK(b.bytes[4] == 0xC0);
    CHECK(b.solicited());
    CHECK(b.mig_req());
    CHECK(b.pad_count() == 2);
    CHECK(b.tver() == 0xF);
    CHECK(b.fecn());
    CHECK(b.becn());

    // Clearing one flag leaves its neighbours alone.
    b.set_solicited(false);
    b.set_becn(false);
    CHECK(b.bytes[1] == 0x6F);
    CHECK(b.bytes[4] == 0x80);
}

TEST_CASE("BTH setters mask oversized values to the field width", "[headers][bth][edge]") {
    Bth b{};
    b.set_dest_qp(0xFF123456);
    b.set_psn(0xFFFFFFFF);
    b.set_pad_count(7);
    b.set_tver(0x13);
    CHECK(b.dest_qp() == 0x123456);
    CHECK(b.psn() == 0xFFFFFF);
    CHECK(b.pad_count() == 3);
    CHECK(b.tver() == 3);
    CHECK(b.bytes[4] == 0);  // the DestQP junk did not leak into FECN/BECN
    CHECK(b.bytes[8] == 0);  // the PSN junk did not leak into AckReq
}

TEST_CASE("extension headers are big-endian", "[headers]") {
    Reth r{};
    r.set_va(0x0102030405060708);
    r.set_rkey(0x090A0B0C);
    r.set_dma_length(0x0D0E0F10);
    for (int i = 0; i < 16; ++i)
        CHECK(r.bytes[i] == i + 1);
    CHECK(r.va() == 0x0102030405060708);
    CHECK(r.rkey() == 0x090A0B0C);
    CHECK(r.dma_length() == 0x0D0E0F10);

    Aeth a{};
    a.set_syndrome(0x62);
    a.set_msn(0xFFABCDEF);
    CHECK(a.bytes[0] == 0x62);
    CHECK(a.bytes[1] == 0xAB);
    CHECK(a.msn() == 0xABCDEF);

    ImmDt imm{};
    imm.set_value(0xCAFEF00D);
    CHECK(imm.bytes[0] == 0xCA);
    CHECK(imm.bytes[3] == 0x0D);
    Ieth ie{};
    ie.set_rkey(0x00012345);
    CHECK(ie.bytes[1] == 0x01);
    CHECK(ie.rkey() == 0x00012345);

    AtomicEth at{};
    at.set_va(1);
    at.set_rkey(2);
    at.set_swap_add(3);
    at.set_compare(4);
    CHECK(at.bytes[7] == 1);
    CHECK(at.bytes[11] == 2);
    CHECK(at.bytes[19] == 3);
    CHECK(at.bytes[27] == 4);
    AtomicAckEth aa{};
    aa.set_orig(0x8000000000000001);
    CHECK(aa.bytes[0] == 0x80);
    CHECK(aa.orig() == 0x8000000000000001);
}

TEST_CASE("wire structs overlay unaligned buffers", "[headers][edge]") {
    alignas(8) std::uint8_t buf[1 + sizeof(Reth)] = {};
    Reth r{};
    r.set_va(0xDEADBEEFCAFEBABE);
    std::memcpy(buf + 1, &r, sizeof r);
    Reth back;
    std::memcpy(&back, buf + 1, sizeof back);
    CHECK(back.va() == 0xDEADBEEFCAFEBABE);
}

TEST_CASE("opcode table: names, header layouts, properties", "[headers][opcode]") {
    // Spot checks against rnic-model §3.1 / rxe_opcode.c.
    CHECK(opcode_info(Opcode::kSendOnly).header_len == 12);
    CHECK(opcode_info(Opcode::kRdmaWriteFirst).ext == kExtReth);
    CHECK(opcode_info(Opcode::kRdmaWriteOnlyWithImmediate).ext == (kExtReth | kExtImmDt));
    CHECK(opcode_info(Opcode::kRdmaReadRequest).header_len == 28);
    CHECK_FALSE(opcode_info(Opcode::kRdmaReadRequest).has_payload);
    CHECK(opcode_info(Opcode::kRdmaReadResponseMiddle).ext == kExtNone);
    CHECK(opcode_info(Opcode::kAtomicAcknowledge).header_len == 24);
    CHECK(opcode_info(Opcode::kCompareSwap).header_len == 40);
    CHECK(opcode_info(Opcode::kSendLastWithInvalidate).ext == kExtIeth);
    CHECK(opcode_info(Opcode::kRdmaWriteLastWithImmediate).consumes_rwqe);
    CHECK_FALSE(opcode_info(Opcode::kRdmaWriteLast).consumes_rwqe);
    CHECK(opcode_info(Opcode::kSendMiddle).consumes_rwqe);
    CHECK(opcode_info(Opcode::kSendMiddle).position == MsgPosition::kMiddle);
    CHECK_FALSE(opcode_info(Opcode::kSendFirst).requires_ack);
    CHECK(opcode_info(Opcode::kSendLast).requires_ack);
    CHECK(opcode_info(Opcode::kRdmaReadResponseFirst).carries_ack);
    CHECK_FALSE(opcode_info(Opcode::kRdmaReadResponseMiddle).carries_ack);
    CHECK_FALSE(opcode_info(Opcode::kAcknowledge).is_request);
    CHECK(to_string(Opcode::kRdmaReadResponseOnly) == "RDMA_READ_RESPONSE_ONLY");

    // 23 RC opcodes are modelled, with unique names.
    std::set<std::string> names;
    int valid = 0;
    for (const OpcodeInfo &e : kOpcodeTable) {
        if (!e.valid) continue;
        ++valid;
        names.insert(std::string(e.name));
    }
    CHECK(valid == 23);
    CHECK(names.size() == 23);
}

TEST_CASE("opcode lookup rejects other transports and unassigned codes",
          "[headers][opcode][edge]") {
    CHECK_FALSE(is_valid_opcode(0x15));
    CHECK_FALSE(is_valid_opcode(0x18));
    CHECK_FALSE(is_valid_opcode(0x1C));  // FLUSH: not modelled
    CHECK_FALSE(is_valid_opcode(0x1F));
    CHECK_FALSE(is_valid_opcode(0x24));  // UC SEND_ONLY
    CHECK_FALSE(is_valid_opcode(0x64));  // UD SEND_ONLY
    CHECK_FALSE(is_valid_opcode(kCnpOpcode));
    CHECK_FALSE(is_valid_opcode(0xFF));
    CHECK(opcode_info(std::uint8_t{0xFF}).name == "UNKNOWN");
    CHECK(to_string(static_cast<Opcode>(0x15)) == "UNKNOWN");
    for (int raw = 0; raw < 256; ++raw) {
        // Every byte maps to some entry without reading out of bounds.
        const OpcodeInfo &e = opcode_info(static_cast<std::uint8_t>(raw));
        CHECK(e.valid == (raw < 0x20 && raw != 0x15 && raw < 0x18));
    }
}

TEST_CASE("AETH syndrome encode/decode", "[headers][aeth]") {
    CHECK(aeth_ack_syndrome() == 0x1F);
    CHECK(aeth_ack_syndrome(3) == 0x03);
    CHECK(aeth_rnr_nak_syndrome(14) == 0x2E);
    CHECK(aeth_rnr_nak_syndrome(0xFF) == 0x3F);  // timer code masked to 5 bits
    CHECK(aeth_nak_syndrome(NakCode::kPsnSequenceError) == 0x60);
    CHECK(aeth_nak_syndrome(NakCode::kInvalidRequest) == 0x61);
    CHECK(aeth_nak_syndrome(NakCode::kRemoteAccessError) == 0x62);
    CHECK(aeth_nak_syndrome(NakCode::kRemoteOperationalError) == 0x63);

    const AethSyndrome ack = decode_aeth_syndrome(0x1F);
    CHECK(ack.is_ack());
    CHECK(ack.value == kAethCreditsInvalid);
    const AethSyndrome rnr = decode_aeth_syndrome(0x2E);
    CHECK(rnr.is_rnr_nak());
    CHECK(rnr.value == 14);
    CHECK(rnr_timer_usec(rnr.value) == 1280);
    for (std::uint8_t code = 0; code <= 3; ++code) {
        const AethSyndrome nak = decode_aeth_syndrome(static_cast<std::uint8_t>(0x60 | code));
        CHECK(nak.is_nak());
        CHECK(static_cast<std::uint8_t>(nak.nak_code()) == code);
    }
    CHECK(to_string(decode_aeth_syndrome(0x62).nak_code()) == "REMOTE_ACCESS_ERROR");
    CHECK(to_string(decode_aeth_syndrome(0x2E).type) == "RNR_NAK");

    // Reserved encodings decode as invalid rather than as something plausible.
    CHECK_FALSE(decode_aeth_syndrome(0x40).valid);  // type 10 reserved
    CHECK_FALSE(decode_aeth_syndrome(0x9F).valid);  // bit 7 reserved
    CHECK_FALSE(decode_aeth_syndrome(0x65).valid);  // NAK code 5 undefined
    CHECK_FALSE(decode_aeth_syndrome(0x40).is_ack());
    CHECK(decode_aeth_syndrome(0x64).is_nak());  // invalid RD request: defined, RD only
}

TEST_CASE("RNR timer codes follow IBA table 45", "[headers][aeth][edge]") {
    CHECK(rnr_timer_usec(0) == 655360);  // code 0 is the LONGEST wait
    CHECK(rnr_timer_usec(1) == 10);
    CHECK(rnr_timer_usec(14) == 1280);
    CHECK(rnr_timer_usec(31) == 491520);
    CHECK(rnr_timer_usec(32) == 655360);  // masked to 5 bits
    for (std::uint8_t c = 2; c < 32; ++c)
        CHECK(rnr_timer_usec(c) > rnr_timer_usec(c - 1));
}
