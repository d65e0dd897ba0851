// fuzz_input.hpp - what every fuzz target in tests/fuzz shares.
//
// Each target defines libFuzzer's entry point
//     extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
// and nothing else global. Built two ways (tests/fuzz/CMakeLists.txt):
//   - SOFTNDK_FUZZ=ON (clang, -fsanitize=fuzzer,address): libFuzzer's main drives it;
//   - always (the default g++ build): replay_main.cpp runs every file of the target's
//     corpus (tests/fuzz/corpus/<target>/) through it once, so the seeds and every
//     crash reproducer added there are exercised by the ordinary test suite.
// A target returns 0 for every input. A bug is a crash, a sanitizer report, or a
// broken invariant, which a target reports with fuzz_check (abort with a message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace softndk::fuzz {

// Aborts (a finding for libFuzzer, a failure for the replay driver) if `ok` is false.
inline void fuzz_check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
        std::abort();
    }
}

// Consumes an input front to back; reads past the end yield zeros, so a target never
// needs to check sizes before it takes a field.
class InputReader {
  public:
    InputReader(const uint8_t *data, size_t size) : rest_(data, size) {}
    bool empty() const { return rest_.empty(); }
    size_t remaining() const { return rest_.size(); }
    template <class T>
    T take() {
        T value{};
        const size_t n = sizeof(T) < rest_.size() ? sizeof(T) : rest_.size();
        std::memcpy(&value, rest_.data(), n);
        rest_ = rest_.subspan(n);
        return value;
    }
    // Up to `n` bytes (fewer at the end of the input).
    std::span<const uint8_t> take_bytes(size_t n) {
        const size_t k = n < rest_.size() ? n : rest_.size();
        const auto out = rest_.first(k);
        rest_ = rest_.subspan(k);
        return out;
    }

  private:
    std::span<const uint8_t> rest_;
};

}  // namespace softndk::fuzz
