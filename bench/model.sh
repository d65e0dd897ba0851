#!/usr/bin/env bash
# bench/model.sh - what the timing model costs and how paced mode tracks it
# (docs/timing.md). bench/run.sh runs it too. A benchmark: a missed target is
# printed as MISS, nothing fails.
#
#   bench/model.sh            (~1 minute on 2 cores; REPS=5 for more repetitions)
set -uo pipefail
cd "$(dirname "$0")/.."
# cacheline_rtt, json_field (this file defines its own median and ratio after it)
. bench/lib.sh
REPS=${REPS:-3}
BUILD_DIR=${BUILD_DIR:-build/default}
softndk=$BUILD_DIR/tools/softndk/softndk
if [ ! -x "$softndk" ]; then
  echo "bench/model.sh: $softndk not built; run scripts/bootstrap.sh first" >&2
  exit 2
fi
median() {  # numbers... -> median, "n/a" if none
  printf '%s\n' "$@" | grep -E '^[0-9.eE+-]+$' | sort -g |
    awk '{a[NR]=$1} END { if (NR == 0) { print "n/a"; exit }
      printf "%.3f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() {  # a b -> a/b
  awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'
}

# docs/timing.md. The model's cost: the same functional-mode runs with the timing
# model on (roce-default) and off (ideal: every cost 0), wall clock. Paced mode: the
# wall-clock latency a perftest-style loop sees against the modeled figure.
wall_seconds() {  # ARGS... -> wall seconds of one softndk perf run, or n/a
  local t0 t1
  t0=$(date +%s.%N)
  "$softndk" perf "$@" >/dev/null 2>&1 || { echo n/a; return; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }'
}
# wall_pair ARGS... -> "ON OFF": the median wall seconds over REPS runs with the model on
# (roce-default) and off (ideal). The runs alternate, on then off, so that a spell in
# which the VM's host runs this one slower (minutes long, docs/timing.md §8) slows both
# sides of the ratio instead of one.
wall_pair() {
  local on=() off=() r
  for r in $(seq 1 "$REPS"); do
    on+=("$(wall_seconds --profile roce-default "$@")")
    off+=("$(wall_seconds --profile ideal "$@")")
  done
  echo "$(median "${on[@]}") $(median "${off[@]}")"
}
typical() {  # ARGS... -> t_typical (us) of one softndk perf --json run, median over REPS
  local values=() r
  for r in $(seq 1 "$REPS"); do
    values+=("$("$softndk" perf "$@" --json 2>/dev/null | json_field t_typical)")
  done
  median "${values[@]}"
}
# paced_runs ARGS... -> "T LATE": T is the median t_typical (us) of REPS paced softndk perf
# --json runs; LATE is the share of those runs' placements the host reached only after
# their model time and by how much on average ("94%, 135"), from the same runs (perf's
# paced_placements, paced_late and paced_late_avg_ns), or n/a
paced_runs() {
  local values=() r json placed=0 late=0 late_ns=0 p l a
  for r in $(seq 1 "$REPS"); do
    json=$("$softndk" perf "$@" --json 2>/dev/null)
    values+=("$(json_field t_typical <<<"$json")")
    p=$(json_field paced_placements <<<"$json")
    l=$(json_field paced_late <<<"$json")
    a=$(json_field paced_late_avg_ns <<<"$json")
    [ -n "$p" ] && [ -n "$l" ] && [ -n "$a" ] || continue
    placed=$((placed + p)); late=$((late + l)); late_ns=$((late_ns + l * a))
  done
  printf '%s ' "$(median "${values[@]}")"
  if [ "$placed" -gt 0 ]; then
    awk -v p="$placed" -v l="$late" -v n="$late_ns" \
      'BEGIN { printf "%.0f%%, %d\n", 100 * l / p, (l > 0 ? n / l : 0) }'
  else
    echo "n/a"
  fi
}
echo
echo "## Model time (docs/timing.md)"
printf "%-52s %-12s %-12s %-8s %s\n" workload "model on" "model off" ratio "target <= 1.30x"
for w in "-t write --lat -s 8 -n 200000" "-t send --lat -s 64 -n 200000" \
         "-t write --bw -s 8 -n 100000" "-t write --bw -s 65536 -n 20000" \
         "-t write --bw -s 8 -q 16 -l 16 -I 8 --cq-mod 64 -n 400000"; do
  # shellcheck disable=SC2086
  read -r on off < <(wall_pair $w)
  verdict=$(awk -v a="$on" -v b="$off" 'BEGIN { if (a + 0 <= 0 || b + 0 <= 0) print "n/a";
    else print (a / b <= 1.30) ? "MET" : "MISS" }')
  printf "%-52s %-12s %-12s %-8s %s\n" "$w" "${on}s" "${off}s" "$(ratio "$on" "$off")" "$verdict"
done
echo "(wall seconds of the whole run, functional mode, both ends in one process)"
echo
printf "%-52s %-12s %-12s %-8s %-18s %s\n" "paced mode, cx5-100g" "wall us" "model us" ratio \
  "late, avg ns" "target 0.85-1.15x"
# The last row adds a 200 ns switch hop each way: a modeled exchange slower than this
# host's own, which paced mode should then track (docs/timing.md §2).
for w in "-t write --lat -s 8 -n 20000" "-t send --lat -s 8 -n 20000" "-t read --lat -s 8 -n 20000" \
         "-t write --lat -s 8 -n 20000 --set switch_ns=200"; do
  # shellcheck disable=SC2086
  read -r paced late < <(paced_runs --profile cx5-100g --time paced --clock wall $w)
  # shellcheck disable=SC2086
  model=$(typical --profile cx5-100g --clock model $w)
  verdict=$(awk -v a="$paced" -v b="$model" 'BEGIN { if (a + 0 <= 0 || b + 0 <= 0) print "n/a";
    else { r = a / b; print (r >= 0.85 && r <= 1.15) ? "MET" : "MISS" } }')
  printf "%-52s %-12s %-12s %-8s %-18s %s\n" "$w" "$paced" "$model" "$(ratio "$paced" "$model")" \
    "${late:-n/a}" "$verdict"
done
# The floor paced mode cannot beat: the same exchange on this host with the model off.
read -r host_floor _ < <(paced_runs --profile ideal --time paced --clock wall -t write --lat -s 8 -n 20000)
echo "(this host's own exchange, model off (ideal, paced, 8 B write): ${host_floor} us; paced mode"
echo " cannot be quicker than it, nor than the host's exchange with the model's work in it)"
echo "(t_typical; wall = SOFTNDK_TIME=paced measured with the wall clock, model = --clock model;"
echo " late = the share of payloads the host placed only after their model time, and by how"
echo " much on average: perf's paced_late and paced_late_avg_ns, over the same paced runs)"
# The ends of a paced ping-pong run on two threads, and the device state both ends'
# engines share crosses between their cores on every message: the paced figures follow
# this machine's cache-line round trip, which on a VM moves with the vCPUs' placement.
echo "(cache-line round trip between two cores, just after: $(cacheline_rtt "$BUILD_DIR");" \
  "bench/limits/cacheline_rtt.cpp)"

