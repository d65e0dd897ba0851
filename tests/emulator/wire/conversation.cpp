// conversation.cpp - see conversation.hpp.
#include "conversation.hpp"

#include <fstream>

#include "wire/frame.hpp"
#include "wire/pcap_writer.hpp"

namespace softndk::wire::test {
namespace {

constexpr std::uint32_t kQpA = 0x11;
constexpr std::uint32_t kQpB = 0x12;
constexpr std::uint32_t kMtu = 256;
constexpr std::uint8_t kAck = aeth_ack_syndrome();

std::vector<std::uint8_t> bytes_of(std::string_view s) {
    return {s.begin(), s.end()};
}

class Builder {
  public:
    Builder(IpAddr a, IpAddr b) : a_(a), b_(b) {}

    // A -> B request.
    PacketDescriptor req(Opcode op, std::uint32_t psn, std::span<const std::uint8_t> payload = {},
                         bool ack_req = true) const {
        PacketDescriptor p;
        p.bth.opcode = op;
        p.bth.psn = psn;
        p.bth.dest_qp = kQpB;
        p.bth.ack_req = ack_req;
        p.payload = payload;
        p.meta.src_ip = a_;
        p.meta.dst_ip = b_;
        p.meta.udp_src_port = 0xC011;
        return p;
    }
    // B -> A response.
    PacketDescriptor rsp(Opcode op, std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn,
                         std::span<const std::uint8_t> payload = {}) const {
        PacketDescriptor p;
        p.bth.opcode = op;
        p.bth.psn = psn;
        p.bth.dest_qp = kQpA;
        p.aeth = AethFields{syndrome, msn};
        p.payload = payload;
        p.meta.src_ip = b_;
        p.meta.dst_ip = a_;
        p.meta.udp_src_port = 0xC012;
        return p;
    }
    void emit(const PacketDescriptor &p) {
        frames_.push_back({serialize_frame(p), p.bth.opcode, p.bth.psn, p.bth.dest_qp});
    }
    std::vector<CapturedFrame> take() { return std::move(frames_); }

