/*
 * A PLDMA node against the test as its hostile peer, both
 * directions' PSNs from 0
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

/* Our QPN, as the peer of node 1's QP 0 (our MAC: PEER_MAC) */
#define PEER_QPN        0x5a0103

/*
 * A RoCEv2 frame from us to node 1's QP 0: BTH opcode/psn/ackreq, RETH if
 * @reth, AETH if @aeth_syn >= 0, payload; returns its length
 */
static uint32_t peer_frame(Peer *pe, uint8_t *f, uint8_t op, uint32_t psn,
                           bool reth, uint64_t va, uint32_t rkey,
                           uint32_t dmalen, int aeth_syn,
                           const uint8_t *pl, uint32_t plen)
{
    QPldmaRoce r = {
        .dst_mac = pe->mac, .src_mac = (const uint8_t *)PEER_MAC,
        .src_ip = 0x0a000002, .dst_ip = 0x0a000001, .op = op,
        .qpn = pe->qpn, .psn = psn, .reth = reth, .va = va, .rkey = rkey,
        .dmalen = dmalen, .aeth_syn = aeth_syn, .pl = pl, .plen = plen,
    };

    return qpldma_roce_frame(f, &r);
}

static uint32_t pcnt(Peer *pe, int i)
{
    return qpldma_ncnt(pe->d, i);
}

/* The AETH syndrome and PSN of the next answer node 1 sends us */
static int peer_ack(Peer *pe, uint32_t *psn)
{
    uint8_t f[8192];
    uint32_t len = qpldma_stream_recv(pe->fd, f, sizeof(f));

    if (!len) {
        return -1;
    }
    g_assert_cmpuint(len, >=, 14 + 20 + 8 + 12 + 4 + 4);
    g_assert_cmpuint(f[14 + 28], ==, 0x11);        /* Acknowledge */
    g_assert_cmphex(ldl_be_p(f + 14 + 28 + 4) & 0xffffff, ==, PEER_QPN);
    *psn = ldl_be_p(f + 14 + 28 + 8) & 0xffffff;
    return f[14 + 28 + 12];
}

/*
 * Node 1's QP 0 (send queue channel 0, no PD) to us, through RESET, both
 * directions' PSNs from 0
 */
static void peer_connect(Peer *pe)
{
    QPldmaQPEnd e = { .d = pe->d, .qp = 0, .sq = 0, .timers = pe->timers };

    qpldma_qp_reset(pe->d, 0);
    qpldma_wr(pe->d, PLDMA_QP_ERRORS_LO, 1);
    qpldma_qp_connect_to(&e, PEER_QPN, 0x0a000002, (const uint8_t *)PEER_MAC,
                         0, PLDMA_MTU_1024);
    pe->qpn = qpldma_qpn(pe->d, 0);
}

/*
 * Node 1 (no SMMU, @extra device properties) listens; the test connects
 * to it and speaks RoCEv2 itself, as the peer of its QP 0 (@timers)
 */
static void peer_open_node(Node *n, Peer *pe, const char *extra,
                           uint32_t timers)
{
    g_autofree char *dev = NULL;

    memset(n, 0, sizeof(*n));
    dev = g_strdup_printf("-M virt -m 512M -nodefaults "
                          "-device pldma,id=dma0,netdev=n0,node-id=1%s",
                          extra ? extra : "");
    peer_listen(pe, n, "pldma-peer-XXXXXX", dev);
    n->next = ALLOC_BASE + 0x200000;
    pe->timers = timers;
    qpldma_mac(pe->d, pe->mac);
    peer_connect(pe);
}

/* Wait for the completion record at @cpl, in real time (no clock steps) */
static uint32_t peer_wait_compl(Node *n, uint64_t cpl)
{
    uint32_t st = 0;
    int i;

    for (i = 0; i < 5000 && !st; i++) {
        st = qtest_readl(n->qts, cpl + PLDMA_COMPL_STATUS);
        g_usleep(200);
    }
    return st;
}

/*
 * Garbage, then requests that IBA classes as errors: each is answered
 * once with its NAK and ends the connection (node 1's QP goes to ERR and
 * drops what follows), made again for the next.  Nothing lands outside
 * the key's window.  Then node 1 as a requester against answers that are
 * late or come together.
 */
