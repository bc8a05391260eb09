# SPDX-License-Identifier: GPL-2.0-or-later
"""One harness for the host-side suites that boot guests.

The pieces, each usable on its own:

  Tap        TAP output: numbered ok/not ok, diagnostics, SKIP, a guest's
             TAP lines relayed and renumbered, one plan at the end.
  Console    a guest's console: read, expect a regular expression with a
             timeout, input, and a log file; one Console may span several
             QEMU instances (a migration restores into a new QEMU).
  QMP        a QMP client over a unix socket: commands, events, HMP.
  Qemu       one QEMU process: its console (stdout, read by a thread), its
             stderr, its QMP monitor, its exit status, cleanup.
  Node       a guest described by what it is, not how it is started: the
             kernel and architecture, the guest test or script it runs,
             its devices, kernel command line and links.  Node.command()
             asks scripts/run-guest --print-cmd for the QEMU command line.
  StreamLink a -netdev stream between two nodes over a unix socket (one
             end listens, the other connects and reconnects);
  VdeSwitch  a vde_switch (Debian's vde2) that any number of nodes join
             with -netdev vde.
  Cluster    nodes and links together: the listening ends start first,
             every node is bounded by its timeout, every process (QEMU,
             switch) is ended on the way out, and each node's outcome is
             judged as scripts/run-guest --test judges it (the status the
             guest printed against QEMU's exit code, a panic, a timeout).

Standard library only (Python 3.9+): the tests run where QEMU's own python
packages are not installed, and a few blocking sockets are all that QMP
needs here.
"""

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_GUEST = os.path.join(TOP, 'scripts', 'run-guest')
# the architectures scripts/run-guest boots (its QEMU binary and machine)
ARCHES = ('aarch64', 'x86_64')


class Fail(Exception):
    """A step of a test failed; the message says which and why."""


class Timeout(Fail):
    """Something did not answer in time (QMP, a console marker)."""


class Deadline:
    """A bound for a whole test."""

    def __init__(self, secs):
        self.end = time.monotonic() + secs

    def left(self, cap=None):
        left = self.end - time.monotonic()
        if left <= 0:
            raise Fail('the whole test ran out of time')
        return left if cap is None else min(left, cap)


# ---------------------------------------------------------------- TAP

