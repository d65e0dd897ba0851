// doorbell.cpp - the doorbell block: Device::service() picks up what the provider
// published (hw_interface.hpp §7) and hands each queue to its engine.
#include <atomic>
#include <bit>

#include "device/device.hpp"
#include "rc/engine.hpp"
#include "trace/hooks.hpp"

namespace softndk::emu {

void Device::service(uint32_t context) {
    auto c = find_context(context);
    if (!c) return;
    counters_.add(Counter::doorbells);
    auto &bitmaps = c->page->doorbells;
    // hw_interface.hpp §7: summary first, then only the words it names. Every
    // index comes from a bit position, so nothing the consumer wrote can take
    // the device outside the bitmaps.
    auto for_each_bit = [&bitmaps](hw::DoorbellKind kind, auto &&fn) {
        uint64_t *words = bitmaps.words(kind);
        std::atomic_ref summary_word(bitmaps.summary[static_cast<uint32_t>(kind)]);
        // A load before the locked exchange: most kinds have nothing pending.
        if (summary_word.load(std::memory_order_relaxed) == 0) return;
        uint64_t summary = summary_word.exchange(0, std::memory_order_acquire);
        while (summary != 0) {
            const uint32_t w = static_cast<uint32_t>(std::countr_zero(summary));
            summary &= summary - 1;
            uint64_t bits = std::atomic_ref(words[w]).exchange(0, std::memory_order_acquire);
            while (bits != 0) {
                const int b = std::countr_zero(bits);
                bits &= bits - 1;
                fn(w * 64 + static_cast<uint32_t>(b));
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
