/*
 * QTest for the PLDMA's RC queue pairs (docs/specs/pldma.rst, "Queue
 * pairs"): the state machine and its attributes, two QEMU processes
 * connected QP to QP over -netdev stream, and the test itself as a
 * hostile peer that injects frames
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pldma.h"
#include "libqos/smmuv3.h"
#include "qobject/qdict.h"

#define PLDMA_BASE      0x0c000000ULL
#define RAM_BASE        0x40000000ULL
#define ALLOC_BASE      (RAM_BASE + 0x01000000ULL)
#define PAGE            0x1000ULL
#define STEP_NS         (500 * 1000)
#define WAIT_STEPS      40000
#define IP_A            0x0a000001U
#define IP_B            0x0a000002U
#define IP_OTHER        0x0a000003U
/* B's SMMU, for responder faults (report mode) */
#define SMMU_MEM        (RAM_BASE + 0x00100000ULL)
#define SMMU_MEM_SIZE   (15 * MiB)
#define SID             0x10000
#define CD_LOG2         4
#define PASID           3
#define VA_BASE         0x4000000000ULL
/* IB timeout code 16: 4.096 us << 16 = 268 ms */
#define TIMERS          PLDMA_QPT_MAKE(7, 7, 1, 16)
#define ATOMIC_ETH      28      /* AtomicETH: VA, rkey, swap, compare */

typedef struct Node {
    QTestState *qts;
    QPldma d;
    uint64_t next;
    QSMMU s;                /* with smmu: report mode, PASID's tables */
    uint64_t pt_root, fq;
} Node;

typedef struct Pair {
    Node a, b;
    bool timers;            /* step the virtual clocks while waiting */
    QPldmaLink link;
} Pair;

static uint64_t alloc_pa(Node *n, uint64_t size)
{
    uint64_t pa = QEMU_ALIGN_UP(n->next, PAGE);

    n->next = pa + QEMU_ALIGN_UP(size, PAGE);
    qtest_memset(n->qts, pa, 0, QEMU_ALIGN_UP(size, PAGE));
    return pa;
}

static void node_start(Node *n, const char *args)
{
    n->qts = qtest_init(args);
    n->next = ALLOC_BASE;
    qpldma_init(&n->d, n->qts, PLDMA_BASE);
}

static uint32_t ncnt(Node *n, int i)
{
    return qpldma_ncnt(&n->d, i);
}

/*
 * B's SMMU in front of its PLDMA (report mode): PASID's stage-1 tables,
 * a fault queue of 64 records
 */
static void smmu_setup(Node *n, bool stall)
{
    uint64_t cd;

    qsmmu_init(&n->s, n->qts, QSMMU_VIRT_BASE, SMMU_MEM, SMMU_MEM_SIZE);
    qsmmu_enable(&n->s);
    cd = qsmmu_cd_table(&n->s, CD_LOG2);
    qsmmu_set_ste_s1(&n->s, SID, cd, CD_LOG2, QSMMU_S1DSS_BYPASS, !stall);
    n->pt_root = qsmmu_pgtable_new(&n->s);
    qsmmu_write_cd(&n->s, cd, PASID, PASID, n->pt_root, stall);
    qsmmu_cfgi_cd(&n->s, SID, PASID);
    n->fq = alloc_pa(n, 64 * PLDMA_FR_SIZE);
    qpldma_wr(&n->d, PLDMA_FQ_BASE_LO, (uint32_t)n->fq);
    qpldma_wr(&n->d, PLDMA_FQ_BASE_HI, n->fq >> 32);
    qpldma_wr(&n->d, PLDMA_FQ_SIZE, 64);
    qpldma_wr(&n->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
}

/*
 * B (node 2) listens, A (node 1) connects; B may have an SMMU, in report
 * mode or (@stall) in stall mode
 */
static Pair *pair_start_mode(bool b_smmu, bool stall)
{
    Pair *p = g_new0(Pair, 1);
    g_autofree char *a = NULL, *b = NULL, *a_net = NULL, *b_net = NULL;

    qpldma_link_init(&p->link, "pldma-qp-XXXXXX");
    b_net = qpldma_link_netdev(&p->link, true);
    a_net = qpldma_link_netdev(&p->link, false);
    b = g_strdup_printf("-M virt%s -m 512M -nodefaults "
                        "-device pldma,id=dma0,netdev=n0,node-id=2%s "
                        "-netdev %s", b_smmu ? ",iommu=smmuv3" : "",
                        !b_smmu ? "" : stall ? ",fault-mode=stall"
                                             : ",fault-mode=report", b_net);
    a = g_strdup_printf("-M virt -m 512M -nodefaults "
                        "-device pldma,id=dma0,netdev=n0,node-id=1 "
                        "-netdev %s", a_net);
    node_start(&p->b, b);
    node_start(&p->a, a);
    if (b_smmu) {
        smmu_setup(&p->b, stall);
    }
    qpldma_link_wait(p->a.qts);
    qpldma_link_wait(p->b.qts);
    return p;
}

static Pair *pair_start_smmu(bool b_smmu)
{
    return pair_start_mode(b_smmu, false);
}

static Pair *pair_start(void)
{
    return pair_start_smmu(false);
}

static void pair_stop(Pair *p)
{
    qtest_quit(p->a.qts);
    qtest_quit(p->b.qts);
    qpldma_link_cleanup(&p->link);
    g_free(p);
}

static void step(void *opaque)
{
    Pair *p = opaque;

    g_usleep(200);
    if (p->timers) {
        qtest_clock_step(p->a.qts, STEP_NS);
        qtest_clock_step(p->b.qts, STEP_NS);
    }
}

static uint32_t rand_psn(void)
{
    return g_test_rand_int() & 0xffffff;
}

/* QP attributes of a connection to a peer */
static void attr_to(QPldmaQPAttr *at, const uint8_t *mac, uint32_t ip,
                    uint32_t qpn, uint32_t sq_psn, uint32_t rq_psn, int sq)
{
    memset(at, 0, sizeof(*at));
    at->sq = sq;
    at->pd = 0;
    at->access = PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ;
    at->dest_qpn = qpn;
    at->dest_ip = ip;
    memcpy(at->dest_mac, mac, 6);
    at->sq_psn = sq_psn;
    at->rq_psn = rq_psn;
    at->path_mtu = PLDMA_MTU_1024;
    at->timers = TIMERS;
}

/* RESET -> INIT -> RTR -> RTS with @at, each step checked */
static void qp_connect(Node *n, uint32_t idx, QPldmaQPAttr *at)
{
    at->state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_INIT, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTR, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTS;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTS, at),
                     ==, PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(&n->d, idx), ==, PLDMA_QPS_RTS);
}

static void qp_reset(Node *n, uint32_t idx)
{
    QPldmaQPAttr at = { .state = PLDMA_QPS_RESET };

    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
}

/*
 * A's QP 0 (SQ channel 0) to B's QP 0 (SQ channel 0, PD @b_pd), random
 * PSNs
 */
static void pair_connect_pd(Pair *p, uint32_t *a_psn, uint32_t *b_psn,
                            uint32_t b_pd)
{
    uint8_t mac_a[6], mac_b[6];
    QPldmaQPAttr at;

    *a_psn = rand_psn();
    *b_psn = rand_psn();
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), *b_psn, *a_psn, 0);
    at.pd = b_pd;
    qp_connect(&p->b, 0, &at);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), *a_psn, *b_psn, 0);
    qp_connect(&p->a, 0, &at);
}

static void pair_connect(Pair *p, uint32_t *a_psn, uint32_t *b_psn)
{
    pair_connect_pd(p, a_psn, b_psn, 0);
}

/*
 * Post an RDMA op on @r, with @rsvd in its reserved bytes 2-3 (0 but to
 * test their check); returns the record's PA
 */
static uint64_t post_rsvd(Node *n, QPldmaRing *r, uint8_t op, uint16_t rsvd,
                          uint32_t len, uint64_t local, uint64_t rva,
                          uint32_t rkey)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t compl = alloc_pa(n, PLDMA_COMPL_SIZE);

    qpldma_desc_rdma(d, op, len, local, rva, rkey, compl);
    stw_le_p(d + PLDMA_DESC_RSVD2, rsvd);
    qpldma_ring_post(&n->d, r, d);
    return compl;
}

static uint64_t post(Node *n, QPldmaRing *r, uint8_t op, uint32_t len,
                     uint64_t local, uint64_t rva, uint32_t rkey)
{
    return post_rsvd(n, r, op, 0, len, local, rva, rkey);
}

static uint32_t wait_compl(Pair *p, uint64_t compl, uint64_t *bytes)
{
    return qpldma_wait_compl(&p->a.d, compl, step, p, WAIT_STEPS, bytes);
}

static void ring_init(Node *n, QPldmaRing *r, int ch)
{
    qpldma_ring_init(&n->d, r, ch, alloc_pa(n, 16 * PLDMA_DESC_SIZE), 16, 0);
}

static uint32_t key_register(Node *n, uint32_t idx, uint32_t pasid_reg,
                             uint64_t va, uint64_t len, uint32_t access)
{
    uint32_t rkey;

    g_assert_cmpuint(qpldma_key_register(&n->d, idx, pasid_reg, va, len,
                                         access, &rkey), ==,
                     PLDMA_KEY_ST_OK);
    return rkey;
}

/* ---- the state machine, on one node ---- */

/* The staged attributes and the state of QP @idx, to compare */
static void snapshot(Node *n, uint32_t idx, QPldmaQPAttr *at, uint32_t *qpn)
{
    qpldma_qp_query(&n->d, idx, at);
    *qpn = qpldma_qpn(&n->d, idx);
}

/* A modify that must be refused with @status, leaving QP @idx as it was */
static void refused(Node *n, uint32_t idx, uint32_t mask,
                    const QPldmaQPAttr *at, uint32_t status)
{
    QPldmaQPAttr before, after;
    uint32_t qpn0, qpn1;

    snapshot(n, idx, &before, &qpn0);
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, mask, at), ==, status);
    snapshot(n, idx, &after, &qpn1);
    g_assert_cmpuint(qpn0, ==, qpn1);
    g_assert_true(memcmp(&before, &after, sizeof(before)) == 0);
}

