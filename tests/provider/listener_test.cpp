// NDK_LISTENER: NdkCreateListener, NdkListen (port 0, port conflicts, addresses the adapter
// does not have, argument checks), NdkGetLocalAddress (size query), NdkControlConnectEvents
// (pause / resume), the connect event and what the passive side can answer with: NdkReject
// with private data, or closing the delivered connector. Also connecting where nobody
// listens, and closing a listener while a request it delivered is still unanswered (7.10).
#include "ndk_test.hpp"

using namespace ndktest;

namespace {

NTSTATUS listen(NDK_LISTENER *l, void *address, ULONG length) {
    Done done;
    return finish(
        l->Dispatch->NdkListen(l, static_cast<PSOCKADDR>(address), length, Done::request, &done),
        done);
}

NDK_LISTENER *create_listener(Side &s, Incoming &incoming) {
    NDK_LISTENER *l = nullptr;
    REQUIRE(s.adapter->Dispatch->NdkCreateListener(s.adapter, Incoming::on_connect, &incoming,
                                                   Done::create, nullptr, &l) == STATUS_SUCCESS);
    return l;
}

}  // namespace

// ---- NdkCreateListener / NdkListen / NdkGetLocalAddress

TEST_CASE("NdkCreateListener checks its arguments", "[provider][listener][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_ADAPTER *a = s.adapter;
    Incoming incoming;
    NDK_LISTENER *l = nullptr;
    CHECK(a->Dispatch->NdkCreateListener(a, nullptr, nullptr, Done::create, nullptr, &l) ==
          STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateListener(a, Incoming::on_connect, &incoming, nullptr, nullptr,
                                         &l) == STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateListener(a, Incoming::on_connect, &incoming, Done::create, nullptr,
                                         nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateListener(nullptr, Incoming::on_connect, &incoming, Done::create,
                                         nullptr, &l) == STATUS_INVALID_PARAMETER);
    CHECK(l == nullptr);
    l = create_listener(s, incoming);
    CHECK(l->Header.ObjectType == NdkObjectTypeListener);
    // A listener that never listened closes at once.
    CHECK(close_sync(l) == STATUS_SUCCESS);
}

TEST_CASE("NdkListen and NdkGetLocalAddress check addresses and arguments",
          "[provider][listener][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    Incoming incoming;
    NDK_LISTENER *l = s.listener = create_listener(s, incoming);
    sockaddr_in v4 = ipv4("127.0.0.1", 0);
    sockaddr_in bad_family = v4;
    bad_family.sin_family = 23;  // Windows' AF_INET6: not an address family on Linux
    CHECK(listen(l, &bad_family, sizeof bad_family) == STATUS_INVALID_ADDRESS);
    sockaddr_in unix_family = v4;
    unix_family.sin_family = AF_UNIX;
    CHECK(listen(l, &unix_family, sizeof unix_family) == STATUS_INVALID_ADDRESS);
    CHECK(listen(l, &v4, sizeof v4 - 1) == STATUS_INVALID_PARAMETER);
    CHECK(listen(l, nullptr, sizeof v4) == STATUS_INVALID_PARAMETER);
    sockaddr_in6 v6{};
    v6.sin6_family = AF_INET6;
    CHECK(listen(l, &v6, sizeof(sockaddr_in)) == STATUS_INVALID_PARAMETER);
    CHECK(l->Dispatch->NdkListen(l, reinterpret_cast<PSOCKADDR>(&v4), sizeof v4, nullptr,
                                 nullptr) == STATUS_INVALID_PARAMETER);
    sockaddr_in bound{};
    ULONG len = sizeof bound;
    CHECK(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&bound), &len) ==
          STATUS_INVALID_DEVICE_STATE);  // not listening yet
    // None of the refused calls left the listener half-listening.
    REQUIRE(listen(l, &v4, sizeof v4) == STATUS_SUCCESS);
    CHECK(listen(l, &v4, sizeof v4) == STATUS_INVALID_DEVICE_STATE);  // listens once
    CHECK(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&bound), nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(l->Dispatch->NdkGetLocalAddress(nullptr, reinterpret_cast<PSOCKADDR>(&bound), &len) ==
          STATUS_INVALID_PARAMETER);
}

