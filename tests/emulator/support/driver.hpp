// driver.hpp - a tiny test-only "driver" for the virtual RNIC.
//
// It drives the device exactly as the provider does: commands through a DeviceClient
// (EmbeddedClient), WQEs written into the SQ/RQ rings (softndk/ring.hpp) with doorbell
// bits + ring(), CQEs and EQEs read back through the owner-bit consumers. No mocks: this
// is how the hardware interface is verified. Helpers throw std::runtime_error on command
// failures they do not expect, so tests stay short.
#pragma once

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cm/cm.hpp"
#include "device/config.hpp"
#include "device/device.hpp"
#include "device/embedded_client.hpp"
#include "device/status.hpp"
#include "softndk/ring.hpp"

namespace softndk::emu::test {

inline wire::IpAddr ip(const char *text) {
    wire::IpAddr a;
    if (!parse_ip(text, a)) throw std::runtime_error(std::string("bad ip ") + text);
    return a;
}

inline hw::WireSockaddr sockaddr(const char *text, uint16_t port) {
    cm::Endpoint ep;
    ep.ip = ip(text);
    ep.v4 = ep.ip.is_v4();
    ep.port = port;
    return cm::make_sockaddr(ep);
}

// A named device profile at path MTU 1024 (rxe over a 1500-byte netdev), whatever
// the profile's own MTU: the engine tests count packets, lose middle ones and
// replay READ responses, so their few-KiB messages must span several packets.
inline Profile test_profile(const char *name = "roce-default") {
    Profile p = *find_profile(name);
    p.limits.path_mtu = 1024;
    return p;
}

inline AdapterConfig adapter(uint32_t if_index, std::vector<const char *> addresses,
                             const char *profile = "roce-default") {
    AdapterConfig a;
    a.if_index = if_index;
    a.alias = "rnic" + std::to_string(if_index);
    for (auto *t : addresses)
        a.addresses.push_back(ip(t));
    a.profile = test_profile(profile);
    return a;
}

struct CqHandle {
    uint32_t number = 0;
    std::optional<CqConsumer> ring;
    hw::CqDoorbell *doorbell = nullptr;
    uint32_t arm_sequence = 0;
};

struct QpHandle {
    uint32_t number = 0;
    std::optional<SqProducer> sq;
    std::optional<RqProducer> rq;
    uint32_t rq_entry_bytes = 0;
    // The doorbell records in the QP's memory, for tests that write them directly
    // (tests/fuzz): what a buggy or hostile provider can do.
    hw::QueueDoorbell *sq_doorbell = nullptr;
    hw::QueueDoorbell *rq_doorbell = nullptr;
};

struct SrqHandle {
    uint32_t number = 0;
    std::optional<RqProducer> ring;
    uint32_t entry_bytes = 0;
};

struct MrHandle {
    uint32_t index = 0;
    uint32_t token = 0;
    uint64_t iova = 0;
    size_t length = 0;
};

struct Sge {
    uint64_t address;
    uint32_t length;
    uint32_t token;
};

struct SendOptions {
    uint8_t flags = hw::kCtrlSignaled;
    uint64_t remote_address = 0;
    uint32_t remote_token = 0;
    uint32_t invalidate_token = 0;
    std::vector<uint8_t> inline_data;  // with kCtrlInline
};

class Driver {
  public:
    // `process_id`: the AttachRequest's (0 = unknown: the context shares nothing, not
    // even its quota, with another context).
    explicit Driver(std::shared_ptr<Device> device, uint32_t process_id = 0)
        : Driver(std::make_unique<EmbeddedClient>(device), device->config().if_index, process_id) {}
    // Any DeviceClient (daemon-mode tests pass a DaemonClient): attaches to `if_index`.
    Driver(std::unique_ptr<DeviceClient> client, uint32_t if_index, uint32_t process_id = 0)
        : client_(std::move(client)) {
        hw::AttachRequest rq{};
        rq.process_id = process_id;
        rq.header = header<hw::AttachRequest>(hw::CommandOpcode::kAttach);
        rq.abi_version = hw::kAbiVersion;
        rq.if_index = if_index;
        rq.ndk_major = 1;
        rq.ndk_minor = 1;
        hw::AttachResponse rs{};
        expect(client_->execute(rq.header, rs.header, sizeof(rs)), "attach");
        limits = rs.limits;
        control = static_cast<hw::ContextControlPage *>(client_->map(rs.control_page));
        eq.emplace(*EqConsumer::attach(client_->map(rs.event_queue), rs.event_queue_layout));
    }

