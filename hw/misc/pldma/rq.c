/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, receive queues
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The receive queue of an RC queue pair (CAP.CQ): its doorbell, its WQEs
 * read at the head, taken by the responder (resp.c) for the message that
 * consumes one (a SEND at its First/Only packet, an RDMA WRITE with
 * immediate at its Last/Only), scattered into in the QP's PD, and
 * completed with a CQE to the QP's receive CQ; flushed when the QP enters
 * ERR.  No WQE posted: an RNR NAK, as on IB.  A fault on a receive buffer
 * is a responder fault like a key's (resp-fault.c: RNR NAK at the
 * faulting PSN; a fault record with PLDMA_FR_F_RECV answered by
 * QP_CMD_RESOLVED/FAILED, or an SMMU stall).  See docs/specs/pldma.rst,
 * "Receive queues".  A QP with a shared receive queue (srq.c) takes its
 * WQE from there instead, and holds it until it completes.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "net-internal.h"
#include "trace.h"

static PLDMANetConn *qp_conn(PLDMACore *s, uint32_t idx)
{
    return &s->net->conns[idx];
}

static bool qp_receiving(const PLDMAQP *qp)
{
    return qp->state == PLDMA_QPS_RTR || qp->state == PLDMA_QPS_RTS;
}

/*
 * Complete the receive WQE at the head of QP @idx's RQ (consumed) with a
 * CQE to its receive CQ.  False if the QP is no longer receiving after it
 * (the CQ failed and took it to ERR, its connection is cleared).
 */
bool pldma_rq_complete(PLDMACore *s, uint32_t idx, uint64_t wr_id,
                       uint8_t opcode, uint8_t status, uint32_t bytes,
                       const PLDMAPkt *p)
{
    PLDMAQP *qp = &s->net->qps[idx];
    PLDMACqe e = {
        .wr_id = wr_id, .byte_len = bytes, .opcode = opcode,
        .status = status, .qpn = pldma_qp_qpn(s, idx),
        .src_qp = qp->dest_qpn,
    };

    if (qp->srq) {
        PLDMANetConn *c = qp_conn(s, idx);

        if (!c->rwqe_held) {
            PLDMA_GUEST_ERR(pldma_err_rq_no_wqe,
                            "qp %u: a completion without a receive WQE "
                            "taken from its SRQ", idx);
            pldma_qp_to_err(s, idx);
            return false;
        }
        c->rwqe_held = false;
    } else if (!qp->rq_size || qp->rq_head == qp->rq_tail) {
        /* no WQE to complete: never past the tail (a QP inconsistency) */
        PLDMA_GUEST_ERR(pldma_err_rq_no_wqe,
                        "qp %u: a completion without a posted receive WQE",
                        idx);
        pldma_qp_to_err(s, idx);
        return false;
    } else {
        qp->rq_head = (qp->rq_head + 1) & (qp->rq_size - 1);
    }
    trace_pldma_recv_done(idx, wr_id, opcode, status, bytes);
    if (p && p->has_imm) {
        e.imm = p->imm;
        e.flags |= PLDMA_CQE_F_IMM;
    }
    if (p && p->se) {
        e.flags |= PLDMA_CQE_F_SOLICITED;
    }
    if (p && (pldma_hdr_op_flags(p->opcode) & PLDMA_NET_F_DETH)) {
        e.src_qp = p->src_qpn;          /* UD: the sender's, GRH first */
        e.flags |= PLDMA_CQE_F_GRH;
    }
    if (qp->recv_cq != PLDMA_CQ_NONE) {
        pldma_cq_post(s, qp->recv_cq, &e);
    }
    return qp_receiving(qp);
}

/*
 * Check receive WQE @w (number @slot of its ring) for QP @idx into @c: 0,
 * or -2 if it is invalid (c->rwqe_id is valid)
 */