static void test_state_machine(void)
{
    static const uint8_t mac1[6] = { 0x52, 0x54, 0x00, 0x4c, 0x44, 0x01 };
    static const uint8_t peer[6] = { 0x52, 0x54, 0x00, 0x4c, 0x44, 0x02 };
    Node n;
    QPldmaQPAttr at, q;
    uint32_t qpn, qpn2, i, seen_gen = 0;
    uint8_t mac[6];

    node_start(&n, "-M virt -m 512M -nodefaults "
               "-device pldma,id=dma0,netdev=n0,node-id=1 "
               "-netdev hubport,id=n0,hubid=0");
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_CAP) & PLDMA_CAP_QP, !=, 0);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_NUM), ==, 16);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_NET_IP), ==, IP_A);
    qpldma_mac(&n.d, mac);
    g_assert_true(memcmp(mac, mac1, 6) == 0);
    qpldma_wr(&n.d, PLDMA_NET_IP, 0xc0a80001);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_NET_IP), ==, 0xc0a80001);

    /* QPNs: the index in bits 7:0, a generation above, never 0 or 1 */
    for (i = 0; i < 16; i++) {
        qpn = qpldma_qpn(&n.d, i);
        g_assert_cmphex(qpn & 0xff, ==, i);
        g_assert_cmphex(qpn >> 24, ==, 0);
        g_assert_cmphex(qpn >> 8, !=, 0);
        g_assert_cmpuint(qpldma_qp_state(&n.d, i), ==, PLDMA_QPS_RESET);
        seen_gen |= qpn >> 8;
    }
    g_assert_cmphex(seen_gen, !=, 0);

    attr_to(&at, peer, IP_B, 0x123456, 0xabcdef, 0x654321, 0);

    /* RESET: only INIT (and RESET, ERR) */
    at.state = PLDMA_QPS_RTR;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = PLDMA_QPS_RTS;
    refused(&n, 0, PLDMA_QPA_REQ_RTS, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = 4;               /* SQD: not a state of this device */
    refused(&n, 0, PLDMA_QPA_STATE, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = PLDMA_QPS_INIT;
    refused(&n, 0, PLDMA_QPA_REQ_INIT & ~PLDMA_QPA_SQ, &at,
            PLDMA_QP_ST_BAD_ATTR);
    refused(&n, 0, PLDMA_QPA_REQ_INIT & ~PLDMA_QPA_PD, &at,
            PLDMA_QP_ST_BAD_ATTR);
    refused(&n, 0, PLDMA_QPA_REQ_INIT | PLDMA_QPA_SQ_PSN, &at,
            PLDMA_QP_ST_BAD_ATTR);      /* not allowed at this step */
    at.sq = 4;                  /* num-channels is 4 */
    refused(&n, 0, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BAD_ATTR);
    at.sq = 0;
    at.pd = 1U << 30;           /* not a PASID register value */
    refused(&n, 0, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BAD_ATTR);
    at.pd = 0;
    at.access = 4;
    refused(&n, 0, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BAD_ATTR);
    at.access = PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_INIT, &at), ==,
                     PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_INIT);

    /* channel 0 is QP 0's send queue: no other QP may take it */
    refused(&n, 1, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BUSY);

    /* INIT -> INIT with access flags; INIT -> RTS is no transition */
    at.access = PLDMA_KEY_ACC_WRITE;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_STATE |
                                      PLDMA_QPA_ACCESS_FLAGS, &at), ==,
                     PLDMA_QP_ST_OK);
    qpldma_qp_query(&n.d, 0, &q);
    g_assert_cmpuint(q.access, ==, PLDMA_KEY_ACC_WRITE);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_INIT);
    at.state = PLDMA_QPS_RTS;
    refused(&n, 0, PLDMA_QPA_REQ_RTS, &at, PLDMA_QP_ST_BAD_STATE);

    /* INIT -> RTR: every required attribute, each value checked */
    at.state = PLDMA_QPS_RTR;
    refused(&n, 0, PLDMA_QPA_REQ_RTR & ~PLDMA_QPA_RQ_PSN, &at,
            PLDMA_QP_ST_BAD_ATTR);
    refused(&n, 0, PLDMA_QPA_REQ_RTR & ~PLDMA_QPA_AV, &at,
            PLDMA_QP_ST_BAD_ATTR);
    refused(&n, 0, PLDMA_QPA_REQ_RTR & ~PLDMA_QPA_DEST_QPN, &at,
            PLDMA_QP_ST_BAD_ATTR);
    at.rq_psn = 0x1000000;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.rq_psn = 0x654321;
    at.path_mtu = 0;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.path_mtu = 6;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.path_mtu = PLDMA_MTU_2048;   /* above the device's mtu (1024) */
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.path_mtu = PLDMA_MTU_1024;
    at.dest_qpn = 0x1000000;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.dest_qpn = 0x123456;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_RTR, &at), ==,
                     PLDMA_QP_ST_OK);
    qpldma_qp_query(&n.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTR);
    g_assert_cmphex(q.rq_psn, ==, 0x654321);
    g_assert_cmphex(q.dest_qpn, ==, 0x123456);
    g_assert_cmphex(q.dest_ip, ==, IP_B);
    g_assert_true(memcmp(q.dest_mac, peer, 6) == 0);

    /* RTR: no way back to INIT, RTS needs its attributes */
    at.state = PLDMA_QPS_INIT;
    refused(&n, 0, PLDMA_QPA_STATE, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = PLDMA_QPS_RTS;
    refused(&n, 0, PLDMA_QPA_REQ_RTS & ~PLDMA_QPA_SQ_PSN, &at,
            PLDMA_QP_ST_BAD_ATTR);
    at.sq_psn = 0x1000000;
    refused(&n, 0, PLDMA_QPA_REQ_RTS, &at, PLDMA_QP_ST_BAD_ATTR);
    at.sq_psn = 0xabcdef;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_RTS, &at), ==,
                     PLDMA_QP_ST_OK);
    qpldma_qp_query(&n.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTS);
    g_assert_cmphex(q.sq_psn, ==, 0xabcdef);
    g_assert_cmphex(q.timers, ==, TIMERS);

    /* RTS -> RTS with an optional attribute; RTS -> RTR refused */
    at.access = PLDMA_KEY_ACC_READ;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_STATE |
                                      PLDMA_QPA_ACCESS_FLAGS, &at), ==,
                     PLDMA_QP_ST_OK);
    refused(&n, 0, PLDMA_QPA_STATE | PLDMA_QPA_PATH_MTU, &at,
            PLDMA_QP_ST_BAD_ATTR);
    at.state = PLDMA_QPS_RTR;
    refused(&n, 0, PLDMA_QPA_STATE, &at, PLDMA_QP_ST_BAD_STATE);

    /* to ERR; ERR goes only to RESET (or ERR) */
    at.state = PLDMA_QPS_ERR;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_ERR);
    at.state = PLDMA_QPS_RTS;
    refused(&n, 0, PLDMA_QPA_REQ_RTS, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = PLDMA_QPS_INIT;
    refused(&n, 0, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BAD_STATE);

    /* ERR -> RESET: everything cleared, a new QPN of the same index */
    qpn = qpldma_qpn(&n.d, 0);
    qp_reset(&n, 0);
    qpldma_qp_query(&n.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_RESET);
    g_assert_cmphex(q.dest_qpn, ==, 0);
    g_assert_cmphex(q.sq_psn, ==, 0);
    qpn2 = qpldma_qpn(&n.d, 0);
    g_assert_cmphex(qpn2, !=, qpn);
    g_assert_cmphex(qpn2 & 0xff, ==, 0);

    /* INIT -> ERR -> RESET, and RESET -> RESET changes the QPN too */
    at.state = PLDMA_QPS_INIT;
    at.access = PLDMA_KEY_ACC_WRITE;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 3, PLDMA_QPA_REQ_INIT, &at), ==,
                     PLDMA_QP_ST_OK);
    at.state = PLDMA_QPS_ERR;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 3, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    qpn = qpldma_qpn(&n.d, 5);
    qp_reset(&n, 5);
    g_assert_cmphex(qpldma_qpn(&n.d, 5), !=, qpn);

    /* bad index and command */
    qpldma_wr(&n.d, PLDMA_QP_SEL, 16);
    qpldma_wr(&n.d, PLDMA_QP_CMD, PLDMA_QP_CMD_MODIFY);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_STATUS), ==,
                     PLDMA_QP_ST_BAD_INDEX);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_QPN), ==, 0);
    qpldma_wr(&n.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&n.d, PLDMA_QP_CMD, 7);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_STATUS), ==,
                     PLDMA_QP_ST_BAD_CMD);

    /* CTRL_RESET: every QP in RESET with a new QPN, NET_IP as at start */
    qpn = qpldma_qpn(&n.d, 3);
    qpldma_wr(&n.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 3), ==, PLDMA_QPS_RESET);
    g_assert_cmphex(qpldma_qpn(&n.d, 3), !=, qpn);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_NET_IP), ==, IP_A);
    qtest_quit(n.qts);

    /* no link: no QPs */
    node_start(&n, "-M virt -m 512M -nodefaults -device pldma,id=dma0");
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_CAP) & PLDMA_CAP_QP, ==, 0);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_NUM), ==, 0);
    qtest_quit(n.qts);

    /* num-qps */
    node_start(&n, "-M virt -m 512M -nodefaults "
               "-device pldma,id=dma0,netdev=n0,node-id=1,num-qps=3 "
               "-netdev hubport,id=n0,hubid=0");
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_NUM), ==, 3);
    qpldma_wr(&n.d, PLDMA_QP_SEL, 3);
    qpldma_wr(&n.d, PLDMA_QP_CMD, PLDMA_QP_CMD_QUERY);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_STATUS), ==,
                     PLDMA_QP_ST_BAD_INDEX);
    qtest_quit(n.qts);
}

/*
 * rkeys: a REGISTER gives a random nonzero 24-bit generation, never the
 * index's last one (after a revoke too), not a counter
 */
static void test_rkey_random(void)
{
    uint32_t rkey, prev = 0, steps = 0, i;
    Node n;

    node_start(&n, "-M virt -m 512M -nodefaults "
               "-device pldma,id=dma0,netdev=n0,node-id=1 "
               "-netdev hubport,id=n0,hubid=0");
    for (i = 0; i < 32; i++) {
        if (i & 1) {
            qpldma_key_cmd(&n.d, 5, PLDMA_KEY_CMD_REVOKE);
            g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_KEY_RKEY), ==, 0);
        }
        rkey = key_register(&n, 5, 0, ALLOC_BASE, PAGE, PLDMA_KEY_ACC_WRITE);
        g_assert_cmphex(PLDMA_RKEY_INDEX(rkey), ==, 5);
        g_assert_cmphex(PLDMA_RKEY_GEN(rkey), !=, 0);
        g_assert_cmphex(rkey, !=, prev);
        if (i && PLDMA_RKEY_GEN(rkey) == ((PLDMA_RKEY_GEN(prev) + 1) &
                                           0xffffff)) {
            steps++;
        }
        prev = rkey;
    }
    g_assert_cmpuint(steps, <, 4);  /* not a counter */
    qtest_quit(n.qts);
}

/* ---- two QEMUs, QP to QP ---- */

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

