#!/usr/bin/env bash
# bench/sim.sh - seed sweeps in simulated time (docs/simulation.md), long form: what CI
# runs bounded (10 seeds, tests/e2e/sim_test.sh) at full size, with wall times. A
# benchmark: it prints what it found and how long it took; bench/RESULTS.md keeps the run.
#
#   bench/sim.sh                 1000 seeds each (~1-2 minutes on 2 cores)
#   SEEDS=1..200 bench/sim.sh    fewer
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/default}
SEEDS=${SEEDS:-1..1000}
softndk=$BUILD_DIR/tools/softndk/softndk
driver=$BUILD_DIR/examples/kernel-driver/kernel_driver
race=$BUILD_DIR/examples/planted-race/planted_race
for f in "$softndk" "$driver" "$race"; do
  [ -x "$f" ] || { echo "bench/sim.sh: $f not built; run scripts/bootstrap.sh first" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/softndk-sim-XXXXXX")
trap 'rm -rf "$work"' EXIT

# The fault file of issue 13's acceptance: 5 % of the packets lost, and the first QP's
# receiver without a receive for the first 2 ms of model time (an RNR storm).
cat >"$work/faults.ini" <<'INI'
[lossy]
kind = drop
probability = 5%

[busy-receiver]
kind = rnr-storm
start_ns = 0
duration_ns = 2000000
INI

echo "## Simulated time (bench/sim.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, seeds $SEEDS)"
echo
echo '```'
echo "\$ softndk sim --seeds $SEEDS -- kernel_driver"
"$softndk" sim --seeds "$SEEDS" -- "$driver" --timeout 60
echo
echo "\$ softndk sim --seeds $SEEDS --faults faults.ini -- kernel_driver   # 5 % drop + RNR storm"
"$softndk" sim --seeds "$SEEDS" --faults "$work/faults.ini" -- "$driver" --timeout 60
echo
echo "\$ softndk sim --seeds $SEEDS -- planted_race"
"$softndk" sim --seeds "$SEEDS" -- "$race"
echo '```'
