# SPDX-License-Identifier: GPL-2.0-or-later
"""RoCEv2 captures (filter-dump's pcap files) read back, and the IBA
transport rules they show, for the suites that capture a link
(tests/rdma/run, tests/rxe/run)."""
import struct

ROCE_PORT = 4791


def pcap_frames(path):
    """The frames of a classic pcap file (filter-dump writes Ethernet)."""
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack('<I', data[:4])[0]
    end = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(end + 'IIII', data[off:off + 16])
        off += 16
        yield data[off:off + incl]
        off += incl


# BTH opcodes of RC requests: SEND, WRITE, READ request, atomics
REQ_OPS = set(range(0x00, 0x0d)) | {0x13, 0x14}
OP_ACK = 0x11
AETH_OPS = {0x0d, 0x0f, 0x10, 0x11}     # READ response First/Last/Only, ACK


def psn_diff(a, b):
    """a - b in the 24-bit PSN space, signed"""
    d = (a - b) & 0xffffff
    return d - 0x1000000 if d & 0x800000 else d


def rc_frames(pcap):
    """(source IP, destination IP, opcode, dest QPN, PSN, AETH syndrome or
    None, MSN or None) of each RoCEv2 RC frame, in capture order"""
    for fr in pcap_frames(pcap):
        if len(fr) < 14 + 20 + 8 + 12 or fr[12:14] != b'\x08\x00' or fr[14 + 9] != 17:
            continue
        ip = fr[14:]
        ihl = (ip[0] & 0x0f) * 4
        if struct.unpack('>H', ip[ihl + 2:ihl + 4])[0] != ROCE_PORT:
            continue
        bth = ip[ihl + 8:]
        op = bth[0]
        qpn = struct.unpack('>I', bth[4:8])[0] & 0xffffff
        psn = struct.unpack('>I', bth[8:12])[0] & 0xffffff
        syn = msn = None
        if op in AETH_OPS and len(bth) >= 16:
            aeth = struct.unpack('>I', bth[12:16])[0]
            syn, msn = aeth >> 24, aeth & 0xffffff
        yield ('.'.join(str(b) for b in ip[12:16]),
               '.'.join(str(b) for b in ip[16:20]), op, qpn, psn, syn, msn)


def transport_violations(pcap):
    """The IBA rules the capture shows, both ways: an ACK or NAK names a
    PSN of a request the other side sent before it (or the PSN just
    before one: a "resolved, resend now" ACK, or the ACK of the last
    message; or, for an RNR or sequence NAK, the PSN just after one);
    per (sender, destination QPN), the AETH MSNs never go back; and a
    duplicate request (a PSN its requester sent before) never moves the
    responder's expected PSN back (IBA 9.9.5): per (sender, destination
    QPN), an ACK never names a PSN before one it ACKed, except the
    "resend now" ACK of the PSN before one it RNR NAKed.  Returns
    (answers checked, requests whose PSN the same requester host sent to
    the same responder host before (retransmissions, or another QP's
    PSNs), a list of violations)."""
    sent = {}          # (requester IP, responder IP) -> request PSNs seen
    last_msn = {}      # (sender IP, dest QPN) -> MSN of its last answer
    last_ack = {}      # (sender IP, dest QPN) -> PSN of its last ACK
    rnr = {}           # (sender IP, dest QPN) -> PSNs it RNR NAKed
    bad = []
    n = dups = 0
    for src, dst, op, qpn, psn, syn, msn in rc_frames(pcap):
        if op in REQ_OPS:
            s = sent.setdefault((src, dst), set())
            dups += psn in s
            s.add(psn)
            continue
        k = (src, qpn)
        if op == OP_ACK:
            n += 1
            psns = sent.get((dst, src), set())
            # (an RNR or sequence NAK may name the PSN after the last one
            # taken: the PLDMA's responder, having applied the segments it
            # held behind a fault, asks the rest to be resent from there)
            nak_next = (syn is not None and syn >> 5 in (1, 3) and
                        ((psn - 1) & 0xffffff) in psns)
            if psn not in psns and ((psn + 1) & 0xffffff) not in psns and \
                    not nak_next:
                bad.append('%s -> %s QPN %#x: answer 0x%02x for PSN %#x, never sent'
                           % (src, dst, qpn, syn if syn is not None else 0, psn))
            if syn is not None and syn >> 5 == 1:
                rnr.setdefault(k, set()).add(psn)
            elif syn is not None and syn >> 5 == 0:
                resume = ((psn + 1) & 0xffffff) in rnr.get(k, set())
                if k in last_ack and psn_diff(psn, last_ack[k]) < 0 and \
                        not resume:
                    bad.append('%s -> QPN %#x: ACK of PSN %#x after one of %#x: '
                               'the expected PSN went back'
                               % (src, qpn, psn, last_ack[k]))
                if k not in last_ack or psn_diff(psn, last_ack[k]) > 0:
                    last_ack[k] = psn
        if msn is None:
            continue
        if k in last_msn and psn_diff(msn, last_msn[k]) < 0:
            bad.append('%s -> QPN %#x: MSN %d after %d' % (src, qpn, msn, last_msn[k]))
        last_msn[k] = msn
    return n, dups, bad
