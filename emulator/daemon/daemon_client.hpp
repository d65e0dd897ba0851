// daemon_client.hpp - DeviceClient over the daemon's control socket (daemon mode).
//
//   execute()      = the request struct over the socket, the response back (one at a
//                    time: a mutex serialises callers); the connection manager's
//                    commands through the context's command slot in shared memory
//                    instead (hw_interface.hpp §8: no system call while both spin).
//                    kRegisterMr with a plain address (fd_index = kNoFd, as the
//                    provider sends it) is rewritten here: the range's pages move into
//                    the process's RegistrationMirror and the request names the
//                    mirror fd at file offset = address. The pages go back to private
//                    memory when the MR is deregistered or freed, or the context
//                    detaches;
//   map()          = mmap(MAP_SHARED) of the fd a MemoryHandle of the LAST response on
//                    this thread names, after checking it is sealed against shrinking;
//   ring()         = the waker side of the wake protocol on this context's control page
//                    (a fence and a load while the device thread is awake; FUTEX_WAKE
//                    only when it announced sleep);
//   runs_inline()  = false: completions arrive asynchronously;
//   watch_removal()= a watcher thread polls the control socket for the daemon's hang-up
//                    (POLLRDHUP: it never reads, so it takes nothing from round trips)
//                    and calls the callback once, the moment the daemon dies or closes
//                    the session (a SIGKILL included: the kernel closes its end).
// If the daemon goes away every command returns STATUS_DEVICE_REMOVED.
// Timeouts: connecting and every response wait at most reply_timeout()
// (SOFTNDK_DAEMON_TIMEOUT, default 10000; 0 = wait forever). A command whose answer
// does not come in time returns STATUS_IO_TIMEOUT, and the session is then treated as
// lost (the stream is out of step): later commands return STATUS_DEVICE_REMOVED and
// the removal callback runs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/memfd.hpp"
#include "softndk/device_client.hpp"

namespace softndk::emu::daemon {

class DaemonClient final : public DeviceClient {
  public:
    // Connects to the daemon at `socket_path` and checks that it has adapter `if_index`.
    // nullptr with `error` set otherwise.
    static std::unique_ptr<DaemonClient> connect(const std::string &socket_path, uint32_t if_index,
                                                 std::string &error);
    ~DaemonClient() override;  // detaches if attached, then closes the socket

    // Asks the daemon at `socket_path` for its status (kDaemonStatus; `if_index` 0 =
    // the daemon alone) without attaching. False with `error` set if it cannot.
    static bool query_status(const std::string &socket_path, uint32_t if_index,
                             struct DaemonStatusResponse &status, std::string &error);

    // Asks the daemon at `socket_path` for every adapter it has (kDaemonAdapter, in its
    // configuration order) without attaching. False with `error` set if it cannot.
    static bool query_adapters(const std::string &socket_path,
                               std::vector<struct DaemonAdapterResponse> &adapters,
                               std::string &error);

    int32_t execute(const hw::CommandHeader &request, hw::ResponseHeader &response,
                    size_t response_bytes, std::span<const int> fds = {}) override;
    void *map(const hw::MemoryHandle &handle) override;
    void unmap(void *address, size_t bytes) override;
    void ring() override;
    bool runs_inline() const override { return false; }
    void watch_removal(std::function<void()> on_removed) override;

    int socket() const { return socket_.get(); }

    // How long connect() and each response may take (see the header comment).
    static std::chrono::milliseconds reply_timeout();

  private:
    explicit DaemonClient(UniqueFd socket) : socket_(std::move(socket)) {}
    static std::unique_ptr<DaemonClient> open_session(const std::string &socket_path,
                                                      uint32_t if_index,
                                                      struct DaemonStatusResponse &status,
                                                      std::string &error);
    // One command through the context's command slot (hw_interface.hpp §8) instead of
    // the socket: for command_slot_serves() opcodes without fds. Caller holds mutex_.
    int32_t slot_round_trip(const hw::CommandHeader &request, hw::ResponseHeader &response,
                            size_t response_bytes);
    // The session is lost (the daemon hung up, or did not answer in time): logs it once,
    // shuts the socket, writes and returns the status. Caller holds mutex_.
    int32_t lost(const hw::CommandHeader &request, hw::ResponseHeader &response,
                 size_t response_bytes, bool timed_out);
    // One round trip; `received` gets the response's fds. Caller holds mutex_.
    int32_t round_trip(const hw::CommandHeader &request, hw::ResponseHeader &response,
                       size_t response_bytes, std::span<const int> fds,
                       std::vector<UniqueFd> &received);
    struct Range {
        uint64_t va;
        uint64_t length;
    };
    // register_mr and build_lam: the consumer's pages (rq.memory.embedded_address) move
    // into the registration mirror, the command goes with the mirror's fd, and on
    // success the range is kept under the key key_of(rq, response, response_bytes)
    // picks (MPT index, LAM id), releasing what that key held before. Without a key
    // (failure, short response) the pages are released again. Caller holds mutex_.
    template <class Request, class KeyOf>
    int32_t mirrored_round_trip(Request rq, const char *what, std::map<uint32_t, Range> &ranges,
                                KeyOf key_of, hw::ResponseHeader &response, size_t response_bytes,
                                std::vector<UniqueFd> &received);
    int32_t register_mr(const hw::CommandHeader &request, hw::ResponseHeader &response,
                        size_t response_bytes, std::vector<UniqueFd> &received);
    int32_t build_lam(const hw::CommandHeader &request, hw::ResponseHeader &response,
                      size_t response_bytes, std::vector<UniqueFd> &received);
    void after(const hw::CommandHeader &request, const hw::ResponseHeader &response,
               size_t response_bytes, int32_t status, std::vector<UniqueFd> &received);
    void release_registrations();
    void stop_watching();

    // watch_removal(): the watcher thread and the eventfd that stops it.
    std::mutex watch_mutex_;
    std::thread watcher_;
    UniqueFd watch_stop_;

    std::mutex mutex_;
    UniqueFd socket_;
    bool broken_ = false;
    uint32_t slot_sequence_ = 0;  // the command slot's last request_sequence (mutex_)
    std::atomic<hw::ContextControlPage *> control_{nullptr};
    std::unique_ptr<Mapping> control_mapping_;
    std::map<uint32_t, Range> registrations_;  // MPT index -> mirrored range
    std::map<uint32_t, Range> lams_;           // LAM id -> mirrored range
};

}  // namespace softndk::emu::daemon
