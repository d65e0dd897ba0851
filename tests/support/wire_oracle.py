#!/usr/bin/env python3
"""Wire-format oracle for the virtual RNIC: RoCEv2 (IB BTH over UDP/4791) and
iWARP (MPA/DDP/RDMAP over TCP), built byte by byte with struct only.

What it does
  * builds reference packets from the field layouts (IBA vol.1 ch.9 + RoCEv2
    annex A17; RFC 5040/5041/5044 for iWARP),
  * computes the RoCEv2 ICRC and the MPA CRC32c itself,
  * self-tests the ICRC routine against a RoCEv2 CNP captured on a real
    ConnectX-4 Lx (test vector published in secdev/scapy test/contrib/roce.uts),
  * writes classic pcap files (LINKTYPE_ETHERNET),
  * with --check, runs tshark on them and fails if any frame is malformed, has
    an expert warning/error, or decodes to a different opcode than intended.

Usage
  python3 wire_oracle.py [--out DIR] [--check]
  python3 wire_oracle.py --verify-icrc FILE.pcap   # check every RoCEv2 ICRC in a capture

SoftNDK's copy (tests/support/wire_oracle.py) of the reference oracle: the tests run
this one, never a file outside the repository. Local changes: --verify-icrc prints
"verified N/M RoCEv2 frames", fails (2) on a capture without RoCEv2 frames, and
--quiet prints only the bad ones.

Nothing here opens a socket: it only writes files. Addresses are the
documentation ranges (192.0.2.0/24, 02:00:00:... locally administered MACs).
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

ROCEV2_UDP_PORT = 4791

# ---------------------------------------------------------------------------
# IB BTH opcodes: high 3 bits = transport, low 5 bits = operation
# ---------------------------------------------------------------------------
TRANSPORT = {"RC": 0x00, "UC": 0x20, "RD": 0x40, "UD": 0x60}
OPS = {
    "SEND_FIRST": 0x00, "SEND_MIDDLE": 0x01, "SEND_LAST": 0x02,
    "SEND_LAST_WITH_IMMEDIATE": 0x03, "SEND_ONLY": 0x04,
    "SEND_ONLY_WITH_IMMEDIATE": 0x05,
    "RDMA_WRITE_FIRST": 0x06, "RDMA_WRITE_MIDDLE": 0x07,
    "RDMA_WRITE_LAST": 0x08, "RDMA_WRITE_LAST_WITH_IMMEDIATE": 0x09,
    "RDMA_WRITE_ONLY": 0x0A, "RDMA_WRITE_ONLY_WITH_IMMEDIATE": 0x0B,
    "RDMA_READ_REQUEST": 0x0C, "RDMA_READ_RESPONSE_FIRST": 0x0D,
    "RDMA_READ_RESPONSE_MIDDLE": 0x0E, "RDMA_READ_RESPONSE_LAST": 0x0F,
    "RDMA_READ_RESPONSE_ONLY": 0x10, "ACKNOWLEDGE": 0x11,
    "ATOMIC_ACKNOWLEDGE": 0x12, "COMPARE_SWAP": 0x13, "FETCH_ADD": 0x14,
    "SEND_LAST_WITH_INVALIDATE": 0x16, "SEND_ONLY_WITH_INVALIDATE": 0x17,
}
CNP_OPCODE = 0x81  # RoCEv2 congestion notification packet (annex A17)

# Extended headers that follow the BTH, in order, per operation.
EXT_HEADERS = {
    "SEND_FIRST": (), "SEND_MIDDLE": (), "SEND_LAST": (),
    "SEND_LAST_WITH_IMMEDIATE": ("IMMDT",), "SEND_ONLY": (),
    "SEND_ONLY_WITH_IMMEDIATE": ("IMMDT",),
    "RDMA_WRITE_FIRST": ("RETH",), "RDMA_WRITE_MIDDLE": (),
    "RDMA_WRITE_LAST": (), "RDMA_WRITE_LAST_WITH_IMMEDIATE": ("IMMDT",),
    "RDMA_WRITE_ONLY": ("RETH",),
    "RDMA_WRITE_ONLY_WITH_IMMEDIATE": ("RETH", "IMMDT"),
    "RDMA_READ_REQUEST": ("RETH",),
    "RDMA_READ_RESPONSE_FIRST": ("AETH",), "RDMA_READ_RESPONSE_MIDDLE": (),
    "RDMA_READ_RESPONSE_LAST": ("AETH",), "RDMA_READ_RESPONSE_ONLY": ("AETH",),
    "ACKNOWLEDGE": ("AETH",), "ATOMIC_ACKNOWLEDGE": ("AETH", "ATOMICACKETH"),
    "COMPARE_SWAP": ("ATOMICETH",), "FETCH_ADD": ("ATOMICETH",),
    "SEND_LAST_WITH_INVALIDATE": ("IETH",),
    "SEND_ONLY_WITH_INVALIDATE": ("IETH",),
}

# AETH syndrome: bits 7..5 = type, bits 4..0 = credit / RNR timer / NAK code
AETH_ACK = 0x00
AETH_RNR_NAK = 0x20
AETH_NAK = 0x60
AETH_CREDITS_INVALID = 0x1F          # "no credit information" (rxe uses it)
NAK_PSN_SEQ_ERROR = 0x60
NAK_INVALID_REQUEST = 0x61
NAK_REMOTE_ACCESS_ERROR = 0x62
NAK_REMOTE_OP_ERROR = 0x63
NAK_INVALID_RD_REQUEST = 0x64


def opcode(transport, op):
    return TRANSPORT[transport] | OPS[op]


# ---------------------------------------------------------------------------
# CRCs
# ---------------------------------------------------------------------------
def _crc32c_table():
    poly = 0x82F63B78  # reflected Castagnoli polynomial
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data, crc=0):
    """Standard CRC-32C (init ~0, reflected, final xor ~0), like iSCSI/MPA."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def rocev2_icrc(l3, l4, ib_without_icrc):
    """RoCEv2 invariant CRC.

    The CRC input is: 8 bytes of 0xFF (stand-in for the absent IB LRH),
    the IP header with its variant fields set to all ones, the UDP header
    with its checksum set to all ones, then the BTH with its byte 4
    (FECN/BECN/resv6a) set to all ones, then the rest of the IB packet
    (extended headers, payload, pad). The CRC is the ordinary zlib/Ethernet
    CRC-32 and is sent least-significant byte first.
    """
    l3 = bytearray(l3)
    if (l3[0] >> 4) == 4:           # IPv4: TOS(DSCP+ECN), TTL, header checksum
        l3[1] = 0xFF
        l3[8] = 0xFF
        l3[10:12] = b"\xff\xff"
    elif (l3[0] >> 4) == 6:         # IPv6: traffic class, flow label, hop limit
        l3[0] |= 0x0F
        l3[1] = 0xFF
        l3[2] = 0xFF
        l3[3] = 0xFF
        l3[7] = 0xFF
    else:
        raise ValueError("not an IP header")
    l4 = bytearray(l4)
    l4[6:8] = b"\xff\xff"           # UDP checksum
    ib = bytearray(ib_without_icrc)
    ib[4] = 0xFF                    # BTH resv8a (FECN, BECN, resv6a)
    crc = zlib.crc32(b"\xff" * 8 + bytes(l3) + bytes(l4) + bytes(ib)) & 0xFFFFFFFF
    return struct.pack("<I", crc)


