/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, RDMA requester
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The requester of a remote operation (RDMA WRITE, WRITE with immediate,
 * READ, SEND, atomics), as IB's RC requester: the remote part of a
 * descriptor on a QP's send queue, the segments of a message within the
 * window of unacknowledged ones (pldma_net_window()), READ requests a window
 * at a time, an atomic's one request, and the retransmit and RNR timer.
 * Faults on the source of a WRITE or SEND, and on where a READ's or an
 * atomic's answer lands, take the channel's local fault path.  The
 * answers are the completer's (comp.c).
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qemu/timer.h"
#include "net-internal.h"
#include "trace.h"

/* The transport of the QP of @ch's remote operation */
static uint32_t req_type(PLDMAChannel *ch)
{
    PLDMANetReq *r = pldma_ch_req(ch);

    return r->qp ? ch->s->net->qps[r->qp - 1].type : PLDMA_QP_TYPE_RC;
}

/* Is it unreliable (UC or UD): nothing is acknowledged or resent */
static bool req_uc(PLDMAChannel *ch)
{
    return req_type(ch) != PLDMA_QP_TYPE_RC;
}

void pldma_req_arm(PLDMAChannel *ch, uint64_t us)
{
    timer_mod(pldma_ch_timer(ch),
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + us * SCALE_US);
}

/* IB local ACK timeout: 4.096 us << code; 0 (infinite) takes the device's */
static uint32_t qp_rto_us(PLDMACore *s, uint32_t code)
{
    return code ? MIN((4096ULL << code) / 1000, 10ULL * 1000 * 1000)
                : s->rto_us;
}

/* A descriptor on the send queue of @qp: its path, PSN and timers */
static uint32_t pldma_net_decode_qp(PLDMAChannel *ch, PLDMAQP *qp)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);
    uint32_t t = qp->timers;

    if (qp->state == PLDMA_QPS_ERR) {
        return PLDMA_ST_FLUSHED;    /* flushed: never sent (no PSN used) */
    }
    if (qp->state != PLDMA_QPS_RTS) {
        PLDMA_GUEST_ERR(pldma_err_desc_qp_state,
                        "ch%u: desc %u: on the send queue of a QP in state %u",
                        ch->idx, ch->head, qp->state);
        return PLDMA_ST_BAD_QP;
    }
    if ((qp->type == PLDMA_QP_TYPE_UC &&
         (ch->op == PLDMA_OP_RDMA_READ || pldma_op_atomic(ch->op) ||
          (pldma_op_flags(ch->op) & PLDMA_OPF_NO_RESULT))) ||
        (qp->type == PLDMA_QP_TYPE_UD &&
         !(pldma_op_flags(ch->op) & PLDMA_OPF_WIRE_SEND))) {
        PLDMA_GUEST_ERR(pldma_err_desc_uc_op,
                        "ch%u: desc %u: opcode 0x%x on a %s QP", ch->idx,
                        ch->head, ch->op,
                        qp->type == PLDMA_QP_TYPE_UC ? "UC" : "UD");
        return PLDMA_ST_BAD_OPCODE;
    }
    r->qp = qp - s->net->qps + 1;
    r->qp_gen = qp->gen;
    r->psn = qp->sq_psn;
    r->mtu = PLDMA_MTU_BYTES(qp->path_mtu);
    r->rto_us = qp_rto_us(s, PLDMA_QPT_TIMEOUT(t));
    r->retry_count = PLDMA_QPT_RETRY_CNT(t);
    r->rnr_retry = PLDMA_QPT_RNR_RETRY(t) == 7 ? UINT32_MAX
                                                : PLDMA_QPT_RNR_RETRY(t);
    return 0;
}

/*
 * A SEND on a UD QP: its address vector (PLDMA_DESC_UD_*), and one packet
 * of at most the link's MTU (the QP's path MTU is the link's)
 */
