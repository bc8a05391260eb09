/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, shared receive
 * queues
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A shared receive queue (CAP.SRQ) is a ring of receive WQEs that the QPs
 * staged with it at RESET->INIT take from, in the order their messages
 * need one, instead of a receive queue each.  Software posts by writing
 * WQEs and then the TAIL of the doorbell record after the ring; the device
 * reads that TAIL only when the WQEs it knew of are taken, and writes the
 * record's HEAD after each take.  A WQE taken belongs to its QP (rq.c).
 * See docs/specs/pldma.rst, "Shared receive queues".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qapi/error.h"
#include "migration/vmstate.h"
#include "net-internal.h"
#include "trace.h"

/* IRQ_SRQ is set while SRQ_EVENTS or SRQ_ERRORS is not 0 */
void pldma_srq_irq_sync(PLDMACore *s)
{
    s->irq_status &= ~PLDMA_IRQ_SRQ;
    if (s->net->srq_events || s->net->srq_errors) {
        s->irq_status |= PLDMA_IRQ_SRQ;
    }
}

static uint64_t srq_dbrec(const PLDMASRQ *q)
{
    return q->base + (uint64_t)q->size * PLDMA_RWQE_SIZE;
}

static void srq_set_state(PLDMACore *s, uint32_t idx, uint32_t st)
{
    if (s->net->srqs[idx].state != st) {
        trace_pldma_srq_state(idx, s->net->srqs[idx].state, st);
        s->net->srqs[idx].state = st;
    }
}

/* SRQ @idx cannot go on (a bad TAIL, an access that failed): ERROR */
static void srq_error(PLDMACore *s, uint32_t idx, const char *why)
{
    PLDMA_GUEST_ERR(pldma_err_srq, "srq %u: %s", idx, why);
    srq_set_state(s, idx, PLDMA_SRQS_ERROR);
    s->net->srqs[idx].limit = 0;
    s->net->srq_errors |= 1ULL << idx;
    pldma_srq_irq_sync(s);
    pldma_update_irq(s);
}

/* Read the TAIL software wrote into SRQ @idx's record; false: ERROR */
static bool srq_read_tail(PLDMACore *s, uint32_t idx)
{
    PLDMASRQ *q = &s->net->srqs[idx];
    uint8_t rec[4];
    uint64_t fva;
    uint32_t tail;

    if (pldma_rw(s, NULL, srq_dbrec(q) + PLDMA_SRQ_DBREC_TAIL, rec,
                 sizeof(rec), false, &fva) != PLDMA_ACC_OK) {
        srq_error(s, idx, "its doorbell record cannot be read");
        return false;
    }
    tail = ldl_le_p(rec);
    if (tail >= q->size) {
        srq_error(s, idx, "TAIL out of range");
        return false;
    }
    q->tail = tail;
    return true;
}

/* The WQEs posted in SRQ @q, as far as the device knows */
static uint32_t srq_posted(const PLDMASRQ *q)
{
    return (q->tail - q->head) & (q->size - 1);
}

/*
 * Take the WQE at the head of SRQ @idx for QP @qp into @w
 * (PLDMA_RWQE_SIZE bytes): PLDMA_SRQ_TAKEN, PLDMA_SRQ_EMPTY, or
 * PLDMA_SRQ_FAILED when the SRQ is (now) in ERROR.
 */
PLDMASRQTake pldma_srq_take(PLDMACore *s, uint32_t idx, uint32_t qp,
                            uint8_t *w)
{
    PLDMASRQ *q = &s->net->srqs[idx];
    uint8_t rec[4];
    uint64_t fva;

    if (q->state != PLDMA_SRQS_ACTIVE) {
        return PLDMA_SRQ_FAILED;
    }
    if (q->head == q->tail && !srq_read_tail(s, idx)) {
        return PLDMA_SRQ_FAILED;
    }
    if (q->head == q->tail) {
        return PLDMA_SRQ_EMPTY;
    }
    if (pldma_rw(s, NULL, q->base + (uint64_t)q->head * PLDMA_RWQE_SIZE, w,
                 PLDMA_RWQE_SIZE, false, &fva) != PLDMA_ACC_OK) {
        srq_error(s, idx, "a WQE cannot be read");
        return PLDMA_SRQ_FAILED;
    }
    trace_pldma_srq_take(idx, qp, q->head, q->tail);
    q->head = (q->head + 1) & (q->size - 1);
    stl_le_p(rec, q->head);
    if (pldma_rw(s, NULL, srq_dbrec(q) + PLDMA_SRQ_DBREC_HEAD, rec,
                 sizeof(rec), true, &fva) != PLDMA_ACC_OK) {
        srq_error(s, idx, "its doorbell record cannot be written");
        return PLDMA_SRQ_FAILED;
    }
    /*
     * Below the limit by what the device knew: ask the record, which
     * software may have moved since, before raising the event
     */
    if (q->limit && srq_posted(q) < q->limit && srq_read_tail(s, idx) &&
        srq_posted(q) < q->limit) {
        trace_pldma_srq_limit(idx, q->limit, srq_posted(q));
        q->limit = 0;
        s->net->srq_events |= 1ULL << idx;
        pldma_srq_irq_sync(s);
        pldma_update_irq(s);
    }
    return PLDMA_SRQ_TAKEN;
}

