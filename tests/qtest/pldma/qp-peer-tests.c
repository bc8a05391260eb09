/*
 * The PLDMA QP against a hostile peer: the test on the other end of
 * the link builds its own RoCEv2 frames
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
 * The responder of a QP: wrong source, wrong generation, PSNs out of the
 * window, a bad rkey (NAK, ePSN unmoved), a key of another PD, access
 * flags of the QP; MSN counts completed messages
 */
static void test_hostile_responder(void)
{
    Peer pe;
    uint8_t f[2048], pl[512];
    uint32_t rkey, rkey_pd, psn, msn, d0, len;
    uint64_t pa, pa2;
    int i;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 7 + 1;
    }
    pa = alloc_pa(&pe.n, PAGE);
    pa2 = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    /* a key of another PD (PASID 5): the QP's PD is "no PASID" */
    rkey_pd = key_register(&pe.n, 1, 5 | PLDMA_CHB_PASID_EN, pa2, PAGE,
                           PLDMA_KEY_ACC_WRITE);

    /* from another IP: dropped, counted, no answer */
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = write_only(f, &pe, IP_OTHER, pe.qpn, pe.epsn, pa, rkey, pl, 512);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 1);
    /* to the QP's index with another generation: dropped */
    len = write_only(f, &pe, IP_B, pe.qpn ^ 0x100, pe.epsn, pa, rkey, pl,
                     512);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 2);
    /* to a QP index that is in RESET: dropped */
    len = write_only(f, &pe, IP_B, qpldma_qpn(&pe.n.d, 1), pe.epsn, pa, rkey,
                     pl, 512);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 3);
    /* far outside the PSN window: dropped */
    len = write_only(f, &pe, IP_B, pe.qpn, (pe.epsn + 0x7fffff) & 0xffffff,
                     pa, rkey, pl, 512);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 4);
    g_assert_true(qpldma_mem_zero(pe.n.qts, pa, PAGE));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_ACK_TX), ==, 0);

    /* ahead of the expected PSN: a sequence NAK naming it, nothing moves */
    len = write_only(f, &pe, IP_B, pe.qpn, (pe.epsn + 5) & 0xffffff, pa,
                     rkey, pl, 512);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x60);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_true(qpldma_mem_zero(pe.n.qts, pa, PAGE));

    /*
     * A bad rkey: NAK remote access, once, and the connection is over
     * (IBA 9.9.3.1: fatal to the responder's QP, as on rxe): the QP is in
     * ERR with its QP_ERRORS bit, and the same WRITE with the right key
     * then finds no QP to take it, so no peer gets a second guess
     */
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, pa, rkey ^ 0x100, pl,
                     512);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x62);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmphex(qpldma_rd(&pe.n.d, PLDMA_QP_ERRORS_LO), ==, 1);
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, pa, rkey, pl, 512);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 1);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, -1);
    g_assert_true(qpldma_mem_zero(pe.n.qts, pa, PAGE));
    /* a key of another PD: the same */
    peer_reconnect(&pe, PLDMA_KEY_ACC_WRITE);
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, pa2, rkey_pd, pl, 512);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x62);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_true(qpldma_mem_zero(pe.n.qts, pa2, PAGE));
    /* a READ: the key allows it, the QP's access flags do not */
    peer_reconnect(&pe, PLDMA_KEY_ACC_WRITE);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey, 512,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x62);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_true(qpldma_mem_zero(pe.n.qts, pa, PAGE));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_ACCESS), ==, 3);
    peer_reconnect(&pe, PLDMA_KEY_ACC_WRITE);

    /* the good WRITE at the same PSN lands; MSN 1 */
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, pa, rkey, pl, 512);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, &msn), ==, 0x1f);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_cmpuint(msn, ==, 1);
    qpldma_mem_check(pe.n.qts, pa, pl, 512);
    /* again (a duplicate): ACKed again, nothing counted twice */
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, &msn), ==, 0x1f);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_cmpuint(msn, ==, 1);
    /* the next message: MSN 2 */
    len = write_only(f, &pe, IP_B, pe.qpn, (pe.epsn + 1) & 0xffffff,
                     pa + 512, rkey, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, &msn), ==, 0x1f);
    g_assert_cmpuint(msn, ==, 2);
    qpldma_mem_check(pe.n.qts, pa + 512, pl, 256);
    peer_close(&pe);
}

/*
 * The requester of a QP: a spoofed ACK or READ response from another IP,
 * or outside the send queue's window, does nothing; the real ones
 * complete the messages
 */
