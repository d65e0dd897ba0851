// WDK macros and Rtl helpers of softndk_wdm_io.h: CTL_CODE, C_ASSERT, ALIGN_*, Add2Ptr,
// RtlCopyBytes, byte swaps, bit helpers, RtlExtendedIntegerMultiply / RtlExtendedMagicDivide,
// time fields, and the counted-string operations.
#include <wdm.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "wdk_internal.hpp"

C_ASSERT(sizeof(ULONG) == 4);  // file scope

TEST_CASE("rtl helpers: CTL_CODE packs device type, access, function and method") {
    C_ASSERT(METHOD_BUFFERED == 0);  // block scope
    constexpr ULONG code = CTL_CODE(FILE_DEVICE_UNKNOWN, 0x801, METHOD_BUFFERED, FILE_ANY_ACCESS);
    CHECK(code == 0x00222004);
    CHECK(CTL_CODE(FILE_DEVICE_NETWORK, 0x20, METHOD_NEITHER,
                   FILE_READ_ACCESS | FILE_WRITE_ACCESS) == 0x0012C083);
    CHECK(DEVICE_TYPE_FROM_CTL_CODE(code) == FILE_DEVICE_UNKNOWN);
    CHECK(METHOD_FROM_CTL_CODE(CTL_CODE(FILE_DEVICE_DISK, 1, METHOD_OUT_DIRECT, 0)) ==
          METHOD_OUT_DIRECT);
    CHECK(FILE_DEVICE_DISK == 7);
    CHECK(FILE_DEVICE_MASS_STORAGE == 0x2d);
}

TEST_CASE("rtl helpers: ALIGN_* round to power-of-two boundaries and Add2Ptr offsets bytes") {
    CHECK(ALIGN_UP_BY(0, 8) == 0);
    CHECK(ALIGN_UP_BY(1, 8) == 8);
    CHECK(ALIGN_UP_BY(8, 8) == 8);
    CHECK(ALIGN_DOWN_BY(15, 8) == 8);
    CHECK(ALIGN_UP(5, ULONGLONG) == 8);
    CHECK(ALIGN_DOWN(5, ULONG) == 4);
    alignas(16) unsigned char block[64];
    CHECK(ALIGN_UP_POINTER_BY(block + 1, 16) == block + 16);
    CHECK(ALIGN_UP_POINTER_BY(block, 16) == block);
    CHECK(ALIGN_DOWN_POINTER_BY(block + 17, 16) == block + 16);
    CHECK(Add2Ptr(block, 10) == block + 10);
    CHECK(PtrOffset(block, block + 33) == 33u);
    unsigned char copy[4] = {};
    RtlCopyBytes(copy, "\x01\x02\x03\x04", 4);
    CHECK(copy[3] == 4);
}

TEST_CASE("rtl helpers: byte swaps") {
    CHECK(RtlUshortByteSwap(0x1234) == 0x3412);
    CHECK(RtlUlongByteSwap(0x12345678u) == 0x78563412u);
    CHECK(RtlUlonglongByteSwap(0x0102030405060708ULL) == 0x0807060504030201ULL);
}

TEST_CASE("rtl helpers: bit scans and population count") {
    CHECK(RtlFindLeastSignificantBit(0) == -1);
    CHECK(RtlFindLeastSignificantBit(1) == 0);
    CHECK(RtlFindLeastSignificantBit(0x8000000000000000ULL) == 63);
    CHECK(RtlFindLeastSignificantBit(0x50) == 4);
    CHECK(RtlFindMostSignificantBit(0x50) == 6);
    CHECK(RtlFindMostSignificantBit(0) == -1);
    CHECK(RtlNumberOfSetBitsUlongPtr(0) == 0);
    CHECK(RtlNumberOfSetBitsUlongPtr(0xF0F0) == 8);
    CHECK(RtlNumberOfSetBitsUlongPtr(MAXULONG_PTR) == 64);
}

