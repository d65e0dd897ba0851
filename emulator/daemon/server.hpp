// server.hpp - `softndk rnic`: the virtual RNIC(s) in their own process.
//
// One Daemon hosts the configured adapters (Devices on one in-process fabric), a
// Boost.Asio Unix-domain control socket and one DoorbellThread. Each accepted
// connection is a Session: at most one context at a time (kAttach .. kDetach), all
// commands on the io thread. Wire format and validation: protocol.hpp.
//
// A session ends when its socket closes (the process exited or was killed) or
// misbehaves beyond repair (oversized/undersized request_bytes, a response it does
// not read); the daemon then detaches its context exactly as Device treats a dead
// process: every object freed, every connection disconnected (peers get
// kDisconnected). Nothing a client sends can stop the daemon: an exception thrown while
// a session's request is handled closes that session only (logged), and run() goes on.
//
// Limits (issue 16; docs/daemon.md "Quotas and limits"): each session's context gets
// DaemonOptions::quota (ConsumerQuota, device.hpp); past it a create answers
// STATUS_INSUFFICIENT_RESOURCES. DaemonLimits bounds what a session can make the
// daemon hold: sessions (all, and per peer process), fds (a request may carry kMaxFds;
// more closes the session), time (a request begun must be complete within
// request_timeout, else the session is closed and its fds with it), and mappings of
// consumer memory (registrations are mapped per memfd window, kRegistrationWindowBytes,
// shared by every registration inside it; at most mappings_per_session windows live).
// Accept failures (EMFILE: no fd left) back off instead of spinning, and every log line
// a client can trigger is rate-limited (log_limit.hpp).
#pragma once

#include <sys/types.h>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/doorbell_thread.hpp"
#include "device/device.hpp"

namespace softndk::emu::daemon {

// Consumer memory is mapped in windows of this size (aligned in the file): one mmap
// serves every registration of a memfd that falls in the same window(s).
inline constexpr uint64_t kRegistrationWindowBytes = uint64_t{1} << 30;

struct DaemonLimits {
    uint32_t sessions = 256;                          // open control connections, all peers
    uint32_t sessions_per_process = 64;               // ... of one peer process (SO_PEERCRED pid)
    uint32_t mappings_per_session = 1024;             // live windows of consumer memory
    std::chrono::milliseconds request_timeout{5000};  // first byte -> whole request
    std::chrono::milliseconds accept_backoff{100};    // after EMFILE/ENFILE and the like
};

// The daemon's default per-consumer quota (docs/daemon.md): pds 256, cqs 1024, qps 1024,
// srqs 256, mrs 16384, mws 16384, listeners 256.
ConsumerQuota default_daemon_quota();

// Applies one `KEY=N` of `softndk rnic --quota` (N a decimal count, >= 1). Keys: pds,
// cqs, qps, srqs, mrs, mws, listeners (ConsumerQuota), and mappings, sessions,
// sessions-per-process, request-timeout-ms (DaemonLimits). False with `error` set for
// an unknown key or a bad number.
bool apply_quota(const std::string &key_equals_n, ConsumerQuota &quota, DaemonLimits &limits,
                 std::string &error);

struct DaemonOptions {
    std::string socket_path;                // default_socket_path() if empty
    std::vector<AdapterConfig> adapters;    // default_adapter_config() if empty
    std::chrono::nanoseconds spin{25'000};  // doorbell thread's poll budget before sleeping
    // ... applied always, or only while a CPU is to spare (doorbell_thread.hpp)
    DoorbellThread::SpinPolicy spin_policy = DoorbellThread::SpinPolicy::kSpareCore;
    bool handle_signals = true;  // SIGINT/SIGTERM -> stop()
    // Besides our own uid and root, serve the processes whose primary group this is
    // (socket_security.hpp peer_allowed); the socket is then mode 0660 in that group.
    std::optional<gid_t> allowed_group;
    ConsumerQuota quota = default_daemon_quota();  // every adapter's per-context quota
    DaemonLimits limits;
};

class Daemon {
  public:
    // Creates the adapters and binds the socket. The socket's directory must pass
    // socket_security.hpp's checks (the fallback /tmp/softndk-$UID/ is created 0700);
    // a stale socket of our own uid is replaced; a live daemon on the path, or any file
    // there that is not our socket, is an error and is left alone. Throws
    // std::runtime_error.
    explicit Daemon(DaemonOptions options);
    ~Daemon();  // detaches every session, removes the socket file
    Daemon(const Daemon &) = delete;
    Daemon &operator=(const Daemon &) = delete;

    // Serves until stop() (or a signal). Call once, from one thread.
    void run();
    // Thread-safe, async-signal-unsafe: ends run().
    void stop();

    const std::string &socket_path() const;

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace softndk::emu::daemon
