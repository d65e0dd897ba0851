// MDLs: IoAllocateMdl geometry, PFN arrays, system addresses, lock bookkeeping, limits.
#include <wdm.h>

#include <cstdint>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "wdk_internal.hpp"

namespace {

constexpr ULONG kTag = 0x7446644D;  // "MdFt"

// A page-aligned pool buffer of `pages` pages.
struct PageBuffer {
    explicit PageBuffer(size_t pages)
        : base(static_cast<unsigned char *>(
              ExAllocatePoolWithTag(NonPagedPoolNx, pages * PAGE_SIZE, kTag))) {}
    ~PageBuffer() { ExFreePoolWithTag(base, kTag); }
    PageBuffer(const PageBuffer &) = delete;
    PageBuffer &operator=(const PageBuffer &) = delete;
    unsigned char *base;
};

}  // namespace

TEST_CASE("mdl: an unaligned buffer spanning 3 pages") {
    const size_t live_before = softndk::wdk::pool_live_allocations();
    {
        PageBuffer buffer(4);
        REQUIRE(buffer.base != nullptr);
        unsigned char *va = buffer.base + 100;
        const ULONG length = 2 * PAGE_SIZE + 10;  // bytes 100 .. 8301: pages 0, 1, 2

        CHECK(MmSizeOfMdl(va, length) == sizeof(MDL) + 3 * sizeof(PFN_NUMBER));
        PMDL mdl = IoAllocateMdl(va, length, FALSE, FALSE, nullptr);
        REQUIRE(mdl != nullptr);
        CHECK(mdl->Next == nullptr);
        CHECK(mdl->StartVa == buffer.base);
        CHECK(MmGetMdlByteOffset(mdl) == 100);
        CHECK(MmGetMdlByteCount(mdl) == length);
        CHECK(mdl->Size == static_cast<CSHORT>(sizeof(MDL) + 3 * sizeof(PFN_NUMBER)));
        CHECK(mdl->MdlFlags == 0);
        CHECK(MmGetMdlVirtualAddress(mdl) == va);
        CHECK(ADDRESS_AND_SIZE_TO_SPAN_PAGES(MmGetMdlVirtualAddress(mdl), length) == 3);

        MmBuildMdlForNonPagedPool(mdl);
        CHECK((mdl->MdlFlags & MDL_SOURCE_IS_NONPAGED_POOL) != 0);
        CHECK(mdl->MappedSystemVa == va);
        const PFN_NUMBER first = reinterpret_cast<ULONG_PTR>(buffer.base) >> PAGE_SHIFT;
        PPFN_NUMBER pfns = MmGetMdlPfnArray(mdl);
        CHECK(pfns[0] == first);
        CHECK(pfns[1] == first + 1);
        CHECK(pfns[2] == first + 2);
        CHECK(MmGetSystemAddressForMdlSafe(mdl, NormalPagePriority | MdlMappingNoExecute) == va);
        IoFreeMdl(mdl);
    }
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
}

TEST_CASE("mdl: two bytes across a page boundary span two pages") {
    PageBuffer buffer(2);
    unsigned char *va = buffer.base + PAGE_SIZE - 1;
    PMDL mdl = IoAllocateMdl(va, 2, FALSE, FALSE, nullptr);
    REQUIRE(mdl != nullptr);
    CHECK(MmGetMdlByteOffset(mdl) == PAGE_SIZE - 1);
    CHECK(mdl->Size == static_cast<CSHORT>(sizeof(MDL) + 2 * sizeof(PFN_NUMBER)));
    MmBuildMdlForNonPagedPool(mdl);
    CHECK(MmGetMdlPfnArray(mdl)[1] == MmGetMdlPfnArray(mdl)[0] + 1);
    IoFreeMdl(mdl);
}

TEST_CASE("mdl: MmInitializeMdl on caller storage matches IoAllocateMdl") {
    PageBuffer buffer(2);
    struct {
        MDL mdl;
        PFN_NUMBER pfns[2];
    } storage;
    MmInitializeMdl(&storage.mdl, buffer.base + 8, PAGE_SIZE);
    CHECK(storage.mdl.StartVa == buffer.base);
    CHECK(storage.mdl.ByteOffset == 8);
    CHECK(storage.mdl.ByteCount == PAGE_SIZE);
    CHECK(storage.mdl.Size == static_cast<CSHORT>(MmSizeOfMdl(buffer.base + 8, PAGE_SIZE)));
    MmBuildMdlForNonPagedPool(&storage.mdl);
    CHECK(storage.pfns[1] == storage.pfns[0] + 1);
}

