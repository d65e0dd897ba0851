// Tests for include/softndk/wake.hpp and common/wake.cpp.
#include "softndk/wake.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <new>
#include <thread>

#include <catch2/catch.hpp>

namespace {

using namespace softndk;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

uint32_t load(const hw::CacheLineU32 &w) {
    return std::atomic_ref(const_cast<uint32_t &>(w.value)).load(std::memory_order_acquire);
}
void store(hw::CacheLineU32 &w, uint32_t v) {
    std::atomic_ref(w.value).store(v, std::memory_order_release);
}

// One MAP_SHARED anonymous page, inherited across fork().
template <class T>
class SharedPage {
  public:
    SharedPage() {
        void *p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        REQUIRE(p != MAP_FAILED);
        value_ = new (p) T{};
    }
    ~SharedPage() { munmap(value_, 4096); }
    T *operator->() const { return value_; }

  private:
    T *value_;
};

}  // namespace

TEST_CASE("wake: the waker skips the system call while the peer is awake", "[wake]") {
    hw::CacheLineU32 sleeping{};
    Waker waker(sleeping);
    for (int i = 0; i < 1000; ++i)
        CHECK_FALSE(waker.notify());
    CHECK(waker.counters().wakes_avoided == 1000);
    CHECK(waker.counters().wakes_issued == 0);
}

TEST_CASE("wake: the waker clears the flag of a sleeping peer and wakes it once", "[wake]") {
    hw::CacheLineU32 sleeping{};
    sleeping.value = 1;
    Waker waker(sleeping);
    CHECK(waker.notify());
    CHECK(load(sleeping) == 0);
    CHECK_FALSE(waker.notify());  // a second doorbell finds the flag already clear
    CHECK(waker.counters().wakes_issued == 1);
    CHECK(waker.counters().wakes_avoided == 1);
}

TEST_CASE("wake: a sleeper with work pending does not sleep", "[wake]") {
    hw::CacheLineU32 sleeping{};
    Sleeper sleeper(sleeping, SpinPolicy::never());
    CHECK(sleeper.wait([] { return true; }, 1s));
    CHECK(sleeper.sleep_once([] { return true; }, 1s));
    CHECK(sleeper.counters().sleeps == 0);
    CHECK(sleeper.counters().sleeps_avoided == 1);
    CHECK(load(sleeping) == 0);
}

TEST_CASE("wake: a sleeper times out and clears its flag", "[wake]") {
    hw::CacheLineU32 sleeping{};
    for (SpinPolicy policy : {SpinPolicy::never(), SpinPolicy{}}) {
        Sleeper sleeper(sleeping, policy);
        const auto t0 = Clock::now();
        CHECK_FALSE(sleeper.wait([] { return false; }, 20ms));
        CHECK(Clock::now() - t0 >= 20ms);
        CHECK(sleeper.counters().timeouts == 1);
        CHECK(sleeper.counters().sleeps >= 1);
        CHECK(load(sleeping) == 0);
    }
}

TEST_CASE("wake: spin_yielding_until polls once without a budget", "[wake]") {
    int polls = 0;
    CHECK_FALSE(spin_yielding_until([&] { return ++polls > 1; }, 0ns));
    CHECK(polls == 1);
    CHECK(spin_yielding_until([&] { return true; }, -1ns));
}

// Spins on `ready` through every SpinEnd::kCpuShared: a test process shares the
// machine's CPUs with others (ctest -j), and a yield that ran one of them ends a spin.
template <class Ready>
SpinEnd spin_past_shared_cpu(Ready &&ready, std::chrono::nanoseconds budget) {
    SpinEnd end;
    while ((end = spin_yielding(ready, budget)) == SpinEnd::kCpuShared) {
    }
    return end;
}

TEST_CASE("wake: spin_yielding_until returns as soon as its condition holds", "[wake]") {
    int polls = 0;
    // Far more polls than one yield interval (256), far less than the budget.
    CHECK(spin_past_shared_cpu([&] { return ++polls == 1000; }, 60s) == SpinEnd::kReady);
    CHECK(polls == 1000);
}

