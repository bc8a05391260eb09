/*
 * The PLDMA QP's receive queue: faults on receive buffers (report and
 * stall), RNR, WQEs used once, parked SENDs; shared receive queues
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
 * A RECV buffer not mapped (report mode): a fault record with
 * FR_F_RECV, DESC the QP; mapped and QP_CMD_RESOLVED, the message
 * completes whole in the same WQE
 */
static void test_recv_fault(void)
{
    const uint32_t len = 48 * KiB, hole = 7;
    Pair *p = pair_start_smmu(true);
    uint32_t pd = PASID | PLDMA_CHB_PASID_EN, l[2], a_qpn, b_qpn;
    uint64_t src, b_pa, b_va, compl, bytes, off, addr[2];
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE], e[PLDMA_CQE_SIZE];
    Side sa, sb;

    pair_connect_cq(p, &sa, &sb, pd, CQ_SIZE);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, src, len);
    b_pa = alloc_pa(&p->b, len);
    b_va = VA_BASE + (b_pa - ALLOC_BASE);
    for (off = 0; off < len; off += PAGE) {
        if (off != hole * PAGE) {
            qsmmu_map(&p->b.s, p->b.pt_root, b_va + off, b_pa + off, true);
        }
    }
    /* two entries: the hole is in the second */
    l[0] = 5 * PAGE;
    l[1] = len - l[0];
    addr[0] = b_va;
    addr[1] = b_va + l[0];
    post_recv(&p->b, &sb, 0x61, 2, addr, l);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, PLDMA_DF_SIGNALED, len, src,
                    0, 0, 0, 0x62);
    qpldma_fq_pop(&p->b.d, p->b.fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_CHANNEL), ==, PLDMA_FR_CH_REMOTE);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV | PLDMA_FR_F_WRITE);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DESC), ==, 0);
    g_assert_cmphex((uint32_t)ldl_le_p(rec + PLDMA_FR_PASID), ==, pd);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, b_va + hole * PAGE);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DONE), ==, hole * PAGE);
    g_assert_cmpuint(qtest_readl(p->a.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    g_assert_false(qpldma_cq_poll(&p->b.d, &sb.rcq, e));
    /* a key's RESOLVED is not the QP's */
    qpldma_key_cmd(&p->b.d, 0, PLDMA_KEY_CMD_RESOLVED);
    qsmmu_map(&p->b.s, p->b.pt_root, b_va + hole * PAGE,
              b_pa + hole * PAGE, true);
    qpldma_wr(&p->b.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&p->b.d, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_QP_STATUS), ==, PLDMA_QP_ST_OK);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, b_pa, data, len);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x61, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len, b_qpn, a_qpn,
              0, 0, 0);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 0x62, PLDMA_WC_SEND, PLDMA_WC_ST_SUCCESS, len, a_qpn, b_qpn,
              0, 0, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_RESUME_TX), >=, 1);

    /* a fault that cannot be resolved: QP_CMD_FAILED */
    b_pa = alloc_pa(&p->b, len);
    b_va = VA_BASE + (b_pa - ALLOC_BASE);
    for (off = 0; off < len; off += PAGE) {
        if (off != hole * PAGE) {
            qsmmu_map(&p->b.s, p->b.pt_root, b_va + off, b_pa + off, true);
        }
    }
    addr[0] = b_va;
    addr[1] = b_va + l[0];
    post_recv(&p->b, &sb, 0x63, 2, addr, l);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, len, src, 0, 0, 0, 0x64);
    qpldma_fq_pop(&p->b.d, p->b.fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV | PLDMA_FR_F_WRITE);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DONE), ==, hole * PAGE);
    qpldma_wr(&p->b.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&p->b.d, PLDMA_QP_CMD, PLDMA_QP_CMD_FAILED);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_QP_STATUS), ==, PLDMA_QP_ST_OK);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_ERROR);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x63, PLDMA_WC_RECV, PLDMA_WC_ST_LOC_PROT_ERR, 0, b_qpn,
              a_qpn, 0, 0, 0);
    g_assert_cmpuint(ldl_le_p(e + PLDMA_CQE_BYTE_LEN), ==, hole * PAGE);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 0x64, PLDMA_WC_SEND, PLDMA_WC_ST_REM_OP_ERR, 0, a_qpn, b_qpn,
              0, 0, PLDMA_ST_REMOTE_ERROR);
    /* the NAK (remote operational error) ends both QPs */
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_ERR);
    pair_stop(p);
}

/*
 * A RECV buffer not mapped, stall mode: the SMMU stalls the access, its
 * RETRY resumes the message in the same WQE
 */
static void test_recv_fault_stall(void)
{
    const uint32_t len = 32 * KiB, hole = 3;
    Pair *p = pair_start_mode(true, true);
    uint32_t pd = PASID | PLDMA_CHB_PASID_EN, a_qpn, b_qpn;
    uint64_t src, b_pa, b_va, compl, bytes, off, ev[4];
    g_autofree uint8_t *data = NULL;
    uint8_t e[PLDMA_CQE_SIZE];
    Side sa, sb;
    int i;

    pair_connect_cq(p, &sa, &sb, pd, CQ_SIZE);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, src, len);
    b_pa = alloc_pa(&p->b, len);
    b_va = VA_BASE + (b_pa - ALLOC_BASE);
    for (off = 0; off < len; off += PAGE) {
        if (off != hole * PAGE) {
            qsmmu_map(&p->b.s, p->b.pt_root, b_va + off, b_pa + off, true);
        }
    }
    post_recv(&p->b, &sb, 0x71, 1, &b_va, &len);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, PLDMA_DF_SIGNALED, len, src,
                    0, 0, 0, 0x72);
    for (i = 0; i < WAIT_STEPS && !qsmmu_pop_event(&p->b.s, ev); i++) {
        step(p);
    }
    g_assert_true(QSMMU_EVT_STALL(ev));
    g_assert_cmphex(QSMMU_EVT_ADDR(ev) & ~(PAGE - 1), ==, b_va + hole * PAGE);
    g_assert_cmpuint(qtest_readl(p->a.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    /* a stall is answered by the SMMU, not by the QP command */
    qpldma_wr(&p->b.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&p->b.d, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_QP_STATUS), ==,
                     PLDMA_QP_ST_BAD_STATE);
    qsmmu_map(&p->b.s, p->b.pt_root, b_va + hole * PAGE, b_pa + hole * PAGE,
              true);
    qsmmu_resume(&p->b.s, SID, QSMMU_EVT_STAG(ev), QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, b_pa, data, len);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x71, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len, b_qpn, a_qpn,
              0, 0, 0);
    wait_cqe(p, &p->a, &sa.scq, e);
    check_cqe(e, 0x72, PLDMA_WC_SEND, PLDMA_WC_ST_SUCCESS, len, a_qpn, b_qpn,
              0, 0, 0);
    pair_stop(p);
}

