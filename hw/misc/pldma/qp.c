/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, queue pairs
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * RoCEv2 Reliable Connection queue pairs as verbs model them: the QP_*
 * registers of include/hw/misc/pldma-regs.h, the IB state machine (RESET,
 * INIT, RTR, RTS, ERR) with the attributes each transition requires and
 * allows (IBA table 91, ib_modify_qp_is_ok()), and the QPNs.  What a QP
 * does on the wire (requester on its SQ channel, responder, receive
 * dispatch) is in net.c and its roles.  See docs/specs/pldma.rst,
 * "Queue pairs".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/guest-random.h"
#include "migration/vmstate.h"
#include "net-internal.h"
#include "trace.h"

/* QPN[23:8]; generation 0 would make QPNs 0 and 1 (QP0, QP1) */
static bool qp_gen_ok(uint32_t gen)
{
    return gen != 0 && gen <= 0xffff;
}

static void qp_new_gen(PLDMAQP *qp)
{
    uint16_t g;

    qemu_guest_getrandom_nofail(&g, sizeof(g));
    if (!qp_gen_ok(g) || g == qp->gen) {
        /* (a bounded fallback, no loop on the generator) */
        g = qp->gen + 0x0203;
        if (!qp_gen_ok(g)) {
            g = 0x0202;
        }
    }
    qp->gen = g;
}

uint32_t pldma_qp_qpn(PLDMACore *s, uint32_t idx)
{
    return (s->net->qps[idx].gen << 8) | idx;
}

#define QP_STATE_NAME(st, name) { st, name },
static const struct {
    uint32_t st;
    const char *name;
} qp_state_names[] = {
    PLDMA_QPS_NAMES(QP_STATE_NAME)
};
#undef QP_STATE_NAME

static bool qp_state_known(uint32_t st)
{
    uint32_t i;

    for (i = 0; i < ARRAY_SIZE(qp_state_names); i++) {
        if (qp_state_names[i].st == st) {
            return true;
        }
    }
    return false;
}

static const char *qp_state_name(uint32_t st)
{
    for (size_t i = 0; i < ARRAY_SIZE(qp_state_names); i++) {
        if (qp_state_names[i].st == st) {
            return qp_state_names[i].name;
        }
    }
    return "?";
}

static void qp_set_state(PLDMACore *s, uint32_t idx, uint32_t st)
{
    PLDMAQP *qp = &s->net->qps[idx];
    uint32_t old = qp->state;

    if (st == PLDMA_QPS_RESET) {
        /* everything goes, and the QPN changes: old frames never match */
        uint32_t gen = qp->gen;

        memset(qp, 0, sizeof(*qp));
        qp->gen = gen;
        qp->sq = PLDMA_QP_NO_SQ;
        qp->send_cq = PLDMA_CQ_NONE;
        qp->recv_cq = PLDMA_CQ_NONE;
        qp_new_gen(qp);
        pldma_resp_qp_clear(s, idx);
        /* an error of the QP that was is no event of the one to come */
        if (s->net->qp_errors & BIT_ULL(idx)) {
            s->net->qp_errors &= ~BIT_ULL(idx);
            pldma_cq_irq_sync(s);
        }
    } else if (st == PLDMA_QPS_ERR) {
        qp->state = st;
        /* the WQE it took from its SRQ completes WR_FLUSH_ERR (rq.c) */
        pldma_rq_flush_held(s, idx);
        pldma_resp_qp_clear(s, idx);
        trace_pldma_qp_state(idx, pldma_qp_qpn(s, idx), qp_state_name(old),
                             qp_state_name(st), qp->pd, qp->pd_tag);
        /* its posted receive WQEs complete WR_FLUSH_ERR (rq.c) */
        pldma_rq_flush(s, idx);
        return;
    } else if (st == PLDMA_QPS_RTR && old != PLDMA_QPS_RTR) {
        qp->state = st;
        pldma_resp_qp_connect(s, idx);
    }
    qp->state = st;
    trace_pldma_qp_state(idx, pldma_qp_qpn(s, idx), qp_state_name(old),
                         qp_state_name(st), qp->pd, qp->pd_tag);
}

/*
 * The QP whose send queue channel @ch is (a QP that took it at
 * RESET->INIT and has not been back to RESET), or NULL
 */
