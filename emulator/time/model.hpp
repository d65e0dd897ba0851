// model.hpp - the RNIC's resources in model time (DESIGN §5, docs/timing.md).
//
// A device is a set of resources that work in parallel, each with its own timeline
// (timeline.hpp). A request's timestamps are the path it takes through them:
//
//   SQ doorbell  host post --MMIO--> device (BlueFlame: the WQE came with it)
//   WQE fetch    DMA read of the WQEs the doorbell announced (skipped for BlueFlame)
//   requester    the QP's send unit: QP context (cache), WQE processing; per
//                packet: payload DMA read (skipped for inline), TX pipeline, link
//   link         serialisation at the port rate, propagation, optional switch hop
//   responder    RX pipeline, the QP's receive unit: QP context, MPT and MTT
//                (caches), payload DMA write, ACK out through TX and the link
//   completer    RX pipeline, receive unit, CQE (unit work, then a DMA write)
//
// Latency and occupancy are separate: a DMA read takes dma_read_ns to return but
// occupies its channel only for its bytes, so reads pipeline; a processing unit is
// occupied for its work plus every cache miss it waits for (a miss stalls the unit,
// which is what makes large working sets collapse the message rate).
//
// Costs come from the profile (profile.hpp, profiles/*.ini). A CostModel whose every
// cost is 0 (the `ideal` profile) disables the model: every step returns its input.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "time/timeline.hpp"

namespace softndk::emu::time {

// The profile's [timing] section; each key is the field's name. Defaults are the
// reference figures (rnic-model §4.3) for a PCIe Gen3 x16, 100 Gb/s RoCEv2 RNIC.
struct CostModel {
    // Host interface.
    uint32_t doorbell_ns = 200;      // doorbell MMIO (posted write) reaching the device
    uint32_t doorbell_gap_ns = 4;    // the MMIO path takes one doorbell per this
    uint32_t blueflame_bytes = 256;  // WQE bytes one doorbell write may carry (0: none)
    uint32_t blueflame_ns = 20;      // a BlueFlame write's extra time over a doorbell
    // PCIe: one read and one write channel.
    uint32_t dma_read_ns = 500;       // read round trip, request to the last byte
    uint32_t dma_write_ns = 250;      // write until visible to the host (posted)
    uint32_t pcie_ps_per_byte = 77;   // per direction: ~13 GB/s (Gen3 x16 effective)
    uint32_t pcie_tlp_bytes = 256;    // max payload per TLP
    uint32_t pcie_tlp_overhead = 24;  // header bytes per TLP
    // Processing units: a QP is served by unit (qp number mod processing_units).
    uint32_t processing_units = 16;
    uint32_t pu_wqe_ns = 50;     // requester work per WQE
    uint32_t pu_packet_ns = 25;  // work per received packet (request, response, ACK)
    uint32_t pu_cqe_ns = 10;     // work per CQE written (unsignaled requests save it)
    uint32_t cache_miss_ns = 0;  // a miss's stall; 0 = one dma_read_ns
    uint32_t qpc_cache_entries = 1024;
    uint32_t mpt_cache_entries = 4096;
    uint32_t mtt_cache_entries = 16384;  // 4 KiB pages
    // Per-port pipelines: latency, and occupancy per packet.
    uint32_t tx_pipeline_ns = 150;
    uint32_t rx_pipeline_ns = 150;
    uint32_t pipeline_packet_ns = 4;
    // Link.
    uint32_t link_mbps = 100000;         // port rate, Mb/s
    uint32_t frame_overhead_bytes = 66;  // Ethernet+IPv4+UDP headers, FCS, preamble, IFG
    uint32_t propagation_ns = 10;        // 2 m of cable
    uint32_t switch_ns = 0;              // a switch hop (0: back to back)
    // The host, as far as a calibrated figure includes it: a consumer's time from data
    // the device placed through a QP (a WRITE's payload it polls, a SEND's) to its next
    // doorbell on that QP. Published perftest latencies (ib_write_lat: poll the last
    // byte, post the answer) include it; the reference figures do not (0).
    uint32_t host_turnaround_ns = 0;

