// model_time.hpp - the consumer's clock in model time (docs/timing.md).
//
// The device dates every request by the path it takes through the RNIC's resources,
// starting from when the host rang the doorbell. The provider supplies that start:
// the latest model time the consumer can have seen through the adapter handle, that
// is the completion time of every CQE and event the provider handed it (functional
// mode), or the monotonic clock (paced mode, where model time is CLOCK_MONOTONIC).
//
// One clock per adapter handle (NDK_ADAPTER), the way a host has one: a driver
// normally opens one handle, and its threads hand work to each other, so a post may
// follow anything any of them saw (conservative: never dated before what could have
// caused it). Two handles are two hosts as far as time goes - `softndk perf` drives
// both ends of a connection from one thread, and each end must keep its own clock.
// Causality through memory the device sees itself (a QP's next doorbell is never
// dated before the last WRITE it placed).
#pragma once

#include <atomic>
#include <cstdint>

#include "softndk/hw_interface.hpp"

namespace softndk::provider {

class HostClock {
  public:
    explicit HostClock(hw::TimeMode mode = hw::TimeMode::kFunctional) : mode_(mode) {}
    void set_mode(hw::TimeMode mode) { mode_ = mode; }
    hw::TimeMode mode() const { return mode_; }
    // The consumer's clock now, for a doorbell stamp (hw::ProducerRecord::post_time_ns).
    uint64_t now() const;
    // The consumer saw something the device dated `t` (a CQE, an event).
    void observe(uint64_t t);
    // Paced mode: true once model time `t` has come (the wall clock reached it).
    bool reached(uint64_t t) const;
    // Paced mode: returns when model time `t` has come (softndk/monotonic.hpp).
    void wait_until(uint64_t t) const;

  private:
    hw::TimeMode mode_;
    std::atomic<uint64_t> seen_{0};
};

}  // namespace softndk::provider