class Tap:
    """TAP (version 12, plan at the end): results numbered in order."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.n = 0
        self.failed = 0

    def _print(self, line):
        print(line, file=self.out, flush=True)

    def ok(self, cond, desc, diag=None):
        """One result; diag (a string) follows it as diagnostics."""
        self.n += 1
        if not cond:
            self.failed += 1
        self._print('%s %d - %s' % ('ok' if cond else 'not ok', self.n, desc))
        if diag:
            self.diag(diag)
        return bool(cond)

    def skip(self, desc, why):
        self.n += 1
        self._print('ok %d - %s # SKIP %s' % (self.n, desc, why))

    def diag(self, text):
        for line in str(text).splitlines() or ['']:
            self._print('# ' + line)

    def relay(self, lines, numbered=True):
        """A guest's TAP: its results renumbered into ours (unnumbered
        "ok - X" always, "ok N - X" too if numbered), its "# " lines as
        they are; its plan and anything else dropped."""
        for line in lines:
            line = line.rstrip('\r\n')
            if line.startswith('# '):
                self._print(line)
                continue
            if not (line.startswith('ok ') or line.startswith('not ok ')):
                continue
            m = re.match(r'^(ok|not ok) (\d+ )?- (.*)$', line)
            if not m or (m.group(2) and not numbered):
                continue
            self.ok(m.group(1) == 'ok', m.group(3))

    def plan(self):
        self._print('1..%d' % self.n)

    def status(self):
        return 1 if self.failed else 0


# ---------------------------------------------------------------- console


class Console:
    """A guest's console output as lines, also written to a log file
    (carriage returns dropped)."""

    def __init__(self, path, note_prefix='harness'):
        self.cond = threading.Condition()
        self.lines = []
        self.partial = ''
        self.path = path
        self.prefix = note_prefix
        self.f = open(path, 'w', encoding='utf-8', errors='replace')
        self.cursor = 0

    def feed(self, data):
        text = data.decode('utf-8', errors='replace').replace('\r', '')
        with self.cond:
            self.f.write(text)
            self.f.flush()
            text = self.partial + text
            *done, self.partial = text.split('\n')
            self.lines.extend(done)
            self.cond.notify_all()

    def flush_partial(self):
        """The last line, if the guest ended without a newline."""
        with self.cond:
            if self.partial:
                self.lines.append(self.partial)
                self.partial = ''
            self.cond.notify_all()

    def note(self, text):
        """A line of the harness's own in the console log."""
        with self.cond:
            self.f.write(('\n' if self.partial else '') + '[%s] %s\n' % (self.prefix, text))
            self.f.flush()

    def text(self):
        with self.cond:
            return '\n'.join(self.lines + ([self.partial] if self.partial else []))

    def find(self, regex, start=0):
        rx = re.compile(regex)
        with self.cond:
            return any(rx.search(line) for line in self.lines[start:])

    def wait(self, regex, start, timeout, alive):
        """First line from index start matching regex: (index, match), or
        (None, None) after timeout s or once alive() is false and every
        line has been read."""
        rx = re.compile(regex)
        end = time.monotonic() + timeout
        i = start
        with self.cond:
            while True:
                while i < len(self.lines):
                    m = rx.search(self.lines[i])
                    if m:
                        return i, m
                    i += 1
                if not alive():
                    # the reader may still hand over the last lines
                    self.cond.wait(0.5)
                    if i >= len(self.lines):
                        return None, None
                    continue
                left = end - time.monotonic()
                if left <= 0:
                    return None, None
                self.cond.wait(min(left, 0.5))

    def expect(self, regex, timeout, alive=lambda: True, what=None):
        """The next line (after the last one expect() matched) that matches
        regex: its match; Fail after timeout s or when alive() says the
        guest is gone."""
        i, m = self.wait(regex, self.cursor, timeout, alive)
        if m is None:
            raise Timeout('%s: not seen within %.0f s%s' % (
                what or regex, timeout, '' if alive() else ' (the guest is gone)'))
        self.cursor = i + 1
        return m

    def tail(self, n):
        with self.cond:
            return self.lines[-n:]

    def close(self):
        self.flush_partial()
        self.f.close()


# ---------------------------------------------------------------- QMP


class QMP:
    """A QMP client on a unix socket: connects (waiting for the socket up to
    timeout), reads the greeting, negotiates capabilities."""

    def __init__(self, path, timeout):
        end = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > end:
                    raise Fail('no QMP socket at %s' % path)
                time.sleep(0.05)
        self.buf = b''
        self.id = 0
        self.events = []
        self.eof = False
        greeting = self._recv(timeout)
        if 'QMP' not in greeting:
            raise Fail('QMP: not a greeting: %s' % json.dumps(greeting))
        self.cmd('qmp_capabilities')

    def _recv(self, timeout, eof_ok=False):
        """The next message; None after timeout s if eof_ok (or at the end of
        the connection), else Fail."""
        end = time.monotonic() + timeout
        while b'\n' not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                if eof_ok:
                    return None
                raise Timeout('QMP: no answer within %.0f s' % timeout)
            self.s.settimeout(left)
            try:
                data = self.s.recv(65536)
            except socket.timeout:
                continue
            except OSError as e:
                if eof_ok:
                    self.eof = True
                    return None
                raise Fail('QMP: %s' % e)
            if not data:
                self.eof = True
                if eof_ok:
                    return None
                raise Fail('QMP: connection closed (QEMU exited?)')
            self.buf += data
        line, self.buf = self.buf.split(b'\n', 1)
        if not line.strip():
            return self._recv(max(end - time.monotonic(), 0.01), eof_ok)
        return json.loads(line)

    def cmd(self, name, timeout=30, **args):
        """Run a command: its return value; Fail on an error answer."""
        r = self.request(name, args, timeout)
        if 'error' in r:
            raise Fail('QMP %s: %s' % (name, r['error'].get('desc')))
        return r.get('return')

    def request(self, name, args=None, timeout=30):
        """Run a command with the arguments args (a dict): its whole answer
        ({"return": ...} or {"error": ...}); events that come first are
        kept in self.events."""
        self.id += 1
        msg = {'execute': name, 'id': self.id}
        if args:
            msg['arguments'] = args
        try:
            self.s.sendall(json.dumps(msg).encode() + b'\n')
        except OSError as e:
            raise Fail('QMP %s: %s' % (name, e))
        while True:
            r = self._recv(timeout)
            if 'event' in r:
                self.events.append(r)
                continue
            if r.get('id') != self.id:
                continue
            return r

    def hmp(self, line):
        return self.cmd('human-monitor-command', **{'command-line': line})

    def drain(self, idle=1.0):
        """Collect events until none came for idle s, or QEMU closed the
        connection (it quits at the end of a guest test)."""
        while not self.eof:
            r = self._recv(idle, eof_ok=True)
            if r is None:
                break
            if 'event' in r:
                self.events.append(r)
        return self.events

    def event_seen(self, name, **data):
        return any(e.get('event') == name and
                   all(e.get('data', {}).get(k) == v for k, v in data.items())
                   for e in self.events)

    def close(self):
        self.s.close()


