// mtt.hpp - the memory translation block ("MTT"): how the device reaches the bytes of a
// registered range.
//
// A Translation maps an IOVA range (the consumer's registration addresses, as carried in
// SGEs, RDMA headers and the MPT) onto DEVICE-SIDE addresses, i.e. addresses the device
// thread may dereference:
//   - embedded mode: the consumer's own virtual addresses (same address space);
//   - daemon mode: the device's mapping of a shared memfd that backs the registered pages.
// Nothing in a Translation comes from shared memory unchecked: it is built by the control
// path (RegisterMr command, fast-register WQE after the page addresses were resolved and
// validated, LAM block) and is immutable afterwards, so any number of threads may use one
// concurrently. Its lifetime is shared (std::shared_ptr): a transfer that passed its key
// check keeps the translation - and, through `keepalive`, a daemon-side mapping - alive
// even if the key is deregistered meanwhile, so the device can never fault on an unmapped
// page. (Whether it may still WRITE there is a protocol question, see mpt.hpp "Lifetime".)
//
// Three shapes:
//   contiguous - one device-side pointer for the first byte; the range is contiguous in
//                device memory (RegisterMr of a virtually contiguous MDL; embedded or a
//                single shared mapping). identity() is the whole 64-bit space mapped
//                onto itself: embedded mode's LAM, where a logical address IS a host VA.
//   page list  - an array of device-side pointers to 4 KiB pages plus a first-byte
//                offset (FBO) into page 0: fast registration, and LAM-built lists. Pages
//                need not be adjacent; adjacent ones are merged into one chunk.
//   logical    - adapter logical addresses resolved page by page through a
//                LogicalAddressSpace (daemon-mode LAM); a page may be unmapped, and every
//                walk says so instead of touching it.
//
// IOVA arithmetic is overflow-safe everywhere: nothing computes iova + length; a range
// whose last byte would lie past 2^64 - 1 is rejected.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "softndk/hw_interface.hpp"

namespace softndk::emu {

static_assert(sizeof(std::size_t) == sizeof(std::uint64_t), "SoftNDK is LP64-only");

inline constexpr std::uint64_t kMttPageBytes = hw::kPageBytes;
inline constexpr std::uint64_t kMttPageMask = kMttPageBytes - 1;
inline constexpr unsigned kMttPageShift = 12;
static_assert((std::uint64_t{1} << kMttPageShift) == kMttPageBytes);

// True if [iova, iova + length) does not run past 2^64 (its last byte is addressable).
// length 0 always fits.
constexpr bool range_fits(std::uint64_t iova, std::uint64_t length) noexcept {
    return length == 0 || length - 1 <= std::numeric_limits<std::uint64_t>::max() - iova;
}

// True if [iova, iova + length) lies inside [base, base + extent). Never computes a sum,
// so an iova + length that wraps past 2^64 is simply "outside". An empty range at any
// iova in [base, base + extent] is inside.
constexpr bool range_within(std::uint64_t iova, std::uint64_t length, std::uint64_t base,
                            std::uint64_t extent) noexcept {
    return iova >= base && length <= extent && iova - base <= extent - length;
}

// Daemon-mode LAM hook: resolves adapter logical pages to device-side page pointers.
// Implemented by the LAM block. resolve_page() may be called concurrently from several
// device threads and concurrently with the implementation's own updates; it must be
// thread-safe and must never return a pointer to a page that can be unmapped while a
// Translation referencing this space is alive.
class LogicalAddressSpace {
  public:
    virtual ~LogicalAddressSpace() = default;
    // `logical_page` is a multiple of 4096. Returns the device-side address of that page
    // or nullptr if it is not mapped.
    virtual std::byte *resolve_page(std::uint64_t logical_page) const noexcept = 0;
};

class Translation {
  public:
    enum class Kind : std::uint8_t { kContiguous, kPageList, kLogical };

    // [iova, iova + length) at device address `device_address` onwards. `keepalive` is
    // held as long as the translation lives (e.g. the daemon's mapping of the memfd).
    // Returns nullptr if length is 0, device_address is null, or either range wraps.
    static std::shared_ptr<const Translation> contiguous(
        std::uint64_t iova, std::uint64_t length, std::byte *device_address,
        std::shared_ptr<const void> keepalive = nullptr);

