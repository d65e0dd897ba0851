// ring.hpp - the one ring template behind every SoftNDK queue.
//
// Every queue of the device is an instance of Ring<Queue, Side>:
//
//   queue   flavour     Side::kProducer (fills)   Side::kConsumer (drains)
//   ------  ----------  ------------------------  ------------------------
//   SQ      counter     provider (posts WQEBBs)   device (fetches WQEs)
//   RQ/SRQ  counter     provider (posts WQEs)     device (fetches WQEs)
//   CQ      owner bit   device (writes CQEs)      provider (polls CQEs)
//   EQ      owner bit   device (writes EQEs)      provider (event thread)
//
// The memory (slots + doorbell record) is allocated by the device and
// described by hw::QueueLayout; both sides attach to it at their own address.
// Each side of a ring is driven by one thread at a time (the provider
// serialises posts per queue under its lock; the device drains a queue from
// one engine thread). The two sides may run concurrently.
//
// Counter flavour (hw_interface.hpp sections 3 and 7). Free-running uint32_t
// counters, masked by (entries - 1) on use, so entries is a power of two and
// `producer - consumer` is the fill level even across the 2^32 wrap.
//
//   index                       owner      kept privately?  shared word
//   producer (posted)           provider   yes              QueueDoorbell::producer
//   consumer (copied out)       device     yes              QueueDoorbell::consumer
//
//   provider: write slots -> publish_wqes()      (release store of producer)
//   device:   fetch_wqes()                       (acquire load of producer)
//             -> copy slots out -> retire_wqes() (release store of consumer)
//   provider: fetch_retired_wqes()               (acquire load of consumer)
//             -> may overwrite the retired slots
//
// Owner-bit flavour (hw_interface.hpp section 5). No producer index is shared:
// the device keeps its producer count privately and hands each entry over with
// its owner byte (the entry's last byte: Cqe::op_own, whose opcode bits travel
// with the owner bit, or Eqe::owner), stored last.
//
//   index                       owner      kept privately?  shared word
//   producer (written)          device     yes (only)       none
//   consumer (copied out)       provider   yes              CqDoorbell/EqDoorbell::consumer
//
//   device:   write bytes 0..62 -> publish_entry()  (release store of owner byte)
//   provider: poll_owner()                          (acquire load of owner byte)
//             -> copy bytes 0..62 -> consume_entries() (release store of consumer)
//   device:   fetch_consumed_entries()              (acquire load of consumer)
//             -> may overwrite the consumed slots
//
// Trust. Each side validates every shared word the other side writes; a bad
// value is reported (or makes the ring look full), it never leads to an access
// outside the ring:
//   - a producer more than `entries` ahead of the device's consumer (or behind
//     it) is garbage: acquire_producer() returns nullopt;
//   - the device reads only slots inside [consumer, last fetched producer) and
//     copies a WQE out once; it must validate the copy, never re-read the slot;
//   - a CQ/EQ consumer that is ahead of the device's producer or more than
//     `entries` behind it makes the ring look full. An in-range but wrong one
//     can at worst let the device overwrite entries that provider has not
//     read: a misbehaving provider only hurts itself;
//   - the provider believes an SQ/RQ consumer only if it moved forward within
//     the published slots.
//
// The shared words are plain bytes in memory that two processes map; they are
// accessed through std::atomic_ref, which is lock-free (hence address-free)
// for uint32_t and uint8_t, so it works across processes.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>

#include "softndk/hw_interface.hpp"

#if defined(__SANITIZE_THREAD__)
#define SOFTNDK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SOFTNDK_TSAN 1
#endif
#endif
#if defined(SOFTNDK_TSAN)
extern "C" void __tsan_read_range(const volatile void *addr, unsigned long size);
extern "C" void __tsan_write_range(volatile void *addr, unsigned long size);
#endif

