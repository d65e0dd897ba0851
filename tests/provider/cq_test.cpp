// NdkResizeCq, NdkControlCqInterruptModeration, the overrun report and the SOLICITED and
// ERRORS arm types through the public CQ table, with completions produced by a real
// connection (embedded and daemon mode). Arming with ANY and notification once per arm
// are in data_path_test.cpp.
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include <softndk_ext.h>
#include <softndk_faults.h>
#include "ndk_test.hpp"
#include "provider.hpp"  // syndrome_status
#include "softndk/monotonic.hpp"

using namespace ndktest;
using namespace std::chrono_literals;

namespace {

// A connected pair with the client CQ's operations at hand.
struct CqPair : Pair {
    // One signaled 8-byte RDMA WRITE from the client: one completion on client.cq.
    void write(intptr_t context) {
        NDK_SGE s = client.sge(0, 8);
        REQUIRE(client.qp->Dispatch->NdkWrite(client.qp, reinterpret_cast<void *>(context), &s, 1,
                                              server.remote_address(0), server.rtoken,
                                              0) == STATUS_SUCCESS);
    }
    NTSTATUS resize(ULONG depth) {
        Done done;
        const NTSTATUS s = client.cq->Dispatch->NdkResizeCq(client.cq, depth, Done::request, &done);
        CHECK(s != STATUS_PENDING);  // built synchronously: no completion either
        CHECK(done.calls() == 0);
        return s;
    }
    NTSTATUS moderate(ULONG interval_us, ULONG count) {
        return client.cq->Dispatch->NdkControlCqInterruptModeration(client.cq, interval_us, count);
    }
    void arm() { client.cq->Dispatch->NdkArmCq(client.cq, NDK_CQ_NOTIFY_ANY); }
    bool wait_notifications(int n, std::chrono::milliseconds limit = 2000ms) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (client.notifications.load() < n) {
            if (std::chrono::steady_clock::now() > end) return false;
            std::this_thread::sleep_for(100us);
        }
        return true;
    }
    ULONG poll_now(NDK_RESULT_EX *out, ULONG n) {
        return client.cq->Dispatch->NdkGetCqResultsEx(client.cq, out, n);
    }
};

}  // namespace

TEST_CASE("NdkResizeCq keeps queued completions in order and checks its depth",
          "[provider][cq][device]") {
    CqPair p;
    // Three completions queued, each known to be there: its arm fired.
    for (int i = 0; i < 3; ++i) {
        p.arm();
        p.write(i);
        REQUIRE(p.wait_notifications(i + 1));
    }
    const ULONG max_depth = p.client.info.MaxCqDepth;
    CHECK(p.resize(0) == STATUS_INVALID_PARAMETER);
    CHECK(p.resize(max_depth + 1) == STATUS_INVALID_PARAMETER);
    // Shrinking below what is queued would lose completions (NDSPI: BUFFER_OVERFLOW).
    CHECK(p.resize(2) == STATUS_BUFFER_OVERFLOW);
    CHECK(p.resize(3) == STATUS_SUCCESS);
    CHECK(p.resize(1024) == STATUS_SUCCESS);
    NDK_RESULT_EX r[4]{};
    REQUIRE(p.poll_now(r, 4) == 3);
    for (int i = 0; i < 3; ++i) {
        CHECK(r[i].Status == STATUS_SUCCESS);
        CHECK(r[i].Type == NdkOperationTypeWrite);
        CHECK(r[i].RequestContext == reinterpret_cast<void *>(intptr_t(i)));
    }
    CHECK(p.poll_now(r, 4) == 0);
    // The resized CQ goes on: completions and notifications after the switch.
    p.arm();
    p.write(3);
    const NDK_RESULT_EX last = p.client.poll_one();
    CHECK(last.Status == STATUS_SUCCESS);
    CHECK(last.RequestContext == reinterpret_cast<void *>(intptr_t(3)));
    CHECK(p.wait_notifications(4));
}

