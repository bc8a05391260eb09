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
 * Transport, per connected QP (hw/misc/pldma/qp.c), as an IB Reliable
 * Connection does it: PSNs, one message in flight per send queue, at most
 * a window of unacknowledged segments, ACKs coalesced (AckReq every
 * PLDMA_NET_ACKREQ_EVERY segments and on the last), Go-back-N on a
 * sequence NAK or a retransmit timeout, the QP's retry count tries.
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
 * now": an ACK of the PSN before the one that faulted.
 *
 * Everything that comes from the wire is checked before use: lengths
 * against the frame, PSNs against the window, addresses against the key
 * (index, generation, access, range, PASID) before a byte is touched.
 * See docs/specs/pldma.rst, "Remote DMA".
 *
 * The transport is cut as Linux's rxe is, one file per role: this file
 * is the port (the net layer's client: receive, flow control, the
 * classifier's two doors, registers, reset, realize); hdr.c the opcode
 * table, headers, ICRC, frame building and parsing; req.c the requester;
 * comp.c its completer (ACKs, NAKs, READ responses); resp.c the
 * responder, a stage machine for every request opcode; resp-fault.c the
 * responder's faults (parking, RNR, resolution, resumption); rq.c the
 * receive queues; keys.c the memory keys; net-vmstate.c migration.
 * They share net-internal.h.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/cutils.h"
#include "qapi/error.h"
#include "net/net.h"
#include "net/eth.h"
#include "net-internal.h"
#include "trace.h"

/* A frame for a QP that the QP does not take: no state moves */
void pldma_net_qp_drop(PLDMACore *s, const PLDMAPkt *p, const char *why)
{
    pldma_net_cnt(s, PLDMA_NCNT_RX_DROPPED);
    pldma_net_cnt(s, PLDMA_NCNT_QP_DROPPED);
    trace_pldma_qp_dropped(p->qpn, p->src_ip, p->opcode, p->psn, why);
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
    s->net->x_rng = s->net->x_rng * 6364136223846793005ULL +
                    1442695040888963407ULL;
    return (s->net->x_rng >> 33) % every == 0;
}

/*
 * The net layer has sent the frame it queued for us (or dropped it): the
 * link takes frames again, let the requesters and the responder go on
 */
static void pldma_net_put_now(PLDMACore *s, const uint8_t *f, size_t len);

/*
 * ACKs and NAKs built while the link took no frame wait in ans_q, at most
 * PLDMA_NET_ANS_FRAMES of them (one per connection and some: past that
 * one is dropped, as before, and the requester's timer brings it again);
 * they go first when the link takes frames again.  Not migrated, and gone
 * on reset, as frames on a wire.
 */
#define PLDMA_NET_ANS_FRAMES    256

static bool pldma_net_frame_is_ack(const uint8_t *f, size_t len)
{
    /* (our own frames: Ethernet, IPv4 without options, UDP, BTH) */
    return len > 14 + 20 + 8 + 12 && lduw_be_p(f + 12) == 0x0800 &&
           lduw_be_p(f + 14 + 20 + 2) == ROCE_UDP_PORT &&
           (f[14 + 20 + 8] == OP_ACK || f[14 + 20 + 8] == OP_ATOMIC_ACK);
}

static void pldma_net_ans_drop_all(PLDMACore *s)
{
    GBytes *b;

    while ((b = g_queue_pop_head(&s->net->ans_q))) {
        g_bytes_unref(b);
    }
}

/* Send what ans_q holds, until the link blocks again */
static void pldma_net_ans_flush(PLDMACore *s)
{
    GBytes *b;

    while (!s->net->tx_blocked && (b = g_queue_pop_head(&s->net->ans_q))) {
        gsize len;
        const uint8_t *f = g_bytes_get_data(b, &len);

        pldma_net_put_now(s, f, len);
        g_bytes_unref(b);
    }
}

static void pldma_net_sent(NetClientState *nc, ssize_t len)
{
    PLDMACore *s = qemu_get_nic_opaque(nc);
    uint32_t i;

    trace_pldma_net_tx_resumed(len);
    s->net->tx_blocked = false;
    pldma_net_ans_flush(s);
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        PLDMANetReq *r = &s->net->req[i];

        if (r->txq) {
            r->txq = false;
            r->wait = false;
        }
    }
    pldma_schedule(s);
}

