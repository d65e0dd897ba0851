// model_time.hpp - the consumer's clock in model time (docs/timing.md).
//
// The device dates every request by the path it takes through the RNIC's resources,
// starting from when the host rang the doorbell. The provider supplies that start:
// the latest model time the consumer can have seen, that is the completion time of
// every CQE and event the provider handed it (functional mode), or the monotonic
// clock (paced mode, where model time is CLOCK_MONOTONIC). One clock per process: a
// driver's threads hand work to each other (a DPC queues a work item that posts), so
// a post may follow anything any of them saw. That is conservative: a post is never
// dated before what could have caused it.
#pragma once

#include <cstdint>

#include "softndk/hw_interface.hpp"

namespace softndk::provider::model_time {

uint64_t monotonic_ns();
// The consumer's clock now, for a doorbell stamp (hw::ProducerRecord::post_time_ns).
uint64_t host_now(hw::TimeMode mode);
// The consumer saw something the device dated `t` (a CQE, an event).
void observe(uint64_t t);
// Paced mode: true once model time `t` has come (the wall clock reached it).
bool reached(hw::TimeMode mode, uint64_t t);
// Paced mode: returns when model time `t` has come (softndk/monotonic.hpp).
void wait_until(hw::TimeMode mode, uint64_t t);

}  // namespace softndk::provider::model_time
