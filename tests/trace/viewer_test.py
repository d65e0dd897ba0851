#!/usr/bin/env python3
"""viewer_test.py SOFTNDK ARTIFACT_DIR PROGRAM [ARGS...]

The teaching viewer (`softndk trace --html`) in headless Chromium. Runs PROGRAM with
SOFTNDK_TRACE, writes the page, and checks what the page's script computed against the
text listing of the same trace (`softndk trace --format text`), at two steps:
  - the first transmitted packet: one packet sent, one in flight, and the SQ of its QP
    shows the producer index of that QP's last post before it;
  - the last event: every packet sent, none in flight, every CQE written.
The page must be self-contained (no URL it would fetch). A screenshot of the first
packet's step is kept in ARTIFACT_DIR/trace-viewer.png.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile


def fail(message):
    print(f"viewer_test: {message}", file=sys.stderr)
    sys.exit(1)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    fail("Chromium is not installed (scripts/install-deps.sh installs Debian's chromium)")


def browser(page, step, extra):
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start. The page
    # needs no network; virtual time lets its script finish before the DOM is dumped.
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--virtual-time-budget=5000", *extra, f"file://{page}#step={step}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        fail(f"chromium exited {result.returncode}: {result.stderr[-2000:]}")
    return result.stdout


def summary(dom):
    m = re.search(r'<div id="summary"[^>]*>(.*?)</div>', dom)
    if not m:
        fail("the page rendered no summary (its script did not run?)")
    attrs = dict(re.findall(r'data-(\w+)="(\d+)"', m.group(0)))
    return {k: int(v) for k, v in attrs.items()}


def main():
    softndk, artifacts, program = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory(prefix="softndk-viewer-") as work:
        trace = os.path.join(work, "run.trace")
        env = dict(os.environ, SOFTNDK_TRACE=trace, SOFTNDK_MODE="embedded")
        run = subprocess.run(program, env=env, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            fail(f"{program[0]} exited {run.returncode}: {run.stderr[-2000:]}")
        listing = subprocess.run([softndk, "trace", trace, "--format", "text"],
                                 capture_output=True, text=True, check=True).stdout
        page = os.path.join(work, "run.html")
        subprocess.run([softndk, "trace", trace, "--html", page], check=True)

        html = open(page, encoding="utf-8").read()
        fetched = re.findall(r'(?:src|href)\s*=\s*"(?!#)[^"]+"', html)
        if fetched or "<link" in html:
            fail(f"the page is not self-contained: {fetched}")

        # The listing: a header, then one line per event in the page's order.
        line_re = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(qp \d+|-)\s+(\S+)\s+(.*)$")
        events = []
        for line in listing.splitlines()[1:]:
            m = line_re.match(line)
            if not m:
                fail(f"unexpected listing line: {line!r}")
            events.append(m.groups())
        if len(events) < 20:
            fail(f"the trace has only {len(events)} events")
        kinds = [e[2] for e in events]
        first_tx = kinds.index("packet_tx")
        tx_qp = events[first_tx][3].split()[1]  # "qp 2"
        post_pi = None
        for e in events[:first_tx]:
            m = re.match(r"(\S+) \(provider\) pi (\d+)/\d+", e[5])
            if e[2] == "post" and e[3] == f"qp {tx_qp}" and m and m.group(1) != "RECV":
                post_pi = int(m.group(2))
        if post_pi is None:
            fail(f"no send post on qp {tx_qp} before the first packet")

        at_tx = browser(page, first_tx, ["--dump-dom"])
        got = summary(at_tx)
        want = {"step": first_tx, "sent": 1, "inflight": 1}
        for key, value in want.items():
            if got.get(key) != value:
                fail(f"at the first packet (event {first_tx}) the page shows {key} = "
                     f"{got.get(key)}, the listing says {value}")
        sq = re.search(r'data-qp="\d+:%s">.*?data-ring="SQ" data-pi="(\d+)" data-ci="(\d+)"'
                       % tx_qp, at_tx, re.S)
        if not sq or int(sq.group(1)) != post_pi:
            fail(f"qp {tx_qp}'s SQ shows pi {sq and sq.group(1)}, the listing's last post "
                 f"says {post_pi}")
        if int(sq.group(2)) > post_pi:
            fail(f"qp {tx_qp}'s SQ consumer index {sq.group(2)} passed its producer {post_pi}")

        last = len(events) - 1
        got = summary(browser(page, last, ["--dump-dom"]))
        want = {"step": last, "sent": kinds.count("packet_tx"), "inflight": 0,
                "cqes": kinds.count("cqe"), "dropped": kinds.count("packet_drop")}
        for key, value in want.items():
            if got.get(key) != value:
                fail(f"at the last event the page shows {key} = {got.get(key)}, "
                     f"the listing says {value}")

        os.makedirs(artifacts, exist_ok=True)
        shot = os.path.join(artifacts, "trace-viewer.png")
        if os.path.exists(shot):
            os.remove(shot)
        browser(page, first_tx, ["--window-size=1400,1000", f"--screenshot={shot}"])
        with open(shot, "rb") as f:
            head = f.read(24)
        if head[:8] != b"\x89PNG\r\n\x1a\n":
            fail(f"{shot} is not a PNG")
        width, height = struct.unpack(">II", head[16:24])
        if (width, height) != (1400, 1000) or os.path.getsize(shot) < 20000:
            fail(f"{shot}: {width}x{height}, {os.path.getsize(shot)} bytes: nothing rendered?")
        print(f"viewer_test: {len(events)} events; at event {first_tx} one packet in flight and "
              f"qp {tx_qp}'s SQ at pi {post_pi}; at the end {want['sent']} packets and "
              f"{want['cqes']} CQEs; screenshot {shot}")


if __name__ == "__main__":
    main()
