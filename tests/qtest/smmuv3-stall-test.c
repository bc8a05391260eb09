/*
 * QTest for the SMMUv3 substream and stall extensions, driving DMA through
 * the PLDMA device (docs/specs/smmuv3-stall.rst): the SMMU's stall model.
 * The PLDMA's own behaviour in stall mode is tested by pldma-smmu-test.
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pldma-smmu.h"

/* IDR fields */
#define IDR0_CD2L(v)        (((v) >> 19) & 1)
#define IDR0_STALL_MODEL(v) (((v) >> 24) & 3)
#define IDR1_SIDSIZE(v)     ((v) & 0x3f)
#define IDR1_SSIDSIZE(v)    (((v) >> 6) & 0x1f)
#define IDR5_OAS(v)         ((v) & 7)
#define IDR5_STALL_MAX(v)   ((v) >> 16)

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

static void test_copy_mapped(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    qpldma_smmu_map_fault(&f);
    qpldma_smmu_copy(&f);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    qpldma_smmu_fini(&f);
}

static void test_stall_retry(void)
{
    QPldmaSmmu f;
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    stag = qpldma_smmu_stall_copy(&f);

    /* A RESUME with a wrong STAG is ignored */
    qsmmu_resume(&f.smmu, QPS_SID, stag + 1, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_STALLED);

    /* Fix the page table, as the IOPF handler would, and retry */
    qpldma_smmu_map_fault(&f);
    qsmmu_tlbi_va(&f.smmu, QPS_ASID, QPS_VA_FAULT);
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    qpldma_smmu_fini(&f);
}

static void test_stall_abort(void)
{
    QPldmaSmmu f;
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    stag = qpldma_smmu_stall_copy(&f);
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_ABORT);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_ABORTED);
    g_assert_cmphex(qpldma_smmu_compl(&f, PLDMA_COMPL_BYTES), ==, 0x1000);
    qpldma_smmu_fini(&f);
}

static void test_stall_term(void)
{
    QPldmaSmmu f;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    qpldma_smmu_stall_copy(&f);
    qsmmu_stall_term(&f.smmu, QPS_SID);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_ABORTED);

    /* Invalidating the CD terminates the stalls of its substream */
    qpldma_smmu_wait_state(&f, PLDMA_STATE_IDLE);
    qpldma_smmu_stall_copy(&f);
    qsmmu_cfgi_cd(&f.smmu, QPS_SID, QPS_SSID);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_ABORTED);

    /*
     * So does disabling the SMMU.  The completion record is then written
     * untranslated (GBPA bypass), so look at the channel's counters.
     */
    qpldma_smmu_wait_state(&f, PLDMA_STATE_IDLE);
    qpldma_smmu_stall_copy(&f);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_ABORTS), ==, 2);
    qsmmu_writel(&f.smmu, 0x20, 0);
    g_assert_cmpuint(qpldma_smmu_state(&f), !=, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_ABORTS), ==, 3);
    qpldma_smmu_fini(&f);
}

static void test_stall_disabled(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    /* CD.S = 0: the fault is reported and the transaction terminated */
    qsmmu_write_cd(&f.smmu, f.cdtab, QPS_SSID, QPS_ASID, f.ttb, false);
    qsmmu_cfgi_cd(&f.smmu, QPS_SID, QPS_SSID);
    qpldma_smmu_copy(&f);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_FAULT);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, QPS_SSID);
    qpldma_smmu_fini(&f);
}

static void test_bad_substream(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    /* SSID 5 is beyond S1CDMAX: the descriptor fetch cannot translate */
    qpldma_smmu_bind(&f, PLDMA_CHB_PASID_EN | 5);
    qpldma_smmu_copy(&f);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_ERROR);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_DESC_FETCH);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_C_BAD_SUBSTREAMID);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, 5);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, QPS_SID);
    qpldma_smmu_fini(&f);
}

/*
 * A stall whose event cannot be recorded (event queue disabled) is not
 * stalled: the transaction is terminated (docs/specs/smmuv3-stall.rst).
 */
static void test_stall_no_eventq(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    qsmmu_writel(&f.smmu, 0x20, (1u << 3) | (1u << 0)); /* CMDQEN | SMMUEN */
    qpldma_smmu_copy(&f);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_FAULT);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_STALLS), ==, 0);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    qpldma_smmu_fini(&f);
}

