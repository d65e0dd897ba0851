// UdpLink: two fabrics in one process stand for two processes (or hosts); their
// adapters reach each other only through real UDP sockets on loopback.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver.hpp"
#include "wire/frame.hpp"

using namespace softndk;
using namespace softndk::emu;
using namespace softndk::emu::test;

namespace {

// A port per test binary run, away from 4791 so a real RoCE stack is never hit.
uint16_t test_port() {
    return static_cast<uint16_t>(30000 + (::getpid() % 20000));
}

template <typename Predicate>
bool eventually(Predicate done) {
    for (int i = 0; i < 5000; ++i) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done();
}

// Sends `bytes` from an unbound socket to 127.0.0.2:port, as a stranger would.
void send_raw(uint16_t port, const void *bytes, size_t n) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.2", &to.sin_addr);
    CHECK(::sendto(fd, bytes, n, 0, reinterpret_cast<::sockaddr *>(&to), sizeof to) ==
          static_cast<ssize_t>(n));
    ::close(fd);
}

// Adapters a (127.0.0.1) and b (127.0.0.2), each on its own fabric with a UDP link.
struct UdpPair {
    explicit UdpPair(uint16_t port)
        : fabric_a(std::make_shared<Fabric>(port)), fabric_b(std::make_shared<Fabric>(port)) {
        dev_a = std::make_shared<Device>(adapter(1, {"127.0.0.1"}), fabric_a);
        dev_b = std::make_shared<Device>(adapter(2, {"127.0.0.2"}), fabric_b);
        a = std::make_unique<Driver>(dev_a);
        b = std::make_unique<Driver>(dev_b);
        pd_a = a->create_pd();
        pd_b = b->create_pd();
        cq_a = a->create_cq(256);
        cq_b = b->create_cq(256);
        qp_a = a->create_qp(pd_a, *cq_a, *cq_a);
        qp_b = b->create_qp(pd_b, *cq_b, *cq_b);
    }
    void connect() {
        uint32_t listener = 0;
        REQUIRE(b->listen(test::sockaddr("127.0.0.2", 7000), listener) == 0);
        REQUIRE(a->connect(*qp_a, test::sockaddr("127.0.0.1", 0), test::sockaddr("127.0.0.2", 7000),
                           conn_a) == 0);
        auto req = b->wait_event(hw::EqeType::kConnectRequest);
        REQUIRE(req);
        REQUIRE(b->accept(static_cast<uint32_t>(req->data0), *qp_b) == 0);
        auto rep = a->wait_event(hw::EqeType::kConnectReply);
        REQUIRE(rep);
        REQUIRE(rep->status == 0);
        REQUIRE(a->object_command(hw::CommandOpcode::kCompleteConnect, conn_a) == 0);
        REQUIRE(b->wait_event(hw::EqeType::kEstablished));
    }
    ~UdpPair() {
        a.reset();
        b.reset();
        dev_a.reset();
        dev_b.reset();
    }

    std::shared_ptr<Fabric> fabric_a, fabric_b;
    std::shared_ptr<Device> dev_a, dev_b;
    std::unique_ptr<Driver> a, b;
    uint32_t pd_a = 0, pd_b = 0, conn_a = 0;
    std::unique_ptr<CqHandle> cq_a, cq_b;
    std::unique_ptr<QpHandle> qp_a, qp_b;
};

}  // namespace

TEST_CASE("Without a UDP link an address no local port owns is unreachable", "[fabric][udp]") {
    auto fabric = std::make_shared<Fabric>(uint16_t{0});
    CHECK(fabric->udp_link() == nullptr);
    CHECK_FALSE(fabric->reachable(ip("127.0.0.2")));
}

