/*
 * QTest for the PLDMA virtual-address DMA engine
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The SMMUv3 stream table, context descriptors and stage-1 page tables are
 * built here in guest memory, as a Linux driver would, so that the device
 * is exercised through the real translation path with PASIDs, stalls and
 * terminated faults.
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pldma.h"
#include "libqos/smmuv3.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"

#define PLDMA_BASE      0x0c000000ULL   /* first platform bus device */
#define RAM_BASE        0x40000000ULL
#define SMMU_MEM        (RAM_BASE + 0x00100000ULL) /* libqos SMMU window */
#define SMMU_MEM_SIZE   (15 * MiB)
#define ALLOC_BASE      (RAM_BASE + 0x01000000ULL)
#define SID             0x10000
#define PAGE            0x1000ULL
#define POLL_MAX        200000
#define CD_LOG2         8

typedef struct T {
    QTestState *qts;
    QPldma d;               /* the device's registers */
    char *args;             /* command line, for a migration target */
    bool smmu;
    bool report;
    uint64_t next;          /* bump allocator for test buffers */
    QSMMU s;                /* SMMU tables (libqos/smmuv3) */
    uint64_t cd_table;
    uint64_t pt_root[1 << CD_LOG2];
} T;

static uint64_t alloc_pa(T *t, uint64_t size)
{
    uint64_t pa = QEMU_ALIGN_UP(t->next, PAGE);

    t->next = pa + QEMU_ALIGN_UP(size, PAGE);
    qtest_memset(t->qts, pa, 0, QEMU_ALIGN_UP(size, PAGE));
    return pa;
}

/* ---- SMMUv3, through libqos/smmuv3 ---- */

static void smmu_resume(T *t, uint16_t stag, int resp)
{
    qsmmu_resume(&t->s, SID, stag, resp);
    g_assert_false(qsmmu_cmdq_error(&t->s));
}

/* Wait for a stall event of our StreamID; returns its STAG */
static uint16_t smmu_wait_stall(T *t, uint32_t pasid, uint64_t va)
{
    uint64_t ev[4];
    int i;

    for (i = 0; i < POLL_MAX; i++) {
        if (!qsmmu_pop_event(&t->s, ev)) {
            continue;
        }
        if (QSMMU_EVT_TYPE(ev) >= QSMMU_EVT_F_TRANSLATION &&
            QSMMU_EVT_TYPE(ev) <= QSMMU_EVT_F_PERMISSION &&
            QSMMU_EVT_STALL(ev)) {
            g_assert_cmphex(QSMMU_EVT_SID(ev), ==, SID);
            g_assert_true(QSMMU_EVT_SSV(ev));
            g_assert_cmpuint(QSMMU_EVT_SSID(ev), ==, pasid);
            g_assert_cmphex(QSMMU_EVT_ADDR(ev) & ~(PAGE - 1), ==,
                            va & ~(PAGE - 1));
            return QSMMU_EVT_STAG(ev);
        }
    }
    g_assert_not_reached();
}

/*
 * One STE for the device: linear CD table of 2^CD_LOG2 contexts, no-PASID
 * traffic (the fault queue) bypasses stage 1, stalls allowed unless the
 * device is in report mode (as Linux does without dma-can-stall).
 */
static void smmu_init(T *t)
{
    qsmmu_init(&t->s, t->qts, QSMMU_VIRT_BASE, SMMU_MEM, SMMU_MEM_SIZE);
    qsmmu_enable(&t->s);
    t->cd_table = qsmmu_cd_table(&t->s, CD_LOG2);
    qsmmu_set_ste_s1(&t->s, SID, t->cd_table, CD_LOG2, QSMMU_S1DSS_BYPASS,
                     t->report);
}

