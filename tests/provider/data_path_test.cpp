// Two adapters in one process, connected through the device: the connect / accept /
// complete-connect handshake with private data and addresses, the data path,
// completions, disconnect and close ordering. (Listeners, the connect event and
// NdkReject are in listener_test.cpp; shared endpoints in shared_endpoint_test.cpp.)
#include <numeric>

#include "ndk_test.hpp"

using namespace ndktest;

namespace {

void fill(Side &s, size_t offset, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        s.buffer[offset + i] = static_cast<unsigned char>(seed + i * 7);
}

bool same(const Side &a, size_t ao, const Side &b, size_t bo, size_t n) {
    return std::memcmp(a.buffer.data() + ao, b.buffer.data() + bo, n) == 0;
}

struct DisconnectCount {
    std::atomic<int> calls{0};
    Done done;
    static void cb(PVOID ctx) {
        auto *self = static_cast<DisconnectCount *>(ctx);
        self->calls.fetch_add(1);
        self->done.signal(STATUS_SUCCESS);
    }
};

}  // namespace

TEST_CASE("Connect accept and complete-connect carry private data both ways",
          "[provider][cm][device]") {
    std::vector<unsigned char> seen_by_server, seen_by_client;
    ULONG rds = 0;
    ConnectOptions o;
    o.caller_data.assign(40, 0);
    std::iota(o.caller_data.begin(), o.caller_data.end(), 1);
    o.callee_data = {0xaa, 0xbb, 0xcc, 0xdd};
    o.seen_by_server = &seen_by_server;
    o.seen_by_client = &seen_by_client;
    o.server_rds = &rds;
    Pair p(o);
    CHECK(rds >= 40);
    // GetConnectionData with a short buffer: BUFFER_TOO_SMALL, the prefix, and RDS.
    std::vector<unsigned char> small(2);
    ULONG len = 2;
    CHECK(p.client.connector->Dispatch->NdkGetConnectionData(
              p.client.connector, nullptr, nullptr, small.data(), &len) == STATUS_BUFFER_TOO_SMALL);
    CHECK(len == seen_by_client.size());
    CHECK(small[0] == 0xaa);
    CHECK(small[1] == 0xbb);
    // Addresses of both ends agree.
    sockaddr_in cl{}, cp{}, sl{}, sp{};
    ULONG n = sizeof cl;
    CHECK(p.client.connector->Dispatch->NdkGetLocalAddress(
              p.client.connector, reinterpret_cast<PSOCKADDR>(&cl), &n) == STATUS_SUCCESS);
    n = sizeof cp;
    CHECK(p.client.connector->Dispatch->NdkGetPeerAddress(
              p.client.connector, reinterpret_cast<PSOCKADDR>(&cp), &n) == STATUS_SUCCESS);
    n = sizeof sl;
    CHECK(p.server.connector->Dispatch->NdkGetLocalAddress(
              p.server.connector, reinterpret_cast<PSOCKADDR>(&sl), &n) == STATUS_SUCCESS);
    n = sizeof sp;
    CHECK(p.server.connector->Dispatch->NdkGetPeerAddress(
              p.server.connector, reinterpret_cast<PSOCKADDR>(&sp), &n) == STATUS_SUCCESS);
    CHECK(cl.sin_port == sp.sin_port);
    CHECK(cp.sin_port == sl.sin_port);
    n = 2;
    CHECK(p.client.connector->Dispatch->NdkGetPeerAddress(
              p.client.connector, reinterpret_cast<PSOCKADDR>(&cp), &n) == STATUS_BUFFER_TOO_SMALL);
    CHECK(n == sizeof(sockaddr_in));
}

