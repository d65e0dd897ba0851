#include "perf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>

#include "log.hpp"
#include "ndk.hpp"
#include "report.hpp"

namespace softndk::tool {

const char *verb_name(Verb v) {
    constexpr const char *kNames[] = {"send", "write", "read"};
    return kNames[static_cast<int>(v)];
}

const char *perftest_name(Verb v) {
    constexpr const char *kNames[] = {"Send", "RDMA_Write", "RDMA_Read"};
    return kNames[static_cast<int>(v)];
}

namespace {

// perftest's defaults (perftest_parameters.h).
constexpr uint64_t kDefaultLatencySize = 2;
constexpr uint64_t kDefaultBandwidthSize = 65536;
constexpr uint64_t kDefaultLatencyIterations = 1000;
constexpr uint64_t kDefaultBandwidthIterations = 5000;
constexpr uint32_t kDefaultBandwidthTxDepth = 128;
constexpr uint32_t kDefaultLatencyTxDepth = 1;
constexpr uint32_t kDefaultInlineWrite = 220;
constexpr uint32_t kDefaultInlineSend = 236;
constexpr uint64_t kMaxAllSize = uint64_t{1} << 23;  // -a: 2 .. 8 MiB
constexpr ULONG kReadLimit = 16;                     // reads in flight asked for (capped)
constexpr ULONG kLatencyReceiveDepth = 64;
constexpr ULONG kBandwidthReceiveDepth = 512;  // > 2 windows of tx depth 128
constexpr auto kStallTimeout = std::chrono::seconds(10);

// ---------------------------------------------------------------------------
// Time and waiting
// ---------------------------------------------------------------------------
using Clock = std::chrono::steady_clock;

double now() {
    static const Clock::time_point origin = Clock::now();
    return std::chrono::duration<double>(Clock::now() - origin).count();
}

// Bounds every wait: yields the processor now and then while nothing happens
// and gives up after kStallTimeout without progress.
class Wait {
  public:
    explicit Wait(const char *what) : what_(what) {}
    void idle() {
        if (++idle_ % 256 != 0) return;
        std::this_thread::yield();
        if (idle_ % 4096 != 0) return;
        if (Clock::now() - start_ > kStallTimeout)
            throw std::runtime_error(
                fmt::format("no progress for {} s while {}", kStallTimeout.count(), what_));
    }

  private:
    const char *what_;
    uint64_t idle_ = 0;
    Clock::time_point start_ = Clock::now();
};

// ---------------------------------------------------------------------------
// One end as the driver sees it: its initiator work requests (posted, known
// complete) and its receives.
// ---------------------------------------------------------------------------
// RequestContext = index << 2 | kind.
enum Kind : uintptr_t { kInitiator = 1, kReceive = 2 };

void *context(uint64_t index, Kind kind) {
    return reinterpret_cast<void *>(static_cast<uintptr_t>(index << 2) | kind);
}

class Side {
  public:
    Side(Endpoint &endpoint, const char *name) : ep(endpoint), name_(name) {}

    Endpoint &ep;
    uint64_t posted = 0;     // initiator work requests posted
    uint64_t completed = 0;  // ... of which known complete (a completion retires all before it)
    uint64_t received = 0;   // receive completions
    // Bandwidth: completion time of request k at (*completed_at)[k - stamp_base].
    std::vector<double> *completed_at = nullptr;
    uint64_t stamp_base = 0;

    // Receives: where they land and how many bytes each completion must carry.
    size_t receive_offset = 0;
    ULONG receive_length = 0;
    uint64_t receive_expected = 0;

    void post_receives(ULONG count) {
        for (ULONG i = 0; i < count; ++i)
            check_post(ep.post_receive(context(0, kReceive), receive_offset, receive_length),
                       "NdkReceive");
    }

