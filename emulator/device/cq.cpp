#include "device/cq.hpp"

#include <atomic>
#include <stdexcept>

#include "device/log.hpp"
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
        logger(Component::kDevice)
            .warn("eq: full, event type {:#x} object {} lost", eqe.type, eqe.object);
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
       std::shared_ptr<Eq> eq, Counters &counters)
    : number_(number),
      context_(context),
      memory_(std::move(memory)),
      layout_(layout_for(entries)),
      ring_(attach_or_die<softndk::CompletionQueue>(*memory_, layout_)),
      doorbell_(reinterpret_cast<hw::CqDoorbell *>(memory_->data())),
      eq_(std::move(eq)),
      counters_(counters) {}

Cq::Push Cq::push(hw::Cqe cqe, hw::CqeOpcode opcode, uint64_t now_ns) {
    std::lock_guard lock(mutex_);
    if (dead_) return Push::kDead;
    cqe.completion_time_ns = now_ns;
    cqe.op_own = static_cast<uint8_t>(static_cast<uint8_t>(opcode) << 4);
    if (!ring_.try_push(cqe)) {
        dead_ = true;
        counters_.add(Counter::cq_overflows);
        logger(Component::kDevice).warn("cq#{}: overflow, CQ and its QPs go to error", number_);
        hw::Eqe e{};
        e.event_time_ns = now_ns;
        e.object = number_;
        e.status = status::kBufferOverflow;
        e.type = static_cast<uint8_t>(hw::EqeType::kCqError);
        eq_->post(e);
        return Push::kOverflow;
    }
    counters_.add(Counter::cqes);
    const bool error = cqe.syndrome != hw::Syndrome::kSuccess;
    const bool solicited = error || (cqe.flags & hw::kCqeSolicited) != 0;
    any_since_notify_ = true;
    solicited_since_notify_ = solicited_since_notify_ || solicited;
    if (armed_ &&
        (arm_type_ == hw::ArmType::kAny || (arm_type_ == hw::ArmType::kSolicited && solicited))) {
        notify_locked(now_ns);
    }
    return Push::kOk;
}

void Cq::arm_doorbell(uint64_t now_ns) {
    std::lock_guard lock(mutex_);
    if (dead_) return;
    const uint32_t seq =
        std::atomic_ref(doorbell_->arm_sequence.value).load(std::memory_order_acquire);
    if (seq == arm_sequence_seen_) return;  // spurious bit
    arm_sequence_seen_ = seq;
    const uint32_t raw = std::atomic_ref(doorbell_->arm_type.value).load(std::memory_order_relaxed);
    if (raw > static_cast<uint32_t>(hw::ArmType::kSolicited)) {
        logger(Component::kDevice).debug("cq#{}: arm with bad type {} ignored", number_, raw);
        return;
    }
    const auto type = static_cast<hw::ArmType>(raw);
    arm_type_ = armed_ ? kMerge[static_cast<int>(arm_type_)][raw] : type;
    armed_ = true;
    // Fire at once if a satisfying entry arrived since the last notification and
    // the provider has not consumed everything (hw_interface.hpp: consumer is a hint).
    const bool satisfied = arm_type_ == hw::ArmType::kAny         ? any_since_notify_
                           : arm_type_ == hw::ArmType::kSolicited ? solicited_since_notify_
                                                                  : false;
    if (satisfied && ring_.free_entries() != ring_.entries()) notify_locked(now_ns);
}

void Cq::notify_locked(uint64_t now_ns) {
    armed_ = false;
    any_since_notify_ = false;
    solicited_since_notify_ = false;
    hw::Eqe e{};
    e.event_time_ns = now_ns;
    e.object = number_;
    e.type = static_cast<uint8_t>(hw::EqeType::kCompletion);
    eq_->post(e);
}

}  // namespace softndk::emu