TEST_CASE("Adapters on two fabrics connect and move data over RoCEv2/UDP", "[fabric][udp]") {
    UdpPair p(test_port());
    REQUIRE(p.fabric_a->udp_link() != nullptr);
    CHECK(p.fabric_a->udp_link()->owns_socket_for(ip("127.0.0.1")));
    CHECK(p.fabric_b->udp_link()->owns_socket_for(ip("127.0.0.2")));
    CHECK_FALSE(p.fabric_a->udp_link()->owns_socket_for(ip("127.0.0.2")));
    p.connect();

    // A 1 MiB RDMA WRITE (1024 packets at the tests' MTU of 1024) and a SEND back.
    Buffer src(1 << 20), dst(1 << 20, 0), msg(3000), rx(4096, 0);
    for (size_t i = 0; i < src.size(); ++i)
        src.data()[i] = static_cast<uint8_t>(i * 7 + 1);
    for (size_t i = 0; i < msg.size(); ++i)
        msg.data()[i] = static_cast<uint8_t>(i * 3);
    auto m_src = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto m_dst = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    auto m_msg = p.b->register_mr(p.pd_b, msg.data(), msg.size());
    auto m_rx = p.a->register_mr(p.pd_a, rx.data(), rx.size(), hw::kAccessLocalWrite);

    SendOptions write;
    write.remote_address = dst.addr();
    write.remote_token = m_dst.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 1u << 20, m_src.token}},
                   write);
    auto write_done = Driver::wait(*p.cq_a, std::chrono::milliseconds(10000));
    REQUIRE(write_done);
    CHECK(write_done->syndrome == hw::Syndrome::kSuccess);
    CHECK(std::memcmp(src.data(), dst.data(), src.size()) == 0);
    // The WRITE's 1024 packets left as runs, many datagrams per system call
    // (UdpLink::send_run), not one sendto each.
    CHECK(p.fabric_a->udp_link()->send_calls() * 8 < p.fabric_a->udp_link()->sent());

    p.a->post_recv(*p.qp_a, {{rx.addr(), 4096, m_rx.token}});
    p.b->post_send(*p.qp_b, hw::WqeOpcode::kSend, {{msg.addr(), 3000, m_msg.token}});
    auto received = Driver::wait(*p.cq_a, std::chrono::milliseconds(10000));
    REQUIRE(received);
    CHECK(received->syndrome == hw::Syndrome::kSuccess);
    CHECK(received->byte_count == 3000);
    CHECK(std::memcmp(rx.data(), msg.data(), 3000) == 0);

    // Every packet and CM message crossed the sockets; none was refused.
    CHECK(p.fabric_a->udp_link()->sent() > 0);
    CHECK(p.fabric_b->udp_link()->received() > 0);
    CHECK(p.fabric_a->udp_link()->dropped() == 0);
    CHECK(p.fabric_b->udp_link()->dropped() == 0);
}

TEST_CASE("Malformed datagrams are counted and dropped, and the link keeps working",
          "[fabric][udp]") {
    const uint16_t port = static_cast<uint16_t>(test_port() + 1);
    UdpPair p(port);
    const UdpLink &link = *p.fabric_b->udp_link();

    const uint8_t empty = 0;
    send_raw(port, &empty, 0);                     // nothing at all
    const uint8_t short_packet[3] = {0x04, 0, 0};  // shorter than a BTH + ICRC
    send_raw(port, short_packet, sizeof short_packet);
    const uint8_t cm_truncated[8] = {UdpLink::kCmOpcode, 'S', 'C', 'M', 1, 2, 3, 4};
    send_raw(port, cm_truncated, sizeof cm_truncated);  // CM opcode, wrong size
    // Right size and magic (BTH | "SCM1" | message | ICRC), zero message and ICRC.
    std::vector<uint8_t> forged(wire::kBthSize + 4 + sizeof(cm::Message) + wire::kIcrcSize, 0);
    forged[0] = UdpLink::kCmOpcode;
    std::memcpy(forged.data() + wire::kBthSize, "SCM1", 4);
    send_raw(port, forged.data(), forged.size());
    std::vector<uint8_t> unknown(40, 0xFF);  // opcode 0xFF: no such packet
    send_raw(port, unknown.data(), unknown.size());

    // A well-formed SEND_ONLY whose ICRC is wrong by one bit.
    wire::PacketDescriptor d{};
    d.bth.opcode = wire::Opcode::kSendOnly;
    d.bth.dest_qp = p.qp_b->number;
    d.meta.src_ip = ip("127.0.0.1");
    d.meta.dst_ip = ip("127.0.0.2");
    d.meta.udp_src_port = port;
    const uint8_t payload[16] = {1, 2, 3};
    d.payload = payload;
    std::vector<uint8_t> frame = wire::serialize_frame(d);
    REQUIRE(!frame.empty());
    frame.back() ^= 1;
    const size_t skip = wire::kEthernetHeaderSize + wire::kIpv4HeaderSize + wire::kUdpHeaderSize;
    send_raw(port, frame.data() + skip, frame.size() - skip);

    REQUIRE(eventually([&] { return link.dropped() == 6; }));
    CHECK(link.received() == 6);

    // Still a working link.
    p.connect();
    Buffer x(100), y(100, 0);
    auto mx = p.a->register_mr(p.pd_a, x.data(), x.size());
    auto my = p.b->register_mr(p.pd_b, y.data(), y.size(), hw::kAccessLocalWrite);
    p.b->post_recv(*p.qp_b, {{y.addr(), 100, my.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{x.addr(), 100, mx.token}});
    auto got = Driver::wait(*p.cq_b, std::chrono::milliseconds(10000));
    REQUIRE(got);
    CHECK(got->syndrome == hw::Syndrome::kSuccess);
}

// Issue 17: two processes each have their own model clock, and a packet carries none
// across the link, so the responder cannot tell by its clock when a READ's responses
// have reached the requester. It frees the READ's resource when its last response has
// left; a requester within its ORD (4, as the responder's IRD) then never runs over.
TEST_CASE("READs over RoCEv2/UDP: a requester within its ORD never runs over the responder's IRD",
          "[fabric][udp][read][ird]") {
    UdpPair p(static_cast<uint16_t>(test_port() + 1));
    p.connect();
    constexpr uint32_t kBytes = 2048;  // two responses each at the tests' MTU of 1024
    constexpr uint32_t kSlots = 32;
    Buffer remote(kSlots * kBytes), local(kSlots * kBytes, 0);
    for (size_t i = 0; i < remote.size(); ++i)
        remote.data()[i] = static_cast<uint8_t>(i * 13 + i / kBytes);
    auto m_remote = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    auto m_local = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto read = [&](uint32_t slot, bool ring) {
        SendOptions r;
        r.remote_address = remote.addr() + slot * kBytes;
        r.remote_token = m_remote.token;
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead,
                       {{local.addr() + slot * kBytes, kBytes, m_local.token}}, r, ring);
    };
    auto complete = [&](uint32_t count) {
        for (uint32_t i = 0; i < count; ++i) {
            auto c = Driver::wait(*p.cq_a, std::chrono::milliseconds(10000));
            REQUIRE(c);
            REQUIRE(c->syndrome == hw::Syndrome::kSuccess);
        }
    };
    // ib_read_lat: one READ at a time (the old clock-based count refused the 17th or so).
    for (uint32_t i = 0; i < 300; ++i) {
        read(i % kSlots, true);
        complete(1);
    }
    // ib_read_bw: 32 READs posted at once, ORD lets 4 onto the wire at a time.
    for (uint32_t round = 0; round < 20; ++round) {
        for (uint32_t slot = 0; slot < kSlots; ++slot)
            read(slot, slot + 1 == kSlots);
        complete(kSlots);
    }
    CHECK(std::memcmp(local.data(), remote.data(), remote.size()) == 0);
    CHECK(p.dev_b->counters().get(Counter::ird_exceeded) == 0);
}

