#include <catch2/catch.hpp>

#include <list>
#include <unordered_map>

#include <algorithm>
#include <random>
#include <vector>

#include "time/timeline.hpp"

using softndk::emu::time::LruCache;
using softndk::emu::time::Timeline;

TEST_CASE("A zero occupancy books nothing", "[timeline]") {
    Timeline t;
    CHECK(t.reserve(100, 0) == 100);
    CHECK(t.busy_until() == 0);
    CHECK(t.busy_total() == 0);
}

TEST_CASE("An idle resource starts a request when it arrives", "[timeline]") {
    Timeline t;
    CHECK(t.reserve(100, 10) == 100);
    CHECK(t.busy_until() == 110);
    CHECK(t.busy_total() == 10);
}

TEST_CASE("Requests queue behind each other in arrival order", "[timeline]") {
    Timeline t;
    CHECK(t.reserve(0, 10) == 0);
    CHECK(t.reserve(0, 10) == 10);
    CHECK(t.reserve(5, 10) == 20);
    CHECK(t.reserve(100, 10) == 100);
    CHECK(t.busy_until() == 110);
}

TEST_CASE("A request processed late fills the gap it fits in", "[timeline]") {
    Timeline t;
    REQUIRE(t.reserve(100, 10) == 100);  // [100, 110)
    // Arrived earlier in model time but processed later by the host: it goes before.
    CHECK(t.reserve(50, 20) == 50);  // [50, 70)
    // Too long for the gap [70, 100): after the busy block.
    CHECK(t.reserve(60, 40) == 110);
    // Exactly fills [70, 100).
    CHECK(t.reserve(70, 30) == 70);
    CHECK(t.reserve(0, 1) == 0);
    CHECK(t.busy_total() == 101);
}

TEST_CASE("A request arriving inside a busy interval starts at its end", "[timeline]") {
    Timeline t;
    t.reserve(0, 100);
    CHECK(t.reserve(40, 5) == 100);
}

TEST_CASE("A request arriving at the start of the newest interval queues behind it", "[timeline]") {
    Timeline t;
    t.reserve(0, 10);
    t.reserve(50, 10);              // [0, 10) and [50, 60): a gap before the newest interval
    CHECK(t.reserve(49, 1) == 49);  // just before it, in a gap it fits: [49, 60)
    CHECK(t.reserve(48, 5) == 60);
    CHECK(t.reserve(64, 5) == 65);
    CHECK(t.busy_until() == 70);
    // The gap before the newest interval is still there for a request that fits it.
    CHECK(t.reserve(20, 29) == 20);
    CHECK(t.reserve(10, 11) == 70);
}

TEST_CASE("History is bounded: a request older than it starts at its beginning", "[timeline]") {
    Timeline t;
    // Disjoint intervals, more than the history keeps.
    for (uint64_t i = 0; i < Timeline::kHistory + 10; ++i)
        t.reserve(1000 + i * 100, 10);
    // The oldest intervals were forgotten: the resource counts as busy until the end
    // of the newest one forgotten, so a very old request is booked from there.
    // Forgotten: the first 10 intervals; the newest of them is [1900, 1910).
    CHECK(t.reserve(0, 10) == 1910);
    // A gap the timeline still knows is used: [2010, 2100) lies between kept intervals.
    CHECK(t.reserve(2005, 10) == 2010);
}

TEST_CASE("Back-to-back bookings merge and cost no history", "[timeline]") {
    Timeline t;
    for (uint64_t i = 0; i < 10 * Timeline::kHistory; ++i)
        REQUIRE(t.reserve(0, 3) == i * 3);
    // One interval [0, 3n): a gap-seeking request still sees the resource's start.
    CHECK(t.reserve(0, 1) == 30 * Timeline::kHistory);
}

// Timeline's booking rules written plainly, for the randomised comparison below: a
// sorted vector of busy intervals, the oldest forgotten beyond kHistory.
class ReferenceTimeline {
  public:
    uint64_t reserve(uint64_t arrival, uint64_t occupancy) {
        if (occupancy == 0) return arrival;
        arrival = std::max(arrival, forgotten_until_);
        size_t i = 0;
        while (i < busy_.size() && busy_[i].second <= arrival)
            ++i;
        uint64_t start = arrival;
        for (; i < busy_.size(); ++i) {
            if (start < busy_[i].first && busy_[i].first - start >= occupancy) break;
            start = std::max(start, busy_[i].second);
        }
        const uint64_t end = start + occupancy;
        const bool joins_prev = i > 0 && busy_[i - 1].second == start;
        const bool joins_next = i < busy_.size() && busy_[i].first == end;
        if (joins_prev && joins_next) {
            busy_[i - 1].second = busy_[i].second;
            busy_.erase(busy_.begin() + static_cast<std::ptrdiff_t>(i));
        } else if (joins_prev) {
            busy_[i - 1].second = end;
        } else if (joins_next) {
            busy_[i].first = start;
        } else {
            if (busy_.size() == Timeline::kHistory) {
                forgotten_until_ = std::max(forgotten_until_, busy_.front().second);
                busy_.erase(busy_.begin());
                if (i == 0) {
                    forgotten_until_ = std::max(forgotten_until_, end);
                    return start;
                }
                --i;
            }
            busy_.insert(busy_.begin() + static_cast<std::ptrdiff_t>(i), {start, end});
        }
        return start;
    }
    uint64_t busy_until() const { return busy_.empty() ? 0 : busy_.back().second; }
    uint64_t newest_start() const { return busy_.empty() ? 0 : busy_.back().first; }

  private:
    std::vector<std::pair<uint64_t, uint64_t>> busy_;
    uint64_t forgotten_until_ = 0;
};

