/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, completion queues
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Completion queues as verbs model them (CAP.CQ): rings of 32-byte CQEs
 * in memory the driver allocates for DMA without PASID, each CQE written
 * before its owner byte, the owner bit 1 on the first pass over the ring
 * and flipped at every wrap.  The CQ_* registers of
 * include/hw/misc/pldma-regs.h create and destroy them; the doorbell on
 * a channel page (CH_CQ_DB) reports the consumer index and arms the CQ,
 * from a channel whose PASID is the CQ's PD only.  A CQ without room for
 * a CQE, or whose CQE write fails, goes to ERROR and takes its QPs to
 * ERR.  The send CQEs of a QP's send queue are made here; the receive
 * side is rq.c.  See docs/specs/pldma.rst, "Completion queues".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qapi/error.h"
#include "migration/vmstate.h"
#include "net-internal.h"
#include "trace.h"

#define CQ_IDX_MASK     0xffffffU   /* PI and CI count mod 2^24 */

/* IRQ_CQ, IRQ_CQ_ERROR, IRQ_QP_ERROR are set while their bitmap is not 0 */
void pldma_cq_irq_sync(PLDMACore *s)
{
    uint32_t set = (s->net->cq_events ? PLDMA_IRQ_CQ : 0) |
                   (s->net->cq_errors ? PLDMA_IRQ_CQ_ERROR : 0) |
                   (s->net->qp_errors ? PLDMA_IRQ_QP_ERROR : 0);

    s->irq_status &= ~(PLDMA_IRQ_CQ | PLDMA_IRQ_CQ_ERROR |
                       PLDMA_IRQ_QP_ERROR);
    s->irq_status |= set;
}

static void cq_set_state(PLDMACore *s, uint32_t idx, uint32_t st)
{
    if (s->net->cqs[idx].state != st) {
        trace_pldma_cq_state(idx, s->net->cqs[idx].state, st);
        s->net->cqs[idx].state = st;
    }
}

/* Is CQ @cq the send or receive CQ of a QP out of RESET */
bool pldma_cq_in_use(PLDMACore *s, uint32_t cq)
{
    uint32_t i;

    for (i = 0; i < s->num_qps && s->nic; i++) {
        const PLDMAQP *qp = &s->net->qps[i];

        if (qp->state != PLDMA_QPS_RESET &&
            (qp->send_cq == cq || qp->recv_cq == cq)) {
            return true;
        }
    }
    return false;
}

/* CQ @idx failed (no room, a CQE write failed): ERROR, its QPs to ERR */
static void cq_error(PLDMACore *s, uint32_t idx, const char *why)
{
    uint32_t i;

    PLDMA_GUEST_ERR(pldma_err_cq, "cq %u: %s", idx, why);
    trace_pldma_cq_error(idx, why);
    cq_set_state(s, idx, PLDMA_CQS_ERROR);
    s->net->cqs[idx].arm = 0;
    s->net->cq_errors |= 1ULL << idx;
    pldma_cq_irq_sync(s);
    for (i = 0; i < s->num_qps; i++) {
        const PLDMAQP *qp = &s->net->qps[i];

        if (qp->state != PLDMA_QPS_RESET &&
            (qp->send_cq == idx || qp->recv_cq == idx)) {
            pldma_qp_to_err(s, i);
        }
    }
}

static void cq_fire(PLDMACore *s, uint32_t idx)
{
    trace_pldma_cq_event(idx, s->net->cqs[idx].pi);
    s->net->cqs[idx].arm = 0;
    s->net->cq_events |= 1ULL << idx;
    pldma_cq_irq_sync(s);
}

/*
 * Write CQE @e to CQ @cq; false if the CQ is not ACTIVE or failed now
 * (then it is in ERROR and its QPs are in ERR).
 */