static uint32_t req_ud_decode(PLDMAChannel *ch, const uint8_t *d)
{
    PLDMANetReq *r = pldma_ch_req(ch);
    const PLDMAQP *qp = &ch->s->net->qps[r->qp - 1];

    memcpy(r->ud_dmac, d + PLDMA_DESC_UD_DMAC, sizeof(r->ud_dmac));
    r->ud_dip = ldl_le_p(d + PLDMA_DESC_UD_DEST_IP);
    r->ud_qkey = ldl_le_p(d + PLDMA_DESC_UD_QKEY);
    r->ud_dqpn = ldl_le_p(d + PLDMA_DESC_UD_DEST_QPN);
    if (r->ud_qkey & PLDMA_UD_QKEY_PRIVILEGED) {
        r->ud_qkey = qp->qkey;          /* IBA 10.2.5: the QP's own */
    }
    if (lduw_le_p(d + PLDMA_DESC_UD_DMAC + 6) ||
        (r->ud_dqpn & ~PLDMA_PSN_MASK) || (r->ud_dmac[0] & 1) ||
        r->ud_dip == 0 || r->ud_dip == UINT32_MAX) {
        PLDMA_GUEST_ERR(pldma_err_desc_ud_av,
                        "ch%u: desc %u: bad UD address vector", ch->idx,
                        ch->head);
        return PLDMA_ST_BAD_DESC;
    }
    if (ch->len > r->mtu) {
        PLDMA_GUEST_ERR(pldma_err_desc_length, "ch%u: desc %u: bad length %u",
                        ch->idx, ch->head, ch->len);
        return PLDMA_ST_BAD_LENGTH;
    }
    trace_pldma_net_ud_send(ch->idx, r->ud_dqpn, r->ud_dip, ch->len);
    return 0;
}

/*
 * An atomic's operands (SRC is one, not an address; SWAP only for
 * CmpSwap), a FLUSH's FETH bits (and no SGE list); false if they are bad
 */
static bool req_decode_operands(PLDMAChannel *ch, const uint8_t *d)
{
    PLDMANetReq *r = pldma_ch_req(ch);

    if (pldma_op_atomic(ch->op)) {
        r->at_cmp_add = ch->src;
        r->at_swap = ldq_le_p(d + PLDMA_DESC_ATOMIC_SWAP);
        if (ch->op != PLDMA_OP_ATOMIC_CMP_SWAP && r->at_swap) {
            return false;
        }
    }
    if (pldma_op_flags(ch->op) & PLDMA_OPF_FLUSH) {
        r->flush = ldl_le_p(d + PLDMA_DESC_FLUSH);
        if (r->flush & ~PLDMA_FLUSH_VALID || ch->nsge ||
            !(r->flush & (PLDMA_FLUSH_GLOBAL | PLDMA_FLUSH_PERSISTENT))) {
            return false;
        }
    }
    return true;
}

