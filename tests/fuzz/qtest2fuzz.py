#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn the qtest traffic of a test into a generic-fuzz input (a seed).

generic-fuzz (tests/qtest/fuzz/generic_fuzz.c) has no "write guest RAM"
operation: guest memory is filled only when a device reads it, from the
DMA patterns the input declares, the n-th fill of an operation taking the
n-th pattern.  So the converter

  * keeps the trace's MMIO writes to the fuzzed regions (the SMMU, the
    PLDMA) as OP_WRITE, its clock steps as OP_CLOCK_STEP, its "frame HEX"
    lines (not qtest's: net-seeds.py writes them) as OP_NET_RECEIVE with
    the checksums filled in, and drops RAM writes, reads and everything
    else;
  * replays RAM writes (memset, write, writeX to RAM) into an image of
    guest memory;
  * before each MMIO write, declares one pattern per DMA read that write
    causes, holding the image's bytes at that address, so that the SMMU
    reads the test's stream table, CDs, page tables and commands, and the
    PLDMA its descriptors and data.

Which reads an operation causes, in which order, is learnt from the fuzzer
itself (--fit): run the input with QTEST_LOG=1 FUZZ_SERIALIZE_QTEST=1, read
back the "[DMA]" fills, declare them, and repeat until the fills no longer
change.

Usage:
  qtest2fuzz.py [--fit FUZZER] --config NAME TRACE OUT
TRACE is a QTEST_LOG log of one QEMU ("[R +t] cmd" lines) or plain qtest
commands, one per line.
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile

SEP = b"FUZZ"
OP_READ, OP_WRITE = 2, 3
OP_ADD_DMA_PATTERN, OP_CLEAR_DMA_PATTERNS, OP_CLOCK_STEP = 7, 8, 9
OP_NET_RECEIVE, NET_FILL_CHECKSUMS = 10, 0x01
SIZES = {"b": 0, "w": 1, "l": 2, "q": 3}

RAM_BASE, RAM_SIZE = 0x40000000, 512 << 20
SMMU = (0x09050000, 0x20000)
PLDMA = (0x0C000000, 0x5000)        # 1 + 4 channel pages
# Fuzzed MMIO regions in flat-view (address) order: generic-fuzz's "base"
CONFIGS = {
    "pldma-smmuv3-stall": [SMMU, PLDMA],
    "pldma-smmuv3-report": [SMMU, PLDMA],
    "pldma": [PLDMA],
}


class Image:
    """Sparse image of guest RAM, by 4 KiB page"""

    def __init__(self):
        self.pages = {}

    def write(self, addr, data):
        off = 0
        while off < len(data):
            a = addr + off
            page, po = a & ~0xFFF, a & 0xFFF
            n = min(len(data) - off, 0x1000 - po)
            p = self.pages.setdefault(page, bytearray(0x1000))
            p[po:po + n] = data[off:off + n]
            off += n

    def read(self, addr, length):
        out = bytearray()
        while len(out) < length:
            a = addr + len(out)
            page, po = a & ~0xFFF, a & 0xFFF
            n = min(length - len(out), 0x1000 - po)
            p = self.pages.get(page)
            out += p[po:po + n] if p else bytes(n)
        return bytes(out)


def in_ram(addr):
    return RAM_BASE <= addr < RAM_BASE + RAM_SIZE


def parse_trace(path):
    """The qtest commands of a trace, in order"""
    cmds = []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^\[R \+[0-9.]+\] (.*)$", line)
        if m:
            cmds.append(m.group(1))
        elif re.match(r"^[a-z_]+( |$)", line) and not line.startswith("["):
            cmds.append(line)
    return cmds


def parse_cmd(c):
    """(name, words) with the numbers checked, or None if not ours"""
    w = c.split()
    name = w[0]
    if name in ("memset", "write") or re.match(r"^(write|read)[bwlq]$", name):
        for x in w[1:4 if name == "memset" else 3]:
            int(x, 0)
        if name == "write" and len(w) > 3:
            bytes.fromhex(w[3][2:])
        return name, w
    if name == "clock_step":
        return name, w
    if name == "frame":
        bytes.fromhex(w[1][2:])
        return name, w
    return None


def build_ops(cmds, regions, keep_reads=False):
    """[(kind, payload, logname, ram_writes_before)]: the operations of the
    seed, each with the RAM writes that precede it"""
    ops, pending = [], []

    def region(addr):
        for i, (base, size) in enumerate(regions):
            if base <= addr < base + size:
                return i, addr - base
        return None

    for c in cmds:
        try:
            op = parse_cmd(c)
        except (ValueError, IndexError):
            # a line the test's own output cut into
            print("warning: skipped %r" % c[:60], file=sys.stderr)
            continue
        if op is None:
            continue
        name, w = op
        if name == "memset":
            addr, n, v = int(w[1], 0), int(w[2], 0), int(w[3], 0)
            if in_ram(addr):
                pending.append((addr, bytes([v]) * n))
        elif name == "write":
            addr, n = int(w[1], 0), int(w[2], 0)
            data = bytes.fromhex(w[3][2:]) if len(w) > 3 else b""
            data = data[:n] + bytes(max(0, n - len(data)))
            if in_ram(addr):
                pending.append((addr, data))
        elif re.match(r"^write[bwlq]$", name):
            addr, val = int(w[1], 0), int(w[2], 0)
            sz = SIZES[name[-1]]
            if in_ram(addr):
                pending.append((addr, val.to_bytes(1 << sz, "little")))
                continue
            r = region(addr)
            if r is None:
                continue
            payload = struct.pack("<BBBxxIQ", OP_WRITE, sz, r[0], r[1], val)
            ops.append(("mmio", payload, (name, addr), pending))
            pending = []
        elif re.match(r"^read[bwlq]$", name) and keep_reads:
            addr = int(w[1], 0)
            r = region(addr)
            if r is None:
                continue
            payload = struct.pack("<BBBxxI", OP_READ, SIZES[name[-1]], r[0],
                                  r[1])
            ops.append(("mmio", payload, (name, addr), pending))
            pending = []
        elif name == "clock_step":
            ops.append(("clock", bytes([OP_CLOCK_STEP]), ("clock_step", None),
                        pending))
            pending = []
        elif name == "frame":
            payload = bytes([OP_NET_RECEIVE, NET_FILL_CHECKSUMS])
            payload += bytes.fromhex(w[1][2:])
            ops.append(("frame", payload, ("frame", None), pending))
            pending = []
    return ops


# A pattern repeats over the whole read; data buffers (pages of a COPY)
# keep only their first PATTERN_MAX bytes, tables (8-64 bytes) are exact.
PATTERN_MAX = 256


def shorten(data):
    """The shortest prefix of @data that repeats into @data, capped"""
    n = len(data)
    for p in range(1, min(n, PATTERN_MAX) + 1):
        unit = data[:p]
        if (unit * (n // p + 1))[:n] == data:
            return unit
    return data[:PATTERN_MAX]


def encode(ops, fills, probe):
    """The fuzz input: per op, its patterns (the image at its fills), then
    the op.  With @probe, every op also gets a last, zero pattern (and so
    a CLEAR), so that any read it does is logged."""
    img = Image()
    out = []
    had_patterns = False
    for i, (kind, payload, _, writes) in enumerate(ops):
        for addr, data in writes:
            img.write(addr, data)
        pats = [shorten(img.read(a, n)) for a, n in fills.get(i, [])]
        if probe:
            pats.append(bytes(8))
        if pats or had_patterns:
            out.append(bytes([OP_CLEAR_DMA_PATTERNS]))
        for p in pats:
            out.append(bytes([OP_ADD_DMA_PATTERN, 0, 0]) + p)
        had_patterns = bool(pats)
        out.append(payload)
    for o in out:
        if SEP in o:
            print("warning: an operation contains the separator %r and will "
                  "be split" % SEP, file=sys.stderr)
    return SEP.join(out)


def run_logged(fuzzer, target, data, timeout):
    """Run one input with the qtest log on; return the log (stderr)"""
    with tempfile.NamedTemporaryFile(suffix=".seed", delete=False) as f:
        f.write(data)
        name = f.name
    env = dict(os.environ, QTEST_LOG="1", FUZZ_SERIALIZE_QTEST="1",
               ASAN_OPTIONS="detect_leaks=0")
    try:
        p = subprocess.run([fuzzer, "--fuzz-target=generic-fuzz-" + target,
                            "-timeout=%d" % timeout, "-detect_leaks=0", name],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env=env, timeout=timeout * 4)
        return p.stderr.decode(errors="replace")
    finally:
        os.unlink(name)


OPLINE = re.compile(r"^(?:\[R \+[0-9.]+\] (write[bwlq]|read[bwlq]|clock_step)"
                    r"(?: (0x[0-9a-f]+))?|\[NET\] (frame) [0-9]+)")
DMATAG = re.compile(r"^\[DMA\] (?:\[DOUBLE-FETCH\] )?")
FILLLINE = re.compile(r"^\[R \+[0-9.]+\] write (0x[0-9a-f]+) (0x[0-9a-f]+)")


def parse_fills(log, ops):
    """{op index: [(addr, len)]} from a logged run"""
    fills, cur, dma = {}, -1, False
    for line in log.splitlines():
        # "[DMA] " precedes the qtest log line of the fill, not always on
        # the same line (GLib may warn in between)
        m = DMATAG.match(line)
        if m:
            dma = True
            line = line[m.end():]
        m = FILLLINE.match(line)
        if m and dma:
            dma = False
            if cur >= 0:
                fills.setdefault(cur, []).append((int(m.group(1), 0),
                                                  int(m.group(2), 0)))
            continue
        m = OPLINE.match(line)
        if not m:
            continue
        name = m.group(1) or m.group(3)
        addr = int(m.group(2), 0) if m.group(2) else None
        # the next op of ours that this line is
        j = cur + 1
        if j < len(ops) and ops[j][2][0] == name and ops[j][2][1] == addr:
            cur = j
    return fills, cur + 1


def fit(ops, fuzzer, target, max_passes, timeout, verbose):
    fills = {}
    for n in range(1, max_passes + 1):
        data = encode(ops, fills, probe=True)
        log = run_logged(fuzzer, target, data, timeout)
        new, seen = parse_fills(log, ops)
        if verbose:
            print("  pass %d: %d/%d ops ran, %d fills" %
                  (n, seen, len(ops), sum(len(v) for v in new.values())),
                  file=sys.stderr)
        if new == fills:
            return fills, n, seen
        fills = new
    return fills, -max_passes, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, choices=sorted(CONFIGS))
    ap.add_argument("--fit", metavar="FUZZER",
                    help="qemu-fuzz-aarch64 to learn the DMA reads with")
    ap.add_argument("--passes", type=int, default=40)
    ap.add_argument("--timeout", type=int, default=20)
    ap.add_argument("--keep-reads", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("trace")
    ap.add_argument("out")
    a = ap.parse_args()
    ops = build_ops(parse_trace(a.trace), CONFIGS[a.config], a.keep_reads)
    if not ops:
        sys.exit("%s: no operation on the fuzzed regions" % a.trace)
    fills = {}
    if a.fit:
        fills, passes, seen = fit(ops, a.fit, a.config, a.passes, a.timeout,
                                  a.verbose)
        print("%s: %d ops, %d DMA patterns, %s after %d passes%s" %
              (os.path.basename(a.out), len(ops),
               sum(len(v) for v in fills.values()),
               "fitted" if passes > 0 else "NOT converged", abs(passes),
               "" if seen == len(ops) else
               " (only %d ops ran)" % seen))
    data = encode(ops, fills, probe=False)
    with open(a.out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
