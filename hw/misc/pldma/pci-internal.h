/*
 * PLDMA: what the PCIe endpoint's files share (pci.c, the glue; pci-pri.c,
 * page requests; pci-ats.c, the ATS cache and ATS translation)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_MISC_PLDMA_PCI_INTERNAL_H
#define HW_MISC_PLDMA_PCI_INTERNAL_H

#include "hw/misc/pldma.h"
#include "pldma-internal.h"

#define PLDMA_PCI_EXP_OFFSET    0x80
#define PLDMA_PCI_PASID_OFFSET  0x100
#define PLDMA_PCI_ATS_OFFSET    0x108   /* after PASID (8 bytes) */
#define PLDMA_PCI_PRI_OFFSET    0x110   /* after ATS, PCI_EXT_CAP_ATS_SIZEOF */
#define PLDMA_PRI_PAGE          4096ULL
#define PLDMA_PRI_NPRGI         (PCI_PRI_PRGI_MASK + 1)

static inline PLDMAPCIState *pldma_pci(PLDMACore *core)
{
    return container_of(core, PLDMAPCIState, core);
}

/* pci-pri.c: fault-mode=pri, page requests */
uint32_t pldma_pri_count(PLDMAPCIState *s, uint8_t state);
bool pldma_pri_listen(PLDMAPCIState *s, uint32_t pasid);
void pldma_pri_unlisten_all(PLDMAPCIState *s);
void pldma_pri_fault(PLDMAPCIState *s, uint32_t pasid, uint64_t va,
                     bool is_write);
bool pldma_pri_pending(PLDMACore *core, uint16_t stag);
void pldma_pri_bh(void *opaque);
void pldma_pri_clear(PLDMAPCIState *s, bool fail);
void pldma_pri_write_config(PLDMAPCIState *s, bool was_enabled);
extern const VMStateDescription vmstate_pldma_pri_req;

/* pci-ats.c: ATS translation and the ATS cache */
void pldma_ats_cache_flush(PLDMAPCIState *s);
bool pldma_pci_translate(PLDMACore *core, hwaddr va, bool is_write,
                         MemTxAttrs attrs, IOMMUTLBEntry *e);

#endif /* HW_MISC_PLDMA_PCI_INTERNAL_H */
