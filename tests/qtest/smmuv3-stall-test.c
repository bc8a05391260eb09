/*
 * QTest for the SMMUv3 substream and stall extensions, driving DMA through
 * the PLDMA device (docs/specs/smmuv3-stall.rst, docs/specs/pldma.rst)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "libqos/smmuv3.h"
#include "hw/misc/pldma-regs.h"

#define PLDMA_BASE          0x0c000000ULL   /* first platform bus slot */
#define PLDMA_SID           0x10000
#define SMMU_MEM            0x44000000ULL   /* SMMU structures and buffers */
#define SMMU_MEM_SIZE       (32 * 1024 * 1024)

#define SSID                1
#define ASID                1
#define S1CDMAX             2               /* 4 CDs */

#define VA_RING             0x10000000ULL
#define VA_COMPL            0x10001000ULL
#define VA_SRC              0x10002000ULL
#define VA_DST              0x10004000ULL
#define XFER                0x2000          /* two pages */
#define RING_SIZE           4

/* IDR fields */
#define IDR0_CD2L(v)        (((v) >> 19) & 1)
#define IDR0_STALL_MODEL(v) (((v) >> 24) & 3)
#define IDR1_SIDSIZE(v)     ((v) & 0x3f)
#define IDR1_SSIDSIZE(v)    (((v) >> 6) & 0x1f)
#define IDR5_OAS(v)         ((v) & 7)
#define IDR5_STALL_MAX(v)   ((v) >> 16)

typedef struct Fixture {
    QTestState *qts;
    QSMMU smmu;
    uint64_t cdtab;
    uint64_t ttb;
    uint64_t pa_ring, pa_compl, pa_src, pa_dst;
    uint32_t tail;
    bool ssv;                   /* expected in the events */
    uint32_t ssid;
} Fixture;

static uint32_t smmu_idr(QTestState *qts, int n)
{
    return qtest_readl(qts, QSMMU_VIRT_BASE + 4 * n);
}

static void test_idregs(void)
{
    QTestState *qts = qtest_init("-M virt,iommu=smmuv3 -nodefaults");

    g_assert_cmpuint(IDR0_STALL_MODEL(smmu_idr(qts, 0)), ==, 0);
    g_assert_cmpuint(IDR0_CD2L(smmu_idr(qts, 0)), ==, 1);
    g_assert_cmpuint(IDR1_SIDSIZE(smmu_idr(qts, 1)), ==, 17);
    g_assert_cmpuint(IDR1_SSIDSIZE(smmu_idr(qts, 1)), ==, 20);
    g_assert_cmpuint(IDR5_OAS(smmu_idr(qts, 5)), ==, 4);
    g_assert_cmpuint(IDR5_STALL_MAX(smmu_idr(qts, 5)), ==, 64);
    qtest_quit(qts);

    qts = qtest_init("-M virt,iommu=smmuv3 -nodefaults "
                     "-global arm-smmuv3.oas=52 "
                     "-global arm-smmuv3.stall-model=none "
                     "-global arm-smmuv3.ssidsize=5");
    g_assert_cmpuint(IDR0_STALL_MODEL(smmu_idr(qts, 0)), ==, 1);
    g_assert_cmpuint(IDR1_SSIDSIZE(smmu_idr(qts, 1)), ==, 5);
    g_assert_cmpuint(IDR5_OAS(smmu_idr(qts, 5)), ==, 6);
    qtest_quit(qts);

    qts = qtest_init("-M virt,iommu=smmuv3 -nodefaults "
                     "-global arm-smmuv3.stall-model=force "
                     "-global arm-smmuv3.stall-max=16 "
                     "-global arm-smmuv3.oas=48");
    g_assert_cmpuint(IDR0_STALL_MODEL(smmu_idr(qts, 0)), ==, 2);
    g_assert_cmpuint(IDR5_STALL_MAX(smmu_idr(qts, 5)), ==, 16);
    g_assert_cmpuint(IDR5_OAS(smmu_idr(qts, 5)), ==, 5);
    qtest_quit(qts);
}

static uint32_t pldma_readl(Fixture *f, uint64_t off)
{
    return qtest_readl(f->qts, PLDMA_BASE + off);
}

static void pldma_writel(Fixture *f, uint64_t off, uint32_t val)
{
    qtest_writel(f->qts, PLDMA_BASE + off, val);
}

static uint32_t ch_readl(Fixture *f, uint64_t off)
{
    return pldma_readl(f, PLDMA_CH_PAGE_OFFSET(0) + off);
}

static void ch_writel(Fixture *f, uint64_t off, uint32_t val)
{
    pldma_writel(f, PLDMA_CH_PAGE_OFFSET(0) + off, val);
}

/* (Re)bind channel 0 with CH_BIND.PASID = @pasid_reg and set its ring up */
static void bind_channel(Fixture *f, uint32_t pasid_reg)
{
    pldma_writel(f, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    pldma_writel(f, PLDMA_CH_BIND(0) + PLDMA_CHB_PASID, pasid_reg);
    pldma_writel(f, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    ch_writel(f, PLDMA_CH_RING_BASE_LO, (uint32_t)VA_RING);
    ch_writel(f, PLDMA_CH_RING_BASE_HI, VA_RING >> 32);
    ch_writel(f, PLDMA_CH_RING_SIZE, RING_SIZE);
    f->tail = 0;
    f->ssv = pasid_reg & PLDMA_CHB_PASID_EN;
    f->ssid = f->ssv ? PLDMA_CHB_PASID_VALUE(pasid_reg) : 0;
}

/*
 * A PLDMA with @nch channels behind the SMMU, an event queue of
 * 2^@evtq_log2 entries, and channel 0 bound to the process (SSID 1)
 */
static bool fixture_init_dev(Fixture *f, const char *mode, int nch,
                             int evtq_log2, const char *extra)
{
    int i;

    memset(f, 0, sizeof(*f));
    if (!qtest_has_device("pldma")) {
        g_test_skip("no pldma device in this build");
        return false;
    }
    f->qts = qtest_initf("-M virt,iommu=smmuv3 -nodefaults "
                         "-device pldma,fault-mode=%s,num-channels=%d%s",
                         mode, nch, extra ? extra : "");
    if (pldma_readl(f, PLDMA_ID) != PLDMA_ID_VALUE ||
        pldma_readl(f, PLDMA_STREAM_ID) != PLDMA_SID) {
        qtest_quit(f->qts);
        g_test_skip("pldma not found at the first platform bus slot");
        return false;
    }
    g_assert(pldma_readl(f, PLDMA_CAP) & PLDMA_CAP_PASID);

    qsmmu_init(&f->smmu, f->qts, QSMMU_VIRT_BASE, SMMU_MEM, SMMU_MEM_SIZE);
    f->smmu.evtq_log2 = evtq_log2;
    qsmmu_enable(&f->smmu);

    /* One process: SSID 1, ASID 1, CD.S = 1 (even for report mode) */
    f->ttb = qsmmu_pgtable_new(&f->smmu);
    f->cdtab = qsmmu_cd_table(&f->smmu, S1CDMAX);
    qsmmu_write_cd(&f->smmu, f->cdtab, SSID, ASID, f->ttb, true);
    qsmmu_set_ste_s1(&f->smmu, PLDMA_SID, f->cdtab, S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);

    f->pa_ring = qsmmu_map_new(&f->smmu, f->ttb, VA_RING, 0x1000, true);
    f->pa_compl = qsmmu_map_new(&f->smmu, f->ttb, VA_COMPL, 0x1000, true);
    f->pa_src = qsmmu_map_new(&f->smmu, f->ttb, VA_SRC, XFER, false);
    /* The destination is allocated but only the first page is mapped */
    f->pa_dst = qsmmu_alloc(&f->smmu, XFER, 0x1000);
    qsmmu_map(&f->smmu, f->ttb, VA_DST, f->pa_dst, true);

    for (i = 0; i < XFER; i++) {
        qtest_writeb(f->qts, f->pa_src + i, (uint8_t)(i * 7 + 3));
    }

    /* Channel 0 bound to the process */
    bind_channel(f, PLDMA_CHB_PASID_EN | SSID);
    return true;
}

static bool fixture_init_full(Fixture *f, int nch, int evtq_log2,
                              const char *extra)
{
    return fixture_init_dev(f, "stall", nch, evtq_log2, extra);
}

static bool fixture_init(Fixture *f, const char *extra)
{
    return fixture_init_full(f, 1, 8, extra);
}

static void fixture_fini(Fixture *f)
{
    qtest_quit(f->qts);
}

/* Queue a COPY of XFER bytes from VA_SRC to VA_DST */
static void submit_copy(Fixture *f)
{
    uint64_t d = f->pa_ring + (f->tail % RING_SIZE) * PLDMA_DESC_SIZE;
    QTestState *qts = f->qts;

    qtest_memset(qts, d, 0, PLDMA_DESC_SIZE);
    qtest_memset(qts, f->pa_compl, 0, PLDMA_COMPL_SIZE);
    qtest_writeb(qts, d + PLDMA_DESC_OPCODE, PLDMA_OP_COPY);
    qtest_writel(qts, d + PLDMA_DESC_LEN, XFER);
    qtest_writeq(qts, d + PLDMA_DESC_SRC, VA_SRC);
    qtest_writeq(qts, d + PLDMA_DESC_DST, VA_DST);
    qtest_writeq(qts, d + PLDMA_DESC_COMPL, VA_COMPL);
    qtest_writeq(qts, d + PLDMA_DESC_COOKIE, 0xc0c0);
    f->tail = (f->tail + 1) % RING_SIZE;
    ch_writel(f, PLDMA_CH_RING_TAIL, f->tail);
}

/* Let the device's bottom half run until the channel is in @state */
static void wait_state(Fixture *f, uint32_t state)
{
    int i;

    for (i = 0; i < 10000; i++) {
        if (ch_readl(f, PLDMA_CH_STATE) == state) {
            return;
        }
        qtest_clock_step(f->qts, 1000);
    }
    g_assert_cmpuint(ch_readl(f, PLDMA_CH_STATE), ==, state);
}

static uint32_t wait_completion(Fixture *f)
{
    uint32_t st = 0;
    int i;

    for (i = 0; i < 10000; i++) {
        st = qtest_readl(f->qts, f->pa_compl + PLDMA_COMPL_STATUS);
        if (st != PLDMA_ST_PENDING) {
            break;
        }
        qtest_clock_step(f->qts, 1000);
    }
    return st;
}

static void check_dst(Fixture *f)
{
    int i;

    for (i = 0; i < XFER; i++) {
        g_assert_cmphex(qtest_readb(f->qts, f->pa_dst + i), ==,
                        (uint8_t)(i * 7 + 3));
    }
}

/* Start a copy whose second destination page faults; return its STAG */
static uint16_t stall_copy(Fixture *f)
{
    uint64_t evt[4];

    submit_copy(f);
    wait_state(f, PLDMA_STATE_STALLED);
    g_assert(qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 1);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, PLDMA_SID);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, f->ssv);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, f->ssid);
    g_assert_cmphex(QSMMU_EVT_ADDR(evt), ==, VA_DST + 0x1000);
    g_assert_cmpuint(QSMMU_EVT_RNW(evt), ==, 0);
    g_assert(!qsmmu_pop_event(&f->smmu, evt));
    return QSMMU_EVT_STAG(evt);
}

