#include "device/faults.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "device/device.hpp"
#include "device/ini.hpp"
#include "device/log.hpp"
#include "device/status.hpp"
#include "softndk/trace.hpp"

namespace softndk::emu {
namespace {

using hw::FaultKind;

struct KindInfo {
    FaultKind kind;
    std::string_view name;
    Counter counter;
    bool armed;  // kept as a spec (else carried out at once by the command handler)
};
constexpr KindInfo kKinds[] = {
    {FaultKind::kPacketDrop, "drop", Counter::fault_drops, true},
    {FaultKind::kPacketDelay, "delay", Counter::fault_delays, true},
    {FaultKind::kPacketDuplicate, "duplicate", Counter::fault_duplicates, true},
    {FaultKind::kPacketReorder, "reorder", Counter::fault_reorders, true},
    {FaultKind::kPacketCorrupt, "corrupt", Counter::fault_corruptions, true},
    {FaultKind::kFailOperation, "fail-operation", Counter::fault_failed_ops, true},
    {FaultKind::kFailCommand, "fail-command", Counter::fault_failed_cmds, true},
    {FaultKind::kRnrStorm, "rnr-storm", Counter::fault_rnr_naks, true},
    {FaultKind::kExpireToken, "expire-token", Counter::fault_expired_tokens, true},
    {FaultKind::kQpError, "qp-error", Counter::fault_qp_errors, false},
    {FaultKind::kKillConnection, "kill-connection", Counter::fault_killed_conns, false},
    {FaultKind::kPeerVanish, "peer-vanish", Counter::fault_vanished, false},
    {FaultKind::kCqOverrun, "cq-overrun", Counter::fault_cq_overruns, false},
    {FaultKind::kEqStorm, "eq-storm", Counter::fault_eq_events, false},
};
const KindInfo *kind_info(uint32_t kind) {
    for (const auto &k : kKinds)
        if (static_cast<uint32_t>(k.kind) == kind) return &k;
    return nullptr;
}
bool is_packet_kind(uint32_t kind) {
    return kind >= static_cast<uint32_t>(FaultKind::kPacketDrop) &&
           kind <= static_cast<uint32_t>(FaultKind::kPacketCorrupt);
}

constexpr std::pair<std::string_view, hw::Syndrome> kSyndromeNames[] = {
    {"local-length", hw::Syndrome::kLocalLength},
    {"local-qp-operation", hw::Syndrome::kLocalQpOperation},
    {"local-protection", hw::Syndrome::kLocalProtection},
    {"flushed", hw::Syndrome::kWorkRequestFlushed},
    {"memory-window-bind", hw::Syndrome::kMemoryWindowBind},
    {"bad-response", hw::Syndrome::kBadResponse},
    {"local-access", hw::Syndrome::kLocalAccess},
    {"remote-invalid-request", hw::Syndrome::kRemoteInvalidRequest},
    {"remote-access", hw::Syndrome::kRemoteAccess},
    {"remote-operation", hw::Syndrome::kRemoteOperation},
    {"retry-exceeded", hw::Syndrome::kTransportRetryExceeded},
    {"rnr-retry-exceeded", hw::Syndrome::kRnrRetryExceeded},
    {"remote-aborted", hw::Syndrome::kRemoteAborted},
    {"receive-overflow", hw::Syndrome::kReceiveOverflow},
};
bool valid_error_syndrome(int32_t s) {
    for (const auto &[name, syndrome] : kSyndromeNames)
        if (static_cast<int32_t>(syndrome) == s) return true;
    return false;
}

constexpr std::pair<std::string_view, hw::FaultOperation> kOperationNames[] = {
    {"any", hw::FaultOperation::kAny},         {"send", hw::FaultOperation::kSend},
    {"receive", hw::FaultOperation::kReceive}, {"read", hw::FaultOperation::kRead},
    {"write", hw::FaultOperation::kWrite},     {"fast-register", hw::FaultOperation::kFastRegister},
    {"bind", hw::FaultOperation::kBind},       {"invalidate", hw::FaultOperation::kInvalidate},
};

using O = hw::CommandOpcode;
constexpr std::pair<std::string_view, O> kCommandNames[] = {
    {"create-pd", O::kCreatePd},
    {"destroy-pd", O::kDestroyPd},
    {"create-cq", O::kCreateCq},
    {"destroy-cq", O::kDestroyCq},
    {"resize-cq", O::kResizeCq},
    {"moderate-cq", O::kModerateCq},
    {"create-qp", O::kCreateQp},
    {"destroy-qp", O::kDestroyQp},
    {"flush-qp", O::kFlushQp},
    {"create-srq", O::kCreateSrq},
    {"destroy-srq", O::kDestroySrq},
    {"modify-srq", O::kModifySrq},
    {"alloc-mr", O::kAllocMr},
    {"register-mr", O::kRegisterMr},
    {"deregister-mr", O::kDeregisterMr},
    {"init-fast-register-mr", O::kInitFastRegMr},
    {"free-mr", O::kFreeMr},
    {"build-lam", O::kBuildLam},
    {"release-lam", O::kReleaseLam},
    {"privileged-token", O::kPrivilegedToken},
    {"alloc-mw", O::kAllocMw},
    {"free-mw", O::kFreeMw},
    {"listen", O::kListen},
    {"close-listener", O::kCloseListener},
    {"pause-listener", O::kPauseListener},
    {"connect", O::kConnect},
    {"accept", O::kAccept},
    {"reject", O::kReject},
    {"complete-connect", O::kCompleteConnect},
    {"disconnect", O::kDisconnect},
    {"close-connection", O::kCloseConnection},
    {"query-connection", O::kQueryConnection},
    {"create-shared-endpoint", O::kCreateSharedEndpoint},
    {"close-shared-endpoint", O::kCloseSharedEndpoint},
};
bool failable_command(uint32_t op) {
    for (const auto &[name, opcode] : kCommandNames)
        if (static_cast<uint32_t>(opcode) == op) return true;
    return false;  // attach, detach and the fault commands themselves never fail
}

constexpr std::pair<std::string_view, int32_t> kStatusNames[] = {
    {"insufficient-resources", status::kInsufficientResources},
    {"invalid-parameter", status::kInvalidParameter},
    {"no-memory", status::kNoMemory},
    {"unsuccessful", status::kUnsuccessful},
    {"io-timeout", status::kIoTimeout},
    {"internal-error", status::kInternalError},
    {"invalid-device-state", status::kInvalidDeviceState},
    {"connection-refused", status::kConnectionRefused},
    {"host-unreachable", status::kHostUnreachable},
    {"network-unreachable", status::kNetworkUnreachable},
    {"connection-aborted", status::kConnectionAborted},
    {"device-removed", status::kDeviceRemoved},
    {"implementation-limit", status::kImplementationLimit},
};

constexpr std::pair<std::string_view, uint32_t> kPacketClassNames[] = {
    {"send", hw::kFaultPacketSend},
    {"write", hw::kFaultPacketWrite},
    {"read-request", hw::kFaultPacketReadRequest},
    {"read-response", hw::kFaultPacketReadResponse},
    {"ack", hw::kFaultPacketAck},
};
constexpr uint32_t kAllPacketClasses = 0x1f;

uint32_t packet_class_of(const Packet &p) {
    switch (p.desc.info().family) {
        case wire::OpFamily::kSend:
            return hw::kFaultPacketSend;
        case wire::OpFamily::kWrite:
            return hw::kFaultPacketWrite;
        case wire::OpFamily::kReadRequest:
            return hw::kFaultPacketReadRequest;
        case wire::OpFamily::kReadResponse:
            return hw::kFaultPacketReadResponse;
        case wire::OpFamily::kAck:
            return hw::kFaultPacketAck;
        default:
            return 0;
    }
}

template <class T, size_t N>
std::optional<T> lookup(const std::pair<std::string_view, T> (&table)[N], std::string_view name) {
    for (const auto &[n, v] : table)
        if (n == name) return v;
    return std::nullopt;
}

std::string name_list(auto const &table) {
    std::string out;
    for (const auto &[n, v] : table) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

uint64_t splitmix64(uint64_t &state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

}  // namespace

std::string_view fault_kind_name(hw::FaultKind kind) {
    const KindInfo *k = kind_info(static_cast<uint32_t>(kind));
    return k ? k->name : "unknown";
}

// ---------------------------------------------------------------------------
// The file format (docs/faults.md)
// ---------------------------------------------------------------------------
bool parse_fault_text(std::string_view text, const std::string &origin,
                      std::vector<hw::FaultRequest> &out, std::string &error) {
    IniDocument doc;
    if (!parse_ini(text, origin, doc, error)) return false;
    for (const IniEntry &e : doc.entries) {
        if (e.section.empty()) {
            error = ini_error(doc, e.line, e.section, e.key,
                              "a key outside a section (one [NAME] section per fault)");
            return false;
        }
    }
    for (const IniSection &section : doc.sections) {
        hw::FaultRequest rq{};
        rq.qp = hw::kNoObject;
        rq.probability_ppm = hw::kFaultCertain;
        std::memcpy(rq.name, section.name.data(),
                    std::min(section.name.size(), sizeof rq.name - 1));
        std::vector<const IniEntry *> entries;
        for (const IniEntry &e : doc.entries)
            if (e.section == section.name) entries.push_back(&e);
        auto fail = [&](const IniEntry *e, const std::string &why) {
            error = ini_error(doc, e ? e->line : section.line, section.name, e ? e->key : "", why);
            return false;
        };
        const IniEntry *kind_entry = nullptr;
        for (const IniEntry *e : entries)
            if (e->key == "kind") kind_entry = e;
        if (kind_entry == nullptr) return fail(nullptr, "no kind");
        const KindInfo *kind = nullptr;
        for (const auto &k : kKinds)
            if (k.name == kind_entry->value) kind = &k;
        if (kind == nullptr) {
            std::string names;
            for (const auto &k : kKinds)
                if (k.armed) names += (names.empty() ? "" : ", ") + std::string(k.name);
            return fail(kind_entry,
                        "unknown kind '" + kind_entry->value + "' (one of " + names + ")");
        }
        if (!kind->armed) {
            return fail(kind_entry, "kind " + kind_entry->value +
                                        " acts at once on an existing object: inject it with "
                                        "SoftNdkInjectFault (softndk_faults.h)");
        }
        rq.kind = static_cast<uint32_t>(kind->kind);
        const bool packet = is_packet_kind(rq.kind);
        const bool fail_op = kind->kind == FaultKind::kFailOperation;
        const bool fail_cmd = kind->kind == FaultKind::kFailCommand;
        rq.count = fail_op || fail_cmd ? 1 : 0;
        bool have_status = false, have_command = false, have_delay = false, have_duration = false,
             have_token = false;
        for (const IniEntry *e : entries) {
            const std::string &k = e->key;
            const std::string &v = e->value;
            std::string why;
            uint64_t n = 0;
            auto number = [&](uint64_t min, uint64_t max) {
                return parse_ini_number(v, min, max, n, why);
            };
            // Which keys each kind takes.
            const bool allowed =
                k == "kind" || k == "count" || (k == "qp" && !fail_cmd) ||
                ((k == "direction" || k == "packet") && packet) ||
                (k == "probability" && (packet || kind->kind == FaultKind::kRnrStorm)) ||
                (k == "delay_ns" && kind->kind == FaultKind::kPacketDelay) ||
                (k == "operation" && fail_op) || (k == "status" && (fail_op || fail_cmd)) ||
                (k == "command" && fail_cmd) ||
                (k == "duration_ns" && kind->kind == FaultKind::kRnrStorm) ||
                (k == "start_ns" &&
                 (kind->kind == FaultKind::kRnrStorm || kind->kind == FaultKind::kExpireToken)) ||
                (k == "token" && kind->kind == FaultKind::kExpireToken);
            if (!allowed) {
                return fail(e, "unknown key '" + k + "' for kind " + std::string(kind->name));
            }
            if (k == "kind") continue;
            if (k == "count") {
                if (!number(fail_op || fail_cmd ? 1 : 0, 0xffffffffu)) return fail(e, why);
                rq.count = static_cast<uint32_t>(n);
            } else if (k == "qp") {
                if (v == "any") {
                    rq.qp = hw::kNoObject;
                } else {
                    if (!number(2, kMaxQueues - 1)) return fail(e, why + " (a QP number or any)");
                    rq.qp = static_cast<uint32_t>(n);
                }
            } else if (k == "direction") {
                if (v == "both")
                    rq.direction = static_cast<uint32_t>(hw::FaultDirection::kBoth);
                else if (v == "tx")
                    rq.direction = static_cast<uint32_t>(hw::FaultDirection::kTransmit);
                else if (v == "rx")
                    rq.direction = static_cast<uint32_t>(hw::FaultDirection::kReceive);
                else
                    return fail(e, "'" + v + "' is not tx, rx or both");
            } else if (k == "packet") {
                rq.packet_class = 0;
                if (v != "any") {
                    size_t start = 0;
                    while (start <= v.size()) {
                        size_t comma = v.find(',', start);
                        if (comma == std::string::npos) comma = v.size();
                        std::string item = v.substr(start, comma - start);
                        item.erase(0, item.find_first_not_of(" \t"));
                        item.erase(item.find_last_not_of(" \t") + 1);
                        auto bit = lookup(kPacketClassNames, item);
                        if (!bit) {
                            return fail(e, "'" + item + "' is not a packet class (any, " +
                                               name_list(kPacketClassNames) + ")");
                        }
                        rq.packet_class |= *bit;
                        start = comma + 1;
                    }
                }
            } else if (k == "probability") {
                // 0.05 or 5%
                std::string t = v;
                double scale = 1.0;
                if (!t.empty() && t.back() == '%') {
                    t.pop_back();
                    scale = 100.0;
                }
                char *end = nullptr;
                const double p = t.empty() ? -1 : std::strtod(t.c_str(), &end) / scale;
                if (t.empty() || *end != '\0' || !(p >= 0.0 && p <= 1.0)) {
                    return fail(e, "'" + v + "' is not a probability (0..1 or 0%..100%)");
                }
                // Rounded by hand: std::llround would need libm in C consumers' links.
                rq.probability_ppm = static_cast<uint32_t>(p * hw::kFaultCertain + 0.5);
            } else if (k == "delay_ns") {
                if (!number(1, uint64_t{1} << 40)) return fail(e, why);
                rq.time_ns = n;
                have_delay = true;
            } else if (k == "duration_ns") {
                if (!number(1, uint64_t{1} << 50)) return fail(e, why);
                rq.time_ns = n;
                have_duration = true;
            } else if (k == "start_ns") {
                if (!number(0, uint64_t{1} << 62)) return fail(e, why);
                rq.start_ns = n;
            } else if (k == "token") {
                if (!number(1, 0xffffffffu)) return fail(e, why);
                rq.token = static_cast<uint32_t>(n);
                have_token = true;
            } else if (k == "operation") {
                auto op = lookup(kOperationNames, v);
                if (!op) return fail(e, "'" + v + "' is not one of " + name_list(kOperationNames));
                rq.operation = static_cast<uint32_t>(*op);
            } else if (k == "command") {
                auto op = lookup(kCommandNames, v);
                if (!op) return fail(e, "'" + v + "' is not one of " + name_list(kCommandNames));
                rq.operation = static_cast<uint32_t>(*op);
                have_command = true;
            } else if (k == "status" && fail_op) {
                auto s = lookup(kSyndromeNames, v);
                if (!s) return fail(e, "'" + v + "' is not one of " + name_list(kSyndromeNames));
                rq.status = static_cast<int32_t>(*s);
                have_status = true;
            } else if (k == "status") {
                if (auto s = lookup(kStatusNames, v)) {
                    rq.status = *s;
                } else if (number(0xC0000000u, 0xFFFFFFFFu)) {
                    rq.status = static_cast<int32_t>(static_cast<uint32_t>(n));
                } else {
                    return fail(e, "'" + v + "' is not an error NTSTATUS (0xC.......) or one of " +
                                       name_list(kStatusNames));
                }
                have_status = true;
            }
        }
        if (kind->kind == FaultKind::kPacketDelay && !have_delay)
            return fail(nullptr, "no delay_ns");
        if (kind->kind == FaultKind::kRnrStorm && !have_duration)
            return fail(nullptr, "no duration_ns");
        if (kind->kind == FaultKind::kExpireToken && !have_token) return fail(nullptr, "no token");
        if ((fail_op || fail_cmd) && !have_status) return fail(nullptr, "no status");
        if (fail_cmd && !have_command) return fail(nullptr, "no command");
        out.push_back(rq);
    }
    return true;
}

bool parse_fault_file(const std::string &path, std::vector<hw::FaultRequest> &out,
                      std::string &error) {
    std::string text;
    if (!read_text_file(path, text, error)) return false;
    return parse_fault_text(text, path, out, error);
}

// ---------------------------------------------------------------------------
// The injector
// ---------------------------------------------------------------------------
FaultInjector::FaultInjector(Device &device, uint64_t seed)
    : device_(device),
      state_(seed ^ (uint64_t{device.config().if_index} * 0xd6e8feb86659fd93ull)) {}

uint64_t FaultInjector::seed_from_environment() {
    const char *text = std::getenv("SOFTNDK_SEED");
    if (text == nullptr || *text == '\0') return 0;
    uint64_t seed = 0;
    std::string why;
    if (!parse_ini_number(text, 0, UINT64_MAX, seed, why))
        throw std::runtime_error(std::string("SOFTNDK_SEED: ") + why);
    return seed;
}

void FaultInjector::load_environment() {
    const char *path = std::getenv("SOFTNDK_FAULTS");
    if (path == nullptr || *path == '\0') return;
    std::vector<hw::FaultRequest> specs;
    std::string error;
    if (!parse_fault_file(path, specs, error)) throw std::runtime_error("SOFTNDK_FAULTS: " + error);
    for (const auto &rq : specs) {
        uint32_t id = 0;
        const int32_t s = add(0, rq, id);
        if (s != status::kSuccess)
            throw std::runtime_error(std::string("SOFTNDK_FAULTS: ") + path +
                                     ": a spec was refused");
    }
    logger(Component::kDevice)
        .info("{}: {} fault spec(s) armed from {}", device_.config().alias, specs.size(), path);
}

int32_t FaultInjector::add(uint32_t context, const hw::FaultRequest &rq, uint32_t &id) {
    const KindInfo *kind = kind_info(rq.kind);
    if (kind == nullptr) return status::kInvalidParameter;
    if (!kind->armed) return status::kInvalidParameter;  // carried out by the command handler
    if (rq.probability_ppm > hw::kFaultCertain) return status::kInvalidParameter;
    if (rq.qp != hw::kNoObject && (rq.qp < 2 || rq.qp >= kMaxQueues))
        return status::kInvalidParameter;
    if (is_packet_kind(rq.kind)) {
        if (rq.direction > static_cast<uint32_t>(hw::FaultDirection::kReceive) ||
            (rq.packet_class & ~kAllPacketClasses) != 0) {
            return status::kInvalidParameter;
        }
        if (kind->kind == FaultKind::kPacketDelay && (rq.time_ns == 0 || rq.time_ns > (1ull << 40)))
            return status::kInvalidParameter;
    }
    switch (kind->kind) {
        case FaultKind::kFailOperation:
            if (rq.count == 0 ||
                rq.operation > static_cast<uint32_t>(hw::FaultOperation::kInvalidate) ||
                !valid_error_syndrome(rq.status)) {
                return status::kInvalidParameter;
            }
            break;
        case FaultKind::kFailCommand:
            if (rq.count == 0 || !failable_command(rq.operation) || rq.status >= 0)
                return status::kInvalidParameter;
            break;
        case FaultKind::kRnrStorm:
            if (rq.time_ns == 0) return status::kInvalidParameter;
            break;
        case FaultKind::kExpireToken:
            if (hw::is_reserved_token(rq.token)) return status::kInvalidParameter;
            break;
        default:
            break;
    }
    FaultSpec spec;
    spec.context = context;
    spec.request = rq;
    spec.request.name[sizeof spec.request.name - 1] = 0;
    spec.name = reinterpret_cast<const char *>(spec.request.name);
    spec.unlimited = rq.count == 0;
    spec.remaining = rq.count;
    // Storms and expiries are dated from now when no start is given.
    if ((kind->kind == FaultKind::kRnrStorm || kind->kind == FaultKind::kExpireToken) &&
        rq.start_ns == 0) {
        spec.request.start_ns = device_.clock().now();
    }
    std::lock_guard lock(mutex_);
    spec.id = next_id_++;
    id = spec.id;
    if (spec.name.empty()) spec.name = std::string(kind->name) + "#" + std::to_string(spec.id);
    logger(Component::kDevice)
        .debug("{}: fault {} armed ({}, qp {}, count {}, p {} ppm)", device_.config().alias,
               spec.name, kind->name,
               rq.qp == hw::kNoObject ? std::string("any") : std::to_string(rq.qp), rq.count,
               rq.probability_ppm);
    specs_.push_back(std::move(spec));
    update_active_locked();
    return status::kSuccess;
}

int32_t FaultInjector::remove(uint32_t context, uint32_t id) {
    std::lock_guard lock(mutex_);
    const size_t before = specs_.size();
    std::erase_if(specs_, [&](const FaultSpec &s) {
        return s.context == context && (id == 0 || s.id == id);
    });
    std::erase_if(vanished_, [&](const auto &v) {
        return std::none_of(specs_.begin(), specs_.end(),
                            [&](const FaultSpec &s) { return s.id == v.first; });
    });
    update_active_locked();
    return id != 0 && specs_.size() == before ? status::kInvalidParameter : status::kSuccess;
}

void FaultInjector::context_gone(uint32_t context) {
    if (context != 0) remove(context, 0);
}

size_t FaultInjector::armed() const {
    std::lock_guard lock(mutex_);
    return specs_.size();
}

uint64_t FaultInjector::draw() {
    std::lock_guard lock(mutex_);
    return splitmix64(state_);
}

void FaultInjector::update_active_locked() {
    active_.store(!specs_.empty() || held_tx_ || held_rx_, std::memory_order_release);
}

bool FaultInjector::applies_locked(const FaultSpec &spec, uint32_t context) const {
    return spec.context == 0 || spec.context == context ||
           (context != kNoContext && device_.same_consumer(spec.context, context));
}

bool FaultInjector::fires_locked(FaultSpec &spec) {
    if (!spec.unlimited && spec.remaining == 0) return false;
    const uint32_t p = spec.request.probability_ppm;
    if (p == 0) return false;
    if (p < hw::kFaultCertain && splitmix64(state_) % hw::kFaultCertain >= p) return false;
    if (!spec.unlimited) --spec.remaining;
    return true;
}

void FaultInjector::retire_spent_locked() {
    std::erase_if(specs_, [](const FaultSpec &s) {
        const auto kind = static_cast<FaultKind>(s.request.kind);
        // An expiry and a vanish stay in force; a storm ends with its window (checked
        // at use), a counted spec with its count.
        return !s.unlimited && s.remaining == 0 && kind != FaultKind::kExpireToken &&
               kind != FaultKind::kPeerVanish;
    });
    update_active_locked();
}

void FaultInjector::record(hw::FaultKind kind, uint32_t object, uint64_t model_ns,
                           std::string_view detail) {
    const KindInfo *k = kind_info(static_cast<uint32_t>(kind));
    auto &counters = device_.counters();
    counters.add(Counter::faults_injected);
    if (k != nullptr) counters.add(k->counter);
    logger(Component::kDevice)
        .info("{}: fault {} on #{} at {} ns: {}", device_.config().alias, k ? k->name : "unknown",
              object, model_ns, detail);
    // Simulated time: the fault shows in the scheduler's trace beside the decisions.
    sim::trace_note("fault", fmt::format("{} {} on #{} at {} ns: {}", device_.config().alias,
                                         k ? k->name : "unknown", object, model_ns, detail));
    if (trace::on())
        trace::fault(device_.config().if_index, model_ns,
                     fmt::format("{}: {}", k ? k->name : "unknown", detail).c_str(), object);
}

std::shared_ptr<Packet> FaultInjector::copy_of(const Packet &packet) {
    auto copy = std::make_shared<Packet>();
    copy->desc = packet.desc;
    copy->time_ns = packet.time_ns;
    copy->icrc_corrupt = packet.icrc_corrupt;
    copy->own_payload(packet.desc.payload);
    return copy;
}

bool FaultInjector::vanished_locked(const wire::IpAddr &ip) const {
    for (const auto &[id, peer] : vanished_)
        if (peer == ip) return true;
    return false;
}

bool FaultInjector::cm_passes(const wire::IpAddr &peer) {
    if (!active_.load(std::memory_order_acquire)) return true;
    {
        std::lock_guard lock(mutex_);
        if (!vanished_locked(peer)) return true;
    }
    record(FaultKind::kPeerVanish, 0, device_.clock().now(),
           "CM message to/from a vanished peer lost");
    return false;
}

void FaultInjector::vanish(uint32_t context, uint32_t qp, const wire::IpAddr &peer, uint32_t &id) {
    std::lock_guard lock(mutex_);
    FaultSpec spec;
    spec.id = next_id_++;
    spec.context = context;
    spec.request.kind = static_cast<uint32_t>(FaultKind::kPeerVanish);
    spec.request.qp = qp;
    spec.unlimited = true;
    spec.name = "peer-vanish#" + std::to_string(spec.id);
    id = spec.id;
    vanished_.emplace_back(spec.id, peer);
    specs_.push_back(std::move(spec));
    update_active_locked();
}

std::optional<FaultInjector::PacketAction> FaultInjector::packet_fault_locked(
    Hook hook, uint32_t qp, uint32_t context, const Packet &packet) {
    const uint32_t cls = packet_class_of(packet);
    for (FaultSpec &s : specs_) {
        const auto &rq = s.request;
        if (!is_packet_kind(rq.kind)) continue;
        const auto dir = static_cast<hw::FaultDirection>(rq.direction);
        if (dir == hw::FaultDirection::kTransmit && hook != Hook::kTransmit) continue;
        if (dir == hw::FaultDirection::kReceive && hook != Hook::kReceive) continue;
        if (rq.qp != hw::kNoObject && rq.qp != qp) continue;
        if (rq.packet_class != 0 && (rq.packet_class & cls) == 0) continue;
        if (!applies_locked(s, context) || !fires_locked(s)) continue;
        PacketAction a{static_cast<FaultKind>(rq.kind), rq.time_ns, s.name};
        retire_spent_locked();
        return a;
    }
    return std::nullopt;
}

namespace {
std::string describe(const Packet &p, std::string_view what, std::string_view spec) {
    return fmt::format("{} {} psn {:#x} to qp#{} ({})", what, wire::to_string(p.desc.bth.opcode),
                       p.desc.bth.psn, p.desc.bth.dest_qp, spec);
}
}  // namespace

void FaultInjector::transmit(uint32_t qp, uint32_t context, Packet &&packet, const SendFn &send) {
    if (!active_.load(std::memory_order_acquire)) return send(std::move(packet));  // nothing armed
    std::optional<PacketAction> action;
    std::shared_ptr<Packet> held;
    bool vanished = false;
    {
        std::lock_guard lock(mutex_);
        if (specs_.empty() && !held_tx_) {
            // the common case: nothing armed
        } else {
            vanished = vanished_locked(packet.desc.meta.dst_ip);
            if (!vanished) action = packet_fault_locked(Hook::kTransmit, qp, context, packet);
            if (!action || action->kind != FaultKind::kPacketReorder) held = std::move(held_tx_);
            if (action && action->kind == FaultKind::kPacketReorder) held_tx_ = copy_of(packet);
            update_active_locked();
        }
    }
    const uint64_t now = packet.time_ns;
    if (vanished) {
        record(FaultKind::kPeerVanish, qp, now,
               describe(packet, "lost (peer vanished)", "peer-vanish"));
        if (held) send(std::move(*held));
        return;
    }
    if (!action) {
        send(std::move(packet));
        if (held) send(std::move(*held));
        return;
    }
    switch (action->kind) {
        case FaultKind::kPacketDrop:
            record(action->kind, qp, now, describe(packet, "dropped", action->name));
            break;
        case FaultKind::kPacketCorrupt:
            record(action->kind, qp, now, describe(packet, "corrupted", action->name));
            packet.icrc_corrupt = true;
            send(std::move(packet));
            break;
        case FaultKind::kPacketDuplicate: {
            record(action->kind, qp, now, describe(packet, "duplicated", action->name));
            auto copy = copy_of(packet);
            send(std::move(packet));
            send(std::move(*copy));
            break;
        }
        case FaultKind::kPacketReorder:
            record(action->kind, qp, now,
                   describe(packet, "held behind the next packet", action->name));
            break;
        case FaultKind::kPacketDelay: {
            record(action->kind, qp, now,
                   describe(packet, fmt::format("delayed {} ns", action->delay_ns), action->name));
            auto copy = copy_of(packet);
            copy->time_ns += action->delay_ns;
            device_.schedule(device_.wall_deadline(now, copy->time_ns),
                             [copy, send] { send(std::move(*copy)); });
            break;
        }
        default:
            send(std::move(packet));
            break;
    }
    if (held) send(std::move(*held));
}

void FaultInjector::receive(Packet &packet, const DeliverFn &deliver) {
    const uint32_t qp = packet.desc.bth.dest_qp;
    if (packet.icrc_corrupt) {
        // The receiver's ICRC check fails: hardware drops the packet and counts it.
        device_.counters().add(Counter::icrc_errors);
        logger(Component::kDevice)
            .debug("{}: ICRC error on {} psn {:#x} to qp#{}, dropped", device_.config().alias,
                   wire::to_string(packet.desc.bth.opcode), packet.desc.bth.psn, qp);
        return;
    }
    if (!active_.load(std::memory_order_acquire)) return deliver(packet);  // nothing armed
    std::optional<PacketAction> action;
    std::shared_ptr<Packet> held;
    bool vanished = false;
    {
        std::lock_guard lock(mutex_);
        if (specs_.empty() && !held_rx_) {
        } else if (packet.fault_exempt) {
            held = std::move(held_rx_);
        } else {
            vanished = vanished_locked(packet.desc.meta.src_ip);
            if (!vanished) {
                const auto owner = device_.find_qp(qp);
                action = packet_fault_locked(Hook::kReceive, qp,
                                             owner ? owner->context : kNoContext, packet);
            }
            if (!action || action->kind != FaultKind::kPacketReorder) held = std::move(held_rx_);
            if (action && action->kind == FaultKind::kPacketReorder) {
                held_rx_ = copy_of(packet);
                held_rx_->fault_exempt = true;
            }
        }
        update_active_locked();
    }
    const uint64_t now = packet.time_ns;
    if (vanished) {
        record(FaultKind::kPeerVanish, qp, now,
               describe(packet, "lost (peer vanished)", "peer-vanish"));
        if (held) deliver(*held);
        return;
    }
    if (!action) {
        deliver(packet);
        if (held) deliver(*held);
        return;
    }
    switch (action->kind) {
        case FaultKind::kPacketDrop:
            record(action->kind, qp, now, describe(packet, "dropped", action->name));
            break;
        case FaultKind::kPacketCorrupt:
            record(action->kind, qp, now, describe(packet, "corrupted", action->name));
            device_.counters().add(Counter::icrc_errors);
            break;
        case FaultKind::kPacketDuplicate:
            record(action->kind, qp, now, describe(packet, "duplicated", action->name));
            deliver(packet);
            deliver(packet);
            break;
        case FaultKind::kPacketReorder:
            record(action->kind, qp, now,
                   describe(packet, "held behind the next packet", action->name));
            break;
        case FaultKind::kPacketDelay: {
            record(action->kind, qp, now,
                   describe(packet, fmt::format("delayed {} ns", action->delay_ns), action->name));
            auto copy = copy_of(packet);
            copy->time_ns += action->delay_ns;
            copy->fault_exempt = true;
            device_.schedule(device_.wall_deadline(now, copy->time_ns),
                             [copy, deliver] { deliver(*copy); });
            break;
        }
        default:
            deliver(packet);
            break;
    }
    if (held) deliver(*held);
}

std::optional<hw::Syndrome> FaultInjector::fail_operation(uint32_t qp, uint32_t context,
                                                          hw::FaultOperation operation,
                                                          uint64_t now_ns) {
    if (!active_.load(std::memory_order_acquire)) return std::nullopt;
    std::string name;
    hw::Syndrome syndrome{};
    {
        std::lock_guard lock(mutex_);
        if (specs_.empty()) return std::nullopt;
        bool hit = false;
        for (FaultSpec &s : specs_) {
            const auto &rq = s.request;
            if (rq.kind != static_cast<uint32_t>(FaultKind::kFailOperation)) continue;
            if (rq.qp != hw::kNoObject && rq.qp != qp) continue;
            const auto want = static_cast<hw::FaultOperation>(rq.operation);
            // "any" means any send-queue WQE; receives are named explicitly.
            if (want == hw::FaultOperation::kAny ? operation == hw::FaultOperation::kReceive
                                                 : want != operation) {
                continue;
            }
            if (!applies_locked(s, context) || !fires_locked(s)) continue;
            syndrome = static_cast<hw::Syndrome>(rq.status);
            name = s.name;
            hit = true;
            break;
        }
        if (!hit) return std::nullopt;
        retire_spent_locked();
    }
    record(FaultKind::kFailOperation, qp, now_ns,
           fmt::format("work request fails with syndrome {:#x} ({})",
                       static_cast<unsigned>(syndrome), name));
    return syndrome;
}

bool FaultInjector::rnr_storm(uint32_t qp, uint32_t context, uint64_t now_ns) {
    if (!active_.load(std::memory_order_acquire)) return false;
    std::string name;
    {
        std::lock_guard lock(mutex_);
        if (specs_.empty()) return false;
        bool hit = false;
        for (FaultSpec &s : specs_) {
            const auto &rq = s.request;
            if (rq.kind != static_cast<uint32_t>(FaultKind::kRnrStorm)) continue;
            if (rq.qp != hw::kNoObject && rq.qp != qp) continue;
            if (now_ns < rq.start_ns || now_ns - rq.start_ns >= rq.time_ns) continue;
            if (!applies_locked(s, context) || !fires_locked(s)) continue;
            name = s.name;
            hit = true;
            break;
        }
        if (!hit) return false;
        retire_spent_locked();
    }
    record(FaultKind::kRnrStorm, qp, now_ns, fmt::format("SEND answered RNR ({})", name));
    return true;
}

bool FaultInjector::token_expired(uint32_t token, uint64_t now_ns) {
    if (!active_.load(std::memory_order_acquire)) return false;
    std::string name;
    {
        std::lock_guard lock(mutex_);
        if (specs_.empty()) return false;
        auto it = std::find_if(specs_.begin(), specs_.end(), [&](const FaultSpec &s) {
            return s.request.kind == static_cast<uint32_t>(FaultKind::kExpireToken) &&
                   s.request.token == token && now_ns >= s.request.start_ns;
        });
        if (it == specs_.end()) return false;
        name = it->name;
    }
    record(FaultKind::kExpireToken, 0, now_ns,
           fmt::format("remote access with expired token {:#x} refused ({})", token, name));
    return true;
}

std::optional<int32_t> FaultInjector::fail_command(hw::CommandOpcode opcode, uint32_t context) {
    if (!active_.load(std::memory_order_acquire)) return std::nullopt;
    std::string name;
    int32_t s = 0;
    {
        std::lock_guard lock(mutex_);
        if (specs_.empty()) return std::nullopt;
        bool hit = false;
        for (FaultSpec &spec : specs_) {
            if (spec.request.kind != static_cast<uint32_t>(FaultKind::kFailCommand) ||
                spec.request.operation != static_cast<uint32_t>(opcode) ||
                !applies_locked(spec, context) || !fires_locked(spec)) {
                continue;
            }
            s = spec.request.status;
            name = spec.name;
            hit = true;
            break;
        }
        if (!hit) return std::nullopt;
        retire_spent_locked();
    }
    record(FaultKind::kFailCommand, 0, device_.clock().now(),
           fmt::format("command {:#x} fails with {:#x} ({})", static_cast<unsigned>(opcode),
                       static_cast<uint32_t>(s), name));
    return s;
}

}  // namespace softndk::emu
