/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, link migration
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The link's state in the migration stream (pldma-net/state) and the
 * checks of every value of it on load: keys, the QPs' responder
 * connections, each channel's requester state.
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "migration/vmstate.h"
#include "net-internal.h"
#include "trace.h"

/*
 * ---- migration ----
 *
 * A device with a link migrates with everything that defines its
 * connections and the messages in flight: keys, the responder
 * connections (expected PSN, MSN, the WRITE, SEND or READ
 * response stream in progress, a fault being resolved), and each
 * channel's requester state (PSNs, bytes sent and acknowledged, retry
 * counters, the retransmit or RNR timer's deadline).  Frames are not:
 * what the net layer or the socket held when the source stopped is lost,
 * and so is a frame held back by x-reorder-every.  The requesters resume
 * from the last acknowledged PSN on the destination (a WRITE or SEND
 * from its acknowledged bytes, a READ from the responses it has), so the
 * peer sees retransmissions, which IBA allows, and never a gap it would
 * take for new data.  Timers are deadlines on QEMU_CLOCK_VIRTUAL, which
 * migrates: they fire on the destination where they would have fired on
 * the source.  The stream comes from outside: every value is checked.
 */

/* Why the requester state of @ch (a remote op past FETCH) is bad, or NULL */
const char *pldma_net_ch_check(PLDMACore *s, PLDMAChannel *ch)
{
    const PLDMANetReq *r = pldma_ch_req(ch);

    if (!s->nic) {
        return "remote operation without a link";
    }
    if (!r->qp) {
        /* decode refused it: nothing was sent, it completes in error */
        return ch->phase == PLDMA_PHASE_XFER ?
               "remote transfer without a QP" : NULL;
    }
    if (r->qp > s->num_qps) {
        return "remote operation's QP out of range";
    }
    if (r->mtu < 256 || r->mtu > s->mtu || !is_power_of_2(r->mtu)) {
        /* (beyond this device's mtu: a frame it could not send) */
        return "remote operation's MTU out of range";
    }
    if ((ch->len > s->max_transfer &&
         !(pldma_op_flags(ch->op) & PLDMA_OPF_FLUSH)) ||
        r->nsegs != (pldma_op_flags(ch->op) & PLDMA_OPF_NO_RESULT ? 1 :
                     pldma_net_nsegs(r->mtu, ch->len))) {
        return "remote operation's length or segment count";
    }
    if (r->psn & ~PLDMA_PSN_MASK || r->end_psn & ~PLDMA_PSN_MASK ||
        r->end_psn != ((r->psn + r->nsegs) & PLDMA_PSN_MASK) ||
        r->qp_gen > 0xffff) {
        return "remote operation's PSN out of range";
    }
    if (r->acked > ch->len || r->sent_hw > (uint64_t)ch->len + 1 ||
        r->rd_end > ch->len ||
        (r->acked % r->mtu && r->acked != ch->len) ||
        (ch->done % r->mtu && ch->done != ch->len)) {
        return "remote operation's sent or acknowledged bytes";
    }
    if (r->rto_us == 0 || r->rto_us > 10 * 1000 * 1000 ||
        r->rnr_us > pldma_hdr_rnr_timer_10us[0] * 10 ||
        r->retries > r->retry_count + 1 || r->retry_count > 7 ||
        (r->rnr_retry != UINT32_MAX && r->rnr_retry > 7)) {
        return "remote operation's timers or retry counters";
    }
    if (pldma_op_atomic(ch->op) ? ch->len != PLDMA_ATOMIC_LEN ||
                                  (r->at_have && !r->sent_hw)
                                : r->at_have) {
        return "atomic's length or response";
    }
    if (pldma_op_flags(ch->op) & PLDMA_OPF_FLUSH
        ? r->flush & ~PLDMA_FLUSH_VALID ||
          !(r->flush & (PLDMA_FLUSH_GLOBAL | PLDMA_FLUSH_PERSISTENT))
        : r->flush) {
        return "FLUSH's placement type or selectivity";
    }
    /* (the QP's own check, pldma_qp_check(), ran before: its type) */
    if (s->net->qps[r->qp - 1].type == PLDMA_QP_TYPE_UD
        ? !(pldma_op_flags(ch->op) & PLDMA_OPF_WIRE_SEND) ||
          ch->len > r->mtu || (r->ud_dqpn & ~PLDMA_PSN_MASK) ||
          (r->ud_dmac[0] & 1) || r->ud_dip == 0 || r->ud_dip == UINT32_MAX
        : r->ud_dip || r->ud_qkey || r->ud_dqpn) {
        return "UD datagram's opcode, length or address vector";
    }
    return NULL;
}

