#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "softndk/monotonic.hpp"
#include "softndk/wake.hpp"

#include "driver.hpp"

using namespace softndk;
using namespace softndk::emu;
using namespace softndk::emu::test;

TEST_CASE("attach reports the profile's limits and a valid control page", "[device][attach]") {
    auto fabric = std::make_shared<Fabric>();
    auto dev = std::make_shared<Device>(adapter(1, {"10.1.0.1"}), fabric);
    Driver d(dev);
    CHECK(d.control->magic == hw::kControlPageMagic);
    CHECK(d.control->abi_version == hw::kAbiVersion);
    CHECK(d.limits.max_send_sge == dev->limits().max_send_sge);
    CHECK(d.limits.ndk_version_major == 2);
    CHECK(d.limits.ndk_version_minor == 1);
    CHECK((d.limits.adapter_flags & status::kAdapterFlagReadLocalInvalidate) != 0);
    CHECK((d.limits.adapter_flags & status::kAdapterFlagInOrderDma) == 0);
    CHECK((d.limits.adapter_flags & status::kAdapterFlagCqModeration) != 0);
    CHECK((d.limits.adapter_flags & status::kAdapterFlagCqResize) != 0);
    CHECK(d.limits.max_srq_depth > 0);
    CHECK(d.limits.rdma_technology == status::kTechnologyRoceV2);
    CHECK(dev->context_count() == 1);
}

namespace {

struct Fixture {
    std::shared_ptr<Fabric> fabric = std::make_shared<Fabric>();
    std::shared_ptr<Device> dev = std::make_shared<Device>(adapter(1, {"10.1.0.1"}), fabric);
};

int32_t raw_execute(Device &dev, uint32_t ctx, const void *rq, size_t rq_bytes, void *rs,
                    size_t rs_bytes) {
    return dev.execute(ctx, {static_cast<const std::byte *>(rq), rq_bytes},
                       {static_cast<std::byte *>(rs), rs_bytes});
}

uint8_t cqe_opcode(const hw::Cqe &c) {
    return c.op_own >> 4;
}

}  // namespace

TEST_CASE("attach refuses a wrong ABI, adapter or NDK version", "[device][attach]") {
    Fixture f;
    hw::AttachRequest rq{};
    rq.header = Driver::header<hw::AttachRequest>(hw::CommandOpcode::kAttach);
    rq.abi_version = hw::kAbiVersion;
    rq.if_index = 1;
    rq.ndk_major = 1;
    rq.ndk_minor = 1;
    hw::AttachResponse rs{};
    SECTION("ABI") {
        rq.abi_version = hw::kAbiVersion + 1;
        CHECK(raw_execute(*f.dev, kNoContext, &rq, sizeof(rq), &rs, sizeof(rs)) ==
              status::kBadVersion);
    }
    SECTION("adapter") {
        rq.if_index = 2;
        CHECK(raw_execute(*f.dev, kNoContext, &rq, sizeof(rq), &rs, sizeof(rs)) ==
              status::kInvalidParameter);
    }
    SECTION("NDK 2.2 is not claimed") {
        rq.ndk_major = 2;
        rq.ndk_minor = 2;
        CHECK(raw_execute(*f.dev, kNoContext, &rq, sizeof(rq), &rs, sizeof(rs)) ==
              status::kBadVersion);
    }
    CHECK(f.dev->context_count() == 0);
}

TEST_CASE("malformed commands are refused with the documented status", "[device][commands]") {
    Fixture f;
    Driver d(f.dev);
    const uint32_t ctx = d.client().context();
    hw::ObjectRequest rq{};
    hw::ObjectResponse rs{};
    SECTION("no context") {
        rq.header = Driver::header<hw::ObjectRequest>(hw::CommandOpcode::kCreatePd);
        CHECK(raw_execute(*f.dev, 999, &rq, sizeof(rq), &rs, sizeof(rs)) ==
              status::kInvalidParameter);
    }
    SECTION("wrong request size") {
        rq.header = Driver::header<hw::ObjectRequest>(hw::CommandOpcode::kCreatePd);
        rq.header.request_bytes = 12;
        CHECK(raw_execute(*f.dev, ctx, &rq, sizeof(rq), &rs, sizeof(rs)) ==
              status::kInvalidParameter);
    }
    SECTION("buffer shorter than the claimed size") {
        rq.header = Driver::header<hw::ObjectRequest>(hw::CommandOpcode::kCreatePd);
        CHECK(raw_execute(*f.dev, ctx, &rq, 8, &rs, sizeof(rs)) == status::kInvalidParameter);
    }
    SECTION("response too small for a header") {
        rq.header = Driver::header<hw::ObjectRequest>(hw::CommandOpcode::kCreatePd);
        CHECK(raw_execute(*f.dev, ctx, &rq, sizeof(rq), &rs, 4) == status::kBufferTooSmall);
    }
    SECTION("commands not built yet") {
        for (auto op : {static_cast<hw::CommandOpcode>(0x99)}) {
            rq.header = Driver::header<hw::ObjectRequest>(op);
            CHECK(raw_execute(*f.dev, ctx, &rq, sizeof(rq), &rs, sizeof(rs)) ==
                  status::kNotSupported);
        }
    }
    SECTION("sequence is echoed") {
        rq.header = Driver::header<hw::ObjectRequest>(hw::CommandOpcode::kCreatePd);
        rq.header.sequence = 0x1234;
        REQUIRE(raw_execute(*f.dev, ctx, &rq, sizeof(rq), &rs, sizeof(rs)) == 0);
        CHECK(rs.header.sequence == 0x1234);
    }
}

