#include "daemon/server.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <boost/asio.hpp>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "daemon/doorbell_thread.hpp"
#include "daemon/log.hpp"
#include "daemon/log_limit.hpp"
#include "daemon/memfd_allocator.hpp"
#include "daemon/protocol.hpp"
#include "daemon/socket_security.hpp"
#include "device/config.hpp"
#include "device/status.hpp"
#include "softndk/monotonic.hpp"

namespace softndk::emu::daemon {

namespace asio = boost::asio;
using Local = asio::local::stream_protocol;

namespace {

struct Adapter {
    std::shared_ptr<Device> device;
    MemfdAllocator *allocator = nullptr;  // owned by the device
};

}  // namespace

class Session;

struct Daemon::Impl {
    DaemonOptions options;
    asio::io_context io;
    Local::acceptor acceptor{io};
    asio::signal_set signals{io};
    std::vector<Adapter> adapters;
    std::unique_ptr<DoorbellThread> doorbells;  // after adapters: stopped first
    std::set<std::shared_ptr<Session>> sessions;
    std::map<uint32_t, uint32_t> sessions_per_pid;  // peer pid -> sessions served
    asio::steady_timer accept_backoff{io};
    bool bound = false;
    bool stopped = false;

    void accept();
    void on_accept(const boost::system::error_code &ec, Local::socket socket);
    void shutdown();
    const Adapter *find(uint32_t if_index) const {
        for (const auto &a : adapters) {
            if (a.device->config().if_index == if_index) return &a;
        }
        return nullptr;
    }
};

// One control connection. Lives in Impl::sessions while open; all of it runs on the
// io thread.
class Session : public std::enable_shared_from_this<Session> {
  public:
    Session(Daemon::Impl &daemon, Local::socket socket)
        : daemon_(daemon), socket_(std::move(socket)), request_timer_(daemon.io) {}

    // Serves the peer only if socket_security.hpp's peer_allowed says so; anyone else
    // is closed on before a byte is read (and learns nothing from us).
    void start() {
        uid_t uid = 0;
        gid_t gid = 0;
        pid_t pid = 0;
        std::string error;
        if (!peer_credentials(socket_.native_handle(), uid, gid, pid, error)) {
            static LogLimit limit;
            log_limited(limit, spdlog::level::warn, "session refused: {}", error);
            close();
            return;
        }
        peer_pid_ = static_cast<uint32_t>(pid);
        if (!peer_allowed(uid, gid, ::geteuid(), daemon_.options.allowed_group)) {
            static LogLimit limit;
            log_limited(limit, spdlog::level::warn,
                        "session from pid {} uid {} gid {} refused: this daemon serves uid {}, "
                        "root{}",
                        pid, uid, gid, ::geteuid(),
                        daemon_.options.allowed_group
                            ? " and group " + std::to_string(*daemon_.options.allowed_group)
                            : std::string());
            close();
            return;
        }
        uint32_t &of_process = daemon_.sessions_per_pid[peer_pid_];
        if (of_process >= daemon_.options.limits.sessions_per_process) {
            static LogLimit limit;
            log_limited(limit, spdlog::level::warn,
                        "session from pid {} refused: it has {} sessions already (limit)",
                        peer_pid_, of_process);
            close();
            return;
        }
        ++of_process;
        counted_ = true;
        log().debug("session from pid {} uid {} gid {}", pid, uid, gid);
        read();
    }

    // Ends the session: its context detached, its fds and mappings released. Never
    // throws (a detach that throws is logged; the session goes all the same).
    void close() noexcept {
        if (closed_) return;
        closed_ = true;
        try {
            detach();
        } catch (const std::exception &e) {
            static LogLimit limit;
            log_limited(limit, spdlog::level::err, "pid {}: detach failed: {}", peer_pid_,
                        e.what());
        }
        context_ = kNoContext;
        doorbell_.reset();
        boost::system::error_code ignored;
        request_timer_.cancel();
        socket_.close(ignored);
        fds_.clear();
        if (counted_) {
            auto it = daemon_.sessions_per_pid.find(peer_pid_);
            if (it != daemon_.sessions_per_pid.end() && --it->second == 0) {
                daemon_.sessions_per_pid.erase(it);
            }
            counted_ = false;
        }
        log().debug("session of pid {} closed", peer_pid_);
        auto self = weak_from_this().lock();
        if (self) daemon_.sessions.erase(self);
    }

