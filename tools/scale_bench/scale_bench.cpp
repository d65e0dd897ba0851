// scale_bench.cpp - `softndk-scale-bench`: how far one virtual RNIC scales, measured the
// way a kernel consumer would meet the limits: through the NDK API of the provider
// (WskOpenNdkAdapter, NdkCreateQp, NdkCreateMr + NdkRegisterMr, NdkConnect / NdkAccept /
// NdkDisconnect), embedded or through `softndk rnic` (SOFTNDK_MODE=daemon). It is a
// benchmark (bench/scale.sh runs it), not a test: it prints figures, one `key=value`
// line per measure, on stdout.
//
//   softndk-scale-bench [OPTIONS] qps COUNT           create QPs on one CQ until COUNT or a
//                                                     refusal
//   softndk-scale-bench [OPTIONS] mrs COUNT [BYTES]   COUNT registrations of BYTES (default
//                                                     64) each, side by side in one pool;
//                                                     refused ones counted
//   softndk-scale-bench [OPTIONS] connects COUNT      COUNT connect + accept + complete +
//                                                     disconnect cycles between two handles
//                                                     of one adapter, --in-flight N at once
//   OPTIONS: --adapter NAME (default: the first adapter), --daemon-pid PID, --in-flight N
//            (connects set up at once, as rdma-core's cmtime does; default 1)
//
// Memory: the consumer's resident set (VmRSS) before and after, and, with --daemon-pid,
// the daemon's too; divided by the count they are the bytes per object on each side.
// Objects are closed at the end (timed too).
#include <ndkpi.h>
#include <ntddk.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "ndk.hpp"

using namespace softndk::tool;
using Clock = std::chrono::steady_clock;

namespace {

constexpr ULONG kPoolTag = 0x6353424E;  // 'NBSc'

// VmRSS of /proc/PID/status in bytes (0 if it cannot be read).
uint64_t resident_bytes(const std::string &pid) {
    std::ifstream in("/proc/" + pid + "/status");
    for (std::string key; in >> key;) {
        if (key == "VmRSS:") {
            uint64_t kb = 0;
            in >> kb;
            return kb * 1024;
        }
        std::string rest;
        std::getline(in, rest);
    }
    return 0;
}

// --daemon-pid: whose resident set is the daemon's ("" = none).
std::string daemon_pid;

// The consumer's and (with --daemon-pid) the daemon's resident sets.
struct Resident {
    uint64_t consumer = 0;
    uint64_t daemon = 0;
    static Resident now() {
        Resident r;
        r.consumer = resident_bytes("self");
        if (!daemon_pid.empty()) r.daemon = resident_bytes(daemon_pid);
        return r;
    }
};

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void print_memory(const char *what, uint64_t count, const Resident &before, const Resident &after) {
    if (count == 0) return;
    const auto per = [count](uint64_t a, uint64_t b) {
        return b > a ? static_cast<double>(b - a) / static_cast<double>(count) : 0.0;
    };
    fmt::print("consumer_bytes_per_{}={:.0f}\n", what, per(before.consumer, after.consumer));
    if (before.daemon != 0)
        fmt::print("daemon_bytes_per_{}={:.0f}\n", what, per(before.daemon, after.daemon));
}

softndk_adapter find_adapter(const char *name) {
    softndk_adapter a{};
    char error[512];
    if (softndk_adapter_find(name, &a, error, sizeof error) != 0) throw std::runtime_error(error);
    return a;
}

// A create: the object arrives through `*out` inline, or through the completion after
// STATUS_PENDING. Throws on failure.
template <class T>
void create(Completion &done, NTSTATUS inline_status, T **out, const char *call) {
    check(done.finish(inline_status), call);
    if (inline_status == STATUS_PENDING) *out = reinterpret_cast<T *>(done.object);
}

void close_object(NDK_OBJECT_HEADER *object, NDK_FN_CLOSE_OBJECT close) {
    Completion done;
    done.finish(close(object, Completion::on_close, &done));
}

VOID ignore_notification(PVOID, NTSTATUS) {}

// One adapter with one PD and one CQ (never armed: nothing here polls it), on which the
// runs create their QPs and connectors.
struct AdapterSide {
    NDK_ADAPTER *adapter = nullptr;
    NDK_PD *pd = nullptr;
    NDK_CQ *cq = nullptr;

