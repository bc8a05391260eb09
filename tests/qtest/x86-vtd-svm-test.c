/*
 * QTest testcase for what intel-iommu advertises for SVA and I/O page
 * faults (x-prs with page-request drain, x-smpwc), on q35
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "hw/i386/intel_iommu_internal.h"

#define SM_ARGS "-M q35 -device intel-iommu,x-scalable-mode=on,x-flts=on," \
                "x-pasid-mode=on,device-iotlb=on"

static uint64_t vtd_readq(QTestState *s, uint64_t offset)
{
    return qtest_readq(s, Q35_HOST_BRIDGE_IOMMU_ADDR + offset);
}

static void vtd_writeq(QTestState *s, uint64_t offset, uint64_t val)
{
    qtest_writeq(s, Q35_HOST_BRIDGE_IOMMU_ADDR + offset, val);
}

/* Without the new properties nothing changes: no PRS, no SMPWC. */
static void test_default(void)
{
    QTestState *s = qtest_init(SM_ARGS);
    uint64_t ecap = vtd_readq(s, DMAR_ECAP_REG);

    g_assert_cmphex(ecap & VTD_ECAP_PRS, ==, 0);
    g_assert_cmphex(ecap & VTD_ECAP_PDS, ==, 0);
    g_assert_cmphex(ecap & VTD_ECAP_SMPWC, ==, 0);
    g_assert_cmphex(ecap & VTD_ECAP_PASID, ==, VTD_ECAP_PASID);
    /* 20-bit PASIDs (ECAP.PSS is the width - 1; it said 8 bits before) */
    g_assert_cmpuint(extract64(ecap, 35, 5), ==, 19);
    /* no page request queue: its address register is not writable */
    vtd_writeq(s, DMAR_PQA_REG, 0x12345000ULL | 2);
    g_assert_cmphex(vtd_readq(s, DMAR_PQA_REG), ==, 0);
    qtest_quit(s);
}

/*
 * x-prs and x-smpwc set ECAP.PRS and ECAP.SMPWC, the page request queue's
 * registers become writable, and a system reset keeps the capabilities
 * and clears the queue.
 */
static void test_prs_smpwc(void)
{
    QTestState *s = qtest_init(SM_ARGS ",x-prs=on,x-smpwc=on");
    uint64_t ecap = vtd_readq(s, DMAR_ECAP_REG);
    uint64_t pqa = 0x12345000ULL | 2;

    g_assert_cmphex(ecap & VTD_ECAP_PRS, ==, VTD_ECAP_PRS);
    g_assert_cmphex(ecap & VTD_ECAP_PDS, ==, VTD_ECAP_PDS);
    g_assert_cmphex(ecap & VTD_ECAP_SMPWC, ==, VTD_ECAP_SMPWC);
    g_assert_cmphex(ecap & (VTD_ECAP_SMTS | VTD_ECAP_FLTS | VTD_ECAP_PASID |
                            VTD_ECAP_DT), ==,
                    VTD_ECAP_SMTS | VTD_ECAP_FLTS | VTD_ECAP_PASID |
                    VTD_ECAP_DT);

    vtd_writeq(s, DMAR_PQA_REG, pqa);
    g_assert_cmphex(vtd_readq(s, DMAR_PQA_REG), ==, pqa);
    vtd_writeq(s, DMAR_PQH_REG, 0x20);
    g_assert_cmphex(vtd_readq(s, DMAR_PQH_REG), ==, 0x20);

    qobject_unref(qtest_qmp(s, "{ 'execute': 'system_reset' }"));
    qtest_qmp_eventwait(s, "RESET");
    g_assert_cmphex(vtd_readq(s, DMAR_ECAP_REG), ==, ecap);
    g_assert_cmphex(vtd_readq(s, DMAR_PQA_REG), ==, 0);
    g_assert_cmphex(vtd_readq(s, DMAR_PQH_REG), ==, 0);
    qtest_quit(s);
}

/*
 * An invalidation wait descriptor with Page-request Drain (PD), as Linux
 * posts when it drains a PASID's page requests: with x-prs (ECAP.PDS) it
 * completes, its status written; without, PD is a reserved bit and the
 * descriptor an invalidation queue error.  Returns whether it completed.
 */
#define IQ_PA           0x100000ULL
#define STATUS_PA       0x101000ULL

static bool wait_drain(const char *args)
{
    QTestState *s = qtest_init(args);
    bool done, iqe;

    qtest_writeq(s, IQ_PA, VTD_INV_DESC_WAIT | VTD_INV_DESC_WAIT_SW |
                 VTD_INV_DESC_WAIT_PD | (0x1234ULL << 32));
    qtest_writeq(s, IQ_PA + 8, STATUS_PA);
    qtest_writel(s, STATUS_PA, 0);
    vtd_writeq(s, DMAR_IQT_REG, 0);
    vtd_writeq(s, DMAR_IQA_REG, IQ_PA);     /* 256 128-bit descriptors */
    qtest_writel(s, Q35_HOST_BRIDGE_IOMMU_ADDR + DMAR_GCMD_REG, VTD_GCMD_QIE);
    g_assert_cmphex(qtest_readl(s, Q35_HOST_BRIDGE_IOMMU_ADDR +
                                DMAR_GSTS_REG) & VTD_GSTS_QIES, ==,
                    VTD_GSTS_QIES);
    vtd_writeq(s, DMAR_IQT_REG, 1 << 4);
    done = qtest_readl(s, STATUS_PA) == 0x1234;
    iqe = qtest_readl(s, Q35_HOST_BRIDGE_IOMMU_ADDR + DMAR_FSTS_REG) &
          VTD_FSTS_IQE;
    g_assert_true(done != iqe);
    qtest_quit(s);
    return done;
}

static void test_drain(void)
{
    g_assert_true(wait_drain(SM_ARGS ",x-prs=on"));
    g_assert_false(wait_drain(SM_ARGS));
}

/* QEMU refuses the combinations that cannot work, with a clear error. */
static void check_refused(const char *dev, const char *message)
{
    g_autofree char *cmd = g_strdup_printf(
        "echo quit | exec \"$0\" -M q35 -display none -nodefaults "
        "-monitor stdio -S -device %s", dev);
    const char *argv[] = { "/bin/sh", "-c", cmd, qtest_qemu_binary(NULL),
                           NULL };
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    g_autoptr(GError) gerr = NULL;
    int status;

    g_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL,
                          NULL, &out, &err, &status, &gerr));
    /* QEMU exited on its own, with a failure (not a signal, not 0) */
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    g_assert_nonnull(strstr(err, message));
}

static void test_refused(void)
{
    check_refused("intel-iommu,x-scalable-mode=on,x-prs=on",
                  "x-prs needs x-pasid-mode");
    check_refused("intel-iommu,x-smpwc=on",
                  "x-smpwc is only available in scalable mode");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/q35/intel-iommu/svm/default", test_default);
    qtest_add_func("/q35/intel-iommu/svm/prs-smpwc", test_prs_smpwc);
    qtest_add_func("/q35/intel-iommu/svm/drain", test_drain);
    qtest_add_func("/q35/intel-iommu/svm/refused", test_refused);
    return g_test_run();
}