TEST_CASE("rtl helpers: RtlExtendedIntegerMultiply and RtlExtendedMagicDivide") {
    LARGE_INTEGER value;
    value.QuadPart = 1000000007LL;
    CHECK(RtlExtendedIntegerMultiply(value, -3).QuadPart == -3000000021LL);
    value.QuadPart = 0x4000000000000000LL;
    CHECK(RtlExtendedIntegerMultiply(value, 4).QuadPart == 0);  // wraps as on Windows
    // Division by 10 000 with the magic number Windows uses for 100 ns -> ms.
    LARGE_INTEGER magic;
    magic.QuadPart = static_cast<LONGLONG>(0xD1B71758E219652CULL);
    LARGE_INTEGER dividend;
    dividend.QuadPart = 123456789012LL;
    CHECK(RtlExtendedMagicDivide(dividend, magic, 13).QuadPart == 123456789012LL / 10000);
    dividend.QuadPart = -123456789012LL;
    CHECK(RtlExtendedMagicDivide(dividend, magic, 13).QuadPart == -123456789012LL / 10000);
    dividend.QuadPart = 0;
    CHECK(RtlExtendedMagicDivide(dividend, magic, 13).QuadPart == 0);
}

TEST_CASE(
    "rtl helpers: RtlTimeToTimeFields splits system time and RtlTimeFieldsToTime inverts it") {
    LARGE_INTEGER time;
    time.QuadPart = 0;
    TIME_FIELDS fields;
    RtlTimeToTimeFields(&time, &fields);
    CHECK(fields.Year == 1601);
    CHECK(fields.Month == 1);
    CHECK(fields.Day == 1);
    CHECK(fields.Weekday == 1);  // Monday
    // 2024-02-29 13:45:30.250 UTC: 1709214330 s after 1970 + 11644473600 s from 1601.
    time.QuadPart = (1709214330LL + 11644473600LL) * 10000000LL + 2500000LL + 7;
    RtlTimeToTimeFields(&time, &fields);
    CHECK(fields.Year == 2024);
    CHECK(fields.Month == 2);
    CHECK(fields.Day == 29);
    CHECK(fields.Hour == 13);
    CHECK(fields.Minute == 45);
    CHECK(fields.Second == 30);
    CHECK(fields.Milliseconds == 250);
    CHECK(fields.Weekday == 4);  // Thursday
    LARGE_INTEGER back;
    REQUIRE(RtlTimeFieldsToTime(&fields, &back));
    CHECK(back.QuadPart == time.QuadPart - 7);  // sub-millisecond ticks are not in the fields
    fields.Day = 30;                            // 2024-02-30 does not exist
    back.QuadPart = 5;
    CHECK_FALSE(RtlTimeFieldsToTime(&fields, &back));
    CHECK(back.QuadPart == 5);
    fields.Day = 1;
    fields.Year = 1600;
    CHECK_FALSE(RtlTimeFieldsToTime(&fields, &back));
}

TEST_CASE(
    "counted strings: RtlAnsiStringToUnicodeString allocates or fills, RtlFreeUnicodeString "
    "frees") {
    const std::size_t live = softndk::wdk::pool_live_allocations();
    ANSI_STRING ansi;
    RtlInitAnsiString(&ansi, "caf\xc3\xa9");  // UTF-8
    UNICODE_STRING unicode;
    REQUIRE(RtlAnsiStringToUnicodeString(&unicode, &ansi, TRUE) == STATUS_SUCCESS);
    CHECK(unicode.Length == 4 * sizeof(WCHAR));
    CHECK(unicode.MaximumLength == 5 * sizeof(WCHAR));
    CHECK(std::wstring(unicode.Buffer) == L"caf\u00e9");
    CHECK(softndk::wdk::pool_live_allocations() == live + 1);
    RtlFreeUnicodeString(&unicode);
    CHECK(unicode.Buffer == nullptr);
    CHECK(unicode.Length == 0);
    CHECK(unicode.MaximumLength == 0);
    CHECK(softndk::wdk::pool_live_allocations() == live);

    WCHAR storage[4];
    UNICODE_STRING fixed;
    RtlInitEmptyUnicodeString(&fixed, storage, sizeof(storage));
    CHECK(RtlAnsiStringToUnicodeString(&fixed, &ansi, FALSE) == STATUS_BUFFER_OVERFLOW);
    CHECK(fixed.Length == 0);  // needs room for the terminator too
    RtlInitAnsiString(&ansi, "abc");
    CHECK(RtlAnsiStringToUnicodeString(&fixed, &ansi, FALSE) == STATUS_SUCCESS);
    CHECK(std::wstring(storage) == L"abc");

    ANSI_STRING back;
    REQUIRE(RtlUnicodeStringToAnsiString(&back, &fixed, TRUE) == STATUS_SUCCESS);
    CHECK(std::string(back.Buffer) == "abc");
    RtlFreeAnsiString(&back);
    CHECK(softndk::wdk::pool_live_allocations() == live);
}

