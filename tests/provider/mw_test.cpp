// Memory windows: NdkCreateMw, NdkBind, NdkGetRemoteTokenFromMw and invalidation of a
// window (NdkInvalidate, NdkSendAndInvalidate). NDK windows are bound by a work request
// on a QP and invalidated by one: type-2 semantics (emulator/memory/mpt.hpp).
#include "ndk_test.hpp"

using namespace ndktest;

namespace {

struct Pair {
    Wsk wsk;
    Side client{wsk};
    Side server{wsk};
    Pair() { connect(client, server); }
};

NDK_MW *create_mw(Side &s) {
    NDK_MW *mw = nullptr;
    REQUIRE(s.pd->Dispatch->NdkCreateMw(s.pd, Done::create, nullptr, &mw) == STATUS_SUCCESS);
    return mw;
}

struct CloseMw {
    NDK_MW *mw;
    ~CloseMw() { CHECK(close_sync(mw) == STATUS_SUCCESS); }
};

constexpr ULONG kRemote = NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE;

}  // namespace

TEST_CASE("NdkBind: inline failures post nothing", "[provider][mw][device]") {
    Pair p;
    Side &s = p.server;
    NDK_MW *mw = create_mw(s);
    CloseMw c{mw};
    // No token before the first bind.
    CHECK(mw->Dispatch->NdkGetRemoteTokenFromMw(mw) == 0);
    void *va = s.buffer.data();
    CHECK(s.qp->Dispatch->NdkBind(s.qp, nullptr, s.mr, mw, va, 64, NDK_OP_FLAG_INLINE) ==
          STATUS_INVALID_PARAMETER);
    CHECK(s.qp->Dispatch->NdkBind(s.qp, nullptr, nullptr, mw, va, 64, 0) ==
          STATUS_INVALID_PARAMETER);
    CHECK(s.qp->Dispatch->NdkBind(s.qp, nullptr, s.mr, nullptr, va, 64, 0) ==
          STATUS_INVALID_PARAMETER);
    CHECK(s.qp->Dispatch->NdkBind(s.qp, nullptr, s.mr, mw, nullptr, 64, 0) ==
          STATUS_INVALID_PARAMETER);  // no zero-based VAs
    CHECK(s.qp->Dispatch->NdkBind(s.qp, nullptr, s.mr, mw, va, 0, 0) == STATUS_INVALID_PARAMETER);
    // Remote write through a window needs an MR its owner may write.
    NDK_MR *read_only = nullptr;
    REQUIRE(s.pd->Dispatch->NdkCreateMr(s.pd, FALSE, Done::create, nullptr, &read_only) ==
            STATUS_SUCCESS);
    MDL mdl = make_mdl(s.buffer.data(), 4096);
    Done done;
    REQUIRE(finish(read_only->Dispatch->NdkRegisterMr(
                       read_only, &mdl, 4096, NDK_MR_FLAG_ALLOW_REMOTE_READ, Done::request, &done),
                   done) == STATUS_SUCCESS);
    CHECK(s.qp->Dispatch->NdkBind(s.qp, nullptr, read_only, mw, va, 64,
                                  NDK_OP_FLAG_ALLOW_REMOTE_WRITE) == STATUS_ACCESS_VIOLATION);
    CHECK(mw->Dispatch->NdkGetRemoteTokenFromMw(mw) == 0);
    CHECK(close_sync(read_only) == STATUS_SUCCESS);
}

TEST_CASE("NdkBind on an unconnected QP returns STATUS_CONNECTION_INVALID",
          "[provider][mw][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_MW *mw = create_mw(s);
    CloseMw c{mw};
    CHECK(s.qp->Dispatch->NdkBind(s.qp, nullptr, s.mr, mw, s.buffer.data(), 64, kRemote) ==
          STATUS_CONNECTION_INVALID);
}