static bool pldma_net_ch_active(const PLDMAChannel *ch)
{
    return ch->state != PLDMA_STATE_DISABLED &&
           ch->phase != PLDMA_PHASE_FETCH && pldma_op_remote(ch->op);
}

/* Why responder connection @i is bad, or NULL */
/* Why connection @c's receive WQE or UC state is not its QP @qp's, or NULL */
static const char *pldma_net_conn_recv_check(const PLDMANetConn *c,
                                             const PLDMAQP *qp)
{
    if (c->rwqe_nsge > PLDMA_RWQE_MAX_SGE) {
        return "receive WQE with too many scatter entries";
    }
    if (c->rwqe_held && !qp->srq) {
        return "a WQE taken from an SRQ by a QP without one";
    }
    if (qp->type == PLDMA_QP_TYPE_UC &&
        (c->uc_drop ? c->msg_valid || c->rmsg_valid || c->imm_wqe :
         c->park || c->rd_active || c->rdq_n)) {
        return "UC connection state";
    }
    /* (a datagram is received whole within one frame's receive) */
    if (qp->type == PLDMA_QP_TYPE_UD &&
        (c->msg_valid || c->rmsg_valid || c->imm_wqe || c->park ||
         c->rd_active || c->rdq_n)) {
        return "UD connection state";
    }
    if (qp->type != PLDMA_QP_TYPE_UC && c->uc_drop) {
        return "UC state on an RC connection";
    }
    return NULL;
}

