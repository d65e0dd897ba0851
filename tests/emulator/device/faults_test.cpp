// Fault injection in the device (device/faults.hpp): the file parser and its errors,
// the seeded PRNG, and the packet faults' effect on the wire seen through the RC
// engine's counters. The consumer's view of every kind is in tests/provider/faults_test.cpp.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "../support/driver.hpp"
#include "device/faults.hpp"
#include "device/ini.hpp"

using namespace softndk;
using namespace softndk::emu;
using namespace softndk::emu::test;

namespace {

hw::FaultRequest spec(hw::FaultKind kind, uint32_t qp = hw::kNoObject) {
    hw::FaultRequest rq{};
    rq.kind = static_cast<uint32_t>(kind);
    rq.qp = qp;
    rq.probability_ppm = hw::kFaultCertain;
    return rq;
}

int32_t inject(Driver &d, hw::FaultRequest rq, uint32_t *id = nullptr) {
    hw::ObjectResponse rs{};
    const int32_t s = d.command(hw::CommandOpcode::kInjectFault, rq, rs);
    if (id != nullptr) *id = rs.object;
    return s;
}

// SOFTNDK_SEED for the devices a test creates; restored afterwards.
struct SeedEnvironment {
    explicit SeedEnvironment(const char *seed) { setenv("SOFTNDK_SEED", seed, 1); }
    ~SeedEnvironment() { unsetenv("SOFTNDK_SEED"); }
};

std::string parse_error(const std::string &text) {
    std::vector<hw::FaultRequest> out;
    std::string error;
    if (parse_fault_text(text, "faults.ini", out, error)) return "(parsed)";
    return error;
}

// One-packet SENDs from a to b, one at a time, each waited for: the sequence of
// packets a spec sees is the same in every run. Returns the completion times.
std::vector<uint64_t> send_one_by_one(ConnectedPair &p, int messages) {
    Buffer src(4096), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    std::vector<uint64_t> times;
    for (int i = 0; i < messages; ++i) {
        p.b->post_recv(*p.qp_b, {{dst.addr(), 4096, mr_b.token}});
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 64, mr_a.token}});
        auto c = Driver::wait(*p.scq_a, std::chrono::milliseconds(5000));
        REQUIRE(c);
        CHECK(c->syndrome == hw::Syndrome::kSuccess);
        times.push_back(c->completion_time_ns);
        REQUIRE(Driver::wait(*p.rcq_b));
    }
    return times;
}

}  // namespace

TEST_CASE("fault files: every armed kind parses with its fields", "[device][faults]") {
    const std::string text = R"(; a comment
[lossy]
kind = drop
qp = any
direction = tx
packet = send, ack
probability = 5%
count = 0

[late]
kind = delay
qp = 7
delay_ns = 20000

[no-qp]
kind = fail-command
command = create-qp
status = insufficient-resources
count = 2

[bad-read]
kind = fail-operation
operation = read
status = remote-access

[storm]
kind = rnr-storm
duration_ns = 1000000
probability = 0.5

[stale]
kind = expire-token
token = 0x1234
start_ns = 500
)";
    std::vector<hw::FaultRequest> out;
    std::string error;
    REQUIRE(parse_fault_text(text, "faults.ini", out, error));
    REQUIRE(out.size() == 6);
    CHECK(out[0].kind == static_cast<uint32_t>(hw::FaultKind::kPacketDrop));
    CHECK(out[0].qp == hw::kNoObject);
    CHECK(out[0].direction == static_cast<uint32_t>(hw::FaultDirection::kTransmit));
    CHECK(out[0].packet_class == (hw::kFaultPacketSend | hw::kFaultPacketAck));
    CHECK(out[0].probability_ppm == 50000);
    CHECK(out[0].count == 0);
    CHECK(std::string(reinterpret_cast<const char *>(out[0].name)) == "lossy");
    CHECK(out[1].qp == 7);
    CHECK(out[1].time_ns == 20000);
    CHECK(out[1].probability_ppm == hw::kFaultCertain);
    CHECK(out[2].operation == static_cast<uint32_t>(hw::CommandOpcode::kCreateQp));
    CHECK(out[2].status == status::kInsufficientResources);
    CHECK(out[2].count == 2);
    CHECK(out[3].operation == static_cast<uint32_t>(hw::FaultOperation::kRead));
    CHECK(out[3].status == static_cast<int32_t>(hw::Syndrome::kRemoteAccess));
    CHECK(out[3].count == 1);  // "the next one" unless said otherwise
    CHECK(out[4].time_ns == 1000000);
    CHECK(out[4].probability_ppm == 500000);
    CHECK(out[5].token == 0x1234);
    CHECK(out[5].start_ns == 500);
}

