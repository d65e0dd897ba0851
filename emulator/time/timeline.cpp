#include "time/timeline.hpp"

#include <algorithm>

namespace softndk::emu::time {

uint64_t Timeline::reserve(uint64_t arrival, uint64_t occupancy) {
    if (occupancy == 0) return arrival;
    std::lock_guard lock(mutex_);
    arrival = std::max(arrival, forgotten_until_);
    // First interval that ends after the arrival: the gaps before it are in the past.
    auto it = std::upper_bound(busy_.begin(), busy_.end(), arrival,
                               [](uint64_t t, const Interval &i) { return t < i.end; });
    uint64_t start = arrival;
    for (; it != busy_.end(); ++it) {
        if (start < it->start && it->start - start >= occupancy) break;  // fits in the gap
        start = std::max(start, it->end);
    }
    const uint64_t end = start + occupancy;
    busy_total_ += occupancy;
    // Insert [start, end) before `it`, merging with neighbours it touches.
    const bool joins_prev = it != busy_.begin() && std::prev(it)->end == start;
    const bool joins_next = it != busy_.end() && it->start == end;
    if (joins_prev && joins_next) {
        std::prev(it)->end = it->end;
        busy_.erase(it);
    } else if (joins_prev) {
        std::prev(it)->end = end;
    } else if (joins_next) {
        it->start = start;
    } else {
        busy_.insert(it, Interval{start, end});
        if (busy_.size() > kHistory) {
            forgotten_until_ = busy_.front().end;
            busy_.erase(busy_.begin());
        }
    }
    return start;
}

uint64_t Timeline::busy_until() const {
    std::lock_guard lock(mutex_);
    return busy_.empty() ? 0 : busy_.back().end;
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
