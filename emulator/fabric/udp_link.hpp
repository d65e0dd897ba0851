// udp_link.hpp - RoCEv2 over real UDP sockets: the fabric's way out of the process.
//
// The in-host fabric routes a frame to the port that owns its destination address.
// With a UdpLink, a frame for an address no local port owns leaves the process as one
// UDP datagram, so adapters in different processes (embedded consumers, or several
// `softndk rnic` daemons) reach each other, and what travels is a real RoCEv2 packet
// that tshark and the wire oracle decode on `lo`.
//
//   local address A attaches -> the link binds a UDP socket to A:port (port 4791 by
//                               default, RoCEv2's IANA port)
//   RoCEv2 packet to B       -> a real RoCEv2 packet from A:port to B:port: BTH |
//                               extension headers | payload | pad | ICRC. The UDP
//                               source port is `port` (meta.udp_src_port is set to it).
//   CM message to B          -> the same way, as a transport packet of kCmOpcode (0xC0,
//                               an IBA manufacturer-specific BTH opcode, so no RoCEv2
//                               parser mistakes it for RC traffic) to QP 1 with PSN 0:
//                               BTH | "SCM1" | the cm::Message bytes in host byte order
//                               (one host, or hosts of one endianness) | ICRC. Not IB CM
//                               MADs: docs/wire.md says why and what interop needs.
//
// Which header the ICRC covers. It covers the IPv4 identification, which Linux fills in
// itself (non-zero, per destination) on a datagram of an ordinary UDP socket, so a frame
// whose ICRC assumed 0 would fail at every real RoCEv2 receiver. Hence:
//   IPv4 with CAP_NET_RAW (default): each frame leaves through one raw socket
//       (IPPROTO_RAW, the IP header included) exactly as wire::serialize_frame wrote
//       it, identification 0 with DF (the kernel keeps a DF datagram's zero ID);
//   IPv4 without CAP_NET_RAW, or SOFTNDK_FABRIC_RAW=off: the UDP socket sends the UDP
//       payload and the kernel writes the IP header; the socket is set to
//       IP_PMTUDISC_DO (DF, never fragment), for which Linux writes identification 0
//       into an unconnected socket's datagrams, so the ICRC verifies at a real RoCEv2
//       peer too (docs/wire.md has the measurements);
//   IPv6: the UDP socket; IPv6 has no identification, and the fields the kernel
//       chooses (flow label, traffic class, hop limit, UDP checksum) are masked.
// What the raw socket still decides: a packet's IPv4 TOS and TTL (PacketMeta, both
// masked in the ICRC) go on the wire as written; a UDP socket uses its own (0, and the
// system's default TTL).
// Received datagrams arrive on the bound UDP socket either way.
//
// Runs leave in GSO batches (docs/wire.md, "UDP GSO and GRO"). On loopback a datagram's
// cost is the kernel's path per datagram, not its bytes, so the packets of a run (a
// message's MTU-sized packets) whose destination is an address of this host leave
// through the UDP socket as UDP GSO batches: one sendmsg (UDP_SEGMENT) carries up to
// kGsoSegments datagrams of one size, the last of a batch possibly shorter, and the
// kernel cuts them apart. The receiving socket asks for UDP GRO, so a batch sent on
// loopback reaches it whole, with its segment size (recvmmsg's UDP_GRO control message),
// and is cut into its datagrams again there. What each datagram is stays as without
// GSO, but for one field: the kernel numbers the IPv4 identification of a batch's
// segments 0, 1, 2, ..., so the ICRC of segment i is computed with identification i and
// a receiver checks a GRO segment i against i (then 0, for datagrams a NIC's GRO
// coalesced). A capture on `lo` shows a batch as one datagram (as a capture of TSO
// shows one TCP segment): SOFTNDK_FABRIC_GSO=off sends every datagram on its own. A
// destination not on this host never gets a batch (a GRO there could cut it apart
// differently), and neither does a run of one packet. If the kernel refuses a batch,
// GSO is switched off for the link and RC retransmission resends its packets. A batch
// leaves with the UDP socket's IPv4 TOS and TTL (0 and the system's default, both masked
// in the ICRC), as every frame does without the raw socket.
//
// Receiving. Datagrams are taken off the sockets in batches (recvmmsg, up to
// kReceiveBatch per system call) by one receiver at a time, under one lock, so they
// are handed over in the order they arrived. A datagram is validated as the wire says
// (parse_ib_packet, then the ICRC recomputed in place over the addresses and ports it
// arrived with); anything malformed, of a wrong size or with a bad ICRC is counted and
// dropped, as a NIC drops a bad frame. Valid packets are handed to the fabric on the
// receiving thread with their payload still in the link's receive buffer (Receiver), and
// the fabric delivers them to the local port only, at once; a received frame is never
// forwarded again.
//
// Who receives (docs/wire.md, "Receiving without a thread hand-off"):
//   - the link's own thread, sleeping in ppoll() on every socket, by default: a
//     consumer waiting for a CQ notification, the CM, a daemon;
//   - a consumer's polling thread, through poll_inline(): in embedded mode the provider
//     calls it whenever a poll of a CQ finds nothing (Fabric::poll_link), so the
//     datagram that completes the consumer's request is received and delivered on the
//     thread that waits for it, with no sleep and wake in between, as embedded mode
//     already runs the device on the posting thread. While such polls keep coming (each
//     one extends a hand-off window, `hand_off`), the link's thread stands back: it
//     sleeps on its eventfd only, so datagrams do not wake it and it does not compete
//     with the spinning consumers for the cores. When the window runs out without a
//     poll, or stop_inline_polling() is called (a consumer arms a CQ to sleep), the
//     thread takes over again at once. No thread ever busy-spins on a socket.
//
// ACKs off the critical path (docs/wire.md, "ACKs are held off the critical path"). On
// loopback a datagram costs its sender some microseconds of kernel work, the receiving
// side's network stack included, so an inline poll that took a SEND and sent its ACK
// before returning made every ping-pong's turn-around pay for a datagram the peer does
// not wait for. An RC ACK or NAK (opcode Acknowledge) sent on the thread of an inline
// poll while it delivers is therefore held, in order, and leaves:
//   - just after the next request this link sends, in its sendmmsg (the consumer's
//     answer goes first: requests and ACKs belong to opposite directions of a QP
//     pair's PSN spaces, so their relative order carries nothing);
//   - just before the next response sent otherwise (an ACK, a READ response or an
//     atomic ACK on another thread, or a READ response of a later delivery), so one
//     responder's responses still leave in PSN order;
//   - at the next poll_inline() or stop_inline_polling(), at unbind(), and whenever the
//     link's thread comes round: at the latest when the hand-off window lapses, so no
//     ACK is held longer than one window (kDefaultHandOff to kHandOffGrowth times it).
// An ACK timeout shorter than that (code 6 or below, 262 us) can then expire on a
// consumer that takes a completion and makes no call for that long. held_acks() counts
// the ACKs ever held, acks_waiting() those not sent yet.
//
// Lost datagrams are what RC retransmission is for; a peer process that dies is seen
// as the RC transport retry or CM timeout running out, as on a real network.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "cm/messages.hpp"
#include "wire/packet.hpp"

