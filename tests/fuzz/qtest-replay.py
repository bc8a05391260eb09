#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Replay qtest commands (one per line, as in a QEMU fuzz reproducer) into
'QEMU -qtest stdio', one at a time: each command waits for its answer, so
bottom halves run between commands as they do under the fuzzer.

Usage: qtest-replay.py [--timeout S] COMMANDS-FILE -- QEMU ARGS...
Exit status: 0 when every command was answered and QEMU still runs a
second later, 3 when QEMU stopped answering within the timeout (a hang),
4 when QEMU died.
"""
import argparse
import select
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("commands")
    ap.add_argument("qemu", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    qemu = a.qemu[1:] if a.qemu[:1] == ["--"] else a.qemu
    cmds = [c.strip() for c in open(a.commands) if c.strip()
            and not c.startswith("#")]
    p = subprocess.Popen(qemu + ["-qtest", "stdio", "-qtest-log", "none"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         bufsize=0)
    buf = b""
    for n, c in enumerate(cmds, 1):
        p.stdin.write(c.encode() + b"\n")
        deadline = time.monotonic() + a.timeout
        while True:
            if b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.startswith(b"IRQ"):
                    continue
                if a.verbose:
                    print("%s -> %s" % (c[:60], line.decode()))
                break
            left = deadline - time.monotonic()
            r, _, _ = select.select([p.stdout], [], [], max(left, 0))
            if not r:
                print("HANG: no answer to command %d within %gs: %s"
                      % (n, a.timeout, c[:80]))
                p.kill()
                return 3
            d = p.stdout.read1(4096) if hasattr(p.stdout, "read1") \
                else p.stdout.read(4096)
            if not d:
                print("DIED at command %d (status %s): %s"
                      % (n, p.wait(), c[:80]))
                return 4
            buf += d
    # Work that the last command scheduled (bottom halves) may still crash
    try:
        st = p.wait(timeout=1)
        print("DIED after the last command (status %s)" % st)
        return 4
    except subprocess.TimeoutExpired:
        pass
    p.stdin.close()
    p.kill()
    p.wait()
    print("OK: %d commands answered" % len(cmds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
