// qp_state.cpp - QP state transitions, completions, flushing and timers.
#include <array>
#include <cstring>

#include <algorithm>

#include "device/device.hpp"
#include "device/log.hpp"
#include "rc/engine.hpp"
#include "trace/hooks.hpp"

namespace softndk::emu {

namespace {
constexpr std::array<std::string_view, 5> kQpStateNames = {"RESET", "INIT", "RTR", "RTS", "ERROR"};
}

std::string_view to_string(QpState state) {
    return kQpStateNames[static_cast<size_t>(state)];
}

namespace rc {

void modify_qp(Qp &qp, QpState to) {
    if (qp.state == to) return;
    logger(Component::kRc).debug("qp#{}: {} -> {}", qp.number, to_string(qp.state), to_string(to));
    tracing::qp_state(qp, qp.state, to);
    qp.state = to;
    if (to == QpState::kRtr) {
        qp.resp.reads.assign(std::max<uint32_t>(qp.path.ird, 1), ReadResource{});
        qp.resp.next_read = 0;
    }
    if (to == QpState::kRts) {
        const auto &t = qp.device.transport();
        qp.req.retry_left = t.retry_count;
        qp.req.rnr_retry_left = t.rnr_retry;
        requester_doorbell(qp);  // WQEs posted before RTS waited in the ring
    }
}

namespace {
// When a CQE that must be seen after data the device placed (visible at `placed_ns`)
// may be written: once the data's last write has left on the PCIe write channel, not
// once it is visible. Posted writes stay in order on the way to memory, so the CQE,
// written behind the data on the same channel, becomes visible after it - as a NIC
// streams a receive's CQE right behind its payload. Waiting for the data to be visible
// first would cost every such CQE a second DMA latency, and leave the channel idle
// for it (a SEND stream's receive CQEs then halved the channel's rate).
uint64_t written_before_cqe(const Qp &qp, uint64_t placed_ns) {
    const uint64_t latency = qp.device.cost().dma_write_ns;
    return placed_ns > latency ? placed_ns - latency : 0;
}
}  // namespace

void complete_send(Qp &qp, const SendWqe &wqe, hw::Syndrome syndrome, uint32_t vendor) {
    const bool ok = syndrome == hw::Syndrome::kSuccess;
    if (ok && !wqe.signaled()) return;  // retired by the next CQE (cumulative)
    hw::Cqe c{};
    c.byte_count = wqe.length;
    c.qp_number = qp.number;
    c.vendor_syndrome = vendor;
    c.wqe_counter = wqe.index;
    c.wqe_opcode = wqe.opcode;
    c.syndrome = syndrome;
    if (!ok) qp.device.counters().add(Counter::send_err);
    if (syndrome == hw::Syndrome::kWorkRequestFlushed)
        qp.device.counters().add(Counter::flushed_wqes);
    // A WQE that never reached the wire completes when its unit finished with it; one
    // that did, when the event retiring it (ACK, READ response) was handled. READ data
    // is visible before its CQE (written_before_cqe()).
    auto &dev = qp.device;
    const uint64_t ready = dev.timing().receive_unit(
        qp.number,
        std::max({qp.now_ns, wqe.processed_ns, written_before_cqe(qp, qp.req.placed_ns)}),
        dev.cost().pu_cqe_ns);
    dev.push_cqe(*qp.send_cq, c, ok ? hw::CqeOpcode::kRequester : hw::CqeOpcode::kRequesterError,
                 ready);
}

void complete_recv(Qp &qp, uint16_t slot, hw::Syndrome syndrome, uint32_t bytes,
                   hw::CqeOpcode opcode, uint8_t flags, uint32_t invalidated, uint32_t vendor) {
    hw::Cqe c{};
    c.byte_count = bytes;
    c.qp_number = qp.number;
    c.invalidated_token = invalidated;
    c.vendor_syndrome = vendor;
    c.wqe_counter = slot;
    c.syndrome = syndrome;
    c.flags = flags;
    if (syndrome == hw::Syndrome::kWorkRequestFlushed)
        qp.device.counters().add(Counter::flushed_wqes);
    // The receive's data is visible before its CQE (written_before_cqe()).
    auto &dev = qp.device;
    const uint64_t ready = dev.timing().receive_unit(
        qp.number, std::max(qp.now_ns, written_before_cqe(qp, qp.resp.placed_ns)),
        dev.cost().pu_cqe_ns);
    qp.resp.recv_cqe_ns =
        std::max(qp.resp.recv_cqe_ns, dev.push_cqe(*qp.recv_cq, c, opcode, ready));
}

void flush_queues(Qp &qp) {
    Requester &r = qp.req;
    const auto cause = static_cast<uint32_t>(qp.error_cause);
    // SQ: everything fetched, then whatever is still in the ring.
    while (!r.wqes.empty()) {
        complete_send(qp, r.wqes.front(), hw::Syndrome::kWorkRequestFlushed, cause);
        r.wqes.pop_front();
    }
    r.send_index = 0;
    r.outstanding_reads = 0;
    if (SqConsumer &sq = *r.sq; sq.acquire_producer()) {
        while (sq.available() != 0) {
            const uint32_t position = sq.consumer();
            hw::CtrlSegment ctrl;
            sq.read(position, &ctrl, sizeof(ctrl));
            const uint32_t bbs = (ctrl.segment_count * hw::kSegmentBytes + hw::kWqeBasicBlock - 1) /
                                 hw::kWqeBasicBlock;
            const bool sane = ctrl.segment_count != 0 &&
                              ctrl.segment_count <= qp.max_send_segments && bbs <= sq.available() &&
                              ctrl.wqe_index == static_cast<uint16_t>(position);
            if (!sane) {  // not a WQE boundary the provider wrote: skip one block
                sq.release(position + 1);
                continue;
            }
            SendWqe w;
            w.index = ctrl.wqe_index;
            w.opcode = ctrl.opcode;
            w.flags = ctrl.flags;
            complete_send(qp, w, hw::Syndrome::kWorkRequestFlushed, cause);
            sq.release(position + bbs);
        }
    }
    // RQ: a receive a SEND was filling, then the ring.
    Responder &s = qp.resp;
    if (s.recv) {
        complete_recv(qp, s.recv->slot, hw::Syndrome::kWorkRequestFlushed, 0,
                      hw::CqeOpcode::kResponderError, s.recv->from_srq ? hw::kCqeSrq : 0, 0, cause);
        s.recv.reset();
    }
    if (s.rq && s.rq->acquire_producer()) {  // an SRQ is never flushed by one QP
        RqConsumer &rq = *s.rq;
        while (rq.available() != 0) {
            const uint32_t position = rq.consumer();
            complete_recv(qp, static_cast<uint16_t>(position & (rq.entries() - 1)),
                          hw::Syndrome::kWorkRequestFlushed, 0, hw::CqeOpcode::kResponderError, 0,
                          0, cause);
            rq.release(position + 1);
        }
    }
}

void enter_error(Qp &qp, const char *why, hw::Syndrome cause) {
    if (qp.state != QpState::kError) {
        logger(Component::kRc)
            .debug("qp#{}: {} -> ERROR ({})", qp.number, to_string(qp.state), why);
        tracing::qp_state(qp, qp.state, QpState::kError);
        qp.state = QpState::kError;
        qp.error_cause = cause;
        qp.device.count_qp_in_error(qp.context);
    }
    Requester &r = qp.req;
    r.rnr_wait = false;
    r.rnr_deadline.reset();
    r.ack_deadline.reset();
    Responder &s = qp.resp;
    s.in_progress = Responder::Message::kNone;
    s.write_target = DmaRange{};
    s.offset = 0;
    flush_queues(qp);
}

void receive_doorbell(Qp &qp) {
    if (qp.state == QpState::kError) flush_queues(qp);
}

std::optional<uint64_t> ack_timeout_ns(const Qp &qp) {
    const uint8_t t = qp.device.transport().ack_timeout;
    if (t == 0) return std::nullopt;  // IBA: 0 = infinite
    return uint64_t{4096} << std::min<uint8_t>(t, 31);
}

void arm_ack_timer(Qp &qp) {
    Requester &r = qp.req;
    const auto timeout = ack_timeout_ns(qp);
    if (!timeout) return;
    // From the latest packet's departure, as a NIC's retransmission timer runs.
    r.ack_deadline_ns = std::max(qp.tx_ns, qp.now_ns) + *timeout;
    if (qp.delivering_run) {
        // Dated and queued by end_run(); armed meanwhile, as it would be.
        qp.ack_arm_deferred = true;
        qp.ack_armed_at_ns = qp.now_ns;
        r.ack_deadline = SteadyTime::max();
        return;
    }
    r.ack_deadline = qp.device.wall_deadline(qp.now_ns, r.ack_deadline_ns);
    schedule_timer(qp);
}

void begin_run(Qp &qp) {
    qp.delivering_run = true;
}

void end_run(Qp &qp) {
    qp.delivering_run = false;
    if (qp.ack_arm_deferred) {
        qp.ack_arm_deferred = false;
        // Still armed unless an ACK of everything outstanding reset it since.
        Requester &r = qp.req;
        if (r.ack_deadline)
            r.ack_deadline = qp.device.wall_deadline(qp.ack_armed_at_ns, r.ack_deadline_ns);
    }
    schedule_timer(qp);
}

void arm_rnr_timer(Qp &qp, uint64_t delay_ns) {
    Requester &r = qp.req;
    r.rnr_deadline_ns = qp.now_ns + delay_ns;
    r.rnr_deadline = qp.device.wall_deadline(qp.now_ns, r.rnr_deadline_ns);
    schedule_timer(qp);
}

void schedule_timer(Qp &qp) {
    if (qp.delivering_run) return;  // end_run() schedules
    const Requester &r = qp.req;
    std::optional<SteadyTime> due = r.rnr_deadline;
    if (r.ack_deadline && (!due || *r.ack_deadline < *due)) due = r.ack_deadline;
    if (!due || (qp.timer_at && *qp.timer_at <= *due)) return;
    qp.timer_at = due;
    Device *dev = &qp.device;
    const uint32_t number = qp.number;
    dev->schedule(*due, [dev, number] {
        auto q = dev->find_qp(number);
        if (!q) return;
        std::lock_guard lock(q->mutex);
        const auto now = sim::steady_now();
        if (q->timer_at && *q->timer_at <= now) q->timer_at.reset();
        if (!q->destroyed) requester_timer(*q, now);
    });
}

}  // namespace rc
}  // namespace softndk::emu
