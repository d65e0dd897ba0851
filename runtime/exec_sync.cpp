// Kernel threads' region counts and priorities, guarded mutexes, KMUTEX and KSEMAPHORE (through
// the dispatcher), executive resources, push locks and shared spin locks. Contracts are in
// softndk_wdm_exec.h.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

#include <spdlog/fmt/fmt.h>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

static_assert(sizeof(KMUTEX) == 56, "KMUTEX must keep Windows' x64 size");
static_assert(offsetof(KMUTEX, OwnerThread) == 40);
static_assert(sizeof(KSEMAPHORE) == 32, "KSEMAPHORE must keep Windows' x64 size");
static_assert(sizeof(ERESOURCE) == 104, "ERESOURCE must keep Windows' x64 size");
static_assert(offsetof(ERESOURCE, SpinLock) == 96);

thread_local _KTHREAD t_thread;

void check_irql_at_most(KIRQL highest, const char *caller, const void *object) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > highest) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(object), irql, highest, 0,
                 fmt::format("{} at IRQL {} (the limit is {})", caller, irql, highest));
    }
}

// Driver Verifier's rule for resources and push locks: kernel APCs must be disabled, so that
// the owner cannot be suspended while it holds the lock.
void check_apcs_disabled(const char *caller, const void *object) {
    if (KeAreApcsDisabled() == FALSE && KeGetCurrentIrql() < APC_LEVEL) {
        fatal(
            fmt::format("{}: {} acquired with kernel APCs enabled; call KeEnterCriticalRegion "
                        "first (or run at APC_LEVEL) - Driver Verifier bug-checks this",
                        caller, object));
    }
}

[[noreturn]] void raise_status(NTSTATUS status, const void *object, std::string_view why) {
    bugcheck(KMODE_EXCEPTION_NOT_HANDLED, static_cast<ULONG_PTR>(static_cast<ULONG>(status)),
             reinterpret_cast<ULONG_PTR>(object), 0, 0, why);
}

// ---- Guarded mutexes: FAST_MUTEX's protocol (Count 1 free, 0 owned, -n with n waiters on the
// synchronization Event) with the owner's PKTHREAD in Owner.

std::atomic_ref<LONG> mutex_count(PKGUARDED_MUTEX mutex) {
    return std::atomic_ref<LONG>(mutex->Count);
}

std::atomic_ref<PVOID> mutex_owner(PKGUARDED_MUTEX mutex) {
    return std::atomic_ref<PVOID>(mutex->Owner);
}

void acquire_guarded(PKGUARDED_MUTEX mutex, const char *caller) {
    if (mutex_owner(mutex).load(std::memory_order_relaxed) == KeGetCurrentThread()) {
        fatal(
            fmt::format("{}: the thread already owns guarded mutex {} (not recursive; this "
                        "deadlocks on Windows)",
                        caller, static_cast<void *>(mutex)));
    }
    sim::yield(caller);  // a control transfer point in simulated time
    if (mutex_count(mutex).fetch_sub(1, std::memory_order_acquire) != 1) {
        std::atomic_ref<ULONG>(mutex->Contention).fetch_add(1, std::memory_order_relaxed);
        KeWaitForSingleObject(&mutex->Event, WrExecutive, KernelMode, FALSE, nullptr);
    }
    mutex_owner(mutex).store(KeGetCurrentThread(), std::memory_order_relaxed);
}

void release_guarded(PKGUARDED_MUTEX mutex, const char *caller) {
    if (mutex_owner(mutex).load(std::memory_order_relaxed) != KeGetCurrentThread()) {
        fatal(fmt::format("{}: guarded mutex {} is not owned by this thread", caller,
                          static_cast<void *>(mutex)));
    }
    mutex_owner(mutex).store(nullptr, std::memory_order_relaxed);
    if (mutex_count(mutex).fetch_add(1, std::memory_order_release) < 0) {
        KeSetEvent(&mutex->Event, IO_NO_INCREMENT, FALSE);
    }
}

// ---- KMUTEX and KSEMAPHORE changes, made under the dispatcher lock.

struct MutexRelease {
    PKTHREAD caller;
    LONG previous;
    bool not_owner;
    bool freed;  // the release made the mutex free
};

bool release_mutex_locked(DISPATCHER_HEADER *header, void *context) {
    auto &release = *static_cast<MutexRelease *>(context);
    PRKMUTEX mutex = CONTAINING_RECORD(header, KMUTEX, Header);
    // Under the dispatcher lock; the atomic accesses keep KeReadStateMutex's lock-free read
    // race-free.
    std::atomic_ref<LONG> state(header->SignalState);
    release.previous = state.load(std::memory_order_relaxed);
    if (mutex->OwnerThread != release.caller || release.previous > 0) {
        release.not_owner = true;
        return false;
    }
    state.store(release.previous + 1, std::memory_order_release);
    if (release.previous + 1 == 1) {
        mutex->OwnerThread = nullptr;
        release.freed = true;
    }
    return true;
}