TEST_CASE("objects are checked against limits and ownership", "[device][commands]") {
    Fixture f;
    Driver d(f.dev), other(f.dev);
    const uint32_t pd = d.create_pd();
    auto cq = d.create_cq(16);
    const uint32_t other_pd = other.create_pd();
    auto other_cq = other.create_cq(16);
    CqHandle scratch;
    QpHandle qp;
    SECTION("CQ depth") {
        CHECK(d.try_create_cq(0, scratch) == status::kInvalidParameter);
        CHECK(d.try_create_cq(d.limits.max_cq_depth + 1, scratch) == status::kInvalidParameter);
        CHECK(d.try_create_cq(d.limits.max_cq_depth, scratch) == 0);
    }
    SECTION("QP sizes") {
        auto rq = Driver::qp_request(pd, *cq, *cq);
        rq.send_depth = d.limits.max_send_queue_depth + 1;
        CHECK(d.try_create_qp(rq, qp) == status::kInvalidParameter);
        rq = Driver::qp_request(pd, *cq, *cq);
        rq.send_depth = 0;
        CHECK(d.try_create_qp(rq, qp) == status::kInvalidParameter);
        rq = Driver::qp_request(pd, *cq, *cq);
        rq.max_send_sge = d.limits.max_send_sge + 1;
        CHECK(d.try_create_qp(rq, qp) == status::kInvalidParameter);
        rq = Driver::qp_request(pd, *cq, *cq);
        rq.max_inline_bytes = d.limits.max_inline_bytes + 1;
        CHECK(d.try_create_qp(rq, qp) == status::kInvalidParameter);
        rq = Driver::qp_request(pd, *cq, *cq);
        rq.srq = 1;  // no such SRQ
        CHECK(d.try_create_qp(rq, qp) == status::kInvalidParameter);
    }
    SECTION("another context's objects") {
        CHECK(d.try_create_qp(Driver::qp_request(other_pd, *cq, *cq), qp) ==
              status::kInvalidParameter);
        CHECK(d.try_create_qp(Driver::qp_request(pd, *other_cq, *cq), qp) ==
              status::kInvalidParameter);
        CHECK(d.object_command(hw::CommandOpcode::kDestroyPd, other_pd) ==
              status::kInvalidParameter);
        CHECK(d.object_command(hw::CommandOpcode::kDestroyCq, other_cq->number) ==
              status::kInvalidParameter);
        CHECK(d.object_command(hw::CommandOpcode::kAllocMr, other_pd) == status::kInvalidParameter);
        Buffer b(4096);
        auto mr = other.register_mr(other_pd, b.data(), b.size());
        CHECK(d.object_command(hw::CommandOpcode::kDeregisterMr, mr.index) ==
              status::kInvalidParameter);
        CHECK(d.object_command(hw::CommandOpcode::kFreeMr, mr.index) == status::kInvalidParameter);
    }
    SECTION("unknown numbers") {
        CHECK(d.object_command(hw::CommandOpcode::kDestroyQp, 77) == status::kInvalidParameter);
        CHECK(d.object_command(hw::CommandOpcode::kDestroyCq, 0xffffffff) ==
              status::kInvalidParameter);
        CHECK(d.object_command(hw::CommandOpcode::kFlushQp, 5000) == status::kInvalidParameter);
    }
    SECTION("busy PD and CQ") {
        REQUIRE(d.try_create_qp(Driver::qp_request(pd, *cq, *cq), qp) == 0);
        CHECK(d.object_command(hw::CommandOpcode::kDestroyPd, pd) == status::kInvalidDeviceState);
        CHECK(d.object_command(hw::CommandOpcode::kDestroyCq, cq->number) ==
              status::kInvalidDeviceState);
        CHECK(d.object_command(hw::CommandOpcode::kDestroyQp, qp.number) == 0);
        CHECK(d.object_command(hw::CommandOpcode::kDestroyCq, cq->number) == 0);
        CHECK(d.object_command(hw::CommandOpcode::kDestroyPd, pd) == 0);
    }
    SECTION("MR registration rules") {
        Buffer b(4096);
        hw::ObjectResponse alloc{};
        REQUIRE(d.object_command(hw::CommandOpcode::kAllocMr, pd, 0, &alloc) == 0);
        hw::RegisterMrRequest rq{};
        rq.mpt_index = alloc.object;
        rq.access = hw::kAccessRemoteWrite;  // remote write without local write
        rq.iova = b.addr();
        rq.length = b.size();
        rq.memory = hw::MemoryHandle{hw::kNoFd, 0, 0, b.size(), b.addr()};
        hw::ObjectResponse rs{};
        CHECK(d.command(hw::CommandOpcode::kRegisterMr, rq, rs) == status::kInvalidParameter);
        rq.access = hw::kAccessLocalWrite;
        rq.length = 0;
        CHECK(d.command(hw::CommandOpcode::kRegisterMr, rq, rs) == status::kInvalidParameter);
        rq.length = b.size();
        REQUIRE(d.command(hw::CommandOpcode::kRegisterMr, rq, rs) == 0);
        CHECK(rs.token != alloc.token);  // registration bumps the variant
        CHECK(hw::token_index(rs.token) == alloc.object);
        CHECK(d.object_command(hw::CommandOpcode::kDeregisterMr, alloc.object) == 0);
        CHECK(d.object_command(hw::CommandOpcode::kFreeMr, alloc.object) == 0);
        CHECK(d.object_command(hw::CommandOpcode::kFreeMr, alloc.object) ==
              status::kInvalidParameter);
    }
}

TEST_CASE("detach frees everything the context owned", "[device][attach]") {
    Fixture f;
    Driver d(f.dev);
    const uint32_t pd = d.create_pd();
    auto cq = d.create_cq(16);
    auto qp = d.create_qp(pd, *cq, *cq);
    Buffer b(4096);
    d.register_mr(pd, b.data(), b.size());
    REQUIRE(f.dev->find_qp(qp->number));
    REQUIRE(d.object_command(hw::CommandOpcode::kDetach, 0) == 0);
    CHECK(d.client().context() == kNoContext);
    CHECK(f.dev->context_count() == 0);
    CHECK_FALSE(f.dev->find_qp(qp->number));
    CHECK(d.object_command(hw::CommandOpcode::kCreatePd, 0) == status::kInvalidParameter);
}

// ---- malformed WQEs: error CQE, QP to ERROR, the rest flushed, device alive

namespace {
std::vector<uint8_t> ctrl_bytes(hw::WqeOpcode op, uint16_t index, uint8_t segments,
                                uint8_t flags = hw::kCtrlSignaled) {
    std::vector<uint8_t> v(16 * std::max<int>(segments, 1), 0);
    hw::CtrlSegment c{};
    c.opcode = op;
    c.flags = flags;
    c.wqe_index = index;
    c.segment_count = segments;
    std::memcpy(v.data(), &c, sizeof(c));
    return v;
}
}  // namespace

