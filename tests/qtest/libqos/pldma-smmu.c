/*
 * libqos: a PLDMA on the virt board's platform bus behind its SMMUv3,
 * with one process whose copies fault (see pldma-smmu.h)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pldma-smmu.h"

void qpldma_smmu_bind(QPldmaSmmu *f, uint32_t pasid_reg)
{
    qpldma_ring_init_at(&f->d, &f->ring, 0, f->pa_ring, QPS_VA_RING,
                        QPS_RING_SIZE, pasid_reg);
    f->ssv = pasid_reg & PLDMA_CHB_PASID_EN;
    f->ssid = f->ssv ? PLDMA_CHB_PASID_VALUE(pasid_reg) : 0;
}

bool qpldma_smmu_init(QPldmaSmmu *f, const char *mode, int nch,
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
    qpldma_init(&f->d, f->qts, QPS_PLDMA_BASE);
    if (qpldma_rd(&f->d, PLDMA_ID) != PLDMA_ID_VALUE ||
        qpldma_rd(&f->d, PLDMA_STREAM_ID) != QPS_SID) {
        qtest_quit(f->qts);
        g_test_skip("pldma not found at the first platform bus slot");
        return false;
    }
    g_assert(qpldma_rd(&f->d, PLDMA_CAP) & PLDMA_CAP_PASID);

    qsmmu_init(&f->smmu, f->qts, QSMMU_VIRT_BASE, QPS_SMMU_MEM,
               QPS_SMMU_MEM_SIZE);
    f->smmu.evtq_log2 = evtq_log2;
    qsmmu_enable(&f->smmu);

    /* One process: SSID 1, ASID 1, CD.S = 1 (even for report mode) */
    f->ttb = qsmmu_pgtable_new(&f->smmu);
    f->cdtab = qsmmu_cd_table(&f->smmu, QPS_S1CDMAX);
    qsmmu_write_cd(&f->smmu, f->cdtab, QPS_SSID, QPS_ASID, f->ttb, true);
    qsmmu_set_ste_s1(&f->smmu, QPS_SID, f->cdtab, QPS_S1CDMAX,
                     QSMMU_S1DSS_SSID0, false);

    f->pa_ring = qsmmu_map_new(&f->smmu, f->ttb, QPS_VA_RING, 0x1000, true);
    f->pa_compl = qsmmu_map_new(&f->smmu, f->ttb, QPS_VA_COMPL, 0x1000,
                                true);
    f->pa_src = qsmmu_map_new(&f->smmu, f->ttb, QPS_VA_SRC, QPS_XFER, false);
    /* The destination is allocated but only the first page is mapped */
    f->pa_dst = qsmmu_alloc(&f->smmu, QPS_XFER, 0x1000);
    qsmmu_map(&f->smmu, f->ttb, QPS_VA_DST, f->pa_dst, true);

    for (i = 0; i < QPS_XFER; i++) {
        qtest_writeb(f->qts, f->pa_src + i, QPS_SRC_BYTE(i));
    }

    /* Channel 0 bound to the process */
    qpldma_smmu_bind(f, PLDMA_CHB_PASID_EN | QPS_SSID);
    return true;
}

void qpldma_smmu_fini(QPldmaSmmu *f)
{
    qtest_quit(f->qts);
}

void qpldma_smmu_copy_to(QPldmaSmmu *f, uint64_t dst)
{
    uint8_t d[PLDMA_DESC_SIZE];

    qtest_memset(f->qts, f->pa_compl, 0, PLDMA_COMPL_SIZE);
    qpldma_desc_copy(d, QPS_XFER, QPS_VA_SRC, dst, QPS_VA_COMPL, QPS_COOKIE);
    qpldma_ring_post(&f->d, &f->ring, d);
}

void qpldma_smmu_copy(QPldmaSmmu *f)
{
    qpldma_smmu_copy_to(f, QPS_VA_DST);
}

void qpldma_smmu_step(void *opaque)
{
    QPldmaSmmu *f = opaque;

    qtest_clock_step(f->qts, 1000);
}

void qpldma_smmu_wait_state(QPldmaSmmu *f, uint32_t state)
{
    qpldma_wait_state(&f->d, 0, state, qpldma_smmu_step, f, QPS_POLLS);
}

uint32_t qpldma_smmu_wait_compl(QPldmaSmmu *f)
{
    return qpldma_wait_compl(&f->d, f->pa_compl, qpldma_smmu_step, f,
                             QPS_POLLS, NULL);
}

uint64_t qpldma_smmu_compl(QPldmaSmmu *f, uint32_t field)
{
    return qtest_readq(f->qts, f->pa_compl + field);
}

uint32_t qpldma_smmu_state(QPldmaSmmu *f)
{
    return qpldma_ch_rd(&f->d, 0, PLDMA_CH_STATE);
}

uint32_t qpldma_smmu_cnt(QPldmaSmmu *f, uint32_t cnt)
{
    return qpldma_ch_cnt(&f->d, 0, cnt);
}

void qpldma_smmu_check_dst(QPldmaSmmu *f)
{
    g_autofree uint8_t *buf = g_malloc(QPS_XFER);
    int i;

    qtest_memread(f->qts, f->pa_dst, buf, QPS_XFER);
    for (i = 0; i < QPS_XFER; i++) {
        g_assert_cmphex(buf[i], ==, QPS_SRC_BYTE(i));
    }
}

void qpldma_smmu_map_fault(QPldmaSmmu *f)
{
    qsmmu_map(&f->smmu, f->ttb, QPS_VA_FAULT, f->pa_dst + 0x1000, true);
}

void qpldma_smmu_resume_ok(QPldmaSmmu *f, uint16_t stag)
{
    qpldma_smmu_map_fault(f);
    qsmmu_resume(&f->smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);
    g_assert(!qsmmu_cmdq_error(&f->smmu));
    g_assert_cmpuint(qpldma_smmu_wait_compl(f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(f);
}

uint16_t qpldma_smmu_stall_copy(QPldmaSmmu *f)
{
    uint64_t evt[4];

    qpldma_smmu_copy(f);
    qpldma_smmu_wait_state(f, PLDMA_STATE_STALLED);
    g_assert(qsmmu_pop_event(&f->smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 1);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, QPS_SID);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, f->ssv);
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, f->ssid);
    g_assert_cmphex(QSMMU_EVT_ADDR(evt), ==, QPS_VA_FAULT);
    g_assert_cmpuint(QSMMU_EVT_RNW(evt), ==, 0);
    g_assert(!qsmmu_pop_event(&f->smmu, evt));
    return QSMMU_EVT_STAG(evt);
}