    bool ideal() const;  // every cost 0: the model is off
};

// Per-packet wire bytes for `transport_bytes` (BTH .. ICRC) on this link.
uint64_t wire_bytes(const CostModel &cost, uint64_t transport_bytes);

// The on-device cache entries a step needs besides the QP context.
struct CacheLookup {
    uint32_t mpt_index = 0;  // 0: no MPT lookup
    uint64_t mtt_first = 0;  // MTT cache key of the first page (TimingModel::access())
    uint32_t mtt_pages = 0;  // pages the access spans (0: no MTT lookup)
};

// The resources of one device and the path steps over them. Every step takes the
// time the request reaches it and returns the time it leaves. Thread-safe: one lock
// per model, held for the whole of each step (its resources and caches together).
class TimingModel {
  public:
    // `origin_ns`: the earliest model time the device will see. Timelines book in
    // picoseconds relative to it, so paced mode (model time = CLOCK_MONOTONIC, i.e.
    // the host's uptime) cannot overflow them; an earlier time counts as the origin.
    explicit TimingModel(const CostModel &cost, uint64_t origin_ns = 0);
    const CostModel &cost() const { return cost_; }
    bool enabled() const { return enabled_; }

    // Doorbell posted by the host at `posted`; with `blueflame` it carried its WQE.
    uint64_t doorbell(uint64_t posted, bool blueflame);
    uint64_t dma_read(uint64_t t, uint64_t bytes);
    uint64_t dma_write(uint64_t t, uint64_t bytes);
    // Work of `ns` on QP `qp`'s processing unit, plus a stall for each cache miss among
    // the QP context and the `mpt`/`mtt` keys given (0 = none to look up). A device has
    // `processing_units` units for each direction, as RNICs have separate send and
    // receive engines: send_unit() runs the requester's WQEs, receive_unit() every
    // packet that arrives (requests, responses, ACKs) and the CQEs they cause. A QP is
    // served by unit (qp number mod processing_units) of each kind, one thing at a time.
    using Lookup = CacheLookup;
    // The lookups of an access of `bytes` at `iova` through key `token` (index << 8 |
    // variant): its MPT entry and the MTT entries of the 4 KiB pages it spans.
    static Lookup access(uint32_t token, uint64_t iova, uint64_t bytes);
    uint64_t send_unit(uint32_t qp, uint64_t t, uint32_t ns, const Lookup &lookup = {});
    uint64_t receive_unit(uint32_t qp, uint64_t t, uint32_t ns, const Lookup &lookup = {});
    // A packet of `transport_bytes` leaves through the TX pipeline and the link; returns
    // its arrival at the far port. `loopback` packets (to this device) skip the link.
    uint64_t transmit(uint64_t t, uint64_t transport_bytes, bool loopback);
    // A packet that arrived at `t` leaves the RX pipeline.
    uint64_t receive(uint64_t t);
    // receive(t), then receive_unit() of the packet from there, under one hold of the
    // lock (a locked instruction per step is most of what the model costs the host): a
    // packet that reaches a QP which takes it. Returns when it left the RX pipeline and
    // when the unit is done with it.
    struct Received {
        uint64_t arrived;
        uint64_t processed;
    };
    Received receive_into_unit(uint32_t qp, uint64_t t, uint32_t ns, const Lookup &lookup = {});
    // receive_unit(), then dma_write() of `bytes` from when the unit is done, under one
    // hold of the lock: a packet whose payload the responder writes straight after its
    // unit's work, with nothing in between that can fail or book the model (the middle
    // and last packets of a WRITE, rc/responder.cpp). The same bookings as the two steps.
    struct UnitThenWrite {
        uint64_t processed;
        uint64_t written;
    };
    UnitThenWrite receive_unit_then_dma_write(uint32_t qp, uint64_t t, uint32_t ns,
                                              const Lookup &lookup, uint64_t bytes);

    // Several steps under one hold of the model's lock, for the packets of a run
    // (fabric.hpp, Packet::run): the same bookings, in the same order, as calling the
    // steps one by one, without a locked instruction per step (that was most of the
    // model's cost per packet). Contract: while a Batch lives its thread calls nothing but
    // the Batch's steps, so the model's lock stays a leaf that no other lock nests in.
    class Batch {
      public:
        explicit Batch(TimingModel &model) : model_(model), lock_(model.lock_) {}
        uint64_t dma_read(uint64_t t, uint64_t bytes) { return model_.dma_read_locked(t, bytes); }
        uint64_t transmit(uint64_t t, uint64_t transport_bytes, bool loopback) {
            return model_.transmit_locked(t, transport_bytes, loopback);
        }
        uint64_t receive(uint64_t t) { return model_.receive_locked(t); }

      private:
        TimingModel &model_;
        std::lock_guard<SpinLock> lock_;
    };