namespace softndk {

static_assert(std::atomic_ref<uint32_t>::is_always_lock_free);
static_assert(std::atomic_ref<uint8_t>::is_always_lock_free);

// ---------------------------------------------------------------------------
// Barrier steps. Every ordering point of the ring protocol has a name; nothing
// else in SoftNDK touches these words with raw atomics.
// ---------------------------------------------------------------------------

// Provider: the WQE bytes of every slot before `producer` are complete.
inline void publish_wqes(hw::QueueDoorbell &db, uint32_t producer) {
    std::atomic_ref(db.producer.value).store(producer, std::memory_order_release);
}

// Device: pairs with publish_wqes(); slot reads after it see the WQE bytes.
// The value is untrusted (see Ring<..., kConsumer>::acquire_producer()).
inline uint32_t fetch_wqes(hw::QueueDoorbell &db) {
    return std::atomic_ref(db.producer.value).load(std::memory_order_acquire);
}

// Provider: the timing hints of the doorbell about to be published (hw::ProducerRecord).
// Stored before publish_wqes(), whose release orders them for the device.
inline void stamp_doorbell(hw::QueueDoorbell &db, uint64_t post_time_ns, bool blueflame) {
    std::atomic_ref(db.producer.post_time_ns).store(post_time_ns, std::memory_order_relaxed);
    std::atomic_ref(db.producer.blueflame).store(blueflame ? 1u : 0u, std::memory_order_relaxed);
}

// Device: the hints of the latest doorbell, read after fetch_wqes(). Untrusted.
struct DoorbellStamp {
    uint64_t post_time_ns = 0;
    bool blueflame = false;
};
inline DoorbellStamp fetch_doorbell_stamp(hw::QueueDoorbell &db) {
    return {std::atomic_ref(db.producer.post_time_ns).load(std::memory_order_relaxed),
            std::atomic_ref(db.producer.blueflame).load(std::memory_order_relaxed) == 1u};
}

// Device: every slot before `consumer` has been copied out and may be reused.
// Release orders the device's slot reads before the provider's reuse.
inline void retire_wqes(hw::QueueDoorbell &db, uint32_t consumer) {
    std::atomic_ref(db.consumer.value).store(consumer, std::memory_order_release);
}

// Provider: pairs with retire_wqes(); overwriting a retired slot after it
// cannot race with the device's copy.
inline uint32_t fetch_retired_wqes(hw::QueueDoorbell &db) {
    return std::atomic_ref(db.consumer.value).load(std::memory_order_acquire);
}

// Device: the entry body (bytes before the owner byte) is complete; storing
// the owner byte hands the entry to the provider.
inline void publish_entry(uint8_t &owner_byte, uint8_t value) {
    std::atomic_ref(owner_byte).store(value, std::memory_order_release);
}

// Provider: pairs with publish_entry(); if the owner bit matches, the body
// bytes read after it are the ones the device wrote.
inline uint8_t poll_owner(uint8_t &owner_byte) {
    return std::atomic_ref(owner_byte).load(std::memory_order_acquire);
}

// Provider: every entry before `consumer` has been copied out. Release orders
// those copies before the device rewrites the slots.
inline void consume_entries(hw::CacheLineU32 &consumer_word, uint32_t consumer) {
    std::atomic_ref(consumer_word.value).store(consumer, std::memory_order_release);
}

// Device: pairs with consume_entries(). The value is untrusted.
inline uint32_t fetch_consumed_entries(hw::CacheLineU32 &consumer_word) {
    return std::atomic_ref(consumer_word.value).load(std::memory_order_acquire);
}

// Copies slot bytes to or from shared memory. g++ expands a fixed-size memcpy
// inline after its ThreadSanitizer pass, which would hide every slot access
// from TSan (and with it any ordering bug in the protocol); announce them.
inline void copy_shared(void *dst, const void *src, size_t bytes) {
#if defined(SOFTNDK_TSAN)
    __tsan_read_range(src, bytes);
    __tsan_write_range(dst, bytes);
#endif
    std::memcpy(dst, src, bytes);
}

// ---------------------------------------------------------------------------
// Queue kinds
// ---------------------------------------------------------------------------
enum class RingFlavour : uint8_t { kCounter, kOwnerBit };
enum class RingSide : uint8_t { kProducer, kConsumer };

// Largest ring: counters must be able to tell "full" from "empty" and the
// owner bit must flip consistently across the 2^32 wrap of the count.
inline constexpr uint32_t kMaxRingEntries = 1u << 31;
// Slot array and doorbell record offsets (and the mapping) are 64-B aligned.
inline constexpr uint32_t kRingAlignment = 64;

struct SendQueue {
    static constexpr RingFlavour kFlavour = RingFlavour::kCounter;
    using Doorbell = hw::QueueDoorbell;
    static constexpr bool valid_entry_bytes(uint32_t b) { return b == hw::kWqeBasicBlock; }
};

// Receive slots hold a list of DataSegments (RecvQueueLayout::wqe_bytes).
struct ReceiveQueue {
    static constexpr RingFlavour kFlavour = RingFlavour::kCounter;
    using Doorbell = hw::QueueDoorbell;
    static constexpr bool valid_entry_bytes(uint32_t b) {
        return b != 0 && b % hw::kSegmentBytes == 0 && b <= hw::kMaxWqeSegments * hw::kSegmentBytes;
    }
};

struct SharedReceiveQueue : ReceiveQueue {};

struct CompletionQueue {
    static constexpr RingFlavour kFlavour = RingFlavour::kOwnerBit;
    using Doorbell = hw::CqDoorbell;
    using Entry = hw::Cqe;
    static constexpr size_t kOwnerOffset = offsetof(hw::Cqe, op_own);
    static constexpr bool valid_entry_bytes(uint32_t b) { return b == sizeof(Entry); }
};

struct EventQueue {
    static constexpr RingFlavour kFlavour = RingFlavour::kOwnerBit;
    using Doorbell = hw::EqDoorbell;
    using Entry = hw::Eqe;
    static constexpr size_t kOwnerOffset = offsetof(hw::Eqe, owner);
    static constexpr bool valid_entry_bytes(uint32_t b) { return b == sizeof(Entry); }
};

// ---------------------------------------------------------------------------
// Geometry: a validated view of one queue allocation.
// ---------------------------------------------------------------------------
struct RingMemory {
    std::byte *slots = nullptr;
    std::byte *doorbell = nullptr;
    uint32_t entries = 0;
    uint32_t mask = 0;
    uint32_t log2_entries = 0;
    uint32_t entry_bytes = 0;

