/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, receive queues
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The receive queue of an RC queue pair (CAP.CQ) and the responder of the
 * messages that consume its WQEs: SEND (with or without immediate) takes
 * the next receive WQE at its First/Only packet and scatters the payload
 * over the WQE's entries in the QP's PD; RDMA WRITE with immediate takes
 * one at its Last/Only packet.  The WQE completes, with a CQE to the QP's
 * receive CQ, at the message's Last/Only packet.  No WQE posted: an RNR
 * NAK, as on IB.  A fault on a receive buffer is a responder fault like a
 * key's (RNR NAK at the faulting PSN; a fault record with
 * PLDMA_FR_F_RECV answered by QP_CMD_RESOLVED/FAILED, or an SMMU stall),
 * and the segments held behind it (parking, resp.c) or resent continue
 * the same WQE at their offset.  The PSN rules are those of resp.c's
 * WRITE responder: a QP takes the expected PSN only.  See
 * docs/specs/pldma.rst, "Receive queues".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "net-internal.h"
#include "trace.h"

static PLDMANetConn *qp_conn(PLDMACore *s, uint32_t idx)
{
    return &s->conns[idx];
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
static bool recv_complete(PLDMACore *s, uint32_t idx, uint64_t wr_id,
                          uint8_t opcode, uint8_t status, uint32_t bytes,
                          const PLDMAPkt *p)
{
    PLDMAQP *qp = &s->qps[idx];
    PLDMACqe e = {
        .wr_id = wr_id, .byte_len = bytes, .opcode = opcode,
        .status = status, .qpn = pldma_qp_qpn(s, idx),
        .src_qp = qp->dest_qpn,
    };

    if (!qp->rq_size || qp->rq_head == qp->rq_tail) {
        /* no WQE to complete: never past the tail (a QP inconsistency) */
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: qp %u: a completion without "
                      "a posted receive WQE\n", idx);
        pldma_qp_to_err(s, idx);
        return false;
    }
    trace_pldma_recv_done(idx, wr_id, opcode, status, bytes);
    qp->rq_head = (qp->rq_head + 1) & (qp->rq_size - 1);
    if (p && p->has_imm) {
        e.imm = p->imm;
        e.flags |= PLDMA_CQE_F_IMM;
    }
    if (p && p->se) {
        e.flags |= PLDMA_CQE_F_SOLICITED;
    }
    if (qp->recv_cq != PLDMA_CQ_NONE) {
        pldma_cq_post(s, qp->recv_cq, &e);
    }
    return qp_receiving(qp);
}

/*
 * Read and check the receive WQE at the head of QP @idx's RQ into @c:
 * 0, -1 if it cannot be read, -2 if it is invalid (c->rwqe_id is valid).
 */
static int recv_wqe_read(PLDMACore *s, PLDMANetConn *c, uint32_t idx)
{
    PLDMAQP *qp = &s->qps[idx];
    uint8_t w[PLDMA_RWQE_SIZE];
    uint64_t fva;
    uint32_t i;

    if (pldma_rw(s, NULL, qp->rq_base + (uint64_t)qp->rq_head *
                 PLDMA_RWQE_SIZE, w, sizeof(w), false, &fva) !=
        PLDMA_ACC_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: qp %u: receive WQE %u at "
                      "0x%" PRIx64 " unreadable\n", idx, qp->rq_head, fva);
        return -1;
    }
    c->rwqe_id = ldq_le_p(w + PLDMA_RWQE_WR_ID);
    c->rwqe_nsge = ldl_le_p(w + PLDMA_RWQE_NUM_SGE);
    c->rwqe_total = 0;
    if (c->rwqe_nsge > PLDMA_RWQE_MAX_SGE ||
        ldl_le_p(w + PLDMA_RWQE_RSVD)) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: qp %u: receive WQE %u: bad "
                      "NUM_SGE %u or reserved bits\n", idx, qp->rq_head,
                      c->rwqe_nsge);
        return -2;
    }
    for (i = 0; i < c->rwqe_nsge; i++) {
        const uint8_t *g = w + PLDMA_RWQE_SGE(i);

        c->rwqe_addr[i] = ldq_le_p(g + PLDMA_SGE_ADDR);
        c->rwqe_len[i] = ldl_le_p(g + PLDMA_SGE_LEN);
        if (c->rwqe_addr[i] + c->rwqe_len[i] < c->rwqe_addr[i]) {
            qemu_log_mask(LOG_GUEST_ERROR, "pldma: qp %u: receive WQE %u: "
                          "entry %u wraps\n", idx, qp->rq_head, i);
            return -2;
        }
        c->rwqe_total += c->rwqe_len[i];
    }
    trace_pldma_recv_wqe(idx, qp->rq_head, c->rwqe_id, c->rwqe_nsge,
                         c->rwqe_total);
    return 0;
}

