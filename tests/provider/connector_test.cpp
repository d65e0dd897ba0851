// NDK_CONNECTOR beyond the basic handshake (data_path_test.cpp has that): the 2.1
// NdkAcceptEx / NdkCompleteConnectEx with the extended disconnect callback and their
// state checks. Listeners (NdkListen, NdkControlConnectEvents, NdkReject) are in
// listener_test.cpp, shared endpoints (NdkConnectWithSharedEndpoint) in
// shared_endpoint_test.cpp.
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
