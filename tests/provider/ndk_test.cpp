#include "ndk_test.hpp"

#include <algorithm>

namespace ndktest {

Side::Side(Wsk &w, size_t buffer_bytes, ULONG depth) : wsk(w) {
    try {
        REQUIRE(wsk.open(&adapter) == STATUS_SUCCESS);
        info = query_info(adapter);
        REQUIRE(adapter->Dispatch->NdkCreatePd(adapter, Done::create, nullptr, &pd) ==
                STATUS_SUCCESS);
        // As drivers do: the privileged token right after the PD, before any MR, so in a
        // fresh device the first Side's token comes from the lowest free key index.
        pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(pd, &privileged);
        REQUIRE(adapter->Dispatch->NdkCreateCq(adapter, depth * 2, notify, this, nullptr,
                                               Done::create, nullptr, &cq) == STATUS_SUCCESS);
        const ULONG inline_bytes = std::min<ULONG>(128, info.MaxInlineDataSize);
        REQUIRE(pd->Dispatch->NdkCreateQp(pd, cq, cq, this, depth, depth, 4, 4, inline_bytes,
                                          Done::create, nullptr, &qp) == STATUS_SUCCESS);
        buffer.assign(buffer_bytes, 0);
        mdl = make_mdl(buffer.data(), buffer.size());
        REQUIRE(pd->Dispatch->NdkCreateMr(pd, FALSE, Done::create, nullptr, &mr) == STATUS_SUCCESS);
        Done done;
        REQUIRE(finish(mr->Dispatch->NdkRegisterMr(mr, &mdl, buffer.size(),
                                                   NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
                                                       NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                                       NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                                                   Done::request, &done),
                       done) == STATUS_SUCCESS);
        ltoken = mr->Dispatch->NdkGetLocalTokenFromMr(mr);
        rtoken = mr->Dispatch->NdkGetRemoteTokenFromMr(mr);
    } catch (...) {
        cleanup();
        throw;
    }
}

Side::Side(Side &owner)
    : wsk(owner.wsk),
      adapter(owner.adapter),
      info(owner.info),
      pd(owner.pd),
      cq(owner.cq),
      borrowed(true),
      ltoken(owner.ltoken),
      rtoken(owner.rtoken),
      privileged(owner.privileged) {
    const ULONG inline_bytes = std::min<ULONG>(128, info.MaxInlineDataSize);
    REQUIRE(pd->Dispatch->NdkCreateQp(pd, cq, cq, this, 64, 64, 4, 4, inline_bytes, Done::create,
                                      nullptr, &qp) == STATUS_SUCCESS);
}

void Side::cleanup() {
    if (connector != nullptr) CHECK(close_sync(connector) == STATUS_SUCCESS);
    if (listener != nullptr) CHECK(close_sync(listener) == STATUS_SUCCESS);
    if (qp != nullptr) CHECK(close_sync(qp) == STATUS_SUCCESS);
    if (borrowed) {
        connector = nullptr;
        listener = nullptr;
        qp = nullptr;
        return;
    }
    if (mr != nullptr) CHECK(close_sync(mr) == STATUS_SUCCESS);
    if (cq != nullptr) CHECK(close_sync(cq) == STATUS_SUCCESS);
    if (pd != nullptr) CHECK(close_sync(pd) == STATUS_SUCCESS);
    if (adapter != nullptr) wsk.close(adapter);
    connector = nullptr;
    listener = nullptr;
    qp = nullptr;
    mr = nullptr;
    cq = nullptr;
    pd = nullptr;
    adapter = nullptr;
}

void Side::notify(PVOID ctx, NTSTATUS s) {
    auto *self = static_cast<Side *>(ctx);
    // The hook first, then the count: a test that waits for the count then reads what
    // its hook recorded (a time, a status) must find it there.
    if (NDK_FN_CQ_NOTIFICATION_CALLBACK hook = self->on_notify.load())
        hook(self->on_notify_context.load(), s);
    self->notifications.fetch_add(1);
}

NDK_RESULT_EX Side::poll_one() {
    NDK_RESULT_EX r{};
    r.Status = STATUS_PENDING;
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (cq->Dispatch->NdkGetCqResultsEx(cq, &r, 1) == 1) return r;
        std::this_thread::yield();
    }
    FAIL_CHECK("no completion within the timeout");
    r.Status = STATUS_PENDING;
    return r;
}

