// RC engine through the hardware interface: data movement, completions, errors, retries.
#include <catch2/catch.hpp>

#include <numeric>

#include "driver.hpp"
#include "rc/engine.hpp"
#include "wire/psn.hpp"

using namespace softndk;
using namespace softndk::emu;
using namespace softndk::emu::test;

namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
    return v;
}

uint8_t cqe_opcode(const hw::Cqe &c) {
    return c.op_own >> 4;
}

}  // namespace

TEST_CASE("SEND lands in the posted receive and both sides complete", "[rc][send]") {
    ConnectedPair p;
    Buffer src(4096), dst(4096);
    auto data = pattern(3000, 1);
    std::memcpy(src.data(), data.data(), data.size());
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());

    p.b->post_recv(*p.qp_b, {{dst.addr(), 4096, mr_b.token}});
    const uint16_t idx =
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 3000, mr_a.token}});

    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(cqe_opcode(c) == static_cast<uint8_t>(hw::CqeOpcode::kRequester));
    CHECK(c.wqe_counter == idx);
    CHECK(c.wqe_opcode == hw::WqeOpcode::kSend);
    CHECK(c.qp_number == p.qp_a->number);
    CHECK(c.completion_time_ns > 0);
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(cqe_opcode(c) == static_cast<uint8_t>(hw::CqeOpcode::kResponderSend));
    CHECK(c.byte_count == 3000);
    CHECK(c.wqe_counter == 0);
    CHECK(std::memcmp(dst.data(), data.data(), data.size()) == 0);
    CHECK(p.dev_a->counters().get(Counter::sent_pkts) >= 3);  // 3 packets at MTU 1024
}

TEST_CASE("RDMA WRITE and READ move data with CQEs only on the requester", "[rc][write][read]") {
    ConnectedPair p;
    Buffer local(8192), remote(8192);
    auto data = pattern(5000, 9);
    std::memcpy(local.data(), data.data(), data.size());
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());

    SendOptions w;
    w.remote_address = remote.addr() + 100;
    w.remote_token = mr_b.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), 5000, mr_a.token}}, w);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(c.wqe_opcode == hw::WqeOpcode::kRdmaWrite);
    CHECK(std::memcmp(remote.data() + 100, data.data(), data.size()) == 0);
    CHECK_FALSE(Driver::poll(*p.rcq_b, c));

    // READ it back into another part of the local buffer, two sink SGEs.
    SendOptions r;
    r.remote_address = remote.addr() + 100;
    r.remote_token = mr_b.token;
    std::memset(local.data(), 0, local.size());
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead,
                   {{local.addr(), 1000, mr_a.token}, {local.addr() + 3000, 4000, mr_a.token}}, r);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(c.wqe_opcode == hw::WqeOpcode::kRdmaRead);
    CHECK(std::memcmp(local.data(), data.data(), 1000) == 0);
    CHECK(std::memcmp(local.data() + 3000, data.data() + 1000, 4000) == 0);
}

// Two 4 KiB READs from `p`'s a to b, rung with one doorbell so that the device sees
// them together; their completions.
std::pair<std::optional<hw::Cqe>, std::optional<hw::Cqe>> two_reads(ConnectedPair &p) {
    Buffer remote(8192, 0x5a), local(8192);
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    SendOptions r;
    r.remote_address = remote.addr();
    r.remote_token = mr_b.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{local.addr(), 4096, mr_a.token}}, r,
                   /*ring=*/false);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{local.addr() + 4096, 4096, mr_a.token}}, r);
    auto first = Driver::wait(*p.scq_a);
    auto second = Driver::wait(*p.scq_a);
    REQUIRE(first);
    REQUIRE(second);
    return {first, second};
}

// ORD and IRD on the wire: with ORD 1 a second READ leaves only when the first one's
// responses are in, so the responder never holds more than its IRD. Model time shows it.
TEST_CASE("ORD: a second READ waits on the wire for the first one's responses",
          "[rc][read][ord][time]") {
    ConnectedPair p(test_profile(), test_profile(), 64, /*ird=*/1, /*ord=*/1);
    const auto [first, second] = two_reads(p);
    CHECK(first->syndrome == hw::Syndrome::kSuccess);
    CHECK(second->syndrome == hw::Syndrome::kSuccess);
    CHECK(p.dev_b->counters().get(Counter::ird_exceeded) == 0);
    // The second READ's request left after the first's last response arrived, so it
    // completes at least one request-response trip (two pipelines, two link crossings
    // and the responder's DMA read) later.
    const auto &c = test_profile().cost;
    const uint64_t trip =
        c.tx_pipeline_ns + c.rx_pipeline_ns + c.dma_read_ns + 2 * c.propagation_ns;
    CHECK(second->completion_time_ns >= first->completion_time_ns + trip);
}

TEST_CASE("IRD: a READ beyond the responder's resources is NAKed and fails the QP",
          "[rc][read][ird][time]") {
    ConnectedPair p(test_profile(), test_profile(), 64, /*ird=*/1, /*ord=*/1);
    // A requester that ignores its ORD (a buggy or hostile peer).
    {
        auto qp = p.dev_a->find_qp(p.qp_a->number);
        REQUIRE(qp);
        std::lock_guard lock(qp->mutex);
        qp->path.ord = 4;
    }
    const auto [first, second] = two_reads(p);
    CHECK(first->syndrome == hw::Syndrome::kSuccess);
    CHECK(second->syndrome == hw::Syndrome::kRemoteInvalidRequest);
    CHECK(p.dev_b->counters().get(Counter::ird_exceeded) == 1);
}

// The responder frees a READ's resource when its last response has left the device,
// so a requester within its ORD never runs over, however many READs wait behind the
// ORD and however the doorbells split them.
TEST_CASE("IRD: a requester within its ORD never runs over, READ after READ", "[rc][read][ird]") {
    ConnectedPair p(test_profile(), test_profile(), 64, /*ird=*/2, /*ord=*/2);
    constexpr uint32_t kBytes = 3000;  // three responses at MTU 1024
    constexpr uint32_t kSlots = 48;
    Buffer remote(kSlots * kBytes), local(kSlots * kBytes);
    auto data = pattern(remote.size(), 3);
    std::memcpy(remote.data(), data.data(), data.size());
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    for (uint32_t round = 0; round < 10; ++round) {
        std::memset(local.data(), 0, local.size());
        for (uint32_t slot = 0; slot < kSlots; ++slot) {
            SendOptions r;
            r.remote_address = remote.addr() + slot * kBytes;
            r.remote_token = mr_b.token;
            // Rung every 5th READ and at the end: some doorbells carry one, some several.
            p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead,
                           {{local.addr() + slot * kBytes, kBytes, mr_a.token}}, r,
                           slot % 5 == 4 || slot + 1 == kSlots);
        }
        for (uint32_t slot = 0; slot < kSlots; ++slot) {
            auto c = Driver::wait(*p.scq_a);
            REQUIRE(c);
            REQUIRE(c->syndrome == hw::Syndrome::kSuccess);
        }
        CHECK(std::memcmp(local.data(), data.data(), data.size()) == 0);
    }
    CHECK(p.dev_b->counters().get(Counter::ird_exceeded) == 0);
}

TEST_CASE("unsignaled WQEs are retired by a later signaled CQE", "[rc][unsignaled]") {
    ConnectedPair p;
    Buffer src(4096), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    SendOptions silent;
    silent.flags = 0;
    silent.remote_address = dst.addr();
    silent.remote_token = mr_b.token;
    for (int i = 0; i < 3; ++i) {
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 64, mr_a.token}}, silent,
                       false);
    }
    SendOptions loud = silent;
    loud.flags = hw::kCtrlSignaled;
    const uint16_t last =
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 64, mr_a.token}}, loud);
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 1);
    CHECK(all[0].wqe_counter == last);
    CHECK(all[0].syndrome == hw::Syndrome::kSuccess);
}

