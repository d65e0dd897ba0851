// profile.hpp - device profiles: what an adapter reports (hw::DeviceLimits), what
// each pipeline stage costs on the virtual clock, and the RC transport defaults.
//
// Costs follow reference/rnic-model.md §4.3 (defaults to calibrate): doorbell
// 200 ns, DMA read round trip 500 ns (+0.077 ns/B, ~13 GB/s), DMA write 250 ns,
// TX/RX pipeline 150 ns per packet, 100 Gb/s link (0.08 ns/B) with 82 B of
// framing per packet (62 B RoCEv2/IPv4 + 20 B preamble/IFG), 10 ns propagation.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "softndk/hw_interface.hpp"

namespace softndk::emu {

struct CostModel {
    uint32_t doorbell_ns = 200;
    uint32_t wqe_fetch_ns = 500;    // DMA read of the first 64 B of a WQE batch
    uint32_t dma_read_ns = 500;     // payload gather round trip
    uint32_t dma_write_ns = 250;    // payload scatter, CQE, EQE (posted)
    uint32_t dma_ps_per_byte = 77;  // PCIe Gen3 x16, ~13 GB/s
    uint32_t tx_packet_ns = 150;
    uint32_t rx_packet_ns = 150;
    uint32_t link_ps_per_byte = 80;      // 100 Gb/s
    uint32_t frame_overhead_bytes = 82;  // Ethernet+IPv4+UDP+BTH+ICRC+FCS+preamble/IFG
    uint32_t propagation_ns = 10;

    uint64_t wqe_fetch(uint64_t bytes) const {
        return wqe_fetch_ns + per_byte(bytes > 64 ? bytes - 64 : 0, dma_ps_per_byte);
    }
    uint64_t dma_read(uint64_t bytes) const {
        return dma_read_ns + per_byte(bytes, dma_ps_per_byte);
    }
    uint64_t dma_write(uint64_t bytes) const {
        return dma_write_ns + per_byte(bytes, dma_ps_per_byte);
    }
    uint64_t wire(uint64_t packet_bytes) const {
        return per_byte(packet_bytes + frame_overhead_bytes, link_ps_per_byte) + propagation_ns;
    }
    static uint64_t per_byte(uint64_t bytes, uint32_t ps) { return bytes * ps / 1000; }
};

// RC transport attributes every QP of the device gets (IB QP attributes; NDK has no
// way to set them, so they belong to the adapter).
struct TransportDefaults {
    uint8_t retry_count = 7;              // 3 bits; PSN-sequence and ACK-timeout retries
    uint8_t rnr_retry = 7;                // 3 bits; 7 = infinite (IBA)
    uint8_t min_rnr_timer = 12;           // 5-bit code, 12 = 0.64 ms (wire::rnr_timer_usec)
    uint8_t ack_timeout = 14;             // 5 bits: 4.096 us << t, 14 = 67 ms; 0 = infinite
    uint32_t window_psns = 128;           // unacknowledged PSNs the requester may have out
    uint32_t ack_req_every = 64;          // AckReq also on every n-th packet of a long message
    uint32_t cm_timeout_ms = 2000;        // REQ without REP/REJ, REP without RTU, DREQ without DREP
    std::optional<uint32_t> initial_psn;  // tests: start every QP at this PSN
};

struct Profile {
    std::string name;
    hw::DeviceLimits limits{};
    CostModel cost{};
    TransportDefaults transport{};
};

// Built-in profiles: "roce-default" (RoCEv2) and "iwarp-default" (reports iWARP;
// the transport inside the host is the same RC engine). nullopt for other names.
std::optional<Profile> find_profile(std::string_view name);
std::vector<std::string_view> profile_names();

// Virtual clock of one device (functional mode): counts modelled nanoseconds.
// Stages charge their cost; a packet carries its sender's time and the receiver
// never runs behind it (Lamport-style), so times are causally consistent.
class VirtualClock {
  public:
    uint64_t now() const { return ns_.load(std::memory_order_relaxed); }
    uint64_t charge(uint64_t ns) { return ns_.fetch_add(ns, std::memory_order_relaxed) + ns; }
    void observe(uint64_t t) {
        uint64_t cur = ns_.load(std::memory_order_relaxed);
        while (cur < t && !ns_.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
        }
    }

  private:
    std::atomic<uint64_t> ns_{0};
};

}  // namespace softndk::emu
