// Lookaside lists: a bounded cache of freed fixed-size entries in front of the pool (or in front
// of the list's own Allocate / Free routines).
//
// The three list kinds share GENERAL_LOOKASIDE_POOL's layout; they differ only in the signature
// of their routines (the Ex routines also receive the list). The cache is a singly linked list
// through the entries' first bytes, guarded by a tiny spin lock in the list itself (ListLock):
// every critical section is a few loads and stores, never a call, so a plain test-and-set lock
// with the pause hint is enough and keeps the list usable at DISPATCH_LEVEL without touching
// the caller's IRQL.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstring>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr USHORT kDefaultDepth = EX_MAXIMUM_LOOKASIDE_DEPTH_BASE;

class CacheLock {
  public:
    explicit CacheLock(GENERAL_LOOKASIDE_POOL &list) : lock_(list.ListLock) {
        while (__atomic_exchange_n(&lock_, 1, __ATOMIC_ACQUIRE) != 0) {
            while (__atomic_load_n(&lock_, __ATOMIC_RELAXED) != 0) {
                if (sim::attached()) {
                    sim::spin_pause("lookaside list lock");
                } else {
                    cpu_relax();
                }
            }
        }
    }
    ~CacheLock() { __atomic_store_n(&lock_, 0, __ATOMIC_RELEASE); }
    CacheLock(const CacheLock &) = delete;
    CacheLock &operator=(const CacheLock &) = delete;

  private:
    volatile LONG &lock_;
};

// The default routines: the pool, as on Windows.
PVOID NTAPI default_allocate(POOL_TYPE type, SIZE_T bytes, ULONG tag) {
    return ExAllocatePoolWithTag(type, bytes, tag);
}
VOID NTAPI default_free(PVOID buffer) {
    ExFreePool(buffer);
}
PVOID NTAPI default_allocate_ex(POOL_TYPE type, SIZE_T bytes, ULONG tag, PLOOKASIDE_LIST_EX) {
    return ExAllocatePoolWithTag(type, bytes, tag);
}
VOID NTAPI default_free_ex(PVOID buffer, PLOOKASIDE_LIST_EX) {
    ExFreePool(buffer);
}

void initialize(GENERAL_LOOKASIDE_POOL &list, POOL_TYPE type, SIZE_T size, ULONG tag,
                USHORT depth) {
    std::memset(&list, 0, sizeof(list));
    list.Type = type;
    list.Tag = tag;
    // Windows rounds tiny entries up to an SLIST_ENTRY (16 bytes on x64); larger ones keep their
    // size. A size that does not fit a ULONG is the caller's error.
    if (size > MAXULONG) {
        fatal(fmt::format("lookaside list {}: entry size {} does not fit a ULONG",
                          static_cast<void *>(&list), size));
    }
    list.Size = std::max(static_cast<ULONG>(size), ULONG{LOOKASIDE_MINIMUM_BLOCK_SIZE});
    list.Depth = depth != 0 ? depth : kDefaultDepth;
    list.MaximumDepth = list.Depth;
    InitializeListHead(&list.ListEntry);
}

// Pops a cached entry, or returns nullptr (and counts the miss) when the cache is empty.
PVOID pop(GENERAL_LOOKASIDE_POOL &list) {
    CacheLock lock(list);
    list.TotalAllocates++;
    PSINGLE_LIST_ENTRY entry = PopEntryList(&list.SingleListHead);
    if (entry == nullptr) {
        list.AllocateMisses++;
        return nullptr;
    }
    list.CachedEntries--;
    return entry;
}

// Caches the entry and returns true, or returns false (and counts the miss) when the cache
// already holds Depth entries.
bool push(GENERAL_LOOKASIDE_POOL &list, PVOID entry) {
    if (entry == nullptr) {
        fatal(fmt::format("lookaside list {}: freeing a NULL entry", static_cast<void *>(&list)));
    }
    CacheLock lock(list);
    list.TotalFrees++;
    if (list.CachedEntries >= list.Depth) {
        list.FreeMisses++;
        return false;
    }
    PushEntryList(&list.SingleListHead, static_cast<PSINGLE_LIST_ENTRY>(entry));
    list.CachedEntries++;
    return true;
}

// Takes the whole cache out of the list (to free it outside the lock).
PSINGLE_LIST_ENTRY take_all(GENERAL_LOOKASIDE_POOL &list) {
    CacheLock lock(list);
    PSINGLE_LIST_ENTRY first = list.SingleListHead.Next;
    list.SingleListHead.Next = nullptr;
    list.CachedEntries = 0;
    return first;
}

template <class FreeOne>
void free_all(PSINGLE_LIST_ENTRY entry, FreeOne free_one) {
    while (entry != nullptr) {
        PSINGLE_LIST_ENTRY next = entry->Next;
        free_one(entry);
        entry = next;
    }
}

GENERAL_LOOKASIDE_POOL &as_pool(GENERAL_LOOKASIDE &list) {
    // GENERAL_LOOKASIDE is GENERAL_LOOKASIDE_POOL's layout with cache alignment.
    static_assert(sizeof(GENERAL_LOOKASIDE_POOL) == 96);
    static_assert(sizeof(GENERAL_LOOKASIDE) == 128);
    static_assert(offsetof(GENERAL_LOOKASIDE, Future) == offsetof(GENERAL_LOOKASIDE_POOL, Future));
    return reinterpret_cast<GENERAL_LOOKASIDE_POOL &>(list);
}

