// trace_check - checks what `softndk trace` wrote (run by run-trace-test.sh):
//
//   trace_check json FILE   Chrome trace-event rules: valid JSON; every event has
//                           ph/ts/pid/tid/name; every async b has one e with the same
//                           cat/id, not earlier; every flow s has an f with the same id,
//                           not earlier, t steps between; X/B/E timestamps non-decreasing
//                           per track and B/E balanced; at least one WQE span and flow.
//   trace_check json-device FILE   the same, but WQE spans and flows are not required (a
//                           daemon's trace: the posts are in the consumer's file)
//   trace_check text FILE   the listing shows, for at least one send WQE, its post, a
//                           packet and its CQE, in that order (same device, QP and WQE).
//   trace_check pcap FILE   pcapng blocks are well formed; every RC frame parses with a
//                           valid ICRC (wire::parse_frame) and every CM MAD's ICRC
//                           verifies; prints the counts (frames, CM, commented).
//
// Exit status 0 when every rule holds; 1 with the first violation on stderr.
#include <boost/json/src.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "wire/frame.hpp"
#include "wire/icrc.hpp"

namespace {

namespace json = boost::json;

int fail(const std::string &why) {
    std::cerr << "trace_check: " << why << "\n";
    return 1;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string id_of(const json::object &e) {
    const auto *id = e.if_contains("id");
    if (id == nullptr) return "";
    return json::serialize(*id);
}

int check_json(const std::string &path, bool with_wqes) {
    json::error_code ec;
    const json::value doc = json::parse(read_file(path), ec);
    if (ec) return fail(path + ": not JSON: " + ec.message());
    const json::array *events = nullptr;
    if (doc.is_array()) {
        events = &doc.as_array();
    } else if (doc.is_object() && doc.as_object().if_contains("traceEvents") &&
               doc.as_object().at("traceEvents").is_array()) {
        events = &doc.as_object().at("traceEvents").as_array();
    } else {
        return fail("no traceEvents array");
    }
    std::map<std::tuple<std::string, std::string>, double> open_async;  // (cat, id) -> ts
    std::map<std::string, double> flow_start, flow_last;
    std::set<std::string> flow_ended;
    std::map<std::pair<int64_t, int64_t>, double> last_ts;  // track -> last X/B/E ts
    std::map<std::pair<int64_t, int64_t>, int> depth;       // B/E nesting
    size_t spans = 0, flows = 0, counters = 0, index = 0;
    for (const auto &v : *events) {
        ++index;
        if (!v.is_object()) return fail("event " + std::to_string(index) + " is not an object");
        const auto &e = v.as_object();
        for (const char *key : {"ph", "ts", "pid", "tid", "name"}) {
            if (!e.contains(key))
                return fail("event " + std::to_string(index) + " has no \"" + key +
                            "\": " + json::serialize(e));
        }
        if (!e.at("ph").is_string() || !e.at("name").is_string() || !e.at("ts").is_number() ||
            !e.at("pid").is_int64() || !e.at("tid").is_int64())
            return fail("event " + std::to_string(index) + " has a field of the wrong type");
        const std::string ph(e.at("ph").as_string());
        const double ts = e.at("ts").to_number<double>();
        const std::pair track{e.at("pid").as_int64(), e.at("tid").as_int64()};
        if (ph == "X" || ph == "B" || ph == "E") {
            auto [it, fresh] = last_ts.try_emplace(track, ts);
            if (!fresh && ts < it->second)
                return fail("timestamps go back on track " + std::to_string(track.first) + "/" +
                            std::to_string(track.second) + " at event " + std::to_string(index));
            it->second = ts;
            if (ph == "X" && !e.contains("dur")) return fail("an X event without dur");
            if (ph == "B") ++depth[track];
            if (ph == "E" && --depth[track] < 0) return fail("an E without its B");
        } else if (ph == "b" || ph == "e") {
            if (!e.contains("cat") || !e.contains("id")) return fail("async event without cat/id");
            const std::tuple key{std::string(e.at("cat").as_string()), id_of(e)};
            if (ph == "b") {
                if (!open_async.emplace(key, ts).second)
                    return fail("async id " + id_of(e) + " begun twice");
            } else {
                auto it = open_async.find(key);
                if (it == open_async.end())
                    return fail("async e " + id_of(e) + " without a b before it");
                if (ts < it->second) return fail("async e " + id_of(e) + " before its b");
                open_async.erase(it);
                ++spans;
            }
        } else if (ph == "s" || ph == "t" || ph == "f") {
            const std::string id = id_of(e);
            if (id.empty()) return fail("flow event without id");
            if (ph == "s") {
                if (!flow_start.emplace(id, ts).second)
                    return fail("flow " + id + " started twice");
                flow_last[id] = ts;
            } else {
                auto it = flow_last.find(id);
                if (it == flow_last.end() || flow_ended.count(id))
                    return fail("flow " + ph + " " + id + " without an open s before it");
                if (ts < it->second) return fail("flow " + id + " goes back in time");
                it->second = ts;
                if (ph == "f") {
                    flow_ended.insert(id);
                    ++flows;
                }
            }
        } else if (ph == "C") {
            ++counters;
        } else if (ph != "i" && ph != "M") {
            return fail("unexpected phase " + ph);
        }
    }
    if (!open_async.empty()) return fail("an async b has no e");
    if (flow_ended.size() != flow_start.size()) return fail("a flow s has no f");
    for (const auto &[track, d] : depth) {
        if (d != 0) return fail("unbalanced B/E on a track");
    }
    if (with_wqes && (spans == 0 || flows == 0)) return fail("no WQE span or flow in the trace");
    if (counters == 0) return fail("no counter in the trace");
    std::cout << "trace_check json: " << events->size() << " events, " << spans << " WQE spans, "
              << flows << " flows, " << counters << " counter samples\n";
    return 0;
}

int check_text(const std::string &path) {
    std::ifstream in(path);
    const std::regex line_re(R"(^\s*([0-9.]+)\s+(\d+)\s+(\S+)\s+(qp \d+|-)\s+(#\d+|-)\s+(.*)$)");
    struct Progress {
        bool packet = false;
    };
    std::map<std::tuple<std::string, std::string, std::string>, Progress> posted;
    std::string line;
    size_t lines = 0, complete = 0;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        ++lines;
        std::smatch m;
        if (!std::regex_match(line, m, line_re)) return fail("unreadable line: " + line);
        const std::string event = m[3], qp = m[4], wqe = m[5], detail = m[6];
        if (qp == "-" || wqe == "-") continue;
        const std::tuple key{std::string(m[2]), qp, wqe};
        if (event == "post" && detail.rfind("RECV", 0) != 0) {
            posted[key] = Progress{};
        } else if (event == "packet_tx" && posted.count(key)) {
            posted[key].packet = true;
        } else if (event == "cqe" && posted.count(key)) {
            if (posted[key].packet) ++complete;
            posted.erase(key);
        }
    }
    if (complete == 0) return fail("no send WQE with a post, a packet and a CQE in order");
    std::cout << "trace_check text: " << lines << " lines, " << complete
              << " WQEs posted, sent and completed in order\n";
    return 0;
}

uint32_t le32(const std::string &b, size_t at) {
    return static_cast<uint32_t>(static_cast<uint8_t>(b[at])) |
           static_cast<uint32_t>(static_cast<uint8_t>(b[at + 1])) << 8 |
           static_cast<uint32_t>(static_cast<uint8_t>(b[at + 2])) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(b[at + 3])) << 24;
}

