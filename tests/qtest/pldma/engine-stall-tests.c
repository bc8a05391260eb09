/*
 * The PLDMA engine behind the SMMUv3 in stall mode: retries, aborts,
 * stalls outstanding on several channels
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

/* Stall mode: a missing destination page stalls, RETRY completes it */
static void test_stall_retry(void)
{
    Node *t = engine_start("stall", true, ",chunk-size=4096");
    const uint32_t pasid = 5, len = 5 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, bytes;
    g_autofree uint8_t *data = NULL;
    uint16_t stag;
    Ring r;

    node_smmu_pasid(t, pasid);
    engine_ring_init(t, &r, 0, pasid, 0x40000000, 4);
    src = buf(t, pasid, vs, len, true);
    dst = buf(t, pasid, vd, len, true);
    cpa = buf(t, pasid, vc, PAGE, true);
    fill_random(t, src, len, &data);
    unmap_page(t, pasid, vd + 2 * PAGE);     /* third destination page */

    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    ring_kick(t, &r);
    wait_state(t, 0, PLDMA_STATE_STALLED);
    stag = smmu_wait_stall(t, pasid, vd + 2 * PAGE);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_FAULT_DONE), ==, 2 * PAGE);
    g_assert_cmphex(qpldma_ch_rd(&t->d, 0, PLDMA_CH_FAULT_VA_LO), ==,
                    vd + 2 * PAGE);
    g_assert_true(qpldma_ch_rd(&t->d, 0,
                               PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_WRITE);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_STALLED_CHANNELS), ==, 1);
    g_assert_cmpuint(qtest_readl(t->qts, cpa), ==, 0);

    map_page(t, pasid, vd + 2 * PAGE, dst + 2 * PAGE);
    smmu_resume(t, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_RESTARTS),
                     ==, 1);
    engine_stop(t);
}

/*
 * max-outstanding: with the first destination page missing, the channel
 * stalls there and issues the accesses ahead (source and destination,
 * page by page): every missing page is stalled at once, each with its own
 * STAG, before the OS resolves any.  Resolved in reverse order, the data
 * still lands in order and completely; an ABORT of an access ahead ends
 * the descriptor with ABORTED and the next one runs.
 */