/* Pop B's next fault record: a responder fault at @va, offset @off */
static void pop_remote_fault(Pair *p, uint32_t rkey, uint64_t va,
                             uint32_t off, bool is_write)
{
    Node *b = &p->b;
    uint8_t rec[PLDMA_FR_SIZE];

    qpldma_fq_pop(&b->d, b->fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_CHANNEL), ==, PLDMA_FR_CH_REMOTE);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | (is_write ? PLDMA_FR_F_WRITE : 0));
    g_assert_cmphex((uint32_t)ldl_le_p(rec + PLDMA_FR_DESC), ==, rkey);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==, va);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DONE), ==, off);
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
                         op == PLDMA_OP_RDMA_WRITE);
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

/* ---- a hostile peer: the test itself on the other end of the link ---- */

typedef struct Peer {
    Node n;                 /* node 1, the device under test */
    int fd;
    QPldmaLink link;
    uint8_t mac[6];         /* the device's */
    uint32_t qpn;           /* its QP 0 */
    uint32_t my_qpn;        /* ours */
    uint32_t epsn;          /* what the device's QP expects of us */
    uint32_t sq_psn;        /* what the device's QP sends first */
    char *args;             /* the device's QEMU command line */
} Peer;

#define PEER_MAC    "\x52\x54\x00\x00\x00\x02"

/* A RoCEv2 frame from @src to the device; returns its length */
static uint32_t roce_frame(uint8_t *f, uint32_t src, uint8_t op, uint32_t qpn,
                           uint32_t psn, bool reth, uint64_t va, uint32_t rkey,
                           uint32_t dmalen, int aeth_syn, uint32_t msn,
                           const uint8_t *pl, uint32_t plen)
{
    QPldmaRoce r = {
        .dst_mac = (const uint8_t *)"\x52\x54\x00\x4c\x44\x01",
        .src_mac = (const uint8_t *)PEER_MAC,
        .src_ip = src, .dst_ip = IP_A, .op = op, .qpn = qpn, .psn = psn,
        .reth = reth, .va = va, .rkey = rkey, .dmalen = dmalen,
        .aeth_syn = aeth_syn, .msn = msn, .pl = pl, .plen = plen,
    };

    return qpldma_roce_frame(f, &r);
}

/* Send a frame and wait until the device has taken it */
static void peer_inject(Peer *pe, const uint8_t *f, uint32_t len)
{
    uint32_t rx = ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES);
    int i;

    qpldma_stream_send(pe->fd, f, len);
    for (i = 0; i < 10000 && ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES) == rx; i++) {
        g_usleep(100);
    }
    g_assert_cmpuint(ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES), ==, rx + 1);
}

/* Parsed frame from the device */
typedef struct Rx {
    uint32_t dst_ip, src_ip, qpn, psn;
    uint8_t op;
    int syn;
    uint32_t msn;
    uint64_t va;
    uint32_t rkey, dmalen;
    uint32_t plen;          /* payload bytes */
    uint8_t data[4096];     /* the payload (its first 4 KiB) */
} Rx;

/*
 * The next frame the device sends us; false if none comes.  QEMU's own
 * announcements after a migration (RARP, broadcast) are not the device's:
 * skipped.
 */
static bool peer_rx(Peer *pe, Rx *rx)
{
    uint8_t f[8192];
    uint32_t len;
    const uint8_t *q = f + 14 + 28;

    do {
        len = qpldma_stream_recv(pe->fd, f, sizeof(f));
    } while (len >= 14 && lduw_be_p(f + 12) == 0x8035);
    if (!len) {
        return false;
    }
    g_assert_cmpuint(len, >=, 14 + 20 + 8 + 12 + 4);
    g_assert_true(memcmp(f, PEER_MAC, 6) == 0);
    rx->src_ip = ldl_be_p(f + 14 + 12);
    rx->dst_ip = ldl_be_p(f + 14 + 16);
    rx->op = q[0];
    rx->qpn = ldl_be_p(q + 4) & 0xffffff;
    rx->psn = ldl_be_p(q + 8) & 0xffffff;
    rx->syn = -1;
    if (rx->op == 0x11 || (rx->op >= 0x0d && rx->op <= 0x10 &&
                           rx->op != 0x0e)) {
        rx->syn = q[12];
        rx->msn = ldl_be_p(q + 12) & 0xffffff;
    }
    if (rx->op == 0x06 || rx->op == 0x0a || rx->op == 0x0c) {
        rx->va = ldq_be_p(q + 12);
        rx->rkey = ldl_be_p(q + 20);
        rx->dmalen = ldl_be_p(q + 24);
    }
    /* UDP length - UDP, BTH, RETH or AETH, pad, ICRC */
    rx->plen = lduw_be_p(f + 14 + 20 + 4) - 8 - 12 -
               (rx->syn >= 0 ? 4 : 0) -
               (rx->op == 0x06 || rx->op == 0x0a || rx->op == 0x0c ? 16 : 0) -
               ((q[1] >> 4) & 3) - 4;
    memcpy(rx->data, q + 12 + (rx->syn >= 0 ? 4 : 0) +
           (rx->op == 0x06 || rx->op == 0x0a || rx->op == 0x0c ? 16 : 0),
           MIN(rx->plen, sizeof(rx->data)));
    return true;
}

/* The device's answer: syndrome and PSN of an Acknowledge, checked */
static int peer_answer(Peer *pe, uint32_t *psn, uint32_t *msn)
{
    Rx rx;

    if (!peer_rx(pe, &rx)) {
        return -1;
    }
    g_assert_cmpuint(rx.op, ==, 0x11);
    g_assert_cmphex(rx.qpn, ==, pe->my_qpn);
    g_assert_cmphex(rx.dst_ip, ==, IP_B);
    g_assert_cmphex(rx.src_ip, ==, IP_A);
    *psn = rx.psn;
    if (msn) {
        *msn = rx.msn;
    }
    return rx.syn;
}

/*
 * Node 1 with QP 0 connected to us (QPN my_qpn at 10.0.0.2); with @smmu,
 * behind its SMMU in report mode, the QP's PD is PASID
 */
/* ... with @props added to the device's properties */
static void peer_open_props(Peer *pe, uint32_t access, bool smmu,
                            const char *props)
{
    g_autofree char *net = NULL;
    QPldmaQPAttr at;

    memset(pe, 0, sizeof(*pe));
    qpldma_link_init(&pe->link, "pldma-qpeer-XXXXXX");
    net = qpldma_link_netdev(&pe->link, true);
    pe->args = g_strdup_printf("-M virt%s -m 512M -nodefaults "
                           "-device pldma,id=dma0,netdev=n0,node-id=1%s%s "
                           "-netdev %s", smmu ? ",iommu=smmuv3" : "",
                           smmu ? ",fault-mode=report" : "", props, net);
    node_start(&pe->n, pe->args);
    if (smmu) {
        smmu_setup(&pe->n, false);
    }
    pe->fd = qpldma_link_connect(&pe->link);
    qpldma_link_wait(pe->n.qts);
    pe->my_qpn = 0x4a5b00 | (g_test_rand_int() & 0xff);
    pe->epsn = rand_psn();
    pe->sq_psn = rand_psn();
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe->my_qpn, pe->sq_psn,
            pe->epsn, 0);
    at.access = access;
    if (smmu) {
        at.pd = PASID | PLDMA_CHB_PASID_EN;
    }
    qp_connect(&pe->n, 0, &at);
    pe->qpn = qpldma_qpn(&pe->n.d, 0);
}

/*
 * The device's QP 0 to us again, after an error ended the connection:
 * RESET (a new QPN), then connected with new PSNs and @access
 */
static void peer_reconnect(Peer *pe, uint32_t access)
{
    QPldmaQPAttr at;

    qp_reset(&pe->n, 0);
    qpldma_wr(&pe->n.d, PLDMA_QP_ERRORS_LO, 1);
    pe->epsn = rand_psn();
    pe->sq_psn = rand_psn();
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe->my_qpn, pe->sq_psn,
            pe->epsn, 0);
    at.access = access;
    qp_connect(&pe->n, 0, &at);
    pe->qpn = qpldma_qpn(&pe->n.d, 0);
}

static void peer_open_smmu(Peer *pe, uint32_t access, bool smmu)
{
    peer_open_props(pe, access, smmu, "");
}

static void peer_open(Peer *pe, uint32_t access)
{
    peer_open_smmu(pe, access, false);
}

static void peer_step(void *opaque)
{
    g_usleep(200);
}

static void peer_close(Peer *pe)
{
    close(pe->fd);
    qtest_quit(pe->n.qts);
    qpldma_link_cleanup(&pe->link);
    g_free(pe->args);
}

/* A WRITE Only of @len bytes (<= 1024) from @src */
static uint32_t write_only(uint8_t *f, Peer *pe, uint32_t src, uint32_t qpn,
                           uint32_t psn, uint64_t va, uint32_t rkey,
                           const uint8_t *pl, uint32_t len)
{
    return roce_frame(f, src, 0x0a, qpn, psn, true, va, rkey, len, -1, 0,
                      pl, len);
}

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
 * A page of the device's RAM at @pa whose VA in PASID's tables is not
 * mapped (an access faults), exposed as key @idx with @access; its rkey
 */
static uint32_t unmapped_key(Peer *pe, uint32_t idx, uint64_t pa,
                             uint64_t *va, uint32_t access)
{
    *va = VA_BASE + (pa - ALLOC_BASE);
    return key_register(&pe->n, idx, PASID | PLDMA_CHB_PASID_EN, *va, PAGE,
                        access);
}

/*
 * A responder fault on a READ request, as a standard requester (Linux
 * rxe) sends it: one packet, READ Response Only expected.  The RNR NAK
 * names the request's PSN; once resolved, the "resend now" ACK must name
 * the PSN before it (the last good one), never the READ's own PSN: an
 * Acknowledge of a READ's last PSN tells rxe's completer that the READ is
 * done, and it completes SUCCESS with none of the data (seen on the wire,
 * tests/rxe/run).  Then the resent request gets its response.
 */
static void test_read_fault_resume(void)
{
    Peer pe;
    uint8_t f[2048], data[PAGE];
    uint64_t pa, va;
    uint32_t rkey, psn, i, len;
    uint8_t rec[PLDMA_FR_SIZE];
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_READ, true);
    for (i = 0; i < PAGE; i++) {
        data[i] = i * 13 + 5;
    }
    pa = alloc_pa(&pe.n, PAGE);
    qtest_memwrite(pe.n.qts, pa, data, PAGE);
    va = VA_BASE + (pa - ALLOC_BASE);       /* not mapped: a fault */
    rkey = key_register(&pe.n, 0, PASID | PLDMA_CHB_PASID_EN, va, PAGE,
                        PLDMA_KEY_ACC_READ);

    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, va + 256, rkey,
                     512, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, pe.epsn);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==, va);
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    /* "resolved, resend now": an ACK of the PSN before the READ */
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RESUME_TX), ==, 1);
    g_assert_cmphex(psn, ==, (pe.epsn - 1) & 0xffffff);
    /* the requester resends the READ: its response, whole */
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, pe.epsn);
    g_assert_cmpint(rx.syn, ==, 0x1f);
    peer_close(&pe);
}

