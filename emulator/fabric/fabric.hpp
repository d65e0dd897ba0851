// fabric.hpp - the in-host switch between virtual RNIC ports.
//
// Ports attach with their IP addresses (IPv4 as IPv4-mapped IPv6, wire::IpAddr);
// the switch routes every frame on its destination address. Two frame kinds
// travel: RoCEv2 packets (wire::PacketDescriptor with the payload by reference)
// and connection-manager messages (cm::Message).
//
// Threading model: run to completion with a per-thread trampoline.
//   - Engines never deliver inline. While holding a QP lock they queue frames on
//     the calling thread's outbox (send()); the lock is dropped before delivery.
//   - Whoever entered the device from outside (a doorbell, a command, a timer)
//     calls drain() with no lock held: it delivers queued frames one at a time
//     (the receiver locks its QP, runs responder/completer, may queue more) until
//     the outbox is empty. A drain() nested inside a delivery is a no-op, so the
//     stack never grows with the conversation.
//   - defer() queues a task on the same outbox (e.g. "move QP n to error"), for
//     work that needs a lock the current code may not take.
// A packet's payload must stay valid until it is delivered: requesters reference
// registered consumer memory (the WQE cannot complete before the packet is
// acknowledged), anything else (inline data, gathers spanning several SGEs) is
// copied into Packet::owned.
//
// Capture: if SOFTNDK_PCAP names a file when the fabric is created (or
// capture_to() is called), every RoCEv2 packet delivered is serialised with
// wire::serialize_frame (real Ethernet/IP/UDP headers and ICRC) and written
// with the virtual-clock time. CM messages are not captured.
//
// Beyond the process: with SOFTNDK_FABRIC=udp[:PORT] (or a UDP port given to the
// constructor) frames for addresses no local port owns travel as real RoCEv2/UDP
// datagrams through a UdpLink (udp_link.hpp); frames that arrive that way are
// delivered to local ports only, on the link's thread or on a consumer's thread that
// polls (poll_link()), like any thread entering the device from outside.
#pragma once

#include <atomic>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "cm/messages.hpp"
#include "fabric/udp_link.hpp"
#include "wire/packet.hpp"
#include "wire/pcap_writer.hpp"

namespace softndk::emu {

struct Packet {
    wire::PacketDescriptor desc{};
    std::unique_ptr<uint8_t[]> owned;  // payload copy when it could not be referenced
    uint64_t time_ns = 0;              // sender's virtual time when the packet left
    // Fault injection (device/faults.hpp): the packet was corrupted on the way, so the
    // receiver's ICRC check fails (a capture shows the bad ICRC); and a packet the
    // injector already handled once (a delayed or held copy) is not matched again.
    bool icrc_corrupt = false;
    bool fault_exempt = false;
    // Let go when the packet leaves its device: at the top of Fabric::deliver (handed to
    // the destination port, sent out through the UDP link, or found unroutable or dropped
    // there), or when the packet is destroyed without getting that far (a fault injector's
    // drop). A responder hangs a READ's responder resource on the READ's last response
    // (rc/responder.cpp), so the resource is free once that response has left, in the
    // order the fabric moves packets and not by any clock. Copies (FaultInjector::copy_of)
    // do not share it.
    std::shared_ptr<void> departure_hold;

