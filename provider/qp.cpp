#include <algorithm>
#include <cstring>

#include "provider.hpp"
#include "softndk/trace.hpp"

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

constexpr ULONG kFastRegisterFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                                     NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_LOCAL_WRITE |
                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_RDMA_READ_SINK |
                                     NDK_OP_FLAG_DEFER;
constexpr ULONG kBindFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE |
                             NDK_OP_FLAG_DEFER;
constexpr ULONG kInvalidateFlags =
    NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER;
constexpr uint8_t kRemoteAccess = hw::kAccessRemoteRead | hw::kAccessRemoteWrite;

// NDK_OP_FLAG_ALLOW_* to hw::AccessFlags. ALLOW_REMOTE_WRITE (0x30) contains
// ALLOW_LOCAL_WRITE (0x10): remote write implies local write, as the values say.
uint8_t op_access(ULONG flags) {
    uint8_t a = 0;
    if ((flags & NDK_OP_FLAG_ALLOW_LOCAL_WRITE) != 0) a |= hw::kAccessLocalWrite;
    if ((flags & NDK_OP_FLAG_ALLOW_REMOTE_READ) != 0) a |= hw::kAccessRemoteRead;
    if ((flags & NDK_OP_FLAG_ALLOW_REMOTE_WRITE) == NDK_OP_FLAG_ALLOW_REMOTE_WRITE)
        a |= hw::kAccessRemoteWrite | hw::kAccessLocalWrite;
    if ((flags & NDK_OP_FLAG_RDMA_READ_SINK) != 0) a |= hw::kAccessReadSink;
    return a;
}

// The token a key-validating work request (FAST_REGISTER, BIND) hands out: same MPT
// index, the next variant byte, so the token valid before can never come back
// (emulator/memory/mpt.hpp "Variants").
uint32_t next_variant(uint32_t token) {
    return hw::make_token(hw::token_index(token),
                          static_cast<uint8_t>(hw::token_variant(token) + 1));
}

uint8_t ctrl_flags(ULONG flags) {
    uint8_t f = 0;
    if ((flags & NDK_OP_FLAG_SILENT_SUCCESS) == 0) f |= hw::kCtrlSignaled;
    if ((flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) != 0) f |= hw::kCtrlSolicited;
    if ((flags & NDK_OP_FLAG_READ_FENCE) != 0) f |= hw::kCtrlReadFence;
    if ((flags & NDK_OP_FLAG_INLINE) != 0) f |= hw::kCtrlInline;
    if ((flags & NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) != 0) f |= hw::kCtrlReadLocalInvalidate;
    return f;
}

}  // namespace

Qp::Qp(Adapter *a, Pd *pd, Cq *receive_cq, Cq *initiator_cq, Srq *srq, void *context,
       QpLimits limits, uint32_t number, void *memory, size_t bytes, SqProducer sq,
       std::optional<RqProducer> rq)
    : Object(a, fmt::format("{} qp#{}", a->name(), number)),
      pd_(pd),
      receive_cq_(receive_cq),
      initiator_cq_(initiator_cq),
      srq_(srq),
      context_(context),
      limits_(limits),
      number_(number),
      memory_(memory),
      memory_bytes_(bytes),
      sq_(sq),
      sq_shadow_(sq.entries()),
      rq_(rq ? std::make_unique<ReceiveQueue>(*rq, limits.receive_depth, limits.receive_sge)
             : nullptr) {
    publish(*static_cast<Embedded<NDK_QP> *>(this), kType, a->version(), &kQpDispatch);
    depend_on(pd);
    depend_on(receive_cq);
    depend_on(initiator_cq);
    if (srq != nullptr) depend_on(srq);
    receive_cq->bind_qp(number, this);
    initiator_cq->bind_qp(number, this);
}

NTSTATUS create_qp(Pd *pd, Cq *receive_cq, Cq *initiator_cq, Srq *srq, void *context,
                   const QpLimits &limits, Qp **out) {
    Adapter *a = pd->adapter();
    hw::CreateQpRequest request{};
    request.pd = pd->number();
    request.send_cq = initiator_cq->number();
    request.recv_cq = receive_cq->number();
    request.srq = srq != nullptr ? srq->number() : hw::kNoObject;
    request.send_depth = limits.initiator_depth;
    request.recv_depth = srq != nullptr ? 0 : limits.receive_depth;
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
    auto *qp = new Qp(a, pd, receive_cq, initiator_cq, srq, context, limits, response.qp, memory,
                      response.memory.bytes, *sq, rq);
    log().debug("{}: created, SQ {} WQEBBs, RQ {} slots{}", qp->name(), sq->entries(),
                rq ? rq->entries() : 0, srq != nullptr ? ", receives from " + srq->name() : "");
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
        sq_.stamp(adapter()->clock().now(), false);
        adapter()->ring(Adapter::Bell::kSend, number_);
    }
    return status;
}

