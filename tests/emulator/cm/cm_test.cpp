#include <catch2/catch.hpp>

#include "driver.hpp"

using namespace softndk;
using namespace softndk::emu;
using namespace softndk::emu::test;

#include <thread>

namespace {

struct Adapters {
    explicit Adapters(uint32_t cm_timeout_ms = 2000) {
        Profile prof = *find_profile("roce-default");
        prof.transport.cm_timeout_ms = cm_timeout_ms;
        auto ca = adapter(1, {"10.0.0.1", "fd00::1"});
        auto cb = adapter(2, {"10.0.0.2", "fd00::2"});
        ca.profile = cb.profile = prof;
        dev_a = std::make_shared<Device>(ca, fabric);
        dev_b = std::make_shared<Device>(cb, fabric);
        a = std::make_unique<Driver>(dev_a);
        b = std::make_unique<Driver>(dev_b);
        pd_a = a->create_pd();
        pd_b = b->create_pd();
        cq_a = a->create_cq();
        cq_b = b->create_cq();
        qp_a = a->create_qp(pd_a, *cq_a, *cq_a);
        qp_b = b->create_qp(pd_b, *cq_b, *cq_b);
    }
    std::shared_ptr<Fabric> fabric = std::make_shared<Fabric>();
    std::shared_ptr<Device> dev_a, dev_b;
    std::unique_ptr<Driver> a, b;
    uint32_t pd_a, pd_b;
    std::unique_ptr<CqHandle> cq_a, cq_b;
    std::unique_ptr<QpHandle> qp_a, qp_b;
};

std::vector<uint8_t> bytes(const char *s) {
    return {s, s + std::strlen(s)};
}

QpState state_of(Device &dev, uint32_t qp) {
    auto q = dev.find_qp(qp);
    std::lock_guard lock(q->mutex);
    return q->state;
}

}  // namespace

TEST_CASE("listen: address checks, sharing, ephemeral ports", "[cm][listen]") {
    Adapters t;
    uint32_t l1 = 0, l2 = 0;
    hw::WireSockaddr bound{};
    CHECK(t.b->listen(sockaddr("10.0.0.1", 5000), l1) == status::kInvalidAddress);  // a's address
    hw::WireSockaddr junk{};
    junk.length = 3;
    CHECK(t.b->listen(junk, l1) == status::kInvalidAddress);
    REQUIRE(t.b->listen(sockaddr("10.0.0.2", 5000), l1) == 0);
    CHECK(t.b->listen(sockaddr("10.0.0.2", 5000), l2) == status::kSharingViolation);
    CHECK(t.b->listen(sockaddr("0.0.0.0", 5000), l2) == status::kSharingViolation);
    REQUIRE(t.b->listen(sockaddr("fd00::2", 5000), l2, &bound) == 0);  // other family
    REQUIRE(t.b->listen(sockaddr("10.0.0.2", 0), l2, &bound) == 0);
    const uint16_t port = static_cast<uint16_t>(bound.bytes[2] << 8 | bound.bytes[3]);
    CHECK(port >= 49152);
    CHECK(t.b->object_command(hw::CommandOpcode::kCloseListener, l1) == 0);
    CHECK(t.b->listen(sockaddr("10.0.0.2", 5000), l1) == 0);
    CHECK(t.a->object_command(hw::CommandOpcode::kCloseListener, l1) == status::kInvalidParameter);
}

