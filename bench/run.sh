#!/usr/bin/env bash
# bench/run.sh - SoftNDK's latency and bandwidth beside the peers', measured in
# the same run, with ratios. Benchmarks, not tests: nothing here fails on a
# number; a missed target is printed as MISS.
#
#   bench/run.sh                      everything (~5 minutes on 2 cores)
#   REPS=5 bench/run.sh               more repetitions (median of REPS)
#   PEERS=none bench/run.sh           SoftNDK only
#   PARTS=model bench/run.sh          the peers and the timing model only (bench/model.sh
#                                     and the model's figures beside the peers, ~5 minutes)
#
# Needs a default build (scripts/bootstrap.sh makes one; BUILD_DIR overrides)
# and, for the peers, the Debian packages of bench/install-deps.sh (libfabric-bin,
# libfabric-dev); without them the peer columns stay empty and say so.
#
# What is measured:
#   SoftNDK embedded  softndk perf: both ends in one process, device inline
#   SoftNDK daemon    softndk perf through a private `softndk rnic`, and
#                     pingpong with server and client in two processes
#   peers             fi_pingpong (send/recv) and fi_rma_bench (RMA, msg) from
#                     bench/peers.sh, libfabric's shm and tcp providers
# Latency is one-way (half a round trip) in microseconds, the median (perftest's
# t_typical) of each run, then the median over REPS runs; RDMA read latency is a
# whole round trip, as perftest reports it. Bandwidth is in GB/s (1e9 B/s).
set -uo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
BUILD_DIR=${BUILD_DIR:-build/default}
PEERS=${PEERS:-all}
PARTS=${PARTS:-all}
softndk=$BUILD_DIR/tools/softndk/softndk
pingpong=$BUILD_DIR/examples/pingpong/pingpong
LAT_SIZES="8 64 512 4096"
BW_SIZES="4096 65536 1048576"

if [ ! -x "$softndk" ] || [ ! -x "$pingpong" ]; then
  echo "bench/run.sh: $softndk not built; run scripts/bootstrap.sh first" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/softndk-bench-XXXXXX")
daemon_pid=""
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

median() {  # numbers... -> median, "n/a" if none
  printf '%s\n' "$@" | grep -E '^[0-9.eE+-]+$' | sort -g |
    awk '{a[NR]=$1} END { if (NR == 0) { print "n/a"; exit }
      printf "%.3f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# ours MODE VERB lat|bw SIZE -> median over REPS of t_typical (us) or BW (GB/s)
perf_once() {
  local kind=$2 verb=$3 size=$4 iters
  if [ "$kind" = lat ]; then iters=5000; else iters=$(( size >= 1048576 ? 500 : 5000 )); fi
  env $1 "$softndk" perf -t "$verb" "--$kind" -s "$size" -n "$iters" --json 2>/dev/null |
    awk -v kind="$kind" '
      kind == "lat" && match($0, /"t_typical": *[0-9.]+/) {
        s = substr($0, RSTART, RLENGTH); sub(/.*: */, "", s); print s }
      kind == "bw" && match($0, /"BW_average": *[0-9.]+/) {
        s = substr($0, RSTART, RLENGTH); sub(/.*: */, "", s); printf "%.4f\n", s * 1048576 / 1e9 }'
}
ours() {
  local env=$1 kind=$2 verb=$3 size=$4 values=() r
  for r in $(seq 1 "$REPS"); do values+=("$(perf_once "$env" "$kind" "$verb" "$size")"); done
  median "${values[@]}"
}

# Two-process pingpong through the daemon: one-way us = usec/iter / 2.
pingpong_once() {
  local size=$1 iters=$2 port=$3 out
  env $daemon_env "$pingpong" -p "$port" -s "$size" -n "$iters" >/dev/null 2>&1 &
  local server=$!
  for _ in $(seq 1 100); do
    out=$(env $daemon_env "$pingpong" 127.0.0.1 -p "$port" -s "$size" -n "$iters" 2>/dev/null) && break
    out=""
    sleep 0.02
  done
  wait "$server" 2>/dev/null
  echo "$out" | awk '/usec\/iter/ { printf "%.3f\n", $(NF-1) / 2 }'
}
pingpong_median() {
  local size=$1 values=() r port=$(( 30000 + RANDOM % 20000 ))
  for r in $(seq 1 "$REPS"); do values+=("$(pingpong_once "$size" 5000 $(( port + r )))"); done
  median "${values[@]}"
}

echo "# SoftNDK bench, $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cpus; load $(cut -d' ' -f1-3 /proc/loadavg); REPS=$REPS"
echo "# $("$softndk" --version | tr '\n' ' ')"

declare -A R  # R[mode,kind,verb,size] = figure

# ------------------------------------------------------------------ SoftNDK
if [ "$PARTS" = all ]; then
  "$softndk" rnic --socket "$work/rnic.sock" --log-level warn >"$work/daemon.out" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 1 200); do grep -q 'listening on' "$work/daemon.out" && break; sleep 0.02; done
  daemon_env="SOFTNDK_MODE=daemon SOFTNDK_SOCKET=$work/rnic.sock"

  for mode in embedded daemon; do
    if [ $mode = embedded ]; then env_mode="SOFTNDK_MODE=embedded"; else env_mode=$daemon_env; fi
    for verb in send write read; do
      for s in $LAT_SIZES; do R[$mode,lat,$verb,$s]=$(ours "$env_mode" lat $verb "$s"); done
      for s in $BW_SIZES; do R[$mode,bw,$verb,$s]=$(ours "$env_mode" bw $verb "$s"); done
    done
  done
  for s in 8 4096; do R[daemon2p,lat,send,$s]=$(pingpong_median "$s"); done
  kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null; daemon_pid=""