TEST_CASE("wake: spin_yielding_until gives up when its budget has passed", "[wake]") {
    const auto start = Clock::now();
    int polls = 0;
    const SpinEnd end = spin_yielding([&] { return ++polls == 0; }, 2ms);
    CHECK(polls > 256);  // the clock is looked at every 256 polls, not before
    if (end == SpinEnd::kBudgetSpent) {
        CHECK(Clock::now() - start >= 2ms);
    } else {
        CHECK(end == SpinEnd::kCpuShared);  // another process ran here meanwhile
    }
}

TEST_CASE("wake: spin_yielding_until sees another thread's store", "[wake]") {
    std::atomic<bool> ready{false};
    std::thread setter([&] {
        std::this_thread::sleep_for(1ms);
        ready.store(true, std::memory_order_release);
    });
    CHECK(spin_past_shared_cpu([&] { return ready.load(std::memory_order_acquire); }, 60s) ==
          SpinEnd::kReady);
    setter.join();
}

// Pins the calling thread to `cpu` until destroyed, then gives it back its CPUs.
class PinnedTo {
  public:
    explicit PinnedTo(int cpu) {
        REQUIRE(sched_getaffinity(0, sizeof saved_, &saved_) == 0);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    }
    ~PinnedTo() { sched_setaffinity(0, sizeof saved_, &saved_); }
    PinnedTo(const PinnedTo &) = delete;
    PinnedTo &operator=(const PinnedTo &) = delete;

  private:
    cpu_set_t saved_;
};

TEST_CASE("wake: spin_yielding stops when a yield ran another thread on its CPU", "[wake]") {
    // Two spinners on one CPU: this thread and one that busies itself 100 us between
    // yields, so each of this thread's yields hands it the CPU for that long.
    const int cpu = sched_getcpu();
    REQUIRE(cpu >= 0);
    std::atomic<bool> stop{false}, pinned{false};
    std::thread other([&] {
        const PinnedTo here(cpu);
        pinned.store(true, std::memory_order_release);
        while (!stop.load(std::memory_order_relaxed)) {
            const auto until = Clock::now() + 100us;
            while (Clock::now() < until) {
            }
            sched_yield();
        }
    });
    while (!pinned.load(std::memory_order_acquire))
        std::this_thread::yield();
    SpinEnd end;
    {
        const PinnedTo here(cpu);
        end = spin_yielding([] { return false; }, 5s);  // far more than it takes
    }
    stop.store(true);
    other.join();
    CHECK(end == SpinEnd::kCpuShared);
}

TEST_CASE("wake: move_to_another_cpu moves the thread and keeps its affinity", "[wake]") {
    cpu_set_t before;
    REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
    if (CPU_COUNT(&before) < 2) {
        CHECK_FALSE(move_to_another_cpu());  // nowhere to go
        return;
    }
    // Right after the move the thread runs elsewhere. A balancing pass may bring it
    // back at once (the CPU it left is idle, another process keeps the new one busy),
    // so a few tries: a move that does nothing would never be seen elsewhere.
    bool seen_elsewhere = false;
    for (int attempt = 0; attempt < 5 && !seen_elsewhere; ++attempt) {
        const int cpu = sched_getcpu();
        REQUIRE(move_to_another_cpu());
        seen_elsewhere = sched_getcpu() != cpu;
    }
    CHECK(seen_elsewhere);
    cpu_set_t after;
    REQUIRE(sched_getaffinity(0, sizeof after, &after) == 0);
    CHECK(CPU_EQUAL(&before, &after));
}

TEST_CASE("wake: a spinning sleeper finds work without a system call", "[wake]") {
    hw::CacheLineU32 sleeping{};
    Sleeper sleeper(sleeping, SpinPolicy{1000, 1s});
    int polls = 0;
    CHECK(sleeper.wait([&] { return ++polls == 100; }, 1s));
    CHECK(sleeper.counters().spin_hits == 1);
    CHECK(sleeper.counters().sleeps == 0);
}

