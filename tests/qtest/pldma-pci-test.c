/*
 * QTest for the PCIe front-end of the PLDMA engine (pldma-pci)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The device sits on virt's PCIe root bus behind the SMMUv3; its StreamID
 * is its requester ID.  The tests program the SMMU (libqos/smmuv3) and the
 * device as a driver would: config space (PASID capability, MSI-X), DMA
 * with a PASID, report-mode faults with RESTART and CANCEL, MSI-X delivery
 * and migration.  See docs/specs/pldma.rst, "PCI device".
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "libqos/pci.h"
#include "libqos/generic-pcihost.h"
#include "libqos/pldma.h"
#include "libqos/smmuv3.h"
#include "standard-headers/linux/pci_regs.h"

#define DEVFN           QPCI_DEVFN(2, 0)
#define SID             DEVFN           /* bus 0: the requester ID */
#define ECAM            0x4010000000ULL
#define PASID_CAP       0x100
#define ATS_CAP         0x108
#define PRI_CAP         0x110
#define SMMU_MEM        0x44000000ULL
#define SMMU_MEM_SIZE   (32 * 1024 * 1024)
#define NCH             2
#define PASID           1
#define ASID            1
#define S1CDMAX         2
#define VA_RING         0x10000000ULL
#define VA_COMPL        0x10001000ULL
#define VA_SRC          0x10002000ULL
#define VA_DST          0x10004000ULL
#define XFER            0x2000
#define RING_SIZE       4

typedef struct Fixture {
    QTestState *qts;
    QGenericPCIBus pcibus;
    QPCIDevice *dev;
    QPCIBar bar;
    QPldma d;               /* the registers, in BAR 0 */
    QSMMU smmu;
    uint64_t cdtab, ttb;
    uint64_t pa_ring, pa_compl, pa_src, pa_dst, pa_fq, pa_msi;
    uint32_t tail;
} Fixture;

static uint32_t ecam_readl(Fixture *f, uint32_t off)
{
    return qtest_readl(f->qts, ECAM + (DEVFN << 12) + off);
}

static void ecam_writew(Fixture *f, uint32_t off, uint16_t val)
{
    qtest_writew(f->qts, ECAM + (DEVFN << 12) + off, val);
}

static void pasid_enable(Fixture *f, bool on)
{
    ecam_writew(f, PASID_CAP + PCI_PASID_CTRL, on ? PCI_PASID_CTRL_ENABLE : 0);
}

/* STE for the device: the process's CD table; no-PASID traffic per @s1dss */
static void set_ste(Fixture *f, int s1dss)
{
    qsmmu_set_ste_s1(&f->smmu, SID, f->cdtab, S1CDMAX, s1dss, true);
}