  private:
    // Every handler of the session goes through here: whatever a request makes the
    // device throw (std::bad_alloc when the process is out of memory or mappings)
    // closes this session and nothing else.
    void read() noexcept {
        try {
            read_available();
        } catch (const std::exception &e) {
            static LogLimit limit;
            log_limited(limit, spdlog::level::err, "pid {}: {}; closing its session", peer_pid_,
                        e.what());
            close();
        }
    }

    // A request still incomplete when the socket has nothing more to read arms the
    // request timer: a client that starts a request (fds and all) and never finishes it
    // loses its session after request_timeout. A request that arrives whole in one read
    // (nearly all of them) never touches the timer: arming and cancelling it cost two
    // timerfd_settime calls per request, 5 % of the daemon's time in a connect loop.
    void arm_request_timer() {
        request_timer_armed_ = true;
        request_timer_.expires_after(daemon_.options.limits.request_timeout);
        request_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code &ec) {
            auto self = weak.lock();
            if (ec || !self || self->closed_ || self->got_ == 0) return;
            static LogLimit limit;
            log_limited(limit, spdlog::level::warn,
                        "pid {}: request not completed within {} ms, closing", self->peer_pid_,
                        self->daemon_.options.limits.request_timeout.count());
            self->close();
        });
    }

    // Reads what is available: the 8-byte header, then the rest of the request. At most
    // kRequestsPerTurn requests per call: a client that pipelines requests without
    // reading the answers gets its turn like everyone else, not the whole I/O thread.
    static constexpr int kRequestsPerTurn = 16;
    void read_available() {
        for (int served = 0;;) {
            if (served == kRequestsPerTurn) {
                asio::post(daemon_.io, [self = shared_from_this()] {
                    if (!self->closed_) self->read();
                });
                return;
            }
            const size_t want = got_ < sizeof(hw::CommandHeader) ? sizeof(hw::CommandHeader) - got_
                                                                 : header().request_bytes - got_;
            const ssize_t n =
                receive_some(socket_.native_handle(), std::span(buffer_).subspan(got_, want), fds_,
                             MSG_DONTWAIT, truncated_);
            if (n == 0) return close();
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    if (got_ != 0 && !request_timer_armed_) arm_request_timer();
                    break;
                }
                return close();
            }
            got_ += static_cast<size_t>(n);
            if (fds_.size() > kMaxFds) {
                // One request carries at most kMaxFds: a client sending more (or more
                // than we could take) is hoarding our fd table.
                static LogLimit limit;
                log_limited(limit, spdlog::level::warn,
                            "pid {}: more than {} fds with one request, closing", peer_pid_,
                            kMaxFds);
                return close();
            }
            if (got_ == sizeof(hw::CommandHeader)) {
                const uint16_t bytes = header().request_bytes;
                if (bytes < sizeof(hw::CommandHeader) || bytes > kMaxRequestBytes) {
                    static LogLimit limit;
                    log_limited(limit, spdlog::level::warn,
                                "pid {}: request_bytes {} out of range, closing", peer_pid_, bytes);
                    respond(status::kInvalidParameter);
                    return close();
                }
            }
            if (got_ >= sizeof(hw::CommandHeader) && got_ == header().request_bytes) {
                if (request_timer_armed_) {
                    request_timer_armed_ = false;
                    request_timer_.cancel();
                }
                got_ = 0;
                const bool ok = process();
                ++served;
                fds_.clear();
                truncated_ = false;
                if (!ok) return close();
            }
        }
        socket_.async_wait(Local::socket::wait_read,
                           [self = shared_from_this()](const boost::system::error_code &ec) {
                               if (ec || self->closed_) return self->close();
                               self->read();
                           });
    }

    hw::CommandHeader header() const {
        hw::CommandHeader h;
        std::memcpy(&h, buffer_.data(), sizeof(h));
        return h;
    }

    // Sends the ResponseFrame, `response` (ResponseHeader first) and `fds`. False if the
    // client does not take it at once (a client that does not read its responses is cut
    // off rather than buffered for).
    bool respond(std::span<const std::byte> response, std::span<const int> fds) {
        std::array<std::byte, sizeof(ResponseFrame) + kMaxRequestBytes> out{};
        const ResponseFrame frame{kResponseMagic, static_cast<uint16_t>(response.size()),
                                  static_cast<uint16_t>(fds.size())};
        std::memcpy(out.data(), &frame, sizeof(frame));
        std::memcpy(out.data() + sizeof(frame), response.data(), response.size());
        return send_with_fds(socket_.native_handle(),
                             std::span(out).first(sizeof(frame) + response.size()), fds,
                             MSG_DONTWAIT);
    }
    bool respond(int32_t status) {
        const hw::ResponseHeader h{header().sequence, status};
        return respond(std::as_bytes(std::span(&h, 1)), {});
    }

    bool process() {
        const hw::CommandHeader h = header();
        std::array<std::byte, kMaxRequestBytes> response{};
        std::vector<UniqueFd> out;
        const int32_t s = execute(h, response, out);
        const hw::ResponseHeader rh{h.sequence, s};
        std::memcpy(response.data(), &rh, sizeof(rh));
        std::vector<int> raw;
        for (const auto &fd : out)
            raw.push_back(fd.get());
        const size_t bytes = std::max(response_bytes_of(h.opcode), sizeof(hw::ResponseHeader));
        if (!respond(std::span(response).first(bytes), raw)) {
            static LogLimit limit;
            log_limited(limit, spdlog::level::warn, "pid {}: response not taken ({}), closing",
                        peer_pid_, std::strerror(errno));
            return false;
        }
        return true;
    }

    std::span<const std::byte> request() const {
        return std::span(buffer_).first(header().request_bytes);
    }

    int32_t execute(const hw::CommandHeader &h, std::span<std::byte> response,
                    std::vector<UniqueFd> &out) {
        if (truncated_) return status::kInvalidParameter;  // fds were dropped
        if (h.opcode == kDaemonStatus) return daemon_status(response);
        if (h.opcode == kDaemonAdapter) return daemon_adapter(response);
        if (h.opcode == hw::CommandOpcode::kAttach &&
            h.request_bytes == sizeof(hw::AttachRequest)) {
            return attach(response, out);
        }
        if (!adapter_) return status::kInvalidParameter;  // no context yet
        int32_t s;
        if (h.opcode == hw::CommandOpcode::kRegisterMr &&
            h.request_bytes == sizeof(hw::RegisterMrRequest)) {
            s = map_consumer_memory<hw::RegisterMrRequest>(response);
        } else if (h.opcode == hw::CommandOpcode::kBuildLam &&
                   h.request_bytes == sizeof(hw::BuildLamRequest)) {
            s = map_consumer_memory<hw::BuildLamRequest>(response);
        } else {
            s = adapter_->device->execute(context_, request(), response);
        }
        if (s == status::kSuccess && h.opcode == hw::CommandOpcode::kDetach) {
            stop_doorbells();
            context_ = kNoContext;
        }
        export_handles(h.opcode, s, response, out);
        return s;
    }

    int32_t daemon_status(std::span<std::byte> response) {
        if (header().request_bytes != sizeof(DaemonStatusRequest)) return status::kInvalidParameter;
        DaemonStatusRequest rq;
        std::memcpy(&rq, buffer_.data(), sizeof(rq));
        DaemonStatusResponse rs{};
        rs.daemon_pid = static_cast<uint32_t>(::getpid());
        rs.sessions = static_cast<uint32_t>(daemon_.sessions.size());
        rs.adapters = static_cast<uint32_t>(daemon_.adapters.size());
        if (const Adapter *a = daemon_.find(rq.if_index)) {
            rs.adapter_found = 1;
            rs.adapter_contexts = static_cast<uint32_t>(a->device->context_count());
        }
        rs.serviced_contexts = static_cast<uint32_t>(daemon_.doorbells->contexts());
        rs.device_sleeps = daemon_.doorbells->sleeps();
        rs.device_wakeups = daemon_.doorbells->wakeups();
        std::memcpy(response.data(), &rs, sizeof(rs));
        return status::kSuccess;
    }

    // kDaemonAdapter: the adapter at the request's position (protocol.hpp); answered
    // with or without a context, like kDaemonStatus.
    int32_t daemon_adapter(std::span<std::byte> response) const {
        if (header().request_bytes != sizeof(DaemonAdapterRequest))
            return status::kInvalidParameter;
        DaemonAdapterRequest rq;
        std::memcpy(&rq, buffer_.data(), sizeof(rq));
        if (rq.position >= daemon_.adapters.size()) return status::kInvalidParameter;
        const DaemonAdapterResponse rs = describe_adapter(
            *daemon_.adapters[rq.position].device, static_cast<uint32_t>(daemon_.adapters.size()));
        std::memcpy(response.data(), &rs, sizeof(rs));
        return status::kSuccess;
    }

    int32_t attach(std::span<std::byte> response, std::vector<UniqueFd> &out) {
        if (context_ != kNoContext) return status::kInvalidDeviceState;
        hw::AttachRequest rq;
        std::memcpy(&rq, buffer_.data(), sizeof(rq));
        const Adapter *a = daemon_.find(rq.if_index);
        if (a == nullptr) return status::kInvalidParameter;
        if (peer_pid_ != 0) rq.process_id = peer_pid_;  // the kernel's word, not the client's
        uint32_t ctx = kNoContext;
        const int32_t s =
            a->device->execute(kNoContext, std::as_bytes(std::span(&rq, 1)), response);
        if (s == status::kSuccess) {
            hw::AttachResponse rs;
            std::memcpy(&rs, response.data(), sizeof(rs));
            ctx = rs.context_id;
            adapter_ = a;
            context_ = ctx;
            if (!start_doorbells(rs.control_page.embedded_address)) {
                detach();
                std::memset(response.data(), 0, sizeof(rs));
                return status::kInsufficientResources;
            }
            log().info("pid {}: attached to {} as ctx#{}", peer_pid_, a->device->config().alias,
                       ctx);
        }
        export_handles(hw::CommandOpcode::kAttach, s, response, out);
        return s;
    }

    bool start_doorbells(uint64_t control_address) {
        std::string error;
        UniqueFd fd = adapter_->allocator->export_fd(control_address);
        std::unique_ptr<Mapping> page;
        if (fd) page = Mapping::map(fd.get(), 0, hw::kControlPageBytes, error);
        if (!page) {
            log().error("ctx#{}: cannot map its control page: {}", context_, error);
            return false;
        }
        auto entry = std::make_shared<DoorbellThread::Entry>();
        entry->device = adapter_->device;
        entry->context = context_;
        entry->process_id = peer_pid_;
        entry->control = std::move(page);
        doorbell_ = entry;
        daemon_.doorbells->add(std::move(entry));
        return true;
    }

    void stop_doorbells() {
        if (doorbell_) daemon_.doorbells->remove(doorbell_.get());
        doorbell_.reset();
    }

    // kRegisterMr and kBuildLam name the consumer's memfd: seals and size checked, the
    // range mapped and staged for MemfdAllocator::map_registration.
    template <class Request>
    int32_t map_consumer_memory(std::span<std::byte> response) {
        Request rq;
        std::memcpy(&rq, buffer_.data(), sizeof(rq));
        const hw::MemoryHandle &m = rq.memory;
        if (m.fd_index == hw::kNoFd || m.fd_index >= fds_.size()) {
            return status::kInvalidParameter;
        }
        const uint64_t max = adapter_->device->limits().max_registration_bytes;
        const uint64_t length = rq.length;
        if (length == 0 || length > max || m.bytes < length || m.offset > (uint64_t{1} << 62)) {
            return status::kInvalidParameter;
        }
        const uint64_t first = m.offset & ~uint64_t{hw::kPageBytes - 1};
        const uint64_t end = round_up(m.offset + length, hw::kPageBytes);
        std::string error;
        const int fd = fds_[m.fd_index].get();
        std::shared_ptr<const Mapping> mapping;
        int32_t s = status::kInvalidParameter;
        if (require_seals(fd, kRequiredSeals, end, error)) {
            s = map_window(fd, first, end, mapping, error);
        }
        if (!mapping) {
            static LogLimit limit;
            log_limited(limit, spdlog::level::warn, "pid {}: map consumer memory {:#x}+{}: {}",
                        peer_pid_, m.offset, rq.length, error);
            return s;
        }
        const uint64_t window_first = first & ~(kRegistrationWindowBytes - 1);
        const uint64_t address =
            reinterpret_cast<uint64_t>(mapping->data()) + (m.offset - window_first);
        adapter_->allocator->stage_registration(address, std::move(mapping));
        rq.memory.embedded_address = address;
        try {
            s = adapter_->device->execute(context_, std::as_bytes(std::span(&rq, 1)), response);
        } catch (...) {
            adapter_->allocator->unstage_registration(address);
            throw;
        }
        adapter_->allocator->unstage_registration(address);
        return s;
    }

    // The mapping of the consumer memfd `fd` that covers file bytes [first, end): the
    // window-aligned range around them (kRegistrationWindowBytes, cut at the file's
    // end), mapped once and shared by every registration inside it while any of them
    // lives (each MR's Translation keeps it). STATUS_INSUFFICIENT_RESOURCES when the
    // session already has mappings_per_session windows live.
    int32_t map_window(int fd, uint64_t first, uint64_t end,
                       std::shared_ptr<const Mapping> &mapping, std::string &error) {
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            error = std::string("fstat: ") + std::strerror(errno);
            return status::kInvalidParameter;
        }
        const uint64_t file_end = round_up(static_cast<uint64_t>(st.st_size), hw::kPageBytes);
        const uint64_t window_first = first & ~(kRegistrationWindowBytes - 1);
        const uint64_t window_end = std::min(round_up(end, kRegistrationWindowBytes), file_end);
        if (window_end < end) {
            error = "registered range beyond the end of the file";
            return status::kInvalidParameter;
        }
        const WindowKey key{st.st_dev, st.st_ino, window_first, window_end};
        if (auto it = windows_.find(key); it != windows_.end()) {
            if ((mapping = it->second.lock())) return status::kSuccess;
            windows_.erase(it);
        }
        if (windows_.size() >= daemon_.options.limits.mappings_per_session) {
            std::erase_if(windows_, [](const auto &kv) { return kv.second.expired(); });
            if (windows_.size() >= daemon_.options.limits.mappings_per_session) {
                error = "the session's mapping quota (" +
                        std::to_string(daemon_.options.limits.mappings_per_session) +
                        " windows) is used up";
                return status::kInsufficientResources;
            }
        }
        std::unique_ptr<Mapping> fresh =
            Mapping::map(fd, window_first, window_end - window_first, error);
        if (!fresh) return status::kInsufficientResources;
        mapping = std::move(fresh);
        windows_[key] = mapping;
        return status::kSuccess;
    }

    // Replaces the daemon addresses in the response's MemoryHandles by fds.
    void export_handles(hw::CommandOpcode op, int32_t s, std::span<std::byte> response,
                        std::vector<UniqueFd> &out) {
        for (size_t offset : response_handles_of(op)) {
            hw::MemoryHandle h;
            std::memcpy(&h, response.data() + offset, sizeof(h));
            const uint64_t address = h.embedded_address;
            h.embedded_address = 0;
            h.fd_index = hw::kNoFd;
            if (s == status::kSuccess && address != 0) {
                if (UniqueFd fd = adapter_->allocator->export_fd(address)) {
                    h.fd_index = static_cast<uint32_t>(out.size());
                    h.offset = 0;
                    out.push_back(std::move(fd));
                }
            }
            std::memcpy(response.data() + offset, &h, sizeof(h));
        }
    }

    void detach() {
        stop_doorbells();
        if (adapter_ && context_ != kNoContext) {
            hw::ObjectRequest rq{};
            rq.header = {hw::CommandOpcode::kDetach, sizeof(rq), 0};
            std::array<std::byte, sizeof(hw::ObjectResponse)> rs{};
            adapter_->device->execute(context_, std::as_bytes(std::span(&rq, 1)), rs);
            log().info("pid {}: ctx#{} detached", peer_pid_, context_);
        }
        context_ = kNoContext;
    }

    Daemon::Impl &daemon_;
    Local::socket socket_;
    asio::steady_timer request_timer_;
    bool request_timer_armed_ = false;  // armed for the request now being read
    uint32_t peer_pid_ = 0;
    bool closed_ = false;
    bool counted_ = false;  // in daemon_.sessions_per_pid
    // Mapped windows of consumer memory: (device, inode, first, end) of the file.
    using WindowKey = std::tuple<dev_t, ino_t, uint64_t, uint64_t>;
    std::map<WindowKey, std::weak_ptr<const Mapping>> windows_;
    // Current request.
    std::array<std::byte, kMaxRequestBytes> buffer_{};
    size_t got_ = 0;
    std::vector<UniqueFd> fds_;
    bool truncated_ = false;
    // Attached context.
    const Adapter *adapter_ = nullptr;
    uint32_t context_ = kNoContext;
    std::shared_ptr<DoorbellThread::Entry> doorbell_;
};

