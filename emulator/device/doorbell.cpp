// doorbell.cpp - the doorbell block: Device::service() picks up what the provider
// published (hw_interface.hpp §7) and hands each queue to its engine.
#include <atomic>
#include <bit>

#include "device/device.hpp"
#include "rc/engine.hpp"

namespace softndk::emu {

void Device::service(uint32_t context) {
    auto c = find_context(context);
    if (!c) return;
    counters_.add(Counter::doorbells);
    clock_.charge(cost().doorbell_ns);
    auto &bitmaps = c->page->doorbells;
    auto for_each_bit = [](uint64_t *words, auto &&fn) {
        for (uint32_t w = 0; w < hw::kDoorbellBitmapWords; ++w) {
            uint64_t bits = std::atomic_ref(words[w]).exchange(0, std::memory_order_acquire);
            while (bits != 0) {
                const int b = std::countr_zero(bits);
                bits &= bits - 1;
                fn(w * 64 + static_cast<uint32_t>(b));
            }
        }
    };
    for_each_bit(bitmaps.send_queue, [&](uint32_t n) {
        if (auto qp = find_qp(context, n)) {
            std::lock_guard lock(qp->mutex);
            if (!qp->destroyed) rc::requester_doorbell(*qp);
        }
    });
    for_each_bit(bitmaps.receive_queue, [&](uint32_t n) {
        if (auto qp = find_qp(context, n)) {
            std::lock_guard lock(qp->mutex);
            if (!qp->destroyed) rc::receive_doorbell(*qp);
        }
    });
    for_each_bit(bitmaps.completion_queue, [&](uint32_t n) {
        std::shared_ptr<Cq> cq;
        {
            std::shared_lock lock(objects_mutex_);
            if (n < kMaxQueues && cqs_[n] && cqs_[n]->context() == context) cq = cqs_[n];
        }
        if (cq) cq->arm_doorbell(clock_.now());
    });
    for_each_bit(bitmaps.shared_receive_queue, [](uint32_t) {});
    Fabric::drain();
}

}  // namespace softndk::emu