/* A stalled transaction survives migration and is resumed on the target */
static void test_stall_migrate(void)
{
    QPldmaSmmu f;
    QTestState *dst;
    g_autofree char *path = NULL;
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    stag = qpldma_smmu_stall_copy(&f);
    path = qpldma_migrate_to_file(f.qts, "smmuv3-stall-mig-XXXXXX");
    qtest_quit(f.qts);

    dst = qtest_initf("-M virt,iommu=smmuv3 -nodefaults "
                      "-device pldma,fault-mode=stall,num-channels=1 "
                      "-incoming defer");
    g_assert_true(qpldma_migrate_from_file(dst, path));
    unlink(path);
    f.qts = dst;
    f.smmu.qts = dst;
    f.d.qts = dst;

    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_STALLED);
    qpldma_smmu_resume_ok(&f, stag);
    qpldma_smmu_fini(&f);
}

/* STALL_MODEL = force: faults stall even with CD.S = 0 */
static void test_stall_force(void)
{
    QPldmaSmmu f;
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8,
                          " -global arm-smmuv3.stall-model=force")) {
        return;
    }
    qsmmu_write_cd(&f.smmu, f.cdtab, QPS_SSID, QPS_ASID, f.ttb, false);
    qsmmu_cfgi_cd(&f.smmu, QPS_SID, QPS_SSID);
    stag = qpldma_smmu_stall_copy(&f);
    qpldma_smmu_resume_ok(&f, stag);
    qpldma_smmu_fini(&f);
}

/* CD.S = 1 under STE.S1STALLD = 1 is C_BAD_CD */
static void test_stalld_bad_cd(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    qsmmu_set_ste_s1(&f.smmu, QPS_SID, f.cdtab, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, true);
    qpldma_smmu_copy(&f);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_ERROR);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_C_BAD_CD);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 1);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, QPS_SSID);
    qpldma_smmu_fini(&f);
}

/* Without PASID, STE.S1DSS = SSID0 makes the transactions use CD 0 */
static void test_no_substream(void)
{
    QPldmaSmmu f;
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    qsmmu_write_cd(&f.smmu, f.cdtab, 0, QPS_ASID + 1, f.ttb, true);
    qsmmu_cfgi_cd(&f.smmu, QPS_SID, 0);
    qpldma_smmu_bind(&f, 0);
    stag = qpldma_smmu_stall_copy(&f);
    qpldma_smmu_resume_ok(&f, stag);
    qpldma_smmu_fini(&f);
}

/* 2-level CD table with 4KB leaves, SSIDs in different leaves */
static void test_cd_2level(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];
    uint64_t l1;
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    l1 = qsmmu_cd_table_2l(&f.smmu, 8);
    qsmmu_write_cd_2l(&f.smmu, l1, 200, QPS_ASID, f.ttb, true);
    qsmmu_set_ste_s1_fmt(&f.smmu, QPS_SID, l1, QSMMU_S1FMT_64_4K, 8,
                         QSMMU_S1DSS_SSID0, false);
    qpldma_smmu_bind(&f, PLDMA_CHB_PASID_EN | 200);
    stag = qpldma_smmu_stall_copy(&f);
    qpldma_smmu_resume_ok(&f, stag);

    /* SSID 70 lives in a leaf whose L1 descriptor is invalid */
    qpldma_smmu_bind(&f, PLDMA_CHB_PASID_EN | 70);
    qpldma_smmu_copy(&f);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_ERROR);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_C_BAD_SUBSTREAMID);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, 70);
    qpldma_smmu_fini(&f);
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

/*
 * Several channels, each with its own ring, completion record and
 * destination (second page unmapped), all bound to the process (SSID 1)
 * and copying from QPS_VA_SRC.
 */
#define MC_VA(n)            (0x20000000ULL + (uint64_t)(n) * 0x100000)
#define MC_RING(n)          MC_VA(n)
#define MC_COMPL(n)         (MC_VA(n) + 0x1000)
#define MC_DST(n)           (MC_VA(n) + 0x4000)
#define MC_FAULT_VA(n)      (MC_DST(n) + 0x1000)
#define MC_COOKIE(n)        (0xc0c1e00ULL + (n))

typedef struct Chan {
    int n;
    QPldmaRing ring;
    uint64_t pa_compl, pa_dst;
} Chan;

