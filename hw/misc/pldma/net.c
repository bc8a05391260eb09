/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, remote DMA
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * RDMA WRITE and READ between PLDMA devices in different QEMU processes,
 * through QEMU's net layer (any -netdev: stream, vde, ...), framed as
 * RoCEv2 (Ethernet / IPv4 / UDP 4791 / BTH [+ RETH] [+ AETH] / payload /
 * ICRC) so that a filter-dump capture reads in Wireshark and tshark.
 *
 * Transport, per (requester channel, responder node), as an IB Reliable
 * Connection does it: PSNs, one message in flight per channel, at most
 * PLDMA_NET_WINDOW unacknowledged segments, ACKs coalesced (AckReq every
 * PLDMA_NET_ACKREQ_EVERY segments and on the last), Go-back-N on a
 * sequence NAK or a retransmit timeout, retry-count tries.
 *
 * Faults on the requester (source of a WRITE, destination of a READ
 * response) take the channel's local fault path (stall or report).  Faults
 * on the responder are answered with an RNR NAK carrying the PSN of the
 * segment that faulted, so the requester resends from that offset, never
 * from the start of the message.  The responder resolves its fault with
 * its own mode: a stall that the OS resumes (IOPF), or a fault record
 * (PLDMA_FR_F_REMOTE) that the driver answers with KEY_CMD_RESOLVED.  The
 * requester resends when the RNR timer it was told expires or, with
 * rnr-resume on the responder, when the responder says "resolved, resend
 * now": an ACK of the last good PSN whose MSN is PLDMA_NET_RESUME_MSN.
 *
 * Everything that comes from the wire is checked before use: lengths
 * against the frame, PSNs against the window, addresses against the key
 * (index, generation, access, range, PASID) before a byte is touched.
 * See docs/specs/pldma.rst, "Remote DMA".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/cutils.h"
#include "qemu/guest-random.h"
#include "qapi/error.h"
#include "net/net.h"
#include "net/checksum.h"
#include "migration/vmstate.h"
#include "pldma-internal.h"
#include "trace.h"
#include <zlib.h>

/* Wire format (IBTA vol. 1, annex A17 RoCEv2) */
#define ROCE_UDP_PORT       4791
#define ETH_HDR             14
#define IP_HDR              20
#define UDP_HDR             8
#define BTH_LEN             12
#define RETH_LEN            16
#define IMM_LEN             4
#define AETH_LEN            4
#define ICRC_LEN            4
#define HDRS_MAX            (ETH_HDR + IP_HDR + UDP_HDR + BTH_LEN + RETH_LEN + \
                             IMM_LEN + AETH_LEN)
#define FRAME_MAX(mtu)      (HDRS_MAX + (mtu) + ICRC_LEN)

/*
 * QPNs: a request goes to the responder's QP for the requester's channel,
 * answers to the channel's own QP (never QP0/QP1, which carry MADs)
 */
#define QPN_REQ(ch)         (0x010000U | (ch))
#define QPN_RESP(ch)        (0x000100U | (ch))
#define QPN_CH(qpn)         ((qpn) & 0xffU)

/* Segments in flight, and how often the requester asks for an ACK */
#define PLDMA_NET_WINDOW        64
#define PLDMA_NET_ACKREQ_EVERY  16

/* IB RNR timer codes, in units of 10 us (code 0 is the longest) */
static const uint32_t rnr_timer_10us[32] = {
    65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
    256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
    16384, 24576, 32768, 49152,
};

/* Responder connections: the node-id path's, then one per QP */
#define NET_CONNS(s)        (PLDMA_NET_CONNS + (s)->num_qps)

static int32_t psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

static void cnt(PLDMACore *s, unsigned i)
{
    s->net_cnt[i]++;
}

int32_t pldma_psn_diff(uint32_t a, uint32_t b)
{
    return psn_diff(a, b);
}

void pldma_net_cnt(PLDMACore *s, unsigned i)
{
    cnt(s, i);
}

static bool op_has_reth(uint8_t op)
{
    return op == OP_WRITE_FIRST || op == OP_WRITE_ONLY ||
           op == OP_WRITE_ONLY_IMM || op == OP_READ_REQ;
}

/* ImmDt: SEND Last/Only and RDMA WRITE Last/Only with Immediate */
static bool op_has_imm(uint8_t op)
{
    return op == OP_SEND_LAST_IMM || op == OP_SEND_ONLY_IMM ||
           op == OP_WRITE_LAST_IMM || op == OP_WRITE_ONLY_IMM;
}

static bool op_has_aeth(uint8_t op)
{
    return op == OP_READ_RESP_FIRST || op == OP_READ_RESP_LAST ||
           op == OP_READ_RESP_ONLY || op == OP_ACK;
}

static bool op_has_payload(uint8_t op)
{
    return op <= OP_WRITE_ONLY_IMM ||
           (op >= OP_READ_RESP_FIRST && op <= OP_READ_RESP_ONLY);
}

static uint32_t nsegs_of(uint32_t mtu, uint32_t len)
{
    return len ? DIV_ROUND_UP(len, mtu) : 1;
}

/*
 * A message of no bytes: one packet without payload (IBA 9.4: a
 * zero-length SEND consumes a receive WQE; a zero-length RDMA WRITE
 * needs no valid R_Key or VA, C9-88).  On a QP, for SEND and WRITE (with
 * or without immediate); a zero-length READ is not supported.
 */
bool pldma_net_zero_len_ok(uint8_t op, uint32_t qp)
{
    return qp && op != PLDMA_OP_RDMA_READ;
}

static PLDMAQP *conn_qp(PLDMACore *s, const PLDMANetConn *c)
{
    return c->qp ? &s->qps[c->qp - 1] : NULL;
}

/* Payload bytes per segment of a connection: its QP's path MTU */
static uint32_t conn_mtu(PLDMACore *s, const PLDMANetConn *c)
{
    return c->qp ? PLDMA_MTU_BYTES(s->qps[c->qp - 1].path_mtu) : s->mtu;
}

/* The RNR timer code the responder sends: its QP's minimum RNR timer */
static uint32_t conn_rnr_timer(PLDMACore *s, const PLDMANetConn *c)
{
    return c->qp ? PLDMA_QPT_MIN_RNR_TIMER(s->qps[c->qp - 1].timers)
                 : s->rnr_timer;
}

uint32_t pldma_net_conn_rnr_timer(PLDMACore *s, const PLDMANetConn *c)
{
    return conn_rnr_timer(s, c);
}

/* For traces: the node (0 on a QP) and the channel or QP index */
static uint16_t conn_node(PLDMACore *s, const PLDMANetConn *c)
{
    uint32_t i = c - s->conns;

    return i < PLDMA_NET_CONNS ? i / PLDMA_MAX_CHANNELS : 0;
}

static uint32_t conn_ch(PLDMACore *s, const PLDMANetConn *c)
{
    uint32_t i = c - s->conns;

    return i < PLDMA_NET_CONNS ? i % PLDMA_MAX_CHANNELS : i - PLDMA_NET_CONNS;
}

/* A frame for a QP that the QP does not take: no state moves */
static void qp_drop(PLDMACore *s, const PLDMAPkt *p, const char *why)
{
    cnt(s, PLDMA_NCNT_RX_DROPPED);
    cnt(s, PLDMA_NCNT_QP_DROPPED);
    trace_pldma_qp_dropped(p->qpn, p->src_ip, p->opcode, p->psn, why);
}

void pldma_net_qp_drop(PLDMACore *s, const PLDMAPkt *p, const char *why)
{
    qp_drop(s, p, why);
}

/* Dropped as not about the message in flight (both paths) */
static void rx_drop(PLDMACore *s, const PLDMAPkt *p)
{
    if (p->qp) {
        qp_drop(s, p, "outside the send queue's window");
    } else {
        cnt(s, PLDMA_NCNT_RX_DROPPED);
    }
}

/* ---- frames ---- */

/* ICRC: CRC-32 over the packet with the variant fields masked to ones */
static uint32_t pldma_icrc(const uint8_t *ip, size_t len)
{
    static const uint8_t ones[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };
    uint8_t h[IP_HDR + UDP_HDR + BTH_LEN];
    uint32_t crc;

    memcpy(h, ip, sizeof(h));
    h[1] = 0xff;                            /* TOS */
    h[8] = 0xff;                            /* TTL */
    h[10] = h[11] = 0xff;                   /* header checksum */
    h[IP_HDR + 6] = h[IP_HDR + 7] = 0xff;   /* UDP checksum */
    h[IP_HDR + UDP_HDR + 4] = 0xff;         /* BTH resv8a */
    crc = crc32(0, ones, sizeof(ones));
    crc = crc32(crc, h, sizeof(h));
    return crc32(crc, ip + sizeof(h), len - sizeof(h));
}

/*
 * The test knobs pick 1 frame in N at random, from a generator seeded by
 * the node-id: reproducible, and never in step with the protocol (a fixed
 * period can drop the same segment of every retransmission).
 */
static bool pldma_net_knob(PLDMACore *s, uint32_t every)
{
    if (!every) {
        return false;
    }
    s->x_rng = s->x_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (s->x_rng >> 33) % every == 0;
}

/*
 * The net layer has sent the frame it queued for us (or dropped it): the
 * link takes frames again, let the requesters and the responder go on
 */
static void pldma_net_sent(NetClientState *nc, ssize_t len)
{
    PLDMACore *s = qemu_get_nic_opaque(nc);
    uint32_t i;

    trace_pldma_net_tx_resumed(len);
    s->tx_blocked = false;
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        PLDMANetReq *r = &s->ch[i].net;

        if (r->txq) {
            r->txq = false;
            r->wait = false;
        }
    }
    qemu_bh_schedule(s->bh);
}

/*
 * Hand one frame to the net layer, which sends it at once or queues it
 * when the backend cannot take it now (a full socket: the peer stopped
 * reading).  Then nothing more goes out until pldma_net_sent(): frames
 * are dropped (the peer's retransmissions bring their answers again), the
 * requesters and READ responses wait.  So one frame at most waits in the
 * net layer's queue for us, and a stalled peer never blocks this node.
 */
static void pldma_net_put(PLDMACore *s, const uint8_t *f, size_t len)
{
    if (s->tx_blocked) {
        trace_pldma_net_tx_dropped(len);
        return;
    }
    if (!qemu_send_packet_async(qemu_get_queue(s->nic), f, len,
                                pldma_net_sent)) {
        trace_pldma_net_tx_blocked(len);
        s->tx_blocked = true;
    }
}

static void pldma_net_send_frame(PLDMACore *s, const uint8_t *f, size_t len)
{
    uint32_t n = ++s->tx_seq;

    cnt(s, PLDMA_NCNT_TX_FRAMES);
    if (pldma_net_knob(s, s->x_drop_every)) {
        trace_pldma_net_knob("drop", n);
        return;
    }
    if (pldma_net_knob(s, s->x_reorder_every) && !s->held) {
        trace_pldma_net_knob("hold", n);
        s->held = g_memdup2(f, len);
        s->held_len = len;
        return;
    }
    pldma_net_put(s, f, len);
    if (pldma_net_knob(s, s->x_dup_every)) {
        trace_pldma_net_knob("dup", n);
        pldma_net_put(s, f, len);
    }
    if (s->held) {
        uint8_t *h = s->held;

        s->held = NULL;
        pldma_net_put(s, h, s->held_len);
        g_free(h);
    }
}

static void pldma_net_tx(PLDMACore *s, const PLDMAPkt *p)
{
    uint8_t f[FRAME_MAX(PLDMA_NET_MAX_MTU)];
    uint8_t *ip = f + ETH_HDR, *udp = ip + IP_HDR, *q = udp + UDP_HDR;
    uint32_t pad = (4 - (p->plen & 3)) & 3;
    size_t l4;

    assert(p->plen <= s->mtu && p->node < PLDMA_NET_MAX_NODES);
    /* Ethernet: to the MAC the peer last sent from, else broadcast */
    if (p->qp) {
        const PLDMAQP *qp = &s->qps[p->qp - 1];

        stl_le_p(f, qp->dest_mac_lo);
        stw_le_p(f + 4, qp->dest_mac_hi);
    } else if (s->peer_mac_known[p->node]) {
        memcpy(f, s->peer_mac[p->node], 6);
    } else {
        memset(f, 0xff, 6);
    }
    memcpy(f + 6, s->conf->macaddr.a, 6);
    stw_be_p(f + 12, 0x0800);

    /* BTH */
    q[0] = p->opcode;
    q[1] = (p->se ? 0x80 : 0) | pad << 4;   /* SE, M 0, PadCnt, TVer 0 */
    stw_be_p(q + 2, 0xffff);                /* default P_Key */
    q[4] = 0;
    stl_be_p(q + 4, p->qpn & PLDMA_PSN_MASK);     /* resv8a 0, DestQP */
    stl_be_p(q + 8, (p->ackreq ? 0x80000000U : 0) | (p->psn & PLDMA_PSN_MASK));
    q += BTH_LEN;
    if (op_has_reth(p->opcode)) {
        stq_be_p(q, p->va);
        stl_be_p(q + 8, p->rkey);
        stl_be_p(q + 12, p->dmalen);
        q += RETH_LEN;
    }
    if (op_has_imm(p->opcode)) {
        stl_le_p(q, p->imm);                /* as the descriptor holds it */
        q += IMM_LEN;
    }
    if (op_has_aeth(p->opcode)) {
        stl_be_p(q, ((uint32_t)p->syndrome << 24) | (p->msn & PLDMA_PSN_MASK));
        q += AETH_LEN;
    }
    if (p->plen) {
        memcpy(q, p->payload, p->plen);
        q += p->plen;
    }
    memset(q, 0, pad);
    q += pad;
    l4 = q + ICRC_LEN - udp;

    /* IPv4: the QP's addresses, or 10.0.0.<node> */
    ip[0] = 0x45;
    ip[1] = 0;
    stw_be_p(ip + 2, IP_HDR + l4);
    stw_be_p(ip + 4, 0);
    stw_be_p(ip + 6, 0x4000);               /* DF */
    ip[8] = 64;
    ip[9] = 17;
    stw_be_p(ip + 10, 0);
    if (p->qp) {
        stl_be_p(ip + 12, s->net_ip);
        stl_be_p(ip + 16, s->qps[p->qp - 1].dest_ip);
    } else {
        stl_be_p(ip + 12, 0x0a000000U | s->node_id);
        stl_be_p(ip + 16, 0x0a000000U | p->node);
    }
    stw_be_p(ip + 10, net_checksum_finish(net_checksum_add(IP_HDR, ip)));
    /* UDP, source port fixed per node (no ECMP entropy needed here) */
    stw_be_p(udp, 0xc000 | s->node_id);
    stw_be_p(udp + 2, ROCE_UDP_PORT);
    stw_be_p(udp + 4, l4);
    stw_be_p(udp + 6, 0);
    stl_le_p(q, pldma_icrc(ip, q - ip));

    trace_pldma_net_tx(p->node, p->opcode, p->qpn, p->psn, p->ackreq,
                       p->syndrome, p->plen);
    pldma_net_send_frame(s, f, q + ICRC_LEN - f);
}

