/*
 * QTest for the PLDMA's remote DMA: two QEMU processes, each with a pldma
 * on -M virt, linked by -netdev stream over a unix socket
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Node A (node-id 1) is the requester, node B (node-id 2) the responder,
 * through A's QP 0 (send queue channel 0) connected to B's QP 0, PSNs
 * from 0, B's PD its PASID when it has an SMMU.  Data is compared byte
 * for byte; responder faults are made by leaving
 * pages out of B's SMMU page tables, and resolved as a driver would: map
 * the page, then KEY_CMD_RESOLVED (report mode) or CMD_RESUME (stall).
 * The capture of one test is read back with tshark when it is installed.
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pldma.h"
#include "libqos/smmuv3.h"

#define PLDMA_BASE      0x0c000000ULL
#define RAM_BASE        0x40000000ULL
#define SMMU_MEM        (RAM_BASE + 0x00100000ULL)
#define SMMU_MEM_SIZE   (15 * MiB)
#define ALLOC_BASE      (RAM_BASE + 0x01000000ULL)
#define SID             0x10000
#define PAGE            0x1000ULL
#define CD_LOG2         4
#define PASID           3
#define VA_BASE         0x4000000000ULL
#define STEP_NS         (500 * 1000)
#define WAIT_STEPS      40000

typedef struct Node {
    QTestState *qts;
    QPldma d;
    bool smmu;
    uint64_t next;
    QSMMU s;
    uint64_t cd_table, pt_root, fq;
} Node;

typedef struct Pair {
    Node a, b;
    bool timers;            /* step the virtual clocks while waiting */
    QPldmaLink link;
    char *pcap;             /* A's capture, in the link's directory */
    uint32_t a_timers;      /* the QPs' PLDMA_QPT_MAKE(), 0: the default */
    uint32_t b_timers;
    uint32_t path_mtu;      /* PLDMA_MTU_* of the connection */
} Pair;

static uint64_t alloc_pa(Node *n, uint64_t size)
{
    uint64_t pa = QEMU_ALIGN_UP(n->next, PAGE);

    n->next = pa + QEMU_ALIGN_UP(size, PAGE);
    qtest_memset(n->qts, pa, 0, QEMU_ALIGN_UP(size, PAGE));
    return pa;
}

/*
 * A buffer: physical pages, mapped at VA_BASE + (pa - ALLOC_BASE) in the
 * PASID's tables when the node has an SMMU (pages in @hole left out).
 * Returns the address the device uses.
 */
static uint64_t buffer(Node *n, uint64_t size, uint64_t *pa, int hole)
{
    uint64_t off, va;

    *pa = alloc_pa(n, size);
    if (!n->smmu) {
        return *pa;
    }
    va = VA_BASE + (*pa - ALLOC_BASE);
    for (off = 0; off < size; off += PAGE) {
        if (hole < 0 || off != (uint64_t)hole * PAGE) {
            qsmmu_map(&n->s, n->pt_root, va + off, *pa + off, true);
        }
    }
    return va;
}

/* A node's PD: its PASID behind its SMMU, else none */
static uint32_t node_pd(Node *n)
{
    return n->smmu ? (PASID | PLDMA_CHB_PASID_EN) : 0;
}

/* A's QP 0 to B's QP 0 (both send queues on channel 0), PSNs from 0 */
static void pair_connect(Pair *p)
{
    QPldmaQPEnd a = {
        .d = &p->a.d, .sq = 0, .pd = node_pd(&p->a), .timers = p->a_timers,
    };
    QPldmaQPEnd b = {
        .d = &p->b.d, .sq = 0, .pd = node_pd(&p->b), .timers = p->b_timers,
    };

    qpldma_qp_connect_pair(&a, &b, p->path_mtu);
}

/* A ring of 16 descriptors on channel @ch, no PASID */
static void ring_init_ch(Node *n, QPldmaRing *r, int ch)
{
    qpldma_ring_init(&n->d, r, ch, alloc_pa(n, 16 * PLDMA_DESC_SIZE), 16, 0);
}

static void ring_init(Node *n, QPldmaRing *r)
{
    ring_init_ch(n, r, 0);
}

/*
 * Both QPs through RESET, then connected again, after an error ended the
 * connection (IBA: a remote access error, an invalid request, a remote
 * operational error or retries that ran out end it on both ends); A's
 * ring anew at @r
 */
static void pair_reconnect(Pair *p, QPldmaRing *r)
{
    qpldma_qp_reset(&p->a.d, 0);
    qpldma_qp_reset(&p->b.d, 0);
    qpldma_wr(&p->a.d, PLDMA_QP_ERRORS_LO, 1);
    qpldma_wr(&p->b.d, PLDMA_QP_ERRORS_LO, 1);
    pair_connect(p);
    if (r) {
        ring_init(&p->a, r);
    }
}

static void node_start(Node *n, const char *dev, const char *netdev,
                       bool smmu, const char *mode, const char *extra)
{
    n->smmu = smmu;
    n->next = ALLOC_BASE;
    n->qts = qtest_initf("-M virt%s -m 512M -nodefaults "
                         "-device pldma,id=dma0,fault-mode=%s,netdev=n0,%s%s "
                         "-netdev %s", smmu ? ",iommu=smmuv3" : "", mode,
                         dev, extra ? extra : "", netdev);
    qpldma_init(&n->d, n->qts, PLDMA_BASE);
    if (!smmu) {
        return;
    }
    qsmmu_init(&n->s, n->qts, QSMMU_VIRT_BASE, SMMU_MEM, SMMU_MEM_SIZE);
    qsmmu_enable(&n->s);
    n->cd_table = qsmmu_cd_table(&n->s, CD_LOG2);
    qsmmu_set_ste_s1(&n->s, SID, n->cd_table, CD_LOG2, QSMMU_S1DSS_BYPASS,
                     !strcmp(mode, "report"));
    n->pt_root = qsmmu_pgtable_new(&n->s);
    qsmmu_write_cd(&n->s, n->cd_table, PASID, PASID, n->pt_root,
                   strcmp(mode, "report"));
    qsmmu_cfgi_cd(&n->s, SID, PASID);
    if (!strcmp(mode, "report")) {
        n->fq = alloc_pa(n, 64 * PLDMA_FR_SIZE);
        qpldma_wr(&n->d, PLDMA_FQ_BASE_LO, (uint32_t)n->fq);
        qpldma_wr(&n->d, PLDMA_FQ_BASE_HI, n->fq >> 32);
        qpldma_wr(&n->d, PLDMA_FQ_SIZE, 64);
        qpldma_wr(&n->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    }
}

/* B listens, A connects; either may have an SMMU, extra properties */
static Pair *pair_start_a(bool a_smmu, const char *a_mode, bool b_smmu,
                          const char *b_mode, const char *a_extra,
                          const char *b_extra, bool capture)
{
    Pair *p = g_new0(Pair, 1);
    g_autofree char *a_link = NULL, *a_net = NULL, *b_net = NULL;

    qpldma_link_init(&p->link, "pldma-net-XXXXXX");
    p->pcap = g_strdup_printf("%s/a.pcap", p->link.dir);
    b_net = qpldma_link_netdev(&p->link, true);
    a_link = qpldma_link_netdev(&p->link, false);
    a_net = g_strdup_printf("%s%s%s", a_link,
                            capture ? " -object filter-dump,id=f0,netdev=n0,"
                                      "file=" : "",
                            capture ? p->pcap : "");
    node_start(&p->b, "node-id=2", b_net, b_smmu, b_mode, b_extra);
    node_start(&p->a, "node-id=1", a_net, a_smmu, a_mode, a_extra);
    qpldma_link_wait(p->a.qts);
    qpldma_link_wait(p->b.qts);
    g_assert_cmpuint(qpldma_rd(&p->a.d, PLDMA_CAP) & PLDMA_CAP_REMOTE, !=, 0);
    g_assert_cmpuint(qpldma_rd(&p->a.d, PLDMA_NET_NODE), ==, 1);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_NET_NODE), ==, 2);
    p->path_mtu = PLDMA_MTU_1024;
    pair_connect(p);
    return p;
}