static void bind_channel(Fixture *f)
{
    qpldma_wr(&f->d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    qpldma_wr(&f->d, PLDMA_CH_BIND(0) + PLDMA_CHB_PASID,
              PLDMA_CHB_PASID_EN | PASID);
    qpldma_wr(&f->d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    qpldma_ch_wr(&f->d, 0, PLDMA_CH_RING_BASE_LO, (uint32_t)VA_RING);
    qpldma_ch_wr(&f->d, 0, PLDMA_CH_RING_BASE_HI, VA_RING >> 32);
    qpldma_ch_wr(&f->d, 0, PLDMA_CH_RING_SIZE, RING_SIZE);
    f->tail = 0;
}

static void start(Fixture *f, const char *extra)
{
    int i;

    memset(f, 0, sizeof(*f));
    f->qts = qtest_initf("-M virt,iommu=smmuv3 -nodefaults "
                         "-device pldma-pci,id=dma0,addr=2,num-channels=%d%s",
                         NCH, extra ? extra : "");
    qpci_init_generic(&f->pcibus, f->qts, NULL, false);
    f->dev = qpci_device_find(&f->pcibus.bus, DEVFN);
    g_assert(f->dev);
    qpci_device_enable(f->dev);
    f->bar = qpci_iomap(f->dev, PLDMA_PCI_BAR_REGS, NULL);
    g_assert_false(f->bar.is_io);
    qpldma_init(&f->d, f->qts, f->bar.addr);

    qsmmu_init(&f->smmu, f->qts, QSMMU_VIRT_BASE, SMMU_MEM, SMMU_MEM_SIZE);
    qsmmu_enable(&f->smmu);
    f->ttb = qsmmu_pgtable_new(&f->smmu);
    f->cdtab = qsmmu_cd_table(&f->smmu, S1CDMAX);
    /* report mode: CD.S = 0 and STE.S1STALLD, as Linux for PCI */
    qsmmu_write_cd(&f->smmu, f->cdtab, PASID, ASID, f->ttb, false);
    set_ste(f, QSMMU_S1DSS_BYPASS);

    f->pa_ring = qsmmu_map_new(&f->smmu, f->ttb, VA_RING, 0x1000, true);
    f->pa_compl = qsmmu_map_new(&f->smmu, f->ttb, VA_COMPL, 0x1000, true);
    f->pa_src = qsmmu_map_new(&f->smmu, f->ttb, VA_SRC, XFER, false);
    f->pa_dst = qsmmu_alloc(&f->smmu, XFER, 0x1000);
    qsmmu_map(&f->smmu, f->ttb, VA_DST, f->pa_dst, true);
    f->pa_fq = qsmmu_alloc(&f->smmu, 4 * PLDMA_FR_SIZE, 0x1000);
    f->pa_msi = qsmmu_alloc(&f->smmu, 0x1000, 0x1000);
    for (i = 0; i < XFER; i++) {
        qtest_writeb(f->qts, f->pa_src + i, (uint8_t)(i * 5 + 1));
    }
    /* the fault queue has no PASID: S1DSS = bypass, so a physical address */
    qpldma_wr(&f->d, PLDMA_FQ_BASE_LO, (uint32_t)f->pa_fq);
    qpldma_wr(&f->d, PLDMA_FQ_BASE_HI, f->pa_fq >> 32);
    qpldma_wr(&f->d, PLDMA_FQ_SIZE, 4);
    qpldma_wr(&f->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    pasid_enable(f, true);
    bind_channel(f);
}

static void stop(Fixture *f)
{
    g_free(f->dev);
    qtest_quit(f->qts);
}

static void submit_copy(Fixture *f)
{
    uint64_t d = f->pa_ring + (f->tail % RING_SIZE) * PLDMA_DESC_SIZE;

    qtest_memset(f->qts, d, 0, PLDMA_DESC_SIZE);
    qtest_memset(f->qts, f->pa_compl, 0, PLDMA_COMPL_SIZE);
    qtest_memset(f->qts, f->pa_dst, 0, XFER);
    qtest_writeb(f->qts, d + PLDMA_DESC_OPCODE, PLDMA_OP_COPY);
    qtest_writeb(f->qts, d + PLDMA_DESC_FLAGS, PLDMA_DF_INTR);
    qtest_writel(f->qts, d + PLDMA_DESC_LEN, XFER);
    qtest_writeq(f->qts, d + PLDMA_DESC_SRC, VA_SRC);
    qtest_writeq(f->qts, d + PLDMA_DESC_DST, VA_DST);
    qtest_writeq(f->qts, d + PLDMA_DESC_COMPL, VA_COMPL);
    qtest_writeq(f->qts, d + PLDMA_DESC_COOKIE, 0xc0c0);
    f->tail = (f->tail + 1) % RING_SIZE;
    qpldma_ch_wr(&f->d, 0, PLDMA_CH_RING_TAIL, f->tail);
}

static void wait_state(Fixture *f, uint32_t state)
{
    int i;

    for (i = 0; i < 10000 &&
         qpldma_ch_rd(&f->d, 0, PLDMA_CH_STATE) != state; i++) {
        qtest_clock_step(f->qts, 1000);
    }
    g_assert_cmpuint(qpldma_ch_rd(&f->d, 0, PLDMA_CH_STATE), ==, state);
}

static void clock_step(void *opaque)
{
    Fixture *f = opaque;

    qtest_clock_step(f->qts, 1000);
}

static uint32_t wait_completion(Fixture *f)
{
    return qpldma_wait_compl(&f->d, f->pa_compl, clock_step, f, 10000, NULL);
}

static void check_dst(Fixture *f, uint64_t len)
{
    g_autofree uint8_t *buf = g_malloc(XFER);
    int i;

    qtest_memread(f->qts, f->pa_dst, buf, XFER);
    for (i = 0; i < XFER; i++) {
        g_assert_cmphex(buf[i], ==, i < len ? (uint8_t)(i * 5 + 1) : 0);
    }
}

/* Config space: IDs, BARs, the PCIe, MSI-X, PASID and ATS capabilities */
static void test_config(void)
{
    Fixture f;
    uint8_t msix;
    uint32_t hdr;

    start(&f, ",pasid-bits=16");
    g_assert_cmphex(qpci_config_readw(f.dev, PCI_VENDOR_ID), ==,
                    PLDMA_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(f.dev, PCI_DEVICE_ID), ==,
                    PLDMA_PCI_DEVICE_ID);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_ID), ==, PLDMA_ID_VALUE);
    g_assert_cmpuint(PLDMA_CAP_NUM_CH(qpldma_rd(&f.d, PLDMA_CAP)), ==, NCH);
    g_assert_true(qpldma_rd(&f.d, PLDMA_CAP) & PLDMA_CAP_FAULT_REPORT);
    g_assert_true(qpldma_rd(&f.d, PLDMA_CAP) & PLDMA_CAP_PASID);
    g_assert_cmpuint(PLDMA_CAP_PASID_BITS(qpldma_rd(&f.d, PLDMA_CAP)), ==, 16);
    /* the requester ID is the StreamID */
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STREAM_ID), ==, SID);
    g_assert_cmpuint(qpci_find_capability(f.dev, PCI_CAP_ID_EXP, 0), !=, 0);

    /* MSI-X: NCH + 3 vectors, table in BAR 2 */
    msix = qpci_find_capability(f.dev, PCI_CAP_ID_MSIX, 0);
    g_assert_cmpuint(msix, !=, 0);
    g_assert_cmpuint((qpci_config_readw(f.dev, msix + PCI_MSIX_FLAGS) &
                      PCI_MSIX_FLAGS_QSIZE) + 1, ==, PLDMA_PCI_NUM_VECS(NCH));
    g_assert_cmpuint(qpci_config_readl(f.dev, msix + PCI_MSIX_TABLE) &
                     PCI_MSIX_FLAGS_BIRMASK, ==, PLDMA_PCI_BAR_MSIX);

    /*
     * PASID extended capability (pcie_pasid_init): width 16, no execute or
     * privileged mode; upstream's helper leaves the three enable bits of
     * PASID Control writable, nothing else
     */
    hdr = ecam_readl(&f, PASID_CAP);
    g_assert_cmphex(PCI_EXT_CAP_ID(hdr), ==, PCI_EXT_CAP_ID_PASID);
    g_assert_cmphex(PCI_EXT_CAP_NEXT(hdr), ==, ATS_CAP);
    g_assert_cmpuint((ecam_readl(&f, PASID_CAP + PCI_PASID_CAP) >> 8) & 0x1f,
                     ==, 16);
    g_assert_cmphex(ecam_readl(&f, PASID_CAP + PCI_PASID_CAP) &
                    (PCI_PASID_CAP_EXEC | PCI_PASID_CAP_PRIV), ==, 0);
    pasid_enable(&f, false);
    ecam_writew(&f, PASID_CAP + PCI_PASID_CTRL, 0xffff);
    g_assert_cmphex(ecam_readl(&f, PASID_CAP + PCI_PASID_CAP) >> 16, ==,
                    PCI_PASID_CTRL_ENABLE | PCI_PASID_CTRL_EXEC |
                    PCI_PASID_CTRL_PRIV);

    /*
     * ATS extended capability (pcie_ats_init), then PRI (the last one):
     * page-aligned translations, Enable and STU writable (upstream's mask:
     * STU bits 3:0), off until the OS enables it
     */
    hdr = ecam_readl(&f, ATS_CAP);
    g_assert_cmphex(PCI_EXT_CAP_ID(hdr), ==, PCI_EXT_CAP_ID_ATS);
    g_assert_cmphex(PCI_EXT_CAP_NEXT(hdr), ==, PRI_CAP);
    hdr = ecam_readl(&f, PRI_CAP);
    g_assert_cmphex(PCI_EXT_CAP_ID(hdr), ==, PCI_EXT_CAP_ID_PRI);
    g_assert_cmphex(PCI_EXT_CAP_NEXT(hdr), ==, 0);
    g_assert_cmphex(ecam_readl(&f, ATS_CAP + PCI_ATS_CAP) &
                    PCI_ATS_CAP_PAGE_ALIGNED, ==, PCI_ATS_CAP_PAGE_ALIGNED);
    g_assert_cmphex(ecam_readl(&f, ATS_CAP + PCI_ATS_CAP) >> 16, ==, 0);
    ecam_writew(&f, ATS_CAP + PCI_ATS_CTRL, 0xffff);
    g_assert_cmphex(ecam_readl(&f, ATS_CAP + PCI_ATS_CAP) >> 16, ==,
                    PCI_ATS_CTRL_ENABLE | 0xf);

    /* a system reset disables both */
    qobject_unref(qtest_qmp(f.qts, "{ 'execute': 'system_reset' }"));
    qtest_qmp_eventwait(f.qts, "RESET");
    g_assert_cmphex(ecam_readl(&f, PASID_CAP + PCI_PASID_CAP) >> 16, ==, 0);
    g_assert_cmphex(ecam_readl(&f, ATS_CAP + PCI_ATS_CAP) >> 16, ==, 0);
    stop(&f);
}

