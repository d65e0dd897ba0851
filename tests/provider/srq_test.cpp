// Shared receive queues: NdkCreateSrq, NdkCreateQpWithSrq, NdkSrqReceive, NdkModifySrq
// and the one-shot limit notification. Edge cases and inline failures first, then the
// data path through a connected QP that receives from an SRQ.
#include "ndk_test.hpp"

using namespace ndktest;

namespace {

struct Notifications {
    std::atomic<int> calls{0};
    std::atomic<NTSTATUS> last{STATUS_PENDING};
    static void cb(PVOID ctx, NTSTATUS status) {
        auto *self = static_cast<Notifications *>(ctx);
        self->last.store(status);
        self->calls.fetch_add(1);
    }
    bool wait_for(int n) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (calls.load() < n && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return calls.load() >= n;
    }
};

NTSTATUS create_srq(Side &s, ULONG depth, ULONG sge, ULONG threshold, Notifications *n,
                    NDK_SRQ **out) {
    return s.pd->Dispatch->NdkCreateSrq(s.pd, depth, sge, threshold,
                                        n != nullptr ? Notifications::cb : nullptr, n, nullptr,
                                        Done::create, nullptr, out);
}

NTSTATUS create_qp_with_srq(Side &s, NDK_SRQ *srq, NDK_QP **out) {
    return s.pd->Dispatch->NdkCreateQpWithSrq(s.pd, s.cq, s.cq, srq, &s, 64, 4, 64, Done::create,
                                              nullptr, out);
}

NTSTATUS modify(NDK_SRQ *srq, ULONG depth, ULONG threshold) {
    Done done;
    return finish(srq->Dispatch->NdkModifySrq(srq, depth, threshold, Done::request, &done), done);
}

// The server's QP is replaced by one that receives from `srq`; then the pair connects.
struct SrqPair {
    Wsk wsk;
    Side client{wsk};
    Side server{wsk};
    Notifications notifications;
    NDK_SRQ *srq = nullptr;

    explicit SrqPair(ULONG depth = 16, ULONG threshold = 0) {
        REQUIRE(server.info.MaxSrqDepth >= depth);
        REQUIRE(create_srq(server, depth, 2, threshold, &notifications, &srq) == STATUS_SUCCESS);
        REQUIRE(close_sync(server.qp) == STATUS_SUCCESS);
        server.qp = nullptr;
        REQUIRE(create_qp_with_srq(server, srq, &server.qp) == STATUS_SUCCESS);
        connect(client, server);
    }
    ~SrqPair() {
        // The QP depends on the SRQ: connector and QP first (Side::cleanup), then the SRQ.
        client.cleanup();
        if (server.connector != nullptr) CHECK(close_sync(server.connector) == STATUS_SUCCESS);
        server.connector = nullptr;
        if (server.qp != nullptr) CHECK(close_sync(server.qp) == STATUS_SUCCESS);
        server.qp = nullptr;
        CHECK(close_sync(srq) == STATUS_SUCCESS);
    }
    NTSTATUS post(size_t offset, ULONG length, void *ctx) {
        NDK_SGE sge = server.sge(offset, length);
        return srq->Dispatch->NdkSrqReceive(srq, ctx, &sge, 1);
    }
    void send(size_t offset, ULONG length) {
        NDK_SGE sge = client.sge(offset, length);
        REQUIRE(client.qp->Dispatch->NdkSend(client.qp, nullptr, &sge, 1, 0) == STATUS_SUCCESS);
        REQUIRE(client.poll_one().Status == STATUS_SUCCESS);
    }
};

}  // namespace

