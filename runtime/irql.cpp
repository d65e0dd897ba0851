// Per-thread IRQL bookkeeping and spin locks.
#include <sched.h>

#include <atomic>

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
        if (attempt < kSpinsBeforeYield) {
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