static const char *pldma_net_conn_check(PLDMACore *s, uint32_t i)
{
    const PLDMANetConn *c = &s->net->conns[i];
    const PLDMAQP *qp = &s->net->qps[i];
    uint32_t mtu, j;
    const char *why;
    uint64_t total = 0;

    if (qp->state == PLDMA_QPS_RTR || qp->state == PLDMA_QPS_RTS) {
        if (qp->path_mtu < PLDMA_MTU_256 || qp->path_mtu > PLDMA_MTU_4096) {
            return "connection of a QP without a path MTU";
        }
    } else if (c->epsn || c->msn || c->rd_active || c->msg_valid ||
               c->rmsg_valid || c->imm_wqe || c->rdq_n || c->fault ||
               c->rwqe_held || c->uc_drop) {
        /* (pldma_resp_qp_clear() zeroes it when the QP leaves RTR/RTS) */
        return "connection of a QP that is not connected";
    }
    /* (a connection of a QP that is not connected is empty: any MTU) */
    mtu = pldma_resp_mtu(s, c);
    if ((c->epsn | c->fault_psn | c->msg_psn | c->rd_psn | c->rd_first_psn |
         c->rmsg_psn | c->msn) & ~PLDMA_PSN_MASK) {
        return "PSN or MSN beyond 24 bits";
    }
    if (c->ato_next >= PLDMA_NET_RD_ORIG ||
        c->ato_valid >> PLDMA_NET_RD_ORIG) {
        return "atomic results beyond the resources";
    }
    if (c->fault_key >= PLDMA_NUM_KEYS || (c->stalled && !c->fault) ||
        (c->fault_recv && !c->fault) || (c->rd_hold && !c->fault)) {
        return "fault state";
    }
    if (c->fault && c->stalled &&
        (!s->ops->stall_is_pending || !s->ops->stall_is_pending(s, c->stag))) {
        return "stalled on a transaction the SMMU does not hold";
    }
    if (c->msg_valid && c->msg_nsegs != pldma_net_nsegs(mtu, c->msg_len)) {
        return "WRITE message's length or segment count";
    }
    if (c->rd_active && (c->rd_off > c->rd_len ||
                         c->rd_len > s->max_transfer)) {
        return "READ response stream beyond its request";
    }
    why = pldma_net_conn_recv_check(c, qp);
    if (why) {
        return why;
    }
    if (c->rdo_next >= PLDMA_NET_RD_ORIG) {
        return "READ resources";
    }
    /* READs waiting behind the one answered: fewer than 16 */
    if (c->rdq_head >= PLDMA_NET_RD_ORIG || c->rdq_n >= PLDMA_NET_RD_ORIG ||
        (c->rdq_n && !c->rd_active)) {
        return "READs waiting";
    }
    for (j = 0; j < c->rdq_n; j++) {
        uint32_t k = (c->rdq_head + j) % PLDMA_NET_RD_ORIG;

        if (c->rdq_psn[k] & ~PLDMA_PSN_MASK ||
            c->rdq_len[k] > s->max_transfer) {
            return "READs waiting";
        }
    }
    for (j = 0; j < PLDMA_NET_RD_ORIG; j++) {
        if (c->rdo_psn[j] & ~PLDMA_PSN_MASK ||
            c->rdo_len[j] > s->max_transfer ||
            (c->rdo_len[j] && c->rdo_zero & BIT(j))) {
            return "READ resources";
        }
    }
    for (j = 0; j < c->rwqe_nsge; j++) {
        total += c->rwqe_len[j];
    }
    if ((c->rmsg_valid || c->imm_wqe || c->rwqe_held) &&
        (total != c->rwqe_total || c->rmsg_off > c->rwqe_total)) {
        return "receive WQE's length";
    }
    return NULL;
}

/* A deadline no later than @max_ns from now (a stream cannot park us) */
static int64_t pldma_net_deadline(int64_t deadline, int64_t max_ns)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    return deadline > now + max_ns ? now + max_ns : deadline;
}

/*
 * The migrated keys: valid ones, or refused (-EINVAL); a pending fault's
 * bound rebased on this clock, the earliest in @next
 */
static int post_load_keys(PLDMACore *s, int64_t fault_ns, int64_t *next)
{
    uint32_t i;

    for (i = 0; i < PLDMA_NUM_KEYS; i++) {
        PLDMAKey *k = &s->net->keys[i];

        if (k->gen > 0xffffff || k->access & ~PLDMA_KEY_ACC_MASK ||
            k->pd_tag > PLDMA_PD_TAG_MAX ||
            (k->valid && (k->len == 0 || k->va + k->len < k->va ||
                          !pldma_pasid_reg_valid(s, k->pasid_reg)))) {
            error_report("pldma: migrated key %u rejected (gen 0x%x "
                         "va 0x%" PRIx64 " len 0x%" PRIx64 ")", i, k->gen,
                         k->va, k->len);
            return -EINVAL;
        }
        if (k->fault) {
            k->fault_deadline = pldma_net_deadline(k->fault_deadline,
                                                   fault_ns);
            *next = MIN(*next, k->fault_deadline);
        }
    }
    return 0;
}

/* The migrated responder connections, as post_load_keys() */
static int post_load_conns(PLDMACore *s, int64_t fault_ns, int64_t *next)
{
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_QPS; i++) {
        PLDMANetConn *c = &s->net->conns[i];
        const char *why = pldma_net_conn_check(s, i);

        if (why) {
            error_report("pldma: migrated connection of QP %u rejected: %s "
                         "(epsn 0x%x)", i, why, c->epsn);
            return -EINVAL;
        }
        if (c->fault && !c->stalled && c->fault_recv) {
            c->fault_deadline = pldma_net_deadline(c->fault_deadline,
                                                   fault_ns);
            *next = MIN(*next, c->fault_deadline);
        }
    }
    return 0;
}

