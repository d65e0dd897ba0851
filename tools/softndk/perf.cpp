#include "perf.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// ---------------------------------------------------------------------------
// Time and waiting
// ---------------------------------------------------------------------------
using Clock = std::chrono::steady_clock;

double now() {
    static const Clock::time_point origin = Clock::now();
    return std::chrono::duration<double>(Clock::now() - origin).count();
}

// --stall-timeout: how long a wait goes on without progress before the run gives up.
// run_perf sets it before any end starts.
std::chrono::duration<double> stall_timeout{10.0};

// Completions this thread has taken from its CQs (Side::reap). A wait reads it to tell
// a stall from a long run: every wait loop polls on the thread that waits.
thread_local uint64_t tls_completions_taken = 0;

// Bounds every wait: yields the processor now and then while nothing happens
// and gives up after stall_timeout without progress. Progress is a completion taken
// on this thread since the wait last looked: a bandwidth run that keeps completing
// is not stalled however long it runs (a TSan build's 5,000 64 KiB writes over UDP
// take longer than the default 10 s).
// The clock is read only once a wait has gone on for a while: most waits of a latency
// test end within a few polls, and a clock read each would be part of what it measures.
class Wait {
  public:
    explicit Wait(const char *what) : what_(what) {}
    void idle() {
        if (tls_completions_taken != completions_seen_) {
            completions_seen_ = tls_completions_taken;
            idle_ = 0;  // the stall clock starts again at the next 4,096th idle
        }
        if (++idle_ % 256 != 0) return;
        std::this_thread::yield();
        if (idle_ % 4096 != 0) return;
        const auto now = Clock::now();
        if (idle_ == 4096) start_ = now;
        if (now - start_ > stall_timeout)
            throw std::runtime_error(
                fmt::format("no progress for {:g} s while {}", stall_timeout.count(), what_));
    }

  private:
    const char *what_;
    uint64_t idle_ = 0;  // idles since the last progress
    uint64_t completions_seen_ = tls_completions_taken;
    Clock::time_point start_;
};

