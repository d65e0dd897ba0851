// Key checks racing control-path changes. Short on purpose (2 shared cores); its value is
// under the tsan preset, where any unsynchronised access to an entry is reported, and in
// the consistency assertion: a check that accepted variant v must hand back the
// translation that variant v was registered with, never a neighbour's.
//
// Writers do not rely on timing to overlap with the readers: after publishing a new valid
// token a writer waits until the readers have completed kReaders + 1 loop iterations, so
// at least one iteration started after the publication and checked the new token while
// it was valid. That makes "every kind of key was successfully checked mid-race" a
// deterministic assertion.
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "memory/mpt.hpp"

namespace {

using namespace softndk::emu;
using softndk::hw::make_token;
using softndk::hw::token_index;
using softndk::hw::token_variant;

constexpr std::uint8_t kLR = softndk::hw::kAccessLocalRead;
constexpr std::uint8_t kLW = softndk::hw::kAccessLocalWrite;
constexpr std::uint8_t kRR = softndk::hw::kAccessRemoteRead;
constexpr std::uint32_t kPd = 3;
constexpr std::uint32_t kQp = 9;
constexpr std::size_t kPages = 2;
constexpr int kReaders = 2;

struct alignas(4096) Page {
    std::array<std::byte, 4096> bytes;
};

// Two page sets with distinct fill patterns; which one a registration uses follows from
// the variant's parity, so a reader can tell from its token which bytes it must see.
struct PatternedPages {
    std::vector<Page> even = std::vector<Page>(kPages);
    std::vector<Page> odd = std::vector<Page>(kPages);
    std::vector<std::byte *> even_list, odd_list;
    PatternedPages() {
        for (std::size_t i = 0; i < kPages; ++i) {
            even[i].bytes.fill(std::byte{0xee});
            odd[i].bytes.fill(std::byte{0x0d});
            even_list.push_back(even[i].bytes.data());
            odd_list.push_back(odd[i].bytes.data());
        }
    }
    std::byte expected(std::uint8_t variant) const {
        return (variant & 1) ? std::byte{0x0d} : std::byte{0xee};
    }
};

struct ReaderStats {
    std::atomic<std::uint64_t> successes{0};
    std::atomic<std::uint64_t> failures{0};
    std::atomic<std::uint64_t> inconsistent{0};  // must stay 0
};

}  // namespace