/* fault-mode=stall is refused at realize, with the reason */
static void test_no_stall(void)
{
    g_autofree char *cmd = g_strdup_printf(
        "%s -M virt,iommu=smmuv3 -nodefaults -display none -accel qtest "
        "-device pldma-pci,fault-mode=stall", g_getenv("QTEST_QEMU_BINARY"));
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    int status;

    g_assert(g_spawn_command_line_sync(cmd, &out, &err, &status, NULL));
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    g_assert_nonnull(strstr(err, "fault-mode=report or pri"));
}

/*
 * DMA with a PASID from a PCI requester: a COPY through the process's
 * page tables; with PASID Control.Enable clear the same channel's DMA goes
 * out without a PASID: the SMMU terminates it (S1DSS = terminate,
 * F_STREAM_DISABLED, SSV = 0) and the descriptor fetch is reported.
 */
static void test_pasid_dma(void)
{
    Fixture f;
    uint64_t evt[4];

    start(&f, NULL);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f, XFER);
    g_assert(!qsmmu_pop_event(&f.smmu, evt));

    /* PASID disabled: no SubstreamID, and SSV = 0 traffic is terminated */
    set_ste(&f, QSMMU_S1DSS_TERMINATE);
    pasid_enable(&f, false);
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_FAULTED);
    g_assert_true(qpldma_ch_rd(&f.d, 0, PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_DESC);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, 0x06);    /* F_STREAM_DISABLED */
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, SID);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 0);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);

    /* Enabled again: the channel works again */
    set_ste(&f, QSMMU_S1DSS_BYPASS);
    pasid_enable(&f, true);
    bind_channel(&f);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f, XFER);
    stop(&f);
}

