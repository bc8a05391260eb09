/*
 * The PLDMA's CQs and SEND/RECV between two QEMUs: CQ configuration,
 * arming, overflow, wrap, zero-length messages
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

/*
 * CQ create, bad configurations, destroy refused while a QP uses it, the
 * QP attributes RQ and CQ, a device reset
 */
static void test_cq_config(void)
{
    Pair *p = pair_start();
    Node *a = &p->a;
    uint64_t ring = alloc_pa(a, 64 * PLDMA_CQE_SIZE);
    uint8_t mac[6] = { 0x52, 0x54, 0, 0, 0, 9 };
    QPldmaQPAttr at, q;
    uint32_t mask = PLDMA_QPA_REQ_INIT | PLDMA_QPA_RQ | PLDMA_QPA_CQ;

    g_assert_true(qpldma_rd(&a->d, PLDMA_CAP) & PLDMA_CAP_CQ);
    g_assert_cmpuint(qpldma_rd(&a->d, PLDMA_CQ_NUM), ==, 32);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 32, ring, 64, 0), ==,
                     PLDMA_CQ_ST_BAD_INDEX);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 3, ring + 16, 64, 0), ==,
                     PLDMA_CQ_ST_BAD_CONFIG);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 3, ring, 48, 0), ==,
                     PLDMA_CQ_ST_BAD_CONFIG);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 3, ring, 1, 0), ==,
                     PLDMA_CQ_ST_BAD_CONFIG);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 3, ring, 131072, 0), ==,
                     PLDMA_CQ_ST_BAD_CONFIG);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 3, ring, 64, 0x40000000), ==,
                     PLDMA_CQ_ST_BAD_CONFIG);
    g_assert_cmpuint(qpldma_cq_reg(&a->d, 3, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_NONE);
    qpldma_wr(&a->d, PLDMA_CQ_CMD, 7);
    g_assert_cmpuint(qpldma_rd(&a->d, PLDMA_CQ_STATUS), ==,
                     PLDMA_CQ_ST_BAD_CMD);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 3, ring, 64, 0), ==,
                     PLDMA_CQ_ST_OK);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 3, ring, 64, 0), ==,
                     PLDMA_CQ_ST_BUSY);
    g_assert_cmpuint(qpldma_cq_reg(&a->d, 3, PLDMA_CQ_PI), ==, 0);
    g_assert_cmpuint(qpldma_cq_create(&a->d, 4, ring, 64,
                                      5 | PLDMA_CHB_PASID_EN), ==,
                     PLDMA_CQ_ST_OK);

    /* QP attributes: CQs ACTIVE and of the QP's PD, an RQ in range */
    attr_to(&at, mac, IP_B, 0x1234, 1, 2, 0);
    at.state = PLDMA_QPS_INIT;
    at.rq_base = alloc_pa(a, RQ_SIZE * PLDMA_RWQE_SIZE);
    at.rq_size = RQ_SIZE;
    at.send_cq = 3;
    at.recv_cq = 4;         /* another PD */
    refused(a, 0, mask, &at, PLDMA_QP_ST_BAD_ATTR);
    at.recv_cq = 5;         /* not created */
    refused(a, 0, mask, &at, PLDMA_QP_ST_BAD_ATTR);
    at.recv_cq = PLDMA_CQ_NONE;
    at.rq_size = 3;
    refused(a, 0, mask, &at, PLDMA_QP_ST_BAD_ATTR);
    at.rq_size = 8192;
    refused(a, 0, mask, &at, PLDMA_QP_ST_BAD_ATTR);
    at.rq_size = RQ_SIZE;
    at.rq_base += 32;
    refused(a, 0, mask, &at, PLDMA_QP_ST_BAD_ATTR);
    at.rq_base -= 32;
    g_assert_cmpuint(qpldma_qp_modify(&a->d, 0, mask, &at), ==,
                     PLDMA_QP_ST_OK);
    qpldma_qp_query(&a->d, 0, &q);
    g_assert_cmphex(q.rq_base, ==, at.rq_base);
    g_assert_cmpuint(q.rq_size, ==, RQ_SIZE);
    g_assert_cmpuint(q.send_cq, ==, 3);
    g_assert_cmpuint(q.recv_cq, ==, PLDMA_CQ_NONE);
    /* only at RESET->INIT */
    at.state = PLDMA_QPS_INIT;
    refused(a, 0, PLDMA_QPA_STATE | PLDMA_QPA_CQ, &at, PLDMA_QP_ST_BAD_ATTR);

    g_assert_cmpuint(qpldma_cq_destroy(&a->d, 3), ==, PLDMA_CQ_ST_BUSY);
    g_assert_cmpuint(qpldma_cq_reg(&a->d, 3, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_ACTIVE);
    /* the RQ doorbell: bounds-checked, QP_RQ_HEAD */
    qpldma_ch_wr(&a->d, 0, PLDMA_CH_RQ_TAIL, RQ_SIZE);
    g_assert_cmpuint(qpldma_ch_rd(&a->d, 0, PLDMA_CH_RQ_TAIL), ==, 0);
    qpldma_ch_wr(&a->d, 0, PLDMA_CH_RQ_TAIL, 5);
    g_assert_cmpuint(qpldma_ch_rd(&a->d, 0, PLDMA_CH_RQ_TAIL), ==, 5);
    g_assert_cmpuint(qpldma_ch_rd(&a->d, 0, PLDMA_CH_RQ_HEAD), ==, 0);
    qpldma_wr(&a->d, PLDMA_QP_SEL, 0);
    g_assert_cmpuint(qpldma_rd(&a->d, PLDMA_QP_RQ_HEAD), ==, 0);
    /* no RECV fault to resolve */
    qpldma_wr(&a->d, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_rd(&a->d, PLDMA_QP_STATUS), ==,
                     PLDMA_QP_ST_BAD_STATE);

    qp_reset(a, 0);
    g_assert_cmpuint(qpldma_cq_destroy(&a->d, 3), ==, PLDMA_CQ_ST_OK);
    g_assert_cmpuint(qpldma_cq_reg(&a->d, 3, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_NONE);
    /* a device reset destroys every CQ */
    qpldma_wr(&a->d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    g_assert_cmpuint(qpldma_cq_reg(&a->d, 4, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_NONE);
    pair_stop(p);
}

/* A SEND of @len bytes from A into a WQE of three entries on B */
static void send_recv(Pair *p, Side *sa, Side *sb, uint8_t op, uint32_t len,
                      uint8_t flags, uint64_t b_va_off)
{
    uint32_t l[3], a_qpn = qpldma_qpn(&p->a.d, 0);
    uint32_t b_qpn = qpldma_qpn(&p->b.d, 0), imm = 0, cqf = 0;
    uint64_t b_pa[3], addr[3], src, compl, bytes, wr_id, cookie;
    g_autofree uint8_t *data = NULL;
    uint8_t e[PLDMA_CQE_SIZE];
    uint32_t off, i;

    /* the first entry gets a third, the second a third, the last the rest */
    l[0] = len / 3;
    l[1] = len / 3;
    l[2] = len - l[0] - l[1] + 100;     /* room to spare */
    for (i = 0; i < 3; i++) {
        b_pa[i] = alloc_pa(&p->b, l[i] + 1);
        addr[i] = b_pa[i] + b_va_off;
    }
    src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, src, len);
    wr_id = g_test_rand_int() | (uint64_t)g_test_rand_int() << 32;
    cookie = ~wr_id;
    post_recv(&p->b, sb, wr_id, 3, addr, l);
    if (op == PLDMA_OP_SEND_IMM) {
        imm = IMM_WIRE;
        cqf |= PLDMA_CQE_F_IMM;
    }
    if (flags & PLDMA_DF_SOLICITED) {
        cqf |= PLDMA_CQE_F_SOLICITED;
    }
    compl = post_op(&p->a, sa, op, flags | PLDMA_DF_SIGNALED, len, src, 0, 0,
                    imm, cookie);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    wait_cqe(p, &p->a, &sa->scq, e);
    check_cqe(e, cookie, PLDMA_WC_SEND, PLDMA_WC_ST_SUCCESS, len, a_qpn,
              b_qpn, 0, 0, 0);
    wait_cqe(p, &p->b, &sb->rcq, e);
    check_cqe(e, wr_id, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len, b_qpn, a_qpn,
              cqf, imm, 0);
    for (off = 0, i = 0; i < 3 && off < len; i++) {
        uint32_t n = MIN(l[i], len - off);

        qpldma_mem_check(p->b.qts, b_pa[i], data + off, n);
        off += n;
    }
    /* nothing past the message */
    g_assert_true(qpldma_mem_zero(p->b.qts, b_pa[2] + (len - l[0] - l[1]),
                                  100));
}

/* SEND / RECV 1 B .. 1 MiB, scattered; SEND and WRITE with immediate */
static void test_send_recv(void)
{
    static const uint32_t lens[] = { 1, 3, 1024, 3000, 64 * KiB + 5, MiB };
    Pair *p = pair_start();
    uint32_t a_qpn, b_qpn, len = 5000, rkey, i;
    uint64_t src, b_pa, compl, bytes, wr_id = 0x77;
    g_autofree uint8_t *data = NULL;
    uint8_t e[PLDMA_CQE_SIZE];
    Side sa, sb;

    pair_connect_cq(p, &sa, &sb, 0, CQ_SIZE);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    for (i = 0; i < ARRAY_SIZE(lens); i++) {
        send_recv(p, &sa, &sb, PLDMA_OP_SEND, lens[i], 0, 0);
    }
    send_recv(p, &sa, &sb, PLDMA_OP_SEND_IMM, 2500, PLDMA_DF_SOLICITED, 0);
    send_recv(p, &sa, &sb, PLDMA_OP_SEND, 10, PLDMA_DF_SOLICITED, 0);

    /* WRITE with immediate: the data at the key, a WQE for the CQE */
    src = alloc_pa(&p->a, len);
    b_pa = alloc_pa(&p->b, len);
    data = qpldma_mem_random(p->a.qts, src, len);
    rkey = key_register(&p->b, 0, 0, b_pa, len, PLDMA_KEY_ACC_WRITE);
    post_recv(&p->b, &sb, wr_id, 0, NULL, NULL);
    compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE_IMM, PLDMA_DF_SIGNALED,
                    len, src, b_pa, rkey, IMM_WIRE, 0x99);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(p->b.qts, b_pa, data, len);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 0x99, PLDMA_WC_RDMA_WRITE, PLDMA_WC_ST_SUCCESS, len, a_qpn,
              b_qpn, 0, 0, 0);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, wr_id, PLDMA_WC_RECV_RDMA_WITH_IMM, PLDMA_WC_ST_SUCCESS, len,
              b_qpn, a_qpn, PLDMA_CQE_F_IMM, IMM_WIRE, 0);

    /* not signaled: the record, no CQE; IMM on a plain WRITE: BAD_DESC */
    compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE, 0, len, src, b_pa, rkey,
                    0, 0x9a);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE, PLDMA_DF_SIGNALED, len,
                    src, b_pa, rkey, 1, 0x9b);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_BAD_DESC);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 0x9b, PLDMA_WC_RDMA_WRITE, PLDMA_WC_ST_LOC_QP_OP_ERR, 0,
              a_qpn, b_qpn, 0, 0, PLDMA_ST_BAD_DESC);
    g_assert_false(qpldma_cq_poll(&p->a.d, &sa.scq, e));
    g_assert_false(qpldma_cq_poll(&p->b.d, &sb.rcq, e));
    g_assert_cmpuint(qpldma_cq_reg(&p->b.d, 1, PLDMA_CQ_PI), ==,
                     ARRAY_SIZE(lens) + 3);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_QP_DROPPED), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_QP_DROPPED), ==, 0);
    pair_stop(p);
}

