// mtt.cpp - translation construction and the copy helpers (see mtt.hpp).
#include "memory/mtt.hpp"

#include <atomic>
#include <cstring>

namespace softndk::emu {
namespace {

constexpr std::uint64_t kWholeSpace = std::numeric_limits<std::uint64_t>::max();

bool page_aligned(const std::byte *page) noexcept {
    return (reinterpret_cast<std::uintptr_t>(page) & kMttPageMask) == 0;
}

}  // namespace

std::shared_ptr<const Translation> Translation::contiguous(std::uint64_t iova, std::uint64_t length,
                                                           std::byte *device_address,
                                                           std::shared_ptr<const void> keepalive) {
    const auto device = reinterpret_cast<std::uintptr_t>(device_address);
    if (length == 0 || device_address == nullptr || !range_fits(iova, length) ||
        !range_fits(device, length)) {
        return nullptr;
    }
    std::shared_ptr<Translation> t(new Translation());
    t->kind_ = Kind::kContiguous;
    t->iova_ = iova;
    t->length_ = length;
    t->device_base_ = device;
    t->keepalive_ = std::move(keepalive);
    return t;
}

std::shared_ptr<const Translation> Translation::identity() {
    std::shared_ptr<Translation> t(new Translation());
    t->kind_ = Kind::kContiguous;
    t->iova_ = 0;
    t->length_ = kWholeSpace;
    t->device_base_ = 0;
    return t;
}

std::shared_ptr<const Translation> Translation::page_list(std::uint64_t iova, std::uint64_t length,
                                                          std::uint32_t first_byte_offset,
                                                          std::span<std::byte *const> pages,
                                                          std::shared_ptr<const void> keepalive) {
    if (pages.empty() || first_byte_offset >= kMttPageBytes || length == 0 ||
        !range_fits(iova, length)) {
        return nullptr;
    }
    // pages.size() <= 2^52 for any span that fits in memory, so the product cannot wrap.
    const std::uint64_t capacity = pages.size() * kMttPageBytes - first_byte_offset;
    if (length > capacity) return nullptr;
    for (std::byte *page : pages) {
        if (page == nullptr || !page_aligned(page)) return nullptr;
    }
    std::shared_ptr<Translation> t(new Translation());
    t->kind_ = Kind::kPageList;
    t->iova_ = iova;
    t->length_ = length;
    t->first_byte_offset_ = first_byte_offset;
    t->pages_.assign(pages.begin(), pages.end());
    t->keepalive_ = std::move(keepalive);
    return t;
}

std::shared_ptr<const Translation> Translation::logical(
    std::shared_ptr<const LogicalAddressSpace> space) {
    if (space == nullptr) return nullptr;
    std::shared_ptr<Translation> t(new Translation());
    t->kind_ = Kind::kLogical;
    t->iova_ = 0;
    t->length_ = kWholeSpace;
    t->space_ = std::move(space);
    return t;
}

bool Translation::is_mapped(std::uint64_t iova, std::uint64_t length) const noexcept {
    if (!covers(iova, length)) return false;
    if (kind_ != Kind::kLogical || length == 0) return true;
    const std::uint64_t first = iova >> kMttPageShift;
    const std::uint64_t last = (iova + (length - 1)) >> kMttPageShift;  // covers(): no wrap
    for (std::uint64_t page = first;; ++page) {
        if (space_->resolve_page(page << kMttPageShift) == nullptr) return false;
        if (page == last) return true;
    }
}

bool Translation::copy_to(std::uint64_t iova, const void *src, std::size_t bytes) const noexcept {
    const auto *from = static_cast<const std::byte *>(src);
    std::size_t left = bytes;
    return for_each_chunk(iova, bytes, [&from, &left](std::byte *chunk, std::size_t n) {
        left -= n;
        if (left != 0) {
            std::memcpy(chunk, from, n);
        } else {
            // In-order placement (NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED): the range's
            // last byte is stored last, with release, so a consumer that polls it (as
            // perftest's write_lat does) and sees it has every earlier byte too.
            std::memcpy(chunk, from, n - 1);
            std::atomic_ref<std::byte>(chunk[n - 1]).store(from[n - 1], std::memory_order_release);
        }
        from += n;
    });
}

bool Translation::copy_from(std::uint64_t iova, void *dst, std::size_t bytes) const noexcept {
    auto *to = static_cast<std::byte *>(dst);
    return for_each_chunk(iova, bytes, [&to](const std::byte *chunk, std::size_t n) {
        std::memcpy(to, chunk, n);
        to += n;
    });
}

bool DmaRange::copy_to(std::uint64_t offset, const void *src, std::size_t bytes) const noexcept {
    if (!range_within(offset, bytes, 0, length_)) return false;
    if (bytes == 0) return true;
    return translation_->copy_to(iova_ + offset, src, bytes);
}

bool DmaRange::copy_from(std::uint64_t offset, void *dst, std::size_t bytes) const noexcept {
    if (!range_within(offset, bytes, 0, length_)) return false;
    if (bytes == 0) return true;
    return translation_->copy_from(iova_ + offset, dst, bytes);
}

}  // namespace softndk::emu