static void test_copy_mapped(void)
{
    Fixture f;
    uint64_t evt[4];

    if (!fixture_init(&f, NULL)) {
        return;
    }
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    fixture_fini(&f);
}

static void test_stall_retry(void)
{
    Fixture f;
    uint16_t stag;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    stag = stall_copy(&f);

    /* A RESUME with a wrong STAG is ignored */
    qsmmu_resume(&f.smmu, PLDMA_SID, stag + 1, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_STALLED);

    /* Fix the page table, as the IOPF handler would, and retry */
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_tlbi_va(&f.smmu, ASID, VA_DST + 0x1000);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    fixture_fini(&f);
}

static void test_stall_abort(void)
{
    Fixture f;
    uint16_t stag;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    stag = stall_copy(&f);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_ABORT);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_ABORTED);
    g_assert_cmphex(qtest_readq(f.qts, f.pa_compl + PLDMA_COMPL_BYTES), ==,
                    0x1000);
    fixture_fini(&f);
}

static void test_stall_term(void)
{
    Fixture f;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    stall_copy(&f);
    qsmmu_stall_term(&f.smmu, PLDMA_SID);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_ABORTED);

    /* Invalidating the CD terminates the stalls of its substream */
    wait_state(&f, PLDMA_STATE_IDLE);
    stall_copy(&f);
    qsmmu_cfgi_cd(&f.smmu, PLDMA_SID, SSID);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_ABORTED);

    /*
     * So does disabling the SMMU.  The completion record is then written
     * untranslated (GBPA bypass), so look at the channel's counters.
     */
    wait_state(&f, PLDMA_STATE_IDLE);
    stall_copy(&f);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ABORTS),
                     ==, 2);
    qsmmu_writel(&f.smmu, 0x20, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), !=, PLDMA_STATE_STALLED);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ABORTS),
                     ==, 3);
    fixture_fini(&f);
}

static void test_stall_disabled(void)
{
    Fixture f;
    uint64_t evt[4];

    if (!fixture_init(&f, NULL)) {
        return;
    }
    /* CD.S = 0: the fault is reported and the transaction terminated */
    qsmmu_write_cd(&f.smmu, f.cdtab, SSID, ASID, f.ttb, false);
    qsmmu_cfgi_cd(&f.smmu, PLDMA_SID, SSID);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_FAULT);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, SSID);
    fixture_fini(&f);
}

static void test_bad_substream(void)
{
    Fixture f;
    uint64_t evt[4];

    if (!fixture_init(&f, NULL)) {
        return;
    }
    /* SSID 5 is beyond S1CDMAX: the descriptor fetch cannot translate */
    bind_channel(&f, PLDMA_CHB_PASID_EN | 5);
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_ERROR);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_ERROR), ==, PLDMA_ERR_DESC_FETCH);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_C_BAD_SUBSTREAMID);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, 5);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, PLDMA_SID);
    fixture_fini(&f);
}

/*
 * A stall whose event cannot be recorded (event queue disabled) is not
 * stalled: the transaction is terminated (docs/specs/smmuv3-stall.rst).
 */
static void test_stall_no_eventq(void)
{
    Fixture f;
    uint64_t evt[4];

    if (!fixture_init(&f, NULL)) {
        return;
    }
    qsmmu_writel(&f.smmu, 0x20, (1u << 3) | (1u << 0)); /* CMDQEN | SMMUEN */
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_FAULT);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS),
                     ==, 0);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    fixture_fini(&f);
}

static void wait_migration(QTestState *qts)
{
    int i;

    for (i = 0; i < 3000; i++) {
        QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
        QDict *ret = qdict_get_qdict(rsp, "return");
        const char *st = ret && qdict_haskey(ret, "status") ?
                         qdict_get_str(ret, "status") : "";
        bool done = !strcmp(st, "completed");
        bool failed = !strcmp(st, "failed");

        qobject_unref(rsp);
        g_assert(!failed);
        if (done) {
            return;
        }
        g_usleep(10 * 1000);
    }
    g_assert_not_reached();
}

/* A stalled transaction survives migration and is resumed on the target */
static void test_stall_migrate(void)
{
    Fixture f;
    QTestState *dst;
    g_autofree char *path = NULL;
    g_autofree char *out_uri = NULL;
    g_autofree char *in_uri = NULL;
    uint16_t stag;
    int fd;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    fd = g_file_open_tmp("smmuv3-stall-mig-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    out_uri = g_strdup_printf("exec:cat > %s", path);
    in_uri = g_strdup_printf("exec:cat %s", path);

    stag = stall_copy(&f);
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", out_uri);
    wait_migration(f.qts);
    qtest_quit(f.qts);

    dst = qtest_initf("-M virt,iommu=smmuv3 -nodefaults "
                      "-device pldma,fault-mode=stall,num-channels=1 "
                      "-incoming defer");
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", in_uri);
    wait_migration(dst);
    unlink(path);
    f.qts = dst;
    f.smmu.qts = dst;

    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_STALLED);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    fixture_fini(&f);
}

/* STALL_MODEL = force: faults stall even with CD.S = 0 */
static void test_stall_force(void)
{
    Fixture f;
    uint16_t stag;

    if (!fixture_init(&f, " -global arm-smmuv3.stall-model=force")) {
        return;
    }
    qsmmu_write_cd(&f.smmu, f.cdtab, SSID, ASID, f.ttb, false);
    qsmmu_cfgi_cd(&f.smmu, PLDMA_SID, SSID);
    stag = stall_copy(&f);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    fixture_fini(&f);
}

/* CD.S = 1 under STE.S1STALLD = 1 is C_BAD_CD */
static void test_stalld_bad_cd(void)
{
    Fixture f;
    uint64_t evt[4];

    if (!fixture_init(&f, NULL)) {
        return;
    }
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, f.cdtab, S1CDMAX,
                     QSMMU_S1DSS_SSID0, true);
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_ERROR);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_C_BAD_CD);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 1);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, SSID);
    fixture_fini(&f);
}

/* Without PASID, STE.S1DSS = SSID0 makes the transactions use CD 0 */
static void test_no_substream(void)
{
    Fixture f;
    uint16_t stag;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    qsmmu_write_cd(&f.smmu, f.cdtab, 0, ASID + 1, f.ttb, true);
    qsmmu_cfgi_cd(&f.smmu, PLDMA_SID, 0);
    bind_channel(&f, 0);
    stag = stall_copy(&f);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    fixture_fini(&f);
}

/* 2-level CD table with 4KB leaves, SSIDs in different leaves */
static void test_cd_2level(void)
{
    Fixture f;
    uint64_t evt[4];
    uint64_t l1;
    uint16_t stag;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    l1 = qsmmu_cd_table_2l(&f.smmu, 8);
    qsmmu_write_cd_2l(&f.smmu, l1, 200, ASID, f.ttb, true);
    qsmmu_set_ste_s1_fmt(&f.smmu, PLDMA_SID, l1, QSMMU_S1FMT_64_4K, 8,
                         QSMMU_S1DSS_SSID0, false);
    bind_channel(&f, PLDMA_CHB_PASID_EN | 200);
    stag = stall_copy(&f);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);

    /* SSID 70 lives in a leaf whose L1 descriptor is invalid */
    bind_channel(&f, PLDMA_CHB_PASID_EN | 70);
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_ERROR);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_C_BAD_SUBSTREAMID);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, 70);
    fixture_fini(&f);
}

