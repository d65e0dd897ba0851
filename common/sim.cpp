// sim.cpp - the discrete-event scheduler of simulated time (contract in softndk/sim.hpp).
//
// One process-wide Scheduler. Its mutex guards every Record and `running`; a thread runs
// user code only while `running` is its record (the baton). Handing the baton over is
// "set running, notify the new holder's condition variable, wait on your own": so the
// order in which threads run is exactly the sequence of pick() results, which depend only
// on the seed and on what the threads did before, never on the OS.
#include "softndk/sim.hpp"

#include <sys/personality.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

namespace softndk::sim {
namespace {

struct Record {
    enum class State { kPending, kRunnable, kRunning, kBlocked, kExited };
    uint64_t id = 0;
    std::string name;
    State state = State::kPending;
    const void *key = nullptr;  // what a blocked thread waits for (nullptr: only its deadline)
    uint64_t deadline = kNever;
    const char *what = "";
    uint64_t blocked_at = 0;
    uint64_t block_sequence = 0;  // FIFO order for wake(key, false)
    bool timed_out = false;
    bool watchdog = false;  // its deadline is a periodic check, not work (sleep_until)
    std::condition_variable go;
};

const char *state_name(Record::State s) {
    switch (s) {
        case Record::State::kPending:
            return "not started";
        case Record::State::kRunnable:
            return "runnable";
        case Record::State::kRunning:
            return "running";
        case Record::State::kBlocked:
            return "blocked";
        case Record::State::kExited:
            return "exited";
    }
    return "?";
}

uint64_t environment_number(const char *name, uint64_t fallback) {
    const char *text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    char *end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 0);
    if (end == text || *end != '\0') {
        std::fprintf(stderr, "softndk: %s=%s is not a number; using %" PRIu64 "\n", name, text,
                     fallback);
        return fallback;
    }
    return value;
}

// splitmix64: small, fast, and the same sequence everywhere for a seed.
class Generator {
  public:
    explicit Generator(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }

  private:
    uint64_t state_;
};

struct Scheduler {
    std::mutex mutex;
    std::deque<std::unique_ptr<Record>> records;  // in id order; never freed
    Record *running = nullptr;
    Record *root = nullptr;
    std::atomic<bool> released{false};  // the root departed: everyone runs free
    std::atomic<uint64_t> now{0};
    uint64_t sequence = 0;
    // Times in a row that time moved only to wake a watchdog (and nothing else ran since).
    unsigned watchdog_rounds = 0;
    uint64_t time_limit_ns;
    Generator generator;
    FILE *trace = nullptr;
    std::vector<Record *> candidates;  // pick()'s scratch

