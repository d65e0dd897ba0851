// layout_checks.hpp - ndkpi_layout.def evaluated at run time.
//
// RunChecks() turns every entry of the .def into a Check (what was expected,
// what the headers give, whether they agree). The Catch2 test
// (layout_cpp.cpp) and softndk-selfcheck (selfcheck.cpp) report from it.
// Nothing here static_asserts, so a mismatch is reported instead of
// stopping the build; layout_c.c and layout_cpp.cpp are the compile-time
// gates.
//
// Include in exactly one translation unit per program: it defines the static
// Proto_* functions of ndkpi_prototypes.inc.
#ifndef SOFTNDK_TESTS_HEADERS_LAYOUT_LAYOUT_CHECKS_HPP_
#define SOFTNDK_TESTS_HEADERS_LAYOUT_LAYOUT_CHECKS_HPP_

#include <ndis.h>
#include <ndkpi.h>
#include <wskndk.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ndkpi_prototypes.inc"

namespace softndk::layout {

enum class Kind { kTable, kSlot, kField, kSize, kAlign, kConstant, kTypedef };

inline constexpr Kind kAllKinds[] = {Kind::kTable, Kind::kSlot,     Kind::kField,  Kind::kSize,
                                     Kind::kAlign, Kind::kConstant, Kind::kTypedef};

// Entry counts per kind. Tables, slots and typedefs are the totals stated by
// the reference (sections 2 and 3); the others count its rows as transcribed
// into ndkpi_layout.def, so an entry lost from the .def is noticed.
inline constexpr std::size_t ExpectedCount(Kind kind) {
    switch (kind) {
        case Kind::kTable:
            return 10;
        case Kind::kSlot:
            return 70;
        case Kind::kField:
            return 112;
        case Kind::kSize:
            return 56;
        case Kind::kAlign:
            return 5;
        case Kind::kConstant:
            return 108;
        case Kind::kTypedef:
            return 63;
    }
    return 0;
}

// Plural noun used in summaries ("70 slots").
inline constexpr std::string_view KindName(Kind kind) {
    switch (kind) {
        case Kind::kTable:
            return "dispatch tables";
        case Kind::kSlot:
            return "slots";
        case Kind::kField:
            return "struct fields";
        case Kind::kSize:
            return "sizes";
        case Kind::kAlign:
            return "alignments";
        case Kind::kConstant:
            return "constants";
        case Kind::kTypedef:
            return "typedefs";
    }
    return "?";
}

struct Check {
    Kind kind;
    std::string name;  // "NDK_SGE.Length", "sizeof(NDK_SGE)", "NDK_OP_FLAG_DEFER", ...
    bool ok;
    std::string detail;  // what the headers give; on mismatch, also what was expected
};

namespace internal {

inline std::string Hex(std::uint64_t value) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
    return buf;
}

// "offset 0x8" or "offset 0x9 (expected 0x8)".
inline std::string Compare(std::string_view what, std::uint64_t actual, std::uint64_t expected) {
    std::string s{what};
    s += ' ';
    s += Hex(actual);
    if (actual != expected) s += " (expected " + Hex(expected) + ")";
    return s;
}

inline std::string TypeNote(bool same, std::string_view expected_type) {
    std::string s = "type ";
    if (!same) s += "is not ";
    s += expected_type;
    return s;
}

template <typename Fn>
inline constexpr bool kIsFunctionPointer =
    std::is_pointer_v<Fn> &&std::is_function_v<std::remove_pointer_t<Fn>>;

struct SlotEntry {
    std::string_view table_name;
    std::size_t offset;
};

// One helper per kind, kept out of line: RunChecks() expands to a few hundred
// calls, and inlining them all only makes the compiler slow.
[[gnu::noinline]] inline void AddSlot(std::vector<Check> &checks, std::vector<SlotEntry> &slots,
                                      std::string_view table, std::string_view member,
                                      std::size_t offset, std::size_t expected_offset,
                                      bool same_type, std::string_view fn_typedef) {
    slots.push_back({table, expected_offset});
    checks.push_back(
        {Kind::kSlot, std::string(table) + "." + std::string(member),
         offset == expected_offset && same_type,
         Compare("offset", offset, expected_offset) + ", " + TypeNote(same_type, fn_typedef)});
}

// The table's size, and the .def lists exactly slot_count slots for it, at
// 0, 8, 16, ... (so no header member is missing from the .def).
[[gnu::noinline]] inline void AddTable(std::vector<Check> &checks,
                                       const std::vector<SlotEntry> &slots, std::string_view table,
                                       std::size_t size, std::size_t expected_size,
                                       std::size_t slot_count) {
    std::size_t listed = 0;
    bool contiguous = true;
    for (const SlotEntry &s : slots) {
        if (s.table_name != table) continue;
        contiguous = contiguous && s.offset == listed * sizeof(void *);
        ++listed;
    }
    const bool ok = size == expected_size && listed == slot_count && contiguous &&
                    size == slot_count * sizeof(void *);
    std::string detail =
        Compare("size", size, expected_size) + ", " + std::to_string(listed) + " slots listed";
    if (listed != slot_count) detail += " (expected " + std::to_string(slot_count) + ")";
    if (!contiguous) detail += ", slot offsets not contiguous";
    checks.push_back({Kind::kTable, std::string(table), ok, std::move(detail)});
}

[[gnu::noinline]] inline void AddField(std::vector<Check> &checks, std::string_view type,
                                       std::string_view member, std::size_t offset,
                                       std::size_t expected_offset, std::size_t size,
                                       std::size_t expected_size, bool same_type,
                                       std::string_view member_type) {
    checks.push_back({Kind::kField, std::string(type) + "." + std::string(member),
                      offset == expected_offset && size == expected_size && same_type,
                      Compare("offset", offset, expected_offset) + ", " +
                          Compare("size", size, expected_size) + ", " +
                          TypeNote(same_type, member_type)});
}

[[gnu::noinline]] inline void AddSize(std::vector<Check> &checks, std::string_view type,
                                      std::size_t size, std::size_t expected_size) {
    checks.push_back({Kind::kSize, "sizeof(" + std::string(type) + ")", size == expected_size,
                      Compare("size", size, expected_size)});
}

[[gnu::noinline]] inline void AddAlign(std::vector<Check> &checks, std::string_view type,
                                       std::size_t align, std::size_t expected_align) {
    checks.push_back({Kind::kAlign, "alignof(" + std::string(type) + ")", align == expected_align,
                      Compare("align", align, expected_align)});
}

// Constants are compared as 32-bit values (NTSTATUS codes are negative ints,
// the .def spells them as unsigned hex) and must be 4 bytes wide.
[[gnu::noinline]] inline void AddConstant(std::vector<Check> &checks, std::string_view name,
                                          std::uint32_t value, std::uint32_t expected_value,
                                          std::size_t width) {
    checks.push_back(
        {Kind::kConstant, std::string(name), value == expected_value && width == 4,
         Compare("value", value, expected_value) + (width == 4 ? "" : ", not 32-bit")});
}

[[gnu::noinline]] inline void AddTypedef(std::vector<Check> &checks, std::string_view fn_typedef,
                                         bool same_type, bool function_pointer) {
    std::string detail = function_pointer ? "function pointer" : "NOT a function pointer";
    detail += same_type ? ", matches the documented prototype"
                        : ", does NOT match the documented prototype";
    checks.push_back({Kind::kTypedef, std::string(fn_typedef), same_type && function_pointer,
                      std::move(detail)});
}

}  // namespace internal

