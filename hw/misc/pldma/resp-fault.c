/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, responder faults
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What the responder (resp.c) does when the page a request touches is not
 * present: the responder's own DMA, which may fault or stall; the fault
 * answered with an RNR NAK at the faulting PSN and resolved by the
 * responder's mode, an SMMU stall the OS resumes or a fault record
 * (PLDMA_FR_F_REMOTE) the driver answers with KEY_CMD_RESOLVED or
 * QP_CMD_RESOLVED, bounded by resp-fault-timeout; the segments held
 * ("parked") while it is resolved, and the resumption.  The thesis's
 * subject on the receiving node.
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
 * if they had just arrived (pldma_resp_park_run()).  A fault on one of them
 * stops there: its RNR NAK names it and so acknowledges those before it.
 * When all are applied, one ACK names the last.  The requester got the
 * RNR NAK of the first fault and stopped: it resumes after the last PSN
 * acknowledged, and sends again none of the segments that were held.
 *
 * Bounded: at most PLDMA_NET_PARK_SEGS segments per connection (what
 * Linux rxe's requester keeps in flight), or the device's own window at
 * the smallest MTU when that is more (a long modeled link), and park-size
 * bytes per device; a segment beyond either, or after a gap, is dropped,
 * and then the last answer is an RNR NAK of the expected PSN instead of
 * the ACK, so the requester resends the rest after its RNR timer rather
 * than its retransmit timer.  WRITE payload without immediate data is
 * held, and with park-send on a QP the segments of a SEND whose receive
 * WQE is taken (rq.c), with or without immediate data; held segments
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
    bool running;                       /* pldma_resp_park_run() */
    bool gone;                          /* let go of while running */
    bool dropped;                       /* one after them was dropped */
    uint32_t cap;                       /* segments it may hold */
    PLDMAPkt pkt[];                     /* payload: a copy of its own */
} PLDMANetPark;

/*
 * A reported responder fault of connection @c (a key's, or a receive
 * WQE's) waits at most resp-fault-timeout for its answer: arm the timer
 */
void pldma_resp_fault_arm(PLDMACore *s, PLDMANetConn *c)
{
    c->fault_deadline = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                        (int64_t)s->resp_fault_ms * SCALE_MS;
    if (s->net->fault_timer && s->resp_fault_ms) {
        timer_mod_anticipate_ns(s->net->fault_timer, c->fault_deadline);
    }
}

/*
 * One access of the responder for connection @c through the PASID
 * register @pasid_reg (a key's, or a QP's PD).  In stall mode the SMMU
 * may stall it: the connection then waits for the STAG's resumption.  A
 * fault (stalled, or not) is counted and marks the connection faulted;
 * the caller says on what, and reports it.
 */
PLDMAAccess pldma_resp_dma(PLDMACore *s, PLDMANetConn *c,
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
PLDMAAccess pldma_resp_rw(PLDMACore *s, PLDMANetConn *c, uint32_t rkey,
                          uint64_t va, void *buf, uint32_t len,
                          bool is_write, uint32_t msg_off, uint32_t msg_len)
{
    PLDMAKey *k = &s->net->keys[PLDMA_RKEY_INDEX(rkey)];
    uint64_t fva;
    PLDMAAccess a;

    if (k->fault) {
        c->fault = true;
        c->fault_key = PLDMA_RKEY_INDEX(rkey);
        c->stalled = false;
        c->fault_deadline = k->fault_deadline;
        trace_pldma_net_resp_key_wait(pldma_resp_qpi(s, c), rkey);
        return PLDMA_ACC_FAULT;
    }
    a = pldma_resp_dma(s, c, k->pasid_reg, va, buf, len, is_write,
                           &fva);
    if (a == PLDMA_ACC_OK || a == PLDMA_ACC_BUSERR) {
        return a;
    }
    c->fault_key = PLDMA_RKEY_INDEX(rkey);
    trace_pldma_net_resp_fault(pldma_resp_qpi(s, c), rkey, fva, is_write,
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
            trace_pldma_net_resp_unresolvable(pldma_resp_qpi(s, c), rkey,
                                              fva);
            pldma_update_irq(s);
            return PLDMA_ACC_BUSERR;
        }
        pldma_resp_fault_arm(s, c);
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
        s->net->park_bytes -= k->pkt[i].plen;
        g_free((void *)k->pkt[i].payload);
    }
    g_free(k);
}

/*
 * Let go of what connection @c holds.  While one of them is being applied
 * (its QP went to ERR meanwhile), pldma_resp_park_run() frees them after
 * it: its payload is in use.
 */
