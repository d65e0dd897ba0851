#include "fabric/fabric.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <variant>

#include "device/log.hpp"
#include "wire/frame.hpp"
#include "wire/psn.hpp"

namespace softndk::emu {
namespace {

struct PacketItem {
    Fabric *fabric;
    Packet packet;
    bool local_only = false;  // arrived through the UDP link
};
struct CmItem {
    Fabric *fabric;
    cm::Message message;
    bool local_only = false;
};
using Item = std::variant<PacketItem, CmItem, std::function<void()>>;

// The calling thread's queue. A vector read from `next`, not a std::deque: a deque of
// items this large frees and allocates a node every item or two, twice per message on
// the data path, where the vector keeps its capacity from one drain to the next.
struct Outbox {
    std::vector<Item> items;
    size_t next = 0;  // items[next..] are queued; drain() takes them from here
    bool draining = false;
    // Fabric::drain_memo's slots, emptied when the drain ends.
    struct Memo {
        const void *owner = nullptr;
        uint64_t key = 0;
        std::shared_ptr<void> value;
    };
    std::array<Memo, 4> memo{};
    uint32_t memo_next = 0;  // the slot a miss takes (round robin)
};
thread_local Outbox tls_outbox;

// Fabric::routes_version_'s values.
std::atomic<uint64_t> route_versions{0};

// A thread's last route() answers. Four, because a ping-pong routes to two addresses
// (the data one way, the ACK back) and a thread may serve a few connections.
struct RouteCache {
    struct Entry {
        const Fabric *fabric = nullptr;
        uint64_t version = 0;
        wire::IpAddr ip{};
        uint32_t vport = 0;
        Port *port = nullptr;
    };
    std::array<Entry, 4> entries{};
    uint32_t next = 0;  // the entry a miss replaces (round robin)
};
thread_local RouteCache tls_routes;

}  // namespace

// The trampoline needs private access to deliver(); a small friend-free shim.
struct FabricAccess {
    static void deliver(Fabric &f, Packet &p, bool local_only) { f.deliver(p, local_only); }
    static void deliver_cm(Fabric &f, const cm::Message &m, bool local_only) {
        f.deliver_cm(m, local_only);
    }
};

void Packet::own_payload(std::span<const uint8_t> bytes) {
    // Not zeroed first: every byte is written at once (a memset per received packet was
    // 3 % of a UDP receiver's cycles).
    owned = std::make_unique_for_overwrite<uint8_t[]>(bytes.size() == 0 ? 1 : bytes.size());
    if (!bytes.empty()) std::memcpy(owned.get(), bytes.data(), bytes.size());
    desc.payload = {owned.get(), bytes.size()};
}

wire::PacketDescriptor Packet::run_packet(uint32_t k) const {
    wire::PacketDescriptor d = desc;
    const auto n = static_cast<uint32_t>(run.size());
    d.bth.psn = wire::psn_add(desc.bth.psn, k);
    if (k != 0) d.bth.opcode = k + 1 == n ? run_last_opcode : wire::middle_opcode(desc.bth.opcode);
    d.bth.ack_req = run[k].ack_req;
    d.bth.solicited = desc.bth.solicited && k + 1 == n;
    const size_t offset = std::min<size_t>(size_t{k} * run_mtu, desc.payload.size());
    d.payload =
        desc.payload.subspan(offset, std::min<size_t>(run_mtu, desc.payload.size() - offset));
    return d;
}

std::vector<Packet> split_run(Packet &&packet) {
    std::vector<Packet> out;
    if (!packet.is_run()) {
        out.push_back(std::move(packet));
        return out;
    }
    const auto n = static_cast<uint32_t>(packet.run.size());
    out.resize(n);
    for (uint32_t k = 0; k < n; ++k) {
        out[k].desc = packet.run_packet(k);
        out[k].time_ns = packet.run[k].time_ns;
    }
    out.back().departure_hold = std::move(packet.departure_hold);
    return out;
}

Fabric::Fabric() {
    if (const char *path = std::getenv("SOFTNDK_PCAP"); path != nullptr && *path != '\0') {
        if (!capture_to(path)) logger(Component::kFabric).error("cannot capture to {}", path);
    }
    // SOFTNDK_FABRIC=local (default) | udp | udp:PORT
    if (const char *f = std::getenv("SOFTNDK_FABRIC"); f != nullptr && *f != '\0') {
        const std::string value = f;
        if (value == "udp") {
            start_udp(UdpLink::kRoceV2Port);
        } else if (value.rfind("udp:", 0) == 0) {
            char *end = nullptr;
            const unsigned long port = std::strtoul(value.c_str() + 4, &end, 10);
            if (*end != '\0' || port == 0 || port > 65535)
                throw std::runtime_error("SOFTNDK_FABRIC: bad UDP port in '" + value + "'");
            start_udp(static_cast<uint16_t>(port));
        } else if (value != "local") {
            throw std::runtime_error("SOFTNDK_FABRIC: '" + value +
                                     "' is not local, udp or udp:PORT");
        }
    }
}

Fabric::Fabric(uint16_t udp_port, std::chrono::nanoseconds hand_off) {
    if (udp_port != 0) start_udp(udp_port, hand_off);
}

void Fabric::start_udp(uint16_t port, std::chrono::nanoseconds hand_off) {
    // Frames that arrive are handed over on the link's thread, which drains them like
    // any thread entering the device from outside.
    udp_ = std::make_unique<UdpLink>(
        port,
        UdpLink::Receiver{[this](Packet &&p) {
                              // The payload lies in the link's receive buffer until this
                              // returns (UdpLink::Receiver): drain() delivers it now, unless
                              // this thread is draining already, and then it waits in the
                              // outbox with a copy of its own.
                              if (tls_outbox.draining) p.own_payload(p.desc.payload);
                              tls_outbox.items.emplace_back(PacketItem{this, std::move(p), true});
                              drain();
                          },
                          [this](const cm::Message &m) {
                              tls_outbox.items.emplace_back(CmItem{this, m, true});
                              drain();
                          }},
        hand_off);
}

Fabric::~Fabric() = default;

std::shared_ptr<Fabric> Fabric::process_fabric() {
    static std::shared_ptr<Fabric> fabric = std::make_shared<Fabric>();
    return fabric;
}

uint32_t Fabric::attach(Port *port, std::span<const wire::IpAddr> addresses) {
    std::unique_lock lock(routes_mutex_);
    for (const auto &ip : addresses) {
        for (const auto &r : routes_) {
            if (r.ip == ip) return 0;
        }
    }
    const uint32_t vport = next_vport_++;
    for (const auto &ip : addresses)
        routes_.push_back(Route{ip, vport, port});
    routes_version_.store(route_versions.fetch_add(1, std::memory_order_relaxed) + 1,
                          std::memory_order_release);
    lock.unlock();
    // Without its sockets the port still works inside the process (bind logged why).
    if (udp_) udp_->bind(vport, addresses);
    return vport;
}

void Fabric::detach(uint32_t vport) {
    if (udp_) udp_->unbind(vport);
    std::unique_lock lock(routes_mutex_);
    std::erase_if(routes_, [vport](const Route &r) { return r.vport == vport; });
    routes_version_.store(route_versions.fetch_add(1, std::memory_order_relaxed) + 1,
                          std::memory_order_release);
}

Port *Fabric::route(const wire::IpAddr &ip, uint32_t &vport) const {
    // A cached answer holds as long as the table has not changed since it was read. (The
    // Port it names is used after any lock is gone either way: a port detaches only once
    // no packet can reach it, Device::~Device.)
    RouteCache &cache = tls_routes;
    const uint64_t version = routes_version_.load(std::memory_order_acquire);
    for (const RouteCache::Entry &e : cache.entries) {
        if (e.fabric == this && e.version == version && e.ip == ip) {
            vport = e.vport;
            return e.port;
        }
    }
    std::shared_lock lock(routes_mutex_);
    RouteCache::Entry &e = cache.entries[cache.next++ % cache.entries.size()];
    e = RouteCache::Entry{this, routes_version_.load(std::memory_order_relaxed), ip, 0, nullptr};
    for (const auto &r : routes_) {
        if (r.ip == ip) {
            e.vport = r.vport;
            e.port = r.port;
            break;
        }
    }
    vport = e.vport;
    return e.port;
}

bool Fabric::reachable(const wire::IpAddr &ip) const {
    uint32_t vport = 0;
    // Over UDP any address may have a peer; one that has none shows as a CM timeout.
    return route(ip, vport) != nullptr || udp_ != nullptr;
}

void Fabric::send(Packet &&packet) {
    // A packet that leaves through the UDP link goes at once, while the sender still
    // holds its QP lock: that lock orders the QP's packets, as a NIC's transmit
    // pipeline does. Queued, packets of one QP queued by two threads (the poster and
    // the link thread that received an ACK) could leave out of PSN order, and every
    // reordering costs a NAK and a go-back-N.
    uint32_t vport = 0;
    if (udp_ && route(packet.desc.meta.dst_ip, vport) == nullptr) {
        deliver(packet, false);
        return;
    }
    tls_outbox.items.emplace_back(PacketItem{this, std::move(packet)});
}

void Fabric::send_cm(const cm::Message &message) {
    uint32_t vport = 0;
    if (udp_ && route(message.destination_ip, vport) == nullptr) {
        deliver_cm(message, false);
        return;
    }
    tls_outbox.items.emplace_back(CmItem{this, message});
}

void Fabric::defer(std::function<void()> task) {
    tls_outbox.items.emplace_back(std::move(task));
}

void Fabric::drain() {
    Outbox &box = tls_outbox;
    if (box.draining) return;
    box.draining = true;
    for (;;) {
        while (box.next < box.items.size()) {
            // Moved out first: handling it may queue more, and the vector may grow.
            Item item = std::move(box.items[box.next++]);
            if (box.next == box.items.size()) {
                box.items.clear();  // keeps the capacity
                box.next = 0;
            } else if (box.next >= 4096 && 2 * box.next >= box.items.size()) {
                // A queue that never empties: drop the taken half now and then.
                box.items.erase(box.items.begin(), box.items.begin() + box.next);
                box.next = 0;
            }
            if (auto *p = std::get_if<PacketItem>(&item)) {
                FabricAccess::deliver(*p->fabric, p->packet, p->local_only);
            } else if (auto *c = std::get_if<CmItem>(&item)) {
                FabricAccess::deliver_cm(*c->fabric, c->message, c->local_only);
            } else {
                std::get<std::function<void()>>(item)();
            }
        }
        // Let go of what the drain held: taken out of the memo first, so that a teardown
        // finds it empty. The last reference to an object may go here, and whatever its
        // destruction queues is delivered by this drain, not left behind.
        { auto released = std::exchange(box.memo, {}); }
        if (box.next >= box.items.size()) break;
    }
    box.draining = false;
}

std::shared_ptr<void> *Fabric::drain_memo(const void *owner, uint64_t key) {
    Outbox &box = tls_outbox;
    if (!box.draining) return nullptr;
    for (auto &m : box.memo) {
        if (m.owner == owner && m.key == key) return &m.value;
    }
    auto &slot = box.memo[box.memo_next];
    box.memo_next = (box.memo_next + 1) % box.memo.size();
    slot = {owner, key, nullptr};
    return &slot.value;
}

void Fabric::forget_drain_memo(const void *owner) {
    for (auto &m : tls_outbox.memo) {
        if (m.owner == owner) m = {};
    }
}

void Fabric::deliver(Packet &packet, bool local_only) {
    // The packet leaves its device here, whatever happens to it next; released before
    // the destination sees it, so nothing the destination does in answer can find it held.
    packet.departure_hold.reset();
    uint32_t vport = 0;
    Port *port = route(packet.desc.meta.dst_ip, vport);
    const bool leaves = port == nullptr && !local_only && udp_ != nullptr;
    if (port == nullptr && !leaves) {
        logger(Component::kFabric)
            .debug("no route for a packet to qp#{}, dropped", packet.desc.bth.dest_qp);
        return;
    }
    packet.desc.meta.dst_vport = vport;  // 0 when it leaves the process
    if (packet.is_run() && leaves && !drop_set_.load(std::memory_order_acquire) &&
        !capturing_.load(std::memory_order_acquire)) {
        // Nothing here looks at single packets: the link sends the run's datagrams with
        // few system calls (UdpLink::send_run), the same datagrams as split one by one.
        if (!udp_->send_run(packet))
            logger(Component::kFabric)
                .debug("no UDP socket for a run from its source address, dropped");
        return;
    }
    if (packet.is_run() &&
        (leaves || !port->accepts_runs() || drop_set_.load(std::memory_order_acquire) ||
         capturing_.load(std::memory_order_acquire))) {
        // Something here looks at single packets (Packet::run): hand them over one by one.
        for (Packet &one : split_run(std::move(packet)))
            deliver(one, local_only);
        return;
    }
    if (drop_set_.load(std::memory_order_acquire)) {  // no lock per packet without a filter
        std::lock_guard lock(fault_mutex_);
        if (drop_ && drop_(packet)) {
            ++dropped_;
            logger(Component::kFabric)
                .debug("fault: dropped {} psn {:#x} to qp#{}",
                       wire::to_string(packet.desc.bth.opcode), packet.desc.bth.psn,
                       packet.desc.bth.dest_qp);
            return;
        }
    }
    // What leaves carries the link's port as its UDP source port (the kernel's
    // choice, not rxe's per-QP entropy): the capture shows it as it was sent.
    if (leaves) packet.desc.meta.udp_src_port = udp_->port();
    if (leaves && !udp_->send(packet)) {
        logger(Component::kFabric)
            .debug("no UDP socket for a packet from its source address, dropped");
        return;
    }
    capture(packet);
    if (packet.is_run()) {
        runs_delivered_.fetch_add(1, std::memory_order_relaxed);
        run_packets_delivered_.fetch_add(packet.run.size(), std::memory_order_relaxed);
    }
    if (!leaves) port->receive(packet);
}

void Fabric::deliver_cm(const cm::Message &message, bool local_only) {
    uint32_t vport = 0;
    Port *port = route(message.destination_ip, vport);
    if (port == nullptr && !local_only && udp_ && udp_->send_cm(message)) return;
    if (port == nullptr) {
        logger(Component::kFabric).debug("no route for a CM message, dropped");
        return;
    }
    port->receive_cm(message);
}

void Fabric::set_drop_filter(std::function<bool(const Packet &)> drop) {
    std::lock_guard lock(fault_mutex_);
    drop_ = std::move(drop);
    drop_set_.store(static_cast<bool>(drop_), std::memory_order_release);
}

uint64_t Fabric::dropped_packets() const {
    std::lock_guard lock(fault_mutex_);
    return dropped_;
}

bool Fabric::capture_to(const std::string &path) {
    auto file = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
    if (!*file) return false;
    std::lock_guard lock(capture_mutex_);
    capture_.reset();
    capture_file_ = std::move(file);
    capture_ = std::make_unique<wire::PcapWriter>(*capture_file_);
    captured_ = 0;
    capturing_.store(true, std::memory_order_release);
    return capture_->ok();
}

uint64_t Fabric::captured_packets() const {
    std::lock_guard lock(capture_mutex_);
    return captured_;
}

void Fabric::capture(const Packet &packet) {
    if (!capturing_.load(std::memory_order_acquire)) return;  // no lock per packet when off
    std::lock_guard lock(capture_mutex_);
    if (!capture_) return;
    auto frame = wire::serialize_frame(packet.desc);
    if (!frame.empty() && packet.icrc_corrupt) frame.back() ^= 0xff;  // the ICRC's last byte
    if (frame.empty()) {
        logger(Component::kFabric)
            .warn("packet to qp#{} cannot be serialised for pcap", packet.desc.bth.dest_qp);
        return;
    }
    capture_->write(packet.time_ns, frame);
    capture_file_->flush();
    ++captured_;
}

}  // namespace softndk::emu
