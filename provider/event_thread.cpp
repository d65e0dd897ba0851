// The adapter's event thread: reads the context's event queue and runs the
// deferred work (consumer callbacks and finalizations). See provider.hpp.
#include "provider.hpp"

namespace softndk::provider {

void Adapter::defer(std::function<void()> work) {
    {
        std::lock_guard lock(work_mutex_);
        work_.push_back(std::move(work));
    }
    work_pending_.store(true, std::memory_order_release);
    wake_event_thread();
}

void Adapter::wake_event_thread() {
    if (control_ != nullptr && claim_sleeper(control_->wake.host_sleeping))
        futex_wake(control_->wake.host_sleeping.value);
}

bool Adapter::run_work() {
    std::deque<std::function<void()>> batch;
    {
        std::lock_guard lock(work_mutex_);
        work_pending_.store(false, std::memory_order_relaxed);
        batch.swap(work_);
    }
    for (auto &w : batch)
        w();
    return !batch.empty();
}

bool Adapter::poll_events() {
    int n = 0;
    for (; n < 64; ++n) {
        hw::Eqe eqe;
        if (peeked_) {
            eqe = *peeked_;
            peeked_.reset();
        } else if (!eq_->take(eqe)) {
            break;
        }
        dispatch(eqe);
    }
    if (n != 0) eq_->publish_consumer();
    return n != 0;
}

void Adapter::event_loop() {
    Sleeper sleeper(control_->wake.host_sleeping);
    auto has_work = [this] {
        if (stop_.load(std::memory_order_acquire) ||
            work_pending_.load(std::memory_order_acquire) ||
            removal_pending_.load(std::memory_order_acquire))
            return true;
        if (!peeked_) {
            hw::Eqe eqe;
            if (eq_->take(eqe)) peeked_ = eqe;
        }
        return peeked_.has_value();
    };
    for (;;) {
        bool did = false;
        if (removal_pending_.exchange(false, std::memory_order_acq_rel)) {
            device_removed();
            did = true;
        }
        did = run_work() || did;
        did = poll_events() || did;
        if (stop_.load(std::memory_order_acquire)) {
            if (!did) break;
            continue;
        }
        // The 200 ms bound guards against a lost wake-up across processes; simulated time
        // has none (and a periodic wake-up would keep simulated time running for ever).
        if (!did)
            sleeper.wait(has_work, sim::enabled() ? kWaitForever : std::chrono::milliseconds(200));
    }
}

void Adapter::device_removed() {
    log().error(
        "{}: the device is gone (the SoftNDK daemon died or closed the session): pending "
        "requests complete STATUS_CANCELLED, armed CQs are notified, connections are "
        "disconnected, later calls fail STATUS_DEVICE_REMOVED",
        name());
    std::vector<Connector *> connectors;
    std::vector<Cq *> cq_list;
    {
        std::lock_guard lock(route_mutex);
        for (auto &[id, c] : connections) {
            if (c->closing()) continue;
            c->hold();
            connectors.push_back(c);
        }
        for (auto &[id, cq] : cqs) {
            if (cq->closing()) continue;
            cq->hold();
            cq_list.push_back(cq);
        }
    }
    // Connections first: a consumer that learns of the disconnect and then polls its
    // CQ finds every flushed request there.
    for (Connector *c : connectors) {
        c->device_removed();
        c->release();
    }
    for (Cq *cq : cq_list) {
        cq->notify_removed();
        cq->release();
    }
}

void Adapter::dispatch(const hw::Eqe &eqe) {
    const auto type = static_cast<hw::EqeType>(eqe.type);
    // Paced mode: no callback before the event's model time. Every callback is one the
    // consumer sees, so whatever it posts next is dated after it.
    clock_->wait_until(eqe.event_time_ns);
    clock_->observe(eqe.event_time_ns);
    sim::yield("NDK callback");  // a control transfer point in simulated time (sim.hpp)
    log().trace("{}: EQE type {:#x} object {} status {:#x}", name(), eqe.type, eqe.object,
                static_cast<uint32_t>(eqe.status));
    switch (type) {
        case hw::EqeType::kCompletion:
        case hw::EqeType::kCqError:
            if (Cq *cq = find_hold(cqs, eqe.object)) {
                cq->notify(type == hw::EqeType::kCompletion ? STATUS_SUCCESS : eqe.status);
                cq->release();
            }
            return;
        case hw::EqeType::kQpFatal: {
            // NDK has no QP event callback. The consumer learns of this through its
            // queues: everything pending or posted later completes STATUS_CANCELLED
            // with this cause as ProviderErrorCode (the device puts it on each
            // flushed CQE), and the peer's request that caused it fails.
            const auto cause = static_cast<hw::Syndrome>(eqe.data0);
            log().warn(
                "{}: qp#{} failed on an incoming request ({:#x}, {:#x} to the peer); "
                "its requests complete STATUS_CANCELLED with ProviderErrorCode {:#x}",
                name(), eqe.object, static_cast<unsigned>(cause),
                static_cast<uint32_t>(syndrome_status(cause)), static_cast<unsigned>(cause));
            return;
        }
        case hw::EqeType::kSrqLimit:
            if (Srq *srq = find_hold(srqs, eqe.object)) {
                srq->limit_reached();
                srq->release();
            }
            return;
        case hw::EqeType::kConnectRequest:
            if (Listener *l = find_hold(listeners, eqe.object)) {
                l->connect_request(static_cast<uint32_t>(eqe.data0));
                l->release();
            } else {
                // The listener is gone: refuse, as if nobody listened.
                hw::AcceptRequest reject{};
                reject.connection = static_cast<uint32_t>(eqe.data0);
                hw::ObjectResponse response{};
                execute(hw::CommandOpcode::kReject, reject, response);
            }
            return;
        case hw::EqeType::kConnectReply:
        case hw::EqeType::kEstablished:
        case hw::EqeType::kDisconnected:
        case hw::EqeType::kDisconnectDone:
        case hw::EqeType::kConnectAborted:
            if (Connector *c = find_hold(connections, eqe.object)) {
                c->on_event(eqe);
                c->release();
            } else {
                log().debug("{}: event {:#x} for unknown connection {}", name(), eqe.type,
                            eqe.object);
            }
            return;
    }
    log().warn("{}: unknown EQE type {:#x}", name(), eqe.type);
}

}  // namespace softndk::provider
