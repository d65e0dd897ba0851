#include "provider.hpp"

namespace softndk::provider {

Listener::Listener(Adapter *a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void *ctx)
    : Object(a, fmt::format("{} listener#{}", a->name(), a->next_id())),
      callback_(cb),
      callback_context_(ctx) {
    publish(*static_cast<Embedded<NDK_LISTENER> *>(this), kType, a->version(), &kListenerDispatch);
    depend_on(a);
}

NTSTATUS Listener::listen(const sockaddr *address, ULONG) {
    {
        std::lock_guard lock(mutex_);
        if (listening_) return STATUS_INVALID_DEVICE_STATE;
        listening_ = true;  // reserved; undone below on failure
    }
    hw::ListenRequest request{};
    request.address = to_wire(address);
    hw::ListenResponse response{};
    NTSTATUS status;
    {
        // Routing lock across the command: a connect request for the new
        // listener id must not be looked up before the id is routed.
        std::lock_guard route(adapter()->route_mutex);
        status = adapter()->execute(hw::CommandOpcode::kListen, request, response);
        if (NT_SUCCESS(status)) adapter()->listeners[response.listener] = this;
    }
    bool paused;
    {
        std::lock_guard lock(mutex_);
        if (!NT_SUCCESS(status)) {
            listening_ = false;
            return status;
        }
        id_ = response.listener;
        bound_ = response.bound;
        paused = paused_;
    }
    log().debug("{}: listening as device listener {}", name(), response.listener);
    if (paused) pause(true);
    return STATUS_SUCCESS;
}

void Listener::pause(bool paused) {
    std::lock_guard order(pause_mutex_);
    uint32_t id;
    {
        std::lock_guard lock(mutex_);
        paused_ = paused;
        id = id_;
    }
    if (id == hw::kNoObject) return;
    const NTSTATUS status =
        adapter()->execute_object(hw::CommandOpcode::kPauseListener, id, paused ? 1 : 0);
    if (!NT_SUCCESS(status))
        log().warn("{}: {} failed: {:#x}", name(), paused ? "pause" : "resume",
                   static_cast<uint32_t>(status));
}

NTSTATUS Listener::local_address(PSOCKADDR out, ULONG *length) {
    if (length == nullptr) return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(mutex_);
    if (id_ == hw::kNoObject) return STATUS_INVALID_DEVICE_STATE;
    return copy_address(bound_, out, length);
}

void Listener::connect_request(uint32_t connection) {
    auto *c = new Connector(adapter());
    c->adopt_incoming(connection, this);
    log().debug("{}: connect request, connection {} -> {}", name(), connection, c->name());
    callback_(callback_context_, &c->ndk);
}

void Listener::on_close() {
    uint32_t id;
    {
        std::lock_guard lock(mutex_);
        id = id_;
    }
    if (id == hw::kNoObject) return;
    adapter()->unroute(adapter()->listeners, id, this);
    adapter()->execute_object(hw::CommandOpcode::kCloseListener, id);
}

namespace {

NTSTATUS close_listener(NDK_OBJECT_HEADER *h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
    Listener *l = from_header<Listener>(h);
    if (l == nullptr) return STATUS_INVALID_PARAMETER;
    return l->close(cb, ctx);
}

NTSTATUS listener_query_extension(NDK_OBJECT_HEADER *h, GUID *id, NDK_VERSION v,
                                  NDK_EXTENSION_INTERFACE *out) {
    if (from_header<Listener>(h) == nullptr) return STATUS_INVALID_PARAMETER;
    return query_extension(h, id, v, out);
}

NTSTATUS listen_slot(NDK_LISTENER *pListener, PSOCKADDR pAddress, ULONG AddressLength,
                     NDK_FN_REQUEST_COMPLETION cb, PVOID) {
    Listener *l = from_ndk<Listener>(pListener);
    if (l == nullptr || cb == nullptr) return STATUS_INVALID_PARAMETER;
    const NTSTATUS status = check_address(pAddress, AddressLength);
    if (!NT_SUCCESS(status)) return status;
    return l->listen(pAddress, AddressLength);
}

NTSTATUS listener_local_address(NDK_LISTENER *pListener, PSOCKADDR pAddress,
                                ULONG *pAddressLength) {
    Listener *l = from_ndk<Listener>(pListener);
    if (l == nullptr) return STATUS_INVALID_PARAMETER;
    return l->local_address(pAddress, pAddressLength);
}

void control_connect_events(NDK_LISTENER *pListener, BOOLEAN Pause) {
    if (Listener *l = from_ndk<Listener>(pListener)) l->pause(Pause != FALSE);
}

}  // namespace

const NDK_LISTENER_DISPATCH kListenerDispatch = {
    .NdkCloseListener = close_listener,
    .NdkQueryExtension = listener_query_extension,
    .NdkListen = listen_slot,
    .NdkGetLocalAddress = listener_local_address,
    .NdkControlConnectEvents = control_connect_events,
};

}  // namespace softndk::provider
