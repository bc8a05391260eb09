/*
 * The PLDMA engine on one node: registers, COPY and FILL with and
 * without PASIDs, bad inputs, a reset in flight
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

static void test_registers(void)
{
    Node *t = engine_start("stall", false,
                        ",num-channels=3,max-transfer=65536,pasid-bits=8");
    uint32_t cap = qpldma_rd(&t->d, PLDMA_CAP);

    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_ID), ==, PLDMA_ID_VALUE);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_VERSION), ==, PLDMA_VERSION_VALUE);
    g_assert_cmpuint(PLDMA_CAP_NUM_CH(cap), ==, 3);
    g_assert_true(cap & PLDMA_CAP_FAULT_STALL);
    g_assert_false(cap & PLDMA_CAP_FAULT_REPORT);
    g_assert_false(cap & PLDMA_CAP_PASID);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_MAX_XFER), ==, 65536);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_STREAM_ID), ==, SID);

    /* read-only registers stay put */
    qpldma_wr(&t->d, PLDMA_ID, 0);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_ID), ==, PLDMA_ID_VALUE);

    /* binding: PASID only while disabled, and never from the user page */
    qpldma_wr(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_PASID,
              PLDMA_CHB_PASID_EN | 5);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_PASID), ==,
                    PLDMA_CHB_PASID_EN | 5);
    qpldma_wr(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_PASID,
              PLDMA_CHB_PASID_EN | 999);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_PASID), ==,
                    PLDMA_CHB_PASID_EN | 5);            /* > pasid-bits */
    qpldma_wr(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    qpldma_wr(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_PASID,
              PLDMA_CHB_PASID_EN | 6);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_PASID), ==,
                    PLDMA_CHB_PASID_EN | 5);
    qpldma_ch_wr(&t->d, 1, PLDMA_CH_PASID, 7);
    g_assert_cmphex(qpldma_ch_rd(&t->d, 1, PLDMA_CH_PASID), ==,
                    PLDMA_CHB_PASID_EN | 5);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 1, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_IDLE);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_STATE), ==,
                     PLDMA_STATE_IDLE);
    qpldma_wr(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_OWNER, 0x1234);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_OWNER), ==,
                    0x1234);

    /* ring configuration, 64-bit access to a LO/HI pair */
    qtest_writeq(t->qts, PLDMA_BASE + PLDMA_CH_PAGE_OFFSET(1) +
                 PLDMA_CH_RING_BASE_LO, 0x123456789ac0ULL);
    g_assert_cmphex(qpldma_ch_rd(&t->d, 1, PLDMA_CH_RING_BASE_HI), ==, 0x1234);
    g_assert_cmphex(qpldma_ch_rd(&t->d, 1, PLDMA_CH_RING_BASE_LO), ==,
                    0x56789ac0);

    /* IRQ mask, W1C status, fault queue size validation */
    qpldma_wr(&t->d, PLDMA_IRQ_MASK, 0xffffffff);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_IRQ_MASK), ==, 0xffffffff);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 3);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_SIZE), ==, 0);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 64);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_SIZE), ==, 64);

    /* global reset */
    qpldma_wr(&t->d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 1, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_CH_BIND(1) + PLDMA_CHB_PASID), ==,
                    0);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_SIZE), ==, 0);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_IRQ_MASK), ==, 0);

    /* undefined offsets read as zero */
    g_assert_cmphex(qpldma_rd(&t->d, 0xffc), ==, 0);
    g_assert_cmphex(qpldma_ch_rd(&t->d, 2, 0xffc), ==, 0);
    engine_stop(t);
}

