// engine.hpp - the RC engine stages (rnic-model §2, Soft-RoCE's structure):
//   requester.cpp  SQ WQEs -> packets (fetch + validation, segmentation at the
//                  path MTU, READ requests consuming one PSN per response packet,
//                  AckReq, ORD, READ_FENCE, go-back-N resends; NOP, LOCAL_INVALIDATE,
//                  FAST_REGISTER and BIND_WINDOW execute locally, in SQ order)
//   responder.cpp  request packets -> memory / receive WQEs, ACK/NAK (fixed check
//                  order: PSN, opcode sequence, access, resources (RNR), length,
//                  rkey, execute), duplicates, READ responses and replay, IRD,
//                  receives from the RQ or an SRQ, remote invalidation (IETH)
//   completer.cpp  ACKs, NAKs and READ responses -> requester CQEs in post order,
//                  retries (PSN-sequence NAK, ACK timeout, RNR timer), errors
//   qp_state.cpp   state transitions, flushing, timers
// Every function here is called with qp.mutex held (see qp.hpp) and never
// delivers a packet inline: packets go to the fabric outbox.
#pragma once

#include <cstdint>
#include <optional>

#include "rc/qp.hpp"

namespace softndk::emu {
struct Packet;
}

namespace softndk::emu::rc {

// ---- requester.cpp
// SQ doorbell: fetch newly posted WQEs; transmit in RTS; flush them in ERROR.
void requester_doorbell(Qp &qp);
// Transmit whatever the window, ORD, fences and RNR wait allow.
void requester_progress(Qp &qp);
// Rewind transmission to `psn` (go-back-N); the WQE holding it resends from there.
void requester_rewind(Qp &qp, uint32_t psn);

// ---- responder.cpp
// One request packet (of a run: one of its packets, Packet::run_packet). `unit_booked`:
// the caller booked the QP's receive unit for it already (TimingModel::
// receive_into_unit with responder_lookup()) and set qp.now_ns to when it is done.
void responder_receive(Qp &qp, const wire::PacketDescriptor &packet, bool unit_booked = false);
// The cache entries the receive unit looks up for a request packet: the QP context, and
// for a packet of an RDMA WRITE or READ the target's MPT and MTT entries.
time::CacheLookup responder_lookup(const Qp &qp, const wire::PacketDescriptor &packet);

// ---- completer.cpp
// One response or ACK packet (of a run: one of its packets).
// `unit_booked`: as for responder_receive (the completer looks up the QP context only).
void completer_receive(Qp &qp, const wire::PacketDescriptor &packet, bool unit_booked = false);
// Retire WQEs at the head of the SQ that are finished, in order.
void complete_in_order(Qp &qp);
// Timer expiry (RNR wait over, ACK timeout); `now` is real time.
void requester_timer(Qp &qp, SteadyTime now);

// ---- qp_state.cpp
void modify_qp(Qp &qp, QpState to);
// Moves the QP to ERROR and flushes every WQE (SQ and RQ) not yet completed. `cause`
// is recorded the first time (Qp::error_cause) and rides on every flushed CQE.
void enter_error(Qp &qp, const char *why, hw::Syndrome cause = hw::Syndrome::kWorkRequestFlushed);
// RQ doorbell: in ERROR, flush the receives just posted.
void receive_doorbell(Qp &qp);
// Flush everything in ERROR (newly posted WQEs on both queues).
void flush_queues(Qp &qp);
// Requester CQE for `wqe` with `syndrome` (success only if signaled).
void complete_send(Qp &qp, const SendWqe &wqe, hw::Syndrome syndrome, uint32_t vendor = 0);
// Receive CQE.
void complete_recv(Qp &qp, uint16_t slot, hw::Syndrome syndrome, uint32_t bytes,
                   hw::CqeOpcode opcode, uint8_t flags = 0, uint32_t invalidated = 0,
                   uint32_t vendor = 0);
// Arms or re-arms the QP's entry in the device timer queue for its earliest deadline.
void schedule_timer(Qp &qp);
// The ACK timeout in ns (transport().ack_timeout: 4.096 us << n), nullopt = infinite.
std::optional<uint64_t> ack_timeout_ns(const Qp &qp);
// Timers run on model time (Device::wall_deadline): the ACK timer from the QP's
// latest packet, the RNR timer `delay_ns` after qp.now_ns (the NAK's arrival). When
// one fires, requester_timer() handles it at its model deadline.
void arm_ack_timer(Qp &qp);
void arm_rnr_timer(Qp &qp, uint64_t delay_ns);
// Around the delivery of a run's packets (Device::deliver_run_to_qp), with the QP lock
// held from begin_run() to end_run(): timers armed in between are dated and queued once,
// by end_run(), with the deadlines they would have had (Qp::delivering_run).
void begin_run(Qp &qp);
void end_run(Qp &qp);

}  // namespace softndk::emu::rc