/* Report mode: fault record, RESTART after the fix, then a CANCEL */
static void test_report(void)
{
    Fixture f;
    uint64_t evt[4];

    start(&f, NULL);
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_FAULTED);
    g_assert_cmpuint(qpldma_rd(&f.d, PLDMA_FQ_TAIL), ==, 1);
    g_assert_cmpuint(qtest_readw(f.qts, f.pa_fq + PLDMA_FR_CHANNEL), ==, 0);
    g_assert_cmphex(qtest_readq(f.qts, f.pa_fq + PLDMA_FR_VA), ==,
                    VA_DST + 0x1000);
    g_assert_cmphex(qtest_readl(f.qts, f.pa_fq + PLDMA_FR_PASID), ==,
                    PLDMA_CHB_PASID_EN | PASID);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);  /* never stalled */
    g_assert_cmpuint(QSMMU_EVT_SSID(evt), ==, PASID);
    g_assert_cmphex(QSMMU_EVT_SID(evt), ==, SID);

    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_tlbi_va(&f.smmu, ASID, VA_DST + 0x1000);
    qpldma_wr(&f.d, PLDMA_FQ_HEAD, 1);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f, XFER);

    qsmmu_unmap(&f.smmu, f.ttb, VA_DST + 0x1000);
    qsmmu_tlbi_va(&f.smmu, ASID, VA_DST + 0x1000);
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_FAULTED);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_CANCELLED);
    g_assert_cmphex(qtest_readq(f.qts, f.pa_compl + PLDMA_COMPL_BYTES), ==,
                    0x1000);
    check_dst(&f, 0x1000);
    stop(&f);
}