/* SMMU registers and fields used by the tests below */
#define SMMU_CR0            0x20
#define SMMU_CR0ACK         0x24
#define SMMU_GBPA           0x44
#define SMMU_IRQ_CTRL       0x50
#define SMMU_GERROR         0x60
#define SMMU_GERRORN        0x64
#define SMMU_STRTAB_BASE    0x80
#define SMMU_CMDQ_BASE      0x90
#define SMMU_CMDQ_PROD      0x98
#define SMMU_CMDQ_CONS      0x9c
#define SMMU_EVENTQ_BASE    0xa0
#define SMMU_EVENTQ_PROD    0x100a8
#define SMMU_EVENTQ_CONS    0x100ac
#define GBPA_RESET_VAL      0x1000      /* ABORT */
#define EVENTQ_OVFLG        (1u << 31)  /* PROD.OVFLG, CONS.OVACKFLG */
#define CMD_CFGI_CD_ALL     0x06

#define EVT_F_STE_FETCH     0x03
#define EVT_C_BAD_STE       0x04
#define EVT_F_CD_FETCH      0x09

/* Guest physical addresses with nothing behind them (virt, 128 MiB RAM) */
#define PA_HOLE             0x60000000ULL

static uint32_t smmu_gerror(Fixture *f)
{
    return qsmmu_readl(&f->smmu, SMMU_GERROR) ^
           qsmmu_readl(&f->smmu, SMMU_GERRORN);
}

/*
 * Several channels, each with its own ring, completion record and
 * destination (second page unmapped), all bound to the process (SSID 1)
 * and copying from VA_SRC.
 */
#define MC_VA(n)            (0x20000000ULL + (uint64_t)(n) * 0x100000)
#define MC_RING(n)          MC_VA(n)
#define MC_COMPL(n)         (MC_VA(n) + 0x1000)
#define MC_DST(n)           (MC_VA(n) + 0x4000)
#define MC_FAULT_VA(n)      (MC_DST(n) + 0x1000)
#define MC_COOKIE(n)        (0xc0c1e00ULL + (n))

typedef struct Chan {
    int n;
    uint64_t pa_ring, pa_compl, pa_dst;
    uint32_t tail;
} Chan;

static uint32_t chn_readl(Fixture *f, int n, uint64_t off)
{
    return pldma_readl(f, PLDMA_CH_PAGE_OFFSET(n) + off);
}

static void chn_writel(Fixture *f, int n, uint64_t off, uint32_t val)
{
    pldma_writel(f, PLDMA_CH_PAGE_OFFSET(n) + off, val);
}

static uint32_t chn_cnt(Fixture *f, int n, uint64_t cnt)
{
    return chn_readl(f, n, PLDMA_CH_CNT_OFFSET + cnt);
}

static void chan_setup(Fixture *f, Chan *c, int n)
{
    uint64_t bind = PLDMA_CH_BIND(n);

    c->n = n;
    c->tail = 0;
    c->pa_ring = qsmmu_map_new(&f->smmu, f->ttb, MC_RING(n), 0x1000, true);
    c->pa_compl = qsmmu_map_new(&f->smmu, f->ttb, MC_COMPL(n), 0x1000, true);
    c->pa_dst = qsmmu_alloc(&f->smmu, XFER, 0x1000);
    qsmmu_map(&f->smmu, f->ttb, MC_DST(n), c->pa_dst, true);

    pldma_writel(f, bind + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    pldma_writel(f, bind + PLDMA_CHB_PASID, PLDMA_CHB_PASID_EN | SSID);
    pldma_writel(f, bind + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    chn_writel(f, n, PLDMA_CH_RING_BASE_LO, (uint32_t)MC_RING(n));
    chn_writel(f, n, PLDMA_CH_RING_BASE_HI, MC_RING(n) >> 32);
    chn_writel(f, n, PLDMA_CH_RING_SIZE, RING_SIZE);
    g_assert_cmpuint(chn_readl(f, n, PLDMA_CH_STATE), ==, PLDMA_STATE_IDLE);
}

/* Queue a COPY of XFER bytes from VA_SRC to MC_DST(n), dst cleared */
static void chan_submit(Fixture *f, Chan *c)
{
    uint64_t d = c->pa_ring + (c->tail % RING_SIZE) * PLDMA_DESC_SIZE;
    QTestState *qts = f->qts;

    qtest_memset(qts, c->pa_dst, 0, XFER);
    qtest_memset(qts, d, 0, PLDMA_DESC_SIZE);
    qtest_memset(qts, c->pa_compl, 0, PLDMA_COMPL_SIZE);
    qtest_writeb(qts, d + PLDMA_DESC_OPCODE, PLDMA_OP_COPY);
    qtest_writel(qts, d + PLDMA_DESC_LEN, XFER);
    qtest_writeq(qts, d + PLDMA_DESC_SRC, VA_SRC);
    qtest_writeq(qts, d + PLDMA_DESC_DST, MC_DST(c->n));
    qtest_writeq(qts, d + PLDMA_DESC_COMPL, MC_COMPL(c->n));
    qtest_writeq(qts, d + PLDMA_DESC_COOKIE, MC_COOKIE(c->n));
    c->tail = (c->tail + 1) % RING_SIZE;
    chn_writel(f, c->n, PLDMA_CH_RING_TAIL, c->tail);
}

static void chan_wait_state(Fixture *f, Chan *c, uint32_t state)
{
    int i;

    for (i = 0; i < 10000; i++) {
        if (chn_readl(f, c->n, PLDMA_CH_STATE) == state) {
            return;
        }
        qtest_clock_step(f->qts, 1000);
    }
    g_assert_cmpuint(chn_readl(f, c->n, PLDMA_CH_STATE), ==, state);
}

static uint32_t chan_wait_completion(Fixture *f, Chan *c)
{
    uint32_t st = 0;
    int i;

    for (i = 0; i < 10000; i++) {
        st = qtest_readl(f->qts, c->pa_compl + PLDMA_COMPL_STATUS);
        if (st != PLDMA_ST_PENDING) {
            break;
        }
        qtest_clock_step(f->qts, 1000);
    }
    return st;
}

/* The completion record of @c, field by field */
static void chan_check_compl(Fixture *f, Chan *c, uint32_t status,
                             uint64_t bytes, uint64_t fault_va)
{
    g_assert_cmpuint(qtest_readl(f->qts, c->pa_compl + PLDMA_COMPL_STATUS),
                     ==, status);
    g_assert_cmphex(qtest_readq(f->qts, c->pa_compl + PLDMA_COMPL_BYTES),
                    ==, bytes);
    g_assert_cmphex(qtest_readq(f->qts, c->pa_compl + PLDMA_COMPL_FAULT_VA),
                    ==, fault_va);
    g_assert_cmphex(qtest_readq(f->qts, c->pa_compl + PLDMA_COMPL_COOKIE),
                    ==, MC_COOKIE(c->n));
}

/* The first @len bytes of the destination are the source, the rest 0 */
static void chan_check_dst(Fixture *f, Chan *c, uint64_t len)
{
    g_autofree uint8_t *buf = g_malloc(XFER);
    int i;

    qtest_memread(f->qts, c->pa_dst, buf, XFER);
    for (i = 0; i < XFER; i++) {
        g_assert_cmphex(buf[i], ==, i < len ? (uint8_t)(i * 7 + 3) : 0);
    }
}

/* Map the missing destination page of @c, as an IOPF handler would */
static void chan_fix(Fixture *f, Chan *c)
{
    qsmmu_map(&f->smmu, f->ttb, MC_FAULT_VA(c->n), c->pa_dst + 0x1000, true);
    qsmmu_tlbi_va(&f->smmu, ASID, MC_FAULT_VA(c->n));
}

/* Pop the translation fault of @c's missing page; returns its STAG */
static uint16_t chan_pop_fault(Fixture *f, Chan *c, bool stall)
{
    uint64_t evt[4];

    g_assert(qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, stall);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, PLDMA_SID);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 1);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, SSID);
    g_assert_cmphex(QSMMU_EVT_ADDR(evt), ==, MC_FAULT_VA(c->n));
    g_assert_cmpuint(QSMMU_EVT_RNW(evt), ==, 0);
    return QSMMU_EVT_STAG(evt);
}

/* Retry the stall @stag of @c after fixing its page; check the copy */
static void chan_retry_ok(Fixture *f, Chan *c, uint16_t stag)
{
    chan_fix(f, c);
    qsmmu_resume(&f->smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f->smmu));
    g_assert_cmpuint(chan_wait_completion(f, c), ==, PLDMA_ST_SUCCESS);
    chan_check_compl(f, c, PLDMA_ST_SUCCESS, XFER, 0);
    chan_check_dst(f, c, XFER);
}

