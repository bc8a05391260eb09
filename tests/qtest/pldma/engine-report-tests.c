/*
 * The PLDMA engine in report mode: the fault queue, restart and
 * cancel, batches, the queue resized across a migration
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

/* Report mode: a fault record, RESTART, then CANCEL; full queue */
static void test_report(void)
{
    Node *t = engine_start("report", true, ",chunk-size=4096");
    const uint32_t pasid = 9, len = 6 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, fq, bytes, fva;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE];
    Ring r;

    node_smmu_pasid(t, pasid);
    fq = alloc_pa(t, PAGE);         /* S1DSS = bypass: IOVA == PA */
    qpldma_wr(&t->d, PLDMA_FQ_BASE_LO, (uint32_t)fq);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_HI, fq >> 32);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 2);      /* room for a single record */
    qpldma_wr(&t->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    qpldma_wr(&t->d, PLDMA_IRQ_MASK, 0xffffffff);
    g_assert_true(qpldma_rd(&t->d, PLDMA_CAP) & PLDMA_CAP_FAULT_REPORT);

    engine_ring_init(t, &r, 2, pasid, 0x40000000, 4);
    src = buf(t, pasid, vs, len, true);
    dst = buf(t, pasid, vd, len, true);
    cpa = buf(t, pasid, vc, PAGE, true);
    fill_random(t, src, len, &data);
    unmap_page(t, pasid, vs + 3 * PAGE);
    unmap_page(t, pasid, vd + 4 * PAGE);

    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    ring_kick(t, &r);
    wait_state(t, 2, PLDMA_STATE_FAULTED);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_FAULTED_CHANNELS), ==, 4);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_TAIL), ==, 1);
    g_assert_true(qpldma_rd(&t->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_FAULT);
    qtest_memread(t->qts, fq, rec, sizeof(rec));
    g_assert_cmpuint(lduw_le_p(rec + PLDMA_FR_CHANNEL), ==, 2);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, vs + 3 * PAGE);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DONE), ==, 3 * PAGE);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DESC), ==, 0);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_LEN), ==, len);
    g_assert_cmphex((uint32_t)ldl_le_p(rec + PLDMA_FR_PASID), ==,
                    pasid | PLDMA_CHB_PASID_EN);
    g_assert_cmpuint(lduw_le_p(rec + PLDMA_FR_FLAGS) & PLDMA_FR_F_WRITE, ==,
                     0);

    /* RESTART without fixing the fault: the queue is full -> overflow */
    qpldma_ch_wr(&t->d, 2, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    wait_state(t, 2, PLDMA_STATE_FAULTED);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_OVERFLOWS), ==, 1);
    g_assert_true(qpldma_rd(&t->d, PLDMA_FQ_STATUS) & PLDMA_FQ_STATUS_OVERFLOW);
    g_assert_true(qpldma_rd(&t->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_FQ_OVERFLOW);
    g_assert_cmphex(qpldma_ch_rd(&t->d, 2, PLDMA_CH_FAULT_VA_LO), ==,
                    vs + 3 * PAGE);

    /* consume, fix, restart: the next fault is on the destination */
    qpldma_wr(&t->d, PLDMA_FQ_HEAD, 1);
    qpldma_wr(&t->d, PLDMA_FQ_STATUS, PLDMA_FQ_STATUS_OVERFLOW);
    qpldma_wr(&t->d, PLDMA_IRQ_STATUS, 0xffffffff);
    map_page(t, pasid, vs + 3 * PAGE, src + 3 * PAGE);
    qpldma_ch_wr(&t->d, 2, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    wait_state(t, 2, PLDMA_STATE_FAULTED);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_TAIL), ==, 0);
    qtest_memread(t->qts, fq + PLDMA_FR_SIZE, rec, sizeof(rec));
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, vd + 4 * PAGE);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DONE), ==, 4 * PAGE);
    g_assert_true(lduw_le_p(rec + PLDMA_FR_FLAGS) & PLDMA_FR_F_WRITE);
    qpldma_wr(&t->d, PLDMA_FQ_HEAD, 0);

    map_page(t, pasid, vd + 4 * PAGE, dst + 4 * PAGE);
    qpldma_ch_wr(&t->d, 2, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 2,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_FAULTS), ==,
                     3);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 2,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_RESTARTS),
                     ==, 3);

    /* CANCEL: error completion with the progress, channel goes on */
    qtest_writel(t->qts, cpa, 0);
    unmap_page(t, pasid, vd + PAGE);
    desc_put(t, &r, PLDMA_OP_FILL, 2 * PAGE, 0, vd, 7, vc, 0);
    desc_put(t, &r, PLDMA_OP_NOP, 0, 0, 0, 0, vc + 32, 0);
    ring_kick(t, &r);
    wait_state(t, 2, PLDMA_STATE_FAULTED);
    qpldma_ch_wr(&t->d, 2, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, &fva), ==,
                     PLDMA_ST_CANCELLED);
    g_assert_cmpuint(bytes, ==, PAGE);
    g_assert_cmphex(fva, ==, vd + PAGE);
    g_assert_cmpuint(engine_wait_compl(t, cpa + 32, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    wait_state(t, 2, PLDMA_STATE_IDLE);
    engine_stop(t);
}

/* Set byte @off of the descriptor desc_put() wrote last */
/* Wait until the device has posted fault records up to @tail */
static void wait_fq_tail(Node *t, uint32_t tail)
{
    int i;

    for (i = 0; i < POLL_MAX && qpldma_rd(&t->d, PLDMA_FQ_TAIL) != tail; i++) {
        continue;
    }
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_TAIL), ==, tail);
}