TEST_CASE("a malformed WQE completes in error and flushes the QP", "[device][wqe]") {
    ConnectedPair p;
    Buffer src(4096);
    auto mr = p.a->register_mr(p.pd_a, src.data(), src.size());
    hw::Syndrome want = hw::Syndrome::kLocalQpOperation;
    const uint16_t at = static_cast<uint16_t>(p.qp_a->sq->reserved());
    SECTION("unknown opcode") {
        p.a->post_raw(*p.qp_a, ctrl_bytes(static_cast<hw::WqeOpcode>(0x77), at, 1), false);
    }
    SECTION("segment_count 0") {
        p.a->post_raw(*p.qp_a, ctrl_bytes(hw::WqeOpcode::kSend, at, 0), false);
    }
    SECTION("segment_count larger than the QP allows") {
        auto v = ctrl_bytes(hw::WqeOpcode::kSend, at, 1);
        v[4] = 255;
        p.a->post_raw(*p.qp_a, v, false);
    }
    SECTION("wqe_index does not match the producer") {
        p.a->post_raw(*p.qp_a, ctrl_bytes(hw::WqeOpcode::kNop, static_cast<uint16_t>(at + 5), 1),
                      false);
    }
    SECTION("more SGEs than the QP's max_send_sge") {
        auto v = ctrl_bytes(hw::WqeOpcode::kSend, at, 6);  // 5 data segments, QP allows 4
        for (int i = 1; i < 6; ++i) {
            hw::DataSegment d{8, mr.token, src.addr()};
            std::memcpy(v.data() + 16 * i, &d, 16);
        }
        p.a->post_raw(*p.qp_a, v, false);
        want = hw::Syndrome::kLocalLength;
    }
    SECTION("inline payload over the QP's inline limit") {
        auto v = ctrl_bytes(hw::WqeOpcode::kSend, at, 6, hw::kCtrlSignaled | hw::kCtrlInline);
        const uint32_t marker = 70 | hw::kInlineMarker;  // QP allows 64
        std::memcpy(v.data() + 16, &marker, 4);
        p.a->post_raw(*p.qp_a, v, false);
        want = hw::Syndrome::kLocalLength;
    }
    SECTION("SGE lengths summing past the maximum transfer") {
        auto v = ctrl_bytes(hw::WqeOpcode::kSend, at, 3);
        for (int i = 1; i < 3; ++i) {
            hw::DataSegment d{0xF0000000u, mr.token, src.addr()};
            std::memcpy(v.data() + 16 * i, &d, 16);
        }
        p.a->post_raw(*p.qp_a, v, false);
        want = hw::Syndrome::kLocalLength;
    }
    // A good WQE behind the bad one.
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 10, mr.token}});
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 2);
    CHECK(all[0].syndrome == want);
    CHECK(all[0].wqe_counter == at);
    CHECK(cqe_opcode(all[0]) == static_cast<uint8_t>(hw::CqeOpcode::kRequesterError));
    CHECK(all[1].syndrome == hw::Syndrome::kWorkRequestFlushed);
    CHECK(p.dev_a->counters().get(Counter::malformed_wqes) == 1);
    // The device is alive: a fresh connection still moves data.
    p.qp_a = p.a->create_qp(p.pd_a, *p.scq_a, *p.rcq_a);
    p.qp_b = p.b->create_qp(p.pd_b, *p.scq_b, *p.rcq_b);
    p.connect(4, 4);
    Buffer dst(64);
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    p.b->post_recv(*p.qp_b, {{dst.addr(), 64, mr_b.token}});
    p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 10, mr.token}});
    hw::Cqe c{};
    REQUIRE(Driver::poll(*p.scq_a, c));
    CHECK(c.syndrome == hw::Syndrome::kSuccess);
}

TEST_CASE("a garbage SQ producer fails the QP without reading outside the ring", "[device][wqe]") {
    ConnectedPair p;
    const uint16_t at = static_cast<uint16_t>(p.qp_a->sq->reserved());
    // Publish a producer far beyond the ring (the provider is broken or hostile). The SQ
    // doorbell record sits at sq_layout.doorbell_offset of the QP allocation.
    auto qp = p.dev_a->find_qp(p.qp_a->number);
    REQUIRE(qp);
    auto *db =
        reinterpret_cast<hw::QueueDoorbell *>(qp->memory->data() + qp->sq_layout.doorbell_offset);
    publish_wqes(*db, 0x7fff0000u);
    p.a->ring_sq(*p.qp_a);
    auto all = Driver::drain(*p.scq_a);
    REQUIRE(all.size() == 1);
    CHECK(all[0].syndrome == hw::Syndrome::kLocalQpOperation);
    CHECK(all[0].wqe_counter == at);
    // A spurious doorbell for a queue number nobody owns is ignored.
    p.a->set_bit(hw::DoorbellKind::kSendQueue, 4000);
    p.a->set_bit(hw::DoorbellKind::kCompletionQueue, 4001);
    p.a->client().ring();
    CHECK(p.a->object_command(hw::CommandOpcode::kCreatePd, 0) == 0);
}

// ---- CQ arm rules and overflow

