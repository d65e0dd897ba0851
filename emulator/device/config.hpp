// config.hpp - the adapters of embedded mode.
//
// SOFTNDK_CONFIG names an INI file (parsed with libinih, ini.hpp). Each section
// "[adapter NAME]" is one virtual RNIC:
//
//   ; two adapters in one process; they reach each other through the fabric
//   [adapter rnic0]
//   if_index = 1                   ; required, unique, > 0
//   ipv4 = 127.0.0.1               ; comma-separated list, optional
//   ipv6 = ::1                     ; comma-separated list, optional (at least one address)
//   alias = rnic0                  ; default: NAME
//   profile = roce-default         ; a built-in profile (profile_names(): roce-default,
//                                  ; iwarp-default, ideal, cx5-100g, cx6-200g, cx7-400g,
//                                  ; t6-25g), or a profile file: a value with a '/' or
//                                  ; ending in .ini; a relative path is taken from this
//                                  ; file's directory (default roce-default)
//   ; optional overrides of the profile's RC transport attributes
//   path_mtu = 1024                ; 256 | 512 | 1024 | 2048 | 4096
//   retry_count = 7                ; 0..7
//   rnr_retry = 7                  ; 0..7, 7 = infinite
//   min_rnr_timer = 12             ; 0..31 (IB RNR timer code)
//   ack_timeout = 14               ; 0..31 (4.096 us << n, 0 = infinite)
//   cm_timeout_ms = 2000           ; 1..3600000
//   ; quirk: stable (the profile's [quirks], stable in every shipped one) keeps a
//   ; fast-register MR's token for life, as NDK drivers expect; rotate gives it a new
//   ; token on every NdkFastRegister (verbs' stale-key protection: a token cached
//   ; before the last registration fails)
//   fast_register_keys = stable    ; stable | rotate
//
//   [adapter rnic1]
//   if_index = 2
//   ipv4 = 10.0.0.2
//
// `;` starts a comment at the start of a line and after a value. Every error names
// the file, the line, the section and the key ("softndk.ini:4: [adapter rnic0]
// if_index: 'x' is not a number"): an unknown or repeated section or key, a bad or
// out-of-range value, a bad profile (its own file:line), an if_index used twice.
//
// SOFTNDK_TIME = functional (default) | paced sets every adapter's time mode
// (hw::TimeMode, docs/timing.md); another value is an error.
//
// Without SOFTNDK_CONFIG: one adapter, if_index 1, alias "rnic0", 127.0.0.1 and ::1,
// profile roce-default.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/device.hpp"

namespace softndk::emu {

// Appends the adapters of the file at `path` to `out`; false with `error` set (and
// `out` unchanged) on a bad file.
bool load_adapter_config(const std::string &path, std::vector<AdapterConfig> &out,
                         std::string &error);
std::vector<AdapterConfig> default_adapter_config();
// "functional" | "paced" | "simulated" (embedded devices only: docs/simulation.md).
std::optional<hw::TimeMode> parse_time_mode(std::string_view text);
// SOFTNDK_TIME, or functional when unset; false with `error` set for a bad value.
bool time_mode_from_environment(hw::TimeMode &mode, std::string &error);

// IPv4/IPv6 text -> wire::IpAddr (IPv4 mapped). False if not an address.
bool parse_ip(const std::string &text, wire::IpAddr &out);

// Process-wide embedded devices, created on first use from the configuration and
// attached to Fabric::process_fabric(). Thread-safe.
class EmbeddedRegistry {
  public:
    static EmbeddedRegistry &instance();
    // The device with interface index `if_index`, or nullptr with `error` set.
    std::shared_ptr<Device> find(uint32_t if_index, std::string &error);
    // All configured devices (creating them if needed).
    std::vector<std::shared_ptr<Device>> devices(std::string &error);
    // Replaces the configuration (SOFTNDK_CONFIG or the default) before first use:
    // tools that set up their own adapters (`softndk perf --profile`). False, with
    // `error` set, once the devices exist.
    bool configure(std::vector<AdapterConfig> configs, std::string &error);

  private:
    bool load(std::string &error);

    std::mutex mutex_;
    bool loaded_ = false;
    std::string load_error_;
    std::optional<std::vector<AdapterConfig>> configured_;
    std::vector<std::shared_ptr<Device>> devices_;
};

}  // namespace softndk::emu
