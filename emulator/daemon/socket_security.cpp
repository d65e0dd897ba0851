#include "daemon/socket_security.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "daemon/memfd.hpp"

namespace softndk::emu::daemon {

namespace {

std::string mode_text(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

// True if something accepts connections on `path`.
bool socket_is_live(const std::string &path) {
    UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    return s && ::connect(s.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0;
}

// lstat `directory` and check it is a real directory; false with `error` set.
bool lstat_directory(const std::string &directory, struct stat &st, std::string &error) {
    if (::lstat(directory.c_str(), &st) != 0) {
        error = directory + ": " + std::strerror(errno);
        return false;
    }
    if (S_ISLNK(st.st_mode)) {
        error = directory + " is a symbolic link; refusing to put the socket behind it";
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        error = directory + " is not a directory";
        return false;
    }
    return true;
}

}  // namespace

bool daemon_trusted(uid_t daemon_uid, uid_t own_uid) {
    return daemon_uid == own_uid || daemon_uid == 0;
}

bool peer_allowed(uid_t peer_uid, gid_t peer_gid, uid_t own_uid,
                  std::optional<gid_t> allowed_group) {
    if (peer_uid == own_uid || peer_uid == 0) return true;
    return allowed_group.has_value() && peer_gid == *allowed_group;
}

bool peer_credentials(int fd, uid_t &uid, gid_t &gid, pid_t &pid, std::string &error) {
    ucred cred{};
    socklen_t length = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0 || length != sizeof cred) {
        error = std::string("SO_PEERCRED: ") + std::strerror(errno);
        return false;
    }
    uid = cred.uid;
    gid = cred.gid;
    pid = cred.pid;
    return true;
}

std::string fallback_socket_directory(uid_t uid) {
    return "/tmp/softndk-" + std::to_string(uid);
}

bool ensure_private_directory(const std::string &directory, uid_t owner, std::string &error) {
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
        error = "cannot create " + directory + ": " + std::strerror(errno);
        return false;
    }
    struct stat st {};
    if (!lstat_directory(directory, st, error)) return false;
    if (st.st_uid != owner) {
        error = directory + " belongs to uid " + std::to_string(st.st_uid) + ", not " +
                std::to_string(owner) + "; someone else made it: remove it or set SOFTNDK_SOCKET";
        return false;
    }
    if ((st.st_mode & 077) != 0) {
        error = directory + " has mode " + mode_text(st.st_mode) +
                "; it must be 0700 (chmod 700 it, or remove it)";
        return false;
    }
    return true;
}

bool check_socket_directory(const std::string &directory, uid_t owner, std::string &error) {
    struct stat st {};
    if (!lstat_directory(directory, st, error)) return false;
    if (st.st_uid != owner && st.st_uid != 0) {
        error = directory + " belongs to uid " + std::to_string(st.st_uid) +
                ": another user could replace the socket";
        return false;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
        error = directory + " has mode " + mode_text(st.st_mode) +
                ": others can write it and it is not sticky, so they could replace the socket";
        return false;
    }
    return true;
}

bool remove_stale_socket(const std::string &path, uid_t owner, std::string &error) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return true;
        error = path + ": " + std::strerror(errno);
        return false;
    }
    if (!S_ISSOCK(st.st_mode)) {
        error = path + " exists and is not a socket; refusing to remove it";
        return false;
    }
    if (st.st_uid != owner) {
        error =
            path + " is a socket of uid " + std::to_string(st.st_uid) + "; refusing to remove it";
        return false;
    }
    if (socket_is_live(path)) {
        error = "a daemon is already listening on " + path;
        return false;
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        error = "cannot remove the stale socket " + path + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

}  // namespace softndk::emu::daemon
