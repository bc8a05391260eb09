/*
 * The PLDMA engine's timing model, to the nanosecond; and a benchmark
 * (-m perf)
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
 * Benchmark, not a timed test: a 64 MiB COPY through the SMMU with warm
 * translations against a host memcpy of the same size, in the same run.
 * Run with: QTEST_QEMU_BINARY=./qemu-system-aarch64 \
 *   tests/qtest/pldma-test -m perf -p /pldma/bench
 * PLDMA_BENCH_PAGES=4k uses 4 KiB pages instead of 2 MiB blocks.
 */
static void map_block(Node *t, uint32_t pasid, uint64_t va, uint64_t pa)
{
    uint64_t l1e = t->pasid_root[pasid] + ((va >> 30) & 511) * 8;
    uint64_t l2;

    if (!(qtest_readq(t->qts, l1e) & 1)) {
        qtest_writeq(t->qts, l1e, alloc_pa(t, PAGE) | 3);
    }
    l2 = qtest_readq(t->qts, l1e) & 0xfffffffff000ULL;
    /* block descriptor: AF, inner shareable, RW at EL0, valid */
    qtest_writeq(t->qts, l2 + ((va >> 21) & 511) * 8,
                 pa | (1ULL << 10) | (3ULL << 8) | (1ULL << 6) | 1);
}

static double now_s(void)
{
    return g_get_monotonic_time() / 1e6;
}

static void test_bench(void)
{
    const uint64_t len = 64 * MiB;
    const char *pages = g_getenv("PLDMA_BENCH_PAGES");
    bool small = pages && !strcmp(pages, "4k");
    /* e.g. PLDMA_BENCH_DEVICE=",chunk-size=1048576" */
    Node *t = engine_start("stall", true, g_getenv("PLDMA_BENCH_DEVICE"));
    uint64_t vs = 0x80000000, vd = 0xc0000000, vc = 0x30000000;
    uint64_t src, dst, cpa, off;
    double best_dma = 1e9, best_cpu = 1e9, t0;
    g_autofree uint8_t *a = g_malloc(len);
    g_autofree uint8_t *b = g_malloc(len);
    Ring r;
    int i;

    node_smmu_pasid(t, 1);
    engine_ring_init(t, &r, 0, 1, 0x40000000, 16);
    t->next = QEMU_ALIGN_UP(t->next, 2 * MiB);
    src = alloc_pa(t, len);
    dst = alloc_pa(t, len);
    cpa = buf(t, 1, vc, PAGE, true);
    for (off = 0; off < len; off += small ? PAGE : 2 * MiB) {
        if (small) {
            map_page(t, 1, vs + off, src + off);
            map_page(t, 1, vd + off, dst + off);
        } else {
            map_block(t, 1, vs + off, src + off);
            map_block(t, 1, vd + off, dst + off);
        }
    }
    qtest_memset(t->qts, src, 0x5a, len);

    memset(a, 0x5a, len);
    memset(b, 0, len);
    /*
     * Device and host copies alternate, so that both sides see the same
     * machine load; the best of each is kept (the first device run warms
     * the IOTLB and is not counted).
     */
    for (i = 0; i < 9; i++) {
        qtest_writel(t->qts, cpa, 0);
        desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 0);
        t0 = now_s();
        ring_kick(t, &r);
        g_assert_cmpuint(engine_wait_compl(t, cpa, NULL, NULL), ==,
                         PLDMA_ST_SUCCESS);
        if (i) {
            best_dma = MIN(best_dma, now_s() - t0);
        }
        t0 = now_s();
        memcpy(b, a, len);
        best_cpu = MIN(best_cpu, now_s() - t0);
        g_assert_cmpuint(b[len - 1 - i], ==, 0x5a);
    }
    g_assert_cmpuint(qtest_readb(t->qts, dst + len - 1), ==, 0x5a);

    g_test_message("pldma bench (%s pages): 64 MiB COPY %.2f ms "
                   "(%.0f MB/s), host memcpy %.2f ms (%.0f MB/s), "
                   "ratio %.2f", small ? "4 KiB" : "2 MiB",
                   best_dma * 1e3, len / best_dma / 1e6, best_cpu * 1e3,
                   len / best_cpu / 1e6, best_cpu / best_dma);
    printf("PLDMA_BENCH pages=%s dma_ms=%.2f memcpy_ms=%.2f ratio=%.2f\n",
           small ? "4k" : "2m", best_dma * 1e3, best_cpu * 1e3,
           best_cpu / best_dma);
    engine_stop(t);
}