/* Is SRQ @idx the SRQ of a QP out of RESET */
static bool srq_in_use(PLDMACore *s, uint32_t idx)
{
    uint32_t i;

    for (i = 0; i < s->num_qps; i++) {
        if (s->net->qps[i].state != PLDMA_QPS_RESET &&
            s->net->qps[i].srq == idx + 1) {
            return true;
        }
    }
    return false;
}

/* May a QP of PD @pd, @pd_tag receive from SRQ @idx */
bool pldma_srq_usable(PLDMACore *s, uint32_t idx, uint32_t pd,
                      uint32_t pd_tag)
{
    return s->nic && idx < s->num_srqs &&
           s->net->srqs[idx].state == PLDMA_SRQS_ACTIVE &&
           s->net->srqs[idx].pd == pd && s->net->srqs[idx].pd_tag == pd_tag;
}

/* ---- registers ---- */

static uint32_t srq_create(PLDMACore *s, uint32_t idx)
{
    const PLDMASRQ *st = &s->net->srq_stage;
    PLDMASRQ *q = &s->net->srqs[idx];
    uint64_t bytes = (uint64_t)st->size * PLDMA_RWQE_SIZE +
                     PLDMA_SRQ_DBREC_SIZE;

    if (q->state != PLDMA_SRQS_NONE) {
        return PLDMA_SRQ_ST_BUSY;
    }
    if (st->size < PLDMA_SRQ_MIN_ENTRIES ||
        st->size > PLDMA_SRQ_MAX_ENTRIES || !is_power_of_2(st->size) ||
        !QEMU_IS_ALIGNED(st->base, PLDMA_RWQE_SIZE) ||
        st->base + bytes < st->base ||
        !pldma_pasid_reg_valid(s, st->pd) ||
        st->pd_tag > PLDMA_PD_TAG_MAX) {
        return PLDMA_SRQ_ST_BAD_CONFIG;
    }
    q->base = st->base;
    q->size = st->size;
    q->pd = st->pd;
    q->pd_tag = st->pd_tag;
    q->head = 0;
    q->tail = 0;
    q->limit = 0;
    srq_set_state(s, idx, PLDMA_SRQS_ACTIVE);
    return PLDMA_SRQ_ST_OK;
}

static uint32_t srq_destroy(PLDMACore *s, uint32_t idx)
{
    if (srq_in_use(s, idx)) {
        return PLDMA_SRQ_ST_BUSY;
    }
    srq_set_state(s, idx, PLDMA_SRQS_NONE);
    memset(&s->net->srqs[idx], 0, sizeof(s->net->srqs[idx]));
    s->net->srq_events &= ~(1ULL << idx);
    s->net->srq_errors &= ~(1ULL << idx);
    pldma_srq_irq_sync(s);
    return PLDMA_SRQ_ST_OK;
}

/* The limit (IBA's srq_limit): armed below the SRQ's size, 0 disarms */
static uint32_t srq_arm(PLDMACore *s, uint32_t idx)
{
    PLDMASRQ *q = &s->net->srqs[idx];
    uint32_t limit = s->net->srq_stage.limit;

    if (q->state != PLDMA_SRQS_ACTIVE) {
        return q->state == PLDMA_SRQS_NONE ? PLDMA_SRQ_ST_BAD_INDEX :
               PLDMA_SRQ_ST_BAD_CMD;
    }
    if (limit >= q->size) {
        return PLDMA_SRQ_ST_BAD_CONFIG;
    }
    q->limit = limit;
    return PLDMA_SRQ_ST_OK;
}

