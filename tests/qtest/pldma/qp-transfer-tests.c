/*
 * PLDMA QP to QP over -netdev stream: WRITE and READ, not-ready and
 * timed-out QPs, responder faults, PDs, reset and reconnect
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "pldma/framework.h"

/* WRITE A -> B then READ it back elsewhere, on A's QP 0; bytes compared */
static void write_read(Pair *p, QPldmaRing *r, uint32_t len, uint32_t key)
{
    uint64_t a_src, a_dst, b_pa, compl, bytes;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey;

    a_src = alloc_pa(&p->a, len);
    a_dst = alloc_pa(&p->a, len);
    b_pa = alloc_pa(&p->b, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    rkey = key_register(&p->b, key, 0, b_pa, len,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);

    compl = post(&p->a, r, PLDMA_OP_RDMA_WRITE, len, a_src, b_pa, rkey);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, b_pa, data, len);

    compl = post(&p->a, r, PLDMA_OP_RDMA_READ, len, a_dst, b_pa, rkey);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->a.qts, a_dst, data, len);
}

static void test_write_read(void)
{
    Pair *p = pair_start();
    uint32_t a_psn, b_psn, nsegs, rkey, tx0, drop0;
    uint64_t compl, compl2, src;
    QPldmaQPAttr q;
    QPldmaRing r;

    pair_connect(p, &a_psn, &b_psn);
    ring_init(&p->a, &r, 0);
    write_read(p, &r, 64 * KiB + 123, 0);
    tx0 = ncnt(&p->b, PLDMA_NCNT_TX_FRAMES);

    /*
     * Refused by the responder (a bad rkey): NAK remote access, fatal to
     * the requester (IBA; Linux rxe's completer): its QP goes to ERR
     * without a QP_ERRORS bit (the completion reports it), the READ
     * posted behind the WRITE is FLUSHED and never sent.  Fatal to the
     * responder as well (IBA 9.9.3.1, rxe's do_class_ac_error()): its QP
     * goes to ERR with its QP_ERRORS bit.  Again for a READ on a new
     * connection.
     */
    src = alloc_pa(&p->a, 8 * KiB);
    rkey = key_register(&p->b, 3, 0, alloc_pa(&p->b, 8 * KiB), 8 * KiB,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, 8 * KiB, src, 0,
                 rkey ^ 0x100);
    compl2 = post(&p->a, &r, PLDMA_OP_RDMA_READ, 4 * KiB, src, 0, rkey);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==,
                     PLDMA_ST_REMOTE_ACCESS);
    g_assert_cmpuint(wait_compl(p, compl2, NULL), ==, PLDMA_ST_FLUSHED);
    qpldma_qp_query(&p->a.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_ERR);
    g_assert_cmpuint(qpldma_rd(&p->a.d, PLDMA_QP_ERRORS_LO), ==, 0);
    qpldma_qp_query(&p->b.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_ERR);
    g_assert_cmphex(qpldma_rd(&p->b.d, PLDMA_QP_ERRORS_LO), ==, 1);
    qpldma_wr(&p->b.d, PLDMA_QP_ERRORS_LO, 1);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_ACCESS), ==, 1);
    /* B sent the NAK and nothing else: the READ never reached it */
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_TX_FRAMES), ==, tx0 + 1);

    qp_reset(&p->a, 0);
    qp_reset(&p->b, 0);
    pair_connect(p, &a_psn, &b_psn);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_READ, 4 * KiB, src, 0,
                 rkey ^ 0x100);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==,
                     PLDMA_ST_REMOTE_ACCESS);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_ACCESS), ==, 2);
    qp_reset(&p->a, 0);
    qp_reset(&p->b, 0);
    pair_connect(p, &a_psn, &b_psn);
    /* (the refused WRITE's other segments found B's QP in ERR: dropped) */
    drop0 = ncnt(&p->b, PLDMA_NCNT_QP_DROPPED);

    write_read(p, &r, 1 * MiB, 1);
    /* the PSNs went on from the random ones: 1024 + 1024 */
    nsegs = 1024 + 1024;
    qpldma_qp_query(&p->a.d, 0, &q);
    g_assert_cmphex(q.sq_psn, ==, (a_psn + nsegs) & 0xffffff);
    qpldma_qp_query(&p->b.d, 0, &q);
    g_assert_cmphex(q.rq_psn, ==, (a_psn + nsegs) & 0xffffff);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_RETX_SEGS), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_QP_DROPPED), ==, drop0);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_QP_DROPPED), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_SEQ), ==, 0);

    /*
     * Reserved bytes 2-3 set (the node of the node-id addressing that is
     * gone): an error, nothing is sent
     */
    src = alloc_pa(&p->a, PAGE);
    rkey = key_register(&p->b, 2, 0, alloc_pa(&p->b, PAGE), PAGE,
                        PLDMA_KEY_ACC_WRITE);
    compl = post_rsvd(&p->a, &r, PLDMA_OP_RDMA_WRITE, 2, PAGE, src, 0, rkey);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_BAD_DESC);
    qpldma_qp_query(&p->a.d, 0, &q);
    g_assert_cmphex(q.sq_psn, ==, (a_psn + nsegs) & 0xffffff);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTS);
    pair_stop(p);
}