static void test_hostile_requester(void)
{
    Peer pe;
    uint8_t f[2048], pl[1024], d[PLDMA_DESC_SIZE];
    uint64_t src, dst, compl, bytes;
    QPldmaRing r;
    QPldmaQPAttr q;
    uint32_t d0, len, i;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 13 + 5;
    }
    ring_init(&pe.n, &r, 0);
    src = alloc_pa(&pe.n, PAGE);
    dst = alloc_pa(&pe.n, PAGE);
    qtest_memwrite(pe.n.qts, src, pl, 1024);

    /* a WRITE of 1 KiB: one WRITE Only to our QPN, at the QP's SQ PSN */
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_WRITE, 1024, src, 0x1000, 0x4242,
                     compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmpuint(rx.op, ==, 0x0a);
    g_assert_cmphex(rx.qpn, ==, pe.my_qpn);
    g_assert_cmphex(rx.psn, ==, pe.sq_psn);
    g_assert_cmphex(rx.src_ip, ==, IP_A);
    g_assert_cmphex(rx.dst_ip, ==, IP_B);
    g_assert_cmphex(rx.rkey, ==, 0x4242);

    /* spoofed ACKs: another IP, another QPN generation, a later PSN */
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = roce_frame(f, IP_OTHER, 0x11, pe.qpn, pe.sq_psn, false, 0, 0, 0,
                     0x1f, 1, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x11, pe.qpn ^ 0x100, pe.sq_psn, false, 0, 0,
                     0, 0x1f, 1, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x11, pe.qpn, (pe.sq_psn + 1) & 0xffffff,
                     false, 0, 0, 0, 0x1f, 1, NULL, 0);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 3);
    g_assert_cmpuint(qtest_readl(pe.n.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    /* the real one */
    len = roce_frame(f, IP_B, 0x11, pe.qpn, pe.sq_psn, false, 0, 0, 0, 0x1f,
                     1, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, 1024);

    /* a READ of 1 KiB: the request at the next PSN */
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_READ, 1024, dst, 0x2000, 0x4343,
                     compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmpuint(rx.op, ==, 0x0c);
    g_assert_cmphex(rx.psn, ==, (pe.sq_psn + 1) & 0xffffff);
    g_assert_cmpuint(rx.dmalen, ==, 1024);
    /* a spoofed response from another IP: nothing lands */
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    memset(pl, 0xee, sizeof(pl));
    len = roce_frame(f, IP_OTHER, 0x10, pe.qpn, rx.psn, false, 0, 0, 0, 0x1f,
                     2, pl, 1024);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 1);
    g_assert_true(qpldma_mem_zero(pe.n.qts, dst, 1024));
    g_assert_cmpuint(qtest_readl(pe.n.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    /* the real one */
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 3 + 11;
    }
    len = roce_frame(f, IP_B, 0x10, pe.qpn, rx.psn, false, 0, 0, 0, 0x1f, 2,
                     pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    qpldma_mem_check(pe.n.qts, dst, pl, 1024);
    qpldma_qp_query(&pe.n.d, 0, &q);
    g_assert_cmphex(q.sq_psn, ==, (pe.sq_psn + 2) & 0xffffff);
    peer_close(&pe);
}

/*
 * Ghost ACKs: the peer answers PSNs the device never sent.  A 256 KiB
 * WRITE at path MTU 1024 (256 segments) has sent its first window when
 * the peer ACKs the message's last PSN, then sends a sequence NAK and an
 * RNR NAK for PSNs past those sent.  IBA drops an answer about a PSN
 * never sent: before the fix the ACK completed the WRITE SUCCESS with
 * 262144 bytes, 64 segments of which had left.  Now the three are
 * dropped and counted (ACK_UNSENT), the WRITE stays pending, and the
 * peer's real ACKs bring every segment, each PSN once, before SUCCESS.
 */
static void test_ghost_ack(void)
{
    enum { NSEG = 256 };
    Peer pe;
    uint8_t f[2048], d[PLDMA_DESC_SIZE], seen[NSEG] = { 0 };
    uint64_t src, compl, bytes;
    uint32_t len, got = 0, u0, seg;
    QPldmaRing r;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    ring_init(&pe.n, &r, 0);
    src = alloc_pa(&pe.n, NSEG * 1024);
    g_free(qpldma_mem_random(pe.n.qts, src, NSEG * 1024));
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_WRITE, NSEG * 1024, src, 0x100000,
                     0x4242, compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    /* the first window (64 segments), then the device waits for an ACK */
    while (got < 64) {
        g_assert_true(peer_rx(&pe, &rx));
        seg = (rx.psn - pe.sq_psn) & 0xffffff;
        g_assert_cmpuint(seg, ==, got);
        seen[seg] = 1;
        got++;
    }
    g_assert_false(peer_rx(&pe, &rx));
    u0 = ncnt(&pe.n, PLDMA_NCNT_ACK_UNSENT);
    /* an ACK of the last PSN, a sequence NAK and an RNR NAK past the sent */
    len = roce_frame(f, IP_B, 0x11, pe.qpn, (pe.sq_psn + NSEG - 1) & 0xffffff,
                     false, 0, 0, 0, 0x1f, 1, NULL, 0);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(qtest_readl(pe.n.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    len = roce_frame(f, IP_B, 0x11, pe.qpn, (pe.sq_psn + 200) & 0xffffff,
                     false, 0, 0, 0, 0x60, 0, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x11, pe.qpn, (pe.sq_psn + got) & 0xffffff,
                     false, 0, 0, 0, 0x21, 0, NULL, 0);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_ACK_UNSENT), ==, u0 + 3);
    g_assert_cmpuint(qtest_readl(pe.n.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RETX_SEGS), ==, 0);
    /* the real ACKs, each of the last PSN received, until every one came */
    while (got < NSEG) {
        uint32_t before = got;

        len = roce_frame(f, IP_B, 0x11, pe.qpn,
                         (pe.sq_psn + got - 1) & 0xffffff, false, 0, 0, 0,
                         0x1f, 0, NULL, 0);
        qpldma_stream_send(pe.fd, f, len);
        while (peer_rx(&pe, &rx)) {
            seg = (rx.psn - pe.sq_psn) & 0xffffff;
            g_assert_cmpuint(seg, ==, got);
            seen[seg] = 1;
            got++;
        }
        g_assert_cmpuint(got, >, before);
    }
    for (seg = 0; seg < NSEG; seg++) {
        g_assert_true(seen[seg]);
    }
    g_assert_cmpuint(qtest_readl(pe.n.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    len = roce_frame(f, IP_B, 0x11, pe.qpn, (pe.sq_psn + NSEG - 1) & 0xffffff,
                     false, 0, 0, 0, 0x1f, 1, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, NSEG * 1024);
    peer_close(&pe);
}

/*
 * RESET->ERR of a fresh QP (IBA and the driver allow it) takes no send
 * queue: before the fix it was "out of RESET" with SQ 0, a channel it
 * never took, and pldma_qp_of_sq(0) found it before channel 0's owner,
 * whose WRITE then completed FLUSHED with nothing on the wire.  Here QP 1
 * owns SQ 0, QP 0 goes RESET->ERR: QP 1's WRITE reaches the peer and
 * completes; SQ 0 stays QP 1's (another QP's RESET->INIT on it is BUSY);
 * QP 0, back in RESET, may take another channel.
 */
static void test_reset_err_no_sq(void)
{
    Peer pe;
    uint8_t f[2048], d[PLDMA_DESC_SIZE], pl[512];
    uint64_t src, compl, bytes;
    QPldmaQPAttr at;
    QPldmaRing r;
    uint32_t len;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    /* QP 1 on SQ 0 to the peer, in place of QP 0 */
    qp_reset(&pe.n, 0);
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe.my_qpn, pe.sq_psn,
            pe.epsn, 0);
    qp_connect(&pe.n, 1, &at);
    pe.qpn = qpldma_qpn(&pe.n.d, 1);
    /* QP 0, fresh: RESET -> ERR */
    memset(&at, 0, sizeof(at));
    at.state = PLDMA_QPS_ERR;
    g_assert_cmpuint(qpldma_qp_modify(&pe.n.d, 0, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);

    /* QP 1's WRITE goes out on SQ 0, and completes */
    ring_init(&pe.n, &r, 0);
    src = alloc_pa(&pe.n, PAGE);
    memset(pl, 0x5a, sizeof(pl));
    qtest_memwrite(pe.n.qts, src, pl, sizeof(pl));
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_WRITE, sizeof(pl), src, 0x1000,
                     0x4242, compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmpuint(rx.op, ==, 0x0a);
    g_assert_cmphex(rx.qpn, ==, pe.my_qpn);
    g_assert_cmphex(rx.psn, ==, pe.sq_psn);
    g_assert_cmpuint(rx.plen, ==, sizeof(pl));
    len = roce_frame(f, IP_B, 0x11, pe.qpn, pe.sq_psn, false, 0, 0, 0, 0x1f,
                     1, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, sizeof(pl));

    /* SQ 0 is QP 1's: QP 2's RESET->INIT on it is refused */
    memset(&at, 0, sizeof(at));
    at.state = PLDMA_QPS_INIT;
    at.sq = 0;
    at.send_cq = at.recv_cq = PLDMA_CQ_NONE;
    g_assert_cmpuint(qpldma_qp_modify(&pe.n.d, 2, PLDMA_QPA_REQ_INIT, &at),
                     ==, PLDMA_QP_ST_BUSY);
    /* QP 0, ERR -> RESET -> INIT on channel 1 */
    qp_reset(&pe.n, 0);
    at.sq = 1;
    g_assert_cmpuint(qpldma_qp_modify(&pe.n.d, 0, PLDMA_QPA_REQ_INIT, &at),
                     ==, PLDMA_QP_ST_OK);
    peer_close(&pe);
}

/*
 * A QP's frame to another MAC than the port's (a spoofer on a hub, a
 * flooding switch) is not the port's: dropped and counted (NOT_OURS),
 * nothing written, no answer.  It was taken on its IP alone.
 */
static void test_dest_mac(void)
{
    uint8_t f[2048], pl[256];
    uint32_t rkey, len, psn;
    uint64_t pa;
    Peer pe;

    memset(pl, 0x3c, sizeof(pl));
    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    pa = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE, PLDMA_KEY_ACC_WRITE);
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, pa, rkey, pl,
                     sizeof(pl));
    f[5] ^= 0x0e;                       /* another node's MAC */
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NOT_OURS), ==, 1);
    g_assert_true(qpldma_mem_zero(pe.n.qts, pa, PAGE));
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, -1);
    /* to the port's own: taken */
    f[5] ^= 0x0e;
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    qpldma_mem_check(pe.n.qts, pa, pl, sizeof(pl));
    peer_close(&pe);
}