TEST_CASE("IPv4 frames leave through a raw socket unless SOFTNDK_FABRIC_RAW=off", "[fabric][udp]") {
    // The raw socket sends SoftNDK's own IPv4 header; without it the UDP socket's DF makes
    // the kernel write identification 0 (udp_link.hpp). emu.fabric.wire_capture checks
    // the frames of both on lo.
    setenv("SOFTNDK_FABRIC_RAW", "off", 1);
    {
        UdpLink link(static_cast<uint16_t>(test_port() + 2), UdpLink::Receiver{});
        CHECK_FALSE(link.sends_raw_ipv4());
    }
    unsetenv("SOFTNDK_FABRIC_RAW");
    UdpLink link(static_cast<uint16_t>(test_port() + 2), UdpLink::Receiver{});
    if (::geteuid() == 0) {
        CHECK(link.sends_raw_ipv4());
    } else {
        WARN("not root: whether CAP_NET_RAW is granted is not known here");
    }
}

namespace {

// A stranger's socket on 127.0.0.1 that sends valid RoCEv2 datagrams to 127.0.0.2:port:
// the ICRC covers the UDP source port, so the frame is built for the port it has.
struct Sender {
    explicit Sender(uint16_t link_port) : to_port(link_port) {
        fd = ::socket(AF_INET, SOCK_DGRAM, 0);
        REQUIRE(fd >= 0);
        sockaddr_in at{};
        at.sin_family = AF_INET;
        ::inet_pton(AF_INET, "127.0.0.1", &at.sin_addr);
        REQUIRE(::bind(fd, reinterpret_cast<::sockaddr *>(&at), sizeof at) == 0);
        socklen_t length = sizeof at;
        REQUIRE(::getsockname(fd, reinterpret_cast<::sockaddr *>(&at), &length) == 0);
        from_port = ntohs(at.sin_port);
    }
    ~Sender() { ::close(fd); }
    // A SEND_MIDDLE to QP 7 with PSN `psn` and `payload`.
    void send(uint32_t psn, std::span<const uint8_t> payload) const {
        wire::PacketDescriptor d{};
        d.bth.opcode = wire::Opcode::kSendMiddle;
        d.bth.dest_qp = 7;
        d.bth.psn = psn;
        d.meta.src_ip = ip("127.0.0.1");
        d.meta.dst_ip = ip("127.0.0.2");
        d.meta.udp_src_port = from_port;
        d.meta.udp_dst_port = to_port;
        d.payload = payload;
        const std::vector<uint8_t> frame = wire::serialize_frame(d);
        REQUIRE(!frame.empty());
        const size_t skip =
            wire::kEthernetHeaderSize + wire::kIpv4HeaderSize + wire::kUdpHeaderSize;
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(to_port);
        ::inet_pton(AF_INET, "127.0.0.2", &to.sin_addr);
        REQUIRE(::sendto(fd, frame.data() + skip, frame.size() - skip, 0,
                         reinterpret_cast<::sockaddr *>(&to),
                         sizeof to) == static_cast<ssize_t>(frame.size() - skip));
    }
    int fd = -1;
    uint16_t from_port = 0;
    uint16_t to_port = 0;
};

// What a Receiver saw: each packet's PSN, payload and the thread that delivered it.
struct Arrivals {
    std::mutex mutex;
    std::vector<uint32_t> psns;
    std::vector<wire::Opcode> opcodes;
    std::vector<std::vector<uint8_t>> payloads;
    std::vector<std::thread::id> threads;
    size_t count() {
        std::lock_guard lock(mutex);
        return psns.size();
    }
    UdpLink::Receiver receiver() {
        return UdpLink::Receiver{[this](Packet &&p) {
                                     std::lock_guard lock(mutex);
                                     psns.push_back(p.desc.bth.psn);
                                     opcodes.push_back(p.desc.bth.opcode);
                                     payloads.emplace_back(p.desc.payload.begin(),
                                                           p.desc.payload.end());
                                     threads.push_back(std::this_thread::get_id());
                                 },
                                 [](const cm::Message &) {}};
    }
};

std::vector<uint8_t> pattern(uint32_t seed, size_t bytes) {
    std::vector<uint8_t> v(bytes);
    for (size_t i = 0; i < bytes; ++i)
        v[i] = static_cast<uint8_t>(seed * 31 + i * 7);
    return v;
}

// Opens the hand-off window and waits until the link's thread has stood back from its
// sockets, so that only the calling thread receives.
void stand_the_thread_back(UdpLink &link) {
    CHECK_FALSE(link.poll_inline());  // nothing queued yet
    REQUIRE(eventually([&] { return link.thread_stands_back(); }));
}

}  // namespace

