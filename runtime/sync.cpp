// Executive synchronisation: fast mutexes and rundown protection (also with a count, and the
// cache-aware variant), built on KEVENT waits so
// that contended acquirers sleep in the dispatcher (and a system worker that blocks here lets
// the pool release another worker). Contracts are in wdm.h.
#include <atomic>

#include <spdlog/fmt/fmt.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

static_assert(sizeof(FAST_MUTEX) == 56, "FAST_MUTEX must keep Windows' x64 size");
static_assert(offsetof(FAST_MUTEX, Event) == 24);
static_assert(offsetof(FAST_MUTEX, OldIrql) == 48);
static_assert(sizeof(EX_RUNDOWN_REF) == 8);

// A fast mutex's Owner is the address of the owner's t_owner_token: non-NULL and distinct for
// every live thread.
thread_local char t_owner_token;

PVOID self_token() {
    return &t_owner_token;
}

std::atomic_ref<LONG> mutex_count(PFAST_MUTEX mutex) {
    return std::atomic_ref<LONG>(mutex->Count);
}

std::atomic_ref<PVOID> mutex_owner(PFAST_MUTEX mutex) {
    return std::atomic_ref<PVOID>(mutex->Owner);
}

void check_irql_at_most(KIRQL highest, const char *caller, const void *object) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > highest) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(object), irql, highest, 0,
                 fmt::format("{} at IRQL {} (the limit is {})", caller, irql, highest));
    }
}

// ---- Rundown references. Count is ULONG_PTR-sized and declared volatile in the WDK layout, so
// the atomic builtins (which accept volatile objects) do the accesses.

// A rundown in progress: Count points here (| EX_RUNDOWN_ACTIVE). Lives on the waiter's stack;
// the last user to leave sets the event, whose KeSetEvent makes that user's last access.
struct alignas(8) RundownWaitBlock {
    ULONG_PTR users;
    KEVENT wake;
};

ULONG_PTR load_count(PEX_RUNDOWN_REF ref) {
    return __atomic_load_n(&ref->Count, __ATOMIC_ACQUIRE);
}

