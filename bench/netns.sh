#!/usr/bin/env bash
# bench/netns.sh - two SoftNDK processes in two network namespaces move data over
# RoCEv2 through a lossy, reordering veth link; every byte is checked, and so is the
# wire.
#
#   bench/netns.sh [--mib N] [--size B] [--loss P] [--reorder P] [--build DIR] [--keep]
#
#   --mib N     data each end sends (default 100): examples/pingpong, which checks
#               every byte of every message it receives
#   --size B    pingpong's message size (default 65536)
#   --loss P, --reorder P   percent of RoCEv2 packets lost (default 5) and delayed behind
#               the others (default 5; at 25 the RC transport gives up after ~10 000
#               messages with STATUS_IO_TIMEOUT, see docs/wire.md)
#   --build DIR the build tree (default build/default): pingpong, wire oracle path
#   --keep      keep the work directory (capture, logs) and print it
# SOFTNDK_TIME (default here: paced) is passed to both ends. In functional time each
# process's model clock runs on its own, and an RC ACK timeout armed in model time
# fires ~0.3 s of wall time late; 100 MiB at 5 % loss then takes hours, not a minute.
#
# Topology: namespaces sndk-a (10.77.0.1) and sndk-b (10.77.0.2), a veth pair between
# them, each end its own SOFTNDK_CONFIG adapter, SOFTNDK_FABRIC=udp. Impairment on
# both veth ends, for RoCEv2 (UDP 4791) only:
#   tc netem loss 5% delay 1ms reorder 5% 50%            when the kernel has netem;
#   otherwise (CONFIG_NET_SCH_NETEM unset, as on this project's CI VM):
#     5% loss:      nft, `numgen random mod 100 < 5 drop` on egress
#     reordering:   5% of the packets are steered (nft `meta priority`) into an HTB
#                   class limited to 200 Mbit/s, so they fall behind the others.
# The fabric's CM messages (BTH opcode 0xC0, docs/wire.md) are spared by the nft rules:
# the CM does not retransmit (emulator/cm), so one lost REQ, REP or RTU fails the
# connection with STATUS_IO_TIMEOUT. netem spares nothing.
# dumpcap captures sndk-a's veth. Afterwards:
#   - both pingpong ends exit 0 (each verified every byte it received);
#   - tshark decodes every frame as InfiniBand, none malformed
#     (--disable-heuristic rpcrdma_infiniband);
#   - the wire oracle verifies the ICRC of every frame.
# Prints one summary line per check; exit 0 if all pass, 1 if one fails, 77 if the
# machine cannot run it (not root, no `ip netns`, no tc/nft/dumpcap/tshark/python3).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mib=100 build=build/default keep=0 size=65536 loss=5 reorder=5 time_mode=${SOFTNDK_TIME:-paced}
while [ $# -gt 0 ]; do
  case $1 in
    --mib) mib=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    --reorder) reorder=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--mib N] [--size B] [--loss P] [--reorder P] [--build DIR] [--keep]" >&2; exit 2 ;;
  esac
done
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*"; failed=1; }
failed=0
[ "$(id -u)" -eq 0 ] || skip "needs root (ip netns, tc, nft)"
for tool in ip tc dumpcap tshark python3; do
  command -v $tool >/dev/null || skip "$tool not installed"
done
pingpong=$build/examples/pingpong/pingpong
oracle=$root/tests/support/wire_oracle.py
[ -x "$pingpong" ] || { echo "no $pingpong: build target pingpong first" >&2; exit 2; }
pingpong=$(realpath "$pingpong")