PLDMAQP *pldma_qp_of_sq(PLDMACore *s, uint32_t ch)
{
    uint32_t i;

    for (i = 0; i < s->num_qps && s->nic; i++) {
        if (s->net->qps[i].state != PLDMA_QPS_RESET &&
            s->net->qps[i].sq == ch && ch != PLDMA_QP_NO_SQ) {
            return &s->net->qps[i];
        }
    }
    return NULL;
}

/*
 * The QP enters ERR by itself: a message failed in a way that leaves the
 * peer unknown, or one of its CQs failed.  QP_ERRORS tells the driver
 * (verbs' IB_EVENT_QP_FATAL).
 */
void pldma_qp_to_err(PLDMACore *s, uint32_t idx)
{
    if (idx < s->num_qps && s->net->qps[idx].state != PLDMA_QPS_RESET &&
        s->net->qps[idx].state != PLDMA_QPS_ERR) {
        trace_pldma_qp_fatal(idx, pldma_qp_qpn(s, idx));
        s->net->qp_errors |= 1ULL << idx;
        pldma_cq_irq_sync(s);
        qp_set_state(s, idx, PLDMA_QPS_ERR);
    }
}

/*
 * QP @idx's requester got a NAK that IBA makes fatal (remote access,
 * invalid request, remote operational error): the QP goes to ERR, as
 * Linux rxe's completer takes it (COMPST_ERROR, rxe_qp_error()), and the
 * work requests after the NAKed one complete FLUSHED.  The NAKed request's
 * own completion reports the error: no QP_ERRORS bit (verbs raises no
 * asynchronous event for an error a work completion carries).
 */
void pldma_qp_nak_err(PLDMACore *s, uint32_t idx)
{
    if (idx < s->num_qps && s->net->qps[idx].state == PLDMA_QPS_RTS) {
        qp_set_state(s, idx, PLDMA_QPS_ERR);
    }
}

/*
 * The attributes a transition requires and those it may also take, as
 * IBA table 91 has them for RC (only the attributes this device has);
 * false if the transition does not exist.
 */
static bool qp_transition(uint32_t cur, uint32_t next, uint32_t *req,
                          uint32_t *opt)
{
    *req = PLDMA_QPA_STATE;
    *opt = 0;
    if (next == PLDMA_QPS_RESET || next == PLDMA_QPS_ERR) {
        return true;            /* from any state */
    }
    switch (cur) {
    case PLDMA_QPS_RESET:
        if (next == PLDMA_QPS_INIT) {
            *req = PLDMA_QPA_REQ_INIT;
            *opt = PLDMA_QPA_RQ | PLDMA_QPA_CQ | PLDMA_QPA_SRQ |
                   PLDMA_QPA_TYPE;
            return true;
        }
        return false;
    case PLDMA_QPS_INIT:
        if (next == PLDMA_QPS_INIT) {
            *opt = PLDMA_QPA_ACCESS_FLAGS;
            return true;
        }
        if (next == PLDMA_QPS_RTR) {
            *req = PLDMA_QPA_REQ_RTR;
            *opt = PLDMA_QPA_ACCESS_FLAGS;
            return true;
        }
        return false;
    case PLDMA_QPS_RTR:
        if (next == PLDMA_QPS_RTS) {
            *req = PLDMA_QPA_REQ_RTS;
            *opt = PLDMA_QPA_ACCESS_FLAGS | PLDMA_QPA_MIN_RNR_TIMER |
                   PLDMA_QPA_MAX_QP_RD_ATOMIC;
            return true;
        }
        return false;
    case PLDMA_QPS_RTS:
        if (next == PLDMA_QPS_RTS) {
            *opt = PLDMA_QPA_ACCESS_FLAGS | PLDMA_QPA_MIN_RNR_TIMER |
                   PLDMA_QPA_MAX_QP_RD_ATOMIC;
            return true;
        }
        return false;
    default:
        return false;
    }
}

/* A QP's CQ: none, or an ACTIVE CQ of its PD */
static bool qp_cq_ok(PLDMACore *s, uint32_t cq, uint32_t pd)
{
    return cq == PLDMA_CQ_NONE ||
           (cq < s->num_cqs && s->net->cqs[cq].state == PLDMA_CQS_ACTIVE &&
            s->net->cqs[cq].pd == pd);
}