static int recv_wqe_parse(PLDMANetConn *c, const uint8_t *w, uint32_t idx,
                          uint32_t slot)
{
    uint32_t i;

    c->rwqe_id = ldq_le_p(w + PLDMA_RWQE_WR_ID);
    c->rwqe_nsge = ldl_le_p(w + PLDMA_RWQE_NUM_SGE);
    c->rwqe_total = 0;
    if (c->rwqe_nsge > PLDMA_RWQE_MAX_SGE ||
        ldl_le_p(w + PLDMA_RWQE_RSVD)) {
        PLDMA_GUEST_ERR(pldma_err_rq_wqe_bad,
                        "qp %u: receive WQE %u: bad NUM_SGE %u or reserved "
                        "bits", idx, slot, c->rwqe_nsge);
        return -2;
    }
    for (i = 0; i < c->rwqe_nsge; i++) {
        const uint8_t *g = w + PLDMA_RWQE_SGE(i);

        c->rwqe_addr[i] = ldq_le_p(g + PLDMA_SGE_ADDR);
        c->rwqe_len[i] = ldl_le_p(g + PLDMA_SGE_LEN);
        if (c->rwqe_addr[i] + c->rwqe_len[i] < c->rwqe_addr[i]) {
            PLDMA_GUEST_ERR(pldma_err_rq_wqe_wraps,
                            "qp %u: receive WQE %u: entry %u wraps", idx,
                            slot, i);
            return -2;
        }
        c->rwqe_total += c->rwqe_len[i];
    }
    trace_pldma_recv_wqe(idx, slot, c->rwqe_id, c->rwqe_nsge,
                         c->rwqe_total);
    return 0;
}

/*
 * Read and check the receive WQE at the head of QP @idx's RQ into @c:
 * 0, -1 if it cannot be read, -2 if it is invalid (c->rwqe_id is valid).
 */
static int recv_wqe_read(PLDMACore *s, PLDMANetConn *c, uint32_t idx)
{
    PLDMAQP *qp = &s->net->qps[idx];
    uint8_t w[PLDMA_RWQE_SIZE];
    uint64_t fva;

    if (pldma_rw(s, NULL, qp->rq_base + (uint64_t)qp->rq_head *
                 PLDMA_RWQE_SIZE, w, sizeof(w), false, &fva) !=
        PLDMA_ACC_OK) {
        PLDMA_GUEST_ERR(pldma_err_rq_wqe_read,
                        "qp %u: receive WQE %u at 0x%" PRIx64 " unreadable",
                        idx, qp->rq_head, fva);
        return -1;
    }
    return recv_wqe_parse(c, w, idx, qp->rq_head);
}

/*
 * Take the WQE at the head of QP @idx's SRQ into @c, unless the QP holds
 * one already: 0, 1 if the SRQ is empty, -1 if it failed (ERROR), -2 if
 * the WQE is invalid (c->rwqe_id is valid, the WQE is held)
 */
static int recv_srq_take(PLDMACore *s, PLDMANetConn *c, uint32_t idx)
{
    uint32_t srq = s->net->qps[idx].srq - 1;
    uint8_t w[PLDMA_RWQE_SIZE];

    if (c->rwqe_held) {
        return 0;
    }
    switch (pldma_srq_take(s, srq, idx, w)) {
    case PLDMA_SRQ_EMPTY:
        return 1;
    case PLDMA_SRQ_FAILED:
        return -1;
    default:
        c->rwqe_held = true;
        return recv_wqe_parse(c, w, idx, (s->net->srqs[srq].head - 1) &
                              (s->net->srqs[srq].size - 1));
    }
}

/*
 * Take the receive WQE at the head of the RQ (or of the SRQ) for a
 * message of @c whose packet @p needs one; false when @p was answered
 * (RNR NAK: none posted; NAK: a bad WQE, which completes LOC_QP_OP_ERR)
 * or dropped.
 */
