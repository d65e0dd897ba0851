// Memory regions beyond NdkRegisterMr: adapter logical address mappings (NdkBuildLAM /
// NdkReleaseLAM), fast-register MRs (NdkInitializeFastRegisterMr + NdkFastRegister),
// local and remote invalidation (NdkInvalidate, NdkSendAndInvalidate, READ with local
// invalidate), the PD's privileged token, and the NDK_MR_FLAG_* rights enforced on the
// data path. Edge cases and inline failures first, then the data path through two
// connected adapters. (NdkRegisterMr's argument checks are in adapter_test.cpp.)
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ndk_test.hpp"

using namespace ndktest;

namespace {

// Page-aligned memory, as a driver gets from ExAllocatePool2 for >= PAGE_SIZE.
struct Pages {
    explicit Pages(size_t pages)
        : bytes(pages * PAGE_SIZE),
          data(static_cast<unsigned char *>(std::aligned_alloc(PAGE_SIZE, bytes))) {
        std::memset(data, 0, bytes);
    }
    ~Pages() { std::free(data); }
    Pages(const Pages &) = delete;
    Pages &operator=(const Pages &) = delete;
    size_t bytes;
    unsigned char *data;
};

// NdkBuildLAM through the size query, as consumers call it; releases on destruction.
struct Lam {
    NDK_ADAPTER *adapter;
    std::vector<unsigned char> storage;
    ULONG fbo = 0;
    NTSTATUS status = STATUS_PENDING;

    Lam(NDK_ADAPTER *a, void *va, size_t length) : adapter(a) {
        MDL mdl = make_mdl(va, length);
        ULONG size = 0;
        status =
            a->Dispatch->NdkBuildLAM(a, &mdl, length, Done::request, nullptr, nullptr, &size, &fbo);
        if (status != STATUS_BUFFER_TOO_SMALL) return;
        storage.resize(size);
        status =
            a->Dispatch->NdkBuildLAM(a, &mdl, length, Done::request, nullptr, lam(), &size, &fbo);
        REQUIRE(size == storage.size());
    }
    ~Lam() {
        if (status == STATUS_SUCCESS) adapter->Dispatch->NdkReleaseLAM(adapter, lam());
    }
    NDK_LOGICAL_ADDRESS_MAPPING *lam() {
        return reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING *>(storage.data());
    }
    ULONG pages() { return lam()->AdapterPageCount; }
    const NDK_LOGICAL_ADDRESS *page_array() { return lam()->AdapterPageArray; }
};

// A fast-register MR, initialised for `pages` pages.
NDK_MR *fast_register_mr(Side &s, ULONG pages, BOOLEAN remote) {
    NDK_MR *mr = nullptr;
    REQUIRE(s.pd->Dispatch->NdkCreateMr(s.pd, TRUE, Done::create, nullptr, &mr) == STATUS_SUCCESS);
    Done done;
    REQUIRE(
        finish(mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, remote, Done::request, &done),
               done) == STATUS_SUCCESS);
    return mr;
}

struct Closer {
    NDK_MR *mr;
    ~Closer() {
        if (mr != nullptr) CHECK(close_sync(mr) == STATUS_SUCCESS);
    }
};

NTSTATUS fast_register(Side &s, void *ctx, NDK_MR *mr, Lam &lam, size_t offset, size_t length,
                       void *base, ULONG flags) {
    return s.qp->Dispatch->NdkFastRegister(s.qp, ctx, mr, lam.pages(), lam.page_array(),
                                           lam.fbo + static_cast<ULONG>(offset), length, base,
                                           flags);
}

constexpr ULONG kRemote = NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE;

}  // namespace

// ---- NdkBuildLAM / NdkReleaseLAM

