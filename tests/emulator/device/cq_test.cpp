// CQ resize (kResizeCq) and event moderation (kModerateCq), through the hardware
// interface. Contracts: hw_interface.hpp (kResizeCq, kModerateCq) and device/cq.hpp.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "driver.hpp"

using namespace softndk;
using namespace softndk::emu;
using namespace softndk::emu::test;
using namespace std::chrono_literals;

namespace {

// kResizeCq as the provider does it: on success the handle switches to the new
// allocation and goes on consuming at the same count.
int32_t resize(Driver &d, CqHandle &cq, uint32_t depth) {
    hw::CreateCqRequest rq{};
    rq.cq = cq.number;
    rq.depth = depth;
    hw::CreateCqResponse rs{};
    const int32_t s = d.command(hw::CommandOpcode::kResizeCq, rq, rs);
    if (s != 0) return s;
    REQUIRE(rs.cq == cq.number);
    auto *base = static_cast<std::byte *>(d.device_client().map(rs.memory));
    REQUIRE(base != nullptr);
    const uint32_t consumer = cq.ring->consumer();
    auto ring = CqConsumer::attach(base, rs.layout, consumer);
    REQUIRE(ring);
    cq.ring.emplace(*ring);
    cq.doorbell = reinterpret_cast<hw::CqDoorbell *>(base + rs.layout.doorbell_offset);
    return 0;
}

int32_t moderate(Driver &d, uint32_t cq, uint32_t count, uint32_t interval_us) {
    hw::ModerateCqRequest rq{};
    rq.cq = cq;
    rq.count = count;
    rq.interval_us = interval_us;
    hw::ObjectResponse rs{};
    return d.command(hw::CommandOpcode::kModerateCq, rq, rs);
}

// A connected pair whose active QP completes its sends on `send_cq_depth`-deep CQ.
struct Pair {
    explicit Pair(uint32_t send_cq_depth = 1024) {
        cq = p.a->create_cq(send_cq_depth);
        p.qp_a = p.a->create_qp(p.pd_a, *cq, *p.rcq_a);
        p.qp_b = p.b->create_qp(p.pd_b, *p.scq_b, *p.rcq_b);
        p.connect(4, 4);
        mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
        mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    }
    // One signaled RDMA WRITE: one requester CQE on `cq` (embedded: before it returns).
    uint16_t write() {
        SendOptions o;
        o.remote_address = dst.addr();
        o.remote_token = mr_b.token;
        return p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 8, mr_a.token}}, o);
    }
    // A SEND that the peer receives; `flags` may add kCtrlSolicited.
    void send(uint8_t flags) {
        SendOptions o;
        o.flags = flags;
        p.b->post_recv(*p.qp_b, {{dst.addr(), 64, mr_b.token}});
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 8, mr_a.token}}, o);
    }
    // Completion EQEs for `n` on `d` since the last call (other events are dropped).
    static int completions(Driver &d, uint32_t n) {
        int count = 0;
        for (auto &e : d.events())
            count += e.type == static_cast<uint8_t>(hw::EqeType::kCompletion) && e.object == n;
        return count;
    }
    int errors() {
        int count = 0;
        for (auto &e : p.a->events())
            count += e.type == static_cast<uint8_t>(hw::EqeType::kCqError);
        return count;
    }

    ConnectedPair p;
    std::unique_ptr<CqHandle> cq;
    Buffer src{4096}, dst{4096};
    MrHandle mr_a, mr_b;
};

}  // namespace

// ---- resize