TEST_CASE("NdkCreateSrq checks its limits", "[provider][srq][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    REQUIRE(s.info.MaxSrqDepth > 0);
    NDK_SRQ *srq = nullptr;
    const ULONG max_depth = s.info.MaxSrqDepth;
    const ULONG max_sge = s.info.MaxReceiveRequestSge;
    CHECK(create_srq(s, 0, 1, 0, nullptr, &srq) == STATUS_INVALID_PARAMETER);
    CHECK(create_srq(s, max_depth + 1, 1, 0, nullptr, &srq) == STATUS_INVALID_PARAMETER);
    CHECK(create_srq(s, 16, 0, 0, nullptr, &srq) == STATUS_INVALID_PARAMETER);
    CHECK(create_srq(s, 16, max_sge + 1, 0, nullptr, &srq) == STATUS_INVALID_PARAMETER);
    CHECK(create_srq(s, 16, 1, 17, nullptr, &srq) == STATUS_INVALID_PARAMETER);
    CHECK(s.pd->Dispatch->NdkCreateSrq(s.pd, 16, 1, 0, nullptr, nullptr, nullptr, nullptr, nullptr,
                                       &srq) == STATUS_INVALID_PARAMETER);
    CHECK(srq == nullptr);
    REQUIRE(create_srq(s, 16, max_sge, 16, nullptr, &srq) == STATUS_SUCCESS);
    CHECK(srq->Header.ObjectType == NdkObjectTypeSrq);
    CHECK(close_sync(srq) == STATUS_SUCCESS);
}

TEST_CASE("NdkSrqReceive: SGE limits and depth", "[provider][srq][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_SRQ *srq = nullptr;
    REQUIRE(create_srq(s, 4, 2, 0, nullptr, &srq) == STATUS_SUCCESS);
    NDK_SGE sge[3] = {s.sge(0, 8), s.sge(8, 8), s.sge(16, 8)};
    CHECK(srq->Dispatch->NdkSrqReceive(srq, nullptr, sge, 3) == STATUS_INVALID_PARAMETER);
    CHECK(srq->Dispatch->NdkSrqReceive(srq, nullptr, nullptr, 1) == STATUS_INVALID_PARAMETER);
    for (int i = 0; i < 4; ++i)
        CHECK(srq->Dispatch->NdkSrqReceive(srq, nullptr, sge, 2) == STATUS_SUCCESS);
    CHECK(srq->Dispatch->NdkSrqReceive(srq, nullptr, sge, 1) == STATUS_INSUFFICIENT_RESOURCES);
    CHECK(close_sync(srq) == STATUS_SUCCESS);
}

TEST_CASE("NdkCreateQpWithSrq: arguments, and NdkReceive on such a QP is refused",
          "[provider][srq][qp][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_SRQ *srq = nullptr;
    REQUIRE(create_srq(s, 8, 1, 0, nullptr, &srq) == STATUS_SUCCESS);
    NDK_QP *qp = nullptr;
    CHECK(s.pd->Dispatch->NdkCreateQpWithSrq(s.pd, s.cq, s.cq, nullptr, nullptr, 8, 1, 0,
                                             Done::create, nullptr,
                                             &qp) == STATUS_INVALID_PARAMETER);
    CHECK(s.pd->Dispatch->NdkCreateQpWithSrq(s.pd, s.cq, s.cq, srq, nullptr, 0, 1, 0, Done::create,
                                             nullptr, &qp) == STATUS_INVALID_PARAMETER);
    CHECK(s.pd->Dispatch->NdkCreateQpWithSrq(s.pd, s.cq, s.cq, srq, nullptr, 8,
                                             s.info.MaxInitiatorRequestSge + 1, 0, Done::create,
                                             nullptr, &qp) == STATUS_INVALID_PARAMETER);
    // An SRQ of another PD.
    NDK_PD *other = nullptr;
    REQUIRE(s.adapter->Dispatch->NdkCreatePd(s.adapter, Done::create, nullptr, &other) ==
            STATUS_SUCCESS);
    CHECK(other->Dispatch->NdkCreateQpWithSrq(other, s.cq, s.cq, srq, nullptr, 8, 1, 0,
                                              Done::create, nullptr,
                                              &qp) == STATUS_INVALID_PARAMETER);
    REQUIRE(create_qp_with_srq(s, srq, &qp) == STATUS_SUCCESS);
    NDK_SGE sge = s.sge(0, 8);
    CHECK(qp->Dispatch->NdkReceive(qp, nullptr, &sge, 1) == STATUS_INVALID_DEVICE_REQUEST);
    // The SRQ's close pends until the QP that depends on it is closed.
    Done srq_closed;
    const NTSTATUS pending = srq->Dispatch->NdkCloseSrq(&srq->Header, Done::close, &srq_closed);
    if (pending == STATUS_PENDING) CHECK(srq_closed.calls() == 0);
    CHECK(close_sync(qp) == STATUS_SUCCESS);
    if (pending == STATUS_PENDING) CHECK(srq_closed.wait());
    CHECK(close_sync(other) == STATUS_SUCCESS);
}

