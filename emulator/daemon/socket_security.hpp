// socket_security.hpp - who may be on the other end of the daemon's control socket,
// and where that socket may live (docs/daemon.md "Who may connect").
//
// A consumer hands the daemon its registered memory (a memfd) and maps memory the
// daemon hands back; the daemon serves whoever reaches its socket. So:
//   - the client talks only to a daemon running as its own uid or as root
//     (daemon_trusted, on SO_PEERCRED, before it sends a byte);
//   - the daemon serves only its own uid, root, or the members of one group it was
//     explicitly given (peer_allowed; SO_PEERCRED carries the peer's primary gid only,
//     so the group must be the consumer's primary group);
//   - the socket lives in a directory nobody else can write: $XDG_RUNTIME_DIR, a
//     directory given explicitly that passes check_socket_directory, or the fallback
//     /tmp/softndk-$UID/, created 0700 and checked by ensure_private_directory;
//   - the daemon removes a file on its socket path only if it is a socket, owned by
//     its own uid, and nobody answers on it (remove_stale_socket); anything else is
//     refused and left alone.
// Every check uses lstat: a symbolic link is never followed, and is refused.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace softndk::emu::daemon {

// Client side: may a consumer running as `own_uid` talk to a daemon running as
// `daemon_uid`? Its own uid or root.
bool daemon_trusted(uid_t daemon_uid, uid_t own_uid);

// Daemon side: may a peer with `peer_uid`/`peer_gid` use a daemon running as `own_uid`
// that was given `allowed_group` (nullopt: none)? Its own uid, root, or that group.
bool peer_allowed(uid_t peer_uid, gid_t peer_gid, uid_t own_uid,
                  std::optional<gid_t> allowed_group);

// The uid and primary gid of the process at the other end of connected Unix socket
// `fd` (SO_PEERCRED). False with `error` set if the kernel cannot tell.
bool peer_credentials(int fd, uid_t &uid, gid_t &gid, pid_t &pid, std::string &error);

// The fallback socket directory: /tmp/softndk-$UID (no trailing slash).
std::string fallback_socket_directory(uid_t uid);

// Creates `directory` with mode 0700 if it does not exist, then checks it: a real
// directory (not a symbolic link), owned by `owner`, with no permission for group or
// others. False with `error` set (nothing changed) if any check fails: someone else
// may have made it to catch our socket.
bool ensure_private_directory(const std::string &directory, uid_t owner, std::string &error);

// Checks the directory an explicitly given socket path lies in: a real directory owned
// by `owner` or root, that group and others cannot write (or can, with the sticky bit
// set, as /tmp: then nobody else can remove or rename our socket). False with `error`.
bool check_socket_directory(const std::string &directory, uid_t owner, std::string &error);

// The daemon is about to bind `path`. Nothing there: true. A socket owned by `owner`
// that nobody accepts on (a daemon that died): unlinked, true. A live socket, a socket
// of another uid, or anything that is not a socket (a file, a directory, a symbolic
// link): false with `error` set, and the file is left as it was.
bool remove_stale_socket(const std::string &path, uid_t owner, std::string &error);

}  // namespace softndk::emu::daemon