// Adaptive spinning: a wait whose work came later than the spin time turns the next
// wait's spin off; a wait whose work came within it turns spinning back on.
TEST_CASE("wake: a sleeper stops spinning after late work and spins again after early work",
          "[wake]") {
    hw::CacheLineU32 sleeping{};
    hw::CacheLineU32 work{};
    Sleeper sleeper(sleeping, SpinPolicy{1u << 30, 2ms});
    Waker waker(sleeping);
    auto has_work = [&] { return load(work) != 0; };
    auto publish_after = [&](std::chrono::microseconds delay) {
        return std::thread([&, delay] {
            std::this_thread::sleep_for(delay);
            store(work, 1);
            waker.notify();
        });
    };
    // Late work (50 ms, far beyond the 2 ms spin): the spin misses, a sleep finds it.
    std::thread late = publish_after(50ms);
    CHECK(sleeper.wait(has_work, 5s));
    late.join();
    store(work, 0);
    CHECK(sleeper.counters().spin_hits == 0);
    CHECK(sleeper.counters().spins_skipped == 0);
    CHECK(sleeper.counters().sleeps == 1);
    // So the next wait does not spin; its work comes early (at once), found by the
    // re-check of the sleep protocol.
    int polls = 0;
    CHECK(sleeper.wait([&] { return ++polls >= 2; }, 5s));
    CHECK(sleeper.counters().spins_skipped == 1);
    CHECK(sleeper.counters().spin_hits == 0);
    CHECK(sleeper.counters().sleeps_avoided == 1);
    // That work came within the spin time, so the wait after it spins again.
    polls = 0;
    CHECK(sleeper.wait([&] { return ++polls == 100; }, 5s));
    CHECK(sleeper.counters().spin_hits == 1);
    CHECK(sleeper.counters().spins_skipped == 1);
}

// The window the re-check closes: the sleeper's first look finds nothing, the
// waker then publishes work and rings while the sleeper is not yet marked as
// sleeping (so the ring is skipped). Without "announce, fence, re-check" the
// sleeper would now sleep until its timeout.
TEST_CASE("wake: work published between the check and the sleep is not lost", "[wake]") {
    hw::CacheLineU32 sleeping{};
    hw::CacheLineU32 work{};
    Sleeper sleeper(sleeping, SpinPolicy::never());
    Waker waker(sleeping);
    int calls = 0;
    auto has_work = [&] {
        const bool seen = load(work) != 0;
        if (++calls == 1) {  // the peer runs right after our load
            store(work, 1);
            waker.notify();
        }
        return seen;
    };
    const auto t0 = Clock::now();
    CHECK(sleeper.wait(has_work, 2s));
    CHECK(Clock::now() - t0 < 1s);
    CHECK(waker.counters().wakes_avoided == 1);
    CHECK(sleeper.counters().sleeps == 0);
    CHECK(sleeper.counters().sleeps_avoided == 1);
}

// The invariant that makes wake-ups impossible to lose, tested at the exact
// window the fences close (the store-buffering litmus test): when a sleeper
// announces itself and then looks for work while a waker publishes work and
// then looks for a sleeper, at least one of them must see the other. Without
// the StoreLoad fences x86 lets both loads overtake both stores.
TEST_CASE("wake: announce and claim never both miss (store-buffering litmus)", "[wake]") {
    // Bounded by iterations and by time: the window only opens while both
    // threads run at once, which a loaded 2-vCPU machine makes rare.
#if defined(__SANITIZE_THREAD__)
    constexpr uint32_t kIterations = 50'000;
#else
    constexpr uint32_t kIterations = 1'000'000;
#endif
    const auto stop_at = Clock::now() + 1s;
    hw::CacheLineU32 sleeping{}, work{};
    std::atomic<bool> stop{false};
    std::atomic<uint32_t> arrived{0};
    bool claimed = false;
    uint32_t both_missed = 0;

    auto barrier = [&arrived](uint32_t generation) {
        arrived.fetch_add(1, std::memory_order_acq_rel);
        for (uint32_t spins = 0; arrived.load(std::memory_order_acquire) < 2 * generation;
             ++spins) {
            if (spins % 256 == 255) std::this_thread::yield();
        }
    };
    // A few pause instructions so that the two sides' starts slide past each
    // other over the iterations.
    auto skew = [](uint32_t &lcg) {
        lcg = lcg * 1664525u + 1013904223u;
        for (uint32_t n = (lcg >> 24) % 16; n != 0; --n)
            cpu_relax();
    };

    std::thread waker([&] {
        uint32_t lcg = 12345;
        for (uint32_t i = 0; i < kIterations; ++i) {
            barrier(2 * i + 1);
            if (stop.load(std::memory_order_relaxed)) break;
            skew(lcg);
            std::atomic_ref(work.value).store(1, std::memory_order_release);  // publish
            claimed = claim_sleeper(sleeping);
            barrier(2 * i + 2);
        }
    });
    uint32_t lcg = 777;
    uint32_t done = 0;
    for (; done < kIterations; ++done) {
        const uint32_t i = done;
        if (i % 1024 == 1023 && Clock::now() > stop_at) stop.store(true, std::memory_order_relaxed);
        barrier(2 * i + 1);
        if (stop.load(std::memory_order_relaxed)) break;
        skew(lcg);
        announce_sleep(sleeping);
        const bool saw_work = std::atomic_ref(work.value).load(std::memory_order_acquire) != 0;
        barrier(2 * i + 2);
        both_missed += !saw_work && !claimed;
        std::atomic_ref(sleeping.value).store(0, std::memory_order_relaxed);
        std::atomic_ref(work.value).store(0, std::memory_order_relaxed);
    }
    waker.join();
    std::fprintf(stderr, "wake: store-buffering litmus: %u iterations, %u lost\n", done,
                 both_missed);
    CHECK(both_missed == 0);
}