/* QEMU's resident set, KiB */
static uint64_t qemu_rss_kib(QTestState *qts)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/status",
                                            (int)qtest_pid(qts));
    g_autofree char *st = NULL;
    const char *l;

    g_assert_true(g_file_get_contents(path, &st, NULL, NULL));
    l = strstr(st, "VmRSS:");
    g_assert_nonnull(l);
    return g_ascii_strtoull(l + 6, NULL, 10);
}

/* Read whatever the device sent, without waiting for more */
static uint32_t peer_drain(Peer *pe)
{
    uint8_t f[8192];
    uint32_t n = 0;
    uint8_t hdr[4];

    while (recv(pe->fd, hdr, 4, MSG_PEEK | MSG_DONTWAIT) == 4) {
        g_assert_cmpuint(qpldma_stream_recv(pe->fd, f, sizeof(f)), >, 0);
        n++;
    }
    return n;
}

/*
 * A hostile peer's campaign against a QP, seeded (g_test_rand: the seed
 * is in the log): frames built from valid WRITE, SEND, READ, ACK and
 * atomic templates, then mutated (opcode, PSN near and far, QPN, source
 * IP, rkey index and generation, VA in, beside and outside the window,
 * DMA length, payload length, truncated), some repeated as floods.  The
 * device's memory holds a keyed pattern: only the window [win, win +
 * PAGE) of a key that allows WRITE may change; the zones beside it, a
 * read-only key's range and a page of another PD must keep their pattern
 * byte for byte.  Along the way the device stays live (a register reads
 * back), its QEMU's RSS stays bounded, and after a NAK that ends the
 * connection the QP is in ERR (then connected again).  At the end a good
 * WRITE on a new connection lands.
 */