void pldma_resp_park_drop(PLDMACore *s, PLDMANetConn *c)
{
    PLDMANetPark *k = c->park;

    if (!k) {
        return;
    }
    if (k->head < k->n) {
        trace_pldma_net_park_drop(pldma_resp_qpi(s, c), k->pkt[k->head].psn,
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
bool pldma_resp_parked(const PLDMANetConn *c)
{
    return c->park && !c->park->running;
}

/* Is one of connection @c's held segments being applied? */
bool pldma_resp_park_running(const PLDMANetConn *c)
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
        p->plen > s->park_size - MIN(s->park_size, s->net->park_bytes)) {
        return false;
    }
    if (pldma_hdr_op_flags(p->opcode) & PLDMA_NET_F_SEND) {
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
bool pldma_resp_park_add(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p)
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
        pldma_resp_park_drop(s, c);
        k = NULL;
    }
    if (!k) {
        if (p->psn != c->epsn) {
            return false;
        }
        uint32_t cap = MAX(PLDMA_NET_PARK_SEGS, pldma_net_window(s, 256));

        k = c->park = g_malloc0(sizeof(*k) + cap * sizeof(k->pkt[0]));
        k->cap = cap;
    } else if (p->psn != ((k->pkt[k->n - 1].psn + 1) & PLDMA_PSN_MASK) ||
               (pldma_hdr_op_flags(k->pkt[k->n - 1].opcode) &
                PLDMA_NET_F_LAST)) {
        if (pldma_net_psn_diff(p->psn, k->pkt[k->n - 1].psn) > 0) {
            k->dropped = true;          /* a gap: what follows is lost */
        }
        return false;
    } else if (k->n == k->cap) {
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
    s->net->park_bytes += p->plen;
    pldma_net_cnt(s, PLDMA_NCNT_PARKED);
    trace_pldma_net_park(pldma_resp_qpi(s, c), p->psn, k->n - k->head);
    return true;
}

/*
 * The fault of connection @c is resolved: apply what it holds, in order,
 * within the bottom half's @budget.  True while some is left to apply
 * and nothing stops it (another fault does).
 */
bool pldma_resp_park_run(PLDMACore *s, PLDMANetConn *c, uint64_t *budget)
{
    PLDMANetPark *k = c->park;

    while (k->head < k->n && !c->fault) {
        PLDMAPkt *q = &k->pkt[k->head];
        uint32_t psn = q->psn;

        if (!*budget || s->net->tx_blocked) {
            return true;        /* more, in a later turn */
        }
        if (psn != c->epsn) {
            /* the message was refused, or the QP cleared, meanwhile */
            pldma_resp_park_drop(s, c);
            return false;
        }
        k->running = true;
        pldma_resp_rx(s, c, q);
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
            pldma_resp_park_drop(s, c);
            return false;
        }
        s->net->park_bytes -= q->plen;
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
        trace_pldma_net_park_done(pldma_resp_qpi(s, c), c->epsn);
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
            pldma_resp_answer(s, c, c->epsn,
                             AETH_RNR(pldma_resp_rnr_timer(s, c)));
        } else {
            if (s->rnr_resume) {
                pldma_net_cnt(s, PLDMA_NCNT_RESUME_TX);
            }
            pldma_resp_answer(s, c, c->epsn - 1, AETH_ACK);
        }
        pldma_resp_park_drop(s, c);
    }
    return false;
}

/* The fault of connection @c is resolved: let its requester go on */
void pldma_resp_resolved(PLDMACore *s, PLDMANetConn *c, bool ok)
{
    bool recv = c->fault_recv;

    trace_pldma_net_resolved(pldma_resp_qpi(s, c), c->epsn, ok);
    c->fault = false;
    c->stalled = false;
    c->fault_recv = false;
    if (s->net->qps[pldma_resp_qpi(s, c)].type == PLDMA_QP_TYPE_UC) {
        return;     /* its message was dropped: nothing waits, nothing said */
    }
    if (c->rd_hold) {
        c->rd_hold = false;
        if (ok) {
            /* the held READ response stream goes on (pldma_resp_bh) */
            pldma_schedule(s);
            return;
        }
    }
    if (c->park) {
        if (ok) {
            /* the held WRITE segments are applied (pldma_resp_bh) */
            pldma_schedule(s);
            return;
        }
        pldma_resp_park_drop(s, c);
    }
    if (!ok) {
        /* a receive WQE's buffer: the WQE completes in error (rq.c) */
        if (recv && !pldma_rq_failed(s, c)) {
            return;             /* its QP went to ERR: nothing to answer */
        }
        /* the OS could not make the page present: end the message */
        pldma_resp_nak(s, c, c->fault_psn, AETH_NAK_OPERR);
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
        pldma_resp_answer(s, c, c->fault_psn - 1, AETH_ACK);
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
void pldma_resp_fault_timer(void *opaque)
{
    PLDMACore *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), next = INT64_MAX;
    uint32_t i, j;

    if (!s->net->conns) {
        return;
    }
    for (i = 0; i < PLDMA_NUM_KEYS; i++) {
        PLDMAKey *k = &s->net->keys[i];

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
            PLDMANetConn *c = &s->net->conns[j];

            if (c->fault && !c->stalled && !c->fault_recv &&
                c->fault_key == i) {
                pldma_resp_resolved(s, c, false);
            }
        }
    }
    for (j = 0; j < PLDMA_NET_NCONNS(s); j++) {
        PLDMANetConn *c = &s->net->conns[j];

        if (!c->fault || c->stalled || !c->fault_recv) {
            continue;
        }
        if (c->fault_deadline > now) {
            next = MIN(next, c->fault_deadline);
            continue;
        }
        trace_pldma_net_fault_expired(j, 1);
        pldma_resp_resolved(s, c, false);
    }
    if (next != INT64_MAX) {
        timer_mod_ns(s->net->fault_timer, next);
    }
    pldma_update_irq(s);
    pldma_schedule(s);
}

bool pldma_resp_resumed(PLDMACore *s, uint16_t stag, SMMUStallResponse resp)
{
    uint32_t i;

    if (!s->nic) {
        return false;
    }
    for (i = 0; i < PLDMA_NET_NCONNS(s); i++) {
        PLDMANetConn *c = &s->net->conns[i];

        if (c->fault && c->stalled && c->stag == stag) {
            pldma_resp_resolved(s, c, resp == SMMU_STALL_RETRY);
            return true;
        }
    }
    return false;
}

