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

static bool fixture_init(Fixture *f, const char *extra)
{
    int i;

    memset(f, 0, sizeof(*f));
    if (!qtest_has_device("pldma")) {
        g_test_skip("no pldma device in this build");
        return false;
    }
    f->qts = qtest_initf("-M virt,iommu=smmuv3 -nodefaults "
                         "-device pldma,fault-mode=stall,num-channels=1%s",
                         extra ? extra : "");
    if (pldma_readl(f, PLDMA_ID) != PLDMA_ID_VALUE ||
        pldma_readl(f, PLDMA_STREAM_ID) != PLDMA_SID) {
        qtest_quit(f->qts);
        g_test_skip("pldma not found at the first platform bus slot");
        return false;
    }
    g_assert(pldma_readl(f, PLDMA_CAP) & PLDMA_CAP_PASID);

    qsmmu_init(&f->smmu, f->qts, QSMMU_VIRT_BASE, SMMU_MEM, SMMU_MEM_SIZE);
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
    return g_test_run();
}
