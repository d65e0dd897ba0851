#include "device/cq.hpp"

#include <atomic>
#include <bit>
#include <chrono>
#include <stdexcept>

#include "device/device.hpp"
#include "device/log.hpp"
#include "device/log_limit.hpp"
#include "device/status.hpp"

namespace softndk::emu {
namespace {

constexpr uint32_t kDoorbellArea = hw::kPageBytes;  // doorbell record alone on the first page

template <class Q>
Ring<Q, RingSide::kProducer> attach_or_die(QueueMemory &m, const hw::QueueLayout &l) {
    auto r = Ring<Q, RingSide::kProducer>::attach(m.data(), l);
    if (!r) throw std::logic_error("device built an invalid queue layout");
    return *r;
}

// Arm merging table, [current][new] (ndkpi-api §7.3).
constexpr hw::ArmType kMerge[3][3] = {
    /* ERRORS    */ {hw::ArmType::kErrors, hw::ArmType::kAny, hw::ArmType::kSolicited},
    /* ANY       */ {hw::ArmType::kAny, hw::ArmType::kAny, hw::ArmType::kAny},
    /* SOLICITED */ {hw::ArmType::kSolicited, hw::ArmType::kAny, hw::ArmType::kSolicited},
};

}  // namespace

hw::QueueLayout Eq::layout_for(uint32_t entries) {
    return hw::QueueLayout{kDoorbellArea + uint64_t{entries} * hw::kEqeBytes, 0, kDoorbellArea,
                           entries, hw::kEqeBytes};
}

Eq::Eq(std::unique_ptr<QueueMemory> memory, hw::CacheLineU32 &host_sleeping, Counters &counters)
    : memory_(std::move(memory)),
      layout_(layout_for(kEntries)),
      ring_(attach_or_die<softndk::EventQueue>(*memory_, layout_)),
      waker_(host_sleeping),
      counters_(counters) {}

bool Eq::post(const hw::Eqe &eqe) {
    std::lock_guard lock(mutex_);
    if (!ring_.try_push(eqe)) {
        counters_.add(Counter::eq_overflows);
        static LogLimit limit;  // a consumer that never reads its EQ must not flood the log
        log_limited(logger(Component::kDevice), limit, spdlog::level::warn,
                    "eq: full, event type {:#x} object {} lost", eqe.type, eqe.object);
        return false;
    }
    counters_.add(Counter::eqes);
    waker_.notify();
    return true;
}

hw::QueueLayout Cq::layout_for(uint32_t entries) {
    return hw::QueueLayout{kDoorbellArea + uint64_t{entries} * hw::kCqeBytes, 0, kDoorbellArea,
                           entries, hw::kCqeBytes};
}

Cq::Cq(uint32_t number, uint32_t context, std::unique_ptr<QueueMemory> memory, uint32_t entries,
       std::shared_ptr<Eq> eq, Counters &counters, Device &device)
    : number_(number),
      context_(context),
      memory_(std::move(memory)),
      layout_(layout_for(entries)),
      ring_(attach_or_die<softndk::CompletionQueue>(*memory_, layout_)),
      doorbell_(reinterpret_cast<hw::CqDoorbell *>(memory_->data())),
      eq_(std::move(eq)),
      counters_(counters),
      device_(device) {}

void Cq::die_overflowed_locked(uint64_t now_ns) {
    dead_ = true;
    ++timer_generation_;  // a pending moderation timer must not fire on a dead CQ
    counters_.add(Counter::cq_overflows);
    static LogLimit limit;
    log_limited(logger(Component::kDevice), limit, spdlog::level::warn,
                "cq#{}: overflow, CQ and its QPs go to error", number_);
    hw::Eqe e{};
    e.event_time_ns = now_ns;
    e.object = number_;
    e.status = status::kBufferOverflow;
    e.type = static_cast<uint8_t>(hw::EqeType::kCqError);
    eq_->post(e);
}

bool Cq::overrun(uint64_t now_ns) {
    std::lock_guard lock(mutex_);
    if (dead_) return false;
    die_overflowed_locked(now_ns);
    return true;
}

Cq::Push Cq::push(hw::Cqe cqe, hw::CqeOpcode opcode, uint64_t now_ns) {
    std::lock_guard lock(mutex_);
    if (dead_) return Push::kDead;
    cqe.completion_time_ns = now_ns;
    last_push_ns_ = std::max(last_push_ns_, now_ns);
    cqe.op_own = static_cast<uint8_t>(static_cast<uint8_t>(opcode) << 4);
    if (!ring_.try_push(cqe)) {
        die_overflowed_locked(now_ns);
        return Push::kOverflow;
    }
    counters_.add(Counter::cqes);
    const bool error = cqe.syndrome != hw::Syndrome::kSuccess;
    const bool solicited = error || (cqe.flags & hw::kCqeSolicited) != 0;
    any_since_notify_ = true;
    solicited_since_notify_ = solicited_since_notify_ || solicited;
    if (!armed_) return Push::kOk;
    if (arm_type_ == hw::ArmType::kAny) {
        ++moderated_cqes_;
        const bool count_reached = mod_count_ != 0 && moderated_cqes_ >= mod_count_;
        const bool unmoderated = mod_count_ == 0 && mod_interval_us_ == 0;
        if (error || count_reached || unmoderated) {
            notify_locked(now_ns);
        } else if (mod_interval_us_ != 0 && !timer_pending_) {
            start_timer_locked(now_ns);  // first CQE of this arm starts the interval
        }
    } else if (arm_type_ == hw::ArmType::kSolicited && solicited) {
        notify_locked(now_ns);
    }
    return Push::kOk;
}

Cq::Snapshot Cq::snapshot() {
    std::lock_guard lock(mutex_);
    Snapshot s;
    s.entries = layout_.entries;
    s.queued = ring_.producer() - fetch_consumed_entries(doorbell_->consumer);
    s.armed = armed_;
    s.dead = dead_;
    s.arm_type = arm_type_;
    return s;
}

void Cq::arm_doorbell(uint64_t now_ns) {
    std::lock_guard lock(mutex_);
    arm_locked(now_ns);
}

void Cq::arm_locked(uint64_t now_ns) {
    if (dead_) return;
    const uint32_t seq =
        std::atomic_ref(doorbell_->arm_sequence.value).load(std::memory_order_acquire);
    if (seq == arm_sequence_seen_) return;  // spurious bit
    arm_sequence_seen_ = seq;
    const uint32_t raw = std::atomic_ref(doorbell_->arm_type.value).load(std::memory_order_relaxed);
    const bool pending_are_new = (raw & hw::kArmPendingAreNew) != 0;
    const uint32_t kind = raw & ~hw::kArmPendingAreNew;
    if (kind > static_cast<uint32_t>(hw::ArmType::kSolicited)) {
        logger(Component::kDevice).debug("cq#{}: arm with bad type {} ignored", number_, raw);
        return;
    }
    const auto type = static_cast<hw::ArmType>(kind);
    arm_type_ = armed_ ? kMerge[static_cast<int>(arm_type_)][kind] : type;
    armed_ = true;
    // Fire at once if a satisfying entry arrived since the last notification and
    // the provider has not consumed everything (hw_interface.hpp: consumer is a hint).
    // Moderation does not delay this: ndkpi-api §7.3 requires the immediate fire.
    // Entries the provider held back (kArmPendingAreNew) count as arrivals, dated by
    // the latest CQE.
    const bool pending = ring_.free_entries() != ring_.entries();
    if (pending_are_new && pending && arm_type_ != hw::ArmType::kErrors) {
        notify_locked(std::max(now_ns, last_push_ns_));
        return;
    }
    const bool satisfied = arm_type_ == hw::ArmType::kAny         ? any_since_notify_
                           : arm_type_ == hw::ArmType::kSolicited ? solicited_since_notify_
                                                                  : false;
    if (satisfied && pending) notify_locked(now_ns);
}

void Cq::notify_locked(uint64_t now_ns) {
    armed_ = false;
    any_since_notify_ = false;
    solicited_since_notify_ = false;
    moderated_cqes_ = 0;
    timer_pending_ = false;
    ++timer_generation_;  // the timer of this arm, if any, is void
    hw::Eqe e{};
    e.event_time_ns = now_ns;
    e.object = number_;
    e.type = static_cast<uint8_t>(hw::EqeType::kCompletion);
    eq_->post(e);
}

void Cq::start_timer_locked(uint64_t now_ns) {
    timer_pending_ = true;
    const uint64_t generation = timer_generation_;
    timer_deadline_ns_ = now_ns + uint64_t{mod_interval_us_} * 1000;
    // A weak reference: the CQ may be destroyed before the timer runs.
    device_.schedule(device_.wall_deadline(now_ns, timer_deadline_ns_),
                     [weak = weak_from_this(), generation] {
                         if (auto cq = weak.lock()) cq->timer_fired(generation);
                     });
}

void Cq::timer_fired(uint64_t generation) {
    std::lock_guard lock(mutex_);
    if (dead_ || !armed_ || generation != timer_generation_) return;
    notify_locked(timer_deadline_ns_);
}

void Cq::moderate(uint32_t count, uint32_t interval_us, uint64_t now_ns) {
    std::lock_guard lock(mutex_);
    mod_count_ = count;
    mod_interval_us_ = interval_us;
    // A timer started under the old setting no longer applies; the CQEs already
    // counted for the current arm are judged by the new one.
    ++timer_generation_;
    timer_pending_ = false;
    if (dead_ || !armed_ || moderated_cqes_ == 0) return;
    if ((count == 0 && interval_us == 0) || (count != 0 && moderated_cqes_ >= count)) {
        notify_locked(now_ns);
    } else if (interval_us != 0) {
        start_timer_locked(now_ns);
    }
}

int32_t Cq::resize(std::unique_ptr<QueueMemory> memory, uint32_t entries, uint32_t depth,
                   uint64_t now_ns, hw::MemoryHandle &handle, hw::QueueLayout &layout) {
    std::lock_guard lock(mutex_);
    if (dead_) return status::kInvalidDeviceState;
    // 1. An arm the provider published in the old record before the resize.
    arm_locked(now_ns);
    // 2. What is queued. The consumer count is the provider's; a value that is ahead of
    //    the producer or further behind than the ring holds cannot be right.
    const uint32_t producer = ring_.producer();
    const uint32_t consumer = fetch_consumed_entries(doorbell_->consumer);
    const uint32_t queued = producer - consumer;
    if (queued > layout_.entries) {
        static LogLimit limit;
        log_limited(logger(Component::kDevice), limit, spdlog::level::warn,
                    "cq#{}: resize with a bad consumer count {} (producer {})", number_, consumer,
                    producer);
        return status::kInvalidParameter;
    }
    // 3. No CQE may be lost (NDSPI: shrinking below the queued entries fails).
    if (depth < queued) return status::kBufferOverflow;
    // 4. The new ring, at the same free-running counts.
    const hw::QueueLayout new_layout = layout_for(entries);
    if (memory == nullptr || memory->size() < new_layout.bytes) return status::kInternalError;
    const auto log2_entries = static_cast<uint32_t>(std::countr_zero(entries));
    std::byte *new_slots = memory->data() + new_layout.ring_offset;
    for (uint32_t k = consumer; k != consumer + entries; ++k) {
        // Stale for the pass the consumer reaches this slot on: the owner bit it does
        // NOT expect. Zero-filled memory is only stale for even passes.
        auto &cqe =
            *reinterpret_cast<hw::Cqe *>(new_slots + uint64_t{k & (entries - 1)} * hw::kCqeBytes);
        cqe.op_own = static_cast<uint8_t>(static_cast<uint8_t>(hw::CqeOpcode::kInvalid) << 4 |
                                          (hw::expected_owner(k, log2_entries) ^ 1));
    }
    auto *new_doorbell = reinterpret_cast<hw::CqDoorbell *>(memory->data());
    new_doorbell->consumer.value = consumer;
    new_doorbell->arm_type.value =
        std::atomic_ref(doorbell_->arm_type.value).load(std::memory_order_relaxed);
    new_doorbell->arm_sequence.value = arm_sequence_seen_;
    auto new_ring = CqProducer::attach(memory->data(), new_layout, consumer);
    if (!new_ring) return status::kInternalError;
    const std::byte *old_slots = memory_->data() + layout_.ring_offset;
    for (uint32_t k = consumer; k != producer; ++k) {
        hw::Cqe cqe;
        copy_shared(&cqe, old_slots + uint64_t{k & (layout_.entries - 1)} * hw::kCqeBytes,
                    sizeof(cqe));
        if (!new_ring->try_push(cqe))
            return status::kInternalError;  // cannot happen: queued <= depth
    }
    // 5. Switch; the old allocation goes when `memory` (now the old one) does.
    std::swap(memory_, memory);
    layout_ = new_layout;
    ring_ = *new_ring;
    doorbell_ = new_doorbell;
    handle = memory_->handle();
    layout = layout_;
    logger(Component::kDevice)
        .debug("cq#{}: resized to {} entries, {} CQEs carried over", number_, entries, queued);
    return status::kSuccess;
}

}  // namespace softndk::emu
