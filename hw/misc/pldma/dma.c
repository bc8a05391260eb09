/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, its DMA layer
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Every access the device makes goes through here: a channel's
 * (descriptors, buffers, completion records), the responder's (through a
 * key's PASID or a QP's PD) and the device's own queues' (no PASID).
 * Translation through the front-end (PCIe ATS) or the IOMMU, where the
 * SMMU stalls or terminates a faulting access, then a direct mapping of
 * RAM only; and the interrupt line to the front-end.
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "system/memory.h"
#include "pldma-internal.h"
#include "trace.h"

/* Tell the front-end which interrupt sources are pending and enabled */
void pldma_update_irq(PLDMACore *s)
{
    uint32_t pending = s->irq_status & s->irq_mask;

    trace_pldma_irq(s->irq_status, s->irq_mask, pending != 0);
    s->ops->update_irq(s, pending);
}

void pldma_raise(PLDMACore *s, uint32_t bits)
{
    s->irq_status |= bits;
}

static MemTxAttrs pldma_dma_attrs(PLDMACore *s, uint32_t pasid_reg)
{
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;

    /* the front-end may gate PASIDs (PCIe: PASID Control.Enable) */
    if ((pasid_reg & PLDMA_CHB_PASID_EN) &&
        (!s->ops->pasid_enabled || s->ops->pasid_enabled(s))) {
        attrs = (MemTxAttrs) { .pid = PLDMA_CHB_PASID_VALUE(pasid_reg) };
    }
    return attrs;
}

/* The context of an access of channel @ch, or of the device's own (NULL) */
PLDMADma pldma_ch_dma(PLDMAChannel *ch)
{
    if (!ch) {
        return (PLDMADma) { .idx = UINT32_MAX };
    }
    return (PLDMADma) {
        .ch = ch, .idx = ch->idx, .pasid_reg = ch->pasid_reg,
        .can_stall = true,
    };
}

/*
 * The translation of @va for one access: the front-end's own (PCIe ATS
 * for a PASID) when it has one for these attributes, else the IOMMU's.
 */
IOMMUTLBEntry pldma_iotlb_entry(PLDMACore *s, hwaddr va, bool is_write,
                                MemTxAttrs attrs)
{
    IOMMUTLBEntry e;

    if (s->ops->translate && s->ops->translate(s, va, is_write, attrs, &e)) {
        return e;
    }
    return address_space_get_iotlb_entry(s->dma_as, va, is_write, attrs);
}

/*
 * Translate @va for access @d, with @d as s->xlat meanwhile: the IOMMU's
 * stall paths record into it (pldma_core_stalled()).  Restored, not
 * cleared: a translation can nest (the SMMU's event writes).  The caller
 * holds the RCU read lock.
 */
IOMMUTLBEntry pldma_dma_translate(PLDMACore *s, PLDMADma *d, hwaddr va,
                                  bool is_write)
{
    PLDMADma *prev = s->xlat;
    IOMMUTLBEntry e;

    s->xlat = d;
    e = pldma_iotlb_entry(s, va, is_write, pldma_dma_attrs(s, d->pasid_reg));
    s->xlat = prev;
    return e;
}

/*
 * Map at most *len bytes at @va for direct access.  The IOMMU is asked
 * once per translation granule (address_space_get_iotlb_entry), which is
 * where the SMMU stalls or terminates a faulting access; the result is
 * then mapped in the translated address space, which has no IOMMU.  Only
 * RAM is ever accessed, so a ring or buffer pointed at MMIO (including our
 * own registers) cannot re-enter the device or have side effects.  On
 * PLDMA_ACC_OK, m->len > 0 and the caller must pldma_unmap() @m.
 */