/*
 * KEY REGISTER over a key whose fault record is unanswered: the
 * connections waiting for that answer had their time bound through the
 * key only, and REGISTER cleared it, so they waited (RNR NAKs) without
 * end.  Now the new registration ends the old fault FAILED: the waiting
 * READ gets NAK remote operational error at once.
 */
static void test_key_reregister_fault(void)
{
    uint8_t f[2048], rec[PLDMA_FR_SIZE];
    uint32_t rkey, psn, len;
    uint64_t pa, va;
    Peer pe;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_READ, true);
    pa = alloc_pa(&pe.n, PAGE);
    rkey = unmapped_key(&pe, 0, pa, &va, PLDMA_KEY_ACC_READ);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, va, rkey, 512,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    /* the same index registered again, the record still unanswered */
    key_register(&pe.n, 0, PASID | PLDMA_CHB_PASID_EN, va, PAGE,
                 PLDMA_KEY_ACC_READ);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x63);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    peer_close(&pe);
}

/*
 * A responder fault inside a READ's response stream, seen on the wire by
 * a standard requester (this test): the responses stop at the faulting
 * page with no RNR NAK or Acknowledge (Linux rxe's completer does not
 * expect one among a READ's responses), a retry of the rest of the READ
 * gets no answer while the fault is pending, and once it is resolved the
 * retried request is served: First..Last from its PSN, nothing else.
 */
static void test_read_fault_held(void)
{
    Peer pe;
    uint8_t f[2048], data[2 * PAGE];
    uint64_t pa, va;
    uint32_t rkey, i, len;
    uint8_t rec[PLDMA_FR_SIZE];
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_READ, true);
    for (i = 0; i < sizeof(data); i++) {
        data[i] = i * 7 + 1;
    }
    pa = alloc_pa(&pe.n, 2 * PAGE);
    qtest_memwrite(pe.n.qts, pa, data, sizeof(data));
    va = VA_BASE + (pa - ALLOC_BASE);
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);     /* page 1: a fault */
    rkey = key_register(&pe.n, 0, PASID | PLDMA_CHB_PASID_EN, va, 2 * PAGE,
                        PLDMA_KEY_ACC_READ);

    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, va, rkey,
                     2 * PAGE, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    for (i = 0; i < 4; i++) {
        g_assert_true(peer_rx(&pe, &rx));
        g_assert_cmphex(rx.op, ==, i ? 0x0e : 0x0d);
        g_assert_cmphex(rx.psn, ==, (pe.epsn + i) & 0xffffff);
    }
    /* held: nothing, no RNR NAK */
    g_assert_false(peer_rx(&pe, &rx));
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==, va + PAGE);
    /* the requester times out and asks for the rest: still nothing */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 4) & 0xffffff, true,
                     va + PAGE, rkey, PAGE, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    /* resolved: the rest, as the retry asked, and no "resend now" */
    qsmmu_map(&pe.n.s, pe.n.pt_root, va + PAGE, pa + PAGE, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    for (i = 0; i < 4; i++) {
        g_assert_true(peer_rx(&pe, &rx));
        g_assert_cmphex(rx.op, ==, i == 0 ? 0x0d : i == 3 ? 0x0f : 0x0e);
        g_assert_cmphex(rx.psn, ==, (pe.epsn + 4 + i) & 0xffffff);
    }
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RESUME_TX), ==, 0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_ACK_TX), ==, 0);
    peer_close(&pe);
}

/*
 * After an RNR NAK the responder holds the rest of the message its
 * requester already sent (parking), silently: no sequence NAK naming the
 * RNR NAKed PSN, which tells a standard requester (Linux rxe's completer:
 * COMPST_ERROR_RETRY) to resend at once, cancelling its RNR wait and
 * spending a retry each time (tests/rxe/run saw one per responder fault).
 * Once the fault is resolved the held segments land and one ACK names the
 * last of them; the message sent again is all duplicates, ACKed.
 */
static void test_rnr_then_silence(void)
{
    Peer pe;
    uint8_t f[2048], pl[1024];
    uint64_t pa, va;
    uint32_t rkey, psn, i, len, seq0, ooo0, parked0;
    uint8_t rec[PLDMA_FR_SIZE];
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_WRITE, true);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 11 + 3;
    }
    pa = alloc_pa(&pe.n, PAGE);
    rkey = unmapped_key(&pe, 0, pa, &va, PLDMA_KEY_ACC_WRITE);

    /* WRITE First of two segments: RNR NAK */
    len = roce_frame(f, IP_B, 0x06, pe.qpn, pe.epsn, true, va, rkey, 2048,
                     -1, 0, pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, pe.epsn);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    /* the Last, sent before the NAK arrived: held, no answer */
    seq0 = ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ);
    ooo0 = ncnt(&pe.n, PLDMA_NCNT_OOO);
    parked0 = ncnt(&pe.n, PLDMA_NCNT_PARKED);
    g_assert_cmpuint(parked0, ==, 1);       /* the First */
    len = roce_frame(f, IP_B, 0x08, pe.qpn, (pe.epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl, 1024);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_PARKED), ==, parked0 + 1);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_OOO), ==, ooo0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, seq0);
    g_assert_false(peer_rx(&pe, &rx));
    /* resolved: both land, one ACK at the Last */
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    qpldma_mem_check(pe.n.qts, pa, pl, 1024);
    qpldma_mem_check(pe.n.qts, pa + 1024, pl, 1024);
    /* the message again, whole: duplicates, ACKed at its last PSN */
    len = roce_frame(f, IP_B, 0x06, pe.qpn, pe.epsn, true, va, rkey, 2048,
                     -1, 0, pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    len = roce_frame(f, IP_B, 0x08, pe.qpn, (pe.epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, seq0);
    qpldma_mem_check(pe.n.qts, pa, pl, 1024);
    qpldma_mem_check(pe.n.qts, pa + 1024, pl, 1024);
    peer_close(&pe);
}

/* Read the READ responses @pe's device sends for a request at @psn */
static uint32_t read_resps(Peer *pe, uint32_t psn, uint32_t n)
{
    uint32_t i;
    Rx rx;

    for (i = 0; i < n; i++) {
        g_assert_true(peer_rx(pe, &rx));
        g_assert_cmphex(rx.op, ==, n == 1 ? 0x10 : i == 0 ? 0x0d :
                        i == n - 1 ? 0x0f : 0x0e);
        g_assert_cmphex(rx.psn, ==, (psn + i) & 0xffffff);
    }
    return i;
}

/*
 * A READ request longer than the responder's PSN window (4096 PSNs, 4 MiB
 * at 1024 bytes a segment) on a QP: served whole, as IBA has it (Linux
 * rxe asks for the rest of a shortened READ only when its retransmit
 * timer fires: 275 timeouts a run of tests/rxe/run, and perftest's 1 MiB
 * ib_read_bw from rxe never completed), and asked again, as a standard
 * requester asks after a timeout (Linux rxe resends the same request, or
 * the rest of it): served again, not dropped as an old duplicate.  rxe's
 * 16 MiB READs hung (tests/rxe/run) when the retry, 16384 PSNs behind the
 * expected PSN, was dropped.
 */
static void test_long_read_retry(void)
{
    const uint32_t len = 4 * MiB + 4 * KiB, segs = len / 1024;
    Peer pe;
    uint8_t f[2048];
    uint32_t rkey, flen, drop0;
    uint64_t pa;

    g_assert_cmpuint(segs, >, 4096);
    peer_open(&pe, PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, len);
    rkey = key_register(&pe.n, 0, 0, pa, len, PLDMA_KEY_ACC_READ);
    flen = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey, len,
                      -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, flen);
    /* every response, First to Last, with consecutive PSNs */
    read_resps(&pe, pe.epsn, segs);
    /* the same request again: its responses again, from the start */
    drop0 = ncnt(&pe.n, PLDMA_NCNT_RX_DROPPED);
    qpldma_stream_send(pe.fd, f, flen);
    read_resps(&pe, pe.epsn, segs);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RX_DROPPED), ==, drop0);
    /* the rest of it from its 65th response, as rxe asks after a loss */
    flen = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 64) & 0xffffff, true,
                      pa + 64 * 1024, rkey, len - 64 * 1024, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, flen);
    read_resps(&pe, pe.epsn + 64, segs - 64);
    peer_close(&pe);
}

/*
 * Duplicate READ requests, as IBA has the responder take them (Linux
 * rxe's duplicate_request()): one that repeats a READ taken, or a part of
 * it with the same R_Key, is served again from its own PSN; one that asks
 * for more than the original, starts before it, has another R_Key, or
 * names a PSN no READ had is dropped without an answer, and nothing
 * moves.  Before, any duplicate in the PSN window was served as a READ
 * of its own.
 */
static void test_read_dup_subset(void)
{
    Peer pe;
    uint8_t f[2048];
    uint32_t rkey, rkey2, len, d0, e0 = 0;
    uint64_t pa;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, 16 * KiB);
    rkey = key_register(&pe.n, 0, 0, pa, 16 * KiB, PLDMA_KEY_ACC_READ);
    rkey2 = key_register(&pe.n, 1, 0, pa, 16 * KiB, PLDMA_KEY_ACC_READ);

    /* the original: 8 KiB at pa + 4 KiB, 8 responses */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa + 4 * KiB,
                     rkey, 8 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn, 8);
    /* the same again: served whole */
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn, 8);
    /* its last 6 KiB from their PSN: served from there */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 2) & 0xffffff, true,
                     pa + 6 * KiB, rkey, 6 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 2, 6);
    /* a part inside it: 1 KiB, one response */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 3) & 0xffffff, true,
                     pa + 7 * KiB, rkey, 1 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 3, 1);

    /* more than the original: past its end, before its start, or longer */
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 2) & 0xffffff, true,
                     pa + 6 * KiB, rkey, 8 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey,
                     8 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa + 4 * KiB,
                     rkey, 12 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    /* another R_Key over the same memory */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa + 4 * KiB,
                     rkey2, 8 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    /* a PSN before the original: no READ had it */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn - 1) & 0xffffff, true,
                     pa, rkey, 1 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 5);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_ACCESS) +
                     ncnt(&pe.n, PLDMA_NCNT_NAK_TX_INVALID) +
                     ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, e0);

    /* the next READ at the expected PSN: served, and so its repeat */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 8) & 0xffffff, true,
                     pa, rkey2, 2 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 8, 2);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 8, 2);
    /* and the first one's still: a part of it */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 7) & 0xffffff, true,
                     pa + 11 * KiB, rkey, 1 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 7, 1);
    g_assert_false(peer_rx(&pe, &rx));
    peer_close(&pe);
}

