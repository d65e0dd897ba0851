#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/seed-*).

The seeds are small, valid-looking inputs in each target's input format (the header
comment of tests/fuzz/<target>_fuzz.cpp); the fuzzer mutates from them. Run it again
after changing a format:  python3 tests/fuzz/corpus/make_seeds.py
The packet parser's seeds are frames of the wire oracle's RC conversation
(tests/support/wire_oracle.py)."""

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "support"))
import wire_oracle  # noqa: E402


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def packet_parser():
    conv = wire_oracle.rc_conversation()
    for i, (frame, opname) in enumerate(conv[:12]):
        write("packet_parser", "%02d-opcode-%02x" % (i, frame[14 + 20 + 8]), frame)
        # The same packet as the UDP link receives it: the UDP payload.
        if i < 4:
            write("packet_parser", "%02d-udp-payload" % i, frame[14 + 20 + 8:])
    write("packet_parser", "cnp", wire_oracle.cnp_frame())


SEND, NOP, WRITE = 0x0A, 0x00, 0x08
SIGNALED, INLINE = 0x01, 0x08


def ctrl(opcode, flags, wqe_index, segments, invalidate=0):
    return struct.pack("<BBHB3sII", opcode, flags, wqe_index, segments, b"\0" * 3, invalidate, 0)


def wqebbs(data):
    return data + b"\0" * (-len(data) % 64)


def rings():
    hello = b"hello"
    inline_send = wqebbs(ctrl(SEND, SIGNALED | INLINE, 1, 2) +
                         struct.pack("<I", 0x80000000 | len(hello)) + hello)
    # op 2: a valid SEND (61 bytes) + RECV; op 0: one raw WQEBB, then drain (op 3).
    write("rings", "inline-send", bytes([2 | (1 << 2)]) + bytes([0]) + inline_send + bytes([3]))
    write("rings", "nop", bytes([0]) + wqebbs(ctrl(NOP, SIGNALED, 0, 1)) + bytes([3]))
    write_wqe = wqebbs(ctrl(WRITE, SIGNALED, 0, 3) + struct.pack("<QII", 0x1000, 0x1234, 0) +
                       struct.pack("<IIQ", 64, 0x200, 0x1000))
    write("rings", "write-bad-token", bytes([0]) + write_wqe + bytes([3]))
    recv_end = struct.pack("<IIQ", 0, 0x100, 0)  # kRecvListEnd: no scatter entries
    write("rings", "recv-empty", bytes([1]) + recv_end + b"\0" * 48 + bytes([2, 3]))
    write("rings", "many-sends", bytes([2 | (k << 2) for k in range(1, 20)]) + bytes([3]))


def doorbells():
    def rec(what, value):
        return struct.pack("<BI", what, value)
    write("doorbells", "send-then-jump", rec(7, 100) + rec(0, 5) + rec(7, 10))
    write("doorbells", "cq-consumer-garbage", rec(7, 64) + rec(2, 0xFFFFFFFF) + rec(7, 64))
    write("doorbells", "arm-and-bits", rec(4, 1) + rec(7, 8) + rec(6, 12) + rec(6, 0xFFFFFFFF))
    write("doorbells", "rq-producer-wrap", rec(1, 0x80000000) + rec(7, 1) + rec(3, 7))
    write("doorbells", "timing-hints", rec(5, 1000) + rec(7, 4000) + rec(5, 0xFFFFFFFF) + rec(7, 1))


def control_protocol():
    def req(opcode, body):
        return struct.pack("<HHI", opcode, 8 + len(body), 7) + body
    pd = req(0x10, struct.pack("<II", 0, 0))
    cq = req(0x20, struct.pack("<II", 64, 0))
    # pd 1? numbers are the device's: the fuzzer finds them; these use small ones.
    qp = req(0x30, struct.pack("<10I", 1, 1, 1, 0xFFFFFFFF, 16, 16, 2, 2, 64, 0))
    write("control_protocol", "pd-cq-qp", pd + cq + cq + qp)
    write("control_protocol", "destroy-unknown", req(0x31, struct.pack("<II", 99, 0)) +
          req(0x21, struct.pack("<II", 0xFFFFFFFF, 0)))
    write("control_protocol", "resize-cq", cq + req(0x22, struct.pack("<II", 1024, 1)))
    write("control_protocol", "alloc-free-mr", pd + req(0x40, struct.pack("<II", 1, 0)) +
          req(0x44, struct.pack("<II", 0x100, 0)))
    write("control_protocol", "query-counters", req(0x72, struct.pack("<II", 0, 0)))
    write("control_protocol", "detach", pd + req(0x02, b""))


packet_parser()
rings()
doorbells()
control_protocol()