/*
 * Loopback.  A frame to the port's own MAC goes back to the port's own
 * receive side, as a RoCE NIC loops the traffic between two QPs of one
 * device (Linux resolves a GID of the port itself to the port's own MAC,
 * so a QP connected to another QP of the same port gets DEST_MAC = NET_MAC;
 * rdma-core's tests run every traffic test that way).  Nothing reaches the
 * netdev.  The frame is copied and delivered from loop_bh, never from the
 * run or the receive handler that sent it, in the order sent.  At most
 * PLDMA_NET_LOOP_BYTES wait: past that a frame is dropped, as a full wire
 * drops it (RC's retransmission brings it again).  Waiting frames are not
 * migrated and do not survive a reset, as frames on a wire do not.  With
 * the timing model on, the model's link (below) delivers them instead.
 */
#define PLDMA_NET_LOOP_BYTES    (1024 * 1024)
#define PLDMA_NET_LOOP_BUDGET   64      /* frames per bottom-half run */

static bool pldma_net_to_self(PLDMACore *s, const uint8_t *f, size_t len)
{
    return len >= 6 && !memcmp(f, s->conf->macaddr.a, 6);
}

static void pldma_net_loop(PLDMACore *s, const uint8_t *f, size_t len)
{
    if (s->net->loop_bytes + len > PLDMA_NET_LOOP_BYTES) {
        trace_pldma_net_loop_dropped(len, s->net->loop_bytes);
        return;
    }
    pldma_net_cnt(s, PLDMA_NCNT_TX_FRAMES);
    pldma_net_cnt(s, PLDMA_NCNT_LOOPED);
    g_queue_push_tail(&s->net->loop_q, g_bytes_new(f, len));
    s->net->loop_bytes += len;
    trace_pldma_net_loop(len, s->net->loop_bytes);
    qemu_bh_schedule(s->net->loop_bh);
}

static void pldma_net_loop_drop_all(PLDMACore *s)
{
    GBytes *b;

    while ((b = g_queue_pop_head(&s->net->loop_q))) {
        g_bytes_unref(b);
    }
    s->net->loop_bytes = 0;
}

static ssize_t pldma_net_rx_frame(PLDMACore *s, const uint8_t *buf,
                                  size_t size);

static void pldma_net_loop_bh(void *opaque)
{
    PLDMACore *s = opaque;
    uint32_t n;

    for (n = 0; n < PLDMA_NET_LOOP_BUDGET; n++) {
        GBytes *b;
        const uint8_t *f;
        gsize len;

        if (g_queue_is_empty(&s->net->loop_q) || !s->vm_running) {
            return;         /* the VM's restart schedules us again */
        }
        if (s->busy || s->net->in_rx) {
            break;          /* not from inside a run or a receive */
        }
        b = g_queue_pop_head(&s->net->loop_q);
        f = g_bytes_get_data(b, &len);
        s->net->loop_bytes -= len;
        pldma_net_rx_frame(s, f, len);
        g_bytes_unref(b);
    }
    if (!g_queue_is_empty(&s->net->loop_q)) {
        qemu_bh_schedule(s->net->loop_bh);
    }
}

/*
 * The link of the timing model (timing=on).  Without the model a frame
 * goes to the netdev (or the loopback) as soon as it is built.  With it,
 * every frame this port sends takes the link's time first
 * (pldma_timing_wire(): its turn on the transmitter, its bits at
 * link-bandwidth, link-latency-ns) and is handed on at its arrival time,
 * from a virtual-clock timer: to the netdev, where a peer in the same
 * QEMU (a hub) receives it at that instant, or back to this port.  A
 * looped frame models a link between two ports: requests take one
 * direction, responses (ACKs, NAKs, READ responses) the other, as they do
 * between a requester's port and a responder's.  At most
 * PLDMA_NET_WIRE_BYTES are in flight (the window of every channel and
 * responder fits); past that a frame is dropped, as a full wire drops it.
 * Frames in flight are not migrated and do not survive a reset.
 */
#define PLDMA_NET_WIRE_BYTES    (16 * 1024 * 1024)

typedef struct PLDMAWireFrame {
    int64_t at;             /* arrival */
    bool self;              /* looped back to this port */
    GBytes *b;
} PLDMAWireFrame;