static void test_hostile_peer(void)
{
    static const struct {
        uint8_t op;
        uint64_t va_off;        /* from pa; UINT64_MAX: the top */
        uint32_t rkey_xor, dmalen, plen;
        uint8_t nak;
        const char *what;
    } bad[] = {
        { 0x0a, PAGE - 128, 0, 256, 256, 0x62, "beyond the key" },
        { 0x0a, UINT64_MAX, 0, 256, 256, 0x62, "wrapping" },
        { 0x0a, 0, 0x100, 256, 256, 0x62, "a wrong key" },
        { 0x0c, 0, 0, 0xffffffff, 0, 0x61, "a huge READ" },
        { 0x0a, 0, 0, 100, 256, 0x61, "payload beyond the DMA length" },
        { 0x07, 0, 0, 0, 1024, 0x61, "a Middle without a First" },
    };
    uint8_t f[16384], pl[4096];
    uint64_t pa = ALLOC_BASE, big = ALLOC_BASE + 0x100000;
    uint32_t rkey, psn, drops, len, i;
    Node n;
    Peer pe;

    peer_open_node(&n, &pe, NULL, 0);
    qtest_memset(n.qts, pa, 0, 2 * PAGE);
    rkey = key_register(&n, 1, node_pd(&n), pa, PAGE, PLDMA_KEY_ACC_WRITE |
                        PLDMA_KEY_ACC_READ);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 7 + 1;
    }

    /* garbage: truncated, oversized, not IPv4, bad ICRC */
    drops = pcnt(&pe, PLDMA_NCNT_RX_DROPPED);
    memset(f, 0xa5, sizeof(f));
    qpldma_stream_send(pe.fd, f, 13);
    qpldma_stream_send(pe.fd, f, 60);
    qpldma_stream_send(pe.fd, f, sizeof(f));
    len = peer_frame(&pe, f, 0x0a, 0, true, pa, rkey, 256, -1, pl, 256);
    f[len - 1] ^= 1;
    qpldma_stream_send(pe.fd, f, len);
    /* every header length shortened in turn */
    len = peer_frame(&pe, f, 0x0a, 0, true, pa, rkey, 256, -1, pl, 256);
    for (i = 14 + 20 + 8; i < len; i += 7) {
        qpldma_stream_send(pe.fd, f, i);
    }
    /* a length field larger than the frame */
    len = peer_frame(&pe, f, 0x0a, 0, true, pa, rkey, 256, -1, pl, 256);
    stw_be_p(f + 14 + 2, 9000);
    qpldma_stream_send(pe.fd, f, len);
    /* opcodes that are not RC's (UD SEND, CNP) */
    len = peer_frame(&pe, f, 0x64, 0, false, 0, 0, 0, -1, pl, 64);
    qpldma_stream_send(pe.fd, f, len);
    len = peer_frame(&pe, f, 0x81, 0, false, 0, 0, 0, -1, pl, 16);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_ack(&pe, &psn), ==, -1);
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED) - drops, >=, 20);

    /* a valid WRITE Only lands, and is ACKed */
    len = peer_frame(&pe, f, 0x0a, 0, true, pa + 16, rkey, 256, -1, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_ack(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 0);
    {
        uint8_t back[256];

        qtest_memread(n.qts, pa + 16, back, sizeof(back));
        g_assert_true(memcmp(back, pl, sizeof(back)) == 0);
    }

    /* each bad request: its NAK once, then nothing answers any more */
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        uint32_t e = i ? 0 : 1;
        uint64_t va = bad[i].va_off == UINT64_MAX ? UINT64_MAX - 64
                                                  : pa + bad[i].va_off;

        g_test_message("%s", bad[i].what);
        len = peer_frame(&pe, f, bad[i].op, e, bad[i].op != 0x07, va,
                         rkey ^ bad[i].rkey_xor, bad[i].dmalen, -1, pl,
                         bad[i].plen);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpint(peer_ack(&pe, &psn), ==, bad[i].nak);
        g_assert_cmpuint(psn, ==, e);
        g_assert_cmpuint(qpldma_qp_state(pe.d, 0), ==, PLDMA_QPS_ERR);
        /* the good WRITE at the same PSN: the QP takes nothing now */
        drops = pcnt(&pe, PLDMA_NCNT_QP_DROPPED);
        len = peer_frame(&pe, f, 0x0a, e, true, pa + 512, rkey, 256, -1, pl,
                         256);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpint(peer_ack(&pe, &psn), ==, -1);
        g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_QP_DROPPED), ==, drops + 1);
        peer_connect(&pe);
    }
    g_assert_true(qpldma_mem_zero(n.qts, pa + 512, 256));

    /* a segment far ahead is dropped without an answer */
    drops = pcnt(&pe, PLDMA_NCNT_RX_DROPPED);
    len = peer_frame(&pe, f, 0x08, 0x700000, false, 0, 0, 0, -1, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_ack(&pe, &psn), ==, -1);
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED), ==, drops + 1);

    /* a flood of ACKs and NAKs for a send queue that waits for nothing */
    drops = pcnt(&pe, PLDMA_NCNT_RX_DROPPED);
    for (i = 0; i < 2000; i++) {
        len = peer_frame(&pe, f, 0x11, i, false, 0, 0, 0,
                         (i & 1) ? 0x60 : 0x20 | (i & 0x1f), pl, 0);
        qpldma_stream_send(pe.fd, f, len);
    }
    len = peer_frame(&pe, f, 0x0c, 0, true, pa + 16, rkey, 256, -1, pl, 0);
    qpldma_stream_send(pe.fd, f, len);  /* and then a READ: still served */
    len = qpldma_stream_recv(pe.fd, f, sizeof(f));
    g_assert_cmpuint(len, >, 256);
    g_assert_cmpuint(f[14 + 28], ==, 0x10);        /* READ Response Only */
    g_assert_true(memcmp(f + 14 + 28 + 12 + 4, pl, 256) == 0);
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED) - drops, ==, 2000);

    /*
     * Node 1 as requester: a NAK that names the PSN before its message (a
     * late answer to the previous one) is ignored; the ACK completes it
     */
    {
        uint64_t src = ALLOC_BASE + 0x10000, cpl = ALLOC_BASE + 0x20000;
        uint8_t d[PLDMA_DESC_SIZE];
        uint32_t mpsn;
        QPldmaRing r;

        ring_init(&n, &r, 0);
        qpldma_desc_rdma(d, PLDMA_OP_RDMA_WRITE, 256, src, 0x1000, 0x105,
                         cpl);
        qtest_memwrite(n.qts, r.pa, d, sizeof(d));
        qpldma_ch_wr(&n.d, 0, PLDMA_CH_RING_TAIL, 1);
        len = qpldma_stream_recv(pe.fd, f, sizeof(f));
        g_assert_cmpuint(f[14 + 28], ==, 0x0a);        /* WRITE Only */
        g_assert_cmphex(ldl_be_p(f + 14 + 28 + 4) & 0xffffff, ==, PEER_QPN);
        mpsn = ldl_be_p(f + 14 + 28 + 8) & 0xffffff;
        g_assert_cmpuint(mpsn, ==, 0);
        len = peer_frame(&pe, f, 0x11, (mpsn - 1) & 0xffffff, false,
                         0, 0, 0, 0x62, pl, 0);
        qpldma_stream_send(pe.fd, f, len);
        len = peer_frame(&pe, f, 0x11, (mpsn - 1) & 0xffffff, false,
                         0, 0, 0, 0x2e, pl, 0);
        qpldma_stream_send(pe.fd, f, len);
        len = peer_frame(&pe, f, 0x11, mpsn, false, 0, 0, 0, 0x1f, pl, 0);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpuint(peer_wait_compl(&n, cpl), ==, PLDMA_ST_SUCCESS);

        /*
         * A sequence NAK rewinds a 16-segment WRITE to segment 2; an ACK
         * for segment 9, sent before the rewind, arrives in the same
         * read: the requester goes on from segment 10 at once.  It used
         * to send from 2 while the ACK point was 10, took the negative
         * distance for a full window and waited for the retransmit timer
         * (which does not run here).
         */
        cpl += 64;
        qpldma_desc_rdma(d, PLDMA_OP_RDMA_WRITE, 16 * 1024, src, 0x1000,
                         0x105, cpl);
        qtest_memwrite(n.qts, r.pa + PLDMA_DESC_SIZE, d, sizeof(d));
        qpldma_ch_wr(&n.d, 0, PLDMA_CH_RING_TAIL, 2);
        for (i = 0; i < 16; i++) {
            len = qpldma_stream_recv(pe.fd, f, sizeof(f));
            g_assert_cmpuint(len, >, 1024);
            if (i == 0) {
                g_assert_cmpuint(f[14 + 28], ==, 0x06);  /* WRITE First */
                mpsn = ldl_be_p(f + 14 + 28 + 8) & 0xffffff;
            }
        }
        {
            uint8_t two[2 * 128];
            uint32_t l1, l2;

            l1 = peer_frame(&pe, two + 4, 0x11, (mpsn + 2) & 0xffffff,
                            false, 0, 0, 0, 0x60, pl, 0);
            stl_be_p(two, l1);
            l2 = peer_frame(&pe, two + 8 + l1, 0x11, (mpsn + 9) & 0xffffff,
                            false, 0, 0, 0, 0x1f, pl, 0);
            stl_be_p(two + 4 + l1, l2);
            g_assert_cmpint(write(pe.fd, two, 8 + l1 + l2), ==,
                            8 + l1 + l2);
        }
        len = qpldma_stream_recv(pe.fd, f, sizeof(f));
        g_assert_cmpuint(len, >, 0);
        g_assert_cmpuint(ldl_be_p(f + 14 + 28 + 8) & 0xffffff, ==,
                         (mpsn + 10) & 0xffffff);
        for (i = 11; i < 16; i++) {
            g_assert_cmpuint(qpldma_stream_recv(pe.fd, f, sizeof(f)), >, 0);
        }
        len = peer_frame(&pe, f, 0x11, (mpsn + 15) & 0xffffff, false,
                         0, 0, 0, 0x1f, pl, 0);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpuint(peer_wait_compl(&n, cpl), ==, PLDMA_ST_SUCCESS);
        g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_TIMEOUTS), ==, 0);
    }

    /* nothing was written outside the window */
    g_assert_true(qpldma_mem_zero(n.qts, pa, 16));
    g_assert_true(qpldma_mem_zero(n.qts, pa + 16 + 256, PAGE - 16 - 256));
    g_assert_true(qpldma_mem_zero(n.qts, big, PAGE));
    peer_stop(&pe, &n);
}

