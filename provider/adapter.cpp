#include <unistd.h>

#include <algorithm>

#include <cstring>

#include "provider.hpp"

namespace softndk::provider {

std::optional<NDK_VERSION> negotiate_version(NDK_VERSION requested, NDK_VERSION device) {
    if (requested.Major > device.Major) return std::nullopt;
    for (const VersionSupport &v : kProviderVersions) {
        if (v.major != requested.Major) continue;
        uint16_t highest = v.max_minor;
        if (requested.Major == device.Major) highest = std::min(highest, device.Minor);
        if (requested.Minor > highest) return std::nullopt;
        return NDK_VERSION{requested.Major, highest};
    }
    return std::nullopt;
}

Adapter::Adapter() : Object(this, "adapter") {}

Adapter::~Adapter() {
    // First: no removal callback may run into a half-destroyed adapter.
    if (client_) client_->watch_removal({});
    if (event_thread_.joinable()) {
        stop_.store(true, std::memory_order_release);
        wake_event_thread();
        event_thread_.join();
    }
    if (client_ && context_id_ != 0) execute_object(hw::CommandOpcode::kDetach, context_id_);
}

NTSTATUS Adapter::open(NDK_VERSION requested, uint32_t if_index, Adapter **out) {
    std::unique_ptr<Adapter> a(new Adapter());
    std::string error;
    a->client_ = open_device_client(if_index, error);
    if (!a->client_) {
        log().warn("adapter: no device for interface index {}: {}", if_index, error);
        return STATUS_NOT_FOUND;
    }
    hw::AttachRequest request{};
    request.abi_version = hw::kAbiVersion;
    request.if_index = if_index;
    a->if_index_ = if_index;
    request.ndk_major = requested.Major;
    request.ndk_minor = requested.Minor;
    request.process_id = static_cast<uint32_t>(::getpid());
    hw::AttachResponse response{};
    NTSTATUS status = a->execute(hw::CommandOpcode::kAttach, request, response);
    if (!NT_SUCCESS(status)) return status;
    a->context_id_ = response.context_id;
    a->limits_ = response.limits;
    a->clock_ =
        HostClock::of_interface(if_index, static_cast<hw::TimeMode>(response.limits.time_mode));
    if (sim::enabled() &&
        static_cast<hw::TimeMode>(response.limits.time_mode) != hw::TimeMode::kSimulated) {
        // The scheduler runs this process's threads; a device elsewhere (the daemon)
        // would run on its own clock and break both determinism and time.
        log().error(
            "{}: SOFTNDK_TIME=simulated needs the embedded device (this one runs in "
            "time mode {}: unset SOFTNDK_DEVICE or the daemon's socket)",
            a->name(), response.limits.time_mode);
        return STATUS_NOT_SUPPORTED;
    }
    a->rename(fmt::format("adapter#{}", response.context_id));
    if (response.abi_version != hw::kAbiVersion) {
        log().error("{}: device ABI {} != provider ABI {}", a->name(), response.abi_version,
                    hw::kAbiVersion);
        return STATUS_NDIS_ADAPTER_NOT_READY;
    }
    a->control_ = static_cast<hw::ContextControlPage *>(a->map(response.control_page));
    void *eq = a->map(response.event_queue);
    if (eq != nullptr) a->eq_ = EqConsumer::attach(eq, response.event_queue_layout);
    if (a->control_ == nullptr || !a->eq_ || a->control_->magic != hw::kControlPageMagic) {
        log().error("{}: cannot map the control page or event queue", a->name());
        return STATUS_NDIS_ADAPTER_NOT_READY;
    }
    const auto version = negotiate_version(
        requested, NDK_VERSION{a->limits_.ndk_version_major, a->limits_.ndk_version_minor});
    if (!version) {
        log().info("{}: NDK {}.{} requested, device offers up to {}.{}: bad version", a->name(),
                   requested.Major, requested.Minor, a->limits_.ndk_version_major,
                   a->limits_.ndk_version_minor);
        return STATUS_NDIS_BAD_VERSION;
    }
    a->version_ = *version;

    const hw::DeviceLimits &l = a->limits_;
    NDK_ADAPTER_INFO &i = a->info_;
    i.Version = a->version_;
    i.VendorId = l.vendor_id;
    i.DeviceId = l.device_id;
    i.MaxRegistrationSize = l.max_registration_bytes;
    i.MaxWindowSize = l.max_window_bytes;
    i.FRMRPageCount = l.max_fast_register_pages;
    i.MaxInitiatorRequestSge = l.max_send_sge;
    i.MaxReceiveRequestSge = l.max_recv_sge;
    i.MaxReadRequestSge = l.max_read_sge;
    i.MaxTransferLength = l.max_transfer_bytes;
    i.MaxInlineDataSize = l.max_inline_bytes;
    i.MaxInboundReadLimit = l.max_inbound_reads;
    i.MaxOutboundReadLimit = l.max_outbound_reads;
    i.MaxReceiveQueueDepth = l.max_recv_queue_depth;
    i.MaxInitiatorQueueDepth = l.max_send_queue_depth;
    i.MaxSrqDepth = l.max_srq_depth;
    i.MaxCqDepth = l.max_cq_depth;
    i.LargeRequestThreshold = l.large_request_threshold;
    i.MaxCallerData = std::min(l.max_caller_data, hw::kMaxPrivateData);
    i.MaxCalleeData = std::min(l.max_callee_data, hw::kMaxPrivateData);
    // Every flag's slot is built (NdkResizeCq, NdkControlCqInterruptModeration): the
    // device's honest flags pass through, and those slots follow them.
    i.AdapterFlags = l.adapter_flags;
    i.RdmaTechnology = static_cast<NDK_RDMA_TECHNOLOGY>(l.rdma_technology);

    publish(*static_cast<Embedded<NDK_ADAPTER> *>(a.get()), NdkObjectTypeAdapter, a->version_,
            &kAdapterDispatch);
    Adapter *raw = a.get();
    a->event_thread_ = sim::Thread(a->name() + " events", [raw] { raw->event_loop(); });
    a->client_->watch_removal([raw] {
        raw->removed_.store(true, std::memory_order_release);
        raw->removal_pending_.store(true, std::memory_order_release);
        raw->wake_event_thread();
    });
    log().info("{}: open, NDK {}.{} (interface {})", a->name(), a->version_.Major,
               a->version_.Minor, if_index);
    *out = a.release();
    return STATUS_SUCCESS;
}

void Adapter::close_blocking(Adapter *a) {
    log().info("{}: closing", a->name());
    a->release();  // the consumer's hold
    {
        std::unique_lock lock(a->drained_mutex_);
        while (!a->drained_) {
            if (!a->drained_cv_.wait_for(lock, std::chrono::seconds(5),
                                         [a] { return a->drained_; }))
                log().warn("{}: close waits for objects that are still open", a->name());
        }
    }
    delete a;
}

void Adapter::on_last_release() {
    std::lock_guard lock(drained_mutex_);
    drained_ = true;
    drained_cv_.notify_all();
}

NTSTATUS Adapter::execute_object(hw::CommandOpcode op, uint32_t object, uint32_t reserved,
                                 hw::ObjectResponse *out) {
    hw::ObjectRequest request{};
    request.object = object;
    request.reserved = reserved;
    hw::ObjectResponse response{};
    const NTSTATUS status = execute(op, request, response);
    if (out != nullptr) *out = response;
    return status;
}

void Adapter::ring(Bell bell, uint32_t queue) {
    if (queue >= hw::kDoorbellBitmapWords * 64) {
        log().error("{}: queue number {} outside the doorbell bitmap", name(), queue);
        return;
    }
    const hw::DoorbellKind kind = bell == Bell::kSend      ? hw::DoorbellKind::kSendQueue
                                  : bell == Bell::kReceive ? hw::DoorbellKind::kReceiveQueue
                                                           : hw::DoorbellKind::kCompletionQueue;
    sim::yield("NDK post");  // an NDK call: a control transfer point in simulated time
    hw::set_doorbell(control_->doorbells, kind, queue);
    if (bell == Bell::kReceive) {
        // Release: a ring that takes the flag (acquire) then finds the bit set above.
        receives_unrung_.store(true, std::memory_order_release);
        return;
    }
    // This ring covers the receive bits set so far. A bit set after the flag is taken
    // sets it again, for the next ring or empty poll.
    take_unrung_receives();
    client_->ring();
}

bool Adapter::ring_unrung_receives() {
    if (!take_unrung_receives()) return false;
    client_->ring();
    return true;
}

// ---------------------------------------------------------------------------
// Slots
// ---------------------------------------------------------------------------
namespace {

Adapter *adapter_of(NDK_ADAPTER *p) {
    return from_ndk<Adapter>(p);
}

NTSTATUS query_adapter_info(NDK_ADAPTER *pAdapter, NDK_ADAPTER_INFO *pInfo, ULONG *pBufferSize) {
    Adapter *a = adapter_of(pAdapter);
    if (a == nullptr || pBufferSize == nullptr) return STATUS_INVALID_PARAMETER;
    if (*pBufferSize < sizeof(NDK_ADAPTER_INFO)) {
        *pBufferSize = sizeof(NDK_ADAPTER_INFO);
        return STATUS_BUFFER_TOO_SMALL;
    }
    if (pInfo == nullptr) return STATUS_INVALID_PARAMETER;
    *pInfo = a->info();
    *pBufferSize = sizeof(NDK_ADAPTER_INFO);
    return STATUS_SUCCESS;
}

NTSTATUS adapter_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                                 NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Adapter>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    return query_extension(h, id, v, out);
}

NTSTATUS create_cq_slot(NDK_ADAPTER *pAdapter, ULONG CqDepth,
                        NDK_FN_CQ_NOTIFICATION_CALLBACK CqNotification, PVOID CqNotificationContext,
                        GROUP_AFFINITY *, NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID,
                        NDK_CQ **ppNdkCq) {
    Adapter *a = adapter_of(pAdapter);
    if (a == nullptr || CqNotification == nullptr || CreateCompletion == nullptr ||
        ppNdkCq == nullptr)
        return STATUS_INVALID_PARAMETER;
    if (CqDepth == 0 || CqDepth > a->info().MaxCqDepth) return STATUS_INVALID_PARAMETER;
    Cq *cq = nullptr;
    const NTSTATUS status = create_cq(a, CqDepth, CqNotification, CqNotificationContext, &cq);
    if (NT_SUCCESS(status)) *ppNdkCq = &cq->ndk;
    return status;
}

NTSTATUS create_pd_slot(NDK_ADAPTER *pAdapter, NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID,
                        NDK_PD **ppNdkPd) {
    Adapter *a = adapter_of(pAdapter);
    if (a == nullptr || CreateCompletion == nullptr || ppNdkPd == nullptr)
        return STATUS_INVALID_PARAMETER;
    Pd *pd = nullptr;
    const NTSTATUS status = create_pd(a, &pd);
    if (NT_SUCCESS(status)) *ppNdkPd = &pd->ndk;
    return status;
}

NTSTATUS create_connector_slot(NDK_ADAPTER *pAdapter, NDK_FN_CREATE_COMPLETION CreateCompletion,
                               PVOID, NDK_CONNECTOR **ppNdkConnector) {
    Adapter *a = adapter_of(pAdapter);
    if (a == nullptr || CreateCompletion == nullptr || ppNdkConnector == nullptr)
        return STATUS_INVALID_PARAMETER;
    auto *c = new Connector(a);
    *ppNdkConnector = &c->ndk;
    return STATUS_SUCCESS;
}

NTSTATUS create_shared_endpoint_slot(NDK_ADAPTER *pAdapter, PSOCKADDR pAddress, ULONG AddressLength,
                                     NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID,
                                     NDK_SHARED_ENDPOINT **ppNdkSharedEndpoint) {
    Adapter *a = adapter_of(pAdapter);
    if (a == nullptr || CreateCompletion == nullptr || ppNdkSharedEndpoint == nullptr)
        return STATUS_INVALID_PARAMETER;
    const NTSTATUS valid = check_address(pAddress, AddressLength);
    if (!NT_SUCCESS(valid)) return valid;
    SharedEndpoint *se = nullptr;
    const NTSTATUS status = create_shared_endpoint(a, pAddress, &se);
    if (NT_SUCCESS(status)) *ppNdkSharedEndpoint = &se->ndk;
    return status;
}

NTSTATUS create_listener_slot(NDK_ADAPTER *pAdapter, NDK_FN_CONNECT_EVENT_CALLBACK ConnectEvent,
                              PVOID ConnectEventContext, NDK_FN_CREATE_COMPLETION CreateCompletion,
                              PVOID, NDK_LISTENER **ppNdkListener) {
    Adapter *a = adapter_of(pAdapter);
    if (a == nullptr || ConnectEvent == nullptr || CreateCompletion == nullptr ||
        ppNdkListener == nullptr)
        return STATUS_INVALID_PARAMETER;
    auto *l = new Listener(a, ConnectEvent, ConnectEventContext);
    *ppNdkListener = &l->ndk;
    return STATUS_SUCCESS;
}

}  // namespace

