#include "ndk.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <softndk_faults.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <thread>

#include "log.hpp"
#include "softndk_status.h"

namespace softndk::tool {

namespace {

constexpr ULONG kPoolTag = 0x6B444E53;         // 'SNDk'
constexpr uint32_t kBufferMagic = 0x46554253;  // "SBUF"

template <class T>
T *as(NDK_OBJECT_HEADER *object) {
    return reinterpret_cast<T *>(object);
}

// Closes an object and waits for the close to finish.
void close_object(NDK_OBJECT_HEADER *object, NDK_FN_CLOSE_OBJECT close) {
    Completion done;
    done.finish(close(object, Completion::on_close, &done));
}

}  // namespace

ULONG sockaddr_length(const sockaddr_storage &a) {
    return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

void set_port(sockaddr_storage &a, uint16_t port) {
    if (a.ss_family == AF_INET6)
        reinterpret_cast<sockaddr_in6 &>(a).sin6_port = htons(port);
    else
        reinterpret_cast<sockaddr_in &>(a).sin_port = htons(port);
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------
std::string status_text(NTSTATUS status) {
    return fmt::format("{} (0x{:08X})", softndk_status_name(status), static_cast<uint32_t>(status));
}

NdkError::NdkError(const std::string &call, NTSTATUS status)
    : std::runtime_error(call + " failed: " + status_text(status)), status_(status) {}

const char *technology_name(NDK_RDMA_TECHNOLOGY t) {
    constexpr const char *kNames[] = {"Undefined", "iWARP", "InfiniBand", "RoCE", "RoCEv2"};
    const auto i = static_cast<size_t>(t);
    return i < std::size(kNames) ? kNames[i] : "Unknown";
}

void check(NTSTATUS status, const char *call) {
    if (!NT_SUCCESS(status)) throw NdkError(call, status);
}

// ---------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------
Completion::Completion() {
    KeInitializeEvent(&event, NotificationEvent, FALSE);
}

void Completion::reset() {
    KeClearEvent(&event);
    status = STATUS_PENDING;
    object = nullptr;
}

NTSTATUS Completion::finish(NTSTATUS inline_status) {
    if (inline_status != STATUS_PENDING) return inline_status;
    KeWaitForSingleObject(&event, Executive, KernelMode, FALSE, nullptr);
    return status;
}

// The status (and object) are stored before KeSetEvent: once the waiter wakes
// it may destroy the Completion.
VOID Completion::on_request(PVOID context, NTSTATUS s) {
    auto *self = static_cast<Completion *>(context);
    self->status = s;
    KeSetEvent(&self->event, IO_NO_INCREMENT, FALSE);
}

VOID Completion::on_create(PVOID context, NTSTATUS s, NDK_OBJECT_HEADER *object) {
    auto *self = static_cast<Completion *>(context);
    self->object = object;
    self->status = s;
    KeSetEvent(&self->event, IO_NO_INCREMENT, FALSE);
}

VOID Completion::on_close(PVOID context) {
    on_request(context, STATUS_SUCCESS);
}

// A create: the object arrives through `*out` inline, or through the
// completion after STATUS_PENDING.
template <class T>
void create(Completion &done, NTSTATUS inline_status, T **out, const char *call) {
    const NTSTATUS s = done.finish(inline_status);
    if (inline_status == STATUS_PENDING && NT_SUCCESS(s)) *out = as<T>(done.object);
    if (!NT_SUCCESS(s)) *out = nullptr;
    check(s, call);
}

// ---------------------------------------------------------------------------
// WSK
// ---------------------------------------------------------------------------
WskClient::WskClient() {
    client_dispatch_.Version = MAKE_WSK_VERSION(1, 0);
    client_npi_.Dispatch = &client_dispatch_;
    check(WskRegister(&client_npi_, &registration_), "WskRegister");
    NTSTATUS s = WskCaptureProviderNPI(&registration_, WSK_INFINITE_WAIT, &provider_npi_);
    if (!NT_SUCCESS(s)) {
        WskDeregister(&registration_);
        throw NdkError("WskCaptureProviderNPI", s);
    }
    captured_ = true;
    // The output buffer receives a copy of the two-pointer table.
    s = provider_npi_.Dispatch->WskControlClient(provider_npi_.Client,
                                                 WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, nullptr,
                                                 sizeof ndk_, &ndk_, nullptr, nullptr);
    if (!NT_SUCCESS(s)) {
        WskReleaseProviderNPI(&registration_);
        WskDeregister(&registration_);
        throw NdkError("WskControlClient(WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH)", s);
    }
}

WskClient::~WskClient() {
    if (!captured_) return;
    WskReleaseProviderNPI(&registration_);
    WskDeregister(&registration_);
}

NDK_ADAPTER *WskClient::open(NET_IFINDEX if_index) const {
    // Highest major first: the provider answers a major it (or the device) does
    // not offer with STATUS_NDIS_BAD_VERSION, and runs a major it offers at the
    // highest minor both sides implement.
    constexpr NDK_VERSION kMajors[] = {{2, 0}, {1, 0}};
    NTSTATUS s = STATUS_NDIS_BAD_VERSION;
    for (const NDK_VERSION &version : kMajors) {
        NDK_ADAPTER *adapter = nullptr;
        s = ndk_.WskOpenNdkAdapter(provider_npi_.Client, version, if_index, &adapter);
        if (NT_SUCCESS(s)) return adapter;
        if (s != STATUS_NDIS_BAD_VERSION) break;
    }
    throw NdkError("WskOpenNdkAdapter", s);
}

void WskClient::close(NDK_ADAPTER *adapter) const {
    ndk_.WskCloseNdkAdapter(provider_npi_.Client, adapter);
}

NDK_ADAPTER_INFO query_adapter_info(NDK_ADAPTER *adapter) {
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    check(adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size), "NdkQueryAdapterInfo");
    return info;
}

// ---------------------------------------------------------------------------
// Endpoint
// ---------------------------------------------------------------------------
Endpoint::Connection::Connection() {
    KeInitializeEvent(&peer_gone, NotificationEvent, FALSE);
}

Endpoint::Endpoint(const WskClient &wsk, const softndk_adapter &adapter,
                   const EndpointOptions &options)
    : wsk_(wsk), adapter_(adapter), options_(options) {
    KeInitializeEvent(&connect_event_, NotificationEvent, FALSE);
    try {
        ndk_adapter_ = wsk_.open(adapter.if_index);
        info_ = query_adapter_info(ndk_adapter_);
        Completion done;
        create(
            done,
            ndk_adapter_->Dispatch->NdkCreatePd(ndk_adapter_, Completion::on_create, &done, &pd_),
            &pd_, "NdkCreatePd");
        // One CQ for every queue, deep enough for every work request at once.
        const ULONG cq_depth = (options.receive_depth + options.initiator_depth) *
                               std::max<ULONG>(options.qp_count, 1);
        done.reset();
        create(done,
               ndk_adapter_->Dispatch->NdkCreateCq(ndk_adapter_, cq_depth, on_cq_notification, this,
                                                   nullptr, Completion::on_create, &done, &cq_),
               &cq_, "NdkCreateCq");
        NDK_EXTENSION_INTERFACE model_time{};
        GUID model_time_id = SOFTNDK_MODEL_TIME_EXTENSION_GUID_INIT;
        if (NT_SUCCESS(cq_->Dispatch->NdkQueryExtension(
                &cq_->Header, &model_time_id,
                NDK_VERSION{SOFTNDK_MODEL_TIME_EXTENSION_VERSION_MAJOR,
                            SOFTNDK_MODEL_TIME_EXTENSION_VERSION_MINOR},
                &model_time)))
            model_time_ = static_cast<const SOFTNDK_MODEL_TIME_DISPATCH *>(model_time.Dispatch);
        const ULONG sge = 1;
        for (ULONG i = 0; i < std::max<ULONG>(options.qp_count, 1); ++i) {
            auto &c = *connections_.emplace_back(std::make_unique<Connection>());
            done.reset();
            create(done,
                   pd_->Dispatch->NdkCreateQp(
                       pd_, cq_, cq_, this, options.receive_depth, options.initiator_depth, sge,
                       sge, options.inline_bytes, Completion::on_create, &done, &c.qp),
                   &c.qp, "NdkCreateQp");
        }

        // The buffer, the way a driver registers non-paged pool.
        buffer_ = static_cast<uint8_t *>(
            ExAllocatePoolWithTag(NonPagedPoolNx, options.buffer_bytes, kPoolTag));
        if (buffer_ == nullptr) throw NdkError("ExAllocatePoolWithTag", STATUS_NO_MEMORY);
        std::memset(buffer_, 0, options.buffer_bytes);
        mdl_ =
            IoAllocateMdl(buffer_, static_cast<ULONG>(options.buffer_bytes), FALSE, FALSE, nullptr);
        if (mdl_ == nullptr) throw NdkError("IoAllocateMdl", STATUS_INSUFFICIENT_RESOURCES);
        MmBuildMdlForNonPagedPool(mdl_);
        done.reset();
        create(done, pd_->Dispatch->NdkCreateMr(pd_, FALSE, Completion::on_create, &done, &mr_),
               &mr_, "NdkCreateMr");
        done.reset();
        // ALLOW_REMOTE_WRITE includes local write. A read sink needs
        // RDMA_READ_SINK unless the adapter says otherwise; it is always accepted.
        const ULONG flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                            NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK;
        check(done.finish(mr_->Dispatch->NdkRegisterMr(mr_, mdl_, options.buffer_bytes, flags,
                                                       Completion::on_request, &done)),
              "NdkRegisterMr");
        registered_ = true;
        local_token_ = mr_->Dispatch->NdkGetLocalTokenFromMr(mr_);
        remote_token_ = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
    } catch (...) {
        destroy();
        throw;
    }
}

Endpoint::~Endpoint() {
    destroy();
}

// Disconnects `c` if it is still connected (a failure is only logged at debug
// level: the peer may have gone first) and closes its connector.
void Endpoint::disconnect_and_close(Connection &c) noexcept {
    if (c.connector == nullptr) return;
    if (c.connected) {
        Completion done;
        const NTSTATUS s = done.finish(
            c.connector->Dispatch->NdkDisconnect(c.connector, Completion::on_request, &done));
        if (!NT_SUCCESS(s)) log().debug("NdkDisconnect: {}", status_text(s));
        c.connected = false;
    }
    close_object(&c.connector->Header, c.connector->Dispatch->NdkCloseConnector);
    c.connector = nullptr;
}

void Endpoint::destroy() noexcept {
    for (auto &c : connections_)
        disconnect_and_close(*c);
    if (listener_ != nullptr) {
        close_object(&listener_->Header, listener_->Dispatch->NdkCloseListener);
        listener_ = nullptr;
    }
    for (auto &c : connections_) {
        if (c->qp != nullptr) close_object(&c->qp->Header, c->qp->Dispatch->NdkCloseQp);
        c->qp = nullptr;
    }
    if (mr_ != nullptr) {
        if (registered_) {
            Completion done;
            done.finish(mr_->Dispatch->NdkDeregisterMr(mr_, Completion::on_request, &done));
        }
        close_object(&mr_->Header, mr_->Dispatch->NdkCloseMr);
    }
    if (cq_ != nullptr) close_object(&cq_->Header, cq_->Dispatch->NdkCloseCq);
    if (pd_ != nullptr) close_object(&pd_->Header, pd_->Dispatch->NdkClosePd);
    if (mdl_ != nullptr) IoFreeMdl(mdl_);
    if (buffer_ != nullptr) ExFreePoolWithTag(buffer_, kPoolTag);
    if (ndk_adapter_ != nullptr) wsk_.close(ndk_adapter_);
    connections_.clear();
    model_time_ = nullptr;
    mr_ = nullptr;
    cq_ = nullptr;
    pd_ = nullptr;
    mdl_ = nullptr;
    buffer_ = nullptr;
    ndk_adapter_ = nullptr;
}

BufferInfo Endpoint::buffer_info() const {
    BufferInfo b;
    b.magic = kBufferMagic;
    b.token = remote_token_;
    b.address = address(0);
    b.bytes = options_.buffer_bytes;
    b.test = test_;
    b.qp_count = static_cast<uint32_t>(connections_.size());
    b.max_size = max_size_;
    b.iterations = iterations_;
    return b;
}

namespace {

// Set by every Endpoint's CQ notification (-e); see wait_cq_event().
KEVENT &cq_event() {
    static KEVENT event = [] {
        KEVENT e;
        KeInitializeEvent(&e, SynchronizationEvent, FALSE);
        return e;
    }();
    return event;
}

}  // namespace

void Endpoint::wait_cq_event(int ms) {
    LARGE_INTEGER timeout;
    timeout.QuadPart = -10LL * 1000 * ms;  // relative, 100 ns units
    KeWaitForSingleObject(&cq_event(), Executive, KernelMode, FALSE, &timeout);
}

bool Endpoint::peer_disconnected() const {
    for (const auto &c : connections_)
        if (KeReadStateEvent(const_cast<KEVENT *>(&c->peer_gone)) != 0) return true;
    return false;
}

void Endpoint::accept_all(const sockaddr_storage &address, ULONG read_limit) {
    sockaddr_storage listen_address = address;
    Completion done;
    create(done,
           ndk_adapter_->Dispatch->NdkCreateListener(ndk_adapter_, on_connect_event, this,
                                                     Completion::on_create, &done, &listener_),
           &listener_, "NdkCreateListener");
    done.reset();
    check(done.finish(listener_->Dispatch->NdkListen(
              listener_, reinterpret_cast<PSOCKADDR>(&listen_address),
              sockaddr_length(listen_address), Completion::on_request, &done)),
          "NdkListen");
    const BufferInfo own = buffer_info();
    for (auto &connection : connections_) {
        Connection &c = *connection;
        KeWaitForSingleObject(&connect_event_, Executive, KernelMode, FALSE, nullptr);
        c.connector = incoming_;
        incoming_ = nullptr;
        KeClearEvent(&connect_event_);
        read_connection(c);
        c.accept_done.reset();
        const NTSTATUS as = c.connector->Dispatch->NdkAccept(
            c.connector, c.qp, std::min(read_limit, info_.MaxInboundReadLimit),
            std::min(read_limit, info_.MaxOutboundReadLimit), const_cast<BufferInfo *>(&own),
            sizeof own, on_disconnect_event, &c, Completion::on_request, &c.accept_done);
        check(c.accept_done.finish(as), "NdkAccept");
        c.connected = true;
    }
}

void Endpoint::connect_all(const sockaddr_storage &server, ULONG read_limit, int retry_ms) {
    const sockaddr_storage *own = softndk_adapter_address(&adapter_, server.ss_family);
    if (own == nullptr)
        throw std::runtime_error(fmt::format("adapter {} has no {} address", adapter_.alias,
                                             server.ss_family == AF_INET6 ? "IPv6" : "IPv4"));
    sockaddr_storage source = *own;  // port 0: the provider picks one
    sockaddr_storage destination = server;
    const BufferInfo info = buffer_info();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(retry_ms);
    for (auto &connection : connections_) {
        Connection &c = *connection;
        for (;;) {
            Completion done;
            create(done,
                   ndk_adapter_->Dispatch->NdkCreateConnector(ndk_adapter_, Completion::on_create,
                                                              &done, &c.connector),
                   &c.connector, "NdkCreateConnector");
            c.connect_done.reset();
            const NTSTATUS s = c.connect_done.finish(c.connector->Dispatch->NdkConnect(
                c.connector, c.qp, reinterpret_cast<PSOCKADDR>(&source), sockaddr_length(source),
                reinterpret_cast<PSOCKADDR>(&destination), sockaddr_length(destination),
                std::min(read_limit, info_.MaxInboundReadLimit),
                std::min(read_limit, info_.MaxOutboundReadLimit), const_cast<BufferInfo *>(&info),
                sizeof info, Completion::on_request, &c.connect_done));
            if (NT_SUCCESS(s)) break;
            close_object(&c.connector->Header, c.connector->Dispatch->NdkCloseConnector);
            c.connector = nullptr;
            const bool nobody_listening = s == STATUS_CONNECTION_REFUSED || s == STATUS_IO_TIMEOUT;
            if (!nobody_listening || std::chrono::steady_clock::now() >= deadline)
                throw NdkError("NdkConnect", s);
            log().debug("NdkConnect: {}; the server may not listen yet, retrying", status_text(s));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        read_connection(c);
        Completion done;
        check(done.finish(c.connector->Dispatch->NdkCompleteConnect(
                  c.connector, on_disconnect_event, &c, Completion::on_request, &done)),
              "NdkCompleteConnect");
        c.connected = true;
    }
}

NDK_SGE Endpoint::sge(size_t offset, ULONG length) const {
    NDK_SGE s{};
    s.VirtualAddress = buffer_ + offset;
    s.Length = length;
    s.MemoryRegionToken = local_token_;
    return s;
}

NTSTATUS Endpoint::post_receive(size_t index, void *context, size_t offset, ULONG length) {
    const NDK_SGE s = sge(offset, length);
    NDK_QP *q = qp(index);
    return q->Dispatch->NdkReceive(q, context, &s, 1);
}

NTSTATUS Endpoint::post_send(size_t index, void *context, size_t offset, ULONG length,
                             ULONG flags) {
    const NDK_SGE s = sge(offset, length);
    NDK_QP *q = qp(index);
    return q->Dispatch->NdkSend(q, context, &s, 1, flags);
}

NTSTATUS Endpoint::post_write(size_t index, void *context, size_t offset, ULONG length,
                              uint64_t remote_address, uint32_t remote_token, ULONG flags) {
    const NDK_SGE s = sge(offset, length);
    NDK_QP *q = qp(index);
    return q->Dispatch->NdkWrite(q, context, &s, 1, remote_address, remote_token, flags);
}

NTSTATUS Endpoint::post_read(size_t index, void *context, size_t offset, ULONG length,
                             uint64_t remote_address, uint32_t remote_token, ULONG flags) {
    const NDK_SGE s = sge(offset, length);
    NDK_QP *q = qp(index);
    return q->Dispatch->NdkRead(q, context, &s, 1, remote_address, remote_token, flags);
}

VOID Endpoint::on_cq_notification(PVOID, NTSTATUS) {
    // Only an armed CQ notifies (-e); a polling driver never arms.
    KeSetEvent(&cq_event(), IO_NO_INCREMENT, FALSE);
}

VOID Endpoint::on_connect_event(PVOID context, NDK_CONNECTOR *connector) {
    auto *self = static_cast<Endpoint *>(context);
    if (self->incoming_ != nullptr) {
        // One request at a time (connect_pair connects the QPs one by one):
        // closing an unaccepted connector rejects it.
        connector->Dispatch->NdkCloseConnector(
            &connector->Header, [](PVOID) {}, nullptr);
        return;
    }
    self->incoming_ = connector;
    KeSetEvent(&self->connect_event_, IO_NO_INCREMENT, FALSE);
}

// The context is the Connection.
VOID Endpoint::on_disconnect_event(PVOID context) {
    auto *self = static_cast<Connection *>(context);
    KeSetEvent(&self->peer_gone, IO_NO_INCREMENT, FALSE);
}

void Endpoint::read_connection(Connection &c) {
    NDK_CONNECTOR *connector = c.connector;
    ULONG length = sizeof c.local;
    check(connector->Dispatch->NdkGetLocalAddress(connector, reinterpret_cast<PSOCKADDR>(&c.local),
                                                  &length),
          "NdkGetLocalAddress");
    length = sizeof c.peer;
    check(connector->Dispatch->NdkGetPeerAddress(connector, reinterpret_cast<PSOCKADDR>(&c.peer),
                                                 &length),
          "NdkGetPeerAddress");
    // Private data: the provider's buffer may be larger than what the peer
    // sent (ndkpi-api 7.8), so ask for its size first and read all of it.
    ULONG rds = 0;
    check(connector->Dispatch->NdkGetConnectionData(connector, nullptr, nullptr, nullptr, &rds),
          "NdkGetConnectionData");
    std::string data(std::max<ULONG>(rds, sizeof(BufferInfo)), '\0');
    length = rds;
    check(connector->Dispatch->NdkGetConnectionData(connector, nullptr, nullptr, data.data(),
                                                    &length),
          "NdkGetConnectionData");
    std::memcpy(&c.peer_buffer, data.data(), sizeof c.peer_buffer);
    if (c.peer_buffer.magic != kBufferMagic)
        throw std::runtime_error("the peer's private data is not a softndk buffer description");
}

void connect_pair(Endpoint &client, Endpoint &server, uint16_t port, ULONG read_limit) {
    // The server listens on its adapter's first address (IPv4 preferred).
    const sockaddr_storage *own = softndk_adapter_address(&server.adapter_, AF_UNSPEC);
    if (own == nullptr)
        throw std::runtime_error(fmt::format("adapter {} has no address", server.adapter_.alias));
    sockaddr_storage listen_address = *own;
    set_port(listen_address, port);
    const sockaddr_storage *client_own =
        softndk_adapter_address(&client.adapter_, listen_address.ss_family);
    if (client_own == nullptr)
        throw std::runtime_error(
            fmt::format("adapter {} has no {} address", client.adapter_.alias,
                        listen_address.ss_family == AF_INET6 ? "IPv6" : "IPv4"));
    sockaddr_storage source = *client_own;  // port 0: the provider picks one

    if (client.connections_.size() != server.connections_.size())
        throw std::runtime_error("connect_pair: the two ends have different QP counts");
    NDK_ADAPTER *sa = server.ndk_adapter_;
    Completion done;
    create(done,
           sa->Dispatch->NdkCreateListener(sa, Endpoint::on_connect_event, &server,
                                           Completion::on_create, &done, &server.listener_),
           &server.listener_, "NdkCreateListener");
    done.reset();
    check(done.finish(server.listener_->Dispatch->NdkListen(
              server.listener_, reinterpret_cast<PSOCKADDR>(&listen_address),
              sockaddr_length(listen_address), Completion::on_request, &done)),
          "NdkListen");

    NDK_ADAPTER *ca = client.ndk_adapter_;
    const BufferInfo client_info = client.buffer_info();
    const BufferInfo server_info = server.buffer_info();
    for (size_t i = 0; i < client.connections_.size(); ++i) {
        Endpoint::Connection &cc = *client.connections_[i];
        Endpoint::Connection &sc = *server.connections_[i];
        done.reset();
        create(done,
               ca->Dispatch->NdkCreateConnector(ca, Completion::on_create, &done, &cc.connector),
               &cc.connector, "NdkCreateConnector");
        const ULONG ird = std::min(read_limit, client.info_.MaxInboundReadLimit);
        const ULONG ord = std::min(read_limit, client.info_.MaxOutboundReadLimit);
        cc.connect_done.reset();
        NTSTATUS cs = cc.connector->Dispatch->NdkConnect(
            cc.connector, cc.qp, reinterpret_cast<PSOCKADDR>(&source), sockaddr_length(source),
            reinterpret_cast<PSOCKADDR>(&listen_address), sockaddr_length(listen_address), ird, ord,
            const_cast<BufferInfo *>(&client_info), sizeof client_info, Completion::on_request,
            &cc.connect_done);
        if (cs != STATUS_PENDING) check(cs, "NdkConnect");

        // The request reaches the listener - or the connect fails first.
        if (cs == STATUS_PENDING) {
            PVOID objects[2] = {&server.connect_event_, &cc.connect_done.event};
            KeWaitForMultipleObjects(2, objects, WaitAny, Executive, KernelMode, FALSE, nullptr,
                                     nullptr);
            if (KeReadStateEvent(&server.connect_event_) == 0)
                check(cc.connect_done.status, "NdkConnect");
        } else {
            KeWaitForSingleObject(&server.connect_event_, Executive, KernelMode, FALSE, nullptr);
        }
        // Taken, so the listener accepts the next QP's request.
        sc.connector = server.incoming_;
        server.incoming_ = nullptr;
        KeClearEvent(&server.connect_event_);
        Endpoint::read_connection(sc);
        sc.accept_done.reset();
        const NTSTATUS as = sc.connector->Dispatch->NdkAccept(
            sc.connector, sc.qp, std::min(read_limit, server.info_.MaxInboundReadLimit),
            std::min(read_limit, server.info_.MaxOutboundReadLimit),
            const_cast<BufferInfo *>(&server_info), sizeof server_info,
            Endpoint::on_disconnect_event, &sc, Completion::on_request, &sc.accept_done);
        if (as != STATUS_PENDING) check(as, "NdkAccept");

        check(cc.connect_done.finish(cs), "NdkConnect");
        Endpoint::read_connection(cc);
        done.reset();
        check(done.finish(cc.connector->Dispatch->NdkCompleteConnect(
                  cc.connector, Endpoint::on_disconnect_event, &cc, Completion::on_request, &done)),
              "NdkCompleteConnect");
        cc.connected = true;
        check(sc.accept_done.finish(as), "NdkAccept");
        sc.connected = true;
    }
}

void disconnect_pair(Endpoint &client, Endpoint &server) {
    for (size_t i = 0; i < client.connections_.size(); ++i) {
        Endpoint::Connection &cc = *client.connections_[i];
        Endpoint::Connection *sc =
            i < server.connections_.size() ? server.connections_[i].get() : nullptr;
        if (cc.connector == nullptr || !cc.connected) continue;
        Completion done;
        const NTSTATUS s = done.finish(
            cc.connector->Dispatch->NdkDisconnect(cc.connector, Completion::on_request, &done));
        if (!NT_SUCCESS(s)) log().warn("NdkDisconnect: {}", status_text(s));
        cc.connected = false;
        // The peer's disconnect event: it then only has to close.
        if (sc != nullptr && sc->connector != nullptr) {
            LARGE_INTEGER timeout;
            timeout.QuadPart = -10LL * 1000 * 1000 * 5;  // 5 s, relative
            if (KeWaitForSingleObject(&sc->peer_gone, Executive, KernelMode, FALSE, &timeout) ==
                STATUS_SUCCESS)
                sc->connected = false;
        }
    }
    for (Endpoint *e : {&client, &server}) {
        for (auto &c : e->connections_)
            Endpoint::disconnect_and_close(*c);
    }
}

std::optional<uint64_t> Endpoint::counter(const char *name) const {
    ULONG64 value = 0;
    if (SoftNdkQueryCounter(ndk_adapter_, name, &value) != STATUS_SUCCESS) return std::nullopt;
    return value;
}

}  // namespace softndk::tool