bool pldma_cq_post(PLDMACore *s, uint32_t cq, const PLDMACqe *e)
{
    PLDMACQ *c;
    uint8_t b[PLDMA_CQE_SIZE] = { 0 };
    uint64_t va, fva;
    unsigned k;

    if (cq >= s->num_cqs || s->net->cqs[cq].state != PLDMA_CQS_ACTIVE) {
        return false;
    }
    c = &s->net->cqs[cq];
    if (((c->pi - c->ci) & CQ_IDX_MASK) >= c->size) {
        cq_error(s, cq, "overflow: no room for a CQE");
        return false;
    }
    k = ctz32(c->size);
    stq_le_p(b + PLDMA_CQE_WR_ID, e->wr_id);
    stl_le_p(b + PLDMA_CQE_BYTE_LEN, e->byte_len);
    stl_le_p(b + PLDMA_CQE_IMM, e->imm);
    stl_le_p(b + PLDMA_CQE_QPN, e->qpn);
    stl_le_p(b + PLDMA_CQE_SRC_QP, e->src_qp);
    b[PLDMA_CQE_OPCODE] = e->opcode;
    b[PLDMA_CQE_STATUS] = e->status;
    b[PLDMA_CQE_FLAGS] = e->flags;
    /* 1 on the first pass over the ring, flipped at every wrap */
    b[PLDMA_CQE_OWNER] = !((c->pi >> k) & 1);
    stl_le_p(b + PLDMA_CQE_VENDOR_ERR, e->vendor_err);
    va = c->base + (uint64_t)(c->pi & (c->size - 1)) * PLDMA_CQE_SIZE;
    /* everything but the owner byte, then the owner byte */
    if (pldma_rw(s, NULL, va, b, PLDMA_CQE_OWNER, true, &fva) !=
        PLDMA_ACC_OK ||
        pldma_rw(s, NULL, va + PLDMA_CQE_VENDOR_ERR, b + PLDMA_CQE_VENDOR_ERR,
                 4, true, &fva) != PLDMA_ACC_OK) {
        cq_error(s, cq, "CQE write failed");
        return false;
    }
    smp_wmb();  /* the owner byte must not be visible before the rest */
    if (pldma_rw(s, NULL, va + PLDMA_CQE_OWNER, b + PLDMA_CQE_OWNER, 1, true,
                 &fva) != PLDMA_ACC_OK) {
        cq_error(s, cq, "CQE write failed");
        return false;
    }
    trace_pldma_cq_cqe(cq, c->pi, e->opcode, e->status, e->qpn, e->wr_id,
                       e->byte_len);
    c->pi = (c->pi + 1) & CQ_IDX_MASK;
    if (c->arm == PLDMA_CQ_DB_CMD_ARM ||
        (c->arm == PLDMA_CQ_DB_CMD_ARM_SOL &&
         ((e->flags & PLDMA_CQE_F_SOLICITED) ||
          e->status != PLDMA_WC_ST_SUCCESS))) {
        cq_fire(s, cq);
    }
    return true;
}

/* A descriptor's PLDMA_ST_* as a CQE status */
static uint8_t cq_wc_status(uint32_t st)
{
    switch (st) {
    case PLDMA_ST_SUCCESS:
        return PLDMA_WC_ST_SUCCESS;
    case PLDMA_ST_BAD_OPCODE:
    case PLDMA_ST_BAD_LENGTH:
    case PLDMA_ST_BAD_QP:
    case PLDMA_ST_BAD_DESC:
    case PLDMA_ST_OVERLAP:
        return PLDMA_WC_ST_LOC_QP_OP_ERR;
    case PLDMA_ST_ABORTED:
    case PLDMA_ST_DMA_ERROR:
    case PLDMA_ST_FAULT:
        return PLDMA_WC_ST_LOC_PROT_ERR;
    case PLDMA_ST_CANCELLED:
    case PLDMA_ST_FLUSHED:
        return PLDMA_WC_ST_WR_FLUSH_ERR;
    case PLDMA_ST_REMOTE_ACCESS:
        return PLDMA_WC_ST_REM_ACCESS_ERR;
    case PLDMA_ST_REMOTE_TIMEOUT:
        return PLDMA_WC_ST_RETRY_EXC_ERR;
    case PLDMA_ST_REMOTE_RNR:
        return PLDMA_WC_ST_RNR_RETRY_EXC_ERR;
    case PLDMA_ST_REMOTE_ERROR:
        return PLDMA_WC_ST_REM_OP_ERR;
    case PLDMA_ST_REMOTE_INVALID:
        return PLDMA_WC_ST_REM_INV_REQ_ERR;
    default:
        return PLDMA_WC_ST_GENERAL_ERR;
    }
}