TEST_CASE("CQ arming: one event per arm, immediate fire, solicited rules", "[device][cq]") {
    ConnectedPair p;
    Buffer src(4096), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    auto send = [&](uint8_t flags = hw::kCtrlSignaled) {
        SendOptions o;
        o.flags = flags;
        p.b->post_recv(*p.qp_b, {{dst.addr(), 64, mr_b.token}});
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kSend, {{src.addr(), 8, mr_a.token}}, o);
    };
    auto completion_events = [&](Driver &d, const CqHandle &cq) {
        int n = 0;
        for (auto &e : d.events()) {
            n += e.type == static_cast<uint8_t>(hw::EqeType::kCompletion) && e.object == cq.number;
        }
        return n;
    };
    SECTION("one EQE per arm") {
        p.a->arm(*p.scq_a, hw::ArmType::kAny);
        send();
        send();
        CHECK(completion_events(*p.a, *p.scq_a) == 1);
        Driver::drain(*p.scq_a);
        p.a->arm(*p.scq_a, hw::ArmType::kAny);
        CHECK(completion_events(*p.a, *p.scq_a) == 0);  // nothing new since the notification
        send();
        CHECK(completion_events(*p.a, *p.scq_a) == 1);
    }
    SECTION("arm after unnotified entries arrived fires at once") {
        send();
        p.a->arm(*p.scq_a, hw::ArmType::kAny);
        CHECK(completion_events(*p.a, *p.scq_a) == 1);
    }
    SECTION("SOLICITED waits for a solicited receive") {
        p.b->arm(*p.rcq_b, hw::ArmType::kSolicited);
        send();
        CHECK(completion_events(*p.b, *p.rcq_b) == 0);
        send(hw::kCtrlSignaled | hw::kCtrlSolicited);
        CHECK(completion_events(*p.b, *p.rcq_b) == 1);
    }
    SECTION("SOLICITED is satisfied by an error completion") {
        p.b->arm(*p.rcq_b, hw::ArmType::kSolicited);
        p.b->post_recv(*p.qp_b, {{dst.addr(), 64, mr_b.token}});
        REQUIRE(p.b->object_command(hw::CommandOpcode::kFlushQp, p.qp_b->number) == 0);
        CHECK(completion_events(*p.b, *p.rcq_b) == 1);
    }
    SECTION("ERRORS then SOLICITED merge to SOLICITED; ERRORS alone ignores completions") {
        p.b->arm(*p.rcq_b, hw::ArmType::kErrors);
        send();
        CHECK(completion_events(*p.b, *p.rcq_b) == 0);
        Driver::drain(*p.rcq_b);
        p.b->arm(*p.rcq_b, hw::ArmType::kSolicited);
        send(hw::kCtrlSignaled | hw::kCtrlSolicited);
        CHECK(completion_events(*p.b, *p.rcq_b) == 1);
    }
}

TEST_CASE("CQ overflow: CQ error event with STATUS_BUFFER_OVERFLOW, QPs to error", "[device][cq]") {
    auto fabric = std::make_shared<Fabric>();
    ConnectedPair p;
    // A tiny send CQ for a new QP pair on the same adapters.
    auto tiny = p.a->create_cq(4);
    p.qp_a = p.a->create_qp(p.pd_a, *tiny, *p.rcq_a);
    p.qp_b = p.b->create_qp(p.pd_b, *p.scq_b, *p.rcq_b);
    p.connect(4, 4);
    Buffer src(4096), dst(4096);
    auto mr_a = p.a->register_mr(p.pd_a, src.data(), src.size());
    auto mr_b = p.b->register_mr(p.pd_b, dst.data(), dst.size());
    SendOptions o;
    o.remote_address = dst.addr();
    o.remote_token = mr_b.token;
    for (int i = 0; i < 5; ++i) {
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{src.addr(), 8, mr_a.token}}, o);
    }
    auto ev = p.a->wait_event(hw::EqeType::kCqError, std::chrono::milliseconds(100));
    REQUIRE(ev);
    CHECK(ev->object == tiny->number);
    CHECK(ev->status == status::kBufferOverflow);
    CHECK(p.dev_a->counters().get(Counter::cq_overflows) == 1);
    CHECK(Driver::drain(*tiny).size() == 4);
    auto qp = p.dev_a->find_qp(p.qp_a->number);
    std::lock_guard lock(qp->mutex);
    CHECK(qp->state == QpState::kError);
}

// ---- configuration and the embedded registry

TEST_CASE("adapter configuration file", "[device][config]") {
    const std::string path = "emu_device_config_test.ini";
    auto write = [&](const char *text) { std::ofstream(path) << text; };
    std::vector<AdapterConfig> out;
    std::string error;
    SECTION("two adapters with overrides") {
        write(
            "; test\n[adapter a]\nif_index = 3\nipv4 = 10.9.0.1, 10.9.0.2\nipv6 = fd09::1\n"
            "profile = iwarp-default\nrnr_retry = 3\npath_mtu = 4096\n"
            "[adapter b]\nif_index = 4\nipv4 = 10.9.0.3\nalias = second\n");
        REQUIRE(load_adapter_config(path, out, error));
        REQUIRE(out.size() == 2);
        CHECK(out[0].if_index == 3);
        CHECK(out[0].alias == "a");
        CHECK(out[0].addresses.size() == 3);
        CHECK(out[0].profile.limits.rdma_technology == status::kTechnologyIwarp);
        CHECK(out[0].profile.transport.rnr_retry == 3);
        CHECK(out[0].profile.limits.path_mtu == 4096);
        CHECK(out[1].alias == "second");
        CHECK(out[1].profile.name == "roce-default");
    }
    SECTION("errors") {
        write("[adapter a]\nipv4 = 10.0.0.1\n");
        CHECK_FALSE(load_adapter_config(path, out, error));
        out.clear();
        write("[adapter a]\nif_index = 1\nipv4 = not-an-ip\n");
        CHECK_FALSE(load_adapter_config(path, out, error));
        CHECK(error.find("not-an-ip") != std::string::npos);
        out.clear();
        write("[adapter a]\nif_index = 1\nipv4 = 10.0.0.1\nprofile = nope\n");
        CHECK_FALSE(load_adapter_config(path, out, error));
        out.clear();
        write(
            "[adapter a]\nif_index = 1\nipv4 = 10.0.0.1\n[adapter b]\nif_index = 1\nipv4 = "
            "10.0.0.2\n");
        CHECK_FALSE(load_adapter_config(path, out, error));
        out.clear();
        CHECK_FALSE(load_adapter_config("/nonexistent/softndk.ini", out, error));
    }
    SECTION("default") {
        auto d = default_adapter_config();
        REQUIRE(d.size() == 1);
        CHECK(d[0].if_index == 1);
        CHECK(d[0].alias == "rnic0");
        CHECK(d[0].addresses.size() == 2);
    }
    std::remove(path.c_str());
}