NTSTATUS Qp::post_send(hw::WqeOpcode op, void *request_context, const NDK_SGE *sgl, ULONG n,
                       ULONG flags, uint64_t remote_address, uint32_t remote_token,
                       uint32_t invalidate_token) {
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
    if (adapter()->removed()) return fail_post(STATUS_DEVICE_REMOVED);
    if (!connected.load(std::memory_order_acquire)) return fail_post(STATUS_CONNECTION_INVALID);

    const uint32_t segments =
        1 + (rdma ? 1 : 0) +
        (is_inline ? static_cast<uint32_t>((sizeof(hw::InlineHeader) + total + 15) / 16) : n);
    if (segments > hw::kMaxWqeSegments) return fail_post(STATUS_INVALID_PARAMETER);

    alignas(64) std::byte wqe[kMaxWqeBytes];
    std::byte *at = wqe + hw::kSegmentBytes;  // after the control segment (submit)
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
        // Zero the padding of the last segment: no stale stack bytes reach the ring.
        std::memset(at, 0, wqe + segments * hw::kSegmentBytes - at);
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
    return submit(op, flags, invalidate_token, wqe, segments, request_context);
}

// The common tail of every initiator post: SQ space, the control segment, the write into
// the ring, the shadow entry, publication and the doorbell (held back by DEFER).
// `wqe` holds `segments` segments; the first is filled here.
NTSTATUS Qp::submit(hw::WqeOpcode op, ULONG flags, uint32_t invalidate_token, std::byte *wqe,
                    uint32_t segments, void *request_context) {
    const uint32_t wqebbs =
        (segments * hw::kSegmentBytes + hw::kWqeBasicBlock - 1) / hw::kWqeBasicBlock;
    const uint32_t head = sq_.reserved();
    if (sq_posted_wqes_ - sq_retired_wqes_.load(std::memory_order_acquire) >=
            limits_.initiator_depth ||
        head + wqebbs - sq_retired_.load(std::memory_order_acquire) > sq_.entries())
        return fail_post(STATUS_INSUFFICIENT_RESOURCES);
    const auto first = sq_.reserve(wqebbs);
    if (!first) return fail_post(STATUS_INSUFFICIENT_RESOURCES);

    hw::CtrlSegment ctrl{};
    ctrl.opcode = op;
    ctrl.flags = ctrl_flags(flags);
    ctrl.wqe_index = static_cast<uint16_t>(*first);
    ctrl.segment_count = static_cast<uint8_t>(segments);
    ctrl.invalidate_token = invalidate_token;
    std::memcpy(wqe, &ctrl, sizeof ctrl);
    const uint32_t bytes = segments * hw::kSegmentBytes;
    std::memset(wqe + bytes, 0, wqebbs * hw::kWqeBasicBlock - bytes);
    sq_.write(*first, wqe, wqebbs * hw::kWqeBasicBlock);
    sq_shadow_[*first & (sq_.entries() - 1)] =
        SendShadow{request_context, static_cast<uint16_t>(wqebbs), op};
    ++sq_posted_wqes_;
    // The doorbell's model time, and BlueFlame: a WQE rung on its own (nothing DEFERred
    // before it) and small enough is written with the doorbell, so the device need not
    // fetch it (hw::ProducerRecord).
    const bool deferred = (flags & NDK_OP_FLAG_DEFER) != 0;
    const bool blueflame = !deferred && !sq_unrung_ &&
                           wqebbs * hw::kWqeBasicBlock <= adapter()->limits().blueflame_bytes;
    sq_.stamp(adapter()->clock().now(), blueflame);
    if (trace::on())
        trace::post(
            adapter()->if_index(),
            {number_, *first, static_cast<uint8_t>(op), 0, *first + wqebbs, sq_.entries(), false},
            adapter()->clock().now());
    sq_.publish();
    sq_published_.store(sq_.producer(), std::memory_order_release);
    if (deferred) {
        sq_unrung_ = true;
    } else {
        sq_unrung_ = false;
        adapter()->ring(Adapter::Bell::kSend, number_);
    }
    return STATUS_SUCCESS;
}