struct SemaphoreRelease {
    LONG adjustment;
    LONG previous;
    bool over_limit;
};

bool release_semaphore_locked(DISPATCHER_HEADER *header, void *context) {
    auto &release = *static_cast<SemaphoreRelease *>(context);
    PRKSEMAPHORE semaphore = CONTAINING_RECORD(header, KSEMAPHORE, Header);
    std::atomic_ref<LONG> state(header->SignalState);
    release.previous = state.load(std::memory_order_relaxed);
    if (release.adjustment > semaphore->Limit - release.previous) {
        release.over_limit = true;
        return false;
    }
    state.store(release.previous + release.adjustment, std::memory_order_release);
    return true;
}

// ---- Executive resources. The runtime's state, behind ERESOURCE.Reserved2.

constexpr ULONG kResourceMagic = 0x53524552;  // "RERS"

struct ResourceState {
    ULONG magic = kResourceMagic;
    std::mutex lock;
    sim::ConditionVariable changed{"ERESOURCE"};
    PKTHREAD exclusive_owner = nullptr;
    ULONG exclusive_count = 0;
    std::unordered_map<PKTHREAD, ULONG> shared_owners;  // thread -> holds
    std::deque<const void *> exclusive_queue;           // FIFO tickets of exclusive waiters
    ULONG shared_waiters = 0;
    ULONG conversions = 0;  // ExConvertExclusiveToSharedLite calls: each lets the sharers in
};

ResourceState &state_of(PERESOURCE resource, const char *caller) {
    auto *state = static_cast<ResourceState *>(resource->Reserved2);
    if (state == nullptr || state->magic != kResourceMagic) {
        fatal(fmt::format("{}: {} is not an initialised ERESOURCE (ExInitializeResourceLite)",
                          caller, static_cast<void *>(resource)));
    }
    return *state;
}

// Keeps the public snapshot fields in step, under state.lock.
void publish(PERESOURCE resource, const ResourceState &state) {
    const auto owners =
        static_cast<SHORT>(state.shared_owners.size() + (state.exclusive_owner != nullptr ? 1 : 0));
    resource->ActiveCount = owners;
    resource->ActiveEntries = static_cast<ULONG>(owners);
    resource->Flag = state.exclusive_owner != nullptr ? ResourceOwnedExclusive : 0;
    resource->OwnerEntry.OwnerThread = reinterpret_cast<ERESOURCE_THREAD>(state.exclusive_owner);
    resource->NumberOfExclusiveWaiters = static_cast<ULONG>(state.exclusive_queue.size());
    resource->NumberOfSharedWaiters = state.shared_waiters;
}

enum class SharedRule { kNormal, kStarveExclusive, kWaitForExclusive };

bool acquire_exclusive(PERESOURCE resource, BOOLEAN wait, const char *caller) {
    check_irql_at_most(APC_LEVEL, caller, resource);
    check_apcs_disabled(caller, resource);
    ResourceState &state = state_of(resource, caller);
    if (wait) sim::yield(caller);  // a control transfer point in simulated time
    const PKTHREAD self = KeGetCurrentThread();
    std::unique_lock guard(state.lock);
    if (state.exclusive_owner == self) {
        ++state.exclusive_count;
        return true;
    }
    if (state.shared_owners.count(self) != 0) {
        fatal(
            fmt::format("{}: the thread holds ERESOURCE {} shared and asks for exclusive "
                        "access (a deadlock on Windows)",
                        caller, static_cast<void *>(resource)));
    }
    auto free = [&] { return state.exclusive_owner == nullptr && state.shared_owners.empty(); };
    if (free() && state.exclusive_queue.empty()) {
        state.exclusive_owner = self;
        state.exclusive_count = 1;
        publish(resource, state);
        return true;
    }
    if (!wait) return false;
    ++resource->ContentionCount;
    const char ticket = 0;
    state.exclusive_queue.push_back(&ticket);
    publish(resource, state);
    {
        const BlockingScope blocking;
        state.changed.wait(guard,
                           [&] { return free() && state.exclusive_queue.front() == &ticket; });
    }
    state.exclusive_queue.pop_front();
    state.exclusive_owner = self;
    state.exclusive_count = 1;
    publish(resource, state);
    return true;
}

