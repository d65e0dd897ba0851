// Translation (MTT) tests: edge cases first.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "memory/mtt.hpp"

namespace {

using softndk::emu::DmaRange;
using softndk::emu::kMttPageBytes;
using softndk::emu::LogicalAddressSpace;
using softndk::emu::range_fits;
using softndk::emu::range_within;
using softndk::emu::Translation;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

struct alignas(4096) Page {
    std::array<std::byte, 4096> bytes{};
};

struct Chunk {
    std::byte *pointer;
    std::size_t bytes;
    bool operator==(const Chunk &) const = default;
};

std::vector<Chunk> chunks_of(const Translation &t, std::uint64_t iova, std::uint64_t length,
                             bool *ok = nullptr) {
    std::vector<Chunk> out;
    const bool result = t.for_each_chunk(iova, length, [&out](std::byte *p, std::size_t n) {
        out.push_back({p, n});
    });
    if (ok != nullptr) *ok = result;
    return out;
}

// A sparse logical space: logical page address -> device page.
class FakeLogicalSpace final : public LogicalAddressSpace {
  public:
    void map(std::uint64_t logical_page, std::byte *page) { pages_[logical_page] = page; }
    std::byte *resolve_page(std::uint64_t logical_page) const noexcept override {
        const auto it = pages_.find(logical_page);
        return it == pages_.end() ? nullptr : it->second;
    }

  private:
    std::map<std::uint64_t, std::byte *> pages_;
};

}  // namespace

TEST_CASE("range arithmetic never wraps past 2^64", "[mtt]") {
    // range_fits: the last byte must be addressable.
    CHECK(range_fits(0, 0));
    CHECK(range_fits(kMax, 0));
    CHECK(range_fits(kMax, 1));
    CHECK_FALSE(range_fits(kMax, 2));
    CHECK(range_fits(0, kMax));
    CHECK(range_fits(1, kMax));  // last byte at 2^64 - 1
    CHECK_FALSE(range_fits(2, kMax));
    CHECK(range_fits(kMax - 0xfff, 0x1000));
    CHECK_FALSE(range_fits(kMax - 0xfff, 0x1001));

    // range_within(iova, length, base, extent)
    CHECK(range_within(0x1000, 0x1000, 0x1000, 0x1000));        // exactly the range
    CHECK(range_within(0x1fff, 1, 0x1000, 0x1000));             // last byte
    CHECK(range_within(0x2000, 0, 0x1000, 0x1000));             // empty at the end
    CHECK_FALSE(range_within(0x1fff, 2, 0x1000, 0x1000));       // one byte past
    CHECK_FALSE(range_within(0x0fff, 1, 0x1000, 0x1000));       // one byte before
    CHECK_FALSE(range_within(0x1000, 0x1001, 0x1000, 0x1000));  // one byte too long
    // iova + length wraps to a small number that a naive "end <= base + extent" accepts.
    CHECK_FALSE(range_within(0x1800, kMax - 0x17ff + 0x10, 0x1000, 0x1000));
    CHECK_FALSE(range_within(kMax, 2, 0, kMax));
    CHECK_FALSE(range_within(0x1000, kMax, 0x1000, 0x1000));
    // A range at the very top of the space.
    CHECK(range_within(kMax - 0xfff, 0x1000, kMax - 0xfff, 0x1000));
    CHECK_FALSE(range_within(kMax - 0xfff, 0x1001, kMax - 0xfff, 0x1000));
}

TEST_CASE("translation factories reject bad input", "[mtt]") {
    std::vector<Page> mem(2);
    std::array<std::byte *, 2> pages = {mem[0].bytes.data(), mem[1].bytes.data()};

    CHECK(Translation::contiguous(0x1000, 0, mem[0].bytes.data()) == nullptr);
    CHECK(Translation::contiguous(0x1000, 16, nullptr) == nullptr);
    CHECK(Translation::contiguous(kMax, 2, mem[0].bytes.data()) == nullptr);
    CHECK(Translation::contiguous(kMax, 1, mem[0].bytes.data()) != nullptr);

    CHECK(Translation::page_list(0x1000, 16, 0, {}) == nullptr);        // no pages
    CHECK(Translation::page_list(0x1000, 0, 0, pages) == nullptr);      // length 0
    CHECK(Translation::page_list(0x1000, 16, 4096, pages) == nullptr);  // FBO too big
    CHECK(Translation::page_list(0x1100, 2 * 4096 - 0x100, 0x100, pages) != nullptr);
    CHECK(Translation::page_list(0x1100, 2 * 4096 - 0x100 + 1, 0x100, pages) == nullptr);
    CHECK(Translation::page_list(kMax - 0xfff, 0x1001, 0, pages) == nullptr);  // wraps

    std::array<std::byte *, 2> unaligned = {mem[0].bytes.data(), mem[1].bytes.data() + 8};
    CHECK(Translation::page_list(0x1000, 16, 0, unaligned) == nullptr);
    std::array<std::byte *, 2> with_null = {mem[0].bytes.data(), nullptr};
    CHECK(Translation::page_list(0x1000, 16, 0, with_null) == nullptr);

    CHECK(Translation::logical(nullptr) == nullptr);
}