void Daemon::Impl::accept() {
    acceptor.async_accept([this](const boost::system::error_code &ec, Local::socket socket) {
        on_accept(ec, std::move(socket));
    });
}

void Daemon::Impl::on_accept(const boost::system::error_code &ec, Local::socket socket) {
    if (ec) {
        if (ec == asio::error::operation_aborted || stopped) return;
        // EMFILE/ENFILE (no fd for the new socket) and the like stay true until sessions
        // end: accepting again at once would spin on the same error. Wait, then retry.
        static LogLimit limit;
        log_limited(limit, spdlog::level::warn, "accept: {}; retrying in {} ms", ec.message(),
                    options.limits.accept_backoff.count());
        accept_backoff.expires_after(options.limits.accept_backoff);
        accept_backoff.async_wait([this](const boost::system::error_code &e) {
            if (!e && !stopped) accept();
        });
        return;
    }
    if (sessions.size() >= options.limits.sessions) {
        static LogLimit limit;
        log_limited(limit, spdlog::level::warn, "session refused: {} sessions open (limit)",
                    sessions.size());
        boost::system::error_code ignored;
        socket.close(ignored);
    } else {
        try {
            auto session = std::make_shared<Session>(*this, std::move(socket));
            sessions.insert(session);
            session->start();
        } catch (const std::exception &e) {
            static LogLimit limit;
            log_limited(limit, spdlog::level::err, "new session: {}", e.what());
        }
    }
    accept();
}