/*
 * A responder stall belongs to the connection that took it.  It outlived
 * its QP: after a reset and a new connection on the same QP index, the
 * new connection inherited the stall, a valid WRITE from the new peer got
 * RNR NAKs without end, and terminating the old stall sent the new peer
 * NAK Remote Operational Error at PSN 0 (RQ_PSN then read 0).  Now a
 * SEND into an unmapped receive buffer stalls (stall mode); both ends are
 * reset and connected again; a WRITE on the new connection lands with no
 * RNR NAK; the old stall, terminated, sends nothing and moves nothing.
 */
static void test_stall_outlives_qp(void)
{
    uint32_t len = 8 * KiB, pd = PASID | PLDMA_CHB_PASID_EN, rkey, rnr, oper;
    Pair *p = pair_start_mode(true, true);
    uint64_t src, b_pa, b_va, w_pa, w_va, compl, bytes, ev[4];
    g_autofree uint8_t *data = NULL;
    QPldmaQPAttr q;
    Side sa, sb;
    int i;

    pair_connect_cq(p, &sa, &sb, pd, CQ_SIZE);
    src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, src, len);
    b_pa = alloc_pa(&p->b, len);
    b_va = VA_BASE + (b_pa - ALLOC_BASE);       /* not mapped */
    post_recv(&p->b, &sb, 0x81, 1, &b_va, &len);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, len, src, 0, 0, 0, 0x82);
    for (i = 0; i < WAIT_STEPS && !qsmmu_pop_event(&p->b.s, ev); i++) {
        step(p);
    }
    g_assert_true(QSMMU_EVT_STALL(ev));
    /* A gives the SEND up (its QP reset), then both connect again */
    qp_reset(&p->a, 0);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_ERROR);
    pair_reconnect_cq(p, &sa, &sb);

    /* a WRITE on the new connection lands at once */
    w_pa = alloc_pa(&p->b, PAGE);
    w_va = VA_BASE + (w_pa - ALLOC_BASE);
    qsmmu_map(&p->b.s, p->b.pt_root, w_va, w_pa, true);
    rkey = key_register(&p->b, 0, pd, w_va, PAGE, PLDMA_KEY_ACC_WRITE);
    rnr = ncnt(&p->b, PLDMA_NCNT_NAK_TX_RNR);
    compl = post_op(&p->a, &sa, PLDMA_OP_RDMA_WRITE, 0, 1024, src, w_va,
                    rkey, 0, 0x83);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, 1024);
    qpldma_mem_check(p->b.qts, w_pa, data, 1024);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_RNR), ==, rnr);

    /* the old stall ends: nothing is sent for it, nothing moves */
    qpldma_qp_query(&p->b.d, 0, &q);
    oper = ncnt(&p->b, PLDMA_NCNT_NAK_TX_OPERR);
    qsmmu_resume(&p->b.s, SID, QSMMU_EVT_STAG(ev), QSMMU_RESUME_TERM);
    for (i = 0; i < 100; i++) {
        step(p);
    }
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_OPERR), ==, oper);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_RTS);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_RTS);
    {
        QPldmaQPAttr q2;

        qpldma_qp_query(&p->b.d, 0, &q2);
        g_assert_cmphex(q2.rq_psn, ==, q.rq_psn);
    }
    pair_stop(p);
}

/*
 * A receive WQE is completed once.  A WRITE Last with immediate takes the
 * WQE and faults (RNR NAK); once the fault is resolved the same PSN comes
 * again as a WRITE Last without immediate; a SEND Only then consumes the
 * WQE.  The WQE stayed taken by the faulted WRITE: a zero-length WRITE
 * Only with immediate then completed it a second time (two SUCCESS CQEs,
 * one wr_id) and the RQ's HEAD passed its TAIL.  Now that WRITE finds no
 * WQE (RNR NAK, RQ_EMPTY): one CQE, HEAD = TAIL = 1.
 */
