#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the seeds of the "pldma" fuzz config that carry frames.

generic-fuzz's OP_NET_RECEIVE (patches/0039) delivers an input's frames
from the hub port fuzz-net to the two engines of the config.  An engine
takes RDMA requests and answers only for a queue pair the guest has
connected, so each seed first connects node 1's QP 0 (MMIO, as the
qtests' libqos does) to a peer that the frames then speak for:

  net-responder   a key and a receive queue, then WRITEs (Only, and
                  First/Middle/Last), a READ and its duplicate, SENDs
                  with and without a receive WQE, an ACK for a PSN never
                  sent, and a WRITE with a wrong rkey (fatal: QP to ERR)
  net-requester   an RDMA WRITE and an RDMA READ posted on the QP's
                  send queue, then a sequence NAK, the ACK, the READ
                  response and an ACK past what was sent
  net-ud-flush    QP 1 as a UD QP with a receive queue: datagrams with
                  its Q_Key, another, a DETH cut short; to QP 0 an Atomic
                  Write and its duplicate, a FLUSH, and a FLUSH with a key
                  without the right (fatal)

The key's rkey and the QP's QPN are drawn at random by the device; the
fuzz harness seeds that generator the same for every input (patch
0040), so a probe run of the setup reads them once and the frames quote
them.  Register offsets and values come from include/hw/misc/pldma-regs.h.

Usage: net-seeds.py FUZZER OUTDIR
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qtest2fuzz  # noqa: E402

CONFIG = "pldma"
BASE = qtest2fuzz.PLDMA[0]          # node 1's registers
RAM = qtest2fuzz.RAM_BASE
KEY_PA, KEY_LEN = RAM + 0x200000, 0x4000
CQ_PA, RQ_PA, RX_PA = RAM + 0x210000, RAM + 0x211000, RAM + 0x212000
RING_PA, SRC_PA, DST_PA = RAM + 0x220000, RAM + 0x230000, RAM + 0x234000
COMPL_PA = RAM + 0x238000
NODE_IP, PEER_IP = 0x0a000001, 0x0a000009
PEER_MAC = bytes.fromhex("525400000009")
PEER_QPN = 0x5a0109
MTU = 1024

# BTH opcodes of RC (IBA 9.2)
SEND_ONLY, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST = 0x04, 0x06, 0x07, 0x08
WRITE_ONLY, READ_REQ, READ_RESP_ONLY, ACK = 0x0a, 0x0c, 0x10, 0x11
# IBA 1.5's FLUSH and Atomic Write, UD's SEND Only
FLUSH, ATOMIC_WRITE, UD_SEND_ONLY = 0x1c, 0x1d, 0x64
UD_QKEY, UD_RQ_PA, UD_RX_PA = 0x1234abcd, RAM + 0x240000, RAM + 0x241000


def regs():
    """The #defines of pldma-regs.h that evaluate to numbers, and its
    function-like macros as functions"""
    path = os.path.join(TOP, "include/hw/misc/pldma-regs.h")
    text = open(path).read().replace("\\\n", " ")
    env = {}

    def expr(body):
        body = re.sub(r"/\*.*?(\*/|$)", "", body)
        return re.sub(r"\b(0x[0-9a-fA-F]+|[0-9]+)[uU][lL]*\b", r"\1", body)

    def macro(params, body):
        return lambda *a: int(eval(body, {"__builtins__": {}},
                                   dict(env, **dict(zip(params, a)))))

    plain = {}
    for m in re.finditer(r"^#define\s+(PLDMA_\w+)(\(([\w, ]*)\))?[ \t]+(.+)$",
                         text, re.M):
        if m.group(2):
            params = [x.strip() for x in m.group(3).split(",")]
            env[m.group(1)] = macro(params, expr(m.group(4)))
        else:
            plain[m.group(1)] = expr(m.group(4))
    for _ in range(4):                  # definitions that use later ones
        for name, body in plain.items():
            if name not in env:
                try:
                    env[name] = int(eval(body, {"__builtins__": {}}, env))
                except Exception:
                    pass
    return env


R = regs()