static uint8_t cq_wc_opcode(uint8_t op)
{
    return op < PLDMA_OP_TABLE_SIZE ? pldma_op_info[op].wc : PLDMA_WC_SEND;
}

/*
 * A descriptor of a QP's send queue ends (PHASE_COMPL): a CQE to the
 * QP's send CQ when it was signaled and a QP operation (RDMA, SEND), and
 * for every error.
 */
void pldma_cq_send_done(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    PLDMAQP *qp = pldma_qp_of_sq(s, ch->idx);
    bool ok = ch->cstatus == PLDMA_ST_SUCCESS;
    PLDMACqe e = { 0 };

    if (!qp || qp->send_cq == PLDMA_CQ_NONE ||
        (ok && !(pldma_op_remote(ch->op) &&
                 (ch->dflags & PLDMA_DF_SIGNALED)))) {
        return;
    }
    e.wr_id = ch->cookie;
    e.byte_len = MIN(ch->done, UINT32_MAX);
    e.qpn = pldma_qp_qpn(s, qp - s->net->qps);
    e.src_qp = qp->dest_qpn;
    e.opcode = cq_wc_opcode(ch->op);
    e.status = cq_wc_status(ch->cstatus);
    e.vendor_err = ok ? 0 : ch->cstatus;
    pldma_cq_post(s, qp->send_cq, &e);
}

/* ---- the doorbell on a channel page ---- */

static void cq_db_ignored(PLDMAChannel *ch, uint32_t cq, const char *why)
{
    PLDMA_GUEST_ERR(pldma_err_cq_db_ignored,
                    "ch%u: CQ doorbell for cq %u ignored: %s", ch->idx, cq,
                    why);
    trace_pldma_cq_db_ignored(cq, ch->idx, why);
}

void pldma_cq_doorbell(PLDMAChannel *ch, uint32_t val)
{
    PLDMACore *s = ch->s;
    uint32_t idx = PLDMA_CQ_DB_CQ(val), cmd = PLDMA_CQ_DB_CMD(val);
    uint32_t ci = PLDMA_CQ_DB_CI(val);
    PLDMACQ *c;

    if (!s->nic || idx >= s->num_cqs) {
        cq_db_ignored(ch, idx, "no such CQ");
        return;
    }
    c = &s->net->cqs[idx];
    if (c->state != PLDMA_CQS_ACTIVE) {
        cq_db_ignored(ch, idx, "CQ not ACTIVE");
        return;
    }
    if (ch->pasid_reg != c->pd) {
        cq_db_ignored(ch, idx, "the channel's PASID is not the CQ's PD");
        return;
    }
    if (cmd > PLDMA_CQ_DB_CMD_ARM_SOL) {
        cq_db_ignored(ch, idx, "bad command");
        return;
    }
    /* the consumer index moves forward, never past the CQEs written */
    if (((ci - c->ci) & CQ_IDX_MASK) > ((c->pi - c->ci) & CQ_IDX_MASK)) {
        cq_db_ignored(ch, idx, "consumer index beyond the CQEs written");
        return;
    }
    trace_pldma_cq_db(idx, ch->idx, cmd, ci, c->pi);
    c->ci = ci;
    if (cmd != PLDMA_CQ_DB_CMD_CI) {
        if (c->pi != c->ci) {
            cq_fire(s, idx);    /* CQEs not consumed yet: at once */
        } else {
            c->arm = cmd;
        }
    }
}

