// hooks.hpp - the device's trace hooks: one call per event, each one predictable branch
// on trace::on() when tracing is off (softndk/trace.hpp). The *_slow functions build the
// record from the device's own types (docs/trace.md lists the fields of each).
//
// Call sites hold whatever lock they hold (a QP lock, a CQ lock): the hooks take none
// besides the trace's own (a flush point may write the file).
#pragma once

#include <cstdint>
#include <string>

#include "softndk/hw_interface.hpp"
#include "softndk/trace.hpp"

namespace softndk::emu {

class Device;
class Cq;
class Qp;
struct Packet;
struct SendWqe;
enum class QpState : uint8_t;
namespace cm {
struct Message;
}
namespace time {
class TimingModel;
}

namespace tracing {

// The daemon's trace: `option` (--trace FILE) if given, else SOFTNDK_TRACE, names the file
// of the device's records (the daemon never writes FILE.consumer-<pid>: that is for a
// consumer's provider records). Does nothing if neither is set; false (after a message
// on stderr) if the file cannot be created.
bool open_daemon_trace(const std::string &option);

void device_started_slow(const Device &device);
void doorbell_slow(const Qp &qp, uint64_t doorbell_ns, uint32_t producer, uint32_t consumer);
void wqe_slow(softndk::trace::Type type, const Qp &qp, const SendWqe &wqe);
void dma_slow(const time::TimingModel *timing, bool read, uint64_t issue_ns, uint64_t done_ns,
              uint64_t bytes);
void packet_slow(softndk::trace::Type type, const Device &device, uint32_t local_qp,
                 const Packet &packet, uint64_t model_ns);
void retry_slow(const Qp &qp, softndk::trace::RetryKind kind, uint32_t psn, uint64_t deadline_ns);
void cqe_slow(const Device &device, const Cq &cq, const hw::Cqe &cqe, hw::CqeOpcode opcode,
              uint64_t ready_ns, uint64_t written_ns);
void eqe_slow(const Device &device, uint32_t context, const hw::Eqe &eqe);
void cq_arm_slow(const Device &device, const Cq &cq, uint64_t now_ns);
void qp_state_slow(const Qp &qp, QpState from, QpState to);
void cm_slow(const Device &device, const cm::Message &message, bool received);

// A device came up: a kDevice record (its if_index, first address and alias), and its
// timing model is registered so DMA records name the device.
inline void device_started(const Device &device) {
    if (softndk::trace::on()) device_started_slow(device);
}
// An SQ doorbell reached the device at model time `doorbell_ns`: its record held
// `producer`, and the device had fetched up to `consumer` (WQEBB positions).
inline void doorbell(const Qp &qp, uint64_t doorbell_ns, uint32_t producer, uint32_t consumer) {
    if (softndk::trace::on()) doorbell_slow(qp, doorbell_ns, producer, consumer);
}
// A send WQE was read from the SQ (dated when it is at the device).
inline void wqe_fetch(const Qp &qp, const SendWqe &wqe) {
    if (softndk::trace::on()) wqe_slow(softndk::trace::Type::kWqeFetch, qp, wqe);
}
// A send WQE got its PSNs (its first transmission, or its local execution).
inline void wqe_start(const Qp &qp, const SendWqe &wqe) {
    if (softndk::trace::on()) wqe_slow(softndk::trace::Type::kWqeStart, qp, wqe);
}
// A DMA on one of the timing model's channels: issued at `issue_ns`, done at `done_ns`.
inline void dma(const time::TimingModel *timing, bool read, uint64_t issue_ns, uint64_t done_ns,
                uint64_t bytes) {
    if (softndk::trace::on()) dma_slow(timing, read, issue_ns, done_ns, bytes);
}
// A packet QP `local_qp` put on the fabric (dated by its arrival at the far port).
inline void packet_tx(const Device &device, uint32_t local_qp, const Packet &packet,
                      uint64_t model_ns) {
    if (softndk::trace::on())
        packet_slow(softndk::trace::Type::kPacketTx, device, local_qp, packet, model_ns);
}
// A packet arrived (out of the RX pipeline at `model_ns`); an ACK/NAK also gets a kAck.
inline void packet_rx(const Device &device, const Packet &packet, uint64_t model_ns) {
    if (softndk::trace::on())
        packet_slow(softndk::trace::Type::kPacketRx, device, 0, packet, model_ns);
}
// An arrived packet was dropped (no such QP, or a QP not accepting packets).
inline void packet_drop(const Device &device, const Packet &packet, uint64_t model_ns) {
    if (softndk::trace::on())
        packet_slow(softndk::trace::Type::kPacketDrop, device, 0, packet, model_ns);
}
// The requester resends from `psn` (go-back-N after a NAK or a gap, an ACK timeout, or
// an RNR NAK whose resend is due at `deadline_ns`).
inline void retry(const Qp &qp, softndk::trace::RetryKind kind, uint32_t psn,
                  uint64_t deadline_ns = 0) {
    if (softndk::trace::on()) retry_slow(qp, kind, psn, deadline_ns);
}
// A CQE was written at `written_ns` (issued at `ready_ns`).
inline void cqe(const Device &device, const Cq &cq, const hw::Cqe &cqe, hw::CqeOpcode opcode,
                uint64_t ready_ns, uint64_t written_ns) {
    if (softndk::trace::on()) cqe_slow(device, cq, cqe, opcode, ready_ns, written_ns);
}
// An EQE was written to a context's event queue (dated by eqe.event_time_ns).
inline void eqe(const Device &device, uint32_t context, const hw::Eqe &eqe) {
    if (softndk::trace::on()) eqe_slow(device, context, eqe);
}
// A CQ arm doorbell was serviced.
inline void cq_arm(const Device &device, const Cq &cq, uint64_t now_ns) {
    if (softndk::trace::on()) cq_arm_slow(device, cq, now_ns);
}
// A QP changes state (called before the change; carries the QP's path).
inline void qp_state(const Qp &qp, QpState from, QpState to) {
    if (softndk::trace::on() && from != to) qp_state_slow(qp, from, to);
}
// A CM message sent by (or received at) this device.
inline void cm_message(const Device &device, const cm::Message &message, bool received) {
    if (softndk::trace::on()) cm_slow(device, message, received);
}

}  // namespace tracing
}  // namespace softndk::emu