size_t Side::drain(std::vector<NDK_RESULT_EX> &out, size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    size_t got = 0;
    out.resize(n);
    while (got < n && std::chrono::steady_clock::now() < deadline) {
        const ULONG k =
            cq->Dispatch->NdkGetCqResultsEx(cq, out.data() + got, static_cast<ULONG>(n - got));
        if (k == 0) std::this_thread::yield();
        got += k;
    }
    return got;
}

namespace {

struct ListenState {
    Done event;
    NDK_CONNECTOR *incoming = nullptr;
    static void on_connect(PVOID ctx, NDK_CONNECTOR *c) {
        auto *self = static_cast<ListenState *>(ctx);
        self->incoming = c;
        self->event.signal(STATUS_SUCCESS);
    }
};

}  // namespace

void connect(Side &client, Side &server, ConnectOptions o) {
    static ListenState state;  // outlives the listener (closed with the server side)
    state.incoming = nullptr;
    state.event.count = 0;
    NDK_ADAPTER *listening = o.listener_adapter != nullptr ? o.listener_adapter : server.adapter;
    REQUIRE(listening->Dispatch->NdkCreateListener(listening, ListenState::on_connect, &state,
                                                   Done::create, nullptr,
                                                   &server.listener) == STATUS_SUCCESS);
    SOCKADDR_STORAGE any{};
    ULONG addr_len;
    if (o.ipv6) {
        const sockaddr_in6 a = ipv6_loopback(0);
        std::memcpy(&any, &a, sizeof a);
        addr_len = sizeof a;
    } else {
        const sockaddr_in a = ipv4("127.0.0.1", 0);
        std::memcpy(&any, &a, sizeof a);
        addr_len = sizeof a;
    }
    Done listened;
    REQUIRE(finish(server.listener->Dispatch->NdkListen(server.listener,
                                                        reinterpret_cast<PSOCKADDR>(&any), addr_len,
                                                        Done::request, &listened),
                   listened) == STATUS_SUCCESS);
    SOCKADDR_STORAGE bound{};
    ULONG length = sizeof bound;
    REQUIRE(server.listener->Dispatch->NdkGetLocalAddress(
                server.listener, reinterpret_cast<PSOCKADDR>(&bound), &length) == STATUS_SUCCESS);
    REQUIRE(length == addr_len);
    REQUIRE(bound.ss_family == any.ss_family);
    REQUIRE(reinterpret_cast<sockaddr_in *>(&bound)->sin_port != 0);  // same offset in v6

    NDK_ADAPTER *connecting = o.connector_adapter != nullptr ? o.connector_adapter : client.adapter;
    REQUIRE(connecting->Dispatch->NdkCreateConnector(connecting, Done::create, nullptr,
                                                     &client.connector) == STATUS_SUCCESS);
    SOCKADDR_STORAGE src = any;
    SOCKADDR_STORAGE dst = bound;
    Done connected;
    const NTSTATUS cs =
        o.shared_endpoint != nullptr
            ? client.connector->Dispatch->NdkConnectWithSharedEndpoint(
                  client.connector, client.qp, o.shared_endpoint, reinterpret_cast<PSOCKADDR>(&dst),
                  addr_len, o.client_ird, o.client_ord, o.caller_data.data(),
                  static_cast<ULONG>(o.caller_data.size()), Done::request, &connected)
            : client.connector->Dispatch->NdkConnect(
                  client.connector, client.qp, reinterpret_cast<PSOCKADDR>(&src), addr_len,
                  reinterpret_cast<PSOCKADDR>(&dst), addr_len, o.client_ird, o.client_ord,
                  o.caller_data.data(), static_cast<ULONG>(o.caller_data.size()), Done::request,
                  &connected);
    REQUIRE((cs == STATUS_PENDING || cs == STATUS_SUCCESS));

    REQUIRE(state.event.wait());
    server.connector = state.incoming;
    REQUIRE(server.connector != nullptr);
    NDK_CONNECTOR *sc = server.connector;
    // Size query (ndkpi-api.md 7.8), then the data.
    ULONG ird = 0, ord = 0, rds = 0;
    REQUIRE(sc->Dispatch->NdkGetConnectionData(sc, &ird, &ord, nullptr, &rds) == STATUS_SUCCESS);
    REQUIRE(rds >= o.caller_data.size());
    if (o.server_rds != nullptr) *o.server_rds = rds;
    std::vector<unsigned char> data(rds);
    ULONG len = rds;
    REQUIRE(sc->Dispatch->NdkGetConnectionData(sc, nullptr, nullptr, data.data(), &len) ==
            STATUS_SUCCESS);
    REQUIRE(len == rds);
    REQUIRE(std::equal(o.caller_data.begin(), o.caller_data.end(), data.begin()));
    if (o.seen_by_server != nullptr) *o.seen_by_server = data;
    SOCKADDR_STORAGE peer{};
    ULONG peer_len = sizeof peer;
    REQUIRE(sc->Dispatch->NdkGetPeerAddress(sc, reinterpret_cast<PSOCKADDR>(&peer), &peer_len) ==
            STATUS_SUCCESS);
    REQUIRE(peer.ss_family == any.ss_family);
    REQUIRE(peer_len == addr_len);

    Done accepted;
    const NTSTATUS as = o.server_disconnect_ex != nullptr
                            ? sc->Dispatch->NdkAcceptEx(
                                  sc, server.qp, o.server_ird, o.server_ord, o.callee_data.data(),
                                  static_cast<ULONG>(o.callee_data.size()), o.server_disconnect_ex,
                                  o.server_disconnect_context, Done::request, &accepted)
                            : sc->Dispatch->NdkAccept(
                                  sc, server.qp, o.server_ird, o.server_ord, o.callee_data.data(),
                                  static_cast<ULONG>(o.callee_data.size()), o.server_disconnect,
                                  o.server_disconnect_context, Done::request, &accepted);
    REQUIRE((as == STATUS_PENDING || as == STATUS_SUCCESS));

    REQUIRE(finish(cs, connected) == STATUS_SUCCESS);
    NDK_CONNECTOR *cc = client.connector;
    rds = 0;
    REQUIRE(cc->Dispatch->NdkGetConnectionData(cc, &ird, &ord, nullptr, &rds) == STATUS_SUCCESS);
    REQUIRE(rds >= o.callee_data.size());
    // Effective read limits never exceed what either side asked for (7.7).
    CHECK(ird <= o.client_ird);
    CHECK(ord <= o.client_ord);
    data.assign(rds, 0);
    len = rds;
    REQUIRE(cc->Dispatch->NdkGetConnectionData(cc, nullptr, nullptr, data.data(), &len) ==
            STATUS_SUCCESS);
    REQUIRE(std::equal(o.callee_data.begin(), o.callee_data.end(), data.begin()));
    if (o.seen_by_client != nullptr) *o.seen_by_client = data;

    Done completed;
    const NTSTATUS complete =
        o.client_disconnect_ex != nullptr
            ? cc->Dispatch->NdkCompleteConnectEx(cc, o.client_disconnect_ex,
                                                 o.client_disconnect_context, Done::request,
                                                 &completed)
            : cc->Dispatch->NdkCompleteConnect(cc, o.client_disconnect, o.client_disconnect_context,
                                               Done::request, &completed);
    REQUIRE(finish(complete, completed) == STATUS_SUCCESS);
    REQUIRE(finish(as, accepted) == STATUS_SUCCESS);
}

void Incoming::on_connect(PVOID ctx, NDK_CONNECTOR *c) {
    auto *self = static_cast<Incoming *>(ctx);
    self->connector.store(c);
    self->events.fetch_add(1);
}

bool Incoming::wait(int n) {
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (events.load() < n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return events.load() >= n;
}

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

NTSTATUS start_connect(Side &client, sockaddr_in to, Done &done, const void *private_data,
                       ULONG private_data_bytes) {
    if (client.connector == nullptr)
        REQUIRE(client.adapter->Dispatch->NdkCreateConnector(client.adapter, Done::create, nullptr,
                                                             &client.connector) == STATUS_SUCCESS);
    sockaddr_in src = ipv4("127.0.0.1", 0);
    return client.connector->Dispatch->NdkConnect(
        client.connector, client.qp, reinterpret_cast<PSOCKADDR>(&src), sizeof src,
        reinterpret_cast<PSOCKADDR>(&to), sizeof to, 1, 1, const_cast<void *>(private_data),
        private_data_bytes, Done::request, &done);
}

NTSTATUS try_connect(Side &client, sockaddr_in to) {
    Done done;
    return finish(start_connect(client, to, done), done);
}

}  // namespace ndktest
