// cq.hpp - the completion and event queue writers.
//
// Locks: one mutex per CQ and one per EQ. The device-wide order is
//   QP -> SRQ -> CQ -> EQ
// (a QP engine holding its QP lock may push a CQE; pushing a CQE may post an
// EQE). Neither class ever takes a QP lock: work that needs one (moving the
// QPs of an overflowed CQ to error) is handed back to the caller.
//
// Ownership: the device allocates the ring memory and owns it through these
// objects; a QP keeps its CQs alive (shared_ptr) so that a packet racing with
// destroy never writes into freed memory.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "device/counters.hpp"
#include "device/queue_memory.hpp"
#include "softndk/hw_interface.hpp"
#include "softndk/ring.hpp"
#include "softndk/wake.hpp"

namespace softndk::emu {

// Per-context event queue. post() writes one EQE (owner bit last) and wakes the
// provider's event thread if it announced sleep (WakeWord::host_sleeping).
class Eq {
  public:
    static constexpr uint32_t kEntries = 4096;

    // `memory` holds the EqDoorbell at offset 0 and the ring at layout().ring_offset.
    Eq(std::unique_ptr<QueueMemory> memory, hw::CacheLineU32 &host_sleeping, Counters &counters);
    static hw::QueueLayout layout_for(uint32_t entries);

    // Returns false if the EQ was full: the event is lost and counted (eq_overflows).
    bool post(const hw::Eqe &eqe);

    const QueueMemory &memory() const { return *memory_; }
    const hw::QueueLayout &layout() const { return layout_; }

  private:
    std::mutex mutex_;
    std::unique_ptr<QueueMemory> memory_;
    hw::QueueLayout layout_;
    EqProducer ring_;
    Waker waker_;
    Counters &counters_;
};

// Arm rules (ndkpi-api §7.3; hw_interface.hpp §7 "Arming a CQ"):
//   - one kCompletion EQE per arm; the arm is cleared when it fires;
//   - arms seen before the previous one fired merge: anything + ANY = ANY,
//     ERRORS + SOLICITED = SOLICITED, ...;
//   - an arm fires at once if, since the last notification, an entry arrived
//     that would have satisfied it and the CQ is not known to be empty;
//   - ANY: any CQE; SOLICITED: a receive CQE with kCqeSolicited or any error
//     CQE; ERRORS: only a CQ error (overflow), which is reported with a
//     kCqError EQE whether or not the CQ is armed.
class Cq {
  public:
    enum class Push : uint8_t { kOk, kOverflow, kDead };

    Cq(uint32_t number, uint32_t context, std::unique_ptr<QueueMemory> memory, uint32_t entries,
       std::shared_ptr<Eq> eq, Counters &counters);
    static hw::QueueLayout layout_for(uint32_t entries);

    uint32_t number() const { return number_; }
    uint32_t context() const { return context_; }
    const QueueMemory &memory() const { return *memory_; }
    const hw::QueueLayout &layout() const { return layout_; }

    // Writes `cqe` (opcode/owner set from `opcode`). kOverflow: the ring was full;
    // the CQ is now dead, a kCqError EQE (STATUS_BUFFER_OVERFLOW) was posted and
    // the caller must move the CQ's QPs to error. kDead: dropped (CQ already dead).
    Push push(hw::Cqe cqe, hw::CqeOpcode opcode, uint64_t now_ns);

    // Doorbell service for the completion-queue bitmap: picks up a new arm.
    void arm_doorbell(uint64_t now_ns);

  private:
    void notify_locked(uint64_t now_ns);

    std::mutex mutex_;
    const uint32_t number_;
    const uint32_t context_;
    std::unique_ptr<QueueMemory> memory_;
    hw::QueueLayout layout_;
    CqProducer ring_;
    hw::CqDoorbell *doorbell_;
    std::shared_ptr<Eq> eq_;
    Counters &counters_;
    uint32_t arm_sequence_seen_ = 0;
    bool armed_ = false;
    hw::ArmType arm_type_ = hw::ArmType::kErrors;
    bool any_since_notify_ = false;
    bool solicited_since_notify_ = false;
    bool dead_ = false;
};

}  // namespace softndk::emu
