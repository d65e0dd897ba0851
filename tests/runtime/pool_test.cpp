// Pool: alignment by size, zeroing, flag validation, failure modes, tag checks on free.
#include <wdm.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "death.hpp"
#include "wdk_internal.hpp"

namespace {

constexpr ULONG kTag = 0x74736554;    // "Test"
constexpr ULONG kOther = 0x72687440;  // "@thr"

bool aligned(const void *p, size_t alignment) {
    return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

}  // namespace

TEST_CASE("pool: blocks below PAGE_SIZE are 16-byte aligned, PAGE_SIZE and above page-aligned") {
    const size_t live_before = softndk::wdk::pool_live_allocations();
    for (const SIZE_T size :
         {SIZE_T{1}, SIZE_T{15}, SIZE_T{16}, SIZE_T{17}, SIZE_T{100}, SIZE_T{PAGE_SIZE - 1}}) {
        INFO("size " << size);
        void *a = ExAllocatePoolWithTag(NonPagedPoolNx, size, kTag);
        void *b = ExAllocatePool2(POOL_FLAG_PAGED, size, kTag);
        REQUIRE(a != nullptr);
        REQUIRE(b != nullptr);
        CHECK(aligned(a, 16));
        CHECK(aligned(b, 16));
        std::memset(a, 0x5A, size);  // the whole block is usable (ASan checks the bounds)
        std::memset(b, 0x5A, size);
        ExFreePoolWithTag(a, kTag);
        ExFreePool(b);
    }
    for (const SIZE_T size :
         {SIZE_T{PAGE_SIZE}, SIZE_T{PAGE_SIZE + 1}, SIZE_T{3 * PAGE_SIZE + 5}, SIZE_T{1} << 20}) {
        INFO("size " << size);
        void *a = ExAllocatePoolWithTag(NonPagedPool, size, kTag);
        void *b = ExAllocatePool2(POOL_FLAG_NON_PAGED, size, kTag);
        REQUIRE(a != nullptr);
        REQUIRE(b != nullptr);
        CHECK(aligned(a, PAGE_SIZE));
        CHECK(aligned(b, PAGE_SIZE));
        std::memset(a, 0x5A, size);
        std::memset(b, 0x5A, size);
        ExFreePoolWithTag(a, kTag);
        ExFreePoolWithTag(b, kTag);
    }
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
}

TEST_CASE("pool: cache-aligned pool types and POOL_FLAG_CACHE_ALIGNED give 64-byte alignment") {
    for (int i = 0; i < 8; ++i) {
        void *a = ExAllocatePoolWithTag(NonPagedPoolCacheAligned, 40, kTag);
        void *b = ExAllocatePoolWithTag(NonPagedPoolNxCacheAligned, 40, kTag);
        void *c = ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_CACHE_ALIGNED, 40, kTag);
        CHECK(aligned(a, 64));
        CHECK(aligned(b, 64));
        CHECK(aligned(c, 64));
        ExFreePool(a);
        ExFreePool(b);
        ExFreePool(c);
    }
}

TEST_CASE("pool: a zero-byte allocation is a distinct, freeable block") {
    void *a = ExAllocatePoolWithTag(NonPagedPoolNx, 0, kTag);
    void *b = ExAllocatePool2(POOL_FLAG_NON_PAGED, 0, kTag);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a != b);
    ExFreePoolWithTag(a, kTag);
    ExFreePoolWithTag(b, kTag);
}

