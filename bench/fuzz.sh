#!/usr/bin/env bash
# bench/fuzz.sh - the long fuzz run: every libFuzzer target of tests/fuzz, 10 M inputs in
# total by default, and a count of crashes and hangs (docs/fuzzing.md has the figures).
#
#   bench/fuzz.sh [--total N] [--seconds S] [--build DIR]
#
#   --total N    inputs over all targets (default 10000000)
#   --seconds S  time for each device-level target: rings, doorbells, control_protocol
#                (default 120); each builds a device per input, so they run ~10^2-10^3
#                inputs/s; packet_parser then runs the rest of the N inputs
#   --build DIR  the fuzz build (default build/fuzz: cmake --preset fuzz, then
#                cmake --build --preset fuzz)
#
# Each target starts from the repository's corpus (tests/fuzz/corpus/<target>/) and a
# scratch copy of it under DIR/bench-corpus/<target> that grows with the run (the
# repository's corpus is never written). A crash, a leak, a sanitizer report or an
# input that runs longer than 10 s (a hang, -timeout=10) stops that target and leaves
# its reproducer in DIR/bench-artifacts/; replay it with the target's binary, or add
# it to corpus/<target>/ once fixed so that fuzz.replay.<target> keeps it fixed.
# Prints one line per target and a total; exit 1 if any target found something.
set -uo pipefail
cd "$(dirname "$0")/.."
total=10000000 seconds=120 build=build/fuzz
while [ $# -gt 0 ]; do
  case $1 in
    --total) total=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: $0 [--total N] [--seconds S] [--build DIR]" >&2; exit 2 ;;
  esac
done
bin=$build/tests/fuzz
for t in packet_parser rings doorbells control_protocol; do
  [ -x "$bin/fuzz_$t" ] || { echo "no $bin/fuzz_$t: cmake --preset fuzz && cmake --build --preset fuzz" >&2; exit 2; }
done
artifacts=$build/bench-artifacts
mkdir -p "$artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1

executed_total=0 findings=0
run() {  # target, libFuzzer budget flag
  local t=$1 budget=$2 log=$build/bench-$1.log
  mkdir -p "$build/bench-corpus/$t"
  local start=$SECONDS
  "$bin/fuzz_$t" "$budget" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-" "$build/bench-corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1
  local status=$?
  local executed
  executed=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  executed=${executed:-0}
  local cov
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  local crashes hangs
  crashes=$(ls "$artifacts" | grep -c -E "^$t-(crash|leak|oom)-" || true)
  hangs=$(ls "$artifacts" | grep -c -E "^$t-(timeout|slow-unit)-" || true)
  printf '%-17s %10s inputs  %5ss  coverage %5s  crashes %s  hangs %s  (exit %s)\n' \
    "$t" "$executed" "$((SECONDS - start))" "${cov:-?}" "$crashes" "$hangs" "$status"
  executed_total=$((executed_total + executed))
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ] || [ "$hangs" -ne 0 ]; then
    findings=$((findings + 1))
    tail -30 "$log" | sed 's/^/    /'
  fi
}
for t in rings doorbells control_protocol; do
  run $t -max_total_time=$seconds
done
rest=$((total - executed_total))
[ $rest -gt 0 ] || rest=1
run packet_parser -runs=$rest
echo "total: $executed_total inputs, $(ls "$artifacts" | grep -c -E -- '-(crash|leak|oom)-' || true) crashes," \
  "$(ls "$artifacts" | grep -c -E -- '-(timeout|slow-unit)-' || true) hangs"
[ $findings -eq 0 ]