class Cmds(list):
    def wr(self, off, val):
        self.append("writel 0x%x 0x%x" % (BASE + off, val & 0xffffffff))

    def ch_wr(self, ch, off, val):
        self.wr(R["PLDMA_CH_PAGE_OFFSET"](ch) + off, val)

    def rd(self, off):
        self.append("readl 0x%x" % (BASE + off))

    def ram(self, addr, data):
        self.append("write 0x%x 0x%x 0x%s" % (addr, len(data), data.hex()))

    def frame(self, f):
        self.append("frame 0x%s" % f.hex())


def key_register(c, idx, va, length, access):
    c.wr(R["PLDMA_KEY_SEL"], idx)
    c.wr(R["PLDMA_KEY_PASID"], 0)
    c.wr(R["PLDMA_KEY_PD"], 0)
    c.wr(R["PLDMA_KEY_VA_LO"], va)
    c.wr(R["PLDMA_KEY_VA_HI"], va >> 32)
    c.wr(R["PLDMA_KEY_LEN_LO"], length)
    c.wr(R["PLDMA_KEY_LEN_HI"], length >> 32)
    c.wr(R["PLDMA_KEY_ACCESS"], access)
    c.wr(R["PLDMA_KEY_CMD"], R["PLDMA_KEY_CMD_REGISTER"])


def qp_modify(c, mask, state, rq=False):
    """QP 0 of node 1, send queue channel 0, to the peer"""
    c.wr(R["PLDMA_QP_SEL"], 0)
    if rq:
        mask |= R["PLDMA_QPA_RQ"] | R["PLDMA_QPA_CQ"]
    c.wr(R["PLDMA_QP_ATTR_MASK"], mask)
    c.wr(R["PLDMA_QP_NEW_STATE"], state)
    c.wr(R["PLDMA_QP_SQ"], 0)
    c.wr(R["PLDMA_QP_PD"], 0)
    c.wr(R["PLDMA_QP_PD_TAG"], 0)
    c.wr(R["PLDMA_QP_ACCESS"], R["PLDMA_KEY_ACC_RW"])
    c.wr(R["PLDMA_QP_DEST_QPN"], PEER_QPN)
    c.wr(R["PLDMA_QP_DEST_IP"], PEER_IP)
    c.wr(R["PLDMA_QP_DEST_MAC_LO"], struct.unpack("<I", PEER_MAC[:4])[0])
    c.wr(R["PLDMA_QP_DEST_MAC_HI"], struct.unpack("<H", PEER_MAC[4:])[0])
    c.wr(R["PLDMA_QP_SQ_PSN"], 0)
    c.wr(R["PLDMA_QP_RQ_PSN"], 0)
    c.wr(R["PLDMA_QP_PATH_MTU"], R["PLDMA_MTU_1024"])
    # retry 7, RNR retry 7, min RNR timer 14, ACK timeout 0 (the device's)
    c.wr(R["PLDMA_QP_TIMERS"], R["PLDMA_QPT_MAKE"](7, 7, 14, 0))
    if rq:
        c.wr(R["PLDMA_QP_RQ_BASE_LO"], RQ_PA)
        c.wr(R["PLDMA_QP_RQ_BASE_HI"], RQ_PA >> 32)
        c.wr(R["PLDMA_QP_RQ_SIZE"], 4)
        c.wr(R["PLDMA_QP_SEND_CQ"], 0)
        c.wr(R["PLDMA_QP_RECV_CQ"], 0)
    c.wr(R["PLDMA_QP_CMD"], R["PLDMA_QP_CMD_MODIFY"])


def qp_connect(c, rq=False):
    qp_modify(c, R["PLDMA_QPA_REQ_INIT"], R["PLDMA_QPS_INIT"], rq)
    qp_modify(c, R["PLDMA_QPA_REQ_RTR"], R["PLDMA_QPS_RTR"])
    qp_modify(c, R["PLDMA_QPA_REQ_RTS"], R["PLDMA_QPS_RTS"])


def probes(c):
    """Reads whose answers the frames need, in this order"""
    c.wr(R["PLDMA_KEY_SEL"], 1)
    c.rd(R["PLDMA_KEY_RKEY"])
    c.wr(R["PLDMA_QP_SEL"], 0)
    c.rd(R["PLDMA_QP_QPN"])
    c.rd(R["PLDMA_QP_STATE"])
    c.rd(R["PLDMA_NET_MAC_LO"])
    c.rd(R["PLDMA_NET_MAC_HI"])