/* Parse and check a frame; false (counted by the caller) if not for us */
static bool pldma_net_parse(PLDMACore *s, const uint8_t *f, size_t size,
                            PLDMAPkt *p)
{
    const uint8_t *ip = f + ETH_HDR, *udp = ip + IP_HDR, *q = udp + UDP_HDR;
    size_t iplen, l4, hdrs;
    uint32_t src, dst, w;

    if (size < ETH_HDR + IP_HDR + UDP_HDR + BTH_LEN + ICRC_LEN ||
        lduw_be_p(f + 12) != 0x0800 || ip[0] != 0x45 || ip[9] != 17) {
        return false;
    }
    iplen = lduw_be_p(ip + 2);
    if (iplen > size - ETH_HDR || iplen < IP_HDR + UDP_HDR + BTH_LEN +
        ICRC_LEN || (lduw_be_p(ip + 6) & 0x3fff)) {
        return false;                       /* truncated, or a fragment */
    }
    src = ldl_be_p(ip + 12);
    dst = ldl_be_p(ip + 16);
    if (dst != s->net_ip && dst != (0x0a000000U | s->node_id)) {
        return false;
    }
    /* a node-id path sender is 10.0.0.<node> (checked on dispatch) */
    p->src_ip = src;
    p->node = (src & 0xffffff00U) == 0x0a000000U ? src & 0xff : 0;
    if (p->node >= PLDMA_NET_MAX_NODES || p->node == s->node_id) {
        p->node = 0;
    }
    l4 = lduw_be_p(udp + 4);
    if (lduw_be_p(udp + 2) != ROCE_UDP_PORT || l4 != iplen - IP_HDR) {
        return false;
    }
    if (ldl_le_p(ip + iplen - ICRC_LEN) != pldma_icrc(ip, iplen - ICRC_LEN)) {
        return false;
    }
    p->opcode = q[0];
    if (p->opcode > OP_ACK || lduw_be_p(q + 2) != 0xffff || (q[1] & 0x0f)) {
        return false;                       /* not RC SEND/WRITE/READ/ACK */
    }
    p->se = q[1] >> 7;
    p->pad = (q[1] >> 4) & 3;
    p->qpn = ldl_be_p(q + 4) & PLDMA_PSN_MASK;
    w = ldl_be_p(q + 8);
    p->ackreq = w >> 31;
    p->psn = w & PLDMA_PSN_MASK;
    hdrs = BTH_LEN;
    p->has_reth = op_has_reth(p->opcode);
    p->has_aeth = op_has_aeth(p->opcode);
    p->has_imm = op_has_imm(p->opcode);
    if (UDP_HDR + hdrs + (p->has_reth ? RETH_LEN : 0) +
        (p->has_imm ? IMM_LEN : 0) +
        (p->has_aeth ? AETH_LEN : 0) + ICRC_LEN > l4) {
        return false;
    }
    q += BTH_LEN;
    if (p->has_reth) {
        p->va = ldq_be_p(q);
        p->rkey = ldl_be_p(q + 8);
        p->dmalen = ldl_be_p(q + 12);
        q += RETH_LEN;
        hdrs += RETH_LEN;
    }
    if (p->has_imm) {
        p->imm = ldl_le_p(q);
        q += IMM_LEN;
        hdrs += IMM_LEN;
    }
    if (p->has_aeth) {
        w = ldl_be_p(q);
        p->syndrome = w >> 24;
        p->msn = w & PLDMA_PSN_MASK;
        q += AETH_LEN;
        hdrs += AETH_LEN;
    }
    if (UDP_HDR + hdrs + p->pad + ICRC_LEN > l4) {
        return false;
    }
    p->payload = q;
    p->plen = l4 - UDP_HDR - hdrs - p->pad - ICRC_LEN;
    if ((p->plen && !op_has_payload(p->opcode)) || p->plen > s->mtu) {
        return false;
    }
    p->smac = f + 6;
    return true;
}

/* ---- requester ---- */

static void pldma_net_arm(PLDMAChannel *ch, uint64_t us)
{
    timer_mod(ch->net_timer,
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + us * SCALE_US);
}

/* The message is over (any status): the next one starts after its PSNs */
void pldma_net_ch_end(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = &ch->net;

    if (!s->nic || !pldma_op_remote(ch->op) || (!r->node && !r->qp)) {
        return;
    }
    timer_del(ch->net_timer);
    if (r->qp) {
        PLDMAQP *qp = &s->qps[r->qp - 1];

        /*
         * The QP's next message starts where the responder expects it:
         * after this one.  A message that ended otherwise (timeout, RNR
         * retries, cancelled, reset) leaves the responder's PSN unknown:
         * the QP goes to ERR, as on IB (after a fatal NAK it is there
         * already, pldma_qp_nak_err()).
         */
        if (qp->gen == r->qp_gen && qp->state == PLDMA_QPS_RTS) {
            trace_pldma_qp_msg_end(r->qp - 1, r->psn, r->end_psn, r->ok);
            qp->sq_psn = r->end_psn;
            if (!r->ok) {
                pldma_qp_to_err(s, r->qp - 1);
            }
        }
    } else {
        s->psn_next[ch->idx * PLDMA_NET_MAX_NODES + r->node] =
            (r->psn + r->nsegs) & PLDMA_PSN_MASK;
    }
    trace_pldma_net_msg_end(ch->idx, r->node, r->psn, r->nsegs, ch->done);
    memset(r, 0, sizeof(*r));
}

static void pldma_net_finish(PLDMAChannel *ch, uint32_t status)
{
    if (status == PLDMA_ST_SUCCESS) {
        /* (a Go-back-N may have rewound what was sent, not what arrived) */
        ch->done = ch->len;
        ch->net.ok = true;
    } else if (pldma_op_sends(ch->op)) {
        /* what is known to have arrived, not what was sent */
        ch->done = ch->net.acked;
    }
    ch->cstatus = status;
    ch->phase = PLDMA_PHASE_COMPL;
    ch->net.wait = false;
    timer_del(ch->net_timer);
    if (status != PLDMA_ST_SUCCESS) {
        ch->cflags = 0;
        ch->cfault_va = 0;
    }
    qemu_bh_schedule(ch->s->bh);
}

/* Go on sending from @off (Go-back-N, or a resume) */
static void pldma_net_rewind(PLDMAChannel *ch, uint64_t off)
{
    ch->done = MIN(off, ch->len);
    ch->net.wait = false;
    ch->net.rnr = false;
    if (ch->state == PLDMA_STATE_RUNNING) {
        qemu_bh_schedule(ch->s->bh);
    }
}

/* IB local ACK timeout: 4.096 us << code; 0 (infinite) takes the device's */
static uint32_t qp_rto_us(PLDMACore *s, uint32_t code)
{
    return code ? MIN((4096ULL << code) / 1000, 10ULL * 1000 * 1000)
                : s->rto_us;
}

/* A descriptor on the send queue of @qp: its path, PSN and timers */
static uint32_t pldma_net_decode_qp(PLDMAChannel *ch, PLDMAQP *qp,
                                    uint16_t node)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = &ch->net;
    uint32_t t = qp->timers;

    if (qp->state == PLDMA_QPS_ERR) {
        return PLDMA_ST_FLUSHED;    /* flushed: never sent (no PSN used) */
    }
    if (node != 0 || qp->state != PLDMA_QPS_RTS) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: ch%u: desc %u: node %u on "
                      "the send queue of a QP in state %u\n", ch->idx,
                      ch->head, node, qp->state);
        return PLDMA_ST_BAD_NODE;
    }
    r->qp = qp - s->qps + 1;
    r->qp_gen = qp->gen;
    r->psn = qp->sq_psn;
    r->mtu = PLDMA_MTU_BYTES(qp->path_mtu);
    r->rto_us = qp_rto_us(s, PLDMA_QPT_TIMEOUT(t));
    r->retry_count = PLDMA_QPT_RETRY_CNT(t);
    r->rnr_retry = PLDMA_QPT_RNR_RETRY(t) == 7 ? UINT32_MAX
                                                : PLDMA_QPT_RNR_RETRY(t);
    return 0;
}

uint32_t pldma_net_decode(PLDMAChannel *ch, const uint8_t *d)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = &ch->net;
    uint16_t node = lduw_le_p(d + PLDMA_DESC_NODE);
    PLDMAQP *qp = pldma_qp_of_sq(s, ch->idx);
    uint32_t st;

    memset(r, 0, sizeof(*r));
    if (qp) {
        st = pldma_net_decode_qp(ch, qp, node);
        if (st) {
            memset(r, 0, sizeof(*r));
            return st;
        }
    } else if (pldma_op_qp_only(ch->op)) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: ch%u: desc %u: opcode 0x%x "
                      "on a channel that is no QP's send queue\n", ch->idx,
                      ch->head, ch->op);
        return PLDMA_ST_BAD_OPCODE;
    } else if (!s->nic || node == 0 || node >= PLDMA_NET_MAX_NODES ||
               node == s->node_id) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: ch%u: desc %u: no node %u "
                      "to reach\n", ch->idx, ch->head, node);
        return PLDMA_ST_BAD_NODE;
    }
    /* (a SEND has no remote address: REMOTE_VA and RKEY are not used) */
    if (ch->op != PLDMA_OP_SEND && ch->op != PLDMA_OP_SEND_IMM) {
        r->rva = ldq_le_p(d + PLDMA_DESC_REMOTE_VA);
    }
    if ((ch->len == 0 && !pldma_net_zero_len_ok(ch->op, r->qp)) ||
        ch->len > s->max_transfer || r->rva + ch->len < r->rva ||
        (pldma_op_sends(ch->op) && ch->src + ch->len < ch->src) ||
        (ch->op == PLDMA_OP_RDMA_READ && ch->dst + ch->len < ch->dst)) {
        memset(r, 0, sizeof(*r));   /* nothing sent: the QP's PSN stays */
        return PLDMA_ST_BAD_LENGTH;
    }
    if (!qp) {
        r->node = node;
        r->psn = s->psn_next[ch->idx * PLDMA_NET_MAX_NODES + node];
        r->mtu = s->mtu;
        r->rto_us = s->rto_us;
        r->retry_count = s->retry_count;
        r->rnr_retry = s->rnr_retry;
    }
    r->rkey = ldl_le_p(d + PLDMA_DESC_RKEY);
    if (pldma_op_has_imm(ch->op)) {
        r->imm = ldl_le_p(d + PLDMA_DESC_IMM);
    }
    r->se = (ch->dflags & PLDMA_DF_SOLICITED) && pldma_op_qp_only(ch->op);
    r->nsegs = nsegs_of(r->mtu, ch->len);
    r->end_psn = (r->psn + r->nsegs) & PLDMA_PSN_MASK;
    return 0;
}

static void pldma_net_send_read_req(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = &ch->net;
    uint32_t seg = ch->done / r->mtu;
    PLDMAPkt p = {
        .opcode = OP_READ_REQ, .ackreq = true,
        .qpn = r->qp ? s->qps[r->qp - 1].dest_qpn : QPN_REQ(ch->idx),
        .psn = (r->psn + seg) & PLDMA_PSN_MASK, .node = r->node,
        .rkey = r->rkey,
        .qp = r->qp,
    };

    /*
     * Responses land where the segments do: restart on a segment.  One
     * request asks for at most PLDMA_NET_WINDOW responses, as a WRITE
     * keeps at most that many segments unacknowledged: the next request
     * goes out when they are in.  A message of any size then never floods
     * the link (and the peer's queue) with responses, and a request asked
     * again after a loss stays close to the responder's expected PSN.
     */
    ch->done = (uint64_t)seg * r->mtu;
    p.va = r->rva + ch->done;
    if (r->qp && ch->done < r->rd_end) {
        /*
         * Asked again inside the window (a loss, an RNR, a local fault):
         * a QP's responder answers a repeated READ only when it is the
         * original or a subset (IBA 9.7.5.1.2; rxe drops the rest), and
         * its expected PSN is already past the window.  Ask for what is
         * missing of the original, so that the next window's request
         * carries the PSN the responder expects.  The responses of the
         * stream asked before that still arrive are not a new gap: a
         * standard responder serves every duplicate whole, so asking
         * again for each of them would multiply the stream (a lost
         * request is the timer's).
         */
        p.dmalen = r->rd_end - ch->done;
        r->gap = true;
    } else {
        p.dmalen = MIN(ch->len - ch->done,
                       (uint64_t)PLDMA_NET_WINDOW * r->mtu);
        r->rd_end = ch->done + p.dmalen;
    }
    if (ch->done < r->sent_hw) {
        cnt(s, PLDMA_NCNT_RETX_SEGS);
    }
    r->sent_hw = MAX(r->sent_hw, ch->done + 1);
    pldma_net_tx(s, &p);
    r->wait = true;
    pldma_net_arm(ch, r->rto_us);
}

