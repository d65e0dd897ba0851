// The adapter and the objects it hands out, through the public tables: version
// negotiation, NdkQueryAdapterInfo, object headers, filled dispatch slots, create argument
// checks (CQ, QP), NdkRegisterMr, connector argument checks, posting on an unconnected QP,
// close ordering and close arguments. Needs the device. PDs are tested in pd_test.cpp,
// listeners in listener_test.cpp, shared endpoints in shared_endpoint_test.cpp.
#include <functional>

#include "ndk_test.hpp"

using namespace ndktest;

namespace {

struct Objects {
    Wsk wsk;
    NDK_ADAPTER *adapter = nullptr;
    NDK_ADAPTER_INFO info{};
    NDK_PD *pd = nullptr;
    NDK_CQ *cq = nullptr;
    std::vector<std::function<void()>> closers;  // objects a test created, closed in reverse
    static void notify(PVOID, NTSTATUS) {}
    template <class T>
    T *track(T *object) {
        closers.push_back([object] { CHECK(close_sync(object) == STATUS_SUCCESS); });
        return object;
    }
    Objects() {
        REQUIRE(wsk.open(&adapter) == STATUS_SUCCESS);
        info = query_info(adapter);
        REQUIRE(adapter->Dispatch->NdkCreatePd(adapter, Done::create, nullptr, &pd) ==
                STATUS_SUCCESS);
        REQUIRE(adapter->Dispatch->NdkCreateCq(adapter, 64, notify, nullptr, nullptr, Done::create,
                                               nullptr, &cq) == STATUS_SUCCESS);
    }
    ~Objects() {
        for (auto it = closers.rbegin(); it != closers.rend(); ++it)
            (*it)();
        if (cq != nullptr) CHECK(close_sync(cq) == STATUS_SUCCESS);
        if (pd != nullptr) CHECK(close_sync(pd) == STATUS_SUCCESS);
        wsk.close(adapter);
    }
    NTSTATUS create_qp(NDK_QP **qp, ULONG rdepth = 16, ULONG idepth = 16, ULONG rsge = 2,
                       ULONG isge = 2, ULONG inl = 0) {
        return pd->Dispatch->NdkCreateQp(pd, cq, cq, nullptr, rdepth, idepth, rsge, isge, inl,
                                         Done::create, nullptr, qp);
    }
};

}  // namespace

TEST_CASE("WSK open negotiates the NDK version", "[provider][adapter][device]") {
    Wsk wsk;
    NDK_ADAPTER *a = nullptr;
    REQUIRE(wsk.open(&a, {1, 0}) == STATUS_SUCCESS);
    const NDK_ADAPTER_INFO info = query_info(a);
    CHECK(a->Header.ObjectType == NdkObjectTypeAdapter);
    CHECK(a->Header.Version.Major == info.Version.Major);
    CHECK(a->Header.Version.Minor == info.Version.Minor);
    // The adapter runs at the highest minor of the requested major it offers.
    REQUIRE(info.Version.Major == 1);
    REQUIRE(info.Version.Minor == 2);  // every 1.2 addition is built
    const USHORT highest = info.Version.Minor;
    wsk.close(a);

    for (USHORT minor = 0; minor <= 3; ++minor) {
        CAPTURE(minor);
        a = nullptr;
        const NTSTATUS s = wsk.open(&a, {1, minor});
        if (minor <= highest) {
            REQUIRE(s == STATUS_SUCCESS);
            CHECK(query_info(a).Version.Minor == highest);
            wsk.close(a);
        } else {
            CHECK(s == STATUS_NDIS_BAD_VERSION);
            CHECK(a == nullptr);
        }
    }
    // Major 2 runs at 2.1: every slot, the Ex connector calls included, is built.
    for (USHORT minor = 0; minor <= 1; ++minor) {
        a = nullptr;
        REQUIRE(wsk.open(&a, {2, minor}) == STATUS_SUCCESS);
        const NDK_ADAPTER_INFO v2 = query_info(a);
        CHECK(v2.Version.Major == 2);
        CHECK(v2.Version.Minor == 1);
        CHECK(a->Header.Version.Major == 2);
        wsk.close(a);
    }
    CHECK(wsk.open(&a, {2, 2}) == STATUS_NDIS_BAD_VERSION);
    CHECK(wsk.open(&a, {3, 0}) == STATUS_NDIS_BAD_VERSION);
    CHECK(wsk.open(&a, {0, 9}) == STATUS_NDIS_BAD_VERSION);
}