TEST_CASE("A polling thread receives inline, without the link's thread, and hands back",
          "[fabric][udp][inline]") {
    const uint16_t port = static_cast<uint16_t>(test_port() + 3);
    Arrivals arrivals;
    // A long hand-off window: a test thread descheduled for a while on a loaded machine
    // must not see the link's thread take over.
    UdpLink link(port, arrivals.receiver(), std::chrono::seconds(30));
    const std::array<wire::IpAddr, 1> address{ip("127.0.0.2")};
    REQUIRE(link.bind(1, address));
    Sender sender(port);

    stand_the_thread_back(link);
    const std::vector<uint8_t> first = pattern(1, 256);
    sender.send(100, first);
    // The datagram waits in the socket for the polling thread; the link's thread does
    // not wake for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(arrivals.count() == 0);
    CHECK(link.thread_stands_back());
    REQUIRE(link.poll_inline());
    REQUIRE(arrivals.count() == 1);
    CHECK(arrivals.threads[0] == std::this_thread::get_id());
    CHECK(arrivals.psns[0] == 100);
    CHECK(arrivals.payloads[0] == first);
    CHECK_FALSE(link.poll_inline());  // nothing more

    // The consumer goes to sleep (arms a CQ): the link's thread receives again at once,
    // long before the window would have run out.
    link.stop_inline_polling();
    REQUIRE(eventually([&] { return !link.thread_stands_back(); }));
    const std::vector<uint8_t> second = pattern(2, 512);
    sender.send(101, second);
    REQUIRE(eventually([&] { return arrivals.count() == 2; }));
    CHECK(arrivals.threads[1] != std::this_thread::get_id());
    CHECK(arrivals.payloads[1] == second);
    CHECK(link.dropped() == 0);
}

TEST_CASE(
    "The hand-off window starts long and grows while the consumer comes back to poll and "
    "shrinks when the link's thread must receive twice in a row",
    "[fabric][udp][inline]") {
    const uint16_t port = static_cast<uint16_t>(test_port() + 8);
    Arrivals arrivals;
    // Long enough that the test sees the thread stand back on a loaded machine.
    const auto base = std::chrono::milliseconds(5);
    const auto cap = UdpLink::kHandOffGrowth * base;
    UdpLink link(port, arrivals.receiver(), base);
    const std::array<wire::IpAddr, 1> address{ip("127.0.0.2")};
    REQUIRE(link.bind(1, address));
    CHECK(link.hand_off() == cap);
    Sender sender(port);
    uint32_t psn = 200;
    // Polls, then lets the window run out: the link's thread stands back, then takes its
    // sockets again.
    auto poll_and_pause = [&link] {
        CHECK_FALSE(link.poll_inline());
        REQUIRE(eventually([&] { return link.thread_stands_back(); }));
        REQUIRE(eventually([&] { return !link.thread_stands_back(); }));
    };
    // A pause after which a datagram comes that only the link's thread is there to take
    // (the consumer waits on memory).
    auto pause_then_datagram = [&] {
        poll_and_pause();
        const size_t before = arrivals.count();
        sender.send(psn, pattern(psn, 64));
        ++psn;
        REQUIRE(eventually([&] { return arrivals.count() == before + 1; }));
    };
    // A pause after which the consumer comes back to poll (one its scheduler made): the
    // window is `expected` once the thread has heard of it.
    auto pause_then_poll = [&](std::chrono::nanoseconds expected) {
        poll_and_pause();
        CHECK_FALSE(link.poll_inline());
        REQUIRE(eventually([&] { return link.hand_off() == expected; }));
    };

    // One receive after a pause is not yet a sign: the window keeps its length.
    pause_then_datagram();
    CHECK(link.hand_off() == cap);
    // The second in a row halves it, and more datagrams before the consumer polls again
    // count for nothing (once per pause).
    pause_then_datagram();
    REQUIRE(eventually([&] { return link.hand_off() == cap / 2; }));
    sender.send(psn, pattern(psn, 64));
    ++psn;
    REQUIRE(eventually([&] { return arrivals.count() == 3; }));
    CHECK(link.hand_off() == cap / 2);
    // A consumer that came back in between breaks the row, and doubles the window.
    pause_then_datagram();
    pause_then_poll(cap);
    pause_then_datagram();
    CHECK(link.hand_off() == cap);
    pause_then_poll(cap);  // never above the cap
    // A consumer waiting on memory takes the window down to the base, never below.
    for (int i = 0; i < 10; ++i)
        pause_then_datagram();
    REQUIRE(eventually([&] { return link.hand_off() == base; }));
    // And one that polls its CQ takes it back up.
    pause_then_poll(2 * base);
    pause_then_poll(4 * base);
}