/* Program MSI-X vector @vec to write @data at pa_msi + 4 * vec */
static void msix_vector(Fixture *f, int vec, uint32_t data)
{
    uint64_t e = f->dev->msix_table_off + vec * PCI_MSIX_ENTRY_SIZE;
    uint64_t addr = f->pa_msi + 4 * vec;

    qpci_io_writel(f->dev, f->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_LOWER_ADDR, (uint32_t)addr);
    qpci_io_writel(f->dev, f->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_UPPER_ADDR, addr >> 32);
    qpci_io_writel(f->dev, f->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_DATA, data);
    qpci_io_writel(f->dev, f->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
}

static uint32_t msi_data(Fixture *f, int vec)
{
    return qtest_readl(f->qts, f->pa_msi + 4 * vec);
}

/* MSI-X: one vector per channel, one for faults, one for errors */
static void test_msix(void)
{
    Fixture f;
    int v;

    start(&f, NULL);
    qpci_msix_enable(f.dev);
    for (v = 0; v < PLDMA_PCI_NUM_VECS(NCH); v++) {
        msix_vector(&f, v, 0xd0 + v);
    }
    qpldma_wr(&f.d, PLDMA_IRQ_MASK, PLDMA_IRQ_CH_DONE_ALL | PLDMA_IRQ_FAULT |
         PLDMA_IRQ_CH_ERROR | PLDMA_IRQ_CH_FAULTED);

    /* a fault: the fault vector, nothing else */
    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_FAULTED);
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_FAULT(NCH)), ==,
                    0xd0 + PLDMA_PCI_VEC_FAULT(NCH));
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_CH(0)), ==, 0);
    qpldma_wr(&f.d, PLDMA_IRQ_STATUS, PLDMA_IRQ_FAULT | PLDMA_IRQ_CH_FAULTED);

    /* its completion: channel 0's vector */
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qsmmu_tlbi_va(&f.smmu, ASID, VA_DST + 0x1000);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_CH(0)), ==,
                    0xd0 + PLDMA_PCI_VEC_CH(0));
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_CH(1)), ==, 0);

    /* a ring error: the error vector */
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_RING_TAIL, RING_SIZE + 3);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_ERROR);
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_ERROR(NCH)), ==,
                    0xd0 + PLDMA_PCI_VEC_ERROR(NCH));
    /* a masked vector is left pending, not sent */
    qpldma_wr(&f.d, PLDMA_IRQ_STATUS, ~0u);
    qtest_writel(f.qts, f.pa_msi + 4 * PLDMA_PCI_VEC_CH(0), 0);
    qpci_io_writel(f.dev, f.dev->msix_table_bar, f.dev->msix_table_off +
                   PLDMA_PCI_VEC_CH(0) * PCI_MSIX_ENTRY_SIZE +
                   PCI_MSIX_ENTRY_VECTOR_CTRL, PCI_MSIX_ENTRY_CTRL_MASKBIT);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    bind_channel(&f);
    submit_copy(&f);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_CH(0)), ==, 0);
    g_assert_true(qpci_msix_pending(f.dev, PLDMA_PCI_VEC_CH(0)));
    stop(&f);
}

