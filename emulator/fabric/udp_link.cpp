#include "fabric/udp_link.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "device/log.hpp"
#include "fabric/fabric.hpp"
#include "wire/frame.hpp"
#include "wire/icrc.hpp"

// ThreadSanitizer cannot see that a datagram sent is a datagram received: the
// kernel carries the happens-before. When both ends live in one process (the
// tests), a release before every send and an acquire after every receive on one
// token tell it so; without TSan these are no-ops.
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
namespace {
char tsan_wire;
void wire_release() {
    __tsan_release(&tsan_wire);
}
void wire_acquire() {
    __tsan_acquire(&tsan_wire);
}
}  // namespace
#else
namespace {
void wire_release() {}
void wire_acquire() {}
}  // namespace
#endif

namespace softndk::emu {

namespace {

constexpr std::array<uint8_t, 4> kCmMagic{'S', 'C', 'M', '1'};
constexpr size_t kCmDatagramBytes =
    wire::kBthSize + kCmMagic.size() + sizeof(cm::Message) + wire::kIcrcSize;
constexpr size_t kMaxDatagram = 65536;

sockaddr_storage to_sockaddr(const wire::IpAddr &ip, uint16_t port, socklen_t &length) {
    sockaddr_storage s{};
    if (ip.is_v4()) {
        auto *v4 = reinterpret_cast<sockaddr_in *>(&s);
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        std::memcpy(&v4->sin_addr, &ip.bytes[12], 4);
        length = sizeof(sockaddr_in);
    } else {
        auto *v6 = reinterpret_cast<sockaddr_in6 *>(&s);
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        std::memcpy(&v6->sin6_addr, ip.bytes.data(), 16);
        length = sizeof(sockaddr_in6);
    }
    return s;
}

wire::IpAddr from_sockaddr(const sockaddr_storage &s, uint16_t &port) {
    wire::IpAddr ip{};
    if (s.ss_family == AF_INET) {
        const auto *v4 = reinterpret_cast<const sockaddr_in *>(&s);
        ip = wire::IpAddr::v4(0, 0, 0, 0);
        std::memcpy(&ip.bytes[12], &v4->sin_addr, 4);
        port = ntohs(v4->sin_port);
    } else {
        const auto *v6 = reinterpret_cast<const sockaddr_in6 *>(&s);
        std::memcpy(ip.bytes.data(), &v6->sin6_addr, 16);
        port = ntohs(v6->sin6_port);
    }
    return ip;
}

auto &log() {
    return logger(Component::kFabric);
}

std::string ip_text(const wire::IpAddr &ip) {
    char text[INET6_ADDRSTRLEN] = {};
    if (ip.is_v4())
        ::inet_ntop(AF_INET, &ip.bytes[12], text, sizeof text);
    else
        ::inet_ntop(AF_INET6, ip.bytes.data(), text, sizeof text);
    return text;
}

}  // namespace

UdpLink::UdpLink(uint16_t port, Receiver receiver) : port_(port), receiver_(std::move(receiver)) {
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    // IPv4 frames go out through a raw socket, so that the IP header the ICRC covers
    // is ours (udp_link.hpp). Without CAP_NET_RAW, the UDP sockets.
    const char *raw = std::getenv("SOFTNDK_FABRIC_RAW");
    if (raw == nullptr || std::string(raw) != "off") {
        raw_fd_ = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_RAW);
        if (raw_fd_ < 0) {
            log().warn(
                "RoCEv2/UDP: no raw socket ({}): IPv4 frames leave with the kernel's IP "
                "identification, so their ICRC fails at a real RoCEv2 peer (SoftNDK peers "
                "accept them); grant CAP_NET_RAW or use IPv6",
                std::strerror(errno));
        } else {
            const int buffer_bytes = 8 << 20;
            if (::setsockopt(raw_fd_, SOL_SOCKET, SO_SNDBUFFORCE, &buffer_bytes,
                             sizeof buffer_bytes) != 0)
                ::setsockopt(raw_fd_, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
        }
    }
    thread_ = std::thread([this] { run(); });
}

UdpLink::~UdpLink() {
    stopping_.store(true, std::memory_order_release);
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
    thread_.join();
    std::lock_guard lock(mutex_);
    for (const Socket &s : sockets_)
        ::close(s.fd);
    if (raw_fd_ >= 0) ::close(raw_fd_);
    ::close(wake_fd_);
}

bool UdpLink::bind(uint32_t vport, std::span<const wire::IpAddr> addresses) {
    std::vector<Socket> bound;
    for (const wire::IpAddr &ip : addresses) {
        const int fd =
            ::socket(ip.is_v4() ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        socklen_t length = 0;
        const sockaddr_storage at = to_sockaddr(ip, port_, length);
        if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr *>(&at), length) != 0) {
            log().error("RoCEv2/UDP: cannot bind {}:{}: {}", ip_text(ip), port_,
                        std::strerror(errno));
            if (fd >= 0) ::close(fd);
            for (const Socket &s : bound)
                ::close(s.fd);
            return false;
        }
        // A window of 4 KiB packets arrives back to back: a default-sized receive
        // buffer (~200 KiB) overflows and costs an ACK timeout per lost tail. Ask for
        // 8 MiB, beyond rmem_max if allowed (CAP_NET_ADMIN), else as much as allowed.
        const int buffer_bytes = 8 << 20;
        for (const auto &[force, plain] :
             {std::pair{SO_RCVBUFFORCE, SO_RCVBUF}, std::pair{SO_SNDBUFFORCE, SO_SNDBUF}}) {
            if (::setsockopt(fd, SOL_SOCKET, force, &buffer_bytes, sizeof buffer_bytes) != 0)
                ::setsockopt(fd, SOL_SOCKET, plain, &buffer_bytes, sizeof buffer_bytes);
        }
        bound.push_back(Socket{vport, ip, fd});
        log().info("RoCEv2/UDP: vport {} on {}:{}", vport, ip_text(ip), port_);
    }
    {
        std::lock_guard lock(mutex_);
        sockets_.insert(sockets_.end(), bound.begin(), bound.end());
    }
    version_.fetch_add(1, std::memory_order_release);
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
    return true;
}