static void chan_setup(QPldmaSmmu *f, Chan *c, int n)
{
    uint64_t pa_ring;

    c->n = n;
    pa_ring = qsmmu_map_new(&f->smmu, f->ttb, MC_RING(n), 0x1000, true);
    c->pa_compl = qsmmu_map_new(&f->smmu, f->ttb, MC_COMPL(n), 0x1000, true);
    c->pa_dst = qsmmu_alloc(&f->smmu, QPS_XFER, 0x1000);
    qsmmu_map(&f->smmu, f->ttb, MC_DST(n), c->pa_dst, true);

    qpldma_ring_init_at(&f->d, &c->ring, n, pa_ring, MC_RING(n),
                        QPS_RING_SIZE, PLDMA_CHB_PASID_EN | QPS_SSID);
    g_assert_cmpuint(qpldma_ch_rd(&f->d, n, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_IDLE);
}

/* Queue a COPY of QPS_XFER bytes from QPS_VA_SRC to MC_DST(n), dst cleared */
static void chan_submit(QPldmaSmmu *f, Chan *c)
{
    uint8_t d[PLDMA_DESC_SIZE];

    qtest_memset(f->qts, c->pa_dst, 0, QPS_XFER);
    qtest_memset(f->qts, c->pa_compl, 0, PLDMA_COMPL_SIZE);
    qpldma_desc_copy(d, QPS_XFER, QPS_VA_SRC, MC_DST(c->n), MC_COMPL(c->n),
                     MC_COOKIE(c->n));
    qpldma_ring_post(&f->d, &c->ring, d);
}

static void chan_wait_state(QPldmaSmmu *f, Chan *c, uint32_t state)
{
    qpldma_wait_state(&f->d, c->n, state, qpldma_smmu_step, f, QPS_POLLS);
}

static uint32_t chan_wait_completion(QPldmaSmmu *f, Chan *c)
{
    return qpldma_wait_compl(&f->d, c->pa_compl, qpldma_smmu_step, f,
                             QPS_POLLS, NULL);
}

/* The completion record of @c, field by field */
static void chan_check_compl(QPldmaSmmu *f, Chan *c, uint32_t status,
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
static void chan_check_dst(QPldmaSmmu *f, Chan *c, uint64_t len)
{
    g_autofree uint8_t *buf = g_malloc(QPS_XFER);
    int i;

    qtest_memread(f->qts, c->pa_dst, buf, QPS_XFER);
    for (i = 0; i < QPS_XFER; i++) {
        g_assert_cmphex(buf[i], ==, i < len ? QPS_SRC_BYTE(i) : 0);
    }
}

/* Map the missing destination page of @c, as an IOPF handler would */
static void chan_fix(QPldmaSmmu *f, Chan *c)
{
    qsmmu_map(&f->smmu, f->ttb, MC_FAULT_VA(c->n), c->pa_dst + 0x1000, true);
    qsmmu_tlbi_va(&f->smmu, QPS_ASID, MC_FAULT_VA(c->n));
}

/* Pop the translation fault of @c's missing page; returns its STAG */
static uint16_t chan_pop_fault(QPldmaSmmu *f, Chan *c, bool stall)
{
    uint64_t evt[4];

    g_assert(qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, stall);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, QPS_SID);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 1);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, QPS_SSID);
    g_assert_cmphex(QSMMU_EVT_ADDR(evt), ==, MC_FAULT_VA(c->n));
    g_assert_cmpuint(QSMMU_EVT_RNW(evt), ==, 0);
    return QSMMU_EVT_STAG(evt);
}

/* Retry the stall @stag of @c after fixing its page; check the copy */
static void chan_retry_ok(QPldmaSmmu *f, Chan *c, uint16_t stag)
{
    chan_fix(f, c);
    qsmmu_resume(&f->smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f->smmu));
    g_assert_cmpuint(chan_wait_completion(f, c), ==, PLDMA_ST_SUCCESS);
    chan_check_compl(f, c, PLDMA_ST_SUCCESS, QPS_XFER, 0);
    chan_check_dst(f, c, QPS_XFER);
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
    QPldmaSmmu f;
    Chan c[3];
    uint16_t stag[3];
    uint32_t prod;
    uint64_t evt[4];
    int i;

    if (!qpldma_smmu_init(&f, "stall", 3, 1, NULL)) {
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
    g_assert_cmpuint(qpldma_ch_cnt(&f.d, 2, PLDMA_CNT_STALLS), ==, 1);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STALLED_CHANNELS), ==, 0x7);
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_EVENTQ_PROD), ==, 2);
    g_assert_cmphex(qsmmu_gerror(&f.smmu), ==, 0);

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
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_STALLS), ==, 1);
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_RESTARTS), ==, 1);
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_ABORTS), ==, 0);
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_ERRORS), ==, 0);
    }
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STALLED_CHANNELS), ==, 0);

    /* Full again, one event held; then the event queue is disabled */
    for (i = 0; i < 3; i++) {
        qsmmu_unmap(&f.smmu, f.ttb, MC_FAULT_VA(i));
        qsmmu_tlbi_va(&f.smmu, QPS_ASID, MC_FAULT_VA(i));
        chan_submit(&f, &c[i]);
        chan_wait_state(&f, &c[i], PLDMA_STATE_STALLED);
    }
    qsmmu_writel(&f.smmu, SMMU_CR0, (1u << 3) | (1u << 0)); /* no EVENTQEN */
    g_assert_cmpuint(chan_wait_completion(&f, &c[2]), ==, PLDMA_ST_ABORTED);
    chan_check_compl(&f, &c[2], PLDMA_ST_ABORTED, 0x1000, MC_FAULT_VA(2));
    g_assert_cmpuint(qpldma_ch_cnt(&f.d, 2, PLDMA_CNT_ABORTS), ==, 1);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STALLED_CHANNELS), ==, 0x3);

    /* The two whose events were recorded still resume */
    qsmmu_writel(&f.smmu, SMMU_CR0, (1u << 3) | (1u << 2) | (1u << 0));
    for (i = 0; i < 2; i++) {
        stag[i] = chan_pop_fault(&f, &c[i], true);
    }
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    for (i = 0; i < 2; i++) {
        chan_retry_ok(&f, &c[i], stag[i]);
    }
    g_assert_cmphex(qsmmu_gerror(&f.smmu), ==, 0);
    qpldma_smmu_fini(&f);
}

