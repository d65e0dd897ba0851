// ntstrsafe.h: RtlString{Cch,Cb}{Copy,Cat,Printf,Length}{A,W}[Ex] and RtlUnicodeString* -
// validation, truncation with STATUS_BUFFER_OVERFLOW, termination, Windows printf formats.
#include <ntstrsafe.h>
#include <wdm.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <cwchar>
#include <string>

namespace {

NTSTATUS print_v(char *buffer, size_t cch, const char *format, ...) {
    va_list args;
    va_start(args, format);
    const NTSTATUS status = RtlStringCchVPrintfA(buffer, cch, format, args);
    va_end(args);
    return status;
}

NTSTATUS print_cb_v(char *buffer, size_t cb, const char *format, ...) {
    va_list args;
    va_start(args, format);
    const NTSTATUS status = RtlStringCbVPrintfA(buffer, cb, format, args);
    va_end(args);
    return status;
}

}  // namespace

TEST_CASE("strsafe: RtlStringCchCopyA copies, truncates with STATUS_BUFFER_OVERFLOW, terminates") {
    char buffer[6];
    std::memset(buffer, 'x', sizeof(buffer));
    CHECK(RtlStringCchCopyA(buffer, sizeof(buffer), "hello") == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "hello");
    CHECK(RtlStringCchCopyA(buffer, sizeof(buffer), "hello!") == STATUS_BUFFER_OVERFLOW);
    CHECK(std::string(buffer) == "hello");
    CHECK(RtlStringCchCopyA(buffer, 1, "abc") == STATUS_BUFFER_OVERFLOW);
    CHECK(buffer[0] == '\0');
    CHECK(RtlStringCchCopyA(buffer, sizeof(buffer), "") == STATUS_SUCCESS);
    CHECK(buffer[0] == '\0');
}

TEST_CASE(
    "strsafe: a destination size of 0 or above NTSTRSAFE_MAX_CCH is STATUS_INVALID_PARAMETER") {
    char buffer[4] = "abc";
    CHECK(RtlStringCchCopyA(buffer, 0, "x") == STATUS_INVALID_PARAMETER);
    CHECK(std::string(buffer) == "abc");  // untouched
    CHECK(RtlStringCchCopyA(buffer, size_t{NTSTRSAFE_MAX_CCH} + 1, "x") ==
          STATUS_INVALID_PARAMETER);
    CHECK(buffer[0] == '\0');  // set empty, as the WDK does
    wchar_t wide[4] = L"abc";
    CHECK(RtlStringCchCatW(wide, 0, L"x") == STATUS_INVALID_PARAMETER);
    CHECK(RtlStringCbCopyW(wide, sizeof(wchar_t) - 1, L"x") == STATUS_INVALID_PARAMETER);
    CHECK(std::wstring(wide) == L"abc");
}

TEST_CASE("strsafe: the W and Cb copies count in wide characters and bytes") {
    wchar_t buffer[4];
    CHECK(RtlStringCchCopyW(buffer, 4, L"abc") == STATUS_SUCCESS);
    CHECK(std::wstring(buffer) == L"abc");
    CHECK(RtlStringCbCopyW(buffer, sizeof(buffer), L"abcd") == STATUS_BUFFER_OVERFLOW);
    CHECK(std::wstring(buffer) == L"abc");
    CHECK(RtlStringCbCopyW(buffer, 2 * sizeof(wchar_t), L"xyz") == STATUS_BUFFER_OVERFLOW);
    CHECK(std::wstring(buffer) == L"x");
}

TEST_CASE("strsafe: CopyN copies at most N characters of the source") {
    wchar_t buffer[8];
    CHECK(RtlStringCchCopyNW(buffer, 8, L"abcdef", 3) == STATUS_SUCCESS);
    CHECK(std::wstring(buffer) == L"abc");
    CHECK(RtlStringCchCopyNW(buffer, 8, L"ab", 5) == STATUS_SUCCESS);  // stops at the NUL
    CHECK(std::wstring(buffer) == L"ab");
    CHECK(RtlStringCchCopyNW(buffer, 3, L"abcdef", 5) == STATUS_BUFFER_OVERFLOW);
    CHECK(std::wstring(buffer) == L"ab");
    CHECK(RtlStringCbCopyNW(buffer, sizeof(buffer), L"abcdef", 4 * sizeof(wchar_t)) ==
          STATUS_SUCCESS);
    CHECK(std::wstring(buffer) == L"abcd");
    CHECK(RtlStringCchCopyNW(buffer, 8, L"abc", size_t{NTSTRSAFE_MAX_CCH} + 1) ==
          STATUS_INVALID_PARAMETER);
}