TEST_CASE("counted strings: RtlAppendUnicodeStringToString and RtlAppendUnicodeToString") {
    WCHAR storage[6];
    UNICODE_STRING destination;
    RtlInitEmptyUnicodeString(&destination, storage, sizeof(storage));
    UNICODE_STRING source = RTL_CONSTANT_STRING(L"abc");
    CHECK(RtlAppendUnicodeStringToString(&destination, &source) == STATUS_SUCCESS);
    CHECK(destination.Length == 3 * sizeof(WCHAR));
    CHECK(storage[3] == UNICODE_NULL);  // terminated while there is room
    CHECK(RtlAppendUnicodeToString(&destination, L"de") == STATUS_SUCCESS);
    CHECK(std::wstring(storage, 5) == L"abcde");
    CHECK(RtlAppendUnicodeToString(&destination, L"fg") == STATUS_BUFFER_TOO_SMALL);
    CHECK(destination.Length == 5 * sizeof(WCHAR));  // unchanged
    CHECK(RtlAppendUnicodeToString(&destination, nullptr) == STATUS_SUCCESS);
    CHECK(RtlAppendUnicodeToString(&destination, L"f") == STATUS_SUCCESS);
    CHECK(destination.Length == destination.MaximumLength);  // full: no terminator written
    CHECK(std::wstring(storage, 6) == L"abcdef");
}

TEST_CASE("counted strings: RtlCompareUnicodeStrings compares counted arrays") {
    CHECK(RtlCompareUnicodeStrings(L"abc", 3, L"abd", 3, FALSE) < 0);
    CHECK(RtlCompareUnicodeStrings(L"abc", 3, L"ABC", 3, TRUE) == 0);
    CHECK(RtlCompareUnicodeStrings(L"abc", 3, L"ABC", 3, FALSE) > 0);
    CHECK(RtlCompareUnicodeStrings(L"ab", 2, L"abc", 3, FALSE) < 0);
    CHECK(RtlCompareUnicodeStrings(L"abcX", 3, L"abcY", 3, FALSE) == 0);  // only the counts
}

TEST_CASE("counted strings: RtlUnicodeStringToInteger follows Windows' base and sign rules") {
    auto parse = [](const wchar_t *text, ULONG base, ULONG &value) {
        UNICODE_STRING string;
        RtlInitUnicodeString(&string, text);
        return RtlUnicodeStringToInteger(&string, base, &value);
    };
    ULONG value = 1;
    CHECK(parse(L"  123", 0, value) == STATUS_SUCCESS);
    CHECK(value == 123);
    CHECK(parse(L"0x1F", 0, value) == STATUS_SUCCESS);
    CHECK(value == 31);
    CHECK(parse(L"0o17", 0, value) == STATUS_SUCCESS);
    CHECK(value == 15);
    CHECK(parse(L"0b101", 0, value) == STATUS_SUCCESS);
    CHECK(value == 5);
    CHECK(parse(L"-10", 10, value) == STATUS_SUCCESS);
    CHECK(value == 0xFFFFFFF6u);
    CHECK(parse(L"+ff", 16, value) == STATUS_SUCCESS);
    CHECK(value == 255);
    CHECK(parse(L"12z", 10, value) == STATUS_SUCCESS);  // stops at the first non-digit
    CHECK(value == 12);
    CHECK(parse(L"19", 8, value) == STATUS_SUCCESS);
    CHECK(value == 1);
    CHECK(parse(L"", 10, value) == STATUS_SUCCESS);
    CHECK(value == 0);
    value = 77;
    CHECK(parse(L"10", 7, value) == STATUS_INVALID_PARAMETER);
    CHECK(value == 77);
}

