// LamSpace (lam.hpp) tests: argument edges first, then sharing and lifetime.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

#include <catch2/catch.hpp>

#include "memory/lam.hpp"

namespace {

using softndk::emu::kMttPageBytes;
using softndk::emu::LamSpace;
using softndk::emu::Translation;

struct alignas(4096) Pages {
    std::array<std::byte, 4 * 4096> bytes{};
    std::byte *page(std::size_t i) { return bytes.data() + i * kMttPageBytes; }
};

constexpr std::uint64_t kBase = 0x7f0000000000;

}  // namespace

TEST_CASE("LAM: invalid arguments map nothing", "[lam]") {
    LamSpace space;
    Pages p;
    CHECK(space.map(kBase, 0, p.page(0), nullptr) == 0);      // no pages
    CHECK(space.map(kBase + 1, 1, p.page(0), nullptr) == 0);  // unaligned logical
    CHECK(space.map(kBase, 1, p.page(0) + 8, nullptr) == 0);  // unaligned device
    CHECK(space.map(kBase, 1, nullptr, nullptr) == 0);        // no memory
    const std::uint64_t last = std::numeric_limits<std::uint64_t>::max() & ~(kMttPageBytes - 1);
    CHECK(space.map(last, 2, p.page(0), nullptr) == 0);  // wraps past 2^64
    CHECK(space.map(last, 1, p.page(0), nullptr) != 0);  // the last page fits
    CHECK(space.mappings() == 1);
    CHECK_FALSE(space.unmap(0));
    CHECK_FALSE(space.unmap(12345));
}

TEST_CASE("LAM: pages resolve while mapped, and not before or after", "[lam]") {
    LamSpace space;
    Pages p;
    CHECK(space.resolve_page(kBase) == nullptr);
    const std::uint32_t id = space.map(kBase, 3, p.page(0), nullptr);
    REQUIRE(id != 0);
    CHECK(space.resolve_page(kBase) == p.page(0));
    CHECK(space.resolve_page(kBase + 2 * kMttPageBytes) == p.page(2));
    CHECK(space.resolve_page(kBase + 3 * kMttPageBytes) == nullptr);  // one past the end
    CHECK(space.resolve_page(kBase + 1) == nullptr);                  // not a page address
    CHECK_FALSE(space.pin(kBase + 8).has_value());
    REQUIRE(space.pin(kBase + kMttPageBytes).has_value());
    CHECK(space.pin(kBase + kMttPageBytes)->page == p.page(1));
    CHECK(space.unmap(id));
    CHECK_FALSE(space.unmap(id));  // a stale id fails
    CHECK(space.resolve_page(kBase) == nullptr);
    CHECK(space.mapped_pages() == 0);
}

TEST_CASE("LAM: a page two LAMs map stays until the last one goes", "[lam]") {
    LamSpace space;
    Pages p;
    auto first_keep = std::make_shared<int>(1);
    auto second_keep = std::make_shared<int>(2);
    const std::uint32_t a = space.map(kBase, 2, p.page(0), first_keep);
    const std::uint32_t b = space.map(kBase + kMttPageBytes, 2, p.page(1), second_keep);
    REQUIRE(a != 0);
    REQUIRE(b != 0);
    CHECK(a != b);
    CHECK(space.mapped_pages() == 3);
    // Releasing the first LAM keeps the shared page, and its first mapping, alive.
    CHECK(space.unmap(a));
    CHECK(space.resolve_page(kBase) == nullptr);
    CHECK(space.resolve_page(kBase + kMttPageBytes) == p.page(1));
    CHECK(first_keep.use_count() == 2);  // held by the shared page's entry
    CHECK(space.unmap(b));
    CHECK(first_keep.use_count() == 1);
    CHECK(second_keep.use_count() == 1);
}

TEST_CASE("LAM: a pinned page outlives its release", "[lam]") {
    LamSpace space;
    Pages p;
    auto keep = std::make_shared<int>(7);
    const std::uint32_t id = space.map(kBase, 1, p.page(0), keep);
    auto pinned = space.pin(kBase);
    REQUIRE(pinned.has_value());
    CHECK(space.unmap(id));
    CHECK(keep.use_count() == 2);  // the pin
    pinned.reset();
    CHECK(keep.use_count() == 1);
}

TEST_CASE("LAM: after retain_released, released mappings stay until the space dies", "[lam]") {
    auto keep = std::make_shared<int>(7);
    {
        auto space = std::make_shared<LamSpace>();
        Pages p;
        space->retain_released();
        const std::uint32_t id = space->map(kBase, 2, p.page(0), keep);
        CHECK(space->unmap(id));
        CHECK(space->resolve_page(kBase) == nullptr);  // unmapped for lookups...
        CHECK(keep.use_count() == 2);                  // ...but not released
        // A logical translation (the privileged key) over the space sees the same.
        auto t = Translation::logical(space);
        REQUIRE(t != nullptr);
        CHECK_FALSE(t->is_mapped(kBase, 16));
    }
    CHECK(keep.use_count() == 1);
}
