// sim.hpp - simulated time: one discrete-event scheduler for the consumer, the WDK
// runtime, the provider and the device (SOFTNDK_TIME=simulated, docs/simulation.md).
//
// The model: the process's threads keep their real stacks, but only one *attached*
// thread runs at a time. It runs until it reaches a control transfer point the runtime
// owns (a wait, a spin-lock or mutex acquisition, work-item/DPC/timer dispatch, an NDK
// call or callback, thread start and exit); there the seeded generator picks the next
// thread among the runnable ones (the same one, often). Simulated time advances only when
// every attached thread is blocked: to the earliest deadline among them. The same seed
// therefore gives the same interleaving, the same model times, and the same output.
//
// Who is attached, and in what order:
//   - threads the runtime, the provider and the device start announce them before the OS
//     thread exists (prepare_thread, in the creator's deterministic order) and the new
//     thread arrive()s first thing; it does not run until the scheduler picks it;
//   - any other thread that reaches a transfer point while simulation is on attaches
//     then (the first one, normally main, is the root and runs at once; later ones join
//     at a point the OS decides, so their arrival is not deterministic: a consumer's own
//     pthreads, docs/simulation.md);
//   - a thread departs at exit (automatically) or explicitly; when the root departs
//     (the program is ending) the scheduler lets go: every thread runs free from then on,
//     as in functional mode, so exit-time joins and destructors cannot deadlock.
//
// What is blocked: a thread inside block() (a ConditionVariable wait, a futex wait, a
// sleep). It becomes runnable when wake(key) names its key or its deadline comes. If all
// attached threads are blocked and none has a deadline, the run is deadlocked: the
// scheduler prints every thread's wait on stderr and ends the process with
// kDeadlockExitCode. A run whose simulated time passes SOFTNDK_SIM_TIME_LIMIT ends the
// same way with kTimeLimitExitCode.
//
// Environment: SOFTNDK_TIME=simulated turns it on (read once); SOFTNDK_SEED=N (default 0)
// seeds the choices; SOFTNDK_SIM_TRACE=FILE writes one line per scheduling decision;
// SOFTNDK_SIM_TIME_LIMIT=SECONDS (default 3600) bounds simulated time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace softndk::sim {

inline constexpr int kDeadlockExitCode = 86;
inline constexpr int kTimeLimitExitCode = 87;
inline constexpr uint64_t kNever = UINT64_MAX;

// For a launcher, between fork and exec of a program to run in simulated time: no
// address-space randomisation, one malloc arena, no per-thread malloc caches (so a seed
// replays to the same addresses), and SOFTNDK_SIM_REEXECUTED=1. A program started without
// it does this to itself before main() and executes itself again.
void prepare_environment_for_replay();

// SOFTNDK_TIME=simulated in this process (read at first use).
bool enabled();
// SOFTNDK_SEED (0 when unset).
uint64_t seed();
// Simulated time in ns since the run began (0 when simulation is off).
uint64_t now_ns();
// Does the scheduler run the calling thread? (false when off, and after the root left)
bool attached();

// The clock every deadline in the runtime, provider and device is taken from: the
// steady clock, or simulated time (as ns since the steady clock's epoch) when on.
std::chrono::steady_clock::time_point steady_now();
// CLOCK_MONOTONIC in ns, or simulated time when on (the paced/simulated model clock).
uint64_t clock_ns();

// ---- Threads.

// A thread announced by its creator. Empty (nullptr) when simulation is off.
struct Ticket {
    void *record = nullptr;
};
// Announces a thread the caller is about to start, in the caller's deterministic order.
Ticket prepare_thread(std::string name);
// First thing in the new thread: waits until the scheduler runs it. No-op for an empty
// ticket.
void arrive(Ticket ticket);
// Attaches the calling thread under `name` if it is not attached (see above).
void attach_current(const char *name);
// The calling thread leaves the scheduler (it must not block in simulated waits after).
void depart();

// Gives up a ticket whose thread could not be started.
void abandon(Ticket ticket);

// Starts a detached thread running fn(), announced to the scheduler as `name`. Throws what
// std::thread throws.
template <class Fn>
void start_detached(std::string name, Fn fn) {
    const Ticket ticket = prepare_thread(std::move(name));
    try {
        std::thread([ticket, fn = std::move(fn)]() mutable {
            arrive(ticket);
            fn();
            depart();
        }).detach();
    } catch (...) {
        abandon(ticket);
        throw;
    }
}