/*
 * Traffic for a QP in RESET, then INIT, is dropped and counted, nothing
 * lands; once the QP is connected, A's retransmission lands whole.
 */
static void test_not_ready(void)
{
    Pair *p = pair_start();
    const uint32_t len = 8 * KiB;
    uint8_t mac_a[6], mac_b[6];
    uint32_t a_psn = rand_psn(), b_psn = rand_psn(), rkey, d0;
    g_autofree uint8_t *data = NULL;
    uint64_t a_src, b_pa, compl, bytes;
    QPldmaQPAttr at;
    QPldmaRing r;
    int i;

    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), a_psn, b_psn, 0);
    qp_connect(&p->a, 0, &at);
    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    b_pa = alloc_pa(&p->b, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    rkey = key_register(&p->b, 0, 0, b_pa, len, PLDMA_KEY_ACC_WRITE);

    /* B's QP 0 in RESET */
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_pa, rkey);
    for (i = 0; i < WAIT_STEPS && ncnt(&p->b, PLDMA_NCNT_QP_DROPPED) < 8;
         i++) {
        step(p);
    }
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_QP_DROPPED), ==, 8);
    g_assert_true(qpldma_mem_zero(p->b.qts, b_pa, len));
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_ACK_TX), ==, 0);

    /* INIT: still not receiving; A's timer resends */
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), b_psn, a_psn, 0);
    at.state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&p->b.d, 0, PLDMA_QPA_REQ_INIT, &at),
                     ==, PLDMA_QP_ST_OK);
    d0 = ncnt(&p->b, PLDMA_NCNT_QP_DROPPED);
    p->timers = true;
    for (i = 0; i < WAIT_STEPS && ncnt(&p->b, PLDMA_NCNT_QP_DROPPED) == d0;
         i++) {
        step(p);
    }
    p->timers = false;
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_QP_DROPPED), >, d0);
    g_assert_true(qpldma_mem_zero(p->b.qts, b_pa, len));
    g_assert_cmpuint(qtest_readl(p->a.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);

    /* RTR: the next resend lands */
    at.state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(&p->b.d, 0, PLDMA_QPA_REQ_RTR, &at),
                     ==, PLDMA_QP_ST_OK);
    p->timers = true;
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, b_pa, data, len);
    pair_stop(p);
}

/*
 * A responder fault on a QP (report mode on B): RNR NAK, the driver
 * resolves it, B's "resolved, resend now" ACK (the PSN before the fault,
 * the true MSN) makes A resend at once, from the faulting segment, with
 * no clock stepped (so not by the RNR timer).  A READ that faults inside
 * its response stream gets neither: its responses are held, then go on.
 */