bool acquire_shared(PERESOURCE resource, BOOLEAN wait, SharedRule rule, const char *caller) {
    check_irql_at_most(APC_LEVEL, caller, resource);
    check_apcs_disabled(caller, resource);
    ResourceState &state = state_of(resource, caller);
    if (wait) sim::yield(caller);  // a control transfer point in simulated time
    const PKTHREAD self = KeGetCurrentThread();
    std::unique_lock guard(state.lock);
    if (state.exclusive_owner == self) {
        ++state.exclusive_count;  // recursion on an exclusive hold stays exclusive
        return true;
    }
    auto mine = state.shared_owners.find(self);
    if (mine != state.shared_owners.end()) {
        ++mine->second;
        return true;
    }
    auto grantable = [&] {
        if (state.exclusive_owner != nullptr) return false;
        if (rule == SharedRule::kStarveExclusive && !state.shared_owners.empty()) return true;
        return state.exclusive_queue.empty();
    };
    if (!grantable()) {
        if (!wait) return false;
        ++resource->ContentionCount;
        ++state.shared_waiters;
        publish(resource, state);
        // A conversion to shared admits the sharers waiting at that moment, exclusive waiters
        // or not, as Windows does.
        const ULONG conversions = state.conversions;
        {
            const BlockingScope blocking;
            state.changed.wait(guard, [&] {
                return grantable() ||
                       (state.conversions != conversions && state.exclusive_owner == nullptr);
            });
        }
        --state.shared_waiters;
    }
    state.shared_owners[self] = 1;
    publish(resource, state);
    return true;
}

void release_resource(PERESOURCE resource, PKTHREAD owner, const char *caller) {
    check_irql_at_most(DISPATCH_LEVEL, caller, resource);
    ResourceState &state = state_of(resource, caller);
    std::lock_guard guard(state.lock);
    bool now_free = false;
    if (state.exclusive_owner == owner && owner != nullptr) {
        if (--state.exclusive_count == 0) {
            state.exclusive_owner = nullptr;
            now_free = true;
        }
    } else {
        auto holder = state.shared_owners.find(owner);
        if (holder == state.shared_owners.end()) {
            bugcheck(RESOURCE_NOT_OWNED, reinterpret_cast<ULONG_PTR>(resource),
                     reinterpret_cast<ULONG_PTR>(owner), 0, 0,
                     fmt::format("{}: the thread does not own the ERESOURCE", caller));
        }
        if (--holder->second == 0) {
            state.shared_owners.erase(holder);
            now_free = state.shared_owners.empty();
        }
    }
    publish(resource, state);
    if (now_free) state.changed.notify_all();
}

// ---- Push locks.
constexpr ULONG_PTR kPushExclusive = 1;
constexpr ULONG_PTR kPushWaiting = 2;
constexpr ULONG_PTR kPushShareUnit = 4;

// Where push-lock acquirers sleep: one process-wide parking place. A sleeper sets kPushWaiting
// under `lock` while the lock word is still busy; a releaser that clears the bit notifies under
// `lock`, so no wake-up is lost.
struct PushLockParking {
    std::mutex lock;
    sim::ConditionVariable released{"push lock"};
};

PushLockParking &parking() {
    return fork_local_instance<PushLockParking>();
}