/*
 * Event queue full with stalls (docs/specs/smmuv3-stall.rst, "Event queue
 * full").  The 2-entry queue takes the stall events of two channels.  The
 * third fault still stalls: its event is held back, not lost, and no
 * overflow is reported, since the architecture does not let an SMMU lose
 * the event of a stalled transaction.  It is written as soon as the guest
 * consumes an event.  Disabling the event queue terminates a stall whose
 * event is still held; the others, which software has seen, stay.
 */
static void test_evtq_full(void)
{
    Fixture f;
    Chan c[3];
    uint16_t stag[3];
    uint32_t prod;
    uint64_t evt[4];
    int i;

    if (!fixture_init_full(&f, 3, 1, NULL)) {
        return;
    }
    for (i = 0; i < 3; i++) {
        chan_setup(&f, &c[i], i);
    }

    for (i = 0; i < 2; i++) {
        chan_submit(&f, &c[i]);
        chan_wait_state(&f, &c[i], PLDMA_STATE_STALLED);
    }
    prod = qsmmu_readl(&f.smmu, SMMU_EVENTQ_PROD);
    g_assert_cmphex(prod, ==, 2);               /* full: wrap 1, index 0 */

    /* The third fault stalls too, its event waiting for room */
    chan_submit(&f, &c[2]);
    chan_wait_state(&f, &c[2], PLDMA_STATE_STALLED);
    g_assert_cmpuint(chn_cnt(&f, 2, PLDMA_CNT_STALLS), ==, 1);
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 0x7);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_EVENTQ_PROD), ==, 2);
    g_assert_cmphex(smmu_gerror(&f), ==, 0);

    /* Each event consumed makes room for the held one: all three, in order */
    for (i = 0; i < 3; i++) {
        stag[i] = chan_pop_fault(&f, &c[i], true);
    }
    g_assert_cmpuint(stag[0], !=, stag[1]);
    g_assert_cmpuint(stag[1], !=, stag[2]);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_EVENTQ_PROD) & EVENTQ_OVFLG,
                    ==, 0);

    for (i = 0; i < 3; i++) {
        chan_retry_ok(&f, &c[i], stag[i]);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_STALLS), ==, 1);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_RESTARTS), ==, 1);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_ABORTS), ==, 0);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_ERRORS), ==, 0);
    }
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 0);

    /* Full again, one event held; then the event queue is disabled */
    for (i = 0; i < 3; i++) {
        qsmmu_unmap(&f.smmu, f.ttb, MC_FAULT_VA(i));
        qsmmu_tlbi_va(&f.smmu, ASID, MC_FAULT_VA(i));
        chan_submit(&f, &c[i]);
        chan_wait_state(&f, &c[i], PLDMA_STATE_STALLED);
    }
    qsmmu_writel(&f.smmu, SMMU_CR0, (1u << 3) | (1u << 0)); /* no EVENTQEN */
    g_assert_cmpuint(chan_wait_completion(&f, &c[2]), ==, PLDMA_ST_ABORTED);
    chan_check_compl(&f, &c[2], PLDMA_ST_ABORTED, 0x1000, MC_FAULT_VA(2));
    g_assert_cmpuint(chn_cnt(&f, 2, PLDMA_CNT_ABORTS), ==, 1);
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 0x3);

    /* The two whose events were recorded still resume */
    qsmmu_writel(&f.smmu, SMMU_CR0, (1u << 3) | (1u << 2) | (1u << 0));
    for (i = 0; i < 2; i++) {
        stag[i] = chan_pop_fault(&f, &c[i], true);
    }
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    for (i = 0; i < 2; i++) {
        chan_retry_ok(&f, &c[i], stag[i]);
    }
    g_assert_cmphex(smmu_gerror(&f), ==, 0);
    fixture_fini(&f);
}

/*
 * System reset with a transaction stalled: the SMMU's registers are back
 * to their reset values, the channel is reset, nothing is written for the
 * stalled descriptor, and a CMD_RESUME with the old STAG after the SMMU is
 * enabled again does nothing.
 */
static void test_reset_stalled(void)
{
    Fixture f;
    uint64_t evt[4];
    uint16_t stag, stag2;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    stag = stall_copy(&f);
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 1);

    qtest_system_reset(f.qts);

    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_CR0), ==, 0);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_CR0ACK), ==, 0);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_GBPA), ==, GBPA_RESET_VAL);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_IRQ_CTRL), ==, 0);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_GERROR), ==, 0);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_GERRORN), ==, 0);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_CMDQ_PROD), ==, 0);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_CMDQ_CONS), ==, 0);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_EVENTQ_PROD), ==, 0);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_EVENTQ_CONS), ==, 0);
    g_assert_cmpuint(IDR5_STALL_MAX(smmu_idr(f.qts, 5)), ==, 64);

    g_assert_cmpuint(pldma_readl(&f, PLDMA_CH_BIND(0) + PLDMA_CHB_STATE), ==,
                     PLDMA_STATE_DISABLED);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_DISABLED);
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_RING_HEAD), ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_COMPLETED), ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS),
                     ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ABORTS),
                     ==, 0);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);

    /* Same tables, SMMU enabled again, channel bound again */
    qsmmu_enable(&f.smmu);
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, f.cdtab, S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    bind_channel(&f, PLDMA_CHB_PASID_EN | SSID);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);

    /* The old STAG resumes nothing */
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    qsmmu_cmd_sync(&f.smmu);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_IDLE);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_COMPLETED), ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_RESTARTS),
                     ==, 0);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));

    /* Everything works: a copy, then a stall (STAGs restart) and a retry */
    qtest_memset(f.qts, f.pa_dst, 0, XFER);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    qsmmu_unmap(&f.smmu, f.ttb, VA_DST + 0x1000);
    qsmmu_tlbi_va(&f.smmu, ASID, VA_DST + 0x1000);
    stag2 = stall_copy(&f);
    g_assert_cmpuint(stag2, ==, stag);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag2, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_COMPLETED), ==, 2);
    g_assert_cmphex(smmu_gerror(&f), ==, 0);
    fixture_fini(&f);
}

/*
 * More faults than STALL_MAX: the first two stall, the others are
 * terminated (Stall = 0) and complete with FAULT; the stalled ones still
 * resume, and once they have, a new fault stalls again.
 */
static void test_stall_max(void)
{
    Fixture f;
    Chan c[4];
    uint16_t stag[2];
    uint64_t evt[4];
    int i;

    if (!fixture_init_full(&f, 4, 8, " -global arm-smmuv3.stall-max=2")) {
        return;
    }
    g_assert_cmpuint(IDR5_STALL_MAX(smmu_idr(f.qts, 5)), ==, 2);
    for (i = 0; i < 4; i++) {
        chan_setup(&f, &c[i], i);
    }
    for (i = 0; i < 4; i++) {
        chan_submit(&f, &c[i]);
        if (i < 2) {
            chan_wait_state(&f, &c[i], PLDMA_STATE_STALLED);
        } else {
            g_assert_cmpuint(chan_wait_completion(&f, &c[i]), ==,
                             PLDMA_ST_FAULT);
        }
    }
    for (i = 0; i < 4; i++) {
        uint16_t t = chan_pop_fault(&f, &c[i], i < 2);

        if (i < 2) {
            stag[i] = t;
        }
    }
    g_assert_cmpuint(stag[0], !=, stag[1]);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 0x3);

    for (i = 2; i < 4; i++) {
        chan_check_compl(&f, &c[i], PLDMA_ST_FAULT, 0x1000, MC_FAULT_VA(i));
        chan_check_dst(&f, &c[i], 0x1000);
        g_assert_cmpuint(chn_readl(&f, i, PLDMA_CH_STATE), ==,
                         PLDMA_STATE_IDLE);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_STALLS), ==, 0);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_ERRORS), ==, 1);
    }
    for (i = 0; i < 2; i++) {
        chan_retry_ok(&f, &c[i], stag[i]);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_STALLS), ==, 1);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_RESTARTS), ==, 1);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_ERRORS), ==, 0);
    }

    /* The stall table has room again */
    for (i = 2; i < 4; i++) {
        chan_submit(&f, &c[i]);
        chan_wait_state(&f, &c[i], PLDMA_STATE_STALLED);
        stag[i - 2] = chan_pop_fault(&f, &c[i], true);
    }
    for (i = 2; i < 4; i++) {
        chan_retry_ok(&f, &c[i], stag[i - 2]);
    }
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(smmu_gerror(&f), ==, 0);
    fixture_fini(&f);
}

/*
 * CMD_RESUME for a STAG or a StreamID with no stall and CMD_STALL_TERM for
 * a StreamID with no stall are ignored, without a command error.
 */