TEST_CASE("open_device_client: embedded registry from SOFTNDK_CONFIG, two adapters talk",
          "[device][config]") {
    const std::string path = "emu_device_registry_test.ini";
    std::ofstream(path) << "[adapter x]\nif_index = 7\nipv4 = 10.7.0.1\n"
                           "[adapter y]\nif_index = 8\nipv4 = 10.7.0.2\nipv6 = fd07::2\n";
    setenv("SOFTNDK_CONFIG", path.c_str(), 1);
    std::string error;
    auto c7 = open_device_client(7, error);
    auto c8 = open_device_client(8, error);
    REQUIRE(c7);
    REQUIRE(c8);
    CHECK(c7->runs_inline());
    CHECK_FALSE(open_device_client(1, error));
    CHECK(error.find("if_index 1") != std::string::npos);
    // Daemon mode with no daemon listening: a clear error naming the socket and the fix.
    setenv("SOFTNDK_MODE", "daemon", 1);
    setenv("SOFTNDK_SOCKET", "/nonexistent/softndk-test.sock", 1);
    CHECK_FALSE(open_device_client(7, error));
    CHECK(error.find("cannot reach the SoftNDK daemon at /nonexistent/softndk-test.sock") !=
          std::string::npos);
    CHECK(error.find("softndk rnic") != std::string::npos);
    unsetenv("SOFTNDK_SOCKET");
    unsetenv("SOFTNDK_MODE");
    unsetenv("SOFTNDK_CONFIG");
    std::remove(path.c_str());

    // Both registry devices share the process fabric: connect x -> y.
    auto devs = EmbeddedRegistry::instance().devices(error);
    REQUIRE(devs.size() == 2);
    Driver x(devs[0]), y(devs[1]);
    const uint32_t px = x.create_pd(), py = y.create_pd();
    auto cx = x.create_cq(), cy = y.create_cq();
    auto qx = x.create_qp(px, *cx, *cx), qy = y.create_qp(py, *cy, *cy);
    uint32_t listener = 0, conn = 0;
    REQUIRE(y.listen(sockaddr("10.7.0.2", 0), listener) == 0);
    hw::WireSockaddr bound{};
    REQUIRE(y.listen(sockaddr("0.0.0.0", 0), listener, &bound) == 0);
    const uint16_t port = static_cast<uint16_t>(bound.bytes[2] << 8 | bound.bytes[3]);
    CHECK(port >= 49152);
    REQUIRE(x.connect(*qx, sockaddr("0.0.0.0", 0), sockaddr("10.7.0.2", port), conn) == 0);
    auto req = y.wait_event(hw::EqeType::kConnectRequest);
    REQUIRE(req);
    REQUIRE(y.accept(static_cast<uint32_t>(req->data0), *qy) == 0);
    REQUIRE(x.wait_event(hw::EqeType::kConnectReply));
    REQUIRE(x.object_command(hw::CommandOpcode::kCompleteConnect, conn) == 0);
    REQUIRE(y.wait_event(hw::EqeType::kEstablished));
    Buffer a(64), b(64);
    auto ma = x.register_mr(px, a.data(), 64);
    auto mb = y.register_mr(py, b.data(), 64);
    a.data()[3] = 0x5a;
    y.post_recv(*qy, {{b.addr(), 64, mb.token}});
    x.post_send(*qx, hw::WqeOpcode::kSend, {{a.addr(), 64, ma.token}});
    auto rx = Driver::wait(*cy);
    REQUIRE(rx);
    CHECK(rx->byte_count == 64);
    CHECK(b.data()[3] == 0x5a);
}

TEST_CASE("an EQE wakes the provider's sleeping event thread", "[device][eq][wake]") {
    Fixture f;
    auto dev_b = std::make_shared<Device>(adapter(2, {"10.1.0.2"}), f.fabric);
    Driver a(f.dev), b(dev_b);
    const uint32_t pd = a.create_pd();
    auto cq = a.create_cq();
    auto qp = a.create_qp(pd, *cq, *cq);
    uint32_t listener = 0, conn = 0;
    REQUIRE(b.listen(sockaddr("10.1.0.2", 77), listener) == 0);
    std::atomic<bool> woke{false};
    hw::Eqe got{};
    std::thread event_thread([&] {
        Sleeper sleeper(b.control->wake.host_sleeping, SpinPolicy::never());
        woke = sleeper.wait([&] { return b.eq->take(got); }, std::chrono::seconds(5));
    });
    // Give the event thread time to announce sleep, then make the device post an EQE.
    while (std::atomic_ref(b.control->wake.host_sleeping.value).load() == 0) {
        std::this_thread::yield();
    }
    REQUIRE(a.connect(*qp, sockaddr("10.1.0.1", 0), sockaddr("10.1.0.2", 77), conn) == 0);
    event_thread.join();
    CHECK(woke);
    CHECK(got.type == static_cast<uint8_t>(hw::EqeType::kConnectRequest));
    CHECK(got.object == listener);
    CHECK(got.event_time_ns > 0);
}

TEST_CASE("kQueryResources pages through every context's objects in ascending number",
          "[device][resources]") {
    Fixture f;
    Driver a(f.dev), b(f.dev);
    const uint32_t ctx_a = a.client().context(), ctx_b = b.client().context();
    std::map<uint32_t, uint32_t> owner;  // PD -> context
    for (int i = 0; i < 20; ++i)
        owner[a.create_pd()] = ctx_a;
    for (int i = 0; i < 5; ++i)
        owner[b.create_pd()] = ctx_b;
    REQUIRE(owner.size() == 25);

    // Asked through B: A's objects too (monitoring sees the whole device).
    std::map<uint32_t, uint32_t> listed;
    uint32_t start = 0, pages = 0, last = 0;
    do {
        hw::ResourcesRequest rq{};
        rq.kind = static_cast<uint32_t>(hw::ResourceKind::kPd);
        rq.start = start;
        hw::ResourcesResponse rs{};
        REQUIRE(b.command(hw::CommandOpcode::kQueryResources, rq, rs) == status::kSuccess);
        REQUIRE(rs.count <= hw::kResourcesPerPage);
        CHECK((rs.next == 0 || rs.count == hw::kResourcesPerPage));
        for (uint32_t i = 0; i < rs.count; ++i) {
            CHECK(rs.entries[i].number > last);
            last = rs.entries[i].number;
            listed[rs.entries[i].number] = rs.entries[i].context;
            CHECK(rs.entries[i].values[0] == 0);  // no QP or key in it
        }
        start = rs.next;
        ++pages;
    } while (start != 0 && pages < 10);
    CHECK(pages == 3);  // 12 + 12 + 1
    CHECK(listed == owner);

    SECTION("an unknown kind is refused") {
        hw::ResourcesRequest rq{};
        rq.kind = 99;
        hw::ResourcesResponse rs{};
        CHECK(b.command(hw::CommandOpcode::kQueryResources, rq, rs) == status::kInvalidParameter);
    }
    SECTION("a start past the last object gives an empty, complete list") {
        hw::ResourcesRequest rq{};
        rq.kind = static_cast<uint32_t>(hw::ResourceKind::kQp);
        rq.start = 100000;
        hw::ResourcesResponse rs{};
        rs.count = 5;
        CHECK(b.command(hw::CommandOpcode::kQueryResources, rq, rs) == status::kSuccess);
        CHECK(rs.count == 0);
        CHECK(rs.next == 0);
    }
}

