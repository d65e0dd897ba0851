#!/usr/bin/env bash
# bench/run.sh - SoftNDK's latency, bandwidth and message rate beside the peers',
# measured in the same run, with ratios and the targets of issue 15. Benchmarks, not
# tests: nothing here fails on a number; a missed target is printed as MISS.
#
#   bench/run.sh                  everything (REPS=1: ~2 minutes on a busy 2-core machine;
#                                 REPS=5: ~8 minutes idle, estimated, plus udp.sh, scale.sh)
#   REPS=5 bench/run.sh           repetitions of every figure (default 3)
#   PEERS=none bench/run.sh       SoftNDK only (the peer columns say n/a)
#   PARTS=model bench/run.sh      the peers and the timing model only (bench/model.sh and
#                                 the model's figures beside the peers)
#   PARTS=data,udp bench/run.sh   a comma-separated choice of the parts:
#     data   SoftNDK's data path: one- and two-process tables, multi-QP, the Targets table
#     model  bench/model.sh and the model beside the peers (issue 12)
#     udp    bench/udp.sh, if it exists (skipped with a note otherwise)
#     scale  bench/scale.sh, if it exists (skipped with a note otherwise)
#
# Needs a default build (scripts/bootstrap.sh; BUILD_DIR overrides) with softndk, the
# pingpong example and softndk_memcpy_bw (bench/limits/memcpy_bw.cpp, built here if
# missing), and for the peers the Debian packages of bench/install-deps.sh (libfabric-bin,
# libfabric-dev); without them the peer columns say n/a.
#
# Every figure is "MEDIAN (MIN-MAX)" over REPS runs: of SoftNDK's runs here, and of the
# peers' runs in bench/peers.sh. A ratio and a verdict use the medians. Latency is
# one-way (half a round trip; perftest's t_typical, the median of a run) in
# microseconds, except RDMA read latency, a round trip as perftest reports it.
# Bandwidth is in GB/s (1e9 B/s), message rate in millions of messages per second.
#
# Like for like: every peer (fi_pingpong, fi_rma_bench) runs its two ends in two
# processes. A SoftNDK figure is marked [2p] when its two ends are two processes too
# (softndk ib_* or the pingpong example, through the daemon or over SOFTNDK_FABRIC=udp)
# and [1p] when both ends are in one process (softndk perf, embedded or through the
# daemon); a [1p] against [2p] comparison is printed, but labelled as not like for like.
#
# bench/udp.sh and bench/scale.sh belong to other parts of issue 15; their output is
# printed as it comes. A line of theirs of the form
#   target|NAME|OURS|REFERENCE|lower or higher|FACTOR|LIKE
# (OURS and REFERENCE figures as above, LIKE a word such as 2p:2p) joins the Targets
# table. When neither reports a target, the scale targets of issue 15 are listed there
# as n/a.
#
# Bounded: every program runs under `timeout`, bench/peers.sh has its own time budget,
# and a run that hangs or fails leaves its figure n/a.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
started=$(date +%s)
. bench/lib.sh
REPS=${REPS:-3}
BUILD_DIR=${BUILD_DIR:-build/default}
PEERS=${PEERS:-all}
PARTS=${PARTS:-all}
softndk=$BUILD_DIR/tools/softndk/softndk
pingpong=$BUILD_DIR/examples/pingpong/pingpong
memcpy_bw=$BUILD_DIR/bench/softndk_memcpy_bw
LAT_SIZES="8 64 512 4096"
BW_SIZES="4096 65536 1048576"
RUN_TIMEOUT=${RUN_TIMEOUT:-60}  # seconds for one SoftNDK program run
# 8 B message rate with a post list of 32 and one WQE in 64 signaled (issue 15, item 4).
RATE_ARGS="-t write --bw -s 8 -l 32 -Q 64 -n 400000"

want() { [ "$PARTS" = all ] || [[ ",$PARTS," == *",$1,"* ]]; }

