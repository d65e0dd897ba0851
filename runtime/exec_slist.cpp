// Sequenced singly linked lists (SLIST_HEADER) and the lists guarded by a caller's spin lock
// (ExInterlocked*List). Contracts are in softndk_wdm_exec.h.
#include <array>
#include <atomic>
#include <mutex>

#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

static_assert(sizeof(SLIST_HEADER) == 16 && alignof(SLIST_HEADER) == 16,
              "SLIST_HEADER must keep Windows' x64 layout");
static_assert(sizeof(SLIST_ENTRY) == 16 && alignof(SLIST_ENTRY) == 16);

// The header's two words in Windows' x64 encoding: Alignment = Depth | Sequence << 16,
// Region = (first entry >> 4) << 4 (Reserved bits 0-3 stay 0).
constexpr ULONGLONG kDepthMask = 0xFFFF;
constexpr unsigned kSequenceShift = 16;

// Every change to a header happens under the stripe its address hashes to.
struct SListLocks {
    std::array<std::mutex, 64> stripes;
};

std::mutex &stripe_of(const SLIST_HEADER *header) {
    static SListLocks *const locks = new SListLocks;  // leaked: used during process exit
    const auto address = reinterpret_cast<uintptr_t>(header);
    return locks->stripes[((address >> 4) * 0x9E3779B97F4A7C15ULL) >> 58];
}

std::atomic_ref<ULONGLONG> word0(PSLIST_HEADER header) {
    return std::atomic_ref<ULONGLONG>(header->Alignment);
}

std::atomic_ref<ULONGLONG> word1(PSLIST_HEADER header) {
    return std::atomic_ref<ULONGLONG>(header->Region);
}

PSLIST_ENTRY first_of(PSLIST_HEADER header) {
    return reinterpret_cast<PSLIST_ENTRY>(word1(header).load(std::memory_order_acquire));
}

// Under the stripe: store the new first entry and depth, advancing the sequence.
void store(PSLIST_HEADER header, PSLIST_ENTRY first, ULONGLONG depth) {
    const ULONGLONG sequence =
        (word0(header).load(std::memory_order_relaxed) >> kSequenceShift) + 1;
    word1(header).store(reinterpret_cast<ULONGLONG>(first), std::memory_order_release);
    word0(header).store((sequence << kSequenceShift) | (depth & kDepthMask),
                        std::memory_order_release);
}

void check_aligned(const void *pointer, const char *caller, const char *what) {
    if ((reinterpret_cast<uintptr_t>(pointer) & (MEMORY_ALLOCATION_ALIGNMENT - 1)) != 0) {
        fatal(fmt::format("{}: {} {} is not 16-byte aligned (MEMORY_ALLOCATION_ALIGNMENT)", caller,
                          what, pointer));
    }
}

PSLIST_ENTRY push(PSLIST_HEADER header, PSLIST_ENTRY entry, const char *caller) {
    check_aligned(header, caller, "SLIST_HEADER");
    check_aligned(entry, caller, "SLIST_ENTRY");
    std::lock_guard guard(stripe_of(header));
    PSLIST_ENTRY previous = first_of(header);
    entry->Next = previous;
    store(header, entry, (word0(header).load(std::memory_order_relaxed) & kDepthMask) + 1);
    return previous;
}

PSLIST_ENTRY pop(PSLIST_HEADER header) {
    std::lock_guard guard(stripe_of(header));
    PSLIST_ENTRY first = first_of(header);
    if (first == nullptr) return nullptr;
    store(header, first->Next, (word0(header).load(std::memory_order_relaxed) & kDepthMask) - 1);
    return first;
}

PSLIST_ENTRY flush(PSLIST_HEADER header) {
    std::lock_guard guard(stripe_of(header));
    PSLIST_ENTRY first = first_of(header);
    if (first != nullptr) store(header, nullptr, 0);
    return first;
}

// ExInterlocked*List: the caller's spin lock, taken at DISPATCH_LEVEL or above.
class SpinLockScope {
  public:
    explicit SpinLockScope(PKSPIN_LOCK lock) : lock_(lock), old_(KeGetCurrentIrql()) {
        if (old_ < DISPATCH_LEVEL) KfRaiseIrql(DISPATCH_LEVEL);
        KeAcquireSpinLockAtDpcLevel(lock_);
    }
    ~SpinLockScope() {
        KeReleaseSpinLockFromDpcLevel(lock_);
        if (old_ < DISPATCH_LEVEL) KeLowerIrql(old_);
    }
    SpinLockScope(const SpinLockScope &) = delete;
    SpinLockScope &operator=(const SpinLockScope &) = delete;