uint32_t pldma_req_decode(PLDMAChannel *ch, const uint8_t *d)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);
    PLDMAQP *qp = pldma_qp_of_sq(s, ch->idx);
    uint32_t st;

    memset(r, 0, sizeof(*r));
    if (!qp) {
        PLDMA_GUEST_ERR(pldma_err_desc_not_sq,
                        "ch%u: desc %u: opcode 0x%x on a channel that is no "
                        "QP's send queue", ch->idx, ch->head, ch->op);
        return PLDMA_ST_BAD_OPCODE;
    }
    st = pldma_net_decode_qp(ch, qp);
    if (st) {
        memset(r, 0, sizeof(*r));
        return st;
    }
    if (qp->type == PLDMA_QP_TYPE_UD) {
        st = req_ud_decode(ch, d);
        if (st) {
            memset(r, 0, sizeof(*r));
            return st;
        }
    }
    /* (a SEND has no remote address: REMOTE_VA and RKEY are not used) */
    if (pldma_op_flags(ch->op) & PLDMA_OPF_RKEY) {
        r->rva = ldq_le_p(d + PLDMA_DESC_REMOTE_VA);
    }
    if (ch->nsge) {
        /* the local buffer field is the list (PLDMA_DESC_NUM_SGE) */
        uint64_t list = pldma_op_sends(ch->op) ? ch->src : ch->dst;

        if (ch->nsge > PLDMA_DESC_MAX_SGE ||
            !QEMU_IS_ALIGNED(list, PLDMA_SGE_SIZE) ||
            list + ch->nsge * PLDMA_SGE_SIZE < list) {
            PLDMA_GUEST_ERR(pldma_err_desc_sge_list,
                            "ch%u: desc %u: bad SGE list (%u at 0x%" PRIx64
                            ")", ch->idx, ch->head, ch->nsge, list);
            memset(r, 0, sizeof(*r));
            return PLDMA_ST_BAD_DESC;
        }
    }
    /*
     * A message of no bytes is one packet without payload (IBA 9.4: a
     * zero-length SEND consumes a receive WQE; a zero-length RDMA WRITE
     * needs no valid R_Key or VA, C9-88), or for a READ one request of
     * DMA length 0 that one READ Response Only without payload answers.
     * (A FLUSH moves no byte: its range may be any length.)
     */
    if (((ch->len > s->max_transfer || ch->len > PLDMA_NET_MAX_MSG) &&
         !(pldma_op_flags(ch->op) & PLDMA_OPF_FLUSH)) ||
        r->rva + ch->len < r->rva ||
        (pldma_op_atomic(ch->op) && ch->len != PLDMA_ATOMIC_LEN) ||
        (!ch->nsge && pldma_op_sends(ch->op) && ch->src + ch->len < ch->src) ||
        (!ch->nsge && !pldma_op_sends(ch->op) &&
         ch->dst + ch->len < ch->dst)) {
        memset(r, 0, sizeof(*r));   /* nothing sent: the QP's PSN stays */
        return PLDMA_ST_BAD_LENGTH;
    }
    if (!req_decode_operands(ch, d)) {
        PLDMA_GUEST_ERR(pldma_err_desc_reserved,
                        "ch%u: desc %u: reserved bits set", ch->idx,
                        ch->head);
        memset(r, 0, sizeof(*r));
        return PLDMA_ST_BAD_DESC;
    }
    r->rkey = ldl_le_p(d + PLDMA_DESC_RKEY);
    if (pldma_op_has_imm(ch->op)) {
        r->imm = ldl_le_p(d + PLDMA_DESC_IMM);
    }
    r->se = (ch->dflags & PLDMA_DF_SOLICITED) && pldma_op_qp_only(ch->op);
    /* (an Atomic Write's or a FLUSH's one request, whatever its length) */
    r->nsegs = pldma_op_flags(ch->op) & PLDMA_OPF_NO_RESULT ? 1 :
               pldma_net_nsegs(r->mtu, ch->len);
    r->end_psn = (r->psn + r->nsegs) & PLDMA_PSN_MASK;
    return 0;
}

/*
 * A READ is asked for in requests of a window of responses each
 * (pldma_net_window()), as a WRITE keeps at most that many segments
 * unacknowledged, at message offsets that are multiples of the window: a
 * message of any size never floods the link (and the peer's queue) with
 * responses, and a request asked again is always a subset of one sent
 * before, the only repeated READ a responder answers (IBA 9.7.5.1.2; rxe
 * drops the rest).  Up to the QP's max_rd_atomic requests are
 * outstanding (QPT_MAX_RD_ATOMIC), so that the next request is at the
 * responder before the responses of the one before it end.
 */
static uint64_t req_read_win(PLDMAChannel *ch)
{
    PLDMANetReq *r = pldma_ch_req(ch);

    return (uint64_t)pldma_net_window(ch->s, r->mtu) * r->mtu;
}

/* The end of the READ request that holds byte @off of the message */
static uint64_t req_read_end(PLDMAChannel *ch, uint64_t off)
{
    uint64_t w = req_read_win(ch);

    return MIN(ch->len, (off / w + 1) * w);
}

/* READ requests sent whose responses have not all come */
static uint32_t req_read_outstanding(PLDMAChannel *ch)
{
    PLDMANetReq *r = pldma_ch_req(ch);
    uint64_t w = req_read_win(ch);

    if (r->rd_end <= ch->done) {
        return 0;
    }
    return DIV_ROUND_UP(r->rd_end - ch->done / w * w, w);
}

