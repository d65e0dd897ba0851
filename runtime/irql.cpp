// Per-thread IRQL bookkeeping, spin locks and in-stack queued spin locks.
#include <sched.h>

#include <atomic>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

thread_local KIRQL t_irql = PASSIVE_LEVEL;

// A spin lock's word holds the address of its owner's t_owner_token: non-zero, and distinct
// for every live thread.
thread_local char t_owner_token;

ULONG_PTR owner_token() {
    return reinterpret_cast<ULONG_PTR>(&t_owner_token);
}

// Spins this many times with the pause hint before each further attempt yields the CPU.
// The owner may have been preempted (user mode cannot stop that), and spinning against a
// descheduled owner on a 2-core machine only delays it.
constexpr unsigned kSpinsBeforeYield = 64;

void acquire(PKSPIN_LOCK lock) {
    sim::yield("KeAcquireSpinLock");  // a control transfer point in simulated time
    std::atomic_ref<ULONG_PTR> word(*lock);
    const ULONG_PTR self = owner_token();
    for (unsigned attempt = 0;; ++attempt) {
        ULONG_PTR seen = word.load(std::memory_order_relaxed);
        if (seen == 0 && word.compare_exchange_weak(seen, self, std::memory_order_acquire,
                                                    std::memory_order_relaxed)) {
            return;
        }
        if (seen == self) {
            bugcheck(SPIN_LOCK_ALREADY_OWNED, reinterpret_cast<ULONG_PTR>(lock), 0, 0, 0,
                     "the thread acquires a spin lock it already holds (a deadlock on Windows)");
        }
        if (sim::attached()) {
            sim::spin_pause("KeAcquireSpinLock (held)");
        } else if (attempt < kSpinsBeforeYield) {
            cpu_relax();
        } else {
            sched_yield();
        }
    }
}

void release(PKSPIN_LOCK lock) {
    std::atomic_ref<ULONG_PTR> word(*lock);
    if (word.load(std::memory_order_relaxed) == 0) {
        bugcheck(SPIN_LOCK_NOT_OWNED, reinterpret_cast<ULONG_PTR>(lock), 0, 0, 0,
                 "releasing a spin lock that is not held");
    }
    word.store(0, std::memory_order_release);
}

// ---- In-stack queued spin locks: an MCS queue. The KSPIN_LOCK word holds the address of
// the last queued KSPIN_LOCK_QUEUE (0 when free). An acquirer swaps itself in as the tail and,
// if there was a predecessor, links itself behind it and waits for the predecessor to clear
// its kQueueWait bit: each waiter watches only its own handle, and the lock passes in FIFO
// order. The queue entries live in the callers' KLOCK_QUEUE_HANDLEs, on their stacks.
// Windows keeps the same two flags in the low bits of LockQueue.Lock.
constexpr ULONG_PTR kQueueWait = 1;   // still waiting for the predecessor's hand-off
constexpr ULONG_PTR kQueueOwner = 2;  // holds the lock

PKSPIN_LOCK_QUEUE queue_tail(PKSPIN_LOCK lock) {
    return reinterpret_cast<PKSPIN_LOCK_QUEUE>(__atomic_load_n(lock, __ATOMIC_ACQUIRE));
}

ULONG_PTR queue_flags(const KSPIN_LOCK_QUEUE *entry) {
    return reinterpret_cast<ULONG_PTR>(__atomic_load_n(&entry->Lock, __ATOMIC_ACQUIRE));
}

void set_queue_lock(PKSPIN_LOCK_QUEUE entry, PKSPIN_LOCK lock, ULONG_PTR flags) {
    __atomic_store_n(&entry->Lock,
                     reinterpret_cast<PKSPIN_LOCK>(reinterpret_cast<ULONG_PTR>(lock) | flags),
                     __ATOMIC_RELEASE);
}

// Spins with the pause hint, then yields, until `done()`: the thread it waits for may have
// been preempted.
template <class Done>
void spin_until(Done done) {
    for (unsigned attempt = 0; !done(); ++attempt) {
        if (sim::attached()) {
            sim::spin_pause("queued spin lock (held)");
        } else if (attempt < kSpinsBeforeYield) {
            cpu_relax();
        } else {
            sched_yield();
        }
    }
}

void acquire_queued(PKSPIN_LOCK lock, PKLOCK_QUEUE_HANDLE handle) {
    sim::yield("KeAcquireInStackQueuedSpinLock");
    PKSPIN_LOCK_QUEUE self = &handle->LockQueue;
    __atomic_store_n(&self->Next, nullptr, __ATOMIC_RELAXED);
    set_queue_lock(self, lock, kQueueWait);
    auto *previous = reinterpret_cast<PKSPIN_LOCK_QUEUE>(
        __atomic_exchange_n(lock, reinterpret_cast<ULONG_PTR>(self), __ATOMIC_ACQ_REL));
    if (previous != nullptr) {
        __atomic_store_n(&previous->Next, self, __ATOMIC_RELEASE);
        spin_until([&] { return (queue_flags(self) & kQueueWait) == 0; });
    }
    set_queue_lock(self, lock, kQueueOwner);
}

