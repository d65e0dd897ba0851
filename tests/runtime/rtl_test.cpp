// Rtl memory and counted-string helpers.
#include <wdm.h>

#include <cstring>
#include <string>

#include <catch2/catch.hpp>

TEST_CASE("rtl memory: RtlCompareMemory counts the equal leading bytes") {
    const unsigned char a[] = {1, 2, 3, 4, 5};
    const unsigned char b[] = {1, 2, 9, 4, 5};
    CHECK(RtlCompareMemory(a, b, 0) == 0);
    CHECK(RtlCompareMemory(a, b, 2) == 2);
    CHECK(RtlCompareMemory(a, b, 5) == 2);  // not a memcmp ordering
    CHECK(RtlCompareMemory(a, a, 5) == 5);
    CHECK(RtlCompareMemory(b, a, 1) == 1);
    const unsigned char c[] = {0, 2, 3, 4, 5};
    CHECK(RtlCompareMemory(a, c, 5) == 0);
}

TEST_CASE("rtl memory: zero, fill, copy, move (overlapping) and equal") {
    unsigned char buffer[16];
    RtlFillMemory(buffer, sizeof(buffer), 0xAB);
    CHECK(buffer[0] == 0xAB);
    CHECK(buffer[15] == 0xAB);
    RtlZeroMemory(buffer + 4, 8);
    CHECK(buffer[3] == 0xAB);
    CHECK(buffer[4] == 0);
    CHECK(buffer[11] == 0);
    CHECK(buffer[12] == 0xAB);

    unsigned char text[] = "abcdefgh";
    RtlMoveMemory(text + 2, text, 5);  // overlapping: memmove semantics
    CHECK(std::string(reinterpret_cast<char *>(text)) == "ababcdeh");
    unsigned char copy[9] = {};
    RtlCopyMemory(copy, text, sizeof(copy));
    CHECK(RtlEqualMemory(copy, text, sizeof(copy)));
    copy[8] = 1;
    CHECK_FALSE(RtlEqualMemory(copy, text, sizeof(copy)));
    CHECK(RtlEqualMemory(copy, text, 0));

    unsigned char secret[8];
    RtlFillMemory(secret, sizeof(secret), 0x55);
    CHECK(RtlSecureZeroMemory(secret, sizeof(secret)) == secret);
    CHECK(RtlCompareMemory(secret, "\0\0\0\0\0\0\0\0", 8) == 8);
}

TEST_CASE("rtl strings: RtlInitUnicodeString / RtlInitAnsiString count bytes, not characters") {
    UNICODE_STRING u;
    RtlInitUnicodeString(&u, L"abc");
    CHECK(u.Length == 3 * sizeof(WCHAR));
    CHECK(u.MaximumLength == 4 * sizeof(WCHAR));
    CHECK(u.Buffer[0] == L'a');

    RtlInitUnicodeString(&u, nullptr);
    CHECK(u.Length == 0);
    CHECK(u.MaximumLength == 0);
    CHECK(u.Buffer == nullptr);

    RtlInitUnicodeString(&u, L"");
    CHECK(u.Length == 0);
    CHECK(u.MaximumLength == sizeof(WCHAR));

    ANSI_STRING a;
    RtlInitAnsiString(&a, "hello");
    CHECK(a.Length == 5);
    CHECK(a.MaximumLength == 6);
    RtlInitAnsiString(&a, nullptr);
    CHECK(a.Length == 0);
    CHECK(a.Buffer == nullptr);
    STRING s;
    RtlInitString(&s, "xy");
    CHECK(s.Length == 2);
}

TEST_CASE("rtl strings: a source too long for a USHORT length is truncated") {
    const std::wstring long_text(20000, L'x');  // 80000 bytes
    UNICODE_STRING u;
    RtlInitUnicodeString(&u, long_text.c_str());
    CHECK(u.Length == 65528);  // the largest multiple of 4 below 65535, minus the terminator
    CHECK(u.MaximumLength == 65532);
    const std::string long_ansi(70000, 'x');
    ANSI_STRING a;
    RtlInitAnsiString(&a, long_ansi.c_str());
    CHECK(a.Length == 65534);
    CHECK(a.MaximumLength == 65535);
}