/*
 * System reset with a transaction stalled: the SMMU's registers are back
 * to their reset values, the channel is reset, nothing is written for the
 * stalled descriptor, and a CMD_RESUME with the old STAG after the SMMU is
 * enabled again does nothing.
 */
static void test_reset_stalled(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];
    uint16_t stag, stag2;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    stag = qpldma_smmu_stall_copy(&f);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STALLED_CHANNELS), ==, 1);

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

    g_assert_cmpuint(qpldma_rd(&f.d, PLDMA_CH_BIND(0) + PLDMA_CHB_STATE), ==,
                     PLDMA_STATE_DISABLED);
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_DISABLED);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STALLED_CHANNELS), ==, 0);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_RING_HEAD), ==, 0);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_COMPLETED), ==, 0);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_STALLS), ==, 0);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_ABORTS), ==, 0);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);

    /* Same tables, SMMU enabled again, channel bound again */
    qsmmu_enable(&f.smmu);
    qsmmu_set_ste_s1(&f.smmu, QPS_SID, f.cdtab, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    qpldma_smmu_bind(&f, PLDMA_CHB_PASID_EN | QPS_SSID);
    qpldma_smmu_map_fault(&f);

    /* The old STAG resumes nothing */
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);
    qsmmu_cmd_sync(&f.smmu);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_IDLE);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_COMPLETED), ==, 0);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_RESTARTS), ==, 0);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));

    /* Everything works: a copy, then a stall (STAGs restart) and a retry */
    qtest_memset(f.qts, f.pa_dst, 0, QPS_XFER);
    qpldma_smmu_copy(&f);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    qsmmu_unmap(&f.smmu, f.ttb, QPS_VA_FAULT);
    qsmmu_tlbi_va(&f.smmu, QPS_ASID, QPS_VA_FAULT);
    stag2 = qpldma_smmu_stall_copy(&f);
    g_assert_cmpuint(stag2, ==, stag);
    qpldma_smmu_resume_ok(&f, stag2);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_COMPLETED), ==, 2);
    g_assert_cmphex(qsmmu_gerror(&f.smmu), ==, 0);
    qpldma_smmu_fini(&f);
}

/*
 * More faults than STALL_MAX: the first two stall, the others are
 * terminated (Stall = 0) and complete with FAULT; the stalled ones still
 * resume, and once they have, a new fault stalls again.
 */
static void test_stall_max(void)
{
    QPldmaSmmu f;
    Chan c[4];
    uint16_t stag[2];
    uint64_t evt[4];
    int i;

    if (!qpldma_smmu_init(&f, "stall", 4, 8,
                          " -global arm-smmuv3.stall-max=2")) {
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
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STALLED_CHANNELS), ==, 0x3);

    for (i = 2; i < 4; i++) {
        chan_check_compl(&f, &c[i], PLDMA_ST_FAULT, 0x1000, MC_FAULT_VA(i));
        chan_check_dst(&f, &c[i], 0x1000);
        g_assert_cmpuint(qpldma_ch_rd(&f.d, i, PLDMA_CH_STATE), ==,
                         PLDMA_STATE_IDLE);
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_STALLS), ==, 0);
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_ERRORS), ==, 1);
    }
    for (i = 0; i < 2; i++) {
        chan_retry_ok(&f, &c[i], stag[i]);
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_STALLS), ==, 1);
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_RESTARTS), ==, 1);
        g_assert_cmpuint(qpldma_ch_cnt(&f.d, i, PLDMA_CNT_ERRORS), ==, 0);
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
    g_assert_cmphex(qsmmu_gerror(&f.smmu), ==, 0);
    qpldma_smmu_fini(&f);
}