/*
 * Take the receive WQE at the head of the RQ for a message of @c whose
 * packet @p needs one; false when @p was answered (RNR NAK: none posted;
 * NAK: a bad WQE, which completes LOC_QP_OP_ERR) or dropped.
 */
static bool recv_take(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                      uint32_t idx)
{
    PLDMAQP *qp = &s->qps[idx];
    int r;

    if (!qp->rq_size || qp->rq_head == qp->rq_tail) {
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
        pldma_net_answer(s, c, p->psn,
                         AETH_RNR(pldma_net_conn_rnr_timer(s, c)));
        return false;
    }
    r = recv_wqe_read(s, c, idx);
    if (r == -1) {
        /* the RQ is not memory: the QP cannot go on */
        pldma_net_nak(s, c, p->psn, AETH_NAK_OPERR);
        pldma_qp_to_err(s, idx);
        return false;
    }
    if (r == -2) {
        trace_pldma_recv_refused(idx, p->psn, p->opcode, AETH_NAK_INVALID,
                                 "bad receive WQE");
        if (recv_complete(s, idx, c->rwqe_id,
                          pldma_net_op_flags(p->opcode) & PLDMA_NET_F_SEND ?
                          PLDMA_WC_RECV : PLDMA_WC_RECV_RDMA_WITH_IMM,
                          PLDMA_WC_ST_LOC_QP_OP_ERR, 0, NULL)) {
            pldma_net_nak(s, c, p->psn, AETH_NAK_INVALID);
        }
        return false;
    }
    c->rq_rnr = false;
    return true;
}

/*
 * Write @len bytes at @va of QP @idx's PD for connection @c.  On a fault
 * the connection waits for its resolution, as for a key's (resp.c
 * pldma_net_resp_rw()): a stall the SMMU resumes, or a fault record with
 * PLDMA_FR_F_RECV the driver answers with QP_CMD_RESOLVED.
 */
static PLDMAAccess recv_rw(PLDMACore *s, PLDMANetConn *c, uint32_t idx,
                           uint64_t va, const uint8_t *buf, uint32_t len,
                           uint64_t msg_off)
{
    uint64_t fva;
    PLDMAAccess a;

    a = pldma_net_resp_dma(s, c, s->qps[idx].pd, va, (void *)buf, len, true,
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
            .pasid_reg = s->qps[idx].pd, .va = fva, .desc = idx,
            .done = msg_off, .len = MIN(c->rwqe_total, UINT32_MAX),
        };

        if (!pldma_post_fault(s, &r)) {
            /* nobody can resolve it: the message ends (NAK) */
            c->fault = false;
            c->fault_recv = false;
            pldma_update_irq(s);
            return PLDMA_ACC_BUSERR;
        }
        pldma_net_fault_arm(s, c);
        pldma_update_irq(s);
    }
    return a;
}

/* Scatter @len bytes at message offset @off over the WQE's entries */
static PLDMAAccess recv_scatter(PLDMACore *s, PLDMANetConn *c, uint32_t idx,
                                uint64_t off, const uint8_t *buf,
                                uint32_t len)
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

