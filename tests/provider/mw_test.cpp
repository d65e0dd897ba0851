// Memory windows: NdkCreateMw, NdkBind, NdkGetRemoteTokenFromMw and invalidation of a
// window (NdkInvalidate, NdkSendAndInvalidate). NDK windows are bound by a work request
// on a QP and invalidated by one: type-2 semantics (emulator/memory/mpt.hpp). Type-1
// windows come from SoftNDK's PD extension (softndk_ext.h), tested at the end.
#include <softndk_ext.h>

#include "ndk_test.hpp"

using namespace ndktest;

namespace {

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

GUID mw_extension_guid() {
    return SOFTNDK_MW_EXTENSION_GUID_INIT;
}

const SOFTNDK_MW_EXTENSION_DISPATCH *mw_extension(NDK_PD *pd) {
    GUID id = mw_extension_guid();
    NDK_EXTENSION_INTERFACE iface{};
    REQUIRE(pd->Dispatch->NdkQueryExtension(&pd->Header, &id, NDK_VERSION{1, 0}, &iface) ==
            STATUS_SUCCESS);
    REQUIRE(iface.Dispatch != nullptr);
    return static_cast<const SOFTNDK_MW_EXTENSION_DISPATCH *>(iface.Dispatch);
}

NDK_MW *create_mw_type1(Side &s) {
    NDK_MW *mw = nullptr;
    REQUIRE(mw_extension(s.pd)->SoftNdkCreateMwType1(s.pd, Done::create, nullptr, &mw) ==
            STATUS_SUCCESS);
    REQUIRE(mw != nullptr);
    return mw;
}

// Binds `mw` over server.buffer[offset, offset + length) through `qp`; returns the token.
UINT32 bind(Side &server, NDK_QP *qp, NDK_MW *mw, size_t offset, SIZE_T length) {
    REQUIRE(qp->Dispatch->NdkBind(qp, nullptr, server.mr, mw, server.buffer.data() + offset, length,
                                  kRemote) == STATUS_SUCCESS);
    const NDK_RESULT_EX r = server.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    REQUIRE(r.Type == NdkOperationTypeBind);
    return mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
}

// An RDMA write of 8 bytes from `client` to server.buffer[offset]; its completion status.
NTSTATUS write_through(Side &client, Side &server, size_t offset, UINT32 token) {
    std::memcpy(client.buffer.data(), "8 bytes!", 8);
    NDK_SGE w = client.sge(0, 8);
    REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, server.remote_address(offset),
                                          token, 0) == STATUS_SUCCESS);
    return client.poll_one().Status;
}

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

// ---- Type-1 windows (softndk_ext.h)