static void pldma_net_wire_free(gpointer data)
{
    PLDMAWireFrame *w = data;

    g_bytes_unref(w->b);
    g_free(w);
}

static void pldma_net_wire_drop_all(PLDMACore *s)
{
    uint32_t d;

    for (d = 0; d < ARRAY_SIZE(s->net->wire_q); d++) {
        g_queue_clear_full(&s->net->wire_q[d], pldma_net_wire_free);
    }
    s->net->wire_bytes = 0;
    if (s->net->wire_timer) {
        timer_del(s->net->wire_timer);
    }
}

/* The direction of the link whose next frame arrives first, or -1 */
static int pldma_net_wire_next(PLDMACore *s)
{
    PLDMAWireFrame *a = g_queue_peek_head(&s->net->wire_q[0]);
    PLDMAWireFrame *b = g_queue_peek_head(&s->net->wire_q[1]);

    if (!a || !b) {
        return a ? 0 : b ? 1 : -1;
    }
    return b->at < a->at ? 1 : 0;
}

static void pldma_net_wire_arm(PLDMACore *s)
{
    int d = pldma_net_wire_next(s);

    if (d >= 0) {
        PLDMAWireFrame *w = g_queue_peek_head(&s->net->wire_q[d]);

        timer_mod(s->net->wire_timer, w->at);
    }
}

static void pldma_net_wire_put(PLDMACore *s, const uint8_t *f, size_t len,
                               int64_t ready, bool self)
{
    unsigned int dir = 0;
    PLDMAWireFrame *w;

    if (s->net->wire_bytes + len > PLDMA_NET_WIRE_BYTES) {
        trace_pldma_net_wire_dropped(len, s->net->wire_bytes);
        return;
    }
    if (self) {
        /* (a frame to the netdev is counted when it is handed on) */
        pldma_net_cnt(s, PLDMA_NCNT_TX_FRAMES);
        pldma_net_cnt(s, PLDMA_NCNT_LOOPED);
    }
    if (self && pldma_hdr_frame_is_resp(f, len)) {
        dir = 1;
    }
    w = g_new(PLDMAWireFrame, 1);
    w->at = pldma_timing_wire(s, dir, ready, len);
    w->self = self;
    w->b = g_bytes_new(f, len);
    g_queue_push_tail(&s->net->wire_q[dir], w);
    s->net->wire_bytes += len;
    pldma_net_wire_arm(s);
}

/* A frame's arrival: handed on, in arrival order, at its instant */
static void pldma_net_wire_timer(void *opaque)
{
    PLDMACore *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int d;

    while ((d = pldma_net_wire_next(s)) >= 0) {
        PLDMAWireFrame *w = g_queue_peek_head(&s->net->wire_q[d]);
        const uint8_t *f;
        gsize len;

        if (w->at > now) {
            break;
        }
        if (!s->vm_running || s->busy || s->net->in_rx) {
            /* not while stopped, nor inside a run or a receive: 1 ns on */
            timer_mod(s->net->wire_timer, now + 1);
            return;
        }
        g_queue_pop_head(&s->net->wire_q[d]);
        f = g_bytes_get_data(w->b, &len);
        s->net->wire_bytes -= len;
        if (w->self) {
            pldma_net_rx_frame(s, f, len);
        } else {
            pldma_net_put_now(s, f, len);
        }
        pldma_net_wire_free(w);
    }
    pldma_net_wire_arm(s);
}

/*
 * Hand one frame to the net layer, which sends it at once or queues it
 * when the backend cannot take it now (a full socket: the peer stopped
 * reading).  Then nothing more goes out until pldma_net_sent(): frames
 * are dropped (the peer's retransmissions bring their answers again), the
 * requesters and READ responses wait.  So one frame at most waits in the
 * net layer's queue for us, and a stalled peer never blocks this node.
 */
static void pldma_net_put(PLDMACore *s, const uint8_t *f, size_t len,
                          int64_t ready)
{
    bool self = pldma_net_to_self(s, f, len);

    if (s->net->wire_timer) {
        pldma_net_wire_put(s, f, len, ready, self);
        return;
    }
    if (self) {
        pldma_net_loop(s, f, len);
        return;
    }
    pldma_net_put_now(s, f, len);
}

