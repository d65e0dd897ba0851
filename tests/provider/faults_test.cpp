// SoftNdkInjectFault (softndk_faults.h) end to end: each fault kind, injected through
// an adapter handle, and what the consumer sees of it - the completion status, the
// NTSTATUS of the failed call, the disconnect callback, or the model time a retry
// cost (through the model-time extension, softndk_ext.h). Tagged [device]: the same
// cases run against a `softndk rnic` daemon (tests/provider/CMakeLists.txt).
#include <softndk_ext.h>
#include <softndk_faults.h>

#include "ndk_test.hpp"

using namespace ndktest;
using namespace std::chrono_literals;

extern "C" {  // faults_c.c
NTSTATUS FaultsCArmLossyTx(NDK_ADAPTER *Adapter, NDK_QP *Qp, ULONG *FaultId);
NTSTATUS FaultsCRemove(NDK_ADAPTER *Adapter, ULONG FaultId);
}

namespace {

constexpr ULONG64 kAckTimeoutNs = 4096ull << 14;  // roce-default: ack_timeout = 14 (67 ms)

SOFTNDK_FAULT fault(SOFTNDK_FAULT_KIND kind, NDK_QP *qp = nullptr) {
    SOFTNDK_FAULT f{};
    f.Kind = kind;
    f.pQp = qp;
    return f;
}

const SOFTNDK_MODEL_TIME_DISPATCH &model_time(NDK_CQ *cq) {
    GUID id = SOFTNDK_MODEL_TIME_EXTENSION_GUID_INIT;
    NDK_VERSION v{};
    v.Major = 1;
    NDK_EXTENSION_INTERFACE iface{};
    REQUIRE(cq->Dispatch->NdkQueryExtension(&cq->Header, &id, v, &iface) == STATUS_SUCCESS);
    return *static_cast<const SOFTNDK_MODEL_TIME_DISPATCH *>(iface.Dispatch);
}

struct Timed {
    NDK_RESULT result{};
    ULONG64 time = 0;
};

Timed poll_timed(NDK_CQ *cq) {
    const auto &ext = model_time(cq);
    Timed t;
    t.result.Status = STATUS_PENDING;
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (ext.SoftNdkGetCqResultsWithTime(cq, &t.result, &t.time, 1) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            FAIL_CHECK("no completion within the timeout");
            break;
        }
        std::this_thread::yield();
    }
    return t;
}

// One SEND of `bytes` from client to server into a posted receive. Returns the
// client's completion and its model time relative to the consumer's clock at the post.
struct Exchange {
    Timed sent;
    NDK_RESULT_EX received{};
    ULONG64 took = 0;  // model ns from the post to the send's completion
};
Exchange send_once(Pair &p, ULONG bytes = 64) {
    Exchange e;
    NDK_SGE r = p.server.sge(0, 16384);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    const ULONG64 start = model_time(p.client.cq).SoftNdkGetModelTime(p.client.cq);
    NDK_SGE s = p.client.sge(0, bytes);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    e.sent = poll_timed(p.client.cq);
    e.took = e.sent.time - start;
    if (e.sent.result.Status == STATUS_SUCCESS) e.received = p.server.poll_one();
    return e;
}

// A device counter through the fault API (device-wide: compare before and after).
ULONG64 counter(NDK_ADAPTER *adapter, const char *name) {
    ULONG64 value = 0;
    REQUIRE(SoftNdkQueryCounter(adapter, name, &value) == STATUS_SUCCESS);
    return value;
}

struct Disconnects {
    std::atomic<int> calls{0};
    static void cb(PVOID ctx) { static_cast<Disconnects *>(ctx)->calls.fetch_add(1); }
    bool wait(int n) {
        const auto end = std::chrono::steady_clock::now() + kTimeout;
        while (calls.load() < n && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(1ms);
        return calls.load() >= n;
    }
};

}  // namespace