static void test_resume_unknown(void)
{
    Fixture f;
    uint64_t evt[4];
    uint16_t stag;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    qsmmu_resume(&f.smmu, PLDMA_SID, 0x1234, QSMMU_RESUME_RETRY);
    qsmmu_resume(&f.smmu, PLDMA_SID, 0, QSMMU_RESUME_ABORT);
    qsmmu_resume(&f.smmu, PLDMA_SID + 5, 1, QSMMU_RESUME_TERM);
    qsmmu_stall_term(&f.smmu, PLDMA_SID);
    qsmmu_stall_term(&f.smmu, 0x1ffff);
    qsmmu_stall_term(&f.smmu, 0x8);         /* a PCI StreamID */
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_CMDQ_CONS), ==,
                    f.smmu.cmdq_prod);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));

    /* A stall is left alone by commands for another STAG or StreamID */
    stag = stall_copy(&f);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag ^ 0x8000, QSMMU_RESUME_ABORT);
    qsmmu_resume(&f.smmu, PLDMA_SID + 1, stag, QSMMU_RESUME_ABORT);
    qsmmu_stall_term(&f.smmu, PLDMA_SID + 1);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ABORTS),
                     ==, 0);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);

    /* and still resumes */
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_tlbi_va(&f.smmu, ASID, VA_DST + 0x1000);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);

    /* A second RESUME of the completed STAG is ignored too */
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_ABORT);
    qsmmu_cmd_sync(&f.smmu);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ABORTS),
                     ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_RESTARTS),
                     ==, 1);

    /* The SMMU still translates */
    qtest_memset(f.qts, f.pa_dst, 0, XFER);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(smmu_gerror(&f), ==, 0);
    fixture_fini(&f);
}

/* The stalled COPY of stall_copy() was terminated: check everything */
static void check_terminated(Fixture *f, uint32_t aborts)
{
    g_assert_cmpuint(wait_completion(f), ==, PLDMA_ST_ABORTED);
    g_assert_cmphex(qtest_readq(f->qts, f->pa_compl + PLDMA_COMPL_BYTES), ==,
                    0x1000);
    g_assert_cmphex(qtest_readq(f->qts, f->pa_compl + PLDMA_COMPL_FAULT_VA),
                    ==, VA_DST + 0x1000);
    g_assert_cmphex(qtest_readq(f->qts, f->pa_compl + PLDMA_COMPL_COOKIE),
                    ==, 0xc0c0);
    wait_state(f, PLDMA_STATE_IDLE);
    g_assert_cmpuint(ch_readl(f, PLDMA_CH_LAST_STATUS), ==, PLDMA_ST_ABORTED);
    g_assert_cmpuint(ch_readl(f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ABORTS),
                     ==, aborts);
    g_assert_cmpuint(ch_readl(f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS),
                     ==, aborts);
    g_assert_cmpuint(ch_readl(f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ERRORS),
                     ==, aborts);
    g_assert_cmphex(pldma_readl(f, PLDMA_STALLED_CHANNELS), ==, 0);
}

/* Configuration invalidations while stalled */
static void test_cfgi_stalled(void)
{
    Fixture f;
    uint64_t evt[4];
    uint16_t stag;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    /* CFGI_CD of another substream and CFGI_STE of another StreamID */
    stag = stall_copy(&f);
    qsmmu_cfgi_cd(&f.smmu, PLDMA_SID, SSID + 1);
    qsmmu_cfgi_ste(&f.smmu, PLDMA_SID + 1);
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);

    /* CFGI_STE terminates it; a late RESUME of its STAG is ignored */
    qsmmu_cfgi_ste(&f.smmu, PLDMA_SID);
    check_terminated(&f, 1);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_IDLE);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_COMPLETED), ==, 1);

    /* CFGI_CD of its substream */
    stall_copy(&f);
    qsmmu_cfgi_cd(&f.smmu, PLDMA_SID, SSID);
    check_terminated(&f, 2);

    /* CFGI_CD_ALL */
    stall_copy(&f);
    qsmmu_cmd(&f.smmu, CMD_CFGI_CD_ALL | ((uint64_t)PLDMA_SID << 32), 0);
    qsmmu_cmd_sync(&f.smmu);
    check_terminated(&f, 3);

    /* CFGI_ALL */
    stall_copy(&f);
    qsmmu_cfgi_all(&f.smmu);
    check_terminated(&f, 4);

    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_COMPLETED), ==, 5);
    fixture_fini(&f);
}

/*
 * Run a COPY on channel 0 whose descriptor fetch hits a configuration
 * error; check the single event, then rebind the channel.
 */
static void expect_config_error(Fixture *f, uint32_t type, uint64_t fetch)
{
    uint64_t evt[4];

    g_test_message("expecting event 0x%x", type);
    submit_copy(f);
    wait_state(f, PLDMA_STATE_ERROR);
    g_assert_cmpuint(ch_readl(f, PLDMA_CH_ERROR), ==, PLDMA_ERR_DESC_FETCH);
    g_assert(qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, type);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, PLDMA_SID);
    if (type == EVT_F_STE_FETCH || type == EVT_F_CD_FETCH) {
        /* FetchAddr[55:3] in bits [247:195], for both (IHI 0070 7.3.4/10) */
        g_assert_cmphex(evt[3] & 0x00fffffffffffff8ULL, ==, fetch);
    }
    if (type != EVT_F_STE_FETCH) {
        g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 1);
        g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, SSID);
    }
    g_assert(!qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(smmu_gerror(f), ==, 0);
    bind_channel(f, PLDMA_CHB_PASID_EN | SSID);
}

/* Malformed STEs and CDs, and configuration structures outside RAM */
static void test_bad_config(void)
{
    Fixture f;
    uint64_t l1;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    /* Reserved STE.S1FMT */
    qsmmu_set_ste_s1_fmt(&f.smmu, PLDMA_SID, f.cdtab, 3, S1CDMAX,
                         QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, EVT_C_BAD_STE, 0);
    /* STE.S1CDMAX above IDR1.SSIDSIZE (20) */
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, f.cdtab, 21, QSMMU_S1DSS_SSID0,
                     false);
    expect_config_error(&f, EVT_C_BAD_STE, 0);

    /* CD with V = 0 */
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, f.cdtab, S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    qtest_writeq(f.qts, f.cdtab + SSID * 64, 0);
    qsmmu_cfgi_cd(&f.smmu, PLDMA_SID, SSID);
    expect_config_error(&f, QSMMU_EVT_C_BAD_CD, 0);
    qsmmu_write_cd(&f.smmu, f.cdtab, SSID, ASID, f.ttb, true);

    /* CD table in a hole of the physical address space */
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, PA_HOLE, S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, EVT_F_CD_FETCH, PA_HOLE + SSID * 64);

    /*
     * CD table on the SMMU's own registers: CD 1 is read from offsets
     * 0x40-0x7f, whose first word has bit 31 (CD.V) clear.
     */
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, QSMMU_VIRT_BASE, S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, QSMMU_EVT_C_BAD_CD, 0);

    /*
     * CD table on the registers of the PLDMA, whose DMA is being
     * translated: QEMU's re-entrancy guard fails the read, F_CD_FETCH.
     */
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, PLDMA_BASE, S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, EVT_F_CD_FETCH, PLDMA_BASE + SSID * 64);

    /* Level-2 stream table in a hole */
    l1 = f.smmu.strtab_l1 + (PLDMA_SID >> 8) * 8;
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, f.cdtab, S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    {
        uint64_t good = qtest_readq(f.qts, l1);

        qtest_writeq(f.qts, l1, PA_HOLE | 9);
        qsmmu_cfgi_ste(&f.smmu, PLDMA_SID);
        expect_config_error(&f, EVT_F_STE_FETCH,
                            PA_HOLE + (PLDMA_SID & 0xff) * 64);
        qtest_writeq(f.qts, l1, good);
        qsmmu_cfgi_ste(&f.smmu, PLDMA_SID);
    }

    /* The SMMU is still fine */
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    fixture_fini(&f);
}

/* ---- Defects found by review (docs/specs/smmuv3-stall.rst, Hardening) ---- */

#define CR0_ALL             ((1u << 3) | (1u << 2) | (1u << 0))
#define GERROR_EVENTQ_ABT   (1u << 2)
#define PLDMA_B_SID         0x10001

/* The MMIO base of a second PLDMA on the platform bus, after the first */
static uint64_t find_second_pldma(Fixture *f)
{
    uint64_t a;

    for (a = PLDMA_BASE + 0x1000; a < PLDMA_BASE + 0x100000; a += 0x1000) {
        if (qtest_readl(f->qts, a + PLDMA_ID) == PLDMA_ID_VALUE &&
            qtest_readl(f->qts, a + PLDMA_STREAM_ID) == PLDMA_B_SID) {
            return a;
        }
    }
    g_assert_not_reached();
}

/* Queue a COPY of XFER bytes from VA_SRC to @dst on channel 0 */
static void submit_copy_to(Fixture *f, uint64_t dst)
{
    uint64_t d = f->pa_ring + (f->tail % RING_SIZE) * PLDMA_DESC_SIZE;

    qtest_memset(f->qts, d, 0, PLDMA_DESC_SIZE);
    qtest_memset(f->qts, f->pa_compl, 0, PLDMA_COMPL_SIZE);
    qtest_writeb(f->qts, d + PLDMA_DESC_OPCODE, PLDMA_OP_COPY);
    qtest_writel(f->qts, d + PLDMA_DESC_LEN, XFER);
    qtest_writeq(f->qts, d + PLDMA_DESC_SRC, VA_SRC);
    qtest_writeq(f->qts, d + PLDMA_DESC_DST, dst);
    qtest_writeq(f->qts, d + PLDMA_DESC_COMPL, VA_COMPL);
    f->tail = (f->tail + 1) % RING_SIZE;
    ch_writel(f, PLDMA_CH_RING_TAIL, f->tail);
}

