#include "perf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <tuple>

#include "device/config.hpp"
#include "device/profile.hpp"
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
// One end as the driver sees it: per QP, its initiator work requests in flight
// (a FIFO of sequence numbers; a completion retires its request and every
// earlier one of that QP), and its receives.
// ---------------------------------------------------------------------------
// RequestContext = (sequence << 16 | qp) << 2 | kind. The sequence numbers one
// end's initiator requests in post order across all its QPs and all sizes.
enum Kind : uintptr_t { kInitiator = 1, kReceive = 2 };
constexpr uint32_t kMaxQps = 0xFFFF;

void *context(uint64_t sequence, size_t qp, Kind kind) {
    return reinterpret_cast<void *>(static_cast<uintptr_t>(((sequence << 16) | qp) << 2) | kind);
}

struct QpState {
    std::deque<uint64_t> in_flight;  // sequence numbers, oldest first
    uint64_t posted = 0;             // in the current run (bandwidth)
};

class Side {
  public:
    Side(Endpoint &endpoint, const char *name, bool model_clock)
        : ep(endpoint), qps(endpoint.qp_count()), model_clock_(model_clock), name_(name) {}

    Endpoint &ep;
    std::vector<QpState> qps;
    uint64_t next_sequence = 0;  // of the next initiator request
    uint64_t received = 0;       // receive completions
    // The time (stamp()) of the latest initiator and receive completion.
    double last_initiator = 0, last_receive = 0;
    // Bandwidth: completion time of request `sequence` at
    // (*completed_at)[sequence - stamp_base].
    std::vector<double> *completed_at = nullptr;
    uint64_t stamp_base = 0;

    // A receive completion reposts its receive at once, or, with defer_reposts, when
    // the driver calls repost_owed() (off the path from a receive to the answer).
    bool defer_reposts = false;
    std::vector<ULONG> reposts_owed = std::vector<ULONG>(qps.size());
    void repost_owed() {
        for (size_t qp = 0; qp < reposts_owed.size(); ++qp) {
            if (reposts_owed[qp] != 0) post_receives(qp, reposts_owed[qp]);
            reposts_owed[qp] = 0;
        }
    }

    // Receives: where they land and how many bytes each completion must carry.
    size_t receive_offset = 0;
    ULONG receive_length = 0;
    uint64_t receive_expected = 0;

    // Seconds since the origin: the steady clock, or the consumer's clock in
    // model time (what the provider dates the next doorbell with).
    double stamp() const { return model_clock_ ? model_seconds(ep.model_now()) : now(); }
    // Model time (ns) as seconds since the model origin (set_model_origin()).
    static double model_seconds(uint64_t ns) {
        return static_cast<double>(static_cast<int64_t>(ns - model_origin_)) * 1e-9;
    }
    static void set_model_origin(uint64_t ns) { model_origin_ = ns; }

    uint64_t in_flight(size_t qp) const { return qps[qp].in_flight.size(); }
    bool idle() const {
        for (const QpState &q : qps)
            if (!q.in_flight.empty()) return false;
        return true;
    }

    void post_receives(size_t qp, ULONG count) {
        for (ULONG i = 0; i < count; ++i)
            check_post(
                ep.post_receive(qp, context(0, qp, kReceive), receive_offset, receive_length),
                "NdkReceive");
    }

    // Records request `sequence` as posted on `qp` (after the post succeeded).
    void posted(size_t qp, uint64_t sequence) {
        qps[qp].in_flight.push_back(sequence);
        ++qps[qp].posted;
    }

