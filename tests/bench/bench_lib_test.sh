#!/usr/bin/env bash
# bench_lib_test.sh - bench/lib.sh's arithmetic on fixed input, and bench/run.sh's syntax,
# run by CTest. The benchmarks themselves are not tests; what they compute from their
# numbers is: a wrong median, ratio or verdict would print a false MET.
#
#   bench_lib_test.sh SOURCE_DIR
set -u
source_dir=$1
. "$source_dir/bench/lib.sh"
failures=0
expect() {  # WHAT EXPECTED ACTUAL
    if [ "$2" != "$3" ]; then
        echo "FAIL: $1: expected '$2', got '$3'" >&2
        failures=$((failures + 1))
    fi
}

bash -n "$source_dir/bench/run.sh" || { echo "FAIL: bench/run.sh does not parse" >&2; exit 1; }

# stat3: median of odd and even counts, min-max, non-numbers skipped, none at all
expect "odd count" "2.00 (1.00-3.00)" "$(stat3 2 3 1 2)"
expect "even count: mean of the middle two" "2.50 (1.00-9.00)" "$(stat3 2 9 1 2 3)"
expect "one value" "0.72 (0.72-0.72)" "$(stat3 2 0.72)"
expect "failed runs skipped" "5.0 (4.0-6.0)" "$(stat3 1 "" 6 n/a 4 "")"
expect "sorted as numbers, not text" "10.000 (9.000-100.000)" "$(stat3 3 100 9 10)"
expect "nothing numeric" "n/a" "$(stat3 2 "" n/a)"

# med
expect "med of a figure" "0.72" "$(med "0.72 (0.70-0.75)")"
expect "med of n/a" "" "$(med n/a)"

# ratio: from the medians; missing or zero -> "-"
expect "ratio" "2.00x" "$(ratio "1.00 (0.50-9.00)" "0.50 (0.10-0.90)")"
expect "ratio, missing" "-" "$(ratio "" "0.50 (0.1-0.9)")"
expect "ratio, n/a" "-" "$(ratio "1.0 (1.0-1.0)" n/a)"
expect "ratio, zero" "-" "$(ratio "1.0 (1.0-1.0)" "0.000 (0.000-0.000)")"

# verdict: lower and higher, at the edge, past it, missing figures, bad direction
expect "lower, met" "MET" "$(verdict "1.00 (1-1)" "0.60 (0-1)" lower 2)"
expect "lower, exactly 2.00x" "MET" "$(verdict "1.20 (1-1)" "0.60 (0-1)" lower 2)"
expect "lower, 2.01x" "MISS" "$(verdict "1.21 (1-1)" "0.60 (0-1)" lower 2)"
expect "lower, rounded to the printed 2.00x" "MET" "$(verdict "1.2002 (1-1)" "0.60 (0-1)" lower 2)"
expect "higher, met" "MET" "$(verdict "16.0 (1-20)" "13.0 (1-20)" higher 1.2)"
expect "higher, miss" "MISS" "$(verdict "15.0 (1-20)" "13.0 (1-20)" higher 1.2)"
expect "higher, min-max ignored" "MISS" "$(verdict "0.5 (0.1-99)" "1.0 (0.1-99)" higher 1)"
expect "missing ours" "n/a" "$(verdict "" "1.0 (1-1)" higher 1)"
expect "missing reference" "n/a" "$(verdict "1.0 (1-1)" n/a lower 1)"
expect "unknown direction" "n/a" "$(verdict "1.0 (1-1)" "1.0 (1-1)" sideways 1)"

# gbps: perftest MB/sec (2^20) -> GB/s (1e9)
expect "gbps" "1.0486" "$(gbps 1000)"
expect "gbps, empty" "" "$(gbps "")"

# json_field: the first results row of perftest JSON
json='{ "test": "x", "mtu": 4096,
  "results": [
    {"MsgSize": 8, "t_typical": 0.72, "t_avg": 0.80},
    {"MsgSize": 64, "t_typical": 9.99}
  ] }'
expect "json_field" "0.72" "$(echo "$json" | json_field t_typical)"
expect "json_field, absent" "" "$(echo "$json" | json_field BW_average)"

# peer_figure on rows as bench/peers.sh prints them
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cat >"$log" <<'ROWS'
provider     size     iters   one-way_us                 pingpong_MB/s
shm/rdm      8        20000   0.77 (0.27-0.86)           10.4 (9.4-29.9)
tcp/rdm      8        5000    n/a                        n/a
tcp/msg      8        5000    5.32 (5.27-5.91)           1.5 (1.4-1.5)
provider     test       size     ops      GB/s                     Mop/s                    us/op
shm          write_lat  8        20000    0.012 (0.012-0.013)      1.560 (1.492-1.579)      0.32 (0.32-0.34)
shm          write_bw   8        200000   0.005 (0.004-0.005)      0.576 (0.538-0.585)      1.74 (1.71-1.86)
shm          write_bw   1048576  128      13.192 (13.131-13.347)   0.013 (0.013-0.013)      79.49 (78.56-79.86)
tcp          write_bw   1048576  128      6.098 (5.215-6.922)      0.006 (0.005-0.007)      171.96 (151.48-201.08)
ROWS
expect "pingpong" "0.77 (0.27-0.86)" "$(peer_figure "$log" shm/rdm pingpong 8)"
expect "pingpong, tcp/msg" "5.32 (5.27-5.91)" "$(peer_figure "$log" tcp/msg pingpong 8)"
expect "pingpong, no figure" "n/a" "$(peer_figure "$log" tcp/rdm pingpong 8)"
expect "pingpong, no row" "n/a" "$(peer_figure "$log" shm/rdm pingpong 64)"
expect "write_lat us" "0.32 (0.32-0.34)" "$(peer_figure "$log" shm write_lat 8)"
expect "write_bw GB/s" "13.192 (13.131-13.347)" "$(peer_figure "$log" shm write_bw 1048576)"
expect "write_bw Mop/s" "0.576 (0.538-0.585)" "$(peer_figure "$log" shm write_bw_mops 8)"
expect "provider kept apart" "6.098 (5.215-6.922)" "$(peer_figure "$log" tcp write_bw 1048576)"
expect "no log" "n/a" "$(peer_figure /nonexistent shm write_bw 8)"

if [ "$failures" -ne 0 ]; then
    echo "bench_lib_test: $failures failed" >&2
    exit 1
fi
echo "bench_lib_test: all passed"