/* Create the context descriptor (address space) of a PASID */
static void smmu_add_pasid(T *t, uint32_t pasid)
{
    t->pt_root[pasid] = qsmmu_pgtable_new(&t->s);
    /* the ASID of a PASID's context is the PASID */
    qsmmu_write_cd(&t->s, t->cd_table, pasid, pasid, t->pt_root[pasid],
                   !t->report);
    qsmmu_cfgi_cd(&t->s, SID, pasid);
}

static void map_page(T *t, uint32_t pasid, uint64_t va, uint64_t pa)
{
    bool remap = qsmmu_va_to_pa(&t->s, t->pt_root[pasid], va) != 0;

    qsmmu_map(&t->s, t->pt_root[pasid], va, pa, true);
    if (remap) {
        qsmmu_tlbi_va(&t->s, pasid, va);
    }
}

static void unmap_page(T *t, uint32_t pasid, uint64_t va)
{
    qsmmu_unmap(&t->s, t->pt_root[pasid], va);
    qsmmu_tlbi_va(&t->s, pasid, va);
}

/*
 * A buffer of the "process" @pasid: physical pages, mapped at @va when
 * the SMMU is in use (else va == pa).  Returns the physical address.
 */
static uint64_t buf(T *t, uint32_t pasid, uint64_t va, uint64_t size,
                    bool mapped)
{
    uint64_t pa = alloc_pa(t, size), off;

    if (t->smmu && mapped) {
        for (off = 0; off < size; off += PAGE) {
            map_page(t, pasid, va + off, pa + off);
        }
    }
    return pa;
}

/* ---- device helpers ---- */

typedef struct Ring {
    int ch;
    uint64_t va, pa;
    uint32_t size, tail;
} Ring;