    // IOVA == device address over [0, 2^64 - 1): embedded mode's logical address space.
    static std::shared_ptr<const Translation> identity();

    // `length` bytes starting `first_byte_offset` bytes into pages[0], at IOVA `iova`.
    // Returns nullptr unless: pages is non-empty, every page pointer is non-null and
    // 4 KiB-aligned, first_byte_offset < 4096, 0 < length <= pages * 4096 - FBO, and
    // [iova, iova + length) does not wrap. (The MPT's fast-register checks the NDK rules,
    // e.g. iova = FBO mod 4096, before it gets here and reports which one failed.)
    // `keepalive` is held as long as the translation lives (the LAM mappings the pages
    // came from, lam.hpp).
    static std::shared_ptr<const Translation> page_list(
        std::uint64_t iova, std::uint64_t length, std::uint32_t first_byte_offset,
        std::span<std::byte *const> pages, std::shared_ptr<const void> keepalive = nullptr);

    // Logical addresses over [0, 2^64 - 1), resolved per page through `space`.
    // Returns nullptr if space is null.
    static std::shared_ptr<const Translation> logical(
        std::shared_ptr<const LogicalAddressSpace> space);

    Kind kind() const noexcept { return kind_; }
    std::uint64_t iova() const noexcept { return iova_; }
    std::uint64_t length() const noexcept { return length_; }
    std::uint32_t first_byte_offset() const noexcept { return first_byte_offset_; }
    std::span<std::byte *const> pages() const noexcept { return pages_; }

    // [iova, iova + length) lies inside the translated range (overflow-safe).
    bool covers(std::uint64_t iova, std::uint64_t length) const noexcept {
        return range_within(iova, length, iova_, length_);
    }

    // covers() and, for a logical translation, every page of the range resolves now.
    bool is_mapped(std::uint64_t iova, std::uint64_t length) const noexcept;

    // Calls fn(std::byte *device_pointer, std::size_t bytes) for consecutive device-side
    // chunks that together make up [iova, iova + length), in IOVA order. Chunks are as
    // large as device contiguity allows: one for a contiguous translation, one per run of
    // adjacent pages for a page list. Returns false - without calling fn at all - if the
    // range is not covered, and false after having called fn for a prefix if a logical
    // page turns out unmapped. length 0 calls nothing and returns covers(iova, 0).
    template <class Fn>
    bool for_each_chunk(std::uint64_t iova, std::uint64_t length, Fn &&fn) const;

    // Copy `bytes` from `src` INTO the translated memory at `iova` (a write by the device:
    // receive placement, RDMA WRITE target, READ response sink). False if not covered or
    // (logical) a page is unmapped; then a prefix may have been written. In IOVA order,
    // the last byte stored last with release: a thread that acquire-loads that byte and
    // sees its new value sees every earlier byte of the copy (in-order placement).
    bool copy_to(std::uint64_t iova, const void *src, std::size_t bytes) const noexcept;

    // Copy `bytes` FROM the translated memory at `iova` into `dst` (a read by the device:
    // gather, READ responder). Same failure rules.
    bool copy_from(std::uint64_t iova, void *dst, std::size_t bytes) const noexcept;

  private:
    Translation() = default;

    // Walks pages: byte `offset` of the virtual page sequence is page (offset >> 12), byte
    // (offset & 4095); resolve(page_number) yields that page's device pointer or nullptr.
    template <class Fn, class Resolve>
    static bool walk_pages(std::uint64_t offset, std::uint64_t length, Fn &fn, Resolve &&resolve);

