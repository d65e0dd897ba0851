// ip2string.h: IPv4 / IPv6 address <-> text, A and W forms, with Windows' semantics.
#include <arpa/inet.h>
#include <mstcpip.h>

#include <cstring>
#include <string>

#include <catch2/catch.hpp>

namespace {

in_addr v4(const char *text) {
    in_addr a{};
    REQUIRE(inet_pton(AF_INET, text, &a) == 1);
    return a;
}

in6_addr v6(const char *text) {
    in6_addr a{};
    REQUIRE(inet_pton(AF_INET6, text, &a) == 1);
    return a;
}

std::string v4_text(const in_addr &a) {
    char buffer[INET_ADDRSTRLEN];
    return inet_ntop(AF_INET, &a, buffer, sizeof(buffer));
}

std::wstring widen(const std::string &s) {
    return std::wstring(s.begin(), s.end());
}

}  // namespace

TEST_CASE("ip2string: IPv4 strict parsing accepts exactly four dotted decimal parts") {
    in_addr address{};
    USHORT port = 1;
    CHECK(RtlIpv4StringToAddressExA("192.168.0.1", TRUE, &address, &port) == STATUS_SUCCESS);
    CHECK(v4_text(address) == "192.168.0.1");
    CHECK(port == 0);
    CHECK(RtlIpv4StringToAddressExA("0.0.0.0", TRUE, &address, &port) == STATUS_SUCCESS);
    CHECK(RtlIpv4StringToAddressExA("255.255.255.255", TRUE, &address, &port) == STATUS_SUCCESS);
    CHECK(address.s_addr == 0xFFFFFFFF);
    for (const char *bad : {"", "1.2.3", "10.1", "1.2.3.4.5", "1.2.3.256", "1.2.3.4.", ".1.2.3.4",
                            "1..2.3", "01.2.3.4", "0x1.2.3.4", "1.2.3.-4", " 1.2.3.4", "1.2.3.4 ",
                            "a.b.c.d", "1.2.3.4:", "1.2.3.4:0", "1.2.3.4:65536", "1.2.3.4:x"}) {
        INFO("'" << bad << "'");
        CHECK(RtlIpv4StringToAddressExA(bad, TRUE, &address, &port) == STATUS_INVALID_PARAMETER);
    }
}

TEST_CASE("ip2string: IPv4 non-strict parsing accepts 1-4 parts in decimal, octal and hex") {
    in_addr address{};
    USHORT port = 0;
    const struct {
        const char *text;
        const char *address;
    } cases[] = {
        {"10.1", "10.0.0.1"},
        {"10.1.2", "10.1.0.2"},
        {"3232235521", "192.168.0.1"},
        {"0x7f.1", "127.0.0.1"},
        {"0X7F.0.0.01", "127.0.0.1"},
        {"010.0.0.1", "8.0.0.1"},
        {"1.0xffff", "1.0.255.255"},
        {"0xffffffff", "255.255.255.255"},
        {"0", "0.0.0.0"},
        {"1.2.3.4", "1.2.3.4"},
    };
    for (const auto &c : cases) {
        INFO(c.text);
        CHECK(RtlIpv4StringToAddressExA(c.text, FALSE, &address, &port) == STATUS_SUCCESS);
        CHECK(v4_text(address) == c.address);
    }
    for (const char *bad : {"0x", "08.1.1.1", "1.256.1", "1.0x1000000", "4294967296", "1.2.3.4.5",
                            "0x100000000", "1.2.3.4x"}) {
        INFO("'" << bad << "'");
        CHECK(RtlIpv4StringToAddressExA(bad, FALSE, &address, &port) == STATUS_INVALID_PARAMETER);
    }
}

TEST_CASE("ip2string: IPv4 ports are in network byte order, 1 to 65535") {
    in_addr address{};
    USHORT port = 0;
    CHECK(RtlIpv4StringToAddressExA("1.2.3.4:80", TRUE, &address, &port) == STATUS_SUCCESS);
    CHECK(port == htons(80));
    CHECK(RtlIpv4StringToAddressExA("1.2.3.4:65535", TRUE, &address, &port) == STATUS_SUCCESS);
    CHECK(port == 0xFFFF);
    CHECK(RtlIpv4StringToAddressExW(L"10.1:443", FALSE, &address, &port) == STATUS_SUCCESS);
    CHECK(v4_text(address) == "10.0.0.1");
    CHECK(port == htons(443));
}

