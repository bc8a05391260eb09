/*
 * PLDMA remote DMA between two QEMUs: WRITE and READ back, refused
 * keys, a lossy link, resets and a peer that dies or stops
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

/* WRITE A -> B, then READ it back B -> A elsewhere; bytes compared */
static void write_read(Pair *p, QPldmaRing *r, uint32_t len, uint32_t rkey_idx)
{
    uint64_t a_src, a_dst, b_pa, b_va, compl, bytes;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey;

    a_src = alloc_pa(&p->a, len);
    a_dst = alloc_pa(&p->a, len);
    b_va = buffer(&p->b, len, &b_pa, -1);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    rkey = key_register(&p->b, rkey_idx, node_pd(&p->b), b_va, len,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);

    compl = post(&p->a, r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, b_pa, data, len);

    compl = post(&p->a, r, PLDMA_OP_RDMA_READ, len, a_dst, b_va, rkey);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->a.qts, a_dst, data, len);
}

static void test_write_read_sizes(void)
{
    static const uint32_t sizes[] = {
        4 * KiB, 64 * KiB + 123, 1 * MiB, 16 * MiB
    };
    Pair *p = pair_start_net(false, "stall", NULL, NULL, false);
    QPldmaRing r;
    size_t i;

    ring_init(&p->a, &r, 0);
    for (i = 0; i < ARRAY_SIZE(sizes); i++) {
        write_read(p, &r, sizes[i], i);
    }
    /* nothing lost on a clean link: no resends, no NAKs */
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_RETX_SEGS), ==, 0);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_NAK_TX_SEQ), ==, 0);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_RX_DROPPED), ==, 0);
    pair_stop(p);
}

/*
 * Bad key, range, access, revoked key: each NAKed, which ends the
 * connection (it is made again before the next), nothing written on B
 */
/* An 8 KiB op refused REMOTE_ACCESS: both QPs in ERR, connected again */
static void refused_access(Pair *p, QPldmaRing *r, uint8_t op, uint64_t local,
                           uint64_t rva, uint32_t rkey)
{
    uint64_t compl = post(&p->a, r, op, 8 * KiB, local, rva, rkey);

    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_ACCESS);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_ERR);
    pair_reconnect(p, r);
}

static void test_bad_keys(void)
{
    Pair *p = pair_start_net(false, "stall", NULL, NULL, true);
    g_autofree char *out = NULL;
    const uint32_t len = 8 * KiB;
    uint64_t a_src, b_pa, b_va;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, ro;
    QPldmaRing r;

    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    b_va = buffer(&p->b, 2 * len, &b_pa, -1);
    rkey = key_register(&p->b, 5, node_pd(&p->b), b_va, len,
                        PLDMA_KEY_ACC_WRITE);
    ro = key_register(&p->b, 6, node_pd(&p->b), b_va, len, PLDMA_KEY_ACC_READ);

    /* no such key */
    refused_access(p, &r, PLDMA_OP_RDMA_WRITE, a_src, b_va, rkey ^ 0x100);
    /* beyond the range */
    refused_access(p, &r, PLDMA_OP_RDMA_WRITE, a_src, b_va + 4096, rkey);
    /* a read-only key written, a write-only key read */
    refused_access(p, &r, PLDMA_OP_RDMA_WRITE, a_src, b_va, ro);
    refused_access(p, &r, PLDMA_OP_RDMA_READ, a_src, b_va, rkey);
    /* revoked */
    qpldma_wr(&p->b.d, PLDMA_KEY_SEL, 5);
    qpldma_wr(&p->b.d, PLDMA_KEY_CMD, PLDMA_KEY_CMD_REVOKE);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_KEY_RKEY), ==, 0);
    refused_access(p, &r, PLDMA_OP_RDMA_WRITE, a_src, b_va, rkey);
    /* re-registered: a new rkey, the old one still refused */
    g_assert_cmphex(key_register(&p->b, 5, node_pd(&p->b), b_va, len,
                                 PLDMA_KEY_ACC_WRITE),
                    !=, rkey);
    refused_access(p, &r, PLDMA_OP_RDMA_WRITE, a_src, b_va, rkey);

    g_assert_true(qpldma_mem_zero(p->b.qts, b_pa, 2 * len));
    /*
     * One NAK per refused message: the rest of its segments find a QP in
     * ERR and are dropped
     */
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_NAK_TX_ACCESS), ==, 6);
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_ACCESS), ==, 6);

    /* bad key registrations are refused with a reason */
    qpldma_wr(&p->b.d, PLDMA_KEY_SEL, PLDMA_NUM_KEYS);
    qpldma_wr(&p->b.d, PLDMA_KEY_CMD, PLDMA_KEY_CMD_REGISTER);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_KEY_STATUS), ==,
                     PLDMA_KEY_ST_BAD_INDEX);
    qpldma_wr(&p->b.d, PLDMA_KEY_SEL, 7);
    qpldma_wr(&p->b.d, PLDMA_KEY_LEN_LO, 0);
    qpldma_wr(&p->b.d, PLDMA_KEY_LEN_HI, 0);
    qpldma_wr(&p->b.d, PLDMA_KEY_CMD, PLDMA_KEY_CMD_REGISTER);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_KEY_STATUS), ==,
                     PLDMA_KEY_ST_BAD_RANGE);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_KEY_RKEY), ==, 0);

    /* the NAKs on the wire: remote access error, at the message's PSN */
    out = capture_decode(p);
    if (out) {
        g_assert_nonnull(strstr(out, "RC Acknowledge\t0\t98\n"));
        g_assert_nonnull(strstr(out, "RC RDMA Read Request\t"));
    }
    pair_stop(p);
}