static void test_hostile_campaign(void)
{
    enum { FRAMES = 3000, ZONE = 4 * PAGE };
    uint8_t f[8192], pl[4096], op, aeth[ATOMIC_ETH];
    g_autofree uint8_t *pat = g_malloc(ZONE);
    uint32_t rkey_w, rkey_r, rkey_pd, len, i, j, errs = 0, psn, rx0;
    uint64_t zone, win, rss0, rss;
    Peer pe;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    /* [zone, zone + 4 pages): guard, WRITE window, read-only, other PD */
    zone = alloc_pa(&pe.n, ZONE);
    for (i = 0; i < ZONE; i++) {
        pat[i] = (i * 131 + (i >> 12) * 7 + 0x5b) & 0xff;
    }
    qtest_memwrite(pe.n.qts, zone, pat, ZONE);
    win = zone + PAGE;
    rkey_w = key_register(&pe.n, 0, 0, win, PAGE,
                          PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    rkey_r = key_register(&pe.n, 1, 0, zone + 2 * PAGE, PAGE,
                          PLDMA_KEY_ACC_READ);
    rkey_pd = key_register(&pe.n, 2, 7 | PLDMA_CHB_PASID_EN, zone + 3 * PAGE,
                           PAGE, PLDMA_KEY_ACC_WRITE);
    rss0 = qemu_rss_kib(pe.n.qts);
    memset(aeth, 0, sizeof(aeth));

    for (i = 0; i < FRAMES; i++) {
        uint32_t kind = g_test_rand_int_range(0, 6), mut, n, reps = 1;
        uint32_t qpn = pe.qpn, src = IP_B, rkey = rkey_w, dmalen;
        uint64_t va = win + 64 * g_test_rand_int_range(0, 48);
        bool reth = false;
        int syn = -1;

        psn = (pe.epsn + g_test_rand_int_range(-3, 4)) & 0xffffff;
        n = 64 * g_test_rand_int_range(0, 17);
        dmalen = n;
        for (j = 0; j < n; j++) {
            pl[j] = g_test_rand_int();
        }
        switch (kind) {
        case 0:         /* WRITE Only */
            op = 0x0a;
            reth = true;
            break;
        case 1:         /* WRITE First of two, or a Middle/Last alone */
            op = g_test_rand_int_range(0x06, 0x0a);
            reth = op == 0x06;
            dmalen = 2048;
            n = op == 0x06 || op == 0x07 ? 1024 : n;
            break;
        case 2:         /* SEND (no receive queue: RNR or NAK) */
            op = g_test_rand_int_range(0x00, 0x06);
            break;
        case 3:         /* READ */
            op = 0x0c;
            reth = true;
            n = 0;
            break;
        case 4:         /* ACK or NAK, for a PSN the device never sent */
            op = 0x11;
            syn = g_test_rand_bit() ? 0x1f : 0x60 | g_test_rand_int_range(0,
                                                                         4);
            n = 0;
            break;
        default:        /* atomic */
            op = g_test_rand_bit() ? 0x13 : 0x14;
            stq_be_p(aeth, va);
            stl_be_p(aeth + 8, rkey);
            memcpy(pl, aeth, sizeof(aeth));
            n = sizeof(aeth);
            break;
        }
        /* one mutation, or none */
        mut = g_test_rand_int_range(0, 12);
        switch (mut) {
        case 0:
            rkey = rkey_r;                      /* read-only key */
            break;
        case 1:
            rkey = rkey_pd;                     /* another PD's */
            va = zone + 3 * PAGE;
            break;
        case 2:
            rkey ^= 1U << g_test_rand_int_range(8, 32);   /* generation */
            break;
        case 3:
            va = zone + g_test_rand_int_range(0, ZONE);   /* anywhere */
            break;
        case 4:
            va = win + PAGE - g_test_rand_int_range(0, 64); /* its end */
            break;
        case 5:
            dmalen = g_test_rand_int();         /* any DMA length */
            break;
        case 6:
            psn = g_test_rand_int() & 0xffffff; /* any PSN */
            break;
        case 7:
            qpn ^= 1U << g_test_rand_int_range(0, 24);
            break;
        case 8:
            src = IP_OTHER;                     /* spoofed source */
            break;
        case 9:
            reps = g_test_rand_int_range(2, 40);    /* a flood */
            break;
        default:
            break;
        }
        len = roce_frame(f, src, op, qpn, psn, reth, va, rkey, dmalen, syn,
                         g_test_rand_int() & 0xffffff, pl, n);
        if (g_test_rand_int_range(0, 16) == 0) {
            /* truncated: the ICRC no longer matches, or no header left */
            len = g_test_rand_int_range(14, len);
        }
        for (j = 0; j < reps; j++) {
            qpldma_stream_send(pe.fd, f, len);
        }
        if (i % 64 == 63) {
            /* live, bounded, and the pattern outside the window intact */
            rx0 = ncnt(&pe.n, PLDMA_NCNT_RX_FRAMES);
            g_assert_cmpuint(qpldma_rd(&pe.n.d, PLDMA_QP_NUM), ==, 16);
            peer_drain(&pe);
            qpldma_mem_check(pe.n.qts, zone, pat, PAGE);
            qpldma_mem_check(pe.n.qts, zone + 2 * PAGE, pat + 2 * PAGE,
                             2 * PAGE);
            rss = qemu_rss_kib(pe.n.qts);
            g_assert_cmpuint(rss, <, rss0 + 64 * 1024);
            (void)rx0;
        }
        if (qpldma_qp_state(&pe.n.d, 0) == PLDMA_QPS_ERR) {
            /* a NAK ended the connection, as IBA has it: a new one */
            errs++;
            peer_drain(&pe);
            peer_reconnect(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
        } else {
            /* the QP's expected PSN, as a requester would follow it */
            QPldmaQPAttr q;

            qpldma_qp_query(&pe.n.d, 0, &q);
            pe.epsn = q.rq_psn;
        }
    }
    peer_drain(&pe);
    qpldma_mem_check(pe.n.qts, zone, pat, PAGE);
    qpldma_mem_check(pe.n.qts, zone + 2 * PAGE, pat + 2 * PAGE, 2 * PAGE);
    g_test_message("%u frames, %u connections ended by a fatal NAK, "
                   "RSS %" PRIu64 " -> %" PRIu64 " KiB, %u dropped", FRAMES,
                   errs, rss0, qemu_rss_kib(pe.n.qts),
                   ncnt(&pe.n, PLDMA_NCNT_RX_DROPPED));
    g_assert_cmpuint(errs, >, 0);
    /* still serves: a good WRITE on a new connection lands */
    peer_reconnect(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    memset(pl, 0xa5, 256);
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, win, rkey_w, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    qpldma_mem_check(pe.n.qts, win, pl, 256);
    peer_close(&pe);
}

/*
 * A message is at most 2^31 bytes (IBA), whatever max-transfer allows: at
 * MTU 256 a longer one wraps the 24-bit PSN space, and its later PSNs
 * look older than its first.  With max-transfer 4 GiB - 1, a WRITE of
 * 2^31 + 4 KiB was sent; now it ends BAD_LENGTH with nothing on the wire,
 * and a peer's WRITE First of that length is NAKed Invalid Request.
 */
static void test_max_message(void)
{
    uint8_t f[2048], d[PLDMA_DESC_SIZE], pl[256] = { 0 };
    uint64_t compl, src, pa;
    uint32_t psn, len, rkey;
    QPldmaRing r;
    Peer pe;
    Rx rx;

    peer_open_props(&pe, PLDMA_KEY_ACC_WRITE, false,
                    ",max-transfer=0xffffffff");
    ring_init(&pe.n, &r, 0);
    src = alloc_pa(&pe.n, PAGE);
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_WRITE, 0x80001000U, src, 0x1000,
                     0x4242, compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_BAD_LENGTH);
    g_assert_false(peer_rx(&pe, &rx));
    pa = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE, PLDMA_KEY_ACC_WRITE);
    len = roce_frame(f, IP_B, 0x06, pe.qpn, pe.epsn, true, pa, rkey,
                     0x80001000U, -1, 0, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x61);
    g_assert_true(qpldma_mem_zero(pe.n.qts, pa, PAGE));
    peer_close(&pe);
}

#define ACC_ALL (PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ | \
                 PLDMA_KEY_ACC_ATOMIC)

