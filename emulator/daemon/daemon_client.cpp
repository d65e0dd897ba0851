#include "daemon/daemon_client.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "daemon/protocol.hpp"
#include "daemon/registration_mirror.hpp"
#include "daemon/socket_security.hpp"
#include "device/log.hpp"
#include "device/status.hpp"
#include "softndk/monotonic.hpp"
#include "softndk/wake.hpp"

namespace softndk::emu::daemon {

namespace {

// The fds of the last response received on this thread (DeviceClient::map contract).
struct LastResponse {
    const DaemonClient *client = nullptr;
    std::vector<UniqueFd> fds;
};
thread_local LastResponse t_last;

void write_status(hw::ResponseHeader &response, size_t response_bytes, uint32_t sequence,
                  int32_t s) {
    if (response_bytes < sizeof(hw::ResponseHeader)) return;
    response.sequence = sequence;
    response.status = s;
}

}  // namespace

namespace {

// SO_SNDTIMEO bounds connect() too (a daemon whose backlog is full), SO_RCVTIMEO each
// wait for a response: a daemon that stops answering is noticed, never waited on forever.
void set_timeouts(int socket) {
    const auto timeout = DaemonClient::reply_timeout();
    if (timeout.count() == 0) return;
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000);
    ::setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

UniqueFd connect_socket(const std::string &socket_path, std::string &error) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof(address.sun_path)) {
        error = "SOFTNDK_SOCKET: path too long: " + socket_path;
        return UniqueFd();
    }
    std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size());
    UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s) set_timeouts(s.get());
    if (!s || ::connect(s.get(), reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) {
        error = "SOFTNDK_MODE=daemon: cannot reach the SoftNDK daemon at " + socket_path + " (" +
                std::strerror(errno) + "); start it with `softndk rnic` or set SOFTNDK_SOCKET";
        return UniqueFd();
    }
    // Before a byte goes out (the registration memfd above all): is that our daemon?
    uid_t uid = 0;
    gid_t gid = 0;
    pid_t pid = 0;
    if (!peer_credentials(s.get(), uid, gid, pid, error)) return UniqueFd();
    if (!daemon_trusted(uid, ::getuid())) {
        error = "SOFTNDK_MODE=daemon: the process listening on " + socket_path + " (pid " +
                std::to_string(pid) + ") runs as uid " + std::to_string(uid) + ", neither ours (" +
                std::to_string(::getuid()) + ") nor root: not talking to it";
        return UniqueFd();
    }
    return s;
}

}  // namespace