/*
 * A zero-length READ request from the peer, as IBA has it: its R_Key and
 * VA are not checked (Linux rxe checks neither; rkey 0 is no key here),
 * one READ Response Only without payload answers it at its PSN, with the
 * MSN of one completed message, and it takes one PSN: the next READ is
 * at the PSN after it.  A repeat of it is answered again; one that names
 * another VA is not that READ, and is dropped.  Before, the responder
 * answered it with NAK invalid request.
 */
static void test_zero_length_read(void)
{
    g_autofree uint8_t *data = NULL;
    Peer pe;
    uint8_t f[2048];
    uint32_t rkey, len, d0;
    uint64_t pa;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, 4 * KiB);
    rkey = key_register(&pe.n, 0, 0, pa, 4 * KiB, PLDMA_KEY_ACC_READ);
    data = qpldma_mem_random(pe.n.qts, pa, 4 * KiB);

    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, 0x1000, 0, 0,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.qpn, ==, pe.my_qpn);
    g_assert_cmphex(rx.psn, ==, pe.epsn);
    g_assert_cmphex(rx.syn, ==, 0x1f);
    g_assert_cmpuint(rx.msn, ==, 1);
    g_assert_cmpuint(rx.plen, ==, 0);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_ACCESS) +
                     ncnt(&pe.n, PLDMA_NCNT_NAK_TX_INVALID) +
                     ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, 0);

    /* the same again (its response lost): answered again, the same way */
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, pe.epsn);
    g_assert_cmpuint(rx.plen, ==, 0);
    /* at its PSN with another VA, or a length: not that READ, dropped */
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, 0x2000, 0, 0,
                     -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey, 1024,
                     -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 2);
    g_assert_false(peer_rx(&pe, &rx));

    /* it took one PSN: a READ of 1 KiB at the next one is served */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 1) & 0xffffff, true,
                     pa, rkey, 1024, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, (pe.epsn + 1) & 0xffffff);
    g_assert_cmpuint(rx.msn, ==, 2);
    g_assert_cmpuint(rx.plen, ==, 1024);
    peer_close(&pe);
}

/*
 * A local fault of the requester inside a READ's response stream (its
 * destination page not mapped, report mode): once RESTARTed, the READ is
 * asked again from the faulting page for the rest of the original request
 * only, a subset as IBA wants a repeated READ (Linux rxe's responder drops
 * any other), not for a new window past the original's end.  A response
 * of the original stream that arrives after it does not make the
 * requester ask a third time (a standard responder serves every
 * duplicate whole).  Then the READ completes, byte for byte.
 */
static void test_read_local_fault_subset(void)
{
    const uint32_t len = 128 * KiB, win = 64 * KiB;
    const uint64_t rva = 0x100000;
    Peer pe;
    uint8_t f[2048], d[PLDMA_DESC_SIZE], rec[PLDMA_FR_SIZE];
    g_autofree uint8_t *data = g_malloc(len);
    uint64_t dst, compl, ring, off, bytes;
    uint32_t i, flen, psn, reqs0;
    QPldmaRing r;
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ, true);
    for (i = 0; i < len; i++) {
        data[i] = i * 7 + (i >> 10);
    }
    /* VA = PA for the ring, the record and the destination but page 1 */
    ring = alloc_pa(&pe.n, PAGE);
    compl = alloc_pa(&pe.n, PAGE);
    dst = alloc_pa(&pe.n, len);
    qsmmu_map(&pe.n.s, pe.n.pt_root, ring, ring, true);
    qsmmu_map(&pe.n.s, pe.n.pt_root, compl, compl, true);
    for (off = 0; off < len; off += PAGE) {
        if (off != PAGE) {
            qsmmu_map(&pe.n.s, pe.n.pt_root, dst + off, dst + off, true);
        }
    }
    qpldma_ring_init(&pe.n.d, &r, 0, ring, 16, PASID | PLDMA_CHB_PASID_EN);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_READ, len, dst, rva, 0x4343, compl);
    qpldma_ring_post(&pe.n.d, &r, d);

    /* the first window's request */
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x0c);
    psn = rx.psn;
    g_assert_cmphex(psn, ==, pe.sq_psn);
    g_assert_cmphex(rx.va, ==, rva);
    g_assert_cmpuint(rx.dmalen, ==, win);
    /* 8 responses: the fifth lands on page 1 and faults */
    for (i = 0; i < 8; i++) {
        flen = roce_frame(f, IP_B, i ? 0x0e : 0x0d, pe.qpn,
                          (psn + i) & 0xffffff, false, 0, 0, 0,
                          i ? -1 : 0x1f, 0, data + i * 1024, 1024);
        peer_inject(&pe, f, flen);
    }
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==,
                    dst + PAGE);
    g_assert_false(peer_rx(&pe, &rx));
    qsmmu_map(&pe.n.s, pe.n.pt_root, dst + PAGE, dst + PAGE, true);
    qpldma_ch_wr(&pe.n.d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);

    /* asked again: from the faulting page to the original's end */
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x0c);
    g_assert_cmphex(rx.psn, ==, (psn + 4) & 0xffffff);
    g_assert_cmphex(rx.va, ==, rva + PAGE);
    g_assert_cmpuint(rx.dmalen, ==, win - PAGE);
    /* a late response of the first stream: no third request */
    reqs0 = ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES);
    flen = roce_frame(f, IP_B, 0x0e, pe.qpn, (psn + 9) & 0xffffff, false, 0,
                      0, 0, -1, 0, data + 9 * 1024, 1024);
    peer_inject(&pe, f, flen);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES), ==, reqs0);

    /* the responses to it, then the second window's */
    for (i = 4; i < 64; i++) {
        flen = roce_frame(f, IP_B, i == 4 ? 0x0d : i == 63 ? 0x0f : 0x0e,
                          pe.qpn, (psn + i) & 0xffffff, false, 0, 0, 0,
                          i == 4 || i == 63 ? 0x1f : -1, 0,
                          data + i * 1024, 1024);
        qpldma_stream_send(pe.fd, f, flen);
    }
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x0c);
    g_assert_cmphex(rx.psn, ==, (psn + 64) & 0xffffff);
    g_assert_cmphex(rx.va, ==, rva + win);
    g_assert_cmpuint(rx.dmalen, ==, len - win);
    for (i = 64; i < 128; i++) {
        flen = roce_frame(f, IP_B, i == 64 ? 0x0d : i == 127 ? 0x0f : 0x0e,
                          pe.qpn, (psn + i) & 0xffffff, false, 0, 0, 0,
                          i == 64 || i == 127 ? 0x1f : -1, 0,
                          data + i * 1024, 1024);
        qpldma_stream_send(pe.fd, f, flen);
    }
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, peer_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(pe.n.qts, dst, data, len);
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

/* The next frame is READ response @i of a READ at @psn of @n responses */
static void read_resp_check(Peer *pe, uint32_t psn, uint32_t i, uint32_t n,
                            const uint8_t *data, uint32_t msn)
{
    uint8_t op = n == 1 ? 0x10 : i == 0 ? 0x0d : i == n - 1 ? 0x0f : 0x0e;
    Rx rx;

    g_assert_true(peer_rx(pe, &rx));
    g_assert_cmphex(rx.op, ==, op);
    g_assert_cmphex(rx.psn, ==, (psn + i) & 0xffffff);
    g_assert_cmpuint(rx.plen, ==, 1024);
    g_assert_true(memcmp(rx.data, data + i * 1024, 1024) == 0);
    if (op != 0x0e) {
        g_assert_cmphex(rx.syn, ==, 0x1f);
        g_assert_cmpuint(rx.msn, ==, msn);
    }
}

/*
 * Pipelined READs (IBA: up to max_dest_rd_atomic per QP, answered in
 * order).  The responder kept one response stream per connection and
 * each request overwrote it: of two READs that arrived together the
 * first got none of its responses, and a 1 MiB READ still streaming was
 * cut off by the next.  Now two 8 KiB READs sent back to back get their
 * 16 responses in PSN order, each payload the memory's, each READ's MSN
 * its own (counted when it starts being answered); the two again, as a
 * requester's retry sends them (duplicates), the same, the MSN unmoved;
 * then a 1 MiB READ and a 2 KiB one behind it, every response of both.
 */
static void test_read_pipelined(void)
{
    const uint64_t size = MiB + 16 * KiB;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, len, i, round, psn;
    uint8_t f[2048];
    uint64_t pa;
    Peer pe;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, size);
    data = qpldma_mem_random(pe.n.qts, pa, size);
    rkey = key_register(&pe.n, 0, 0, pa, size, PLDMA_KEY_ACC_READ);
    for (round = 0; round < 2; round++) {
        for (i = 0; i < 2; i++) {
            len = roce_frame(f, IP_B, 0x0c, pe.qpn,
                             (pe.epsn + 8 * i) & 0xffffff, true,
                             pa + i * 8 * KiB, rkey, 8 * KiB, -1, 0, NULL, 0);
            qpldma_stream_send(pe.fd, f, len);
        }
        for (i = 0; i < 16; i++) {
            /* (a duplicate's responses carry the MSN as it is) */
            read_resp_check(&pe, pe.epsn + (i / 8) * 8, i % 8, 8,
                            data + (i / 8) * 8 * KiB, round ? 2 : i / 8 + 1);
        }
        g_assert_false(peer_rx(&pe, &rx));
    }
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_DUPS), ==, 2);

    /* 1 MiB, then 2 KiB behind it */
    psn = (pe.epsn + 16) & 0xffffff;
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, psn, true, pa, rkey, MiB, -1, 0,
                     NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (psn + 1024) & 0xffffff, true,
                     pa + MiB, rkey, 2 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    for (i = 0; i < 1024; i++) {
        read_resp_check(&pe, psn, i, 1024, data, 3);
    }
    for (i = 0; i < 2; i++) {
        read_resp_check(&pe, psn + 1024, i, 2, data + MiB, 4);
    }
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_RTS);
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

/*
 * A READ that the bottom half ends in a NAK (a bus error: the key's range
 * is no memory) did not complete: the NAK's MSN does not count it.  It
 * did (MSN 2 after one WRITE), though the MSN counts completed messages.
 */
static void test_read_nak_msn(void)
{
    uint8_t f[2048], pl[256];
    uint32_t rkey, bad, len, psn, msn;
    uint64_t pa;
    Peer pe;

    memset(pl, 0x77, sizeof(pl));
    peer_open(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    /* no RAM there, nor anything else */
    bad = key_register(&pe.n, 1, 0, 0x7000000000ULL, PAGE,
                       PLDMA_KEY_ACC_READ);
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, pa, rkey, pl,
                     sizeof(pl));
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, &msn), ==, 0x1f);
    g_assert_cmpuint(msn, ==, 1);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 1) & 0xffffff, true,
                     0x7000000000ULL, bad, 1024, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, &msn), ==, 0x63);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    g_assert_cmpuint(msn, ==, 1);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
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
 * One READ must not starve the device: a 32 MiB READ on QP 0 whose
 * responses the peer does not read fills the link (the backend blocks),
 * then a WRITE on QP 1 owes an ACK.  That ACK was dropped (the frame
 * found the backend full), and the WRITE's requester needed tries and
 * seconds.  Now it waits with the answers and goes out as soon as the
 * backend takes frames again, among the first frames the peer reads.
 */