TEST_CASE("NdkResizeCq while completions arrive loses and reorders nothing",
          "[provider][cq][device]") {
    CqPair p;
    constexpr int kTotal = 200;
    constexpr int kWindow = 16;  // never more queued than the smallest depth below
    std::atomic<int> completed{0};
    std::atomic<bool> post_failed{false};
    std::thread poster([&] {
        const auto end = std::chrono::steady_clock::now() + kTimeout;
        for (int i = 0; i < kTotal && std::chrono::steady_clock::now() < end;) {
            if (i - completed.load() >= kWindow) {
                std::this_thread::yield();
                continue;
            }
            NDK_SGE s = p.client.sge(0, 8);
            if (p.client.qp->Dispatch->NdkWrite(p.client.qp, reinterpret_cast<void *>(intptr_t(i)),
                                                &s, 1, p.server.remote_address(0), p.server.rtoken,
                                                0) != STATUS_SUCCESS) {
                post_failed = true;
                return;
            }
            ++i;
        }
    });
    int resizes = 0, bad_resizes = 0, out_of_order = 0;
    std::vector<NDK_RESULT_EX> r(kWindow);
    const auto end = std::chrono::steady_clock::now() + kTimeout;
    while (completed.load() < kTotal && !post_failed && std::chrono::steady_clock::now() < end) {
        const ULONG n = p.poll_now(r.data(), kWindow);
        for (ULONG i = 0; i < n; ++i) {
            if (r[i].Status != STATUS_SUCCESS ||
                r[i].RequestContext != reinterpret_cast<void *>(intptr_t(completed.load())))
                ++out_of_order;
            ++completed;
        }
        // Alternate a small and a large ring while the device keeps writing CQEs.
        if (resizes < 100) {
            bad_resizes += p.resize(resizes % 2 == 0 ? 32 : 600) != STATUS_SUCCESS;
            ++resizes;
        }
    }
    poster.join();
    CHECK_FALSE(post_failed);
    CHECK(completed.load() == kTotal);
    CHECK(out_of_order == 0);
    CHECK(bad_resizes == 0);
    CHECK(resizes > 0);
    NDK_RESULT_EX extra{};
    CHECK(p.poll_now(&extra, 1) == 0);  // nothing twice
}

TEST_CASE("NdkControlCqInterruptModeration: parameters", "[provider][cq][device]") {
    CqPair p;
    CHECK((p.client.info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED) != 0);
    const ULONG depth = 512;  // Side's CQ
    // Neither trigger could ever fire.
    CHECK(p.moderate(MAXULONG, MAXULONG) == STATUS_INVALID_PARAMETER_MIX);
    CHECK(p.moderate(MAXULONG, depth + 1) == STATUS_INVALID_PARAMETER_MIX);
    CHECK(p.moderate(MAXULONG, depth) == STATUS_SUCCESS);
    CHECK(p.moderate(0, 0) == STATUS_SUCCESS);
    CHECK(p.moderate(20, MAXULONG) == STATUS_SUCCESS);  // what M uses
    CHECK(p.moderate(100, 1) == STATUS_SUCCESS);
    CHECK(p.moderate(0, MAXULONG) == STATUS_SUCCESS);
    // "count > depth" follows NdkResizeCq.
    REQUIRE(p.resize(2048) == STATUS_SUCCESS);
    CHECK(p.moderate(MAXULONG, depth + 1) == STATUS_SUCCESS);
    REQUIRE(p.resize(64) == STATUS_SUCCESS);
    CHECK(p.moderate(MAXULONG, 65) == STATUS_INVALID_PARAMETER_MIX);
}

TEST_CASE("NdkControlCqInterruptModeration: the count holds the notification back",
          "[provider][cq][device]") {
    CqPair p;
    REQUIRE(p.moderate(MAXULONG, 4) == STATUS_SUCCESS);  // count alone
    p.arm();
    for (int i = 0; i < 3; ++i) {
        p.write(i);
        CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    }
    // Without moderation the first completion would have notified by now.
    std::this_thread::sleep_for(50ms);
    CHECK(p.client.notifications.load() == 0);
    p.write(3);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    CHECK(p.wait_notifications(1));
    // Off again: one notification per arm and completion, as by default.
    REQUIRE(p.moderate(0, 0) == STATUS_SUCCESS);
    p.arm();
    p.write(4);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    CHECK(p.wait_notifications(2));
}

namespace {
struct NotifiedAt {
    std::atomic<std::chrono::steady_clock::rep> when{0};
    static void on(PVOID ctx, NTSTATUS) {
        auto *self = static_cast<NotifiedAt *>(ctx);
        if (self->when.load() == 0)
            self->when = std::chrono::steady_clock::now().time_since_epoch().count();
    }
};
}  // namespace