void Daemon::Impl::shutdown() {
    if (stopped) return;
    stopped = true;
    boost::system::error_code ignored;
    acceptor.close(ignored);
    accept_backoff.cancel();
    signals.cancel(ignored);
    auto all = sessions;
    for (auto &s : all)
        s->close();
    io.stop();
}

ConsumerQuota default_daemon_quota() {
    ConsumerQuota q;
    q.pds = 256;
    q.cqs = 1024;
    q.qps = 1024;
    q.srqs = 256;
    q.mrs = 16384;
    q.mws = 16384;
    q.listeners = 256;
    return q;
}

bool apply_quota(const std::string &key_equals_n, ConsumerQuota &quota, DaemonLimits &limits,
                 std::string &error) {
    const auto eq = key_equals_n.find('=');
    if (eq == std::string::npos) {
        error = "--quota " + key_equals_n + ": expected KEY=N";
        return false;
    }
    const std::string key = key_equals_n.substr(0, eq);
    const std::string number = key_equals_n.substr(eq + 1);
    uint32_t n = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (ec != std::errc() || end != number.data() + number.size() || n == 0) {
        error = "--quota " + key_equals_n + ": N must be a whole number from 1 to 4294967295";
        return false;
    }
    const std::pair<const char *, uint32_t *> counts[] = {
        {"pds", &quota.pds},
        {"cqs", &quota.cqs},
        {"qps", &quota.qps},
        {"srqs", &quota.srqs},
        {"mrs", &quota.mrs},
        {"mws", &quota.mws},
        {"listeners", &quota.listeners},
        {"mappings", &limits.mappings_per_session},
        {"sessions", &limits.sessions},
        {"sessions-per-process", &limits.sessions_per_process},
    };
    for (const auto &[name, field] : counts) {
        if (key == name) {
            *field = n;
            return true;
        }
    }
    if (key == "request-timeout-ms") {
        limits.request_timeout = std::chrono::milliseconds(n);
        return true;
    }
    error = "--quota " + key_equals_n +
            ": unknown KEY (pds, cqs, qps, srqs, mrs, mws, listeners, mappings, sessions, "
            "sessions-per-process, request-timeout-ms)";
    return false;
}

