// doorbells_fuzz.cpp - the doorbell records and bitmaps (hw_interface.hpp section 7):
// the shared words a provider writes and the device trusts only after checking them
// (softndk/ring.hpp, "Trust"): SQ/RQ producer counters and their timing hints, CQ
// consumer counters, CQ arm words, and the per-context doorbell bitmaps.
//
// Input: records of one byte `what` and a little-endian uint32 `value`, at most 128:
//   0  A's SQ producer := value, rung         1  B's RQ producer := value, rung
//   2  A's send-CQ consumer := value          3  B's recv-CQ consumer := value
//   4  arm B's recv CQ with type value, rung  5  A's SQ timing hints from value
//   6  a doorbell bit: kind value % 4, queue (value >> 2) % 4096, rung
//   7  a valid SEND into a valid RECV (value % 8192 bytes)
// then every CQ and EQ is drained. Garbage must make a ring look full or empty, or be
// reported; never lead to an access outside the ring (ASan) or a crash.
#include <atomic>
#include <stdexcept>

#include "device_harness.hpp"
#include "fuzz_input.hpp"

using namespace softndk;

namespace {

void store(uint32_t &word, uint32_t value) {
    std::atomic_ref(word).store(value, std::memory_order_release);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz::InputReader in(data, size);
    fuzz::DeviceHarness h;
    auto &p = *h.pair;
    try {
        for (int record = 0; record < 128 && !in.empty(); ++record) {
            const uint8_t what = in.take<uint8_t>();
            const uint32_t value = in.take<uint32_t>();
            switch (what % 8) {
                case 0:
                    store(p.qp_a->sq_doorbell->producer.value, value);
                    p.a->ring_sq(*p.qp_a);
                    break;
                case 1:
                    store(p.qp_b->rq_doorbell->producer.value, value);
                    p.b->ring_rq(*p.qp_b);
                    break;
                case 2:
                    store(p.scq_a->doorbell->consumer.value, value);
                    break;
                case 3:
                    store(p.rcq_b->doorbell->consumer.value, value);
                    break;
                case 4:
                    store(p.rcq_b->doorbell->arm_type.value, value);
                    store(p.rcq_b->doorbell->arm_sequence.value, ++p.rcq_b->arm_sequence);
                    p.b->set_bit(hw::DoorbellKind::kCompletionQueue, p.rcq_b->number);
                    p.b->device_client().ring();
                    break;
                case 5:
                    p.qp_a->sq_doorbell->producer.post_time_ns = uint64_t{value} << 16;
                    p.qp_a->sq_doorbell->producer.blueflame = value & 1;
                    break;
                case 6:
                    p.a->set_bit(static_cast<hw::DoorbellKind>(value % hw::kDoorbellKinds),
                                 (value >> 2) % (hw::kDoorbellBitmapWords * 64));
                    p.a->device_client().ring();
                    break;
                default:
                    h.send_and_receive(value);
                    break;
            }
        }
    } catch (const std::runtime_error &) {
        // A ring the harness's own posts found full (its counters were overwritten).
    }
    h.drain();
    return 0;
}