# ---------------------------------------------------------------- QEMU


class Qemu:
    """One QEMU process.  Its stdout (the serial console) goes to console, a
    Console; its stderr to console too (as scripts/run-guest --test does)
    or, with errpath, to that file.  With qmp (a socket path) a QMP monitor
    is added (-qmp ... server=on,wait=off) and connect_qmp() talks to it."""

    def __init__(self, argv, console, name='qemu', errpath=None, qmp=None,
                 stdin=False, env=None):
        self.name = name
        self.console = console
        self.errpath = errpath
        self.qmp_path = qmp
        self.qmp = None
        if qmp:
            argv = argv + ['-qmp', 'unix:%s,server=on,wait=off' % qmp]
        self.argv = argv
        self.err = open(errpath, 'w') if errpath else None
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                  stdout=subprocess.PIPE,
                                  stderr=self.err if self.err else subprocess.STDOUT,
                                  start_new_session=True, env=env)
        self.t0 = time.monotonic()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        fd = self.p.stdout.fileno()
        while True:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            self.console.feed(data)

    def connect_qmp(self, timeout):
        try:
            self.qmp = QMP(self.qmp_path, timeout)
        except Fail as e:
            raise Fail('%s: %s%s' % (self.name, e, self.stderr_tail()))
        return self.qmp

    def alive(self):
        return self.p.poll() is None

    def stderr_tail(self):
        if not self.err:
            return ''
        self.err.flush()
        try:
            with open(self.errpath, errors='replace') as f:
                tail = f.read()[-600:].strip()
        except OSError:
            return ''
        return (' (QEMU stderr: %s)' % tail.replace('\n', ' | ')) if tail else ''

    def type(self, text):
        """Characters for the guest's console (its serial input)."""
        try:
            self.p.stdin.write(text.encode())
            self.p.stdin.flush()
        except (OSError, AttributeError) as e:
            raise Fail('%s: console input: %s%s' % (self.name, e, self.stderr_tail()))

    def wait_exit(self, timeout):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.alive():
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.p.wait()

    def finish(self):
        """Reap the process and its console reader."""
        self.kill()
        self.reader.join(5)
        if self.qmp:
            self.qmp.close()
            self.qmp = None
        if self.err:
            self.err.close()
            self.err = None


# ---------------------------------------------------------------- nodes and links


class StreamLink:
    """-netdev stream between two nodes over a unix socket: end 0 listens,
    end 1 connects (and reconnects every 200 ms until it can)."""

    def __init__(self, name, path):
        self.name = name
        self.path = path
        self.first = self.second = None     # the listening and the connecting node

    def netdev(self, end, netdev_id):
        if end == 0:
            srv = 'server=on'
        else:
            srv = 'server=off,reconnect-ms=200'
        return 'stream,id=%s,%s,addr.type=unix,addr.path=%s' % (netdev_id, srv, self.path)

    def ready(self):
        return os.path.exists(self.path)


