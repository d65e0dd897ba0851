#include <catch2/catch.hpp>

#include "driver.hpp"
#include "wire/psn.hpp"

using namespace softndk;
using namespace softndk::emu;
using namespace softndk::emu::test;

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

// Runs the wire oracle (tests/support/wire_oracle.py, python3 is a test dependency) on a
// capture; returns its exit status, or -1 if the oracle cannot run.
int verify_icrc(const std::string &pcap) {
    const std::string oracle = SOFTNDK_WIRE_ORACLE;
    if (!std::filesystem::exists(oracle) ||
        std::system("python3 --version > /dev/null 2>&1") != 0) {
        return -1;
    }
    const std::string cmd =
        "python3 " + oracle + " --verify-icrc " + pcap + " > " + pcap + ".log 2>&1";
    return WEXITSTATUS(std::system(cmd.c_str()));
}

void exchange(ConnectedPair &p) {
    Buffer local(8192), remote(8192), rx(8192);
    for (size_t i = 0; i < local.size(); ++i)
        local.data()[i] = static_cast<uint8_t>(i * 13);
    auto ml = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    auto mx = p.b->register_mr(p.pd_b, rx.data(), rx.size());
    p.b->post_recv(*p.qp_b, {{rx.addr(), 8192, mx.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{local.addr(), 3001, ml.token}});
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), 2500, ml.token}}, o);
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaRead, {{local.addr() + 4096, 2500, ml.token}}, o);
    SendOptions in;
    in.flags = hw::kCtrlSignaled | hw::kCtrlInline;
    in.inline_data = {1, 2, 3};  // payload needing pad bytes
    p.b->post_recv(*p.qp_b, {{rx.addr(), 8192, mx.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {}, in);
    REQUIRE(Driver::drain(*p.scq_a).size() == 4);
}

}  // namespace

TEST_CASE("every packet the fabric carries is captured with a valid ICRC", "[fabric][pcap]") {
    const std::string path = "emu_fabric_capture.pcap";
    ConnectedPair p;
    REQUIRE(p.fabric->capture_to(path));
    exchange(p);
    // SEND 3 + ACK, WRITE 3 + ACK, READ request + 3 responses, inline SEND + ACK.
    CHECK(p.fabric->captured_packets() == 14);
    const int rc = verify_icrc(path);
    std::ifstream log(path + ".log");
    std::string text((std::istreambuf_iterator<char>(log)), {});
    INFO(text);
    CHECK(rc == 0);
    std::remove(path.c_str());
    std::remove((path + ".log").c_str());
}

TEST_CASE("SOFTNDK_PCAP captures IPv6 traffic too", "[fabric][pcap]") {
    const std::string path = "emu_fabric_capture_v6.pcap";
    setenv("SOFTNDK_PCAP", path.c_str(), 1);
    auto fabric = std::make_shared<Fabric>();
    unsetenv("SOFTNDK_PCAP");
    auto da = std::make_shared<Device>(adapter(1, {"fd01::1"}), fabric);
    auto db = std::make_shared<Device>(adapter(2, {"fd01::2"}), fabric);
    {
        Driver a(da), b(db);
        const uint32_t pa = a.create_pd(), pb = b.create_pd();
        auto ca = a.create_cq(), cb = b.create_cq();
        auto qa = a.create_qp(pa, *ca, *ca), qb = b.create_qp(pb, *cb, *cb);
        uint32_t listener = 0, conn = 0;
        REQUIRE(b.listen(sockaddr("fd01::2", 9), listener) == 0);
        REQUIRE(a.connect(*qa, sockaddr("::", 0), sockaddr("fd01::2", 9), conn) == 0);
        auto req = b.wait_event(hw::EqeType::kConnectRequest);
        REQUIRE(req);
        REQUIRE(b.accept(static_cast<uint32_t>(req->data0), *qb) == 0);
        REQUIRE(a.object_command(hw::CommandOpcode::kCompleteConnect, conn) == 0);
        Buffer x(2000), y(2000);
        auto mx = a.register_mr(pa, x.data(), x.size());
        auto my = b.register_mr(pb, y.data(), y.size());
        b.post_recv(*qb, {{y.addr(), 2000, my.token}});
        a.post_send(*qa, hw::WqeOpcode::kSend, {{x.addr(), 1999, mx.token}});
        REQUIRE(Driver::drain(*ca).size() == 1);
    }
    CHECK(fabric->captured_packets() == 3);  // SEND_FIRST, SEND_LAST, ACK
    CHECK(verify_icrc(path) == 0);
    std::remove(path.c_str());
    std::remove((path + ".log").c_str());
}

TEST_CASE("ports are keyed by address and an address can be attached once", "[fabric][routing]") {
    auto fabric = std::make_shared<Fabric>();
    auto da = std::make_shared<Device>(adapter(1, {"10.2.0.1", "fd02::1"}), fabric);
    CHECK(fabric->reachable(ip("10.2.0.1")));
    CHECK(fabric->reachable(ip("fd02::1")));
    CHECK_FALSE(fabric->reachable(ip("10.2.0.2")));
    CHECK_THROWS_AS(std::make_shared<Device>(adapter(2, {"10.2.0.9", "fd02::1"}), fabric),
                    std::runtime_error);
    CHECK_FALSE(fabric->reachable(ip("10.2.0.9")));  // nothing of the failed adapter stays
    da.reset();
    CHECK_FALSE(fabric->reachable(ip("10.2.0.1")));
}