TEST_CASE("A batch of datagrams is received in few calls, intact and in order",
          "[fabric][udp][inline]") {
    const uint16_t port = static_cast<uint16_t>(test_port() + 4);
    Arrivals arrivals;
    UdpLink link(port, arrivals.receiver(), std::chrono::seconds(30));
    const std::array<wire::IpAddr, 1> address{ip("127.0.0.2")};
    REQUIRE(link.bind(1, address));
    Sender sender(port);
    stand_the_thread_back(link);

    // 40 datagrams of 4 KiB (an MTU each) queue up while nobody receives; one poll
    // takes them all, kReceiveBatch per system call.
    constexpr uint32_t kCount = 40;
    for (uint32_t i = 0; i < kCount; ++i)
        sender.send(1000 + i, pattern(i, 4096));
    const uint64_t calls_before = link.receive_calls();
    REQUIRE(link.poll_inline());
    REQUIRE(arrivals.count() == kCount);
    const uint64_t calls = link.receive_calls() - calls_before;
    CHECK(calls == (kCount + UdpLink::kReceiveBatch - 1) / UdpLink::kReceiveBatch);
    for (uint32_t i = 0; i < kCount; ++i) {
        CHECK(arrivals.psns[i] == 1000 + i);
        CHECK(arrivals.payloads[i] == pattern(i, 4096));
        CHECK(arrivals.threads[i] == std::this_thread::get_id());
    }
    CHECK(link.received() == kCount);
    CHECK(link.dropped() == 0);
}

TEST_CASE("Bad datagrams in a batch are dropped one by one and the good ones around them arrive",
          "[fabric][udp][inline]") {
    const uint16_t port = static_cast<uint16_t>(test_port() + 5);
    Arrivals arrivals;
    UdpLink link(port, arrivals.receiver(), std::chrono::seconds(30));
    const std::array<wire::IpAddr, 1> address{ip("127.0.0.2")};
    REQUIRE(link.bind(1, address));
    Sender sender(port);
    stand_the_thread_back(link);

    sender.send(1, pattern(1, 64));
    const uint8_t junk[5] = {0x04, 1, 2, 3, 4};  // shorter than a BTH + ICRC
    send_raw(port, junk, sizeof junk);
    sender.send(2, pattern(2, 64));
    REQUIRE(link.poll_inline());
    REQUIRE(arrivals.count() == 2);
    CHECK(arrivals.psns == std::vector<uint32_t>{1, 2});
    CHECK(link.received() == 3);
    CHECK(link.dropped() == 1);
}

// As the provider does in embedded mode: the consumer's thread polls the fabric's link
// whenever its CQ is empty, while the links' threads receive too whenever it stops (the
// default hand-off window is short). Data and completions stay intact and in order
// whichever thread receives, and nothing is lost to the hand-overs.
TEST_CASE("A consumer that polls the link inline moves data over RoCEv2/UDP with the link's thread",
          "[fabric][udp][inline]") {
    UdpPair p(static_cast<uint16_t>(test_port() + 6));
    p.connect();
    Buffer src(1 << 20), dst(1 << 20, 0), back(1 << 20, 0);
    for (size_t i = 0; i < src.size(); ++i)
        src.data()[i] = static_cast<uint8_t>(i * 5 + 3);
    auto m_src = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto m_dst = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    auto m_back = p.a->register_mr(p.pd_a, back.data(), back.size());
    auto complete = [&](CqHandle &cq, bool pause) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        hw::Cqe cqe{};
        while (std::chrono::steady_clock::now() < give_up) {
            if (Driver::poll(cq, cqe)) return cqe.syndrome == hw::Syndrome::kSuccess;
            p.fabric_a->poll_link();
            p.fabric_b->poll_link();
            // Now and then the consumer stops polling for longer than the window.
            if (pause) std::this_thread::sleep_for(std::chrono::microseconds(400));
        }
        return false;
    };
    for (int round = 0; round < 4; ++round) {
        SendOptions write;
        write.remote_address = dst.addr();
        write.remote_token = m_dst.token;
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 1u << 20, m_src.token}},
                       write);
        REQUIRE(complete(*p.cq_a, round % 2 == 1));
        SendOptions read;
        read.remote_address = dst.addr();
        read.remote_token = m_dst.token;
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{back.addr(), 1u << 20, m_back.token}},
                       read);
        REQUIRE(complete(*p.cq_a, round % 2 == 0));
        CHECK(std::memcmp(src.data(), dst.data(), src.size()) == 0);
        CHECK(std::memcmp(src.data(), back.data(), src.size()) == 0);
        std::memset(dst.data(), 0, dst.size());
    }
    CHECK(p.fabric_a->udp_link()->dropped() == 0);
    CHECK(p.fabric_b->udp_link()->dropped() == 0);
}