bool exchange_count(PEX_RUNDOWN_REF ref, ULONG_PTR &expected, ULONG_PTR desired) {
    return __atomic_compare_exchange_n(&ref->Count, &expected, desired, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI ExInitializeFastMutex(PFAST_MUTEX FastMutex) {
    FastMutex->Count = 1;
    FastMutex->Owner = nullptr;
    FastMutex->Contention = 0;
    KeInitializeEvent(&FastMutex->Event, SynchronizationEvent, FALSE);
    FastMutex->OldIrql = PASSIVE_LEVEL;
}

VOID NTAPI ExAcquireFastMutex(PFAST_MUTEX FastMutex) {
    wdk::check_irql_at_most(APC_LEVEL, "ExAcquireFastMutex", FastMutex);
    // Only this thread can have stored its own token, so the check has no false positives.
    if (wdk::mutex_owner(FastMutex).load(std::memory_order_relaxed) == wdk::self_token()) {
        wdk::fatal(
            fmt::format("ExAcquireFastMutex: the thread already owns fast mutex {} (fast "
                        "mutexes are not recursive; this deadlocks on Windows)",
                        static_cast<void *>(FastMutex)));
    }
    softndk::sim::yield("ExAcquireFastMutex");  // a control transfer point in simulated time
    const KIRQL old = KfRaiseIrql(APC_LEVEL);
    // 1 -> 0 takes a free mutex; anything lower means an owner, and the release that brings
    // Count back up to <= 0 sets the synchronization event for exactly one waiter.
    if (wdk::mutex_count(FastMutex).fetch_sub(1, std::memory_order_acquire) != 1) {
        std::atomic_ref<ULONG>(FastMutex->Contention).fetch_add(1, std::memory_order_relaxed);
        KeWaitForSingleObject(&FastMutex->Event, WrExecutive, KernelMode, FALSE, nullptr);
    }
    wdk::mutex_owner(FastMutex).store(wdk::self_token(), std::memory_order_relaxed);
    FastMutex->OldIrql = old;
}

BOOLEAN NTAPI ExTryToAcquireFastMutex(PFAST_MUTEX FastMutex) {
    wdk::check_irql_at_most(APC_LEVEL, "ExTryToAcquireFastMutex", FastMutex);
    const KIRQL old = KfRaiseIrql(APC_LEVEL);
    LONG expected = 1;
    if (!wdk::mutex_count(FastMutex).compare_exchange_strong(expected, 0,
                                                             std::memory_order_acquire)) {
        KeLowerIrql(old);
        return FALSE;
    }
    wdk::mutex_owner(FastMutex).store(wdk::self_token(), std::memory_order_relaxed);
    FastMutex->OldIrql = old;
    return TRUE;
}

VOID NTAPI ExReleaseFastMutex(PFAST_MUTEX FastMutex) {
    if (wdk::mutex_owner(FastMutex).load(std::memory_order_relaxed) != wdk::self_token()) {
        wdk::fatal(fmt::format("ExReleaseFastMutex: fast mutex {} is not owned by this thread",
                               static_cast<void *>(FastMutex)));
    }
    const auto old = static_cast<KIRQL>(FastMutex->OldIrql);
    wdk::mutex_owner(FastMutex).store(nullptr, std::memory_order_relaxed);
    if (wdk::mutex_count(FastMutex).fetch_add(1, std::memory_order_release) < 0) {
        KeSetEvent(&FastMutex->Event, IO_NO_INCREMENT, FALSE);
    }
    KeLowerIrql(old);
}

VOID NTAPI ExInitializeRundownProtection(PEX_RUNDOWN_REF RunRef) {
    __atomic_store_n(&RunRef->Count, ULONG_PTR{0}, __ATOMIC_RELEASE);
}

VOID NTAPI ExReInitializeRundownProtection(PEX_RUNDOWN_REF RunRef) {
    __atomic_store_n(&RunRef->Count, ULONG_PTR{0}, __ATOMIC_RELEASE);
}

BOOLEAN NTAPI ExAcquireRundownProtection(PEX_RUNDOWN_REF RunRef) {
    return ExAcquireRundownProtectionEx(RunRef, 1);
}

BOOLEAN NTAPI ExAcquireRundownProtectionEx(PEX_RUNDOWN_REF RunRef, ULONG Count) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExAcquireRundownProtection", RunRef);
    const ULONG_PTR added = ULONG_PTR{Count} << EX_RUNDOWN_COUNT_SHIFT;
    ULONG_PTR count = wdk::load_count(RunRef);
    for (;;) {
        if ((count & EX_RUNDOWN_ACTIVE) != 0) return FALSE;
        if (wdk::exchange_count(RunRef, count, count + added)) return TRUE;
    }
}

VOID NTAPI ExReleaseRundownProtection(PEX_RUNDOWN_REF RunRef) {
    ExReleaseRundownProtectionEx(RunRef, 1);
}

VOID NTAPI ExReleaseRundownProtectionEx(PEX_RUNDOWN_REF RunRef, ULONG Count) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExReleaseRundownProtection", RunRef);
    const ULONG_PTR removed = ULONG_PTR{Count} << EX_RUNDOWN_COUNT_SHIFT;
    ULONG_PTR count = wdk::load_count(RunRef);
    for (;;) {
        if ((count & EX_RUNDOWN_ACTIVE) != 0) {
            auto *block =
                reinterpret_cast<wdk::RundownWaitBlock *>(count & ~ULONG_PTR{EX_RUNDOWN_ACTIVE});
            if (block == nullptr) break;  // rundown completed: nobody may still hold a reference
            // These users were counted into block->users when the rundown began; the waiter
            // keeps the block alive until every counted user has come through here.
            const ULONG_PTR users = __atomic_load_n(&block->users, __ATOMIC_ACQUIRE);
            if (users < Count) break;
            if (__atomic_sub_fetch(&block->users, Count, __ATOMIC_ACQ_REL) == 0) {
                KeSetEvent(&block->wake, IO_NO_INCREMENT, FALSE);
            }
            return;
        }
        if (count < removed) break;
        if (wdk::exchange_count(RunRef, count, count - removed)) return;
    }
    wdk::fatal(
        fmt::format("ExReleaseRundownProtection: rundown reference {} has no users to "
                    "release (releasing {}, Count 0x{:x})",
                    static_cast<void *>(RunRef), Count, count));
}

VOID NTAPI ExWaitForRundownProtectionRelease(PEX_RUNDOWN_REF RunRef) {
    wdk::check_irql_at_most(APC_LEVEL, "ExWaitForRundownProtectionRelease", RunRef);
    wdk::RundownWaitBlock block;
    KeInitializeEvent(&block.wake, NotificationEvent, FALSE);
    ULONG_PTR count = wdk::load_count(RunRef);
    for (;;) {
        if (count == EX_RUNDOWN_ACTIVE) return;  // already run down
        if ((count & EX_RUNDOWN_ACTIVE) != 0) {
            wdk::fatal(
                fmt::format("ExWaitForRundownProtectionRelease: another thread is already "
                            "waiting for the rundown of {}",
                            static_cast<void *>(RunRef)));
        }
        if (count == 0) {
            if (wdk::exchange_count(RunRef, count, EX_RUNDOWN_ACTIVE)) return;
            continue;
        }
        block.users = count >> EX_RUNDOWN_COUNT_SHIFT;
        if (wdk::exchange_count(RunRef, count,
                                reinterpret_cast<ULONG_PTR>(&block) | EX_RUNDOWN_ACTIVE)) {
            break;
        }
    }
    KeWaitForSingleObject(&block.wake, WrExecutive, KernelMode, FALSE, nullptr);
    // Every counted user has left: nothing refers to `block` any more.
    __atomic_store_n(&RunRef->Count, ULONG_PTR{EX_RUNDOWN_ACTIVE}, __ATOMIC_RELEASE);
}