TEST_CASE("pool: ExAllocatePool2 and ExAllocatePoolZero zero the block") {
    for (const SIZE_T size : {SIZE_T{24}, SIZE_T{1000}, SIZE_T{2 * PAGE_SIZE + 3}}) {
        INFO("size " << size);
        // Dirty some heap first so that zeroed memory is not just fresh pages.
        std::vector<void *> dirty;
        for (int i = 0; i < 4; ++i) {
            void *p = ExAllocatePoolWithTag(NonPagedPoolNx, size, kTag);
            std::memset(p, 0xCC, size);
            dirty.push_back(p);
        }
        for (void *p : dirty) {
            ExFreePool(p);
        }
        for (int i = 0; i < 4; ++i) {
            auto *a =
                static_cast<unsigned char *>(ExAllocatePool2(POOL_FLAG_NON_PAGED, size, kTag));
            auto *b = static_cast<unsigned char *>(ExAllocatePoolZero(NonPagedPoolNx, size, kTag));
            REQUIRE(a != nullptr);
            REQUIRE(b != nullptr);
            std::vector<unsigned char> zeros(size, 0);
            CHECK(std::memcmp(a, zeros.data(), size) == 0);
            CHECK(std::memcmp(b, zeros.data(), size) == 0);
            ExFreePool(a);
            ExFreePool(b);
        }
    }
}

TEST_CASE("pool: ExAllocatePool2 rejects invalid flags with NULL") {
    CHECK(ExAllocatePool2(0, 16, kTag) == nullptr);  // no pool kind
    CHECK(ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_PAGED, 16, kTag) == nullptr);
    CHECK(ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_RESERVED1, 16, kTag) == nullptr);
    CHECK(ExAllocatePool2(POOL_FLAG_NON_PAGED | 0x1000, 16, kTag) == nullptr);  // unknown
    // Optional flags the runtime does not know are allowed.
    void *p = ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_SPECIAL_POOL, 16, kTag);
    CHECK(p != nullptr);
    ExFreePool(p);
}

TEST_CASE("pool: requests no pool can satisfy return NULL") {
    CHECK(ExAllocatePoolWithTag(NonPagedPoolNx, SIZE_MAX, kTag) == nullptr);
    CHECK(ExAllocatePoolWithTag(PagedPool, SIZE_MAX - PAGE_SIZE, kTag) == nullptr);
    CHECK(ExAllocatePool2(POOL_FLAG_NON_PAGED, SIZE_T{1} << 41, kTag) == nullptr);
}

TEST_CASE("pool: POOL_FLAG_RAISE_ON_FAILURE turns NULL into a bug check") {
    const auto child = softndk::test::run_in_child([] {
        ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_RAISE_ON_FAILURE, SIZE_T{1} << 41, kTag);
    });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("KMODE_EXCEPTION_NOT_HANDLED"));
    CHECK_THAT(child.err, Catch::Contains("'Test'"));
}