TEST_CASE("Send and receive move the data and results carry bit-valued types",
          "[provider][qp][device]") {
    Pair p;
    NDK_SGE r = p.server.sge(0, 256);
    auto *rctx = reinterpret_cast<void *>(0x1234);
    auto *sctx = reinterpret_cast<void *>(0x5678);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, rctx, &r, 1) == STATUS_SUCCESS);
    fill(p.client, 0, 100, 3);
    NDK_SGE s[2] = {p.client.sge(0, 60), p.client.sge(60, 40)};
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, sctx, s, 2, 0) == STATUS_SUCCESS);
    const NDK_RESULT_EX sent = p.client.poll_one();
    CHECK(sent.Status == STATUS_SUCCESS);
    CHECK(sent.RequestContext == sctx);
    CHECK(sent.QPContext == &p.client);
    CHECK(sent.Type == NdkOperationTypeSend);
    CHECK(sent.ProviderErrorCode == 0);
    const NDK_RESULT_EX got = p.server.poll_one();
    CHECK(got.Status == STATUS_SUCCESS);
    CHECK(got.RequestContext == rctx);
    CHECK(got.QPContext == &p.server);
    CHECK((got.Type & NdkOperationTypeReceive) != 0);
    CHECK(got.BytesTransferred == 100);
    CHECK(same(p.client, 0, p.server, 0, 100));

    // Inline send: the payload is copied at post time.
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, rctx, &r, 1) == STATUS_SUCCESS);
    unsigned char bytes[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    NDK_SGE in{};
    in.VirtualAddress = bytes;
    in.Length = sizeof bytes;
    in.MemoryRegionToken = 0xdead;  // ignored with INLINE
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, sctx, &in, 1, NDK_OP_FLAG_INLINE) ==
            STATUS_SUCCESS);
    std::memset(bytes, 0, sizeof bytes);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    const NDK_RESULT_EX got2 = p.server.poll_one();
    CHECK(got2.Status == STATUS_SUCCESS);
    CHECK(got2.BytesTransferred == 16);
    CHECK(p.server.buffer[15] == 16);
    // The non-Ex variant reports the same completion shape.
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, rctx, &r, 1) == STATUS_SUCCESS);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, sctx, s, 1, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    NDK_RESULT plain{};
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (p.server.cq->Dispatch->NdkGetCqResults(p.server.cq, &plain, 1) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
    }
    CHECK(plain.Status == STATUS_SUCCESS);
    CHECK(plain.RequestContext == rctx);
    CHECK(plain.BytesTransferred == 60);
}

TEST_CASE("RDMA write and read move the data", "[provider][qp][device]") {
    Pair p;
    fill(p.client, 0, 4096, 11);
    NDK_SGE w = p.client.sge(0, 4096);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1,
                                            p.server.remote_address(8192), p.server.rtoken,
                                            0) == STATUS_SUCCESS);
    const NDK_RESULT_EX wr = p.client.poll_one();
    CHECK(wr.Status == STATUS_SUCCESS);
    CHECK(wr.Type == NdkOperationTypeWrite);
    CHECK(same(p.client, 0, p.server, 8192, 4096));

    fill(p.server, 65536, 3000, 29);
    NDK_SGE rd[2] = {p.client.sge(100000, 1000), p.client.sge(200000, 2000)};
    REQUIRE(p.client.qp->Dispatch->NdkRead(p.client.qp, nullptr, rd, 2,
                                           p.server.remote_address(65536), p.server.rtoken,
                                           0) == STATUS_SUCCESS);
    const NDK_RESULT_EX rr = p.client.poll_one();
    CHECK(rr.Status == STATUS_SUCCESS);
    CHECK(rr.Type == NdkOperationTypeRead);
    CHECK(same(p.client, 100000, p.server, 65536, 1000));
    CHECK(same(p.client, 200000, p.server, 66536, 2000));
}