static void recv_refuse(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                        uint32_t idx, uint8_t syndrome, const char *why)
{
    trace_pldma_recv_refused(idx, p->psn, p->opcode, syndrome, why);
    pldma_net_nak(s, c, p->psn, syndrome);
}

/*
 * An atomic request (CmpSwap, FetchAdd) for QP @idx.  The device does no
 * atomic operation (verbs' atomic_cap is NONE, and an MR's remote atomic
 * right grants nothing), so at the expected PSN it is an invalid request:
 * NAK Invalid Request, which ends the requester's work request with a
 * remote error instead of leaving it to time out.  Nothing moves.  A
 * duplicate was never done (its first copy had the same NAK) and is
 * dropped; one ahead of the expected PSN gets the sequence NAK as any.
 */
void pldma_recv_rx_atomic(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                          uint32_t idx)
{
    int32_t d = pldma_net_psn_diff(p->psn, c->epsn);

    if (d < 0) {
        pldma_net_cnt(s, PLDMA_NCNT_DUPS);
        return;
    }
    if (d > PLDMA_NET_PSN_AHEAD) {
        pldma_net_qp_drop(s, p, "PSN outside the window");
        return;
    }
    if (c->fault || pldma_net_parked(c)) {
        /* behind a responder fault: resent when the RNR NAK says so */
        pldma_net_cnt(s, PLDMA_NCNT_OOO);
        return;
    }
    if (d > 0) {
        pldma_net_seq_nak(s, c);
        return;
    }
    recv_refuse(s, c, p, idx, AETH_NAK_INVALID,
                "atomic operations are not supported");
}