template <class CanTake, class Taken>
void acquire_push_lock(PEX_PUSH_LOCK push_lock, CanTake can_take, Taken taken) {
    sim::yield("ExAcquirePushLock");  // a control transfer point in simulated time
    std::atomic_ref<ULONG_PTR> word(*push_lock);
    for (;;) {
        ULONG_PTR seen = word.load(std::memory_order_relaxed);
        while (can_take(seen)) {
            if (word.compare_exchange_weak(seen, taken(seen), std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
                return;
            }
        }
        PushLockParking &park = parking();
        std::unique_lock guard(park.lock);
        seen = word.load(std::memory_order_relaxed);
        if (can_take(seen)) continue;
        if ((seen & kPushWaiting) == 0 &&
            !word.compare_exchange_strong(seen, seen | kPushWaiting, std::memory_order_relaxed)) {
            continue;  // it changed: look again
        }
        const BlockingScope blocking;
        park.released.wait(guard);
    }
}

void wake_push_lock_waiters(ULONG_PTR previous) {
    if ((previous & kPushWaiting) == 0) return;
    PushLockParking &park = parking();
    std::lock_guard guard(park.lock);
    park.released.notify_all();
}

// ---- Shared spin locks.
constexpr LONG kSpinExclusive = static_cast<LONG>(0x80000000u);
constexpr LONG kSpinWriterWaits = 0x40000000;
constexpr LONG kSpinReaders = 0x3FFFFFFF;
constexpr unsigned kSpinsBeforeYield = 64;

std::atomic_ref<LONG> spin_word(PEX_SPIN_LOCK lock) {
    return std::atomic_ref<LONG>(*const_cast<LONG *>(lock));
}

void pause_or_yield(unsigned attempt) {
    if (sim::attached()) {
        sim::spin_pause("shared spin lock");
    } else if (attempt < kSpinsBeforeYield) {
        cpu_relax();
    } else {
        sched_yield();
    }
}

bool try_shared(PEX_SPIN_LOCK lock) {
    LONG seen = spin_word(lock).load(std::memory_order_relaxed);
    while ((seen & (kSpinExclusive | kSpinWriterWaits)) == 0) {
        if (spin_word(lock).compare_exchange_weak(seen, seen + 1, std::memory_order_acquire,
                                                  std::memory_order_relaxed)) {
            return true;
        }
    }
    return false;
}

bool try_exclusive(PEX_SPIN_LOCK lock) {
    LONG seen = spin_word(lock).load(std::memory_order_relaxed);
    while ((seen & ~kSpinWriterWaits) == 0) {
        if (spin_word(lock).compare_exchange_weak(seen, kSpinExclusive, std::memory_order_acquire,
                                                  std::memory_order_relaxed)) {
            return true;
        }
    }
    return false;
}

void acquire_shared_spin(PEX_SPIN_LOCK lock) {
    for (unsigned attempt = 0; !try_shared(lock); ++attempt) {
        pause_or_yield(attempt);
    }
}

void acquire_exclusive_spin(PEX_SPIN_LOCK lock) {
    for (unsigned attempt = 0; !try_exclusive(lock); ++attempt) {
        // Announce the writer so that new readers hold back.
        spin_word(lock).fetch_or(kSpinWriterWaits, std::memory_order_relaxed);
        pause_or_yield(attempt);
    }
}

void release_shared_spin(PEX_SPIN_LOCK lock) {
    LONG seen = spin_word(lock).load(std::memory_order_relaxed);
    for (;;) {
        if ((seen & kSpinExclusive) != 0 || (seen & kSpinReaders) == 0) {
            bugcheck(SPIN_LOCK_NOT_OWNED, reinterpret_cast<ULONG_PTR>(lock),
                     static_cast<ULONG>(seen), 0, 0,
                     "releasing a shared spin lock that is not held shared");
        }
        if (spin_word(lock).compare_exchange_weak(seen, seen - 1, std::memory_order_release,
                                                  std::memory_order_relaxed)) {
            return;
        }
    }
}

void release_exclusive_spin(PEX_SPIN_LOCK lock) {
    const LONG seen = spin_word(lock).load(std::memory_order_relaxed);
    if ((seen & kSpinExclusive) == 0) {
        bugcheck(SPIN_LOCK_NOT_OWNED, reinterpret_cast<ULONG_PTR>(lock), static_cast<ULONG>(seen),
                 0, 0, "releasing a shared spin lock that is not held exclusively");
    }
    spin_word(lock).store(0, std::memory_order_release);  // waiting writers announce again
}

KIRQL raise_to_dispatch() {
    return KfRaiseIrql(DISPATCH_LEVEL);
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

PKTHREAD NTAPI KeGetCurrentThread(VOID) {
    return &wdk::t_thread;
}

VOID NTAPI KeEnterCriticalRegion(VOID) {
    wdk::check_irql_at_most(APC_LEVEL, "KeEnterCriticalRegion", nullptr);
    ++wdk::t_thread.critical_regions;
}

VOID NTAPI KeLeaveCriticalRegion(VOID) {
    wdk::check_irql_at_most(APC_LEVEL, "KeLeaveCriticalRegion", nullptr);
    if (wdk::t_thread.critical_regions == 0) {
        wdk::fatal("KeLeaveCriticalRegion: the thread is not in a critical region");
    }
    --wdk::t_thread.critical_regions;
}

VOID NTAPI KeEnterGuardedRegion(VOID) {
    wdk::check_irql_at_most(APC_LEVEL, "KeEnterGuardedRegion", nullptr);
    ++wdk::t_thread.guarded_regions;
}

VOID NTAPI KeLeaveGuardedRegion(VOID) {
    wdk::check_irql_at_most(APC_LEVEL, "KeLeaveGuardedRegion", nullptr);
    if (wdk::t_thread.guarded_regions == 0) {
        wdk::fatal("KeLeaveGuardedRegion: the thread is not in a guarded region");
    }
    --wdk::t_thread.guarded_regions;
}

BOOLEAN NTAPI KeAreApcsDisabled(VOID) {
    return (wdk::t_thread.critical_regions != 0 || wdk::t_thread.guarded_regions != 0) ? TRUE
                                                                                       : FALSE;
}

BOOLEAN NTAPI KeAreAllApcsDisabled(VOID) {
    return (wdk::t_thread.guarded_regions != 0 || KeGetCurrentIrql() >= APC_LEVEL) ? TRUE : FALSE;
}

// ---- Guarded mutexes.

VOID NTAPI KeInitializeGuardedMutex(PKGUARDED_MUTEX Mutex) {
    ExInitializeFastMutex(Mutex);
}

VOID NTAPI KeAcquireGuardedMutex(PKGUARDED_MUTEX Mutex) {
    wdk::check_irql_at_most(APC_LEVEL, "KeAcquireGuardedMutex", Mutex);
    KeEnterGuardedRegion();
    wdk::acquire_guarded(Mutex, "KeAcquireGuardedMutex");
}

BOOLEAN NTAPI KeTryToAcquireGuardedMutex(PKGUARDED_MUTEX Mutex) {
    wdk::check_irql_at_most(APC_LEVEL, "KeTryToAcquireGuardedMutex", Mutex);
    KeEnterGuardedRegion();
    LONG expected = 1;
    if (!wdk::mutex_count(Mutex).compare_exchange_strong(expected, 0, std::memory_order_acquire)) {
        KeLeaveGuardedRegion();
        return FALSE;
    }
    wdk::mutex_owner(Mutex).store(KeGetCurrentThread(), std::memory_order_relaxed);
    return TRUE;
}

VOID NTAPI KeReleaseGuardedMutex(PKGUARDED_MUTEX Mutex) {
    wdk::release_guarded(Mutex, "KeReleaseGuardedMutex");
    KeLeaveGuardedRegion();
}

VOID NTAPI KeAcquireGuardedMutexUnsafe(PKGUARDED_MUTEX FastMutex) {
    wdk::check_irql_at_most(APC_LEVEL, "KeAcquireGuardedMutexUnsafe", FastMutex);
    if (KeAreAllApcsDisabled() == FALSE) {
        wdk::fatal(
            fmt::format("KeAcquireGuardedMutexUnsafe: guarded mutex {} acquired outside a "
                        "guarded region and below APC_LEVEL",
                        static_cast<void *>(FastMutex)));
    }
    wdk::acquire_guarded(FastMutex, "KeAcquireGuardedMutexUnsafe");
}

VOID NTAPI KeReleaseGuardedMutexUnsafe(PKGUARDED_MUTEX FastMutex) {
    wdk::release_guarded(FastMutex, "KeReleaseGuardedMutexUnsafe");
}

// ---- KMUTEX.

VOID NTAPI KeInitializeMutex(PRKMUTEX Mutex, ULONG Level) {
    (void)Level;
    Mutex->Header.Type = wdk::kMutantObject;
    Mutex->Header.Reserved1 = 0;
    Mutex->Header.Size = sizeof(KMUTEX) / sizeof(LONG);
    Mutex->Header.Reserved2 = 0;
    Mutex->Header.WaitListHead.Flink = Mutex->Header.WaitListHead.Blink =
        &Mutex->Header.WaitListHead;
    Mutex->MutantListEntry.Flink = Mutex->MutantListEntry.Blink = &Mutex->MutantListEntry;
    Mutex->OwnerThread = nullptr;
    Mutex->Abandoned = FALSE;
    Mutex->ApcDisable = 1;
    std::atomic_ref<LONG>(Mutex->Header.SignalState).store(1, std::memory_order_release);
}

LONG NTAPI KeReleaseMutex(PRKMUTEX Mutex, BOOLEAN Wait) {
    (void)Wait;
    wdk::check_irql_at_most(DISPATCH_LEVEL, "KeReleaseMutex", Mutex);
    if (Mutex == nullptr || Mutex->Header.Type != wdk::kMutantObject) {
        wdk::fatal(fmt::format("KeReleaseMutex: {} is not a KMUTEX", static_cast<void *>(Mutex)));
    }
    wdk::MutexRelease release{KeGetCurrentThread(), 0, false, false};
    wdk::change_and_release_waiters(&Mutex->Header, wdk::release_mutex_locked, &release);
    if (release.not_owner) {
        wdk::raise_status(STATUS_MUTANT_NOT_OWNED, Mutex,
                          "KeReleaseMutex by a thread that does not own the KMUTEX raised "
                          "STATUS_MUTANT_NOT_OWNED");
    }
    if (release.freed) --KeGetCurrentThread()->critical_regions;  // entered by the wait
    return release.previous;
}

LONG NTAPI KeReadStateMutex(PRKMUTEX Mutex) {
    return std::atomic_ref<LONG>(Mutex->Header.SignalState).load(std::memory_order_acquire);
}

// ---- KSEMAPHORE.

VOID NTAPI KeInitializeSemaphore(PRKSEMAPHORE Semaphore, LONG Count, LONG Limit) {
    if (Count < 0 || Limit <= 0 || Count > Limit) {
        wdk::fatal(
            fmt::format("KeInitializeSemaphore: Count {} and Limit {} (need 0 <= Count <= "
                        "Limit, Limit > 0)",
                        Count, Limit));
    }
    Semaphore->Header.Type = wdk::kSemaphoreObject;
    Semaphore->Header.Reserved1 = 0;
    Semaphore->Header.Size = sizeof(KSEMAPHORE) / sizeof(LONG);
    Semaphore->Header.Reserved2 = 0;
    Semaphore->Header.WaitListHead.Flink = Semaphore->Header.WaitListHead.Blink =
        &Semaphore->Header.WaitListHead;
    Semaphore->Limit = Limit;
    std::atomic_ref<LONG>(Semaphore->Header.SignalState).store(Count, std::memory_order_release);
}

LONG NTAPI KeReleaseSemaphore(PRKSEMAPHORE Semaphore, KPRIORITY Increment, LONG Adjustment,
                              BOOLEAN Wait) {
    (void)Increment;
    (void)Wait;
    wdk::check_irql_at_most(DISPATCH_LEVEL, "KeReleaseSemaphore", Semaphore);
    if (Semaphore == nullptr || Semaphore->Header.Type != wdk::kSemaphoreObject) {
        wdk::fatal(fmt::format("KeReleaseSemaphore: {} is not a KSEMAPHORE",
                               static_cast<void *>(Semaphore)));
    }
    if (Adjustment <= 0) {
        wdk::fatal(fmt::format("KeReleaseSemaphore: Adjustment {} (it must be > 0)", Adjustment));
    }
    wdk::SemaphoreRelease release{Adjustment, 0, false};
    wdk::change_and_release_waiters(&Semaphore->Header, wdk::release_semaphore_locked, &release);
    if (release.over_limit) {
        wdk::raise_status(STATUS_SEMAPHORE_LIMIT_EXCEEDED, Semaphore,
                          fmt::format("KeReleaseSemaphore: count {} + {} exceeds the limit {}; "
                                      "STATUS_SEMAPHORE_LIMIT_EXCEEDED raised",
                                      release.previous, Adjustment, Semaphore->Limit));
    }
    return release.previous;
}

LONG NTAPI KeReadStateSemaphore(PRKSEMAPHORE Semaphore) {
    return std::atomic_ref<LONG>(Semaphore->Header.SignalState).load(std::memory_order_acquire);
}

// ---- ERESOURCE.

NTSTATUS NTAPI ExInitializeResourceLite(PERESOURCE Resource) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExInitializeResourceLite", Resource);
    std::memset(static_cast<void *>(Resource), 0, sizeof(*Resource));
    InitializeListHead(&Resource->SystemResourcesList);
    Resource->Reserved2 = new wdk::ResourceState;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ExReinitializeResourceLite(PERESOURCE Resource) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExReinitializeResourceLite", Resource);
    NTSTATUS status = ExDeleteResourceLite(Resource);
    if (NT_SUCCESS(status)) status = ExInitializeResourceLite(Resource);
    return status;
}

NTSTATUS NTAPI ExDeleteResourceLite(PERESOURCE Resource) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExDeleteResourceLite", Resource);
    wdk::ResourceState &state = wdk::state_of(Resource, "ExDeleteResourceLite");
    {
        std::lock_guard guard(state.lock);
        if (state.exclusive_owner != nullptr || !state.shared_owners.empty() ||
            !state.exclusive_queue.empty() || state.shared_waiters != 0) {
            wdk::fatal(
                fmt::format("ExDeleteResourceLite: ERESOURCE {} is still owned or waited "
                            "for",
                            static_cast<void *>(Resource)));
        }
        state.magic = 0;
    }
    delete &state;
    Resource->Reserved2 = nullptr;
    return STATUS_SUCCESS;
}

