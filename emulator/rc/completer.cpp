// completer.cpp - ACKs, NAKs and READ responses -> requester CQEs, retries.
#include "device/device.hpp"
#include "device/log.hpp"
#include "rc/engine.hpp"
#include "trace/hooks.hpp"
#include "wire/psn.hpp"

namespace softndk::emu::rc {
namespace {

// NAK code -> requester completion syndrome (rnic-model §2.3).
constexpr hw::Syndrome kNakSyndrome[] = {
    hw::Syndrome::kTransportRetryExceeded,  // PSN sequence error (only when retries run out)
    hw::Syndrome::kRemoteInvalidRequest,    // invalid request
    hw::Syndrome::kRemoteAccess,            // remote access error
    hw::Syndrome::kRemoteOperation,         // remote operational error
    hw::Syndrome::kRemoteInvalidRequest,    // invalid RD request
};

// True if `psn` lies in [una, next): something we sent and is not yet acknowledged.
bool outstanding(const Requester &r, uint32_t psn) {
    return wire::psn_in_range(psn, r.una_psn, wire::psn_distance(r.una_psn, r.next_psn));
}

SendWqe *wqe_holding(Requester &r, uint32_t psn) {
    for (auto &w : r.wqes) {
        if (!w.started) break;
        if (w.on_wire() && wire::psn_in_range(psn, w.first_psn, w.psn_count)) return &w;
    }
    return nullptr;
}

void fail_at(Qp &qp, uint32_t psn, hw::Syndrome syndrome) {
    if (SendWqe *w = wqe_holding(qp.req, psn)) {
        w->error = syndrome;
    } else if (!qp.req.wqes.empty()) {
        qp.req.wqes.front().error = syndrome;
    }
}

// Go-back-N from `psn`, charging one retry. False if the retries are exhausted
// (the WQE holding psn then fails with transport-retry-exceeded).
void retry_from(Qp &qp, uint32_t psn) {
    Requester &r = qp.req;
    if (r.retry_left == 0) {
        qp.device.counters().add(Counter::retry_exceeded_err);
        fail_at(qp, psn, hw::Syndrome::kTransportRetryExceeded);
        return;
    }
    --r.retry_left;
    tracing::retry(qp, softndk::trace::RetryKind::kSequence, psn);
    qp.device.counters().add(Counter::completer_retry_err);
    requester_rewind(qp, psn);
}

// Advances una to `psn` (everything before it is acknowledged).
void acknowledge_before(Qp &qp, uint32_t psn) {
    Requester &r = qp.req;
    if (wire::psn_after(psn, r.una_psn)) {
        r.una_psn = psn;
        r.retry_left = qp.device.transport().retry_count;
        r.ack_deadline.reset();
        if (r.una_psn != r.next_psn) arm_ack_timer(qp);
    }
}

void on_read_response(Qp &qp, const wire::PacketDescriptor &d) {
    Requester &r = qp.req;
    const uint32_t psn = d.bth.psn;
    SendWqe *w = wqe_holding(r, psn);
    if (w == nullptr || !w->is_read() || w->read_received == w->psn_count) return;  // stale
    const uint32_t expected = wire::psn_add(w->first_psn, w->read_received);
    if (psn != expected) {
        if (wire::psn_after(psn, expected) && r.read_retry_psn != expected) {
            // A response went missing: acknowledge what came before, then re-request.
            r.read_retry_psn = expected;
            acknowledge_before(qp, expected);
            retry_from(qp, expected);
        }
        return;
    }
    const auto seg = wire::segment_message(wire::MessageOp::kRdmaReadResponse, w->length,
                                           qp.path.mtu, w->read_received);
    if (!seg || seg->opcode != d.bth.opcode || seg->length != d.payload.size()) {
        w->error = hw::Syndrome::kBadResponse;
        acknowledge_before(qp, psn);
        return;
    }
    r.placed_ns = std::max(r.placed_ns, qp.device.timing().dma_write(qp.now_ns, d.payload.size()));
    qp.device.pace(r.placed_ns);
    qp.placement.place({w->sges.data(), w->sges.size()}, seg->offset, d.payload);
    ++w->read_received;
    if (w->read_received == w->psn_count) {
        qp.placement.flush();  // the data before the READ's CQE
        if (r.outstanding_reads != 0) --r.outstanding_reads;
        r.read_done_ns.push_back(r.placed_ns);
        r.last_read_done_ns = std::max(r.last_read_done_ns, r.placed_ns);
    }
    acknowledge_before(qp, wire::psn_add(psn, 1));
}

void on_ack(Qp &qp, const wire::PacketDescriptor &packet) {
    Requester &r = qp.req;
    auto &dev = qp.device;
    const uint32_t psn = packet.bth.psn;
    const auto syn = wire::decode_aeth_syndrome(packet.aeth.syndrome);
    if (!syn.valid) return;
    if (syn.is_ack()) {
        if (!outstanding(r, psn)) return;  // duplicate or bogus ACK
        // An ACK beyond a READ whose responses are missing: they were lost (rnic-model §2.2).
        for (auto &w : r.wqes) {
            if (!w.started || wire::psn_after(w.first_psn, psn)) break;
            if (w.is_read() && w.read_received < w.psn_count) {
                const uint32_t missing = wire::psn_add(w.first_psn, w.read_received);
                if (r.read_retry_psn == missing) return;  // already re-requested
                r.read_retry_psn = missing;
                acknowledge_before(qp, missing);
                retry_from(qp, missing);
                return;
            }
        }
        acknowledge_before(qp, wire::psn_add(psn, 1));
        return;
    }
    // NAKs carry the PSN they refer to; everything before it is acknowledged.
    if (!outstanding(r, psn)) return;
    acknowledge_before(qp, psn);
    if (syn.is_rnr_nak()) {
        dev.counters().add(Counter::rcvd_rnr_err);
        const uint8_t limit = dev.transport().rnr_retry;
        if (limit != 7) {
            if (r.rnr_retry_left == 0) {
                dev.counters().add(Counter::rnr_retry_exceeded_err);
                fail_at(qp, psn, hw::Syndrome::kRnrRetryExceeded);
                return;
            }
            --r.rnr_retry_left;
        }
        r.rnr_wait = true;
        r.ack_deadline.reset();
        logger(Component::kRc)
            .debug("qp#{}: RNR NAK psn {:#x}, wait {} us", qp.number, psn,
                   wire::rnr_timer_usec(syn.value));
        arm_rnr_timer(qp, uint64_t{wire::rnr_timer_usec(syn.value)} * 1000);
        tracing::retry(qp, softndk::trace::RetryKind::kRnr, psn, r.rnr_deadline_ns);
        return;
    }
    const auto code = syn.nak_code();
    if (code == wire::NakCode::kPsnSequenceError) {
        dev.counters().add(Counter::rcvd_seq_err);
        if (r.rnr_wait) return;  // the packets after an RNR NAK: the timer resends them
        retry_from(qp, psn);
        return;
    }
    logger(Component::kRc).debug("qp#{}: NAK {} psn {:#x}", qp.number, wire::to_string(code), psn);
    fail_at(qp, psn, kNakSyndrome[static_cast<uint8_t>(code)]);
}

}  // namespace

void completer_receive(Qp &qp, const wire::PacketDescriptor &packet, bool unit_booked) {
    if (qp.state != QpState::kRts) return;
    if (!unit_booked) {
        qp.now_ns =
            qp.device.timing().receive_unit(qp.number, qp.now_ns, qp.device.cost().pu_packet_ns);
    }
    const auto family = packet.info().family;
    if (family == wire::OpFamily::kReadResponse) {
        on_read_response(qp, packet);
    } else if (family == wire::OpFamily::kAck) {
        on_ack(qp, packet);
    } else {
        return;
    }
    complete_in_order(qp);
    requester_progress(qp);
    // Progress may have run local WQEs that a fence held back (READ_FENCE behind the
    // READ just completed): they are finished and must complete now, not at the next
    // doorbell.
    complete_in_order(qp);
}

void complete_in_order(Qp &qp) {
    Requester &r = qp.req;
    while (!r.wqes.empty()) {
        SendWqe &w = r.wqes.front();
        if (w.error != hw::Syndrome::kSuccess) {
            // Every WQE before it retired: report it (errors are always reported), then
            // the QP goes to ERROR and everything else is flushed.
            SendWqe failed = std::move(w);
            r.wqes.pop_front();
            if (r.send_index != 0) --r.send_index;
            complete_send(qp, failed, failed.error, failed.vendor);
            enter_error(qp, "work request failed", failed.error);
            return;
        }
        if (!w.started) break;
        bool done;
        if (!w.on_wire()) {
            done = true;
        } else if (w.is_read()) {
            done = w.read_received == w.psn_count;
        } else {
            const uint32_t last = wire::psn_add(w.first_psn, w.psn_count - 1);
            done = wire::psn_before(last, r.una_psn);
        }
        if (!done) break;
        if (w.is_read() && (w.flags & hw::kCtrlReadLocalInvalidate) != 0) {
            const KeyStatus k =
                qp.device.mpt().local_invalidate(w.first_local_token, qp.number, qp.pd);
            if (k != KeyStatus::kOk) {
                w.error = syndrome_for(KeyOperation::kLocalInvalidate, k);
                w.vendor = static_cast<uint32_t>(k);
                continue;  // reported by the error branch above
            }
        }
        complete_send(qp, w, hw::Syndrome::kSuccess);
        r.wqes.pop_front();
        if (r.send_index != 0) --r.send_index;
    }
    if (r.una_psn == r.next_psn) r.ack_deadline.reset();
    schedule_timer(qp);
}

}  // namespace softndk::emu::rc
