#include <catch2/catch.hpp>

#include "time/model.hpp"

using softndk::emu::time::CostModel;
using softndk::emu::time::TimingModel;

namespace {
// Round numbers, so each expectation can be worked out by hand.
CostModel simple() {
    CostModel c;
    c.doorbell_ns = 100;
    c.doorbell_gap_ns = 10;
    c.blueflame_bytes = 256;
    c.blueflame_ns = 20;
    c.dma_read_ns = 500;
    c.dma_write_ns = 200;
    c.pcie_ps_per_byte = 100;  // 10 GB/s
    c.pcie_tlp_bytes = 256;
    c.pcie_tlp_overhead = 24;
    c.processing_units = 4;
    c.pu_wqe_ns = 50;
    c.pu_packet_ns = 30;
    c.cache_miss_ns = 0;  // = dma_read_ns
    c.qpc_cache_entries = 2;
    c.mpt_cache_entries = 2;
    c.mtt_cache_entries = 4;
    c.tx_pipeline_ns = 100;
    c.rx_pipeline_ns = 120;
    c.pipeline_packet_ns = 5;
    c.link_mbps = 100000;  // 100 Gb/s: 80 ps per byte
    c.frame_overhead_bytes = 66;
    c.propagation_ns = 10;
    c.switch_ns = 0;
    return c;
}
}  // namespace

TEST_CASE("The ideal profile switches the model off", "[model]") {
    CostModel zero{};
    zero.doorbell_ns = zero.doorbell_gap_ns = zero.blueflame_ns = 0;
    zero.dma_read_ns = zero.dma_write_ns = zero.pcie_ps_per_byte = 0;
    zero.pu_wqe_ns = zero.pu_packet_ns = zero.pu_cqe_ns = zero.cache_miss_ns = 0;
    zero.tx_pipeline_ns = zero.rx_pipeline_ns = zero.pipeline_packet_ns = 0;
    zero.link_mbps = zero.propagation_ns = zero.switch_ns = 0;
    REQUIRE(zero.ideal());
    TimingModel m(zero);
    CHECK_FALSE(m.enabled());
    CHECK(m.doorbell(7, true) == 7);
    CHECK(m.dma_read(7, 1 << 20) == 7);
    CHECK(m.dma_write(7, 1 << 20) == 7);
    CHECK(m.send_unit(2, 7, 0, TimingModel::access(0x100, 0, 1 << 20)) == 7);
    CHECK(m.transmit(7, 4096, false) == 7);
    CHECK(m.receive(7) == 7);
    const auto unit_then_write = m.receive_unit_then_dma_write(2, 7, 0, {}, 4096);
    CHECK(unit_then_write.processed == 7);
    CHECK(unit_then_write.written == 7);
    CHECK_FALSE(CostModel{}.ideal());  // the defaults model a real RNIC
}

TEST_CASE("A doorbell takes the MMIO latency, and BlueFlame adds its push", "[model]") {
    TimingModel m(simple());
    CHECK(m.doorbell(1000, false) == 1100);
    CHECK(m.doorbell(5000, true) == 5120);
}

TEST_CASE("The MMIO path takes one doorbell per gap", "[model]") {
    TimingModel m(simple());
    CHECK(m.doorbell(0, false) == 100);
    CHECK(m.doorbell(0, false) == 110);
    CHECK(m.doorbell(0, false) == 120);
}

TEST_CASE("A DMA read costs its latency plus its bytes, TLP headers included", "[model]") {
    TimingModel m(simple());
    // 64 B in one TLP: (64 + 24) B * 100 ps = 8.8 ns of channel time.
    CHECK(m.dma_read(1000, 64) == 1000 + 8 + 500);  // floor of 1008.8 ns, then latency
    // 1024 B: 4 TLPs, (1024 + 96) * 100 ps = 112 ns.
    TimingModel n(simple());
    CHECK(n.dma_read(0, 1024) == 112 + 500);
}