/* The link takes no frame now: wait for pldma_net_sent() (or the timer) */
static void pldma_net_tx_wait(PLDMAChannel *ch)
{
    ch->net.txq = true;
    ch->net.wait = true;
    if (!timer_pending(ch->net_timer)) {
        pldma_net_arm(ch, ch->net.rto_us);
    }
}

/* The opcode of a segment of a WRITE, WRITE with immediate or SEND */
static uint8_t req_opcode(uint8_t op, bool first, bool last)
{
    bool imm = pldma_op_has_imm(op);

    if (op == PLDMA_OP_SEND || op == PLDMA_OP_SEND_IMM) {
        return first ? (last ? (imm ? OP_SEND_ONLY_IMM : OP_SEND_ONLY)
                             : OP_SEND_FIRST)
                     : (last ? (imm ? OP_SEND_LAST_IMM : OP_SEND_LAST)
                             : OP_SEND_MIDDLE);
    }
    return first ? (last ? (imm ? OP_WRITE_ONLY_IMM : OP_WRITE_ONLY)
                         : OP_WRITE_FIRST)
                 : (last ? (imm ? OP_WRITE_LAST_IMM : OP_WRITE_LAST)
                         : OP_WRITE_MIDDLE);
}

/*
 * PHASE_XFER of a remote op: send what the window allows.  Returns false
 * when the channel has to wait (window full, everything sent, a local
 * fault), true when the descriptor is complete.
 */
bool pldma_net_xfer(PLDMAChannel *ch, uint64_t *budget)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = &ch->net;
    uint8_t buf[PLDMA_NET_MAX_MTU];

    if (r->qp && (s->qps[r->qp - 1].gen != r->qp_gen ||
                  s->qps[r->qp - 1].state != PLDMA_QPS_RTS)) {
        /* the QP left RTS (modified to ERR or RESET): flushed */
        pldma_net_finish(ch, PLDMA_ST_REMOTE_ERROR);
        return true;
    }
    if (r->wait || r->rnr) {
        /*
         * Waiting for the network.  A timer that expired while the channel
         * was parked on a local fault (FAULTED, STALLED) was ignored: arm
         * it again, or nothing would ever wake the channel.
         */
        if (!timer_pending(ch->net_timer)) {
            pldma_net_arm(ch, r->rnr ? r->rnr_us : r->rto_us);
        }
        return false;
    }
    if (ch->op == PLDMA_OP_RDMA_READ) {
        if (ch->done >= ch->len) {
            pldma_net_finish(ch, PLDMA_ST_SUCCESS);
            return true;
        }
        if (s->tx_blocked) {
            pldma_net_tx_wait(ch);
            return false;
        }
        pldma_net_send_read_req(ch);
        return false;
    }
    /* (a zero-length message: one packet, sent again after a rewind) */
    while (ch->done < ch->len || ch->len == 0) {
        uint32_t seg = ch->done / r->mtu;
        uint32_t n = MIN(r->mtu, ch->len - ch->done);
        bool first = seg == 0, last = ch->done + n == ch->len;
        uint64_t fva;
        PLDMAAccess a;
        PLDMAPkt p = {
            .qpn = r->qp ? s->qps[r->qp - 1].dest_qpn : QPN_REQ(ch->idx),
            .psn = (r->psn + seg) & PLDMA_PSN_MASK,
            .payload = buf, .plen = n, .node = r->node, .qp = r->qp,
        };

        if (ch->done >= r->acked &&
            ch->done - r->acked >= (uint64_t)PLDMA_NET_WINDOW * r->mtu) {
            r->wait = true;
            return false;
        }
        if (*budget == 0) {
            return false;
        }
        if (s->tx_blocked) {
            pldma_net_tx_wait(ch);
            return false;
        }
        a = n ? pldma_rw(s, ch, ch->src + ch->done, buf, n, false, &fva)
              : PLDMA_ACC_OK;
        if (a != PLDMA_ACC_OK) {
            /* a local fault: the channel's own path, then go on here */
            pldma_access_failed(ch, a, fva, false);
            return false;
        }
        p.opcode = req_opcode(ch->op, first, last);
        if (last && pldma_op_has_imm(ch->op)) {
            p.imm = r->imm;
        }
        p.se = last && r->se;
        if (first) {
            p.va = r->rva;
            p.rkey = r->rkey;
            p.dmalen = ch->len;
        }
        p.ackreq = last || (seg + 1) % PLDMA_NET_ACKREQ_EVERY == 0;
        if (ch->done < r->sent_hw) {
            cnt(s, PLDMA_NCNT_RETX_SEGS);
            s->net_cnt[PLDMA_NCNT_RETX_BYTES] += n;
        }
        pldma_net_tx(s, &p);
        if (!timer_pending(ch->net_timer)) {
            pldma_net_arm(ch, r->rto_us);
        }
        ch->done += n;
        r->sent_hw = MAX(r->sent_hw, ch->done);
        *budget -= MIN(*budget, n);
        if (ch->len == 0) {
            break;
        }
    }
    r->wait = true;         /* everything sent: the last ACK completes it */
    return false;
}

static void pldma_net_timer(void *opaque)
{
    PLDMAChannel *ch = opaque;
    PLDMACore *s = ch->s;
    PLDMANetReq *r = &ch->net;

    if (ch->state != PLDMA_STATE_RUNNING || ch->phase != PLDMA_PHASE_XFER ||
        !pldma_op_remote(ch->op)) {
        return;
    }
    if (r->rnr) {
        trace_pldma_net_rnr_expired(ch->idx, r->node, ch->done);
        pldma_net_rewind(ch, ch->done);
        return;
    }
    cnt(s, PLDMA_NCNT_TIMEOUTS);
    if (++r->retries > r->retry_count) {
        trace_pldma_net_gave_up(ch->idx, r->node, r->retries);
        pldma_net_finish(ch, PLDMA_ST_REMOTE_TIMEOUT);
        return;
    }
    trace_pldma_net_timeout(ch->idx, r->node, r->retries, r->acked);
    pldma_net_rewind(ch, pldma_op_sends(ch->op) ? r->acked : ch->done);
}

/* The requester channel a response is for, if it is in a remote op */
static PLDMAChannel *pldma_net_req_ch(PLDMACore *s, const PLDMAPkt *p)
{
    PLDMAChannel *ch;

    if (p->qp) {
        /* (the QP is in RTS and the frame from its peer: dispatch) */
        ch = &s->ch[s->qps[p->qp - 1].sq];
    } else if ((p->qpn & ~0xffU) != QPN_RESP(0) ||
               QPN_CH(p->qpn) >= s->num_channels) {
        return NULL;
    } else {
        ch = &s->ch[QPN_CH(p->qpn)];
    }
    if (ch->state == PLDMA_STATE_DISABLED || ch->phase != PLDMA_PHASE_XFER ||
        !pldma_op_remote(ch->op) || ch->net.node != p->node ||
        ch->net.qp != p->qp ||
        (p->qp && ch->net.qp_gen != s->qps[p->qp - 1].gen)) {
        return NULL;
    }
    return ch;
}

/*
 * A WRITE's bytes up to @upto have arrived at the responder.  They need
 * not be sent again: an ACK for segments sent before a rewind (a late
 * sequence NAK, a timeout) moves the point to send from past them too.
 */
static void pldma_net_acked(PLDMAChannel *ch, uint64_t upto)
{
    upto = MIN(upto, ch->len);
    if (upto > ch->net.acked) {
        ch->cnt_bytes += upto - ch->net.acked;
        ch->net.acked = upto;
    }
    if (ch->done < ch->net.acked) {
        ch->done = ch->net.acked;
    }
}

static uint32_t nak_status(uint8_t syndrome)
{
    switch (syndrome) {
    case AETH_NAK_ACCESS:
        return PLDMA_ST_REMOTE_ACCESS;
    case AETH_NAK_INVALID:
        return PLDMA_ST_REMOTE_INVALID;
    default:
        return PLDMA_ST_REMOTE_ERROR;
    }
}

static void pldma_net_rx_ack(PLDMACore *s, const PLDMAPkt *p)
{
    PLDMAChannel *ch = pldma_net_req_ch(s, p);
    PLDMANetReq *r;
    uint32_t mtu;
    int32_t seg;

    if (!ch) {
        rx_drop(s, p);
        return;
    }
    r = &ch->net;
    mtu = r->mtu;
    seg = psn_diff(p->psn, r->psn);     /* segment the answer is about */
    /*
     * An ACK may name the PSN just before the message (a resume, or the
     * last of the previous message); a NAK must name one of its own, or it
     * is a late answer to the previous message (e.g. to a duplicate READ
     * request the responder served again after it ended).
     */
    if (seg < (AETH_KIND(p->syndrome) ? 0 : -1) ||
        seg >= (int32_t)r->nsegs) {
        rx_drop(s, p);                  /* not about this message */
        return;
    }
    switch (AETH_KIND(p->syndrome)) {
    case 0:
        cnt(s, PLDMA_NCNT_ACK_RX);
        /*
         * "Resolved, resend now": on the node-id path an ACK with MSN
         * PLDMA_NET_RESUME_MSN; on a QP any ACK while an RNR NAK holds
         * the message (the responder ACKs the PSN before the one that
         * faulted, with its true MSN: a standard requester, rxe among
         * them, takes it for a duplicate ACK and waits out its RNR timer).
         */
        if (p->qp ? r->rnr : p->msn == PLDMA_NET_RESUME_MSN) {
            cnt(s, PLDMA_NCNT_RESUME_RX);
            if (r->rnr) {
                trace_pldma_net_resume(ch->idx, p->node, p->psn);
                timer_del(ch->net_timer);
                pldma_net_rewind(ch, ch->done);
            }
            return;
        }
        if (!pldma_op_sends(ch->op) || seg < 0) {
            return;
        }
        if ((uint64_t)(seg + 1) * mtu > r->acked) {
            pldma_net_acked(ch, (uint64_t)(seg + 1) * mtu);
            r->retries = 0;
            r->rnr_retries = 0;
            if (r->acked == ch->len) {
                pldma_net_finish(ch, PLDMA_ST_SUCCESS);
                return;
            }
            pldma_net_arm(ch, r->rto_us);
            if (r->wait && !r->rnr && ch->done < ch->len) {
                r->wait = false;
                qemu_bh_schedule(s->bh);
            }
        }
        return;
    case 1: {
        uint64_t off = (uint64_t)MAX(seg, 0) * mtu;

        cnt(s, PLDMA_NCNT_NAK_RX_RNR);
        cnt(s, PLDMA_NCNT_RNR_WAITS);
        if (++r->rnr_retries > r->rnr_retry) {
            pldma_net_finish(ch, PLDMA_ST_REMOTE_RNR);
            return;
        }
        /* everything before the segment that faulted has arrived */
        if (pldma_op_sends(ch->op)) {
            pldma_net_acked(ch, off);
            off = r->acked;
        } else {
            off = MIN(off, ch->done);
        }
        ch->done = off;
        r->wait = true;
        r->rnr = true;
        trace_pldma_net_rnr(ch->idx, p->node, p->psn, off,
                            p->syndrome & 0x1f);
        r->rnr_us = rnr_timer_10us[p->syndrome & 0x1f] * 10;
        pldma_net_arm(ch, r->rnr_us);
        return;
    }
    case 3:
        if (p->syndrome == AETH_NAK_SEQ) {
            cnt(s, PLDMA_NCNT_NAK_RX_SEQ);
            /* the responder expects segment seg: go back to it */
            if (pldma_op_sends(ch->op) && seg >= 0 && !r->rnr) {
                pldma_net_acked(ch, (uint64_t)seg * mtu);
                trace_pldma_net_go_back(ch->idx, p->node, p->psn, r->acked);
                pldma_net_rewind(ch, r->acked);
            }
            return;
        }
        cnt(s, p->syndrome == AETH_NAK_ACCESS ? PLDMA_NCNT_NAK_RX_ACCESS :
               p->syndrome == AETH_NAK_INVALID ? PLDMA_NCNT_NAK_RX_INVALID :
               PLDMA_NCNT_NAK_RX_OPERR);
        trace_pldma_net_nak(ch->idx, p->node, p->psn, p->syndrome);
        pldma_net_finish(ch, nak_status(p->syndrome));
        if (r->qp) {
            /*
             * Fatal to an RC requester (IBA 9.9.2: remote access, invalid
             * request, remote operational error; Linux rxe's completer
             * moves its QP to ERR): ERR, and what follows is flushed
             */
            pldma_qp_nak_err(s, r->qp - 1);
        }
        return;
    default:
        cnt(s, PLDMA_NCNT_RX_DROPPED);
        return;
    }
}