TEST_CASE("rtl strings: RTL_CONSTANT_STRING and DECLARE_CONST_UNICODE_STRING") {
    static const UNICODE_STRING constant = RTL_CONSTANT_STRING(L"Device");
    CHECK(constant.Length == 6 * sizeof(WCHAR));
    CHECK(constant.MaximumLength == 7 * sizeof(WCHAR));
    ANSI_STRING ansi = RTL_CONSTANT_STRING("abc");
    CHECK(ansi.Length == 3);
    CHECK(ansi.MaximumLength == 4);
    DECLARE_CONST_UNICODE_STRING(name, L"\\Device\\Foo");
    CHECK(name.Length == 11 * sizeof(WCHAR));
    CHECK(name.Buffer == name_buffer);
    DECLARE_UNICODE_STRING_SIZE(room, 8);
    CHECK(room.Length == 0);
    CHECK(room.MaximumLength == 8 * sizeof(WCHAR));
    CHECK(room.Buffer == room_buffer);
}

TEST_CASE("rtl strings: RtlCopyUnicodeString truncates to the destination and terminates") {
    UNICODE_STRING source;
    RtlInitUnicodeString(&source, L"abcdef");
    WCHAR buffer[8];
    std::wmemset(buffer, L'#', 8);
    UNICODE_STRING destination{0, 4 * sizeof(WCHAR), buffer};
    RtlCopyUnicodeString(&destination, &source);
    CHECK(destination.Length == 4 * sizeof(WCHAR));  // truncated: no room for a terminator
    CHECK(std::wstring(buffer, 4) == L"abcd");
    CHECK(buffer[4] == L'#');

    destination.MaximumLength = sizeof(buffer);
    RtlCopyUnicodeString(&destination, &source);
    CHECK(destination.Length == 6 * sizeof(WCHAR));
    CHECK(std::wstring(buffer) == L"abcdef");  // terminated

    RtlCopyUnicodeString(&destination, nullptr);
    CHECK(destination.Length == 0);
}

TEST_CASE("rtl strings: RtlEqualUnicodeString and RtlCompareUnicodeString, with and without case") {
    UNICODE_STRING a;
    UNICODE_STRING b;
    UNICODE_STRING shorter;
    RtlInitUnicodeString(&a, L"Hello\u00e9");
    RtlInitUnicodeString(&b, L"HELLO\u00c9");
    RtlInitUnicodeString(&shorter, L"hell");
    CHECK_FALSE(RtlEqualUnicodeString(&a, &b, FALSE));
    CHECK(RtlEqualUnicodeString(&a, &b, TRUE));  // beyond ASCII too
    CHECK(RtlEqualUnicodeString(&a, &a, FALSE));
    CHECK_FALSE(RtlEqualUnicodeString(&a, &shorter, TRUE));
    CHECK(RtlCompareUnicodeString(&a, &b, TRUE) == 0);
    CHECK(RtlCompareUnicodeString(&a, &b, FALSE) > 0);  // 'e' > 'E'
    CHECK(RtlCompareUnicodeString(&b, &a, FALSE) < 0);
    CHECK(RtlCompareUnicodeString(&shorter, &a, TRUE) < 0);  // a prefix sorts first
    CHECK(RtlCompareUnicodeString(&a, &shorter, TRUE) > 0);
    UNICODE_STRING empty{0, 0, nullptr};
    CHECK(RtlEqualUnicodeString(&empty, &empty, TRUE));
    CHECK(RtlCompareUnicodeString(&empty, &a, FALSE) < 0);
    CHECK(RtlUpcaseUnicodeChar(L'z') == L'Z');
    CHECK(RtlUpcaseUnicodeChar(L'\u03b1') == L'\u0391');  // Greek alpha
    CHECK(RtlUpcaseUnicodeChar(L'1') == L'1');
}