/* Check the staged values of the attributes in @mask; a PLDMA_QP_ST_* */
static uint32_t qp_check_attrs(PLDMACore *s, uint32_t idx, uint32_t mask)
{
    const PLDMAQP *st = &s->net->qp_stage;
    uint32_t i;

    if ((mask & PLDMA_QPA_PD) && (!pldma_pasid_reg_valid(s, st->pd) ||
                                  st->pd_tag > PLDMA_PD_TAG_MAX)) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if ((mask & PLDMA_QPA_ACCESS_FLAGS) &&
        (st->access & ~PLDMA_KEY_ACC_MASK)) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if ((mask & PLDMA_QPA_AV) &&
        (st->dest_ip == 0 || st->dest_ip == 0xffffffffU ||
         (st->dest_mac_lo & 1) || (st->dest_mac_hi & ~0xffffU) ||
         (st->dest_mac_lo == 0 && st->dest_mac_hi == 0))) {
        return PLDMA_QP_ST_BAD_ATTR;    /* no unicast peer */
    }
    if ((mask & PLDMA_QPA_PATH_MTU) &&
        (st->path_mtu < PLDMA_MTU_256 || st->path_mtu > PLDMA_MTU_4096 ||
         PLDMA_MTU_BYTES(st->path_mtu) > s->mtu)) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if ((mask & PLDMA_QPA_DEST_QPN) &&
        (st->dest_qpn & ~PLDMA_PSN_MASK || st->dest_qpn < 2)) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if (((mask & PLDMA_QPA_SQ_PSN) && (st->sq_psn & ~PLDMA_PSN_MASK)) ||
        ((mask & PLDMA_QPA_RQ_PSN) && (st->rq_psn & ~PLDMA_PSN_MASK))) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if ((mask & (PLDMA_QPA_TIMEOUT | PLDMA_QPA_RETRY_CNT |
                 PLDMA_QPA_RNR_RETRY | PLDMA_QPA_MIN_RNR_TIMER |
                 PLDMA_QPA_MAX_QP_RD_ATOMIC)) &&
        (st->timers & ~PLDMA_QPT_VALID)) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if ((mask & PLDMA_QPA_MAX_QP_RD_ATOMIC) &&
        PLDMA_QPT_MAX_RD_ATOMIC(st->timers) > PLDMA_QP_MAX_RD_ATOMIC) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if ((mask & PLDMA_QPA_RQ) &&
        (st->rq_size < PLDMA_RQ_MIN_ENTRIES ||
         st->rq_size > PLDMA_RQ_MAX_ENTRIES || !is_power_of_2(st->rq_size) ||
         !QEMU_IS_ALIGNED(st->rq_base, PLDMA_RWQE_SIZE) ||
         st->rq_base + (uint64_t)st->rq_size * PLDMA_RWQE_SIZE <
         st->rq_base)) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    /* (the PD is staged in the same RESET->INIT) */
    if ((mask & PLDMA_QPA_TYPE) && st->type != PLDMA_QP_TYPE_RC &&
        st->type != PLDMA_QP_TYPE_UC && st->type != PLDMA_QP_TYPE_UD) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if ((mask & PLDMA_QPA_SRQ) &&
        ((mask & PLDMA_QPA_RQ) ||
         !pldma_srq_usable(s, st->srq - 1, st->pd, st->pd_tag))) {
        return PLDMA_QP_ST_BAD_ATTR;    /* an RQ and an SRQ, or no SRQ */
    }
    if ((mask & PLDMA_QPA_CQ) &&
        (!qp_cq_ok(s, st->send_cq, st->pd) ||
         !qp_cq_ok(s, st->recv_cq, st->pd))) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    if (mask & PLDMA_QPA_SQ) {
        if (st->sq >= s->num_channels) {
            return PLDMA_QP_ST_BAD_ATTR;
        }
        for (i = 0; i < s->num_qps; i++) {
            if (i != idx && s->net->qps[i].state != PLDMA_QPS_RESET &&
                s->net->qps[i].sq == st->sq) {
                return PLDMA_QP_ST_BUSY;
            }
        }
    }
    return PLDMA_QP_ST_OK;
}

static void qp_set_timer(uint32_t *t, uint32_t v, unsigned lo, unsigned len)
{
    *t = deposit32(*t, lo, len, extract32(v, lo, len));
}