/* A READ response: its payload goes to the local destination */
static void pldma_net_rx_read_resp(PLDMACore *s, const PLDMAPkt *p)
{
    PLDMAChannel *ch = pldma_net_req_ch(s, p);
    PLDMANetReq *r;
    uint64_t fva;
    PLDMAAccess a;
    int32_t seg;
    bool last;

    if (!ch || ch->op != PLDMA_OP_RDMA_READ) {
        rx_drop(s, p);
        return;
    }
    r = &ch->net;
    if (p->has_aeth && AETH_KIND(p->syndrome) != 0) {
        rx_drop(s, p);
        return;
    }
    seg = psn_diff(p->psn, r->psn);
    if (seg < 0 || seg >= (int32_t)r->nsegs) {
        rx_drop(s, p);
        return;
    }
    if ((uint64_t)seg * r->mtu < ch->done) {
        cnt(s, PLDMA_NCNT_DUPS);
        return;
    }
    if (p->qp && (uint64_t)seg * r->mtu >= r->rd_end) {
        /* not asked for yet: outside the outstanding window */
        rx_drop(s, p);
        return;
    }
    if ((uint64_t)seg * r->mtu > ch->done || r->rnr ||
        ch->state != PLDMA_STATE_RUNNING) {
        cnt(s, PLDMA_NCNT_OOO);
        /* a response went missing: ask again from it, once per gap */
        if (!r->rnr && !r->gap && ch->state == PLDMA_STATE_RUNNING) {
            r->gap = true;
            trace_pldma_net_go_back(ch->idx, p->node, p->psn, ch->done);
            pldma_net_send_read_req(ch);
        }
        return;
    }
    last = ch->done + p->plen == ch->len;
    if ((!last && p->plen != r->mtu) || ch->done + p->plen > ch->len ||
        p->plen == 0) {
        rx_drop(s, p);
        return;
    }
    s->busy = true;
    a = pldma_rw(s, ch, ch->dst + ch->done, (void *)p->payload, p->plen,
                 true, &fva);
    s->busy = false;
    if (a != PLDMA_ACC_OK) {
        /* local fault: resolve it, then ask again from here */
        timer_del(ch->net_timer);
        r->wait = false;
        pldma_access_failed(ch, a, fva, true);
        pldma_update_irq(s);
        qemu_bh_schedule(s->bh);
        return;
    }
    ch->done += p->plen;
    ch->cnt_bytes += p->plen;
    r->gap = false;
    r->retries = 0;
    r->rnr_retries = 0;
    if (ch->done == ch->len) {
        pldma_net_finish(ch, PLDMA_ST_SUCCESS);
    } else if (ch->done >= r->rd_end) {
        pldma_net_send_read_req(ch);        /* the next window */
    } else {
        pldma_net_arm(ch, r->rto_us);
    }
}

/* ---- responder ---- */

/* Fill in where an answer of connection @c goes: its QP's peer, or node */
static void conn_dest(PLDMACore *s, const PLDMANetConn *c, PLDMAPkt *p)
{
    if (c->qp) {
        p->qp = c->qp;
        p->qpn = s->qps[c->qp - 1].dest_qpn;
    } else {
        p->node = conn_node(s, c);
        p->qpn = QPN_RESP(conn_ch(s, c));
    }
}

/*
 * An ACK or NAK of connection @c.  On a QP the AETH MSN is the count of
 * messages the responder completed (IBA C9-147/148); the node-id path
 * sends 0, or @msn for its "resolved, resend now".
 */
void pldma_net_answer(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                      uint8_t syndrome, uint32_t msn)
{
    PLDMAPkt p = {
        .opcode = OP_ACK, .psn = psn & PLDMA_PSN_MASK,
        .syndrome = syndrome, .msn = c->qp ? c->msn : msn,
    };

    conn_dest(s, c, &p);

    switch (syndrome) {
    case AETH_NAK_SEQ:
        cnt(s, PLDMA_NCNT_NAK_TX_SEQ);
        break;
    case AETH_NAK_ACCESS:
        cnt(s, PLDMA_NCNT_NAK_TX_ACCESS);
        break;
    case AETH_NAK_INVALID:
        cnt(s, PLDMA_NCNT_NAK_TX_INVALID);
        break;
    case AETH_NAK_OPERR:
        cnt(s, PLDMA_NCNT_NAK_TX_OPERR);
        break;
    default:
        cnt(s, AETH_KIND(syndrome) == 1 ? PLDMA_NCNT_NAK_TX_RNR
                                        : PLDMA_NCNT_ACK_TX);
        break;
    }
    pldma_net_tx(s, &p);
}

/*
 * A NAK that ends a request (remote access, invalid request, remote
 * operational error).  On a QP the responder then expects the PSN it
 * refused: a refused request (WRITE First, READ) moves nothing, one
 * refused in the middle ends its message there, and a request without a
 * valid key never moves the connection.  The requester's QP goes to ERR
 * on such a NAK (pldma_net_rx_ack(), as IBA and Linux rxe have it).
 */
void pldma_net_nak(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                   uint8_t syndrome)
{
    if (c->qp) {
        c->epsn = psn & PLDMA_PSN_MASK;
        c->msg_valid = false;
        c->msg_nak = 0;
        c->rd_active = false;
        /* a SEND in progress ends; its receive WQE stays posted */
        c->rmsg_valid = false;
        c->imm_wqe = false;
        /*
         * The NAK names the PSN expected: the segments of the refused
         * message that follow get no sequence NAK on top of it (a lost
         * NAK comes again when the requester resends that PSN)
         */
        c->nak_seq = true;
    }
    pldma_net_answer(s, c, psn, syndrome, 0);
}

/*
 * A WRITE refused after its First was taken: the node-id path skips the
 * rest of the message (and replays the NAK to its duplicates)
 */
static void pldma_net_msg_nak(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                              uint8_t syndrome)
{
    if (!c->qp) {
        c->msg_nak = syndrome;
        c->epsn = (c->msg_psn + c->msg_nsegs) & PLDMA_PSN_MASK;
    }
    pldma_net_nak(s, c, psn, syndrome);
}

/*
 * Check an access of connection @c to [va, va + len) with @rkey; 0 or a
 * NAK syndrome.  Through a QP the key must be of the QP's PD and the QP's
 * access flags must allow the access too.
 */
static uint8_t pldma_net_check_key(PLDMACore *s, PLDMANetConn *c,
                                   uint32_t rkey, uint64_t va,
                                   uint64_t len, uint32_t access)
{
    uint32_t idx = PLDMA_RKEY_INDEX(rkey);
    PLDMAQP *qp = conn_qp(s, c);
    PLDMAKey *k;

    if (idx >= PLDMA_NUM_KEYS) {
        return AETH_NAK_ACCESS;
    }
    k = &s->keys[idx];
    if (!k->valid || (k->gen & 0xffffff) != PLDMA_RKEY_GEN(rkey) ||
        !(k->access & access) || va < k->va || len > k->len ||
        va - k->va > k->len - len) {
        return AETH_NAK_ACCESS;
    }
    if (qp && (k->pasid_reg != qp->pd || !(qp->access & access))) {
        return AETH_NAK_ACCESS;
    }
    return 0;
}

/*
 * A reported responder fault of connection @c (a key's, or a receive
 * WQE's) waits at most resp-fault-timeout for its answer: arm the timer
 */
void pldma_net_fault_arm(PLDMACore *s, PLDMANetConn *c)
{
    c->fault_deadline = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                        (int64_t)s->resp_fault_ms * SCALE_MS;
    if (s->fault_timer && s->resp_fault_ms) {
        timer_mod_anticipate_ns(s->fault_timer, c->fault_deadline);
    }
}

/*
 * Access the memory of key @rkey for connection @c.  On a fault the
 * connection waits for its resolution: a stall the SMMU resumes, or a fault
 * record the driver answers with KEY_CMD_RESOLVED.  While a key's record
 * is unanswered, every access through that key waits for the same answer
 * (no second record); other keys are not held up.  A fault that nobody
 * can resolve (not stalled, and no record could be posted: the fault
 * queue is off or full) is PLDMA_ACC_BUSERR: the message ends with NAK
 * remote operational error instead of RNR NAKs without end.
 */
static PLDMAAccess pldma_net_resp_rw(PLDMACore *s, PLDMANetConn *c,
                                     uint32_t rkey, uint64_t va, void *buf,
                                     uint32_t len, bool is_write,
                                     uint32_t msg_off, uint32_t msg_len)
{
    PLDMAKey *k = &s->keys[PLDMA_RKEY_INDEX(rkey)];
    PLDMAChannel *rc = &s->resp;
    bool busy = s->busy;
    uint64_t fva;
    PLDMAAccess a;

    if (k->fault) {
        c->fault = true;
        c->fault_key = PLDMA_RKEY_INDEX(rkey);
        c->stalled = false;
        c->fault_deadline = k->fault_deadline;
        trace_pldma_net_resp_key_wait((uint32_t)(c - s->conns), rkey);
        return PLDMA_ACC_FAULT;
    }
    rc->pasid_reg = k->pasid_reg;
    rc->state = PLDMA_STATE_RUNNING;
    s->resp_conn = c;
    s->busy = true;
    a = pldma_rw(s, rc, va, buf, len, is_write, &fva);
    s->busy = busy;
    s->resp_conn = NULL;
    rc->state = PLDMA_STATE_DISABLED;
    if (a == PLDMA_ACC_OK || a == PLDMA_ACC_BUSERR) {
        return a;
    }
    cnt(s, PLDMA_NCNT_RX_FAULTS);
    c->fault = true;
    c->fault_key = PLDMA_RKEY_INDEX(rkey);
    c->stalled = a == PLDMA_ACC_STALLED;
    c->stag = rc->stag;
    trace_pldma_net_resp_fault((uint32_t)(c - s->conns), rkey, fva, is_write,
                               c->stalled);
    if (!c->stalled) {
        /*
         * Report it: a fault record in the queue, as a channel's (in
         * stall mode too, when the SMMU did not stall it)
         */
        rc->idx = PLDMA_FR_CH_REMOTE;
        rc->fault_info = PLDMA_FR_F_REMOTE | (is_write ? PLDMA_FR_F_WRITE : 0);
        rc->fault_va = fva;
        rc->fault_desc = rkey;
        rc->fault_done = msg_off;
        rc->len = msg_len;
        if (!pldma_post_fault(s, rc)) {
            c->fault = false;
            trace_pldma_net_resp_unresolvable((uint32_t)(c - s->conns), rkey,
                                              fva);
            pldma_update_irq(s);
            return PLDMA_ACC_BUSERR;
        }
        pldma_net_fault_arm(s, c);
        k->fault = true;
        k->fault_deadline = c->fault_deadline;
        pldma_update_irq(s);
    }
    return a;
}

/*
 * A new message ahead of the faulted one on the node-id path: its
 * requester gave the faulted message up (RNR retries, a CANCEL).  A fault
 * reported on a key lets the connection go: the key keeps waiting for its
 * answer (or its bound), the connection serves other keys.  A stall, or a
 * receive WQE's fault, stays with the connection.  A QP's requester
 * never skips a message: its faults are bounded in time instead.
 */
static bool conn_fault_detach(PLDMACore *s, PLDMANetConn *c,
                              const PLDMAPkt *p)
{
    if (c->qp || c->stalled || c->fault_recv ||
        (c->msg_valid && psn_diff(p->psn, c->msg_psn) < (int32_t)c->msg_nsegs &&
         psn_diff(p->psn, c->msg_psn) >= 0)) {
        return false;
    }
    trace_pldma_net_fault_detached(conn_node(s, c), conn_ch(s, c),
                                   c->fault_key, p->psn);
    c->fault = false;
    c->rd_hold = false;
    c->rd_active = false;
    return true;
}