static void ring_init(T *t, Ring *r, int ch, uint32_t pasid, uint64_t va,
                      uint32_t size)
{
    r->ch = ch;
    r->size = size;
    r->tail = 0;
    r->pa = buf(t, pasid, va, size * PLDMA_DESC_SIZE, true);
    r->va = t->smmu ? va : r->pa;

    qpldma_wr(&t->d, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    qpldma_wr(&t->d, PLDMA_CH_BIND(ch) + PLDMA_CHB_PASID,
         t->smmu ? (pasid | PLDMA_CHB_PASID_EN) : 0);
    qpldma_wr(&t->d, PLDMA_CH_BIND(ch) + PLDMA_CHB_OWNER, 1000 + ch);
    qpldma_wr(&t->d, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    qpldma_ch_wr(&t->d, ch, PLDMA_CH_RING_BASE_LO, (uint32_t)r->va);
    qpldma_ch_wr(&t->d, ch, PLDMA_CH_RING_BASE_HI, r->va >> 32);
    qpldma_ch_wr(&t->d, ch, PLDMA_CH_RING_SIZE, size);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, ch, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_IDLE);
}

static void desc_put(T *t, Ring *r, uint8_t op, uint32_t len, uint64_t src,
                     uint64_t dst, uint64_t pattern, uint64_t compl,
                     uint64_t cookie)
{
    uint8_t d[PLDMA_DESC_SIZE] = { 0 };

    d[PLDMA_DESC_OPCODE] = op;
    d[PLDMA_DESC_FLAGS] = PLDMA_DF_INTR;
    stl_le_p(d + PLDMA_DESC_LEN, len);
    stq_le_p(d + PLDMA_DESC_SRC, src);
    stq_le_p(d + PLDMA_DESC_DST, dst);
    stq_le_p(d + PLDMA_DESC_PATTERN, pattern);
    stq_le_p(d + PLDMA_DESC_COMPL, compl);
    stq_le_p(d + PLDMA_DESC_COOKIE, cookie);
    qtest_memwrite(t->qts, r->pa + r->tail * PLDMA_DESC_SIZE, d, sizeof(d));
    r->tail = (r->tail + 1) % r->size;
}

static void ring_kick(T *t, Ring *r)
{
    qpldma_ch_wr(&t->d, r->ch, PLDMA_CH_RING_TAIL, r->tail);
}

static uint32_t wait_state(T *t, int ch, uint32_t want)
{
    uint32_t st = 0;
    int i;

    for (i = 0; i < POLL_MAX; i++) {
        st = qpldma_ch_rd(&t->d, ch, PLDMA_CH_STATE);
        if (st == want) {
            break;
        }
    }
    g_assert_cmpuint(st, ==, want);
    return st;
}

/* Wait for the completion record at @pa; returns its status */
static uint32_t wait_compl(T *t, uint64_t pa, uint64_t *bytes,
                           uint64_t *fault_va)
{
    uint8_t rec[PLDMA_COMPL_SIZE];
    int i;

    for (i = 0; i < POLL_MAX; i++) {
        if (qtest_readl(t->qts, pa + PLDMA_COMPL_STATUS)) {
            break;
        }
    }
    qtest_memread(t->qts, pa, rec, sizeof(rec));
    if (bytes) {
        *bytes = ldq_le_p(rec + PLDMA_COMPL_BYTES);
    }
    if (fault_va) {
        *fault_va = ldq_le_p(rec + PLDMA_COMPL_FAULT_VA);
    }
    return ldl_le_p(rec + PLDMA_COMPL_STATUS);
}

static void fill_random(T *t, uint64_t pa, size_t len, uint8_t **out)
{
    uint8_t *b = g_malloc(len);
    size_t i;

    for (i = 0; i < len; i++) {
        b[i] = g_test_rand_int();
    }
    qtest_memwrite(t->qts, pa, b, len);
    *out = b;
}

static void check_mem(T *t, uint64_t pa, const uint8_t *expect, size_t len)
{
    g_autofree uint8_t *b = g_malloc(len);

    qtest_memread(t->qts, pa, b, len);
    g_assert_true(memcmp(b, expect, len) == 0);
}

static T *start(const char *mode, bool smmu, const char *extra)
{
    T *t = g_new0(T, 1);

    t->smmu = smmu;
    t->report = !strcmp(mode, "report");
    t->next = ALLOC_BASE;
    t->args = g_strdup_printf("-M virt%s -m 512M -nodefaults "
                              "-device pldma,id=dma0,fault-mode=%s%s",
                              smmu ? ",iommu=smmuv3" : "", mode,
                              extra ? extra : "");
    t->qts = qtest_init(t->args);
    qpldma_init(&t->d, t->qts, PLDMA_BASE);
    if (smmu) {
        smmu_init(t);
    }
    return t;
}

static void stop(T *t)
{
    qtest_quit(t->qts);
    g_free(t->args);
    g_free(t);
}

/*
 * Migrate @t through a file to a new QEMU with the same command line.
 * Returns true if the target accepted the stream; @t then runs there.
 * A refused stream leaves @t on the (stopped) source.
 */
static bool migrate(T *t)
{
    g_autofree char *path = NULL;
    g_autofree char *out_uri = NULL;
    g_autofree char *in_uri = NULL;
    QTestState *dst;
    bool ok;
    int fd;

    fd = g_file_open_tmp("pldma-mig-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    out_uri = g_strdup_printf("exec:cat > %s", path);
    in_uri = g_strdup_printf("exec:cat %s", path);

    qtest_qmp_assert_success(t->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", out_uri);
    g_assert_true(qpldma_migration_wait(t->qts, 30));

    dst = qtest_initf("%s -incoming defer", t->args);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", in_uri);
    ok = qpldma_migration_wait(dst, 30);
    unlink(path);
    if (ok) {
        qtest_quit(t->qts);
        t->qts = dst;
        t->d.qts = dst;
        t->s.qts = dst;
    } else {
        qtest_quit(dst);
    }
    return ok;
}

/* ---- tests ---- */

static void test_registers(void)
{
    T *t = start("stall", false,
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
    stop(t);
}

/* COPY and FILL, with or without the SMMU */
static void do_copy_fill(bool smmu)
{
    T *t = start("stall", smmu, NULL);
    const uint32_t pasid = 3, len = 3 * PAGE + 123;
    uint64_t va_src = 0x10000000, va_dst = 0x20000100, va_c = 0x30000000;
    uint64_t src, dst, cpa, fdst, bytes, fva;
    g_autofree uint8_t *data = NULL;
    g_autofree uint8_t *pat = g_malloc(1000);
    Ring r;
    int i;

    if (smmu) {
        smmu_add_pasid(t, pasid);
    }
    ring_init(t, &r, 0, pasid, 0x40000000, 8);
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

    g_assert_cmpuint(wait_compl(t, cpa, &bytes, &fva), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    g_assert_cmpuint(fva, ==, 0);
    g_assert_cmphex(qtest_readq(t->qts, cpa + PLDMA_COMPL_COOKIE), ==,
                    0xc0ffee);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(wait_compl(t, cpa + 32, &bytes, NULL), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, 1000);
    for (i = 0; i < 1000; i++) {
        pat[i] = 1 + i % 8;
    }
    check_mem(t, fdst + 3, pat, 1000);
    g_assert_cmpuint(qtest_readb(t->qts, fdst + 2), ==, 0xee);
    g_assert_cmpuint(qtest_readb(t->qts, fdst + 1003), ==, 0xee);
    g_assert_cmpuint(wait_compl(t, cpa + 64, NULL, NULL), ==,
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
    stop(t);
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
    T *t = start("stall", false, ",max-transfer=65536");
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

    ring_init(t, &r, 0, 0, 0, 16);
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
    g_assert_cmpuint(wait_compl(t, cpa + 288, NULL, NULL), ==,
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
    stop(t);
}

/* Wait until a channel is RUNNING and has moved some bytes */
static void wait_progress(T *t, int ch)
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
    T *t = start("stall", false, ",chunk-size=4096");
    const uint32_t len = 64 * MiB;
    uint64_t src = buf(t, 0, 0, len, true);
    uint64_t dst = buf(t, 0, 0, len, true);
    uint64_t cpa = buf(t, 0, 0, PAGE, true);
    Ring r;

    ring_init(t, &r, 0, 0, 0, 4);
    desc_put(t, &r, PLDMA_OP_COPY, len, src, dst, 0, cpa, 0);
    ring_kick(t, &r);
    wait_progress(t, 0);
    qpldma_wr(&t->d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_DISABLED);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_RING_HEAD), ==, 0);
    g_assert_cmpuint(qtest_readl(t->qts, cpa), ==, 0);

    /* the channel is usable again */
    ring_init(t, &r, 0, 0, 0, 4);
    desc_put(t, &r, PLDMA_OP_FILL, 4096, 0, dst, 0x55, cpa, 0);
    ring_kick(t, &r);
    g_assert_cmpuint(wait_compl(t, cpa, NULL, NULL), ==, PLDMA_ST_SUCCESS);

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
    stop(t);
}

/* Stall mode: a missing destination page stalls, RETRY completes it */
static void test_stall_retry(void)
{
    T *t = start("stall", true, ",chunk-size=4096");
    const uint32_t pasid = 5, len = 5 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, bytes;
    g_autofree uint8_t *data = NULL;
    uint16_t stag;
    Ring r;

    smmu_add_pasid(t, pasid);
    ring_init(t, &r, 0, pasid, 0x40000000, 4);
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, NULL), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     1);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_RESTARTS),
                     ==, 1);
    stop(t);
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
    T *t = start("stall", true, ",max-outstanding=8");
    const uint32_t pasid = 9, npages = 12, len = npages * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, bytes, ev[4];
    g_autofree uint8_t *data = NULL;
    uint16_t stag[16];
    uint64_t va[16];
    int n = 0, i, j;
    Ring r;

    smmu_add_pasid(t, pasid);
    ring_init(t, &r, 0, pasid, 0x40000000, 4);
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
        g_assert_cmpuint(wait_compl(t, cpa, &bytes, NULL), ==,
                         PLDMA_ST_ABORTED);
        g_assert_cmpuint(bytes, <=, 3 * PAGE);
        /* the next descriptor runs */
        g_assert_cmpuint(wait_compl(t, cpa + PAGE, NULL, NULL), ==,
                         PLDMA_ST_SUCCESS);
        stop(t);
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, NULL), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     npages);
    g_assert_cmpuint(wait_compl(t, cpa + PAGE, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    stop(t);
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
    T *t = start("stall", true, NULL);
    const uint32_t pasid = 7;
    uint64_t vr = 0x40000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t dst, cpa;
    uint16_t stag;
    Ring r;

    smmu_add_pasid(t, pasid);
    ring_init(t, &r, 3, pasid, vr, 4);
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
    g_assert_cmpuint(wait_compl(t, cpa, NULL, NULL), ==, PLDMA_ST_SUCCESS);
    g_assert_cmphex(qtest_readq(t->qts, cpa + PLDMA_COMPL_COOKIE), ==, 9);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 3,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     2);
    wait_state(t, 3, PLDMA_STATE_IDLE);
    stop(t);
}