struct mmsghdr;  // <sys/socket.h>

namespace softndk::emu {

struct Packet;

class UdpLink {
  public:
    inline static constexpr uint16_t kRoceV2Port = 4791;
    inline static constexpr uint8_t kCmOpcode = 0xC0;
    inline static constexpr uint32_t kCmQp = 1;

    // Frames that arrived and passed validation, called on the receiving thread (the
    // link's, or an inline poller's). A packet's payload points into the link's receive
    // buffer, valid only until the call returns: a receiver that keeps the packet longer
    // gives it its own copy first (Packet::own_payload). Not copied up front: delivering at
    // once is the common case, and the copy was a pass over every byte received.
    struct Receiver {
        std::function<void(Packet &&)> packet;
        std::function<void(const cm::Message &)> cm;
    };

    // Datagrams taken off a socket per recvmmsg call.
    inline static constexpr unsigned kReceiveBatch = 32;
    // How long the link's thread stands back after the last poll_inline(), at least. The
    // window adapts between this and kHandOffGrowth times it (run()), starting long: it
    // doubles when a window ran out and the consumer came back to poll before any
    // datagram came (a consumer that polls its CQ, paused by the scheduler), and halves
    // when kReceivesToShrink windows in a row ran out and the thread then had to receive
    // (a consumer that waits on memory, as perftest's write_lat does, for a WRITE only
    // the thread can take). Starting long, and shrinking only on a repeated sign, keep a
    // CQ-polling consumer out of the short window, where one pause lets the window lapse
    // and the thread's wake for the next datagram takes a core and makes the next pause
    // (docs/wire.md).
    inline static constexpr std::chrono::nanoseconds kDefaultHandOff =
        std::chrono::microseconds(20);
    inline static constexpr int64_t kHandOffGrowth = 16;
    inline static constexpr int kReceivesToShrink = 2;

    UdpLink(uint16_t port, Receiver receiver, std::chrono::nanoseconds hand_off = kDefaultHandOff);
    ~UdpLink();  // stops the thread, closes every socket
    UdpLink(const UdpLink &) = delete;
    UdpLink &operator=(const UdpLink &) = delete;

