/*
 * Two QPs of one PLDMA through the device's loopback: transfers, the
 * link's timing model, gather/scatter lists, UC, UD
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

static void loop_step(void *opaque)
{
    g_usleep(200);
}

static void loop_cqe(Node *n, QPldmaCQ *cq, uint8_t *cqe)
{
    int i;

    for (i = 0; i < WAIT_STEPS && !qpldma_cq_poll(&n->d, cq, cqe); i++) {
        loop_step(NULL);
    }
    g_assert_cmpint(i, <, WAIT_STEPS);
}

/*
 * QP 0 (SQ channel 0, CQs 0 and 1) and QP 1 (SQ channel 1, CQs 2 and 3)
 * of @n connected to each other over the port's own MAC and address, at
 * @path_mtu and random PSNs; the port's MAC and the QPNs out
 */
static void loop_connect(Node *n, Side *s0, Side *s1, uint8_t *mac,
                         uint32_t *qpn0, uint32_t *qpn1, uint8_t path_mtu)
{
    uint32_t psn0 = rand_psn(), psn1 = rand_psn();
    QPldmaQPAttr at;

    qpldma_mac(&n->d, mac);
    *qpn0 = qpldma_qpn(&n->d, 0);
    *qpn1 = qpldma_qpn(&n->d, 1);
    side_init_at(n, s0, 0, 0, CQ_SIZE, CQ_SIZE, 0);
    side_init_at(n, s1, 0, 2, CQ_SIZE, CQ_SIZE, 1);
    attr_to(&at, mac, IP_A, *qpn1, psn0, psn1, 0);
    at.path_mtu = path_mtu;
    qp_connect_cq(n, 0, &at, s0);
    attr_to(&at, mac, IP_A, *qpn0, psn1, psn0, 1);
    at.path_mtu = path_mtu;
    qp_connect_cq(n, 1, &at, s1);
}

/*
 * QP 0 (SQ channel 0) and QP 1 (SQ channel 1) of one device connected to
 * each other: DEST_MAC is the port's own MAC and DEST_IP its own address,
 * as Linux resolves a GID of the port itself.  WRITE, READ, SEND with
 * immediate into three SGEs, both ways: every byte lands, the CQEs name
 * the right QPs, every frame was looped back (LOOPED = TX_FRAMES) and
 * none reached the netdev, whose other end is the test.  Before loopback
 * the frames went out on the link and the first WRITE timed out.
 */
static void test_loopback(void)
{
    static const uint32_t lens[] = { 1, 4 * KiB, 64 * KiB + 123, MiB + 7 };
    uint32_t qpn0, qpn1, i, rkey;
    uint32_t l[3], off, j;
    uint64_t src, dst, win, compl, bytes, rq_addr[3], rpa[3];
    g_autofree char *net = NULL, *args = NULL;
    uint8_t mac[6], f[64], e[PLDMA_CQE_SIZE];
    QPldmaLink link;
    Side s0, s1;
    Node n;
    int fd;

    qpldma_link_init(&link, "pldma-qloop-XXXXXX");
    net = qpldma_link_netdev(&link, true);
    args = g_strdup_printf("-M virt -m 512M -nodefaults "
                           "-device pldma,id=dma0,netdev=n0,node-id=1,"
                           "mtu=4096 -netdev %s", net);
    node_start(&n, args);
    fd = qpldma_link_connect(&link);
    qpldma_link_wait(n.qts);
    loop_connect(&n, &s0, &s1, mac, &qpn0, &qpn1, PLDMA_MTU_4096);

    for (i = 0; i < ARRAY_SIZE(lens); i++) {
        uint32_t len = lens[i];
        g_autofree uint8_t *data = NULL, *back = NULL;

        /* QP 0 WRITEs into QP 1's window and READs it back */
        src = alloc_pa(&n, len);
        dst = alloc_pa(&n, len);
        win = alloc_pa(&n, len);
        data = qpldma_mem_random(n.qts, src, len);
        rkey = key_register(&n, i, 0, win, len,
                            PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
        compl = post_op(&n, &s0, PLDMA_OP_RDMA_WRITE, 0, len, src, win, rkey,
                        0, 0);
        g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                           WAIT_STEPS, &bytes), ==,
                         PLDMA_ST_SUCCESS);
        g_assert_cmpuint(bytes, ==, len);
        qpldma_mem_check(n.qts, win, data, len);
        compl = post_op(&n, &s0, PLDMA_OP_RDMA_READ, 0, len, dst, win, rkey,
                        0, 0);
        g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                           WAIT_STEPS, &bytes), ==,
                         PLDMA_ST_SUCCESS);
        qpldma_mem_check(n.qts, dst, data, len);

        /* QP 1 SENDs with immediate into three SGEs of QP 0's RQ */
        src = alloc_pa(&n, len);
        back = qpldma_mem_random(n.qts, src, len);
        l[0] = len / 3;
        l[1] = len / 3;
        l[2] = len - l[0] - l[1];
        for (j = 0; j < 3; j++) {
            rpa[j] = alloc_pa(&n, l[j] + 1);
            rq_addr[j] = rpa[j];
        }
        qpldma_rwqe(n.qts, s0.rq + (uint64_t)s0.rq_tail * PLDMA_RWQE_SIZE,
                    0x1000 + i, 3, rq_addr, l);
        s0.rq_tail = (s0.rq_tail + 1) % RQ_SIZE;
        qpldma_ch_wr(&n.d, 0, PLDMA_CH_RQ_TAIL, s0.rq_tail);
        compl = post_op(&n, &s1, PLDMA_OP_SEND_IMM, PLDMA_DF_SIGNALED, len,
                        src, 0, 0, IMM_WIRE, 0x2000 + i);
        g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                           WAIT_STEPS, &bytes), ==,
                         PLDMA_ST_SUCCESS);
        loop_cqe(&n, &s1.scq, e);
        check_cqe(e, 0x2000 + i, PLDMA_WC_SEND, PLDMA_WC_ST_SUCCESS, len,
                  qpn1, qpn0, 0, 0, 0);
        loop_cqe(&n, &s0.rcq, e);
        check_cqe(e, 0x1000 + i, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len,
                  qpn0, qpn1, PLDMA_CQE_F_IMM, IMM_WIRE, 0);
        for (off = 0, j = 0; j < 3; j++) {
            qpldma_mem_check(n.qts, rpa[j], back + off, l[j]);
            g_assert_true(qpldma_mem_zero(n.qts, rpa[j] + l[j], 1));
            off += l[j];
        }
    }

    /* every frame went round inside the device, none out, none lost */
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_LOOPED), >, 0);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_LOOPED), ==,
                     ncnt(&n, PLDMA_NCNT_TX_FRAMES));
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_RX_FRAMES), ==,
                     ncnt(&n, PLDMA_NCNT_TX_FRAMES));
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_QP_DROPPED), ==, 0);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_RETX_SEGS), ==, 0);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_TIMEOUTS), ==, 0);
    g_assert_cmpuint(qpldma_stream_recv(fd, f, sizeof(f)), ==, 0);

    /* a reset drops what waits and loses the QPs: nothing comes back */
    qtest_system_reset(n.qts);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_LOOPED), ==, 0);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_RESET);

    close(fd);
    qtest_quit(n.qts);
    qpldma_link_cleanup(&link);
}

