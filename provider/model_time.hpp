// model_time.hpp - the consumer's clock in model time (docs/timing.md).
//
// The device dates every request by the path it takes through the RNIC's resources,
// starting from when the host rang the doorbell. The provider supplies that start:
// the latest model time the consumer can have seen through its adapter handles, that
// is the completion time of every CQE and event the provider handed it (functional
// mode), or the monotonic clock (paced mode, where model time is CLOCK_MONOTONIC), or
// simulated time (simulated mode, softndk/sim.hpp: paced mode's rules on the
// scheduler's clock; an empty CQ poll costs the host kPollNs there, cq.cpp).
//
// One clock per host, the way a host has one: the handles a process holds on one
// interface (WskOpenNdkAdapter called several times on one if_index) share it
// (HostClock::of_interface). A driver's threads hand work to each other, so a post may
// follow anything any of them saw through any handle (conservative: never dated
// before what could have caused it), and a completion dated before an event the
// process has seen is due by then, whichever handle's CQ holds it: a driver that
// drains its CQ after a disconnect event must find every completion the device wrote
// before the disconnect. Two interfaces are two hosts as far as time goes - `softndk
// perf --clock model` puts its two ends on two adapters (rnic0, rnic1) and drives both
// from one thread, and each end keeps its own clock.
// Causality through memory the device sees itself (a QP's next doorbell is never
// dated before the last WRITE it placed).
//
// In functional mode the device runs ahead of the consumer: a post returns after the
// whole exchange it started, so its completion is in the ring, dated in the
// consumer's model future, the next time the consumer polls. Were it returned at
// once, the consumer's clock would jump to it and every post after it would be
// dated after it: a perftest-style loop (post while the ring has room, poll between
// posts) would drain the device's pipeline at every completion. So a poll returns the
// CQEs dated up to the consumer's clock (HostClock::poll), and a poll that finds none
// due moves the consumer's clock on: by kPollNs, doubling with each empty poll in a
// row (a consumer that polls in vain keeps polling), up to the completion; after
// kPollsBeforeWait of those in a row it is taken to have waited for the next
// completion (bounding the host work a long wait costs).
//
// A consumer that polls one CQ again having done nothing else with the adapter since
// its last poll of it found nothing due (no post, no other CQ polled, no clock read,
// no event) is spinning on that CQ: it sees the CQE at the head at its completion
// time whichever steps it took, since nothing could observe the steps between. So
// that poll returns it (the second in the spin, instead of the log2 of the distance
// in kPollNs): the same model time for less host work. Anything done with the clock
// in between (HostClock::now, observe, consume, a poll of another CQ) ends the spin,
// and the steps go on as before: a loop that posts between polls is dated as above.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "softndk/hw_interface.hpp"

namespace softndk::provider {

class HostClock {
  public:
    explicit HostClock(hw::TimeMode mode = hw::TimeMode::kFunctional) : mode_(mode) {}
    // The clock of this process's handles on interface `if_index` (above): the one they
    // share while any of them is open, else a new one at model time 0. A device
    // reconfigured with another time mode under the same if_index gets a new clock.
    static std::shared_ptr<HostClock> of_interface(uint32_t if_index, hw::TimeMode mode);
    hw::TimeMode mode() const { return mode_; }
    // The consumer's clock now, for a doorbell stamp (hw::ProducerRecord::post_time_ns).
    uint64_t now() const;
    // The consumer saw something the device dated `t` (a CQE, an event).
    void observe(uint64_t t);
    // Paced mode: true once model time `t` has come (the wall clock reached it).
    bool reached(uint64_t t) const;
    // Functional mode: may a poll return a CQE dated `t` now? Yes if it is due (t <=
    // now()). Otherwise, for the first CQE of a poll (`first`): yes, with the clock
    // moved to t, if t is within this poll's step (kPollNs << empty_polls) or the
    // consumer has polled kPollsBeforeWait times in vain (`empty_polls`, the CQ's
    // count, reset here); no otherwise, with the clock moved by the step. Paced mode:
    // always yes (reached() decides).
    // `poller` names the polling CQ: its second empty poll in a row with nothing else
    // done with the clock between them says yes (a spin, above).
    bool poll(uint64_t t, bool first, uint32_t &empty_polls, const void *poller);
    // Any poll of CQ `poller`, before it looks at the ring: a poll of another CQ, even
    // of an empty one, ends a spin.
    void polling(const void *poller) const {
        if (spinning_on_.load(std::memory_order_relaxed) != poller) end_spin();
    }
    static constexpr uint64_t kPollNs = 100;  // a CQ poll that finds nothing, on the host
    static constexpr uint32_t kPollsBeforeWait = 16;
    // The consumer took a CQE dated `t`: its clock is at least t, plus what handling a
    // completion costs a host (functional mode; paced mode's host is the real one). It
    // is what unsignaled requests save the CPU (Kalia et al., ATC'16).
    void consume(uint64_t t);
    static constexpr uint64_t kCqeNs = 20;
    // Paced mode: returns when model time `t` has come (softndk/monotonic.hpp).
    void wait_until(uint64_t t) const;

  private:
    // Anything done with the clock but an empty poll ends a spin (poll()).
    void end_spin() const {
        if (spinning_on_.load(std::memory_order_relaxed) != nullptr)
            spinning_on_.store(nullptr, std::memory_order_relaxed);
    }

    const hw::TimeMode mode_;
    std::atomic<uint64_t> seen_{0};
    // The CQ whose empty poll was the last thing done with this clock, else nullptr.
    // Written by the consumer's threads; a race between two of them ends the spin or
    // lets it go on, and either dates the CQE at its completion time or later.
    mutable std::atomic<const void *> spinning_on_{nullptr};
};

}  // namespace softndk::provider
