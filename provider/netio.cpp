// netio.cpp - the interface-identifier conversions of netioapi.h, answering for
// the virtual adapters the user declared (SOFTNDK_CONFIG, or the default rnic0).
//
// Mapping, chosen so that every process reading the same configuration (embedded
// consumers, daemon clients) agrees on it:
//   NET_IFINDEX   the adapter's if_index
//   NET_LUID      IfType = IF_TYPE_ETHERNET_CSMACD (6: RoCE and iWARP both run on
//                 Ethernet), NetLuidIndex = if_index (24 bits), Reserved = 0
//   alias         the adapter's alias, as WCHARs (wchar_t here: UTF-32)
// Results are the kernel flavour's NTSTATUS: STATUS_INVALID_PARAMETER for NULL
// arguments and (as Windows documents for ConvertInterfaceAliasToLuid) an alias
// no interface has; STATUS_NOT_FOUND for an index or LUID no interface has;
// STATUS_BUFFER_TOO_SMALL when the alias and its terminator do not fit.
#include <ndkpi.h>
#include <netioapi.h>

#include <cstdlib>
#include <cwchar>
#include <optional>
#include <string>
#include <vector>

#include "device/config.hpp"
#include "log.hpp"

namespace {

constexpr ULONG64 kIfTypeEthernet = 6;  // IF_TYPE_ETHERNET_CSMACD (ipifcons.h)

std::vector<softndk::emu::AdapterConfig> declared_adapters() {
    const char *path = std::getenv("SOFTNDK_CONFIG");
    if (path == nullptr || *path == '\0') return softndk::emu::default_adapter_config();
    std::vector<softndk::emu::AdapterConfig> adapters;
    std::string error;
    if (!softndk::emu::load_adapter_config(path, adapters, error)) {
        softndk::provider::log().error("SOFTNDK_CONFIG {}: {}", path, error);
        return {};
    }
    return adapters;
}

NET_LUID luid_of(const softndk::emu::AdapterConfig &a) {
    NET_LUID luid{};
    luid.Info.IfType = kIfTypeEthernet;
    luid.Info.NetLuidIndex = a.if_index & 0xFFFFFF;
    return luid;
}

std::optional<softndk::emu::AdapterConfig> find_by_luid(const NET_LUID &luid) {
    for (const auto &a : declared_adapters()) {
        if (luid_of(a).Value == luid.Value) return a;
    }
    return std::nullopt;
}

// UTF-8 -> UTF-32 (WCHAR is wchar_t, 4 bytes, on Linux); a malformed byte
// becomes U+FFFD.
std::wstring widen(const std::string &text) {
    std::wstring out;
    for (size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        const int extra = b < 0x80         ? 0
                          : (b >> 5) == 6  ? 1
                          : (b >> 4) == 14 ? 2
                          : (b >> 3) == 30 ? 3
                                           : -1;
        if (extra < 0 || i + static_cast<size_t>(extra) >= text.size()) {
            out.push_back(L'\uFFFD');
            ++i;
            continue;
        }
        char32_t c = extra == 0 ? b : b & (0x3F >> extra);
        bool ok = true;
        for (int k = 1; k <= extra; ++k) {
            const auto t = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
            ok = ok && (t >> 6) == 2;
            c = (c << 6) | (t & 0x3F);
        }
        out.push_back(ok ? static_cast<wchar_t>(c) : L'\uFFFD');
        i += ok ? static_cast<size_t>(extra) + 1 : 1;
    }
    return out;
}

}  // namespace

extern "C" {

NETIOAPI_API ConvertInterfaceIndexToLuid(NET_IFINDEX InterfaceIndex, PNET_LUID InterfaceLuid) {
    if (InterfaceLuid == nullptr) return STATUS_INVALID_PARAMETER;
    InterfaceLuid->Value = NET_IFLUID_UNSPECIFIED;
    for (const auto &a : declared_adapters()) {
        if (a.if_index == InterfaceIndex) {
            *InterfaceLuid = luid_of(a);
            return STATUS_SUCCESS;
        }
    }
    return STATUS_NOT_FOUND;
}

NETIOAPI_API ConvertInterfaceLuidToIndex(CONST NET_LUID *InterfaceLuid,
                                         PNET_IFINDEX InterfaceIndex) {
    if (InterfaceLuid == nullptr || InterfaceIndex == nullptr) return STATUS_INVALID_PARAMETER;
    const auto a = find_by_luid(*InterfaceLuid);
    *InterfaceIndex = a ? a->if_index : 0;  // NET_IFINDEX_UNSPECIFIED
    return a ? STATUS_SUCCESS : STATUS_NOT_FOUND;
}

NETIOAPI_API ConvertInterfaceLuidToAlias(CONST NET_LUID *InterfaceLuid, PWSTR InterfaceAlias,
                                         SIZE_T Length) {
    if (InterfaceLuid == nullptr || InterfaceAlias == nullptr) return STATUS_INVALID_PARAMETER;
    const auto a = find_by_luid(*InterfaceLuid);
    if (!a) return STATUS_NOT_FOUND;
    const std::wstring alias = widen(a->alias);
    if (Length < alias.size() + 1) return STATUS_BUFFER_TOO_SMALL;
    std::wmemcpy(InterfaceAlias, alias.c_str(), alias.size() + 1);
    return STATUS_SUCCESS;
}

NETIOAPI_API ConvertInterfaceAliasToLuid(CONST WCHAR *InterfaceAlias, PNET_LUID InterfaceLuid) {
    if (InterfaceAlias == nullptr || InterfaceLuid == nullptr) return STATUS_INVALID_PARAMETER;
    InterfaceLuid->Value = NET_IFLUID_UNSPECIFIED;
    for (const auto &a : declared_adapters()) {
        if (widen(a.alias) == InterfaceAlias) {
            *InterfaceLuid = luid_of(a);
            return STATUS_SUCCESS;
        }
    }
    return STATUS_INVALID_PARAMETER;
}

}  // extern "C"
