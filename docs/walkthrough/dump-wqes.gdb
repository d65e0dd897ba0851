# dump-wqes.gdb - prints every send WQE as the provider hands it to the SQ ring, and every
# CQE as the device writes it, for docs/walkthrough.md §2. Run it with the environment of
# run.sh's first run, so the heap (and so every address) is the same as in send-read.pcap:
#
#   SOFTNDK_MODE=embedded SOFTNDK_TIME=simulated SOFTNDK_SEED=1 \
#     SOFTNDK_TRACE=/tmp/w.trace SOFTNDK_PCAP=/tmp/w.pcap \
#     gdb -q -batch -x docs/walkthrough/dump-wqes.gdb build/default/examples/kernel-driver/kernel_driver
#
# Qp::submit(op, flags, invalidate_token, wqe, segments, context) is a member function:
# this = rdi, op = rsi, flags = rdx, invalidate_token = rcx, wqe = r8, segments = r9
# (x86-64 SysV). At its entry the segments after the control segment are final; the
# control segment (the first 16 bytes) is filled in by submit itself and still holds the
# previous WQE's. Cq::push gets the CQE before it stamps completion_time_ns, op_own and
# the owner bit (emulator/device/cq.cpp).
set pagination off
unset environment LINES
unset environment COLUMNS
set breakpoint pending on
break softndk::provider::Qp::submit
commands
silent
printf "submit opcode=%#x NDK flags=%#x invalidate_token=%#x segments=%d\n", $rsi, $rdx, $rcx, $r9
x/12wx $r8
continue
end
break softndk::emu::Cq::push
commands
silent
printf "Cq::push cqe_opcode=%d completion_time_ns=%lu\n", opcode, now_ns
p/x cqe
continue
end
run
