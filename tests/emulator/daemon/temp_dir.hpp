// temp_dir.hpp - a private scratch directory for one test case, removed with everything
// in it when the case ends (the daemon tests put sockets and socket directories there).
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <system_error>

namespace softndk::emu::daemon::test {

struct TempDir {
    std::string path;
    explicit TempDir(const char *prefix = "softndk-daemon") {
        std::string pattern =
            std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX");
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
};

}  // namespace softndk::emu::daemon::test