    // Drains the CQ. Returns the number of completions handled.
    ULONG reap() {
        constexpr ULONG kBatch = 64;
        NDK_RESULT results[kBatch];
        ULONG64 times[kBatch];
        const ULONG n =
            model_clock_ ? ep.poll_with_times(results, times, kBatch) : ep.poll(results, kBatch);
        const double wall = n != 0 && !model_clock_ ? now() : 0;
        for (ULONG i = 0; i < n; ++i) {
            const NDK_RESULT &r = results[i];
            const double t = model_clock_ ? model_seconds(times[i]) : wall;
            const auto tag = reinterpret_cast<uintptr_t>(r.RequestContext);
            if (r.Status != STATUS_SUCCESS)
                throw std::runtime_error(fmt::format(
                    "{}: {} completion failed: {}", name_,
                    (tag & kReceive) != 0 ? "receive" : "initiator", status_text(r.Status)));
            const size_t qp = (tag >> 2) & kMaxQps;
            if (qp >= qps.size())
                throw std::runtime_error(
                    fmt::format("{}: completion with unknown context {}", name_, r.RequestContext));
            if ((tag & 3) == kInitiator) {
                const uint64_t sequence = tag >> 18;
                auto &fifo = qps[qp].in_flight;
                while (!fifo.empty() && fifo.front() <= sequence) {
                    const uint64_t k = fifo.front();
                    fifo.pop_front();
                    if (completed_at != nullptr && k >= stamp_base &&
                        k - stamp_base < completed_at->size())
                        (*completed_at)[k - stamp_base] = t;
                }
                last_initiator = t;
            } else if ((tag & 3) == kReceive) {
                if (r.BytesTransferred != receive_expected)
                    throw std::runtime_error(fmt::format("{}: received {} bytes, expected {}",
                                                         name_, r.BytesTransferred,
                                                         receive_expected));
                ++received;
                last_receive = t;
                if (defer_reposts)
                    ++reposts_owed[qp];
                else
                    post_receives(qp, 1);
            } else {
                throw std::runtime_error(
                    fmt::format("{}: completion with unknown context {}", name_, r.RequestContext));
            }
        }
        return n;
    }

    // Waits until fewer than `depth` initiator requests are in flight on `qp`.
    void wait_room(size_t qp, uint64_t depth) {
        Wait wait("waiting for send-queue room");
        while (in_flight(qp) >= depth) {
            if (reap() == 0) wait.idle();
        }
    }

    void check_post(NTSTATUS s, const char *call) const {
        if (!NT_SUCCESS(s)) throw NdkError(fmt::format("{}: {}", name_, call), s);
    }

  private:
    bool model_clock_;
    static inline uint64_t model_origin_ = 0;
    const char *name_;
};

// ---------------------------------------------------------------------------
// The test setup
// ---------------------------------------------------------------------------
// ThreadSanitizer cannot see what orders the device's placement of a payload before
// the poll that sees its last byte (nothing in the program does: perftest relies on
// the adapter placing data in order), so it would report every poll. A TSan build
// keeps one thread.
#if defined(__SANITIZE_THREAD__)
constexpr bool kEndPerThreadBuild = false;
#else
constexpr bool kEndPerThreadBuild = true;
#endif

struct Setup {
    PerfOptions options;
    uint64_t max_size = 0;
    uint32_t tx_depth = 0;
    uint32_t cq_moderation = 0;
    uint32_t inline_size = 0;
    ULONG receive_depth = 1;
    bool paced = false;    // the adapters run in paced mode (SOFTNDK_TIME or --time)
    bool embedded = true;  // the device runs on the posting threads (not SOFTNDK_MODE=daemon)
    bool model_clock() const { return options.clock == ClockSource::kModel; }
    // Send and write latency with an end on each thread: see the threaded drivers.
    bool end_per_thread() const {
        return kEndPerThreadBuild && paced && embedded && !model_clock() &&
               options.mode == Mode::kLatency && options.verb != Verb::kRead;
    }
    // Buffer layout of both ends: [0, max_size) is what an end sends or is
    // read from; [max_size, 2 max_size) is where the peer's data lands.
    size_t source() const { return 0; }
    size_t target() const { return max_size; }
};

ULONG op_flags(const Setup &s, uint64_t size, bool signaled, bool defer) {
    ULONG flags = signaled ? 0 : NDK_OP_FLAG_SILENT_SUCCESS;
    if (defer) flags |= NDK_OP_FLAG_DEFER;
    if (s.options.verb != Verb::kRead && size <= s.inline_size) flags |= NDK_OP_FLAG_INLINE;
    return flags;
}

const char *call_name(Verb verb) {
    return verb == Verb::kSend ? "NdkSend" : verb == Verb::kWrite ? "NdkWrite" : "NdkRead";
}

// Posts the next initiator request of `from` on `qp` and records it.
void post(const Setup &s, Side &from, size_t qp, uint64_t size, bool signaled, bool defer = false) {
    const ULONG length = static_cast<ULONG>(size);
    const ULONG flags = op_flags(s, size, signaled, defer);
    const uint64_t sequence = from.next_sequence;
    void *ctx = context(sequence, qp, kInitiator);
    const BufferInfo &peer = from.ep.peer_buffer();
    NTSTATUS status = STATUS_INVALID_PARAMETER;
    switch (s.options.verb) {
        case Verb::kSend:
            status = from.ep.post_send(qp, ctx, s.source(), length, flags);
            break;
        case Verb::kWrite:
            status = from.ep.post_write(qp, ctx, s.source(), length, peer.address + s.target(),
                                        peer.token, flags);
            break;
        case Verb::kRead:
            // Into our target half, from the peer's source half.
            status = from.ep.post_read(qp, ctx, s.target(), length, peer.address + s.source(),
                                       peer.token, flags);
            break;
    }
    from.check_post(status, call_name(s.options.verb));
    ++from.next_sequence;
    from.posted(qp, sequence);
}

