/*
 * ip2string.h - SoftNDK user-mode stand-in for the WDK's IP address <-> string
 * conversions (RtlIpv4/RtlIpv6 ...ToString / StringTo..., A and W forms),
 * implemented by the SoftNDK WDK runtime (runtime/rtl.cpp).
 *
 * Semantics are Windows':
 *   - Ports are in NETWORK byte order, in and out (htons(80) for port 80); a port
 *     of 0 means "no port". Lengths are in characters and include the terminator.
 *   - Malformed input gives STATUS_INVALID_PARAMETER.
 *   - RtlIpv4StringToAddress[Ex] with Strict = TRUE accepts only four dotted
 *     DECIMAL parts ("192.168.0.1"); with Strict = FALSE also the classic
 *     inet_aton forms: 1 to 4 parts, each decimal, octal (leading 0) or hex
 *     (0x), the last part filling the remaining bytes ("10.1" is 10.0.0.1,
 *     "0x7f.1" is 127.0.0.1, "3232235521" is 192.168.0.1).
 *   - RtlIpv{4,6}StringToAddress (no Ex) parse the longest address at the start
 *     of the string and point *Terminator at the first character after it; text
 *     after the address is not an error ("1.2.3.4:80" parses, *Terminator -> ':').
 *   - The Ex forms require the whole string to be the address: "a.b.c.d" or
 *     "a.b.c.d:port" for IPv4; "v6", "v6%scope", "[v6]", "[v6%scope]" or
 *     "[v6%scope]:port" for IPv6 (scope and port decimal; port 1-65535; a port
 *     needs the brackets). Absent parts give a ScopeId / Port of 0.
 *   - IPv6 text follows RFC 4291; output is lower-case hex with the longest run
 *     (of at least two) zero groups shortened to "::" (RFC 5952), and with the
 *     last 32 bits in dotted decimal for Windows' IPv4 forms: ::a.b.c.d
 *     (compatible, unless the 7th group is 0), ::ffff:a.b.c.d (mapped),
 *     ::ffff:0:a.b.c.d (translated) and x:x:x:x:0:5efe:a.b.c.d (ISATAP).
 *   - Address...ToString (no Ex) writes into a buffer of at least
 *     INET_ADDRSTRLEN / INET6_ADDRSTRLEN characters and returns a pointer to the
 *     terminating NUL. The Ex forms take the buffer length in *AddressStringLength;
 *     when it is too small they store the length needed (with the terminator) and
 *     return STATUS_INVALID_PARAMETER, else they write the string, store its length
 *     with the terminator and return STATUS_SUCCESS.
 * W forms take and produce WCHAR text (wchar_t here, see ntdef.h); characters
 * outside ASCII end the address like any other non-address character.
 *
 * Without UNICODE defined, the unsuffixed names (RtlIpv4StringToAddress, ...) are
 * the A forms, as in the WDK; with UNICODE, the W forms.
 */
#ifndef _IP2STRING_
#define _IP2STRING_

#include <ntdef.h>
#include <ntstatus.h>
#include <ws2def.h>
#include <ws2ipdef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef INET_ADDRSTRLEN
#define INET_ADDRSTRLEN 16
#endif
#ifndef INET6_ADDRSTRLEN
#define INET6_ADDRSTRLEN 46
#endif

PSTR NTAPI RtlIpv4AddressToStringA(_In_ const struct in_addr *Addr, _Out_writes_(16) PSTR S);
PWSTR NTAPI RtlIpv4AddressToStringW(_In_ const struct in_addr *Addr, _Out_writes_(16) PWSTR S);
NTSTATUS NTAPI RtlIpv4AddressToStringExA(_In_ const struct in_addr *Address, _In_ USHORT Port,
                                         _Out_writes_to_(*AddressStringLength, *AddressStringLength)
                                             PSTR AddressString,
                                         _Inout_ PULONG AddressStringLength);
NTSTATUS NTAPI RtlIpv4AddressToStringExW(_In_ const struct in_addr *Address, _In_ USHORT Port,
                                         _Out_writes_to_(*AddressStringLength, *AddressStringLength)
                                             PWSTR AddressString,
                                         _Inout_ PULONG AddressStringLength);

