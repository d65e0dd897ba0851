// The device's trace hooks (emulator/trace/hooks.hpp) on two devices driven through the
// hardware interface (tests/emulator/support/driver.hpp), and what `softndk trace` makes
// of a lossy exchange: the lost packet, the NAK, the go-back-N retry, the comment in the
// pcapng.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver.hpp"
#include "softndk/trace.hpp"

using namespace softndk::emu;
using namespace softndk::emu::test;
namespace trace = softndk::trace;

namespace {

std::string temp_path(const std::string &name) {
    return std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/softndk-" +
           name + "-" + std::to_string(::getpid());
}

std::vector<trace::Record> read_records(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    trace::FileHeader header{};
    REQUIRE(in.read(reinterpret_cast<char *>(&header), sizeof header));
    std::vector<trace::Record> records;
    trace::Record r;
    while (in.read(reinterpret_cast<char *>(&r), sizeof r))
        records.push_back(r);
    std::stable_sort(records.begin(), records.end(),
                     [](const trace::Record &a, const trace::Record &b) { return a.seq < b.seq; });
    return records;
}

std::string run_softndk(const std::string &args) {
    const std::string out = temp_path("softndk-out");
    const std::string command =
        std::string(SOFTNDK_TRACE_TEST_SOFTNDK) + " " + args + " > " + out + " 2>&1";
    const int status = std::system(command.c_str());
    std::ifstream in(out, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::remove(out.c_str());
    INFO(command << "\n" << text.str());
    REQUIRE(status == 0);
    return text.str();
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("trace: a lost middle packet is traced with its NAK and go-back-N retry", "[trace]") {
    const std::string path = temp_path("lossy") + ".trace";
    REQUIRE(trace::open(path));
    uint32_t qp_a = 0, qp_b = 0;
    {
        ConnectedPair p;
        qp_a = p.qp_a->number;
        qp_b = p.qp_b->number;
        Buffer src(8192), dst(8192);
        auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
        auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
        auto seen = std::make_shared<int>(0);
        p.fabric->set_drop_filter([seen](const Packet &packet) {
            return packet.desc.bth.opcode == softndk::wire::Opcode::kSendMiddle && (*seen)++ == 1;
        });
        p.b->post_recv(*p.qp_b, {{dst.addr(), 8192, mr_b.token}});
        p.a->post_send(*p.qp_a, softndk::hw::WqeOpcode::kSend, {{src.addr(), 5000, mr_a.token}});
        REQUIRE(Driver::wait(*p.scq_a));
        REQUIRE(Driver::wait(*p.rcq_b));
        REQUIRE(p.fabric->dropped_packets() == 1);
    }
    trace::close();
    const auto records = read_records(path);

    auto count = [&](auto &&match) { return std::count_if(records.begin(), records.end(), match); };
    CHECK(count([](const trace::Record &r) { return r.type == trace::Type::kDevice; }) == 2);
    CHECK(count([&](const trace::Record &r) {
              return r.type == trace::Type::kQpState && r.device == 1 &&
                     r.body.qp_state.qp == qp_a && r.body.qp_state.to == 3;  // RTS
          }) == 1);
    CHECK(count([](const trace::Record &r) {
              return r.type == trace::Type::kCm && r.device == 2 && (r.flags & trace::kFlagRx) &&
                     r.body.cm.message_type == 1;  // REQ in
          }) == 1);
    // The SEND: fetched, then 5 PSNs (5000 B at MTU 1024).
    const auto start = std::find_if(records.begin(), records.end(), [&](const trace::Record &r) {
        return r.type == trace::Type::kWqeStart && r.device == 1 && r.body.wqe.qp == qp_a;
    });
    REQUIRE(start != records.end());
    CHECK(start->body.wqe.psn_count == 5);
    CHECK(start->body.wqe.length == 5000);
    const uint32_t lost_psn = (start->body.wqe.psn + 2) & 0xFFFFFF;  // the second MIDDLE
    // Sent twice (lost, then resent), received once.
    CHECK(count([&](const trace::Record &r) {
              return r.type == trace::Type::kPacketTx && r.device == 1 &&
                     r.body.packet.qp == qp_a && r.body.packet.psn == lost_psn;
          }) == 2);
    CHECK(count([&](const trace::Record &r) {
              return r.type == trace::Type::kPacketRx && r.device == 2 &&
                     r.body.packet.dest_qp == qp_b && r.body.packet.psn == lost_psn;
          }) == 1);
    // The NAK (PSN sequence error, syndrome 0x60) and the retry it caused.
    CHECK(count([](const trace::Record &r) {
              return r.type == trace::Type::kAck && r.device == 1 && r.body.packet.ext[0] == 0x60;
          }) == 1);
    CHECK(count([&](const trace::Record &r) {
              return r.type == trace::Type::kRetry && r.device == 1 && r.body.retry.qp == qp_a &&
                     r.body.retry.kind == static_cast<uint8_t>(trace::RetryKind::kSequence) &&
                     r.body.retry.psn == lost_psn;
          }) == 1);
    // Both completions, and the DMAs of the timing model.
    CHECK(count([&](const trace::Record &r) {
              return r.type == trace::Type::kCqe && r.device == 2 && r.body.cqe.qp == qp_b &&
                     (r.flags & trace::kFlagRecv) && r.body.cqe.byte_count == 5000 &&
                     r.body.cqe.syndrome == 0;
          }) == 1);
    CHECK(count([&](const trace::Record &r) {
              return r.type == trace::Type::kCqe && r.device == 1 && r.body.cqe.qp == qp_a &&
                     !(r.flags & trace::kFlagRecv) && r.body.cqe.syndrome == 0;
          }) == 1);
    CHECK(count([](const trace::Record &r) { return r.type == trace::Type::kDmaRead; }) > 0);
    // Every record's model time is set, and sequence numbers are unique.
    for (size_t i = 1; i < records.size(); ++i)
        REQUIRE(records[i].seq > records[i - 1].seq);

    // The converters: the listing names the loss and the retry, the pcapng comments it.
    const std::string text = run_softndk("trace " + path + " --format text");
    CHECK(text.find("go-back-N retry") != std::string::npos);
    // The first send of the lost PSN is the lost one; its resend arrived.
    std::vector<std::string> sends_of_lost;
    std::istringstream lines(text);
    char psn_text[16];
    std::snprintf(psn_text, sizeof psn_text, "psn %#08x", lost_psn);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("packet_tx") != std::string::npos &&
            line.find("SEND_MIDDLE") != std::string::npos &&
            line.find(psn_text) != std::string::npos)
            sends_of_lost.push_back(line);
    }
    REQUIRE(sends_of_lost.size() == 2);
    CHECK(sends_of_lost[0].find("lost: never arrived") != std::string::npos);
    CHECK(sends_of_lost[1].find("lost") == std::string::npos);
    // --clock wall: the same events dated by CLOCK_REALTIME (microseconds since 1970).
    const std::string wall = run_softndk("trace " + path + " --format text --clock wall");
    const auto first_line = wall.find('\n') + 1;
    CHECK(std::stod(wall.substr(first_line, 16)) > 1.6e15);
    CHECK(std::stod(text.substr(text.find('\n') + 1, 16)) < 1e9);
    const std::string pcap = path + ".pcapng";
    run_softndk("trace " + path + " --format pcap -o " + pcap);
    CHECK(read_file(pcap).find("lost: never arrived") != std::string::npos);
    std::remove(pcap.c_str());
    std::remove(path.c_str());
}