static Pair *pair_start(bool b_smmu, const char *b_mode, const char *a_extra,
                        const char *b_extra, bool capture)
{
    return pair_start_a(false, "stall", b_smmu, b_mode, a_extra, b_extra,
                        capture);
}

static void pair_stop(Pair *p)
{
    if (p->a.qts) {
        qtest_quit(p->a.qts);
    }
    if (p->b.qts) {
        qtest_quit(p->b.qts);
    }
    unlink(p->pcap);
    qpldma_link_cleanup(&p->link);
    g_free(p->pcap);
    g_free(p);
}

/* Register a key on @n for [va, va + len); returns the rkey */
static uint32_t key_register(Node *n, uint32_t idx, uint64_t va, uint64_t len,
                             uint32_t access)
{
    uint32_t rkey;

    g_assert_cmpuint(qpldma_key_register(&n->d, idx, node_pd(n), va, len,
                                         access, &rkey), ==,
                     PLDMA_KEY_ST_OK);
    return rkey;
}

/* Post one RDMA op on @r; returns the completion record's PA */
static uint64_t post(Node *n, QPldmaRing *r, uint8_t op, uint32_t len,
                     uint64_t local, uint64_t rva, uint32_t rkey)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t compl = alloc_pa(n, PLDMA_COMPL_SIZE);

    qpldma_desc_rdma(d, op, len, local, rva, rkey, compl);
    qpldma_ring_post(&n->d, r, d);
    return compl;
}

/*
 * While waiting: let both nodes' virtual clocks run when the test needs
 * their timers (loss, RNR timer, a dead peer), else just let time pass:
 * the nodes answer each other from their main loops, and a clock stepped
 * much faster than the real link would fire retransmit timers spuriously.
 */
static void step(void *opaque)
{
    Pair *p = opaque;

    g_usleep(200);
    if (!p->timers) {
        return;
    }
    qtest_clock_step(p->a.qts, STEP_NS);
    if (p->b.qts) {
        qtest_clock_step(p->b.qts, STEP_NS);
    }
}

static uint32_t wait_compl(Pair *p, uint64_t compl, uint64_t *bytes)
{
    return qpldma_wait_compl(&p->a.d, compl, step, p, WAIT_STEPS, bytes);
}

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
    rkey = key_register(&p->b, rkey_idx, b_va, len,
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
    Pair *p = pair_start(false, "stall", NULL, NULL, false);
    QPldmaRing r;
    size_t i;

    ring_init(&p->a, &r);
    for (i = 0; i < ARRAY_SIZE(sizes); i++) {
        write_read(p, &r, sizes[i], i);
    }
    /* nothing lost on a clean link: no resends, no NAKs */
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_RETX_SEGS), ==, 0);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_NAK_TX_SEQ), ==, 0);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_RX_DROPPED), ==, 0);
    pair_stop(p);
}

/* Pop B's next fault record; checks it is a responder one */
static void pop_remote_fault(Pair *p, uint32_t rkey, uint64_t va,
                             uint32_t off, bool is_write)
{
    Node *b = &p->b;
    uint8_t rec[PLDMA_FR_SIZE];

    qpldma_fq_pop(&b->d, b->fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_CHANNEL), ==, PLDMA_FR_CH_REMOTE);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | (is_write ? PLDMA_FR_F_WRITE : 0));
    g_assert_cmphex((uint32_t)ldl_le_p(rec + PLDMA_FR_PASID), ==,
                    PASID | PLDMA_CHB_PASID_EN);
    g_assert_cmphex((uint32_t)ldl_le_p(rec + PLDMA_FR_DESC), ==, rkey);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==, va);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DONE), ==, off);
}

/*
 * A's capture as tshark decodes it: "Info<TAB>PSN<TAB>AETH syndrome" a
 * line, the Info column without its " QP=..." tail; NULL without tshark.
 * Quits A, which flushes the capture.
 */
static char *capture_decode(Pair *p)
{
    g_autofree char *cmd = NULL, *out = NULL;
    g_auto(GStrv) lines = NULL;
    GString *res;
    int status, i;

    qtest_quit(p->a.qts);
    p->a.qts = NULL;
    if (!g_find_program_in_path("tshark")) {
        g_test_message("tshark not installed: capture not checked");
        return NULL;
    }
    cmd = g_strdup_printf("tshark -r %s -Y infiniband -T fields "
                          "-e _ws.col.Info -e infiniband.bth.psn "
                          "-e infiniband.aeth.syndrome", p->pcap);
    g_assert_true(g_spawn_command_line_sync(cmd, &out, NULL, &status, NULL));
    g_assert_cmpint(status, ==, 0);
    res = g_string_new(NULL);
    lines = g_strsplit(out, "\n", -1);
    for (i = 0; lines[i]; i++) {
        char *qp = strstr(lines[i], " QP=");
        char *tab = strchr(lines[i], '\t');

        if (qp && tab && qp < tab) {
            memmove(qp, tab, strlen(tab) + 1);
        }
        if (*lines[i]) {
            g_string_append_printf(res, "%s\n", lines[i]);
        }
    }
    return g_string_free(res, false);
}

/*
 * A responder fault on page @hole of a 64 KiB WRITE and READ: NAK, the
 * fault resolved on B, the requester resends from the faulting segment
 * and not from the start (the resent bytes are counted).
 */