TEST_CASE("ip2string: RtlIpv4StringToAddress stops at the first character after the address") {
    in_addr address{};
    PCSTR terminator = nullptr;
    const char *text = "1.2.3.4:80";
    CHECK(RtlIpv4StringToAddressA(text, TRUE, &terminator, &address) == STATUS_SUCCESS);
    CHECK(terminator == text + 7);
    CHECK(v4_text(address) == "1.2.3.4");
    const char *trailing = "1.2.3.4abc";
    CHECK(RtlIpv4StringToAddressA(trailing, TRUE, &terminator, &address) == STATUS_SUCCESS);
    CHECK(terminator == trailing + 7);
    const char *whole = "10.1";
    CHECK(RtlIpv4StringToAddressA(whole, FALSE, &terminator, &address) == STATUS_SUCCESS);
    CHECK(*terminator == '\0');
    CHECK(RtlIpv4StringToAddressA("1.2.3", TRUE, &terminator, &address) ==
          STATUS_INVALID_PARAMETER);

    const wchar_t *wide = L"192.168.1.254/24";
    PCWSTR wide_terminator = nullptr;
    CHECK(RtlIpv4StringToAddressW(wide, TRUE, &wide_terminator, &address) == STATUS_SUCCESS);
    CHECK(wide_terminator == wide + 13);
    CHECK(v4_text(address) == "192.168.1.254");
    CHECK(RtlIpv4StringToAddressW(L"1.2.3.\u00e9", TRUE, &wide_terminator, &address) ==
          STATUS_INVALID_PARAMETER);
}

TEST_CASE("ip2string: IPv4 to text, plain and Ex with a port and length negotiation") {
    const in_addr address = v4("192.168.100.200");
    char text[INET_ADDRSTRLEN];
    std::memset(text, 'x', sizeof(text));
    char *end = RtlIpv4AddressToStringA(&address, text);
    CHECK(std::string(text) == "192.168.100.200");
    CHECK(end == text + 15);
    CHECK(*end == '\0');
    wchar_t wide[INET_ADDRSTRLEN];
    CHECK(RtlIpv4AddressToStringW(&address, wide) == wide + 15);
    CHECK(std::wstring(wide) == L"192.168.100.200");

    char buffer[32];
    ULONG length = sizeof(buffer);
    CHECK(RtlIpv4AddressToStringExA(&address, htons(8080), buffer, &length) == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "192.168.100.200:8080");
    CHECK(length == 21);  // characters, with the terminator

    length = 20;  // one short
    std::memset(buffer, 'x', sizeof(buffer));
    CHECK(RtlIpv4AddressToStringExA(&address, htons(8080), buffer, &length) ==
          STATUS_INVALID_PARAMETER);
    CHECK(length == 21);
    CHECK(buffer[0] == 'x');  // nothing written
    length = 0;
    CHECK(RtlIpv4AddressToStringExA(&address, 0, nullptr, &length) == STATUS_INVALID_PARAMETER);
    CHECK(length == 16);

    wchar_t wbuffer[32];
    length = 32;
    CHECK(RtlIpv4AddressToStringExW(&address, 0, wbuffer, &length) == STATUS_SUCCESS);
    CHECK(std::wstring(wbuffer) == L"192.168.100.200");
    CHECK(length == 16);
}

TEST_CASE("ip2string: IPv6 text forms, including Windows' embedded IPv4 forms") {
    const struct {
        const char *in;
        const char *out;
    } cases[] = {
        {"::", "::"},
        {"::1", "::1"},
        {"::2", "::2"},
        {"1::", "1::"},
        {"fe80::1", "fe80::1"},
        {"FE80:0:0:0:0200:5EFF:FE00:5301", "fe80::200:5eff:fe00:5301"},
        {"1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"},  // a single zero group stays
        {"1:0:0:2:0:0:0:3", "1:0:0:2::3"},       // the longest run
        {"1:0:0:2:3:0:0:4", "1::2:3:0:0:4"},     // the first of equal runs
        {"2001:db8::ff00:42:8329", "2001:db8::ff00:42:8329"},
        {"::ffff:1.2.3.4", "::ffff:1.2.3.4"},
        {"::1.2.3.4", "::1.2.3.4"},
        {"::0.0.1.2", "::102"},  // 7th group 0: not shown as IPv4
        {"::ffff:0:1.2.3.4", "::ffff:0:1.2.3.4"},
        {"fe80::5efe:10.0.0.1", "fe80::5efe:10.0.0.1"},
        {"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"},
    };
    for (const auto &c : cases) {
        INFO(c.in);
        in6_addr address{};
        PCSTR terminator = nullptr;
        REQUIRE(RtlIpv6StringToAddressA(c.in, &terminator, &address) == STATUS_SUCCESS);
        CHECK(*terminator == '\0');
        char text[INET6_ADDRSTRLEN];
        char *end = RtlIpv6AddressToStringA(&address, text);
        CHECK(std::string(text) == c.out);
        CHECK(end == text + std::strlen(c.out));
        wchar_t wide[INET6_ADDRSTRLEN];
        RtlIpv6AddressToStringW(&address, wide);
        CHECK(std::wstring(wide) == widen(c.out));
    }
}