/*
 * The timing model (timing=on, hw/misc/pldma/timing.c) is exact: a
 * prefaulted 4 MiB COPY has not completed one nanosecond before its
 * modeled time, and has completed, data and record, at that time.
 *   modeled = desc-latency-ns + bytes * 1000 / dma-bandwidth (floor)
 *           + translations * xlat-latency-ns + misses * walk-latency-ns
 * Translations before the record is written: the descriptor's ring page,
 * then one per page of source and destination per chunk.
 */
typedef struct TimingCase {
    const char *name;
    bool smmu;
    bool blocks;            /* 2 MiB block mappings rather than 4 KiB pages */
    const char *props;
    uint64_t expect_ns;
} TimingCase;

static const TimingCase timing_cases[] = {
    {
        /* no IOMMU: no translation; 4 MiB at 16 GB/s is 262144 ns */
        "phys", false, false,
        ",timing=on,dma-bandwidth=16000,desc-latency-ns=500",
        500 + 262144,
    }, {
        /*
         * 4 KiB pages, each translation when the data gets to it
         * (xlat-ahead=0): 1 + 2 * 1024 translations, all of new pages
         */
        "4k", true, false,
        ",timing=on,dma-bandwidth=32000,desc-latency-ns=1000,"
        "xlat-latency-ns=10,walk-latency-ns=300,xlat-ahead=0",
        1000 + 131072 + (1 + 2048) * (10 + 300),
    }, {
        /*
         * The same with 8 translations in flight ahead of the data: the
         * ring page's, then the first page's two (out together when the
         * descriptor is fetched); 8 translations are 4 pages of data (512
         * ns), longer than one translation, so the data never waits again
         */
        "4k-ahead", true, false,
        ",timing=on,dma-bandwidth=32000,desc-latency-ns=1000,"
        "xlat-latency-ns=10,walk-latency-ns=300,xlat-ahead=8",
        1000 + 131072 + 2 * (10 + 300),
    }, {
        /*
         * Translation-bound: 2 in flight (one page), each 1000 ns, a page
         * of data 128 ns.  A page's two go out when the data got to the
         * page before, and come back 1000 ns later: per page 1000 ns, and
         * the last page's data (128 ns)
         */
        "4k-ahead2", true, false,
        ",timing=on,dma-bandwidth=32000,desc-latency-ns=1000,"
        "xlat-latency-ns=0,walk-latency-ns=1000,xlat-ahead=2",
        1000 + 1000 + 1024 * 1000 + 128,
    }, {
        /*
         * 2 MiB blocks, 1 MiB chunks, default bandwidth (25 GB/s: 4 MiB
         * is 167772.16 ns) and latencies: 1 + 2 * 4 translations, of which
         * the ring page and the first of each block (2 + 2) miss
         */
        "2m", true, true,
        ",timing=on,chunk-size=1048576,xlat-ahead=0",
        1000 + 167772 + (1 + 8) * 10 + 5 * 500,
    },
};

