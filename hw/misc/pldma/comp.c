/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, RDMA completer
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The requester's completer: ACKs, NAKs and READ responses for the
 * message in flight on a channel.  An ACK moves the acknowledged bytes,
 * a sequence NAK goes back to the PSN the responder expects, an RNR NAK
 * waits for the RNR timer (or the responder's "resolved, resend now"),
 * any other NAK completes the message in error.  READ responses land at
 * the local destination in order; a fault there takes the channel's
 * local fault path, and the rest is asked for again.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "net-internal.h"
#include "trace.h"

/* Dropped as not about the message in flight */
static void rx_drop(PLDMACore *s, const PLDMAPkt *p)
{
    pldma_net_qp_drop(s, p, "outside the send queue's window");
}

/* The message is over (any status): the next one starts after its PSNs */
void pldma_comp_ch_end(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r;
    PLDMAQP *qp;

    /* (the engine's reset at realize comes before the link's realize) */
    if (!s->nic || !pldma_op_remote(ch->op)) {
        return;
    }
    r = pldma_ch_req(ch);
    if (!r->qp) {
        return;
    }
    timer_del(pldma_ch_timer(ch));
    qp = &s->net->qps[r->qp - 1];
    /*
     * The QP's next message starts where the responder expects it: after
     * this one.  A message that ended otherwise (timeout, RNR retries,
     * cancelled, reset) leaves the responder's PSN unknown: the QP goes
     * to ERR, as on IB (after a fatal NAK it is there already,
     * pldma_qp_nak_err()).
     */
    if (qp->gen == r->qp_gen && qp->state == PLDMA_QPS_RTS) {
        trace_pldma_qp_msg_end(r->qp - 1, r->psn, r->end_psn, r->ok);
        qp->sq_psn = r->end_psn;
        if (!r->ok) {
            pldma_qp_to_err(s, r->qp - 1);
        }
    }
    trace_pldma_net_msg_end(ch->idx, r->psn, r->nsegs, ch->done);
    memset(r, 0, sizeof(*r));
}

void pldma_comp_finish(PLDMAChannel *ch, uint32_t status)
{
    if (status == PLDMA_ST_SUCCESS) {
        /* (a Go-back-N may have rewound what was sent, not what arrived) */
        ch->done = ch->len;
        pldma_ch_req(ch)->ok = true;
    } else if (pldma_op_sends(ch->op)) {
        /* what is known to have arrived, not what was sent */
        ch->done = pldma_ch_req(ch)->acked;
    }
    pldma_ch_end_desc(ch, status, 0, 0);
    pldma_ch_req(ch)->wait = false;
    timer_del(pldma_ch_timer(ch));
    pldma_schedule(ch->s);
}

/* Go on sending from @off (Go-back-N, or a resume) */
void pldma_comp_rewind(PLDMAChannel *ch, uint64_t off)
{
    ch->done = MIN(off, ch->len);
    pldma_ch_req(ch)->wait = false;
    pldma_ch_req(ch)->rnr = false;
    if (ch->state == PLDMA_STATE_RUNNING) {
        pldma_schedule(ch->s);
    }
}

/* The requester channel a response is for, if it is in a remote op */
static PLDMAChannel *pldma_net_req_ch(PLDMACore *s, const PLDMAPkt *p)
{
    PLDMAChannel *ch;

    /* (the QP is in RTS and the frame from its peer: dispatch) */
    if (s->net->qps[p->qp - 1].sq >= s->num_channels) {
        return NULL;
    }
    ch = &s->ch[s->net->qps[p->qp - 1].sq];
    if (ch->state == PLDMA_STATE_DISABLED || ch->phase != PLDMA_PHASE_XFER ||
        !pldma_op_remote(ch->op) || pldma_ch_req(ch)->qp != p->qp ||
        pldma_ch_req(ch)->qp_gen != s->net->qps[p->qp - 1].gen) {
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
    if (upto > pldma_ch_req(ch)->acked) {
        ch->cnt_bytes += upto - pldma_ch_req(ch)->acked;
        pldma_ch_req(ch)->acked = upto;
    }
    if (ch->done < pldma_ch_req(ch)->acked) {
        ch->done = pldma_ch_req(ch)->acked;
    }
}

/*
 * An ACK of everything before byte @upto: progress (the retry counts start
 * again); true when it completes the message
 */
static bool pldma_net_ack_upto(PLDMAChannel *ch, uint64_t upto)
{
    PLDMANetReq *r = pldma_ch_req(ch);

    pldma_net_acked(ch, upto);
    r->retries = 0;
    r->rnr_retries = 0;
    if (r->acked == ch->len) {
        pldma_comp_finish(ch, PLDMA_ST_SUCCESS);
        return true;
    }
    return false;
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

/*
 * The segments (PSNs) of the message in flight that have been sent at
 * least once: a WRITE's or SEND's up to the highest byte ever sent, a
 * READ's up to the end of the last window requested (its request names
 * those PSNs for the responses).  A message of no bytes has its one
 * segment once its packet went out.
 */
static uint32_t pldma_net_segs_sent(const PLDMAChannel *ch)
{
    const PLDMANetReq *r = pldma_ch_req(ch);
    uint64_t hw = ch->op == PLDMA_OP_RDMA_READ ? r->rd_end : r->sent_hw;

    if (ch->len == 0) {
        return r->sent_hw ? 1 : 0;
    }
    return MIN(DIV_ROUND_UP(hw, r->mtu), r->nsegs);
}

/*
 * The atomic in flight on @ch was executed and found @orig (an Atomic
 * Write: its READ response): req_atomic() brings it home
 */
static void comp_atomic_done(PLDMAChannel *ch, uint64_t orig)
{
    PLDMANetReq *r = pldma_ch_req(ch);

    timer_del(pldma_ch_timer(ch));
    r->at_have = true;
    r->at_orig = orig;
    r->wait = false;
    r->rnr = false;
    r->retries = 0;
    r->rnr_retries = 0;
    if (ch->state == PLDMA_STATE_RUNNING) {
        pldma_schedule(ch->s);
    }
}

/* An ACK of segment @seg of the message in flight */
static void comp_ack(PLDMAChannel *ch, const PLDMAPkt *p, int32_t seg)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);
    uint64_t upto = (uint64_t)(seg + 1) * r->mtu;

    pldma_net_cnt(s, PLDMA_NCNT_ACK_RX);
    /*
     * "Resolved, resend now": any ACK while an RNR NAK holds the message
     * (the responder ACKs the PSN before the one that faulted, with its
     * true MSN: a standard requester, rxe among them, takes it for a
     * duplicate ACK and waits out its RNR timer)
     */
    if (r->rnr) {
        pldma_net_cnt(s, PLDMA_NCNT_RESUME_RX);
        trace_pldma_net_resume(ch->idx, p->psn);
        timer_del(pldma_ch_timer(ch));
        /*
         * An ACK acknowledges up to its PSN: past the fault when the
         * responder held the segments behind it (parking)
         */
        if (pldma_op_sends(ch->op) && seg >= 0 &&
            pldma_net_ack_upto(ch, upto)) {
            return;
        }
        pldma_comp_rewind(ch, ch->done);
        return;
    }
    if (!pldma_op_sends(ch->op) || seg < 0 || upto <= r->acked) {
        return;
    }
    if (pldma_net_ack_upto(ch, upto)) {
        return;
    }
    pldma_req_arm(ch, r->rto_us);
    if (r->wait && ch->done < ch->len) {
        r->wait = false;
        pldma_schedule(s);
    }
}

/* An RNR NAK of segment @seg: wait, then resend from it */
static void comp_rnr(PLDMAChannel *ch, const PLDMAPkt *p, int32_t seg)
{
    PLDMANetReq *r = pldma_ch_req(ch);
    uint64_t off = (uint64_t)MAX(seg, 0) * r->mtu;

    pldma_net_cnt(ch->s, PLDMA_NCNT_NAK_RX_RNR);
    if (r->rnr && ch->op == PLDMA_OP_RDMA_READ) {
        /*
         * The READs in flight behind the one NAKed, each NAKed in turn:
         * one wait, and one retry counted, for them all (they are asked
         * again with it when the wait ends)
         */
        return;
    }
    pldma_net_cnt(ch->s, PLDMA_NCNT_RNR_WAITS);
    if (pldma_op_sends(ch->op) && off > r->acked) {
        r->rnr_retries = 0;         /* progress: it acknowledges some */
    }
    if (++r->rnr_retries > r->rnr_retry) {
        pldma_comp_finish(ch, PLDMA_ST_REMOTE_RNR);
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
    trace_pldma_net_rnr(ch->idx, p->psn, off, p->syndrome & 0x1f);
    r->rnr_us = pldma_hdr_rnr_timer_10us[p->syndrome & 0x1f] * 10;
    pldma_req_arm(ch, r->rnr_us);
}

/*
 * A NAK: a sequence error sends again from the segment the responder
 * expects; any other ends the message and is fatal to an RC requester
 * (IBA 9.9.2: remote access, invalid request, remote operational error;
 * Linux rxe's completer moves its QP to ERR): ERR, and what follows is
 * flushed
 */
static void comp_nak(PLDMAChannel *ch, const PLDMAPkt *p, int32_t seg)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);

    if (p->syndrome == AETH_NAK_SEQ) {
        pldma_net_cnt(s, PLDMA_NCNT_NAK_RX_SEQ);
        if (pldma_op_sends(ch->op) && seg >= 0 && !r->rnr) {
            pldma_net_acked(ch, (uint64_t)seg * r->mtu);
            trace_pldma_net_go_back(ch->idx, p->psn, r->acked);
            pldma_comp_rewind(ch, r->acked);
        }
        return;
    }
    pldma_net_cnt(s, p->syndrome == AETH_NAK_ACCESS
                     ? PLDMA_NCNT_NAK_RX_ACCESS
                     : p->syndrome == AETH_NAK_INVALID
                     ? PLDMA_NCNT_NAK_RX_INVALID
                     : PLDMA_NCNT_NAK_RX_OPERR);
    trace_pldma_net_nak(ch->idx, p->psn, p->syndrome);
    pldma_comp_finish(ch, nak_status(p->syndrome));
    pldma_qp_nak_err(s, r->qp - 1);
}

