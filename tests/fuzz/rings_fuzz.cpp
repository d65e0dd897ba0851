// rings_fuzz.cpp - the WQE rings (hw_interface.hpp sections 3-4; softndk/ring.hpp):
// the bytes a provider writes into SQ and RQ slots, which the device copies out and
// must validate (opcodes, flags, segment counts, inline lengths, SGE tokens and
// addresses, WQEBB counts).
//
// Input: records, at most 64 per input, each one byte `op` and then its data:
//   op % 4 == 0  raw send WQE on A's SQ: 64 * (1 + (op >> 2) % 4) bytes (WQEBBs), rung
//   op % 4 == 1  raw receive WQE on B's RQ: one RQ slot (rq_entry_bytes), rung
//   op % 4 == 2  a valid SEND of (op >> 2) * 61 bytes into a valid RECV (engine work)
//   op % 4 == 3  drain every CQ and EQ
// A full ring ends the input (as a provider that stops posting). Every CQ and EQ is
// drained at the end. The device must neither crash nor touch memory outside the
// rings and the registered buffers (ASan).
#include <stdexcept>
#include <vector>

#include "device_harness.hpp"
#include "fuzz_input.hpp"

using namespace softndk;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz::InputReader in(data, size);
    fuzz::DeviceHarness h;
    auto &p = *h.pair;
    try {
        for (int record = 0; record < 64 && !in.empty(); ++record) {
            const uint8_t op = in.take<uint8_t>();
            switch (op % 4) {
                case 0: {
                    const size_t bytes = 64 * (1 + (op >> 2) % 4);
                    const auto wqe = in.take_bytes(bytes);
                    p.a->post_raw(*p.qp_a, std::vector<uint8_t>(wqe.begin(), wqe.end()));
                    break;
                }
                case 1: {
                    const auto wqe = in.take_bytes(p.qp_b->rq_entry_bytes);
                    std::vector<uint8_t> slot(p.qp_b->rq_entry_bytes, 0);
                    std::copy(wqe.begin(), wqe.end(), slot.begin());
                    auto at = p.qp_b->rq->reserve(1);
                    if (!at) throw std::runtime_error("RQ full");
                    p.qp_b->rq->write(*at, slot.data(), slot.size());
                    p.qp_b->rq->publish();
                    p.b->ring_rq(*p.qp_b);
                    break;
                }
                case 2:
                    h.send_and_receive(static_cast<uint32_t>(op >> 2) * 61);
                    break;
                default:
                    h.drain();
                    break;
            }
        }
    } catch (const std::runtime_error &) {
        // A full ring: the provider would stop here too.
    }
    h.drain();
    return 0;
}