TEST_CASE("1 MiB WRITE and READ through a 128-PSN window", "[rc][large]") {
    ConnectedPair p;
    constexpr size_t kSize = 1 << 20;
    Buffer local(kSize), remote(kSize), back(kSize);
    auto data = pattern(kSize, 3);
    std::memcpy(local.data(), data.data(), kSize);
    auto mr_l = p.a->register_mr(p.pd_a, local.data(), kSize);
    auto mr_k = p.a->register_mr(p.pd_a, back.data(), kSize);
    auto mr_r = p.b->register_mr(p.pd_b, remote.data(), kSize);
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr_r.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), kSize, mr_l.token}}, o);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{back.addr(), kSize, mr_k.token}}, o);
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 2);
    CHECK(all[0].syndrome == hw::Syndrome::kSuccess);
    CHECK(all[1].syndrome == hw::Syndrome::kSuccess);
    CHECK(std::memcmp(remote.data(), data.data(), kSize) == 0);
    CHECK(std::memcmp(back.data(), data.data(), kSize) == 0);
    // 1024 packets each way plus ACKs.
    CHECK(p.dev_a->counters().get(Counter::sent_pkts) >= 1024);
    CHECK(p.dev_b->counters().get(Counter::sent_pkts) >= 1024);
}

TEST_CASE("1 MiB SEND into a multi-SGE receive", "[rc][large]") {
    ConnectedPair p;
    constexpr size_t kSize = 1 << 20;
    Buffer src(kSize), dst(kSize);
    auto data = pattern(kSize, 5);
    std::memcpy(src.data(), data.data(), kSize);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), kSize);
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), kSize);
    // Receive scattered over three pieces, send gathered from two.
    p.b->post_recv(*p.qp_b, {{dst.addr(), 1000, mr_b.token},
                             {dst.addr() + 1000, 500000, mr_b.token},
                             {dst.addr() + 501000, kSize - 501000, mr_b.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend,
                   {{src.addr(), 777, mr_a.token}, {src.addr() + 777, kSize - 777, mr_a.token}});
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.byte_count == kSize);
    CHECK(std::memcmp(dst.data(), data.data(), kSize) == 0);
}

TEST_CASE("10,000 small messages: no completion lost, receives in order", "[rc][stress]") {
    ConnectedPair p;
    Buffer src(64 * 32), dst(64 * 32);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    size_t sent = 0, send_cqes = 0, recv_cqes = 0;
    uint32_t expected_slot = 0;
    bool in_order = true;
    while (sent < 10000) {
        for (int i = 0; i < 32; ++i) {
            p.b->post_recv(*p.qp_b, {{dst.addr() + 64 * i, 64, mr_b.token}}, false);
        }
        p.b->ring_rq(*p.qp_b);
        for (int i = 0; i < 32; ++i) {
            src.data()[64 * i] = static_cast<uint8_t>(sent + i);
            p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr() + 64 * i, 64, mr_a.token}},
                           {}, i == 31);
        }
        sent += 32;
        for (auto &c : Driver::drain(*p.scq_a))
            send_cqes += c.syndrome == hw::Syndrome::kSuccess;
        for (auto &c : Driver::drain(*p.rcq_b)) {
            recv_cqes += c.syndrome == hw::Syndrome::kSuccess && c.byte_count == 64;
            in_order = in_order && c.wqe_counter == (expected_slot++ & 63);
        }
    }
    CHECK(send_cqes == sent);
    CHECK(recv_cqes == sent);
    CHECK(in_order);
}

TEST_CASE("inline SEND carries its payload in the WQE", "[rc][inline]") {
    ConnectedPair p;
    Buffer dst(256);
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.b->post_recv(*p.qp_b, {{dst.addr(), 256, mr_b.token}});
    SendOptions o;
    o.flags = hw::kCtrlSignaled | hw::kCtrlInline | hw::kCtrlSolicited;
    o.inline_data = pattern(50, 77);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {}, o);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.byte_count == 50);
    CHECK((c.flags & hw::kCqeSolicited) != 0);
    CHECK(std::memcmp(dst.data(), o.inline_data.data(), 50) == 0);
}

TEST_CASE("bad remote token: remote access error, both QPs flushed", "[rc][errors]") {
    ConnectedPair p;
    Buffer local(4096), remote(4096), dst(64);
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    auto mr_rx = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.b->post_recv(*p.qp_b, {{dst.addr(), 64, mr_rx.token}});
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr_b.token ^ 0x1;  // stale variant
    const uint16_t bad = p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite,
                                        {{local.addr(), 100, mr_a.token}}, o, false);
    o.remote_token = mr_b.token;
    const uint16_t next =
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), 100, mr_a.token}}, o);
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 2);
    CHECK(all[0].wqe_counter == bad);
    CHECK(all[0].syndrome == hw::Syndrome::kRemoteAccess);
    CHECK(cqe_opcode(all[0]) == static_cast<uint8_t>(hw::CqeOpcode::kRequesterError));
    CHECK(all[1].wqe_counter == next);
    CHECK(all[1].syndrome == hw::Syndrome::kWorkRequestFlushed);
    // The responder QP went to ERROR too: its posted receive is flushed.
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kWorkRequestFlushed);
    // A WQE posted after the error is flushed as well.
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), 100, mr_a.token}}, o);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kWorkRequestFlushed);
}

TEST_CASE("READ beyond the remote region is a remote access error", "[rc][errors]") {
    ConnectedPair p;
    Buffer local(8192), remote(4096);
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    SendOptions o;
    o.remote_address = remote.addr() + 100;
    o.remote_token = mr_b.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{local.addr(), 4096, mr_a.token}}, o);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kRemoteAccess);
}

TEST_CASE("bad local token: local protection error, the rest flushed, nothing sent",
          "[rc][errors]") {
    ConnectedPair p;
    Buffer src(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    const uint64_t sent_before = p.dev_a->counters().get(Counter::sent_pkts);
    const uint16_t bad = p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend,
                                        {{src.addr(), 100, mr_a.token + 0x100}}, {}, false);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 100, mr_a.token}}, {}, false);
    // Out of the region.
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr() + 4000, 100, mr_a.token}});
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 3);
    CHECK(all[0].wqe_counter == bad);
    CHECK(all[0].syndrome == hw::Syndrome::kLocalProtection);
    CHECK(all[1].syndrome == hw::Syndrome::kWorkRequestFlushed);
    CHECK(all[2].syndrome == hw::Syndrome::kWorkRequestFlushed);
    CHECK(p.dev_a->counters().get(Counter::sent_pkts) == sent_before);
}

TEST_CASE("receive overflow: receiver reports it, sender gets a remote invalid request",
          "[rc][errors]") {
    ConnectedPair p;
    Buffer src(4096), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.b->post_recv(*p.qp_b, {{dst.addr(), 1000, mr_b.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 2000, mr_a.token}});
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kReceiveOverflow);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kRemoteInvalidRequest);
}

// The boundary: a send exactly as long as the receive fits; one byte more overflows (a
// check off by one would truncate the message silently and report success).
TEST_CASE("receive overflow at the boundary: capacity fits, capacity + 1 overflows",
          "[rc][errors][edge]") {
    ConnectedPair p;
    Buffer src(4096), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.b->post_recv(*p.qp_b, {{dst.addr(), 1000, mr_b.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 1000, mr_a.token}});
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(c.byte_count == 1000);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);

    p.b->post_recv(*p.qp_b, {{dst.addr(), 1000, mr_b.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 1001, mr_a.token}});
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kReceiveOverflow);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kRemoteInvalidRequest);
}