int check_pcap(const std::string &path) {
    const std::string b = read_file(path);
    size_t at = 0, frames = 0, cm = 0, commented = 0;
    bool section = false, interface = false;
    while (at < b.size()) {
        if (at + 12 > b.size()) return fail("a truncated block");
        const uint32_t type = le32(b, at), total = le32(b, at + 4);
        if (total < 12 || total % 4 != 0 || at + total > b.size() ||
            le32(b, at + total - 4) != total)
            return fail("a block with a bad length");
        if (type == 0x0A0D0D0A) {
            if (le32(b, at + 8) != 0x1A2B3C4D) return fail("bad byte-order magic");
            section = true;
        } else if (type == 1) {
            interface = true;
        } else if (type == 6) {
            if (!section || !interface) return fail("a packet before the SHB/IDB");
            const uint32_t captured = le32(b, at + 20);
            std::vector<uint8_t> frame(b.begin() + at + 28, b.begin() + at + 28 + captured);
            const size_t options = at + 28 + ((captured + 3) & ~3u);
            if (options < at + total - 4) ++commented;
            // RoCEv2 UD SEND_ONLY to QP1 is a CM MAD: verify its ICRC directly.
            const bool v4 = frame.size() > 14 && frame[12] == 0x08 && frame[13] == 0x00;
            const size_t ip_len = v4 ? 20 : 40;
            const size_t ib_at = 14 + ip_len + 8;
            if (frame.size() > ib_at && frame[ib_at] == 0x64) {
                const std::span<const uint8_t> f(frame);
                const auto icrc =
                    softndk::wire::compute_icrc(f.subspan(14, ip_len), f.subspan(14 + ip_len, 8),
                                                f.subspan(ib_at, frame.size() - ib_at - 4));
                if (!icrc || *icrc != softndk::wire::load_icrc(frame.data() + frame.size() - 4))
                    return fail("CM frame " + std::to_string(frames + 1) + ": bad ICRC");
                ++cm;
            } else {
                softndk::wire::PacketDescriptor d;
                const auto status = softndk::wire::parse_frame(frame, d);
                if (status != softndk::wire::WireStatus::kOk)
                    return fail("frame " + std::to_string(frames + 1) + ": " +
                                std::string(softndk::wire::to_string(status)));
            }
            ++frames;
        } else {
            return fail("unexpected block type " + std::to_string(type));
        }
        at += total;
    }
    if (frames == 0) return fail("no frames");
    std::cout << "trace_check pcap: " << frames << " frames (" << cm << " CM), ICRC valid, "
              << commented << " with comments\n";
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        std::cerr << "usage: trace_check json|text|pcap FILE\n";
        return 2;
    }
    const std::string mode = argv[1];
    if (mode == "json") return check_json(argv[2], true);
    if (mode == "json-device") return check_json(argv[2], false);
    if (mode == "text") return check_text(argv[2]);
    if (mode == "pcap") return check_pcap(argv[2]);
    std::cerr << "usage: trace_check json|text|pcap FILE\n";
    return 2;
}