/*
 * The requester state of migrated channel @ch: checked, its timer rebased,
 * and a message in flight resumed from its last acknowledged PSN
 */
static int post_load_channel(PLDMACore *s, PLDMAChannel *ch)
{
    PLDMANetReq *r = pldma_ch_req(ch);
    const char *why;

    if (!pldma_net_ch_active(ch) || ch->idx >= s->num_channels) {
        /* (a local op or none: no requester state to keep) */
        memset(r, 0, sizeof(*r));
        timer_del(pldma_ch_timer(ch));
        return 0;
    }
    why = pldma_net_ch_check(s, ch);
    if (why) {
        error_report("pldma: migrated channel %u's remote operation "
                     "rejected: %s (qp %u psn 0x%x)", ch->idx, why, r->qp,
                     r->psn);
        return -EINVAL;
    }
    r->txq = false;
    if (timer_pending(pldma_ch_timer(ch))) {
        timer_mod(pldma_ch_timer(ch),
                  pldma_net_deadline(timer_expire_time_ns(pldma_ch_timer(ch)),
                                     (int64_t)(r->rnr ? r->rnr_us
                                                      : r->rto_us) *
                                     SCALE_US));
    }
    if (ch->state == PLDMA_STATE_RUNNING &&
        ch->phase == PLDMA_PHASE_XFER && !r->rnr && r->qp) {
        /*
         * What the source sent and the peer has not acknowledged may be
         * lost: go on from the last acknowledged PSN, as after a
         * retransmit timeout, but without counting a try.  An RNR wait is
         * the peer's to end: its timer or a resume.
         */
        trace_pldma_net_migrated(ch->idx, r->qp, r->psn, r->acked, ch->done);
        if (pldma_op_sends(ch->op)) {
            ch->done = MIN(r->acked, ch->len);
        }
        ch->done = MIN(ch->done, ch->len);
        r->wait = false;
    }
    return 0;
}

static int pldma_net_post_load(void *opaque, int version_id)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;
    int64_t fault_ns = (int64_t)s->resp_fault_ms * SCALE_MS;
    int64_t next = INT64_MAX;
    uint32_t i;

    if (!s->nic) {
        error_report("pldma: migrated link state for a device without one");
        return -EINVAL;
    }
    if (post_load_keys(s, fault_ns, &next) ||
        post_load_conns(s, fault_ns, &next)) {
        return -EINVAL;
    }
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        if (post_load_channel(s, &s->ch[i])) {
            return -EINVAL;
        }
    }
    /* frames held back or waiting in the net layer are gone: resent */
    g_free(s->net->held);
    s->net->held = NULL;
    s->net->held_len = 0;
    s->net->tx_blocked = false;
    s->net->in_rx = false;
    if (fault_ns && next != INT64_MAX) {
        timer_mod_ns(s->net->fault_timer, next);
    } else {
        timer_del(s->net->fault_timer);
    }
    return 0;
}

