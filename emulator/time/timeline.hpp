// timeline.hpp - the two building blocks of the timing model (model.hpp): a resource
// that serves one thing at a time, and an on-device cache.
//
// Times are uint64_t in the caller's unit (the model books in picoseconds). Requests
// reach a resource out of host order: the host runs QPs one after another and a packet sent early
// in model time may be processed after one sent later. A resource therefore keeps the intervals it
// is busy and books a request into the first gap at or after its arrival (never
// "after whoever the host happened to run last"), so the model's answer does not
// depend on the host's interleaving within the history it keeps.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace softndk::emu::time {

// The model's lock (TimingModel) guards a few instructions per step and is taken
// about ten times per message, where a futex mutex's call overhead would cost more
// than the model's work. Spins with a pause for a few microseconds - many times a
// step's hold - then yields (never more spinners than cores: a holder that was
// preempted gets the processor back). Yielding sooner, after 64 bare loads (a few
// hundred ns), made two threads that book the same device (the two ends of a paced
// ping-pong, each on its own core) yield on ordinary contention, and each yield
// turned a 0.7 us one-way exchange into 2.3 us.
class SpinLock {
  public:
    void lock() {
        for (unsigned spins = 0; flag_.exchange(true, std::memory_order_acquire);) {
            while (flag_.load(std::memory_order_relaxed)) {
                if (++spins > kSpinsBeforeYield) {
                    std::this_thread::yield();
                } else {
                    cpu_relax();
                }
            }
        }
    }
    void unlock() { flag_.store(false, std::memory_order_release); }

  private:
    static constexpr unsigned kSpinsBeforeYield = 256;
    static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    std::atomic<bool> flag_{false};
};

// One resource with its own timeline: a PCIe channel, a processing unit, a
// pipeline stage, a link. Not synchronised: its owner serialises the calls
// (TimingModel holds one lock across each step, however many resources the step
// books - a locked instruction per resource was a third of the model's cost).
class alignas(64) Timeline {
  public:
    // Busy intervals kept. Older ones are forgotten, and the resource counts as busy
    // until the end of the newest one forgotten: a request that old is booked from
    // there (it is late already), never into a gap the timeline no longer knows.
    static constexpr size_t kHistory = 64;

    // Books `occupancy` ns at the earliest time >= `arrival` the resource is free for
    // that long, and returns the start. occupancy 0 books nothing and returns arrival.
    uint64_t reserve(uint64_t arrival, uint64_t occupancy);
    // The end of the last booked interval (0 when idle since creation).
    uint64_t busy_until() const;
    // Total booked ns (utilisation counters).
    uint64_t busy_total() const;

  private:
    struct Interval {
        uint64_t start;
        uint64_t end;
    };
    Interval &at(size_t i) { return busy_[first_ + i]; }
    const Interval &at(size_t i) const { return busy_[first_ + i]; }
    // Before at(index); forgets the oldest if full. Leaves last_end_ to book_late().
    void insert(size_t index, Interval interval);
    void append(Interval interval);  // insert(count_, interval), last_end_ kept
    bool forget_oldest_if_full();    // true if at(0) was forgotten
    void slide_back_if_at_end();     // moves the window to the front when it reached the end
    void erase(size_t index);
    uint64_t book_late(uint64_t arrival, uint64_t occupancy);  // reserve() before last_end_

    // Everything reserve()'s common case reads - an arrival after everything booked -
    // sits in the first cache line: threads that book the same resource (the two ends
    // of a connection, each on its own core) pass the timeline between their caches,
    // and a second line read before the decision (the newest interval's end) was a
    // second miss on every booking. The intervals themselves are only written there.
    size_t first_ = 0;
    size_t count_ = 0;
    uint64_t last_end_ = 0;  // at(count_ - 1).end; 0 when count_ == 0
    uint64_t forgotten_until_ = 0;
    uint64_t busy_total_ = 0;
    // The kept intervals, at(0) .. at(count_ - 1): sorted by start, disjoint and not
    // adjacent (adjacent bookings merge). A contiguous window that slides forward in
    // twice the history as old ones are forgotten, moved back to the front when it
    // reaches the end: a booking inside it is one memmove, a lookup a binary search.
    alignas(64) std::array<Interval, 2 * kHistory> busy_{};
};