/*
 * An empty frame and a runt from the peer are dropped and counted, and the
 * link goes on: the receive handler returned 0 for the empty frame, which
 * QEMU's net layer reads as "cannot receive now", and it delivered no
 * other frame after it, reset or not.
 */
static void test_empty_frame(void)
{
    uint8_t f[2048], pl[256];
    uint64_t pa = ALLOC_BASE;
    uint32_t rkey, psn, drops, len, i;
    Node n;
    Peer pe;

    peer_open_node(&n, &pe, NULL, 0);
    qtest_memset(n.qts, pa, 0, PAGE);
    rkey = key_register(&n, 1, node_pd(&n), pa, PAGE, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i ^ 0x5a;
    }
    drops = pcnt(&pe, PLDMA_NCNT_RX_DROPPED);
    memset(f, 0xa5, sizeof(f));
    qpldma_stream_send(pe.fd, f, 0);
    qpldma_stream_send(pe.fd, f, 1);
    len = peer_frame(&pe, f, 0x0a, 0, true, pa, rkey, 256, -1, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_ack(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 0);
    qpldma_mem_check(n.qts, pa, pl, sizeof(pl));
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED) - drops, ==, 2);

    /* an empty frame after a reset (and the QP made again): it delivers */
    qpldma_wr(&n.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    peer_connect(&pe);
    qtest_memset(n.qts, pa, 0, PAGE);
    rkey = key_register(&n, 1, node_pd(&n), pa, PAGE, PLDMA_KEY_ACC_WRITE);
    qpldma_stream_send(pe.fd, f, 0);
    len = peer_frame(&pe, f, 0x0a, 0, true, pa + 512, rkey, 256, -1, pl,
                     256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_ack(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 0);
    qpldma_mem_check(n.qts, pa + 512, pl, sizeof(pl));
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED), ==, 1);
    peer_stop(&pe, &n);
}