fi

# -------------------------------------------------------------------- peers
peer_log=$work/peers.txt
if [ "$PEERS" != none ]; then
  command -v fi_pingpong >/dev/null ||
    echo "(fi_pingpong not installed: bench/install-deps.sh; no fi_pingpong peers)" >"$peer_log"
  SIZES="$LAT_SIZES 65536 1048576" REPS=$REPS bench/peers.sh fi_pingpong >>"$peer_log" 2>&1
  SIZES="$LAT_SIZES 65536 1048576" REPS=$REPS bench/peers.sh fi_rma >>"$peer_log" 2>&1
else
  : >"$peer_log"
fi
# peer PROVIDER TEST SIZE -> the median: fi_pingpong rows are
# "shm/rdm SIZE ITERS LAT (..) MBPS (..)", fi_rma rows "shm write_bw SIZE OPS GBPS (..) ..."
peer() {
  local prov=$1 test=$2 size=$3
  case $test in
    pingpong) awk -v p="$prov/rdm" -v s="$size" '$1 == p && $2 == s { print $4; exit }' "$peer_log" ;;
    write_lat) awk -v p="$prov" -v s="$size" '$1 == p && $2 == "write_lat" && $3 == s { print $9; exit }' "$peer_log" ;;
    write_bw_mops) awk -v p="$prov" -v s="$size" '$1 == p && $2 == "write_bw" && $3 == s { print $7; exit }' "$peer_log" ;;
    *) awk -v p="$prov" -v t="$test" -v s="$size" '$1 == p && $2 == t && $3 == s { print $5; exit }' "$peer_log" ;;
  esac
}
ratio() {  # a b -> a/b
  awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'
}

# ------------------------------------------------------------------- tables
if [ "$PARTS" = all ]; then
  echo
  echo "## Latency, one-way us (read: round trip); ratio = SoftNDK / peer, lower is better"
  printf "%-6s %-7s %-10s %-10s %-10s %-10s %-10s %-12s %-12s\n" \
    test size embedded daemon daemon2p "shm" "tcp" "emb/shm" "daemon/tcp"
  for verb in send write read; do
    for s in $LAT_SIZES; do
      case $verb in
        send) shm=$(peer shm pingpong "$s"); tcp=$(peer tcp pingpong "$s") ;;
        write) shm=$(peer shm write_lat "$s"); tcp=$(peer tcp write_lat "$s") ;;
        *) shm=""; tcp="" ;;
      esac
      two=${R[daemon2p,lat,$verb,$s]:--}
      printf "%-6s %-7s %-10s %-10s %-10s %-10s %-10s %-12s %-12s\n" "$verb" "$s" \
        "${R[embedded,lat,$verb,$s]}" "${R[daemon,lat,$verb,$s]}" "$two" "${shm:--}" "${tcp:--}" \
        "$(ratio "${R[embedded,lat,$verb,$s]}" "$shm")" "$(ratio "${R[daemon,lat,$verb,$s]}" "$tcp")"
    done
  done
  echo "(daemon = both ends in one process through softndk rnic; daemon2p = pingpong, two processes;"
  echo " shm/tcp = fi_pingpong one-way for send, fi_rma_bench write_lat for write)"

  echo
  echo "## Bandwidth, GB/s; ratio = SoftNDK / peer, higher is better"
  printf "%-6s %-8s %-10s %-10s %-10s %-10s %-12s %-12s\n" test size embedded daemon shm tcp "emb/shm" "daemon/shm"
  for verb in send write read; do
    case $verb in send) t=msg_bw ;; write) t=write_bw ;; read) t=read_bw ;; esac
    for s in $BW_SIZES; do
      shm=$(peer shm $t "$s"); tcp=$(peer tcp $t "$s")
      printf "%-6s %-8s %-10s %-10s %-10s %-10s %-12s %-12s\n" "$verb" "$s" \
        "${R[embedded,bw,$verb,$s]}" "${R[daemon,bw,$verb,$s]}" "${shm:--}" "${tcp:--}" \
        "$(ratio "${R[embedded,bw,$verb,$s]}" "$shm")" "$(ratio "${R[daemon,bw,$verb,$s]}" "$shm")"
    done
  done

  echo
  echo "## Targets (issue: the data path)"
  target() {  # name ours peer lower|higher
    local verdict
    verdict=$(awk -v a="$2" -v b="$3" -v dir="$4" 'BEGIN {
      if (a + 0 <= 0 || b + 0 <= 0) { print "n/a"; exit }
      ok = (dir == "lower") ? (a <= b) : (a >= b); print ok ? "MET" : "MISS" }')
    printf "%-58s %-10s %-10s %-8s %s\n" "$1" "$2" "$3" "$(ratio "$2" "$3")" "$verdict"
  }
  printf "%-58s %-10s %-10s %-8s %s\n" target SoftNDK peer ratio verdict
  target "embedded send 8 B one-way us <= fi_pingpong shm" "${R[embedded,lat,send,8]}" "$(peer shm pingpong 8)" lower
  target "daemon send 8 B one-way us (two processes) <= fi_pingpong tcp" "${R[daemon2p,lat,send,8]}" "$(peer tcp pingpong 8)" lower
  target "daemon send 8 B one-way us (one process) <= fi_pingpong tcp" "${R[daemon,lat,send,8]}" "$(peer tcp pingpong 8)" lower
  target "embedded 1 MiB write GB/s >= fi_rma shm write_bw" "${R[embedded,bw,write,1048576]}" "$(peer shm write_bw 1048576)" higher
  target "daemon 1 MiB write GB/s >= fi_rma shm write_bw" "${R[daemon,bw,write,1048576]}" "$(peer shm write_bw 1048576)" higher