    Scheduler()
        : time_limit_ns(environment_number("SOFTNDK_SIM_TIME_LIMIT", 3600) * 1'000'000'000ULL),
          generator(seed()) {
        if (const char *path = std::getenv("SOFTNDK_SIM_TRACE"); path != nullptr && *path) {
            trace = std::fopen(path, "w");
            if (trace == nullptr)
                std::fprintf(stderr, "softndk: SOFTNDK_SIM_TRACE=%s: %s\n", path,
                             std::strerror(errno));
        }
    }

    Record *add(std::string name, Record::State state) {
        auto record = std::make_unique<Record>();
        record->id = records.size() + 1;
        record->name = std::move(name);
        record->state = state;
        records.push_back(std::move(record));
        return records.back().get();
    }

    // One trace line: "<simulated ns> <event> #<id> <thread name>[: <detail>]".
    void log(const char *event, const Record &who, const char *detail) {
        if (trace == nullptr) return;
        std::fprintf(trace, "%" PRIu64 " %s #%" PRIu64 " %s%s%s\n", now.load(), event, who.id,
                     who.name.c_str(), *detail != '\0' ? ": " : "", detail);
    }

    [[noreturn]] void end_run(int code, const char *why) {
        std::fprintf(stderr, "softndk sim: %s at %" PRIu64 " ns (SOFTNDK_SEED=%" PRIu64 ")\n", why,
                     now.load(), seed());
        for (const auto &r : records) {
            if (r->state == Record::State::kExited) continue;
            std::fprintf(stderr, "  thread #%" PRIu64 " %-22s %s", r->id, r->name.c_str(),
                         state_name(r->state));
            if (r->state == Record::State::kBlocked) {
                std::fprintf(stderr, " in %s since %" PRIu64 " ns", r->what, r->blocked_at);
                if (r->deadline != kNever)
                    std::fprintf(stderr, ", until %" PRIu64 " ns", r->deadline);
            }
            std::fputc('\n', stderr);
        }
        if (trace != nullptr) {
            std::fprintf(trace, "%" PRIu64 " end %s\n", now.load(), why);
            std::fflush(trace);
        }
        std::fflush(nullptr);
        _exit(code);
    }

    // Chooses the thread to run next and gives it the baton. Called with `mutex` held by
    // the thread that holds the baton now (or by anyone when no thread does). If nothing
    // is runnable, time moves to the earliest deadline; with none, the run is deadlocked.
    void dispatch(const char *where) {
        for (;;) {
            candidates.clear();
            for (const auto &r : records) {
                if (r->state == Record::State::kRunnable || r->state == Record::State::kPending ||
                    r->state == Record::State::kRunning)
                    candidates.push_back(r.get());
            }
            if (!candidates.empty()) break;
            uint64_t earliest = kNever;
            bool only_watchdogs = true;
            for (const auto &r : records) {
                if (r->state != Record::State::kBlocked || r->deadline == kNever) continue;
                earliest = std::min(earliest, r->deadline);
                only_watchdogs = only_watchdogs && r->watchdog;
            }
            // A watchdog (the driver runner's idle check) that wakes, finds nothing
            // changed and sleeps again, with every other thread blocked for good: the
            // run is deadlocked all the same.
            watchdog_rounds = earliest != kNever && only_watchdogs ? watchdog_rounds + 1 : 0;
            if (earliest == kNever || watchdog_rounds > 3) {
                running = nullptr;
                end_run(kDeadlockExitCode,
                        "deadlock: every thread is blocked, and nothing but a watchdog would "
                        "ever wake one");
            }
            if (earliest > time_limit_ns) {
                running = nullptr;
                end_run(kTimeLimitExitCode,
                        "time limit: simulated time would pass SOFTNDK_SIM_TIME_LIMIT");
            }
            if (earliest > now.load()) now.store(earliest);
            for (const auto &r : records) {
                if (r->state == Record::State::kBlocked && r->deadline <= earliest) {
                    r->state = Record::State::kRunnable;
                    r->timed_out = true;
                    r->key = nullptr;
                }
            }
        }
        Record *chosen = candidates[generator.next() % candidates.size()];
        if (!chosen->watchdog) watchdog_rounds = 0;
        if (chosen != running) {
            // Why the previous holder let go (its transfer point), then who runs now.
            if (running != nullptr && trace != nullptr) log("stop", *running, where);
            log("run", *chosen, "");
        }
        for (Record *r : candidates) {
            if (r->state == Record::State::kRunning) r->state = Record::State::kRunnable;
        }
        running = chosen;
        if (chosen->state != Record::State::kPending) chosen->state = Record::State::kRunning;
        chosen->go.notify_one();
    }

    // The caller (holding the baton, its state already set) lets dispatch() choose, and
    // waits until it holds the baton again or the scheduler lets go.
    void switch_away(std::unique_lock<std::mutex> &lock, Record *me, const char *where) {
        dispatch(where);
        me->go.wait(lock, [&] { return running == me || released.load(); });
    }

    void release_all() {
        released.store(true);
        running = nullptr;
        if (trace != nullptr) {
            std::fprintf(trace, "%" PRIu64 " end the root thread left\n", now.load());
            std::fflush(trace);
        }
        for (const auto &r : records)
            r->go.notify_all();
    }
};

Scheduler &scheduler() {
    // Leaked: threads use it during process exit.
    static Scheduler *const instance = new Scheduler;
    return *instance;
}

thread_local Record *t_self = nullptr;

// Departs at thread exit a thread that did not depart itself.
struct DepartAtExit {
    bool armed = false;
    ~DepartAtExit() {
        if (armed && t_self != nullptr) depart();
    }
};
thread_local DepartAtExit t_depart_at_exit;

// Binds the calling thread to `record` and waits for the baton. `mutex` held.
void take_seat(std::unique_lock<std::mutex> &lock, Scheduler &s, Record *record) {
    t_self = record;
    t_depart_at_exit.armed = true;
    if (s.running == nullptr && !s.released.load()) {
        // The first thread of the run (nobody holds the baton): it runs at once.
        s.running = record;
        s.log("run", *record, "the first thread");
    }
    if (s.running == record) {
        record->state = Record::State::kRunning;
        return;
    }
    if (record->state == Record::State::kPending) record->state = Record::State::kRunnable;
    record->go.wait(lock, [&] { return s.running == record || s.released.load(); });
    if (!s.released.load()) record->state = Record::State::kRunning;
}

// Simulated time replays a seed byte for byte, and the addresses a consumer's buffers get
// travel on the wire (RETH virtual addresses) and into logs. So, before main(), a program
// started with SOFTNDK_TIME=simulated prepares its process (prepare_environment_for_replay)
// and executes itself again: without address-space randomisation (personality(2)), and
// with one malloc arena and no per-thread caches (GLIBC_TUNABLES), so that which address
// an allocation gets depends only on the order of allocations - which the scheduler fixes -
// and not on which thread's arena or cache serves it. If the re-execution is refused, the
// program runs on, and its pcap may differ by addresses.
__attribute__((constructor)) void run_in_a_replayable_process() {
    const char *mode = std::getenv("SOFTNDK_TIME");
    if (mode == nullptr || std::strcmp(mode, "simulated") != 0) return;
    if (std::getenv("SOFTNDK_SIM_REEXECUTED") != nullptr) return;  // prepared already
    std::FILE *file = std::fopen("/proc/self/cmdline", "rb");
    if (file == nullptr) return;
    std::string arguments;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
        arguments.append(buffer, n);
    std::fclose(file);
    std::vector<char *> argv;
    for (size_t i = 0; i < arguments.size(); i += std::strlen(&arguments[i]) + 1)
        argv.push_back(&arguments[i]);
    argv.push_back(nullptr);
    prepare_environment_for_replay();
    execv("/proc/self/exe", argv.data());
}

}  // namespace

void prepare_environment_for_replay() {
    const int persona = personality(0xffffffff);
    if (persona != -1) personality(static_cast<unsigned long>(persona) | ADDR_NO_RANDOMIZE);
    std::string tunables = "glibc.malloc.arena_max=1:glibc.malloc.tcache_count=0";
    if (const char *old = std::getenv("GLIBC_TUNABLES"); old != nullptr && *old != '\0')
        tunables = std::string(old) + ":" + tunables;
    setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
    setenv("SOFTNDK_SIM_REEXECUTED", "1", 1);
}

bool enabled() {
    static const bool on = [] {
        const char *mode = std::getenv("SOFTNDK_TIME");
        return mode != nullptr && std::strcmp(mode, "simulated") == 0;
    }();
    return on;
}

uint64_t seed() {
    static const uint64_t value = environment_number("SOFTNDK_SEED", 0);
    return value;
}

uint64_t now_ns() {
    return enabled() ? scheduler().now.load(std::memory_order_relaxed) : 0;
}

bool attached() {
    return t_self != nullptr && !scheduler().released.load(std::memory_order_relaxed);
}

std::chrono::steady_clock::time_point steady_now() {
    if (!enabled()) return std::chrono::steady_clock::now();
    return std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(scheduler().now.load(std::memory_order_relaxed)));
}

