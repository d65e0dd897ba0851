// rc/placement.hpp: scatter, and the deferred placement of a run's payload.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <numeric>
#include <vector>

#include "rc/placement.hpp"

using namespace softndk::emu;
using namespace softndk::emu::rc;

namespace {

// `bytes` of host memory behind a contiguous translation at IOVA 0x10000.
struct Region {
    explicit Region(size_t bytes) : memory(bytes, std::byte{0}) {}
    DmaRange range(uint64_t offset, uint64_t length) {
        auto t = Translation::contiguous(0x10000, memory.size(), memory.data());
        return DmaRange(t, 0x10000 + offset, length);
    }
    std::vector<std::byte> memory;
};

std::vector<uint8_t> counting(size_t n) {
    std::vector<uint8_t> v(n);
    std::iota(v.begin(), v.end(), uint8_t{1});
    return v;
}

}  // namespace

TEST_CASE("scatter writes across the scatter list from an offset and never past its end",
          "[rc][placement]") {
    Region r(64);
    const std::array<DmaRange, 2> sges{r.range(0, 10), r.range(32, 10)};
    const auto data = counting(16);
    scatter(sges, 4, data);  // 6 bytes into the first SGE, 10 into the second
    CHECK(std::memcmp(r.memory.data() + 4, data.data(), 6) == 0);
    CHECK(std::memcmp(r.memory.data() + 32, data.data() + 6, 10) == 0);
    CHECK(r.memory[3] == std::byte{0});
    CHECK(r.memory[10] == std::byte{0});
    // More data than the list holds: the rest is not written anywhere.
    const auto big = counting(40);
    scatter(sges, 0, big);
    CHECK(r.memory[42] == std::byte{0});
}

TEST_CASE("outside a run placement is immediate", "[rc][placement]") {
    Region r(16);
    DeferredPlacement p;
    const auto data = counting(8);
    const DmaRange target = r.range(0, 16);
    p.place({&target, 1}, 4, data);
    CHECK(std::memcmp(r.memory.data() + 4, data.data(), 8) == 0);
}

TEST_CASE("in a run contiguous pieces wait and go as one copy at the end", "[rc][placement]") {
    Region r(64);
    DeferredPlacement p;
    const auto data = counting(48);
    const DmaRange target = r.range(0, 64);
    p.begin();
    p.place({&target, 1}, 0, std::span(data).first(16));
    p.place({&target, 1}, 16, std::span(data).subspan(16, 16));
    CHECK(r.memory[0] == std::byte{0});  // deferred
    p.place({&target, 1}, 32, std::span(data).subspan(32, 16));
    p.end();
    CHECK(std::memcmp(r.memory.data(), data.data(), 48) == 0);
}

TEST_CASE("a piece that does not continue the pending one flushes it first", "[rc][placement]") {
    Region r(64);
    DeferredPlacement p;
    const auto data = counting(32);
    const DmaRange a = r.range(0, 16), b = r.range(32, 32);
    p.begin();
    p.place({&a, 1}, 0, std::span(data).first(8));
    // Another target: the first piece is copied now.
    p.place({&b, 1}, 0, std::span(data).subspan(8, 8));
    CHECK(std::memcmp(r.memory.data(), data.data(), 8) == 0);
    CHECK(r.memory[32] == std::byte{0});
    // Same target but a gap in the message offset: flushed too.
    p.place({&b, 1}, 12, std::span(data).subspan(16, 4));
    CHECK(std::memcmp(r.memory.data() + 32, data.data() + 8, 8) == 0);
    CHECK(r.memory[44] == std::byte{0});
    // Next offset of the same target, but the source bytes are not the ones that follow:
    // flushed as well, then this piece waits on its own.
    p.place({&b, 1}, 16, std::span(data).subspan(28, 4));
    CHECK(std::memcmp(r.memory.data() + 44, data.data() + 16, 4) == 0);
    CHECK(r.memory[48] == std::byte{0});
    p.end();
    CHECK(std::memcmp(r.memory.data() + 48, data.data() + 28, 4) == 0);
}

TEST_CASE("a pending copy survives its target being dropped by the engine", "[rc][placement]") {
    Region r(32);
    DeferredPlacement p;
    const auto data = counting(16);
    p.begin();
    {
        std::vector<DmaRange> receive{r.range(0, 32)};
        p.place(receive, 0, data);
    }  // the receive WQE's copy of its SGEs is gone (completed, or flushed by an error)
    p.end();
    CHECK(std::memcmp(r.memory.data(), data.data(), 16) == 0);
}