// Two processes: the peer disconnected while this end waited (the client ends a
// run by disconnecting, after it wrote its report; perf.hpp).
struct PeerGone {};

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
    // The model time of the latest initiator and receive completion (--clock model;
    // with the wall clock a latency loop stamps its own turns, as perftest does).
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

    // -e: sleep on CQ events when nothing completes. remote_peer: the other end is
    // another process, whose disconnect ends a wait with PeerGone.
    bool events = false;
    bool remote_peer = false;

    // Nothing happened: with -e, arm the CQ, poll once more (a completion may
    // have come before the arm) and sleep until a CQ notifies (at most 10 ms);
    // then the stall check.
    void await(Wait &wait) {
        if (remote_peer && ep.peer_disconnected()) throw PeerGone{};
        if (events) {
            ep.arm_cq();
            if (reap() != 0) return;
            Endpoint::wait_cq_event(10);
        }
        wait.idle();
    }

    // Receives: where they land and how many bytes each completion must carry.
    // kAnySize: any length (a two-process server's bandwidth receives, whose
    // sizes it does not follow).
    static constexpr uint64_t kAnySize = UINT64_MAX;
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
        tls_completions_taken += n;
        // The wall clock is read only where a completion's time is kept (bandwidth's
        // completed_at): a latency loop takes its own stamp per turn, and a read here
        // for each completion (~25 ns) was in every turn-around it measured.
        const double wall = n != 0 && !model_clock_ && completed_at != nullptr ? now() : 0;
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
                if (receive_expected != kAnySize && r.BytesTransferred != receive_expected)
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

    // Functional time, both ends on this thread: this end's host runs alongside the
    // other's, so by the other's model time `t` it has polled its CQ all along and
    // taken every completion due by then. Its clock, though, moves only when this
    // thread polls for it (HostClock::poll: a step per poll that finds nothing due),
    // one poll per turn; without this a server that reposts receives fell behind a
    // client that posts a send per turn, ran the receives out in processing order, and
    // paid an RNR wait of the profile's min_rnr_timer (640 us) - send bandwidth 5x low.
    // Polls until this end's clock reaches t, or a poll changes nothing (nothing queued).
    void keep_up_with(uint64_t t) {
        if (ep.model_time() == nullptr || ep.time_mode() != SOFTNDK_TIME_MODE_FUNCTIONAL) return;
        for (uint64_t before = ep.model_now(); before < t;) {
            const ULONG n = reap();
            const uint64_t after = ep.model_now();
            if (n == 0 && after == before) return;
            before = after;
        }
    }

    // Waits until fewer than `depth` initiator requests are in flight on `qp`.
    void wait_room(size_t qp, uint64_t depth) {
        Wait wait("waiting for send-queue room");
        while (in_flight(qp) >= depth) {
            if (reap() == 0) await(wait);
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
    // Not with -e or -D (one thread waits on the CQ events; the server's thread
    // could not know when the client's duration ends), nor in two processes
    // (where each process is one end anyway).
    bool end_per_thread() const {
        return kEndPerThreadBuild && paced && embedded && !model_clock() &&
               options.mode == Mode::kLatency && options.verb != Verb::kRead && !options.events &&
               options.duration == 0 && options.role == Role::kBoth;
    }
    // -D: the wall-clock time (now()) the current size's run ends; more() says
    // whether another iteration starts (-n's count without -D).
    double deadline = 0;
    bool more(uint64_t i, uint64_t iters) const {
        return options.duration != 0 ? now() < deadline : i < iters;
    }
    bool two_process() const { return options.role != Role::kBoth; }
    // Two processes: where the client writes its report into the server's buffer.
    size_t report_offset() const { return 2 * max_size; }
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
        if (side.reap() == 0) side.await(wait);
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
        if (n != 0) continue;
        if (s.options.events) {
            waiting.ep.arm_cq();
            if (!s.model_clock()) other.ep.arm_cq();
            if (waiting.reap() + (s.model_clock() ? 0 : other.reap()) != 0) continue;
            Endpoint::wait_cq_event(10);
        }
        wait.idle();
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
    std::vector<double> t(1);
    volatile uint8_t *client_poll = c.ep.buffer() + s.target() + size - 1;
    volatile uint8_t *server_poll = srv.ep.buffer() + s.target() + size - 1;
    uint8_t *client_last = c.ep.buffer() + s.source() + size - 1;
    uint8_t *server_last = srv.ep.buffer() + s.source() + size - 1;
    *client_poll = 0;
    *server_poll = 0;
    const bool model = s.model_clock();
    t[0] = c.stamp();
    for (uint64_t i = 0; s.more(i, iters); ++i) {
        const auto seq = static_cast<uint8_t>(i + 1);  // 1..255, 0, 1, ...: always a change
        t.resize(i + 2);
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
    if (!model) t.back() = now();
    settle(c);
    settle(srv);
    return t;
}

// ib_send_lat: send, the peer's receive completes, it sends back.
std::vector<double> send_latency(const Setup &s, Side &c, Side &srv, uint64_t size,
                                 uint64_t iters) {
    std::vector<double> t(1);
    const bool model = s.model_clock();
    t[0] = c.stamp();
    for (uint64_t i = 0; s.more(i, iters); ++i) {
        t.resize(i + 2);
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
    if (!model) t.back() = now();
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
        if (side.reap() == 0) side.await(wait);
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
void wait_landed(const Side &self, uint8_t *last_byte, uint8_t value,
                 const std::atomic<bool> &abort, const char *what) {
    constexpr uint32_t kSpinsPerCheck = 1024;  // loads between abort and stall checks
    Wait wait(what);
    for (uint32_t spins = 0; !landed(last_byte, value);) {
        cpu_relax();
        if (++spins % kSpinsPerCheck != 0) continue;
        if (abort.load(std::memory_order_relaxed)) throw OtherEndFailed{};
        if (self.remote_peer && self.ep.peer_disconnected()) throw PeerGone{};
        wait.idle();
    }
}

// One end of ib_write_lat on its own thread (or in its own process): it writes
// into the peer's target half, then polls the last byte of its own target half.
// The client starts each iteration (t[i]: when, grown as it goes) and ends the
// run (-n, or -D's deadline); the server answers each write, `iters` of them, or
// until the client disconnects (PeerGone) in two processes.
void write_latency_end(const Setup &s, Side &self, bool client, std::vector<double> &t,
                       uint64_t size, uint64_t iters, const std::atomic<bool> &abort) {
    uint8_t *poll = self.ep.buffer() + s.target() + size - 1;
    uint8_t *last = self.ep.buffer() + s.source() + size - 1;
    uint64_t i = 0;
    for (; client ? s.more(i, iters) : i < iters; ++i) {
        const auto seq = static_cast<uint8_t>(i + 1);  // always a change
        if (client) {
            t.resize(i + 2);
            t[i] = now();
        } else {
            wait_landed(self, poll, seq, abort, "the server waits for the client's write");
        }
        *last = seq;
        post(s, self, 0, size, true);
        // Room for the next post before anything else, as perftest polls its
        // CQ right after posting: the CQE (due when the ACK returns) comes
        // before the peer's answer can, so retiring it here keeps it off the
        // path from the answer's arrival to the next post.
        wait_own(self, abort, "waiting for send-queue room",
                 [&] { return self.in_flight(0) < s.tx_depth; });
        if (client) wait_landed(self, poll, seq, abort, "the client waits for the server's write");
    }
    if (client) t.back() = now();
    wait_own(self, abort, "waiting for the last completions", [&] { return self.idle(); });
}

// ib_write_lat with an end per thread. t[i] is when the client starts iteration i.
std::vector<double> write_latency_per_thread(const Setup &s, Side &c, Side &srv, uint64_t size,
                                             uint64_t iters) {
    std::vector<double> t(1), unused;
    *(c.ep.buffer() + s.target() + size - 1) = 0;  // before the server's thread starts
    *(srv.ep.buffer() + s.target() + size - 1) = 0;
    run_both_ends(
        [&](const std::atomic<bool> &abort) {
            write_latency_end(s, c, true, t, size, iters, abort);
        },
        [&](const std::atomic<bool> &abort) {
            write_latency_end(s, srv, false, unused, size, iters, abort);
        });
    return t;
}

// One end of ib_send_lat: the client sends and waits for its receive; the
// server waits for its receive and sends back (iterations as in
// write_latency_end).
void send_latency_end(const Setup &s, Side &self, bool client, std::vector<double> &t,
                      uint64_t size, uint64_t iters, const std::atomic<bool> &abort) {
    self.defer_reposts = true;  // kLatencyReceiveDepth: room for a few
    for (uint64_t i = 0; client ? s.more(i, iters) : i < iters; ++i) {
        if (client) {
            t.resize(i + 2);
            t[i] = now();
        } else {
            wait_own(self, abort, "the server waits for the client's send",
                     [&] { return self.received > i; });
        }
        post(s, self, 0, size, true);
        // After the post, as in write_latency_end: the receive just taken is
        // reposted and this send's CQE retired while the peer answers, not
        // between a receive and the answer.
        self.repost_owed();
        wait_own(self, abort, "waiting for send-queue room",
                 [&] { return self.in_flight(0) < s.tx_depth; });
        if (client)
            wait_own(self, abort, "the client waits for the server's send",
                     [&] { return self.received > i; });
    }
    self.repost_owed();
    if (client) t.back() = now();
    wait_own(self, abort, "waiting for the last completions", [&] { return self.idle(); });
    self.defer_reposts = false;
}

// ib_send_lat with an end per thread.
std::vector<double> send_latency_per_thread(const Setup &s, Side &c, Side &srv, uint64_t size,
                                            uint64_t iters) {
    std::vector<double> t(1), unused;
    run_both_ends(
        [&](const std::atomic<bool> &abort) {
            send_latency_end(s, c, true, t, size, iters, abort);
        },
        [&](const std::atomic<bool> &abort) {
            send_latency_end(s, srv, false, unused, size, iters, abort);
        });
    return t;
}

// ib_read_lat: one read at a time; its completion ends the iteration.
std::vector<double> read_latency(const Setup &s, Side &c, uint64_t size, uint64_t iters) {
    std::vector<double> t(1);
    const bool model = s.model_clock();
    t[0] = c.stamp();
    for (uint64_t i = 0; s.more(i, iters); ++i) {
        t.resize(i + 2);
        if (!model) t[i] = now();
        post(s, c, 0, size, true);
        settle(c);
        if (model) t[i + 1] = c.last_initiator;
    }
    if (!model) t.back() = now();
    return t;
}

// One size's latency run. `srv` is null when the server is another process
// (the client's half only). `unsorted` receives the per-iteration latencies
// (usec, one way for send and write) in iteration order, for -H and -U.
LatencyRow run_latency(const Setup &s, Side &c, Side *srv, uint64_t size, uint64_t iters,
                       std::vector<double> &unsorted) {
    std::vector<double> t;
    const std::atomic<bool> no_abort{false};
    switch (s.options.verb) {
        case Verb::kWrite:
            if (srv == nullptr) {
                t.resize(1);
                *(c.ep.buffer() + s.target() + size - 1) = 0;
                write_latency_end(s, c, true, t, size, iters, no_abort);
            } else {
                t = s.end_per_thread() ? write_latency_per_thread(s, c, *srv, size, iters)
                                       : write_latency(s, c, *srv, size, iters);
            }
            break;
        case Verb::kSend:
            c.receive_expected = size;
            c.received = 0;
            if (srv == nullptr) {
                t.resize(1);
                send_latency_end(s, c, true, t, size, iters, no_abort);
            } else {
                srv->receive_expected = size;
                srv->received = 0;
                t = s.end_per_thread() ? send_latency_per_thread(s, c, *srv, size, iters)
                                       : send_latency(s, c, *srv, size, iters);
            }
            break;
        case Verb::kRead:
            t = read_latency(s, c, size, iters);
            break;
    }
    // A send or write iteration is a round trip, reported one way; a read is
    // reported whole (perftest's rtt_factor).
    const double divisor = s.options.verb == Verb::kRead ? 1.0 : 2.0;
    std::vector<double> samples(t.size() - 1);
    unsorted.resize(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) {
        samples[i] = (t[i + 1] - t[i]) * 1e6;
        unsorted[i] = samples[i] / divisor;
    }
    return latency_row(size, samples, divisor);
}

// ---------------------------------------------------------------------------
// Bandwidth: per QP a window of tx_depth requests in flight, posted in lists
// of post_list (one doorbell each); every cq_moderation-th request of a QP
// (and its last) is signaled, the others are retired by the next completion.
// `iters` requests per QP, as perftest counts -n; with -D, requests until the
// deadline and one signaled request more per QP. `srv` is null when the
// server is another process (it reposts its own receives).
// ---------------------------------------------------------------------------
BandwidthRow run_bandwidth(const Setup &s, Side &c, Side *srv, uint64_t size, uint64_t iters) {
    const size_t qp_count = c.qps.size();
    const bool timed = s.options.duration != 0;
    std::vector<uint64_t> target(qp_count, timed ? UINT64_MAX : iters);
    std::vector<double> posted_at, completed_at;
    if (!timed) {
        posted_at.reserve(iters * qp_count);
        completed_at.reserve(iters * qp_count);
    }
    // This run's requests are first .. c.next_sequence - 1 (sequence numbers).
    const uint64_t first = c.next_sequence;
    c.completed_at = &completed_at;
    c.stamp_base = first;
    for (QpState &q : c.qps)
        q.posted = 0;
    const bool server_here = srv != nullptr && s.options.verb == Verb::kSend;
    if (server_here) {
        srv->receive_expected = size;
        srv->received = 0;
    }
    const uint64_t post_list = s.options.post_list;
    Wait wait("waiting for bandwidth completions");
    for (;;) {
        bool progressed = false;
        bool all_posted = true;
        const bool past_deadline = timed && now() >= s.deadline;
        for (size_t qp = 0; qp < qp_count; ++qp) {
            QpState &q = c.qps[qp];
            if (past_deadline && target[qp] == UINT64_MAX) target[qp] = q.posted + 1;
            if (q.posted == target[qp]) continue;
            all_posted = false;
            const uint64_t batch = std::min(post_list, target[qp] - q.posted);
            if (q.in_flight.size() + batch > s.tx_depth) continue;
            for (uint64_t b = 0; b < batch; ++b) {
                const uint64_t k = q.posted;  // this QP's request number in the run
                const bool signaled = (k + 1) % s.cq_moderation == 0 || k + 1 == target[qp];
                const uint64_t index = c.next_sequence - first;
                posted_at.resize(index + 1);
                completed_at.resize(index + 1);
                posted_at[index] = c.stamp();
                post(s, c, qp, size, signaled, b + 1 < batch);
            }
            progressed = true;
            // Sends consume the server's receives: let it repost before they run out.
            if (server_here && (c.next_sequence - first) % 64 < batch) srv->reap();
        }
        if (c.reap() != 0) progressed = true;
        if (server_here) {
            const uint64_t received = srv->received;
            srv->reap();
            if (c.ep.model_time() != nullptr) srv->keep_up_with(c.ep.model_now());
            if (srv->received != received) progressed = true;  // the server has only receives
        }
        if (all_posted && c.idle()) break;
        if (!progressed) c.await(wait);
    }
    c.completed_at = nullptr;
    const uint64_t total = c.next_sequence - first;
    if (server_here) {
        Wait server_wait("the server waits for the last receives");
        while (srv->received < total) {
            if (srv->reap() == 0) srv->await(server_wait);
        }
    }
    // -N: no peak (perftest prints 0.00).
    BandwidthRow row =
        bandwidth_row(size, posted_at, completed_at, s.options.report_gbits, !s.options.no_peak);
    row.iterations = total / qp_count;  // perftest reports -n, the requests of each QP
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

// `client` is this process's end in two processes (then `server` is the same
// Endpoint): the addresses are its own and its peer's.
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
    out += fmt::format(" NDK version     : {}.{}\t\tProcess        : {}\n", info.Version.Major,
                       info.Version.Minor,
                       s.options.role == Role::kServer   ? "server end (the client reports)"
                       : s.options.role == Role::kClient ? "client end"
                       : s.end_per_thread()              ? "both ends, a thread each"
                                                         : "both ends, one thread");
    out += fmt::format(" TX depth        : {}\n", s.tx_depth);
    if (s.options.duration != 0)
        out += fmt::format(" Duration        : {}[sec]\n", s.options.duration);
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
    if (s.options.events) out += " CQ events       : ON (sleeps on CQ notifications)\n";
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
    if (o.duration != 0 && o.all_sizes)
        throw UsageError("-D/--duration runs one size: it does not go with -a (as perftest)");
    if (o.duration != 0 && o.clock == ClockSource::kModel)
        throw UsageError("-D/--duration is wall-clock seconds: it does not go with --clock model");
    if (o.events && latency && o.verb == Verb::kWrite)
        throw UsageError(
            "-e/--events: write latency polls the buffer, not the CQ (as perftest's "
            "ib_write_lat), so there is no CQ event to sleep on");
    if (o.events && o.clock == ClockSource::kModel)
        throw UsageError("-e/--events does not go with --clock model");
    if (o.role != Role::kBoth && o.clock == ClockSource::kModel)
        throw UsageError(
            "--clock model needs both ends in one process (one consumer clock): run "
            "`softndk perf` without a server address");
    if (o.role != Role::kBoth && !o.server_device.empty())
        throw UsageError(
            "--server-dev chooses the server end of a one-process run; in two "
            "processes each end chooses its own adapter with -d");
}

// The tool sets up its own adapters (EmbeddedRegistry::configure) with --profile,
// and, embedded without SOFTNDK_CONFIG, for the two-process form and for -m/-u:
// then -m and -u change those adapters (SoftNDK sets the path MTU and the ACK
// timeout per adapter, not per QP).
bool own_adapters(const PerfOptions &o) {
    if (!o.profile.empty()) return true;
    const char *config = std::getenv("SOFTNDK_CONFIG");
    if (daemon_mode() || (config != nullptr && *config != '\0')) return false;
    return o.role != Role::kBoth || o.mtu != 0 || o.qp_timeout >= 0 ||
           o.clock == ClockSource::kModel;
}

struct OwnAdapter {
    unsigned if_index;
    const char *alias;
    std::vector<const char *> addresses;
};

// Sets up `adapters` with --profile's profile (default roce-default), --set,
// --time, -m and -u.
void configure_adapters(const PerfOptions &o, const std::vector<OwnAdapter> &adapters) {
    std::optional<emu::Profile> profile;
    std::string error;
    const std::string name = o.profile.empty() ? "roce-default" : o.profile;
    if (emu::is_profile_path(name)) {
        emu::Profile loaded;
        if (!emu::load_profile_file(name, loaded, error)) throw UsageError(error);
        profile = std::move(loaded);
    } else {
        profile = emu::find_profile(name);
    }
    if (!profile) {
        std::string names;
        for (const std::string_view n : emu::profile_names())
            names += fmt::format("{}{}", names.empty() ? "" : ", ", n);
        throw UsageError(
            fmt::format("unknown profile '{}'; the profiles are: {} (or a file: "
                        "path/to/profile.ini)",
                        name, names));
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
    if (o.mtu != 0) profile->limits.path_mtu = o.mtu;
    if (o.qp_timeout >= 0) profile->transport.ack_timeout = static_cast<uint8_t>(o.qp_timeout);
    hw::TimeMode time_mode = hw::TimeMode::kFunctional;
    if (!o.time_mode.empty()) {
        const std::optional<hw::TimeMode> parsed = emu::parse_time_mode(o.time_mode);
        if (!parsed) throw UsageError(fmt::format("unknown time mode '{}'", o.time_mode));
        time_mode = *parsed;
    } else if (!emu::time_mode_from_environment(time_mode, error)) {
        // Without --time, SOFTNDK_TIME sets the time mode, with --profile too: a user who
        // exported SOFTNDK_TIME=paced and picked a profile gets paced adapters.
        throw UsageError(error);
    }
    std::vector<emu::AdapterConfig> configs;
    for (const OwnAdapter &a : adapters) {
        emu::AdapterConfig config;
        config.if_index = a.if_index;
        config.alias = a.alias;
        for (const char *address : a.addresses) {
            wire::IpAddr ip{};
            if (!emu::parse_ip(address, ip))
                throw std::runtime_error(fmt::format("bad address {}", address));
            config.addresses.push_back(ip);
        }
        config.profile = *profile;
        config.time_mode = time_mode;
        configs.push_back(std::move(config));
    }
    if (!emu::EmbeddedRegistry::instance().configure(std::move(configs), error))
        throw std::runtime_error(fmt::format("cannot set up the adapters: {}", error));
}

// The client's HOST argument with the ND port; a UsageError if it is not an
// IPv4 or IPv6 address (names are not resolved: the adapters own addresses).
sockaddr_storage server_address(const std::string &host, uint16_t port) {
    sockaddr_storage a{};
    auto &v4 = reinterpret_cast<sockaddr_in &>(a);
    auto &v6 = reinterpret_cast<sockaddr_in6 &>(a);
    if (inet_pton(AF_INET, host.c_str(), &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
    } else if (inet_pton(AF_INET6, host.c_str(), &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
    } else {
        throw UsageError(fmt::format(
            "'{}' is not an IPv4 or IPv6 address (the server's adapter address, e.g. 127.0.0.1)",
            host));
    }
    return a;
}

// What both processes must agree on, in BufferInfo::test.
uint32_t test_code(const PerfOptions &o) {
    return static_cast<uint32_t>(o.verb) | (o.mode == Mode::kLatency ? 4u : 0u) |
           (o.all_sizes ? 8u : 0u) | (o.duration != 0 ? 16u : 0u);
}

std::string test_text(uint32_t code, uint64_t size, uint64_t iterations, uint32_t qps) {
    const auto verb = static_cast<Verb>(code & 3);
    return fmt::format("ib_{}_{}{}{} -n {} -q {}", verb_name(verb), (code & 4) ? "lat" : "bw",
                       (code & 8) ? " -a" : fmt::format(" -s {}", size), (code & 16) ? " -D" : "",
                       iterations, qps);
}

// Both processes run the same test, as perftest requires of its two.
void check_peer_test(const Endpoint &own, const char *peer) {
    const BufferInfo mine = own.buffer_info();
    const BufferInfo &theirs = own.peer_buffer();
    if (mine.test == theirs.test && mine.max_size == theirs.max_size &&
        mine.iterations == theirs.iterations && mine.qp_count == theirs.qp_count)
        return;
    throw std::runtime_error(
        fmt::format("the {} runs {}, this end {}: start both with the same test and options", peer,
                    test_text(theirs.test, theirs.max_size, theirs.iterations, theirs.qp_count),
                    test_text(mine.test, mine.max_size, mine.iterations, mine.qp_count)));
}

// Two processes: the client writes its rows into the server's buffer at
// Setup::report_offset() before it disconnects; the server prints them.
constexpr uint32_t kReportMagic = 0x54505253;  // "SRPT"
constexpr size_t kReportBytes = 64 * 1024;
struct ReportHeader {
    uint32_t magic;
    uint32_t length;  // of the text after the header
};

// Paced mode: how far the host kept up with the model, from the device counters
// Device::pace() keeps (docs/timing.md §2). A placement the host reached only after
// its model time means the host's own path (post, device work, placement) took longer
// than the modeled hardware's, so the wall clock saw the host, not the model.
struct PacedCounts {
    uint64_t placements = 0, late = 0, late_ns = 0;
    PacedCounts operator-(const PacedCounts &o) const {
        return {placements - o.placements, late - o.late, late_ns - o.late_ns};
    }
};

// The counts of both ends' adapters (one, if both ends share it); zeros if the device
// has no such counters.
PacedCounts paced_counts(const Endpoint &client, const Endpoint &server) {
    PacedCounts sum;
    auto add = [&sum](const Endpoint &e) {
        sum.placements += e.counter("paced_placements").value_or(0);
        sum.late += e.counter("paced_late").value_or(0);
        sum.late_ns += e.counter("paced_late_ns").value_or(0);
    };
    add(client);
    if (server.adapter().if_index != client.adapter().if_index) add(server);
    return sum;
}

// A row's table line and JSON object with the paced counts of its run added.
void add_paced_counts(std::string &table_row, std::string &json_object, const PacedCounts &d) {
    const double late_percent = d.placements == 0 ? 0.0 : 100.0 * d.late / d.placements;
    const double late_avg_ns = d.late == 0 ? 0.0 : static_cast<double>(d.late_ns) / d.late;
    table_row += fmt::format(
        "\n paced: {} of {} placements ({:.1f}%) came after their model time, {:.0f} ns late "
        "on average",
        d.late, d.placements, late_percent, late_avg_ns);
    json_object.pop_back();  // the closing brace
    json_object += fmt::format(
        ", \"paced_placements\": {}, \"paced_late\": {}, \"paced_late_avg_ns\": {:.0f}}}",
        d.placements, d.late, late_avg_ns);
}

// The rows a run printed (table rows and JSON objects), and where they go.
class Output {
  public:
    explicit Output(const PerfOptions &o) : o_(o) {}

    bool table() const { return !o_.json; }
    bool json() const { return o_.json || !o_.json_file.empty(); }

    void header(const Setup &s, const Endpoint &client, const Endpoint &server) {
        if (table()) print_banner(s, client, server);
        if (json()) json_ = json_header(s, client, server);
    }
    void row(const std::string &table_row, const std::string &json_object) {
        if (table()) {
            std::printf("%s\n", table_row.c_str());
            std::fflush(stdout);
        }
        json_ += fmt::format("{}\n    {}", rows_ == 0 ? "" : ",", json_object);
        report_ += fmt::format("T{}\nJ{}\n", table_row, json_object);
        ++rows_;
    }
    // -H / -U: every sample after its row, perftest's "#, usec" listing.
    void samples(std::vector<double> unsorted) {
        if (!table() || (!o_.histogram && !o_.unsorted)) return;
        if (!o_.unsorted) std::sort(unsorted.begin(), unsorted.end());
        std::string out = "#, usec\n";
        for (size_t i = 0; i < unsorted.size(); ++i)
            out += fmt::format("{}, {:.3f}\n", i + 1, unsorted[i]);
        std::fputs(out.c_str(), stdout);
    }
    // The rows in the report's text form (T row / J object lines).
    const std::string &report() const { return report_; }
    void replay(const std::string &report) {
        size_t at = 0;
        std::string table_row;
        while (at < report.size()) {
            const size_t end = report.find('\n', at);
            const std::string line = report.substr(at, end - at);
            at = end == std::string::npos ? report.size() : end + 1;
            if (line.empty()) continue;
            if (line[0] == 'T') table_row = line.substr(1);
            if (line[0] == 'J') row(table_row, line.substr(1));
        }
    }
    void finish() {
        const std::string document = json_ + "\n  ]\n}\n";
        if (table()) std::printf("%s\n", kRule);
        if (o_.json) std::fputs(document.c_str(), stdout);
        if (!o_.json_file.empty()) {
            std::FILE *f = std::fopen(o_.json_file.c_str(), "w");
            if (f == nullptr || std::fputs(document.c_str(), f) < 0 || std::fclose(f) != 0)
                throw std::runtime_error(fmt::format("cannot write {}", o_.json_file));
        }
        std::fflush(stdout);
    }

  private:
    const PerfOptions &o_;
    std::string json_, report_;
    size_t rows_ = 0;
};

// The client's last act: its rows into the server's report area, one RDMA write
// on the first QP, completed (so placed) before the disconnect that follows.
void send_report(const Setup &s, Side &c, const std::string &text) {
    const size_t length = std::min(text.size(), kReportBytes - sizeof(ReportHeader));
    if (length < text.size()) log().warn("the report to the server is cut at {} bytes", length);
    uint8_t *at = c.ep.buffer() + s.report_offset();
    const ReportHeader header{kReportMagic, static_cast<uint32_t>(length)};
    std::memcpy(at, &header, sizeof header);
    std::memcpy(at + sizeof header, text.data(), length);
    const uint64_t sequence = c.next_sequence++;
    const BufferInfo &peer = c.ep.peer_buffer();
    c.check_post(c.ep.post_write(0, context(sequence, 0, kInitiator), s.report_offset(),
                                 static_cast<ULONG>(sizeof header + length),
                                 peer.address + s.report_offset(), peer.token, 0),
                 "NdkWrite (report)");
    c.posted(0, sequence);
    settle(c);
}

// The server's half of a two-process run: answers the client's pings (send and
// write latency, iteration for iteration), or only keeps its receives posted
// (send bandwidth), until the client disconnects; then prints the client's rows.
void serve(const Setup &s, Side &srv, const std::vector<uint64_t> &sizes, Output &out) {
    const std::atomic<bool> no_abort{false};
    std::vector<double> unused(1);
    try {
        if (s.options.mode == Mode::kLatency && s.options.verb != Verb::kRead) {
            for (const uint64_t size : sizes) {
                const uint64_t iters =
                    s.options.duration != 0 ? UINT64_MAX : iterations_for(s, size);
                if (s.options.verb == Verb::kWrite) {
                    write_latency_end(s, srv, false, unused, size, iters, no_abort);
                } else {
                    srv.receive_expected = size;
                    srv.received = 0;
                    send_latency_end(s, srv, false, unused, size, iters, no_abort);
                }
            }
        }
        srv.receive_expected = Side::kAnySize;
        // Until the client disconnects, however long it runs (-D, -a: no stall
        // check). Send bandwidth: the server reposts receives as fast as the client's
        // sends consume them, polling busily as perftest's server does (or sleeping
        // on CQ events with -e); otherwise there is nothing to do but wait.
        const bool receiving = s.options.verb == Verb::kSend;
        for (uint64_t idle = 0;;) {
            if (srv.reap() != 0) {
                idle = 0;
                continue;
            }
            if (srv.ep.peer_disconnected()) break;
            if (s.options.events) {
                srv.ep.arm_cq();
                if (srv.reap() == 0) Endpoint::wait_cq_event(10);
            } else if (!receiving) {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            } else if (++idle % 256 == 0) {
                std::this_thread::yield();
            }
        }
    } catch (const PeerGone &) {
    } catch (const std::exception &e) {
        // A disconnect flushes what the server still had posted; that is the end.
        if (!srv.ep.peer_disconnected()) throw;
        log().debug("server: {} after the client disconnected", e.what());
    }
    const uint8_t *at = srv.ep.buffer() + s.report_offset();
    ReportHeader header{};
    std::memcpy(&header, at, sizeof header);
    if (header.magic != kReportMagic || header.length > kReportBytes - sizeof header)
        throw std::runtime_error("the client disconnected without its report");
    out.replay(std::string(reinterpret_cast<const char *>(at + sizeof header), header.length));
}

}  // namespace

int run_perf(const PerfOptions &options) {
    Setup s;
    s.options = options;
    stall_timeout = std::chrono::duration<double>(options.stall_timeout);
    const bool latency = options.mode == Mode::kLatency;
    s.tx_depth = options.tx_depth != 0 ? options.tx_depth
                 : latency             ? kDefaultLatencyTxDepth
                                       : kDefaultBandwidthTxDepth;
    check_usage(options, s.tx_depth);
    if (options.connection != "RC")
        throw std::runtime_error(
            fmt::format("-c {}: NDK offers reliable connections (RC) only; {} is not supported",
                        options.connection, options.connection));
    const Role role = options.role;
    std::optional<sockaddr_storage> target;
    if (role == Role::kClient) target = server_address(options.host, options.port);
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

    // The adapters. Two processes, embedded: adapters in different processes
    // meet over RoCEv2/UDP (SOFTNDK_FABRIC=udp unless set), and a client whose
    // target is its own default address (127.0.0.1, where the server listens)
    // takes 127.0.0.2, another loopback address (docs/tools.md).
    const bool own = own_adapters(options);
    if (!own && options.qp_timeout >= 0)
        throw UsageError(
            "-u/--qp-timeout changes the ACK timeout of adapters perf sets up itself (embedded, "
            "without SOFTNDK_CONFIG); otherwise set ack_timeout in the adapter's section of "
            "SOFTNDK_CONFIG");
    std::string client_name = options.device, server_name = options.server_device;
    if (role != Role::kBoth && !daemon_mode() && std::getenv("SOFTNDK_FABRIC") == nullptr)
        setenv("SOFTNDK_FABRIC", "udp", 0);
    if (own) {
        // Two adapters for a profile or model time: a process's handles on one
        // interface share one consumer clock (provider/model_time.hpp), and the two
        // ends model two hosts.
        if (role == Role::kBoth &&
            (!options.profile.empty() || options.clock == ClockSource::kModel)) {
            configure_adapters(options, {{1, "rnic0", {"127.0.0.1"}}, {2, "rnic1", {"127.0.0.2"}}});
            if (client_name.empty()) client_name = "rnic0";
            if (server_name.empty()) server_name = "rnic1";
        } else if (role == Role::kClient) {
            char text[SOFTNDK_ADDRESS_STRING_SIZE];
            softndk_address_string(reinterpret_cast<const sockaddr *>(&*target), text, sizeof text);
            const bool own_default =
                std::string_view(text) == "127.0.0.1" || std::string_view(text) == "::1";
            configure_adapters(options, {{1, "rnic0", {own_default ? "127.0.0.2" : "127.0.0.1"}}});
        } else {
            configure_adapters(options, {{1, "rnic0", {"127.0.0.1", "::1"}}});
        }
    }
    const softndk_adapter client_adapter = find_adapter(client_name);
    const softndk_adapter server_adapter =
        server_name.empty() || role != Role::kBoth ? client_adapter : find_adapter(server_name);
    if (options.mtu != 0 && !own) {
        for (const softndk_adapter *a : {&client_adapter, &server_adapter})
            if (a->path_mtu != options.mtu)
                throw std::runtime_error(fmt::format(
                    "-m {}: adapter {} has path MTU {}; SoftNDK sets it per adapter (path_mtu in "
                    "SOFTNDK_CONFIG, or the daemon's config)",
                    options.mtu, a->alias, a->path_mtu));
    }

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
    eo.buffer_bytes = static_cast<size_t>(2 * s.max_size) + (s.two_process() ? kReportBytes : 0);
    s.embedded = !daemon_mode();
    Output out(options);
    const std::vector<uint64_t> sizes = sizes_to_run(s);
    const uint64_t iterations = options.duration != 0 ? 0 : iterations_for(s, sizes.front());

    if (role != Role::kBoth) {
        // One end in this process; the other is another process.
        Endpoint ep(wsk, client_adapter, eo);
        ep.set_test(test_code(options), s.max_size, iterations);
        Side side(ep, role == Role::kServer ? "server" : "client", false);
        side.receive_offset = s.target();
        side.receive_length = static_cast<ULONG>(s.max_size);
        side.events = options.events;
        side.remote_peer = true;
        if (options.verb == Verb::kSend)
            for (size_t qp = 0; qp < options.qp_count; ++qp)
                side.post_receives(qp, s.receive_depth);
        if (role == Role::kServer) {
            const sockaddr_storage *own_address =
                softndk_adapter_address(&client_adapter, AF_UNSPEC);
            if (own_address == nullptr)
                throw std::runtime_error(
                    fmt::format("adapter {} has no address", client_adapter.alias));
            sockaddr_storage listen_address = *own_address;
            reinterpret_cast<sockaddr_in &>(listen_address).sin_port = htons(options.port);
            if (listen_address.ss_family == AF_INET6)
                reinterpret_cast<sockaddr_in6 &>(listen_address).sin6_port = htons(options.port);
            if (out.table()) {
                std::printf(
                    "\n************************************\n"
                    "* Waiting for client to connect... *\n"
                    "************************************\n");
                std::fflush(stdout);
            }
            ep.accept_all(listen_address, kReadLimit);
            check_peer_test(ep, "client");
            out.header(s, ep, ep);
            serve(s, side, sizes, out);
        } else {
            constexpr int kConnectRetryMs = 10'000;
            ep.connect_all(*target, kReadLimit, kConnectRetryMs);
            check_peer_test(ep, "server");
            out.header(s, ep, ep);
            try {
                for (const uint64_t size : sizes) {
                    const uint64_t iters = iterations_for(s, size);
                    s.deadline = now() + options.duration;
                    if (latency) {
                        std::vector<double> unsorted;
                        const LatencyRow r = run_latency(s, side, nullptr, size, iters, unsorted);
                        out.row(format_row(r), json_object(r));
                        out.samples(std::move(unsorted));
                    } else {
                        const BandwidthRow r = run_bandwidth(s, side, nullptr, size, iters);
                        out.row(format_row(r), json_object(r));
                    }
                }
            } catch (const PeerGone &) {
                throw std::runtime_error("the server disconnected before the test ended");
            }
            send_report(s, side, out.report());
        }
        out.finish();
        return 0;  // ~Endpoint disconnects
    }

    Endpoint client(wsk, client_adapter, eo);
    Endpoint server(wsk, server_adapter, eo);
    if (s.model_clock() && (client.model_time() == nullptr || server.model_time() == nullptr))
        throw std::runtime_error(
            "--clock model: the provider does not offer SoftNDK's model-time extension on its "
            "CQs (NdkQueryExtension), so there is no model time to report");
    s.paced = client.model_time() != nullptr && client.time_mode() == SOFTNDK_TIME_MODE_PACED;
    Side c(client, "client", s.model_clock()), srv(server, "server", s.model_clock());
    for (Side *side : {&c, &srv}) {
        side->receive_offset = s.target();
        side->receive_length = static_cast<ULONG>(s.max_size);
        side->events = options.events;
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
    out.header(s, client, server);
    for (const uint64_t size : sizes) {
        const uint64_t iters = iterations_for(s, size);
        s.deadline = now() + options.duration;
        const PacedCounts paced_before = s.paced ? paced_counts(client, server) : PacedCounts{};
        std::string table_row, json_row;
        std::vector<double> unsorted;
        if (latency) {
            const LatencyRow r = run_latency(s, c, &srv, size, iters, unsorted);
            table_row = format_row(r);
            json_row = json_object(r);
        } else {
            const BandwidthRow r = run_bandwidth(s, c, &srv, size, iters);
            table_row = format_row(r);
            json_row = json_object(r);
        }
        if (s.paced)
            add_paced_counts(table_row, json_row, paced_counts(client, server) - paced_before);
        out.row(table_row, json_row);
        out.samples(std::move(unsorted));
    }
    disconnect_pair(client, server);
    out.finish();
    return 0;
}

}  // namespace softndk::tool