    // Embedded drivers only.
    EmbeddedClient &client() { return dynamic_cast<EmbeddedClient &>(*client_); }
    Device &device() { return client().device(); }
    DeviceClient &device_client() { return *client_; }
    // Simulates the process dying without detaching cleanly.
    void kill() { client_.reset(); }

    template <class Req>
    static hw::CommandHeader header(hw::CommandOpcode op) {
        return hw::CommandHeader{op, static_cast<uint16_t>(sizeof(Req)), 7};
    }

    template <class Req, class Resp>
    int32_t command(hw::CommandOpcode op, Req &rq, Resp &rs) {
        rq.header = header<Req>(op);
        return client_->execute(rq.header, rs.header, sizeof(rs));
    }

    int32_t object_command(hw::CommandOpcode op, uint32_t object, uint32_t reserved = 0,
                           hw::ObjectResponse *out = nullptr) {
        hw::ObjectRequest rq{};
        rq.object = object;
        rq.reserved = reserved;
        hw::ObjectResponse rs{};
        const int32_t s = command(op, rq, rs);
        if (out) *out = rs;
        return s;
    }

    static void expect(int32_t s, const char *what) {
        if (s != 0) {
            throw std::runtime_error(std::string(what) + " failed: status " + std::to_string(s));
        }
    }

    uint32_t create_pd() {
        hw::ObjectResponse rs{};
        expect(object_command(hw::CommandOpcode::kCreatePd, 0, 0, &rs), "create pd");
        return rs.object;
    }

    int32_t try_create_cq(uint32_t depth, CqHandle &cq) {
        hw::CreateCqRequest rq{};
        rq.depth = depth;
        hw::CreateCqResponse rs{};
        const int32_t s = command(hw::CommandOpcode::kCreateCq, rq, rs);
        if (s != 0) return s;
        auto *base = static_cast<std::byte *>(client_->map(rs.memory));
        cq.number = rs.cq;
        cq.ring.emplace(*CqConsumer::attach(base, rs.layout));
        cq.doorbell = reinterpret_cast<hw::CqDoorbell *>(base + rs.layout.doorbell_offset);
        return 0;
    }
    std::unique_ptr<CqHandle> create_cq(uint32_t depth = 256) {
        auto cq = std::make_unique<CqHandle>();
        expect(try_create_cq(depth, *cq), "create cq");
        return cq;
    }

    int32_t try_create_qp(hw::CreateQpRequest rq, QpHandle &qp) {
        hw::CreateQpResponse rs{};
        const int32_t s = command(hw::CommandOpcode::kCreateQp, rq, rs);
        if (s != 0) return s;
        void *base = client_->map(rs.memory);
        qp.number = rs.qp;
        qp.sq.emplace(*SqProducer::attach(base, rs.send_queue));
        if (rs.recv_queue.entries != 0) qp.rq.emplace(*RqProducer::attach(base, rs.recv_queue));
        qp.rq_entry_bytes = rs.recv_queue.entry_bytes;
        qp.sq_doorbell = reinterpret_cast<hw::QueueDoorbell *>(static_cast<std::byte *>(base) +
                                                               rs.send_queue.doorbell_offset);
        if (rs.recv_queue.entries != 0) {
            qp.rq_doorbell = reinterpret_cast<hw::QueueDoorbell *>(static_cast<std::byte *>(base) +
                                                                   rs.recv_queue.doorbell_offset);
        }
        return 0;
    }
    static hw::CreateQpRequest qp_request(uint32_t pd, const CqHandle &scq, const CqHandle &rcq,
                                          uint32_t depth = 64, uint32_t sge = 4,
                                          uint32_t inline_bytes = 64) {
        hw::CreateQpRequest rq{};
        rq.pd = pd;
        rq.send_cq = scq.number;
        rq.recv_cq = rcq.number;
        rq.srq = hw::kNoObject;
        rq.send_depth = depth;
        rq.recv_depth = depth;
        rq.max_send_sge = sge;
        rq.max_recv_sge = sge;
        rq.max_inline_bytes = inline_bytes;
        return rq;
    }
    std::unique_ptr<QpHandle> create_qp(uint32_t pd, const CqHandle &scq, const CqHandle &rcq,
                                        uint32_t depth = 64, uint32_t sge = 4) {
        auto qp = std::make_unique<QpHandle>();
        expect(try_create_qp(qp_request(pd, scq, rcq, depth, sge), *qp), "create qp");
        return qp;
    }