/* Loss, duplication and reordering on both sides of the link */
static void test_lossy(void)
{
    Pair *p = pair_start_net(false, "stall",
                             ",x-drop-every=11,x-dup-every=7,x-reorder-every=5",
                             ",x-drop-every=13,x-dup-every=5,x-reorder-every=7",
                             false);
    QPldmaRing r;

    p->timers = true;
    ring_init(&p->a, &r, 0);
    write_read(p, &r, 1 * MiB + 300, 0);
    write_read(p, &r, 3000, 1);
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_RETX_SEGS), >, 0);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_DUPS), >, 0);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_OOO), >, 0);
    pair_stop(p);
}

/*
 * A 16 MiB READ (16384 responses) over a link that loses responses: the
 * requester asks for 64 at a time, so a request asked again after a loss
 * is near the responder's expected PSN.  One request for the whole
 * message made its re-requests look like old duplicates, dropped, until
 * REMOTE_TIMEOUT.
 */
static void test_read_big_lossy(void)
{
    Pair *p = pair_start_net(false, "stall", NULL, ",x-drop-every=997", false);
    QPldmaRing r;

    p->timers = true;
    ring_init(&p->a, &r, 0);
    write_read(p, &r, 16 * MiB, 0);
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_RETX_SEGS), >, 0);
    pair_stop(p);
}

/* The responder dies mid-message: a clean error, no hang */
static void test_peer_killed(void)
{
    Pair *p = pair_start_net(false, "stall", NULL, NULL, false);
    const uint32_t len = 16 * MiB;
    uint64_t a_src, b_pa, b_va, compl, bytes;
    uint32_t rkey;
    QPldmaRing r;

    p->a_timers = PLDMA_QPT_MAKE(3, 7, 14, 0);      /* 3 retries */
    pair_reconnect(p, NULL);
    p->timers = true;
    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    b_va = buffer(&p->b, len, &b_pa, -1);
    rkey = key_register(&p->b, 0, node_pd(&p->b), b_va, len,
                        PLDMA_KEY_ACC_WRITE);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);
    qtest_quit(p->b.qts);
    p->b.qts = NULL;
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==,
                     PLDMA_ST_REMOTE_TIMEOUT);
    g_assert_cmpuint(bytes, <, len);
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_TIMEOUTS), ==, 4);
    g_assert_cmpuint(qpldma_ch_rd(&p->a.d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_IDLE);
    pair_stop(p);
}

/*
 * The responder resets mid-message: its keys and QPs go (its QP has a new
 * QPN), so the requester's retries run out and its QP goes to ERR; then
 * the requester's channel is reset mid-message; connected again, both go
 * on.
 */
static void test_reset_midway(void)
{
    Pair *p = pair_start_net(false, "stall", NULL, NULL, false);
    const uint32_t len = 16 * MiB;
    uint64_t a_src, b_pa, b_va, compl;
    uint32_t rkey, st;
    QPldmaRing r;

    p->a_timers = PLDMA_QPT_MAKE(2, 7, 14, 0);      /* 2 retries */
    pair_reconnect(p, NULL);
    p->timers = true;
    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    b_va = buffer(&p->b, len, &b_pa, -1);
    rkey = key_register(&p->b, 0, node_pd(&p->b), b_va, len,
                        PLDMA_KEY_ACC_WRITE);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);
    qpldma_wr(&p->b.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    st = wait_compl(p, compl, NULL);
    /* (or it was quicker than the reset) */
    g_assert_true(st == PLDMA_ST_REMOTE_TIMEOUT || st == PLDMA_ST_SUCCESS);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_KEY_RKEY), ==, 0);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_RESET);
    /* the requester's channel resets mid-message, then both go on */
    pair_reconnect(p, &r);
    rkey = key_register(&p->b, 0, node_pd(&p->b), b_va, len,
                        PLDMA_KEY_ACC_WRITE);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);
    qpldma_wr(&p->a.d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    p->timers = false;
    pair_reconnect(p, &r);
    write_read(p, &r, 256 * KiB, 1);
    pair_stop(p);
}