/*
 * Defect 1: the SMMU wrote a stall's event while holding its mutex.  The
 * guest points the event queue at the channel page of a second PLDMA (B,
 * report mode) whose channel waits for RESTART: the event's input address
 * lands on B's RING_TAIL (low word, 0) and CMD (high word, 1 = RESTART).
 * A's channel is resumed and faults at 0x1_0000_0000: the event write runs
 * B's RESTART, whose DMA goes through the same SMMU and takes its mutex.
 * With the mutex held the VM froze here; now B restarts (and faults
 * again), A stalls, and the guest can still talk to the SMMU.
 */
static void test_evtq_on_mmio_deadlock(void)
{
    const uint64_t va_b_ring = 0x30000000, va_b_compl = 0x30001000;
    const uint64_t va_b_dst = 0x30004000, va_a_dst = 0xfffff000ULL;
    uint64_t b, cdtab_b, pa_b_ring, pa_b_compl, pa_a_dst, d, evt[4];
    Fixture f;
    uint16_t stag;

    if (!fixture_init_full(&f, 1, 1, " -device pldma,fault-mode=report,"
                           "num-channels=1,stream-id=0x10001")) {
        return;
    }
    b = find_second_pldma(&f);

    /* B: the same process, CD.S = 0 and S1STALLD, as Linux in report mode */
    cdtab_b = qsmmu_cd_table(&f.smmu, S1CDMAX);
    qsmmu_write_cd(&f.smmu, cdtab_b, SSID, ASID, f.ttb, false);
    qsmmu_set_ste_s1(&f.smmu, PLDMA_B_SID, cdtab_b, S1CDMAX,
                     QSMMU_S1DSS_SSID0, true);
    pa_b_ring = qsmmu_map_new(&f.smmu, f.ttb, va_b_ring, 0x1000, true);
    pa_b_compl = qsmmu_map_new(&f.smmu, f.ttb, va_b_compl, 0x1000, true);
    qsmmu_map_new(&f.smmu, f.ttb, va_b_dst, 0x1000, true); /* 2nd unmapped */
    qtest_writel(f.qts, b + PLDMA_CH_BIND(0) + PLDMA_CHB_PASID,
                 PLDMA_CHB_PASID_EN | SSID);
    qtest_writel(f.qts, b + PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL,
                 PLDMA_CHB_CTRL_ENABLE);
    qtest_writel(f.qts, b + PLDMA_CH_PAGE_OFFSET(0) + PLDMA_CH_RING_BASE_LO,
                 va_b_ring);
    qtest_writel(f.qts, b + PLDMA_CH_PAGE_OFFSET(0) + PLDMA_CH_RING_SIZE,
                 RING_SIZE);
    d = pa_b_ring;
    qtest_writeb(f.qts, d + PLDMA_DESC_OPCODE, PLDMA_OP_COPY);
    qtest_writel(f.qts, d + PLDMA_DESC_LEN, XFER);
    qtest_writeq(f.qts, d + PLDMA_DESC_SRC, VA_SRC);
    qtest_writeq(f.qts, d + PLDMA_DESC_DST, va_b_dst);
    qtest_writeq(f.qts, d + PLDMA_DESC_COMPL, va_b_compl);
    qtest_writel(f.qts, b + PLDMA_CH_PAGE_OFFSET(0) + PLDMA_CH_RING_TAIL, 1);
    for (d = 0; d < 1000 &&
         qtest_readl(f.qts, b + PLDMA_CH_PAGE_OFFSET(0) + PLDMA_CH_STATE) !=
         PLDMA_STATE_FAULTED; d++) {
        qtest_clock_step(f.qts, 1000);
    }
    g_assert_cmpuint(qtest_readl(f.qts, b + PLDMA_CH_PAGE_OFFSET(0) +
                                 PLDMA_CH_STATE), ==, PLDMA_STATE_FAULTED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));       /* B's fault, Stall = 0 */
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, PLDMA_B_SID);

    /* A stalls once with the queue in RAM */
    submit_copy_to(&f, va_a_dst);
    wait_state(&f, PLDMA_STATE_STALLED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_ADDR(evt), ==, va_a_dst);
    stag = QSMMU_EVT_STAG(evt);

    /* Its first page is fixed, the next one is at 0x1_0000_0000 */
    pa_a_dst = qsmmu_alloc(&f.smmu, 0x1000, 0x1000);
    qsmmu_map(&f.smmu, f.ttb, va_a_dst, pa_a_dst, true);
    qsmmu_set_evtq(&f.smmu, b + PLDMA_CH_PAGE_OFFSET(0), 1);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);

    /* QEMU answers: B was restarted by the event, and faulted again */
    g_assert_cmpuint(qtest_readl(f.qts, b + PLDMA_CH_PAGE_OFFSET(0) +
                                 PLDMA_CH_CNT_OFFSET + PLDMA_CNT_RESTARTS),
                     ==, 1);
    g_assert_cmpuint(qtest_readl(f.qts, b + PLDMA_CH_PAGE_OFFSET(0) +
                                 PLDMA_CH_STATE), ==, PLDMA_STATE_FAULTED);
    /* B's own fault event, written onto B's registers, was refused */
    g_assert_cmphex(smmu_gerror(&f) & GERROR_EVENTQ_ABT, ==,
                    GERROR_EVENTQ_ABT);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS),
                     ==, 2);

    /* Back to a queue in RAM: terminate A's stall, cancel B */
    qsmmu_set_evtq(&f.smmu, qsmmu_alloc(&f.smmu, 64, 64), 1);
    qsmmu_stall_term(&f.smmu, PLDMA_SID);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_ABORTED);
    g_assert_cmphex(qtest_readq(f.qts, f.pa_compl + PLDMA_COMPL_BYTES), ==,
                    0x1000);
    for (d = 0; d < 0x1000; d++) {
        g_assert_cmphex(qtest_readb(f.qts, pa_a_dst + d), ==,
                        (uint8_t)(d * 7 + 3));
    }
    qtest_writel(f.qts, b + PLDMA_CH_PAGE_OFFSET(0) + PLDMA_CH_CMD,
                 PLDMA_CMD_CANCEL);
    for (d = 0; d < 1000 && !qtest_readl(f.qts, pa_b_compl); d++) {
        qtest_clock_step(f.qts, 1000);
    }
    g_assert_cmpuint(qtest_readl(f.qts, pa_b_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_CANCELLED);
    fixture_fini(&f);
}

/*
 * Defect 2: work started from resumed() ran outside the PLDMA's
 * re-entrancy guard.  With the event queue on the PLDMA's own CH_BIND(0),
 * the SID word of a stall's event lands on CHB_CTRL and clears ENABLE,
 * under the very access that stalled.  The guard must refuse that write
 * (an event queue abort, the fault terminated) and leave the channel
 * enabled and consistent.
 */
static void test_evtq_on_own_registers(void)
{
    Fixture f;
    uint16_t stag;

    if (!fixture_init_full(&f, 1, 1, NULL)) {
        return;
    }
    stag = stall_copy(&f);
    qsmmu_set_evtq(&f.smmu, PLDMA_BASE + PLDMA_CH_BIND(0), 1);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);

    g_assert_cmphex(pldma_readl(&f, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL), ==,
                    PLDMA_CHB_CTRL_ENABLE);
    g_assert_cmphex(smmu_gerror(&f) & GERROR_EVENTQ_ABT, ==,
                    GERROR_EVENTQ_ABT);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_FAULT);
    g_assert_cmphex(qtest_readq(f.qts, f.pa_compl + PLDMA_COMPL_BYTES), ==,
                    0x1000);
    wait_state(&f, PLDMA_STATE_IDLE);
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS),
                     ==, 1);
    fixture_fini(&f);
}

/*
 * Defect 4: a report-mode PLDMA accepted stalls (CD.S = 1), which left
 * the channel STALLED although the driver only answers fault records, and
 * its fault-queue writes, which belong to no channel, left stalls nobody
 * resumed.  The device declines both; the SMMU terminates them.
 */
static void test_report_declines_stall(void)
{
    Fixture f;
    uint64_t evt[4], fq_va = 0x38000000;

    if (!fixture_init_dev(&f, "report", 1, 8, NULL)) {
        return;
    }
    /* A fault on a CD with CD.S = 1: terminated, reported, FAULTED */
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_FAULTED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS),
                     ==, 0);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_FAULTS),
                     ==, 1);
    ch_writel(&f, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_CANCELLED);

    /*
     * The fault queue without PASID goes to CD 0 (S1DSS = SSID0), a
     * stalling context whose tables do not map it
     */
    qsmmu_write_cd(&f.smmu, f.cdtab, 0, ASID + 1, qsmmu_pgtable_new(&f.smmu),
                   true);
    qsmmu_cfgi_cd(&f.smmu, PLDMA_SID, 0);
    pldma_writel(&f, PLDMA_FQ_BASE_LO, (uint32_t)fq_va);
    pldma_writel(&f, PLDMA_FQ_BASE_HI, fq_va >> 32);
    pldma_writel(&f, PLDMA_FQ_SIZE, 4);
    pldma_writel(&f, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_FAULTED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));        /* the channel's */
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert(qsmmu_pop_event(&f.smmu, evt));        /* the record's */
    g_assert_cmphex(QSMMU_EVT_ADDR(evt), ==, fq_va);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 0);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert_cmphex(pldma_readl(&f, PLDMA_FQ_STATUS) &
                    PLDMA_FQ_STATUS_WRITE_ERR, ==, PLDMA_FQ_STATUS_WRITE_ERR);
    /* Nothing is left stalled in the SMMU: STALL_TERM finds nothing */
    qsmmu_stall_term(&f.smmu, PLDMA_SID);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_FAULTED);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ABORTS),
                     ==, 0);
    fixture_fini(&f);
}

