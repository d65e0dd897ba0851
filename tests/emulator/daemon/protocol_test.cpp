// emulator/daemon/protocol.cpp: the control socket's framing helpers, on a socketpair.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstddef>
#include <vector>

#include "daemon/protocol.hpp"

using namespace softndk::emu::daemon;

namespace {
struct SocketPair {
    int ends[2] = {-1, -1};
    SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) == 0); }
    ~SocketPair() {
        for (int fd : ends)
            if (fd >= 0) ::close(fd);
    }
};
}  // namespace

TEST_CASE(
    "await_readable_briefly leaves what is waiting to be read, and returns when nothing comes",
    "[protocol]") {
    SocketPair p;
    // Nothing to read: it gives up after its spin (here 2 ms) without consuming or blocking.
    await_readable_briefly(p.ends[0], 2'000'000);
    std::array<std::byte, 4> got{};
    CHECK(::recv(p.ends[0], got.data(), got.size(), MSG_DONTWAIT) == -1);
    // Something to read: it returns, and the bytes are still there for receive_exact.
    const std::array<std::byte, 4> sent{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
    REQUIRE(send_with_fds(p.ends[1], sent, {}));
    await_readable_briefly(p.ends[0], 60'000'000'000);  // a minute: returns at once
    std::vector<UniqueFd> fds;
    REQUIRE(receive_exact(p.ends[0], got, fds));
    CHECK(got == sent);
    CHECK(fds.empty());
    // A peer that hung up ends the wait too, and the read sees the end of the stream.
    ::close(p.ends[1]);
    p.ends[1] = -1;
    await_readable_briefly(p.ends[0], 60'000'000'000);
    CHECK_FALSE(receive_exact(p.ends[0], got, fds));
    // A spin of 0 returns at once.
    await_readable_briefly(p.ends[0], 0);
}