TEST_CASE("NdkBuildLAM: arguments, size protocol and the mapping it returns",
          "[provider][lam][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_ADAPTER *a = s.adapter;
    Pages memory(3);
    unsigned char *va = memory.data + 100;  // 2 pages + a few bytes: spans 3 pages
    const size_t length = 2 * PAGE_SIZE;
    MDL mdl = make_mdl(va, length);
    ULONG size = 0, fbo = 0;
    auto build = [&](MDL *m, SIZE_T n, NDK_LOGICAL_ADDRESS_MAPPING *out, ULONG *sz, ULONG *f) {
        return a->Dispatch->NdkBuildLAM(a, m, n, Done::request, nullptr, out, sz, f);
    };
    CHECK(build(nullptr, length, nullptr, &size, &fbo) == STATUS_INVALID_PARAMETER);
    CHECK(build(&mdl, 0, nullptr, &size, &fbo) == STATUS_INVALID_PARAMETER);
    CHECK(build(&mdl, length, nullptr, nullptr, &fbo) == STATUS_INVALID_PARAMETER);
    CHECK(build(&mdl, length, nullptr, &size, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(build(&mdl, length + 1, nullptr, &size, &fbo) == STATUS_INVALID_PARAMETER);  // > MDL
    // Size query: no buffer, or one byte short.
    const ULONG needed = FIELD_OFFSET(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) +
                         3 * sizeof(NDK_LOGICAL_ADDRESS);
    size = 0;
    CHECK(build(&mdl, length, nullptr, &size, &fbo) == STATUS_BUFFER_TOO_SMALL);
    CHECK(size == needed);
    std::vector<unsigned char> storage(needed);
    auto *lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING *>(storage.data());
    size = needed - 1;
    CHECK(build(&mdl, length, lam, &size, &fbo) == STATUS_BUFFER_TOO_SMALL);
    CHECK(size == needed);
    // Success: three page addresses, page aligned, and the first byte's offset.
    size = needed;
    REQUIRE(build(&mdl, length, lam, &size, &fbo) == STATUS_SUCCESS);
    CHECK(size == needed);
    CHECK(fbo == 100);
    REQUIRE(lam->AdapterPageCount == 3);
    for (ULONG i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(lam->AdapterPageArray[i].QuadPart % PAGE_SIZE == 0);
        CHECK(lam->AdapterPageArray[i].QuadPart != 0);
    }
    a->Dispatch->NdkReleaseLAM(a, lam);
}

TEST_CASE("NdkBuildLAM refuses an MDL chain that is not virtually contiguous",
          "[provider][lam][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    Pages memory(3);
    MDL first = make_mdl(memory.data, PAGE_SIZE);
    MDL third = make_mdl(memory.data + 2 * PAGE_SIZE, PAGE_SIZE);
    first.Next = &third;
    ULONG size = 4096, fbo = 0;
    std::vector<unsigned char> storage(size);
    CHECK(s.adapter->Dispatch->NdkBuildLAM(
              s.adapter, &first, 2 * PAGE_SIZE, Done::request, nullptr,
              reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING *>(storage.data()), &size,
              &fbo) == STATUS_INVALID_PARAMETER);
}

// ---- NdkInitializeFastRegisterMr

TEST_CASE("NdkInitializeFastRegisterMr: only on fast-register MRs, within FRMRPageCount",
          "[provider][mr][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    NDK_MR *fr = nullptr;
    REQUIRE(s.pd->Dispatch->NdkCreateMr(s.pd, TRUE, Done::create, nullptr, &fr) == STATUS_SUCCESS);
    Closer close_fr{fr};
    auto init = [](NDK_MR *mr, ULONG pages) {
        Done done;
        return finish(
            mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, TRUE, Done::request, &done), done);
    };
    CHECK(fr->Dispatch->NdkInitializeFastRegisterMr(fr, 4, TRUE, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(init(fr, 0) == STATUS_INVALID_PARAMETER);
    CHECK(init(fr, s.info.FRMRPageCount + 1) == STATUS_IMPLEMENTATION_LIMIT);
    CHECK(s.info.FRMRPageCount >= 16);                      // ndkpi-api.md 7.13
    CHECK(init(s.mr, 4) == STATUS_INVALID_DEVICE_REQUEST);  // a RegisterMr MR
    CHECK(init(fr, s.info.FRMRPageCount) == STATUS_SUCCESS);
    CHECK(init(fr, 4) == STATUS_SUCCESS);  // again, while nothing is registered
    // A fast-register MR is never registered with NdkRegisterMr.
    Pages memory(1);
    MDL mdl = make_mdl(memory.data, PAGE_SIZE);
    CHECK(fr->Dispatch->NdkRegisterMr(fr, &mdl, PAGE_SIZE, 0, Done::request, nullptr) ==
          STATUS_INVALID_DEVICE_REQUEST);
}

// ---- NdkFastRegister: inline failures

TEST_CASE("NdkFastRegister: inline failures post nothing", "[provider][qp][mr][device]") {
    Pair p;
    Side &s = p.server;
    Pages memory(4);
    Lam lam(s.adapter, memory.data, 4 * PAGE_SIZE);
    REQUIRE(lam.status == STATUS_SUCCESS);
    NDK_MR *local_only = fast_register_mr(s, 4, FALSE);
    Closer c1{local_only};
    NDK_MR *small = fast_register_mr(s, 2, TRUE);
    Closer c2{small};
    NDK_MR *uninitialised = nullptr;
    REQUIRE(s.pd->Dispatch->NdkCreateMr(s.pd, TRUE, Done::create, nullptr, &uninitialised) ==
            STATUS_SUCCESS);
    Closer c3{uninitialised};
    void *base = memory.data;
    const SIZE_T len = 4 * PAGE_SIZE;
    // Unknown flag, no pages, FBO past a page.
    CHECK(fast_register(s, nullptr, local_only, lam, 0, len, base, NDK_OP_FLAG_INLINE) ==
          STATUS_INVALID_PARAMETER);
    CHECK(s.qp->Dispatch->NdkFastRegister(s.qp, nullptr, local_only, 0, lam.page_array(), 0, len,
                                          base, 0) == STATUS_INVALID_PARAMETER);
    CHECK(s.qp->Dispatch->NdkFastRegister(s.qp, nullptr, local_only, 4, nullptr, 0, len, base, 0) ==
          STATUS_INVALID_PARAMETER);
    CHECK(s.qp->Dispatch->NdkFastRegister(s.qp, nullptr, local_only, 4, lam.page_array(), PAGE_SIZE,
                                          16, base, 0) == STATUS_INVALID_PARAMETER);
    // The MR decides: not a fast-register MR, not initialised, too many pages, and
    // remote rights on an MR initialised without RemoteAccess.
    CHECK(fast_register(s, nullptr, s.mr, lam, 0, len, base, 0) == STATUS_INVALID_DEVICE_REQUEST);
    CHECK(fast_register(s, nullptr, uninitialised, lam, 0, len, base, 0) ==
          STATUS_INVALID_DEVICE_STATE);
    CHECK(fast_register(s, nullptr, small, lam, 0, len, base, 0) == STATUS_INVALID_PARAMETER);
    CHECK(fast_register(s, nullptr, local_only, lam, 0, len, base, NDK_OP_FLAG_ALLOW_REMOTE_READ) ==
          STATUS_ACCESS_VIOLATION);
    CHECK(fast_register(s, nullptr, local_only, lam, 0, len, base,
                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE) == STATUS_ACCESS_VIOLATION);
    // None of them produced a completion: the next request's is the first.
    REQUIRE(fast_register(s, reinterpret_cast<void *>(7), local_only, lam, 0, len, base,
                          NDK_OP_FLAG_ALLOW_LOCAL_WRITE) == STATUS_SUCCESS);
    const NDK_RESULT_EX r = s.poll_one();
    CHECK(r.RequestContext == reinterpret_cast<void *>(7));
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.Type == NdkOperationTypeFastRegister);
}

TEST_CASE("NdkFastRegister, NdkInvalidate and NdkSendAndInvalidate on an unconnected QP",
          "[provider][qp][mr][device]") {
    Wsk wsk;
    Side s(wsk, 4096);
    Pages memory(1);
    Lam lam(s.adapter, memory.data, PAGE_SIZE);
    REQUIRE(lam.status == STATUS_SUCCESS);
    NDK_MR *fr = fast_register_mr(s, 1, TRUE);
    Closer c{fr};
    CHECK(fast_register(s, nullptr, fr, lam, 0, PAGE_SIZE, memory.data, 0) ==
          STATUS_CONNECTION_INVALID);
    CHECK(s.qp->Dispatch->NdkInvalidate(s.qp, nullptr, &fr->Header, 0) ==
          STATUS_CONNECTION_INVALID);
    NDK_SGE sge = s.sge(0, 16);
    CHECK(s.qp->Dispatch->NdkSendAndInvalidate(s.qp, nullptr, &sge, 1, 0, 0x1234) ==
          STATUS_CONNECTION_INVALID);
}

// ---- the data path

TEST_CASE("Fast-registered memory serves remote writes until the peer's send invalidates it",
          "[provider][qp][mr][invalidate][device]") {
    Pair p;
    Side &server = p.server;
    Side &client = p.client;
    Pages memory(3);
    // The registration starts 512 bytes into the first page: FBO 512.
    unsigned char *start = memory.data + 512;
    const size_t length = 2 * PAGE_SIZE;
    Lam lam(server.adapter, start, length);
    REQUIRE(lam.status == STATUS_SUCCESS);
    REQUIRE(lam.fbo == 512);
    REQUIRE(lam.pages() == 3);
    NDK_MR *fr = fast_register_mr(server, 3, TRUE);
    Closer c{fr};
    // Drivers read the token once, right after NdkInitializeFastRegisterMr, and reuse
    // it for every registration of the MR: it must not change.
    const UINT32 token = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
    REQUIRE(fast_register(server, nullptr, fr, lam, 0, length, start,
                          kRemote | NDK_OP_FLAG_ALLOW_LOCAL_WRITE) == STATUS_SUCCESS);
    // The token is valid as soon as the call returned.
    CHECK(fr->Dispatch->NdkGetRemoteTokenFromMr(fr) == token);
    CHECK(fr->Dispatch->NdkGetLocalTokenFromMr(fr) == token);
    NDK_RESULT_EX r = server.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    CHECK(r.Type == NdkOperationTypeFastRegister);

    // The client writes across the page boundary of the fast-registered range.
    for (size_t i = 0; i < 5000; ++i)
        client.buffer[i] = static_cast<unsigned char>(i * 13);
    NDK_SGE w = client.sge(0, 5000);
    const auto remote = reinterpret_cast<UINT64>(start) + 100;
    REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, remote, token, 0) ==
            STATUS_SUCCESS);
    r = client.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    CHECK(std::memcmp(start + 100, client.buffer.data(), 5000) == 0);

    // Send-and-invalidate: the server's receive reports the token it invalidated.
    NDK_SGE rx = server.sge(0, 64);
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, reinterpret_cast<void *>(9), &rx, 1) ==
            STATUS_SUCCESS);
    NDK_SGE tx = client.sge(0, 8);
    REQUIRE(client.qp->Dispatch->NdkSendAndInvalidate(client.qp, nullptr, &tx, 1, 0, token) ==
            STATUS_SUCCESS);
    r = client.poll_one();
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.Type == NdkOperationTypeSend);  // the sender sees a send
    r = server.poll_one();
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.RequestContext == reinterpret_cast<void *>(9));
    CHECK(r.Type == NdkOperationTypeReceiveAndInvalidate);
    CHECK(r.TypeSpecificCompletionOutput == token);
    CHECK(r.BytesTransferred == 8);

    // Register again, several times: the cached token serves every registration.
    for (int cycle = 0; cycle < 3; ++cycle) {
        REQUIRE(fast_register(server, nullptr, fr, lam, 0, length, start, kRemote) ==
                STATUS_SUCCESS);
        CHECK(fr->Dispatch->NdkGetRemoteTokenFromMr(fr) == token);
        r = server.poll_one();
        REQUIRE(r.Status == STATUS_SUCCESS);
        REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, remote, token, 0) ==
                STATUS_SUCCESS);
        CHECK(client.poll_one().Status == STATUS_SUCCESS);
        REQUIRE(server.qp->Dispatch->NdkInvalidate(server.qp, nullptr, &fr->Header, 0) == STATUS_SUCCESS);
        REQUIRE(server.poll_one().Status == STATUS_SUCCESS);
    }
    // Between registrations the token fails: the MR is not valid.
    REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, remote, token, 0) ==
            STATUS_SUCCESS);
    r = client.poll_one();
    CHECK(r.Status == STATUS_REMOTE_RESOURCES);  // remote access error
}