// Drains what is still in flight so the next size starts clean.
void settle(Side &side) {
    Wait wait("waiting for the last completions");
    while (!side.idle()) {
        if (side.reap() == 0) wait.idle();
    }
}

// Polls until `done()`. Wall clock: both ends (either may hold what unblocks
// the other). Model clock: only `waiting` - every CQE returned moves the
// consumer's clock, and the waiting end's next doorbell is dated by it.
template <class Done>
void wait_for(const Setup &s, Side &waiting, Side &other, const char *what, Done done) {
    Wait wait(what);
    while (!done()) {
        ULONG n = waiting.reap();
        if (!s.model_clock()) n += other.reap();
        if (n == 0) wait.idle();
    }
}

// ---------------------------------------------------------------------------
// Latency. Each function returns iters + 1 times (seconds): the start and the
// end of every iteration (see perf.hpp for what ends one under each clock).
// ---------------------------------------------------------------------------

// ib_write_lat: each end writes the message into the other's target half and
// then polls the LAST BYTE of its own target half for the peer's answer. The
// last byte only proves the whole message arrived if the adapter places data
// in order (NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED), as perftest assumes of
// verbs hardware. Here it is exact either way: one thread drives both ends and
// an embedded post returns only after the payload is placed. With the model
// clock an end also waits for the peer's write to complete before it answers:
// no CQE dates the placement, and the consumer's clock must have passed it.
std::vector<double> write_latency(const Setup &s, Side &c, Side &srv, uint64_t size,
                                  uint64_t iters) {
    std::vector<double> t(iters + 1);
    volatile uint8_t *client_poll = c.ep.buffer() + s.target() + size - 1;
    volatile uint8_t *server_poll = srv.ep.buffer() + s.target() + size - 1;
    uint8_t *client_last = c.ep.buffer() + s.source() + size - 1;
    uint8_t *server_last = srv.ep.buffer() + s.source() + size - 1;
    *client_poll = 0;
    *server_poll = 0;
    const bool model = s.model_clock();
    t[0] = c.stamp();
    for (uint64_t i = 0; i < iters; ++i) {
        const auto seq = static_cast<uint8_t>(i + 1);  // 1..255, 0, 1, ...: always a change
        if (!model) t[i] = now();
        *client_last = seq;
        c.wait_room(0, s.tx_depth);
        post(s, c, 0, size, true);
        if (model) {
            wait_for(s, c, srv, "the server waits for the client's write",
                     [&] { return *server_poll == seq && c.idle(); });
        } else {
            wait_for(s, srv, c, "the server waits for the client's write",
                     [&] { return *server_poll == seq; });
        }
        *server_last = seq;
        srv.wait_room(0, s.tx_depth);
        post(s, srv, 0, size, true);
        if (model) {
            wait_for(s, srv, c, "the client waits for the server's write",
                     [&] { return *client_poll == seq && srv.idle(); });
            t[i + 1] = srv.last_initiator;
        } else {
            wait_for(s, c, srv, "the client waits for the server's write",
                     [&] { return *client_poll == seq; });
        }
    }
    if (!model) t[iters] = now();
    settle(c);
    settle(srv);
    return t;
}

// ib_send_lat: send, the peer's receive completes, it sends back.
std::vector<double> send_latency(const Setup &s, Side &c, Side &srv, uint64_t size,
                                 uint64_t iters) {
    std::vector<double> t(iters + 1);
    const bool model = s.model_clock();
    t[0] = c.stamp();
    for (uint64_t i = 0; i < iters; ++i) {
        if (!model) t[i] = now();
        c.wait_room(0, s.tx_depth);
        post(s, c, 0, size, true);
        wait_for(s, srv, c, "the server waits for the client's send",
                 [&] { return srv.received > i; });
        srv.wait_room(0, s.tx_depth);
        post(s, srv, 0, size, true);
        wait_for(s, c, srv, "the client waits for the server's send",
                 [&] { return c.received > i; });
        if (model) t[i + 1] = c.last_receive;
    }
    if (!model) t[iters] = now();
    settle(c);
    settle(srv);
    return t;
}