std::chrono::milliseconds DaemonClient::reply_timeout() {
    if (const char *env = std::getenv("SOFTNDK_DAEMON_TIMEOUT"); env != nullptr && *env) {
        char *end = nullptr;
        const unsigned long long ms = std::strtoull(env, &end, 10);
        if (end != nullptr && *end == '\0') return std::chrono::milliseconds(ms);
    }
    return std::chrono::milliseconds(10'000);
}

// Connects and asks kDaemonStatus: the client on success (a session, not attached).
std::unique_ptr<DaemonClient> DaemonClient::open_session(const std::string &socket_path,
                                                         uint32_t if_index,
                                                         DaemonStatusResponse &status,
                                                         std::string &error) {
    UniqueFd s = connect_socket(socket_path, error);
    if (!s) return nullptr;
    std::unique_ptr<DaemonClient> client(new DaemonClient(std::move(s)));
    DaemonStatusRequest rq{};
    rq.header = {kDaemonStatus, sizeof(rq), 0};
    rq.if_index = if_index;
    status = DaemonStatusResponse{};
    const int32_t st = client->execute(rq.header, status.header, sizeof(status));
    if (st != status::kSuccess) {
        error = "SoftNDK daemon at " + socket_path + " did not answer (status " +
                std::to_string(st) + ")";
        return nullptr;
    }
    return client;
}

bool DaemonClient::query_status(const std::string &socket_path, uint32_t if_index,
                                DaemonStatusResponse &status, std::string &error) {
    return open_session(socket_path, if_index, status, error) != nullptr;
}

bool DaemonClient::query_adapters(const std::string &socket_path,
                                  std::vector<DaemonAdapterResponse> &adapters,
                                  std::string &error) {
    DaemonStatusResponse daemon{};
    auto client = open_session(socket_path, 0, daemon, error);
    if (!client) return false;
    adapters.clear();
    // A daemon's adapters are fixed while it runs: the status's count holds.
    for (uint32_t position = 0; position < daemon.adapters; ++position) {
        DaemonAdapterRequest rq{};
        rq.header = {kDaemonAdapter, sizeof(rq), position + 1};
        rq.position = position;
        DaemonAdapterResponse rs{};
        const int32_t st = client->execute(rq.header, rs.header, sizeof(rs));
        if (st != status::kSuccess) {
            error = "SoftNDK daemon at " + socket_path + " did not describe its adapter " +
                    std::to_string(position) + " (status " + std::to_string(st) + ")";
            return false;
        }
        adapters.push_back(rs);
    }
    return true;
}

std::unique_ptr<DaemonClient> DaemonClient::connect(const std::string &socket_path,
                                                    uint32_t if_index, std::string &error) {
    DaemonStatusResponse rs{};
    auto client = open_session(socket_path, if_index, rs, error);
    if (client && rs.adapter_found == 0) {
        error = "SoftNDK daemon at " + socket_path + " has no adapter with if_index " +
                std::to_string(if_index);
        return nullptr;
    }
    return client;
}

DaemonClient::~DaemonClient() {
    stop_watching();
    if (control_.load(std::memory_order_acquire) != nullptr) {
        hw::ObjectRequest rq{};
        rq.header = {hw::CommandOpcode::kDetach, sizeof(rq), 0};
        hw::ObjectResponse rs{};
        execute(rq.header, rs.header, sizeof(rs));
    }
    std::lock_guard lock(mutex_);
    release_registrations();
    if (t_last.client == this) {
        t_last.client = nullptr;
        t_last.fds.clear();
    }
}

int32_t DaemonClient::execute(const hw::CommandHeader &request, hw::ResponseHeader &response,
                              size_t response_bytes, std::span<const int> fds) {
    std::vector<UniqueFd> received;
    int32_t s;
    {
        std::lock_guard lock(mutex_);
        if (request.opcode == hw::CommandOpcode::kRegisterMr &&
            request.request_bytes == sizeof(hw::RegisterMrRequest) && fds.empty()) {
            s = register_mr(request, response, response_bytes, received);
        } else if (request.opcode == hw::CommandOpcode::kBuildLam &&
                   request.request_bytes == sizeof(hw::BuildLamRequest) && fds.empty()) {
            s = build_lam(request, response, response_bytes, received);
        } else if (hw::command_slot_serves(request.opcode) && fds.empty() &&
                   control_.load(std::memory_order_relaxed) != nullptr) {
            s = slot_round_trip(request, response, response_bytes);
        } else {
            s = round_trip(request, response, response_bytes, fds, received);
        }
        after(request, response, response_bytes, s, received);
    }
    t_last.client = this;
    t_last.fds = std::move(received);
    return s;
}

int32_t DaemonClient::round_trip(const hw::CommandHeader &request, hw::ResponseHeader &response,
                                 size_t response_bytes, std::span<const int> fds,
                                 std::vector<UniqueFd> &received) {
    if (request.request_bytes < sizeof(hw::CommandHeader) ||
        request.request_bytes > kMaxRequestBytes || fds.size() > kMaxFds) {
        write_status(response, response_bytes, request.sequence, status::kInvalidParameter);
        return status::kInvalidParameter;
    }
    auto removed = [&] {
        received.clear();
        return lost(request, response, response_bytes, errno == EAGAIN || errno == EWOULDBLOCK);
    };
    if (broken_) return removed();
    const auto *bytes = reinterpret_cast<const std::byte *>(&request);
    if (!send_with_fds(socket_.get(), {bytes, request.request_bytes}, fds)) return removed();
    ResponseFrame frame{};
    await_readable_briefly(socket_.get(), kReplySpinNs);
    std::array<std::byte, kMaxRequestBytes> body{};
    if (!receive_response(socket_.get(), frame, body, received)) return removed();
    std::memcpy(&response, body.data(), std::min<size_t>(response_bytes, frame.response_bytes));
    hw::ResponseHeader h;
    std::memcpy(&h, body.data(), sizeof(h));
    return h.status;
}

int32_t DaemonClient::lost(const hw::CommandHeader &request, hw::ResponseHeader &response,
                           size_t response_bytes, bool timed_out) {
    // A timeout leaves the stream mid-message: the session cannot go on either way.
    if (!broken_) {
        if (timed_out) {
            logger(Component::kDevice)
                .error("the daemon did not answer within {} ms: treating it as gone",
                       reply_timeout().count());
        } else {
            logger(Component::kDevice).error("daemon connection lost: {}", std::strerror(errno));
        }
        ::shutdown(socket_.get(), SHUT_RDWR);
    }
    const int32_t s = timed_out && !broken_ ? status::kIoTimeout : status::kDeviceRemoved;
    broken_ = true;
    write_status(response, response_bytes, request.sequence, s);
    return s;
}

int32_t DaemonClient::slot_round_trip(const hw::CommandHeader &request,
                                      hw::ResponseHeader &response, size_t response_bytes) {
    if (request.request_bytes < sizeof(hw::CommandHeader) ||
        request.request_bytes > hw::kCommandSlotBytes) {
        write_status(response, response_bytes, request.sequence, status::kInvalidParameter);
        return status::kInvalidParameter;
    }
    if (broken_) return lost(request, response, response_bytes, false);
    hw::CommandSlot &slot = control_.load(std::memory_order_relaxed)->command;
    const uint32_t sequence = ++slot_sequence_;
    std::memcpy(slot.request, &request, request.request_bytes);
    std::atomic_ref(slot.request_sequence.value).store(sequence, std::memory_order_release);
    ring();
    std::atomic_ref answered(slot.response_sequence.value);
    auto done = [&] { return answered.load(std::memory_order_acquire) == sequence; };
    // Spin first, as for a socket answer (kReplySpinNs): the answer takes about a
    // microsecond of the doorbell thread's work.
    if (spinning_pays()) spin_yielding_until(done, std::chrono::nanoseconds(kReplySpinNs));
    // Then sleep, in slices: between them, a daemon that hung up (its end of the socket
    // closed: it died or dropped the session) ends the wait, as does reply_timeout().
    constexpr auto kSlice = std::chrono::milliseconds(20);
    const auto timeout = reply_timeout();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        announce_sleep(slot.host_waiting);
        const uint32_t seen = answered.load(std::memory_order_acquire);
        if (seen != sequence) futex_wait(slot.response_sequence.value, seen, kSlice);
        cancel_sleep(slot.host_waiting);
        if (done()) break;
        pollfd hangup{socket_.get(), POLLRDHUP, 0};
        if (::poll(&hangup, 1, 0) > 0 && (hangup.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
            errno = ECONNRESET;
            return lost(request, response, response_bytes, false);
        }
        if (timeout.count() != 0 && std::chrono::steady_clock::now() >= deadline)
            return lost(request, response, response_bytes, true);
    }
    std::memcpy(&response, slot.response, std::min<size_t>(response_bytes, hw::kCommandSlotBytes));
    hw::ResponseHeader h;
    std::memcpy(&h, slot.response, sizeof(h));
    return h.status;
}

template <class Request, class KeyOf>
int32_t DaemonClient::mirrored_round_trip(Request rq, const char *what,
                                          std::map<uint32_t, Range> &ranges, KeyOf key_of,
                                          hw::ResponseHeader &response, size_t response_bytes,
                                          std::vector<UniqueFd> &received) {
    auto &mirror = RegistrationMirror::instance();
    const uint64_t va = rq.memory.embedded_address;
    std::string error;
    if (!mirror.acquire(va, rq.length, error)) {
        logger(Component::kDevice).warn("{} {:#x}+{}: {}", what, va, rq.length, error);
        write_status(response, response_bytes, rq.header.sequence, status::kInvalidParameter);
        return status::kInvalidParameter;
    }
    rq.memory = hw::MemoryHandle{0, 0, va, rq.memory.bytes, 0};
    const int fd = mirror.fd();
    const int32_t s = round_trip(rq.header, response, response_bytes, std::span(&fd, 1), received);
    const std::optional<uint32_t> key =
        s == status::kSuccess ? key_of(rq, response, response_bytes) : std::nullopt;
    if (!key) {
        mirror.release(va, rq.length);
        return s;
    }
    if (auto old = ranges.find(*key); old != ranges.end()) {
        mirror.release(old->second.va, old->second.length);
    }
    ranges[*key] = Range{va, rq.length};
    return s;
}

int32_t DaemonClient::register_mr(const hw::CommandHeader &request, hw::ResponseHeader &response,
                                  size_t response_bytes, std::vector<UniqueFd> &received) {
    hw::RegisterMrRequest rq;
    std::memcpy(&rq, &request, sizeof(rq));
    if (rq.memory.fd_index != hw::kNoFd || rq.memory.embedded_address == 0) {
        return round_trip(request, response, response_bytes, {}, received);
    }
    const auto mpt_index = [](const hw::RegisterMrRequest &r, const hw::ResponseHeader &,
                              size_t) -> std::optional<uint32_t> { return r.mpt_index; };
    return mirrored_round_trip(rq, "register", registrations_, mpt_index, response, response_bytes,
                               received);
}

int32_t DaemonClient::build_lam(const hw::CommandHeader &request, hw::ResponseHeader &response,
                                size_t response_bytes, std::vector<UniqueFd> &received) {
    hw::BuildLamRequest rq;
    std::memcpy(&rq, &request, sizeof(rq));
    if (rq.memory.fd_index != hw::kNoFd || rq.memory.embedded_address == 0 || rq.length == 0) {
        return round_trip(request, response, response_bytes, {}, received);
    }
    const auto lam_id = [](const hw::BuildLamRequest &, const hw::ResponseHeader &r,
                           size_t bytes) -> std::optional<uint32_t> {
        if (bytes < sizeof(hw::BuildLamResponse)) return std::nullopt;
        return reinterpret_cast<const hw::BuildLamResponse &>(r).lam;
    };
    return mirrored_round_trip(rq, "LAM", lams_, lam_id, response, response_bytes, received);
}

void DaemonClient::after(const hw::CommandHeader &request, const hw::ResponseHeader &response,
                         size_t response_bytes, int32_t s, std::vector<UniqueFd> &received) {
    if (s != status::kSuccess) return;
    switch (request.opcode) {
        case hw::CommandOpcode::kAttach: {
            if (response_bytes < sizeof(hw::AttachResponse)) return;
            const auto &rs = reinterpret_cast<const hw::AttachResponse &>(response);
            const uint32_t i = rs.control_page.fd_index;
            std::string error;
            if (i < received.size() &&
                require_seals(received[i].get(), kRequiredSeals, hw::kControlPageBytes, error)) {
                control_mapping_ = Mapping::map(received[i].get(), 0, hw::kControlPageBytes, error);
            }
            if (!control_mapping_) {
                logger(Component::kDevice).error("daemon control page: {}", error);
                return;
            }
            control_.store(reinterpret_cast<hw::ContextControlPage *>(control_mapping_->data()),
                           std::memory_order_release);
            return;
        }
        case hw::CommandOpcode::kDetach:
            control_.store(nullptr, std::memory_order_release);
            control_mapping_.reset();
            release_registrations();
            return;
        case hw::CommandOpcode::kDeregisterMr:
        case hw::CommandOpcode::kFreeMr: {
            if (request.request_bytes != sizeof(hw::ObjectRequest)) return;
            const auto &rq = reinterpret_cast<const hw::ObjectRequest &>(request);
            if (auto it = registrations_.find(rq.object); it != registrations_.end()) {
                RegistrationMirror::instance().release(it->second.va, it->second.length);
                registrations_.erase(it);
            }
            return;
        }
        case hw::CommandOpcode::kReleaseLam: {
            if (request.request_bytes != sizeof(hw::ObjectRequest)) return;
            const auto &rq = reinterpret_cast<const hw::ObjectRequest &>(request);
            if (auto it = lams_.find(rq.object); it != lams_.end()) {
                RegistrationMirror::instance().release(it->second.va, it->second.length);
                lams_.erase(it);
            }
            return;
        }
        default:
            return;
    }
}

void DaemonClient::release_registrations() {
    for (const auto &[index, range] : registrations_)
        RegistrationMirror::instance().release(range.va, range.length);
    registrations_.clear();
    for (const auto &[id, range] : lams_)
        RegistrationMirror::instance().release(range.va, range.length);
    lams_.clear();
}

void *DaemonClient::map(const hw::MemoryHandle &handle) {
    if (t_last.client != this || handle.fd_index >= t_last.fds.size() || handle.bytes == 0 ||
        handle.offset % hw::kPageBytes != 0) {
        return nullptr;
    }
    const int fd = t_last.fds[handle.fd_index].get();
    std::string error;
    // The daemon sealed it; check anyway: a file that could shrink could SIGBUS us.
    if (!require_seals(fd, kRequiredSeals, handle.offset + handle.bytes, error)) {
        logger(Component::kDevice).error("daemon memory: {}", error);
        return nullptr;
    }
    void *p = ::mmap(nullptr, handle.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                     static_cast<off_t>(handle.offset));
    return p == MAP_FAILED ? nullptr : p;
}

void DaemonClient::unmap(void *address, size_t bytes) {
    if (address != nullptr && bytes != 0) ::munmap(address, bytes);
}

void DaemonClient::watch_removal(std::function<void()> on_removed) {
    stop_watching();
    if (!on_removed) return;
    std::lock_guard lock(watch_mutex_);
    watch_stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC));
    if (!watch_stop_) {
        logger(Component::kDevice).error("daemon watcher: eventfd: {}", std::strerror(errno));
        return;
    }
    watcher_ = std::thread([socket = socket_.get(), stop = watch_stop_.get(),
                            on_removed = std::move(on_removed)] {
        // POLLRDHUP alone: data the daemon sends (responses) does not wake this poll, only
        // its end closing does. POLLHUP and POLLERR are reported whatever was asked.
        std::array<pollfd, 2> fds{pollfd{socket, POLLRDHUP, 0}, pollfd{stop, POLLIN, 0}};
        for (;;) {
            if (::poll(fds.data(), fds.size(), -1) < 0) {
                if (errno == EINTR) continue;
                logger(Component::kDevice).error("daemon watcher: poll: {}", std::strerror(errno));
                return;
            }
            if (fds[1].revents != 0) return;  // stop_watching()
            if ((fds[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) break;
        }
        logger(Component::kDevice).error("the SoftNDK daemon closed the session: device removed");
        on_removed();
    });
}

void DaemonClient::stop_watching() {
    std::lock_guard lock(watch_mutex_);
    if (!watcher_.joinable()) return;
    const uint64_t one = 1;
    if (::write(watch_stop_.get(), &one, sizeof one) != sizeof one) {
        logger(Component::kDevice)
            .error("daemon watcher: cannot stop it: {}", std::strerror(errno));
    }
    watcher_.join();
    watch_stop_ = UniqueFd();
}

void DaemonClient::ring() {
    hw::ContextControlPage *page = control_.load(std::memory_order_acquire);
    if (page == nullptr) return;
    if (claim_sleeper(page->wake.device_sleeping)) futex_wake(page->wake.device_sleeping.value, 1);
}

}  // namespace softndk::emu::daemon