static void pldma_net_rx_write(PLDMACore *s, PLDMANetConn *c,
                               const PLDMAPkt *p, uint32_t rch)
{
    uint32_t mtu = conn_mtu(s, c);
    uint8_t op = p->opcode;
    bool first = op == OP_WRITE_FIRST || op == OP_WRITE_ONLY ||
                 op == OP_WRITE_ONLY_IMM;
    bool last = op == OP_WRITE_LAST || op == OP_WRITE_ONLY ||
                op == OP_WRITE_LAST_IMM || op == OP_WRITE_ONLY_IMM;
    uint64_t off;
    uint8_t nak;
    PLDMAAccess a;
    int32_t d = psn_diff(p->psn, c->epsn);

    if (!c->synced && first) {
        /* the first message since our reset: its PSN is the expected one */
        d = 0;
    }
    if (d < 0) {
        /* a duplicate: answer again, it may have been our answer lost */
        cnt(s, PLDMA_NCNT_DUPS);
        if (!p->ackreq && !last) {
            return;
        }
        if (c->msg_valid && c->msg_nak &&
            psn_diff(p->psn, c->msg_psn) >= 0) {
            pldma_net_answer(s, c, c->msg_psn, c->msg_nak, 0);
        } else {
            pldma_net_answer(s, c, c->epsn - 1, AETH_ACK, 0);
        }
        return;
    }
    /*
     * Far ahead: garbage, unless it starts a new message, which may follow
     * a long message the requester abandoned (any PSN ahead of ours).  A
     * QP takes only the expected PSN: its requester never skips one.
     */
    if (c->qp && d > PLDMA_NET_PSN_AHEAD) {
        qp_drop(s, p, "PSN outside the window");
        return;
    }
    if (d > PLDMA_NET_PSN_AHEAD && !first) {
        cnt(s, PLDMA_NCNT_RX_DROPPED);
        return;
    }
    if (c->fault && d > 0 && first && conn_fault_detach(s, c, p)) {
        /* its requester gave the faulted message up: this one goes on */
    } else if (c->fault) {
        /* not ready yet: the same answer as the first time */
        cnt(s, PLDMA_NCNT_OOO);
        if (d == 0) {
            pldma_net_answer(s, c, c->epsn,
                             AETH_RNR(conn_rnr_timer(s, c)), 0);
        }
        return;
    }
    /* a new message may start ahead: its requester gave up on the last */
    if (d > 0 && (c->qp || !(first && (!c->msg_valid ||
                                       psn_diff(p->psn, c->msg_psn) >=
                                       (int32_t)c->msg_nsegs)))) {
        cnt(s, PLDMA_NCNT_OOO);
        if (!c->nak_seq) {
            c->nak_seq = true;
            pldma_net_answer(s, c, c->epsn, AETH_NAK_SEQ, 0);
        }
        return;
    }
    if (first) {
        /*
         * A zero-length WRITE (a QP's) needs no valid R_Key or VA (IBA
         * C9-88): nothing is accessed
         */
        nak = (p->dmalen == 0 && !c->qp) || p->dmalen > s->max_transfer ||
              (op == OP_WRITE_ONLY || op == OP_WRITE_ONLY_IMM) !=
              (p->dmalen <= mtu) || c->rmsg_valid   /* a SEND unfinished */
              ? AETH_NAK_INVALID
              : p->dmalen == 0 ? 0
              : pldma_net_check_key(s, c, p->rkey, p->va, p->dmalen,
                                    PLDMA_KEY_ACC_WRITE);
        if (nak) {
            /*
             * Refused before anything moves: not the expected PSN, not
             * the message that duplicates are answered for.  A request
             * without a valid key must not change a connection that a
             * peer with the key uses; the refused message's other
             * segments are ahead of the expected PSN and dropped.
             */
            trace_pldma_net_refused(p->node, rch, p->psn, p->rkey, p->va,
                                    p->dmalen, nak);
            pldma_net_nak(s, c, p->psn, nak);
            return;
        }
        c->msg_valid = true;
        c->msg_psn = p->psn;
        c->msg_va = p->va;
        c->msg_len = p->dmalen;
        c->msg_rkey = p->rkey;
        c->msg_nsegs = nsegs_of(mtu, p->dmalen);
        c->msg_nak = 0;
        c->epsn = p->psn;
        if (!c->synced) {
            trace_pldma_net_conn_sync(p->node, rch, p->psn);
            c->synced = true;
        }
    } else if (!c->msg_valid || c->msg_nak ||
               psn_diff(p->psn, c->msg_psn) < 0 ||
               psn_diff(p->psn, c->msg_psn) >= (int32_t)c->msg_nsegs) {
        /*
         * Not a segment of the current message: no message, a refused
         * one, or a PSN outside it, also before its First (an expected
         * PSN that went round the 24-bit space): refused, nothing moves
         */
        trace_pldma_net_refused(p->node, rch, p->psn, 0, 0, p->plen,
                                AETH_NAK_INVALID);
        pldma_net_nak(s, c, p->psn, AETH_NAK_INVALID);
        return;
    }
    off = (uint64_t)psn_diff(p->psn, c->msg_psn) * mtu;
    if (off + p->plen > c->msg_len || (!last && p->plen != mtu) ||
        (last && off + p->plen != c->msg_len)) {
        pldma_net_msg_nak(s, c, p->psn, AETH_NAK_INVALID);
        return;
    }
    /* the key, again: it may have been revoked since the first segment */
    nak = p->plen ? pldma_net_check_key(s, c, c->msg_rkey, c->msg_va + off,
                                        p->plen, PLDMA_KEY_ACC_WRITE) : 0;
    if (nak) {
        pldma_net_msg_nak(s, c, p->psn, nak);
        return;
    }
    /* WRITE with immediate: its Last/Only needs a receive WQE (recv.c) */
    if (p->has_imm && !pldma_recv_imm_take(s, c, p, rch)) {
        return;
    }
    a = p->plen ? pldma_net_resp_rw(s, c, c->msg_rkey, c->msg_va + off,
                                    (void *)p->payload, p->plen, true, off,
                                    c->msg_len)
                : PLDMA_ACC_OK;
    if (a == PLDMA_ACC_BUSERR) {
        pldma_net_msg_nak(s, c, p->psn, AETH_NAK_OPERR);
        return;
    }
    if (a != PLDMA_ACC_OK) {
        /*
         * Drop it; the requester resends from this segment.  On a QP the
         * RNR NAK names the expected PSN as a sequence NAK would: the
         * segments in flight behind it are dropped without a sequence NAK
         * on top (to rxe that means "resend now", ending its RNR wait)
         */
        c->fault_psn = p->psn;
        if (c->qp) {
            c->nak_seq = true;
        }
        pldma_net_answer(s, c, p->psn, AETH_RNR(conn_rnr_timer(s, c)), 0);
        return;
    }
    c->epsn = (p->psn + 1) & PLDMA_PSN_MASK;
    c->nak_seq = false;
    if (last) {
        c->msn = (c->msn + 1) & PLDMA_PSN_MASK;
    }
    /* ... and its CQE; no answer if the QP went to ERR (its CQ failed) */
    if (p->has_imm && !pldma_recv_imm_done(s, c, p, rch)) {
        return;
    }
    if (p->ackreq || last) {
        pldma_net_answer(s, c, p->psn, AETH_ACK, 0);
    }
}

/*
 * A QP's duplicate READ request @p repeats one it took: one of the READs
 * remembered whose PSNs hold @p's, with the same R_Key, and @p's range is
 * the original's or a part of it (IBA 9.7.5.1.x; Linux rxe's responder,
 * duplicate_request(), drops any other silently).  It is then served
 * from its own PSN, VA and length.
 */
static bool pldma_net_rd_dup_ok(PLDMACore *s, const PLDMANetConn *c,
                                const PLDMAPkt *p)
{
    uint32_t mtu = conn_mtu(s, c), i, k;

    for (i = 0; i < PLDMA_NET_RD_ORIG; i++) {
        int32_t seg;

        /* the newest first */
        k = (c->rdo_next + PLDMA_NET_RD_ORIG - 1 - i) % PLDMA_NET_RD_ORIG;
        seg = psn_diff(p->psn, c->rdo_psn[k]);
        if (!c->rdo_len[k] || seg < 0 ||
            seg >= (int32_t)nsegs_of(mtu, c->rdo_len[k])) {
            continue;
        }
        return p->rkey == c->rdo_rkey[k] && p->va >= c->rdo_va[k] &&
               p->dmalen <= c->rdo_len[k] &&
               p->va - c->rdo_va[k] <= c->rdo_len[k] - p->dmalen;
    }
    return false;
}

static void pldma_net_rx_read_req(PLDMACore *s, PLDMANetConn *c,
                                  const PLDMAPkt *p, uint32_t rch)
{
    int32_t d = psn_diff(p->psn, c->epsn);
    uint8_t nak;

    if (!c->synced) {
        d = 0;          /* the first request since our reset */
    }
    if (c->qp && d < 0 && !pldma_net_rd_dup_ok(s, c, p)) {
        /* not a repeat of a READ taken, or more than it: dropped */
        qp_drop(s, p, "duplicate READ beyond the original");
        return;
    }
    /* the node-id path: an old duplicate */
    if (!c->qp && d < -PLDMA_NET_PSN_AHEAD) {
        cnt(s, PLDMA_NCNT_RX_DROPPED);
        return;
    }
    if (c->fault && c->rd_hold && d < 0) {
        /*
         * The requester asks again for (the rest of) the READ whose
         * response stream is held: serve that request once the fault is
         * resolved, and say nothing now (no RNR inside a READ's responses)
         */
    } else if (c->fault && d > 0 && !c->qp && conn_fault_detach(s, c, p)) {
        /* its requester gave the faulted message up: this one goes on */
    } else if (c->fault && !(c->qp && d > 0)) {
        cnt(s, PLDMA_NCNT_OOO);
        pldma_net_answer(s, c, p->psn, AETH_RNR(conn_rnr_timer(s, c)), 0);
        return;
    }
    if (d < 0) {
        cnt(s, PLDMA_NCNT_DUPS);    /* answered again: reads are idempotent */
    } else if (d > PLDMA_NET_PSN_AHEAD && c->qp) {
        qp_drop(s, p, "PSN outside the window");
        return;
    } else if (d > 0 && c->qp) {
        /* a QP takes the expected PSN only: a sequence NAK, nothing moves */
        cnt(s, PLDMA_NCNT_OOO);
        if (!c->nak_seq) {
            c->nak_seq = true;
            pldma_net_answer(s, c, c->epsn, AETH_NAK_SEQ, 0);
        }
        return;
    } else if (d > 0) {
        cnt(s, PLDMA_NCNT_OOO);     /* a new message, the last abandoned */
    }
    nak = p->dmalen == 0 || p->dmalen > s->max_transfer ? AETH_NAK_INVALID
          : pldma_net_check_key(s, c, p->rkey, p->va, p->dmalen,
                                PLDMA_KEY_ACC_READ);
    if (nak) {
        trace_pldma_net_refused(p->node, rch, p->psn, p->rkey, p->va,
                                p->dmalen, nak);
        /* refused: nothing moves, neither epsn nor a READ being served */
        if (c->qp) {
            pldma_net_nak(s, c, p->psn, nak);
        } else {
            pldma_net_answer(s, c, p->psn, nak, 0);
        }
        return;
    }
    if (!c->synced) {
        trace_pldma_net_conn_sync(p->node, rch, p->psn);
        c->synced = true;
    }
    c->rd_active = true;
    c->rd_first_psn = p->psn;
    c->rd_psn = p->psn;
    c->rd_va = p->va;
    c->rd_len = p->dmalen;
    c->rd_off = 0;
    c->rd_rkey = p->rkey;
    /*
     * A QP's READ is served whole, as IBA has it: a standard requester
     * (Linux rxe) asks for the rest of a shortened READ only when its
     * retransmit timer fires.  The request came from the QP's peer (its
     * IP, the QPN's generation, a PSN in the window) with a key that
     * allows the READ, the responses go to the QP's DEST_MAC, never to a
     * frame's source, and the bottom half sends them within its budget,
     * in turn with the local channels.  The node-id path, which anyone on
     * the link can address, sends at most a window per request, as our
     * requester asks: one frame there must not make us send a gigabyte.
     */
    c->rd_stop = c->qp ? p->dmalen
                       : MIN(p->dmalen,
                             (uint64_t)PLDMA_NET_WINDOW * conn_mtu(s, c));
    if (c->rd_stop < c->rd_len) {
        trace_pldma_net_read_window(p->node, rch, p->psn, p->dmalen,
                                    c->rd_stop);
    }
    if (d >= 0) {
        c->epsn = (p->psn + nsegs_of(conn_mtu(s, c), p->dmalen)) &
                  PLDMA_PSN_MASK;
        c->nak_seq = false;
        c->msn = (c->msn + 1) & PLDMA_PSN_MASK;
        if (c->qp) {
            /* the original its duplicates are checked against */
            c->rdo_psn[c->rdo_next] = p->psn;
            c->rdo_va[c->rdo_next] = p->va;
            c->rdo_len[c->rdo_next] = p->dmalen;
            c->rdo_rkey[c->rdo_next] = p->rkey;
            c->rdo_next = (c->rdo_next + 1) % PLDMA_NET_RD_ORIG;
        }
    }
    qemu_bh_schedule(s->bh);
}

/* Send READ responses, from the bottom half, within @budget bytes */
bool pldma_net_bh(PLDMACore *s, uint64_t *budget)
{
    uint8_t buf[PLDMA_NET_MAX_MTU];
    bool more = false;
    uint32_t i;

    if (!s->nic) {
        return false;
    }
    for (i = 0; i < NET_CONNS(s); i++) {
        PLDMANetConn *c = &s->conns[i];

        while (c->rd_active && !c->fault && *budget && !s->tx_blocked) {
            uint32_t n = MIN(conn_mtu(s, c), c->rd_len - c->rd_off);
            bool first = c->rd_off == 0, last = c->rd_off + n == c->rd_len;
            PLDMAPkt p = {
                .psn = c->rd_psn, .payload = buf, .plen = n,
                .syndrome = AETH_ACK, .msn = c->qp ? c->msn : 0,
            };
            PLDMAAccess a;

            conn_dest(s, c, &p);
            if (pldma_net_check_key(s, c, c->rd_rkey, c->rd_va + c->rd_off, n,
                                    PLDMA_KEY_ACC_READ)) {
                c->rd_active = false;           /* revoked meanwhile */
                pldma_net_nak(s, c, c->rd_psn, AETH_NAK_ACCESS);
                break;
            }
            a = pldma_net_resp_rw(s, c, c->rd_rkey, c->rd_va + c->rd_off,
                                  buf, n, false, c->rd_off, c->rd_len);
            if (a == PLDMA_ACC_BUSERR) {
                c->rd_active = false;
                pldma_net_nak(s, c, c->rd_psn, AETH_NAK_OPERR);
                break;
            }
            if (a != PLDMA_ACC_OK && first) {
                /*
                 * Before the first response: an RNR NAK of the request,
                 * whose requester asks again from its start
                 */
                c->rd_active = false;
                c->fault_psn = c->rd_psn;
                pldma_net_answer(s, c, c->rd_psn,
                                 AETH_RNR(conn_rnr_timer(s, c)), 0);
                break;
            }
            if (a != PLDMA_ACC_OK) {
                /*
                 * Inside the response stream, where an RC requester takes
                 * no RNR NAK (Linux rxe's completer ends the QP): hold the
                 * stream, go on from this response when the fault is
                 * resolved.  A requester that times out meanwhile asks
                 * again for the rest, which is served then.
                 */
                c->rd_hold = true;
                c->fault_psn = c->rd_psn;
                trace_pldma_net_read_held(conn_node(s, c), conn_ch(s, c),
                                          c->rd_psn, c->rd_off);
                break;
            }
            p.opcode = first ? (last ? OP_READ_RESP_ONLY : OP_READ_RESP_FIRST)
                             : (last ? OP_READ_RESP_LAST
                                     : OP_READ_RESP_MIDDLE);
            pldma_net_tx(s, &p);
            c->rd_off += n;
            c->rd_psn = (c->rd_psn + 1) & PLDMA_PSN_MASK;
            *budget -= MIN(*budget, n);
            if (last || c->rd_off >= c->rd_stop) {
                c->rd_active = false;
            }
        }
        more |= c->rd_active && !c->fault && !s->tx_blocked;
    }
    return more;
}