/* COPY and FILL, with or without the SMMU */
static void do_copy_fill(bool smmu)
{
    Node *t = engine_start("stall", smmu, NULL);
    const uint32_t pasid = 3, len = 3 * PAGE + 123;
    uint64_t va_src = 0x10000000, va_dst = 0x20000100, va_c = 0x30000000;
    uint64_t src, dst, cpa, fdst, bytes, fva;
    g_autofree uint8_t *data = NULL;
    g_autofree uint8_t *pat = g_malloc(1000);
    Ring r;
    int i;

    if (smmu) {
        node_smmu_pasid(t, pasid);
    }
    engine_ring_init(t, &r, 0, pasid, 0x40000000, 8);
    src = buf(t, pasid, va_src, len, true);
    dst = buf(t, pasid, va_dst & ~(PAGE - 1), len + PAGE, true) + 0x100;
    cpa = buf(t, pasid, va_c, PAGE, true);
    fdst = buf(t, pasid, 0x50000000, PAGE, true);
    if (!smmu) {
        va_src = src;
        va_dst = dst;
        va_c = cpa;
    }
    fill_random(t, src, len, &data);
    qtest_memset(t->qts, fdst, 0xee, PAGE);
    qtest_irq_intercept_out_named(t->qts, "/machine/peripheral/dma0",
                                  "sysbus-irq");
    qpldma_wr(&t->d, PLDMA_IRQ_MASK, PLDMA_IRQ_CH_DONE(0));
    g_assert_false(qtest_get_irq(t->qts, 0));

    desc_put(t, &r, PLDMA_OP_COPY, len, va_src, va_dst, 0, va_c, 0xc0ffee);
    desc_put(t, &r, PLDMA_OP_FILL, 1000, 0, (smmu ? 0x50000000 : fdst) + 3,
             0x0807060504030201ULL, va_c + 32, 2);
    desc_put(t, &r, PLDMA_OP_NOP, 0, 0, 0, 0, va_c + 64, 3);
    ring_kick(t, &r);

    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, &fva), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    g_assert_cmpuint(fva, ==, 0);
    g_assert_cmphex(qtest_readq(t->qts, cpa + PLDMA_COMPL_COOKIE), ==,
                    0xc0ffee);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(engine_wait_compl(t, cpa + 32, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, 1000);
    for (i = 0; i < 1000; i++) {
        pat[i] = 1 + i % 8;
    }
    check_mem(t, fdst + 3, pat, 1000);
    g_assert_cmpuint(qtest_readb(t->qts, fdst + 2), ==, 0xee);
    g_assert_cmpuint(qtest_readb(t->qts, fdst + 1003), ==, 0xee);
    g_assert_cmpuint(engine_wait_compl(t, cpa + 64, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);

    wait_state(t, 0, PLDMA_STATE_IDLE);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_RING_HEAD), ==, 3);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_COMPLETED), ==, 3);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_BYTES_LO),
                     ==, len + 1000);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_CH_CNT(0) + PLDMA_CNT_DESCS), ==,
                     3);
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_IRQ_STATUS) &
                    PLDMA_IRQ_CH_DONE(0), ==,
                    PLDMA_IRQ_CH_DONE(0));
    g_assert_true(qtest_get_irq(t->qts, 0));
    qpldma_wr(&t->d, PLDMA_IRQ_STATUS, PLDMA_IRQ_CH_DONE(0));
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_IRQ_STATUS), ==, 0);
    g_assert_false(qtest_get_irq(t->qts, 0));
    {
        QDict *rsp = qtest_qmp(t->qts, "{'execute': 'qom-get', 'arguments':"
                               " {'path': 'dma0', 'property': 'channels'}}");
        QDict *ch0 = qobject_to(QDict,
                                qlist_peek(qdict_get_qlist(rsp, "return")));

        g_assert_cmpint(qdict_get_int(ch0, "bytes"), ==, len + 1000);
        g_assert_cmpint(qdict_get_int(ch0, "descs"), ==, 3);
        g_assert_cmpstr(qdict_get_str(ch0, "state"), ==, "IDLE");
        qobject_unref(rsp);
    }
    engine_stop(t);
}

static void test_copy_phys(void)
{
    do_copy_fill(false);
}

static void test_copy_pasid(void)
{
    do_copy_fill(true);
}

/*
 * Bad descriptors complete with an error; bad rings put the channel in
 * ERROR; nothing crashes or hangs.
 */