uint64_t clock_ns() {
    if (enabled()) return scheduler().now.load(std::memory_order_relaxed);
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

Ticket prepare_thread(std::string name) {
    if (!enabled()) return {};
    // The creator is scheduled from here on (the first creator is normally main).
    if (t_self == nullptr) attach_current("thread");
    Scheduler &s = scheduler();
    std::lock_guard lock(s.mutex);
    if (s.released.load()) return {};
    Record *record = s.add(std::move(name), Record::State::kPending);
    if (s.running != nullptr) s.log("new", *record, ("started by " + s.running->name).c_str());
    return {record};
}

void arrive(Ticket ticket) {
    if (ticket.record == nullptr) return;
    Scheduler &s = scheduler();
    std::unique_lock lock(s.mutex);
    take_seat(lock, s, static_cast<Record *>(ticket.record));
}

void abandon(Ticket ticket) {
    if (ticket.record == nullptr) return;
    Scheduler &s = scheduler();
    std::lock_guard lock(s.mutex);
    auto *record = static_cast<Record *>(ticket.record);
    record->state = Record::State::kExited;
    if (s.running == record) s.dispatch("thread not started");
}

void attach_current(const char *name) {
    if (!enabled() || t_self != nullptr) return;
    Scheduler &s = scheduler();
    std::unique_lock lock(s.mutex);
    if (s.released.load()) return;
    // The first thread of the run is the root; "thread" (an implicit attach) is then "main".
    const bool first = s.root == nullptr;
    Record *record =
        s.add(first && std::strcmp(name, "thread") == 0 ? "main" : name, Record::State::kRunnable);
    if (first) s.root = record;
    take_seat(lock, s, record);
}

void depart() {
    Record *me = t_self;
    if (me == nullptr) return;
    Scheduler &s = scheduler();
    std::unique_lock lock(s.mutex);
    t_self = nullptr;
    me->state = Record::State::kExited;
    s.log("exit", *me, "");
    if (s.running == me) s.running = nullptr;  // dispatch() below must not log it as stopping
    if (s.released.load()) return;
    for (const auto &r : s.records) {  // joiners wait on the record
        if (r->state == Record::State::kBlocked && r->key == me) {
            r->state = Record::State::kRunnable;
            r->key = nullptr;
        }
    }
    if (me == s.root) {
        s.release_all();
        return;
    }
    if (s.running == nullptr) s.dispatch("thread exit");
}

void Thread::join() {
    if (!thread_.joinable()) return;
    if (record_ != nullptr && attached()) {
        Scheduler &s = scheduler();
        auto *target = static_cast<Record *>(record_);
        std::unique_lock lock(s.mutex);
        while (target->state != Record::State::kExited && !s.released.load()) {
            Record *me = t_self;
            me->state = Record::State::kBlocked;
            me->key = target;
            me->deadline = kNever;
            me->what = "join";
            me->blocked_at = s.now.load();
            me->block_sequence = ++s.sequence;
            s.switch_away(lock, me, "join");
        }
    }
    thread_.join();
}

void trace_note(const char *event, const std::string &detail) {
    if (!enabled()) return;
    Scheduler &s = scheduler();
    if (s.trace == nullptr) return;
    std::lock_guard lock(s.mutex);
    if (s.released.load()) return;
    if (t_self != nullptr) {
        s.log(event, *t_self, detail.c_str());
    } else {
        std::fprintf(s.trace, "%" PRIu64 " %s: %s\n", s.now.load(), event, detail.c_str());
    }
}

void yield(const char *where) {
    if (!enabled()) return;
    if (t_self == nullptr) attach_current("thread");
    if (!attached()) return;
    Scheduler &s = scheduler();
    std::unique_lock lock(s.mutex);
    Record *me = t_self;
    me->state = Record::State::kRunnable;
    s.switch_away(lock, me, where);
}

namespace {
bool block_as(bool watchdog, const void *key, uint64_t deadline, const char *what,
              void (*unlock)(void *), void (*relock)(void *), void *context) {
    Scheduler &s = scheduler();
    std::unique_lock lock(s.mutex);
    Record *me = t_self;
    me->watchdog = watchdog;
    me->state = Record::State::kBlocked;
    me->key = key;
    me->deadline = deadline;
    me->what = what;
    me->blocked_at = s.now.load();
    me->block_sequence = ++s.sequence;
    me->timed_out = false;
    if (unlock != nullptr) unlock(context);
    s.switch_away(lock, me, what);
    const bool woken = !me->timed_out;
    lock.unlock();
    if (relock != nullptr) relock(context);
    return woken;
}
}  // namespace

bool block(const void *key, uint64_t deadline, const char *what, void (*unlock)(void *),
           void (*relock)(void *), void *context) {
    return block_as(false, key, deadline, what, unlock, relock, context);
}

void sleep_until(uint64_t t, const char *what, bool watchdog) {
    if (!enabled()) return;
    if (t_self == nullptr) attach_current("thread");
    if (!attached()) return;
    block_as(watchdog, nullptr, t, what, nullptr, nullptr, nullptr);
}

void spin_pause(const char *what) {
    // 10 ns: about what one pass of a spin loop costs a host CPU.
    if (enabled()) sleep_until(now_ns() + 10, what);
}

void wake(const void *key, bool all) {
    if (key == nullptr) return;
    Scheduler &s = scheduler();
    std::lock_guard lock(s.mutex);
    if (s.released.load()) return;
    Record *first = nullptr;
    for (const auto &r : s.records) {
        if (r->state != Record::State::kBlocked || r->key != key) continue;
        if (all) {
            r->state = Record::State::kRunnable;
            r->key = nullptr;
        } else if (first == nullptr || r->block_sequence < first->block_sequence) {
            first = r.get();
        }
    }
    if (first != nullptr) {
        first->state = Record::State::kRunnable;
        first->key = nullptr;
    }
    // A wake from a thread the scheduler does not run, while nobody holds the baton.
    if (s.running == nullptr && s.root != nullptr) s.dispatch("wake");
}

bool ConditionVariable::simulated_wait(std::unique_lock<std::mutex> &lock, uint64_t deadline) {
    return block(
        this, deadline, name_,
        [](void *l) { static_cast<std::unique_lock<std::mutex> *>(l)->unlock(); },
        [](void *l) { static_cast<std::unique_lock<std::mutex> *>(l)->lock(); }, &lock);
}

}  // namespace softndk::sim