suffix=$$
ns_a=sndk-a-$suffix ns_b=sndk-b-$suffix
work=$(mktemp -d /tmp/softndk-netns.XXXXXX)
cleanup() {
  [ -n "${capture:-}" ] && kill "$capture" 2>/dev/null
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  if [ $keep -eq 1 ]; then echo "work directory: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
ip netns add "$ns_a" 2>/dev/null || skip "ip netns add failed (no network namespaces)"
ip netns add "$ns_b"
ip link add veth-a netns "$ns_a" type veth peer name veth-b netns "$ns_b" ||
  skip "cannot create a veth pair"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" addr add 10.77.0.1/24 dev veth-a
ip -n "$ns_b" addr add 10.77.0.2/24 dev veth-b
ip -n "$ns_a" link set veth-a up
ip -n "$ns_b" link set veth-b up

impair() {  # namespace device
  local ns=$1 dev=$2
  if ip netns exec "$ns" tc qdisc add dev "$dev" root netem loss $loss% delay 1ms reorder $reorder% 50% \
      2>/dev/null; then
    echo "netem"
    return 0
  fi
  command -v nft >/dev/null || return 1
  ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: htb default 10 || return 1
  ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:10 htb rate 10gbit || return 1
  ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:20 htb rate 200mbit ceil 200mbit ||
    return 1
  ip netns exec "$ns" nft -f - <<NFT || return 1
table inet impair {
  chain out {
    type filter hook postrouting priority 0; policy accept;
    udp dport 4791 @th,64,8 != 0xc0 numgen random mod 100 < $loss counter drop
    udp dport 4791 @th,64,8 != 0xc0 numgen random mod 100 < $reorder counter meta priority set 1:20
  }
}
NFT
  echo "nft-loss+htb-reorder"
}
method_a=$(impair "$ns_a" veth-a) || skip "neither tc netem nor nft+htb available"
method_b=$(impair "$ns_b" veth-b) || skip "neither tc netem nor nft+htb available"

for side in a b; do
  ip=10.77.0.1; [ $side = b ] && ip=10.77.0.2
  cat >"$work/$side.ini" <<INI
[adapter rnic0]
if_index = 1
ipv4 = $ip
path_mtu = 1024   ; a 1500-byte veth: 1024-byte IB payload + 58 bytes of headers fit
ack_timeout = 11  ; ~8 ms: a lost tail is retransmitted soon, a busy machine does not time out
retry_count = 7
INI
done

pcap=$work/veth-a.pcapng
ip netns exec "$ns_a" dumpcap -q -i veth-a -f "udp port 4791" -w "$pcap" >"$work/dumpcap.log" 2>&1 &
capture=$!
for _ in $(seq 50); do [ -s "$pcap" ] && break; sleep 0.1; done

iters=$(( mib * 1024 * 1024 / size ))
start=$(date +%s.%N)
ip netns exec "$ns_b" env SOFTNDK_FABRIC=udp SOFTNDK_CONFIG="$work/b.ini" SOFTNDK_TIME=$time_mode \
  "$pingpong" -s $size -n $iters >"$work/server.log" 2>&1 &
server=$!
ip netns exec "$ns_a" env SOFTNDK_FABRIC=udp SOFTNDK_CONFIG="$work/a.ini" SOFTNDK_TIME=$time_mode \
  "$pingpong" -s $size -n $iters 10.77.0.2 >"$work/client.log" 2>&1
client_status=$?
wait $server
server_status=$?
end=$(date +%s.%N)
sleep 0.5
kill -INT $capture; wait $capture 2>/dev/null; capture=

echo "impairment: $loss% loss, $reorder% reordered; a $method_a, b $method_b"
for ns in "$ns_a" "$ns_b"; do
  ip netns exec "$ns" nft list table inet impair 2>/dev/null |
    awk -v ns="$ns" '/counter packets/ { for (i = 1; i <= NF; i++) if ($i == "packets") n = $(i + 1)
                      print ns ": " n " packets " (/drop/ ? "dropped" : "delayed (reordered)") }'
done
echo "transfer: ${mib} MiB each way in $iters messages of $size bytes, $(echo "$end - $start" | bc) s," \
  "client exit $client_status, server exit $server_status"
[ $client_status -eq 0 ] || fail "client: $(tail -3 "$work/client.log")"
[ $server_status -eq 0 ] || fail "server: $(tail -3 "$work/server.log")"
tail -2 "$work/client.log"

# One tshark pass: per frame, whether it decoded as InfiniBand and whether it is malformed.
# Also counted: NAKs for a PSN sequence error (AETH syndrome 0x60), what loss and
# reordering make the responder send.
read -r frames decoded malformed naks < <(tshark -r "$pcap" --disable-heuristic rpcrdma_infiniband \
    -T fields -e frame.number -e infiniband.bth.opcode -e _ws.malformed \
    -e infiniband.aeth.syndrome 2>/dev/null |
  awk -F'\t' '{ n++; if ($2 != "") ib++; if ($3 != "") bad++; if ($4 == "96") nak++ }
               END { print n+0, ib+0, bad+0, nak+0 }')
echo "tshark: $decoded/$frames frames decoded as InfiniBand, $malformed malformed," \
  "$naks NAKs (PSN sequence error)"
[ "$frames" -gt 0 ] && [ "$decoded" -eq "$frames" ] || fail "tshark decodes $decoded of $frames frames"
[ "$malformed" -eq 0 ] || fail "$malformed malformed frames"
python3 "$oracle" --verify-icrc "$pcap" --quiet >"$work/oracle.log" 2>&1 || fail "ICRC: $(tail -3 "$work/oracle.log")"
echo "oracle: $(tail -1 "$work/oracle.log")"
[ $failed -eq 0 ] && echo "PASS" || echo "FAILED"
exit $failed
