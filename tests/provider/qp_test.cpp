// The QP beyond plain posting: READ_FENCE, the read limits (IRD/ORD) negotiated at
// connect time and enforced, and how a QP error reaches the consumer when NDK has no
// QP event (docs/prm.md §4). (Posting, flags, DEFER and errors of the basic requests
// are in data_path_test.cpp; fast registration, bind and invalidation in mr_test.cpp
// and mw_test.cpp.)
#include "ndk_test.hpp"

using namespace ndktest;

namespace {

struct ReadLimits {
    ULONG ird = 0, ord = 0;
};

ReadLimits read_limits(NDK_CONNECTOR *c) {
    ReadLimits l;
    ULONG private_data_length = 0;  // [inout], required even when no data is wanted
    REQUIRE(c->Dispatch->NdkGetConnectionData(c, &l.ird, &l.ord, nullptr, &private_data_length) ==
            STATUS_SUCCESS);
    return l;
}

void *context(uintptr_t n) {
    return reinterpret_cast<void *>(n);
}

// Syndromes as NDK_RESULT_EX.ProviderErrorCode carries them (docs/prm.md §4).
constexpr ULONG kCauseLocalQpOperation = 0x02;
constexpr ULONG kCauseFlushed = 0x05;
constexpr ULONG kCauseRemoteAccess = 0x13;

}  // namespace

TEST_CASE("READ_FENCE: a send waits for the read before it, so it carries the read's data",
          "[provider][qp][device]") {
    Pair p;
    // The server holds the data the client reads, then forwards back with a send.
    for (int i = 0; i < 512; ++i)
        p.server.buffer[4096 + i] = static_cast<unsigned char>(0xA0 + i % 16);
    std::memset(p.client.buffer.data(), 0x11, 512);  // stale contents of the client's buffer
    NDK_SGE rx = p.server.sge(65536, 512);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    // The read is deferred so that the device sees both requests at once: only the fence
    // keeps the send from leaving with the stale bytes.
    NDK_SGE read_sink = p.client.sge(0, 512);
    REQUIRE(p.client.qp->Dispatch->NdkRead(p.client.qp, reinterpret_cast<void *>(1), &read_sink, 1,
                                           p.server.remote_address(4096), p.server.rtoken,
                                           NDK_OP_FLAG_DEFER) == STATUS_SUCCESS);
    NDK_SGE tx = p.client.sge(0, 512);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, reinterpret_cast<void *>(2), &tx, 1,
                                           NDK_OP_FLAG_READ_FENCE) == STATUS_SUCCESS);
    std::vector<NDK_RESULT_EX> out;
    REQUIRE(p.client.drain(out, 2) == 2);
    CHECK(out[0].RequestContext == reinterpret_cast<void *>(1));
    CHECK(out[0].Type == NdkOperationTypeRead);
    CHECK(out[1].RequestContext == reinterpret_cast<void *>(2));
    CHECK(out[1].Status == STATUS_SUCCESS);
    const NDK_RESULT_EX r = p.server.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    CHECK(r.BytesTransferred == 512);
    CHECK(std::memcmp(p.server.buffer.data() + 65536, p.server.buffer.data() + 4096, 512) == 0);
}

TEST_CASE("READ_FENCE: a local request fenced behind a read completes when the read does",
          "[provider][qp][mw][device]") {
    Pair p;
    NDK_MW *mw = nullptr;
    REQUIRE(p.client.pd->Dispatch->NdkCreateMw(p.client.pd, Done::create, nullptr, &mw) ==
            STATUS_SUCCESS);
    // Both requests reach the device with one doorbell; the bind (it never reaches the
    // wire) waits for the read, then runs when the read's response arrives. Its
    // completion must come then too, not with some later doorbell.
    NDK_SGE read_sink = p.client.sge(0, 512);
    REQUIRE(p.client.qp->Dispatch->NdkRead(p.client.qp, reinterpret_cast<void *>(1), &read_sink, 1,
                                           p.server.remote_address(4096), p.server.rtoken,
                                           NDK_OP_FLAG_DEFER) == STATUS_SUCCESS);
    REQUIRE(p.client.qp->Dispatch->NdkBind(
                p.client.qp, reinterpret_cast<void *>(2), p.client.mr, mw,
                p.client.buffer.data() + 8192, 4096,
                NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_ALLOW_REMOTE_READ) == STATUS_SUCCESS);
    std::vector<NDK_RESULT_EX> out;
    REQUIRE(p.client.drain(out, 2) == 2);
    CHECK(out[0].RequestContext == reinterpret_cast<void *>(1));
    CHECK(out[0].Status == STATUS_SUCCESS);
    CHECK(out[1].RequestContext == reinterpret_cast<void *>(2));
    CHECK(out[1].Type == NdkOperationTypeBind);
    CHECK(out[1].Status == STATUS_SUCCESS);
    CHECK(close_sync(mw) == STATUS_SUCCESS);
}

