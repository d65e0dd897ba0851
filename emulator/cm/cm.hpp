// cm.hpp - the connection manager of one adapter: listeners, connections, and the
// REQ/REP/RTU/REJ/DREQ/DREP exchange with the peer adapter's CM over the fabric.
//
// Connection life (NDK names; EQEs go to the owning context):
//   active:  kConnect -> REQ ........ REP -> kConnectReply(SUCCESS) -> kCompleteConnect
//            -> RTU, QP RTR+RTS, established.   REJ -> kConnectReply(CONNECTION_REFUSED,
//            the peer's private data readable by kQueryConnection); no answer within
//            TransportDefaults::cm_timeout_ms -> kConnectReply(IO_TIMEOUT).
//            kReject after the REP -> REJ (the passive side sees kConnectAborted).
//   passive: REQ -> kConnectRequest EQE at the listener's context (data0 = new connection
//            id) -> kAccept (QP RTR, REP) ... RTU -> QP RTS, kEstablished. kReject -> REJ
//            with private data. No RTU in time, or a REJ -> kConnectAborted.
//   both:    kDisconnect -> DREQ, our QP to ERROR (flushed); the peer gets kDisconnected
//            and answers DREP -> kDisconnectDone (IO_TIMEOUT if no DREP in time).
//            kCloseConnection releases the id (disconnecting or rejecting first if
//            needed); a context that dies does the same for all its connections, so
//            its peers see kDisconnected.
// Listening: the IP must be one of the adapter's (or unspecified = all of them, per
// family) else STATUS_INVALID_ADDRESS; port 0 picks an ephemeral port (49152-65535,
// STATUS_TOO_MANY_ADDRESSES when none is free); an IP:port in use by a listener or a
// connection gives STATUS_SHARING_VIOLATION. A paused listener refuses requests as if
// it did not exist (the peer's connect ends with CONNECTION_REFUSED).
// Handles: the connection belongs to the context that issued kConnect or owns the
// listener (its EQEs go there); the QP it drives may belong to any context of the same
// consumer process (Device::same_consumer), e.g. a QP of handle B accepted on a
// connector of handle A. A shared endpoint likewise serves any handle of its consumer.
// Connect errors found locally are returned by the command: bad QP or one already
// connected (STATUS_INVALID_PARAMETER / STATUS_CONNECTION_ACTIVE), a source address
// that is not ours (STATUS_INVALID_ADDRESS), no adapter on the fabric owns the
// destination (STATUS_HOST_UNREACHABLE).
// IRD/ORD (ndkpi-api §7.7): each side caps its own values by the device limits;
// effective IRD = min(own IRD, peer ORD), effective ORD = min(own ORD, peer IRD).
// The QP gets the peer's QP number, both starting PSNs and min(path MTUs).
//
// Locking: one mutex; the CM takes QP locks and the device's object/EQ locks under it
// (order cm -> objects -> QP -> CQ -> EQ), never the other way round.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "cm/messages.hpp"
#include "softndk/hw_interface.hpp"

namespace softndk::emu {
class Device;
}

namespace softndk::emu::cm {

struct Endpoint {
    wire::IpAddr ip{};
    uint16_t port = 0;
    bool any = false;  // unspecified address (listeners only)
    bool v4 = true;
};

// Linux sockaddr_in / sockaddr_in6 bytes <-> Endpoint. nullopt for other families or
// short lengths.
std::optional<Endpoint> parse_sockaddr(const hw::WireSockaddr &sa);
hw::WireSockaddr make_sockaddr(const Endpoint &ep);

class ConnectionManager {
  public:
    explicit ConnectionManager(Device &device);
    ~ConnectionManager();

    // `quota`: how many listeners and shared endpoints `context`'s consumer process (all
    // its contexts together) may hold (ConsumerQuota::listeners); past it
    // STATUS_INSUFFICIENT_RESOURCES.
    int32_t listen(uint32_t context, const hw::WireSockaddr &address, uint32_t &listener,
                   hw::WireSockaddr &bound, uint32_t quota = UINT32_MAX);
    int32_t close_listener(uint32_t context, uint32_t listener);
    int32_t pause_listener(uint32_t context, uint32_t listener, bool pause);
    // A local IP:port reserved for outgoing connections (NdkCreateSharedEndpoint):
    // no listener or other connection may take it; connections made through it
    // (ConnectRequest::shared_endpoint) share it, one per peer address.
    int32_t create_shared_endpoint(uint32_t context, const hw::WireSockaddr &address,
                                   uint32_t &endpoint, hw::WireSockaddr &bound,
                                   uint32_t quota = UINT32_MAX);
    int32_t close_shared_endpoint(uint32_t context, uint32_t endpoint);
    int32_t connect(uint32_t context, const hw::ConnectRequest &request, uint32_t &connection);
    int32_t accept(uint32_t context, const hw::AcceptRequest &request);
    int32_t reject(uint32_t context, const hw::AcceptRequest &request);
    int32_t complete_connect(uint32_t context, uint32_t connection);
    int32_t disconnect(uint32_t context, uint32_t connection);
    int32_t close_connection(uint32_t context, uint32_t connection);
    int32_t query_connection(uint32_t context, uint32_t connection, hw::ConnectionInfo &info);