TEST_CASE("contiguous translation is one chunk at the right address", "[mtt]") {
    std::vector<std::byte> mem(10000);
    const auto t = Translation::contiguous(0x7000'0000, mem.size(), mem.data());
    REQUIRE(t != nullptr);
    CHECK(t->kind() == Translation::Kind::kContiguous);

    bool ok = false;
    auto chunks = chunks_of(*t, 0x7000'0000 + 123, 9000, &ok);
    CHECK(ok);
    CHECK(chunks == std::vector<Chunk>{{mem.data() + 123, 9000}});

    // Exactly to the end, then one byte past (fn must not be called).
    chunks = chunks_of(*t, 0x7000'0000 + 9999, 1, &ok);
    CHECK(ok);
    CHECK(chunks.size() == 1);
    chunks = chunks_of(*t, 0x7000'0000 + 9999, 2, &ok);
    CHECK_FALSE(ok);
    CHECK(chunks.empty());
    chunks = chunks_of(*t, 0x7000'0000 - 1, 2, &ok);
    CHECK_FALSE(ok);
    CHECK(chunks.empty());
    // Zero length: nothing to do, but the address must still be inside.
    chunks = chunks_of(*t, 0x7000'0000 + 10000, 0, &ok);
    CHECK(ok);
    CHECK(chunks.empty());
}

TEST_CASE("page-list walk across page boundaries from an unaligned start", "[mtt]") {
    // Four pages deliberately out of device order, none adjacent to the next in the list.
    std::vector<Page> mem(8);
    std::array<std::byte *, 4> pages = {mem[6].bytes.data(), mem[0].bytes.data(),
                                        mem[4].bytes.data(), mem[2].bytes.data()};
    constexpr std::uint32_t kFbo = 0x64;
    constexpr std::uint64_t kBase = 0x12340000 + kFbo;  // iova = FBO (mod 4096)
    constexpr std::uint64_t kLength = 4 * 4096 - kFbo;
    const auto t = Translation::page_list(kBase, kLength, kFbo, pages);
    REQUIRE(t != nullptr);
    CHECK(t->kind() == Translation::Kind::kPageList);

    SECTION("whole range") {
        bool ok = false;
        const auto chunks = chunks_of(*t, kBase, kLength, &ok);
        CHECK(ok);
        CHECK(chunks == std::vector<Chunk>{{pages[0] + kFbo, 4096 - kFbo},
                                           {pages[1], 4096},
                                           {pages[2], 4096},
                                           {pages[3], 4096}});
    }
    SECTION("unaligned start and end inside the range") {
        // Starts 10 bytes into the region (page 0 offset 0x6e), ends 0x20 into page 3.
        const std::uint64_t start = kBase + 10;
        const std::uint64_t end_offset_in_page3 = 0x20;
        const std::uint64_t length = (4096 - (kFbo + 10)) + 2 * 4096 + end_offset_in_page3;
        bool ok = false;
        const auto chunks = chunks_of(*t, start, length, &ok);
        CHECK(ok);
        CHECK(chunks == std::vector<Chunk>{{pages[0] + kFbo + 10, 4096 - kFbo - 10},
                                           {pages[1], 4096},
                                           {pages[2], 4096},
                                           {pages[3], end_offset_in_page3}});
    }
    SECTION("a range inside one page") {
        const auto chunks = chunks_of(*t, kBase + 4096, 100);
        // kBase + 4096 is page 1 at offset kFbo.
        CHECK(chunks == std::vector<Chunk>{{pages[1] + kFbo, 100}});
    }
    SECTION("exactly the last byte, and one past") {
        bool ok = false;
        auto chunks = chunks_of(*t, kBase + kLength - 1, 1, &ok);
        CHECK(ok);
        CHECK(chunks == std::vector<Chunk>{{pages[3] + 4095, 1}});
        chunks = chunks_of(*t, kBase + kLength - 1, 2, &ok);
        CHECK_FALSE(ok);
        CHECK(chunks.empty());
    }
    SECTION("copy helpers place bytes page by page") {
        std::vector<std::uint8_t> src(kLength - 20);
        for (std::size_t i = 0; i < src.size(); ++i)
            src[i] = static_cast<std::uint8_t>(i * 7 + 1);
        REQUIRE(t->copy_to(kBase + 20, src.data(), src.size()));
        // Byte i of the copy sits at region offset 20 + i = virtual offset kFbo + 20 + i.
        for (std::size_t i = 0; i < src.size(); i += 509) {
            const std::uint64_t virt = kFbo + 20 + i;
            const auto *where = pages[virt / 4096] + virt % 4096;
            INFO("byte " << i);
            CHECK(static_cast<std::uint8_t>(*where) == src[i]);
        }
        std::vector<std::uint8_t> back(src.size());
        REQUIRE(t->copy_from(kBase + 20, back.data(), back.size()));
        CHECK(back == src);
        // Out of range: refused, nothing copied.
        CHECK_FALSE(t->copy_from(kBase + 20, back.data(), back.size() + 1));
        CHECK_FALSE(t->copy_to(kBase - 1, src.data(), 1));
    }
}

TEST_CASE("adjacent pages are merged into one chunk", "[mtt]") {
    std::vector<Page> mem(4);
    // pages 0,1 adjacent in device memory; then 3; then 2 (backwards: not adjacent).
    std::array<std::byte *, 4> pages = {mem[0].bytes.data(), mem[1].bytes.data(),
                                        mem[3].bytes.data(), mem[2].bytes.data()};
    const auto t = Translation::page_list(0x100000, 4 * 4096, 0, pages);
    REQUIRE(t != nullptr);
    const auto chunks = chunks_of(*t, 0x100000 + 100, 4 * 4096 - 200);
    CHECK(chunks == std::vector<Chunk>{{pages[0] + 100, 2 * 4096 - 100},
                                       {pages[2], 4096},
                                       {pages[3], 4096 - 100}});
}

TEST_CASE("identity translation maps an address onto itself", "[mtt]") {
    const auto t = Translation::identity();
    REQUIRE(t != nullptr);
    std::array<std::uint8_t, 64> buffer{};
    const auto address = reinterpret_cast<std::uint64_t>(buffer.data());
    const std::array<std::uint8_t, 3> data = {1, 2, 3};
    REQUIRE(t->copy_to(address + 5, data.data(), data.size()));
    CHECK(buffer[5] == 1);
    CHECK(buffer[7] == 3);
    const auto chunks = chunks_of(*t, address, buffer.size());
    CHECK(chunks == std::vector<Chunk>{{reinterpret_cast<std::byte *>(buffer.data()), 64}});
    CHECK_FALSE(t->covers(kMax, 1));  // the identity space stops one byte short of 2^64
}

TEST_CASE("logical translation resolves per page and stops at an unmapped page", "[mtt]") {
    std::vector<Page> mem(3);
    auto space = std::make_shared<FakeLogicalSpace>();
    space->map(0x5000, mem[2].bytes.data());
    space->map(0x6000, mem[0].bytes.data());
    // 0x7000 unmapped
    space->map(0x8000, mem[1].bytes.data());
    const auto t = Translation::logical(space);
    REQUIRE(t != nullptr);
    CHECK(t->kind() == Translation::Kind::kLogical);

    CHECK(t->is_mapped(0x5000, 2 * 4096));
    CHECK(t->is_mapped(0x5fff, 2));
    CHECK_FALSE(t->is_mapped(0x6fff, 2));
    CHECK_FALSE(t->is_mapped(0x4fff, 1));
    CHECK(t->is_mapped(0x8000, 4096));
    CHECK_FALSE(t->is_mapped(0x8000, 4097));

    bool ok = true;
    auto chunks = chunks_of(*t, 0x5010, 2 * 4096, &ok);
    CHECK_FALSE(ok);  // runs into 0x7000
    CHECK(chunks == std::vector<Chunk>{{mem[2].bytes.data() + 0x10, 4096 - 0x10},
                                       {mem[0].bytes.data(), 4096}});
    chunks = chunks_of(*t, 0x5010, 4096, &ok);
    CHECK(ok);
    CHECK(chunks.size() == 2);
}

TEST_CASE("dma range accesses are bounded by the checked range", "[mtt]") {
    std::vector<std::byte> mem(256);
    auto t = Translation::contiguous(0x9000, mem.size(), mem.data());
    const DmaRange range(t, 0x9010, 32);  // a checked sub-range
    CHECK(range.length() == 32);
    std::array<std::byte, 33> buffer{};
    CHECK(range.copy_to(0, buffer.data(), 32));
    CHECK(range.copy_to(31, buffer.data(), 1));
    CHECK_FALSE(range.copy_to(31, buffer.data(), 2));  // past the checked end
    CHECK_FALSE(range.copy_from(0, buffer.data(), 33));
    CHECK_FALSE(range.copy_from(kMax, buffer.data(), 2));  // offset + length wraps
    CHECK(range.copy_from(32, buffer.data(), 0));
    std::size_t total = 0;
    CHECK(range.for_each_chunk([&total](std::byte *, std::size_t n) { total += n; }));
    CHECK(total == 32);

    const DmaRange empty;
    CHECK(empty.empty());
    CHECK(empty.copy_to(0, buffer.data(), 0));
    CHECK_FALSE(empty.copy_to(0, buffer.data(), 1));
}
