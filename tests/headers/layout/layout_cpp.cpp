// layout_cpp.cpp - ndkpi_layout.def checked twice from C++20:
//   1. at compile time (static_assert): offsets, sizes, alignments, exact
//      member and slot types (std::is_same_v), per-table slot lists,
//      constants and entry counts; and
//   2. at run time (Catch2): every entry again through RunChecks(), one test
//      case per kind, so CTest lists what was checked and how many.
#include <catch2/catch.hpp>

#include <cstddef>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <utility>

#include "layout_checks.hpp"

namespace {

using softndk::layout::Check;
using softndk::layout::CountOf;
using softndk::layout::ExpectedCount;
using softndk::layout::Kind;
using softndk::layout::KindName;
using softndk::layout::RunChecks;

// ---- 1. Compile time.

#define FIELD(type, member, offset, size, member_type)                                         \
    static_assert(offsetof(type, member) == (offset), #type "." #member " offset");            \
    static_assert(sizeof(std::declval<type &>().member) == (size), #type "." #member " size"); \
    static_assert(std::is_same_v<decltype(std::declval<type &>().member), member_type>,        \
                  #type "." #member " type is " #member_type);
#define SIZE(type, size)   static_assert(sizeof(type) == (size), "sizeof(" #type ")");
#define ALIGN(type, align) static_assert(alignof(type) == (align), "alignof(" #type ")");
#define SLOT(table, member, offset, fn_typedef)                                       \
    static_assert(offsetof(table, member) == (offset), #table "." #member " offset"); \
    static_assert(std::is_same_v<decltype(table::member), fn_typedef>,                \
                  #table "." #member " type is " #fn_typedef);
#define TYPEDEF(fn_typedef)                                                                     \
    static_assert(                                                                              \
        std::is_pointer_v<fn_typedef> && std::is_function_v<std::remove_pointer_t<fn_typedef>>, \
        #fn_typedef " is a function pointer typedef");
#define CONST_VALUE(name, value)                          \
    static_assert(sizeof(name) == 4, #name " is 32-bit"); \
    static_assert(static_cast<ULONG>(name) == static_cast<ULONG>(value), #name " == " #value);
#include "ndkpi_layout.def"

// Per-table slot lists: each table's SLOT entries sit at 0, 8, 16, ... and
// there are exactly as many as the table has slots (so no member of the
// header is missing from the .def, and no slot of the .def is duplicated).
struct SlotEntry {
    std::string_view table_name;
    std::size_t offset;
};
constexpr SlotEntry kSlots[] = {
#define SLOT(table, member, offset, fn_typedef) {#table, offset},
#include "ndkpi_layout.def"
};

constexpr bool SlotsCoverTable(std::string_view table, std::size_t slot_count) {
    std::size_t listed = 0;
    for (const SlotEntry &s : kSlots) {
        if (s.table_name != table) continue;
        if (s.offset != listed * sizeof(void *)) return false;
        ++listed;
    }
    return listed == slot_count;
}

#define TABLE(table, size, slot_count)                                                   \
    static_assert(sizeof(table) == (size), "sizeof(" #table ")");                        \
    static_assert(sizeof(table) == (slot_count) * sizeof(void *), #table " slot count"); \
    static_assert(SlotsCoverTable(#table, slot_count), #table " slot list");
#include "ndkpi_layout.def"

// Entry counts.
constexpr std::size_t kCount[] = {
#define TABLE(table, size, slot_count) +1
    0
#include "ndkpi_layout.def"
    ,
#define SLOT(table, member, offset, fn_typedef) +1
    0
#include "ndkpi_layout.def"
    ,
#define FIELD(type, member, offset, size, member_type) +1
    0
#include "ndkpi_layout.def"
    ,
#define SIZE(type, size) +1
    0
#include "ndkpi_layout.def"
    ,
#define ALIGN(type, align) +1
    0
#include "ndkpi_layout.def"
    ,
#define CONST_VALUE(name, value) +1
    0
#include "ndkpi_layout.def"
    ,
#define TYPEDEF(fn_typedef) +1
    0
#include "ndkpi_layout.def"
};
static_assert(std::size(kCount) == std::size(softndk::layout::kAllKinds));
static_assert(kCount[0] == ExpectedCount(Kind::kTable), "10 dispatch tables");
static_assert(kCount[1] == ExpectedCount(Kind::kSlot), "70 dispatch slots");
static_assert(kCount[2] == ExpectedCount(Kind::kField), "struct field count");
static_assert(kCount[3] == ExpectedCount(Kind::kSize), "size count");
static_assert(kCount[4] == ExpectedCount(Kind::kAlign), "alignment count");
static_assert(kCount[5] == ExpectedCount(Kind::kConstant), "constant count");
static_assert(kCount[6] == ExpectedCount(Kind::kTypedef), "63 NDK_FN_* typedefs");

// Base-type signedness (reference 8.2): NT_SUCCESS relies on it.
static_assert(std::is_signed_v<NTSTATUS> && std::is_signed_v<LONG>);
static_assert(std::is_unsigned_v<ULONG> && std::is_unsigned_v<ULONG_PTR>);
static_assert(!std::is_same_v<BOOLEAN, bool>, "BOOLEAN is UCHAR, not bool");
static_assert(!NT_SUCCESS(STATUS_BUFFER_OVERFLOW) && NT_SUCCESS(STATUS_PENDING));

// ---- 2. Run time.

void CheckKind(Kind kind) {
    const auto checks = RunChecks();
    std::size_t seen = 0;
    for (const Check &c : checks) {
        if (c.kind != kind) continue;
        ++seen;
        INFO(c.name << ": " << c.detail);
        CHECK(c.ok);
    }
    INFO(KindName(kind));
    REQUIRE(seen == ExpectedCount(kind));
}

TEST_CASE("ndkpi layout: dispatch table sizes and slot lists", "[headers][layout]") {
    CheckKind(Kind::kTable);
}

TEST_CASE("ndkpi layout: dispatch slot offsets and NDK_FN_* types", "[headers][layout]") {
    CheckKind(Kind::kSlot);
}

TEST_CASE("ndkpi layout: struct field offsets, sizes and types", "[headers][layout]") {
    CheckKind(Kind::kField);
}

TEST_CASE("ndkpi layout: type sizes", "[headers][layout]") {
    CheckKind(Kind::kSize);
}

TEST_CASE("ndkpi layout: type alignments", "[headers][layout]") {
    CheckKind(Kind::kAlign);
}

TEST_CASE("ndkpi layout: constant values", "[headers][layout]") {
    CheckKind(Kind::kConstant);
}

TEST_CASE("ndkpi layout: NDK_FN_* typedefs match the documented prototypes", "[headers][layout]") {
    CheckKind(Kind::kTypedef);
}

TEST_CASE("ndkpi layout: entry counts match the reference", "[headers][layout]") {
    const auto checks = RunChecks();
    for (Kind kind : softndk::layout::kAllKinds) {
        INFO(KindName(kind));
        CHECK(CountOf(checks, kind) == ExpectedCount(kind));
    }
    REQUIRE(CountOf(checks, Kind::kTable) == 10);
    REQUIRE(CountOf(checks, Kind::kSlot) == 70);
    REQUIRE(CountOf(checks, Kind::kTypedef) == 63);
}

}  // namespace
