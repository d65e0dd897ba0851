// counters.hpp - the device's statistics block, one table, Soft-RoCE's names.
//
// SOFTNDK_DEVICE_COUNTERS is the single list: the enum and the name table are
// both generated from it, so they cannot drift apart. Counters are relaxed
// atomics, bumped from any engine thread; reading them is a snapshot, not a
// consistent cut.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace softndk::emu {

// clang-format off
#define SOFTNDK_DEVICE_COUNTERS(X)                                                     \
    X(sent_pkts)            /* packets the requester/responder put on the fabric */  \
    X(rcvd_pkts)            /* packets delivered to this device                  */  \
    X(duplicate_request)    /* responder: request PSN behind ePSN                */  \
    X(out_of_seq_request)   /* responder: request PSN ahead of ePSN (NAK sent)   */  \
    X(ird_exceeded)         /* responder: a READ beyond IRD (NAK, QP to error)   */  \
    X(rcvd_rnr_err)         /* requester: RNR NAKs received                      */  \
    X(send_rnr_err)         /* responder: RNR NAKs sent                          */  \
    X(rcvd_seq_err)         /* requester: PSN-sequence NAKs received             */  \
    X(retry_exceeded_err)   /* requester: transport retries exhausted            */  \
    X(rnr_retry_exceeded_err) /* requester: RNR retries exhausted                */  \
    X(completer_retry_err)  /* requester: go-back-N retries started              */  \
    X(ack_timeouts)         /* requester: local ACK timer expired                */  \
    X(send_err)             /* requester: error completions written              */  \
    X(rdma_sends)           /* SEND WQEs executed                                */  \
    X(rdma_recvs)           /* receive WQEs consumed                             */  \
    X(rdma_writes)          /* WRITE WQEs executed                               */  \
    X(rdma_reads)           /* READ WQEs executed                                */  \
    X(dropped_pkts)         /* packets for no QP / a QP not accepting them       */  \
    X(doorbells)            /* service() calls                                   */  \
    X(cqes)                 /* CQEs written                                      */  \
    X(eqes)                 /* EQEs written                                      */  \
    X(cq_overflows)         /* CQ overruns                                       */  \
    X(eq_overflows)         /* EQEs lost because the EQ was full                 */  \
    X(malformed_wqes)       /* WQEs that failed validation                       */  \
    X(flushed_wqes)         /* WQEs completed with WR_FLUSH_ERR                  */  \
    X(icrc_errors)          /* packets dropped because their ICRC failed         */  \
    X(faults_injected)      /* every injected fault (faults.hpp record())        */  \
    X(fault_drops)          /* packets dropped by a fault                        */  \
    X(fault_delays)         /* packets delayed by a fault                        */  \
    X(fault_duplicates)     /* packets duplicated by a fault                     */  \
    X(fault_reorders)       /* packets held behind the next one by a fault       */  \
    X(fault_corruptions)    /* packets corrupted by a fault (ICRC then fails)    */  \
    X(fault_failed_ops)     /* work requests failed by a fault                   */  \
    X(fault_failed_cmds)    /* commands failed by a fault                        */  \
    X(fault_rnr_naks)       /* SENDs answered RNR by an RNR storm                */  \
    X(fault_expired_tokens) /* remote accesses refused for an expired token      */  \
    X(fault_qp_errors)      /* QPs moved to error by a fault                     */  \
    X(fault_killed_conns)   /* connections killed by a fault                     */  \
    X(fault_vanished)       /* packets/CM messages lost to a vanished peer       */  \
    X(fault_cq_overruns)    /* CQs overrun by a fault                            */  \
    X(fault_eq_events)      /* spurious EQEs posted by an EQ storm               */
// clang-format on

enum class Counter : uint8_t {
#define SOFTNDK_X(name) name,
    SOFTNDK_DEVICE_COUNTERS(SOFTNDK_X)
#undef SOFTNDK_X
        kCount
};

inline constexpr std::array<std::string_view, static_cast<size_t>(Counter::kCount)> kCounterNames =
    {
#define SOFTNDK_X(name) #name,
        SOFTNDK_DEVICE_COUNTERS(SOFTNDK_X)
#undef SOFTNDK_X
};

class Counters {
  public:
    void add(Counter c, uint64_t n = 1) {
        values_[static_cast<size_t>(c)].fetch_add(n, std::memory_order_relaxed);
    }
    uint64_t get(Counter c) const {
        return values_[static_cast<size_t>(c)].load(std::memory_order_relaxed);
    }
    static constexpr std::string_view name(Counter c) {
        return kCounterNames[static_cast<size_t>(c)];
    }

  private:
    std::array<std::atomic<uint64_t>, static_cast<size_t>(Counter::kCount)> values_{};
};

}  // namespace softndk::emu