static void pldma_net_put_now(PLDMACore *s, const uint8_t *f, size_t len)
{
    if (s->net->tx_blocked) {
        if (pldma_net_frame_is_ack(f, len) &&
            g_queue_get_length(&s->net->ans_q) < PLDMA_NET_ANS_FRAMES) {
            g_queue_push_tail(&s->net->ans_q, g_bytes_new(f, len));
            trace_pldma_net_ans_held(len, g_queue_get_length(&s->net->ans_q));
            return;
        }
        trace_pldma_net_tx_dropped(len);
        return;
    }
    /* counted when the net layer has it: not what the device dropped */
    pldma_net_cnt(s, PLDMA_NCNT_TX_FRAMES);
    if (!qemu_send_packet_async(qemu_get_queue(s->nic), f, len,
                                pldma_net_sent)) {
        trace_pldma_net_tx_blocked(len);
        s->net->tx_blocked = true;
    }
}

void pldma_net_send_frame(PLDMACore *s, const uint8_t *f, size_t len,
                          int64_t ready)
{
    uint32_t n = ++s->net->tx_seq;

    if (pldma_net_knob(s, s->x_drop_every)) {
        trace_pldma_net_knob("drop", n);
        return;
    }
    if (pldma_net_knob(s, s->x_reorder_every) && !s->net->held) {
        trace_pldma_net_knob("hold", n);
        s->net->held = g_memdup2(f, len);
        s->net->held_len = len;
        return;
    }
    pldma_net_put(s, f, len, ready);
    if (pldma_net_knob(s, s->x_dup_every)) {
        trace_pldma_net_knob("dup", n);
        pldma_net_put(s, f, len, ready);
    }
    if (s->net->held) {
        uint8_t *h = s->net->held;

        s->net->held = NULL;
        pldma_net_put(s, h, s->net->held_len, ready);
        g_free(h);
    }
}

/* The transport whose QPs take BTH opcode flags @fl */
static uint32_t pldma_net_op_type(uint32_t fl)
{
    return fl & PLDMA_NET_F_DETH ? PLDMA_QP_TYPE_UD
           : fl & PLDMA_NET_F_UC ? PLDMA_QP_TYPE_UC : PLDMA_QP_TYPE_RC;
}

/*
 * A frame for a QP: taken only by the QP it names, index and generation,
 * in a state that receives it (RTR or RTS for requests, RTS for
 * responses), of its transport, from the QP's peer (IPv4 source = its
 * destination IP; a UD QP has none and takes datagrams from anyone).
 * Then the PSN window decides (resp.c, comp.c).  Anything else is
 * dropped and counted, nothing moves.
 */
static void pldma_net_rx_qp(PLDMACore *s, PLDMAPkt *p)
{
    uint32_t idx = p->qpn & 0xff;
    uint32_t fl = pldma_hdr_op_flags(p->opcode);
    bool resp = fl & (PLDMA_NET_F_RESP | PLDMA_NET_F_ACK);
    PLDMAQP *qp;

    if (idx >= s->num_qps || s->net->qps[idx].gen != p->qpn >> 8) {
        pldma_net_qp_drop(s, p, "no such QP");
        return;
    }
    qp = &s->net->qps[idx];
    if (qp->state != PLDMA_QPS_RTS &&
        (resp || qp->state != PLDMA_QPS_RTR)) {
        pldma_net_qp_drop(s, p, "QP not in a receiving state");
        return;
    }
    /* a UC QP takes UC requests only, an RC QP RC opcodes only... */
    if (pldma_net_op_type(fl) != qp->type) {
        pldma_net_qp_drop(s, p, "an opcode of another transport");
        return;
    }
    if (qp->type != PLDMA_QP_TYPE_UD && p->src_ip != qp->dest_ip) {
        pldma_net_qp_drop(s, p, "not from the QP's peer");
        return;
    }
    p->qp = idx + 1;
    /*
     * Two doors, as rxe's: ACKs and READ responses to the requester's
     * completer (comp.c), requests to the QP's responder (resp.c)
     */
    if (resp) {
        pldma_comp_rx(s, p);
    } else {
        pldma_resp_rx(s, &s->net->conns[idx], p);
    }
}