static void test_recv_wqe_once(void)
{
    uint32_t pd = PASID | PLDMA_CHB_PASID_EN, rkey, len, psn, l = 1024, e0;
    uint8_t f[2048], pl[4 + 1024], rec[PLDMA_FR_SIZE], e[PLDMA_CQE_SIZE];
    uint64_t pa, va, rpa, rva;
    QPldmaQPAttr at;
    Side sd;
    Peer pe;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_WRITE, true);
    /* the device's QP 0 again, in PASID's PD, with an RQ and CQs */
    qp_reset(&pe.n, 0);
    side_init(&pe.n, &sd, pd, CQ_SIZE);
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe.my_qpn, pe.sq_psn,
            pe.epsn, 0);
    at.pd = pd;
    qp_connect_cq(&pe.n, 0, &at, &sd);
    pe.qpn = qpldma_qpn(&pe.n.d, 0);
    /* the window: its first page mapped, its second not */
    pa = alloc_pa(&pe.n, 2 * PAGE);
    va = VA_BASE + (pa - ALLOC_BASE);
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);
    rkey = key_register(&pe.n, 0, pd, va, 2 * PAGE, PLDMA_KEY_ACC_WRITE);
    rpa = alloc_pa(&pe.n, PAGE);
    rva = VA_BASE + (rpa - ALLOC_BASE);
    qsmmu_map(&pe.n.s, pe.n.pt_root, rva, rpa, true);
    post_recv(&pe.n, &sd, 0xa1, 1, &rva, &l);
    stl_le_p(pl, IMM_WIRE);
    memset(pl + 4, 0x42, 1024);

    /* WRITE First into page 0, WRITE Last with immediate into page 1 */
    len = roce_frame(f, IP_B, 0x06, pe.qpn, pe.epsn, true, va + PAGE - 1024,
                     rkey, 2048, -1, 0, pl + 4, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    len = roce_frame(f, IP_B, 0x09, pe.qpn, (pe.epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl, sizeof(pl));
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    qsmmu_map(&pe.n.s, pe.n.pt_root, va + PAGE, pa + PAGE, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x1f);  /* resend */
    /* the same PSN again, as a WRITE Last without immediate */
    len = roce_frame(f, IP_B, 0x08, pe.qpn, (pe.epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl + 4, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    g_assert_false(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    /* a SEND Only consumes the WQE */
    len = roce_frame(f, IP_B, 0x04, pe.qpn, (pe.epsn + 2) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl + 4, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_true(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    check_cqe(e, 0xa1, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, 256, pe.qpn,
              pe.my_qpn, 0, 0, 0);
    /* a zero-length WRITE Only with immediate: no WQE left, RNR NAK */
    e0 = ncnt(&pe.n, PLDMA_NCNT_RQ_EMPTY);
    len = roce_frame(f, IP_B, 0x0b, pe.qpn, (pe.epsn + 3) & 0xffffff, true,
                     0, 0, 0, -1, 0, pl, 4);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RQ_EMPTY), ==, e0 + 1);
    g_assert_false(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    qpldma_wr(&pe.n.d, PLDMA_QP_SEL, 0);
    g_assert_cmpuint(qpldma_rd(&pe.n.d, PLDMA_QP_RQ_HEAD), ==, 1);
    peer_close(&pe);
}

/*
 * A hostile peer's SENDs: another QPN, PSNs out of the window, a Middle
 * with no First change nothing; then the right one lands
 */
static void test_hostile_send(void)
{
    Peer pe;
    uint8_t f[2048], pl[512], e[PLDMA_CQE_SIZE];
    uint32_t len, d0, psn, l = 1024, syn, i;
    uint64_t buf;
    QPldmaQPAttr at;
    Side sd;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 7 + 1;
    }
    /* the device's QP 0 again, with an RQ and CQs */
    qp_reset(&pe.n, 0);
    side_init(&pe.n, &sd, 0, CQ_SIZE);
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe.my_qpn, pe.sq_psn,
            pe.epsn, 0);
    qp_connect_cq(&pe.n, 0, &at, &sd);
    pe.qpn = qpldma_qpn(&pe.n.d, 0);
    buf = alloc_pa(&pe.n, l);
    post_recv(&pe.n, &sd, 0xab, 1, &buf, &l);

    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = roce_frame(f, IP_B, 0x04, pe.qpn ^ 0x100, pe.epsn, false, 0, 0, 0,
                     -1, 0, pl, sizeof(pl));
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_OTHER, 0x04, pe.qpn, pe.epsn, false, 0, 0, 0,
                     -1, 0, pl, sizeof(pl));
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x04, pe.qpn, (pe.epsn + 5000) & 0xffffff,
                     false, 0, 0, 0, -1, 0, pl, sizeof(pl));
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 3);
    /* ahead within the window: a sequence NAK */
    len = roce_frame(f, IP_B, 0x04, pe.qpn, (pe.epsn + 3) & 0xffffff,
                     false, 0, 0, 0, -1, 0, pl, sizeof(pl));
    peer_inject(&pe, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x60);
    g_assert_cmphex(psn, ==, pe.epsn);
    /*
     * A Last with no First: NAK invalid at the expected PSN, which ends
     * the connection (IBA 9.9.3.1, as rxe): the QP goes to ERR and its
     * posted WQE completes WR_FLUSH_ERR, nothing written; the right SEND
     * then finds no QP to take it
     */
    len = roce_frame(f, IP_B, 0x02, pe.qpn, pe.epsn, false, 0, 0, 0, -1, 0,
                     pl, sizeof(pl));
    peer_inject(&pe, f, len);
    syn = peer_answer(&pe, &psn, NULL);
    g_assert_cmphex(syn, ==, 0x61);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_true(qpldma_mem_zero(pe.n.qts, buf, l));
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_true(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    check_cqe(e, 0xab, PLDMA_WC_RECV, PLDMA_WC_ST_WR_FLUSH_ERR, 0, pe.qpn,
              pe.my_qpn, 0, 0, 0);
    g_assert_false(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = roce_frame(f, IP_B, 0x04, pe.qpn, pe.epsn, false, 0, 0, 0, -1, 0,
                     pl, sizeof(pl));
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 1);
    g_assert_true(qpldma_mem_zero(pe.n.qts, buf, l));

    /* a new connection, a new WQE: the right one, SEND Only, lands */
    qp_reset(&pe.n, 0);
    sd.rq_tail = 0;
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe.my_qpn, pe.sq_psn,
            pe.epsn, 0);
    qp_connect_cq(&pe.n, 0, &at, &sd);
    pe.qpn = qpldma_qpn(&pe.n.d, 0);
    post_recv(&pe.n, &sd, 0xab, 1, &buf, &l);
    len = roce_frame(f, IP_B, 0x04, pe.qpn, pe.epsn, false, 0, 0, 0, -1, 0,
                     pl, sizeof(pl));
    peer_inject(&pe, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, pe.epsn);
    qpldma_mem_check(pe.n.qts, buf, pl, sizeof(pl));
    g_assert_true(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    check_cqe(e, 0xab, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, sizeof(pl),
              pe.qpn, pe.my_qpn, 0, 0, 0);
    peer_close(&pe);
}

/*
 * A SEND of two packets with no receive WQE posted: the First gets an RNR
 * NAK, and the Last its requester had already sent is dropped without a
 * sequence NAK (to Linux rxe's completer one means "resend now": it ends
 * the RNR wait and spends a retry).  A WQE posted, the resent message
 * lands in it whole.
 */
static void test_recv_rnr_silence(void)
{
    Peer pe;
    uint8_t f[2048], pl[1536], e[PLDMA_CQE_SIZE];
    uint32_t len, psn, l = 2048, seq0, ooo0, i;
    uint64_t buf;
    QPldmaQPAttr at;
    Side sd;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 5 + 9;
    }
    qp_reset(&pe.n, 0);
    side_init(&pe.n, &sd, 0, CQ_SIZE);
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe.my_qpn, pe.sq_psn,
            pe.epsn, 0);
    qp_connect_cq(&pe.n, 0, &at, &sd);
    pe.qpn = qpldma_qpn(&pe.n.d, 0);
    buf = alloc_pa(&pe.n, l);

    /* SEND First: no WQE, RNR NAK at its PSN */
    len = roce_frame(f, IP_B, 0x00, pe.qpn, pe.epsn, false, 0, 0, 0, -1, 0,
                     pl, 1024);
    peer_inject(&pe, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, pe.epsn);
    /* the Last, already sent: dropped, no answer at all */
    seq0 = ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ);
    ooo0 = ncnt(&pe.n, PLDMA_NCNT_OOO);
    len = roce_frame(f, IP_B, 0x02, pe.qpn, (pe.epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl + 1024, 512);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_OOO), ==, ooo0 + 1);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, seq0);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_true(qpldma_mem_zero(pe.n.qts, buf, l));

    /* a WQE: "resend now" (the PSN before the NAKed one) */
    post_recv(&pe.n, &sd, 0xcd, 1, &buf, &l);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn - 1) & 0xffffff);
    /* the message again: ACKs (both ask), the WQE completes with it */
    len = roce_frame(f, IP_B, 0x00, pe.qpn, pe.epsn, false, 0, 0, 0, -1, 0,
                     pl, 1024);
    peer_inject(&pe, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, pe.epsn);
    len = roce_frame(f, IP_B, 0x02, pe.qpn, (pe.epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl + 1024, 512);
    peer_inject(&pe, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, seq0);
    qpldma_mem_check(pe.n.qts, buf, pl, sizeof(pl));
    g_assert_true(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    check_cqe(e, 0xcd, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, sizeof(pl),
              pe.qpn, pe.my_qpn, 0, 0, 0);
    peer_close(&pe);
}

/*
 * A peer (SMMU, report mode, park-send=on) whose device's QP 0 has a
 * receive queue in @sd (PASID's PD, a receive CQ of @rcq_size), and a
 * payload pattern in @pl
 */
static void peer_open_park_send(Peer *pe, Side *sd, uint32_t rcq_size,
                                uint8_t *pl, size_t len, uint8_t mul)
{
    QPldmaQPAttr at;
    size_t i;

    peer_open_props(pe, PLDMA_KEY_ACC_WRITE, true, ",park-send=on");
    for (i = 0; i < len; i++) {
        pl[i] = i * mul + 5;
    }
    qp_reset(&pe->n, 0);
    side_init_cqs(&pe->n, sd, PASID | PLDMA_CHB_PASID_EN, CQ_SIZE, rcq_size);
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe->my_qpn, pe->sq_psn,
            pe->epsn, 0);
    qp_connect_cq(&pe->n, 0, &at, sd);
    pe->qpn = qpldma_qpn(&pe->n.d, 0);
}