def responder_setup():
    c = Cmds()
    key_register(c, 1, KEY_PA, KEY_LEN, R["PLDMA_KEY_ACC_RW"])
    c.wr(R["PLDMA_CQ_SEL"], 0)
    c.wr(R["PLDMA_CQ_BASE_LO"], CQ_PA)
    c.wr(R["PLDMA_CQ_BASE_HI"], CQ_PA >> 32)
    c.wr(R["PLDMA_CQ_SIZE"], 16)
    c.wr(R["PLDMA_CQ_PD"], 0)
    c.wr(R["PLDMA_CQ_CMD"], R["PLDMA_CQ_CMD_CREATE"])
    qp_connect(c, rq=True)
    # one receive WQE: one SGE of 1 KiB
    w = bytearray(R["PLDMA_RWQE_SIZE"])
    struct.pack_into("<QI", w, R["PLDMA_RWQE_WR_ID"], 0x77, 1)
    struct.pack_into("<QI", w, 0x10, RX_PA, 1024)
    c.ram(RQ_PA, bytes(w))
    c.ch_wr(0, R["PLDMA_CH_RQ_TAIL"], 1)
    return c


def requester_setup():
    c = Cmds()
    key_register(c, 1, KEY_PA, KEY_LEN, R["PLDMA_KEY_ACC_RW"])
    bind = R["PLDMA_CH_BIND"](0)
    c.wr(bind + R["PLDMA_CHB_CTRL"], R["PLDMA_CHB_CTRL_RESET"])
    c.wr(bind + R["PLDMA_CHB_PASID"], 0)
    c.wr(bind + R["PLDMA_CHB_CTRL"], R["PLDMA_CHB_CTRL_ENABLE"])
    c.ch_wr(0, R["PLDMA_CH_RING_BASE_LO"], RING_PA)
    c.ch_wr(0, R["PLDMA_CH_RING_BASE_HI"], RING_PA >> 32)
    c.ch_wr(0, R["PLDMA_CH_RING_SIZE"], 8)
    qp_connect(c)
    c.ram(SRC_PA, bytes((i * 7 + 1) & 0xff for i in range(2048)))
    return c


def desc_rdma(op, length, local, rva, rkey, compl):
    d = bytearray(R["PLDMA_DESC_SIZE"])
    d[R["PLDMA_DESC_OPCODE"]] = op
    struct.pack_into("<I", d, R["PLDMA_DESC_LEN"], length)
    struct.pack_into("<Q", d, R["PLDMA_DESC_DST"] if op == R["PLDMA_OP_RDMA_READ"]
                     else R["PLDMA_DESC_SRC"], local)
    struct.pack_into("<Q", d, R["PLDMA_DESC_REMOTE_VA"], rva)
    struct.pack_into("<I", d, R["PLDMA_DESC_RKEY"], rkey)
    struct.pack_into("<Q", d, R["PLDMA_DESC_COMPL"], compl)
    return bytes(d)


def roce(node_mac, qpn, op, psn, reth=None, aeth=None, payload=b"",
         pre=b""):
    """A RoCEv2 frame from the peer to node 1; checksums left to the op.
    @pre: the headers before a RETH (a DETH, a FETH)"""
    pad = -len(payload) % 4
    bth = struct.pack(">BBHII", op, pad << 4, 0xffff, qpn, 0x80000000 | psn)
    ext = pre
    if reth:
        ext += struct.pack(">QII", *reth)
    if aeth:
        ext += struct.pack(">I", aeth[0] << 24 | aeth[1])
    l4 = bth + ext + payload + bytes(pad) + bytes(4)
    udp = struct.pack(">HHHH", 0xc009, 4791, 8 + len(l4), 0)
    ip = struct.pack(">BBHHHBBHII", 0x45, 0, 20 + len(udp) + len(l4), 0, 0,
                     64, 17, 0, PEER_IP, NODE_IP)
    return node_mac + PEER_MAC + b"\x08\x00" + ip + udp + l4


