#include "fabric/udp_link.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
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

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The thread inside a delivery of this link's frames (unbind() called from a Receiver
// callback must not wait for the receive lock its own thread holds).
thread_local const UdpLink *tls_receiving = nullptr;
// The thread inside poll_inline()'s delivery of this link's frames: the ACKs it sends are
// held (udp_link.hpp, "ACKs off the critical path").
thread_local const UdpLink *tls_holding_acks = nullptr;

}  // namespace

// ACKs held by inline polls: their datagrams back to back in `bytes`, each with the
// socket and destination it leaves through. Reused, so holding allocates only while
// the vectors grow.
struct UdpLink::HeldAcks {
    struct Datagram {
        int fd;
        sockaddr_storage to;
        socklen_t to_length;
        size_t offset;
        size_t bytes;
    };
    std::vector<uint8_t> bytes;
    std::vector<Datagram> datagrams;
    std::vector<iovec> vectors;
    std::vector<mmsghdr> headers;

    // Queues a datagram: last in line, or first (a request that leaves ahead of them).
    void add(int fd, const wire::IpAddr &to, uint16_t port, std::span<const uint8_t> payload,
             bool first) {
        Datagram d{};
        d.fd = fd;
        d.to = to_sockaddr(to, port, d.to_length);
        d.offset = bytes.size();
        d.bytes = payload.size();
        bytes.insert(bytes.end(), payload.begin(), payload.end());
        datagrams.insert(first ? datagrams.begin() : datagrams.end(), d);
    }
};

// recvmmsg's vectors, set up once: slot i receives into buffer[i * kMaxDatagram ...].
struct UdpLink::Batch {
    std::vector<uint8_t> buffer = std::vector<uint8_t>(size_t{kReceiveBatch} * kMaxDatagram);
    std::array<mmsghdr, kReceiveBatch> headers{};
    std::array<iovec, kReceiveBatch> vectors{};
    std::array<sockaddr_storage, kReceiveBatch> sources{};
    // Room for the UDP_GRO control message (the segment size of a GRO batch).
    struct alignas(cmsghdr) Control {
        std::array<char, CMSG_SPACE(sizeof(int))> bytes;
    };
    std::array<Control, kReceiveBatch> controls{};
    Batch() {
        for (size_t i = 0; i < kReceiveBatch; ++i) {
            vectors[i] = {buffer.data() + i * kMaxDatagram, kMaxDatagram};
            headers[i].msg_hdr.msg_name = &sources[i];
            headers[i].msg_hdr.msg_iov = &vectors[i];
            headers[i].msg_hdr.msg_iovlen = 1;
        }
    }
    // Before every recvmmsg: the kernel shortens the lengths it fills in.
    void reset() {
        for (size_t i = 0; i < kReceiveBatch; ++i) {
            headers[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
            headers[i].msg_hdr.msg_control = controls[i].bytes.data();
            headers[i].msg_hdr.msg_controllen = controls[i].bytes.size();
        }
    }
    // The segment size of datagram i if it is a GRO batch, else 0.
    static size_t gro_segment(const msghdr &header) {
        for (const cmsghdr *c = CMSG_FIRSTHDR(const_cast<msghdr *>(&header)); c != nullptr;
             c = CMSG_NXTHDR(const_cast<msghdr *>(&header), const_cast<cmsghdr *>(c))) {
            if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
                int size = 0;
                std::memcpy(&size, CMSG_DATA(c), sizeof size);
                return size > 0 ? static_cast<size_t>(size) : 0;
            }
        }
        return 0;
    }
};

namespace {
// The addresses of this host's interfaces (gso_to), IPv4 as IPv4-mapped.
std::vector<wire::IpAddr> host_addresses() {
    std::vector<wire::IpAddr> addresses;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return addresses;
    for (const ifaddrs *a = list; a != nullptr; a = a->ifa_next) {
        if (a->ifa_addr == nullptr) continue;
        if (a->ifa_addr->sa_family == AF_INET) {
            wire::IpAddr ip = wire::IpAddr::v4(0, 0, 0, 0);
            std::memcpy(&ip.bytes[12],
                        &reinterpret_cast<const sockaddr_in *>(a->ifa_addr)->sin_addr, 4);
            addresses.push_back(ip);
        } else if (a->ifa_addr->sa_family == AF_INET6) {
            wire::IpAddr ip{};
            std::memcpy(ip.bytes.data(),
                        &reinterpret_cast<const sockaddr_in6 *>(a->ifa_addr)->sin6_addr, 16);
            addresses.push_back(ip);
        }
    }
    ::freeifaddrs(list);
    return addresses;
}
}  // namespace