TEST_CASE("a route answered before an attach or detach is asked again after it",
          "[fabric][routing]") {
    // route() keeps each thread's last answers while the table is unchanged: every
    // attach and detach must make them stale, on every fabric separately.
    auto fabric = std::make_shared<Fabric>();
    auto other = std::make_shared<Fabric>();
    CHECK_FALSE(fabric->reachable(ip("10.3.0.1")));  // "no route", remembered
    auto da = std::make_shared<Device>(adapter(1, {"10.3.0.1"}), fabric);
    CHECK(fabric->reachable(ip("10.3.0.1")));
    CHECK_FALSE(other->reachable(ip("10.3.0.1")));  // another fabric's table
    auto db = std::make_shared<Device>(adapter(2, {"10.3.0.1"}), other);
    CHECK(other->reachable(ip("10.3.0.1")));
    CHECK(fabric->reachable(ip("10.3.0.1")));
    da.reset();
    CHECK_FALSE(fabric->reachable(ip("10.3.0.1")));
    CHECK(other->reachable(ip("10.3.0.1")));
    // More addresses than a thread remembers, in turn: each answer still right.
    auto dc = std::make_shared<Device>(
        adapter(3, {"10.3.1.1", "10.3.1.2", "10.3.1.3", "10.3.1.4", "10.3.1.5"}), fabric);
    for (int round = 0; round < 3; ++round) {
        for (const char *a : {"10.3.1.1", "10.3.1.2", "10.3.1.3", "10.3.1.4", "10.3.1.5"})
            CHECK(fabric->reachable(ip(a)));
        CHECK_FALSE(fabric->reachable(ip("10.3.1.6")));
    }
}

TEST_CASE("the trampoline runs deferred work in order, never nested", "[fabric][trampoline]") {
    std::vector<int> order;
    Fabric::defer([&] {
        order.push_back(1);
        Fabric::defer([&] { order.push_back(3); });
        Fabric::drain();  // nested: no-op, 3 runs after 2
        order.push_back(2);
    });
    Fabric::defer([&] { order.push_back(4); });
    CHECK(order.empty());
    Fabric::drain();
    CHECK(order == std::vector<int>{1, 2, 4, 3});
}

