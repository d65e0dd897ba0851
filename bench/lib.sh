# shellcheck shell=bash
# bench/lib.sh - the arithmetic of bench/run.sh: statistics over repetitions, ratios
# and target verdicts. Sourced, not run; pure functions of their arguments (no files,
# no clock), so tests/bench/bench_lib_test.sh checks them on fixed input.
#
# A figure is a string "MEDIAN (MIN-MAX)", e.g. "0.72 (0.70-0.75)", or "n/a" when no
# repetition produced a number. Every function accepts "n/a", "-" or "" wherever it
# takes a figure and then answers "-" (ratio) or "n/a" (verdict) instead of guessing.

# stat3 PREC VALUES... -> "MEDIAN (MIN-MAX)" with PREC decimals over the numeric
# VALUES (anything else, e.g. the empty output of a failed run, is skipped); the
# median of an even count is the mean of the middle two. "n/a" if none is numeric.
stat3() {
    local prec=$1
    shift
    printf '%s\n' "$@" | grep -E '^[0-9]+([.][0-9]*)?([eE][+-]?[0-9]+)?$' | sort -g |
        awk -v p="$prec" '{ a[NR] = $1 } END {
          if (NR == 0) { print "n/a"; exit }
          m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
          printf "%.*f (%.*f-%.*f)\n", p, m, p, a[1], p, a[NR] }'
}

# med FIGURE -> its median (the first word), "" for n/a.
med() {
    local m=${1%% *}
    case $m in '' | n/a | -) echo "" ;; *) echo "$m" ;; esac
}

# ratio A B -> "A/B" as "1.23x" from the medians of two figures, "-" if either is missing
# or not positive.
ratio() {
    awk -v a="$(med "$1")" -v b="$(med "$2")" \
        'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx\n", a / b; else print "-" }'
}

# verdict OURS REFERENCE lower|higher FACTOR -> MET, MISS or n/a. lower: the target is
# OURS <= FACTOR x REFERENCE (a latency); higher: OURS >= FACTOR x REFERENCE (a rate).
# Judged on the medians; the ratio is rounded to the 2 decimals ratio() prints first,
# so that a printed 2.00x against a 2.00x target reads MET.
verdict() {
    awk -v a="$(med "$1")" -v b="$(med "$2")" -v dir="$3" -v f="$4" 'BEGIN {
      if (a + 0 <= 0 || b + 0 <= 0 || f + 0 <= 0 || (dir != "lower" && dir != "higher")) {
        print "n/a"; exit }
      r = sprintf("%.2f", a / b) + 0
      ok = (dir == "lower") ? (r <= f + 0) : (r >= f + 0)
      print ok ? "MET" : "MISS" }'
}

# gbps MB_PER_S -> GB/s (1e9 B/s) from perftest's MB/sec (2^20 B/s); "" if not a number.
gbps() {
    awk -v m="$1" 'BEGIN { if (m ~ /^[0-9.]+$/) printf "%.4f\n", m * 1048576 / 1e9 }'
}

# json_field FIELD < perftest JSON -> FIELD's value in the first results row ("" if none).
json_field() {
    awk -v f="\"$1\": *[0-9.eE+-]+" 'match($0, f) {
      s = substr($0, RSTART, RLENGTH); sub(/.*: */, "", s); print s; exit }'
}

# peer_figure LOG PROVIDER TEST SIZE -> a peer's figure from bench/peers.sh's output LOG:
#   TEST pingpong:      fi_pingpong's one-way us of PROVIDER ("shm/rdm", "tcp/msg", ...)
#   TEST write_lat:     fi_rma_bench's one-way us
#   TEST *_mops:        fi_rma_bench's Mop/s of the test before _mops (write_bw_mops)
#   any other TEST:     fi_rma_bench's GB/s (write_bw, read_bw, msg_bw)
# The rows carry "MEDIAN (MIN-MAX)" already; "n/a" if the row is missing.
peer_figure() {
    local log=$1 prov=$2 test=$3 size=$4
    [ -f "$log" ] || { echo n/a; return; }
    awk -v p="$prov" -v t="$test" -v s="$size" '
      function out(i) {
        print (($(i + 1) ~ /^\(/) ? $i " " $(i + 1) : "n/a"); found = 1; exit }
      t == "pingpong" && $1 == p && $2 == s { out(4) }
      t == "write_lat" && $1 == p && $2 == t && $3 == s { out(9) }
      t ~ /_mops$/ && $1 == p && $2 == substr(t, 1, length(t) - 5) && $3 == s { out(7) }
      t != "pingpong" && t != "write_lat" && t !~ /_mops$/ && $1 == p && $2 == t && $3 == s { out(5) }
      END { if (!found) print "n/a" }' "$log"
}

# cacheline_rtt BUILD_DIR -> "MEDIAN ns (MIN-MAX)" of bench/limits/cacheline_rtt.cpp
# (built here if missing), or "n/a"
cacheline_rtt() {
  local rtt=$1/bench/softndk_cacheline_rtt
  [ -x "$rtt" ] || timeout 300 cmake --build "$1" --target softndk_cacheline_rtt >/dev/null 2>&1
  { [ -x "$rtt" ] && timeout 60 "$rtt" --runs 5; } 2>/dev/null |
    awk '$1 == "rtt_ns" { printf "%s ns (%s-%s)\n", $2, $3, $4; f = 1 } END { if (!f) print "n/a" }'
}