// Run by its own CTest entry with SOFTNDK_CONFIG selecting `fast_register_keys = rotate`
// (hidden from the default run: the quirk is set per adapter, at start-up).
TEST_CASE("With the rotate quirk every NdkFastRegister hands out a new token",
          "[.rotate-keys][provider][mr]") {
    Pair p;
    Side &server = p.server;
    Side &client = p.client;
    Pages memory(1);
    Lam lam(server.adapter, memory.data, PAGE_SIZE);
    REQUIRE(lam.status == STATUS_SUCCESS);
    NDK_MR *fr = fast_register_mr(server, 1, TRUE);
    Closer c{fr};
    const UINT32 before = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
    REQUIRE(fast_register(server, nullptr, fr, lam, 0, PAGE_SIZE, memory.data, kRemote) ==
            STATUS_SUCCESS);
    const UINT32 first = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
    CHECK(first != before);
    CHECK((first >> 8) == (before >> 8));  // same MPT entry, new variant byte
    REQUIRE(server.poll_one().Status == STATUS_SUCCESS);
    REQUIRE(server.qp->Dispatch->NdkInvalidate(server.qp, nullptr, &fr->Header, 0) == STATUS_SUCCESS);
    REQUIRE(server.poll_one().Status == STATUS_SUCCESS);
    REQUIRE(fast_register(server, nullptr, fr, lam, 0, PAGE_SIZE, memory.data, kRemote) ==
            STATUS_SUCCESS);
    const UINT32 second = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
    CHECK(second != first);
    REQUIRE(server.poll_one().Status == STATUS_SUCCESS);
    NDK_SGE w = client.sge(0, 64);
    const auto remote = reinterpret_cast<UINT64>(memory.data);
    REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, remote, second, 0) ==
            STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    // The token of the previous registration is stale: remote access error.
    REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, nullptr, &w, 1, remote, first, 0) ==
            STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_REMOTE_RESOURCES);
}

