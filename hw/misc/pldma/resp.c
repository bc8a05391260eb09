/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, RDMA responder
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The responder of a QP's RC requests, SEND, RDMA WRITE (with or without
 * immediate), RDMA READ and atomics, as a stage machine (pldma_resp_rx()):
 * the expected PSN, duplicates answered again, the opcode sequence, the
 * key checked (index, generation, access, range, PD) before a byte is
 * touched, the resources (a receive WQE from rq.c, a READ resource), the
 * responder's DMA, ACKs and NAKs with the AETH MSN; then READ response
 * streams from the bottom half, each QP's READs in order.  What happens
 * when the responder's DMA faults (RNR NAK, parking, resolution) is
 * resp-fault.c's.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "net-internal.h"
#include "trace.h"

static PLDMAQP *conn_qp(PLDMACore *s, const PLDMANetConn *c)
{
    return &s->net->qps[pldma_resp_qpi(s, c)];
}

/* Payload bytes per segment of a connection: its QP's path MTU */
uint32_t pldma_resp_mtu(PLDMACore *s, const PLDMANetConn *c)
{
    return PLDMA_MTU_BYTES(conn_qp(s, c)->path_mtu);
}

/* The RNR timer code the responder sends: its QP's minimum RNR timer */
uint32_t pldma_resp_rnr_timer(PLDMACore *s, const PLDMANetConn *c)
{
    return PLDMA_QPT_MIN_RNR_TIMER(conn_qp(s, c)->timers);
}

/* Fill in where an answer of connection @c goes: its QP's peer */
static void conn_dest(PLDMACore *s, const PLDMANetConn *c, PLDMAPkt *p)
{
    p->qp = pldma_resp_qpi(s, c) + 1;
    p->qpn = conn_qp(s, c)->dest_qpn;
}

/*
 * An ACK or NAK of connection @c.  The AETH MSN is the count of messages
 * the responder completed (IBA C9-147/148).
 */
void pldma_resp_answer(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                      uint8_t syndrome)
{
    PLDMAPkt p = {
        .opcode = OP_ACK, .psn = psn & PLDMA_PSN_MASK,
        .syndrome = syndrome, .msn = c->msn,
    };

    if (conn_qp(s, c)->type != PLDMA_QP_TYPE_RC) {
        return;                 /* a UC or UD responder answers nothing */
    }
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
    pldma_hdr_tx(s, &p);
}

/*
 * A NAK that ends a request (remote access, invalid request, remote
 * operational error): fatal to the connection, as IBA
 * 9.9.3.1.2-3 has it for these classes of responder error and as Linux
 * rxe's responder does (do_class_ac_error(), then rxe_qp_error()): the
 * NAK is sent once and the responder's QP goes to ERR, where it takes
 * no further frame.  So a peer gets one answer per connection for a bad
 * key, never an oracle to sweep, and nothing is half-refused.  The
 * requester's QP goes to ERR on receiving it (pldma_comp_rx_ack()).
 */
void pldma_resp_nak(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                   uint8_t syndrome)
{
    if (pldma_resp_parked(c)) {
        pldma_resp_park_drop(s, c);      /* nothing held is applied now */
    }
    pldma_resp_answer(s, c, psn, syndrome);
    trace_pldma_net_resp_fatal(pldma_resp_qpi(s, c), psn & PLDMA_PSN_MASK,
                               syndrome);
    pldma_qp_to_err(s, pldma_resp_qpi(s, c));
}

/*
 * A request ahead of the expected PSN: counted, and one sequence NAK
 * naming the expected PSN until a NAK or the expected packet resets
 * nak_seq
 */
void pldma_resp_seq_nak(PLDMACore *s, PLDMANetConn *c)
{
    pldma_net_cnt(s, PLDMA_NCNT_OOO);
    if (!c->nak_seq) {
        c->nak_seq = true;
        pldma_resp_answer(s, c, c->epsn, AETH_NAK_SEQ);
    }
}

/*
 * Check an access of connection @c to [va, va + len) with @rkey; 0 or a
 * NAK syndrome.  The key must be of the QP's PD (PASID and PD tag), and
 * the QP's access flags must allow the access too (but a FLUSH).
 */