static void responder_fault(const char *mode, bool resume)
{
    const uint32_t len = 64 * KiB, hole = 9;
    bool report = !strcmp(mode, "report");
    Pair *p = pair_start(true, mode, ",retransmit-timeout=2000000",
                         resume ? ",rnr-resume=on" : ",rnr-resume=off",
                         report && resume);
    uint64_t a_src, a_dst, b_pa, b_va, compl, bytes, retx;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, op;
    QPldmaRing r;

    p->timers = !resume;    /* the RNR timer */
    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    a_dst = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);

    for (op = PLDMA_OP_RDMA_WRITE; op <= PLDMA_OP_RDMA_READ; op++) {
        uint32_t retx0 = qpldma_ncnt(&p->a.d, PLDMA_NCNT_RETX_BYTES);
        uint32_t rnr0 = qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR);
        uint64_t hole_va;

        b_va = buffer(&p->b, len, &b_pa, hole);
        hole_va = b_va + hole * PAGE;
        if (op == PLDMA_OP_RDMA_READ) {
            qtest_memwrite(p->b.qts, b_pa, data, len);
        }
        rkey = key_register(&p->b, op, b_va, len,
                            PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
        compl = post(&p->a, &r, op, len,
                     op == PLDMA_OP_RDMA_WRITE ? a_src : a_dst, b_va, rkey);
        if (report) {
            pop_remote_fault(p, rkey, hole_va, hole * PAGE,
                             op == PLDMA_OP_RDMA_WRITE);
            qsmmu_map(&p->b.s, p->b.pt_root, hole_va, b_pa + hole * PAGE,
                      true);
            qpldma_wr(&p->b.d, PLDMA_KEY_SEL, op);
            qpldma_wr(&p->b.d, PLDMA_KEY_CMD, PLDMA_KEY_CMD_RESOLVED);
        } else {
            uint64_t ev[4];
            int i;

            for (i = 0; i < WAIT_STEPS && !qsmmu_pop_event(&p->b.s, ev); i++) {
                step(p);
            }
            g_assert_true(QSMMU_EVT_STALL(ev));
            g_assert_cmphex(QSMMU_EVT_ADDR(ev) & ~(PAGE - 1), ==, hole_va);
            qsmmu_map(&p->b.s, p->b.pt_root, hole_va, b_pa + hole * PAGE,
                      true);
            qsmmu_resume(&p->b.s, SID, QSMMU_EVT_STAG(ev), QSMMU_RESUME_RETRY);
        }
        g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
        g_assert_cmpuint(bytes, ==, len);
        if (op == PLDMA_OP_RDMA_WRITE) {
            qpldma_mem_check(p->b.qts, b_pa, data, len);
        } else {
            qpldma_mem_check(p->a.qts, a_dst, data, len);
        }
        if (op == PLDMA_OP_RDMA_WRITE) {
            g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR), >,
                             rnr0);
        } else {
            /*
             * A READ that faults inside its response stream is held there
             * and goes on: no RNR NAK among its responses (Linux rxe's
             * completer would take it as fatal)
             */
            g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR), ==,
                             rnr0);
        }
        /* resent: at most what follows the faulting page */
        retx = qpldma_ncnt(&p->a.d, PLDMA_NCNT_RETX_BYTES) - retx0;
        g_assert_cmpuint(retx, <=, len - hole * PAGE);
    }
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_RX_FAULTS), >=, 2);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_NAK_TX_RNR), >=, 1);
    if (resume) {
        /* the WRITE's; the held READ goes on without one */
        g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_RESUME_TX), >=, 1);
        g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_RESUME_RX), >=, 1);
    } else {
        g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_RESUME_TX), ==, 0);
    }

    if (report && resume) {
        g_autofree char *out = capture_decode(p);
        g_autofree char *rnr_w = NULL;

        if (out) {
            /* WRITE: PSNs 0..63, page 9 faults at PSN 36; READ from 64 */
            g_assert_nonnull(strstr(out, "RC RDMA Write First\t0\t\n"));
            g_assert_nonnull(strstr(out, "RC RDMA Write Middle\t36\t\n"));
            g_assert_nonnull(strstr(out, "RC RDMA Write Last\t63\t\n"));
            g_assert_nonnull(strstr(out, "RC RDMA Read Request\t64\t\n"));
            g_assert_nonnull(strstr(out,
                                    "RC RDMA Read Response First\t64\t31\n"));
            g_assert_nonnull(strstr(out,
                                    "RC RDMA Read Response Middle\t99\t\n"));
            g_assert_nonnull(strstr(out,
                                    "RC RDMA Read Response Last\t127\t31\n"));
            g_assert_nonnull(strstr(out, "RC Acknowledge\t63\t31\n"));
            /* the RNR NAKs (timer 14) carry the PSN of the faulting page */
            rnr_w = g_strdup_printf("RC Acknowledge\t%u\t%u\n", hole * 4,
                                    0x20 | 14);
            g_assert_nonnull(strstr(out, rnr_w));
            /*
             * The READ's responses, held at the faulting page and then
             * continued, with no RNR NAK nor any other Acknowledge among
             * them; the response at the faulting page's PSN comes once
             */
            g_assert_null(strstr(strstr(out, "RC RDMA Read Response First"),
                                 "RC Acknowledge"));
            g_assert_nonnull(strstr(out,
                                    "RC RDMA Read Response Middle\t100\t\n"));
            g_assert_null(strstr(strstr(out, "Read Response Middle\t100\t\n")
                                 + 1, "Read Response Middle\t100\t\n"));
        }
    }
    pair_stop(p);
}

/*
 * Faults on both sides of one WRITE: the responder's RNR timer expires
 * while the requester is FAULTED on its own source page; after RESTART the
 * requester must still resend (it used to wait for a timer nobody armed).
 */
static void test_fault_both_sides(void)
{
    const uint32_t len = 64 * KiB, b_hole = 4, a_hole = 40;
    Pair *p = pair_start_a(true, "report", true, "report",
                           ",retransmit-timeout=2000000",
                           ",rnr-resume=off", false);
    uint64_t ring_pa, ring_va, cpl_pa, cpl_va, src_pa, src_va, b_pa, b_va;
    uint8_t d[PLDMA_DESC_SIZE] = { 0 };
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, head, i, st = 0;
    uint8_t rec[PLDMA_FR_SIZE];

    /* B's RNR NAKs say 10 us (its QP's minimum RNR timer) */
    p->b_timers = PLDMA_QPT_MAKE(7, 7, 1, 0);
    pair_reconnect(p, NULL);
    p->timers = true;
    ring_va = buffer(&p->a, PAGE, &ring_pa, -1);
    cpl_va = buffer(&p->a, PAGE, &cpl_pa, -1);
    src_va = buffer(&p->a, len, &src_pa, a_hole / 4);
    data = qpldma_mem_random(p->a.qts, src_pa, len);
    b_va = buffer(&p->b, len, &b_pa, b_hole);
    rkey = key_register(&p->b, 0, b_va, len, PLDMA_KEY_ACC_WRITE);

    qpldma_wr(&p->a.d, PLDMA_CH_BIND(0) + PLDMA_CHB_PASID,
              PASID | PLDMA_CHB_PASID_EN);
    qpldma_wr(&p->a.d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL,
              PLDMA_CHB_CTRL_ENABLE);
    qpldma_ch_wr(&p->a.d, 0, PLDMA_CH_RING_BASE_LO, (uint32_t)ring_va);
    qpldma_ch_wr(&p->a.d, 0, PLDMA_CH_RING_BASE_HI, ring_va >> 32);
    qpldma_ch_wr(&p->a.d, 0, PLDMA_CH_RING_SIZE, 4);
    d[PLDMA_DESC_OPCODE] = PLDMA_OP_RDMA_WRITE;
    stl_le_p(d + PLDMA_DESC_LEN, len);
    stq_le_p(d + PLDMA_DESC_SRC, src_va);
    stq_le_p(d + PLDMA_DESC_REMOTE_VA, b_va);
    stl_le_p(d + PLDMA_DESC_RKEY, rkey);
    stq_le_p(d + PLDMA_DESC_COMPL, cpl_va);
    qtest_memwrite(p->a.qts, ring_pa, d, sizeof(d));
    qpldma_ch_wr(&p->a.d, 0, PLDMA_CH_RING_TAIL, 1);

    /* A is FAULTED on its source page, B has an RNR NAK out */
    for (i = 0; i < WAIT_STEPS &&
         qpldma_ch_rd(&p->a.d, 0, PLDMA_CH_STATE) != PLDMA_STATE_FAULTED; i++) {
        step(p);
    }
    g_assert_cmpuint(qpldma_ch_rd(&p->a.d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_FAULTED);
    for (i = 0; i < WAIT_STEPS &&
         qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR) == 0; i++) {
        step(p);
    }
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR), >, 0);
    /* B's fault resolved; A's RNR timer expires while A is FAULTED */
    head = qpldma_rd(&p->b.d, PLDMA_FQ_HEAD);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_FQ_TAIL), !=, head);
    qpldma_wr(&p->b.d, PLDMA_FQ_HEAD, (head + 1) % 64);
    qsmmu_map(&p->b.s, p->b.pt_root, b_va + b_hole * PAGE,
              b_pa + b_hole * PAGE, true);
    qpldma_wr(&p->b.d, PLDMA_KEY_SEL, 0);
    qpldma_wr(&p->b.d, PLDMA_KEY_CMD, PLDMA_KEY_CMD_RESOLVED);
    for (i = 0; i < 100; i++) {
        step(p);
    }
    /* A's own fault: its record, the page, RESTART */
    head = qpldma_rd(&p->a.d, PLDMA_FQ_HEAD);
    g_assert_cmpuint(qpldma_rd(&p->a.d, PLDMA_FQ_TAIL), !=, head);
    qtest_memread(p->a.qts, p->a.fq + head * PLDMA_FR_SIZE, rec, sizeof(rec));
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==,
                    src_va + a_hole / 4 * PAGE);
    qpldma_wr(&p->a.d, PLDMA_FQ_HEAD, (head + 1) % 64);
    qsmmu_map(&p->a.s, p->a.pt_root, src_va + a_hole / 4 * PAGE,
              src_pa + a_hole / 4 * PAGE, true);
    qpldma_ch_wr(&p->a.d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);

    st = qpldma_wait_compl(&p->a.d, cpl_pa, step, p, WAIT_STEPS, NULL);
    g_assert_cmpuint(st, ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(p->b.qts, b_pa, data, len);
    pair_stop(p);
}

