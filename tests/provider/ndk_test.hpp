// ndk_test.hpp - helpers for the provider tests. Everything goes through the
// public surface a consumer has: the WSK calls, WSK_PROVIDER_NDK_DISPATCH and
// the NDK dispatch tables of the objects it returns.
#pragma once

#include <ndkpi.h>
#include <ws2ipdef.h>
#include <wsk.h>
#include <wskndk.h>

#include <arpa/inet.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace ndktest {

constexpr NET_IFINDEX kIfIndex = 1;  // the default embedded adapter (127.0.0.1, ::1)
constexpr auto kTimeout = std::chrono::seconds(10);

// A one-shot (or counting) completion, usable as NDK_FN_REQUEST_COMPLETION,
// NDK_FN_CLOSE_COMPLETION and NDK_FN_CREATE_COMPLETION context.
struct Done {
    std::mutex m;
    std::condition_variable cv;
    int count = 0;
    NTSTATUS status = STATUS_PENDING;

    void signal(NTSTATUS s) {
        std::lock_guard l(m);
        status = s;
        ++count;
        cv.notify_all();
    }
    bool wait(int n = 1) {
        std::unique_lock l(m);
        return cv.wait_for(l, kTimeout, [&] { return count >= n; });
    }
    int calls() {
        std::lock_guard l(m);
        return count;
    }
    static void request(PVOID ctx, NTSTATUS s) { static_cast<Done *>(ctx)->signal(s); }
    static void close(PVOID ctx) { static_cast<Done *>(ctx)->signal(STATUS_SUCCESS); }
    static void create(PVOID, NTSTATUS, NDK_OBJECT_HEADER *) { FAIL("creates complete inline"); }
};

// Result of an async call: inline status, or the completion's status.
inline NTSTATUS finish(NTSTATUS inline_status, Done &done) {
    if (inline_status != STATUS_PENDING) return inline_status;
    REQUIRE(done.wait());
    return done.status;
}

// Slot 0 of each object's own table.
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_PD *o) {
    return o->Dispatch->NdkClosePd;
}
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_CQ *o) {
    return o->Dispatch->NdkCloseCq;
}
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_QP *o) {
    return o->Dispatch->NdkCloseQp;
}
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_MR *o) {
    return o->Dispatch->NdkCloseMr;
}
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_MW *o) {
    return o->Dispatch->NdkCloseMw;
}
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_SRQ *o) {
    return o->Dispatch->NdkCloseSrq;
}
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_CONNECTOR *o) {
    return o->Dispatch->NdkCloseConnector;
}
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_SHARED_ENDPOINT *o) {
    return o->Dispatch->NdkCloseSharedEndpoint;
}
inline NDK_FN_CLOSE_OBJECT close_fn(NDK_LISTENER *o) {
    return o->Dispatch->NdkCloseListener;
}

// Closes an object and waits for the close to finish (inline or callback).
// Never throws (it runs in destructors): a close that does not finish in
// time is reported and answered with STATUS_IO_TIMEOUT.
template <class T>
NTSTATUS close_sync(T *object) {
    Done done;
    const NTSTATUS s = close_fn(object)(&object->Header, Done::close, &done);
    if (s != STATUS_PENDING) return s;
    if (!done.wait()) {
        FAIL_CHECK("close did not complete");
        return STATUS_IO_TIMEOUT;
    }
    return done.status;
}

// The WSK path: register, capture, fetch the NDK dispatch.
struct Wsk {
    WSK_CLIENT_DISPATCH client_dispatch{MAKE_WSK_VERSION(1, 0), 0, nullptr};
    WSK_CLIENT_NPI client_npi{nullptr, &client_dispatch};
    WSK_REGISTRATION registration{};
    WSK_PROVIDER_NPI npi{};
    WSK_PROVIDER_NDK_DISPATCH ndk{};

    Wsk() {
        REQUIRE(WskRegister(&client_npi, &registration) == STATUS_SUCCESS);
        REQUIRE(WskCaptureProviderNPI(&registration, WSK_INFINITE_WAIT, &npi) == STATUS_SUCCESS);
        REQUIRE(npi.Dispatch->WskControlClient(npi.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0,
                                               nullptr, sizeof ndk, &ndk, nullptr,
                                               nullptr) == STATUS_SUCCESS);
    }
    ~Wsk() {
        WskReleaseProviderNPI(&registration);
        WskDeregister(&registration);
    }
    NTSTATUS open(NDK_ADAPTER **out, NDK_VERSION v = {1, 0}) {
        return ndk.WskOpenNdkAdapter(npi.Client, v, kIfIndex, out);
    }
    void close(NDK_ADAPTER *a) { ndk.WskCloseNdkAdapter(npi.Client, a); }
};

// One more WskOpenNdkAdapter of the default interface; closed last (declare it before
// the Sides whose connector or listener it creates).
struct Handle {
    Wsk &wsk;
    NDK_ADAPTER *adapter = nullptr;
    explicit Handle(Wsk &w) : wsk(w) { REQUIRE(wsk.open(&adapter) == STATUS_SUCCESS); }
    ~Handle() { wsk.close(adapter); }
};

inline NDK_ADAPTER_INFO query_info(NDK_ADAPTER *a) {
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    REQUIRE(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size) == STATUS_SUCCESS);
    return info;
}

// An MDL describing [va, va + length) (what IoAllocateMdl builds).
inline MDL make_mdl(void *va, size_t length) {
    MDL m{};
    const auto p = reinterpret_cast<uintptr_t>(va);
    m.StartVa = reinterpret_cast<PVOID>(p & ~uintptr_t{PAGE_SIZE - 1});
    m.ByteOffset = static_cast<ULONG>(p & (PAGE_SIZE - 1));
    m.ByteCount = static_cast<ULONG>(length);
    return m;
}