/*
 * A SEND with no receive WQE posted: RNR NAKs (counted) until one is;
 * then the message lands.  A message longer than its WQE: LOC_LEN_ERR on
 * the receiver, REM_INV_REQ_ERR on the sender; a bad WQE: LOC_QP_OP_ERR.
 */
static void test_send_errors(void)
{
    Pair *p = pair_start();
    uint32_t a_qpn, b_qpn, l = 2000, len = 3000, bad[3] = { 1, 1, 1 };
    uint64_t src, buf, compl, bytes, bad_addr[3] = { 0 };
    int i;
    g_autofree uint8_t *data = NULL;
    uint8_t e[PLDMA_CQE_SIZE];
    QPldmaQPAttr q;
    Side sa, sb;

    pair_connect_cq(p, &sa, &sb, 0, CQ_SIZE);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, src, len);

    /* no WQE: RNR NAK, counted; the message waits */
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, PLDMA_DF_SIGNALED, len, src,
                    0, 0, 0, 1);
    /* (until A has the RNR NAK too: it crosses the link after B counts) */
    for (i = 0; i < WAIT_STEPS && (!ncnt(&p->b, PLDMA_NCNT_RQ_EMPTY) ||
                                   !ncnt(&p->a, PLDMA_NCNT_NAK_RX_RNR)); i++) {
        step(p);
    }
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_RQ_EMPTY), ==, 1);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_NAK_RX_RNR), >=, 1);
    g_assert_cmpuint(qtest_readl(p->a.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    g_assert_false(qpldma_cq_poll(&p->b.d, &sb.rcq, e));
    buf = alloc_pa(&p->b, len);
    post_recv(&p->b, &sb, 0x51, 1, &buf, &len);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(p->b.qts, buf, data, len);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x51, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len, b_qpn, a_qpn,
              0, 0, 0);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 1, PLDMA_WC_SEND, PLDMA_WC_ST_SUCCESS, len, a_qpn, b_qpn, 0,
              0, 0);

    /* longer than the WQE */
    buf = alloc_pa(&p->b, l);
    post_recv(&p->b, &sb, 0x52, 1, &buf, &l);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, len, src, 0, 0, 0, 2);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_INVALID);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x52, PLDMA_WC_RECV, PLDMA_WC_ST_LOC_LEN_ERR, 0, b_qpn,
              a_qpn, 0, 0, 0);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 2, PLDMA_WC_SEND, PLDMA_WC_ST_REM_INV_REQ_ERR, 0, a_qpn,
              b_qpn, 0, 0, PLDMA_ST_REMOTE_INVALID);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_INVALID), ==, 1);
    /* the NAK is fatal to the requester (IBA, rxe), and to the responder */
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_ERR);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, PLDMA_DF_SIGNALED, 100, src,
                    0, 0, 0, 7);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_FLUSHED);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 7, PLDMA_WC_SEND, PLDMA_WC_ST_WR_FLUSH_ERR, 0, a_qpn,
              b_qpn, 0, 0, PLDMA_ST_FLUSHED);
    pair_reconnect_cq(p, &sa, &sb);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);

    /* a bad WQE (4 entries) */
    post_recv(&p->b, &sb, 0x53, 4, bad_addr, bad);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, 100, src, 0, 0, 0, 3);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_INVALID);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x53, PLDMA_WC_RECV, PLDMA_WC_ST_LOC_QP_OP_ERR, 0, b_qpn,
              a_qpn, 0, 0, 0);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 3, PLDMA_WC_SEND, PLDMA_WC_ST_REM_INV_REQ_ERR, 0, a_qpn,
              b_qpn, 0, 0, PLDMA_ST_REMOTE_INVALID);

    /* A's QP in ERR again; a new connection carries a SEND */
    qpldma_qp_query(&p->a.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_ERR);
    pair_reconnect_cq(p, &sa, &sb);
    send_recv(p, &sa, &sb, PLDMA_OP_SEND, 4000, 0, 0);
    qpldma_wr(&p->b.d, PLDMA_QP_SEL, 0);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_QP_RQ_HEAD), ==, sb.rq_tail);
    pair_stop(p);
}