/*
 * The requester's engine is reset between two WRITEs (its QPs go to RESET)
 * and connected again: the second one lands, and none of it is taken for
 * a duplicate.  (On the node-id path the reset put the PSNs back to 0,
 * the responder took every segment for a duplicate and ACKed: SUCCESS,
 * and not one byte written.)
 */
static void test_write_after_reset(void)
{
    Pair *p = pair_start_net(false, "stall", NULL, NULL, false);
    const uint32_t len = 4 * KiB;
    uint64_t a_src, b_pa, b_va, compl, bytes;
    g_autofree uint8_t *d1 = NULL, *d2 = NULL;
    uint32_t rkey;
    QPldmaRing r;

    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    b_va = buffer(&p->b, 2 * len, &b_pa, -1);
    rkey = key_register(&p->b, 0, node_pd(&p->b), b_va, 2 * len,
                        PLDMA_KEY_ACC_WRITE);
    d1 = qpldma_mem_random(p->a.qts, a_src, len);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(p->b.qts, b_pa, d1, len);

    qpldma_wr(&p->a.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_RESET);
    pair_reconnect(p, &r);
    d2 = qpldma_mem_random(p->a.qts, a_src, len);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va + len,
                 rkey);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, b_pa + len, d2, len);
    qpldma_mem_check(p->b.qts, b_pa, d1, len);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_DUPS), ==, 0);
    pair_stop(p);
}

/*
 * A channel goes to ERROR (a TAIL write past the ring) while its 256 KiB
 * WRITE waits on the responder's fault at 64 KiB, and is CANCELled (its
 * QP goes to ERR); connected again, the next 256 KiB WRITE, to another
 * window, must land there, all of it, and none of it at the first one.
 * (On the node-id path CANCEL did not end the message, the next one
 * reused its PSNs: the responder dropped 64 KiB as duplicates and wrote
 * the other 192 KiB at the cancelled WRITE's address, SUCCESS.)
 * (The cancelled WRITE's own segments that the responder held behind its
 * fault land at their own address once it is resolved: a WRITE that
 * completes in error leaves its target undefined, as in IBA.)
 */
static void test_write_after_cancel(void)
{
    const uint32_t len = 256 * KiB, hole = 16;
    Pair *p = pair_start_net(true, "report", NULL, ",rnr-resume=on", false);
    uint64_t a_src, x_pa, x_va, y_pa, y_va, compl, bytes;
    g_autofree uint8_t *d1 = NULL, *d2 = NULL;
    uint32_t kx, ky, i;
    QPldmaRing r;

    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    d1 = qpldma_mem_random(p->a.qts, a_src, len);
    x_va = buffer(&p->b, len, &x_pa, hole);
    y_va = buffer(&p->b, len, &y_pa, -1);
    kx = key_register(&p->b, 0, node_pd(&p->b), x_va, len, PLDMA_KEY_ACC_WRITE);
    ky = key_register(&p->b, 1, node_pd(&p->b), y_va, len, PLDMA_KEY_ACC_WRITE);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, x_va, kx);
    pop_remote_fault(p, kx, x_va + hole * PAGE, hole * PAGE, true, true);
    for (i = 0; i < WAIT_STEPS &&
         !qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR); i++) {
        step(p);
    }
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR), >, 0);

    qpldma_ch_wr(&p->a.d, 0, PLDMA_CH_RING_TAIL, r.size + 3);
    g_assert_cmpuint(qpldma_ch_rd(&p->a.d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_ERROR);
    qpldma_ch_wr(&p->a.d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(qpldma_ch_rd(&p->a.d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_IDLE);
    g_assert_cmpuint(qtest_readl(p->a.qts, compl + PLDMA_COMPL_STATUS), ==,
                     0);
    /* B's fault is resolved after the CANCEL */
    qsmmu_map(&p->b.s, p->b.pt_root, x_va + hole * PAGE, x_pa + hole * PAGE,
              true);
    qpldma_wr(&p->b.d, PLDMA_KEY_SEL, 0);
    qpldma_wr(&p->b.d, PLDMA_KEY_CMD, PLDMA_KEY_CMD_RESOLVED);
    /* the cancelled message ended A's QP: connected again */
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);
    pair_reconnect(p, &r);

    d2 = qpldma_mem_random(p->a.qts, a_src, len);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, y_va, ky);
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, y_pa, d2, len);
    qpldma_mem_check(p->b.qts, x_pa, d1, hole * PAGE);
    /* past the fault: the cancelled WRITE's bytes or nothing, per page */
    for (i = hole; i < len / PAGE; i++) {
        uint8_t pg[PAGE];

        qtest_memread(p->b.qts, x_pa + i * PAGE, pg, PAGE);
        g_assert_true(memcmp(pg, d1 + i * PAGE, PAGE) == 0 ||
                      qpldma_mem_zero(p->b.qts, x_pa + i * PAGE, PAGE));
        g_assert_false(memcmp(pg, d2 + i * PAGE, PAGE) == 0);
    }
    pair_stop(p);
}

