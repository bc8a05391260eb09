/*
 * QTest for the PLDMA in stall mode behind the SMMUv3 (docs/specs/pldma.rst):
 * CANCEL of a stalled channel and the stalls it leaves to the SMMU, the
 * work done within one CMD_RESUME, the re-entrancy guard under a resumed
 * access, report mode declining stalls, the "channels" property of a
 * stalled channel and the migration streams a target must refuse.  The
 * SMMU's own stall model is tested by smmuv3-stall-test, on the same
 * fixture (libqos/pldma-smmu).  "Defect N" refers to the hardening list of
 * docs/specs/smmuv3-stall.rst.
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
#include "libqos/pldma-smmu.h"

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
    QPldmaSmmu f;
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 1, NULL)) {
        return;
    }
    stag = qpldma_smmu_stall_copy(&f);
    qsmmu_set_evtq(&f.smmu, QPS_PLDMA_BASE + PLDMA_CH_BIND(0), 1);
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);

    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_CH_BIND(0) + PLDMA_CHB_CTRL), ==,
                    PLDMA_CHB_CTRL_ENABLE);
    g_assert_cmphex(qsmmu_gerror(&f.smmu) & QSMMU_GERROR_EVENTQ_ABT, ==,
                    QSMMU_GERROR_EVENTQ_ABT);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_FAULT);
    g_assert_cmphex(qpldma_smmu_compl(&f, PLDMA_COMPL_BYTES), ==, 0x1000);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_IDLE);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_STALLED_CHANNELS), ==, 0);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_STALLS), ==, 1);
    qpldma_smmu_fini(&f);
}

/*
 * Defect 4: a report-mode PLDMA accepted stalls (CD.S = 1), which left
 * the channel STALLED although the driver only answers fault records, and
 * its fault-queue writes, which belong to no channel, left stalls nobody
 * resumed.  The device declines both; the SMMU terminates them.
 */
