// device_harness.hpp - the device side of the fuzz targets: a connected RC pair on one
// in-host fabric, built fresh for every input (so a finding reproduces from its input
// alone), driven through the hardware interface exactly as the provider drives it
// (tests/emulator/support/driver.hpp; embedded mode, so a doorbell runs the device on
// the calling thread).
#pragma once

#include <memory>

#include "device/log.hpp"
#include "driver.hpp"

namespace softndk::fuzz {

struct DeviceHarness {
    DeviceHarness() {
        // Quiet: the device logs every rejected WQE and bad doorbell.
        for (auto c : {emu::Component::kDevice, emu::Component::kRc, emu::Component::kFabric,
                       emu::Component::kCm}) {
            emu::logger(c).set_level(spdlog::level::off);
        }
        pair = std::make_unique<emu::test::ConnectedPair>();
        buffer_a = std::make_unique<emu::test::Buffer>(8192, 0x5A);
        buffer_b = std::make_unique<emu::test::Buffer>(8192);
        mr_a = pair->a->register_mr(pair->pd_a, buffer_a->data(), buffer_a->size());
        mr_b = pair->b->register_mr(pair->pd_b, buffer_b->data(), buffer_b->size());
    }

    // A SEND from A into a RECV on B, both valid: work for the engine after whatever
    // the input did to the rings (throws if a ring is full).
    void send_and_receive(uint32_t bytes) {
        bytes %= 8192;
        pair->b->post_recv(*pair->qp_b, {{buffer_b->addr(), 8192, mr_b.token}});
        pair->a->post_send(*pair->qp_a, hw::WqeOpcode::kSend,
                           {{buffer_a->addr(), bytes, mr_a.token}});
    }

    // Takes every CQE and EQE there is (never waits).
    void drain() {
        using emu::test::Driver;
        Driver::drain(*pair->scq_a);
        Driver::drain(*pair->rcq_a);
        Driver::drain(*pair->scq_b);
        Driver::drain(*pair->rcq_b);
        pair->a->events();
        pair->b->events();
    }

    std::unique_ptr<emu::test::ConnectedPair> pair;
    std::unique_ptr<emu::test::Buffer> buffer_a, buffer_b;
    emu::test::MrHandle mr_a, mr_b;
};

}  // namespace softndk::fuzz