/*
 * The link of the timing model (timing=on): QP 0 and QP 1 of one device,
 * looped back, no IOMMU.  A WRITE and a READ of 16 KiB at path MTU 1024
 * complete exactly at their modeled time, and not a nanosecond before.
 * DMA at 4096 MB/s (250 ns per 1024 bytes), a descriptor 1000 ns, the link
 * at 8000 Mbit/s (1 ns per byte on the wire: the frame, padded to 60,
 * plus 24 bytes of FCS, preamble and gap) and 500 ns one way.  Frames:
 * 58 bytes of headers (Ethernet, IPv4, UDP, BTH, ICRC), RETH 16, AETH 4.
 *  - WRITE: the fetch (1000), the first segment's DMA read (250), then
 *    the link is the bottleneck: the first frame (1098 + 24), 15 more
 *    (1082 + 24 each), 500; the last segment's ACK (62 + 24) and 500 back.
 *  - READ: the fetch (1000), the request (74 + 24), 500; the responses go
 *    the other way: first and last with AETH (1086 + 24), 14 middle
 *    (1082 + 24), 500.
 * Before the link was modeled, both completed at the fetch's 1000 ns.
 */
#define TM_LINK_WRITE_NS (1000 + 250 + 1122 + 15 * 1106 + 500 + 86 + 500)

#define TM_LINK_READ_NS  (1000 + 98 + 500 + 2 * 1110 + 14 * 1106 + 500)

/*
 * A long link (link-latency-ns 100000, 100 us one way), otherwise the
 * same: the window is sized to it (twice the bandwidth-delay product: 2 x
 * 100 us at 8000 Mbit/s are 1.6 Mbit, 179 frames of 1024 bytes of
 * payload and 74 + 24 bytes more: 358 segments), so a WRITE of 256 KiB
 * never waits for an ACK and a READ of 256 KiB is one request: both
 * complete at the formulas above, with 256 segments and 100 us.  With a
 * window of 64, the WRITE would wait a round trip after 64 segments.
 */
#define TM_LONG_NS       100000
#define TM_LONG_WRITE_NS (1000 + 250 + 1122 + 255 * 1106 + TM_LONG_NS + 86 + \
                          TM_LONG_NS)
#define TM_LONG_READ_NS  (1000 + 98 + TM_LONG_NS + 2 * 1110 + 254 * 1106 + \
                          TM_LONG_NS)