static void srq_cmd(PLDMACore *s, uint32_t cmd)
{
    uint32_t idx = s->net->srq_sel;
    uint32_t *st = &s->net->srq_status;

    if (!s->nic) {
        *st = PLDMA_SRQ_ST_BAD_CMD;
    } else if (idx >= s->num_srqs) {
        *st = PLDMA_SRQ_ST_BAD_INDEX;
    } else if (cmd == PLDMA_SRQ_CMD_CREATE) {
        *st = srq_create(s, idx);
    } else if (cmd == PLDMA_SRQ_CMD_DESTROY) {
        *st = srq_destroy(s, idx);
    } else if (cmd == PLDMA_SRQ_CMD_ARM) {
        *st = srq_arm(s, idx);
    } else {
        *st = PLDMA_SRQ_ST_BAD_CMD;
    }
    trace_pldma_srq_cmd(idx, cmd, s->net->srq_stage.base,
                        s->net->srq_stage.size, s->net->srq_stage.pd,
                        s->net->srq_stage.limit, *st);
}

bool pldma_srq_read(PLDMACore *s, hwaddr addr, uint64_t *val)
{
    const PLDMASRQ *st = &s->net->srq_stage;
    const PLDMASRQ *q = s->nic && s->net->srq_sel < s->num_srqs ?
                        &s->net->srqs[s->net->srq_sel] : NULL;

    switch (addr) {
    case PLDMA_SRQ_NUM:
        *val = s->nic ? s->num_srqs : 0;
        return true;
    case PLDMA_SRQ_SEL:
        *val = s->net->srq_sel;
        return true;
    case PLDMA_SRQ_BASE_LO:
        *val = (uint32_t)st->base;
        return true;
    case PLDMA_SRQ_BASE_HI:
        *val = st->base >> 32;
        return true;
    case PLDMA_SRQ_SIZE:
        *val = st->size;
        return true;
    case PLDMA_SRQ_PD:
        *val = st->pd;
        return true;
    case PLDMA_SRQ_PD_TAG:
        *val = st->pd_tag;
        return true;
    case PLDMA_SRQ_LIMIT:
        *val = st->limit;
        return true;
    case PLDMA_SRQ_CMD:
        *val = 0;
        return true;
    case PLDMA_SRQ_STATUS:
        *val = s->net->srq_status;
        return true;
    case PLDMA_SRQ_STATE:
        *val = q ? q->state : 0;
        return true;
    case PLDMA_SRQ_HEAD:
        *val = q ? q->head : 0;
        return true;
    case PLDMA_SRQ_ARMED:
        *val = q ? q->limit : 0;
        return true;
    case PLDMA_SRQ_EVENTS_LO:
        *val = (uint32_t)s->net->srq_events;
        return true;
    case PLDMA_SRQ_EVENTS_HI:
        *val = s->net->srq_events >> 32;
        return true;
    case PLDMA_SRQ_ERRORS_LO:
        *val = (uint32_t)s->net->srq_errors;
        return true;
    case PLDMA_SRQ_ERRORS_HI:
        *val = s->net->srq_errors >> 32;
        return true;
    default:
        return false;
    }
}

bool pldma_srq_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    PLDMASRQ *st = &s->net->srq_stage;

    switch (addr) {
    case PLDMA_SRQ_SEL:
        s->net->srq_sel = val;
        return true;
    case PLDMA_SRQ_BASE_LO:
        st->base = deposit64(st->base, 0, 32, val);
        return true;
    case PLDMA_SRQ_BASE_HI:
        st->base = deposit64(st->base, 32, 32, val);
        return true;
    case PLDMA_SRQ_SIZE:
        st->size = val;
        return true;
    case PLDMA_SRQ_PD:
        st->pd = val;
        return true;
    case PLDMA_SRQ_PD_TAG:
        st->pd_tag = val;
        return true;
    case PLDMA_SRQ_LIMIT:
        st->limit = val;
        return true;
    case PLDMA_SRQ_CMD:
        srq_cmd(s, val);
        return true;
    case PLDMA_SRQ_EVENTS_LO:
    case PLDMA_SRQ_EVENTS_HI:
        s->net->srq_events &= ~((uint64_t)val <<
                                (addr == PLDMA_SRQ_EVENTS_HI ? 32 : 0));
        pldma_srq_irq_sync(s);
        return true;
    case PLDMA_SRQ_ERRORS_LO:
    case PLDMA_SRQ_ERRORS_HI:
        s->net->srq_errors &= ~((uint64_t)val <<
                                (addr == PLDMA_SRQ_ERRORS_HI ? 32 : 0));
        pldma_srq_irq_sync(s);
        return true;
    case PLDMA_SRQ_NUM:
    case PLDMA_SRQ_STATUS:
    case PLDMA_SRQ_STATE:
    case PLDMA_SRQ_HEAD:
    case PLDMA_SRQ_ARMED:
        PLDMA_GUEST_ERR(pldma_err_srq_write_ro,
                        "write to read-only SRQ register 0x%" HWADDR_PRIx,
                        addr);
        return true;
    default:
        return false;
    }
}