TEST_CASE("connect failures: unreachable, refused, paused listener, timeout", "[cm][connect]") {
    Adapters t(50);
    uint32_t conn = 0, listener = 0;
    SECTION("no adapter owns the destination") {
        CHECK(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.99", 80), conn) ==
              status::kHostUnreachable);
    }
    SECTION("no route: a group destination, or no address of the destination's family") {
        CHECK(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("224.0.0.1", 80), conn) ==
              status::kNetworkUnreachable);
        CHECK(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("255.255.255.255", 80),
                           conn) == status::kNetworkUnreachable);
        CHECK(t.a->connect(*t.qp_a, sockaddr("fd00::1", 0), sockaddr("ff02::1", 80), conn) ==
              status::kNetworkUnreachable);
        auto v4_only = adapter(3, {"10.0.0.3"});
        auto dev = std::make_shared<Device>(v4_only, t.fabric);
        Driver c(dev);
        auto cq = c.create_cq();
        auto qp = c.create_qp(c.create_pd(), *cq, *cq);
        CHECK(c.connect(*qp, sockaddr("::", 0), sockaddr("fd00::2", 80), conn) ==
              status::kNetworkUnreachable);
        // An explicit source the adapter does not own stays an address error.
        CHECK(c.connect(*qp, sockaddr("fd00::3", 0), sockaddr("fd00::2", 80), conn) ==
              status::kInvalidAddress);
        // The same adapter still reaches the IPv4 peer.
        CHECK(c.connect(*qp, sockaddr("0.0.0.0", 0), sockaddr("10.0.0.2", 80), conn) == 0);
    }
    SECTION("source address not ours") {
        CHECK(t.a->connect(*t.qp_a, sockaddr("10.0.0.2", 0), sockaddr("10.0.0.2", 80), conn) ==
              status::kInvalidAddress);
    }
    SECTION("no listener") {
        REQUIRE(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn) ==
                0);
        auto e = t.a->wait_event(hw::EqeType::kConnectReply);
        REQUIRE(e);
        CHECK(e->object == conn);
        CHECK(e->status == status::kConnectionRefused);
    }
    SECTION("paused listener refuses, resumed one accepts requests") {
        REQUIRE(t.b->listen(sockaddr("10.0.0.2", 80), listener) == 0);
        REQUIRE(t.b->object_command(hw::CommandOpcode::kPauseListener, listener, 1) == 0);
        REQUIRE(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn) ==
                0);
        auto e = t.a->wait_event(hw::EqeType::kConnectReply);
        REQUIRE(e);
        CHECK(e->status == status::kConnectionRefused);
        REQUIRE(t.b->object_command(hw::CommandOpcode::kPauseListener, listener, 0) == 0);
        REQUIRE(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn) ==
                0);
        CHECK(t.b->wait_event(hw::EqeType::kConnectRequest));
    }
    SECTION("nobody answers") {
        REQUIRE(t.b->listen(sockaddr("10.0.0.2", 80), listener) == 0);
        REQUIRE(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn) ==
                0);
        auto e = t.a->wait_event(hw::EqeType::kConnectReply);
        REQUIRE(e);
        CHECK(e->status == status::kIoTimeout);
        CHECK(state_of(*t.dev_a, t.qp_a->number) == QpState::kReset);
    }
    SECTION("private data over the caller limit") {
        std::vector<uint8_t> big(t.a->limits.max_caller_data + 1, 1);
        CHECK(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn, 4, 4,
                           big) == status::kInvalidParameter);
    }
}

TEST_CASE("reject carries private data back to the active side", "[cm][reject]") {
    Adapters t;
    uint32_t listener = 0, conn = 0;
    REQUIRE(t.b->listen(sockaddr("10.0.0.2", 80), listener) == 0);
    REQUIRE(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn, 4, 4,
                         bytes("hello")) == 0);
    auto req = t.b->wait_event(hw::EqeType::kConnectRequest);
    REQUIRE(req);
    CHECK(req->object == listener);
    const auto incoming = static_cast<uint32_t>(req->data0);
    hw::ConnectionInfo info{};
    REQUIRE(t.b->query(incoming, info) == 0);
    CHECK(info.private_data_bytes == 5);
    CHECK(std::memcmp(info.private_data, "hello", 5) == 0);
    CHECK(info.private_data_capacity == t.b->limits.max_caller_data);
    auto peer = cm::parse_sockaddr(info.peer);
    REQUIRE(peer);
    CHECK(peer->ip == ip("10.0.0.1"));
    CHECK(peer->port >= 49152);
    std::vector<uint8_t> too_big(t.b->limits.max_callee_data + 1, 0);
    CHECK(t.b->reject(incoming, too_big) == status::kInvalidParameter);
    REQUIRE(t.b->reject(incoming, bytes("go away")) == 0);
    auto rep = t.a->wait_event(hw::EqeType::kConnectReply);
    REQUIRE(rep);
    CHECK(rep->status == status::kConnectionRefused);
    REQUIRE(t.a->query(conn, info) == 0);
    CHECK(info.private_data_bytes == 7);
    CHECK(std::memcmp(info.private_data, "go away", 7) == 0);
    CHECK(t.b->accept(incoming, *t.qp_b) == status::kConnectionAborted);
    // The QP is free again for another connect.
    CHECK(state_of(*t.dev_a, t.qp_a->number) == QpState::kReset);
}