static void timing_link_check(Node *n, Side *sd, uint8_t op, uint32_t len,
                              uint64_t buf, uint64_t win, uint32_t rkey,
                              int64_t expect_ns)
{
    uint64_t compl, bytes;
    int64_t t0, now;

    t0 = qtest_clock_step(n->qts, 1);    /* "now": a step of 0 fails */
    compl = post_op(n, sd, op, PLDMA_DF_SIGNALED, len, buf, win, rkey, 0, 0);
    now = qtest_clock_step(n->qts, expect_ns - 1);
    g_assert_cmpint(now - t0, ==, expect_ns - 1);
    g_assert_cmpuint(qtest_readl(n->qts, compl + PLDMA_COMPL_STATUS), ==, 0);
    now = qtest_clock_step(n->qts, 1);
    g_assert_cmpint(now - t0, ==, expect_ns);
    g_assert_cmpuint(qtest_readl(n->qts, compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(qpldma_wait_compl(&n->d, compl, loop_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
}

typedef struct TimingLinkCase {
    uint32_t len, link_ns;
    int64_t write_ns, read_ns;
} TimingLinkCase;

static const TimingLinkCase timing_link_short = {
    16 * KiB, 500, TM_LINK_WRITE_NS, TM_LINK_READ_NS,
};
static const TimingLinkCase timing_link_long = {
    256 * KiB, TM_LONG_NS, TM_LONG_WRITE_NS, TM_LONG_READ_NS,
};

static void test_timing_link(const void *opaque)
{
    const TimingLinkCase *c = opaque;
    const uint32_t len = c->len;
    uint32_t qpn0, qpn1, rkey;
    uint64_t src, dst, win;
    g_autofree uint8_t *data = NULL;
    uint8_t mac[6], e[PLDMA_CQE_SIZE];
    g_autofree char *args = g_strdup_printf(
        "-M virt -m 512M -nodefaults "
        "-device pldma,id=dma0,netdev=n0,node-id=1,timing=on,"
        "dma-bandwidth=4096,desc-latency-ns=1000,"
        "link-bandwidth=8000,link-latency-ns=%u "
        "-netdev hubport,id=n0,hubid=0", c->link_ns);
    Side s0, s1;
    Node n;

    node_start(&n, args);
    loop_connect(&n, &s0, &s1, mac, &qpn0, &qpn1, PLDMA_MTU_1024);
    src = alloc_pa(&n, len);
    dst = alloc_pa(&n, len);
    win = alloc_pa(&n, len);
    data = qpldma_mem_random(n.qts, src, len);
    rkey = key_register(&n, 0, 0, win, len,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);

    timing_link_check(&n, &s0, PLDMA_OP_RDMA_WRITE, len, src, win, rkey,
                      c->write_ns);
    qpldma_mem_check(n.qts, win, data, len);
    loop_cqe(&n, &s0.scq, e);
    check_cqe(e, 0, PLDMA_WC_RDMA_WRITE, PLDMA_WC_ST_SUCCESS, len,
              qpn0, qpn1, 0, 0, 0);

    timing_link_check(&n, &s0, PLDMA_OP_RDMA_READ, len, dst, win, rkey,
                      c->read_ns);
    qpldma_mem_check(n.qts, dst, data, len);

    /* every frame went round once: nothing dropped, nothing resent */
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_LOOPED), ==,
                     ncnt(&n, PLDMA_NCNT_TX_FRAMES));
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_RX_FRAMES), ==,
                     ncnt(&n, PLDMA_NCNT_TX_FRAMES));
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_RETX_SEGS), ==, 0);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_TIMEOUTS), ==, 0);
    qtest_quit(n.qts);
}

/* @n SGEs of @l bytes each, at fresh PAs (*@pa), listed at a new list */
static uint64_t sgl_make(Node *n, uint32_t nsge, const uint32_t *l,
                         uint64_t *pa)
{
    uint64_t list = alloc_pa(n, nsge * PLDMA_SGE_SIZE);
    uint8_t e[PLDMA_SGE_SIZE];
    uint32_t i;

    for (i = 0; i < nsge; i++) {
        pa[i] = alloc_pa(n, l[i] + 1);
        memset(e, 0, sizeof(e));
        stq_le_p(e + PLDMA_SGE_ADDR, pa[i]);
        stl_le_p(e + PLDMA_SGE_LEN, l[i]);
        qtest_memwrite(n->qts, list + i * PLDMA_SGE_SIZE, e, sizeof(e));
    }
    return list;
}

/* post_op() with a list of @nsge SGEs at @list as the local buffer */
static uint64_t post_sgl(Node *n, Side *sd, uint8_t op, uint8_t flags,
                         uint32_t len, uint64_t list, uint8_t nsge,
                         uint64_t rva, uint32_t rkey, uint64_t cookie)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t compl = alloc_pa(n, PLDMA_COMPL_SIZE);

    qpldma_desc_rdma(d, op, len, list, rva, rkey, compl);
    d[PLDMA_DESC_FLAGS] = flags;
    d[PLDMA_DESC_NUM_SGE] = nsge;
    stq_le_p(d + PLDMA_DESC_COOKIE, cookie);
    qpldma_ring_post(&n->d, &sd->r, d);
    return compl;
}

/*
 * Two QPs of one device (loopback), MTU 1024, so that segments straddle
 * the entries: a WRITE gathered from three SGEs, a READ scattered into
 * three, a SEND gathered from two into a RECV of three SGEs, every byte
 * checked, nothing past an entry touched.  Then what a hostile driver
 * posts, each on a QP of its own (an error ends the QP): NUM_SGE 5, a
 * misaligned list, a list shorter than LEN (nothing sent), NUM_SGE on a
 * COPY: each a completion with its status, none a hang.
 */