BOOLEAN NTAPI ExAcquireResourceExclusiveLite(PERESOURCE Resource, BOOLEAN Wait) {
    return wdk::acquire_exclusive(Resource, Wait, "ExAcquireResourceExclusiveLite") ? TRUE : FALSE;
}

BOOLEAN NTAPI ExAcquireResourceSharedLite(PERESOURCE Resource, BOOLEAN Wait) {
    return wdk::acquire_shared(Resource, Wait, wdk::SharedRule::kNormal,
                               "ExAcquireResourceSharedLite")
               ? TRUE
               : FALSE;
}

BOOLEAN NTAPI ExAcquireSharedStarveExclusive(PERESOURCE Resource, BOOLEAN Wait) {
    return wdk::acquire_shared(Resource, Wait, wdk::SharedRule::kStarveExclusive,
                               "ExAcquireSharedStarveExclusive")
               ? TRUE
               : FALSE;
}

BOOLEAN NTAPI ExAcquireSharedWaitForExclusive(PERESOURCE Resource, BOOLEAN Wait) {
    return wdk::acquire_shared(Resource, Wait, wdk::SharedRule::kWaitForExclusive,
                               "ExAcquireSharedWaitForExclusive")
               ? TRUE
               : FALSE;
}

VOID NTAPI ExReleaseResourceLite(PERESOURCE Resource) {
    wdk::release_resource(Resource, KeGetCurrentThread(), "ExReleaseResourceLite");
}