UdpLink::UdpLink(uint16_t port, Receiver receiver, std::chrono::nanoseconds hand_off)
    : port_(port),
      receiver_(std::move(receiver)),
      hand_off_min_ns_(hand_off.count()),
      hand_off_ns_(hand_off.count() * kHandOffGrowth),
      batch_(std::make_unique<Batch>()),
      held_(std::make_unique<HeldAcks>()) {
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    ready_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ready_fd_ < 0) {
        ::close(wake_fd_);
        throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
    }
    if (const char *gso = std::getenv("SOFTNDK_FABRIC_GSO");
        gso != nullptr && std::string(gso) == "off")
        gso_.store(false, std::memory_order_relaxed);
    host_addresses_ = host_addresses();
    // IPv4 frames go out through a raw socket, so that the IP header the ICRC covers
    // is ours (udp_link.hpp). Without CAP_NET_RAW, the UDP sockets.
    const char *raw = std::getenv("SOFTNDK_FABRIC_RAW");
    if (raw == nullptr || std::string(raw) != "off") {
        raw_fd_ = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_RAW);
        if (raw_fd_ < 0) {
            log().info(
                "RoCEv2/UDP: no raw socket ({}): IPv4 frames leave through the UDP sockets, "
                "with the kernel's IP header (DF, identification 0)",
                std::strerror(errno));
        } else {
            const int buffer_bytes = 8 << 20;
            if (::setsockopt(raw_fd_, SOL_SOCKET, SO_SNDBUFFORCE, &buffer_bytes,
                             sizeof buffer_bytes) != 0)
                ::setsockopt(raw_fd_, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
        }
    }
    thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "udp link");  // as top and gdb show it
        run();
    });
}

UdpLink::~UdpLink() {
    stopping_.store(true, std::memory_order_release);
    wake_thread();
    thread_.join();
    send_held_acks();
    std::lock_guard lock(mutex_);
    for (const Socket &s : sockets_)
        ::close(s.fd);
    if (raw_fd_ >= 0) ::close(raw_fd_);
    ::close(ready_fd_);
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
        // DF on every datagram, and no fragmentation: then the kernel writes identification
        // 0 into an unconnected socket's IPv4 header (RFC 6864's atomic datagram), the value
        // the ICRC was computed with, as the raw socket's frames carry (udp_link.hpp). A
        // frame above the path MTU fails to send (EMSGSIZE: a drop) instead of fragmenting,
        // as RoCEv2 requires.
        if (ip.is_v4()) {
            const int dont_fragment = IP_PMTUDISC_DO;
            if (::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &dont_fragment,
                             sizeof dont_fragment) != 0)
                log().warn(
                    "RoCEv2/UDP: {}: IP_MTU_DISCOVER: {}: the kernel chooses the IP "
                    "identification, and a real RoCEv2 peer fails the ICRC",
                    ip_text(ip), std::strerror(errno));
        }
        // GSO batches sent on loopback arrive whole, to be cut apart here (udp_link.hpp).
        // A kernel without UDP GRO segments them before they arrive, which works too.
        const int gro = 1;
        if (::setsockopt(fd, SOL_UDP, UDP_GRO, &gro, sizeof gro) != 0)
            log().debug("RoCEv2/UDP: {}: UDP_GRO: {}", ip_text(ip), std::strerror(errno));
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.fd = fd;
        ::epoll_ctl(ready_fd_, EPOLL_CTL_ADD, fd, &event);
        bound.push_back(Socket{vport, ip, fd});
        log().info("RoCEv2/UDP: vport {} on {}:{}", vport, ip_text(ip), port_);
    }
    {
        std::lock_guard lock(mutex_);
        sockets_.insert(sockets_.end(), bound.begin(), bound.end());
    }
    version_.fetch_add(1, std::memory_order_release);
    wake_thread();
    return true;
}