# ---------------------------------------------------------------------------
# L2/L3/L4 helpers
# ---------------------------------------------------------------------------
def inet_csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip4(addr):
    return bytes(int(x) for x in addr.split("."))


def mac(addr):
    return bytes(int(x, 16) for x in addr.split(":"))


def ethernet(dst, src, ethertype=0x0800):
    return mac(dst) + mac(src) + struct.pack("!H", ethertype)


def ipv4_header(src, dst, payload_len, proto, tos=0, ttl=64, ident=0, df=True):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + payload_len, ident,
                      0x4000 if df else 0, ttl, proto, 0, ip4(src), ip4(dst))
    return hdr[:10] + struct.pack("!H", inet_csum(hdr)) + hdr[12:]


def udp_header(sport, dport, payload_len, csum=0):
    # RoCEv2 senders (rxe, ConnectX) put 0 in the UDP checksum over IPv4.
    return struct.pack("!HHHH", sport, dport, 8 + payload_len, csum)


def tcp_header(src, dst, sport, dport, seq, ack, flags, payload, window=65535):
    off_flags = (5 << 12) | flags
    hdr = struct.pack("!HHIIHHHH", sport, dport, seq & 0xFFFFFFFF,
                      ack & 0xFFFFFFFF, off_flags, window, 0, 0)
    pseudo = ip4(src) + ip4(dst) + struct.pack("!BBH", 0, 6, len(hdr) + len(payload))
    csum = inet_csum(pseudo + hdr + payload)
    return hdr[:16] + struct.pack("!H", csum) + hdr[18:]