TEST_CASE("fault files: the example in docs/faults.md parses", "[device][faults]") {
    std::string doc, error;
    REQUIRE(read_text_file(SOFTNDK_DOCS_DIR "/faults.md", doc, error));
    const size_t start = doc.find("```ini\n");
    REQUIRE(start != std::string::npos);
    const size_t end = doc.find("```", start + 7);
    std::vector<hw::FaultRequest> out;
    INFO(error);
    CHECK(parse_fault_text(doc.substr(start + 7, end - start - 7), "faults.md", out, error));
    CHECK(out.size() == 6);
}

TEST_CASE("fault files: errors name the file, the line, the section and the key",
          "[device][faults]") {
    CHECK(parse_error("[a]\nkind = drop\ncolour = red\n") ==
          "faults.ini:3: [a] colour: unknown key 'colour' for kind drop");
    CHECK(parse_error("[a]\nkind = drop\nprobability = 1.5\n") ==
          "faults.ini:3: [a] probability: '1.5' is not a probability (0..1 or 0%..100%)");
    CHECK(parse_error("[a]\nkind = drop\nqp = 1\n").starts_with("faults.ini:3: [a] qp: "));
    CHECK(parse_error("[a]\nkind = drop\ndirection = up\n") ==
          "faults.ini:3: [a] direction: 'up' is not tx, rx or both");
    CHECK(parse_error("[a]\nkind = explode\n")
              .starts_with("faults.ini:2: [a] kind: unknown kind 'explode' (one of drop, delay,"));
    CHECK(parse_error("[a]\nkind = qp-error\n")
              .starts_with(
                  "faults.ini:2: [a] kind: kind qp-error acts at once on an existing object"));
    CHECK(parse_error("\n[slow]\nkind = delay\n") == "faults.ini:2: [slow] no delay_ns");
    CHECK(parse_error("[f]\nkind = fail-command\ncommand = create-qp\nstatus = 5\n")
              .starts_with("faults.ini:4: [f] status: '5' is not an error NTSTATUS"));
    CHECK(parse_error("[f]\nkind = fail-operation\nstatus = remote-access\ncount = 0\n")
              .starts_with("faults.ini:4: [f] count: "));
    CHECK(parse_error("kind = drop\n") ==
          "faults.ini:1: [] kind: a key outside a section (one [NAME] section per fault)");
    // The file as SOFTNDK_FAULTS names it: unreadable files say so.
    std::vector<hw::FaultRequest> out;
    std::string error;
    CHECK_FALSE(parse_fault_file("/nonexistent/faults.ini", out, error));
    CHECK(error.starts_with("/nonexistent/faults.ini: cannot open"));
}

TEST_CASE("fault PRNG: the same seed gives the same draws, another seed others",
          "[device][faults]") {
    auto fabric = std::make_shared<Fabric>(uint16_t{0});
    auto dev = std::make_shared<Device>(adapter(1, {"10.0.0.1"}), fabric);
    FaultInjector one(*dev, 42), two(*dev, 42), other(*dev, 43);
    std::vector<uint64_t> a, b, c;
    for (int i = 0; i < 16; ++i) {
        a.push_back(one.draw());
        b.push_back(two.draw());
        c.push_back(other.draw());
    }
    CHECK(a == b);
    CHECK(a != c);
}

