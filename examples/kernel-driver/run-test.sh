#!/bin/sh
# run-test.sh DRIVER [RUNNER ARGS...]
# Runs the driver under its runner and passes only if the runner exits 0 AND the driver
# logged its verdict line (CTest's PASS_REGULAR_EXPRESSION alone would ignore the exit
# status). The verdict is a DPFLTR_INFO_LEVEL line: the log level must be info or finer.
case ${SOFTNDK_LOG_LEVEL:-} in
  trace | debug) ;;
  *) SOFTNDK_LOG_LEVEL=info ;;
esac
export SOFTNDK_LOG_LEVEL
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then
  echo "run-test: $1 exited with status $rc" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q 'kernel-driver: all checks passed'; then
  echo "run-test: no 'kernel-driver: all checks passed' line" >&2
  exit 1
fi