TEST_CASE("A 1 MiB write read and send arrive intact", "[provider][qp][device]") {
    constexpr size_t kMiB = 1 << 20;
    Wsk wsk;
    Side client(wsk, 2 * kMiB);
    Side server(wsk, 2 * kMiB);
    connect(client, server);
    fill(client, 0, kMiB, 5);
    NDK_SGE w = client.sge(0, kMiB);
    REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, server.remote_address(kMiB),
                                          server.rtoken, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    CHECK(same(client, 0, server, kMiB, kMiB));
    NDK_SGE rd = client.sge(kMiB, kMiB);
    REQUIRE(client.qp->Dispatch->NdkRead(client.qp, nullptr, &rd, 1, server.remote_address(kMiB),
                                         server.rtoken, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    CHECK(same(client, kMiB, server, kMiB, kMiB));
    NDK_SGE r = server.sge(0, kMiB);
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    REQUIRE(client.qp->Dispatch->NdkSend(client.qp, nullptr, &w, 1, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    const NDK_RESULT_EX got = server.poll_one();
    CHECK(got.Status == STATUS_SUCCESS);
    CHECK(got.BytesTransferred == kMiB);
    CHECK(same(client, 0, server, 0, kMiB));
}

namespace {

// Sends `total` small messages with at most `window` outstanding; the server
// re-posts each receive. Every completion is counted and checked in order.
void stream(Pair &p, int total, bool use_notifications) {
    constexpr int kWindow = 64;
    struct Counts {
        std::atomic<int> notified{0};
        static void on(PVOID ctx, NTSTATUS s) {
            auto *c = static_cast<Counts *>(ctx);
            if (s == STATUS_SUCCESS) c->notified.fetch_add(1);
        }
    };
    // Static: a callback may still run after this function returns.
    static Counts client_counts, server_counts;
    client_counts.notified = 0;
    server_counts.notified = 0;
    if (use_notifications) {
        p.client.on_notify_context = &client_counts;
        p.client.on_notify = Counts::on;
        p.server.on_notify_context = &server_counts;
        p.server.on_notify = Counts::on;
    }
    for (int i = 0; i < kWindow; ++i) {
        NDK_SGE r = p.server.sge(static_cast<size_t>(i) * 64, 64);
        REQUIRE(p.server.qp->Dispatch->NdkReceive(
                    p.server.qp, reinterpret_cast<void *>(intptr_t(i)), &r, 1) == STATUS_SUCCESS);
    }
    int posted = 0, sent = 0, received = 0;
    std::vector<NDK_RESULT_EX> results(kWindow);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int expected_receive = 0;
    while ((sent < total || received < total) && std::chrono::steady_clock::now() < deadline) {
        while (posted < total && posted - sent < kWindow) {
            NDK_SGE s = p.client.sge(static_cast<size_t>(posted % kWindow) * 64, 8);
            std::memcpy(p.client.buffer.data() + (posted % kWindow) * 64, &posted, sizeof posted);
            const NTSTATUS st = p.client.qp->Dispatch->NdkSend(
                p.client.qp, reinterpret_cast<void *>(intptr_t(posted)), &s, 1, 0);
            REQUIRE(st == STATUS_SUCCESS);
            ++posted;
        }
        if (use_notifications) {
            p.client.cq->Dispatch->NdkArmCq(p.client.cq, NDK_CQ_NOTIFY_ANY);
            p.server.cq->Dispatch->NdkArmCq(p.server.cq, NDK_CQ_NOTIFY_ANY);
        }
        ULONG n = p.client.cq->Dispatch->NdkGetCqResultsEx(p.client.cq, results.data(), kWindow);
        for (ULONG i = 0; i < n; ++i) {
            REQUIRE(results[i].Status == STATUS_SUCCESS);
            REQUIRE(results[i].Type == NdkOperationTypeSend);
            REQUIRE(results[i].RequestContext == reinterpret_cast<void *>(intptr_t(sent)));
            ++sent;
        }
        n = p.server.cq->Dispatch->NdkGetCqResultsEx(p.server.cq, results.data(), kWindow);
        for (ULONG i = 0; i < n; ++i) {
            REQUIRE(results[i].Status == STATUS_SUCCESS);
            REQUIRE((results[i].Type & NdkOperationTypeReceive) != 0);
            const auto slot =
                static_cast<int>(reinterpret_cast<intptr_t>(results[i].RequestContext));
            REQUIRE(slot == expected_receive % kWindow);
            int value = -1;
            std::memcpy(&value, p.server.buffer.data() + slot * 64, sizeof value);
            REQUIRE(value == received);
            ++expected_receive;
            ++received;
            NDK_SGE r = p.server.sge(static_cast<size_t>(slot) * 64, 64);
            REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, results[i].RequestContext, &r,
                                                      1) == STATUS_SUCCESS);
        }
    }
    CHECK(sent == total);
    CHECK(received == total);
    if (use_notifications) {
        // Armed CQs with completions arriving must have notified.
        const auto until = std::chrono::steady_clock::now() + kTimeout;
        while ((client_counts.notified == 0 || server_counts.notified == 0) &&
               std::chrono::steady_clock::now() < until)
            std::this_thread::yield();
        CHECK(client_counts.notified > 0);
        CHECK(server_counts.notified > 0);
        p.client.on_notify = nullptr;
        p.server.on_notify = nullptr;
    }
}

}  // namespace

TEST_CASE("10000 small sends polled: no completion lost", "[provider][qp][device]") {
    Pair p;
    stream(p, 10000, false);
}

TEST_CASE("10000 small sends with armed CQs and notification callbacks: no completion lost",
          "[provider][qp][device]") {
    Pair p;
    stream(p, 10000, true);
}

namespace {
struct Notified {
    Done done;
    static void on(PVOID ctx, NTSTATUS s) { static_cast<Notified *>(ctx)->done.signal(s); }
};
}  // namespace

TEST_CASE("An armed CQ notifies once per arm", "[provider][cq][device]") {
    Notified n;
    Pair p;
    p.server.on_notify_context = &n;
    p.server.on_notify = Notified::on;
    p.server.cq->Dispatch->NdkArmCq(p.server.cq, NDK_CQ_NOTIFY_ANY);
    NDK_SGE r = p.server.sge(0, 64);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    NDK_SGE s = p.client.sge(0, 8);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    REQUIRE(n.done.wait(1));
    CHECK(n.done.status == STATUS_SUCCESS);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(n.done.calls() == 1);  // not re-armed: no second notification
    std::vector<NDK_RESULT_EX> out;
    CHECK(p.server.drain(out, 2) == 2);
    CHECK(p.client.drain(out, 2) == 2);
    p.server.on_notify = nullptr;
}

TEST_CASE("A bad remote token fails with the mapped status and later requests are cancelled",
          "[provider][qp][device]") {
    Pair p;
    NDK_SGE w = p.client.sge(0, 64);
    auto *first = reinterpret_cast<void *>(1);
    auto *second = reinterpret_cast<void *>(2);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, first, &w, 1, p.server.remote_address(0),
                                            p.server.rtoken ^ 0x100, 0) == STATUS_SUCCESS);
    const NDK_RESULT_EX bad = p.client.poll_one();
    CHECK(bad.RequestContext == first);
    CHECK(bad.Status == STATUS_REMOTE_RESOURCES);  // remote access error (docs/prm.md §4)
    CHECK(bad.ProviderErrorCode != 0);
    CHECK(bad.Type == NdkOperationTypeWrite);
    // The QP is in error now: the next request is flushed.
    const NTSTATUS s = p.client.qp->Dispatch->NdkWrite(
        p.client.qp, second, &w, 1, p.server.remote_address(0), p.server.rtoken, 0);
    if (s == STATUS_SUCCESS) {
        const NDK_RESULT_EX next = p.client.poll_one();
        CHECK(next.RequestContext == second);
        CHECK(next.Status == STATUS_CANCELLED);
    } else {
        CHECK(s == STATUS_CONNECTION_INVALID);
    }
}

