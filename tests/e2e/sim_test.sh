#!/bin/sh
# sim_test.sh - end-to-end checks of simulated time (docs/simulation.md), run by CTest.
#
#   sim_test.sh replay-identical SOFTNDK PROGRAM ARGS...
#       the same seed, twice: byte-identical scheduler trace, pcap and output; a
#       different seed gives a different trace
#   sim_test.sh finds-bug SOFTNDK BUGGY FIXED
#       a sweep of at most 1000 seeds finds BUGGY's failure; the first failing seed
#       replays to the same failure (status and trace) three times; FIXED passes them all
#   sim_test.sh deadlock SOFTNDK PROGRAM
#       a sweep finds a deadlocked seed, and its replay prints every thread's wait
#   sim_test.sh sweep SOFTNDK SEEDS PROGRAM ARGS...
#       every seed in SEEDS passes
#   sim_test.sh faults-sweep SOFTNDK SEEDS PROGRAM ARGS...
#       every seed passes with 5 % of the packets dropped and an RNR storm, and a replay's
#       trace shows the faults it injected
set -u
mode=$1 softndk=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "sim_test: $*" >&2; exit 1; }

run_seed() {  # SEED TAG PROGRAM ARGS... -> $work/TAG.{trace,pcap,out}; status in $work/TAG.rc
  seed=$1 tag=$2
  shift 2
  SOFTNDK_TIME=simulated SOFTNDK_SEED=$seed SOFTNDK_SIM_TRACE=$work/$tag.trace \
    SOFTNDK_PCAP=$work/$tag.pcap SOFTNDK_LOG_LEVEL=info "$@" >"$work/$tag.out" 2>&1
  echo $? >"$work/$tag.rc"
}

case $mode in
  replay-identical)
    run_seed 7 a "$@"
    run_seed 7 b "$@"
    run_seed 8 c "$@"
    [ "$(cat "$work/a.rc")" = 0 ] || { cat "$work/a.out"; fail "seed 7 exited $(cat "$work/a.rc")"; }
    [ -s "$work/a.trace" ] || fail "no scheduler trace written"
    [ -s "$work/a.pcap" ] || fail "no pcap written"
    for f in trace pcap out; do
      cmp "$work/a.$f" "$work/b.$f" || fail "seed 7 twice: the $f files differ"
    done
    cmp -s "$work/a.trace" "$work/c.trace" && fail "seeds 7 and 8 gave the same trace"
    echo "seed 7 twice: identical trace ($(wc -l <"$work/a.trace") lines), pcap ($(wc -c <"$work/a.pcap") bytes) and output"
    ;;
  finds-bug)
    buggy=$1 fixed=$2
    "$softndk" sim --seeds 1..1000 --json -- "$buggy" >"$work/sweep.json"
    seed=$(sed -n 's/.*"first_failure": {"seed": \([0-9]*\).*/\1/p' "$work/sweep.json")
    [ -n "$seed" ] || { cat "$work/sweep.json"; fail "1000 seeds did not find the planted bug"; }
    echo "the sweep found the bug; first failing seed $seed"
    for i in 1 2 3; do
      "$softndk" sim --replay "$seed" --trace "$work/replay$i.trace" -- "$buggy" \
        >"$work/replay$i.out" 2>&1 && fail "replay $i of seed $seed passed"
      grep -q "an update of the count was lost" "$work/replay$i.out" ||
        { cat "$work/replay$i.out"; fail "replay $i: not the planted failure"; }
      cmp "$work/replay1.trace" "$work/replay$i.trace" || fail "replay $i: a different trace"
    done
    echo "seed $seed replayed to the same failure 3 times"
    "$softndk" sim --seeds 1..1000 -- "$fixed" || fail "the fixed program failed a seed"
    ;;
  deadlock)
    program=$1
    "$softndk" sim --seeds 1..200 --json -- "$program" >"$work/sweep.json"
    grep -q '"deadlocked": [1-9]' "$work/sweep.json" || { cat "$work/sweep.json"; fail "no deadlock found"; }
    seed=$(sed -n 's/.*"first_failure": {"seed": \([0-9]*\).*/\1/p' "$work/sweep.json")
    "$softndk" sim --replay "$seed" --trace "$work/dl.trace" -- "$program" >"$work/dl.out" 2>&1
    grep -q "deadlock" "$work/dl.out" || { cat "$work/dl.out"; fail "replay of seed $seed: no deadlock report"; }
    [ "$(grep -c 'blocked in KeWaitForSingleObject(KMUTEX' "$work/dl.out")" = 2 ] ||
      { cat "$work/dl.out"; fail "the report does not show both threads' waits"; }
    cat "$work/dl.out"
    ;;
  sweep)
    seeds=$1
    shift
    "$softndk" sim --seeds "$seeds" -- "$@" || fail "a seed failed"
    ;;
  faults-sweep)
    seeds=$1
    shift
    printf '[lossy]\nkind = drop\nprobability = 5%%\n\n[busy-receiver]\nkind = rnr-storm\nstart_ns = 0\nduration_ns = 2000000\n' \
      >"$work/faults.ini"
    "$softndk" sim --seeds "$seeds" --faults "$work/faults.ini" -- "$@" || fail "a seed failed with faults"
    "$softndk" sim --replay 1 --faults "$work/faults.ini" --trace "$work/f.trace" -- "$@" \
      >"$work/f.out" 2>&1 || { cat "$work/f.out"; fail "seed 1 with faults failed on replay"; }
    grep -q " fault .*drop" "$work/f.trace" || fail "the trace shows no dropped packet"
    grep -q " fault .*rnr-storm" "$work/f.trace" || fail "the trace shows no RNR storm"
    echo "faults in seed 1's trace: $(grep -c ' fault ' "$work/f.trace")"
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
