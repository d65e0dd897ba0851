#!/usr/bin/env bash
# rnic_cli_test.sh CASE SOFTNDK [PINGPONG]
#
# `softndk rnic`'s logging and readiness (emulator/daemon/cli.hpp, readiness.hpp), each
# CASE a CTest of its own, every daemon on a private socket in a scratch directory:
#   log-levels  default: no [info] line; SOFTNDK_LOG_LEVEL=error: none either, not even
#               with --status calls; SOFTNDK_LOG_LEVEL=info: [info] lines (the variable is
#               honoured, not overwritten); --log-level wins over the variable.
#   ready-fd    --ready-fd 3 writes exactly "READY=1\n" once the socket answers --status,
#               and closes the fd; a closed fd is a usage error (exit 2).
#   detach      --detach returns only once the daemon answers, prints its pid (the pid
#               --status reports), and a consumer attaches at once; a daemon that cannot
#               start (the socket is taken) makes --detach exit 1, no pid printed.
#   notify      NOTIFY_SOCKET (systemd's sd_notify): a datagram "READY=1\nMAINPID=<pid>"
#               once listening, "STOPPING=1" at SIGTERM; also to an abstract '@' name.
#   pingpong    PINGPONG's server prints "listening on ADDR:PORT"; a client started
#               before the server retries and succeeds; with no server at all it gives
#               up after about 5 s with STATUS_CONNECTION_REFUSED; embedded on the
#               in-process fabric (no other process can listen) it gives up at once.
set -u
case_name=$1
softndk=$2
pingpong=${3:-}

dir=$(mktemp -d "${TMPDIR:-/tmp}/softndk-rnic-cli-XXXXXX")
export SOFTNDK_SOCKET=$dir/rnic.sock
unset NOTIFY_SOCKET SOFTNDK_LOG_LEVEL SOFTNDK_MODE
daemons=()
cleanup() {
  for pid in "${daemons[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
  done
  rm -rf "$dir"
}
trap cleanup EXIT

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Waits until --status answers (up to 5 s).
wait_listening() {
  for _ in $(seq 1 250); do
    "$softndk" rnic --status >/dev/null 2>&1 && return 0
    sleep 0.02
  done
  return 1
}

# Runs a daemon in the foreground with the given environment and arguments, makes
# three --status calls and a consumer session, stops it, and leaves its stderr in
# $dir/err.
daemon_session() {
  env "$@" "$softndk" rnic >"$dir/out" 2>"$dir/err" &
  local pid=$!
  daemons+=("$pid")
  wait_listening || fail "daemon ($*) did not listen"
  for _ in 1 2 3; do "$softndk" rnic --status >/dev/null || fail "--status ($*)"; done
  kill -TERM "$pid"
  wait "$pid" || fail "daemon ($*) did not exit 0 at SIGTERM"
}

case $case_name in
  log-levels)
    daemon_session
    grep -q '\[info\]' "$dir/err" && fail "default level printed [info]: $(cat "$dir/err")"
    daemon_session SOFTNDK_LOG_LEVEL=error
    grep -q '\[info\]\|\[warning\]' "$dir/err" &&
      fail "SOFTNDK_LOG_LEVEL=error printed [info]/[warning]: $(cat "$dir/err")"
    daemon_session SOFTNDK_LOG_LEVEL=info
    grep -q '\[softndk.daemon\] \[info\] listening on' "$dir/err" ||
      fail "SOFTNDK_LOG_LEVEL=info printed no [info] listening line: $(cat "$dir/err")"
    grep -q 'session' "$dir/err" && fail "--status calls logged sessions at info: $(cat "$dir/err")"
    # --log-level wins over the environment.
    env SOFTNDK_LOG_LEVEL=error "$softndk" rnic --log-level info >"$dir/out" 2>"$dir/err" &
    pid=$!
    daemons+=("$pid")
    wait_listening || fail "--log-level info daemon did not listen"
    kill -TERM "$pid"
    wait "$pid"
    grep -q '\[info\]' "$dir/err" || fail "--log-level info under SOFTNDK_LOG_LEVEL=error: no [info]"
    ;;

  ready-fd)
    mkfifo "$dir/ready"
    "$softndk" rnic --ready-fd 3 3>"$dir/ready" >"$dir/out" 2>"$dir/err" &
    pid=$!
    daemons+=("$pid")
    # The read ends at end-of-file: the daemon closed the fd after the line.
    line=$(timeout 10 cat "$dir/ready")
    [ "$line" = "READY=1" ] || fail "--ready-fd wrote '$line', not READY=1"
    "$softndk" rnic --status >/dev/null || fail "--status failed right after READY=1"
    "$softndk" rnic --ready-fd 9 >/dev/null 2>"$dir/err2"
    rc=$?
    [ "$rc" -eq 2 ] || fail "--ready-fd on a closed fd: exit $rc, not 2"
    grep -q 'not an open file descriptor' "$dir/err2" || fail "no message for a closed --ready-fd"
    ;;

  detach)
    pid=$(timeout 10 "$softndk" rnic --detach 2>"$dir/err")
    rc=$?
    [ -n "$pid" ] && daemons+=("$pid")
    [ "$rc" -eq 0 ] || fail "--detach exited $rc: $(cat "$dir/err")"
    [[ $pid =~ ^[0-9]+$ ]] || fail "--detach printed '$pid', not a pid"
    status=$("$softndk" rnic --status) || fail "--status right after --detach failed"
    [[ $status == "pid=$pid "* ]] || fail "--status says '$status', --detach printed $pid"
    if [ -n "$pingpong" ]; then
      SOFTNDK_MODE=daemon "$pingpong" -l -n 10 >/dev/null 2>"$dir/err" ||
        fail "a consumer right after --detach failed: $(cat "$dir/err")"
    fi
    second=$(timeout 10 "$softndk" rnic --detach 2>"$dir/err")
    rc=$?
    [ "$rc" -eq 1 ] || fail "--detach on a taken socket exited $rc, not 1"
    [ -z "$second" ] || fail "--detach on a taken socket printed '$second'"
    grep -q 'already listening' "$dir/err" || fail "no reason for the failed --detach"
    kill -TERM "$pid"
    for _ in $(seq 1 250); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
    kill -0 "$pid" 2>/dev/null && fail "the detached daemon ignored SIGTERM"
    [ -e "$SOFTNDK_SOCKET" ] && fail "the detached daemon left its socket behind"
    ;;

  notify)
    for name in "$dir/notify" "@softndk-test-notify-$$"; do
      # A datagram socket like systemd's; prints each message as one line (\n -> |).
      python3 -c '