/*
 * CMD_RESUME for a STAG or a StreamID with no stall and CMD_STALL_TERM for
 * a StreamID with no stall are ignored, without a command error.
 */
static void test_resume_unknown(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    qsmmu_resume(&f.smmu, QPS_SID, 0x1234, QSMMU_RESUME_RETRY);
    qsmmu_resume(&f.smmu, QPS_SID, 0, QSMMU_RESUME_ABORT);
    qsmmu_resume(&f.smmu, QPS_SID + 5, 1, QSMMU_RESUME_TERM);
    qsmmu_stall_term(&f.smmu, QPS_SID);
    qsmmu_stall_term(&f.smmu, 0x1ffff);
    qsmmu_stall_term(&f.smmu, 0x8);         /* a PCI StreamID */
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmphex(qsmmu_readl(&f.smmu, SMMU_CMDQ_CONS), ==, f.smmu.cmdq_prod);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));

    /* A stall is left alone by commands for another STAG or StreamID */
    stag = qpldma_smmu_stall_copy(&f);
    qsmmu_resume(&f.smmu, QPS_SID, stag ^ 0x8000, QSMMU_RESUME_ABORT);
    qsmmu_resume(&f.smmu, QPS_SID + 1, stag, QSMMU_RESUME_ABORT);
    qsmmu_stall_term(&f.smmu, QPS_SID + 1);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_ABORTS), ==, 0);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);

    /* and still resumes */
    qpldma_smmu_map_fault(&f);
    qsmmu_tlbi_va(&f.smmu, QPS_ASID, QPS_VA_FAULT);
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);

    /* A second RESUME of the completed STAG is ignored too */
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_ABORT);
    qsmmu_cmd_sync(&f.smmu);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_ABORTS), ==, 0);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_RESTARTS), ==, 1);

    /* The SMMU still translates */
    qtest_memset(f.qts, f.pa_dst, 0, QPS_XFER);
    qpldma_smmu_copy(&f);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(qsmmu_gerror(&f.smmu), ==, 0);
    qpldma_smmu_fini(&f);
}

/* The COPY of qpldma_smmu_stall_copy() was terminated: check everything */
static void check_terminated(QPldmaSmmu *f, uint32_t aborts)
{
    g_assert_cmpuint(qpldma_smmu_wait_compl(f), ==, PLDMA_ST_ABORTED);
    g_assert_cmphex(qpldma_smmu_compl(f, PLDMA_COMPL_BYTES), ==, 0x1000);
    g_assert_cmphex(qpldma_smmu_compl(f, PLDMA_COMPL_FAULT_VA),
                    ==, QPS_VA_FAULT);
    g_assert_cmphex(qpldma_smmu_compl(f, PLDMA_COMPL_COOKIE), ==, 0xc0c0);
    qpldma_smmu_wait_state(f, PLDMA_STATE_IDLE);
    g_assert_cmpuint(qpldma_ch_rd(&f->d, 0, PLDMA_CH_LAST_STATUS), ==,
                     PLDMA_ST_ABORTED);
    g_assert_cmpuint(qpldma_smmu_cnt(f, PLDMA_CNT_ABORTS), ==, aborts);
    g_assert_cmpuint(qpldma_smmu_cnt(f, PLDMA_CNT_STALLS), ==, aborts);
    g_assert_cmpuint(qpldma_smmu_cnt(f, PLDMA_CNT_ERRORS), ==, aborts);
    g_assert_cmphex(qpldma_rd(&f->d, PLDMA_STALLED_CHANNELS), ==, 0);
}