/* Copy the attributes of @mask from the staging registers @st into @qp */
static void qp_apply_attrs(PLDMAQP *qp, const PLDMAQP *st, uint32_t mask)
{
    if (mask & PLDMA_QPA_PD) {
        qp->pd = st->pd;
        qp->pd_tag = st->pd_tag;
    }
    if (mask & PLDMA_QPA_SQ) {
        qp->sq = st->sq;
    }
    if (mask & PLDMA_QPA_RQ) {
        qp->rq_base = st->rq_base;
        qp->rq_size = st->rq_size;
        qp->rq_head = 0;
        qp->rq_tail = 0;
    }
    if (mask & PLDMA_QPA_SRQ) {
        qp->srq = st->srq;
    }
    if (mask & PLDMA_QPA_TYPE) {
        qp->type = st->type;
    }
    if (mask & PLDMA_QPA_CQ) {
        qp->send_cq = st->send_cq;
        qp->recv_cq = st->recv_cq;
    }
    if (mask & PLDMA_QPA_ACCESS_FLAGS) {
        qp->access = st->access;
    }
    if (mask & PLDMA_QPA_QKEY) {
        qp->qkey = st->qkey;
    }
    if (mask & PLDMA_QPA_AV) {
        qp->dest_ip = st->dest_ip;
        qp->dest_mac_lo = st->dest_mac_lo;
        qp->dest_mac_hi = st->dest_mac_hi;
    }
    if (mask & PLDMA_QPA_PATH_MTU) {
        qp->path_mtu = st->path_mtu;
    }
    if (mask & PLDMA_QPA_DEST_QPN) {
        qp->dest_qpn = st->dest_qpn;
    }
    if (mask & PLDMA_QPA_RQ_PSN) {
        qp->rq_psn = st->rq_psn;
    }
    if (mask & PLDMA_QPA_SQ_PSN) {
        qp->sq_psn = st->sq_psn;
    }
    if (mask & PLDMA_QPA_RETRY_CNT) {
        qp_set_timer(&qp->timers, st->timers, 0, 3);
    }
    if (mask & PLDMA_QPA_RNR_RETRY) {
        qp_set_timer(&qp->timers, st->timers, 4, 3);
    }
    if (mask & PLDMA_QPA_MIN_RNR_TIMER) {
        qp_set_timer(&qp->timers, st->timers, 8, 5);
    }
    if (mask & PLDMA_QPA_TIMEOUT) {
        qp_set_timer(&qp->timers, st->timers, 16, 5);
    }
    if (mask & PLDMA_QPA_MAX_QP_RD_ATOMIC) {
        qp_set_timer(&qp->timers, st->timers, 24, 5);
    }
}

/*
 * What the transport changes in qp_transition()'s RC sets (IBA table 91's
 * UC and UD columns).  UC: no RNR timer, no READ or atomic resources, no
 * ACK timeout or retries.  UD: no path at all; a Q_Key at INIT, which
 * every later transition may change; no access flags.
 */
static void qp_type_attrs(uint32_t type, uint32_t cur, uint32_t next,
                          uint32_t *req, uint32_t *opt)
{
    if (next == PLDMA_QPS_RESET || next == PLDMA_QPS_ERR) {
        return;
    }
    switch (type) {
    case PLDMA_QP_TYPE_UC:
        *req &= ~(PLDMA_QPA_MIN_RNR_TIMER | PLDMA_QPA_TIMEOUT |
                  PLDMA_QPA_RETRY_CNT | PLDMA_QPA_RNR_RETRY);
        *opt &= ~(PLDMA_QPA_MIN_RNR_TIMER | PLDMA_QPA_MAX_QP_RD_ATOMIC);
        break;
    case PLDMA_QP_TYPE_UD:
        *req &= PLDMA_QPA_STATE | PLDMA_QPA_PD | PLDMA_QPA_SQ |
                PLDMA_QPA_SQ_PSN;
        *opt &= PLDMA_QPA_RQ | PLDMA_QPA_CQ | PLDMA_QPA_SRQ | PLDMA_QPA_TYPE;
        if (cur == PLDMA_QPS_RESET) {
            *req |= PLDMA_QPA_QKEY;
        } else {
            *opt |= PLDMA_QPA_QKEY;
        }
        break;
    }
}

