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
// kDisconnected). Nothing a client sends can stop the daemon.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/device.hpp"

namespace softndk::emu::daemon {

struct DaemonOptions {
    std::string socket_path;                // default_socket_path() if empty
    std::vector<AdapterConfig> adapters;    // default_adapter_config() if empty
    std::chrono::nanoseconds spin{25'000};  // doorbell thread's poll budget before sleeping
    bool handle_signals = true;             // SIGINT/SIGTERM -> stop()
    // Besides our own uid and root, serve the processes whose primary group this is
    // (socket_security.hpp peer_allowed); the socket is then mode 0660 in that group.
    std::optional<gid_t> allowed_group;
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
