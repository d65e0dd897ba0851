// Pages described by MDLs: MmAllocatePagesForMdl[Ex] / MmFreePagesFromMdl over anonymous
// mappings, and MmMapLockedPagesSpecifyCache / MmUnmapLockedPages over mdl.cpp's conventions
// (the "system address" is the process VA, a PFN is VA >> PAGE_SHIFT). Contracts are in
// softndk_wdm_exec.h.
#include <sys/mman.h>

#include <mutex>
#include <unordered_map>

#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr ULONG kPagesMdlTag = 0x6C644D50;  // "PMdl"
constexpr ULONG kKnownPageFlags =
    MM_DONT_ZERO_ALLOCATION | MM_ALLOCATE_FROM_LOCAL_NODE_ONLY | MM_ALLOCATE_FULLY_REQUIRED |
    MM_ALLOCATE_NO_WAIT | MM_ALLOCATE_PREFER_CONTIGUOUS | MM_ALLOCATE_REQUIRE_CONTIGUOUS_CHUNKS |
    MM_ALLOCATE_FAST_LARGE_PAGES | MM_ALLOCATE_TRIM_IF_NECESSARY | MM_ALLOCATE_AND_HOT_REMOVE;

// The MDLs MmAllocatePagesForMdl[Ex] made, and the bytes their pages span.
struct PageMdls {
    std::mutex lock;
    std::unordered_map<PMDL, SIZE_T> sizes;
};

PageMdls &page_mdls() {
    static PageMdls *const instance = new PageMdls;  // leaked: used during process exit
    return *instance;
}

void check_irql_at_most(KIRQL highest, const char *caller, const void *object) {
    const KIRQL irql = KeGetCurrentIrql();
    if (irql > highest) {
        bugcheck(IRQL_NOT_LESS_OR_EQUAL, reinterpret_cast<ULONG_PTR>(object), irql, highest, 0,
                 fmt::format("{} at IRQL {} (the limit is {})", caller, irql, highest));
    }
}

PMDL allocate_pages(SIZE_T total_bytes, const char *caller) {
    check_irql_at_most(DISPATCH_LEVEL, caller, nullptr);
    // An MDL's ByteCount is a ULONG; Windows gives at most 4 GB - PAGE_SIZE per MDL.
    constexpr SIZE_T kLongest = 0xFFFFFFFFu - PAGE_SIZE + 1;
    if (total_bytes == 0 || total_bytes > kLongest) return nullptr;
    const SIZE_T bytes = ROUND_TO_PAGES(total_bytes);
    void *pages = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) return nullptr;
    auto *mdl = static_cast<PMDL>(
        ExAllocatePoolWithTag(NonPagedPoolNx, MmSizeOfMdl(pages, bytes), kPagesMdlTag));
    if (mdl == nullptr) {
        munmap(pages, bytes);
        return nullptr;
    }
    MmInitializeMdl(mdl, pages, bytes);
    mdl->MdlFlags = MDL_PAGES_LOCKED | MDL_ALLOCATED_FIXED_SIZE;
    mdl->Process = nullptr;
    mdl->MappedSystemVa = nullptr;
    const PFN_NUMBER first = reinterpret_cast<ULONG_PTR>(pages) >> PAGE_SHIFT;
    PPFN_NUMBER pfns = MmGetMdlPfnArray(mdl);
    for (SIZE_T i = 0; i < bytes / PAGE_SIZE; ++i) {
        pfns[i] = first + i;
    }
    std::lock_guard guard(page_mdls().lock);
    page_mdls().sizes[mdl] = bytes;
    return mdl;
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

PMDL NTAPI MmAllocatePagesForMdl(PHYSICAL_ADDRESS LowAddress, PHYSICAL_ADDRESS HighAddress,
                                 PHYSICAL_ADDRESS SkipBytes, SIZE_T TotalBytes) {
    (void)LowAddress;
    (void)HighAddress;
    (void)SkipBytes;
    return wdk::allocate_pages(TotalBytes, "MmAllocatePagesForMdl");
}

PMDL NTAPI MmAllocatePagesForMdlEx(PHYSICAL_ADDRESS LowAddress, PHYSICAL_ADDRESS HighAddress,
                                   PHYSICAL_ADDRESS SkipBytes, SIZE_T TotalBytes,
                                   MEMORY_CACHING_TYPE CacheType, ULONG Flags) {
    (void)LowAddress;
    (void)HighAddress;
    (void)SkipBytes;
    (void)CacheType;
    if ((Flags & ~wdk::kKnownPageFlags) != 0) return nullptr;
    // Anonymous mappings are zero-filled whether or not MM_DONT_ZERO_ALLOCATION asks.
    return wdk::allocate_pages(TotalBytes, "MmAllocatePagesForMdlEx");
}

