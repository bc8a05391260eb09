#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The step barrier of the verbs suite's two guests (tests/verbs/run), over
the TCP side channel: the server node tells the client node, step by step,
whether its server program is up.

  vsync.py send HOST PORT LINE [SECS]   connect (retrying up to SECS s,
                                        default 120), send LINE, close
  vsync.py recv PORT [SECS]             accept one connection (up to SECS s,
                                        default 300), print its line
Exit status 0 when the line went through, 1 otherwise.
"""
import socket
import sys
import time


def send(host, port, line, secs):
    end = time.monotonic() + secs
    while True:
        try:
            with socket.create_connection((host, port), timeout=5) as s:
                s.sendall(line.encode() + b'\n')
                return 0
        except OSError as e:
            if time.monotonic() > end:
                print('vsync: send to %s:%d: %s' % (host, port, e), file=sys.stderr)
                return 1
            time.sleep(0.2)


def recv(port, secs):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('', port))
    ls.listen(1)
    ls.settimeout(secs)
    try:
        c, _ = ls.accept()
    except socket.timeout:
        print('vsync: nothing on port %d within %d s' % (port, secs), file=sys.stderr)
        return 1
    c.settimeout(30)
    data = b''
    while not data.endswith(b'\n'):
        chunk = c.recv(256)
        if not chunk:
            break
        data += chunk
    print(data.decode(errors='replace').strip())
    return 0


def main(argv):
    if len(argv) >= 4 and argv[0] == 'send':
        return send(argv[1], int(argv[2]), argv[3], int(argv[4]) if len(argv) > 4 else 120)
    if len(argv) >= 2 and argv[0] == 'recv':
        return recv(int(argv[1]), int(argv[2]) if len(argv) > 2 else 300)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