TEST_CASE("work queued faster than it drains still runs once each and in order",
          "[fabric][trampoline]") {
    // Each task queues two more until 20,000 are queued: the queue never empties during
    // the drain, so the outbox drops what it has taken from its front now and then.
    // Tasks carry the number they were queued with, and must run in that order.
    std::vector<int> ran;
    int queued = 0;
    std::function<void(int)> task = [&](int id) {
        ran.push_back(id);
        for (int k = 0; k < 2 && queued < 20'000; ++k) {
            const int child = queued++;
            Fabric::defer([&task, child] { task(child); });
        }
    };
    const int first = queued++;
    Fabric::defer([&task, first] { task(first); });
    Fabric::drain();
    REQUIRE(ran.size() == 20'000);
    for (size_t i = 0; i < ran.size(); ++i)
        REQUIRE(ran[i] == static_cast<int>(i));
    Fabric::drain();  // nothing left to run
    CHECK(ran.size() == 20'000);
}

TEST_CASE("the drain memo keeps nothing outside a drain", "[fabric][trampoline][memo]") {
    int owner = 0;
    CHECK(Fabric::drain_memo(&owner, 7) == nullptr);
}

TEST_CASE("the drain memo holds what a delivery stored until its drain ends",
          "[fabric][trampoline][memo]") {
    int owner = 0, other_owner = 0;
    auto object = std::make_shared<int>(42);
    std::weak_ptr<int> watch = object;
    bool second_lookup_hit = false, other_key_empty = false, other_owner_empty = false;
    Fabric::defer([&] {
        std::shared_ptr<void> *slot = Fabric::drain_memo(&owner, 7);
        REQUIRE(slot != nullptr);
        CHECK(*slot == nullptr);  // first time in this drain: for the caller to fill
        *slot = std::move(object);
    });
    Fabric::defer([&] {
        std::shared_ptr<void> *slot = Fabric::drain_memo(&owner, 7);
        second_lookup_hit =
            slot != nullptr && slot->get() != nullptr && *static_cast<int *>(slot->get()) == 42;
        other_key_empty = *Fabric::drain_memo(&owner, 8) == nullptr;
        other_owner_empty = *Fabric::drain_memo(&other_owner, 7) == nullptr;
        CHECK_FALSE(watch.expired());  // still held, by the memo alone
    });
    Fabric::drain();
    CHECK(second_lookup_hit);
    CHECK(other_key_empty);
    CHECK(other_owner_empty);
    CHECK(watch.expired());  // let go when the drain ended
    CHECK(Fabric::drain_memo(&owner, 7) == nullptr);
}

TEST_CASE("what the memo's last reference queues as it goes is delivered by the same drain",
          "[fabric][trampoline][memo]") {
    int owner = 0;
    bool ran = false;
    // Its destructor queues work, as an object's teardown may.
    std::shared_ptr<void> queues_on_destruction(new int(0), [&ran](void *object) {
        delete static_cast<int *>(object);
        Fabric::defer([&ran] { ran = true; });
    });
    Fabric::defer([&] { *Fabric::drain_memo(&owner, 1) = std::move(queues_on_destruction); });
    Fabric::drain();
    CHECK(ran);
}

TEST_CASE("an owner's memo slots can be let go of inside the drain", "[fabric][trampoline][memo]") {
    int owner = 0, other_owner = 0;
    auto mine = std::make_shared<int>(1), theirs = std::make_shared<int>(2);
    std::weak_ptr<int> watch_mine = mine, watch_theirs = theirs;
    bool mine_gone = false, theirs_kept = false;
    Fabric::defer([&] {
        *Fabric::drain_memo(&owner, 1) = std::move(mine);
        *Fabric::drain_memo(&other_owner, 1) = std::move(theirs);
        Fabric::forget_drain_memo(&owner);
        mine_gone = watch_mine.expired();
        theirs_kept = !watch_theirs.expired();
    });
    Fabric::drain();
    CHECK(mine_gone);
    CHECK(theirs_kept);
    CHECK(watch_theirs.expired());
}

TEST_CASE("a run splits into its packets with their opcodes, PSNs, payloads, times and AckReq",
          "[fabric][coalescing]") {
    std::vector<uint8_t> bytes(2 * 1024 + 100);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<uint8_t>(i);
    Packet run;
    run.desc.bth.opcode = wire::Opcode::kRdmaWriteFirst;
    run.desc.bth.psn = wire::kPsnMask;  // the PSNs wrap inside the run
    run.desc.bth.solicited = true;
    run.desc.reth = {0x1000, 0x4200, static_cast<uint32_t>(bytes.size())};
    run.desc.payload = bytes;
    run.run_last_opcode = wire::Opcode::kRdmaWriteLast;
    run.run_mtu = 1024;
    run.run = {{100, false}, {200, true}, {300, true}};
    run.time_ns = 300;
    auto hold = std::make_shared<int>(7);
    run.departure_hold = hold;

    const auto packets = split_run(std::move(run));
    REQUIRE(packets.size() == 3);
    CHECK(packets[0].desc.bth.opcode == wire::Opcode::kRdmaWriteFirst);
    CHECK(packets[1].desc.bth.opcode == wire::Opcode::kRdmaWriteMiddle);
    CHECK(packets[2].desc.bth.opcode == wire::Opcode::kRdmaWriteLast);
    CHECK(packets[0].desc.bth.psn == wire::kPsnMask);
    CHECK(packets[1].desc.bth.psn == 0);
    CHECK(packets[2].desc.bth.psn == 1);
    CHECK(packets[0].desc.payload.data() == bytes.data());
    CHECK(packets[0].desc.payload.size() == 1024);
    CHECK(packets[1].desc.payload.data() == bytes.data() + 1024);
    CHECK(packets[2].desc.payload.size() == 100);
    CHECK(packets[0].time_ns == 100);
    CHECK(packets[2].time_ns == 300);
    CHECK_FALSE(packets[0].desc.bth.ack_req);
    CHECK(packets[1].desc.bth.ack_req);
    // Solicited belongs to the message's last packet only; the hold to the run's last.
    CHECK_FALSE(packets[0].desc.bth.solicited);
    CHECK(packets[2].desc.bth.solicited);
    CHECK(packets[0].departure_hold == nullptr);
    CHECK(packets[2].departure_hold == hold);
    for (const auto &p : packets)
        CHECK_FALSE(p.is_run());
    // Each split packet is a valid wire packet (the RETH only on the first).
    wire::HeaderBuffer h;
    CHECK(wire::build_headers(packets[1].desc, h) == wire::WireStatus::kOk);
    CHECK(h.size == wire::kBthSize);
}

TEST_CASE("a capture sees coalesced traffic as single packets", "[fabric][pcap][coalescing]") {
    const auto path = std::filesystem::temp_directory_path() /
                      ("softndk-runs-" + std::to_string(getpid()) + ".pcap");
    ConnectedPair p;
    REQUIRE(p.fabric->capture_to(path.string()));
    Buffer local(64 * 1024), remote(64 * 1024);
    auto ml = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    SendOptions o;
    o.remote_address = remote.addr();
    o.remote_token = mr.token;
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), 64 * 1024, ml.token}}, o);
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
    CHECK(p.fabric->runs_delivered() == 0);
    // 64 WRITE packets at MTU 1024 and at least one ACK, each captured on its own.
    CHECK(p.fabric->captured_packets() >= 65);
    std::filesystem::remove(path);
}