static void test_sgl(void)
{
    static const uint32_t wl[3] = { 1000, 3000, 2777 };
    static const uint32_t rl[3] = { 4000, 1, 2776 };
    static const uint32_t sl[2] = { 1500, 700 };
    uint32_t total = wl[0] + wl[1] + wl[2];
    uint32_t qpn0, qpn1, rkey, i, off, rlen[3];
    uint64_t win, list, compl, bytes, wpa[3], rpa[3], spa[2], rq_addr[3];
    g_autofree uint8_t *want = g_malloc(total);
    g_autofree char *net = NULL, *args = NULL;
    uint8_t mac[6], e[PLDMA_CQE_SIZE], d[PLDMA_DESC_SIZE];
    QPldmaLink link;
    QPldmaQPAttr at;
    Side s0, s1, sb;
    QPldmaRing r5;
    Node n;
    int fd;

    qpldma_link_init(&link, "pldma-qsgl-XXXXXX");
    net = qpldma_link_netdev(&link, true);
    args = g_strdup_printf("-M virt -m 512M -nodefaults "
                           "-device pldma,id=dma0,netdev=n0,node-id=1,"
                           "num-channels=8 -netdev %s", net);
    node_start(&n, args);
    fd = qpldma_link_connect(&link);
    qpldma_link_wait(n.qts);
    loop_connect(&n, &s0, &s1, mac, &qpn0, &qpn1, PLDMA_MTU_1024);

    /* WRITE gathered from three SGEs into QP 1's window */
    list = sgl_make(&n, 3, wl, wpa);
    for (off = 0, i = 0; i < 3; i++) {
        g_autofree uint8_t *part = qpldma_mem_random(n.qts, wpa[i], wl[i]);

        memcpy(want + off, part, wl[i]);
        off += wl[i];
    }
    win = alloc_pa(&n, total + 1);
    rkey = key_register(&n, 0, 0, win, total,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    compl = post_sgl(&n, &s0, PLDMA_OP_RDMA_WRITE, 0, total, list, 3, win,
                     rkey, 0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, total);
    qpldma_mem_check(n.qts, win, want, total);
    g_assert_true(qpldma_mem_zero(n.qts, win + total, 1));

    /* READ it back, scattered into three SGEs */
    list = sgl_make(&n, 3, rl, rpa);
    compl = post_sgl(&n, &s0, PLDMA_OP_RDMA_READ, 0, total, list, 3, win,
                     rkey, 0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    for (off = 0, i = 0; i < 3; i++) {
        qpldma_mem_check(n.qts, rpa[i], want + off, rl[i]);
        g_assert_true(qpldma_mem_zero(n.qts, rpa[i] + rl[i], 1));
        off += rl[i];
    }

    /* SEND gathered from two SGEs into a RECV of three */
    list = sgl_make(&n, 2, sl, spa);
    memset(want, 0, total);
    for (off = 0, i = 0; i < 2; i++) {
        g_autofree uint8_t *part = qpldma_mem_random(n.qts, spa[i], sl[i]);

        memcpy(want + off, part, sl[i]);
        off += sl[i];
    }
    rlen[0] = 100;
    rlen[1] = 1900;
    rlen[2] = 400;
    for (i = 0; i < 3; i++) {
        rq_addr[i] = alloc_pa(&n, rlen[i] + 1);
    }
    qpldma_rwqe(n.qts, s1.rq + (uint64_t)s1.rq_tail * PLDMA_RWQE_SIZE,
                0x77, 3, rq_addr, rlen);
    s1.rq_tail = (s1.rq_tail + 1) % RQ_SIZE;
    qpldma_ch_wr(&n.d, 1, PLDMA_CH_RQ_TAIL, s1.rq_tail);
    compl = post_sgl(&n, &s0, PLDMA_OP_SEND, PLDMA_DF_SIGNALED,
                     sl[0] + sl[1], list, 2, 0, 0, 0x88);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    loop_cqe(&n, &s0.scq, e);
    check_cqe(e, 0x88, PLDMA_WC_SEND, PLDMA_WC_ST_SUCCESS, sl[0] + sl[1],
              qpn0, qpn1, 0, 0, 0);
    loop_cqe(&n, &s1.rcq, e);
    check_cqe(e, 0x77, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, sl[0] + sl[1],
              qpn1, qpn0, 0, 0, 0);
    qpldma_mem_check(n.qts, rq_addr[0], want, 100);
    qpldma_mem_check(n.qts, rq_addr[1], want + 100, 1900);
    qpldma_mem_check(n.qts, rq_addr[2], want + 2000, 200);
    g_assert_true(qpldma_mem_zero(n.qts, rq_addr[2] + 200, 201));

    /* hostile lists: QPs 2, 3 and 4 (channels 2-4), to QP 1, send nothing */
    for (i = 2; i <= 4; i++) {
        uint32_t want_st = i == 4 ? PLDMA_ST_BAD_LENGTH : PLDMA_ST_BAD_DESC;
        uint32_t one = 50;

        side_init_at(&n, &sb, 0, 2 * i, CQ_SIZE, CQ_SIZE, i);
        attr_to(&at, mac, IP_A, qpn1, rand_psn(), rand_psn(), i);
        qp_connect_cq(&n, i, &at, &sb);
        list = sgl_make(&n, 1, &one, spa);
        compl = post_sgl(&n, &sb, PLDMA_OP_RDMA_WRITE, PLDMA_DF_SIGNALED,
                         i == 4 ? 100 : 50, list + (i == 3 ? 8 : 0),
                         i == 2 ? PLDMA_DESC_MAX_SGE + 1 : 1, win, rkey,
                         0x90 + i);
        g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                           WAIT_STEPS, &bytes), ==, want_st);
        loop_cqe(&n, &sb.scq, e);
        g_assert_cmpuint(e[PLDMA_CQE_STATUS], ==, PLDMA_WC_ST_LOC_QP_OP_ERR);
        g_assert_cmpuint(ldq_le_p(e + PLDMA_CQE_WR_ID), ==, 0x90 + i);
    }
    /* NUM_SGE on a local COPY (channel 5, no QP) */
    qpldma_ring_init(&n.d, &r5, 5, alloc_pa(&n, 16 * PLDMA_DESC_SIZE), 16,
                     0);
    compl = alloc_pa(&n, PLDMA_COMPL_SIZE);
    qpldma_desc_copy(d, 64, wpa[0], rpa[0], compl, 0);
    d[PLDMA_DESC_NUM_SGE] = 2;
    qpldma_ring_post(&n.d, &r5, d);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_BAD_DESC);
    /* nothing of a refused descriptor went out */
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_RETX_SEGS), ==, 0);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_TIMEOUTS), ==, 0);

    close(fd);
    qtest_quit(n.qts);
    qpldma_link_cleanup(&link);
}