    std::byte *slot(uint32_t count) const {
        return slots + static_cast<size_t>(count & mask) * entry_bytes;
    }

    // Slots needed to hold `bytes` starting at a slot boundary.
    uint64_t slots_for(uint64_t bytes) const { return (bytes + entry_bytes - 1) / entry_bytes; }

    // memcpy between `buffer` and the slots from `count` on, wrapping once at
    // the end of the ring. `bytes` <= entries * entry_bytes (callers check).
    void copy_out(uint32_t count, void *buffer, size_t bytes) const {
        const size_t first = ring_bytes_from(count, bytes);
        copy_shared(buffer, slot(count), first);
        copy_shared(static_cast<std::byte *>(buffer) + first, slots, bytes - first);
    }
    void copy_in(uint32_t count, const void *buffer, size_t bytes) const {
        const size_t first = ring_bytes_from(count, bytes);
        copy_shared(slot(count), buffer, first);
        copy_shared(slots, static_cast<const std::byte *>(buffer) + first, bytes - first);
    }

    // Validates `layout` against the allocation at `base` for queue kind Q.
    template <class Q>
    static std::optional<RingMemory> map(void *base, const hw::QueueLayout &layout) {
        const uint64_t entries = layout.entries;
        const uint64_t ring_bytes = entries * layout.entry_bytes;
        const uint64_t ring_end = layout.ring_offset + ring_bytes;
        const uint64_t doorbell_end =
            uint64_t{layout.doorbell_offset} + sizeof(typename Q::Doorbell);
        const bool ok =
            base != nullptr && reinterpret_cast<uintptr_t>(base) % kRingAlignment == 0 &&
            entries != 0 && (entries & (entries - 1)) == 0 && entries <= kMaxRingEntries &&
            Q::valid_entry_bytes(layout.entry_bytes) && layout.ring_offset % kRingAlignment == 0 &&
            layout.doorbell_offset % kRingAlignment == 0 && ring_end <= layout.bytes &&
            doorbell_end <= layout.bytes &&
            (doorbell_end <= layout.ring_offset || ring_end <= layout.doorbell_offset);
        if (!ok) return std::nullopt;
        RingMemory m;
        m.slots = static_cast<std::byte *>(base) + layout.ring_offset;
        m.doorbell = static_cast<std::byte *>(base) + layout.doorbell_offset;
        m.entries = layout.entries;
        m.mask = layout.entries - 1;
        m.log2_entries = static_cast<uint32_t>(std::countr_zero(layout.entries));
        m.entry_bytes = layout.entry_bytes;
        return m;
    }

