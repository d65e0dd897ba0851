// wake.hpp - the doorbell wake protocol (hw_interface.hpp section 7).
//
// "Shadow doorbell + event index", as SPDK and siw do it. Each direction has a
// futex word (WakeWord::device_sleeping, WakeWord::host_sleeping) written by
// both sides:
//
//   sleeper (one thread per word)          waker (any thread, after publishing work)
//   ----------------------------------     ------------------------------------------
//   announce_sleep(): word = 1             publish the work (ring barrier, release)
//       + full fence           ---- A      claim_sleeper(): full fence        ---- B
//   re-check for work; found -> word = 0       if word == 0: peer is awake, done
//   FUTEX_WAIT(word, 1, timeout)               exchange(word, 0) == 1 -> FUTEX_WAKE
//   word = 0 (cancel_sleep)
//
// Why no wake-up is lost: fences A and B are sequentially consistent, so of
// "sleeper stores 1 then loads the work" and "waker stores the work then loads
// the word" at least one load sees the other side's store. Either the sleeper
// sees the work and does not sleep, or the waker sees 1 and wakes it; FUTEX_WAIT
// compares the word with 1 atomically in the kernel, so a wake that lands before
// the sleeper is inside the kernel turns into an immediate return. The waker
// clears the word with an exchange, so of several concurrent wakers only one
// makes the system call, and a peer that is awake (polling) costs a waker one
// fence and one load of a shared cache line: no system call.
//
// The futexes are process-SHARED (no FUTEX_PRIVATE_FLAG): in daemon mode the
// word lives in a memfd mapped by two processes, at different addresses.
//
// On this VM a cross-core wake costs ~25 us and a cache-line hand-off
// 50-200 ns (shared/reference/perf-anchors.md A.2), so a sleeper first spins
// for a bounded budget (SpinPolicy) and only then sleeps.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>

#include "softndk/hw_interface.hpp"
#include "softndk/sim.hpp"

namespace softndk {

static_assert(std::atomic_ref<uint32_t>::is_always_lock_free);

// ---------------------------------------------------------------------------
// CPU and kernel primitives
// ---------------------------------------------------------------------------
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// The StoreLoad fence of the protocol (A and B above). ThreadSanitizer does not
// model standalone fences (g++ warns with -Wtsan) but executes them; the races
// it checks are on the ring words, which are ordered by acquire/release.
#pragma GCC diagnostic push
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wtsan"
#endif
inline void wake_fence() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
#pragma GCC diagnostic pop

// Polls `ready` until it returns true or `budget` has passed, and says which. Between
// polls a cpu_relax; every 256 polls a look at the clock and a sched_yield, because the
// thread that will make `ready` true may be waiting for this CPU (a spinner must never
// keep a core from the thread it waits for). A budget <= 0 polls once.
//
// It also stops, budget or not, after a yield that took longer than kSharedCpuNs:
// another thread ran on this CPU meanwhile, maybe the very one it waits for. Two
// spinners on one CPU (a consumer's polling thread and the device thread it woke,
// which the scheduler tends to start on the waker's CPU) hand it to each other at
// every yield, and the scheduler may leave them so for a hundred milliseconds: 8 B
// writes through the daemon took 22-40 us one way so, against 1.3 with the threads on
// two CPUs. Alone on its CPU a yield costs a system call (about 1.2 us in a VM).
inline constexpr std::chrono::nanoseconds kSharedCpuNs{10000};
// kCpuShared says nothing of `ready`: the thread that ran may well have made it true
// (the consumer posts while the device thread yields to it), and the caller, which
// looks at its work anyway, would otherwise never learn that it shares the CPU.
enum class SpinEnd : uint8_t {
    kReady,        // `ready` returned true
    kBudgetSpent,  // `budget` passed
    kCpuShared,    // a yield ran another thread (above); the caller moves or sleeps
};
template <class Ready>
SpinEnd spin_yielding(Ready &&ready, std::chrono::nanoseconds budget) {
    if (ready()) return SpinEnd::kReady;
    if (budget.count() <= 0) return SpinEnd::kBudgetSpent;
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 1;; ++i) {
        cpu_relax();
        if (ready()) return SpinEnd::kReady;
        if ((i & 255) == 0) {
            const auto before = std::chrono::steady_clock::now();
            if (before - start >= budget) return SpinEnd::kBudgetSpent;
            ::sched_yield();
            if (std::chrono::steady_clock::now() - before > kSharedCpuNs)
                return SpinEnd::kCpuShared;
        }
    }
}
// The same, true if `ready` holds at the end: a waiter that sleeps when spinning ends.
template <class Ready>
bool spin_yielding_until(Ready &&ready, std::chrono::nanoseconds budget) {
    const SpinEnd end = spin_yielding(ready, budget);
    return end == SpinEnd::kReady || (end == SpinEnd::kCpuShared && ready());
}