TEST_CASE("CQ resize carries queued CQEs over in order, at the same counts", "[device][cq]") {
    Pair t(4);  // a 4-entry ring
    std::vector<uint16_t> posted;
    for (int i = 0; i < 4; ++i)
        posted.push_back(t.write());
    REQUIRE(Driver::drain(*t.cq).size() == 4);  // consumer 4: the second pass (owner 0)
    posted.clear();
    for (int i = 0; i < 3; ++i)
        posted.push_back(t.write());
    hw::Cqe c{};
    REQUIRE(Driver::poll(*t.cq, c));  // consumer 5, producer 7
    CHECK(c.wqe_counter == posted[0]);

    REQUIRE(resize(*t.p.a, *t.cq, 8) == 0);
    CHECK(t.cq->ring->entries() == 8);
    auto carried = Driver::drain(*t.cq);
    REQUIRE(carried.size() == 2);
    CHECK(carried[0].wqe_counter == posted[1]);
    CHECK(carried[1].wqe_counter == posted[2]);
    CHECK((carried[0].op_own >> 4) == static_cast<uint8_t>(hw::CqeOpcode::kRequester));

    // Count 7 goes to slot 7; count 8 is slot 0 on the second pass of the new ring,
    // which must read as stale although the new memory started zeroed.
    const uint16_t w7 = t.write();
    auto one = Driver::drain(*t.cq);
    REQUIRE(one.size() == 1);
    CHECK(one[0].wqe_counter == w7);
    CHECK(Driver::drain(*t.cq).empty());

    // The new ring really holds 8: more than the old 4 fit without an overflow.
    posted.clear();
    for (int i = 0; i < 8; ++i)
        posted.push_back(t.write());
    auto all = Driver::drain(*t.cq);
    REQUIRE(all.size() == 8);
    for (size_t i = 0; i < all.size(); ++i)
        CHECK(all[i].wqe_counter == posted[i]);
    CHECK(t.errors() == 0);
}

TEST_CASE("CQ resize refuses bad depths and a shrink below the queued CQEs", "[device][cq]") {
    Pair t(4);
    std::vector<uint16_t> posted;
    for (int i = 0; i < 3; ++i)
        posted.push_back(t.write());
    SECTION("depth 0 and above the maximum") {
        CHECK(resize(*t.p.a, *t.cq, 0) == status::kInvalidParameter);
        CHECK(resize(*t.p.a, *t.cq, t.p.a->limits.max_cq_depth + 1) == status::kInvalidParameter);
    }
    SECTION("below the queued CQEs: BUFFER_OVERFLOW and nothing changes") {
        CHECK(resize(*t.p.a, *t.cq, 2) == status::kBufferOverflow);
        CHECK(resize(*t.p.a, *t.cq, 1) == status::kBufferOverflow);
    }
    SECTION("another context's CQ, or no CQ") {
        Driver other(t.p.dev_a);
        CHECK(resize(other, *t.cq, 16) == status::kInvalidParameter);
        CqHandle none;
        none.number = 4000;
        CHECK(resize(*t.p.a, none, 16) == status::kInvalidParameter);
    }
    SECTION("a consumer count the device cannot believe") {
        // Ahead of the producer: a broken provider. Refused, the device is unharmed.
        consume_entries(t.cq->doorbell->consumer, 1000);
        CHECK(resize(*t.p.a, *t.cq, 16) == status::kInvalidParameter);
        consume_entries(t.cq->doorbell->consumer, 0);
    }
    // Whatever was refused, the old ring still delivers everything.
    auto all = Driver::drain(*t.cq);
    REQUIRE(all.size() == 3);
    for (size_t i = 0; i < all.size(); ++i)
        CHECK(all[i].wqe_counter == posted[i]);
}

TEST_CASE("CQ resize to exactly the queued CQEs, then shrink an empty CQ", "[device][cq]") {
    Pair t(8);
    std::vector<uint16_t> posted;
    for (int i = 0; i < 3; ++i)
        posted.push_back(t.write());
    REQUIRE(resize(*t.p.a, *t.cq, 3) == 0);  // 4 entries, 3 queued
    CHECK(t.cq->ring->entries() == 4);
    posted.push_back(t.write());  // fills the ring
    auto all = Driver::drain(*t.cq);
    REQUIRE(all.size() == 4);
    for (size_t i = 0; i < all.size(); ++i)
        CHECK(all[i].wqe_counter == posted[i]);
    REQUIRE(resize(*t.p.a, *t.cq, 1) == 0);
    CHECK(t.cq->ring->entries() == 1);
    const uint16_t w = t.write();
    hw::Cqe c{};
    REQUIRE(Driver::poll(*t.cq, c));
    CHECK(c.wqe_counter == w);
    CHECK(t.errors() == 0);
}