/* Configuration invalidations while stalled */
static void test_cfgi_stalled(void)
{
    QPldmaSmmu f;
    uint64_t evt[4];
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    /* CFGI_CD of another substream and CFGI_STE of another StreamID */
    stag = qpldma_smmu_stall_copy(&f);
    qsmmu_cfgi_cd(&f.smmu, QPS_SID, QPS_SSID + 1);
    qsmmu_cfgi_ste(&f.smmu, QPS_SID + 1);
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_PENDING);

    /* CFGI_STE terminates it; a late RESUME of its STAG is ignored */
    qsmmu_cfgi_ste(&f.smmu, QPS_SID);
    check_terminated(&f, 1);
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_IDLE);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_COMPLETED), ==, 1);

    /* CFGI_CD of its substream */
    qpldma_smmu_stall_copy(&f);
    qsmmu_cfgi_cd(&f.smmu, QPS_SID, QPS_SSID);
    check_terminated(&f, 2);

    /* CFGI_CD_ALL */
    qpldma_smmu_stall_copy(&f);
    qsmmu_cmd(&f.smmu, CMD_CFGI_CD_ALL | ((uint64_t)QPS_SID << 32), 0);
    qsmmu_cmd_sync(&f.smmu);
    check_terminated(&f, 3);

    /* CFGI_ALL */
    qpldma_smmu_stall_copy(&f);
    qsmmu_cfgi_all(&f.smmu);
    check_terminated(&f, 4);

    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert(!qsmmu_pop_event(&f.smmu, evt));
    qpldma_smmu_map_fault(&f);
    qpldma_smmu_copy(&f);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_COMPLETED), ==, 5);
    qpldma_smmu_fini(&f);
}

/*
 * Run a COPY on channel 0 whose descriptor fetch hits a configuration
 * error; check the single event, then rebind the channel.
 */
static void expect_config_error(QPldmaSmmu *f, uint32_t type, uint64_t fetch)
{
    uint64_t evt[4];

    g_test_message("expecting event 0x%x", type);
    qpldma_smmu_copy(f);
    qpldma_smmu_wait_state(f, PLDMA_STATE_ERROR);
    g_assert_cmpuint(qpldma_ch_rd(&f->d, 0, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_DESC_FETCH);
    g_assert(qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, type);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, QPS_SID);
    if (type == EVT_F_STE_FETCH || type == EVT_F_CD_FETCH) {
        /* FetchAddr[55:3] in bits [247:195], for both (IHI 0070 7.3.4/10) */
        g_assert_cmphex(evt[3] & 0x00fffffffffffff8ULL, ==, fetch);
    }
    if (type != EVT_F_STE_FETCH) {
        g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 1);
        g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, QPS_SSID);
    }
    g_assert(!qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(qsmmu_gerror(&f->smmu), ==, 0);
    qpldma_smmu_bind(f, PLDMA_CHB_PASID_EN | QPS_SSID);
}