  private:
    size_t ring_bytes_from(uint32_t count, size_t bytes) const {
        const size_t to_end = static_cast<size_t>(entries - (count & mask)) * entry_bytes;
        return bytes < to_end ? bytes : to_end;
    }
};

template <class Queue, RingSide Side, RingFlavour = Queue::kFlavour>
class Ring;

// ---------------------------------------------------------------------------
// Counter flavour, producer side (provider posting to an SQ, RQ or SRQ).
//
//   auto first = sq.reserve(n);          // n slots now belong to the caller
//   sq.write(*first, wqe, n * 64);       // or fill sq.slot(*first + i) in place
//   sq.publish();                        // one release store for the batch
// ---------------------------------------------------------------------------
template <class Queue>
class Ring<Queue, RingSide::kProducer, RingFlavour::kCounter> {
  public:
    // `initial` must equal both doorbell counters (0 for a new queue).
    static std::optional<Ring> attach(void *base, const hw::QueueLayout &layout,
                                      uint32_t initial = 0) {
        auto memory = RingMemory::map<Queue>(base, layout);
        if (!memory) return std::nullopt;
        return Ring(*memory, initial);
    }

    uint32_t entries() const { return m_.entries; }
    uint32_t entry_bytes() const { return m_.entry_bytes; }
    uint32_t producer() const { return published_; }  // last value published
    uint32_t reserved() const { return head_; }       // end of the reserved slots

    // Slots that reserve() can still hand out. Re-reads the device's consumer.
    uint32_t free_slots() {
        refresh_consumer();
        return m_.entries - (head_ - consumer_);
    }

    // Reserves `n` slots after those already reserved and returns the count of
    // the first one, or nullopt if the ring lacks room (nothing is reserved).
    std::optional<uint32_t> reserve(uint32_t n) {
        if (m_.entries - (head_ - consumer_) < n) {
            refresh_consumer();
            if (m_.entries - (head_ - consumer_) < n) return std::nullopt;
        }
        const uint32_t first = head_;
        head_ += n;
        return first;
    }

    // The slot of free-running count `count` (masked, so it wraps).
    std::byte *slot(uint32_t count) const { return m_.slot(count); }

    // Copies `bytes` into the slots from `count` on, wrapping at the end of
    // the ring. Fails (writes nothing) unless every slot touched is reserved
    // and not yet published.
    bool write(uint32_t count, const void *src, size_t bytes) {
        const uint32_t offset = count - published_;
        const uint32_t open = head_ - published_;
        if (offset > open || m_.slots_for(bytes) > open - offset) return false;
        m_.copy_in(count, src, bytes);
        return true;
    }