TEST_CASE("SILENT_SUCCESS suppresses the completion of a successful request",
          "[provider][qp][device]") {
    Pair p;
    NDK_SGE w = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, reinterpret_cast<void *>(1), &w, 1,
                                            p.server.remote_address(0), p.server.rtoken,
                                            NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, reinterpret_cast<void *>(2), &w, 1,
                                            p.server.remote_address(64), p.server.rtoken,
                                            0) == STATUS_SUCCESS);
    const NDK_RESULT_EX r = p.client.poll_one();
    CHECK(r.RequestContext == reinterpret_cast<void *>(2));
    NDK_RESULT_EX extra{};
    CHECK(p.client.cq->Dispatch->NdkGetCqResultsEx(p.client.cq, &extra, 1) == 0);
    // The silent WQE was retired with the signaled one: the queue is not leaking depth.
    for (int i = 0; i < 600; ++i) {
        REQUIRE(p.client.qp->Dispatch->NdkWrite(
                    p.client.qp, nullptr, &w, 1, p.server.remote_address(0), p.server.rtoken,
                    i % 10 == 9 ? 0 : NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS);
        if (i % 10 == 9) CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    }
}

TEST_CASE("DEFER chains are submitted by the next plain or failing post",
          "[provider][qp][device]") {
    Pair p;
    fill(p.client, 0, 256, 77);
    for (int i = 0; i < 3; ++i) {
        NDK_SGE w = p.client.sge(static_cast<size_t>(i) * 64, 64);
        REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, reinterpret_cast<void *>(intptr_t(i)),
                                                &w, 1, p.server.remote_address(i * 64),
                                                p.server.rtoken,
                                                NDK_OP_FLAG_DEFER) == STATUS_SUCCESS);
    }
    NDK_SGE last = p.client.sge(192, 64);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, reinterpret_cast<void *>(3), &last, 1,
                                            p.server.remote_address(192), p.server.rtoken,
                                            0) == STATUS_SUCCESS);
    std::vector<NDK_RESULT_EX> out;
    REQUIRE(p.client.drain(out, 4) == 4);
    for (int i = 0; i < 4; ++i) {
        CHECK(out[i].Status == STATUS_SUCCESS);
        CHECK(out[i].RequestContext == reinterpret_cast<void *>(intptr_t(i)));
    }
    CHECK(same(p.client, 0, p.server, 0, 256));

    // A deferred post followed by one that fails inline: the deferred one still runs.
    NDK_SGE w = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, reinterpret_cast<void *>(5), &w, 1,
                                            p.server.remote_address(512), p.server.rtoken,
                                            NDK_OP_FLAG_DEFER) == STATUS_SUCCESS);
    CHECK(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1, 0, 0,
                                          NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) ==
          STATUS_INVALID_PARAMETER);
    const NDK_RESULT_EX r = p.client.poll_one();
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.RequestContext == reinterpret_cast<void *>(5));
}