static void test_timing(const void *opaque)
{
    const TimingCase *c = opaque;
    const uint64_t len = 4 * MiB;
    Node *t = engine_start("stall", c->smmu, c->props);
    uint64_t vs = 0x80000000, vd = 0xc0000000, vc = 0x30000000;
    uint64_t src, dst, cpa, off, bytes;
    g_autofree uint8_t *data = NULL;
    int64_t t0, now;
    Ring r;

    if (c->smmu) {
        node_smmu_pasid(t, 1);
    }
    engine_ring_init(t, &r, 0, 1, 0x40000000, 16);
    t->next = QEMU_ALIGN_UP(t->next, 2 * MiB);
    src = alloc_pa(t, len);
    dst = alloc_pa(t, len);
    cpa = buf(t, 1, vc, PAGE, true);
    for (off = 0; c->smmu && off < len; off += c->blocks ? 2 * MiB : PAGE) {
        if (c->blocks) {
            map_block(t, 1, vs + off, src + off);
            map_block(t, 1, vd + off, dst + off);
        } else {
            map_page(t, 1, vs + off, src + off);
            map_page(t, 1, vd + off, dst + off);
        }
    }
    if (!c->smmu) {
        vs = src;
        vd = dst;
        vc = cpa;
    }
    fill_random(t, src, len, &data);
    qtest_irq_intercept_out_named(t->qts, "/machine/peripheral/dma0",
                                  "sysbus-irq");
    qpldma_wr(&t->d, PLDMA_IRQ_MASK, PLDMA_IRQ_CH_DONE(0));

    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 7);
    t0 = qtest_clock_step(t->qts, 1);    /* "now": a step of 0 fails */
    ring_kick(t, &r);
    now = qtest_clock_step(t->qts, c->expect_ns - 1);
    g_assert_cmpint(now - t0, ==, c->expect_ns - 1);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + PLDMA_COMPL_STATUS), ==, 0);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_COMPLETED), ==, 0);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_RUNNING);
    g_assert_false(qtest_get_irq(t->qts, 0));

    now = qtest_clock_step(t->qts, 1);
    g_assert_cmpint(now - t0, ==, c->expect_ns);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_COMPLETED), ==, 1);
    g_assert_true(qtest_get_irq(t->qts, 0));
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    wait_state(t, 0, PLDMA_STATE_IDLE);
    engine_stop(t);
}

/*
 * The fault round trip, with the model on: a COPY of 4 pages whose third
 * destination page is missing stalls exactly when the pages before it
 * have taken their time, and goes on fault-latency-ns after the
 * CMD_RESUME, at whatever time the test resolves it.  Pages cost
 * 1000 ns of data (4096 B at 4096 MB/s) and 100 ns per ATC miss, each
 * translation when the data gets to it (xlat-ahead=0).
 */
static void test_timing_stall(void)
{
    Node *t = engine_start("stall", true, ",timing=on,dma-bandwidth=4096,"
                        "desc-latency-ns=1000,xlat-latency-ns=0,"
                        "walk-latency-ns=100,fault-latency-ns=2000,"
                        "xlat-ahead=0");
    const uint32_t pasid = 5, len = 4 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, bytes;
    g_autofree uint8_t *data = NULL;
    int64_t t0, now;
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
    t0 = qtest_clock_step(t->qts, 1);
    ring_kick(t, &r);
    /*
     * ring page miss 100 + descriptor 1000; pages 0 and 1: 2 misses +
     * 1000 each; page 2's source translates (a miss), its destination
     * faults at the start of its interval
     */
    now = qtest_clock_step(t->qts, 1100 + 2 * 1200 - 1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_RUNNING);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_BYTES_LO),
                     ==, 2 * PAGE);
    now = qtest_clock_step(t->qts, 1);
    g_assert_cmpint(now - t0, ==, 3500);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_STALLED);
    stag = smmu_wait_stall(t, pasid, vd + 2 * PAGE);
    map_page(t, pasid, vd + 2 * PAGE, dst + 2 * PAGE);

    /* the guest takes its time; the resume is at t0 + 13500 */
    now = qtest_clock_step(t->qts, 10000);
    g_assert_cmpint(now - t0, ==, 13500);
    smmu_resume(t, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_RUNNING);
    /*
     * 2000 round trip; page 2 again: its source hits the ATC, its
     * destination misses: 1100; page 3: 1200.  A page is written at the
     * start of its interval, the record at the end of the last one.
     */
    now = qtest_clock_step(t->qts, 2000 + 1100 - 1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_BYTES_LO),
                     ==, 3 * PAGE);
    now = qtest_clock_step(t->qts, 1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_BYTES_LO),
                     ==, 4 * PAGE);
    now = qtest_clock_step(t->qts, 1200 - 1);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + PLDMA_COMPL_STATUS), ==, 0);
    now = qtest_clock_step(t->qts, 1);
    g_assert_cmpint(now - t0, ==, 13500 + 4300);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(engine_wait_compl(t, cpa, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     1);
    engine_stop(t);
}

