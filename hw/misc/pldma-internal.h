/*
 * PLDMA engine internals shared by hw/misc/pldma-core.c and
 * hw/misc/pldma-fault.c
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_MISC_PLDMA_INTERNAL_H
#define HW_MISC_PLDMA_INTERNAL_H

#include "hw/misc/pldma.h"

/* Outcome of one DMA access of a channel */
typedef enum PLDMAAccess {
    PLDMA_ACC_OK,
    PLDMA_ACC_STALLED,      /* the SMMU parked the access */
    PLDMA_ACC_FAULT,        /* translation failed, not stalled */
    PLDMA_ACC_BUSERR,       /* target is not RAM */
} PLDMAAccess;

/* pldma-core.c */
const char *pldma_state_name(uint32_t st);
void pldma_set_state(PLDMAChannel *ch, uint32_t st);
void pldma_raise(PLDMACore *s, uint32_t bits);
void pldma_update_irq(PLDMACore *s);
void pldma_ch_error(PLDMAChannel *ch, uint32_t err);
PLDMAAccess pldma_rw(PLDMACore *s, PLDMAChannel *ch, uint64_t va,
                     void *buf, hwaddr len, bool is_write, uint64_t *fault_va);
void pldma_run_now(PLDMAChannel *ch);

/* pldma-fault.c */
void pldma_access_failed(PLDMAChannel *ch, PLDMAAccess r, uint64_t va,
                         bool is_write);

#endif /* HW_MISC_PLDMA_INTERNAL_H */