TEST_CASE("NdkRead takes up to MaxReadRequestSge SGEs, other requests the QP's initiator SGEs",
          "[provider][qp][device]") {
    Pair p;  // QPs created with 4 initiator SGEs
    const ULONG read_sge = p.client.info.MaxReadRequestSge;
    REQUIRE(read_sge > 4);
    for (int i = 0; i < 4096; ++i)
        p.server.buffer[i] = static_cast<unsigned char>(i * 7);
    std::vector<NDK_SGE> sink;
    for (ULONG i = 0; i < read_sge; ++i)
        sink.push_back(p.client.sge(i * 16, 16));
    REQUIRE(p.client.qp->Dispatch->NdkRead(p.client.qp, nullptr, sink.data(), read_sge,
                                           p.server.remote_address(0), p.server.rtoken,
                                           0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    CHECK(std::memcmp(p.client.buffer.data(), p.server.buffer.data(), read_sge * 16) == 0);
    // One more than the adapter allows for a READ.
    sink.push_back(p.client.sge(read_sge * 16, 16));
    CHECK(p.client.qp->Dispatch->NdkRead(p.client.qp, nullptr, sink.data(), read_sge + 1,
                                         p.server.remote_address(0), p.server.rtoken,
                                         0) == STATUS_INVALID_PARAMETER);
    // A WRITE is held to the QP's own limit.
    CHECK(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, sink.data(), 5,
                                          p.server.remote_address(0), p.server.rtoken,
                                          0) == STATUS_INVALID_PARAMETER);
}

// ---- IRD / ORD

TEST_CASE("IRD and ORD: each side gets the smaller of its own limit and the peer's",
          "[provider][qp][cm][device]") {
    ConnectOptions o;
    o.client_ird = 8;
    o.client_ord = 2;
    o.server_ird = 1;
    o.server_ord = 100;  // above the adapter's limit: capped
    Pair p(o);
    const ULONG max_ord = p.server.info.MaxOutboundReadLimit;
    REQUIRE(max_ord >= 8);
    const ReadLimits client = read_limits(p.client.connector);
    const ReadLimits server = read_limits(p.server.connector);
    CHECK(client.ird == 8);                            // min(8, server ORD min(100, max))
    CHECK(client.ord == 1);                            // min(2, server IRD 1)
    CHECK(server.ird == 1);                            // min(1, client ORD 2)
    CHECK(server.ord == std::min<ULONG>(8, max_ord));  // min(capped 100, client IRD 8)
}

TEST_CASE("ORD 1: many reads queue behind one another and all arrive intact",
          "[provider][qp][device]") {
    ConnectOptions o;
    o.client_ord = 1;
    Pair p(o);
    REQUIRE(read_limits(p.client.connector).ord == 1);
    constexpr int kReads = 16;
    constexpr ULONG kBytes = 8192;  // two packets each at a 4 KiB MTU
    for (size_t i = 0; i < kReads * kBytes; ++i)
        p.server.buffer[i] = static_cast<unsigned char>(i * 7 + i / kBytes);
    std::memset(p.client.buffer.data() + 262144, 0, kReads * kBytes);
    for (int i = 0; i < kReads; ++i) {
        NDK_SGE sink = p.client.sge(262144 + i * kBytes, kBytes);
        REQUIRE(p.client.qp->Dispatch->NdkRead(
                    p.client.qp, context(i + 1), &sink, 1, p.server.remote_address(i * kBytes),
                    p.server.rtoken, i + 1 < kReads ? NDK_OP_FLAG_DEFER : 0) == STATUS_SUCCESS);
    }
    std::vector<NDK_RESULT_EX> out;
    REQUIRE(p.client.drain(out, kReads) == kReads);
    for (int i = 0; i < kReads; ++i) {
        CHECK(out[i].Status == STATUS_SUCCESS);
        CHECK(out[i].RequestContext == context(i + 1));
        CHECK(out[i].BytesTransferred == kBytes);
    }
    CHECK(std::memcmp(p.client.buffer.data() + 262144, p.server.buffer.data(), kReads * kBytes) ==
          0);
}

TEST_CASE("A peer that allows no inbound reads: a read fails at once, never hangs",
          "[provider][qp][device]") {
    ConnectOptions o;
    o.server_ird = 0;
    Pair p(o);
    REQUIRE(read_limits(p.client.connector).ord == 0);
    NDK_SGE sink = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkRead(p.client.qp, context(1), &sink, 1,
                                           p.server.remote_address(0), p.server.rtoken,
                                           0) == STATUS_SUCCESS);
    const NDK_RESULT_EX r = p.client.poll_one();
    CHECK(r.RequestContext == context(1));
    CHECK(r.Status == STATUS_INTERNAL_ERROR);  // local QP operation error (docs/prm.md §4)
    CHECK(r.ProviderErrorCode == kCauseLocalQpOperation);
    CHECK(r.Type == NdkOperationTypeRead);
}

