// SLists (SLIST_HEADER: push, pop, flush, depth, sequence, concurrency), lists guarded by a spin
// lock (ExInterlocked*List), and the remaining interlocked names: 8-bit, NoFence, 128-bit and
// the compiler-intrinsic spellings (_InterlockedIncrement, _interlockedbittestandset, ...).
#include <wdm.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"

using softndk::test::run_in_child;

namespace {

struct alignas(16) Item {
    SLIST_ENTRY entry;
    int value = 0;
};

ULONGLONG sequence_of(const SLIST_HEADER &header) {
    return header.HeaderX64.Sequence;
}

}  // namespace

TEST_CASE("slist: SLIST_HEADER and SLIST_ENTRY keep Windows' x64 layout") {
    STATIC_REQUIRE(sizeof(SLIST_HEADER) == 16);
    STATIC_REQUIRE(alignof(SLIST_HEADER) == 16);
    STATIC_REQUIRE(sizeof(SLIST_ENTRY) == 16);
    STATIC_REQUIRE(alignof(SLIST_ENTRY) == MEMORY_ALLOCATION_ALIGNMENT);
}

TEST_CASE("slist: push returns the previous first entry, pop is LIFO, NULL when empty") {
    SLIST_HEADER head;
    InitializeSListHead(&head);
    CHECK(QueryDepthSList(&head) == 0);
    CHECK(InterlockedPopEntrySList(&head) == nullptr);
    CHECK(RtlFirstEntrySList(&head) == nullptr);

    Item a, b, c;
    CHECK(InterlockedPushEntrySList(&head, &a.entry) == nullptr);
    CHECK(InterlockedPushEntrySList(&head, &b.entry) == &a.entry);
    CHECK(ExInterlockedPushEntrySList(&head, &c.entry, nullptr) == &b.entry);
    CHECK(QueryDepthSList(&head) == 3);
    CHECK(ExQueryDepthSList(&head) == 3);
    CHECK(head.HeaderX64.Depth == 3);
    CHECK(RtlFirstEntrySList(&head) == &c.entry);
    CHECK(head.HeaderX64.NextEntry == reinterpret_cast<ULONG_PTR>(&c.entry) >> 4);

    const ULONGLONG before = sequence_of(head);
    CHECK(InterlockedPopEntrySList(&head) == &c.entry);
    CHECK(sequence_of(head) == before + 1);  // every change advances the sequence
    CHECK(ExInterlockedPopEntrySList(&head, nullptr) == &b.entry);
    CHECK(InterlockedPopEntrySList(&head) == &a.entry);
    CHECK(InterlockedPopEntrySList(&head) == nullptr);
    CHECK(QueryDepthSList(&head) == 0);
}

TEST_CASE("slist: flush detaches the whole chain") {
    SLIST_HEADER head;
    InitializeSListHead(&head);
    CHECK(InterlockedFlushSList(&head) == nullptr);
    Item items[3];
    for (Item &item : items)
        InterlockedPushEntrySList(&head, &item.entry);
    PSLIST_ENTRY chain = InterlockedFlushSList(&head);
    CHECK(QueryDepthSList(&head) == 0);
    CHECK(InterlockedPopEntrySList(&head) == nullptr);
    int length = 0;
    for (PSLIST_ENTRY entry = chain; entry != nullptr; entry = entry->Next)
        ++length;
    CHECK(length == 3);
    CHECK(chain == &items[2].entry);
    InterlockedPushEntrySList(&head, &items[0].entry);
    CHECK(ExInterlockedFlushSList(&head) == &items[0].entry);
}

TEST_CASE("slist: concurrent pushers and poppers lose and duplicate nothing") {
    SLIST_HEADER head;
    InitializeSListHead(&head);
    constexpr int kPerThread = 2000;
    std::vector<Item> items(2 * kPerThread);
    for (size_t i = 0; i < items.size(); ++i)
        items[i].value = static_cast<int>(i);
    std::vector<std::vector<int>> popped(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i) {
                InterlockedPushEntrySList(&head, &items[t * kPerThread + i].entry);
                if (PSLIST_ENTRY entry = InterlockedPopEntrySList(&head)) {
                    popped[t].push_back(CONTAINING_RECORD(entry, Item, entry)->value);
                }
            }
        });
    }
    for (auto &thread : threads)
        thread.join();
    std::set<int> seen;
    size_t total = 0;
    for (auto &list : popped) {
        total += list.size();
        seen.insert(list.begin(), list.end());
    }
    while (PSLIST_ENTRY entry = InterlockedPopEntrySList(&head)) {
        ++total;
        seen.insert(CONTAINING_RECORD(entry, Item, entry)->value);
    }
    CHECK(total == items.size());
    CHECK(seen.size() == items.size());
}