fi

# ------------------------------------------------------------- model time
REPS=$REPS BUILD_DIR=$BUILD_DIR bench/model.sh

# model.sh's workloads once more, for their figures rather than their wall time:
# functional mode with the timing model on (roce-default) and off (ideal), beside
# the peers measured above in this same run.
model_figure() {  # PROFILE FIELD ARGS... -> median over REPS of FIELD in perf --json
  local profile=$1 field=$2 values=() r
  shift 2
  for r in $(seq 1 "$REPS"); do
    values+=("$("$softndk" perf --profile "$profile" "$@" --json 2>/dev/null |
      awk -v f="\"$field\": *[0-9.]+" 'match($0, f) {
        s = substr($0, RSTART, RLENGTH); sub(/.*: */, "", s); print s }')")
  done
  median "${values[@]}"
}
gbps() { awk -v m="$1" 'BEGIN { if (m + 0 > 0) printf "%.3f", m * 1048576 / 1e9; else print "n/a" }'; }
echo
echo "## The model beside the peers (functional mode, wall clock; ratio = model on / peer)"
printf "%-40s %-10s %-10s %-10s %-10s %-10s %-10s\n" figure "model on" "model off" shm tcp "on/shm" "on/tcp"
model_row() {  # NAME ON OFF SHM TCP
  printf "%-40s %-10s %-10s %-10s %-10s %-10s %-10s\n" "$1" "$2" "$3" "${4:--}" "${5:--}" \
    "$(ratio "$2" "$4")" "$(ratio "$2" "$5")"
}
lat_w="-t write --lat -s 8 -n 20000"; lat_s="-t send --lat -s 64 -n 20000"
rate_w="-t write --bw -s 8 -n 100000"; bw_w="-t write --bw -s 65536 -n 20000"
# shellcheck disable=SC2086
model_row "write 8 B one-way us (lower is better)" "$(model_figure roce-default t_typical $lat_w)" \
  "$(model_figure ideal t_typical $lat_w)" "$(peer shm write_lat 8)" "$(peer tcp write_lat 8)"
# shellcheck disable=SC2086
model_row "send 64 B one-way us (lower is better)" "$(model_figure roce-default t_typical $lat_s)" \
  "$(model_figure ideal t_typical $lat_s)" "$(peer shm pingpong 64)" "$(peer tcp pingpong 64)"
# shellcheck disable=SC2086
model_row "write 8 B Mmsg/s, 1 QP (higher is better)" "$(model_figure roce-default MsgRate $rate_w)" \
  "$(model_figure ideal MsgRate $rate_w)" "$(peer shm write_bw_mops 8)" "$(peer tcp write_bw_mops 8)"
# shellcheck disable=SC2086
model_row "write 64 KiB GB/s (higher is better)" "$(gbps "$(model_figure roce-default BW_average $bw_w)")" \
  "$(gbps "$(model_figure ideal BW_average $bw_w)")" "$(peer shm write_bw 65536)" "$(peer tcp write_bw 65536)"
echo "(softndk perf, both ends in one process; peers: fi_rma_bench write_lat/write_bw, fi_pingpong for send)"

if [ -s "$peer_log" ]; then
  echo
  echo "## Peers, as bench/peers.sh printed them"
  cat "$peer_log"
fi
