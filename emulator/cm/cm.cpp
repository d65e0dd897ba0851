#include "cm/cm.hpp"

#include <algorithm>
#include <cstring>

#include "device/device.hpp"
#include "device/log.hpp"
#include "device/status.hpp"
#include "rc/engine.hpp"
#include "trace/hooks.hpp"

namespace softndk::emu::cm {
namespace {

constexpr uint16_t kAfInet = 2;
constexpr uint16_t kAfInet6 = 10;
constexpr uint32_t kFirstEphemeral = 49152;

bool is_unspecified(const Endpoint &ep) {
    const wire::IpAddr any4 = wire::IpAddr::v4(0, 0, 0, 0);
    return ep.v4 ? ep.ip == any4 : ep.ip == wire::IpAddr{};
}

// Multicast (224.0.0.0/4, ff00::/8) or the IPv4 limited broadcast: never the
// destination of a connection.
bool is_group_address(const wire::IpAddr &ip) {
    if (ip.is_v4()) {
        return (ip.bytes[12] & 0xF0) == 0xE0 || ip == wire::IpAddr::v4(255, 255, 255, 255);
    }
    return ip.bytes[0] == 0xFF;
}

spdlog::logger &log() {
    return logger(Component::kCm);
}

}  // namespace

std::optional<Endpoint> parse_sockaddr(const hw::WireSockaddr &sa) {
    uint16_t family;
    std::memcpy(&family, sa.bytes, 2);
    Endpoint ep;
    ep.port = static_cast<uint16_t>(sa.bytes[2] << 8 | sa.bytes[3]);
    if (family == kAfInet && sa.length >= 16) {
        ep.ip = wire::IpAddr::v4(sa.bytes[4], sa.bytes[5], sa.bytes[6], sa.bytes[7]);
        ep.v4 = true;
    } else if (family == kAfInet6 && sa.length >= 28) {
        std::memcpy(ep.ip.bytes.data(), sa.bytes + 8, 16);
        ep.v4 = ep.ip.is_v4();
        if (ep.v4) return std::nullopt;  // v4-mapped v6 sockets are not RDMA addresses here
    } else {
        return std::nullopt;
    }
    ep.any = is_unspecified(ep);
    return ep;
}

hw::WireSockaddr make_sockaddr(const Endpoint &ep) {
    hw::WireSockaddr sa{};
    const uint16_t family = ep.v4 ? kAfInet : kAfInet6;
    std::memcpy(sa.bytes, &family, 2);
    sa.bytes[2] = static_cast<uint8_t>(ep.port >> 8);
    sa.bytes[3] = static_cast<uint8_t>(ep.port);
    if (ep.v4) {
        std::memcpy(sa.bytes + 4, ep.ip.bytes.data() + 12, 4);
        sa.length = 16;
    } else {
        std::memcpy(sa.bytes + 8, ep.ip.bytes.data(), 16);
        sa.length = 28;
    }
    return sa;
}

ConnectionManager::ConnectionManager(Device &device) : device_(device) {}
ConnectionManager::~ConnectionManager() = default;

bool ConnectionManager::endpoint_in_use(const Endpoint &ep) const {
    auto it = ports_.find({ep.v4, ep.port});
    if (it == ports_.end()) return false;
    const PortHolders &h = it->second;
    if (ep.any) return !h.empty();
    if (h.wildcards != 0 || h.addresses.contains(ep.ip.bytes)) return true;
    // Connections hold specific addresses: any of them on ep.ip clashes.
    auto p = h.peers.lower_bound({ep.ip.bytes, IpKey{}, 0});
    return p != h.peers.end() && std::get<0>(*p) == ep.ip.bytes;
}

void ConnectionManager::hold_port(const Endpoint &ep) {
    PortHolders &h = ports_[{ep.v4, ep.port}];
    if (ep.any) {
        ++h.wildcards;
    } else {
        ++h.addresses[ep.ip.bytes];
    }
}

void ConnectionManager::release_port(const Endpoint &ep) {
    auto it = ports_.find({ep.v4, ep.port});
    if (it == ports_.end()) return;
    PortHolders &h = it->second;
    if (ep.any) {
        if (h.wildcards != 0) --h.wildcards;
    } else if (auto a = h.addresses.find(ep.ip.bytes); a != h.addresses.end() && --a->second == 0) {
        h.addresses.erase(a);
    }
    if (h.empty()) ports_.erase(it);
}

void ConnectionManager::hold_connection_port(Connection &c) {
    if (c.holds_port) return;
    ports_[{c.local.v4, c.local.port}].peers.emplace(c.local.ip.bytes, c.peer.ip.bytes,
                                                     c.peer.port);
    c.holds_port = true;
}

void ConnectionManager::release_connection_port(Connection &c) {
    if (!c.holds_port) return;
    c.holds_port = false;
    auto it = ports_.find({c.local.v4, c.local.port});
    if (it == ports_.end()) return;
    auto &peers = it->second.peers;
    if (auto p = peers.find({c.local.ip.bytes, c.peer.ip.bytes, c.peer.port}); p != peers.end()) {
        peers.erase(p);
    }
    if (it->second.empty()) ports_.erase(it);
}

uint32_t ConnectionManager::endpoints_of(uint32_t context) const {
    // The listener quota holds per consumer process (ConsumerQuota, device.hpp): every
    // context of the same process counts (Device::same_consumer; the map holds only
    // contexts with an endpoint, a handful).
    uint32_t held = 0;
    for (const auto &[other, count] : endpoints_per_context_) {
        if (device_.same_consumer(context, other)) held += count;
    }
    return held;
}

int32_t ConnectionManager::claim_port(Endpoint &ep) {
    if (ep.port != 0) return endpoint_in_use(ep) ? status::kSharingViolation : status::kSuccess;
    constexpr uint32_t kCount = 65536 - kFirstEphemeral;
    for (uint32_t i = 0; i < kCount; ++i) {
        const uint32_t port = kFirstEphemeral + (next_port_ - kFirstEphemeral + i) % kCount;
        Endpoint probe = ep;
        probe.port = static_cast<uint16_t>(port);
        if (!endpoint_in_use(probe)) {
            next_port_ = port + 1 > 65535 ? kFirstEphemeral : port + 1;
            ep.port = probe.port;
            return status::kSuccess;
        }
    }
    return status::kTooManyAddresses;
}

ConnectionManager::Connection *ConnectionManager::owned(uint32_t context, uint32_t id) {
    auto it = connections_.find(id);
    return it == connections_.end() || it->second.context != context ? nullptr : &it->second;
}

Message ConnectionManager::message_for(uint32_t id, const Connection &c, MessageType type) const {
    Message m{};
    m.type = type;
    m.sender_id = id;
    m.receiver_id = c.peer_id;
    m.source_ip = c.local.ip;
    m.destination_ip = c.peer.ip;
    m.source_port = c.local.port;
    m.destination_port = c.peer.port;
    return m;
}

void ConnectionManager::send(const Message &m) {
    if (!device_.faults().cm_passes(m.destination_ip)) return;  // the peer vanished
    Message out = m;
    // A CM MAD is a 256 B UD datagram through the port like any packet.
    constexpr uint64_t kMadBytes = 256;
    out.time_ns = device_.timing().transmit(device_.clock().now(), kMadBytes,
                                            device_.owns_address(m.destination_ip));
    device_.clock().observe(out.time_ns);
    tracing::cm_message(device_, out, false);
    device_.fabric().send_cm(out);
}

void ConnectionManager::event(const Connection &c, uint32_t id, hw::EqeType type, int32_t status,
                              uint64_t data0) {
    hw::Eqe e{};
    e.object = id;
    e.status = status;
    e.data0 = data0;
    e.type = static_cast<uint8_t>(type);
    device_.post_event(c.context, e);
}

void ConnectionManager::arm_timer(uint32_t id, Connection &c) {
    const uint64_t generation = ++c.timer_generation;
    // On model time (Device::wall_deadline); what the timeout does is dated by it.
    const uint64_t now = device_.clock().now();
    const uint64_t deadline = now + uint64_t{device_.transport().cm_timeout_ms} * 1000000;
    device_.schedule(device_.wall_deadline(now, deadline), [this, id, generation, deadline] {
        device_.clock().observe(deadline);
        on_timeout(id, generation);
    });
}

void ConnectionManager::on_timeout(uint32_t id, uint64_t generation) {
    std::lock_guard lock(mutex_);
    auto it = connections_.find(id);
    if (it == connections_.end() || it->second.timer_generation != generation) return;
    Connection &c = it->second;
    switch (c.state) {
        case State::kReqSent:
            log().debug("conn#{}: no answer to REQ", id);
            c.state = State::kFailed;
            release_connection_port(c);
            unbind_qp(c, false);
            event(c, id, hw::EqeType::kConnectReply, status::kIoTimeout);
            break;
        case State::kAccepted:
            log().debug("conn#{}: no RTU", id);
            c.state = State::kFailed;
            release_connection_port(c);
            unbind_qp(c, true);
            event(c, id, hw::EqeType::kConnectAborted, status::kIoTimeout);
            break;
        case State::kDisconnecting:
            c.state = State::kClosed;
            event(c, id, hw::EqeType::kDisconnectDone, status::kIoTimeout);
            break;
        default:
            break;
    }
}

void ConnectionManager::unbind_qp(Connection &c, bool to_error) {
    if (c.qp == 0) return;
    if (auto qp = device_.find_qp(c.qp)) {
        std::lock_guard lock(qp->mutex);
        if (to_error && !qp->destroyed) rc::enter_error(*qp, "connection ended");
        qp->connection = 0;
    }
    c.qp = 0;
}

void ConnectionManager::negotiate(Connection &c) {
    c.ird = std::min(c.own_ird, c.peer_ord);
    c.ord = std::min(c.own_ord, c.peer_ird);
}

void ConnectionManager::connect_qp(Connection &c, bool to_rts) {
    auto qp = device_.find_qp(c.qp);
    if (!qp) return;
    std::lock_guard lock(qp->mutex);
    if (qp->destroyed) return;
    if (qp->state == QpState::kReset) {
        qp->path.local_ip = c.local.ip;
        qp->path.remote_ip = c.peer.ip;
        qp->path.remote_qpn = c.peer_qpn;
        qp->path.mtu = std::min(device_.limits().path_mtu, c.peer_mtu);
        qp->path.udp_source_port = static_cast<uint16_t>(0xC000 | (qp->number & 0x3FFF));
        qp->path.ird = c.ird;
        qp->path.ord = c.ord;
        qp->req.next_psn = qp->req.una_psn = c.local_psn;
        qp->resp.epsn = c.peer_psn;
        rc::modify_qp(*qp, QpState::kInit);
        rc::modify_qp(*qp, QpState::kRtr);
    }
    if (to_rts && qp->state == QpState::kRtr) rc::modify_qp(*qp, QpState::kRts);
}

// ---- commands

int32_t ConnectionManager::listen(uint32_t context, const hw::WireSockaddr &address,
                                  uint32_t &listener, hw::WireSockaddr &bound, uint32_t quota) {
    auto ep = parse_sockaddr(address);
    if (!ep) return status::kInvalidAddress;
    if (!ep->any && !device_.owns_address(ep->ip)) return status::kInvalidAddress;
    std::lock_guard lock(mutex_);
    if (quota != UINT32_MAX && endpoints_of(context) >= quota)
        return status::kInsufficientResources;
    if (const int32_t s = claim_port(*ep); s != status::kSuccess) return s;
    listener = next_listener_++;
    listeners_.emplace(listener, Listener{context, *ep, false});
    hold_port(*ep);
    ++endpoints_per_context_[context];
    bound = make_sockaddr(*ep);
    log().debug("listener#{}: ctx#{} port {}", listener, context, ep->port);
    return status::kSuccess;
}

int32_t ConnectionManager::close_listener(uint32_t context, uint32_t listener) {
    std::lock_guard lock(mutex_);
    auto it = listeners_.find(listener);
    if (it == listeners_.end() || it->second.context != context) return status::kInvalidParameter;
    release_port(it->second.endpoint);
    if (--endpoints_per_context_[context] == 0) endpoints_per_context_.erase(context);
    listeners_.erase(it);
    return status::kSuccess;
}

bool ConnectionManager::resolve_local(Endpoint &ep, bool v4) const {
    if (!ep.any) return device_.owns_address(ep.ip);
    for (const auto &a : device_.config().addresses) {
        if (a.is_v4() == v4) {
            ep.ip = a;
            ep.any = false;
            return true;
        }
    }
    return false;
}

int32_t ConnectionManager::create_shared_endpoint(uint32_t context, const hw::WireSockaddr &address,
                                                  uint32_t &endpoint, hw::WireSockaddr &bound,
                                                  uint32_t quota) {
    auto ep = parse_sockaddr(address);
    if (!ep) return status::kInvalidAddress;
    // Connections leave from one address: a wildcard picks the adapter's first one.
    if (!resolve_local(*ep, ep->v4)) return status::kInvalidAddress;
    std::lock_guard lock(mutex_);
    if (quota != UINT32_MAX && endpoints_of(context) >= quota)
        return status::kInsufficientResources;
    if (const int32_t s = claim_port(*ep); s != status::kSuccess) return s;
    endpoint = next_shared_endpoint_++;
    shared_endpoints_.emplace(endpoint, SharedEndpoint{context, *ep});
    hold_port(*ep);
    ++endpoints_per_context_[context];
    bound = make_sockaddr(*ep);
    log().debug("shared endpoint#{}: ctx#{} port {}", endpoint, context, ep->port);
    return status::kSuccess;
}

int32_t ConnectionManager::close_shared_endpoint(uint32_t context, uint32_t endpoint) {
    std::lock_guard lock(mutex_);
    auto it = shared_endpoints_.find(endpoint);
    if (it == shared_endpoints_.end() || it->second.context != context) {
        return status::kInvalidParameter;
    }
    release_port(it->second.endpoint);
    if (--endpoints_per_context_[context] == 0) endpoints_per_context_.erase(context);
    shared_endpoints_.erase(it);
    return status::kSuccess;
}

int32_t ConnectionManager::pause_listener(uint32_t context, uint32_t listener, bool pause) {
    std::lock_guard lock(mutex_);
    auto it = listeners_.find(listener);
    if (it == listeners_.end() || it->second.context != context) return status::kInvalidParameter;
    it->second.paused = pause;
    return status::kSuccess;
}

int32_t ConnectionManager::connect(uint32_t context, const hw::ConnectRequest &rq,
                                   uint32_t &connection) {
    const auto &limits = device_.limits();
    if (rq.private_data_bytes > std::min(limits.max_caller_data, hw::kMaxPrivateData)) {
        return status::kInvalidParameter;
    }
    auto dst = parse_sockaddr(rq.destination);
    auto src = parse_sockaddr(rq.source);
    if (rq.shared_endpoint != 0) {
        std::lock_guard lock(mutex_);
        auto se = shared_endpoints_.find(rq.shared_endpoint);
        if (se == shared_endpoints_.end() || !device_.same_consumer(se->second.context, context)) {
            return status::kInvalidParameter;
        }
        src = se->second.endpoint;
    }
    if (!dst || dst->any || dst->port == 0 || !src || src->v4 != dst->v4) {
        return status::kInvalidAddress;
    }
    // No unicast route to a group address, as a TCP connect() to one fails with
    // ENETUNREACH; and a wildcard source of a family the adapter has no address of
    // has no network to leave through.
    if (is_group_address(dst->ip)) return status::kNetworkUnreachable;
    // A shared endpoint's address was resolved when it was created.
    if (rq.shared_endpoint == 0 && !resolve_local(*src, dst->v4)) {
        return src->any ? status::kNetworkUnreachable : status::kInvalidAddress;
    }
    // The QP may belong to another handle of the same consumer (Device::same_consumer).
    auto qp = device_.find_consumer_qp(context, rq.qp);
    if (!qp) return status::kInvalidParameter;
    std::lock_guard lock(mutex_);
    {
        std::lock_guard qlock(qp->mutex);
        if (qp->state != QpState::kReset || qp->connection != 0) return status::kConnectionActive;
    }
    if (rq.shared_endpoint != 0) {
        // The endpoint may serve many connections, but one 4-tuple names one connection.
        if (!shared_endpoints_.contains(rq.shared_endpoint)) return status::kInvalidParameter;
        if (auto held = ports_.find({src->v4, src->port});
            held != ports_.end() &&
            held->second.peers.contains({src->ip.bytes, dst->ip.bytes, dst->port})) {
            return status::kAddressAlreadyExists;
        }
    } else if (const int32_t s = claim_port(*src); s != status::kSuccess) {
        return s;
    }
    if (!device_.fabric().reachable(dst->ip)) return status::kHostUnreachable;

    const uint32_t id = next_connection_++;
    Connection &c = connections_[id];
    c.context = context;
    c.active = true;
    c.state = State::kReqSent;
    c.qp = rq.qp;
    c.local = *src;
    c.peer = *dst;
    c.own_ird = std::min(rq.inbound_read_limit, limits.max_inbound_reads);
    c.own_ord = std::min(rq.outbound_read_limit, limits.max_outbound_reads);
    c.local_psn = device_.next_start_psn(rq.qp);
    c.private_capacity = std::min(limits.max_callee_data, hw::kMaxPrivateData);
    hold_connection_port(c);
    {
        std::lock_guard qlock(qp->mutex);
        qp->connection = id;
    }
    Message m = message_for(id, c, MessageType::kReq);
    m.qp_number = rq.qp;
    m.starting_psn = c.local_psn;
    m.responder_resources = c.own_ird;
    m.initiator_depth = c.own_ord;
    m.path_mtu = limits.path_mtu;
    m.private_data_bytes = rq.private_data_bytes;
    std::memcpy(m.private_data, rq.private_data, rq.private_data_bytes);
    send(m);
    arm_timer(id, c);
    connection = id;
    log().debug("conn#{}: qp#{} connecting to port {}", id, rq.qp, dst->port);
    return status::kSuccess;
}

int32_t ConnectionManager::accept(uint32_t context, const hw::AcceptRequest &rq) {
    const auto &limits = device_.limits();
    if (rq.private_data_bytes > std::min(limits.max_callee_data, hw::kMaxPrivateData)) {
        return status::kInvalidParameter;
    }
    // The QP may belong to another handle of the same consumer (Device::same_consumer).
    auto qp = device_.find_consumer_qp(context, rq.qp);
    std::lock_guard lock(mutex_);
    Connection *c = owned(context, rq.connection);
    if (c == nullptr || c->active || !qp) return status::kInvalidParameter;
    if (c->state == State::kFailed) return status::kConnectionAborted;
    if (c->state != State::kRequested) return status::kInvalidDeviceState;
    {
        std::lock_guard qlock(qp->mutex);
        if (qp->state != QpState::kReset || qp->connection != 0) return status::kConnectionActive;
        qp->connection = rq.connection;
    }
    c->qp = rq.qp;
    c->own_ird = std::min(rq.inbound_read_limit, limits.max_inbound_reads);
    c->own_ord = std::min(rq.outbound_read_limit, limits.max_outbound_reads);
    c->local_psn = device_.next_start_psn(rq.qp);
    negotiate(*c);
    connect_qp(*c, false);
    c->state = State::kAccepted;
    Message m = message_for(rq.connection, *c, MessageType::kRep);
    m.qp_number = rq.qp;
    m.starting_psn = c->local_psn;
    m.responder_resources = c->own_ird;
    m.initiator_depth = c->own_ord;
    m.path_mtu = limits.path_mtu;
    m.private_data_bytes = rq.private_data_bytes;
    std::memcpy(m.private_data, rq.private_data, rq.private_data_bytes);
    send(m);
    arm_timer(rq.connection, *c);
    return status::kSuccess;
}

int32_t ConnectionManager::reject(uint32_t context, const hw::AcceptRequest &rq) {
    if (rq.private_data_bytes > std::min(device_.limits().max_callee_data, hw::kMaxPrivateData)) {
        return status::kInvalidParameter;
    }
    std::lock_guard lock(mutex_);
    Connection *c = owned(context, rq.connection);
    if (c == nullptr) return status::kInvalidParameter;
    const bool passive_pending = !c->active && c->state == State::kRequested;
    const bool active_replied = c->active && c->state == State::kReplied;
    if (!passive_pending && !active_replied) {
        return c->state == State::kFailed ? status::kConnectionAborted
                                          : status::kInvalidDeviceState;
    }
    Message m = message_for(rq.connection, *c, MessageType::kRej);
    m.status = passive_pending ? status::kConnectionRefused : status::kConnectionAborted;
    m.private_data_bytes = rq.private_data_bytes;
    std::memcpy(m.private_data, rq.private_data, rq.private_data_bytes);
    send(m);
    c->state = State::kFailed;
    release_connection_port(*c);
    unbind_qp(*c, false);
    return status::kSuccess;
}

int32_t ConnectionManager::complete_connect(uint32_t context, uint32_t connection) {
    std::lock_guard lock(mutex_);
    Connection *c = owned(context, connection);
    if (c == nullptr || !c->active) return status::kInvalidParameter;
    if (c->state == State::kFailed) return status::kConnectionAborted;
    if (c->state != State::kReplied) return status::kConnectionInvalid;
    connect_qp(*c, true);
    c->state = State::kEstablished;
    send(message_for(connection, *c, MessageType::kRtu));
    log().debug("conn#{}: established (active)", connection);
    return status::kSuccess;
}

int32_t ConnectionManager::disconnect(uint32_t context, uint32_t connection) {
    std::lock_guard lock(mutex_);
    Connection *c = owned(context, connection);
    if (c == nullptr) return status::kInvalidParameter;
    if (c->state == State::kDisconnected) {  // the peer went first: nothing to wait for
        c->state = State::kClosed;
        unbind_qp(*c, true);
        event(*c, connection, hw::EqeType::kDisconnectDone, status::kSuccess);
        return status::kSuccess;
    }
    if (c->state != State::kEstablished && c->state != State::kAccepted) {
        return status::kConnectionInvalid;
    }
    send(message_for(connection, *c, MessageType::kDreq));
    c->state = State::kDisconnecting;
    unbind_qp(*c, true);
    arm_timer(connection, *c);
    return status::kSuccess;
}

void ConnectionManager::abandon(uint32_t id, Connection &c) {
    switch (c.state) {
        case State::kEstablished:
        case State::kAccepted:
            send(message_for(id, c, MessageType::kDreq));
            unbind_qp(c, true);
            break;
        case State::kRequested:
        case State::kReplied:
        case State::kReqSent: {
            Message m = message_for(id, c, MessageType::kRej);
            m.status = c.state == State::kRequested ? status::kConnectionRefused
                                                    : status::kConnectionAborted;
            send(m);  // receiver_id 0 before the REP: the peer matches on our id
            unbind_qp(c, false);
            break;
        }
        default:
            unbind_qp(c, true);
            break;
    }
}

int32_t ConnectionManager::close_connection(uint32_t context, uint32_t connection) {
    std::lock_guard lock(mutex_);
    Connection *c = owned(context, connection);
    if (c == nullptr) return status::kInvalidParameter;
    abandon(connection, *c);
    release_connection_port(*c);
    connections_.erase(connection);
    return status::kSuccess;
}

int32_t ConnectionManager::query_connection(uint32_t context, uint32_t connection,
                                            hw::ConnectionInfo &info) {
    std::lock_guard lock(mutex_);
    Connection *c = owned(context, connection);
    if (c == nullptr) return status::kInvalidParameter;
    info.local = make_sockaddr(c->local);
    info.peer = make_sockaddr(c->peer);
    if (!c->active && c->state == State::kRequested) {
        // Before Accept: what accepting with the device maxima would give.
        info.inbound_read_limit = std::min(device_.limits().max_inbound_reads, c->peer_ord);
        info.outbound_read_limit = std::min(device_.limits().max_outbound_reads, c->peer_ird);
    } else {
        info.inbound_read_limit = c->ird;
        info.outbound_read_limit = c->ord;
    }
    info.private_data_bytes = static_cast<uint32_t>(c->peer_private_data.size());
    info.private_data_capacity = c->private_capacity;
    std::copy(c->peer_private_data.begin(), c->peer_private_data.end(), info.private_data);
    return status::kSuccess;
}

// ---- messages from peers

void ConnectionManager::receive(const Message &m) {
    using Handler = void (ConnectionManager::*)(const Message &);
    static constexpr Handler kHandlers[] = {
        nullptr,
        &ConnectionManager::on_req,
        &ConnectionManager::on_rep,
        &ConnectionManager::on_rtu,
        &ConnectionManager::on_rej,
        &ConnectionManager::on_dreq,
        &ConnectionManager::on_drep,
    };
    const auto t = static_cast<size_t>(m.type);
    if (t == 0 || t >= std::size(kHandlers)) return;
    std::lock_guard lock(mutex_);
    (this->*kHandlers[t])(m);
}

void ConnectionManager::on_req(const Message &m) {
    Endpoint local{m.destination_ip, m.destination_port, false, m.destination_ip.is_v4()};
    Endpoint peer{m.source_ip, m.source_port, false, m.source_ip.is_v4()};
    const Listener *listener = nullptr;
    uint32_t listener_id = 0;
    for (const auto &[id, l] : listeners_) {
        if (!l.paused && l.endpoint.port == local.port && l.endpoint.v4 == local.v4 &&
            (l.endpoint.any || l.endpoint.ip == local.ip)) {
            listener = &l;
            listener_id = id;
            break;
        }
    }
    if (listener == nullptr) {
        Message rej{};
        rej.type = MessageType::kRej;
        rej.status = status::kConnectionRefused;
        rej.receiver_id = m.sender_id;
        rej.source_ip = m.destination_ip;
        rej.destination_ip = m.source_ip;
        send(rej);
        return;
    }
    const uint32_t id = next_connection_++;
    Connection &c = connections_[id];
    c.context = listener->context;
    c.active = false;
    c.state = State::kRequested;
    c.local = local;
    c.peer = peer;
    c.peer_id = m.sender_id;
    c.peer_qpn = m.qp_number;
    c.peer_psn = m.starting_psn;
    c.peer_ird = m.responder_resources;
    c.peer_ord = m.initiator_depth;
    c.peer_mtu = m.path_mtu;
    const uint32_t n = std::min(m.private_data_bytes, hw::kMaxPrivateData);
    c.peer_private_data.assign(m.private_data, m.private_data + n);
    c.private_capacity = std::min(device_.limits().max_caller_data, hw::kMaxPrivateData);
    log().debug("conn#{}: request on listener#{} from qp#{}", id, listener_id, m.qp_number);
    hw::Eqe e{};
    e.object = listener_id;
    e.data0 = id;
    e.type = static_cast<uint8_t>(hw::EqeType::kConnectRequest);
    device_.post_event(c.context, e);
}

void ConnectionManager::on_rep(const Message &m) {
    auto it = connections_.find(m.receiver_id);
    if (it == connections_.end()) return;
    Connection &c = it->second;
    if (!c.active || c.state != State::kReqSent) return;
    c.peer_id = m.sender_id;
    c.peer_qpn = m.qp_number;
    c.peer_psn = m.starting_psn;
    c.peer_ird = m.responder_resources;
    c.peer_ord = m.initiator_depth;
    c.peer_mtu = m.path_mtu;
    const uint32_t n = std::min(m.private_data_bytes, hw::kMaxPrivateData);
    c.peer_private_data.assign(m.private_data, m.private_data + n);
    negotiate(c);
    c.state = State::kReplied;
    ++c.timer_generation;
    event(c, it->first, hw::EqeType::kConnectReply, status::kSuccess);
}

void ConnectionManager::on_rtu(const Message &m) {
    auto it = connections_.find(m.receiver_id);
    if (it == connections_.end()) return;
    Connection &c = it->second;
    if (c.active || c.state != State::kAccepted || c.peer_id != m.sender_id) return;
    connect_qp(c, true);
    c.state = State::kEstablished;
    ++c.timer_generation;
    log().debug("conn#{}: established (passive)", it->first);
    event(c, it->first, hw::EqeType::kEstablished, status::kSuccess);
}

void ConnectionManager::on_rej(const Message &m) {
    auto it = connections_.find(m.receiver_id);
    if (m.receiver_id == 0) {  // abandoned before it knew our id (IB: REJ by remote comm id)
        it = std::find_if(connections_.begin(), connections_.end(), [&m](const auto &kv) {
            return !kv.second.active && kv.second.peer_id == m.sender_id &&
                   kv.second.peer.ip == m.source_ip;
        });
    }
    if (it == connections_.end()) return;
    Connection &c = it->second;
    const uint32_t id = it->first;
    if (c.active && c.state == State::kReqSent) {
        const uint32_t n = std::min(m.private_data_bytes, hw::kMaxPrivateData);
        c.peer_private_data.assign(m.private_data, m.private_data + n);
        c.state = State::kFailed;
        release_connection_port(c);
        ++c.timer_generation;
        unbind_qp(c, false);
        event(c, id, hw::EqeType::kConnectReply, m.status);
    } else if (!c.active && (c.state == State::kRequested || c.state == State::kAccepted) &&
               c.peer_id == m.sender_id) {
        const bool accepted = c.state == State::kAccepted;
        c.state = State::kFailed;
        release_connection_port(c);
        ++c.timer_generation;
        unbind_qp(c, accepted);
        event(c, id, hw::EqeType::kConnectAborted, status::kConnectionAborted);
    }
}

void ConnectionManager::on_dreq(const Message &m) {
    Message drep{};
    drep.type = MessageType::kDrep;
    drep.sender_id = m.receiver_id;
    drep.receiver_id = m.sender_id;
    drep.source_ip = m.destination_ip;
    drep.destination_ip = m.source_ip;
    send(drep);
    auto it = connections_.find(m.receiver_id);
    if (it == connections_.end() || it->second.peer_id != m.sender_id) return;
    Connection &c = it->second;
    if (c.state == State::kEstablished || c.state == State::kAccepted ||
        c.state == State::kReplied) {
        c.state = State::kDisconnected;
        ++c.timer_generation;
        event(c, it->first, hw::EqeType::kDisconnected, status::kSuccess);
    }
}

void ConnectionManager::on_drep(const Message &m) {
    auto it = connections_.find(m.receiver_id);
    if (it == connections_.end()) return;
    Connection &c = it->second;
    if (c.state != State::kDisconnecting) return;
    c.state = State::kClosed;
    ++c.timer_generation;
    event(c, it->first, hw::EqeType::kDisconnectDone, status::kSuccess);
}

int32_t ConnectionManager::kill_connection(uint32_t qp) {
    std::lock_guard lock(mutex_);
    for (auto &[id, c] : connections_) {
        if (c.qp != qp) continue;
        if (c.state != State::kEstablished && c.state != State::kAccepted) break;
        // The peer hears a DREQ (kDisconnected there; its DREP finds nothing to finish
        // here); this end sees kDisconnected too, and its QP goes to ERROR at once.
        send(message_for(id, c, MessageType::kDreq));
        c.state = State::kDisconnected;
        ++c.timer_generation;
        unbind_qp(c, true);
        event(c, id, hw::EqeType::kDisconnected, status::kSuccess);
        return status::kSuccess;
    }
    return status::kConnectionInvalid;
}

// ---- teardown

void ConnectionManager::context_died(uint32_t context) {
    std::lock_guard lock(mutex_);
    std::erase_if(listeners_, [this, context](const auto &kv) {
        if (kv.second.context != context) return false;
        release_port(kv.second.endpoint);
        return true;
    });
    std::erase_if(shared_endpoints_, [this, context](const auto &kv) {
        if (kv.second.context != context) return false;
        release_port(kv.second.endpoint);
        return true;
    });
    endpoints_per_context_.erase(context);
    for (auto it = connections_.begin(); it != connections_.end();) {
        if (it->second.context == context) {
            abandon(it->first, it->second);
            release_connection_port(it->second);
            it = connections_.erase(it);
        } else {
            ++it;
        }
    }
}

void ConnectionManager::qp_destroyed(uint32_t qp) {
    std::lock_guard lock(mutex_);
    for (auto &[id, c] : connections_) {
        if (c.qp != qp) continue;
        if (c.state == State::kEstablished || c.state == State::kAccepted) {
            send(message_for(id, c, MessageType::kDreq));
            c.state = State::kDisconnecting;
        }
        c.qp = 0;
        release_connection_port(c);
    }
}

std::vector<hw::ResourceEntry> ConnectionManager::resources(uint32_t start, size_t max) {
    static_assert(static_cast<uint32_t>(State::kFailed) ==
                  static_cast<uint32_t>(hw::CmState::kFailed));
    std::vector<hw::ResourceEntry> out;
    auto add = [&](uint32_t number, uint32_t context, hw::CmRole role, hw::CmState state,
                   const Endpoint &local, const Endpoint *peer, uint32_t qp, uint32_t peer_id) {
        hw::ResourceEntry e{};
        e.number = number;
        e.context = context;
        e.state = static_cast<uint32_t>(role) << 8 | static_cast<uint32_t>(state);
        std::memcpy(&e.values[0], local.ip.bytes.data(), 16);
        e.values[4] = local.port;
        if (peer != nullptr) {
            std::memcpy(&e.values[5], peer->ip.bytes.data(), 16);
            e.values[9] = peer->port;
        }
        e.values[10] = qp;
        e.values[11] = peer_id;
        out.push_back(e);
    };
    std::lock_guard lock(mutex_);
    for (auto it = connections_.lower_bound(start);
         it != connections_.end() && it->first < hw::kCmListenerBase && out.size() < max; ++it) {
        const Connection &c = it->second;
        add(it->first, c.context, c.active ? hw::CmRole::kActive : hw::CmRole::kPassive,
            static_cast<hw::CmState>(c.state), c.local, &c.peer, c.qp, c.peer_id);
    }
    const uint32_t from_listener = start > hw::kCmListenerBase ? start - hw::kCmListenerBase : 0;
    for (auto it = listeners_.lower_bound(from_listener);
         it != listeners_.end() && out.size() < max; ++it)
        add(hw::kCmListenerBase + it->first, it->second.context, hw::CmRole::kListener,
            it->second.paused ? hw::CmState::kPaused : hw::CmState::kListening, it->second.endpoint,
            nullptr, 0, 0);
    const uint32_t from_shared =
        start > hw::kCmSharedEndpointBase ? start - hw::kCmSharedEndpointBase : 0;
    for (auto it = shared_endpoints_.lower_bound(from_shared);
         it != shared_endpoints_.end() && out.size() < max; ++it)
        add(hw::kCmSharedEndpointBase + it->first, it->second.context, hw::CmRole::kSharedEndpoint,
            hw::CmState::kBound, it->second.endpoint, nullptr, 0, 0);
    return out;
}

}  // namespace softndk::emu::cm
