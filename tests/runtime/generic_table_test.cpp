// RTL_GENERIC_TABLE: ordered insert / lookup / delete / enumerate with the caller's compare,
// allocate and free routines.
#include <wdm.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <set>
#include <vector>

namespace {

struct Entry {
    int key;
    int payload;
};

int g_allocations = 0;
bool g_fail_allocation = false;

RTL_GENERIC_COMPARE_RESULTS NTAPI compare(PRTL_GENERIC_TABLE, PVOID first, PVOID second) {
    const int a = static_cast<Entry *>(first)->key;
    const int b = static_cast<Entry *>(second)->key;
    return a < b ? GenericLessThan : a > b ? GenericGreaterThan : GenericEqual;
}

PVOID NTAPI allocate(PRTL_GENERIC_TABLE table, CLONG size) {
    CHECK(table->TableContext == &g_allocations);
    CHECK(size >= sizeof(RTL_SPLAY_LINKS) + sizeof(LIST_ENTRY) + sizeof(Entry));
    if (g_fail_allocation) return nullptr;
    ++g_allocations;
    return std::malloc(size);
}

VOID NTAPI release(PRTL_GENERIC_TABLE, PVOID buffer) {
    --g_allocations;
    std::free(buffer);
}

std::vector<int> in_order(PRTL_GENERIC_TABLE table) {
    std::vector<int> keys;
    for (auto *e = static_cast<Entry *>(RtlEnumerateGenericTable(table, TRUE)); e != nullptr;
         e = static_cast<Entry *>(RtlEnumerateGenericTable(table, FALSE))) {
        keys.push_back(e->key);
    }
    return keys;
}

}  // namespace

TEST_CASE("generic table: insert reports new and existing elements and copies the data") {
    RTL_GENERIC_TABLE table;
    RtlInitializeGenericTable(&table, compare, allocate, release, &g_allocations);
    CHECK(RtlIsGenericTableEmpty(&table));
    CHECK(RtlNumberGenericTableElements(&table) == 0);
    CHECK(RtlEnumerateGenericTable(&table, TRUE) == nullptr);
    Entry entry{5, 50};
    BOOLEAN is_new = FALSE;
    auto *stored =
        static_cast<Entry *>(RtlInsertElementGenericTable(&table, &entry, sizeof(entry), &is_new));
    REQUIRE(stored != nullptr);
    CHECK(is_new);
    CHECK(stored != &entry);
    CHECK(stored->payload == 50);
    Entry again{5, 99};
    CHECK(RtlInsertElementGenericTable(&table, &again, sizeof(again), &is_new) == stored);
    CHECK_FALSE(is_new);
    CHECK(stored->payload == 50);  // the existing element is kept
    CHECK(RtlNumberGenericTableElements(&table) == 1);
    g_fail_allocation = true;
    Entry other{6, 60};
    CHECK(RtlInsertElementGenericTable(&table, &other, sizeof(other), &is_new) == nullptr);
    CHECK_FALSE(is_new);
    g_fail_allocation = false;
    CHECK(RtlDeleteElementGenericTable(&table, &entry));
    CHECK(g_allocations == 0);
}

TEST_CASE("generic table: a random workload matches std::set in order, lookups and deletes") {
    RTL_GENERIC_TABLE table;
    RtlInitializeGenericTable(&table, compare, allocate, release, &g_allocations);
    std::set<int> model;
    std::mt19937 random(1234);
    for (int step = 0; step < 4000; ++step) {
        Entry entry{static_cast<int>(random() % 300), step};
        if (random() % 3 != 0) {
            BOOLEAN is_new = FALSE;
            REQUIRE(RtlInsertElementGenericTable(&table, &entry, sizeof(entry), &is_new) !=
                    nullptr);
            CHECK(static_cast<bool>(is_new) == model.insert(entry.key).second);
        } else {
            CHECK(static_cast<bool>(RtlDeleteElementGenericTable(&table, &entry)) ==
                  (model.erase(entry.key) == 1));
        }
        Entry probe{static_cast<int>(random() % 300), 0};
        auto *found = static_cast<Entry *>(RtlLookupElementGenericTable(&table, &probe));
        CHECK((found != nullptr) == (model.count(probe.key) == 1));
        if (found != nullptr) CHECK(found->key == probe.key);
    }
    CHECK(RtlNumberGenericTableElements(&table) == model.size());
    const std::vector<int> expected(model.begin(), model.end());
    CHECK(in_order(&table) == expected);
    std::vector<int> without_splaying;
    PVOID restart = nullptr;
    for (auto *e = static_cast<Entry *>(RtlEnumerateGenericTableWithoutSplaying(&table, &restart));
         e != nullptr;
         e = static_cast<Entry *>(RtlEnumerateGenericTableWithoutSplaying(&table, &restart))) {
        without_splaying.push_back(e->key);
    }
    CHECK(without_splaying == expected);
    for (int key : expected) {
        Entry entry{key, 0};
        REQUIRE(RtlDeleteElementGenericTable(&table, &entry));
    }
    CHECK(RtlIsGenericTableEmpty(&table));
    CHECK(g_allocations == 0);
}

TEST_CASE("generic table: RtlGetElementGenericTable indexes in insertion order") {
    RTL_GENERIC_TABLE table;
    RtlInitializeGenericTable(&table, compare, allocate, release, &g_allocations);
    for (int key : {30, 10, 20}) {
        Entry entry{key, key};
        RtlInsertElementGenericTable(&table, &entry, sizeof(entry), nullptr);
    }
    CHECK(static_cast<Entry *>(RtlGetElementGenericTable(&table, 0))->key == 30);
    CHECK(static_cast<Entry *>(RtlGetElementGenericTable(&table, 2))->key == 20);
    CHECK(RtlGetElementGenericTable(&table, 3) == nullptr);
    Entry ten{10, 0};
    CHECK_FALSE(RtlDeleteElementGenericTable(&table, &ten) == FALSE);
    CHECK(static_cast<Entry *>(RtlGetElementGenericTable(&table, 1))->key == 20);
    CHECK(in_order(&table) == std::vector<int>{20, 30});
    CHECK_FALSE(RtlDeleteElementGenericTable(&table, &ten));
    for (int key : {20, 30}) {
        Entry entry{key, 0};
        RtlDeleteElementGenericTable(&table, &entry);
    }
    CHECK(g_allocations == 0);
}