TEST_CASE("fault API: bad specs are refused with STATUS_INVALID_PARAMETER",
          "[provider][faults][device]") {
    Pair p;
    NDK_ADAPTER *a = p.client.adapter;
    SOFTNDK_FAULT f = fault(static_cast<SOFTNDK_FAULT_KIND>(99));
    CHECK(SoftNdkInjectFault(a, &f, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(SoftNdkInjectFault(a, nullptr, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(SoftNdkInjectFault(nullptr, &f, nullptr) == STATUS_INVALID_PARAMETER);
    f = fault(SoftNdkFaultQpError);  // needs a QP
    CHECK(SoftNdkInjectFault(a, &f, nullptr) == STATUS_INVALID_PARAMETER);
    f = fault(SoftNdkFaultCqOverrun);  // needs a CQ
    CHECK(SoftNdkInjectFault(a, &f, nullptr) == STATUS_INVALID_PARAMETER);
    f = fault(SoftNdkFaultFailOperation, p.client.qp);
    f.Count = 1;
    f.Status = STATUS_NO_MEMORY;  // no completion carries it
    CHECK(SoftNdkInjectFault(a, &f, nullptr) == STATUS_INVALID_PARAMETER);
    f = fault(SoftNdkFaultFailCommand);
    f.Count = 1;
    f.Operation = SoftNdkFaultCommandCreateQp;
    f.Status = STATUS_SUCCESS;  // not a failure
    CHECK(SoftNdkInjectFault(a, &f, nullptr) == STATUS_INVALID_PARAMETER);
    f = fault(SoftNdkFaultDrop);
    f.Probability = SOFTNDK_FAULT_ALWAYS + 1;
    CHECK(SoftNdkInjectFault(a, &f, nullptr) == STATUS_INVALID_PARAMETER);
    // A good one has an id, which removes it once.
    f = fault(SoftNdkFaultDrop, p.client.qp);
    ULONG id = 0;
    REQUIRE(SoftNdkInjectFault(a, &f, &id) == STATUS_SUCCESS);
    CHECK(id != 0);
    CHECK(SoftNdkRemoveFault(a, id) == STATUS_SUCCESS);
    CHECK(SoftNdkRemoveFault(a, id) == STATUS_INVALID_PARAMETER);
    CHECK(SoftNdkRemoveFault(a, 0) == STATUS_SUCCESS);  // all (none left)
    // Removed: traffic flows.
    CHECK(send_once(p).sent.result.Status == STATUS_SUCCESS);
    ULONG64 value = 7;
    CHECK(SoftNdkQueryCounter(a, "no_such_counter", &value) == STATUS_NOT_FOUND);
    CHECK(value == 7);
    CHECK(SoftNdkQueryCounter(a, nullptr, &value) == STATUS_INVALID_PARAMETER);
}

TEST_CASE("fault: a dropped or corrupted packet costs the sender an ACK timeout and a retry",
          "[provider][faults][device]") {
    Pair p;
    const Exchange clean = send_once(p);
    REQUIRE(clean.sent.result.Status == STATUS_SUCCESS);
    const ULONG64 drops = counter(p.client.adapter, "fault_drops");
    const ULONG64 corruptions = counter(p.client.adapter, "fault_corruptions");
    for (SOFTNDK_FAULT_KIND kind : {SoftNdkFaultDrop, SoftNdkFaultCorrupt}) {
        SOFTNDK_FAULT f = fault(kind, p.client.qp);
        f.Direction = SOFTNDK_FAULT_TX;
        f.PacketClasses = SOFTNDK_FAULT_PACKET_SEND;
        f.Count = 1;
        REQUIRE(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_SUCCESS);
        const ULONG64 timeouts = counter(p.client.adapter, "ack_timeouts");
        const ULONG64 icrc = counter(p.client.adapter, "icrc_errors");
        const ULONG64 injected = counter(p.client.adapter, "faults_injected");
        const Exchange e = send_once(p, 100);
        CHECK(e.sent.result.Status == STATUS_SUCCESS);
        CHECK(e.received.Status == STATUS_SUCCESS);
        CHECK(e.received.BytesTransferred == 100);
        CHECK(e.took >= kAckTimeoutNs);
        CHECK(e.took < kAckTimeoutNs + 100 * clean.took);
        // The retry shows in the counters: one ACK timeout; a corrupted packet reached
        // the receiver and failed its ICRC check.
        CHECK(counter(p.client.adapter, "ack_timeouts") == timeouts + 1);
        CHECK(counter(p.client.adapter, "faults_injected") == injected + 1);
        CHECK(counter(p.client.adapter, "icrc_errors") ==
              icrc + (kind == SoftNdkFaultCorrupt ? 1 : 0));
    }
    CHECK(counter(p.client.adapter, "fault_drops") == drops + 1);
    CHECK(counter(p.client.adapter, "fault_corruptions") == corruptions + 1);
}

TEST_CASE("fault: with every packet dropped the send fails STATUS_IO_TIMEOUT after its retries",
          "[provider][faults][device]") {
    Pair p;
    SOFTNDK_FAULT f = fault(SoftNdkFaultDrop, p.client.qp);
    f.Direction = SOFTNDK_FAULT_TX;
    REQUIRE(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_SUCCESS);
    const Exchange e = send_once(p);
    CHECK(e.sent.result.Status == STATUS_IO_TIMEOUT);
    CHECK(e.took >= 8 * kAckTimeoutNs);  // the first try and retry_count = 7 retries
}

TEST_CASE("fault: a delayed packet completes its delay later in model time",
          "[provider][faults][device]") {
    Pair p;
    const Exchange clean = send_once(p);
    SOFTNDK_FAULT f = fault(SoftNdkFaultDelay, p.client.qp);
    f.PacketClasses = SOFTNDK_FAULT_PACKET_SEND;
    f.Count = 1;
    f.TimeNs = 3'000'000;
    REQUIRE(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_SUCCESS);
    const Exchange e = send_once(p);
    CHECK(e.sent.result.Status == STATUS_SUCCESS);
    CHECK(e.took >= 3'000'000);
    CHECK(e.took < 3'000'000 + 100 * clean.took);
}

TEST_CASE("fault: duplicated and reordered packets still deliver each message once and intact",
          "[provider][faults][device]") {
    Pair p;
    for (size_t i = 0; i < 12000; ++i)
        p.client.buffer[i] = static_cast<unsigned char>(i * 7);
    for (SOFTNDK_FAULT_KIND kind : {SoftNdkFaultDuplicate, SoftNdkFaultReorder}) {
        SOFTNDK_FAULT f = fault(kind, p.server.qp);
        f.Direction = SOFTNDK_FAULT_RX;
        f.PacketClasses = SOFTNDK_FAULT_PACKET_SEND;
        f.Count = 1;
        REQUIRE(SoftNdkInjectFault(p.server.adapter, &f, nullptr) == STATUS_SUCCESS);
        std::fill(p.server.buffer.begin(), p.server.buffer.begin() + 12000, 0);
        const Exchange e = send_once(p, 12000);  // several packets at any MTU
        CHECK(e.sent.result.Status == STATUS_SUCCESS);
        CHECK(e.received.Status == STATUS_SUCCESS);
        CHECK(e.received.BytesTransferred == 12000);
        CHECK(std::memcmp(p.client.buffer.data(), p.server.buffer.data(), 12000) == 0);
        // No second receive was consumed by a duplicate.
        NDK_RESULT_EX extra{};
        CHECK(p.server.cq->Dispatch->NdkGetCqResultsEx(p.server.cq, &extra, 1) == 0);
    }
}

TEST_CASE("fault: the next N operations fail with the given completion status",
          "[provider][faults][device]") {
    Pair p;
    SOFTNDK_FAULT f = fault(SoftNdkFaultFailOperation, p.client.qp);
    f.Operation = SoftNdkFaultOperationWrite;
    f.Count = 1;
    f.Status = STATUS_DATA_OVERRUN;
    REQUIRE(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_SUCCESS);
    // A SEND is not a WRITE: it goes through.
    CHECK(send_once(p).sent.result.Status == STATUS_SUCCESS);
    NDK_SGE w = p.client.sge(0, 64);
    auto *ctx = reinterpret_cast<void *>(0x77);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, ctx, &w, 1, p.server.remote_address(0),
                                            p.server.rtoken, 0) == STATUS_SUCCESS);
    const NDK_RESULT_EX failed = p.client.poll_one();
    CHECK(failed.Status == STATUS_DATA_OVERRUN);
    CHECK(failed.RequestContext == ctx);
    CHECK(failed.Type == NdkOperationTypeWrite);
    // As after any error completion the QP is in error: what follows is cancelled.
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1, p.server.remote_address(0),
                                            p.server.rtoken, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_CANCELLED);
}

TEST_CASE("fault: a failed receive completes with its status and fails the peer's send",
          "[provider][faults][device]") {
    Pair p;
    SOFTNDK_FAULT f = fault(SoftNdkFaultFailOperation, p.server.qp);
    f.Operation = SoftNdkFaultOperationReceive;
    f.Count = 1;
    f.Status = STATUS_ACCESS_VIOLATION;
    REQUIRE(SoftNdkInjectFault(p.server.adapter, &f, nullptr) == STATUS_SUCCESS);
    NDK_SGE r = p.server.sge(0, 256);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    NDK_SGE s = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    const NDK_RESULT_EX received = p.server.poll_one();
    CHECK(received.Status == STATUS_ACCESS_VIOLATION);
    CHECK((received.Type & NdkOperationTypeReceive) != 0);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);  // remote operational error
}