if [ ! -x "$softndk" ] || [ ! -x "$pingpong" ]; then
    echo "bench/run.sh: $softndk or $pingpong not built; run scripts/bootstrap.sh first" >&2
    exit 2
fi
if [ ! -x "$memcpy_bw" ]; then
    timeout 300 cmake --build "$BUILD_DIR" --target softndk_memcpy_bw >/dev/null 2>&1 ||
        echo "bench/run.sh: could not build softndk_memcpy_bw; the memcpy limit is n/a" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/softndk-bench-XXXXXX")
daemon_pid=""
cleanup() {
    [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM  # so that EXIT stops the daemon

# ------------------------------------------------------------------ header
memcpy_log=$work/memcpy.txt
timeout 120 "$memcpy_bw" --runs "$(( REPS < 3 ? 3 : REPS ))" >"$memcpy_log" 2>&1 || true
memcpy_figure() {  # hot|cold -> "MEDIAN (MIN-MAX)" GB/s
    awk -v k="$1" '$1 == k && NF == 6 { printf "%.2f (%.2f-%.2f)\n", $4, $5, $6; f = 1 }
      END { if (!f) print "n/a" }' "$memcpy_log"
}
CACHELINE_RTT=$(cacheline_rtt "$BUILD_DIR")
MEMCPY_HOT=$(memcpy_figure hot)
MEMCPY_COLD=$(memcpy_figure cold)
if commit=$(git rev-parse --short HEAD 2>/dev/null); then
    git diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
else
    commit="unknown (not a git tree)"
fi
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "# SoftNDK bench, $(date -u +%Y-%m-%dT%H:%MZ); REPS=$REPS; PARTS=$PARTS"
echo "# cpu: ${cpu:-unknown}; $(nproc) cores online; kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# commit $commit; $("$softndk" --version | tr '\n' ' ')"
echo "# memcpy limit (bench/limits/memcpy_bw.cpp, at least 3 runs), one thread, 1 MiB copies: hot $MEMCPY_HOT GB/s, cold $MEMCPY_COLD GB/s"
echo "#   ($(sed -n 's/^# memcpy_bw: //p' "$memcpy_log"))"
echo "# cache-line round trip between two cores (bench/limits/cacheline_rtt.cpp): $CACHELINE_RTT"
echo "# figures: MEDIAN (MIN-MAX) over REPS runs; [1p] both ends in one process, [2p] two processes"

declare -A R  # R[key] = "MEDIAN (MIN-MAX)"

# repeat PREC CMD... -> the figure of REPS runs of CMD (each prints one number or nothing)
repeat() {
    local prec=$1 values=()
    shift
    for _ in $(seq 1 "$REPS"); do values+=("$("$@")"); done
    stat3 "$prec" "${values[@]}"
}

# perf_value ENV FIELD ARGS... -> FIELD of one `softndk perf ARGS --json` run (one
# process), BW_average in GB/s
perf_value() {
    local env=$1 field=$2 v
    shift 2
    # shellcheck disable=SC2086
    v=$(timeout "$RUN_TIMEOUT" env $env "$softndk" perf "$@" --json 2>/dev/null | json_field "$field")
    if [ "$field" = BW_average ]; then gbps "$v"; else echo "$v"; fi
}

# pair_value ENV FIELD COMMAND ARGS... -> FIELD of one two-process `softndk COMMAND`:
# a server, and a client that retries its connect until the server listens
PORT_BASE=$(( 20000 + RANDOM % 20000 ))
port_counter=0
pair_value() {
    local env=$1 field=$2 command=$3 port server v
    shift 3
    port_counter=$(( port_counter + 1 )); port=$(( PORT_BASE + port_counter ))
    # shellcheck disable=SC2086
    timeout "$RUN_TIMEOUT" env $env "$softndk" "$command" "$@" -p "$port" >/dev/null 2>&1 &
    server=$!
    # shellcheck disable=SC2086
    v=$(timeout "$RUN_TIMEOUT" env $env "$softndk" "$command" "$@" -p "$port" --json 127.0.0.1 \
        2>/dev/null | json_field "$field")
    wait "$server" 2>/dev/null
    if [ "$field" = BW_average ]; then gbps "$v"; else echo "$v"; fi
}

# pingpong_value SIZE ITERS -> one-way us of the pingpong example, two processes through
# the daemon (usec/iter is a round trip)
pingpong_value() {
    local size=$1 iters=$2 port out server
    port_counter=$(( port_counter + 1 )); port=$(( PORT_BASE + port_counter ))
    # shellcheck disable=SC2086
    timeout "$RUN_TIMEOUT" env $daemon_env "$pingpong" -p "$port" -s "$size" -n "$iters" \
        >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 1 100); do
        # shellcheck disable=SC2086
        out=$(timeout "$RUN_TIMEOUT" env $daemon_env "$pingpong" 127.0.0.1 -p "$port" -s "$size" \
            -n "$iters" 2>/dev/null) && break
        out=""
        kill -0 "$server" 2>/dev/null || break
        sleep 0.02
    done
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    echo "$out" | awk '/usec\/iter/ { printf "%.3f\n", $(NF-1) / 2 }'
}

# daemon_wakeups -> the daemon's doorbell-thread wakeups so far ("" without a daemon)
daemon_wakeups() {
    timeout 10 "$softndk" rnic --status -j --socket "$work/rnic.sock" 2>/dev/null |
        json_field wakeups
}

# ------------------------------------------------------------------ SoftNDK
if want data; then
    "$softndk" rnic --socket "$work/rnic.sock" --log-level warn >"$work/daemon.out" 2>&1 &
    daemon_pid=$!
    for _ in $(seq 1 200); do grep -q 'listening on' "$work/daemon.out" && break; sleep 0.02; done
    daemon_env="SOFTNDK_MODE=daemon SOFTNDK_SOCKET=$work/rnic.sock"
    embedded_env="SOFTNDK_MODE=embedded"
    udp_env="SOFTNDK_MODE=embedded SOFTNDK_FABRIC=udp"

    # One process: softndk perf, embedded and through the daemon.
    for mode in embedded daemon; do
        if [ $mode = embedded ]; then env_mode=$embedded_env; else env_mode=$daemon_env; fi
        for verb in send write read; do
            for s in $LAT_SIZES; do
                R[$mode,lat,$verb,$s]=$(repeat 2 perf_value "$env_mode" t_typical -t $verb --lat -s "$s" -n 5000)
            done
            for s in $BW_SIZES; do
                n=$(( s >= 1048576 ? 500 : 5000 ))
                R[$mode,bw,$verb,$s]=$(repeat 2 perf_value "$env_mode" BW_average -t $verb --bw -s "$s" -n $n)
            done
        done
        # shellcheck disable=SC2086
        R[$mode,rate]=$(repeat 3 perf_value "$env_mode" MsgRate $RATE_ARGS)
        for q in 1 4 16; do
            R[$mode,q$q,bw]=$(repeat 2 perf_value "$env_mode" BW_average -t write --bw -s 65536 -q $q -n 5000)
            R[$mode,q$q,rate]=$(repeat 3 perf_value "$env_mode" MsgRate -t write --bw -s 8 -q $q -n 100000)
        done
    done

    # Two processes through the daemon: softndk ib_* and the pingpong example.
    # ib_send_lat, and the daemon's doorbell-thread wakeups per message of each run (a
    # run of 5000 iterations carries 10000 messages, one each way per iteration).
    wakeup_log=$work/wakeups.txt
    : >"$wakeup_log"
    send_lat_and_wakeups() {
        local before after v
        before=$(daemon_wakeups)
        v=$(pair_value "$daemon_env" t_typical ib_send_lat -s 8 -n 5000)
        after=$(daemon_wakeups)
        [ -n "$v" ] && awk -v a="$before" -v b="$after" \
            'BEGIN { if (a != "" && b != "") printf "%.4f\n", (b - a) / 10000 }' >>"$wakeup_log"
        echo "$v"
    }
    R[daemon2p,lat,send,8]=$(repeat 2 send_lat_and_wakeups)
    # shellcheck disable=SC2046
    R[daemon2p,wakeups]=$(stat3 4 $(cat "$wakeup_log"))
    R[daemon2p,lat,write,8]=$(repeat 2 pair_value "$daemon_env" t_typical ib_write_lat -s 8 -n 5000)
    for s in 8 4096; do R[pingpong2p,lat,send,$s]=$(repeat 2 pingpong_value "$s" 5000); done
    R[daemon2p,bw,write,1048576]=$(repeat 2 pair_value "$daemon_env" BW_average ib_write_bw -s 1048576 -n 500)
    R[daemon2p,bw,read,1048576]=$(repeat 2 pair_value "$daemon_env" BW_average ib_read_bw -s 1048576 -n 500)
    kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null; daemon_pid=""

    # Two embedded processes over RoCEv2/UDP on loopback (SOFTNDK_FABRIC=udp).
    R[udp2p,lat,send,8]=$(repeat 2 pair_value "$udp_env" t_typical ib_send_lat -s 8 -n 5000)
    # -t 4: a consumer whose answer does not wait for its own SEND's completion (the
    # peer's ACK), as protocols with credits post; perftest's default -t 1 waits for it.
    R[udp2p,lat,send_t4,8]=$(repeat 2 pair_value "$udp_env" t_typical ib_send_lat -s 8 -t 4 -n 5000)
    R[udp2p,lat,write,8]=$(repeat 2 pair_value "$udp_env" t_typical ib_write_lat -s 8 -n 5000)
    R[udp2p,bw,write,1048576]=$(repeat 2 pair_value "$udp_env" BW_average ib_write_bw -s 1048576 -n 200)
fi

# -------------------------------------------------------------------- peers
peer_log=$work/peers.txt
: >"$peer_log"
if [ "$PEERS" != none ] && { want data || want model; }; then
    command -v fi_pingpong >/dev/null ||
        echo "(fi_pingpong not installed: bench/install-deps.sh; no fi_pingpong peers)" >>"$peer_log"
    # Only what the tables use: fi_pingpong at the latency sizes, without sockets/rdm.
    FPP_PROVIDERS="shm/rdm tcp/rdm tcp/msg" SIZES="$LAT_SIZES" REPS=$REPS BUDGET_S=420 \
        timeout 600 bench/peers.sh fi_pingpong >>"$peer_log" 2>&1
    SIZES="$LAT_SIZES 65536 1048576" REPS=$REPS BUDGET_S=420 \
        timeout 600 bench/peers.sh fi_rma >>"$peer_log" 2>&1
fi
peer() { peer_figure "$peer_log" "$@"; }

# ------------------------------------------------------------------- tables
# row FORMAT-WIDTHS... is printf; cell VALUE -> VALUE or "-" when empty
cell() { echo "${1:--}"; }
if want data; then
    echo
    echo "## Latency [1p], one-way us (read: round trip); ratio = SoftNDK / peer, lower is better"
    echo "## (the peers are [2p]: these ratios are NOT like for like; see the two-process table)"
    printf "%-6s %-5s %-22s %-22s %-22s %-22s %-8s %-8s\n" test size "embedded[1p]" "daemon[1p]" \
        "shm[2p]" "tcp[2p]" "emb/shm" "dmn/shm"
    for verb in send write read; do
        for s in $LAT_SIZES; do
            case $verb in
                send) shm=$(peer shm/rdm pingpong "$s"); tcp=$(peer tcp/rdm pingpong "$s") ;;
                write) shm=$(peer shm write_lat "$s"); tcp=$(peer tcp write_lat "$s") ;;
                *) shm="-"; tcp="-" ;;
            esac
            printf "%-6s %-5s %-22s %-22s %-22s %-22s %-8s %-8s\n" "$verb" "$s" \
                "$(cell "${R[embedded,lat,$verb,$s]}")" "$(cell "${R[daemon,lat,$verb,$s]}")" \
                "$shm" "$tcp" "$(ratio "${R[embedded,lat,$verb,$s]}" "$shm")" \
                "$(ratio "${R[daemon,lat,$verb,$s]}" "$shm")"
        done
    done
    echo "(softndk perf: both ends in one process, on one thread; daemon = through softndk rnic."
    echo " shm/tcp: fi_pingpong shm/rdm, tcp/rdm for send; fi_rma_bench write_lat for write)"

    echo
    echo "## Bandwidth [1p], GB/s; ratio = SoftNDK / peer, higher is better (NOT like for like)"
    printf "%-6s %-8s %-22s %-22s %-22s %-22s %-8s %-8s\n" test size "embedded[1p]" "daemon[1p]" \
        "shm[2p]" "tcp[2p]" "emb/shm" "dmn/shm"
    for verb in send write read; do
        case $verb in send) t=msg_bw ;; write) t=write_bw ;; read) t=read_bw ;; esac
        for s in $BW_SIZES; do
            shm=$(peer shm "$t" "$s"); tcp=$(peer tcp "$t" "$s")
            printf "%-6s %-8s %-22s %-22s %-22s %-22s %-8s %-8s\n" "$verb" "$s" \
                "$(cell "${R[embedded,bw,$verb,$s]}")" "$(cell "${R[daemon,bw,$verb,$s]}")" \
                "$shm" "$tcp" "$(ratio "${R[embedded,bw,$verb,$s]}" "$shm")" \
                "$(ratio "${R[daemon,bw,$verb,$s]}" "$shm")"
        done
    done
    echo "(peers: fi_rma_bench msg_bw, write_bw, read_bw, one endpoint, window 64)"

    echo
    echo "## Two processes [2p] against two processes: like for like"
    printf "%-50s %-22s %-30s %-22s %-8s\n" measure SoftNDK peer "peer figure" ratio
    two_row() {  # MEASURE OURS PEER-NAME PEER-FIGURE
        printf "%-50s %-22s %-30s %-22s %-8s\n" "$1" "$(cell "$2")" "$3" "$4" "$(ratio "$2" "$4")"
    }
    two_row "daemon send 8 B one-way us (ib_send_lat)" "${R[daemon2p,lat,send,8]}" \
        "fi_pingpong shm/rdm" "$(peer shm/rdm pingpong 8)"
    two_row "daemon send 8 B one-way us (pingpong example)" "${R[pingpong2p,lat,send,8]}" \
        "fi_pingpong shm/rdm" "$(peer shm/rdm pingpong 8)"
    two_row "daemon send 4096 B one-way us (pingpong example)" "${R[pingpong2p,lat,send,4096]}" \
        "fi_pingpong shm/rdm" "$(peer shm/rdm pingpong 4096)"
    two_row "daemon write 8 B one-way us (ib_write_lat)" "${R[daemon2p,lat,write,8]}" \
        "fi_rma_bench shm write_lat" "$(peer shm write_lat 8)"
    two_row "daemon 1 MiB write GB/s (ib_write_bw)" "${R[daemon2p,bw,write,1048576]}" \
        "fi_rma_bench shm write_bw" "$(peer shm write_bw 1048576)"
    two_row "daemon 1 MiB read GB/s (ib_read_bw)" "${R[daemon2p,bw,read,1048576]}" \
        "fi_rma_bench shm read_bw" "$(peer shm read_bw 1048576)"
    two_row "udp send 8 B one-way us (ib_send_lat)" "${R[udp2p,lat,send,8]}" \
        "fi_pingpong tcp/msg" "$(peer tcp/msg pingpong 8)"
    two_row "udp send 8 B one-way us (ib_send_lat)" "${R[udp2p,lat,send,8]}" \
        "fi_pingpong tcp/rdm" "$(peer tcp/rdm pingpong 8)"
    two_row "udp send 8 B one-way us (ib_send_lat -t 4)" "${R[udp2p,lat,send_t4,8]}" \
        "fi_pingpong tcp/msg" "$(peer tcp/msg pingpong 8)"
    two_row "udp write 8 B one-way us (ib_write_lat)" "${R[udp2p,lat,write,8]}" \
        "fi_rma_bench tcp write_lat" "$(peer tcp write_lat 8)"
    two_row "udp 1 MiB write GB/s (ib_write_bw)" "${R[udp2p,bw,write,1048576]}" \
        "fi_rma_bench tcp write_bw" "$(peer tcp write_bw 1048576)"
    echo "(daemon: both processes attached to one softndk rnic; udp: two embedded processes,"
    echo " SOFTNDK_FABRIC=udp, RoCEv2 over loopback UDP. Daemon doorbell-thread wakeups per"
    echo " message during ib_send_lat: ${R[daemon2p,wakeups]}. The UDP target is held against"
    echo " tcp/msg: connected endpoints, as RC, and the faster of libfabric's two tcp forms,"
    echo " with perftest's -t 1, where each end waits for the peer's ACK of its SEND before"
    echo " it takes the answer; -t 4 shows a consumer whose answer does not wait for it)"

    echo
    echo "## Message rate and multi-QP [1p] (perftest -q): ratio = SoftNDK / peer (NOT like for like)"
    printf "%-50s %-22s %-22s %-8s %-8s\n" measure "embedded[1p]" "daemon[1p]" "emb/shm" "dmn/shm"
    shm_rate=$(peer shm write_bw_mops 8)
    shm_64k=$(peer shm write_bw 65536)
    printf "%-50s %-22s %-22s %-8s %-8s\n" "8 B write Mmsg/s, -l 32 -Q 64 (post list)" \
        "$(cell "${R[embedded,rate]}")" "$(cell "${R[daemon,rate]}")" \
        "$(ratio "${R[embedded,rate]}" "$shm_rate")" "$(ratio "${R[daemon,rate]}" "$shm_rate")"
    for q in 1 4 16; do
        printf "%-50s %-22s %-22s %-8s %-8s\n" "64 KiB write GB/s, -q $q" \
            "$(cell "${R[embedded,q$q,bw]}")" "$(cell "${R[daemon,q$q,bw]}")" \
            "$(ratio "${R[embedded,q$q,bw]}" "$shm_64k")" "$(ratio "${R[daemon,q$q,bw]}" "$shm_64k")"
    done
    for q in 1 4 16; do
        printf "%-50s %-22s %-22s %-8s %-8s\n" "8 B write Mmsg/s, -q $q" \
            "$(cell "${R[embedded,q$q,rate]}")" "$(cell "${R[daemon,q$q,rate]}")" \
            "$(ratio "${R[embedded,q$q,rate]}" "$shm_rate")" "$(ratio "${R[daemon,q$q,rate]}" "$shm_rate")"
    done
    echo "(peer [2p]: fi_rma_bench shm write_bw, one endpoint, window 64: $shm_64k GB/s at 64 KiB,"
    echo " $shm_rate Mop/s at 8 B. -n is per QP; requests go round robin over the QPs)"