    AdapterSide(const WskClient &wsk, const softndk_adapter &a) : adapter(wsk.open(a.if_index)) {
        Completion done;
        create(done, adapter->Dispatch->NdkCreatePd(adapter, Completion::on_create, &done, &pd),
               &pd, "NdkCreatePd");
        done.reset();
        create(done,
               adapter->Dispatch->NdkCreateCq(adapter, 64, ignore_notification, nullptr, nullptr,
                                              Completion::on_create, &done, &cq),
               &cq, "NdkCreateCq");
    }
    // A QP of depth 1 each way on the CQ; the final status of NdkCreateQp.
    NTSTATUS try_create_qp(NDK_QP **qp) {
        Completion done;
        const NTSTATUS inline_status = pd->Dispatch->NdkCreateQp(pd, cq, cq, nullptr, 1, 1, 1, 1, 0,
                                                                 Completion::on_create, &done, qp);
        const NTSTATUS s = done.finish(inline_status);
        if (NT_SUCCESS(s) && inline_status == STATUS_PENDING)
            *qp = reinterpret_cast<NDK_QP *>(done.object);
        return s;
    }
    NDK_QP *create_qp() {
        NDK_QP *qp = nullptr;
        check(try_create_qp(&qp), "NdkCreateQp");
        return qp;
    }
    NDK_CONNECTOR *create_connector() {
        Completion done;
        NDK_CONNECTOR *c = nullptr;
        create(done,
               adapter->Dispatch->NdkCreateConnector(adapter, Completion::on_create, &done, &c), &c,
               "NdkCreateConnector");
        return c;
    }
    void close(const WskClient &wsk) {
        close_object(&cq->Header, cq->Dispatch->NdkCloseCq);
        close_object(&pd->Header, pd->Dispatch->NdkClosePd);
        wsk.close(adapter);
    }
};

// ---- qps: QPs on one adapter, one PD, one CQ, until `count` or the first refusal.
int run_qps(const WskClient &wsk, const softndk_adapter &adapter, uint64_t count) {
    AdapterSide side(wsk, adapter);
    std::vector<NDK_QP *> qps;
    qps.reserve(count);
    NTSTATUS refusal = STATUS_SUCCESS;
    const Resident before = Resident::now();
    const auto start = Clock::now();
    while (qps.size() < count) {
        NDK_QP *qp = nullptr;
        if (const NTSTATUS s = side.try_create_qp(&qp); !NT_SUCCESS(s)) {
            refusal = s;
            break;
        }
        qps.push_back(qp);
    }
    const double create_s = seconds_since(start);
    const Resident after = Resident::now();
    fmt::print("qps_created={}\n", qps.size());
    if (refusal != STATUS_SUCCESS) fmt::print("qps_refused_with={}\n", status_text(refusal));
    fmt::print("qps_create_per_s={:.0f}\n", static_cast<double>(qps.size()) / create_s);
    print_memory("qp", qps.size(), before, after);
    const auto close_start = Clock::now();
    for (NDK_QP *qp : qps)
        close_object(&qp->Header, qp->Dispatch->NdkCloseQp);
    fmt::print("qps_close_s={:.2f}\n", seconds_since(close_start));
    side.close(wsk);
    return qps.size() == count ? 0 : 1;
}

// ---- mrs: `count` registrations of `bytes` each, side by side in one non-paged pool.
int run_mrs(const WskClient &wsk, const softndk_adapter &adapter, uint64_t count, uint64_t bytes) {
    NDK_ADAPTER *a = wsk.open(adapter.if_index);
    Completion done;
    NDK_PD *pd = nullptr;
    create(done, a->Dispatch->NdkCreatePd(a, Completion::on_create, &done, &pd), &pd,
           "NdkCreatePd");
    const uint64_t pool_bytes = count * bytes;
    auto *pool =
        static_cast<uint8_t *>(ExAllocatePoolWithTag(NonPagedPoolNx, pool_bytes, kPoolTag));
    if (pool == nullptr) throw NdkError("ExAllocatePoolWithTag", STATUS_NO_MEMORY);
    std::memset(pool, 0, pool_bytes);
    struct Registration {
        NDK_MR *mr;
        PMDL mdl;
    };
    std::vector<Registration> mrs;
    mrs.reserve(count);
    NTSTATUS refusal = STATUS_SUCCESS;
    const Resident before = Resident::now();
    const auto start = Clock::now();
    uint64_t refused = 0;
    for (uint64_t attempt = 0; attempt < count; ++attempt) {
        uint8_t *buffer = pool + attempt * bytes;
        PMDL mdl = IoAllocateMdl(buffer, static_cast<ULONG>(bytes), FALSE, FALSE, nullptr);
        if (mdl == nullptr) throw NdkError("IoAllocateMdl", STATUS_INSUFFICIENT_RESOURCES);
        MmBuildMdlForNonPagedPool(mdl);
        NDK_MR *mr = nullptr;
        done.reset();
        const NTSTATUS inline_status =
            pd->Dispatch->NdkCreateMr(pd, FALSE, Completion::on_create, &done, &mr);
        NTSTATUS s = done.finish(inline_status);
        if (NT_SUCCESS(s)) {
            if (inline_status == STATUS_PENDING) mr = reinterpret_cast<NDK_MR *>(done.object);
            done.reset();
            s = done.finish(mr->Dispatch->NdkRegisterMr(
                mr, mdl, bytes, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                Completion::on_request, &done));
            if (!NT_SUCCESS(s)) close_object(&mr->Header, mr->Dispatch->NdkCloseMr);
        }
        if (!NT_SUCCESS(s)) {
            // Refused (a quota, a full table): every attempt is still made, so a daemon
            // gets all `count` of them (issue 16: it must refuse cleanly and live).
            IoFreeMdl(mdl);
            if (refused++ == 0) refusal = s;
            continue;
        }
        mrs.push_back({mr, mdl});
    }
    const double register_s = seconds_since(start);
    const Resident after = Resident::now();
    fmt::print("mrs_registered={}\n", mrs.size());
    if (refusal != STATUS_SUCCESS) {
        fmt::print("mrs_refused={}\n", refused);
        fmt::print("mrs_refused_with={}\n", status_text(refusal));
    }
    if (refused == 0) {
        fmt::print("mrs_register_per_s={:.0f}\n", static_cast<double>(mrs.size()) / register_s);
    } else {  // most of the time went to refusals: the rate of attempts says more
        fmt::print("mrs_attempts_per_s={:.0f}\n", static_cast<double>(count) / register_s);
    }
    print_memory("mr", mrs.size(), before, after);
    const auto close_start = Clock::now();
    for (auto &r : mrs) {
        done.reset();
        done.finish(r.mr->Dispatch->NdkDeregisterMr(r.mr, Completion::on_request, &done));
        close_object(&r.mr->Header, r.mr->Dispatch->NdkCloseMr);
        IoFreeMdl(r.mdl);
    }
    fmt::print("mrs_close_s={:.2f}\n", seconds_since(close_start));
    ExFreePoolWithTag(pool, kPoolTag);
    close_object(&pd->Header, pd->Dispatch->NdkClosePd);
    wsk.close(a);
    return 0;  // refusals are figures (mrs_refused), not failures
}

// ---- connects: `count` connections between two adapters of this process, as rdma-core's
// cmtime measures them: up to `in_flight` connections are being set up at once (1: one
// after the other), each QP pair connected once (an NDK QP is not reconnected after a
// disconnect). The QPs are created first, untimed. The clock runs over connect + accept +
// complete, then over disconnect and the close of every connector. Each side reads the
// connection as a consumer does (local and peer address, private data), and the server
// checks the client's private data.
//
// All NDK calls are made on the main thread; the callbacks only queue what happened.
struct ConnectBench {
    enum class Kind { kRequest, kConnected, kCompleted, kAccepted, kDisconnected };
    struct Happened {
        Kind kind;
        size_t index = 0;  // the connection (kRequest: none yet)
        NTSTATUS status = STATUS_SUCCESS;
        NDK_CONNECTOR *incoming = nullptr;  // kRequest
    };
    // Completion context of one request of one connection.
    struct Request {
        ConnectBench *bench = nullptr;
        Kind kind = Kind::kConnected;
        size_t index = 0;
    };
    struct Connection {
        NDK_CONNECTOR *client = nullptr;
        NDK_CONNECTOR *server = nullptr;
        NDK_QP *client_qp = nullptr;
        NDK_QP *server_qp = nullptr;
        Request connected, completed, accepted, disconnected;
    };
    struct PrivateData {
        uint32_t magic;
        uint32_t index;
    };
    static constexpr uint32_t kMagic = 0x54434E43;  // "CNCT"