    // Packet coalescing. A non-empty `run` makes this one descriptor stand for
    // run.size() >= 2 packets of ONE message with consecutive PSNs from desc.bth.psn:
    // desc.bth.opcode is the first packet's opcode, run_last_opcode the last one's, and
    // those between are MIDDLE. Every packet carries run_mtu payload bytes except possibly
    // the last, back to back in desc.payload, which is always referenced (never `owned`).
    // run[k] is packet k's model time (when it reached the far port) and AckReq; solicited
    // applies to the last packet; time_ns is the last packet's time.
    //
    // Why: a 1 MiB transfer is 256 packets at a 4 KiB MTU, and handing each through the
    // outbox, a QP lock and its own memcpy cost more than the copy itself. A run is queued,
    // locked and placed once (the receiver copies each contiguous range in one go, see
    // rc/placement.hpp), while the timing model still prices every packet one by one, in
    // the same order, so model time is the same as without coalescing.
    //
    // Who sees runs: the engine builds them only when Device::coalescing() holds (functional
    // time, no trace, no armed faults) and delivers them only to ports that accept them
    // (Port::accepts_runs). Everything that must see single packets - the pcap capture, the
    // drop filter, the UDP link, a port that does not accept runs - gets the run split
    // first (split_run), so the wire, the trace and the faults see what they would have
    // seen without coalescing.
    struct RunEntry {
        uint64_t time_ns = 0;
        bool ack_req = false;
    };
    std::vector<RunEntry> run;
    wire::Opcode run_last_opcode = wire::Opcode::kSendOnly;
    uint32_t run_mtu = 0;

    bool is_run() const { return !run.empty(); }
    // Packet k (< run.size()) of the run: its descriptor, payload referenced.
    wire::PacketDescriptor run_packet(uint32_t k) const;

    // Copies `bytes` into owned storage and points the payload at it.
    void own_payload(std::span<const uint8_t> bytes);
};

// The packets a run stands for, in order, each with its own time and AckReq; the hold
// rides on the last. A packet that is not a run comes back as the only element.
std::vector<Packet> split_run(Packet &&packet);

// A virtual port. receive*() run on a draining thread with no fabric lock and no
// engine lock held; they may queue more frames.
class Port {
  public:
    virtual ~Port() = default;
    virtual void receive(Packet &packet) = 0;
    virtual void receive_cm(const cm::Message &message) = 0;
    // Whether receive() may be handed a run (Packet::run) right now; the fabric splits
    // runs for a port that says no. Called on draining threads, so it must be cheap.
    virtual bool accepts_runs() const { return false; }
};

class Fabric {
  public:
    Fabric();  // reads SOFTNDK_PCAP and SOFTNDK_FABRIC
    // A fabric whose RoCEv2/UDP link uses `udp_port` (0 = no link) and `hand_off` (the
    // link's shortest hand-off window, UdpLink), whatever the environment says: for tests.
    explicit Fabric(uint16_t udp_port,
                    std::chrono::nanoseconds hand_off = UdpLink::kDefaultHandOff);
    ~Fabric();
    Fabric(const Fabric &) = delete;
    Fabric &operator=(const Fabric &) = delete;

    // The process-wide fabric every embedded adapter attaches to.
    static std::shared_ptr<Fabric> process_fabric();

    // Attaches `port` under `addresses`. Returns its vport number (> 0), or 0 if
    // an address is already taken (nothing attached then). `port` must stay valid
    // until detach(); detach() must not race with deliveries to the port.
    uint32_t attach(Port *port, std::span<const wire::IpAddr> addresses);
    void detach(uint32_t vport);
    bool reachable(const wire::IpAddr &ip) const;

    // Queue on this thread's outbox (see above). desc.meta.dst_ip routes. A frame for
    // an address no local port owns, with a UDP link, leaves at once instead.
    void send(Packet &&packet);
    void send_cm(const cm::Message &message);  // routes on message.destination_ip
    static void defer(std::function<void()> task);

    // Delivers this thread's outbox until empty (no-op when nested).
    static void drain();

