#!/bin/sh
# run-test.sh RUNS DRIVER [RUNNER ARGS...]
# Runs the driver under its runner RUNS times in a row and stops at the first failed run,
# naming it. A run passes only if the runner exits 0 AND the driver logged its verdict
# line (a failed check bug-checks, which the runner turns into SIGABRT; a hang ends with
# the runner's --timeout and exit 1). The verdict is a DPFLTR_INFO_LEVEL line: the log
# level must be info or finer. Daemon mode: run the whole loop under
# tests/support/with-daemon.sh, so that every run uses the same daemon.
runs=$1
shift
case ${SOFTNDK_LOG_LEVEL:-} in
  trace | debug) ;;
  *) SOFTNDK_LOG_LEVEL=info ;;
esac
export SOFTNDK_LOG_LEVEL
run=1
while [ "$run" -le "$runs" ]; do
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] || ! printf '%s\n' "$out" | grep -q 'rdma-channel: all checks passed'; then
    printf '%s\n' "$out"
    if [ "$rc" -ne 0 ]; then
      echo "run-test: run $run of $runs failed: $1 exited with status $rc" >&2
    else
      echo "run-test: run $run of $runs failed: no 'rdma-channel: all checks passed' line" >&2
    fi
    exit 1
  fi
  run=$((run + 1))
done
printf '%s\n' "$out" | grep 'rdma-channel:'
echo "run-test: $runs of $runs runs passed (${SOFTNDK_MODE:-embedded} mode)"