VOID NTAPI ExReleaseResourceForThreadLite(PERESOURCE Resource, ERESOURCE_THREAD ResourceThreadId) {
    wdk::release_resource(Resource, reinterpret_cast<PKTHREAD>(ResourceThreadId),
                          "ExReleaseResourceForThreadLite");
}

BOOLEAN NTAPI ExIsResourceAcquiredExclusiveLite(PERESOURCE Resource) {
    wdk::ResourceState &state = wdk::state_of(Resource, "ExIsResourceAcquiredExclusiveLite");
    std::lock_guard guard(state.lock);
    return state.exclusive_owner == KeGetCurrentThread() ? TRUE : FALSE;
}

ULONG NTAPI ExIsResourceAcquiredSharedLite(PERESOURCE Resource) {
    wdk::ResourceState &state = wdk::state_of(Resource, "ExIsResourceAcquiredSharedLite");
    const PKTHREAD self = KeGetCurrentThread();
    std::lock_guard guard(state.lock);
    if (state.exclusive_owner == self) return state.exclusive_count;
    auto holder = state.shared_owners.find(self);
    return holder == state.shared_owners.end() ? 0 : holder->second;
}

VOID NTAPI ExConvertExclusiveToSharedLite(PERESOURCE Resource) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "ExConvertExclusiveToSharedLite", Resource);
    wdk::ResourceState &state = wdk::state_of(Resource, "ExConvertExclusiveToSharedLite");
    const PKTHREAD self = KeGetCurrentThread();
    std::lock_guard guard(state.lock);
    if (state.exclusive_owner != self) {
        wdk::bugcheck(RESOURCE_NOT_OWNED, reinterpret_cast<ULONG_PTR>(Resource),
                      reinterpret_cast<ULONG_PTR>(self), 0, 0,
                      "ExConvertExclusiveToSharedLite: the thread does not own the ERESOURCE "
                      "exclusively");
    }
    state.shared_owners[self] = state.exclusive_count;
    state.exclusive_owner = nullptr;
    state.exclusive_count = 0;
    ++state.conversions;
    wdk::publish(Resource, state);
    state.changed.notify_all();
}

