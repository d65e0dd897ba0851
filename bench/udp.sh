#!/usr/bin/env bash
# RoCEv2/UDP between two embedded SoftNDK processes, next to libfabric tcp, in one run
# (issue 15 item 3; docs/wire.md, "Receiving without a thread hand-off").
#
#   bench/udp.sh                   # REPS=3, ~1-2 minutes
#   REPS=5 BUILD=build/default bench/udp.sh
#
# SoftNDK: `softndk ib_send_lat -s 8` and `softndk ib_write_bw -s 1048576 -m 4096` with
# server and client in two processes, SOFTNDK_FABRIC=udp:PORT (a free test port each run,
# so a RoCE stack or another run on 4791 is never hit). Latency is perftest's t_avg
# (mean one-way, usec), as fi_pingpong's usec/xfer is a mean; bandwidth is BW average
# (perftest's MB = MiB) in GB/s (1e9 B/s).
# Peer: libfabric tcp through bench/peers.sh with the same REPS: fi_pingpong tcp/rdm 8 B
# (one-way usec) and fi_rma_bench tcp write_bw 1 MiB (GB/s).
# Every figure is median (min-max) over REPS; the ratios compare medians. Targets:
# latency ratio <= 1.0, bandwidth ratio >= 1.0.
set -uo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
BUILD=${BUILD:-build/default}
SOFTNDK=${SOFTNDK:-$BUILD/tools/softndk/softndk}
LAT_ITERS=${LAT_ITERS:-10000}
BW_ITERS=${BW_ITERS:-1000}
[ -x "$SOFTNDK" ] || { echo "no $SOFTNDK: cmake --build $BUILD --target softndk" >&2; exit 1; }

# stat3 ("median (min-max)") is bench/run.sh's, from bench/lib.sh.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
# "v1 v2 v3" -> their median as a plain number ("nan" if none), for the ratios below
median() { echo "$*" | tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g |
  awk '{a[NR]=$1} END { if (NR == 0) { print "nan"; exit }
    print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# One two-process perftest run over UDP; prints the client's result row.
pair() {  # test args...
  local test=$1; shift
  local port=$(( 20000 + RANDOM % 20000 )) out spid
  export SOFTNDK_FABRIC=udp:$(( port + 1 ))
  timeout 120 "$SOFTNDK" "$test" -p "$port" "$@" >/dev/null 2>&1 &
  spid=$!
  sleep 0.2
  out=$(timeout 120 "$SOFTNDK" "$test" -p "$port" "$@" 127.0.0.1 2>/dev/null)
  wait "$spid" 2>/dev/null
  unset SOFTNDK_FABRIC
  echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF >= 5 {row = $0} END {print row}'
}

echo "# RoCEv2/UDP, two embedded processes, vs libfabric tcp; $(nproc) cpus;" \
  "load $(cut -d' ' -f1-3 /proc/loadavg); REPS=$REPS"
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"

lat=""; typ=""; bw=""
for r in $(seq 1 "$REPS"); do
  row=$(pair ib_send_lat -s 8 -n "$LAT_ITERS")
  # #bytes #iterations t_min t_max t_typical t_avg ...
  lat="$lat $(echo "$row" | awk '{print $6}')"; typ="$typ $(echo "$row" | awk '{print $5}')"
  row=$(pair ib_write_bw -s 1048576 -m 4096 -n "$BW_ITERS")
  # #bytes #iterations BW_peak BW_average MsgRate (MiB/s)
  bw="$bw $(echo "$row" | awk '{printf "%.4f", $4 * 1048576 / 1e9}')"
done

peers=$(REPS=$REPS SIZES="8" bench/peers.sh fi_pingpong 2>&1)
tcp_lat_line=$(echo "$peers" | awk '$1 == "tcp/rdm" && $2 == 8')
tcp_lats=$(echo "$tcp_lat_line" | awk '{print $4}')
rma=$(REPS=$REPS SIZES="1048576" bench/peers.sh fi_rma 2>&1)
tcp_bw_line=$(echo "$rma" | awk '$1 == "tcp" && $2 == "write_bw" && $3 == 1048576')
tcp_bw=$(echo "$tcp_bw_line" | awk '{print $5}')

echo
printf "%-44s %-26s %-26s %s\n" measure SoftNDK "libfabric tcp" "ratio (target)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a != "nan") printf "%.2f", a / b; else print "n/a" }'; }
printf "%-44s %-26s %-26s %s\n" "8 B send one-way, usec (t_avg; t_typical)" \
  "$(stat3 2 $lat); $(median $typ)" "$(echo "$tcp_lat_line" | awk '{print $4, $5}')" \
  "$(ratio "$(median $lat)" "$tcp_lats")x (<= 1.0)"
printf "%-44s %-26s %-26s %s\n" "1 MiB RDMA write bandwidth, GB/s" \
  "$(stat3 3 $bw)" "$(echo "$tcp_bw_line" | awk '{print $5, $6}')" \
  "$(ratio "$(median $bw)" "$tcp_bw")x (>= 1.0)"