/* The device's Atomic Acknowledge of @psn: its Original Remote Data */
static uint64_t atomic_answer(Peer *pe, uint32_t psn)
{
    Rx rx;

    g_assert_true(peer_rx(pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x12);
    g_assert_cmphex(rx.qpn, ==, pe->my_qpn);
    g_assert_cmphex(rx.psn, ==, psn & 0xffffff);
    g_assert_cmphex(rx.syn, ==, 0x1f);
    g_assert_cmpuint(rx.plen, ==, 8);
    return ldq_be_p(rx.data);
}

/*
 * A peer's atomics to the device's QP (IBA 9.4.5, rxe's requester):
 * FetchAdd, CmpSwap that fails and one that succeeds, each answered with
 * the 8 bytes found, in the memory's byte order (little-endian here).  A
 * duplicate is answered from the saved result and not executed again
 * (C9-97).  A misaligned VA is an invalid request (NAK 0x61), and a QP or
 * key without the atomic right gets NAK remote access (0x62); either ends
 * the connection, and nothing in the window changes.  Before, the device
 * refused every atomic.
 */
static void test_atomic_responder(void)
{
    uint8_t f[2048];
    uint32_t rkey, psn, dups;
    uint64_t pa;
    Peer pe;

    peer_open(&pe, ACC_ALL);
    pa = alloc_pa(&pe.n, PAGE);
    qtest_writeq(pe.n.qts, pa + 64, 100);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE, ACC_ALL);

    peer_inject(&pe, f, atomic_req(f, &pe, 0x14, pe.epsn, pa + 64, rkey, 5,
                                   0));
    g_assert_cmpuint(atomic_answer(&pe, pe.epsn), ==, 100);
    g_assert_cmpuint(qtest_readq(pe.n.qts, pa + 64), ==, 105);
    peer_inject(&pe, f, atomic_req(f, &pe, 0x13, pe.epsn + 1, pa + 64, rkey,
                                   9, 7));
    g_assert_cmpuint(atomic_answer(&pe, pe.epsn + 1), ==, 105);
    g_assert_cmpuint(qtest_readq(pe.n.qts, pa + 64), ==, 105);
    peer_inject(&pe, f, atomic_req(f, &pe, 0x13, pe.epsn + 2, pa + 64, rkey,
                                   0xdeadbeefcafeULL, 105));
    g_assert_cmpuint(atomic_answer(&pe, pe.epsn + 2), ==, 105);
    g_assert_cmphex(qtest_readq(pe.n.qts, pa + 64), ==, 0xdeadbeefcafeULL);

    /* the first again: its own answer, the memory as it is */
    dups = ncnt(&pe.n, PLDMA_NCNT_DUPS);
    peer_inject(&pe, f, atomic_req(f, &pe, 0x14, pe.epsn, pa + 64, rkey, 5,
                                   0));
    g_assert_cmpuint(atomic_answer(&pe, pe.epsn), ==, 100);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_DUPS), ==, dups + 1);
    g_assert_cmphex(qtest_readq(pe.n.qts, pa + 64), ==, 0xdeadbeefcafeULL);

    /* misaligned: an invalid request, fatal */
    peer_inject(&pe, f, atomic_req(f, &pe, 0x14, pe.epsn + 3, pa + 68, rkey,
                                   1, 0));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x61);
    g_assert_cmphex(psn, ==, (pe.epsn + 3) & 0xffffff);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmphex(qtest_readq(pe.n.qts, pa + 64), ==, 0xdeadbeefcafeULL);

    /* a QP without the atomic right: remote access */
    peer_reconnect(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    peer_inject(&pe, f, atomic_req(f, &pe, 0x14, pe.epsn, pa + 64, rkey, 1,
                                   0));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x62);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    /* a key without it */
    peer_reconnect(&pe, ACC_ALL);
    rkey = key_register(&pe.n, 1, 0, pa, PAGE, PLDMA_KEY_ACC_WRITE);
    peer_inject(&pe, f, atomic_req(f, &pe, 0x13, pe.epsn, pa + 64, rkey, 1,
                                   0xdeadbeefcafeULL));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x62);
    g_assert_cmphex(qtest_readq(pe.n.qts, pa + 64), ==, 0xdeadbeefcafeULL);
    /* a key with the atomic right alone (verbs: LOCAL_WRITE | ATOMIC) */
    peer_reconnect(&pe, ACC_ALL);
    rkey = key_register(&pe.n, 2, 0, pa, PAGE, PLDMA_KEY_ACC_ATOMIC);
    peer_inject(&pe, f, atomic_req(f, &pe, 0x14, pe.epsn, pa + 64, rkey, 2,
                                   0));
    g_assert_cmphex(atomic_answer(&pe, pe.epsn), ==, 0xdeadbeefcafeULL);
    g_assert_cmphex(qtest_readq(pe.n.qts, pa + 64), ==, 0xdeadbeefcb00ULL);
    peer_close(&pe);
}

/* An Atomic Write (0x1d) of @val's 8 bytes, or @plen of them, at @va */
static uint32_t atomic_write_req(uint8_t *f, Peer *pe, uint32_t psn,
                                 uint64_t va, uint32_t rkey, uint64_t val,
                                 uint32_t plen)
{
    uint8_t pl[8];

    stq_le_p(pl, val);
    return roce_frame(f, IP_B, 0x1d, pe->qpn, psn & 0xffffff, true, va, rkey,
                      plen, -1, 0, pl, plen);
}

/* The device's answer to an Atomic Write: READ Response Only, no bytes */
static void aw_answer_check(Peer *pe, uint32_t psn)
{
    Rx rx;

    g_assert_true(peer_rx(pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.syn, ==, 0x1f);
    g_assert_cmphex(rx.psn, ==, psn & 0xffffff);
    g_assert_cmpuint(rx.plen, ==, 0);
}

/*
 * Atomic Write (IBA 1.5) from a peer that builds its frames: the 8 bytes
 * land as they came, answered as rxe does by an RDMA READ Response Only
 * of no bytes; a duplicate is answered again and
 * never written again (the memory changed since stays); refused, the QP
 * to ERR and nothing written: misaligned, not 8 bytes, a key without
 * remote WRITE access (the atomic right is not enough)
 */
static void test_atomic_write_responder(void)
{
    const uint64_t v = 0x0123456789abcdefULL;
    uint8_t f[2048];
    uint32_t rkey, psn, dups;
    uint64_t pa;
    Peer pe;

    peer_open(&pe, ACC_ALL);
    pa = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE, ACC_ALL);
    peer_inject(&pe, f, atomic_write_req(f, &pe, pe.epsn, pa + 64, rkey, v,
                                         8));
    aw_answer_check(&pe, pe.epsn);
    g_assert_cmphex(qtest_readq(pe.n.qts, pa + 64), ==, v);
    /* the same again: answered, not written over what is there now */
    qtest_writeq(pe.n.qts, pa + 64, 5);
    dups = ncnt(&pe.n, PLDMA_NCNT_DUPS);
    peer_inject(&pe, f, atomic_write_req(f, &pe, pe.epsn, pa + 64, rkey, v,
                                         8));
    aw_answer_check(&pe, pe.epsn);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_DUPS), ==, dups + 1);
    g_assert_cmpuint(qtest_readq(pe.n.qts, pa + 64), ==, 5);
    /* four bytes: an invalid request */
    peer_inject(&pe, f, atomic_write_req(f, &pe, pe.epsn + 1, pa + 64, rkey,
                                         v, 4));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x61);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    /* misaligned */
    peer_reconnect(&pe, ACC_ALL);
    peer_inject(&pe, f, atomic_write_req(f, &pe, pe.epsn, pa + 68, rkey, v,
                                         8));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x61);
    /* a key with the atomic right but not remote WRITE */
    peer_reconnect(&pe, ACC_ALL);
    rkey = key_register(&pe.n, 1, 0, pa, PAGE, PLDMA_KEY_ACC_ATOMIC);
    peer_inject(&pe, f, atomic_write_req(f, &pe, pe.epsn, pa + 64, rkey, v,
                                         8));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x62);
    g_assert_cmpuint(qtest_readq(pe.n.qts, pa + 64), ==, 5);
    g_assert_true(qpldma_mem_zero(pe.n.qts, pa + 68, 4));
    peer_close(&pe);
}

