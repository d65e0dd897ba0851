// softndk_provider_slots: prints provider/slots.hpp as the Markdown coverage table used
// in provider/README.md: every slot, whether it is built, and which test files call it.
//
//   softndk_provider_slots [TEST_DIR...]
//
// A test file "calls" a slot when it contains `->Ndk<Slot>` as a whole name (a call
// through a dispatch table, or the slot taken to be called). Slot names shared by several tables
// (NdkQueryExtension, NdkGetLocalAddress) cannot be told apart that way: their row lists the files
// that call any of them.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "slots.hpp"

namespace {

struct TestFile {
    std::string name;  // relative to its TEST_DIR's parent, e.g. provider/mr_test.cpp
    std::string text;
};

std::vector<TestFile> read_tests(int argc, char **argv) {
    namespace fs = std::filesystem;
    std::vector<TestFile> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path root(argv[i]);
        std::error_code ec;
        for (const auto &entry : fs::recursive_directory_iterator(root, ec)) {
            const auto ext = entry.path().extension();
            if (!entry.is_regular_file() ||
                (ext != ".cpp" && ext != ".c" && ext != ".hpp" && ext != ".h"))
                continue;
            std::ifstream in(entry.path());
            std::ostringstream text;
            text << in.rdbuf();
            files.push_back(
                {(root.filename() / entry.path().lexically_relative(root)).string(), text.str()});
        }
    }
    std::sort(files.begin(), files.end(),
              [](const TestFile &a, const TestFile &b) { return a.name < b.name; });
    return files;
}

// `->Name` not followed by more of an identifier: a call through a dispatch table, or
// the slot taken as a pointer to call (tests' close_fn()).
bool uses(const std::string &text, std::string_view name) {
    const std::string needle = "->" + std::string(name);
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
        const size_t end = at + needle.size();
        if (end == text.size()) return true;
        const char next = text[end];
        if (!(std::isalnum(static_cast<unsigned char>(next)) || next == '_')) return true;
    }
    return false;
}

}  // namespace

int main(int argc, char **argv) {
    using namespace softndk::provider;
    const std::vector<TestFile> tests = read_tests(argc, argv);
    size_t built = 0;
    for (const Slot &s : kSlots)
        built += s.status == SlotStatus::kBuilt ? 1 : 0;
    std::printf("| Dispatch table | Slot | Status | Tests |\n|---|---|---|---|\n");
    for (const Slot &s : kSlots) {
        std::string files;
        for (const TestFile &t : tests) {
            if (!uses(t.text, s.name)) continue;
            files += (files.empty() ? "`" : ", `") + t.name + "`";
        }
        std::printf("| `%.*s` | `%.*s` | %s | %s |\n", static_cast<int>(s.table.size()),
                    s.table.data(), static_cast<int>(s.name.size()), s.name.data(),
                    s.status == SlotStatus::kBuilt ? "built" : "not built",
                    files.empty() ? "-" : files.c_str());
    }
    std::printf("\n%zu of %zu slots built.\n", built, kSlots.size());
    return 0;
}
