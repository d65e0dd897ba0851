// wire_pcap_check - checks captures written by softndk_wire with external decoders.
//
//   wire_pcap_check oracle WORKDIR ORACLE_PY
//       python3 ORACLE_PY --verify-icrc on our captures (IPv4 and IPv6), then regenerates
//       the oracle's own rocev2_rc.pcap and requires our version of that conversation to be
//       byte-identical from the IP header on (only the fake MACs differ by design).
//   wire_pcap_check tshark WORKDIR
//       tshark decodes every frame as the intended RC opcode (number and name), PSN and
//       destination QP, with no malformed packet and no expert warning/error.
//
// Exit codes: 0 pass, 1 fail, 77 skipped (tool missing; CTest SKIP_RETURN_CODE).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "conversation.hpp"
#include "wire/frame.hpp"

namespace {

using softndk::wire::test::CapturedFrame;
constexpr int kSkip = 77;

std::string find_on_path(const std::string &name) {
    const char *path = std::getenv("PATH");
    if (path == nullptr) return {};
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) dir = ".";
        const std::string candidate = dir + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

// tshark prints numbers as decimal or 0x-hex; anything else is "no value", not an exception.
long long number(const std::string &s) {
    if (s.empty()) return -1;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
    return (end != nullptr && *end == '\0') ? static_cast<long long>(v) : -1;
}

std::string quote(const std::string &s) {
    std::string q = "'";
    for (char c : s)
        q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Runs `cmd` through the shell; stdout into `out`. Returns the exit status (-1 on failure).
int run(const std::string &cmd, std::string &out) {
    out.clear();
    FILE *p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return -1;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    const int st = ::pclose(p);
    return (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
}

std::vector<std::string> lines_of(const std::string &s) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string line;
    while (std::getline(ss, line))
        v.push_back(line);
    return v;
}

// Frames of a little-endian classic pcap (what the oracle writes).
std::vector<std::vector<std::uint8_t>> read_pcap(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    const std::vector<std::uint8_t> d{std::istreambuf_iterator<char>(f), {}};
    auto le32 = [&](std::size_t o) {
        return std::uint32_t{d[o]} | (std::uint32_t{d[o + 1]} << 8) |
               (std::uint32_t{d[o + 2]} << 16) | (std::uint32_t{d[o + 3]} << 24);
    };
    std::vector<std::vector<std::uint8_t>> frames;
    std::size_t off = 24;
    while (off + 16 <= d.size()) {
        const std::uint32_t incl = le32(off + 8);
        if (off + 16 + incl > d.size()) break;
        frames.emplace_back(d.begin() + off + 16, d.begin() + off + 16 + incl);
        off += 16 + incl;
    }
    return frames;
}

struct Capture {
    std::string path;
    std::vector<CapturedFrame> frames;
};

bool write_captures(const std::string &dir, std::vector<Capture> &caps) {
    ::mkdir(dir.c_str(), 0755);
    caps = {{dir + "/softndk_rc_v4.pcap", softndk::wire::test::oracle_rc_conversation()},
            {dir + "/softndk_all_opcodes_v6.pcap",
             softndk::wire::test::every_opcode_conversation(true)},
            {dir + "/softndk_all_opcodes_v4.pcap",
             softndk::wire::test::every_opcode_conversation(false)}};
    bool ok = true;
    for (std::size_t i = 0; i < caps.size(); ++i) {
        if (!softndk::wire::test::write_capture(caps[i].path, caps[i].frames, i != 0)) {
            std::cout << "FAIL: cannot write " << caps[i].path << "\n";
            ok = false;
        }
    }
    return ok;
}

int check_oracle(const std::string &dir, const std::string &oracle) {
    const std::string python = find_on_path("python3");
    if (python.empty()) {
        std::cout << "SKIPPED: python3 not found on PATH; the wire oracle cannot run\n";
        return kSkip;
    }
    if (::access(oracle.c_str(), R_OK) != 0) {
        // The oracle is part of the repository (tests/support): missing is a failure.
        std::cout << "FAIL: wire oracle not found at " << oracle << "\n";
        return 1;
    }
    std::vector<Capture> caps;
    if (!write_captures(dir, caps)) return 1;
    bool ok = true;
    std::string out;
    for (const Capture &c : caps) {
        const int rc =
            run(quote(python) + " " + quote(oracle) + " --verify-icrc " + quote(c.path), out);
        std::size_t good = 0, bad = 0;
        for (const std::string &l : lines_of(out)) {
            if (l.find(": ok ") != std::string::npos) ++good;
            if (l.find("BAD") != std::string::npos) ++bad;
        }
        const bool pass = rc == 0 && bad == 0 && good == c.frames.size();
        std::cout << (pass ? "ok   " : "FAIL ") << c.path << ": oracle ICRC ok for " << good << "/"
                  << c.frames.size() << " frames (exit " << rc << ")\n";
        if (!pass) std::cout << out;
        ok &= pass;
    }

    // Byte-for-byte against the oracle's own RC conversation.
    const std::string odir = dir + "/oracle";
    const int rc =
        run(quote(python) + " " + quote(oracle) + " --out " + quote(odir) + " 2>&1", out);
    if (rc != 0) {
        std::cout << "FAIL: oracle could not write its pcaps (exit " << rc << ")\n" << out;
        return 1;
    }
    const auto theirs = read_pcap(odir + "/rocev2_rc.pcap");
    const auto &ours = caps[0].frames;
    bool same = theirs.size() == ours.size();
    for (std::size_t i = 0; same && i < ours.size(); ++i) {
        const auto &a = ours[i].bytes;
        const auto &b = theirs[i];
        const std::size_t h = softndk::wire::kEthernetHeaderSize;
        if (a.size() != b.size() || !std::equal(a.begin() + h, a.end(), b.begin() + h)) {
            std::cout << "FAIL: frame " << i + 1 << " differs from the oracle's rocev2_rc.pcap\n";
            same = false;
        }
    }
    std::cout << (same ? "ok   " : "FAIL ") << "RC conversation identical to the oracle's ("
              << theirs.size() << " oracle frames, " << ours.size() << " ours) from L3 on\n";
    ok &= same;
    return ok ? 0 : 1;
}

int check_tshark(const std::string &dir) {
    const std::string tshark = find_on_path("tshark");
    if (tshark.empty()) {
        std::cout << "SKIPPED: tshark not installed (apt-get install tshark to run this check)\n";
        return kSkip;
    }
    std::vector<Capture> caps;
    if (!write_captures(dir, caps)) return 1;
    bool ok = true;
    std::string out;
    for (const Capture &c : caps) {
        // The RPC-over-RDMA heuristics call short SEND payloads malformed; not our bytes.
        const std::string cmd = quote(tshark) + " -n -r " + quote(c.path) +
                                " --disable-heuristic rpcrdma_infiniband -T fields -E separator='|'"
                                " -e infiniband.bth.opcode -e infiniband.bth.psn"
                                " -e infiniband.bth.destqp -e _ws.col.Info"
                                " -e _ws.expert.severity -e _ws.malformed 2>/dev/null";
        const int rc = run(cmd, out);
        const auto rows = lines_of(out);
        bool pass = rc == 0 && rows.size() == c.frames.size();
        if (!pass) {
            std::cout << "FAIL " << c.path << ": tshark exit " << rc << ", " << rows.size()
                      << " rows for " << c.frames.size() << " frames\n";
        }
        for (std::size_t i = 0; pass && i < rows.size(); ++i) {
            std::vector<std::string> f;
            std::stringstream ss(rows[i]);
            std::string field;
            while (std::getline(ss, field, '|'))
                f.push_back(field);
            f.resize(6);
            const CapturedFrame &want = c.frames[i];
            const std::string name = softndk::wire::test::wireshark_opcode_name(want.opcode);
            bool sev_ok = true;
            std::stringstream sevs(f[4]);
            std::string sev;
            while (std::getline(sevs, sev, ',')) {
                // expert severities: chat 0x200000, note 0x400000, warn 0x600000, error 0x800000
                if (number(sev) >= 0x600000) sev_ok = false;
            }
            const bool row_ok = number(f[0]) == static_cast<long long>(want.opcode) &&
                                number(f[1]) == want.psn && number(f[2]) == want.dest_qp &&
                                f[3].rfind("RC " + name + " QP=", 0) == 0 && sev_ok && f[5].empty();
            if (!row_ok) {
                std::cout << "FAIL " << c.path << " frame " << i + 1 << ": want \"RC " << name
                          << "\" psn " << want.psn << ", tshark: " << rows[i] << "\n";
                pass = false;
            }
        }
        std::cout << (pass ? "ok   " : "FAIL ") << c.path << ": " << rows.size()
                  << " frames decoded by tshark as intended\n";
        ok &= pass;
    }
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 3 && args[0] == "oracle") return check_oracle(args[1], args[2]);
    if (args.size() == 2 && args[0] == "tshark") return check_tshark(args[1]);
    std::cerr << "usage: wire_pcap_check oracle WORKDIR ORACLE_PY | tshark WORKDIR\n";
    return 2;
}