TEST_CASE("ReceiveAndInvalidate looks like a plain receive through NdkGetCqResults",
          "[provider][cq][invalidate][device]") {
    Pair p;
    Pages memory(1);
    Lam lam(p.server.adapter, memory.data, PAGE_SIZE);
    REQUIRE(lam.status == STATUS_SUCCESS);
    NDK_MR *fr = fast_register_mr(p.server, 1, TRUE);
    Closer c{fr};
    REQUIRE(fast_register(p.server, nullptr, fr, lam, 0, PAGE_SIZE, memory.data, kRemote) ==
            STATUS_SUCCESS);
    // The peer may use the token once the registration completed (in real use it learns
    // the token from a later send on this QP, which the registration precedes).
    REQUIRE(p.server.poll_one().Status == STATUS_SUCCESS);
    const UINT32 token = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
    NDK_SGE rx = p.server.sge(0, 64);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    NDK_SGE tx = p.client.sge(0, 4);
    REQUIRE(p.client.qp->Dispatch->NdkSendAndInvalidate(
                p.client.qp, nullptr, &tx, 1, NDK_OP_FLAG_SILENT_SUCCESS, token) == STATUS_SUCCESS);
    NDK_RESULT r{};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    ULONG n = 0;
    while (n == 0 && std::chrono::steady_clock::now() < deadline)
        n = p.server.cq->Dispatch->NdkGetCqResults(p.server.cq, &r, 1);
    REQUIRE(n == 1);
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.BytesTransferred == 4);
    // The token is dead all the same: a local invalidate of it now fails.
    REQUIRE(p.server.qp->Dispatch->NdkInvalidate(p.server.qp, nullptr, &fr->Header, 0) ==
            STATUS_SUCCESS);
    CHECK(p.server.poll_one().Status != STATUS_SUCCESS);
}