// Moves the calling thread to another CPU it may run on, and gives it back the CPUs it
// had: the scheduler migrates a thread at once off a CPU its affinity no longer allows,
// and leaves it where it is when the affinity widens again. What a spinner does on
// SpinEnd::kCpuShared when it would rather go on spinning. False if there is no other
// CPU (or the calls fail); the thread's affinity (taskset) is as before either way.
inline bool move_to_another_cpu() noexcept {
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
    const int cpu = ::sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed) || CPU_COUNT(&allowed) < 2)
        return false;
    cpu_set_t others = allowed;
    CPU_CLR(cpu, &others);
    const bool moved = ::sched_setaffinity(0, sizeof others, &others) == 0;
    ::sched_setaffinity(0, sizeof allowed, &allowed);
    return moved;
}

enum class FutexWait : uint8_t {
    kWoken,         // FUTEX_WAKE (or a spurious wake-up)
    kValueChanged,  // *word != expected on entry
    kTimedOut,
    kInterrupted,  // signal
    kFailed,       // EFAULT/EINVAL/ENOSYS: a bug, not a wake-up
};

inline constexpr std::chrono::nanoseconds kWaitForever = std::chrono::nanoseconds::max();

// FUTEX_WAIT (shared) while *word == expected, for at most `timeout`
// (kWaitForever: no limit; <= 0: return at once).
FutexWait futex_wait(uint32_t &word, uint32_t expected, std::chrono::nanoseconds timeout) noexcept;
// FUTEX_WAKE (shared); returns the number of threads woken (or -1).
int futex_wake(uint32_t &word, int waiters = INT_MAX) noexcept;

// ---------------------------------------------------------------------------
// Protocol steps
// ---------------------------------------------------------------------------

// Sleeper: "wake me", then fence A. The caller must re-check for work next.
inline void announce_sleep(hw::CacheLineU32 &word) noexcept {
    std::atomic_ref(word.value).store(1, std::memory_order_relaxed);
    wake_fence();
}

// Sleeper: awake again (work found, woken, or timed out).
inline void cancel_sleep(hw::CacheLineU32 &word) noexcept {
    std::atomic_ref(word.value).store(0, std::memory_order_relaxed);
}

// Waker, after publishing work: fence B, then true iff the peer announced
// sleep and this caller won the right to wake it (the word is now 0).
inline bool claim_sleeper(hw::CacheLineU32 &word) noexcept {
    wake_fence();
    std::atomic_ref w(word.value);
    if (w.load(std::memory_order_relaxed) == 0) return false;
    return w.exchange(0, std::memory_order_relaxed) != 0;
}

// ---------------------------------------------------------------------------
// Policy and counters
// ---------------------------------------------------------------------------

// Spin (with cpu_relax) until work appears, max_spins polls have been made or
// max_spin_time has passed (checked every 64 polls), whichever comes first;
// then sleep. A zero in either field disables spinning. The default spins for
// about one cross-core wake (~25 us here): a peer that answers within that
// time costs no system call on either side, and one that does not costs at
// most twice the optimum (the ski-rental bound). Spinning only pays while the
// peer runs on another vCPU: when both share one (a loaded machine) each spin
// is wasted, and a caller that knows it should use never().
struct SpinPolicy {
    uint32_t max_spins = 1u << 16;
    std::chrono::nanoseconds max_spin_time{25'000};

    static constexpr SpinPolicy never() { return {0, std::chrono::nanoseconds{0}}; }
};

// Per Sleeper/Waker object; plain fields, read by the owning thread or after
// joining it. Sum them for per-context totals.
struct WakeCounters {
    // Waker side.
    uint64_t wakes_issued = 0;   // FUTEX_WAKE system calls
    uint64_t wakes_avoided = 0;  // notify() found the peer awake: no system call
    // Sleeper side.
    uint64_t spin_hits = 0;       // work found while spinning
    uint64_t spins_skipped = 0;   // slept without spinning: the last wait's work came
                                  // too late for a spin (Sleeper::wait)
    uint64_t sleeps = 0;          // FUTEX_WAIT system calls
    uint64_t sleeps_avoided = 0;  // re-check after announce_sleep() found work
    uint64_t timeouts = 0;        // wait() returned without work
};

// ---------------------------------------------------------------------------
// The two sides
// ---------------------------------------------------------------------------

// Rings the peer's wake word. Call notify() after every publish of work the
// peer may be sleeping on (one per batch is enough).
class Waker {
  public:
    explicit Waker(hw::CacheLineU32 &sleeping) noexcept : word_(&sleeping) {}

