// Stand-in used only while the emulator's device target does not exist
// (see CMakeLists.txt): there is no device, so every adapter open fails with
// STATUS_NOT_FOUND and device-dependent tests skip.
#include "softndk/device_client.hpp"

namespace softndk {

std::unique_ptr<DeviceClient> open_device_client(uint32_t, std::string &error) {
    error = "SoftNDK was built without the emulator's device (no softndk_emulator target)";
    return nullptr;
}

}  // namespace softndk