TEST_CASE("NdkInvalidate retires a fast-registered token: RegisterMr MRs are refused",
          "[provider][qp][mr][invalidate][device]") {
    Pair p;
    Pages memory(1);
    Lam lam(p.server.adapter, memory.data, PAGE_SIZE);
    REQUIRE(lam.status == STATUS_SUCCESS);
    NDK_MR *fr = fast_register_mr(p.server, 1, TRUE);
    Closer c{fr};
    CHECK(p.server.qp->Dispatch->NdkInvalidate(p.server.qp, nullptr, &p.server.mr->Header, 0) ==
          STATUS_INVALID_PARAMETER);
    CHECK(p.server.qp->Dispatch->NdkInvalidate(p.server.qp, nullptr, &fr->Header,
                                               NDK_OP_FLAG_INLINE) == STATUS_INVALID_PARAMETER);
    CHECK(p.server.qp->Dispatch->NdkInvalidate(p.server.qp, nullptr, &p.server.cq->Header, 0) ==
          STATUS_INVALID_PARAMETER);
    REQUIRE(fast_register(p.server, nullptr, fr, lam, 0, PAGE_SIZE, memory.data, kRemote) ==
            STATUS_SUCCESS);
    const UINT32 token = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
    REQUIRE(p.server.qp->Dispatch->NdkInvalidate(p.server.qp, reinterpret_cast<void *>(3),
                                                 &fr->Header, 0) == STATUS_SUCCESS);
    NDK_RESULT_EX r = p.server.poll_one();
    CHECK(r.Type == NdkOperationTypeFastRegister);
    r = p.server.poll_one();
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.Type == NdkOperationTypeInvalidate);
    CHECK(r.RequestContext == reinterpret_cast<void *>(3));
    NDK_SGE w = p.client.sge(0, 16);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1,
                                            reinterpret_cast<UINT64>(memory.data), token,
                                            0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);
}

