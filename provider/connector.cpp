// Connection establishment and teardown (ndkpi-api.md 7.6-7.8).
//
// Device protocol (hw_interface.hpp section 11, EQE types in section 6):
//   active:  kConnect -> connection id; later kConnectReply (status 0 = the
//            peer accepted; else CONNECTION_REFUSED etc.) completes NdkConnect.
//            kCompleteConnect: SUCCESS = connected now; STATUS_PENDING =
//            connected when kEstablished arrives.
//            (The device answers SUCCESS: the active side is established at once.)
//   passive: kConnectRequest (listener, data0 = connection id) -> connect
//            event. kAccept: SUCCESS = accepted; NdkAccept completes on
//            kEstablished (the initiator's CompleteConnect) or fails on
//            kConnectAborted.
//   both:    kDisconnect: accepted (DREQ sent); NdkDisconnect completes at
//            kDisconnectDone (IO_TIMEOUT if the DREP never came). kDisconnected = the peer
//            disconnected (the disconnect event, once). kCloseConnection when the connector closes
//            (implicit reject/disconnect).
#include <algorithm>
#include <cstring>

#include "provider.hpp"

namespace softndk::provider {

const char *Connector::to_string(State s) {
    static constexpr const char *kNames[] = {"idle",       "connecting",    "replied",
                                             "completing", "requested",     "accepting",
                                             "connected",  "disconnecting", "done"};
    return kNames[static_cast<int>(s)];
}

Connector::Connector(Adapter *a)
    : Object(a, fmt::format("{} connector#{}", a->name(), a->next_id())) {
    publish(*static_cast<Embedded<NDK_CONNECTOR> *>(this), kType, a->version(),
            &kConnectorDispatch);
    depend_on(a);
}

void Connector::start(Pending &slot, NDK_FN_REQUEST_COMPLETION cb, void *ctx) {
    hold();
    slot = Pending{cb, ctx};
}

void Connector::finish(Pending &slot, NTSTATUS status) {
    if (slot.callback == nullptr) return;
    const Pending p = slot;
    slot = Pending{};
    adapter()->defer([this, p, status] {
        p.callback(p.context, status);
        release();
    });
}

bool Connector::drop(Pending &slot) {
    if (slot.callback == nullptr) return false;
    slot = Pending{};
    release();  // never the last hold: the caller is inside a slot on this object
    return true;
}

void Connector::set_qp(Qp *qp) {
    if (qp_ != nullptr) return;
    qp_ = qp;
    depend_on(qp);  // QP -> connector: the QP's close pends until this closes
    qp->connector.store(this, std::memory_order_release);
}

NTSTATUS Connector::current_info() {
    if (info_state_ == InfoState::kNone) return STATUS_CONNECTION_INVALID;
    if (info_state_ == InfoState::kCurrent) return STATUS_SUCCESS;
    hw::ObjectRequest request{};
    request.object = connection_;
    hw::QueryConnectionResponse response{};
    const NTSTATUS status =
        adapter()->execute(hw::CommandOpcode::kQueryConnection, request, response);
    if (NT_SUCCESS(status)) {
        info_ = response.info;
        info_state_ = InfoState::kCurrent;
    }
    return status;
}

void Connector::info_changed() {
    info_state_ = InfoState::kStale;
}

void Connector::adopt_incoming(uint32_t connection, Listener *listener) {
    depend_on(listener);  // the listener's endpoint lives while we do (7.10)
    std::lock_guard route(adapter()->route_mutex);
    std::lock_guard lock(mutex_);
    connection_ = connection;
    state_ = State::kRequested;
    adapter()->connections[connection] = this;
    info_changed();
}

NTSTATUS Connector::connect(Qp *qp, SharedEndpoint *shared, const sockaddr *src,
                            const sockaddr *dst, ULONG ird, ULONG ord, const void *pdata,
                            ULONG pdata_len, NDK_FN_REQUEST_COMPLETION cb, void *ctx) {
    const ScopedHold alive(this);  // the completion may close us before we return
    const NDK_ADAPTER_INFO &info = adapter()->info();
    hw::ConnectRequest request{};
    request.qp = qp->number();
    request.inbound_read_limit = std::min(ird, info.MaxInboundReadLimit);
    request.outbound_read_limit = std::min(ord, info.MaxOutboundReadLimit);
    request.private_data_bytes = pdata_len;
    if (shared != nullptr) {
        request.shared_endpoint = shared->id();
        request.source = shared->bound();
    } else {
        request.source = to_wire(src);
    }
    request.destination = to_wire(dst);
    if (pdata_len != 0) std::memcpy(request.private_data, pdata, pdata_len);
    {
        std::lock_guard lock(mutex_);
        if (state_ != State::kIdle) return STATUS_INVALID_DEVICE_STATE;
        Connector *none = nullptr;
        if (qp_ == nullptr && !qp->connector.compare_exchange_strong(none, this))
            return STATUS_INVALID_DEVICE_STATE;  // the QP belongs to another connector
        set_qp(qp);
        // The shared endpoint's close pends until this connector is closed (7.10).
        if (shared != nullptr && shared_ == nullptr) {
            shared_ = shared;
            depend_on(shared);
        }
        state_ = State::kConnecting;
        start(connect_, cb, ctx);
    }
    hw::ObjectResponse response{};
    std::lock_guard route(adapter()->route_mutex);
    const NTSTATUS status = adapter()->execute(hw::CommandOpcode::kConnect, request, response);
    std::lock_guard lock(mutex_);
    if (!NT_SUCCESS(status)) {
        state_ = State::kIdle;
        drop(connect_);
        log().debug("{}: connect failed inline: {:#x}", name(), static_cast<uint32_t>(status));
        return status;
    }
    connection_ = response.object;
    adapter()->connections[connection_] = this;
    log().debug("{}: connecting as connection {}", name(), connection_);
    return STATUS_PENDING;
}

NTSTATUS Connector::complete_connect(DisconnectNotify disconnect, NDK_FN_REQUEST_COMPLETION cb,
                                     void *ctx) {
    const ScopedHold alive(this);  // the completion may close us before we return
    hw::ObjectRequest request{};
    {
        std::lock_guard lock(mutex_);
        if (state_ != State::kReplied) return STATUS_CONNECTION_INVALID;
        state_ = State::kCompleting;
        disconnect_event_ = disconnect;
        start(complete_, cb, ctx);
        request.object = connection_;
    }
    hw::ObjectResponse response{};
    const NTSTATUS status =
        adapter()->execute(hw::CommandOpcode::kCompleteConnect, request, response);
    std::lock_guard lock(mutex_);
    if (status == STATUS_PENDING || complete_.callback == nullptr) return STATUS_PENDING;
    drop(complete_);
    if (!NT_SUCCESS(status)) {
        state_ = State::kDone;
        return status;
    }
    state_ = State::kConnected;
    qp_->connected.store(true, std::memory_order_release);
    log().debug("{}: connected (active side)", name());
    return STATUS_SUCCESS;
}

NTSTATUS Connector::accept(Qp *qp, ULONG ird, ULONG ord, const void *pdata, ULONG pdata_len,
                           DisconnectNotify disconnect, NDK_FN_REQUEST_COMPLETION cb, void *ctx) {
    const ScopedHold alive(this);  // the completion may close us before we return
    const NDK_ADAPTER_INFO &info = adapter()->info();
    hw::AcceptRequest request{};
    request.qp = qp->number();
    request.inbound_read_limit = std::min(ird, info.MaxInboundReadLimit);
    request.outbound_read_limit = std::min(ord, info.MaxOutboundReadLimit);
    request.private_data_bytes = pdata_len;
    if (pdata_len != 0) std::memcpy(request.private_data, pdata, pdata_len);
    {
        std::lock_guard lock(mutex_);
        if (state_ == State::kDone) return STATUS_CONNECTION_ABORTED;
        if (state_ != State::kRequested) return STATUS_CONNECTION_INVALID;
        Connector *none = nullptr;
        if (qp_ == nullptr && !qp->connector.compare_exchange_strong(none, this))
            return STATUS_INVALID_DEVICE_STATE;
        set_qp(qp);
        state_ = State::kAccepting;
        disconnect_event_ = disconnect;
        start(accept_, cb, ctx);
        request.connection = connection_;
    }
    hw::ObjectResponse response{};
    const NTSTATUS status = adapter()->execute(hw::CommandOpcode::kAccept, request, response);
    std::lock_guard lock(mutex_);
    if (NT_SUCCESS(status) || accept_.callback == nullptr) return STATUS_PENDING;
    drop(accept_);
    state_ = State::kRequested;
    return status;
}

NTSTATUS Connector::reject(const void *pdata, ULONG pdata_len) {
    hw::AcceptRequest request{};
    request.private_data_bytes = pdata_len;
    if (pdata_len != 0) std::memcpy(request.private_data, pdata, pdata_len);
    {
        std::lock_guard lock(mutex_);
        if (state_ == State::kDone && connection_ != hw::kNoObject)
            return STATUS_CONNECTION_ABORTED;
        if (state_ != State::kRequested && state_ != State::kReplied)
            return STATUS_CONNECTION_INVALID;
        state_ = State::kDone;
        request.connection = connection_;
    }
    hw::ObjectResponse response{};
    return adapter()->execute(hw::CommandOpcode::kReject, request, response);
}

NTSTATUS Connector::disconnect(NDK_FN_REQUEST_COMPLETION cb, void *ctx) {
    const ScopedHold alive(this);  // the completion may close us before we return
    hw::ObjectRequest request{};
    {
        std::lock_guard lock(mutex_);
        if (adapter()->removed()) return STATUS_DEVICE_REMOVED;
        if (state_ != State::kConnected) return STATUS_CONNECTION_INVALID;
        state_ = State::kDisconnecting;
        qp_->connected.store(false, std::memory_order_release);
        start(disconnect_, cb, ctx);
        request.object = connection_;
    }
    hw::ObjectResponse response{};
    const NTSTATUS status = adapter()->execute(hw::CommandOpcode::kDisconnect, request, response);
    // Accepted: the handshake finishes with kDisconnectDone (on_event).
    std::lock_guard lock(mutex_);
    if (NT_SUCCESS(status) || disconnect_.callback == nullptr) return STATUS_PENDING;
    drop(disconnect_);
    state_ = State::kConnected;
    return status;
}

NTSTATUS Connector::connection_data(ULONG *ird, ULONG *ord, void *pdata, ULONG *pdata_len) {
    if (pdata_len == nullptr || (pdata == nullptr && *pdata_len != 0))
        return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(mutex_);
    if (const NTSTATUS status = current_info(); !NT_SUCCESS(status)) return status;
    // RDS: the provider's private-data buffer for this connection (7.8), not
    // the number of bytes the peer sent.
    const ULONG capacity =
        info_.private_data_capacity != 0 ? info_.private_data_capacity : info_.private_data_bytes;
    const ULONG rds = std::min<ULONG>(capacity, hw::kMaxPrivateData);
    if (ird != nullptr) *ird = info_.inbound_read_limit;
    if (ord != nullptr) *ord = info_.outbound_read_limit;
    if (pdata == nullptr) {
        *pdata_len = rds;
        return STATUS_SUCCESS;
    }
    std::memcpy(pdata, info_.private_data, std::min(*pdata_len, rds));
    const NTSTATUS status = *pdata_len >= rds ? STATUS_SUCCESS : STATUS_BUFFER_TOO_SMALL;
    *pdata_len = rds;
    return status;
}

NTSTATUS Connector::address(bool local, PSOCKADDR out, ULONG *length) {
    if (length == nullptr) return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(mutex_);
    if (const NTSTATUS status = current_info(); !NT_SUCCESS(status)) return status;
    return copy_address(local ? info_.local : info_.peer, out, length);
}

void Connector::on_event(const hw::Eqe &eqe) {
    DisconnectNotify disconnect_event;
    {
        std::lock_guard lock(mutex_);
        const auto type = static_cast<hw::EqeType>(eqe.type);
        log().debug("{}: event {:#x} status {:#x} in state {}", name(), eqe.type,
                    static_cast<uint32_t>(eqe.status), to_string(state_));
        switch (type) {
            case hw::EqeType::kConnectReply:
                if (state_ != State::kConnecting) break;
                if (NT_SUCCESS(eqe.status)) {
                    info_changed();
                    state_ = State::kReplied;
                    finish(connect_, STATUS_SUCCESS);
                } else {
                    // A Reject may carry private data (ndkpi-api.md 7.8): NdkGetConnectionData
                    // on the refused connector returns it, as NDSPI's does.
                    if (eqe.status == STATUS_CONNECTION_REFUSED) info_changed();
                    state_ = State::kDone;
                    finish(connect_, eqe.status);
                }
                break;
            case hw::EqeType::kEstablished:
                if (state_ == State::kAccepting) {
                    // The limits read before Accept were the peer's offer; now they are
                    // the negotiated ones.
                    info_changed();
                    state_ = State::kConnected;
                    qp_->connected.store(true, std::memory_order_release);
                    finish(accept_, STATUS_SUCCESS);
                } else if (state_ == State::kCompleting) {
                    state_ = State::kConnected;
                    qp_->connected.store(true, std::memory_order_release);
                    finish(complete_, STATUS_SUCCESS);
                }
                break;
            case hw::EqeType::kConnectAborted:
                if (state_ == State::kAccepting) finish(accept_, STATUS_CONNECTION_ABORTED);
                if (state_ == State::kCompleting) finish(complete_, STATUS_CONNECTION_ABORTED);
                if (state_ == State::kConnecting) finish(connect_, STATUS_CONNECTION_ABORTED);
                if (state_ != State::kConnected) state_ = State::kDone;
                break;
            case hw::EqeType::kDisconnectDone:
                if (state_ == State::kDisconnecting) {
                    // The device put the QP into ERROR and flushed it at kDisconnect, and
                    // flushes whatever is posted to it since at the doorbell: no kFlushQp.
                    state_ = State::kDone;
                    finish(disconnect_, NT_SUCCESS(eqe.status) ? STATUS_SUCCESS : eqe.status);
                }
                break;
            case hw::EqeType::kDisconnected:
                // The peer went away: tell the consumer once; no flush here (3.12).
                if (!disconnect_event_.empty() && !disconnect_event_fired_ && !closing()) {
                    disconnect_event_fired_ = true;
                    disconnect_event = disconnect_event_;
                }
                break;
            default:
                break;
        }
    }
    if (!disconnect_event.empty()) disconnect_event(kDisconnectReasonPeerRequest);
}

void Connector::device_removed() {
    DisconnectNotify disconnect_event;
    {
        std::lock_guard lock(mutex_);
        finish(connect_, STATUS_DEVICE_REMOVED);
        finish(accept_, STATUS_DEVICE_REMOVED);
        finish(complete_, STATUS_DEVICE_REMOVED);
        finish(disconnect_, STATUS_DEVICE_REMOVED);
        const bool was_connected = state_ == State::kConnected || state_ == State::kDisconnecting;
        if (was_connected && !disconnect_event_.empty() && !disconnect_event_fired_ && !closing()) {
            disconnect_event_fired_ = true;
            disconnect_event = disconnect_event_;
        }
        if (qp_ != nullptr) qp_->connected.store(false, std::memory_order_release);
        state_ = State::kDone;
    }
    if (!disconnect_event.empty()) disconnect_event(0);
}

void Connector::on_close() {
    uint32_t connection;
    Qp *qp;
    {
        std::lock_guard lock(mutex_);
        finish(connect_, STATUS_CANCELLED);
        finish(accept_, STATUS_CANCELLED);
        finish(complete_, STATUS_CANCELLED);
        finish(disconnect_, STATUS_CANCELLED);
        connection = connection_;
        qp = qp_;
        state_ = State::kDone;
    }
    // kCloseConnection disconnects a live connection, and the device then puts its QP
    // into ERROR and flushes it (cm.hpp): the QP needs no kFlushQp of its own.
    if (connection != hw::kNoObject) {
        adapter()->unroute(adapter()->connections, connection, this);
        adapter()->execute_object(hw::CommandOpcode::kCloseConnection, connection);
    }
    if (qp != nullptr) {
        qp->connected.store(false, std::memory_order_release);
        Connector *self = this;
        qp->connector.compare_exchange_strong(self, nullptr);
    }
}

void Connector::on_final() {}

// ---------------------------------------------------------------------------
// Slots
// ---------------------------------------------------------------------------
namespace {

NTSTATUS close_connector(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    Connector *c = from_header<Connector>(h);
    if (c == nullptr) return STATUS_INVALID_PARAMETER;
    return c->close(cb, ctx);
}

NTSTATUS connector_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                                   NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Connector>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    return query_extension(h, id, v, out);
}

NTSTATUS connect_slot(NDK_CONNECTOR *pConnector, NDK_QP *pQp, PSOCKADDR pSrc, ULONG SrcLength,
                      PSOCKADDR pDest, ULONG DestLength, ULONG Ird, ULONG Ord, PVOID pPrivateData,
                      ULONG PrivateDataLength, NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
    Connector *c = from_ndk<Connector>(pConnector);
    Qp *qp = from_ndk<Qp>(pQp);
    if (c == nullptr || qp == nullptr || cb == nullptr ||
        !c->adapter()->same_interface(qp->adapter()) ||
        (pPrivateData == nullptr && PrivateDataLength != 0) ||
        PrivateDataLength > c->adapter()->info().MaxCallerData)
        return STATUS_INVALID_PARAMETER;
    NTSTATUS status = check_address(pSrc, SrcLength);
    if (NT_SUCCESS(status)) status = check_address(pDest, DestLength);
    if (!NT_SUCCESS(status)) return status;
    if (pSrc->sa_family != pDest->sa_family) return STATUS_INVALID_ADDRESS;
    return c->connect(qp, nullptr, pSrc, pDest, Ird, Ord, pPrivateData, PrivateDataLength, cb, ctx);
}

NTSTATUS connect_with_shared_endpoint_slot(NDK_CONNECTOR *pConnector, NDK_QP *pQp,
                                           NDK_SHARED_ENDPOINT *pSharedEndpoint, PSOCKADDR pDest,
                                           ULONG DestLength, ULONG Ird, ULONG Ord,
                                           PVOID pPrivateData, ULONG PrivateDataLength,
                                           NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
    Connector *c = from_ndk<Connector>(pConnector);
    Qp *qp = from_ndk<Qp>(pQp);
    SharedEndpoint *se = from_ndk<SharedEndpoint>(pSharedEndpoint);
    if (c == nullptr || qp == nullptr || se == nullptr || cb == nullptr ||
        !c->adapter()->same_interface(qp->adapter()) ||
        !c->adapter()->same_interface(se->adapter()) ||
        (pPrivateData == nullptr && PrivateDataLength != 0) ||
        PrivateDataLength > c->adapter()->info().MaxCallerData)
        return STATUS_INVALID_PARAMETER;
    if (se->closing()) return STATUS_INVALID_DEVICE_STATE;
    const NTSTATUS status = check_address(pDest, DestLength);
    if (!NT_SUCCESS(status)) return status;
    return c->connect(qp, se, nullptr, pDest, Ird, Ord, pPrivateData, PrivateDataLength, cb, ctx);
}

NTSTATUS complete_connect_slot(NDK_CONNECTOR *pConnector,
                               NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
                               PVOID DisconnectEventContext, NDK_FN_REQUEST_COMPLETION cb,
                               PVOID ctx) {
    Connector *c = from_ndk<Connector>(pConnector);
    if (c == nullptr || cb == nullptr) return STATUS_INVALID_PARAMETER;
    return c->complete_connect(DisconnectNotify{DisconnectEvent, nullptr, DisconnectEventContext},
                               cb, ctx);
}

NTSTATUS complete_connect_ex_slot(NDK_CONNECTOR *pConnector,
                                  NDK_FN_DISCONNECT_EVENT_CALLBACK_EX DisconnectEvent,
                                  PVOID DisconnectEventContext, NDK_FN_REQUEST_COMPLETION cb,
                                  PVOID ctx) {
    Connector *c = from_ndk<Connector>(pConnector);
    if (c == nullptr || cb == nullptr) return STATUS_INVALID_PARAMETER;
    return c->complete_connect(DisconnectNotify{nullptr, DisconnectEvent, DisconnectEventContext},
                               cb, ctx);
}

NTSTATUS accept_common(NDK_CONNECTOR *pConnector, NDK_QP *pQp, ULONG Ird, ULONG Ord,
                       PVOID pPrivateData, ULONG PrivateDataLength, DisconnectNotify disconnect,
                       NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
    Connector *c = from_ndk<Connector>(pConnector);
    Qp *qp = from_ndk<Qp>(pQp);
    if (c == nullptr || qp == nullptr || cb == nullptr ||
        !c->adapter()->same_interface(qp->adapter()) ||
        (pPrivateData == nullptr && PrivateDataLength != 0) ||
        PrivateDataLength > c->adapter()->info().MaxCalleeData)
        return STATUS_INVALID_PARAMETER;
    return c->accept(qp, Ird, Ord, pPrivateData, PrivateDataLength, disconnect, cb, ctx);
}

NTSTATUS accept_slot(NDK_CONNECTOR *pConnector, NDK_QP *pQp, ULONG Ird, ULONG Ord,
                     PVOID pPrivateData, ULONG PrivateDataLength,
                     NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent, PVOID DisconnectEventContext,
                     NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
    return accept_common(pConnector, pQp, Ird, Ord, pPrivateData, PrivateDataLength,
                         DisconnectNotify{DisconnectEvent, nullptr, DisconnectEventContext}, cb,
                         ctx);
}

NTSTATUS accept_ex_slot(NDK_CONNECTOR *pConnector, NDK_QP *pQp, ULONG Ird, ULONG Ord,
                        PVOID pPrivateData, ULONG PrivateDataLength,
                        NDK_FN_DISCONNECT_EVENT_CALLBACK_EX DisconnectEvent,
                        PVOID DisconnectEventContext, NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
    return accept_common(pConnector, pQp, Ird, Ord, pPrivateData, PrivateDataLength,
                         DisconnectNotify{nullptr, DisconnectEvent, DisconnectEventContext}, cb,
                         ctx);
}

NTSTATUS reject_slot(NDK_CONNECTOR *pConnector, PVOID pPrivateData, ULONG PrivateDataLength) {
    Connector *c = from_ndk<Connector>(pConnector);
    if (c == nullptr || (pPrivateData == nullptr && PrivateDataLength != 0) ||
        PrivateDataLength > c->adapter()->info().MaxCalleeData)
        return STATUS_INVALID_PARAMETER;
    return c->reject(pPrivateData, PrivateDataLength);
}

NTSTATUS connection_data_slot(NDK_CONNECTOR *pConnector, ULONG *pInboundReadLimit,
                              ULONG *pOutboundReadLimit, PVOID pPrivateData,
                              ULONG *pPrivateDataLength) {
    Connector *c = from_ndk<Connector>(pConnector);
    if (c == nullptr) return STATUS_INVALID_PARAMETER;
    return c->connection_data(pInboundReadLimit, pOutboundReadLimit, pPrivateData,
                              pPrivateDataLength);
}

NTSTATUS local_address_slot(NDK_CONNECTOR *pConnector, PSOCKADDR pAddress, ULONG *pLength) {
    Connector *c = from_ndk<Connector>(pConnector);
    if (c == nullptr) return STATUS_INVALID_PARAMETER;
    return c->address(true, pAddress, pLength);
}

NTSTATUS peer_address_slot(NDK_CONNECTOR *pConnector, PSOCKADDR pAddress, ULONG *pLength) {
    Connector *c = from_ndk<Connector>(pConnector);
    if (c == nullptr) return STATUS_INVALID_PARAMETER;
    return c->address(false, pAddress, pLength);
}

NTSTATUS disconnect_slot(NDK_CONNECTOR *pConnector, NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
    Connector *c = from_ndk<Connector>(pConnector);
    if (c == nullptr || cb == nullptr) return STATUS_INVALID_PARAMETER;
    return c->disconnect(cb, ctx);
}

}  // namespace

const NDK_CONNECTOR_DISPATCH kConnectorDispatch = {
    .NdkCloseConnector = close_connector,
    .NdkQueryExtension = connector_query_extension,
    .NdkConnect = connect_slot,
    .NdkConnectWithSharedEndpoint = connect_with_shared_endpoint_slot,
    .NdkCompleteConnect = complete_connect_slot,
    .NdkAccept = accept_slot,
    .NdkReject = reject_slot,
    .NdkGetConnectionData = connection_data_slot,
    .NdkGetLocalAddress = local_address_slot,
    .NdkGetPeerAddress = peer_address_slot,
    .NdkDisconnect = disconnect_slot,
    .NdkCompleteConnectEx = complete_connect_ex_slot,
    .NdkAcceptEx = accept_ex_slot,
};

}  // namespace softndk::provider