/*
 * A legal sequence must leave a state the device can migrate: records
 * posted at indices 0..4 of an 8-record queue, queue disabled, FQ_SIZE
 * written 2.  The new size starts an empty queue (HEAD = TAIL = 0) rather
 * than keeping a TAIL of 5 that post_load refuses.
 */
static void test_report_fq_resize_migrate(void)
{
    Node *t = engine_start("report", true, ",chunk-size=4096");
    const uint32_t pasid = 5, len = 4 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, fq, bytes;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE];
    Ring r;
    int i;

    node_smmu_pasid(t, pasid);
    fq = alloc_pa(t, PAGE);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_LO, (uint32_t)fq);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_HI, fq >> 32);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 8);
    qpldma_wr(&t->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);

    engine_ring_init(t, &r, 0, pasid, 0x40000000, 4);
    src = buf(t, pasid, vs, len, true);
    dst = buf(t, pasid, vd, len, true);
    cpa = buf(t, pasid, vc, PAGE, true);
    fill_random(t, src, len, &data);
    unmap_page(t, pasid, vs + 2 * PAGE);
    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    ring_kick(t, &r);

    /* five records, one per RESTART of the unresolved fault */
    wait_fq_tail(t, 1);
    for (i = 2; i <= 5; i++) {
        wait_state(t, 0, PLDMA_STATE_FAULTED);
        qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
        wait_fq_tail(t, i);
    }
    wait_state(t, 0, PLDMA_STATE_FAULTED);

    qpldma_wr(&t->d, PLDMA_FQ_CTRL, 0);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 2);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_SIZE), ==, 2);

    g_assert_true(engine_migrate(t));
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_SIZE), ==, 2);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_HEAD), ==, 0);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_TAIL), ==, 0);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_FAULTED);

    /* the resized queue works on the target: one record, then full */
    qpldma_wr(&t->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    qtest_memset(t->qts, fq, 0, PAGE);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    wait_fq_tail(t, 1);
    qtest_memread(t->qts, fq, rec, sizeof(rec));
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, vs + 2 * PAGE);
    wait_state(t, 0, PLDMA_STATE_FAULTED);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    wait_state(t, 0, PLDMA_STATE_FAULTED);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_OVERFLOWS), ==, 1);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_TAIL), ==, 1);

    map_page(t, pasid, vs + 2 * PAGE, src + 2 * PAGE);
    qpldma_wr(&t->d, PLDMA_FQ_HEAD, 1);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    engine_stop(t);
}

static void desc_poke(Node *t, Ring *r, uint32_t off, uint8_t val)
{
    uint32_t last = (r->tail + r->size - 1) % r->size;

    qtest_writeb(t->qts, r->pa + last * PLDMA_DESC_SIZE + off, val);
}

static uint64_t c_rd64(Node *t, int ch, uint32_t lo)
{
    return qpldma_ch_rd(&t->d, ch, lo) |
           (uint64_t)qpldma_ch_rd(&t->d, ch, lo + 4) << 32;
}

/*
 * Batched faults: a COPY whose descriptor asks for a 16-page window faults
 * once, with every missing page of both buffers in the window listed in the
 * channel's AHEAD_* registers; mapping them all and one RESTART completes
 * it.  Without a window nothing is listed; a window beyond 64 pages or a
 * reserved byte set is BAD_DESC.
 */
