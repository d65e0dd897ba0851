// replay_main.cpp - runs fuzz inputs through a target without libFuzzer (g++ build).
//
//   fuzz_replay_<target> PATH...
// Each PATH is a file (one input) or a directory (every regular file in it, sorted by
// name, so runs are reproducible). The empty input runs first. Exit 0 when every input
// returned; a target that finds a bug aborts, which fails the test. A PATH that does
// not exist, or a directory without inputs, is an error (exit 2): a corpus that
// silently went missing must not pass.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "fuzz_input.hpp"

namespace {

int run_file(const std::filesystem::path &file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::cerr << "cannot read " << file << "\n";
        return 2;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::cerr << "usage: " << argv[0] << " FILE-or-DIRECTORY...\n";
        return 2;
    }
    LLVMFuzzerTestOneInput(nullptr, 0);
    size_t inputs = 0;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path path = argv[i];
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) {
            std::vector<std::filesystem::path> files;
            for (const auto &entry : std::filesystem::directory_iterator(path)) {
                if (entry.is_regular_file()) files.push_back(entry.path());
            }
            std::sort(files.begin(), files.end());
            if (files.empty()) {
                std::cerr << "no inputs in " << path << "\n";
                return 2;
            }
            for (const auto &f : files) {
                if (run_file(f) != 0) return 2;
                ++inputs;
            }
        } else if (std::filesystem::is_regular_file(path, ec)) {
            if (run_file(path) != 0) return 2;
            ++inputs;
        } else {
            std::cerr << "no such input: " << path << "\n";
            return 2;
        }
    }
    std::cout << "replayed " << inputs << " inputs (and the empty one): no crash\n";
    return 0;
}