/* Stall mode: ABORT completes with an error and the exact progress */
static void test_stall_abort(void)
{
    T *t = start("stall", true, NULL);
    const uint32_t pasid = 6, len = 4 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t cpa, bytes, fva;
    uint16_t stag;
    Ring r;

    smmu_add_pasid(t, pasid);
    ring_init(t, &r, 0, pasid, 0x40000000, 4);
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, &fva), ==, PLDMA_ST_ABORTED);
    g_assert_cmpuint(bytes, ==, PAGE);
    g_assert_cmphex(fva, ==, vs + PAGE);
    /* the channel goes on with the next descriptor */
    g_assert_cmpuint(wait_compl(t, cpa + 32, NULL, NULL), ==,
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
    ring_init(t, &r, 0, pasid, 0x40000000, 4);
    desc_put(t, &r, PLDMA_OP_NOP, 0, 0, 0, 0, vc, 0);
    ring_kick(t, &r);
    g_assert_cmpuint(wait_compl(t, cpa, NULL, NULL), ==, PLDMA_ST_SUCCESS);
    stop(t);
}

/* Two channels, two processes: one stalls, the other completes */
static void test_stall_two_channels(void)
{
    T *t = start("stall", true, ",chunk-size=4096");
    const uint32_t len = 8 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t s1, d1, c1, s2, d2, c2;
    g_autofree uint8_t *data1 = NULL;
    g_autofree uint8_t *data2 = NULL;
    uint16_t stag;
    Ring r1, r2;

    smmu_add_pasid(t, 1);
    smmu_add_pasid(t, 2);
    ring_init(t, &r1, 0, 1, 0x40000000, 4);
    ring_init(t, &r2, 1, 2, 0x40000000, 4);
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
    g_assert_cmpuint(wait_compl(t, c2, NULL, NULL), ==, PLDMA_ST_SUCCESS);
    check_mem(t, d2, data2, len);
    wait_state(t, 0, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qtest_readl(t->qts, c1), ==, 0);

    stag = smmu_wait_stall(t, 1, vd + 5 * PAGE);
    map_page(t, 1, vd + 5 * PAGE, d1 + 5 * PAGE);
    smmu_resume(t, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_compl(t, c1, NULL, NULL), ==, PLDMA_ST_SUCCESS);
    check_mem(t, d1, data1, len);
    stop(t);
}