TEST_CASE("NdkFastRegister of pages no LAM maps completes with STATUS_ACCESS_VIOLATION",
          "[provider][qp][mr][lam][device]") {
    Pair p;
    Pages memory(1);
    NDK_MR *fr = fast_register_mr(p.server, 1, TRUE);
    Closer c{fr};
    NDK_LOGICAL_ADDRESS page{};
    page.QuadPart = static_cast<LONGLONG>(reinterpret_cast<uintptr_t>(memory.data));
    REQUIRE(p.server.qp->Dispatch->NdkFastRegister(p.server.qp, nullptr, fr, 1, &page, 0, PAGE_SIZE,
                                                   memory.data, 0) == STATUS_SUCCESS);
    const NDK_RESULT_EX r = p.server.poll_one();
    CHECK(r.Status == STATUS_ACCESS_VIOLATION);
    CHECK(r.Type == NdkOperationTypeFastRegister);
    CHECK(r.ProviderErrorCode != 0);
}

TEST_CASE("A released LAM cannot be fast-registered again", "[provider][lam][device]") {
    Pair p;
    Pages memory(1);
    NDK_LOGICAL_ADDRESS page{};
    {
        Lam lam(p.server.adapter, memory.data, PAGE_SIZE);
        REQUIRE(lam.status == STATUS_SUCCESS);
        page = lam.page_array()[0];
    }
    NDK_MR *fr = fast_register_mr(p.server, 1, TRUE);
    Closer c{fr};
    REQUIRE(p.server.qp->Dispatch->NdkFastRegister(p.server.qp, nullptr, fr, 1, &page, 0, PAGE_SIZE,
                                                   memory.data, 0) == STATUS_SUCCESS);
    CHECK(p.server.poll_one().Status == STATUS_ACCESS_VIOLATION);
}

TEST_CASE("READ with RDMA_READ_LOCAL_INVALIDATE retires the fast-registered sink",
          "[provider][qp][mr][invalidate][device]") {
    Pair p;
    REQUIRE((p.client.info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED) !=
            0);
    Pages sink(1);
    Lam lam(p.client.adapter, sink.data, PAGE_SIZE);
    REQUIRE(lam.status == STATUS_SUCCESS);
    NDK_MR *fr = fast_register_mr(p.client, 1, FALSE);
    Closer c{fr};
    REQUIRE(fast_register(p.client, nullptr, fr, lam, 0, PAGE_SIZE, sink.data,
                          NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK |
                              NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS);
    const UINT32 token = fr->Dispatch->NdkGetLocalTokenFromMr(fr);
    p.server.buffer[10] = 0x5a;
    NDK_SGE sge{};
    sge.VirtualAddress = sink.data;
    sge.Length = 64;
    sge.MemoryRegionToken = token;
    REQUIRE(p.client.qp->Dispatch->NdkRead(
                p.client.qp, nullptr, &sge, 1, p.server.remote_address(0), p.server.rtoken,
                NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) == STATUS_SUCCESS);
    NDK_RESULT_EX r = p.client.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    CHECK(sink.data[10] == 0x5a);
    // The sink's token is gone: reading into it again is a local protection error.
    REQUIRE(p.client.qp->Dispatch->NdkRead(p.client.qp, nullptr, &sge, 1,
                                           p.server.remote_address(0), p.server.rtoken,
                                           0) == STATUS_SUCCESS);
    r = p.client.poll_one();
    CHECK(r.Status == STATUS_ACCESS_VIOLATION);
}

// ---- the privileged token

TEST_CASE("The privileged token addresses LAM pages locally, one token per PD",
          "[provider][pd][lam][device]") {
    Pair p;
    UINT32 privileged = 0, again = 0;
    p.server.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(p.server.pd, &privileged);
    p.server.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(p.server.pd, &again);
    CHECK(privileged != 0);
    CHECK(again == privileged);
    CHECK(privileged != p.server.ltoken);
    Pages memory(2);
    Lam lam(p.server.adapter, memory.data + 40, PAGE_SIZE);
    REQUIRE(lam.status == STATUS_SUCCESS);
    REQUIRE(lam.pages() == 2);
    // A receive into the LAM through its logical address: page 0 + FBO.
    NDK_SGE rx{};
    rx.VirtualAddress =
        reinterpret_cast<void *>(static_cast<uintptr_t>(lam.page_array()[0].QuadPart) + lam.fbo);
    rx.Length = 100;
    rx.MemoryRegionToken = privileged;
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    std::memcpy(p.client.buffer.data(), "privileged", 10);
    NDK_SGE tx = p.client.sge(0, 10);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    NDK_RESULT_EX r = p.server.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    CHECK(std::memcmp(memory.data + 40, "privileged", 10) == 0);
    // Never remote: a peer's write with the privileged token fails.
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &tx, 1,
                                            static_cast<UINT64>(lam.page_array()[0].QuadPart),
                                            privileged, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);
}