void release_queued(PKLOCK_QUEUE_HANDLE handle) {
    PKSPIN_LOCK_QUEUE self = &handle->LockQueue;
    const ULONG_PTR flags = queue_flags(self);
    auto *lock = reinterpret_cast<PKSPIN_LOCK>(flags & ~(kQueueWait | kQueueOwner));
    if (lock == nullptr || (flags & kQueueOwner) == 0 || queue_tail(lock) == nullptr) {
        bugcheck(SPIN_LOCK_NOT_OWNED, reinterpret_cast<ULONG_PTR>(lock),
                 reinterpret_cast<ULONG_PTR>(handle), 0, 0,
                 "releasing an in-stack queued spin lock through a handle that does not hold it");
    }
    set_queue_lock(self, nullptr, 0);
    PKSPIN_LOCK_QUEUE next = __atomic_load_n(&self->Next, __ATOMIC_ACQUIRE);
    if (next == nullptr) {
        // No successor yet: free the lock, unless someone swapped in as tail meanwhile.
        ULONG_PTR expected = reinterpret_cast<ULONG_PTR>(self);
        if (__atomic_compare_exchange_n(lock, &expected, ULONG_PTR{0}, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED)) {
            return;
        }
        // It has, and is about to link itself behind us.
        spin_until([&] { return __atomic_load_n(&self->Next, __ATOMIC_ACQUIRE) != nullptr; });
        next = __atomic_load_n(&self->Next, __ATOMIC_ACQUIRE);
    }
    // The hand-off; after this store the successor may return, so `next` is not touched again.
    set_queue_lock(next, lock, 0);
}

}  // namespace
}  // namespace softndk::wdk

using softndk::wdk::bugcheck;
using softndk::wdk::t_irql;

extern "C" {

KIRQL NTAPI KeGetCurrentIrql(VOID) {
    return t_irql;
}

KIRQL NTAPI KfRaiseIrql(KIRQL NewIrql) {
    const KIRQL old = t_irql;
    if (NewIrql < old) {
        bugcheck(IRQL_NOT_GREATER_OR_EQUAL, old, NewIrql, 0, 0,
                 "KeRaiseIrql to an IRQL below the current one");
    }
    t_irql = NewIrql;
    return old;
}

VOID NTAPI KeLowerIrql(KIRQL NewIrql) {
    if (NewIrql > t_irql) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, NewIrql, t_irql, 0, 0,
                 "KeLowerIrql to an IRQL above the current one");
    }
    t_irql = NewIrql;
}

KIRQL NTAPI KeRaiseIrqlToDpcLevel(VOID) {
    return KfRaiseIrql(DISPATCH_LEVEL);
}

VOID NTAPI KeInitializeSpinLock(PKSPIN_LOCK SpinLock) {
    std::atomic_ref<ULONG_PTR>(*SpinLock).store(0, std::memory_order_relaxed);
}

KIRQL NTAPI KeAcquireSpinLockRaiseToDpc(PKSPIN_LOCK SpinLock) {
    const KIRQL old = KfRaiseIrql(DISPATCH_LEVEL);
    softndk::wdk::acquire(SpinLock);
    return old;
}

VOID NTAPI KeReleaseSpinLock(PKSPIN_LOCK SpinLock, KIRQL NewIrql) {
    softndk::wdk::release(SpinLock);
    KeLowerIrql(NewIrql);
}

VOID NTAPI KeAcquireSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock) {
    softndk::wdk::acquire(SpinLock);
}

VOID NTAPI KeReleaseSpinLockFromDpcLevel(PKSPIN_LOCK SpinLock) {
    softndk::wdk::release(SpinLock);
}

BOOLEAN NTAPI KeTryToAcquireSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock) {
    ULONG_PTR expected = 0;
    return std::atomic_ref<ULONG_PTR>(*SpinLock).compare_exchange_strong(
               expected, softndk::wdk::owner_token(), std::memory_order_acquire,
               std::memory_order_relaxed)
               ? TRUE
               : FALSE;
}

BOOLEAN NTAPI KeTestSpinLock(PKSPIN_LOCK SpinLock) {
    return std::atomic_ref<ULONG_PTR>(*SpinLock).load(std::memory_order_relaxed) == 0 ? TRUE
                                                                                      : FALSE;
}

}  // extern "C"

extern "C" {

VOID NTAPI KeAcquireInStackQueuedSpinLock(PKSPIN_LOCK SpinLock, PKLOCK_QUEUE_HANDLE LockHandle) {
    LockHandle->OldIrql = KfRaiseIrql(DISPATCH_LEVEL);
    softndk::wdk::acquire_queued(SpinLock, LockHandle);
}

VOID NTAPI KeReleaseInStackQueuedSpinLock(PKLOCK_QUEUE_HANDLE LockHandle) {
    const KIRQL old = LockHandle->OldIrql;
    softndk::wdk::release_queued(LockHandle);
    KeLowerIrql(old);
}

VOID NTAPI KeAcquireInStackQueuedSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock,
                                                    PKLOCK_QUEUE_HANDLE LockHandle) {
    softndk::wdk::acquire_queued(SpinLock, LockHandle);
}

VOID NTAPI KeReleaseInStackQueuedSpinLockFromDpcLevel(PKLOCK_QUEUE_HANDLE LockHandle) {
    softndk::wdk::release_queued(LockHandle);
}

}  // extern "C"