/*
 * Parking: a 256 KiB WRITE into a window none of whose 64 pages is
 * present, each fault resolved one page at a time (report mode, resolved,
 * resend now), as `pldma-rbench write-one` does.  The responder holds the
 * segments that follow a fault and applies them once it is resolved, so
 * the requester sends again at most the message once over (the
 * goal: at most 2x the message in all); with park-size=0 the window in
 * flight is thrown away at every fault (about 15x, the old behaviour).
 * Both in one run; data compared, faults and resent segments counted.
 */
static uint32_t park_write(uint32_t park_size)
{
    const uint32_t len = 256 * KiB, nsegs = len / 1024, pages = len / PAGE;
    g_autofree char *b_extra = g_strdup_printf(",rnr-resume=on,park-size=%u",
                                               park_size);
    Pair *p = pair_start(true, "report", ",retransmit-timeout=2000000",
                         b_extra, false);
    uint64_t a_src, b_pa, b_va, compl, bytes = 0;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, head, faults = 0, retx, st, i;
    QPldmaRing r;

    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    /* B's window: no page mapped */
    b_pa = alloc_pa(&p->b, len);
    b_va = VA_BASE + (b_pa - ALLOC_BASE);
    rkey = key_register(&p->b, 0, b_va, len, PLDMA_KEY_ACC_WRITE);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);

    /* B's driver: every fault record, its page mapped, then RESOLVED */
    for (i = 0; i < WAIT_STEPS * 4; i++) {
        st = qtest_readl(p->a.qts, compl + PLDMA_COMPL_STATUS);
        if (st != PLDMA_ST_PENDING) {
            break;
        }
        head = qpldma_rd(&p->b.d, PLDMA_FQ_HEAD);
        if (qpldma_rd(&p->b.d, PLDMA_FQ_TAIL) == head) {
            step(p);
            continue;
        }
        {
            uint8_t rec[PLDMA_FR_SIZE];
            uint64_t va;

            qtest_memread(p->b.qts, p->b.fq + head * PLDMA_FR_SIZE, rec,
                          sizeof(rec));
            va = ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1);
            g_assert_cmphex((uint32_t)ldl_le_p(rec + PLDMA_FR_DESC), ==, rkey);
            g_assert_true(va >= b_va && va < b_va + len);
            qsmmu_map(&p->b.s, p->b.pt_root, va, b_pa + (va - b_va), true);
            qpldma_wr(&p->b.d, PLDMA_FQ_HEAD, (head + 1) % 64);
            qpldma_wr(&p->b.d, PLDMA_KEY_SEL, 0);
            qpldma_wr(&p->b.d, PLDMA_KEY_CMD, PLDMA_KEY_CMD_RESOLVED);
            faults++;
        }
    }
    g_assert_cmpuint(wait_compl(p, compl, &bytes), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(p->b.qts, b_pa, data, len);
    /* one fault per page, each resolved once */
    g_assert_cmpuint(faults, ==, pages);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_RX_FAULTS), ==, pages);
    retx = qpldma_ncnt(&p->a.d, PLDMA_NCNT_RETX_SEGS);
    g_test_message("park-size=%u: %u segments, %u resent, %u held",
                   park_size, nsegs, retx,
                   qpldma_ncnt(&p->b.d, PLDMA_NCNT_PARKED));
    if (park_size) {
        g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_PARKED), >, 0);
        g_assert_cmpuint(retx, <=, nsegs);
    } else {
        g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_PARKED), ==, 0);
    }
    pair_stop(p);
    return retx;
}

static void test_responder_park(void)
{
    uint32_t held = park_write(1024 * 1024);
    uint32_t dropped = park_write(0);

    /* side by side: holding sends again a fraction of what dropping did */
    g_assert_cmpuint(held * 4, <, dropped);
}

static void test_fault_report_resume(void)
{
    responder_fault("report", true);
}

static void test_fault_report_timer(void)
{
    responder_fault("report", false);
}

static void test_fault_stall(void)
{
    responder_fault("stall", true);
}

/* B's SMMU event queue on or off (off: it can stall nothing) */
#define SMMU_CR0            0x20
#define SMMU_CR0_SMMUEN     (1u << 0)
#define SMMU_CR0_EVENTQEN   (1u << 2)
#define SMMU_CR0_CMDQEN     (1u << 3)

/*
 * Stall mode, a responder fault the SMMU does not stall (its event queue
 * is off): with B's fault queue off, nobody can resolve it, and the WRITE
 * ends at once with NAK remote operational error (it used to be RNR NAKed
 * until the requester's RNR retries ran out, or for ever on a QP whose
 * rnr_retry is 7); with the fault queue on, it falls back to a fault
 * record that KEY_CMD_RESOLVED answers.
 */