/*
 * Defect 5: the inline work budget applied per CMD_RESUME.  One write of
 * CMDQ_PROD carries RESUMEs for the stall and for the STAGs that the
 * resumed access will raise next (STAGs are predictable); the work done
 * within that one write must stay bounded (docs/specs/pldma.rst).
 */
static void test_resume_batch_bounded(void)
{
    enum { N = 64 };
    uint16_t stags[N];
    uint32_t stalls;
    Fixture f;
    int i;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    stags[0] = stall_copy(&f);
    for (i = 1; i < N; i++) {
        stags[i] = stags[0] + i;
    }
    /* The page stays unmapped: every retry stalls again at once */
    qsmmu_resume_batch(&f.smmu, PLDMA_SID, stags, N, QSMMU_RESUME_RETRY);
    stalls = ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS);
    g_test_message("stalls after one CMDQ_PROD write of %d RESUMEs: %u",
                   N, stalls);
    g_assert_cmpuint(stalls, <=, 1 + 16 + 1);
    g_assert(!qsmmu_cmdq_error(&f.smmu));

    /* The channel still works: fix the page and resume the last stall */
    wait_state(&f, PLDMA_STATE_STALLED);
    stalls = ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_tlbi_va(&f.smmu, ASID, VA_DST + 0x1000);
    qsmmu_resume(&f.smmu, PLDMA_SID, stags[0] + stalls - 1,
                 QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    fixture_fini(&f);
}

/* A 20-bit SubstreamID travels from the device to the SMMU intact */
static void test_wide_ssid(void)
{
    const uint32_t ssid = 0xabcde;
    Fixture f;
    uint64_t l1, evt[4];
    uint16_t stag;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    g_assert_cmpuint(PLDMA_CAP_PASID_BITS(pldma_readl(&f, PLDMA_CAP)), ==,
                     20);
    l1 = qsmmu_cd_table_2l(&f.smmu, 20);
    qsmmu_write_cd_2l(&f.smmu, l1, ssid, ASID, f.ttb, true);
    qsmmu_set_ste_s1_fmt(&f.smmu, PLDMA_SID, l1, QSMMU_S1FMT_64_4K, 20,
                         QSMMU_S1DSS_SSID0, false);
    bind_channel(&f, PLDMA_CHB_PASID_EN | ssid);
    g_assert_cmphex(ch_readl(&f, PLDMA_CH_PASID), ==,
                    PLDMA_CHB_PASID_EN | ssid);
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_STALLED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 1);
    g_assert_cmphex(QSMMU_EVT_SSID(evt), ==, ssid);
    stag = QSMMU_EVT_STAG(evt);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    fixture_fini(&f);
}

/*
 * Defect 6: the channel counters were properties added per instance at
 * realize.  "channels" is a class property: listed for the type, and
 * qom-get shows each channel's state and counters.
 */
static void test_channels_property(void)
{
    QDict *rsp, *ch0;
    QList *props, *chans;
    const QListEntry *e;
    bool found = false;
    Fixture f;

    if (!fixture_init(&f, ",id=dma0")) {
        return;
    }
    rsp = qtest_qmp(f.qts, "{ 'execute': 'qom-list-properties', "
                    "'arguments': { 'typename': 'pldma' } }");
    props = qdict_get_qlist(rsp, "return");
    QLIST_FOREACH_ENTRY(props, e) {
        QDict *p = qobject_to(QDict, qlist_entry_obj(e));

        found |= !strcmp(qdict_get_str(p, "name"), "channels");
        g_assert(!g_str_has_prefix(qdict_get_str(p, "name"), "ch0-"));
    }
    g_assert(found);
    qobject_unref(rsp);

    stall_copy(&f);
    rsp = qtest_qmp(f.qts, "{ 'execute': 'qom-get', 'arguments': { "
                    "'path': '/machine/peripheral/dma0', "
                    "'property': 'channels' } }");
    chans = qdict_get_qlist(rsp, "return");
    g_assert_cmpuint(qlist_size(chans), ==, 1);
    ch0 = qobject_to(QDict, qlist_peek(chans));
    g_assert_cmpstr(qdict_get_str(ch0, "state"), ==, "STALLED");
    g_assert_cmpuint(qdict_get_int(ch0, "stalls"), ==, 1);
    g_assert_cmpuint(qdict_get_int(ch0, "bytes"), ==, 0x1000);
    g_assert_cmpuint(qdict_get_int(ch0, "tail"), ==, 1);
    qobject_unref(rsp);
    fixture_fini(&f);
}

/* Run an incoming migration from @path; returns true if it completed */
static bool migrate_in(QTestState *dst, const char *path)
{
    g_autofree char *in_uri = g_strdup_printf("exec:cat %s", path);
    int i;

    /* a refused stream leaves the target running, status "failed" */
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", in_uri);
    for (i = 0; i < 3000; i++) {
        QDict *rsp = qtest_qmp(dst, "{ 'execute': 'query-migrate' }");
        QDict *ret = qdict_get_qdict(rsp, "return");
        g_autofree char *st = g_strdup(ret && qdict_haskey(ret, "status") ?
                                       qdict_get_str(ret, "status") : "");

        qobject_unref(rsp);
        if (!strcmp(st, "completed")) {
            return true;
        }
        if (!strcmp(st, "failed")) {
            return false;
        }
        g_usleep(10 * 1000);
    }
    g_assert_not_reached();
}

/* Replace the big-endian u32 at @off of the file at @path */
static void patch_be32(const char *path, size_t off, uint32_t val)
{
    g_autofree char *buf = NULL;
    size_t len;

    g_assert(g_file_get_contents(path, &buf, &len, NULL));
    g_assert(off + 4 <= len);
    stl_be_p(buf + off, val);
    g_assert(g_file_set_contents(path, buf, len, NULL));
}

/* Offset of the first occurrence of @needle in the file at @path */
static size_t find_in_file(const char *path, const void *needle, size_t n)
{
    g_autofree char *buf = NULL;
    size_t len, i;

    g_assert(g_file_get_contents(path, &buf, &len, NULL));
    for (i = 0; i + n <= len; i++) {
        if (!memcmp(buf + i, needle, n)) {
            return i;
        }
    }
    g_assert_not_reached();
}

/*
 * Defect 3: post_load trusted the stream.  A channel migrated RUNNING with
 * TAIL >= RING_SIZE cycled forever; a channel bound to a PASID beyond the
 * target's pasid-bits, or stalled on a transaction the SMMU does not hold,
 * could never proceed.  The target must refuse such streams.
 */
static void test_migrate_bad_stream(void)
{
    static const char *const dst_args =
        "-M virt,iommu=smmuv3 -nodefaults "
        "-device pldma,fault-mode=stall,num-channels=1%s -incoming defer";
    g_autofree char *path = NULL;
    g_autofree char *out_uri = NULL;
    uint8_t magic[8 + 4 * 4];
    QTestState *dst;
    Fixture f;
    size_t off;
    int fd;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    fd = g_file_open_tmp("smmuv3-stall-bad-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    out_uri = g_strdup_printf("exec:cat > %s", path);

    /* An idle channel: ring_base, ring_size, head, tail, state (BE) */
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", out_uri);
    wait_migration(f.qts);
    qtest_quit(f.qts);
    stq_be_p(magic, VA_RING);
    stl_be_p(magic + 8, RING_SIZE);
    stl_be_p(magic + 12, 0);
    stl_be_p(magic + 16, 0);
    stl_be_p(magic + 20, PLDMA_STATE_IDLE);
    off = find_in_file(path, magic, sizeof(magic));

    /* The stream as it is loads */
    dst = qtest_initf(dst_args, "");
    g_assert_true(migrate_in(dst, path));
    qtest_quit(dst);

    /* PASID 1 beyond pasid-bits=0 */
    dst = qtest_initf(dst_args, ",pasid-bits=0");
    g_assert_false(migrate_in(dst, path));
    qtest_quit(dst);

    /* RUNNING with TAIL = 0x100 >= RING_SIZE */
    patch_be32(path, off + 16, 0x100);
    patch_be32(path, off + 20, PLDMA_STATE_RUNNING);
    dst = qtest_initf(dst_args, "");
    g_assert_false(migrate_in(dst, path));
    qtest_quit(dst);

    /* STALLED without a pending stall: it could never be resumed */
    patch_be32(path, off + 16, 1);
    patch_be32(path, off + 20, PLDMA_STATE_STALLED);
    dst = qtest_initf(dst_args, "");
    g_assert_false(migrate_in(dst, path));
    qtest_quit(dst);
    unlink(path);
}

/*
 * CANCEL on a STALLED channel (stall-mode transfers a driver must bound in
 * time): the descriptor completes CANCELLED, the channel forgets the stall
 * and goes on with the next descriptor; the SMMU's later RESUME of the old
 * STAG changes nothing.
 */
static void test_cancel_stalled(void)
{
    Fixture f;
    uint16_t stag;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    stag = stall_copy(&f);
    ch_writel(&f, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_CANCELLED);
    g_assert_cmphex(qtest_readq(f.qts, f.pa_compl + PLDMA_COMPL_BYTES), ==,
                    0x1000);
    g_assert_cmphex(qtest_readq(f.qts, f.pa_compl + PLDMA_COMPL_FAULT_VA), ==,
                    VA_DST + 0x1000);
    wait_state(&f, PLDMA_STATE_IDLE);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_CANCELS),
                     ==, 1);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_ERROR), ==, PLDMA_ERR_NONE);

    /* the fix arrives late: the old stall's RESUME is ignored */
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    qsmmu_cmd_sync(&f.smmu);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_STATE), ==, PLDMA_STATE_IDLE);
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_RESTARTS),
                     ==, 0);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_CANCELLED);

    /* and the next descriptor runs */
    qtest_memset(f.qts, f.pa_dst, 0, XFER);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    fixture_fini(&f);
}