/* The Middle (1024 bytes) and Last (512) of a SEND whose First @pe sent */
static void send_middle_last(Peer *pe, const uint8_t *pl)
{
    uint8_t f[2048];
    uint32_t len;

    len = roce_frame(f, IP_B, 0x01, pe->qpn, (pe->epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl + 1024, 1024);
    peer_inject(pe, f, len);
    len = roce_frame(f, IP_B, 0x02, pe->qpn, (pe->epsn + 2) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl + 2048, 512);
    peer_inject(pe, f, len);
}

/*
 * A SEND whose receive buffer faults (report mode, park-send=on; off by
 * default, docs/specs/pldma.rst "Remote DMA"): the responder holds
 * the segments its requester already sent behind the faulting one
 * (parking, as for a WRITE), silently.  Resolved, they land in the same
 * WQE, which completes once, and one ACK names the last of them; the
 * message sent again is all duplicates.  Without parking each RECV fault
 * cost Linux rxe a resend of the whole message (docs/performance.md).
 */
static void test_recv_park(void)
{
    Peer pe;
    uint8_t f[2048], pl[2560], rec[PLDMA_FR_SIZE], e[PLDMA_CQE_SIZE];
    uint32_t len, psn, l = PAGE, seq0, ooo0;
    uint64_t pa, va;
    Side sd;
    Rx rx;

    peer_open_park_send(&pe, &sd, CQ_SIZE, pl, sizeof(pl), 13);
    pa = alloc_pa(&pe.n, PAGE);
    va = VA_BASE + (pa - ALLOC_BASE);       /* not mapped: a fault */
    post_recv(&pe.n, &sd, 0xce, 1, &va, &l);

    /* SEND First: the buffer faults, RNR NAK at its PSN, a record */
    len = roce_frame(f, IP_B, 0x00, pe.qpn, pe.epsn, false, 0, 0, 0, -1, 0,
                     pl, 1024);
    peer_inject(&pe, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, pe.epsn);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV | PLDMA_FR_F_WRITE);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_PARKED), ==, 1);
    /* the Middle and Last, sent before the NAK arrived: held, no answer */
    seq0 = ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ);
    ooo0 = ncnt(&pe.n, PLDMA_NCNT_OOO);
    send_middle_last(&pe, pl);
    /* ... and a SEND after its Last is not: a new message */
    len = roce_frame(f, IP_B, 0x04, pe.qpn, (pe.epsn + 3) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl, 64);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_PARKED), ==, 3);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_OOO), ==, ooo0 + 1);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, seq0);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_false(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));

    /*
     * Resolved: all three land, the WQE completes; the SEND Only after
     * them was dropped, so the answer is an RNR NAK of its PSN, which
     * acknowledges the message and has it resent after the RNR timer
     */
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);
    qpldma_wr(&pe.n.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&pe.n.d, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_rd(&pe.n.d, PLDMA_QP_STATUS), ==, PLDMA_QP_ST_OK);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, (pe.epsn + 3) & 0xffffff);
    qpldma_mem_check(pe.n.qts, pa, pl, sizeof(pl));
    g_assert_true(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    check_cqe(e, 0xce, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, sizeof(pl),
              pe.qpn, pe.my_qpn, 0, 0, 0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_PARKED), ==, 3);

    /* the message again, whole: duplicates, ACKed; no second CQE */
    len = roce_frame(f, IP_B, 0x00, pe.qpn, pe.epsn, false, 0, 0, 0, -1, 0,
                     pl, 1024);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x02, pe.qpn, (pe.epsn + 2) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl + 2048, 512);
    peer_inject(&pe, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn + 2) & 0xffffff);
    g_assert_false(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, seq0);
    peer_close(&pe);
}

/*
 * The held Last of a SEND completes its WQE into a full receive CQ while
 * the held segments are applied: the CQ fails, the QP goes to ERR and its
 * responder lets go of what it held, from inside the bottom half that is
 * applying them.  Nothing is answered, nothing more lands.
 */
static void test_recv_park_cq_error(void)
{
    Peer pe;
    uint8_t f[2048], pl[2560];
    uint32_t len, psn, l = PAGE, i;
    uint64_t pa, va, ok_pa;
    Side sd;
    Rx rx;

    peer_open_park_send(&pe, &sd, PLDMA_CQ_MIN_ENTRIES, pl, sizeof(pl), 3);

    /* two SENDs fill the receive CQ (nobody polls it) */
    ok_pa = alloc_pa(&pe.n, PAGE);
    qsmmu_map(&pe.n.s, pe.n.pt_root, VA_BASE + (ok_pa - ALLOC_BASE), ok_pa,
              true);
    va = VA_BASE + (ok_pa - ALLOC_BASE);
    for (i = 0; i < PLDMA_CQ_MIN_ENTRIES; i++) {
        post_recv(&pe.n, &sd, 0xd0 + i, 1, &va, &l);
        len = roce_frame(f, IP_B, 0x04, pe.qpn, (pe.epsn + i) & 0xffffff,
                         false, 0, 0, 0, -1, 0, pl, 64);
        peer_inject(&pe, f, len);
        g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    }
    pe.epsn = (pe.epsn + PLDMA_CQ_MIN_ENTRIES) & 0xffffff;

    /* a SEND into an unmapped buffer: First faults, the rest is held */
    pa = alloc_pa(&pe.n, PAGE);
    va = VA_BASE + (pa - ALLOC_BASE);
    post_recv(&pe.n, &sd, 0xdf, 1, &va, &l);
    len = roce_frame(f, IP_B, 0x00, pe.qpn, pe.epsn, false, 0, 0, 0, -1, 0,
                     pl, 1024);
    peer_inject(&pe, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    send_middle_last(&pe, pl);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_PARKED), ==, 3);

    /* resolved: the Last's CQE has no room, the QP goes to ERR */
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);
    qpldma_wr(&pe.n.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&pe.n.d, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_rd(&pe.n.d, PLDMA_QP_STATUS), ==, PLDMA_QP_ST_OK);
    for (i = 0; i < WAIT_STEPS &&
         qpldma_qp_state(&pe.n.d, 0) != PLDMA_QPS_ERR; i++) {
        peer_step(NULL);
    }
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmpuint(qpldma_cq_reg(&pe.n.d, 1, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_ERROR);
    g_assert_false(peer_rx(&pe, &rx));
    /* the device goes on: a frame for the QP in ERR is dropped */
    len = roce_frame(f, IP_B, 0x04, pe.qpn, (pe.epsn + 3) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl, 64);
    peer_inject(&pe, f, len);
    g_assert_false(peer_rx(&pe, &rx));
    peer_close(&pe);
}

