/*
 * libqos: a PLDMA on the virt board's platform bus behind its SMMUv3,
 * with one process whose copies fault, for the tests of the SMMU's stall
 * model (smmuv3-stall-test) and of the PLDMA in stall mode
 * (pldma-smmu-test)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The process is SubstreamID QPS_SSID (ASID QPS_ASID) in a linear CD
 * table of 2^QPS_S1CDMAX contexts.  Channel 0 is bound to it, with its
 * ring and completion record mapped; a COPY of QPS_XFER bytes goes from
 * QPS_VA_SRC (mapped, a known pattern) to QPS_VA_DST, whose first page is
 * mapped and whose second page (QPS_VA_FAULT) is not: it stalls or faults
 * until qpldma_smmu_map_fault() maps it.
 */

#ifndef LIBQOS_PLDMA_SMMU_H
#define LIBQOS_PLDMA_SMMU_H

#include "../libqtest.h"
#include "pldma.h"
#include "smmuv3.h"

#define QPS_PLDMA_BASE      0x0c000000ULL   /* first platform bus slot */
#define QPS_SID             0x10000
#define QPS_SMMU_MEM        0x44000000ULL   /* SMMU structures and buffers */
#define QPS_SMMU_MEM_SIZE   (32 * 1024 * 1024)

#define QPS_SSID            1
#define QPS_ASID            1
#define QPS_S1CDMAX         2               /* 4 CDs */

#define QPS_VA_RING         0x10000000ULL
#define QPS_VA_COMPL        0x10001000ULL
#define QPS_VA_SRC          0x10002000ULL
#define QPS_VA_DST          0x10004000ULL
#define QPS_VA_FAULT        (QPS_VA_DST + 0x1000)   /* unmapped at first */
#define QPS_XFER            0x2000                  /* two pages */
#define QPS_RING_SIZE       4
#define QPS_COOKIE          0xc0c0
/* Byte @i of the source */
#define QPS_SRC_BYTE(i)     ((uint8_t)((i) * 7 + 3))

typedef struct QPldmaSmmu {
    QTestState *qts;
    QPldma d;
    QSMMU smmu;
    QPldmaRing ring;            /* channel 0's */
    uint64_t cdtab;
    uint64_t ttb;
    uint64_t pa_ring, pa_compl, pa_src, pa_dst;
    bool ssv;                   /* expected in the events */
    uint32_t ssid;
} QPldmaSmmu;

/*
 * Start QEMU with a PLDMA (fault-mode @mode, @nch channels, then @extra
 * appended to its -device, which may add options and devices) behind the
 * SMMU, whose event queue has 2^@evtq_log2 entries; set the process up and
 * bind channel 0 to it.  False (the test skipped) without a PLDMA.
 */
bool qpldma_smmu_init(QPldmaSmmu *f, const char *mode, int nch,
                      int evtq_log2, const char *extra);
void qpldma_smmu_fini(QPldmaSmmu *f);
/* (Re)bind channel 0 with CH_BIND.PASID = @pasid_reg and set its ring up */
void qpldma_smmu_bind(QPldmaSmmu *f, uint32_t pasid_reg);

/* Queue a COPY of QPS_XFER bytes from QPS_VA_SRC to @dst on channel 0 */
void qpldma_smmu_copy_to(QPldmaSmmu *f, uint64_t dst);
/* Same, to QPS_VA_DST */
void qpldma_smmu_copy(QPldmaSmmu *f);
/*
 * One step of the virtual clock (1 us), the @step of qpldma_wait_state()
 * and qpldma_wait_compl() for @opaque a QPldmaSmmu, at most QPS_POLLS times
 */
#define QPS_POLLS           10000
void qpldma_smmu_step(void *opaque);
/* Let the device run until channel 0 is in @state */
void qpldma_smmu_wait_state(QPldmaSmmu *f, uint32_t state);
/* Let the device run until the completion record is written; its status */
uint32_t qpldma_smmu_wait_compl(QPldmaSmmu *f);
/* A 64-bit field of the completion record (PLDMA_COMPL_BYTES, ...) */
uint64_t qpldma_smmu_compl(QPldmaSmmu *f, uint32_t field);
/* Channel 0's CH_STATE */
uint32_t qpldma_smmu_state(QPldmaSmmu *f);
/* Channel 0's counter @cnt (PLDMA_CNT_*) */
uint32_t qpldma_smmu_cnt(QPldmaSmmu *f, uint32_t cnt);
/* The destination holds the source */
void qpldma_smmu_check_dst(QPldmaSmmu *f);
/* Map QPS_VA_FAULT, as an IOPF handler would (no invalidation) */
void qpldma_smmu_map_fault(QPldmaSmmu *f);

/*
 * Map QPS_VA_FAULT (no invalidation) and resume the stall @stag with
 * RETRY, as an IOPF handler does: the copy completes with its bytes
 */
void qpldma_smmu_resume_ok(QPldmaSmmu *f, uint16_t stag);

/*
 * Start a copy whose second destination page stalls, check its event (the
 * only one) and return its STAG
 */
uint16_t qpldma_smmu_stall_copy(QPldmaSmmu *f);

#endif