TEST_CASE("ip2string: RtlIpv6StringToAddress parses a prefix and rejects malformed addresses") {
    in6_addr address{};
    PCSTR terminator = nullptr;
    const char *scoped = "fe80::1%4";
    CHECK(RtlIpv6StringToAddressA(scoped, &terminator, &address) == STATUS_SUCCESS);
    CHECK(terminator == scoped + 7);
    const wchar_t *wide = L"::1]:80";
    PCWSTR wide_terminator = nullptr;
    CHECK(RtlIpv6StringToAddressW(wide, &wide_terminator, &address) == STATUS_SUCCESS);
    CHECK(wide_terminator == wide + 3);
    for (const char *bad : {"", ":", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3",
                            "12345::", "::ffff:1.2.3", "::ffff:1.2.3.256", "g::1", "1:::2"}) {
        INFO("'" << bad << "'");
        CHECK(RtlIpv6StringToAddressA(bad, &terminator, &address) == STATUS_INVALID_PARAMETER);
    }
}

TEST_CASE("ip2string: IPv6 Ex parsing takes [address%scope]:port and nothing else") {
    in6_addr address{};
    ULONG scope = 99;
    USHORT port = 99;
    CHECK(RtlIpv6StringToAddressExA("fe80::1", &address, &scope, &port) == STATUS_SUCCESS);
    CHECK(scope == 0);
    CHECK(port == 0);
    const in6_addr fe80_1 = v6("fe80::1");
    CHECK(std::memcmp(&address, &fe80_1, sizeof(address)) == 0);
    CHECK(RtlIpv6StringToAddressExA("fe80::1%12", &address, &scope, &port) == STATUS_SUCCESS);
    CHECK(scope == 12);
    CHECK(RtlIpv6StringToAddressExA("[::1]", &address, &scope, &port) == STATUS_SUCCESS);
    CHECK(port == 0);
    CHECK(RtlIpv6StringToAddressExA("[fe80::2%3]:443", &address, &scope, &port) == STATUS_SUCCESS);
    CHECK(scope == 3);
    CHECK(port == htons(443));
    const in6_addr fe80_2 = v6("fe80::2");
    CHECK(std::memcmp(&address, &fe80_2, sizeof(address)) == 0);
    CHECK(RtlIpv6StringToAddressExW(L"[::ffff:1.2.3.4]:65535", &address, &scope, &port) ==
          STATUS_SUCCESS);
    CHECK(port == 0xFFFF);
    for (const char *bad : {"[::1", "::1]", "[::1]:", "[::1]:0", "[::1]:65536", "[::1]80",
                            "fe80::1%", "fe80::1%x", "[::1] ", "::1%4294967296", "[1.2.3.4]:80"}) {
        INFO("'" << bad << "'");
        CHECK(RtlIpv6StringToAddressExA(bad, &address, &scope, &port) == STATUS_INVALID_PARAMETER);
    }
}

TEST_CASE("ip2string: IPv6 Ex to text adds %scope and [..]:port, negotiating the length") {
    const in6_addr address = v6("fe80::1");
    char buffer[64];
    ULONG length = sizeof(buffer);
    CHECK(RtlIpv6AddressToStringExA(&address, 0, 0, buffer, &length) == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "fe80::1");
    CHECK(length == 8);
    length = sizeof(buffer);
    CHECK(RtlIpv6AddressToStringExA(&address, 5, 0, buffer, &length) == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "fe80::1%5");
    length = sizeof(buffer);
    CHECK(RtlIpv6AddressToStringExA(&address, 5, htons(80), buffer, &length) == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "[fe80::1%5]:80");
    CHECK(length == 15);
    length = sizeof(buffer);
    CHECK(RtlIpv6AddressToStringExA(&address, 0, htons(80), buffer, &length) == STATUS_SUCCESS);
    CHECK(std::string(buffer) == "[fe80::1]:80");

    length = 14;
    CHECK(RtlIpv6AddressToStringExA(&address, 5, htons(80), buffer, &length) ==
          STATUS_INVALID_PARAMETER);
    CHECK(length == 15);
    wchar_t wide[64];
    length = 64;
    CHECK(RtlIpv6AddressToStringExW(&address, 5, htons(80), wide, &length) == STATUS_SUCCESS);
    CHECK(std::wstring(wide) == L"[fe80::1%5]:80");

    // The longest possible text fits INET6_ADDRSTRLEN (46) with the terminator.
    const in6_addr longest = v6("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255");
    char text[INET6_ADDRSTRLEN];
    CHECK(RtlIpv6AddressToStringA(&longest, text) - text < INET6_ADDRSTRLEN);
}

TEST_CASE("ip2string: the unsuffixed names are the A forms without UNICODE") {
    in_addr address{};
    USHORT port = 0;
    CHECK(RtlIpv4StringToAddressEx("1.2.3.4:5", TRUE, &address, &port) == STATUS_SUCCESS);
    CHECK(port == htons(5));
}