/* ---- registers ---- */

static uint32_t cq_create(PLDMACore *s, uint32_t idx)
{
    const PLDMACQ *st = &s->net->cq_stage;
    PLDMACQ *c = &s->net->cqs[idx];

    if (c->state != PLDMA_CQS_NONE) {
        return PLDMA_CQ_ST_BUSY;
    }
    if (st->size < PLDMA_CQ_MIN_ENTRIES || st->size > PLDMA_CQ_MAX_ENTRIES ||
        !is_power_of_2(st->size) ||
        !QEMU_IS_ALIGNED(st->base, PLDMA_CQE_SIZE) ||
        st->base + (uint64_t)st->size * PLDMA_CQE_SIZE < st->base ||
        !pldma_pasid_reg_valid(s, st->pd)) {
        return PLDMA_CQ_ST_BAD_CONFIG;
    }
    c->base = st->base;
    c->size = st->size;
    c->pd = st->pd;
    c->pi = 0;
    c->ci = 0;
    c->arm = 0;
    cq_set_state(s, idx, PLDMA_CQS_ACTIVE);
    return PLDMA_CQ_ST_OK;
}

static uint32_t cq_destroy(PLDMACore *s, uint32_t idx)
{
    if (pldma_cq_in_use(s, idx)) {
        return PLDMA_CQ_ST_BUSY;
    }
    memset(&s->net->cqs[idx], 0, sizeof(s->net->cqs[idx]));
    s->net->cq_events &= ~(1ULL << idx);
    s->net->cq_errors &= ~(1ULL << idx);
    pldma_cq_irq_sync(s);
    trace_pldma_cq_state(idx, PLDMA_CQS_ACTIVE, PLDMA_CQS_NONE);
    return PLDMA_CQ_ST_OK;
}

static void cq_cmd(PLDMACore *s, uint32_t cmd)
{
    uint32_t idx = s->net->cq_sel;

    if (!s->nic) {
        s->net->cq_status = PLDMA_CQ_ST_BAD_CMD;
    } else if (idx >= s->num_cqs) {
        s->net->cq_status = PLDMA_CQ_ST_BAD_INDEX;
    } else if (cmd == PLDMA_CQ_CMD_CREATE) {
        s->net->cq_status = cq_create(s, idx);
    } else if (cmd == PLDMA_CQ_CMD_DESTROY) {
        s->net->cq_status = cq_destroy(s, idx);
    } else {
        s->net->cq_status = PLDMA_CQ_ST_BAD_CMD;
    }
    trace_pldma_cq_cmd(idx, cmd, s->net->cq_stage.base, s->net->cq_stage.size,
                       s->net->cq_stage.pd, s->net->cq_status);
}

bool pldma_cq_read(PLDMACore *s, hwaddr addr, uint64_t *val)
{
    const PLDMACQ *c = s->nic && s->net->cq_sel < s->num_cqs ?
                       &s->net->cqs[s->net->cq_sel] : NULL;

    switch (addr) {
    case PLDMA_CQ_NUM:
        *val = s->nic ? s->num_cqs : 0;
        return true;
    case PLDMA_CQ_SEL:
        *val = s->net->cq_sel;
        return true;
    case PLDMA_CQ_BASE_LO:
        *val = (uint32_t)s->net->cq_stage.base;
        return true;
    case PLDMA_CQ_BASE_HI:
        *val = s->net->cq_stage.base >> 32;
        return true;
    case PLDMA_CQ_SIZE:
        *val = s->net->cq_stage.size;
        return true;
    case PLDMA_CQ_PD:
        *val = s->net->cq_stage.pd;
        return true;
    case PLDMA_CQ_CMD:
        *val = 0;
        return true;
    case PLDMA_CQ_STATUS:
        *val = s->net->cq_status;
        return true;
    case PLDMA_CQ_STATE:
        *val = c ? c->state : 0;
        return true;
    case PLDMA_CQ_PI:
        *val = c ? c->pi : 0;
        return true;
    case PLDMA_CQ_CI:
        *val = c ? c->ci : 0;
        return true;
    case PLDMA_CQ_EVENTS_LO:
        *val = (uint32_t)s->net->cq_events;
        return true;
    case PLDMA_CQ_EVENTS_HI:
        *val = s->net->cq_events >> 32;
        return true;
    case PLDMA_CQ_ERRORS_LO:
        *val = (uint32_t)s->net->cq_errors;
        return true;
    case PLDMA_CQ_ERRORS_HI:
        *val = s->net->cq_errors >> 32;
        return true;
    default:
        return false;
    }
}

