#include "device/config.hpp"

#include <arpa/inet.h>

#include <boost/algorithm/string.hpp>
#include <boost/property_tree/ini_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <cstdlib>
#include <set>

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

bool load_adapter_config(const std::string &path, std::vector<AdapterConfig> &out,
                         std::string &error) {
    namespace pt = boost::property_tree;
    pt::ptree tree;
    try {
        pt::read_ini(path, tree);
    } catch (const pt::ini_parser_error &e) {
        error = e.what();
        return false;
    }
    std::set<uint32_t> indexes;
    for (const auto &[section, body] : tree) {
        if (!boost::starts_with(section, "adapter")) continue;
        AdapterConfig a;
        a.alias = boost::trim_copy(section.substr(7));
        try {
            a.if_index = body.get<uint32_t>("if_index");
            a.alias = body.get<std::string>("alias", a.alias.empty() ? section : a.alias);
            const auto profile = body.get<std::string>("profile", "roce-default");
            auto p = find_profile(profile);
            if (!p) {
                error = section + ": unknown profile '" + profile + "'";
                return false;
            }
            a.profile = *p;
            for (const char *key : {"ipv4", "ipv6"}) {
                std::vector<std::string> items;
                boost::split(items, body.get<std::string>(key, ""), boost::is_any_of(", "),
                             boost::token_compress_on);
                for (const auto &item : items) {
                    if (item.empty()) continue;
                    wire::IpAddr ip;
                    if (!parse_ip(item, ip) || ip.is_v4() != (key[3] == '4')) {
                        error = section + ": bad " + key + " address '" + item + "'";
                        return false;
                    }
                    a.addresses.push_back(ip);
                }
            }
            auto &t = a.profile.transport;
            t.retry_count =
                static_cast<uint8_t>(body.get<unsigned>("retry_count", t.retry_count) & 7);
            t.rnr_retry = static_cast<uint8_t>(body.get<unsigned>("rnr_retry", t.rnr_retry) & 7);
            t.min_rnr_timer =
                static_cast<uint8_t>(body.get<unsigned>("min_rnr_timer", t.min_rnr_timer) & 31);
            t.ack_timeout =
                static_cast<uint8_t>(body.get<unsigned>("ack_timeout", t.ack_timeout) & 31);
            t.cm_timeout_ms = body.get<uint32_t>("cm_timeout_ms", t.cm_timeout_ms);
            const uint32_t mtu = body.get<uint32_t>("path_mtu", a.profile.limits.path_mtu);
            if (!wire::is_valid_path_mtu(mtu)) {
                error = section + ": bad path_mtu";
                return false;
            }
            a.profile.limits.path_mtu = mtu;
            const std::string keys = body.get<std::string>("fast_register_keys", "stable");
            if (keys == "rotate") {
                a.profile.limits.quirks |= hw::kQuirkRotateFastRegisterKeys;
            } else if (keys == "stable") {
                a.profile.limits.quirks &= ~uint32_t{hw::kQuirkRotateFastRegisterKeys};
            } else {
                error = section + ": bad fast_register_keys '" + keys + "' (stable | rotate)";
                return false;
            }
        } catch (const pt::ptree_error &e) {
            error = section + ": " + e.what();
            return false;
        }
        if (a.if_index == 0 || !indexes.insert(a.if_index).second) {
            error = section + ": if_index must be unique and > 0";
            return false;
        }
        if (a.addresses.empty()) {
            error = section + ": no address";
            return false;
        }
        out.push_back(std::move(a));
    }
    if (out.empty()) {
        error = path + ": no [adapter NAME] section";
        return false;
    }
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
        error = std::string("SOFTNDK_TIME: unknown time mode '") + text +
                "' (functional | paced)";
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