TEST_CASE("SEND_WITH_INVALIDATE of a token the receiver cannot invalidate fails the receive",
          "[rc][errors]") {
    ConnectedPair p;
    Buffer src(256), dst(256);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.b->post_recv(*p.qp_b, {{dst.addr(), 256, mr_b.token}});
    SendOptions o;
    o.invalidate_token = mr_b.token;  // a RegisterMr MR: not remotely invalidatable
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSendInvalidate, {{src.addr(), 10, mr_a.token}}, o);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kRemoteInvalidRequest);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kRemoteInvalidRequest);
}

TEST_CASE("RNR: a SEND without a receive completes once one is posted", "[rc][rnr]") {
    Profile fast = test_profile();
    fast.transport.min_rnr_timer = 1;  // 10 us
    ConnectedPair p(fast, fast);
    Buffer src(256), dst(256);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    src.data()[0] = 42;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 16, mr_a.token}});
    hw::Cqe c{};
    CHECK_FALSE(Driver::poll(*p.scq_a, c));
    CHECK(p.dev_b->counters().get(Counter::send_rnr_err) >= 1);
    CHECK(p.dev_a->counters().get(Counter::rcvd_rnr_err) >= 1);
    p.b->post_recv(*p.qp_b, {{dst.addr(), 256, mr_b.token}});
    auto done = Driver::wait(*p.scq_a);
    REQUIRE(done);
    CHECK(done->syndrome == hw::Syndrome::kSuccess);
    auto rx = Driver::wait(*p.rcq_b);
    REQUIRE(rx);
    CHECK(rx->byte_count == 16);
    CHECK(dst.data()[0] == 42);
}

TEST_CASE("RNR retries exhausted complete with kRnrRetryExceeded", "[rc][rnr]") {
    Profile quick = test_profile();
    quick.transport.min_rnr_timer = 1;
    quick.transport.rnr_retry = 2;
    ConnectedPair p(quick, quick);
    Buffer src(256);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 16, mr_a.token}});
    auto done = Driver::wait(*p.scq_a);
    REQUIRE(done);
    CHECK(done->syndrome == hw::Syndrome::kRnrRetryExceeded);
    CHECK(p.dev_a->counters().get(Counter::rcvd_rnr_err) == 3);
}

// The doorbell's stamp is the consumer's clock, written into shared memory: the device
// takes it as it is up to a second past what the QP and the device have seen, and no
// further, so a consumer's garbage cannot push model time out of reach.
TEST_CASE("A doorbell stamp is trusted up to a second past the QP's and the device's time",
          "[rc][time]") {
    constexpr uint64_t kSecond = 1000000000;
    ConnectedPair p;
    Buffer src(256), dst(256);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    auto send_stamped = [&](uint64_t stamp) {
        p.b->post_recv(*p.qp_b, {{dst.addr(), 256, mr_b.token}});
        p.qp_a->sq_doorbell->producer.post_time_ns = stamp;
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 16, mr_a.token}});
        auto done = Driver::wait(*p.scq_a);
        REQUIRE(done);
        REQUIRE(done->syndrome == hw::Syndrome::kSuccess);
        REQUIRE(Driver::wait(*p.rcq_b));
        return done->completion_time_ns;
    };
    const uint64_t round_trip = send_stamped(0);  // a few us from model time 0
    REQUIRE(round_trip < kSecond / 1000);
    SECTION("a stamp within the second is the doorbell's time") {
        const uint64_t stamp = p.dev_a->clock().now() + kSecond / 2;
        const uint64_t done = send_stamped(stamp);
        CHECK(done > stamp);
        CHECK(done < stamp + kSecond / 1000);
    }
    SECTION("a stamp beyond it is clamped to a second past the device's time") {
        const uint64_t horizon = p.dev_a->clock().now() + kSecond;
        for (const uint64_t garbage : {horizon + 1, uint64_t{1} << 62, UINT64_MAX}) {
            const uint64_t before = p.dev_a->clock().now();
            const uint64_t done = send_stamped(garbage);
            CHECK(done > before + kSecond);
            CHECK(done < before + kSecond + kSecond / 1000);
        }
    }
}

// Model time (emulator/time/model.hpp): timers run on it, so the completion of a SEND
// that met an RNR NAK is dated one RNR delay after the NAK, whatever the host did.
TEST_CASE("RNR: the retry happens one modeled RNR delay after the NAK, in CQE times",
          "[rc][rnr][time]") {
    Profile p12 = test_profile();  // min_rnr_timer 12 = 640 us
    REQUIRE(wire::rnr_timer_usec(p12.transport.min_rnr_timer) == 640);
    const uint64_t delay = 640000;
    // The same SEND with its receive in place: one round trip, no RNR.
    uint64_t round_trip = 0;
    {
        ConnectedPair p(p12, p12);
        Buffer src(256), dst(256);
        auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
        auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
        p.b->post_recv(*p.qp_b, {{dst.addr(), 256, mr_b.token}});
        const uint64_t before = p.dev_a->clock().now();
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 16, mr_a.token}});
        auto done = Driver::wait(*p.scq_a);
        REQUIRE(done);
        REQUIRE(done->completion_time_ns > before);
        round_trip = done->completion_time_ns - before;
        CHECK(round_trip < delay / 100);  // a few us against a 640 us timer
    }
    ConnectedPair p(p12, p12);
    Buffer src(256), dst(256);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    const uint64_t before = p.dev_a->clock().now();
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 16, mr_a.token}});
    REQUIRE(p.dev_a->counters().get(Counter::rcvd_rnr_err) == 1);
    // Posted long before the timer fires (640 us of host time in functional mode).
    p.b->post_recv(*p.qp_b, {{dst.addr(), 256, mr_b.token}});
    auto done = Driver::wait(*p.scq_a);
    REQUIRE(done);
    CHECK(done->syndrome == hw::Syndrome::kSuccess);
    CHECK(p.dev_a->counters().get(Counter::rcvd_rnr_err) == 1);
    // NAK after about one round trip, the resend 640 us later, then another round trip.
    const uint64_t took = done->completion_time_ns - before;
    CHECK(took >= delay + round_trip);
    CHECK(took <= delay + 2 * round_trip);
    auto rx = Driver::wait(*p.rcq_b);
    REQUIRE(rx);
    CHECK(rx->completion_time_ns > before + delay);
}

TEST_CASE("RNR retries run out after as many modeled delays as retries", "[rc][rnr][time]") {
    Profile quick = test_profile();
    quick.transport.min_rnr_timer = 1;  // 10 us
    quick.transport.rnr_retry = 3;
    ConnectedPair p(quick, quick);
    Buffer src(256);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    const uint64_t before = p.dev_a->clock().now();
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 16, mr_a.token}});
    auto done = Driver::wait(*p.scq_a);
    REQUIRE(done);
    REQUIRE(done->syndrome == hw::Syndrome::kRnrRetryExceeded);
    const uint64_t took = done->completion_time_ns - before;
    // Four attempts, three waits of 10 us between them, each attempt a few us at most.
    CHECK(took >= 3 * 10000);
    CHECK(took < 3 * 10000 + 4 * 5000);
}

