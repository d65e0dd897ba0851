// Pool allocations: the C heap, with a header before each block that keeps the tag.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <string>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

constexpr uint32_t kLiveMagic = 0x6C6F6F50;   // "Pool"
constexpr uint32_t kFreedMagic = 0x65657246;  // "Free"
constexpr SIZE_T kLargestRequest = SIZE_T{1} << 40;
constexpr ULONG kProtectedPool = 0x80000000;  // tag bit ignored when tags are compared

// BAD_POOL_CALLER first parameters (Windows' meanings).
constexpr ULONG_PTR kFreeOfFreedPool = 0x07;
constexpr ULONG_PTR kFreeWithWrongTag = 0x0A;
constexpr ULONG_PTR kFreeOfInvalidAddress = 0x46;

// Sits immediately before every block. The block is `offset` bytes into the heap allocation
// at `base`, where offset = max(alignment, sizeof(PoolHeader)).
struct alignas(16) PoolHeader {
    uint32_t magic;
    ULONG tag;
    uint64_t size;
    void *base;
    uint64_t alignment;
};
static_assert(sizeof(PoolHeader) == 32);

std::atomic<std::size_t> g_live_allocations{0};

// "Tag " as it reads in memory (Windows' multi-character constants are little-endian).
std::string tag_text(ULONG tag) {
    std::string text(4, '.');
    for (size_t i = 0; i < 4; ++i) {
        const auto c = static_cast<unsigned char>(tag >> (8 * i));
        if (c >= 0x20 && c < 0x7F) text[i] = static_cast<char>(c);
    }
    return text;
}

PVOID allocate(SIZE_T bytes, ULONG tag, bool cache_aligned, bool zero) {
    if (bytes > kLargestRequest) return nullptr;
    const size_t alignment = bytes >= PAGE_SIZE ? PAGE_SIZE : cache_aligned ? 64 : 16;
    const size_t offset = std::max(alignment, sizeof(PoolHeader));
    void *base = nullptr;
    if (posix_memalign(&base, alignment, offset + bytes) != 0) return nullptr;
    auto *block = static_cast<unsigned char *>(base) + offset;
    auto *header = reinterpret_cast<PoolHeader *>(block) - 1;
    *header = PoolHeader{kLiveMagic, tag, bytes, base, alignment};
    if (zero) std::memset(block, 0, bytes);
    g_live_allocations.fetch_add(1, std::memory_order_relaxed);
    if (logger().should_log(spdlog::level::trace)) {
        logger().trace("pool: allocated {} bytes tag '{}' at {}", bytes, tag_text(tag),
                       static_cast<void *>(block));
    }
    return block;
}

void free_block(PVOID block, ULONG tag, bool check_tag, const char *caller) {
    const auto address = reinterpret_cast<ULONG_PTR>(block);
    if (block == nullptr || address % alignof(PoolHeader) != 0) {
        bugcheck(BAD_POOL_CALLER, kFreeOfInvalidAddress, address, 0, 0,
                 fmt::format("{}({}): not a pool block", caller, block));
    }
    auto *header = static_cast<PoolHeader *>(block) - 1;
    if (header->magic == kFreedMagic) {
        bugcheck(BAD_POOL_CALLER, kFreeOfFreedPool, address, 0, 0,
                 fmt::format("{}({}): the block was freed already", caller, block));
    }
    if (header->magic != kLiveMagic) {
        bugcheck(
            BAD_POOL_CALLER, kFreeOfInvalidAddress, address, 0, 0,
            fmt::format("{}({}): not a pool block (or its header was overwritten)", caller, block));
    }
    if (check_tag && tag != 0 && ((tag ^ header->tag) & ~kProtectedPool) != 0) {
        bugcheck(BAD_POOL_CALLER, kFreeWithWrongTag, address, header->tag, tag,
                 fmt::format("{}({}): tag '{}' does not match the allocation's tag '{}'", caller,
                             block, tag_text(tag), tag_text(header->tag)));
    }
    if (logger().should_log(spdlog::level::trace)) {
        logger().trace("pool: freeing {} bytes tag '{}' at {}", header->size, tag_text(header->tag),
                       block);
    }
    header->magic = kFreedMagic;
    g_live_allocations.fetch_sub(1, std::memory_order_relaxed);
    std::free(header->base);
}

bool pool_type_cache_aligned(ULONG type) {
    return (type & NonPagedPoolCacheAligned) != 0;
}

bool pool_type_must_succeed(ULONG type) {
    const ULONG base = type & 7;
    return (type & POOL_RAISE_IF_ALLOCATION_FAILURE) != 0 || base == NonPagedPoolMustSucceed ||
           base == NonPagedPoolCacheAlignedMustS;
}

[[noreturn]] void out_of_pool(const char *caller, SIZE_T bytes, ULONG tag) {
    bugcheck(KMODE_EXCEPTION_NOT_HANDLED, static_cast<ULONG_PTR>(STATUS_INSUFFICIENT_RESOURCES),
             bytes, tag, 0,
             fmt::format("{}: {} bytes (tag '{}') failed and the caller asked for an exception "
                         "instead of NULL",
                         caller, bytes, tag_text(tag)));
}

}  // namespace

std::size_t pool_live_allocations() {
    return g_live_allocations.load(std::memory_order_relaxed);
}

}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

PVOID NTAPI ExAllocatePoolWithTag(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
    const auto type = static_cast<ULONG>(PoolType);
    PVOID block = wdk::allocate(NumberOfBytes, Tag, wdk::pool_type_cache_aligned(type), false);
    if (block == nullptr && wdk::pool_type_must_succeed(type)) {
        wdk::out_of_pool("ExAllocatePoolWithTag", NumberOfBytes, Tag);
    }
    return block;
}