    // Start bringing into this core's cache what the steps of a request's way out
    // (doorbell, send unit, transmit) or of a packet's way in (receive, receive unit,
    // DMA write) will write: the lock and those resources' timelines, which the other
    // end of a connection booked last when it runs on another core. The misses then
    // overlap the QP lookup and lock that come first, instead of following one another
    // behind the lock's locked instruction. Only hints: no lock is taken.
    void prefetch_send() const {
        if (!enabled_) return;
        prefetch_line(&lock_);
        prefetch_line(&mmio_);
        prefetch_line(&tx_pipeline_);
        prefetch_line(&link_);
        prefetch_line(&qpc_);
    }
    void prefetch_receive(uint32_t qp) const {
        if (!enabled_) return;
        prefetch_line(&lock_);
        prefetch_line(&rx_pipeline_);
        prefetch_line(&receive_units_[unit_of(qp)]);
        prefetch_line(&dma_write_);
        prefetch_line(&qpc_);
        prefetch_line(&mpt_);
        prefetch_line(&mtt_);
    }

    // A destroyed QP or re-registered key is no longer cached.
    void forget_qp(uint32_t qp);
    void forget_mpt(uint32_t index);

    struct Stats {
        uint64_t qpc_hits, qpc_misses, mpt_hits, mpt_misses, mtt_hits, mtt_misses;
        uint64_t link_busy_ns, dma_read_busy_ns, dma_write_busy_ns;
    };
    Stats stats() const;

  private:
    // A prefetch of the line at `line` (PREFETCHT0: every x86-64 has it), which starts
    // its miss and overlaps it with what comes before the step. Not __builtin_prefetch:
    // g++ 12 dropped those, with the whole inline function around them, as code without
    // effect. A hint elsewhere is nothing.
    static void prefetch_line(const void *line) {
#if defined(__x86_64__) || defined(__i386__)
        asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char *>(line)));
#else
        (void)line;
#endif
    }
    // The processing unit of each kind that serves QP `qp`. Unit counts are powers of
    // two in every profile: a mask, not a division, per step.
    uint32_t unit_of(uint32_t qp) const {
        return units_power_of_two_ ? qp & (unit_count_ - 1) : qp % unit_count_;
    }
    // The steps' work, with lock_ held (by the step, or by a Batch).
    uint64_t dma_read_locked(uint64_t t, uint64_t bytes);
    uint64_t dma_write_locked(uint64_t t, uint64_t bytes);
    uint64_t transmit_locked(uint64_t t, uint64_t transport_bytes, bool loopback);
    uint64_t receive_locked(uint64_t t);
    uint64_t pcie_occupancy(uint64_t bytes) const;
    // Model time t (ns) -> timeline picoseconds, and back. Inline: every booking
    // converts twice.
    uint64_t at_ps(uint64_t t) const {
        return (t > origin_ns_ ? t - origin_ns_ : 0) * 1000;
    }
    uint64_t at_ns(uint64_t at_ps) const {
        return at_ps / 1000 + origin_ns_;
    }
    uint64_t process(std::vector<Timeline> &units, uint32_t qp, uint64_t t, uint32_t ns,
                     const Lookup &lookup);
    uint64_t process_locked(std::vector<Timeline> &units, uint32_t qp, uint64_t t, uint32_t ns,
                            const Lookup &lookup);

    const CostModel cost_;
    const uint64_t origin_ns_;
    const bool enabled_;
    const uint64_t tlp_bytes_;                // cost_.pcie_tlp_bytes, at least 1
    const int tlp_shift_;                     // log2(tlp_bytes_) if a power of two, else -1
    const uint32_t unit_count_;               // processing units of each kind
    const bool units_power_of_two_;           // unit_count_ is: a unit is qp & (count - 1)
    mutable SpinLock lock_;                   // guards every timeline and cache below
    uint64_t serialised_bytes_ = UINT64_MAX;  // transmit_locked(): the last size priced,
    uint64_t serialise_ps_ = 0;               // and its serialisation on the link
    Timeline mmio_;
    Timeline dma_read_;
    Timeline dma_write_;
    std::vector<Timeline> send_units_;
    std::vector<Timeline> receive_units_;
    Timeline tx_pipeline_;
    Timeline rx_pipeline_;
    Timeline link_;
    LruCache qpc_;
    LruCache mpt_;
    LruCache mtt_;
};

}  // namespace softndk::emu::time