/*
 * Zero-length messages, as IBA has them: a SEND (with immediate) of no
 * bytes is one SEND Only packet without payload that consumes a receive
 * WQE, which completes RECV with BYTE_LEN 0; an RDMA WRITE of no bytes is
 * one WRITE Only whose R_Key and VA are not checked (C9-88: rkey 0 here),
 * with immediate it consumes a WQE (RECV_RDMA_WITH_IMM, BYTE_LEN 0).
 * The sender's completions say 0 bytes; nothing is written.  A
 * zero-length RDMA READ is one READ request of DMA length 0 (its R_Key
 * and VA not checked: rkey 0 here), answered by one READ Response Only
 * without payload: SUCCESS, 0 bytes.  Before, it was BAD_LENGTH, nothing
 * sent.
 */
static void test_zero_length(void)
{
    Pair *p = pair_start();
    static const uint8_t ops[4] = {
        PLDMA_OP_SEND, PLDMA_OP_SEND_IMM, PLDMA_OP_RDMA_WRITE,
        PLDMA_OP_RDMA_WRITE_IMM,
    };
    uint32_t a_qpn, b_qpn, l = 256, tx0, btx0, i;
    uint64_t buf, compl, bytes;
    uint8_t e[PLDMA_CQE_SIZE];
    Side sa, sb;

    pair_connect_cq(p, &sa, &sb, 0, CQ_SIZE);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    buf = alloc_pa(&p->b, l);
    for (i = 0; i < 4; i++) {
        bool imm = ops[i] == PLDMA_OP_SEND_IMM ||
                   ops[i] == PLDMA_OP_RDMA_WRITE_IMM;
        bool recv = ops[i] != PLDMA_OP_RDMA_WRITE;
        bool send = ops[i] == PLDMA_OP_SEND || ops[i] == PLDMA_OP_SEND_IMM;

        if (recv) {
            post_recv(&p->b, &sb, 0x70 + i, 1, &buf, &l);
        }
        tx0 = ncnt(&p->a, PLDMA_NCNT_TX_FRAMES);
        compl = post_op(&p->a, &sa, ops[i], PLDMA_DF_SIGNALED, 0, 0, 0, 0,
                        imm ? IMM_WIRE : 0, 0x80 + i);
        g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
        g_assert_cmpuint(bytes, ==, 0);
        g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_TX_FRAMES), ==, tx0 + 1);
        wait_cqe(p, &p->a, &sa.scq, e);
        check_cqe(e, 0x80 + i, send ? PLDMA_WC_SEND : PLDMA_WC_RDMA_WRITE,
                  PLDMA_WC_ST_SUCCESS, 0, a_qpn, b_qpn, 0, 0, 0);
        if (recv) {
            wait_cqe(p, &p->b, &sb.rcq, e);
            check_cqe(e, 0x70 + i, send ? PLDMA_WC_RECV
                                        : PLDMA_WC_RECV_RDMA_WITH_IMM,
                      PLDMA_WC_ST_SUCCESS, 0, b_qpn, a_qpn,
                      imm ? PLDMA_CQE_F_IMM : 0, imm ? IMM_WIRE : 0, 0);
        }
        g_assert_false(qpldma_cq_poll(&p->b.d, &sb.rcq, e));
    }
    g_assert_true(qpldma_mem_zero(p->b.qts, buf, l));
    qpldma_wr(&p->b.d, PLDMA_QP_SEL, 0);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_QP_RQ_HEAD), ==, sb.rq_tail);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_INVALID), ==, 0);

    /*
     * A zero-length READ: one request, one response without payload,
     * SUCCESS with 0 bytes; nothing is written at its destination
     */
    tx0 = ncnt(&p->a, PLDMA_NCNT_TX_FRAMES);
    btx0 = ncnt(&p->b, PLDMA_NCNT_TX_FRAMES);
    compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_READ, PLDMA_DF_SIGNALED, 0,
                    buf, 0, 0, 0, 0x90);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, 0);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 0x90, PLDMA_WC_RDMA_READ, PLDMA_WC_ST_SUCCESS, 0, a_qpn,
              b_qpn, 0, 0, 0);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_TX_FRAMES), ==, tx0 + 1);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_TX_FRAMES), ==, btx0 + 1);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_INVALID) +
                     ncnt(&p->b, PLDMA_NCNT_NAK_TX_ACCESS), ==, 0);
    g_assert_false(qpldma_cq_poll(&p->a.d, &sa.scq, e));

    /* and the QP goes on: a SEND after it arrives */
    post_recv(&p->b, &sb, 0x74, 1, &buf, &l);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, 0, 0, 0, 0, 0, 0x91);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x74, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, 0, b_qpn, a_qpn,
              0, 0, 0);
    g_assert_true(qpldma_mem_zero(p->b.qts, buf, l));
    pair_stop(p);
}