class VdeSwitch:
    """A vde_switch, for any number of nodes (-netdev vde)."""

    def __init__(self, name, directory):
        self.name = name
        self.sock = os.path.join(directory, name)
        self.pidfile = os.path.join(directory, name + '.pid')
        if not shutil.which('vde_switch'):
            raise Fail('vde_switch is not installed (Debian\'s vde2; scripts/install-deps)')
        r = subprocess.run(['vde_switch', '-s', self.sock, '-d', '-p', self.pidfile],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           check=False, timeout=30)
        if r.returncode:
            raise Fail('vde_switch %s did not start: %s' % (name, r.stderr.strip()))
        for _ in range(50):
            if os.path.exists(self.pidfile):
                break
            time.sleep(0.1)

    def netdev(self, end, netdev_id):
        return 'vde,id=%s,sock=%s' % (netdev_id, self.sock)

    def ready(self):
        return True

    def stop(self):
        try:
            with open(self.pidfile) as f:
                pid = int(f.read().strip())
            os.kill(pid, signal.SIGTERM)
            # a daemon, not our child: wait until it is gone (2 s at most)
            for _ in range(20):
                os.kill(pid, 0)
                time.sleep(0.1)
        except (OSError, ValueError):
            pass


class Node:
    """A guest, described by what it is:
      name      its name in results and log files
      test      the guest test or script it runs (guest/tests/NAME.sh or
                guest/scripts/NAME.sh, with its .opts), None for a shell
      kernel    PLDMA_KERNEL syntax: 6.12, 7.1, debug, 7.1-debug (None:
                run-guest's default or the environment's)
      arch      the guest's architecture (ARCHES)
      devices   -device arguments (run-guest --device)
      append    kernel command line additions
      links     [(link, netdev id)], a StreamLink end or a switch port each;
                the netdevs come first among the extra QEMU arguments
      qemu_args further QEMU arguments, after the netdevs
      options   further scripts/run-guest options (e.g. --no-build, --trace)
      mem, smp, timeout (s; run-guest's default: 300, 1200 on a debug
                kernel), qmp (True: a QMP monitor), log (console log path)
      argv      a command line of its own instead of run-guest's (a QEMU
                run-guest does not know, or a stand-in in the harness's own
                tests); the links' -netdev arguments and qemu_args follow it
    """

    def __init__(self, name, test=None, kernel=None, arch='aarch64', devices=(),
                 append='', links=(), qemu_args=(), options=(), mem=None, smp=None,
                 timeout=None, qmp=False, log=None, incoming=None, argv=None):
        # run-guest options that change how long the node may take (the
        # last one given wins, as in run-guest)
        options = list(options)
        for i, o in enumerate(options[:-1]):
            if o == '--timeout':
                timeout = int(options[i + 1])
            elif o == '--kernel':
                kernel = options[i + 1]
        if '--debug-kernel' in options:
            kernel = (kernel or '6.12') + '-debug'
        if arch not in ARCHES:
            raise Fail('%s: scripts/run-guest boots %s guests, not %s' % (
                name, ' '.join(ARCHES), arch))
        self.name = name
        self.test = test
        self.kernel = kernel
        self.arch = arch
        self.devices = list(devices)
        self.append = append
        self.links = list(links)
        self.qemu_args = list(qemu_args)
        self.options = list(options)
        self.mem = mem
        self.smp = smp
        self.timeout = timeout
        self.qmp = qmp
        self.log = log
        self.incoming = incoming
        self.argv = list(argv) if argv else None
        self.qemu = None
        self.console = None
        self.status = None
        self.reason = None

    def attach(self, link, netdev_id=None):
        self.links.append((link, netdev_id or link.name))

    def debug_kernel(self):
        k = self.kernel or os.environ.get('PLDMA_KERNEL', '')
        return k.endswith('debug')

    def limit(self):
        if self.timeout:
            return self.timeout
        return 1200 if self.debug_kernel() else 300

    def command(self, deadline=None):
        """The QEMU command line, from scripts/run-guest --print-cmd."""
        cmd = [RUN_GUEST, '--print-cmd']
        if self.arch != 'aarch64':
            cmd += ['--arch', self.arch]
        if self.test:
            cmd += ['--test', self.test]
        if self.mem:
            cmd += ['--mem', self.mem]
        if self.smp:
            cmd += ['--smp', str(self.smp)]
        if self.append:
            cmd += ['--append', self.append]
        for d in self.devices:
            cmd += ['--device', d]
        if self.incoming:
            cmd += ['--incoming', self.incoming]
        cmd += self.options
        extra = []
        for link, netdev_id in self.links:
            extra += ['-netdev', link.netdev(self.end_of(link), netdev_id)]
        extra += self.qemu_args
        if self.argv:
            return self.argv + extra
        if extra:
            cmd += ['--'] + extra
        env = dict(os.environ)
        if self.kernel:
            env['PLDMA_KERNEL'] = self.kernel
        try:
            out = subprocess.run(cmd, check=False, capture_output=True, text=True,
                                 stdin=subprocess.DEVNULL, env=env,
                                 timeout=deadline.left() if deadline else 1800)
        except subprocess.TimeoutExpired:
            raise Fail('%s: run-guest --print-cmd did not answer (waiting for a build lock?)'
                       % self.name)
        if out.returncode:
            raise Fail('%s: run-guest --print-cmd: %s' % (self.name, out.stderr.strip()))
        return shlex.split(out.stdout)

    def end_of(self, link):
        """0 for the first node attached to a stream link (it listens)."""
        return 0 if getattr(link, 'first', None) is self else 1   # (switches: no ends)

    def start(self, argv, qmp_path=None):
        self.console = Console(self.log, self.name)
        self.qemu = Qemu(argv, self.console, self.name, qmp=qmp_path)
        self.deadline = time.monotonic() + self.limit()

    def judge(self, timed_out):
        """status and reason as scripts/run-guest --test decides them: the
        status the guest printed (=== PLDMA-TEST-EXIT N) must be QEMU's exit
        code (semihosting; on x86, isa-debug-exit's (status << 1) | 1,
        decoded); a timeout, a panic, or no status is a failure."""
        rc = self.qemu.p.returncode
        if self.arch == 'x86_64' and rc is not None and rc > 0 and rc & 1:
            rc = (rc - 1) // 2
        self.console.flush_partial()
        text = self.console.text()
        started = self.incoming or ('=== PLDMA-TEST-START %s' % self.test) in text
        limit = self.limit()
        if timed_out:
            self.status = 1
            self.reason = ('guest test \'%s\' did not finish within %ds' % (self.test, limit)
                           if started else 'guest did not boot within %ds' % limit)
            return
        marks = re.findall(r'^=== PLDMA-TEST-EXIT (\d+)', text, re.M)
        if not marks:
            self.status = 1
            if 'Kernel panic' in text:
                first = None
                for line in text.splitlines():
                    line = re.sub(r'^\[ *[0-9.]*\] ', '', line)
                    if re.match(r'(WARNING|BUG|INFO|ODEBUG|UBSAN|kernel BUG|Unable to handle kernel'
                                r'|Internal error)|.*refcount_t:|.*list_[a-z_]* corruption|.*Oops', line):
                        first = line
                        break
                self.reason = 'guest kernel panicked%s' % (' after: ' + first if first else '')
            elif not started:
                err = [ln for ln in text.splitlines() if re.match(r'^qemu-system-\w+: ', ln)][:5]
                self.reason = ('QEMU failed (exit %s) before the guest reached /init: %s'
                               % (rc, ' '.join(err)) if err else
                               'guest did not reach /init (QEMU exit %s)' % rc)
            else:
                self.reason = ('guest test \'%s\' ended without reporting a status (QEMU exit %s)'
                               % (self.test, rc))
            return
        if int(marks[-1]) != rc:
            self.status = 1
            self.reason = 'guest reported status %s but QEMU exited %s' % (marks[-1], rc)
            return
        self.status = rc
        self.reason = None if rc == 0 else 'guest test \'%s\' failed with status %s' % (self.test, rc)

    def summary(self):
        """One line on a failed node, with its console's path."""
        return '%s: %s (console: %s)' % (self.name, self.reason, self.log)


