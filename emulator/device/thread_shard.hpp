// thread_shard.hpp - which block of a per-thread sharded value this thread writes.
//
// The engines run on the consumers' threads (embedded mode) and on the daemon's, so a
// value every packet updates (a counter, the device's latest model time) would move
// its cache line between the cores of the two ends of a ping-pong on each packet: a
// miss on both ends' critical paths. Such a value keeps one block per shard, each on
// its own cache line; a thread writes only its own (shared with another thread only
// when more threads than shards write at once, which stays correct), and a reader
// combines them.
#pragma once

#include <atomic>
#include <cstddef>

namespace softndk::emu {

// This thread's shard among `shards`: threads take the next number in turn, the first
// time they ask, so the first `shards` threads each have one of their own.
inline size_t thread_shard(size_t shards) {
    static std::atomic<size_t> next{0};
    thread_local const size_t mine = next.fetch_add(1, std::memory_order_relaxed);
    return mine % shards;
}

}  // namespace softndk::emu