/*
 * The model's state migrates: a COPY migrated half way through its
 * modeled time completes on the target at the same virtual time as it
 * would have on the source (the qtest clock of a new QEMU starts again
 * from 0, below the channel's time, so the deadline is still ahead).
 * 30000 MB/s leaves a remainder (4 MiB take 139810.13 ns) to carry.
 * Through the SMMU ("xlat"), 4 KiB pages, the translations in flight
 * ahead of the data migrate too: translation-bound, as copy-4k-ahead2
 * (2 in flight, 1000 ns each, 128 ns of data a page), a target that lost
 * them would send its next two at once and finish early.
 */
static void test_timing_migrate(const void *opaque)
{
    bool smmu = opaque != NULL;
    const uint64_t len = 4 * MiB;
    const uint64_t expect = smmu ? 1000 + 700 + 1024 * 1000 + 128
                                 : 700 + 139810;
    Node *t = engine_start("stall", smmu, smmu ?
                           ",timing=on,dma-bandwidth=32000,"
                           "desc-latency-ns=700,xlat-latency-ns=0,"
                           "walk-latency-ns=1000,xlat-ahead=2" :
                           ",timing=on,dma-bandwidth=30000,"
                           "desc-latency-ns=700,chunk-size=65536");
    uint64_t src, dst, cpa, vs = 0x80000000, vd = 0xc0000000;
    uint64_t vc = 0x30000000, off;
    g_autofree uint8_t *data = NULL;
    int64_t t0, now;
    Ring r;

    if (smmu) {
        node_smmu_pasid(t, 1);
    }
    engine_ring_init(t, &r, 0, smmu, 0x40000000, 16);
    src = alloc_pa(t, len);
    dst = alloc_pa(t, len);
    cpa = smmu ? buf(t, 1, vc, PAGE, true) : alloc_pa(t, PAGE);
    for (off = 0; smmu && off < len; off += PAGE) {
        map_page(t, 1, vs + off, src + off);
        map_page(t, 1, vd + off, dst + off);
    }
    if (!smmu) {
        vs = src;
        vd = dst;
        vc = cpa;
    }
    fill_random(t, src, len, &data);
    desc_put(t, &r, PLDMA_OP_COPY, len, vs, vd, 0, vc, 7);
    t0 = qtest_clock_step(t->qts, 1);
    ring_kick(t, &r);
    now = qtest_clock_step(t->qts, expect / 2);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + PLDMA_COMPL_STATUS), ==, 0);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_RUNNING);

    g_assert_true(engine_migrate(t));
    now = qtest_clock_step(t->qts, 1);
    g_assert_cmpint(now, <, t0 + expect / 2);
    now = qtest_clock_step(t->qts, t0 + expect - 1 - now);
    g_assert_cmpint(now, ==, t0 + expect - 1);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + PLDMA_COMPL_STATUS), ==, 0);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_RUNNING);
    qtest_clock_step(t->qts, 1);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_SUCCESS);
    check_mem(t, dst, data, len);
    engine_stop(t);
}

void pldma_engine_timing_register(void)
{
    size_t i;

    if (g_test_perf()) {
        qtest_add_func("/pldma/bench", test_bench);
    }
    for (i = 0; i < ARRAY_SIZE(timing_cases); i++) {
        g_autofree char *path = g_strdup_printf("/pldma/timing/copy-%s",
                                                timing_cases[i].name);

        qtest_add_data_func(path, &timing_cases[i], test_timing);
    }
    qtest_add_func("/pldma/timing/stall-retry", test_timing_stall);
    qtest_add_data_func("/pldma/timing/migrate", NULL, test_timing_migrate);
    qtest_add_data_func("/pldma/timing/migrate-xlat", "xlat",
                        test_timing_migrate);
}