TEST_CASE("slist: a misaligned entry aborts") {
    SLIST_HEADER head;
    InitializeSListHead(&head);
    alignas(16) char buffer[64];
    auto child = run_in_child(
        [&] { InterlockedPushEntrySList(&head, reinterpret_cast<PSLIST_ENTRY>(buffer + 8)); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("16-byte aligned"));
}

TEST_CASE("interlocked list: insert and remove under the caller's spin lock") {
    LIST_ENTRY head;
    InitializeListHead(&head);
    KSPIN_LOCK lock;
    KeInitializeSpinLock(&lock);
    LIST_ENTRY a, b, c;
    CHECK(ExInterlockedInsertTailList(&head, &a, &lock) == nullptr);
    CHECK(ExInterlockedInsertTailList(&head, &b, &lock) == &a);  // the previous last
    CHECK(ExInterlockedInsertHeadList(&head, &c, &lock) == &a);  // the previous first
    CHECK(lock == 0);
    CHECK(KeGetCurrentIrql() == PASSIVE_LEVEL);
    CHECK(ExInterlockedRemoveHeadList(&head, &lock) == &c);
    CHECK(ExInterlockedRemoveHeadList(&head, &lock) == &a);
    CHECK(ExInterlockedRemoveHeadList(&head, &lock) == &b);
    CHECK(ExInterlockedRemoveHeadList(&head, &lock) == nullptr);
    CHECK(ExInterlockedInsertHeadList(&head, &a, &lock) == nullptr);

    // At an IRQL above DISPATCH_LEVEL the IRQL is left where it was.
    KIRQL old;
    KeRaiseIrql(HIGH_LEVEL, &old);
    CHECK(ExInterlockedRemoveHeadList(&head, &lock) == &a);
    CHECK(KeGetCurrentIrql() == HIGH_LEVEL);
    KeLowerIrql(old);
    CHECK(IsListEmpty(&head));
}

TEST_CASE("interlocked list: singly linked push and pop") {
    SINGLE_LIST_ENTRY head;
    head.Next = nullptr;
    KSPIN_LOCK lock = 0;
    SINGLE_LIST_ENTRY a, b;
    CHECK(ExInterlockedPopEntryList(&head, &lock) == nullptr);
    CHECK(ExInterlockedPushEntryList(&head, &a, &lock) == nullptr);
    CHECK(ExInterlockedPushEntryList(&head, &b, &lock) == &a);
    CHECK(ExInterlockedPopEntryList(&head, &lock) == &b);
    CHECK(ExInterlockedPopEntryList(&head, &lock) == &a);
    CHECK(ExInterlockedPopEntryList(&head, &lock) == nullptr);
}

TEST_CASE("interlocked list: concurrent inserters and removers keep every entry") {
    LIST_ENTRY head;
    InitializeListHead(&head);
    KSPIN_LOCK lock = 0;
    constexpr int kPerThread = 2000;
    std::vector<LIST_ENTRY> entries(2 * kPerThread);
    std::atomic<int> removed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i) {
                ExInterlockedInsertTailList(&head, &entries[t * kPerThread + i], &lock);
                if (ExInterlockedRemoveHeadList(&head, &lock) != nullptr) ++removed;
            }
        });
    }
    for (auto &thread : threads)
        thread.join();
    while (ExInterlockedRemoveHeadList(&head, &lock) != nullptr)
        ++removed;
    CHECK(removed.load() == 2 * kPerThread);
}

TEST_CASE("interlocked: 8-bit, NoFence and 128-bit operations return what Windows' do") {
    CHAR c = 5;
    CHECK(InterlockedExchange8(&c, 7) == 5);
    CHECK(c == 7);
    CHECK(InterlockedCompareExchange8(&c, 9, 1) == 7);  // no exchange
    CHECK(c == 7);
    CHECK(_InterlockedCompareExchange8(&c, 9, 7) == 7);
    CHECK(c == 9);
    CHECK(_InterlockedExchangeAdd8(&c, 1) == 9);
    CHECK(_InterlockedOr8(&c, 0x10) == 10);
    CHECK(_InterlockedAnd8(&c, 0x0F) == 0x1A);
    CHECK(_InterlockedXor8(&c, 0x0F) == 0x0A);
    CHECK(c == 0x05);

    SHORT s = 1;
    CHECK(_InterlockedExchange16(&s, 2) == 1);
    CHECK(_InterlockedExchangeAdd16(&s, 3) == 2);
    CHECK(_InterlockedIncrement16(&s) == 6);
    CHECK(_InterlockedDecrement16(&s) == 5);
    CHECK(_InterlockedOr16(&s, 8) == 5);
    CHECK(_InterlockedAnd16(&s, 12) == 13);
    CHECK(_InterlockedXor16(&s, 1) == 12);
    CHECK(_InterlockedCompareExchange16(&s, 0, 13) == 13);
    CHECK(s == 0);

    LONG64 v = 10;
    CHECK(InterlockedExchangeNoFence64(&v, 11) == 10);
    CHECK(v == 11);
    CHECK(InterlockedExchangeAddNoFence64(&v, 1) == 11);
    CHECK(InterlockedExchangeAcquire64(&v, 3) == 12);
    LONG l = 1;
    CHECK(InterlockedExchangeNoFence(&l, 2) == 1);
    CHECK(InterlockedIncrementNoFence(&l) == 3);
    CHECK(InterlockedIncrementAcquire(&l) == 4);
    CHECK(InterlockedIncrementRelease(&l) == 5);
    CHECK(InterlockedDecrementNoFence(&l) == 4);
    CHECK(InterlockedDecrementAcquire(&l) == 3);
    CHECK(InterlockedDecrementRelease(&l) == 2);
    CHECK(InterlockedCompareExchangeAcquire(&l, 7, 2) == 2);
    CHECK(InterlockedCompareExchangeRelease(&l, 8, 7) == 7);
    CHECK(InterlockedCompareExchangeNoFence(&l, 9, 1) == 8);
    CHECK(InterlockedOrNoFence(&l, 1) == 8);
    CHECK(InterlockedAndNoFence(&l, 1) == 9);
    CHECK(InterlockedExchangeAddNoFence(&l, 1) == 1);
    CHECK(l == 2);

    alignas(16) LONG64 wide[2] = {1, 2};  // low, high
    LONG64 comparand[2] = {1, 3};
    CHECK(InterlockedCompareExchange128(wide, 20, 10, comparand) == FALSE);
    CHECK(comparand[0] == 1);
    CHECK(comparand[1] == 2);  // the value found
    CHECK(_InterlockedCompareExchange128(wide, 20, 10, comparand) == TRUE);
    CHECK(wide[0] == 10);
    CHECK(wide[1] == 20);
}