ULONG NTAPI ExGetExclusiveWaiterCount(PERESOURCE Resource) {
    wdk::ResourceState &state = wdk::state_of(Resource, "ExGetExclusiveWaiterCount");
    std::lock_guard guard(state.lock);
    return static_cast<ULONG>(state.exclusive_queue.size());
}

ULONG NTAPI ExGetSharedWaiterCount(PERESOURCE Resource) {
    wdk::ResourceState &state = wdk::state_of(Resource, "ExGetSharedWaiterCount");
    std::lock_guard guard(state.lock);
    return state.shared_waiters;
}

PVOID NTAPI ExEnterCriticalRegionAndAcquireResourceExclusive(PERESOURCE Resource) {
    KeEnterCriticalRegion();
    ExAcquireResourceExclusiveLite(Resource, TRUE);
    return nullptr;
}

PVOID NTAPI ExEnterCriticalRegionAndAcquireResourceShared(PERESOURCE Resource) {
    KeEnterCriticalRegion();
    ExAcquireResourceSharedLite(Resource, TRUE);
    return nullptr;
}

PVOID NTAPI ExEnterCriticalRegionAndAcquireSharedWaitForExclusive(PERESOURCE Resource) {
    KeEnterCriticalRegion();
    ExAcquireSharedWaitForExclusive(Resource, TRUE);
    return nullptr;
}

VOID NTAPI ExReleaseResourceAndLeaveCriticalRegion(PERESOURCE Resource) {
    ExReleaseResourceLite(Resource);
    KeLeaveCriticalRegion();
}

// ---- Push locks.

VOID NTAPI ExInitializePushLock(PEX_PUSH_LOCK PushLock) {
    std::atomic_ref<ULONG_PTR>(*PushLock).store(0, std::memory_order_release);
}

VOID NTAPI ExAcquirePushLockExclusive(PEX_PUSH_LOCK PushLock) {
    wdk::check_irql_at_most(APC_LEVEL, "ExAcquirePushLockExclusive", PushLock);
    wdk::check_apcs_disabled("ExAcquirePushLockExclusive", PushLock);
    wdk::acquire_push_lock(
        PushLock, [](ULONG_PTR seen) { return (seen & ~wdk::kPushWaiting) == 0; },
        [](ULONG_PTR seen) { return seen | wdk::kPushExclusive; });
}

VOID NTAPI ExAcquirePushLockShared(PEX_PUSH_LOCK PushLock) {
    wdk::check_irql_at_most(APC_LEVEL, "ExAcquirePushLockShared", PushLock);
    wdk::check_apcs_disabled("ExAcquirePushLockShared", PushLock);
    wdk::acquire_push_lock(
        PushLock, [](ULONG_PTR seen) { return (seen & wdk::kPushExclusive) == 0; },
        [](ULONG_PTR seen) { return seen + wdk::kPushShareUnit; });
}

VOID NTAPI ExReleasePushLockExclusive(PEX_PUSH_LOCK PushLock) {
    std::atomic_ref<ULONG_PTR> word(*PushLock);
    const ULONG_PTR seen = word.load(std::memory_order_relaxed);
    if ((seen & wdk::kPushExclusive) == 0) {
        wdk::fatal(
            fmt::format("ExReleasePushLockExclusive: push lock {} is not held exclusively "
                        "(0x{:x})",
                        static_cast<void *>(PushLock), seen));
    }
    wdk::wake_push_lock_waiters(word.exchange(0, std::memory_order_release));
}

