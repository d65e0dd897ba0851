// srq.hpp - a shared receive queue: one ring of receive WQEs that several QPs draw
// from (kCreateSrq / kModifySrq / kDestroySrq).
//
// Lock order QP -> SRQ -> CQ -> EQ: a responder holding its QP lock takes the SRQ
// lock to fetch one receive. The limit event is one-shot (NDK SRQ notification):
// when a fetch leaves fewer than `limit` receives queued, the device posts one
// kSrqLimit EQE and disarms; kModifySrq re-arms. QP errors never flush the SRQ
// (its WQEs belong to every QP); only a receive a QP had already taken is flushed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "device/queue_memory.hpp"
#include "softndk/ring.hpp"

namespace softndk::emu {

class Srq {
  public:
    Srq(uint32_t number, uint32_t context, uint32_t pd, std::unique_ptr<QueueMemory> memory,
        const hw::QueueLayout &layout, uint32_t max_sge)
        : number(number),
          context(context),
          pd(pd),
          memory(std::move(memory)),
          layout(layout),
          ring(RqConsumer::attach(this->memory->data(), layout)),
          max_sge(max_sge) {}

    const uint32_t number;
    const uint32_t context;
    const uint32_t pd;
    std::mutex mutex;  // protects everything below
    std::unique_ptr<QueueMemory> memory;
    hw::QueueLayout layout;
    std::optional<RqConsumer> ring;
    uint32_t max_sge;
    uint32_t limit = 0;  // armed when non-zero

    // The one-shot limit event (mutex held): true, and disarmed, if armed and fewer
    // than `limit` receives are queued. The caller posts limit_event().
    bool take_limit_event() {
        if (limit == 0 || ring->available() >= limit) return false;
        limit = 0;
        return true;
    }
    hw::Eqe limit_event() const {
        hw::Eqe e{};
        e.type = static_cast<uint8_t>(hw::EqeType::kSrqLimit);
        e.object = number;
        return e;
    }
};

}  // namespace softndk::emu