TEST_CASE("A run leaves as its packets' datagrams, in order, with one system call",
          "[fabric][udp][run]") {
    // On loopback the run leaves as one UDP GSO batch and arrives as one GRO batch; with
    // SOFTNDK_FABRIC_GSO=off as five datagrams of one sendmmsg. Either way the receiver
    // gets the same five packets, every ICRC verified.
    const bool gso = GENERATE(true, false);
    CAPTURE(gso);
    const uint16_t port = static_cast<uint16_t>(test_port() + 7);
    Arrivals arrivals;
    UdpLink receiver(port, arrivals.receiver(), std::chrono::seconds(30));
    if (!gso) ::setenv("SOFTNDK_FABRIC_GSO", "off", 1);
    UdpLink sender(port, UdpLink::Receiver{});
    ::unsetenv("SOFTNDK_FABRIC_GSO");
    CHECK(sender.sends_gso() == gso);
    const std::array<wire::IpAddr, 1> to{ip("127.0.0.2")}, from{ip("127.0.0.1")};
    REQUIRE(receiver.bind(1, to));
    REQUIRE(sender.bind(1, from));
    stand_the_thread_back(receiver);

    // A SEND of 4500 bytes at MTU 1024 as one run: FIRST, 3 x MIDDLE, LAST (404 bytes).
    const std::vector<uint8_t> message = pattern(9, 4500);
    Packet run;
    run.desc.bth.opcode = wire::Opcode::kSendFirst;
    run.desc.bth.dest_qp = 7;
    run.desc.bth.psn = 0xFFFFFE;  // the PSNs wrap inside the run
    run.desc.meta.src_ip = ip("127.0.0.1");
    run.desc.meta.dst_ip = ip("127.0.0.2");
    run.desc.payload = message;
    run.run.resize(5);
    run.run_last_opcode = wire::Opcode::kSendLast;
    run.run_mtu = 1024;
    REQUIRE(sender.send_run(run));
    CHECK(sender.sent() == 5);
    CHECK(sender.send_calls() == 1);
    CHECK(sender.gso_batches() == (gso ? 1u : 0u));

    REQUIRE(eventually([&] {
        receiver.poll_inline();
        return arrivals.count() == 5;
    }));
    CHECK(receiver.received() == 5);
    CHECK(receiver.receive_calls() == 1);
    const std::vector<uint32_t> psns{0xFFFFFE, 0xFFFFFF, 0, 1, 2};
    CHECK(arrivals.psns == psns);
    const std::vector<wire::Opcode> opcodes{wire::Opcode::kSendFirst, wire::Opcode::kSendMiddle,
                                            wire::Opcode::kSendMiddle, wire::Opcode::kSendMiddle,
                                            wire::Opcode::kSendLast};
    CHECK(arrivals.opcodes == opcodes);
    std::vector<uint8_t> joined;
    for (const auto &payload : arrivals.payloads)
        joined.insert(joined.end(), payload.begin(), payload.end());
    CHECK(joined == message);
    CHECK(arrivals.payloads.back().size() == 4500 - 4 * 1024);
    CHECK(receiver.dropped() == 0);  // every ICRC verified
}

TEST_CASE("A GSO batch with bad ICRCs is dropped datagram by datagram and the link goes on",
          "[fabric][udp][run]") {
    // The receiver cuts a GRO batch apart and checks each datagram's ICRC on its own, as
    // a NIC would check each frame: a corrupt batch costs its datagrams, not the link.
    const uint16_t port = static_cast<uint16_t>(test_port() + 13);
    Arrivals arrivals;
    UdpLink receiver(port, arrivals.receiver(), std::chrono::seconds(30));
    UdpLink sender(port, UdpLink::Receiver{});
    const std::array<wire::IpAddr, 1> to{ip("127.0.0.2")}, from{ip("127.0.0.1")};
    REQUIRE(receiver.bind(1, to));
    REQUIRE(sender.bind(1, from));
    REQUIRE(sender.sends_gso());
    stand_the_thread_back(receiver);

    const std::vector<uint8_t> message = pattern(5, 4500);
    Packet run;
    run.desc.bth.opcode = wire::Opcode::kSendFirst;
    run.desc.bth.dest_qp = 7;
    run.desc.bth.psn = 100;
    run.desc.meta.src_ip = from[0];
    run.desc.meta.dst_ip = to[0];
    run.desc.payload = message;
    run.run.resize(5);
    run.run_last_opcode = wire::Opcode::kSendLast;
    run.run_mtu = 1024;
    run.icrc_corrupt = true;
    REQUIRE(sender.send_run(run));
    CHECK(sender.gso_batches() == 1);
    REQUIRE(eventually([&] {
        receiver.poll_inline();
        return receiver.dropped() == 5;
    }));
    CHECK(arrivals.count() == 0);

    run.icrc_corrupt = false;
    REQUIRE(sender.send_run(run));
    REQUIRE(eventually([&] {
        receiver.poll_inline();
        return arrivals.count() == 5;
    }));
    CHECK(receiver.dropped() == 5);
    CHECK(receiver.received() == 10);
    std::vector<uint8_t> joined;
    for (const auto &payload : arrivals.payloads)
        joined.insert(joined.end(), payload.begin(), payload.end());
    CHECK(joined == message);
}

