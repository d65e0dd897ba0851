#include "time/timeline.hpp"

#include <algorithm>
#include <cstring>

namespace softndk::emu::time {

uint64_t Timeline::reserve(uint64_t arrival, uint64_t occupancy) {
    if (occupancy == 0) return arrival;
    arrival = std::max(arrival, forgotten_until_);
    busy_total_ += occupancy;
    // The common case: the host runs requests roughly in model-time order, so a
    // request usually arrives after everything booked.
    if (count_ == 0 || arrival >= at(count_ - 1).end) {
        if (count_ != 0 && at(count_ - 1).end == arrival) {
            at(count_ - 1).end = arrival + occupancy;
        } else {
            insert(count_, Interval{arrival, arrival + occupancy});
        }
        return arrival;
    }
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
    return start;
}

void Timeline::insert(size_t index, Interval interval) {
    if (count_ == kHistory) {  // forget the oldest
        forgotten_until_ = std::max(forgotten_until_, at(0).end);
        ++first_;
        --count_;
        if (index == 0) {  // older than everything kept: forgotten at once
            forgotten_until_ = std::max(forgotten_until_, interval.end);
            return;
        }
        --index;
    }
    if (first_ + count_ == busy_.size()) {  // the window reached the end: back to the front
        std::memmove(busy_.data(), &at(0), count_ * sizeof(Interval));
        first_ = 0;
    }
    if (index < count_)  // else appended: the common case, no call
        std::memmove(&at(index + 1), &at(index), (count_ - index) * sizeof(Interval));
    at(index) = interval;
    ++count_;
}

void Timeline::erase(size_t index) {
    std::memmove(&at(index), &at(index + 1), (count_ - index - 1) * sizeof(Interval));
    --count_;
}

uint64_t Timeline::busy_until() const {
    return count_ == 0 ? 0 : at(count_ - 1).end;
}

uint64_t Timeline::busy_total() const {
    return busy_total_;
}

bool LruCache::touch(uint64_t key) {
    if (capacity_ == 0) {
        ++misses_;
        return false;
    }
    if (!order_.empty() && order_.front() == key) {  // the common case: the same QP again
        ++hits_;
        return true;
    }
    if (auto it = where_.find(key); it != where_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        ++hits_;
        return true;
    }
    ++misses_;
    if (order_.size() >= capacity_) {
        where_.erase(order_.back());
        order_.pop_back();
    }
    order_.push_front(key);
    where_[key] = order_.begin();
    return false;
}

void LruCache::erase(uint64_t key) {
    if (auto it = where_.find(key); it != where_.end()) {
        order_.erase(it->second);
        where_.erase(it);
    }
}

uint64_t LruCache::hits() const {
    return hits_;
}

uint64_t LruCache::misses() const {
    return misses_;
}

}  // namespace softndk::emu::time