TEST_CASE("NdkListen on port 0 picks an ephemeral port that NdkGetLocalAddress reports",
          "[provider][listener][device]") {
    Wsk wsk;
    Side client(wsk, 4096), server(wsk, 4096);
    Incoming incoming;
    NDK_LISTENER *l = server.listener = create_listener(server, incoming);
    sockaddr_in any = ipv4("127.0.0.1", 0);
    REQUIRE(listen(l, &any, sizeof any) == STATUS_SUCCESS);
    // Size query: no buffer, or one too small, answers the size needed.
    ULONG len = 0;
    CHECK(l->Dispatch->NdkGetLocalAddress(l, nullptr, &len) == STATUS_BUFFER_TOO_SMALL);
    CHECK(len == sizeof(sockaddr_in));
    sockaddr_in bound{};
    len = 4;
    CHECK(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&bound), &len) ==
          STATUS_BUFFER_TOO_SMALL);
    CHECK(len == sizeof(sockaddr_in));
    CHECK(bound.sin_family == 0);  // nothing written
    len = sizeof(SOCKADDR_STORAGE);
    REQUIRE(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&bound), &len) ==
            STATUS_SUCCESS);
    CHECK(len == sizeof(sockaddr_in));
    CHECK(bound.sin_family == AF_INET);
    CHECK(bound.sin_addr.s_addr == any.sin_addr.s_addr);
    CHECK(ntohs(bound.sin_port) >= 49152);
    // The reported port is the one requests reach.
    Done connected;
    const NTSTATUS cs = start_connect(client, bound, connected);
    REQUIRE((cs == STATUS_PENDING || cs == STATUS_SUCCESS));
    REQUIRE(incoming.wait());
    CHECK(close_sync(incoming.connector.load()) == STATUS_SUCCESS);  // reject
    CHECK(finish(cs, connected) == STATUS_CONNECTION_REFUSED);
}

TEST_CASE("NdkListen on ::1 port 0 reports an IPv6 address", "[provider][listener][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    Incoming incoming;
    NDK_LISTENER *l = s.listener = create_listener(s, incoming);
    sockaddr_in6 any = ipv6_loopback(0);
    REQUIRE(listen(l, &any, sizeof any) == STATUS_SUCCESS);
    ULONG len = sizeof(sockaddr_in);
    sockaddr_in6 bound{};
    CHECK(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&bound), &len) ==
          STATUS_BUFFER_TOO_SMALL);
    CHECK(len == sizeof(sockaddr_in6));
    REQUIRE(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&bound), &len) ==
            STATUS_SUCCESS);
    CHECK(bound.sin6_family == AF_INET6);
    CHECK(std::memcmp(&bound.sin6_addr, &in6addr_loopback, sizeof in6addr_loopback) == 0);
    CHECK(ntohs(bound.sin6_port) >= 49152);
}

TEST_CASE("Listening on an address:port in use is a sharing violation until the first closes",
          "[provider][listener][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    Incoming first_incoming, second_incoming;
    sockaddr_in bound = listen_on(s, first_incoming);
    NDK_LISTENER *second = create_listener(s, second_incoming);
    CHECK(listen(second, &bound, sizeof bound) == STATUS_SHARING_VIOLATION);
    // Another port of the same address is free.
    sockaddr_in elsewhere = ipv4("127.0.0.1", 0);
    NDK_LISTENER *third = create_listener(s, second_incoming);
    CHECK(listen(third, &elsewhere, sizeof elsewhere) == STATUS_SUCCESS);
    CHECK(close_sync(third) == STATUS_SUCCESS);
    // Closed (nothing accepted through it), the first listener frees its port at once.
    REQUIRE(close_sync(s.listener) == STATUS_SUCCESS);
    s.listener = nullptr;
    CHECK(listen(second, &bound, sizeof bound) == STATUS_SUCCESS);
    sockaddr_in now{};
    ULONG len = sizeof now;
    REQUIRE(second->Dispatch->NdkGetLocalAddress(second, reinterpret_cast<PSOCKADDR>(&now), &len) ==
            STATUS_SUCCESS);
    CHECK(now.sin_port == bound.sin_port);
    CHECK(close_sync(second) == STATUS_SUCCESS);
}

TEST_CASE("NdkListen on an address the adapter does not have is STATUS_INVALID_ADDRESS",
          "[provider][listener][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    Incoming incoming;
    NDK_LISTENER *l = s.listener = create_listener(s, incoming);
    sockaddr_in not_ours = ipv4("10.99.99.99", 0);
    CHECK(listen(l, &not_ours, sizeof not_ours) == STATUS_INVALID_ADDRESS);
    sockaddr_in6 not_ours6 = ipv6_loopback(0);
    inet_pton(AF_INET6, "2001:db8::1", &not_ours6.sin6_addr);
    CHECK(listen(l, &not_ours6, sizeof not_ours6) == STATUS_INVALID_ADDRESS);
    ULONG len = sizeof(SOCKADDR_STORAGE);
    SOCKADDR_STORAGE bound{};
    CHECK(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&bound), &len) ==
          STATUS_INVALID_DEVICE_STATE);  // the failures did not bind anything
    // The same listener can still listen on an address of the adapter.
    sockaddr_in ours = ipv4("127.0.0.1", 0);
    CHECK(listen(l, &ours, sizeof ours) == STATUS_SUCCESS);
}

// ---- connecting where nobody listens

