#!/bin/sh
# kernel_driver_summary_test.sh KERNEL_DRIVER
# At the default log level (SOFTNDK_LOG_LEVEL unset: warn) a passing kernel-driver run
# prints exactly one line, "kernel-driver: all checks passed (N checks)", to stdout
# and nothing to stderr, and exits 0 (examples/kernel-driver/kd_console.h).
unset SOFTNDK_LOG_LEVEL
dir=$(mktemp -d "${TMPDIR:-/tmp}/softndk-kd-summary-XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$1" --timeout 30 >"$dir/out" 2>"$dir/err"
rc=$?
status=0
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc" >&2; status=1; }
grep -Eqx 'kernel-driver: all checks passed \([1-9][0-9]* checks\)' "$dir/out" &&
  [ "$(wc -l <"$dir/out")" -eq 1 ] || { echo "FAIL: stdout is:" >&2; cat "$dir/out" >&2; status=1; }
[ -s "$dir/err" ] && { echo "FAIL: stderr is not empty:" >&2; cat "$dir/err" >&2; status=1; }
[ "$status" -eq 0 ] && cat "$dir/out"
exit "$status"
