#!/usr/bin/env bash
# run-trace-test.sh SOFTNDK TRACE_CHECK CHECK PROGRAM [ARGS...]
#
# Runs PROGRAM with SOFTNDK_TRACE set (it must exit 0), converts the trace with
# `SOFTNDK trace` and checks the result with TRACE_CHECK (trace_check.cpp):
#   json     --format chrome, then the trace-event rules
#   text     --format text, then post -> packet -> CQE of one WQE, in order
#   pcap     --format pcap, then the pcapng blocks and every frame's ICRC
#   tshark   --format pcap, then tshark decodes every frame, none malformed (exit 77,
#            skipped, when tshark is missing)
#   replay   PROGRAM runs twice under `SOFTNDK sim --replay 7`: the two traces must be
#            identical byte for byte (simulated time writes no wall times)
#   rnic     a private `SOFTNDK rnic --trace FILE` (no SOFTNDK_TRACE in its environment)
#            serves PROGRAM in daemon mode; once the daemon stopped, FILE converts to
#            valid JSON (trace_check json-device)
#   faults   PROGRAM runs under `SOFTNDK sim --replay 1` with 5 % packet loss and an RNR
#            storm (the fault file of tests/e2e/sim_test.sh): the listing has fault
#            records of both kinds and RNR retries, the JSON is valid, the pcapng's ICRCs
#            verify and some frames carry a comment
# In daemon mode (SOFTNDK_MODE=daemon, under tests/support/with-daemon.sh) the device's
# records are in the daemon's trace, SOFTNDK_TRACE as the daemon inherited it, and the
# provider's in SOFTNDK_TRACE.consumer-<pid>: `json` checks the daemon's file with
# trace_check json-device, then both merged (`softndk trace DAEMON CONSUMER`) with the
# full rules (WQE spans and flows), and `text` checks that the consumer's file lists posts.
set -u
softndk=$1
check=$2
mode=$3
shift 3

dir=$(mktemp -d "${TMPDIR:-/tmp}/softndk-trace-XXXXXX")
trap 'rm -rf "$dir"' EXIT

if [ "$mode" = tshark ] && ! command -v tshark >/dev/null 2>&1; then
  echo "run-trace-test: tshark is not installed; skipped"
  exit 77
fi

run() {
  # $1: the trace file; the rest: the command.
  local trace=$1
  shift
  if ! SOFTNDK_TRACE=$trace "$@" >"$dir/program.out" 2>&1; then
    cat "$dir/program.out"
    echo "run-trace-test: $* failed" >&2
    exit 1
  fi
}

if [ "$mode" = replay ]; then
  run "$dir/a.trace" "$softndk" sim --replay 7 --trace "$dir/a.sched" -- "$@"
  run "$dir/b.trace" "$softndk" sim --replay 7 --trace "$dir/b.sched" -- "$@"
  if ! cmp "$dir/a.trace" "$dir/b.trace"; then
    echo "run-trace-test: two replays of seed 7 wrote different traces" >&2
    exit 1
  fi
  echo "run-trace-test: seed 7 replayed to the same trace ($(stat -c %s "$dir/a.trace") bytes)"
  exit 0
fi

if [ "$mode" = rnic ]; then
  env -u SOFTNDK_TRACE -u SOFTNDK_MODE "$softndk" rnic --socket "$dir/rnic.sock" \
    --trace "$dir/daemon.trace" >"$dir/rnic.out" 2>"$dir/rnic.err" &
  daemon=$!
  for _ in $(seq 1 200); do
    grep -q 'listening on' "$dir/rnic.out" 2>/dev/null && break
    sleep 0.025
  done
  status=0
  SOFTNDK_MODE=daemon SOFTNDK_SOCKET=$dir/rnic.sock "$@" >"$dir/program.out" 2>&1 || status=$?
  kill -TERM "$daemon"
  wait "$daemon" || { cat "$dir/rnic.err"; echo "run-trace-test: the daemon failed" >&2; exit 1; }
  [ "$status" -eq 0 ] || { cat "$dir/program.out"; echo "run-trace-test: $* failed" >&2; exit 1; }
  "$softndk" trace "$dir/daemon.trace" -o "$dir/daemon.json" || exit 1
  exec "$check" json-device "$dir/daemon.json"
fi

