// NDK_CONNECTOR beyond the basic handshake (data_path_test.cpp has that): the 2.1
// NdkAcceptEx / NdkCompleteConnectEx with the extended disconnect callback and their
// state checks. Listeners (NdkListen, NdkControlConnectEvents, NdkReject) are in
// listener_test.cpp, shared endpoints (NdkConnectWithSharedEndpoint) in
// shared_endpoint_test.cpp.
#include <cstring>

#include "ndk_test.hpp"
#include "provider.hpp"  // kDisconnectReasonPeerRequest

using namespace ndktest;

namespace {

struct ReasonSeen {
    std::atomic<int> calls{0};
    std::atomic<ULONG> reason{0xffffffff};
    Done done;
    static void cb(PVOID ctx, ULONG reason) {
        auto *self = static_cast<ReasonSeen *>(ctx);
        self->reason.store(reason);
        self->calls.fetch_add(1);
        self->done.signal(STATUS_SUCCESS);
    }
};

}  // namespace

// ---- Several handles of one interface

TEST_CASE("NdkAccept of a QP from another handle of the interface, three handles open",
          "[provider][connector][cm][device]") {
    // As drivers do: the listener (and so the connector it delivers) on handle A, the
    // accepted QP with its PD and CQs on handle B, the client's connector on handle C
    // and its QP on handle D. Real providers accept this: every handle reaches one port.
    Wsk wsk;
    Handle listening(wsk), connecting(wsk);
    Side client(wsk), server(wsk);
    ConnectOptions o;
    o.listener_adapter = listening.adapter;
    o.connector_adapter = connecting.adapter;
    connect(client, server, o);
    // Data flows both ways over the QPs of the other handles.
    for (Side *rx_side : {&server, &client}) {
        Side &tx_side = rx_side == &server ? client : server;
        NDK_SGE rx = rx_side->sge(0, 64);
        REQUIRE(rx_side->qp->Dispatch->NdkReceive(rx_side->qp, nullptr, &rx, 1) == STATUS_SUCCESS);
        std::memcpy(tx_side.buffer.data(), "handles", 7);
        NDK_SGE tx = tx_side.sge(0, 7);
        REQUIRE(tx_side.qp->Dispatch->NdkSend(tx_side.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
        CHECK(tx_side.poll_one().Status == STATUS_SUCCESS);
        const NDK_RESULT_EX r = rx_side->poll_one();
        CHECK(r.Status == STATUS_SUCCESS);
        CHECK(r.BytesTransferred == 7);
        CHECK(std::memcmp(rx_side->buffer.data(), "handles", 7) == 0);
    }
    // The passive side's connector (handle A) reports the connection of handle B's QP.
    SOCKADDR_STORAGE peer{};
    ULONG peer_len = sizeof peer;
    CHECK(server.connector->Dispatch->NdkGetPeerAddress(
              server.connector, reinterpret_cast<PSOCKADDR>(&peer), &peer_len) == STATUS_SUCCESS);
    // An orderly disconnect through the connectors of the other handles.
    Done disconnected;
    REQUIRE(finish(client.connector->Dispatch->NdkDisconnect(client.connector, Done::request,
                                                             &disconnected),
                   disconnected) == STATUS_SUCCESS);
}

TEST_CASE("A QP's CQs may come from another handle of the interface",
          "[provider][pd][cq][device]") {
    Wsk wsk;
    Side owner(wsk);
    Handle other(wsk);
    NDK_CQ *cq = nullptr;
    REQUIRE(other.adapter->Dispatch->NdkCreateCq(other.adapter, 64, Side::notify, &owner, nullptr,
                                                 Done::create, nullptr, &cq) == STATUS_SUCCESS);
    NDK_QP *qp = nullptr;
    CHECK(owner.pd->Dispatch->NdkCreateQp(owner.pd, cq, owner.cq, nullptr, 16, 16, 1, 1, 0,
                                          Done::create, nullptr, &qp) == STATUS_SUCCESS);
    REQUIRE(qp != nullptr);
    CHECK(close_sync(qp) == STATUS_SUCCESS);
    CHECK(close_sync(cq) == STATUS_SUCCESS);
}

// ---- NdkAcceptEx / NdkCompleteConnectEx

TEST_CASE("NdkAcceptEx and NdkCompleteConnectEx connect: the extended callback gets a reason",
          "[provider][connector][cm][device]") {
    Wsk wsk;
    Side client(wsk), server(wsk);
    ReasonSeen server_seen, client_seen;
    ConnectOptions o;
    o.server_disconnect_ex = ReasonSeen::cb;
    o.server_disconnect_context = &server_seen;
    o.client_disconnect_ex = ReasonSeen::cb;
    o.client_disconnect_context = &client_seen;
    connect(client, server, o);
    // Data flows.
    NDK_SGE rx = server.sge(0, 64);
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    NDK_SGE tx = client.sge(0, 8);
    REQUIRE(client.qp->Dispatch->NdkSend(client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    CHECK(server.poll_one().Status == STATUS_SUCCESS);
    // The client disconnects: the server's extended callback fires once, with the reason.
    Done disconnected;
    REQUIRE(finish(client.connector->Dispatch->NdkDisconnect(client.connector, Done::request,
                                                             &disconnected),
                   disconnected) == STATUS_SUCCESS);
    REQUIRE(server_seen.done.wait());
    CHECK(server_seen.calls.load() == 1);
    CHECK(server_seen.reason.load() == softndk::provider::kDisconnectReasonPeerRequest);
    CHECK(client_seen.calls.load() == 0);  // its own disconnect is not an event
}

TEST_CASE("NdkCompleteConnectEx and NdkAcceptEx in the wrong state",
          "[provider][connector][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_CONNECTOR *c = nullptr;
    REQUIRE(s.adapter->Dispatch->NdkCreateConnector(s.adapter, Done::create, nullptr, &c) ==
            STATUS_SUCCESS);
    CHECK(c->Dispatch->NdkCompleteConnectEx(c, nullptr, nullptr, Done::request, nullptr) ==
          STATUS_CONNECTION_INVALID);
    CHECK(c->Dispatch->NdkCompleteConnectEx(c, nullptr, nullptr, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkAcceptEx(c, s.qp, 1, 1, nullptr, 0, nullptr, nullptr, Done::request,
                                   nullptr) == STATUS_CONNECTION_INVALID);
    CHECK(c->Dispatch->NdkAcceptEx(c, nullptr, 1, 1, nullptr, 0, nullptr, nullptr, Done::request,
                                   nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(close_sync(c) == STATUS_SUCCESS);
}

// ---- Connect failures: each with its documented status, never a hang

TEST_CASE("A connect to an unroutable or unowned destination fails at once with its status",
          "[provider][cm][device]") {
    Wsk wsk;
    Side client{wsk};
    // Group addresses have no unicast route: STATUS_NETWORK_UNREACHABLE.
    CHECK(try_connect(client, ipv4("224.0.0.1", 80)) == STATUS_NETWORK_UNREACHABLE);
    CHECK(try_connect(client, ipv4("255.255.255.255", 80)) == STATUS_NETWORK_UNREACHABLE);
    // On the fabric, but no adapter owns the address: STATUS_HOST_UNREACHABLE.
    CHECK(try_connect(client, ipv4("127.0.0.2", 80)) == STATUS_HOST_UNREACHABLE);
    // A destination port of 0 names no listener.
    CHECK(try_connect(client, ipv4("127.0.0.1", 0)) == STATUS_INVALID_ADDRESS);
}

TEST_CASE("A connect the listener's consumer never answers fails with STATUS_IO_TIMEOUT",
          "[provider][cm][device]") {
    Wsk wsk;
    Side client{wsk};
    Side server{wsk};
    Incoming incoming;
    const sockaddr_in bound = listen_on(server, incoming);
    const auto started = std::chrono::steady_clock::now();
    CHECK(try_connect(client, bound) == STATUS_IO_TIMEOUT);
    // The CM timeout of the roce-default profile (2 s), not the test's 10 s guard.
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(8));
    REQUIRE(incoming.wait());
    // Accepting after the initiator gave up is answered as such.
    NDK_CONNECTOR *late = incoming.connector.load();
    Done accepted;
    CHECK(finish(late->Dispatch->NdkAccept(late, server.qp, 1, 1, nullptr, 0, nullptr, nullptr,
                                           Done::request, &accepted),
                 accepted) == STATUS_CONNECTION_ABORTED);
    CHECK(close_sync(late) == STATUS_SUCCESS);
}

// ---- Teardown flushes the QP (the device does it; the provider sends no kFlushQp)

TEST_CASE("NdkDisconnect cancels the requests pending on its own QP",
          "[provider][connector][cm][device]") {
    Pair p;
    NDK_SGE r = p.client.sge(0, 64);
    auto *context = reinterpret_cast<void *>(0x51);
    REQUIRE(p.client.qp->Dispatch->NdkReceive(p.client.qp, context, &r, 1) == STATUS_SUCCESS);
    Done done;
    REQUIRE(finish(p.client.connector->Dispatch->NdkDisconnect(p.client.connector, Done::request,
                                                               &done),
                   done) == STATUS_SUCCESS);
    const NDK_RESULT_EX flushed = p.client.poll_one();
    CHECK(flushed.RequestContext == context);
    CHECK(flushed.Status == STATUS_CANCELLED);
    CHECK((flushed.Type & NdkOperationTypeReceive) != 0);
}

TEST_CASE(
    "Closing a connected connector without NdkDisconnect cancels its QP's requests "
    "and the peer sees the disconnect",
    "[provider][connector][cm][device]") {
    ReasonSeen client_seen;
    ConnectOptions o;
    o.client_disconnect = [](PVOID ctx) { ReasonSeen::cb(ctx, 0); };
    o.client_disconnect_context = &client_seen;
    Pair p(o);
    NDK_SGE r = p.server.sge(0, 64);
    auto *context = reinterpret_cast<void *>(0x52);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, context, &r, 1) == STATUS_SUCCESS);
    NDK_CONNECTOR *connector = p.server.connector;
    p.server.connector = nullptr;  // closed here, not by the Side
    REQUIRE(close_sync(connector) == STATUS_SUCCESS);
    const NDK_RESULT_EX flushed = p.server.poll_one();
    CHECK(flushed.RequestContext == context);
    CHECK(flushed.Status == STATUS_CANCELLED);
    REQUIRE(client_seen.done.wait());
    CHECK(client_seen.calls == 1);
}