static const VMStateDescription vmstate_pldma_key = {
    .name = "pldma-key",
    .version_id = 2,
    .minimum_version_id = 2,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(gen, PLDMAKey),
        VMSTATE_BOOL(valid, PLDMAKey),
        VMSTATE_UINT32(pasid_reg, PLDMAKey),
        VMSTATE_UINT32(pd_tag, PLDMAKey),
        VMSTATE_UINT64(va, PLDMAKey),
        VMSTATE_UINT64(len, PLDMAKey),
        VMSTATE_UINT32(access, PLDMAKey),
        VMSTATE_BOOL(fault, PLDMAKey),
        VMSTATE_INT64(fault_deadline, PLDMAKey),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_net_rdo_zero_needed(void *opaque)
{
    PLDMANetConn *c = opaque;

    return c->rdo_zero != 0;
}

/* The zero-length READs among a QP's READ resources, when there are any */
static const VMStateDescription vmstate_pldma_conn_rdo_zero = {
    .name = "pldma-conn/rdo-zero",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_rdo_zero_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(rdo_zero, PLDMANetConn),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_net_rdq_needed(void *opaque)
{
    PLDMANetConn *c = opaque;

    return c->rdq_n != 0;
}

/* The READ requests waiting behind the one answered, when there are any */
static const VMStateDescription vmstate_pldma_conn_rdq = {
    .name = "pldma-conn/rd-queue",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_rdq_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(rdq_head, PLDMANetConn),
        VMSTATE_UINT8(rdq_n, PLDMANetConn),
        VMSTATE_UINT16(rdq_fresh, PLDMANetConn),
        VMSTATE_UINT32_ARRAY(rdq_psn, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT64_ARRAY(rdq_va, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT32_ARRAY(rdq_len, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT32_ARRAY(rdq_rkey, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_net_rd_fresh_needed(void *opaque)
{
    PLDMANetConn *c = opaque;

    return c->rd_active && c->rd_fresh;
}

static bool pldma_net_ato_needed(void *opaque)
{
    PLDMANetConn *c = opaque;

    return c->ato_valid != 0;
}

/* The results of the last atomics executed, for their duplicates */
static const VMStateDescription vmstate_pldma_conn_ato = {
    .name = "pldma-conn/atomics",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_ato_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(ato_valid, PLDMANetConn),
        VMSTATE_UINT8(ato_next, PLDMANetConn),
        VMSTATE_UINT32_ARRAY(ato_psn, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT64_ARRAY(ato_orig, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_END_OF_LIST()
    }
};

/* Whether the READ being answered counts in the MSN (no duplicate) */
static const VMStateDescription vmstate_pldma_conn_rd_fresh = {
    .name = "pldma-conn/rd-fresh",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_rd_fresh_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(rd_fresh, PLDMANetConn),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_net_rwqe_held_needed(void *opaque)
{
    PLDMANetConn *c = opaque;

    return c->rwqe_held;
}

/* The receive WQE above is one the QP took from its SRQ */
static const VMStateDescription vmstate_pldma_conn_rwqe_held = {
    .name = "pldma-conn/srq-wqe",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_rwqe_held_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(rwqe_held, PLDMANetConn),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_net_uc_drop_needed(void *opaque)
{
    PLDMANetConn *c = opaque;

    return c->uc_drop;
}

/* UC: the rest of a dropped message is dropped too */
static const VMStateDescription vmstate_pldma_conn_uc_drop = {
    .name = "pldma-conn/uc-drop",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_uc_drop_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(uc_drop, PLDMANetConn),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_pldma_conn = {
    .name = "pldma-conn",
    .version_id = 2,
    .minimum_version_id = 2,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(epsn, PLDMANetConn),
        VMSTATE_UINT32(msn, PLDMANetConn),
        VMSTATE_BOOL(nak_seq, PLDMANetConn),
        VMSTATE_BOOL(fault, PLDMANetConn),
        VMSTATE_BOOL(stalled, PLDMANetConn),
        VMSTATE_UINT16(stag, PLDMANetConn),
        VMSTATE_UINT8(fault_key, PLDMANetConn),
        VMSTATE_UINT32(fault_psn, PLDMANetConn),
        VMSTATE_INT64(fault_deadline, PLDMANetConn),
        VMSTATE_BOOL(fault_recv, PLDMANetConn),
        VMSTATE_BOOL(rd_hold, PLDMANetConn),
        VMSTATE_BOOL(msg_valid, PLDMANetConn),
        VMSTATE_UINT32(msg_psn, PLDMANetConn),
        VMSTATE_UINT32(msg_nsegs, PLDMANetConn),
        VMSTATE_UINT64(msg_va, PLDMANetConn),
        VMSTATE_UINT32(msg_len, PLDMANetConn),
        VMSTATE_UINT32(msg_rkey, PLDMANetConn),
        VMSTATE_BOOL(rd_active, PLDMANetConn),
        VMSTATE_UINT32(rd_psn, PLDMANetConn),
        VMSTATE_UINT32(rd_first_psn, PLDMANetConn),
        VMSTATE_UINT64(rd_va, PLDMANetConn),
        VMSTATE_UINT32(rd_len, PLDMANetConn),
        VMSTATE_UINT32(rd_off, PLDMANetConn),
        VMSTATE_UINT32(rd_rkey, PLDMANetConn),
        VMSTATE_BOOL(rmsg_valid, PLDMANetConn),
        VMSTATE_BOOL(imm_wqe, PLDMANetConn),
        VMSTATE_UINT32(rmsg_psn, PLDMANetConn),
        VMSTATE_UINT32(rmsg_off, PLDMANetConn),
        VMSTATE_UINT64(rwqe_id, PLDMANetConn),
        VMSTATE_UINT64(rwqe_total, PLDMANetConn),
        VMSTATE_UINT32(rwqe_nsge, PLDMANetConn),
        VMSTATE_UINT64_ARRAY(rwqe_addr, PLDMANetConn, PLDMA_RWQE_MAX_SGE),
        VMSTATE_UINT32_ARRAY(rwqe_len, PLDMANetConn, PLDMA_RWQE_MAX_SGE),
        VMSTATE_BOOL(rq_rnr, PLDMANetConn),
        VMSTATE_UINT32_ARRAY(rdo_psn, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT64_ARRAY(rdo_va, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT32_ARRAY(rdo_len, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT32_ARRAY(rdo_rkey, PLDMANetConn, PLDMA_NET_RD_ORIG),
        VMSTATE_UINT8(rdo_next, PLDMANetConn),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_pldma_conn_rdo_zero,
        &vmstate_pldma_conn_rdq,
        &vmstate_pldma_conn_rd_fresh,
        &vmstate_pldma_conn_ato,
        &vmstate_pldma_conn_rwqe_held,
        &vmstate_pldma_conn_uc_drop,
        NULL
    }
};

static bool pldma_net_req_atomic_needed(void *opaque)
{
    PLDMANetReq *r = opaque;

    return r->at_cmp_add || r->at_swap || r->at_have;
}

/* An atomic's operands, and the value its response returned */
static const VMStateDescription vmstate_pldma_req_atomic = {
    .name = "pldma-net-req/atomic",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_req_atomic_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(at_cmp_add, PLDMANetReq),
        VMSTATE_UINT64(at_swap, PLDMANetReq),
        VMSTATE_BOOL(at_have, PLDMANetReq),
        VMSTATE_UINT64(at_orig, PLDMANetReq),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_net_req_flush_needed(void *opaque)
{
    PLDMANetReq *r = opaque;

    return r->flush != 0;
}

/* A FLUSH's placement type and selectivity (its FETH) */
static const VMStateDescription vmstate_pldma_req_flush = {
    .name = "pldma-net-req/flush",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_req_flush_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(flush, PLDMANetReq),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_net_req_ud_needed(void *opaque)
{
    PLDMANetReq *r = opaque;

    return r->ud_dip != 0;
}

/* A UD datagram's address vector */
static const VMStateDescription vmstate_pldma_req_ud = {
    .name = "pldma-net-req/ud",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_net_req_ud_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8_ARRAY(ud_dmac, PLDMANetReq, 6),
        VMSTATE_UINT32(ud_dip, PLDMANetReq),
        VMSTATE_UINT32(ud_qkey, PLDMANetReq),
        VMSTATE_UINT32(ud_dqpn, PLDMANetReq),
        VMSTATE_END_OF_LIST()
    }
};

/* A channel's requester state (PLDMANet.req) and its timer */
static const VMStateDescription vmstate_pldma_req = {
    .name = "pldma-net-req",
    .version_id = 2,
    .minimum_version_id = 2,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(qp, PLDMANetReq),
        VMSTATE_UINT32(psn, PLDMANetReq),
        VMSTATE_UINT32(qp_gen, PLDMANetReq),
        VMSTATE_UINT32(nsegs, PLDMANetReq),
        VMSTATE_UINT32(end_psn, PLDMANetReq),
        VMSTATE_UINT32(rkey, PLDMANetReq),
        VMSTATE_UINT64(rva, PLDMANetReq),
        VMSTATE_UINT64(acked, PLDMANetReq),
        VMSTATE_UINT64(sent_hw, PLDMANetReq),
        VMSTATE_UINT64(rd_end, PLDMANetReq),
        VMSTATE_UINT32(retries, PLDMANetReq),
        VMSTATE_UINT32(rnr_retries, PLDMANetReq),
        VMSTATE_BOOL(wait, PLDMANetReq),
        VMSTATE_BOOL(rnr, PLDMANetReq),
        VMSTATE_BOOL(gap, PLDMANetReq),
        VMSTATE_UINT32(rnr_us, PLDMANetReq),
        VMSTATE_UINT32(mtu, PLDMANetReq),
        VMSTATE_UINT32(rto_us, PLDMANetReq),
        VMSTATE_UINT32(retry_count, PLDMANetReq),
        VMSTATE_UINT32(rnr_retry, PLDMANetReq),
        VMSTATE_BOOL(ok, PLDMANetReq),
        VMSTATE_UINT32(imm, PLDMANetReq),
        VMSTATE_BOOL(se, PLDMANetReq),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_pldma_req_atomic,
        &vmstate_pldma_req_ud,
        &vmstate_pldma_req_flush,
        NULL
    }
};

static bool pldma_net_needed(void *opaque)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;

    return s->nic != NULL;
}

/* After pldma-net/qps and pldma-net/cqs, whose state it checks against */
static const VMStateDescription vmstate_pldma_net = {
    .name = "pldma-net/state",
    .version_id = 2,
    .minimum_version_id = 2,
    .needed = pldma_net_needed,
    .post_load = pldma_net_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_ARRAY(req, PLDMANet, PLDMA_MAX_CHANNELS, 1,
                             vmstate_pldma_req, PLDMANetReq),
        VMSTATE_TIMER_PTR_ARRAY(req_timer, PLDMANet, PLDMA_MAX_CHANNELS),
        VMSTATE_UINT32(net_ip, PLDMANet),
        VMSTATE_UINT32(key_sel, PLDMANet),
        VMSTATE_UINT32(key_status, PLDMANet),
        VMSTATE_STRUCT(key_stage, PLDMANet, 1, vmstate_pldma_key, PLDMAKey),
        VMSTATE_STRUCT_ARRAY(keys, PLDMANet, PLDMA_NUM_KEYS, 1,
                             vmstate_pldma_key, PLDMAKey),
        VMSTATE_STRUCT_VARRAY_POINTER_KNOWN(conns, PLDMANet, PLDMA_MAX_QPS,
                                            1, vmstate_pldma_conn,
                                            PLDMANetConn),
        VMSTATE_UINT32_ARRAY(net_cnt, PLDMANet, PLDMA_NCNT_NUM),
        VMSTATE_UINT32(tx_seq, PLDMANet),
        VMSTATE_UINT64(x_rng, PLDMANet),
        VMSTATE_END_OF_LIST()
    }
};

/*
 * The link's state (PLDMACore.net), the last subsection of the engine's:
 * its own subsections are the QP table, the CQs, the Ethernet function
 * and, last because it checks its state against theirs, the rest
 */
static const VMStateDescription vmstate_pldma_net_state = {
    .name = "pldma-net",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_pldma_qps,
        &vmstate_pldma_cqs,
        &vmstate_pldma_srqs,
        &vmstate_pldma_eth,
        &vmstate_pldma_net,
        NULL
    }
};

const VMStateDescription vmstate_pldma_link = {
    .name = "pldma-core/link",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_POINTER(net, PLDMACore, vmstate_pldma_net_state,
                               PLDMANet),
        VMSTATE_END_OF_LIST()
    }
};