// Defined here, not in timeline.cpp: the model books about fifteen intervals per
// message, nearly all through these fast paths, and a call per booking (with the
// model's time conversions around it, now inline too) was about a sixth of the model's
// instructions per packet of a 64 KiB write (callgrind).
inline bool Timeline::forget_oldest_if_full() {
    if (count_ != kHistory) return false;
    forgotten_until_ = std::max(forgotten_until_, at(0).end);
    ++first_;
    --count_;
    return true;
}

inline void Timeline::slide_back_if_at_end() {
    if (first_ + count_ != busy_.size()) return;
    std::memmove(busy_.data(), &at(0), count_ * sizeof(Interval));
    first_ = 0;
}

inline void Timeline::append(Interval interval) {
    // insert(count_, interval), without the moves a booking inside the window needs.
    forget_oldest_if_full();
    slide_back_if_at_end();
    at(count_++) = interval;
    last_end_ = interval.end;
}

inline uint64_t Timeline::reserve(uint64_t arrival, uint64_t occupancy) {
    if (occupancy == 0) return arrival;
    arrival = std::max(arrival, forgotten_until_);
    busy_total_ += occupancy;
    // The common case: the host runs requests roughly in model-time order, so a
    // request usually arrives after everything booked.
    if (count_ != 0 && last_end_ == arrival) {
        at(count_ - 1).end = arrival + occupancy;
        last_end_ = arrival + occupancy;
    } else if (count_ == 0 || arrival > last_end_) {
        append(Interval{arrival, arrival + occupancy});
    } else if (arrival >= at(count_ - 1).start) {
        // Inside the newest interval: the resource is backlogged (a DMA channel slower
        // than the link, every packet of a run), and every gap is behind the arrival.
        // book_late() would find the same start, after everything, joined to it.
        const uint64_t start = last_end_;
        last_end_ = start + occupancy;
        at(count_ - 1).end = last_end_;
        return start;
    } else {
        return book_late(arrival, occupancy);
    }
    return arrival;
}

// An on-device cache of fixed-size entries (QP contexts, MPT entries, MTT entries),
// least recently used out. Not synchronised, like Timeline.
//
// Flat: the entries live in one vector linked by indices (most recent first) and are
// found through an open-addressing index (linear probing, at most half full), so a
// lookup is a hash and a probe or two and a hit relinks two indices - no node per entry
// and no pointer chasing. The model touches one MTT entry per packet, so this is on the
// data path. Storage grows with the entries held, up to the capacity.
class alignas(64) LruCache {
  public:
    explicit LruCache(size_t capacity) : capacity_(capacity) {}
    // Looks `key` up and makes it the most recent; true on a hit. A miss inserts it,
    // evicting the least recent entry when full. A cache of capacity 0 always misses.
    bool touch(uint64_t key) {
        if (head_ != kNone && nodes_[head_].key == key) {  // the common case: the same QP again
            ++hits_;
            return true;
        }
        return touch_not_first(key);
    }
    // Forgets `key` (the object was destroyed or re-registered).
    void erase(uint64_t key);
    size_t capacity() const { return capacity_; }
    size_t size() const { return size_; }
    uint64_t hits() const;
    uint64_t misses() const;

  private:
    static constexpr uint32_t kNone = UINT32_MAX;
    struct Node {
        uint64_t key;
        uint32_t prev;  // towards the most recent
        uint32_t next;  // towards the least recent
    };
    size_t home_slot(uint64_t key) const;
    uint32_t find(uint64_t key) const;  // node index, or kNone
    void index_insert(uint64_t key, uint32_t node);
    void index_erase(uint64_t key);  // key must be indexed
    void unlink(uint32_t node);
    void push_front(uint32_t node);
    bool touch_not_first(uint64_t key);  // touch() of a key that is not the most recent

    // What touch()'s common case reads and writes - a hit on the most recent key - sits
    // in the first cache line, as in Timeline: the two ends of a connection, each on its
    // own core, touch the same caches, and a second line was a second miss.
    const size_t capacity_;
    std::vector<Node> nodes_;
    uint32_t head_ = kNone;  // most recent
    uint32_t tail_ = kNone;  // least recent
    uint64_t hits_ = 0;
    uint64_t misses_ = 0;
    size_t size_ = 0;
    std::vector<uint32_t> free_;   // node slots erase() gave back
    std::vector<uint32_t> index_;  // node + 1; 0 = empty. Size a power of two.
    unsigned index_shift_ = 64;    // 64 - log2(index_.size())
};

}  // namespace softndk::emu::time