/* A SEND packet (First, Middle, Last, Only, with Immediate) for QP @idx */
void pldma_recv_rx_send(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                        uint32_t idx)
{
    PLDMAQP *qp = &s->qps[idx];
    uint32_t mtu = PLDMA_MTU_BYTES(qp->path_mtu);
    uint8_t op = p->opcode;
    uint32_t fl = pldma_net_op_flags(op);
    bool first = fl & PLDMA_NET_F_FIRST, last = fl & PLDMA_NET_F_LAST;
    int32_t d = pldma_net_psn_diff(p->psn, c->epsn);
    uint64_t off;
    PLDMAAccess a;

    if (d < 0) {
        /* a duplicate: answer again, it may have been our answer lost */
        pldma_net_cnt(s, PLDMA_NCNT_DUPS);
        if (p->ackreq || last) {
            pldma_net_answer(s, c, c->epsn - 1, AETH_ACK);
        }
        return;
    }
    if (d > PLDMA_NET_PSN_AHEAD) {
        pldma_net_qp_drop(s, p, "PSN outside the window");
        return;
    }
    if (c->fault || pldma_net_parked(c)) {
        /*
         * Not ready yet: held behind the fault (parking, resp.c), or
         * behind those held until they are applied; else dropped, and
         * the expected PSN gets the same answer as the first time
         */
        if (pldma_net_park_add(s, c, p, idx)) {
            return;
        }
        pldma_net_cnt(s, PLDMA_NCNT_OOO);
        if (d == 0 && c->fault) {
            pldma_net_answer(s, c, c->epsn,
                             AETH_RNR(pldma_net_conn_rnr_timer(s, c)));
        }
        return;
    }
    if (d > 0) {
        pldma_net_seq_nak(s, c);
        return;
    }
    /* the expected PSN: the opcode sequence of the messages */
    if (pldma_net_in_write(c, p->psn)) {
        recv_refuse(s, c, p, idx, AETH_NAK_INVALID, "inside a WRITE");
        return;
    }
    if (first && c->rmsg_valid && p->psn != c->rmsg_psn) {
        recv_refuse(s, c, p, idx, AETH_NAK_INVALID, "previous SEND unended");
        return;
    }
    if (!first && !c->rmsg_valid) {
        recv_refuse(s, c, p, idx, AETH_NAK_INVALID, "no SEND in progress");
        return;
    }
    if ((!last && p->plen != mtu) || p->plen > mtu ||
        (!first && p->plen == 0)) {
        recv_refuse(s, c, p, idx, AETH_NAK_INVALID, "bad segment length");
        return;
    }
    if (first && !c->rmsg_valid) {
        if (!recv_take(s, c, p, idx)) {
            return;
        }
        /* (the WQE a faulted WRITE with immediate took is this SEND's) */
        c->imm_wqe = false;
        c->rmsg_valid = true;
        c->rmsg_psn = p->psn;
        c->rmsg_off = 0;
    }
    /* (a resent segment after an RNR NAK: its offset in the message) */
    off = (uint64_t)pldma_net_psn_diff(p->psn, c->rmsg_psn) * mtu;
    if (off != c->rmsg_off) {
        recv_refuse(s, c, p, idx, AETH_NAK_INVALID, "offset mismatch");
        return;
    }
    if (off + p->plen > c->rwqe_total || off + p->plen > UINT32_MAX) {
        /* longer than the WQE: it completes LOC_LEN_ERR, consumed */
        trace_pldma_recv_refused(idx, p->psn, op, AETH_NAK_INVALID,
                                 "message longer than the receive WQE");
        c->rmsg_valid = false;
        if (recv_complete(s, idx, c->rwqe_id, PLDMA_WC_RECV,
                          PLDMA_WC_ST_LOC_LEN_ERR, off, NULL)) {
            pldma_net_nak(s, c, p->psn, AETH_NAK_INVALID);
        }
        return;
    }
    a = recv_scatter(s, c, idx, off, p->payload, p->plen);
    if (a == PLDMA_ACC_BUSERR) {
        c->rmsg_valid = false;
        if (recv_complete(s, idx, c->rwqe_id, PLDMA_WC_RECV,
                          PLDMA_WC_ST_LOC_PROT_ERR, off, NULL)) {
            pldma_net_nak(s, c, p->psn, AETH_NAK_OPERR);
        }
        return;
    }
    if (a != PLDMA_ACC_OK) {
        /*
         * Held, with the segments of the message that follow it (not when
         * it is held already); else dropped, and the requester resends
         * from this segment.  What is not held is dropped silently, as
         * after the RNR NAK of recv_take()
         */
        c->fault_psn = p->psn;
        c->nak_seq = true;
        pldma_net_park_add(s, c, p, idx);
        pldma_net_answer(s, c, p->psn,
                         AETH_RNR(pldma_net_conn_rnr_timer(s, c)));
        return;
    }
    c->rmsg_off = off + p->plen;
    c->epsn = (p->psn + 1) & PLDMA_PSN_MASK;
    c->nak_seq = false;
    if (last) {
        c->rmsg_valid = false;
        c->msn = (c->msn + 1) & PLDMA_PSN_MASK;
        if (!recv_complete(s, idx, c->rwqe_id, PLDMA_WC_RECV,
                           PLDMA_WC_ST_SUCCESS, c->rmsg_off, p)) {
            return;     /* its CQ failed: the QP is in ERR, no ACK */
        }
    }
    /* a held one is acknowledged when all are applied */
    if ((p->ackreq || last) && !pldma_net_park_running(c)) {
        pldma_net_answer(s, c, p->psn, AETH_ACK);
    }
}

/*
 * The Last/Only packet of an RDMA WRITE with immediate, before its data is
 * written: it needs a receive WQE.  False when answered (RNR, NAK).
 */
bool pldma_recv_imm_take(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                         uint32_t idx)
{
    if (c->imm_wqe) {
        return true;    /* taken by the first try of this packet */
    }
    if (!recv_take(s, c, p, idx)) {
        return false;
    }
    c->imm_wqe = true;
    return true;
}