void initialize_classic(GENERAL_LOOKASIDE &list, POOL_TYPE base, PALLOCATE_FUNCTION allocate,
                        PFREE_FUNCTION free, ULONG flags, SIZE_T size, ULONG tag, USHORT depth) {
    GENERAL_LOOKASIDE_POOL &pool = as_pool(list);
    initialize(pool, static_cast<POOL_TYPE>(static_cast<ULONG>(base) | flags), size, tag, depth);
    pool.Allocate = allocate != nullptr ? allocate : default_allocate;
    pool.Free = free != nullptr ? free : default_free;
}

PVOID allocate_classic(GENERAL_LOOKASIDE &list) {
    GENERAL_LOOKASIDE_POOL &pool = as_pool(list);
    PVOID entry = pop(pool);
    return entry != nullptr ? entry : pool.Allocate(pool.Type, pool.Size, pool.Tag);
}

void free_classic(GENERAL_LOOKASIDE &list, PVOID entry) {
    GENERAL_LOOKASIDE_POOL &pool = as_pool(list);
    if (!push(pool, entry)) pool.Free(entry);
}

void delete_classic(GENERAL_LOOKASIDE &list) {
    GENERAL_LOOKASIDE_POOL &pool = as_pool(list);
    free_all(take_all(pool), [&](PVOID entry) { pool.Free(entry); });
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI ExInitializeNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside,
                                           PALLOCATE_FUNCTION Allocate, PFREE_FUNCTION Free,
                                           ULONG Flags, SIZE_T Size, ULONG Tag, USHORT Depth) {
    wdk::initialize_classic(Lookaside->L, NonPagedPoolNx, Allocate, Free, Flags, Size, Tag, Depth);
}

PVOID NTAPI ExAllocateFromNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside) {
    return wdk::allocate_classic(Lookaside->L);
}

VOID NTAPI ExFreeToNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside, PVOID Entry) {
    wdk::free_classic(Lookaside->L, Entry);
}

VOID NTAPI ExDeleteNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside) {
    wdk::delete_classic(Lookaside->L);
}

VOID NTAPI ExInitializePagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside,
                                          PALLOCATE_FUNCTION Allocate, PFREE_FUNCTION Free,
                                          ULONG Flags, SIZE_T Size, ULONG Tag, USHORT Depth) {
    wdk::initialize_classic(Lookaside->L, PagedPool, Allocate, Free, Flags, Size, Tag, Depth);
}

PVOID NTAPI ExAllocateFromPagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside) {
    return wdk::allocate_classic(Lookaside->L);
}

VOID NTAPI ExFreeToPagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside, PVOID Entry) {
    wdk::free_classic(Lookaside->L, Entry);
}

VOID NTAPI ExDeletePagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside) {
    wdk::delete_classic(Lookaside->L);
}

NTSTATUS NTAPI ExInitializeLookasideListEx(PLOOKASIDE_LIST_EX Lookaside,
                                           PALLOCATE_FUNCTION_EX Allocate, PFREE_FUNCTION_EX Free,
                                           POOL_TYPE PoolType, ULONG Flags, SIZE_T Size, ULONG Tag,
                                           USHORT Depth) {
    constexpr ULONG kKnownFlags =
        EX_LOOKASIDE_LIST_EX_FLAGS_RAISE_ON_FAIL | EX_LOOKASIDE_LIST_EX_FLAGS_FAIL_NO_RAISE;
    if ((Flags & ~kKnownFlags) != 0 || Flags == kKnownFlags) return STATUS_INVALID_PARAMETER;
    ULONG type = static_cast<ULONG>(PoolType);
    if ((Flags & EX_LOOKASIDE_LIST_EX_FLAGS_RAISE_ON_FAIL) != 0) {
        type |= POOL_RAISE_IF_ALLOCATION_FAILURE;
    }
    wdk::initialize(Lookaside->L, static_cast<POOL_TYPE>(type), Size, Tag, Depth);
    Lookaside->L.AllocateEx = Allocate != nullptr ? Allocate : wdk::default_allocate_ex;
    Lookaside->L.FreeEx = Free != nullptr ? Free : wdk::default_free_ex;
    return STATUS_SUCCESS;
}

PVOID NTAPI ExAllocateFromLookasideListEx(PLOOKASIDE_LIST_EX Lookaside) {
    PVOID entry = wdk::pop(Lookaside->L);
    if (entry != nullptr) return entry;
    return Lookaside->L.AllocateEx(Lookaside->L.Type, Lookaside->L.Size, Lookaside->L.Tag,
                                   Lookaside);
}

VOID NTAPI ExFreeToLookasideListEx(PLOOKASIDE_LIST_EX Lookaside, PVOID Entry) {
    if (!wdk::push(Lookaside->L, Entry)) Lookaside->L.FreeEx(Entry, Lookaside);
}

VOID NTAPI ExFlushLookasideListEx(PLOOKASIDE_LIST_EX Lookaside) {
    wdk::free_all(wdk::take_all(Lookaside->L),
                  [&](PVOID entry) { Lookaside->L.FreeEx(entry, Lookaside); });
}

VOID NTAPI ExDeleteLookasideListEx(PLOOKASIDE_LIST_EX Lookaside) {
    ExFlushLookasideListEx(Lookaside);
}

}  // extern "C"