bool pldma_cq_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case PLDMA_CQ_SEL:
        s->net->cq_sel = val;
        return true;
    case PLDMA_CQ_BASE_LO:
        s->net->cq_stage.base = deposit64(s->net->cq_stage.base, 0, 32, val);
        return true;
    case PLDMA_CQ_BASE_HI:
        s->net->cq_stage.base = deposit64(s->net->cq_stage.base, 32, 32, val);
        return true;
    case PLDMA_CQ_SIZE:
        s->net->cq_stage.size = val;
        return true;
    case PLDMA_CQ_PD:
        s->net->cq_stage.pd = val;
        return true;
    case PLDMA_CQ_CMD:
        cq_cmd(s, val);
        return true;
    case PLDMA_CQ_EVENTS_LO:
    case PLDMA_CQ_EVENTS_HI:
        s->net->cq_events &= ~((uint64_t)val << (addr == PLDMA_CQ_EVENTS_HI ?
                                                 32 : 0));
        pldma_cq_irq_sync(s);
        return true;
    case PLDMA_CQ_ERRORS_LO:
    case PLDMA_CQ_ERRORS_HI:
        s->net->cq_errors &= ~((uint64_t)val << (addr == PLDMA_CQ_ERRORS_HI ?
                                                 32 : 0));
        pldma_cq_irq_sync(s);
        return true;
    case PLDMA_CQ_NUM:
    case PLDMA_CQ_STATUS:
    case PLDMA_CQ_STATE:
    case PLDMA_CQ_PI:
    case PLDMA_CQ_CI:
        PLDMA_GUEST_ERR(pldma_err_cq_write_ro,
                        "write to read-only CQ register 0x%" HWADDR_PRIx,
                        addr);
        return true;
    default:
        return false;
    }
}

/* ---- life cycle ---- */

bool pldma_cq_realize(PLDMACore *s, Error **errp)
{
    if (s->num_cqs < 1 || s->num_cqs > PLDMA_MAX_CQS) {
        error_setg(errp, "num-cqs must be between 1 and %d", PLDMA_MAX_CQS);
        return false;
    }
    return true;
}

/* A reset: every CQ to NONE, the events and errors cleared */
void pldma_cq_reset(PLDMACore *s)
{
    memset(s->net->cqs, 0, sizeof(s->net->cqs));
    memset(&s->net->cq_stage, 0, sizeof(s->net->cq_stage));
    s->net->cq_sel = 0;
    s->net->cq_status = 0;
    s->net->cq_events = 0;
    s->net->cq_errors = 0;
    s->net->qp_errors = 0;
    pldma_cq_irq_sync(s);
}

static const VMStateDescription vmstate_pldma_cq = {
    .name = "pldma-cq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(state, PLDMACQ),
        VMSTATE_UINT64(base, PLDMACQ),
        VMSTATE_UINT32(size, PLDMACQ),
        VMSTATE_UINT32(pd, PLDMACQ),
        VMSTATE_UINT32(pi, PLDMACQ),
        VMSTATE_UINT32(ci, PLDMACQ),
        VMSTATE_UINT32(arm, PLDMACQ),
        VMSTATE_END_OF_LIST()
    }
};