static void stopped_peer_froze(int sig)
{
    static const char msg[] = "pldma-net-test: node 2's main loop froze "
                              "(it blocks in a send to its stopped peer)\n";

    g_assert_cmpint(write(2, msg, sizeof(msg) - 1), >, 0);
    abort();
}

/* Only B's clock runs: A is stopped or just continued */
static void step_b(void *opaque)
{
    Pair *p = opaque;

    g_usleep(200);
    qtest_clock_step(p->b.qts, STEP_NS);
}

/*
 * Node 1 is stopped (QMP stop, as a migration does) while node 2 WRITEs
 * 4 MiB to it.  Node 2's link fills up: its main loop, qtest and monitor
 * keep answering, it sends nothing more while the link takes nothing
 * (retransmit timeouts included), and the WRITE completes once node 1
 * runs again.  Node 2 froze in sendmsg() on the socket the stream netdev
 * had accepted, in blocking mode.
 */
static void test_stopped_peer(void)
{
    const uint32_t len = 4 * MiB;
    Pair *p = pair_start_net(false, "stall", ",mtu=4096",
                             ",mtu=4096,retransmit-timeout=100000", false);
    uint64_t b_src, a_pa, a_va, compl, bytes;
    g_autofree uint8_t *data = NULL;
    struct sigaction sa = { 0 }, old_sa;
    uint32_t key, tx, st;
    int i;
    QPldmaRing r;

    p->path_mtu = PLDMA_MTU_4096;
    pair_reconnect(p, NULL);
    ring_init(&p->b, &r, 0);
    b_src = alloc_pa(&p->b, len);
    data = qpldma_mem_random(p->b.qts, b_src, len);
    a_va = buffer(&p->a, len, &a_pa, -1);
    key = key_register(&p->a, 0, node_pd(&p->a), a_va, len,
                       PLDMA_KEY_ACC_WRITE);
    qtest_qmp_assert_success(p->a.qts, "{ 'execute': 'stop' }");

    sa.sa_handler = stopped_peer_froze;
    sigemptyset(&sa.sa_mask);
    g_assert_cmpint(sigaction(SIGALRM, &sa, &old_sa), ==, 0);
    alarm(60);
    compl = post(&p->b, &r, PLDMA_OP_RDMA_WRITE, len, b_src, a_va, key);
    for (i = 0; i < 100; i++) {
        g_autofree char *info = qtest_hmp(p->b.qts, "info network");

        g_assert_nonnull(strstr(info, "pldma"));
        qtest_clock_step(p->b.qts, 5 * 1000 * 1000);
        g_usleep(1000);
    }
    tx = qpldma_ncnt(&p->b.d, PLDMA_NCNT_TX_FRAMES);
    g_assert_cmpuint(tx, >=, 32);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_TIMEOUTS), >, 0);
    /*
     * Two more retransmit timeouts (of the QP's 7 tries: a timeout without
     * progress is one): nothing sent into the full link
     */
    for (i = 0; i < 20; i++) {
        qtest_clock_step(p->b.qts, 5 * 1000 * 1000);
        g_usleep(1000);
    }
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_TX_FRAMES), ==, tx);
    alarm(0);
    sigaction(SIGALRM, &old_sa, NULL);

    qtest_qmp_assert_success(p->a.qts, "{ 'execute': 'cont' }");
    st = qpldma_wait_compl(&p->b.d, compl, step_b, p, WAIT_STEPS, &bytes);
    g_assert_cmpuint(st, ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->a.qts, a_pa, data, len);
    pair_stop(p);
}

void pldma_net_transfer_register(void)
{
    qtest_add_func("/pldma-net/write-read-sizes", test_write_read_sizes);
    qtest_add_func("/pldma-net/bad-keys", test_bad_keys);
    qtest_add_func("/pldma-net/lossy", test_lossy);
    qtest_add_func("/pldma-net/peer-killed", test_peer_killed);
    qtest_add_func("/pldma-net/read-big-lossy", test_read_big_lossy);
    qtest_add_func("/pldma-net/reset-midway", test_reset_midway);
    qtest_add_func("/pldma-net/write-after-reset", test_write_after_reset);
    qtest_add_func("/pldma-net/write-after-cancel", test_write_after_cancel);
    qtest_add_func("/pldma-net/stopped-peer", test_stopped_peer);
}