/* An ACK or NAK for a QP of ours */
static void pldma_comp_rx_ack(PLDMACore *s, const PLDMAPkt *p)
{
    PLDMAChannel *ch = pldma_net_req_ch(s, p);
    PLDMANetReq *r;
    int32_t seg;

    if (!ch) {
        rx_drop(s, p);
        return;
    }
    r = pldma_ch_req(ch);
    /* the segment the answer is about */
    seg = pldma_net_psn_diff(p->psn, r->psn);
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
    /*
     * An answer about a PSN that was never sent (IBA 9.9.2: an ACK or NAK
     * beyond the last PSN sent is not valid): acknowledging it would
     * report bytes as arrived that never left
     */
    if (seg >= (int32_t)pldma_net_segs_sent(ch)) {
        pldma_net_cnt(s, PLDMA_NCNT_ACK_UNSENT);
        trace_pldma_net_ack_unsent(ch->idx, p->psn, p->syndrome,
                                   pldma_net_segs_sent(ch));
        rx_drop(s, p);
        return;
    }
    switch (AETH_KIND(p->syndrome)) {
    case 0:
        comp_ack(ch, p, seg);
        break;
    case 1:
        comp_rnr(ch, p, seg);
        break;
    case 3:
        comp_nak(ch, p, seg);
        break;
    default:
        pldma_net_cnt(s, PLDMA_NCNT_RX_DROPPED);
        break;
    }
}