TEST_CASE("fault: the next N commands of a kind fail with the given NTSTATUS",
          "[provider][faults][device]") {
    Wsk wsk;
    Side s(wsk);
    const ULONG64 failed_cmds = counter(s.adapter, "fault_failed_cmds");
    SOFTNDK_FAULT f = fault(SoftNdkFaultFailCommand);
    f.Operation = SoftNdkFaultCommandCreateCq;
    f.Count = 2;
    f.Status = STATUS_INSUFFICIENT_RESOURCES;
    REQUIRE(SoftNdkInjectFault(s.adapter, &f, nullptr) == STATUS_SUCCESS);
    auto create_cq = [&](NDK_CQ **cq) {
        return s.adapter->Dispatch->NdkCreateCq(s.adapter, 16, Side::notify, &s, nullptr,
                                                Done::create, nullptr, cq);
    };
    NDK_CQ *cq = nullptr;
    CHECK(create_cq(&cq) == STATUS_INSUFFICIENT_RESOURCES);
    CHECK(create_cq(&cq) == STATUS_INSUFFICIENT_RESOURCES);
    REQUIRE(create_cq(&cq) == STATUS_SUCCESS);  // the spec is spent
    CHECK(close_sync(cq) == STATUS_SUCCESS);
    f.Operation = SoftNdkFaultCommandCreateQp;
    f.Count = 1;
    f.Status = STATUS_DEVICE_REMOVED;
    REQUIRE(SoftNdkInjectFault(s.adapter, &f, nullptr) == STATUS_SUCCESS);
    NDK_QP *qp = nullptr;
    CHECK(s.pd->Dispatch->NdkCreateQp(s.pd, s.cq, s.cq, &s, 8, 8, 1, 1, 0, Done::create, nullptr,
                                      &qp) == STATUS_DEVICE_REMOVED);
    CHECK(qp == nullptr);
    CHECK(counter(s.adapter, "fault_failed_cmds") == failed_cmds + 3);
}