TEST_CASE("NdkControlCqInterruptModeration: the interval notifies after the first completion",
          "[provider][cq][device]") {
    CqPair p;
    NotifiedAt at;
    p.client.on_notify_context = &at;
    p.client.on_notify = NotifiedAt::on;
    REQUIRE(p.moderate(20000, MAXULONG) == STATUS_SUCCESS);  // 20 ms, interval alone
    p.arm();
    const auto start = std::chrono::steady_clock::now();
    p.write(0);  // the device's timer starts at this completion, after `start`
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    REQUIRE(p.wait_notifications(1));
    p.client.on_notify = nullptr;
    const std::chrono::steady_clock::time_point notified{
        std::chrono::steady_clock::duration(at.when.load())};
    CHECK(notified - start >= 15ms);
    CHECK(p.client.notifications.load() == 1);
}

// ---- Overrun (ndkpi-api.md NDK_FN_CQ_NOTIFICATION_CALLBACK)

namespace {

struct SeenStatus {
    std::atomic<NTSTATUS> status{STATUS_SUCCESS};
    static void hook(PVOID ctx, NTSTATUS s) { static_cast<SeenStatus *>(ctx)->status.store(s); }
};

}  // namespace

TEST_CASE("A CQ overrun is reported to the notification callback as STATUS_BUFFER_OVERFLOW",
          "[provider][cq][device]") {
    Wsk wsk;
    Side owner(wsk, 1 << 20, 4);  // its CQ holds 2 * 4 = 8 results
    Side server{owner};           // a 64-deep QP on that CQ: it can outrun it
    Side client{wsk};
    connect(client, server);
    SeenStatus seen;
    owner.on_notify_context.store(&seen);
    owner.on_notify.store(SeenStatus::hook);
    // The overrun is reported whether or not the CQ is armed; nobody polls it meanwhile.
    constexpr int kMessages = 16;
    for (int i = 0; i < kMessages; ++i) {
        NDK_SGE rx = owner.sge(i * 64, 64);
        REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    }
    for (int i = 0; i < kMessages; ++i) {
        NDK_SGE tx = client.sge(0, 8);
        REQUIRE(client.qp->Dispatch->NdkSend(client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    }
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (seen.status.load() == STATUS_SUCCESS && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    CHECK(seen.status.load() == STATUS_BUFFER_OVERFLOW);
    CHECK(owner.notifications.load() >= 1);
    // What the ring held before the overrun is all there is: never more than its depth.
    std::vector<NDK_RESULT_EX> out(kMessages);
    const ULONG got = owner.cq->Dispatch->NdkGetCqResultsEx(owner.cq, out.data(), kMessages);
    CHECK(got <= 8);
}

// ---- Arm types (ndkpi-api.md 7.3)

namespace {

bool wait_for(const std::atomic<int> &counter, int n) {
    const auto end = std::chrono::steady_clock::now() + kTimeout;
    while (counter.load() < n) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(100us);
    }
    return true;
}

}  // namespace

TEST_CASE("NdkArmCq SOLICITED: a plain receive does not notify, a solicited one and an error do",
          "[provider][cq][device]") {
    CqPair p;
    Side &server = p.server;
    for (int i = 0; i < 3; ++i) {
        NDK_SGE rx = server.sge(i * 64, 64);
        REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    }
    server.cq->Dispatch->NdkArmCq(server.cq, NDK_CQ_NOTIFY_SOLICITED);
    NDK_SGE tx = p.client.sge(0, 8);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    NDK_RESULT_EX r = server.poll_one();  // the plain receive is there...
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK((r.Type & NdkOperationTypeReceive) != 0);
    std::this_thread::sleep_for(20ms);
    CHECK(server.notifications.load() == 0);  // ...and the SOLICITED arm is still waiting
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &tx, 1,
                                           NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) == STATUS_SUCCESS);
    REQUIRE(wait_for(server.notifications, 1));
    CHECK(server.poll_one().Status == STATUS_SUCCESS);
    // An error completion satisfies a SOLICITED arm too: 128 bytes into a 64-byte receive.
    server.cq->Dispatch->NdkArmCq(server.cq, NDK_CQ_NOTIFY_SOLICITED);
    NDK_SGE big = p.client.sge(0, 128);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &big, 1, 0) == STATUS_SUCCESS);
    REQUIRE(wait_for(server.notifications, 2));
    CHECK(server.poll_one().Status == STATUS_BUFFER_OVERFLOW);
    CHECK(server.notifications.load() == 2);
}