static void test_bad_inputs(void)
{
    Node *t = engine_start("stall", false, ",max-transfer=65536");
    uint64_t cpa = buf(t, 0, 0, PAGE, true);
    uint64_t a = buf(t, 0, 0, 4 * PAGE, true);
    Ring r;
    uint8_t d[PLDMA_DESC_SIZE] = { 0 };
    int i;

    /* doorbell on a disabled channel */
    qpldma_ch_wr(&t->d, 1, PLDMA_CH_RING_TAIL, 1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 1, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 1, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_DISABLED);

    engine_ring_init(t, &r, 0, 0, 0, 16);
    /* RESTART with nothing faulted */
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_BAD_CMD);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_IDLE);

    desc_put(t, &r, 0x7f, 16, a, a + PAGE, 0, cpa, 0);              /* op */
    desc_put(t, &r, PLDMA_OP_COPY, 0, a, a + PAGE, 0, cpa + 32, 0);  /* len */
    desc_put(t, &r, PLDMA_OP_COPY, 65537, a, a + 2 * PAGE, 0, cpa + 64, 0);
    desc_put(t, &r, PLDMA_OP_COPY, 2 * PAGE, a, a + PAGE, 0, cpa + 96, 0);
    desc_put(t, &r, PLDMA_OP_RDMA_WRITE, 16, a, a + PAGE, 0, cpa + 128, 0);
    /* destination is the device's own registers, then a ROM-less hole */
    desc_put(t, &r, PLDMA_OP_COPY, 16, a, PLDMA_BASE, 0, cpa + 160, 0);
    desc_put(t, &r, PLDMA_OP_FILL, 16, 0, PLDMA_BASE + 0x1010, 0, cpa + 192,
             0);
    desc_put(t, &r, PLDMA_OP_COPY, 16, a, -8ULL, 0, cpa + 224, 0);   /* wrap */
    desc_put(t, &r, PLDMA_OP_FILL, 16, 0, a, 0, cpa + 256 + 4, 0); /* align */
    ring_kick(t, &r);
    wait_state(t, 0, PLDMA_STATE_IDLE);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_COMPLETED), ==, 9);
    g_assert_cmpuint(qtest_readl(t->qts, cpa), ==, PLDMA_ST_BAD_OPCODE);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + 32), ==, PLDMA_ST_BAD_LENGTH);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + 64), ==, PLDMA_ST_BAD_LENGTH);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + 96), ==, PLDMA_ST_OVERLAP);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + 128), ==, PLDMA_ST_BAD_OPCODE);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + 160), ==, PLDMA_ST_DMA_ERROR);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + 192), ==, PLDMA_ST_DMA_ERROR);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + 224), ==, PLDMA_ST_BAD_LENGTH);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_LAST_STATUS), ==,
                     PLDMA_ST_BAD_DESC);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_CH_CNT(0) + PLDMA_CNT_ERRORS), ==,
                     9);
    /* the device registers were not touched by the DMA */
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_ID), ==, PLDMA_ID_VALUE);

    /* reserved bits */
    d[PLDMA_DESC_OPCODE] = PLDMA_OP_NOP;
    d[PLDMA_DESC_FLAGS] = 0x80;
    stq_le_p(d + PLDMA_DESC_COMPL, cpa + 288);
    qtest_memwrite(t->qts, r.pa + r.tail * PLDMA_DESC_SIZE, d, sizeof(d));
    r.tail++;
    ring_kick(t, &r);
    g_assert_cmpuint(engine_wait_compl(t, cpa + 288, NULL, NULL), ==,
                     PLDMA_ST_BAD_DESC);

    /* tail out of range -> ERROR; CANCEL recovers */
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_TAIL, 16);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_ERROR);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_RING_INDEX);
    g_assert_true(qpldma_rd(&t->d, PLDMA_ERROR_CHANNELS) & 1);
    g_assert_true(qpldma_rd(&t->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_CH_ERROR);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_IDLE);

    /* ring pointing at the device's own registers */
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_BASE_LO, (uint32_t)PLDMA_BASE);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_BASE_HI, 0);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_SIZE, 4);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_TAIL, 3);
    wait_state(t, 0, PLDMA_STATE_ERROR);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_DESC_FETCH);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);

    /* ring in a hole (not RAM): the fetch fails for good */
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_BASE_LO, 0x70000000);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_SIZE, 4);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_TAIL, 1);
    wait_state(t, 0, PLDMA_STATE_ERROR);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);

    /* invalid ring size / misaligned base */
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_SIZE, 3);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_TAIL, 1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_RING_CONFIG);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_SIZE, 1 << 20);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_TAIL, 1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_ERROR);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_BASE_LO, (uint32_t)r.pa + 8);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_SIZE, 4);
    qpldma_ch_wr(&t->d, 0, PLDMA_CH_RING_TAIL, 1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_RING_CONFIG);

    /* fault queue: bad head, bad size, enable without size */
    qpldma_wr(&t->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_CTRL), ==, 0);
    qpldma_wr(&t->d, PLDMA_FQ_HEAD, 77);
    g_assert_cmpuint(qpldma_rd(&t->d, PLDMA_FQ_HEAD), ==, 0);

    /* hammer undefined registers of every page */
    for (i = 0; i < 0x1000; i += 0x44) {
        qpldma_wr(&t->d, 0x200 + (i & 0x5ff), 0xffffffff);
        qpldma_ch_wr(&t->d, 3, i, 0xffffffff);
    }
    g_assert_cmphex(qpldma_rd(&t->d, PLDMA_ID), ==, PLDMA_ID_VALUE);
    engine_stop(t);
}