TEST_CASE("no ACK: transport retries exhausted after ACK timeouts", "[rc][retry]") {
    Profile quick = test_profile();
    quick.transport.ack_timeout = 8;  // ~1 ms
    quick.transport.retry_count = 2;
    ConnectedPair p(quick, quick);
    Buffer src(256);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    // The peer QP vanishes without a word: packets to it are dropped.
    REQUIRE(p.b->object_command(hw::CommandOpcode::kDestroyQp, p.qp_b->number) == 0);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 16, mr_a.token}});
    auto done = Driver::wait(*p.scq_a);
    REQUIRE(done);
    CHECK(done->syndrome == hw::Syndrome::kTransportRetryExceeded);
    CHECK(p.dev_a->counters().get(Counter::ack_timeouts) == 3);
    CHECK(p.dev_a->counters().get(Counter::retry_exceeded_err) == 1);
}

TEST_CASE("An ACK timer armed while a run is delivered is dated and queued as the run ends",
          "[rc][retry][time]") {
    // Device::deliver_run_to_qp() hands a run's packets to the engine between
    // rc::begin_run() and rc::end_run(); a READ response acknowledged in it re-arms the
    // ACK timer. The timer must come out of the run armed for the model deadline it
    // would have had, with a host deadline and an entry in the device's timer queue.
    ConnectedPair p;
    auto qp = p.dev_a->find_qp(p.qp_a->number);
    REQUIRE(qp);
    std::lock_guard lock(qp->mutex);
    Requester &r = qp->req;
    const uint32_t una = r.una_psn;
    r.next_psn = wire::psn_add(una, 1);  // one packet outstanding
    REQUIRE(rc::ack_timeout_ns(*qp));
    REQUIRE_FALSE(qp->timer_at);

    rc::begin_run(*qp);
    rc::arm_ack_timer(*qp);
    CHECK(r.ack_deadline);      // armed meanwhile: nothing in the run arms it again
    CHECK_FALSE(qp->timer_at);  // but not queued yet
    const auto before_end = std::chrono::steady_clock::now();
    rc::end_run(*qp);
    REQUIRE(r.ack_deadline);
    CHECK(*r.ack_deadline != SteadyTime::max());
    CHECK(*r.ack_deadline > before_end);
    REQUIRE(qp->timer_at);
    CHECK(*qp->timer_at == *r.ack_deadline);
    const uint64_t in_run_ns = r.ack_deadline_ns;
    // Outside a run the same arming gives the same model deadline.
    rc::arm_ack_timer(*qp);
    CHECK(r.ack_deadline_ns == in_run_ns);

    // Everything acknowledged before the run ends: the run leaves nothing armed.
    rc::begin_run(*qp);
    rc::arm_ack_timer(*qp);
    r.next_psn = una;
    r.ack_deadline.reset();  // as the completer does when una reaches next_psn
    rc::end_run(*qp);
    CHECK_FALSE(r.ack_deadline);
    CHECK_FALSE(qp->delivering_run);
}

TEST_CASE("PSNs wrap past 0xFFFFFF without a hiccup", "[rc][psn]") {
    Profile wrap = test_profile();
    wrap.transport.initial_psn = 0xFFFFF0;
    ConnectedPair p(wrap, wrap);
    constexpr size_t kSize = 64 * 1024;  // 64 packets: crosses the wrap
    Buffer local(kSize), remote(kSize), back(kSize), rx(kSize);
    auto data = pattern(kSize, 11);
    std::memcpy(local.data(), data.data(), kSize);
    auto mr_l = p.a->register_mr(p.pd_a, local.data(), kSize);
    auto mr_k = p.a->register_mr(p.pd_a, back.data(), kSize);
    auto mr_r = p.b->register_mr(p.pd_b, remote.data(), kSize);
    auto mr_x = p.b->register_mr(p.pd_b, rx.data(), kSize);
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr_r.token;
    p.b->post_recv(*p.qp_b, {{rx.addr(), kSize, mr_x.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{local.addr(), kSize, mr_l.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), kSize, mr_l.token}}, o);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{back.addr(), kSize, mr_k.token}}, o);
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 3);
    for (auto &c : all)
        CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(std::memcmp(rx.data(), data.data(), kSize) == 0);
    CHECK(std::memcmp(back.data(), data.data(), kSize) == 0);
    CHECK(p.dev_b->counters().get(Counter::out_of_seq_request) == 0);
    CHECK(p.dev_b->counters().get(Counter::duplicate_request) == 0);
}

TEST_CASE("READs beyond the ORD wait and a READ_FENCE waits for earlier READs", "[rc][read]") {
    ConnectedPair p(test_profile(), test_profile(), 64, 1, 1);
    Buffer local(4096 * 4), remote(4096);
    auto data = pattern(4096, 21);
    std::memcpy(remote.data(), data.data(), 4096);
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    hw::ConnectionInfo info{};
    REQUIRE(p.a->query(p.conn_a, info) == 0);
    CHECK(info.outbound_read_limit == 1);
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr_b.token;
    for (int i = 0; i < 3; ++i) {
        o.flags = hw::kCtrlSignaled | (i == 2 ? hw::kCtrlReadFence : 0);
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead,
                       {{local.addr() + 4096 * i, 4096, mr_a.token}}, o, i == 2);
    }
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 3);
    for (int i = 0; i < 3; ++i) {
        CHECK(all[i].syndrome == hw::Syndrome::kSuccess);
        CHECK(std::memcmp(local.data() + 4096 * i, data.data(), 4096) == 0);
    }
}

TEST_CASE("FlushQp completes every pending receive with WR_FLUSH_ERR", "[rc][flush]") {
    ConnectedPair p;
    Buffer dst(256);
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    for (int i = 0; i < 5; ++i)
        p.b->post_recv(*p.qp_b, {{dst.addr(), 256, mr_b.token}});
    REQUIRE(p.b->object_command(hw::CommandOpcode::kFlushQp, p.qp_b->number) == 0);
    auto all = Driver::drain(*p.rcq_b);
    REQUIRE(all.size() == 5);
    for (size_t i = 0; i < all.size(); ++i) {
        CHECK(all[i].syndrome == hw::Syndrome::kWorkRequestFlushed);
        CHECK(all[i].wqe_counter == i);
        CHECK(cqe_opcode(all[i]) == static_cast<uint8_t>(hw::CqeOpcode::kResponderError));
    }
}

TEST_CASE("virtual time grows with the work done", "[rc][clock]") {
    ConnectedPair p;
    Buffer src(65536), dst(65536);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    SendOptions o;
    o.remote_address = dst.addr();
    o.remote_token = mr_b.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 64, mr_a.token}}, o);
    hw::Cqe small{}, large{};
    REQUIRE(Driver::poll(*p.scq_a, small));
    const uint64_t t0 = p.dev_a->clock().now();
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 65536, mr_a.token}}, o);
    REQUIRE(Driver::poll(*p.scq_a, large));
    CHECK(large.completion_time_ns > small.completion_time_ns);
    // 64 KiB costs at least its DMA and wire time (~5 us + ~5 us at the defaults).
    CHECK(large.completion_time_ns - t0 > 5000);
}

// ---- fast registration, windows, remote and local invalidation (NDK 1.2)

