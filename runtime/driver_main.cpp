// driver_main.cpp - main() for a consumer "driver": link SoftNDK::driver_main beside
// SoftNDK::ndk and keep the driver's DriverEntry as it is:
//
//   NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath);
//
//   program [--until-signal] [--timeout SECONDS] [--registry FILE]
//
// 1. Loads the registry file (--registry FILE, else $SOFTNDK_REGISTRY if set; format in
//    runtime/registry.cpp) into the in-memory registry - an unreadable or malformed file is
//    printed and exits 1 -, builds a DRIVER_OBJECT named \Driver\<program> and the registry
//    path \REGISTRY\MACHINE\SYSTEM\CurrentControlSet\Services\<program> (the key is created
//    if the file did not), and calls DriverEntry at PASSIVE_LEVEL. A failure status is
//    printed and exits 1, and DriverUnload is not called (as on Windows). After a
//    successful DriverEntry, the routines registered with
//    IoRegister[Boot]DriverReinitialization run (boot ones first).
// 2. Waits until the driver's work is done: no work item queued or running, no DPC
//    queued or running, no KTIMER set, and every thread from PsCreateSystemThread
//    finished - seen on two checks 20 ms apart. With --until-signal (a driver that
//    only reacts to NDK callbacks, e.g. a server) it waits for SIGINT/SIGTERM
//    instead; SIGINT/SIGTERM also end the wait early in the default mode.
// 3. Calls DriverObject->DriverUnload if the driver set one, then waits for the work
//    that unloading started to finish in the same way.
// Exit codes: 0 DriverEntry succeeded and the driver finished; 1 DriverEntry failed
// or --timeout (default none) expired first (unload is still called); 2 usage.
#include <ntddk.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "softndk/sim.hpp"
#include "wdk_internal.hpp"

extern "C" DRIVER_INITIALIZE DriverEntry;

namespace {

std::atomic<bool> g_signalled{false};

extern "C" void on_signal(int) {
    g_signalled.store(true);
}

bool runtime_idle() {
    namespace wdk = softndk::wdk;
    return wdk::work_items_idle() && wdk::dpcs_idle() && wdk::no_timers_set() &&
           wdk::system_threads_idle();
}

// Waits for idleness (or only for a signal), up to `timeout` (0 = none). False on timeout.
bool wait_until_done(bool until_signal, std::chrono::seconds timeout) {
    // In simulated time (SOFTNDK_TIME=simulated) these 20 ms are simulated too.
    const auto start = softndk::sim::steady_now();
    int idle_checks = 0;
    while (!g_signalled.load()) {
        if (!until_signal) {
            idle_checks = runtime_idle() ? idle_checks + 1 : 0;
            if (idle_checks >= 2) return true;
        }
        if (timeout.count() > 0 && softndk::sim::steady_now() - start >= timeout) return false;
        if (softndk::sim::attached()) {
            softndk::sim::sleep_until(softndk::sim::now_ns() + 20'000'000,
                                      "driver runner (idle check)", true);
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    return true;
}

// A UNICODE_STRING over static storage (WCHAR is wchar_t here).
UNICODE_STRING unicode(const std::wstring &text, std::wstring &storage) {
    storage = text;
    UNICODE_STRING s;
    s.Length = static_cast<USHORT>(storage.size() * sizeof(WCHAR));
    s.MaximumLength = static_cast<USHORT>((storage.size() + 1) * sizeof(WCHAR));
    s.Buffer = storage.data();
    return s;
}

std::wstring widen_ascii(const char *text) {
    std::wstring out;
    for (const char *p = text; *p != '\0'; ++p)
        out.push_back(static_cast<wchar_t>(static_cast<unsigned char>(*p)));
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    bool until_signal = false;
    long timeout_seconds = 0;
    const char *registry_file = std::getenv("SOFTNDK_REGISTRY");
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--until-signal") == 0) {
            until_signal = true;
        } else if (std::strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            char *end = nullptr;
            timeout_seconds = std::strtol(argv[++i], &end, 10);
            if (*end != '\0' || timeout_seconds <= 0) {
                std::fprintf(stderr, "%s: --timeout needs a number of seconds > 0\n", argv[0]);
                return 2;
            }
        } else if (std::strcmp(argv[i], "--registry") == 0 && i + 1 < argc) {
            registry_file = argv[++i];
        } else {
            std::fprintf(stderr,
                         "usage: %s [--until-signal] [--timeout SECONDS] [--registry FILE]\n",
                         argv[0]);
            return std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0 ? 0 : 2;
        }
    }
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);

    const char *slash = std::strrchr(argv[0], '/');
    const std::wstring program = widen_ascii(slash != nullptr ? slash + 1 : argv[0]);
    static DRIVER_OBJECT driver{};
    static std::wstring name_storage, path_storage;
    driver.Type = 4;  // IO_TYPE_DRIVER
    driver.Size = sizeof driver;
    driver.DriverName = unicode(L"\\Driver\\" + program, name_storage);
    driver.DriverInit = DriverEntry;
    UNICODE_STRING registry_path = unicode(
        L"\\REGISTRY\\MACHINE\\SYSTEM\\CurrentControlSet\\Services\\" + program, path_storage);

    if (registry_file != nullptr && *registry_file != '\0') {
        std::ifstream in(registry_file, std::ios::binary);
        if (!in.is_open()) {
            std::fprintf(stderr, "%s: cannot read the registry file %s\n", argv[0], registry_file);
            return 1;
        }
        std::stringstream text;
        text << in.rdbuf();
        std::string error;
        if (!softndk::wdk::load_registry_text(text.str(), error)) {
            std::fprintf(stderr, "%s: %s: %s\n", argv[0], registry_file, error.c_str());
            return 1;
        }
    }
    softndk::wdk::ensure_service_key(program);
    // Simulated time: the runner's thread is the run's first (the root); the run ends
    // when it returns from main.
    softndk::sim::attach_current("main");

    const NTSTATUS entry = DriverEntry(&driver, &registry_path);
    if (!NT_SUCCESS(entry)) {
        std::fprintf(stderr, "%s: DriverEntry failed: 0x%08X\n", argv[0],
                     static_cast<unsigned>(entry));
        return 1;
    }
    softndk::wdk::run_driver_reinitialization(&driver);
    const std::chrono::seconds timeout(timeout_seconds);
    const bool finished = wait_until_done(until_signal, timeout);
    if (!finished)
        std::fprintf(stderr, "%s: the driver's work did not finish within %ld s; unloading\n",
                     argv[0], timeout_seconds);
    if (driver.DriverUnload != nullptr) {
        driver.DriverUnload(&driver);
        g_signalled.store(false);
        wait_until_done(false, std::chrono::seconds(30));
    }
    return finished ? 0 : 1;
}