namespace {

// Every session holds a socket and up to kMaxFds pending fds, and every queue its
// memfd: the usual soft limit (1024) is far below what the session limits allow.
void raise_fd_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

}  // namespace

Daemon::Daemon(DaemonOptions options) : impl_(std::make_unique<Impl>()) {
    auto &d = *impl_;
    d.options = std::move(options);
    raise_fd_limit();
    if (d.options.socket_path.empty()) d.options.socket_path = default_socket_path();
    if (d.options.adapters.empty()) d.options.adapters = default_adapter_config();
    const std::string &path = d.options.socket_path;
    if (path.size() >= sizeof(sockaddr_un::sun_path)) {
        throw std::runtime_error("socket path too long: " + path);
    }
    for (auto &config : d.options.adapters) {
        config.quota = d.options.quota;
        auto allocator = std::make_unique<MemfdAllocator>();
        MemfdAllocator *raw = allocator.get();
        auto device =
            std::make_shared<Device>(config, Fabric::process_fabric(), std::move(allocator));
        d.adapters.push_back(Adapter{std::move(device), raw});
    }
    d.doorbells = std::make_unique<DoorbellThread>(d.options.spin, d.options.spin_policy);

    // The directory: only we (or root) can put a file there (socket_security.hpp).
    std::string error;
    const uid_t self = ::geteuid();
    std::string directory = std::filesystem::path(path).parent_path().string();
    if (directory.empty()) directory = ".";
    const bool directory_ok = directory == fallback_socket_directory(self)
                                  ? ensure_private_directory(directory, self, error)
                                  : check_socket_directory(directory, self, error);
    if (!directory_ok) throw std::runtime_error("socket directory: " + error);
    // A stale socket of ours is replaced; nothing else is ever removed.
    if (!remove_stale_socket(path, self, error)) throw std::runtime_error(error);
    boost::system::error_code ec;
    d.acceptor.open(Local(), ec);
    if (!ec) d.acceptor.bind(Local::endpoint(path), ec);
    if (ec) throw std::runtime_error("cannot bind " + path + ": " + ec.message());
    d.bound = true;
    if (d.options.allowed_group) {
        // The group's members must be able to connect (and reach the directory: the
        // administrator's choice, socket_security.hpp).
        if (::chown(path.c_str(), static_cast<uid_t>(-1), *d.options.allowed_group) != 0)
            throw std::runtime_error("cannot give " + path + " to group " +
                                     std::to_string(*d.options.allowed_group) + ": " +
                                     std::strerror(errno));
        ::chmod(path.c_str(), 0660);
    } else {
        ::chmod(path.c_str(), 0600);  // this user's processes only
    }
    d.acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::runtime_error("cannot listen on " + path + ": " + ec.message());
    if (d.options.handle_signals) {
        d.signals.add(SIGINT);
        d.signals.add(SIGTERM);
        d.signals.async_wait([&d](const boost::system::error_code &e, int signal) {
            if (e) return;
            log().info("signal {}: shutting down", signal);
            d.shutdown();
        });
    }
    d.accept();
    for (const auto &a : d.adapters) {
        log().info("adapter {} (if_index {}) ready", a.device->config().alias,
                   a.device->config().if_index);
    }
    log().info("listening on {}", path);
}