namespace {

struct PageBuffer {
    explicit PageBuffer(size_t pages)
        : size(pages * 4096), data(static_cast<uint8_t *>(std::aligned_alloc(4096, size))) {
        std::memset(data, 0, size);
    }
    ~PageBuffer() { std::free(data); }
    uint64_t addr() const { return reinterpret_cast<uint64_t>(data); }
    size_t size;
    uint8_t *data;
};

// Allocates and initialises a fast-register MR; returns its (not yet valid) token.
uint32_t fast_register_mr(Driver &d, uint32_t pd, uint32_t max_pages) {
    hw::ObjectResponse alloc{};
    Driver::expect(d.object_command(hw::CommandOpcode::kAllocMr, pd, 1, &alloc), "alloc fr mr");
    hw::InitFastRegMrRequest rq{};
    rq.mpt_index = alloc.object;
    rq.max_pages = max_pages;
    rq.remote_access = 1;
    hw::ObjectResponse rs{};
    Driver::expect(d.command(hw::CommandOpcode::kInitFastRegMr, rq, rs), "init fr mr");
    return alloc.token;
}

// Maps `buf` into the context's logical address space (NdkBuildLAM); returns the
// logical address of its first page.
uint64_t build_lam(Driver &d, const PageBuffer &buf) {
    hw::BuildLamRequest rq{};
    rq.address = buf.addr();
    rq.length = buf.size;
    rq.memory = hw::MemoryHandle{hw::kNoFd, 0, 0, buf.size, buf.addr()};
    hw::BuildLamResponse rs{};
    Driver::expect(d.command(hw::CommandOpcode::kBuildLam, rq, rs), "build lam");
    return rs.first_logical_page;
}

// Posts FAST_REGISTER of `buf` under `token` (new variant already chosen), through a LAM
// unless `without_lam`: then the page addresses are the buffer's VAs, never mapped.
uint16_t post_fast_register(Driver &d, QpHandle &qp, uint32_t token, const PageBuffer &buf,
                            uint8_t access, bool without_lam = false) {
    const uint32_t pages = static_cast<uint32_t>(buf.size / 4096);
    const uint64_t logical = without_lam ? buf.addr() : build_lam(d, buf);
    std::vector<uint8_t> v(16 * (3 + (pages + 1) / 2), 0);
    hw::CtrlSegment c{};
    c.opcode = hw::WqeOpcode::kFastRegister;
    c.flags = hw::kCtrlSignaled;
    c.wqe_index = static_cast<uint16_t>(qp.sq->reserved());
    c.segment_count = static_cast<uint8_t>(v.size() / 16);
    hw::FastRegisterSegment f{};
    f.mr_token = token;
    f.access = access;
    f.page_count = pages;
    f.base_iova = buf.addr();
    f.length = buf.size;
    std::memcpy(v.data(), &c, 16);
    std::memcpy(v.data() + 16, &f, 32);
    for (uint32_t i = 0; i < pages; ++i) {
        const uint64_t page = logical + 4096ull * i;
        std::memcpy(v.data() + 48 + 8 * i, &page, 8);
    }
    d.post_raw(qp, v);
    return c.wqe_index;
}

uint32_t next_variant(uint32_t token) {
    return hw::make_token(hw::token_index(token),
                          static_cast<uint8_t>(hw::token_variant(token) + 1));
}

}  // namespace

TEST_CASE("fast-register, use remotely, SEND_WITH_INVALIDATE, then the token is dead",
          "[rc][frmr][invalidate]") {
    ConnectedPair p;
    PageBuffer target(2);
    Buffer src(8192), rx(64);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_rx = p.b->register_mr(p.pd_b, rx.data(), rx.size());
    const uint32_t fr = fast_register_mr(*p.b, p.pd_b, 4);  // stable: the token for life
    post_fast_register(*p.b, *p.qp_b, fr, target,
                       hw::kAccessLocalWrite | hw::kAccessRemoteWrite | hw::kAccessRemoteRead);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_b, c));
    REQUIRE(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(c.wqe_opcode == hw::WqeOpcode::kFastRegister);

    for (size_t i = 0; i < src.size(); ++i)
        src.data()[i] = static_cast<uint8_t>(i);
    SendOptions w;
    w.remote_address = target.addr();
    w.remote_token = fr;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 8192, mr_a.token}}, w);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(std::memcmp(target.data, src.data(), 8192) == 0);

    p.b->post_recv(*p.qp_b, {{rx.addr(), 64, mr_rx.token}});
    SendOptions inv;
    inv.invalidate_token = fr;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSendInvalidate, {{src.addr(), 4, mr_a.token}}, inv);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    REQUIRE(Driver::poll(*p.rcq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(cqe_opcode(c) == static_cast<uint8_t>(hw::CqeOpcode::kResponderSendInvalidate));
    CHECK(c.invalidated_token == fr);

    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 16, mr_a.token}}, w);
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kRemoteAccess);
}

TEST_CASE("a fast-register MR's token works again after it is registered again",
          "[rc][frmr][invalidate]") {
    // NDK drivers cache NdkGetRemoteTokenFromMr once and reuse it for every
    // registration of the MR (the default, stable keys). Needs a fresh pair: the
    // previous test's remote access error moved its QPs to the error state.
    ConnectedPair p;
    PageBuffer target(1);
    Buffer src(4096), rx(64);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_rx = p.b->register_mr(p.pd_b, rx.data(), rx.size());
    const uint32_t fr = fast_register_mr(*p.b, p.pd_b, 1);
    SendOptions w;
    w.remote_address = target.addr();
    w.remote_token = fr;
    hw::Cqe c{};
    for (int cycle = 0; cycle < 3; ++cycle) {
        post_fast_register(*p.b, *p.qp_b, fr, target,
                           hw::kAccessLocalWrite | hw::kAccessRemoteWrite);
        REQUIRE(Driver::poll(*p.scq_b, c));
        REQUIRE(c.syndrome == hw::Syndrome::kSuccess);
        std::memset(src.data(), 0x40 + cycle, 64);
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 64, mr_a.token}}, w);
        REQUIRE(Driver::poll(*p.scq_a, c));
        CHECK(c.syndrome == hw::Syndrome::kSuccess);
        CHECK(target.data[63] == static_cast<uint8_t>(0x40 + cycle));
        p.b->post_recv(*p.qp_b, {{rx.addr(), 64, mr_rx.token}});
        SendOptions inv;
        inv.invalidate_token = fr;
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kSendInvalidate, {{src.addr(), 4, mr_a.token}}, inv);
        REQUIRE(Driver::poll(*p.scq_a, c));
        REQUIRE(c.syndrome == hw::Syndrome::kSuccess);
        REQUIRE(Driver::poll(*p.rcq_b, c));
        CHECK(c.invalidated_token == fr);
    }
}

TEST_CASE("with the rotate quirk a fast registration needs a new token and retires the old",
          "[rc][frmr][invalidate]") {
    Profile rotating = test_profile();
    rotating.limits.quirks |= hw::kQuirkRotateFastRegisterKeys;
    ConnectedPair p(rotating, rotating);
    PageBuffer target(1);
    const uint32_t t0 = fast_register_mr(*p.b, p.pd_b, 1);
    const uint32_t t1 = next_variant(t0);
    post_fast_register(*p.b, *p.qp_b, t1, target, hw::kAccessLocalWrite);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_b, c));
    REQUIRE(c.syndrome == hw::Syndrome::kSuccess);
    // Invalidate, then register again with the token of the last registration: refused,
    // because under this quirk no earlier token may ever work again.
    SendOptions inv;
    inv.invalidate_token = t1;
    p.b->post_send(*p.qp_b, hw::WqeOpcode::kLocalInvalidate, {}, inv);
    REQUIRE(Driver::poll(*p.scq_b, c));
    REQUIRE(c.syndrome == hw::Syndrome::kSuccess);
    post_fast_register(*p.b, *p.qp_b, t1, target, hw::kAccessLocalWrite);
    REQUIRE(Driver::poll(*p.scq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kLocalProtection);
    CHECK(c.vendor_syndrome == static_cast<uint32_t>(KeyStatus::kVariantReused));
}