# ---------------------------------------------------------------------------
# IB transport headers (all big-endian)
# ---------------------------------------------------------------------------
def bth(opc, dqpn, psn, se=False, mig=False, pad=0, tver=0, pkey=0xFFFF,
        fecn=False, becn=False, ackreq=False):
    b1 = (0x80 if se else 0) | (0x40 if mig else 0) | ((pad & 3) << 4) | (tver & 0xF)
    w1 = (0x80000000 if fecn else 0) | (0x40000000 if becn else 0) | (dqpn & 0xFFFFFF)
    w2 = (0x80000000 if ackreq else 0) | (psn & 0xFFFFFF)
    return struct.pack("!BBHII", opc, b1, pkey, w1, w2)


def reth(va, rkey, dmalen):
    return struct.pack("!QII", va, rkey, dmalen)


def aeth(syndrome, msn):
    return struct.pack("!I", ((syndrome & 0xFF) << 24) | (msn & 0xFFFFFF))


def immdt(imm):
    return struct.pack("!I", imm)


def ieth(rkey):
    return struct.pack("!I", rkey)


def atomiceth(va, rkey, swap_add, compare):
    return struct.pack("!QIQQ", va, rkey, swap_add, compare)


def atomicacketh(orig):
    return struct.pack("!Q", orig)


def deth(qkey, sqpn):
    return struct.pack("!II", qkey, sqpn & 0xFFFFFF)


class Endpoint:
    def __init__(self, mac_addr, ip_addr, qpn):
        self.mac = mac_addr
        self.ip = ip_addr
        self.qpn = qpn


def rocev2_frame(src, dst, transport, op, psn, payload=b"", ext=None,
                 se=False, ackreq=False, sport=0xC000, tos=0, ttl=64,
                 becn=False, bad_icrc=False, raw_opcode=None):
    """One Ethernet/IPv4/UDP/BTH/.../ICRC frame from src to dst's QP."""
    ext = ext or {}
    pad = (-len(payload)) & 3
    opc = raw_opcode if raw_opcode is not None else opcode(transport, op)
    hdr = bth(opc, dst.qpn, psn, se=se, pad=pad, ackreq=ackreq, becn=becn)
    for name in (EXT_HEADERS[op] if raw_opcode is None else ()):
        hdr += ext[name]
    ib = hdr + payload + b"\0" * pad
    udp_len = len(ib) + 4
    l4 = udp_header(sport, ROCEV2_UDP_PORT, udp_len)
    l3 = ipv4_header(src.ip, dst.ip, 8 + udp_len, proto=17, tos=tos, ttl=ttl)
    icrc = rocev2_icrc(l3, l4, ib)
    if bad_icrc:
        icrc = bytes(b ^ 0x5A for b in icrc)
    return ethernet(dst.mac, src.mac) + l3 + l4 + ib + icrc


def verify_rocev2_icrc(frame):
    """Return (ok, stored, computed) for an Ethernet+IPv4/IPv6+UDP/4791 frame."""
    off = 14
    ethertype = struct.unpack("!H", frame[12:14])[0]
    if ethertype == 0x8100:
        ethertype = struct.unpack("!H", frame[16:18])[0]
        off = 18
    if ethertype == 0x0800:
        ihl = (frame[off] & 0xF) * 4
        l3 = frame[off:off + ihl]
    elif ethertype == 0x86DD:
        l3 = frame[off:off + 40]
    else:
        return None
    l4 = frame[off + len(l3):off + len(l3) + 8]
    if struct.unpack("!H", l4[2:4])[0] != ROCEV2_UDP_PORT:
        return None
    udp_len = struct.unpack("!H", l4[4:6])[0]
    body = frame[off + len(l3) + 8:off + len(l3) + udp_len]
    stored = body[-4:]
    computed = rocev2_icrc(l3, l4, body[:-4])
    return stored == computed, stored.hex(), computed.hex()