/* ---- shared receive queues ---- */

/* A loopback node's step: the virtual clock, for RNR timers */
static void srq_step(void *opaque)
{
    Node *n = opaque;

    qtest_clock_step(n->qts, STEP_NS);
}

static void srq_cqe(Node *n, QPldmaCQ *cq, uint8_t *e)
{
    int i;

    for (i = 0; i < WAIT_STEPS && !qpldma_cq_poll(&n->d, cq, e); i++) {
        srq_step(n);
    }
    g_assert_cmpint(i, <, WAIT_STEPS);
}

/*
 * SEND @len random bytes on @sd's ring; the receiver's CQE on @rcq names
 * @wr_id and QP @qpn and the bytes are at @dst
 */
static void srq_send(Node *n, Side *sd, uint32_t len, QPldmaCQ *rcq,
                     uint64_t wr_id, uint32_t qpn, uint32_t src_qp,
                     uint64_t dst)
{
    uint64_t src = alloc_pa(n, len), compl;
    g_autofree uint8_t *data = qpldma_mem_random(n->qts, src, len);
    uint8_t e[PLDMA_CQE_SIZE];

    compl = post_op(n, sd, PLDMA_OP_SEND, 0, len, src, 0, 0, 0, 0);
    g_assert_cmpuint(qpldma_wait_compl(&n->d, compl, srq_step, n, WAIT_STEPS,
                                       NULL), ==, PLDMA_ST_SUCCESS);
    srq_cqe(n, rcq, e);
    check_cqe(e, wr_id, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len, qpn, src_qp,
              0, 0, 0);
    qpldma_mem_check(n->qts, dst, data, len);
}

/*
 * The SRQ's registers and its QP attribute refuse what the spec refuses:
 * a size that is not a power of two or beyond the maximum, a base not
 * 64-byte aligned, an index beyond SRQ_NUM, a second create, a limit not
 * below the size; a QP with an RQ and an SRQ, with an SRQ of another PD
 * or PD tag, or with an SRQ not created; a destroy while a QP uses it
 */
static void test_srq_config(void)
{
    QPldmaLink link;
    QPldmaQPAttr at;
    uint8_t mac[6];
    uint64_t base;
    Side sd;
    Node n;
    int fd;

    fd = loop_node_start(&n, &link, "pldma-qsrq-XXXXXX");
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_CAP) & PLDMA_CAP_SRQ, ==,
                    PLDMA_CAP_SRQ);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_SRQ_NUM), ==, PLDMA_MAX_SRQS);
    base = alloc_pa(&n, 64 * PLDMA_RWQE_SIZE + PLDMA_SRQ_DBREC_SIZE);
    g_assert_cmpuint(srq_create(&n, 0, base, 48, 0, 0), ==,
                     PLDMA_SRQ_ST_BAD_CONFIG);
    g_assert_cmpuint(srq_create(&n, 0, base, 1, 0, 0), ==,
                     PLDMA_SRQ_ST_BAD_CONFIG);
    g_assert_cmpuint(srq_create(&n, 0, base, PLDMA_SRQ_MAX_ENTRIES * 2, 0,
                                0), ==, PLDMA_SRQ_ST_BAD_CONFIG);
    g_assert_cmpuint(srq_create(&n, 0, base + 32, 64, 0, 0), ==,
                     PLDMA_SRQ_ST_BAD_CONFIG);
    g_assert_cmpuint(srq_create(&n, 0, base, 64, 0, PLDMA_PD_TAG_MAX + 1),
                     ==, PLDMA_SRQ_ST_BAD_CONFIG);
    g_assert_cmpuint(srq_create(&n, 0, -64ULL, 64, 0, 0), ==,
                     PLDMA_SRQ_ST_BAD_CONFIG);
    g_assert_cmpuint(srq_create(&n, PLDMA_MAX_SRQS, base, 64, 0, 0), ==,
                     PLDMA_SRQ_ST_BAD_INDEX);
    g_assert_cmpuint(srq_cmd(&n, 0, PLDMA_SRQ_CMD_ARM, 1), ==,
                     PLDMA_SRQ_ST_BAD_INDEX);       /* not created */
    g_assert_cmpuint(srq_create(&n, 0, base, 64, 0, 0), ==, PLDMA_SRQ_ST_OK);
    g_assert_cmpuint(srq_create(&n, 0, base, 64, 0, 0), ==,
                     PLDMA_SRQ_ST_BUSY);
    g_assert_cmpuint(srq_cmd(&n, 0, PLDMA_SRQ_CMD_ARM, 64), ==,
                     PLDMA_SRQ_ST_BAD_CONFIG);
    g_assert_cmpuint(srq_cmd(&n, 0, PLDMA_SRQ_CMD_ARM, 63), ==,
                     PLDMA_SRQ_ST_OK);
    g_assert_cmpuint(srq_reg(&n, 0, PLDMA_SRQ_ARMED), ==, 63);
    g_assert_cmpuint(srq_cmd(&n, 0, 77, 0), ==, PLDMA_SRQ_ST_BAD_CMD);
    /* read-only registers keep their values */
    qpldma_wr(&n.d, PLDMA_SRQ_HEAD, 5);
    qpldma_wr(&n.d, PLDMA_SRQ_STATE, 0);
    g_assert_cmpuint(srq_reg(&n, 0, PLDMA_SRQ_HEAD), ==, 0);
    g_assert_cmpuint(srq_reg(&n, 0, PLDMA_SRQ_STATE), ==, PLDMA_SRQS_ACTIVE);

    /* a QP with it: not with an RQ too, not another PD, not a tag */
    side_init(&n, &sd, 0, CQ_SIZE);
    qpldma_mac(&n.d, mac);
    attr_to(&at, mac, IP_B, 0x100, 1, 1, 0);
    at.state = PLDMA_QPS_INIT;
    at.send_cq = sd.scq.idx;
    at.recv_cq = sd.rcq.idx;
    at.rq_base = sd.rq;
    at.rq_size = RQ_SIZE;
    at.srq = 0;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_RQ | PLDMA_QPA_SRQ, &at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    at.srq = 1;                             /* not created */
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_SRQ, &at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    at.srq = PLDMA_SRQ_NONE;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_SRQ, &at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    at.srq = 0;
    at.pd_tag = 1;                          /* another PD of the PASID */
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_SRQ, &at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_RESET);
    at.pd_tag = 0;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_SRQ | PLDMA_QPA_CQ, &at),
                     ==, PLDMA_QP_ST_OK);
    qpldma_qp_query(&n.d, 0, &at);
    g_assert_cmpuint(at.srq, ==, 0);
    g_assert_cmpuint(at.rq_size, ==, 0);
    /* its RQ doorbell goes nowhere; its SRQ cannot go while it is used */
    qpldma_ch_wr(&n.d, 0, PLDMA_CH_RQ_TAIL, 1);
    g_assert_cmpuint(qpldma_ch_rd(&n.d, 0, PLDMA_CH_RQ_TAIL), ==, 0);
    g_assert_cmpuint(srq_cmd(&n, 0, PLDMA_SRQ_CMD_DESTROY, 0), ==,
                     PLDMA_SRQ_ST_BUSY);
    qp_reset(&n, 0);
    g_assert_cmpuint(srq_cmd(&n, 0, PLDMA_SRQ_CMD_DESTROY, 0), ==,
                     PLDMA_SRQ_ST_OK);
    g_assert_cmpuint(srq_reg(&n, 0, PLDMA_SRQ_STATE), ==, PLDMA_SRQS_NONE);
    /* a reset leaves none */
    g_assert_cmpuint(srq_create(&n, 3, base, 64, 0, 0), ==, PLDMA_SRQ_ST_OK);
    qpldma_wr(&n.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    g_assert_cmpuint(srq_reg(&n, 3, PLDMA_SRQ_STATE), ==, PLDMA_SRQS_NONE);
    qtest_quit(n.qts);
    close(fd);
    qpldma_link_cleanup(&link);
}

