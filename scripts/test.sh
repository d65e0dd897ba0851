#!/usr/bin/env bash
# The test suite: installs missing packages, configures, builds and runs every
# test through CTest.
#   scripts/test.sh              the default (optimised) build
#   scripts/test.sh asan-ubsan   the same tests under ASan+UBSan
#   scripts/test.sh tsan         the threaded tests under TSan
#   scripts/test.sh fuzz         the libFuzzer targets (clang), each fuzzing for 10 s
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"

if [ "$preset" = fuzz ]; then scripts/install-deps.sh fuzz; else scripts/install-deps.sh; fi
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset"