TEST_CASE("NdkArmCq SOLICITED then ANY before it fires: any completion notifies",
          "[provider][cq][device]") {
    CqPair p;
    Side &server = p.server;
    NDK_SGE rx = server.sge(0, 64);
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    // Re-arming merges: ANY wins over SOLICITED (ndkpi-api.md 7.3), in either order.
    server.cq->Dispatch->NdkArmCq(server.cq, NDK_CQ_NOTIFY_SOLICITED);
    server.cq->Dispatch->NdkArmCq(server.cq, NDK_CQ_NOTIFY_ANY);
    NDK_SGE tx = p.client.sge(0, 8);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    REQUIRE(wait_for(server.notifications, 1));  // a plain, unsolicited receive
    CHECK(server.poll_one().Status == STATUS_SUCCESS);
    CHECK(server.notifications.load() == 1);
}

TEST_CASE("NdkArmCq ERRORS: completions, failed ones included, do not satisfy it",
          "[provider][cq][device]") {
    CqPair p;
    p.client.cq->Dispatch->NdkArmCq(p.client.cq, NDK_CQ_NOTIFY_ERRORS);
    p.write(1);
    CHECK(p.client.poll_one().Status == STATUS_SUCCESS);
    NDK_SGE w = p.client.sge(0, 8);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1, p.server.remote_address(0),
                                            p.server.rtoken ^ 0x100, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);
    std::this_thread::sleep_for(20ms);
    CHECK(p.client.notifications.load() == 0);
    // Merged with ANY (7.3: ERRORS + ANY = ANY), the next completion notifies.
    p.client.cq->Dispatch->NdkArmCq(p.client.cq, NDK_CQ_NOTIFY_ANY);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1, p.server.remote_address(0),
                                            p.server.rtoken, 0) == STATUS_SUCCESS);
    CHECK(wait_for(p.client.notifications, 1));
}

// ---- The completion status table (docs/prm.md section 4) is the one the provider applies

TEST_CASE("Completion statuses: docs/prm.md's table is what the provider reports",
          "[provider][cq]") {
    std::ifstream prm(SOFTNDK_DOCS_DIR "/prm.md");
    REQUIRE(prm);
    const std::map<std::string, NTSTATUS> kNames = {
        {"STATUS_SUCCESS", STATUS_SUCCESS},
        {"STATUS_DATA_OVERRUN", STATUS_DATA_OVERRUN},
        {"STATUS_INTERNAL_ERROR", STATUS_INTERNAL_ERROR},
        {"STATUS_ACCESS_VIOLATION", STATUS_ACCESS_VIOLATION},
        {"STATUS_CANCELLED", STATUS_CANCELLED},
        {"STATUS_INVALID_DEVICE_REQUEST", STATUS_INVALID_DEVICE_REQUEST},
        {"STATUS_REMOTE_RESOURCES", STATUS_REMOTE_RESOURCES},
        {"STATUS_IO_TIMEOUT", STATUS_IO_TIMEOUT},
        {"STATUS_CONNECTION_ABORTED", STATUS_CONNECTION_ABORTED},
        {"STATUS_BUFFER_OVERFLOW", STATUS_BUFFER_OVERFLOW},
    };
    // Rows "| name | 0xNN | `STATUS_X` |" after the "### Completion statuses" heading.
    const std::regex row(R"(^\| [^|]+ \| (0x[0-9a-fA-F]{2}) \| `(STATUS_[A-Z_]+)` \|$)");
    std::set<unsigned> documented;
    bool in_section = false;
    for (std::string line; std::getline(prm, line);) {
        if (line.rfind("### ", 0) == 0) in_section = line == "### Completion statuses";
        std::smatch m;
        if (!in_section || !std::regex_match(line, m, row)) continue;
        const unsigned value = std::stoul(m[1].str(), nullptr, 16);
        INFO(line);
        REQUIRE(kNames.count(m[2].str()) == 1);
        CHECK(softndk::provider::syndrome_status(static_cast<softndk::hw::Syndrome>(value)) ==
              kNames.at(m[2].str()));
        documented.insert(value);
    }
    // Every syndrome the device produces has a row.
    using S = softndk::hw::Syndrome;
    for (S s : {S::kSuccess, S::kLocalLength, S::kLocalQpOperation, S::kLocalProtection,
                S::kWorkRequestFlushed, S::kMemoryWindowBind, S::kBadResponse, S::kLocalAccess,
                S::kRemoteInvalidRequest, S::kRemoteAccess, S::kRemoteOperation,
                S::kTransportRetryExceeded, S::kRnrRetryExceeded, S::kRemoteAborted,
                S::kReceiveOverflow}) {
        INFO("syndrome " << static_cast<unsigned>(s));
        CHECK(documented.count(static_cast<unsigned>(s)) == 1);
    }
    // And one it does not know reads as an internal error.
    CHECK(softndk::provider::syndrome_status(static_cast<S>(0xEE)) == STATUS_INTERNAL_ERROR);
}

