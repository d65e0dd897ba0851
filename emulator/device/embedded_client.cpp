#include "device/embedded_client.hpp"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "daemon/daemon_client.hpp"
#include "daemon/protocol.hpp"
#include "device/config.hpp"

namespace softndk::emu {

EmbeddedClient::EmbeddedClient(std::shared_ptr<Device> device) : device_(std::move(device)) {}

EmbeddedClient::~EmbeddedClient() {
    if (context() == kNoContext) return;
    hw::ObjectRequest rq{};
    rq.header = {hw::CommandOpcode::kDetach, sizeof(rq), 0};
    hw::ObjectResponse rs{};
    execute(rq.header, rs.header, sizeof(rs));
}

int32_t EmbeddedClient::execute(const hw::CommandHeader &request, hw::ResponseHeader &response,
                                size_t response_bytes, std::span<const int>) {
    const auto *rq = reinterpret_cast<const std::byte *>(&request);
    auto *rs = reinterpret_cast<std::byte *>(&response);
    const int32_t s =
        device_->execute(context(), {rq, request.request_bytes}, {rs, response_bytes});
    if (s == 0 && request.opcode == hw::CommandOpcode::kAttach &&
        response_bytes >= offsetof(hw::AttachResponse, context_id) + sizeof(uint32_t)) {
        context_.store(reinterpret_cast<const hw::AttachResponse &>(response).context_id,
                       std::memory_order_release);
    } else if (s == 0 && request.opcode == hw::CommandOpcode::kDetach) {
        context_.store(kNoContext, std::memory_order_release);
    }
    return s;
}

void *EmbeddedClient::map(const hw::MemoryHandle &handle) {
    if (handle.fd_index != hw::kNoFd) return nullptr;
    return reinterpret_cast<void *>(handle.embedded_address);
}

void EmbeddedClient::ring() {
    device_->service(context());
}

}  // namespace softndk::emu

namespace softndk {

std::unique_ptr<DeviceClient> open_device_client(uint32_t if_index, std::string &error) {
    const char *mode = std::getenv("SOFTNDK_MODE");
    if (mode != nullptr && std::string_view(mode) == "daemon") {
        return emu::daemon::DaemonClient::connect(emu::daemon::default_socket_path(), if_index,
                                                  error);
    }
    if (mode != nullptr && *mode != '\0' && std::string_view(mode) != "embedded") {
        error = std::string("SOFTNDK_MODE: unknown mode '") + mode + "'";
        return nullptr;
    }
    auto device = emu::EmbeddedRegistry::instance().find(if_index, error);
    if (!device) return nullptr;
    return std::make_unique<emu::EmbeddedClient>(std::move(device));
}

}  // namespace softndk