TEST_CASE("fault: a probabilistic drop takes the same decisions under the same seed",
          "[device][faults][rc]") {
    auto run = [](const char *seed) {
        SeedEnvironment env(seed);
        ConnectedPair p;
        auto rq = spec(hw::FaultKind::kPacketDrop, p.qp_a->number);
        rq.direction = static_cast<uint32_t>(hw::FaultDirection::kTransmit);
        rq.packet_class = hw::kFaultPacketSend;
        rq.probability_ppm = 400000;  // 40 %
        REQUIRE(inject(*p.a, rq) == status::kSuccess);
        auto times = send_one_by_one(p, 10);
        const uint64_t drops = p.dev_a->counters().get(Counter::fault_drops);
        CHECK(p.dev_a->counters().get(Counter::faults_injected) == drops);
        // Every drop costs the requester an ACK timeout and a retransmission.
        CHECK(p.dev_a->counters().get(Counter::ack_timeouts) == drops);
        return std::make_pair(drops, times);
    };
    const auto first = run("7");
    const auto again = run("7");
    const auto other = run("8");
    CHECK(first.first > 0);
    CHECK(first.first < 10);
    CHECK(first == again);  // same drops, same completion times
    CHECK(first.second != other.second);
}

TEST_CASE("fault: a corrupted packet fails the receiver's ICRC check and is retried",
          "[device][faults][rc]") {
    ConnectedPair p;
    auto rq = spec(hw::FaultKind::kPacketCorrupt, p.qp_a->number);
    rq.direction = static_cast<uint32_t>(hw::FaultDirection::kTransmit);
    rq.count = 1;
    REQUIRE(inject(*p.a, rq) == status::kSuccess);
    send_one_by_one(p, 2);
    CHECK(p.dev_a->counters().get(Counter::fault_corruptions) == 1);
    CHECK(p.dev_a->counters().get(Counter::faults_injected) == 1);
    CHECK(p.dev_b->counters().get(Counter::icrc_errors) == 1);
    CHECK(p.dev_a->counters().get(Counter::ack_timeouts) == 1);
}

TEST_CASE("fault: a duplicated packet is seen by the responder as a duplicate",
          "[device][faults][rc]") {
    ConnectedPair p;
    auto rq = spec(hw::FaultKind::kPacketDuplicate, p.qp_b->number);
    rq.direction = static_cast<uint32_t>(hw::FaultDirection::kReceive);
    rq.packet_class = hw::kFaultPacketSend;
    rq.count = 1;
    REQUIRE(inject(*p.b, rq) == status::kSuccess);
    send_one_by_one(p, 1);
    CHECK(p.dev_b->counters().get(Counter::fault_duplicates) == 1);
    CHECK(p.dev_b->counters().get(Counter::duplicate_request) == 1);
    CHECK(p.dev_b->counters().get(Counter::rdma_recvs) <= 1);
    CHECK(Driver::drain(*p.rcq_b).empty());  // one receive consumed, not two
}

TEST_CASE("fault: a reordered packet arrives after the next one and costs a NAK",
          "[device][faults][rc]") {
    ConnectedPair p;
    Buffer src(4096), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    for (size_t i = 0; i < 3000; ++i)
        src.data()[i] = static_cast<uint8_t>(i * 13);
    auto rq = spec(hw::FaultKind::kPacketReorder, p.qp_a->number);
    rq.direction = static_cast<uint32_t>(hw::FaultDirection::kTransmit);
    rq.count = 1;
    REQUIRE(inject(*p.a, rq) == status::kSuccess);
    p.b->post_recv(*p.qp_b, {{dst.addr(), 4096, mr_b.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 3000, mr_a.token}});  // 3 packets
    auto c = Driver::wait(*p.scq_a, std::chrono::milliseconds(5000));
    REQUIRE(c);
    CHECK(c->syndrome == hw::Syndrome::kSuccess);
    REQUIRE(Driver::wait(*p.rcq_b));
    CHECK(std::memcmp(src.data(), dst.data(), 3000) == 0);
    CHECK(p.dev_a->counters().get(Counter::fault_reorders) == 1);
    CHECK(p.dev_b->counters().get(Counter::out_of_seq_request) >= 1);
}