NTSTATUS Qp::post_fast_register(void *request_context, Mr *mr, ULONG page_count,
                                const NDK_LOGICAL_ADDRESS *pages, ULONG fbo, SIZE_T length,
                                void *base, ULONG flags) {
    if ((flags & ~kFastRegisterFlags) != 0 || mr == nullptr || page_count == 0 ||
        pages == nullptr || length == 0 || fbo >= PAGE_SIZE)
        return fail_post(STATUS_INVALID_PARAMETER);
    if (!mr->fast_register()) return fail_post(STATUS_INVALID_DEVICE_REQUEST);
    const uint8_t access = op_access(flags);
    {
        std::lock_guard lock(mr->mutex);
        if (mr->fast_register_pages == 0) return fail_post(STATUS_INVALID_DEVICE_STATE);
        if (page_count > mr->fast_register_pages) return fail_post(STATUS_INVALID_PARAMETER);
        if ((access & kRemoteAccess) != 0 && !mr->fast_register_remote)
            return fail_post(STATUS_ACCESS_VIOLATION);
    }
    if (adapter()->removed()) return fail_post(STATUS_DEVICE_REMOVED);
    if (!connected.load(std::memory_order_acquire)) return fail_post(STATUS_CONNECTION_INVALID);
    const uint32_t segments = 3 + (page_count + 1) / 2;
    if (segments > hw::kMaxWqeSegments) return fail_post(STATUS_INVALID_PARAMETER);

    // The MR keeps its token (drivers cache NdkGetRemoteTokenFromMr) unless the profile
    // opts in to rotating fast-register keys (hw::kQuirkRotateFastRegisterKeys).
    const bool rotate = (adapter()->limits().quirks & hw::kQuirkRotateFastRegisterKeys) != 0;
    const uint32_t token = rotate ? next_variant(mr->token()) : mr->token();
    alignas(64) std::byte wqe[kMaxWqeBytes];
    hw::FastRegisterSegment f{};
    f.mr_token = token;
    f.access = access;
    f.first_byte_offset_low = static_cast<uint16_t>(fbo);
    f.page_count = page_count;
    f.base_iova = reinterpret_cast<uintptr_t>(base);
    f.length = length;
    std::memcpy(wqe + hw::kSegmentBytes, &f, sizeof f);
    for (ULONG i = 0; i < page_count; ++i) {
        const auto page = static_cast<uint64_t>(pages[i].QuadPart);
        std::memcpy(wqe + 3 * hw::kSegmentBytes + i * sizeof page, &page, sizeof page);
    }
    if (page_count % 2 != 0)
        std::memset(wqe + 3 * hw::kSegmentBytes + page_count * sizeof(uint64_t), 0, 8);
    const NTSTATUS status =
        submit(hw::WqeOpcode::kFastRegister, flags, 0, wqe, segments, request_context);
    if (NT_SUCCESS(status)) mr->set_token(token);
    return status;
}

NTSTATUS Qp::post_bind(void *request_context, Mr *mr, Mw *mw, void *address, SIZE_T length,
                       ULONG flags) {
    // A zero-length bind unbinds a type-1 window (softndk_ext.h); its MR and address
    // are ignored. A type-2 window has no unbind: it is invalidated instead.
    const bool unbind = length == 0 && mw != nullptr && mw->window_type() == 1;
    if ((flags & ~kBindFlags) != 0 || mw == nullptr ||
        (!unbind && (mr == nullptr || address == nullptr || length == 0)))
        return fail_post(STATUS_INVALID_PARAMETER);
    // A window grants remote rights only; the local-write bit inside ALLOW_REMOTE_WRITE
    // is a requirement on the MR, checked here.
    const uint8_t access = unbind ? 0 : op_access(flags) & kRemoteAccess;
    if (!unbind) {
        std::lock_guard lock(mr->mutex);
        // A window that grants remote write needs an MR its owner may write locally
        // (ndkpi-api.md 3.8): checked here, as the DDI returns it inline.
        if ((access & hw::kAccessRemoteWrite) != 0 && (mr->access & hw::kAccessLocalWrite) == 0)
            return fail_post(STATUS_ACCESS_VIOLATION);
    }
    if (adapter()->removed()) return fail_post(STATUS_DEVICE_REMOVED);
    if (!connected.load(std::memory_order_acquire)) return fail_post(STATUS_CONNECTION_INVALID);
    const uint32_t token = next_variant(mw->token());
    alignas(64) std::byte wqe[kMaxWqeBytes];
    hw::BindSegment b{};
    b.mw_token = token;
    b.mr_token = unbind ? 0 : mr->token();
    b.access = access;
    b.iova = unbind ? 0 : reinterpret_cast<uintptr_t>(address);
    b.length = length;
    std::memcpy(wqe + hw::kSegmentBytes, &b, sizeof b);
    const NTSTATUS status = submit(hw::WqeOpcode::kBindWindow, flags, 0, wqe, 3, request_context);
    if (NT_SUCCESS(status)) {
        mw->set_token(token);
        mw->bound.store(true, std::memory_order_release);
    }
    return status;
}

