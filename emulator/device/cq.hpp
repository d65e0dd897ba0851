// cq.hpp - the completion and event queue writers.
//
// Locks: one mutex per CQ and one per EQ. The device-wide order is
//   QP -> SRQ -> CQ -> EQ
// (a QP engine holding its QP lock may push a CQE; pushing a CQE may post an
// EQE). A CQ schedules its moderation timer with its lock held: the device's
// timer mutex is a leaf (timers run with no lock held). Neither class ever takes a QP lock: work
// that needs one (moving the QPs of an overflowed CQ to error) is handed back to the caller.
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

class Device;

// Arm rules (ndkpi-api §7.3; hw_interface.hpp §7 "Arming a CQ"):
//   - one kCompletion EQE per arm; the arm is cleared when it fires;
//   - arms seen before the previous one fired merge: anything + ANY = ANY,
//     ERRORS + SOLICITED = SOLICITED, ...;
//   - an arm fires at once if, since the last notification, an entry arrived
//     that would have satisfied it and the CQ is not known to be empty;
//   - ANY: any CQE; SOLICITED: a receive CQE with kCqeSolicited or any error
//     CQE; ERRORS: only a CQ error (overflow), which is reported with a
//     kCqError EQE whether or not the CQ is armed.
//
// Moderation (kModerateCq, mlx5's cq_max_count / cq_period): it only delays the
// kCompletion EQE of an ANY arm for successful CQEs. Once armed, the CQ notifies
// when `count` such CQEs arrived since arming, or `interval_us` after the first
// of them, whichever comes first (a timer on the device's progress thread;
// count 0 = no count trigger, interval 0 = no timer; 0/0 or count 1 = a
// notification per CQE, the default). An error CQE, a SOLICITED arm and the
// immediate fire of an arm (rule 3 above, which §7.3 makes mandatory) are never
// delayed: the consumer asked to hear about those at once.
//
// Resize (kResizeCq, the mlx5 scheme with the copy done by the device): the
// device allocates a new ring + doorbell record, and under the CQ mutex (so no
// CQE is written meanwhile)
//   1. services an arm still pending in the OLD doorbell record;
//   2. reads the provider's consumer count C from the old record (the provider
//      published it and does not poll during the resize); the producer count P
//      is the device's own. P - C > old entries: a broken consumer count, the
//      resize fails and nothing changes;
//   3. fails with STATUS_BUFFER_OVERFLOW (NDSPI's answer, ndkpi-api.md
//      NdkResizeCq) if the new depth is below the P - C queued CQEs;
//   4. writes the stale owner bit into every slot of the new ring for the counts
//      [C, C + new entries), then re-writes CQEs C .. P-1 from the old ring into
//      the new one at the SAME free-running counts (slot = count mod new entries,
//      owner bit from the new depth), and copies consumer, arm_type and
//      arm_sequence into the new record;
//   5. switches to the new ring and frees the old allocation.
// Counts are therefore preserved: the device goes on producing at P, the
// provider goes on consuming at C in the new ring, and the arm sequence goes on
// from where it was. The provider must not touch the old ring or record after
// sending the command (it holds its poll/arm lock from before publishing C until
// it has switched), which is what makes step 2's C exact and step 1 complete.
class Cq : public std::enable_shared_from_this<Cq> {
  public:
    enum class Push : uint8_t { kOk, kOverflow, kDead };

    // `device` runs the moderation timer (Device::schedule) and supplies the clock.
    Cq(uint32_t number, uint32_t context, std::unique_ptr<QueueMemory> memory, uint32_t entries,
       std::shared_ptr<Eq> eq, Counters &counters, Device &device);
    static hw::QueueLayout layout_for(uint32_t entries);

    uint32_t number() const { return number_; }
    uint32_t context() const { return context_; }
    // The current allocation; replaced by resize(). Command handlers only.
    const QueueMemory &memory() const { return *memory_; }
    const hw::QueueLayout &layout() const { return layout_; }

    // Writes `cqe` (opcode/owner set from `opcode`). kOverflow: the ring was full;
    // the CQ is now dead, a kCqError EQE (STATUS_BUFFER_OVERFLOW) was posted and
    // the caller must move the CQ's QPs to error. kDead: dropped (CQ already dead).
    Push push(hw::Cqe cqe, hw::CqeOpcode opcode, uint64_t now_ns);

    // Fault injection (kCqOverrun): the CQ behaves as if its ring had overflowed: it is
    // dead and a kCqError EQE (STATUS_BUFFER_OVERFLOW) is posted, as push() does on a
    // real overrun; the caller moves its QPs to error. False if it was dead already.
    bool overrun(uint64_t now_ns);

    // Doorbell service for the completion-queue bitmap: picks up a new arm.
    void arm_doorbell(uint64_t now_ns);

    // kResizeCq (see above). `memory` holds layout_for(entries); `depth` is what the
    // consumer asked for (entries = bit_ceil(depth)). Returns an NTSTATUS; on failure
    // nothing changed and `memory` is dropped.
    // On success `handle` and `layout` describe the new allocation (read under the CQ
    // lock: a second resize racing with this one cannot free it under our feet).
    int32_t resize(std::unique_ptr<QueueMemory> memory, uint32_t entries, uint32_t depth,
                   uint64_t now_ns, hw::MemoryHandle &handle, hw::QueueLayout &layout);

    // kModerateCq (see above). Takes effect at once, also for an armed CQ.
    void moderate(uint32_t count, uint32_t interval_us, uint64_t now_ns);

    // kQueryResources: what `softndk res show cq` shows, read under the CQ lock.
    struct Snapshot {
        uint32_t entries = 0;
        uint32_t queued = 0;  // CQEs written and not yet consumed
        bool armed = false;
        bool dead = false;
        hw::ArmType arm_type = hw::ArmType::kErrors;
    };
    Snapshot snapshot();

  private:
    void die_overflowed_locked(uint64_t now_ns);
    void arm_locked(uint64_t now_ns);
    void notify_locked(uint64_t now_ns);
    void start_timer_locked(uint64_t now_ns);
    void timer_fired(uint64_t generation);

    std::mutex mutex_;
    const uint32_t number_;
    const uint32_t context_;
    std::unique_ptr<QueueMemory> memory_;
    hw::QueueLayout layout_;
    CqProducer ring_;
    hw::CqDoorbell *doorbell_;
    std::shared_ptr<Eq> eq_;
    Counters &counters_;
    Device &device_;
    uint32_t arm_sequence_seen_ = 0;
    bool armed_ = false;
    hw::ArmType arm_type_ = hw::ArmType::kErrors;
    bool any_since_notify_ = false;
    bool solicited_since_notify_ = false;
    bool dead_ = false;
    // Moderation settings and the state of the current arm.
    uint32_t mod_count_ = 0;
    uint32_t mod_interval_us_ = 0;
    uint64_t timer_deadline_ns_ = 0;  // model time the pending interval ends
    uint64_t last_push_ns_ = 0;       // model time of the latest CQE written
    uint32_t moderated_cqes_ = 0;     // successful CQEs since arming (moderated ANY arm)
    bool timer_pending_ = false;      // a timer for this arm is scheduled
    uint64_t timer_generation_ = 0;   // bumped by notify/moderate: older timers are void
};

}  // namespace softndk::emu