TEST_CASE("fault: a QP moved to error cancels its pending requests", "[provider][faults][device]") {
    Pair p;
    NDK_SGE r = p.server.sge(0, 64);
    auto *ctx = reinterpret_cast<void *>(0x99);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, ctx, &r, 1) == STATUS_SUCCESS);
    SOFTNDK_FAULT f = fault(SoftNdkFaultQpError, p.server.qp);
    f.Status = STATUS_IO_TIMEOUT;  // the cause the flushed requests carry
    REQUIRE(SoftNdkInjectFault(p.server.adapter, &f, nullptr) == STATUS_SUCCESS);
    const NDK_RESULT_EX flushed = p.server.poll_one();
    CHECK(flushed.Status == STATUS_CANCELLED);
    CHECK(flushed.RequestContext == ctx);
    CHECK(flushed.ProviderErrorCode != 0);
}

TEST_CASE("fault: a killed connection runs both ends' disconnect callbacks",
          "[provider][faults][device]") {
    Disconnects client_seen, server_seen;
    ConnectOptions o;
    o.client_disconnect = Disconnects::cb;
    o.client_disconnect_context = &client_seen;
    o.server_disconnect = Disconnects::cb;
    o.server_disconnect_context = &server_seen;
    Pair p(o);
    NDK_SGE r = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkReceive(p.client.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    SOFTNDK_FAULT f = fault(SoftNdkFaultKillConnection, p.client.qp);
    REQUIRE(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_SUCCESS);
    CHECK(client_seen.wait(1));
    CHECK(server_seen.wait(1));
    CHECK(p.client.poll_one().Status == STATUS_CANCELLED);  // the QP went to error
    // The connection is gone: killing it again finds none.
    CHECK(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_CONNECTION_INVALID);
    std::this_thread::sleep_for(20ms);
    CHECK(client_seen.calls == 1);
    CHECK(server_seen.calls == 1);
}

TEST_CASE("fault: an RNR storm holds a send back for its length, then it completes",
          "[provider][faults][device]") {
    Pair p;
    const Exchange clean = send_once(p);
    SOFTNDK_FAULT f = fault(SoftNdkFaultRnrStorm, p.server.qp);
    f.TimeNs = 5'000'000;  // 5 ms; the sender waits 0.64 ms (min_rnr_timer 12) per RNR NAK
    REQUIRE(SoftNdkInjectFault(p.server.adapter, &f, nullptr) == STATUS_SUCCESS);
    const ULONG64 received_rnr = counter(p.client.adapter, "rcvd_rnr_err");
    const ULONG64 storm_naks = counter(p.client.adapter, "fault_rnr_naks");
    const Exchange e = send_once(p);
    CHECK(e.sent.result.Status == STATUS_SUCCESS);
    CHECK(e.received.Status == STATUS_SUCCESS);
    // Each RNR NAK the storm sent came back to the sender, which waited and retried.
    const ULONG64 naks = counter(p.client.adapter, "fault_rnr_naks") - storm_naks;
    CHECK(naks >= 7);  // 5 ms / 0.64 ms
    CHECK(counter(p.client.adapter, "rcvd_rnr_err") == received_rnr + naks);
    CHECK(e.took >= 5'000'000 - 2 * clean.took);
    CHECK(e.took < 5'000'000 + 700'000 + 100 * clean.took);
}

TEST_CASE("fault: an expired token fails the peer's RDMA with a remote access error",
          "[provider][faults][device]") {
    Pair p;
    NDK_SGE w = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1, p.server.remote_address(0),
                                            p.server.rtoken, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    SOFTNDK_FAULT f = fault(SoftNdkFaultExpireToken);
    f.Token = p.server.rtoken;
    REQUIRE(SoftNdkInjectFault(p.server.adapter, &f, nullptr) == STATUS_SUCCESS);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1, p.server.remote_address(0),
                                            p.server.rtoken, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);
}

TEST_CASE("fault: a vanished peer says nothing and the send times out without a disconnect",
          "[provider][faults][device]") {
    Disconnects client_seen, server_seen;
    ConnectOptions o;
    o.client_disconnect = Disconnects::cb;
    o.client_disconnect_context = &client_seen;
    o.server_disconnect = Disconnects::cb;
    o.server_disconnect_context = &server_seen;
    Pair p(o);
    SOFTNDK_FAULT f = fault(SoftNdkFaultPeerVanish, p.client.qp);
    ULONG id = 0;
    REQUIRE(SoftNdkInjectFault(p.client.adapter, &f, &id) == STATUS_SUCCESS);
    const Exchange e = send_once(p);
    CHECK(e.sent.result.Status == STATUS_IO_TIMEOUT);
    CHECK(client_seen.calls == 0);
    CHECK(server_seen.calls == 0);
    // The peer comes back for the teardown (its DREQs would wait for answers otherwise).
    CHECK(SoftNdkRemoveFault(p.client.adapter, id) == STATUS_SUCCESS);
}

TEST_CASE("fault: a CQ overrun reaches the notification callback as STATUS_BUFFER_OVERFLOW",
          "[provider][faults][device]") {
    Pair p;
    std::atomic<NTSTATUS> seen{STATUS_SUCCESS};
    p.client.on_notify_context.store(&seen);
    p.client.on_notify.store(
        [](PVOID ctx, NTSTATUS s) { static_cast<std::atomic<NTSTATUS> *>(ctx)->store(s); });
    SOFTNDK_FAULT f = fault(SoftNdkFaultCqOverrun);
    f.pCq = p.client.cq;
    REQUIRE(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_SUCCESS);
    const auto end = std::chrono::steady_clock::now() + kTimeout;
    while (seen.load() == STATUS_SUCCESS && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(1ms);
    CHECK(seen.load() == STATUS_BUFFER_OVERFLOW);
    // The CQ is dead: nothing more is ever returned from it.
    NDK_SGE s = p.client.sge(0, 8);
    CHECK(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    std::this_thread::sleep_for(20ms);
    NDK_RESULT_EX none{};
    CHECK(p.client.cq->Dispatch->NdkGetCqResultsEx(p.client.cq, &none, 1) == 0);
}

TEST_CASE("fault: an EQ storm runs the CQ's notification callback with no completion",
          "[provider][faults][device]") {
    Pair p;
    const int before = p.client.notifications.load();
    SOFTNDK_FAULT f = fault(SoftNdkFaultEqStorm);
    f.pCq = p.client.cq;
    f.Count = 5;
    REQUIRE(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_SUCCESS);
    const auto end = std::chrono::steady_clock::now() + kTimeout;
    while (p.client.notifications.load() < before + 5 && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);
    CHECK(p.client.notifications.load() == before + 5);
    NDK_RESULT_EX none{};
    CHECK(p.client.cq->Dispatch->NdkGetCqResultsEx(p.client.cq, &none, 1) == 0);
    f.Count = 0;  // 1..1024
    CHECK(SoftNdkInjectFault(p.client.adapter, &f, nullptr) == STATUS_INVALID_PARAMETER);
}

// Run with SOFTNDK_FAULTS=data/faults.ini and SOFTNDK_SEED=1 (CMakeLists.txt): the
// file's faults are armed when the device starts, for every consumer.
TEST_CASE("fault file: SOFTNDK_FAULTS fails the first QP and drops a fifth of the sends",
          "[.faults-file]") {
    {
        Wsk wsk;
        NDK_ADAPTER *adapter = nullptr;
        REQUIRE(wsk.open(&adapter) == STATUS_SUCCESS);
        NDK_PD *pd = nullptr;
        NDK_CQ *cq = nullptr;
        REQUIRE(adapter->Dispatch->NdkCreatePd(adapter, Done::create, nullptr, &pd) ==
                STATUS_SUCCESS);
        REQUIRE(adapter->Dispatch->NdkCreateCq(adapter, 16, Side::notify, nullptr, nullptr,
                                               Done::create, nullptr, &cq) == STATUS_SUCCESS);
        NDK_QP *qp = nullptr;
        CHECK(pd->Dispatch->NdkCreateQp(pd, cq, cq, nullptr, 8, 8, 1, 1, 0, Done::create, nullptr,
                                        &qp) == STATUS_INSUFFICIENT_RESOURCES);
        REQUIRE(pd->Dispatch->NdkCreateQp(pd, cq, cq, nullptr, 8, 8, 1, 1, 0, Done::create, nullptr,
                                          &qp) == STATUS_SUCCESS);
        CHECK(close_sync(qp) == STATUS_SUCCESS);
        CHECK(close_sync(cq) == STATUS_SUCCESS);
        CHECK(close_sync(pd) == STATUS_SUCCESS);
        wsk.close(adapter);
    }
    Pair p;
    int retried = 0;
    for (int i = 0; i < 10; ++i) {
        const Exchange e = send_once(p);
        CHECK(e.sent.result.Status == STATUS_SUCCESS);
        CHECK(e.received.Status == STATUS_SUCCESS);
        if (e.took >= kAckTimeoutNs) ++retried;
    }
    CHECK(retried > 0);   // some were lost and sent again
    CHECK(retried < 10);  // and not all
}

TEST_CASE("fault API from kernel-style C: a lossy QP's send fails STATUS_IO_TIMEOUT until removed",
          "[provider][faults][device]") {
    Pair p;
    ULONG id = 0;
    const ULONG64 drops = counter(p.client.adapter, "fault_drops");
    REQUIRE(FaultsCArmLossyTx(p.client.adapter, p.client.qp, &id) == STATUS_SUCCESS);
    CHECK(id != 0);
    // 8 losses: the first try and all 7 retries.
    CHECK(send_once(p).sent.result.Status == STATUS_IO_TIMEOUT);
    CHECK(FaultsCRemove(p.client.adapter, id) == STATUS_INVALID_PARAMETER);  // spent and gone
    CHECK(counter(p.client.adapter, "fault_drops") == drops + 8);
}