/* The receive queue and CQs of a QP (the rest is vmstate_pldma_qps) */
static const VMStateDescription vmstate_pldma_qp_rq = {
    .name = "pldma-qp-rq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(rq_base, PLDMAQP),
        VMSTATE_UINT32(rq_size, PLDMAQP),
        VMSTATE_UINT32(rq_head, PLDMAQP),
        VMSTATE_UINT32(rq_tail, PLDMAQP),
        VMSTATE_UINT32(send_cq, PLDMAQP),
        VMSTATE_UINT32(recv_cq, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_cqs_needed(void *opaque)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_CQS; i++) {
        if (s->net->cqs[i].state != PLDMA_CQS_NONE) {
            return true;
        }
    }
    return s->net->cq_events || s->net->cq_errors || s->net->qp_errors;
}

static bool pldma_cqs_post_load(void *opaque, int version_id, Error **errp)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_CQS; i++) {
        const PLDMACQ *c = &s->net->cqs[i];

        if (c->state > PLDMA_CQS_ERROR ||
            (c->state != PLDMA_CQS_NONE &&
             (i >= s->num_cqs || c->size < PLDMA_CQ_MIN_ENTRIES ||
              c->size > PLDMA_CQ_MAX_ENTRIES || !is_power_of_2(c->size) ||
              c->pi > CQ_IDX_MASK || c->ci > CQ_IDX_MASK ||
              c->arm > PLDMA_CQ_DB_CMD_ARM_SOL))) {
            error_setg(errp, "pldma: CQ %u is out of range", i);
            return false;
        }
    }
    for (i = 0; i < PLDMA_MAX_QPS; i++) {
        const PLDMAQP *qp = &s->net->qps[i];

        /* a QP in RESET owns no RQ and no CQ (pldma-net/qps came first) */
        if (s->nic && i < s->num_qps && qp->state == PLDMA_QPS_RESET &&
            (qp->rq_size || qp->rq_base || qp->rq_head || qp->rq_tail ||
             qp->send_cq != PLDMA_CQ_NONE || qp->recv_cq != PLDMA_CQ_NONE)) {
            error_setg(errp, "pldma: QP %u in RESET with an RQ or a CQ", i);
            return false;
        }
        if ((qp->rq_size && (qp->rq_size > PLDMA_RQ_MAX_ENTRIES ||
                             !is_power_of_2(qp->rq_size) ||
                             qp->rq_head >= qp->rq_size ||
                             qp->rq_tail >= qp->rq_size)) ||
            (qp->send_cq != PLDMA_CQ_NONE && qp->send_cq >= s->num_cqs) ||
            (qp->recv_cq != PLDMA_CQ_NONE && qp->recv_cq >= s->num_cqs)) {
            error_setg(errp, "pldma: QP %u's RQ or CQs are out of range", i);
            return false;
        }
    }
    return true;
}

const VMStateDescription vmstate_pldma_cqs = {
    .name = "pldma-net/cqs",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_cqs_needed,
    .post_load_errp = pldma_cqs_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(cq_sel, PLDMANet),
        VMSTATE_UINT32(cq_status, PLDMANet),
        VMSTATE_STRUCT(cq_stage, PLDMANet, 1, vmstate_pldma_cq, PLDMACQ),
        VMSTATE_STRUCT_ARRAY(cqs, PLDMANet, PLDMA_MAX_CQS, 1,
                             vmstate_pldma_cq, PLDMACQ),
        VMSTATE_UINT64(cq_events, PLDMANet),
        VMSTATE_UINT64(cq_errors, PLDMANet),
        VMSTATE_UINT64(qp_errors, PLDMANet),
        VMSTATE_STRUCT_ARRAY(qps, PLDMANet, PLDMA_MAX_QPS, 1,
                             vmstate_pldma_qp_rq, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};