if [ "$mode" = faults ]; then
  printf '[lossy]\nkind = drop\nprobability = 5%%\n\n[busy-receiver]\nkind = rnr-storm\nstart_ns = 0\nduration_ns = 2000000\n' \
    >"$dir/faults.ini"
  run "$dir/f.trace" "$softndk" sim --replay 1 --faults "$dir/faults.ini" --trace "$dir/f.sched" -- "$@"
  "$softndk" trace "$dir/f.trace" --format text -o "$dir/f.txt" || exit 1
  grep -q ' fault .*drop' "$dir/f.txt" || { echo "run-trace-test: no drop fault listed" >&2; exit 1; }
  grep -q ' fault .*rnr-storm' "$dir/f.txt" || { echo "run-trace-test: no RNR storm listed" >&2; exit 1; }
  grep -q 'RNR retry' "$dir/f.txt" || { echo "run-trace-test: no RNR retry listed" >&2; exit 1; }
  echo "run-trace-test: $(grep -c ' fault ' "$dir/f.txt") faults, $(grep -c ' retry ' "$dir/f.txt") retries listed"
  "$softndk" trace "$dir/f.trace" -o "$dir/f.json" || exit 1
  "$check" json "$dir/f.json" || exit 1
  "$softndk" trace "$dir/f.trace" --format pcap -o "$dir/f.pcapng" || exit 1
  out=$("$check" pcap "$dir/f.pcapng") || exit 1
  echo "$out"
  case $out in *" 0 with comments"*) echo "run-trace-test: no frame is commented" >&2; exit 1 ;; esac
  if command -v tshark >/dev/null 2>&1; then
    malformed=$(tshark -r "$dir/f.pcapng" -Y '_ws.malformed' 2>/dev/null | wc -l)
    comments=$(tshark -r "$dir/f.pcapng" -Y 'frame.comment' 2>/dev/null | wc -l)
    echo "run-trace-test: tshark: $malformed malformed, $comments frames with a comment"
    [ "$malformed" -eq 0 ] && [ "$comments" -gt 0 ] || exit 1
  fi
  exit 0
fi

trace=$dir/run.trace
if [ "${SOFTNDK_MODE:-embedded}" = daemon ]; then
  : "${SOFTNDK_TRACE:?daemon mode: the daemon must have been started with SOFTNDK_TRACE}"
  daemon_trace=$SOFTNDK_TRACE
  run "$trace" "$@"
  sleep 0.2  # the daemon's writer flushes every 20 ms
  case $mode in
    json)
      "$softndk" trace "$daemon_trace" -o "$dir/run.json" || exit 1
      "$check" json-device "$dir/run.json" || exit 1
      # The daemon's file and the consumer's merged: every WQE a span again.
      consumer=
      for f in "$trace".consumer-*; do [ -e "$f" ] && consumer=$f; done
      [ -n "$consumer" ] || { echo "run-trace-test: no $trace.consumer-<pid>" >&2; exit 1; }
      "$softndk" trace "$daemon_trace" "$consumer" -o "$dir/merged.json" || exit 1
      exec "$check" json "$dir/merged.json"
      ;;
    text)
      consumer=
      for f in "$trace".consumer-*; do [ -e "$f" ] && consumer=$f; done
      [ -n "$consumer" ] || { echo "run-trace-test: no $trace.consumer-<pid>" >&2; exit 1; }
      "$softndk" trace "$consumer" --format text -o "$dir/run.txt" || exit 1
      grep -q ' post ' "$dir/run.txt" || { echo "run-trace-test: no post in the consumer's trace" >&2; exit 1; }
      echo "run-trace-test: the consumer's trace lists $(grep -c ' post ' "$dir/run.txt") posts"
      exit 0
      ;;
  esac
  echo "run-trace-test: $mode is not a daemon-mode check" >&2
  exit 2
fi

run "$trace" "$@"
case $mode in
  json)
    "$softndk" trace "$trace" -o "$dir/run.json" || exit 1
    exec "$check" json "$dir/run.json"
    ;;
  text)
    "$softndk" trace "$trace" --format text -o "$dir/run.txt" || exit 1
    exec "$check" text "$dir/run.txt"
    ;;
  pcap)
    "$softndk" trace "$trace" --format pcap -o "$dir/run.pcapng" || exit 1
    exec "$check" pcap "$dir/run.pcapng"
    ;;
  tshark)
    "$softndk" trace "$trace" --format pcap -o "$dir/run.pcapng" || exit 1
    frames=$(tshark -r "$dir/run.pcapng" 2>/dev/null | wc -l)
    malformed=$(tshark -r "$dir/run.pcapng" -Y '_ws.malformed' 2>/dev/null | wc -l)
    echo "run-trace-test: tshark decoded $frames frames, $malformed malformed"
    [ "$frames" -gt 0 ] && [ "$malformed" -eq 0 ] || exit 1
    exit 0
    ;;
esac
echo "run-trace-test: unknown check $mode" >&2
exit 2
