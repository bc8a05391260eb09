/*
 * PLDMA engine internals shared by hw/misc/pldma/core.c and
 * hw/misc/pldma/fault.c
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

/* core.c */
const char *pldma_state_name(uint32_t st);
void pldma_set_state(PLDMAChannel *ch, uint32_t st);
void pldma_raise(PLDMACore *s, uint32_t bits);
void pldma_update_irq(PLDMACore *s);
void pldma_ch_error(PLDMAChannel *ch, uint32_t err);
PLDMAAccess pldma_rw(PLDMACore *s, PLDMAChannel *ch, uint64_t va,
                     void *buf, hwaddr len, bool is_write, uint64_t *fault_va);
void pldma_run_now(PLDMAChannel *ch);
MemTxAttrs pldma_ch_attrs(PLDMAChannel *ch);

/* fault.c */
void pldma_post_fault(PLDMACore *s, PLDMAChannel *ch);
bool pldma_probe_adopt(PLDMAChannel *ch, uint64_t va);
void pldma_probes_clear(PLDMAChannel *ch);
void pldma_access_failed(PLDMAChannel *ch, PLDMAAccess r, uint64_t va,
                         bool is_write);

/* net.c: remote operations, the requester and the responder */
uint32_t pldma_net_decode(PLDMAChannel *ch, const uint8_t *d);
bool pldma_net_xfer(PLDMAChannel *ch, uint64_t *budget);
void pldma_net_ch_end(PLDMAChannel *ch);
bool pldma_net_bh(PLDMACore *s, uint64_t *budget);
bool pldma_net_read(PLDMACore *s, hwaddr addr, uint64_t *val);
bool pldma_net_write(PLDMACore *s, hwaddr addr, uint32_t val);
bool pldma_net_resumed(PLDMACore *s, uint16_t stag, SMMUStallResponse resp);
void pldma_net_reset(PLDMACore *s);
void pldma_net_flush(PLDMACore *s);

static inline bool pldma_op_remote(uint8_t op)
{
    return op == PLDMA_OP_RDMA_WRITE || op == PLDMA_OP_RDMA_READ;
}

#endif /* HW_MISC_PLDMA_INTERNAL_H */