VOID NTAPI ExRundownCompleted(PEX_RUNDOWN_REF RunRef) {
    __atomic_store_n(&RunRef->Count, ULONG_PTR{EX_RUNDOWN_ACTIVE}, __ATOMIC_RELEASE);
}

// ---- Cache-aware rundown: one shared EX_RUNDOWN_REF (softndk_wdm_exec.h says why).

PEX_RUNDOWN_REF_CACHE_AWARE NTAPI ExAllocateCacheAwareRundownProtection(POOL_TYPE PoolType,
                                                                       ULONG PoolTag) {
    auto *ref = static_cast<PEX_RUNDOWN_REF_CACHE_AWARE>(
        ExAllocatePoolWithTag(PoolType, sizeof(EX_RUNDOWN_REF_CACHE_AWARE), PoolTag));
    if (ref == nullptr) return nullptr;
    ExInitializeRundownProtectionCacheAware(ref, sizeof(EX_RUNDOWN_REF_CACHE_AWARE));
    ref->PoolToFree = ref;
    return ref;
}

SIZE_T NTAPI ExSizeOfRundownProtectionCacheAware(VOID) {
    return sizeof(EX_RUNDOWN_REF_CACHE_AWARE);
}

VOID NTAPI ExInitializeRundownProtectionCacheAware(PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware,
                                                   SIZE_T RunRefSize) {
    if (RunRefSize < sizeof(EX_RUNDOWN_REF_CACHE_AWARE)) {
        wdk::fatal(fmt::format("ExInitializeRundownProtectionCacheAware: RunRefSize {} is below "
                               "ExSizeOfRundownProtectionCacheAware() ({})",
                               RunRefSize, sizeof(EX_RUNDOWN_REF_CACHE_AWARE)));
    }
    ExInitializeRundownProtection(&RunRefCacheAware->RunRef);
    RunRefCacheAware->PoolToFree = nullptr;
    RunRefCacheAware->RunRefSize = static_cast<ULONG>(RunRefSize);
    RunRefCacheAware->Number = 1;
}

VOID NTAPI ExFreeCacheAwareRundownProtection(PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware) {
    if (RunRefCacheAware->PoolToFree == nullptr) {
        wdk::fatal(fmt::format("ExFreeCacheAwareRundownProtection: {} was not allocated by "
                               "ExAllocateCacheAwareRundownProtection",
                               static_cast<void *>(RunRefCacheAware)));
    }
    ExFreePool(RunRefCacheAware->PoolToFree);
}

BOOLEAN NTAPI ExAcquireRundownProtectionCacheAware(PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware) {
    return ExAcquireRundownProtectionEx(&RunRefCacheAware->RunRef, 1);
}

VOID NTAPI ExReleaseRundownProtectionCacheAware(PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware) {
    ExReleaseRundownProtectionEx(&RunRefCacheAware->RunRef, 1);
}

BOOLEAN NTAPI ExAcquireRundownProtectionCacheAwareEx(PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware,
                                                     ULONG Count) {
    return ExAcquireRundownProtectionEx(&RunRefCacheAware->RunRef, Count);
}

VOID NTAPI ExReleaseRundownProtectionCacheAwareEx(PEX_RUNDOWN_REF_CACHE_AWARE RunRef,
                                                  ULONG Count) {
    ExReleaseRundownProtectionEx(&RunRef->RunRef, Count);
}

VOID NTAPI ExWaitForRundownProtectionReleaseCacheAware(PEX_RUNDOWN_REF_CACHE_AWARE RunRef) {
    ExWaitForRundownProtectionRelease(&RunRef->RunRef);
}

VOID NTAPI ExRundownCompletedCacheAware(PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware) {
    ExRundownCompleted(&RunRefCacheAware->RunRef);
}

VOID NTAPI
ExReInitializeRundownProtectionCacheAware(PEX_RUNDOWN_REF_CACHE_AWARE RunRefCacheAware) {
    ExReInitializeRundownProtection(&RunRefCacheAware->RunRef);
}

}  // extern "C"