# ---------------------------------------------------------------------------
# iWARP: MPA (RFC 5044) / DDP (RFC 5041) / RDMAP (RFC 5040)
# ---------------------------------------------------------------------------
MPA_KEY_REQ = b"MPA ID Req Frame"
MPA_KEY_REP = b"MPA ID Rep Frame"
RDMAP_WRITE, RDMAP_READ_REQ, RDMAP_READ_RESP, RDMAP_SEND = 0x0, 0x1, 0x2, 0x3
RDMAP_SEND_INV, RDMAP_SEND_SE, RDMAP_SEND_SE_INV, RDMAP_TERMINATE = 0x4, 0x5, 0x6, 0x7
QN_SEND, QN_READ_REQ, QN_TERMINATE = 0, 1, 2


def mpa_req_rep(key, markers=False, crc=True, reject=False, rev=1, private=b""):
    flags = (0x80 if markers else 0) | (0x40 if crc else 0) | (0x20 if reject else 0)
    return key + struct.pack("!BBH", flags, rev, len(private)) + private


def ddp_rdmap_ctrl(tagged, last, rdmap_opcode):
    # byte 0: T L rsvd(4) DV(2)=1 ; byte 1: RV(2)=1 rsvd(2) opcode(4)
    b0 = (0x80 if tagged else 0) | (0x40 if last else 0) | 0x01
    b1 = (0x1 << 6) | (rdmap_opcode & 0xF)
    return bytes([b0, b1])


def ddp_tagged(last, rdmap_opcode, stag, to):
    return ddp_rdmap_ctrl(True, last, rdmap_opcode) + struct.pack("!IQ", stag, to)


def ddp_untagged(last, rdmap_opcode, qn, msn, mo, inv_stag=0):
    return ddp_rdmap_ctrl(False, last, rdmap_opcode) + struct.pack(
        "!IIII", inv_stag, qn, msn, mo)


def rdma_read_request_body(sink_stag, sink_to, size, src_stag, src_to):
    return struct.pack("!IQIIQ", sink_stag, sink_to, size, src_stag, src_to)


def mpa_fpdu(ulpdu, crc=True, crc_le=True):
    """ULPDU_Length(2) + ULPDU + pad to 4 + CRC32c over everything before it.

    The CRC32c goes on the wire least-significant byte first (as in iSCSI);
    Wireshark's iwarp_mpa dissector reports "Bad CRC32" for the other order.
    crc_le=False exists only to produce a deliberately bad capture.
    """
    body = struct.pack("!H", len(ulpdu)) + ulpdu
    body += b"\0" * ((-len(body)) & 3)
    if not crc:
        return body + b"\0\0\0\0"
    c = crc32c(body)
    return body + struct.pack("<I" if crc_le else "!I", c)


class TcpFlow:
    """Bookkeeping for a two-way TCP stream so that tshark sees clean seq/ack."""
    FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

    def __init__(self, a, b, aport, bport):
        self.ep = {0: (a, aport), 1: (b, bport)}
        self.seq = {0: 1000, 1: 5000}
        self.frames = []

    def send(self, side, payload=b"", flags=None):
        src, sport = self.ep[side]
        dst, dport = self.ep[1 - side]
        if flags is None:
            flags = self.ACK | (self.PSH if payload else 0)
        ack = self.seq[1 - side] if flags & self.ACK else 0
        tcp = tcp_header(src.ip, dst.ip, sport, dport, self.seq[side], ack, flags, payload)
        ip = ipv4_header(src.ip, dst.ip, len(tcp) + len(payload), proto=6)
        self.frames.append(ethernet(dst.mac, src.mac) + ip + tcp + payload)
        self.seq[side] += len(payload) + (1 if flags & (self.SYN | self.FIN) else 0)

    def handshake(self):
        self.send(0, flags=self.SYN)
        self.send(1, flags=self.SYN | self.ACK)
        self.send(0, flags=self.ACK)