VOID NTAPI MmFreePagesFromMdl(PMDL MemoryDescriptorList) {
    wdk::check_irql_at_most(DISPATCH_LEVEL, "MmFreePagesFromMdl", MemoryDescriptorList);
    SIZE_T bytes = 0;
    {
        std::lock_guard guard(wdk::page_mdls().lock);
        auto found = wdk::page_mdls().sizes.find(MemoryDescriptorList);
        if (found == wdk::page_mdls().sizes.end()) {
            wdk::fatal(
                fmt::format("MmFreePagesFromMdl: MDL {} does not describe pages from "
                            "MmAllocatePagesForMdl[Ex] (or they were freed already)",
                            static_cast<void *>(MemoryDescriptorList)));
        }
        if ((MemoryDescriptorList->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) != 0) {
            wdk::fatal(
                fmt::format("MmFreePagesFromMdl: MDL {} is still mapped "
                            "(MmUnmapLockedPages first)",
                            static_cast<void *>(MemoryDescriptorList)));
        }
        bytes = found->second;
        wdk::page_mdls().sizes.erase(found);
    }
    munmap(MemoryDescriptorList->StartVa, bytes);
    MemoryDescriptorList->MdlFlags =
        static_cast<CSHORT>(MemoryDescriptorList->MdlFlags & ~MDL_PAGES_LOCKED);
    MemoryDescriptorList->ByteCount = 0;
}

PVOID NTAPI MmMapLockedPagesSpecifyCache(PMDL MemoryDescriptorList, KPROCESSOR_MODE AccessMode,
                                         MEMORY_CACHING_TYPE CacheType, PVOID RequestedAddress,
                                         ULONG BugCheckOnFailure, ULONG Priority) {
    (void)AccessMode;  // one address space: user and kernel mappings are the same address
    (void)CacheType;
    (void)Priority;
    PMDL mdl = MemoryDescriptorList;
    wdk::check_irql_at_most(DISPATCH_LEVEL, "MmMapLockedPagesSpecifyCache", mdl);
    if ((mdl->MdlFlags & (MDL_PAGES_LOCKED | MDL_SOURCE_IS_NONPAGED_POOL | MDL_PARTIAL)) == 0) {
        wdk::fatal(
            fmt::format("MmMapLockedPagesSpecifyCache: MDL {} is neither locked nor built "
                        "for non-paged pool",
                        static_cast<void *>(mdl)));
    }
    if ((mdl->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) != 0) {
        wdk::fatal(fmt::format("MmMapLockedPagesSpecifyCache: MDL {} is already mapped at {}",
                               static_cast<void *>(mdl), mdl->MappedSystemVa));
    }
    if (RequestedAddress != nullptr) {
        if (BugCheckOnFailure) {
            wdk::fatal(
                fmt::format("MmMapLockedPagesSpecifyCache: cannot map MDL {} at the "
                            "requested address {}",
                            static_cast<void *>(mdl), RequestedAddress));
        }
        return nullptr;
    }
    mdl->MappedSystemVa = MmGetMdlVirtualAddress(mdl);
    CSHORT flags = static_cast<CSHORT>(mdl->MdlFlags | MDL_MAPPED_TO_SYSTEM_VA);
    if ((mdl->MdlFlags & MDL_PARTIAL) != 0) {
        flags = static_cast<CSHORT>(flags | MDL_PARTIAL_HAS_BEEN_MAPPED);
    }
    mdl->MdlFlags = flags;
    return mdl->MappedSystemVa;
}

VOID NTAPI MmUnmapLockedPages(PVOID BaseAddress, PMDL MemoryDescriptorList) {
    PMDL mdl = MemoryDescriptorList;
    wdk::check_irql_at_most(DISPATCH_LEVEL, "MmUnmapLockedPages", mdl);
    if ((mdl->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) == 0 || mdl->MappedSystemVa != BaseAddress) {
        wdk::fatal(fmt::format("MmUnmapLockedPages: {} is not the mapping of MDL {}", BaseAddress,
                               static_cast<void *>(mdl)));
    }
    mdl->MappedSystemVa = nullptr;
    mdl->MdlFlags = static_cast<CSHORT>(mdl->MdlFlags &
                                        ~(MDL_MAPPED_TO_SYSTEM_VA | MDL_PARTIAL_HAS_BEEN_MAPPED));
}

}  // extern "C"