    // What a port looked up to deliver one packet of this thread's drain, kept for the
    // packets after it: a stream's packets of one drain go to the same few objects (an
    // 8 B WRITE stream's requests to one QP, its ACKs to another). The lookup it saves,
    // a shared table lock and a reference taken and dropped, each an atomic write to a
    // line every delivering thread shares, was ~8 % of a one-QP 8 B WRITE stream's
    // profile; with the memo, ~1 %. The slot for (owner, key): empty the first time in
    // this drain, for the caller to fill; what the caller stored after that. Slots are
    // few (a miss may evict another key's) and all are let go when the drain ends, so
    // nothing outlives the drain. Outside a drain, nullptr: nothing is kept. A held
    // object can be destroyed meanwhile, so a caller checks that what it finds is live
    // (a QP's `destroyed`) as after any lookup; were its number reused within the same
    // drain (QP numbers are reused longest-freed first), the new QP's packets of that
    // drain would find the old one and be dropped, as a stale table entry would.
    static std::shared_ptr<void> *drain_memo(const void *owner, uint64_t key);
    // Lets go of this thread's slots for `owner` (an owner about to be destroyed while
    // its objects may still be held by a drain of this thread).
    static void forget_drain_memo(const void *owner);

    // Fault injection: while set, every RoCEv2 packet for which `drop` returns true is
    // discarded before delivery (and not captured), as a lossy link would. Called on
    // draining threads, under an internal lock; must not call back into the fabric.
    // An empty function removes the filter.
    void set_drop_filter(std::function<bool(const Packet &)> drop);
    uint64_t dropped_packets() const;

    // Runs (Packet::run) handed to a port whole, and the packets they stood for: how much
    // of the traffic coalescing carried (tests, and `softndk stat`-style diagnostics).
    uint64_t runs_delivered() const { return runs_delivered_.load(std::memory_order_relaxed); }
    uint64_t run_packets_delivered() const {
        return run_packets_delivered_.load(std::memory_order_relaxed);
    }

    // The RoCEv2/UDP link, or nullptr when frames stay in the process.
    const UdpLink *udp_link() const { return udp_.get(); }
    // A consumer's polling thread receives what the UDP link has queued, inline
    // (UdpLink::poll_inline): true if anything arrived. False at once without a link.
    // Must be called with no engine lock held and not from inside a delivery.
    bool poll_link() { return udp_ != nullptr && udp_->poll_inline(); }
    // The consumer stops polling: the link's thread receives again (no-op without one).
    void stop_polling_link() {
        if (udp_ != nullptr) udp_->stop_inline_polling();
    }

    // Starts capturing to `path` (replacing any earlier capture). False on error.
    bool capture_to(const std::string &path);
    uint64_t captured_packets() const;

  private:
    friend struct FabricAccess;
    struct Route {
        wire::IpAddr ip;
        uint32_t vport;
        Port *port;
    };
    Port *route(const wire::IpAddr &ip, uint32_t &vport) const;
    // local_only: the frame came in through the UDP link and must not leave again.
    void deliver(Packet &packet, bool local_only);
    void deliver_cm(const cm::Message &message, bool local_only);
    void start_udp(uint16_t port, std::chrono::nanoseconds hand_off = UdpLink::kDefaultHandOff);
    void capture(const Packet &packet);

    mutable std::shared_mutex routes_mutex_;
    std::vector<Route> routes_;
    // Set by every attach and detach, under routes_mutex_, from one process-wide sequence
    // (no two fabrics ever share a value). route() runs for every packet; each thread
    // keeps its last few answers and trusts them, without a lock, while this is the
    // value they were read under.
    std::atomic<uint64_t> routes_version_{0};
    uint32_t next_vport_ = 1;

    mutable std::mutex fault_mutex_;
    std::function<bool(const Packet &)> drop_;
    std::atomic<bool> drop_set_{false};  // drop_ is non-empty: runs are split first
    uint64_t dropped_ = 0;

    mutable std::mutex capture_mutex_;
    std::unique_ptr<std::ofstream> capture_file_;
    std::unique_ptr<wire::PcapWriter> capture_;
    uint64_t captured_ = 0;
    std::atomic<bool> capturing_{false};  // capture_ is set: runs are split first
    std::atomic<uint64_t> runs_delivered_{0};
    std::atomic<uint64_t> run_packets_delivered_{0};

    std::unique_ptr<UdpLink> udp_;  // last: its thread delivers into the members above
};

}  // namespace softndk::emu
