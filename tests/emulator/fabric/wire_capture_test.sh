#!/usr/bin/env bash
# wire_capture_test.sh SOFTNDK ORACLE WORKDIR - what SOFTNDK_FABRIC=udp really sends.
#
# Two processes (`softndk ib_write_bw` server and client, 127.0.0.1 and 127.0.0.2) move
# data over RoCEv2 on UDP 4791 while dumpcap captures `lo`. Passes when both ends
# succeed, the wire oracle (tests/support/wire_oracle.py) verifies the ICRC of every
# captured frame, and tshark decodes every frame as InfiniBand with none malformed
# (--disable-heuristic rpcrdma_infiniband: Wireshark's RPC-over-RDMA heuristic
# otherwise claims short SEND payloads and calls them malformed).
# Twice: through the raw socket (the default as root) and through the UDP sockets
# (SOFTNDK_FABRIC_RAW=off, as without CAP_NET_RAW). Before the link sent IPv4 frames
# through a raw socket, this failed: 0 of 17 frames verified (the kernel's IP
# identification is covered by the ICRC; udp_link.hpp); before its UDP sockets were set
# to IP_PMTUDISC_DO, the second pass failed: 0 of 67.
# Both with SOFTNDK_FABRIC_GSO=off, so that each datagram is its own frame in the capture
# (a UDP GSO batch on `lo` is captured whole, as one datagram).
# A third pass checks the GSO batches themselves (udp_link.hpp, "Runs leave in GSO
# batches"), in a private network namespace whose `lo` has tx-udp-segmentation off: the
# kernel cuts each batch into its datagrams before the capture sees them, numbering their
# IPv4 identification 0, 1, 2, ..., so the oracle checks every ICRC against the header
# the kernel really wrote, and the receiver, which gets the datagrams one by one, still
# verifies them. Frames with a non-zero identification must be there (batches were sent).
# Exit 77 (skipped, with the reason) without root, dumpcap/tshark or python3.
set -uo pipefail
softndk=$1 oracle=$2 work=$3
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "capturing lo needs root"
for tool in dumpcap tshark python3; do
  command -v $tool >/dev/null || skip "$tool not installed (scripts/install-deps.sh)"
done
mkdir -p "$work"
# capture_and_check RAW GSO: one capture with SOFTNDK_FABRIC_RAW=RAW and
# SOFTNDK_FABRIC_GSO=GSO, checked.
capture_and_check() {
  export SOFTNDK_FABRIC_RAW=$1 SOFTNDK_FABRIC_GSO=$2
  echo "== SOFTNDK_FABRIC_RAW=$1 SOFTNDK_FABRIC_GSO=$2"
  pcap=$work/lo-raw-$1-gso-$2.pcapng
  rm -f "$pcap"

  dumpcap -q -i lo -f "udp port 4791" -w "$pcap" >"$work/dumpcap.log" 2>&1 &
  capture=$!
  trap 'kill $capture 2>/dev/null' EXIT
  for _ in $(seq 50); do [ -s "$pcap" ] && break; sleep 0.1; done
  [ -s "$pcap" ] || fail "dumpcap did not start: $(cat "$work/dumpcap.log")"

  export SOFTNDK_FABRIC=udp
  unset SOFTNDK_CONFIG SOFTNDK_MODE
  "$softndk" ib_write_bw -s 8192 -n 20 -p 19471 >"$work/server.log" 2>&1 &
  server=$!
  "$softndk" ib_write_bw -s 8192 -n 20 -p 19471 127.0.0.1 >"$work/client.log" 2>&1
  client_status=$?
  wait $server
  server_status=$?
  sleep 0.5
  kill -INT $capture; wait $capture 2>/dev/null
  trap - EXIT
  [ $client_status -eq 0 ] || fail "client exit $client_status: $(tail -5 "$work/client.log")"
  [ $server_status -eq 0 ] || fail "server exit $server_status: $(tail -5 "$work/server.log")"

  python3 "$oracle" --verify-icrc "$pcap" --quiet >"$work/oracle.log" 2>&1
  oracle_status=$?
  cat "$work/oracle.log"
  [ $oracle_status -eq 0 ] || fail "the wire oracle rejects ICRCs (exit $oracle_status)"

  # One tshark pass: per frame, whether it decoded as InfiniBand and whether it is malformed.
  read -r frames decoded malformed < <(tshark -r "$pcap" --disable-heuristic rpcrdma_infiniband \
      -T fields -e frame.number -e infiniband.bth.opcode -e _ws.malformed 2>/dev/null |
    awk -F'\t' '{ n++; if ($2 != "") ib++; if ($3 != "") bad++ } END { print n+0, ib+0, bad+0 }')
  echo "tshark: $decoded/$frames frames decoded as InfiniBand, $malformed malformed"
  [ "$frames" -gt 0 ] && [ "$decoded" -eq "$frames" ] || fail "tshark decodes $decoded of $frames frames"
  [ "$malformed" -eq 0 ] || fail "tshark finds $malformed malformed frames"
}

if [ "${4:-}" = --segmenting-lo ]; then  # inside the namespace (below)
  ip link set lo up || fail "cannot bring up lo in a new network namespace"
  ethtool -K lo tx-udp-segmentation off || fail "ethtool cannot turn off tx-udp-segmentation"
  capture_and_check on on
  numbered=$(tshark -r "$pcap" -T fields -e ip.id 2>/dev/null | grep -vc '^0x0*$')
  echo "frames with a non-zero IPv4 identification (segments 1.. of GSO batches): $numbered"
  [ "$numbered" -gt 0 ] || fail "no GSO batch was sent"
  exit 0
fi

capture_and_check on off
capture_and_check off off
if command -v ethtool >/dev/null && unshare -n true 2>/dev/null; then
  unshare -n "$0" "$softndk" "$oracle" "$work" --segmenting-lo || exit 1
else
  echo "(GSO pass skipped: needs ethtool and unshare -n)"
fi
echo "PASS"