# The "pldma" config's machine (patches/0031, 0041), run as the plain
# generic-fuzz target so that trace events can be turned on
CONFIG_ARGS = ("-machine virt -nodefaults "
               "-netdev hubport,id=pa,hubid=0 -netdev hubport,id=pb,hubid=0 "
               "-netdev hubport,id=fuzz-net,hubid=0 "
               "-device pldma,netdev=pa,node-id=1 "
               "-device pldma,netdev=pb,node-id=2")
NODE_MAC = bytes.fromhex("5254004c4401")   # node-id 1, no mac= (net.c)


def traced(fuzzer, cmds, events):
    """Run @cmds (DMA reads fitted) with trace @events on; the trace"""
    ops = qtest2fuzz.build_ops(cmds, qtest2fuzz.CONFIGS[CONFIG])
    fills, _, _ = qtest2fuzz.fit(ops, fuzzer, CONFIG, 20, 20, False)
    with tempfile.NamedTemporaryFile(suffix=".seed", delete=False) as f:
        f.write(qtest2fuzz.encode(ops, fills, False))
        name = f.name
    args = CONFIG_ARGS + "".join(" -trace " + e for e in events)
    env = dict(os.environ, QEMU_FUZZ_ARGS=args, QEMU_FUZZ_OBJECTS="*pldma*",
               QEMU_AVOID_DOUBLE_FETCH="1", ASAN_OPTIONS="detect_leaks=0")
    try:
        p = subprocess.run([fuzzer, "--fuzz-target=generic-fuzz",
                            "-detect_leaks=0", name], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=120)
        return p.stderr.decode(errors="replace")
    finally:
        os.unlink(name)


def probe(fuzzer, setup):
    """Run @setup once: the rkey of key 1 and the QPN of QP 0 (in RTS)"""
    log = traced(fuzzer, setup, ["pldma_net_key", "pldma_qp_state"])
    rkey = qpn = None
    for line in log.splitlines():
        m = re.search(r"pldma_net_key key 1 cmd 1 status 0 rkey (0x[0-9a-f]+)",
                      line)
        if m:
            rkey = int(m.group(1), 16)
        m = re.search(r"pldma_qp_state qp 0 qpn (0x[0-9a-f]+) \w+ -> RTS",
                      line)
        if m:
            qpn = int(m.group(1), 16)
    if rkey is None or qpn is None:
        sys.exit("probe: no rkey (%s) or no QP in RTS (%s): the setup failed"
                 % (rkey, qpn))
    return rkey, qpn, NODE_MAC


def check(fuzzer, cmds, want):
    """Run the seed's commands traced; exit unless every (event, count)"""
    log = traced(fuzzer, cmds, sorted({e.split()[0] for e, _ in want}))
    for ev, n in want:
        got = len(re.findall(r"\b%s\b" % ev, log))
        if got < n:
            sys.exit("check: %d %s, expected at least %d" % (got, ev, n))


def responder(fuzzer):
    setup = responder_setup()
    rkey, qpn, mac = probe(fuzzer, setup)
    c = Cmds(setup)
    pl = bytes((i * 13 + 5) & 0xff for i in range(MTU))
    c.frame(roce(mac, qpn, WRITE_ONLY, 0, (KEY_PA, rkey, 256), None,
                 pl[:256]))
    va = KEY_PA + 0x400
    c.frame(roce(mac, qpn, WRITE_FIRST, 1, (va, rkey, 3 * MTU), None, pl))
    c.frame(roce(mac, qpn, WRITE_MIDDLE, 2, None, None, pl))
    c.frame(roce(mac, qpn, WRITE_LAST, 3, None, None, pl))
    c.frame(roce(mac, qpn, READ_REQ, 4, (KEY_PA, rkey, 2 * MTU)))
    c.frame(roce(mac, qpn, READ_REQ, 4, (KEY_PA, rkey, 2 * MTU)))
    c.frame(roce(mac, qpn, SEND_ONLY, 6, None, None, pl[:128]))
    c.frame(roce(mac, qpn, SEND_ONLY, 7, None, None, pl[:64]))
    c.frame(roce(mac, qpn, ACK, 100, None, (0x1f, 0)))
    c.frame(roce(mac, qpn, WRITE_ONLY, 7, (KEY_PA, rkey ^ 0x100, 64), None,
                 pl[:64]))
    c.append("clock_step")
    # 4 WRITE ACKs, twice 2 READ responses, the SEND's ACK, the RNR NAK
    # and the fatal NAK; the ACK of an unsent PSN dropped
    check(fuzzer, c, [("pldma_net_tx", 11), ("pldma_recv_done", 1),
                      ("pldma_recv_rnr", 1), ("pldma_qp_dropped", 1),
                      ("pldma_net_resp_fatal", 1)])
    return c


