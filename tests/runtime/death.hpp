// death.hpp - death tests: run a callable in a forked child and report how the child ended
// and what it wrote. The child restores the default SIGABRT action first (Catch2's handler
// would otherwise report the abort as a failure of the running test).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

namespace softndk::test {

struct ChildResult {
    int wait_status = 0;
    std::string out;  // the child's stdout
    std::string err;  // the child's stderr

    bool aborted() const { return WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGABRT; }
    bool exited_zero() const { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }
};

inline std::string read_all(int fd) {
    std::string text;
    char buffer[4096];
    for (;;) {
        const ssize_t n = read(fd, buffer, sizeof(buffer));
        if (n > 0) {
            text.append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            return text;
        }
    }
}

// Runs body() in a child process; the child exits 0 if body returns. Outputs up to the pipe
// capacity (64 KiB each) are captured.
template <class Body>
ChildResult run_in_child(Body body) {
    int out_pipe[2];
    int err_pipe[2];
    if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return {-1, "", "pipe() failed"};
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL);
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        close(out_pipe[0]);
        close(out_pipe[1]);
        close(err_pipe[0]);
        close(err_pipe[1]);
        body();
        std::fflush(stdout);
        std::fflush(stderr);
        _exit(0);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    ChildResult result;
    result.err = read_all(err_pipe[0]);
    result.out = read_all(out_pipe[0]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    while (waitpid(pid, &result.wait_status, 0) < 0 && errno == EINTR) {
    }
    return result;
}

}  // namespace softndk::test