import socket, sys
name = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + name[1:] if name.startswith("@") else name)
s.settimeout(10)
print("bound", flush=True)
for _ in range(2):
    print(s.recv(4096).decode().replace("\n", "|"), flush=True)
' "$name" >"$dir/messages" &
      listener=$!
      for _ in $(seq 1 250); do grep -q bound "$dir/messages" && break; sleep 0.02; done
      NOTIFY_SOCKET=$name "$softndk" rnic >"$dir/out" 2>"$dir/err" &
      pid=$!
      daemons+=("$pid")
      wait_listening || fail "daemon with NOTIFY_SOCKET=$name did not listen"
      kill -TERM "$pid"
      wait "$pid" || fail "daemon with NOTIFY_SOCKET=$name did not exit 0"
      wait "$listener" || fail "no two datagrams on $name: $(cat "$dir/messages")"
      grep -qx "READY=1|MAINPID=$pid" "$dir/messages" ||
        fail "no READY=1|MAINPID=$pid on $name: $(cat "$dir/messages")"
      grep -qx "STOPPING=1" "$dir/messages" || fail "no STOPPING=1 on $name"
      grep -q '\[warning\]' "$dir/err" && fail "warnings with NOTIFY_SOCKET: $(cat "$dir/err")"
      rm -f "$dir/notify"
    done
    ;;

  pingpong)
    pid=$("$softndk" rnic --detach) || fail "--detach"
    daemons+=("$pid")
    export SOFTNDK_MODE=daemon
    # The client first; the server half a second later.
    "$pingpong" -p 7001 -n 20 127.0.0.1 >"$dir/client.out" 2>"$dir/client.err" &
    client=$!
    sleep 0.5
    "$pingpong" -p 7001 -n 20 >"$dir/server.out" 2>"$dir/server.err" || fail "server failed"
    wait "$client" || fail "an early client did not retry: $(cat "$dir/client.err")"
    head -n 1 "$dir/server.out" | grep -qx 'listening on 127.0.0.1:7001' ||
      fail "the server's first line is '$(head -n 1 "$dir/server.out")'"
    grep -q '^20 iters in' "$dir/client.out" || fail "no client report"
    # Nobody listening: the client gives up after its retry window.
    start=$(date +%s%N)
    "$pingpong" -p 7002 -n 20 127.0.0.1 >/dev/null 2>"$dir/alone.err"
    rc=$?
    elapsed_ms=$((($(date +%s%N) - start) / 1000000))
    [ "$rc" -eq 1 ] || fail "a client without a server exited $rc"
    grep -q STATUS_CONNECTION_REFUSED "$dir/alone.err" || fail "no refusal: $(cat "$dir/alone.err")"
    { [ "$elapsed_ms" -ge 4500 ] && [ "$elapsed_ms" -le 15000 ]; } ||
      fail "a client without a server gave up after $elapsed_ms ms, not about 5 s"
    start=$(date +%s%N)
    SOFTNDK_MODE=embedded "$pingpong" -p 7003 -n 20 127.0.0.1 >/dev/null 2>"$dir/alone.err"
    rc=$?
    elapsed_ms=$((($(date +%s%N) - start) / 1000000))
    [ "$rc" -eq 1 ] || fail "an embedded client without a server exited $rc"
    [ "$elapsed_ms" -le 2000 ] || fail "an embedded client retried ($elapsed_ms ms)"
    ;;

  *)
    echo "rnic_cli_test.sh: unknown case '$case_name'" >&2
    exit 2
    ;;
esac

[ "$failures" -eq 0 ] || exit 1
echo "rnic_cli_test $case_name: passed"