    // Drains the CQ. Returns the number of completions handled.
    ULONG reap() {
        NDK_RESULT results[32];
        const ULONG n = ep.poll(results, 32);
        for (ULONG i = 0; i < n; ++i) {
            const NDK_RESULT &r = results[i];
            const auto tag = reinterpret_cast<uintptr_t>(r.RequestContext);
            if (r.Status != STATUS_SUCCESS)
                throw std::runtime_error(fmt::format(
                    "{}: {} completion failed: {}", name_,
                    (tag & kReceive) != 0 ? "receive" : "initiator", status_text(r.Status)));
            if ((tag & 3) == kInitiator) {
                const uint64_t index = tag >> 2;
                if (completed_at != nullptr) {
                    const double t = now();
                    for (uint64_t k = std::max(completed, stamp_base);
                         k <= index && k - stamp_base < completed_at->size(); ++k)
                        (*completed_at)[k - stamp_base] = t;
                }
                completed = index + 1;
            } else if ((tag & 3) == kReceive) {
                if (r.BytesTransferred != receive_expected)
                    throw std::runtime_error(fmt::format("{}: received {} bytes, expected {}",
                                                         name_, r.BytesTransferred,
                                                         receive_expected));
                ++received;
                post_receives(1);
            } else {
                throw std::runtime_error(
                    fmt::format("{}: completion with unknown context {}", name_, r.RequestContext));
            }
        }
        return n;
    }

    // Waits until fewer than `depth` initiator requests are outstanding.
    void wait_room(uint64_t depth) {
        Wait wait("waiting for send-queue room");
        while (posted - completed >= depth) {
            if (reap() == 0) wait.idle();
        }
    }

    void check_post(NTSTATUS s, const char *call) const {
        if (!NT_SUCCESS(s)) throw NdkError(fmt::format("{}: {}", name_, call), s);
    }