/* The fault of connection @c is resolved: let its requester go on */
void pldma_net_conn_resolved(PLDMACore *s, PLDMANetConn *c, bool ok)
{
    bool recv = c->fault_recv;

    trace_pldma_net_resolved(conn_node(s, c), conn_ch(s, c), c->epsn, ok);
    c->fault = false;
    c->stalled = false;
    c->fault_recv = false;
    if (c->rd_hold) {
        c->rd_hold = false;
        if (ok) {
            /* the held READ response stream goes on (pldma_net_bh) */
            qemu_bh_schedule(s->bh);
            return;
        }
    }
    if (!ok) {
        /* a receive WQE's buffer: the WQE completes in error (recv.c) */
        if (recv && !pldma_recv_failed(s, c)) {
            return;             /* its QP went to ERR: nothing to answer */
        }
        /* the OS could not make the page present: end the message */
        if (c->qp) {
            pldma_net_nak(s, c, c->fault_psn, AETH_NAK_OPERR);
            return;
        }
        c->msg_nak = AETH_NAK_OPERR;
        c->rd_active = false;
        pldma_net_answer(s, c, c->epsn, AETH_NAK_OPERR, 0);
        return;
    }
    if (s->rnr_resume) {
        /*
         * The PSN before the one that faulted.  On a READ the expected
         * PSN is past the whole request already, and an ACK of the READ's
         * own PSN would tell a standard requester (Linux rxe) that the
         * READ is done: it completes it with none of the data.
         */
        cnt(s, PLDMA_NCNT_RESUME_TX);
        pldma_net_answer(s, c, (c->qp ? c->fault_psn : c->epsn) - 1,
                         AETH_ACK, PLDMA_NET_RESUME_MSN);
    }
}

/*
 * The bound of reported responder faults (resp-fault-timeout): a key's
 * fault record, or a receive WQE's, that is still unanswered ends as if
 * the driver had answered FAILED: the connections waiting for it NAK
 * their message (remote operational error), so the requester completes
 * it in error instead of RNR NAKs without end; a later answer finds
 * nothing to resolve.  Stalls are the SMMU's and the OS's to end.
 */
static void pldma_net_fault_timer(void *opaque)
{
    PLDMACore *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), next = INT64_MAX;
    uint32_t i, j;

    if (!s->conns) {
        return;
    }
    for (i = 0; i < PLDMA_NUM_KEYS; i++) {
        PLDMAKey *k = &s->keys[i];

        if (!k->fault) {
            continue;
        }
        if (k->fault_deadline > now) {
            next = MIN(next, k->fault_deadline);
            continue;
        }
        trace_pldma_net_fault_expired(i, 0);
        k->fault = false;
        for (j = 0; j < NET_CONNS(s); j++) {
            PLDMANetConn *c = &s->conns[j];

            if (c->fault && !c->stalled && !c->fault_recv &&
                c->fault_key == i) {
                pldma_net_conn_resolved(s, c, false);
            }
        }
    }
    for (j = 0; j < NET_CONNS(s); j++) {
        PLDMANetConn *c = &s->conns[j];

        if (!c->fault || c->stalled || !c->fault_recv) {
            continue;
        }
        if (c->fault_deadline > now) {
            next = MIN(next, c->fault_deadline);
            continue;
        }
        trace_pldma_net_fault_expired(j, 1);
        pldma_net_conn_resolved(s, c, false);
    }
    if (next != INT64_MAX) {
        timer_mod_ns(s->fault_timer, next);
    }
    pldma_update_irq(s);
    qemu_bh_schedule(s->bh);
}

bool pldma_net_resumed(PLDMACore *s, uint16_t stag, SMMUStallResponse resp)
{
    uint32_t i;

    if (!s->nic) {
        return false;
    }
    for (i = 0; i < NET_CONNS(s); i++) {
        PLDMANetConn *c = &s->conns[i];

        if (c->fault && c->stalled && c->stag == stag) {
            pldma_net_conn_resolved(s, c, resp == SMMU_STALL_RETRY);
            return true;
        }
    }
    return false;
}

/*
 * A frame for a QP (its BTH destination QPN is not one of the node-id
 * path's): taken only by the QP it names, index and generation, in a
 * state that receives it (RTR or RTS for requests, RTS for responses),
 * from the QP's peer (IPv4 source = its destination IP).  Then the PSN
 * window decides, as on the node-id path, except that a request must
 * have the expected PSN.  Anything else is dropped and counted, nothing
 * moves.
 */
static void pldma_net_rx_qp(PLDMACore *s, PLDMAPkt *p)
{
    uint32_t idx = p->qpn & 0xff;
    bool resp = p->opcode >= OP_READ_RESP_FIRST;
    PLDMAQP *qp;

    if (idx >= s->num_qps || s->qps[idx].gen != p->qpn >> 8) {
        qp_drop(s, p, "no such QP");
        return;
    }
    qp = &s->qps[idx];
    if (qp->state != PLDMA_QPS_RTS &&
        (resp || qp->state != PLDMA_QPS_RTR)) {
        qp_drop(s, p, "QP not in a receiving state");
        return;
    }
    if (p->src_ip != qp->dest_ip) {
        qp_drop(s, p, "not from the QP's peer");
        return;
    }
    p->qp = idx + 1;
    p->node = 0;
    if (p->opcode == OP_ACK) {
        pldma_net_rx_ack(s, p);
    } else if (resp) {
        pldma_net_rx_read_resp(s, p);
    } else if (p->opcode == OP_READ_REQ) {
        pldma_net_rx_read_req(s, &s->conns[PLDMA_NET_CONNS + idx], p, idx);
    } else if (p->opcode <= OP_SEND_ONLY_IMM) {
        pldma_recv_rx_send(s, &s->conns[PLDMA_NET_CONNS + idx], p, idx);
    } else {
        pldma_net_rx_write(s, &s->conns[PLDMA_NET_CONNS + idx], p, idx);
    }
}

static ssize_t pldma_net_receive(NetClientState *nc, const uint8_t *buf,
                                 size_t size)
{
    PLDMACore *s = qemu_get_nic_opaque(nc);
    PLDMAPkt p = { 0 };

    if (s->busy || s->in_rx) {
        return 0;               /* queued: flushed after the run */
    }
    /* not RoCEv2 for this node: the Ethernet function's (eth.c) */
    if (pldma_eth_rx(s, buf, size)) {
        return MAX(size, 1);
    }
    cnt(s, PLDMA_NCNT_RX_FRAMES);
    if (!pldma_net_parse(s, buf, size, &p)) {
        cnt(s, PLDMA_NCNT_RX_DROPPED);
        trace_pldma_net_drop(size);
        /*
         * Consumed, even when empty: 0 would tell the net layer that we
         * cannot receive now, and it would queue every later frame until
         * a flush.
         */
        return MAX(size, 1);
    }
    trace_pldma_net_rx(p.node, p.opcode, p.qpn, p.psn, p.ackreq, p.syndrome,
                       p.plen);
    s->in_rx = true;
    if ((p.qpn >> 8) != (QPN_REQ(0) >> 8) &&
        (p.qpn >> 8) != (QPN_RESP(0) >> 8)) {
        pldma_net_rx_qp(s, &p);
    } else if (p.node == 0) {
        cnt(s, PLDMA_NCNT_RX_DROPPED);      /* not from a node */
    } else {
        /* the sender's MAC, to answer it (and reach it through a switch) */
        memcpy(s->peer_mac[p.node], p.smac, 6);
        s->peer_mac_known[p.node] = true;
        if (p.opcode == OP_ACK) {
            pldma_net_rx_ack(s, &p);
        } else if (p.opcode >= OP_READ_RESP_FIRST) {
            pldma_net_rx_read_resp(s, &p);
        } else if (p.opcode <= OP_SEND_ONLY_IMM || p.has_imm) {
            cnt(s, PLDMA_NCNT_RX_DROPPED);  /* SEND, immediate: QPs only */
        } else if ((p.qpn & ~0xffU) == QPN_REQ(0) &&
                   QPN_CH(p.qpn) < PLDMA_MAX_CHANNELS) {
            uint32_t rch = QPN_CH(p.qpn);
            PLDMANetConn *c = &s->conns[p.node * PLDMA_MAX_CHANNELS + rch];

            if (p.opcode == OP_READ_REQ) {
                pldma_net_rx_read_req(s, c, &p, rch);
            } else {
                pldma_net_rx_write(s, c, &p, rch);
            }
        } else {
            cnt(s, PLDMA_NCNT_RX_DROPPED);
        }
    }
    s->in_rx = false;
    pldma_update_irq(s);
    return size;
}

static bool pldma_net_can_receive(NetClientState *nc)
{
    PLDMACore *s = qemu_get_nic_opaque(nc);

    return s->vm_running && !s->busy;
}

void pldma_net_flush(PLDMACore *s)
{
    if (s->nic) {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
}

/* ---- registers ---- */

/*
 * The generation of a newly registered key: 24 random bits, nonzero and
 * never the one the index had, so an rkey cannot be guessed from the
 * last one nor reused after a revoke.
 */
static uint32_t pldma_net_key_gen(uint32_t old)
{
    uint32_t g;

    qemu_guest_getrandom_nofail(&g, sizeof(g));
    g &= 0xffffff;
    if (g == 0 || g == (old & 0xffffff)) {
        g = ((old & 0xffffff) % 0xffffff) + 1;  /* bounded, no loop */
    }
    return g;
}

/* QP @idx enters RTR: its responder expects RQ_PSN, nothing else */
void pldma_net_qp_connect(PLDMACore *s, uint32_t idx)
{
    PLDMANetConn *c = &s->conns[PLDMA_NET_CONNS + idx];

    pldma_net_qp_clear(s, idx);
    c->qp = idx + 1;
    c->synced = true;
    c->epsn = s->qps[idx].rq_psn & PLDMA_PSN_MASK;
    trace_pldma_net_conn_sync(0, idx, c->epsn);
}

/*
 * QP @idx leaves RTR/RTS (to ERR or RESET): its responder forgets the
 * message and READ in progress.  A fault being resolved stays marked
 * until its resolution arrives (a stall the SMMU holds); it answers
 * nothing then, since the QP no longer sends.
 */
void pldma_net_qp_clear(PLDMACore *s, uint32_t idx)
{
    PLDMANetConn *c;

    if (!s->conns) {
        return;
    }
    c = &s->conns[PLDMA_NET_CONNS + idx];
    if (c->fault && c->stalled) {
        bool st = c->stalled;
        uint16_t stag = c->stag;

        memset(c, 0, sizeof(*c));
        c->fault = true;
        c->stalled = st;
        c->stag = stag;
    } else {
        memset(c, 0, sizeof(*c));
    }
}

static void pldma_key_cmd(PLDMACore *s, uint32_t cmd)
{
    PLDMAKey *k, *st = &s->key_stage;
    uint32_t i;

    if (s->key_sel >= PLDMA_NUM_KEYS) {
        s->key_status = PLDMA_KEY_ST_BAD_INDEX;
        return;
    }
    k = &s->keys[s->key_sel];
    s->key_status = PLDMA_KEY_ST_OK;
    switch (cmd) {
    case PLDMA_KEY_CMD_REGISTER:
        if (!st->len || st->va + st->len < st->va) {
            s->key_status = PLDMA_KEY_ST_BAD_RANGE;
        } else if (!pldma_pasid_reg_valid(s, st->pasid_reg)) {
            s->key_status = PLDMA_KEY_ST_BAD_PASID;
        } else if (!st->access || (st->access & ~PLDMA_KEY_ACC_MASK)) {
            s->key_status = PLDMA_KEY_ST_BAD_ACCESS;
        } else {
            k->gen = pldma_net_key_gen(k->gen);
            k->valid = true;
            k->pasid_reg = st->pasid_reg;
            k->va = st->va;
            k->len = st->len;
            k->access = st->access;
            k->fault = false;
        }
        break;
    case PLDMA_KEY_CMD_REVOKE:
        /* (the generation stays: the next REGISTER takes another one) */
        k->valid = false;
        k->fault = false;
        /* a fault being resolved for it ends: nothing more is written */
        for (i = 0; i < NET_CONNS(s); i++) {
            PLDMANetConn *c = &s->conns[i];

            if (c->fault && !c->stalled && !c->fault_recv &&
                c->fault_key == s->key_sel) {
                pldma_net_conn_resolved(s, c, false);
            }
        }
        break;
    case PLDMA_KEY_CMD_RESOLVED:
    case PLDMA_KEY_CMD_FAILED:
        k->fault = false;
        for (i = 0; i < NET_CONNS(s); i++) {
            PLDMANetConn *c = &s->conns[i];

            if (c->fault && !c->stalled && !c->fault_recv &&
                c->fault_key == s->key_sel) {
                pldma_net_conn_resolved(s, c, cmd == PLDMA_KEY_CMD_RESOLVED);
            }
        }
        qemu_bh_schedule(s->bh);
        break;
    default:
        s->key_status = PLDMA_KEY_ST_BAD_CMD;
        return;
    }
    trace_pldma_net_key(s->key_sel, cmd, s->key_status,
                        k->valid ? PLDMA_RKEY(k->gen, s->key_sel) : 0,
                        k->va, k->len, k->access);
}

bool pldma_net_read(PLDMACore *s, hwaddr addr, uint64_t *val)
{
    PLDMAKey *k;

    if (pldma_qp_read(s, addr, val) || pldma_cq_read(s, addr, val)) {
        return true;
    }
    if (addr >= PLDMA_NET_CNT(0) && addr < PLDMA_NET_CNT(PLDMA_NCNT_NUM)) {
        *val = s->net_cnt[(addr - PLDMA_NET_CNT(0)) / 4];
        return true;
    }
    switch (addr) {
    case PLDMA_NET_NODE:
        *val = s->nic ? s->node_id : 0;
        return true;
    case PLDMA_NET_MTU:
        *val = s->nic ? s->mtu : 0;
        return true;
    case PLDMA_KEY_SEL:
        *val = s->key_sel;
        return true;
    case PLDMA_KEY_PASID:
        *val = s->key_stage.pasid_reg;
        return true;
    case PLDMA_KEY_VA_LO:
        *val = (uint32_t)s->key_stage.va;
        return true;
    case PLDMA_KEY_VA_HI:
        *val = s->key_stage.va >> 32;
        return true;
    case PLDMA_KEY_LEN_LO:
        *val = (uint32_t)s->key_stage.len;
        return true;
    case PLDMA_KEY_LEN_HI:
        *val = s->key_stage.len >> 32;
        return true;
    case PLDMA_KEY_ACCESS:
        *val = s->key_stage.access;
        return true;
    case PLDMA_KEY_RKEY:
        k = s->key_sel < PLDMA_NUM_KEYS ? &s->keys[s->key_sel] : NULL;
        *val = k && k->valid ? PLDMA_RKEY(k->gen, s->key_sel) : 0;
        return true;
    case PLDMA_KEY_STATUS:
        *val = s->key_status;
        return true;
    default:
        return false;
    }
}

bool pldma_net_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    if (pldma_qp_write(s, addr, val) || pldma_cq_write(s, addr, val)) {
        return true;
    }
    switch (addr) {
    case PLDMA_KEY_SEL:
        s->key_sel = val;
        return true;
    case PLDMA_KEY_PASID:
        s->key_stage.pasid_reg = val;
        return true;
    case PLDMA_KEY_VA_LO:
        s->key_stage.va = deposit64(s->key_stage.va, 0, 32, val);
        return true;
    case PLDMA_KEY_VA_HI:
        s->key_stage.va = deposit64(s->key_stage.va, 32, 32, val);
        return true;
    case PLDMA_KEY_LEN_LO:
        s->key_stage.len = deposit64(s->key_stage.len, 0, 32, val);
        return true;
    case PLDMA_KEY_LEN_HI:
        s->key_stage.len = deposit64(s->key_stage.len, 32, 32, val);
        return true;
    case PLDMA_KEY_ACCESS:
        s->key_stage.access = val;
        return true;
    case PLDMA_KEY_CMD:
        if (!s->nic) {
            s->key_status = PLDMA_KEY_ST_BAD_CMD;
            return true;
        }
        pldma_key_cmd(s, val);
        return true;
    default:
        return false;
    }
}