namespace {
// Every entry of one kind, through `d`'s context, all pages.
std::vector<hw::ResourceEntry> list_resources(Driver &d, hw::ResourceKind kind) {
    std::vector<hw::ResourceEntry> all;
    uint32_t start = 0;
    int pages = 0;
    do {
        hw::ResourcesRequest rq{};
        rq.kind = static_cast<uint32_t>(kind);
        rq.start = start;
        hw::ResourcesResponse rs{};
        REQUIRE(d.command(hw::CommandOpcode::kQueryResources, rq, rs) == status::kSuccess);
        all.insert(all.end(), rs.entries, rs.entries + rs.count);
        start = rs.next;
    } while (start != 0 && ++pages < 100);
    return all;
}
}  // namespace

TEST_CASE("kQueryResources lists SRQs with their depth, queued receives and armed limit",
          "[device][resources]") {
    Fixture f;
    Driver a(f.dev), b(f.dev);
    const uint32_t pd = a.create_pd();
    SrqHandle armed, idle;
    REQUIRE(a.try_create_srq(pd, 16, 2, 3, armed) == 0);
    REQUIRE(b.try_create_srq(b.create_pd(), 8, 1, 0, idle) == 0);
    Buffer buf(4096);
    const MrHandle mr = a.register_mr(pd, buf.data(), buf.size());
    for (int i = 0; i < 5; ++i)
        a.post_srq_recv(armed, {{buf.addr(), 64, mr.token}});
    // The doorbell is serviced asynchronously: wait until the device counted them.
    std::vector<hw::ResourceEntry> srqs;
    for (int i = 0; i < 1000; ++i) {
        srqs = list_resources(b, hw::ResourceKind::kSrq);
        if (srqs.size() == 2 && srqs[0].values[2] == 5) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(srqs.size() == 2);
    CHECK(srqs[0].number == armed.number);
    CHECK(srqs[0].context == a.client().context());
    CHECK(srqs[0].values[0] == pd);
    CHECK(srqs[0].values[1] >= 16);  // entries (rounded up to a power of two)
    CHECK(srqs[0].values[2] == 5);   // queued
    CHECK(srqs[0].values[3] == 3);   // limit armed
    CHECK(srqs[0].values[4] >= 2);   // max SGEs
    CHECK(srqs[1].number == idle.number);
    CHECK(srqs[1].context == b.client().context());
    CHECK(srqs[1].values[2] == 0);
    CHECK(srqs[1].values[3] == 0);
}

TEST_CASE("kQueryResources lists CM connections by role and state, then listeners",
          "[device][resources]") {
    ConnectedPair p;
    // The pair's listener was closed once connected; open one to list.
    uint32_t listener = 0;
    REQUIRE(p.b->listen(sockaddr("10.0.0.2", 4100), listener) == 0);
    const auto a_side = list_resources(*p.a, hw::ResourceKind::kCm);
    REQUIRE(a_side.size() == 1);
    const hw::ResourceEntry &active = a_side[0];
    CHECK(active.number == p.conn_a);
    CHECK(active.state == (static_cast<uint32_t>(hw::CmRole::kActive) << 8 |
                           static_cast<uint32_t>(hw::CmState::kEstablished)));
    CHECK(active.values[10] == p.qp_a->number);
    CHECK(active.values[11] == p.conn_b);
    CHECK(active.values[9] == 4000);  // the peer's port
    uint8_t peer_ip[16];
    std::memcpy(peer_ip, &active.values[5], 16);
    CHECK(peer_ip[12] == 10);
    CHECK(peer_ip[15] == 2);

    const auto b_side = list_resources(*p.b, hw::ResourceKind::kCm);
    REQUIRE(b_side.size() == 2);
    CHECK(b_side[0].number == p.conn_b);
    CHECK(b_side[0].state >> 8 == static_cast<uint32_t>(hw::CmRole::kPassive));
    CHECK(b_side[0].values[4] == 4000);  // its local port
    CHECK(b_side[1].number == hw::kCmListenerBase + listener);
    CHECK(b_side[1].state == (static_cast<uint32_t>(hw::CmRole::kListener) << 8 |
                              static_cast<uint32_t>(hw::CmState::kListening)));
    CHECK(b_side[1].values[4] == 4100);

    REQUIRE(p.a->object_command(hw::CommandOpcode::kDisconnect, p.conn_a) == 0);
    REQUIRE(p.b->wait_event(hw::EqeType::kDisconnected));
    const auto after = list_resources(*p.b, hw::ResourceKind::kCm);
    REQUIRE(after.size() == 2);
    CHECK((after[0].state & 0xff) == static_cast<uint32_t>(hw::CmState::kDisconnected));
}

// ---- scale (issue 15 item 5): queue numbers past the old 4,096 bitmap, O(1) allocation

TEST_CASE("a device holds 10,000 QPs, and a doorbell reaches one numbered past 4,096",
          "[device][scale]") {
    auto fabric = std::make_shared<Fabric>();
    auto dev_a = std::make_shared<Device>(adapter(1, {"10.0.0.1"}), fabric);
    auto dev_b = std::make_shared<Device>(adapter(2, {"10.0.0.2"}), fabric);
    Driver a(dev_a), b(dev_b);
    const uint32_t pd_a = a.create_pd(), pd_b = b.create_pd();
    auto cq_a = a.create_cq(64);
    auto cq_b = b.create_cq(64);
    std::vector<std::unique_ptr<QpHandle>> qps;
    std::set<uint32_t> numbers;
    for (int i = 0; i < 10000; ++i) {
        auto qp = std::make_unique<QpHandle>();
        REQUIRE(a.try_create_qp(Driver::qp_request(pd_a, *cq_a, *cq_a, 1, 1, 0), *qp) == 0);
        numbers.insert(qp->number);
        qps.push_back(std::move(qp));
    }
    CHECK(numbers.size() == 10000);
    CHECK(*numbers.begin() >= 2);  // QPN 0 and 1 are IB's special QPs
    CHECK(*numbers.rbegin() < kMaxQueues);
    REQUIRE(qps.back()->number >= 4096);

    // A destroyed QP's number is not handed out again at once.
    const uint32_t freed = qps[5]->number;
    REQUIRE(a.object_command(hw::CommandOpcode::kDestroyQp, freed) == 0);
    qps[5] = std::make_unique<QpHandle>();
    REQUIRE(a.try_create_qp(Driver::qp_request(pd_a, *cq_a, *cq_a, 1, 1, 0), *qps[5]) == 0);
    CHECK(qps[5]->number != freed);

    // The highest-numbered QP carries a SEND: its doorbell goes through every level of
    // the bitmap (word 156 and more, summary word 2 and more).
    QpHandle &high = *qps.back();
    auto qp_b = b.create_qp(pd_b, *cq_b, *cq_b, 4, 1);
    uint32_t listener = 0, conn_a = 0;
    REQUIRE(b.listen(sockaddr("10.0.0.2", 4000), listener) == 0);
    REQUIRE(a.connect(high, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 4000), conn_a) == 0);
    auto request = b.wait_event(hw::EqeType::kConnectRequest);
    REQUIRE(request);
    REQUIRE(b.accept(static_cast<uint32_t>(request->data0), *qp_b) == 0);
    auto reply = a.wait_event(hw::EqeType::kConnectReply);
    REQUIRE(reply);
    REQUIRE(reply->status == 0);
    REQUIRE(a.object_command(hw::CommandOpcode::kCompleteConnect, conn_a) == 0);
    Buffer src(64, 0x5a), dst(64);
    auto mr_b = b.register_mr(pd_b, dst.data(), dst.size());
    // The QP was created without inline room and with one SGE: send from a registered MR.
    auto mr_a = a.register_mr(pd_a, src.data(), src.size());
    b.post_recv(*qp_b, {{dst.addr(), 64, mr_b.token}});
    SendOptions signaled;
    signaled.flags = hw::kCtrlSignaled;
    a.post_send(high, hw::WqeOpcode::kSend, {{src.addr(), 64, mr_a.token}}, signaled);
    auto sent = Driver::wait(*cq_a);
    REQUIRE(sent);
    CHECK(sent->qp_number == high.number);
    CHECK(sent->syndrome == hw::Syndrome::kSuccess);
    auto received = Driver::wait(*cq_b);
    REQUIRE(received);
    CHECK(received->byte_count == 64);
    CHECK(dst.bytes == src.bytes);
}

