// SRQ: NdkCreateSrq (pd.cpp's slot calls create_srq), NdkSrqReceive, NdkModifySrq and
// the one-shot limit notification (ndkpi-api.md 3.7). The device keeps the ring and the
// armed threshold (emulator/device/srq.hpp); the provider keeps the RequestContexts
// (receive_queue.hpp) and runs the notification callback on the event thread.
#include "provider.hpp"

namespace softndk::provider {

Srq::Srq(Adapter *a, Pd *pd, uint32_t number, void *memory, size_t bytes, RqProducer ring,
         uint32_t depth, uint32_t max_sge, NDK_FN_SRQ_NOTIFICATION_CALLBACK callback,
         void *callback_context)
    : Object(a, fmt::format("{} srq#{}", a->name(), number)),
      pd_(pd),
      number_(number),
      memory_(memory),
      memory_bytes_(bytes),
      max_sge_(max_sge),
      queue_(ring, depth, max_sge),
      callback_(callback),
      callback_context_(callback_context) {
    publish(*static_cast<Embedded<NDK_SRQ> *>(this), kType, a->version(), &kSrqDispatch);
    depend_on(pd);
    std::lock_guard lock(a->route_mutex);
    a->srqs[number] = this;
}

NTSTATUS create_srq(Pd *pd, ULONG depth, ULONG max_sge, ULONG threshold,
                    NDK_FN_SRQ_NOTIFICATION_CALLBACK cb, void *ctx, Srq **out) {
    Adapter *a = pd->adapter();
    hw::CreateSrqRequest request{};
    request.pd = pd->number();
    request.depth = depth;
    request.max_sge = max_sge;
    request.limit = threshold;
    hw::CreateSrqResponse response{};
    const NTSTATUS status = a->execute(hw::CommandOpcode::kCreateSrq, request, response);
    if (!NT_SUCCESS(status)) return status;
    void *memory = a->map(response.memory);
    std::optional<RqProducer> ring;
    if (memory != nullptr) ring = RqProducer::attach(memory, response.layout);
    if (!ring) {
        log().error("{}: srq#{}: bad queue layout", a->name(), response.srq);
        if (memory != nullptr) a->unmap(memory, response.memory.bytes);
        a->execute_object(hw::CommandOpcode::kDestroySrq, response.srq);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    *out =
        new Srq(a, pd, response.srq, memory, response.memory.bytes, *ring, depth, max_sge, cb, ctx);
    log().debug("{}: created, {} slots, threshold {}", (*out)->name(), ring->entries(), threshold);
    return STATUS_SUCCESS;
}

// Depth 0 keeps the depth; threshold 0 keeps the threshold and its arm state; a
// non-zero threshold re-arms, and the device fires at once if fewer receives are
// queued already. The ring was sized at creation (next power of two of the depth):
// a depth beyond it is refused, as mlx5 refuses any SRQ resize.
NTSTATUS Srq::modify(ULONG depth, ULONG threshold) {
    if (depth > adapter()->info().MaxSrqDepth) return STATUS_INVALID_PARAMETER;
    if (depth > queue_.capacity()) {
        log().warn("{}: NdkModifySrq to depth {}: the ring holds {}", name(), depth,
                   queue_.capacity());
        return STATUS_INVALID_PARAMETER;
    }
    const ULONG effective_depth = depth != 0 ? depth : queue_.depth();
    if (threshold > effective_depth) return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(modify_mutex_);
    if (threshold != 0) {
        hw::CreateSrqRequest request{};
        request.srq = number_;
        request.limit = threshold;
        hw::CreateSrqResponse response{};
        const NTSTATUS status =
            adapter()->execute(hw::CommandOpcode::kModifySrq, request, response);
        if (!NT_SUCCESS(status)) return status;
    }
    if (depth != 0) queue_.set_depth(depth);
    return STATUS_SUCCESS;
}

// On the event thread, which holds this SRQ for the call: close waits for it.
void Srq::limit_reached() {
    if (callback_ != nullptr) callback_(callback_context_, STATUS_SUCCESS);
}

void Srq::on_close() {
    adapter()->unroute(adapter()->srqs, number_, this);
}

void Srq::on_final() {
    adapter()->execute_object(hw::CommandOpcode::kDestroySrq, number_);
    adapter()->unmap(memory_, memory_bytes_);
}

namespace {

NTSTATUS close_srq(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    Srq *srq = from_header<Srq>(h);
    if (srq == nullptr) return STATUS_INVALID_PARAMETER;
    return srq->close(cb, ctx);
}

NTSTATUS srq_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                             NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Srq>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    return query_extension(h, id, v, out);
}

NTSTATUS modify_srq(NDK_SRQ *pSrq, ULONG SrqDepth, ULONG NotifyThreshold,
                    NDK_FN_REQUEST_COMPLETION cb, PVOID) {
    Srq *srq = from_ndk<Srq>(pSrq);
    if (srq == nullptr || cb == nullptr) return STATUS_INVALID_PARAMETER;
    return srq->modify(SrqDepth, NotifyThreshold);
}

NTSTATUS srq_receive(NDK_SRQ *pSrq, PVOID ctx, const NDK_SGE *pSgl, ULONG nSge) {
    Srq *srq = from_ndk<Srq>(pSrq);
    if (srq == nullptr) return STATUS_INVALID_PARAMETER;
    if (srq->adapter()->removed()) return STATUS_DEVICE_REMOVED;
    return srq->queue().post(ctx, pSgl, nSge);
}

}  // namespace

const NDK_SRQ_DISPATCH kSrqDispatch = {
    .NdkCloseSrq = close_srq,
    .NdkQueryExtension = srq_query_extension,
    .NdkModifySrq = modify_srq,
    .NdkSrqReceive = srq_receive,
};

}  // namespace softndk::provider
