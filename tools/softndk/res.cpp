#include "res.hpp"

#include <fmt/format.h>
#include <softndk_resources.h>

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ndk.hpp"
#include "report.hpp"
#include "stat.hpp"

namespace softndk::tool {

namespace {

constexpr ULONG kNoObject = 0xffffffffu;
constexpr unsigned kPort = 1;

// One printed field: a number, or a word (state names, yes/no).
using Value = std::variant<unsigned long long, std::string>;
using Fields = std::vector<std::pair<std::string, Value>>;

const char *qp_state_name(ULONG state) {
    static const char *const kNames[] = {"RESET", "INIT", "RTR", "RTS", "ERR"};
    return state < std::size(kNames) ? kNames[state] : "UNKNOWN";
}

const char *arm_type_name(ULONG type) {
    static const char *const kNames[] = {"errors", "any", "solicited"};
    return type < std::size(kNames) ? kNames[type] : "unknown";
}

Fields qp_fields(const SOFTNDK_RESOURCE &r) {
    const ULONG *v = r.Values;
    Fields f{{"lqpn", r.Number},
             {"rqpn", v[10]},
             {"type", std::string("RC")},
             {"state", std::string(qp_state_name(r.State))},
             {"sq-psn", v[7]},
             {"sq-una-psn", v[8]},
             {"rq-psn", v[9]},
             {"sq-depth", v[4]},
             {"sq-unfetched", v[12]},
             {"sq-outstanding", v[5]},
             {"rq-depth", v[6]},
             {"rq-queued", v[13]},
             {"pd", v[0]},
             {"scq", v[1]},
             {"rcq", v[2]}};
    if (v[3] != kNoObject) f.emplace_back("srq", v[3]);
    f.emplace_back("conn", v[11]);
    return f;
}

Fields cq_fields(const SOFTNDK_RESOURCE &r) {
    return {{"cqn", r.Number},
            {"cqe", r.Values[0]},
            {"queued", r.Values[1]},
            {"armed", std::string((r.State & 1) != 0 ? "yes" : "no")},
            {"dead", std::string((r.State & 2) != 0 ? "yes" : "no")},
            {"arm-type", std::string(arm_type_name(r.Values[2]))}};
}

Fields pd_fields(const SOFTNDK_RESOURCE &r) {
    return {{"pdn", r.Number}, {"users", r.Values[0]}};
}

std::string access_names(ULONG access) {
    static const std::pair<ULONG, const char *> kRights[] = {
        {0x01, "LR"}, {0x02, "LW"}, {0x04, "RR"}, {0x08, "RW"}, {0x10, "MW"}, {0x20, "RS"}};
    std::string out;
    for (const auto &[bit, name] : kRights)
        if ((access & bit) != 0) out += (out.empty() ? "" : ",") + std::string(name);
    return out.empty() ? "-" : out;
}

Fields mr_fields(const SOFTNDK_RESOURCE &r) {
    static const char *const kTypes[] = {"none", "mr", "fast-reg-mr", "mw1", "mw2", "privileged"};
    static const char *const kStates[] = {"invalid", "free", "valid"};
    const ULONG *v = r.Values;
    const unsigned long long iova = (static_cast<unsigned long long>(v[4]) << 32) | v[3];
    const unsigned long long length = (static_cast<unsigned long long>(v[6]) << 32) | v[5];
    return {{"mrn", r.Number},
            {"type", std::string(v[7] < std::size(kTypes) ? kTypes[v[7]] : "unknown")},
            {"state", std::string(r.State < std::size(kStates) ? kStates[r.State] : "unknown")},
            {"token", v[1]},
            {"iova", iova},
            {"mrlen", length},
            {"access", access_names(v[2])},
            {"pd", v[0]}};
}

Fields srq_fields(const SOFTNDK_RESOURCE &r) {
    const ULONG *v = r.Values;
    return {{"srqn", r.Number}, {"pd", v[0]},    {"depth", v[1]},
            {"queued", v[2]},   {"limit", v[3]}, {"armed", std::string(v[3] != 0 ? "yes" : "no")},
            {"max-sge", v[4]}};
}

// Values[first..first+3] hold an IP's 16 bytes; Values[first+4] its port.
std::string cm_address(const ULONG *values) {
    uint8_t ip[16];
    std::memcpy(ip, values, sizeof ip);
    static constexpr uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    char text[INET6_ADDRSTRLEN] = {};
    const bool v4 = std::memcmp(ip, kV4Mapped, sizeof kV4Mapped) == 0;
    ::inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? ip + 12 : ip, text, sizeof text);
    return v4 ? fmt::format("{}:{}", text, values[4]) : fmt::format("[{}]:{}", text, values[4]);
}

Fields cm_fields(const SOFTNDK_RESOURCE &r) {
    static const char *const kRoles[] = {"?", "active", "passive", "listener", "shared-endpoint"};
    static const char *const kStates[] = {
        "req-sent",     "replied", "requested", "accepted",  "established", "disconnecting",
        "disconnected", "closed",  "failed",    "listening", "paused",      "bound"};
    const ULONG role = r.State >> 8, state = r.State & 0xff;
    ULONG id = r.Number;
    if (role == 3) id -= SOFTNDK_CM_LISTENER_BASE;
    if (role == 4) id -= SOFTNDK_CM_SHARED_ENDPOINT_BASE;
    Fields f{{"cm-id", id},
             {"role", std::string(role < std::size(kRoles) ? kRoles[role] : "?")},
             {"state", std::string(state < std::size(kStates) ? kStates[state] : "?")},
             {"src-addr", cm_address(r.Values)}};
    if (role == 1 || role == 2) {
        f.emplace_back("dst-addr", cm_address(r.Values + 5));
        f.emplace_back("lqpn", r.Values[10]);
        f.emplace_back("peer-cm-id", r.Values[11]);
    }
    return f;
}

struct Kind {
    const char *name;
    ULONG kind;
    Fields (*fields)(const SOFTNDK_RESOURCE &);
};
constexpr Kind kKinds[] = {
    {"qp", SoftNdkResourceQp, qp_fields},    {"cq", SoftNdkResourceCq, cq_fields},
    {"pd", SoftNdkResourcePd, pd_fields},    {"mr", SoftNdkResourceMr, mr_fields},
    {"srq", SoftNdkResourceSrq, srq_fields}, {"cm", SoftNdkResourceCm, cm_fields}};

std::vector<SOFTNDK_RESOURCE> query_all(const WskClient &wsk, const softndk_adapter &a,
                                        ULONG kind) {
    NDK_ADAPTER *adapter = wsk.open(a.if_index);
    std::vector<SOFTNDK_RESOURCE> all;
    ULONG start = 0;
    do {
        SOFTNDK_RESOURCE page[32];
        ULONG count = 0, next = 0;
        const NTSTATUS s =
            SoftNdkQueryResources(adapter, kind, start, page, std::size(page), &count, &next);
        if (!NT_SUCCESS(s)) {
            wsk.close(adapter);
            check(s, "SoftNdkQueryResources");
        }
        all.insert(all.end(), page, page + count);
        start = next;
    } while (start != 0);
    wsk.close(adapter);
    return all;
}

std::string json_key(std::string key) {
    for (char &c : key)
        if (c == '-') c = '_';
    return json_string(key);
}

}  // namespace