TEST_CASE("CQ resize keeps the arm: pending, satisfied after, and re-armed after", "[device][cq]") {
    Pair t(4);
    const uint32_t n = t.cq->number;
    SECTION("an arm published before the resize fires on the next CQE") {
        t.p.a->arm(*t.cq, hw::ArmType::kAny);
        REQUIRE(resize(*t.p.a, *t.cq, 16) == 0);
        CHECK(Pair::completions(*t.p.a, n) == 0);
        t.write();
        CHECK(Pair::completions(*t.p.a, n) == 1);
    }
    SECTION("an arm whose doorbell the device has not serviced yet is taken by the resize") {
        // Arm without ringing: only the record says so.
        std::atomic_ref(t.cq->doorbell->arm_type.value)
            .store(static_cast<uint32_t>(hw::ArmType::kAny), std::memory_order_relaxed);
        std::atomic_ref(t.cq->doorbell->arm_sequence.value)
            .store(++t.cq->arm_sequence, std::memory_order_release);
        REQUIRE(resize(*t.p.a, *t.cq, 16) == 0);
        t.write();
        CHECK(Pair::completions(*t.p.a, n) == 1);
    }
    SECTION("the arm sequence continues in the new record") {
        REQUIRE(resize(*t.p.a, *t.cq, 16) == 0);
        t.p.a->arm(*t.cq, hw::ArmType::kAny);
        t.write();
        CHECK(Pair::completions(*t.p.a, n) == 1);
        Driver::drain(*t.cq);
        t.p.a->arm(*t.cq, hw::ArmType::kAny);
        t.write();
        CHECK(Pair::completions(*t.p.a, n) == 1);
    }
}

// ---- moderation

TEST_CASE("CQ moderation: the count triggers the event of an ANY arm", "[device][cq]") {
    Pair t;
    const uint32_t n = t.cq->number;
    REQUIRE(moderate(*t.p.a, n, 4, 0) == 0);
    t.p.a->arm(*t.cq, hw::ArmType::kAny);
    for (int i = 0; i < 3; ++i)
        t.write();
    CHECK(Pair::completions(*t.p.a, n) == 0);
    t.write();
    CHECK(Pair::completions(*t.p.a, n) == 1);
    // One-shot as ever: nothing more until re-armed, and the count restarts at arming.
    t.write();
    CHECK(Pair::completions(*t.p.a, n) == 0);
    Driver::drain(*t.cq);
    t.p.a->arm(*t.cq, hw::ArmType::kAny);
    for (int i = 0; i < 3; ++i)
        t.write();
    CHECK(Pair::completions(*t.p.a, n) == 0);
    t.write();
    CHECK(Pair::completions(*t.p.a, n) == 1);
}

TEST_CASE("CQ moderation: the interval triggers after the first CQE", "[device][cq]") {
    Pair t;
    const uint32_t n = t.cq->number;
    REQUIRE(moderate(*t.p.a, n, 4, 20000) == 0);  // 20 ms
    t.p.a->arm(*t.cq, hw::ArmType::kAny);
    std::this_thread::sleep_for(30ms);  // no CQE: no timer, no event
    CHECK(Pair::completions(*t.p.a, n) == 0);
    const auto start = std::chrono::steady_clock::now();
    t.write();  // the timer starts at this CQE, i.e. after `start`
    auto e = t.p.a->wait_event(hw::EqeType::kCompletion, 2000ms);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    REQUIRE(e);
    CHECK(e->object == n);
    CHECK(elapsed >= 15ms);  // the timer cannot fire before start + 20 ms
    CHECK(Pair::completions(*t.p.a, n) == 0);
}