TEST_CASE("Sends and receives of several privileged-token SGEs over NdkBuildLAM pages",
          "[provider][pd][lam][device]") {
    // How drivers describe buffers: NdkBuildLAM pages addressed with the PD's privileged
    // token, one SGE per page (a header page and payload pages), on both sides. The
    // token must never equal the receive-list end marker, or a receive would stop at
    // its first SGE and every longer message would overflow.
    // The receiver is the client: in a fresh device its PD asked for the first key, the
    // one that used to be 0x100.
    Pair p;
    Side &sender = p.server;
    Side &receiver = p.client;
    CHECK(receiver.privileged != 0x100);
    constexpr ULONG kPagesPerSide = 4;
    Pages tx_memory(kPagesPerSide), rx_memory(kPagesPerSide);
    Lam tx_lam(sender.adapter, tx_memory.data, kPagesPerSide * PAGE_SIZE);
    Lam rx_lam(receiver.adapter, rx_memory.data, kPagesPerSide * PAGE_SIZE);
    REQUIRE(tx_lam.status == STATUS_SUCCESS);
    REQUIRE(rx_lam.status == STATUS_SUCCESS);
    const auto sges = [](Lam &lam, UINT32 token, ULONG count, ULONG bytes_each) {
        std::vector<NDK_SGE> list(count);
        for (ULONG i = 0; i < count; ++i) {
            list[i].VirtualAddress = reinterpret_cast<void *>(
                static_cast<uintptr_t>(lam.page_array()[i].QuadPart));
            list[i].Length = bytes_each;
            list[i].MemoryRegionToken = token;
        }
        return list;
    };
    for (ULONG i = 0; i < kPagesPerSide * PAGE_SIZE; ++i)
        tx_memory.data[i] = static_cast<unsigned char>(i * 7 + 1);
    // Two messages: one that fills every receive SGE, and one that spans the first two.
    auto rx = sges(rx_lam, receiver.privileged, kPagesPerSide, PAGE_SIZE);
    for (int m = 0; m < 2; ++m) {
        REQUIRE(receiver.qp->Dispatch->NdkReceive(receiver.qp, nullptr, rx.data(),
                                                  kPagesPerSide) == STATUS_SUCCESS);
    }
    auto full = sges(tx_lam, sender.privileged, kPagesPerSide, PAGE_SIZE);
    REQUIRE(sender.qp->Dispatch->NdkSend(sender.qp, nullptr, full.data(), kPagesPerSide,
                                           0) == STATUS_SUCCESS);
    CHECK(sender.poll_one().Status == STATUS_SUCCESS);
    NDK_RESULT_EX r = receiver.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    CHECK(r.BytesTransferred == kPagesPerSide * PAGE_SIZE);
    CHECK(std::memcmp(rx_memory.data, tx_memory.data, kPagesPerSide * PAGE_SIZE) == 0);

    std::memset(rx_memory.data, 0, kPagesPerSide * PAGE_SIZE);
    auto partial = sges(tx_lam, sender.privileged, 3, 1000);  // 3000 bytes into pages 0 and 1
    REQUIRE(sender.qp->Dispatch->NdkSend(sender.qp, nullptr, partial.data(), 3, 0) ==
            STATUS_SUCCESS);
    CHECK(sender.poll_one().Status == STATUS_SUCCESS);
    r = receiver.poll_one();
    REQUIRE(r.Status == STATUS_SUCCESS);
    CHECK(r.BytesTransferred == 3000);
    for (ULONG i = 0; i < 3; ++i) {
        CHECK(std::memcmp(rx_memory.data + i * 1000, tx_memory.data + i * PAGE_SIZE, 1000) == 0);
    }
}

TEST_CASE("The privileged token with an address no LAM maps is a local protection error",
          "[provider][pd][lam][device]") {
    Pair p;
    UINT32 privileged = 0;
    p.client.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(p.client.pd, &privileged);
    Pages memory(1);
    NDK_SGE tx{};
    tx.VirtualAddress = memory.data;
    tx.Length = 8;
    tx.MemoryRegionToken = privileged;
    NDK_SGE rx = p.server.sge(0, 64);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_ACCESS_VIOLATION);
}

