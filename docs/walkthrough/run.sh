#!/bin/sh
# run.sh KERNEL_DRIVER SOFTNDK [--check]
#
# Produces the trace listings and captures that docs/walkthrough.md shows, from two runs
# of examples/kernel-driver in simulated time (SOFTNDK_TIME=simulated SOFTNDK_SEED=1,
# docs/simulation.md), so every file is the same byte for byte on every run:
#
#   send-read.txt    `softndk trace --format text` of the plain run
#   send-read.pcap   the fabric's capture of that run (SOFTNDK_PCAP: real payload bytes)
#   retry.txt        the listing of a run with faults.ini (a lost SEND, a lost READ
#                    response, an RNR storm)
#   retry.pcapng     `softndk trace --format pcap` of that run (lost frames commented)
#
# Without --check the files are (re)written next to this script. With --check they are
# made in a scratch directory and compared with the committed ones; any difference fails
# (exit 1) with a diff of the listings (the captures are compared by size: the heap
# addresses they carry move with any change to the program's allocations), and so does a
# listing line quoted in
# docs/walkthrough.md that is in neither listing. The CTest "docs: walkthrough listings match a
# fresh run" runs it so: when it fails after an intended change, rerun without --check
# and update the excerpts in docs/walkthrough.md to the new listings.
#
# The environment is cleared (env -i) so that no SOFTNDK_* setting of the caller (a
# profile, a log level, a daemon) changes the run. Needs a build without sanitizers (they
# move heap addresses, which travel in the RETH and the SEND payload) and with the trace
# hooks compiled in (SOFTNDK_TRACE_HOOKS=ON, the default).
set -eu

if [ $# -lt 2 ]; then
  echo "usage: $0 KERNEL_DRIVER SOFTNDK [--check]" >&2
  exit 2
fi
driver=$1
softndk=$2
check=${3:-}
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME [FAULT FILE]: one simulated run of the driver with a trace and a capture
# (SOFTNDK_FAULTS empty: no faults).
run() {
  name=$1
  faults=${2:-}
  if ! env -i PATH="$PATH" SOFTNDK_MODE=embedded SOFTNDK_TIME=simulated SOFTNDK_SEED=1 \
    SOFTNDK_TRACE="$work/$name.trace" SOFTNDK_PCAP="$work/$name.capture" \
    SOFTNDK_FAULTS="$faults" "$driver" >"$work/$name.out" 2>&1; then
    echo "run.sh: $driver failed ($name):" >&2
    cat "$work/$name.out" >&2
    exit 1
  fi
  if [ ! -s "$work/$name.trace" ]; then
    echo "run.sh: no trace written ($name): is SOFTNDK_TRACE_HOOKS off?" >&2
    exit 1
  fi
  "$softndk" trace "$work/$name.trace" --format text -o "$work/$name.txt"
}

run send-read
cp "$work/send-read.capture" "$work/send-read.pcap"
run retry "$here/faults.ini"
"$softndk" trace "$work/retry.trace" --format pcap -o "$work/retry.pcapng"

files="send-read.txt send-read.pcap retry.txt retry.pcapng"
if [ "$check" = "--check" ]; then
  status=0
  # The listings must match byte for byte. The captures carry heap addresses (RETH
  # virtual addresses, the SEND payload), which move whenever any allocation of the
  # program changes size, so they are compared by size: the same frames, the same lengths.
  for f in $files; do
    case $f in
      *.txt) cmp -s "$work/$f" "$here/$f" ;;
      *) [ "$(wc -c <"$work/$f")" = "$(wc -c <"$here/$f")" ] ;;
    esac || {
      echo "run.sh: $f differs from a fresh run" >&2
      case $f in *.txt) diff "$here/$f" "$work/$f" | head -40 >&2 || true ;; esac
      status=1
    }
  done
  # Every listing line that docs/walkthrough.md quotes must be a line of a listing.
  doc="$here/../walkthrough.md"
  grep -E '^ +[0-9]+\.[0-9]{3}  [0-9]+ ' "$doc" | while IFS= read -r line; do
    if ! grep -qxF -- "$line" "$here/send-read.txt" "$here/retry.txt"; then
      echo "run.sh: docs/walkthrough.md quotes a line no listing has: $line" >&2
      echo bad
    fi
  done >"$work/quoted"
  grep -q bad "$work/quoted" && status=1
  [ $status -eq 0 ] && echo "run.sh: $files match a fresh run, and so do the doc's excerpts"
  exit $status
fi
for f in $files; do
  cp "$work/$f" "$here/$f"
done
echo "run.sh: wrote $files to $here"