/* A FLUSH (0x1c): FETH @feth, then a RETH of [@va, + @len) */
static uint32_t flush_req(uint8_t *f, Peer *pe, uint32_t psn, uint32_t feth,
                          uint64_t va, uint32_t rkey, uint32_t len)
{
    uint8_t h[20];

    stl_be_p(h, feth);
    stq_be_p(h + 4, va);
    stl_be_p(h + 12, rkey);
    stl_be_p(h + 16, len);
    return roce_frame(f, IP_B, 0x1c, pe->qpn, psn & 0xffffff, false, 0, 0, 0,
                      -1, 0, h, sizeof(h));
}

/*
 * FLUSH (IBA 1.5) from a peer that builds its frames: with a key that
 * allows it, for a range or the key's whole window (any VA then), the
 * answer is a READ Response Only of no bytes, also for a duplicate;
 * refused, the QP to ERR: a key without the FLUSH right (remote WRITE is
 * not enough), persistence (no window has it), a range beyond the key, a
 * FETH with unknown bits
 */
static void test_flush_responder(void)
{
    uint8_t f[2048];
    uint32_t rkey, wkey, psn;
    uint64_t pa;
    Peer pe;

    peer_open(&pe, ACC_ALL);
    pa = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_FLUSH);
    wkey = key_register(&pe.n, 1, 0, pa, PAGE, PLDMA_KEY_ACC_WRITE);
    peer_inject(&pe, f, flush_req(f, &pe, pe.epsn, PLDMA_FLUSH_GLOBAL,
                                  pa + 100, rkey, 200));
    aw_answer_check(&pe, pe.epsn);
    peer_inject(&pe, f, flush_req(f, &pe, pe.epsn + 1,
                                  PLDMA_FLUSH_GLOBAL | PLDMA_FLUSH_MR, 0,
                                  rkey, 0));
    aw_answer_check(&pe, pe.epsn + 1);
    peer_inject(&pe, f, flush_req(f, &pe, pe.epsn, PLDMA_FLUSH_GLOBAL,
                                  pa + 100, rkey, 200));
    aw_answer_check(&pe, pe.epsn);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_RTS);

    peer_inject(&pe, f, flush_req(f, &pe, pe.epsn + 2, PLDMA_FLUSH_GLOBAL,
                                  pa, wkey, 8));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x62);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    peer_reconnect(&pe, ACC_ALL);
    peer_inject(&pe, f, flush_req(f, &pe, pe.epsn, PLDMA_FLUSH_PERSISTENT,
                                  pa, rkey, 8));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x62);
    peer_reconnect(&pe, ACC_ALL);
    peer_inject(&pe, f, flush_req(f, &pe, pe.epsn, PLDMA_FLUSH_GLOBAL,
                                  pa + PAGE - 4, rkey, 8));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x62);
    peer_reconnect(&pe, ACC_ALL);
    peer_inject(&pe, f, flush_req(f, &pe, pe.epsn, PLDMA_FLUSH_GLOBAL | 0x40,
                                  pa, rkey, 8));
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x61);
    peer_close(&pe);
}

/*
 * The device sends an Atomic Write to a peer that answers as it likes:
 * the request carries the RETH and the descriptor's 8 bytes; a plain ACK
 * of its PSN, a READ response with bytes or of another PSN complete
 * nothing (IBA 1.5 answers with a READ response of no bytes: anything
 * else would report a write the peer did not say it did); the real
 * answer completes it SUCCESS
 */
static void test_atomic_write_requester(void)
{
    const uint64_t v = 0x1122334455667788ULL;
    uint8_t f[2048], d[PLDMA_DESC_SIZE], aeth[4], pl[12];
    uint64_t compl;
    QPldmaRing r;
    Peer pe;
    Rx rx;
    int i;

    peer_open(&pe, ACC_ALL);
    ring_init(&pe.n, &r, 0);
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    qpldma_desc_rdma(d, PLDMA_OP_ATOMIC_WRITE, 8, v, 0x20010, 0x4343, compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x1d);
    g_assert_cmphex(rx.psn, ==, pe.sq_psn);
    g_assert_cmphex(rx.va, ==, 0x20010);
    g_assert_cmphex(rx.rkey, ==, 0x4343);
    g_assert_cmpuint(rx.dmalen, ==, 8);
    g_assert_cmpuint(rx.plen, ==, 8);
    g_assert_cmphex(ldq_le_p(rx.data), ==, v);

    /* a plain ACK, a response with bytes, one of the next PSN */
    stl_be_p(aeth, 0x1f000001);
    peer_inject(&pe, f, roce_frame(f, IP_B, 0x11, pe.qpn, pe.sq_psn, false,
                                   0, 0, 0, 0x1f, 1, NULL, 0));
    stl_be_p(pl, 0x1f000001);
    stq_be_p(pl + 4, 0);
    peer_inject(&pe, f, roce_frame(f, IP_B, 0x10, pe.qpn, pe.sq_psn, false,
                                   0, 0, 0, -1, 0, pl, sizeof(pl)));
    peer_inject(&pe, f, roce_frame(f, IP_B, 0x10, pe.qpn, pe.sq_psn + 1,
                                   false, 0, 0, 0, -1, 0, aeth, 4));
    for (i = 0; i < 50; i++) {
        peer_step(NULL);
    }
    g_assert_cmpuint(qtest_readl(pe.n.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    /* the answer */
    qpldma_stream_send(pe.fd, f, roce_frame(f, IP_B, 0x10, pe.qpn,
                                            pe.sq_psn, false, 0, 0, 0, -1,
                                            0, aeth, 4));
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_SUCCESS);
    peer_close(&pe);
}

/*
 * An atomic on an untouched page (ODP): the responder faults, RNR NAKs
 * it, posts a fault record; resolved, the "resend now" ACK names the PSN
 * before it.  The resent atomic is executed then, once: the add is in
 * the memory one time, and a duplicate after it gets the same answer.
 */
static void test_atomic_fault(void)
{
    uint8_t f[2048], rec[PLDMA_FR_SIZE];
    uint32_t rkey, psn, len;
    uint64_t pa, va;
    Peer pe;

    peer_open_smmu(&pe, ACC_ALL, true);
    pa = alloc_pa(&pe.n, PAGE);
    qtest_writeq(pe.n.qts, pa + 8, 40);
    rkey = unmapped_key(&pe, 0, pa, &va, ACC_ALL);
    len = atomic_req(f, &pe, 0x14, pe.epsn, va + 8, rkey, 2, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, pe.epsn);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==, va);
    g_assert_cmpuint(qtest_readq(pe.n.qts, pa + 8), ==, 40);
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn - 1) & 0xffffff);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpuint(atomic_answer(&pe, pe.epsn), ==, 40);
    g_assert_cmpuint(qtest_readq(pe.n.qts, pa + 8), ==, 42);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpuint(atomic_answer(&pe, pe.epsn), ==, 40);
    g_assert_cmpuint(qtest_readq(pe.n.qts, pa + 8), ==, 42);
    peer_close(&pe);
}

