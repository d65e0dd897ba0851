// softndk-selfcheck - proves at run time that the installed ndkpi.h matches
// the NDKPI reference layout, entry for entry (tests/headers/layout/
// ndkpi_layout.def). Run by scripts/bootstrap.sh and by CTest.
//
//   softndk-selfcheck            one-line summary; mismatches listed
//   softndk-selfcheck --verbose  every check, one per line
//
// Exit status: 0 all match, 1 mismatch, 2 usage error.
#include <cstdio>
#include <cstring>
#include <string>

#include "layout_checks.hpp"

namespace {

using softndk::layout::Check;
using softndk::layout::CountOf;
using softndk::layout::ExpectedCount;
using softndk::layout::Kind;
using softndk::layout::KindName;

void Usage(std::FILE *out) {
    std::fputs(
        "usage: softndk-selfcheck [--verbose]\n"
        "Checks ndkpi.h/ndkinfo.h against the NDKPI reference: dispatch tables and\n"
        "slots, struct fields, sizes, alignments, constants and NDK_FN_* typedefs.\n"
        "  -v, --verbose  list every check\n"
        "  -h, --help     show this help\n"
        "Exit status: 0 all match, 1 mismatch, 2 usage error.\n",
        out);
}

}  // namespace

int main(int argc, char **argv) {
    bool verbose = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-v") == 0 || std::strcmp(argv[i], "--verbose") == 0) {
            verbose = true;
        } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
            Usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "softndk-selfcheck: unknown argument '%s'\n", argv[i]);
            Usage(stderr);
            return 2;
        }
    }

    const auto checks = softndk::layout::RunChecks();
    std::size_t failed = 0;
    for (const Check &c : checks) {
        if (!c.ok) ++failed;
        if (verbose || !c.ok) {
            std::printf("%-8s %s: %s\n", c.ok ? "ok" : "MISMATCH", c.name.c_str(),
                        c.detail.c_str());
        }
    }

    // "10 dispatch tables, 70 slots, ..." in the order of kAllKinds.
    std::string summary;
    bool counts_ok = true;
    for (Kind kind : softndk::layout::kAllKinds) {
        const std::size_t n = CountOf(checks, kind);
        if (n != ExpectedCount(kind)) {
            counts_ok = false;
            std::printf("MISMATCH %zu %.*s checked, the reference has %zu\n", n,
                        static_cast<int>(KindName(kind).size()), KindName(kind).data(),
                        ExpectedCount(kind));
        }
        if (!summary.empty()) summary += ", ";
        summary += std::to_string(n) + " " + std::string(KindName(kind));
    }

    if (failed == 0 && counts_ok) {
        std::printf("ndkpi.h layout: %s: all match\n", summary.c_str());
        return 0;
    }
    std::printf("ndkpi.h layout: %s: %zu of %zu checks FAILED%s\n", summary.c_str(), failed,
                checks.size(), counts_ok ? "" : ", entry counts differ from the reference");
    return 1;
}
