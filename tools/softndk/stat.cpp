#include "stat.hpp"

#include <fmt/format.h>
#include <softndk_faults.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "daemon/daemon_client.hpp"
#include "daemon/protocol.hpp"
#include "ndk.hpp"
#include "report.hpp"
#include "softndk/hw_interface.hpp"

namespace softndk::tool {

namespace {

// The device's counters, in the order kQueryCounters reports them.
constexpr const char *kCounterNames[] = {
#define SOFTNDK_X(name) #name,
    SOFTNDK_DEVICE_COUNTERS(SOFTNDK_X)
#undef SOFTNDK_X
};

// The only port of a virtual adapter, as rdma numbers it.
constexpr unsigned kPort = 1;

// "rnic0", "1", "rnic0/1": the adapter part; a port other than 1 is an error.
std::string adapter_part(const std::string &device) {
    const size_t slash = device.find('/');
    if (slash == std::string::npos) return device;
    const std::string port = device.substr(slash + 1);
    if (port != std::to_string(kPort))
        throw std::runtime_error(
            fmt::format("{}: no port '{}' (a virtual adapter has port {})", device, port, kPort));
    return device.substr(0, slash);
}

using CounterValues = std::vector<std::pair<std::string, unsigned long long>>;

CounterValues device_counters(const WskClient &wsk, const softndk_adapter &a) {
    NDK_ADAPTER *adapter = wsk.open(a.if_index);
    CounterValues values;
    for (const char *name : kCounterNames) {
        ULONG64 value = 0;
        const NTSTATUS s = SoftNdkQueryCounter(adapter, name, &value);
        if (s == STATUS_NOT_FOUND) continue;  // a device older than this tool
        if (!NT_SUCCESS(s)) {
            wsk.close(adapter);
            check(s, "SoftNdkQueryCounter");
        }
        values.emplace_back(name, value);
    }
    wsk.close(adapter);
    return values;
}

// The daemon's doorbell-thread sleeps and wakeups, in daemon mode only.
CounterValues daemon_counters() {
    const char *mode = std::getenv("SOFTNDK_MODE");
    if (mode == nullptr || std::string(mode) != "daemon") return {};
    emu::daemon::DaemonStatusResponse status{};
    std::string error;
    if (!emu::daemon::DaemonClient::query_status(emu::daemon::default_socket_path(), 0, status,
                                                 error))
        throw std::runtime_error("the daemon's status: " + error);
    return {{"daemon_sleeps", status.device_sleeps}, {"daemon_wakeups", status.device_wakeups}};
}

}  // namespace

std::vector<softndk_adapter> select_adapters(const std::string &device) {
    char error[512];
    if (!device.empty()) {
        softndk_adapter a{};
        if (softndk_adapter_find(adapter_part(device).c_str(), &a, error, sizeof error) != 0)
            throw std::runtime_error(error);
        return {a};
    }
    const int n = softndk_adapters_list(nullptr, 0, error, sizeof error);
    if (n < 0) throw std::runtime_error(error);
    std::vector<softndk_adapter> all(static_cast<size_t>(n));
    softndk_adapters_list(all.data(), n, error, sizeof error);
    return all;
}

int run_stat(const StatOptions &options) {
    const std::vector<softndk_adapter> adapters = select_adapters(options.device);
    WskClient wsk;
    std::string out;
    std::vector<std::string> objects;
    for (const auto &a : adapters) {
        CounterValues values = device_counters(wsk, a);
        for (auto &v : daemon_counters())
            values.push_back(std::move(v));
        if (options.json) {
            std::string object = fmt::format("{{\"ifname\": {}, \"port\": {}, \"if_index\": {}",
                                             json_string(a.alias), kPort, a.if_index);
            for (const auto &[name, value] : values)
                object += fmt::format(", \"{}\": {}", name, value);
            objects.push_back(object + "}");
        } else {
            out += fmt::format("link {}/{}", a.alias, kPort);
            for (const auto &[name, value] : values)
                out += fmt::format(" {} {}", name, value);
            out += "\n";
        }
    }
    if (options.json) {
        print_json_array(objects);
        return 0;
    }
    std::fputs(out.c_str(), stdout);
    return 0;
}

}  // namespace softndk::tool
