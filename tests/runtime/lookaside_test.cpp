// Lookaside lists: cache depth, pool accounting, custom routines, thread safety.
#include <wdm.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "wdk_internal.hpp"

namespace {

constexpr ULONG kTag = 0x6B6F6F4C;  // "Look"

std::atomic<int> g_allocations{0};
std::atomic<int> g_frees{0};
PLOOKASIDE_LIST_EX g_seen_list = nullptr;

PVOID NTAPI CountingAllocate(POOL_TYPE type, SIZE_T bytes, ULONG tag) {
    g_allocations++;
    return ExAllocatePoolWithTag(type, bytes, tag);
}

VOID NTAPI CountingFree(PVOID buffer) {
    g_frees++;
    ExFreePoolWithTag(buffer, kTag);
}

PVOID NTAPI CountingAllocateEx(POOL_TYPE type, SIZE_T bytes, ULONG tag,
                               PLOOKASIDE_LIST_EX lookaside) {
    g_seen_list = lookaside;
    return CountingAllocate(type, bytes, tag);
}

VOID NTAPI CountingFreeEx(PVOID buffer, PLOOKASIDE_LIST_EX lookaside) {
    g_seen_list = lookaside;
    CountingFree(buffer);
}

PVOID NTAPI FailingAllocate(POOL_TYPE, SIZE_T, ULONG) {
    return nullptr;
}

void reset_counts() {
    g_allocations = 0;
    g_frees = 0;
    g_seen_list = nullptr;
}

}  // namespace

TEST_CASE("lookaside: freed entries are cached up to Depth and reused before the pool") {
    const size_t live_before = softndk::wdk::pool_live_allocations();
    reset_counts();
    NPAGED_LOOKASIDE_LIST list;
    ExInitializeNPagedLookasideList(&list, CountingAllocate, CountingFree, 0, 40, kTag, 2);
    CHECK(list.L.Size == 40);
    CHECK(list.L.Depth == 2);
    CHECK(list.L.Tag == kTag);

    void *a = ExAllocateFromNPagedLookasideList(&list);
    void *b = ExAllocateFromNPagedLookasideList(&list);
    void *c = ExAllocateFromNPagedLookasideList(&list);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    REQUIRE(c != nullptr);
    CHECK(g_allocations == 3);
    CHECK(softndk::wdk::pool_live_allocations() == live_before + 3);

    ExFreeToNPagedLookasideList(&list, a);
    ExFreeToNPagedLookasideList(&list, b);
    ExFreeToNPagedLookasideList(&list, c);  // the cache is full: freed to the pool
    CHECK(g_frees == 1);
    CHECK(softndk::wdk::pool_live_allocations() == live_before + 2);  // cached ones stay pool

    void *again = ExAllocateFromNPagedLookasideList(&list);  // LIFO: the last cached one
    CHECK(again == b);
    CHECK(g_allocations == 3);
    CHECK(list.L.TotalAllocates == 4);
    CHECK(list.L.AllocateMisses == 3);
    CHECK(list.L.TotalFrees == 3);
    CHECK(list.L.FreeMisses == 1);
    ExFreeToNPagedLookasideList(&list, again);

    ExDeleteNPagedLookasideList(&list);  // frees the two cached entries
    CHECK(g_frees == 3);
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
}

TEST_CASE("lookaside: default routines use the pool: tiny sizes round up: Depth 0 means 256") {
    const size_t live_before = softndk::wdk::pool_live_allocations();
    PAGED_LOOKASIDE_LIST list;
    ExInitializePagedLookasideList(&list, nullptr, nullptr, 0, 1, kTag, 0);
    CHECK(list.L.Size == LOOKASIDE_MINIMUM_BLOCK_SIZE);
    CHECK(list.L.Depth == 256);
    std::vector<void *> entries;
    for (int i = 0; i < 300; ++i) {
        void *entry = ExAllocateFromPagedLookasideList(&list);
        REQUIRE(entry != nullptr);
        entries.push_back(entry);
    }
    CHECK(softndk::wdk::pool_live_allocations() == live_before + 300);
    for (void *entry : entries)
        ExFreeToPagedLookasideList(&list, entry);
    CHECK(softndk::wdk::pool_live_allocations() == live_before + 256);
    ExDeletePagedLookasideList(&list);
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
    CHECK(sizeof(NPAGED_LOOKASIDE_LIST) == 128);
    CHECK(sizeof(LOOKASIDE_LIST_EX) == 96);
}