/* Report mode: a fault record, RESTART, then CANCEL; full queue */
static void test_report(void)
{
    T *t = start("report", true, ",chunk-size=4096");
    const uint32_t pasid = 9, len = 6 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, fq, bytes, fva;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE];
    Ring r;

    smmu_add_pasid(t, pasid);
    fq = alloc_pa(t, PAGE);         /* S1DSS = bypass: IOVA == PA */
    qpldma_wr(&t->d, PLDMA_FQ_BASE_LO, (uint32_t)fq);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_HI, fq >> 32);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 2);      /* room for a single record */
    qpldma_wr(&t->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    qpldma_wr(&t->d, PLDMA_IRQ_MASK, 0xffffffff);
    g_assert_true(qpldma_rd(&t->d, PLDMA_CAP) & PLDMA_CAP_FAULT_REPORT);

    ring_init(t, &r, 2, pasid, 0x40000000, 4);
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, NULL), ==, PLDMA_ST_SUCCESS);
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, &fva), ==,
                     PLDMA_ST_CANCELLED);
    g_assert_cmpuint(bytes, ==, PAGE);
    g_assert_cmphex(fva, ==, vd + PAGE);
    g_assert_cmpuint(wait_compl(t, cpa + 32, NULL, NULL), ==,
                     PLDMA_ST_SUCCESS);
    wait_state(t, 2, PLDMA_STATE_IDLE);
    stop(t);
}