TEST_CASE("DMA reads pipeline: the channel is busy for the bytes, not the latency", "[model]") {
    TimingModel m(simple());
    const uint64_t first = m.dma_read(0, 1024);   // channel [0, 112)
    const uint64_t second = m.dma_read(0, 1024);  // channel [112, 224)
    CHECK(first == 612);
    CHECK(second == 724);  // 112 ns later, not 500
}

TEST_CASE("DMA writes have their own channel", "[model]") {
    TimingModel m(simple());
    m.dma_read(0, 1 << 16);  // keep the read channel busy for a long time
    CHECK(m.dma_write(0, 1024) == 112 + 200);
}

TEST_CASE("One processing unit serves one QP at a time, and units work in parallel", "[model]") {
    CostModel c = simple();
    c.qpc_cache_entries = 8;
    TimingModel m(c);
    // Warm the QP contexts (a first touch misses and stalls).
    for (uint32_t qp : {2u, 3u, 6u})
        m.send_unit(qp, 0, 0);
    const uint64_t base = 100000;
    CHECK(m.send_unit(2, base, 50) == base + 50);
    CHECK(m.send_unit(2, base, 50) == base + 100);  // same QP: queued on its unit
    CHECK(m.send_unit(3, base, 50) == base + 50);   // another unit: in parallel
    // QP 6 shares unit 2 (6 mod 4) with QP 2.
    CHECK(m.send_unit(6, base, 50) == base + 150);
}

TEST_CASE("With a unit count that is not a power of two, QP n is served by unit n mod count",
          "[model]") {
    CostModel c = simple();
    c.processing_units = 3;
    c.qpc_cache_entries = 8;
    TimingModel m(c);
    for (uint32_t qp : {1u, 2u, 4u, 5u})
        m.send_unit(qp, 0, 0);  // warm the QP contexts
    const uint64_t base = 100000;
    CHECK(m.send_unit(1, base, 50) == base + 50);
    CHECK(m.send_unit(2, base, 50) == base + 50);   // unit 2: in parallel
    CHECK(m.send_unit(4, base, 50) == base + 100);  // 4 mod 3 = unit 1, behind QP 1
    CHECK(m.send_unit(5, base, 50) == base + 100);  // 5 mod 3 = unit 2, behind QP 2
}

TEST_CASE("A cache miss stalls the unit for a DMA read of the entry", "[model]") {
    TimingModel m(simple());
    // QP context miss: 500 ns + (256 + 24) B * 100 ps = 28 ns.
    CHECK(m.send_unit(2, 0, 50) == 50 + 500 + 28);
    CHECK(m.send_unit(2, 10000, 50) == 10050);  // hit
    // An access through MPT index 5 spanning two pages: MPT miss (64 B -> 8.8 ns)
    // and two MTT misses (8 B -> 3.2 ns each), all stalling the unit.
    const auto access = TimingModel::access(5 << 8 | 0x11, 0x1ff0, 0x20);
    CHECK(access.mpt_index == 5);
    CHECK(access.mtt_pages == 2);
    const uint64_t stalled = m.send_unit(2, 20000, 50, access);
    CHECK(stalled == 20000 + 50 + 500 + 8 + 500 + 3 + 500 + 3 + 1);  // ps summed, then floored
    CHECK(m.send_unit(2, 30000, 50, access) == 30050);               // all hits now
    const auto stats = m.stats();
    CHECK(stats.qpc_misses == 1);
    CHECK(stats.mpt_misses == 1);
    CHECK(stats.mtt_misses == 2);
}

TEST_CASE("A working set larger than the QP-context cache misses every time", "[model]") {
    TimingModel m(simple());  // 2 QP contexts cached
    uint64_t t = 0;
    for (int round = 0; round < 3; ++round)
        for (uint32_t qp : {4u, 8u, 12u})  // one unit, three QPs
            t = m.send_unit(qp, t, 50);
    CHECK(m.stats().qpc_hits == 0);
    CHECK(m.stats().qpc_misses == 9);
    m.forget_qp(12);
    CHECK(m.stats().qpc_misses == 9);
}