TEST_CASE("lookaside: an allocate routine's NULL is passed on and nothing is cached") {
    NPAGED_LOOKASIDE_LIST list;
    ExInitializeNPagedLookasideList(&list, FailingAllocate, nullptr, 0, 64, kTag, 4);
    CHECK(ExAllocateFromNPagedLookasideList(&list) == nullptr);
    CHECK(list.L.AllocateMisses == 1);
    ExDeleteNPagedLookasideList(&list);
}

TEST_CASE("lookaside: LOOKASIDE_LIST_EX validates flags and passes itself to its routines") {
    LOOKASIDE_LIST_EX list;
    CHECK(ExInitializeLookasideListEx(
              &list, nullptr, nullptr, NonPagedPoolNx,
              EX_LOOKASIDE_LIST_EX_FLAGS_RAISE_ON_FAIL | EX_LOOKASIDE_LIST_EX_FLAGS_FAIL_NO_RAISE,
              32, kTag, 0) == STATUS_INVALID_PARAMETER);
    CHECK(ExInitializeLookasideListEx(&list, nullptr, nullptr, NonPagedPoolNx, 0x100, 32, kTag,
                                      0) == STATUS_INVALID_PARAMETER);

    const size_t live_before = softndk::wdk::pool_live_allocations();
    reset_counts();
    REQUIRE(ExInitializeLookasideListEx(&list, CountingAllocateEx, CountingFreeEx, NonPagedPoolNx,
                                        EX_LOOKASIDE_LIST_EX_FLAGS_FAIL_NO_RAISE, 32, kTag,
                                        1) == STATUS_SUCCESS);
    void *a = ExAllocateFromLookasideListEx(&list);
    void *b = ExAllocateFromLookasideListEx(&list);
    CHECK(g_seen_list == &list);
    CHECK(g_allocations == 2);
    ExFreeToLookasideListEx(&list, a);
    g_seen_list = nullptr;
    ExFreeToLookasideListEx(&list, b);  // over Depth 1
    CHECK(g_seen_list == &list);
    CHECK(g_frees == 1);
    ExFlushLookasideListEx(&list);
    CHECK(g_frees == 2);
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
    void *c = ExAllocateFromLookasideListEx(&list);  // still usable after a flush
    ExFreeToLookasideListEx(&list, c);
    ExDeleteLookasideListEx(&list);
    CHECK(g_frees == 3);
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
}

TEST_CASE("lookaside: concurrent allocate/free never hands one entry to two owners") {
    const size_t live_before = softndk::wdk::pool_live_allocations();
    LOOKASIDE_LIST_EX list;
    REQUIRE(ExInitializeLookasideListEx(&list, nullptr, nullptr, NonPagedPoolNx, 0, 64, kTag, 8) ==
            STATUS_SUCCESS);
    std::atomic<bool> collision{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 5000; ++i) {
                auto *a = static_cast<volatile int *>(ExAllocateFromLookasideListEx(&list));
                auto *b = static_cast<volatile int *>(ExAllocateFromLookasideListEx(&list));
                a[4] = t;  // past the link, which the cache overwrites
                b[4] = t + 100;
                if (a[4] != t || b[4] != t + 100 || a == b) collision = true;
                ExFreeToLookasideListEx(&list, const_cast<int *>(a));
                ExFreeToLookasideListEx(&list, const_cast<int *>(b));
            }
        });
    }
    for (auto &thread : threads)
        thread.join();
    CHECK_FALSE(collision);
    CHECK(list.L.TotalAllocates == 40000);
    CHECK(list.L.TotalFrees == 40000);
    ExDeleteLookasideListEx(&list);
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
}
