#include "memory/lam.hpp"

#include <limits>
#include <mutex>

namespace softndk::emu {

namespace {
bool page_aligned(std::uint64_t v) {
    return (v & kMttPageMask) == 0;
}
}  // namespace

std::uint32_t LamSpace::map(std::uint64_t first_logical, std::uint32_t pages, std::byte *device,
                            std::shared_ptr<const void> keepalive) {
    if (pages == 0 || device == nullptr || !page_aligned(first_logical) ||
        !page_aligned(reinterpret_cast<std::uintptr_t>(device)) ||
        !range_fits(first_logical, std::uint64_t{pages} * kMttPageBytes)) {
        return 0;
    }
    std::unique_lock lock(mutex_);
    std::uint32_t id = next_id_;
    while (id == 0 || mappings_.contains(id))
        ++id;
    next_id_ = id + 1;
    for (std::uint32_t i = 0; i < pages; ++i) {
        Page &p = pages_[first_logical + std::uint64_t{i} * kMttPageBytes];
        if (p.references++ == 0) {
            p.device = device + std::size_t{i} * kMttPageBytes;
            p.keepalive = keepalive;
        }
    }
    mappings_.emplace(id, Mapping{first_logical, pages});
    return id;
}

bool LamSpace::unmap(std::uint32_t id) {
    std::vector<std::shared_ptr<const void>> dropped;  // released after unlocking
    std::unique_lock lock(mutex_);
    const auto it = mappings_.find(id);
    if (it == mappings_.end()) return false;
    const Mapping m = it->second;
    mappings_.erase(it);
    for (std::uint32_t i = 0; i < m.pages; ++i) {
        const auto page = pages_.find(m.first_logical + std::uint64_t{i} * kMttPageBytes);
        if (page == pages_.end() || --page->second.references != 0) continue;
        auto &keep = page->second.keepalive;
        if (keep && retain_ && (retained_.empty() || retained_.back() != keep)) {
            retained_.push_back(std::move(keep));
        } else if (keep && (dropped.empty() || dropped.back() != keep)) {
            dropped.push_back(std::move(keep));
        }
        pages_.erase(page);
    }
    lock.unlock();
    return true;
}

std::optional<LamSpace::PinnedPage> LamSpace::pin(std::uint64_t logical_page) const {
    if (!page_aligned(logical_page)) return std::nullopt;
    std::shared_lock lock(mutex_);
    const auto it = pages_.find(logical_page);
    if (it == pages_.end()) return std::nullopt;
    return PinnedPage{it->second.device, it->second.keepalive};
}

std::byte *LamSpace::resolve_page(std::uint64_t logical_page) const noexcept {
    if (!page_aligned(logical_page)) return nullptr;
    std::shared_lock lock(mutex_);
    const auto it = pages_.find(logical_page);
    return it == pages_.end() ? nullptr : it->second.device;
}

void LamSpace::retain_released() {
    std::unique_lock lock(mutex_);
    retain_ = true;
}

std::size_t LamSpace::mapped_pages() const {
    std::shared_lock lock(mutex_);
    return pages_.size();
}

std::size_t LamSpace::mappings() const {
    std::shared_lock lock(mutex_);
    return mappings_.size();
}

}  // namespace softndk::emu