    MrHandle register_mr(uint32_t pd, void *address, size_t length,
                         uint8_t access = hw::kAccessLocalWrite | hw::kAccessRemoteRead |
                                          hw::kAccessRemoteWrite) {
        hw::ObjectResponse alloc{};
        expect(object_command(hw::CommandOpcode::kAllocMr, pd, 0, &alloc), "alloc mr");
        hw::RegisterMrRequest rq{};
        rq.mpt_index = alloc.object;
        rq.access = access;
        rq.iova = reinterpret_cast<uint64_t>(address);
        rq.length = length;
        rq.memory = hw::MemoryHandle{hw::kNoFd, 0, 0, length, reinterpret_cast<uint64_t>(address)};
        hw::ObjectResponse rs{};
        expect(command(hw::CommandOpcode::kRegisterMr, rq, rs), "register mr");
        return MrHandle{alloc.object, rs.token, rq.iova, length};
    }

    // ---- doorbells
    void set_bit(hw::DoorbellKind kind, uint32_t n) {
        hw::set_doorbell(control->doorbells, kind, n);
    }
    void ring_sq(const QpHandle &qp) {
        set_bit(hw::DoorbellKind::kSendQueue, qp.number);
        client_->ring();
    }
    void ring_rq(const QpHandle &qp) {
        set_bit(hw::DoorbellKind::kReceiveQueue, qp.number);
        client_->ring();
    }

    // Builds one send WQE in the SQ ring; returns its wqe_index. ring = false: DEFER.
    uint16_t post_send(QpHandle &qp, hw::WqeOpcode opcode, const std::vector<Sge> &sges,
                       const SendOptions &o = {}, bool ring = true) {
        std::vector<uint8_t> segs(16);
        const bool remote =
            opcode == hw::WqeOpcode::kRdmaWrite || opcode == hw::WqeOpcode::kRdmaRead;
        if (remote) {
            hw::RemoteAddressSegment r{o.remote_address, o.remote_token, 0};
            append(segs, &r, sizeof(r));
        }
        if (o.flags & hw::kCtrlInline) {
            const uint32_t marker = static_cast<uint32_t>(o.inline_data.size()) | hw::kInlineMarker;
            std::vector<uint8_t> in(4 + o.inline_data.size());
            std::memcpy(in.data(), &marker, 4);
            std::memcpy(in.data() + 4, o.inline_data.data(), o.inline_data.size());
            in.resize((in.size() + 15) / 16 * 16);
            segs.insert(segs.end(), in.begin(), in.end());
        } else {
            for (const auto &s : sges) {
                hw::DataSegment d{s.length, s.token, s.address};
                append(segs, &d, sizeof(d));
            }
        }
        const uint32_t producer = qp.sq->reserved();
        hw::CtrlSegment c{};
        c.opcode = opcode;
        c.flags = o.flags;
        c.wqe_index = static_cast<uint16_t>(producer);
        c.segment_count = static_cast<uint8_t>(segs.size() / 16);
        c.invalidate_token = o.invalidate_token;
        std::memcpy(segs.data(), &c, sizeof(c));
        post_raw(qp, segs, ring);
        return static_cast<uint16_t>(producer);
    }