TEST_CASE("fault: a delayed packet arrives its delay later in model time", "[device][faults][rc]") {
    ConnectedPair p;
    const auto base = send_one_by_one(p, 2);
    const uint64_t step = base[1] - base[0];
    auto rq = spec(hw::FaultKind::kPacketDelay, p.qp_a->number);
    rq.direction = static_cast<uint32_t>(hw::FaultDirection::kTransmit);
    rq.packet_class = hw::kFaultPacketSend;
    rq.count = 1;
    rq.time_ns = 2'000'000;  // 2 ms, far below the 67 ms ACK timeout
    REQUIRE(inject(*p.a, rq) == status::kSuccess);
    const auto delayed = send_one_by_one(p, 1);
    CHECK(delayed[0] >= base[1] + 2'000'000);
    CHECK(delayed[0] < base[1] + 2'000'000 + 10 * step + 100'000);
    CHECK(p.dev_a->counters().get(Counter::fault_delays) == 1);
    CHECK(p.dev_a->counters().get(Counter::ack_timeouts) == 0);
}

TEST_CASE("fault commands: bad specs are refused and faults go with their context",
          "[device][faults][commands]") {
    ConnectedPair p;
    CHECK(inject(*p.a, spec(static_cast<hw::FaultKind>(99))) == status::kInvalidParameter);
    auto drop = spec(hw::FaultKind::kPacketDrop);
    drop.probability_ppm = hw::kFaultCertain + 1;
    CHECK(inject(*p.a, drop) == status::kInvalidParameter);
    // A QP that does not exist (or is another consumer's), and immediate kinds without one.
    CHECK(inject(*p.a, spec(hw::FaultKind::kPacketDrop, 4000)) == status::kInvalidParameter);
    CHECK(inject(*p.a, spec(hw::FaultKind::kQpError)) == status::kInvalidParameter);
    auto cmd = spec(hw::FaultKind::kFailCommand);
    cmd.operation = static_cast<uint32_t>(hw::CommandOpcode::kDetach);
    cmd.status = status::kInsufficientResources;
    cmd.count = 1;
    CHECK(inject(*p.a, cmd) == status::kInvalidParameter);  // detach never fails
    cmd.operation = static_cast<uint32_t>(hw::CommandOpcode::kCreatePd);
    uint32_t id = 0;
    REQUIRE(inject(*p.a, cmd, &id) == status::kSuccess);
    CHECK(id != 0);
    CHECK(p.dev_a->faults().armed() == 1);
    CHECK(p.a->object_command(hw::CommandOpcode::kRemoveFault, id + 100) ==
          status::kInvalidParameter);
    CHECK(p.a->object_command(hw::CommandOpcode::kRemoveFault, id) == status::kSuccess);
    CHECK(p.dev_a->faults().armed() == 0);
    REQUIRE(inject(*p.a, cmd) == status::kSuccess);
    p.a.reset();  // the context detaches
    CHECK(p.dev_a->faults().armed() == 0);
}

TEST_CASE("fault commands: a consumer's faults reach only its own objects",
          "[device][faults][commands]") {
    auto fabric = std::make_shared<Fabric>(uint16_t{0});
    auto dev = std::make_shared<Device>(adapter(1, {"10.0.0.1"}), fabric);
    Driver mine(dev), theirs(dev);  // process id 0: two consumers that share nothing
    auto cmd = spec(hw::FaultKind::kFailCommand);
    cmd.operation = static_cast<uint32_t>(hw::CommandOpcode::kCreatePd);
    cmd.status = status::kInsufficientResources;
    cmd.count = 1;
    REQUIRE(inject(mine, cmd) == status::kSuccess);
    hw::ObjectRequest rq{};
    hw::ObjectResponse rs{};
    CHECK(theirs.command(hw::CommandOpcode::kCreatePd, rq, rs) == status::kSuccess);
    CHECK(mine.command(hw::CommandOpcode::kCreatePd, rq, rs) == status::kInsufficientResources);
    CHECK(mine.command(hw::CommandOpcode::kCreatePd, rq, rs) == status::kSuccess);
    CHECK(dev->counters().get(Counter::fault_failed_cmds) == 1);
    // Another consumer's token cannot be expired.
    Buffer buffer(4096);
    auto mr = theirs.register_mr(theirs.create_pd(), buffer.data(), buffer.size());
    auto expire = spec(hw::FaultKind::kExpireToken);
    expire.token = mr.token;
    CHECK(inject(mine, expire) == status::kInvalidParameter);
    CHECK(inject(theirs, expire) == status::kSuccess);
}

TEST_CASE("fault: an RNR storm answers SENDs with RNR NAKs until it ends", "[device][faults][rc]") {
    ConnectedPair p;
    const auto base = send_one_by_one(p, 1);
    auto rq = spec(hw::FaultKind::kRnrStorm, p.qp_b->number);
    rq.time_ns = 3'000'000;  // 3 ms; the requester's RNR timer is 0.64 ms (min_rnr_timer 12)
    REQUIRE(inject(*p.b, rq) == status::kSuccess);
    const auto stormy = send_one_by_one(p, 1);
    const uint64_t naks = p.dev_b->counters().get(Counter::fault_rnr_naks);
    CHECK(naks >= 4);
    CHECK(naks <= 6);
    CHECK(p.dev_b->counters().get(Counter::send_rnr_err) == naks);
    CHECK(p.dev_a->counters().get(Counter::rcvd_rnr_err) == naks);
    CHECK(p.dev_b->counters().get(Counter::faults_injected) == naks);
    CHECK(stormy[0] >= base[0] + 3'000'000);
    // Over: the next SEND goes straight in.
    send_one_by_one(p, 1);
    CHECK(p.dev_b->counters().get(Counter::fault_rnr_naks) == naks);
}

TEST_CASE("fault: the immediate kinds act and are counted", "[device][faults][rc]") {
    ConnectedPair p;
    Buffer src(4096), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    auto count = [](Device &d, Counter c) { return d.counters().get(c); };

    SECTION("fail-operation: the WQE fails with the syndrome, the QP goes to error") {
        auto rq = spec(hw::FaultKind::kFailOperation, p.qp_a->number);
        rq.operation = static_cast<uint32_t>(hw::FaultOperation::kRead);
        rq.status = static_cast<int32_t>(hw::Syndrome::kRemoteAccess);
        rq.count = 1;
        REQUIRE(inject(*p.a, rq) == status::kSuccess);
        SendOptions o;
        o.remote_address = dst.addr();
        o.remote_token = mr_b.token;
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{src.addr(), 64, mr_a.token}}, o);
        auto c = Driver::wait(*p.scq_a);
        REQUIRE(c);
        CHECK(c->syndrome == hw::Syndrome::kRemoteAccess);
        CHECK(c->wqe_opcode == hw::WqeOpcode::kRdmaRead);
        CHECK(count(*p.dev_a, Counter::fault_failed_ops) == 1);
        CHECK(count(*p.dev_a, Counter::malformed_wqes) == 0);
    }
    SECTION("expire-token: a WRITE with the token is refused from then on") {
        auto rq = spec(hw::FaultKind::kExpireToken);
        rq.token = mr_b.token;
        REQUIRE(inject(*p.b, rq) == status::kSuccess);
        SendOptions o;
        o.remote_address = dst.addr();
        o.remote_token = mr_b.token;
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 64, mr_a.token}}, o);
        auto c = Driver::wait(*p.scq_a);
        REQUIRE(c);
        CHECK(c->syndrome == hw::Syndrome::kRemoteAccess);
        CHECK(count(*p.dev_b, Counter::fault_expired_tokens) == 1);
    }
    SECTION("qp-error: pending receives flush with the cause") {
        p.b->post_recv(*p.qp_b, {{dst.addr(), 4096, mr_b.token}});
        auto rq = spec(hw::FaultKind::kQpError, p.qp_b->number);
        rq.status = static_cast<int32_t>(hw::Syndrome::kTransportRetryExceeded);
        REQUIRE(inject(*p.b, rq) == status::kSuccess);
        auto c = Driver::wait(*p.rcq_b);
        REQUIRE(c);
        CHECK(c->syndrome == hw::Syndrome::kWorkRequestFlushed);
        CHECK(c->vendor_syndrome == static_cast<uint32_t>(hw::Syndrome::kTransportRetryExceeded));
        CHECK(count(*p.dev_b, Counter::fault_qp_errors) == 1);
    }
    SECTION("kill-connection: both ends get kDisconnected") {
        REQUIRE(inject(*p.a, spec(hw::FaultKind::kKillConnection, p.qp_a->number)) ==
                status::kSuccess);
        CHECK(p.a->wait_event(hw::EqeType::kDisconnected));
        CHECK(p.b->wait_event(hw::EqeType::kDisconnected));
        CHECK(count(*p.dev_a, Counter::fault_killed_conns) == 1);
        CHECK(inject(*p.a, spec(hw::FaultKind::kKillConnection, p.qp_a->number)) ==
              status::kConnectionInvalid);
    }
    SECTION("peer-vanish: packets to and from the peer are lost, without a disconnect") {
        uint32_t id = 0;
        REQUIRE(inject(*p.a, spec(hw::FaultKind::kPeerVanish, p.qp_a->number), &id) ==
                status::kSuccess);
        p.b->post_recv(*p.qp_b, {{dst.addr(), 4096, mr_b.token}});
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 64, mr_a.token}});
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CHECK(count(*p.dev_a, Counter::fault_vanished) >= 1);
        CHECK(count(*p.dev_b, Counter::rcvd_pkts) == 0);
        CHECK(Driver::drain(*p.rcq_b).empty());
        CHECK(p.b->events().empty());
        CHECK(p.a->object_command(hw::CommandOpcode::kRemoveFault, id) == status::kSuccess);
    }
    SECTION("cq-overrun and eq-storm: the CQ error and the spurious events reach the EQ") {
        auto storm = spec(hw::FaultKind::kEqStorm, p.rcq_b->number);
        storm.count = 3;
        REQUIRE(inject(*p.b, storm) == status::kSuccess);
        int completions = 0;
        for (const auto &e : p.b->events())
            completions += e.type == static_cast<uint8_t>(hw::EqeType::kCompletion);
        CHECK(completions == 3);
        CHECK(count(*p.dev_b, Counter::fault_eq_events) == 3);
        REQUIRE(inject(*p.b, spec(hw::FaultKind::kCqOverrun, p.rcq_b->number)) == status::kSuccess);
        auto e = p.b->wait_event(hw::EqeType::kCqError);
        REQUIRE(e);
        CHECK(e->status == status::kBufferOverflow);
        CHECK(count(*p.dev_b, Counter::fault_cq_overruns) == 1);
        CHECK(count(*p.dev_b, Counter::cq_overflows) == 1);
        CHECK(count(*p.dev_b, Counter::faults_injected) == 4);
    }
}