void UdpLink::unbind(uint32_t vport) {
    // The receive thread may be inside poll() on these fds: shut them down (poll
    // reports them) and let the thread's next snapshot drop them before they close.
    std::vector<int> retired;
    {
        std::lock_guard lock(mutex_);
        std::erase_if(sockets_, [&](const Socket &s) {
            if (s.vport != vport) return false;
            retired.push_back(s.fd);
            return true;
        });
    }
    if (retired.empty()) return;
    version_.fetch_add(1, std::memory_order_release);
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
    // Wait until the thread has taken a snapshot without them, then close (at once
    // when called from that thread: it is not inside poll()).
    const uint32_t target = version_.load(std::memory_order_acquire);
    while (std::this_thread::get_id() != thread_.get_id() &&
           seen_version_.load(std::memory_order_acquire) < target &&
           !stopping_.load(std::memory_order_acquire)) {
        std::this_thread::yield();
    }
    for (int fd : retired)
        ::close(fd);
}

int UdpLink::socket_for(const wire::IpAddr &address) const {
    std::lock_guard lock(mutex_);
    for (const Socket &s : sockets_) {
        if (s.address == address) return s.fd;
    }
    return -1;
}

bool UdpLink::owns_socket_for(const wire::IpAddr &address) const {
    return socket_for(address) >= 0;
}