TEST_CASE("IRD/ORD negotiation and private data on accept", "[cm][ird]") {
    Adapters t;
    uint32_t listener = 0, conn = 0;
    REQUIRE(t.b->listen(sockaddr("10.0.0.2", 80), listener) == 0);
    // a: IRD 8, ORD 2.  b: IRD 1, ORD 100 (capped to the device's 16).
    REQUIRE(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn, 8, 2) ==
            0);
    auto req = t.b->wait_event(hw::EqeType::kConnectRequest);
    REQUIRE(req);
    const auto incoming = static_cast<uint32_t>(req->data0);
    hw::ConnectionInfo info{};
    REQUIRE(t.b->query(incoming, info) == 0);
    CHECK(info.inbound_read_limit == 2);   // before accept: min(max IRD 16, peer ORD 2)
    CHECK(info.outbound_read_limit == 8);  // min(max ORD 16, peer IRD 8)
    REQUIRE(t.b->accept(incoming, *t.qp_b, 1, 100, bytes("welcome")) == 0);
    CHECK(t.b->accept(incoming, *t.qp_b) == status::kInvalidDeviceState);
    auto rep = t.a->wait_event(hw::EqeType::kConnectReply);
    REQUIRE(rep);
    CHECK(rep->status == 0);
    REQUIRE(t.a->query(conn, info) == 0);
    CHECK(info.inbound_read_limit == 8);   // min(8, peer ORD 16)
    CHECK(info.outbound_read_limit == 1);  // min(2, peer IRD 1)
    CHECK(info.private_data_bytes == 7);
    CHECK(std::memcmp(info.private_data, "welcome", 7) == 0);
    REQUIRE(t.b->query(incoming, info) == 0);
    CHECK(info.inbound_read_limit == 1);   // min(1, peer ORD 2)
    CHECK(info.outbound_read_limit == 8);  // min(16, peer IRD 8)
    CHECK(state_of(*t.dev_b, t.qp_b->number) == QpState::kRtr);
    CHECK(state_of(*t.dev_a, t.qp_a->number) == QpState::kReset);
    REQUIRE(t.a->object_command(hw::CommandOpcode::kCompleteConnect, conn) == 0);
    CHECK(state_of(*t.dev_a, t.qp_a->number) == QpState::kRts);
    auto est = t.b->wait_event(hw::EqeType::kEstablished);
    REQUIRE(est);
    CHECK(est->object == incoming);
    CHECK(state_of(*t.dev_b, t.qp_b->number) == QpState::kRts);
    // Connecting a connected QP again is refused.
    uint32_t again = 0;
    CHECK(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), again) ==
          status::kConnectionActive);
}

TEST_CASE("the active side may reject after the reply and an unanswered accept times out",
          "[cm][reject]") {
    Adapters t(50);
    uint32_t listener = 0, conn = 0;
    REQUIRE(t.b->listen(sockaddr("10.0.0.2", 80), listener) == 0);
    REQUIRE(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn) == 0);
    auto req = t.b->wait_event(hw::EqeType::kConnectRequest);
    REQUIRE(req);
    REQUIRE(t.b->accept(static_cast<uint32_t>(req->data0), *t.qp_b) == 0);
    REQUIRE(t.a->wait_event(hw::EqeType::kConnectReply));
    SECTION("reject after reply") {
        REQUIRE(t.a->reject(conn) == 0);
        auto ab = t.b->wait_event(hw::EqeType::kConnectAborted);
        REQUIRE(ab);
        CHECK(ab->status == status::kConnectionAborted);
        CHECK(t.a->object_command(hw::CommandOpcode::kCompleteConnect, conn) ==
              status::kConnectionAborted);
    }
    SECTION("no CompleteConnect") {
        auto ab = t.b->wait_event(hw::EqeType::kConnectAborted);
        REQUIRE(ab);
        CHECK(ab->status == status::kIoTimeout);
        CHECK(state_of(*t.dev_b, t.qp_b->number) == QpState::kError);
    }
}

