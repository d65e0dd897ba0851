/*
 * softndk_adapters.h - the virtual adapters this process can open.
 *
 * NDKPI opens an adapter by interface index (the IfIndex of WskOpenNdkAdapter)
 * but says nothing about which interfaces exist, what they are called or which
 * addresses they own. A Windows driver learns that from the IP helper API
 * (GetIfTable2, ConvertInterfaceAliasToLuid, GetUnicastIpAddressTable), which
 * the SoftNDK runtime does not implement yet; the tools and examples read the
 * same facts here instead, from where WskOpenNdkAdapter opens adapters:
 *  - embedded (SOFTNDK_MODE unset or embedded): the embedded device registry, the
 *    adapters of SOFTNDK_CONFIG, or the default one (if_index 1, alias rnic0,
 *    127.0.0.1 and ::1, profile roce-default) and their profiles. Reading the list
 *    creates the embedded devices, exactly as the first WskOpenNdkAdapter of the
 *    process would;
 *  - daemon (SOFTNDK_MODE=daemon): the daemon's adapters, asked over its socket
 *    (SOFTNDK_SOCKET, emulator/daemon/protocol.hpp kDaemonAdapter) on every call,
 *    with the profiles the daemon loaded; SOFTNDK_CONFIG plays no part, and no
 *    device is created in this process. No daemon there is an error.
 *
 * C11 and C++20. Thread-safe.
 */
#ifndef SOFTNDK_ADAPTERS_H
#define SOFTNDK_ADAPTERS_H

#include <stddef.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOFTNDK_ADAPTER_MAX_ADDRESSES 8
#define SOFTNDK_ADAPTER_ALIAS_SIZE    64
#define SOFTNDK_ADAPTER_PROFILE_SIZE  32
/* Enough for any address softndk_address_string() prints (INET6_ADDRSTRLEN). */
#define SOFTNDK_ADDRESS_STRING_SIZE              46
#define SOFTNDK_ADAPTER_PROFILE_SOURCE_SIZE      256
#define SOFTNDK_ADAPTER_PROFILE_DESCRIPTION_SIZE 128
#define SOFTNDK_ADAPTER_MAX_COSTS                48
#define SOFTNDK_COST_NAME_SIZE                   32

/* One [timing] key of the adapter's profile: a time::CostModel field (its unit is in
 * its name: _ns, _ps_per_byte, _bytes, _mbps, _entries). */
struct softndk_cost {
    char name[SOFTNDK_COST_NAME_SIZE];
    unsigned int value;
};

struct softndk_adapter {
    unsigned int if_index; /* what WskOpenNdkAdapter takes */
    char alias[SOFTNDK_ADAPTER_ALIAS_SIZE];
    char profile[SOFTNDK_ADAPTER_PROFILE_SIZE];
    /* "built-in", or the path of the profile file the adapter was configured with
     * (truncated to the buffer). */
    char profile_source[SOFTNDK_ADAPTER_PROFILE_SOURCE_SIZE];
    char profile_description[SOFTNDK_ADAPTER_PROFILE_DESCRIPTION_SIZE];
    /* The profile's technology: "roce" or "iwarp" (its [profile] technology). */
    char technology[8];
    /* Every [timing] key of the profile, in the order of time::CostModel; all 0 for
     * the ideal profile (the timing model is off). */
    unsigned int cost_count;
    struct softndk_cost costs[SOFTNDK_ADAPTER_MAX_COSTS];
    unsigned int path_mtu; /* bytes */
    /* sockaddr_in (IPv4) or sockaddr_in6, port 0, in configuration order.
     * Addresses beyond SOFTNDK_ADAPTER_MAX_ADDRESSES are not listed. */
    unsigned int address_count;
    struct sockaddr_storage addresses[SOFTNDK_ADAPTER_MAX_ADDRESSES];
};

/* Fills out[0..capacity) with the configured adapters in configuration order
 * and returns how many there are (which may exceed capacity). Returns -1 with
 * a message in error[] when the configuration cannot be loaded (a bad
 * SOFTNDK_CONFIG, for instance) or, in daemon mode, the daemon cannot be asked.
 * error may be NULL. */
int softndk_adapters_list(struct softndk_adapter *out, int capacity, char *error,
                          size_t error_size);

/* Finds an adapter by alias or, failing that, by decimal interface index;
 * NULL or "" names the first adapter. Returns 0 and fills *out, or -1 with a
 * message in error[] (unknown name, no adapter, bad configuration). */
int softndk_adapter_find(const char *name, struct softndk_adapter *out, char *error,
                         size_t error_size);

/* The first address of `adapter` of family AF_INET or AF_INET6 (AF_UNSPEC:
 * IPv4 preferred, else IPv6), or NULL if it has none. */
const struct sockaddr_storage *softndk_adapter_address(const struct softndk_adapter *adapter,
                                                       int family);

/* "127.0.0.1" / "::1" (no port), or "?" for another family. Returns buffer. */
const char *softndk_address_string(const struct sockaddr *address, char *buffer,
                                   size_t buffer_size);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_ADAPTERS_H */
