#include "device/config.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <boost/algorithm/string.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "device/ini.hpp"
#include "device/log.hpp"

namespace softndk::emu {

bool parse_ip(const std::string &text, wire::IpAddr &out) {
    in_addr v4;
    in6_addr v6;
    if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
        const auto *b = reinterpret_cast<const uint8_t *>(&v4);
        out = wire::IpAddr::v4(b[0], b[1], b[2], b[3]);
        return true;
    }
    if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
        std::memcpy(out.bytes.data(), &v6, 16);
        return !out.is_v4();
    }
    return false;
}

std::vector<AdapterConfig> default_adapter_config() {
    AdapterConfig a;
    a.if_index = 1;
    a.alias = "rnic0";
    wire::IpAddr v6{};
    v6.bytes[15] = 1;
    a.addresses = {wire::IpAddr::v4(127, 0, 0, 1), v6};
    a.profile = *find_profile("roce-default");
    return {a};
}

namespace {

// The keys of an [adapter NAME] section besides the transport overrides.
constexpr std::string_view kAdapterKeys[] = {
    "if_index", "ipv4", "ipv6", "alias", "profile", "path_mtu", "fast_register_keys"};
// The profile's transport attributes an adapter may override (config.hpp).
constexpr std::string_view kTransportOverrides[] = {"retry_count", "rnr_retry", "min_rnr_timer",
                                                    "ack_timeout", "cm_timeout_ms"};

bool is_adapter_section(std::string_view section) {
    return section.starts_with("adapter") &&
           (section.size() == 7 || section[7] == ' ' || section[7] == '\t');
}

template <size_t N>
bool contains(const std::string_view (&keys)[N], std::string_view key) {
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

// One [adapter NAME] section: its entries, in file order.
bool parse_adapter_section(const IniDocument &doc, const IniSection &section,
                           const std::vector<const IniEntry *> &entries,
                           const std::string &base_dir, AdapterConfig &a, std::string &error) {
    std::string alias(section.name.substr(7));
    boost::trim(alias);
    a.alias = alias.empty() ? section.name : alias;
    a.if_index = 0;
    a.addresses.clear();
    // The profile first: the other keys override it, wherever they stand.
    a.profile = *find_profile("roce-default");
    for (const IniEntry *e : entries) {
        if (e->key != "profile") continue;
        if (!resolve_profile(e->value, base_dir, a.profile, error)) {
            error = ini_error(doc, e->line, e->section, e->key, error);
            return false;
        }
    }
    std::set<std::string_view> seen;
    for (const IniEntry *e : entries) {
        auto fail = [&](std::string_view message) {
            error = ini_error(doc, e->line, e->section, e->key, message);
            return false;
        };
        if (!contains(kAdapterKeys, e->key) && !contains(kTransportOverrides, e->key)) {
            error = ini_error(doc, e->line, e->section, {}, "unknown key '" + e->key + "'");
            return false;
        }
        if (!seen.insert(e->key).second) return fail("repeated key");
        std::string why;
        uint64_t v = 0;
        if (e->key == "if_index") {
            if (!parse_ini_number(e->value, 1, 0xffffffffu, v, why)) return fail(why);
            a.if_index = static_cast<uint32_t>(v);
        } else if (e->key == "alias") {
            if (e->value.empty()) return fail("empty alias");
            a.alias = e->value;
        } else if (e->key == "ipv4" || e->key == "ipv6") {
            std::vector<std::string> items;
            boost::split(items, e->value, boost::is_any_of(", "), boost::token_compress_on);
            for (const auto &item : items) {
                if (item.empty()) continue;
                wire::IpAddr ip;
                if (!parse_ip(item, ip) || ip.is_v4() != (e->key == "ipv4"))
                    return fail("'" + item + "' is not an " + (e->key == "ipv4" ? "IPv4" : "IPv6") +
                                " address");
                a.addresses.push_back(ip);
            }
        } else if (e->key == "path_mtu") {
            if (!parse_ini_number(e->value, 0, 0xffffffffu, v, why)) return fail(why);
            if (!wire::is_valid_path_mtu(static_cast<uint32_t>(v)))
                return fail(e->value + " is not a path MTU (256 | 512 | 1024 | 2048 | 4096)");
            a.profile.limits.path_mtu = static_cast<uint32_t>(v);
        } else if (e->key == "fast_register_keys") {
            if (e->value == "rotate") {
                a.profile.limits.quirks |= hw::kQuirkRotateFastRegisterKeys;
            } else if (e->value == "stable") {
                a.profile.limits.quirks &= ~uint32_t{hw::kQuirkRotateFastRegisterKeys};
            } else {
                return fail("'" + e->value + "' is not stable | rotate");
            }
        } else if (e->key != "profile") {
            if (!*set_transport_key(a.profile.transport, e->key, e->value, why)) return fail(why);
        }
    }
    if (a.if_index == 0) {
        error = ini_error(doc, section.line, section.name, {}, "missing key 'if_index'");
        return false;
    }
    if (a.addresses.empty()) {
        error = ini_error(doc, section.line, section.name, {}, "no address (ipv4 or ipv6)");
        return false;
    }
    return true;
}

}  // namespace

bool load_adapter_config(const std::string &path, std::vector<AdapterConfig> &out,
                         std::string &error) {
    IniDocument doc;
    if (!read_ini_file(path, doc, error)) return false;
    const std::string base_dir = std::filesystem::path(path).parent_path().string();
    std::map<std::string, int> first_line;  // section name -> its header's line
    for (const auto &s : doc.sections) {
        if (!is_adapter_section(s.name)) {
            error = doc.origin + ":" + std::to_string(s.line) + ": unknown section [" + s.name +
                    "] (only [adapter NAME])";
            return false;
        }
        if (!first_line.emplace(s.name, s.line).second) {
            error = doc.origin + ":" + std::to_string(s.line) + ": [" + s.name + "] repeated";
            return false;
        }
    }
    for (const auto &e : doc.entries) {
        if (e.section.empty()) {
            error = doc.origin + ":" + std::to_string(e.line) + ": " + e.key +
                    ": key outside an [adapter NAME] section";
            return false;
        }
    }
    std::vector<AdapterConfig> adapters;
    std::map<uint32_t, std::string> indexes;
    for (const auto &s : doc.sections) {
        std::vector<const IniEntry *> entries;
        const IniEntry *index_entry = nullptr;
        for (const auto &e : doc.entries) {
            if (e.section != s.name) continue;
            entries.push_back(&e);
            if (e.key == "if_index") index_entry = &e;
        }
        AdapterConfig a;
        if (!parse_adapter_section(doc, s, entries, base_dir, a, error)) return false;
        if (auto [it, added] = indexes.emplace(a.if_index, s.name); !added) {
            error = ini_error(doc, index_entry->line, s.name, "if_index",
                              std::to_string(a.if_index) + " is taken by [" + it->second + "]");
            return false;
        }
        adapters.push_back(std::move(a));
    }
    if (adapters.empty()) {
        error = path + ": no [adapter NAME] section";
        return false;
    }
    for (auto &a : adapters)
        out.push_back(std::move(a));
    return true;
}

EmbeddedRegistry &EmbeddedRegistry::instance() {
    static EmbeddedRegistry registry;
    return registry;
}

std::optional<hw::TimeMode> parse_time_mode(std::string_view text) {
    if (text == "functional") return hw::TimeMode::kFunctional;
    if (text == "paced") return hw::TimeMode::kPaced;
    if (text == "simulated") return hw::TimeMode::kSimulated;
    return std::nullopt;
}

bool time_mode_from_environment(hw::TimeMode &mode, std::string &error) {
    mode = hw::TimeMode::kFunctional;
    const char *text = std::getenv("SOFTNDK_TIME");
    if (text == nullptr || *text == '\0') return true;
    const auto parsed = parse_time_mode(text);
    if (!parsed) {
        error = std::string("SOFTNDK_TIME: unknown time mode '") + text + "' (functional | paced | simulated)";
        return false;
    }
    mode = *parsed;
    return true;
}

bool EmbeddedRegistry::configure(std::vector<AdapterConfig> configs, std::string &error) {
    std::lock_guard lock(mutex_);
    if (loaded_) {
        error = "the embedded adapters exist already";
        return false;
    }
    configured_ = std::move(configs);
    return true;
}

bool EmbeddedRegistry::load(std::string &error) {
    if (loaded_) {
        error = load_error_;
        return load_error_.empty();
    }
    loaded_ = true;
    std::vector<AdapterConfig> configs;
    hw::TimeMode mode;
    if (!time_mode_from_environment(mode, load_error_)) {
        logger(Component::kDevice).error("{}", load_error_);
        error = load_error_;
        return false;
    }
    const char *path = std::getenv("SOFTNDK_CONFIG");
    if (configured_) {
        configs = std::move(*configured_);
    } else if (path != nullptr && *path != '\0') {
        if (!load_adapter_config(path, configs, load_error_)) {
            load_error_ = "SOFTNDK_CONFIG: " + load_error_;
            logger(Component::kDevice).error("{}", load_error_);
            error = load_error_;
            return false;
        }
    } else {
        configs = default_adapter_config();
    }
    if (!configured_) {
        for (auto &c : configs)
            c.time_mode = mode;
    }
    try {
        for (auto &c : configs)
            devices_.push_back(std::make_shared<Device>(std::move(c)));
    } catch (const std::exception &e) {
        load_error_ = e.what();
        devices_.clear();
        error = load_error_;
        return false;
    }
    return true;
}

std::shared_ptr<Device> EmbeddedRegistry::find(uint32_t if_index, std::string &error) {
    std::lock_guard lock(mutex_);
    if (!load(error)) return nullptr;
    for (const auto &d : devices_) {
        if (d->config().if_index == if_index) return d;
    }
    error = "no adapter with if_index " + std::to_string(if_index);
    return nullptr;
}

std::vector<std::shared_ptr<Device>> EmbeddedRegistry::devices(std::string &error) {
    std::lock_guard lock(mutex_);
    if (!load(error)) return {};
    return devices_;
}

}  // namespace softndk::emu