/* Wait until a channel is RUNNING and has moved some bytes */
static void wait_progress(Node *t, int ch)
{
    uint32_t start = qpldma_rd(&t->d, PLDMA_CH_CNT(ch) + PLDMA_CNT_BYTES_LO);
    int i;

    for (i = 0; i < POLL_MAX; i++) {
        if (qpldma_rd(&t->d, PLDMA_CH_CNT(ch) + PLDMA_CNT_BYTES_LO) != start) {
            break;
        }
    }
    g_assert_cmpuint(qpldma_ch_rd(&t->d, ch, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_RUNNING);
}

/* Channel and global reset in the middle of a large transfer */
static void test_reset_inflight(void)
{
    Node *t = engine_start("stall", false, ",chunk-size=4096");
    const uint32_t len = 64 * MiB;
    uint64_t src = buf(t, 0, 0, len, true);
    uint64_t dst = buf(t, 0, 0, len, true);
    uint64_t cpa = buf(t, 0, 0, PAGE, true);
    Ring r;

    engine_ring_init(t, &r, 0, 0, 0, 4);
    desc_put(t, &r, PLDMA_OP_COPY, len, src, dst, 0, cpa, 0);
    ring_kick(t, &r);
    wait_progress(t, 0);
    qpldma_wr(&t->d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_RING_HEAD), ==, 0);
    g_assert_cmpuint(qtest_readl(t->qts, cpa), ==, 0);

    /* the channel is usable again */
    engine_ring_init(t, &r, 0, 0, 0, 4);
    desc_put(t, &r, PLDMA_OP_FILL, 4096, 0, dst, 0x55, cpa, 0);
    ring_kick(t, &r);
    g_assert_cmpuint(engine_wait_compl(t, cpa, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);

    /* disable and global reset mid-transfer */
    qtest_writel(t->qts, cpa, 0);
    desc_put(t, &r, PLDMA_OP_COPY, len, src, dst, 0, cpa, 0);
    ring_kick(t, &r);
    wait_progress(t, 0);
    qpldma_wr(&t->d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, 0);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    qpldma_wr(&t->d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    qpldma_wr(&t->d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    qtest_system_reset(t->qts);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    engine_stop(t);
}

void pldma_engine_copy_register(void)
{
    qtest_add_func("/pldma/registers", test_registers);
    qtest_add_func("/pldma/copy-phys", test_copy_phys);
    qtest_add_func("/pldma/bad-inputs", test_bad_inputs);
    qtest_add_func("/pldma/reset-inflight", test_reset_inflight);
    qtest_add_func("/pldma/smmu/copy-pasid", test_copy_pasid);
}