TEST_CASE("disconnect: the peer is told, ours completes and flushes", "[cm][disconnect]") {
    ConnectedPair p;
    Buffer dst(256);
    auto mr_a = p.a->register_mr(p.pd_a, dst.data(), dst.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.a->post_recv(*p.qp_a, {{dst.addr(), 64, mr_a.token}});
    p.b->post_recv(*p.qp_b, {{dst.addr(), 64, mr_b.token}});
    SECTION("active side disconnects") {
        REQUIRE(p.a->object_command(hw::CommandOpcode::kDisconnect, p.conn_a) == 0);
        auto peer = p.b->wait_event(hw::EqeType::kDisconnected);
        REQUIRE(peer);
        CHECK(peer->object == p.conn_b);
        auto done = p.a->wait_event(hw::EqeType::kDisconnectDone);
        REQUIRE(done);
        CHECK(done->status == 0);
        auto c = Driver::drain(*p.rcq_a);
        REQUIRE(c.size() == 1);
        CHECK(c[0].syndrome == hw::Syndrome::kWorkRequestFlushed);
        // The peer's receive is not flushed merely because the peer left...
        CHECK(Driver::drain(*p.rcq_b).empty());
        // ...until it disconnects too.
        REQUIRE(p.b->object_command(hw::CommandOpcode::kDisconnect, p.conn_b) == 0);
        CHECK(p.b->wait_event(hw::EqeType::kDisconnectDone));
        CHECK(Driver::drain(*p.rcq_b).size() == 1);
    }
    SECTION("passive side disconnects") {
        REQUIRE(p.b->object_command(hw::CommandOpcode::kDisconnect, p.conn_b) == 0);
        CHECK(p.a->wait_event(hw::EqeType::kDisconnected));
        CHECK(p.b->wait_event(hw::EqeType::kDisconnectDone));
        CHECK(Driver::drain(*p.rcq_b).size() == 1);
        CHECK(p.b->object_command(hw::CommandOpcode::kDisconnect, p.conn_b) ==
              status::kConnectionInvalid);
        CHECK(p.b->object_command(hw::CommandOpcode::kCloseConnection, p.conn_b) == 0);
        CHECK(p.b->object_command(hw::CommandOpcode::kCloseConnection, p.conn_b) ==
              status::kInvalidParameter);
    }
}

TEST_CASE("a context that dies mid-transfer disconnects its peers", "[cm][death]") {
    ConnectedPair p;
    Buffer src(1 << 16), dst(1 << 16);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.b->post_recv(*p.qp_b, {{dst.addr(), 1 << 16, mr_b.token}});
    // Start a transfer the peer cannot finish (no more receives), then die.
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 1 << 16, mr_a.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 1 << 16, mr_a.token}});
    p.a->kill();
    auto e = p.b->wait_event(hw::EqeType::kDisconnected);
    REQUIRE(e);
    CHECK(e->object == p.conn_b);
    CHECK(p.dev_a->context_count() == 0);
}

TEST_CASE("IPv6 addresses connect and carry data", "[cm][ipv6]") {
    Adapters t;
    uint32_t listener = 0, conn = 0;
    REQUIRE(t.b->listen(sockaddr("::", 6000), listener) == 0);
    REQUIRE(t.a->connect(*t.qp_a, sockaddr("fd00::1", 0), sockaddr("fd00::2", 6000), conn) == 0);
    auto req = t.b->wait_event(hw::EqeType::kConnectRequest);
    REQUIRE(req);
    REQUIRE(t.b->accept(static_cast<uint32_t>(req->data0), *t.qp_b) == 0);
    REQUIRE(t.a->wait_event(hw::EqeType::kConnectReply));
    REQUIRE(t.a->object_command(hw::CommandOpcode::kCompleteConnect, conn) == 0);
    Buffer a(64), b(64);
    auto ma = t.a->register_mr(t.pd_a, a.data(), 64);
    auto mb = t.b->register_mr(t.pd_b, b.data(), 64);
    a.data()[0] = 0x66;
    t.b->post_recv(*t.qp_b, {{b.addr(), 64, mb.token}});
    t.a->post_send(*t.qp_a, hw::WqeOpcode::kSend, {{a.addr(), 64, ma.token}});
    hw::Cqe c{};
    REQUIRE(Driver::poll(*t.cq_b, c));
    CHECK(c.byte_count == 64);
    CHECK(b.data()[0] == 0x66);
    hw::ConnectionInfo info{};
    REQUIRE(t.a->query(conn, info) == 0);
    auto peer = cm::parse_sockaddr(info.peer);
    REQUIRE(peer);
    CHECK_FALSE(peer->v4);
    CHECK(peer->port == 6000);
}