  private:
    PKSPIN_LOCK lock_;
    KIRQL old_;
};

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI InitializeSListHead(PSLIST_HEADER SListHead) {
    wdk::check_aligned(SListHead, "InitializeSListHead", "SLIST_HEADER");
    wdk::word1(SListHead).store(0, std::memory_order_relaxed);
    wdk::word0(SListHead).store(0, std::memory_order_release);
}

PSLIST_ENTRY NTAPI InterlockedPushEntrySList(PSLIST_HEADER ListHead, PSLIST_ENTRY ListEntry) {
    return wdk::push(ListHead, ListEntry, "InterlockedPushEntrySList");
}

PSLIST_ENTRY NTAPI InterlockedPopEntrySList(PSLIST_HEADER ListHead) {
    return wdk::pop(ListHead);
}

PSLIST_ENTRY NTAPI InterlockedFlushSList(PSLIST_HEADER ListHead) {
    return wdk::flush(ListHead);
}

USHORT NTAPI QueryDepthSList(PSLIST_HEADER ListHead) {
    return static_cast<USHORT>(wdk::word0(ListHead).load(std::memory_order_acquire) &
                               wdk::kDepthMask);
}

PSLIST_ENTRY NTAPI RtlFirstEntrySList(const SLIST_HEADER *ListHead) {
    return wdk::first_of(const_cast<PSLIST_HEADER>(ListHead));
}

PSLIST_ENTRY NTAPI ExInterlockedPushEntrySList(PSLIST_HEADER ListHead, PSLIST_ENTRY ListEntry,
                                               PKSPIN_LOCK Lock) {
    (void)Lock;
    return wdk::push(ListHead, ListEntry, "ExInterlockedPushEntrySList");
}

PSLIST_ENTRY NTAPI ExInterlockedPopEntrySList(PSLIST_HEADER ListHead, PKSPIN_LOCK Lock) {
    (void)Lock;
    return wdk::pop(ListHead);
}

PSLIST_ENTRY NTAPI ExInterlockedFlushSList(PSLIST_HEADER ListHead) {
    return wdk::flush(ListHead);
}

PLIST_ENTRY NTAPI ExInterlockedInsertHeadList(PLIST_ENTRY ListHead, PLIST_ENTRY ListEntry,
                                              PKSPIN_LOCK Lock) {
    const wdk::SpinLockScope locked(Lock);
    PLIST_ENTRY first = IsListEmpty(ListHead) ? nullptr : ListHead->Flink;
    InsertHeadList(ListHead, ListEntry);
    return first;
}

PLIST_ENTRY NTAPI ExInterlockedInsertTailList(PLIST_ENTRY ListHead, PLIST_ENTRY ListEntry,
                                              PKSPIN_LOCK Lock) {
    const wdk::SpinLockScope locked(Lock);
    PLIST_ENTRY last = IsListEmpty(ListHead) ? nullptr : ListHead->Blink;
    InsertTailList(ListHead, ListEntry);
    return last;
}

PLIST_ENTRY NTAPI ExInterlockedRemoveHeadList(PLIST_ENTRY ListHead, PKSPIN_LOCK Lock) {
    const wdk::SpinLockScope locked(Lock);
    if (IsListEmpty(ListHead)) return nullptr;
    return RemoveHeadList(ListHead);
}

PSINGLE_LIST_ENTRY NTAPI ExInterlockedPushEntryList(PSINGLE_LIST_ENTRY ListHead,
                                                    PSINGLE_LIST_ENTRY ListEntry,
                                                    PKSPIN_LOCK Lock) {
    const wdk::SpinLockScope locked(Lock);
    PSINGLE_LIST_ENTRY first = ListHead->Next;
    PushEntryList(ListHead, ListEntry);
    return first;
}

PSINGLE_LIST_ENTRY NTAPI ExInterlockedPopEntryList(PSINGLE_LIST_ENTRY ListHead, PKSPIN_LOCK Lock) {
    const wdk::SpinLockScope locked(Lock);
    return PopEntryList(ListHead);
}

}  // extern "C"
