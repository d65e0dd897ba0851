// ntintsafe.h: checked arithmetic and conversions - exact results, STATUS_INTEGER_OVERFLOW
// with the type's error value stored on overflow.
#include <ntintsafe.h>

#include <catch2/catch.hpp>
#include <limits>

TEST_CASE("intsafe: RtlULongAdd adds exactly and reports overflow with ULONG_ERROR") {
    ULONG result = 7;
    CHECK(RtlULongAdd(0xFFFFFFFEu, 1, &result) == STATUS_SUCCESS);
    CHECK(result == 0xFFFFFFFFu);
    CHECK(RtlULongAdd(0xFFFFFFFFu, 1, &result) == STATUS_INTEGER_OVERFLOW);
    CHECK(result == ULONG_ERROR);
    CHECK(RtlULongAdd(0, 0, &result) == STATUS_SUCCESS);
    CHECK(result == 0);
}

TEST_CASE("intsafe: RtlULongSub and RtlULongLongSub refuse to go below zero") {
    ULONG result = 0;
    CHECK(RtlULongSub(5, 5, &result) == STATUS_SUCCESS);
    CHECK(result == 0);
    CHECK(RtlULongSub(5, 6, &result) == STATUS_INTEGER_OVERFLOW);
    CHECK(result == ULONG_ERROR);
    ULONGLONG wide = 0;
    CHECK(RtlULongLongSub(1ULL << 40, 1, &wide) == STATUS_SUCCESS);
    CHECK(wide == (1ULL << 40) - 1);
    CHECK(RtlULongLongSub(0, 1, &wide) == STATUS_INTEGER_OVERFLOW);
    CHECK(wide == ULONGLONG_ERROR);
}

TEST_CASE("intsafe: RtlULongMult, RtlSizeTMult and RtlSIZETMult detect wrapped products") {
    ULONG result = 0;
    CHECK(RtlULongMult(0x10000, 0xFFFF, &result) == STATUS_SUCCESS);
    CHECK(result == 0xFFFF0000u);
    CHECK(RtlULongMult(0x10000, 0x10000, &result) == STATUS_INTEGER_OVERFLOW);
    CHECK(result == ULONG_ERROR);
    size_t size = 0;
    CHECK(RtlSizeTMult(SIZE_MAX / 2, 2, &size) == STATUS_SUCCESS);
    CHECK(size == SIZE_MAX - 1);
    CHECK(RtlSizeTMult(SIZE_MAX / 2 + 1, 2, &size) == STATUS_INTEGER_OVERFLOW);
    CHECK(size == SIZE_T_ERROR);
    SIZE_T size2 = 0;
    CHECK(RtlSIZETMult(0, SIZE_MAX, &size2) == STATUS_SUCCESS);
    CHECK(size2 == 0);
    CHECK(RtlSIZETMult(3, SIZE_MAX / 2, &size2) == STATUS_INTEGER_OVERFLOW);
    CHECK(size2 == SIZE_T_ERROR);
}

TEST_CASE("intsafe: RtlSizeTAdd and the ULONG_PTR forms work at pointer width") {
    size_t size = 0;
    CHECK(RtlSizeTAdd(SIZE_MAX - 1, 1, &size) == STATUS_SUCCESS);
    CHECK(size == SIZE_MAX);
    CHECK(RtlSizeTAdd(SIZE_MAX, 1, &size) == STATUS_INTEGER_OVERFLOW);
    CHECK(size == SIZE_T_ERROR);
    ULONG_PTR p = 0;
    CHECK(RtlULongPtrAdd(0x100000000ULL, 0xFFFFFFFFULL, &p) == STATUS_SUCCESS);
    CHECK(p == 0x1FFFFFFFFULL);
    CHECK(RtlULongPtrAdd(MAXULONG_PTR, 1, &p) == STATUS_INTEGER_OVERFLOW);
    CHECK(p == ULONG_PTR_ERROR);
    CHECK(RtlULongPtrSub(10, 3, &p) == STATUS_SUCCESS);
    CHECK(p == 7);
    CHECK(RtlULongPtrSub(3, 10, &p) == STATUS_INTEGER_OVERFLOW);
    CHECK(p == ULONG_PTR_ERROR);
}

TEST_CASE("intsafe: signed forms overflow both ways and store -1") {
    LONG result = 0;
    CHECK(RtlLongAdd(MAXLONG, 1, &result) == STATUS_INTEGER_OVERFLOW);
    CHECK(result == LONG_ERROR);
    CHECK(RtlLongSub(MINLONG, 1, &result) == STATUS_INTEGER_OVERFLOW);
    CHECK(result == -1);
    CHECK(RtlLongMult(-46341, 46341, &result) == STATUS_INTEGER_OVERFLOW);
    CHECK(RtlLongMult(-46340, 46340, &result) == STATUS_SUCCESS);
    CHECK(result == -2147395600);
    CHECK(RtlLongSub(-5, 7, &result) == STATUS_SUCCESS);
    CHECK(result == -12);
}

TEST_CASE("intsafe: conversions keep values that fit and reject the rest") {
    ULONG narrow = 0;
    CHECK(RtlULongLongToULong(0xFFFFFFFFULL, &narrow) == STATUS_SUCCESS);
    CHECK(narrow == 0xFFFFFFFFu);
    CHECK(RtlULongLongToULong(0x100000000ULL, &narrow) == STATUS_INTEGER_OVERFLOW);
    CHECK(narrow == ULONG_ERROR);
    USHORT tiny = 0;
    CHECK(RtlULongToUShort(65536, &tiny) == STATUS_INTEGER_OVERFLOW);
    CHECK(tiny == USHORT_ERROR);
    ULONG from_signed = 0;
    CHECK(RtlLongToULong(-1, &from_signed) == STATUS_INTEGER_OVERFLOW);
    CHECK(RtlLongToULong(42, &from_signed) == STATUS_SUCCESS);
    CHECK(from_signed == 42);
    LONG to_signed = 0;
    CHECK(RtlULongToLong(0x80000000u, &to_signed) == STATUS_INTEGER_OVERFLOW);
    CHECK(to_signed == LONG_ERROR);
    CHECK(RtlSizeTToULong(SIZE_MAX, &narrow) == STATUS_INTEGER_OVERFLOW);
}
