// NdkBuildLAM / NdkReleaseLAM: adapter logical address mappings (ndkpi-api.md 3.1, 7.11).
//
// The device keeps one logical address space per adapter context (emulator/memory/lam.hpp);
// kBuildLam maps the MDL's pages into it and answers with consecutive logical pages. The
// mapping's device id travels in NDK_LOGICAL_ADDRESS_MAPPING::AdapterContext, which the
// consumer must not modify, so NdkReleaseLAM needs no provider-side table.
#include <cstring>

#include "provider.hpp"

namespace softndk::provider {

namespace {

constexpr ULONG kLamHeaderBytes = FIELD_OFFSET(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray);

}  // namespace

NTSTATUS build_lam(NDK_ADAPTER *pNdkAdapter, MDL *Mdl, SIZE_T Length, NDK_FN_REQUEST_COMPLETION,
                   PVOID, NDK_LOGICAL_ADDRESS_MAPPING *pNdkLAM, ULONG *pLAMSize, ULONG *pFBO) {
    Adapter *a = from_ndk<Adapter>(pNdkAdapter);
    if (a == nullptr || Mdl == nullptr || pLAMSize == nullptr || pFBO == nullptr || Length == 0)
        return STATUS_INVALID_PARAMETER;
    if (Length > a->info().MaxRegistrationSize) return STATUS_INVALID_PARAMETER;
    const auto va = reinterpret_cast<uintptr_t>(MmGetMdlVirtualAddress(Mdl));
    if (va == 0 || !mdl_contiguous(Mdl, Length)) return STATUS_INVALID_PARAMETER;
    const uint64_t first = va & ~uint64_t{PAGE_SIZE - 1};
    const uint64_t end = (uint64_t{va} + Length + PAGE_SIZE - 1) & ~uint64_t{PAGE_SIZE - 1};
    const uint64_t pages = (end - first) / PAGE_SIZE;
    const uint64_t needed = kLamHeaderBytes + pages * sizeof(NDK_LOGICAL_ADDRESS);
    if (needed > ULONG_MAX) return STATUS_INVALID_PARAMETER;
    if (pNdkLAM == nullptr || *pLAMSize < needed) {
        *pLAMSize = static_cast<ULONG>(needed);
        return STATUS_BUFFER_TOO_SMALL;
    }
    hw::BuildLamRequest request{};
    request.address = first;
    request.length = end - first;
    request.memory = hw::MemoryHandle{hw::kNoFd, 0, 0, end - first, first};
    hw::BuildLamResponse response{};
    const NTSTATUS status = a->execute(hw::CommandOpcode::kBuildLam, request, response);
    if (!NT_SUCCESS(status)) {
        log().debug("{}: BuildLAM {:#x}+{}: {:#x}", a->name(), va, Length,
                    static_cast<uint32_t>(status));
        return status;
    }
    if (response.page_count != pages) {
        log().error("{}: BuildLAM: the device mapped {} pages, not {}", a->name(),
                    response.page_count, pages);
        a->execute_object(hw::CommandOpcode::kReleaseLam, response.lam);
        return STATUS_INTERNAL_ERROR;
    }
    pNdkLAM->AdapterContext = reinterpret_cast<PVOID>(uintptr_t{response.lam});
    pNdkLAM->AdapterPageCount = static_cast<ULONG>(pages);
    for (uint64_t i = 0; i < pages; ++i) {
        NDK_LOGICAL_ADDRESS page{};
        page.QuadPart = static_cast<LONGLONG>(response.first_logical_page + i * PAGE_SIZE);
        // Written bytewise: the array is declared [1] and extends past the struct.
        std::memcpy(reinterpret_cast<std::byte *>(pNdkLAM) + kLamHeaderBytes +
                        i * sizeof(NDK_LOGICAL_ADDRESS),
                    &page, sizeof page);
    }
    *pLAMSize = static_cast<ULONG>(needed);
    *pFBO = static_cast<ULONG>(va & (PAGE_SIZE - 1));
    log().debug("{}: BuildLAM {:#x}+{}: lam#{} {} pages", a->name(), va, Length, response.lam,
                pages);
    return STATUS_SUCCESS;
}

void release_lam(NDK_ADAPTER *pNdkAdapter, NDK_LOGICAL_ADDRESS_MAPPING *pNdkLAM) {
    Adapter *a = from_ndk<Adapter>(pNdkAdapter);
    if (a == nullptr || pNdkLAM == nullptr) return;
    const auto id = reinterpret_cast<uintptr_t>(pNdkLAM->AdapterContext);
    const NTSTATUS status =
        id == 0 || id > UINT32_MAX
            ? STATUS_INVALID_PARAMETER
            : a->execute_object(hw::CommandOpcode::kReleaseLam, static_cast<uint32_t>(id));
    // VOID slot: a mapping that was never built (or released twice) can only be logged.
    if (!NT_SUCCESS(status)) log().warn("{}: ReleaseLAM of unknown lam#{}", a->name(), id);
}

}  // namespace softndk::provider
