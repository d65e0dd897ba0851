#!/usr/bin/env bash
# One command for a fresh Debian machine: install what is missing, build
# everything, and run the main job on the embedded emulator.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
# Main job. Until the emulator lands this is the header self-check: it proves
# ndkpi.h matches the reference layout, slot for slot.
build/default/tests/headers/layout/softndk-selfcheck