    // Binds a socket to each address (port `port`). False, with nothing bound, if one
    // cannot be bound (e.g. another process has it); the caller logs and stays local.
    bool bind(uint32_t vport, std::span<const wire::IpAddr> addresses);
    void unbind(uint32_t vport);
    bool owns_socket_for(const wire::IpAddr &address) const;

    // Send one frame from the socket bound to its source address. False if there is no
    // such socket or the frame cannot be serialised; a send error is logged and dropped.
    bool send(const Packet &packet);
    // Sends every packet of a run (Packet::run) as its own datagram, in PSN order, the
    // same datagrams send() would send for split_run's packets, but serialised into one
    // buffer and handed to the kernel kSendBatch at a time (sendmmsg). False if there is
    // no socket for the source address or a packet cannot be serialised (nothing sent);
    // a datagram the kernel refuses counts as dropped and the rest still go.
    bool send_run(const Packet &run);
    inline static constexpr unsigned kSendBatch = 64;
    // The most datagrams and UDP payload bytes one GSO batch carries (the kernel's
    // UDP_MAX_SEGMENTS and the largest IPv4 UDP payload).
    inline static constexpr unsigned kGsoSegments = 64;
    inline static constexpr size_t kGsoBytes = 65507;
    bool send_cm(const cm::Message &message);

    // Receives and hands over, on the calling thread, every datagram queued on the
    // link's sockets, without blocking: true if any arrived. Returns false at once if
    // another thread is receiving (it hands over what is queued, in order). Opens or
    // extends the hand-off window (see above). Must not be called while delivering a
    // frame of this link (from a Receiver callback).
    bool poll_inline();
    // The consumer stops polling: the link's thread receives again from now on.
    void stop_inline_polling();
    // The hand-off window's length now (tests, diagnostics).
    std::chrono::nanoseconds hand_off() const {
        return std::chrono::nanoseconds(hand_off_ns_.load(std::memory_order_relaxed));
    }
    // True while the link's thread stands back for inline polling (tests, diagnostics).
    bool thread_stands_back() const { return parked_.load(std::memory_order_acquire); }

    uint16_t port() const { return port_; }
    // True if IPv4 frames leave through the raw socket (their ICRC verifies on the wire).
    bool sends_raw_ipv4() const { return raw_fd_ >= 0; }
    uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
    uint64_t received() const { return received_.load(std::memory_order_relaxed); }
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
    // recvmmsg calls that returned datagrams: received() / receive_calls() is the mean
    // batch.
    uint64_t receive_calls() const { return receive_calls_.load(std::memory_order_relaxed); }
    // System calls that sent datagrams (sendto, sendmmsg): sent() / send_calls() is the
    // mean batch.
    uint64_t send_calls() const { return send_calls_.load(std::memory_order_relaxed); }
    // GSO batches sent (each also counts once in send_calls() per sendmmsg it is in), and
    // whether runs still leave in them (false after SOFTNDK_FABRIC_GSO=off or a refusal).
    uint64_t gso_batches() const { return gso_batches_.load(std::memory_order_relaxed); }
    bool sends_gso() const { return gso_.load(std::memory_order_relaxed); }
    // ACKs held by inline polls (see "ACKs off the critical path" above), in total, and
    // how many of those are still waiting to be sent.
    uint64_t held_acks() const { return held_acks_.load(std::memory_order_relaxed); }
    size_t acks_waiting() const;