// ---------------------------------------------------------------------------
// The model-time extension (softndk_ext.h): completions carry the model time at
// which the device wrote them (emulator/time/model.hpp).
// ---------------------------------------------------------------------------
namespace {

const SOFTNDK_MODEL_TIME_DISPATCH *model_time_of(NDK_CQ *cq, USHORT major = 1, USHORT minor = 0) {
    GUID id = SOFTNDK_MODEL_TIME_EXTENSION_GUID_INIT;
    NDK_VERSION v{};
    v.Major = major;
    v.Minor = minor;
    NDK_EXTENSION_INTERFACE iface{};
    if (cq->Dispatch->NdkQueryExtension(&cq->Header, &id, v, &iface) != STATUS_SUCCESS)
        return nullptr;
    return static_cast<const SOFTNDK_MODEL_TIME_DISPATCH *>(iface.Dispatch);
}

// One completion and its model time.
std::pair<NDK_RESULT, ULONG64> poll_timed(const SOFTNDK_MODEL_TIME_DISPATCH &ext, NDK_CQ *cq) {
    NDK_RESULT r{};
    ULONG64 t = 0;
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (ext.SoftNdkGetCqResultsWithTime(cq, &r, &t, 1) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            FAIL_CHECK("no completion within the timeout");
            break;
        }
        std::this_thread::yield();
    }
    return {r, t};
}

}  // namespace

TEST_CASE("The model-time extension is offered at version 1.0 on a CQ",
          "[provider][cq][time][device]") {
    Pair p;
    CHECK(model_time_of(p.client.cq) != nullptr);
    CHECK(model_time_of(p.client.cq, 1, 1) == nullptr);  // a newer minor than built
    CHECK(model_time_of(p.client.cq, 2, 0) == nullptr);
    GUID other = SOFTNDK_MW_EXTENSION_GUID_INIT;
    NDK_EXTENSION_INTERFACE iface{};
    NDK_VERSION v{};
    v.Major = 1;
    CHECK(p.client.cq->Dispatch->NdkQueryExtension(&p.client.cq->Header, &other, v, &iface) ==
          STATUS_NOT_SUPPORTED);
}

