// packet_parser_fuzz.cpp - the RoCEv2 packet parser (emulator/wire): what arrives from
// the network. The input is one frame as captured (Ethernet first); the same bytes are
// also tried as a UDP payload (BTH first), which is what the UDP link parses.
//
// Invariants checked beyond "no crash, no sanitizer report":
//   - a frame parse_frame accepts re-serialises (serialize_frame) to a frame that
//     parses again to the same transport fields and payload;
//   - the IB packet inside an accepted frame parses the same on its own;
//   - frame_ib_packet around any BTH-first input yields a frame parse_frame rejects
//     only for reasons other than its ICRC (it computed that ICRC itself).
#include <cstring>
#include <vector>

#include "fuzz_input.hpp"
#include "wire/frame.hpp"
#include "wire/icrc.hpp"
#include "wire/packet.hpp"

using namespace softndk;
using softndk::fuzz::fuzz_check;

namespace {

bool same_transport(const wire::PacketDescriptor &a, const wire::PacketDescriptor &b) {
    return a.bth.opcode == b.bth.opcode && a.bth.dest_qp == b.bth.dest_qp &&
           a.bth.psn == b.bth.psn && a.bth.ack_req == b.bth.ack_req &&
           a.bth.solicited == b.bth.solicited && a.bth.pkey == b.bth.pkey &&
           a.payload.size() == b.payload.size() &&
           (a.payload.empty() ||
            std::memcmp(a.payload.data(), b.payload.data(), a.payload.size()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::span<const uint8_t> bytes(data, size);

    wire::PacketDescriptor frame{};
    if (wire::parse_frame(bytes, frame) == wire::WireStatus::kOk) {
        const std::vector<uint8_t> again = wire::serialize_frame(frame);
        fuzz_check(!again.empty(), "an accepted frame serialises");
        wire::PacketDescriptor reparsed{};
        fuzz_check(wire::parse_frame(again, reparsed) == wire::WireStatus::kOk,
                   "a re-serialised frame parses");
        fuzz_check(same_transport(frame, reparsed), "re-serialising keeps the transport fields");
    }

    if (size >= wire::kIcrcSize) {
        wire::PacketDescriptor ib{};
        (void)wire::parse_ib_packet(bytes.first(size - wire::kIcrcSize), ib);
    }

    if (size >= wire::kBthSize) {
        wire::PacketMeta meta{};
        meta.src_ip = wire::IpAddr::v4(192, 0, 2, 1);
        meta.dst_ip = wire::IpAddr::v4(192, 0, 2, 2);
        const std::vector<uint8_t> framed = wire::frame_ib_packet(meta, bytes);
        if (!framed.empty()) {
            wire::PacketDescriptor d{};
            fuzz_check(wire::parse_frame(framed, d) != wire::WireStatus::kBadIcrc,
                       "frame_ib_packet writes a valid ICRC");
        }
    }
    return 0;
}