TEST_CASE("NdkQueryAdapterInfo: size protocol and honest limits", "[provider][adapter][device]") {
    Objects o;
    NDK_ADAPTER *a = o.adapter;
    NDK_ADAPTER_INFO info{};
    ULONG size = 0;
    CHECK(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size) == STATUS_BUFFER_TOO_SMALL);
    CHECK(size == sizeof(NDK_ADAPTER_INFO));
    size = sizeof(NDK_ADAPTER_INFO) - 1;
    CHECK(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size) == STATUS_BUFFER_TOO_SMALL);
    CHECK(size == sizeof(NDK_ADAPTER_INFO));
    CHECK(a->Dispatch->NdkQueryAdapterInfo(a, &info, nullptr) == STATUS_INVALID_PARAMETER);
    size = sizeof(NDK_ADAPTER_INFO) + 16;
    CHECK(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size) == STATUS_SUCCESS);
    CHECK(size == sizeof(NDK_ADAPTER_INFO));
    CHECK((info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED) != 0);
    CHECK((info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED) != 0);
    CHECK(info.MaxSrqDepth > 0);  // SRQs are built
    CHECK(info.FRMRPageCount >= 16);
    CHECK(info.MaxCqDepth > 0);
    CHECK(info.MaxInitiatorQueueDepth > 0);
    CHECK(info.MaxReceiveQueueDepth > 0);
    CHECK(info.MaxCallerData <= 196);
}

TEST_CASE("Object headers carry version and type and NdkReserved stays zero",
          "[provider][adapter][device]") {
    Objects o;
    const NDK_OBJECT_HEADER_RESERVED_BLOCK zero{};
    auto check = [&](const NDK_OBJECT_HEADER &h, NDK_OBJECT_TYPE type) {
        CHECK(h.ObjectType == type);
        CHECK(h.Version.Major == o.info.Version.Major);
        CHECK(h.Version.Minor == o.info.Version.Minor);
        CHECK(std::memcmp(&h.NdkReserved, &zero, sizeof zero) == 0);
    };
    check(o.adapter->Header, NdkObjectTypeAdapter);
    check(o.pd->Header, NdkObjectTypePd);
    check(o.cq->Header, NdkObjectTypeCq);
    NDK_QP *qp = nullptr;
    REQUIRE(o.create_qp(&qp) == STATUS_SUCCESS);
    o.track(qp);
    check(qp->Header, NdkObjectTypeQp);
    NDK_MR *mr = nullptr;
    REQUIRE(o.pd->Dispatch->NdkCreateMr(o.pd, FALSE, Done::create, nullptr, &mr) == STATUS_SUCCESS);
    check(o.track(mr)->Header, NdkObjectTypeMr);
    NDK_CONNECTOR *c = nullptr;
    REQUIRE(o.adapter->Dispatch->NdkCreateConnector(o.adapter, Done::create, nullptr, &c) ==
            STATUS_SUCCESS);
    check(o.track(c)->Header, NdkObjectTypeConnector);
    NDK_LISTENER *l = nullptr;
    REQUIRE(o.adapter->Dispatch->NdkCreateListener(
                o.adapter, [](PVOID, NDK_CONNECTOR *) {}, nullptr, Done::create, nullptr, &l) ==
            STATUS_SUCCESS);
    check(o.track(l)->Header, NdkObjectTypeListener);
    NDK_MW *mw = nullptr;
    const NTSTATUS mws = o.pd->Dispatch->NdkCreateMw(o.pd, Done::create, nullptr, &mw);
    if (mws == STATUS_NOT_SUPPORTED) {
        WARN("MW part skipped: the device does not implement kAllocMw yet");
    } else {
        REQUIRE(mws == STATUS_SUCCESS);
        check(o.track(mw)->Header, NdkObjectTypeMw);
    }
}

