// receive_queue.hpp - the provider's half of a receive ring: a QP's RQ or an SRQ.
//
// Who owns which index:
//   - post() (the consumer's thread; NDK serialises posts per queue, ndkpi-api.md 7.2)
//     owns the ring's producer side: it reserves a slot, writes the receive WQE, records
//     the RequestContext in the shadow slot, then publishes (release). `published_`
//     mirrors the producer for the completion side.
//   - retire_in_order() / retire_any() (the completion side, under a CQ's poll mutex)
//     own `retired_`: slots before it are free for post() again. post() reads it with
//     acquire, so a slot is never rewritten while its RequestContext may still be read.
// A QP's RQ completes in ring order (one responder, one CQ): retire_in_order(). An SRQ's
// slots are consumed in ring order but completed by the CQs of every QP drawing from
// it, in any order: retire_any() marks the slot done and advances `retired_` over the
// done prefix, under `retire_mutex_` because several CQs may retire at once.
#pragma once

#include <ndkpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "log.hpp"
#include "softndk/hw_interface.hpp"
#include "softndk/ring.hpp"

namespace softndk::provider {

// Same ring slot? Compares the bits both a 16-bit wqe counter and a masked slot index
// carry, so either reading of docs/prm.md's wqe_counter works.
inline bool same_slot(uint32_t count, uint16_t counter, uint32_t mask) {
    return ((count ^ counter) & mask & 0xffffu) == 0;
}

class ReceiveQueue {
  public:
    ReceiveQueue(RqProducer ring, uint32_t depth, uint32_t max_sge)
        : ring_(ring),
          shadow_(ring.entries()),
          done_(ring.entries()),
          depth_(std::min(depth, ring.entries())),
          max_sge_(max_sge) {}

    uint32_t capacity() const { return ring_.entries(); }
    uint32_t posted() const { return ring_.producer(); }  // receives published so far
    uint32_t depth() const { return depth_.load(std::memory_order_relaxed); }
    // NdkModifySrq: at most capacity(); posts beyond it fail with
    // STATUS_INSUFFICIENT_RESOURCES.
    void set_depth(uint32_t depth) {
        depth_.store(std::min(depth, capacity()), std::memory_order_relaxed);
    }
    // Receives posted and not yet retired.
    uint32_t outstanding() const {
        return ring_.reserved() - retired_.load(std::memory_order_acquire);
    }

    // Writes and publishes one receive WQE; the caller rings (an SRQ needs no doorbell:
    // the device reads its producer when a SEND arrives).
    NTSTATUS post(void *request_context, const NDK_SGE *sgl, ULONG n) {
        if ((sgl == nullptr && n != 0) || n > max_sge_) return STATUS_INVALID_PARAMETER;
        const uint32_t slot_segments = ring_.entry_bytes() / hw::kSegmentBytes;
        if (n > slot_segments) return STATUS_INVALID_PARAMETER;
        if (outstanding() >= depth()) return STATUS_INSUFFICIENT_RESOURCES;
        const auto slot = ring_.reserve(1);
        if (!slot) return STATUS_INSUFFICIENT_RESOURCES;
        // One slot's worth, not kMaxWqeSegments: this runs for every receive.
        alignas(64) hw::DataSegment segments[hw::kMaxWqeSegments];
        std::memset(segments, 0, ring_.entry_bytes());
        for (ULONG i = 0; i < n; ++i) {
            segments[i].byte_count = sgl[i].Length;
            segments[i].local_token = sgl[i].MemoryRegionToken;
            segments[i].address = reinterpret_cast<uintptr_t>(sgl[i].VirtualAddress);
        }
        if (n < slot_segments) segments[n].local_token = hw::kRecvListEnd;
        ring_.write(*slot, segments, ring_.entry_bytes());
        shadow_[*slot & (ring_.entries() - 1)] = request_context;
        ring_.publish();
        published_.store(ring_.producer(), std::memory_order_release);
        return STATUS_SUCCESS;
    }

    bool retire_in_order(uint16_t counter, void **request_context) {
        const uint32_t mask = ring_.entries() - 1;
        const uint32_t published = published_.load(std::memory_order_acquire);
        for (uint32_t c = retired_.load(std::memory_order_relaxed); c != published; ++c) {
            if (same_slot(c, counter, mask)) {
                *request_context = shadow_[c & mask];
                retired_.store(c + 1, std::memory_order_release);
                return true;
            }
        }
        return false;
    }

    // The oldest receive not retired yet, in order (a QP's RQ after a device removal).
    bool retire_oldest(void **request_context) {
        const uint32_t c = retired_.load(std::memory_order_relaxed);
        if (c == published_.load(std::memory_order_acquire)) return false;
        *request_context = shadow_[c & (ring_.entries() - 1)];
        retired_.store(c + 1, std::memory_order_release);
        return true;
    }
    bool retire_any(uint16_t counter, void **request_context) {
        const uint32_t mask = ring_.entries() - 1;
        std::lock_guard lock(retire_mutex_);
        const uint32_t published = published_.load(std::memory_order_acquire);
        uint32_t retired = retired_.load(std::memory_order_relaxed);
        for (uint32_t c = retired; c != published; ++c) {
            if (!same_slot(c, counter, mask) || done_[c & mask]) continue;
            *request_context = shadow_[c & mask];
            done_[c & mask] = 1;
            while (retired != published && done_[retired & mask]) {
                done_[retired & mask] = 0;
                ++retired;
            }
            retired_.store(retired, std::memory_order_release);
            return true;
        }
        return false;
    }

  private:
    RqProducer ring_;
    std::vector<void *> shadow_;
    std::vector<uint8_t> done_;  // retire_any() only, under retire_mutex_
    std::atomic<uint32_t> depth_;
    uint32_t max_sge_;
    std::atomic<uint32_t> published_{0};
    std::atomic<uint32_t> retired_{0};
    std::mutex retire_mutex_;
};

}  // namespace softndk::provider