/*
 * With a link (a hub port is enough): IRQ_CQ on its own vector, a CQ's
 * ERROR on the error vector.  A QP in INIT with three receive WQEs goes to
 * ERR: they are flushed to an armed CQ of two entries, the first fires the
 * CQ, the third overflows it.
 */
static void test_msix_cq(void)
{
    uint32_t pd = PLDMA_CHB_PASID_EN | PASID, i;
    uint64_t cq, rq;
    QPldmaQPAttr at = {
        .state = PLDMA_QPS_INIT, .sq = 0, .pd = pd,
        .access = PLDMA_KEY_ACC_WRITE, .rq_size = 4,
        .send_cq = PLDMA_CQ_NONE, .recv_cq = 0,
    };
    Fixture f;
    int v;

    start(&f, ",netdev=n0,node-id=1 -netdev hubport,id=n0,hubid=0");
    g_assert_true(qpldma_rd(&f.d, PLDMA_CAP) & PLDMA_CAP_CQ);
    qpci_msix_enable(f.dev);
    for (v = 0; v < PLDMA_PCI_NUM_VECS(NCH); v++) {
        msix_vector(&f, v, 0xd0 + v);
    }
    qpldma_wr(&f.d, PLDMA_IRQ_MASK, PLDMA_IRQ_CQ | PLDMA_IRQ_CQ_ERROR |
              PLDMA_IRQ_QP_ERROR);
    /* (no PASID: S1DSS bypass, physical addresses) */
    cq = qsmmu_alloc(&f.smmu, 2 * PLDMA_CQE_SIZE, 0x1000);
    rq = qsmmu_alloc(&f.smmu, 4 * PLDMA_RWQE_SIZE, 0x1000);
    g_assert_cmpuint(qpldma_cq_create(&f.d, 0, cq, 2, pd), ==,
                     PLDMA_CQ_ST_OK);
    at.rq_base = rq;
    g_assert_cmpuint(qpldma_qp_modify(&f.d, 0, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_RQ | PLDMA_QPA_CQ, &at), ==,
                     PLDMA_QP_ST_OK);
    for (i = 0; i < 3; i++) {
        qpldma_rwqe(f.qts, rq + i * PLDMA_RWQE_SIZE, 0x40 + i, 0, NULL,
                    NULL);
    }
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_RQ_TAIL, 3);
    /* channel 0 is bound to the CQ's PD: its doorbell arms it */
    qpldma_cq_db(&f.d, 0, PLDMA_CQ_DB_CMD_ARM, 0, 0);
    at.state = PLDMA_QPS_ERR;
    g_assert_cmpuint(qpldma_qp_modify(&f.d, 0, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_cq_reg(&f.d, 0, PLDMA_CQ_PI), ==, 2);
    g_assert_cmpuint(qpldma_cq_reg(&f.d, 0, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_ERROR);
    g_assert_cmphex(qtest_readq(f.qts, cq + PLDMA_CQE_WR_ID), ==, 0x40);
    g_assert_cmpuint(qtest_readb(f.qts, cq + PLDMA_CQE_STATUS), ==,
                     PLDMA_WC_ST_WR_FLUSH_ERR);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_CQ_EVENTS_LO), ==, 1);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_CQ_ERRORS_LO), ==, 1);
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_CQ(NCH)), ==,
                    0xd0 + PLDMA_PCI_VEC_CQ(NCH));
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_ERROR(NCH)), ==,
                    0xd0 + PLDMA_PCI_VEC_ERROR(NCH));
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_FAULT(NCH)), ==, 0);
    g_assert_cmphex(msi_data(&f, PLDMA_PCI_VEC_CH(0)), ==, 0);
    stop(&f);
}