def requester(fuzzer):
    setup = requester_setup()
    _, qpn, mac = probe(fuzzer, setup)
    c = Cmds(setup)
    rkey = 0x123456
    descs = [desc_rdma(R["PLDMA_OP_RDMA_WRITE"], 2 * MTU, SRC_PA, 0x10000,
                       rkey, COMPL_PA),
             desc_rdma(R["PLDMA_OP_RDMA_READ"], MTU, DST_PA, 0x20000, rkey,
                       COMPL_PA + 32)]
    c.ram(RING_PA, b"".join(descs))
    c.ch_wr(0, R["PLDMA_CH_RING_TAIL"], 2)
    pl = bytes((i * 3 + 9) & 0xff for i in range(MTU))
    c.frame(roce(mac, qpn, ACK, 0, None, (0x60, 0)))       # sequence NAK
    c.frame(roce(mac, qpn, ACK, 1, None, (0x1f, 1)))
    c.frame(roce(mac, qpn, READ_RESP_ONLY, 2, None, (0x1f, 2), pl))
    c.frame(roce(mac, qpn, ACK, 50, None, (0x1f, 3)))      # never sent
    c.append("clock_step")
    # the WRITE sent again after the NAK, both descriptors done (OK), the
    # ACK of an unsent PSN dropped
    check(fuzzer, c, [("pldma_net_go_back", 1),
                      ("pldma_desc_done ch0 desc 0 status 1", 1),
                      ("pldma_desc_done ch0 desc 1 status 1", 1),
                      ("pldma_qp_dropped", 1)])
    return c


def ud_qp(c):
    """QP 1 of node 1 to RTS as a UD QP (send queue channel 1, its own
    receive queue with one WQE of 1 KiB, CQ 0)"""
    init = (R["PLDMA_QPA_STATE"] | R["PLDMA_QPA_PD"] | R["PLDMA_QPA_SQ"] |
            R["PLDMA_QPA_RQ"] | R["PLDMA_QPA_CQ"] | R["PLDMA_QPA_TYPE"] |
            R["PLDMA_QPA_QKEY"])
    for mask, state in ((init, R["PLDMA_QPS_INIT"]),
                        (R["PLDMA_QPA_STATE"], R["PLDMA_QPS_RTR"]),
                        (R["PLDMA_QPA_STATE"] | R["PLDMA_QPA_SQ_PSN"],
                         R["PLDMA_QPS_RTS"])):
        c.wr(R["PLDMA_QP_SEL"], 1)
        c.wr(R["PLDMA_QP_ATTR_MASK"], mask)
        c.wr(R["PLDMA_QP_NEW_STATE"], state)
        c.wr(R["PLDMA_QP_SQ"], 1)
        c.wr(R["PLDMA_QP_PD"], 0)
        c.wr(R["PLDMA_QP_PD_TAG"], 0)
        c.wr(R["PLDMA_QP_TYPE"], R["PLDMA_QP_TYPE_UD"])
        c.wr(R["PLDMA_QP_QKEY"], UD_QKEY)
        c.wr(R["PLDMA_QP_SQ_PSN"], 0)
        c.wr(R["PLDMA_QP_RQ_BASE_LO"], UD_RQ_PA)
        c.wr(R["PLDMA_QP_RQ_BASE_HI"], UD_RQ_PA >> 32)
        c.wr(R["PLDMA_QP_RQ_SIZE"], 4)
        c.wr(R["PLDMA_QP_SEND_CQ"], 0)
        c.wr(R["PLDMA_QP_RECV_CQ"], 0)
        c.wr(R["PLDMA_QP_CMD"], R["PLDMA_QP_CMD_MODIFY"])
    w = bytearray(R["PLDMA_RWQE_SIZE"])
    struct.pack_into("<QI", w, R["PLDMA_RWQE_WR_ID"], 0x88, 1)
    struct.pack_into("<QI", w, 0x10, UD_RX_PA, 1024)
    c.ram(UD_RQ_PA, bytes(w))
    c.ch_wr(1, R["PLDMA_CH_RQ_TAIL"], 1)


