#!/usr/bin/env bash
# with-daemon.sh SOFTNDK COMMAND [ARGS...]
#
# Runs COMMAND in daemon mode: starts a private `SOFTNDK rnic` on a fresh socket
# (adapters from SOFTNDK_CONFIG, as in embedded mode), runs COMMAND with
# SOFTNDK_MODE=daemon and SOFTNDK_SOCKET pointing at it, then stops the daemon.
# CTest uses it as the launcher of the daemon-mode copies of the test suites.
#
# Fails (exit 1) if the daemon does not come up, or if it died while COMMAND ran:
# nothing a consumer does may take the daemon down. Otherwise exits with
# COMMAND's status. Catch2's test listing runs without a daemon.
set -u
softndk=$1
shift

for arg in "$@"; do
  case $arg in --list-test-names-only | --list-reporters | --list-tests) exec "$@" ;; esac
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/softndk-daemon-XXXXXX")
socket=$dir/rnic.sock
"$softndk" rnic --socket "$socket" --log-level "${SOFTNDK_TEST_DAEMON_LOG_LEVEL:-warn}" \
  >"$dir/daemon.out" 2>"$dir/daemon.err" &
daemon=$!

cleanup() {
  kill -TERM "$daemon" 2>/dev/null
  wait "$daemon" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

for _ in $(seq 1 200); do
  grep -q 'listening on' "$dir/daemon.out" 2>/dev/null && break
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.025
done
if ! grep -q 'listening on' "$dir/daemon.out" 2>/dev/null; then
  echo "with-daemon: softndk rnic did not start:" >&2
  cat "$dir/daemon.err" >&2
  exit 1
fi

SOFTNDK_MODE=daemon SOFTNDK_SOCKET=$socket "$@"
status=$?

if ! kill -0 "$daemon" 2>/dev/null; then
  echo "with-daemon: softndk rnic died while the test ran:" >&2
  cat "$dir/daemon.err" >&2
  exit 1
fi
kill -TERM "$daemon"
if ! wait "$daemon"; then
  echo "with-daemon: softndk rnic did not shut down cleanly:" >&2
  cat "$dir/daemon.err" >&2
  [ "$status" -eq 0 ] && status=1
fi
trap 'rm -rf "$dir"' EXIT
exit "$status"
