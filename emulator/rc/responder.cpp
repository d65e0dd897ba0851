// responder.cpp - request packets -> memory and receive WQEs; ACK/NAK generation.
//
// Check order (rnic-model §0 item 5, rxe_resp.c): PSN -> opcode sequence -> QP access
// (IRD) -> receive resources (RNR NAK) -> length -> rkey (via the MPT) -> execute.
#include <cstring>
#include <optional>

#include "device/device.hpp"
#include "device/log.hpp"
#include "rc/engine.hpp"
#include "wire/psn.hpp"

namespace softndk::emu::rc {
namespace {

using wire::MsgPosition;
using wire::OpFamily;

void send_ack(Qp &qp, uint32_t psn, uint8_t syndrome, uint32_t msn) {
    Packet p;
    p.desc.bth.opcode = wire::Opcode::kAcknowledge;
    p.desc.bth.psn = psn;
    p.desc.aeth = {syndrome, msn & wire::kPsnMask};
    // Leaves once the request is processed: its data write is posted, not awaited.
    qp.device.transmit(qp, std::move(p), qp.now_ns);
}

// The syndrome a NAK reports to the requester; here it names why this QP failed.
hw::Syndrome nak_cause(wire::NakCode code) {
    switch (code) {
        case wire::NakCode::kRemoteAccessError:
            return hw::Syndrome::kRemoteAccess;
        case wire::NakCode::kRemoteOperationalError:
            return hw::Syndrome::kRemoteOperation;
        default:
            return hw::Syndrome::kRemoteInvalidRequest;
    }
}

// Class C/A/J errors: NAK the requester, then this QP goes to ERROR. No WQE of this
// QP is to blame, so the failure is also an affiliated async event (verbs'
// QP_REQ_ERR / QP_ACCESS_ERR): a kQpFatal EQE, and the cause on every flushed CQE.
void fatal(Qp &qp, uint32_t psn, wire::NakCode code, const char *why) {
    logger(Component::kRc)
        .debug("qp#{}: responder error at psn {:#x}: {} -> NAK {}", qp.number, psn, why,
               wire::to_string(code));
    send_ack(qp, psn, wire::aeth_nak_syndrome(code), qp.resp.msn);
    const bool first = qp.state != QpState::kError;
    const hw::Syndrome cause = nak_cause(code);
    enter_error(qp, why, cause);
    if (first) {
        hw::Eqe e{};
        e.type = static_cast<uint8_t>(hw::EqeType::kQpFatal);
        e.object = qp.number;
        e.data0 = static_cast<uint64_t>(cause);
        e.event_time_ns = qp.now_ns;  // when the QP's unit met the error
        qp.device.post_event(qp.context, e);
    }
}

// Reads one receive WQE out of `rq` (its slot is released at once; the copy lives in
// `recv`). False if the ring is empty. A garbage producer yields a failed WQE.
bool take_recv(Qp &qp, RqConsumer &rq, uint32_t max_sge, RecvWqe &recv) {
    if (!rq.acquire_producer()) {
        recv.error = hw::Syndrome::kLocalQpOperation;
        return true;
    }
    if (rq.available() == 0) return false;
    const uint32_t position = rq.consumer();
    std::array<hw::DataSegment, hw::kMaxWqeSegments> segs;
    const uint32_t n = rq.entry_bytes() / hw::kSegmentBytes;
    rq.read(position, segs.data(), rq.entry_bytes());
    rq.release(position + 1);
    recv.slot = static_cast<uint16_t>(position & (rq.entries() - 1));
    for (uint32_t i = 0; i < n && i < max_sge; ++i) {
        const hw::DataSegment &ds = segs[i];
        if (ds.local_token == hw::kRecvListEnd) break;
        KeyCheck k = qp.device.mpt().check(ds.local_token, qp.pd, hw::kAccessLocalWrite, ds.address,
                                           ds.byte_count, qp.number, AccessOrigin::kLocal);
        if (!k.ok() && recv.error == hw::Syndrome::kSuccess) {
            recv.error = k.syndrome;
            recv.vendor = static_cast<uint32_t>(k.status);
        }
        recv.capacity += ds.byte_count;
        recv.sges.push_back(std::move(k.range));
    }
    // No fetch time: a NIC prefetches receive WQEs before the SEND that needs one.
    return true;
}

// Takes the next receive WQE for a SEND from the QP's RQ or its SRQ. False if none.
bool fetch_recv(Qp &qp) {
    Responder &s = qp.resp;
    RecvWqe recv;
    if (qp.srq) {
        Srq &srq = *qp.srq;
        std::lock_guard lock(srq.mutex);
        if (!take_recv(qp, *srq.ring, srq.max_sge, recv)) return false;
        recv.from_srq = true;
        if (srq.take_limit_event()) {
            hw::Eqe e = srq.limit_event();
            e.event_time_ns = qp.now_ns;  // when this QP took the receive
            qp.device.post_event(srq.context, e);
        }
    } else if (!take_recv(qp, *s.rq, qp.max_recv_sge, recv)) {
        return false;
    }
    s.recv = std::move(recv);
    return true;
}

// A READ's responder resource (Responder::unsent_reads): taken when the READ is
// accepted, given back when the hold on its last response is let go (Packet).
struct ReadResourceHold {
    explicit ReadResourceHold(std::shared_ptr<std::atomic<uint32_t>> count)
        : count(std::move(count)) {
        this->count->fetch_add(1, std::memory_order_acq_rel);
    }
    ~ReadResourceHold() { count->fetch_sub(1, std::memory_order_acq_rel); }
    ReadResourceHold(const ReadResourceHold &) = delete;
    ReadResourceHold &operator=(const ReadResourceHold &) = delete;
    std::shared_ptr<std::atomic<uint32_t>> count;
};

// Transmits responses `from` .. the last of `res`. `hold` (a new READ's resource; none
// for a replay) rides on the last one.
void send_read_responses(Qp &qp, const ReadResource &res, uint32_t from,
                         std::shared_ptr<void> hold = nullptr) {
    auto &dev = qp.device;
    const uint32_t length = static_cast<uint32_t>(res.source.length());
    const uint32_t mtu = qp.path.mtu;
    // Every response's data is read from host memory when the request is processed;
    // the reads pipeline on the DMA read channel.
    if (res.psn_count - from >= 2 && dev.coalescing()) {
        // All of them as one run (fabric.hpp, Packet::run) if their data is contiguous.
        const uint64_t offset = uint64_t{from} * mtu;
        std::span<const uint8_t> payload;
        size_t chunks = 0;
        res.source.for_each_chunk(offset, length - offset, [&](std::byte *ptr, size_t n) {
            payload = {reinterpret_cast<const uint8_t *>(ptr), n};
            ++chunks;
        });
        if (chunks == 1 && payload.size() == length - offset) {
            const auto first =
                wire::segment_message(wire::MessageOp::kRdmaReadResponse, length, mtu, from);
            const auto last = wire::segment_message(wire::MessageOp::kRdmaReadResponse, length, mtu,
                                                    res.psn_count - 1);
            Packet p;
            p.desc.bth.opcode = first->opcode;
            p.desc.bth.psn = wire::psn_add(res.first_psn, from);
            p.desc.aeth = {wire::aeth_ack_syndrome(), res.msn & wire::kPsnMask};
            p.desc.payload = payload;
            p.run_last_opcode = last->opcode;
            p.run_mtu = mtu;
            p.run.resize(res.psn_count - from);
            {
                time::TimingModel::Batch model(dev.timing());
                for (uint32_t j = 0; j + 1 < p.run.size(); ++j)
                    p.run[j].time_ns = model.dma_read(qp.now_ns, mtu);
                p.run.back().time_ns = model.dma_read(qp.now_ns, last->length);
            }
            p.departure_hold = std::move(hold);
            dev.transmit_run(qp, std::move(p));
            return;
        }
    }
    for (uint32_t k = from; k < res.psn_count; ++k) {
        const auto seg =
            wire::segment_message(wire::MessageOp::kRdmaReadResponse, length, qp.path.mtu, k);
        Packet p;
        p.desc.bth.opcode = seg->opcode;
        p.desc.bth.psn = wire::psn_add(res.first_psn, k);
        p.desc.aeth = {wire::aeth_ack_syndrome(), res.msn & wire::kPsnMask};
        if (seg->length != 0) {
            size_t chunks = 0;
            std::span<const uint8_t> one;
            res.source.for_each_chunk(seg->offset, seg->length, [&](std::byte *ptr, size_t n) {
                one = {reinterpret_cast<const uint8_t *>(ptr), n};
                ++chunks;
            });
            if (chunks == 1) {
                p.desc.payload = one;
            } else {
                p.owned = std::make_unique<uint8_t[]>(seg->length);
                res.source.copy_from(seg->offset, p.owned.get(), seg->length);
                p.desc.payload = {p.owned.get(), seg->length};
            }
        }
        if (k + 1 == res.psn_count) p.departure_hold = std::move(hold);
        const uint64_t ready =
            seg->length != 0 ? dev.timing().dma_read(qp.now_ns, seg->length) : qp.now_ns;
        dev.transmit(qp, std::move(p), ready);
    }
}

void on_duplicate(Qp &qp, const wire::PacketDescriptor &d) {
    Responder &s = qp.resp;
    qp.device.counters().add(Counter::duplicate_request);
    if (d.info().family == OpFamily::kReadRequest) {
        for (const auto &res : s.reads) {
            if (res.psn_count != 0 && wire::psn_in_range(d.bth.psn, res.first_psn, res.psn_count)) {
                send_read_responses(qp, res, wire::psn_distance(res.first_psn, d.bth.psn));
                return;
            }
        }
        return;  // too old to replay: the requester's retry will time out
    }
    if (d.bth.ack_req) {
        send_ack(qp, wire::psn_sub(s.epsn, 1), wire::aeth_ack_syndrome(), s.msn);
    }
}

uint8_t srq_flag(const RecvWqe &recv) {
    return recv.from_srq ? hw::kCqeSrq : 0;
}

bool length_ok(const wire::PacketDescriptor &d, uint32_t mtu) {
    const auto pos = d.info().position;
    const size_t n = d.payload.size();
    if (pos == MsgPosition::kFirst || pos == MsgPosition::kMiddle) return n == mtu;
    if (pos == MsgPosition::kLast) return n >= 1 && n <= mtu;
    return n <= mtu;
}

// A middle or last packet of the WRITE in progress, in sequence, of a valid length and
// within the RETH's: responder_receive() takes it through every check to the payload's
// DMA write, and nothing on the way can fail, take another lock or book the model.
bool continues_write(const Qp &qp, const wire::PacketDescriptor &d) {
    const auto &info = d.info();
    const Responder &s = qp.resp;
    return info.family == OpFamily::kWrite && info.ext == wire::kExtNone &&
           (info.position == MsgPosition::kMiddle || info.position == MsgPosition::kLast) &&
           s.in_progress == Responder::Message::kWrite &&
           wire::classify_request_psn(s.epsn, d.bth.psn) == wire::PsnClass::kExpected &&
           length_ok(d, qp.path.mtu) && s.offset + d.payload.size() <= s.write_target.length();
}

}  // namespace

time::CacheLookup responder_lookup(const Qp &qp, const wire::PacketDescriptor &d) {
    const Responder &s = qp.resp;
    const auto &info = d.info();
    if ((info.ext & wire::kExtReth) != 0) {
        return time::TimingModel::access(
            d.reth.rkey, d.reth.va,
            info.family == OpFamily::kReadRequest ? d.reth.dma_length : d.payload.size());
    }
    if (s.in_progress == Responder::Message::kWrite && s.target_mpt != 0)
        return time::TimingModel::access(s.target_mpt << 8, s.target_va, d.payload.size());
    return {};
}

void responder_receive(Qp &qp, const wire::PacketDescriptor &d, bool unit_booked) {
    Responder &s = qp.resp;
    auto &dev = qp.device;
    const auto &info = d.info();
    const uint32_t psn = d.bth.psn;

    // The QP's processing unit takes the packet, with the QP context and, for a packet
    // of an RDMA WRITE or READ, the target's MPT and MTT entries (a miss stalls it).
    // A WRITE's middle and last packets book the payload's DMA write with the unit's
    // work, under one hold of the model's lock (the bookings of the two steps).
    std::optional<uint64_t> written;
    if (!unit_booked) {
        if (continues_write(qp, d)) {
            const auto at = dev.timing().receive_unit_then_dma_write(
                qp.number, qp.now_ns, dev.cost().pu_packet_ns, responder_lookup(qp, d),
                d.payload.size());
            qp.now_ns = at.processed;
            written = at.written;
        } else {
            qp.now_ns = dev.timing().receive_unit(qp.number, qp.now_ns, dev.cost().pu_packet_ns,
                                                  responder_lookup(qp, d));
        }
    }

    // 1. PSN
    switch (wire::classify_request_psn(s.epsn, psn)) {
        case wire::PsnClass::kDuplicate:
            return on_duplicate(qp, d);
        case wire::PsnClass::kOutOfSequence:
            dev.counters().add(Counter::out_of_seq_request);
            if (!s.sequence_nak_sent) {
                s.sequence_nak_sent = true;
                send_ack(qp, s.epsn, wire::aeth_nak_syndrome(wire::NakCode::kPsnSequenceError),
                         s.msn);
            }
            return;
        case wire::PsnClass::kExpected:
            s.sequence_nak_sent = false;
            break;
    }

    // 2. opcode sequence
    const bool starts = info.position == MsgPosition::kFirst || info.position == MsgPosition::kOnly;
    const bool ends = info.position == MsgPosition::kLast || info.position == MsgPosition::kOnly;
    const bool in_sequence =
        s.in_progress == Responder::Message::kSend    ? info.family == OpFamily::kSend && !starts
        : s.in_progress == Responder::Message::kWrite ? info.family == OpFamily::kWrite && !starts
                                                      : starts;
    if (!in_sequence || info.family == OpFamily::kAtomic) {
        return fatal(qp, psn, wire::NakCode::kInvalidRequest, "opcode out of sequence");
    }

    // 3. QP access: READ needs responder resources (IRD), one per READ whose responses
    // have not all left (Responder::unsent_reads)
    if (info.family == OpFamily::kReadRequest) {
        if (qp.path.ird == 0)
            return fatal(qp, psn, wire::NakCode::kInvalidRequest, "READ with IRD 0");
        const uint32_t unsent = s.unsent_reads->load(std::memory_order_acquire);
        if (unsent >= qp.path.ird) {
            dev.counters().add(Counter::ird_exceeded);
            return fatal(qp, psn, wire::NakCode::kInvalidRequest,
                         "more READs in progress than IRD");
        }
    }

    // 4. receive resources (an injected RNR storm: as if none were posted)
    if (info.family == OpFamily::kSend && starts && !s.recv &&
        (dev.faults().rnr_storm(qp.number, qp.context, qp.now_ns) || !fetch_recv(qp))) {
        dev.counters().add(Counter::send_rnr_err);
        send_ack(qp, psn, wire::aeth_rnr_nak_syndrome(dev.transport().min_rnr_timer), s.msn);
        return;
    }
    if (info.family == OpFamily::kSend && starts && s.recv &&
        s.recv->error == hw::Syndrome::kSuccess) {
        // An injected receive failure: reported as a bad receive WQE is (step 7).
        if (auto injected = dev.faults().fail_operation(qp.number, qp.context,
                                                        hw::FaultOperation::kReceive, qp.now_ns)) {
            s.recv->error = *injected;
        }
    }

    // 5. length
    if (info.family != OpFamily::kReadRequest && !length_ok(d, qp.path.mtu)) {
        return fatal(qp, psn, wire::NakCode::kInvalidRequest, "bad packet length");
    }

    // 6. rkey
    if ((info.ext & wire::kExtReth) != 0) {
        const uint8_t need =
            info.family == OpFamily::kReadRequest ? hw::kAccessRemoteRead : hw::kAccessRemoteWrite;
        if (d.reth.dma_length > dev.limits().max_transfer_bytes) {
            return fatal(qp, psn, wire::NakCode::kInvalidRequest, "DMA length over the limit");
        }
        if (dev.faults().token_expired(d.reth.rkey, qp.now_ns)) {
            return fatal(qp, psn, wire::NakCode::kRemoteAccessError, "rkey expired (fault)");
        }
        KeyCheck k = dev.mpt().check(d.reth.rkey, qp.pd, need, d.reth.va, d.reth.dma_length,
                                     qp.number, AccessOrigin::kRemote);
        if (!k.ok()) return fatal(qp, psn, wire::NakCode::kRemoteAccessError, "rkey check failed");
        if (info.family == OpFamily::kReadRequest) {
            // 7. execute: READ
            ReadResource res;
            res.first_psn = psn;
            res.psn_count = wire::read_request_psn_count(d.reth.dma_length, qp.path.mtu);
            res.msn = ++s.msn;
            res.source = std::move(k.range);
            s.epsn = wire::psn_add(psn, res.psn_count);
            s.reads[s.next_read] = std::move(res);
            const ReadResource &saved = s.reads[s.next_read];
            s.next_read = (s.next_read + 1) % s.reads.size();
            send_read_responses(qp, saved, 0, std::make_shared<ReadResourceHold>(s.unsent_reads));
            return;
        }
        s.write_target = std::move(k.range);
        s.offset = 0;
        s.target_mpt = d.reth.rkey >> 8;
        s.target_va = d.reth.va;
    }

    // 7. execute: SEND / WRITE
    if (info.family == OpFamily::kSend) {
        RecvWqe &recv = *s.recv;
        s.in_progress = Responder::Message::kSend;
        if (recv.error != hw::Syndrome::kSuccess) {
            complete_recv(qp, recv.slot, recv.error, 0, hw::CqeOpcode::kResponderError,
                          srq_flag(recv), 0, recv.vendor);
            s.recv.reset();
            return fatal(qp, psn, wire::NakCode::kRemoteOperationalError, "bad receive WQE");
        }
        if (s.offset + d.payload.size() > recv.capacity) {
            complete_recv(qp, recv.slot, hw::Syndrome::kReceiveOverflow, 0,
                          hw::CqeOpcode::kResponderError, srq_flag(recv));
            s.recv.reset();
            return fatal(qp, psn, wire::NakCode::kInvalidRequest, "receive overflow");
        }
        s.placed_ns = std::max(s.placed_ns, dev.timing().dma_write(qp.now_ns, d.payload.size()));
        dev.pace(s.placed_ns);
        qp.placement.place({recv.sges.data(), recv.sges.size()}, s.offset, d.payload);
        s.offset += d.payload.size();
        if (ends) {
            qp.placement.flush();  // the data before its CQE
            uint32_t invalidated = 0;
            auto opcode = hw::CqeOpcode::kResponderSend;
            if ((info.ext & wire::kExtIeth) != 0) {
                const KeyStatus k =
                    dev.mpt().remote_invalidate(d.invalidate_rkey, qp.number, qp.pd);
                if (k != KeyStatus::kOk) {
                    complete_recv(qp, recv.slot, syndrome_for(KeyOperation::kRemoteInvalidate, k),
                                  0, hw::CqeOpcode::kResponderError, srq_flag(recv), 0,
                                  static_cast<uint32_t>(k));
                    s.recv.reset();
                    return fatal(qp, psn, wire::NakCode::kInvalidRequest, "remote invalidate");
                }
                invalidated = d.invalidate_rkey;
                opcode = hw::CqeOpcode::kResponderSendInvalidate;
            }
            const uint8_t flags = static_cast<uint8_t>((d.bth.solicited ? hw::kCqeSolicited : 0) |
                                                       (recv.from_srq ? hw::kCqeSrq : 0));
            complete_recv(qp, recv.slot, hw::Syndrome::kSuccess, static_cast<uint32_t>(s.offset),
                          opcode, flags, invalidated);
            dev.counters().add(Counter::rdma_recvs);
            s.recv.reset();
            s.in_progress = Responder::Message::kNone;
            s.offset = 0;
            ++s.msn;
        }
    } else {  // WRITE
        s.in_progress = Responder::Message::kWrite;
        if (s.offset + d.payload.size() > s.write_target.length()) {
            return fatal(qp, psn, wire::NakCode::kInvalidRequest, "WRITE longer than its RETH");
        }
        s.placed_ns = std::max(
            s.placed_ns, written ? *written : dev.timing().dma_write(qp.now_ns, d.payload.size()));
        dev.pace(s.placed_ns);
        qp.placement.place({&s.write_target, 1}, s.offset, d.payload);
        s.offset += d.payload.size();
        s.target_va += d.payload.size();
        if (ends) {
            if (s.offset != s.write_target.length()) {
                return fatal(qp, psn, wire::NakCode::kInvalidRequest,
                             "WRITE shorter than its RETH");
            }
            s.write_target = DmaRange{};
            s.in_progress = Responder::Message::kNone;
            s.offset = 0;
            ++s.msn;
        }
    }
    s.epsn = wire::psn_add(psn, 1);
    if (d.bth.ack_req) send_ack(qp, psn, wire::aeth_ack_syndrome(), s.msn);
}

}  // namespace softndk::emu::rc