static PLDMAAccess pldma_map(PLDMACore *s, PLDMADma *d, uint64_t va,
                             hwaddr len, bool is_write, PLDMAMap *m)
{
    MemTxAttrs attrs = pldma_dma_attrs(s, d->pasid_reg);
    AddressSpace *as = s->dma_as;
    hwaddr pa = va, xlat, l = len;
    MemoryRegion *mr;

    RCU_READ_LOCK_GUARD();

    if (s->translated) {
        IOMMUTLBEntry e;

        /* a page with a stall of ours outstanding: wait for that one */
        if (d->ch && d->ch->nprobes && pldma_probe_adopt(d->ch, va)) {
            return PLDMA_ACC_STALLED;
        }
        d->stalled = false;
        e = pldma_dma_translate(s, d, va, is_write);
        if (d->stalled) {
            return PLDMA_ACC_STALLED;
        }
        if (!(e.perm & (is_write ? IOMMU_WO : IOMMU_RO)) || !e.target_as) {
            return PLDMA_ACC_FAULT;
        }
        pldma_timing_xlat(s, d->ch, va, e.addr_mask, attrs.pid);
        as = e.target_as;
        pa = (e.translated_addr & ~e.addr_mask) | (va & e.addr_mask);
        l = MIN(l, e.addr_mask - (va & e.addr_mask) + 1);
    }

    mr = address_space_translate(as, pa, &xlat, &l, is_write, attrs);
    if (!memory_access_is_direct(mr, is_write, attrs) || l == 0) {
        return PLDMA_ACC_BUSERR;
    }
    m->host = address_space_map(as, pa, &l, is_write, attrs);
    if (!m->host) {
        return PLDMA_ACC_BUSERR;
    }
    m->as = as;
    m->len = l;
    m->is_write = is_write;
    return PLDMA_ACC_OK;
}

void pldma_unmap(PLDMAMap *m, hwaddr access_len)
{
    address_space_unmap(m->as, m->host, m->len, m->is_write, access_len);
}

/* A stall of channel @ch's access @d: the channel waits for its STAG */
static void pldma_ch_dma_done(PLDMAChannel *ch, const PLDMADma *d)
{
    if (ch && d->stalled) {
        ch->stag = d->stag;
        ch->stall_va = d->stall_va;
    }
}

/* Map for an access of channel @ch (pldma_map()) */
PLDMAAccess pldma_ch_map(PLDMAChannel *ch, uint64_t va, hwaddr len,
                         bool is_write, PLDMAMap *m)
{
    PLDMADma d = pldma_ch_dma(ch);
    PLDMAAccess r = pldma_map(ch->s, &d, va, len, is_write, m);

    pldma_ch_dma_done(ch, &d);
    return r;
}

/*
 * Copy a small buffer to or from DMA memory for access @d; on failure
 * *fault_va says where
 */
PLDMAAccess pldma_dma_rw(PLDMACore *s, PLDMADma *d, uint64_t va, void *buf,
                         hwaddr len, bool is_write, uint64_t *fault_va)
{
    hwaddr off = 0;

    while (off < len) {
        PLDMAMap m;
        PLDMAAccess r = pldma_map(s, d, va + off, len - off, is_write, &m);

        if (r != PLDMA_ACC_OK) {
            *fault_va = va + off;
            return r;
        }
        if (is_write) {
            memcpy(m.host, (uint8_t *)buf + off, m.len);
        } else {
            memcpy((uint8_t *)buf + off, m.host, m.len);
        }
        off += m.len;
        pldma_unmap(&m, m.len);
    }
    return PLDMA_ACC_OK;
}

/* ... for channel @ch, or for the device itself (NULL: its queues) */
PLDMAAccess pldma_rw(PLDMACore *s, PLDMAChannel *ch, uint64_t va,
                     void *buf, hwaddr len, bool is_write, uint64_t *fault_va)
{
    PLDMADma d = pldma_ch_dma(ch);
    PLDMAAccess r = pldma_dma_rw(s, &d, va, buf, len, is_write, fault_va);

    pldma_ch_dma_done(ch, &d);
    return r;
}