    // Writes raw segment bytes (padded to WQEBBs) as the next WQE(s) and publishes.
    void post_raw(QpHandle &qp, std::vector<uint8_t> bytes, bool ring = true) {
        bytes.resize((bytes.size() + 63) / 64 * 64);
        const uint32_t bbs = static_cast<uint32_t>(bytes.size() / 64);
        auto first = qp.sq->reserve(bbs);
        if (!first) throw std::runtime_error("SQ full");
        qp.sq->write(*first, bytes.data(), bytes.size());
        qp.sq->publish();
        if (ring) ring_sq(qp);
    }

    void post_recv(QpHandle &qp, const std::vector<Sge> &sges, bool ring = true) {
        std::vector<uint8_t> slot(qp.rq_entry_bytes, 0);
        size_t i = 0;
        for (; i < sges.size(); ++i) {
            hw::DataSegment d{sges[i].length, sges[i].token, sges[i].address};
            std::memcpy(slot.data() + i * 16, &d, 16);
        }
        if (i * 16 < slot.size()) {
            hw::DataSegment end{0, hw::kRecvListEnd, 0};
            std::memcpy(slot.data() + i * 16, &end, 16);
        }
        auto at = qp.rq->reserve(1);
        if (!at) throw std::runtime_error("RQ full");
        qp.rq->write(*at, slot.data(), slot.size());
        qp.rq->publish();
        if (ring) ring_rq(qp);
    }

    int32_t try_create_srq(uint32_t pd, uint32_t depth, uint32_t max_sge, uint32_t limit,
                           SrqHandle &srq) {
        hw::CreateSrqRequest rq{};
        rq.pd = pd;
        rq.depth = depth;
        rq.max_sge = max_sge;
        rq.limit = limit;
        hw::CreateSrqResponse rs{};
        const int32_t s = command(hw::CommandOpcode::kCreateSrq, rq, rs);
        if (s != 0) return s;
        srq.number = rs.srq;
        srq.ring.emplace(*RqProducer::attach(client_->map(rs.memory), rs.layout));
        srq.entry_bytes = rs.layout.entry_bytes;
        return 0;
    }
    int32_t modify_srq(const SrqHandle &srq, uint32_t depth, uint32_t limit,
                       uint32_t *queued = nullptr) {
        hw::CreateSrqRequest rq{};
        rq.srq = srq.number;
        rq.depth = depth;
        rq.limit = limit;
        hw::CreateSrqResponse rs{};
        const int32_t s = command(hw::CommandOpcode::kModifySrq, rq, rs);
        if (queued) *queued = rs.queued;
        return s;
    }
    void post_srq_recv(SrqHandle &srq, const std::vector<Sge> &sges) {
        std::vector<uint8_t> slot(srq.entry_bytes, 0);
        size_t i = 0;
        for (; i < sges.size(); ++i) {
            hw::DataSegment d{sges[i].length, sges[i].token, sges[i].address};
            std::memcpy(slot.data() + i * 16, &d, 16);
        }
        if (i * 16 < slot.size()) {
            hw::DataSegment end{0, hw::kRecvListEnd, 0};
            std::memcpy(slot.data() + i * 16, &end, 16);
        }
        auto at = srq.ring->reserve(1);
        if (!at) throw std::runtime_error("SRQ full");
        srq.ring->write(*at, slot.data(), slot.size());
        srq.ring->publish();
        set_bit(hw::DoorbellKind::kSharedReceiveQueue, srq.number);
        client_->ring();
    }

    void arm(CqHandle &cq, hw::ArmType type) {
        std::atomic_ref(cq.doorbell->arm_type.value)
            .store(static_cast<uint32_t>(type), std::memory_order_relaxed);
        std::atomic_ref(cq.doorbell->arm_sequence.value)
            .store(++cq.arm_sequence, std::memory_order_release);
        set_bit(hw::DoorbellKind::kCompletionQueue, cq.number);
        client_->ring();
    }

