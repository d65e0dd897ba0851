#!/usr/bin/env bash
# trace-off.sh HOOKS_SOFTNDK NOHOOKS_SOFTNDK [REPS]
#
# What the trace hooks cost when SOFTNDK_TRACE is unset (docs/trace.md): 8 B send
# latency, `softndk perf -t send --lat -s 8 -n 200000`, with the hooks compiled in
# (the default build) and compiled out (-DSOFTNDK_TRACE_HOOKS=OFF, same commit),
# alternating the two REPS times (default 9) so that load on the machine hits both
# alike; then once with tracing on, for scale. Prints each run's t_typical and t_avg
# and the medians.
#
#   cmake -S . -B build/nohooks -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
#     -DSOFTNDK_TRACE_HOOKS=OFF -DSOFTNDK_BUILD_TESTS=OFF -DSOFTNDK_BUILD_EXAMPLES=OFF
#   cmake --build build/nohooks --target softndk
#   bench/trace-off.sh build/default/tools/softndk/softndk build/nohooks/tools/softndk/softndk
set -eu
hooks=$1
nohooks=$2
reps=${3:-9}
unset SOFTNDK_TRACE

run() {  # prints "t_typical t_avg"
  "$@" perf -t send --lat -s 8 -n 200000 | awk '$1 == 8 { print $5, $6 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >/tmp/trace-off.$$.hooks
: >/tmp/trace-off.$$.nohooks
for i in $(seq 1 "$reps"); do
  h=$(run "$hooks")
  n=$(run "$nohooks")
  echo "run $i: hooks in, off: $h   hooks compiled out: $n"
  echo "$h" >>/tmp/trace-off.$$.hooks
  echo "$n" >>/tmp/trace-off.$$.nohooks
done
ht=$(cut -d' ' -f1 /tmp/trace-off.$$.hooks | median)
ha=$(cut -d' ' -f2 /tmp/trace-off.$$.hooks | median)
nt=$(cut -d' ' -f1 /tmp/trace-off.$$.nohooks | median)
na=$(cut -d' ' -f2 /tmp/trace-off.$$.nohooks | median)
rm -f /tmp/trace-off.$$.hooks /tmp/trace-off.$$.nohooks
echo "median t_typical: hooks in, off $ht us; compiled out $nt us"
echo "median t_avg:     hooks in, off $ha us; compiled out $na us"
trace=$(mktemp "${TMPDIR:-/tmp}/trace-on-XXXXXX")
on=$(SOFTNDK_TRACE=$trace run "$hooks")
echo "tracing on (SOFTNDK_TRACE, $(( $(stat -c %s "$trace") / 64 )) records): t_typical t_avg = $on us"
rm -f "$trace"