TEST_CASE("Connecting to a port nobody listens on is refused", "[provider][listener][device]") {
    Wsk wsk;
    Side client(wsk, 4096), server(wsk, 4096);
    Incoming incoming;
    const sockaddr_in bound = listen_on(server, incoming);
    REQUIRE(close_sync(server.listener) == STATUS_SUCCESS);
    server.listener = nullptr;
    CHECK(try_connect(client, bound) == STATUS_CONNECTION_REFUSED);
    CHECK(incoming.events.load() == 0);
}

// ---- NdkControlConnectEvents

TEST_CASE("A paused listener refuses connections as if nobody listened, resumed it accepts",
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
    Done connected;
    const NTSTATUS cs = start_connect(client, bound, connected);
    REQUIRE((cs == STATUS_PENDING || cs == STATUS_SUCCESS));
    REQUIRE(incoming.wait());
    CHECK(incoming.events.load() == 1);
    // Closing the delivered connector without accepting it rejects the request.
    CHECK(close_sync(incoming.connector.load()) == STATUS_SUCCESS);
    CHECK(finish(cs, connected) == STATUS_CONNECTION_REFUSED);
}

TEST_CASE("Pausing before NdkListen takes effect when listening starts",
          "[provider][listener][cm][device]") {
    Wsk wsk;
    Side client(wsk, 4096), server(wsk, 4096);
    Incoming incoming;
    NDK_LISTENER *l = server.listener = create_listener(server, incoming);
    l->Dispatch->NdkControlConnectEvents(l, TRUE);
    sockaddr_in any = ipv4("127.0.0.1", 0);
    REQUIRE(listen(l, &any, sizeof any) == STATUS_SUCCESS);
    sockaddr_in bound{};
    ULONG length = sizeof bound;
    REQUIRE(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&bound), &length) ==
            STATUS_SUCCESS);
    CHECK(try_connect(client, bound) == STATUS_CONNECTION_REFUSED);
    CHECK(incoming.events.load() == 0);
}

// ---- the connect event and NdkReject

namespace {
struct RefuseAll {
    Done event;
    Done closed;
    static void on_connect(PVOID ctx, NDK_CONNECTOR *c) {
        auto *self = static_cast<RefuseAll *>(ctx);
        // Closing an incoming connector without accepting it rejects it.
        const NTSTATUS s = c->Dispatch->NdkCloseConnector(&c->Header, Done::close, &self->closed);
        if (s == STATUS_SUCCESS) self->closed.signal(STATUS_SUCCESS);
        self->event.signal(STATUS_SUCCESS);
    }
};
}  // namespace

TEST_CASE("Closing the incoming connector inside the connect event refuses the connection",
          "[provider][listener][cm][device]") {
    Wsk wsk;
    Side client(wsk), server(wsk);
    RefuseAll refuse;
    REQUIRE(server.adapter->Dispatch->NdkCreateListener(server.adapter, RefuseAll::on_connect,
                                                        &refuse, Done::create, nullptr,
                                                        &server.listener) == STATUS_SUCCESS);
    sockaddr_in any = ipv4("127.0.0.1", 0);
    REQUIRE(listen(server.listener, &any, sizeof any) == STATUS_SUCCESS);
    sockaddr_in bound{};
    ULONG len = sizeof bound;
    REQUIRE(server.listener->Dispatch->NdkGetLocalAddress(
                server.listener, reinterpret_cast<PSOCKADDR>(&bound), &len) == STATUS_SUCCESS);
    CHECK(try_connect(client, bound) == STATUS_CONNECTION_REFUSED);
    REQUIRE(refuse.event.wait());
    REQUIRE(refuse.closed.wait());
}

