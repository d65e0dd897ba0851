#include "daemon/readiness.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace softndk::emu::daemon {

namespace {

constexpr char kReadyLine[] = "READY=1\n";

// write() until everything is written or it fails (EINTR retried).
bool write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

bool write_ready_fd(int fd, std::string &error) {
    const bool written = write_all(fd, kReadyLine, sizeof kReadyLine - 1);
    const int write_errno = errno;
    ::close(fd);
    if (!written) {
        error = "--ready-fd " + std::to_string(fd) + ": " + std::strerror(write_errno);
        return false;
    }
    return true;
}

bool notify_service_manager(const std::string &state, std::string &error) {
    const char *name = std::getenv("NOTIFY_SOCKET");
    if (name == nullptr || *name == '\0') return true;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const size_t length = std::strlen(name);
    if ((name[0] != '/' && name[0] != '@') || length >= sizeof address.sun_path) {
        error = std::string("NOTIFY_SOCKET '") + name + "' is not a socket path or @name";
        return false;
    }
    std::memcpy(address.sun_path, name, length);
    if (name[0] == '@') address.sun_path[0] = '\0';  // an abstract socket name
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = std::string("NOTIFY_SOCKET: socket: ") + std::strerror(errno);
        return false;
    }
    const auto address_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
    const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                  reinterpret_cast<const sockaddr *>(&address), address_length);
    const int send_errno = errno;
    ::close(fd);
    if (sent != static_cast<ssize_t>(state.size())) {
        error = std::string("NOTIFY_SOCKET ") + name + ": " + std::strerror(send_errno);
        return false;
    }
    return true;
}

bool detach_until_ready(int &ready_fd, std::string &error) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        error = std::string("--detach: pipe: ") + std::strerror(errno);
        return false;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t child = ::fork();
    if (child < 0) {
        error = std::string("--detach: fork: ") + std::strerror(errno);
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        return false;
    }
    if (child == 0) {
        ::close(pipe_fds[0]);
        ::setsid();  // no controlling terminal: the shell's Ctrl-C and hangup spare it
        const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null_fd >= 0) {
            ::dup2(null_fd, STDIN_FILENO);
            ::dup2(null_fd, STDOUT_FILENO);
            ::close(null_fd);
        }
        ready_fd = pipe_fds[1];
        return true;
    }
    // The parent: the child's "READY=1\n", or end-of-file if it exited first.
    ::close(pipe_fds[1]);
    char buffer[sizeof kReadyLine] = {};
    size_t got = 0;
    while (got < sizeof kReadyLine - 1) {
        const ssize_t n = ::read(pipe_fds[0], buffer + got, sizeof kReadyLine - 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    ::close(pipe_fds[0]);
    if (got == sizeof kReadyLine - 1 && std::memcmp(buffer, kReadyLine, got) == 0) {
        std::printf("%d\n", static_cast<int>(child));
        std::fflush(stdout);
        std::_Exit(0);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    std::_Exit(WIFEXITED(status) && WEXITSTATUS(status) != 0 ? WEXITSTATUS(status) : 1);
}

}  // namespace softndk::emu::daemon
