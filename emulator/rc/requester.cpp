// requester.cpp - SQ WQEs -> packets.
#include <algorithm>
#include <array>
#include <cstring>

#include "device/device.hpp"
#include "device/log.hpp"
#include "rc/engine.hpp"
#include "trace/hooks.hpp"
#include "wire/psn.hpp"

namespace softndk::emu::rc {
namespace {

// WQE opcode properties (hw_interface.hpp §3). Unknown opcodes have known = false.
struct WqeSpec {
    bool known = false;
    bool supported = false;  // built in this device
    bool remote = false;     // RemoteAddressSegment follows the control segment
    bool data = false;       // data segments (or one inline segment) follow
    bool allow_inline = false;
    uint8_t local_access = 0;   // rights the local SGEs need
    wire::MessageOp message{};  // segmentation family
};
constexpr std::array<WqeSpec, 64> make_specs() {
    std::array<WqeSpec, 64> t{};
    using O = hw::WqeOpcode;
    auto at = [&t](O op) -> WqeSpec & { return t[static_cast<uint8_t>(op)]; };
    at(O::kNop) = {true, true, false, false, false, 0, {}};
    at(O::kSend) = {true, true, false, true, true, hw::kAccessLocalRead, wire::MessageOp::kSend};
    at(O::kSendInvalidate) = {
        true, true, false, true, true, hw::kAccessLocalRead, wire::MessageOp::kSendWithInvalidate};
    at(O::kRdmaWrite) = {
        true, true, true, true, true, hw::kAccessLocalRead, wire::MessageOp::kRdmaWrite};
    at(O::kRdmaRead) = {true, true, true, true, false, hw::kAccessLocalWrite, {}};
    at(O::kLocalInvalidate) = {true, true, false, false, false, 0, {}};
    at(O::kFastRegister) = {true, true, false, false, false, 0, {}};
    at(O::kBindWindow) = {true, true, false, false, false, 0, {}};
    return t;
}
constexpr auto kWqeSpecs = make_specs();

const WqeSpec &spec_of(hw::WqeOpcode op) {
    static constexpr WqeSpec kUnknown{};
    const auto v = static_cast<uint8_t>(op);
    return v < kWqeSpecs.size() ? kWqeSpecs[v] : kUnknown;
}

constexpr uint32_t wqebbs_for(uint32_t segments) {
    return (segments * hw::kSegmentBytes + hw::kWqeBasicBlock - 1) / hw::kWqeBasicBlock;
}

// Parses the WQE copied out of the ring into `w`. Structural problems give
// kLocalQpOperation, length problems kLocalLength, key failures kLocalProtection.
void parse_wqe(Qp &qp, const std::byte *bytes, const hw::CtrlSegment &ctrl, SendWqe &w) {
    const WqeSpec &spec = spec_of(ctrl.opcode);
    const auto &limits = qp.device.limits();
    auto fail = [&w](hw::Syndrome s, uint32_t vendor = 0) {
        w.error = s;
        w.vendor = vendor;
    };
    if (!spec.known || !spec.supported) return fail(hw::Syndrome::kLocalQpOperation);
    w.invalidate_token = ctrl.invalidate_token;
    uint32_t seg = 1;
    const uint32_t count = ctrl.segment_count;
    if (spec.remote) {
        if (count < 2) return fail(hw::Syndrome::kLocalQpOperation);
        hw::RemoteAddressSegment r;
        std::memcpy(&r, bytes + hw::kSegmentBytes, sizeof(r));
        w.remote_address = r.remote_address;
        w.remote_token = r.remote_token;
        seg = 2;
    }
    if (ctrl.opcode == hw::WqeOpcode::kFastRegister) {
        // FastRegisterSegment (2 segments), then the page addresses, two per segment.
        if (count < 3) return fail(hw::Syndrome::kLocalQpOperation);
        std::memcpy(&w.fast_register, bytes + hw::kSegmentBytes, sizeof(w.fast_register));
        const uint32_t pages = w.fast_register.page_count;
        if (pages > limits.max_fast_register_pages) return fail(hw::Syndrome::kLocalLength);
        if (count != 3 + (pages + 1) / 2) return fail(hw::Syndrome::kLocalQpOperation);
        // Page addresses are adapter logical addresses (NdkBuildLAM): resolve each
        // through the context's LAM space, and keep the mappings they came from alive
        // for as long as the registration's translation (lam.hpp).
        const auto space = qp.device.lam_space(qp.context);
        if (!space) return fail(hw::Syndrome::kLocalProtection);
        auto keep = std::make_shared<std::vector<std::shared_ptr<const void>>>();
        w.pages.resize(pages);
        for (uint32_t i = 0; i < pages; ++i) {
            uint64_t logical;
            std::memcpy(&logical, bytes + 3 * hw::kSegmentBytes + i * sizeof(uint64_t),
                        sizeof logical);
            const auto pinned = space->pin(logical);
            if (!pinned) {
                return fail(hw::Syndrome::kLocalProtection,
                            static_cast<uint32_t>(KeyStatus::kUnmappedPage));
            }
            w.pages[i] = pinned->page;
            if (pinned->keepalive && (keep->empty() || keep->back() != pinned->keepalive))
                keep->push_back(pinned->keepalive);
        }
        w.pages_keepalive = std::move(keep);
        return;
    }
    if (ctrl.opcode == hw::WqeOpcode::kBindWindow) {
        if (count != 3) return fail(hw::Syndrome::kLocalQpOperation);
        std::memcpy(&w.bind, bytes + hw::kSegmentBytes, sizeof(w.bind));
        return;
    }
    if (!spec.data) {
        if (count != seg) return fail(hw::Syndrome::kLocalQpOperation);
        return;
    }
    if (ctrl.flags & hw::kCtrlInline) {
        if (!spec.allow_inline || count <= seg) return fail(hw::Syndrome::kLocalQpOperation);
        hw::InlineHeader h;
        std::memcpy(&h, bytes + seg * hw::kSegmentBytes, sizeof(h));
        if ((h.byte_count_and_marker & hw::kInlineMarker) == 0) {
            return fail(hw::Syndrome::kLocalQpOperation);
        }
        const uint32_t n = h.byte_count_and_marker & ~hw::kInlineMarker;
        if (n > qp.max_inline) return fail(hw::Syndrome::kLocalLength);
        if (4 + uint64_t{n} > uint64_t{count - seg} * hw::kSegmentBytes) {
            return fail(hw::Syndrome::kLocalQpOperation);
        }
        const std::byte *src = bytes + seg * hw::kSegmentBytes + 4;
        w.inline_data.assign(reinterpret_cast<const uint8_t *>(src),
                             reinterpret_cast<const uint8_t *>(src) + n);
        w.length = n;
        return;
    }
    const uint32_t sges = count - seg;
    const uint32_t max_sge =
        w.is_read() ? std::min(qp.max_send_sge, limits.max_read_sge) : qp.max_send_sge;
    if (sges > max_sge) return fail(hw::Syndrome::kLocalLength);
    uint64_t total = 0;
    w.sges.reserve(sges);
    for (uint32_t i = 0; i < sges; ++i) {
        hw::DataSegment ds;
        std::memcpy(&ds, bytes + (seg + i) * hw::kSegmentBytes, sizeof(ds));
        total += ds.byte_count;
        if (total > limits.max_transfer_bytes) return fail(hw::Syndrome::kLocalLength);
        KeyCheck k = qp.device.mpt().check(ds.local_token, qp.pd, spec.local_access, ds.address,
                                           ds.byte_count, qp.number, AccessOrigin::kLocal);
        if (!k.ok()) return fail(k.syndrome, static_cast<uint32_t>(k.status));
        if (i == 0) w.first_local_token = ds.local_token;
        w.sges.push_back(std::move(k.range));
    }
    w.length = static_cast<uint32_t>(total);
}

// The model time the host rang the doorbell just fetched: the provider's stamp (the
// consumer's clock), clamped to a second past the later of this QP's time and anything
// the device has seen (an untrusted value), never before data it may have polled for
// arrived on this QP, and never before the host could have reacted to what it saw
// through this QP: the later of that placement and the latest receive CQE, plus the
// profile's host_turnaround_ns. In paced mode the stamp is the wall clock, so a host
// quicker than the modeled one waits for it, and one slower shows.
uint64_t doorbell_posted(Qp &qp, const DoorbellStamp &stamp) {
    auto &dev = qp.device;
    constexpr uint64_t kSecond = 1000000000;
    // The device's clock is read only for a stamp the QP's own time does not vouch for
    // (an idle QP, or a bad stamp): reading it is a clock_gettime in paced mode and
    // its shards' cache lines, on every doorbell's critical path (docs/timing.md §8).
    uint64_t posted = stamp.post_time_ns;
    if (posted > qp.now_ns + kSecond)
        posted = std::min(posted, std::max(qp.now_ns, dev.clock().now()) + kSecond);
    const uint64_t turnaround = dev.cost().host_turnaround_ns;
    uint64_t floor = qp.resp.placed_ns;
    if (turnaround != 0) {
        const uint64_t seen = std::max(qp.resp.placed_ns, qp.resp.recv_cqe_ns);
        if (seen != 0) floor = seen + turnaround;
    }
    return std::max(posted, floor);
}

// The fault-injection name of a send-queue WQE (faults.hpp; a NOP is only "any").
hw::FaultOperation fault_operation(hw::WqeOpcode op) {
    using O = hw::WqeOpcode;
    using F = hw::FaultOperation;
    switch (op) {
        case O::kSend:
        case O::kSendInvalidate:
            return F::kSend;
        case O::kRdmaWrite:
            return F::kWrite;
        case O::kRdmaRead:
            return F::kRead;
        case O::kFastRegister:
            return F::kFastRegister;
        case O::kBindWindow:
            return F::kBind;
        case O::kLocalInvalidate:
            return F::kInvalidate;
        default:
            return F::kAny;
    }
}

// Copies WQEs out of the SQ ring (never re-reading a slot) until it is empty or a
// malformed WQE stops fetching. `doorbell`: called for an SQ doorbell (else to resume
// after a key operation): the fetch starts when the doorbell reaches the device.
void fetch_wqes(Qp &qp, bool doorbell) {
    Requester &r = qp.req;
    if (r.fetch_blocked || r.fetch_paused_for_key) return;
    SqConsumer &sq = *r.sq;
    auto &dev = qp.device;
    auto malformed = [&](uint32_t position, uint32_t release_bbs, const char *why) {
        SendWqe w;
        w.index = static_cast<uint16_t>(position);
        w.error = hw::Syndrome::kLocalQpOperation;
        r.wqes.push_back(std::move(w));
        r.fetch_blocked = true;
        if (release_bbs != 0) sq.release(position + release_bbs);
        dev.counters().add(Counter::malformed_wqes);
        logger(Component::kRc).debug("qp#{}: malformed WQE at {:#x}: {}", qp.number, position, why);
    };
    if (!sq.acquire_producer()) return malformed(sq.consumer(), 0, "producer out of range");
    if (sq.available() == 0) return;
    // One DMA read fetches every WQE the doorbell announced, unless the only one came
    // with the doorbell write (BlueFlame).
    uint64_t posted = qp.now_ns;
    bool blueflame = false;
    if (doorbell) {
        const DoorbellStamp stamp = sq.stamp();
        posted = doorbell_posted(qp, stamp);
        blueflame = stamp.blueflame &&
                    uint64_t{sq.available()} * hw::kWqeBasicBlock <= dev.cost().blueflame_bytes;
        r.doorbell_ns = dev.timing().doorbell(posted, blueflame);
        qp.now_ns = r.doorbell_ns;
        tracing::doorbell(qp, r.doorbell_ns, sq.consumer() + sq.available(), sq.consumer());
    }
    const uint64_t ready =
        blueflame ? qp.now_ns
                  : dev.timing().dma_read(qp.now_ns, uint64_t{sq.available()} * hw::kWqeBasicBlock);
    std::array<std::byte, hw::kMaxWqeSegments * hw::kSegmentBytes + hw::kSegmentBytes> buf;
    while (sq.available() != 0) {
        const uint32_t position = sq.consumer();
        hw::CtrlSegment ctrl;
        sq.read(position, buf.data(), hw::kWqeBasicBlock);
        std::memcpy(&ctrl, buf.data(), sizeof(ctrl));
        const uint32_t bbs = wqebbs_for(ctrl.segment_count);
        if (ctrl.segment_count == 0 || ctrl.segment_count > qp.max_send_segments) {
            return malformed(position, 1, "segment count");
        }
        if (bbs > sq.available()) return malformed(position, 1, "WQE runs past the producer");
        if (ctrl.wqe_index != static_cast<uint16_t>(position)) {
            return malformed(position, bbs, "wqe_index does not match the producer position");
        }
        sq.read(position, buf.data(), size_t{bbs} * hw::kWqeBasicBlock);
        SendWqe w;
        w.posted_ns = posted;
        w.ready_ns = ready;
        w.index = ctrl.wqe_index;
        w.opcode = ctrl.opcode;
        w.flags = ctrl.flags;
        parse_wqe(qp, buf.data(), ctrl, w);
        tracing::wqe_fetch(qp, w);
        sq.release(position + bbs);
        bool failed = w.error != hw::Syndrome::kSuccess;
        if (failed) {
            dev.counters().add(Counter::malformed_wqes);
        } else if (auto injected = dev.faults().fail_operation(qp.number, qp.context,
                                                               fault_operation(w.opcode), ready)) {
            // An injected failure is reported in order like a fetch-time error, and like
            // every error completion on an RC QP it moves the QP to ERROR.
            w.error = *injected;
            failed = true;
        }
        r.wqes.push_back(std::move(w));
        if (failed) {
            r.fetch_blocked = true;  // everything after it is flushed
            return;
        }
        if (ctrl.opcode == hw::WqeOpcode::kFastRegister ||
            ctrl.opcode == hw::WqeOpcode::kBindWindow ||
            ctrl.opcode == hw::WqeOpcode::kLocalInvalidate) {  // see fetch_paused_for_key
            r.fetch_paused_for_key = true;
            return;
        }
    }
}

// Calls fn(sge, offset_in_sge, bytes) for the pieces of message bytes
// [offset, offset + length) over the gather list, in order.
template <class Fn>
void for_each_slice(const SgeList &sges, uint64_t offset, uint64_t length, Fn &&fn) {
    for (const DmaRange &sge : sges) {
        if (length == 0) break;
        if (offset >= sge.length()) {
            offset -= sge.length();
            continue;
        }
        const uint64_t take = std::min(length, sge.length() - offset);
        fn(sge, offset, take);
        length -= take;
        offset = 0;
    }
}

// Payload of bytes [offset, offset + length) of the message: referenced when it lies
// in one device-contiguous chunk, copied into the packet otherwise (inline data too:
// the WQE copy may be retired before a retransmitted packet is delivered).
void attach_payload(const SendWqe &w, uint64_t offset, uint32_t length, Packet &p) {
    if (length == 0) return;
    if (!w.inline_data.empty() || w.sges.empty()) {
        p.own_payload(std::span<const uint8_t>(w.inline_data).subspan(offset, length));
        return;
    }
    size_t chunks = 0;
    std::span<const uint8_t> first;
    for_each_slice(w.sges, offset, length, [&](const DmaRange &sge, uint64_t at, uint64_t n) {
        sge.for_each_chunk(at, n, [&](std::byte *ptr, size_t bytes) {
            if (chunks++ == 0) first = {reinterpret_cast<const uint8_t *>(ptr), bytes};
        });
    });
    if (chunks == 1) {
        p.desc.payload = first;
        return;
    }
    p.owned = std::make_unique<uint8_t[]>(length);
    uint8_t *out = p.owned.get();
    for_each_slice(w.sges, offset, length, [&](const DmaRange &sge, uint64_t at, uint64_t n) {
        sge.copy_from(at, out, n);
        out += n;
    });
    p.desc.payload = {p.owned.get(), length};
}

void transmit_message_packet(Qp &qp, SendWqe &w, uint32_t k) {
    Requester &r = qp.req;
    auto &dev = qp.device;
    const auto seg = wire::segment_message(spec_of(w.opcode).message, w.length, qp.path.mtu, k);
    Packet p;
    auto &b = p.desc.bth;
    b.opcode = seg->opcode;
    b.psn = wire::psn_add(w.first_psn, k);
    const bool last =
        seg->position == wire::MsgPosition::kLast || seg->position == wire::MsgPosition::kOnly;
    b.ack_req = last || ++r.packets_since_ack_req >= dev.transport().ack_req_every;
    if (b.ack_req) r.packets_since_ack_req = 0;
    b.solicited = last && (w.flags & hw::kCtrlSolicited) != 0;
    p.desc.reth = {w.remote_address, w.remote_token, w.length};
    p.desc.invalidate_rkey = w.invalidate_token;
    attach_payload(w, seg->offset, seg->length, p);
    // The payload is gathered by DMA when the WQE was processed (a retransmission: now);
    // inline data came with the WQE.
    const uint64_t issue = std::max(w.processed_ns, qp.now_ns);
    const uint64_t ready = w.inline_data.empty() && seg->length != 0
                               ? dev.timing().dma_read(issue, seg->length)
                               : issue;
    dev.transmit(qp, std::move(p), ready);
}

// Bytes [offset, offset + length) of the message when they lie in one device-contiguous
// chunk of the gather list (what a run's payload must be: Packet::run), else empty.
std::span<const uint8_t> contiguous_payload(const SendWqe &w, uint64_t offset, uint64_t length) {
    size_t chunks = 0;
    std::span<const uint8_t> first;
    for_each_slice(w.sges, offset, length, [&](const DmaRange &sge, uint64_t at, uint64_t n) {
        sge.for_each_chunk(at, n, [&](std::byte *ptr, size_t bytes) {
            if (chunks++ == 0) first = {reinterpret_cast<const uint8_t *>(ptr), bytes};
        });
    });
    return chunks == 1 && first.size() == length ? first : std::span<const uint8_t>{};
}

// Packets k .. k + count - 1 of `w` as one run (fabric.hpp, Packet::run), `payload` their
// bytes. Each packet is priced and flagged as transmit_message_packet() would have done it.
void transmit_message_run(Qp &qp, SendWqe &w, uint32_t k, uint32_t count,
                          std::span<const uint8_t> payload) {
    Requester &r = qp.req;
    auto &dev = qp.device;
    const uint32_t mtu = qp.path.mtu;
    const auto op = spec_of(w.opcode).message;
    const auto first = wire::segment_message(op, w.length, mtu, k);
    const auto last = wire::segment_message(op, w.length, mtu, k + count - 1);
    const bool ends = k + count == w.psn_count;
    Packet p;
    p.desc.bth.opcode = first->opcode;
    p.desc.bth.psn = wire::psn_add(w.first_psn, k);
    p.desc.bth.solicited = ends && (w.flags & hw::kCtrlSolicited) != 0;
    p.desc.reth = {w.remote_address, w.remote_token, w.length};
    p.desc.invalidate_rkey = w.invalidate_token;
    p.desc.payload = payload;
    p.run_last_opcode = last->opcode;
    p.run_mtu = mtu;
    p.run.resize(count);
    const uint64_t issue = std::max(w.processed_ns, qp.now_ns);
    const uint32_t ack_every = dev.transport().ack_req_every;
    {
        time::TimingModel::Batch model(dev.timing());
        for (uint32_t j = 0; j < count; ++j) {
            const bool message_end = ends && j + 1 == count;
            const bool ack_req = message_end || ++r.packets_since_ack_req >= ack_every;
            if (ack_req) r.packets_since_ack_req = 0;
            const uint32_t bytes = j + 1 == count ? last->length : mtu;
            p.run[j] = {model.dma_read(issue, bytes), ack_req};
        }
    }
    p.desc.bth.ack_req = p.run[0].ack_req;
    dev.transmit_run(qp, std::move(p));
}

void transmit_read_request(Qp &qp, SendWqe &w) {
    const uint32_t done = w.next_packet;  // response packets already placed
    const uint64_t offset = uint64_t{done} * qp.path.mtu;
    Packet p;
    p.desc.bth.opcode = wire::Opcode::kRdmaReadRequest;
    p.desc.bth.psn = wire::psn_add(w.first_psn, done);
    p.desc.bth.ack_req = true;
    p.desc.reth = {w.remote_address + offset, w.remote_token,
                   static_cast<uint32_t>(w.length - std::min<uint64_t>(offset, w.length))};
    qp.req.packets_since_ack_req = 0;
    qp.device.transmit(qp, std::move(p), std::max(w.processed_ns, qp.now_ns));
    w.next_packet = w.psn_count;
}

// Executes a WQE that never reaches the wire (NOP, LOCAL_INVALIDATE, FAST_REGISTER,
// BIND_WINDOW) when the SQ reaches it, in order with the WQEs around it.
void execute_local(Qp &qp, SendWqe &w) {
    auto &mpt = qp.device.mpt();
    KeyStatus s = KeyStatus::kOk;
    KeyOperation op = KeyOperation::kLocalInvalidate;
    switch (w.opcode) {
        case hw::WqeOpcode::kLocalInvalidate:
            s = mpt.local_invalidate(w.invalidate_token, qp.number, qp.pd);
            break;
        case hw::WqeOpcode::kFastRegister: {
            const auto &f = w.fast_register;
            FastRegisterRequest rq;
            rq.token = f.mr_token;
            rq.qp_pd = qp.pd;
            rq.access = f.access;
            rq.iova = f.base_iova;
            rq.length = f.length;
            rq.first_byte_offset = f.first_byte_offset_low;
            rq.pages = w.pages;
            rq.keepalive = w.pages_keepalive;
            s = mpt.fast_register(rq);
            op = KeyOperation::kFastRegister;
            break;
        }
        case hw::WqeOpcode::kBindWindow: {
            const auto &b = w.bind;
            s = mpt.bind(
                BindRequest{b.mw_token, b.mr_token, qp.number, qp.pd, b.access, b.iova, b.length});
            op = KeyOperation::kBind;
            break;
        }
        default:
            break;
    }
    if (s != KeyStatus::kOk) {
        w.error = syndrome_for(op, s);
        w.vendor = static_cast<uint32_t>(s);
    }
}

}  // namespace

void requester_doorbell(Qp &qp) {
    if (qp.state == QpState::kError) return flush_queues(qp);
    if (qp.state != QpState::kRts) return;  // WQEs wait in the ring until RTS
    fetch_wqes(qp, true);
    requester_progress(qp);
    complete_in_order(qp);
}

void requester_progress(Qp &qp) {
    Requester &r = qp.req;
    if (qp.state != QpState::kRts || r.rnr_wait) return;
    const uint32_t window = qp.device.transport().window_psns;
    const uint32_t mtu = qp.path.mtu;
    const bool coalescing = qp.device.coalescing();
    bool refetch = false;
    while (r.send_index < r.wqes.size()) {
        SendWqe &w = r.wqes[r.send_index];
        if (w.error != hw::Syndrome::kSuccess) break;  // reported in order by the completer
        if (!w.started) {
            if ((w.flags & hw::kCtrlReadFence) && r.outstanding_reads != 0) break;
            const WqeSpec &spec = spec_of(w.opcode);
            if (w.is_read()) {
                if (qp.path.ord == 0) {  // no READ may ever be outstanding: fail, do not hang
                    w.error = hw::Syndrome::kLocalQpOperation;
                    break;
                }
                if (r.outstanding_reads >= qp.path.ord) break;  // ORD
                w.psn_count = wire::read_request_psn_count(w.length, mtu);
            } else if (spec.data) {
                w.psn_count = wire::packets_for_message(w.length, mtu);
            }
            if (w.on_wire() && !wire::psn_window_open(r.next_psn, r.una_psn, window)) break;
            w.started = true;
            // The QP's processing unit takes the WQE when it is at the device and the
            // QP got to it (a WQE held back by the window, ORD or a fence: when that
            // opened, in model time - see Requester::read_done_ns).
            uint64_t earliest = std::max(w.ready_ns, qp.now_ns);
            if (w.flags & hw::kCtrlReadFence) earliest = std::max(earliest, r.last_read_done_ns);
            if (w.is_read()) {
                if (r.reads_started >= qp.path.ord) {
                    const uint64_t freed_by = r.reads_started - qp.path.ord;
                    while (r.reads_done_base < freed_by && !r.read_done_ns.empty()) {
                        r.read_done_ns.pop_front();
                        ++r.reads_done_base;
                    }
                    if (r.reads_done_base == freed_by && !r.read_done_ns.empty())
                        earliest = std::max(earliest, r.read_done_ns.front());
                }
                ++r.reads_started;
            }
            const auto lookup = w.sges.empty()
                                    ? time::TimingModel::Lookup{}
                                    : time::TimingModel::access(w.first_local_token,
                                                                w.sges.front().iova(), w.length);
            w.processed_ns = qp.device.timing().send_unit(qp.number, earliest,
                                                          qp.device.cost().pu_wqe_ns, lookup);
            w.first_psn = r.next_psn;
            r.next_psn = wire::psn_add(r.next_psn, w.psn_count);
            tracing::wqe_start(qp, w);
            if (w.is_read()) {
                ++r.outstanding_reads;
                qp.device.counters().add(Counter::rdma_reads);
            } else if (w.opcode == hw::WqeOpcode::kRdmaWrite) {
                qp.device.counters().add(Counter::rdma_writes);
            } else if (spec.data) {
                qp.device.counters().add(Counter::rdma_sends);
            }
            if (!w.on_wire()) {
                execute_local(qp, w);
                if (w.error != hw::Syndrome::kSuccess) break;
                refetch = r.fetch_paused_for_key;
                r.fetch_paused_for_key = false;
            }
        }
        if (w.is_read()) {
            if (w.next_packet < w.psn_count) transmit_read_request(qp, w);
        } else {
            while (w.next_packet < w.psn_count) {
                const uint32_t psn = wire::psn_add(w.first_psn, w.next_packet);
                if (!wire::psn_window_open(psn, r.una_psn, window)) goto stop;
                if (coalescing && w.inline_data.empty()) {
                    // As many packets as the window takes, as one run if their payload
                    // is one contiguous range.
                    const int32_t in_flight = wire::psn_diff(psn, r.una_psn);
                    const uint32_t room = in_flight <= 0 ? window : window - in_flight;
                    const uint32_t count = std::min(w.psn_count - w.next_packet, room);
                    const uint64_t offset = uint64_t{w.next_packet} * mtu;
                    const uint64_t bytes =
                        std::min<uint64_t>(w.length - offset, uint64_t{count} * mtu);
                    const auto payload = count >= 2 ? contiguous_payload(w, offset, bytes)
                                                    : std::span<const uint8_t>{};
                    if (!payload.empty()) {
                        transmit_message_run(qp, w, w.next_packet, count, payload);
                        w.next_packet += count;
                        continue;
                    }
                }
                transmit_message_packet(qp, w, w.next_packet);
                ++w.next_packet;
            }
        }
        ++r.send_index;
        // The key operation executed: the WQEs behind it may be parsed now.
        if (refetch) {
            refetch = false;
            fetch_wqes(qp, false);
        }
    }
stop:
    if (r.una_psn != r.next_psn && !r.ack_deadline) arm_ack_timer(qp);
}

void requester_rewind(Qp &qp, uint32_t psn) {
    Requester &r = qp.req;
    size_t i = 0;
    for (; i < r.wqes.size(); ++i) {
        SendWqe &w = r.wqes[i];
        if (!w.started) break;
        if (w.on_wire() && wire::psn_in_range(psn, w.first_psn, w.psn_count)) break;
    }
    if (i >= r.wqes.size() || !r.wqes[i].started) {
        r.send_index = std::min(r.send_index, i);
        return;
    }
    r.send_index = i;
    for (size_t j = i; j < r.wqes.size() && r.wqes[j].started; ++j) {
        SendWqe &w = r.wqes[j];
        if (!w.on_wire()) continue;
        w.next_packet = j == i ? wire::psn_distance(w.first_psn, psn) : 0;
        if (w.is_read()) w.next_packet = std::min(w.next_packet, w.read_received);
    }
    r.packets_since_ack_req = 0;
    logger(Component::kRc)
        .debug("qp#{}: go back to psn {:#x} (wqe {:#x})", qp.number, psn, r.wqes[i].index);
}

void requester_timer(Qp &qp, SteadyTime now) {
    Requester &r = qp.req;
    if (qp.state != QpState::kRts) return;
    auto &dev = qp.device;
    if (r.rnr_deadline && *r.rnr_deadline <= now) {
        r.rnr_deadline.reset();
        r.rnr_wait = false;
        qp.now_ns = std::max(qp.now_ns, r.rnr_deadline_ns);
        requester_rewind(qp, r.una_psn);
        requester_progress(qp);
        complete_in_order(qp);  // local WQEs progress ran
    }
    if (r.ack_deadline && *r.ack_deadline <= now) {
        r.ack_deadline.reset();
        qp.now_ns = std::max(qp.now_ns, r.ack_deadline_ns);
        if (r.una_psn != r.next_psn && !r.rnr_wait) {
            dev.counters().add(Counter::ack_timeouts);
            if (r.retry_left == 0) {
                dev.counters().add(Counter::retry_exceeded_err);
                for (auto &w : r.wqes) {
                    if (w.started && w.on_wire()) {
                        w.error = hw::Syndrome::kTransportRetryExceeded;
                        break;
                    }
                }
                complete_in_order(qp);
                return;
            }
            --r.retry_left;
            tracing::retry(qp, softndk::trace::RetryKind::kTimeout, r.una_psn);
            dev.counters().add(Counter::completer_retry_err);
            logger(Component::kRc)
                .debug("qp#{}: ACK timeout, retry from psn {:#x}", qp.number, r.una_psn);
            requester_rewind(qp, r.una_psn);
            requester_progress(qp);
            complete_in_order(qp);
        }
    }
    schedule_timer(qp);
}

}  // namespace softndk::emu::rc
