// hooks.cpp - records from the device's types (contract in hooks.hpp).
#include "trace/hooks.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "cm/messages.hpp"
#include "device/device.hpp"
#include "rc/qp.hpp"
#include "time/model.hpp"

namespace softndk::emu::tracing {
namespace {

namespace tr = softndk::trace;

// Timing model -> the if_index of its device (DMA records come from the timing model,
// which does not know its device). Entries are never removed: a later device at the same
// address re-registers itself.
std::mutex g_timing_mutex;
std::vector<std::pair<const time::TimingModel *, uint32_t>> g_timings;

uint32_t device_of(const time::TimingModel *timing) {
    std::lock_guard lock(g_timing_mutex);
    for (const auto &[t, id] : g_timings) {
        if (t == timing) return id;
    }
    return 0;
}

uint32_t id(const Device &device) {
    return device.config().if_index;
}

}  // namespace

bool open_daemon_trace(const std::string &option) {
    std::string file = option;
    if (file.empty()) {
        const char *env = std::getenv("SOFTNDK_TRACE");
        if (env == nullptr || *env == '\0') return true;
        file = env;
    }
    return tr::open(file);
}

void device_started_slow(const Device &device) {
    auto &d = const_cast<Device &>(device);  // timing() has no const overload
    {
        std::lock_guard lock(g_timing_mutex);
        auto it = std::find_if(g_timings.begin(), g_timings.end(),
                               [&](const auto &e) { return e.first == &d.timing(); });
        if (it != g_timings.end()) {
            it->second = id(device);
        } else {
            g_timings.emplace_back(&d.timing(), id(device));
        }
    }
    tr::Record r = tr::make(tr::Type::kDevice, id(device), d.clock().now());
    r.body.device.if_index = device.config().if_index;
    if (!device.config().addresses.empty())
        std::memcpy(r.body.device.ip, device.config().addresses.front().bytes.data(), 16);
    std::strncpy(r.body.device.alias, device.config().alias.c_str(),
                 sizeof r.body.device.alias - 1);
    tr::emit(r);
}

void doorbell_slow(const Qp &qp, uint64_t doorbell_ns, uint32_t producer, uint32_t consumer) {
    tr::Record r = tr::make(tr::Type::kDoorbell, id(qp.device), doorbell_ns);
    r.body.wqe.qp = qp.number;
    r.body.wqe.wqe_index = producer;
    r.body.wqe.psn = consumer;
    r.body.wqe.context = qp.context;
    r.body.wqe.end_ns = doorbell_ns;
    tr::emit(r);
}

void wqe_slow(tr::Type type, const Qp &qp, const SendWqe &wqe) {
    const uint64_t t = type == tr::Type::kWqeFetch ? wqe.ready_ns : wqe.processed_ns;
    tr::Record r = tr::make(type, id(qp.device), t);
    r.body.wqe.qp = qp.number;
    r.body.wqe.context = qp.context;
    r.body.wqe.wqe_index = wqe.index;
    r.body.wqe.length = wqe.length;
    r.body.wqe.opcode = static_cast<uint8_t>(wqe.opcode);
    if (type == tr::Type::kWqeStart) {
        r.body.wqe.psn = wqe.first_psn;
        r.body.wqe.psn_count = wqe.psn_count;
        r.body.wqe.end_ns = wqe.processed_ns;
    } else {
        r.body.wqe.end_ns = wqe.posted_ns;
    }
    tr::emit(r);
}

void dma_slow(const time::TimingModel *timing, bool read, uint64_t issue_ns, uint64_t done_ns,
              uint64_t bytes) {
    tr::Record r =
        tr::make(read ? tr::Type::kDmaRead : tr::Type::kDmaWrite, device_of(timing), issue_ns);
    r.body.dma.bytes = bytes;
    r.body.dma.end_ns = done_ns;
    tr::emit(r);
}

void packet_slow(tr::Type type, const Device &device, uint32_t local_qp, const Packet &packet,
                 uint64_t model_ns) {
    const auto &d = packet.desc;
    tr::Record r = tr::make(type, id(device), model_ns);
    auto &p = r.body.packet;
    p.qp = type == tr::Type::kPacketTx ? local_qp : d.bth.dest_qp;
    p.dest_qp = d.bth.dest_qp;
    p.psn = d.bth.psn;
    p.opcode = static_cast<uint8_t>(d.bth.opcode);
    p.packet_flags = static_cast<uint8_t>((d.bth.ack_req ? tr::kPacketAckReq : 0) |
                                          (d.bth.solicited ? tr::kPacketSolicited : 0) |
                                          (type == tr::Type::kPacketDrop ? tr::kPacketDropped : 0));
    p.payload_length = static_cast<uint16_t>(d.payload.size());
    p.udp_src_port = d.meta.udp_src_port;
    wire::HeaderBuffer headers;
    if (wire::build_headers(d, headers) == wire::WireStatus::kOk && headers.size > wire::kBthSize) {
        const size_t ext = std::min<size_t>(headers.size - wire::kBthSize, sizeof p.ext);
        std::memcpy(p.ext, headers.bytes.data() + wire::kBthSize, ext);
        p.ext_length = static_cast<uint8_t>(ext);
    }
    tr::emit(r);
    if (type == tr::Type::kPacketRx && d.info().carries_ack) {
        tr::Record a = r;
        a.type = tr::Type::kAck;
        a.body.packet.ext[0] = d.aeth.syndrome;  // the syndrome first (then the AETH as sent)
        a.body.packet.ext_length = 1;
        a.body.packet.psn = d.bth.psn;
        tr::emit(a);
    }
}

void retry_slow(const Qp &qp, tr::RetryKind kind, uint32_t psn, uint64_t deadline_ns) {
    tr::Record r = tr::make(tr::Type::kRetry, id(qp.device), qp.now_ns);
    r.body.retry.qp = qp.number;
    r.body.retry.psn = psn;
    r.body.retry.kind = static_cast<uint8_t>(kind);
    r.body.retry.retries_left =
        kind == tr::RetryKind::kRnr ? qp.req.rnr_retry_left : qp.req.retry_left;
    r.body.retry.deadline_ns = deadline_ns;
    tr::emit(r);
}

void cqe_slow(const Device &device, const Cq &cq, const hw::Cqe &cqe, hw::CqeOpcode opcode,
              uint64_t ready_ns, uint64_t written_ns) {
    const bool receive =
        opcode != hw::CqeOpcode::kRequester && opcode != hw::CqeOpcode::kRequesterError;
    tr::Record r =
        tr::make(tr::Type::kCqe, id(device), written_ns, receive ? tr::kFlagRecv : uint8_t{0});
    auto &c = r.body.cqe;
    c.cq = cq.number();
    c.qp = cqe.qp_number;
    c.wqe_index = cqe.wqe_counter;
    c.byte_count = cqe.byte_count;
    c.syndrome = static_cast<uint32_t>(cqe.syndrome);
    c.opcode = static_cast<uint8_t>(opcode);
    c.wqe_opcode = static_cast<uint8_t>(cqe.wqe_opcode);
    c.ready_ns = ready_ns;
    tr::emit(r);
}

void eqe_slow(const Device &device, uint32_t context, const hw::Eqe &eqe) {
    tr::Record r = tr::make(tr::Type::kEqe, id(device), eqe.event_time_ns);
    r.body.eqe.context = context;
    r.body.eqe.object = eqe.object;
    r.body.eqe.eqe_type = eqe.type;
    r.body.eqe.status = eqe.status;
    tr::emit(r);
}

void cq_arm_slow(const Device &device, const Cq &cq, uint64_t now_ns) {
    tr::Record r = tr::make(tr::Type::kCqArm, id(device), now_ns);
    r.body.eqe.context = cq.context();
    r.body.eqe.object = cq.number();
    tr::emit(r);
}

void qp_state_slow(const Qp &qp, QpState from, QpState to) {
    // The CM moves QPs outside any engine event: then the device's latest time dates it.
    tr::Record r =
        tr::make(tr::Type::kQpState, id(qp.device), std::max(qp.now_ns, qp.device.clock().now()));
    auto &s = r.body.qp_state;
    s.qp = qp.number;
    s.from = static_cast<uint8_t>(from);
    s.to = static_cast<uint8_t>(to);
    s.udp_src_port = qp.path.udp_source_port;
    std::memcpy(s.local_ip, qp.path.local_ip.bytes.data(), 16);
    std::memcpy(s.remote_ip, qp.path.remote_ip.bytes.data(), 16);
    tr::emit(r);
}

void cm_slow(const Device &device, const cm::Message &m, bool received) {
    const bool v6 = !m.source_ip.is_v4();
    tr::Record r =
        tr::make(tr::Type::kCm, id(device), m.time_ns,
                 static_cast<uint8_t>((received ? tr::kFlagRx : 0) | (v6 ? tr::kFlagIpv6 : 0)));
    auto &c = r.body.cm;
    c.sender_id = m.sender_id;
    c.receiver_id = m.receiver_id;
    c.qp = m.qp_number;
    c.starting_psn = m.starting_psn;
    c.status = m.status;
    c.message_type = static_cast<uint8_t>(m.type);
    c.source_port = m.source_port;
    c.destination_port = m.destination_port;
    std::memcpy(&c.source_ip, m.source_ip.bytes.data() + 12, 4);
    std::memcpy(&c.destination_ip, m.destination_ip.bytes.data() + 12, 4);
    c.private_data_bytes = m.private_data_bytes;
    tr::emit(r);
}

}  // namespace softndk::emu::tracing