TEST_CASE("Disconnect completes and the peer's disconnect event fires once and the QP is flushed",
          "[provider][cm][device]") {
    DisconnectCount server_seen, client_seen;
    ConnectOptions o;
    o.server_disconnect = DisconnectCount::cb;
    o.server_disconnect_context = &server_seen;
    o.client_disconnect = DisconnectCount::cb;
    o.client_disconnect_context = &client_seen;
    Pair p(o);
    NDK_SGE r = p.server.sge(0, 64);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, reinterpret_cast<void *>(7), &r, 1) ==
            STATUS_SUCCESS);
    Done done;
    REQUIRE(finish(p.client.connector->Dispatch->NdkDisconnect(p.client.connector, Done::request,
                                                               &done),
                   done) == STATUS_SUCCESS);
    REQUIRE(server_seen.done.wait());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(server_seen.calls == 1);
    CHECK(client_seen.calls == 0);  // our own disconnect is not an event
    NDK_SGE s = p.client.sge(0, 8);
    CHECK(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) ==
          STATUS_CONNECTION_INVALID);
    // The server disconnects too; its pending receive is cancelled.
    Done done2;
    const NTSTATUS s2 =
        p.server.connector->Dispatch->NdkDisconnect(p.server.connector, Done::request, &done2);
    if (s2 != STATUS_CONNECTION_INVALID) CHECK(finish(s2, done2) == STATUS_SUCCESS);
    const NDK_RESULT_EX flushed = p.server.poll_one();
    CHECK(flushed.RequestContext == reinterpret_cast<void *>(7));
    CHECK(flushed.Status == STATUS_CANCELLED);
    CHECK(server_seen.calls == 1);
}