TEST_CASE("Every slot of every dispatch table is filled: NdkQueryExtension knows no extension",
          "[provider][slots][device]") {
    Objects o;
    NDK_ADAPTER *a = o.adapter;
    sockaddr_in addr = ipv4("127.0.0.1", 0);
    NDK_SHARED_ENDPOINT *se = nullptr;
    REQUIRE(a->Dispatch->NdkCreateSharedEndpoint(a, reinterpret_cast<PSOCKADDR>(&addr), sizeof addr,
                                                 Done::create, nullptr, &se) == STATUS_SUCCESS);
    o.track(se);
    NDK_QP *qp = nullptr;
    REQUIRE(o.create_qp(&qp) == STATUS_SUCCESS);
    o.track(qp);
    NDK_MR *mr = nullptr;
    REQUIRE(o.pd->Dispatch->NdkCreateMr(o.pd, TRUE, Done::create, nullptr, &mr) == STATUS_SUCCESS);
    o.track(mr);
    NDK_MW *mw = nullptr;
    REQUIRE(o.pd->Dispatch->NdkCreateMw(o.pd, Done::create, nullptr, &mw) == STATUS_SUCCESS);
    o.track(mw);
    NDK_SRQ *srq = nullptr;
    REQUIRE(o.pd->Dispatch->NdkCreateSrq(o.pd, 16, 1, 0, nullptr, nullptr, nullptr, Done::create,
                                         nullptr, &srq) == STATUS_SUCCESS);
    o.track(srq);
    NDK_CONNECTOR *c = nullptr;
    REQUIRE(a->Dispatch->NdkCreateConnector(a, Done::create, nullptr, &c) == STATUS_SUCCESS);
    o.track(c);
    NDK_LISTENER *l = nullptr;
    REQUIRE(a->Dispatch->NdkCreateListener(
                a, [](PVOID, NDK_CONNECTOR *) {}, nullptr, Done::create, nullptr, &l) ==
            STATUS_SUCCESS);
    o.track(l);
    // No extension interface is offered (ndkpi-api.md: an unknown GUID is NOT_SUPPORTED).
    GUID guid{};
    NDK_EXTENSION_INTERFACE ext{};
    CHECK(qp->Dispatch->NdkQueryExtension(&qp->Header, &guid, NDK_VERSION{1, 0}, &ext) ==
          STATUS_NOT_SUPPORTED);
    CHECK(a->Dispatch->NdkQueryExtension(&a->Header, &guid, NDK_VERSION{1, 0}, &ext) ==
          STATUS_NOT_SUPPORTED);
    CHECK(se->Dispatch->NdkQueryExtension(&se->Header, &guid, NDK_VERSION{1, 0}, &ext) ==
          STATUS_NOT_SUPPORTED);
    CHECK(srq->Dispatch->NdkQueryExtension(&srq->Header, &guid, NDK_VERSION{1, 0}, &ext) ==
          STATUS_NOT_SUPPORTED);
    CHECK(a->Dispatch->NdkQueryExtension(&a->Header, nullptr, NDK_VERSION{1, 0}, &ext) ==
          STATUS_INVALID_PARAMETER);
    // A header of another type is refused, never misread.
    CHECK(srq->Dispatch->NdkQueryExtension(&qp->Header, &guid, NDK_VERSION{1, 0}, &ext) ==
          STATUS_INVALID_PARAMETER);

    auto all_filled = [](const void *table, size_t bytes) {
        std::vector<void *> slots(bytes / sizeof(void *));
        std::memcpy(slots.data(), table, bytes);
        for (void *p : slots)
            if (p == nullptr) return false;
        return true;
    };
    CHECK(all_filled(a->Dispatch, sizeof *a->Dispatch));
    CHECK(all_filled(o.pd->Dispatch, sizeof *o.pd->Dispatch));
    CHECK(all_filled(o.cq->Dispatch, sizeof *o.cq->Dispatch));
    CHECK(all_filled(qp->Dispatch, sizeof *qp->Dispatch));
    CHECK(all_filled(srq->Dispatch, sizeof *srq->Dispatch));
    CHECK(all_filled(mr->Dispatch, sizeof *mr->Dispatch));
    CHECK(all_filled(mw->Dispatch, sizeof *mw->Dispatch));
    CHECK(all_filled(c->Dispatch, sizeof *c->Dispatch));
    CHECK(all_filled(l->Dispatch, sizeof *l->Dispatch));
    CHECK(all_filled(se->Dispatch, sizeof *se->Dispatch));
}