bool pldma_rq_take(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                   uint32_t idx)
{
    PLDMAQP *qp = &s->net->qps[idx];
    int r = 1;

    if (qp->srq) {
        r = recv_srq_take(s, c, idx);
    } else if (qp->rq_size && qp->rq_head != qp->rq_tail) {
        r = recv_wqe_read(s, c, idx);
    }
    if (r == 1) {
        pldma_net_cnt(s, PLDMA_NCNT_RQ_EMPTY);
        trace_pldma_recv_rnr(idx, p->psn);
        c->rq_rnr = true;
        /*
         * The rest of the message, already on its way, is dropped without
         * a sequence NAK until the requester resends the NAKed PSN (IBA
         * 9.7.5.2.8): to Linux rxe a sequence NAK means "resend now",
         * ending its RNR wait and spending a retry
         */
        c->nak_seq = true;
        pldma_resp_answer(s, c, p->psn,
                         AETH_RNR(pldma_resp_rnr_timer(s, c)));
        return false;
    }
    if (r == -1) {
        /* the RQ is not memory, or the SRQ failed: the QP cannot go on */
        pldma_resp_nak(s, c, p->psn, AETH_NAK_OPERR);
        pldma_qp_to_err(s, idx);
        return false;
    }
    if (r == -2) {
        trace_pldma_resp_refused(idx, p->psn, p->opcode, AETH_NAK_INVALID,
                                 "bad receive WQE");
        if (pldma_rq_complete(s, idx, c->rwqe_id,
                          pldma_hdr_op_flags(p->opcode) & PLDMA_NET_F_SEND ?
                          PLDMA_WC_RECV : PLDMA_WC_RECV_RDMA_WITH_IMM,
                          PLDMA_WC_ST_LOC_QP_OP_ERR, 0, NULL)) {
            pldma_resp_nak(s, c, p->psn, AETH_NAK_INVALID);
        }
        return false;
    }
    c->rq_rnr = false;
    return true;
}

/*
 * Write @len bytes at @va of QP @idx's PD for connection @c.  On a fault
 * the connection waits for its resolution, as for a key's (resp.c
 * pldma_resp_rw()): a stall the SMMU resumes, or a fault record with
 * PLDMA_FR_F_RECV the driver answers with QP_CMD_RESOLVED.
 */
static PLDMAAccess recv_rw(PLDMACore *s, PLDMANetConn *c, uint32_t idx,
                           uint64_t va, const uint8_t *buf, uint32_t len,
                           uint64_t msg_off)
{
    uint64_t fva;
    PLDMAAccess a;

    a = pldma_resp_dma(s, c, s->net->qps[idx].pd, va, (void *)buf, len, true,
                           &fva);
    if (a == PLDMA_ACC_OK || a == PLDMA_ACC_BUSERR) {
        return a;
    }
    c->fault_recv = true;
    c->fault_key = 0;
    msg_off += fva - va;
    trace_pldma_recv_fault(idx, fva, msg_off, c->stalled);
    if (!c->stalled) {
        PLDMAFaultRec r = {
            .channel = PLDMA_FR_CH_REMOTE,
            .flags = PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV | PLDMA_FR_F_WRITE,
            .pasid_reg = s->net->qps[idx].pd, .va = fva, .desc = idx,
            .done = msg_off, .len = MIN(c->rwqe_total, UINT32_MAX),
        };

        if (!pldma_post_fault(s, &r)) {
            /* nobody can resolve it: the message ends (NAK) */
            c->fault = false;
            c->fault_recv = false;
            pldma_update_irq(s);
            return PLDMA_ACC_BUSERR;
        }
        pldma_resp_fault_arm(s, c);
        pldma_update_irq(s);
    }
    return a;
}

/* Scatter @len bytes at message offset @off over the WQE's entries */
PLDMAAccess pldma_rq_scatter(PLDMACore *s, PLDMANetConn *c, uint32_t idx,
                             uint64_t off, const uint8_t *buf, uint32_t len)
{
    uint64_t base = 0;
    uint32_t i;

    for (i = 0; i < c->rwqe_nsge && len; i++) {
        uint64_t end = base + c->rwqe_len[i];

        if (off < end) {
            uint32_t n = MIN(len, end - off);
            PLDMAAccess a = recv_rw(s, c, idx, c->rwqe_addr[i] + (off - base),
                                    buf, n, off);

            if (a != PLDMA_ACC_OK) {
                return a;
            }
            buf += n;
            off += n;
            len -= n;
        }
        base = end;
    }
    assert(len == 0);   /* (the caller checked the WQE's length) */
    return PLDMA_ACC_OK;
}


/*
 * The fault on a receive buffer of @c cannot be resolved (QP_CMD_FAILED,
 * a stall terminated): its WQE completes LOC_PROT_ERR.  False if the QP
 * is no longer receiving after it.
 */
bool pldma_rq_failed(PLDMACore *s, PLDMANetConn *c)
{
    uint32_t idx = c - s->net->conns;

    if (!c->rmsg_valid) {
        return true;
    }
    c->rmsg_valid = false;
    return pldma_rq_complete(s, idx, c->rwqe_id, PLDMA_WC_RECV,
                         PLDMA_WC_ST_LOC_PROT_ERR, c->rmsg_off, NULL);
}