Daemon::~Daemon() {
    auto &d = *impl_;
    d.shutdown();
    d.sessions.clear();
    d.doorbells.reset();
    if (d.bound) ::unlink(d.options.socket_path.c_str());
}

namespace {
// io.run(), except that after the last handler ran the thread keeps polling for ready
// ones, yielding the CPU in between, for up to kIdleSpinNs before it blocks. A consumer
// issues its commands one after another (create, register, connect, ...) and waits for
// each answer; blocking at once put the I/O thread to sleep between them, and on a VM
// the halted vCPU's wakeup cost more than the command (client side:
// await_readable_briefly). Polling the whole io_context, not one session's socket,
// keeps every session's turn fair. One CPU: plain run(), a spin would hold the CPU the
// consumer needs.
constexpr uint64_t kIdleSpinNs = 20'000;

void run_io(asio::io_context &io) {
    if (!spinning_pays()) {
        io.run();
        return;
    }
    uint64_t idle_since = monotonic_ns();
    while (!io.stopped()) {
        if (io.poll() != 0) {
            idle_since = monotonic_ns();
        } else if (io.stopped()) {
            return;  // out of work, as run() returns
        } else if (monotonic_ns() - idle_since < kIdleSpinNs) {
            ::sched_yield();
        } else {
            io.run_one();  // sleeps until a handler is ready
            idle_since = monotonic_ns();
        }
    }
}
}  // namespace

void Daemon::run() {
    // Session handlers catch what they throw (Session::read); this catches whatever
    // else might, so that one bad handler never ends the daemon.
    for (;;) {
        try {
            run_io(impl_->io);
            return;
        } catch (const std::exception &e) {
            log().error("I/O thread: {} (continuing)", e.what());
        }
    }
}

void Daemon::stop() {
    asio::post(impl_->io, [this] { impl_->shutdown(); });
}

const std::string &Daemon::socket_path() const {
    return impl_->options.socket_path;
}

}  // namespace softndk::emu::daemon
