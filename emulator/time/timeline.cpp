#include "time/timeline.hpp"

#include <algorithm>

namespace softndk::emu::time {

uint64_t Timeline::reserve(uint64_t arrival, uint64_t occupancy) {
    if (occupancy == 0) return arrival;
    std::lock_guard lock(mutex_);
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
    size_t i = 0;
    size_t n = count_;
    while (n > 0) {  // binary search over the ring
        const size_t half = n / 2;
        if (at(i + half).end <= arrival) {
            i += half + 1;
            n -= half + 1;
        } else {
            n = half;
        }
    }
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
        head_ = (head_ + 1) % kHistory;
        --count_;
        if (index == 0) {  // older than everything kept: forgotten at once
            forgotten_until_ = std::max(forgotten_until_, interval.end);
            return;
        }
        --index;
    }
    for (size_t k = count_; k > index; --k)
        at(k) = at(k - 1);
    at(index) = interval;
    ++count_;
}

void Timeline::erase(size_t index) {
    for (size_t k = index; k + 1 < count_; ++k)
        at(k) = at(k + 1);
    --count_;
}

uint64_t Timeline::busy_until() const {
    std::lock_guard lock(mutex_);
    return count_ == 0 ? 0 : at(count_ - 1).end;
}

uint64_t Timeline::busy_total() const {
    std::lock_guard lock(mutex_);
    return busy_total_;
}

bool LruCache::touch(uint64_t key) {
    std::lock_guard lock(mutex_);
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
    std::lock_guard lock(mutex_);
    if (auto it = where_.find(key); it != where_.end()) {
        order_.erase(it->second);
        where_.erase(it);
    }
}

uint64_t LruCache::hits() const {
    std::lock_guard lock(mutex_);
    return hits_;
}

uint64_t LruCache::misses() const {
    std::lock_guard lock(mutex_);
    return misses_;
}

}  // namespace softndk::emu::time