PSTR NTAPI RtlIpv6AddressToStringA(_In_ const struct in6_addr *Addr, _Out_writes_(46) PSTR S);
PWSTR NTAPI RtlIpv6AddressToStringW(_In_ const struct in6_addr *Addr, _Out_writes_(46) PWSTR S);
NTSTATUS NTAPI RtlIpv6AddressToStringExA(_In_ const struct in6_addr *Address, _In_ ULONG ScopeId,
                                         _In_ USHORT Port,
                                         _Out_writes_to_(*AddressStringLength, *AddressStringLength)
                                             PSTR AddressString,
                                         _Inout_ PULONG AddressStringLength);
NTSTATUS NTAPI RtlIpv6AddressToStringExW(_In_ const struct in6_addr *Address, _In_ ULONG ScopeId,
                                         _In_ USHORT Port,
                                         _Out_writes_to_(*AddressStringLength, *AddressStringLength)
                                             PWSTR AddressString,
                                         _Inout_ PULONG AddressStringLength);

NTSTATUS NTAPI RtlIpv4StringToAddressA(_In_ PCSTR S, _In_ BOOLEAN Strict, _Out_ PCSTR *Terminator,
                                       _Out_ struct in_addr *Addr);
NTSTATUS NTAPI RtlIpv4StringToAddressW(_In_ PCWSTR S, _In_ BOOLEAN Strict, _Out_ PCWSTR *Terminator,
                                       _Out_ struct in_addr *Addr);
NTSTATUS NTAPI RtlIpv4StringToAddressExA(_In_ PCSTR AddressString, _In_ BOOLEAN Strict,
                                         _Out_ struct in_addr *Address, _Out_ PUSHORT Port);
NTSTATUS NTAPI RtlIpv4StringToAddressExW(_In_ PCWSTR AddressString, _In_ BOOLEAN Strict,
                                         _Out_ struct in_addr *Address, _Out_ PUSHORT Port);

NTSTATUS NTAPI RtlIpv6StringToAddressA(_In_ PCSTR S, _Out_ PCSTR *Terminator,
                                       _Out_ struct in6_addr *Addr);
NTSTATUS NTAPI RtlIpv6StringToAddressW(_In_ PCWSTR S, _Out_ PCWSTR *Terminator,
                                       _Out_ struct in6_addr *Addr);
NTSTATUS NTAPI RtlIpv6StringToAddressExA(_In_ PCSTR AddressString, _Out_ struct in6_addr *Address,
                                         _Out_ PULONG ScopeId, _Out_ PUSHORT Port);
NTSTATUS NTAPI RtlIpv6StringToAddressExW(_In_ PCWSTR AddressString, _Out_ struct in6_addr *Address,
                                         _Out_ PULONG ScopeId, _Out_ PUSHORT Port);

#ifdef UNICODE
#define RtlIpv4AddressToString   RtlIpv4AddressToStringW
#define RtlIpv4AddressToStringEx RtlIpv4AddressToStringExW
#define RtlIpv6AddressToString   RtlIpv6AddressToStringW
#define RtlIpv6AddressToStringEx RtlIpv6AddressToStringExW
#define RtlIpv4StringToAddress   RtlIpv4StringToAddressW
#define RtlIpv4StringToAddressEx RtlIpv4StringToAddressExW
#define RtlIpv6StringToAddress   RtlIpv6StringToAddressW
#define RtlIpv6StringToAddressEx RtlIpv6StringToAddressExW
#else
#define RtlIpv4AddressToString   RtlIpv4AddressToStringA
#define RtlIpv4AddressToStringEx RtlIpv4AddressToStringExA
#define RtlIpv6AddressToString   RtlIpv6AddressToStringA
#define RtlIpv6AddressToStringEx RtlIpv6AddressToStringExA
#define RtlIpv4StringToAddress   RtlIpv4StringToAddressA
#define RtlIpv4StringToAddressEx RtlIpv4StringToAddressExA
#define RtlIpv6StringToAddress   RtlIpv6StringToAddressA
#define RtlIpv6StringToAddressEx RtlIpv6StringToAddressExA
#endif

#ifdef __cplusplus
}
#endif

#endif /* _IP2STRING_ */
