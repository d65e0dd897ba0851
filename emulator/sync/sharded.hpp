// sharded.hpp - per-thread shards for state that every packet touches: a reader-writer
// lock whose readers share no cache line, and the thread-to-shard map it and the
// device's counters use.
//
// Why: in embedded mode the engines run on the consumers' own threads, and the two ends
// of a ping-pong run on two cores. Every word both ends write - a reader count, a
// counter - moves its cache line between the cores on each message, a miss on each
// end's critical path (~75 ns on the hosts we measured, bench/limits/cacheline_rtt.cpp).
// A std::shared_mutex is such a word: its readers all increment one reader count. Here
// each thread's readers lock a mutex of their own shard, so lookups by two threads stay
// in their own cores' caches; a writer, which is rare (creates, destroys, attaches),
// locks every shard.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <shared_mutex>

namespace softndk::emu {

inline constexpr size_t kThreadShards = 8;

// This thread's shard, 0..kThreadShards-1: threads take the next one in turn the first
// time they ask, and keep it for their life. With more than kThreadShards threads two
// share a shard, which stays correct and only shares the line again.
inline size_t thread_shard() {
    static std::atomic<size_t> next{0};
    thread_local const size_t mine = next.fetch_add(1, std::memory_order_relaxed) % kThreadShards;
    return mine;
}

// A SharedMutex (std::shared_lock / std::unique_lock / std::scoped_lock work with it).
// lock_shared() and unlock_shared() must run on the same thread, as the shard is the
// calling thread's. Readers of one thread may nest (glibc's rwlock prefers readers,
// so a waiting writer does not block a nested reader). A writer takes the shards in
// index order, so two writers cannot deadlock; lock() costs kThreadShards lock
// operations, which is why this suits read-mostly tables only.
class ShardedSharedMutex {
  public:
    void lock_shared() { shards_[thread_shard()].mutex.lock_shared(); }
    bool try_lock_shared() { return shards_[thread_shard()].mutex.try_lock_shared(); }
    void unlock_shared() { shards_[thread_shard()].mutex.unlock_shared(); }

    void lock() {
        for (Shard &s : shards_)
            s.mutex.lock();
    }
    bool try_lock() {
        for (size_t i = 0; i < kThreadShards; ++i) {
            if (shards_[i].mutex.try_lock()) continue;
            while (i-- > 0)
                shards_[i].mutex.unlock();
            return false;
        }
        return true;
    }
    void unlock() {
        for (size_t i = kThreadShards; i-- > 0;)
            shards_[i].mutex.unlock();
    }

  private:
    struct alignas(64) Shard {
        std::shared_mutex mutex;
    };
    std::array<Shard, kThreadShards> shards_;
};

}  // namespace softndk::emu
