#include "daemon/protocol.hpp"
#include "daemon/socket_security.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "device/device.hpp"
#include "device/profile.hpp"
#include "device/status.hpp"
#include "softndk/monotonic.hpp"

namespace softndk::emu::daemon {

// The server answers from a kMaxRequestBytes buffer: every response must fit it.
static_assert(sizeof(hw::ResourcesResponse) <= kMaxRequestBytes);
static_assert(sizeof(hw::CountersResponse) <= kMaxRequestBytes);
static_assert(sizeof(DaemonAdapterResponse) <= kMaxRequestBytes);

namespace {

template <size_t N>
void copy_string(char (&out)[N], std::string_view text) {
    const size_t n = std::min(text.size(), N - 1);
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
}

}  // namespace

DaemonAdapterResponse describe_adapter(const Device &device, uint32_t adapters) {
    const AdapterConfig &config = device.config();
    DaemonAdapterResponse rs{};
    rs.adapters = adapters;
    rs.if_index = config.if_index;
    rs.path_mtu = device.limits().path_mtu;
    for (const wire::IpAddr &ip : config.addresses) {
        if (rs.address_count == kDaemonAdapterMaxAddresses) break;
        std::memcpy(rs.addresses[rs.address_count++], ip.bytes.data(), ip.bytes.size());
    }
    copy_string(rs.alias, config.alias);
    copy_string(rs.profile, config.profile.name);
    copy_string(rs.technology,
                device.limits().rdma_technology == status::kTechnologyIwarp ? "iwarp" : "roce");
    copy_string(rs.profile_source, config.profile.source);
    copy_string(rs.profile_description, config.profile.description);
    for (const CostKey &key : cost_keys()) {
        if (rs.cost_count == kDaemonAdapterMaxCosts) break;
        rs.costs[rs.cost_count++] = device.cost().*key.field;
    }
    return rs;
}

size_t response_bytes_of(hw::CommandOpcode op) {
    using O = hw::CommandOpcode;
    switch (op) {
        case O::kAttach:
            return sizeof(hw::AttachResponse);
        case O::kCreateCq:
        case O::kResizeCq:
            return sizeof(hw::CreateCqResponse);
        case O::kCreateQp:
            return sizeof(hw::CreateQpResponse);
        case O::kCreateSrq:
        case O::kModifySrq:
            return sizeof(hw::CreateSrqResponse);
        case O::kListen:
        case O::kCreateSharedEndpoint:
            return sizeof(hw::ListenResponse);
        case O::kQueryConnection:
            return sizeof(hw::QueryConnectionResponse);
        case O::kBuildLam:
            return sizeof(hw::BuildLamResponse);
        case O::kQueryCounters:
            return sizeof(hw::CountersResponse);
        case O::kQueryResources:
            return sizeof(hw::ResourcesResponse);
        case O::kDetach:
        case O::kCreatePd:
        case O::kDestroyPd:
        case O::kDestroyCq:
        case O::kModerateCq:
        case O::kDestroyQp:
        case O::kFlushQp:
        case O::kDestroySrq:
        case O::kAllocMr:
        case O::kRegisterMr:
        case O::kDeregisterMr:
        case O::kInitFastRegMr:
        case O::kFreeMr:
        case O::kReleaseLam:
        case O::kPrivilegedToken:
        case O::kAllocMw:
        case O::kFreeMw:
        case O::kCloseListener:
        case O::kPauseListener:
        case O::kConnect:
        case O::kAccept:
        case O::kReject:
        case O::kCompleteConnect:
        case O::kDisconnect:
        case O::kCloseConnection:
        case O::kCloseSharedEndpoint:
        case O::kInjectFault:
        case O::kRemoveFault:
            return sizeof(hw::ObjectResponse);
    }
    if (op == kDaemonStatus) return sizeof(DaemonStatusResponse);
    if (op == kDaemonAdapter) return sizeof(DaemonAdapterResponse);
    return sizeof(hw::ResponseHeader);
}

std::span<const size_t> response_handles_of(hw::CommandOpcode op) {
    static constexpr std::array<size_t, 2> kAttach = {offsetof(hw::AttachResponse, control_page),
                                                      offsetof(hw::AttachResponse, event_queue)};
    static constexpr std::array<size_t, 1> kCq = {offsetof(hw::CreateCqResponse, memory)};
    static constexpr std::array<size_t, 1> kQp = {offsetof(hw::CreateQpResponse, memory)};
    static constexpr std::array<size_t, 1> kSrq = {offsetof(hw::CreateSrqResponse, memory)};
    using O = hw::CommandOpcode;
    switch (op) {
        case O::kAttach:
            return kAttach;
        case O::kCreateCq:
        case O::kResizeCq:
            return kCq;
        case O::kCreateQp:
            return kQp;
        case O::kCreateSrq:
        case O::kModifySrq:
            return kSrq;
        default:
            return {};
    }
}

std::string default_socket_path() {
    if (const char *s = std::getenv("SOFTNDK_SOCKET"); s != nullptr && *s != '\0') return s;
    if (const char *x = std::getenv("XDG_RUNTIME_DIR"); x != nullptr && *x != '\0') {
        return std::string(x) + "/softndk.sock";
    }
    // A directory of our own: a predictable name directly in /tmp could be taken first.
    return fallback_socket_directory(::getuid()) + "/softndk.sock";
}

bool send_with_fds(int socket, std::span<const std::byte> bytes, std::span<const int> fds,
                   int flags) {
    if (fds.size() > kMaxFds) {
        errno = EINVAL;
        return false;
    }
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
    size_t sent = 0;
    while (sent < bytes.size()) {
        iovec iov{const_cast<std::byte *>(bytes.data() + sent), bytes.size() - sent};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        if (sent == 0 && !fds.empty()) {
            msg.msg_control = control;
            msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
            cmsghdr *c = CMSG_FIRSTHDR(&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
            std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
        }
        const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL | flags);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        sent += static_cast<size_t>(n);
    }
    return true;
}

ssize_t receive_some(int socket, std::span<std::byte> bytes, std::vector<UniqueFd> &fds, int flags,
                     bool &truncated) {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    iovec iov{bytes.data(), bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n;
    do {
        n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | flags);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return n;
    if ((msg.msg_flags & MSG_CTRUNC) != 0) truncated = true;
    for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            fds.emplace_back(fd);
        }
    }
    return n;
}