// ---------------------------------------------------------------------------
// Paced-mode latency with the wall clock: an end per thread.
//
// In paced mode the device places nothing and completes nothing before its model
// time, so a wall-clock ping-pong measures the modeled exchange plus whatever host
// work sits on its critical path. Driven from one thread, that is all of both
// ends' host work: an embedded post returns only after the exchange it started -
// the payload placed at its model time, then the ACK and the requester's CQE - so
// the peer's end saw the payload only after this thread had also handled the ACK
// and the completion (1.78x the modeled 8 B write on cx5-100g). perftest runs each
// end in its own process; here each end runs on its own thread and polls its own
// CQ and buffer, so an end answers as soon as the payload lands while the other
// end's thread finishes its ACK and CQE in parallel. Two threads, the two ends:
// never more busy-polling threads than the machine's cores (docs/conventions.md);
// the server's end is the one on the extra thread. Read latency keeps one thread
// (the server's end posts nothing), and so do functional mode (where the device
// runs ahead of the host and a second thread would only add cross-core hand-offs),
// --clock model (whose figures come from the device's dates, not from when a
// thread saw them) and daemon mode (whose device thread needs a core of its own).
// ---------------------------------------------------------------------------

// Thrown into an end's wait when the other end failed, so that both threads stop;
// run_both_ends() reports the other end's own error instead.
struct OtherEndFailed {};

// Polls `side`'s CQ (only its own: the other end's belongs to the other thread)
// until `done()`.
template <class Done>
void wait_own(Side &side, const std::atomic<bool> &abort, const char *what, Done done) {
    Wait wait(what);
    while (!done()) {
        if (abort.load(std::memory_order_relaxed)) throw OtherEndFailed{};
        if (side.reap() == 0) wait.idle();
    }
}

// Runs `client_end` on this thread and `server_end` on a thread of its own, both
// to the end; each gets the flag that says the other failed. Rethrows the first
// end's own failure (the client's if both failed).
void run_both_ends(const std::function<void(const std::atomic<bool> &)> &client_end,
                   const std::function<void(const std::atomic<bool> &)> &server_end) {
    std::atomic<bool> abort{false};
    auto run = [&abort](const std::function<void(const std::atomic<bool> &)> &end,
                        std::exception_ptr &error) {
        try {
            end(abort);
        } catch (const OtherEndFailed &) {
        } catch (...) {
            error = std::current_exception();
            abort.store(true, std::memory_order_relaxed);
        }
    };
    std::exception_ptr client_error, server_error;
    std::thread server([&] { run(server_end, server_error); });
    run(client_end, client_error);
    server.join();
    if (client_error) std::rethrow_exception(client_error);
    if (server_error) std::rethrow_exception(server_error);
}

// The last byte of a message, as the other end's thread sees it: the device
// places the payload in order (NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED, as
// perftest assumes), so once the last byte has its new value the whole message
// is there; the acquire keeps this end's later reads after it.
bool landed(uint8_t *last_byte, uint8_t value) {
    return std::atomic_ref<uint8_t>(*last_byte).load(std::memory_order_acquire) == value;
}

// A spin-wait hint (x86 PAUSE): a spinning thread leaves the core to its sibling
// hyperthread and avoids the pipeline flush when the polled line changes.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Spins on the last byte until it is `value`, as perftest's write_lat does: no CQ
// poll in between, so the end sees the payload within a load or two of its
// placement (a CQ poll in the loop would add its own time to every turn-around).
// This end's CQ is polled where it needs room to post.
void wait_landed(uint8_t *last_byte, uint8_t value, const std::atomic<bool> &abort,
                 const char *what) {
    constexpr uint32_t kSpinsPerCheck = 1024;  // loads between abort and stall checks
    Wait wait(what);
    for (uint32_t spins = 0; !landed(last_byte, value);) {
        cpu_relax();
        if (++spins % kSpinsPerCheck != 0) continue;
        if (abort.load(std::memory_order_relaxed)) throw OtherEndFailed{};
        wait.idle();
    }
}