  private:
    struct Socket {
        uint32_t vport;
        wire::IpAddr address;
        int fd;
    };
    int socket_for(const wire::IpAddr &address) const;
    // One datagram to to:port through fd (a UDP socket, or the raw one with port 0); a
    // failed send counts as a drop, as a lost frame on a wire would be.
    bool send_to(int fd, const wire::IpAddr &to, uint16_t port, std::span<const uint8_t> bytes);
    // Where a datagram goes relative to the held ACKs ("ACKs off the critical path").
    enum class HeldOrder {
        kHold,        // an ACK sent by an inline poll's delivery: held
        kBeforeHeld,  // a request: sent, then the held ACKs (unless inside a delivery)
        kAfterHeld,   // any other response, or a CM message: the held ACKs first
    };
    HeldOrder order_of(const wire::PacketDescriptor &packet) const;
    // The held ACKs that must leave before a datagram of `order` (kAfterHeld), and after
    // it (kBeforeHeld, unless the caller is inside an inline poll's delivery).
    void before_sending(HeldOrder order);
    void after_sending(HeldOrder order);
    // How a frame to `to` leaves: the socket (the raw one for IPv4 when there is one,
    // else `udp_fd`), the destination port to address (0 for the raw socket), and how
    // many leading bytes of the serialised frame the kernel writes itself.
    struct Egress {
        int fd;
        uint16_t port;
        size_t skip;
    };
    Egress egress(int udp_fd, const wire::IpAddr &to) const;
    Egress udp_egress(int udp_fd, const wire::IpAddr &to) const;  // always `udp_fd`
    // Sends a whole frame (Ethernet header first): through the raw socket for IPv4 when
    // there is one, else its UDP payload through `fd`.
    bool send_frame(int fd, const wire::IpAddr &to, std::span<const uint8_t> frame,
                    HeldOrder order);
    void run();
    // With receive_mutex_ held: drains every socket in batches (ready_only: those the
    // epoll set reports ready, or the only one); returns the datagrams taken (valid or not).
    size_t receive_queued(bool ready_only);
    size_t drain_socket(const Socket &socket);
    // `segment`: the datagram's place in the GRO batch it came in (0 if alone), the IPv4
    // identification its ICRC is checked with first.
    void handle_datagram(const Socket &socket, std::span<const uint8_t> bytes,
                         const wire::IpAddr &from, uint16_t from_port, uint16_t segment);
    // Whether a run to `to` may leave in GSO batches: GSO on, and `to` an address of this
    // host (loopback, or an interface's address when the link was created).
    bool gso_to(const wire::IpAddr &to) const;
    void wake_thread();
    // Holds an ACK's datagram (what send_frame would hand to the kernel) until
    // send_held_acks(); the calling thread is an inline poll delivering.
    void hold_ack(int fd, const wire::IpAddr &to, uint16_t port, std::span<const uint8_t> bytes);
    // Sends every held ACK, in the order held (one sendmmsg per run of one socket).
    void send_held_acks();
    // Sends a request's datagram and then every held ACK, the request first: one
    // sendmmsg for all of them when they leave through one socket (the common case, a
    // consumer answering the peer whose request its last poll took), where a sendto and
    // then send_held_acks() took two system calls on each turn of a ping-pong.
    void send_ahead_of_held_acks(int fd, const wire::IpAddr &to, uint16_t port,
                                 std::span<const uint8_t> bytes);
    void send_held_acks_locked();  // held_mutex_ held
    // Whether the held ACKs leave right after a datagram of this order that this thread
    // sends now (a request from outside a delivery, while ACKs are held).
    bool held_acks_follow(HeldOrder order) const;
    // Hands `count` prepared messages to the kernel through `fd`, kSendBatch per
    // sendmmsg; one the kernel refuses counts as dropped, and the rest still go.
    // `datagrams[k]` is how many datagrams message k carries (a GSO batch), or nullptr
    // for one each; a refused batch switches GSO off.
    void send_batched(int fd, ::mmsghdr *headers, uint32_t count,
                      const uint32_t *datagrams = nullptr);

    const uint16_t port_;
    const Receiver receiver_;
    const int64_t hand_off_min_ns_;
    // The window's length (written by the link's thread only, read by inline polls).
    std::atomic<int64_t> hand_off_ns_;
    int wake_fd_ = -1;   // eventfd: the socket set changed, or stop
    int ready_fd_ = -1;  // epoll set of every bound socket, for inline polls
    int raw_fd_ = -1;    // IPv4 raw socket (IPPROTO_RAW) the frames leave through, or -1
    // The interfaces' addresses when the link was created (gso_to); immutable after.
    std::vector<wire::IpAddr> host_addresses_;
    std::atomic<bool> gso_{true};
    std::atomic<uint64_t> gso_batches_{0};
    mutable std::mutex mutex_;
    std::vector<Socket> sockets_;
    std::atomic<uint32_t> version_{0};
    std::atomic<uint32_t> seen_version_{0};  // the socket set the thread polls
    std::atomic<bool> stopping_{false};
    std::atomic<uint64_t> sent_{0}, received_{0}, dropped_{0}, receive_calls_{0}, send_calls_{0};

    // One receiver at a time (the link's thread or an inline poller), so datagrams are
    // delivered in arrival order. The receiver's socket list and batch buffers are
    // guarded by it.
    std::mutex receive_mutex_;
    std::vector<Socket> receive_sockets_;
    uint32_t receive_version_ = ~0u;
    struct Batch;                   // recvmmsg's headers and buffers (udp_link.cpp)
    std::unique_ptr<Batch> batch_;  // kReceiveBatch slots
    // End of the hand-off window (steady clock, ns since its epoch); 0 = none.
    std::atomic<int64_t> inline_until_ns_{0};
    std::atomic<bool> parked_{false};  // the thread waits on the eventfd only

    // ACKs held by inline polls (hold_ack), and whether there are any (read without the
    // lock by every send). held_mutex_ is a leaf: nothing else is taken while held.
    struct HeldAcks;  // the datagrams and their destinations (udp_link.cpp)
    mutable std::mutex held_mutex_;
    std::unique_ptr<HeldAcks> held_;
    std::atomic<bool> holding_{false};
    std::atomic<uint64_t> held_acks_{0};

    std::thread thread_;
};

}  // namespace softndk::emu