static void test_responder_fault(void)
{
    const uint32_t len = 64 * KiB, hole = 9;
    Pair *p = pair_start_smmu(true);
    uint64_t a_src, a_dst, b_pa, b_va, compl, bytes, off, hole_va;
    uint32_t a_psn, b_psn, rkey, op, retx0, rnr0 = 0, resume0 = 0;
    g_autofree uint8_t *data = NULL;
    QPldmaRing r;

    pair_connect_pd(p, &a_psn, &b_psn, PASID | PLDMA_CHB_PASID_EN);
    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    a_dst = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    for (op = PLDMA_OP_RDMA_WRITE; op <= PLDMA_OP_RDMA_READ; op++) {
        retx0 = ncnt(&p->a, PLDMA_NCNT_RETX_BYTES);
        b_pa = alloc_pa(&p->b, len);
        b_va = VA_BASE + (b_pa - ALLOC_BASE);
        for (off = 0; off < len; off += PAGE) {
            if (off != hole * PAGE) {
                qsmmu_map(&p->b.s, p->b.pt_root, b_va + off, b_pa + off,
                          true);
            }
        }
        hole_va = b_va + hole * PAGE;
        if (op == PLDMA_OP_RDMA_READ) {
            qtest_memwrite(p->b.qts, b_pa, data, len);
        }
        rkey = key_register(&p->b, op, PASID | PLDMA_CHB_PASID_EN, b_va,
                            len, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
        compl = post(&p->a, &r, op, len,
                     op == PLDMA_OP_RDMA_WRITE ? a_src : a_dst, b_va, rkey);
        pop_remote_fault(p, rkey, hole_va, hole * PAGE,
                         op == PLDMA_OP_RDMA_WRITE, false);
        qsmmu_map(&p->b.s, p->b.pt_root, hole_va, b_pa + hole * PAGE, true);
        qpldma_key_cmd(&p->b.d, op, PLDMA_KEY_CMD_RESOLVED);
        g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
        g_assert_cmpuint(bytes, ==, len);
        if (op == PLDMA_OP_RDMA_WRITE) {
            qpldma_mem_check(p->b.qts, b_pa, data, len);
        } else {
            qpldma_mem_check(p->a.qts, a_dst, data, len);
        }
        g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_RETX_BYTES) - retx0, <=,
                         len - hole * PAGE);
        if (op == PLDMA_OP_RDMA_WRITE) {
            rnr0 = ncnt(&p->b, PLDMA_NCNT_NAK_TX_RNR);
            resume0 = ncnt(&p->b, PLDMA_NCNT_RESUME_TX);
            g_assert_cmpuint(rnr0, >=, 1);
            g_assert_cmpuint(resume0, >=, 1);
        }
    }
    /* the READ: held, no RNR NAK, no "resend now" */
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_RNR), ==, rnr0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_RESUME_TX), ==, resume0);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_RESUME_RX), >=, 1);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_QP_DROPPED), ==, 0);
    pair_stop(p);
}

/*
 * A message without an answer within the QP's retries completes
 * REMOTE_TIMEOUT and moves the QP to ERR; a QP moved to ERR while its
 * message is in flight completes it REMOTE_ERROR.  Later descriptors on
 * its SQ are flushed (PLDMA_ST_FLUSHED) until it is connected again.
 */
static void test_timeout_err(void)
{
    Pair *p = pair_start();
    uint8_t mac_b[6];
    uint64_t src, compl;
    QPldmaQPAttr at;
    QPldmaRing r0, r1;

    qpldma_mac(&p->b.d, mac_b);
    src = alloc_pa(&p->a, 4 * KiB);
    /* A's QP 1 to B's QP 1, which stays in RESET: 1 retry of 1 ms */
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 1), rand_psn(),
            rand_psn(), 1);
    at.timers = PLDMA_QPT_MAKE(1, 1, 1, 8);
    qp_connect(&p->a, 1, &at);
    ring_init(&p->a, &r1, 1);
    compl = post(&p->a, &r1, PLDMA_OP_RDMA_WRITE, 4 * KiB, src, 0, 0x100);
    p->timers = true;
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==,
                     PLDMA_ST_REMOTE_TIMEOUT);
    p->timers = false;
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 1), ==, PLDMA_QPS_ERR);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_QP_DROPPED), >=, 8);
    compl = post(&p->a, &r1, PLDMA_OP_RDMA_WRITE, 4 * KiB, src, 0, 0x100);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_FLUSHED);

    /* A's QP 0 to B's QP 0 in RESET (drops), then A's QP to ERR */
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), rand_psn(),
            rand_psn(), 0);
    qp_connect(&p->a, 0, &at);
    ring_init(&p->a, &r0, 0);
    compl = post(&p->a, &r0, PLDMA_OP_RDMA_WRITE, 4 * KiB, src, 0, 0x100);
    g_assert_cmpuint(qpldma_wait_compl(&p->a.d, compl, step, p, 50, NULL),
                     ==, PLDMA_ST_PENDING);
    at.state = PLDMA_QPS_ERR;
    g_assert_cmpuint(qpldma_qp_modify(&p->a.d, 0, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_ERROR);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);
    pair_stop(p);
}

/*
 * After CTRL_RESET of A, both ends reconnect with new PSNs: a WRITE lands
 * whole (the node-id path's old defect: the reset requester's PSNs went
 * back to 0 and the responder took its new data for duplicates).
 */
/*
 * Two PDs of one address space (two verbs PDs of one context: one PASID,
 * PD tags 1 and 2): B's QP is of PD 1, so a key of PD 2 over the same
 * memory is refused (REMOTE_ACCESS, nothing written, the connection
 * ends); a key of PD 1 is written.  A PD tag beyond 16 bits is refused
 * for a key and for a QP.  Before PD tags the device compared PASIDs
 * only, and the PD-2 key was written through PD 1's QP.
 */