/*
 * Arming: fires once, at once when CQEs are not consumed, ARM_SOL only
 * for a solicited or error CQE; a doorbell from a channel of another
 * PASID is ignored
 */
static void test_cq_arm(void)
{
    Pair *p = pair_start();
    uint32_t len = 512, rkey;
    uint64_t src, b_pa, compl;
    uint8_t e[PLDMA_CQE_SIZE];
    Side sa, sb;
    int i;

    pair_connect_cq(p, &sa, &sb, 0, CQ_SIZE);
    src = alloc_pa(&p->a, len);
    b_pa = alloc_pa(&p->b, len);
    rkey = key_register(&p->b, 0, 0, b_pa, len, PLDMA_KEY_ACC_WRITE);
    qpldma_wr(&p->a.d, PLDMA_IRQ_MASK, PLDMA_IRQ_CQ);

    /* a doorbell of channel 1, bound to another PASID: ignored */
    qpldma_wr(&p->a.d, PLDMA_CH_BIND(1) + PLDMA_CHB_PASID,
              5 | PLDMA_CHB_PASID_EN);
    qpldma_cq_db(&p->a.d, 1, PLDMA_CQ_DB_CMD_ARM, 0, 0);
    compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE, PLDMA_DF_SIGNALED, len,
                    src, b_pa, rkey, 0, 1);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    wait_cqe(p, &p->a, &sa.scq, e);
    g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_CQ_EVENTS_LO), ==, 0);
    g_assert_false(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_CQ);
    /* ... and its consumer index too */
    qpldma_cq_db(&p->a.d, 1, PLDMA_CQ_DB_CMD_CI, 0, 1);
    g_assert_cmpuint(qpldma_cq_reg(&p->a.d, 0, PLDMA_CQ_CI), ==, 0);
    /* a CI beyond what was written: ignored */
    qpldma_cq_db(&p->a.d, 0, PLDMA_CQ_DB_CMD_CI, 0, 2);
    g_assert_cmpuint(qpldma_cq_reg(&p->a.d, 0, PLDMA_CQ_CI), ==, 0);

    /* armed with a CQE not consumed (CI 0 < PI 1): fires at once */
    qpldma_cq_db(&p->a.d, 0, PLDMA_CQ_DB_CMD_ARM, 0, 0);
    g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_CQ_EVENTS_LO), ==, 1);
    g_assert_true(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_CQ);
    qpldma_wr(&p->a.d, PLDMA_CQ_EVENTS_LO, 1);
    g_assert_false(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_CQ);

    /* armed with everything consumed: the next CQE fires, once */
    qpldma_cq_db(&p->a.d, 0, PLDMA_CQ_DB_CMD_ARM, 0, 1);
    g_assert_cmpuint(qpldma_cq_reg(&p->a.d, 0, PLDMA_CQ_CI), ==, 1);
    g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_CQ_EVENTS_LO), ==, 0);
    for (i = 0; i < 2; i++) {
        compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE, PLDMA_DF_SIGNALED,
                        len, src, b_pa, rkey, 0, 2 + i);
        g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
        wait_cqe(p, &p->a, &sa.scq, e);
        if (i == 1) {
            break;          /* the second CQE: not armed any more */
        }
        g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_CQ_EVENTS_LO), ==, 1);
        g_assert_true(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_CQ);
        /* W1C of IRQ_STATUS alone: set while CQ_EVENTS has the bit */
        qpldma_wr(&p->a.d, PLDMA_IRQ_STATUS, PLDMA_IRQ_CQ);
        g_assert_true(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_CQ);
        qpldma_wr(&p->a.d, PLDMA_CQ_EVENTS_LO, 1);
        g_assert_false(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_CQ);
    }
    g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_CQ_EVENTS_LO), ==, 0);
    g_assert_false(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_CQ);

    /* ARM_SOL on B's receive CQ: a plain SEND does not fire, SE does */
    qpldma_cq_db(&p->b.d, 0, PLDMA_CQ_DB_CMD_ARM_SOL, 1, 0);
    send_recv(p, &sa, &sb, PLDMA_OP_SEND, 100, 0, 0);
    g_assert_cmphex(qpldma_rd(&p->b.d, PLDMA_CQ_EVENTS_LO), ==, 0);
    qpldma_cq_db(&p->b.d, 0, PLDMA_CQ_DB_CMD_ARM_SOL, 1, 1);
    send_recv(p, &sa, &sb, PLDMA_OP_SEND, 100, PLDMA_DF_SOLICITED, 0);
    g_assert_cmphex(qpldma_rd(&p->b.d, PLDMA_CQ_EVENTS_LO), ==, 2);
    /* ARM_SOL on A's send CQ: an error CQE fires */
    qpldma_cq_db(&p->a.d, 0, PLDMA_CQ_DB_CMD_ARM_SOL, 0, sa.scq.ci);
    compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE, 0, len, src, b_pa,
                    rkey ^ 0x100, 0, 9);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_ACCESS);
    wait_cqe(p, &p->a, &sa.scq, e);
    g_assert_cmpuint(e[PLDMA_CQE_STATUS], ==, PLDMA_WC_ST_REM_ACCESS_ERR);
    g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_CQ_EVENTS_LO), ==, 1);
    pair_stop(p);
}

