#include "device/device.hpp"

#include <atomic>
#include <bit>
#include <stdexcept>

#include "cm/cm.hpp"
#include "device/log.hpp"
#include "rc/engine.hpp"
#include "softndk/monotonic.hpp"
#include "trace/hooks.hpp"
#include "wire/psn.hpp"

namespace softndk::emu {
namespace {
AdapterConfig with_profile(AdapterConfig config) {
    if (config.profile.name.empty()) config.profile = *find_profile("roce-default");
    if (config.time_mode == hw::TimeMode::kSimulated && !sim::enabled())
        throw std::runtime_error("adapter " + config.alias +
                                 ": simulated time runs the consumer and the device in one "
                                 "process under SOFTNDK_TIME=simulated (the embedded device)");
    // What the provider must know of the model: how its clock relates to the device's,
    // and how large a WQE it may push with the doorbell.
    config.profile.limits.time_mode = static_cast<uint32_t>(config.time_mode);
    config.profile.limits.blueflame_bytes = config.profile.cost.blueflame_bytes;
    return config;
}
}  // namespace

Device::Device(AdapterConfig config, std::shared_ptr<Fabric> fabric,
               std::unique_ptr<MemoryAllocator> allocator)
    : config_(with_profile(std::move(config))),
      fabric_(std::move(fabric)),
      allocator_(allocator ? std::move(allocator) : std::make_unique<HeapMemoryAllocator>()),
      clock_(config_.time_mode != hw::TimeMode::kFunctional),
      timing_(config_.profile.cost, config_.time_mode == hw::TimeMode::kPaced ? monotonic_ns() : 0),
      mpt_(MptLimits{kMptEntries, config_.profile.limits.max_fast_register_pages}),
      cqs_(kMaxQueues),
      qps_(kMaxQueues),
      srqs_(kMaxQueues) {
    for (uint32_t n = 1; n < kMaxQueues; ++n) {
        free_cqs_.push(n);
        free_srqs_.push(n);
        if (n >= 2) free_qps_.push_back(n);  // QPN 0 and 1 are IB's special QPs
    }
    cm_ = std::make_unique<cm::ConnectionManager>(*this);
    // SOFTNDK_SEED and SOFTNDK_FAULTS are read before the port goes up, so no packet
    // passes unfaulted; a bad value throws like a bad SOFTNDK_CONFIG.
    faults_ = std::make_unique<FaultInjector>(*this, FaultInjector::seed_from_environment());
    faults_->load_environment();
    vport_ = fabric_->attach(this, config_.addresses);
    if (vport_ == 0)
        throw std::runtime_error("adapter " + config_.alias + ": address already in use");
    progress_ = sim::Thread(config_.alias + " timers", [this] { progress_loop(); });
    logger(Component::kDevice)
        .info("{}: if_index {} up, profile {}, vport {}", config_.alias, config_.if_index,
              config_.profile.name, vport_);
    tracing::device_started(*this);
}

Device::~Device() {
    std::vector<std::shared_ptr<Context>> all;
    {
        std::shared_lock lock(objects_mutex_);
        for (auto &[id, c] : contexts_)
            all.push_back(c);
    }
    for (auto &c : all)
        destroy_context(*c);
    Fabric::drain();
    Fabric::forget_drain_memo(this);  // a device closed inside a drain of this thread
    {
        std::lock_guard lock(timer_mutex_);
        stopping_ = true;
    }
    timer_cv_.notify_all();
    progress_.join();
    fabric_->detach(vport_);
}

bool Device::owns_address(const wire::IpAddr &ip) const {
    for (const auto &a : config_.addresses) {
        if (a == ip) return true;
    }
    return false;
}

size_t Device::context_count() const {
    std::shared_lock lock(objects_mutex_);
    return contexts_.size();
}

std::shared_ptr<Device::Context> Device::find_context(uint32_t id) const {
    std::shared_lock lock(objects_mutex_);
    auto it = contexts_.find(id);
    return it == contexts_.end() ? nullptr : it->second;
}

std::shared_ptr<LamSpace> Device::lam_space(uint32_t context) const {
    auto c = find_context(context);
    return c ? c->lam : nullptr;
}

std::shared_ptr<Qp> Device::find_qp(uint32_t number) const {
    if (number >= kMaxQueues) return nullptr;
    std::shared_lock lock(objects_mutex_);
    return qps_[number];
}

Qp *Device::find_qp_for_delivery(uint32_t number, std::shared_ptr<Qp> &hold) const {
    std::shared_ptr<void> *memo = Fabric::drain_memo(this, number);
    if (memo != nullptr && *memo) return static_cast<Qp *>(memo->get());
    hold = find_qp(number);
    if (memo != nullptr && hold) {
        // Moved, not copied: the count is the QP's to share with every thread that
        // delivers to it, and one more increment and decrement on it per lookup cost a
        // two-thread ping-pong more than the lookups saved.
        *memo = std::move(hold);
        return static_cast<Qp *>(memo->get());
    }
    return hold.get();
}

std::shared_ptr<Qp> Device::find_qp(uint32_t context, uint32_t number) const {
    auto qp = find_qp(number);
    return qp && qp->context == context ? qp : nullptr;
}

void Device::count_qp_in_error(uint32_t context) {
    auto c = find_context(context);
    if (c && c->page != nullptr)
        std::atomic_ref<uint32_t>(c->page->qps_in_error).fetch_add(1, std::memory_order_release);
}

bool Device::same_consumer_locked(uint32_t context_a, uint32_t context_b) const {
    if (context_a == context_b) return true;
    const auto a = contexts_.find(context_a);
    const auto b = contexts_.find(context_b);
    return a != contexts_.end() && b != contexts_.end() && a->second->process_id != 0 &&
           a->second->process_id == b->second->process_id;
}

bool Device::same_consumer(uint32_t context_a, uint32_t context_b) const {
    std::shared_lock lock(objects_mutex_);
    return same_consumer_locked(context_a, context_b);
}

std::shared_ptr<Qp> Device::find_consumer_qp(uint32_t context, uint32_t number) const {
    auto qp = find_qp(number);
    return qp && same_consumer(qp->context, context) ? qp : nullptr;
}

uint32_t Device::next_start_psn(uint32_t qp_number) {
    if (transport().initial_psn) return *transport().initial_psn & wire::kPsnMask;
    const uint32_t s = psn_seed_.fetch_add(0x9e3779b9u, std::memory_order_relaxed);
    return ((s ^ (qp_number * 0x85ebca6bu)) * 0xc2b2ae35u >> 8) & wire::kPsnMask;
}

void Device::address(const Qp &qp, wire::PacketDescriptor &d) const {
    d.bth.dest_qp = qp.path.remote_qpn;
    d.meta.src_vport = vport_;
    d.meta.src_ip = qp.path.local_ip;
    d.meta.dst_ip = qp.path.remote_ip;
    d.meta.udp_src_port = qp.path.udp_source_port;
}

void Device::transmit(Qp &qp, Packet &&packet, uint64_t ready_ns) {
    auto &d = packet.desc;
    address(qp, d);
    const uint64_t bytes = d.info().header_len + d.payload.size() + d.pad_bytes() + wire::kIcrcSize;
    const bool loopback = owns_address(qp.path.remote_ip);
    qp.tx_ns = std::max(qp.tx_ns, timing_.transmit(ready_ns, bytes, loopback));
    packet.time_ns = qp.tx_ns;
    clock_.observe(packet.time_ns);
    counters_.add(Counter::sent_pkts);
    send_timed(qp, std::move(packet));
}

bool Device::coalescing() const {
    return time_mode() == hw::TimeMode::kFunctional && !softndk::trace::on() && !faults_->active();
}

void Device::transmit_run(Qp &qp, Packet &&run) {
    auto &d = run.desc;
    address(qp, d);
    const bool loopback = owns_address(qp.path.remote_ip);
    const auto n = static_cast<uint32_t>(run.run.size());
    {
        time::TimingModel::Batch model(timing_);
        for (uint32_t k = 0; k < n; ++k) {
            // What transmit() would have priced for packet k: its headers, payload and pad.
            const wire::Opcode op = k == 0       ? d.bth.opcode
                                    : k + 1 == n ? run.run_last_opcode
                                                 : wire::middle_opcode(d.bth.opcode);
            const uint64_t offset = std::min<uint64_t>(uint64_t{k} * run.run_mtu, d.payload.size());
            const uint64_t payload = std::min<uint64_t>(run.run_mtu, d.payload.size() - offset);
            const uint64_t bytes = wire::opcode_info(op).header_len + payload +
                                   ((0u - payload) & 3u) + wire::kIcrcSize;
            qp.tx_ns = std::max(qp.tx_ns, model.transmit(run.run[k].time_ns, bytes, loopback));
            run.run[k].time_ns = qp.tx_ns;
        }
    }
    run.time_ns = qp.tx_ns;
    clock_.observe(run.time_ns);
    counters_.add(Counter::sent_pkts, n);
    if (coalescing()) {
        logger(Component::kRc)
            .trace("qp#{} -> qp#{} {} packets from {} psn {:#x} len {}", qp.number, d.bth.dest_qp,
                   n, wire::to_string(d.bth.opcode), d.bth.psn, d.payload.size());
        return fabric_->send(std::move(run));
    }
    // A trace or a fault came up since the run was built: they see its packets.
    for (Packet &one : split_run(std::move(run)))
        send_timed(qp, std::move(one));
}

void Device::send_timed(Qp &qp, Packet &&packet) {
    const auto &d = packet.desc;
    tracing::packet_tx(*this, qp.number, packet, packet.time_ns);
    // Checked here, not inside spdlog: its trace() is an out-of-line call per packet.
    if (auto &log = logger(Component::kRc); log.should_log(spdlog::level::trace))
        log.trace("qp#{} -> qp#{} {} psn {:#x} len {}", qp.number, d.bth.dest_qp,
                  wire::to_string(d.bth.opcode), d.bth.psn, d.payload.size());
    faults_->transmit(qp.number, qp.context, std::move(packet),
                      [this](Packet &&p) { fabric_->send(std::move(p)); });
}

uint64_t Device::push_cqe(Cq &cq, const hw::Cqe &cqe, hw::CqeOpcode opcode, uint64_t ready_ns) {
    const uint64_t t = timing_.dma_write(ready_ns, hw::kCqeBytes);
    clock_.observe(t);
    tracing::cqe(*this, cq, cqe, opcode, ready_ns, t);
    if (cq.push(cqe, opcode, t) == Cq::Push::kOverflow) {
        Fabric::defer([this, n = cq.number()] { fail_cq_qps(n); });
    }
    return t;
}

void Device::fail_cq_qps(uint32_t cq) {
    std::vector<std::shared_ptr<Qp>> victims;
    {
        std::shared_lock lock(objects_mutex_);
        for (const auto &qp : qps_) {
            if (!qp) continue;
            const bool uses = (qp->send_cq && qp->send_cq->number() == cq) ||
                              (qp->recv_cq && qp->recv_cq->number() == cq);
            if (uses) victims.push_back(qp);
        }
    }
    for (auto &qp : victims) {
        std::lock_guard lock(qp->mutex);
        if (!qp->destroyed) rc::enter_error(*qp, "its CQ overflowed");
    }
}

void Device::post_event(uint32_t context, hw::Eqe eqe) {
    auto c = find_context(context);
    if (!c) return;
    // Dated by what raised it (a CQ notification: its CQE), else by the device's latest time.
    const uint64_t raised = eqe.event_time_ns != 0 ? eqe.event_time_ns : clock_.now();
    eqe.event_time_ns = timing_.dma_write(raised, hw::kEqeBytes);
    clock_.observe(eqe.event_time_ns);
    tracing::eqe(*this, context, eqe);
    c->eq->post(eqe);
}

void Device::schedule(SteadyTime when, std::function<void()> fn) {
    bool earliest = false;
    {
        std::lock_guard lock(timer_mutex_);
        if (stopping_) return;
        earliest = timers_.empty() || when < timers_.begin()->first;
        timers_.emplace(when, std::move(fn));
    }
    if (earliest) timer_cv_.notify_one();
}

SteadyTime Device::wall_deadline(uint64_t now_ns, uint64_t deadline_ns) const {
    // Paced: model time is CLOCK_MONOTONIC, steady_clock's. Simulated: it is simulated
    // time, which sim::steady_now() reads.
    if (time_mode() != hw::TimeMode::kFunctional)
        return SteadyTime(std::chrono::nanoseconds(deadline_ns));
    const uint64_t span = deadline_ns > now_ns ? deadline_ns - now_ns : 0;
    // A span of many clock ticks (the ACK timeout, 67 ms by default, armed again for
    // nearly every message) reads the coarse clock: a precise read costs ~20 ns on the
    // data path. The coarse clock lags the precise one by up to a tick, and by up to ~1.7
    // ticks just after an idle spell (measured with a 4 ms tick), so the deadline gets two
    // ticks more: at most 2/16 of the span late, and early only if the clock lagged by
    // more than two ticks. An ACK timeout a few ms early on 67 ms changes nothing a
    // consumer can tell; what the timer does is dated by model time either way.
    constexpr uint64_t kTicksForCoarse = 16;
    const uint64_t tick = coarse_monotonic_resolution_ns();
    if (!sim::enabled() && span >= kTicksForCoarse * tick)
        return SteadyTime(std::chrono::nanoseconds(coarse_monotonic_ns() + 2 * tick + span));
    return sim::steady_now() + std::chrono::nanoseconds(span);
}

void Device::pace(uint64_t t) {
    if (time_mode() != hw::TimeMode::kPaced) return;
    counters_.add(Counter::paced_placements);
    const uint64_t now = monotonic_ns();
    if (now > t) {
        counters_.add(Counter::paced_late);
        counters_.add(Counter::paced_late_ns, now - t);
        return;
    }
    wait_until_monotonic(t);
}

void Device::progress_loop() {
    std::unique_lock lock(timer_mutex_);
    while (!stopping_) {
        if (timers_.empty()) {
            timer_cv_.wait(lock);
            continue;
        }
        auto it = timers_.begin();
        if (it->first > sim::steady_now()) {
            timer_cv_.wait_until(lock, it->first);
            continue;
        }
        auto fn = std::move(it->second);
        timers_.erase(it);
        lock.unlock();
        fn();
        Fabric::drain();
        lock.lock();
    }
}

void Device::receive(Packet &packet) {
    if (packet.is_run()) {
        // A run is built without faults or corruption (Packet::run); if a fault or a trace
        // came up since the fabric checked accepts_runs(), they see its packets.
        if (coalescing()) return deliver_run_to_qp(packet);
        for (Packet &one : split_run(std::move(packet)))
            receive(one);
        return;
    }
    timing_.prefetch_receive(packet.desc.bth.dest_qp);
    // The ICRC check and the receive-side faults come first, as the port's would.
    faults_->receive(packet, [this](Packet &p) { deliver_to_qp(p); });
}

void Device::deliver_run_to_qp(Packet &run) {
    // deliver_to_qp() for each packet of the run in turn, under one lookup and one hold
    // of the QP lock, with the payload copies deferred to one per contiguous range.
    const auto n = static_cast<uint32_t>(run.run.size());
    std::shared_ptr<Qp> hold;
    Qp *qp = find_qp_for_delivery(run.desc.bth.dest_qp, hold);
    if (!qp) {
        time::TimingModel::Batch model(timing_);
        for (uint32_t k = 0; k < n; ++k)
            clock_.observe(model.receive(run.run[k].time_ns));
        counters_.add(Counter::rcvd_pkts, n);
        counters_.add(Counter::dropped_pkts, n);
        return;
    }
    // Every packet's way through the RX pipeline, priced up front under one hold of the
    // model's lock: the pipeline is booked by nothing else the engine does here, so the
    // bookings are the ones packet-by-packet delivery would make.
    uint64_t last_arrival = 0;
    {
        time::TimingModel::Batch model(timing_);
        for (uint32_t k = 0; k < n; ++k) {
            run.run[k].time_ns = model.receive(run.run[k].time_ns);
            last_arrival = std::max(last_arrival, run.run[k].time_ns);
        }
    }
    // The device clock sees the whole run at once: one compare-and-swap, not one per
    // packet. Nothing the packets cause is dated by it (a responder's events carry their
    // QP's time, responder.cpp), so this changes no model time; only the bound on a
    // doorbell stamped a second ahead of the device (requester.cpp, doorbell_posted)
    // can move, by the run's span.
    clock_.observe(last_arrival);
    const bool request = run.desc.info().is_request;
    // The packet counters are added once for the run (an atomic add per packet was a
    // locked instruction per packet on the data path); nothing reads them mid-run.
    counters_.add(Counter::rcvd_pkts, n);
    uint32_t dropped = 0;
    std::lock_guard lock(qp->mutex);
    qp->placement.begin();
    rc::begin_run(*qp);
    for (uint32_t k = 0; k < n; ++k) {
        const uint64_t arrived = run.run[k].time_ns;
        const bool accepting = !qp->destroyed &&
                               (qp->state == QpState::kRtr || qp->state == QpState::kRts) &&
                               run.desc.meta.src_ip == qp->path.remote_ip;
        if (!accepting) {
            ++dropped;
            continue;
        }
        qp->now_ns = arrived;
        const wire::PacketDescriptor one = run.run_packet(k);
        if (request) {
            rc::responder_receive(*qp, one);
        } else {
            rc::completer_receive(*qp, one);
        }
    }
    rc::end_run(*qp);
    qp->placement.end();
    if (dropped != 0) counters_.add(Counter::dropped_pkts, dropped);
}

void Device::deliver_to_qp(Packet &packet) {
    counters_.add(Counter::rcvd_pkts);
    std::shared_ptr<Qp> hold;
    Qp *qp = find_qp_for_delivery(packet.desc.bth.dest_qp, hold);
    std::unique_lock<AdaptiveMutex> lock;
    bool accepting = false;
    if (qp) {
        lock = std::unique_lock(qp->mutex);
        accepting = !qp->destroyed && (qp->state == QpState::kRtr || qp->state == QpState::kRts) &&
                    packet.desc.meta.src_ip == qp->path.remote_ip;
    }
    // Out of the RX pipeline; for a packet its QP takes, on into the QP's receive unit in
    // the same step (the completer's unit works only in RTS, completer_receive()).
    const bool request = packet.desc.info().is_request;
    const bool to_unit = accepting && (request || qp->state == QpState::kRts);
    time::TimingModel::Received at{};
    if (to_unit) {
        at = timing_.receive_into_unit(
            qp->number, packet.time_ns, cost().pu_packet_ns,
            request ? rc::responder_lookup(*qp, packet.desc) : time::CacheLookup{});
    } else {
        at.arrived = timing_.receive(packet.time_ns);
    }
    clock_.observe(at.arrived);
    tracing::packet_rx(*this, packet, at.arrived);
    if (!accepting) {
        tracing::packet_drop(*this, packet, at.arrived);
        counters_.add(Counter::dropped_pkts);
        return;
    }
    qp->now_ns = to_unit ? at.processed : at.arrived;
    if (request) {
        rc::responder_receive(*qp, packet.desc, to_unit);
    } else {
        rc::completer_receive(*qp, packet.desc, to_unit);
    }
}

void Device::receive_cm(const cm::Message &message) {
    if (!faults_->cm_passes(message.source_ip)) return;
    clock_.observe(message.time_ns);
    tracing::cm_message(*this, message, true);
    cm_->receive(message);
}

}  // namespace softndk::emu