static void test_report_declines_stall(void)
{
    QPldmaSmmu f;
    uint64_t evt[4], fq_va = 0x38000000;

    if (!qpldma_smmu_init(&f, "report", 1, 8, NULL)) {
        return;
    }
    /* A fault on a CD with CD.S = 1: terminated, reported, FAULTED */
    qpldma_smmu_copy(&f);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_FAULTED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));
    g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_STALLS), ==, 0);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_FAULTS), ==, 1);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_CANCELLED);

    /*
     * The fault queue without PASID goes to CD 0 (S1DSS = SSID0), a
     * stalling context whose tables do not map it
     */
    qsmmu_write_cd(&f.smmu, f.cdtab, 0, QPS_ASID + 1,
                   qsmmu_pgtable_new(&f.smmu), true);
    qsmmu_cfgi_cd(&f.smmu, QPS_SID, 0);
    qpldma_wr(&f.d, PLDMA_FQ_BASE_LO, (uint32_t)fq_va);
    qpldma_wr(&f.d, PLDMA_FQ_BASE_HI, fq_va >> 32);
    qpldma_wr(&f.d, PLDMA_FQ_SIZE, 4);
    qpldma_wr(&f.d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
    qpldma_smmu_copy(&f);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_FAULTED);
    g_assert(qsmmu_pop_event(&f.smmu, evt));        /* the channel's */
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert(qsmmu_pop_event(&f.smmu, evt));        /* the record's */
    g_assert_cmphex(QSMMU_EVT_ADDR(evt), ==, fq_va);
    g_assert_cmpuint(QSMMU_EVT_SSV(evt), ==, 0);
    g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_FQ_STATUS) &
                    PLDMA_FQ_STATUS_WRITE_ERR, ==, PLDMA_FQ_STATUS_WRITE_ERR);
    /* Nothing is left stalled in the SMMU: STALL_TERM finds nothing */
    qsmmu_stall_term(&f.smmu, QPS_SID);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_FAULTED);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_ABORTS), ==, 0);
    qpldma_smmu_fini(&f);
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
    QPldmaSmmu f;
    int i;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    stags[0] = qpldma_smmu_stall_copy(&f);
    for (i = 1; i < N; i++) {
        stags[i] = stags[0] + i;
    }
    /* The page stays unmapped: every retry stalls again at once */
    qsmmu_resume_batch(&f.smmu, QPS_SID, stags, N, QSMMU_RESUME_RETRY);
    stalls = qpldma_smmu_cnt(&f, PLDMA_CNT_STALLS);
    g_test_message("stalls after one CMDQ_PROD write of %d RESUMEs: %u",
                   N, stalls);
    g_assert_cmpuint(stalls, <=, 1 + 16 + 1);
    g_assert(!qsmmu_cmdq_error(&f.smmu));

    /* The channel still works: fix the page and resume the last stall */
    qpldma_smmu_wait_state(&f, PLDMA_STATE_STALLED);
    stalls = qpldma_smmu_cnt(&f, PLDMA_CNT_STALLS);
    qpldma_smmu_map_fault(&f);
    qsmmu_tlbi_va(&f.smmu, QPS_ASID, QPS_VA_FAULT);
    qsmmu_resume(&f.smmu, QPS_SID, stags[0] + stalls - 1, QSMMU_RESUME_RETRY);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    qpldma_smmu_fini(&f);
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
    QPldmaSmmu f;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, ",id=dma0")) {
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

    qpldma_smmu_stall_copy(&f);
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
    qpldma_smmu_fini(&f);
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
    uint8_t magic[8 + 4 * 4];
    QTestState *dst;
    QPldmaSmmu f;
    size_t off;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    /* An idle channel: ring_base, ring_size, head, tail, state (BE) */
    path = qpldma_migrate_to_file(f.qts, "pldma-smmu-bad-XXXXXX");
    qtest_quit(f.qts);
    stq_be_p(magic, QPS_VA_RING);
    stl_be_p(magic + 8, QPS_RING_SIZE);
    stl_be_p(magic + 12, 0);
    stl_be_p(magic + 16, 0);
    stl_be_p(magic + 20, PLDMA_STATE_IDLE);
    off = find_in_file(path, magic, sizeof(magic));

    /* The stream as it is loads */
    dst = qtest_initf(dst_args, "");
    g_assert_true(qpldma_migrate_from_file(dst, path));
    qtest_quit(dst);

    /* PASID 1 beyond pasid-bits=0 */
    dst = qtest_initf(dst_args, ",pasid-bits=0");
    g_assert_false(qpldma_migrate_from_file(dst, path));
    qtest_quit(dst);

    /* RUNNING with TAIL = 0x100 >= RING_SIZE */
    patch_be32(path, off + 16, 0x100);
    patch_be32(path, off + 20, PLDMA_STATE_RUNNING);
    dst = qtest_initf(dst_args, "");
    g_assert_false(qpldma_migrate_from_file(dst, path));
    qtest_quit(dst);

    /* STALLED without a pending stall: it could never be resumed */
    patch_be32(path, off + 16, 1);
    patch_be32(path, off + 20, PLDMA_STATE_STALLED);
    dst = qtest_initf(dst_args, "");
    g_assert_false(qpldma_migrate_from_file(dst, path));
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
    QPldmaSmmu f;
    uint16_t stag;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    stag = qpldma_smmu_stall_copy(&f);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_CANCELLED);
    g_assert_cmphex(qpldma_smmu_compl(&f, PLDMA_COMPL_BYTES), ==, 0x1000);
    g_assert_cmphex(qpldma_smmu_compl(&f, PLDMA_COMPL_FAULT_VA), ==,
                    QPS_VA_FAULT);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_IDLE);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_CANCELS), ==, 1);
    g_assert_cmpuint(qpldma_ch_rd(&f.d, 0, PLDMA_CH_ERROR), ==,
                     PLDMA_ERR_NONE);

    /* the fix arrives late: the old stall's RESUME is ignored */
    qpldma_smmu_map_fault(&f);
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);
    qsmmu_cmd_sync(&f.smmu);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    qtest_clock_step(f.qts, 10 * 1000 * 1000);
    g_assert_cmpuint(qpldma_smmu_state(&f), ==, PLDMA_STATE_IDLE);
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_RESTARTS), ==, 0);
    g_assert_cmpuint(qtest_readl(f.qts, f.pa_compl + PLDMA_COMPL_STATUS), ==,
                     PLDMA_ST_CANCELLED);

    /* and the next descriptor runs */
    qtest_memset(f.qts, f.pa_dst, 0, QPS_XFER);
    qpldma_smmu_copy(&f);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    qpldma_smmu_fini(&f);
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
    QPldmaSmmu f;
    uint64_t evt[4];
    uint16_t stag;
    int i;

    if (!qpldma_smmu_init(&f, "stall", 1, 8, NULL)) {
        return;
    }
    stag = qpldma_smmu_stall_copy(&f);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_CANCELLED);
    qpldma_smmu_wait_state(&f, PLDMA_STATE_IDLE);

    /* the same fault again, three times: never a second stall */
    for (i = 0; i < 3; i++) {
        qpldma_smmu_copy(&f);
        g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_FAULT);
        g_assert_cmphex(qpldma_smmu_compl(&f, PLDMA_COMPL_FAULT_VA),
                        ==, QPS_VA_FAULT);
        qpldma_smmu_wait_state(&f, PLDMA_STATE_IDLE);
        g_assert(qsmmu_pop_event(&f.smmu, evt));
        g_assert_cmphex(QSMMU_EVT_TYPE(evt), ==, QSMMU_EVT_F_TRANSLATION);
        g_assert_cmpuint(QSMMU_EVT_STALL(evt), ==, 0);
        g_assert(!qsmmu_pop_event(&f.smmu, evt));
    }
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_STALLS), ==, 1);
    /* the CANCELLED one and the three FAULTs */
    g_assert_cmpuint(qpldma_smmu_cnt(&f, PLDMA_CNT_ERRORS), ==, 4);

    /* the OS answers the orphan: the channel may stall again */
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_ABORT);
    qsmmu_cmd_sync(&f.smmu);
    g_assert(!qsmmu_cmdq_error(&f.smmu));
    stag = qpldma_smmu_stall_copy(&f);
    qpldma_smmu_map_fault(&f);
    qsmmu_resume(&f.smmu, QPS_SID, stag, QSMMU_RESUME_RETRY);
    qsmmu_cmd_sync(&f.smmu);
    g_assert_cmpuint(qpldma_smmu_wait_compl(&f), ==, PLDMA_ST_SUCCESS);
    qpldma_smmu_check_dst(&f);
    g_assert_cmphex(qsmmu_gerror(&f.smmu), ==, 0);
    qpldma_smmu_fini(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/pldma-smmu/cancel-stalled", test_cancel_stalled);
    qtest_add_func("/pldma-smmu/cancel-orphan", test_cancel_orphan);
    qtest_add_func("/pldma-smmu/resume-batch-bounded",
                   test_resume_batch_bounded);
    qtest_add_func("/pldma-smmu/evtq-on-own-registers",
                   test_evtq_on_own_registers);
    qtest_add_func("/pldma-smmu/report-declines-stall",
                   test_report_declines_stall);
    qtest_add_func("/pldma-smmu/channels-property", test_channels_property);
    qtest_add_func("/pldma-smmu/migrate-bad-stream",
                   test_migrate_bad_stream);
    return g_test_run();
}
