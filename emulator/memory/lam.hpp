// lam.hpp - the device's logical address space: what NdkBuildLAM maps.
//
// NDK hands the consumer "adapter logical addresses" for pages it wants to use with fast
// registration and with the PD's privileged token (ndkpi-api.md 7.11). On Windows these
// are bus addresses behind the IOMMU; here they are entries in one table per device
// context, so that a page the consumer never mapped through NdkBuildLAM is a protection
// error in both modes instead of a wild pointer (daemon mode) or silent access to any
// address of the process (embedded mode).
//
// Address choice: a page's logical address IS its virtual address in the consumer's
// process, rounded down to 4 KiB. That keeps traces readable (the logical page of a
// buffer is the buffer's own page) and makes a page mapped by two LAMs resolve to one
// entry. Contexts never share a space, so two daemon clients with equal VAs do not meet.
//
// Ownership and lifetime:
//   - map() takes a device-side pointer to `pages` consecutive pages and a keepalive
//     (the daemon's mapping of the consumer's memfd, or nothing in embedded mode). Every
//     page entry holds the keepalive of the map() that created it, so a page stays
//     reachable while any LAM still maps it, whichever LAM was first.
//   - pin() returns a page's device pointer together with that keepalive: a fast
//     registration keeps the pages it resolved mapped for as long as its translation
//     lives, even if the consumer releases the LAM first (a consumer error that must not
//     crash the daemon).
//   - resolve_page() (LogicalAddressSpace, used by the privileged key's logical
//     translation on every access) returns a bare pointer. To honour that interface's
//     rule ("never a pointer to a page that can be unmapped while a translation over this
//     space lives"), once retain_released() was called - when a privileged key is built
//     over the space - unmap() no longer drops keepalives but parks them until the space
//     is destroyed.
// Thread safety: every member may be called from any thread; lookups take a shared lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "memory/mtt.hpp"

namespace softndk::emu {

class LamSpace final : public LogicalAddressSpace {
  public:
    struct PinnedPage {
        std::byte *page = nullptr;
        std::shared_ptr<const void> keepalive;
    };

    // Maps logical pages [first_logical, first_logical + pages * 4096) onto device memory
    // at `device`. Both must be 4 KiB aligned and pages > 0; the range must not wrap.
    // Returns the mapping's id (never 0), or 0 if the arguments are invalid.
    std::uint32_t map(std::uint64_t first_logical, std::uint32_t pages, std::byte *device,
                      std::shared_ptr<const void> keepalive);

    // Drops mapping `id`. False if there is no such mapping.
    bool unmap(std::uint32_t id);

    std::optional<PinnedPage> pin(std::uint64_t logical_page) const;
    std::byte *resolve_page(std::uint64_t logical_page) const noexcept override;

    void retain_released();

    std::size_t mapped_pages() const;
    std::size_t mappings() const;

  private:
    struct Page {
        std::byte *device = nullptr;
        std::shared_ptr<const void> keepalive;
        std::uint32_t references = 0;
    };
    struct Mapping {
        std::uint64_t first_logical = 0;
        std::uint32_t pages = 0;
    };

    mutable std::shared_mutex mutex_;
    std::unordered_map<std::uint64_t, Page> pages_;  // key: logical page (4 KiB aligned)
    std::unordered_map<std::uint32_t, Mapping> mappings_;
    std::vector<std::shared_ptr<const void>> retained_;
    std::uint32_t next_id_ = 1;
    bool retain_ = false;
};

}  // namespace softndk::emu