static void test_fault_unstalled(void)
{
    const uint32_t len = 16 * KiB, hole = 2;
    Pair *p = pair_start(true, "stall", ",retransmit-timeout=2000000",
                         NULL, false);
    uint64_t a_src, b_pa, b_va, compl;
    g_autofree uint8_t *data = NULL;
    QPldmaRing r;
    uint32_t rkey;

    p->timers = true;
    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    qsmmu_writel(&p->b.s, SMMU_CR0, SMMU_CR0_CMDQEN | SMMU_CR0_SMMUEN);
    b_va = buffer(&p->b, len, &b_pa, hole);
    rkey = key_register(&p->b, 0, b_va, len, PLDMA_KEY_ACC_WRITE);

    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_ERROR);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_NAK_TX_OPERR), >=, 1);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_FQ_OVERFLOWS), ==, 1);
    /* what came before the hole is there, nothing after it */
    qpldma_mem_check(p->b.qts, b_pa, data, hole * PAGE);
    g_assert_true(qpldma_mem_zero(p->b.qts, b_pa + (hole + 1) * PAGE,
                                  len - (hole + 1) * PAGE));

    /*
     * The NAK ended the connection (both QPs in ERR): connect again.  The
     * fault queue on: the fault is reported there and resolved.
     */
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_ERR);
    pair_reconnect(p, &r);
    p->b.fq = alloc_pa(&p->b, 64 * PLDMA_FR_SIZE);
    qpldma_wr(&p->b.d, PLDMA_FQ_BASE_LO, (uint32_t)p->b.fq);
    qpldma_wr(&p->b.d, PLDMA_FQ_BASE_HI, p->b.fq >> 32);
    qpldma_wr(&p->b.d, PLDMA_FQ_SIZE, 64);
    qpldma_wr(&p->b.d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);
    pop_remote_fault(p, rkey, b_va + hole * PAGE, hole * PAGE, true);
    qsmmu_map(&p->b.s, p->b.pt_root, b_va + hole * PAGE, b_pa + hole * PAGE,
              true);
    qpldma_key_cmd(&p->b.d, 0, PLDMA_KEY_CMD_RESOLVED);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(p->b.qts, b_pa, data, len);
    pair_stop(p);
}

/*
 * A report-mode fault of one key that nobody answers (a `user` strategy
 * whose owner sleeps) blocks that key only: once its requester gives the
 * message up (RNR retries: the connection ends), a WRITE to another key
 * over the connection made again completes (it used to be dropped while
 * the fault was pending).  A later WRITE to the first key waits for the
 * same answer (no second record) and ends with NAK remote operational
 * error when the fault's bound (resp-fault-timeout, 32 s by default) has
 * passed.
 */
static void test_fault_own_key(void)
{
    const uint32_t len = 16 * KiB;
    Pair *p = pair_start(true, "report", ",retransmit-timeout=2000000",
                         ",rnr-resume=on", false);
    uint64_t a_src, b_pa0, b_va0, b_pa1, b_va1, compl;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey0, rkey1, rnr0, i;
    QPldmaRing r;

    /* A gives a message up after 3 RNR NAKs without progress */
    p->a_timers = PLDMA_QPT_MAKE(7, 3, 14, 0);
    pair_reconnect(p, NULL);
    p->timers = true;
    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    b_va0 = buffer(&p->b, len, &b_pa0, 0);
    b_va1 = buffer(&p->b, len, &b_pa1, -1);
    rkey0 = key_register(&p->b, 0, b_va0, len, PLDMA_KEY_ACC_WRITE);
    rkey1 = key_register(&p->b, 1, b_va1, len, PLDMA_KEY_ACC_WRITE);

    /* key 0 faults, its record stays unanswered: A gives up (RNR retry) */
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va0, rkey0);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_RNR);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_FQ_TAIL), ==, 1);
    g_assert_cmpuint(qpldma_qp_state(&p->a.d, 0), ==, PLDMA_QPS_ERR);

    /* key 1, over the connection made again: done, every byte there */
    pair_reconnect(p, &r);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va1, rkey1);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(p->b.qts, b_pa1, data, len);

    /* key 0 again: RNR NAKed without a second record ... */
    p->timers = false;
    rnr0 = qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va0, rkey0);
    for (i = 0; i < WAIT_STEPS &&
         qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR) == rnr0; i++) {
        step(p);
    }
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_NAK_RX_RNR), >, rnr0);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_FQ_TAIL), ==, 1);
    /* ... until the bound: then NAK remote operational error */
    qtest_clock_step(p->b.qts, (PLDMA_RESP_FAULT_TIMEOUT_MS + 1) * 1000000LL);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_REMOTE_ERROR);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_NAK_TX_OPERR), ==, 1);
    g_assert_true(qpldma_mem_zero(p->b.qts, b_pa0 + PAGE, len - PAGE));
    /* a late answer finds nothing to resolve */
    qpldma_key_cmd(&p->b.d, 0, PLDMA_KEY_CMD_RESOLVED);
    g_assert_cmpuint(qpldma_ncnt(&p->b.d, PLDMA_NCNT_RESUME_TX), ==, 0);

    /* the page made present, key 0 works again (a new connection) */
    qsmmu_map(&p->b.s, p->b.pt_root, b_va0, b_pa0, true);
    pair_reconnect(p, &r);
    p->timers = true;
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va0, rkey0);
    g_assert_cmpuint(wait_compl(p, compl, NULL), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(p->b.qts, b_pa0, data, len);
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
    Pair *p = pair_start(false, "stall", NULL, NULL, true);
    g_autofree char *out = NULL;
    const uint32_t len = 8 * KiB;
    uint64_t a_src, b_pa, b_va;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, ro;
    QPldmaRing r;

    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    b_va = buffer(&p->b, 2 * len, &b_pa, -1);
    rkey = key_register(&p->b, 5, b_va, len, PLDMA_KEY_ACC_WRITE);
    ro = key_register(&p->b, 6, b_va, len, PLDMA_KEY_ACC_READ);

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
    g_assert_cmphex(key_register(&p->b, 5, b_va, len, PLDMA_KEY_ACC_WRITE),
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
    Pair *p = pair_start(false, "stall",
                         ",x-drop-every=11,x-dup-every=7,x-reorder-every=5",
                         ",x-drop-every=13,x-dup-every=5,x-reorder-every=7",
                         false);
    QPldmaRing r;

    p->timers = true;
    ring_init(&p->a, &r);
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
    Pair *p = pair_start(false, "stall", NULL, ",x-drop-every=997", false);
    QPldmaRing r;

    p->timers = true;
    ring_init(&p->a, &r);
    write_read(p, &r, 16 * MiB, 0);
    g_assert_cmpuint(qpldma_ncnt(&p->a.d, PLDMA_NCNT_RETX_SEGS), >, 0);
    pair_stop(p);
}

/* The responder dies mid-message: a clean error, no hang */
static void test_peer_killed(void)
{
    Pair *p = pair_start(false, "stall", NULL, NULL, false);
    const uint32_t len = 16 * MiB;
    uint64_t a_src, b_pa, b_va, compl, bytes;
    uint32_t rkey;
    QPldmaRing r;

    p->a_timers = PLDMA_QPT_MAKE(3, 7, 14, 0);      /* 3 retries */
    pair_reconnect(p, NULL);
    p->timers = true;
    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    b_va = buffer(&p->b, len, &b_pa, -1);
    rkey = key_register(&p->b, 0, b_va, len, PLDMA_KEY_ACC_WRITE);
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
    Pair *p = pair_start(false, "stall", NULL, NULL, false);
    const uint32_t len = 16 * MiB;
    uint64_t a_src, b_pa, b_va, compl;
    uint32_t rkey, st;
    QPldmaRing r;

    p->a_timers = PLDMA_QPT_MAKE(2, 7, 14, 0);      /* 2 retries */
    pair_reconnect(p, NULL);
    p->timers = true;
    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    b_va = buffer(&p->b, len, &b_pa, -1);
    rkey = key_register(&p->b, 0, b_va, len, PLDMA_KEY_ACC_WRITE);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, b_va, rkey);
    qpldma_wr(&p->b.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    st = wait_compl(p, compl, NULL);
    /* (or it was quicker than the reset) */
    g_assert_true(st == PLDMA_ST_REMOTE_TIMEOUT || st == PLDMA_ST_SUCCESS);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_KEY_RKEY), ==, 0);
    g_assert_cmpuint(qpldma_qp_state(&p->b.d, 0), ==, PLDMA_QPS_RESET);
    /* the requester's channel resets mid-message, then both go on */
    pair_reconnect(p, &r);
    rkey = key_register(&p->b, 0, b_va, len, PLDMA_KEY_ACC_WRITE);
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
    Pair *p = pair_start(false, "stall", NULL, NULL, false);
    const uint32_t len = 4 * KiB;
    uint64_t a_src, b_pa, b_va, compl, bytes;
    g_autofree uint8_t *d1 = NULL, *d2 = NULL;
    uint32_t rkey;
    QPldmaRing r;

    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    b_va = buffer(&p->b, 2 * len, &b_pa, -1);
    rkey = key_register(&p->b, 0, b_va, 2 * len, PLDMA_KEY_ACC_WRITE);
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
    Pair *p = pair_start(true, "report", NULL, ",rnr-resume=on", false);
    uint64_t a_src, x_pa, x_va, y_pa, y_va, compl, bytes;
    g_autofree uint8_t *d1 = NULL, *d2 = NULL;
    uint32_t kx, ky, i;
    QPldmaRing r;

    ring_init(&p->a, &r);
    a_src = alloc_pa(&p->a, len);
    d1 = qpldma_mem_random(p->a.qts, a_src, len);
    x_va = buffer(&p->b, len, &x_pa, hole);
    y_va = buffer(&p->b, len, &y_pa, -1);
    kx = key_register(&p->b, 0, x_va, len, PLDMA_KEY_ACC_WRITE);
    ky = key_register(&p->b, 1, y_va, len, PLDMA_KEY_ACC_WRITE);
    compl = post(&p->a, &r, PLDMA_OP_RDMA_WRITE, len, a_src, x_va, kx);
    pop_remote_fault(p, kx, x_va + hole * PAGE, hole * PAGE, true);
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
    Pair *p = pair_start(false, "stall", ",mtu=4096",
                         ",mtu=4096,retransmit-timeout=100000", false);
    uint64_t b_src, a_pa, a_va, compl, bytes;
    g_autofree uint8_t *data = NULL;
    struct sigaction sa = { 0 }, old_sa;
    uint32_t key, tx, st;
    int i;
    QPldmaRing r;

    p->path_mtu = PLDMA_MTU_4096;
    pair_reconnect(p, NULL);
    ring_init(&p->b, &r);
    b_src = alloc_pa(&p->b, len);
    data = qpldma_mem_random(p->b.qts, b_src, len);
    a_va = buffer(&p->a, len, &a_pa, -1);
    key = key_register(&p->a, 0, a_va, len, PLDMA_KEY_ACC_WRITE);
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