TEST_CASE("counted strings: RtlUnicodeToMultiByteN converts whole characters that fit") {
    char out[8];
    ULONG written = 99;
    const wchar_t text[] = L"a\u00e9b";
    CHECK(RtlUnicodeToMultiByteN(out, sizeof(out), &written, text, 3 * sizeof(WCHAR)) ==
          STATUS_SUCCESS);
    CHECK(written == 4);
    CHECK(std::string(out, written) ==
          "a\xc3\xa9"
          "b");
    CHECK(RtlUnicodeToMultiByteN(out, 2, &written, text, 3 * sizeof(WCHAR)) == STATUS_SUCCESS);
    CHECK(written == 1);  // the 2-byte character does not fit in the one byte left
    CHECK(RtlUnicodeToMultiByteN(out, sizeof(out), nullptr, text, 0) == STATUS_SUCCESS);
}

TEST_CASE("rtl helpers: RTL_BITMAP sets, clears, counts and finds runs from a hint") {
    ULONG storage[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
    RTL_BITMAP bitmap;
    RtlInitializeBitMap(&bitmap, storage, 70);
    RtlClearAllBits(&bitmap);
    CHECK(storage[2] == 0xFFFFFFC0u);  // the bits past 70 are not touched
    CHECK(RtlNumberOfClearBits(&bitmap) == 70);
    RtlSetBits(&bitmap, 30, 4);  // crosses a ULONG boundary
    CHECK(storage[0] == 0xC0000000u);
    CHECK(storage[1] == 0x3u);
    CHECK(RtlTestBit(&bitmap, 33));
    CHECK_FALSE(RtlTestBit(&bitmap, 34));
    CHECK(RtlAreBitsSet(&bitmap, 30, 4));
    CHECK_FALSE(RtlAreBitsSet(&bitmap, 29, 2));
    CHECK(RtlAreBitsClear(&bitmap, 34, 36));
    CHECK_FALSE(RtlAreBitsClear(&bitmap, 60, 20));  // runs past the end
    CHECK(RtlNumberOfSetBits(&bitmap) == 4);
    CHECK(RtlFindSetBits(&bitmap, 4, 0) == 30);
    CHECK(RtlFindSetBits(&bitmap, 5, 0) == 0xFFFFFFFFu);
    CHECK(RtlFindClearBits(&bitmap, 30, 0) == 0);
    CHECK(RtlFindClearBits(&bitmap, 31, 0) == 34);
    CHECK(RtlFindClearBits(&bitmap, 10, 65) == 0);  // wraps to the start
    CHECK(RtlFindClearBits(&bitmap, 71, 0) == 0xFFFFFFFFu);
    CHECK(RtlFindClearBitsAndSet(&bitmap, 36, 0) == 34);
    CHECK(RtlNumberOfClearBits(&bitmap) == 30);
    CHECK(RtlFindClearBitsAndSet(&bitmap, 31, 0) == 0xFFFFFFFFu);
    CHECK(RtlFindSetBitsAndClear(&bitmap, 40, 5) == 30);
    CHECK(RtlNumberOfSetBits(&bitmap) == 0);
    RtlSetBit(&bitmap, 69);
    RtlClearBit(&bitmap, 69);
    RtlSetAllBits(&bitmap);
    CHECK(RtlNumberOfSetBits(&bitmap) == 70);
    RtlClearBits(&bitmap, 0, 70);
    CHECK(RtlAreBitsClear(&bitmap, 0, 70));
}