TEST_CASE("A bound window serves remote access to its range only, until invalidated",
          "[provider][mw][invalidate][device]") {
    Pair p;
    Side &server = p.server;
    Side &client = p.client;
    NDK_MW *mw = create_mw(server);
    CloseMw c{mw};
    unsigned char *window = server.buffer.data() + 8192;
    REQUIRE(server.qp->Dispatch->NdkBind(server.qp, reinterpret_cast<void *>(5), server.mr, mw,
                                         window, 4096, kRemote) == STATUS_SUCCESS);
    const UINT32 token = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
    CHECK(token != 0);
    CHECK(token != server.rtoken);
    NDK_RESULT_EX r = server.poll_one();
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.Type == NdkOperationTypeBind);
    CHECK(r.RequestContext == reinterpret_cast<void *>(5));

    // Inside the window: the write lands.
    std::memcpy(client.buffer.data(), "window", 6);
    NDK_SGE w = client.sge(0, 6);
    const auto base = reinterpret_cast<UINT64>(window);
    REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, base + 4090, token, 0) ==
            STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    CHECK(std::memcmp(window + 4090, "window", 6) == 0);
    // A read through the window works too.
    NDK_SGE rd = client.sge(100, 6);
    REQUIRE(client.qp->Dispatch->NdkRead(client.qp, nullptr, &rd, 1, base + 4090, token, 0) ==
            STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    CHECK(std::memcmp(client.buffer.data() + 100, "window", 6) == 0);

    // Invalidate the window locally; the token dies.
    REQUIRE(server.qp->Dispatch->NdkInvalidate(server.qp, nullptr, &mw->Header, 0) ==
            STATUS_SUCCESS);
    r = server.poll_one();
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.Type == NdkOperationTypeInvalidate);
    REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, base, token, 0) ==
            STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_REMOTE_RESOURCES);
}

TEST_CASE("A write past the end of a window is a remote access error", "[provider][mw][device]") {
    Pair p;
    NDK_MW *mw = create_mw(p.server);
    CloseMw c{mw};
    unsigned char *window = p.server.buffer.data() + 4096;
    REQUIRE(p.server.qp->Dispatch->NdkBind(p.server.qp, nullptr, p.server.mr, mw, window, 256,
                                           kRemote | NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS);
    const UINT32 token = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
    NDK_SGE w = p.client.sge(0, 16);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1,
                                            reinterpret_cast<UINT64>(window) + 250, token,
                                            0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);
    CHECK(p.server.buffer[4096 + 250] == 0);
}

TEST_CASE("A read-only window refuses remote writes", "[provider][mw][device]") {
    Pair p;
    NDK_MW *mw = create_mw(p.server);
    CloseMw c{mw};
    unsigned char *window = p.server.buffer.data();
    REQUIRE(p.server.qp->Dispatch->NdkBind(p.server.qp, nullptr, p.server.mr, mw, window, 256,
                                           NDK_OP_FLAG_ALLOW_REMOTE_READ) == STATUS_SUCCESS);
    CHECK(p.server.poll_one().Status == STATUS_SUCCESS);
    const UINT32 token = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
    NDK_SGE w = p.client.sge(0, 16);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1,
                                            reinterpret_cast<UINT64>(window), token,
                                            0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);
}

TEST_CASE("The peer's send-and-invalidate retires a window", "[provider][mw][invalidate][device]") {
    Pair p;
    NDK_MW *mw = create_mw(p.server);
    CloseMw c{mw};
    unsigned char *window = p.server.buffer.data() + 65536;
    REQUIRE(p.server.qp->Dispatch->NdkBind(p.server.qp, nullptr, p.server.mr, mw, window, 4096,
                                           kRemote) == STATUS_SUCCESS);
    CHECK(p.server.poll_one().Status == STATUS_SUCCESS);
    const UINT32 token = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
    NDK_SGE rx = p.server.sge(0, 64);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    NDK_SGE tx = p.client.sge(0, 4);
    REQUIRE(p.client.qp->Dispatch->NdkSendAndInvalidate(p.client.qp, nullptr, &tx, 1, 0, token) ==
            STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    NDK_RESULT_EX r = p.server.poll_one();
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.Type == NdkOperationTypeReceiveAndInvalidate);
    CHECK(r.TypeSpecificCompletionOutput == token);
    NDK_SGE w = p.client.sge(0, 16);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1,
                                            reinterpret_cast<UINT64>(window), token,
                                            0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);
}