class Cluster:
    """Nodes and the links between them.  Use as a context manager: every
    QEMU and switch it started is ended on the way out, and its temporary
    directory removed."""

    def __init__(self, logdir=None, prefix='pldma-'):
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.logdir = logdir or self.tmp
        os.makedirs(self.logdir, exist_ok=True)
        self.nodes = []
        self.links = []
        self.switches = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def stream(self, name):
        link = StreamLink(name, os.path.join(self.tmp, name))
        self.links.append(link)
        return link

    def switch(self, name):
        sw = VdeSwitch(name, self.tmp)
        self.switches.append(sw)
        return sw

    def add(self, node):
        if node.log is None:
            node.log = os.path.join(self.logdir, node.name + '.log')
        for link, _ in node.links:
            if isinstance(link, StreamLink):
                if link.first is None:
                    link.first = node
                elif link.second is None:
                    link.second = node
                else:
                    raise Fail('stream link %s joins two nodes, not three' % link.name)
        self.nodes.append(node)
        return node

    def qmp_path(self, node):
        return os.path.join(self.tmp, node.name + '.qmp') if node.qmp else None

    def commands(self):
        """Every node's command line: the first node's alone (run-guest may
        build what they all boot), then the others' at once (a run-guest
        --print-cmd takes about a second on a loaded machine)."""
        if not self.nodes:
            return []
        argvs = [self.nodes[0].command()] + [None] * (len(self.nodes) - 1)
        errors = []

        def one(i):
            try:
                argvs[i] = self.nodes[i].command()
            except Fail as e:
                errors.append(e)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(1, len(self.nodes))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return argvs

    def start(self):
        """Every node's QEMU: the command lines first (run-guest may build),
        then the nodes that listen on stream links, then, once their sockets
        are there (up to 20 s), the others."""
        argvs = self.commands()
        listeners = [i for i, n in enumerate(self.nodes)
                     if any(n.end_of(link) == 0 for link, _ in n.links
                            if isinstance(link, StreamLink))]
        for i in listeners:
            n = self.nodes[i]
            n.start(argvs[i], self.qmp_path(n))
        socks = [link for link in self.links if link.first is not None]
        end = time.monotonic() + 20
        while time.monotonic() < end and not all(l.ready() for l in socks):
            if not all(self.nodes[i].qemu.alive() for i in listeners):
                break
            time.sleep(0.2)
        for i, n in enumerate(self.nodes):
            if i not in listeners:
                n.start(argvs[i], self.qmp_path(n))

    def wait(self):
        """Wait for every node to end or run out of its time (then killed);
        judge each.  True when all passed."""
        pending = list(self.nodes)
        timed_out = set()
        while pending:
            for n in list(pending):
                if not n.qemu.alive():
                    pending.remove(n)
                elif time.monotonic() > n.deadline:
                    timed_out.add(n.name)
                    n.qemu.kill()
                    pending.remove(n)
            if pending:
                time.sleep(0.2)
        for n in self.nodes:
            n.qemu.finish()
            n.judge(n.name in timed_out)
        return all(n.status == 0 for n in self.nodes)

    def run(self):
        self.start()
        return self.wait()

    def close(self):
        for n in self.nodes:
            if n.qemu:
                n.qemu.finish()
            if n.console:
                n.console.close()
        for sw in self.switches:
            sw.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def tshark(pcap, args, chunk=20000):
    """Run tshark -r PCAP ARGS over a capture in pieces of CHUNK frames
    (editcap -c): Wireshark's InfiniBand dissector keeps per-capture state
    that makes one pass quadratic in the frame count (100,000 RoCEv2
    frames: 50 s in one piece, 5 s in five), while every check here reads
    frames one by one.  Returns (status, stdout, stderr) as one run would;
    frame numbers restart in every piece."""
    if not shutil.which('editcap'):
        r = subprocess.run(['tshark', '-r', pcap] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, check=False)
        return r.returncode, r.stdout, r.stderr
    with tempfile.TemporaryDirectory(prefix='pldma-tshark-') as d:
        r = subprocess.run(['editcap', '-c', str(chunk), pcap, os.path.join(d, 'part.pcap')],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           check=False)
        if r.returncode:
            return r.returncode, '', 'editcap: ' + r.stderr
        out, err = [], []
        for part in sorted(os.listdir(d)):
            r = subprocess.run(['tshark', '-r', os.path.join(d, part)] + list(args),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               check=False)
            if r.returncode:
                return r.returncode, ''.join(out), r.stderr
            out.append(r.stdout)
            err.append(r.stderr)
        return 0, ''.join(out), ''.join(err)


def lines_of(path):
    """A log file's lines, carriage returns dropped ([] if it is missing)."""
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read().replace('\r', '').splitlines()
    except OSError:
        return []


def on_signals(handler=None):
    """SIGTERM, SIGINT and SIGHUP raise Fail, so that cleanup runs."""
    def raise_fail(signum, frame):
        raise Fail('signal %d' % signum)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, handler or raise_fail)