    Kind kind_ = Kind::kContiguous;
    std::uint32_t first_byte_offset_ = 0;
    std::uint64_t iova_ = 0;
    std::uint64_t length_ = 0;
    std::uintptr_t device_base_ = 0;  // kContiguous: device address of byte `iova_`
    std::vector<std::byte *> pages_;  // kPageList
    std::shared_ptr<const LogicalAddressSpace> space_;  // kLogical
    std::shared_ptr<const void> keepalive_;
};

// A key-checked range: what MemoryProtectionTable::check() hands the data path. It pins
// the translation it was resolved through, so it stays usable (memory-safe) after the key
// changes. Offsets are relative to the start of the checked range; every access is bounds-
// checked against the checked length, so the data path cannot stray outside what was
// checked. A default-constructed (or zero-length) range has length 0.
class DmaRange {
  public:
    DmaRange() = default;
    DmaRange(std::shared_ptr<const Translation> translation, std::uint64_t iova,
             std::uint64_t length) noexcept
        : translation_(std::move(translation)), iova_(iova), length_(length) {}

    std::uint64_t iova() const noexcept { return iova_; }
    std::uint64_t length() const noexcept { return length_; }
    bool empty() const noexcept { return length_ == 0; }
    const Translation *translation() const noexcept { return translation_.get(); }

    // Chunks of [offset, offset + length) of this range; false if that sub-range is not
    // inside the checked range (fn not called) or the translation fails (see Translation).
    template <class Fn>
    bool for_each_chunk(std::uint64_t offset, std::uint64_t length, Fn &&fn) const {
        if (!range_within(offset, length, 0, length_)) return false;
        if (length == 0) return true;
        return translation_->for_each_chunk(iova_ + offset, length, fn);
    }
    template <class Fn>
    bool for_each_chunk(Fn &&fn) const {
        return for_each_chunk(0, length_, fn);
    }

    // Into the registered memory at `offset` / out of it. False if out of bounds.
    bool copy_to(std::uint64_t offset, const void *src, std::size_t bytes) const noexcept;
    bool copy_from(std::uint64_t offset, void *dst, std::size_t bytes) const noexcept;

  private:
    std::shared_ptr<const Translation> translation_;
    std::uint64_t iova_ = 0;
    std::uint64_t length_ = 0;
};

// ---------------------------------------------------------------------------
// Template implementations
// ---------------------------------------------------------------------------
template <class Fn, class Resolve>
bool Translation::walk_pages(std::uint64_t offset, std::uint64_t length, Fn &fn,
                             Resolve &&resolve) {
    std::uint64_t page = offset >> kMttPageShift;
    std::uint64_t in_page = offset & kMttPageMask;
    while (length > 0) {
        std::byte *const first = resolve(page);
        if (first == nullptr) return false;
        std::byte *const start = first + in_page;
        std::uint64_t bytes = std::min(length, kMttPageBytes - in_page);
        // Extend the chunk over pages that follow in device memory too.
        std::byte *expected = first + kMttPageBytes;
        while (bytes < length) {
            std::byte *const next = resolve(page + 1);
            if (next != expected) break;
            ++page;
            bytes += std::min(length - bytes, kMttPageBytes);
            expected = next + kMttPageBytes;
        }
        fn(start, static_cast<std::size_t>(bytes));
        length -= bytes;
        ++page;
        in_page = 0;
    }
    return true;
}

template <class Fn>
bool Translation::for_each_chunk(std::uint64_t iova, std::uint64_t length, Fn &&fn) const {
    if (!covers(iova, length)) return false;
    if (length == 0) return true;
    switch (kind_) {
        case Kind::kContiguous:
            // uintptr_t arithmetic: identity() starts at address 0, where pointer
            // arithmetic would be undefined.
            fn(reinterpret_cast<std::byte *>(device_base_ + (iova - iova_)),
               static_cast<std::size_t>(length));
            return true;
        case Kind::kPageList: {
            const std::uint64_t page_count = pages_.size();
            return walk_pages((iova - iova_) + first_byte_offset_, length, fn,
                              [this, page_count](std::uint64_t page) -> std::byte * {
                                  return page < page_count ? pages_[page] : nullptr;
                              });
        }
        case Kind::kLogical:
            return walk_pages(iova, length, fn, [this](std::uint64_t page) -> std::byte * {
                return space_->resolve_page(page << kMttPageShift);
            });
    }
    return false;
}

}  // namespace softndk::emu