/* ---- three nodes on a switch: VDE's vde_switch, -netdev vde ---- */

/*
 * Wait for node @w's completion at @compl, running the three nodes' clocks:
 * a vde_switch drops frames when a port's socket is full, which the
 * retransmit timers repair
 */
static void nodes_step(void *opaque)
{
    Node *n = opaque;
    int j;

    g_usleep(200);
    for (j = 0; j < 3; j++) {
        qtest_clock_step(n[j].qts, STEP_NS);
    }
}

static uint32_t node_wait(Node *n, int w, uint64_t compl)
{
    return qpldma_wait_compl(&n[w].d, compl, nodes_step, n, WAIT_STEPS, NULL);
}

static void test_three_nodes_vde(void)
{
    g_autofree char *dir = g_dir_make_tmp("pldma-vde-XXXXXX", NULL);
    g_autofree char *sw = g_strdup_printf("%s/switch", dir);
    g_autofree char *pidf = g_strdup_printf("%s/pid", dir);
    g_autofree char *cmd = NULL, *pid = NULL, *rm = NULL;
    const uint32_t len = 256 * KiB + 44;
    uint64_t src, dst, pa2, va2, pa3, va3, compl;
    g_autofree uint8_t *data = NULL;
    uint32_t k2, k3, i;
    Node n[3] = { 0 };
    QPldmaRing r12, r13, r32;
    /* QPs: node 1's 0 to node 2's 0, 1's 1 to 3's 1, 3's 0 to 2's 1 */
    QPldmaQPEnd e[6] = {
        { .d = &n[0].d, .qp = 0, .sq = 0 }, { .d = &n[1].d, .qp = 0, .sq = 0 },
        { .d = &n[0].d, .qp = 1, .sq = 1 }, { .d = &n[2].d, .qp = 1, .sq = 1 },
        { .d = &n[2].d, .qp = 0, .sq = 0 }, { .d = &n[1].d, .qp = 1, .sq = 1 },
    };
    int status;

    if (!g_find_program_in_path("vde_switch")) {
        g_test_skip("vde_switch (Debian's vde2) is not installed");
        return;
    }
    cmd = g_strdup_printf("vde_switch -s %s -d -p %s", sw, pidf);
    g_assert_true(g_spawn_command_line_sync(cmd, NULL, NULL, &status, NULL));
    g_assert_cmpint(status, ==, 0);
    for (i = 0; i < 3; i++) {
        g_autofree char *dev = g_strdup_printf("node-id=%u", i + 1);
        g_autofree char *net = g_strdup_printf("vde,id=n0,sock=%s", sw);

        node_start(&n[i], dev, net, false, "stall", NULL);
    }
    for (i = 0; i < 6; i += 2) {
        qpldma_qp_connect_pair(&e[i], &e[i + 1], PLDMA_MTU_1024);
    }
    ring_init_ch(&n[0], &r12, 0);
    ring_init_ch(&n[0], &r13, 1);
    ring_init_ch(&n[2], &r32, 0);
    src = alloc_pa(&n[0], len);
    data = qpldma_mem_random(n[0].qts, src, len);
    va2 = buffer(&n[1], len, &pa2, -1);
    va3 = buffer(&n[2], len, &pa3, -1);
    k2 = key_register(&n[1], 0, va2, len, PLDMA_KEY_ACC_WRITE |
                      PLDMA_KEY_ACC_READ);
    k3 = key_register(&n[2], 0, va3, len, PLDMA_KEY_ACC_WRITE);

    /* node 1 writes to nodes 2 and 3, node 3 reads node 2 back */
    compl = post(&n[0], &r12, PLDMA_OP_RDMA_WRITE, len, src, va2, k2);
    g_assert_cmpuint(node_wait(n, 0, compl), ==, PLDMA_ST_SUCCESS);
    compl = post(&n[0], &r13, PLDMA_OP_RDMA_WRITE, len, src, va3, k3);
    g_assert_cmpuint(node_wait(n, 0, compl), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(n[1].qts, pa2, data, len);
    qpldma_mem_check(n[2].qts, pa3, data, len);
    dst = alloc_pa(&n[2], len);
    compl = post(&n[2], &r32, PLDMA_OP_RDMA_READ, len, dst, va2, k2);
    g_assert_cmpuint(node_wait(n, 2, compl), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(n[2].qts, dst, data, len);
    /* beyond the range of the key: refused */
    compl = post(&n[2], &r32, PLDMA_OP_RDMA_WRITE, len, dst, va2 + 4096,
                 k2);
    g_assert_cmpuint(node_wait(n, 2, compl), ==, PLDMA_ST_REMOTE_ACCESS);

    for (i = 0; i < 3; i++) {
        qtest_quit(n[i].qts);
    }
    g_assert_true(g_file_get_contents(pidf, &pid, NULL, NULL));
    kill(atoi(pid), SIGTERM);
    rm = g_strdup_printf("rm -rf %s", dir);
    g_assert_true(g_spawn_command_line_sync(rm, NULL, NULL, &status, NULL));
}

/* ---- a hostile peer: the test itself on the other end of the link ---- */

/* Our QPN and MAC, as the peer of node 1's QP 0 */
#define PEER_QPN        0x5a0103
#define PEER_MAC        "\x52\x54\x00\x00\x00\x02"

typedef struct Peer {
    int fd;
    QPldma *d;              /* node 1's */
    QPldmaLink link;
    uint32_t timers;        /* its QP's, 0: the default */
    uint32_t qpn;           /* its QP 0 */
    uint8_t mac[6];         /* its MAC */
} Peer;

/*
 * A RoCEv2 frame from us to node 1's QP 0: BTH opcode/psn/ackreq, RETH if
 * @reth, AETH if @aeth_syn >= 0, payload; returns its length
 */
static uint32_t roce_frame(Peer *pe, uint8_t *f, uint8_t op, uint32_t psn,
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
static int peer_answer(Peer *pe, uint32_t *psn)
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
static void peer_open(Node *n, Peer *pe, const char *extra, uint32_t timers)
{
    g_autofree char *net = NULL;

    qpldma_link_init(&pe->link, "pldma-peer-XXXXXX");
    net = qpldma_link_netdev(&pe->link, true);
    memset(n, 0, sizeof(*n));
    n->qts = qtest_initf("-M virt -m 512M -nodefaults "
                         "-device pldma,id=dma0,netdev=n0,node-id=1%s "
                         "-netdev %s", extra ? extra : "", net);
    qpldma_init(&n->d, n->qts, PLDMA_BASE);
    n->next = ALLOC_BASE + 0x200000;
    pe->d = &n->d;
    pe->timers = timers;
    qpldma_mac(pe->d, pe->mac);
    pe->fd = qpldma_link_connect(&pe->link);
    qpldma_link_wait(n->qts);
    peer_connect(pe);
}

static void peer_close(Node *n, Peer *pe)
{
    close(pe->fd);
    qtest_quit(n->qts);
    qpldma_link_cleanup(&pe->link);
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

    peer_open(&n, &pe, NULL, 0);
    qtest_memset(n.qts, pa, 0, 2 * PAGE);
    rkey = key_register(&n, 1, pa, PAGE, PLDMA_KEY_ACC_WRITE |
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
    len = roce_frame(&pe, f, 0x0a, 0, true, pa, rkey, 256, -1, pl, 256);
    f[len - 1] ^= 1;
    qpldma_stream_send(pe.fd, f, len);
    /* every header length shortened in turn */
    len = roce_frame(&pe, f, 0x0a, 0, true, pa, rkey, 256, -1, pl, 256);
    for (i = 14 + 20 + 8; i < len; i += 7) {
        qpldma_stream_send(pe.fd, f, i);
    }
    /* a length field larger than the frame */
    len = roce_frame(&pe, f, 0x0a, 0, true, pa, rkey, 256, -1, pl, 256);
    stw_be_p(f + 14 + 2, 9000);
    qpldma_stream_send(pe.fd, f, len);
    /* opcodes that are not RC's (UD SEND, CNP) */
    len = roce_frame(&pe, f, 0x64, 0, false, 0, 0, 0, -1, pl, 64);
    qpldma_stream_send(pe.fd, f, len);
    len = roce_frame(&pe, f, 0x81, 0, false, 0, 0, 0, -1, pl, 16);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn), ==, -1);
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED) - drops, >=, 20);

    /* a valid WRITE Only lands, and is ACKed */
    len = roce_frame(&pe, f, 0x0a, 0, true, pa + 16, rkey, 256, -1, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn), ==, 0x1f);
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
        len = roce_frame(&pe, f, bad[i].op, e, bad[i].op != 0x07, va,
                         rkey ^ bad[i].rkey_xor, bad[i].dmalen, -1, pl,
                         bad[i].plen);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpint(peer_answer(&pe, &psn), ==, bad[i].nak);
        g_assert_cmpuint(psn, ==, e);
        g_assert_cmpuint(qpldma_qp_state(pe.d, 0), ==, PLDMA_QPS_ERR);
        /* the good WRITE at the same PSN: the QP takes nothing now */
        drops = pcnt(&pe, PLDMA_NCNT_QP_DROPPED);
        len = roce_frame(&pe, f, 0x0a, e, true, pa + 512, rkey, 256, -1, pl,
                         256);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpint(peer_answer(&pe, &psn), ==, -1);
        g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_QP_DROPPED), ==, drops + 1);
        peer_connect(&pe);
    }
    g_assert_true(qpldma_mem_zero(n.qts, pa + 512, 256));

    /* a segment far ahead is dropped without an answer */
    drops = pcnt(&pe, PLDMA_NCNT_RX_DROPPED);
    len = roce_frame(&pe, f, 0x08, 0x700000, false, 0, 0, 0, -1, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn), ==, -1);
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED), ==, drops + 1);

    /* a flood of ACKs and NAKs for a send queue that waits for nothing */
    drops = pcnt(&pe, PLDMA_NCNT_RX_DROPPED);
    for (i = 0; i < 2000; i++) {
        len = roce_frame(&pe, f, 0x11, i, false, 0, 0, 0,
                         (i & 1) ? 0x60 : 0x20 | (i & 0x1f), pl, 0);
        qpldma_stream_send(pe.fd, f, len);
    }
    len = roce_frame(&pe, f, 0x0c, 0, true, pa + 16, rkey, 256, -1, pl, 0);
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

        ring_init(&n, &r);
        qpldma_desc_rdma(d, PLDMA_OP_RDMA_WRITE, 256, src, 0x1000, 0x105,
                         cpl);
        qtest_memwrite(n.qts, r.pa, d, sizeof(d));
        qpldma_ch_wr(&n.d, 0, PLDMA_CH_RING_TAIL, 1);
        len = qpldma_stream_recv(pe.fd, f, sizeof(f));
        g_assert_cmpuint(f[14 + 28], ==, 0x0a);        /* WRITE Only */
        g_assert_cmphex(ldl_be_p(f + 14 + 28 + 4) & 0xffffff, ==, PEER_QPN);
        mpsn = ldl_be_p(f + 14 + 28 + 8) & 0xffffff;
        g_assert_cmpuint(mpsn, ==, 0);
        len = roce_frame(&pe, f, 0x11, (mpsn - 1) & 0xffffff, false,
                         0, 0, 0, 0x62, pl, 0);
        qpldma_stream_send(pe.fd, f, len);
        len = roce_frame(&pe, f, 0x11, (mpsn - 1) & 0xffffff, false,
                         0, 0, 0, 0x2e, pl, 0);
        qpldma_stream_send(pe.fd, f, len);
        len = roce_frame(&pe, f, 0x11, mpsn, false, 0, 0, 0, 0x1f, pl, 0);
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

            l1 = roce_frame(&pe, two + 4, 0x11, (mpsn + 2) & 0xffffff,
                            false, 0, 0, 0, 0x60, pl, 0);
            stl_be_p(two, l1);
            l2 = roce_frame(&pe, two + 8 + l1, 0x11, (mpsn + 9) & 0xffffff,
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
        len = roce_frame(&pe, f, 0x11, (mpsn + 15) & 0xffffff, false,
                         0, 0, 0, 0x1f, pl, 0);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpuint(peer_wait_compl(&n, cpl), ==, PLDMA_ST_SUCCESS);
        g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_TIMEOUTS), ==, 0);
    }

    /* nothing was written outside the window */
    g_assert_true(qpldma_mem_zero(n.qts, pa, 16));
    g_assert_true(qpldma_mem_zero(n.qts, pa + 16 + 256, PAGE - 16 - 256));
    g_assert_true(qpldma_mem_zero(n.qts, big, PAGE));
    peer_close(&n, &pe);
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

    peer_open(&n, &pe, NULL, 0);
    qtest_memset(n.qts, pa, 0, PAGE);
    rkey = key_register(&n, 1, pa, PAGE, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i ^ 0x5a;
    }
    drops = pcnt(&pe, PLDMA_NCNT_RX_DROPPED);
    memset(f, 0xa5, sizeof(f));
    qpldma_stream_send(pe.fd, f, 0);
    qpldma_stream_send(pe.fd, f, 1);
    len = roce_frame(&pe, f, 0x0a, 0, true, pa, rkey, 256, -1, pl, 256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 0);
    qpldma_mem_check(n.qts, pa, pl, sizeof(pl));
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED) - drops, ==, 2);

    /* an empty frame after a reset (and the QP made again): it delivers */
    qpldma_wr(&n.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    peer_connect(&pe);
    qtest_memset(n.qts, pa, 0, PAGE);
    rkey = key_register(&n, 1, pa, PAGE, PLDMA_KEY_ACC_WRITE);
    qpldma_stream_send(pe.fd, f, 0);
    len = roce_frame(&pe, f, 0x0a, 0, true, pa + 512, rkey, 256, -1, pl,
                     256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 0);
    qpldma_mem_check(n.qts, pa + 512, pl, sizeof(pl));
    g_assert_cmpuint(pcnt(&pe, PLDMA_NCNT_RX_DROPPED), ==, 1);
    peer_close(&n, &pe);
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

    peer_open(&n, &pe, NULL, 0);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 5 + 3;
    }
    for (c = 0; c < ARRAY_SIZE(msg); c++) {
        g_test_message("%s inside a WRITE", msg[c].what);
        qtest_memset(n.qts, pa, 0, 4 * PAGE);
        rkey = key_register(&n, 1, pa, 4 * PAGE,
                            PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
        /* a WRITE of three segments: its First */
        len = roce_frame(&pe, f, 0x06, 0, true, pa, rkey, 3 * 1024, -1, pl,
                         1024);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpint(peer_answer(&pe, &psn), ==, 0x1f);
        g_assert_cmpuint(psn, ==, 0);
        /* a new message at PSN 1, where the Middle belongs */
        len = roce_frame(&pe, f, msg[c].op, 1, true, pa + 2 * PAGE, rkey,
                         msg[c].dmalen, -1, pl, msg[c].plen);
        qpldma_stream_send(pe.fd, f, len);
        g_assert_cmpint(peer_answer(&pe, &psn), ==, 0x61);
        g_assert_cmpuint(psn, ==, 1);
        g_assert_cmpuint(qpldma_qp_state(pe.d, 0), ==, PLDMA_QPS_ERR);
        g_assert_true(qpldma_mem_zero(n.qts, pa + 2 * PAGE, 1024));
        qpldma_mem_check(n.qts, pa, pl, sizeof(pl));
        peer_connect(&pe);
    }

    /* the First of the next message, once the WRITE is whole: taken */
    len = roce_frame(&pe, f, 0x06, 0, true, pa, rkey, 2 * 1024, -1, pl,
                     1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn), ==, 0x1f);
    len = roce_frame(&pe, f, 0x08, 1, false, 0, 0, 0, -1, pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 1);
    len = roce_frame(&pe, f, 0x0a, 2, true, pa + 2 * PAGE, rkey, 256, -1, pl,
                     256);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn), ==, 0x1f);
    g_assert_cmpuint(psn, ==, 2);
    qpldma_mem_check(n.qts, pa + 2 * PAGE, pl, 256);
    peer_close(&n, &pe);
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

    peer_open(&n, &pe, NULL, PLDMA_QPT_MAKE(1, 7, 14, 0));  /* 1 retry */
    ring_init(&n, &r);
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
    len = roce_frame(&pe, f, 0x11, (mpsn + 3) & 0xffffff, false, 0, 0, 0,
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
    peer_close(&n, &pe);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (strcmp(qtest_get_arch(), "aarch64")) {
        return g_test_run();
    }
    qtest_add_func("/pldma-net/write-read-sizes", test_write_read_sizes);
    qtest_add_func("/pldma-net/responder-fault-report-resume",
                   test_fault_report_resume);
    qtest_add_func("/pldma-net/responder-fault-report-timer",
                   test_fault_report_timer);
    qtest_add_func("/pldma-net/responder-fault-stall", test_fault_stall);
    qtest_add_func("/pldma-net/responder-park", test_responder_park);
    qtest_add_func("/pldma-net/fault-both-sides", test_fault_both_sides);
    qtest_add_func("/pldma-net/responder-fault-unstalled",
                   test_fault_unstalled);
    qtest_add_func("/pldma-net/responder-fault-own-key", test_fault_own_key);
    qtest_add_func("/pldma-net/bad-keys", test_bad_keys);
    qtest_add_func("/pldma-net/lossy", test_lossy);
    qtest_add_func("/pldma-net/peer-killed", test_peer_killed);
    qtest_add_func("/pldma-net/read-big-lossy", test_read_big_lossy);
    qtest_add_func("/pldma-net/reset-midway", test_reset_midway);
    qtest_add_func("/pldma-net/write-after-reset", test_write_after_reset);
    qtest_add_func("/pldma-net/write-after-cancel", test_write_after_cancel);
    qtest_add_func("/pldma-net/stopped-peer", test_stopped_peer);
    qtest_add_func("/pldma-net/hostile-peer", test_hostile_peer);
    qtest_add_func("/pldma-net/empty-frame", test_empty_frame);
    qtest_add_func("/pldma-net/timeout-acked", test_timeout_acked);
    qtest_add_func("/pldma-net/write-in-write", test_write_in_write);
    qtest_add_func("/pldma-net/three-nodes-vde", test_three_nodes_vde);
    return g_test_run();
}
