// placement.hpp - where the RC engine writes received payload into host memory: receive
// scatter lists, RDMA WRITE targets and READ response sinks.
//
// A packet's payload is placed at once, except while the device delivers a run
// (fabric.hpp, Packet::run): then consecutive pieces that continue one another in the
// message and in the source collect here and go as ONE copy per contiguous range, which
// is what lets a 1 MiB transfer run at memcpy speed instead of 256 small copies with
// bookkeeping between them.
//
// Contract. Owned by one Qp and used only under its mutex. Between begin() and end()
// (Device::deliver_to_qp, around one run) place() may defer; end() copies what is
// pending, and so must a stage before anything makes the placed bytes visible to the
// host on its own: a CQE (receive, READ), never later than the run. The pending copy
// holds its own DmaRanges (their translations pinned), so a receive or WRITE target
// the engine lets go of in the meantime - a completion, an error - is still written
// safely, as a NIC would have written those packets before it noticed. Outside a run
// nothing is deferred and flush() is a no-op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "memory/mtt.hpp"

namespace softndk::emu::rc {

// Copies `data` into the scatter list `sges` starting at byte `offset` of the list
// (the caller checked the capacity; bytes past the end are not written).
void scatter(std::span<const DmaRange> sges, uint64_t offset, std::span<const uint8_t> data);

class DeferredPlacement {
  public:
    void begin() { deferring_ = true; }
    void end() {
        flush();
        deferring_ = false;
    }
    // Places `data` at byte `offset` of the scatter list `sges`: now, or (in a run) with
    // the pieces around it.
    void place(std::span<const DmaRange> sges, uint64_t offset, std::span<const uint8_t> data);
    // Copies whatever is pending.
    void flush();

  private:
    bool same_target(std::span<const DmaRange> sges) const;

    bool deferring_ = false;
    std::vector<DmaRange> sges_;  // the pending copy's destination (a copy: pins it)
    uint64_t offset_ = 0;
    const uint8_t *data_ = nullptr;
    size_t length_ = 0;
};

}  // namespace softndk::emu::rc