NTSTATUS Qp::post_invalidate(void *request_context, uint32_t token, ULONG flags) {
    if ((flags & ~kInvalidateFlags) != 0) return fail_post(STATUS_INVALID_PARAMETER);
    if (adapter()->removed()) return fail_post(STATUS_DEVICE_REMOVED);
    if (!connected.load(std::memory_order_acquire)) return fail_post(STATUS_CONNECTION_INVALID);
    alignas(64) std::byte wqe[kMaxWqeBytes];
    return submit(hw::WqeOpcode::kLocalInvalidate, flags, token, wqe, 1, request_context);
}

NTSTATUS Qp::post_receive(void *request_context, const NDK_SGE *sgl, ULONG n) {
    // A QP created with an SRQ receives only from it (NdkSrqReceive).
    if (srq_ != nullptr) return STATUS_INVALID_DEVICE_REQUEST;
    if (!rq_) return STATUS_INSUFFICIENT_RESOURCES;
    if (adapter()->removed()) return STATUS_DEVICE_REMOVED;
    const NTSTATUS status = rq_->post(request_context, sgl, n);
    if (NT_SUCCESS(status) && trace::on())
        trace::post(adapter()->if_index(),
                    {number_, (rq_->posted() - 1) & (rq_->capacity() - 1), 0, 0, rq_->posted(),
                     rq_->capacity(), true},
                    adapter()->clock().now());
    if (NT_SUCCESS(status)) adapter()->ring(Adapter::Bell::kReceive, number_);
    return status;
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

bool Qp::retire_oldest_send(void **request_context, hw::WqeOpcode *op) {
    const uint32_t oldest = sq_retired_.load(std::memory_order_relaxed);
    if (oldest == sq_published_.load(std::memory_order_acquire)) return false;
    return retire_send(static_cast<uint16_t>(oldest), request_context, op);
}

bool Qp::retire_oldest_receive(void **request_context) {
    return rq_ && rq_->retire_oldest(request_context);
}

bool Qp::retire_receive(uint16_t counter, void **request_context) {
    if (rq_ && rq_->retire_in_order(counter, request_context)) return true;
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

NTSTATUS bind_slot(NDK_QP *pQp, PVOID ctx, NDK_MR *pMr, NDK_MW *pMw, PVOID VirtualAddress,
                   SIZE_T Length, ULONG Flags) {
    Qp *qp = from_ndk<Qp>(pQp);
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    return qp->post_bind(ctx, from_ndk<Mr>(pMr), from_ndk<Mw>(pMw), VirtualAddress, Length, Flags);
}

NTSTATUS fast_register_slot(NDK_QP *pQp, PVOID ctx, NDK_MR *pMr, ULONG AdapterPageCount,
                            const NDK_LOGICAL_ADDRESS *AdapterPageArray, ULONG FBO, SIZE_T Length,
                            PVOID BaseVirtualAddress, ULONG Flags) {
    Qp *qp = from_ndk<Qp>(pQp);
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    return qp->post_fast_register(ctx, from_ndk<Mr>(pMr), AdapterPageCount, AdapterPageArray, FBO,
                                  Length, BaseVirtualAddress, Flags);
}

// The target is a fast-registered MR or a bound window, told apart by the header's
// ObjectType (never by its Dispatch, which belongs to the consumer).
NTSTATUS invalidate_slot(NDK_QP *pQp, PVOID ctx, NDK_OBJECT_HEADER *pMrOrMw, ULONG Flags) {
    Qp *qp = from_ndk<Qp>(pQp);
    if (qp == nullptr || pMrOrMw == nullptr) return STATUS_INVALID_PARAMETER;
    if (Mr *mr = from_header<Mr>(pMrOrMw)) {
        // An MR registered with NdkRegisterMr is undone with NdkDeregisterMr.
        if (!mr->fast_register()) return STATUS_INVALID_PARAMETER;
        return qp->post_invalidate(ctx, mr->token(), Flags);
    }
    if (Mw *mw = from_header<Mw>(pMrOrMw)) return qp->post_invalidate(ctx, mw->token(), Flags);
    return STATUS_INVALID_PARAMETER;
}

NTSTATUS send_and_invalidate_slot(NDK_QP *pQp, PVOID ctx, const NDK_SGE *pSgl, ULONG nSge,
                                  ULONG Flags, UINT32 RemoteToken) {
    Qp *qp = from_ndk<Qp>(pQp);
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    return qp->post_send(hw::WqeOpcode::kSendInvalidate, ctx, pSgl, nSge, Flags, 0, 0, RemoteToken);
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
    .NdkBind = bind_slot,
    .NdkFastRegister = fast_register_slot,
    .NdkInvalidate = invalidate_slot,
    .NdkRead = read_slot,
    .NdkWrite = write_slot,
    .NdkSendAndInvalidate = send_and_invalidate_slot,
};

}  // namespace softndk::provider