def ud_flush(fuzzer):
    setup = responder_setup()
    key_register(setup, 2, KEY_PA, KEY_LEN,
                 R["PLDMA_KEY_ACC_WRITE"] | R["PLDMA_KEY_ACC_FLUSH"])
    ud_qp(setup)
    setup.wr(R["PLDMA_KEY_SEL"], 2)
    setup.rd(R["PLDMA_KEY_RKEY"])
    setup.wr(R["PLDMA_QP_SEL"], 1)
    setup.rd(R["PLDMA_QP_QPN"])
    log = traced(fuzzer, setup, ["pldma_net_key", "pldma_qp_state"])
    keys, qpns = {}, {}
    for line in log.splitlines():
        m = re.search(r"pldma_net_key key (\d) cmd 1 status 0 rkey "
                      r"(0x[0-9a-f]+)", line)
        if m:
            keys[int(m.group(1))] = int(m.group(2), 16)
        m = re.search(r"pldma_qp_state qp (\d) qpn (0x[0-9a-f]+) \w+ -> RTS",
                      line)
        if m:
            qpns[int(m.group(1))] = int(m.group(2), 16)
    if set(keys) != {1, 2} or set(qpns) != {0, 1}:
        sys.exit("probe: keys %s, QPs in RTS %s: the setup failed"
                 % (keys, qpns))
    c = Cmds(setup)
    mac, pl = NODE_MAC, bytes((i * 5 + 3) & 0xff for i in range(256))
    deth = struct.pack(">II", UD_QKEY, 0x4711)
    c.frame(roce(mac, qpns[1], UD_SEND_ONLY, 9, None, None, pl, deth))
    c.frame(roce(mac, qpns[1], UD_SEND_ONLY, 10, None, None, pl,
                 struct.pack(">II", UD_QKEY ^ 1, 0x4711)))
    c.frame(roce(mac, qpns[1], UD_SEND_ONLY, 11, None, None, b"", deth[:4]))
    c.frame(roce(mac, qpns[0], ATOMIC_WRITE, 0, (KEY_PA + 8, keys[1], 8),
                 None, pl[:8]))
    c.frame(roce(mac, qpns[0], ATOMIC_WRITE, 0, (KEY_PA + 8, keys[1], 8),
                 None, pl[:8]))
    c.frame(roce(mac, qpns[0], FLUSH, 1, (KEY_PA, keys[2], 64), None, b"",
                 struct.pack(">I", 1)))
    c.frame(roce(mac, qpns[0], FLUSH, 2, (KEY_PA, keys[1], 64), None, b"",
                 struct.pack(">I", 1)))
    c.append("clock_step")
    # the datagram received, one dropped (Q_Key); the Atomic Write and its
    # duplicate answered, the FLUSH too, the last one refused (fatal)
    check(fuzzer, c, [("pldma_recv_done", 1), ("pldma_resp_ud_drop", 1),
                      ("pldma_net_tx", 4), ("pldma_net_resp_fatal", 1)])
    return c


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[-1])
    fuzzer, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    for name, make in (("net-responder", responder),
                       ("net-requester", requester),
                       ("net-ud-flush", ud_flush)):
        with tempfile.NamedTemporaryFile("w", suffix=".cmds",
                                         delete=False) as f:
            f.write("\n".join(make(fuzzer)) + "\n")
            cmds = f.name
        try:
            subprocess.run([os.path.join(TOP, "tests/fuzz/qtest2fuzz.py"),
                            "--fit", fuzzer, "--config", CONFIG, cmds,
                            os.path.join(outdir, name + ".seed")],
                           check=True)
        finally:
            os.unlink(cmds)


if __name__ == "__main__":
    main()
