#include "fabric/fabric.hpp"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <variant>

#include "device/log.hpp"
#include "wire/frame.hpp"

namespace softndk::emu {
namespace {

struct PacketItem {
    Fabric *fabric;
    Packet packet;
};
struct CmItem {
    Fabric *fabric;
    cm::Message message;
};
using Item = std::variant<PacketItem, CmItem, std::function<void()>>;

struct Outbox {
    std::deque<Item> items;
    bool draining = false;
};
thread_local Outbox tls_outbox;

}  // namespace

// The trampoline needs private access to deliver(); a small friend-free shim.
struct FabricAccess {
    static void deliver(Fabric &f, Packet &p) { f.deliver(p); }
    static void deliver_cm(Fabric &f, const cm::Message &m) { f.deliver_cm(m); }
};

void Packet::own_payload(std::span<const uint8_t> bytes) {
    owned = std::make_unique<uint8_t[]>(bytes.size() == 0 ? 1 : bytes.size());
    if (!bytes.empty()) std::memcpy(owned.get(), bytes.data(), bytes.size());
    desc.payload = {owned.get(), bytes.size()};
}

Fabric::Fabric() {
    if (const char *path = std::getenv("SOFTNDK_PCAP"); path != nullptr && *path != '\0') {
        if (!capture_to(path)) logger(Component::kFabric).error("cannot capture to {}", path);
    }
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
    return vport;
}

void Fabric::detach(uint32_t vport) {
    std::unique_lock lock(routes_mutex_);
    std::erase_if(routes_, [vport](const Route &r) { return r.vport == vport; });
}

Port *Fabric::route(const wire::IpAddr &ip, uint32_t &vport) const {
    std::shared_lock lock(routes_mutex_);
    for (const auto &r : routes_) {
        if (r.ip == ip) {
            vport = r.vport;
            return r.port;
        }
    }
    return nullptr;
}

bool Fabric::reachable(const wire::IpAddr &ip) const {
    uint32_t vport = 0;
    return route(ip, vport) != nullptr;
}

void Fabric::send(Packet &&packet) {
    tls_outbox.items.emplace_back(PacketItem{this, std::move(packet)});
}

void Fabric::send_cm(const cm::Message &message) {
    tls_outbox.items.emplace_back(CmItem{this, message});
}

void Fabric::defer(std::function<void()> task) {
    tls_outbox.items.emplace_back(std::move(task));
}

void Fabric::drain() {
    Outbox &box = tls_outbox;
    if (box.draining) return;
    box.draining = true;
    while (!box.items.empty()) {
        Item item = std::move(box.items.front());
        box.items.pop_front();
        if (auto *p = std::get_if<PacketItem>(&item)) {
            FabricAccess::deliver(*p->fabric, p->packet);
        } else if (auto *c = std::get_if<CmItem>(&item)) {
            FabricAccess::deliver_cm(*c->fabric, c->message);
        } else {
            std::get<std::function<void()>>(item)();
        }
    }
    box.draining = false;
}

void Fabric::deliver(Packet &packet) {
    uint32_t vport = 0;
    Port *port = route(packet.desc.meta.dst_ip, vport);
    if (port == nullptr) {
        logger(Component::kFabric)
            .debug("no route for a packet to qp#{}, dropped", packet.desc.bth.dest_qp);
        return;
    }
    packet.desc.meta.dst_vport = vport;
    {
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
    capture(packet);
    port->receive(packet);
}

void Fabric::deliver_cm(const cm::Message &message) {
    uint32_t vport = 0;
    Port *port = route(message.destination_ip, vport);
    if (port == nullptr) {
        logger(Component::kFabric).debug("no route for a CM message, dropped");
        return;
    }
    port->receive_cm(message);
}

void Fabric::set_drop_filter(std::function<bool(const Packet &)> drop) {
    std::lock_guard lock(fault_mutex_);
    drop_ = std::move(drop);
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
    return capture_->ok();
}

uint64_t Fabric::captured_packets() const {
    std::lock_guard lock(capture_mutex_);
    return captured_;
}

void Fabric::capture(const Packet &packet) {
    std::lock_guard lock(capture_mutex_);
    if (!capture_) return;
    const auto frame = wire::serialize_frame(packet.desc);
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
