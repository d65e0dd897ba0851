// adaptive_mutex.hpp - a mutex that spins briefly before it sleeps.
//
// Why: in embedded mode the thread that posts a request runs the device for the whole
// exchange, so it holds the peer QP's lock while it places the payload and answers with
// an ACK. The peer's own thread sees the payload at once, posts its answer and wants
// that lock, typically for the few hundred nanoseconds the holder has left. A plain
// std::mutex then sleeps in FUTEX_WAIT and its holder pays a FUTEX_WAKE on unlock,
// system calls on the critical path: paced 8 B write latency on cx5-100g (two threads)
// made 6,781 futex calls in 20,000 round trips; with this mutex it makes 53, and 5 of
// 120,000 acquisitions sleep. glibc's adaptive mutex (PTHREAD_MUTEX_ADAPTIVE_NP) spins
// too, but briefly and with no say per lock.
//
// Contract: the BasicLockable/Lockable interface of std::mutex (std::lock_guard,
// std::unique_lock, std::scoped_lock work). lock() tries for kSpins pauses, a few
// microseconds, then blocks in std::mutex::lock(), so a holder that was preempted costs
// a waiter no more CPU than that, and a wait that outlasts the spin is std::mutex's.
#pragma once

#include <mutex>

#include "softndk/wake.hpp"

namespace softndk::emu {

class AdaptiveMutex {
  public:
    void lock() {
        for (unsigned spins = 0; spins < kSpins; ++spins) {
            if (mutex_.try_lock()) return;
            cpu_relax();
        }
        mutex_.lock();
    }
    bool try_lock() { return mutex_.try_lock(); }
    void unlock() { mutex_.unlock(); }

    // About 1-5 us of PAUSE (10-40 ns each, by CPU generation): longer than a QP's
    // critical section on the data path, far shorter than a sleep and wake (~25 us on a
    // VM, softndk/wake.hpp).
    static constexpr unsigned kSpins = 128;

  private:
    std::mutex mutex_;
};

}  // namespace softndk::emu