/* Set byte @off of the descriptor desc_put() wrote last */
/* Wait until the device has posted fault records up to @tail */
static void wait_fq_tail(T *t, uint32_t tail)
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
    T *t = start("report", true, ",chunk-size=4096");
    const uint32_t pasid = 5, len = 4 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, fq, bytes;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE];
    Ring r;
    int i;

    smmu_add_pasid(t, pasid);
    fq = alloc_pa(t, PAGE);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_LO, (uint32_t)fq);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_HI, fq >> 32);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 8);
    qpldma_wr(&t->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);

    ring_init(t, &r, 0, pasid, 0x40000000, 4);
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

    g_assert_true(migrate(t));
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, NULL), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    stop(t);
}

static void desc_poke(T *t, Ring *r, uint32_t off, uint8_t val)
{
    uint32_t last = (r->tail + r->size - 1) % r->size;

    qtest_writeb(t->qts, r->pa + last * PLDMA_DESC_SIZE + off, val);
}

static uint64_t c_rd64(T *t, int ch, uint32_t lo)
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
    T *t = start("report", true, ",chunk-size=4096");
    const uint32_t pasid = 5, len = 20 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, fq, bytes;
    g_autofree uint8_t *data = NULL;
    uint8_t rec[PLDMA_FR_SIZE];
    static const int src_holes[] = { 2, 5, 19 }, dst_holes[] = { 2, 3, 17 };
    Ring r;
    int i;

    smmu_add_pasid(t, pasid);
    fq = alloc_pa(t, PAGE);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_LO, (uint32_t)fq);
    qpldma_wr(&t->d, PLDMA_FQ_BASE_HI, fq >> 32);
    qpldma_wr(&t->d, PLDMA_FQ_SIZE, 8);
    qpldma_wr(&t->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    qpldma_wr(&t->d, PLDMA_IRQ_MASK, 0xffffffff);

    ring_init(t, &r, 1, pasid, 0x40000000, 8);
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, NULL), ==, PLDMA_ST_SUCCESS);
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
    g_assert_cmpuint(wait_compl(t, cpa, NULL, NULL), ==, PLDMA_ST_CANCELLED);

    /* a window beyond 64 pages, a reserved byte: BAD_DESC, nothing done */
    qtest_writel(t->qts, cpa, 0);
    desc_put(t, &r, PLDMA_OP_FILL, PAGE, 0, vd, 0x5a, vc, 0);
    desc_poke(t, &r, PLDMA_DESC_AHEAD, PLDMA_AHEAD_MAX + 1);
    desc_put(t, &r, PLDMA_OP_FILL, PAGE, 0, vd, 0x5a, vc + 32, 0);
    desc_poke(t, &r, PLDMA_DESC_RSVD0 + 2, 1);
    ring_kick(t, &r);
    g_assert_cmpuint(wait_compl(t, cpa, NULL, NULL), ==, PLDMA_ST_BAD_DESC);
    g_assert_cmpuint(wait_compl(t, cpa + 32, NULL, NULL), ==,
                     PLDMA_ST_BAD_DESC);
    wait_state(t, 1, PLDMA_STATE_IDLE);
    stop(t);
}