/*
 * A WRITE First or Only, or a READ request, at the expected PSN while the
 * WRITE before it still has segments to come is an opcode sequence error
 * (IBA 9.8.3.1: "out of sequence OpCode", class B): NAK Invalid Request,
 * once, and the QP goes to ERR; the new message writes (or reads)
 * nothing.  It was taken, and the first WRITE's segments that came after
 * it were refused.
 */
static void test_write_in_write(void)
{
    static const struct {
        uint8_t op;
        uint32_t dmalen, plen;
        const char *what;
    } msg[] = {
        { 0x0a, 256, 256, "WRITE Only" },
        { 0x06, 2 * 1024, 1024, "WRITE First" },
        { 0x0c, 256, 0, "READ request" },
    };
    uint8_t f[4096], pl[1024];
    uint64_t pa = ALLOC_BASE;
    uint32_t rkey, psn, len, i, c;
    Node n;
    Peer pe;

    peer_open_node(&n, &pe, NULL, 0);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 5 + 3;
    }
    for (c = 0; c < ARRAY_SIZE(msg); c++) {
        g_test_message("%s inside a WRITE", msg[c].what);
        qtest_memset(n.qts, pa, 0, 4 * PAGE);
        rkey = key_register(&n, 1, node_pd(&n), pa, 4 * PAGE,
                            PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
        /* a WRITE of three segments: its First */
        len = peer_frame(&pe, f, 0x06, 0, true, pa, rkey, 3 * 1024, -1, pl,
                         1024);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpint(peer_ack(&pe, &psn), ==, 0x1f);
        g_assert_cmpuint(psn, ==, 0);
        /* a new message at PSN 1, where the Middle belongs */
        len = peer_frame(&pe, f, msg[c].op, 1, true, pa + 2 * PAGE, rkey,
                         msg[c].dmalen, -1, pl, msg[c].plen);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpint(peer_ack(&pe, &psn), ==, 0x61);
        g_assert_cmpuint(psn, ==, 1);
        g_assert_cmpuint(qpldma_qp_state(pe.d, 0), ==, PLDMA_QPS_ERR);
        g_assert_true(qpldma_mem_zero(n.qts, pa + 2 * PAGE, 1024));
        qpldma_mem_check(n.qts, pa, pl, sizeof(pl));
        peer_connect(&pe);
    }

    /* the First of the next message, once the WRITE is whole: taken */
    len = peer_frame(&pe, f, 0x06, 0, true, pa, rkey, 2 * 1024, -1, pl,
                     1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_ack(&pe, &psn), ==, 0x1f);
    len = peer_frame(&pe, f, 0x08, 1, false, 0, 0, 0, -1, pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_ack(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 1);
    len = peer_frame(&pe, f, 0x0a, 2, true, pa + 2 * PAGE, rkey, 256, -1, pl,
                     256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_ack(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 2);
    qpldma_mem_check(n.qts, pa + 2 * PAGE, pl, 256);
    peer_stop(&pe, &n);
}

/*
 * REMOTE_TIMEOUT reports the bytes the responder acknowledged: the peer
 * ACKs 4 of 16 segments, then falls silent.  It reported the bytes sent.
 */
static void test_timeout_acked(void)
{
    uint8_t f[8192], d[PLDMA_DESC_SIZE], none[4] = { 0 };
    uint32_t mpsn, len, st = 0, i;
    uint64_t src, cpl;
    Node n;
    Peer pe;
    QPldmaRing r;

    peer_open_node(&n, &pe, NULL, PLDMA_QPT_MAKE(1, 7, 14, 0));  /* 1 retry */
    ring_init(&n, &r, 0);
    src = alloc_pa(&n, 16 * KiB);
    cpl = alloc_pa(&n, PLDMA_COMPL_SIZE);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_WRITE, 16 * KiB, src, 0x1000, 0x105,
                     cpl);
    qtest_memwrite(n.qts, r.pa, d, sizeof(d));
    qpldma_ch_wr(&n.d, 0, PLDMA_CH_RING_TAIL, 1);
    len = qpldma_stream_recv(pe.fd, f, sizeof(f));
    g_assert_cmpuint(len, >, 1024);
    g_assert_cmpuint(f[14 + 28], ==, 0x06);        /* WRITE First */
    mpsn = ldl_be_p(f + 14 + 28 + 8) & 0xffffff;
    len = peer_frame(&pe, f, 0x11, (mpsn + 3) & 0xffffff, false, 0, 0, 0,
                     0x1f, none, 0);
    qpldma_stream_send(pe.fd, f, len);
    for (i = 0; i < WAIT_STEPS && !st; i++) {
        st = qtest_readl(n.qts, cpl + PLDMA_COMPL_STATUS);
        if (!st) {
            g_usleep(100);
            qtest_clock_step(n.qts, STEP_NS);
        }
    }
    g_assert_cmpuint(st, ==, PLDMA_ST_REMOTE_TIMEOUT);
    g_assert_cmpuint(qtest_readq(n.qts, cpl + PLDMA_COMPL_BYTES), ==, 4 * KiB);
    peer_stop(&pe, &n);
}

void pldma_net_peer_register(void)
{
    qtest_add_func("/pldma-net/hostile-peer", test_hostile_peer);
    qtest_add_func("/pldma-net/empty-frame", test_empty_frame);
    qtest_add_func("/pldma-net/timeout-acked", test_timeout_acked);
    qtest_add_func("/pldma-net/write-in-write", test_write_in_write);
}