    // Publishes slots up to `new_producer`, which must lie within
    // [producer(), reserved()]. Returns false (and publishes nothing) if not.
    // Sets the timing hints the next publish() carries (hw::ProducerRecord).
    void stamp(uint64_t post_time_ns, bool blueflame) {
        stamp_doorbell(doorbell(), post_time_ns, blueflame);
    }
    bool publish(uint32_t new_producer) {
        if (new_producer - published_ > head_ - published_) return false;
        published_ = new_producer;
        publish_wqes(doorbell(), new_producer);
        return true;
    }
    void publish() { publish(head_); }

  private:
    Ring(const RingMemory &m, uint32_t initial)
        : m_(m), head_(initial), published_(initial), consumer_(initial) {}

    hw::QueueDoorbell &doorbell() const {
        return *reinterpret_cast<hw::QueueDoorbell *>(m_.doorbell);
    }

    // The device's consumer is believed only if it moved forward within the
    // published slots; otherwise the previous value stays (the ring looks
    // fuller), so head_ - consumer_ <= entries always holds.
    void refresh_consumer() {
        const uint32_t c = fetch_retired_wqes(doorbell());
        if (c - consumer_ <= published_ - consumer_) consumer_ = c;
    }

    RingMemory m_;
    uint32_t head_;       // private: next count reserve() hands out
    uint32_t published_;  // private copy of the shared producer
    uint32_t consumer_;   // last valid consumer read from the device
};

// ---------------------------------------------------------------------------
// Counter flavour, consumer side (device fetching from an SQ, RQ or SRQ).
//
//   if (auto p = sq.acquire_producer()) {
//       while (sq.available() != 0) { sq.read(sq.consumer(), &wqe, n * 64); ...
//                                     sq.release(sq.consumer() + n); }
//   } else { /* garbage producer: the queue goes to error */ }
// ---------------------------------------------------------------------------
template <class Queue>
class Ring<Queue, RingSide::kConsumer, RingFlavour::kCounter> {
  public:
    static std::optional<Ring> attach(void *base, const hw::QueueLayout &layout,
                                      uint32_t initial = 0) {
        auto memory = RingMemory::map<Queue>(base, layout);
        if (!memory) return std::nullopt;
        return Ring(*memory, initial);
    }

    uint32_t entries() const { return m_.entries; }
    uint32_t entry_bytes() const { return m_.entry_bytes; }
    uint32_t consumer() const { return consumer_; }
    uint32_t producer() const { return producer_; }  // last valid value fetched
    uint32_t available() const { return producer_ - consumer_; }

    // Acquire-loads the provider's producer. A value that claims more than
    // `entries` posted slots, or fewer than already consumed, was not written
    // by a correct provider: it is returned as nullopt and not used.
    std::optional<uint32_t> acquire_producer() {
        const uint32_t p = fetch_wqes(doorbell());
        if (p - consumer_ > m_.entries) return std::nullopt;
        producer_ = p;
        return p;
    }

    // Monitoring (kQueryResources): how many slots the provider has published beyond
    // consumer(), read from the doorbell record without acquiring them. A count no
    // correct provider produces (more than `entries`) reads as 0.
    uint32_t published_unconsumed() const {
        const uint32_t n = fetch_wqes(doorbell()) - consumer_;
        return n > m_.entries ? 0 : n;
    }

    // The timing hints of the latest doorbell (untrusted), after acquire_producer().
    DoorbellStamp stamp() const { return fetch_doorbell_stamp(doorbell()); }

    // Copies `bytes` from the slots starting at `count` (wrapping). Fails
    // unless every slot touched lies in [consumer(), producer()).
    bool read(uint32_t count, void *dst, size_t bytes) const {
        const uint32_t offset = count - consumer_;
        const uint32_t avail = producer_ - consumer_;
        if (offset > avail || m_.slots_for(bytes) > avail - offset) return false;
        m_.copy_out(count, dst, bytes);
        return true;
    }

