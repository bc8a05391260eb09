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
#include "qobject/qdict.h"
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
    g_assert_cmpuint(IDR1_SSIDSIZE(smmu_idr(qts, 1)), ==, 8);
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
static bool fixture_init_full(Fixture *f, int nch, int evtq_log2,
                              const char *extra)
{
    int i;

    memset(f, 0, sizeof(*f));
    if (!qtest_has_device("pldma")) {
        g_test_skip("no pldma device in this build");
        return false;
    }
    f->qts = qtest_initf("-M virt,iommu=smmuv3 -nodefaults "
                         "-device pldma,fault-mode=stall,num-channels=%d%s",
                         nch, extra ? extra : "");
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

    /* One process: SSID 1, ASID 1, CD.S = 1 */
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
 * Event queue overflow with stalls.  The 2-entry queue takes the stall
 * events of two channels; the third fault cannot be recorded, so it is not
 * stalled (docs/specs/smmuv3-stall.rst: the transaction is terminated) and
 * the queue overflow is reported architecturally, by toggling
 * EVENTQ_PROD.OVFLG, not as an event queue abort in GERROR.  After the
 * guest drains the queue, the stalls resume and new faults stall again.
 */
static void test_evtq_overflow(void)
{
    Fixture f;
    Chan c[3];
    uint16_t stag[2];
    uint32_t prod, cons;
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

    chan_submit(&f, &c[2]);
    g_assert_cmpuint(chan_wait_completion(&f, &c[2]), ==, PLDMA_ST_FAULT);
    chan_check_compl(&f, &c[2], PLDMA_ST_FAULT, 0x1000, MC_FAULT_VA(2));
    chan_check_dst(&f, &c[2], 0x1000);
    g_assert_cmpuint(chn_readl(&f, 2, PLDMA_CH_STATE), ==, PLDMA_STATE_IDLE);
    g_assert_cmpuint(chn_cnt(&f, 2, PLDMA_CNT_STALLS), ==, 0);
    g_assert_cmpuint(chn_cnt(&f, 2, PLDMA_CNT_DESCS), ==, 1);
    g_assert_cmpuint(chn_cnt(&f, 2, PLDMA_CNT_ERRORS), ==, 1);
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 0x3);

    prod = qsmmu_readl(&f.smmu, SMMU_EVENTQ_PROD);
    cons = qsmmu_readl(&f.smmu, SMMU_EVENTQ_CONS);
    g_assert_cmphex(prod & ~EVENTQ_OVFLG, ==, 2);   /* nothing written */
    g_assert_cmphex(cons, ==, 0);
    g_assert_cmphex(prod & EVENTQ_OVFLG, ==, EVENTQ_OVFLG);  /* overflow */
    g_assert_cmphex(smmu_gerror(&f), ==, 0);

    /* The guest drains the queue: the two stalls, in order */
    for (i = 0; i < 2; i++) {
        stag[i] = chan_pop_fault(&f, &c[i], true);
    }
    g_assert_cmpuint(stag[0], !=, stag[1]);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    /* and acknowledges the overflow */
    qsmmu_writel(&f.smmu, SMMU_EVENTQ_CONS, f.smmu.evtq_cons | EVENTQ_OVFLG);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_EVENTQ_PROD), ==,
                    EVENTQ_OVFLG | 2);

    for (i = 0; i < 2; i++) {
        chan_retry_ok(&f, &c[i], stag[i]);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_STALLS), ==, 1);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_RESTARTS), ==, 1);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_ABORTS), ==, 0);
        g_assert_cmpuint(chn_cnt(&f, i, PLDMA_CNT_ERRORS), ==, 0);
    }
    g_assert_cmphex(pldma_readl(&f, PLDMA_STALLED_CHANNELS), ==, 0);

    /* With room in the queue, the terminated channel's fault now stalls */
    chan_submit(&f, &c[2]);
    chan_wait_state(&f, &c[2], PLDMA_STATE_STALLED);
    stag[0] = chan_pop_fault(&f, &c[2], true);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    chan_retry_ok(&f, &c[2], stag[0]);
    g_assert_cmpuint(chn_cnt(&f, 2, PLDMA_CNT_STALLS), ==, 1);
    g_assert_cmpuint(chn_cnt(&f, 2, PLDMA_CNT_DESCS), ==, 2);

    /* No new overflow, no error */
    g_assert_cmphex((qsmmu_readl(&f.smmu, SMMU_EVENTQ_PROD) ^
                     qsmmu_readl(&f.smmu, SMMU_EVENTQ_CONS)) & EVENTQ_OVFLG,
                    ==, 0);
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

    submit_copy(f);
    wait_state(f, PLDMA_STATE_ERROR);
    g_assert_cmpuint(ch_readl(f, PLDMA_CH_ERROR), ==, PLDMA_ERR_DESC_FETCH);
    g_assert(qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, type);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, PLDMA_SID);
    if (type == EVT_F_STE_FETCH) {
        /* FetchAddr[55:3] in bits [247:195] */
        g_assert_cmphex(evt[3] & 0x00fffffffffffff8ULL, ==, fetch);
    } else {
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
    /* STE.S1CDMAX above IDR1.SSIDSIZE */
    qsmmu_set_ste_s1(&f.smmu, PLDMA_SID, f.cdtab, 9, QSMMU_S1DSS_SSID0,
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
    expect_config_error(&f, EVT_F_CD_FETCH, 0);

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
    expect_config_error(&f, EVT_F_CD_FETCH, 0);

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
    qtest_add_func("/smmuv3-stall/pldma/evtq-overflow", test_evtq_overflow);
    qtest_add_func("/smmuv3-stall/pldma/reset-stalled", test_reset_stalled);
    qtest_add_func("/smmuv3-stall/pldma/stall-max", test_stall_max);
    qtest_add_func("/smmuv3-stall/pldma/resume-unknown", test_resume_unknown);
    qtest_add_func("/smmuv3-stall/pldma/cfgi-stalled", test_cfgi_stalled);
    qtest_add_func("/smmuv3-stall/pldma/bad-config", test_bad_config);
    return g_test_run();
}