// ib_write_lat with an end per thread: each end writes into the other's target
// half, then polls the last byte of its own target half. t[i] is when the client
// starts iteration i.
std::vector<double> write_latency_per_thread(const Setup &s, Side &c, Side &srv, uint64_t size,
                                             uint64_t iters) {
    std::vector<double> t(iters + 1);
    uint8_t *client_poll = c.ep.buffer() + s.target() + size - 1;
    uint8_t *server_poll = srv.ep.buffer() + s.target() + size - 1;
    uint8_t *client_last = c.ep.buffer() + s.source() + size - 1;
    uint8_t *server_last = srv.ep.buffer() + s.source() + size - 1;
    *client_poll = 0;  // before the server's thread starts
    *server_poll = 0;
    auto end = [&](Side &self, uint8_t *last, uint8_t *poll, bool client) {
        return [&self, last, poll, client, &s, &t, size, iters](const std::atomic<bool> &abort) {
            for (uint64_t i = 0; i < iters; ++i) {
                const auto seq = static_cast<uint8_t>(i + 1);  // always a change
                if (client) {
                    t[i] = now();
                } else {
                    wait_landed(poll, seq, abort, "the server waits for the client's write");
                }
                *last = seq;
                post(s, self, 0, size, true);
                // Room for the next post before anything else, as perftest polls its
                // CQ right after posting: the CQE (due when the ACK returns) comes
                // before the peer's answer can, so retiring it here keeps it off the
                // path from the answer's arrival to the next post.
                wait_own(self, abort, "waiting for send-queue room",
                         [&] { return self.in_flight(0) < s.tx_depth; });
                if (client)
                    wait_landed(poll, seq, abort, "the client waits for the server's write");
            }
            if (client) t[iters] = now();
            wait_own(self, abort, "waiting for the last completions", [&] { return self.idle(); });
        };
    };
    run_both_ends(end(c, client_last, client_poll, true),
                  end(srv, server_last, server_poll, false));
    return t;
}

// ib_send_lat with an end per thread: the client sends and waits for its receive;
// the server waits for its receive and sends back.
std::vector<double> send_latency_per_thread(const Setup &s, Side &c, Side &srv, uint64_t size,
                                            uint64_t iters) {
    std::vector<double> t(iters + 1);
    c.defer_reposts = srv.defer_reposts = true;  // kLatencyReceiveDepth: room for a few
    auto end = [&](Side &self, bool client) {
        return [&self, client, &s, &t, size, iters](const std::atomic<bool> &abort) {
            for (uint64_t i = 0; i < iters; ++i) {
                if (client)
                    t[i] = now();
                else
                    wait_own(self, abort, "the server waits for the client's send",
                             [&] { return self.received > i; });
                post(s, self, 0, size, true);
                // After the post, as in write_latency_per_thread: the receive just
                // taken is reposted and this send's CQE retired while the peer
                // answers, not between a receive and the answer.
                self.repost_owed();
                wait_own(self, abort, "waiting for send-queue room",
                         [&] { return self.in_flight(0) < s.tx_depth; });
                if (client)
                    wait_own(self, abort, "the client waits for the server's send",
                             [&] { return self.received > i; });
            }
            self.repost_owed();
            if (client) t[iters] = now();
            wait_own(self, abort, "waiting for the last completions", [&] { return self.idle(); });
        };
    };
    run_both_ends(end(c, true), end(srv, false));
    c.defer_reposts = srv.defer_reposts = false;
    return t;
}

// ib_read_lat: one read at a time; its completion ends the iteration.
std::vector<double> read_latency(const Setup &s, Side &c, uint64_t size, uint64_t iters) {
    std::vector<double> t(iters + 1);
    const bool model = s.model_clock();
    t[0] = c.stamp();
    for (uint64_t i = 0; i < iters; ++i) {
        if (!model) t[i] = now();
        post(s, c, 0, size, true);
        settle(c);
        if (model) t[i + 1] = c.last_initiator;
    }
    if (!model) t[iters] = now();
    return t;
}