    // Hands slots before `new_consumer` back to the provider; it must lie in
    // [consumer(), producer()]. Returns false (and changes nothing) if not.
    bool release(uint32_t new_consumer) {
        if (new_consumer - consumer_ > producer_ - consumer_) return false;
        consumer_ = new_consumer;
        retire_wqes(doorbell(), new_consumer);
        return true;
    }

  private:
    Ring(const RingMemory &m, uint32_t initial) : m_(m), consumer_(initial), producer_(initial) {}

    hw::QueueDoorbell &doorbell() const {
        return *reinterpret_cast<hw::QueueDoorbell *>(m_.doorbell);
    }

    RingMemory m_;
    uint32_t consumer_;  // private copy of the shared consumer
    uint32_t producer_;  // last producer that passed validation
};

// ---------------------------------------------------------------------------
// Owner-bit flavour, producer side (device writing CQEs or EQEs).
// ---------------------------------------------------------------------------
template <class Queue>
class Ring<Queue, RingSide::kProducer, RingFlavour::kOwnerBit> {
  public:
    using Entry = typename Queue::Entry;
    static_assert(std::is_trivially_copyable_v<Entry> && std::is_standard_layout_v<Entry>);
    static_assert(Queue::kOwnerOffset == sizeof(Entry) - 1, "owner byte must be stored last");

    // `initial` is the number of entries already written; the slots must hold
    // what that many writes leave (all zero for 0, or any multiple of
    // 2 * entries).
    static std::optional<Ring> attach(void *base, const hw::QueueLayout &layout,
                                      uint32_t initial = 0) {
        auto memory = RingMemory::map<Queue>(base, layout);
        if (!memory) return std::nullopt;
        return Ring(*memory, initial);
    }

    uint32_t entries() const { return m_.entries; }
    uint32_t producer() const { return producer_; }
    // Times the provider's consumer count was out of range (ring then looked full).
    uint64_t bad_consumer_reads() const { return bad_consumer_reads_; }

    // Entries that can be written without overwriting one the provider has not
    // consumed, from a fresh read of the doorbell consumer (0 if it is garbage).
    uint32_t free_entries() {
        const uint32_t c = fetch_consumed_entries(doorbell().consumer);
        const uint32_t used = producer_ - c;
        if (used > m_.entries) {  // ahead of us, or further behind than possible
            ++bad_consumer_reads_;
            return 0;
        }
        consumer_ = c;
        return m_.entries - used;
    }

    // Re-reads the doorbell consumer only when the last valid one says full.
    bool full() { return producer_ - consumer_ >= m_.entries && free_entries() == 0; }

    // Writes `entry` (its owner bit replaced by the one for this pass) into the
    // next slot. Returns false if the ring is full (the caller reports overflow).
    bool try_push(const Entry &entry) {
        if (full()) return false;
        std::byte *slot = m_.slot(producer_);
        copy_shared(slot, &entry, Queue::kOwnerOffset);
        uint8_t owner;
        std::memcpy(&owner, reinterpret_cast<const std::byte *>(&entry) + Queue::kOwnerOffset, 1);
        owner =
            static_cast<uint8_t>((owner & ~1u) | hw::expected_owner(producer_, m_.log2_entries));
        publish_entry(*reinterpret_cast<uint8_t *>(slot + Queue::kOwnerOffset), owner);
        ++producer_;
        return true;
    }

  private:
    Ring(const RingMemory &m, uint32_t initial) : m_(m), producer_(initial), consumer_(initial) {}

    typename Queue::Doorbell &doorbell() const {
        return *reinterpret_cast<typename Queue::Doorbell *>(m_.doorbell);
    }