static uint32_t qp_modify(PLDMACore *s, uint32_t idx)
{
    PLDMAQP *qp = &s->net->qps[idx];
    const PLDMAQP *st = &s->net->qp_stage;
    uint32_t mask = s->net->qp_mask;
    uint32_t next = (mask & PLDMA_QPA_STATE) ? st->state : qp->state;
    uint32_t req, opt, r;

    if (next != PLDMA_QPS_RESET && next != PLDMA_QPS_INIT &&
        next != PLDMA_QPS_RTR && next != PLDMA_QPS_RTS &&
        next != PLDMA_QPS_ERR) {
        return PLDMA_QP_ST_BAD_STATE;
    }
    if (!qp_transition(qp->state, next, &req, &opt)) {
        return PLDMA_QP_ST_BAD_STATE;
    }
    /* the type is the one staged at RESET->INIT */
    qp_type_attrs(qp->state == PLDMA_QPS_RESET && (mask & PLDMA_QPA_TYPE) ?
                  st->type : qp->type, qp->state, next, &req, &opt);
    /* without STATE, a modify in the current state (RTS->RTS...) */
    req &= mask & PLDMA_QPA_STATE ? ~0U : ~PLDMA_QPA_STATE;
    if ((mask & req) != req || (mask & ~(req | opt | PLDMA_QPA_STATE))) {
        return PLDMA_QP_ST_BAD_ATTR;
    }
    r = qp_check_attrs(s, idx, mask);
    if (r != PLDMA_QP_ST_OK) {
        return r;
    }
    qp_apply_attrs(qp, st, mask);
    if (qp->type == PLDMA_QP_TYPE_UD) {
        /* a UD QP's one packet per message: up to the link's MTU */
        qp->path_mtu = ctz32(s->mtu) - 7;
    }
    if (next != qp->state || next == PLDMA_QPS_RESET) {
        qp_set_state(s, idx, next);
    }
    /* a QP that left RTS ends its SQ's message: let the channel see it */
    pldma_schedule(s);
    return PLDMA_QP_ST_OK;
}

static void qp_query(PLDMACore *s, uint32_t idx)
{
    const PLDMAQP *qp = &s->net->qps[idx];
    const PLDMANetConn *c = &s->net->conns[idx];

    s->net->qp_stage = *qp;
    if (qp->state == PLDMA_QPS_RTR || qp->state == PLDMA_QPS_RTS) {
        s->net->qp_stage.rq_psn = c->epsn;   /* as verbs: the expected PSN */
    }
}

static void qp_cmd(PLDMACore *s, uint32_t cmd)
{
    uint32_t idx = s->net->qp_sel;

    if (!s->nic) {
        s->net->qp_status = PLDMA_QP_ST_BAD_CMD;
    } else if (idx >= s->num_qps) {
        s->net->qp_status = PLDMA_QP_ST_BAD_INDEX;
    } else if (cmd == PLDMA_QP_CMD_MODIFY) {
        s->net->qp_status = qp_modify(s, idx);
    } else if (cmd == PLDMA_QP_CMD_QUERY) {
        qp_query(s, idx);
        s->net->qp_status = PLDMA_QP_ST_OK;
    } else if (cmd == PLDMA_QP_CMD_RESOLVED || cmd == PLDMA_QP_CMD_FAILED) {
        s->net->qp_status = pldma_rq_resolve(s, idx,
                                          cmd == PLDMA_QP_CMD_RESOLVED);
    } else {
        s->net->qp_status = PLDMA_QP_ST_BAD_CMD;
    }
    trace_pldma_qp_cmd(idx, cmd, s->net->qp_mask, s->net->qp_stage.state,
                       s->net->qp_status);
}

/* The staging registers that hold one 32-bit attribute each */
static const struct {
    hwaddr addr;
    size_t off;             /* in PLDMAQP */
} qp_stage_reg[] = {
    { PLDMA_QP_NEW_STATE, offsetof(PLDMAQP, state) },
    { PLDMA_QP_SQ, offsetof(PLDMAQP, sq) },
    { PLDMA_QP_PD, offsetof(PLDMAQP, pd) },
    { PLDMA_QP_PD_TAG, offsetof(PLDMAQP, pd_tag) },
    { PLDMA_QP_ACCESS, offsetof(PLDMAQP, access) },
    { PLDMA_QP_DEST_QPN, offsetof(PLDMAQP, dest_qpn) },
    { PLDMA_QP_DEST_IP, offsetof(PLDMAQP, dest_ip) },
    { PLDMA_QP_DEST_MAC_LO, offsetof(PLDMAQP, dest_mac_lo) },
    { PLDMA_QP_DEST_MAC_HI, offsetof(PLDMAQP, dest_mac_hi) },
    { PLDMA_QP_SQ_PSN, offsetof(PLDMAQP, sq_psn) },
    { PLDMA_QP_RQ_PSN, offsetof(PLDMAQP, rq_psn) },
    { PLDMA_QP_PATH_MTU, offsetof(PLDMAQP, path_mtu) },
    { PLDMA_QP_TIMERS, offsetof(PLDMAQP, timers) },
    { PLDMA_QP_RQ_SIZE, offsetof(PLDMAQP, rq_size) },
    { PLDMA_QP_SEND_CQ, offsetof(PLDMAQP, send_cq) },
    { PLDMA_QP_RECV_CQ, offsetof(PLDMAQP, recv_cq) },
    { PLDMA_QP_TYPE, offsetof(PLDMAQP, type) },
    { PLDMA_QP_QKEY, offsetof(PLDMAQP, qkey) },
};

