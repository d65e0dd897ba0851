// The small WDK macros drivers use everywhere (ntdef.h / wdm.h): sizes and counts of
// fields and arrays, page arithmetic, NT_ERROR, ASSERTMSG, and KeBugCheck.
#include <ntddk.h>

#include <catch2/catch.hpp>

#include "death.hpp"

namespace {

struct Record {
    UCHAR tag;
    ULONG counts[5];
    ULONGLONG tail;
};

}  // namespace

TEST_CASE("macros: field and array sizes") {
    CHECK(RTL_FIELD_SIZE(Record, counts) == 5 * sizeof(ULONG));
    CHECK(RTL_SIZEOF_THROUGH_FIELD(Record, counts) == FIELD_OFFSET(Record, counts) + 20);
    CHECK(RTL_SIZEOF_THROUGH_FIELD(Record, tail) == sizeof(Record));
    ULONG table[7] = {};
    CHECK(RTL_NUMBER_OF(table) == 7);
    CHECK(ARRAYSIZE(table) == 7);
}

TEST_CASE("macros: page arithmetic on addresses and byte counts") {
    const auto va = reinterpret_cast<PVOID>(static_cast<ULONG_PTR>(0x12345678));
    CHECK(reinterpret_cast<ULONG_PTR>(PAGE_ALIGN(va)) == 0x12345000);
    CHECK(BYTE_OFFSET(va) == 0x678);
    CHECK(ROUND_TO_PAGES(1) == PAGE_SIZE);
    CHECK(ROUND_TO_PAGES(PAGE_SIZE) == PAGE_SIZE);
    CHECK(ROUND_TO_PAGES(PAGE_SIZE + 1) == 2 * PAGE_SIZE);
    CHECK(BYTES_TO_PAGES(0) == 0);
    CHECK(BYTES_TO_PAGES(1) == 1);
    CHECK(BYTES_TO_PAGES(3 * PAGE_SIZE) == 3);
    CHECK(BYTES_TO_PAGES(3 * PAGE_SIZE + 1) == 4);
}

TEST_CASE("macros: NT_ERROR is true for error severity only") {
    CHECK(NT_ERROR(STATUS_INVALID_PARAMETER));
    CHECK_FALSE(NT_ERROR(STATUS_SUCCESS));
    CHECK_FALSE(NT_ERROR(STATUS_PENDING));
    CHECK_FALSE(NT_ERROR(STATUS_BUFFER_OVERFLOW));  // a warning, not an error
}

TEST_CASE("macros: ASSERTMSG passes silently and aborts with its message when false") {
    ASSERTMSG("holds", 1 + 1 == 2);
    const auto child = softndk::test::run_in_child([] { ASSERTMSG("the ring is full", 0 == 1); });
    CHECK(child.aborted());
    CHECK(child.err.find("the ring is full") != std::string::npos);
}

TEST_CASE("macros: KeBugCheck reports its code and aborts") {
    const auto child = softndk::test::run_in_child([] { KeBugCheck(0xE2); });
    CHECK(child.aborted());
    CHECK(child.err.find("0x000000E2") != std::string::npos);
}
