/*
 * PLDMA responder faults over the link: report mode (resolved or on
 * the timer), stall mode, parked requests, faults on both sides
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
 * A responder fault on page @hole of a 64 KiB WRITE and READ: NAK, the
 * fault resolved on B, the requester resends from the faulting segment
 * and not from the start (the resent bytes are counted).
 */
static void responder_fault(const char *mode, bool resume)
{
    const uint32_t len = 64 * KiB, hole = 9;
    bool report = !strcmp(mode, "report");
    Pair *p = pair_start_net(true, mode, ",retransmit-timeout=2000000",
                             resume ? ",rnr-resume=on" : ",rnr-resume=off",
                             report && resume);
    uint64_t a_src, a_dst, b_pa, b_va, compl, bytes, retx;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, op;
    QPldmaRing r;

    p->timers = !resume;    /* the RNR timer */
    ring_init(&p->a, &r, 0);
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
        rkey = key_register(&p->b, op, node_pd(&p->b), b_va, len,
                            PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
        compl = post(&p->a, &r, op, len,
                     op == PLDMA_OP_RDMA_WRITE ? a_src : a_dst, b_va, rkey);
        if (report) {
            pop_remote_fault(p, rkey, hole_va, hole * PAGE,
                             op == PLDMA_OP_RDMA_WRITE, true);
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
    Pair *p = pair_start_net_a(true, "report", true, "report",
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
    rkey = key_register(&p->b, 0, node_pd(&p->b), b_va, len,
                        PLDMA_KEY_ACC_WRITE);

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
    Pair *p = pair_start_net(true, "report", ",retransmit-timeout=2000000",
                             b_extra, false);
    uint64_t a_src, b_pa, b_va, compl, bytes = 0;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, head, faults = 0, retx, st, i;
    QPldmaRing r;

    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    /* B's window: no page mapped */
    b_pa = alloc_pa(&p->b, len);
    b_va = VA_BASE + (b_pa - ALLOC_BASE);
    rkey = key_register(&p->b, 0, node_pd(&p->b), b_va, len,
                        PLDMA_KEY_ACC_WRITE);
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
    Pair *p = pair_start_net(true, "stall", ",retransmit-timeout=2000000",
                             NULL, false);
    uint64_t a_src, b_pa, b_va, compl;
    g_autofree uint8_t *data = NULL;
    QPldmaRing r;
    uint32_t rkey;

    p->timers = true;
    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    qsmmu_writel(&p->b.s, SMMU_CR0, SMMU_CR0_CMDQEN | SMMU_CR0_SMMUEN);
    b_va = buffer(&p->b, len, &b_pa, hole);
    rkey = key_register(&p->b, 0, node_pd(&p->b), b_va, len,
                        PLDMA_KEY_ACC_WRITE);

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
    pop_remote_fault(p, rkey, b_va + hole * PAGE, hole * PAGE, true, true);
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
    Pair *p = pair_start_net(true, "report", ",retransmit-timeout=2000000",
                             ",rnr-resume=on", false);
    uint64_t a_src, b_pa0, b_va0, b_pa1, b_va1, compl;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey0, rkey1, rnr0, i;
    QPldmaRing r;

    /* A gives a message up after 3 RNR NAKs without progress */
    p->a_timers = PLDMA_QPT_MAKE(7, 3, 14, 0);
    pair_reconnect(p, NULL);
    p->timers = true;
    ring_init(&p->a, &r, 0);
    a_src = alloc_pa(&p->a, len);
    data = qpldma_mem_random(p->a.qts, a_src, len);
    b_va0 = buffer(&p->b, len, &b_pa0, 0);
    b_va1 = buffer(&p->b, len, &b_pa1, -1);
    rkey0 = key_register(&p->b, 0, node_pd(&p->b), b_va0, len,
                         PLDMA_KEY_ACC_WRITE);
    rkey1 = key_register(&p->b, 1, node_pd(&p->b), b_va1, len,
                         PLDMA_KEY_ACC_WRITE);

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

void pldma_net_fault_register(void)
{
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
}