bool UdpLink::send_to(int fd, const wire::IpAddr &to, uint16_t port,
                      std::span<const uint8_t> bytes) {
    socklen_t length = 0;
    const sockaddr_storage dst = to_sockaddr(to, port, length);
    wire_release();
    if (::sendto(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr *>(&dst), length) < 0) {
        // A full socket buffer or an unreachable peer: the datagram is lost, as on a
        // wire; RC retransmission or the CM timeout deals with it.
        log().debug("RoCEv2: send to {} failed: {}", ip_text(to), std::strerror(errno));
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    sent_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

bool UdpLink::send_frame(int fd, const wire::IpAddr &to, std::span<const uint8_t> frame) {
    const bool v4 = to.is_v4();
    // The raw socket: the IP header is ours (IPPROTO_RAW implies IP_HDRINCL), the port
    // unused.
    if (v4 && raw_fd_ >= 0)
        return send_to(raw_fd_, to, 0, frame.subspan(wire::kEthernetHeaderSize));
    const size_t l3 = v4 ? wire::kIpv4HeaderSize : wire::kIpv6HeaderSize;
    const size_t skip = wire::kEthernetHeaderSize + l3 + wire::kUdpHeaderSize;
    return send_to(fd, to, port_, frame.subspan(skip));
}

bool UdpLink::send(const Packet &packet) {
    const int fd = socket_for(packet.desc.meta.src_ip);
    if (fd < 0) return false;
    wire::PacketDescriptor desc = packet.desc;
    desc.meta.udp_src_port = port_;  // the UDP header the datagram leaves with
    desc.meta.udp_dst_port = port_;
    std::vector<uint8_t> frame = wire::serialize_frame(desc);
    if (frame.empty()) return false;
    if (packet.icrc_corrupt) frame.back() ^= 0xff;  // the receiver's ICRC check fails
    return send_frame(fd, desc.meta.dst_ip, frame);
}

namespace {

// The CM datagram's IB part without the ICRC: BTH (kCmOpcode, P_Key 0xFFFF, QP 1, PSN 0),
// magic, message.
std::array<uint8_t, kCmDatagramBytes - wire::kIcrcSize> cm_ib_packet(const cm::Message &message) {
    std::array<uint8_t, kCmDatagramBytes - wire::kIcrcSize> ib{};
    ib[0] = UdpLink::kCmOpcode;
    ib[2] = 0xFF;  // P_Key
    ib[3] = 0xFF;
    ib[7] = static_cast<uint8_t>(UdpLink::kCmQp);
    std::memcpy(ib.data() + wire::kBthSize, kCmMagic.data(), kCmMagic.size());
    std::memcpy(ib.data() + wire::kBthSize + kCmMagic.size(), &message, sizeof message);
    return ib;
}

wire::PacketMeta cm_meta(const wire::IpAddr &from, const wire::IpAddr &to, uint16_t source_port,
                         uint16_t destination_port) {
    wire::PacketMeta meta{};
    meta.src_ip = from;
    meta.dst_ip = to;
    meta.udp_src_port = source_port;
    meta.udp_dst_port = destination_port;
    meta.hop_limit = 64;
    return meta;
}

}  // namespace

bool UdpLink::send_cm(const cm::Message &message) {
    const int fd = socket_for(message.source_ip);
    if (fd < 0) return false;
    if (message.source_ip.is_v4() != message.destination_ip.is_v4()) return false;
    const auto ib = cm_ib_packet(message);
    const std::vector<uint8_t> frame =
        wire::frame_ib_packet(cm_meta(message.source_ip, message.destination_ip, port_, port_), ib);
    if (frame.empty()) return false;
    return send_frame(fd, message.destination_ip, frame);
}

void UdpLink::handle_datagram(const Socket &socket, std::span<const uint8_t> bytes,
                              const wire::IpAddr &from, uint16_t from_port) {
    received_.fetch_add(1, std::memory_order_relaxed);
    auto drop = [&](const char *why) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        log().debug("RoCEv2/UDP: dropped a {}-byte datagram from {}: {}", bytes.size(),
                    ip_text(from), why);
    };
    if (!bytes.empty() && bytes[0] == kCmOpcode) {
        if (bytes.size() != kCmDatagramBytes ||
            std::memcmp(bytes.data() + wire::kBthSize, kCmMagic.data(), kCmMagic.size()) != 0) {
            return drop("malformed CM message");
        }
        cm::Message message;
        std::memcpy(&message, bytes.data() + wire::kBthSize + kCmMagic.size(), sizeof message);
        if (from.is_v4() != socket.address.is_v4()) return drop("CM message of another family");
        // The ICRC, recomputed over the headers this datagram really had.
        const std::vector<uint8_t> frame =
            wire::frame_ib_packet(cm_meta(from, socket.address, from_port, port_),
                                  bytes.first(bytes.size() - wire::kIcrcSize));
        if (frame.size() < wire::kIcrcSize ||
            std::memcmp(frame.data() + frame.size() - wire::kIcrcSize,
                        bytes.data() + bytes.size() - wire::kIcrcSize, wire::kIcrcSize) != 0) {
            return drop("CM message with a bad ICRC");
        }
        // Answers go where the message really came from; it can only be for us.
        if (message.source_ip != from || message.destination_ip != socket.address)
            return drop("CM message with addresses that do not match its datagram");
        if (message.private_data_bytes > sizeof message.private_data)
            return drop("CM message with too much private data");
        receiver_.cm(message);
        return;
    }
    if (bytes.size() < wire::kIcrcSize) return drop("shorter than an ICRC");
    Packet packet;
    wire::PacketDescriptor &d = packet.desc;
    if (wire::parse_ib_packet(bytes.first(bytes.size() - wire::kIcrcSize), d) !=
        wire::WireStatus::kOk) {
        return drop("not a RoCEv2 transport packet");
    }
    d.meta.src_ip = from;
    d.meta.dst_ip = socket.address;
    d.meta.udp_src_port = from_port;
    d.meta.udp_dst_port = port_;
    // The ICRC, recomputed over the headers this datagram really had.
    const std::vector<uint8_t> frame = wire::serialize_frame(d);
    if (frame.size() < wire::kIcrcSize ||
        std::memcmp(frame.data() + frame.size() - wire::kIcrcSize,
                    bytes.data() + bytes.size() - wire::kIcrcSize, wire::kIcrcSize) != 0) {
        return drop("bad ICRC");
    }
    packet.own_payload(d.payload);
    receiver_.packet(std::move(packet));
}

void UdpLink::run() {
    std::vector<Socket> local;
    std::vector<pollfd> fds;
    std::vector<uint8_t> buffer(kMaxDatagram);
    uint32_t seen = ~0u;
    while (!stopping_.load(std::memory_order_acquire)) {
        const uint32_t v = version_.load(std::memory_order_acquire);
        if (v != seen) {
            std::lock_guard lock(mutex_);
            local = sockets_;
            seen = v;
            seen_version_.store(v, std::memory_order_release);
        }
        fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
        for (const Socket &s : local)
            fds.push_back(pollfd{s.fd, POLLIN, 0});
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            log().error("RoCEv2/UDP: poll: {}", std::strerror(errno));
            return;
        }
        if (fds[0].revents != 0) {
            uint64_t drained = 0;
            [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &drained, sizeof drained);
            continue;  // the socket set changed, or stop
        }
        for (size_t i = 1; i < fds.size(); ++i) {
            if ((fds[i].revents & POLLIN) == 0) continue;
            const Socket &s = local[i - 1];
            for (;;) {  // everything queued on this socket, then poll again
                sockaddr_storage from{};
                socklen_t from_length = sizeof from;
                const ssize_t n = ::recvfrom(s.fd, buffer.data(), buffer.size(), MSG_TRUNC,
                                             reinterpret_cast<sockaddr *>(&from), &from_length);
                if (n < 0) break;
                wire_acquire();
                uint16_t from_port = 0;
                const wire::IpAddr from_ip = from_sockaddr(from, from_port);
                if (static_cast<size_t>(n) > buffer.size()) {
                    received_.fetch_add(1, std::memory_order_relaxed);
                    dropped_.fetch_add(1, std::memory_order_relaxed);
                    continue;
                }
                handle_datagram(s, std::span(buffer).first(static_cast<size_t>(n)), from_ip,
                                from_port);
            }
        }
    }
}

}  // namespace softndk::emu