TEST_CASE("READ with local invalidate retires the sink token", "[rc][frmr][invalidate]") {
    ConnectedPair p;
    PageBuffer sink(1);
    Buffer remote(4096);
    remote.data()[10] = 0x77;
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    const uint32_t fr = fast_register_mr(*p.a, p.pd_a, 1);
    post_fast_register(*p.a, *p.qp_a, fr, sink, hw::kAccessLocalWrite);
    SendOptions r;
    r.flags = hw::kCtrlSignaled | hw::kCtrlReadLocalInvalidate;
    r.remote_address = remote.addr();
    r.remote_token = mr_b.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{sink.addr(), 4096, fr}}, r);
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 2);
    CHECK(all[0].syndrome == hw::Syndrome::kSuccess);
    CHECK(all[1].syndrome == hw::Syndrome::kSuccess);
    CHECK(sink.data[10] == 0x77);
    // The sink token is invalid now: the next READ into it is a local protection error.
    r.flags = hw::kCtrlSignaled;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{sink.addr(), 16, fr}}, r);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kLocalProtection);
}

TEST_CASE("FAST_REGISTER of a page no LAM maps is a local protection error", "[rc][frmr][lam]") {
    ConnectedPair p;
    PageBuffer target(2);
    const uint32_t fr = fast_register_mr(*p.b, p.pd_b, 4);
    post_fast_register(*p.b, *p.qp_b, fr, target, hw::kAccessLocalWrite, /*without_lam=*/true);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kLocalProtection);
    CHECK(c.vendor_syndrome == static_cast<uint32_t>(KeyStatus::kUnmappedPage));
    // The same pages through a LAM register (the QP went to error: use a fresh pair).
    ConnectedPair q;
    const uint32_t fr2 = fast_register_mr(*q.b, q.pd_b, 4);
    post_fast_register(*q.b, *q.qp_b, fr2, target, hw::kAccessLocalWrite);
    REQUIRE(Driver::poll(*q.scq_b, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
}

TEST_CASE("a type-2 window bound over an MR serves remote access until invalidated", "[rc][mw]") {
    ConnectedPair p;
    Buffer region(8192), src(256);
    auto mr_b = p.b->register_mr(p.pd_b, region.data(), region.size(), hw::kAccessLocalWrite);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    hw::ObjectResponse mw{};
    REQUIRE(p.b->object_command(hw::CommandOpcode::kAllocMw, p.pd_b, 2, &mw) == 0);
    const uint32_t window = next_variant(mw.token);
    // BIND_WINDOW over bytes [4096, 8192) of the MR.
    std::vector<uint8_t> v(48, 0);
    hw::CtrlSegment c{};
    c.opcode = hw::WqeOpcode::kBindWindow;
    c.flags = hw::kCtrlSignaled;
    c.wqe_index = static_cast<uint16_t>(p.qp_b->sq->reserved());
    c.segment_count = 3;
    hw::BindSegment b{};
    b.mw_token = window;
    b.mr_token = mr_b.token;
    b.access = hw::kAccessRemoteWrite;
    b.iova = region.addr() + 4096;
    b.length = 4096;
    std::memcpy(v.data(), &c, 16);
    std::memcpy(v.data() + 16, &b, 32);
    p.b->post_raw(*p.qp_b, v);
    hw::Cqe done{};
    REQUIRE(Driver::poll(*p.scq_b, done));
    REQUIRE(done.syndrome == hw::Syndrome::kSuccess);

    src.data()[0] = 0x42;
    SendOptions w;
    w.remote_address = region.addr() + 4096;
    w.remote_token = window;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 16, mr_a.token}}, w);
    REQUIRE(Driver::poll(*p.scq_a, done));
    CHECK(done.syndrome == hw::Syndrome::kSuccess);
    CHECK(region.data()[4096] == 0x42);
    // Outside the window: remote access error.
    w.remote_address = region.addr();
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 16, mr_a.token}}, w);
    REQUIRE(Driver::poll(*p.scq_a, done));
    CHECK(done.syndrome == hw::Syndrome::kRemoteAccess);
}

TEST_CASE("LOCAL_INVALIDATE of a token it cannot invalidate fails in order", "[rc][invalidate]") {
    ConnectedPair p;
    Buffer src(256);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    SendOptions o;
    o.invalidate_token = mr_a.token;  // RegisterMr MRs are deregistered, not invalidated
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kLocalInvalidate, {}, o);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kLocalProtection);
    CHECK(c.wqe_opcode == hw::WqeOpcode::kLocalInvalidate);
}

TEST_CASE("two threads stream on their own QPs of the same contexts at once", "[rc][threads]") {
    ConnectedPair p;
    // Second connection between the same two contexts.
    auto qa1 = std::move(p.qp_a);
    auto qb1 = std::move(p.qp_b);
    auto cq_a2 = p.a->create_cq(1024);
    auto cq_b2 = p.b->create_cq(1024);
    p.qp_a = p.a->create_qp(p.pd_a, *cq_a2, *cq_a2);
    p.qp_b = p.b->create_qp(p.pd_b, *cq_b2, *cq_b2);
    p.connect(4, 4);
    Buffer src(64 * 64), dst(64 * 64);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    constexpr int kRounds = 60, kBatch = 16;
    auto stream = [&](QpHandle &qa, QpHandle &qb, CqHandle &scq, CqHandle &rcq, int lane) {
        size_t sends = 0, recvs = 0;
        for (int r = 0; r < kRounds; ++r) {
            for (int i = 0; i < kBatch; ++i) {
                p.b->post_recv(qb, {{dst.addr() + 64 * (lane * 32 + i), 64, mr_b.token}},
                               i == kBatch - 1);
            }
            for (int i = 0; i < kBatch; ++i) {
                p.a->post_send(qa, hw::WqeOpcode::kSend, {{src.addr() + 64 * lane, 64, mr_a.token}},
                               {}, i == kBatch - 1);
            }
            // Another thread's ring() may be doing this batch's work: wait for it.
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while ((sends < size_t(kBatch) * (r + 1) || recvs < size_t(kBatch) * (r + 1)) &&
                   std::chrono::steady_clock::now() < deadline) {
                for (auto &c : Driver::drain(scq))
                    sends += c.syndrome == hw::Syndrome::kSuccess;
                for (auto &c : Driver::drain(rcq))
                    recvs += c.syndrome == hw::Syndrome::kSuccess;
                std::this_thread::yield();
            }
        }
        return std::make_pair(sends, recvs);
    };
    std::pair<size_t, size_t> one, two;
    std::thread t1([&] { one = stream(*qa1, *qb1, *p.scq_a, *p.rcq_b, 0); });
    std::thread t2([&] { two = stream(*p.qp_a, *p.qp_b, *cq_a2, *cq_b2, 1); });
    t1.join();
    t2.join();
    CHECK(one.first == kRounds * kBatch);
    CHECK(one.second == kRounds * kBatch);
    CHECK(two.first == kRounds * kBatch);
    CHECK(two.second == kRounds * kBatch);
}

// ---- lossy fabric: go-back-N, READ replay, lost ACKs

namespace {
// Drops the first `count` packets with opcode `op` (after skipping `skip` of them).
std::function<bool(const Packet &)> drop_nth(wire::Opcode op, int skip, int count = 1) {
    auto seen = std::make_shared<int>(0);
    return [=](const Packet &p) {
        if (p.desc.bth.opcode != op) return false;
        const int n = (*seen)++;
        return n >= skip && n < skip + count;
    };
}
}  // namespace

