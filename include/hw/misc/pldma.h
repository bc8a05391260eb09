/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * See docs/specs/pldma.rst; the register map is in hw/misc/pldma-regs.h.
 */

#ifndef HW_MISC_PLDMA_H
#define HW_MISC_PLDMA_H

#include "hw/sysbus.h"
#include "hw/misc/pldma-regs.h"
#include "qom/object.h"

#define TYPE_PLDMA "pldma"
OBJECT_DECLARE_SIMPLE_TYPE(PLDMAState, PLDMA)

/* Where in a descriptor's life a channel is */
typedef enum PLDMAPhase {
    PLDMA_PHASE_FETCH = 0,  /* read the descriptor at HEAD */
    PLDMA_PHASE_XFER = 1,   /* move data, "done" bytes already moved */
    PLDMA_PHASE_COMPL = 2,  /* write the completion record, advance HEAD */
} PLDMAPhase;

typedef struct PLDMAChannel {
    PLDMAState *s;
    uint32_t idx;

    /* privileged binding */
    uint32_t pasid_reg;
    uint32_t ctrl;
    uint32_t owner;

    /* user page */
    uint64_t ring_base;
    uint32_t ring_size;
    uint32_t head;
    uint32_t tail;
    uint32_t state;
    uint32_t error;
    uint32_t completed;
    uint32_t last_status;
    uint64_t fault_va;
    uint32_t fault_info;
    uint32_t fault_desc;
    uint32_t fault_done;

    /* descriptor in flight */
    uint32_t phase;
    uint8_t op;
    uint8_t dflags;
    uint32_t len;
    uint64_t src;
    uint64_t dst;
    uint64_t pattern;
    uint64_t compl_va;
    uint64_t cookie;
    uint64_t done;
    uint32_t cstatus;       /* status to write in the completion record */
    uint32_t cflags;
    uint64_t cfault_va;

    /* stall bookkeeping */
    bool stall_seen;        /* stalled() called during the current access */
    bool stall_pending;     /* parked, waiting for resumed() */
    uint16_t stag;
    uint64_t stall_va;

    /* counters */
    uint64_t cnt_bytes;
    uint32_t cnt_descs;
    uint32_t cnt_stalls;
    uint32_t cnt_faults;
    uint32_t cnt_restarts;
    uint32_t cnt_aborts;
    uint32_t cnt_cancels;
    uint32_t cnt_errors;
} PLDMAChannel;

struct PLDMAState {
    SysBusDevice parent_obj;

    MemoryRegion iomem;
    qemu_irq irq;
    QEMUBH *bh;
    AddressSpace *dma_as;
    Object *iommu;          /* link to the SMMU, set by the board */
    PLDMAChannel *cur;      /* channel whose access is being translated */
    bool busy;              /* a channel run (BH or inline) is in progress */
    uint32_t rr;            /* round-robin start */
    /* inline work left until the next bottom half (pldma_run_now) */
    uint64_t inline_bytes;
    uint32_t inline_descs;
    uint32_t inline_runs;

    /* global registers */
    uint32_t irq_status;
    uint32_t irq_mask;
    uint64_t fq_base;
    uint32_t fq_size;
    uint32_t fq_head;
    uint32_t fq_tail;
    uint32_t fq_ctrl;
    uint32_t fq_status;
    uint32_t fq_overflows;
    uint32_t fault_seq;

    PLDMAChannel ch[PLDMA_MAX_CHANNELS];

    /* properties */
    uint32_t num_channels;
    char *fault_mode_str;
    bool report_mode;
    uint8_t pasid_bits;
    uint32_t stream_id;
    uint32_t max_transfer;
    uint32_t chunk_size;
};

#endif /* HW_MISC_PLDMA_H */