static void test_read_no_starve(void)
{
    const uint32_t big = 32 * MiB;
    uint8_t f[2048], pl[512];
    uint32_t rkey, len, i, epsn1, qpn1, my1 = 0x4a5c11;
    uint64_t pa, pa1;
    QPldmaQPAttr at;
    bool acked = false;
    Peer pe;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, big);
    pa1 = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, big + PAGE,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    /* QP 1 (SQ 1) to our second QP */
    epsn1 = rand_psn();
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, my1, rand_psn(), epsn1, 1);
    qp_connect(&pe.n, 1, &at);
    qpn1 = qpldma_qpn(&pe.n.d, 1);

    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey, big,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    /* until the link is full: the device sends no more */
    for (i = 0; i < 200; i++) {
        uint32_t tx = ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES);

        g_usleep(20 * 1000);
        if (i > 5 && ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES) == tx) {
            break;
        }
    }
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES), <, big / 1024);
    memset(pl, 0x6d, sizeof(pl));
    len = write_only(f, &pe, IP_B, qpn1, epsn1, pa1, rkey, pl, sizeof(pl));
    peer_inject(&pe, f, len);
    qpldma_mem_check(pe.n.qts, pa1, pl, sizeof(pl));
    /* the ACK of QP 1 comes among the next frames */
    for (i = 0; i < 4096 && !acked; i++) {
        g_assert_true(peer_rx(&pe, &rx));
        if (rx.op == 0x11 && rx.qpn == my1) {
            g_assert_cmphex(rx.syn, ==, 0x1f);
            g_assert_cmphex(rx.psn, ==, epsn1);
            acked = true;
        } else {
            g_assert_cmphex(rx.qpn, ==, pe.my_qpn);
        }
    }
    g_test_message("QP 1's ACK after %u frames of QP 0's READ", i);
    g_assert_true(acked);
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

/*
 * A peer's atomic requests (CmpSwap, FetchAdd) to the device's QP, whose
 * window grants WRITE and READ: the device does no atomics, so the one at
 * the expected PSN gets NAK Invalid Request (0x61) naming it, nothing in
 * the window changes, and the connection ends (its QP in ERR); on a new
 * one a WRITE then lands and is ACKed.  A duplicate atomic is dropped;
 * one ahead of the expected PSN gets the sequence NAK.  Before, the link
 * dropped atomic opcodes and the requester timed out.
 */
static void test_atomic_refused(void)
{
    uint8_t f[2048], aeth[ATOMIC_ETH], pl[64];
    uint32_t rkey, psn, len, dups;
    uint64_t pa;
    Peer pe;
    int i;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    /* AtomicETH: VA, rkey, swap (add) and compare data */
    memset(aeth, 0, sizeof(aeth));
    stq_be_p(aeth, pa);
    stl_be_p(aeth + 8, rkey);
    stq_be_p(aeth + 12, 0x1111);
    stq_be_p(aeth + 20, 0);
    /* ahead of the expected PSN: the sequence NAK */
    len = roce_frame(f, IP_B, 0x14, pe.qpn, (pe.epsn + 2) & 0xffffff, false,
                     0, 0, 0, -1, 0, aeth, sizeof(aeth));
    peer_inject(&pe, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x60);
    g_assert_cmphex(psn, ==, pe.epsn);
    /* behind it (a duplicate): dropped, no answer */
    dups = ncnt(&pe.n, PLDMA_NCNT_DUPS);
    len = roce_frame(f, IP_B, 0x13, pe.qpn, (pe.epsn - 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, aeth, sizeof(aeth));
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_DUPS), ==, dups + 1);
    /*
     * At it: NAK Invalid Request, once per connection (an unsupported
     * opcode is fatal to the responder's QP: IBA 9.9.3.1, rxe's
     * RESPST_ERR_UNSUPPORTED_OPCODE), CmpSwap then FetchAdd
     */
    for (i = 0; i < 2; i++) {
        len = roce_frame(f, IP_B, i ? 0x14 : 0x13, pe.qpn, pe.epsn, false,
                         0, 0, 0, -1, 0, aeth, sizeof(aeth));
        peer_inject(&pe, f, len);
        g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x61);
        g_assert_cmphex(psn, ==, pe.epsn);
        g_assert_true(qpldma_mem_zero(pe.n.qts, pa, 8));
        g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
        peer_reconnect(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    }
    /* a new connection serves: a WRITE Only at the expected PSN */
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i + 1;
    }
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, pa, rkey, pl,
                     sizeof(pl));
    peer_inject(&pe, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, pe.epsn);
    qpldma_mem_check(pe.n.qts, pa, pl, sizeof(pl));
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_RTS);
    peer_close(&pe);
}

/* ---- completion queues, receive queues, SEND (CAP.CQ) ---- */

#define CQ_SIZE     64
#define RQ_SIZE     16
#define IMM_WIRE    0x78563412U     /* bytes 12 34 56 78 on the wire */

/* One end's CQs (send CQ 0, receive CQ 1), RQ and send queue */
typedef struct Side {
    QPldmaCQ scq, rcq;
    uint64_t rq;
    uint32_t rq_tail;
    uint32_t pd;
    QPldmaRing r;
} Side;

static void cq_make(Node *n, QPldmaCQ *cq, uint32_t idx, uint32_t size,
                    uint32_t pd)
{
    cq->idx = idx;
    cq->size = size;
    cq->ci = 0;
    cq->pa = alloc_pa(n, size * PLDMA_CQE_SIZE);
    g_assert_cmpuint(qpldma_cq_create(&n->d, idx, cq->pa, size, pd), ==,
                     PLDMA_CQ_ST_OK);
    g_assert_cmpuint(qpldma_cq_reg(&n->d, idx, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_ACTIVE);
}

/*
 * CQs @cq and @cq + 1 (PD @pd) of the sizes given, an RQ, the ring of
 * channel @ch
 */
static void side_init_at(Node *n, Side *sd, uint32_t pd, uint32_t cq,
                         uint32_t scq_size, uint32_t rcq_size, int ch)
{
    memset(sd, 0, sizeof(*sd));
    sd->pd = pd;
    cq_make(n, &sd->scq, cq, scq_size, pd);
    cq_make(n, &sd->rcq, cq + 1, rcq_size, pd);
    sd->rq = alloc_pa(n, RQ_SIZE * PLDMA_RWQE_SIZE);
    ring_init(n, &sd->r, ch);
}

/* CQs 0 and 1 (PD @pd) of the sizes given, an RQ, the ring of channel 0 */
static void side_init_cqs(Node *n, Side *sd, uint32_t pd, uint32_t scq_size,
                          uint32_t rcq_size)
{
    side_init_at(n, sd, pd, 0, scq_size, rcq_size, 0);
}

static void side_init(Node *n, Side *sd, uint32_t pd, uint32_t scq_size)
{
    side_init_cqs(n, sd, pd, scq_size, CQ_SIZE);
}

/* RESET -> INIT (with the RQ and CQs of @sd) -> RTR -> RTS */
static void qp_connect_cq(Node *n, uint32_t idx, QPldmaQPAttr *at, Side *sd)
{
    at->rq_base = sd->rq;
    at->rq_size = RQ_SIZE;
    at->send_cq = sd->scq.idx;
    at->recv_cq = sd->rcq.idx;
    at->pd = sd->pd;
    at->state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_RQ | PLDMA_QPA_CQ, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTR, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTS;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTS, at),
                     ==, PLDMA_QP_ST_OK);
}

/* A's QP 0 to B's QP 0, both with CQs and an RQ (B's PD @b_pd) */
static void pair_connect_cq(Pair *p, Side *sa, Side *sb, uint32_t b_pd,
                            uint32_t a_scq_size)
{
    uint8_t mac_a[6], mac_b[6];
    uint32_t a_psn = rand_psn(), b_psn = rand_psn();
    QPldmaQPAttr at;

    side_init(&p->a, sa, 0, a_scq_size);
    side_init(&p->b, sb, b_pd, CQ_SIZE);
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), b_psn, a_psn, 0);
    qp_connect_cq(&p->b, 0, &at, sb);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), a_psn, b_psn, 0);
    qp_connect_cq(&p->a, 0, &at, sa);
}

/* Both QPs 0 to RESET and connected again (new PSNs), same CQs and RQs */
static void pair_reconnect_cq(Pair *p, Side *sa, Side *sb)
{
    uint8_t mac_a[6], mac_b[6];
    uint32_t a_psn = rand_psn(), b_psn = rand_psn();
    QPldmaQPAttr at;

    qp_reset(&p->a, 0);
    qp_reset(&p->b, 0);
    sa->rq_tail = 0;
    sb->rq_tail = 0;
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), b_psn, a_psn, 0);
    qp_connect_cq(&p->b, 0, &at, sb);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), a_psn, b_psn, 0);
    qp_connect_cq(&p->a, 0, &at, sa);
}

/* Post a receive WQE on @n's QP 0 (SQ channel 0) */
static void post_recv(Node *n, Side *sd, uint64_t wr_id, uint32_t nsge,
                      const uint64_t *addr, const uint32_t *len)
{
    qpldma_rwqe(n->qts, sd->rq + (uint64_t)sd->rq_tail * PLDMA_RWQE_SIZE,
                wr_id, nsge, addr, len);
    sd->rq_tail = (sd->rq_tail + 1) % RQ_SIZE;
    qpldma_ch_wr(&n->d, 0, PLDMA_CH_RQ_TAIL, sd->rq_tail);
}

/* Post a SEND, SEND_IMM or WRITE(_IMM) on @sd's ring; returns its record */
static uint64_t post_op(Node *n, Side *sd, uint8_t op, uint8_t flags,
                        uint32_t len, uint64_t src, uint64_t rva,
                        uint32_t rkey, uint32_t imm, uint64_t cookie)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t compl = alloc_pa(n, PLDMA_COMPL_SIZE);

    qpldma_desc_rdma(d, op, len, src, rva, rkey, compl);
    d[PLDMA_DESC_FLAGS] = flags;
    stl_le_p(d + PLDMA_DESC_IMM, imm);
    stq_le_p(d + PLDMA_DESC_COOKIE, cookie);
    qpldma_ring_post(&n->d, &sd->r, d);
    return compl;
}

/* Wait for the next CQE of @cq on @n */
static void wait_cqe(Pair *p, Node *n, QPldmaCQ *cq, uint8_t *cqe)
{
    int i;

    for (i = 0; i < WAIT_STEPS; i++) {
        if (qpldma_cq_poll(&n->d, cq, cqe)) {
            return;
        }
        step(p);
    }
    g_assert_not_reached();
}

