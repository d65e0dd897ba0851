// doorbell.cpp - the doorbell block: Device::service() picks up what the provider
// published (hw_interface.hpp §7) and hands each queue to its engine.
#include <atomic>
#include <bit>

#include "device/device.hpp"
#include "rc/engine.hpp"
#include "trace/hooks.hpp"

namespace softndk::emu {

void Device::service(uint32_t context) {
    timing_.prefetch_send();
    auto c = find_context(context);
    if (!c) return;
    counters_.add(Counter::doorbells);
    auto &bitmaps = c->page->doorbells;
    // hw_interface.hpp §7: `pending` first, then the summary words it names, then the
    // bitmap words they name. Every index comes from a bit position (masked to the
    // arrays' bounds), so nothing the consumer wrote can take the device outside the
    // bitmaps. The kinds are serviced in order: send queues, receive queues, CQ arms.
    std::atomic_ref pending_word(bitmaps.pending);
    // A load before the locked exchange: an idle context has nothing pending.
    const uint64_t pending = pending_word.load(std::memory_order_relaxed) == 0
                                 ? 0
                                 : pending_word.exchange(0, std::memory_order_acquire);
    auto for_each_bit = [&bitmaps, pending](hw::DoorbellKind kind, auto &&fn) {
        const uint32_t k = static_cast<uint32_t>(kind);
        uint64_t summaries = (pending >> (k * hw::kDoorbellSummaryWords)) &
                             ((uint64_t{1} << hw::kDoorbellSummaryWords) - 1);
        uint64_t *words = bitmaps.words(kind);
        while (summaries != 0) {
            const uint32_t s = static_cast<uint32_t>(std::countr_zero(summaries));
            summaries &= summaries - 1;
            uint64_t summary =
                std::atomic_ref(bitmaps.summary[k][s]).exchange(0, std::memory_order_acquire);
            while (summary != 0) {
                const uint32_t w = s * 64 + static_cast<uint32_t>(std::countr_zero(summary));
                summary &= summary - 1;
                uint64_t bits = std::atomic_ref(words[w]).exchange(0, std::memory_order_acquire);
                while (bits != 0) {
                    const int b = std::countr_zero(bits);
                    bits &= bits - 1;
                    fn(w * 64 + static_cast<uint32_t>(b));
                }
            }
        }
    };
    for_each_bit(hw::DoorbellKind::kSendQueue, [&](uint32_t n) {
        if (auto qp = find_qp(context, n)) {
            std::lock_guard lock(qp->mutex);
            if (!qp->destroyed) rc::requester_doorbell(*qp);
        }
    });
    for_each_bit(hw::DoorbellKind::kReceiveQueue, [&](uint32_t n) {
        if (auto qp = find_qp(context, n)) {
            std::lock_guard lock(qp->mutex);
            if (!qp->destroyed) rc::receive_doorbell(*qp);
        }
    });
    for_each_bit(hw::DoorbellKind::kCompletionQueue, [&](uint32_t n) {
        std::shared_ptr<Cq> cq;
        {
            std::shared_lock lock(objects_mutex_);
            if (n < kMaxQueues && cqs_[n] && cqs_[n]->context() == context) cq = cqs_[n];
        }
        if (cq && trace::on()) tracing::cq_arm(*this, *cq, clock_.now());
        if (cq) cq->arm_doorbell(clock_.now());
    });
    for_each_bit(hw::DoorbellKind::kSharedReceiveQueue, [](uint32_t) {});
    Fabric::drain();
}

}  // namespace softndk::emu