NTSTATUS query_extension(NDK_OBJECT_HEADER *object, GUID *id, NDK_VERSION,
                         NDK_EXTENSION_INTERFACE *out) {
    if (object == nullptr || id == nullptr || out == nullptr) return STATUS_INVALID_PARAMETER;
    return STATUS_NOT_SUPPORTED;
}

NTSTATUS offer_extension(const ExtensionOffer &offer, NDK_OBJECT_HEADER *object, GUID *id,
                         NDK_VERSION version, NDK_EXTENSION_INTERFACE *out) {
    if (id != nullptr && out != nullptr && std::memcmp(id, &offer.id, sizeof(GUID)) == 0 &&
        version.Major == offer.major && version.Minor <= offer.minor) {
        out->Dispatch = offer.dispatch;
        return STATUS_SUCCESS;
    }
    return query_extension(object, id, version, out);
}

const NDK_ADAPTER_DISPATCH kAdapterDispatch = {
    .NdkQueryExtension = adapter_query_extension,
    .NdkQueryAdapterInfo = query_adapter_info,
    .NdkCreateCq = create_cq_slot,
    .NdkCreatePd = create_pd_slot,
    .NdkCreateSharedEndpoint = create_shared_endpoint_slot,
    .NdkCreateConnector = create_connector_slot,
    .NdkCreateListener = create_listener_slot,
    .NdkBuildLAM = build_lam,
    .NdkReleaseLAM = release_lam,
};

}  // namespace softndk::provider