/* A receive WQE on the RQ of @sd, whose QP's send queue is channel @ch */
static void uc_post_recv(Node *n, Side *sd, int ch, uint64_t wr_id,
                         uint32_t nsge, const uint64_t *addr,
                         const uint32_t *len)
{
    qpldma_rwqe(n->qts, sd->rq + (uint64_t)sd->rq_tail * PLDMA_RWQE_SIZE,
                wr_id, nsge, addr, len);
    sd->rq_tail = (sd->rq_tail + 1) % RQ_SIZE;
    qpldma_ch_wr(&n->d, ch, PLDMA_CH_RQ_TAIL, sd->rq_tail);
}

/*
 * Two UC QPs of one device through the loopback: a SEND of several
 * packets, an RDMA WRITE and a WRITE with immediate land byte for byte,
 * each send completes SUCCESS with no ACK (none is sent at all: every
 * frame on the loop is a request); a READ on a UC QP is refused
 * (BAD_OPCODE) and the QP goes on; the QP's type reads back.
 */
static void test_uc_loopback(void)
{
    const uint32_t len = 10000;
    g_autofree uint8_t *data = NULL, *wdata = NULL;
    uint32_t qpn0, qpn1, psn0 = rand_psn(), psn1 = rand_psn(), rkey, acks;
    uint64_t src, dst, win, compl, bytes;
    uint8_t mac[6], e[PLDMA_CQE_SIZE];
    QPldmaLink link;
    QPldmaQPAttr at;
    Side s0, s1;
    Node n;
    int fd;

    fd = loop_node_start(&n, &link, "pldma-quc-XXXXXX");
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_CAP) & PLDMA_CAP_UC, ==,
                    PLDMA_CAP_UC);
    qpldma_mac(&n.d, mac);
    qpn0 = qpldma_qpn(&n.d, 0);
    qpn1 = qpldma_qpn(&n.d, 1);
    side_init_at(&n, &s0, 0, 0, CQ_SIZE, CQ_SIZE, 0);
    side_init_at(&n, &s1, 0, 2, CQ_SIZE, CQ_SIZE, 1);
    attr_to(&at, mac, IP_A, qpn1, psn0, psn1, 0);
    at.type = 7;
    at.state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_TYPE, &at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    qp_connect_uc(&n, 0, &at, &s0);
    attr_to(&at, mac, IP_A, qpn0, psn1, psn0, 1);
    qp_connect_uc(&n, 1, &at, &s1);
    qpldma_qp_query(&n.d, 1, &at);
    g_assert_cmpuint(at.type, ==, PLDMA_QP_TYPE_UC);
    acks = ncnt(&n, PLDMA_NCNT_ACK_TX);

    /* a SEND of 10 packets at the 1024-byte path MTU */
    src = alloc_pa(&n, len);
    dst = alloc_pa(&n, len);
    data = qpldma_mem_random(n.qts, src, len);
    uc_post_recv(&n, &s1, 1, 0x31, 1, &dst, &len);
    compl = post_op(&n, &s0, PLDMA_OP_SEND, PLDMA_DF_SIGNALED, len, src, 0,
                    0, 0, 0x32);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    loop_cqe(&n, &s0.scq, e);
    check_cqe(e, 0x32, PLDMA_WC_SEND, PLDMA_WC_ST_SUCCESS, len, qpn0, qpn1,
              0, 0, 0);
    loop_cqe(&n, &s1.rcq, e);
    check_cqe(e, 0x31, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, len, qpn1, qpn0,
              0, 0, 0);
    qpldma_mem_check(n.qts, dst, data, len);

    /* a WRITE, then a WRITE with immediate, into QP 1's window */
    win = alloc_pa(&n, len);
    rkey = key_register(&n, 0, 0, win, len, PLDMA_KEY_ACC_WRITE);
    src = alloc_pa(&n, len);
    wdata = qpldma_mem_random(n.qts, src, len);
    compl = post_op(&n, &s0, PLDMA_OP_RDMA_WRITE, 0, len, src, win, rkey, 0,
                    0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_SUCCESS);
    uc_post_recv(&n, &s1, 1, 0x33, 0, NULL, NULL);
    compl = post_op(&n, &s0, PLDMA_OP_RDMA_WRITE_IMM, 0, 100, src + 1,
                    win + 1, rkey, IMM_WIRE, 0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_SUCCESS);
    loop_cqe(&n, &s1.rcq, e);
    check_cqe(e, 0x33, PLDMA_WC_RECV_RDMA_WITH_IMM, PLDMA_WC_ST_SUCCESS, 100,
              qpn1, qpn0, PLDMA_CQE_F_IMM, IMM_WIRE, 0);
    qpldma_mem_check(n.qts, win, wdata, len);

    /* no READ on UC; the QP goes on */
    compl = post_op(&n, &s0, PLDMA_OP_RDMA_READ, 0, 64, dst, win, rkey, 0,
                    0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_BAD_OPCODE);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_RTS);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_ACK_TX), ==, acks);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_UC_DROPPED), ==, 0);
    close(fd);
    qtest_quit(n.qts);
    qpldma_link_cleanup(&link);
}

