// qp.hpp - one RC queue pair: its rings, its state machine and the transport state
// of its three engine stages (requester.cpp, responder.cpp, completer.cpp).
//
// Locking: Qp::mutex protects EVERYTHING in a Qp except the const identity
// fields. Engine stages run with it held; they never take another QP's lock
// (packets to the peer go to the fabric outbox and are delivered after the lock
// is dropped), and may take the QP's CQ locks (order QP -> SRQ -> CQ -> EQ).
//
// Lifetime: the device's QP table holds a shared_ptr; packets in delivery, timers
// and the CM look the QP up by number and hold their own shared_ptr while they
// work. destroy marks the QP `destroyed` under the lock; after that every stage
// is a no-op and the memory goes when the last reference does.
//
// State machine (IB, rnic-model §2.6): RESET -> INIT -> RTR -> RTS, ERROR from any
// state. The CM drives RESET..RTS; errors, flush and disconnect drive ERROR. In
// ERROR every fetched or newly posted WQE (SQ and RQ) completes with
// kWorkRequestFlushed, one CQE each, and arriving packets are dropped.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include <boost/circular_buffer.hpp>
#include <boost/container/small_vector.hpp>

#include "device/adaptive_mutex.hpp"
#include "device/cq.hpp"
#include "device/queue_memory.hpp"
#include "device/srq.hpp"
#include "memory/mpt.hpp"
#include "rc/placement.hpp"
#include "softndk/hw_interface.hpp"
#include "softndk/ring.hpp"
#include "wire/packet.hpp"

namespace softndk::emu {

class Device;
struct Packet;

enum class QpState : uint8_t { kReset, kInit, kRtr, kRts, kError };
std::string_view to_string(QpState state);

using SteadyTime = std::chrono::steady_clock::time_point;

// A send WQE after fetch and validation: the device's private copy (the ring slot
// may be reused as soon as the consumer counter moves past it).
// A WQE's checked scatter/gather list. Most WQEs carry one or two SGEs: kept inline,
// so fetching a WQE allocates nothing (boost's small_vector: a std::vector with an
// inline buffer, which the standard library lacks).
using SgeList = boost::container::small_vector<DmaRange, 2>;

struct SendWqe {
    uint16_t index = 0;  // wqe_index = SQ position of the WQE (low 16 bits)
    hw::WqeOpcode opcode = hw::WqeOpcode::kNop;
    uint8_t flags = 0;
    hw::Syndrome error = hw::Syndrome::kSuccess;  // fetch-time failure, reported in order
    uint32_t vendor = 0;                          // detail for error (Cqe::vendor_syndrome)
    uint32_t length = 0;                          // message bytes
    uint64_t remote_address = 0;
    uint32_t remote_token = 0;
    uint32_t invalidate_token = 0;
    SgeList sges;  // checked local gather (SEND/WRITE) or sink (READ)
    // kCtrlInline payload: in place up to 64 bytes, so a small inline message allocates
    // nothing.
    boost::container::small_vector<uint8_t, 64> inline_data;
    uint32_t first_local_token = 0;  // READ with kCtrlReadLocalInvalidate: invalidated on success
    hw::FastRegisterSegment fast_register{};      // kFastRegister
    std::vector<std::byte *> pages;               // kFastRegister: device-side page pointers
    std::shared_ptr<const void> pages_keepalive;  // ... and the LAM mappings behind them
    hw::BindSegment bind{};                       // kBindWindow
    // Model time (ns, time/model.hpp): the doorbell that announced it was rung, and
    // the WQE reached the device (BlueFlame: with the doorbell; else after the fetch).
    uint64_t posted_ns = 0;
    uint64_t ready_ns = 0;
    uint64_t processed_ns = 0;  // its processing unit finished with it (first transmission)
    // Transport progress.
    bool started = false;  // PSNs assigned (first transmission happened)
    uint32_t first_psn = 0;
    uint32_t psn_count = 0;      // packets of the message; READ: response packets
    uint32_t next_packet = 0;    // next packet to (re)transmit, relative to first_psn
    uint32_t read_received = 0;  // READ: response packets placed so far