/* One frame from the wire, or looped back: not during a run or a receive */
static ssize_t pldma_net_rx_frame(PLDMACore *s, const uint8_t *buf,
                                  size_t size)
{
    PLDMAPkt p = { 0 };

    /* not RoCEv2 for this node: the Ethernet function's (eth.c) */
    if (pldma_eth_rx(s, buf, size)) {
        return MAX(size, 1);
    }
    /* UD (QP1's management datagrams): the OS's too, if its ICRC is good */
    switch (pldma_hdr_ud_check(buf, size)) {
    case 1:
        trace_pldma_net_rx_ud(size);
        pldma_eth_deliver(s, buf, size);
        return size;
    case -1:
        pldma_net_cnt(s, PLDMA_NCNT_RX_DROPPED);
        trace_pldma_net_drop(size);
        return size;
    }
    pldma_net_cnt(s, PLDMA_NCNT_RX_FRAMES);
    if (!pldma_hdr_parse(s, buf, size, &p)) {
        pldma_net_cnt(s, PLDMA_NCNT_RX_DROPPED);
        trace_pldma_net_drop(size);
        /*
         * Consumed, even when empty: 0 would tell the net layer that we
         * cannot receive now, and it would queue every later frame until
         * a flush.
         */
        return MAX(size, 1);
    }
    trace_pldma_net_rx(p.opcode, pldma_hdr_op_name(p.opcode), p.qpn, p.psn,
                       p.ackreq, p.syndrome, p.plen);
    s->net->in_rx = true;
    /*
     * A QP's peer sends to the MAC its path resolved, the port's own: a
     * frame to another (a switch flooding, a spoofer on a hub) is not for
     * this port, whatever its IP says
     */
    if (memcmp(buf, s->conf->macaddr.a, ETH_ALEN)) {
        pldma_net_cnt(s, PLDMA_NCNT_NOT_OURS);
        pldma_net_qp_drop(s, &p, "to another MAC");
    } else {
        pldma_net_rx_qp(s, &p);
    }
    s->net->in_rx = false;
    if (s->net->rx_deferred) {
        /*
         * The net layer queued a frame that came while this one was
         * received (a peer on a hub answering at once): the bottom half
         * flushes it (pldma_bh() ends with pldma_net_flush())
         */
        s->net->rx_deferred = false;
        pldma_schedule(s);
    }
    pldma_update_irq(s);
    return size;
}

static ssize_t pldma_net_receive(NetClientState *nc, const uint8_t *buf,
                                 size_t size)
{
    PLDMACore *s = qemu_get_nic_opaque(nc);

    if (s->busy || s->net->in_rx) {
        /* queued: flushed after the run, or after the receive */
        s->net->rx_deferred |= s->net->in_rx;
        return 0;
    }
    return pldma_net_rx_frame(s, buf, size);
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
    if (!g_queue_is_empty(&s->net->loop_q)) {
        qemu_bh_schedule(s->net->loop_bh);
    }
}


/* ---- registers ---- */

static bool pldma_net_read(PLDMACore *s, hwaddr addr, uint64_t *val)
{
    if (pldma_qp_read(s, addr, val) || pldma_cq_read(s, addr, val) ||
        pldma_srq_read(s, addr, val) || pldma_key_read(s, addr, val) ||
        pldma_eth_read(s, addr, val)) {
        return true;
    }
    if (addr >= PLDMA_NET_CNT(0) && addr < PLDMA_NET_CNT(PLDMA_NCNT_NUM)) {
        *val = s->net->net_cnt[(addr - PLDMA_NET_CNT(0)) / 4];
        return true;
    }
    switch (addr) {
    case PLDMA_NET_NODE:
        *val = s->nic ? s->node_id : 0;
        return true;
    case PLDMA_NET_MTU:
        *val = s->nic ? s->mtu : 0;
        return true;
    default:
        return false;
    }
}

static bool pldma_net_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    return pldma_qp_write(s, addr, val) || pldma_cq_write(s, addr, val) ||
           pldma_srq_write(s, addr, val) || pldma_key_write(s, addr, val) ||
           pldma_eth_write(s, addr, val);
}

/* ---- life cycle ---- */