TEST_CASE("a lost middle packet: PSN-sequence NAK and go-back-N", "[rc][retry][lossy]") {
    ConnectedPair p;
    Buffer src(8192), dst(8192);
    auto data = pattern(5000, 31);
    std::memcpy(src.data(), data.data(), data.size());
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.fabric->set_drop_filter(drop_nth(wire::Opcode::kSendMiddle, 1));
    p.b->post_recv(*p.qp_b, {{dst.addr(), 8192, mr_b.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 5000, mr_a.token}});
    auto c = Driver::wait(*p.scq_a);
    REQUIRE(c);
    CHECK(c->syndrome == hw::Syndrome::kSuccess);
    auto rx = Driver::wait(*p.rcq_b);
    REQUIRE(rx);
    CHECK(rx->byte_count == 5000);
    CHECK(std::memcmp(dst.data(), data.data(), 5000) == 0);
    CHECK(p.fabric->dropped_packets() == 1);
    CHECK(p.dev_b->counters().get(Counter::out_of_seq_request) >= 1);
    CHECK(p.dev_a->counters().get(Counter::rcvd_seq_err) == 1);
    CHECK(p.dev_a->counters().get(Counter::completer_retry_err) == 1);
}

TEST_CASE("a lost READ response is re-requested and replayed", "[rc][retry][lossy]") {
    ConnectedPair p;
    Buffer local(8192), remote(8192);
    auto data = pattern(6000, 41);
    std::memcpy(remote.data(), data.data(), data.size());
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    p.fabric->set_drop_filter(drop_nth(wire::Opcode::kRdmaReadResponseMiddle, 2));
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr_b.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{local.addr(), 6000, mr_a.token}}, o);
    auto c = Driver::wait(*p.scq_a);
    REQUIRE(c);
    CHECK(c->syndrome == hw::Syndrome::kSuccess);
    CHECK(std::memcmp(local.data(), data.data(), 6000) == 0);
    CHECK(p.dev_b->counters().get(Counter::duplicate_request) >= 1);  // the replay
    CHECK(p.dev_a->counters().get(Counter::completer_retry_err) >= 1);
}

TEST_CASE("a lost ACK: ACK timeout, resend, duplicate re-ACKed", "[rc][retry][lossy]") {
    Profile quick = test_profile();
    quick.transport.ack_timeout = 8;  // ~1 ms
    ConnectedPair p(quick, quick);
    Buffer src(256), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.fabric->set_drop_filter(drop_nth(wire::Opcode::kAcknowledge, 0));
    SendOptions o;
    o.remote_address = dst.addr();
    o.remote_token = mr_b.token;
    src.data()[0] = 9;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 100, mr_a.token}}, o);
    auto c = Driver::wait(*p.scq_a);
    REQUIRE(c);
    CHECK(c->syndrome == hw::Syndrome::kSuccess);
    CHECK(dst.data()[0] == 9);
    CHECK(p.dev_a->counters().get(Counter::ack_timeouts) == 1);
    CHECK(p.dev_b->counters().get(Counter::duplicate_request) == 1);
    // Nothing completed twice.
    hw::Cqe extra{};
    CHECK_FALSE(Driver::poll(*p.scq_a, extra));
}

TEST_CASE("a lossy link during a 256 KiB transfer still delivers every byte",
          "[rc][retry][lossy]") {
    Profile quick = test_profile();
    quick.transport.ack_timeout = 8;
    ConnectedPair p(quick, quick);
    constexpr size_t kSize = 256 * 1024;
    Buffer src(kSize), dst(kSize), back(kSize);
    auto data = pattern(kSize, 51);
    std::memcpy(src.data(), data.data(), kSize);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), kSize);
    auto mr_k = p.a->register_mr(p.pd_a, back.data(), kSize);
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), kSize);
    auto n = std::make_shared<uint32_t>(0);
    p.fabric->set_drop_filter([n](const Packet &) { return ++*n % 97 == 0; });  // ~1 %
    SendOptions o;
    o.remote_address = dst.addr();
    o.remote_token = mr_b.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), kSize, mr_a.token}}, o);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{back.addr(), kSize, mr_k.token}}, o);
    auto w = Driver::wait(*p.scq_a, std::chrono::milliseconds(5000));
    auto r = Driver::wait(*p.scq_a, std::chrono::milliseconds(5000));
    REQUIRE(w);
    REQUIRE(r);
    CHECK(w->syndrome == hw::Syndrome::kSuccess);
    CHECK(r->syndrome == hw::Syndrome::kSuccess);
    CHECK(std::memcmp(dst.data(), data.data(), kSize) == 0);
    CHECK(std::memcmp(back.data(), data.data(), kSize) == 0);
    CHECK(p.fabric->dropped_packets() > 0);
}

TEST_CASE("SEND, WRITE and READ survive losing one packet in N, of every kind",
          "[rc][retry][lossy]") {
    const uint32_t period = GENERATE(7u, 13u, 29u, 53u);
    Profile quick = test_profile();
    quick.transport.ack_timeout = 8;
    ConnectedPair p(quick, quick);
    constexpr size_t kSize = 64 * 1024;
    Buffer src(kSize), dst(kSize), rx(kSize), back(kSize);
    auto data = pattern(kSize, static_cast<uint8_t>(period));
    std::memcpy(src.data(), data.data(), kSize);
    auto mr_s = p.a->register_mr(p.pd_a, src.data(), kSize);
    auto mr_k = p.a->register_mr(p.pd_a, back.data(), kSize);
    auto mr_d = p.b->register_mr(p.pd_b, dst.data(), kSize);
    auto mr_x = p.b->register_mr(p.pd_b, rx.data(), kSize);
    auto n = std::make_shared<uint32_t>(0);
    // One packet in `period` on average, of every kind, at places a hash of the packet's
    // number picks. Not every period-th packet: go-back-N resends a READ's missing
    // responses in a burst of the same length each time, and when that length is a
    // multiple of the period every resend can lose its first response again, until the
    // READ runs out of retries. Where the threads' order put the drops in that phase
    // (ThreadSanitizer beside two CPU hogs) it failed so in 4 runs of 60; with the
    // hash, 40 of 40 passed there.
    p.fabric->set_drop_filter([n, period](const Packet &) {
        return ((++*n * 2654435761u) >> 16) % period == 0;  // Knuth's multiplicative hash
    });
    SendOptions o;
    o.remote_address = dst.addr();
    o.remote_token = mr_d.token;
    p.b->post_recv(*p.qp_b, {{rx.addr(), kSize, mr_x.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), kSize, mr_s.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), kSize, mr_s.token}}, o);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{back.addr(), kSize, mr_k.token}}, o);
    for (int i = 0; i < 3; ++i) {
        auto c = Driver::wait(*p.scq_a, std::chrono::milliseconds(5000));
        REQUIRE(c);
        CHECK(c->syndrome == hw::Syndrome::kSuccess);
    }
    auto r = Driver::wait(*p.rcq_b);
    REQUIRE(r);
    CHECK(r->byte_count == kSize);
    CHECK(std::memcmp(rx.data(), data.data(), kSize) == 0);
    CHECK(std::memcmp(dst.data(), data.data(), kSize) == 0);
    CHECK(std::memcmp(back.data(), data.data(), kSize) == 0);
    CHECK(p.fabric->dropped_packets() >= 3);  // the loss was exercised
}

TEST_CASE("a READ on a connection with ORD 0 fails instead of waiting forever", "[rc][read]") {
    ConnectedPair p(test_profile(), test_profile(), 64, 0, 0);
    Buffer local(256), remote(256);
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr_b.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{local.addr(), 16, mr_a.token}}, o);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kLocalQpOperation);
}

// ---- shared receive queues