/* Send datagram @len bytes at @src to @av from @sd; SUCCESS on the wire */
static void ud_send(Node *n, Side *sd, uint8_t op, uint32_t len,
                    uint64_t src, const UdAv *av, uint32_t imm,
                    uint64_t cookie, uint32_t want)
{
    uint64_t compl = post_ud(n, sd, op, len, src, av, imm, cookie);

    g_assert_cmpuint(qpldma_wait_compl(&n->d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==, want);
}

/*
 * The receive WQE at @dst got a datagram of @len bytes from @pl to the
 * port's own address: 20 zero bytes and the IPv4 header (what
 * ibv_init_ah_from_wc() reads), then the payload
 */
static void ud_check_grh(Node *n, uint64_t dst, const uint8_t *pl,
                         uint32_t len)
{
    uint8_t grh[PLDMA_UD_GRH_LEN];

    qtest_memread(n->qts, dst, grh, sizeof(grh));
    g_assert_true(qpldma_mem_zero(n->qts, dst, 20));
    g_assert_cmphex(grh[20], ==, 0x45);
    g_assert_cmpuint(grh[29], ==, 17);                 /* UDP */
    g_assert_cmphex(ldl_be_p(grh + 32), ==, IP_A);     /* source */
    g_assert_cmphex(ldl_be_p(grh + 36), ==, IP_A);
    qpldma_mem_check(n->qts, dst + PLDMA_UD_GRH_LEN, pl, len);
}

/*
 * Two UD QPs of one device through the loopback (docs/specs/pldma.rst,
 * "Unreliable datagram QPs"): datagrams with and without immediate land
 * after their GRH, the CQE names the sender's QPN and has GRH; the
 * privileged Q_Key bit sends the QP's own.  Dropped and counted, the WQE
 * left for the next datagram: another Q_Key, a datagram longer than the
 * WQE, one for a QP with no WQE.  Refused at the sender: more than the
 * MTU, an RDMA WRITE, a multicast MAC.  Nothing is ever acknowledged.
 */
static void test_ud_loopback(void)
{
    const uint32_t len = 500, qkey = 0x11110000;
    g_autofree uint8_t *data = NULL;
    uint32_t qpn0, qpn1, acks, sz = len + PLDMA_UD_GRH_LEN, small = 100;
    uint64_t src, dst, dst2;
    uint8_t e[PLDMA_CQE_SIZE];
    QPldmaLink link;
    QPldmaQPAttr at;
    Side s0, s1;
    UdAv av;
    Node n;
    int fd;

    fd = loop_node_start(&n, &link, "pldma-qud-XXXXXX");
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_CAP) & PLDMA_CAP_UD, ==,
                    PLDMA_CAP_UD);
    qpn0 = qpldma_qpn(&n.d, 0);
    qpn1 = qpldma_qpn(&n.d, 1);
    side_init_at(&n, &s0, 0, 0, CQ_SIZE, CQ_SIZE, 0);
    side_init_at(&n, &s1, 0, 2, CQ_SIZE, CQ_SIZE, 1);
    qp_connect_ud(&n, 0, 0, qkey, &s0);
    qp_connect_ud(&n, 1, 1, qkey, &s1);
    qpldma_qp_query(&n.d, 1, &at);
    g_assert_cmpuint(at.type, ==, PLDMA_QP_TYPE_UD);
    g_assert_cmphex(at.qkey, ==, qkey);
    acks = ncnt(&n, PLDMA_NCNT_ACK_TX);
    qpldma_mac(&n.d, av.dmac);
    av.dip = IP_A;
    av.dqpn = qpn1;
    av.qkey = qkey;

    /* a datagram, then one with immediate and the QP's own Q_Key */
    src = alloc_pa(&n, len);
    dst = alloc_pa(&n, sz);
    data = qpldma_mem_random(n.qts, src, len);
    uc_post_recv(&n, &s1, 1, 0x41, 1, &dst, &sz);
    ud_send(&n, &s0, PLDMA_OP_SEND, len, src, &av, 0, 0x42,
            PLDMA_ST_SUCCESS);
    loop_cqe(&n, &s0.scq, e);
    check_cqe(e, 0x42, PLDMA_WC_SEND, PLDMA_WC_ST_SUCCESS, len, qpn0, 0,
              0, 0, 0);
    loop_cqe(&n, &s1.rcq, e);
    check_cqe(e, 0x41, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, sz, qpn1, qpn0,
              PLDMA_CQE_F_GRH, 0, 0);
    ud_check_grh(&n, dst, data, len);
    qtest_memset(n.qts, dst, 0xee, sz);
    uc_post_recv(&n, &s1, 1, 0x43, 1, &dst, &sz);
    av.qkey = PLDMA_UD_QKEY_PRIVILEGED;
    ud_send(&n, &s0, PLDMA_OP_SEND_IMM, 7, src, &av, IMM_WIRE, 0x44,
            PLDMA_ST_SUCCESS);
    loop_cqe(&n, &s1.rcq, e);
    check_cqe(e, 0x43, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS,
              7 + PLDMA_UD_GRH_LEN, qpn1, qpn0,
              PLDMA_CQE_F_GRH | PLDMA_CQE_F_IMM, IMM_WIRE, 0);
    ud_check_grh(&n, dst, data, 7);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_UD_DROPPED), ==, 0);

    /* another Q_Key: dropped; the WQE takes the next datagram */
    uc_post_recv(&n, &s1, 1, 0x45, 1, &dst, &sz);
    av.qkey = qkey + 1;
    ud_send(&n, &s0, PLDMA_OP_SEND, len, src, &av, 0, 0, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_UD_DROPPED), ==, 1);
    g_assert_false(qpldma_cq_poll(&n.d, &s1.rcq, e));
    /* longer than the WQE: dropped too */
    dst2 = alloc_pa(&n, small);
    qtest_memset(n.qts, dst, 0, sz);
    av.qkey = qkey;
    ud_send(&n, &s0, PLDMA_OP_SEND, len, src, &av, 0, 0, PLDMA_ST_SUCCESS);
    loop_cqe(&n, &s1.rcq, e);
    check_cqe(e, 0x45, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, sz, qpn1, qpn0,
              PLDMA_CQE_F_GRH, 0, 0);
    uc_post_recv(&n, &s1, 1, 0x46, 1, &dst2, &small);
    ud_send(&n, &s0, PLDMA_OP_SEND, small, src, &av, 0, 0,
            PLDMA_ST_SUCCESS);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_UD_DROPPED), ==, 2);
    g_assert_true(qpldma_mem_zero(n.qts, dst2, small));
    ud_send(&n, &s0, PLDMA_OP_SEND, small - PLDMA_UD_GRH_LEN, src, &av, 0,
            0, PLDMA_ST_SUCCESS);
    loop_cqe(&n, &s1.rcq, e);
    check_cqe(e, 0x46, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, small, qpn1,
              qpn0, PLDMA_CQE_F_GRH, 0, 0);
    ud_check_grh(&n, dst2, data, small - PLDMA_UD_GRH_LEN);
    /* no WQE posted: dropped */
    ud_send(&n, &s0, PLDMA_OP_SEND, 8, src, &av, 0, 0, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_UD_DROPPED), ==, 3);

    /* refused at the sender, nothing sent; the QP goes on */
    ud_send(&n, &s0, PLDMA_OP_SEND, 1024 + 1, src, &av, 0, 0,  /* mtu */
            PLDMA_ST_BAD_LENGTH);
    ud_send(&n, &s0, PLDMA_OP_RDMA_WRITE, 8, src, &av, 0, 0,
            PLDMA_ST_BAD_OPCODE);
    av.dmac[0] |= 1;
    ud_send(&n, &s0, PLDMA_OP_SEND, 8, src, &av, 0, 0, PLDMA_ST_BAD_DESC);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_RTS);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 1), ==, PLDMA_QPS_RTS);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_ACK_TX), ==, acks);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_UD_DROPPED), ==, 3);
    close(fd);
    qtest_quit(n.qts);
    qpldma_link_cleanup(&link);
}