TEST_CASE("CQ numbers: the lowest free one, so a destroyed CQ's number is taken next",
          "[device][scale]") {
    Fixture f;
    Driver d(f.dev);
    auto first = d.create_cq(4);
    auto second = d.create_cq(4);
    auto third = d.create_cq(4);
    CHECK(first->number == 1);
    CHECK(second->number == 2);
    CHECK(third->number == 3);
    REQUIRE(d.object_command(hw::CommandOpcode::kDestroyCq, second->number) == 0);
    auto again = d.create_cq(4);
    CHECK(again->number == 2);
    auto fourth = d.create_cq(4);
    CHECK(fourth->number == 4);
}

TEST_CASE("quotas hold per consumer process: its contexts share one, another process has its own",
          "[device][quota]") {
    auto fabric = std::make_shared<Fabric>();
    AdapterConfig config = adapter(1, {"10.1.0.1"});
    config.quota.pds = 4;
    config.quota.cqs = 3;
    config.quota.qps = 2;
    config.quota.mrs = 3;
    auto dev = std::make_shared<Device>(config, fabric);
    // Three handles of process 777 (as three daemon sessions of one peer), one of 778.
    Driver first(dev, 777), second(dev, 777), third(dev, 777), other(dev, 778);
    const uint32_t pd1 = first.create_pd(), pd2 = second.create_pd();
    third.create_pd();
    first.create_pd();
    CHECK(second.object_command(hw::CommandOpcode::kCreatePd, 0) == status::kInsufficientResources);
    CHECK(third.object_command(hw::CommandOpcode::kCreatePd, 0) == status::kInsufficientResources);
    const uint32_t other_pd = other.create_pd();

    auto cq1 = first.create_cq(4);
    auto cq2 = second.create_cq(4);
    auto cq3 = third.create_cq(4);
    CqHandle refused;
    CHECK(first.try_create_cq(4, refused) == status::kInsufficientResources);
    auto other_cq = other.create_cq(4);

    QpHandle qp1, qp2, qp3;
    REQUIRE(first.try_create_qp(Driver::qp_request(pd1, *cq1, *cq1, 1, 1, 0), qp1) == 0);
    REQUIRE(second.try_create_qp(Driver::qp_request(pd2, *cq2, *cq2, 1, 1, 0), qp2) == 0);
    CHECK(first.try_create_qp(Driver::qp_request(pd1, *cq1, *cq1, 1, 1, 0), qp3) ==
          status::kInsufficientResources);
    QpHandle other_qp;
    CHECK(other.try_create_qp(Driver::qp_request(other_pd, *other_cq, *other_cq, 1, 1, 0),
                              other_qp) == 0);

    Buffer b(4096);
    first.register_mr(pd1, b.data(), 1024);
    second.register_mr(pd2, b.data(), 1024);
    const MrHandle last = second.register_mr(pd2, b.data(), 1024);
    CHECK(first.object_command(hw::CommandOpcode::kAllocMr, pd1) == status::kInsufficientResources);
    for (int i = 0; i < 3; ++i)
        other.register_mr(other_pd, b.data(), 1024);
    CHECK(other.object_command(hw::CommandOpcode::kAllocMr, other_pd) ==
          status::kInsufficientResources);

    // What one handle frees, another handle of the process may take.
    REQUIRE(second.object_command(hw::CommandOpcode::kDeregisterMr, last.index) == 0);
    REQUIRE(second.object_command(hw::CommandOpcode::kFreeMr, last.index) == 0);
    hw::ObjectResponse alloc{};
    CHECK(first.object_command(hw::CommandOpcode::kAllocMr, pd1, 0, &alloc) == 0);
    // A handle that goes gives the process its share back.
    REQUIRE(second.object_command(hw::CommandOpcode::kDetach, 0) == 0);
    const uint32_t pd3 = third.create_pd();
    CHECK(third.try_create_qp(Driver::qp_request(pd3, *cq3, *cq3, 1, 1, 0), qp3) == 0);
}

