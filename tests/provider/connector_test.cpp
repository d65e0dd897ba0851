// Connectors and listeners beyond the basic handshake (data_path_test.cpp has that):
// pausing a listener (NdkControlConnectEvents), the 2.1 NdkAcceptEx /
// NdkCompleteConnectEx with the extended disconnect callback, and shared endpoints
// (NdkCreateSharedEndpoint, NdkConnectWithSharedEndpoint, their port rules).
#include "ndk_test.hpp"
#include "provider.hpp"  // kDisconnectReasonPeerRequest

using namespace ndktest;

namespace {

struct Incoming {
    std::atomic<NDK_CONNECTOR *> connector{nullptr};
    std::atomic<int> events{0};
    static void on_connect(PVOID ctx, NDK_CONNECTOR *c) {
        auto *self = static_cast<Incoming *>(ctx);
        self->connector.store(c);
        self->events.fetch_add(1);
    }
};

// A listener on 127.0.0.1 (port chosen by the device) on `s`'s adapter.
sockaddr_in listen_on(Side &s, Incoming &incoming) {
    REQUIRE(s.adapter->Dispatch->NdkCreateListener(s.adapter, Incoming::on_connect, &incoming,
                                                   Done::create, nullptr,
                                                   &s.listener) == STATUS_SUCCESS);
    sockaddr_in any = ipv4("127.0.0.1", 0);
    Done listened;
    REQUIRE(finish(s.listener->Dispatch->NdkListen(s.listener, reinterpret_cast<PSOCKADDR>(&any),
                                                   sizeof any, Done::request, &listened),
                   listened) == STATUS_SUCCESS);
    sockaddr_in bound{};
    ULONG length = sizeof bound;
    REQUIRE(s.listener->Dispatch->NdkGetLocalAddress(
                s.listener, reinterpret_cast<PSOCKADDR>(&bound), &length) == STATUS_SUCCESS);
    return bound;
}

// NdkConnect to `to`; returns the final status of the connect request.
NTSTATUS try_connect(Side &client, sockaddr_in to) {
    if (client.connector == nullptr)
        REQUIRE(client.adapter->Dispatch->NdkCreateConnector(client.adapter, Done::create, nullptr,
                                                             &client.connector) == STATUS_SUCCESS);
    sockaddr_in src = ipv4("127.0.0.1", 0);
    Done done;
    return finish(
        client.connector->Dispatch->NdkConnect(
            client.connector, client.qp, reinterpret_cast<PSOCKADDR>(&src), sizeof src,
            reinterpret_cast<PSOCKADDR>(&to), sizeof to, 1, 1, nullptr, 0, Done::request, &done),
        done);
}

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

NTSTATUS create_shared_endpoint(Side &s, sockaddr_in address, NDK_SHARED_ENDPOINT **out) {
    return s.adapter->Dispatch->NdkCreateSharedEndpoint(s.adapter,
                                                        reinterpret_cast<PSOCKADDR>(&address),
                                                        sizeof address, Done::create, nullptr, out);
}

}  // namespace

// ---- NdkControlConnectEvents