TEST_CASE("strsafe: RtlStringCchCatW appends, truncates, and rejects an unterminated destination") {
    wchar_t buffer[8] = L"abc";
    CHECK(RtlStringCchCatW(buffer, 8, L"de") == STATUS_SUCCESS);
    CHECK(std::wstring(buffer) == L"abcde");
    CHECK(RtlStringCchCatW(buffer, 8, L"fghij") == STATUS_BUFFER_OVERFLOW);
    CHECK(std::wstring(buffer) == L"abcdefg");
    wchar_t full[3] = {L'x', L'y', L'z'};  // no terminator within 3
    CHECK(RtlStringCchCatW(full, 3, L"a") == STATUS_INVALID_PARAMETER);
    CHECK(full[2] == L'z');
}

TEST_CASE("strsafe: printf uses Windows formats and truncates at the buffer") {
    char buffer[64];
    CHECK(RtlStringCchPrintfA(buffer, sizeof(buffer), "%lu %I64d %ws %hs %Iu", 4000000000UL, -5LL,
                              L"wide", "narrow", size_t{99}) == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "4000000000 -5 wide narrow 99");
    UNICODE_STRING name = RTL_CONSTANT_STRING(L"dev");
    CHECK(RtlStringCchPrintfA(buffer, sizeof(buffer), "<%wZ>", &name) == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "<dev>");
    CHECK(RtlStringCchPrintfA(buffer, 5, "%d", 123456) == STATUS_BUFFER_OVERFLOW);
    CHECK(std::string(buffer) == "1234");
    CHECK(print_v(buffer, sizeof(buffer), "%s-%x", "v", 255) == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "v-ff");
    CHECK(print_v(buffer, 0, "%d", 1) == STATUS_INVALID_PARAMETER);
    CHECK(print_cb_v(buffer, 3, "%s", "abc") == STATUS_BUFFER_OVERFLOW);
    CHECK(std::string(buffer) == "ab");
}

TEST_CASE("strsafe: wide printf reads %s and %c as wide, %S and %C as narrow") {
    wchar_t buffer[64];
    CHECK(RtlStringCchPrintfW(buffer, 64, L"%s|%S|%c|%C|%ws|%hs|%d", L"w\u00e9", "n", L'x', 'y',
                              L"ws", "hs", -3) == STATUS_SUCCESS);
    CHECK(std::wstring(buffer) == L"w\u00e9|n|x|y|ws|hs|-3");
    CHECK(RtlStringCbPrintfW(buffer, 4 * sizeof(wchar_t), L"%d", 12345) == STATUS_BUFFER_OVERFLOW);
    CHECK(std::wstring(buffer) == L"123");
    CHECK(RtlStringCchPrintfW(buffer, 64, L"100%%") == STATUS_SUCCESS);
    CHECK(std::wstring(buffer) == L"100%");
}

TEST_CASE("strsafe: RtlStringCchLength finds the terminator within cchMax or fails") {
    size_t length = 99;
    CHECK(RtlStringCchLengthA("abc", 4, &length) == STATUS_SUCCESS);
    CHECK(length == 3);
    CHECK(RtlStringCchLengthA("abc", 3, &length) == STATUS_INVALID_PARAMETER);
    CHECK(length == 0);
    CHECK(RtlStringCchLengthA(nullptr, 3, &length) == STATUS_INVALID_PARAMETER);
    CHECK(RtlStringCchLengthA("abc", 0, nullptr) == STATUS_INVALID_PARAMETER);
    CHECK(RtlStringCchLengthW(L"", 1, &length) == STATUS_SUCCESS);
    CHECK(length == 0);
    CHECK(RtlStringCchLengthW(L"abcd", NTSTRSAFE_MAX_CCH, &length) == STATUS_SUCCESS);
    CHECK(length == 4);
    CHECK(RtlStringCchLengthW(L"abcd", size_t{NTSTRSAFE_MAX_CCH} + 1, &length) ==
          STATUS_INVALID_PARAMETER);
    CHECK(RtlStringCbLengthW(L"abcd", 5 * sizeof(wchar_t), &length) == STATUS_SUCCESS);
    CHECK(length == 4 * sizeof(wchar_t));
}