/* ---- life cycle ---- */

bool pldma_srq_realize(PLDMACore *s, Error **errp)
{
    if (s->num_srqs > PLDMA_MAX_SRQS) {
        error_setg(errp, "num-srqs must be at most %d", PLDMA_MAX_SRQS);
        return false;
    }
    return true;
}

/* A reset: every SRQ to NONE, the events and errors cleared */
void pldma_srq_reset(PLDMACore *s)
{
    memset(s->net->srqs, 0, sizeof(s->net->srqs));
    memset(&s->net->srq_stage, 0, sizeof(s->net->srq_stage));
    s->net->srq_sel = 0;
    s->net->srq_status = 0;
    s->net->srq_events = 0;
    s->net->srq_errors = 0;
    pldma_srq_irq_sync(s);
}

static const VMStateDescription vmstate_pldma_srq = {
    .name = "pldma-srq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(state, PLDMASRQ),
        VMSTATE_UINT64(base, PLDMASRQ),
        VMSTATE_UINT32(size, PLDMASRQ),
        VMSTATE_UINT32(pd, PLDMASRQ),
        VMSTATE_UINT32(pd_tag, PLDMASRQ),
        VMSTATE_UINT32(head, PLDMASRQ),
        VMSTATE_UINT32(tail, PLDMASRQ),
        VMSTATE_UINT32(limit, PLDMASRQ),
        VMSTATE_END_OF_LIST()
    }
};

/* The SRQ each QP receives from (index + 1, 0: none) */
static const VMStateDescription vmstate_pldma_qp_srq = {
    .name = "pldma-qp-srq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(srq, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_srqs_needed(void *opaque)
{
    PLDMANet *n = opaque;
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_SRQS; i++) {
        if (n->srqs[i].state != PLDMA_SRQS_NONE) {
            return true;
        }
    }
    return n->srq_events || n->srq_errors || n->srq_sel || n->srq_status ||
           n->qp_stage.srq;
}

static bool pldma_srqs_post_load(void *opaque, int version_id, Error **errp)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_SRQS; i++) {
        const PLDMASRQ *q = &n->srqs[i];

        if (q->state > PLDMA_SRQS_ERROR ||
            (q->state != PLDMA_SRQS_NONE &&
             (i >= s->num_srqs || !s->nic ||
              q->size < PLDMA_SRQ_MIN_ENTRIES ||
              q->size > PLDMA_SRQ_MAX_ENTRIES || !is_power_of_2(q->size) ||
              !QEMU_IS_ALIGNED(q->base, PLDMA_RWQE_SIZE) ||
              q->head >= q->size || q->tail >= q->size ||
              q->limit >= q->size || q->pd_tag > PLDMA_PD_TAG_MAX ||
              !pldma_pasid_reg_valid(s, q->pd)))) {
            error_setg(errp, "pldma: SRQ %u is out of range", i);
            return false;
        }
    }
    for (i = 0; i < PLDMA_MAX_QPS; i++) {
        const PLDMAQP *qp = &n->qps[i];

        if (!qp->srq) {
            continue;
        }
        if (qp->state == PLDMA_QPS_RESET || qp->rq_size ||
            qp->srq > PLDMA_MAX_SRQS ||
            n->srqs[qp->srq - 1].state == PLDMA_SRQS_NONE) {
            error_setg(errp, "pldma: QP %u's SRQ is out of range", i);
            return false;
        }
    }
    return true;
}

const VMStateDescription vmstate_pldma_srqs = {
    .name = "pldma-net/srqs",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_srqs_needed,
    .post_load_errp = pldma_srqs_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(srq_sel, PLDMANet),
        VMSTATE_UINT32(srq_status, PLDMANet),
        VMSTATE_STRUCT(srq_stage, PLDMANet, 1, vmstate_pldma_srq, PLDMASRQ),
        VMSTATE_STRUCT_ARRAY(srqs, PLDMANet, PLDMA_MAX_SRQS, 1,
                             vmstate_pldma_srq, PLDMASRQ),
        VMSTATE_UINT64(srq_events, PLDMANet),
        VMSTATE_UINT64(srq_errors, PLDMANet),
        VMSTATE_STRUCT(qp_stage, PLDMANet, 1, vmstate_pldma_qp_srq, PLDMAQP),
        VMSTATE_STRUCT_ARRAY(qps, PLDMANet, PLDMA_MAX_QPS, 1,
                             vmstate_pldma_qp_srq, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};