/*
 * Is READ response @p the one channel @ch expects next (the response at
 * ch->done, asked for, well formed)?  A late duplicate, a gap (asked
 * again from the missing one, once per gap) or garbage is not.
 */
static bool comp_read_resp_expected(PLDMACore *s, PLDMAChannel *ch,
                                    const PLDMAPkt *p)
{
    PLDMANetReq *r = pldma_ch_req(ch);
    int32_t seg = pldma_net_psn_diff(p->psn, r->psn);
    uint64_t off = (uint64_t)MAX(seg, 0) * r->mtu;
    bool last;

    if ((p->has_aeth && AETH_KIND(p->syndrome) != 0) ||
        seg < 0 || seg >= (int32_t)r->nsegs) {
        rx_drop(s, p);
        return false;
    }
    if (off < ch->done) {
        pldma_net_cnt(s, PLDMA_NCNT_DUPS);
        return false;
    }
    if (ch->len ? off >= r->rd_end : !r->sent_hw) {
        if (r->gap) {
            /* behind a gap: its request is asked again after the gap */
            pldma_net_cnt(s, PLDMA_NCNT_OOO);
        } else {
            /* not asked for yet: outside the outstanding window */
            rx_drop(s, p);
        }
        return false;
    }
    if (off > ch->done || r->rnr || ch->state != PLDMA_STATE_RUNNING) {
        pldma_net_cnt(s, PLDMA_NCNT_OOO);
        /* a response went missing: ask again from it, once per gap */
        if (!r->rnr && !r->gap && ch->state == PLDMA_STATE_RUNNING) {
            trace_pldma_net_go_back(ch->idx, p->psn, ch->done);
            pldma_req_read_gap(ch);
        }
        return false;
    }
    last = ch->done + p->plen == ch->len;
    /* (the one response to a zero-length READ has no payload) */
    if ((!last && p->plen != r->mtu) || ch->done + p->plen > ch->len ||
        (p->plen == 0 && ch->len)) {
        rx_drop(s, p);
        return false;
    }
    return true;
}