/*
 * Benchmark, not a timed test: a 64 MiB COPY through the SMMU with warm
 * translations against a host memcpy of the same size, in the same run.
 * Run with: QTEST_QEMU_BINARY=./qemu-system-aarch64 \
 *   tests/qtest/pldma-test -m perf -p /pldma/bench
 * PLDMA_BENCH_PAGES=4k uses 4 KiB pages instead of 2 MiB blocks.
 */
static void map_block(T *t, uint32_t pasid, uint64_t va, uint64_t pa)
{
    uint64_t l1e = t->pt_root[pasid] + ((va >> 30) & 511) * 8;
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
    T *t = start("stall", true, g_getenv("PLDMA_BENCH_DEVICE"));
    uint64_t vs = 0x80000000, vd = 0xc0000000, vc = 0x30000000;
    uint64_t src, dst, cpa, off;
    double best_dma = 1e9, best_cpu = 1e9, t0;
    g_autofree uint8_t *a = g_malloc(len);
    g_autofree uint8_t *b = g_malloc(len);
    Ring r;
    int i;

    smmu_add_pasid(t, 1);
    ring_init(t, &r, 0, 1, 0x40000000, 16);
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
        g_assert_cmpuint(wait_compl(t, cpa, NULL, NULL), ==,
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
    stop(t);
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
        /* 4 KiB pages: 1 + 2 * 1024 translations, all of new pages */
        "4k", true, false,
        ",timing=on,dma-bandwidth=32000,desc-latency-ns=1000,"
        "xlat-latency-ns=10,walk-latency-ns=300",
        1000 + 131072 + (1 + 2048) * (10 + 300),
    }, {
        /*
         * 2 MiB blocks, 1 MiB chunks, default bandwidth (25 GB/s: 4 MiB
         * is 167772.16 ns) and latencies: 1 + 2 * 4 translations, of which
         * the ring page and the first of each block (2 + 2) miss
         */
        "2m", true, true,
        ",timing=on,chunk-size=1048576",
        1000 + 167772 + (1 + 8) * 10 + 5 * 500,
    },
};

static void test_timing(const void *opaque)
{
    const TimingCase *c = opaque;
    const uint64_t len = 4 * MiB;
    T *t = start("stall", c->smmu, c->props);
    uint64_t vs = 0x80000000, vd = 0xc0000000, vc = 0x30000000;
    uint64_t src, dst, cpa, off, bytes;
    g_autofree uint8_t *data = NULL;
    int64_t t0, now;
    Ring r;

    if (c->smmu) {
        smmu_add_pasid(t, 1);
    }
    ring_init(t, &r, 0, 1, 0x40000000, 16);
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, NULL), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    wait_state(t, 0, PLDMA_STATE_IDLE);
    stop(t);
}


/*
 * The fault round trip, with the model on: a COPY of 4 pages whose third
 * destination page is missing stalls exactly when the pages before it
 * have taken their time, and goes on fault-latency-ns after the
 * CMD_RESUME, at whatever time the test resolves it.  Pages cost
 * 1000 ns of data (4096 B at 4096 MB/s) and 100 ns per ATC miss.
 */