/* ---- life cycle ---- */

void pldma_net_reset(PLDMACore *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        memset(&s->ch[i].net, 0, sizeof(s->ch[i].net));
        if (s->ch[i].net_timer) {
            timer_del(s->ch[i].net_timer);
        }
    }
    /*
     * Keys keep their generation: the next REGISTER of an index takes
     * another one, so an old rkey stays stale after a reset
     */
    for (i = 0; i < PLDMA_NUM_KEYS; i++) {
        s->keys[i].valid = false;
        s->keys[i].fault = false;
    }
    if (s->fault_timer) {
        timer_del(s->fault_timer);
    }
    memset(&s->key_stage, 0, sizeof(s->key_stage));
    s->key_sel = 0;
    s->key_status = 0;
    memset(s->net_cnt, 0, sizeof(s->net_cnt));
    g_free(s->held);
    s->held = NULL;
    /*
     * The responder forgets its connections; a connection's first request
     * after this sets its expected PSN (pldma_net_rx_write()).  The
     * requester's next PSNs stay where the channel resets (and
     * pldma_net_ch_end()) left them, past every PSN already used: a peer
     * that still expects the old ones takes the new messages for new
     * messages, never for duplicates of the old ones.
     */
    if (s->conns) {
        memset(s->conns, 0, sizeof(PLDMANetConn) *
               (PLDMA_NET_CONNS + PLDMA_MAX_QPS));
    }
    /* every QP to RESET, with a new QPN: its old frames never match */
    pldma_qp_reset(s);
    s->x_rng = s->node_id;
    s->resp.s = s;
    s->resp.idx = PLDMA_FR_CH_REMOTE;
    s->resp.state = PLDMA_STATE_DISABLED;
    /*
     * If the receive handler ever told the net layer "not now" (it returns
     * 0 during a run), frames wait in the queue for a flush: deliver them,
     * a reset must bring the link back whatever happened before.
     */
    if (s->nic && s->vm_running) {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
}

static void pldma_net_cleanup(NetClientState *nc)
{
    PLDMACore *s = qemu_get_nic_opaque(nc);

    s->nic = NULL;
}

static NetClientInfo pldma_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = pldma_net_can_receive,
    .receive = pldma_net_receive,
    .link_status_changed = pldma_eth_link_changed,
    .cleanup = pldma_net_cleanup,
};

bool pldma_net_realize(PLDMACore *s, NICConf *conf, Error **errp)
{
    DeviceState *dev = s->dev;
    uint32_t i;

    if (s->num_qps < 1 || s->num_qps > PLDMA_MAX_QPS) {
        error_setg(errp, "num-qps must be between 1 and %d", PLDMA_MAX_QPS);
        return false;
    }
    if (!pldma_cq_realize(s, errp)) {
        return false;
    }
    pldma_qp_realize(s);
    if (!conf || !conf->peers.ncs[0]) {
        return true;            /* no netdev: a local engine */
    }
    if (s->node_id == 0 || s->node_id >= PLDMA_NET_MAX_NODES) {
        error_setg(errp, "node-id must be between 1 and %d with a netdev",
                   PLDMA_NET_MAX_NODES - 1);
        return false;
    }
    if (s->mtu < 256 || s->mtu > PLDMA_NET_MAX_MTU || !is_power_of_2(s->mtu)) {
        error_setg(errp, "mtu must be a power of two between 256 and %d",
                   PLDMA_NET_MAX_MTU);
        return false;
    }
    if (s->rnr_timer > 31) {
        error_setg(errp, "rnr-timer is a 5-bit IB RNR timer code (0..31)");
        return false;
    }
    if (s->rto_us == 0 || s->rto_us > 10 * 1000 * 1000) {
        error_setg(errp, "retransmit-timeout must be 1 us .. 10 s");
        return false;
    }
    /*
     * QEMU's default MAC is the same in every process, which a learning
     * switch cannot tell apart: without mac=, node n is 52:54:00:4c:44:n
     */
    if (buffer_is_zero(conf->macaddr.a, sizeof(conf->macaddr.a))) {
        static const uint8_t base[6] = { 0x52, 0x54, 0x00, 0x4c, 0x44, 0 };

        memcpy(conf->macaddr.a, base, sizeof(base));
        conf->macaddr.a[5] = s->node_id;
    }
    s->conf = conf;
    s->conns = g_new0(PLDMANetConn, PLDMA_NET_CONNS + PLDMA_MAX_QPS);
    s->psn_next = g_new0(uint32_t, PLDMA_NET_MAX_NODES * PLDMA_MAX_CHANNELS);
    s->nic = qemu_new_nic(&pldma_net_info, conf,
                          object_get_typename(OBJECT(dev)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), conf->macaddr.a);
    pldma_eth_realize(s);
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        s->ch[i].net_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, pldma_net_timer,
                                          &s->ch[i]);
    }
    s->fault_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, pldma_net_fault_timer,
                                  s);
    pldma_net_reset(s);
    return true;
}

void pldma_net_unrealize(PLDMACore *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        if (s->ch[i].net_timer) {
            timer_free(s->ch[i].net_timer);
            s->ch[i].net_timer = NULL;
        }
    }
    if (s->fault_timer) {
        timer_free(s->fault_timer);
        s->fault_timer = NULL;
    }
    if (s->nic) {
        qemu_del_nic(s->nic);
        s->nic = NULL;
    }
    pldma_eth_unrealize(s);
    g_free(s->conns);
    s->conns = NULL;
    g_free(s->psn_next);
    s->psn_next = NULL;
    g_free(s->held);
    s->held = NULL;
}

/*
 * ---- migration ----
 *
 * A device with a link migrates with everything that defines its
 * connections and the messages in flight: keys, the node-id path's PSNs,
 * the responder connections (expected PSN, MSN, the WRITE, SEND or READ
 * response stream in progress, a fault being resolved), and each
 * channel's requester state (PSNs, bytes sent and acknowledged, retry
 * counters, the retransmit or RNR timer's deadline).  Frames are not:
 * what the net layer or the socket held when the source stopped is lost,
 * and so is a frame held back by x-reorder-every.  The requesters resume
 * from the last acknowledged PSN on the destination (a WRITE or SEND
 * from its acknowledged bytes, a READ from the responses it has), so the
 * peer sees retransmissions, which IBA allows, and never a gap it would
 * take for new data.  Timers are deadlines on QEMU_CLOCK_VIRTUAL, which
 * migrates: they fire on the destination where they would have fired on
 * the source.  The stream comes from outside: every value is checked.
 */

/* Why the requester state of @ch (a remote op past FETCH) is bad, or NULL */
const char *pldma_net_ch_check(PLDMACore *s, PLDMAChannel *ch)
{
    const PLDMANetReq *r = &ch->net;

    if (!s->nic) {
        return "remote operation without a link";
    }
    if (!r->qp && !r->node) {
        /* decode refused it: nothing was sent, it completes in error */
        return ch->phase == PLDMA_PHASE_XFER ?
               "remote transfer without a path" : NULL;
    }
    if (r->qp && r->node) {
        return "remote operation on both a QP and a node";
    }
    if (r->qp > s->num_qps || r->node >= PLDMA_NET_MAX_NODES ||
        (r->node && r->node == s->node_id) ||
        (!r->qp && pldma_op_qp_only(ch->op))) {
        return "remote operation's QP or node out of range";
    }
    if (r->mtu < 256 || r->mtu > PLDMA_NET_MAX_MTU || !is_power_of_2(r->mtu)) {
        return "remote operation's MTU out of range";
    }
    if ((ch->len == 0 && !pldma_net_zero_len_ok(ch->op, r->qp)) ||
        ch->len > s->max_transfer || r->nsegs != nsegs_of(r->mtu, ch->len)) {
        return "remote operation's length or segment count";
    }
    if (r->psn & ~PLDMA_PSN_MASK || r->end_psn & ~PLDMA_PSN_MASK ||
        r->end_psn != ((r->psn + r->nsegs) & PLDMA_PSN_MASK) ||
        r->qp_gen > 0xffff) {
        return "remote operation's PSN out of range";
    }
    if (r->acked > ch->len || r->sent_hw > (uint64_t)ch->len + 1 ||
        r->rd_end > ch->len ||
        (r->acked % r->mtu && r->acked != ch->len) ||
        (ch->done % r->mtu && ch->done != ch->len)) {
        return "remote operation's sent or acknowledged bytes";
    }
    if (r->rto_us == 0 || r->rto_us > 10 * 1000 * 1000 ||
        r->rnr_us > rnr_timer_10us[0] * 10 ||
        r->retries > MAX(r->retry_count, s->retry_count) + 1 ||
        r->retry_count > MAX(7, s->retry_count) ||
        (r->rnr_retry != UINT32_MAX &&
         r->rnr_retry > MAX(7, s->rnr_retry))) {
        return "remote operation's timers or retry counters";
    }
    return NULL;
}

static bool pldma_net_ch_active(const PLDMAChannel *ch)
{
    return ch->state != PLDMA_STATE_DISABLED &&
           ch->phase != PLDMA_PHASE_FETCH && pldma_op_remote(ch->op);
}

/* Why responder connection @i is bad, or NULL */
static const char *pldma_net_conn_check(PLDMACore *s, uint32_t i)
{
    const PLDMANetConn *c = &s->conns[i];
    uint32_t mtu, j;
    uint64_t total = 0;

    if (c->qp) {
        const PLDMAQP *qp;

        if (i < PLDMA_NET_CONNS || c->qp != i - PLDMA_NET_CONNS + 1 ||
            c->qp > s->num_qps) {
            return "QP index does not match the connection";
        }
        qp = &s->qps[c->qp - 1];
        if (qp->state != PLDMA_QPS_RTR && qp->state != PLDMA_QPS_RTS) {
            return "connection of a QP that is not connected";
        }
        if (qp->path_mtu < PLDMA_MTU_256 || qp->path_mtu > PLDMA_MTU_4096) {
            return "connection of a QP without a path MTU";
        }
    } else if (i >= PLDMA_NET_CONNS &&
               (c->synced || c->rd_active || c->msg_valid || c->rmsg_valid ||
                (c->fault && !c->stalled))) {
        return "QP connection without its QP";
    }
    mtu = conn_mtu(s, c);
    if ((c->epsn | c->fault_psn | c->msg_psn | c->rd_psn | c->rd_first_psn |
         c->rmsg_psn | c->msn) & ~PLDMA_PSN_MASK) {
        return "PSN or MSN beyond 24 bits";
    }
    if (c->fault_key >= PLDMA_NUM_KEYS || (c->stalled && !c->fault) ||
        (c->fault_recv && (!c->fault || !c->qp)) || (c->rd_hold && !c->fault)) {
        return "fault state";
    }
    if (c->fault && c->stalled &&
        (!s->ops->stall_is_pending || !s->ops->stall_is_pending(s, c->stag))) {
        return "stalled on a transaction the SMMU does not hold";
    }
    if (c->msg_valid && c->msg_nsegs != nsegs_of(mtu, c->msg_len)) {
        return "WRITE message's length or segment count";
    }
    if (c->msg_nak && AETH_KIND(c->msg_nak) != 3) {
        return "WRITE message's NAK";
    }
    if (c->rd_active && (c->rd_off > c->rd_len || c->rd_stop > c->rd_len ||
                         (!c->qp && c->rd_stop - MIN(c->rd_stop, c->rd_off) >
                          (uint64_t)PLDMA_NET_WINDOW * mtu) ||
                         c->rd_len > s->max_transfer)) {
        return "READ response stream beyond its request or window";
    }
    if (c->rwqe_nsge > PLDMA_RWQE_MAX_SGE) {
        return "receive WQE with too many scatter entries";
    }
    if (c->rdo_next >= PLDMA_NET_RD_ORIG) {
        return "READ resources";
    }
    for (j = 0; j < PLDMA_NET_RD_ORIG; j++) {
        if ((c->rdo_len[j] && !c->qp) || c->rdo_psn[j] & ~PLDMA_PSN_MASK ||
            c->rdo_len[j] > s->max_transfer) {
            return "READ resources";
        }
    }
    for (j = 0; j < c->rwqe_nsge; j++) {
        total += c->rwqe_len[j];
    }
    if ((c->rmsg_valid || c->imm_wqe) &&
        (!c->qp || total != c->rwqe_total || c->rmsg_off > c->rwqe_total)) {
        return "receive WQE's length";
    }
    return NULL;
}