  private:
    IpAddr a_, b_;
    std::vector<CapturedFrame> frames_;
};

}  // namespace

std::vector<CapturedFrame> oracle_rc_conversation() {
    Builder c(IpAddr::v4(192, 0, 2, 1), IpAddr::v4(192, 0, 2, 2));
    std::uint32_t msn = 0;

    // 1. SEND_ONLY, solicited, 10-byte payload (pad 2).
    const auto hello = bytes_of("hello rnic");
    auto p = c.req(Opcode::kSendOnly, 100, hello);
    p.bth.solicited = true;
    c.emit(p);
    c.emit(c.rsp(Opcode::kAcknowledge, 100, kAck, ++msn));

    // 2. A 612-byte SEND at MTU 256: FIRST/MIDDLE/LAST, AckReq on LAST only.
    std::vector<std::uint8_t> msg;
    for (int r = 0; r < 2; ++r) {
        for (int i = 0; i < 256; ++i)
            msg.push_back(static_cast<std::uint8_t>(i));
    }
    msg.resize(612, 0);
    std::uint32_t psn = 101;
    const std::uint32_t n = packets_for_message(static_cast<std::uint32_t>(msg.size()), kMtu);
    for (std::uint32_t i = 0; i < n; ++i, ++psn) {
        const Segment s = *segment_message(MessageOp::kSend, 612, kMtu, i);
        c.emit(c.req(s.opcode, psn, segment_payload(msg, s), s.position == MsgPosition::kLast));
    }
    c.emit(c.rsp(Opcode::kAcknowledge, psn - 1, kAck, ++msn));

    // 3. RDMA WRITE ONLY.
    const std::vector<std::uint8_t> w64(64, 'W');
    p = c.req(Opcode::kRdmaWriteOnly, psn, w64);
    p.reth = RethFields{0x7F0000001000, 0x00012345, 64};
    c.emit(p);
    c.emit(c.rsp(Opcode::kAcknowledge, psn, kAck, ++msn));
    ++psn;

    // 4. RDMA READ of 300 bytes: the request consumes 2 PSNs.
    p = c.req(Opcode::kRdmaReadRequest, psn);
    p.reth = RethFields{0x7F0000002000, 0x00012345, 300};
    c.emit(p);
    ++msn;
    std::vector<std::uint8_t> data(300);
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<std::uint8_t>(i * 7);
    const std::uint32_t reads = read_request_psn_count(300, kMtu);
    for (std::uint32_t i = 0; i < reads; ++i) {
        const Segment s = *segment_message(MessageOp::kRdmaReadResponse, 300, kMtu, i);
        c.emit(c.rsp(s.opcode, psn + i, kAck, msn, segment_payload(data, s)));
    }
    psn += reads;

    // 5. SEND_ONLY_WITH_INVALIDATE -> RNR NAK (timer 14 = 1.28 ms), retry, ACK.
    const auto inv = bytes_of("inv!0123");
    p = c.req(Opcode::kSendOnlyWithInvalidate, psn, inv);
    p.invalidate_rkey = 0x00012345;
    c.emit(p);
    c.emit(c.rsp(Opcode::kAcknowledge, psn, aeth_rnr_nak_syndrome(14), msn));
    c.emit(p);
    c.emit(c.rsp(Opcode::kAcknowledge, psn, kAck, ++msn));
    ++psn;

    // 6. WRITE with immediate.
    const auto immdata = bytes_of("imm-dataimm-data");
    p = c.req(Opcode::kRdmaWriteOnlyWithImmediate, psn, immdata);
    p.reth = RethFields{0x7F0000003000, 0x00012345, 16};
    p.imm = 0xCAFEF00D;
    c.emit(p);
    c.emit(c.rsp(Opcode::kAcknowledge, psn, kAck, ++msn));
    ++psn;

    // 7. Lost packet: psn+1 arrives first -> NAK PSN sequence error with ePSN, go-back-N.
    const auto late = bytes_of("late");
    const auto lost = bytes_of("lost");
    c.emit(c.req(Opcode::kSendOnly, psn + 1, late));
    c.emit(c.rsp(Opcode::kAcknowledge, psn, aeth_nak_syndrome(NakCode::kPsnSequenceError), msn));
    c.emit(c.req(Opcode::kSendOnly, psn, lost));
    c.emit(c.req(Opcode::kSendOnly, psn + 1, late));
    msn += 2;
    c.emit(c.rsp(Opcode::kAcknowledge, psn + 1, kAck, msn));
    psn += 2;

    // 8. FETCH_ADD and its atomic ACK.
    p = c.req(Opcode::kFetchAdd, psn);
    p.atomic_eth = AtomicEthFields{0x7F0000004000, 0x00012345, 1, 0};
    c.emit(p);
    auto ack = c.rsp(Opcode::kAtomicAcknowledge, psn, kAck, ++msn);
    ack.atomic_ack_orig = 41;
    c.emit(ack);
    ++psn;

    // 9. WRITE with a bad rkey -> NAK remote access error.
    const std::vector<std::uint8_t> x8(8, 'X');
    p = c.req(Opcode::kRdmaWriteOnly, psn, x8);
    p.reth = RethFields{0x7F0000005000, 0x0BAD0BAD, 8};
    c.emit(p);
    c.emit(c.rsp(Opcode::kAcknowledge, psn, aeth_nak_syndrome(NakCode::kRemoteAccessError), msn));
    return c.take();
}

std::vector<CapturedFrame> every_opcode_conversation(bool ipv6) {
    const IpAddr a = ipv6 ? IpAddr::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
                          : IpAddr::v4(192, 0, 2, 1);
    const IpAddr b = ipv6 ? IpAddr::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2})
                          : IpAddr::v4(192, 0, 2, 2);
    Builder c(a, b);
    std::vector<std::uint8_t> full(kMtu);
    for (std::size_t i = 0; i < full.size(); ++i)
        full[i] = static_cast<std::uint8_t>(i ^ 0x5A);
    const std::span<const std::uint8_t> odd = std::span<const std::uint8_t>(full).first(37);

    std::uint32_t psn = 0xFFFFF0;  // crosses the 24-bit wrap on the way
    for (std::size_t raw = 0; raw < kOpcodeTable.size(); ++raw) {
        const OpcodeInfo &info = kOpcodeTable[raw];
        if (!info.valid) continue;
        const auto op = static_cast<Opcode>(raw);
        std::span<const std::uint8_t> payload;
        if (info.has_payload) {
            const bool full_mtu =
                info.position == MsgPosition::kFirst || info.position == MsgPosition::kMiddle;
            payload = full_mtu ? std::span<const std::uint8_t>(full) : odd;
        }
        PacketDescriptor p = info.is_request ? c.req(op, psn, payload, info.requires_ack)
                                             : c.rsp(op, psn, kAck, 7, payload);
        p.bth.solicited = info.is_request && info.requires_ack &&
                          info.family != OpFamily::kAtomic && info.family != OpFamily::kReadRequest;
        p.reth = RethFields{0x00007F00DEAD0000 + raw, 0x00012300 + static_cast<std::uint32_t>(raw),
                            static_cast<std::uint32_t>(payload.size())};
        p.atomic_eth = AtomicEthFields{0x7F0000004000, 0x00012345, 5, 9};
        p.atomic_ack_orig = 0x1122334455667788;
        p.imm = 0xCAFEF00D;
        p.invalidate_rkey = 0x00abcd01;
        c.emit(p);
        psn = (psn + 1) & 0xFFFFFF;
    }
    return c.take();
}

bool write_capture(const std::string &path, const std::vector<CapturedFrame> &frames,
                   bool nanosecond_timestamps) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    PcapWriter w(
        f, nanosecond_timestamps ? PcapTimestamp::kNanoseconds : PcapTimestamp::kMicroseconds);
    std::uint64_t t_ns = 1'700'000'000'000'000'000ull;  // an arbitrary virtual-clock epoch
    for (const CapturedFrame &fr : frames) {
        if (!w.write(t_ns, fr.bytes)) return false;
        t_ns += 1000;
    }
    f.flush();
    return f.good();
}

std::string wireshark_opcode_name(Opcode op) {
    const std::string_view name = to_string(op);
    std::string out;
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('_', start);
        if (end == std::string_view::npos) end = name.size();
        const std::string_view word = name.substr(start, end - start);
        if (word != "WITH") {
            if (!out.empty()) out += ' ';
            if (word == "RDMA") {
                out += word;
            } else {
                out += word[0];
                for (char ch : word.substr(1)) {
                    out += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
                }
            }
        }
        start = end + 1;
    }
    return out;
}

}  // namespace softndk::wire::test
