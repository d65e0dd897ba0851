// readiness.hpp - how `softndk rnic` tells whoever started it that clients can connect.
//
// Three ways, all reporting the same moment: the control socket listens (the Daemon
// constructor returned), so a consumer started afterwards attaches at its first try.
//
//   --ready-fd N   write_ready_fd(N): "READY=1\n" is written to the inherited fd N,
//                  which is then closed. The reader sees that line, or end-of-file
//                  without it if the daemon failed before listening.
//   NOTIFY_SOCKET  notify_service_manager("READY=1\nMAINPID=<pid>"): systemd's
//                  sd_notify protocol (Type=notify units, scripts/systemd/), one
//                  datagram on the AF_UNIX socket named by the variable ('@' = an
//                  abstract name). Implemented here rather than with libsystemd: the
//                  protocol is one sendto(), and SoftNDK keeps no build or run-time
//                  dependency on systemd for it.
//   --detach       detach_until_ready(): forks; the parent stays in the calling shell
//                  until the child reports readiness through a pipe (the --ready-fd
//                  mechanism), prints the child's pid and exits 0, or exits with the
//                  child's status if the child ended first. The child carries on as
//                  the daemon in a new session, stdin and stdout on /dev/null.
#pragma once

#include <string>

namespace softndk::emu::daemon {

// Writes "READY=1\n" to `fd` and closes it. False (with `error`) if the fd is not
// open or the write fails; the fd is closed either way.
bool write_ready_fd(int fd, std::string &error);

// Sends `state` (e.g. "READY=1" or "STOPPING=1") to $NOTIFY_SOCKET. Returns true
// without sending anything if NOTIFY_SOCKET is unset or empty (not run by a service
// manager that asked for notifications); false with `error` if the send fails.
bool notify_service_manager(const std::string &state, std::string &error);

// --detach. Must be called before any thread is started (it forks). In the parent it
// never returns: it waits for the child, then exits 0 after printing the child's pid to
// stdout if the child reported readiness, else with the child's exit status (1 if a
// signal ended it). In the child it returns true with `ready_fd` set: the child goes on
// to start the daemon and hands `ready_fd` to write_ready_fd once it listens (or exits
// on failure). False with `error` if the pipe or the fork could not be made.
bool detach_until_ready(int &ready_fd, std::string &error);

}  // namespace softndk::emu::daemon
