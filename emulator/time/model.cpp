#include "time/model.hpp"

#include <algorithm>
#include <bit>

#include "trace/hooks.hpp"

namespace softndk::emu::time {
namespace {
constexpr uint64_t kPageShift = 12;
constexpr uint64_t kQpcEntryBytes = 256;  // QP context read on a miss
constexpr uint64_t kMptEntryBytes = 64;
constexpr uint64_t kMttEntryBytes = 8;
constexpr uint64_t kMinFrameBytes = 84;  // 64 B Ethernet minimum + preamble/IFG

// Timelines run in picoseconds: a minimum frame at 400 Gb/s is 1.68 ns, and rounding
// each booking to whole nanoseconds would cap the packet rate well below the link's.
// The steps take and return nanoseconds; points in time are booked relative to the
// model's origin (at_ps / at_ns), durations as they are.
constexpr uint64_t ps(uint64_t ns) {
    return ns * 1000;
}
constexpr uint64_t ns_of(uint64_t ps) {
    return ps / 1000;
}
}  // namespace

bool CostModel::ideal() const {
    return doorbell_ns == 0 && doorbell_gap_ns == 0 && blueflame_ns == 0 && dma_read_ns == 0 &&
           dma_write_ns == 0 && pcie_ps_per_byte == 0 && pu_wqe_ns == 0 && pu_packet_ns == 0 &&
           pu_cqe_ns == 0 && cache_miss_ns == 0 && tx_pipeline_ns == 0 && rx_pipeline_ns == 0 &&
           pipeline_packet_ns == 0 && link_mbps == 0 && propagation_ns == 0 && switch_ns == 0 &&
           host_turnaround_ns == 0;
}

uint64_t wire_bytes(const CostModel &cost, uint64_t transport_bytes) {
    return std::max(transport_bytes + cost.frame_overhead_bytes, kMinFrameBytes);
}

TimingModel::TimingModel(const CostModel &cost, uint64_t origin_ns)
    : cost_(cost),
      origin_ns_(origin_ns),
      enabled_(!cost.ideal()),
      tlp_bytes_(std::max<uint64_t>(cost.pcie_tlp_bytes, 1)),
      tlp_shift_(std::has_single_bit(tlp_bytes_) ? std::countr_zero(tlp_bytes_) : -1),
      unit_count_(std::max<uint32_t>(cost.processing_units, 1)),
      units_power_of_two_(std::has_single_bit(unit_count_)),
      send_units_(unit_count_),
      receive_units_(unit_count_),
      qpc_(cost.qpc_cache_entries),
      mpt_(cost.mpt_cache_entries),
      mtt_(cost.mtt_cache_entries) {}

uint64_t TimingModel::pcie_occupancy(uint64_t bytes) const {
    // TLP sizes are powers of two on real PCIe (every profile's is): a shift, not a
    // division, on every DMA the model books.
    const uint64_t tlps =
        std::max<uint64_t>(tlp_shift_ >= 0 ? (bytes + tlp_bytes_ - 1) >> tlp_shift_
                                           : (bytes + tlp_bytes_ - 1) / tlp_bytes_,
                           1);
    return (bytes + tlps * cost_.pcie_tlp_overhead) * cost_.pcie_ps_per_byte;  // ps
}

uint64_t TimingModel::doorbell(uint64_t posted, bool blueflame) {
    if (!enabled_) return posted;
    std::lock_guard lock(lock_);
    const uint64_t start = mmio_.reserve(at_ps(posted), ps(cost_.doorbell_gap_ns));
    return at_ns(start) + cost_.doorbell_ns + (blueflame ? cost_.blueflame_ns : 0);
}

uint64_t TimingModel::dma_read(uint64_t t, uint64_t bytes) {
    if (!enabled_) return t;
    std::lock_guard lock(lock_);
    return dma_read_locked(t, bytes);
}

uint64_t TimingModel::dma_read_locked(uint64_t t, uint64_t bytes) {
    if (!enabled_) return t;
    const uint64_t busy = pcie_occupancy(bytes);
    const uint64_t done = at_ns(dma_read_.reserve(at_ps(t), busy) + busy) + cost_.dma_read_ns;
    tracing::dma(this, true, t, done, bytes);
    return done;
}

uint64_t TimingModel::dma_write(uint64_t t, uint64_t bytes) {
    if (!enabled_) return t;
    std::lock_guard lock(lock_);
    return dma_write_locked(t, bytes);
}

uint64_t TimingModel::dma_write_locked(uint64_t t, uint64_t bytes) {
    const uint64_t busy = pcie_occupancy(bytes);
    const uint64_t done = at_ns(dma_write_.reserve(at_ps(t), busy) + busy) + cost_.dma_write_ns;
    tracing::dma(this, false, t, done, bytes);
    return done;
}

uint64_t TimingModel::send_unit(uint32_t qp, uint64_t t, uint32_t ns, const Lookup &lookup) {
    return process(send_units_, qp, t, ns, lookup);
}

uint64_t TimingModel::receive_unit(uint32_t qp, uint64_t t, uint32_t ns, const Lookup &lookup) {
    return process(receive_units_, qp, t, ns, lookup);
}

uint64_t TimingModel::process(std::vector<Timeline> &units, uint32_t qp, uint64_t t, uint32_t ns,
                              const Lookup &lookup) {
    if (!enabled_) return t;
    std::lock_guard lock(lock_);
    return process_locked(units, qp, t, ns, lookup);
}

uint64_t TimingModel::process_locked(std::vector<Timeline> &units, uint32_t qp, uint64_t t,
                                     uint32_t ns, const Lookup &lookup) {
    const uint64_t miss = cost_.cache_miss_ns != 0 ? cost_.cache_miss_ns : cost_.dma_read_ns;
    uint64_t stall = 0;  // ps
    auto fetch = [&](LruCache &cache, uint64_t key, uint64_t entry_bytes) {
        if (!cache.touch(key)) stall += ps(miss) + pcie_occupancy(entry_bytes);
    };
    fetch(qpc_, qp, kQpcEntryBytes);
    if (lookup.mpt_index != 0) fetch(mpt_, lookup.mpt_index, kMptEntryBytes);
    for (uint64_t p = 0; p < lookup.mtt_pages; ++p)
        fetch(mtt_, lookup.mtt_first + p, kMttEntryBytes);
    const uint64_t busy = ps(ns) + stall;
    return at_ns(units[unit_of(qp)].reserve(at_ps(t), busy) + busy);
}

uint64_t TimingModel::transmit(uint64_t t, uint64_t transport_bytes, bool loopback) {
    if (!enabled_) return t;
    std::lock_guard lock(lock_);
    return transmit_locked(t, transport_bytes, loopback);
}

uint64_t TimingModel::transmit_locked(uint64_t t, uint64_t transport_bytes, bool loopback) {
    if (!enabled_) return t;
    uint64_t at =
        tx_pipeline_.reserve(at_ps(t), ps(cost_.pipeline_packet_ns)) + ps(cost_.tx_pipeline_ns);
    if (loopback || cost_.link_mbps == 0) return at_ns(at);
    // bits / (Mb/s) = us; * 1e6 = ps. A division per packet: the last size's answer is
    // kept, as a message's packets mostly share a size.
    if (transport_bytes != serialised_bytes_) {
        serialised_bytes_ = transport_bytes;
        serialise_ps_ = wire_bytes(cost_, transport_bytes) * 8 * 1000000 / cost_.link_mbps;
    }
    const uint64_t serialise = serialise_ps_;
    at = link_.reserve(at, serialise) + serialise;
    return at_ns(at) + cost_.propagation_ns + cost_.switch_ns;
}

uint64_t TimingModel::receive(uint64_t t) {
    if (!enabled_) return t;
    std::lock_guard lock(lock_);
    return receive_locked(t);
}

TimingModel::Received TimingModel::receive_into_unit(uint32_t qp, uint64_t t, uint32_t ns,
                                                     const Lookup &lookup) {
    if (!enabled_) return {t, t};
    std::lock_guard lock(lock_);
    const uint64_t arrived = receive_locked(t);
    return {arrived, process_locked(receive_units_, qp, arrived, ns, lookup)};
}

TimingModel::UnitThenWrite TimingModel::receive_unit_then_dma_write(uint32_t qp, uint64_t t,
                                                                    uint32_t ns,
                                                                    const Lookup &lookup,
                                                                    uint64_t bytes) {
    if (!enabled_) return {t, t};
    std::lock_guard lock(lock_);
    const uint64_t processed = process_locked(receive_units_, qp, t, ns, lookup);
    return {processed, dma_write_locked(processed, bytes)};
}

uint64_t TimingModel::receive_locked(uint64_t t) {
    if (!enabled_) return t;
    return at_ns(rx_pipeline_.reserve(at_ps(t), ps(cost_.pipeline_packet_ns))) +
           cost_.rx_pipeline_ns;
}

TimingModel::Lookup TimingModel::access(uint32_t token, uint64_t iova, uint64_t bytes) {
    const uint32_t index = token >> 8;
    if (index == 0) return {};
    const uint64_t first = iova >> kPageShift;
    const uint64_t last = (iova + std::max<uint64_t>(bytes, 1) - 1) >> kPageShift;
    // MTT entries are per registration: key = MPT index above the page number.
    return Lookup{index, (uint64_t{index} << 44) | (first & ((uint64_t{1} << 44) - 1)),
                  static_cast<uint32_t>(std::min<uint64_t>(last - first + 1, 1u << 20))};
}

void TimingModel::forget_qp(uint32_t qp) {
    std::lock_guard lock(lock_);
    qpc_.erase(qp);
}
void TimingModel::forget_mpt(uint32_t index) {
    std::lock_guard lock(lock_);
    mpt_.erase(index);
}

TimingModel::Stats TimingModel::stats() const {
    std::lock_guard lock(lock_);
    return Stats{qpc_.hits(),
                 qpc_.misses(),
                 mpt_.hits(),
                 mpt_.misses(),
                 mtt_.hits(),
                 mtt_.misses(),
                 ns_of(link_.busy_total()),
                 ns_of(dma_read_.busy_total()),
                 ns_of(dma_write_.busy_total())};
}

}  // namespace softndk::emu::time