TEST_CASE("loopback: an adapter connects to its own address", "[cm][loopback]") {
    Adapters t;
    auto qp2 = t.a->create_qp(t.pd_a, *t.cq_a, *t.cq_a);
    uint32_t listener = 0, conn = 0;
    REQUIRE(t.a->listen(sockaddr("10.0.0.1", 7000), listener) == 0);
    REQUIRE(t.a->connect(*t.qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.1", 7000), conn) == 0);
    auto req = t.a->wait_event(hw::EqeType::kConnectRequest);
    REQUIRE(req);
    REQUIRE(t.a->accept(static_cast<uint32_t>(req->data0), *qp2) == 0);
    REQUIRE(t.a->wait_event(hw::EqeType::kConnectReply));
    REQUIRE(t.a->object_command(hw::CommandOpcode::kCompleteConnect, conn) == 0);
    Buffer a(64), b(64);
    auto ma = t.a->register_mr(t.pd_a, a.data(), 64);
    auto mb = t.a->register_mr(t.pd_a, b.data(), 64);
    a.data()[1] = 0x11;
    t.a->post_recv(*qp2, {{b.addr(), 64, mb.token}});
    t.a->post_send(*t.qp_a, hw::WqeOpcode::kSend, {{a.addr(), 64, ma.token}});
    CHECK(Driver::drain(*t.cq_a).size() == 2);
    CHECK(b.data()[1] == 0x11);
}

// Issue 16, item 6: a consumer that destroys its QPs without ever closing their
// connections leaves one record per connect. The records used to keep their ephemeral
// ports, so after 16,384 of them every connect on the adapter failed with
// TOO_MANY_ADDRESSES; the port now goes with the QP.
TEST_CASE(
    "a destroyed QP gives its connection's port back: leaked records never exhaust "
    "the ephemeral ports",
    "[cm][connect][leak]") {
    Adapters t(600'000);  // no timeout: every record stays in REQ-sent
    uint32_t listener = 0;
    REQUIRE(t.b->listen(sockaddr("10.0.0.2", 80), listener) == 0);
    constexpr uint32_t kEphemeralPorts = 65536 - 49152;
    uint32_t failures = 0;
    int32_t first_failure = 0;
    for (uint32_t i = 0; i < kEphemeralPorts + 64; ++i) {
        auto qp = t.a->create_qp(t.pd_a, *t.cq_a, *t.cq_a);
        uint32_t conn = 0;
        const int32_t s =
            t.a->connect(*qp, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 80), conn);
        if (s != 0 && failures++ == 0) first_failure = s;
        REQUIRE(t.a->object_command(hw::CommandOpcode::kDestroyQp, qp->number) == 0);
    }
    CHECK(failures == 0);
    CHECK(first_failure == 0);
    // The leaked records still exist (they are the consumer's to close), and the port a
    // live connection holds is still refused to a second claimant.
    auto qp = t.a->create_qp(t.pd_a, *t.cq_a, *t.cq_a);
    uint32_t conn = 0;
    REQUIRE(t.a->connect(*qp, sockaddr("10.0.0.1", 7000), sockaddr("10.0.0.2", 80), conn) == 0);
    auto other = t.a->create_qp(t.pd_a, *t.cq_a, *t.cq_a);
    uint32_t again = 0;
    CHECK(t.a->connect(*other, sockaddr("10.0.0.1", 7000), sockaddr("10.0.0.2", 80), again) ==
          status::kSharingViolation);
    uint32_t l2 = 0;
    CHECK(t.a->listen(sockaddr("10.0.0.1", 7000), l2) == status::kSharingViolation);
    REQUIRE(t.a->object_command(hw::CommandOpcode::kDestroyQp, qp->number) == 0);
    CHECK(t.a->listen(sockaddr("10.0.0.1", 7000), l2) == 0);
}

TEST_CASE("listeners and shared endpoints count against the context's listener quota",
          "[cm][listen][quota]") {
    auto fabric = std::make_shared<Fabric>();
    auto config = adapter(1, {"10.0.0.1"});
    config.quota.listeners = 3;
    auto device = std::make_shared<Device>(config, fabric);
    Driver a(device), b(device);
    uint32_t l = 0;
    REQUIRE(a.listen(sockaddr("10.0.0.1", 0), l) == 0);
    REQUIRE(a.listen(sockaddr("10.0.0.1", 0), l) == 0);
    hw::ListenRequest rq{};
    rq.address = sockaddr("10.0.0.1", 0);
    hw::ListenResponse rs{};
    REQUIRE(a.command(hw::CommandOpcode::kCreateSharedEndpoint, rq, rs) == 0);
    const uint32_t shared = rs.listener;
    CHECK(a.listen(sockaddr("10.0.0.1", 0), l) == status::kInsufficientResources);
    CHECK(a.command(hw::CommandOpcode::kCreateSharedEndpoint, rq, rs) ==
          status::kInsufficientResources);
    // Another context has its own quota.
    CHECK(b.listen(sockaddr("10.0.0.1", 0), l) == 0);
    // Closing one frees one.
    REQUIRE(a.object_command(hw::CommandOpcode::kCloseSharedEndpoint, shared) == 0);
    CHECK(a.listen(sockaddr("10.0.0.1", 0), l) == 0);
    CHECK(a.listen(sockaddr("10.0.0.1", 0), l) == status::kInsufficientResources);
}

TEST_CASE("the listener quota holds per consumer process, summed over its contexts",
          "[cm][listen][quota]") {
    auto fabric = std::make_shared<Fabric>();
    auto config = adapter(1, {"10.0.0.1"});
    config.quota.listeners = 3;
    auto device = std::make_shared<Device>(config, fabric);
    // Three handles of process 4242 (three daemon sessions of one peer), one of 4343.
    Driver first(device, 4242), second(device, 4242), third(device, 4242), other(device, 4343);
    uint32_t l = 0;
    REQUIRE(first.listen(sockaddr("10.0.0.1", 0), l) == 0);
    REQUIRE(second.listen(sockaddr("10.0.0.1", 0), l) == 0);
    hw::ListenRequest rq{};
    rq.address = sockaddr("10.0.0.1", 0);
    hw::ListenResponse rs{};
    REQUIRE(third.command(hw::CommandOpcode::kCreateSharedEndpoint, rq, rs) == 0);
    const uint32_t shared = rs.listener;
    // The process holds 3: each of its handles is refused, however few it holds itself.
    CHECK(first.listen(sockaddr("10.0.0.1", 0), l) == status::kInsufficientResources);
    CHECK(third.listen(sockaddr("10.0.0.1", 0), l) == status::kInsufficientResources);
    CHECK(second.command(hw::CommandOpcode::kCreateSharedEndpoint, rq, rs) ==
          status::kInsufficientResources);
    // Another process has its own quota.
    for (int i = 0; i < 3; ++i)
        CHECK(other.listen(sockaddr("10.0.0.1", 0), l) == 0);
    CHECK(other.listen(sockaddr("10.0.0.1", 0), l) == status::kInsufficientResources);
    // What one handle frees, another handle of the process may take.
    REQUIRE(third.object_command(hw::CommandOpcode::kCloseSharedEndpoint, shared) == 0);
    CHECK(first.listen(sockaddr("10.0.0.1", 0), l) == 0);
    CHECK(second.listen(sockaddr("10.0.0.1", 0), l) == status::kInsufficientResources);
}
