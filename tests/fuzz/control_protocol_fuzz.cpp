// control_protocol_fuzz.cpp - the control protocol (hw_interface.hpp section 11;
// daemon/protocol.hpp): command structs, as a provider or a daemon client sends them,
// executed by a device with one attached context.
//
// Input: a stream of requests, each a CommandHeader (opcode, request_bytes, sequence)
// then request_bytes - 8 bytes of body (zeros past the end of the input), at most 64.
// request_bytes is kept in [8, daemon::kMaxRequestBytes] as the daemon keeps it (it
// closes a session outside that range before the device sees anything). kRegisterMr
// and kBuildLam are not passed on: their MemoryHandle names memory by address in
// embedded mode (the provider's own) and by a passed fd in daemon mode, where the
// daemon maps it itself (daemon/server.cpp) - neither is bytes a client can forge.
// After each request the doorbells are rung and the event queue drained; a successful
// kDetach ends the input (the context and its event queue are gone).
#include <algorithm>
#include <array>
#include <memory>

#include "daemon/protocol.hpp"
#include "device/log.hpp"
#include "driver.hpp"
#include "fuzz_input.hpp"

using namespace softndk;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (auto c : {emu::Component::kDevice, emu::Component::kRc, emu::Component::kFabric,
                   emu::Component::kCm}) {
        emu::logger(c).set_level(spdlog::level::off);
    }
    fuzz::InputReader in(data, size);
    auto fabric = std::make_shared<emu::Fabric>();
    auto device =
        std::make_shared<emu::Device>(emu::test::adapter(1, {"10.0.0.1", "fd00::1"}), fabric);
    emu::test::Driver driver(device);

    alignas(64) std::array<std::byte, emu::daemon::kMaxRequestBytes> request{};
    alignas(64) std::array<std::byte, 4096> response{};
    for (int n = 0; n < 64 && !in.empty(); ++n) {
        hw::CommandHeader header{};
        header.opcode = static_cast<hw::CommandOpcode>(in.take<uint16_t>());
        header.request_bytes = std::clamp<uint16_t>(in.take<uint16_t>(), sizeof(hw::CommandHeader),
                                                    emu::daemon::kMaxRequestBytes);
        header.sequence = in.take<uint32_t>();
        request.fill(std::byte{0});
        std::memcpy(request.data(), &header, sizeof header);
        const auto body = in.take_bytes(header.request_bytes - sizeof header);
        if (!body.empty()) std::memcpy(request.data() + sizeof header, body.data(), body.size());
        if (header.opcode == hw::CommandOpcode::kRegisterMr ||
            header.opcode == hw::CommandOpcode::kBuildLam) {
            continue;
        }
        auto &response_header = *reinterpret_cast<hw::ResponseHeader *>(response.data());
        const int32_t status = driver.device_client().execute(
            *reinterpret_cast<const hw::CommandHeader *>(request.data()), response_header,
            response.size());
        // A detached context's event queue is gone: nothing more to drive.
        if (header.opcode == hw::CommandOpcode::kDetach && status == 0) break;
        driver.device_client().ring();
        driver.events();
    }
    return 0;
}