static void check_cqe(const uint8_t *e, uint64_t wr_id, uint8_t opcode,
                      uint8_t status, uint32_t bytes, uint32_t qpn,
                      uint32_t src_qp, uint8_t flags, uint32_t imm,
                      uint32_t vendor)
{
    g_assert_cmphex(ldq_le_p(e + PLDMA_CQE_WR_ID), ==, wr_id);
    g_assert_cmpuint(e[PLDMA_CQE_OPCODE], ==, opcode);
    g_assert_cmpuint(e[PLDMA_CQE_STATUS], ==, status);
    if (status == PLDMA_WC_ST_SUCCESS) {
        g_assert_cmpuint(ldl_le_p(e + PLDMA_CQE_BYTE_LEN), ==, bytes);
    }
    g_assert_cmphex(ldl_le_p(e + PLDMA_CQE_QPN), ==, qpn);
    g_assert_cmphex(ldl_le_p(e + PLDMA_CQE_SRC_QP), ==, src_qp);
    g_assert_cmphex(e[PLDMA_CQE_FLAGS], ==, flags);
    g_assert_cmphex((uint32_t)ldl_le_p(e + PLDMA_CQE_IMM), ==, imm);
    g_assert_cmpuint(ldl_le_p(e + PLDMA_CQE_VENDOR_ERR), ==, vendor);
}

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

/*
 * ---- migration of a node with a link (docs/specs/pldma.rst, "Remote
 * DMA", migration) ----
 *
 * A (node 1, the side that connects, reconnect-ms) runs a 4 MiB RDMA
 * WRITE on QP 0 and a 4 MiB RDMA READ on QP 1 to B.  Mid-transfer B is
 * stopped (its socket fills, A's frames wait in the net layer), A is
 * migrated through a file to a new QEMU with the same command line, which
 * connects to B again; B goes on.  Both transfers complete, byte for byte,
 * and the peer saw retransmissions only.
 */
#define MIG_LEN         (4 * MiB)
#define MIG_SEGS        (MIG_LEN / 1024)
#define MIG_NODE_ARGS   "-M virt -m 512M -nodefaults " \
                        "-device pldma,id=dma0,netdev=n0,node-id=%d " \
                        "-netdev %s"

/* ---- loopback: two QPs of one device, over its own port ---- */

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

static void test_timing_link(void)
{
    const uint32_t len = 16 * KiB;
    uint32_t qpn0, qpn1, rkey;
    uint64_t src, dst, win;
    g_autofree uint8_t *data = NULL;
    uint8_t mac[6], e[PLDMA_CQE_SIZE];
    Side s0, s1;
    Node n;

    node_start(&n, "-M virt -m 512M -nodefaults "
               "-device pldma,id=dma0,netdev=n0,node-id=1,timing=on,"
               "dma-bandwidth=4096,desc-latency-ns=1000,"
               "link-bandwidth=8000,link-latency-ns=500 "
               "-netdev hubport,id=n0,hubid=0");
    loop_connect(&n, &s0, &s1, mac, &qpn0, &qpn1, PLDMA_MTU_1024);
    src = alloc_pa(&n, len);
    dst = alloc_pa(&n, len);
    win = alloc_pa(&n, len);
    data = qpldma_mem_random(n.qts, src, len);
    rkey = key_register(&n, 0, 0, win, len,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);

    timing_link_check(&n, &s0, PLDMA_OP_RDMA_WRITE, len, src, win, rkey,
                      TM_LINK_WRITE_NS);
    qpldma_mem_check(n.qts, win, data, len);
    loop_cqe(&n, &s0.scq, e);
    check_cqe(e, 0, PLDMA_WC_RDMA_WRITE, PLDMA_WC_ST_SUCCESS, len,
              qpn0, qpn1, 0, 0, 0);

    timing_link_check(&n, &s0, PLDMA_OP_RDMA_READ, len, dst, win, rkey,
                      TM_LINK_READ_NS);
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

/* ---- gather/scatter lists (PLDMA_DESC_NUM_SGE) ---- */

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

typedef struct Mig {
    Pair *p;
    bool resp;              /* migrate B, the responder (A otherwise) */
    char *a_args, *b_args;
    uint32_t a_psn[2], b_psn[2];
    uint64_t a_src, a_dst, b_dst, b_src;
    uint64_t compl[2];
    uint8_t *wdata, *rdata;
} Mig;

/* Load @path into a new QEMU with @args; NULL (and no QEMU) if refused */
static QTestState *mig_load(const char *args, const char *path)
{
    g_autofree char *uri = g_strdup_printf("exec:cat %s", path);
    QTestState *dst = qtest_initf("%s -incoming defer", args);
    QDict *rsp;

    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    if (qpldma_migration_wait(dst, 60)) {
        return dst;
    }
    /* refused: the destination still answers, nothing crashed or hung */
    rsp = qtest_qmp(dst, "{ 'execute': 'query-status' }");
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    qtest_quit(dst);
    return NULL;
}

/* QP @idx of A (SQ channel @idx) to QP @idx of B, random PSNs */
static void mig_connect(Mig *m, uint32_t idx)
{
    Pair *p = m->p;
    uint8_t mac_a[6], mac_b[6];
    QPldmaQPAttr at;

    m->a_psn[idx] = rand_psn();
    m->b_psn[idx] = rand_psn();
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, idx), m->b_psn[idx],
            m->a_psn[idx], idx);
    qp_connect(&p->b, idx, &at);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, idx), m->a_psn[idx],
            m->b_psn[idx], idx);
    qp_connect(&p->a, idx, &at);
}

/*
 * Start the pair, the WRITE (QP 0) and the READ (QP 1), stop one node in
 * the middle of them and save the other (A, or B with m->resp) to a file;
 * returns its path (the saved node is gone)
 */
static char *mig_start(Mig *m)
{
    g_autofree char *a_net = NULL, *b_net = NULL;
    g_autofree char *uri = NULL;
    char *path;
    QPldmaRing r0, r1;
    uint32_t wkey, rkey;
    Node *mig;
    Pair *p;
    int fd, i;

    p = m->p = g_new0(Pair, 1);
    qpldma_link_init(&p->link, "pldma-qpmig-XXXXXX");
    b_net = qpldma_link_netdev(&p->link, true);
    a_net = qpldma_link_netdev(&p->link, false);
    m->b_args = g_strdup_printf(MIG_NODE_ARGS, 2, b_net);
    m->a_args = g_strdup_printf(MIG_NODE_ARGS, 1, a_net);
    node_start(&p->b, m->b_args);
    node_start(&p->a, m->a_args);
    qpldma_link_wait(p->a.qts);
    qpldma_link_wait(p->b.qts);
    mig_connect(m, 0);
    mig_connect(m, 1);
    ring_init(&p->a, &r0, 0);
    ring_init(&p->a, &r1, 1);

    m->a_src = alloc_pa(&p->a, MIG_LEN);
    m->a_dst = alloc_pa(&p->a, MIG_LEN);
    m->b_dst = alloc_pa(&p->b, MIG_LEN);
    m->b_src = alloc_pa(&p->b, MIG_LEN);
    m->wdata = qpldma_mem_random(p->a.qts, m->a_src, MIG_LEN);
    m->rdata = qpldma_mem_random(p->b.qts, m->b_src, MIG_LEN);
    wkey = key_register(&p->b, 0, 0, m->b_dst, MIG_LEN, PLDMA_KEY_ACC_WRITE);
    rkey = key_register(&p->b, 1, 0, m->b_src, MIG_LEN, PLDMA_KEY_ACC_READ);

    m->compl[0] = post(&p->a, &r0, PLDMA_OP_RDMA_WRITE, MIG_LEN,
                       m->a_src, m->b_dst, wkey);
    m->compl[1] = post(&p->a, &r1, PLDMA_OP_RDMA_READ, MIG_LEN,
                       m->a_dst, m->b_src, rkey);
    /* some of both is through, then B stops taking frames */
    for (i = 0; i < 5000 && ncnt(&p->b, PLDMA_NCNT_RX_FRAMES) < 300; i++) {
        g_usleep(200);
    }
    qtest_qmp_assert_success(m->resp ? p->a.qts : p->b.qts,
                             "{ 'execute': 'stop' }");
    g_usleep(100 * 1000);
    for (i = 0; i < 2; i++) {
        g_assert_cmpuint(qtest_readl(p->a.qts, m->compl[i] +
                                     PLDMA_COMPL_STATUS), ==,
                         PLDMA_ST_PENDING);
    }
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_RX_FRAMES), >, 0);

    fd = g_file_open_tmp("pldma-qpmig-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    uri = g_strdup_printf("exec:cat > %s", path);
    mig = m->resp ? &p->b : &p->a;
    qtest_qmp_assert_success(mig->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(qpldma_migration_wait(mig->qts, 60));
    /*
     * The source goes: its connection closes.  B (server=on) listens
     * again; A (reconnect-ms) connects again, to a new B that listens on
     * the same path (QEMU unlinks it first).
     */
    qtest_quit(mig->qts);
    mig->qts = NULL;
    return path;
}

/*
 * The migrated node runs on @dst now: the other goes on, both transfers
 * complete, checked
 */
static void mig_finish(Mig *m, QTestState *dst)
{
    Pair *p = m->p;
    Node *mig = m->resp ? &p->b : &p->a;
    QPldmaQPAttr q;
    uint64_t bytes;
    uint32_t i;

    mig->qts = dst;
    mig->d.qts = dst;
    p->timers = true;
    qtest_qmp_assert_success(m->resp ? p->a.qts : p->b.qts,
                             "{ 'execute': 'cont' }");
    for (i = 0; i < 2; i++) {
        g_assert_cmpuint(wait_compl(p, m->compl[i], &bytes), ==,
                         PLDMA_ST_SUCCESS);
        g_assert_cmpuint(bytes, ==, MIG_LEN);
    }
    qpldma_mem_check(p->b.qts, m->b_dst, m->wdata, MIG_LEN);
    qpldma_mem_check(p->a.qts, m->a_dst, m->rdata, MIG_LEN);

    /* the connections go on: PSNs past both messages, both ends in RTS */
    for (i = 0; i < 2; i++) {
        qpldma_qp_query(&p->a.d, i, &q);
        g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTS);
        g_assert_cmphex(q.sq_psn, ==, (m->a_psn[i] + MIG_SEGS) & 0xffffff);
        qpldma_qp_query(&p->b.d, i, &q);
        g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTS);
        if (i == 0) {
            g_assert_cmphex(q.rq_psn, ==, (m->a_psn[0] + MIG_SEGS) & 0xffffff);
        }
    }
    /*
     * Retransmissions, nothing else: no NAK but sequence, no drop.  A
     * migrated requester resends what was not acknowledged; a migrated
     * responder's peer resends what was lost, if anything was.
     */
    if (!m->resp) {
        g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_RETX_SEGS), >, 0);
    }
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_ACCESS), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_INVALID), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_OPERR), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_QP_DROPPED), ==, 0);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_QP_DROPPED), ==, 0);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_NAK_RX_ACCESS) +
                     ncnt(&p->a, PLDMA_NCNT_NAK_RX_INVALID) +
                     ncnt(&p->a, PLDMA_NCNT_NAK_RX_OPERR), ==, 0);
    g_test_message("A resent %u segments, B took %u duplicates",
                   ncnt(&p->a, PLDMA_NCNT_RETX_SEGS),
                   ncnt(&p->b, PLDMA_NCNT_DUPS));
    pair_stop(p);
    g_free(m->a_args);
    g_free(m->b_args);
    g_free(m->wdata);
    g_free(m->rdata);
}

