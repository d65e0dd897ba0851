/*
 * layout_c.c - ndkpi_layout.def as C11 _Static_asserts: every offset, size,
 * alignment, dispatch-slot type and constant, as a C consumer sees them.
 * Compiling is the test; main() only lets CTest list it.
 *
 * Type checks use _Generic, which matches COMPATIBLE types: in C an enum is
 * compatible with its underlying integer type, so an enum member typed as
 * unsigned int would pass here. layout_cpp.cpp checks exact types.
 */
#include <ndis.h>
#include <ndkpi.h>
#include <wskndk.h>

#include <stddef.h>

/* ---- Struct members: offset, size, type. */
#define FIELD(type, member, offset, size, member_type)                                         \
    _Static_assert(offsetof(type, member) == (offset), #type "." #member " offset");           \
    _Static_assert(sizeof(((type *)0)->member) == (size), #type "." #member " size");          \
    _Static_assert(_Generic(&((type *)0)->member, __typeof__(member_type) * : 1, default : 0), \
                   #type "." #member " type is " #member_type);
#define SIZE(type, size)   _Static_assert(sizeof(type) == (size), "sizeof(" #type ")");
#define ALIGN(type, align) _Static_assert(_Alignof(type) == (align), "_Alignof(" #type ")");
#include "ndkpi_layout.def"

/* ---- Dispatch tables: size, and size == slot count * pointer size, so a
 * member missing from the .def (or from the header) cannot hide. */
#define TABLE(table, size, slots)                                  \
    _Static_assert(sizeof(table) == (size), "sizeof(" #table ")"); \
    _Static_assert((size) == (slots) * sizeof(void *), #table " slot count");
/* ---- Slots: offset, and the member's type is the NDK_FN_* typedef. */
#define SLOT(table, member, offset, fn_typedef)                                        \
    _Static_assert(offsetof(table, member) == (offset), #table "." #member " offset"); \
    _Static_assert(_Generic(((table *)0)->member, fn_typedef : 1, default : 0),        \
                   #table "." #member " type is " #fn_typedef);
#include "ndkpi_layout.def"

/* ---- Every NDK_FN_* typedef is a pointer to a function. */
#define TYPEDEF(fn_typedef) \
    _Static_assert(sizeof(fn_typedef) == sizeof(void (*)(void)), #fn_typedef);
#include "ndkpi_layout.def"

/* ---- Constants: int-sized, exact 32-bit value. */
#define CONST_VALUE(name, value)                           \
    _Static_assert(sizeof(name) == 4, #name " is 32-bit"); \
    _Static_assert((ULONG)(name) == (ULONG)(value), #name " == " #value);
#include "ndkpi_layout.def"

/* ---- Entry counts (reference section 2: 10 tables, 70 slots; section 3: 63
 * typedefs). Per-table slot counts are checked in layout_cpp.cpp. */
enum {
#define TABLE(table, size, slots) +1
    kTables = 0
#include "ndkpi_layout.def"
    ,
#define TABLE(table, size, slots) +(slots)
    kTableSlots = 0
#include "ndkpi_layout.def"
    ,
#define SLOT(table, member, offset, fn_typedef) +1
    kSlots = 0
#include "ndkpi_layout.def"
    ,
#define TYPEDEF(fn_typedef) +1
    kTypedefs = 0
#include "ndkpi_layout.def"
};
_Static_assert(kTables == 10, "10 dispatch tables");
_Static_assert(kSlots == 70, "70 dispatch slots");
_Static_assert(kTableSlots == kSlots, "every table slot has a SLOT entry");
_Static_assert(kTypedefs == 63, "63 NDK_FN_* typedefs");

/* ---- Base-type signedness (reference 8.2): NT_SUCCESS relies on it. */
_Static_assert((NTSTATUS)-1 < 0, "NTSTATUS is signed");
_Static_assert((LONG)-1 < 0, "LONG is signed");
_Static_assert((ULONG)-1 > 0, "ULONG is unsigned");
_Static_assert(!NT_SUCCESS(STATUS_BUFFER_OVERFLOW), "STATUS_BUFFER_OVERFLOW is a failure");
_Static_assert(NT_SUCCESS(STATUS_PENDING), "STATUS_PENDING is a success");

int main(void) {
    return 0;
}