namespace {

// A packet of `opcode` from 127.0.0.`from` to 127.0.0.`to`, QP 7, PSN `psn`.
Packet packet_between(wire::Opcode opcode, int from, int to, uint32_t psn) {
    Packet p;
    p.desc.bth.opcode = opcode;
    p.desc.bth.dest_qp = 7;
    p.desc.bth.psn = psn;
    p.desc.meta.src_ip = ip(("127.0.0." + std::to_string(from)).c_str());
    p.desc.meta.dst_ip = ip(("127.0.0." + std::to_string(to)).c_str());
    return p;
}

// A responder's link on 127.0.0.2: every request it receives is answered with an ACK of
// the same PSN, sent through the link on the delivering thread, as the device does.
struct Acker {
    Acker(uint16_t port, std::chrono::nanoseconds hand_off)
        : link(port,
               UdpLink::Receiver{[this](Packet &&p) {
                                     if (!p.desc.info().is_request) return;
                                     link.send(packet_between(wire::Opcode::kAcknowledge, 2, 1,
                                                              p.desc.bth.psn));
                                 },
                                 [](const cm::Message &) {}},
               hand_off) {
        const std::array<wire::IpAddr, 1> address{ip("127.0.0.2")};
        REQUIRE(link.bind(1, address));
    }
    UdpLink link;
};

// A requester's link on 127.0.0.1, whose own thread receives (it never polls inline),
// and an Acker whose consumer polls inline: the thread of its link stands back.
struct AckPair {
    AckPair(uint16_t port, std::chrono::nanoseconds hand_off)
        : requester(port, arrivals.receiver()), acker(port, hand_off) {
        const std::array<wire::IpAddr, 1> from{ip("127.0.0.1")};
        REQUIRE(requester.bind(1, from));
        stand_the_thread_back(acker.link);
    }
    Arrivals arrivals;  // what reached the requester
    UdpLink requester;
    Acker acker;
};

}  // namespace

