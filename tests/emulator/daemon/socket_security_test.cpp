// Who may be on either end of the control socket, and where it may live
// (emulator/daemon/socket_security.hpp; issue 16, item 1). The checks against another
// uid need root (to become uid 65534 in a child); without root those sections warn and
// check nothing.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "daemon/daemon_client.hpp"
#include "daemon/protocol.hpp"
#include "daemon/server.hpp"
#include "daemon/socket_security.hpp"
#include "temp_dir.hpp"

using namespace softndk::emu::daemon;
namespace fs = std::filesystem;

using softndk::emu::daemon::test::TempDir;

namespace {

constexpr uid_t kNobody = 65534;

mode_t mode_of(const std::string &path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

sockaddr_un address_of(const std::string &path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    return a;
}

// A socket file nobody listens on any more (a daemon that died): bound, then closed.
void make_stale_socket(const std::string &path) {
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    const sockaddr_un a = address_of(path);
    REQUIRE(::bind(s, reinterpret_cast<const sockaddr *>(&a), sizeof a) == 0);
    ::close(s);
}

bool root() {
    if (::geteuid() == 0) return true;
    WARN("not root: the checks against another uid are not run");
    return false;
}

// Waits for child `pid`; its exit status.
int exit_status(pid_t pid) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("the client talks to a daemon of its own uid or root only", "[daemon][security]") {
    CHECK(daemon_trusted(1000, 1000));
    CHECK(daemon_trusted(0, 1000));
    CHECK(daemon_trusted(0, 0));
    CHECK_FALSE(daemon_trusted(1001, 1000));
    CHECK_FALSE(daemon_trusted(1000, 0));  // root's consumer does not trust a user's daemon
}

TEST_CASE("the daemon serves its own uid, root, and the group it was given", "[daemon][security]") {
    CHECK(peer_allowed(1000, 1000, 1000, std::nullopt));
    CHECK(peer_allowed(0, 0, 1000, std::nullopt));
    CHECK_FALSE(peer_allowed(1001, 1001, 1000, std::nullopt));
    CHECK_FALSE(peer_allowed(1001, 50, 1000, std::nullopt));
    CHECK(peer_allowed(1001, 50, 1000, gid_t{50}));
    CHECK_FALSE(peer_allowed(1001, 51, 1000, gid_t{50}));
}

TEST_CASE("the fallback directory is created 0700 and refused unless it is ours and private",
          "[daemon][security]") {
    TempDir tmp;
    const uid_t self = ::geteuid();
    std::string error;
    CHECK(fallback_socket_directory(1234) == "/tmp/softndk-1234");

    const std::string fresh = tmp.path + "/fresh";
    REQUIRE(ensure_private_directory(fresh, self, error));
    CHECK((mode_of(fresh) & 07777) == 0700);
    CHECK(ensure_private_directory(fresh, self, error));  // again: it is fine as it is

    const std::string open = tmp.path + "/open";
    REQUIRE(::mkdir(open.c_str(), 0700) == 0);
    REQUIRE(::chmod(open.c_str(), 0755) == 0);
    CHECK_FALSE(ensure_private_directory(open, self, error));
    CHECK_THAT(error, Catch::Contains("0755"));
    CHECK((mode_of(open) & 07777) == 0755);  // refused, not "fixed"

    const std::string link = tmp.path + "/link";
    REQUIRE(::symlink(fresh.c_str(), link.c_str()) == 0);
    CHECK_FALSE(ensure_private_directory(link, self, error));
    CHECK_THAT(error, Catch::Contains("symbolic link"));

    const std::string file = tmp.path + "/file";
    std::ofstream(file) << "x";
    CHECK_FALSE(ensure_private_directory(file, self, error));

    if (root()) {
        const std::string theirs = tmp.path + "/theirs";
        REQUIRE(::mkdir(theirs.c_str(), 0700) == 0);
        REQUIRE(::chown(theirs.c_str(), kNobody, kNobody) == 0);
        CHECK_FALSE(ensure_private_directory(theirs, self, error));
        CHECK_THAT(error, Catch::Contains("belongs to uid 65534"));
    }
}

TEST_CASE("an explicit socket directory must be unwritable by others, or sticky",
          "[daemon][security]") {
    TempDir tmp;
    const uid_t self = ::geteuid();
    std::string error;
    CHECK(check_socket_directory(tmp.path, self, error));  // mkdtemp: 0700
    REQUIRE(::chmod(tmp.path.c_str(), 0777) == 0);
    CHECK_FALSE(check_socket_directory(tmp.path, self, error));
    REQUIRE(::chmod(tmp.path.c_str(), 01777) == 0);  // as /tmp
    CHECK(check_socket_directory(tmp.path, self, error));
    REQUIRE(::chmod(tmp.path.c_str(), 0700) == 0);
    if (root()) {
        REQUIRE(::chown(tmp.path.c_str(), kNobody, kNobody) == 0);
        CHECK_FALSE(check_socket_directory(tmp.path, self, error));
        REQUIRE(::chown(tmp.path.c_str(), 0, 0) == 0);
    }
}

TEST_CASE("only a stale socket of our own uid is ever removed", "[daemon][security]") {
    TempDir tmp;
    const uid_t self = ::geteuid();
    std::string error;

    CHECK(remove_stale_socket(tmp.path + "/nothing", self, error));

    const std::string file = tmp.path + "/file.sock";
    std::ofstream(file) << "precious";
    CHECK_FALSE(remove_stale_socket(file, self, error));
    CHECK_THAT(error, Catch::Contains("not a socket"));
    CHECK(read_file(file) == "precious");

    const std::string stale = tmp.path + "/stale.sock";
    make_stale_socket(stale);
    const std::string link = tmp.path + "/link.sock";
    REQUIRE(::symlink(stale.c_str(), link.c_str()) == 0);
    CHECK_FALSE(remove_stale_socket(link, self, error));
    CHECK(S_ISLNK(mode_of(link)));
    CHECK(S_ISSOCK(mode_of(stale)));

    CHECK(remove_stale_socket(stale, self, error));
    CHECK_FALSE(fs::exists(fs::symlink_status(stale)));

    const std::string live = tmp.path + "/live.sock";
    const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
    const sockaddr_un a = address_of(live);
    REQUIRE(::bind(listener, reinterpret_cast<const sockaddr *>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener, 1) == 0);
    CHECK_FALSE(remove_stale_socket(live, self, error));
    CHECK_THAT(error, Catch::Contains("already listening"));
    CHECK(S_ISSOCK(mode_of(live)));
    ::close(listener);

    if (root()) {
        const std::string theirs = tmp.path + "/theirs.sock";
        make_stale_socket(theirs);
        REQUIRE(::lchown(theirs.c_str(), kNobody, kNobody) == 0);
        CHECK_FALSE(remove_stale_socket(theirs, self, error));
        CHECK_THAT(error, Catch::Contains("uid 65534"));
        CHECK(S_ISSOCK(mode_of(theirs)));
    }
}

TEST_CASE("softndk rnic --socket on a file that is not its socket refuses and removes nothing",
          "[daemon][security]") {
    TempDir tmp;
    const std::string file = tmp.path + "/important.txt";
    std::ofstream(file) << "keep me";
    DaemonOptions options;
    options.socket_path = file;
    options.handle_signals = false;
    CHECK_THROWS_WITH(Daemon(options), Catch::Contains("not a socket"));
    CHECK(read_file(file) == "keep me");

    // A directory others can write (and not sticky) is refused before anything is bound.
    REQUIRE(::chmod(tmp.path.c_str(), 0777) == 0);
    options.socket_path = tmp.path + "/rnic.sock";
    CHECK_THROWS_WITH(Daemon(options), Catch::Contains("socket directory"));
    CHECK_FALSE(fs::exists(options.socket_path));
}

TEST_CASE("a consumer refuses an impostor listening on its socket path, and sends it nothing",
          "[daemon][security]") {
    if (!root()) return;
    TempDir tmp;
    REQUIRE(::chmod(tmp.path.c_str(), 0777) == 0);  // the impostor (uid 65534) binds here
    const std::string path = tmp.path + "/softndk.sock";
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t impostor = ::fork();
    REQUIRE(impostor >= 0);
    if (impostor == 0) {
        // The impostor: another uid, listening where the consumer looks. It exits 0 if
        // the consumer sent it nothing, 1 if it got a byte.
        if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
        const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
        const sockaddr_un a = address_of(path);
        if (::bind(s, reinterpret_cast<const sockaddr *>(&a), sizeof a) != 0 || ::listen(s, 1) != 0)
            ::_exit(3);
        (void)!::write(ready[1], "r", 1);
        const int c = ::accept(s, nullptr, nullptr);
        if (c < 0) ::_exit(4);
        char byte;
        ::_exit(::read(c, &byte, 1) > 0 ? 1 : 0);  // EOF when the consumer closes
    }
    ::close(ready[1]);
    char r;
    REQUIRE(::read(ready[0], &r, 1) == 1);
    ::close(ready[0]);

    std::string error;
    CHECK(DaemonClient::connect(path, 1, error) == nullptr);
    CHECK_THAT(error, Catch::Contains("runs as uid 65534"));
    CHECK(exit_status(impostor) == 0);
}

TEST_CASE("the daemon closes on a peer of another uid before reading a request",
          "[daemon][security]") {
    if (!root()) return;
    TempDir tmp;
    REQUIRE(::chmod(tmp.path.c_str(), 0711) == 0);  // others may reach the socket, not write
    DaemonOptions options;
    options.socket_path = tmp.path + "/rnic.sock";
    options.handle_signals = false;
    Daemon daemon(options);
    std::thread serving([&] { daemon.run(); });
    REQUIRE(::chmod(options.socket_path.c_str(), 0666) == 0);  // let the stranger connect

    // The daemon's own uid is served.
    DaemonStatusResponse status{};
    std::string error;
    CHECK(DaemonClient::query_status(options.socket_path, 0, status, error));

    const pid_t stranger = ::fork();
    REQUIRE(stranger >= 0);
    if (stranger == 0) {
        // Exits 0 if the daemon hung up without answering, 1 if it answered.
        if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
        const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
        const sockaddr_un a = address_of(options.socket_path);
        if (::connect(s, reinterpret_cast<const sockaddr *>(&a), sizeof a) != 0) ::_exit(3);
        DaemonStatusRequest rq{};
        rq.header = {kDaemonStatus, sizeof rq, 0};
        (void)!::send(s, &rq, sizeof rq, MSG_NOSIGNAL);
        char byte;
        ::_exit(::read(s, &byte, 1) > 0 ? 1 : 0);
    }
    CHECK(exit_status(stranger) == 0);
    daemon.stop();
    serving.join();
}