inline sockaddr_in6 ipv6_loopback(uint16_t port) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    a.sin6_addr = in6addr_loopback;
    return a;
}

inline sockaddr_in ipv4(const char *text, uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, text, &a.sin_addr);
    return a;
}

// One side of a connection: adapter, PD, one CQ for both queues, QP, and a
// registered buffer.
struct Side {
    Wsk &wsk;
    NDK_ADAPTER *adapter = nullptr;
    NDK_ADAPTER_INFO info{};
    NDK_PD *pd = nullptr;
    NDK_CQ *cq = nullptr;
    NDK_QP *qp = nullptr;
    NDK_MR *mr = nullptr;
    NDK_CONNECTOR *connector = nullptr;
    NDK_LISTENER *listener = nullptr;
    std::vector<unsigned char> buffer;
    bool borrowed = false;  // adapter, PD, CQ and MR belong to another Side
    MDL mdl{};
    UINT32 ltoken = 0, rtoken = 0;
    UINT32 privileged = 0;  // the PD's privileged token, fetched before any MR exists
    std::atomic<int> notifications{0};
    // Extra hook run by the notification callback (set the context first).
    std::atomic<NDK_FN_CQ_NOTIFICATION_CALLBACK> on_notify{nullptr};
    std::atomic<void *> on_notify_context{nullptr};

    explicit Side(Wsk &w, size_t buffer_bytes = 1 << 20, ULONG depth = 256);
    // A second QP on `owner`'s adapter, PD and CQ, for tests of PD-wide keys. It has no
    // buffer or MR of its own (use the owner's) and closes only its QP and connection;
    // it must be destroyed before `owner`.
    explicit Side(Side &owner);
    ~Side() { cleanup(); }
    void cleanup();  // closes whatever is open, connector first, adapter last
    static void notify(PVOID ctx, NTSTATUS s);
    NDK_SGE sge(size_t offset, ULONG length) {
        NDK_SGE s{};
        s.VirtualAddress = buffer.data() + offset;
        s.Length = length;
        s.MemoryRegionToken = ltoken;
        return s;
    }
    UINT64 remote_address(size_t offset) {
        return reinterpret_cast<uintptr_t>(buffer.data()) + offset;
    }
    // Polls until one result arrives (or times out: Status stays PENDING).
    NDK_RESULT_EX poll_one();
    size_t drain(std::vector<NDK_RESULT_EX> &out, size_t n);
};

// Connects `client` to `server` (listener on the server's adapter, port 0),
// with private data both ways. Returns false (with FAILs) on error.
struct ConnectOptions {
    std::vector<unsigned char> caller_data{1, 2, 3, 4, 5};
    std::vector<unsigned char> callee_data{9, 8, 7};
    NDK_FN_DISCONNECT_EVENT_CALLBACK client_disconnect = nullptr;
    void *client_disconnect_context = nullptr;
    NDK_FN_DISCONNECT_EVENT_CALLBACK server_disconnect = nullptr;
    void *server_disconnect_context = nullptr;
    // Set: NdkCompleteConnectEx / NdkAcceptEx (2.1) with these callbacks instead.
    NDK_FN_DISCONNECT_EVENT_CALLBACK_EX client_disconnect_ex = nullptr;
    NDK_FN_DISCONNECT_EVENT_CALLBACK_EX server_disconnect_ex = nullptr;
    // Set: the client connects through NdkConnectWithSharedEndpoint.
    NDK_SHARED_ENDPOINT *shared_endpoint = nullptr;
    std::vector<unsigned char> *seen_by_server = nullptr;  // caller data as the server saw it
    std::vector<unsigned char> *seen_by_client = nullptr;
    ULONG *server_rds = nullptr;
    bool ipv6 = false;  // ::1 instead of 127.0.0.1
    // Another handle of the same interface to listen on (so the server's connector comes
    // from it while the accepted QP is the server's), and one to create the client's
    // connector on: as drivers do that open an interface several times.
    NDK_ADAPTER *listener_adapter = nullptr;
    NDK_ADAPTER *connector_adapter = nullptr;
    // Read limits each side asks for (InboundReadLimit / OutboundReadLimit).
    ULONG client_ird = 4, client_ord = 4;
    ULONG server_ird = 4, server_ord = 4;
};
void connect(Side &client, Side &server, ConnectOptions options = {});

// Two sides on the default adapter, the client connected to the server.
struct Pair {
    Wsk wsk;
    Side client{wsk};
    Side server{wsk};
    explicit Pair(ConnectOptions options = {}) { connect(client, server, std::move(options)); }
};

// A connect-event sink: counts the requests delivered and keeps the last connector
// (owned by the test: accept, reject or close it).
struct Incoming {
    std::atomic<NDK_CONNECTOR *> connector{nullptr};
    std::atomic<int> events{0};
    static void on_connect(PVOID ctx, NDK_CONNECTOR *c);
    bool wait(int n = 1);  // until `n` requests were delivered; false on timeout
};

// A listener on 127.0.0.1 (port chosen by the device) on `s`'s adapter, stored in
// s.listener; returns the address NdkGetLocalAddress reports.
sockaddr_in listen_on(Side &s, Incoming &incoming);

// NdkConnect from 127.0.0.1 (port 0) to `to` on client.qp, creating client.connector
// if there is none; returns the inline status (`done` completes if STATUS_PENDING).
NTSTATUS start_connect(Side &client, sockaddr_in to, Done &done, const void *private_data = nullptr,
                       ULONG private_data_bytes = 0);

// start_connect without private data; returns the final status of the request.
NTSTATUS try_connect(Side &client, sockaddr_in to);

}  // namespace ndktest