TEST_CASE("A functional timer deadline is the span from now and at most two coarse ticks late",
          "[device][timers]") {
    auto fabric = std::make_shared<Fabric>();
    auto dev = std::make_shared<Device>(adapter(1, {"10.1.0.1"}), fabric);
    const uint64_t tick = coarse_monotonic_resolution_ns();
    // Short spans (an RNR delay) read the precise clock; long ones (the ACK timeout, 16
    // ticks and more) the coarse clock, with two ticks for its lag.
    for (const uint64_t span : {uint64_t{0}, uint64_t{50'000}, 15 * tick, 16 * tick, 40 * tick}) {
        const auto before = std::chrono::steady_clock::now();
        const auto deadline = dev->wall_deadline(1'000'000, 1'000'000 + span);
        const auto after = std::chrono::steady_clock::now();
        INFO("span " << span << " ns, tick " << tick << " ns");
        const bool coarse = span >= 16 * tick;
        // The coarse clock's lag is not bounded: allow one tick past the two covered.
        const auto earliest =
            before + std::chrono::nanoseconds(span) - std::chrono::nanoseconds(coarse ? tick : 0);
        CHECK(deadline >= earliest);
        CHECK(deadline <= after + std::chrono::nanoseconds(span + (coarse ? 2 * tick : 0)));
    }
    // A deadline already past (model time moved on): due at once.
    const auto before = std::chrono::steady_clock::now();
    const auto deadline = dev->wall_deadline(2'000'000, 1'000'000);
    const auto after = std::chrono::steady_clock::now();
    CHECK(deadline >= before);
    CHECK(deadline <= after);
}

TEST_CASE("The control page counts this context's QPs that enter ERROR, once each",
          "[device][attach]") {
    auto fabric = std::make_shared<Fabric>();
    auto dev = std::make_shared<Device>(adapter(1, {"10.1.0.1"}), fabric);
    Driver d(dev), other(dev);
    auto in_error = [](const Driver &driver) {
        return std::atomic_ref<uint32_t>(driver.control->qps_in_error).load();
    };
    const uint32_t pd = d.create_pd();
    auto cq = d.create_cq(16);
    auto first = d.create_qp(pd, *cq, *cq);
    auto second = d.create_qp(pd, *cq, *cq);
    CHECK(in_error(d) == 0);  // healthy QPs: the provider need not ring for receives
    REQUIRE(d.object_command(hw::CommandOpcode::kFlushQp, first->number) == 0);
    CHECK(in_error(d) == 1);
    REQUIRE(d.object_command(hw::CommandOpcode::kFlushQp, first->number) == 0);
    CHECK(in_error(d) == 1);  // already in ERROR: not counted again
    REQUIRE(d.object_command(hw::CommandOpcode::kFlushQp, second->number) == 0);
    CHECK(in_error(d) == 2);
    CHECK(in_error(other) == 0);  // another context's page is its own
}

TEST_CASE(
    "A QP destroyed between two packets of one drain takes neither, and is freed as "
    "the drain ends",
    "[device][fabric][memo]") {
    // Deliveries within one drain reuse the QP an earlier packet of the drain found
    // (Fabric::drain_memo): the second WRITE below reaches the responder after its QP
    // was destroyed, in the same drain as the first, and must be dropped as a packet to
    // a destroyed QP is; and nothing may keep the QP once the drain is over.
    ConnectedPair p;
    Buffer local(256), remote(256);
    std::memset(local.data(), 0xAB, 64);
    auto mr_a = p.a->register_mr(p.pd_a, local.data(), local.size());
    auto mr_b = p.b->register_mr(p.pd_b, remote.data(), remote.size());
    SendOptions w;
    w.remote_address = remote.addr();
    w.remote_token = mr_b.token;
    std::weak_ptr<Qp> responder = p.dev_b->find_qp(p.qp_b->number);
    REQUIRE_FALSE(responder.expired());
    const uint64_t dropped_before = p.dev_b->counters().get(Counter::dropped_pkts);
    int32_t destroyed = -1;

    Fabric::defer([&] {
        // Inside the drain: the first WRITE's packet is queued (the nested drain of the
        // doorbell does nothing), and after it the task that destroys the QP and posts
        // the second WRITE.
        p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite, {{local.addr(), 32, mr_a.token}}, w);
        Fabric::defer([&] {
            destroyed = p.b->object_command(hw::CommandOpcode::kDestroyQp, p.qp_b->number);
            SendOptions second = w;
            second.remote_address = remote.addr() + 32;
            p.a->post_send(*p.qp_a, hw::WqeOpcode::kRdmaWrite,
                           {{local.addr() + 32, 32, mr_a.token}}, second);
        });
    });
    Fabric::drain();

    CHECK(destroyed == 0);
    CHECK(remote.data()[0] == 0xAB);   // the first WRITE landed
    CHECK(remote.data()[32] == 0x00);  // the second did not
    CHECK(p.dev_b->counters().get(Counter::dropped_pkts) == dropped_before + 1);
    CHECK(responder.expired());  // nothing holds the QP once the drain is over
}
