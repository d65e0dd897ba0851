// NDK_SHARED_ENDPOINT: NdkCreateSharedEndpoint (arguments, addresses, port rules against
// other endpoints and listeners), NdkGetLocalAddress, NdkConnectWithSharedEndpoint (several
// connections from one IP:port, one per peer; arguments) and NdkCloseSharedEndpoint, whose
// close pends while connections made through the endpoint live (7.10).
#include "ndk_test.hpp"

using namespace ndktest;

namespace {

NTSTATUS create_shared_endpoint(Side &s, sockaddr_in address, NDK_SHARED_ENDPOINT **out) {
    return s.adapter->Dispatch->NdkCreateSharedEndpoint(s.adapter,
                                                        reinterpret_cast<PSOCKADDR>(&address),
                                                        sizeof address, Done::create, nullptr, out);
}

sockaddr_in local_address(NDK_SHARED_ENDPOINT *se) {
    sockaddr_in bound{};
    ULONG length = sizeof bound;
    REQUIRE(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<PSOCKADDR>(&bound), &length) ==
            STATUS_SUCCESS);
    REQUIRE(length == sizeof bound);
    return bound;
}

}  // namespace

// ---- NdkCreateSharedEndpoint / NdkGetLocalAddress

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

TEST_CASE("Two connections leave from one shared endpoint, a third to the same peer is refused",
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
    REQUIRE(incoming.wait());
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

TEST_CASE("NdkCreateSharedEndpoint and NdkGetLocalAddress check their arguments",
          "[provider][shared-endpoint][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_ADAPTER *a = s.adapter;
    sockaddr_in v4 = ipv4("127.0.0.1", 0);
    auto *addr = reinterpret_cast<PSOCKADDR>(&v4);
    NDK_SHARED_ENDPOINT *se = nullptr;
    CHECK(a->Dispatch->NdkCreateSharedEndpoint(a, addr, sizeof v4, Done::create, nullptr,
                                               nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateSharedEndpoint(a, addr, sizeof v4, nullptr, nullptr, &se) ==
          STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateSharedEndpoint(nullptr, addr, sizeof v4, Done::create, nullptr,
                                               &se) == STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateSharedEndpoint(a, addr, sizeof v4 - 1, Done::create, nullptr,
                                               &se) == STATUS_INVALID_PARAMETER);
    sockaddr_in bad_family = v4;
    bad_family.sin_family = 23;  // Windows' AF_INET6: not an address family on Linux
    CHECK(create_shared_endpoint(s, bad_family, &se) == STATUS_INVALID_ADDRESS);
    sockaddr_in6 not_ours6 = ipv6_loopback(0);
    inet_pton(AF_INET6, "2001:db8::1", &not_ours6.sin6_addr);
    CHECK(a->Dispatch->NdkCreateSharedEndpoint(a, reinterpret_cast<PSOCKADDR>(&not_ours6),
                                               sizeof not_ours6, Done::create, nullptr,
                                               &se) == STATUS_INVALID_ADDRESS);
    CHECK(se == nullptr);

    REQUIRE(create_shared_endpoint(s, v4, &se) == STATUS_SUCCESS);
    sockaddr_in bound{};
    ULONG length = 0;
    CHECK(se->Dispatch->NdkGetLocalAddress(se, nullptr, &length) == STATUS_BUFFER_TOO_SMALL);
    CHECK(length == sizeof bound);
    CHECK(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<PSOCKADDR>(&bound), nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(se->Dispatch->NdkGetLocalAddress(nullptr, reinterpret_cast<PSOCKADDR>(&bound), &length) ==
          STATUS_INVALID_PARAMETER);
    CHECK(se->Dispatch->NdkCloseSharedEndpoint(nullptr, Done::close, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(se->Dispatch->NdkCloseSharedEndpoint(&s.pd->Header, Done::close, nullptr) ==
          STATUS_INVALID_PARAMETER);  // a PD is not a shared endpoint
    // Unused, it closes at once.
    CHECK(close_sync(se) == STATUS_SUCCESS);
}

TEST_CASE("NdkCreateSharedEndpoint on ::1 and on the unspecified address",
          "[provider][shared-endpoint][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_ADAPTER *a = s.adapter;
    sockaddr_in6 v6 = ipv6_loopback(0);
    NDK_SHARED_ENDPOINT *se6 = nullptr;
    REQUIRE(a->Dispatch->NdkCreateSharedEndpoint(a, reinterpret_cast<PSOCKADDR>(&v6), sizeof v6,
                                                 Done::create, nullptr, &se6) == STATUS_SUCCESS);
    sockaddr_in6 bound6{};
    ULONG length = sizeof(sockaddr_in);
    CHECK(se6->Dispatch->NdkGetLocalAddress(se6, reinterpret_cast<PSOCKADDR>(&bound6), &length) ==
          STATUS_BUFFER_TOO_SMALL);
    CHECK(length == sizeof bound6);
    REQUIRE(se6->Dispatch->NdkGetLocalAddress(se6, reinterpret_cast<PSOCKADDR>(&bound6), &length) ==
            STATUS_SUCCESS);
    CHECK(bound6.sin6_family == AF_INET6);
    CHECK(std::memcmp(&bound6.sin6_addr, &in6addr_loopback, sizeof in6addr_loopback) == 0);
    CHECK(ntohs(bound6.sin6_port) >= 49152);
    // Connections leave from one address: the unspecified one becomes the adapter's.
    NDK_SHARED_ENDPOINT *any = nullptr;
    REQUIRE(create_shared_endpoint(s, ipv4("0.0.0.0", 0), &any) == STATUS_SUCCESS);
    const sockaddr_in bound = local_address(any);
    CHECK(bound.sin_family == AF_INET);
    CHECK(bound.sin_addr.s_addr == ipv4("127.0.0.1", 0).sin_addr.s_addr);
    CHECK(ntohs(bound.sin_port) >= 49152);
    CHECK(close_sync(any) == STATUS_SUCCESS);
    CHECK(close_sync(se6) == STATUS_SUCCESS);
}

TEST_CASE("A port a listener holds is a sharing violation for a shared endpoint",
          "[provider][shared-endpoint][listener][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    Incoming incoming;
    const sockaddr_in bound = listen_on(s, incoming);
    NDK_SHARED_ENDPOINT *se = nullptr;
    CHECK(create_shared_endpoint(s, bound, &se) == STATUS_SHARING_VIOLATION);
    CHECK(se == nullptr);
    // Once the listener is closed the port can be the endpoint's.
    REQUIRE(close_sync(s.listener) == STATUS_SUCCESS);
    s.listener = nullptr;
    REQUIRE(create_shared_endpoint(s, bound, &se) == STATUS_SUCCESS);
    CHECK(local_address(se).sin_port == bound.sin_port);
    CHECK(close_sync(se) == STATUS_SUCCESS);
}

TEST_CASE("NdkConnectWithSharedEndpoint checks its arguments",
          "[provider][shared-endpoint][connector][device]") {
    Wsk wsk;
    Side client(wsk), server(wsk);
    // (An endpoint of another handle of the same interface is valid: handles of one
    // interface share the port, see connector_test.cpp.)
    NDK_SHARED_ENDPOINT *se = nullptr;
    REQUIRE(create_shared_endpoint(client, ipv4("127.0.0.1", 0), &se) == STATUS_SUCCESS);
    Incoming incoming;
    sockaddr_in dst = listen_on(server, incoming);
    NDK_CONNECTOR *c = nullptr;
    REQUIRE(client.adapter->Dispatch->NdkCreateConnector(client.adapter, Done::create, nullptr,
                                                         &c) == STATUS_SUCCESS);
    auto connect_with = [&](NDK_SHARED_ENDPOINT *endpoint, void *to, ULONG to_length, void *pdata,
                            ULONG pdata_length, NDK_FN_REQUEST_COMPLETION cb) {
        Done done;
        return finish(c->Dispatch->NdkConnectWithSharedEndpoint(
                          c, client.qp, endpoint, static_cast<PSOCKADDR>(to), to_length, 1, 1,
                          pdata, pdata_length, cb, &done),
                      done);
    };
    CHECK(connect_with(nullptr, &dst, sizeof dst, nullptr, 0, Done::request) ==
          STATUS_INVALID_PARAMETER);
    CHECK(connect_with(se, nullptr, sizeof dst, nullptr, 0, Done::request) ==
          STATUS_INVALID_PARAMETER);
    CHECK(connect_with(se, &dst, sizeof dst - 1, nullptr, 0, Done::request) ==
          STATUS_INVALID_PARAMETER);
    CHECK(connect_with(se, &dst, sizeof dst, nullptr, 4, Done::request) ==
          STATUS_INVALID_PARAMETER);
    std::vector<unsigned char> big(client.info.MaxCallerData + 1);
    CHECK(connect_with(se, &dst, sizeof dst, big.data(), static_cast<ULONG>(big.size()),
                       Done::request) == STATUS_INVALID_PARAMETER);
    CHECK(connect_with(se, &dst, sizeof dst, nullptr, 0, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkConnectWithSharedEndpoint(
              c, nullptr, se, reinterpret_cast<PSOCKADDR>(&dst), sizeof dst, 1, 1, nullptr, 0,
              Done::request, nullptr) == STATUS_INVALID_PARAMETER);
    // An IPv4 endpoint cannot reach an IPv6 peer.
    sockaddr_in6 dst6 = ipv6_loopback(ntohs(dst.sin_port));
    CHECK(connect_with(se, &dst6, sizeof dst6, nullptr, 0, Done::request) ==
          STATUS_INVALID_ADDRESS);
    CHECK(incoming.events.load() == 0);
    CHECK(close_sync(c) == STATUS_SUCCESS);
    CHECK(close_sync(server.listener) == STATUS_SUCCESS);
    server.listener = nullptr;
    // Nothing refused above holds the endpoint, its port or the QP: a connection from it works.
    ConnectOptions o;
    o.shared_endpoint = se;
    connect(client, server, o);
    CHECK(close_sync(client.connector) == STATUS_SUCCESS);
    client.connector = nullptr;
    CHECK(close_sync(se) == STATUS_SUCCESS);
}

TEST_CASE("Closing a shared endpoint with live connections pends until their connectors close",
          "[provider][shared-endpoint][lifetime][device]") {
    Wsk wsk;
    Side client(wsk), server(wsk), other(wsk, 4096);
    NDK_SHARED_ENDPOINT *se = nullptr;
    REQUIRE(create_shared_endpoint(client, ipv4("127.0.0.1", 0), &se) == STATUS_SUCCESS);
    const sockaddr_in bound = local_address(se);
    ConnectOptions o;
    o.shared_endpoint = se;
    connect(client, server, o);

    Done se_closed;
    const NTSTATUS close_status =
        se->Dispatch->NdkCloseSharedEndpoint(&se->Header, Done::close, &se_closed);
    REQUIRE(close_status == STATUS_PENDING);
    // The connection made through it keeps working.
    NDK_SGE rx = server.sge(0, 16);
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    std::memcpy(client.buffer.data(), "still-up", 8);
    NDK_SGE tx = client.sge(0, 8);
    REQUIRE(client.qp->Dispatch->NdkSend(client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    CHECK(server.poll_one().BytesTransferred == 8);
    CHECK(std::memcmp(server.buffer.data(), "still-up", 8) == 0);
    // A closing endpoint takes no new connections.
    Incoming incoming;
    sockaddr_in dst = listen_on(other, incoming);
    NDK_CONNECTOR *c2 = nullptr;
    REQUIRE(client.adapter->Dispatch->NdkCreateConnector(client.adapter, Done::create, nullptr,
                                                         &c2) == STATUS_SUCCESS);
    NDK_QP *qp2 = nullptr;
    REQUIRE(client.pd->Dispatch->NdkCreateQp(client.pd, client.cq, client.cq, nullptr, 4, 4, 1, 1,
                                             0, Done::create, nullptr, &qp2) == STATUS_SUCCESS);
    Done refused;
    CHECK(finish(c2->Dispatch->NdkConnectWithSharedEndpoint(
                     c2, qp2, se, reinterpret_cast<PSOCKADDR>(&dst), sizeof dst, 1, 1, nullptr, 0,
                     Done::request, &refused),
                 refused) == STATUS_INVALID_DEVICE_STATE);
    CHECK(incoming.events.load() == 0);
    CHECK(close_sync(c2) == STATUS_SUCCESS);
    CHECK(close_sync(qp2) == STATUS_SUCCESS);
    // The port is still taken.
    NDK_SHARED_ENDPOINT *again = nullptr;
    CHECK(create_shared_endpoint(client, bound, &again) == STATUS_SHARING_VIOLATION);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(se_closed.calls() == 0);
    // The connector's close releases the endpoint, and with it the port.
    CHECK(close_sync(client.connector) == STATUS_SUCCESS);
    client.connector = nullptr;
    REQUIRE(se_closed.wait());
    CHECK(se_closed.calls() == 1);
    REQUIRE(create_shared_endpoint(client, bound, &again) == STATUS_SUCCESS);
    CHECK(close_sync(again) == STATUS_SUCCESS);
}