/* Malformed STEs and CDs, and configuration structures outside RAM */
static void test_bad_config(void)
{
    QPldmaSmmu f;
    uint64_t l1;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    /* Reserved STE.S1FMT */
    qsmmu_set_ste_s1_fmt(&f.smmu, QPS_SID, f.cdtab, 3, QPS_S1CDMAX,
                         QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, EVT_C_BAD_STE, 0);
    /* STE.S1CDMAX above IDR1.SSIDSIZE (20) */
    qsmmu_set_ste_s1(&f.smmu, QPS_SID, f.cdtab, 21, QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, EVT_C_BAD_STE, 0);

    /* CD with V = 0 */
    qsmmu_set_ste_s1(&f.smmu, QPS_SID, f.cdtab, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    qtest_writeq(f.qts, f.cdtab + QPS_SSID * 64, 0);
    qsmmu_cfgi_cd(&f.smmu, QPS_SID, QPS_SSID);
    expect_config_error(&f, QSMMU_EVT_C_BAD_CD, 0);
    qsmmu_write_cd(&f.smmu, f.cdtab, QPS_SSID, QPS_ASID, f.ttb, true);

    /* CD table in a hole of the physical address space */
    qsmmu_set_ste_s1(&f.smmu, QPS_SID, PA_HOLE, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, EVT_F_CD_FETCH, PA_HOLE + QPS_SSID * 64);

    /*
     * CD table on the SMMU's own registers: CD 1 is read from offsets
     * 0x40-0x7f, whose first word has bit 31 (CD.V) clear.
     */
    qsmmu_set_ste_s1(&f.smmu, QPS_SID, QSMMU_VIRT_BASE, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, QSMMU_EVT_C_BAD_CD, 0);

    /*
     * CD table on the registers of the PLDMA, whose DMA is being
     * translated: QEMU's re-entrancy guard fails the read, F_CD_FETCH.
     */
    qsmmu_set_ste_s1(&f.smmu, QPS_SID, QPS_PLDMA_BASE, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    expect_config_error(&f, EVT_F_CD_FETCH, QPS_PLDMA_BASE + QPS_SSID * 64);

    /* Level-2 stream table in a hole */
    l1 = f.smmu.strtab_l1 + (QPS_SID >> 8) * 8;
    qsmmu_set_ste_s1(&f.smmu, QPS_SID, f.cdtab, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);
    {
        uint64_t good = qtest_readq(f.qts, l1);

        qtest_writeq(f.qts, l1, PA_HOLE | 9);
        qsmmu_cfgi_ste(&f.smmu, QPS_SID);
        expect_config_error(&f, EVT_F_STE_FETCH,
                            PA_HOLE + (QPS_SID & 0xff) * 64);
        qtest_writeq(f.qts, l1, good);
        qsmmu_cfgi_ste(&f.smmu, QPS_SID);
    }

    /* The SMMU is still fine */
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qpldma_smmu_map_fault(&f);
    qpldma_smmu_copy(&f);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    qpldma_smmu_fini(&f);
}

/* ---- Defects found by review (docs/specs/smmuv3-stall.rst, Hardening) ---- */

#define PLDMA_B_SID         0x10001

/* A second PLDMA on the platform bus, after the first */
static void find_second_pldma(QPldmaSmmu *f, QPldma *b)
{
    uint64_t a;

    for (a = QPS_PLDMA_BASE + 0x1000; a < QPS_PLDMA_BASE + 0x100000;
         a += 0x1000) {
        qpldma_init(b, f->qts, a);
        if (qpldma_rd(b, PLDMA_ID) == PLDMA_ID_VALUE &&
            qpldma_rd(b, PLDMA_STREAM_ID) == PLDMA_B_SID) {
            return;
        }
    }
    g_assert_not_reached();
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
    uint64_t cdtab_b, pa_b_ring, pa_b_compl, pa_a_dst, evt[4];
    uint8_t d[PLDMA_DESC_SIZE];
    QPldmaRing ring_b;
    QPldmaSmmu f;
    QPldma b;
    uint16_t stag;
    int i;

    if (!qpldma_smmu_init(&f, "stall", 1, 1, " -device pldma,"
                          "fault-mode=report,num-channels=1,"
                          "stream-id=0x10001")) {
        return;
    }
    find_second_pldma(&f, &b);

    /* B: the same process, CD.S = 0 and S1STALLD, as Linux in report mode */
    cdtab_b = qsmmu_cd_table(&f.smmu, QPS_S1CDMAX);
    qsmmu_write_cd(&f.smmu, cdtab_b, QPS_SSID, QPS_ASID, f.ttb, false);
    qsmmu_set_ste_s1(&f.smmu, PLDMA_B_SID, cdtab_b, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, true);
    pa_b_ring = qsmmu_map_new(&f.smmu, f.ttb, va_b_ring, 0x1000, true);
    pa_b_compl = qsmmu_map_new(&f.smmu, f.ttb, va_b_compl, 0x1000, true);
    qsmmu_map_new(&f.smmu, f.ttb, va_b_dst, 0x1000, true); /* 2nd unmapped */
    qpldma_ring_init_at(&b, &ring_b, 0, pa_b_ring, va_b_ring, QPS_RING_SIZE,
                        PLDMA_CHB_PASID_EN | QPS_SSID);
    qpldma_desc_copy(d, QPS_XFER, QPS_VA_SRC, va_b_dst, va_b_compl, 0);
    qpldma_ring_post(&b, &ring_b, d);
    qpldma_wait_state(&b, 0, PLDMA_STATE_FAULTED, qpldma_smmu_step, &f, 1000);
    g_assert(qsmmu_pop_event(&f.smmu, evt));       /* B's fault, Stall = 0 */
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, PLDMA_B_SID);

    /* A stalls once with the queue in RAM */
    qpldma_smmu_copy_to(&f, va_a_dst);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_STALLED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_ADDR(evt), ==, va_a_dst);
    stag = QSMMU_EVT_STAG(evt);

    /* Its first page is fixed, the next one is at 0x1_0000_0000 */
    pa_a_dst = qsmmu_alloc(&f.smmu, 0x1000, 0x1000);
    qsmmu_map(&f.smmu, f.ttb, va_a_dst, pa_a_dst, true);
    qsmmu_set_evtq(&f.smmu, b.base + PLDMA_CH_PAGE_OFFSET(0), 1);
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);

    /* QEMU answers: B was restarted by the event, and faulted again */
    g_assert_cmpuint(qpldma_ch_cnt(&b, 0, PLDMA_CNT_RESTARTS), ==, 1);
    g_assert_cmpuint(qpldma_ch_rd(&b, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_FAULTED);
    /* B's own fault event, written onto B's registers, was refused */
    g_assert_cmphex(qsmmu_gerror(&f.smmu) & QSMMU_GERROR_EVENTQ_ABT, ==,
                    QSMMU_GERROR_EVENTQ_ABT);
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_STALLS), ==, 2);

    /* Back to a queue in RAM: terminate A's stall, cancel B */
    qsmmu_set_evtq(&f.smmu, qsmmu_alloc(&f.smmu, 64, 64), 1);
    qsmmu_stall_term(&f.smmu, QPS_SID);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_ABORTED);
    g_assert_cmphex(qpldma_smmu_compl(&f, PLDMA_COMPL_BYTES), ==, 0x1000);
    for (i = 0; i < 0x1000; i++) {
        g_assert_cmphex(qtest_readb(f.qts, pa_a_dst + i), ==, QPS_SRC_BYTE(i));
    }
    qpldma_ch_wr(&b, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(qpldma_wait_compl(&b, pa_b_compl, qpldma_smmu_step, &f,
                                       1000, NULL), ==, PLDMA_ST_CANCELLED);
    qpldma_smmu_fini(&f);
}

