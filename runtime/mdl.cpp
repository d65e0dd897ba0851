// MDLs over process memory: the "system address" is the process VA and a PFN is VA >> PAGE_SHIFT.
#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr ULONG kMdlTag = 0x206C644D;                       // "Mdl "
constexpr ULONG kLongestMdl = 0xFFFFFFFFu - PAGE_SIZE + 1;  // 4 GB - PAGE_SIZE, as on Windows 7+

// Fills the PFN array with the virtual page numbers of the pages the MDL spans.
void fill_page_numbers(PMDL mdl) {
    const ULONG pages =
        ADDRESS_AND_SIZE_TO_SPAN_PAGES(MmGetMdlVirtualAddress(mdl), MmGetMdlByteCount(mdl));
    const PFN_NUMBER first = reinterpret_cast<ULONG_PTR>(mdl->StartVa) >> PAGE_SHIFT;
    PPFN_NUMBER pfns = MmGetMdlPfnArray(mdl);
    for (ULONG i = 0; i < pages; ++i) {
        pfns[i] = first + i;
    }
}

void set_flags(PMDL mdl, int flags) {
    mdl->MdlFlags = static_cast<CSHORT>(mdl->MdlFlags | flags);
}
void clear_flags(PMDL mdl, int flags) {
    mdl->MdlFlags = static_cast<CSHORT>(mdl->MdlFlags & ~flags);
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

SIZE_T NTAPI MmSizeOfMdl(PVOID Base, SIZE_T Length) {
    return sizeof(MDL) + sizeof(PFN_NUMBER) * ADDRESS_AND_SIZE_TO_SPAN_PAGES(Base, Length);
}

PMDL NTAPI IoAllocateMdl(PVOID VirtualAddress, ULONG Length, BOOLEAN SecondaryBuffer,
                         BOOLEAN ChargeQuota, PIRP Irp) {
    (void)ChargeQuota;
    if (Length > wdk::kLongestMdl) return nullptr;
    auto *mdl = static_cast<PMDL>(
        ExAllocatePool2(POOL_FLAG_NON_PAGED, MmSizeOfMdl(VirtualAddress, Length), wdk::kMdlTag));
    if (mdl == nullptr) return nullptr;
    MmInitializeMdl(mdl, VirtualAddress, Length);
    // As on Windows: the IRP's buffer MDL, or (SecondaryBuffer) appended to its chain.
    // The IRP does not own it: the driver frees it with IoFreeMdl.
    if (Irp != nullptr) {
        if (!SecondaryBuffer || Irp->MdlAddress == nullptr) {
            Irp->MdlAddress = mdl;
        } else {
            PMDL last = Irp->MdlAddress;
            while (last->Next != nullptr)
                last = last->Next;
            last->Next = mdl;
        }
    }
    return mdl;
}

VOID NTAPI IoFreeMdl(PMDL Mdl) {
    if (Mdl == nullptr) wdk::fatal("IoFreeMdl(NULL)");
    if ((Mdl->MdlFlags & MDL_PAGES_LOCKED) != 0) {
        wdk::logger().warn("IoFreeMdl: MDL {} still has its pages locked (MmUnlockPages missing)",
                           static_cast<void *>(Mdl));
    }
    ExFreePoolWithTag(Mdl, wdk::kMdlTag);
}

VOID NTAPI MmBuildMdlForNonPagedPool(PMDL MemoryDescriptorList) {
    wdk::fill_page_numbers(MemoryDescriptorList);
    MemoryDescriptorList->MappedSystemVa = MmGetMdlVirtualAddress(MemoryDescriptorList);
    wdk::set_flags(MemoryDescriptorList, MDL_SOURCE_IS_NONPAGED_POOL);
}

VOID NTAPI MmProbeAndLockPages(PMDL MemoryDescriptorList, KPROCESSOR_MODE AccessMode,
                               LOCK_OPERATION Operation) {
    (void)AccessMode;
    wdk::fill_page_numbers(MemoryDescriptorList);
    wdk::set_flags(MemoryDescriptorList,
                   MDL_PAGES_LOCKED | (Operation != IoReadAccess ? MDL_WRITE_OPERATION : 0));
}

VOID NTAPI MmUnlockPages(PMDL MemoryDescriptorList) {
    if ((MemoryDescriptorList->MdlFlags & MDL_PAGES_LOCKED) == 0) {
        wdk::fatal(fmt::format("MmUnlockPages: the pages of MDL {} are not locked",
                               static_cast<void *>(MemoryDescriptorList)));
    }
    if ((MemoryDescriptorList->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) != 0) {
        MemoryDescriptorList->MappedSystemVa = nullptr;
    }
    wdk::clear_flags(MemoryDescriptorList,
                     MDL_PAGES_LOCKED | MDL_WRITE_OPERATION | MDL_MAPPED_TO_SYSTEM_VA);
}

PVOID NTAPI MmGetSystemAddressForMdlSafe(PMDL Mdl, ULONG Priority) {
    (void)Priority;
    if ((Mdl->MdlFlags & (MDL_MAPPED_TO_SYSTEM_VA | MDL_SOURCE_IS_NONPAGED_POOL)) != 0) {
        return Mdl->MappedSystemVa;
    }
    if ((Mdl->MdlFlags & MDL_PAGES_LOCKED) == 0) {
        wdk::fatal(fmt::format(
            "MmGetSystemAddressForMdlSafe: MDL {} is neither locked (MmProbeAndLockPages) nor "
            "built for non-paged pool (MmBuildMdlForNonPagedPool)",
            static_cast<void *>(Mdl)));
    }
    Mdl->MappedSystemVa = MmGetMdlVirtualAddress(Mdl);
    wdk::set_flags(Mdl, MDL_MAPPED_TO_SYSTEM_VA);
    return Mdl->MappedSystemVa;
}

}  // extern "C"