/*
 * Is @p the answer the one request in flight on @ch waits for (an
 * atomic's, an Atomic Write's, a FLUSH's): its PSN, an ACK syndrome, once
 * it was sent, not answered yet?  Else dropped, or counted a duplicate.
 */
static bool comp_answer_expected(PLDMACore *s, PLDMAChannel *ch,
                                 const PLDMAPkt *p)
{
    PLDMANetReq *r = pldma_ch_req(ch);

    if (p->psn != r->psn || AETH_KIND(p->syndrome) != 0 || !r->sent_hw) {
        if (p->psn == r->psn && !r->sent_hw) {
            pldma_net_cnt(s, PLDMA_NCNT_ACK_UNSENT);
        }
        rx_drop(s, p);
        return false;
    }
    if (r->at_have) {
        pldma_net_cnt(s, PLDMA_NCNT_DUPS);
        return false;
    }
    pldma_net_cnt(s, PLDMA_NCNT_ACK_RX);
    return true;
}

/*
 * The answer to the Atomic Write or FLUSH in flight on @ch: an RDMA READ
 * Response Only of no bytes (IBA 1.5); anything else is dropped
 */
static void comp_rx_aw_resp(PLDMACore *s, PLDMAChannel *ch,
                            const PLDMAPkt *p)
{
    if (p->opcode != OP_READ_RESP_ONLY || p->plen) {
        rx_drop(s, p);
        return;
    }
    if (comp_answer_expected(s, ch, p)) {
        comp_atomic_done(ch, 0);
    }
}

/* A READ response: its payload goes to the local destination */
static void pldma_comp_rx_read_resp(PLDMACore *s, const PLDMAPkt *p)
{
    PLDMAChannel *ch = pldma_net_req_ch(s, p);
    PLDMANetReq *r;
    bool short_list;
    uint64_t fva;
    PLDMAAccess a;

    if (ch && (pldma_op_flags(ch->op) & PLDMA_OPF_NO_RESULT)) {
        comp_rx_aw_resp(s, ch, p);
        return;
    }
    if (!ch || ch->op != PLDMA_OP_RDMA_READ) {
        rx_drop(s, p);
        return;
    }
    r = pldma_ch_req(ch);
    if (!comp_read_resp_expected(s, ch, p)) {
        return;
    }
    s->busy = true;
    a = pldma_req_local_rw(ch, ch->done, (uint8_t *)p->payload, p->plen,
                           true, &fva, &short_list);
    s->busy = false;
    if (a != PLDMA_ACC_OK || short_list) {
        timer_del(pldma_ch_timer(ch));
        if (a == PLDMA_ACC_OK) {
            pldma_comp_finish(ch, PLDMA_ST_BAD_LENGTH);
        } else {
            /* local fault: resolve it, then ask again from here */
            r->wait = false;
            pldma_access_failed(ch, a, fva, true);
        }
        pldma_update_irq(s);
        pldma_schedule(s);
        return;
    }
    ch->done += p->plen;
    ch->cnt_bytes += p->plen;
    r->gap = false;
    r->retries = 0;
    r->rnr_retries = 0;
    if (ch->done == ch->len) {
        pldma_comp_finish(ch, PLDMA_ST_SUCCESS);
    } else {
        pldma_req_read_more(ch);        /* the next requests */
        pldma_req_arm(ch, r->rto_us);
    }
}

/*
 * An Atomic Acknowledge: the value the responder found, for the atomic in
 * flight (its PSN, asked for, not answered yet); the requester writes it
 * to the local destination (req.c's req_atomic())
 */
static void pldma_comp_rx_atomic_ack(PLDMACore *s, const PLDMAPkt *p)
{
    PLDMAChannel *ch = pldma_net_req_ch(s, p);

    if (!ch || !pldma_op_atomic(ch->op) ||
        (pldma_op_flags(ch->op) & PLDMA_OPF_NO_RESULT)) {
        rx_drop(s, p);          /* (an Atomic Write's is a READ response) */
        return;
    }
    if (comp_answer_expected(s, ch, p)) {
        trace_pldma_net_atomic_resp(ch->idx, p->psn, p->orig);
        comp_atomic_done(ch, p->orig);
    }
}

/* An ACK, a READ or atomic response for a QP of ours (net.c's classifier) */
void pldma_comp_rx(PLDMACore *s, const PLDMAPkt *p)
{
    uint32_t fl = pldma_hdr_op_flags(p->opcode);

    if (fl & PLDMA_NET_F_ACK) {
        pldma_comp_rx_ack(s, p);
    } else if (fl & PLDMA_NET_F_ATOMIC_ACK) {
        pldma_comp_rx_atomic_ack(s, p);
    } else {
        pldma_comp_rx_read_resp(s, p);
    }
}