// Books 50,000 requests, each (arrival, occupancy) = next(random, reference, i), on a
// Timeline and on the reference, and requires the same start and the same end of the
// newest booking every time.
template <class Next>
void compare_with_reference(uint64_t seed, Next next) {
    std::mt19937_64 random(seed);
    Timeline timeline;
    ReferenceTimeline reference;
    for (int i = 0; i < 50000; ++i) {
        const auto [arrival, occupancy] = next(random, reference, i);
        INFO("booking " << i << ": arrival " << arrival << ", occupancy " << occupancy);
        REQUIRE(timeline.reserve(arrival, occupancy) == reference.reserve(arrival, occupancy));
        REQUIRE(timeline.busy_until() == reference.busy_until());
    }
}

using Booking = std::pair<uint64_t, uint64_t>;

TEST_CASE("A backlogged resource books as the plain rules do", "[timeline]") {
    // Arrivals faster than the resource serves them (a DMA channel slower than the
    // link): most land inside the newest interval, some exactly at its start or end,
    // some before it, in the gaps an idle spell left.
    std::uniform_int_distribution<uint64_t> step(0, 6), occupancy(5, 9), pick(0, 9);
    uint64_t arrival = 100;
    compare_with_reference(
        7, [&](std::mt19937_64 &random, const ReferenceTimeline &reference, int i) -> Booking {
            arrival += i % 500 == 0 ? 2000 : step(random);  // now and then an idle spell
            const uint64_t busy = occupancy(random);
            const uint64_t newest = reference.newest_start();
            const uint64_t p = pick(random);
            if (p == 0) return {reference.busy_until(), busy};
            if (p == 1) return {newest, busy};
            if (p == 2 && newest > busy + 1)  // just fits before it, or just does not
                return {newest - busy - step(random) % 2, busy};
            if (p == 3 && arrival > 300) return {arrival - 300, busy};
            return {arrival, busy};
        });
}

TEST_CASE("Out-of-order bookings over many histories match the plain rules", "[timeline]") {
    // Requests arrive around a rising base, out of order (as when the host runs 16 QPs
    // one after another), so bookings land in the middle, merge, and are forgotten while
    // the kept window slides through its storage many times.
    std::uniform_int_distribution<uint64_t> jitter(0, 400), length(1, 20), gap(10, 60);
    uint64_t base = 1000;
    compare_with_reference(
        12, [&](std::mt19937_64 &random, const ReferenceTimeline &, int i) -> Booking {
            base += gap(random);
            const uint64_t arrival = base - jitter(random) % std::min<uint64_t>(base, 400);
            return {arrival, i % 97 == 0 ? 0 : length(random)};
        });
}

TEST_CASE("LRU cache: a miss inserts, a hit refreshes, the least recent goes", "[lru]") {
    LruCache c(2);
    CHECK_FALSE(c.touch(1));
    CHECK_FALSE(c.touch(2));
    CHECK(c.touch(1));        // 1 is now the most recent
    CHECK_FALSE(c.touch(3));  // evicts 2
    CHECK(c.touch(1));
    CHECK_FALSE(c.touch(2));  // 2 was gone; evicts 3
    CHECK_FALSE(c.touch(3));
    CHECK(c.hits() == 2);
    CHECK(c.misses() == 5);
}

TEST_CASE("LRU cache: erase forgets an entry, capacity 0 always misses", "[lru]") {
    LruCache c(4);
    c.touch(7);
    c.erase(7);
    CHECK_FALSE(c.touch(7));
    c.erase(99);  // unknown: nothing happens
    LruCache none(0);
    CHECK_FALSE(none.touch(1));
    CHECK_FALSE(none.touch(1));
    CHECK(none.misses() == 2);
}

TEST_CASE("LRU cache: a working set larger than the cache misses every time", "[lru]") {
    LruCache c(8);
    uint64_t hits = 0;
    for (int round = 0; round < 4; ++round)
        for (uint64_t k = 0; k < 9; ++k)
            hits += c.touch(k) ? 1 : 0;
    CHECK(hits == 0);  // cyclic access over capacity + 1 defeats LRU
    LruCache fits(9);
    for (int round = 0; round < 4; ++round)
        for (uint64_t k = 0; k < 9; ++k)
            fits.touch(k);
    CHECK(fits.hits() == 27);
}

TEST_CASE("LRU cache: hits, misses and evictions match a reference LRU over random use", "[lru]") {
    // The reference: a list in recency order and a map into it, the textbook LRU.
    struct Reference {
        explicit Reference(size_t capacity) : capacity(capacity) {}
        bool touch(uint64_t key) {
            if (auto it = where.find(key); it != where.end()) {
                order.splice(order.begin(), order, it->second);
                return true;
            }
            if (order.size() >= capacity) {
                where.erase(order.back());
                order.pop_back();
            }
            order.push_front(key);
            where[key] = order.begin();
            return false;
        }
        void erase(uint64_t key) {
            if (auto it = where.find(key); it != where.end()) {
                order.erase(it->second);
                where.erase(it);
            }
        }
        size_t capacity;
        std::list<uint64_t> order;
        std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
    };
    for (const size_t capacity : {1u, 3u, 64u, 1000u}) {
        LruCache cache(capacity);
        Reference reference(capacity);
        uint64_t state = 0x1234567 + capacity;
        for (int i = 0; i < 200000; ++i) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            // Keys from a range a little larger than the cache, some far apart (hash
            // collisions in the index), and an erase now and then.
            const uint64_t key = (state >> 33) % (capacity + capacity / 2 + 2) * 0x10001;
            if ((state >> 20) % 16 == 0) {
                cache.erase(key);
                reference.erase(key);
                continue;
            }
            REQUIRE(cache.touch(key) == reference.touch(key));
            REQUIRE(cache.size() == reference.order.size());
        }
    }
}