TEST_CASE("Creates check their arguments", "[provider][adapter][device]") {
    Objects o;
    NDK_ADAPTER *a = o.adapter;
    NDK_CQ *cq = nullptr;
    auto notify = Objects::notify;
    CHECK(a->Dispatch->NdkCreateCq(a, 0, notify, nullptr, nullptr, Done::create, nullptr, &cq) ==
          STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateCq(a, o.info.MaxCqDepth + 1, notify, nullptr, nullptr, Done::create,
                                   nullptr, &cq) == STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateCq(a, 16, nullptr, nullptr, nullptr, Done::create, nullptr, &cq) ==
          STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateCq(a, 16, notify, nullptr, nullptr, nullptr, nullptr, &cq) ==
          STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateCq(a, 16, notify, nullptr, nullptr, Done::create, nullptr,
                                   nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(cq == nullptr);

    NDK_QP *qp = nullptr;
    const NDK_ADAPTER_INFO &i = o.info;
    CHECK(o.create_qp(&qp, i.MaxReceiveQueueDepth + 1) == STATUS_INVALID_PARAMETER);
    CHECK(o.create_qp(&qp, 16, i.MaxInitiatorQueueDepth + 1) == STATUS_INVALID_PARAMETER);
    CHECK(o.create_qp(&qp, 16, 16, i.MaxReceiveRequestSge + 1) == STATUS_INVALID_PARAMETER);
    CHECK(o.create_qp(&qp, 16, 16, 1, i.MaxInitiatorRequestSge + 1) == STATUS_INVALID_PARAMETER);
    CHECK(o.create_qp(&qp, 16, 16, 1, 1, i.MaxInlineDataSize + 1) == STATUS_INVALID_PARAMETER);
    CHECK(o.pd->Dispatch->NdkCreateQp(o.pd, nullptr, o.cq, nullptr, 1, 1, 1, 1, 0, Done::create,
                                      nullptr, &qp) == STATUS_INVALID_PARAMETER);
    CHECK(o.pd->Dispatch->NdkCreateQp(o.pd, o.cq, o.cq, nullptr, 1, 1, 1, 1, 0, Done::create,
                                      nullptr, nullptr) == STATUS_INVALID_PARAMETER);
    // A CQ passed where a PD is expected is not a PD.
    CHECK(o.pd->Dispatch->NdkCreateQp(reinterpret_cast<NDK_PD *>(o.cq), o.cq, o.cq, nullptr, 1, 1,
                                      1, 1, 0, Done::create, nullptr,
                                      &qp) == STATUS_INVALID_PARAMETER);
    CHECK(qp == nullptr);
    REQUIRE(o.create_qp(&qp, i.MaxReceiveQueueDepth, i.MaxInitiatorQueueDepth,
                        i.MaxReceiveRequestSge, i.MaxInitiatorRequestSge,
                        i.MaxInlineDataSize) == STATUS_SUCCESS);
    o.track(qp);
}

TEST_CASE("NdkRegisterMr checks flags MDL length and contiguity", "[provider][mr][device]") {
    Objects o;
    NDK_MR *mr = nullptr;
    REQUIRE(o.pd->Dispatch->NdkCreateMr(o.pd, FALSE, Done::create, nullptr, &mr) == STATUS_SUCCESS);
    o.track(mr);  // closing a registered MR deregisters it
    std::vector<unsigned char> buf(3 * PAGE_SIZE);
    MDL mdl = make_mdl(buf.data(), buf.size());
    auto reg = [&](MDL *m, SIZE_T len, ULONG flags) {
        Done d;
        return finish(mr->Dispatch->NdkRegisterMr(mr, m, len, flags, Done::request, &d), d);
    };
    CHECK(reg(nullptr, buf.size(), 0) == STATUS_INVALID_PARAMETER);
    CHECK(reg(&mdl, 0, 0) == STATUS_INVALID_PARAMETER);
    CHECK(reg(&mdl, buf.size(), 0x10) == STATUS_INVALID_PARAMETER);
    CHECK(mr->Dispatch->NdkRegisterMr(mr, &mdl, buf.size(), 0, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    // Longer than the chain describes.
    CHECK(reg(&mdl, buf.size() + 1, 0) == STATUS_INVALID_PARAMETER);
    // Two MDLs with a hole between them are not virtually contiguous.
    MDL first = make_mdl(buf.data(), PAGE_SIZE);
    MDL second = make_mdl(buf.data() + 2 * PAGE_SIZE, PAGE_SIZE);
    first.Next = &second;
    CHECK(reg(&first, 2 * PAGE_SIZE, 0) == STATUS_INVALID_PARAMETER);
    // Adjacent ones are.
    MDL adjacent = make_mdl(buf.data() + PAGE_SIZE, 2 * PAGE_SIZE);
    first.Next = &adjacent;
    const UINT32 before = mr->Dispatch->NdkGetLocalTokenFromMr(mr);
    CHECK(reg(&first, 3 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) == STATUS_SUCCESS);
    CHECK(mr->Dispatch->NdkGetLocalTokenFromMr(mr) != 0);
    CHECK(mr->Dispatch->NdkGetRemoteTokenFromMr(mr) != 0);
    (void)before;
    CHECK(reg(&mdl, buf.size(), 0) == STATUS_INVALID_DEVICE_STATE);  // already registered
    Done d;
    CHECK(finish(mr->Dispatch->NdkDeregisterMr(mr, Done::request, &d), d) == STATUS_SUCCESS);
    Done d2;
    CHECK(finish(mr->Dispatch->NdkDeregisterMr(mr, Done::request, &d2), d2) ==
          STATUS_INVALID_DEVICE_STATE);
    CHECK(reg(&mdl, buf.size(), NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK) ==
          STATUS_SUCCESS);
}

TEST_CASE("Connector checks addresses and arguments", "[provider][cm][device]") {
    Objects o;
    NDK_ADAPTER *a = o.adapter;
    sockaddr_in v4 = ipv4("127.0.0.1", 0);
    sockaddr_in bad_family = v4;
    bad_family.sin_family = 23;  // Windows' AF_INET6: not an address family on Linux
    NDK_CONNECTOR *c = nullptr;
    REQUIRE(a->Dispatch->NdkCreateConnector(a, Done::create, nullptr, &c) == STATUS_SUCCESS);
    NDK_QP *qp = nullptr;
    REQUIRE(o.create_qp(&qp) == STATUS_SUCCESS);
    o.track(qp);
    o.track(c);
    sockaddr_in src = ipv4("127.0.0.1", 0);
    sockaddr_in6 dst6{};
    dst6.sin6_family = AF_INET6;
    auto connect = [&](void *s, ULONG sl, void *d, ULONG dl, void *pd, ULONG pl) {
        Done done;
        return finish(
            c->Dispatch->NdkConnect(c, qp, static_cast<PSOCKADDR>(s), sl, static_cast<PSOCKADDR>(d),
                                    dl, 1, 1, pd, pl, Done::request, &done),
            done);
    };
    std::vector<unsigned char> pdata(o.info.MaxCallerData + 1);
    CHECK(connect(&src, sizeof src, &dst6, sizeof dst6, nullptr, 0) == STATUS_INVALID_ADDRESS);
    CHECK(connect(&src, sizeof src, &v4, sizeof v4, nullptr, 4) == STATUS_INVALID_PARAMETER);
    CHECK(connect(&src, sizeof src, &v4, sizeof v4, pdata.data(),
                  static_cast<ULONG>(pdata.size())) == STATUS_INVALID_PARAMETER);
    CHECK(connect(nullptr, sizeof src, &v4, sizeof v4, nullptr, 0) == STATUS_INVALID_PARAMETER);
    CHECK(connect(&src, sizeof src, &bad_family, sizeof bad_family, nullptr, 0) ==
          STATUS_INVALID_ADDRESS);
    // Not connected: the connection-only calls refuse.
    Done d;
    CHECK(c->Dispatch->NdkCompleteConnect(c, nullptr, nullptr, Done::request, &d) ==
          STATUS_CONNECTION_INVALID);
    CHECK(c->Dispatch->NdkDisconnect(c, Done::request, &d) == STATUS_CONNECTION_INVALID);
    CHECK(c->Dispatch->NdkAccept(c, qp, 1, 1, nullptr, 0, nullptr, nullptr, Done::request, &d) ==
          STATUS_CONNECTION_INVALID);
    ULONG plen = 0;
    CHECK(c->Dispatch->NdkGetConnectionData(c, nullptr, nullptr, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    plen = 8;
    CHECK(c->Dispatch->NdkGetConnectionData(c, nullptr, nullptr, nullptr, &plen) ==
          STATUS_INVALID_PARAMETER);
    CHECK(d.calls() == 0);
}

TEST_CASE("Posting checks arguments and initiator posts need a connection but receives do not",
          "[provider][qp][device]") {
    Objects o;
    NDK_QP *qp = nullptr;
    REQUIRE(o.create_qp(&qp, 4, 4, 2, 2, 16) == STATUS_SUCCESS);
    o.track(qp);
    std::vector<unsigned char> buf(64);
    NDK_SGE sge{};
    sge.VirtualAddress = buf.data();
    sge.Length = 8;
    NDK_SGE three[3] = {sge, sge, sge};
    const NDK_QP_DISPATCH *d = qp->Dispatch;
    CHECK(d->NdkSend(qp, nullptr, nullptr, 1, 0) == STATUS_INVALID_PARAMETER);
    CHECK(d->NdkSend(qp, nullptr, three, 3, 0) == STATUS_INVALID_PARAMETER);  // > 2 SGEs
    CHECK(d->NdkSend(qp, nullptr, &sge, 1, NDK_OP_FLAG_ALLOW_REMOTE_READ) ==
          STATUS_INVALID_PARAMETER);
    CHECK(d->NdkSend(qp, nullptr, &sge, 1, NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) ==
          STATUS_INVALID_PARAMETER);
    NDK_SGE big = sge;
    big.Length = 17;
    CHECK(d->NdkSend(qp, nullptr, &big, 1, NDK_OP_FLAG_INLINE) == STATUS_INVALID_PARAMETER);
    CHECK(d->NdkWrite(qp, nullptr, &sge, 1, 0, 0, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) ==
          STATUS_INVALID_PARAMETER);
    CHECK(d->NdkRead(qp, nullptr, &sge, 1, 0, 0, NDK_OP_FLAG_INLINE) == STATUS_INVALID_PARAMETER);
    CHECK(d->NdkReceive(qp, nullptr, three, 3) == STATUS_INVALID_PARAMETER);
    CHECK(d->NdkReceive(qp, nullptr, nullptr, 1) == STATUS_INVALID_PARAMETER);
    CHECK(d->NdkSend(nullptr, nullptr, &sge, 1, 0) == STATUS_INVALID_PARAMETER);

    CHECK(d->NdkSend(qp, nullptr, &sge, 1, 0) == STATUS_CONNECTION_INVALID);
    CHECK(d->NdkSend(qp, nullptr, &sge, 1, NDK_OP_FLAG_INLINE) == STATUS_CONNECTION_INVALID);
    CHECK(d->NdkWrite(qp, nullptr, &sge, 1, 0x1000, 1, 0) == STATUS_CONNECTION_INVALID);
    CHECK(d->NdkRead(qp, nullptr, &sge, 1, 0x1000, 1, 0) == STATUS_CONNECTION_INVALID);
    CHECK(d->NdkSend(qp, nullptr, &sge, 1, NDK_OP_FLAG_DEFER) == STATUS_CONNECTION_INVALID);
    // Receives may be posted before the connection exists, up to the depth.
    for (int i = 0; i < 4; ++i)
        CHECK(d->NdkReceive(qp, nullptr, &sge, 1) == STATUS_SUCCESS);
    CHECK(d->NdkReceive(qp, nullptr, &sge, 1) == STATUS_INSUFFICIENT_RESOURCES);
    // Flush cancels them: four STATUS_CANCELLED receive completions.
    d->NdkFlush(qp);
    std::vector<NDK_RESULT_EX> r(8);
    size_t got = 0;
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (got < 4 && std::chrono::steady_clock::now() < deadline)
        got += o.cq->Dispatch->NdkGetCqResultsEx(o.cq, r.data() + got, 8 - static_cast<ULONG>(got));
    REQUIRE(got == 4);
    for (size_t i = 0; i < 4; ++i) {
        CHECK(r[i].Status == STATUS_CANCELLED);
        CHECK((r[i].Type & NdkOperationTypeReceive) != 0);
        CHECK(r[i].ProviderErrorCode != 0);
    }
}

TEST_CASE("Closing a CQ that still has a QP pends until the QP closes",
          "[provider][lifetime][device]") {
    Objects o;
    NDK_QP *qp = nullptr;
    REQUIRE(o.create_qp(&qp) == STATUS_SUCCESS);
    Done cq_closed;
    CHECK(o.cq->Dispatch->NdkCloseCq(&o.cq->Header, Done::close, &cq_closed) == STATUS_PENDING);
    o.cq = nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(cq_closed.calls() == 0);
    CHECK(close_sync(qp) == STATUS_SUCCESS);
    REQUIRE(cq_closed.wait());
    CHECK(cq_closed.calls() == 1);
}

TEST_CASE("Replacing obj->Dispatch after creation does not affect the provider",
          "[provider][lifetime][device]") {
    Objects o;
    NDK_QP *qp = nullptr;
    REQUIRE(o.create_qp(&qp) == STATUS_SUCCESS);
    // An interposer (NDIS/WSK in Windows) may replace every table pointer.
    const NDK_QP_DISPATCH *qp_table = qp->Dispatch;
    const NDK_CQ_DISPATCH *cq_table = o.cq->Dispatch;
    const NDK_PD_DISPATCH *pd_table = o.pd->Dispatch;
    const NDK_ADAPTER_DISPATCH *adapter_table = o.adapter->Dispatch;
    static const NDK_QP_DISPATCH bogus_qp{};
    static const NDK_CQ_DISPATCH bogus_cq{};
    static const NDK_PD_DISPATCH bogus_pd{};
    static const NDK_ADAPTER_DISPATCH bogus_adapter{};
    qp->Dispatch = &bogus_qp;
    o.cq->Dispatch = &bogus_cq;
    o.pd->Dispatch = &bogus_pd;
    o.adapter->Dispatch = &bogus_adapter;
    NDK_SGE sge{};
    CHECK(qp_table->NdkSend(qp, nullptr, &sge, 0, 0) == STATUS_CONNECTION_INVALID);
    CHECK(qp_table->NdkReceive(qp, nullptr, &sge, 0) == STATUS_SUCCESS);
    qp_table->NdkFlush(qp);
    NDK_RESULT r{};
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    ULONG n = 0;
    while (n == 0 && std::chrono::steady_clock::now() < deadline)
        n = cq_table->NdkGetCqResults(o.cq, &r, 1);
    CHECK(n == 1);
    CHECK(r.Status == STATUS_CANCELLED);
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    CHECK(adapter_table->NdkQueryAdapterInfo(o.adapter, &info, &size) == STATUS_SUCCESS);
    Done d;
    CHECK(finish(qp_table->NdkCloseQp(&qp->Header, Done::close, &d), d) == STATUS_SUCCESS);
    Done d2, d3;
    CHECK(finish(cq_table->NdkCloseCq(&o.cq->Header, Done::close, &d2), d2) == STATUS_SUCCESS);
    CHECK(finish(pd_table->NdkClosePd(&o.pd->Header, Done::close, &d3), d3) == STATUS_SUCCESS);
    o.cq = nullptr;
    o.pd = nullptr;
}

TEST_CASE("Close checks its arguments and rejects a second close of a pending object",
          "[provider][lifetime][device]") {
    Objects o;
    NDK_QP *qp = nullptr;
    REQUIRE(o.create_qp(&qp) == STATUS_SUCCESS);
    CHECK(o.cq->Dispatch->NdkCloseCq(nullptr, Done::close, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(o.cq->Dispatch->NdkCloseCq(&o.cq->Header, nullptr, nullptr) == STATUS_INVALID_PARAMETER);
    // A PD header handed to the CQ's close is not a CQ.
    CHECK(o.cq->Dispatch->NdkCloseCq(&o.pd->Header, Done::close, nullptr) ==
          STATUS_INVALID_PARAMETER);
    Done closed;
    CHECK(o.cq->Dispatch->NdkCloseCq(&o.cq->Header, Done::close, &closed) == STATUS_PENDING);
    CHECK(o.cq->Dispatch->NdkCloseCq(&o.cq->Header, Done::close, &closed) ==
          STATUS_INVALID_DEVICE_STATE);
    CHECK(close_sync(qp) == STATUS_SUCCESS);
    REQUIRE(closed.wait());
    o.cq = nullptr;
}

TEST_CASE("Remaining slots reject NULL arguments", "[provider][adapter][device]") {
    Objects o;
    NDK_ADAPTER *a = o.adapter;
    NDK_MR *mr = nullptr;
    NDK_MW *mw = nullptr;
    CHECK(o.pd->Dispatch->NdkCreateMr(o.pd, FALSE, Done::create, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(o.pd->Dispatch->NdkCreateMr(o.pd, FALSE, nullptr, nullptr, &mr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(o.pd->Dispatch->NdkCreateMw(o.pd, Done::create, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(o.pd->Dispatch->NdkCreateMw(nullptr, Done::create, nullptr, &mw) ==
          STATUS_INVALID_PARAMETER);
    NDK_CONNECTOR *c = nullptr;
    CHECK(a->Dispatch->NdkCreateConnector(a, Done::create, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(a->Dispatch->NdkCreateConnector(a, nullptr, nullptr, &c) == STATUS_INVALID_PARAMETER);
    REQUIRE(a->Dispatch->NdkCreateConnector(a, Done::create, nullptr, &c) == STATUS_SUCCESS);
    o.track(c);
    NDK_QP *qp = nullptr;
    REQUIRE(o.create_qp(&qp) == STATUS_SUCCESS);
    o.track(qp);
    Done d;
    CHECK(c->Dispatch->NdkAccept(c, nullptr, 1, 1, nullptr, 0, nullptr, nullptr, Done::request,
                                 &d) == STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkAccept(c, qp, 1, 1, nullptr, 0, nullptr, nullptr, nullptr, &d) ==
          STATUS_INVALID_PARAMETER);
    std::vector<unsigned char> big(o.info.MaxCalleeData + 1);
    CHECK(c->Dispatch->NdkAccept(c, qp, 1, 1, big.data(), static_cast<ULONG>(big.size()), nullptr,
                                 nullptr, Done::request, &d) == STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkReject(c, nullptr, 3) == STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkReject(c, big.data(), static_cast<ULONG>(big.size())) ==
          STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkReject(c, nullptr, 0) == STATUS_CONNECTION_INVALID);  // nothing to reject
    CHECK(c->Dispatch->NdkCompleteConnect(c, nullptr, nullptr, nullptr, nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkDisconnect(c, nullptr, nullptr) == STATUS_INVALID_PARAMETER);
    sockaddr_in addr{};
    ULONG len = sizeof addr;
    CHECK(c->Dispatch->NdkGetLocalAddress(c, reinterpret_cast<PSOCKADDR>(&addr), nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkGetPeerAddress(c, reinterpret_cast<PSOCKADDR>(&addr), nullptr) ==
          STATUS_INVALID_PARAMETER);
    CHECK(c->Dispatch->NdkGetLocalAddress(c, reinterpret_cast<PSOCKADDR>(&addr), &len) ==
          STATUS_CONNECTION_INVALID);  // no connection yet
    REQUIRE(o.pd->Dispatch->NdkCreateMr(o.pd, FALSE, Done::create, nullptr, &mr) == STATUS_SUCCESS);
    o.track(mr);
    CHECK(mr->Dispatch->NdkDeregisterMr(mr, nullptr, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(o.cq->Dispatch->NdkGetCqResults(o.cq, nullptr, 4) == 0);
    CHECK(o.cq->Dispatch->NdkGetCqResultsEx(o.cq, nullptr, 4) == 0);
    o.cq->Dispatch->NdkArmCq(o.cq, 7);  // unknown type: ignored (logged)
    CHECK(d.calls() == 0);
}