/* Ask for the responses from byte @off to the end of its request */
static void req_read_ask(PLDMAChannel *ch, uint64_t off)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);
    uint64_t end = req_read_end(ch, off);
    PLDMAPkt p = {
        .opcode = OP_READ_REQ, .ackreq = true,
        .qpn = s->net->qps[r->qp - 1].dest_qpn,
        .psn = (r->psn + off / r->mtu) & PLDMA_PSN_MASK,
        .rkey = r->rkey, .va = r->rva + off, .dmalen = end - off,
        .qp = r->qp,
    };

    if (off < r->sent_hw) {
        pldma_net_cnt(s, PLDMA_NCNT_RETX_SEGS);
    }
    /* (a zero-length READ's one request counts as its one byte) */
    r->sent_hw = MAX(r->sent_hw, off + 1);
    r->rd_end = MAX(r->rd_end, end);
    trace_pldma_net_read_req(ch->idx, p.psn, off, end - off,
                             req_read_outstanding(ch));
    pldma_hdr_tx(s, &p);
}

/*
 * New requests, up to the QP's max_rd_atomic outstanding (while the link
 * takes frames: the next response asks again)
 */
void pldma_req_read_more(PLDMAChannel *ch)
{
    PLDMANetReq *r = pldma_ch_req(ch);
    uint32_t depth = MAX(1, PLDMA_QPT_MAX_RD_ATOMIC(
                                ch->s->net->qps[r->qp - 1].timers));

    while (r->rd_end < ch->len && req_read_outstanding(ch) < depth &&
           !ch->s->net->tx_blocked) {
        req_read_ask(ch, r->rd_end);
    }
}

/*
 * A response went missing while the stream goes on: ask again for the
 * rest of the request it belongs to, once per gap.  The responses that
 * still arrive behind it are not a new gap: a standard responder serves
 * every duplicate whole, so asking again for each of them would multiply
 * the stream (a lost request is the timer's).  A responder answers in
 * order, so the responses of the requests after this one come before
 * those asked again, and are dropped as out of order: those requests are
 * forgotten here, and asked again (as subsets of the ones sent) as the
 * responses asked again come in.
 */
void pldma_req_read_gap(PLDMAChannel *ch)
{
    PLDMANetReq *r = pldma_ch_req(ch);

    r->gap = true;
    r->rd_end = req_read_end(ch, ch->done);
    req_read_ask(ch, ch->done);
    pldma_req_arm(ch, r->rto_us);
}

/*
 * Start or go on with a READ from the segment at ch->done: a request
 * asked again (a loss, an RNR, a local fault) asks every outstanding one
 * from there again, each a subset of the one sent before, then the next
 * ones, up to max_rd_atomic
 */
void pldma_req_send_read(PLDMAChannel *ch)
{
    PLDMANetReq *r = pldma_ch_req(ch);
    uint64_t off;

    ch->done = ch->done / r->mtu * r->mtu;
    if (ch->len == 0 || ch->done >= r->rd_end) {
        req_read_ask(ch, ch->done);
    } else {
        r->gap = true;
        for (off = ch->done; off < r->rd_end; off = req_read_end(ch, off)) {
            req_read_ask(ch, off);
        }
    }
    pldma_req_read_more(ch);
    r->wait = true;
    pldma_req_arm(ch, r->rto_us);
}

/* The link takes no frame now: wait for pldma_net_sent() (or the timer) */
static void pldma_net_tx_wait(PLDMAChannel *ch)
{
    pldma_ch_req(ch)->txq = true;
    pldma_ch_req(ch)->wait = true;
    if (!timer_pending(pldma_ch_timer(ch))) {
        pldma_req_arm(ch, pldma_ch_req(ch)->rto_us);
    }
}