TEST_CASE("NdkReject with private data refuses the connect with STATUS_CONNECTION_REFUSED",
          "[provider][listener][cm][device]") {
    Wsk wsk;
    Side client(wsk, 4096), server(wsk, 4096);
    Incoming incoming;
    const sockaddr_in bound = listen_on(server, incoming);
    const unsigned char caller_data[] = {1, 2, 3, 4};
    Done connected;
    const NTSTATUS cs = start_connect(client, bound, connected, caller_data, sizeof caller_data);
    REQUIRE((cs == STATUS_PENDING || cs == STATUS_SUCCESS));
    REQUIRE(incoming.wait());
    NDK_CONNECTOR *sc = incoming.connector.load();
    // The passive side sees the caller's data before it answers.
    std::vector<unsigned char> data(256);
    ULONG len = static_cast<ULONG>(data.size());
    REQUIRE(sc->Dispatch->NdkGetConnectionData(sc, nullptr, nullptr, data.data(), &len) ==
            STATUS_SUCCESS);
    REQUIRE(len >= sizeof caller_data);
    CHECK(std::memcmp(data.data(), caller_data, sizeof caller_data) == 0);

    const unsigned char reject_data[] = {0xa1, 0xb2, 0xc3};
    CHECK(sc->Dispatch->NdkReject(sc, const_cast<unsigned char *>(reject_data),
                                  sizeof reject_data) == STATUS_SUCCESS);
    CHECK(finish(cs, connected) == STATUS_CONNECTION_REFUSED);
    // Rejected: the passive connector can no longer accept.
    Done accepted;
    CHECK(sc->Dispatch->NdkAccept(sc, server.qp, 1, 1, nullptr, 0, nullptr, nullptr, Done::request,
                                  &accepted) == STATUS_CONNECTION_ABORTED);
    CHECK(accepted.calls() == 0);
    CHECK(close_sync(sc) == STATUS_SUCCESS);

    // The active side reads the reject's private data on the refused connector
    // (ndkpi-api.md 7.8 sends it with the Reject; provider/connector.cpp delivers it).
    NDK_CONNECTOR *cc = client.connector;
    ULONG rds = 0;
    REQUIRE(cc->Dispatch->NdkGetConnectionData(cc, nullptr, nullptr, nullptr, &rds) ==
            STATUS_SUCCESS);
    REQUIRE(rds >= sizeof reject_data);
    data.assign(rds, 0);
    len = rds;
    REQUIRE(cc->Dispatch->NdkGetConnectionData(cc, nullptr, nullptr, data.data(), &len) ==
            STATUS_SUCCESS);
    CHECK(std::memcmp(data.data(), reject_data, sizeof reject_data) == 0);
    // The refused connector cannot complete the connection either.
    Done completed;
    CHECK(cc->Dispatch->NdkCompleteConnect(cc, nullptr, nullptr, Done::request, &completed) ==
          STATUS_CONNECTION_INVALID);
    // The listener is unaffected: the next request reaches it.
    CHECK(close_sync(cc) == STATUS_SUCCESS);
    client.connector = nullptr;
    Done again;
    const NTSTATUS second = start_connect(client, bound, again);
    REQUIRE((second == STATUS_PENDING || second == STATUS_SUCCESS));
    REQUIRE(incoming.wait(2));
    CHECK(incoming.connector.load() != sc);
    CHECK(close_sync(incoming.connector.load()) == STATUS_SUCCESS);
    CHECK(finish(second, again) == STATUS_CONNECTION_REFUSED);
}

// ---- closing the listener

TEST_CASE(
    "Closing a listener with an unanswered request: new requests are refused at once, the "
    "close pends until the delivered connector closes",
    "[provider][listener][lifetime][device]") {
    Wsk wsk;
    Side client(wsk), late(wsk, 4096), server(wsk);
    Incoming incoming;
    const sockaddr_in bound = listen_on(server, incoming);
    Done connected;
    const NTSTATUS cs = start_connect(client, bound, connected);
    REQUIRE((cs == STATUS_PENDING || cs == STATUS_SUCCESS));
    REQUIRE(incoming.wait());
    NDK_CONNECTOR *sc = server.connector = incoming.connector.load();

    Done listener_closed;
    REQUIRE(server.listener->Dispatch->NdkCloseListener(&server.listener->Header, Done::close,
                                                        &listener_closed) == STATUS_PENDING);
    server.listener = nullptr;
    // New requests are refused as soon as the close is issued (7.10).
    CHECK(try_connect(late, bound) == STATUS_CONNECTION_REFUSED);
    CHECK(incoming.events.load() == 1);
    // The request delivered before the close can still be accepted.
    Done accepted;
    const NTSTATUS as = sc->Dispatch->NdkAccept(sc, server.qp, 1, 1, nullptr, 0, nullptr, nullptr,
                                                Done::request, &accepted);
    REQUIRE((as == STATUS_PENDING || as == STATUS_SUCCESS));
    REQUIRE(finish(cs, connected) == STATUS_SUCCESS);
    Done completed;
    CHECK(finish(client.connector->Dispatch->NdkCompleteConnect(client.connector, nullptr, nullptr,
                                                                Done::request, &completed),
                 completed) == STATUS_SUCCESS);
    CHECK(finish(as, accepted) == STATUS_SUCCESS);
    NDK_SGE rx = server.sge(0, 16);
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    std::memcpy(client.buffer.data(), "accepted", 8);
    NDK_SGE tx = client.sge(0, 8);
    REQUIRE(client.qp->Dispatch->NdkSend(client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    CHECK(server.poll_one().BytesTransferred == 8);
    CHECK(std::memcmp(server.buffer.data(), "accepted", 8) == 0);
    // The accepted connector keeps the listener's endpoint: its close still pends.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(listener_closed.calls() == 0);
    CHECK(close_sync(server.connector) == STATUS_SUCCESS);
    server.connector = nullptr;
    REQUIRE(listener_closed.wait());
    CHECK(listener_closed.calls() == 1);
}