TEST_CASE("Completions carry model times in causal order and the consumer's clock follows",
          "[provider][cq][time][device]") {
    Pair p;
    const auto *ext = model_time_of(p.client.cq);
    REQUIRE(ext != nullptr);
    const auto *server_ext = model_time_of(p.server.cq);
    REQUIRE(server_ext != nullptr);
    CHECK(ext->SoftNdkGetTimeMode(p.client.cq) == SOFTNDK_TIME_MODE_FUNCTIONAL);
    NDK_SGE r = p.server.sge(0, 256);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    const ULONG64 start = ext->SoftNdkGetModelTime(p.client.cq);
    NDK_SGE s = p.client.sge(0, 64);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    const auto [received, received_at] = poll_timed(*server_ext, p.server.cq);
    const auto [sent, sent_at] = poll_timed(*ext, p.client.cq);
    CHECK(received.Status == STATUS_SUCCESS);
    CHECK(sent.Status == STATUS_SUCCESS);
    // The data reached the server after the post; the sender learns of it from the
    // ACK, which comes back after that.
    CHECK(received_at > start);
    CHECK(sent_at > received_at);
    // The consumer saw both: its clock is at least the later one, so the next post is
    // dated after it, and so is its completion.
    const ULONG64 second_start = ext->SoftNdkGetModelTime(p.client.cq);
    CHECK(second_start >= sent_at);
    REQUIRE(p.server.qp->Dispatch->NdkReceive(p.server.qp, nullptr, &r, 1) == STATUS_SUCCESS);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &s, 1, 0) == STATUS_SUCCESS);
    const auto [received2, received2_at] = poll_timed(*server_ext, p.server.cq);
    const auto [sent2, sent2_at] = poll_timed(*ext, p.client.cq);
    CHECK(received2_at > sent_at);
    CHECK(sent2_at > received2_at);
    // A round trip costs the same the second time (contexts cached by then, so at
    // most as much).
    CHECK(sent2_at - second_start <= sent_at - start);
    // Argument checks: no times array, no results.
    NDK_RESULT none{};
    CHECK(ext->SoftNdkGetCqResultsWithTime(p.client.cq, &none, nullptr, 1) == 0);
}

TEST_CASE(
    "A completion dated before an event another handle delivered is returned by the first poll "
    "after it",
    "[provider][cq][time][device]") {
    // rdma-channel's shape: the server's connector, and so its disconnect event, on
    // handle A; its QP and CQ on handle B. A driver that drains its CQ once the
    // disconnect event came must find every completion the device wrote before the
    // disconnect: a process's handles on one interface share one clock
    // (provider/model_time.hpp).
    Wsk wsk;
    Handle listening(wsk);
    Side client(wsk), server(wsk);
    Done server_disconnected;
    ConnectOptions o;
    o.listener_adapter = listening.adapter;
    o.server_disconnect = [](PVOID ctx) { static_cast<Done *>(ctx)->signal(STATUS_SUCCESS); };
    o.server_disconnect_context = &server_disconnected;
    connect(client, server, o);
    const auto *ext = model_time_of(server.cq);
    REQUIRE(ext != nullptr);
    // The server answers. Its SEND completes when the client's ACK is back, dated in the
    // model future of what anyone has seen: nothing polled the server's CQ yet.
    NDK_SGE rx = client.sge(0, 64);
    REQUIRE(client.qp->Dispatch->NdkReceive(client.qp, nullptr, &rx, 1) == STATUS_SUCCESS);
    NDK_SGE tx = server.sge(0, 8);
    void *const answer = reinterpret_cast<void *>(7);
    REQUIRE(server.qp->Dispatch->NdkSend(server.qp, answer, &tx, 1, 0) == STATUS_SUCCESS);
    CHECK(client.poll_one().Status == STATUS_SUCCESS);
    // The client disconnects, having seen the answer; the event reaches handle A.
    Done disconnected;
    REQUIRE(finish(client.connector->Dispatch->NdkDisconnect(client.connector, Done::request,
                                                             &disconnected),
                   disconnected) == STATUS_SUCCESS);
    REQUIRE(server_disconnected.wait());
    // Handle B's first poll after the event returns the SEND's completion, dated before
    // the clock the event moved.
    const ULONG64 clock = ext->SoftNdkGetModelTime(server.cq);
    NDK_RESULT r{};
    ULONG64 at = 0;
    REQUIRE(ext->SoftNdkGetCqResultsWithTime(server.cq, &r, &at, 1) == 1);
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.RequestContext == answer);
    CHECK(at <= clock);
}

// Run with SOFTNDK_TIME=paced (CMakeLists.txt): model time is the monotonic clock, and
// no completion is returned before its time.
TEST_CASE("Paced mode: no completion is returned before its model time", "[.paced]") {
    Pair p;
    const auto *ext = model_time_of(p.client.cq);
    REQUIRE(ext != nullptr);
    REQUIRE(ext->SoftNdkGetTimeMode(p.client.cq) == SOFTNDK_TIME_MODE_PACED);
    for (int i = 0; i < 20; ++i) {
        const ULONG64 posted = softndk::monotonic_ns();
        CHECK(ext->SoftNdkGetModelTime(p.client.cq) >= posted);
        NDK_SGE s = p.client.sge(0, 64);
        REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &s, 1,
                                                p.server.remote_address(0), p.server.rtoken,
                                                0) == STATUS_SUCCESS);
        const auto [done, done_at] = poll_timed(*ext, p.client.cq);
        const ULONG64 seen = softndk::monotonic_ns();
        CHECK(done.Status == STATUS_SUCCESS);
        CHECK(done_at > posted);
        CHECK(seen >= done_at);             // never before its time
        CHECK(done_at - posted < 1000000);  // a round trip of the model, not of a timer
    }
}