/*
 * Two QPs of one device receive from one SRQ, each SEND taking the WQE
 * at its head in the order they come: the CQEs (on the receive CQ they
 * share) name the WQEs in SRQ order and the QP that took each, the bytes
 * land in each WQE's buffer, the record's HEAD follows.  The armed limit
 * fires once, when a take leaves fewer WQEs than it.  An empty SRQ: RNR
 * NAK, and the SEND completes once a WQE is posted.  Then what a hostile
 * user can do: a WQE with too many entries completes LOC_QP_OP_ERR and
 * the sender sees Invalid Request; a TAIL out of range puts the SRQ in
 * ERROR (SRQ_ERRORS, IRQ_SRQ) and the QP that needed a WQE in ERR.
 */
static void test_srq_loopback(void)
{
    const uint32_t len = 8 * KiB;
    g_autofree uint8_t *data = NULL;
    uint32_t qpn[4], psn[4], i, rnr;
    uint64_t buf[8], compl, src;
    uint8_t mac[6], e[PLDMA_CQE_SIZE];
    QPldmaLink link;
    QPldmaQPAttr at;
    Side sd[4];
    Node n;
    Srq q;
    int fd;

    fd = loop_node_start(&n, &link, "pldma-qsrq-XXXXXX");
    qpldma_mac(&n.d, mac);
    for (i = 0; i < 4; i++) {
        qpn[i] = qpldma_qpn(&n.d, i);
        psn[i] = rand_psn();
        side_init_at(&n, &sd[i], 0, 2 * i, CQ_SIZE, CQ_SIZE, i);
    }
    srq_make(&n, &q, 5, 8, 0);
    /* QPs 0 and 1 receive from SRQ 5 into CQ 1; 2 sends to 0, 3 to 1 */
    attr_to(&at, mac, IP_A, qpn[2], psn[0], psn[2], 0);
    qp_connect_srq(&n, 0, &at, &sd[0], sd[0].rcq.idx, q.idx);
    attr_to(&at, mac, IP_A, qpn[3], psn[1], psn[3], 1);
    qp_connect_srq(&n, 1, &at, &sd[1], sd[0].rcq.idx, q.idx);
    attr_to(&at, mac, IP_A, qpn[0], psn[2], psn[0], 2);
    qp_connect_cq(&n, 2, &at, &sd[2]);
    attr_to(&at, mac, IP_A, qpn[1], psn[3], psn[1], 3);
    qp_connect_cq(&n, 3, &at, &sd[3]);

    for (i = 0; i < ARRAY_SIZE(buf); i++) {
        buf[i] = alloc_pa(&n, len);
    }
    for (i = 0; i < 3; i++) {
        srq_post(&n, &q, 0x10 + i, buf[i], len);
    }
    g_assert_cmpuint(srq_cmd(&n, q.idx, PLDMA_SRQ_CMD_ARM, 2), ==,
                     PLDMA_SRQ_ST_OK);
    srq_send(&n, &sd[2], 5000, &sd[0].rcq, 0x10, qpn[0], qpn[2], buf[0]);
    g_assert_cmpuint(srq_head(&n, &q), ==, 1);
    /* two left: not below the limit of 2 */
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_SRQ, ==, 0);
    g_assert_cmpuint(srq_reg(&n, q.idx, PLDMA_SRQ_ARMED), ==, 2);
    srq_send(&n, &sd[3], 3000, &sd[0].rcq, 0x11, qpn[1], qpn[3], buf[1]);
    g_assert_cmpuint(srq_head(&n, &q), ==, 2);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_SRQ_EVENTS_LO), ==, 1u << q.idx);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_SRQ, ==,
                    PLDMA_IRQ_SRQ);
    g_assert_cmpuint(srq_reg(&n, q.idx, PLDMA_SRQ_ARMED), ==, 0);
    qpldma_wr(&n.d, PLDMA_SRQ_EVENTS_LO, 1u << q.idx);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_SRQ, ==, 0);
    srq_send(&n, &sd[2], len, &sd[0].rcq, 0x12, qpn[0], qpn[2], buf[2]);
    /* disarmed: no second event */
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_SRQ_EVENTS_LO), ==, 0);

    /* empty: RNR NAK until a WQE is posted */
    rnr = ncnt(&n, PLDMA_NCNT_RQ_EMPTY);
    src = alloc_pa(&n, 100);
    data = qpldma_mem_random(n.qts, src, 100);
    compl = post_op(&n, &sd[3], PLDMA_OP_SEND, 0, 100, src, 0, 0, 0, 0);
    for (i = 0; i < WAIT_STEPS && ncnt(&n, PLDMA_NCNT_RQ_EMPTY) == rnr; i++) {
        srq_step(&n);
    }
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_RQ_EMPTY), >, rnr);
    g_assert_false(qpldma_cq_poll(&n.d, &sd[0].rcq, e));
    srq_post(&n, &q, 0x13, buf[3], len);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, srq_step, &n, WAIT_STEPS,
                                       NULL), ==, PLDMA_ST_SUCCESS);
    srq_cqe(&n, &sd[0].rcq, e);
    check_cqe(e, 0x13, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, 100, qpn[1],
              qpn[3], 0, 0, 0);
    qpldma_mem_check(n.qts, buf[3], data, 100);
    g_assert_cmpuint(srq_head(&n, &q), ==, 4);

    /* a WQE with four entries: LOC_QP_OP_ERR, and a NAK to the sender */
    qpldma_rwqe(n.qts, q.pa + (uint64_t)q.tail * PLDMA_RWQE_SIZE, 0x14, 1,
                &buf[4], &len);
    qtest_writel(n.qts, q.pa + (uint64_t)q.tail * PLDMA_RWQE_SIZE +
                 PLDMA_RWQE_NUM_SGE, PLDMA_RWQE_MAX_SGE + 1);
    q.tail++;
    qtest_writel(n.qts, srq_rec(&q) + PLDMA_SRQ_DBREC_TAIL, q.tail);
    compl = post_op(&n, &sd[2], PLDMA_OP_SEND, 0, 100, src, 0, 0, 0, 0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, srq_step, &n, WAIT_STEPS,
                                       NULL), ==, PLDMA_ST_REMOTE_INVALID);
    srq_cqe(&n, &sd[0].rcq, e);
    check_cqe(e, 0x14, PLDMA_WC_RECV, PLDMA_WC_ST_LOC_QP_OP_ERR, 0, qpn[0],
              qpn[2], 0, 0, 0);
    g_assert_cmpuint(srq_reg(&n, q.idx, PLDMA_SRQ_STATE), ==,
                     PLDMA_SRQS_ACTIVE);

    /* a TAIL beyond the ring: the SRQ fails, QP 1 with it, not QP 0's */
    qtest_writel(n.qts, srq_rec(&q) + PLDMA_SRQ_DBREC_TAIL, q.size + 3);
    compl = post_op(&n, &sd[3], PLDMA_OP_SEND, 0, 100, src, 0, 0, 0, 0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, srq_step, &n, WAIT_STEPS,
                                       NULL), ==, PLDMA_ST_REMOTE_ERROR);
    g_assert_cmpuint(srq_reg(&n, q.idx, PLDMA_SRQ_STATE), ==,
                     PLDMA_SRQS_ERROR);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_SRQ_ERRORS_LO), ==, 1u << q.idx);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_SRQ, ==,
                    PLDMA_IRQ_SRQ);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 1), ==, PLDMA_QPS_ERR);
    g_assert_false(qpldma_cq_poll(&n.d, &sd[0].rcq, e));
    qpldma_wr(&n.d, PLDMA_SRQ_ERRORS_LO, 1u << q.idx);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_SRQ, ==, 0);
    /* in use until both QPs are reset */
    g_assert_cmpuint(srq_cmd(&n, q.idx, PLDMA_SRQ_CMD_DESTROY, 0), ==,
                     PLDMA_SRQ_ST_BUSY);
    qp_reset(&n, 0);
    qp_reset(&n, 1);
    g_assert_cmpuint(srq_cmd(&n, q.idx, PLDMA_SRQ_CMD_DESTROY, 0), ==,
                     PLDMA_SRQ_ST_OK);
    qtest_quit(n.qts);
    close(fd);
    qpldma_link_cleanup(&link);
}