namespace {
struct CloseInCallback {
    NDK_CONNECTOR *connector = nullptr;
    Done request;
    Done closed;
    NTSTATUS close_status = STATUS_UNSUCCESSFUL;
    static void on_request(PVOID ctx, NTSTATUS s) {
        auto *self = static_cast<CloseInCallback *>(ctx);
        // Close the object whose request is completing, from inside its callback.
        self->close_status = self->connector->Dispatch->NdkCloseConnector(
            &self->connector->Header, Done::close, &self->closed);
        self->request.signal(s);
    }
};
}  // namespace

TEST_CASE("A connector can be closed from inside its own completion callback",
          "[provider][lifetime][device]") {
    Pair p;
    CloseInCallback c;
    c.connector = p.client.connector;
    p.client.connector = nullptr;  // closed by the callback
    const NTSTATUS s =
        c.connector->Dispatch->NdkDisconnect(c.connector, CloseInCallback::on_request, &c);
    if (s == STATUS_PENDING) {
        REQUIRE(c.request.wait());
        CHECK(c.request.status == STATUS_SUCCESS);
        CHECK((c.close_status == STATUS_PENDING || c.close_status == STATUS_SUCCESS));
        if (c.close_status == STATUS_PENDING) REQUIRE(c.closed.wait());
        CHECK(c.closed.calls() == (c.close_status == STATUS_PENDING ? 1 : 0));
    } else {
        CHECK(s == STATUS_SUCCESS);
        CHECK(close_sync(c.connector) == STATUS_SUCCESS);
    }
}

namespace {

// A consumer that processes completions only from notification callbacks:
// drain, re-arm, drain again (so a completion that lands between the drain and
// the arm is not missed), reposting each receive from inside the callback.
struct CallbackDriven {
    Side *side = nullptr;
    bool server = false;
    std::atomic<int> completed{0};
    std::atomic<int> in_callback{0};
    std::atomic<int> overlaps{0};
    std::atomic<int> errors{0};
    int expected = 0;  // next receive value (callback thread only)

    void drain() {
        NDK_RESULT_EX r[32];
        for (;;) {
            const ULONG n = side->cq->Dispatch->NdkGetCqResultsEx(side->cq, r, 32);
            for (ULONG i = 0; i < n; ++i) {
                if (r[i].Status != STATUS_SUCCESS) errors.fetch_add(1);
                if (server) {
                    const auto slot =
                        static_cast<size_t>(reinterpret_cast<uintptr_t>(r[i].RequestContext));
                    int value = -1;
                    std::memcpy(&value, side->buffer.data() + slot * 64, sizeof value);
                    if (value != expected || (r[i].Type & NdkOperationTypeReceive) == 0)
                        errors.fetch_add(1);
                    ++expected;
                    NDK_SGE sge = side->sge(slot * 64, 64);
                    if (side->qp->Dispatch->NdkReceive(side->qp, r[i].RequestContext, &sge, 1) !=
                        STATUS_SUCCESS)
                        errors.fetch_add(1);
                }
                completed.fetch_add(1, std::memory_order_release);
            }
            if (n == 0) return;
        }
    }
    static void on_notify(PVOID ctx, NTSTATUS s) {
        auto *self = static_cast<CallbackDriven *>(ctx);
        if (self->in_callback.fetch_add(1) != 0) self->overlaps.fetch_add(1);
        if (s != STATUS_SUCCESS) self->errors.fetch_add(1);
        self->drain();
        self->side->cq->Dispatch->NdkArmCq(self->side->cq, NDK_CQ_NOTIFY_ANY);
        self->drain();
        self->in_callback.fetch_sub(1);
    }
};

}  // namespace