inline std::vector<Check> RunChecks() {
    using namespace internal;
    std::vector<Check> checks;
    std::vector<SlotEntry> slots;

    // Slots first, so that each table can be checked against its slot list.
#define SLOT(table, member, offset, fn_typedef)                              \
    AddSlot(checks, slots, #table, #member, offsetof(table, member), offset, \
            std::is_same_v<decltype(table::member), fn_typedef>, #fn_typedef);
#include "ndkpi_layout.def"

#define TABLE(table, size, slot_count) \
    AddTable(checks, slots, #table, sizeof(table), size, slot_count);
#include "ndkpi_layout.def"

#define FIELD(type, member, offset, size, member_type)               \
    AddField(checks, #type, #member, offsetof(type, member), offset, \
             sizeof(std::declval<type &>().member), size,            \
             std::is_same_v<decltype(std::declval<type &>().member), member_type>, #member_type);
#include "ndkpi_layout.def"

#define SIZE(type, size) AddSize(checks, #type, sizeof(type), size);
#include "ndkpi_layout.def"

#define ALIGN(type, align) AddAlign(checks, #type, alignof(type), align);
#include "ndkpi_layout.def"

#define CONST_VALUE(name, value)                                 \
    AddConstant(checks, #name, static_cast<std::uint32_t>(name), \
                static_cast<std::uint32_t>(value), sizeof(name));
#include "ndkpi_layout.def"

    // Typedefs: the function written with the documented prototype has exactly
    // the typedef's type. (Taking its address also marks the static function used.)
#define TYPEDEF(fn_typedef)                                                                    \
    (void)&Proto_##fn_typedef;                                                                 \
    AddTypedef(checks, #fn_typedef, std::is_same_v<decltype(&Proto_##fn_typedef), fn_typedef>, \
               kIsFunctionPointer<fn_typedef>);
#include "ndkpi_layout.def"

    return checks;
}

inline std::size_t CountOf(const std::vector<Check> &checks, Kind kind) {
    std::size_t n = 0;
    for (const auto &c : checks)
        n += c.kind == kind;
    return n;
}

}  // namespace softndk::layout

#endif  // SOFTNDK_TESTS_HEADERS_LAYOUT_LAYOUT_CHECKS_HPP_