TEST_CASE("A receive posted to a QP in error is flushed once its consumer polls or arms the CQ",
          "[provider][cq][device]") {
    // A receive's doorbell alone does not ring the device (Adapter::ring): the flush of a
    // receive posted to a QP in error comes with the consumer's next poll or arm.
    CqPair p;
    Side &server = p.server;
    // The client's write with a bad token moves the server's QP to error; with no
    // receive posted, nothing completes on the server's CQ.
    NDK_SGE w = p.client.sge(0, 8);
    REQUIRE(p.client.qp->Dispatch->NdkWrite(p.client.qp, nullptr, &w, 1, server.remote_address(0),
                                            server.rtoken ^ 0x100, 0) == STATUS_SUCCESS);
    CHECK(p.client.poll_one().Status == STATUS_REMOTE_RESOURCES);
    SECTION("polled") {
        NDK_SGE rx = server.sge(0, 64);
        REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, reinterpret_cast<void *>(5), &rx, 1) ==
                STATUS_SUCCESS);
        const NDK_RESULT_EX r = server.poll_one();
        CHECK(r.RequestContext == reinterpret_cast<void *>(5));
        CHECK(r.Type == NdkOperationTypeReceive);
        CHECK(r.Status == STATUS_CANCELLED);
    }
    SECTION("armed, never polled before the notification") {
        NDK_SGE rx = server.sge(0, 64);
        REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, reinterpret_cast<void *>(6), &rx, 1) ==
                STATUS_SUCCESS);
        server.cq->Dispatch->NdkArmCq(server.cq, NDK_CQ_NOTIFY_ANY);
        REQUIRE(wait_for(server.notifications, 1));
        const NDK_RESULT_EX r = server.poll_one();
        CHECK(r.RequestContext == reinterpret_cast<void *>(6));
        CHECK(r.Status == STATUS_CANCELLED);
    }
}

TEST_CASE("Posting a receive to a healthy QP does not ring the device", "[provider][cq][device]") {
    // Embedded mode, where a ring is Device::service on the posting thread and the
    // `doorbells` counter counts those calls (the daemon's doorbell thread calls it on
    // its own schedule). The receive is still there for the SEND that needs it.
    const char *mode = std::getenv("SOFTNDK_MODE");
    if (mode != nullptr && std::string(mode) == "daemon") return;
    CqPair p;
    Side &server = p.server;
    auto doorbells = [&server] {
        ULONG64 value = 0;
        REQUIRE(SoftNdkQueryCounter(server.adapter, "doorbells", &value) == STATUS_SUCCESS);
        return value;
    };
    const ULONG64 before = doorbells();
    NDK_SGE rx = server.sge(0, 64);
    REQUIRE(server.qp->Dispatch->NdkReceive(server.qp, reinterpret_cast<void *>(8), &rx, 1) ==
            STATUS_SUCCESS);
    CHECK(doorbells() == before);
    // Nor does the poll that finds nothing after it: no QP of the adapter is in error, so
    // there is nothing for the device to flush (hw::ContextControlPage::qps_in_error).
    NDK_RESULT_EX none{};
    CHECK(server.cq->Dispatch->NdkGetCqResultsEx(server.cq, &none, 1) == 0);
    CHECK(doorbells() == before);
    NDK_SGE tx = p.client.sge(0, 8);
    REQUIRE(p.client.qp->Dispatch->NdkSend(p.client.qp, nullptr, &tx, 1, 0) == STATUS_SUCCESS);
    const NDK_RESULT_EX r = server.poll_one();
    CHECK(r.RequestContext == reinterpret_cast<void *>(8));
    CHECK(r.Status == STATUS_SUCCESS);
    CHECK(r.BytesTransferred == 8);
}