TEST_CASE("Sends land in SRQ receives in posting order, with their contexts",
          "[provider][srq][device]") {
    SrqPair p;
    for (uintptr_t i = 0; i < 3; ++i)
        REQUIRE(p.post(1024 * i, 1024, reinterpret_cast<void *>(i + 1)) == STATUS_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        for (int b = 0; b < 100; ++b)
            p.client.buffer[8192 + b] = static_cast<unsigned char>(i * 50 + b);
        p.send(8192, 100);
        const NDK_RESULT_EX r = p.server.poll_one();
        CAPTURE(i);
        CHECK(r.Status == STATUS_SUCCESS);
        CHECK(r.Type == NdkOperationTypeReceive);
        CHECK(r.RequestContext == reinterpret_cast<void *>(static_cast<uintptr_t>(i + 1)));
        CHECK(r.QPContext == &p.server);
        CHECK(r.BytesTransferred == 100);
        CHECK(std::memcmp(p.server.buffer.data() + 1024 * i, p.client.buffer.data() + 8192, 100) ==
              0);
    }
    // Retired slots can be posted again: the ring wraps.
    for (uintptr_t i = 0; i < 40; ++i) {
        REQUIRE(p.post(0, 64, reinterpret_cast<void *>(100 + i)) == STATUS_SUCCESS);
        p.send(0, 8);
        CHECK(p.server.poll_one().RequestContext == reinterpret_cast<void *>(100 + i));
    }
}

TEST_CASE("The SRQ limit notification is one-shot and NdkModifySrq re-arms it",
          "[provider][srq][device]") {
    SrqPair p(16, 2);  // notify when fewer than 2 receives are queued
    for (int i = 0; i < 3; ++i)
        REQUIRE(p.post(0, 64, nullptr) == STATUS_SUCCESS);
    p.send(0, 8);  // 2 left: not below the threshold
    CHECK(p.server.poll_one().Status == STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(p.notifications.calls.load() == 0);
    p.send(0, 8);  // 1 left: below
    CHECK(p.server.poll_one().Status == STATUS_SUCCESS);
    REQUIRE(p.notifications.wait_for(1));
    CHECK(p.notifications.last.load() == STATUS_SUCCESS);
    p.send(0, 8);  // 0 left: disarmed, no second call
    CHECK(p.server.poll_one().Status == STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(p.notifications.calls.load() == 1);
    // Re-armed while already below: fires at once.
    CHECK(modify(p.srq, 0, 1) == STATUS_SUCCESS);
    REQUIRE(p.notifications.wait_for(2));
    // Threshold 0 keeps the (now disarmed) state: nothing more.
    for (int i = 0; i < 4; ++i)
        REQUIRE(p.post(0, 64, nullptr) == STATUS_SUCCESS);
    CHECK(modify(p.srq, 0, 0) == STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(p.notifications.calls.load() == 2);
}

TEST_CASE("NdkModifySrq: depth within the ring, threshold within the depth",
          "[provider][srq][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_SRQ *srq = nullptr;
    REQUIRE(create_srq(s, 5, 1, 0, nullptr, &srq) == STATUS_SUCCESS);  // ring of 8
    CHECK(srq->Dispatch->NdkModifySrq(srq, 4, 0, nullptr, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(modify(srq, s.info.MaxSrqDepth + 1, 0) == STATUS_INVALID_PARAMETER);
    CHECK(modify(srq, 0, 6) == STATUS_INVALID_PARAMETER);  // above the depth of 5
    CHECK(modify(srq, 8, 0) == STATUS_SUCCESS);            // grows within the ring
    NDK_SGE sge = s.sge(0, 8);
    for (int i = 0; i < 8; ++i)
        CHECK(srq->Dispatch->NdkSrqReceive(srq, nullptr, &sge, 1) == STATUS_SUCCESS);
    CHECK(srq->Dispatch->NdkSrqReceive(srq, nullptr, &sge, 1) == STATUS_INSUFFICIENT_RESOURCES);
    CHECK(modify(srq, 2, 0) == STATUS_SUCCESS);  // shrinking below what is queued is allowed
    CHECK(srq->Dispatch->NdkSrqReceive(srq, nullptr, &sge, 1) == STATUS_INSUFFICIENT_RESOURCES);
    CHECK(close_sync(srq) == STATUS_SUCCESS);
}
