// doorbell_thread.hpp - the daemon's device thread: services every attached
// context's doorbell bitmaps (Device::service), spin-then-sleep.
//
// It also serves each context's command slot (hw_interface.hpp §8): a control
// command the provider wrote to shared memory instead of the socket, executed here
// like a doorbell and answered in the slot.
//
// Wake design (docs/daemon.md "Wake-up"). Each context keeps the standard protocol
// of hw_interface.hpp §7 on ITS OWN control page: the client's ring() is exactly the
// embedded Waker (fence; if device_sleeping == 1, exchange it to 0 and FUTEX_WAKE it).
// The one device thread sleeps on all of those words at once with futex_waitv(2):
//
//   loop:  service every context whose bitmaps have a bit set
//          nothing found -> poll for up to `spin` (cpu_relax, sched_yield every 256
//          polls: never more busy threads than cores, and a client sharing this
//          vCPU gets to run); with SpinPolicy::kSpareCore only while the CPUs
//          outnumber the consumer processes attached (see SpinPolicy). A yield that
//          ran another thread means this CPU is shared: move to another CPU (at
//          most every 10 ms), else sleep
//          still nothing -> announce_sleep() on EVERY context's device_sleeping
//          (and on its control word, which add/remove/stop poke), fence, re-check every bitmap,
//          then futex_waitv(all words == 1); cancel_sleep() on all of them when woken
//
// No wake-up is lost, for the same reason as with one word: a client that published
// a bit before the re-check is seen by it; one that publishes after sees its word at
// 1 and wakes it, which ends the futex_waitv. A waker only ever touches its own
// context's page, so a client can neither wake nor starve through another's words.
// futex_waitv takes at most 128 words: with more contexts the thread sleeps on the
// first 127 and wakes every millisecond to poll the rest.
//
// Lifetime: each entry maps its context's control page a second time (its own
// Mapping of the memfd), so the thread can read the bitmaps and futex on the words
// even while the session detaches the context; Device::service() of a detached
// context returns at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "daemon/memfd.hpp"
#include "device/device.hpp"

namespace softndk::emu::daemon {

class DoorbellThread {
  public:
    // When the thread may spin. Consumers poll busily (perftest, NDK drivers in a
    // completion loop): one spinning thread per consumer process is the rule, not the
    // exception. A device thread that spins beside them on a machine with no core to
    // spare takes one from a consumer, and every message then waits for the scheduler
    // to hand a core back: on 2 CPUs with two consumers, 8 B ib_write_lat through the
    // daemon took 8.1 us one way with 25 us of spinning and 3.8 us with none (a
    // FUTEX_WAKE per doorbell instead; docs/daemon.md).
    enum class SpinPolicy {
        kAlways,     // spin `spin` after the last work, whatever the load
        kSpareCore,  // only while cpus > the distinct consumer processes attached
    };
    struct Entry {
        std::shared_ptr<Device> device;
        uint32_t context = 0;
        uint32_t process_id = 0;  // the consumer's pid (0 = unknown: a process of its own)
        std::shared_ptr<const Mapping> control;  // this context's ContextControlPage
        // The command slot's last request served (hw_interface.hpp §8): the device's
        // own record, never the shared page's. Only the doorbell thread touches it.
        mutable uint32_t served_command = 0;
        hw::ContextControlPage *page() const {
            return reinterpret_cast<hw::ContextControlPage *>(control->data());
        }
    };

    // spin: how long to poll after the last work before sleeping (0 = never spin).
    // cpus: the CPUs to weigh kSpareCore against (0 = those this process may run on).
    explicit DoorbellThread(std::chrono::nanoseconds spin, SpinPolicy policy = SpinPolicy::kAlways,
                            unsigned cpus = 0);
    ~DoorbellThread();  // stops and joins

    void add(std::shared_ptr<const Entry> entry);
    void remove(const Entry *entry);

    size_t contexts() const;
    // The spin budget the thread applies now: `spin`, or 0 while kSpareCore finds no
    // core to spare. Follows add() and remove() once the thread has seen them.
    std::chrono::nanoseconds spin_budget() const {
        return std::chrono::nanoseconds(spin_budget_ns_.load(std::memory_order_relaxed));
    }
    uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
    uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }
    uint64_t pokes() const {
        return pokes_.load(std::memory_order_relaxed);
    }  // sleeps ended by poke()

  private:
    void run();
    void poke();  // wakes the thread after a change of entries_ / stopping_
    // Whether a doorbell bit or a command waits (pending), or only a doorbell bit.
    static bool pending(const Entry &e);
    static bool doorbell_pending(const Entry &e);
    static bool command_pending(const Entry &e);
    // Executes the command in e's slot and answers it (hw_interface.hpp §8).
    static void serve_command(const Entry &e);

    const std::chrono::nanoseconds spin_;
    const SpinPolicy policy_;
    const unsigned cpus_;
    std::atomic<int64_t> spin_budget_ns_;
    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<const Entry>> entries_;
    std::atomic<uint32_t> version_{0};
    std::atomic<bool> stopping_{false};
    std::atomic<uint64_t> pokes_{0};
    hw::CacheLineU32 control_word_{};  // private futex: entries changed / stop
    std::atomic<uint64_t> sleeps_{0};
    std::atomic<uint64_t> wakeups_{0};
    std::thread thread_;
};

}  // namespace softndk::emu::daemon