/* A FAULTED channel migrates, and RESTART completes it on the target */
static void test_migrate(void)
{
    g_autofree char *path = NULL;
    g_autofree char *uri_out = NULL;
    g_autofree char *uri_in = NULL;
    QTestState *dst;
    Fixture f;
    int fd;

    start(&f, NULL);
    fd = g_file_open_tmp("pldma-pci-mig-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    uri_out = g_strdup_printf("exec:cat > %s", path);
    uri_in = g_strdup_printf("exec:cat %s", path);

    submit_copy(&f);
    wait_state(&f, PLDMA_STATE_FAULTED);
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri_out);
    g_assert_true(qpldma_migration_wait(f.qts, 30));
    qtest_quit(f.qts);

    dst = qtest_initf("-M virt,iommu=smmuv3 -nodefaults "
                      "-device pldma-pci,id=dma0,addr=2,num-channels=%d "
                      "-incoming defer", NCH);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri_in);
    g_assert_true(qpldma_migration_wait(dst, 30));
    unlink(path);
    f.qts = dst;
    f.smmu.qts = dst;
    f.pcibus.bus.qts = dst;
    f.d.qts = dst;

    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_FAULTED);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STREAM_ID), ==, SID);
    qsmmu_map(&f.smmu, f.ttb, VA_DST + 0x1000, f.pa_dst + 0x1000, true);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);
    g_assert_cmpuint(wait_completion(&f), ==, PLDMA_ST_SUCCESS);
    check_dst(&f, XFER);
    stop(&f);
}

/*
 * Hot-unplug behind a pcie-root-port while a channel is RUNNING: the
 * device goes away (DEVICE_DELETED, which QEMU sends when the object is
 * finalized, so nothing holds it any more) and QEMU runs on.  The root
 * port and the endpoint are programmed by hand here, as firmware would:
 * bus 1 behind the port, BAR 0 at EP_BAR, no IOMMU (physical addresses).
 */
#define RP_ECAM         (ECAM + (QPCI_DEVFN(3, 0) << 12))
#define EP_ECAM         (ECAM + (1 << 20))
#define EP_BAR          0x10000000ULL
#define UNPLUG_RING     0x48000000ULL
#define UNPLUG_SRC      0x49000000ULL
#define UNPLUG_DST      0x4b000000ULL
#define UNPLUG_LEN      (16 * 1024 * 1024)