TEST_CASE("CQ moderation: a count reached first voids the interval timer", "[device][cq]") {
    Pair t;
    const uint32_t n = t.cq->number;
    REQUIRE(moderate(*t.p.a, n, 2, 20000) == 0);
    t.p.a->arm(*t.cq, hw::ArmType::kAny);
    t.write();  // starts the 20 ms timer
    t.write();  // count reached
    CHECK(Pair::completions(*t.p.a, n) == 1);
    Driver::drain(*t.cq);
    t.p.a->arm(*t.cq, hw::ArmType::kAny);  // armed again, nothing new
    std::this_thread::sleep_for(60ms);     // the old timer ran by now and must do nothing
    CHECK(Pair::completions(*t.p.a, n) == 0);
}

TEST_CASE("CQ moderation keeps the arm rules", "[device][cq]") {
    Pair t;
    const uint32_t n = t.cq->number;
    const uint32_t rn = t.p.rcq_b->number;
    SECTION("not armed: no event at all") {
        REQUIRE(moderate(*t.p.a, n, 2, 1000) == 0);
        for (int i = 0; i < 3; ++i)
            t.write();
        std::this_thread::sleep_for(20ms);
        CHECK(Pair::completions(*t.p.a, n) == 0);
    }
    SECTION("0/0 and count 1 are a notification per CQE") {
        REQUIRE(moderate(*t.p.a, n, 4, 20000) == 0);
        REQUIRE(moderate(*t.p.a, n, 0, 0) == 0);
        t.p.a->arm(*t.cq, hw::ArmType::kAny);
        t.write();
        CHECK(Pair::completions(*t.p.a, n) == 1);
        Driver::drain(*t.cq);
        REQUIRE(moderate(*t.p.a, n, 1, 0) == 0);
        t.p.a->arm(*t.cq, hw::ArmType::kAny);
        t.write();
        CHECK(Pair::completions(*t.p.a, n) == 1);
    }
    SECTION("turning moderation off releases an event held back") {
        REQUIRE(moderate(*t.p.a, n, 4, 0) == 0);
        t.p.a->arm(*t.cq, hw::ArmType::kAny);
        t.write();
        CHECK(Pair::completions(*t.p.a, n) == 0);
        REQUIRE(moderate(*t.p.a, n, 0, 0) == 0);
        CHECK(Pair::completions(*t.p.a, n) == 1);
    }
    SECTION("an arm with unnotified CQEs queued still fires at once") {
        REQUIRE(moderate(*t.p.a, n, 4, 0) == 0);
        t.write();
        t.p.a->arm(*t.cq, hw::ArmType::kAny);
        CHECK(Pair::completions(*t.p.a, n) == 1);
    }
    SECTION("a SOLICITED arm is not delayed") {
        REQUIRE(moderate(*t.p.b, rn, 4, 1000000) == 0);
        t.p.b->arm(*t.p.rcq_b, hw::ArmType::kSolicited);
        t.send(hw::kCtrlSignaled);
        CHECK(Pair::completions(*t.p.b, rn) == 0);
        t.send(hw::kCtrlSignaled | hw::kCtrlSolicited);
        CHECK(Pair::completions(*t.p.b, rn) == 1);
    }
    SECTION("an error CQE is not delayed") {
        REQUIRE(moderate(*t.p.b, rn, 4, 1000000) == 0);
        t.p.b->arm(*t.p.rcq_b, hw::ArmType::kAny);
        t.p.b->post_recv(*t.p.qp_b, {{t.dst.addr(), 64, t.mr_b.token}});
        REQUIRE(t.p.b->object_command(hw::CommandOpcode::kFlushQp, t.p.qp_b->number) == 0);
        CHECK(Pair::completions(*t.p.b, rn) == 1);
    }
    SECTION("unknown or foreign CQ") {
        CHECK(moderate(*t.p.a, 4000, 4, 0) == status::kInvalidParameter);
        Driver other(t.p.dev_a);
        CHECK(moderate(other, n, 4, 0) == status::kInvalidParameter);
    }
}