// ---- QP errors (docs/prm.md §4, "How a QP error reaches the consumer")

TEST_CASE("Requests flushed after a failure carry the failure's cause: after a disconnect, none",
          "[provider][qp][device]") {
    SECTION("a read with a bad token fails; the requests behind it flush with its cause") {
        Pair p;
        NDK_SGE sink = p.client.sge(0, 64);
        REQUIRE(p.client.qp->Dispatch->NdkRead(p.client.qp, context(1), &sink, 1,
                                               p.server.remote_address(0), p.server.rtoken ^ 0x100,
                                               NDK_OP_FLAG_DEFER) == STATUS_SUCCESS);
        REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, context(2), &sink, 1,
                                                p.server.remote_address(0), p.server.rtoken,
                                                0) == STATUS_SUCCESS);
        std::vector<NDK_RESULT_EX> out;
        REQUIRE(p.client.drain(out, 2) == 2);
        CHECK(out[0].RequestContext == context(1));
        CHECK(out[0].Status == STATUS_REMOTE_RESOURCES);
        CHECK(out[0].ProviderErrorCode == kCauseRemoteAccess);
        CHECK(out[1].RequestContext == context(2));
        CHECK(out[1].Status == STATUS_CANCELLED);
        CHECK(out[1].ProviderErrorCode == kCauseRemoteAccess);
    }
    SECTION("a disconnect flushes pending receives as plain flushes") {
        Pair p;
        NDK_SGE rx = p.server.sge(0, 64);
        REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, context(7), &rx, 1) ==
                STATUS_SUCCESS);
        Done disconnected;
        REQUIRE(finish(p.server.connector->Dispatch->NdkDisconnect(p.server.connector,
                                                                   Done::request, &disconnected),
                       disconnected) == STATUS_SUCCESS);
        const NDK_RESULT_EX r = p.server.poll_one();
        CHECK(r.RequestContext == context(7));
        CHECK(r.Status == STATUS_CANCELLED);
        CHECK(r.ProviderErrorCode == kCauseFlushed);
    }
}

TEST_CASE("A failure on the responder side reaches the responder's consumer through its queues",
          "[provider][qp][device]") {
    Pair p;
    // The server has two receives posted and nothing else in flight; the client's
    // write with a bad token fails the server's QP, not one of the server's requests.
    NDK_SGE rx = p.server.sge(0, 64);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, context(1), &rx, 1) == STATUS_SUCCESS);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, context(2), &rx, 1) == STATUS_SUCCESS);
    NDK_SGE w = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, context(3), &w, 1,
                                            p.server.remote_address(0), p.server.rtoken ^ 0x100,
                                            0) == STATUS_SUCCESS);
    const NDK_RESULT_EX failed = p.client.poll_one();
    CHECK(failed.RequestContext == context(3));
    CHECK(failed.Status == STATUS_REMOTE_RESOURCES);
    std::vector<NDK_RESULT_EX> out;
    REQUIRE(p.server.drain(out, 2) == 2);
    for (int i = 0; i < 2; ++i) {
        CHECK(out[i].RequestContext == context(i + 1));
        CHECK(out[i].Type == NdkOperationTypeReceive);
        CHECK(out[i].Status == STATUS_CANCELLED);
        CHECK(out[i].ProviderErrorCode == kCauseRemoteAccess);  // why, though NDK has no QP event
    }
    // What the server posts from now on is flushed the same way, never lost.
    NDK_SGE tx = p.server.sge(0, 16);
    REQUIRE(p.server.qp->Dispatch->NdkSend(p.server.qp, context(4), &tx, 1, 0) == STATUS_SUCCESS);
    const NDK_RESULT_EX late = p.server.poll_one();
    CHECK(late.RequestContext == context(4));
    CHECK(late.Status == STATUS_CANCELLED);
    CHECK(late.ProviderErrorCode == kCauseRemoteAccess);
}