TEST_CASE("Transmit: TX pipeline, serialisation at the port rate, propagation", "[model]") {
    TimingModel m(simple());
    // WRITE_ONLY of 8 B: BTH 12 + RETH 16 + 8 + ICRC 4 = 40 B; + 66 = 106 B on the wire
    // = 8.48 ns at 100 Gb/s.
    CHECK(m.transmit(0, 40, false) == 100 + 8 + 10);
    // The next packet leaves the pipeline at 105 ns but waits for the link until the
    // first is out (108.48), then takes 8.48 ns: it arrives at 116.96 + 10.
    CHECK(m.transmit(0, 40, false) == 116 + 10);
}

TEST_CASE("A frame is at least 64 B plus preamble and gap", "[model]") {
    const CostModel c = simple();
    CHECK(softndk::emu::time::wire_bytes(c, 0) == 84);
    CHECK(softndk::emu::time::wire_bytes(c, 40) == 106);
}

TEST_CASE("Loopback skips the link", "[model]") {
    TimingModel m(simple());
    CHECK(m.transmit(0, 4096, true) == 100);
    CHECK(m.receive(0) == 120);
}

TEST_CASE("The link paces a stream at its rate", "[model]") {
    TimingModel m(simple());
    // 4096 B payload packets: 4096 + 12 + 4 + 66 = 4178 B = 334.24 ns each.
    uint64_t last = 0;
    for (int i = 0; i < 100; ++i)
        last = m.transmit(0, 4096 + 16, false);
    CHECK(last == 100 + 33424 + 10);  // 100 packets = 33424 ns of serialisation
}

TEST_CASE("Times far from 0 book relative to the model's origin and do not overflow", "[model]") {
    // Paced mode: model time is the host's uptime; a year of it in picoseconds is past
    // 2^64. With the origin there, the steps cost what they cost at time 0.
    const uint64_t year = uint64_t{365} * 24 * 3600 * 1000000000;
    TimingModel at_zero(simple());
    TimingModel paced(simple(), year);
    CHECK(paced.dma_read(year + 1000, 1024) == year + at_zero.dma_read(1000, 1024));
    CHECK(paced.transmit(year, 40, false) == year + at_zero.transmit(0, 40, false));
    // An untrusted time before the origin counts as the origin.
    CHECK(paced.doorbell(5, false) == year + 100);
}

TEST_CASE("A receive unit's work then a DMA write in one step books what the two steps book",
          "[model]") {
    // Two models fed the same requests, one through receive_unit() and dma_write(), the
    // other through receive_unit_then_dma_write(): their answers and their later
    // bookings (queued behind the same intervals, the same cache hits) agree.
    TimingModel apart(simple());
    TimingModel together(simple());
    const auto access = TimingModel::access(5 << 8, 0x1000, 4096);
    for (uint64_t i = 0; i < 200; ++i) {
        const uint32_t qp = static_cast<uint32_t>(i % 3);
        const uint64_t t = 1000 + i * 90;  // faster than the DMA channel: it backs up
        const uint64_t bytes = 256 + 64 * (i % 5);
        const uint64_t processed = apart.receive_unit(qp, t, 30, access);
        const uint64_t written = apart.dma_write(processed, bytes);
        const auto both = together.receive_unit_then_dma_write(qp, t, 30, access, bytes);
        REQUIRE(both.processed == processed);
        REQUIRE(both.written == written);
        REQUIRE(together.dma_write(t, 64) == apart.dma_write(t, 64));  // a CQE between
    }
    CHECK(together.stats().dma_write_busy_ns == apart.stats().dma_write_busy_ns);
    CHECK(together.stats().mtt_misses == apart.stats().mtt_misses);
}
