// Lists: LIST_ENTRY and SINGLE_LIST_ENTRY helpers, CONTAINING_RECORD, corruption checks.
#include <wdm.h>

#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"

namespace {

struct Item {
    int value;
    LIST_ENTRY Link;
    SINGLE_LIST_ENTRY Next;
};

// The values in Flink order, checking every Blink on the way.
std::vector<int> values(const LIST_ENTRY &head) {
    std::vector<int> out;
    const LIST_ENTRY *previous = &head;
    for (const LIST_ENTRY *e = head.Flink; e != &head; e = e->Flink) {
        REQUIRE(e->Blink == previous);
        out.push_back(CONTAINING_RECORD(e, Item, Link)->value);
        previous = e;
    }
    REQUIRE(head.Blink == previous);
    return out;
}

}  // namespace

TEST_CASE("lists: an initialised head is empty: removing from it returns the head itself") {
    LIST_ENTRY head;
    InitializeListHead(&head);
    CHECK(IsListEmpty(&head));
    CHECK(head.Flink == &head);
    CHECK(head.Blink == &head);
    CHECK(RemoveHeadList(&head) == &head);  // Windows' behaviour: check IsListEmpty first
    CHECK(RemoveTailList(&head) == &head);
    CHECK(IsListEmpty(&head));
}

TEST_CASE("lists: insert at head and tail, remove from both ends, in order") {
    LIST_ENTRY head;
    InitializeListHead(&head);
    Item items[4] = {{1, {}, {}}, {2, {}, {}}, {3, {}, {}}, {4, {}, {}}};
    InsertTailList(&head, &items[1].Link);
    InsertHeadList(&head, &items[0].Link);
    InsertTailList(&head, &items[2].Link);
    InsertTailList(&head, &items[3].Link);
    CHECK_FALSE(IsListEmpty(&head));
    CHECK(values(head) == std::vector<int>{1, 2, 3, 4});

    CHECK(CONTAINING_RECORD(RemoveHeadList(&head), Item, Link)->value == 1);
    CHECK(CONTAINING_RECORD(RemoveTailList(&head), Item, Link)->value == 4);
    CHECK(values(head) == std::vector<int>{2, 3});
}

TEST_CASE("lists: RemoveEntryList answers whether the list is now empty") {
    LIST_ENTRY head;
    InitializeListHead(&head);
    Item a{1, {}, {}};
    Item b{2, {}, {}};
    InsertTailList(&head, &a.Link);
    InsertTailList(&head, &b.Link);
    CHECK(RemoveEntryList(&a.Link) == FALSE);
    CHECK(values(head) == std::vector<int>{2});
    CHECK(RemoveEntryList(&b.Link) == TRUE);
    CHECK(IsListEmpty(&head));
}

TEST_CASE("lists: AppendTailList splices a headless ring: the second head is then removed") {
    LIST_ENTRY first;
    LIST_ENTRY second;
    InitializeListHead(&first);
    InitializeListHead(&second);
    Item items[4] = {{1, {}, {}}, {2, {}, {}}, {3, {}, {}}, {4, {}, {}}};
    InsertTailList(&first, &items[0].Link);
    InsertTailList(&first, &items[1].Link);
    InsertTailList(&second, &items[2].Link);
    InsertTailList(&second, &items[3].Link);
    AppendTailList(&first, &second);  // `second` is now an entry of `first`, between 2 and 3
    CHECK(first.Blink == &items[3].Link);
    CHECK(RemoveEntryList(&second) == FALSE);
    CHECK(values(first) == std::vector<int>{1, 2, 3, 4});

    // A single entry (a one-element ring) appends as itself.
    Item five{5, {}, {}};
    InitializeListHead(&five.Link);
    AppendTailList(&first, &five.Link);
    CHECK(values(first) == std::vector<int>{1, 2, 3, 4, 5});
}

TEST_CASE("lists: PushEntryList / PopEntryList are a LIFO stack: popping empty gives NULL") {
    SINGLE_LIST_ENTRY head{nullptr};
    CHECK(PopEntryList(&head) == nullptr);
    Item a{1, {}, {}};
    Item b{2, {}, {}};
    PushEntryList(&head, &a.Next);
    PushEntryList(&head, &b.Next);
    CHECK(CONTAINING_RECORD(PopEntryList(&head), Item, Next)->value == 2);
    CHECK(CONTAINING_RECORD(PopEntryList(&head), Item, Next)->value == 1);
    CHECK(PopEntryList(&head) == nullptr);
    CHECK(head.Next == nullptr);
}

TEST_CASE("lists: CONTAINING_RECORD undoes the field offset, for any field") {
    Item item{7, {}, {}};
    CHECK(CONTAINING_RECORD(&item.Link, Item, Link) == &item);
    CHECK(CONTAINING_RECORD(&item.Next, Item, Next) == &item);
    CHECK(CONTAINING_RECORD(&item.value, Item, value) == &item);
}

TEST_CASE("lists: a corrupted list fails fast instead of being written") {
    LIST_ENTRY head;
    InitializeListHead(&head);
    Item a{1, {}, {}};
    Item b{2, {}, {}};
    InsertTailList(&head, &a.Link);
    InsertTailList(&head, &b.Link);

    SECTION("removing an entry twice") {
        RemoveEntryList(&a.Link);
        const auto child = softndk::test::run_in_child([&] { RemoveEntryList(&a.Link); });
        CHECK(child.aborted());
        CHECK_THAT(child.err, Catch::Contains("KERNEL_SECURITY_CHECK_FAILURE"));
        CHECK_THAT(child.err, Catch::Contains("corrupted LIST_ENTRY"));
    }
    SECTION("a neighbour's link overwritten") {
        for (int which = 0; which < 4; ++which) {
            INFO("operation " << which);
            const auto child = softndk::test::run_in_child([&] {
                Item c{3, {}, {}};
                InitializeListHead(&c.Link);
                switch (which) {
                    case 0:
                        b.Link.Blink = &b.Link;  // as an overrun of the entry before would
                        RemoveEntryList(&a.Link);
                        break;
                    case 1:
                        b.Link.Blink = &b.Link;
                        RemoveTailList(&head);
                        break;
                    case 2:
                        b.Link.Flink = &a.Link;
                        InsertTailList(&head, &c.Link);
                        break;
                    default:
                        b.Link.Flink = &a.Link;
                        AppendTailList(&head, &c.Link);
                        break;
                }
            });
            CHECK(child.aborted());
            CHECK_THAT(child.err, Catch::Contains("FAST_FAIL_CORRUPT_LIST_ENTRY"));
        }
    }
    SECTION("the head's first entry does not point back") {
        a.Link.Blink = nullptr;
        const auto removing = softndk::test::run_in_child([&] { RemoveHeadList(&head); });
        CHECK(removing.aborted());
        Item c{3, {}, {}};
        const auto inserting = softndk::test::run_in_child([&] { InsertHeadList(&head, &c.Link); });
        CHECK(inserting.aborted());
        CHECK_THAT(inserting.err, Catch::Contains("KERNEL_SECURITY_CHECK_FAILURE"));
    }
}