    void receive(const Message &message);
    void context_died(uint32_t context);
    // Fault injection (kKillConnection): the connection driving `qp` dies as if the
    // network tore it down; both ends get kDisconnected and the QP goes to ERROR.
    // STATUS_CONNECTION_INVALID if `qp` has no established connection.
    int32_t kill_connection(uint32_t qp);
    // The QP's connection (if any) is disconnected towards the peer and gives its local
    // port back at once: a record the consumer never closes does not keep the port.
    void qp_destroyed(uint32_t qp);
    // kQueryResources: up to `max` connections, listeners and shared endpoints numbered
    // `start` or above (hw_interface.hpp section 13's CM numbering), in ascending number.
    std::vector<hw::ResourceEntry> resources(uint32_t start, size_t max);

  private:
    // In hw::CmState's order (kQueryResources reports it).
    enum class State : uint8_t {
        kReqSent,    // active: waiting for REP/REJ
        kReplied,    // active: REP received, waiting for CompleteConnect/Reject
        kRequested,  // passive: REQ received, waiting for Accept/Reject
        kAccepted,   // passive: REP sent, waiting for RTU
        kEstablished,
        kDisconnecting,  // DREQ sent, waiting for DREP
        kDisconnected,   // the peer disconnected; ours not issued yet
        kClosed,         // our disconnect finished
        kFailed,         // refused, rejected, timed out or aborted
    };
    struct Listener {
        uint32_t context = 0;
        Endpoint endpoint;
        bool paused = false;
    };
    struct SharedEndpoint {
        uint32_t context = 0;
        Endpoint endpoint;
    };
    struct Connection {
        uint32_t context = 0;
        bool active = false;
        State state = State::kFailed;
        uint32_t qp = 0;
        Endpoint local, peer;
        uint32_t peer_id = 0;
        uint32_t peer_qpn = 0, peer_psn = 0, peer_ird = 0, peer_ord = 0, peer_mtu = 0;
        uint32_t own_ird = 0, own_ord = 0;
        uint32_t local_psn = 0;
        uint32_t ird = 0, ord = 0;  // effective
        std::vector<uint8_t> peer_private_data;
        uint32_t private_capacity = 0;
        uint64_t timer_generation = 0;
        bool holds_port = false;  // `local` is counted in ports_ (active, not failed)
    };
    // Who holds each (family, port): what claim_port and endpoint_in_use consult, so a
    // port check costs O(log n) whatever the number of records (issue 16, item 6).
    // Listeners and shared endpoints hold their endpoint while they exist; an active
    // connection holds its local endpoint from kConnect until it fails, is closed, or
    // its QP is destroyed.
    using IpKey = std::array<uint8_t, 16>;
    struct PortHolders {
        uint32_t wildcards = 0;               // holders on the unspecified address
        std::map<IpKey, uint32_t> addresses;  // holders on one address
        // Active connections through this local port: (local ip, peer ip, peer port).
        std::multiset<std::tuple<IpKey, IpKey, uint16_t>> peers;
        bool empty() const { return wildcards == 0 && addresses.empty() && peers.empty(); }
    };
    void hold_port(const Endpoint &ep);
    void release_port(const Endpoint &ep);
    void hold_connection_port(Connection &c);
    void release_connection_port(Connection &c);
    // Listeners + shared endpoints of `context` and of every other context of its
    // consumer process (Device::same_consumer). Takes the device's object lock (a leaf).
    uint32_t endpoints_of(uint32_t context) const;

    bool endpoint_in_use(const Endpoint &ep) const;
    // An address of this adapter: true if `ep` names one, or is a wildcard, which
    // becomes the adapter's first address of the family.
    bool resolve_local(Endpoint &ep, bool v4) const;
    // Gives `ep` its port (mutex_ held): port 0 becomes the next free ephemeral port
    // (49152-65535; TOO_MANY_ADDRESSES if none is), a given port must be free
    // (SHARING_VIOLATION if a listener, shared endpoint or connection holds it).
    int32_t claim_port(Endpoint &ep);
    Connection *owned(uint32_t context, uint32_t id);
    Message message_for(uint32_t id, const Connection &c, MessageType type) const;
    void send(const Message &m);
    void event(const Connection &c, uint32_t id, hw::EqeType type, int32_t status,
               uint64_t data0 = 0);
    void arm_timer(uint32_t id, Connection &c);
    void on_timeout(uint32_t id, uint64_t generation);
    void unbind_qp(Connection &c, bool to_error);
    void connect_qp(Connection &c, bool to_rts);
    void negotiate(Connection &c);
    void abandon(uint32_t id, Connection &c);  // close-time cleanup towards the peer

    void on_req(const Message &m);
    void on_rep(const Message &m);
    void on_rtu(const Message &m);
    void on_rej(const Message &m);
    void on_dreq(const Message &m);
    void on_drep(const Message &m);

    Device &device_;
    std::mutex mutex_;
    std::map<uint32_t, Listener> listeners_;
    std::map<uint32_t, Connection> connections_;
    std::map<uint32_t, SharedEndpoint> shared_endpoints_;
    uint32_t next_listener_ = 1;
    uint32_t next_shared_endpoint_ = 1;
    uint32_t next_connection_ = 1;
    uint32_t next_port_ = 49152;
    std::map<std::pair<bool, uint16_t>, PortHolders> ports_;  // (v4, port)
    std::map<uint32_t, uint32_t> endpoints_per_context_;      // listeners + shared endpoints
};

}  // namespace softndk::emu::cm