static void test_timing_stall(void)
{
    T *t = start("stall", true, ",timing=on,dma-bandwidth=4096,"
                 "desc-latency-ns=1000,xlat-latency-ns=0,"
                 "walk-latency-ns=100,fault-latency-ns=2000");
    const uint32_t pasid = 5, len = 4 * PAGE;
    uint64_t vs = 0x10000000, vd = 0x20000000, vc = 0x30000000;
    uint64_t src, dst, cpa, bytes;
    g_autofree uint8_t *data = NULL;
    int64_t t0, now;
    uint16_t stag;
    Ring r;

    smmu_add_pasid(t, pasid);
    ring_init(t, &r, 0, pasid, 0x40000000, 4);
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
    g_assert_cmpuint(wait_compl(t, cpa, &bytes, NULL), ==, PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    check_mem(t, dst, data, len);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0,
                                  PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS), ==,
                     1);
    stop(t);
}


/*
 * The model's state migrates: a COPY migrated half way through its
 * modeled time completes on the target at the same virtual time as it
 * would have on the source (the qtest clock of a new QEMU starts again
 * from 0, below the channel's time, so the deadline is still ahead).
 * 30000 MB/s leaves a remainder (4 MiB take 139810.13 ns) to carry.
 */
static void test_timing_migrate(void)
{
    const uint64_t len = 4 * MiB, expect = 700 + 139810;
    T *t = start("stall", false, ",timing=on,dma-bandwidth=30000,"
                 "desc-latency-ns=700,chunk-size=65536");
    uint64_t src, dst, cpa;
    g_autofree uint8_t *data = NULL;
    int64_t t0, now;
    Ring r;

    ring_init(t, &r, 0, 0, 0x40000000, 16);
    src = alloc_pa(t, len);
    dst = alloc_pa(t, len);
    cpa = alloc_pa(t, PAGE);
    fill_random(t, src, len, &data);
    desc_put(t, &r, PLDMA_OP_COPY, len, src, dst, 0, cpa, 7);
    t0 = qtest_clock_step(t->qts, 1);
    ring_kick(t, &r);
    now = qtest_clock_step(t->qts, expect / 2);
    g_assert_cmpuint(qtest_readl(t->qts, cpa + PLDMA_COMPL_STATUS), ==, 0);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_RUNNING);

    g_assert_true(migrate(t));
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
    stop(t);
}

int main(int argc, char **argv)
{
    size_t i;

    g_test_init(&argc, &argv, NULL);
    if (g_test_perf()) {
        qtest_add_func("/pldma/bench", test_bench);
    }
    qtest_add_func("/pldma/registers", test_registers);
    qtest_add_func("/pldma/copy-phys", test_copy_phys);
    qtest_add_func("/pldma/bad-inputs", test_bad_inputs);
    qtest_add_func("/pldma/reset-inflight", test_reset_inflight);
    qtest_add_func("/pldma/smmu/copy-pasid", test_copy_pasid);
    qtest_add_func("/pldma/smmu/stall-retry", test_stall_retry);
    qtest_add_func("/pldma/smmu/stall-fetch-compl", test_stall_fetch_compl);
    qtest_add_func("/pldma/smmu/stall-abort", test_stall_abort);
    qtest_add_func("/pldma/smmu/stall-two-channels", test_stall_two_channels);
    qtest_add_func("/pldma/smmu/report-restart-cancel", test_report);
    qtest_add_func("/pldma/smmu/report-batch", test_report_batch);
    qtest_add_func("/pldma/smmu/report-fq-resize-migrate",
                   test_report_fq_resize_migrate);
    qtest_add_func("/pldma/smmu/stall-outstanding", test_stall_outstanding);
    qtest_add_func("/pldma/smmu/stall-outstanding-abort",
                   test_stall_outstanding_abort);
    for (i = 0; i < ARRAY_SIZE(timing_cases); i++) {
        g_autofree char *path = g_strdup_printf("/pldma/timing/copy-%s",
                                                timing_cases[i].name);

        qtest_add_data_func(path, &timing_cases[i], test_timing);
    }
    qtest_add_func("/pldma/timing/stall-retry", test_timing_stall);
    qtest_add_func("/pldma/timing/migrate", test_timing_migrate);
    return g_test_run();
}