TEST_CASE("An ACK sent while an inline poll delivers is held until the consumer's next datagram",
          "[fabric][udp][inline]") {
    AckPair pair(static_cast<uint16_t>(test_port() + 9),
                 std::chrono::seconds(30));  // a window no pause outlasts
    auto &[arrivals, requester, acker] = pair;
    // The responder's consumer polls until the request arrives; its ACK is then held.
    auto polled_in = [&](uint64_t held_in_all) {
        return eventually([&] { return acker.link.poll_inline(); }) &&
               acker.link.held_acks() == held_in_all;
    };

    SECTION("the consumer's answer leaves first, the ACK right after it") {
        REQUIRE(requester.send(packet_between(wire::Opcode::kSendOnly, 1, 2, 1)));
        REQUIRE(polled_in(1));
        CHECK(acker.link.acks_waiting() == 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CHECK(arrivals.count() == 0);  // held, not sent
        const uint64_t calls = acker.link.send_calls();
        REQUIRE(acker.link.send(packet_between(wire::Opcode::kSendOnly, 2, 1, 100)));
        REQUIRE(eventually([&] { return arrivals.count() == 2; }));
        CHECK(acker.link.acks_waiting() == 0);
        CHECK(acker.link.send_calls() == calls + 1);  // answer and ACK: one sendmmsg
        const std::vector<wire::Opcode> order{wire::Opcode::kSendOnly, wire::Opcode::kAcknowledge};
        CHECK(arrivals.opcodes == order);
        CHECK(arrivals.psns == std::vector<uint32_t>{100, 1});
    }
    SECTION("a response sent on another thread leaves after the held ACKs, in PSN order") {
        REQUIRE(requester.send(packet_between(wire::Opcode::kSendOnly, 1, 2, 1)));
        REQUIRE(requester.send(packet_between(wire::Opcode::kSendOnly, 1, 2, 2)));
        REQUIRE(eventually([&] {
            acker.link.poll_inline();
            return acker.link.held_acks() == 2;
        }));
        CHECK(acker.link.acks_waiting() == 2);
        std::thread([&] {
            acker.link.send(packet_between(wire::Opcode::kRdmaReadResponseOnly, 2, 1, 3));
        }).join();
        REQUIRE(eventually([&] { return arrivals.count() == 3; }));
        CHECK(arrivals.psns == std::vector<uint32_t>{1, 2, 3});
        CHECK(arrivals.opcodes.back() == wire::Opcode::kRdmaReadResponseOnly);
    }
    SECTION("the consumer's next poll sends it") {
        REQUIRE(requester.send(packet_between(wire::Opcode::kSendOnly, 1, 2, 1)));
        REQUIRE(polled_in(1));
        CHECK_FALSE(acker.link.poll_inline());
        REQUIRE(eventually([&] { return arrivals.count() == 1; }));
        CHECK(arrivals.opcodes[0] == wire::Opcode::kAcknowledge);
    }
    SECTION("a consumer that stops polling sends it") {
        REQUIRE(requester.send(packet_between(wire::Opcode::kSendOnly, 1, 2, 1)));
        REQUIRE(polled_in(1));
        acker.link.stop_inline_polling();
        CHECK(acker.link.acks_waiting() == 0);
        REQUIRE(eventually([&] { return arrivals.count() == 1; }));
    }
    CHECK(acker.link.dropped() == 0);
    CHECK(requester.dropped() == 0);
}

TEST_CASE("A held ACK leaves when the hand-off window lapses, with no further call",
          "[fabric][udp][inline]") {
    AckPair pair(static_cast<uint16_t>(test_port() + 10),
                 std::chrono::milliseconds(5));  // a window of 80 ms to start
    auto &[arrivals, requester, acker] = pair;
    REQUIRE(requester.send(packet_between(wire::Opcode::kSendOnly, 1, 2, 1)));
    REQUIRE(eventually([&] { return acker.link.poll_inline(); }));
    const auto held_at = std::chrono::steady_clock::now();
    REQUIRE(acker.link.held_acks() == 1);
    // The consumer makes no call: the link's thread takes over when the window lapses,
    // and sends the ACK first.
    REQUIRE(eventually([&] { return arrivals.count() == 1; }));
    CHECK(arrivals.opcodes[0] == wire::Opcode::kAcknowledge);
    CHECK(acker.link.acks_waiting() == 0);
    // Not before the window could have lapsed (it may have grown, never shrunk).
    CHECK(std::chrono::steady_clock::now() - held_at >= std::chrono::milliseconds(10));
}

namespace {

// A port that keeps a copy of every payload delivered to it.
struct RecordingPort : Port {
    std::vector<std::vector<uint8_t>> payloads;
    void receive(Packet &packet) override {
        payloads.emplace_back(packet.desc.payload.begin(), packet.desc.payload.end());
    }
    void receive_cm(const cm::Message &) override {}
};

}  // namespace

TEST_CASE("A frame received while its thread drains the fabric waits with its own payload",
          "[fabric][udp][inline]") {
    // The link hands a packet over with its payload in the link's receive buffer
    // (UdpLink::Receiver). A thread that polls the link while it drains the fabric (a
    // consumer's poll from work the fabric runs) queues the packet behind the work it is
    // in, and the next receive reuses the buffer: the queued packet must carry a copy.
    const uint16_t port = static_cast<uint16_t>(test_port() + 11);
    Fabric fabric(port, std::chrono::seconds(30));
    RecordingPort recorder;
    const std::array<wire::IpAddr, 1> to{ip("127.0.0.2")}, from{ip("127.0.0.1")};
    const uint32_t vport = fabric.attach(&recorder, to);
    REQUIRE(vport != 0);
    UdpLink sender(port, UdpLink::Receiver{});
    REQUIRE(sender.bind(1, from));
    CHECK_FALSE(fabric.poll_link());
    REQUIRE(eventually([&] { return fabric.udp_link()->thread_stands_back(); }));

    const std::vector<uint8_t> first = pattern(1, 512), second = pattern(2, 512);
    auto send = [&](const std::vector<uint8_t> &payload, uint32_t psn) {
        Packet p;
        p.desc.bth.opcode = wire::Opcode::kSendOnly;
        p.desc.bth.dest_qp = 7;
        p.desc.bth.psn = psn;
        p.desc.meta.src_ip = from[0];
        p.desc.meta.dst_ip = to[0];
        p.desc.payload = payload;
        REQUIRE(sender.send(p));
    };
    size_t delivered_inside = 0;
    Fabric::defer([&] {
        send(first, 1);
        REQUIRE(eventually([&] { return fabric.poll_link(); }));
        send(second, 2);  // received into the same slot of the link's buffer
        REQUIRE(eventually([&] { return fabric.poll_link(); }));
        delivered_inside = recorder.payloads.size();
    });
    Fabric::drain();
    CHECK(delivered_inside == 0);  // both waited behind the work that polled
    REQUIRE(recorder.payloads.size() == 2);
    CHECK(recorder.payloads[0] == first);
    CHECK(recorder.payloads[1] == second);
    fabric.detach(vport);
}
