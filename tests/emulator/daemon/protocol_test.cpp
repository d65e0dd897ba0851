// emulator/daemon/protocol.cpp: the control socket's framing helpers, on a socketpair.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <span>
#include <thread>
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

namespace {
// What the daemon's respond() writes: a ResponseFrame, then the body (ResponseHeader
// first), in one buffer.
std::vector<std::byte> response_bytes(int32_t status, uint16_t body_bytes) {
    std::vector<std::byte> out(sizeof(ResponseFrame) + body_bytes);
    const ResponseFrame frame{kResponseMagic, body_bytes, 0};
    std::memcpy(out.data(), &frame, sizeof frame);
    const softndk::hw::ResponseHeader h{7, status};
    std::memcpy(out.data() + sizeof frame, &h, sizeof h);
    for (size_t i = sizeof frame + sizeof h; i < out.size(); ++i)
        out[i] = static_cast<std::byte>(i);
    return out;
}
}  // namespace

TEST_CASE("receive_response rejects what is not one well-formed response", "[protocol]") {
    std::array<std::byte, kMaxRequestBytes> body{};
    std::vector<UniqueFd> fds;
    ResponseFrame frame{};
    SECTION("bytes past the response: the stream is out of step") {
        SocketPair p;
        auto bytes = response_bytes(0, 16);
        bytes.push_back(std::byte{0x5a});
        REQUIRE(send_with_fds(p.ends[1], bytes, {}));
        errno = 0;
        CHECK_FALSE(receive_response(p.ends[0], frame, body, fds));
        CHECK(errno == EPROTO);
    }
    SECTION("a bad magic") {
        SocketPair p;
        auto bytes = response_bytes(0, 8);
        bytes[0] = std::byte{0};
        REQUIRE(send_with_fds(p.ends[1], bytes, {}));
        CHECK_FALSE(receive_response(p.ends[0], frame, body, fds));
        CHECK(errno == EPROTO);
    }
    SECTION("a body shorter than a ResponseHeader, or longer than the most a response has") {
        for (const uint16_t size : {uint16_t{4}, uint16_t{kMaxRequestBytes + 1}}) {
            SocketPair p;
            const ResponseFrame bad{kResponseMagic, size, 0};
            REQUIRE(send_with_fds(p.ends[1], std::as_bytes(std::span(&bad, 1)), {}));
            CHECK_FALSE(receive_response(p.ends[0], frame, body, fds));
            CHECK(errno == EPROTO);
        }
    }
    SECTION("the daemon gone mid-response (a frame, part of the body, then the end)") {
        SocketPair p;
        const auto bytes = response_bytes(0, 64);
        REQUIRE(send_with_fds(p.ends[1], std::span(bytes).first(sizeof(ResponseFrame) + 10), {}));
        ::close(p.ends[1]);
        p.ends[1] = -1;
        CHECK_FALSE(receive_response(p.ends[0], frame, body, fds));
        CHECK(errno == ECONNRESET);
    }
    SECTION("nothing at all, the end of the stream") {
        SocketPair p;
        ::close(p.ends[1]);
        p.ends[1] = -1;
        CHECK_FALSE(receive_response(p.ends[0], frame, body, fds));
    }
}

TEST_CASE("receive_response takes a response whole however it arrives, with its fds",
          "[protocol]") {
    std::array<std::byte, kMaxRequestBytes> body{};
    std::vector<UniqueFd> fds;
    ResponseFrame frame{};
    const auto bytes = response_bytes(-5, 40);
    SECTION("in one write, with an fd: one read takes frame, body and fd") {
        SocketPair p;
        const int passed = ::dup(STDERR_FILENO);
        REQUIRE(passed >= 0);
        REQUIRE(send_with_fds(p.ends[1], bytes, std::span(&passed, 1)));
        ::close(passed);
        REQUIRE(receive_response(p.ends[0], frame, body, fds));
        CHECK(fds.size() == 1);
        // Nothing of it is left in the stream.
        std::array<std::byte, 1> more{};
        CHECK(::recv(p.ends[0], more.data(), more.size(), MSG_DONTWAIT) == -1);
    }
    SECTION("cut anywhere: inside the frame, at its end, inside the body") {
        for (const size_t cut : {size_t{3}, sizeof(ResponseFrame), sizeof(ResponseFrame) + 5}) {
            SocketPair p;
            REQUIRE(send_with_fds(p.ends[1], std::span(bytes).first(cut), {}));
            bool rest_sent = false;  // Catch's macros are not for other threads
            std::thread rest([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                rest_sent = send_with_fds(p.ends[1], std::span(bytes).subspan(cut), {});
            });
            const bool ok = receive_response(p.ends[0], frame, body, fds);
            rest.join();
            REQUIRE(rest_sent);
            REQUIRE(ok);
        }
    }
    CHECK(frame.magic == kResponseMagic);
    CHECK(frame.response_bytes == 40);
    CHECK(std::memcmp(body.data(), bytes.data() + sizeof(ResponseFrame), 40) == 0);
    softndk::hw::ResponseHeader h;
    std::memcpy(&h, body.data(), sizeof h);
    CHECK(h.sequence == 7);
    CHECK(h.status == -5);
}