TEST_CASE("mdl: MmProbeAndLockPages and MmUnlockPages keep the lock bookkeeping") {
    PageBuffer buffer(1);
    PMDL mdl = IoAllocateMdl(buffer.base + 16, 64, FALSE, FALSE, nullptr);
    REQUIRE(mdl != nullptr);
    MmProbeAndLockPages(mdl, KernelMode, IoWriteAccess);
    CHECK((mdl->MdlFlags & MDL_PAGES_LOCKED) != 0);
    CHECK((mdl->MdlFlags & MDL_WRITE_OPERATION) != 0);
    CHECK(MmGetMdlPfnArray(mdl)[0] == reinterpret_cast<ULONG_PTR>(buffer.base) >> PAGE_SHIFT);
    CHECK(MmGetSystemAddressForMdlSafe(mdl, HighPagePriority) == buffer.base + 16);
    CHECK((mdl->MdlFlags & MDL_MAPPED_TO_SYSTEM_VA) != 0);
    MmUnlockPages(mdl);
    CHECK((mdl->MdlFlags & (MDL_PAGES_LOCKED | MDL_WRITE_OPERATION | MDL_MAPPED_TO_SYSTEM_VA)) ==
          0);

    MmProbeAndLockPages(mdl, KernelMode, IoReadAccess);
    CHECK((mdl->MdlFlags & MDL_PAGES_LOCKED) != 0);
    CHECK((mdl->MdlFlags & MDL_WRITE_OPERATION) == 0);
    MmUnlockPages(mdl);
    IoFreeMdl(mdl);
}

TEST_CASE("mdl: mapping an MDL that is neither locked nor built aborts") {
    PageBuffer buffer(1);
    PMDL mdl = IoAllocateMdl(buffer.base, 64, FALSE, FALSE, nullptr);
    REQUIRE(mdl != nullptr);
    auto child = softndk::test::run_in_child([&] { MmGetSystemAddressForMdlSafe(mdl, 0); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("neither locked"));

    child = softndk::test::run_in_child([&] { MmUnlockPages(mdl); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("are not locked"));
    IoFreeMdl(mdl);
}

TEST_CASE("mdl: length limits and the CSHORT Size of very large MDLs") {
    auto *va = reinterpret_cast<PVOID>(uintptr_t{0x100000000000});           // never touched
    CHECK(IoAllocateMdl(va, 0xFFFFF001, FALSE, FALSE, nullptr) == nullptr);  // > 4 GB - PAGE_SIZE

    PMDL mdl = IoAllocateMdl(va, 0xFFFFF000, FALSE, FALSE, nullptr);
    REQUIRE(mdl != nullptr);
    const SIZE_T pages = 0xFFFFF;
    CHECK(MmSizeOfMdl(va, 0xFFFFF000) == sizeof(MDL) + pages * sizeof(PFN_NUMBER));
    // Size wraps exactly like the WDK's MmInitializeMdl cast.
    CHECK(mdl->Size == static_cast<CSHORT>(sizeof(MDL) + pages * sizeof(PFN_NUMBER)));
    CHECK(MmGetMdlByteCount(mdl) == 0xFFFFF000);
    IoFreeMdl(mdl);
}

TEST_CASE("mdl: IoAllocateMdl with an IRP sets MdlAddress, a secondary buffer chains") {
    PageBuffer buffer(2);
    PIRP irp = IoAllocateIrp(1, FALSE);
    REQUIRE(irp != nullptr);
    PMDL first = IoAllocateMdl(buffer.base, PAGE_SIZE, FALSE, FALSE, irp);
    REQUIRE(first != nullptr);
    CHECK(irp->MdlAddress == first);
    PMDL second = IoAllocateMdl(buffer.base + PAGE_SIZE, 100, TRUE, FALSE, irp);
    REQUIRE(second != nullptr);
    CHECK(irp->MdlAddress == first);  // unchanged
    CHECK(first->Next == second);
    PMDL third = IoAllocateMdl(buffer.base, 10, TRUE, FALSE, irp);
    CHECK(second->Next == third);
    // The IRP does not own them.
    irp->MdlAddress = nullptr;
    IoFreeIrp(irp);
    IoFreeMdl(third);
    IoFreeMdl(second);
    IoFreeMdl(first);
}