static void test_unplug_running(void)
{
    QTestState *qts = qtest_init("-M virt -m 512M -nodefaults "
                                 "-device pcie-root-port,id=rp1,bus=pcie.0,"
                                 "addr=3.0,chassis=1,slot=1 "
                                 "-device pldma-pci,id=dma1,bus=rp1,"
                                 "num-channels=2");
    uint8_t d[PLDMA_DESC_SIZE] = { 0 };
    uint32_t exp = 0, cap, i;
    uint16_t sltctl;
    QDict *ev = NULL;

    /* the port: bus 1 behind it, a memory window, memory and mastering */
    qtest_writel(qts, RP_ECAM + PCI_PRIMARY_BUS, 0x00010100);
    qtest_writew(qts, RP_ECAM + PCI_MEMORY_BASE, EP_BAR >> 16);
    qtest_writew(qts, RP_ECAM + PCI_MEMORY_LIMIT, EP_BAR >> 16);
    qtest_writew(qts, RP_ECAM + PCI_COMMAND,
                 PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    /* the endpoint */
    g_assert_cmphex(qtest_readw(qts, EP_ECAM + PCI_DEVICE_ID), ==,
                    PLDMA_PCI_DEVICE_ID);
    qtest_writel(qts, EP_ECAM + PCI_BASE_ADDRESS_0, (uint32_t)EP_BAR);
    qtest_writel(qts, EP_ECAM + PCI_BASE_ADDRESS_1, 0);
    qtest_writew(qts, EP_ECAM + PCI_COMMAND,
                 PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    g_assert_cmphex(qtest_readl(qts, EP_BAR + PLDMA_ID), ==, PLDMA_ID_VALUE);

    /* a ring of big copies, so that the channel is still RUNNING */
    qtest_writel(qts, EP_BAR + PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL,
                 PLDMA_CHB_CTRL_ENABLE);
    qtest_writel(qts, EP_BAR + PLDMA_CH_PAGE_OFFSET(0) + PLDMA_CH_RING_BASE_LO,
                 (uint32_t)UNPLUG_RING);
    qtest_writel(qts, EP_BAR + PLDMA_CH_PAGE_OFFSET(0) + PLDMA_CH_RING_SIZE,
                 64);
    d[PLDMA_DESC_OPCODE] = PLDMA_OP_COPY;
    stl_le_p(d + PLDMA_DESC_LEN, UNPLUG_LEN);
    stq_le_p(d + PLDMA_DESC_SRC, UNPLUG_SRC);
    stq_le_p(d + PLDMA_DESC_DST, UNPLUG_DST);
    for (i = 0; i < 63; i++) {
        qtest_memwrite(qts, UNPLUG_RING + i * PLDMA_DESC_SIZE, d, sizeof(d));
    }
    qtest_writel(qts, EP_BAR + PLDMA_CH_PAGE_OFFSET(0) + PLDMA_CH_RING_TAIL,
                 63);
    g_assert_cmpuint(qtest_readl(qts, EP_BAR + PLDMA_CH_PAGE_OFFSET(0) +
                                 PLDMA_CH_STATE), ==, PLDMA_STATE_RUNNING);

    /* device_del, then the guest's answer: slot power and indicator off */
    qtest_qmp_device_del_send(qts, "dma1");
    for (cap = qtest_readb(qts, RP_ECAM + PCI_CAPABILITY_LIST); cap;
         cap = qtest_readb(qts, RP_ECAM + cap + PCI_CAP_LIST_NEXT)) {
        if (qtest_readb(qts, RP_ECAM + cap) == PCI_CAP_ID_EXP) {
            exp = cap;
            break;
        }
    }
    g_assert_cmpuint(exp, !=, 0);
    sltctl = qtest_readw(qts, RP_ECAM + exp + PCI_EXP_SLTCTL);
    sltctl &= ~PCI_EXP_SLTCTL_PIC;
    sltctl |= PCI_EXP_SLTCTL_PWR_IND_OFF | PCI_EXP_SLTCTL_PCC;
    qtest_writew(qts, RP_ECAM + exp + PCI_EXP_SLTCTL, sltctl);

    for (i = 0; i < 500 && !ev; i++) {
        qtest_qmp_assert_success(qts, "{ 'execute': 'query-status' }");
        ev = qtest_qmp_event_ref(qts, "DEVICE_DELETED");
        if (!ev) {
            g_usleep(2000);
        }
    }
    g_assert_nonnull(ev);
    g_assert_cmpstr(qdict_get_try_str(qdict_get_qdict(ev, "data"),
                                      "device"), ==, "dma1");
    qobject_unref(ev);
    /* the slot is empty, QEMU runs on */
    g_assert_cmphex(qtest_readw(qts, EP_ECAM + PCI_VENDOR_ID), ==, 0xffff);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!qtest_has_device("pldma-pci")) {
        return g_test_run();
    }
    qtest_add_func("/pldma-pci/config", test_config);
    qtest_add_func("/pldma-pci/no-stall", test_no_stall);
    qtest_add_func("/pldma-pci/pasid-dma", test_pasid_dma);
    qtest_add_func("/pldma-pci/report", test_report);
    qtest_add_func("/pldma-pci/msix", test_msix);
    qtest_add_func("/pldma-pci/msix-cq", test_msix_cq);
    qtest_add_func("/pldma-pci/migrate", test_migrate);
    qtest_add_func("/pldma-pci/unplug-running", test_unplug_running);
    return g_test_run();
}