TEST_CASE("concurrent checks against fast-register, invalidate, bind and deregister",
          "[mpt][concurrency]") {
    MemoryProtectionTable table(MptLimits{1024, 4});
    PatternedPages pages;
    constexpr std::uint64_t kIova = 0x4000'0000;
    constexpr std::uint64_t kLength = kPages * 4096;
    const int kRounds = 300;

    // Fast-register MR whose pages flip with every registration.
    const auto frmr = table.allocate(MptType::kFastRegMr, kPd).token;
    REQUIRE(table.init_fast_register(frmr, kPages, true, FastRegisterKeys::kRotate) == KeyStatus::kOk);
    std::atomic<std::uint32_t> frmr_token{0};

    // A RegisterMr MR with a type-2 window over it, both re-created in a loop. The MR is
    // placed on the same stripe as the fast-register MR to make the locks collide.
    std::vector<std::byte> mr_memory(8192, std::byte{0x77});
    std::atomic<std::uint32_t> mr_token{0};
    std::atomic<std::uint32_t> window_token{0};
    std::uint32_t mr = 0;
    for (;;) {  // allocate until an index shares frmr's stripe
        const auto t = table.allocate(MptType::kMr, kPd).token;
        if (token_index(t) % MemoryProtectionTable::kStripes ==
            token_index(frmr) % MemoryProtectionTable::kStripes) {
            mr = t;
            break;
        }
    }
    const auto window = table.allocate(MptType::kMwType2, kPd).token;

    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> reader_iterations{0};
    const auto wait_for_readers = [&] {
        const std::uint64_t seen = reader_iterations.load(std::memory_order_acquire);
        while (reader_iterations.load(std::memory_order_acquire) < seen + kReaders + 1) {
            // Sleep rather than spin: four threads share two cores with other work.
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    };
    std::atomic<int> writer_errors{0};  // Catch2 assertions are main-thread only
    ReaderStats frmr_stats, mr_stats, window_stats;

    const auto fast_register_request = [&](std::uint32_t token) {
        FastRegisterRequest r;
        r.token = token;
        r.qp_pd = kPd;
        r.access = kLW | kRR;
        r.iova = kIova;
        r.length = kLength;
        r.first_byte_offset = 0;
        r.pages = (token_variant(token) & 1) ? pages.odd_list : pages.even_list;
        return r;
    };
    const auto bumped = [](std::uint32_t token) {
        return make_token(token_index(token), static_cast<std::uint8_t>(token_variant(token) + 1));
    };

    auto fast_register_writer = [&] {
        // The provider's policy: each registration uses the last handed-out variant + 1,
        // which is also what the device's invalidation bumped it to.
        std::uint32_t token = frmr;
        for (int i = 0; i < kRounds; ++i) {
            token = bumped(token);
            if (table.fast_register(fast_register_request(token)) != KeyStatus::kOk) {
                ++writer_errors;
                return;
            }
            frmr_token.store(token, std::memory_order_release);
            wait_for_readers();
            if (table.local_invalidate(token, kQp, kPd) != KeyStatus::kOk) {
                ++writer_errors;
                return;
            }
        }
        // Leave it registered so that the final check below can succeed.
        token = bumped(token);
        if (table.fast_register(fast_register_request(token)) != KeyStatus::kOk) ++writer_errors;
        frmr_token.store(token, std::memory_order_release);
    };

    auto mr_writer = [&] {
        std::uint32_t mr_current = mr;
        std::uint32_t w = window;
        for (int i = 0; i < kRounds; ++i) {
            const auto reg = table.register_mr(
                mr_current, kLW | kRR, kIova, mr_memory.size(),
                Translation::contiguous(kIova, mr_memory.size(), mr_memory.data()));
            if (!reg.ok()) {
                ++writer_errors;
                return;
            }
            mr_current = reg.token;
            mr_token.store(mr_current, std::memory_order_release);
            wait_for_readers();
            w = bumped(w);
            if (table.bind({w, mr_current, kQp, kPd, kRR, kIova + 64, 128}) != KeyStatus::kOk) {
                ++writer_errors;
                return;
            }
            window_token.store(w, std::memory_order_release);
            wait_for_readers();
            // Cannot deregister while the window is bound.
            if (table.deregister_mr(mr_current) != KeyStatus::kBoundWindows) ++writer_errors;
            if (table.local_invalidate(w, kQp, kPd) != KeyStatus::kOk) ++writer_errors;
            w = table.inspect(token_index(w))->token;  // bumped by the invalidation
            if (table.deregister_mr(mr_current) != KeyStatus::kOk) ++writer_errors;
            // Index churn: allocate and free another entry.
            const auto spare = table.allocate(MptType::kMwType1, kPd);
            if (!spare.ok() || table.deallocate(spare.token) != KeyStatus::kOk) ++writer_errors;
        }
    };

    auto reader = [&] {
        std::array<std::byte, kLength> copy;
        while (!stop.load(std::memory_order_acquire)) {
            // Fast-register MR: what we read must match the variant we checked.
            const std::uint32_t ft = frmr_token.load(std::memory_order_acquire);
            const KeyCheck c =
                table.check(ft, kPd, kRR, kIova, kLength, kQp, AccessOrigin::kRemote);
            if (c.ok()) {
                ++frmr_stats.successes;
                if (!c.range.copy_from(0, copy.data(), copy.size())) ++frmr_stats.inconsistent;
                const std::byte want = pages.expected(token_variant(ft));
                for (std::size_t i = 0; i < copy.size(); i += 512) {
                    if (copy[i] != want) {
                        ++frmr_stats.inconsistent;
                        break;
                    }
                }
            } else {
                ++frmr_stats.failures;
            }
            // The MR and its window.
            const KeyCheck m = table.check(mr_token.load(std::memory_order_acquire), kPd, kLR,
                                           kIova, 4096, kQp, AccessOrigin::kLocal);
            if (m.ok()) {
                ++mr_stats.successes;
                std::byte b{};
                if (!m.range.copy_from(100, &b, 1) || b != std::byte{0x77}) {
                    ++mr_stats.inconsistent;
                }
            } else {
                ++mr_stats.failures;
            }
            const KeyCheck w = table.check(window_token.load(std::memory_order_acquire), kPd, kRR,
                                           kIova + 64, 128, kQp, AccessOrigin::kRemote);
            if (w.ok()) {
                ++window_stats.successes;
                std::byte b{};
                if (!w.range.copy_from(127, &b, 1) || b != std::byte{0x77}) {
                    ++window_stats.inconsistent;
                }
            } else {
                ++window_stats.failures;
            }
            reader_iterations.fetch_add(1, std::memory_order_release);
        }
    };

    {
        static_assert(kReaders == 2);
        std::thread r1(reader);
        std::thread r2(reader);
        std::thread w1(fast_register_writer);
        std::thread w2(mr_writer);
        w1.join();
        w2.join();
        stop.store(true, std::memory_order_release);
        r1.join();
        r2.join();
    }

    CHECK(writer_errors.load() == 0);
    CHECK(frmr_stats.inconsistent.load() == 0);
    CHECK(mr_stats.inconsistent.load() == 0);
    CHECK(window_stats.inconsistent.load() == 0);
    // Every publication was checked successfully at least once while it was valid.
    CHECK(frmr_stats.successes.load() >= static_cast<std::uint64_t>(kRounds));
    CHECK(mr_stats.successes.load() >= static_cast<std::uint64_t>(kRounds));
    CHECK(window_stats.successes.load() >= static_cast<std::uint64_t>(kRounds));
    // Final state: the fast-register MR is VALID with the last published token.
    const KeyCheck last =
        table.check(frmr_token.load(), kPd, kRR, kIova, kLength, kQp, AccessOrigin::kRemote);
    REQUIRE(last.ok());
    std::array<std::byte, 1> b{};
    REQUIRE(last.range.copy_from(kLength - 1, b.data(), 1));
    CHECK(b[0] == pages.expected(token_variant(frmr_token.load())));
    // Every window was unbound and every MR deregistered at the end of each round.
    CHECK(table.inspect(token_index(mr))->bound_windows == 0);
}

TEST_CASE("a checked range stays usable after its key is deregistered", "[mpt][concurrency]") {
    // The translation is pinned by the DmaRange, so the device never dereferences freed
    // translation state; what the engine may still write is its protocol's business.
    MemoryProtectionTable table(MptLimits{16, 4});
    std::vector<std::byte> memory(64, std::byte{0x42});
    const auto a = table.allocate(MptType::kMr, kPd).token;
    const auto t = table
                       .register_mr(a, kLW, 0x1000, memory.size(),
                                    Translation::contiguous(0x1000, memory.size(), memory.data()))
                       .token;
    const KeyCheck c = table.check(t, kPd, kLR, 0x1000, 64, kQp, AccessOrigin::kLocal);
    REQUIRE(c.ok());
    REQUIRE(table.deregister_mr(t) == KeyStatus::kOk);
    REQUIRE(table.deallocate(t) == KeyStatus::kOk);
    CHECK(table.check(t, kPd, kLR, 0x1000, 64, kQp, AccessOrigin::kLocal).status ==
          KeyStatus::kNotAllocated);
    std::byte b{};
    CHECK(c.range.copy_from(63, &b, 1));
    CHECK(b == std::byte{0x42});
}