TEST_CASE("A paused listener refuses connections as if nobody listened; resumed, it accepts",
          "[provider][listener][cm][device]") {
    Wsk wsk;
    Side client(wsk, 4096), server(wsk, 4096);
    Incoming incoming;
    const sockaddr_in bound = listen_on(server, incoming);
    server.listener->Dispatch->NdkControlConnectEvents(server.listener, TRUE);
    CHECK(try_connect(client, bound) == STATUS_CONNECTION_REFUSED);
    CHECK(incoming.events.load() == 0);
    CHECK(close_sync(client.connector) == STATUS_SUCCESS);
    client.connector = nullptr;
    // Resumed: the request reaches the listener.
    server.listener->Dispatch->NdkControlConnectEvents(server.listener, FALSE);
    REQUIRE(client.adapter->Dispatch->NdkCreateConnector(client.adapter, Done::create, nullptr,
                                                         &client.connector) == STATUS_SUCCESS);
    sockaddr_in src = ipv4("127.0.0.1", 0);
    sockaddr_in dst = bound;
    Done connected;
    const NTSTATUS cs = client.connector->Dispatch->NdkConnect(
        client.connector, client.qp, reinterpret_cast<PSOCKADDR>(&src), sizeof src,
        reinterpret_cast<PSOCKADDR>(&dst), sizeof dst, 1, 1, nullptr, 0, Done::request, &connected);
    REQUIRE((cs == STATUS_PENDING || cs == STATUS_SUCCESS));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (incoming.events.load() == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(incoming.events.load() == 1);
    // Closing the delivered connector without accepting rejects the request.
    CHECK(close_sync(incoming.connector.load()) == STATUS_SUCCESS);
    CHECK(finish(cs, connected) == STATUS_CONNECTION_REFUSED);
}

TEST_CASE("Pausing before NdkListen takes effect when listening starts",
          "[provider][listener][cm][device]") {
    Wsk wsk;
    Side client(wsk, 4096), server(wsk, 4096);
    Incoming incoming;
    REQUIRE(server.adapter->Dispatch->NdkCreateListener(server.adapter, Incoming::on_connect,
                                                        &incoming, Done::create, nullptr,
                                                        &server.listener) == STATUS_SUCCESS);
    server.listener->Dispatch->NdkControlConnectEvents(server.listener, TRUE);
    sockaddr_in any = ipv4("127.0.0.1", 0);
    Done listened;
    REQUIRE(finish(server.listener->Dispatch->NdkListen(server.listener,
                                                        reinterpret_cast<PSOCKADDR>(&any),
                                                        sizeof any, Done::request, &listened),
                   listened) == STATUS_SUCCESS);
    sockaddr_in bound{};
    ULONG length = sizeof bound;
    REQUIRE(server.listener->Dispatch->NdkGetLocalAddress(
                server.listener, reinterpret_cast<PSOCKADDR>(&bound), &length) == STATUS_SUCCESS);
    CHECK(try_connect(client, bound) == STATUS_CONNECTION_REFUSED);
    CHECK(incoming.events.load() == 0);
}

// ---- NdkAcceptEx / NdkCompleteConnectEx

TEST_CASE("NdkAcceptEx and NdkCompleteConnectEx connect; the extended callback gets a reason",
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

// ---- shared endpoints

TEST_CASE("NdkCreateSharedEndpoint: addresses, port rules and NdkGetLocalAddress",
          "[provider][shared-endpoint][cm][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_SHARED_ENDPOINT *se = nullptr;
    sockaddr_in not_ours = ipv4("10.99.99.99", 0);
    CHECK(create_shared_endpoint(s, not_ours, &se) == STATUS_INVALID_ADDRESS);
    CHECK(s.adapter->Dispatch->NdkCreateSharedEndpoint(s.adapter, nullptr, 16, Done::create,
                                                       nullptr, &se) == STATUS_INVALID_PARAMETER);
    REQUIRE(create_shared_endpoint(s, ipv4("127.0.0.1", 0), &se) == STATUS_SUCCESS);
    CHECK(se->Header.ObjectType == NdkObjectTypeSharedEndpoint);
    sockaddr_in bound{};
    ULONG length = 1;
    CHECK(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<PSOCKADDR>(&bound), &length) ==
          STATUS_BUFFER_TOO_SMALL);
    CHECK(length == sizeof bound);
    REQUIRE(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<PSOCKADDR>(&bound), &length) ==
            STATUS_SUCCESS);
    CHECK(bound.sin_family == AF_INET);
    CHECK(ntohs(bound.sin_port) >= 49152);  // an ephemeral port
    // The port is taken: a second endpoint, or a listener, on it is a sharing violation.
    NDK_SHARED_ENDPOINT *again = nullptr;
    CHECK(create_shared_endpoint(s, bound, &again) == STATUS_SHARING_VIOLATION);
    NDK_LISTENER *l = nullptr;
    Incoming incoming;
    REQUIRE(s.adapter->Dispatch->NdkCreateListener(s.adapter, Incoming::on_connect, &incoming,
                                                   Done::create, nullptr, &l) == STATUS_SUCCESS);
    Done listened;
    CHECK(finish(l->Dispatch->NdkListen(l, reinterpret_cast<PSOCKADDR>(&bound), sizeof bound,
                                        Done::request, &listened),
                 listened) == STATUS_SHARING_VIOLATION);
    CHECK(close_sync(l) == STATUS_SUCCESS);
    CHECK(close_sync(se) == STATUS_SUCCESS);
    // Closed: the port is free again.
    REQUIRE(create_shared_endpoint(s, bound, &again) == STATUS_SUCCESS);
    CHECK(close_sync(again) == STATUS_SUCCESS);
}