# ---------------------------------------------------------------------------
# pcap
# ---------------------------------------------------------------------------
def write_pcap(path, frames, t0=1_700_000_000):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", t0 + i // 1000, (i % 1000) * 1000, len(fr), len(fr)))
            f.write(fr)


def read_pcapng(data):
    """Frames from the Enhanced/Simple Packet Blocks of a pcapng file."""
    frames, off, endian = [], 0, "<"
    while off + 12 <= len(data):
        btype = struct.unpack(endian + "I", data[off:off + 4])[0]
        if btype == 0x0A0D0D0A:  # section header: learn byte order
            endian = "<" if data[off + 8:off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
        blen = struct.unpack(endian + "I", data[off + 4:off + 8])[0]
        if blen < 12:
            break
        if btype == 6:           # enhanced packet block
            caplen = struct.unpack(endian + "I", data[off + 20:off + 24])[0]
            frames.append(data[off + 28:off + 28 + caplen])
        elif btype == 3:         # simple packet block
            origlen = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
            frames.append(data[off + 12:off + 12 + min(origlen, blen - 16)])
        off += blen
    return frames


def read_pcap(path):
    """Frames of a classic pcap or a pcapng file (Ethernet link type assumed)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"\x0a\x0d\x0d\x0a":
        return read_pcapng(data)
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off, frames = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------
A = Endpoint("02:00:00:00:00:0a", "192.0.2.1", 0x000011)
B = Endpoint("02:00:00:00:00:0b", "192.0.2.2", 0x000012)
MTU = 256  # IB path MTU used for segmentation in the sample conversation


def segment(total, mtu=MTU):
    """Split a message of `total` bytes into packet payload sizes."""
    if total == 0:
        return [0]
    return [min(mtu, total - o) for o in range(0, total, mtu)]


def rc_conversation():
    """A short, plausible RC exchange A->B with B's responses.

    Returns a list of (frame, expected_opcode) pairs.
    """
    out = []

    def req(op, psn, payload=b"", ext=None, ackreq=False, se=False, bad=False):
        out.append((rocev2_frame(A, B, "RC", op, psn, payload, ext, se=se,
                                 ackreq=ackreq, sport=0xC011, bad_icrc=bad),
                    opcode("RC", op)))

    def rsp(op, psn, payload=b"", ext=None):
        out.append((rocev2_frame(B, A, "RC", op, psn, payload, ext, sport=0xC012),
                    opcode("RC", op)))

    msn = 0
    # 1. the canonical small packet: SEND_ONLY, ack requested, 10-byte payload (pad 2)
    req("SEND_ONLY", 100, b"hello rnic", ackreq=True, se=True)
    msn += 1
    rsp("ACKNOWLEDGE", 100, ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn)})
    # 2. a 612-byte SEND split at MTU 256: FIRST/MIDDLE/LAST, one coalesced ACK
    msg = bytes(range(256)) * 2 + bytes(100)
    o, psn = 0, 101
    sizes = segment(len(msg))
    for i, n in enumerate(sizes):
        op = "SEND_FIRST" if i == 0 else ("SEND_LAST" if i == len(sizes) - 1 else "SEND_MIDDLE")
        req(op, psn, msg[o:o + n], ackreq=(op == "SEND_LAST"))
        o += n
        psn += 1
    msn += 1
    rsp("ACKNOWLEDGE", psn - 1, ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn)})
    # 3. RDMA WRITE ONLY with RETH
    req("RDMA_WRITE_ONLY", psn, b"W" * 64,
        ext={"RETH": reth(0x7F0000001000, 0x00012345, 64)}, ackreq=True)
    msn += 1
    rsp("ACKNOWLEDGE", psn, ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn)})
    psn += 1
    # 4. RDMA READ of 300 bytes: request consumes 2 PSNs (one per response packet)
    req("RDMA_READ_REQUEST", psn, ext={"RETH": reth(0x7F0000002000, 0x00012345, 300)},
        ackreq=True)
    msn += 1
    data = bytes((i * 7) & 0xFF for i in range(300))
    rsp("RDMA_READ_RESPONSE_FIRST", psn, data[:256],
        ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn)})
    rsp("RDMA_READ_RESPONSE_LAST", psn + 1, data[256:],
        ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn)})
    psn += 2
    # 5. SEND with invalidate: receiver has no RQ WQE -> RNR NAK (timer code 14 = 1.28 ms),
    #    requester waits, retries the same PSN, then gets the ACK
    req("SEND_ONLY_WITH_INVALIDATE", psn, b"inv!0123", ext={"IETH": ieth(0x00012345)},
        ackreq=True)
    rsp("ACKNOWLEDGE", psn, ext={"AETH": aeth(AETH_RNR_NAK | 14, msn)})
    req("SEND_ONLY_WITH_INVALIDATE", psn, b"inv!0123", ext={"IETH": ieth(0x00012345)},
        ackreq=True)
    msn += 1
    rsp("ACKNOWLEDGE", psn, ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn)})
    psn += 1
    # 6. WRITE with immediate (consumes an RQ WQE at the target)
    req("RDMA_WRITE_ONLY_WITH_IMMEDIATE", psn, b"imm-data" * 2,
        ext={"RETH": reth(0x7F0000003000, 0x00012345, 16), "IMMDT": immdt(0xCAFEF00D)},
        ackreq=True)
    msn += 1
    rsp("ACKNOWLEDGE", psn, ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn)})
    psn += 1
    # 7. packet psn is lost; the next one arrives out of order -> NAK PSN sequence error
    #    carrying the expected PSN; requester rewinds and resends from there
    req("SEND_ONLY", psn + 1, b"late", ackreq=True)
    rsp("ACKNOWLEDGE", psn, ext={"AETH": aeth(NAK_PSN_SEQ_ERROR, msn)})
    req("SEND_ONLY", psn, b"lost", ackreq=True)
    req("SEND_ONLY", psn + 1, b"late", ackreq=True)
    msn += 2
    rsp("ACKNOWLEDGE", psn + 1, ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn)})
    psn += 2
    # 8. atomic fetch-and-add and its atomic ACK
    req("FETCH_ADD", psn, ext={"ATOMICETH": atomiceth(0x7F0000004000, 0x00012345, 1, 0)},
        ackreq=True)
    msn += 1
    rsp("ATOMIC_ACKNOWLEDGE", psn, ext={"AETH": aeth(AETH_ACK | AETH_CREDITS_INVALID, msn),
                                        "ATOMICACKETH": atomicacketh(41)})
    psn += 1
    # 9. RDMA WRITE with a bad rkey -> NAK remote access error (QP goes to error)
    req("RDMA_WRITE_ONLY", psn, b"X" * 8, ext={"RETH": reth(0x7F0000005000, 0x0BAD0BAD, 8)},
        ackreq=True)
    rsp("ACKNOWLEDGE", psn, ext={"AETH": aeth(NAK_REMOTE_ACCESS_ERROR, msn)})
    return out


def cnp_frame():
    """RoCEv2 CNP from B to A's QP: opcode 0x81, BECN set, 16 reserved bytes."""
    return rocev2_frame(B, A, "RC", "SEND_ONLY", 0, payload=bytes(16), becn=True,
                        raw_opcode=CNP_OPCODE, tos=0xC2, sport=0xC012)


def iwarp_conversation(crc_le=True, crc_on=True):
    """TCP handshake, MPA req/rep (rev 1, no markers), then FPDUs.

    crc_on=False mimics Linux siw's defaults (mpa_crc_required=0,
    mpa_crc_strict=1): both sides clear the C flag and every FPDU still carries
    a 4-byte CRC field, set to zero. siw rejects a peer that asks for CRC in
    that configuration, and it rejects markers always.
    """
    f = TcpFlow(A, B, 40000, 4791 + 1000)
    f.handshake()
    f.send(0, mpa_req_rep(MPA_KEY_REQ, crc=crc_on))
    f.send(1, mpa_req_rep(MPA_KEY_REP, crc=crc_on))

    def fpdu(ulpdu):
        return mpa_fpdu(ulpdu, crc=crc_on, crc_le=crc_le)

    # Send (untagged, QN 0, MSN 1, MO 0, last)
    f.send(0, fpdu(ddp_untagged(True, RDMAP_SEND, QN_SEND, 1, 0) + b"hello iwarp"))
    # RDMA Write (tagged, last)
    f.send(0, fpdu(ddp_tagged(True, RDMAP_WRITE, 0x00012345, 0x7F0000001000) + b"W" * 64))
    # RDMA Read Request (untagged QN 1) for 32 bytes
    f.send(0, fpdu(ddp_untagged(True, RDMAP_READ_REQ, QN_READ_REQ, 1, 0) +
                   rdma_read_request_body(0x00000777, 0x7F0000009000, 32,
                                          0x00012345, 0x7F0000002000)))
    # RDMA Read Response (tagged to the sink STag, last)
    f.send(1, fpdu(ddp_tagged(True, RDMAP_READ_RESP, 0x00000777, 0x7F0000009000) +
                   bytes(range(32))))
    f.send(0)  # bare ACK
    return f.frames


# ---------------------------------------------------------------------------
# Self-test and tshark check
# ---------------------------------------------------------------------------
# RoCEv2 CNP captured on a ConnectX-4 Lx, as published in secdev/scapy
# test/contrib/roce.uts. The last four bytes are the hardware's ICRC.
CX4LX_CNP_HEX = (
    "e41d2dab2bc27cfe90643b32080045c2003c718c400040119161"
    "0a0011010a0012010000" "12b700280000" "8100ffff40000118"
    "000000000000000000000000000000000000000082fd002a"
)


def self_test():
    frame = bytes.fromhex(CX4LX_CNP_HEX)
    ok, stored, computed = verify_rocev2_icrc(frame)
    assert ok, "ICRC self-test failed: stored %s computed %s" % (stored, computed)
    # CRC-32C check value from RFC 3720 appendix B.4 (32 bytes of zeros)
    assert struct.pack("<I", crc32c(bytes(32))) == bytes.fromhex("aa36918a"), "crc32c"
    for fr, _ in rc_conversation():
        assert verify_rocev2_icrc(fr)[0]
    return "ICRC matches ConnectX-4 Lx capture (%s); CRC32C check value ok" % stored


# Wireshark's RPC-over-RDMA heuristics run on every IB/iWARP Send payload and
# throw "Malformed Packet: RPCoRDMA" on payloads shorter than their header
# (seen with tshark 4.0). They are not about our bytes, so switch them off.
TSHARK_OPTS = ["--disable-heuristic", "rpcrdma_infiniband",
               "--disable-heuristic", "rpcrdma_iwarp"]


def tshark_run(pcap, args):
    cmd = ["tshark", "-n", "-r", pcap] + TSHARK_OPTS + list(args)
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError("tshark failed: %s" % res.stderr.strip())
    return res.stdout


def tshark_fields(pcap, fields, extra=()):
    cmd = ["tshark", "-n", "-r", pcap] + TSHARK_OPTS + ["-T", "fields", "-E", "separator=|"]
    cmd += list(extra)
    for fld in fields:
        cmd += ["-e", fld]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError("tshark failed: %s" % res.stderr.strip())
    return [line.split("|") for line in res.stdout.splitlines()]


def tshark_problems(pcap):
    """Frames that are malformed or carry an expert item of severity warn/error."""
    rows = tshark_fields(pcap, ["frame.number", "_ws.expert.severity",
                                "_ws.expert.message", "_ws.malformed"])
    bad = []
    for num, sev, msg, mal in rows:
        sevs = [int(s, 0) for s in sev.split(",") if s]
        # expert severities: chat 0x200000, note 0x400000, warn 0x600000, error 0x800000
        if mal or any(s >= 0x600000 for s in sevs):
            bad.append((num, sev, msg, mal))
    return bad


def check_with_tshark(outdir, expected):
    if not shutil.which("tshark"):
        print("tshark not installed; skipping decode check")
        return True
    ok = True
    rc = os.path.join(outdir, "rocev2_rc.pcap")
    rows = tshark_fields(rc, ["frame.number", "frame.protocols", "infiniband.bth.opcode",
                              "infiniband.bth.psn", "_ws.col.Info"])
    for row, exp in zip(rows, expected):
        num, protos, opc, psn, info = row
        good = "infiniband" in protos and opc and int(opc, 0) == exp
        print("  frame %-2s %-4s psn=%-4s %s" % (num, "ok" if good else "BAD", psn, info.strip()))
        ok &= bool(good)
    if len(rows) != len(expected):
        print("frame count mismatch: %d vs %d" % (len(rows), len(expected)))
        ok = False
    for name in ("rocev2_rc.pcap", "rocev2_send_only.pcap", "rocev2_cnp.pcap",
                 "rocev2_bad_icrc.pcap", "iwarp_mpa.pcap", "iwarp_mpa_nocrc.pcap"):
        probs = tshark_problems(os.path.join(outdir, name))
        print("%-24s malformed / expert warn+error: %s" % (name, probs or "none"))
        ok &= not probs
    # A corrupted ICRC decodes exactly like a good one: Wireshark does not check it.
    bad_txt = tshark_run(os.path.join(outdir, "rocev2_bad_icrc.pcap"), ["-V"])
    print("tshark notices a corrupted RoCEv2 ICRC: %s" % (
        "yes" if re.search(r"(?i)(bad|incorrect|wrong).*crc", bad_txt) else
        "no (only displays it; use --verify-icrc)"))
    # MPA: every FPDU must show "Good CRC32"; the byte-swapped capture must not.
    # (with CRC off, as siw negotiates by default, the field is zero and unchecked)
    for name, want in (("iwarp_mpa.pcap", "Good"), ("iwarp_mpa_bad_crc.pcap", "Bad"),
                       ("iwarp_mpa_nocrc.pcap", None)):
        txt = tshark_run(os.path.join(outdir, name), ["-V"])
        verdicts = re.findall(r"CRC check: 0x[0-9a-f]+ \((Good|Bad) CRC32", txt)
        ops = re.findall(r"OpCode: ([A-Za-z ]+) \(0x", txt)
        print("%-24s MPA CRC verdicts %s, RDMAP opcodes %s" % (name, verdicts, ops))
        if want is None:
            ok &= not verdicts
        elif len(verdicts) != 4 or any(v != want for v in verdicts):
            ok = False
        if ops != ["Send", "Write", "Read Request", "Read Response"]:
            ok = False
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    ap.add_argument("--check", action="store_true", help="decode the pcaps with tshark")
    ap.add_argument("--verify-icrc", metavar="PCAP", help="check the ICRC of every RoCEv2 frame")
    ap.add_argument("--quiet", action="store_true", help="with --verify-icrc: print only bad frames")
    args = ap.parse_args()

    if args.verify_icrc:
        bad = seen = 0
        for i, fr in enumerate(read_pcap(args.verify_icrc), 1):
            r = verify_rocev2_icrc(fr)
            if r is None:
                continue
            seen += 1
            if not args.quiet or not r[0]:
                print("frame %d: %s stored=%s computed=%s" % (i, "ok " if r[0] else "BAD", r[1], r[2]))
            bad += 0 if r[0] else 1
        # SoftNDK: a summary line, and a capture without any RoCEv2 frame is an error
        # (an empty capture must not pass as "every ICRC verified").
        print("verified %d/%d RoCEv2 frames" % (seen - bad, seen))
        if seen == 0:
            return 2
        return 1 if bad else 0

    print(self_test())
    os.makedirs(args.out, exist_ok=True)
    conv = rc_conversation()
    write_pcap(os.path.join(args.out, "rocev2_rc.pcap"), [f for f, _ in conv])
    write_pcap(os.path.join(args.out, "rocev2_send_only.pcap"), [conv[0][0]])
    write_pcap(os.path.join(args.out, "rocev2_cnp.pcap"), [cnp_frame()])
    write_pcap(os.path.join(args.out, "rocev2_bad_icrc.pcap"),
               [rocev2_frame(A, B, "RC", "SEND_ONLY", 100, b"hello rnic", ackreq=True,
                             sport=0xC011, bad_icrc=True)])
    write_pcap(os.path.join(args.out, "iwarp_mpa.pcap"), iwarp_conversation())
    write_pcap(os.path.join(args.out, "iwarp_mpa_bad_crc.pcap"), iwarp_conversation(crc_le=False))
    write_pcap(os.path.join(args.out, "iwarp_mpa_nocrc.pcap"), iwarp_conversation(crc_on=False))
    print("wrote pcaps to %s" % args.out)
    if args.check:
        ok = check_with_tshark(args.out, [o for _, o in conv])
        print("tshark check: %s" % ("PASS" if ok else "FAIL"))
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