/*
 * The device as the requester of atomics, against the test as the
 * responder: a CmpSwap goes out as one packet with its AtomicETH at the
 * QP's SQ PSN; an Atomic Acknowledge from another IP or for another PSN
 * lands nothing; the real one's value goes to DST and the descriptor
 * completes SUCCESS with 8 bytes.  A FetchAdd with a SWAP operand is a
 * bad descriptor, one of another length a bad length; neither sends.
 */
static void test_atomic_requester(void)
{
    uint8_t f[2048], d[PLDMA_DESC_SIZE];
    uint64_t dst, compl, bytes;
    uint32_t d0;
    QPldmaRing r;
    QPldmaQPAttr q;
    Peer pe;
    Rx rx;

    peer_open(&pe, ACC_ALL);
    ring_init(&pe.n, &r, 0);
    dst = alloc_pa(&pe.n, PAGE);
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    desc_atomic(d, PLDMA_OP_ATOMIC_CMP_SWAP, dst + 16, 0x10008, 0x4242,
                0x1234, 0x5678, compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x13);
    g_assert_cmphex(rx.qpn, ==, pe.my_qpn);
    g_assert_cmphex(rx.psn, ==, pe.sq_psn);
    g_assert_cmpuint(rx.plen, ==, ATOMIC_ETH);
    g_assert_cmphex(ldq_be_p(rx.data), ==, 0x10008);
    g_assert_cmphex(ldl_be_p(rx.data + 8), ==, 0x4242);
    g_assert_cmphex(ldq_be_p(rx.data + 12), ==, 0x5678);   /* swap */
    g_assert_cmphex(ldq_be_p(rx.data + 20), ==, 0x1234);   /* compare */

    /* spoofed answers: another IP, the next PSN; nothing lands */
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    peer_inject(&pe, f, atomic_ack(f, &pe, IP_OTHER, pe.sq_psn,
                                   0xbadbadbadULL));
    peer_inject(&pe, f, atomic_ack(f, &pe, IP_B, pe.sq_psn + 1,
                                   0xbadbadbadULL));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 2);
    g_assert_true(qpldma_mem_zero(pe.n.qts, dst, 32));
    g_assert_cmpuint(qtest_readl(pe.n.qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    /* the real one: the value found, to DST */
    qpldma_stream_send(pe.fd, f, atomic_ack(f, &pe, IP_B, pe.sq_psn, 0x1234));
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, 8);
    g_assert_cmphex(qtest_readq(pe.n.qts, dst + 16), ==, 0x1234);
    g_assert_true(qpldma_mem_zero(pe.n.qts, dst, 16));

    /* bad descriptors: nothing sent, the QP's PSN stays */
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    desc_atomic(d, PLDMA_OP_ATOMIC_FETCH_ADD, dst, 0x10000, 0x4242, 1, 2,
                compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_BAD_DESC);
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    desc_atomic(d, PLDMA_OP_ATOMIC_FETCH_ADD, dst, 0x10000, 0x4242, 1, 0,
                compl);
    stl_le_p(d + PLDMA_DESC_LEN, 4);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_BAD_LENGTH);
    g_assert_false(peer_rx(&pe, &rx));
    qpldma_qp_query(&pe.n.d, 0, &q);
    g_assert_cmphex(q.sq_psn, ==, (pe.sq_psn + 1) & 0xffffff);
    peer_close(&pe);
}

/* UC SEND First; + 1 Middle, + 2 Last, + 0x0a RDMA WRITE Only (IBA) */
#define UC_SEND_FIRST   0x20

/*
 * A UC QP against a peer that loses packets and sends what it should
 * not: a SEND whose Middle never came is dropped whole (no CQE, counted),
 * and its receive WQE takes the next SEND; an RC opcode, a WRITE with a
 * bad R_Key, a Middle with no First: dropped, the QP goes on in RTS.  The
 * device answers none of it: no ACK, no NAK, ever.
 */
static void test_uc_peer(void)
{
    uint8_t f[2048], pl[3 * 1024], e[PLDMA_CQE_SIZE];
    uint32_t len, d0, u0, psn, l = sizeof(pl), i;
    QPldmaQPAttr at;
    uint64_t buf;
    Side sd;
    Peer pe;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 11 + 3;
    }
    qp_reset(&pe.n, 0);
    side_init(&pe.n, &sd, 0, CQ_SIZE);
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe.my_qpn, pe.sq_psn,
            pe.epsn, 0);
    qp_connect_uc(&pe.n, 0, &at, &sd);
    pe.qpn = qpldma_qpn(&pe.n.d, 0);
    buf = alloc_pa(&pe.n, l);
    post_recv(&pe.n, &sd, 0xab, 1, &buf, &l);
    u0 = ncnt(&pe.n, PLDMA_NCNT_UC_DROPPED);
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);

    /* First, (Middle lost), Last: the message is dropped */
    psn = pe.epsn;
    len = roce_frame(f, IP_B, UC_SEND_FIRST, pe.qpn, psn, false, 0, 0, 0,
                     -1, 0, pl, 1024);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, UC_SEND_FIRST + 2, pe.qpn, psn + 2, false, 0,
                     0, 0, -1, 0, pl + 2048, 1024);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_UC_DROPPED), ==, u0 + 1);
    g_assert_false(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));
    /* a Middle with no message: dropped, counted once with it */
    len = roce_frame(f, IP_B, UC_SEND_FIRST + 1, pe.qpn, psn + 3, false, 0,
                     0, 0, -1, 0, pl, 1024);
    peer_inject(&pe, f, len);
    /* an RC SEND Only to the UC QP: not its transport */
    len = roce_frame(f, IP_B, 0x04, pe.qpn, psn + 4, false, 0, 0, 0, -1, 0,
                     pl, 100);
    peer_inject(&pe, f, len);
    /* (the Last, the Middle after it, the RC SEND: none taken) */
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 3);
    /* a WRITE Only with a bad R_Key: dropped, no NAK, the QP goes on */
    len = roce_frame(f, IP_B, UC_SEND_FIRST + 0x0a, pe.qpn, psn + 5,
                     true, 0x1000, 0x12345601, 64, -1, 0, pl, 64);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_UC_DROPPED), ==, u0 + 2);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_RTS);

    /* the whole message, at a PSN of its own: the same WQE takes it */
    psn += 100;
    for (i = 0; i < 3; i++) {
        len = roce_frame(f, IP_B, UC_SEND_FIRST + (i == 0 ? 0 :
                                                      i == 1 ? 1 : 2),
                         pe.qpn, psn + i, false, 0, 0, 0, -1, 0,
                         pl + i * 1024, 1024);
        peer_inject(&pe, f, len);
    }
    peer_cqe(&pe, &sd.rcq, e);
    check_cqe(e, 0xab, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, sizeof(pl),
              pe.qpn, pe.my_qpn, 0, 0, 0);
    qpldma_mem_check(pe.n.qts, buf, pl, sizeof(pl));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_UC_DROPPED), ==, u0 + 2);
    /* not a frame came back for any of it */
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_ACK_TX), ==, 0);
    peer_close(&pe);
}