    bool signaled() const { return (flags & hw::kCtrlSignaled) != 0; }
    bool is_read() const { return opcode == hw::WqeOpcode::kRdmaRead; }
    bool on_wire() const { return psn_count != 0; }
};

// A receive WQE after fetch: its slot and its checked scatter list.
struct RecvWqe {
    uint16_t slot = 0;
    bool from_srq = false;  // slot indexes the QP's SRQ
    SgeList sges;
    uint64_t capacity = 0;
    hw::Syndrome error = hw::Syndrome::kSuccess;
    uint32_t vendor = 0;
};

// The fetched send WQEs, oldest first, in a ring that doubles when full and never
// shrinks: once it has held as many as the QP keeps in flight, fetching and retiring
// a WQE allocates nothing (a std::deque of WQEs this large allocated a node per WQE).
// boost::circular_buffer is the ring; this wrapper grows it where its own push_back
// would overwrite the oldest element.
class SendWqeQueue {
  public:
    void push_back(SendWqe &&w) {
        if (ring_.full()) ring_.set_capacity(std::max<size_t>(8, 2 * ring_.capacity()));
        ring_.push_back(std::move(w));
    }
    void pop_front() { ring_.pop_front(); }
    SendWqe &front() { return ring_.front(); }
    SendWqe &operator[](size_t i) { return ring_[i]; }
    const SendWqe &operator[](size_t i) const { return ring_[i]; }
    size_t size() const { return ring_.size(); }
    bool empty() const { return ring_.empty(); }
    auto begin() { return ring_.begin(); }
    auto end() { return ring_.end(); }

  private:
    boost::circular_buffer<SendWqe> ring_;
};

struct Requester {
    std::optional<SqConsumer> sq;
    SendWqeQueue wqes;      // fetched, not yet retired, in post order
    size_t send_index = 0;  // wqes[send_index] is the next WQE to (re)transmit
    uint32_t next_psn = 0;  // PSN of the next new packet
    uint32_t una_psn = 0;   // oldest unacknowledged PSN (completer)
    uint32_t outstanding_reads = 0;
    // Model time of the READ slots (ORD) and fences. The host learns that a READ is
    // done when it processes its last response, which in model time may be later than
    // a doorbell it processes afterwards: a READ takes the slot READ (n - ORD) freed and
    // starts no earlier than that one's completion; a fenced WQE no earlier than the
    // latest READ's. read_done_ns[i] = completion of READ number reads_done_base + i.
    uint64_t reads_started = 0;
    uint64_t reads_done_base = 0;
    std::deque<uint64_t> read_done_ns;
    uint64_t last_read_done_ns = 0;
    bool fetch_blocked = false;  // a malformed WQE: fetch nothing after it
    // A FAST_REGISTER, BIND_WINDOW or LOCAL_INVALIDATE was fetched and has not executed
    // yet: the WQEs behind it are parsed (and their keys checked) only after it did, as
    // mlx5 fences the WQEs after a UMR. A consumer may post FR then a send or READ that
    // uses the new key without waiting for the FR's completion.
    bool fetch_paused_for_key = false;
    uint8_t retry_left = 0;
    uint8_t rnr_retry_left = 0;
    bool rnr_wait = false;  // RNR NAK received; resend at rnr_deadline
    // Timers: the deadline in model time, and the host time the timer queue fires it
    // (qp_state.cpp, wall_deadline()).
    std::optional<SteadyTime> rnr_deadline;
    std::optional<SteadyTime> ack_deadline;
    uint64_t rnr_deadline_ns = 0;
    uint64_t ack_deadline_ns = 0;
    // Model time: the latest SQ doorbell reached the device at doorbell_ns (its WQE
    // came with it if doorbell_blueflame); READ response data was last visible at
    // placed_ns.
    uint64_t doorbell_ns = 0;
    bool doorbell_blueflame = false;
    uint64_t placed_ns = 0;
    uint32_t packets_since_ack_req = 0;
    // READ response PSN last re-requested: responses after a gap keep arriving until
    // the replay does, and must not start a retry each (one retry sequence at a time).
    std::optional<uint32_t> read_retry_psn;
};

// One saved RDMA READ for duplicate replay (IRD resources).
struct ReadResource {
    uint32_t first_psn = 0;
    uint32_t psn_count = 0;
    uint32_t msn = 0;
    DmaRange source;
};

struct Responder {
    std::optional<RqConsumer> rq;  // unset when the QP draws from an SRQ
    uint32_t epsn = 0;             // expected PSN
    uint32_t msn = 0;              // completed messages (24 bits on the wire)
    bool sequence_nak_sent = false;
    enum class Message : uint8_t { kNone, kSend, kWrite } in_progress = Message::kNone;
    std::optional<RecvWqe> recv;  // SEND in progress (or fetched for one)
    uint64_t offset = 0;          // bytes of the message placed so far
    DmaRange write_target;        // WRITE in progress
    bool send_invalidate = false;
    std::vector<ReadResource> reads;  // ring of ird entries
    size_t next_read = 0;
    // IRD enforcement: READs accepted whose last response has not left the device yet.
    // Each holds one count through its last response's Packet::departure_hold, given back
    // when the fabric takes that packet (or it is lost), so the count follows the order
    // packets move in, never a model clock: across processes each has its own. A READ
    // that arrives while ird of them are unsent came from a requester over its ORD: one
    // that honours ORD sends READ ord+1 only after a READ's last response reached it,
    // which is after that response left (responder.cpp). Shared, so that a response still
    // on its way when the QP is destroyed gives its count back safely.
    std::shared_ptr<std::atomic<uint32_t>> unsent_reads =
        std::make_shared<std::atomic<uint32_t>>(0);
    // Model time: data of the latest SEND or WRITE became visible at placed_ns. A
    // consumer that polls memory for a WRITE is taken to have seen it then, so the
    // QP's next doorbell is never earlier (requester.cpp, doorbell_posted()).
    uint64_t placed_ns = 0;
    // Model time the latest receive CQE became visible: a consumer learns of a SEND
    // there. The QP's next doorbell is dated no sooner than host_turnaround_ns after
    // the later of this and placed_ns (doorbell_posted()).
    uint64_t recv_cqe_ns = 0;
    uint32_t target_mpt = 0;  // MPT index of the WRITE in progress (cache lookups)
    uint64_t target_va = 0;   // its next byte's address
};

// Connection attributes, set by the CM before RTR.
struct QpPath {
    wire::IpAddr local_ip{};
    wire::IpAddr remote_ip{};
    uint32_t remote_qpn = 0;
    uint32_t mtu = 1024;
    uint16_t udp_source_port = 0xC000;
    uint32_t ird = 0;  // effective inbound read limit
    uint32_t ord = 0;  // effective outbound read limit
};

class Qp {
  public:
    Qp(Device &device, uint32_t number, uint32_t context, uint32_t pd) noexcept
        : device(device), number(number), context(context), pd(pd) {}