/*
 * A CANCELled stall stays in the SMMU's table until the OS answers it (its
 * IOPF worker may wait on a filler that never replies).  A channel cannot
 * pile up such orphans, one CANCEL cycle after another, until the table is
 * full and every other master's faults are terminated: while its orphan is
 * pending, a new fault of the channel is not stalled but ends the
 * descriptor with FAULT, and only one SMMU slot stays taken.  Once the OS
 * answers the orphan, the channel stalls again.
 */
static void test_cancel_orphan(void)
{
    Fixture f;
    uint64_t evt[4];
    uint16_t stag;
    int i;

    if (!fixture_init(&f, NULL)) {
        return;
    }
    stag = stall_copy(&f);
    ch_writel(&f, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_CANCELLED);
    wait_state(&f, PLDMA_STATE_IDLE);

    /* the same fault again, three times: never a second stall */
    for (i = 0; i < 3; i++) {
        submit_copy(&f);
        g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_FAULT);
        g_assert_cmphex(qtest_readq(f.qts, f.pa_compl + PLDMA_COMPL_FAULT_VA),
                        ==, VA_DST + 0x1000);
        wait_state(&f, PLDMA_STATE_IDLE);
        g_assert(qsmmu_pop_event(&f.smmu, evt));
        g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
        g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
        g_assert(!qsmmu_pop_event(&f.smmu, evt));
    }
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_STALLS),
                     ==, 1);
    /* the CANCELLED one and the three FAULTs */
    g_assert_cmpuint(ch_readl(&f, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_ERRORS),
                     ==, 4);

    /* the OS answers the orphan: the channel may stall again */
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_ABORT);
    qsmmu_cmd_sync(&f.smmu);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    stag = stall_copy(&f);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_resume(&f.smmu, PLDMA_SID, stag, QSMMU_RESUME_RETRY);
    qsmmu_cmd_sync(&f.smmu);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f);
    g_assert_cmphex(smmu_gerror(&f), ==, 0);
    fixture_fini(&f);
}

/*
 * Findings of generic-fuzz (tests/fuzz/findings), replayed: a stage-2 STE
 * with S2AA64 = 0 hit g_assert_not_reached() (QEMU aborted); a linear
 * stream table with LOG2SIZE = 63 shifted past 64 bits (UBSan).  The
 * descriptor fetch must fail cleanly and QEMU go on.
 */
static void fuzz_replay_fetch(const char *strtab_cfg_hex, uint32_t cfg)
{
    QTestState *qts;
    uint32_t st = 0;
    int i;

    if (!qtest_has_device("pldma")) {
        g_test_skip("no pldma device in this build");
        return;
    }
    qts = qtest_init("-M virt,iommu=smmuv3 -nodefaults "
                     "-device pldma,fault-mode=report");
    g_test_message("STRTAB_BASE_CFG %s", strtab_cfg_hex);
    qtest_writeq(qts, QSMMU_VIRT_BASE + 0x80, 0x40000000);     /* STRTAB */
    qtest_writel(qts, QSMMU_VIRT_BASE + 0x88, cfg);
    qtest_writeq(qts, 0x40400000, 0xd);     /* STE 0x10000: V, S2, S2AA64 0 */
    qtest_writel(qts, QSMMU_VIRT_BASE + 0x20, 1);               /* SMMUEN */
    qtest_writel(qts, PLDMA_BASE + PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL,
                 PLDMA_CHB_CTRL_ENABLE);
    qtest_writel(qts, PLDMA_BASE + PLDMA_CH_PAGE_OFFSET(0) +
                 PLDMA_CH_RING_BASE_LO, 0x41000000);
    qtest_writel(qts, PLDMA_BASE + PLDMA_CH_PAGE_OFFSET(0) +
                 PLDMA_CH_RING_SIZE, 8);
    qtest_writel(qts, PLDMA_BASE + PLDMA_CH_PAGE_OFFSET(0) +
                 PLDMA_CH_RING_TAIL, 1);
    for (i = 0; i < 1000; i++) {
        st = qtest_readl(qts, PLDMA_BASE + PLDMA_CH_PAGE_OFFSET(0) +
                         PLDMA_CH_STATE);
        if (st != PLDMA_STATE_RUNNING) {
            break;
        }
        qtest_clock_step(qts, 1000);
    }
    g_assert_cmpuint(st, ==, PLDMA_STATE_FAULTED);
    g_assert_true(qtest_readl(qts, PLDMA_BASE + PLDMA_CH_PAGE_OFFSET(0) +
                              PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_DESC);
    g_assert_cmphex(qtest_readl(qts, QSMMU_VIRT_BASE + 0x24) & 1, ==, 1);
    qtest_quit(qts);
}

static void test_fuzz_s2aa64(void)
{
    fuzz_replay_fetch("0x11 (linear, 2^17)", 0x11);
}

static void test_fuzz_strtab_log2size(void)
{
    fuzz_replay_fetch("0x3f (linear, 2^63)", 0x3f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/smmuv3-stall/idregs", test_idregs);
    qtest_add_func("/smmuv3-stall/pldma/copy", test_copy_mapped);
    qtest_add_func("/smmuv3-stall/pldma/stall-retry", test_stall_retry);
    qtest_add_func("/smmuv3-stall/pldma/stall-abort", test_stall_abort);
    qtest_add_func("/smmuv3-stall/pldma/stall-term", test_stall_term);
    qtest_add_func("/smmuv3-stall/pldma/stall-disabled", test_stall_disabled);
    qtest_add_func("/smmuv3-stall/pldma/bad-substream", test_bad_substream);
    qtest_add_func("/smmuv3-stall/pldma/stall-no-eventq",
                   test_stall_no_eventq);
    qtest_add_func("/smmuv3-stall/pldma/stall-force", test_stall_force);
    qtest_add_func("/smmuv3-stall/pldma/stall-migrate", test_stall_migrate);
    qtest_add_func("/smmuv3-stall/pldma/stalld-bad-cd", test_stalld_bad_cd);
    qtest_add_func("/smmuv3-stall/pldma/no-substream", test_no_substream);
    qtest_add_func("/smmuv3-stall/pldma/cd-2level", test_cd_2level);
    qtest_add_func("/smmuv3-stall/pldma/evtq-full", test_evtq_full);
    qtest_add_func("/smmuv3-stall/pldma/reset-stalled", test_reset_stalled);
    qtest_add_func("/smmuv3-stall/pldma/stall-max", test_stall_max);
    qtest_add_func("/smmuv3-stall/pldma/resume-unknown", test_resume_unknown);
    qtest_add_func("/smmuv3-stall/pldma/cfgi-stalled", test_cfgi_stalled);
    qtest_add_func("/smmuv3-stall/pldma/bad-config", test_bad_config);
    qtest_add_func("/smmuv3-stall/pldma/evtq-on-mmio-deadlock",
                   test_evtq_on_mmio_deadlock);
    qtest_add_func("/smmuv3-stall/pldma/evtq-on-own-registers",
                   test_evtq_on_own_registers);
    qtest_add_func("/smmuv3-stall/pldma/report-declines-stall",
                   test_report_declines_stall);
    qtest_add_func("/smmuv3-stall/pldma/resume-batch-bounded",
                   test_resume_batch_bounded);
    qtest_add_func("/smmuv3-stall/pldma/wide-ssid", test_wide_ssid);
    qtest_add_func("/smmuv3-stall/pldma/channels-property",
                   test_channels_property);
    qtest_add_func("/smmuv3-stall/pldma/migrate-bad-stream",
                   test_migrate_bad_stream);
    qtest_add_func("/smmuv3-stall/pldma/cancel-stalled", test_cancel_stalled);
    qtest_add_func("/smmuv3-stall/pldma/cancel-orphan", test_cancel_orphan);
    qtest_add_func("/smmuv3-stall/fuzz/ste-s2aa64", test_fuzz_s2aa64);
    qtest_add_func("/smmuv3-stall/fuzz/strtab-log2size",
                   test_fuzz_strtab_log2size);
    return g_test_run();
}
