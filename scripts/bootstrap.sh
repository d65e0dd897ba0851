#!/usr/bin/env bash
# One command for a fresh Debian machine: install what is missing, build
# everything, and run the main job on the embedded emulator.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
# Main job: perftest's tables from the embedded virtual RNIC (no daemon):
# RDMA-write bandwidth and send latency over every size up to 8 MiB.
build/default/tools/softndk/softndk perf --test write --bw --all
build/default/tools/softndk/softndk perf --test send --lat --all
