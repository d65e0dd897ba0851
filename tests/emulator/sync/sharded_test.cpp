#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "sync/sharded.hpp"

using softndk::emu::kThreadShards;
using softndk::emu::ShardedSharedMutex;
using softndk::emu::thread_shard;

namespace {
// Runs `fn` on a new thread and returns what it returned.
template <typename Fn>
auto on_another_thread(Fn fn) {
    decltype(fn()) result{};
    std::thread([&] { result = fn(); }).join();
    return result;
}

// Whether a new thread (on the next shard in turn) can take a read lock at once.
bool another_thread_reads(ShardedSharedMutex &m) {
    return on_another_thread([&m] {
        const bool got = m.try_lock_shared();
        if (got) m.unlock_shared();
        return got;
    });
}

// A reader on another thread that holds `m` from when `step` is 1 until it is set to 2.
std::thread reader_until_step_two(ShardedSharedMutex &m, std::atomic<int> &step) {
    std::thread reader([&m, &step] {
        std::shared_lock lock(m);
        step = 1;
        while (step.load() != 2)
            std::this_thread::yield();
    });
    while (step.load() != 1)
        std::this_thread::yield();
    return reader;
}
}  // namespace

TEST_CASE("A thread keeps its shard for its life and it is in range", "[sharded]") {
    const size_t mine = thread_shard();
    CHECK(mine < kThreadShards);
    CHECK(thread_shard() == mine);
    std::set<size_t> seen;
    for (size_t i = 0; i < kThreadShards; ++i)
        seen.insert(on_another_thread([] { return thread_shard(); }));
    // Threads take the shards in turn: kThreadShards threads in a row use every one.
    CHECK(seen.size() == kThreadShards);
}

TEST_CASE("A reader does not keep another thread from reading", "[sharded]") {
    ShardedSharedMutex m;
    std::shared_lock held(m);
    CHECK(another_thread_reads(m));
}

TEST_CASE("A reader on any thread keeps a writer out until it leaves", "[sharded]") {
    // kThreadShards threads in a row cover every shard: a writer must see each.
    for (size_t i = 0; i < kThreadShards; ++i) {
        ShardedSharedMutex m;
        std::atomic<int> step{0};
        std::thread reader = reader_until_step_two(m, step);
        CHECK_FALSE(m.try_lock());
        step = 2;
        reader.join();
        CHECK(m.try_lock());
        m.unlock();
    }
}

TEST_CASE("A writer keeps out readers of every thread", "[sharded]") {
    ShardedSharedMutex m;
    std::unique_lock held(m);
    for (size_t i = 0; i < kThreadShards; ++i) {
        CHECK_FALSE(another_thread_reads(m));
    }
}

TEST_CASE("A try_lock that fails leaves no shard locked", "[sharded]") {
    ShardedSharedMutex m;
    // A reader on the last shard: try_lock takes every other shard before it fails.
    // Threads take the shards in turn, so one of kThreadShards new threads has it.
    std::atomic<int> step{0};
    std::thread reader;
    for (size_t i = 0; i < kThreadShards && step.load() == 0; ++i) {
        std::atomic<bool> done{false};
        reader = std::thread([&] {
            if (thread_shard() != kThreadShards - 1) {
                done = true;
                return;
            }
            std::shared_lock lock(m);
            step = 1;
            while (step.load() != 2)
                std::this_thread::yield();
        });
        while (!done.load() && step.load() == 0)
            std::this_thread::yield();
        if (step.load() == 0) reader.join();
    }
    REQUIRE(step.load() == 1);
    CHECK_FALSE(m.try_lock());
    // Every other thread still reads: nothing the failed try_lock took is held.
    for (size_t i = 0; i < kThreadShards; ++i) {
        CHECK(another_thread_reads(m));
    }
    step = 2;
    reader.join();
    CHECK(m.try_lock());
    m.unlock();
}

TEST_CASE("Writers and readers of several threads see every write whole", "[sharded]") {
    ShardedSharedMutex m;
    uint64_t a = 0, b = 0;  // written together under the lock: a == b for any reader
    std::atomic<bool> torn{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 2000; ++i) {
                if ((i + t) % 4 == 0) {
                    std::lock_guard lock(m);
                    ++a;
                    ++b;
                } else {
                    std::shared_lock lock(m);
                    if (a != b) torn = true;
                }
            }
        });
    }
    for (auto &t : threads)
        t.join();
    CHECK_FALSE(torn.load());
    CHECK(a == b);
    CHECK(a == 2000);  // each thread wrote on 500 of its 2000 steps
}