fi

# -------------------------------------------------------- bench/udp.sh, scale.sh
extra_targets=$work/extra-targets.txt
: >"$extra_targets"
run_part_script() {  # NAME: bench/NAME.sh if present, its target| lines kept
    local script=bench/$1.sh
    echo
    echo "## bench/$1.sh"
    if [ ! -x "$script" ] && [ ! -f "$script" ]; then
        echo "(bench/$1.sh does not exist in this tree: skipped)"
        return
    fi
    REPS=$REPS BUILD_DIR=$BUILD_DIR timeout 900 bash "$script" 2>&1 | tee "$work/$1.out" |
        grep -v '^target|'
    grep '^target|' "$work/$1.out" >>"$extra_targets"
}
want udp && run_part_script udp
want scale && run_part_script scale

# ------------------------------------------------------------------ targets
if want data; then
    echo
    echo "## Targets (issue 15), computed from the figures above; ratio = SoftNDK / reference"
    printf "%-62s %-22s %-22s %-8s %-8s %-7s %s\n" target SoftNDK reference ratio "target" verdict like
    target() {  # NAME OURS REFERENCE lower|higher FACTOR LIKE
        local sign=">="
        [ "$4" = lower ] && sign="<="
        printf "%-62s %-22s %-22s %-8s %-8s %-7s %s\n" "$1" "$(cell "$2")" "$(cell "$3")" \
            "$(ratio "$2" "$3")" "$sign$5x" "$(verdict "$2" "$3" "$4" "$5")" "$6"
    }
    shm_w=$(peer shm write_bw 1048576); shm_r=$(peer shm read_bw 1048576)
    # 1. Bandwidth
    target "1 MiB write GB/s, embedded, vs fi_rma shm write_bw" "${R[embedded,bw,write,1048576]}" "$shm_w" higher 1.2 "1p:2p NOT like for like"
    target "1 MiB read GB/s, embedded, vs fi_rma shm read_bw" "${R[embedded,bw,read,1048576]}" "$shm_r" higher 1.2 "1p:2p NOT like for like"
    target "1 MiB write GB/s, daemon, vs fi_rma shm write_bw" "${R[daemon2p,bw,write,1048576]}" "$shm_w" higher 1.2 "2p:2p"
    target "1 MiB read GB/s, daemon, vs fi_rma shm read_bw" "${R[daemon2p,bw,read,1048576]}" "$shm_r" higher 1.2 "2p:2p"
    target "1 MiB write GB/s, daemon one process, vs fi_rma shm write_bw" "${R[daemon,bw,write,1048576]}" "$shm_w" higher 1.2 "1p:2p NOT like for like"
    target "1 MiB write GB/s, embedded, vs hot memcpy 1 MiB" "${R[embedded,bw,write,1048576]}" "$MEMCPY_HOT" higher 0.8 "machine limit"
    target "1 MiB read GB/s, embedded, vs hot memcpy 1 MiB" "${R[embedded,bw,read,1048576]}" "$MEMCPY_HOT" higher 0.8 "machine limit"
    target "1 MiB write GB/s, daemon, vs hot memcpy 1 MiB" "${R[daemon2p,bw,write,1048576]}" "$MEMCPY_HOT" higher 0.8 "machine limit"
    target "1 MiB read GB/s, daemon, vs hot memcpy 1 MiB" "${R[daemon2p,bw,read,1048576]}" "$MEMCPY_HOT" higher 0.8 "machine limit"
    # 2. Cross-process latency
    target "send 8 B one-way us, daemon, vs fi_pingpong shm" "${R[daemon2p,lat,send,8]}" "$(peer shm/rdm pingpong 8)" lower 2 "2p:2p"
    target "write 8 B one-way us, daemon, vs fi_rma shm write_lat" "${R[daemon2p,lat,write,8]}" "$(peer shm write_lat 8)" lower 2 "2p:2p"
    target "daemon wakeups per message (ib_send_lat) vs one" "${R[daemon2p,wakeups]}" "1.000 (1.000-1.000)" lower 1 "device thread only"
    # 3. RoCEv2/UDP between processes
    target "send 8 B one-way us, udp, vs fi_pingpong tcp/msg" "${R[udp2p,lat,send,8]}" "$(peer tcp/msg pingpong 8)" lower 1 "2p:2p"
    target "1 MiB write GB/s, udp, vs fi_rma tcp write_bw" "${R[udp2p,bw,write,1048576]}" "$(peer tcp write_bw 1048576)" higher 1 "2p:2p"
    # 4. Embedded latency and message rate
    target "send 8 B one-way us, embedded, vs fi_pingpong shm" "${R[embedded,lat,send,8]}" "$(peer shm/rdm pingpong 8)" lower 1 "1p:2p NOT like for like"
    target "8 B write Mmsg/s, embedded, -l 32 -Q 64, vs fi_rma shm write_bw" "${R[embedded,rate]}" "$(peer shm write_bw_mops 8)" higher 10 "1p:2p NOT like for like"
    # Before issue 15: the one-process daemon figure against tcp.
    target "send 8 B one-way us, daemon one process, vs fi_pingpong tcp" "${R[daemon,lat,send,8]}" "$(peer tcp/rdm pingpong 8)" lower 1 "1p:2p NOT like for like"
    # 5. Scale: from bench/scale.sh (and bench/udp.sh) target| lines
    while IFS='|' read -r _ name ours reference dir factor like; do
        target "$name" "$ours" "$reference" "$dir" "$factor" "$like"
    done <"$extra_targets"
    if ! grep -q . "$extra_targets" 2>/dev/null; then
        for name in "QPs in one device (10,000)" "MRs in one device, embedded (1,000,000)" \
            "MRs in one device, daemon (1,000,000)" "connects/s through the daemon (10,000)"; do
            target "$name" "" "" higher 1 "bench/scale.sh reported none"
        done
    fi
    echo "(MET/MISS on the medians; n/a where a figure is missing. [1p] against [2p] rows are"
    echo " kept for continuity but are not like for like; memory per QP and per MR: bench/scale.sh)"