/* The staging attribute at register @addr, or NULL */
static uint32_t *qp_stage_field(PLDMACore *s, hwaddr addr)
{
    size_t i;

    for (i = 0; i < ARRAY_SIZE(qp_stage_reg); i++) {
        if (qp_stage_reg[i].addr == addr) {
            return (uint32_t *)((uint8_t *)&s->net->qp_stage +
                                qp_stage_reg[i].off);
        }
    }
    return NULL;
}

bool pldma_qp_read(PLDMACore *s, hwaddr addr, uint64_t *val)
{
    const PLDMAQP *st = &s->net->qp_stage;
    bool sel_ok = s->nic && s->net->qp_sel < s->num_qps;
    const uint8_t *mac = s->conf ? s->conf->macaddr.a : NULL;
    uint32_t *f = qp_stage_field(s, addr);

    if (f) {
        *val = *f;
        return true;
    }
    switch (addr) {
    case PLDMA_NET_IP:
        *val = s->nic ? s->net->net_ip : 0;
        return true;
    case PLDMA_NET_MAC_LO:
        *val = mac && s->nic ? ldl_le_p(mac) : 0;
        return true;
    case PLDMA_NET_MAC_HI:
        *val = mac && s->nic ? lduw_le_p(mac + 4) : 0;
        return true;
    case PLDMA_QP_NUM:
        *val = s->nic ? s->num_qps : 0;
        return true;
    case PLDMA_QP_SEL:
        *val = s->net->qp_sel;
        return true;
    case PLDMA_QP_QPN:
        *val = sel_ok ? pldma_qp_qpn(s, s->net->qp_sel) : 0;
        return true;
    case PLDMA_QP_STATE:
        *val = sel_ok ? s->net->qps[s->net->qp_sel].state : 0;
        return true;
    case PLDMA_QP_ATTR_MASK:
        *val = s->net->qp_mask;
        return true;
    case PLDMA_QP_CMD:
        *val = 0;
        return true;
    case PLDMA_QP_STATUS:
        *val = s->net->qp_status;
        return true;
    case PLDMA_QP_RQ_BASE_LO:
        *val = (uint32_t)st->rq_base;
        return true;
    case PLDMA_QP_RQ_BASE_HI:
        *val = st->rq_base >> 32;
        return true;
    case PLDMA_QP_RQ_HEAD:
        *val = sel_ok ? s->net->qps[s->net->qp_sel].rq_head : 0;
        return true;
    case PLDMA_QP_SRQ:
        *val = st->srq - 1;     /* (0, none: PLDMA_SRQ_NONE) */
        return true;
    case PLDMA_QP_ERRORS_LO:
        *val = (uint32_t)s->net->qp_errors;
        return true;
    case PLDMA_QP_ERRORS_HI:
        *val = s->net->qp_errors >> 32;
        return true;
    default:
        return false;
    }
}

