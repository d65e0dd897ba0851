// The test captures themselves: every frame parses back as what was intended.
#include <catch2/catch.hpp>

#include "conversation.hpp"
#include "wire/frame.hpp"

using namespace softndk::wire;

TEST_CASE("oracle RC conversation: 26 frames that parse and verify", "[conversation]") {
    const auto frames = test::oracle_rc_conversation();
    REQUIRE(frames.size() == 26);
    // PSNs of the requests follow wire_oracle.py: 100, 101..103, 104, 105 (READ: 2 PSNs) ...
    CHECK(frames[2].opcode == Opcode::kSendFirst);
    CHECK(frames[4].opcode == Opcode::kSendLast);
    CHECK(frames[4].psn == 103);
    CHECK(frames[8].opcode == Opcode::kRdmaReadRequest);
    CHECK(frames[10].opcode == Opcode::kRdmaReadResponseLast);
    CHECK(frames[10].psn == 106);
    CHECK(frames[25].psn == 112);
    for (const auto &f : frames) {
        PacketDescriptor p;
        REQUIRE(parse_frame(f.bytes, p) == WireStatus::kOk);
        CHECK(p.bth.opcode == f.opcode);
    }
    PacketDescriptor nak;
    REQUIRE(parse_frame(frames[18].bytes, nak) == WireStatus::kOk);
    CHECK(decode_aeth_syndrome(nak.aeth.syndrome).nak_code() == NakCode::kPsnSequenceError);
    CHECK(nak.bth.psn == 109);  // the expected PSN
}

TEST_CASE("Wireshark opcode names derive from the table names", "[conversation]") {
    CHECK(test::wireshark_opcode_name(Opcode::kSendOnly) == "Send Only");
    CHECK(test::wireshark_opcode_name(Opcode::kSendOnlyWithInvalidate) == "Send Only Invalidate");
    CHECK(test::wireshark_opcode_name(Opcode::kRdmaWriteOnlyWithImmediate) ==
          "RDMA Write Only Immediate");
    CHECK(test::wireshark_opcode_name(Opcode::kAtomicAcknowledge) == "Atomic Acknowledge");
}