TEST_CASE("Two connections leave from one shared endpoint; a third to the same peer is refused",
          "[provider][shared-endpoint][cm][device]") {
    Wsk wsk;
    Side client(wsk), server_a(wsk), server_b(wsk);
    NDK_SHARED_ENDPOINT *se = nullptr;
    REQUIRE(create_shared_endpoint(client, ipv4("127.0.0.1", 0), &se) == STATUS_SUCCESS);
    sockaddr_in bound{};
    ULONG length = sizeof bound;
    REQUIRE(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<PSOCKADDR>(&bound), &length) ==
            STATUS_SUCCESS);

    ConnectOptions o;
    o.shared_endpoint = se;
    connect(client, server_a, o);
    // The connection's local address is the endpoint's.
    sockaddr_in local{};
    length = sizeof local;
    REQUIRE(client.connector->Dispatch->NdkGetLocalAddress(
                client.connector, reinterpret_cast<PSOCKADDR>(&local), &length) == STATUS_SUCCESS);
    CHECK(local.sin_port == bound.sin_port);

    // A second client QP on the same adapter and PD, connected to another server.
    NDK_QP *qp2 = nullptr;
    REQUIRE(client.pd->Dispatch->NdkCreateQp(client.pd, client.cq, client.cq, &client, 16, 16, 2, 2,
                                             0, Done::create, nullptr, &qp2) == STATUS_SUCCESS);
    Incoming incoming;
    const sockaddr_in b_address = listen_on(server_b, incoming);
    NDK_CONNECTOR *c2 = nullptr;
    REQUIRE(client.adapter->Dispatch->NdkCreateConnector(client.adapter, Done::create, nullptr,
                                                         &c2) == STATUS_SUCCESS);
    sockaddr_in dst = b_address;
    Done connected;
    const NTSTATUS cs = c2->Dispatch->NdkConnectWithSharedEndpoint(
        c2, qp2, se, reinterpret_cast<PSOCKADDR>(&dst), sizeof dst, 1, 1, nullptr, 0, Done::request,
        &connected);
    REQUIRE((cs == STATUS_PENDING || cs == STATUS_SUCCESS));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (incoming.events.load() == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(incoming.events.load() == 1);
    sockaddr_in peer{};
    length = sizeof peer;
    REQUIRE(incoming.connector.load()->Dispatch->NdkGetPeerAddress(
                incoming.connector.load(), reinterpret_cast<PSOCKADDR>(&peer), &length) ==
            STATUS_SUCCESS);
    CHECK(peer.sin_port == bound.sin_port);  // both connections come from the endpoint's port
    CHECK(close_sync(incoming.connector.load()) == STATUS_SUCCESS);  // reject
    CHECK(finish(cs, connected) == STATUS_CONNECTION_REFUSED);

    // Same endpoint, same peer as the first connection: that 4-tuple exists.
    NDK_CONNECTOR *c3 = nullptr;
    NDK_QP *qp3 = nullptr;
    REQUIRE(client.pd->Dispatch->NdkCreateQp(client.pd, client.cq, client.cq, &client, 16, 16, 2, 2,
                                             0, Done::create, nullptr, &qp3) == STATUS_SUCCESS);
    REQUIRE(client.adapter->Dispatch->NdkCreateConnector(client.adapter, Done::create, nullptr,
                                                         &c3) == STATUS_SUCCESS);
    sockaddr_in a_address{};
    length = sizeof a_address;
    REQUIRE(server_a.listener->Dispatch->NdkGetLocalAddress(server_a.listener,
                                                            reinterpret_cast<PSOCKADDR>(&a_address),
                                                            &length) == STATUS_SUCCESS);
    Done third;
    CHECK(finish(c3->Dispatch->NdkConnectWithSharedEndpoint(
                     c3, qp3, se, reinterpret_cast<PSOCKADDR>(&a_address), sizeof a_address, 1, 1,
                     nullptr, 0, Done::request, &third),
                 third) == STATUS_ADDRESS_ALREADY_EXISTS);

    // The endpoint's close pends until the connectors that used it are closed.
    Done se_closed;
    const NTSTATUS close_status =
        se->Dispatch->NdkCloseSharedEndpoint(&se->Header, Done::close, &se_closed);
    REQUIRE(close_status == STATUS_PENDING);
    CHECK(se_closed.calls() == 0);
    CHECK(close_sync(c3) == STATUS_SUCCESS);
    CHECK(close_sync(c2) == STATUS_SUCCESS);
    CHECK(close_sync(client.connector) == STATUS_SUCCESS);
    client.connector = nullptr;
    CHECK(se_closed.wait());
    CHECK(close_sync(qp2) == STATUS_SUCCESS);
    CHECK(close_sync(qp3) == STATUS_SUCCESS);
}