// A std::thread whose start and join are transfer points: join() waits in simulated time
// for the thread to depart, then joins it.
class Thread {
  public:
    Thread() = default;
    template <class Fn>
    Thread(std::string name, Fn &&fn) {
        const Ticket ticket = prepare_thread(std::move(name));
        record_ = ticket.record;
        thread_ = std::thread([ticket, fn = std::forward<Fn>(fn)]() mutable {
            arrive(ticket);
            fn();
            depart();
        });
    }
    Thread(Thread &&) = default;
    Thread &operator=(Thread &&) = default;
    bool joinable() const { return thread_.joinable(); }
    void join();

  private:
    void *record_ = nullptr;
    std::thread thread_;
};

// Adds a line "<time> <event> #<thread> <name>: <detail>" to the scheduler's trace
// (SOFTNDK_SIM_TRACE), if there is one: for what the run should show beside the
// scheduling decisions (an injected fault). Not a transfer point.
void trace_note(const char *event, const std::string &detail);

// ---- Transfer points.

// A point where another runnable thread may run first (`where` names it in the trace).
void yield(const char *where);
// Blocks the calling thread until simulated time `t` (a busy wait, a delay, a host cost).
// A `watchdog` sleep is a periodic check that changes nothing by itself (the driver
// runner's idle check): if time keeps moving only to wake watchdogs while every other
// thread is blocked for good, the run counts as deadlocked.
void sleep_until(uint64_t t, const char *what, bool watchdog = false);
// A spin loop's pause: lets the thread it waits for run, and costs the spinner a little
// simulated time (so a spinner alone cannot stop time).
void spin_pause(const char *what);

// Blocks the calling (attached) thread until wake(key) or simulated time `deadline`
// (kNever: none). `unlock` is called after the thread is registered as blocked (so a wake
// cannot be missed) and `relock` once it runs again. Returns false on timeout.
bool block(const void *key, uint64_t deadline, const char *what, void (*unlock)(void *),
           void (*relock)(void *), void *context);
// Makes the threads blocked on `key` runnable (all, or the one blocked longest).
void wake(const void *key, bool all);

// std::condition_variable's interface; in simulated mode an attached thread's wait is a
// transfer point and notify wakes it through the scheduler. Spurious wake-ups happen (at
// the end of a simulation), as the standard allows: callers loop on their predicate.
class ConditionVariable {
  public:
    explicit ConditionVariable(const char *name = "condition variable") : name_(name) {}
    ConditionVariable(const ConditionVariable &) = delete;
    ConditionVariable &operator=(const ConditionVariable &) = delete;

    void notify_one() {
        if (enabled()) wake(this, false);
        cv_.notify_one();
    }
    void notify_all() {
        if (enabled()) wake(this, true);
        cv_.notify_all();
    }
    void wait(std::unique_lock<std::mutex> &lock) {
        if (attached()) {
            simulated_wait(lock, kNever);
            return;
        }
        cv_.wait(lock);
    }
    template <class Pred>
    void wait(std::unique_lock<std::mutex> &lock, Pred pred) {
        while (!pred())
            wait(lock);
    }
    template <class Duration>
    std::cv_status wait_until(std::unique_lock<std::mutex> &lock,
                              std::chrono::time_point<std::chrono::steady_clock, Duration> at) {
        if (attached()) {
            const auto ns =
                std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
            return simulated_wait(lock, ns < 0 ? 0 : static_cast<uint64_t>(ns))
                       ? std::cv_status::no_timeout
                       : std::cv_status::timeout;
        }
        return cv_.wait_until(lock, at);
    }
    template <class Duration, class Pred>
    bool wait_until(std::unique_lock<std::mutex> &lock,
                    std::chrono::time_point<std::chrono::steady_clock, Duration> at, Pred pred) {
        while (!pred()) {
            if (wait_until(lock, at) == std::cv_status::timeout) return pred();
        }
        return true;
    }
    template <class Rep, class Period>
    std::cv_status wait_for(std::unique_lock<std::mutex> &lock,
                            std::chrono::duration<Rep, Period> duration) {
        return wait_until(lock, steady_now() + duration);
    }
    template <class Rep, class Period, class Pred>
    bool wait_for(std::unique_lock<std::mutex> &lock, std::chrono::duration<Rep, Period> duration,
                  Pred pred) {
        return wait_until(lock, steady_now() + duration, std::move(pred));
    }

  private:
    bool simulated_wait(std::unique_lock<std::mutex> &lock, uint64_t deadline);

    const char *name_;
    std::condition_variable cv_;
};

}  // namespace softndk::sim