// Two threads bounce a counter using nothing but the protocol. Every wait has
// a deadline far beyond any wake latency, so a lost wake-up shows up as a
// timeout (a failure), not a hang.
namespace {

struct PingPongResult {
    uint32_t rounds = 0;
    uint64_t timeouts = 0;
    double one_way_ns = 0;
    WakeCounters a, b;  // A's and B's sleeper and waker counters, summed
};

WakeCounters sum(const WakeCounters &x, const WakeCounters &y) {
    WakeCounters s;
    s.wakes_issued = x.wakes_issued + y.wakes_issued;
    s.wakes_avoided = x.wakes_avoided + y.wakes_avoided;
    s.spin_hits = x.spin_hits + y.spin_hits;
    s.sleeps = x.sleeps + y.sleeps;
    s.sleeps_avoided = x.sleeps_avoided + y.sleeps_avoided;
    s.timeouts = x.timeouts + y.timeouts;
    return s;
}

// jitter_ns > 0: each round spins for a pseudo-random budget in [0, jitter_ns),
// which lands the peer's doorbell near the spin -> sleep transition often.
PingPongResult ping_pong(uint32_t rounds, SpinPolicy policy, int64_t jitter_ns) {
    struct alignas(64) Side {
        hw::CacheLineU32 sleeping{};
        hw::CacheLineU32 counter{};
    };
    Side a, b;  // A waits on a.counter (written by B), B on b.counter
    PingPongResult r;
    r.rounds = rounds;
    std::atomic<bool> failed{false};
    constexpr auto kDeadline = 2s;

    auto player = [&](Side &mine, Side &theirs, bool serve, uint32_t seed, WakeCounters &out) {
        Sleeper sleeper(mine.sleeping, policy);
        Waker waker(theirs.sleeping);
        uint32_t lcg = seed;
        for (uint32_t i = 1; i <= rounds && !failed.load(std::memory_order_relaxed); ++i) {
            if (!serve) {
                if (!sleeper.wait([&] { return load(mine.counter) >= i; }, kDeadline)) {
                    failed = true;
                    break;
                }
            }
            store(theirs.counter, i);
            waker.notify();
            if (serve) {
                if (jitter_ns > 0) {
                    lcg = lcg * 1664525u + 1013904223u;
                    sleeper.set_policy(
                        {1u << 20, std::chrono::nanoseconds((lcg >> 8) % jitter_ns)});
                }
                if (!sleeper.wait([&] { return load(mine.counter) >= i; }, kDeadline)) {
                    failed = true;
                    break;
                }
            } else if (jitter_ns > 0) {
                lcg = lcg * 1664525u + 1013904223u;
                sleeper.set_policy({1u << 20, std::chrono::nanoseconds((lcg >> 8) % jitter_ns)});
            }
        }
        out = sum(sleeper.counters(), waker.counters());
    };

    const auto t0 = Clock::now();
    std::thread tb(player, std::ref(b), std::ref(a), false, 7u, std::ref(r.b));
    player(a, b, true, 3u, r.a);
    tb.join();
    const auto elapsed = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    r.one_way_ns = elapsed / (2.0 * rounds);
    r.timeouts = r.a.timeouts + r.b.timeouts;
    if (failed) r.timeouts = std::max<uint64_t>(r.timeouts, 1);
    return r;
}

void report(const char *mode, const PingPongResult &r) {
    const WakeCounters t = sum(r.a, r.b);
    std::fprintf(
        stderr,
        "wake: ping-pong %-14s %u rounds: one-way %8.0f ns | futex wakes %llu, avoided "
        "%llu | sleeps %llu, avoided %llu, spin hits %llu, timeouts %llu\n",
        mode, r.rounds, r.one_way_ns, static_cast<unsigned long long>(t.wakes_issued),
        static_cast<unsigned long long>(t.wakes_avoided), static_cast<unsigned long long>(t.sleeps),
        static_cast<unsigned long long>(t.sleeps_avoided),
        static_cast<unsigned long long>(t.spin_hits), static_cast<unsigned long long>(t.timeouts));
}

}  // namespace