TEST_CASE("strsafe: Ex flags - end pointer, remaining count, fill and failure behaviour") {
    char buffer[8];
    char *end = nullptr;
    size_t remaining = 0;
    CHECK(RtlStringCchCopyExA(buffer, 8, "abc", &end, &remaining, STRSAFE_FILL_BEHIND_NULL | '#') ==
          STATUS_SUCCESS);
    CHECK(end == buffer + 3);
    CHECK(remaining == 5);
    CHECK(std::memcmp(buffer, "abc\0####", 8) == 0);
    CHECK(RtlStringCchCatExA(buffer, 8, "defgh", nullptr, nullptr, STRSAFE_NO_TRUNCATION) ==
          STATUS_BUFFER_OVERFLOW);
    CHECK(std::string(buffer) == "abc");  // left as it was
    CHECK(RtlStringCchCatExA(buffer, 8, "defgh", nullptr, nullptr, STRSAFE_NULL_ON_FAILURE) ==
          STATUS_BUFFER_OVERFLOW);
    CHECK(buffer[0] == '\0');
    CHECK(RtlStringCchCopyExA(buffer, 8, nullptr, &end, &remaining, STRSAFE_IGNORE_NULLS) ==
          STATUS_SUCCESS);
    CHECK(end == buffer);
    CHECK(remaining == 8);
    CHECK(RtlStringCchCopyExA(buffer, 8, "x", nullptr, nullptr, 0x10000) ==
          STATUS_INVALID_PARAMETER);
    wchar_t wide[4];
    wchar_t *wend = nullptr;
    CHECK(RtlStringCchPrintfExW(wide, 4, &wend, &remaining, STRSAFE_FILL_ON_FAILURE | 0, L"%s",
                                L"toolong") == STATUS_BUFFER_OVERFLOW);
    CHECK(wend == wide);
    CHECK(wide[0] == L'\0');
    CHECK(RtlStringCchPrintfExA(buffer, 8, &end, &remaining, 0, "%d", 42) == STATUS_SUCCESS);
    CHECK(end == buffer + 2);
    CHECK(remaining == 6);
    CHECK(RtlStringCchCopyExW(wide, 4, L"ab", &wend, nullptr, 0) == STATUS_SUCCESS);
    CHECK(RtlStringCchCatExW(wide, 4, L"c", &wend, &remaining, 0) == STATUS_SUCCESS);
    CHECK(std::wstring(wide) == L"abc");
    CHECK(remaining == 1);
}

TEST_CASE(
    "strsafe: RtlUnicodeString functions validate, append and truncate without a terminator") {
    WCHAR storage[6];
    UNICODE_STRING string;
    RtlInitEmptyUnicodeString(&string, storage, sizeof(storage));
    CHECK(RtlUnicodeStringCopyString(&string, L"ab") == STATUS_SUCCESS);
    CHECK(string.Length == 2 * sizeof(WCHAR));
    CHECK(RtlUnicodeStringCatString(&string, L"cd") == STATUS_SUCCESS);
    CHECK(std::wstring(string.Buffer, string.Length / sizeof(WCHAR)) == L"abcd");
    CHECK(RtlUnicodeStringCatString(&string, L"efgh") == STATUS_BUFFER_OVERFLOW);
    CHECK(string.Length == string.MaximumLength);
    CHECK(std::wstring(string.Buffer, 6) == L"abcdef");
    CHECK(RtlUnicodeStringPrintf(&string, L"%d-%s", 7, L"x") == STATUS_SUCCESS);
    CHECK(std::wstring(string.Buffer, string.Length / sizeof(WCHAR)) == L"7-x");
    CHECK(RtlUnicodeStringPrintf(&string, L"%08x", 0xabcu) == STATUS_BUFFER_OVERFLOW);
    CHECK(std::wstring(string.Buffer, string.Length / sizeof(WCHAR)) == L"00000a");
    UNICODE_STRING odd = string;
    odd.Length = 3;  // not a whole number of characters
    CHECK(RtlUnicodeStringCatString(&odd, L"a") == STATUS_INVALID_PARAMETER);
    CHECK(RtlUnicodeStringValidate(&odd) == STATUS_INVALID_PARAMETER);
    UNICODE_STRING broken{0, 8, nullptr};
    CHECK(RtlUnicodeStringPrintf(&broken, L"x") == STATUS_INVALID_PARAMETER);
    UNICODE_STRING source = RTL_CONSTANT_STRING(L"zz");
    CHECK(RtlUnicodeStringCopy(&string, &source) == STATUS_SUCCESS);
    CHECK(RtlUnicodeStringCat(&string, &source) == STATUS_SUCCESS);
    CHECK(std::wstring(string.Buffer, string.Length / sizeof(WCHAR)) == L"zzzz");
    UNICODE_STRING init;
    CHECK(RtlUnicodeStringInit(&init, L"abc") == STATUS_SUCCESS);
    CHECK(init.Length == 3 * sizeof(WCHAR));
    CHECK(init.MaximumLength == 4 * sizeof(WCHAR));
}