void pldma_net_reset(PLDMACore *s)
{
    uint32_t i;

    if (!s->net) {
        return;                 /* the engine's reset before our realize */
    }
    pldma_cq_reset(s);
    pldma_srq_reset(s);
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        memset(&s->net->req[i], 0, sizeof(s->net->req[i]));
        if (s->net->req_timer[i]) {
            timer_del(s->net->req_timer[i]);
        }
    }
    pldma_keys_reset(s);
    if (s->net->fault_timer) {
        timer_del(s->net->fault_timer);
    }
    memset(s->net->net_cnt, 0, sizeof(s->net->net_cnt));
    g_free(s->net->held);
    s->net->held = NULL;
    pldma_net_loop_drop_all(s);
    pldma_net_wire_drop_all(s);
    pldma_net_ans_drop_all(s);
    /* the responder forgets its connections (every QP goes to RESET) */
    if (s->net->conns) {
        for (i = 0; i < PLDMA_MAX_QPS; i++) {
            pldma_resp_park_drop(s, &s->net->conns[i]);
        }
        memset(s->net->conns, 0, sizeof(PLDMANetConn) * PLDMA_MAX_QPS);
    }
    /* every QP to RESET, with a new QPN: its old frames never match */
    pldma_qp_reset(s);
    s->net->x_rng = s->node_id;
    /*
     * If the receive handler ever told the net layer "not now" (it returns
     * 0 during a run), frames wait in the queue for a flush: deliver them,
     * a reset must bring the link back whatever happened before.
     */
    if (s->nic && s->vm_running) {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
    pldma_eth_reset(s);
}

static void pldma_net_vm_running(PLDMACore *s)
{
    pldma_net_flush(s);
    pldma_eth_vm_running(s);
}

/*
 * A channel reset: its requester state goes (ch_end stopped its timer);
 * the engine's reset at realize comes before the link's realize
 */
static void pldma_net_ch_reset(PLDMAChannel *ch)
{
    if (ch->s->net) {
        memset(pldma_ch_req(ch), 0, sizeof(PLDMANetReq));
    }
}

static bool pldma_net_waiting(PLDMAChannel *ch)
{
    return pldma_ch_req(ch)->wait;
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

/*
 * The segments of path MTU @mtu a requester keeps unacknowledged, and a
 * READ request asks for at once.  Without the timing model, the link's
 * time is the host's and PLDMA_NET_WINDOW it is.  With it, the window is
 * sized to the modeled link, twice its bandwidth-delay product (a round
 * trip of link-latency-ns at link-bandwidth, in frames of that MTU: the
 * rest covers the ACKs asked for every PLDMA_NET_ACKREQ_EVERY segments
 * and the responder's turns), so that a link longer than a rack stays
 * full; between PLDMA_NET_WINDOW and PLDMA_NET_WINDOW_MAX.
 */
uint32_t pldma_net_window(PLDMACore *s, uint32_t mtu)
{
    const PLDMATiming *tm = &s->tm;
    uint64_t bits, frame;

    if (!tm->on) {
        return PLDMA_NET_WINDOW;
    }
    bits = (uint64_t)2 * tm->link_ns * tm->link_mbits / 1000;
    frame = (uint64_t)(mtu + PLDMA_NET_SEG_HDRS + PLDMA_TM_WIRE_OVERHEAD) * 8;
    return MIN(MAX(2 * DIV_ROUND_UP(bits, frame), PLDMA_NET_WINDOW),
               PLDMA_NET_WINDOW_MAX);
}

bool pldma_net_realize(PLDMACore *s, Error **errp)
{
    DeviceState *dev = s->dev;
    NICConf *conf = s->conf;
    uint32_t i;

    s->net = g_new0(PLDMANet, 1);
    s->net->s = s;
    if (s->num_qps < 1 || s->num_qps > PLDMA_MAX_QPS) {
        error_setg(errp, "num-qps must be between 1 and %d", PLDMA_MAX_QPS);
        return false;
    }
    if (!pldma_cq_realize(s, errp) || !pldma_srq_realize(s, errp)) {
        return false;
    }
    pldma_qp_realize(s);
    if (!conf || !conf->peers.ncs[0]) {
        pldma_net_reset(s);
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
    g_queue_init(&s->net->loop_q);
    g_queue_init(&s->net->ans_q);
    g_queue_init(&s->net->wire_q[0]);
    g_queue_init(&s->net->wire_q[1]);
    if (s->tm.on) {
        s->net->wire_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                          pldma_net_wire_timer, s);
    }
    s->net->loop_bh = qemu_bh_new_guarded(pldma_net_loop_bh, s,
                                          &dev->mem_reentrancy_guard);
    s->net->conns = g_new0(PLDMANetConn, PLDMA_MAX_QPS);
    s->nic = qemu_new_nic(&pldma_net_info, conf,
                          object_get_typename(OBJECT(dev)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), conf->macaddr.a);
    pldma_eth_realize(s);
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        s->net->req_timer[i] = timer_new_ns(QEMU_CLOCK_VIRTUAL, pldma_req_timer,
                                          &s->ch[i]);
    }
    s->net->fault_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                       pldma_resp_fault_timer, s);
    pldma_net_reset(s);
    return true;
}