/*
 * CQ overflow: ERROR, CQ_ERRORS, its QP to ERR (QP_ERRORS); then flush:
 * the QP's posted receive WQEs complete WR_FLUSH_ERR, its SQ's
 * descriptors PLDMA_ST_FLUSHED
 */
static void test_cq_overflow_flush(void)
{
    Pair *p = pair_start();
    uint32_t len = 256, rkey, a_qpn, b_qpn, l = 64, i;
    uint64_t src, b_pa, compl, buf;
    uint8_t e[PLDMA_CQE_SIZE];
    QPldmaQPAttr at = { .state = PLDMA_QPS_ERR };
    Side sa, sb;

    pair_connect_cq(p, &sa, &sb, 0, 2);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    src = alloc_pa(&p->a, len);
    b_pa = alloc_pa(&p->b, len);
    rkey = key_register(&p->b, 0, 0, b_pa, len, PLDMA_KEY_ACC_WRITE);
    buf = alloc_pa(&p->a, l);
    post_recv(&p->a, &sa, 0x100, 1, &buf, &l);
    post_recv(&p->a, &sa, 0x101, 1, &buf, &l);
    for (i = 0; i < 3; i++) {
        compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE, PLDMA_DF_SIGNALED,
                        len, src, b_pa, rkey, 0, 0x10 + i);
        g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    }
    g_assert_cmpuint(qpldma_cq_reg(&p->a.d, 0, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_ERROR);
    g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_CQ_ERRORS_LO), ==, 1);
    g_assert_cmpuint(qpldma_cq_reg(&p->a.d, 0, PLDMA_CQ_PI), ==, 2);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_QP_ERRORS_LO), ==, 1);
    g_assert_cmphex(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) &
                    (PLDMA_IRQ_CQ_ERROR | PLDMA_IRQ_QP_ERROR), ==,
                    PLDMA_IRQ_CQ_ERROR | PLDMA_IRQ_QP_ERROR);
    qpldma_wr(&p->a.d, PLDMA_QP_ERRORS_LO, 1);
    qpldma_wr(&p->a.d, PLDMA_CQ_ERRORS_LO, 1);
    g_assert_false(qpldma_rd(&p->a.d, PLDMA_IRQ_STATUS) &
                   (PLDMA_IRQ_CQ_ERROR | PLDMA_IRQ_QP_ERROR));
    /* A's receive WQEs were flushed to its receive CQ */
    for (i = 0; i < 2; i++) {
        wait_cqe(p, &p->a, &sa.rcq, e);
        check_cqe(e, 0x100 + i, PLDMA_WC_RECV, PLDMA_WC_ST_WR_FLUSH_ERR, 0,
                  a_qpn, b_qpn, 0, 0, 0);
    }
    qpldma_wr(&p->a.d, PLDMA_QP_SEL, 0);
    g_assert_cmpuint(qpldma_rd(&p->a.d, PLDMA_QP_RQ_HEAD), ==, 2);
    /* a later descriptor: flushed, never sent */
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, PLDMA_DF_SIGNALED, len, src,
                    0, 0, 0, 0x20);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_FLUSHED);
    /* a CQ in use cannot be destroyed, even in ERROR */
    g_assert_cmpuint(qpldma_cq_destroy(&p->a.d, 0), ==, PLDMA_CQ_ST_BUSY);

    /* B: modified to ERR with WQEs posted, and one posted after */
    post_recv(&p->b, &sb, 0x200, 1, &b_pa, &l);
    post_recv(&p->b, &sb, 0x201, 1, &b_pa, &l);
    g_assert_cmpuint(qpldma_qp_modify(&p->b.d, 0, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    post_recv(&p->b, &sb, 0x202, 1, &b_pa, &l);
    for (i = 0; i < 3; i++) {
        wait_cqe(p, &p->b, &sb.rcq, e);
        check_cqe(e, 0x200 + i, PLDMA_WC_RECV, PLDMA_WC_ST_WR_FLUSH_ERR, 0,
                  b_qpn, a_qpn, 0, 0, 0);
    }
    compl = post_op(&p->b, &sb, PLDMA_OP_SEND, 0, len, b_pa, 0, 0, 0, 0x30);
    g_assert_cmpuint(qpldma_wait_compl(&p->b.d, compl, step, p, WAIT_STEPS,
                                       NULL), ==, PLDMA_ST_FLUSHED);
    wait_cqe(p, &p->b, &sb.scq, e);
    check_cqe(e, 0x30, PLDMA_WC_SEND, PLDMA_WC_ST_WR_FLUSH_ERR, 0, b_qpn,
              a_qpn, 0, 0, PLDMA_ST_FLUSHED);
    /* modified to ERR by the driver: not in QP_ERRORS */
    g_assert_cmphex(qpldma_rd(&p->b.d, PLDMA_QP_ERRORS_LO), ==, 0);
    pair_stop(p);
}

/*
 * A CQ of 4 entries taken round three times: the owner bit flips at every
 * wrap, the consumer's doorbell makes room, no overflow
 */
static void test_cq_wrap(void)
{
    Pair *p = pair_start();
    uint32_t len = 128, rkey, i;
    uint64_t src, b_pa, compl;
    uint8_t e[PLDMA_CQE_SIZE];
    Side sa, sb;

    pair_connect_cq(p, &sa, &sb, 0, 4);
    src = alloc_pa(&p->a, len);
    b_pa = alloc_pa(&p->b, len);
    rkey = key_register(&p->b, 0, 0, b_pa, len, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < 10; i++) {
        compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE, PLDMA_DF_SIGNALED,
                        len, src, b_pa, rkey, 0, 0x1000 + i);
        g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
        wait_cqe(p, &p->a, &sa.scq, e);
        g_assert_cmphex(ldq_le_p(e + PLDMA_CQE_WR_ID), ==, 0x1000 + i);
        g_assert_cmpuint(e[PLDMA_CQE_OWNER], ==, !((i / 4) & 1));
        g_assert_false(qpldma_cq_poll(&p->a.d, &sa.scq, e));
        qpldma_cq_db(&p->a.d, 0, PLDMA_CQ_DB_CMD_CI, 0, sa.scq.ci);
    }
    g_assert_cmpuint(qpldma_cq_reg(&p->a.d, 0, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_ACTIVE);
    g_assert_cmpuint(qpldma_cq_reg(&p->a.d, 0, PLDMA_CQ_PI), ==, 10);
    g_assert_cmpuint(qpldma_cq_reg(&p->a.d, 0, PLDMA_CQ_CI), ==, 10);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_RTS);
    pair_stop(p);
}

void pldma_qp_cq_register(void)
{
    qtest_add_func("/pldma-qp/cq-config", test_cq_config);
    qtest_add_func("/pldma-qp/send-recv", test_send_recv);
    qtest_add_func("/pldma-qp/send-errors", test_send_errors);
    qtest_add_func("/pldma-qp/zero-length", test_zero_length);
    qtest_add_func("/pldma-qp/cq-arm", test_cq_arm);
    qtest_add_func("/pldma-qp/cq-overflow-flush", test_cq_overflow_flush);
    qtest_add_func("/pldma-qp/cq-wrap", test_cq_wrap);
}