TEST_CASE("interlocked: the compiler-intrinsic names are the same operations") {
    LONG l = 0;
    CHECK(_InterlockedIncrement(&l) == 1);
    CHECK(_InterlockedDecrement(&l) == 0);
    CHECK(_InterlockedExchange(&l, 5) == 0);
    CHECK(_InterlockedCompareExchange(&l, 6, 5) == 5);
    CHECK(_InterlockedExchangeAdd(&l, 2) == 6);
    CHECK(_InterlockedOr(&l, 1) == 8);
    CHECK(_InterlockedAnd(&l, 8) == 9);
    CHECK(_InterlockedXor(&l, 8) == 8);
    CHECK(_InterlockedOr_np(&l, 2) == 0);
    CHECK(_InterlockedAnd_np(&l, 2) == 2);
    CHECK(_InterlockedXor_np(&l, 2) == 2);
    CHECK(_interlockedbittestandset(&l, 3) == 0);
    CHECK(_interlockedbittestandset(&l, 3) == 1);
    CHECK(_interlockedbittestandreset(&l, 3) == 1);
    CHECK(l == 0);

    LONG64 q = 0;
    CHECK(_InterlockedIncrement64(&q) == 1);
    CHECK(_InterlockedDecrement64(&q) == 0);
    CHECK(_InterlockedExchange64(&q, 4) == 0);
    CHECK(_InterlockedCompareExchange64(&q, 5, 4) == 4);
    CHECK(_InterlockedExchangeAdd64(&q, 1) == 5);
    CHECK(_InterlockedOr64(&q, 1) == 6);
    CHECK(_InterlockedAnd64(&q, 6) == 7);
    CHECK(_InterlockedXor64(&q, 6) == 6);
    CHECK(_InterlockedOr64_np(&q, 1) == 0);
    CHECK(_InterlockedAnd64_np(&q, 0) == 1);
    CHECK(_InterlockedXor64_np(&q, 1) == 0);
    CHECK(_interlockedbittestandset64(&q, 40) == 0);
    CHECK(q == (1LL << 40) + 1);
    CHECK(_interlockedbittestandreset64(&q, 40) == 1);

    int target = 0;
    PVOID slot = nullptr;
    CHECK(_InterlockedExchangePointer(&slot, &target) == nullptr);
    CHECK(_InterlockedCompareExchangePointer(&slot, nullptr, &target) == &target);
    CHECK(slot == nullptr);
    CHAR c = 1;
    CHECK(_InterlockedExchange8(&c, 2) == 1);
}

TEST_CASE("interlocked: barriers compile as statements and order memory") {
    // Relaxed atomics, so that only the barriers order them (and TSan, which does not model
    // fences, sees no plain-memory race).
    std::atomic<int> flag{0};
    std::atomic<int> data{0};
    std::thread producer([&] {
        data.store(42, std::memory_order_relaxed);
        KeMemoryBarrier();
        flag.store(1, std::memory_order_relaxed);
    });
    while (flag.load(std::memory_order_relaxed) == 0) {
        MemoryBarrier();
    }
    MemoryBarrier();
    CHECK(data.load(std::memory_order_relaxed) == 42);
    producer.join();
    KeMemoryBarrierWithoutFence();
    _ReadWriteBarrier();
    MDL mdl{};
    KeFlushIoBuffers(&mdl, TRUE, FALSE);  // a no-op on x64, as on Windows
    CHECK(mdl.MdlFlags == 0);
}