TEST_CASE("two QPs draw receives from one SRQ: the limit event is one-shot", "[rc][srq]") {
    ConnectedPair p;
    Buffer src(256), dst(64 * 16);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    SrqHandle srq;
    REQUIRE(p.b->try_create_srq(p.pd_b, 16, 2, 3, srq) == 0);
    for (int i = 0; i < 6; ++i)
        p.b->post_srq_recv(srq, {{dst.addr() + 64 * i, 64, mr_b.token}});
    // Two fresh connections whose passive QPs use the SRQ.
    auto qa1 = p.a->create_qp(p.pd_a, *p.scq_a, *p.rcq_a);
    auto qa2 = p.a->create_qp(p.pd_a, *p.scq_a, *p.rcq_a);
    auto rq = Driver::qp_request(p.pd_b, *p.scq_b, *p.rcq_b);
    rq.srq = srq.number;
    QpHandle qb1, qb2;
    REQUIRE(p.b->try_create_qp(rq, qb1) == 0);
    REQUIRE(p.b->try_create_qp(rq, qb2) == 0);
    CHECK_FALSE(qb1.rq);  // no RQ of its own
    p.qp_a = std::move(qa1);
    p.qp_b = std::make_unique<QpHandle>(std::move(qb1));
    p.connect(4, 4);
    auto first_a = std::move(p.qp_a);
    p.qp_a = std::move(qa2);
    p.qp_b = std::make_unique<QpHandle>(std::move(qb2));
    p.connect(4, 4);
    p.b->events();  // connection events

    for (int i = 0; i < 4; ++i) {
        src.data()[0] = static_cast<uint8_t>(i);
        p.a->post_send(i % 2 ? *p.qp_a : *first_a, hw::WqeOpcode::kSend,
                       {{src.addr(), 8, mr_a.token}});
    }
    auto rx = Driver::drain(*p.rcq_b);
    REQUIRE(rx.size() == 4);
    for (int i = 0; i < 4; ++i) {
        CHECK(rx[i].syndrome == hw::Syndrome::kSuccess);
        CHECK((rx[i].flags & hw::kCqeSrq) != 0);
        CHECK(rx[i].wqe_counter == i);  // SRQ slots in order, whichever QP took them
        CHECK(dst.data()[64 * i] == i);
    }
    CHECK(rx[0].qp_number != rx[1].qp_number);
    // 6 posted, 4 taken: the fetch that left 2 (< limit 3) fired the event, once.
    int limit_events = 0;
    for (auto &e : p.b->events()) {
        if (e.type == static_cast<uint8_t>(hw::EqeType::kSrqLimit)) {
            ++limit_events;
            CHECK(e.object == srq.number);
        }
    }
    CHECK(limit_events == 1);
    uint32_t queued = 0;
    REQUIRE(p.b->modify_srq(srq, 16, 2, &queued) == 0);
    CHECK(queued == 2);
    CHECK(p.b->modify_srq(srq, 64, 2) == status::kNotSupported);  // resize not built
    // Flushing one QP does not flush the SRQ's WQEs.
    REQUIRE(p.b->object_command(hw::CommandOpcode::kFlushQp, p.qp_b->number) == 0);
    CHECK(Driver::drain(*p.rcq_b).empty());
    CHECK(p.b->object_command(hw::CommandOpcode::kDestroySrq, srq.number) ==
          status::kInvalidDeviceState);
    p.a->post_send(*first_a, hw::WqeOpcode::kSend, {{src.addr(), 8, mr_a.token}});
    rx = Driver::drain(*p.rcq_b);
    REQUIRE(rx.size() == 1);
    CHECK(rx[0].wqe_counter == 4);
    CHECK(p.b->object_command(hw::CommandOpcode::kDestroyQp, p.qp_b->number) == 0);
}

namespace {

struct LargeTransfer {
    std::vector<hw::Cqe> requester;
    std::vector<hw::Cqe> responder;
    bool data_ok = false;
    uint64_t runs = 0;
};

enum class Coalescing { kOn, kSplitByFabric, kOff };

// Arms a packet fault on both devices that never fires (probability 0): an armed fault
// turns coalescing off (Device::coalescing), and nothing else changes.
void arm_idle_fault(ConnectedPair &p) {
    hw::FaultRequest rq{};
    rq.kind = static_cast<uint32_t>(hw::FaultKind::kPacketDrop);
    rq.qp = hw::kNoObject;
    rq.probability_ppm = 0;
    for (Driver *d : {p.a.get(), p.b.get()}) {
        hw::ObjectResponse rs{};
        Driver::expect(d->command(hw::CommandOpcode::kInjectFault, rq, rs), "inject");
    }
}

// A 1 MiB WRITE, READ and SEND on a fresh pair. kSplitByFabric: the requester builds runs
// but a drop filter that drops nothing (a thing that looks at single packets) makes the
// fabric split them; kOff: no runs at all, every packet on its own.
LargeTransfer large_transfer(Coalescing mode) {
    Profile profile = test_profile();
    profile.limits.path_mtu = 4096;
    ConnectedPair p(profile, profile);
    if (mode == Coalescing::kSplitByFabric)
        p.fabric->set_drop_filter([](const Packet &) { return false; });
    if (mode == Coalescing::kOff) arm_idle_fault(p);
    constexpr size_t kSize = 1 << 20;
    Buffer local(kSize), remote(kSize), back(kSize), rx(kSize);
    auto data = pattern(kSize, 11);
    std::memcpy(local.data(), data.data(), kSize);
    auto mr_l = p.a->register_mr(p.pd_a, local.data(), kSize);
    auto mr_k = p.a->register_mr(p.pd_a, back.data(), kSize);
    auto mr_r = p.b->register_mr(p.pd_b, remote.data(), kSize);
    auto mr_x = p.b->register_mr(p.pd_b, rx.data(), kSize);
    p.b->post_recv(*p.qp_b, {{rx.addr(), kSize, mr_x.token}});
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr_r.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), kSize, mr_l.token}}, o);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{back.addr(), kSize, mr_k.token}}, o);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{local.addr(), kSize, mr_l.token}});
    LargeTransfer t;
    t.requester = Driver::drain(*p.scq_a);
    t.responder = Driver::drain(*p.rcq_b);
    t.data_ok = std::memcmp(remote.data(), data.data(), kSize) == 0 &&
                std::memcmp(back.data(), data.data(), kSize) == 0 &&
                std::memcmp(rx.data(), data.data(), kSize) == 0;
    t.runs = p.fabric->runs_delivered();
    return t;
}

}  // namespace

TEST_CASE("coalesced packets move the same data at the same model times as single ones",
          "[rc][large][coalescing]") {
    const LargeTransfer runs = large_transfer(Coalescing::kOn);
    CHECK(runs.runs > 0);
    CHECK(runs.data_ok);
    REQUIRE(runs.requester.size() == 3);
    REQUIRE(runs.responder.size() == 1);
    CHECK(runs.responder[0].byte_count == 1u << 20);
    for (const auto mode : {Coalescing::kSplitByFabric, Coalescing::kOff}) {
        const LargeTransfer single = large_transfer(mode);
        CHECK(single.runs == 0);
        CHECK(single.data_ok);
        REQUIRE(single.requester.size() == 3);
        REQUIRE(single.responder.size() == 1);
        for (size_t i = 0; i < 3; ++i) {
            CHECK(runs.requester[i].syndrome == hw::Syndrome::kSuccess);
            CHECK(runs.requester[i].completion_time_ns == single.requester[i].completion_time_ns);
        }
        CHECK(runs.responder[0].completion_time_ns == single.responder[0].completion_time_ns);
    }
}