/* The RC opcode of a segment of a WRITE, WRITE with immediate or SEND */
static uint8_t req_rc_opcode(uint8_t op, bool first, bool last)
{
    bool imm = pldma_op_has_imm(op);

    if (pldma_op_flags(op) & PLDMA_OPF_WIRE_SEND) {
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
 * The opcode of a segment of a WRITE, WRITE with immediate or SEND (RC's,
 * or UC's when @uc)
 */
static uint8_t req_opcode(uint8_t op, bool first, bool last, bool uc)
{
    return (uc ? OP_UC : 0) | req_rc_opcode(op, first, last);
}

/*
 * Move @n bytes at offset @off of the message between @buf and the
 * descriptor's local buffer: SRC (sends), DST (READ, @is_write), or the
 * SGEs listed there (PLDMA_DESC_NUM_SGE), read from the first each time:
 * at most PLDMA_DESC_MAX_SGE entries, through the channel's PASID, so a
 * fault on the list is a fault of this access (*@fva).  *@short_list: the
 * list ends before @off + @n (or an entry wraps); nothing more is moved.
 */
PLDMAAccess pldma_req_local_rw(PLDMAChannel *ch, uint64_t off, uint8_t *buf,
                               uint32_t n, bool is_write, uint64_t *fva,
                               bool *short_list)
{
    PLDMACore *s = ch->s;
    uint64_t base = is_write ? ch->dst : ch->src, pos = 0;
    unsigned int i;

    *short_list = false;
    if (!ch->nsge) {
        return pldma_rw(s, ch, base + off, buf, n, is_write, fva);
    }
    for (i = 0; i < ch->nsge && n; i++) {
        uint8_t e[PLDMA_SGE_SIZE];
        uint64_t va, len, skip, k;
        PLDMAAccess a;

        a = pldma_rw(s, ch, base + i * PLDMA_SGE_SIZE, e, sizeof(e), false,
                     fva);
        if (a != PLDMA_ACC_OK) {
            return a;
        }
        va = ldq_le_p(e + PLDMA_SGE_ADDR);
        len = ldl_le_p(e + PLDMA_SGE_LEN);
        if (off >= pos + len) {
            pos += len;
            continue;
        }
        skip = off - pos;
        k = MIN(len - skip, n);
        if (va + skip + k < va) {
            break;
        }
        a = pldma_rw(s, ch, va + skip, buf, k, is_write, fva);
        if (a != PLDMA_ACC_OK) {
            return a;
        }
        buf += k;
        off += k;
        n -= k;
        pos += len;
    }
    *short_list = n != 0;
    return PLDMA_ACC_OK;
}

/* What sending one segment came to */
typedef enum {
    REQ_SENT,               /* sent: the next one may go */
    REQ_STOP,               /* the window, the budget, the link or a fault */
    REQ_ENDED,              /* the message ended (pldma_comp_finish()) */
} PLDMAReqSent;

/*
 * UC: a segment of @n bytes went out.  No ACK is asked and none comes;
 * nothing is resent, so what is sent counts as acknowledged for the
 * window, and the message completes with its @last packet on the link.
 */
static PLDMAReqSent req_uc_sent(PLDMAChannel *ch, uint32_t n, bool last,
                                uint64_t *budget)
{
    ch->done += n;
    pldma_ch_req(ch)->acked = ch->done;
    *budget -= MIN(*budget, n);
    if (last) {
        pldma_comp_finish(ch, PLDMA_ST_SUCCESS);
        return REQ_ENDED;
    }
    return REQ_SENT;
}

/* A UD QP's datagram @p: its opcode, DETH and address (else nothing) */
static void req_ud_address(PLDMAChannel *ch, PLDMAPkt *p)
{
    PLDMANetReq *r = pldma_ch_req(ch);

    if (req_type(ch) != PLDMA_QP_TYPE_UD) {
        return;
    }
    p->opcode = pldma_op_has_imm(ch->op) ? OP_UD_SEND_ONLY_IMM
                                         : OP_UD_SEND_ONLY;
    p->qpn = r->ud_dqpn;
    p->qkey = r->ud_qkey;
    p->src_qpn = pldma_qp_qpn(ch->s, r->qp - 1);
    p->ud_dmac = r->ud_dmac;
    p->ud_dip = r->ud_dip;
}

/* Send the WRITE or SEND segment at ch->done, within @budget bytes */
static PLDMAReqSent req_send_segment(PLDMAChannel *ch, uint8_t *buf,
                                     uint64_t *budget)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);
    uint32_t seg = ch->done / r->mtu;
    uint32_t n = MIN(r->mtu, ch->len - ch->done);
    bool first = seg == 0, last = ch->done + n == ch->len;
    bool short_list = false;
    uint64_t fva;
    PLDMAAccess a = PLDMA_ACC_OK;
    PLDMAPkt p = {
        .qpn = s->net->qps[r->qp - 1].dest_qpn,
        .psn = (r->psn + seg) & PLDMA_PSN_MASK,
        .payload = buf, .plen = n, .qp = r->qp,
    };

    if (ch->done >= r->acked &&
        ch->done - r->acked >=
        (uint64_t)pldma_net_window(s, r->mtu) * r->mtu) {
        r->wait = true;
        return REQ_STOP;
    }
    if (*budget == 0) {
        return REQ_STOP;
    }
    if (s->net->tx_blocked) {
        pldma_net_tx_wait(ch);
        return REQ_STOP;
    }
    if (n) {
        a = pldma_req_local_rw(ch, ch->done, buf, n, false, &fva,
                               &short_list);
    }
    if (a != PLDMA_ACC_OK) {
        /* a local fault: the channel's own path, then go on here */
        pldma_access_failed(ch, a, fva, false);
        return REQ_STOP;
    }
    if (short_list) {
        /* nothing of this segment went out: the message ends here */
        pldma_comp_finish(ch, PLDMA_ST_BAD_LENGTH);
        return REQ_ENDED;
    }
    /* the payload's DMA read; the frame goes when it is done */
    pldma_timing_bytes(ch, n);
    p.ready = ch->tm_ready;
    p.opcode = req_opcode(ch->op, first, last, req_uc(ch));
    if (last && pldma_op_has_imm(ch->op)) {
        p.imm = r->imm;
    }
    p.se = last && r->se;
    if (first) {
        p.va = r->rva;
        p.rkey = r->rkey;
        p.dmalen = ch->len;
    }
    if (req_uc(ch)) {
        req_ud_address(ch, &p);
        pldma_hdr_tx(s, &p);
        return req_uc_sent(ch, n, last, budget);
    }
    p.ackreq = last || (seg + 1) % PLDMA_NET_ACKREQ_EVERY == 0;
    if (ch->done < r->sent_hw) {
        pldma_net_cnt(s, PLDMA_NCNT_RETX_SEGS);
        s->net->net_cnt[PLDMA_NCNT_RETX_BYTES] += n;
    }
    pldma_hdr_tx(s, &p);
    if (!timer_pending(pldma_ch_timer(ch))) {
        pldma_req_arm(ch, r->rto_us);
    }
    ch->done += n;
    /* (the one packet of a message of no bytes counts as one byte) */
    r->sent_hw = MAX(r->sent_hw, ch->done + (ch->len == 0));
    *budget -= MIN(*budget, n);
    return REQ_SENT;
}

/* A READ: done once every response came, else its (next) request */
static bool req_read(PLDMAChannel *ch)
{
    /* (a zero-length READ completes on its response: it asks first) */
    if (ch->len && ch->done >= ch->len) {
        pldma_comp_finish(ch, PLDMA_ST_SUCCESS);
        return true;
    }
    if (ch->s->net->tx_blocked) {
        pldma_net_tx_wait(ch);
        return false;
    }
    pldma_req_send_read(ch);
    return false;
}

/*
 * An atomic: its one request; once its response came (comp.c), the value
 * the responder found goes to the local destination, and it is done.  A
 * fault there takes the channel's local fault path, and then this again:
 * the value is kept, never asked for twice.
 */
static bool req_atomic(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);
    uint8_t buf[PLDMA_ATOMIC_LEN];
    bool cas = ch->op == PLDMA_OP_ATOMIC_CMP_SWAP, short_list;
    bool aw = pldma_op_flags(ch->op) & PLDMA_OPF_NO_RESULT;
    uint64_t fva;
    PLDMAAccess a;
    PLDMAPkt p = {
        .opcode = cas ? OP_CMP_SWAP : OP_FETCH_ADD, .ackreq = true,
        .qpn = s->net->qps[r->qp - 1].dest_qpn,
        .psn = r->psn, .va = r->rva, .rkey = r->rkey, .qp = r->qp,
        .swap_add = cas ? r->at_swap : r->at_cmp_add,
        .compare = cas ? r->at_cmp_add : 0,
    };

    if (r->at_have && aw) {
        /* an Atomic Write or FLUSH: answered, nothing to bring home */
        pldma_comp_finish(ch, PLDMA_ST_SUCCESS);
        return true;
    }
    if (r->at_have) {
        stq_le_p(buf, r->at_orig);
        a = pldma_req_local_rw(ch, 0, buf, sizeof(buf), true, &fva,
                               &short_list);
        if (a != PLDMA_ACC_OK) {
            pldma_access_failed(ch, a, fva, true);
            return false;
        }
        if (!short_list) {
            ch->cnt_bytes += sizeof(buf);
        }
        pldma_comp_finish(ch, short_list ? PLDMA_ST_BAD_LENGTH
                                         : PLDMA_ST_SUCCESS);
        return true;
    }
    if (s->net->tx_blocked) {
        pldma_net_tx_wait(ch);
        return false;
    }
    if (r->sent_hw) {
        pldma_net_cnt(s, PLDMA_NCNT_RETX_SEGS);
    }
    if (ch->op == PLDMA_OP_FLUSH) {
        /* a FETH and a RETH of the range */
        p.opcode = OP_FLUSH;
        p.feth = r->flush;
        p.dmalen = ch->len;
    } else if (aw) {
        /* RETH and the 8 bytes, as the descriptor holds them */
        p.opcode = OP_ATOMIC_WRITE;
        p.dmalen = PLDMA_ATOMIC_LEN;
        stq_le_p(buf, r->at_cmp_add);
        p.payload = buf;
        p.plen = sizeof(buf);
    }
    /* (a FLUSH of no bytes was sent too) */
    r->sent_hw = MAX(ch->len, 1);
    pldma_hdr_tx(s, &p);
    r->wait = true;
    pldma_req_arm(ch, r->rto_us);
    return false;
}