bool spinning_pays() {
    static const bool several_cpus = std::thread::hardware_concurrency() > 1;
    return several_cpus;
}

void await_readable_briefly(int socket, uint64_t spin_ns) {
    if (!spinning_pays() || spin_ns == 0) return;
    const uint64_t until = monotonic_ns() + spin_ns;
    pollfd ready{socket, POLLIN, 0};
    while (::poll(&ready, 1, 0) == 0 && monotonic_ns() < until)
        ::sched_yield();
}

bool receive_exact(int socket, std::span<std::byte> bytes, std::vector<UniqueFd> &fds) {
    size_t got = 0;
    bool truncated = false;
    while (got < bytes.size()) {
        const ssize_t n = receive_some(socket, bytes.subspan(got), fds, 0, truncated);
        if (n <= 0) {
            if (n == 0) errno = ECONNRESET;
            return false;
        }
        got += static_cast<size_t>(n);
    }
    return true;
}

bool receive_response(int socket, ResponseFrame &frame, std::span<std::byte, kMaxRequestBytes> body,
                      std::vector<UniqueFd> &fds) {
    std::array<std::byte, sizeof(ResponseFrame) + kMaxRequestBytes> in;
    size_t got = 0;
    bool truncated = false;
    while (got < sizeof(ResponseFrame)) {
        const ssize_t n = receive_some(socket, std::span(in).subspan(got), fds, 0, truncated);
        if (n <= 0) {
            if (n == 0) errno = ECONNRESET;
            return false;
        }
        got += static_cast<size_t>(n);
    }
    std::memcpy(&frame, in.data(), sizeof(frame));
    const size_t whole = sizeof(ResponseFrame) + frame.response_bytes;
    if (frame.magic != kResponseMagic || frame.response_bytes < sizeof(hw::ResponseHeader) ||
        frame.response_bytes > kMaxRequestBytes || frame.fd_count > kMaxFds || got > whole) {
        errno = EPROTO;
        return false;
    }
    if (got < whole && !receive_exact(socket, std::span(in).subspan(got, whole - got), fds))
        return false;
    std::memcpy(body.data(), in.data() + sizeof(ResponseFrame), frame.response_bytes);
    return true;
}

}  // namespace softndk::emu::daemon