static void outstanding(bool abort_one)
{
    Node *t = engine_start("stall", true, ",max-outstanding=8");
    const uint32_t pasid = 9, npages = 12, len = npages * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, bytes, ev[4];
    g_autofree uint8_t *data = NULL;
    uint16_t stag[16];
    uint64_t va[16];
    int n = 0, i, j;
    Ring r;

    node_smmu_pasid(t, pasid);
    engine_ring_init(t, &r, 0, pasid, 0x40000000, 4);
    src = buf(t, pasid, vs, len, true);
    dst = buf(t, pasid, vd, len, true);
    cpa = buf(t, pasid, vc, 2 * PAGE, true);
    fill_random(t, src, len, &data);
    for (i = 0; i < (int)npages; i++) {
        unmap_page(t, pasid, vd + i * PAGE);    /* every destination page */
    }
    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    desc_put(t, &r, PLDMA_OP_FILL, 64, 0, vc + PAGE + 64, 0x11, vc + PAGE, 0);
    ring_kick(t, &r);
    wait_state(t, 0, PLDMA_STATE_STALLED);

    /* the parked access and 7 ahead: 8 stalls before any resume */
    for (i = 0; i < POLL_MAX && n < 16; i++) {
        if (qsmmu_pop_event(&t->s, ev) && QSMMU_EVT_STALL(ev)) {
            stag[n] = QSMMU_EVT_STAG(ev);
            va[n++] = QSMMU_EVT_ADDR(ev) & ~(PAGE - 1);
        }
        if (n == 8) {
            break;
        }
    }
    g_assert_cmpint(n, ==, 8);
    g_assert_false(qsmmu_pop_event(&t->s, ev));
    for (i = 0; i < n; i++) {
        g_assert_cmphex(va[i], ==, vd + i * PAGE);   /* distinct, in order */
    }
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     8);
    g_assert_cmpuint(qtest_readl(t->qts, cpa), ==, 0);

    if (abort_one) {
        /* the fourth page cannot be made present: ABORT its access */
        for (i = 0; i < n; i++) {
            if (i != 3) {
                map_page(t, pasid, va[i], dst + i * PAGE);
            }
        }
        smmu_resume(t, stag[3], QSMMU_RESUME_ABORT);
        for (i = n - 1; i >= 0; i--) {
            if (i != 3) {
                smmu_resume(t, stag[i], QSMMU_RESUME_RETRY);
            }
        }
        g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, NULL), ==,
                         PLDMA_ST_ABORTED);
        g_assert_cmpuint(bytes, <=, 3 * PAGE);
        /* the next descriptor runs */
        g_assert_cmpuint(engine_wait_compl(t, cpa + PAGE, NULL, NULL), ==,
                         PLDMA_ST_SUCCESS);
        engine_stop(t);
        return;
    }

    /* resolve in reverse order: the OS answers as it likes */
    for (i = n - 1; i >= 0; i--) {
        map_page(t, pasid, va[i], dst + i * PAGE);
        smmu_resume(t, stag[i], QSMMU_RESUME_RETRY);
    }
    /* the rest (pages 8..11) stall as a second batch */
    for (j = 0; j < 3 && qtest_readl(t->qts, cpa) == 0; j++) {
        wait_state(t, 0, PLDMA_STATE_STALLED);
        for (n = 0, i = 0; i < POLL_MAX && n < 4; i++) {
            if (qsmmu_pop_event(&t->s, ev) && QSMMU_EVT_STALL(ev)) {
                stag[n] = QSMMU_EVT_STAG(ev);
                va[n++] = QSMMU_EVT_ADDR(ev) & ~(PAGE - 1);
            }
        }
        g_assert_cmpint(n, ==, 4);
        for (i = 0; i < n; i++) {
            map_page(t, pasid, va[i], dst + (va[i] - vd));
            smmu_resume(t, stag[i], QSMMU_RESUME_RETRY);
        }
        break;
    }
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     npages);
    g_assert_cmpuint(engine_wait_compl(t, cpa + PAGE, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    engine_stop(t);
}

static void test_stall_outstanding(void)
{
    outstanding(false);
}

static void test_stall_outstanding_abort(void)
{
    outstanding(true);
}

/* Stall mode: faults on the descriptor fetch and the completion record */
static void test_stall_fetch_compl(void)
{
    Node *t = engine_start("stall", true, NULL);
    const uint32_t pasid = 7;
    uint64_t vr = 0x40000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t dst, cpa;
    uint16_t stag;
    Ring r;

    node_smmu_pasid(t, pasid);
    engine_ring_init(t, &r, 3, pasid, vr, 4);
    dst = buf(t, pasid, vd, PAGE, true);
    cpa = buf(t, pasid, vc, PAGE, true);
    unmap_page(t, pasid, vr);
    unmap_page(t, pasid, vc);

    desc_put(t, &r, PLDMA_OP_FILL, 100, 0, vd, 0x4242424242424242ULL, vc, 9);
    ring_kick(t, &r);
    wait_state(t, 3, PLDMA_STATE_STALLED);
    g_assert_true(qpldma_ch_rd(&t->d, 3,
                               PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_DESC);
    stag = smmu_wait_stall(t, pasid, vr);
    map_page(t, pasid, vr, r.pa);
    smmu_resume(t, stag, QSMMU_RESUME_RETRY);

    wait_state(t, 3, PLDMA_STATE_STALLED);
    g_assert_true(qpldma_ch_rd(&t->d, 3,
                               PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_COMPL);
    g_assert_cmpuint(qtest_readb(t->qts, dst + 99), ==, 0x42);
    stag = smmu_wait_stall(t, pasid, vc);
    map_page(t, pasid, vc, cpa);
    smmu_resume(t, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(engine_wait_compl(t, cpa, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmphex(qtest_readq(t->qts, cpa + PLDMA_COMPL_COOKIE), ==, 9);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 3,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     2);
    wait_state(t, 3, PLDMA_STATE_IDLE);
    engine_stop(t);
}

/* Stall mode: ABORT completes with an error and the exact progress */
static void test_stall_abort(void)
{
    Node *t = engine_start("stall", true, NULL);
    const uint32_t pasid = 6, len = 4 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t cpa, bytes, fva;
    uint16_t stag;
    Ring r;

    node_smmu_pasid(t, pasid);
    engine_ring_init(t, &r, 0, pasid, 0x40000000, 4);
    buf(t, pasid, vs, len, true);
    buf(t, pasid, vd, len, true);
    cpa = buf(t, pasid, vc, PAGE, true);
    unmap_page(t, pasid, vs + PAGE);        /* second source page */

    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    desc_put(t, &r, PLDMA_OP_FILL, 64, 0, vd, 1, vc + 32, 0);
    ring_kick(t, &r);
    wait_state(t, 0, PLDMA_STATE_STALLED);
    stag = smmu_wait_stall(t, pasid, vs + PAGE);
    smmu_resume(t, stag, QSMMU_RESUME_ABORT);
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, &fva), ==,
                     PLDMA_ST_ABORTED);
    g_assert_cmpuint(bytes, ==, PAGE);
    g_assert_cmphex(fva, ==, vs + PAGE);
    /* the channel goes on with the next descriptor */
    g_assert_cmpuint(engine_wait_compl(t, cpa + 32, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_CH_CNT(0) + PLDMA_CNT_ABORTS), ==,
                     1);
    /* a RESUME for a stale STAG is harmless */
    smmu_resume(t, stag, QSMMU_RESUME_RETRY);
    wait_state(t, 0, PLDMA_STATE_IDLE);

    /* channel reset while stalled: the late RESUME is ignored */
    qtest_writel(t->qts, cpa, 0);
    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    ring_kick(t, &r);
    wait_state(t, 0, PLDMA_STATE_STALLED);
    stag = smmu_wait_stall(t, pasid, vs + PAGE);
    qpldma_wr(&t->d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_STALLED_CHANNELS), ==, 0);
    smmu_resume(t, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    g_assert_cmpuint(qtest_readl(t->qts, cpa), ==, 0);
    engine_ring_init(t, &r, 0, pasid, 0x40000000, 4);
    desc_put(t, &r, PLDMA_OP_NOP, 0, 0, 0, 0, vc, 0);
    ring_kick(t, &r);
    g_assert_cmpuint(engine_wait_compl(t, cpa, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    engine_stop(t);
}

/* Two channels, two processes: one stalls, the other completes */
static void test_stall_two_channels(void)
{
    Node *t = engine_start("stall", true, ",chunk-size=4096");
    const uint32_t len = 8 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t s1, d1, c1, s2, d2, c2;
    g_autofree uint8_t *data1 = NULL;
    g_autofree uint8_t *data2 = NULL;
    uint16_t stag;
    Ring r1, r2;

    node_smmu_pasid(t, 1);
    node_smmu_pasid(t, 2);
    engine_ring_init(t, &r1, 0, 1, 0x40000000, 4);
    engine_ring_init(t, &r2, 1, 2, 0x40000000, 4);
    s1 = buf(t, 1, vs, len, true);
    d1 = buf(t, 1, vd, len, true);
    c1 = buf(t, 1, vc, PAGE, true);
    s2 = buf(t, 2, vs, len, true);
    d2 = buf(t, 2, vd, len, true);
    c2 = buf(t, 2, vc, PAGE, true);
    fill_random(t, s1, len, &data1);
    fill_random(t, s2, len, &data2);
    unmap_page(t, 1, vd + 5 * PAGE);

    desc_put(t, &r1, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    desc_put(t, &r2, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    ring_kick(t, &r1);
    ring_kick(t, &r2);
    g_assert_cmpuint(engine_wait_compl(t, c2, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    check_mem(t, d2, data2, len);
    wait_state(t, 0, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qtest_readl(t->qts, c1), ==, 0);

    stag = smmu_wait_stall(t, 1, vd + 5 * PAGE);
    map_page(t, 1, vd + 5 * PAGE, d1 + 5 * PAGE);
    smmu_resume(t, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(engine_wait_compl(t, c1, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    check_mem(t, d1, data1, len);
    engine_stop(t);
}

void pldma_engine_stall_register(void)
{
    qtest_add_func("/pldma/smmu/stall-retry", test_stall_retry);
    qtest_add_func("/pldma/smmu/stall-fetch-compl", test_stall_fetch_compl);
    qtest_add_func("/pldma/smmu/stall-abort", test_stall_abort);
    qtest_add_func("/pldma/smmu/stall-two-channels", test_stall_two_channels);
    qtest_add_func("/pldma/smmu/stall-outstanding", test_stall_outstanding);
    qtest_add_func("/pldma/smmu/stall-outstanding-abort",
                   test_stall_outstanding_abort);
}