TEST_CASE("NdkQueryExtension on a PD offers the type-1 window extension, version 1.0 only",
          "[provider][mw][extension][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    GUID id = mw_extension_guid();
    NDK_EXTENSION_INTERFACE iface{};
    CHECK(s.pd->Dispatch->NdkQueryExtension(&s.pd->Header, &id, NDK_VERSION{1, 0}, &iface) ==
          STATUS_SUCCESS);
    CHECK(iface.Dispatch != nullptr);
    iface.Dispatch = nullptr;
    CHECK(s.pd->Dispatch->NdkQueryExtension(&s.pd->Header, &id, NDK_VERSION{2, 0}, &iface) ==
          STATUS_NOT_SUPPORTED);
    CHECK(s.pd->Dispatch->NdkQueryExtension(&s.pd->Header, &id, NDK_VERSION{1, 1}, &iface) ==
          STATUS_NOT_SUPPORTED);
    CHECK(iface.Dispatch == nullptr);
    // Other objects do not offer it: windows belong to a PD.
    CHECK(s.adapter->Dispatch->NdkQueryExtension(&s.adapter->Header, &id, NDK_VERSION{1, 0},
                                                 &iface) == STATUS_NOT_SUPPORTED);
    CHECK(s.qp->Dispatch->NdkQueryExtension(&s.qp->Header, &id, NDK_VERSION{1, 0}, &iface) ==
          STATUS_NOT_SUPPORTED);
    CHECK(s.pd->Dispatch->NdkQueryExtension(&s.pd->Header, nullptr, NDK_VERSION{1, 0}, &iface) ==
          STATUS_INVALID_PARAMETER);
    CHECK(s.pd->Dispatch->NdkQueryExtension(&s.pd->Header, &id, NDK_VERSION{1, 0}, nullptr) ==
          STATUS_INVALID_PARAMETER);

    const SOFTNDK_MW_EXTENSION_DISPATCH *ext = mw_extension(s.pd);
    NDK_MW *mw = nullptr;
    CHECK(ext->SoftNdkCreateMwType1(nullptr, Done::create, nullptr, &mw) ==
          STATUS_INVALID_PARAMETER);
    CHECK(ext->SoftNdkCreateMwType1(s.pd, nullptr, nullptr, &mw) == STATUS_INVALID_PARAMETER);
    CHECK(ext->SoftNdkCreateMwType1(s.pd, Done::create, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    REQUIRE(ext->SoftNdkCreateMwType1(s.pd, Done::create, nullptr, &mw) == STATUS_SUCCESS);
    CHECK(mw->Header.ObjectType == NdkObjectTypeMw);
    CHECK(mw->Dispatch->NdkGetRemoteTokenFromMw(mw) == 0);  // not bound yet
    // A window is a child of its PD: the PD's close waits for it.
    Done pd_closed;
    NDK_PD *pd = s.pd;
    REQUIRE(pd->Dispatch->NdkClosePd(&pd->Header, Done::close, &pd_closed) == STATUS_PENDING);
    s.pd = nullptr;
    CHECK(pd_closed.calls() == 0);
    NDK_MW *late = nullptr;
    CHECK(ext->SoftNdkCreateMwType1(pd, Done::create, nullptr, &late) ==
          STATUS_INVALID_DEVICE_STATE);
    CHECK(close_sync(mw) == STATUS_SUCCESS);
    // The PD still has the side's QP and MR; closing them lets the PD's close finish.
    CHECK(close_sync(s.qp) == STATUS_SUCCESS);
    s.qp = nullptr;
    CHECK(close_sync(s.mr) == STATUS_SUCCESS);
    s.mr = nullptr;
    CHECK(pd_closed.wait());
}

TEST_CASE("A type-1 window serves every QP of its PD, a type-2 window only the QP that bound it",
          "[provider][mw][extension][device]") {
    Wsk wsk;
    Side client_a{wsk}, server_a{wsk}, client_b{wsk};
    connect(client_a, server_a);
    Side server_b{server_a};  // a second QP on the same PD, MR and CQ
    connect(client_b, server_b);

    NDK_MW *type1 = create_mw_type1(server_a);
    CloseMw close1{type1};
    const UINT32 token1 = bind(server_a, server_a.qp, type1, 4096, 4096);
    REQUIRE(token1 != 0);
    CHECK(write_through(client_a, server_a, 4096, token1) == STATUS_SUCCESS);
    CHECK(write_through(client_b, server_a, 4104, token1) == STATUS_SUCCESS);  // other QP
    CHECK(std::memcmp(server_a.buffer.data() + 4104, "8 bytes!", 8) == 0);

    NDK_MW *type2 = create_mw(server_a);
    CloseMw close2{type2};
    const UINT32 token2 = bind(server_a, server_a.qp, type2, 16384, 4096);
    CHECK(write_through(client_a, server_a, 16384, token2) == STATUS_SUCCESS);
    // Through the other QP of the PD the type-2 token is a remote access error.
    CHECK(write_through(client_b, server_a, 16392, token2) == STATUS_REMOTE_RESOURCES);
    CHECK(server_a.buffer[16392] == 0);
}

TEST_CASE("A type-1 window rebinds while bound, unbinds with length 0, and is never invalidated",
          "[provider][mw][extension][device]") {
    Wsk wsk;
    Side client{wsk}, server{wsk};
    connect(client, server);
    NDK_MW *mw = create_mw_type1(server);
    CloseMw c{mw};
    const UINT32 first = bind(server, server.qp, mw, 0, 4096);
    CHECK(write_through(client, server, 0, first) == STATUS_SUCCESS);

    SECTION("a rebind moves the window and retires the previous token") {
        const UINT32 second = bind(server, server.qp, mw, 65536, 4096);
        CHECK(second != first);
        CHECK((second >> 8) == (first >> 8));  // same key, new variant
        CHECK(write_through(client, server, 65536, second) == STATUS_SUCCESS);
        CHECK(std::memcmp(server.buffer.data() + 65536, "8 bytes!", 8) == 0);
        CHECK(write_through(client, server, 8, first) == STATUS_REMOTE_RESOURCES);
        CHECK(server.buffer[8] == 0);
    }
    SECTION("a zero-length bind unbinds: the token stops working") {
        REQUIRE(server.qp->Dispatch->NdkBind(server.qp, nullptr, nullptr, mw, nullptr, 0, 0) ==
                STATUS_SUCCESS);
        CHECK(server.poll_one().Status == STATUS_SUCCESS);
        CHECK(write_through(client, server, 8, first) == STATUS_REMOTE_RESOURCES);
        CHECK(server.buffer[8] == 0);
    }
    SECTION("NdkInvalidate fails with a local protection error and the QP flushes") {
        REQUIRE(server.qp->Dispatch->NdkInvalidate(server.qp, nullptr, &mw->Header, 0) ==
                STATUS_SUCCESS);
        const NDK_RESULT_EX r = server.poll_one();
        CHECK(r.Status == STATUS_ACCESS_VIOLATION);
        CHECK(r.Type == NdkOperationTypeInvalidate);
    }
    SECTION("the peer's send-and-invalidate is an invalid request that ends the connection") {
        NDK_SGE rx = server.sge(8192, 64);
        REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
        NDK_SGE tx = client.sge(0, 4);
        REQUIRE(client.qp->Dispatch->NdkSendAndInvalidate(client.qp, nullptr, &tx, 1, 0, first) ==
                STATUS_SUCCESS);
        CHECK(client.poll_one().Status == STATUS_INVALID_DEVICE_REQUEST);
        // The receive the send consumed is the request that failed on the server.
        const NDK_RESULT_EX r = server.poll_one();
        CHECK(r.Status == STATUS_INVALID_DEVICE_REQUEST);
        CHECK(r.Type == NdkOperationTypeReceive);
        CHECK(r.ProviderErrorCode != 0);
    }
}

TEST_CASE("A type-2 window has no zero-length unbind", "[provider][mw][device]") {
    Pair p;
    NDK_MW *mw = create_mw(p.server);
    CloseMw c{mw};
    bind(p.server, p.server.qp, mw, 0, 4096);
    CHECK(p.server.qp->Dispatch->NdkBind(p.server.qp, nullptr, nullptr, mw, nullptr, 0, 0) ==
          STATUS_INVALID_PARAMETER);
    CHECK(p.server.qp->Dispatch->NdkBind(p.server.qp, nullptr, p.server.mr, mw,
                                         p.server.buffer.data(), 0, 0) == STATUS_INVALID_PARAMETER);
}