TEST_CASE("10000 small sends processed only from notification callbacks: no completion lost",
          "[provider][cq][device]") {
    constexpr int kTotal = 10000;
    constexpr int kWindow = 64;
    CallbackDriven client, server;  // outlive the pair: its close waits for their callbacks
    Pair p;
    client.side = &p.client;
    server.side = &p.server;
    server.server = true;
    for (size_t i = 0; i < kWindow; ++i) {
        NDK_SGE r = p.server.sge(i * 64, 64);
        REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, reinterpret_cast<void *>(i), &r,
                                                  1) == STATUS_SUCCESS);
    }
    p.client.on_notify_context = &client;
    p.client.on_notify = CallbackDriven::on_notify;
    p.server.on_notify_context = &server;
    p.server.on_notify = CallbackDriven::on_notify;
    p.client.cq->Dispatch->NdkArmCq(p.client.cq, NDK_CQ_NOTIFY_ANY);
    p.server.cq->Dispatch->NdkArmCq(p.server.cq, NDK_CQ_NOTIFY_ANY);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int posted = 0;
    while (posted < kTotal && std::chrono::steady_clock::now() < deadline) {
        // Window: sends not yet received (the server's receive ring has kWindow slots).
        if (posted - server.completed.load(std::memory_order_acquire) >= kWindow ||
            posted - client.completed.load(std::memory_order_acquire) >= kWindow) {
            std::this_thread::yield();
            continue;
        }
        const size_t slot = static_cast<size_t>(posted % kWindow);
        std::memcpy(p.client.buffer.data() + slot * 64, &posted, sizeof posted);
        NDK_SGE s = p.client.sge(slot * 64, 8);
        REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
        ++posted;
    }
    while ((client.completed < kTotal || server.completed < kTotal) &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(posted == kTotal);
    CHECK(client.completed == kTotal);
    CHECK(server.completed == kTotal);
    CHECK(client.errors == 0);
    CHECK(server.errors == 0);
    CHECK(client.overlaps == 0);  // never two notifications of one CQ at once
    CHECK(server.overlaps == 0);
    // Stop the callbacks before the sides close.
    p.client.on_notify = nullptr;
    p.server.on_notify = nullptr;
}

TEST_CASE("Connections work over IPv6 too", "[provider][cm][device]") {
    ConnectOptions o;
    o.ipv6 = true;
    Pair p(o);
    sockaddr_in6 local{};
    ULONG n = sizeof local;
    CHECK(p.client.connector->Dispatch->NdkGetLocalAddress(
              p.client.connector, reinterpret_cast<PSOCKADDR>(&local), &n) == STATUS_SUCCESS);
    CHECK(n == sizeof(sockaddr_in6));
    CHECK(local.sin6_family == AF_INET6);
    NDK_SGE r = p.server.sge(0, 64);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    fill(p.client, 0, 64, 1);
    NDK_SGE s = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    CHECK(p.server.poll_one().BytesTransferred == 64);
    CHECK(same(p.client, 0, p.server, 0, 64));
}

TEST_CASE("A receive too small for the incoming send completes with STATUS_BUFFER_OVERFLOW",
          "[provider][qp][device]") {
    Pair p;
    NDK_SGE r = p.server.sge(0, 16);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, reinterpret_cast<void *>(9), &r, 1) ==
            STATUS_SUCCESS);
    NDK_SGE s = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    const NDK_RESULT_EX got = p.server.poll_one();
    CHECK(got.RequestContext == reinterpret_cast<void *>(9));
    CHECK(got.Status == STATUS_BUFFER_OVERFLOW);
    CHECK((got.Type & NdkOperationTypeReceive) != 0);
    CHECK(got.ProviderErrorCode != 0);
    CHECK(p.client.poll_one().Status != STATUS_SUCCESS);  // the sender learns it failed too
}

TEST_CASE("A bad local token fails with STATUS_ACCESS_VIOLATION", "[provider][qp][device]") {
    Pair p;
    NDK_SGE w = p.client.sge(0, 64);
    w.MemoryRegionToken ^= 0x100;  // another MPT entry (index + 1): not ours
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, reinterpret_cast<void *>(3), &w, 1,
                                            p.server.remote_address(0), p.server.rtoken,
                                            0) == STATUS_SUCCESS);
    const NDK_RESULT_EX bad = p.client.poll_one();
    CHECK(bad.RequestContext == reinterpret_cast<void *>(3));
    CHECK(bad.Status == STATUS_ACCESS_VIOLATION);
    CHECK(bad.Type == NdkOperationTypeWrite);
    CHECK(bad.ProviderErrorCode != 0);
}