  private:
    const char *name_;
};

// ---------------------------------------------------------------------------
// The test setup
// ---------------------------------------------------------------------------
struct Setup {
    PerfOptions options;
    uint64_t max_size = 0;
    uint32_t tx_depth = 0;
    uint32_t cq_moderation = 0;
    uint32_t inline_size = 0;
    ULONG receive_depth = 1;
    // Buffer layout of both ends: [0, max_size) is what an end sends or is
    // read from; [max_size, 2 max_size) is where the peer's data lands.
    size_t source() const { return 0; }
    size_t target() const { return max_size; }
};

ULONG op_flags(const Setup &s, uint64_t size, bool signaled) {
    ULONG flags = signaled ? 0 : NDK_OP_FLAG_SILENT_SUCCESS;
    if (s.options.verb != Verb::kRead && size <= s.inline_size) flags |= NDK_OP_FLAG_INLINE;
    return flags;
}

NTSTATUS post(const Setup &s, Side &from, uint64_t index, uint64_t size, bool signaled) {
    const ULONG length = static_cast<ULONG>(size);
    const ULONG flags = op_flags(s, size, signaled);
    void *ctx = context(index, kInitiator);
    switch (s.options.verb) {
        case Verb::kSend:
            return from.ep.post_send(ctx, s.source(), length, flags);
        case Verb::kWrite:
            return from.ep.post_write(ctx, s.source(), length,
                                      from.ep.peer_buffer().address + s.target(),
                                      from.ep.peer_buffer().token, flags);
        case Verb::kRead:
            // Into our target half, from the peer's source half.
            return from.ep.post_read(ctx, s.target(), length,
                                     from.ep.peer_buffer().address + s.source(),
                                     from.ep.peer_buffer().token, flags);
    }
    return STATUS_INVALID_PARAMETER;
}

// Drains what is still outstanding so the next size starts clean.
void settle(Side &side) {
    Wait wait("waiting for the last completions");
    while (side.completed < side.posted) {
        if (side.reap() == 0) wait.idle();
    }
}

// ---------------------------------------------------------------------------
// Latency
// ---------------------------------------------------------------------------

// ib_write_lat: each end writes the message into the other's target half and
// then polls the LAST BYTE of its own target half for the peer's answer. The
// last byte only proves the whole message arrived if the adapter places data
// in order (NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED), as perftest assumes of
// verbs hardware. Here it is exact either way: one thread drives both ends and
// an embedded post returns only after the payload is placed.
std::vector<double> write_latency(const Setup &s, Side &c, Side &srv, uint64_t size,
                                  uint64_t iters) {
    std::vector<double> t(iters + 1);
    volatile uint8_t *client_poll = c.ep.buffer() + s.target() + size - 1;
    volatile uint8_t *server_poll = srv.ep.buffer() + s.target() + size - 1;
    uint8_t *client_last = c.ep.buffer() + s.source() + size - 1;
    uint8_t *server_last = srv.ep.buffer() + s.source() + size - 1;
    *client_poll = 0;
    *server_poll = 0;
    for (uint64_t i = 0; i < iters; ++i) {
        const auto seq = static_cast<uint8_t>(i + 1);  // 1..255, 0, 1, ...: always a change
        t[i] = now();
        *client_last = seq;
        c.wait_room(s.tx_depth);
        c.check_post(post(s, c, c.posted, size, true), "NdkWrite");
        ++c.posted;
        Wait server_wait("the server waits for the client's write");
        while (*server_poll != seq) {
            if (c.reap() + srv.reap() == 0) server_wait.idle();
        }
        *server_last = seq;
        srv.wait_room(s.tx_depth);
        srv.check_post(post(s, srv, srv.posted, size, true), "NdkWrite");
        ++srv.posted;
        Wait client_wait("the client waits for the server's write");
        while (*client_poll != seq) {
            if (c.reap() + srv.reap() == 0) client_wait.idle();
        }
    }
    t[iters] = now();
    settle(c);
    settle(srv);
    return t;
}

// ib_send_lat: send, the peer's receive completes, it sends back.
std::vector<double> send_latency(const Setup &s, Side &c, Side &srv, uint64_t size,
                                 uint64_t iters) {
    std::vector<double> t(iters + 1);
    for (uint64_t i = 0; i < iters; ++i) {
        t[i] = now();
        c.wait_room(s.tx_depth);
        c.check_post(post(s, c, c.posted, size, true), "NdkSend");
        ++c.posted;
        Wait server_wait("the server waits for the client's send");
        while (srv.received <= i) {
            if (srv.reap() + c.reap() == 0) server_wait.idle();
        }
        srv.wait_room(s.tx_depth);
        srv.check_post(post(s, srv, srv.posted, size, true), "NdkSend");
        ++srv.posted;
        Wait client_wait("the client waits for the server's send");
        while (c.received <= i) {
            if (c.reap() + srv.reap() == 0) client_wait.idle();
        }
    }
    t[iters] = now();
    settle(c);
    settle(srv);
    return t;
}

// ib_read_lat: one read at a time; its completion ends the iteration.
std::vector<double> read_latency(const Setup &s, Side &c, uint64_t size, uint64_t iters) {
    std::vector<double> t(iters + 1);
    for (uint64_t i = 0; i < iters; ++i) {
        t[i] = now();
        c.check_post(post(s, c, c.posted, size, true), "NdkRead");
        ++c.posted;
        Wait wait("the client waits for its read");
        while (c.completed < c.posted) {
            if (c.reap() == 0) wait.idle();
        }
    }
    t[iters] = now();
    return t;
}

LatencyRow run_latency(const Setup &s, Side &c, Side &srv, uint64_t size, uint64_t iters) {
    std::vector<double> t;
    switch (s.options.verb) {
        case Verb::kWrite:
            t = write_latency(s, c, srv, size, iters);
            break;
        case Verb::kSend:
            c.receive_expected = srv.receive_expected = size;
            c.received = srv.received = 0;
            t = send_latency(s, c, srv, size, iters);
            break;
        case Verb::kRead:
            t = read_latency(s, c, size, iters);
            break;
    }
    std::vector<double> samples(iters);
    for (uint64_t i = 0; i < iters; ++i)
        samples[i] = (t[i + 1] - t[i]) * 1e6;
    // A send or write iteration is a round trip, reported one way; a read is
    // reported whole (perftest's rtt_factor).
    return latency_row(size, samples, s.options.verb == Verb::kRead ? 1.0 : 2.0);
}

// ---------------------------------------------------------------------------
// Bandwidth: a window of tx_depth requests in flight, every cq_moderation-th
// (and the last) signaled; the others are retired by the next completion.
// ---------------------------------------------------------------------------
BandwidthRow run_bandwidth(const Setup &s, Side &c, Side &srv, uint64_t size, uint64_t iters) {
    std::vector<double> posted_at(iters), completed_at(iters);
    // Request indexes (in the contexts) continue across sizes; this run's are
    // first .. first + iters - 1.
    const uint64_t first = c.posted;
    c.completed_at = &completed_at;
    c.stamp_base = first;
    if (s.options.verb == Verb::kSend) {
        srv.receive_expected = size;
        srv.received = 0;
    }
    Wait wait("waiting for bandwidth completions");
    while (c.completed < first + iters) {
        bool progressed = false;
        while (c.posted < first + iters && c.posted - c.completed < s.tx_depth) {
            const uint64_t k = c.posted - first;
            const bool signaled = (k + 1) % s.cq_moderation == 0 || k + 1 == iters;
            posted_at[k] = now();
            c.check_post(post(s, c, c.posted, size, signaled),
                         s.options.verb == Verb::kSend    ? "NdkSend"
                         : s.options.verb == Verb::kWrite ? "NdkWrite"
                                                          : "NdkRead");
            ++c.posted;
            progressed = true;
            // Sends consume the server's receives: let it repost before they run out.
            if (s.options.verb == Verb::kSend && k % 64 == 63) srv.reap();
        }
        if (c.reap() != 0) progressed = true;
        if (s.options.verb == Verb::kSend && srv.reap() != 0) progressed = true;
        if (!progressed) wait.idle();
    }
    c.completed_at = nullptr;
    if (s.options.verb == Verb::kSend) {
        Wait server_wait("the server waits for the last receives");
        while (srv.received < iters) {
            if (srv.reap() == 0) server_wait.idle();
        }
    }
    return bandwidth_row(size, posted_at, completed_at, s.options.report_gbits);
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------
std::string address_text(const sockaddr_storage &a) {
    char text[SOFTNDK_ADDRESS_STRING_SIZE];
    softndk_address_string(reinterpret_cast<const sockaddr *>(&a), text, sizeof text);
    const uint16_t port = a.ss_family == AF_INET6
                              ? ntohs(reinterpret_cast<const sockaddr_in6 &>(a).sin6_port)
                              : ntohs(reinterpret_cast<const sockaddr_in &>(a).sin_port);
    return fmt::format("IP {} port {}", text, port);
}

std::string test_title(const Setup &s) {
    return fmt::format("{} {} Test", perftest_name(s.options.verb),
                       s.options.mode == Mode::kLatency ? "Latency" : "BW");
}

void print_banner(const Setup &s, const Endpoint &client, const Endpoint &server) {
    const NDK_ADAPTER_INFO &info = client.info();
    std::string out;
    out += fmt::format("{}\n", kRule);
    out += fmt::format("{:>{}}\n", test_title(s), 20 + test_title(s).size());
    out += fmt::format(" Device          : {} (if_index {})\n", client.adapter().alias,
                       client.adapter().if_index);
    if (server.adapter().if_index != client.adapter().if_index)
        out += fmt::format(" Server device   : {} (if_index {})\n", server.adapter().alias,
                           server.adapter().if_index);
    out += fmt::format(" Number of qps   : 1\t\tTransport type : {}\n",
                       technology_name(info.RdmaTechnology));
    out += " Connection type : RC\t\tUsing SRQ      : OFF\n";
    out += fmt::format(" NDK version     : {}.{}\t\tProcess        : both ends, one thread\n",
                       info.Version.Major, info.Version.Minor);
    out += fmt::format(" TX depth        : {}\n", s.tx_depth);
    if (s.options.mode == Mode::kBandwidth)
        out += fmt::format(" CQ Moderation   : {}\n", s.cq_moderation);
    out += fmt::format(" Mtu             : {}[B]\n", client.adapter().path_mtu);
    out += " Link type       : Ethernet\n";
    if (s.options.verb == Verb::kRead)
        out += fmt::format(" Outstand reads  : {}\n",
                           std::min(kReadLimit, std::min(info.MaxOutboundReadLimit,
                                                         server.info().MaxInboundReadLimit)));
    out += fmt::format(" Max inline data : {}[B]\n", s.inline_size);
    out += " Data ex. method : NDK private data\n";
    out += fmt::format("{}\n", kRule);
    out +=
        fmt::format(" local address: {} Token {:#08x} VAddr {:#016x}\n",
                    address_text(client.local_address()), client.remote_token(), client.address(0));
    out += fmt::format(" remote address: {} Token {:#08x} VAddr {:#016x}\n",
                       address_text(client.peer_address()), client.peer_buffer().token,
                       client.peer_buffer().address);
    out += fmt::format("{}\n", kRule);
    out += s.options.mode == Mode::kLatency ? std::string(kLatencyHeader)
                                            : bandwidth_header(s.options.report_gbits);
    out += '\n';
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
}

std::string json_header(const Setup &s, const Endpoint &client, const Endpoint &server) {
    const NDK_ADAPTER_INFO &info = client.info();
    return fmt::format(
        "{{\n  \"test\": {},\n  \"verb\": \"{}\",\n  \"mode\": \"{}\",\n  \"device\": {},\n"
        "  \"if_index\": {},\n  \"server_device\": {},\n  \"server_if_index\": {},\n"
        "  \"transport\": \"{}\",\n  \"connection\": \"RC\",\n  \"ndk_version\": \"{}.{}\",\n"
        "  \"mtu\": {},\n  \"tx_depth\": {},\n  \"cq_moderation\": {},\n"
        "  \"max_inline_data\": {},\n  \"units\": {{\"latency\": \"usec\", \"bandwidth\": \"{}\", "
        "\"msg_rate\": \"Mpps\"}},\n  \"results\": [",
        json_string(test_title(s)), verb_name(s.options.verb),
        s.options.mode == Mode::kLatency ? "lat" : "bw", json_string(client.adapter().alias),
        client.adapter().if_index, json_string(server.adapter().alias), server.adapter().if_index,
        technology_name(info.RdmaTechnology), info.Version.Major, info.Version.Minor,
        client.adapter().path_mtu, s.tx_depth,
        s.options.mode == Mode::kBandwidth ? s.cq_moderation : 0, s.inline_size,
        s.options.report_gbits ? "Gb/sec" : "MB/sec");
}

softndk_adapter find_adapter(const std::string &name) {
    softndk_adapter a{};
    char error[512];
    if (softndk_adapter_find(name.empty() ? nullptr : name.c_str(), &a, error, sizeof error) != 0)
        throw std::runtime_error(error);
    return a;
}

std::vector<uint64_t> sizes_to_run(const Setup &s) {
    std::vector<uint64_t> sizes;
    if (s.options.all_sizes) {
        for (uint64_t size = 2; size <= s.max_size; size *= 2)
            sizes.push_back(size);
    } else {
        sizes.push_back(s.max_size);
    }
    return sizes;
}

uint64_t iterations_for(const Setup &s, uint64_t size) {
    if (s.options.iterations != 0) return s.options.iterations;
    const uint64_t fallback =
        s.options.mode == Mode::kLatency ? kDefaultLatencyIterations : kDefaultBandwidthIterations;
    if (!s.options.all_sizes) return fallback;
    const bool round_trip = s.options.mode == Mode::kLatency && s.options.verb != Verb::kRead;
    const uint64_t per_iteration = size * (round_trip ? 2 : 1);
    return std::clamp(kAutoIterationBytes / per_iteration, kMinIterations, fallback);
}

}  // namespace

int run_perf(const PerfOptions &options) {
    Setup s;
    s.options = options;
    const bool latency = options.mode == Mode::kLatency;
    s.tx_depth = options.tx_depth != 0 ? options.tx_depth
                 : latency             ? kDefaultLatencyTxDepth
                                       : kDefaultBandwidthTxDepth;
    s.cq_moderation = std::clamp<uint32_t>(options.cq_moderation, 1, s.tx_depth);
    if (options.inline_size >= 0)
        s.inline_size = static_cast<uint32_t>(options.inline_size);
    else if (latency && options.verb == Verb::kWrite)
        s.inline_size = kDefaultInlineWrite;
    else if (latency && options.verb == Verb::kSend)
        s.inline_size = kDefaultInlineSend;
    if (options.verb == Verb::kRead) s.inline_size = 0;  // reads carry no payload out

    const softndk_adapter client_adapter = find_adapter(options.device);
    const softndk_adapter server_adapter =
        options.server_device.empty() ? client_adapter : find_adapter(options.server_device);

    WskClient wsk;
    // Limits first (a throwaway open), so the buffers can be sized for them.
    NDK_ADAPTER_INFO client_info, server_info;
    for (auto [adapter, info] :
         {std::pair{&client_adapter, &client_info}, std::pair{&server_adapter, &server_info}}) {
        NDK_ADAPTER *a = wsk.open(adapter->if_index);
        try {
            *info = query_adapter_info(a);
        } catch (...) {
            wsk.close(a);
            throw;
        }
        wsk.close(a);
    }
    const uint64_t max_transfer =
        std::min(client_info.MaxTransferLength, server_info.MaxTransferLength);
    const uint64_t max_inline =
        std::min(client_info.MaxInlineDataSize, server_info.MaxInlineDataSize);
    if (options.inline_size < 0)
        s.inline_size = static_cast<uint32_t>(std::min<uint64_t>(s.inline_size, max_inline));
    else if (s.inline_size > max_inline)
        throw std::runtime_error(
            fmt::format("inline size {} exceeds the adapter's MaxInlineDataSize {}", s.inline_size,
                        max_inline));
    if (s.tx_depth >
        std::min(client_info.MaxInitiatorQueueDepth, server_info.MaxInitiatorQueueDepth))
        throw std::runtime_error(
            fmt::format("tx depth {} exceeds the adapter's MaxInitiatorQueueDepth", s.tx_depth));
    if (options.all_sizes) {
        s.max_size = std::min(kMaxAllSize, max_transfer);
    } else {
        s.max_size = options.size != 0 ? options.size
                     : latency         ? kDefaultLatencySize
                                       : kDefaultBandwidthSize;
        if (s.max_size > max_transfer)
            throw std::runtime_error(
                fmt::format("message size {} exceeds the adapter's MaxTransferLength {}",
                            s.max_size, max_transfer));
    }
    if (options.verb == Verb::kSend)
        s.receive_depth = latency ? kLatencyReceiveDepth : kBandwidthReceiveDepth;

    EndpointOptions eo;
    eo.initiator_depth = s.tx_depth;
    eo.receive_depth = s.receive_depth;
    eo.inline_bytes = s.inline_size;
    eo.buffer_bytes = static_cast<size_t>(2 * s.max_size);
    Endpoint client(wsk, client_adapter, eo);
    Endpoint server(wsk, server_adapter, eo);
    Side c(client, "client"), srv(server, "server");
    for (Side *side : {&c, &srv}) {
        side->receive_offset = s.target();
        side->receive_length = static_cast<ULONG>(s.max_size);
    }
    // Receives before the connection: the first send may follow at once.
    if (options.verb == Verb::kSend) {
        c.post_receives(s.receive_depth);
        srv.post_receives(s.receive_depth);
    }
    connect_pair(client, server, options.port, kReadLimit);
    if (latency && options.verb == Verb::kWrite &&
        (client.info().AdapterFlags & NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED) == 0)
        log().info(
            "the adapter does not promise in-order placement; the last-byte poll is "
            "still exact because each write is placed before the poll starts");

    if (!options.json) print_banner(s, client, server);
    std::string json = options.json ? json_header(s, client, server) : std::string();
    bool first = true;
    for (const uint64_t size : sizes_to_run(s)) {
        const uint64_t iters = iterations_for(s, size);
        std::string row, object;
        if (latency) {
            const LatencyRow r = run_latency(s, c, srv, size, iters);
            row = format_row(r);
            object = json_object(r);
        } else {
            const BandwidthRow r = run_bandwidth(s, c, srv, size, iters);
            row = format_row(r);
            object = json_object(r);
        }
        if (options.json) {
            json += fmt::format("{}\n    {}", first ? "" : ",", object);
            first = false;
        } else {
            std::printf("%s\n", row.c_str());
            std::fflush(stdout);
        }
    }
    disconnect_pair(client, server);
    if (options.json)
        std::printf("%s\n  ]\n}\n", json.c_str());
    else
        std::printf("%s\n", kRule);
    return 0;
}

}  // namespace softndk::tool
