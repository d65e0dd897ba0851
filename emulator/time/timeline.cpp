#include "time/timeline.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace softndk::emu::time {

uint64_t Timeline::book_late(uint64_t arrival, uint64_t occupancy) {
    // First interval that ends after the arrival: the gaps before it are in the past.
    // A branchless binary search (the halving compiles to conditional moves): where a
    // late request lands is unpredictable, and mispredicted branches cost more than
    // the search's few loads.
    const Interval *kept = &at(0);
    const Interval *base = kept;
    for (size_t n = count_; n > 1;) {
        const size_t half = n / 2;
        base = base[half - 1].end <= arrival ? base + half : base;
        n -= half;
    }
    size_t i = static_cast<size_t>(base - kept) + (base->end <= arrival ? 1 : 0);
    uint64_t start = arrival;
    for (; i < count_; ++i) {
        const Interval &b = at(i);
        if (start < b.start && b.start - start >= occupancy) break;  // fits in the gap
        start = std::max(start, b.end);
    }
    const uint64_t end = start + occupancy;
    // Book [start, end) before interval i, merging with the neighbours it touches.
    const bool joins_prev = i > 0 && at(i - 1).end == start;
    const bool joins_next = i < count_ && at(i).start == end;
    if (joins_prev && joins_next) {
        at(i - 1).end = at(i).end;
        erase(i);
    } else if (joins_prev) {
        at(i - 1).end = end;
    } else if (joins_next) {
        at(i).start = start;
    } else {
        insert(i, Interval{start, end});
    }
    last_end_ = count_ == 0 ? 0 : at(count_ - 1).end;
    return start;
}

void Timeline::insert(size_t index, Interval interval) {
    if (forget_oldest_if_full()) {
        if (index == 0) {  // older than everything kept: forgotten at once
            forgotten_until_ = std::max(forgotten_until_, interval.end);
            return;
        }
        --index;
    }
    slide_back_if_at_end();
    if (index < count_)  // else it goes at the end
        std::memmove(&at(index + 1), &at(index), (count_ - index) * sizeof(Interval));
    at(index) = interval;
    ++count_;  // book_late() sets last_end_ after every insert()
}

void Timeline::erase(size_t index) {
    std::memmove(&at(index), &at(index + 1), (count_ - index - 1) * sizeof(Interval));
    --count_;
}

uint64_t Timeline::busy_until() const {
    return last_end_;
}

uint64_t Timeline::busy_total() const {
    return busy_total_;
}

inline size_t LruCache::home_slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> index_shift_);
}

inline uint32_t LruCache::find(uint64_t key) const {
    if (index_.empty()) return kNone;
    const size_t mask = index_.size() - 1;
    for (size_t i = home_slot(key);; i = (i + 1) & mask) {
        const uint32_t slot = index_[i];
        if (slot == 0) return kNone;
        if (nodes_[slot - 1].key == key) return slot - 1;
    }
}

void LruCache::index_insert(uint64_t key, uint32_t node) {
    if ((size_ + 1) * 2 > index_.size()) {
        // Double the index (at most half full keeps the probes short) and re-place all.
        const size_t slots = std::max<size_t>(16, index_.size() * 2);
        index_.assign(slots, 0);
        index_shift_ = 64 - static_cast<unsigned>(std::countr_zero(slots));
        for (uint32_t n = head_; n != kNone; n = nodes_[n].next) {
            size_t i = home_slot(nodes_[n].key);
            while (index_[i] != 0)
                i = (i + 1) & (slots - 1);
            index_[i] = n + 1;
        }
    }
    const size_t mask = index_.size() - 1;
    size_t i = home_slot(key);
    while (index_[i] != 0)
        i = (i + 1) & mask;
    index_[i] = node + 1;
}

void LruCache::index_erase(uint64_t key) {
    const size_t mask = index_.size() - 1;
    size_t hole = home_slot(key);
    while (nodes_[index_[hole] - 1].key != key)
        hole = (hole + 1) & mask;
    // Backward-shift deletion: move up every later entry of the probe run that may
    // sit in the hole (its home slot is not cyclically in (hole, j]), so that no lookup
    // stops early at an empty slot.
    for (size_t j = (hole + 1) & mask; index_[j] != 0; j = (j + 1) & mask) {
        const size_t home = home_slot(nodes_[index_[j] - 1].key);
        const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays) continue;
        index_[hole] = index_[j];
        hole = j;
    }
    index_[hole] = 0;
}

inline void LruCache::unlink(uint32_t node) {
    Node &n = nodes_[node];
    (n.prev == kNone ? head_ : nodes_[n.prev].next) = n.next;
    (n.next == kNone ? tail_ : nodes_[n.next].prev) = n.prev;
}

inline void LruCache::push_front(uint32_t node) {
    nodes_[node].prev = kNone;
    nodes_[node].next = head_;
    (head_ == kNone ? tail_ : nodes_[head_].prev) = node;
    head_ = node;
}

bool LruCache::touch_not_first(uint64_t key) {
    if (capacity_ == 0) {
        ++misses_;
        return false;
    }
    if (const uint32_t n = find(key); n != kNone) {
        unlink(n);
        push_front(n);
        ++hits_;
        return true;
    }
    ++misses_;
    uint32_t n;
    if (size_ >= capacity_) {  // the least recent entry makes room
        n = tail_;
        index_erase(nodes_[n].key);
        unlink(n);
        --size_;
    } else if (!free_.empty()) {
        n = free_.back();
        free_.pop_back();
    } else {
        n = static_cast<uint32_t>(nodes_.size());
        nodes_.push_back({});
    }
    nodes_[n].key = key;
    index_insert(key, n);
    push_front(n);
    ++size_;
    return false;
}

void LruCache::erase(uint64_t key) {
    const uint32_t n = find(key);
    if (n == kNone) return;
    index_erase(key);
    unlink(n);
    free_.push_back(n);
    --size_;
}

uint64_t LruCache::hits() const {
    return hits_;
}

uint64_t LruCache::misses() const {
    return misses_;
}

}  // namespace softndk::emu::time