bool pldma_qp_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    PLDMAQP *st = &s->net->qp_stage;
    uint32_t *f = qp_stage_field(s, addr);

    if (f) {
        *f = val;
        return true;
    }
    switch (addr) {
    case PLDMA_NET_IP:
        if (s->nic) {
            trace_pldma_qp_net_ip(s->net->net_ip, val);
            s->net->net_ip = val;
        }
        return true;
    case PLDMA_NET_MAC_LO:
    case PLDMA_NET_MAC_HI:
    case PLDMA_QP_NUM:
    case PLDMA_QP_QPN:
    case PLDMA_QP_STATE:
    case PLDMA_QP_STATUS:
    case PLDMA_QP_RQ_HEAD:
        PLDMA_GUEST_ERR(pldma_err_qp_write_ro,
                        "write to read-only QP register 0x%" HWADDR_PRIx,
                        addr);
        return true;
    case PLDMA_QP_SEL:
        s->net->qp_sel = val;
        return true;
    case PLDMA_QP_ATTR_MASK:
        s->net->qp_mask = val;
        return true;
    case PLDMA_QP_CMD:
        qp_cmd(s, val);
        return true;
    case PLDMA_QP_RQ_BASE_LO:
        st->rq_base = deposit64(st->rq_base, 0, 32, val);
        return true;
    case PLDMA_QP_RQ_BASE_HI:
        st->rq_base = deposit64(st->rq_base, 32, 32, val);
        return true;
    case PLDMA_QP_SRQ:
        st->srq = val + 1;      /* (PLDMA_SRQ_NONE: 0) */
        return true;
    case PLDMA_QP_ERRORS_LO:
        s->net->qp_errors &= ~(uint64_t)val;
        pldma_cq_irq_sync(s);
        return true;
    case PLDMA_QP_ERRORS_HI:
        s->net->qp_errors &= ~((uint64_t)val << 32);
        pldma_cq_irq_sync(s);
        return true;
    default:
        return false;
    }
}

/* A reset: every QP to RESET (a new QPN each), the staging cleared */
void pldma_qp_reset(PLDMACore *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_QPS; i++) {
        if (i < s->num_qps && s->nic) {
            qp_set_state(s, i, PLDMA_QPS_RESET);
        }
    }
    memset(&s->net->qp_stage, 0, sizeof(s->net->qp_stage));
    s->net->qp_stage.send_cq = PLDMA_CQ_NONE;
    s->net->qp_stage.recv_cq = PLDMA_CQ_NONE;
    s->net->qp_errors = 0;
    s->net->qp_mask = 0;
    s->net->qp_sel = 0;
    s->net->qp_status = 0;
    s->net->net_ip = 0x0a000000U | s->node_id;
}

void pldma_qp_realize(PLDMACore *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_QPS; i++) {
        qp_new_gen(&s->net->qps[i]);
        s->net->qps[i].sq = PLDMA_QP_NO_SQ;
    }
}

static bool pldma_qp_pd_tag_needed(void *opaque)
{
    PLDMAQP *qp = opaque;

    return qp->pd_tag != 0;
}