/* A deadline no later than @max_ns from now (a stream cannot park us) */
static int64_t pldma_net_deadline(int64_t deadline, int64_t max_ns)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    return deadline > now + max_ns ? now + max_ns : deadline;
}

static int pldma_net_post_load(void *opaque, int version_id)
{
    PLDMACore *s = opaque;
    int64_t fault_ns = (int64_t)s->resp_fault_ms * SCALE_MS;
    int64_t next = INT64_MAX;
    const char *why;
    uint32_t i;

    if (!s->nic) {
        error_report("pldma: migrated link state for a device without one");
        return -EINVAL;
    }
    for (i = 0; i < PLDMA_NUM_KEYS; i++) {
        PLDMAKey *k = &s->keys[i];

        if (k->gen > 0xffffff || k->access & ~PLDMA_KEY_ACC_MASK ||
            (k->valid && (k->len == 0 || k->va + k->len < k->va ||
                          !pldma_pasid_reg_valid(s, k->pasid_reg)))) {
            error_report("pldma: migrated key %u rejected (gen 0x%x "
                         "va 0x%" PRIx64 " len 0x%" PRIx64 ")", i, k->gen,
                         k->va, k->len);
            return -EINVAL;
        }
        if (k->fault) {
            k->fault_deadline = pldma_net_deadline(k->fault_deadline,
                                                   fault_ns);
            next = MIN(next, k->fault_deadline);
        }
    }
    for (i = 0; i < PLDMA_NET_MAX_NODES * PLDMA_MAX_CHANNELS; i++) {
        if (s->psn_next[i] & ~PLDMA_PSN_MASK) {
            error_report("pldma: migrated PSN 0x%x of path %u rejected",
                         s->psn_next[i], i);
            return -EINVAL;
        }
    }
    for (i = 0; i < PLDMA_NET_CONNS + PLDMA_MAX_QPS; i++) {
        PLDMANetConn *c = &s->conns[i];

        why = pldma_net_conn_check(s, i);
        if (why) {
            error_report("pldma: migrated connection %u rejected: %s "
                         "(qp %u epsn 0x%x)", i, why, c->qp, c->epsn);
            return -EINVAL;
        }
        if (c->fault && !c->stalled && c->fault_recv) {
            c->fault_deadline = pldma_net_deadline(c->fault_deadline,
                                                   fault_ns);
            next = MIN(next, c->fault_deadline);
        }
    }
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        PLDMAChannel *ch = &s->ch[i];
        PLDMANetReq *r = &ch->net;

        if (!pldma_net_ch_active(ch) || i >= s->num_channels) {
            /* (a local op or none: no requester state to keep) */
            memset(r, 0, sizeof(*r));
            timer_del(ch->net_timer);
            continue;
        }
        why = pldma_net_ch_check(s, ch);
        if (why) {
            error_report("pldma: migrated channel %u's remote operation "
                         "rejected: %s (qp %u node %u psn 0x%x)", i, why,
                         r->qp, r->node, r->psn);
            return -EINVAL;
        }
        r->txq = false;
        if (timer_pending(ch->net_timer)) {
            timer_mod(ch->net_timer,
                      pldma_net_deadline(timer_expire_time_ns(ch->net_timer),
                                         (int64_t)(r->rnr ? r->rnr_us
                                                          : r->rto_us) *
                                         SCALE_US));
        }
        if (ch->state == PLDMA_STATE_RUNNING &&
            ch->phase == PLDMA_PHASE_XFER && !r->rnr && (r->qp || r->node)) {
            /*
             * What the source sent and the peer has not acknowledged may
             * be lost: go on from the last acknowledged PSN, as after a
             * retransmit timeout, but without counting a try.  An RNR
             * wait is the peer's to end: its timer or a resume.
             */
            trace_pldma_net_migrated(i, r->qp, r->psn, r->acked, ch->done);
            if (pldma_op_sends(ch->op)) {
                ch->done = MIN(r->acked, ch->len);
            }
            ch->done = MIN(ch->done, ch->len);
            r->wait = false;
        }
    }
    /* frames held back or waiting in the net layer are gone: resent */
    g_free(s->held);
    s->held = NULL;
    s->held_len = 0;
    s->tx_blocked = false;
    s->in_rx = false;
    s->resp_conn = NULL;
    s->resp.s = s;
    s->resp.idx = PLDMA_FR_CH_REMOTE;
    s->resp.state = PLDMA_STATE_DISABLED;
    if (fault_ns && next != INT64_MAX) {
        timer_mod_ns(s->fault_timer, next);
    } else {
        timer_del(s->fault_timer);
    }
    return 0;
}

static const VMStateDescription vmstate_pldma_key = {
    .name = "pldma-key",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(gen, PLDMAKey),
        VMSTATE_BOOL(valid, PLDMAKey),
        VMSTATE_UINT32(pasid_reg, PLDMAKey),
        VMSTATE_UINT64(va, PLDMAKey),
        VMSTATE_UINT64(len, PLDMAKey),
        VMSTATE_UINT32(access, PLDMAKey),
        VMSTATE_BOOL(fault, PLDMAKey),
        VMSTATE_INT64(fault_deadline, PLDMAKey),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_pldma_conn = {
    .name = "pldma-conn",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(qp, PLDMANetConn),
        VMSTATE_BOOL(synced, PLDMANetConn),
        VMSTATE_UINT32(epsn, PLDMANetConn),
        VMSTATE_UINT32(msn, PLDMANetConn),
        VMSTATE_BOOL(nak_seq, PLDMANetConn),
        VMSTATE_BOOL(fault, PLDMANetConn),
        VMSTATE_BOOL(stalled, PLDMANetConn),
        VMSTATE_UINT16(stag, PLDMANetConn),
        VMSTATE_UINT8(fault_key, PLDMANetConn),
        VMSTATE_UINT32(fault_psn, PLDMANetConn),
        VMSTATE_INT64(fault_deadline, PLDMANetConn),
        VMSTATE_BOOL(fault_recv, PLDMANetConn),
        VMSTATE_BOOL(rd_hold, PLDMANetConn),
        VMSTATE_BOOL(msg_valid, PLDMANetConn),
        VMSTATE_UINT32(msg_psn, PLDMANetConn),
        VMSTATE_UINT32(msg_nsegs, PLDMANetConn),
        VMSTATE_UINT64(msg_va, PLDMANetConn),
        VMSTATE_UINT32(msg_len, PLDMANetConn),
        VMSTATE_UINT32(msg_rkey, PLDMANetConn),
        VMSTATE_UINT8(msg_nak, PLDMANetConn),
        VMSTATE_BOOL(rd_active, PLDMANetConn),
        VMSTATE_UINT32(rd_psn, PLDMANetConn),
        VMSTATE_UINT32(rd_first_psn, PLDMANetConn),
        VMSTATE_UINT64(rd_va, PLDMANetConn),
        VMSTATE_UINT32(rd_len, PLDMANetConn),
        VMSTATE_UINT32(rd_off, PLDMANetConn),
        VMSTATE_UINT32(rd_stop, PLDMANetConn),
        VMSTATE_UINT32(rd_rkey, PLDMANetConn),
        VMSTATE_BOOL(rmsg_valid, PLDMANetConn),
        VMSTATE_BOOL(imm_wqe, PLDMANetConn),
        VMSTATE_UINT32(rmsg_psn, PLDMANetConn),
        VMSTATE_UINT32(rmsg_off, PLDMANetConn),
        VMSTATE_UINT64(rwqe_id, PLDMANetConn),
        VMSTATE_UINT64(rwqe_total, PLDMANetConn),
        VMSTATE_UINT32(rwqe_nsge, PLDMANetConn),
        VMSTATE_UINT64_ARRAY(rwqe_addr, PLDMANetConn, PLDMA_RWQE_MAX_SGE),
        VMSTATE_UINT32_ARRAY(rwqe_len, PLDMANetConn, PLDMA_RWQE_MAX_SGE),
        VMSTATE_BOOL(rq_rnr, PLDMANetConn),
        VMSTATE_UINT32_ARRAY(rdo_psn, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT64_ARRAY(rdo_va, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT32_ARRAY(rdo_len, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT32_ARRAY(rdo_rkey, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT8(rdo_next, PLDMANetConn),
        VMSTATE_END_OF_LIST()
    }
};

/* A channel's requester state (PLDMAChannel.net) and its timer */
static const VMStateDescription vmstate_pldma_ch_net = {
    .name = "pldma-ch-net",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(net.node, PLDMAChannel),
        VMSTATE_UINT8(net.qp, PLDMAChannel),
        VMSTATE_UINT32(net.psn, PLDMAChannel),
        VMSTATE_UINT32(net.qp_gen, PLDMAChannel),
        VMSTATE_UINT32(net.nsegs, PLDMAChannel),
        VMSTATE_UINT32(net.end_psn, PLDMAChannel),
        VMSTATE_UINT32(net.rkey, PLDMAChannel),
        VMSTATE_UINT64(net.rva, PLDMAChannel),
        VMSTATE_UINT64(net.acked, PLDMAChannel),
        VMSTATE_UINT64(net.sent_hw, PLDMAChannel),
        VMSTATE_UINT64(net.rd_end, PLDMAChannel),
        VMSTATE_UINT32(net.retries, PLDMAChannel),
        VMSTATE_UINT32(net.rnr_retries, PLDMAChannel),
        VMSTATE_BOOL(net.wait, PLDMAChannel),
        VMSTATE_BOOL(net.rnr, PLDMAChannel),
        VMSTATE_BOOL(net.gap, PLDMAChannel),
        VMSTATE_UINT32(net.rnr_us, PLDMAChannel),
        VMSTATE_UINT32(net.mtu, PLDMAChannel),
        VMSTATE_UINT32(net.rto_us, PLDMAChannel),
        VMSTATE_UINT32(net.retry_count, PLDMAChannel),
        VMSTATE_UINT32(net.rnr_retry, PLDMAChannel),
        VMSTATE_BOOL(net.ok, PLDMAChannel),
        VMSTATE_UINT32(net.imm, PLDMAChannel),
        VMSTATE_BOOL(net.se, PLDMAChannel),
        VMSTATE_TIMER_PTR(net_timer, PLDMAChannel),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_net_needed(void *opaque)
{
    PLDMACore *s = opaque;

    return s->nic != NULL;
}

/* After pldma-core/qps and pldma-core/cqs, whose state it checks against */
const VMStateDescription vmstate_pldma_net = {
    .name = "pldma-core/net",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_needed,
    .post_load = pldma_net_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_ARRAY(ch, PLDMACore, PLDMA_MAX_CHANNELS, 1,
                             vmstate_pldma_ch_net, PLDMAChannel),
        VMSTATE_UINT32(net_ip, PLDMACore),
        VMSTATE_UINT32(key_sel, PLDMACore),
        VMSTATE_UINT32(key_status, PLDMACore),
        VMSTATE_STRUCT(key_stage, PLDMACore, 1, vmstate_pldma_key, PLDMAKey),
        VMSTATE_STRUCT_ARRAY(keys, PLDMACore, PLDMA_NUM_KEYS, 1,
                             vmstate_pldma_key, PLDMAKey),
        {
            .name = "psn_next",
            .num = PLDMA_NET_MAX_NODES * PLDMA_MAX_CHANNELS,
            .info = &vmstate_info_uint32,
            .size = sizeof(uint32_t),
            .flags = VMS_ARRAY | VMS_POINTER,
            .offset = offsetof(PLDMACore, psn_next),
        },
        VMSTATE_UINT8_2DARRAY(peer_mac, PLDMACore, PLDMA_NET_MAX_NODES, 6),
        VMSTATE_BOOL_ARRAY(peer_mac_known, PLDMACore, PLDMA_NET_MAX_NODES),
        VMSTATE_STRUCT_VARRAY_POINTER_KNOWN(conns, PLDMACore,
                                            PLDMA_NET_CONNS + PLDMA_MAX_QPS,
                                            1, vmstate_pldma_conn,
                                            PLDMANetConn),
        VMSTATE_UINT32_ARRAY(net_cnt, PLDMACore, PLDMA_NCNT_NUM),
        VMSTATE_UINT32(tx_seq, PLDMACore),
        VMSTATE_UINT64(x_rng, PLDMACore),
        VMSTATE_END_OF_LIST()
    }
};
