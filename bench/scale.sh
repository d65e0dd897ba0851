#!/usr/bin/env bash
# bench/scale.sh - issue 15 item 5, "scale in one device": how many QPs and MRs one virtual
# RNIC holds, how many connections per second the daemon's connection manager sets up and
# tears down, and what each QP and MR costs in memory. A benchmark (minutes, gigabytes),
# not a CTest; the limits themselves have functional tests (emu.device "10,000 QPs",
# mpt "a large table", emu.daemon "quota: the sessions of one process").
#
#   bench/scale.sh [BUILD_DIR]           default build/default
#   QPS=10000 MRS=1000000 MR_BYTES=64 CONNECTS=5000     the counts (these are the defaults)
#
# Connects are measured one at a time (the target's figure, comparable with earlier runs)
# and with 16 being set up at once, as rdma-core's cmtime does.
#
# Runs softndk-scale-bench (tools/scale_bench: the NDK API through the provider, as a
# kernel consumer would) embedded, then through a `softndk rnic` of its own on a private
# socket, started with quotas that admit the counts (the daemon's defaults are per
# consumer process: qps 1024, mrs 16384, docs/daemon.md "Quotas and limits"). Then, with
# the DEFAULT quota, the same MRS registrations: the daemon must refuse past 16,384 with
# STATUS_INSUFFICIENT_RESOURCES and live. Prints one `mode: key=value` line per figure and
# a summary table. Exit status 1 if a daemon died.
#
# Needs the targets softndk-scale-bench and softndk-rnic.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
qps=${QPS:-10000}
mrs=${MRS:-1000000}
mr_bytes=${MR_BYTES:-64}
connects=${CONNECTS:-5000}
bench=$build/tools/scale_bench/softndk-scale-bench
rnic=$build/emulator/daemon/softndk-rnic
for f in "$bench" "$rnic"; do
  [[ -x $f ]] || { echo "missing $f: cmake --build $build --target softndk-scale-bench softndk-rnic" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/softndk-scale-bench-XXXXXX")
daemon_pid=
cleanup() {
  [[ -n $daemon_pid ]] && kill "$daemon_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failed=0
declare -A figure

# measure MODE ARGS...: runs the bench program (given the daemon's pid when one runs),
# prefixes its lines, keeps its figures.
measure() {
  local mode=$1
  shift
  local out
  out=$("$bench" ${daemon_pid:+--daemon-pid "$daemon_pid"} "$@" 2>>"$work/$mode.err")
  local rc=$?
  while IFS='=' read -r key value; do
    [[ -z $key ]] && continue
    echo "$mode: $key=$value"
    figure[$mode.$key]=$value
  done <<<"$out"
  [[ $rc -ne 0 ]] && echo "$mode: (exit $rc; $(tail -1 "$work/$mode.err" 2>/dev/null))"
  return 0
}

# start_daemon NAME [options...]: a daemon on a private socket; sets daemon_pid.
start_daemon() {
  local name=$1
  shift
  export SOFTNDK_SOCKET=$work/$name.sock
  daemon_pid=$("$rnic" --socket "$SOFTNDK_SOCKET" --detach "$@" 2>"$work/$name.log") || {
    echo "$name: daemon did not start: $(tail -2 "$work/$name.log")" >&2
    failed=1
    daemon_pid=
    return 1
  }
}

stop_daemon() {
  local name=$1
  if [[ -n $daemon_pid ]] && kill -0 "$daemon_pid" 2>/dev/null; then
    echo "$name: daemon alive, rss $(awk '$1 == "VmRSS:" { print $2 }' "/proc/$daemon_pid/status") kB," \
      "peak $(awk '$1 == "VmHWM:" { print $2 }' "/proc/$daemon_pid/status") kB"
    kill "$daemon_pid"
  else
    echo "$name: DAEMON DIED ($(tail -3 "$work/$name.log" 2>/dev/null))"
    failed=1
  fi
  daemon_pid=
}

echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"

# --- embedded: the device in this process
export SOFTNDK_MODE=embedded
measure embedded qps "$qps"
measure embedded mrs "$mrs" "$mr_bytes"
measure embedded connects "$connects"
measure embedded-in-flight --in-flight 16 connects "$connects"

# --- through the daemon, quotas opened up for the counts
export SOFTNDK_MODE=daemon
start_daemon daemon --quota qps=$((2 * (qps > connects ? qps : connects) + 16)) \
  --quota cqs=1024 --quota mrs=$((mrs + 16)) && {
  measure daemon qps "$qps"
  measure daemon mrs "$mrs" "$mr_bytes"
  measure daemon connects "$connects"
  measure daemon-in-flight --in-flight 16 connects "$connects"
  stop_daemon daemon
}

# --- through the daemon with its default quota: refused cleanly past it, and alive
start_daemon daemon-default-quota && {
  measure daemon-default-quota mrs "$mrs" "$mr_bytes"
  stop_daemon daemon-default-quota
}
unset SOFTNDK_SOCKET

v() { echo "${figure[$1]:--}"; }
echo
echo "| figure | target | embedded | daemon |"
echo "|---|---:|---:|---:|"
echo "| QPs created on one device | $qps | $(v embedded.qps_created) | $(v daemon.qps_created) |"
echo "| MRs registered ($mr_bytes B each) | $mrs | $(v embedded.mrs_registered) | $(v daemon.mrs_registered) |"
echo "| MRs with the default quota: registered, refused (status) | 16,384 | - | $(v daemon-default-quota.mrs_registered), $(v daemon-default-quota.mrs_refused) ($(v daemon-default-quota.mrs_refused_with)) |"
echo "| connects/s (connect+accept+complete+disconnect, $connects, one at a time) | 10,000 | $(v embedded.connects_per_s) | $(v daemon.connects_per_s) |"
echo "| connects/s, 16 in flight (as rdma-core's cmtime) | - | $(v embedded-in-flight.connects_per_s) | $(v daemon-in-flight.connects_per_s) |"
echo "| consumer bytes per QP | - | $(v embedded.consumer_bytes_per_qp) | $(v daemon.consumer_bytes_per_qp) |"
echo "| daemon bytes per QP | - | - | $(v daemon.daemon_bytes_per_qp) |"
echo "| consumer bytes per MR | - | $(v embedded.consumer_bytes_per_mr) | $(v daemon.consumer_bytes_per_mr) |"
echo "| daemon bytes per MR | - | - | $(v daemon.daemon_bytes_per_mr) |"
echo "| QP creates/s | - | $(v embedded.qps_create_per_s) | $(v daemon.qps_create_per_s) |"
echo "| MR registrations/s | - | $(v embedded.mrs_register_per_s) | $(v daemon.mrs_register_per_s) |"
# For bench/run.sh's Targets table: target|NAME|OURS|REFERENCE|lower or higher|FACTOR|LIKE
t() { echo "target|$1|${figure[$2]:-}|$3|higher|1|$4"; }
t "QPs in one device, embedded (10,000)" embedded.qps_created "$qps" "count"
t "QPs in one device, daemon (10,000)" daemon.qps_created "$qps" "count"
t "MRs in one device, embedded (1,000,000)" embedded.mrs_registered "$mrs" "count"
t "MRs in one device, daemon (1,000,000)" daemon.mrs_registered "$mrs" "count"
t "connects/s through the daemon (10,000)" daemon.connects_per_s 10000 "rate"
exit $failed