/*
 * PHASE_XFER of a remote op: send what the window allows.  Returns false
 * when the channel has to wait (window full, everything sent, a local
 * fault), true when the descriptor is complete.
 */
bool pldma_req_xfer(PLDMAChannel *ch, uint64_t *budget)
{
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);
    uint8_t buf[PLDMA_NET_MAX_MTU];

    if (s->net->qps[r->qp - 1].gen != r->qp_gen ||
        s->net->qps[r->qp - 1].state != PLDMA_QPS_RTS) {
        /* the QP left RTS (modified to ERR or RESET): flushed */
        pldma_comp_finish(ch, PLDMA_ST_REMOTE_ERROR);
        return true;
    }
    if (r->wait || r->rnr) {
        /*
         * Waiting for the network.  A timer that expired while the channel
         * was parked on a local fault (FAULTED, STALLED) was ignored: arm
         * it again, or nothing would ever wake the channel.
         */
        if (!timer_pending(pldma_ch_timer(ch))) {
            pldma_req_arm(ch, r->rnr ? r->rnr_us : r->rto_us);
        }
        return false;
    }
    pldma_timing_rebase(ch);
    if (ch->op == PLDMA_OP_RDMA_READ) {
        return req_read(ch);
    }
    if (pldma_op_atomic(ch->op) ||
        (pldma_op_flags(ch->op) & PLDMA_OPF_NO_RESULT)) {
        return req_atomic(ch);
    }
    /* (a zero-length message: one packet, sent again after a rewind) */
    while (ch->done < ch->len || ch->len == 0) {
        switch (req_send_segment(ch, buf, budget)) {
        case REQ_STOP:
            return false;
        case REQ_ENDED:
            return true;
        case REQ_SENT:
            break;
        }
        if (ch->len == 0) {
            break;
        }
    }
    r->wait = true;         /* everything sent: the last ACK completes it */
    return false;
}

void pldma_req_timer(void *opaque)
{
    PLDMAChannel *ch = opaque;
    PLDMACore *s = ch->s;
    PLDMANetReq *r = pldma_ch_req(ch);

    if (ch->state != PLDMA_STATE_RUNNING || ch->phase != PLDMA_PHASE_XFER ||
        !pldma_op_remote(ch->op)) {
        return;
    }
    if (r->rnr || req_uc(ch)) {
        /* (UC: only the link's flow control waits; go on where it was) */
        trace_pldma_net_rnr_expired(ch->idx, ch->done);
        pldma_comp_rewind(ch, ch->done);
        return;
    }
    pldma_net_cnt(s, PLDMA_NCNT_TIMEOUTS);
    if (++r->retries > r->retry_count) {
        trace_pldma_net_gave_up(ch->idx, r->retries);
        pldma_comp_finish(ch, PLDMA_ST_REMOTE_TIMEOUT);
        return;
    }
    trace_pldma_net_timeout(ch->idx, r->retries, r->acked);
    pldma_comp_rewind(ch, pldma_op_sends(ch->op) ? r->acked : ch->done);
}
