// NDK_PD: NdkCreatePd (arguments, headers), NdkClosePd (arguments; pends while a QP, MR, MW
// or SRQ of the PD is open and completes once it closes; a closing PD takes no new
// children) and NdkGetPrivilegedMemoryRegionToken (one token per PD, the same on every
// call, local access to LAM logical addresses through QPs of that PD only). The privileged
// token's receive into LAM pages and its refusal for remote access are in mr_test.cpp.
#include <functional>

#include "ndk_test.hpp"

using namespace ndktest;

namespace {

NTSTATUS create_pd(NDK_ADAPTER *a, NDK_PD **out) {
    return a->Dispatch->NdkCreatePd(a, Done::create, nullptr, out);
}

UINT32 privileged_token(NDK_PD *pd) {
    UINT32 token = 0xdeadbeef;
    pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(pd, &token);
    return token;
}

}  // namespace

// ---- NdkCreatePd / NdkClosePd

TEST_CASE("NdkCreatePd creates PDs and checks its arguments", "[provider][pd][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_ADAPTER *a = s.adapter;
    NDK_PD *pd = nullptr;
    CHECK(a->Dispatch->NdkCreatePd(a, Done::create, nullptr, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreatePd(nullptr, Done::create, nullptr, &pd) ==
          STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd) == STATUS_INVALID_PARAMETER);
    // A CQ is not an adapter.
    CHECK(a->Dispatch->NdkCreatePd(reinterpret_cast<NDK_ADAPTER *>(s.cq), Done::create, nullptr,
                                   &pd) == STATUS_INVALID_PARAMETER);
    CHECK(pd == nullptr);

    NDK_PD *other = nullptr;
    REQUIRE(create_pd(a, &pd) == STATUS_SUCCESS);
    REQUIRE(create_pd(a, &other) == STATUS_SUCCESS);
    CHECK(pd != other);
    CHECK(pd != s.pd);
    CHECK(pd->Header.ObjectType == NdkObjectTypePd);
    CHECK(pd->Header.Version.Major == s.info.Version.Major);
    CHECK(pd->Header.Version.Minor == s.info.Version.Minor);
    CHECK(pd->Dispatch != nullptr);
    // Usable: a QP in the new PD.
    NDK_QP *qp = nullptr;
    CHECK(pd->Dispatch->NdkCreateQp(pd, s.cq, s.cq, nullptr, 4, 4, 1, 1, 0, Done::create, nullptr,
                                    &qp) == STATUS_SUCCESS);
    if (qp != nullptr) CHECK(close_sync(qp) == STATUS_SUCCESS);
    // Without children the close finishes inline.
    CHECK(pd->Dispatch->NdkClosePd(&pd->Header, Done::close, nullptr) == STATUS_SUCCESS);
    CHECK(close_sync(other) == STATUS_SUCCESS);
}