static void test_pd_tag(void)
{
    Pair *p = pair_start();
    const uint32_t len = 4 * KiB;
    uint8_t mac_a[6], mac_b[6];
    uint64_t a_src, b_pa, compl, bytes;
    g_autofree uint8_t *data = NULL;
    uint32_t a_psn, b_psn, rkey, i;
    QPldmaQPAttr at;
    QPldmaRing r;

    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    a_src = alloc_pa(&p->a, len);
    b_pa = alloc_pa(&p->b, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    g_assert_cmpuint(qpldma_key_register_pd(&p->b.d, 3, 0, 0x10000, b_pa,
                                            len, PLDMA_KEY_ACC_WRITE, NULL),
                     ==, PLDMA_KEY_ST_BAD_PASID);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), 0, 0, 0);
    at.pd_tag = 0x10000;
    at.state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&p->b.d, 0, PLDMA_QPA_REQ_INIT, &at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_RESET);

    for (i = 0; i < 2; i++) {
        uint32_t tag = i ? 1 : 2;

        a_psn = rand_psn();
        b_psn = rand_psn();
        attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), b_psn, a_psn, 0);
        at.pd_tag = 1;
        qp_connect(&p->b, 0, &at);
        qpldma_qp_query(&p->b.d, 0, &at);
        g_assert_cmpuint(at.pd_tag, ==, 1);
        attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), a_psn, b_psn, 0);
        qp_connect(&p->a, 0, &at);
        ring_init(&p->a, &r, 0);
        g_assert_cmpuint(qpldma_key_register_pd(&p->b.d, 3, 0, tag, b_pa,
                                                len, PLDMA_KEY_ACC_WRITE,
                                                &rkey), ==, PLDMA_KEY_ST_OK);
        compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_pa, rkey);
        if (tag == 2) {
            g_assert_cmpuint(wait_compl(p, compl, NULL), ==,
                             PLDMA_ST_REMOTE_ACCESS);
            g_assert_true(qpldma_mem_zero(p->b.qts, b_pa, len));
            g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_ERR);
            qp_reset(&p->a, 0);
            qp_reset(&p->b, 0);
        } else {
            g_assert_cmpuint(wait_compl(p, compl, &bytes), ==,
                             PLDMA_ST_SUCCESS);
            g_assert_cmpuint(bytes, ==, len);
            qpldma_mem_check(p->b.qts, b_pa, data, len);
        }
    }
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_ACCESS), ==, 1);
    pair_stop(p);
}

static void test_reset_reconnect(void)
{
    Pair *p = pair_start();
    const uint32_t len = 16 * KiB;
    uint32_t a_psn, b_psn, rkey, qpn, dups;
    g_autofree uint8_t *d1 = NULL;
    g_autofree uint8_t *d2 = NULL;
    uint64_t a_src, b_pa, compl, bytes;
    QPldmaRing r;

    pair_connect(p, &a_psn, &b_psn);
    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    b_pa = alloc_pa(&p->b, len);
    rkey = key_register(&p->b, 0, 0, b_pa, len, PLDMA_KEY_ACC_WRITE);
    d1 = qpldma_mem_random(p->a.qts, a_src, len);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_pa, rkey);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(p->b.qts, b_pa, d1, len);

    qpn = qpldma_qpn(&p->a.d, 0);
    qpldma_wr(&p->a.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_RESET);
    g_assert_cmphex(qpldma_qpn(&p->a.d, 0), !=, qpn);

    /* B's QP goes through RESET too (a new QPN), then both reconnect */
    qp_reset(&p->b, 0);
    dups = ncnt(&p->b, PLDMA_NCNT_DUPS);
    pair_connect(p, &a_psn, &b_psn);
    ring_init(&p->a, &r, 0);
    d2 = qpldma_mem_random(p->a.qts, a_src, len);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_pa, rkey);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, b_pa, d2, len);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_DUPS), ==, dups);
    pair_stop(p);
}

void pldma_qp_transfer_register(void)
{
    qtest_add_func("/pldma-qp/write-read", test_write_read);
    qtest_add_func("/pldma-qp/not-ready", test_not_ready);
    qtest_add_func("/pldma-qp/timeout-err", test_timeout_err);
    qtest_add_func("/pldma-qp/responder-fault", test_responder_fault);
    qtest_add_func("/pldma-qp/reset-reconnect", test_reset_reconnect);
    qtest_add_func("/pldma-qp/pd-tag", test_pd_tag);
}