/*
 * ATOMIC_WRITE between two QPs of one device: the descriptor's 8 bytes
 * land at the peer's address as they were given, the send CQE says
 * ATOMIC_WRITE; with a LEN other than 8 it is BAD_LENGTH, with a SWAP
 * operand BAD_DESC, and nothing is sent.  FLUSH of a range and of a
 * key's window complete WC_FLUSH; unknown FETH bits are BAD_DESC.
 */
static void test_atomic_write_loopback(void)
{
    const uint64_t v = 0xfeedfacecafe1234ULL;
    uint32_t qpn0, qpn1, rkey, tx;
    uint64_t win, compl;
    uint8_t mac[6], e[PLDMA_CQE_SIZE], d[PLDMA_DESC_SIZE];
    QPldmaLink link;
    Side s0, s1;
    Node n;
    int fd;

    fd = loop_node_start(&n, &link, "pldma-qaw-XXXXXX");
    loop_connect(&n, &s0, &s1, mac, &qpn0, &qpn1, PLDMA_MTU_1024);
    win = alloc_pa(&n, PAGE);
    rkey = key_register(&n, 0, 0, win, PAGE, PLDMA_KEY_ACC_WRITE);
    compl = post_op(&n, &s0, PLDMA_OP_ATOMIC_WRITE, PLDMA_DF_SIGNALED, 8, v,
                    win + 16, rkey, 0, 0x61);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_SUCCESS);
    loop_cqe(&n, &s0.scq, e);
    check_cqe(e, 0x61, PLDMA_WC_ATOMIC_WRITE, PLDMA_WC_ST_SUCCESS, 8, qpn0,
              qpn1, 0, 0, 0);
    g_assert_cmphex(qtest_readq(n.qts, win + 16), ==, v);
    g_assert_true(qpldma_mem_zero(n.qts, win, 16));
    g_assert_true(qpldma_mem_zero(n.qts, win + 24, 8));

    tx = ncnt(&n, PLDMA_NCNT_TX_FRAMES);
    compl = post_op(&n, &s0, PLDMA_OP_ATOMIC_WRITE, 0, 4, v, win, rkey, 0,
                    0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_BAD_LENGTH);
    compl = alloc_pa(&n, PLDMA_COMPL_SIZE);
    qpldma_desc_rdma(d, PLDMA_OP_ATOMIC_WRITE, 8, v, win, rkey, compl);
    stq_le_p(d + PLDMA_DESC_ATOMIC_SWAP, 1);
    qpldma_ring_post(&n.d, &s0.r, d);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_BAD_DESC);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_TX_FRAMES), ==, tx);
    g_assert_true(qpldma_mem_zero(n.qts, win, 16));
    /* (each error writes a CQE, signaled or not) */
    loop_cqe(&n, &s0.scq, e);
    g_assert_cmpuint(e[PLDMA_CQE_STATUS], !=, PLDMA_WC_ST_SUCCESS);
    loop_cqe(&n, &s0.scq, e);
    g_assert_cmpuint(e[PLDMA_CQE_STATUS], !=, PLDMA_WC_ST_SUCCESS);

    /* FLUSH of a range, of the window: a key with the right; bad bits */
    rkey = key_register(&n, 1, 0, win, PAGE,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_FLUSH);
    compl = post_op(&n, &s0, PLDMA_OP_FLUSH, PLDMA_DF_SIGNALED, 64, 0,
                    win + 64, rkey, PLDMA_FLUSH_GLOBAL, 0x62);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_SUCCESS);
    loop_cqe(&n, &s0.scq, e);
    check_cqe(e, 0x62, PLDMA_WC_FLUSH, PLDMA_WC_ST_SUCCESS, 64, qpn0, qpn1,
              0, 0, 0);
    /* (of the window: any length, more than max-transfer too) */
    compl = post_op(&n, &s0, PLDMA_OP_FLUSH, 0, 12345678, 0, 0, rkey,
                    PLDMA_FLUSH_GLOBAL | PLDMA_FLUSH_MR, 0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_SUCCESS);
    tx = ncnt(&n, PLDMA_NCNT_TX_FRAMES);
    compl = post_op(&n, &s0, PLDMA_OP_FLUSH, 0, 64, 0, win, rkey, 0x40, 0);
    g_assert_cmpuint(qpldma_wait_compl(&n.d, compl, loop_step, NULL,
                                       WAIT_STEPS, NULL), ==,
                     PLDMA_ST_BAD_DESC);
    g_assert_cmpuint(ncnt(&n, PLDMA_NCNT_TX_FRAMES), ==, tx);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_RTS);
    close(fd);
    qtest_quit(n.qts);
    qpldma_link_cleanup(&link);
}

void pldma_qp_loopback_register(void)
{
    qtest_add_func("/pldma-qp/loopback", test_loopback);
    qtest_add_data_func("/pldma-qp/timing-link", &timing_link_short,
                        test_timing_link);
    qtest_add_data_func("/pldma-qp/timing-link-long", &timing_link_long,
                        test_timing_link);
    qtest_add_func("/pldma-qp/sgl", test_sgl);
    qtest_add_func("/pldma-qp/uc-loopback", test_uc_loopback);
    qtest_add_func("/pldma-qp/ud-loopback", test_ud_loopback);
    qtest_add_func("/pldma-qp/atomic-write-loopback",
                   test_atomic_write_loopback);
}