static void test_report_batch(void)
{
    Node *t = engine_start("report", true, ",chunk-size=4096");
    const uint32_t pasid = 5, len = 20 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, fq, bytes;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE];
    static const int src_holes[] = { 2, 5, 19 }, dst_holes[] = { 2, 3, 17 };
    Ring r;
    int i;

    node_smmu_pasid(t, pasid);
    fq = alloc_pa(t, PAGE);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_LO, (uint32_t)fq);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_HI, fq >> 32);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 8);
    qpldma_wr(&t->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    qpldma_wr(&t->d, PLDMA_IRQ_MASK, 0xffffffff);

    engine_ring_init(t, &r, 1, pasid, 0x40000000, 8);
    src = buf(t, pasid, vs, len, true);
    dst = buf(t, pasid, vd, len, true);
    cpa = buf(t, pasid, vc, PAGE, true);
    fill_random(t, src, len, &data);
    for (i = 0; i < ARRAY_SIZE(src_holes); i++) {
        unmap_page(t, pasid, vs + src_holes[i] * PAGE);
        unmap_page(t, pasid, vd + dst_holes[i] * PAGE);
    }

    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
    desc_poke(t, &r, PLDMA_DESC_AHEAD, 16);
    ring_kick(t, &r);
    wait_state(t, 1, PLDMA_STATE_FAULTED);
    qtest_memread(t->qts, fq, rec, sizeof(rec));
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA), ==, vs + 2 * PAGE);
    g_assert_true(lduw_le_p(rec + PLDMA_FR_FLAGS) & PLDMA_FR_F_AHEAD);
    g_assert_true(qpldma_ch_rd(&t->d, 1,
                               PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_AHEAD);
    /* from the current page, 16 pages: 19 is beyond the window */
    g_assert_cmphex(c_rd64(t, 1, PLDMA_CH_AHEAD_SRC_LO), ==, vs + 2 * PAGE);
    g_assert_cmphex(c_rd64(t, 1, PLDMA_CH_AHEAD_SRC_MAP_LO), ==,
                    (1 << 0) | (1 << 3));
    g_assert_cmphex(c_rd64(t, 1, PLDMA_CH_AHEAD_DST_LO), ==, vd + 2 * PAGE);
    g_assert_cmphex(c_rd64(t, 1, PLDMA_CH_AHEAD_DST_MAP_LO), ==,
                    (1 << 0) | (1 << 1) | (1 << 15));
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 1,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_AHEAD), ==,
                     5);

    /* resolve the batch, RESTART once: the next fault is page 19 */
    for (i = 0; i < ARRAY_SIZE(src_holes); i++) {
        if (src_holes[i] < 18) {
            map_page(t, pasid, vs + src_holes[i] * PAGE,
                     src + src_holes[i] * PAGE);
        }
        map_page(t, pasid, vd + dst_holes[i] * PAGE,
                 dst + dst_holes[i] * PAGE);
    }
    qpldma_wr(&t->d, PLDMA_FQ_HEAD, 1);
    qpldma_ch_wr(&t->d, 1, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    wait_state(t, 1, PLDMA_STATE_FAULTED);
    g_assert_cmphex(c_rd64(t, 1, PLDMA_CH_FAULT_VA_LO), ==, vs + 19 * PAGE);
    g_assert_cmphex(c_rd64(t, 1, PLDMA_CH_AHEAD_SRC_MAP_LO), ==, 1);
    g_assert_cmphex(c_rd64(t, 1, PLDMA_CH_AHEAD_DST_MAP_LO), ==, 0);
    map_page(t, pasid, vs + 19 * PAGE, src + 19 * PAGE);
    qpldma_wr(&t->d, PLDMA_FQ_HEAD, 2);
    qpldma_ch_wr(&t->d, 1, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 1,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_FAULTS), ==,
                     2);

    /* no window: one page at a time, nothing listed */
    qtest_writel(t->qts, cpa, 0);
    unmap_page(t, pasid, vd + 6 * PAGE);
    unmap_page(t, pasid, vd + 7 * PAGE);
    desc_put(t, &r, PLDMA_OP_FILL, len, 0, vd, 0x5a, vc, 0);
    ring_kick(t, &r);
    wait_state(t, 1, PLDMA_STATE_FAULTED);
    g_assert_false(qpldma_ch_rd(&t->d, 1,
                                PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_AHEAD);
    g_assert_cmphex(c_rd64(t, 1, PLDMA_CH_AHEAD_DST_MAP_LO), ==, 0);
    qpldma_ch_wr(&t->d, 1, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(engine_wait_compl(t, cpa, NULL, NULL), ==,
                     PLDMA_ST_CANCELLED);

    /* a window beyond 64 pages, a reserved byte: BAD_DESC, nothing done */
    qtest_writel(t->qts, cpa, 0);
    desc_put(t, &r, PLDMA_OP_FILL, PAGE, 0, vd, 0x5a, vc, 0);
    desc_poke(t, &r, PLDMA_DESC_AHEAD, PLDMA_AHEAD_MAX + 1);
    desc_put(t, &r, PLDMA_OP_FILL, PAGE, 0, vd, 0x5a, vc + 32, 0);
    desc_poke(t, &r, PLDMA_DESC_RSVD0 + 2, 1);
    ring_kick(t, &r);
    g_assert_cmpuint(engine_wait_compl(t, cpa, NULL, NULL), ==,
                     PLDMA_ST_BAD_DESC);
    g_assert_cmpuint(engine_wait_compl(t, cpa + 32, NULL, NULL), ==,
                     PLDMA_ST_BAD_DESC);
    wait_state(t, 1, PLDMA_STATE_IDLE);
    engine_stop(t);
}

void pldma_engine_report_register(void)
{
    qtest_add_func("/pldma/smmu/report-restart-cancel", test_report);
    qtest_add_func("/pldma/smmu/report-batch", test_report_batch);
    qtest_add_func("/pldma/smmu/report-fq-resize-migrate",
                   test_report_fq_resize_migrate);
}
