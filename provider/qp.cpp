#include <algorithm>
#include <cstring>

#include "provider.hpp"
#include "stubs.hpp"

namespace softndk::provider {

namespace {

constexpr ULONG kSendFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | NDK_OP_FLAG_INLINE |
                             NDK_OP_FLAG_DEFER;
// INLINE on Write: InlineDataSize applies to "send or write" (ndkpi-api.md 9.6).
constexpr ULONG kWriteFlags =
    NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER;
constexpr ULONG kReadFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE | NDK_OP_FLAG_DEFER;

constexpr uint32_t kMaxWqeBytes =
    (hw::kMaxWqeSegments * hw::kSegmentBytes + hw::kWqeBasicBlock - 1) / hw::kWqeBasicBlock *
    hw::kWqeBasicBlock;

uint8_t ctrl_flags(ULONG flags) {
    uint8_t f = 0;
    if ((flags & NDK_OP_FLAG_SILENT_SUCCESS) == 0) f |= hw::kCtrlSignaled;
    if ((flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) != 0) f |= hw::kCtrlSolicited;
    if ((flags & NDK_OP_FLAG_READ_FENCE) != 0) f |= hw::kCtrlReadFence;
    if ((flags & NDK_OP_FLAG_INLINE) != 0) f |= hw::kCtrlInline;
    if ((flags & NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) != 0) f |= hw::kCtrlReadLocalInvalidate;
    return f;
}

// Same WQE slot? Compares the bits both a 16-bit wqe_index and a masked slot
// index carry, so either reading of docs/prm.md's wqe_counter works.
bool same_slot(uint32_t count, uint16_t counter, uint32_t mask) {
    return ((count ^ counter) & mask & 0xffffu) == 0;
}

}  // namespace

Qp::Qp(Adapter *a, Pd *pd, Cq *receive_cq, Cq *initiator_cq, void *context, QpLimits limits,
       uint32_t number, void *memory, size_t bytes, SqProducer sq, std::optional<RqProducer> rq)
    : Object(a, fmt::format("{} qp#{}", a->name(), number)),
      pd_(pd),
      receive_cq_(receive_cq),
      initiator_cq_(initiator_cq),
      context_(context),
      limits_(limits),
      number_(number),
      memory_(memory),
      memory_bytes_(bytes),
      sq_(sq),
      sq_shadow_(sq.entries()),
      rq_(rq),
      rq_shadow_(rq ? rq->entries() : 0) {
    publish(*static_cast<Embedded<NDK_QP> *>(this), kType, a->version(), &kQpDispatch);
    depend_on(pd);
    depend_on(receive_cq);
    depend_on(initiator_cq);
    receive_cq->bind_qp(number, this);
    initiator_cq->bind_qp(number, this);
}

NTSTATUS create_qp(Pd *pd, Cq *receive_cq, Cq *initiator_cq, void *context, const QpLimits &limits,
                   Qp **out) {
    Adapter *a = pd->adapter();
    hw::CreateQpRequest request{};
    request.pd = pd->number();
    request.send_cq = initiator_cq->number();
    request.recv_cq = receive_cq->number();
    request.srq = hw::kNoObject;
    request.send_depth = limits.initiator_depth;
    request.recv_depth = limits.receive_depth;
    request.max_send_sge = std::max(limits.initiator_sge, a->info().MaxReadRequestSge);
    request.max_recv_sge = limits.receive_sge;
    request.max_inline_bytes = limits.inline_bytes;
    hw::CreateQpResponse response{};
    const NTSTATUS status = a->execute(hw::CommandOpcode::kCreateQp, request, response);
    if (!NT_SUCCESS(status)) return status;
    void *memory = a->map(response.memory);
    std::optional<SqProducer> sq;
    std::optional<RqProducer> rq;
    bool ok = memory != nullptr;
    if (ok) sq = SqProducer::attach(memory, response.send_queue);
    ok = ok && sq.has_value();
    if (ok && response.recv_queue.entries != 0) {
        rq = RqProducer::attach(memory, response.recv_queue);
        ok = rq.has_value();
    }
    if (!ok) {
        log().error("{}: qp#{}: bad queue layout", a->name(), response.qp);
        if (memory != nullptr) a->unmap(memory, response.memory.bytes);
        a->execute_object(hw::CommandOpcode::kDestroyQp, response.qp);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    auto *qp = new Qp(a, pd, receive_cq, initiator_cq, context, limits, response.qp, memory,
                      response.memory.bytes, *sq, rq);
    log().debug("{}: created, SQ {} WQEBBs, RQ {} slots", qp->name(), sq->entries(),
                rq ? rq->entries() : 0);
    *out = qp;
    return STATUS_SUCCESS;
}

void Qp::on_close() {
    connected.store(false, std::memory_order_release);
    receive_cq_->unbind_qp(number_);
    initiator_cq_->unbind_qp(number_);
}

void Qp::on_final() {
    adapter()->execute_object(hw::CommandOpcode::kDestroyQp, number_);
    adapter()->unmap(memory_, memory_bytes_);
}

void Qp::flush() {
    adapter()->execute_object(hw::CommandOpcode::kFlushQp, number_);
}

// A post that fails inline must still submit everything DEFERred before it
// (ndkpi-api.md 7.4).
NTSTATUS Qp::fail_post(NTSTATUS status) {
    if (sq_unrung_) {
        sq_unrung_ = false;
        adapter()->ring(Adapter::Bell::kSend, number_);
    }
    return status;
}

NTSTATUS Qp::post_send(hw::WqeOpcode op, void *request_context, const NDK_SGE *sgl, ULONG n,
                       ULONG flags, uint64_t remote_address, uint32_t remote_token) {
    const NDK_ADAPTER_INFO &info = adapter()->info();
    const bool rdma = op == hw::WqeOpcode::kRdmaRead || op == hw::WqeOpcode::kRdmaWrite;
    const ULONG allowed = op == hw::WqeOpcode::kRdmaRead    ? kReadFlags
                          : op == hw::WqeOpcode::kRdmaWrite ? kWriteFlags
                                                            : kSendFlags;
    if ((flags & ~allowed) != 0 || (sgl == nullptr && n != 0))
        return fail_post(STATUS_INVALID_PARAMETER);
    if ((info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED) == 0)
        flags &= ~static_cast<ULONG>(NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE);
    const bool is_inline = (flags & NDK_OP_FLAG_INLINE) != 0;
    uint64_t total = 0;
    for (ULONG i = 0; i < n; ++i)
        total += sgl[i].Length;
    if (total > info.MaxTransferLength) return fail_post(STATUS_INVALID_PARAMETER);
    const ULONG max_sge =
        op == hw::WqeOpcode::kRdmaRead ? info.MaxReadRequestSge : limits_.initiator_sge;
    if (is_inline ? total > limits_.inline_bytes : n > max_sge)
        return fail_post(STATUS_INVALID_PARAMETER);
    if (!connected.load(std::memory_order_acquire)) return fail_post(STATUS_CONNECTION_INVALID);

    const uint32_t segments =
        1 + (rdma ? 1 : 0) +
        (is_inline ? static_cast<uint32_t>((sizeof(hw::InlineHeader) + total + 15) / 16) : n);
    if (segments > hw::kMaxWqeSegments) return fail_post(STATUS_INVALID_PARAMETER);
    const uint32_t wqebbs =
        (segments * hw::kSegmentBytes + hw::kWqeBasicBlock - 1) / hw::kWqeBasicBlock;
    const uint32_t head = sq_.reserved();
    if (sq_posted_wqes_ - sq_retired_wqes_.load(std::memory_order_acquire) >=
            limits_.initiator_depth ||
        head + wqebbs - sq_retired_.load(std::memory_order_acquire) > sq_.entries())
        return fail_post(STATUS_INSUFFICIENT_RESOURCES);
    const auto first = sq_.reserve(wqebbs);
    if (!first) return fail_post(STATUS_INSUFFICIENT_RESOURCES);

    alignas(64) std::byte wqe[kMaxWqeBytes];
    std::memset(wqe, 0, wqebbs * hw::kWqeBasicBlock);
    std::byte *at = wqe;
    hw::CtrlSegment ctrl{};
    ctrl.opcode = op;
    ctrl.flags = ctrl_flags(flags);
    ctrl.wqe_index = static_cast<uint16_t>(*first);
    ctrl.segment_count = static_cast<uint8_t>(segments);
    std::memcpy(at, &ctrl, sizeof ctrl);
    at += hw::kSegmentBytes;
    if (rdma) {
        hw::RemoteAddressSegment raddr{};
        raddr.remote_address = remote_address;
        raddr.remote_token = remote_token;
        std::memcpy(at, &raddr, sizeof raddr);
        at += hw::kSegmentBytes;
    }
    if (is_inline) {
        const hw::InlineHeader header{static_cast<uint32_t>(total) | hw::kInlineMarker};
        std::memcpy(at, &header, sizeof header);
        at += sizeof header;
        for (ULONG i = 0; i < n; ++i) {
            if (sgl[i].Length != 0) std::memcpy(at, sgl[i].VirtualAddress, sgl[i].Length);
            at += sgl[i].Length;
        }
    } else {
        for (ULONG i = 0; i < n; ++i) {
            hw::DataSegment d{};
            d.byte_count = sgl[i].Length;
            d.local_token = sgl[i].MemoryRegionToken;
            d.address = reinterpret_cast<uintptr_t>(sgl[i].VirtualAddress);
            std::memcpy(at, &d, sizeof d);
            at += hw::kSegmentBytes;
        }
    }
    sq_.write(*first, wqe, wqebbs * hw::kWqeBasicBlock);
    sq_shadow_[*first & (sq_.entries() - 1)] =
        SendShadow{request_context, static_cast<uint16_t>(wqebbs), op};
    ++sq_posted_wqes_;
    sq_.publish();
    sq_published_.store(sq_.producer(), std::memory_order_release);
    if ((flags & NDK_OP_FLAG_DEFER) != 0) {
        sq_unrung_ = true;
    } else {
        sq_unrung_ = false;
        adapter()->ring(Adapter::Bell::kSend, number_);
    }
    return STATUS_SUCCESS;
}

NTSTATUS Qp::post_receive(void *request_context, const NDK_SGE *sgl, ULONG n) {
    if ((sgl == nullptr && n != 0) || n > limits_.receive_sge) return STATUS_INVALID_PARAMETER;
    if (!rq_) return STATUS_INSUFFICIENT_RESOURCES;
    const uint32_t slot_segments = rq_->entry_bytes() / hw::kSegmentBytes;
    if (n > slot_segments) return STATUS_INVALID_PARAMETER;
    const uint32_t head = rq_->reserved();
    const uint32_t outstanding = head - rq_retired_.load(std::memory_order_acquire);
    if (outstanding >= std::min(limits_.receive_depth, rq_->entries()))
        return STATUS_INSUFFICIENT_RESOURCES;
    const auto slot = rq_->reserve(1);
    if (!slot) return STATUS_INSUFFICIENT_RESOURCES;
    alignas(64) hw::DataSegment segments[hw::kMaxWqeSegments] = {};
    for (ULONG i = 0; i < n; ++i) {
        segments[i].byte_count = sgl[i].Length;
        segments[i].local_token = sgl[i].MemoryRegionToken;
        segments[i].address = reinterpret_cast<uintptr_t>(sgl[i].VirtualAddress);
    }
    if (n < slot_segments) segments[n].local_token = hw::kRecvListEnd;
    rq_->write(*slot, segments, rq_->entry_bytes());
    rq_shadow_[*slot & (rq_->entries() - 1)] = request_context;
    rq_->publish();
    rq_published_.store(rq_->producer(), std::memory_order_release);
    adapter()->ring(Adapter::Bell::kReceive, number_);
    return STATUS_SUCCESS;
}

bool Qp::retire_send(uint16_t counter, void **request_context, hw::WqeOpcode *op) {
    const uint32_t mask = sq_.entries() - 1;
    const uint32_t published = sq_published_.load(std::memory_order_acquire);
    const uint32_t retired = sq_retired_.load(std::memory_order_relaxed);
    uint32_t wqes = 0;
    for (uint32_t c = retired; c != published;) {
        const SendShadow &s = sq_shadow_[c & mask];
        ++wqes;
        if (same_slot(c, counter, mask)) {
            *request_context = s.request_context;
            *op = s.opcode;
            sq_retired_wqes_.fetch_add(wqes, std::memory_order_release);
            sq_retired_.store(c + s.wqebbs, std::memory_order_release);
            return true;
        }
        if (s.wqebbs == 0 || published - c < s.wqebbs) break;
        c += s.wqebbs;
    }
    log().warn("{}: send CQE for wqe_index {} matches no outstanding WQE", name(), counter);
    return false;
}

bool Qp::retire_receive(uint16_t counter, void **request_context) {
    if (!rq_) return false;
    const uint32_t mask = rq_->entries() - 1;
    const uint32_t published = rq_published_.load(std::memory_order_acquire);
    for (uint32_t c = rq_retired_.load(std::memory_order_relaxed); c != published; ++c) {
        if (same_slot(c, counter, mask)) {
            *request_context = rq_shadow_[c & mask];
            rq_retired_.store(c + 1, std::memory_order_release);
            return true;
        }
    }
    log().warn("{}: receive CQE for slot {} matches no outstanding receive", name(), counter);
    return false;
}

namespace {

NTSTATUS close_qp(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    Qp *qp = from_header<Qp>(h);
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    return qp->close(cb, ctx);
}

NTSTATUS qp_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                            NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Qp>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    return query_extension(h, id, v, out);
}

void flush_qp(NDK_QP *pQp) {
    if (Qp *qp = from_ndk<Qp>(pQp)) qp->flush();
}

NTSTATUS send_slot(NDK_QP *pQp, PVOID ctx, const NDK_SGE *pSgl, ULONG nSge, ULONG Flags) {
    Qp *qp = from_ndk<Qp>(pQp);
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    return qp->post_send(hw::WqeOpcode::kSend, ctx, pSgl, nSge, Flags, 0, 0);
}

NTSTATUS receive_slot(NDK_QP *pQp, PVOID ctx, const NDK_SGE *pSgl, ULONG nSge) {
    Qp *qp = from_ndk<Qp>(pQp);
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    return qp->post_receive(ctx, pSgl, nSge);
}

NTSTATUS read_slot(NDK_QP *pQp, PVOID ctx, const NDK_SGE *pSgl, ULONG nSge, UINT64 RemoteAddress,
                   UINT32 RemoteToken, ULONG Flags) {
    Qp *qp = from_ndk<Qp>(pQp);
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    return qp->post_send(hw::WqeOpcode::kRdmaRead, ctx, pSgl, nSge, Flags, RemoteAddress,
                         RemoteToken);
}

NTSTATUS write_slot(NDK_QP *pQp, PVOID ctx, const NDK_SGE *pSgl, ULONG nSge, UINT64 RemoteAddress,
                    UINT32 RemoteToken, ULONG Flags) {
    Qp *qp = from_ndk<Qp>(pQp);
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    return qp->post_send(hw::WqeOpcode::kRdmaWrite, ctx, pSgl, nSge, Flags, RemoteAddress,
                         RemoteToken);
}

}  // namespace

const NDK_QP_DISPATCH kQpDispatch = {
    .NdkCloseQp = close_qp,
    .NdkQueryExtension = qp_query_extension,
    .NdkFlush = flush_qp,
    .NdkSend = send_slot,
    .NdkReceive = receive_slot,
    .NdkBind = not_built<"NDK_QP_DISPATCH", "NdkBind", NDK_FN_BIND>,
    .NdkFastRegister = not_built<"NDK_QP_DISPATCH", "NdkFastRegister", NDK_FN_FAST_REGISTER>,
    .NdkInvalidate = not_built<"NDK_QP_DISPATCH", "NdkInvalidate", NDK_FN_INVALIDATE>,
    .NdkRead = read_slot,
    .NdkWrite = write_slot,
    .NdkSendAndInvalidate =
        not_built<"NDK_QP_DISPATCH", "NdkSendAndInvalidate", NDK_FN_SEND_AND_INVALIDATE>,
};

}  // namespace softndk::provider