    RingMemory m_;
    uint32_t producer_;  // private, never shared: entries written so far
    uint32_t consumer_;  // last valid consumer read from the doorbell
    uint64_t bad_consumer_reads_ = 0;
};

// ---------------------------------------------------------------------------
// Owner-bit flavour, consumer side (provider polling a CQ or the EQ).
//
//   Cqe batch[16];
//   size_t n = cq.poll(batch);           // copies, then one consume_entries()
// ---------------------------------------------------------------------------
template <class Queue>
class Ring<Queue, RingSide::kConsumer, RingFlavour::kOwnerBit> {
  public:
    using Entry = typename Queue::Entry;
    static_assert(std::is_trivially_copyable_v<Entry> && std::is_standard_layout_v<Entry>);
    static_assert(Queue::kOwnerOffset == sizeof(Entry) - 1, "owner byte must be stored last");

    static std::optional<Ring> attach(void *base, const hw::QueueLayout &layout,
                                      uint32_t initial = 0) {
        auto memory = RingMemory::map<Queue>(base, layout);
        if (!memory) return std::nullopt;
        return Ring(*memory, initial);
    }

    uint32_t entries() const { return m_.entries; }
    uint32_t consumer() const { return consumer_; }

    // Copies the next entry out if the device has written it, without taking it.
    bool peek(Entry &out) const {
        std::byte *slot = m_.slot(consumer_);
        const uint8_t owner = poll_owner(*reinterpret_cast<uint8_t *>(slot + Queue::kOwnerOffset));
        if ((owner & 1u) != hw::expected_owner(consumer_, m_.log2_entries)) return false;
        copy_shared(&out, slot, Queue::kOwnerOffset);
        std::memcpy(reinterpret_cast<std::byte *>(&out) + Queue::kOwnerOffset, &owner, 1);
        return true;
    }

    // Copies the next entry out if the device has written it. Does not
    // publish the consumer count; call publish_consumer() after a batch.
    bool take(Entry &out) {
        std::byte *slot = m_.slot(consumer_);
        const uint8_t owner = poll_owner(*reinterpret_cast<uint8_t *>(slot + Queue::kOwnerOffset));
        if ((owner & 1u) != hw::expected_owner(consumer_, m_.log2_entries)) return false;
        copy_shared(&out, slot, Queue::kOwnerOffset);
        std::memcpy(reinterpret_cast<std::byte *>(&out) + Queue::kOwnerOffset, &owner, 1);
        ++consumer_;
        return true;
    }

    // Tells the device how far the provider has consumed (overflow detection).
    void publish_consumer() { consume_entries(doorbell().consumer, consumer_); }

    // take() + publish_consumer().
    bool poll(Entry &out) {
        if (!take(out)) return false;
        publish_consumer();
        return true;
    }

    // Takes up to out.size() entries, publishes the consumer once if any.
    size_t poll(std::span<Entry> out) {
        size_t n = 0;
        while (n < out.size() && take(out[n]))
            ++n;
        if (n != 0) publish_consumer();
        return n;
    }

  private:
    Ring(const RingMemory &m, uint32_t initial) : m_(m), consumer_(initial) {}

    typename Queue::Doorbell &doorbell() const {
        return *reinterpret_cast<typename Queue::Doorbell *>(m_.doorbell);
    }

    RingMemory m_;
    uint32_t consumer_;  // private: entries copied out so far
};

// The instances.
using SqProducer = Ring<SendQueue, RingSide::kProducer>;            // provider
using SqConsumer = Ring<SendQueue, RingSide::kConsumer>;            // device
using RqProducer = Ring<ReceiveQueue, RingSide::kProducer>;         // provider
using RqConsumer = Ring<ReceiveQueue, RingSide::kConsumer>;         // device
using SrqProducer = Ring<SharedReceiveQueue, RingSide::kProducer>;  // provider
using SrqConsumer = Ring<SharedReceiveQueue, RingSide::kConsumer>;  // device
using CqProducer = Ring<CompletionQueue, RingSide::kProducer>;      // device
using CqConsumer = Ring<CompletionQueue, RingSide::kConsumer>;      // provider
using EqProducer = Ring<EventQueue, RingSide::kProducer>;           // device
using EqConsumer = Ring<EventQueue, RingSide::kConsumer>;           // provider

}  // namespace softndk