/* ... its data is written: the WQE completes RECV_RDMA_WITH_IMM */
bool pldma_recv_imm_done(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                         uint32_t idx)
{
    c->imm_wqe = false;
    return recv_complete(s, idx, c->rwqe_id, PLDMA_WC_RECV_RDMA_WITH_IMM,
                         PLDMA_WC_ST_SUCCESS, c->msg_len, p);
}

/*
 * The fault on a receive buffer of @c cannot be resolved (QP_CMD_FAILED,
 * a stall terminated): its WQE completes LOC_PROT_ERR.  False if the QP
 * is no longer receiving after it.
 */
bool pldma_recv_failed(PLDMACore *s, PLDMANetConn *c)
{
    uint32_t idx = c - s->conns;

    if (!c->rmsg_valid) {
        return true;
    }
    c->rmsg_valid = false;
    return recv_complete(s, idx, c->rwqe_id, PLDMA_WC_RECV,
                         PLDMA_WC_ST_LOC_PROT_ERR, c->rmsg_off, NULL);
}

/* QP_CMD_RESOLVED / QP_CMD_FAILED on QP @idx; a PLDMA_QP_ST_* */
uint32_t pldma_recv_resolve(PLDMACore *s, uint32_t idx, bool ok)
{
    PLDMANetConn *c;

    if (!s->conns) {
        return PLDMA_QP_ST_BAD_CMD;
    }
    c = qp_conn(s, idx);
    if (!c->fault || c->stalled || !c->fault_recv) {
        return PLDMA_QP_ST_BAD_STATE;   /* no RECV fault reported */
    }
    pldma_net_conn_resolved(s, c, ok);
    pldma_schedule(s);
    return PLDMA_QP_ST_OK;
}

/*
 * QP @idx entered ERR: its posted receive WQEs complete WR_FLUSH_ERR, in
 * order (at most the RQ's size).  A WQE that cannot be read completes
 * with WR_ID 0.
 */
void pldma_recv_flush(PLDMACore *s, uint32_t idx)
{
    PLDMAQP *qp = &s->qps[idx];
    PLDMANetConn c = { 0 };
    uint32_t n = 0;

    while (qp->rq_size && qp->rq_head != qp->rq_tail &&
           qp->state == PLDMA_QPS_ERR && n < qp->rq_size) {
        if (recv_wqe_read(s, &c, idx) == -1) {
            c.rwqe_id = 0;
        }
        recv_complete(s, idx, c.rwqe_id, PLDMA_WC_RECV,
                      PLDMA_WC_ST_WR_FLUSH_ERR, 0, NULL);
        n++;
    }
    if (n) {
        trace_pldma_recv_flush(idx, n);
    }
}

/* ---- the RQ doorbell, on the page of the QP's SQ channel ---- */

uint32_t pldma_recv_rq_reg(PLDMAChannel *ch, bool tail)
{
    PLDMAQP *qp = pldma_qp_of_sq(ch->s, ch->idx);

    if (!qp) {
        return 0;
    }
    return tail ? qp->rq_tail : qp->rq_head;
}

void pldma_recv_rq_doorbell(PLDMAChannel *ch, uint32_t val)
{
    PLDMACore *s = ch->s;
    PLDMAQP *qp = pldma_qp_of_sq(s, ch->idx);
    uint32_t idx;
    PLDMANetConn *c;

    if (!qp || !qp->rq_size) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: ch%u: RQ doorbell: no QP "
                      "with a receive queue has this send queue\n", ch->idx);
        return;
    }
    idx = qp - s->qps;
    if (val >= qp->rq_size) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: qp %u: RQ tail %u out of "
                      "range (%u entries)\n", idx, val, qp->rq_size);
        return;
    }
    qp->rq_tail = val;
    trace_pldma_recv_rq_db(idx, val, qp->rq_head);
    if (qp->state == PLDMA_QPS_ERR) {
        pldma_recv_flush(s, idx);
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
            pldma_net_answer(s, c, c->epsn - 1, AETH_ACK);
        }
    }
}