VOID NTAPI ExReleasePushLockShared(PEX_PUSH_LOCK PushLock) {
    std::atomic_ref<ULONG_PTR> word(*PushLock);
    ULONG_PTR seen = word.load(std::memory_order_relaxed);
    for (;;) {
        if ((seen & wdk::kPushExclusive) != 0 || seen < wdk::kPushShareUnit) {
            wdk::fatal(
                fmt::format("ExReleasePushLockShared: push lock {} is not held shared "
                            "(0x{:x})",
                            static_cast<void *>(PushLock), seen));
        }
        ULONG_PTR next = seen - wdk::kPushShareUnit;
        // The last sharer out clears the waiting bit and wakes the sleepers.
        if (next == wdk::kPushWaiting) next = 0;
        if (word.compare_exchange_weak(seen, next, std::memory_order_release,
                                       std::memory_order_relaxed)) {
            if (next == 0) wdk::wake_push_lock_waiters(seen);
            return;
        }
    }
}

// ---- Shared spin locks.

KIRQL NTAPI ExAcquireSpinLockShared(PEX_SPIN_LOCK SpinLock) {
    const KIRQL old = wdk::raise_to_dispatch();
    wdk::acquire_shared_spin(SpinLock);
    return old;
}

VOID NTAPI ExReleaseSpinLockShared(PEX_SPIN_LOCK SpinLock, KIRQL OldIrql) {
    wdk::release_shared_spin(SpinLock);
    KeLowerIrql(OldIrql);
}

KIRQL NTAPI ExAcquireSpinLockExclusive(PEX_SPIN_LOCK SpinLock) {
    const KIRQL old = wdk::raise_to_dispatch();
    wdk::acquire_exclusive_spin(SpinLock);
    return old;
}

VOID NTAPI ExReleaseSpinLockExclusive(PEX_SPIN_LOCK SpinLock, KIRQL OldIrql) {
    wdk::release_exclusive_spin(SpinLock);
    KeLowerIrql(OldIrql);
}

VOID NTAPI ExAcquireSpinLockSharedAtDpcLevel(PEX_SPIN_LOCK SpinLock) {
    wdk::acquire_shared_spin(SpinLock);
}

VOID NTAPI ExReleaseSpinLockSharedFromDpcLevel(PEX_SPIN_LOCK SpinLock) {
    wdk::release_shared_spin(SpinLock);
}

VOID NTAPI ExAcquireSpinLockExclusiveAtDpcLevel(PEX_SPIN_LOCK SpinLock) {
    wdk::acquire_exclusive_spin(SpinLock);
}

VOID NTAPI ExReleaseSpinLockExclusiveFromDpcLevel(PEX_SPIN_LOCK SpinLock) {
    wdk::release_exclusive_spin(SpinLock);
}

LOGICAL NTAPI ExTryConvertSharedSpinLockExclusive(PEX_SPIN_LOCK SpinLock) {
    LONG seen = wdk::spin_word(SpinLock).load(std::memory_order_relaxed);
    while ((seen & ~wdk::kSpinWriterWaits) == 1) {
        if (wdk::spin_word(SpinLock).compare_exchange_weak(
                seen, wdk::kSpinExclusive, std::memory_order_acquire, std::memory_order_relaxed)) {
            return TRUE;
        }
    }
    return FALSE;
}

LOGICAL NTAPI ExTryAcquireSpinLockSharedAtDpcLevel(PEX_SPIN_LOCK SpinLock) {
    return wdk::try_shared(SpinLock) ? TRUE : FALSE;
}

LOGICAL NTAPI ExTryAcquireSpinLockExclusiveAtDpcLevel(PEX_SPIN_LOCK SpinLock) {
    return wdk::try_exclusive(SpinLock) ? TRUE : FALSE;
}

// ---- Thread priority.

KPRIORITY NTAPI KeSetPriorityThread(PKTHREAD Thread, KPRIORITY Priority) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "KeSetPriorityThread", Thread);
    if (Priority <= LOW_PRIORITY || Priority > HIGH_PRIORITY) {
        wdk::fatal(fmt::format("KeSetPriorityThread: priority {} is outside 1..31", Priority));
    }
    return std::atomic_ref<KPRIORITY>(Thread->priority).exchange(Priority);
}

KPRIORITY NTAPI KeQueryPriorityThread(PKTHREAD Thread) {
    return std::atomic_ref<KPRIORITY>(Thread->priority).load();
}

LONG NTAPI KeSetBasePriorityThread(PKTHREAD Thread, LONG Increment) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "KeSetBasePriorityThread", Thread);
    const LONG previous = std::atomic_ref<LONG>(Thread->base_increment).exchange(Increment);
    const LONG base = std::clamp<LONG>(8 + Increment, 1, 15);
    std::atomic_ref<KPRIORITY>(Thread->priority).store(base);
    return previous;
}

}  // extern "C"
