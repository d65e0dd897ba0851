#!/usr/bin/env bash
# bench/daemon_robustness.sh - issue 16's load checks against a real `softndk rnic`
# (a benchmark, not a CTest: the full counts take minutes). Each run starts its own
# daemon on a private socket, drives it with the hidden [.bench-*] cases of
# emu_daemon_tests (tests/emulator/daemon/robustness_test.cpp, raw protocol, one
# consumer), then reports the time, the daemon's RSS (now and peak), whether it is still
# alive, and how many bytes it logged.
#
#   bench/daemon_robustness.sh [BUILD_DIR]        default build/default
#   MRS=1000000 MESSAGES=1000000                    the counts (these are the defaults)
#
# Runs:
#   1. MRS registrations (alloc + register, 4 KiB each in one 64 MiB memfd) with the
#      default quota: 16,384 succeed, the rest must be refused with
#      STATUS_INSUFFICIENT_RESOURCES (0xc000009a), and the daemon must live.
#   2. the same with --quota mrs=MRS: as many as the device's MPT holds.
#   3. MESSAGES random control messages (any opcode, size, body, sometimes an fd).
# Needs the targets softndk-rnic and emu_daemon_tests. Exit status 1 if a daemon died.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
mrs=${MRS:-1000000}
messages=${MESSAGES:-1000000}
rnic=$build/emulator/daemon/softndk-rnic
tests=$build/tests/emulator/daemon/emu_daemon_tests
for f in "$rnic" "$tests"; do
  [[ -x $f ]] || { echo "missing $f: cmake --build $build --target softndk-rnic emu_daemon_tests" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/softndk-robust-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0

status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }

# run NAME CASE ENV_VAR COUNT [daemon options...]
run() {
  local name=$1 case=$2 var=$3 count=$4
  shift 4
  local socket=$work/$name.sock log=$work/$name.log pid
  pid=$("$rnic" --socket "$socket" --detach "$@" 2>"$log") || { echo "$name: daemon did not start" >&2; failed=1; return; }
  local start end
  start=$(date +%s.%N)
  env SOFTNDK_BENCH_SOCKET="$socket" "$var=$count" "$tests" "$case" 2>>"$work/$name.client" |
    grep -E '^(registrations|random)' | sed "s/^/$name: /"
  end=$(date +%s.%N)
  if kill -0 "$pid" 2>/dev/null; then
    printf '%s: wall=%.1fs daemon alive rss=%s kB peak_rss=%s kB log=%s bytes\n' "$name" \
      "$(echo "$end - $start" | bc)" "$(status_kb "$pid" VmRSS)" "$(status_kb "$pid" VmHWM)" \
      "$(stat -c %s "$log")"
    kill "$pid"
  else
    echo "$name: DAEMON DIED (log: $(tail -3 "$log"))"
    failed=1
  fi
}

run registrations-default-quota '[.bench-registrations]' SOFTNDK_BENCH_REGISTRATIONS "$mrs"
run registrations-quota-"$mrs" '[.bench-registrations]' SOFTNDK_BENCH_REGISTRATIONS "$mrs" \
  --quota mrs="$mrs"
run random-messages '[.bench-random]' SOFTNDK_BENCH_MESSAGES "$messages"
exit $failed
