#include <softndk_ext.h>

#include <array>
#include <type_traits>
#include <utility>

#include "provider.hpp"
#include "softndk/trace.hpp"

namespace softndk::provider {

// docs/prm.md section 4, "Completion statuses".
NTSTATUS syndrome_status(hw::Syndrome s) {
    using S = hw::Syndrome;
    static constexpr std::pair<S, NTSTATUS> kMap[] = {
        {S::kSuccess, STATUS_SUCCESS},
        {S::kLocalLength, STATUS_DATA_OVERRUN},
        {S::kLocalQpOperation, STATUS_INTERNAL_ERROR},
        {S::kLocalProtection, STATUS_ACCESS_VIOLATION},
        {S::kWorkRequestFlushed, STATUS_CANCELLED},
        {S::kMemoryWindowBind, STATUS_ACCESS_VIOLATION},
        {S::kBadResponse, STATUS_INTERNAL_ERROR},
        {S::kLocalAccess, STATUS_ACCESS_VIOLATION},
        {S::kRemoteInvalidRequest, STATUS_INVALID_DEVICE_REQUEST},
        {S::kRemoteAccess, STATUS_REMOTE_RESOURCES},
        {S::kRemoteOperation, STATUS_REMOTE_RESOURCES},
        {S::kTransportRetryExceeded, STATUS_IO_TIMEOUT},
        {S::kRnrRetryExceeded, STATUS_IO_TIMEOUT},
        {S::kRemoteAborted, STATUS_CONNECTION_ABORTED},
        {S::kReceiveOverflow, STATUS_BUFFER_OVERFLOW},
    };
    for (const auto &[syndrome, status] : kMap)
        if (syndrome == s) return status;
    return STATUS_INTERNAL_ERROR;
}

// NDK_OPERATION_TYPE is bit-valued (ndkpi-api.md 0.1 item 1).
NDK_OPERATION_TYPE operation_type(hw::WqeOpcode op) {
    using O = hw::WqeOpcode;
    static constexpr std::pair<O, NDK_OPERATION_TYPE> kMap[] = {
        {O::kSend, NdkOperationTypeSend},
        {O::kSendInvalidate, NdkOperationTypeSend},
        {O::kRdmaWrite, NdkOperationTypeWrite},
        {O::kRdmaRead, NdkOperationTypeRead},
        {O::kLocalInvalidate, NdkOperationTypeInvalidate},
        {O::kFastRegister, NdkOperationTypeFastRegister},
        {O::kBindWindow, NdkOperationTypeBind},
    };
    for (const auto &[opcode, type] : kMap)
        if (opcode == op) return type;
    return NdkOperationTypeSend;
}

Cq::Cq(Adapter *a, uint32_t number, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, void *ctx, void *memory,
       size_t bytes, CqConsumer ring, hw::CqDoorbell *doorbell, ULONG depth)
    : Object(a, fmt::format("{} cq#{}", a->name(), number)),
      number_(number),
      callback_(cb),
      callback_context_(ctx),
      memory_(memory),
      memory_bytes_(bytes),
      ring_(ring),
      doorbell_(doorbell),
      depth_(depth) {
    publish(*static_cast<Embedded<NDK_CQ> *>(this), kType, a->version(), &kCqDispatch);
    depend_on(a);
}

NTSTATUS create_cq(Adapter *a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, void *ctx,
                   Cq **out) {
    hw::CreateCqRequest request{};
    request.depth = depth;
    hw::CreateCqResponse response{};
    NTSTATUS status = a->execute(hw::CommandOpcode::kCreateCq, request, response);
    if (!NT_SUCCESS(status)) return status;
    void *memory = a->map(response.memory);
    std::optional<CqConsumer> ring;
    if (memory != nullptr) ring = CqConsumer::attach(memory, response.layout);
    if (!ring || response.layout.doorbell_offset + sizeof(hw::CqDoorbell) > response.layout.bytes) {
        log().error("{}: cq#{}: bad queue layout", a->name(), response.cq);
        if (memory != nullptr) a->unmap(memory, response.memory.bytes);
        a->execute_object(hw::CommandOpcode::kDestroyCq, response.cq);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    auto *doorbell = reinterpret_cast<hw::CqDoorbell *>(static_cast<std::byte *>(memory) +
                                                        response.layout.doorbell_offset);
    auto *cq =
        new Cq(a, response.cq, cb, ctx, memory, response.memory.bytes, *ring, doorbell, depth);
    {
        std::lock_guard lock(a->route_mutex);
        a->cqs[cq->number()] = cq;
    }
    log().debug("{}: created, depth {} ({} entries)", cq->name(), depth, ring->entries());
    *out = cq;
    return STATUS_SUCCESS;
}

void Cq::on_close() {
    adapter()->unroute(adapter()->cqs, number_, this);
}

void Cq::on_final() {
    adapter()->execute_object(hw::CommandOpcode::kDestroyCq, number_);
    adapter()->unmap(memory_, memory_bytes_);
}

void Cq::bind_qp(uint32_t qp_number, Qp *qp) {
    std::lock_guard lock(poll_mutex_);
    qps_[qp_number] = qp;
}

void Cq::unbind_qp(uint32_t qp_number) {
    std::lock_guard lock(poll_mutex_);
    qps_.erase(qp_number);
}

void Cq::arm(ULONG type) {
    if (type > NDK_CQ_NOTIFY_SOLICITED) {
        log().error("{}: NdkArmCq with unknown type {}", name(), type);
        return;
    }
    if (adapter()->removed()) {
        // No device will ever satisfy it: the removal is the catastrophic CQ error every
        // arm type includes, so it fires at once (notify_removed, on the event thread).
        const int previous = armed_.exchange(static_cast<int>(type), std::memory_order_acq_rel);
        if (previous != -1) return;  // a notification for the earlier arm is on its way
        hold();
        adapter()->defer([this] {
            notify_removed();
            release();
        });
        return;
    }
    // The consumer is about to wait for a notification, not poll: the network link's
    // own thread must receive from now on (DeviceClient::stop_polling_network).
    adapter()->stop_polling_network();
    {
        // The doorbell record moves on resize: store into the current one.
        std::lock_guard lock(poll_mutex_);
        if (broken_) return;
        // Re-arming before the previous arm fired merges (ndkpi-api.md 7.3):
        // ANY wins, then SOLICITED, then ERRORS.
        int merged = static_cast<int>(type);
        const int previous = armed_.load(std::memory_order_acquire);
        if (previous == NDK_CQ_NOTIFY_ANY || merged == NDK_CQ_NOTIFY_ANY)
            merged = NDK_CQ_NOTIFY_ANY;
        else if (previous == NDK_CQ_NOTIFY_SOLICITED || merged == NDK_CQ_NOTIFY_SOLICITED)
            merged = NDK_CQ_NOTIFY_SOLICITED;
        armed_.store(merged, std::memory_order_release);
        // CQEs a poll held back (not due yet by the consumer's clock) were written
        // before the last notification: the device must count them as new arrivals or
        // the consumer would never hear of them.
        const uint32_t pending = held_back_ ? hw::kArmPendingAreNew : 0;
        std::atomic_ref(doorbell_->arm_type.value)
            .store(static_cast<uint32_t>(merged) | pending, std::memory_order_relaxed);
        std::atomic_ref(doorbell_->arm_sequence.value)
            .store(arm_sequence_.fetch_add(1, std::memory_order_relaxed) + 1,
                   std::memory_order_release);
    }
    // Outside the lock: in embedded mode ringing runs the device inline. A resize that
    // slips in before the ring has already taken this arm from the old record.
    adapter()->ring(Adapter::Bell::kArm, number_);
}

void Cq::notify(NTSTATUS status) {
    armed_.store(-1, std::memory_order_release);
    if (closing()) return;
    if (trace::on())
        trace::callback_enter(adapter()->if_index(), number_, status, adapter()->clock().now());
    callback_(callback_context_, status);
    if (trace::on()) trace::callback_exit(adapter()->if_index(), number_, adapter()->clock().now());
}

void Cq::notify_removed() {
    // exchange: an arm racing with the removal is notified once, not twice.
    if (armed_.exchange(-1, std::memory_order_acq_rel) == -1 || closing()) return;
    if (trace::on())
        trace::callback_enter(adapter()->if_index(), number_, STATUS_INTERNAL_ERROR,
                              adapter()->clock().now());
    callback_(callback_context_, STATUS_INTERNAL_ERROR);
    if (trace::on()) trace::callback_exit(adapter()->if_index(), number_, adapter()->clock().now());
}

template <class Result>
ULONG Cq::flush_removed(Result *results, ULONG n, uint64_t *times) {
    ULONG got = 0;
    for (const auto &[number, qp] : qps_) {
        while (got < n) {
            void *request_context = nullptr;
            NDK_OPERATION_TYPE type;
            hw::WqeOpcode op;
            if (qp->initiator_cq() == this && qp->retire_oldest_send(&request_context, &op)) {
                type = operation_type(op);
            } else if (qp->receive_cq() == this && qp->retire_oldest_receive(&request_context)) {
                type = NdkOperationTypeReceive;
            } else {
                break;
            }
            if (times != nullptr) times[got] = adapter()->clock().now();
            Result &r = results[got++];
            r.Status = STATUS_CANCELLED;
            r.BytesTransferred = 0;
            r.QPContext = qp->context();
            r.RequestContext = request_context;
            if constexpr (std::is_same_v<Result, NDK_RESULT_EX>) {
                r.Type = type;
                r.ProviderErrorCode = static_cast<ULONG>(STATUS_DEVICE_REMOVED);
                r.TypeSpecificCompletionOutput = 0;
            }
        }
    }
    return got;
}

template <class Result>
ULONG Cq::poll(Result *results, ULONG n, uint64_t *times) {
    sim::yield("NdkGetCqResults");  // an NDK call: a control transfer point (sim.hpp)
    adapter()->clock().polling(this);
    // Fast path: the last poll held back the CQE at the ring's head, and it is still not
    // due. Only a poll takes CQEs, so it is still at the head; this is what poll_ring()
    // would find, and HostClock::poll moves the consumer's clock the same. Not in
    // simulated time, where a poll that finds nothing waits (below).
    if (const uint64_t held = held_until_.load(std::memory_order_acquire);
        held != 0 && !sim::attached()) {
        HostClock &clock = adapter()->clock();
        if (!clock.reached(held)) return 0;
        // HostClock::poll changes nothing but `empty` when it says yes, so poll_ring()
        // asks again with the same count, gets the same yes, and takes the CQE.
        uint32_t empty = empty_polls_.load(std::memory_order_relaxed);
        if (!clock.poll(held, true, empty, this)) {
            empty_polls_.store(empty, std::memory_order_relaxed);
            return 0;
        }
    }
    uint64_t held_until = 0;
    ULONG got = poll_ring(results, n, times, held_until);
    // Nothing yet, and receives posted that no ring covered while a QP of this adapter is
    // in error: the device sees them now (it flushes those of a QP in error; Adapter::ring,
    // hw::ContextControlPage::qps_in_error), and this poll looks again. With every QP
    // healthy the ring would only wake the device for nothing.
    if (got == 0 && held_until == 0 && adapter()->some_qp_in_error() &&
        adapter()->ring_unrung_receives())
        got = poll_ring(results, n, times, held_until);
    // Nothing yet: receive what the network brought on this thread, then look again
    // (DeviceClient::poll_network; embedded over SOFTNDK_FABRIC=udp, the completion's
    // packet is handled here, without waking the link's thread). Not in simulated time,
    // where the link is not simulated (docs/simulation.md) and a poll lets time pass.
    // Nor on an armed CQ: its consumer is about to sleep on the notification (the poll
    // after an arm that closes the race), and the link's thread must stay in charge.
    if (got == 0 && held_until == 0 && !sim::attached() &&
        armed_.load(std::memory_order_acquire) == -1 && adapter()->poll_network())
        got = poll_ring(results, n, times, held_until);
    if (got == 0 && sim::attached()) {
        // Simulated time: a poll that finds nothing costs the host kPollNs, and one that
        // finds a CQE not due yet waits for it; so a consumer polling in a loop lets
        // simulated time pass, and sees each completion at its modeled time.
        sim::sleep_until(held_until != 0 ? held_until : sim::now_ns() + HostClock::kPollNs,
                         "NdkGetCqResults (nothing due)");
    }
    return got;
}

template <class Result>
ULONG Cq::poll_ring(Result *results, ULONG n, uint64_t *times, uint64_t &held_until) {
    std::lock_guard lock(poll_mutex_);
    if (broken_) return 0;
    HostClock &clock = adapter()->clock();
    ULONG got = 0;
    bool took = false;
    hw::Cqe cqe;
    // Paced mode: a CQE is not returned before its completion time. Functional mode: see
    // HostClock::poll (model_time.hpp).
    held_back_ = false;
    uint32_t empty = empty_polls_.load(std::memory_order_relaxed);
    while (got < n && ring_.peek(cqe)) {
        if (!clock.reached(cqe.completion_time_ns) ||
            !clock.poll(cqe.completion_time_ns, got == 0, empty, this)) {
            held_back_ = true;
            held_until = cqe.completion_time_ns;
            break;
        }
        ring_.take(cqe);
        took = true;
        clock.consume(cqe.completion_time_ns);
        const auto opcode = static_cast<hw::CqeOpcode>(cqe.op_own >> 4);
        const auto qp_it = qps_.find(cqe.qp_number);
        if (qp_it == qps_.end()) {
            log().debug("{}: CQE for unknown qp#{} dropped", name(), cqe.qp_number);
            continue;
        }
        Qp *qp = qp_it->second;
        void *request_context = nullptr;
        NDK_OPERATION_TYPE type;
        if (opcode == hw::CqeOpcode::kRequester || opcode == hw::CqeOpcode::kRequesterError) {
            hw::WqeOpcode op;
            if (!qp->retire_send(cqe.wqe_counter, &request_context, &op)) continue;
            type = operation_type(op);
        } else if (opcode == hw::CqeOpcode::kResponderSend ||
                   opcode == hw::CqeOpcode::kResponderSendInvalidate ||
                   opcode == hw::CqeOpcode::kResponderError) {
            if ((cqe.flags & hw::kCqeSrq) != 0) {
                // The slot is the SRQ's; whichever QP consumed it reports it here.
                Srq *srq = qp->srq();
                if (srq == nullptr || !srq->queue().retire_any(cqe.wqe_counter, &request_context)) {
                    log().warn("{}: SRQ CQE for slot {} of qp#{} matches no receive", name(),
                               cqe.wqe_counter, cqe.qp_number);
                    continue;
                }
            } else if (!qp->retire_receive(cqe.wqe_counter, &request_context)) {
                continue;
            }
            type = opcode == hw::CqeOpcode::kResponderSendInvalidate
                       ? NdkOperationTypeReceiveAndInvalidate
                       : NdkOperationTypeReceive;
        } else {
            log().warn("{}: CQE with opcode {:#x} dropped", name(), cqe.op_own >> 4);
            continue;
        }
        if (times != nullptr) times[got] = cqe.completion_time_ns;
        Result &r = results[got++];
        r.Status = syndrome_status(cqe.syndrome);
        r.BytesTransferred = cqe.byte_count;
        r.QPContext = qp->context();
        r.RequestContext = request_context;
        if constexpr (std::is_same_v<Result, NDK_RESULT_EX>) {
            r.Type = type;
            r.ProviderErrorCode = cqe.syndrome == hw::Syndrome::kSuccess ? 0
                                  : cqe.vendor_syndrome != 0             ? cqe.vendor_syndrome
                                                             : static_cast<ULONG>(cqe.syndrome);
            r.TypeSpecificCompletionOutput =
                type == NdkOperationTypeReceiveAndInvalidate ? cqe.invalidated_token : 0;
        }
        if (cqe.syndrome != hw::Syndrome::kSuccess)
            log().debug("{}: qp#{} completion {:#x} syndrome {:#x} vendor {:#x}", name(),
                        cqe.qp_number, static_cast<uint32_t>(r.Status),
                        static_cast<unsigned>(cqe.syndrome), cqe.vendor_syndrome);
    }
    empty_polls_.store(empty, std::memory_order_relaxed);
    // The head's CQE is held back only if it was the first looked at (a later one waits
    // behind completions this poll returned, and the next poll may take it at once).
    held_until_.store(got == 0 ? held_until : 0, std::memory_order_release);
    if (took) ring_.publish_consumer();
    // The device wrote its last CQE: what it left outstanding completes here, after
    // everything it did complete (a CQE not due yet keeps its place before them).
    if (got < n && !held_back_ && adapter()->removed())
        got += flush_removed(results + got, n - got, times != nullptr ? times + got : nullptr);
    return got;
}

NTSTATUS Cq::resize(ULONG depth) {
    // Consumers must not call it unless the adapter advertises the flag (ndkpi-api.md).
    if ((adapter()->info().AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED) == 0)
        return STATUS_NOT_SUPPORTED;
    if (depth == 0 || depth > adapter()->info().MaxCqDepth) return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(poll_mutex_);
    if (broken_) return STATUS_INTERNAL_ERROR;
    // The device carries CQEs over from this count on; poll() publishes after each
    // batch, so this only makes the contract explicit.
    ring_.publish_consumer();
    hw::CreateCqRequest request{};
    request.depth = depth;
    request.cq = number_;
    hw::CreateCqResponse response{};
    const NTSTATUS status = adapter()->execute(hw::CommandOpcode::kResizeCq, request, response);
    if (!NT_SUCCESS(status)) {
        // BUFFER_OVERFLOW: more CQEs queued than `depth` holds; the CQ is unchanged.
        log().debug("{}: resize to {} refused: {:#x}", name(), depth,
                    static_cast<uint32_t>(status));
        return status;
    }
    void *memory = adapter()->map(response.memory);
    std::optional<CqConsumer> ring;
    if (memory != nullptr) ring = CqConsumer::attach(memory, response.layout, ring_.consumer());
    if (!ring || response.layout.doorbell_offset + sizeof(hw::CqDoorbell) > response.layout.bytes) {
        // The device already writes into the new ring and the old one is gone: this CQ
        // cannot deliver completions any more.
        log().error("{}: resize: bad queue layout; the CQ is unusable", name());
        if (memory != nullptr) adapter()->unmap(memory, response.memory.bytes);
        broken_ = true;
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    adapter()->unmap(memory_, memory_bytes_);
    memory_ = memory;
    memory_bytes_ = response.memory.bytes;
    ring_ = *ring;
    held_until_.store(0, std::memory_order_release);  // the next poll looks at the new ring
    doorbell_ = reinterpret_cast<hw::CqDoorbell *>(static_cast<std::byte *>(memory) +
                                                   response.layout.doorbell_offset);
    depth_.store(depth, std::memory_order_relaxed);
    log().debug("{}: resized to depth {} ({} entries)", name(), depth, ring_.entries());
    return STATUS_SUCCESS;
}

// NDK (ndkpi-api.md NdkControlCqInterruptModeration): interval 0 = off; interval
// MAXULONG = count alone; count MAXULONG or above the depth = interval alone; count 0
// or 1 = off; MAXULONG together with a count that cannot trigger = PARAMETER_MIX.
// The device takes count 0 = no count trigger, interval 0 = no timer, 0/0 = off.
NTSTATUS Cq::moderate(ULONG interval_us, ULONG count) {
    if ((adapter()->info().AdapterFlags & NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED) == 0)
        return STATUS_NOT_SUPPORTED;  // mandatory answer without the flag
    const bool count_useless = count == MAXULONG || count > depth_.load(std::memory_order_relaxed);
    if (interval_us == MAXULONG && count_useless) return STATUS_INVALID_PARAMETER_MIX;
    hw::ModerateCqRequest request{};
    request.cq = number_;
    if (interval_us != 0 && count > 1) {
        request.interval_us = interval_us == MAXULONG ? 0 : interval_us;
        request.count = count_useless ? 0 : count;
    }
    hw::ObjectResponse response{};
    const NTSTATUS status = adapter()->execute(hw::CommandOpcode::kModerateCq, request, response);
    // Never PENDING; a device failure is a resource problem as far as NDK is concerned.
    return NT_SUCCESS(status) ? STATUS_SUCCESS : STATUS_INSUFFICIENT_RESOURCES;
}

namespace {

NTSTATUS close_cq(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    Cq *cq = from_header<Cq>(h);
    if (cq == nullptr) return STATUS_INVALID_PARAMETER;
    return cq->close(cb, ctx);
}

void arm_cq(NDK_CQ *pCq, ULONG Type) {
    Cq *cq = from_ndk<Cq>(pCq);
    if (cq == nullptr) {
        log().error("NdkArmCq: not a CQ");
        return;
    }
    cq->arm(Type);
}

// Synchronous: SUCCESS or a failure, never PENDING, so RequestCompletion is not
// called (ndkpi-api.md 7.1).
NTSTATUS resize_cq(NDK_CQ *pCq, ULONG CqDepth, NDK_FN_REQUEST_COMPLETION, PVOID) {
    Cq *cq = from_ndk<Cq>(pCq);
    if (cq == nullptr) return STATUS_INVALID_PARAMETER;
    return cq->resize(CqDepth);
}

NTSTATUS control_cq_interrupt_moderation(NDK_CQ *pCq, ULONG ModerationInterval,
                                         ULONG ModerationCount) {
    Cq *cq = from_ndk<Cq>(pCq);
    if (cq == nullptr) return STATUS_INVALID_PARAMETER;
    return cq->moderate(ModerationInterval, ModerationCount);
}

template <class Result>
ULONG get_results(NDK_CQ *pCq, Result *results, ULONG n, ULONG64 *times = nullptr) {
    Cq *cq = from_ndk<Cq>(pCq);
    if (cq == nullptr || (results == nullptr && n != 0)) {
        log().error("NdkGetCqResults: bad arguments");
        return 0;
    }
    return cq->poll(results, n, times);
}

ULONG get_cq_results(NDK_CQ *pCq, NDK_RESULT Results[], ULONG n) {
    return get_results(pCq, Results, n);
}

ULONG get_cq_results_ex(NDK_CQ *pCq, NDK_RESULT_EX Results[], ULONG n) {
    return get_results(pCq, Results, n);
}

// The model-time extension (softndk_ext.h).
ULONG get_cq_results_with_time(NDK_CQ *pCq, NDK_RESULT Results[], ULONG64 Times[], ULONG n) {
    if (Times == nullptr && n != 0) return 0;
    return get_results(pCq, Results, n, Times);
}

ULONG get_cq_results_ex_with_time(NDK_CQ *pCq, NDK_RESULT_EX Results[], ULONG64 Times[], ULONG n) {
    if (Times == nullptr && n != 0) return 0;
    return get_results(pCq, Results, n, Times);
}

ULONG64 get_model_time(NDK_CQ *pCq) {
    Cq *cq = from_ndk<Cq>(pCq);
    return cq == nullptr ? 0 : cq->adapter()->clock().now();
}

ULONG get_time_mode(NDK_CQ *pCq) {
    Cq *cq = from_ndk<Cq>(pCq);
    return cq == nullptr ? 0 : static_cast<ULONG>(cq->adapter()->clock().mode());
}

const SOFTNDK_MODEL_TIME_DISPATCH kModelTimeDispatch = {
    .SoftNdkGetCqResultsWithTime = get_cq_results_with_time,
    .SoftNdkGetCqResultsExWithTime = get_cq_results_ex_with_time,
    .SoftNdkGetModelTime = get_model_time,
    .SoftNdkGetTimeMode = get_time_mode,
};

// The CQ offers the model-time extension (softndk_ext.h) at version 1.0.
NTSTATUS cq_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                            NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Cq>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    static const ExtensionOffer kModelTime{
        SOFTNDK_MODEL_TIME_EXTENSION_GUID_INIT, SOFTNDK_MODEL_TIME_EXTENSION_VERSION_MAJOR,
        SOFTNDK_MODEL_TIME_EXTENSION_VERSION_MINOR, &kModelTimeDispatch};
    return offer_extension(kModelTime, h, id, v, out);
}

}  // namespace

const NDK_CQ_DISPATCH kCqDispatch = {
    .NdkCloseCq = close_cq,
    .NdkQueryExtension = cq_query_extension,
    .NdkResizeCq = resize_cq,
    .NdkArmCq = arm_cq,
    .NdkGetCqResults = get_cq_results,
    .NdkControlCqInterruptModeration = control_cq_interrupt_moderation,
    .NdkGetCqResultsEx = get_cq_results_ex,
};

}  // namespace softndk::provider