    std::mutex mutex;
    std::condition_variable changed;
    std::deque<Happened> happened;
    std::vector<Connection> connections;

    void push(Happened h) {
        {
            std::lock_guard lock(mutex);
            happened.push_back(h);
        }
        changed.notify_one();
    }
    Happened next() {
        std::unique_lock lock(mutex);
        if (!changed.wait_for(lock, std::chrono::seconds(30), [this] { return !happened.empty(); }))
            throw std::runtime_error("connects: nothing happened for 30 s");
        Happened h = happened.front();
        happened.pop_front();
        return h;
    }
    static VOID on_request(PVOID context, NTSTATUS status) {
        auto *r = static_cast<Request *>(context);
        r->bench->push({r->kind, r->index, status, nullptr});
    }
    static VOID on_connect_event(PVOID context, NDK_CONNECTOR *incoming) {
        static_cast<ConnectBench *>(context)->push({Kind::kRequest, 0, STATUS_SUCCESS, incoming});
    }
    static VOID on_disconnect_event(PVOID) {}
};

// What a consumer reads of a new connection; returns the peer's private data.
ConnectBench::PrivateData read_connection(NDK_CONNECTOR *c) {
    sockaddr_storage address{};
    ULONG length = sizeof address;
    check(c->Dispatch->NdkGetLocalAddress(c, reinterpret_cast<PSOCKADDR>(&address), &length),
          "NdkGetLocalAddress");
    length = sizeof address;
    check(c->Dispatch->NdkGetPeerAddress(c, reinterpret_cast<PSOCKADDR>(&address), &length),
          "NdkGetPeerAddress");
    ConnectBench::PrivateData data{};
    ULONG bytes = sizeof data;
    const NTSTATUS s = c->Dispatch->NdkGetConnectionData(c, nullptr, nullptr, &data, &bytes);
    if (s != STATUS_BUFFER_TOO_SMALL) check(s, "NdkGetConnectionData");
    return data;
}

// A request's final status: inline, or (STATUS_PENDING) later through `bench`.
bool pending(NTSTATUS inline_status, const char *call) {
    if (inline_status == STATUS_PENDING) return true;
    check(inline_status, call);
    return false;
}

int run_connects(const WskClient &wsk, const softndk_adapter &adapter, uint64_t count,
                 uint64_t in_flight) {
    const sockaddr_storage *own = softndk_adapter_address(&adapter, AF_UNSPEC);
    if (own == nullptr) throw std::runtime_error("the adapter has no address");
    sockaddr_storage listen_address = *own;
    set_port(listen_address, 18600);
    sockaddr_storage source = *own;
    set_port(source, 0);  // the provider picks a port

    AdapterSide client(wsk, adapter), server(wsk, adapter);
    ConnectBench bench;
    bench.connections.resize(count);
    for (size_t i = 0; i < count; ++i) {
        ConnectBench::Connection &c = bench.connections[i];
        c.client_qp = client.create_qp();
        c.server_qp = server.create_qp();
        c.connected = {&bench, ConnectBench::Kind::kConnected, i};
        c.completed = {&bench, ConnectBench::Kind::kCompleted, i};
        c.accepted = {&bench, ConnectBench::Kind::kAccepted, i};
        c.disconnected = {&bench, ConnectBench::Kind::kDisconnected, i};
    }
    NDK_LISTENER *listener = nullptr;
    Completion done;
    create(done,
           server.adapter->Dispatch->NdkCreateListener(server.adapter,
                                                       ConnectBench::on_connect_event, &bench,
                                                       Completion::on_create, &done, &listener),
           &listener, "NdkCreateListener");
    done.reset();
    check(done.finish(listener->Dispatch->NdkListen(
              listener, reinterpret_cast<PSOCKADDR>(&listen_address),
              sockaddr_length(listen_address), Completion::on_request, &done)),
          "NdkListen");

    using Kind = ConnectBench::Kind;
    const auto start = Clock::now();
    size_t started = 0, client_done = 0, server_done = 0;
    auto complete = [&](size_t i) {
        ConnectBench::Connection &c = bench.connections[i];
        read_connection(c.client);
        if (!pending(c.client->Dispatch->NdkCompleteConnect(
                         c.client, ConnectBench::on_disconnect_event, nullptr,
                         ConnectBench::on_request, &c.completed),
                     "NdkCompleteConnect"))
            ++client_done;
    };
    while (client_done < count || server_done < count) {
        for (; started < count && started - client_done < in_flight; ++started) {
            ConnectBench::Connection &c = bench.connections[started];
            c.client = client.create_connector();
            const ConnectBench::PrivateData data{ConnectBench::kMagic,
                                                 static_cast<uint32_t>(started)};
            if (!pending(c.client->Dispatch->NdkConnect(
                             c.client, c.client_qp, reinterpret_cast<PSOCKADDR>(&source),
                             sockaddr_length(source), reinterpret_cast<PSOCKADDR>(&listen_address),
                             sockaddr_length(listen_address), 1, 1,
                             const_cast<ConnectBench::PrivateData *>(&data), sizeof data,
                             ConnectBench::on_request, &c.connected),
                         "NdkConnect"))
                complete(started);
        }
        const ConnectBench::Happened h = bench.next();
        check(h.status, "a connect step");
        switch (h.kind) {
            case Kind::kRequest: {
                const ConnectBench::PrivateData data = read_connection(h.incoming);
                if (data.magic != ConnectBench::kMagic || data.index >= count ||
                    bench.connections[data.index].server != nullptr)
                    throw std::runtime_error("connects: a request with foreign private data");
                ConnectBench::Connection &c = bench.connections[data.index];
                c.server = h.incoming;
                if (!pending(
                        c.server->Dispatch->NdkAccept(c.server, c.server_qp, 1, 1, nullptr, 0,
                                                      ConnectBench::on_disconnect_event, nullptr,
                                                      ConnectBench::on_request, &c.accepted),
                        "NdkAccept"))
                    ++server_done;
                break;
            }
            case Kind::kConnected:
                complete(h.index);
                break;
            case Kind::kCompleted:
                ++client_done;
                break;
            case Kind::kAccepted:
                ++server_done;
                break;
            case Kind::kDisconnected:
                throw std::runtime_error("connects: a disconnect before any was asked for");
        }
    }
    const double connect_s = seconds_since(start);

    // Disconnect from the client side, `in_flight` at a time, then close every connector.
    const auto disconnect_start = Clock::now();
    size_t asked = 0, disconnected = 0;
    while (disconnected < count) {
        for (; asked < count && asked - disconnected < in_flight; ++asked) {
            ConnectBench::Connection &c = bench.connections[asked];
            if (!pending(c.client->Dispatch->NdkDisconnect(c.client, ConnectBench::on_request,
                                                           &c.disconnected),
                         "NdkDisconnect"))
                ++disconnected;
        }
        if (disconnected == count) break;
        const ConnectBench::Happened h = bench.next();
        if (h.kind != Kind::kDisconnected)
            throw std::runtime_error("connects: an unexpected event while disconnecting");
        check(h.status, "NdkDisconnect");
        ++disconnected;
    }
    for (ConnectBench::Connection &c : bench.connections) {
        close_object(&c.client->Header, c.client->Dispatch->NdkCloseConnector);
        close_object(&c.server->Header, c.server->Dispatch->NdkCloseConnector);
    }
    const double disconnect_s = seconds_since(disconnect_start);

    close_object(&listener->Header, listener->Dispatch->NdkCloseListener);
    for (ConnectBench::Connection &c : bench.connections) {
        close_object(&c.client_qp->Header, c.client_qp->Dispatch->NdkCloseQp);
        close_object(&c.server_qp->Header, c.server_qp->Dispatch->NdkCloseQp);
    }
    client.close(wsk);
    server.close(wsk);

    const double total = connect_s + disconnect_s;
    fmt::print("connects={}\n", count);
    fmt::print("connects_in_flight={}\n", std::min(in_flight, count));
    fmt::print("connect_s={:.3f}\n", connect_s);
    fmt::print("disconnect_s={:.3f}\n", disconnect_s);
    fmt::print("connects_per_s={:.0f}\n", static_cast<double>(count) / total);
    return 0;
}

int usage() {
    std::fputs(
        "usage: softndk-scale-bench [--adapter NAME] [--daemon-pid PID] [--in-flight N]\n"
        "                           qps COUNT | mrs COUNT [BYTES] | connects COUNT\n"
        "  (--in-flight: connections set up at once by connects, default 1)\n"
        "  (SOFTNDK_MODE=daemon: through softndk rnic; --daemon-pid: its pid, for the\n"
        "   daemon's memory per object)\n",
        stderr);
    return 2;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string adapter_name;
    uint64_t in_flight = 1;
    while (args.size() >= 2 &&
           (args[0] == "--adapter" || args[0] == "--daemon-pid" || args[0] == "--in-flight")) {
        if (args[0] == "--in-flight") {
            in_flight = std::strtoull(args[1].c_str(), nullptr, 10);
            if (in_flight == 0) return usage();
        } else {
            (args[0] == "--adapter" ? adapter_name : daemon_pid) = args[1];
        }
        args.erase(args.begin(), args.begin() + 2);
    }
    if (args.size() < 2) return usage();
    const std::string &what = args[0];
    const uint64_t count = std::strtoull(args[1].c_str(), nullptr, 10);
    if (count == 0) return usage();
    try {
        // Deleted only after a run that closed every object and adapter it opened: after
        // a failure (an exception) an adapter may still be open, and WskDeregister would
        // wait for it forever. The process ends right after either way.
        auto *wsk = new WskClient;
        const softndk_adapter adapter =
            find_adapter(adapter_name.empty() ? nullptr : adapter_name.c_str());
        int status = 0;
        if (what == "qps") {
            status = run_qps(*wsk, adapter, count);
        } else if (what == "mrs") {
            const uint64_t bytes =
                args.size() > 2 ? std::strtoull(args[2].c_str(), nullptr, 10) : 64;
            status = bytes == 0 ? usage() : run_mrs(*wsk, adapter, count, bytes);
        } else if (what == "connects") {
            status = run_connects(*wsk, adapter, count, in_flight);
        } else {
            status = usage();
        }
        delete wsk;
        return status;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "softndk-scale-bench: %s\n", e.what());
        return 1;
    }
}