/* The PD within the PASID, when it is not the first (tag 0) */
static const VMStateDescription vmstate_pldma_qp_pd_tag = {
    .name = "pldma-qp/pd-tag",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_qp_pd_tag_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(pd_tag, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_qp_type_needed(void *opaque)
{
    PLDMAQP *qp = opaque;

    return qp->type != PLDMA_QP_TYPE_RC;
}

static bool pldma_qp_qkey_needed(void *opaque)
{
    PLDMAQP *qp = opaque;

    return qp->qkey != 0;
}

/* A UD QP's Q_Key */
static const VMStateDescription vmstate_pldma_qp_qkey = {
    .name = "pldma-qp/qkey",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_qp_qkey_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(qkey, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};

/* The transport, when it is not RC */
static const VMStateDescription vmstate_pldma_qp_type = {
    .name = "pldma-qp/type",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_qp_type_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(type, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_pldma_qp = {
    .name = "pldma-qp",
    .version_id = 1,
    .minimum_version_id = 1,
    .subsections = (const VMStateDescription * const []) {
        &vmstate_pldma_qp_pd_tag,
        &vmstate_pldma_qp_type,
        &vmstate_pldma_qp_qkey,
        NULL
    },
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(state, PLDMAQP),
        VMSTATE_UINT32(gen, PLDMAQP),
        VMSTATE_UINT32(sq, PLDMAQP),
        VMSTATE_UINT32(pd, PLDMAQP),
        VMSTATE_UINT32(access, PLDMAQP),
        VMSTATE_UINT32(dest_qpn, PLDMAQP),
        VMSTATE_UINT32(dest_ip, PLDMAQP),
        VMSTATE_UINT32(dest_mac_lo, PLDMAQP),
        VMSTATE_UINT32(dest_mac_hi, PLDMAQP),
        VMSTATE_UINT32(sq_psn, PLDMAQP),
        VMSTATE_UINT32(rq_psn, PLDMAQP),
        VMSTATE_UINT32(path_mtu, PLDMAQP),
        VMSTATE_UINT32(timers, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};

/* The table is sent when a QP is in use (only a device with a link) */
static bool pldma_qps_needed(void *opaque)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_QPS; i++) {
        if (s->net->qps[i].state != PLDMA_QPS_RESET) {
            return true;
        }
    }
    return false;
}

/* Why the migrated QP @i is one the device could not have made, or NULL */
static const char *pldma_qp_check(PLDMACore *s, uint32_t i)
{
    const PLDMAQP *qp = &s->net->qps[i];
    uint32_t j;

    if (!qp_gen_ok(qp->gen)) {
        return "bad QPN generation";
    }
    if (qp->type != PLDMA_QP_TYPE_RC &&
        ((qp->type != PLDMA_QP_TYPE_UC && qp->type != PLDMA_QP_TYPE_UD) ||
         qp->state == PLDMA_QPS_RESET)) {
        return "unknown transport, or one of a QP in RESET";
    }
    if (qp->qkey && qp->type != PLDMA_QP_TYPE_UD) {
        return "a Q_Key on a QP that is not UD";
    }
    if (qp->state == PLDMA_QPS_RESET) {
        return NULL;
    }
    if (i >= s->num_qps || !s->nic) {
        return "QP beyond num-qps (or without a link) in use";
    }
    if (!qp_state_known(qp->state)) {
        return "unknown state";
    }
    /* (only a QP that went RESET->ERR has none) */
    if (qp->sq == PLDMA_QP_NO_SQ) {
        if (qp->state != PLDMA_QPS_ERR) {
            return "QP out of RESET without a send queue";
        }
    } else if (qp->sq >= s->num_channels) {
        return "send queue beyond num-channels";
    }
    for (j = 0; j < i && qp->sq != PLDMA_QP_NO_SQ; j++) {
        if (s->net->qps[j].state != PLDMA_QPS_RESET &&
            s->net->qps[j].sq == qp->sq) {
            return "send queue of two QPs";
        }
    }
    if ((qp->dest_qpn | qp->sq_psn | qp->rq_psn) & ~PLDMA_PSN_MASK ||
        qp->timers & ~PLDMA_QPT_VALID ||
        PLDMA_QPT_MAX_RD_ATOMIC(qp->timers) > PLDMA_QP_MAX_RD_ATOMIC ||
        qp->access & ~PLDMA_KEY_ACC_MASK ||
        !pldma_pasid_reg_valid(s, qp->pd) || qp->pd_tag > PLDMA_PD_TAG_MAX) {
        return "QPN, PSN, timers, access flags or PD out of range";
    }
    /* (an INIT or ERR QP may have none yet; none beyond this mtu) */
    if ((qp->state == PLDMA_QPS_RTR || qp->state == PLDMA_QPS_RTS ||
         qp->path_mtu) &&
        (qp->path_mtu < PLDMA_MTU_256 || qp->path_mtu > PLDMA_MTU_4096 ||
         PLDMA_MTU_BYTES(qp->path_mtu) > s->mtu)) {
        return "path MTU out of range";
    }
    return NULL;
}

static bool pldma_qps_post_load(void *opaque, int version_id, Error **errp)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;
    const char *why;
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_QPS; i++) {
        why = pldma_qp_check(s, i);
        if (why) {
            error_setg(errp, "pldma: migrated QP %u rejected: %s (state %u "
                       "sq %u)", i, why, n->qps[i].state, n->qps[i].sq);
            return false;
        }
    }
    return true;
}

const VMStateDescription vmstate_pldma_qps = {
    .name = "pldma-net/qps",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_qps_needed,
    .post_load_errp = pldma_qps_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(net_ip, PLDMANet),
        VMSTATE_UINT32(qp_sel, PLDMANet),
        VMSTATE_UINT32(qp_mask, PLDMANet),
        VMSTATE_UINT32(qp_status, PLDMANet),
        VMSTATE_STRUCT(qp_stage, PLDMANet, 1, vmstate_pldma_qp, PLDMAQP),
        VMSTATE_STRUCT_ARRAY(qps, PLDMANet, PLDMA_MAX_QPS, 1,
                             vmstate_pldma_qp, PLDMAQP),
        VMSTATE_END_OF_LIST()
    }
};