    // Returns true if a FUTEX_WAKE was issued.
    bool notify() noexcept {
        if (!claim_sleeper(*word_)) {
            ++counters_.wakes_avoided;
            return false;
        }
        futex_wake(word_->value);
        ++counters_.wakes_issued;
        return true;
    }

    const WakeCounters &counters() const noexcept { return counters_; }

  private:
    hw::CacheLineU32 *word_;
    WakeCounters counters_;
};

// Waits for work on its own wake word. `has_work` is a predicate that loads the
// shared state with acquire (e.g. a ring's owner byte or producer); it is
// called many times and must have no side effects beyond that.
class Sleeper {
  public:
    explicit Sleeper(hw::CacheLineU32 &sleeping, SpinPolicy policy = {}) noexcept
        : word_(&sleeping), policy_(policy) {}

    void set_policy(SpinPolicy policy) noexcept { policy_ = policy; }
    const SpinPolicy &policy() const noexcept { return policy_; }
    const WakeCounters &counters() const noexcept { return counters_; }

    // Spin, then sleep until has_work() is true or `timeout` has passed.
    // Returns has_work()'s last answer.
    //
    // Adaptive: the sleeper spins only if the last wait's work came within the spin
    // time (a spin would have caught it, or did). Work that comes later than that, as
    // connection events do, found by a sleep, turns spinning off until a wait's work
    // comes early again: a spin that cannot pay takes the CPU the publisher needs.
    template <class Pred>
    bool wait(Pred &&has_work, std::chrono::nanoseconds timeout = kWaitForever) {
        if (has_work()) return true;
        const auto start = std::chrono::steady_clock::now();
        // Simulated time: only this thread runs, so spinning cannot see new work.
        const bool may_spin = !sim::attached() && policy_.max_spins != 0 &&
                              policy_.max_spin_time > std::chrono::nanoseconds::zero();
        if (may_spin) {
            if (!spin_pays_) {
                ++counters_.spins_skipped;
            } else if (spin(has_work, start)) {
                ++counters_.spin_hits;
                return true;
            }
        }
        for (;;) {
            std::chrono::nanoseconds left = kWaitForever;
            if (timeout != kWaitForever) {
                left = timeout - (std::chrono::steady_clock::now() - start);
                if (left <= std::chrono::nanoseconds::zero()) {
                    ++counters_.timeouts;
                    return false;
                }
            }
            if (sleep_once(has_work, left)) {
                spin_pays_ = std::chrono::steady_clock::now() - start <= policy_.max_spin_time;
                return true;
            }
        }
    }

    // One protocol step: announce, re-check, FUTEX_WAIT for at most `timeout`,
    // cancel. Returns has_work() after waking.
    template <class Pred>
    bool sleep_once(Pred &&has_work, std::chrono::nanoseconds timeout) {
        announce_sleep(*word_);
        if (has_work()) {
            cancel_sleep(*word_);
            ++counters_.sleeps_avoided;
            return true;
        }
        ++counters_.sleeps;
        futex_wait(word_->value, 1, timeout);
        cancel_sleep(*word_);
        return has_work();
    }

  private:
    template <class Pred>
    bool spin(Pred &has_work, std::chrono::steady_clock::time_point start) {
        for (uint32_t i = 0; i < policy_.max_spins; ++i) {
            cpu_relax();
            if (has_work()) return true;
            if ((i & 63) == 63 && std::chrono::steady_clock::now() - start >= policy_.max_spin_time)
                return false;
        }
        return false;
    }

    hw::CacheLineU32 *word_;
    SpinPolicy policy_;
    bool spin_pays_ = true;  // the last wait's work came within max_spin_time
    WakeCounters counters_;
};

}  // namespace softndk