int run_res(const ResOptions &options) {
    const Kind *kind = nullptr;
    for (const Kind &k : kKinds)
        if (options.kind == k.name) kind = &k;
    if (kind == nullptr) {  // add_res checks the kind; this is a missing table row
        std::fprintf(stderr, "softndk res show %s: unknown kind\n", options.kind.c_str());
        return 2;
    }
    const std::vector<softndk_adapter> adapters = select_adapters(options.device);
    WskClient wsk;
    std::string text;
    std::vector<std::string> objects;
    for (const auto &a : adapters) {
        for (const SOFTNDK_RESOURCE &r : query_all(wsk, a, kind->kind)) {
            Fields fields = kind->fields(r);
            fields.emplace_back("ctx", static_cast<unsigned long long>(r.Context));
            fields.emplace_back("pid", static_cast<unsigned long long>(r.ProcessId));
            if (options.json) {
                std::string o =
                    fmt::format("{{\"ifname\": {}, \"port\": {}", json_string(a.alias), kPort);
                for (const auto &[key, value] : fields) {
                    o += ", " + json_key(key) + ": ";
                    o += std::holds_alternative<std::string>(value)
                             ? json_string(std::get<std::string>(value))
                             : std::to_string(std::get<unsigned long long>(value));
                }
                objects.push_back(o + "}");
            } else {
                text += fmt::format("link {}/{}", a.alias, kPort);
                for (const auto &[key, value] : fields) {
                    text += " " + key + " ";
                    text += std::holds_alternative<std::string>(value)
                                ? std::get<std::string>(value)
                                : std::to_string(std::get<unsigned long long>(value));
                }
                text += "\n";
            }
        }
    }
    if (options.json) {
        print_json_array(objects);
    } else {
        std::fputs(text.c_str(), stdout);
    }
    return 0;
}

}  // namespace softndk::tool