/*
 * A fault on an SRQ WQE's buffer (report mode): the message keeps the WQE
 * it took; resolved, it completes in that WQE and no other is taken.  A
 * second fault, and the QP moved to ERR instead: the WQE it took
 * completes WR_FLUSH_ERR, and the SRQ's other WQE stays posted.
 */
static void test_srq_fault(void)
{
    const uint32_t len = 24 * KiB, hole = 2;
    Pair *p = pair_start_smmu(true);
    uint32_t pd = PASID | PLDMA_CHB_PASID_EN, a_qpn, b_qpn, pa_psn, pb_psn;
    uint64_t src, b_pa[2], b_va[2], compl, off;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE], e[PLDMA_CQE_SIZE], mac_a[6], mac_b[6];
    QPldmaQPAttr at;
    Side sa, sb;
    Srq q;
    int i;

    side_init(&p->a, &sa, 0, CQ_SIZE);
    side_init(&p->b, &sb, pd, CQ_SIZE);
    srq_make(&p->b, &q, 0, 4, pd);
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    pa_psn = rand_psn();
    pb_psn = rand_psn();
    attr_to(&at, mac_a, IP_A, a_qpn, pb_psn, pa_psn, 0);
    qp_connect_srq(&p->b, 0, &at, &sb, sb.rcq.idx, q.idx);
    attr_to(&at, mac_b, IP_B, b_qpn, pa_psn, pb_psn, 0);
    qp_connect_cq(&p->a, 0, &at, &sa);

    src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, src, len);
    for (i = 0; i < 2; i++) {
        b_pa[i] = alloc_pa(&p->b, len);
        b_va[i] = VA_BASE + (b_pa[i] - ALLOC_BASE);
        for (off = 0; off < len; off += PAGE) {
            if (off != hole * PAGE) {
                qsmmu_map(&p->b.s, p->b.pt_root, b_va[i] + off,
                          b_pa[i] + off, true);
            }
        }
        srq_post(&p->b, &q, 0x61 + i, b_va[i], len);
    }
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, len, src, 0, 0, 0, 0);
    qpldma_fq_pop(&p->b.d, p->b.fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV | PLDMA_FR_F_WRITE);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, b_va[0] + hole * PAGE);
    g_assert_cmpuint(srq_head(&p->b, &q), ==, 1);
    /* the requester's retries while it waits take no other WQE */
    for (i = 0; i < 200; i++) {
        step(p);
    }
    g_assert_cmpuint(srq_head(&p->b, &q), ==, 1);
    qsmmu_map(&p->b.s, p->b.pt_root, b_va[0] + hole * PAGE,
              b_pa[0] + hole * PAGE, true);
    qpldma_wr(&p->b.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&p->b.d, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_QP_STATUS), ==, PLDMA_QP_ST_OK);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x61, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len, b_qpn, a_qpn,
              0, 0, 0);
    qpldma_mem_check(p->b.qts, b_pa[0], data, len);
    g_assert_cmpuint(srq_head(&p->b, &q), ==, 1);

    /* the second WQE faults too; the QP goes to ERR: it is flushed */
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, len, src, 0, 0, 0, 0);
    qpldma_fq_pop(&p->b.d, p->b.fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, b_va[1] + hole * PAGE);
    g_assert_cmpuint(srq_head(&p->b, &q), ==, 2);
    srq_post(&p->b, &q, 0x63, b_va[0], len);
    at.state = PLDMA_QPS_ERR;
    g_assert_cmpuint(qpldma_qp_modify(&p->b.d, 0, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x62, PLDMA_WC_RECV, PLDMA_WC_ST_WR_FLUSH_ERR, 0, b_qpn,
              a_qpn, 0, 0, 0);
    g_assert_false(qpldma_cq_poll(&p->b.d, &sb.rcq, e));
    g_assert_cmpuint(srq_head(&p->b, &q), ==, 2);
    g_assert_cmpuint(srq_reg(&p->b, q.idx, PLDMA_SRQ_STATE), ==,
                     PLDMA_SRQS_ACTIVE);
    pair_stop(p);
}

/*
 * A UC receive buffer not mapped (report mode): the fault is reported as
 * an RC one, but nothing waits for it: the sender's SEND completes
 * SUCCESS (UC promises nothing more), the receiver's message is dropped
 * (no CQE, counted), no RNR NAK is sent.  Once the page is mapped and the
 * fault answered, the next SEND lands in the same receive WQE.
 */