/* A 20-bit SubstreamID travels from the device to the SMMU intact */
static void test_wide_ssid(void)
{
    const uint32_t ssid = 0xabcde;
    QPldmaSmmu f;
    uint64_t l1, evt[4];
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    g_assert_cmpuint(PLDMA_CAP_PASID_BITS(qpldma_rd(&f.d, PLDMA_CAP)), ==, 20);
    l1 = qsmmu_cd_table_2l(&f.smmu, 20);
    qsmmu_write_cd_2l(&f.smmu, l1, ssid, QPS_ASID, f.ttb, true);
    qsmmu_set_ste_s1_fmt(&f.smmu, QPS_SID, l1, QSMMU_S1FMT_64_4K, 20,
                         QSMMU_S1DSS_SSID0, false);
    qpldma_smmu_bind(&f, PLDMA_CHB_PASID_EN | ssid);
    g_assert_cmphex(qpldma_ch_rd(&f.d, 0, PLDMA_CH_PASID), ==,
                    PLDMA_CHB_PASID_EN | ssid);
    qpldma_smmu_copy(&f);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_STALLED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 1);
    g_assert_cmphex(QSMMU_EVT_SSID(evt), ==, ssid);
    stag = QSMMU_EVT_STAG(evt);
    qpldma_smmu_resume_ok(&f, stag);
    qpldma_smmu_fini(&f);
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
    QPldma d;
    uint32_t st = 0;
    int i;

    if (!qtest_has_device("pldma")) {
        g_test_skip("no pldma device in this build");
        return;
    }
    qts = qtest_init("-M virt,iommu=smmuv3 -nodefaults "
                     "-device pldma,fault-mode=report");
    qpldma_init(&d, qts, QPS_PLDMA_BASE);
    g_test_message("STRTAB_BASE_CFG %s", strtab_cfg_hex);
    qtest_writeq(qts, QSMMU_VIRT_BASE + 0x80, 0x40000000);     /* STRTAB */
    qtest_writel(qts, QSMMU_VIRT_BASE + 0x88, cfg);
    qtest_writeq(qts, 0x40400000, 0xd);     /* STE 0x10000: V, S2, S2AA64 0 */
    qtest_writel(qts, QSMMU_VIRT_BASE + 0x20, 1);               /* SMMUEN */
    qpldma_wr(&d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    qpldma_ch_wr(&d, 0, PLDMA_CH_RING_BASE_LO, 0x41000000);
    qpldma_ch_wr(&d, 0, PLDMA_CH_RING_SIZE, 8);
    qpldma_ch_wr(&d, 0, PLDMA_CH_RING_TAIL, 1);
    for (i = 0; i < 1000; i++) {
        st = qpldma_ch_rd(&d, 0, PLDMA_CH_STATE);
        if (st != PLDMA_STATE_RUNNING) {
            break;
        }
        qtest_clock_step(qts, 1000);
    }
    g_assert_cmpuint(st, ==, PLDMA_STATE_FAULTED);
    g_assert_true(qpldma_ch_rd(&d, 0, PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_DESC);
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
    qtest_add_func("/smmuv3-stall/pldma/wide-ssid", test_wide_ssid);
    qtest_add_func("/smmuv3-stall/fuzz/ste-s2aa64", test_fuzz_s2aa64);
    qtest_add_func("/smmuv3-stall/fuzz/strtab-log2size",
                   test_fuzz_strtab_log2size);
    return g_test_run();
}