void UdpLink::wake_thread() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void UdpLink::unbind(uint32_t vport) {
    // The receive thread may be inside ppoll() on these fds, and an inline poller inside
    // recvmmsg: let the thread's next snapshot drop them, and wait out the receiver
    // holding the receive lock (its successor refreshes its list), before they close.
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
    wake_thread();
    // Wait until the thread has taken a snapshot without them, then close (at once
    // when called from that thread: it is not inside poll()).
    const uint32_t target = version_.load(std::memory_order_acquire);
    while (std::this_thread::get_id() != thread_.get_id() &&
           seen_version_.load(std::memory_order_acquire) < target &&
           !stopping_.load(std::memory_order_acquire)) {
        std::this_thread::yield();
    }
    if (tls_receiving != this) std::lock_guard receiving(receive_mutex_);
    // ACKs held for these sockets leave before the sockets close (none may name a closed
    // fd, which a new socket could reuse).
    send_held_acks();
    for (int fd : retired) {
        ::epoll_ctl(ready_fd_, EPOLL_CTL_DEL, fd, nullptr);
        ::close(fd);
    }
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
    send_calls_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

UdpLink::Egress UdpLink::egress(int udp_fd, const wire::IpAddr &to) const {
    const bool v4 = to.is_v4();
    // The raw socket: the IP header is ours (IPPROTO_RAW implies IP_HDRINCL), the port
    // unused. The UDP socket: the kernel writes the IP and UDP headers.
    if (v4 && raw_fd_ >= 0) return Egress{raw_fd_, 0, wire::kEthernetHeaderSize};
    return udp_egress(udp_fd, to);
}

UdpLink::Egress UdpLink::udp_egress(int udp_fd, const wire::IpAddr &to) const {
    const size_t l3 = to.is_v4() ? wire::kIpv4HeaderSize : wire::kIpv6HeaderSize;
    return Egress{udp_fd, port_, wire::kEthernetHeaderSize + l3 + wire::kUdpHeaderSize};
}

void UdpLink::before_sending(HeldOrder order) {
    if (order == HeldOrder::kAfterHeld && holding_.load(std::memory_order_acquire))
        send_held_acks();
}

bool UdpLink::held_acks_follow(HeldOrder order) const {
    // A request from inside a delivery leaves the held ACKs held: they wait for the
    // consumer's own next datagram, or its next poll.
    return order == HeldOrder::kBeforeHeld && tls_holding_acks != this &&
           holding_.load(std::memory_order_acquire);
}

void UdpLink::after_sending(HeldOrder order) {
    if (held_acks_follow(order)) send_held_acks();
}

bool UdpLink::send_frame(int fd, const wire::IpAddr &to, std::span<const uint8_t> frame,
                         HeldOrder order) {
    const Egress out = egress(fd, to);
    const std::span<const uint8_t> bytes = frame.subspan(out.skip);
    if (order == HeldOrder::kHold) {
        hold_ack(out.fd, to, out.port, bytes);
        return true;
    }
    if (held_acks_follow(order)) {
        send_ahead_of_held_acks(out.fd, to, out.port, bytes);
        return true;
    }
    before_sending(order);
    const bool sent = send_to(out.fd, to, out.port, bytes);
    after_sending(order);
    return sent;
}

void UdpLink::send_batched(int fd, mmsghdr *headers, uint32_t count, const uint32_t *datagrams) {
    auto carried = [datagrams](uint32_t from, uint32_t to) {
        if (datagrams == nullptr) return uint64_t{to - from};
        uint64_t sum = 0;
        for (uint32_t k = from; k < to; ++k)
            sum += datagrams[k];
        return sum;
    };
    for (uint32_t k = 0; k < count;) {
        const int n = ::sendmmsg(fd, headers + k, std::min(count - k, kSendBatch), MSG_NOSIGNAL);
        if (n <= 0) {
            // This message is lost, as one sendto() failure is (send_to); RC
            // retransmission deals with it, and the rest still go.
            const int error = errno;
            log().debug("RoCEv2: sendmmsg failed: {}", std::strerror(error));
            dropped_.fetch_add(carried(k, k + 1), std::memory_order_relaxed);
            // A GSO batch refused for what it is, not for a full buffer: this kernel or
            // route cannot segment UDP, so runs leave datagram by datagram from now on.
            if (datagrams != nullptr && datagrams[k] > 1 && error != ENOBUFS && error != EAGAIN &&
                gso_.exchange(false, std::memory_order_relaxed)) {
                log().warn(
                    "RoCEv2/UDP: the kernel refuses UDP GSO ({}): datagrams leave "
                    "one by one",
                    std::strerror(error));
            }
            ++k;
            continue;
        }
        sent_.fetch_add(carried(k, k + static_cast<uint32_t>(n)), std::memory_order_relaxed);
        send_calls_.fetch_add(1, std::memory_order_relaxed);
        k += static_cast<uint32_t>(n);
    }
}

bool UdpLink::gso_to(const wire::IpAddr &to) const {
    if (!gso_.load(std::memory_order_relaxed)) return false;
    if (to.is_v4() && to.bytes[12] == 127) return true;  // 127.0.0.0/8
    static constexpr wire::IpAddr kLoopback6 =
        wire::IpAddr::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    if (to == kLoopback6) return true;
    return std::find(host_addresses_.begin(), host_addresses_.end(), to) != host_addresses_.end();
}

UdpLink::HeldOrder UdpLink::order_of(const wire::PacketDescriptor &packet) const {
    if (packet.info().is_request) return HeldOrder::kBeforeHeld;
    if (packet.bth.opcode == wire::Opcode::kAcknowledge && tls_holding_acks == this)
        return HeldOrder::kHold;
    return HeldOrder::kAfterHeld;
}

void UdpLink::hold_ack(int fd, const wire::IpAddr &to, uint16_t port,
                       std::span<const uint8_t> bytes) {
    std::lock_guard lock(held_mutex_);
    held_->add(fd, to, port, bytes, false);
    held_acks_.fetch_add(1, std::memory_order_relaxed);
    holding_.store(true, std::memory_order_release);
}

void UdpLink::send_ahead_of_held_acks(int fd, const wire::IpAddr &to, uint16_t port,
                                      std::span<const uint8_t> bytes) {
    std::lock_guard lock(held_mutex_);
    // Another thread may have sent the ACKs since the caller looked: then the request
    // leaves alone, as a batch of one.
    held_->add(fd, to, port, bytes, true);
    send_held_acks_locked();
}

void UdpLink::send_held_acks() {
    std::lock_guard lock(held_mutex_);
    send_held_acks_locked();
}

void UdpLink::send_held_acks_locked() {
    HeldAcks &held = *held_;
    const auto count = static_cast<uint32_t>(held.datagrams.size());
    if (count == 0) return;  // another thread sent them since this one looked
    held.vectors.resize(count);
    held.headers.assign(count, mmsghdr{});
    for (uint32_t k = 0; k < count; ++k) {
        HeldAcks::Datagram &d = held.datagrams[k];
        held.vectors[k] = {held.bytes.data() + d.offset, d.bytes};
        held.headers[k].msg_hdr.msg_name = &d.to;
        held.headers[k].msg_hdr.msg_namelen = d.to_length;
        held.headers[k].msg_hdr.msg_iov = &held.vectors[k];
        held.headers[k].msg_hdr.msg_iovlen = 1;
    }
    wire_release();
    for (uint32_t k = 0; k < count;) {
        // One batch per run of datagrams through one socket.
        uint32_t end = k + 1;
        while (end < count && held.datagrams[end].fd == held.datagrams[k].fd)
            ++end;
        send_batched(held.datagrams[k].fd, held.headers.data() + k, end - k);
        k = end;
    }
    held.bytes.clear();
    held.datagrams.clear();
    holding_.store(false, std::memory_order_release);
}

size_t UdpLink::acks_waiting() const {
    std::lock_guard lock(held_mutex_);
    return held_->datagrams.size();
}

bool UdpLink::send_run(const Packet &run) {
    const int fd = socket_for(run.desc.meta.src_ip);
    if (fd < 0) return false;
    const wire::IpAddr &to = run.desc.meta.dst_ip;
    const auto count = static_cast<uint32_t>(run.run.size());
    // GSO batches leave through the UDP socket, whatever egress() would choose for one
    // datagram: the kernel writes their IP and UDP headers (udp_link.hpp).
    const bool gso = count > 1 && gso_to(to);
    const Egress out = gso ? udp_egress(fd, to) : egress(fd, to);
    const size_t skip = out.skip;
    thread_local std::vector<uint8_t> buffer;
    thread_local std::vector<size_t> offsets;
    thread_local std::vector<iovec> vectors;
    thread_local std::vector<mmsghdr> headers;
    thread_local std::vector<uint32_t> carried;  // datagrams per message (GSO batches)
    struct alignas(cmsghdr) SegmentControl {
        std::array<char, CMSG_SPACE(sizeof(uint16_t))> bytes;
    };
    thread_local std::vector<SegmentControl> controls;
    offsets.assign(count + 1, 0);
    std::vector<wire::PacketDescriptor> packets(count);
    for (uint32_t k = 0; k < count; ++k) {
        packets[k] = run.run_packet(k);
        packets[k].meta.udp_src_port = port_;
        packets[k].meta.udp_dst_port = port_;
        const size_t bytes = wire::frame_size(packets[k]);
        if (bytes <= skip) return false;
        offsets[k + 1] = offsets[k] + bytes;
    }
    // The messages: one datagram each, or (GSO) batches of consecutive datagrams of the
    // first one's size, the last possibly shorter, at most kGsoSegments and kGsoBytes.
    // first[m] is message m's first packet; first[messages] == count.
    thread_local std::vector<uint32_t> first;
    first.clear();
    for (uint32_t k = 0; k < count;) {
        first.push_back(k);
        const size_t size = offsets[k + 1] - offsets[k] - skip;
        size_t bytes = size;
        uint32_t end = k + 1;
        while (gso && end < count && end - k < kGsoSegments) {
            const size_t next = offsets[end + 1] - offsets[end] - skip;
            if (next > size || bytes + next > kGsoBytes) break;
            bytes += next;
            ++end;
            if (next < size) break;  // a shorter one ends the batch
        }
        for (uint32_t j = k; j < end; ++j)  // the kernel's numbering (udp_link.hpp)
            packets[j].meta.ipv4_identification = static_cast<uint16_t>(j - k);
        k = end;
    }
    const auto messages = static_cast<uint32_t>(first.size());
    first.push_back(count);
    headers.assign(messages, mmsghdr{});
    carried.resize(messages);
    controls.resize(messages);
    // Packet k's datagram is vectors[piece[k]] .. vectors[piece[k + 1] - 1].
    thread_local std::vector<size_t> piece;
    piece.assign(count + 1, 0);
    if (gso) {
        // Headers, payload from where it lies, pad and ICRC: the kernel copies the payload
        // into its buffers anyway, and a copy into a frame first was a second pass over
        // every byte (the ICRC reads it in place).
        thread_local std::vector<wire::HeaderBuffer> ib_headers;
        thread_local std::vector<wire::IbTrailer> trailers;
        ib_headers.resize(count);
        trailers.resize(count);
        vectors.resize(size_t{count} * 3);
        size_t v = 0;
        for (uint32_t k = 0; k < count; ++k) {
            if (wire::serialize_ib_parts(packets[k], ib_headers[k], trailers[k]) !=
                wire::WireStatus::kOk)
                return false;
            if (run.icrc_corrupt) trailers[k].bytes[trailers[k].size - 1] ^= 0xff;
            piece[k] = v;
            vectors[v++] = {ib_headers[k].bytes.data(), ib_headers[k].size};
            if (!packets[k].payload.empty())
                vectors[v++] = {const_cast<uint8_t *>(packets[k].payload.data()),
                                packets[k].payload.size()};
            vectors[v++] = {trailers[k].bytes.data(), trailers[k].size};
        }
        piece[count] = v;
    } else {
        if (buffer.size() < offsets[count]) buffer.resize(offsets[count]);
        vectors.resize(count);
        for (uint32_t k = 0; k < count; ++k) {
            const std::span<uint8_t> frame(buffer.data() + offsets[k], offsets[k + 1] - offsets[k]);
            if (wire::serialize_frame(packets[k], frame).status != wire::WireStatus::kOk)
                return false;
            if (run.icrc_corrupt) frame.back() ^= 0xff;
            vectors[k] = {frame.data() + skip, frame.size() - skip};
            piece[k] = k;
        }
        piece[count] = count;
    }
    socklen_t length = 0;
    sockaddr_storage destination = to_sockaddr(to, out.port, length);
    for (uint32_t m = 0; m < messages; ++m) {
        msghdr &header = headers[m].msg_hdr;
        header.msg_name = &destination;
        header.msg_namelen = length;
        header.msg_iov = &vectors[piece[first[m]]];
        header.msg_iovlen = piece[first[m + 1]] - piece[first[m]];
        carried[m] = first[m + 1] - first[m];
        if (carried[m] > 1) {  // the segment size: the batch's first datagram's
            header.msg_control = controls[m].bytes.data();
            header.msg_controllen = controls[m].bytes.size();
            cmsghdr *c = CMSG_FIRSTHDR(&header);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            const auto segment =
                static_cast<uint16_t>(offsets[first[m] + 1] - offsets[first[m]] - skip);
            std::memcpy(CMSG_DATA(c), &segment, sizeof segment);
            gso_batches_.fetch_add(1, std::memory_order_relaxed);
        }
    }
    // A run of responses (READ response packets) leaves after the held ACKs, a run of
    // requests before them (udp_link.hpp, "ACKs off the critical path"); a run is never
    // an ACK, so it is never held.
    const HeldOrder order =
        run.desc.info().is_request ? HeldOrder::kBeforeHeld : HeldOrder::kAfterHeld;
    before_sending(order);
    wire_release();
    send_batched(out.fd, headers.data(), messages, carried.data());
    after_sending(order);
    return true;
}

bool UdpLink::send(const Packet &packet) {
    const int fd = socket_for(packet.desc.meta.src_ip);
    if (fd < 0) return false;
    wire::PacketDescriptor desc = packet.desc;
    desc.meta.udp_src_port = port_;  // the UDP header the datagram leaves with
    desc.meta.udp_dst_port = port_;
    // Serialised into this thread's buffer: no allocation per packet.
    thread_local std::vector<uint8_t> buffer;
    const size_t bytes = wire::frame_size(desc);
    if (bytes == 0) return false;
    if (buffer.size() < bytes) buffer.resize(bytes);
    const std::span<uint8_t> frame(buffer.data(), bytes);
    if (wire::serialize_frame(desc, frame).status != wire::WireStatus::kOk) return false;
    if (packet.icrc_corrupt) frame.back() ^= 0xff;  // the receiver's ICRC check fails
    return send_frame(fd, desc.meta.dst_ip, frame, order_of(desc));
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
    // After the held ACKs: a DREQ must not overtake the ACK of the last message before it.
    return send_frame(fd, message.destination_ip, frame, HeldOrder::kAfterHeld);
}

void UdpLink::handle_datagram(const Socket &socket, std::span<const uint8_t> bytes,
                              const wire::IpAddr &from, uint16_t from_port, uint16_t segment) {
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
        const auto icrc = wire::ib_packet_icrc(cm_meta(from, socket.address, from_port, port_),
                                               bytes.first(bytes.size() - wire::kIcrcSize));
        if (!icrc || *icrc != wire::load_icrc(bytes.data() + bytes.size() - wire::kIcrcSize))
            return drop("CM message with a bad ICRC");
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
    // The ICRC, recomputed in place over the IB part as it came and the headers this
    // datagram really had, as a NIC checks it (no frame is assembled). The one header
    // field a UDP socket does not tell is the IPv4 identification (udp_link.hpp, "Runs
    // leave in GSO batches"): segment i of a GRO batch left as segment i of a GSO batch,
    // with identification i, or alone with 0 (a NIC's GRO put it there); a datagram that
    // came alone has 0, or is segment 1 to kGsoSegments - 1 of a batch the kernel cut
    // apart before it arrived (a loopback without tx-udp-segmentation).
    const std::span<const uint8_t> ib = bytes.first(bytes.size() - wire::kIcrcSize);
    const uint32_t carried = wire::load_icrc(bytes.data() + bytes.size() - wire::kIcrcSize);
    auto verifies = [&](uint16_t identification) {
        d.meta.ipv4_identification = identification;
        const auto icrc = wire::ib_packet_icrc(d.meta, ib);
        return icrc && *icrc == carried;
    };
    bool good = verifies(from.is_v4() ? segment : 0);
    if (!good && from.is_v4() && segment != 0) good = verifies(0);
    for (uint16_t i = 1; !good && from.is_v4() && segment == 0 && i < kGsoSegments; ++i)
        good = verifies(i);
    if (!good) return drop("bad ICRC");
    receiver_.packet(std::move(packet));  // the payload still in the batch buffer (Receiver)
}

size_t UdpLink::drain_socket(const Socket &s) {
    auto &headers = batch_->headers;
    auto &sources = batch_->sources;
    auto &buffer = batch_->buffer;
    size_t taken = 0;
    for (;;) {  // everything queued on this socket
        batch_->reset();
        const int n = ::recvmmsg(s.fd, headers.data(), kReceiveBatch, MSG_DONTWAIT, nullptr);
        if (n <= 0) break;
        wire_acquire();
        receive_calls_.fetch_add(1, std::memory_order_relaxed);
        taken += static_cast<size_t>(n);
        for (int i = 0; i < n; ++i) {
            const mmsghdr &m = headers[static_cast<size_t>(i)];
            uint16_t from_port = 0;
            const wire::IpAddr from_ip = from_sockaddr(sources[static_cast<size_t>(i)], from_port);
            if ((m.msg_hdr.msg_flags & MSG_TRUNC) != 0) {
                received_.fetch_add(1, std::memory_order_relaxed);
                dropped_.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
            const std::span<const uint8_t> bytes(buffer.data() + size_t(i) * kMaxDatagram,
                                                 m.msg_len);
            // A GRO batch: its datagrams back to back, each `segment` bytes but the last.
            const size_t segment = Batch::gro_segment(m.msg_hdr);
            if (segment == 0 || segment >= bytes.size()) {
                handle_datagram(s, bytes, from_ip, from_port, 0);
                continue;
            }
            uint16_t index = 0;
            for (size_t at = 0; at < bytes.size(); at += segment, ++index)
                handle_datagram(s, bytes.subspan(at, std::min(segment, bytes.size() - at)), from_ip,
                                from_port, index);
        }
        if (static_cast<unsigned>(n) < kReceiveBatch) break;  // the queue is empty
    }
    return taken;
}

size_t UdpLink::receive_queued(bool ready_only) {
    const uint32_t v = version_.load(std::memory_order_acquire);
    if (v != receive_version_) {
        std::lock_guard lock(mutex_);
        receive_sockets_ = sockets_;
        receive_version_ = v;
    }
    size_t taken = 0;
    const UdpLink *outer = std::exchange(tls_receiving, this);
    if (ready_only && receive_sockets_.size() > 1) {
        // One system call tells which sockets have datagrams (an inline poll mostly
        // finds none: one epoll_wait, not a recvmmsg per socket). With one socket, its
        // recvmmsg is that call.
        std::array<epoll_event, 8> ready{};
        const int n = ::epoll_wait(ready_fd_, ready.data(), static_cast<int>(ready.size()), 0);
        for (int i = 0; i < n; ++i) {
            for (const Socket &s : receive_sockets_) {
                if (s.fd == ready[static_cast<size_t>(i)].data.fd) taken += drain_socket(s);
            }
        }
    } else {
        for (const Socket &s : receive_sockets_)
            taken += drain_socket(s);
    }
    tls_receiving = outer;
    return taken;
}

bool UdpLink::poll_inline() {
    // Open or extend the hand-off window; at the start of one, wake the thread so that
    // it stops polling the sockets now, not after the next datagram.
    const int64_t now = steady_ns();
    const int64_t previous = inline_until_ns_.exchange(
        now + hand_off_ns_.load(std::memory_order_relaxed), std::memory_order_acq_rel);
    if (previous < now) wake_thread();
    if (tls_receiving == this) return false;  // inside a delivery of this link
    // The consumer is back: what the last poll held leaves now.
    if (holding_.load(std::memory_order_acquire)) send_held_acks();
    std::unique_lock lock(receive_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    const UdpLink *outer = std::exchange(tls_holding_acks, this);
    const bool took = receive_queued(true) > 0;
    tls_holding_acks = outer;
    return took;
}

void UdpLink::stop_inline_polling() {
    if (holding_.load(std::memory_order_acquire) && tls_holding_acks != this) send_held_acks();
    if (inline_until_ns_.load(std::memory_order_relaxed) == 0) return;  // no window open
    inline_until_ns_.store(0);
    if (parked_.load()) wake_thread();
}

void UdpLink::run() {
    std::vector<Socket> local;
    std::vector<pollfd> fds;
    uint32_t seen = ~0u;
    // The thread stood back last time round, and a window that then ran out, with what
    // came next still to tell how long the next window should be (kDefaultHandOff); and
    // how many lapses in a row the thread then had to receive.
    bool stood_back = false;
    bool lapsed = false;
    int receives_in_a_row = 0;
    auto adapt_window = [this, &lapsed, &receives_in_a_row](bool consumer_came_back) {
        if (!lapsed) return;
        lapsed = false;
        const int64_t now_ns = hand_off_ns_.load(std::memory_order_relaxed);
        int64_t next = now_ns;
        if (consumer_came_back) {
            receives_in_a_row = 0;
            next = std::min(now_ns * 2, hand_off_min_ns_ * kHandOffGrowth);
        } else if (++receives_in_a_row == kReceivesToShrink) {
            receives_in_a_row = 0;
            next = std::max(now_ns / 2, hand_off_min_ns_);
        }
        hand_off_ns_.store(next, std::memory_order_relaxed);
    };
    while (!stopping_.load(std::memory_order_acquire)) {
        // ACKs an inline poll held leave by the time the window it opened lapses.
        if (holding_.load(std::memory_order_acquire)) send_held_acks();
        const uint32_t v = version_.load(std::memory_order_acquire);
        if (v != seen) {
            std::lock_guard lock(mutex_);
            local = sockets_;
            seen = v;
            seen_version_.store(v, std::memory_order_release);
        }
        fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
        // While inline polls keep coming the thread stands back: it sleeps on the
        // eventfd alone until the window ends (or stop_inline_polling() wakes it).
        // parked_ is set before the window is read, and stop_inline_polling() clears the
        // window before it reads parked_ (both sequentially consistent): either this
        // thread sees the window closed, or the stop sees it parked and wakes it.
        parked_.store(true);
        const int64_t now = steady_ns();
        const int64_t until = inline_until_ns_.load();
        const bool stand_back = until > now;
        if (stood_back && !stand_back) lapsed = true;
        stood_back = stand_back;
        timespec timeout{};
        if (stand_back) {
            timeout.tv_sec = (until - now) / 1'000'000'000;
            timeout.tv_nsec = (until - now) % 1'000'000'000;
        } else {
            for (const Socket &s : local)
                fds.push_back(pollfd{s.fd, POLLIN, 0});
        }
        if (!stand_back) parked_.store(false);
        const int ready = ::ppoll(fds.data(), fds.size(), stand_back ? &timeout : nullptr, nullptr);
        parked_.store(false, std::memory_order_release);
        if (ready < 0) {
            if (errno == EINTR) continue;
            log().error("RoCEv2/UDP: poll: {}", std::strerror(errno));
            return;
        }
        if (fds[0].revents != 0) {
            uint64_t drained = 0;
            [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &drained, sizeof drained);
            // A window opened after one ran out: the consumer came back to poll.
            if (inline_until_ns_.load(std::memory_order_relaxed) > now) adapt_window(true);
            continue;  // the socket set changed, the window opened or closed, or stop
        }
        if (stand_back || ready == 0) continue;
        adapt_window(false);  // a datagram only this thread was there to take
        std::lock_guard lock(receive_mutex_);
        receive_queued(false);
    }
}

}  // namespace softndk::emu