// ---- NDK_MR_FLAG_* enforced on the data path

namespace {

// A second MR of `s`'s PD over s.buffer[offset, offset + length) with `flags`.
struct RegisteredMr {
    NDK_MR *mr = nullptr;
    RegisteredMr(Side &s, size_t offset, size_t length, ULONG flags) {
        REQUIRE(s.pd->Dispatch->NdkCreateMr(s.pd, FALSE, Done::create, nullptr, &mr) ==
                STATUS_SUCCESS);
        MDL mdl = make_mdl(s.buffer.data() + offset, length);
        Done done;
        REQUIRE(finish(mr->Dispatch->NdkRegisterMr(mr, &mdl, length, flags, Done::request, &done),
                       done) == STATUS_SUCCESS);
    }
    ~RegisteredMr() { CHECK(close_sync(mr) == STATUS_SUCCESS); }
    UINT32 local() { return mr->Dispatch->NdkGetLocalTokenFromMr(mr); }
    UINT32 remote() { return mr->Dispatch->NdkGetRemoteTokenFromMr(mr); }
};

NDK_SGE sge_of(void *va, ULONG length, UINT32 token) {
    NDK_SGE s{};
    s.VirtualAddress = va;
    s.Length = length;
    s.MemoryRegionToken = token;
    return s;
}

NTSTATUS remote_op(Pair &p, bool write, size_t server_offset, UINT32 token) {
    NDK_SGE s = p.client.sge(0, 16);
    const NTSTATUS posted =
        write ? p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &s, 1,
                                                p.server.remote_address(server_offset), token, 0)
              : p.client.qp->Dispatch->NdkRead(p.client.qp, nullptr, &s, 1,
                                               p.server.remote_address(server_offset), token, 0);
    REQUIRE(posted == STATUS_SUCCESS);
    return p.client.poll_one().Status;
}

}  // namespace

TEST_CASE("NDK_MR_FLAG_* are enforced: remote rights as registered, remote write implies local",
          "[provider][mr][device]") {
    Pair p;
    SECTION("local read only: a receive into it is a local protection error") {
        RegisteredMr ro(p.server, 0, 4096, NDK_MR_FLAG_ALLOW_LOCAL_READ);
        NDK_SGE rx = sge_of(p.server.buffer.data(), 64, ro.local());
        REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
        NDK_SGE tx = p.client.sge(0, 8);
        REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
        CHECK(p.server.poll_one().Status == STATUS_ACCESS_VIOLATION);
    }
    SECTION("local read only: no remote access at all") {
        RegisteredMr ro(p.server, 0, 4096, NDK_MR_FLAG_ALLOW_LOCAL_READ);
        CHECK(remote_op(p, false, 0, ro.remote()) == STATUS_REMOTE_RESOURCES);
    }
    SECTION("remote read: reads succeed, writes are a remote access error") {
        RegisteredMr rr(p.server, 4096, 4096, NDK_MR_FLAG_ALLOW_REMOTE_READ);
        std::memcpy(p.server.buffer.data() + 4096, "readable remotely", 16);
        CHECK(remote_op(p, false, 4096, rr.remote()) == STATUS_SUCCESS);
        CHECK(std::memcmp(p.client.buffer.data(), "readable remotely", 16) == 0);
        CHECK(remote_op(p, true, 4096, rr.remote()) == STATUS_REMOTE_RESOURCES);
    }
    SECTION("remote write (0x5 carries the local-write bit): remote writes and local receives") {
        static_assert((NDK_MR_FLAG_ALLOW_REMOTE_WRITE & NDK_MR_FLAG_ALLOW_LOCAL_WRITE) != 0);
        RegisteredMr rw(p.server, 8192, 4096, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        std::memcpy(p.client.buffer.data(), "written remotely", 16);
        CHECK(remote_op(p, true, 8192, rw.remote()) == STATUS_SUCCESS);
        CHECK(std::memcmp(p.server.buffer.data() + 8192, "written remotely", 16) == 0);
        NDK_SGE rx = sge_of(p.server.buffer.data() + 8192 + 64, 64, rw.local());
        REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
        NDK_SGE tx = p.client.sge(0, 8);
        REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
        CHECK(p.server.poll_one().Status == STATUS_SUCCESS);
        CHECK(p.client.poll_one().Status == STATUS_SUCCESS);  // the send
        // Remote read was not granted.
        CHECK(remote_op(p, false, 8192, rw.remote()) == STATUS_REMOTE_RESOURCES);
    }
}