static void test_migrate_requester(void)
{
    Mig m = { 0 };
    g_autofree char *path = mig_start(&m);
    QTestState *dst = mig_load(m.a_args, path);

    g_assert_nonnull(dst);
    unlink(path);
    mig_finish(&m, dst);
}

/* B, the responder, migrated in the middle of the WRITE and the READ */
static void test_migrate_responder(void)
{
    Mig m = { .resp = true };
    g_autofree char *path = mig_start(&m);
    QTestState *dst = mig_load(m.b_args, path);

    g_assert_nonnull(dst);
    unlink(path);
    mig_finish(&m, dst);
}

/*
 * A zero-length READ's resource migrates with its responder (the
 * pldma-conn/rdo-zero subsection): on the destination a repeat of that
 * READ is answered again, not dropped as a READ the QP never took
 */
static void test_migrate_zero_read(void)
{
    g_autofree char *path = NULL, *uri = NULL;
    Peer pe;
    uint8_t f[256];
    uint32_t len;
    QTestState *dst;
    Rx rx;
    int fd;

    peer_open(&pe, PLDMA_KEY_ACC_READ);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, 0x1000, 0, 0,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);

    fd = g_file_open_tmp("pldma-qpmig-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    uri = g_strdup_printf("exec:cat > %s", path);
    qtest_qmp_assert_success(pe.n.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(qpldma_migration_wait(pe.n.qts, 60));
    qtest_quit(pe.n.qts);
    close(pe.fd);
    dst = mig_load(pe.args, path);
    g_assert_nonnull(dst);
    unlink(path);
    pe.n.qts = dst;
    pe.n.d.qts = dst;
    pe.fd = qpldma_link_connect(&pe.link);
    qpldma_link_wait(dst);

    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, pe.epsn);
    g_assert_cmpuint(rx.plen, ==, 0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, 0);
    peer_close(&pe);
}

/* @len bytes of @data to a new temporary file; returns its path */
static char *mig_file(const uint8_t *data, size_t len)
{
    char *path;
    int fd = g_file_open_tmp("pldma-qpmig-XXXXXX", &path, NULL);

    g_assert(fd >= 0);
    close(fd);
    g_assert_true(g_file_set_contents(path, (const char *)data, len, NULL));
    return path;
}

/*
 * A responder connection in the stream (vmstate_pldma_conn, no subsection
 * needed): its size, and where its READ resources' next index is
 */
#define MIG_CONN_SIZE       470
#define MIG_CONN_RDO_NEXT   469

/*
 * A hostile stream: the in-flight WRITE's QP index, then its PSN; then,
 * of the connection of A's QP 0 (connected, nothing in progress), the
 * index of its next READ resource and its expected PSN, each corrupted
 * in A's saved state.  Each is refused on load with an error (the
 * destination answers its monitor), and the untouched stream still loads
 * and completes.  (A connection with nothing in progress was let through
 * unchecked: a READ after the load wrote past its 16 READ resources.)
 */
static void test_migrate_hostile(void)
{
    static const char name[] = "pldma-core/net";
    Mig m = { 0 };
    g_autofree char *path = mig_start(&m);
    g_autofree uint8_t *data = NULL;
    uint8_t *sub, *ch0, *conn0, want[8] = { 0 };
    QTestState *dst;
    gsize len;
    int i;

    g_assert_true(g_file_get_contents(path, (char **)&data, &len, NULL));
    sub = memmem(data, len, name, strlen(name));
    g_assert_nonnull(sub);
    /* QEMU_VM_SUBSECTION, the name's length, the name, the version */
    g_assert_cmpuint(sub[-1], ==, strlen(name));
    g_assert_cmpuint(sub[-2], ==, 0x05);
    ch0 = sub + strlen(name) + 4;
    /* channel 0's requester: 1 + QP index, PSN (be32) */
    g_assert_cmpuint(ch0[0], ==, 1);
    g_assert_cmphex(ldl_be_p(ch0 + 1), ==, m.a_psn[0]);
    /*
     * The connection of A's QP 0: its expected PSN (B's first) and MSN 0,
     * the first such bytes of the subsection; QP 1's follows it
     */
    stl_be_p(want, m.b_psn[0]);
    conn0 = memmem(ch0, len - (ch0 - data), want, sizeof(want));
    g_assert_nonnull(conn0);
    g_assert_cmphex(ldl_be_p(conn0 + MIG_CONN_SIZE), ==, m.b_psn[1]);
    g_assert_cmpuint(conn0[MIG_CONN_RDO_NEXT], <, 16);

    for (i = 0; i < 4; i++) {
        g_autofree uint8_t *bad = g_memdup2(data, len);
        g_autofree char *bad_path = NULL;
        uint8_t *bch0 = bad + (ch0 - data);
        uint8_t *bconn0 = bad + (conn0 - data);

        if (i == 0) {
            bch0[0] = 0x40;             /* QP 63: beyond num-qps */
        } else if (i == 1) {
            stl_be_p(bch0 + 1, m.a_psn[0] | 0x01000000);   /* > 24 bits */
        } else if (i == 2) {
            bconn0[MIG_CONN_RDO_NEXT] = 0xff;  /* of 16 READ resources */
        } else {
            stl_be_p(bconn0, m.b_psn[0] | 0x01000000);     /* > 24 bits */
        }
        bad_path = mig_file(bad, len);
        g_assert_null(mig_load(m.a_args, bad_path));
        unlink(bad_path);
    }
    /*
     * A destination whose mtu is below the stream's path MTU and
     * requester MTU (1024) refuses it, and does not abort later on a
     * frame it could not build
     */
    {
        g_auto(GStrv) parts = g_strsplit(m.a_args, "node-id=1 ", 2);
        g_autofree char *small = g_strjoin("node-id=1,mtu=512 ", parts[0],
                                           parts[1], NULL);

        g_assert_null(mig_load(small, path));
    }
    dst = mig_load(m.a_args, path);
    g_assert_nonnull(dst);
    unlink(path);
    mig_finish(&m, dst);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!qtest_has_device("pldma")) {
        return g_test_run();
    }
    qtest_add_func("/pldma-qp/state-machine", test_state_machine);
    qtest_add_func("/pldma-qp/rkey-random", test_rkey_random);
    qtest_add_func("/pldma-qp/write-read", test_write_read);
    qtest_add_func("/pldma-qp/not-ready", test_not_ready);
    qtest_add_func("/pldma-qp/timeout-err", test_timeout_err);
    qtest_add_func("/pldma-qp/responder-fault", test_responder_fault);
    qtest_add_func("/pldma-qp/reset-reconnect", test_reset_reconnect);
    qtest_add_func("/pldma-qp/pd-tag", test_pd_tag);
    qtest_add_func("/pldma-qp/hostile-responder", test_hostile_responder);
    qtest_add_func("/pldma-qp/hostile-requester", test_hostile_requester);
    qtest_add_func("/pldma-qp/ghost-ack", test_ghost_ack);
    qtest_add_func("/pldma-qp/reset-err-no-sq", test_reset_err_no_sq);
    qtest_add_func("/pldma-qp/read-pipelined", test_read_pipelined);
    qtest_add_func("/pldma-qp/dest-mac", test_dest_mac);
    qtest_add_func("/pldma-qp/read-nak-msn", test_read_nak_msn);
    qtest_add_func("/pldma-qp/hostile-campaign", test_hostile_campaign);
    qtest_add_func("/pldma-qp/read-no-starve", test_read_no_starve);
    qtest_add_func("/pldma-qp/max-message", test_max_message);
    qtest_add_func("/pldma-qp/cq-config", test_cq_config);
    qtest_add_func("/pldma-qp/send-recv", test_send_recv);
    qtest_add_func("/pldma-qp/send-errors", test_send_errors);
    qtest_add_func("/pldma-qp/zero-length", test_zero_length);
    qtest_add_func("/pldma-qp/zero-length-read", test_zero_length_read);
    qtest_add_func("/pldma-qp/recv-fault", test_recv_fault);
    qtest_add_func("/pldma-qp/recv-fault-stall", test_recv_fault_stall);
    qtest_add_func("/pldma-qp/stall-outlives-qp", test_stall_outlives_qp);
    qtest_add_func("/pldma-qp/recv-wqe-once", test_recv_wqe_once);
    qtest_add_func("/pldma-qp/cq-arm", test_cq_arm);
    qtest_add_func("/pldma-qp/cq-overflow-flush", test_cq_overflow_flush);
    qtest_add_func("/pldma-qp/cq-wrap", test_cq_wrap);
    qtest_add_func("/pldma-qp/hostile-send", test_hostile_send);
    qtest_add_func("/pldma-qp/recv-rnr-silence", test_recv_rnr_silence);
    qtest_add_func("/pldma-qp/recv-park", test_recv_park);
    qtest_add_func("/pldma-qp/recv-park-cq-error", test_recv_park_cq_error);
    qtest_add_func("/pldma-qp/loopback", test_loopback);
    qtest_add_func("/pldma-qp/timing-link", test_timing_link);
    qtest_add_func("/pldma-qp/sgl", test_sgl);
    qtest_add_func("/pldma-qp/atomic-refused", test_atomic_refused);
    qtest_add_func("/pldma-qp/read-fault-resume", test_read_fault_resume);
    qtest_add_func("/pldma-qp/rnr-then-silence", test_rnr_then_silence);
    qtest_add_func("/pldma-qp/read-fault-held", test_read_fault_held);
    qtest_add_func("/pldma-qp/key-reregister-fault",
                   test_key_reregister_fault);
    qtest_add_func("/pldma-qp/long-read-retry", test_long_read_retry);
    qtest_add_func("/pldma-qp/read-dup-subset", test_read_dup_subset);
    qtest_add_func("/pldma-qp/read-local-fault-subset",
                   test_read_local_fault_subset);
    qtest_add_func("/pldma-qp/migrate-requester", test_migrate_requester);
    qtest_add_func("/pldma-qp/migrate-responder", test_migrate_responder);
    qtest_add_func("/pldma-qp/migrate-hostile", test_migrate_hostile);
    qtest_add_func("/pldma-qp/migrate-zero-read", test_migrate_zero_read);
    return g_test_run();
}