/* A UD datagram from @src_ip, QP @src_qpn, to @qpn with @qkey */
static uint32_t ud_frame(uint8_t *f, Peer *pe, uint8_t op, uint32_t src_ip,
                         uint32_t src_qpn, uint32_t qpn, uint32_t qkey,
                         bool deth, const uint8_t *pl, uint32_t plen)
{
    uint8_t mac[6];
    QPldmaRoce r = {
        .dst_mac = mac, .src_mac = (const uint8_t *)PEER_MAC,
        .src_ip = src_ip, .dst_ip = IP_A, .op = op, .qpn = qpn,
        .psn = g_random_int() & 0xffffff, .deth = deth, .qkey = qkey,
        .src_qpn = src_qpn, .aeth_syn = -1, .pl = pl, .plen = plen,
    };

    qpldma_mac(&pe->n.d, mac);
    return qpldma_roce_frame(f, &r);
}

/*
 * A UD QP and a peer that builds its own datagrams: taken from any source
 * and QP with the QP's Q_Key (the GRH holds the sender's IPv4 header, the
 * CQE its QPN); dropped and counted, the WQE kept, nothing ever answered:
 * another Q_Key, a DETH cut short, more than the MTU, an RC opcode, a
 * stale QPN
 */
static void test_ud_peer(void)
{
    const uint32_t qkey = 0x0badcafe, ip_c = 0x0a000009U;
    uint8_t f[2100], pl[1100], e[PLDMA_CQE_SIZE], grh[PLDMA_UD_GRH_LEN];
    uint32_t len, d0, u0, r0, l = 200 + PLDMA_UD_GRH_LEN, qpn, i;
    uint64_t buf;
    Side sd;
    Peer pe;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 7 + 5;
    }
    qp_reset(&pe.n, 0);
    side_init(&pe.n, &sd, 0, CQ_SIZE);
    qp_connect_ud(&pe.n, 0, 0, qkey, &sd);
    qpn = qpldma_qpn(&pe.n.d, 0);
    buf = alloc_pa(&pe.n, l);
    post_recv(&pe.n, &sd, 0xcd, 1, &buf, &l);
    u0 = ncnt(&pe.n, PLDMA_NCNT_UD_DROPPED);
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    r0 = ncnt(&pe.n, PLDMA_NCNT_RX_DROPPED);

    /* another Q_Key; an RC SEND Only; the QPN of another generation */
    peer_inject(&pe, f, ud_frame(f, &pe, 0x64, ip_c, 0x123, qpn, qkey ^ 1,
                                 true, pl, 200));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_UD_DROPPED), ==, u0 + 1);
    len = roce_frame(f, IP_B, 0x04, qpn, 0, false, 0, 0, 0, -1, 0, pl, 100);
    peer_inject(&pe, f, len);
    peer_inject(&pe, f, ud_frame(f, &pe, 0x64, ip_c, 0x123, qpn ^ 0x100,
                                 qkey, true, pl, 200));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 2);
    /* a DETH cut short (4 bytes of it), more than the MTU: malformed */
    peer_inject(&pe, f, ud_frame(f, &pe, 0x64, ip_c, 0, qpn, 0, false, pl,
                                 4));
    peer_inject(&pe, f, ud_frame(f, &pe, 0x64, ip_c, 0x123, qpn, qkey,
                                 true, pl, 1024 + 4));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RX_DROPPED), >=, r0 + 2);
    g_assert_false(qpldma_cq_poll(&pe.n.d, &sd.rcq, e));

    /* from a third address: the WQE still posted takes it */
    peer_inject(&pe, f, ud_frame(f, &pe, 0x64, ip_c, 0x123, qpn, qkey,
                                 true, pl, 200));
    peer_cqe(&pe, &sd.rcq, e);
    check_cqe(e, 0xcd, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, l, qpn, 0x123,
              PLDMA_CQE_F_GRH, 0, 0);
    qtest_memread(pe.n.qts, buf, grh, sizeof(grh));
    g_assert_cmphex(ldl_be_p(grh + 32), ==, ip_c);
    g_assert_cmphex(ldl_be_p(grh + 36), ==, IP_A);
    qpldma_mem_check(pe.n.qts, buf + PLDMA_UD_GRH_LEN, pl, 200);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_UD_DROPPED), ==, u0 + 1);
    /* (no WQE now) */
    peer_inject(&pe, f, ud_frame(f, &pe, 0x64, IP_B, 0x124, qpn, qkey, true,
                                 pl, 10));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_UD_DROPPED), ==, u0 + 2);
    /* not a frame came back for any of it; the QP goes on */
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_ACK_TX), ==, 0);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_RTS);
    peer_close(&pe);
}

void pldma_qp_peer_register(void)
{
    qtest_add_func("/pldma-qp/hostile-responder", test_hostile_responder);
    qtest_add_func("/pldma-qp/hostile-requester", test_hostile_requester);
    qtest_add_func("/pldma-qp/ghost-ack", test_ghost_ack);
    qtest_add_func("/pldma-qp/reset-err-no-sq", test_reset_err_no_sq);
    qtest_add_func("/pldma-qp/dest-mac", test_dest_mac);
    qtest_add_func("/pldma-qp/hostile-campaign", test_hostile_campaign);
    qtest_add_func("/pldma-qp/max-message", test_max_message);
    qtest_add_func("/pldma-qp/atomic-responder", test_atomic_responder);
    qtest_add_func("/pldma-qp/atomic-fault", test_atomic_fault);
    qtest_add_func("/pldma-qp/atomic-requester", test_atomic_requester);
    qtest_add_func("/pldma-qp/atomic-write-responder",
                   test_atomic_write_responder);
    qtest_add_func("/pldma-qp/atomic-write-requester",
                   test_atomic_write_requester);
    qtest_add_func("/pldma-qp/flush-responder", test_flush_responder);
    qtest_add_func("/pldma-qp/uc-peer", test_uc_peer);
    qtest_add_func("/pldma-qp/ud-peer", test_ud_peer);
}