TEST_CASE("NdkClosePd checks its arguments and refuses a second close",
          "[provider][pd][lifetime][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_PD *pd = nullptr;
    REQUIRE(create_pd(s.adapter, &pd) == STATUS_SUCCESS);
    const NDK_PD_DISPATCH *d = pd->Dispatch;
    Done closed;
    CHECK(d->NdkClosePd(nullptr, Done::close, &closed) == STATUS_INVALID_PARAMETER);
    CHECK(d->NdkClosePd(&pd->Header, nullptr, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(d->NdkClosePd(&s.cq->Header, Done::close, &closed) == STATUS_INVALID_PARAMETER);  // a CQ
    // An MR keeps the PD: the first close pends, a second one is refused.
    NDK_MR *mr = nullptr;
    REQUIRE(d->NdkCreateMr(pd, FALSE, Done::create, nullptr, &mr) == STATUS_SUCCESS);
    CHECK(d->NdkClosePd(&pd->Header, Done::close, &closed) == STATUS_PENDING);
    CHECK(d->NdkClosePd(&pd->Header, Done::close, &closed) == STATUS_INVALID_DEVICE_STATE);
    CHECK(close_sync(mr) == STATUS_SUCCESS);
    REQUIRE(closed.wait());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(closed.calls() == 1);  // once, for the close that pended
}

TEST_CASE("NdkClosePd pends while a QP, MR, MW or SRQ of the PD is open",
          "[provider][pd][lifetime][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_PD *pd = nullptr;
    REQUIRE(create_pd(s.adapter, &pd) == STATUS_SUCCESS);
    const NDK_PD_DISPATCH *d = pd->Dispatch;
    std::function<NTSTATUS()> close_child;
    SECTION("QP") {
        NDK_QP *qp = nullptr;
        REQUIRE(d->NdkCreateQp(pd, s.cq, s.cq, nullptr, 4, 4, 1, 1, 0, Done::create, nullptr,
                               &qp) == STATUS_SUCCESS);
        close_child = [qp] { return close_sync(qp); };
    }
    SECTION("registered MR") {
        NDK_MR *mr = nullptr;
        REQUIRE(d->NdkCreateMr(pd, FALSE, Done::create, nullptr, &mr) == STATUS_SUCCESS);
        Done registered;
        REQUIRE(finish(mr->Dispatch->NdkRegisterMr(mr, &s.mdl, s.buffer.size(),
                                                   NDK_MR_FLAG_ALLOW_LOCAL_WRITE, Done::request,
                                                   &registered),
                       registered) == STATUS_SUCCESS);
        close_child = [mr] { return close_sync(mr); };
    }
    SECTION("MW") {
        NDK_MW *mw = nullptr;
        REQUIRE(d->NdkCreateMw(pd, Done::create, nullptr, &mw) == STATUS_SUCCESS);
        close_child = [mw] { return close_sync(mw); };
    }
    SECTION("SRQ") {
        NDK_SRQ *srq = nullptr;
        REQUIRE(d->NdkCreateSrq(pd, 4, 1, 0, nullptr, nullptr, nullptr, Done::create, nullptr,
                                &srq) == STATUS_SUCCESS);
        close_child = [srq] { return close_sync(srq); };
    }
    Done closed;
    const NTSTATUS close_status = d->NdkClosePd(&pd->Header, Done::close, &closed);
    CHECK(close_status == STATUS_PENDING);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(closed.calls() == 0);
    // A closing PD takes no new children.
    NDK_MR *late_mr = nullptr;
    CHECK(d->NdkCreateMr(pd, FALSE, Done::create, nullptr, &late_mr) ==
          STATUS_INVALID_DEVICE_STATE);
    NDK_QP *late_qp = nullptr;
    CHECK(d->NdkCreateQp(pd, s.cq, s.cq, nullptr, 4, 4, 1, 1, 0, Done::create, nullptr, &late_qp) ==
          STATUS_INVALID_DEVICE_STATE);
    CHECK(late_mr == nullptr);
    CHECK(late_qp == nullptr);
    // The child's close completes the PD's.
    CHECK(close_child() == STATUS_SUCCESS);
    if (close_status == STATUS_PENDING) {
        REQUIRE(closed.wait());
        CHECK(closed.calls() == 1);
    }
}

// ---- NdkGetPrivilegedMemoryRegionToken

TEST_CASE("NdkGetPrivilegedMemoryRegionToken: one token per PD, the same on every call",
          "[provider][pd][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    const UINT32 token = privileged_token(s.pd);
    CHECK(token != 0);
    CHECK(token != 0xdeadbeef);
    CHECK(privileged_token(s.pd) == token);
    CHECK(privileged_token(s.pd) == token);
    // Not the token of an MR of the PD.
    CHECK(token != s.ltoken);
    CHECK(token != s.rtoken);
    // Another PD, on the same adapter, has its own.
    NDK_PD *other = nullptr;
    REQUIRE(create_pd(s.adapter, &other) == STATUS_SUCCESS);
    const UINT32 other_token = privileged_token(other);
    CHECK(other_token != 0);
    CHECK(other_token != token);
    CHECK(privileged_token(other) == other_token);
    CHECK(close_sync(other) == STATUS_SUCCESS);
    // The slot returns nothing: a NULL out pointer is ignored, a NULL PD answers token 0
    // (which no access accepts), and neither disturbs the PD's token.
    s.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(s.pd, nullptr);
    UINT32 none = 0xdeadbeef;
    s.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(nullptr, &none);
    CHECK(none == 0);
    CHECK(privileged_token(s.pd) == token);
}

TEST_CASE("The privileged token serves LAM addresses on QPs of its own PD only",
          "[provider][pd][lam][device]") {
    Wsk wsk;
    Side client(wsk), server(wsk);
    connect(client, server);
    // The client's buffer, mapped by NdkBuildLAM (size query first).
    NDK_ADAPTER *a = client.adapter;
    MDL mdl = make_mdl(client.buffer.data(), PAGE_SIZE);
    ULONG size = 0, fbo = 0;
    REQUIRE(a->Dispatch->NdkBuildLAM(a, &mdl, PAGE_SIZE, Done::request, nullptr, nullptr, &size,
                                     &fbo) == STATUS_BUFFER_TOO_SMALL);
    std::vector<unsigned char> storage(size);
    auto *lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING *>(storage.data());
    Done built;
    REQUIRE(finish(a->Dispatch->NdkBuildLAM(a, &mdl, PAGE_SIZE, Done::request, &built, lam, &size,
                                            &fbo),
                   built) == STATUS_SUCCESS);
    NDK_SGE tx{};
    tx.VirtualAddress =
        reinterpret_cast<void *>(static_cast<uintptr_t>(lam->AdapterPageArray[0].QuadPart) + fbo);
    tx.Length = 10;
    std::memcpy(client.buffer.data(), "privileged", 10);

    // The client PD's own token: the send reads the bytes through the logical address.
    tx.MemoryRegionToken = privileged_token(client.pd);
    NDK_SGE rx = server.sge(0, 64);
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    REQUIRE(client.qp->Dispatch->NdkSend(client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    const NDK_RESULT_EX received = server.poll_one();
    CHECK(received.Status == STATUS_SUCCESS);
    CHECK(received.BytesTransferred == 10);
    CHECK(std::memcmp(server.buffer.data(), "privileged", 10) == 0);

    // The token of another PD on the same adapter maps the same logical space but does
    // not belong to the QP's PD: a local protection error.
    NDK_PD *other = nullptr;
    REQUIRE(create_pd(a, &other) == STATUS_SUCCESS);
    tx.MemoryRegionToken = privileged_token(other);
    CHECK(tx.MemoryRegionToken != privileged_token(client.pd));
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    REQUIRE(client.qp->Dispatch->NdkSend(client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_ACCESS_VIOLATION);
    a->Dispatch->NdkReleaseLAM(a, lam);
    CHECK(close_sync(other) == STATUS_SUCCESS);
}
