// SoftNdkQueryResources (softndk_resources.h): kQueryResources pages, copied out.
#include <softndk_resources.h>

#include <algorithm>
#include <cstring>

#include "provider.hpp"

using namespace softndk::provider;

static_assert(sizeof(SOFTNDK_RESOURCE) == sizeof(softndk::hw::ResourceEntry));
static_assert(SOFTNDK_RESOURCE_VALUES == softndk::hw::kResourceValues);

extern "C" {

NTSTATUS SoftNdkQueryResources(NDK_ADAPTER *pAdapter, ULONG Kind, ULONG Start,
                               SOFTNDK_RESOURCE *pEntries, ULONG Capacity, ULONG *pCount,
                               ULONG *pNext) {
    Adapter *adapter = from_ndk<Adapter>(pAdapter);
    if (adapter == nullptr || pCount == nullptr || pNext == nullptr ||
        (pEntries == nullptr && Capacity != 0))
        return STATUS_INVALID_PARAMETER;
    *pCount = 0;
    *pNext = 0;
    softndk::hw::ResourcesRequest rq{};
    rq.kind = Kind;
    rq.start = Start;
    softndk::hw::ResourcesResponse rs{};
    const NTSTATUS s = adapter->execute(softndk::hw::CommandOpcode::kQueryResources, rq, rs);
    if (s != STATUS_SUCCESS) return s;
    // A smaller buffer than the page: the rest comes with the next call.
    const ULONG count = std::min<ULONG>({rs.count, softndk::hw::kResourcesPerPage, Capacity});
    if (count != 0) std::memcpy(pEntries, rs.entries, count * sizeof(SOFTNDK_RESOURCE));
    *pCount = count;
    *pNext = count < rs.count ? rs.entries[count].number : rs.next;
    return STATUS_SUCCESS;
}

}  // extern "C"