LatencyRow run_latency(const Setup &s, Side &c, Side &srv, uint64_t size, uint64_t iters) {
    std::vector<double> t;
    switch (s.options.verb) {
        case Verb::kWrite:
            t = s.end_per_thread() ? write_latency_per_thread(s, c, srv, size, iters)
                                   : write_latency(s, c, srv, size, iters);
            break;
        case Verb::kSend:
            c.receive_expected = srv.receive_expected = size;
            c.received = srv.received = 0;
            t = s.end_per_thread() ? send_latency_per_thread(s, c, srv, size, iters)
                                   : send_latency(s, c, srv, size, iters);
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
// Bandwidth: per QP a window of tx_depth requests in flight, posted in lists
// of post_list (one doorbell each); every cq_moderation-th request of a QP
// (and its last) is signaled, the others are retired by the next completion.
// `iters` requests per QP, as perftest counts -n.
// ---------------------------------------------------------------------------
BandwidthRow run_bandwidth(const Setup &s, Side &c, Side &srv, uint64_t size, uint64_t iters) {
    const size_t qp_count = c.qps.size();
    const uint64_t total = iters * qp_count;
    std::vector<double> posted_at(total), completed_at(total);
    // This run's requests are first .. first + total - 1 (sequence numbers).
    const uint64_t first = c.next_sequence;
    c.completed_at = &completed_at;
    c.stamp_base = first;
    for (QpState &q : c.qps)
        q.posted = 0;
    if (s.options.verb == Verb::kSend) {
        srv.receive_expected = size;
        srv.received = 0;
    }
    const uint64_t post_list = s.options.post_list;
    Wait wait("waiting for bandwidth completions");
    for (;;) {
        bool progressed = false;
        bool all_posted = true;
        for (size_t qp = 0; qp < qp_count; ++qp) {
            QpState &q = c.qps[qp];
            if (q.posted == iters) continue;
            all_posted = false;
            const uint64_t batch = std::min(post_list, iters - q.posted);
            if (q.in_flight.size() + batch > s.tx_depth) continue;
            for (uint64_t b = 0; b < batch; ++b) {
                const uint64_t k = q.posted;  // this QP's request number in the run
                const bool signaled = (k + 1) % s.cq_moderation == 0 || k + 1 == iters;
                posted_at[c.next_sequence - first] = c.stamp();
                post(s, c, qp, size, signaled, b + 1 < batch);
            }
            progressed = true;
            // Sends consume the server's receives: let it repost before they run out.
            if (s.options.verb == Verb::kSend && (c.next_sequence - first) % 64 < batch) srv.reap();
        }
        if (c.reap() != 0) progressed = true;
        if (s.options.verb == Verb::kSend && srv.reap() != 0) progressed = true;
        if (all_posted && c.idle()) break;
        if (!progressed) wait.idle();
    }
    c.completed_at = nullptr;
    if (s.options.verb == Verb::kSend) {
        Wait server_wait("the server waits for the last receives");
        while (srv.received < total) {
            if (srv.reap() == 0) server_wait.idle();
        }
    }
    BandwidthRow row = bandwidth_row(size, posted_at, completed_at, s.options.report_gbits);
    row.iterations = iters;  // perftest reports -n, the requests of each QP
    return row;
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------
const char *time_mode_name(const Endpoint &endpoint) {
    return endpoint.time_mode() == SOFTNDK_TIME_MODE_PACED ? "paced" : "functional";
}

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
    out += fmt::format(" Number of qps   : {}\t\tTransport type : {}\n", s.options.qp_count,
                       technology_name(info.RdmaTechnology));
    out += " Connection type : RC\t\tUsing SRQ      : OFF\n";
    out += fmt::format(" NDK version     : {}.{}\t\tProcess        : both ends, {}\n",
                       info.Version.Major, info.Version.Minor,
                       s.end_per_thread() ? "a thread each" : "one thread");
    out += fmt::format(" TX depth        : {}\n", s.tx_depth);
    if (s.options.mode == Mode::kBandwidth)
        out += fmt::format(" CQ Moderation   : {}\n", s.cq_moderation);
    if (s.options.post_list > 1) out += fmt::format(" Post List       : {}\n", s.options.post_list);
    out += fmt::format(" Mtu             : {}[B]\n", client.adapter().path_mtu);
    out += " Link type       : Ethernet\n";
    if (s.options.verb == Verb::kRead)
        out += fmt::format(" Outstand reads  : {}\n",
                           std::min(kReadLimit, std::min(info.MaxOutboundReadLimit,
                                                         server.info().MaxInboundReadLimit)));
    out += fmt::format(" Max inline data : {}[B]\n", s.inline_size);
    out += " Data ex. method : NDK private data\n";
    if (s.model_clock())
        out += fmt::format(" Clock           : model (profile {}, time mode {})\n",
                           client.adapter().profile, time_mode_name(client));
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
    // Fields beyond today's only when the new options are in use, so that a
    // default run prints exactly what it printed before.
    std::string extra;
    if (s.options.qp_count > 1 || s.options.post_list > 1)
        extra += fmt::format("  \"num_of_qps\": {},\n  \"post_list\": {},\n", s.options.qp_count,
                             s.options.post_list);
    if (s.model_clock())
        extra +=
            fmt::format("  \"clock\": \"model\",\n  \"profile\": {},\n  \"time_mode\": \"{}\",\n",
                        json_string(client.adapter().profile), time_mode_name(client));
    return fmt::format(
        "{{\n  \"test\": {},\n  \"verb\": \"{}\",\n  \"mode\": \"{}\",\n  \"device\": {},\n"
        "  \"if_index\": {},\n  \"server_device\": {},\n  \"server_if_index\": {},\n"
        "  \"transport\": \"{}\",\n  \"connection\": \"RC\",\n  \"ndk_version\": \"{}.{}\",\n"
        "  \"mtu\": {},\n  \"tx_depth\": {},\n  \"cq_moderation\": {},\n"
        "  \"max_inline_data\": {},\n{}  \"units\": {{\"latency\": \"usec\", \"bandwidth\": "
        "\"{}\", "
        "\"msg_rate\": \"Mpps\"}},\n  \"results\": [",
        json_string(test_title(s)), verb_name(s.options.verb),
        s.options.mode == Mode::kLatency ? "lat" : "bw", json_string(client.adapter().alias),
        client.adapter().if_index, json_string(server.adapter().alias), server.adapter().if_index,
        technology_name(info.RdmaTechnology), info.Version.Major, info.Version.Minor,
        client.adapter().path_mtu, s.tx_depth,
        s.options.mode == Mode::kBandwidth ? s.cq_moderation : 0, s.inline_size, extra,
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

bool daemon_mode() {
    const char *mode = std::getenv("SOFTNDK_MODE");
    return mode != nullptr && std::string_view(mode) == "daemon";
}

// Options that only make sense together; before anything is opened.
void check_usage(const PerfOptions &o, uint32_t tx_depth) {
    const bool latency = o.mode == Mode::kLatency;
    if (o.qp_count < 1 || o.qp_count > kMaxQps)
        throw UsageError(fmt::format("-q/--qp must be 1 .. {}", kMaxQps));
    if (latency && o.qp_count != 1)
        throw UsageError("latency tests run on one QP: -q/--qp must be 1 (as perftest)");
    if (o.post_list < 1) throw UsageError("-l/--post_list must be at least 1");
    if (latency && o.post_list != 1)
        throw UsageError("latency tests post one request at a time: -l/--post_list must be 1");
    if (o.post_list > tx_depth)
        throw UsageError(
            fmt::format("-l/--post_list {} exceeds the tx depth {}", o.post_list, tx_depth));
    if (!o.settings.empty() && o.profile.empty())
        throw UsageError("--set changes a key of --profile's profile and requires --profile");
    if (!o.time_mode.empty() && o.profile.empty())
        throw UsageError(
            "--time sets the time mode of perf's own adapters and requires --profile; "
            "otherwise the adapters' time mode is SOFTNDK_TIME's job");
    if (!o.profile.empty() && daemon_mode())
        throw UsageError(
            "--profile works in embedded mode only: with SOFTNDK_MODE=daemon, set the daemon's "
            "profile in its config (SOFTNDK_CONFIG of `softndk rnic`)");
}

// --profile: perf's own two adapters, back to back like perftest's two hosts.
void configure_adapters(const PerfOptions &o) {
    std::optional<emu::Profile> profile;
    std::string error;
    if (emu::is_profile_path(o.profile)) {
        emu::Profile loaded;
        if (!emu::load_profile_file(o.profile, loaded, error)) throw UsageError(error);
        profile = std::move(loaded);
    } else {
        profile = emu::find_profile(o.profile);
    }
    if (!profile) {
        std::string names;
        for (const std::string_view name : emu::profile_names())
            names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
        throw UsageError(
            fmt::format("unknown profile '{}'; the profiles are: {} (or a file: "
                        "path/to/profile.ini)",
                        o.profile, names));
    }
    // --set KEY=VALUE: a [timing] or [transport] key of the profile, as in its file.
    for (const std::string &setting : o.settings) {
        const auto eq = setting.find('=');
        if (eq == std::string::npos || eq == 0)
            throw UsageError(fmt::format("--set {}: expected KEY=VALUE", setting));
        const std::string key = setting.substr(0, eq);
        const std::string value = setting.substr(eq + 1);
        std::optional<bool> set = emu::set_cost_key(profile->cost, key, value, error);
        if (!set) set = emu::set_transport_key(profile->transport, key, value, error);
        if (!set)
            throw UsageError(
                fmt::format("--set {}: '{}' is not a [timing] or [transport] key "
                            "of a profile (profiles/*.ini)",
                            setting, key));
        if (!*set) throw UsageError(fmt::format("--set {}: {}", setting, error));
    }
    hw::TimeMode time_mode = hw::TimeMode::kFunctional;
    if (!o.time_mode.empty()) {
        const std::optional<hw::TimeMode> parsed = emu::parse_time_mode(o.time_mode);
        if (!parsed) throw UsageError(fmt::format("unknown time mode '{}'", o.time_mode));
        time_mode = *parsed;
    }
    std::vector<emu::AdapterConfig> configs;
    for (const auto &[if_index, alias, address] :
         {std::tuple{1u, "rnic0", "127.0.0.1"}, std::tuple{2u, "rnic1", "127.0.0.2"}}) {
        emu::AdapterConfig config;
        config.if_index = if_index;
        config.alias = alias;
        wire::IpAddr ip{};
        if (!emu::parse_ip(address, ip))
            throw std::runtime_error(fmt::format("bad address {}", address));
        config.addresses.push_back(ip);
        config.profile = *profile;
        config.time_mode = time_mode;
        configs.push_back(std::move(config));
    }
    if (!emu::EmbeddedRegistry::instance().configure(std::move(configs), error))
        throw std::runtime_error(fmt::format("cannot set up the adapters: {}", error));
}

}  // namespace

int run_perf(const PerfOptions &options) {
    Setup s;
    s.options = options;
    const bool latency = options.mode == Mode::kLatency;
    s.tx_depth = options.tx_depth != 0 ? options.tx_depth
                 : latency             ? kDefaultLatencyTxDepth
                                       : kDefaultBandwidthTxDepth;
    check_usage(options, s.tx_depth);
    // Every request of a QP is retired by a later signaled one: with lists of
    // post_list, a QP may stop with as few as tx_depth - post_list + 1 in
    // flight, and those must include a signaled request.
    s.cq_moderation =
        std::clamp<uint32_t>(options.cq_moderation, 1, s.tx_depth - options.post_list + 1);
    if (options.inline_size >= 0)
        s.inline_size = static_cast<uint32_t>(options.inline_size);
    else if (latency && options.verb == Verb::kWrite)
        s.inline_size = kDefaultInlineWrite;
    else if (latency && options.verb == Verb::kSend)
        s.inline_size = kDefaultInlineSend;
    if (options.verb == Verb::kRead) s.inline_size = 0;  // reads carry no payload out

    if (!options.profile.empty()) configure_adapters(options);
    const softndk_adapter client_adapter =
        find_adapter(options.device.empty() && !options.profile.empty() ? "rnic0" : options.device);
    const std::string server_device =
        options.server_device.empty() && !options.profile.empty() ? "rnic1" : options.server_device;
    const softndk_adapter server_adapter =
        server_device.empty() ? client_adapter : find_adapter(server_device);

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
    eo.qp_count = options.qp_count;
    eo.initiator_depth = s.tx_depth;
    eo.receive_depth = s.receive_depth;
    eo.inline_bytes = s.inline_size;
    eo.buffer_bytes = static_cast<size_t>(2 * s.max_size);
    Endpoint client(wsk, client_adapter, eo);
    Endpoint server(wsk, server_adapter, eo);
    if (s.model_clock() && (client.model_time() == nullptr || server.model_time() == nullptr))
        throw std::runtime_error(
            "--clock model: the provider does not offer SoftNDK's model-time extension on its "
            "CQs (NdkQueryExtension), so there is no model time to report");
    s.paced = client.model_time() != nullptr && client.time_mode() == SOFTNDK_TIME_MODE_PACED;
    s.embedded = !daemon_mode();
    Side c(client, "client", s.model_clock()), srv(server, "server", s.model_clock());
    for (Side *side : {&c, &srv}) {
        side->receive_offset = s.target();
        side->receive_length = static_cast<ULONG>(s.max_size);
    }
    // Receives before the connection: the first send may follow at once.
    if (options.verb == Verb::kSend) {
        for (size_t qp = 0; qp < options.qp_count; ++qp) {
            c.post_receives(qp, s.receive_depth);
            srv.post_receives(qp, s.receive_depth);
        }
    }
    connect_pair(client, server, options.port, kReadLimit);
    if (latency && options.verb == Verb::kWrite &&
        (client.info().AdapterFlags & NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED) == 0)
        log().info(
            "the adapter does not promise in-order placement; the last-byte poll is "
            "still exact because each write is placed before the poll starts");

    // Model seconds count from here (only differences are reported).
    if (s.model_clock()) Side::set_model_origin(client.model_now());
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