/* QP_CMD_RESOLVED / QP_CMD_FAILED on QP @idx; a PLDMA_QP_ST_* */
uint32_t pldma_rq_resolve(PLDMACore *s, uint32_t idx, bool ok)
{
    PLDMANetConn *c;

    if (!s->net->conns) {
        return PLDMA_QP_ST_BAD_CMD;
    }
    c = qp_conn(s, idx);
    if (!c->fault || c->stalled || !c->fault_recv) {
        return PLDMA_QP_ST_BAD_STATE;   /* no RECV fault reported */
    }
    pldma_resp_resolved(s, c, ok);
    pldma_schedule(s);
    return PLDMA_QP_ST_OK;
}

/*
 * QP @idx enters ERR: the WQE it took from its SRQ, if it holds one,
 * completes WR_FLUSH_ERR (the SRQ's other WQEs stay posted, IBA 10.2.9.5)
 */
void pldma_rq_flush_held(PLDMACore *s, uint32_t idx)
{
    PLDMANetConn *c;

    if (!s->net->conns || !s->net->qps[idx].srq) {
        return;
    }
    c = qp_conn(s, idx);
    if (c->rwqe_held) {
        trace_pldma_recv_flush(idx, 1);
        pldma_rq_complete(s, idx, c->rwqe_id, PLDMA_WC_RECV,
                          PLDMA_WC_ST_WR_FLUSH_ERR, 0, NULL);
    }
}

/*
 * QP @idx entered ERR: its posted receive WQEs complete WR_FLUSH_ERR, in
 * order (at most the RQ's size).  A WQE that cannot be read completes
 * with WR_ID 0.
 */
void pldma_rq_flush(PLDMACore *s, uint32_t idx)
{
    PLDMAQP *qp = &s->net->qps[idx];
    PLDMANetConn c = { 0 };
    uint32_t n = 0;

    while (qp->rq_size && qp->rq_head != qp->rq_tail &&
           qp->state == PLDMA_QPS_ERR && n < qp->rq_size) {
        if (recv_wqe_read(s, &c, idx) == -1) {
            c.rwqe_id = 0;
        }
        pldma_rq_complete(s, idx, c.rwqe_id, PLDMA_WC_RECV,
                      PLDMA_WC_ST_WR_FLUSH_ERR, 0, NULL);
        n++;
    }
    if (n) {
        trace_pldma_recv_flush(idx, n);
    }
}

/* ---- the RQ doorbell, on the page of the QP's SQ channel ---- */

uint32_t pldma_rq_reg(PLDMAChannel *ch, bool tail)
{
    PLDMAQP *qp = pldma_qp_of_sq(ch->s, ch->idx);

    if (!qp) {
        return 0;
    }
    return tail ? qp->rq_tail : qp->rq_head;
}

void pldma_rq_doorbell(PLDMAChannel *ch, uint32_t val)
{
    PLDMACore *s = ch->s;
    PLDMAQP *qp = pldma_qp_of_sq(s, ch->idx);
    uint32_t idx;
    PLDMANetConn *c;

    if (!qp || !qp->rq_size) {
        PLDMA_GUEST_ERR(pldma_err_rq_db_no_qp,
                        "ch%u: RQ doorbell: no QP with a receive queue has "
                        "this send queue", ch->idx);
        return;
    }
    idx = qp - s->net->qps;
    if (val >= qp->rq_size) {
        PLDMA_GUEST_ERR(pldma_err_rq_tail,
                        "qp %u: RQ tail %u out of range (%u entries)", idx,
                        val, qp->rq_size);
        return;
    }
    qp->rq_tail = val;
    trace_pldma_recv_rq_db(idx, val, qp->rq_head);
    if (qp->state == PLDMA_QPS_ERR) {
        pldma_rq_flush(s, idx);
        return;
    }
    /*
     * A message waits for a WQE (RNR NAK sent): with rnr-resume, tell its
     * requester to resend now, as when a responder fault is resolved
     */
    c = qp_conn(s, idx);
    if (qp_receiving(qp) && c->rq_rnr && qp->rq_head != qp->rq_tail &&
        !c->fault) {
        c->rq_rnr = false;
        if (s->rnr_resume) {
            pldma_net_cnt(s, PLDMA_NCNT_RESUME_TX);
            pldma_resp_answer(s, c, c->epsn - 1, AETH_ACK);
        }
    }
}
