/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, RDMA responder
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The responder of RDMA WRITE and READ requests (SEND and WRITE with
 * immediate take their receive WQEs in recv.c), per QP.  The expected PSN,
 * duplicates answered again, the key checked (index, generation, access,
 * range, PD) before a byte is touched, the responder's DMA, ACKs and
 * NAKs with the AETH MSN, READ response streams from the bottom half.
 * A fault on a WRITE destination or a READ source is answered with an
 * RNR NAK at the faulting PSN (a held stream inside a READ's responses)
 * and resolved by the responder's mode: an SMMU stall the OS resumes, or
 * a fault record (PLDMA_FR_F_REMOTE) that the driver answers with
 * KEY_CMD_RESOLVED, bounded by resp-fault-timeout.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "net-internal.h"
#include "trace.h"

/*
 * Parking, as the thesis's engine keeps a stream across a fault.  A WRITE
 * segment that faults on the responder is held (copied), and so are the
 * segments of its message that follow it in order while the fault is
 * resolved, instead of being dropped for the requester to send again.
 * When the fault is resolved the bottom half applies them in order, as
 * if they had just arrived (pldma_net_park_run()).  A fault on one of them
 * stops there: its RNR NAK names it and so acknowledges those before it.
 * When all are applied, one ACK names the last.  The requester got the
 * RNR NAK of the first fault and stopped: it resumes after the last PSN
 * acknowledged, and sends again none of the segments that were held.
 *
 * Bounded: at most PLDMA_NET_PARK_SEGS segments per connection (what
 * Linux rxe's requester keeps in flight; PLDMA's sends 64) and park-size
 * bytes per device; a segment beyond either, or after a gap, is dropped,
 * and then the last answer is an RNR NAK of the expected PSN instead of
 * the ACK, so the requester resends the rest after its RNR timer rather
 * than its retransmit timer.  WRITE payload without immediate data is
 * held, and with park-send on a QP the segments of a SEND whose receive
 * WQE is taken (recv.c), with or without immediate data; held segments
 * end at a message's Last.  park-send is off by default: the ACK that
 * names the last held segment can reach Linux rxe's requester while it
 * resends that message after its RNR timer, and rxe's completer then
 * moves past the message without completing its WQE (docs/specs/pldma.rst,
 * "Remote DMA").  Held segments are not migrated, and go on reset, on a
 * refused message, and when the fault ends without a resolution: the
 * expected PSN never moved past them, so the requester sends them again.
 */
typedef struct PLDMANetPark {
    uint32_t head;                      /* the next to apply */
    uint32_t n;                         /* held: [head, n) */
    uint32_t rch;                       /* responder channel (traces) */
    bool running;                       /* pldma_net_park_run() */
    bool gone;                          /* let go of while running */
    bool dropped;                       /* one after them was dropped */
    PLDMAPkt pkt[PLDMA_NET_PARK_SEGS];  /* payload: a copy of its own */
} PLDMANetPark;

/* The QP of connection @c (s->conns[i] is QP i's responder) */
static uint32_t conn_idx(PLDMACore *s, const PLDMANetConn *c)
{
    return c - s->conns;
}

static PLDMAQP *conn_qp(PLDMACore *s, const PLDMANetConn *c)
{
    return &s->qps[conn_idx(s, c)];
}

/* Payload bytes per segment of a connection: its QP's path MTU */
uint32_t pldma_net_conn_mtu(PLDMACore *s, const PLDMANetConn *c)
{
    return PLDMA_MTU_BYTES(conn_qp(s, c)->path_mtu);
}

/* The RNR timer code the responder sends: its QP's minimum RNR timer */
uint32_t pldma_net_conn_rnr_timer(PLDMACore *s, const PLDMANetConn *c)
{
    return PLDMA_QPT_MIN_RNR_TIMER(conn_qp(s, c)->timers);
}

/* Fill in where an answer of connection @c goes: its QP's peer */
static void conn_dest(PLDMACore *s, const PLDMANetConn *c, PLDMAPkt *p)
{
    p->qp = conn_idx(s, c) + 1;
    p->qpn = conn_qp(s, c)->dest_qpn;
}

/*
 * An ACK or NAK of connection @c.  The AETH MSN is the count of messages
 * the responder completed (IBA C9-147/148).
 */
void pldma_net_answer(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                      uint8_t syndrome)
{
    PLDMAPkt p = {
        .opcode = OP_ACK, .psn = psn & PLDMA_PSN_MASK,
        .syndrome = syndrome, .msn = c->msn,
    };

    conn_dest(s, c, &p);

    switch (syndrome) {
    case AETH_NAK_SEQ:
        pldma_net_cnt(s, PLDMA_NCNT_NAK_TX_SEQ);
        break;
    case AETH_NAK_ACCESS:
        pldma_net_cnt(s, PLDMA_NCNT_NAK_TX_ACCESS);
        break;
    case AETH_NAK_INVALID:
        pldma_net_cnt(s, PLDMA_NCNT_NAK_TX_INVALID);
        break;
    case AETH_NAK_OPERR:
        pldma_net_cnt(s, PLDMA_NCNT_NAK_TX_OPERR);
        break;
    default:
        pldma_net_cnt(s, AETH_KIND(syndrome) == 1 ? PLDMA_NCNT_NAK_TX_RNR
                                                  : PLDMA_NCNT_ACK_TX);
        break;
    }
    pldma_net_tx(s, &p);
}

/*
 * A NAK that ends a request (remote access, invalid request, remote
 * operational error): fatal to the connection, as IBA
 * 9.9.3.1.2-3 has it for these classes of responder error and as Linux
 * rxe's responder does (do_class_ac_error(), then rxe_qp_error()): the
 * NAK is sent once and the responder's QP goes to ERR, where it takes
 * no further frame.  So a peer gets one answer per connection for a bad
 * key, never an oracle to sweep, and nothing is half-refused.  The
 * requester's QP goes to ERR on receiving it (pldma_net_rx_ack()).
 */
void pldma_net_nak(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                   uint8_t syndrome)
{
    if (c->park && !c->park->running) {
        pldma_net_park_drop(s, c);      /* nothing held is applied now */
    }
    pldma_net_answer(s, c, psn, syndrome);
    trace_pldma_net_resp_fatal(conn_idx(s, c), psn & PLDMA_PSN_MASK,
                               syndrome);
    pldma_qp_to_err(s, conn_idx(s, c));
}

/*
 * A request ahead of the expected PSN: counted, and one sequence NAK
 * naming the expected PSN until a NAK or the expected packet resets
 * nak_seq
 */
void pldma_net_seq_nak(PLDMACore *s, PLDMANetConn *c)
{
    pldma_net_cnt(s, PLDMA_NCNT_OOO);
    if (!c->nak_seq) {
        c->nak_seq = true;
        pldma_net_answer(s, c, c->epsn, AETH_NAK_SEQ);
    }
}

/*
 * Check an access of connection @c to [va, va + len) with @rkey; 0 or a
 * NAK syndrome.  The key must be of the QP's PD (PASID and PD tag), and
 * the QP's access flags must allow the access too.
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
    if (k->pasid_reg != qp->pd || k->pd_tag != qp->pd_tag ||
        !(qp->access & access)) {
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
 * One access of the responder for connection @c through the PASID
 * register @pasid_reg (a key's, or a QP's PD).  In stall mode the SMMU
 * may stall it: the connection then waits for the STAG's resumption.  A
 * fault (stalled, or not) is counted and marks the connection faulted;
 * the caller says on what, and reports it.
 */
PLDMAAccess pldma_net_resp_dma(PLDMACore *s, PLDMANetConn *c,
                               uint32_t pasid_reg, uint64_t va, void *buf,
                               uint32_t len, bool is_write, uint64_t *fva)
{
    PLDMADma d = {
        .idx = PLDMA_FR_CH_REMOTE, .pasid_reg = pasid_reg, .can_stall = true,
    };
    bool busy = s->busy;
    PLDMAAccess a;

    s->busy = true;
    a = pldma_dma_rw(s, &d, va, buf, len, is_write, fva);
    s->busy = busy;
    if (a == PLDMA_ACC_OK || a == PLDMA_ACC_BUSERR) {
        return a;
    }
    pldma_net_cnt(s, PLDMA_NCNT_RX_FAULTS);
    c->fault = true;
    c->stalled = a == PLDMA_ACC_STALLED;
    c->stag = d.stag;
    return a;
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
    a = pldma_net_resp_dma(s, c, k->pasid_reg, va, buf, len, is_write,
                           &fva);
    if (a == PLDMA_ACC_OK || a == PLDMA_ACC_BUSERR) {
        return a;
    }
    c->fault_key = PLDMA_RKEY_INDEX(rkey);
    trace_pldma_net_resp_fault((uint32_t)(c - s->conns), rkey, fva, is_write,
                               c->stalled);
    if (!c->stalled) {
        /*
         * Report it: a fault record in the queue, as a channel's (in
         * stall mode too, when the SMMU did not stall it)
         */
        PLDMAFaultRec r = {
            .channel = PLDMA_FR_CH_REMOTE,
            .flags = PLDMA_FR_F_REMOTE | (is_write ? PLDMA_FR_F_WRITE : 0),
            .pasid_reg = k->pasid_reg, .va = fva, .desc = rkey,
            .done = msg_off, .len = msg_len,
        };

        if (!pldma_post_fault(s, &r)) {
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

static void park_free(PLDMACore *s, PLDMANetPark *k)
{
    uint32_t i;

    for (i = k->head; i < k->n; i++) {
        s->park_bytes -= k->pkt[i].plen;
        g_free((void *)k->pkt[i].payload);
    }
    g_free(k);
}

/*
 * Let go of what connection @c holds.  While one of them is being applied
 * (its QP went to ERR meanwhile), pldma_net_park_run() frees them after
 * it: its payload is in use.
 */
void pldma_net_park_drop(PLDMACore *s, PLDMANetConn *c)
{
    PLDMANetPark *k = c->park;

    if (!k) {
        return;
    }
    if (k->head < k->n) {
        trace_pldma_net_park_drop((uint32_t)(c - s->conns), k->pkt[k->head].psn,
                                  k->n - k->head);
    }
    c->park = NULL;
    if (k->running) {
        k->gone = true;
        return;
    }
    park_free(s, k);
}

/* Does connection @c hold segments that are not being applied? */
bool pldma_net_parked(const PLDMANetConn *c)
{
    return c->park && !c->park->running;
}

/* Is one of connection @c's held segments being applied? */
bool pldma_net_park_running(const PLDMANetConn *c)
{
    return c->park && c->park->running;
}

/*
 * May @p be held for connection @c: a segment of its WRITE without
 * immediate data, or of the SEND whose receive WQE is taken (a QP's),
 * within park-size
 */
static bool park_fits(PLDMACore *s, const PLDMANetConn *c, const PLDMAPkt *p)
{
    int32_t d;

    if (!p->plen ||
        p->plen > s->park_size - MIN(s->park_size, s->park_bytes)) {
        return false;
    }
    if (pldma_net_op_flags(p->opcode) & PLDMA_NET_F_SEND) {
        return s->park_send && c->rmsg_valid &&
               pldma_net_psn_diff(p->psn, c->rmsg_psn) >= 0;
    }
    d = pldma_net_psn_diff(p->psn, c->msg_psn);
    return !p->has_imm && c->msg_valid && d >= 0 &&
           d < (int32_t)c->msg_nsegs;
}

/*
 * Hold @p, a WRITE or SEND segment of connection @c's message while a
 * fault of @c is being resolved: the expected one (which faulted) when
 * nothing is held, else the one after the last held, of the same message.
 * False: not held (dropped).
 */
bool pldma_net_park_add(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                        uint32_t rch)
{
    PLDMANetPark *k = c->park;
    PLDMAPkt *q;

    if (!park_fits(s, c, p)) {
        if (k && k->n &&
            pldma_net_psn_diff(p->psn, k->pkt[k->n - 1].psn) > 0) {
            k->dropped = true;
        }
        return false;
    }
    if (k && k->running) {
        return false;
    }
    if (k && k->head == k->n) {
        pldma_net_park_drop(s, c);
        k = NULL;
    }
    if (!k) {
        if (p->psn != c->epsn) {
            return false;
        }
        k = c->park = g_new0(PLDMANetPark, 1);
        k->rch = rch;
    } else if (p->psn != ((k->pkt[k->n - 1].psn + 1) & PLDMA_PSN_MASK) ||
               (pldma_net_op_flags(k->pkt[k->n - 1].opcode) &
                PLDMA_NET_F_LAST)) {
        if (pldma_net_psn_diff(p->psn, k->pkt[k->n - 1].psn) > 0) {
            k->dropped = true;          /* a gap: what follows is lost */
        }
        return false;
    } else if (k->n == PLDMA_NET_PARK_SEGS) {
        if (!k->head) {
            k->dropped = true;
            return false;
        }
        /* the applied ones make room */
        memmove(k->pkt, k->pkt + k->head, (k->n - k->head) * sizeof(*q));
        k->n -= k->head;
        k->head = 0;
    }
    q = &k->pkt[k->n++];
    *q = *p;
    q->payload = g_memdup2(p->payload, p->plen);
    s->park_bytes += p->plen;
    pldma_net_cnt(s, PLDMA_NCNT_PARKED);
    trace_pldma_net_park((uint32_t)(c - s->conns), p->psn, k->n - k->head);
    return true;
}

/*
 * The fault of connection @c is resolved: apply what it holds, in order,
 * within the bottom half's @budget.  True while some is left to apply
 * and nothing stops it (another fault does).
 */
static bool pldma_net_park_run(PLDMACore *s, PLDMANetConn *c,
                               uint64_t *budget)
{
    PLDMANetPark *k = c->park;

    while (k->head < k->n && !c->fault) {
        PLDMAPkt *q = &k->pkt[k->head];
        uint32_t psn = q->psn;

        if (!*budget || s->tx_blocked) {
            return true;        /* more, in a later turn */
        }
        if (psn != c->epsn) {
            /* the message was refused, or the QP cleared, meanwhile */
            pldma_net_park_drop(s, c);
            return false;
        }
        k->running = true;
        if (pldma_net_op_flags(q->opcode) & PLDMA_NET_F_SEND) {
            pldma_recv_rx_send(s, c, q, conn_idx(s, c));
        } else {
            pldma_net_rx_write(s, c, q, k->rch);
        }
        k->running = false;
        if (k->gone) {
            /* its QP went to ERR (a receive CQ failed): nothing answers */
            park_free(s, k);
            return false;
        }
        if (c->fault) {
            /* faulted again: it stays held, and those behind it */
            return false;
        }
        if (c->epsn != ((psn + 1) & PLDMA_PSN_MASK)) {
            /* refused (NAKed), or its QP went to ERR: the rest goes too */
            pldma_net_park_drop(s, c);
            return false;
        }
        s->park_bytes -= q->plen;
        g_free((void *)q->payload);
        q->payload = NULL;
        k->head++;
        *budget -= MIN(*budget, q->plen);
    }
    if (!c->fault) {
        /*
         * All applied: the requester resumes after the last of them, at
         * once with rnr-resume, else when its RNR timer expires
         */
        trace_pldma_net_park_done((uint32_t)(c - s->conns), c->epsn);
        if (k->dropped) {
            /*
             * The requester sent more than was held: an RNR NAK of the
             * expected PSN acknowledges the rest and has it resend from
             * there after its RNR timer, instead of waiting for its
             * retransmit timer (a standard requester, Linux rxe, keeps
             * up to 128 PSNs in flight); what is still in flight behind
             * it gets no sequence NAK on top
             */
            c->nak_seq = true;
            pldma_net_answer(s, c, c->epsn,
                             AETH_RNR(pldma_net_conn_rnr_timer(s, c)));
        } else {
            if (s->rnr_resume) {
                pldma_net_cnt(s, PLDMA_NCNT_RESUME_TX);
            }
            pldma_net_answer(s, c, c->epsn - 1, AETH_ACK);
        }
        pldma_net_park_drop(s, c);
    }
    return false;
}

void pldma_net_rx_write(PLDMACore *s, PLDMANetConn *c,
                        const PLDMAPkt *p, uint32_t rch)
{
    uint32_t mtu = pldma_net_conn_mtu(s, c);
    uint32_t fl = pldma_net_op_flags(p->opcode);
    bool first = fl & PLDMA_NET_F_FIRST, last = fl & PLDMA_NET_F_LAST;
    uint64_t off;
    uint8_t nak;
    PLDMAAccess a;
    int32_t d = pldma_net_psn_diff(p->psn, c->epsn);

    if (d < 0) {
        /* a duplicate: answer again, it may have been our answer lost */
        pldma_net_cnt(s, PLDMA_NCNT_DUPS);
        if (!p->ackreq && !last) {
            return;
        }
        pldma_net_answer(s, c, c->epsn - 1, AETH_ACK);
        return;
    }
    /* far ahead: garbage (a requester never skips a PSN) */
    if (d > PLDMA_NET_PSN_AHEAD) {
        pldma_net_qp_drop(s, p, "PSN outside the window");
        return;
    }
    if (c->fault || (c->park && !c->park->running)) {
        /*
         * Not ready yet: held behind the fault (or behind those held,
         * until they are applied), or the same answer as the first time
         */
        if (pldma_net_park_add(s, c, p, rch)) {
            return;
        }
        pldma_net_cnt(s, PLDMA_NCNT_OOO);
        if (d == 0 && c->fault) {
            pldma_net_answer(s, c, c->epsn,
                             AETH_RNR(pldma_net_conn_rnr_timer(s, c)));
        }
        return;
    }
    /* the expected PSN only: a sequence NAK, nothing moves */
    if (d > 0) {
        pldma_net_seq_nak(s, c);
        return;
    }
    if (first) {
        /*
         * A zero-length WRITE needs no valid R_Key or VA (IBA C9-88):
         * nothing is accessed
         */
        nak = p->dmalen > MIN(s->max_transfer, PLDMA_NET_MAX_MSG) ||
              last != (p->dmalen <= mtu) ||         /* Only, or First */
              c->rmsg_valid ||                      /* a SEND unfinished */
              /* a WRITE unfinished (its own First again after an RNR) */
              (pldma_net_in_write(c, p->psn) && p->psn != c->msg_psn)
              ? AETH_NAK_INVALID
              : p->dmalen == 0 ? 0
              : pldma_net_check_key(s, c, p->rkey, p->va, p->dmalen,
                                    PLDMA_KEY_ACC_WRITE);
        if (nak) {
            /* refused: the NAK ends the connection (pldma_net_nak()) */
            trace_pldma_net_refused(rch, p->psn, p->rkey, p->va, p->dmalen,
                                    nak);
            pldma_net_nak(s, c, p->psn, nak);
            return;
        }
        c->msg_valid = true;
        c->msg_psn = p->psn;
        c->msg_va = p->va;
        c->msg_len = p->dmalen;
        c->msg_rkey = p->rkey;
        c->msg_nsegs = pldma_net_nsegs(mtu, p->dmalen);
    } else if (!c->msg_valid ||
               pldma_net_psn_diff(p->psn, c->msg_psn) < 0 ||
               pldma_net_psn_diff(p->psn, c->msg_psn) >=
               (int32_t)c->msg_nsegs) {
        /*
         * Not a segment of the current message: no message, or a PSN
         * outside it, also before its First (an expected PSN that went
         * round the 24-bit space): an invalid request
         */
        trace_pldma_net_refused(rch, p->psn, 0, 0, p->plen,
                                AETH_NAK_INVALID);
        pldma_net_nak(s, c, p->psn, AETH_NAK_INVALID);
        return;
    }
    off = (uint64_t)pldma_net_psn_diff(p->psn, c->msg_psn) * mtu;
    if (off + p->plen > c->msg_len || (!last && p->plen != mtu) ||
        (last && off + p->plen != c->msg_len)) {
        pldma_net_nak(s, c, p->psn, AETH_NAK_INVALID);
        return;
    }
    /* the key, again: it may have been revoked since the first segment */
    nak = p->plen ? pldma_net_check_key(s, c, c->msg_rkey, c->msg_va + off,
                                        p->plen, PLDMA_KEY_ACC_WRITE) : 0;
    if (nak) {
        pldma_net_nak(s, c, p->psn, nak);
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
        pldma_net_nak(s, c, p->psn, AETH_NAK_OPERR);
        return;
    }
    if (a != PLDMA_ACC_OK) {
        /*
         * Drop it; the requester resends from this segment.  The RNR
         * NAK names the expected PSN as a sequence NAK would: the
         * segments in flight behind it are dropped without a sequence NAK
         * on top (to rxe that means "resend now", ending its RNR wait)
         */
        c->fault_psn = p->psn;
        c->nak_seq = true;
        /* held, with the segments that follow it (not when it is held) */
        pldma_net_park_add(s, c, p, rch);
        pldma_net_answer(s, c, p->psn,
                         AETH_RNR(pldma_net_conn_rnr_timer(s, c)));
        return;
    }
    c->epsn = (p->psn + 1) & PLDMA_PSN_MASK;
    c->nak_seq = false;
    if (!p->has_imm && c->imm_wqe) {
        /*
         * A WRITE with immediate took the receive WQE at this PSN and
         * faulted; what came again at the PSN has no immediate: the WQE
         * is not consumed, it stays posted for what comes next (before,
         * it stayed taken too, and a later WRITE with immediate completed
         * it a second time)
         */
        trace_pldma_recv_imm_released(rch, p->psn);
        c->imm_wqe = false;
    }
    if (last) {
        c->msn = (c->msn + 1) & PLDMA_PSN_MASK;
    }
    /* ... and its CQE; no answer if the QP went to ERR (its CQ failed) */
    if (p->has_imm && !pldma_recv_imm_done(s, c, p, rch)) {
        return;
    }
    /* a held one is acknowledged when all are applied */
    if ((p->ackreq || last) && !(c->park && c->park->running)) {
        pldma_net_answer(s, c, p->psn, AETH_ACK);
    }
}

/* (rdo_zero has a bit per READ resource) */
QEMU_BUILD_BUG_ON(PLDMA_NET_RD_ORIG > 8 * sizeof_field(PLDMANetConn,
                                                       rdo_zero));

/*
 * A duplicate READ request @p repeats one its QP took: one of the READs
 * remembered whose PSNs hold @p's, with the same R_Key, and @p's range is
 * the original's or a part of it (IBA 9.7.5.1.x; Linux rxe's responder,
 * duplicate_request(), drops any other silently).  It is then served
 * from its own PSN, VA and length.  A zero-length READ holds one PSN.
 */

static bool pldma_net_rd_dup_ok(PLDMACore *s, const PLDMANetConn *c,
                                const PLDMAPkt *p)
{
    uint32_t mtu = pldma_net_conn_mtu(s, c), i, k;

    for (i = 0; i < PLDMA_NET_RD_ORIG; i++) {
        int32_t seg;

        /* the newest first */
        k = (c->rdo_next + PLDMA_NET_RD_ORIG - 1 - i) % PLDMA_NET_RD_ORIG;
        seg = pldma_net_psn_diff(p->psn, c->rdo_psn[k]);
        if ((!c->rdo_len[k] && !(c->rdo_zero & BIT(k))) || seg < 0 ||
            seg >= (int32_t)pldma_net_nsegs(mtu, c->rdo_len[k])) {
            continue;
        }
        return p->rkey == c->rdo_rkey[k] && p->va >= c->rdo_va[k] &&
               p->dmalen <= c->rdo_len[k] &&
               p->va - c->rdo_va[k] <= c->rdo_len[k] - p->dmalen;
    }
    return false;
}

/*
 * Connection @c starts sending the responses of the READ of @len bytes
 * at @va (key @rkey) whose first response has PSN @psn
 */
static void rd_start(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                     uint64_t va, uint32_t len, uint32_t rkey, bool fresh)
{
    if (fresh) {
        /*
         * A READ counts in the MSN when it starts being answered, as
         * rxe's execute() counts it (C9-148): its responses carry it
         */
        c->msn = (c->msn + 1) & PLDMA_PSN_MASK;
    }
    c->rd_fresh = fresh;
    c->rd_active = true;
    c->rd_first_psn = psn;
    c->rd_psn = psn;
    c->rd_va = va;
    c->rd_len = len;
    c->rd_off = 0;
    c->rd_rkey = rkey;
    /*
     * A READ is served whole, as IBA has it: a standard requester (Linux
     * rxe) asks for the rest of a shortened READ only when its retransmit
     * timer fires.  The bottom half sends its responses a turn at a time,
     * in turn with the other connections' and the local channels
     * (pldma_net_bh()).
     */
}

/*
 * READ request @p for a QP whose responder is sending another READ's
 * responses: it waits its turn (IBA's responder READ resources, up to
 * max_dest_rd_atomic per QP; answered in the order they came).  False if
 * no resource is left.
 */
static bool rd_queue(PLDMANetConn *c, const PLDMAPkt *p, bool fresh)
{
    uint32_t k;

    if (c->rdq_n >= PLDMA_NET_RD_ORIG - 1) {
        return false;
    }
    k = (c->rdq_head + c->rdq_n) % PLDMA_NET_RD_ORIG;
    c->rdq_fresh = deposit32(c->rdq_fresh, k, 1, fresh);
    c->rdq_psn[k] = p->psn;
    c->rdq_va[k] = p->va;
    c->rdq_len[k] = p->dmalen;
    c->rdq_rkey[k] = p->rkey;
    c->rdq_n++;
    return true;
}

/* The READ after the one connection @c finished answering, if one waits */
static void rd_next(PLDMACore *s, PLDMANetConn *c)
{
    uint32_t k = c->rdq_head;

    if (!c->rdq_n) {
        return;
    }
    c->rdq_head = (c->rdq_head + 1) % PLDMA_NET_RD_ORIG;
    c->rdq_n--;
    rd_start(s, c, c->rdq_psn[k], c->rdq_va[k], c->rdq_len[k],
             c->rdq_rkey[k], c->rdq_fresh & BIT(k));
}

/*
 * Does duplicate READ @p of connection @c repeat the READ being answered
 * from the response it is at (a requester that timed out on it)?  It then
 * takes that READ's place: answered from @p's own PSN, as IBA 9.9.5
 * re-executes a duplicate.  Any other duplicate waits its turn.
 */
static bool rd_dup_restarts(PLDMACore *s, const PLDMANetConn *c,
                            const PLDMAPkt *p)
{
    uint32_t mtu = pldma_net_conn_mtu(s, c);
    int32_t at = pldma_net_psn_diff(c->rd_psn, p->psn);

    return c->rd_active && p->rkey == c->rd_rkey && at >= 0 &&
           at < (int32_t)pldma_net_nsegs(mtu, p->dmalen) &&
           pldma_net_psn_diff(p->psn, c->rd_first_psn) >= 0;
}

void pldma_net_rx_read_req(PLDMACore *s, PLDMANetConn *c,
                           const PLDMAPkt *p, uint32_t rch)
{
    int32_t d = pldma_net_psn_diff(p->psn, c->epsn);
    uint8_t nak;

    if (d < 0 && !pldma_net_rd_dup_ok(s, c, p)) {
        /* not a repeat of a READ taken, or more than it: dropped */
        pldma_net_qp_drop(s, p, "duplicate READ beyond the original");
        return;
    }
    if (c->fault && c->rd_hold && d < 0) {
        /*
         * The requester asks again for (the rest of) the READ whose
         * response stream is held: serve that request once the fault is
         * resolved, and say nothing now (no RNR inside a READ's responses)
         */
    } else if (c->fault && d <= 0) {
        pldma_net_cnt(s, PLDMA_NCNT_OOO);
        pldma_net_answer(s, c, p->psn,
                         AETH_RNR(pldma_net_conn_rnr_timer(s, c)));
        return;
    }
    if (d < 0) {
        /* answered again: reads are idempotent */
        pldma_net_cnt(s, PLDMA_NCNT_DUPS);
    } else if (d > PLDMA_NET_PSN_AHEAD) {
        pldma_net_qp_drop(s, p, "PSN outside the window");
        return;
    } else if (d > 0) {
        /* the expected PSN only: a sequence NAK, nothing moves */
        pldma_net_seq_nak(s, c);
        return;
    }
    /*
     * A zero-length READ needs no valid R_Key or VA, as a zero-length
     * WRITE (C9-88; Linux rxe checks neither): nothing is read, one READ
     * Response Only without payload answers it
     */
    nak = p->dmalen > MIN(s->max_transfer, PLDMA_NET_MAX_MSG) ||
          (d >= 0 && c->rd_active &&                      /* resources */
           c->rdq_n >= PLDMA_NET_RD_ORIG - 1) ||
          (d == 0 && pldma_net_in_write(c, p->psn))       /* inside a WRITE */
          ? AETH_NAK_INVALID
          : p->dmalen == 0 ? 0
          : pldma_net_check_key(s, c, p->rkey, p->va, p->dmalen,
                                PLDMA_KEY_ACC_READ);
    if (nak) {
        trace_pldma_net_refused(rch, p->psn, p->rkey, p->va, p->dmalen,
                                nak);
        pldma_net_nak(s, c, p->psn, nak);
        return;
    }
    /*
     * The request came from the QP's peer (its IP, the QPN's generation,
     * a PSN in the window) with a key that allows the READ; the responses
     * go to the QP's DEST_MAC, never to a frame's source.  A READ taken
     * while another is answered waits its turn; a duplicate of the one
     * being answered takes its place.
     */
    if (c->rd_active && !(d < 0 && rd_dup_restarts(s, c, p))) {
        if (!rd_queue(c, p, d >= 0)) {
            /* (a duplicate beyond the resources: its original answers) */
            pldma_net_qp_drop(s, p, "duplicate READ beyond the resources");
            return;
        }
        trace_pldma_net_read_queued(rch, p->psn, p->dmalen, c->rdq_n);
    } else {
        rd_start(s, c, p->psn, p->va, p->dmalen, p->rkey, d >= 0);
    }
    if (d >= 0) {
        c->epsn = (p->psn + pldma_net_nsegs(pldma_net_conn_mtu(s, c),
                                            p->dmalen)) & PLDMA_PSN_MASK;
        c->nak_seq = false;
        /* the original its duplicates are checked against */
        c->rdo_psn[c->rdo_next] = p->psn;
        c->rdo_va[c->rdo_next] = p->va;
        c->rdo_len[c->rdo_next] = p->dmalen;
        c->rdo_zero = deposit32(c->rdo_zero, c->rdo_next, 1, p->dmalen == 0);
        c->rdo_rkey[c->rdo_next] = p->rkey;
        c->rdo_next = (c->rdo_next + 1) % PLDMA_NET_RD_ORIG;
    }
    pldma_schedule(s);
}

/*
 * A READ of connection @c ends in NAK @syndrome at the response it is at
 * (its key revoked meanwhile, a bus error): it did not complete, so the
 * NAK's MSN does not count it (nor those waiting behind it, which never
 * started)
 */
static void rd_nak(PLDMACore *s, PLDMANetConn *c, uint8_t syndrome)
{
    c->rd_active = false;
    if (c->rd_fresh) {
        c->msn = (c->msn - 1) & PLDMA_PSN_MASK;
    }
    c->rdq_n = 0;
    pldma_net_nak(s, c, c->rd_psn, syndrome);
}

/*
 * Send READ responses, from the bottom half, within @budget bytes: each
 * connection at most PLDMA_NET_WINDOW responses a turn, the first
 * connection served moving round with every call, so that one long READ
 * shares the link with the others' (and the local channels')
 */
bool pldma_net_bh(PLDMACore *s, uint64_t *budget)
{
    uint8_t buf[PLDMA_NET_MAX_MTU];
    bool more = false;
    uint32_t i, nconns = PLDMA_NET_NCONNS(s);

    if (!s->nic) {
        return false;
    }
    s->resp_rr = (s->resp_rr + 1) % nconns;
    for (i = 0; i < nconns; i++) {
        PLDMANetConn *c = &s->conns[(s->resp_rr + i) % nconns];
        PLDMAQP *qp = conn_qp(s, c);
        uint32_t turn = PLDMA_NET_WINDOW;

        if (c->park && !c->fault && !c->park->running) {
            if (qp->state != PLDMA_QPS_RTS &&
                qp->state != PLDMA_QPS_RTR) {
                pldma_net_park_drop(s, c);      /* not receiving any more */
            } else {
                more |= pldma_net_park_run(s, c, budget);
            }
        }
        while (c->rd_active && !c->fault && *budget && !s->tx_blocked &&
               turn) {
            uint32_t n = MIN(pldma_net_conn_mtu(s, c), c->rd_len - c->rd_off);
            bool first = c->rd_off == 0, last = c->rd_off + n == c->rd_len;
            PLDMAPkt p = {
                .psn = c->rd_psn, .payload = buf, .plen = n,
                .syndrome = AETH_ACK, .msn = c->msn,
            };
            PLDMAAccess a;

            conn_dest(s, c, &p);
            /* (a zero-length READ: no key, nothing read, one response) */
            if (n && pldma_net_check_key(s, c, c->rd_rkey,
                                         c->rd_va + c->rd_off, n,
                                         PLDMA_KEY_ACC_READ)) {
                rd_nak(s, c, AETH_NAK_ACCESS);  /* revoked meanwhile */
                break;
            }
            a = n ? pldma_net_resp_rw(s, c, c->rd_rkey, c->rd_va + c->rd_off,
                                      buf, n, false, c->rd_off, c->rd_len)
                  : PLDMA_ACC_OK;
            if (a == PLDMA_ACC_BUSERR) {
                rd_nak(s, c, AETH_NAK_OPERR);
                break;
            }
            if (a != PLDMA_ACC_OK && first) {
                /*
                 * Before the first response: an RNR NAK of the request,
                 * whose requester asks again from its start, and sends
                 * again what it sent after it (the READs waiting behind
                 * it come again as duplicates, and are answered then)
                 */
                c->rd_active = false;
                c->rdq_n = 0;
                c->fault_psn = c->rd_psn;
                pldma_net_answer(s, c, c->rd_psn,
                                 AETH_RNR(pldma_net_conn_rnr_timer(s, c)));
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
                trace_pldma_net_read_held(conn_idx(s, c), c->rd_psn,
                                          c->rd_off);
                break;
            }
            p.opcode = first ? (last ? OP_READ_RESP_ONLY : OP_READ_RESP_FIRST)
                             : (last ? OP_READ_RESP_LAST
                                     : OP_READ_RESP_MIDDLE);
            pldma_net_tx(s, &p);
            c->rd_off += n;
            c->rd_psn = (c->rd_psn + 1) & PLDMA_PSN_MASK;
            *budget -= MIN(*budget, n);
            turn--;
            if (last) {
                c->rd_active = false;
                rd_next(s, c);          /* the next READ, in order */
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

    trace_pldma_net_resolved(conn_idx(s, c), c->epsn, ok);
    c->fault = false;
    c->stalled = false;
    c->fault_recv = false;
    if (c->rd_hold) {
        c->rd_hold = false;
        if (ok) {
            /* the held READ response stream goes on (pldma_net_bh) */
            pldma_schedule(s);
            return;
        }
    }
    if (c->park) {
        if (ok) {
            /* the held WRITE segments are applied (pldma_net_bh) */
            pldma_schedule(s);
            return;
        }
        pldma_net_park_drop(s, c);
    }
    if (!ok) {
        /* a receive WQE's buffer: the WQE completes in error (recv.c) */
        if (recv && !pldma_recv_failed(s, c)) {
            return;             /* its QP went to ERR: nothing to answer */
        }
        /* the OS could not make the page present: end the message */
        pldma_net_nak(s, c, c->fault_psn, AETH_NAK_OPERR);
        return;
    }
    if (s->rnr_resume) {
        /*
         * The PSN before the one that faulted.  On a READ the expected
         * PSN is past the whole request already, and an ACK of the READ's
         * own PSN would tell a standard requester (Linux rxe) that the
         * READ is done: it completes it with none of the data.
         */
        pldma_net_cnt(s, PLDMA_NCNT_RESUME_TX);
        pldma_net_answer(s, c, c->fault_psn - 1, AETH_ACK);
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
void pldma_net_fault_timer(void *opaque)
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
        for (j = 0; j < PLDMA_NET_NCONNS(s); j++) {
            PLDMANetConn *c = &s->conns[j];

            if (c->fault && !c->stalled && !c->fault_recv &&
                c->fault_key == i) {
                pldma_net_conn_resolved(s, c, false);
            }
        }
    }
    for (j = 0; j < PLDMA_NET_NCONNS(s); j++) {
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
    pldma_schedule(s);
}

bool pldma_net_resumed(PLDMACore *s, uint16_t stag, SMMUStallResponse resp)
{
    uint32_t i;

    if (!s->nic) {
        return false;
    }
    for (i = 0; i < PLDMA_NET_NCONNS(s); i++) {
        PLDMANetConn *c = &s->conns[i];

        if (c->fault && c->stalled && c->stag == stag) {
            pldma_net_conn_resolved(s, c, resp == SMMU_STALL_RETRY);
            return true;
        }
    }
    return false;
}

/* QP @idx enters RTR: its responder expects RQ_PSN, nothing else */
void pldma_net_qp_connect(PLDMACore *s, uint32_t idx)
{
    PLDMANetConn *c = &s->conns[idx];

    pldma_net_qp_clear(s, idx);
    c->epsn = s->qps[idx].rq_psn & PLDMA_PSN_MASK;
    trace_pldma_net_conn_sync(idx, c->epsn);
}

/*
 * QP @idx leaves RTR/RTS (to ERR or RESET), or enters RTR: its responder
 * forgets everything of the connection that was, the message and READs
 * in progress and a fault being resolved too.  A stall the SMMU still
 * holds belongs to that connection: when the OS answers it, no
 * connection claims it (pldma_net_resumed()) and nothing is sent, so the
 * next connection on this index, the same owner's or another process's,
 * starts clean and inherits no fault, no RNR and no NAK of it.
 */
void pldma_net_qp_clear(PLDMACore *s, uint32_t idx)
{
    PLDMANetConn *c;

    if (!s->conns) {
        return;
    }
    c = &s->conns[idx];
    pldma_net_park_drop(s, c);
    if (c->fault && c->stalled) {
        trace_pldma_net_stall_dropped(idx, c->stag);
    }
    memset(c, 0, sizeof(*c));
}