fi

# ------------------------------------------------------------- model time
if want model; then
    REPS=$REPS BUILD_DIR=$BUILD_DIR timeout 900 bench/model.sh

    # model.sh's workloads once more, for their figures rather than their wall time:
    # functional mode with the timing model on (roce-default) and off (ideal), beside the
    # peers measured above in this same run.
    model_value() {  # PROFILE FIELD ARGS... -> FIELD of one run (BW_average in GB/s)
        local profile=$1 field=$2
        shift 2
        perf_value "" "$field" --profile "$profile" "$@"
    }
    echo
    echo "## The model beside the peers [1p], functional mode, wall clock; ratio = model on / peer"
    printf "%-42s %-22s %-22s %-22s %-22s %-8s %-8s\n" figure "model on" "model off" "shm[2p]" \
        "tcp[2p]" "on/shm" "on/tcp"
    model_row() {  # NAME PREC FIELD SHM TCP ARGS...
        local name=$1 prec=$2 field=$3 shm=$4 tcp=$5 on off
        shift 5
        on=$(repeat "$prec" model_value roce-default "$field" "$@")
        off=$(repeat "$prec" model_value ideal "$field" "$@")
        printf "%-42s %-22s %-22s %-22s %-22s %-8s %-8s\n" "$name" "$on" "$off" "$shm" "$tcp" \
            "$(ratio "$on" "$shm")" "$(ratio "$on" "$tcp")"
    }
    model_row "write 8 B one-way us (lower is better)" 2 t_typical "$(peer shm write_lat 8)" \
        "$(peer tcp write_lat 8)" -t write --lat -s 8 -n 20000
    model_row "send 64 B one-way us (lower is better)" 2 t_typical "$(peer shm/rdm pingpong 64)" \
        "$(peer tcp/rdm pingpong 64)" -t send --lat -s 64 -n 20000
    model_row "write 8 B Mmsg/s, 1 QP (higher is better)" 3 MsgRate "$(peer shm write_bw_mops 8)" \
        "$(peer tcp write_bw_mops 8)" -t write --bw -s 8 -n 100000
    model_row "write 64 KiB GB/s (higher is better)" 2 BW_average "$(peer shm write_bw 65536)" \
        "$(peer tcp write_bw 65536)" -t write --bw -s 65536 -n 20000
    echo "(softndk perf, both ends in one process; peers: fi_rma_bench write_lat/write_bw, fi_pingpong for send)"
fi

if [ -s "$peer_log" ]; then
    echo
    echo "## Peers, as bench/peers.sh printed them"
    cat "$peer_log"
fi
echo
echo "# bench/run.sh took $(( $(date +%s) - started )) s"