static uint8_t pldma_resp_check_key(PLDMACore *s, PLDMANetConn *c,
                                   uint32_t rkey, uint64_t va,
                                   uint64_t len, uint32_t access)
{
    uint32_t idx = PLDMA_RKEY_INDEX(rkey);
    PLDMAQP *qp = conn_qp(s, c);
    PLDMAKey *k;

    if (idx >= PLDMA_NUM_KEYS) {
        return AETH_NAK_ACCESS;
    }
    k = &s->net->keys[idx];
    if (!k->valid || (k->gen & 0xffffff) != PLDMA_RKEY_GEN(rkey) ||
        !(k->access & access) || va < k->va || len > k->len ||
        va - k->va > k->len - len) {
        return AETH_NAK_ACCESS;
    }
    /* (a QP's access flags have no FLUSH right: the key's decides) */
    if (k->pasid_reg != qp->pd || k->pd_tag != qp->pd_tag ||
        (access != PLDMA_KEY_ACC_FLUSH && !(qp->access & access))) {
        return AETH_NAK_ACCESS;
    }
    return 0;
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

static bool rd_dup_ok(PLDMACore *s, const PLDMANetConn *c,
                                const PLDMAPkt *p)
{
    uint32_t mtu = pldma_resp_mtu(s, c), i, k;

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
     * (pldma_resp_bh()).
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
    uint32_t mtu = pldma_resp_mtu(s, c);
    int32_t at = pldma_net_psn_diff(c->rd_psn, p->psn);

    return c->rd_active && p->rkey == c->rd_rkey && at >= 0 &&
           at < (int32_t)pldma_net_nsegs(mtu, p->dmalen) &&
           pldma_net_psn_diff(p->psn, c->rd_first_psn) >= 0;
}

/*
 * The responder's stages, as Linux rxe cuts its responder (rxe_resp.c,
 * enum resp_states): every request packet of a QP (SEND, RDMA WRITE, RDMA
 * READ, atomic) runs from RESPST_CHK_PSN to RESPST_DONE, each stage doing
 * one check or one step and naming the next.  In order: the PSN (a
 * duplicate, ahead of the expected one, behind a fault), the opcode
 * sequence (IBA 9.8.3.1), the lengths, the R_Key, the resources (the
 * message's context, a receive WQE, a READ resource), then execute (the
 * DMA), complete (MSN, receive CQE) and acknowledge.  Unlike rxe's, the
 * key is checked before a receive WQE is taken, so a refused RDMA WRITE
 * with immediate takes none.  docs/specs/pldma.rst, "Remote DMA", has
 * the rules.
 */
typedef enum PLDMARespState {
    RESPST_CHK_PSN,
    RESPST_CHK_OP_SEQ,
    RESPST_CHK_LENGTH,
    RESPST_CHK_RKEY,
    RESPST_CHK_RESOURCE,
    RESPST_EXECUTE,
    RESPST_COMPLETE,
    RESPST_ACKNOWLEDGE,
    RESPST_DUPLICATE,   /* before the expected PSN: answered again */
    RESPST_BUSY,        /* behind a fault being resolved: held, or RNR */
    RESPST_ERR_RNR,     /* the access faulted: RNR NAK of this PSN */
    RESPST_ERR_SEQ,     /* ahead of the expected PSN: a sequence NAK */
    RESPST_ERR_FATAL,   /* NAK r->syndrome, which ends the connection */
    RESPST_DROP,        /* dropped and counted: nothing moves */
    RESPST_DONE,
    RESPST_NUM,
} PLDMARespState;

/* The opcode families, each with its own steps in some stages */
typedef enum PLDMARespKind {
    RESP_WRITE, RESP_SEND, RESP_READ, RESP_ATOMIC,
} PLDMARespKind;

/* One request packet on its way through the stages */
typedef struct PLDMAResp {
    PLDMACore *s;
    PLDMANetConn *c;
    const PLDMAPkt *p;
    uint32_t qp;            /* the QP's index */
    bool uc;                /* of a UC or UD QP: nothing answers or waits */
    bool ud;                /* of a UD QP */
    bool aw;                /* an Atomic Write (kind RESP_ATOMIC) */
    bool flush;             /* a FLUSH (kind RESP_ATOMIC) */
    PLDMARespKind kind;
    bool first, last;       /* of its message */
    uint32_t mtu;
    int32_t d;              /* its PSN less the expected PSN */
    uint64_t off;           /* its payload's offset in the message */
    uint8_t syndrome;       /* RESPST_ERR_FATAL's NAK */
    const char *why;        /* RESPST_ERR_FATAL's, RESPST_DROP's reason */
    uint64_t orig;          /* an atomic: the value it found */
} PLDMAResp;

typedef PLDMARespState PLDMARespStage(PLDMAResp *r);

static PLDMARespState resp_fatal(PLDMAResp *r, uint8_t syndrome,
                                 const char *why)
{
    r->syndrome = syndrome;
    r->why = why;
    return RESPST_ERR_FATAL;
}

static PLDMARespState resp_drop(PLDMAResp *r, const char *why)
{
    r->why = why;
    return RESPST_DROP;
}

/*
 * UC: the message in progress is dropped (counted), and what comes of it
 * until the next First or Only.  A receive WQE it had started stays for
 * the next message: an RQ's at its head (consumed only at completion), an
 * SRQ's held by the QP.
 */
static void uc_abort(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;

    if (r->ud) {
        /* (a datagram is a message of its own: nothing more to drop) */
        pldma_net_cnt(r->s, PLDMA_NCNT_UD_DROPPED);
        trace_pldma_resp_ud_drop(r->qp, r->p->src_qpn, r->why ? r->why : "");
        c->rmsg_valid = false;
        return;
    }
    if (!c->uc_drop) {
        pldma_net_cnt(r->s, PLDMA_NCNT_UC_DROPPED);
        trace_pldma_resp_uc_drop(r->qp, r->p->psn);
    }
    c->uc_drop = true;
    c->msg_valid = false;
    c->rmsg_valid = false;
    c->imm_wqe = false;
}

/*
 * The PSN of a UC request: no duplicates, no NAKs (IBA 9.7.?: a UC
 * responder resynchronises on a First or Only).  A First or Only starts a
 * message at the PSN it has, dropping one in progress; any other packet
 * must be the expected one of the message in progress, else it is
 * dropped with the rest of its message.  Behind a fault nothing is
 * taken: the message that faulted is dropped, and so is what comes until
 * the fault is resolved.
 */
static PLDMARespState resp_uc_chk_psn(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;

    if (c->fault) {
        uc_abort(r);
        return resp_drop(r, "UC: behind a fault");
    }
    if (r->first) {
        /* (a WRITE that ended stays msg_valid: not in progress) */
        if (c->rmsg_valid || c->imm_wqe || pldma_resp_in_write(c, c->epsn)) {
            uc_abort(r);
        }
        c->msg_valid = false;
        c->uc_drop = false;
        c->epsn = r->p->psn;
        r->d = 0;
        return RESPST_CHK_OP_SEQ;
    }
    if (c->uc_drop) {
        return resp_drop(r, "UC: the rest of a dropped message");
    }
    if (r->d) {
        uc_abort(r);
        return resp_drop(r, "UC: a packet of the message was lost");
    }
    return RESPST_CHK_OP_SEQ;
}

/*
 * UD: no PSN is checked (a datagram stands alone, IBA 9.7.?), but its
 * Q_Key must be the QP's; behind a fault nothing is taken
 */
static PLDMARespState resp_ud_chk(PLDMAResp *r)
{
    r->d = 0;
    if (r->p->qkey != conn_qp(r->s, r->c)->qkey) {
        r->why = "UD: another Q_Key";
        uc_abort(r);
        return RESPST_DONE;
    }
    if (r->c->fault) {
        r->why = "UD: behind a fault";
        uc_abort(r);
        return RESPST_DONE;
    }
    return RESPST_CHK_OP_SEQ;
}

static PLDMARespState resp_chk_psn(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;

    if (r->ud) {
        return resp_ud_chk(r);
    }
    r->d = pldma_net_psn_diff(r->p->psn, c->epsn);
    if (r->uc) {
        return resp_uc_chk_psn(r);
    }
    if (r->d < 0) {
        return RESPST_DUPLICATE;
    }
    /* far ahead: garbage (a requester never skips a PSN) */
    if (r->d > PLDMA_NET_PSN_AHEAD) {
        return resp_drop(r, "PSN outside the window");
    }
    /*
     * (a READ is not held behind parked segments: only the fault itself
     * holds it up; and a fault inside a READ's responses holds a new READ
     * as one more waiting behind it, not with an RNR NAK: its requester
     * would stop taking the held stream's responses when it goes on)
     */
    if ((c->fault && !(r->kind == RESP_READ && c->rd_hold)) ||
        (r->kind != RESP_READ && pldma_resp_parked(c))) {
        return RESPST_BUSY;
    }
    /* the expected PSN only: a sequence NAK, nothing moves */
    return r->d ? RESPST_ERR_SEQ : RESPST_CHK_OP_SEQ;
}

/* The Atomic Acknowledge of the atomic at @psn, which found @orig */
static void ato_answer(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                       uint64_t orig)
{
    PLDMAPkt p = {
        .opcode = OP_ATOMIC_ACK, .psn = psn & PLDMA_PSN_MASK,
        .syndrome = AETH_ACK, .msn = c->msn, .orig = orig,
    };

    conn_dest(s, c, &p);
    pldma_net_cnt(s, PLDMA_NCNT_ACK_TX);
    pldma_hdr_tx(s, &p);
}

/*
 * The answer to the Atomic Write at @psn: an RDMA READ Response Only of
 * no bytes (IBA 1.5; Linux rxe's send_read_response_ack()), as it is
 * ordered with the READs and atomics, not a plain ACK
 */
static void aw_answer(PLDMACore *s, PLDMANetConn *c, uint32_t psn)
{
    PLDMAPkt p = {
        .opcode = OP_READ_RESP_ONLY, .psn = psn & PLDMA_PSN_MASK,
        .syndrome = AETH_ACK, .msn = c->msn,
    };

    conn_dest(s, c, &p);
    pldma_net_cnt(s, PLDMA_NCNT_ACK_TX);
    pldma_hdr_tx(s, &p);
}

/* (ato_valid has a bit per atomic remembered) */
QEMU_BUILD_BUG_ON(PLDMA_NET_RD_ORIG > 8 * sizeof_field(PLDMANetConn,
                                                       ato_valid));

/*
 * A duplicate atomic: the answer of the original, from the value it
 * found, if it is one of the last PLDMA_NET_RD_ORIG executed (IBA
 * C9-97: an atomic is never executed twice); else dropped.  Counted.
 */
static PLDMARespState ato_duplicate(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;
    uint32_t i;

    for (i = 0; i < PLDMA_NET_RD_ORIG; i++) {
        if ((c->ato_valid & BIT(i)) && c->ato_psn[i] == r->p->psn) {
            pldma_net_cnt(r->s, PLDMA_NCNT_DUPS);
            trace_pldma_net_atomic_dup(r->qp, r->p->psn, c->ato_orig[i]);
            if (r->aw || r->flush) {
                aw_answer(r->s, c, r->p->psn);
            } else {
                ato_answer(r->s, c, r->p->psn, c->ato_orig[i]);
            }
            return RESPST_DONE;
        }
    }
    /* (one older than those: its answer was had, or it was never done) */
    pldma_net_cnt(r->s, PLDMA_NCNT_DUPS);
    return RESPST_DONE;
}

/*
 * Before the expected PSN: a duplicate.  A WRITE's or SEND's is answered
 * again (it may have been our answer that was lost); a READ's is served
 * again if it repeats one taken (IBA 9.9.5: reads are idempotent); an
 * atomic is answered from the result it had, never executed again.
 */
static PLDMARespState resp_duplicate(PLDMAResp *r)
{
    PLDMACore *s = r->s;
    PLDMANetConn *c = r->c;

    switch (r->kind) {
    case RESP_READ:
        if (!rd_dup_ok(s, c, r->p)) {
            return resp_drop(r, "duplicate READ beyond the original");
        }
        if (c->fault && !c->rd_hold) {
            pldma_net_cnt(s, PLDMA_NCNT_OOO);
            pldma_resp_answer(s, c, r->p->psn,
                              AETH_RNR(pldma_resp_rnr_timer(s, c)));
            return RESPST_DONE;
        }
        /*
         * (or the requester asks again for the rest of the READ whose
         * response stream a fault holds: served once it is resolved, and
         * nothing said now, as no RNR NAK goes inside a READ's responses)
         */
        pldma_net_cnt(s, PLDMA_NCNT_DUPS);
        return RESPST_CHK_LENGTH;
    case RESP_ATOMIC:
        return ato_duplicate(r);
    default:
        pldma_net_cnt(s, PLDMA_NCNT_DUPS);
        if (r->p->ackreq || r->last) {
            pldma_resp_answer(s, c, c->epsn - 1, AETH_ACK);
        }
        return RESPST_DONE;
    }
}

/*
 * Behind a fault being resolved (or behind the segments held while it
 * was, until they are applied): a WRITE or SEND segment is held
 * (parking, resp-fault.c) or dropped, and the expected PSN gets the same
 * answer as the first time; a READ at the expected PSN is RNR NAKed, one
 * ahead of it gets the sequence NAK as any; so does an atomic.
 */
static PLDMARespState resp_busy(PLDMAResp *r)
{
    PLDMACore *s = r->s;
    PLDMANetConn *c = r->c;

    if ((r->kind == RESP_READ || r->kind == RESP_ATOMIC) && r->d > 0) {
        return RESPST_ERR_SEQ;
    }
    if ((r->kind == RESP_WRITE || r->kind == RESP_SEND) &&
        pldma_resp_park_add(s, c, r->p)) {
        return RESPST_DONE;
    }
    pldma_net_cnt(s, PLDMA_NCNT_OOO);
    if (r->d == 0 && c->fault) {
        pldma_resp_answer(s, c, c->epsn,
                          AETH_RNR(pldma_resp_rnr_timer(s, c)));
    }
    return RESPST_DONE;
}

/* The opcode sequence of the messages, at the expected PSN */
static PLDMARespState resp_chk_op_seq(PLDMAResp *r)
{
    const PLDMANetConn *c = r->c;
    uint32_t psn = r->p->psn;
    bool in_write = pldma_resp_in_write(c, psn);

    switch (r->kind) {
    case RESP_ATOMIC:
        if (in_write || c->rmsg_valid) {
            return resp_fatal(r, AETH_NAK_INVALID, "inside a message");
        }
        /*
         * Its answer would overtake the responses of the READs before
         * it, which IBA orders by PSN: dropped, the requester sends it
         * again (nothing was executed)
         */
        return c->rd_active ? resp_drop(r, "atomic behind READ responses")
                            : RESPST_CHK_LENGTH;
    case RESP_READ:
        return in_write ? resp_fatal(r, AETH_NAK_INVALID, "inside a WRITE")
                        : RESPST_CHK_LENGTH;
    case RESP_SEND:
        if (in_write) {
            return resp_fatal(r, AETH_NAK_INVALID, "inside a WRITE");
        }
        if (r->first && c->rmsg_valid && psn != c->rmsg_psn) {
            return resp_fatal(r, AETH_NAK_INVALID, "previous SEND unended");
        }
        if (!r->first && !c->rmsg_valid) {
            return resp_fatal(r, AETH_NAK_INVALID, "no SEND in progress");
        }
        return RESPST_CHK_LENGTH;
    default:
        if (r->first && c->rmsg_valid) {
            return resp_fatal(r, AETH_NAK_INVALID, "a SEND unfinished");
        }
        /* (a WRITE's own First again, after an RNR NAK, is no error) */
        if (r->first && in_write && psn != c->msg_psn) {
            return resp_fatal(r, AETH_NAK_INVALID, "inside a WRITE");
        }
        /*
         * Not a segment of the current message: no message, or a PSN
         * outside it, also before its First (an expected PSN that went
         * round the 24-bit space)
         */
        if (!r->first && !in_write) {
            return resp_fatal(r, AETH_NAK_INVALID,
                              "not a segment of the WRITE in progress");
        }
        return RESPST_CHK_LENGTH;
    }
}

/* A WRITE: the message's length at its First, every segment's */
static PLDMARespState resp_write_length(PLDMAResp *r)
{
    PLDMACore *s = r->s;
    const PLDMAPkt *p = r->p;
    uint64_t len = r->first ? p->dmalen : r->c->msg_len;

    if (r->first && (p->dmalen > MIN(s->max_transfer, PLDMA_NET_MAX_MSG) ||
                     r->last != (p->dmalen <= r->mtu))) {  /* Only, First */
        return resp_fatal(r, AETH_NAK_INVALID, "bad message length");
    }
    r->off = r->first ? 0 : (uint64_t)pldma_net_psn_diff(p->psn,
                                                         r->c->msg_psn) *
                            r->mtu;
    if (r->off + p->plen > len || (!r->last && p->plen != r->mtu) ||
        (r->last && r->off + p->plen != len)) {
        return resp_fatal(r, AETH_NAK_INVALID, "bad segment length");
    }
    return RESPST_CHK_RKEY;
}

/* A SEND: every segment's length, and its place in the message */
static PLDMARespState resp_send_length(PLDMAResp *r)
{
    const PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;

    if ((!r->last && p->plen != r->mtu) || p->plen > r->mtu ||
        (!r->first && p->plen == 0)) {
        return resp_fatal(r, AETH_NAK_INVALID, "bad segment length");
    }
    /* (a resent segment after an RNR NAK: its offset in the message) */
    r->off = c->rmsg_valid ? (uint64_t)pldma_net_psn_diff(p->psn,
                                                          c->rmsg_psn) *
                             r->mtu : 0;
    if (c->rmsg_valid && r->off != c->rmsg_off) {
        return resp_fatal(r, AETH_NAK_INVALID, "offset mismatch");
    }
    return RESPST_CHK_RESOURCE;
}

static PLDMARespState resp_chk_length(PLDMAResp *r)
{
    switch (r->kind) {
    case RESP_WRITE:
        return resp_write_length(r);
    case RESP_SEND:
        return resp_send_length(r);
    case RESP_ATOMIC:
        /*
         * (IBA C9-92: naturally aligned, else an invalid request; an
         * Atomic Write carries exactly 8 bytes, oA19-28)
         */
        if (r->aw && (r->p->dmalen != PLDMA_ATOMIC_LEN ||
                      r->p->plen != PLDMA_ATOMIC_LEN)) {
            return resp_fatal(r, AETH_NAK_INVALID, "Atomic Write length");
        }
        if (r->flush) {
            /* a placement type, a selectivity level, nothing else */
            return r->p->feth & ~PLDMA_FLUSH_VALID ||
                   !(r->p->feth & (PLDMA_FLUSH_GLOBAL |
                                   PLDMA_FLUSH_PERSISTENT))
                   ? resp_fatal(r, AETH_NAK_INVALID, "bad FETH")
                   : RESPST_CHK_RKEY;
        }
        return r->p->va & (PLDMA_ATOMIC_LEN - 1)
               ? resp_fatal(r, AETH_NAK_INVALID, "misaligned atomic")
               : RESPST_CHK_RKEY;
    default:
        return r->p->dmalen > MIN(r->s->max_transfer, PLDMA_NET_MAX_MSG)
               ? resp_fatal(r, AETH_NAK_INVALID, "bad message length")
               : RESPST_CHK_RKEY;
    }
}

/*
 * The R_Key of a WRITE (the whole message at its First, each later
 * segment again: the key may have been revoked since) or of a READ.  A
 * zero-length WRITE or READ needs no valid R_Key or VA (IBA C9-88; Linux
 * rxe checks neither): nothing is accessed.
 */
/*
 * A FLUSH: the key must allow FLUSH for the range (selectivity RANGE, a
 * range of no bytes as one byte) or be valid at all (MR); persistence,
 * which no window of this device has, is refused as a key without it
 */
static PLDMARespState resp_chk_flush_key(PLDMAResp *r)
{
    const PLDMAPkt *p = r->p;
    uint32_t idx = PLDMA_RKEY_INDEX(p->rkey);
    uint64_t va = p->va, len = MAX(p->dmalen, 1);
    uint8_t nak = AETH_NAK_ACCESS;

    if ((p->feth & PLDMA_FLUSH_MR) && idx < PLDMA_NUM_KEYS) {
        va = r->s->net->keys[idx].va;
        len = 1;
    }
    if (!(p->feth & PLDMA_FLUSH_PERSISTENT)) {
        nak = pldma_resp_check_key(r->s, r->c, p->rkey, va, len,
                                   PLDMA_KEY_ACC_FLUSH);
    }
    if (nak) {
        trace_pldma_net_refused(r->qp, p->psn, p->rkey, va, len, nak);
        return resp_fatal(r, nak, "the R_Key does not allow the FLUSH");
    }
    return RESPST_CHK_RESOURCE;
}

static PLDMARespState resp_chk_rkey(PLDMAResp *r)
{
    const PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;
    bool whole = r->first || r->kind == RESP_READ;
    uint32_t rkey = whole ? p->rkey : c->msg_rkey;
    uint64_t va = whole ? p->va : c->msg_va + r->off;
    uint32_t len = r->kind == RESP_ATOMIC ? PLDMA_ATOMIC_LEN
                   : whole ? p->dmalen : p->plen;
    uint8_t nak;

    if (r->flush) {
        return resp_chk_flush_key(r);
    }

    nak = len ? pldma_resp_check_key(r->s, r->c, rkey, va, len,
                                     r->kind == RESP_READ ?
                                     PLDMA_KEY_ACC_READ :
                                     r->kind == RESP_ATOMIC && !r->aw ?
                                     PLDMA_KEY_ACC_ATOMIC :
                                     PLDMA_KEY_ACC_WRITE) : 0;
    if (nak) {
        trace_pldma_net_refused(r->qp, p->psn, rkey, va, len, nak);
        return resp_fatal(r, nak, "the R_Key does not allow the access");
    }
    return RESPST_CHK_RESOURCE;
}

/*
 * A WRITE's First starts its message; a WRITE with immediate needs a
 * receive WQE at its Last/Only (the first try of the packet takes it)
 */
static PLDMARespState resp_write_resource(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;

    if (r->first) {
        c->msg_valid = true;
        c->msg_psn = p->psn;
        c->msg_va = p->va;
        c->msg_len = p->dmalen;
        c->msg_rkey = p->rkey;
        c->msg_nsegs = pldma_net_nsegs(r->mtu, p->dmalen);
    }
    if (p->has_imm && !c->imm_wqe) {
        if (!pldma_rq_take(r->s, c, p, r->qp)) {
            if (r->uc) {
                uc_abort(r);            /* no WQE: the message is lost */
            }
            return RESPST_DONE;         /* answered: RNR, or NAK */
        }
        c->imm_wqe = true;
    }
    return RESPST_EXECUTE;
}

/*
 * A SEND's First takes the receive WQE at the head of the RQ; a message
 * longer than the WQE completes it LOC_LEN_ERR (consumed)
 */
static PLDMARespState resp_send_resource(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;

    if (r->first && !c->rmsg_valid) {
        if (!pldma_rq_take(r->s, c, p, r->qp)) {
            if (r->uc) {
                uc_abort(r);            /* no WQE: the message is lost */
            }
            return RESPST_DONE;         /* answered: RNR, or NAK */
        }
        /* (the WQE a faulted WRITE with immediate took is this SEND's) */
        c->imm_wqe = false;
        c->rmsg_valid = true;
        c->rmsg_psn = p->psn;
        c->rmsg_off = 0;
    }
    if (r->ud && PLDMA_UD_GRH_LEN + p->plen > c->rwqe_total) {
        r->why = "UD: longer than the receive WQE";
        uc_abort(r);                    /* the WQE stays for the next */
        return RESPST_DONE;
    }
    if (r->off + p->plen > c->rwqe_total || r->off + p->plen > UINT32_MAX) {
        c->rmsg_valid = false;
        if (!pldma_rq_complete(r->s, r->qp, c->rwqe_id, PLDMA_WC_RECV,
                               PLDMA_WC_ST_LOC_LEN_ERR, r->off, NULL)) {
            return RESPST_DONE;         /* its CQ failed: the QP is in ERR */
        }
        return resp_fatal(r, AETH_NAK_INVALID,
                          "message longer than the receive WQE");
    }
    return RESPST_EXECUTE;
}

static PLDMARespState resp_chk_resource(PLDMAResp *r)
{
    const PLDMANetConn *c = r->c;

    switch (r->kind) {
    case RESP_WRITE:
        return resp_write_resource(r);
    case RESP_SEND:
        return resp_send_resource(r);
    case RESP_ATOMIC:
        return RESPST_EXECUTE;
    default:
        /* a new READ while the QP's READ resources are all taken */
        return r->d >= 0 && c->rd_active && c->rdq_n >= PLDMA_NET_RD_ORIG - 1
               ? resp_fatal(r, AETH_NAK_INVALID, "no READ resource left")
               : RESPST_EXECUTE;
    }
}

/* A WRITE segment's payload to the message's memory */
static PLDMARespState resp_write_execute(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;
    PLDMAAccess a = PLDMA_ACC_OK;

    if (p->plen) {
        a = pldma_resp_rw(r->s, c, c->msg_rkey, c->msg_va + r->off,
                          (void *)p->payload, p->plen, true, r->off,
                          c->msg_len);
    }
    if (a == PLDMA_ACC_BUSERR) {
        return resp_fatal(r, AETH_NAK_OPERR, "the access failed");
    }
    if (a != PLDMA_ACC_OK) {
        return RESPST_ERR_RNR;
    }
    c->epsn = (p->psn + 1) & PLDMA_PSN_MASK;
    c->nak_seq = false;
    if (!p->has_imm && c->imm_wqe) {
        /*
         * A WRITE with immediate took the receive WQE at this PSN and
         * faulted; what came again at the PSN has no immediate: the WQE
         * is not consumed, it stays posted for what comes next
         */
        trace_pldma_recv_imm_released(r->qp, p->psn);
        c->imm_wqe = false;
    }
    return RESPST_COMPLETE;
}

/*
 * A UD datagram's GRH, the first PLDMA_UD_GRH_LEN bytes of its WQE: for
 * RoCEv2 over IPv4, 20 zero bytes and then the datagram's IPv4 header
 * (where verbs' ibv_init_ah_from_wc() finds it)
 */
static PLDMAAccess resp_ud_grh(PLDMAResp *r)
{
    uint8_t grh[PLDMA_UD_GRH_LEN] = { 0 };

    memcpy(grh + PLDMA_UD_GRH_LEN - 20, r->p->ip_hdr, 20);
    return pldma_rq_scatter(r->s, r->c, r->qp, 0, grh, sizeof(grh));
}

/* A SEND segment's payload scattered over the receive WQE's entries */
static PLDMARespState resp_send_execute(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;
    PLDMAAccess a = PLDMA_ACC_OK;

    if (r->ud) {
        a = resp_ud_grh(r);
        r->off = PLDMA_UD_GRH_LEN;
    }
    if (a == PLDMA_ACC_OK) {
        a = pldma_rq_scatter(r->s, c, r->qp, r->off, p->payload, p->plen);
    }
    if (a == PLDMA_ACC_BUSERR) {
        c->rmsg_valid = false;
        if (!pldma_rq_complete(r->s, r->qp, c->rwqe_id, PLDMA_WC_RECV,
                               PLDMA_WC_ST_LOC_PROT_ERR, r->off, NULL)) {
            return RESPST_DONE;
        }
        return resp_fatal(r, AETH_NAK_OPERR, "the access failed");
    }
    if (a != PLDMA_ACC_OK) {
        return RESPST_ERR_RNR;
    }
    c->rmsg_off = r->off + p->plen;
    c->epsn = (p->psn + 1) & PLDMA_PSN_MASK;
    c->nak_seq = false;
    return RESPST_COMPLETE;
}

/*
 * A READ: served at once, or queued behind the one being answered (IBA's
 * responder READ resources, up to max_dest_rd_atomic per QP, answered in
 * the order they came); a duplicate of the one being answered takes its
 * place.  The request came from the QP's peer (its IP, the QPN's
 * generation, a PSN in the window) with a key that allows the READ; the
 * responses go to the QP's DEST_MAC, never to a frame's source.
 */
static PLDMARespState resp_read_execute(PLDMAResp *r)
{
    PLDMACore *s = r->s;
    PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;
    bool fresh = r->d >= 0;

    if (c->rd_active && !(!fresh && rd_dup_restarts(s, c, p))) {
        if (!rd_queue(c, p, fresh)) {
            /* (a duplicate beyond the resources: its original answers) */
            return resp_drop(r, "duplicate READ beyond the resources");
        }
        trace_pldma_net_read_queued(r->qp, p->psn, p->dmalen, c->rdq_n);
    } else {
        rd_start(s, c, p->psn, p->va, p->dmalen, p->rkey, fresh);
    }
    if (fresh) {
        c->epsn = (p->psn + pldma_net_nsegs(r->mtu, p->dmalen)) &
                  PLDMA_PSN_MASK;
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
    return RESPST_DONE;     /* answered by its responses (pldma_resp_bh) */
}

/*
 * An atomic: the 8 bytes read, the new value written (CmpSwap: only if
 * they compare equal), as one step of the device (atomic with respect to
 * its own atomics: IBV_ATOMIC_HCA).  A fault on either access changes
 * nothing: RNR NAK, and it is executed when it comes again.  The value
 * found is remembered for a duplicate (ato_duplicate()).
 */
static PLDMARespState resp_atomic_execute(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;
    uint8_t buf[PLDMA_ATOMIC_LEN];
    uint64_t val = 0;
    bool store = true;
    PLDMAAccess a;

    if (r->flush) {
        /*
         * The device's writes reach memory as they are made, and those
         * held behind a fault hold the FLUSH up (BUSY): all are visible
         */
        a = PLDMA_ACC_OK;
    } else if (r->aw) {
        /* an Atomic Write: its 8 bytes, as they came, in one access */
        memcpy(buf, p->payload, sizeof(buf));
        a = pldma_resp_rw(r->s, c, p->rkey, p->va, buf, sizeof(buf), true, 0,
                          sizeof(buf));
    } else {
        a = pldma_resp_rw(r->s, c, p->rkey, p->va, buf, sizeof(buf), false,
                          0, sizeof(buf));
    }
    if (a == PLDMA_ACC_OK && !r->aw && !r->flush) {
        r->orig = ldq_le_p(buf);
        if (p->opcode == OP_CMP_SWAP) {
            store = r->orig == p->compare;
            val = p->swap_add;
        } else {
            val = r->orig + p->swap_add;
        }
        stq_le_p(buf, val);
        if (store) {
            a = pldma_resp_rw(r->s, c, p->rkey, p->va, buf, sizeof(buf),
                              true, 0, sizeof(buf));
        }
    }
    if (a == PLDMA_ACC_BUSERR) {
        return resp_fatal(r, AETH_NAK_OPERR, "the access failed");
    }
    if (a != PLDMA_ACC_OK) {
        return RESPST_ERR_RNR;
    }
    trace_pldma_net_atomic(r->qp, p->psn, p->opcode, p->va, r->orig, store);
    c->ato_psn[c->ato_next] = p->psn;
    c->ato_orig[c->ato_next] = r->orig;
    c->ato_valid |= BIT(c->ato_next);
    c->ato_next = (c->ato_next + 1) % PLDMA_NET_RD_ORIG;
    c->epsn = (p->psn + 1) & PLDMA_PSN_MASK;
    c->nak_seq = false;
    return RESPST_COMPLETE;
}

static PLDMARespState resp_execute(PLDMAResp *r)
{
    switch (r->kind) {
    case RESP_WRITE:
        return resp_write_execute(r);
    case RESP_SEND:
        return resp_send_execute(r);
    case RESP_ATOMIC:
        return resp_atomic_execute(r);
    default:
        return resp_read_execute(r);
    }
}

/*
 * A message's Last: it counts in the MSN, and its receive WQE (a SEND's,
 * a WRITE with immediate's) completes SUCCESS.  No answer if the QP went
 * to ERR meanwhile (its receive CQ failed).
 */
static PLDMARespState resp_complete(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;
    const PLDMAPkt *p = r->p;
    bool ok = true;

    if (r->last) {
        c->msn = (c->msn + 1) & PLDMA_PSN_MASK;
    }
    if (r->kind == RESP_WRITE && p->has_imm) {
        c->imm_wqe = false;
        ok = pldma_rq_complete(r->s, r->qp, c->rwqe_id,
                               PLDMA_WC_RECV_RDMA_WITH_IMM,
                               PLDMA_WC_ST_SUCCESS, c->msg_len, p);
    } else if (r->kind == RESP_SEND && r->last) {
        c->rmsg_valid = false;
        ok = pldma_rq_complete(r->s, r->qp, c->rwqe_id, PLDMA_WC_RECV,
                               PLDMA_WC_ST_SUCCESS, c->rmsg_off, p);
    }
    return ok ? RESPST_ACKNOWLEDGE : RESPST_DONE;
}

/* ACK requested, or a message's Last; a held one's when all are applied */
static PLDMARespState resp_acknowledge(PLDMAResp *r)
{
    if (r->uc) {
        return RESPST_DONE;
    }
    if (r->kind == RESP_ATOMIC && !r->aw && !r->flush) {
        ato_answer(r->s, r->c, r->p->psn, r->orig);
        return RESPST_DONE;
    }
    if (r->aw || r->flush) {
        aw_answer(r->s, r->c, r->p->psn);
        return RESPST_DONE;
    }
    if ((r->p->ackreq || r->last) && !pldma_resp_park_running(r->c)) {
        pldma_resp_answer(r->s, r->c, r->p->psn, AETH_ACK);
    }
    return RESPST_DONE;
}

/*
 * The access faulted: the segment is dropped, and the requester resends
 * from it; or held, with the segments of its message that follow
 * (parking, resp-fault.c).  The RNR NAK names the expected PSN as a
 * sequence NAK would: the segments in flight behind it are dropped
 * without a sequence NAK on top (to rxe that means "resend now", ending
 * its RNR wait).
 */
static PLDMARespState resp_err_rnr(PLDMAResp *r)
{
    PLDMANetConn *c = r->c;

    if (r->uc) {
        /* nothing waits: the fault's page is made present for later */
        c->fault_psn = r->p->psn;
        uc_abort(r);
        return RESPST_DONE;
    }
    c->fault_psn = r->p->psn;
    c->nak_seq = true;
    pldma_resp_park_add(r->s, c, r->p);
    pldma_resp_answer(r->s, c, r->p->psn,
                      AETH_RNR(pldma_resp_rnr_timer(r->s, c)));
    return RESPST_DONE;
}

static PLDMARespState resp_err_seq(PLDMAResp *r)
{
    pldma_resp_seq_nak(r->s, r->c);
    return RESPST_DONE;
}

/*
 * Refused: the NAK ends the connection (pldma_resp_nak()); a UC message
 * is dropped instead, its QP goes on
 */
static PLDMARespState resp_err_fatal(PLDMAResp *r)
{
    trace_pldma_resp_refused(r->qp, r->p->psn, r->p->opcode, r->syndrome,
                             r->why);
    if (r->uc) {
        uc_abort(r);
        return RESPST_DONE;
    }
    pldma_resp_nak(r->s, r->c, r->p->psn, r->syndrome);
    return RESPST_DONE;
}

static PLDMARespState resp_err_drop(PLDMAResp *r)
{
    pldma_net_qp_drop(r->s, r->p, r->why);
    return RESPST_DONE;
}

static const struct {
    const char *name;
    PLDMARespStage *run;
} resp_stage[RESPST_NUM] = {
    [RESPST_CHK_PSN] = { "CHK_PSN", resp_chk_psn },
    [RESPST_CHK_OP_SEQ] = { "CHK_OP_SEQ", resp_chk_op_seq },
    [RESPST_CHK_LENGTH] = { "CHK_LENGTH", resp_chk_length },
    [RESPST_CHK_RKEY] = { "CHK_RKEY", resp_chk_rkey },
    [RESPST_CHK_RESOURCE] = { "CHK_RESOURCE", resp_chk_resource },
    [RESPST_EXECUTE] = { "EXECUTE", resp_execute },
    [RESPST_COMPLETE] = { "COMPLETE", resp_complete },
    [RESPST_ACKNOWLEDGE] = { "ACKNOWLEDGE", resp_acknowledge },
    [RESPST_DUPLICATE] = { "DUPLICATE", resp_duplicate },
    [RESPST_BUSY] = { "BUSY", resp_busy },
    [RESPST_ERR_RNR] = { "ERR_RNR", resp_err_rnr },
    [RESPST_ERR_SEQ] = { "ERR_SEQ", resp_err_seq },
    [RESPST_ERR_FATAL] = { "ERR_FATAL", resp_err_fatal },
    [RESPST_DROP] = { "DROP", resp_err_drop },
    [RESPST_DONE] = { "DONE", NULL },
};

/*
 * A request packet for connection @c (its QP receiving, the packet from
 * the QP's peer: net.c's classifier), or one held behind a fault and
 * applied now (pldma_resp_park_run()).  Every stage moves on, and no
 * packet takes more than RESPST_NUM of them.
 */
void pldma_resp_rx(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p)
{
    uint32_t fl = pldma_hdr_op_flags(p->opcode);
    PLDMAResp r = {
        .s = s, .c = c, .p = p, .qp = pldma_resp_qpi(s, c),
        .uc = conn_qp(s, c)->type != PLDMA_QP_TYPE_RC,
        .ud = conn_qp(s, c)->type == PLDMA_QP_TYPE_UD,
        .aw = fl & PLDMA_NET_F_ATOMIC_WRITE,
        .flush = fl & PLDMA_NET_F_FLUSH,
        .kind = p->atomic || (fl & (PLDMA_NET_F_ATOMIC_WRITE |
                                    PLDMA_NET_F_FLUSH)) ? RESP_ATOMIC
                : fl & PLDMA_NET_F_READ ? RESP_READ
                : fl & PLDMA_NET_F_SEND ? RESP_SEND : RESP_WRITE,
        .first = fl & PLDMA_NET_F_FIRST, .last = fl & PLDMA_NET_F_LAST,
        .mtu = pldma_resp_mtu(s, c),
    };
    PLDMARespState st = RESPST_CHK_PSN;
    unsigned n;

    for (n = 0; st != RESPST_DONE && n < RESPST_NUM; n++) {
        trace_pldma_resp_stage(r.qp, p->psn, resp_stage[st].name);
        st = resp_stage[st].run(&r);
    }
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
    pldma_resp_nak(s, c, c->rd_psn, syndrome);
}

/*
 * The access for the response of connection @c at rd_off faulted: before
 * the first response, an RNR NAK of the request, whose requester asks
 * again from its start and sends again what it sent after it (the READs
 * waiting behind it come again as duplicates, and are answered then).
 * Inside the response stream, where an RC requester takes no RNR NAK
 * (Linux rxe's completer ends the QP): the stream is held, and goes on
 * from this response when the fault is resolved.  A requester that times
 * out meanwhile asks again for the rest, which is served then.
 */
static void rd_fault(PLDMACore *s, PLDMANetConn *c)
{
    c->fault_psn = c->rd_psn;
    if (c->rd_off == 0) {
        c->rd_active = false;
        c->rdq_n = 0;
        pldma_resp_answer(s, c, c->rd_psn,
                          AETH_RNR(pldma_resp_rnr_timer(s, c)));
        return;
    }
    c->rd_hold = true;
    trace_pldma_net_read_held(pldma_resp_qpi(s, c), c->rd_psn, c->rd_off);
}

/*
 * The next READ response of connection @c, within @budget bytes; false
 * when the stream stops (over, NAKed, faulted)
 */
static bool rd_respond(PLDMACore *s, PLDMANetConn *c, uint8_t *buf,
                       uint64_t *budget)
{
    uint32_t n = MIN(pldma_resp_mtu(s, c), c->rd_len - c->rd_off);
    bool first = c->rd_off == 0, last = c->rd_off + n == c->rd_len;
    PLDMAPkt p = {
        .psn = c->rd_psn, .payload = buf, .plen = n,
        .syndrome = AETH_ACK, .msn = c->msn,
    };
    PLDMAAccess a = PLDMA_ACC_OK;

    conn_dest(s, c, &p);
    /* (a zero-length READ: no key, nothing read, one response) */
    if (n && pldma_resp_check_key(s, c, c->rd_rkey, c->rd_va + c->rd_off, n,
                                  PLDMA_KEY_ACC_READ)) {
        rd_nak(s, c, AETH_NAK_ACCESS);  /* revoked meanwhile */
        return false;
    }
    if (n) {
        a = pldma_resp_rw(s, c, c->rd_rkey, c->rd_va + c->rd_off, buf, n,
                          false, c->rd_off, c->rd_len);
    }
    if (a == PLDMA_ACC_BUSERR) {
        rd_nak(s, c, AETH_NAK_OPERR);
        return false;
    }
    if (a != PLDMA_ACC_OK) {
        rd_fault(s, c);
        return false;
    }
    p.opcode = first ? (last ? OP_READ_RESP_ONLY : OP_READ_RESP_FIRST)
                     : (last ? OP_READ_RESP_LAST : OP_READ_RESP_MIDDLE);
    pldma_hdr_tx(s, &p);
    c->rd_off += n;
    c->rd_psn = (c->rd_psn + 1) & PLDMA_PSN_MASK;
    *budget -= MIN(*budget, n);
    if (last) {
        c->rd_active = false;
        rd_next(s, c);          /* the next READ, in order */
    }
    return true;
}

/*
 * Send READ responses, from the bottom half, within @budget bytes: each
 * connection at most PLDMA_NET_WINDOW responses a turn, the first
 * connection served moving round with every call, so that one long READ
 * shares the link with the others' (and the local channels').  Held WRITE
 * and SEND segments whose fault was resolved are applied here too.
 */
bool pldma_resp_bh(PLDMACore *s, uint64_t *budget)
{
    uint8_t buf[PLDMA_NET_MAX_MTU];
    bool more = false;
    uint32_t i, nconns = PLDMA_NET_NCONNS(s);

    if (!s->nic) {
        return false;
    }
    s->net->resp_rr = (s->net->resp_rr + 1) % nconns;
    for (i = 0; i < nconns; i++) {
        PLDMANetConn *c = &s->net->conns[(s->net->resp_rr + i) % nconns];
        PLDMAQP *qp = conn_qp(s, c);
        uint32_t turn = PLDMA_NET_WINDOW;

        if (pldma_resp_parked(c) && !c->fault) {
            if (qp->state != PLDMA_QPS_RTS &&
                qp->state != PLDMA_QPS_RTR) {
                pldma_resp_park_drop(s, c);     /* not receiving any more */
            } else {
                more |= pldma_resp_park_run(s, c, budget);
            }
        }
        while (c->rd_active && !c->fault && *budget && !s->net->tx_blocked &&
               turn && rd_respond(s, c, buf, budget)) {
            turn--;
        }
        more |= c->rd_active && !c->fault && !s->net->tx_blocked;
    }
    return more;
}

/* QP @idx enters RTR: its responder expects RQ_PSN, nothing else */
void pldma_resp_qp_connect(PLDMACore *s, uint32_t idx)
{
    PLDMANetConn *c = &s->net->conns[idx];

    pldma_resp_qp_clear(s, idx);
    c->epsn = s->net->qps[idx].rq_psn & PLDMA_PSN_MASK;
    trace_pldma_net_conn_sync(idx, c->epsn);
}

/*
 * QP @idx leaves RTR/RTS (to ERR or RESET), or enters RTR: its responder
 * forgets everything of the connection that was, the message and READs
 * in progress and a fault being resolved too.  A stall the SMMU still
 * holds belongs to that connection: when the OS answers it, no
 * connection claims it (pldma_resp_resumed()) and nothing is sent, so the
 * next connection on this index, the same owner's or another process's,
 * starts clean and inherits no fault, no RNR and no NAK of it.
 */
void pldma_resp_qp_clear(PLDMACore *s, uint32_t idx)
{
    PLDMANetConn *c;

    if (!s->net->conns) {
        return;
    }
    c = &s->net->conns[idx];
    pldma_resp_park_drop(s, c);
    if (c->fault && c->stalled) {
        trace_pldma_net_stall_dropped(idx, c->stag);
    }
    memset(c, 0, sizeof(*c));
}
