#include "daemon/doorbell_thread.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "device/log.hpp"
#include "device/status.hpp"
#include "softndk/wake.hpp"

namespace softndk::emu::daemon {

namespace {

constexpr size_t kMaxWaiters = 128;  // FUTEX_WAITV_MAX

// futex_waitv on `words` (each expected to hold 1) until woken or `timeout` passed.
// Returns the index of the word that woke us, or -1 (timeout, value changed, signal).
long wait_any(std::vector<struct futex_waitv> &waiters, std::chrono::nanoseconds timeout) {
    timespec deadline{};
    ::clock_gettime(CLOCK_MONOTONIC, &deadline);
    const auto ns = deadline.tv_nsec + timeout.count();
    deadline.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
    deadline.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    return ::syscall(SYS_futex_waitv, waiters.data(), waiters.size(), 0, &deadline,
                     CLOCK_MONOTONIC);
}

// A shared (not FUTEX_PRIVATE_FLAG) waiter: it pairs with futex_wake() from this or
// any other process that maps the word.
struct futex_waitv waiter(hw::CacheLineU32 &word) {
    struct futex_waitv w {};
    w.val = 1;
    w.uaddr = reinterpret_cast<uint64_t>(&word.value);
    w.flags = FUTEX_32;
    return w;
}

}  // namespace

namespace {
unsigned usable_cpus() {
    cpu_set_t set;
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return static_cast<unsigned>(std::max(CPU_COUNT(&set), 1));
}
}  // namespace

DoorbellThread::DoorbellThread(std::chrono::nanoseconds spin, SpinPolicy policy, unsigned cpus)
    : spin_(spin),
      policy_(policy),
      cpus_(cpus != 0 ? cpus : usable_cpus()),
      spin_budget_ns_(spin.count()) {
    thread_ = std::thread([this] { run(); });
}

DoorbellThread::~DoorbellThread() {
    stopping_.store(true, std::memory_order_release);
    poke();
    thread_.join();
}

void DoorbellThread::add(std::shared_ptr<const Entry> entry) {
    {
        std::lock_guard lock(mutex_);
        entries_.push_back(std::move(entry));
    }
    version_.fetch_add(1, std::memory_order_release);
    poke();
}

void DoorbellThread::remove(const Entry *entry) {
    {
        std::lock_guard lock(mutex_);
        std::erase_if(entries_, [&](const auto &e) { return e.get() == entry; });
    }
    version_.fetch_add(1, std::memory_order_release);
    poke();
}

size_t DoorbellThread::contexts() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

void DoorbellThread::poke() {
    if (claim_sleeper(control_word_)) futex_wake(control_word_.value);
}

bool DoorbellThread::pending(const Entry &e) {
    // `pending` is set after the words and the summaries (hw_interface.hpp §7), and
    // before the provider's fence and look at device_sleeping: it alone says whether to
    // sleep, one load per context however many queues the context has. The command
    // slot's sequence is published the same way, before the provider's ring.
    return doorbell_pending(e) || command_pending(e);
}

bool DoorbellThread::doorbell_pending(const Entry &e) {
    auto &d = const_cast<hw::DoorbellBitmaps &>(e.page()->doorbells);
    return std::atomic_ref(d.pending).load(std::memory_order_relaxed) != 0;
}

bool DoorbellThread::command_pending(const Entry &e) {
    return std::atomic_ref(e.page()->command.request_sequence.value)
               .load(std::memory_order_relaxed) != e.served_command;
}

void DoorbellThread::serve_command(const Entry &e) {
    hw::CommandSlot &slot = e.page()->command;
    const uint32_t sequence =
        std::atomic_ref(slot.request_sequence.value).load(std::memory_order_acquire);
    e.served_command = sequence;
    // The request is copied out before a byte of it is read: the provider may go on
    // writing the shared slot, and the device must see one consistent request.
    alignas(8) std::array<std::byte, hw::kCommandSlotBytes> request;
    std::memcpy(request.data(), slot.request, request.size());
    hw::CommandHeader header;
    std::memcpy(&header, request.data(), sizeof header);
    alignas(8) std::array<std::byte, hw::kCommandSlotBytes> response{};
    int32_t s;
    if (header.request_bytes < sizeof(hw::CommandHeader) ||
        header.request_bytes > hw::kCommandSlotBytes || !hw::command_slot_serves(header.opcode)) {
        s = status::kInvalidParameter;
    } else {
        try {
            s = e.device->execute(e.context, std::span(request).first(header.request_bytes),
                                  response);
        } catch (const std::exception &error) {
            // As a socket command that throws closes only its session: the command
            // fails, the thread serves on.
            logger(Component::kDevice)
                .error("context {}: command {:#x} failed: {}", e.context,
                       static_cast<unsigned>(header.opcode), error.what());
            s = status::kInsufficientResources;
        }
    }
    const hw::ResponseHeader answer{header.sequence, s};
    std::memcpy(response.data(), &answer, sizeof answer);
    std::memcpy(slot.response, response.data(), response.size());
    std::atomic_ref(slot.response_sequence.value).store(sequence, std::memory_order_release);
    if (claim_sleeper(slot.host_waiting)) futex_wake(slot.response_sequence.value);
}

void DoorbellThread::run() {
    std::vector<std::shared_ptr<const Entry>> local;
    std::vector<struct futex_waitv> waiters;
    uint32_t seen = ~0u;
    std::chrono::nanoseconds spin = spin_;
    constexpr auto kMoveInterval = std::chrono::milliseconds(10);
    auto last_move = std::chrono::steady_clock::time_point{};
    auto refresh = [&] {
        const uint32_t v = version_.load(std::memory_order_acquire);
        if (v == seen) return;
        std::lock_guard lock(mutex_);
        seen = v;
        local = entries_;
        if (policy_ == SpinPolicy::kSpareCore) {
            std::vector<uint32_t> processes;
            uint32_t unknown = 0;
            for (const auto &e : local) {
                if (e->process_id == 0)
                    ++unknown;
                else
                    processes.push_back(e->process_id);
            }
            std::sort(processes.begin(), processes.end());
            const size_t consumers =
                unknown + static_cast<size_t>(std::unique(processes.begin(), processes.end()) -
                                              processes.begin());
            spin = cpus_ > consumers ? spin_ : std::chrono::nanoseconds(0);
        }
        spin_budget_ns_.store(spin.count(), std::memory_order_relaxed);
    };
    // One pass: service every context with a bit set. True if any had work.
    auto pass = [&] {
        bool worked = false;
        for (const auto &e : local) {
            if (!pending(*e)) continue;
            if (command_pending(*e)) serve_command(*e);
            // A command drains the fabric itself (Device::execute); a doorbell pass
            // after one with no bit set would only exchange zeros.
            if (doorbell_pending(*e)) e->device->service(e->context);
            worked = true;
        }
        return worked;
    };
    auto changed = [&] {
        return stopping_.load(std::memory_order_acquire) ||
               version_.load(std::memory_order_acquire) != seen;
    };
    auto work_waiting = [&] {
        return changed() ||
               std::any_of(local.begin(), local.end(), [](const auto &e) { return pending(*e); });
    };
    while (!stopping_.load(std::memory_order_acquire)) {
        refresh();
        if (pass()) continue;
        // Spin: poll for more work for up to `spin` (yielding now and then).
        if (spin.count() > 0) {
            const SpinEnd end = spin_yielding(work_waiting, spin);
            if (end == SpinEnd::kReady) continue;
            // Another thread shares this CPU - likely the consumer that woke this one
            // and polls for its answer (spin_yielding). Spinning on here would take
            // turns with it; move to another CPU and spin there, at most once per
            // kMoveInterval (a wake-up may bring the thread back). Otherwise serve
            // what the thread that ran may have rung, or sleep.
            if (end == SpinEnd::kCpuShared) {
                const auto now = std::chrono::steady_clock::now();
                if (now - last_move >= kMoveInterval && move_to_another_cpu()) {
                    last_move = now;
                    logger(Component::kDevice)
                        .debug("device thread: CPU shared, moved to CPU {}", ::sched_getcpu());
                    continue;
                }
                if (work_waiting()) continue;
            }
        }
        // Sleep on every context's device_sleeping word and the control word.
        waiters.clear();
        // Shared, like every futex here: poke() wakes it with futex_wake(), a plain
        // (shared) FUTEX_WAKE, which never reaches a FUTEX_PRIVATE_FLAG waiter.
        // A private waiter here lost every poke, so a context attached while the
        // thread slept waited out the 1 s timeout before its first doorbell.
        waiters.push_back(waiter(control_word_));
        announce_sleep(control_word_);
        for (const auto &e : local) {
            if (waiters.size() == kMaxWaiters) break;
            waiters.push_back(waiter(e->page()->wake.device_sleeping));
            std::atomic_ref(e->page()->wake.device_sleeping.value)
                .store(1, std::memory_order_relaxed);
        }
        wake_fence();
        const bool all_covered = local.size() < kMaxWaiters;
        if (!changed() && !pass()) {
            sleeps_.fetch_add(1, std::memory_order_relaxed);
            const long r = wait_any(
                waiters, all_covered ? std::chrono::seconds(1) : std::chrono::milliseconds(1));
            if (r == 0) pokes_.fetch_add(1, std::memory_order_relaxed);  // waiters[0]: control word
            if (r > 0) wakeups_.fetch_add(1, std::memory_order_relaxed);
        }
        cancel_sleep(control_word_);
        for (const auto &e : local)
            cancel_sleep(e->page()->wake.device_sleeping);
    }
}

}  // namespace softndk::emu::daemon