void pldma_net_unrealize(PLDMACore *s)
{
    uint32_t i;

    if (!s->net) {
        return;
    }
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        if (s->net->req_timer[i]) {
            timer_free(s->net->req_timer[i]);
            s->net->req_timer[i] = NULL;
        }
    }
    if (s->net->fault_timer) {
        timer_free(s->net->fault_timer);
        s->net->fault_timer = NULL;
    }
    if (s->nic) {
        qemu_del_nic(s->nic);
        s->nic = NULL;
    }
    pldma_eth_unrealize(s);
    for (i = 0; s->net->conns && i < PLDMA_MAX_QPS; i++) {
        pldma_resp_park_drop(s, &s->net->conns[i]);
    }
    g_free(s->net->conns);
    s->net->conns = NULL;
    g_free(s->net->held);
    s->net->held = NULL;
    if (s->net->loop_bh) {
        pldma_net_loop_drop_all(s);
        qemu_bh_delete(s->net->loop_bh);
        s->net->loop_bh = NULL;
    }
    pldma_net_wire_drop_all(s);
    pldma_net_ans_drop_all(s);
    if (s->net->wire_timer) {
        timer_free(s->net->wire_timer);
        s->net->wire_timer = NULL;
    }
    g_free(s->net);
    s->net = NULL;
}

/* IRQ_STATUS written: the CQs', SRQs' and the Ethernet function's bits */
static void pldma_net_irq_sync(PLDMACore *s)
{
    pldma_cq_irq_sync(s);
    pldma_srq_irq_sync(s);
    pldma_eth_irq_sync(s);
}

/* The link's registers on a channel page: CQ doorbell, RQ tail and head */
static bool pldma_net_ch_read(PLDMAChannel *ch, hwaddr off, uint64_t *val)
{
    switch (off) {
    case PLDMA_CH_CQ_DB:
        *val = 0;
        return true;
    case PLDMA_CH_RQ_TAIL:
    case PLDMA_CH_RQ_HEAD:
        *val = pldma_rq_reg(ch, off == PLDMA_CH_RQ_TAIL);
        return true;
    default:
        return false;
    }
}

static bool pldma_net_ch_write(PLDMAChannel *ch, hwaddr off, uint32_t val)
{
    switch (off) {
    case PLDMA_CH_CQ_DB:
        pldma_cq_doorbell(ch, val);
        return true;
    case PLDMA_CH_RQ_TAIL:
        pldma_rq_doorbell(ch, val);
        return true;
    default:
        return false;
    }
}

const PLDMALinkOps pldma_net_link = {
    .realize = pldma_net_realize,
    .unrealize = pldma_net_unrealize,
    .reset = pldma_net_reset,
    .vm_running = pldma_net_vm_running,
    .read = pldma_net_read,
    .write = pldma_net_write,
    .irq_sync = pldma_net_irq_sync,
    .ch_read = pldma_net_ch_read,
    .ch_write = pldma_net_ch_write,
    .desc_done = pldma_cq_send_done,
    .decode = pldma_req_decode,
    .xfer = pldma_req_xfer,
    .waiting = pldma_net_waiting,
    .ch_end = pldma_comp_ch_end,
    .ch_reset = pldma_net_ch_reset,
    .ch_check = pldma_net_ch_check,
    .bh = pldma_resp_bh,
    .flush = pldma_net_flush,
    .resumed = pldma_resp_resumed,
};