static void test_uc_recv_fault(void)
{
    const uint32_t len = 24 * KiB, hole = 2;
    Pair *p = pair_start_smmu(true);
    uint32_t pd = PASID | PLDMA_CHB_PASID_EN, a_qpn, b_qpn, a_psn, b_psn;
    uint32_t l = len;
    uint64_t src, b_pa, b_va, compl, off;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE], e[PLDMA_CQE_SIZE], mac_a[6], mac_b[6];
    QPldmaQPAttr at;
    Side sa, sb;
    int i;

    side_init(&p->a, &sa, 0, CQ_SIZE);
    side_init(&p->b, &sb, pd, CQ_SIZE);
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    a_psn = rand_psn();
    b_psn = rand_psn();
    attr_to(&at, mac_a, IP_A, a_qpn, b_psn, a_psn, 0);
    qp_connect_uc(&p->b, 0, &at, &sb);
    attr_to(&at, mac_b, IP_B, b_qpn, a_psn, b_psn, 0);
    qp_connect_uc(&p->a, 0, &at, &sa);

    src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, src, len);
    b_pa = alloc_pa(&p->b, len);
    b_va = VA_BASE + (b_pa - ALLOC_BASE);
    for (off = 0; off < len; off += PAGE) {
        if (off != hole * PAGE) {
            qsmmu_map(&p->b.s, p->b.pt_root, b_va + off, b_pa + off, true);
        }
    }
    post_recv(&p->b, &sb, 0x91, 1, &b_va, &l);
    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, len, src, 0, 0, 0, 0);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    qpldma_fq_pop(&p->b.d, p->b.fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV | PLDMA_FR_F_WRITE);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, b_va + hole * PAGE);
    for (i = 0; i < 100; i++) {
        step(p);
    }
    g_assert_false(qpldma_cq_poll(&p->b.d, &sb.rcq, e));
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_UC_DROPPED), ==, 1);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_ACK_TX), ==, 0);
    qsmmu_map(&p->b.s, p->b.pt_root, b_va + hole * PAGE,
              b_pa + hole * PAGE, true);
    qpldma_wr(&p->b.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&p->b.d, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_QP_STATUS), ==, PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_RTS);

    compl = post_op(&p->a, &sa, PLDMA_OP_SEND, 0, len, src, 0, 0, 0, 0);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x91, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len, b_qpn, a_qpn,
              0, 0, 0);
    qpldma_mem_check(p->b.qts, b_pa, data, len);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_UC_DROPPED), ==, 1);
    pair_stop(p);
}

/*
 * UD into a receive buffer whose payload page is not mapped: the fault is
 * reported (PLDMA_FR_F_RECV) and the datagram dropped, counted, nothing
 * completed; while the fault is out the next datagram is dropped too;
 * once resolved the same WQE takes the next one whole, GRH first
 */
static void test_ud_recv_fault(void)
{
    const uint32_t len = 1000, qkey = 0x5eed;
    Pair *p = pair_start_smmu(true);
    uint32_t pd = PASID | PLDMA_CHB_PASID_EN, a_qpn, b_qpn;
    uint32_t l = PAGE + len;
    uint64_t src, b_pa, b_va, compl;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE], e[PLDMA_CQE_SIZE];
    Side sa, sb;
    UdAv av = { .dip = IP_B, .qkey = qkey };
    int i;

    side_init(&p->a, &sa, 0, CQ_SIZE);
    side_init(&p->b, &sb, pd, CQ_SIZE);
    qpldma_mac(&p->b.d, av.dmac);
    qp_connect_ud(&p->b, 0, 0, qkey, &sb);
    qp_connect_ud(&p->a, 0, 0, qkey, &sa);
    a_qpn = qpldma_qpn(&p->a.d, 0);
    b_qpn = qpldma_qpn(&p->b.d, 0);
    av.dqpn = b_qpn;

    src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, src, len);
    /* the GRH at the end of a mapped page, the payload on the next */
    b_pa = alloc_pa(&p->b, 2 * PAGE);
    b_va = VA_BASE + (b_pa - ALLOC_BASE) + PAGE - PLDMA_UD_GRH_LEN;
    qsmmu_map(&p->b.s, p->b.pt_root, VA_BASE + (b_pa - ALLOC_BASE), b_pa,
              true);
    post_recv(&p->b, &sb, 0x97, 1, &b_va, &l);
    compl = post_ud(&p->a, &sa, PLDMA_OP_SEND, len, src, &av, 0, 0);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    qpldma_fq_pop(&p->b.d, p->b.fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV | PLDMA_FR_F_WRITE);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, b_va + PLDMA_UD_GRH_LEN);
    compl = post_ud(&p->a, &sa, PLDMA_OP_SEND, len, src, &av, 0, 0);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    for (i = 0; i < 100; i++) {
        step(p);
    }
    g_assert_false(qpldma_cq_poll(&p->b.d, &sb.rcq, e));
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_UD_DROPPED), ==, 2);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_ACK_TX), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    qsmmu_map(&p->b.s, p->b.pt_root, VA_BASE + (b_pa - ALLOC_BASE) + PAGE,
              b_pa + PAGE, true);
    qpldma_wr(&p->b.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&p->b.d, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_QP_STATUS), ==, PLDMA_QP_ST_OK);

    compl = post_ud(&p->a, &sa, PLDMA_OP_SEND, len, src, &av, 0, 0);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    wait_cqe(p, &p->b, &sb.rcq, e);
    check_cqe(e, 0x97, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS,
              len + PLDMA_UD_GRH_LEN, b_qpn, a_qpn, PLDMA_CQE_F_GRH, 0, 0);
    qpldma_mem_check(p->b.qts, b_pa + PAGE, data, len);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_UD_DROPPED), ==, 2);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_RTS);
    pair_stop(p);
}

void pldma_qp_recv_register(void)
{
    qtest_add_func("/pldma-qp/recv-fault", test_recv_fault);
    qtest_add_func("/pldma-qp/recv-fault-stall", test_recv_fault_stall);
    qtest_add_func("/pldma-qp/stall-outlives-qp", test_stall_outlives_qp);
    qtest_add_func("/pldma-qp/recv-wqe-once", test_recv_wqe_once);
    qtest_add_func("/pldma-qp/hostile-send", test_hostile_send);
    qtest_add_func("/pldma-qp/recv-rnr-silence", test_recv_rnr_silence);
    qtest_add_func("/pldma-qp/recv-park", test_recv_park);
    qtest_add_func("/pldma-qp/recv-park-cq-error", test_recv_park_cq_error);
    qtest_add_func("/pldma-qp/srq-config", test_srq_config);
    qtest_add_func("/pldma-qp/srq-loopback", test_srq_loopback);
    qtest_add_func("/pldma-qp/srq-fault", test_srq_fault);
    qtest_add_func("/pldma-qp/uc-recv-fault", test_uc_recv_fault);
    qtest_add_func("/pldma-qp/ud-recv-fault", test_ud_recv_fault);
}