TEST_CASE("wake: ping-pong 20k rounds sleeping every time loses no wake-up", "[wake]") {
    const PingPongResult r = ping_pong(20'000, SpinPolicy::never(), 0);
    report("sleep-only", r);
    CHECK(r.timeouts == 0);
    const WakeCounters t = sum(r.a, r.b);
    CHECK(t.spin_hits == 0);
    // Each announce_sleep() is claimed by at most one waker, and only an
    // announced sleeper is ever woken.
    CHECK(t.wakes_issued <= t.sleeps + t.sleeps_avoided);
    CHECK(t.wakes_issued + t.wakes_avoided == 2 * r.rounds);
}

TEST_CASE("wake: ping-pong 20k rounds with jittered spin budgets loses no wake-up", "[wake]") {
    const PingPongResult r = ping_pong(20'000, SpinPolicy{}, 3'000);
    report("jittered-spin", r);
    CHECK(r.timeouts == 0);
}

// 10k rounds: when the two threads share a vCPU (a loaded machine), every
// spin is wasted and a round costs a full spin budget.
TEST_CASE("wake: ping-pong 10k rounds with the default spin policy", "[wake]") {
    const PingPongResult r = ping_pong(10'000, SpinPolicy{}, 0);
    report("spin-25us", r);
    CHECK(r.timeouts == 0);
}

// The futex word is in a MAP_SHARED page: only a process-shared futex lets the
// child's FUTEX_WAKE reach the parent's FUTEX_WAIT.
TEST_CASE("wake: futex wait and wake work across fork()", "[wake]") {
    struct Shared {
        hw::CacheLineU32 sleeping;
        hw::CacheLineU32 work;
        hw::CacheLineU32 child_woke;   // threads the child's FUTEX_WAKE woke
        hw::CacheLineU32 child_wakes;  // the child's Waker::counters().wakes_issued
    };
    SharedPage<Shared> shared;

    // Waits (in the child) until the parent has announced that it sleeps, then
    // a little longer so that it is inside FUTEX_WAIT.
    auto await_sleeper = [&] {
        const auto deadline = Clock::now() + 2s;
        while (load(shared->sleeping) != 1) {
            if (Clock::now() > deadline) _exit(3);
            std::this_thread::sleep_for(100us);
        }
        std::this_thread::sleep_for(5ms);
    };

    SECTION("raw futex") {
        store(shared->sleeping, 1);
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            std::this_thread::sleep_for(50ms);
            store(shared->sleeping, 0);
            store(shared->child_woke, static_cast<uint32_t>(futex_wake(shared->sleeping.value)));
            _exit(0);
        }
        const FutexWait result = futex_wait(shared->sleeping.value, 1, 3s);
        int status = 0;
        REQUIRE(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        CHECK(result == FutexWait::kWoken);
        CHECK(load(shared->child_woke) == 1);
    }

    SECTION("protocol") {
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            await_sleeper();
            store(shared->work, 1);
            Waker waker(shared->sleeping);
            waker.notify();
            store(shared->child_wakes, static_cast<uint32_t>(waker.counters().wakes_issued));
            _exit(0);
        }
        Sleeper sleeper(shared->sleeping, SpinPolicy::never());
        const auto t0 = Clock::now();
        const bool woke = sleeper.wait([&] { return load(shared->work) != 0; }, 3s);
        const auto elapsed = Clock::now() - t0;
        int status = 0;
        REQUIRE(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        CHECK(woke);
        CHECK(elapsed < 2s);
        CHECK(sleeper.counters().sleeps >= 1);
        CHECK(sleeper.counters().timeouts == 0);
        CHECK(load(shared->child_wakes) == 1);
        CHECK(load(shared->sleeping) == 0);
    }
}