    Device &device;
    const uint32_t number;
    const uint32_t context;
    const uint32_t pd;

    // Spins briefly before it sleeps: the peer's thread takes it right after seeing a
    // payload this QP's holder placed (adaptive_mutex.hpp).
    AdaptiveMutex mutex;
    std::shared_ptr<Cq> send_cq;
    std::shared_ptr<Cq> recv_cq;
    std::shared_ptr<Srq> srq;  // receives come from here instead of the RQ
    std::unique_ptr<QueueMemory> memory;
    hw::QueueLayout sq_layout{};
    hw::QueueLayout rq_layout{};
    uint32_t max_send_sge = 0;
    uint32_t max_recv_sge = 0;
    uint32_t max_inline = 0;
    uint32_t max_send_segments = 0;  // largest segment_count a WQE may have

    // Model time (ns) of the event the engine is handling for this QP: set by each
    // entry point (doorbell, packet arrival, timer) and advanced by the steps it takes.
    uint64_t now_ns = 0;
    // Model time the QP's latest packet reached the far port: a QP's packets (requests,
    // responses, ACKs) leave in order, so none arrives before it (Device::transmit).
    uint64_t tx_ns = 0;

    QpState state = QpState::kReset;
    // What moved the QP to ERROR (set once, on the way in). Every CQE flushed after
    // that carries it as vendor_syndrome (NDK ProviderErrorCode), so a consumer whose
    // requests come back STATUS_CANCELLED can still tell why: NDK has no QP event.
    // kWorkRequestFlushed: the QP was flushed on purpose (disconnect, flush, close).
    hw::Syndrome error_cause = hw::Syndrome::kWorkRequestFlushed;
    bool destroyed = false;
    std::optional<SteadyTime> timer_at;  // earliest entry for this QP in the device timer queue
    // Set by Device::deliver_run_to_qp() while it hands the engine a run's packets one by
    // one (rc::begin_run, rc::end_run), under the QP lock throughout, so no timer fires
    // in between. Meanwhile an ACK timer armed (arm_ack_timer) keeps its model deadline
    // and the QP time it was armed at (ack_armed_at_ns) but is dated on the host and
    // queued only once, at the run's end: per READ response packet that was ~7 % of the
    // device's time in a 1 MiB READ. req.ack_deadline reads as armed meanwhile.
    bool delivering_run = false;
    bool ack_arm_deferred = false;
    uint64_t ack_armed_at_ns = 0;
    uint32_t connection = 0;  // CM connection id bound to this QP (0: none)
    QpPath path;
    Requester req;
    Responder resp;
    // Payload placement of both directions (responder: SEND and WRITE data; completer:
    // READ responses), deferred while a run is delivered (rc/placement.hpp).
    rc::DeferredPlacement placement;
};

}  // namespace softndk::emu