PVOID NTAPI ExAllocatePoolZero(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
    const auto type = static_cast<ULONG>(PoolType);
    PVOID block = wdk::allocate(NumberOfBytes, Tag, wdk::pool_type_cache_aligned(type), true);
    if (block == nullptr && wdk::pool_type_must_succeed(type)) {
        wdk::out_of_pool("ExAllocatePoolZero", NumberOfBytes, Tag);
    }
    return block;
}

PVOID NTAPI ExAllocatePoolUninitialized(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
    return ExAllocatePoolWithTag(PoolType, NumberOfBytes, Tag);
}

// Quota allocations raise on failure unless the caller opted out (no quota is charged).
static PVOID allocate_with_quota(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag, bool zero,
                                 const char *caller) {
    const auto type = static_cast<ULONG>(PoolType);
    PVOID block = wdk::allocate(NumberOfBytes, Tag, wdk::pool_type_cache_aligned(type), zero);
    if (block == nullptr && (type & POOL_QUOTA_FAIL_INSTEAD_OF_RAISE) == 0) {
        wdk::out_of_pool(caller, NumberOfBytes, Tag);
    }
    return block;
}

PVOID NTAPI ExAllocatePoolQuotaZero(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
    return allocate_with_quota(PoolType, NumberOfBytes, Tag, true, "ExAllocatePoolQuotaZero");
}

PVOID NTAPI ExAllocatePoolWithQuotaTag(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
    return allocate_with_quota(PoolType, NumberOfBytes, Tag, false, "ExAllocatePoolWithQuotaTag");
}

PVOID NTAPI ExAllocatePool2(POOL_FLAGS Flags, SIZE_T NumberOfBytes, ULONG Tag) {
    constexpr POOL_FLAGS kPoolKinds =
        POOL_FLAG_NON_PAGED | POOL_FLAG_NON_PAGED_EXECUTE | POOL_FLAG_PAGED;
    constexpr POOL_FLAGS kKnownRequired = POOL_FLAG_USE_QUOTA | POOL_FLAG_UNINITIALIZED |
                                          POOL_FLAG_SESSION | POOL_FLAG_CACHE_ALIGNED |
                                          POOL_FLAG_RAISE_ON_FAILURE | kPoolKinds;
    const POOL_FLAGS required = Flags & (POOL_FLAG_OPTIONAL_START - 1);
    if ((required & ~kKnownRequired) != 0 || std::popcount(Flags & kPoolKinds) != 1) {
        wdk::logger().warn(
            "ExAllocatePool2: invalid POOL_FLAGS 0x{:x} (exactly one of NON_PAGED, "
            "NON_PAGED_EXECUTE and PAGED, and no unknown or reserved required flag)",
            Flags);
        return nullptr;
    }
    PVOID block = wdk::allocate(NumberOfBytes, Tag, (Flags & POOL_FLAG_CACHE_ALIGNED) != 0,
                                (Flags & POOL_FLAG_UNINITIALIZED) == 0);
    if (block == nullptr && (Flags & POOL_FLAG_RAISE_ON_FAILURE) != 0) {
        wdk::out_of_pool("ExAllocatePool2", NumberOfBytes, Tag);
    }
    return block;
}

PVOID NTAPI ExAllocatePoolWithTagPriority(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag,
                                          EX_POOL_PRIORITY Priority) {
    (void)Priority;  // no pool pressure to prioritise against
    return ExAllocatePoolWithTag(PoolType, NumberOfBytes, Tag);
}

PVOID NTAPI ExAllocatePool3(POOL_FLAGS Flags, SIZE_T NumberOfBytes, ULONG Tag,
                            PCPOOL_EXTENDED_PARAMETER ExtendedParameters,
                            ULONG ExtendedParametersCount) {
    if (ExtendedParameters == nullptr && ExtendedParametersCount != 0) {
        wdk::logger().warn("ExAllocatePool3: {} extended parameters at NULL",
                           ExtendedParametersCount);
        return nullptr;
    }
    for (ULONG i = 0; i < ExtendedParametersCount; ++i) {
        const POOL_EXTENDED_PARAMETER &parameter = ExtendedParameters[i];
        switch (parameter.Type) {
            case PoolExtendedParameterPriority:
            case PoolExtendedParameterNumaNode:
                break;  // accepted, no effect (one pool, no NUMA placement)
            case PoolExtendedParameterSecurePool:
                wdk::logger().warn("ExAllocatePool3: secure pools are not supported");
                return nullptr;
            default:
                if (parameter.Optional) break;
                wdk::logger().warn("ExAllocatePool3: extended parameter {} has invalid type {}", i,
                                   static_cast<unsigned>(parameter.Type));
                return nullptr;
        }
    }
    return ExAllocatePool2(Flags, NumberOfBytes, Tag);
}

VOID NTAPI ExFreePool(PVOID P) {
    wdk::free_block(P, 0, false, "ExFreePool");
}

VOID NTAPI ExFreePoolWithTag(PVOID P, ULONG Tag) {
    wdk::free_block(P, Tag, true, "ExFreePoolWithTag");
}

VOID NTAPI ExFreePool2(PVOID P, ULONG Tag, PCPOOL_EXTENDED_PARAMETER ExtendedParameters,
                       ULONG ExtendedParametersCount) {
    if (ExtendedParameters == nullptr && ExtendedParametersCount != 0)
        wdk::fatal("ExFreePool2: extended parameters counted but NULL");
    for (ULONG i = 0; i < ExtendedParametersCount; ++i) {
        if (ExtendedParameters[i].Type == PoolExtendedParameterSecurePool)
            wdk::fatal("ExFreePool2: no block comes from a secure pool here");
    }
    wdk::free_block(P, Tag, true, "ExFreePool2");
}

}  // extern "C"