TEST_CASE("pool: ExFreePoolWithTag checks the tag (0 and the protected bit aside)") {
    void *p = ExAllocatePoolWithTag(NonPagedPoolNx, 64, kTag);
    void *q = ExAllocatePoolWithTag(NonPagedPoolNx, 64, kTag | 0x80000000);
    void *r = ExAllocatePoolWithTag(NonPagedPoolNx, 64, kTag);
    ExFreePoolWithTag(p, 0);
    ExFreePoolWithTag(q, kTag);
    ExFreePoolWithTag(r, kTag | 0x80000000);

    void *wrong = ExAllocatePoolWithTag(NonPagedPoolNx, 64, kTag);
    const auto child = softndk::test::run_in_child([&] { ExFreePoolWithTag(wrong, kOther); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("BAD_POOL_CALLER"));
    CHECK_THAT(child.err, Catch::Contains("tag '@thr' does not match the allocation's tag 'Test'"));
    ExFreePoolWithTag(wrong, kTag);
}

TEST_CASE("pool: ExFreePool2 frees ExAllocatePool2/3 blocks and checks tag and parameters") {
    void *p = ExAllocatePool2(POOL_FLAG_NON_PAGED, 64, kTag);
    REQUIRE(p != nullptr);
    ExFreePool2(p, kTag, nullptr, 0);
    POOL_EXTENDED_PARAMETER priority{};
    priority.Type = PoolExtendedParameterPriority;
    priority.Priority = HighPoolPriority;
    void *q = ExAllocatePool3(POOL_FLAG_NON_PAGED, 64, kTag, &priority, 1);
    REQUIRE(q != nullptr);
    ExFreePool2(q, kTag, &priority, 1);

    void *wrong = ExAllocatePool2(POOL_FLAG_NON_PAGED, 64, kTag);
    auto child = softndk::test::run_in_child([&] { ExFreePool2(wrong, kOther, nullptr, 0); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("BAD_POOL_CALLER"));
    child = softndk::test::run_in_child([&] { ExFreePool2(wrong, kTag, nullptr, 2); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("ExFreePool2"));
    ExFreePool2(wrong, kTag, nullptr, 0);
}

TEST_CASE("pool: freeing NULL or memory that is not pool bug-checks") {
    auto child = softndk::test::run_in_child([] { ExFreePool(nullptr); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("BAD_POOL_CALLER"));

    alignas(64) static unsigned char not_pool[128] = {};
    child = softndk::test::run_in_child([] { ExFreePool(not_pool + 64); });
    CHECK(child.aborted());
    CHECK_THAT(child.err, Catch::Contains("not a pool block"));
}

TEST_CASE("pool: ExAllocatePoolWithTagPriority is ExAllocatePoolWithTag, any priority") {
    const size_t live_before = softndk::wdk::pool_live_allocations();
    for (const EX_POOL_PRIORITY priority :
         {LowPoolPriority, NormalPoolPriority, HighPoolPrioritySpecialPoolUnderrun}) {
        void *p = ExAllocatePoolWithTagPriority(NonPagedPoolNx, PAGE_SIZE, kTag, priority);
        REQUIRE(p != nullptr);
        CHECK(aligned(p, PAGE_SIZE));
        ExFreePoolWithTag(p, kTag);
    }
    CHECK(ExAllocatePoolWithTagPriority(NonPagedPoolNx, SIZE_MAX, kTag, HighPoolPriority) ==
          nullptr);
    CHECK(softndk::wdk::pool_live_allocations() == live_before);
}

TEST_CASE("pool: ExAllocatePool3 checks its extended parameters, then acts as ExAllocatePool2") {
    POOL_EXTENDED_PARAMETER parameters[2] = {};
    parameters[0].Type = PoolExtendedParameterPriority;
    parameters[0].Priority = HighPoolPriority;
    parameters[1].Type = PoolExtendedParameterNumaNode;
    parameters[1].PreferredNode = POOL_NODE_REQUIREMENT_ANY_NODE;
    auto *p = static_cast<unsigned char *>(
        ExAllocatePool3(POOL_FLAG_NON_PAGED, 100, kTag, parameters, 2));
    REQUIRE(p != nullptr);
    CHECK(p[0] == 0);  // zeroed, as ExAllocatePool2
    CHECK(p[99] == 0);
    ExFreePoolWithTag(p, kTag);
    p = static_cast<unsigned char *>(ExAllocatePool3(POOL_FLAG_PAGED, 8, kTag, nullptr, 0));
    CHECK(p != nullptr);
    ExFreePool(p);

    CHECK(ExAllocatePool3(POOL_FLAG_NON_PAGED, 8, kTag, nullptr, 1) == nullptr);
    CHECK(ExAllocatePool3(0, 8, kTag, parameters, 1) == nullptr);  // flags as ExAllocatePool2
    POOL_EXTENDED_PARAMETER invalid = {};
    invalid.Type = PoolExtendedParameterMax;
    CHECK(ExAllocatePool3(POOL_FLAG_NON_PAGED, 8, kTag, &invalid, 1) == nullptr);
    invalid.Optional = 1;  // an optional parameter of unknown type is skipped
    p = static_cast<unsigned char *>(ExAllocatePool3(POOL_FLAG_NON_PAGED, 8, kTag, &invalid, 1));
    CHECK(p != nullptr);
    ExFreePool(p);
    POOL_EXTENDED_PARAMS_SECURE_POOL secure = {};
    POOL_EXTENDED_PARAMETER secure_parameter = {};
    secure_parameter.Type = PoolExtendedParameterSecurePool;
    secure_parameter.SecurePoolParams = &secure;
    CHECK(ExAllocatePool3(POOL_FLAG_NON_PAGED, 8, kTag, &secure_parameter, 1) == nullptr);
}