    // ---- completions and events
    static bool poll(CqHandle &cq, hw::Cqe &out) { return cq.ring->poll(out); }
    static std::vector<hw::Cqe> drain(CqHandle &cq) {
        std::vector<hw::Cqe> all;
        hw::Cqe c;
        while (cq.ring->poll(c))
            all.push_back(c);
        return all;
    }
    // Polls until a CQE arrives (timers run on the device's progress thread).
    static std::optional<hw::Cqe> wait(
        CqHandle &cq, std::chrono::milliseconds limit = std::chrono::milliseconds(2000)) {
        const auto end = std::chrono::steady_clock::now() + limit;
        hw::Cqe c;
        while (std::chrono::steady_clock::now() < end) {
            if (cq.ring->poll(c)) return c;
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        return std::nullopt;
    }
    bool poll_event(hw::Eqe &e) { return eq->poll(e); }
    std::vector<hw::Eqe> events() {
        std::vector<hw::Eqe> all;
        hw::Eqe e;
        while (eq->poll(e))
            all.push_back(e);
        return all;
    }
    // Waits for the next EQE of `type` (others are dropped).
    std::optional<hw::Eqe> wait_event(
        hw::EqeType type, std::chrono::milliseconds limit = std::chrono::milliseconds(2000)) {
        const auto end = std::chrono::steady_clock::now() + limit;
        hw::Eqe e;
        while (std::chrono::steady_clock::now() < end) {
            while (eq->poll(e)) {
                if (e.type == static_cast<uint8_t>(type)) return e;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        return std::nullopt;
    }

    // ---- connection management
    int32_t listen(const hw::WireSockaddr &address, uint32_t &listener,
                   hw::WireSockaddr *bound = nullptr) {
        hw::ListenRequest rq{};
        rq.address = address;
        hw::ListenResponse rs{};
        const int32_t s = command(hw::CommandOpcode::kListen, rq, rs);
        listener = rs.listener;
        if (bound) *bound = rs.bound;
        return s;
    }
    int32_t connect(const QpHandle &qp, const hw::WireSockaddr &src, const hw::WireSockaddr &dst,
                    uint32_t &connection, uint32_t ird = 4, uint32_t ord = 4,
                    const std::vector<uint8_t> &pdata = {}) {
        hw::ConnectRequest rq{};
        rq.qp = qp.number;
        rq.inbound_read_limit = ird;
        rq.outbound_read_limit = ord;
        rq.private_data_bytes = static_cast<uint32_t>(pdata.size());
        if (!pdata.empty()) {
            std::memcpy(rq.private_data, pdata.data(),
                        std::min<size_t>(pdata.size(), hw::kMaxPrivateData));
        }
        rq.source = src;
        rq.destination = dst;
        hw::ObjectResponse rs{};
        const int32_t s = command(hw::CommandOpcode::kConnect, rq, rs);
        connection = rs.object;
        return s;
    }
    int32_t accept(uint32_t connection, const QpHandle &qp, uint32_t ird = 4, uint32_t ord = 4,
                   const std::vector<uint8_t> &pdata = {},
                   hw::CommandOpcode op = hw::CommandOpcode::kAccept) {
        hw::AcceptRequest rq{};
        rq.connection = connection;
        rq.qp = qp.number;
        rq.inbound_read_limit = ird;
        rq.outbound_read_limit = ord;
        rq.private_data_bytes = static_cast<uint32_t>(pdata.size());
        if (!pdata.empty()) {
            std::memcpy(rq.private_data, pdata.data(),
                        std::min<size_t>(pdata.size(), hw::kMaxPrivateData));
        }
        hw::ObjectResponse rs{};
        return command(op, rq, rs);
    }
    int32_t reject(uint32_t connection, const std::vector<uint8_t> &pdata = {}) {
        QpHandle none;
        return accept(connection, none, 0, 0, pdata, hw::CommandOpcode::kReject);
    }
    int32_t query(uint32_t connection, hw::ConnectionInfo &info) {
        hw::ObjectRequest rq{};
        rq.object = connection;
        hw::QueryConnectionResponse rs{};
        const int32_t s = command(hw::CommandOpcode::kQueryConnection, rq, rs);
        info = rs.info;
        return s;
    }

    hw::DeviceLimits limits{};
    hw::ContextControlPage *control = nullptr;
    std::optional<EqConsumer> eq;

  private:
    static void append(std::vector<uint8_t> &v, const void *p, size_t n) {
        const auto *b = static_cast<const uint8_t *>(p);
        v.insert(v.end(), b, b + n);
    }
    std::unique_ptr<DeviceClient> client_;
};

// Two adapters on a private fabric, one context each, a PD, CQs, an RC QP per side,
// connected through the CM. `a` is the active side.
struct ConnectedPair {
    explicit ConnectedPair(Profile profile_a = test_profile(), Profile profile_b = test_profile(),
                           uint32_t depth = 64, uint32_t ird = 4, uint32_t ord = 4)
        : fabric(std::make_shared<Fabric>()) {
        AdapterConfig ca = adapter(1, {"10.0.0.1", "fd00::1"});
        AdapterConfig cb = adapter(2, {"10.0.0.2", "fd00::2"});
        ca.profile = profile_a;
        cb.profile = profile_b;
        dev_a = std::make_shared<Device>(ca, fabric);
        dev_b = std::make_shared<Device>(cb, fabric);
        a = std::make_unique<Driver>(dev_a);
        b = std::make_unique<Driver>(dev_b);
        pd_a = a->create_pd();
        pd_b = b->create_pd();
        scq_a = a->create_cq(1024);
        rcq_a = a->create_cq(1024);
        scq_b = b->create_cq(1024);
        rcq_b = b->create_cq(1024);
        qp_a = a->create_qp(pd_a, *scq_a, *rcq_a, depth);
        qp_b = b->create_qp(pd_b, *scq_b, *rcq_b, depth);
        connect(ird, ord);
    }
    void connect(uint32_t ird, uint32_t ord) {
        uint32_t listener = 0;
        Driver::expect(b->listen(sockaddr("10.0.0.2", 4000), listener), "listen");
        Driver::expect(a->connect(*qp_a, sockaddr("10.0.0.1", 0), sockaddr("10.0.0.2", 4000),
                                  conn_a, ird, ord),
                       "connect");
        auto req = b->wait_event(hw::EqeType::kConnectRequest);
        if (!req) throw std::runtime_error("no connect request");
        conn_b = static_cast<uint32_t>(req->data0);
        Driver::expect(b->accept(conn_b, *qp_b, ird, ord), "accept");
        auto rep = a->wait_event(hw::EqeType::kConnectReply);
        if (!rep || rep->status != 0) throw std::runtime_error("no connect reply");
        Driver::expect(a->object_command(hw::CommandOpcode::kCompleteConnect, conn_a), "complete");
        if (!b->wait_event(hw::EqeType::kEstablished)) throw std::runtime_error("not established");
        b->object_command(hw::CommandOpcode::kCloseListener, listener);
    }
    ~ConnectedPair() {
        a.reset();
        b.reset();
        dev_a.reset();
        dev_b.reset();
    }

    std::shared_ptr<Fabric> fabric;
    std::shared_ptr<Device> dev_a, dev_b;
    std::unique_ptr<Driver> a, b;
    uint32_t pd_a = 0, pd_b = 0;
    std::unique_ptr<CqHandle> scq_a, rcq_a, scq_b, rcq_b;
    std::unique_ptr<QpHandle> qp_a, qp_b;
    uint32_t conn_a = 0, conn_b = 0;
};

// Page-aligned test buffer.
struct Buffer {
    explicit Buffer(size_t n, uint8_t fill = 0) : bytes(n) { std::memset(bytes.data(), fill, n); }
    uint8_t *data() { return bytes.data(); }
    uint64_t addr() { return reinterpret_cast<uint64_t>(bytes.data()); }
    size_t size() const { return bytes.size(); }
    std::vector<uint8_t> bytes;
};

}  // namespace softndk::emu::test
