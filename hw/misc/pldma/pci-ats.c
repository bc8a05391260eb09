/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, ATS on pldma-pci
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * While ATS Control.Enable is set, a channel's PASID-tagged accesses are
 * translated with ATS translation requests for that PASID
 * (pci_ats_request_translation) and the translated addresses accessed
 * directly; the translations are kept in the ATS cache until the IOMMU
 * invalidates them (device-TLB invalidations, through an IOTLB notifier
 * per PASID), or ATS or PASID is disabled.  Not the timing model's
 * modeled ATC (timing.c), which only counts time.  See
 * docs/specs/pldma.rst, "PCI device".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "migration/vmstate.h"
#include "pci-internal.h"
#include "trace.h"

/* Drop the cached translations of @pasid in [start, start + mask] */
static void pldma_ats_cache_drop(PLDMAPCIState *s, uint32_t pasid, hwaddr start,
                                 hwaddr mask)
{
    uint32_t i, n = 0;

    for (i = 0; i < PLDMA_ATS_CACHE_ENTRIES; i++) {
        PLDMAATSCacheEntry *a = &s->atsc[i];

        if (a->valid && a->pasid == pasid &&
            ranges_overlap(a->e.iova, a->e.addr_mask + 1, start & ~mask,
                           mask + 1)) {
            a->valid = false;
            n++;
        }
    }
    trace_pldma_ats_cache_invalidate(pasid, start & ~mask, mask, n);
}

/* A device-TLB invalidation of the IOMMU, for the notifier's PASID */
static void pldma_ats_cache_notify(IOMMUNotifier *n, IOMMUTLBEntry *iotlb)
{
    PLDMAATSCacheNotifier *an = container_of(n, PLDMAATSCacheNotifier, n);

    pldma_ats_cache_drop(an->s, an->pasid, iotlb->iova, iotlb->addr_mask);
}

/*
 * Forget every cached translation, and stop listening for invalidations.
 * QEMU unregisters a PASID's notifier only while PASID is enabled: call
 * this before PASID goes off.  A notifier that stays registered (PASID
 * was off already) stays marked so, never to be inserted twice.
 */
void pldma_ats_cache_flush(PLDMAPCIState *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_ATS_CACHE_ENTRIES; i++) {
        s->atsc[i].valid = false;
    }
    for (i = 0; i < PLDMA_ATS_CACHE_PASIDS; i++) {
        PLDMAATSCacheNotifier *an = &s->atsc_n[i];

        if (an->registered &&
            !pci_iommu_unregister_iotlb_notifier(PCI_DEVICE(s), an->pasid,
                                                 &an->n)) {
            trace_pldma_ats_cache_unlisten(an->pasid);
            an->registered = false;
        }
    }
}

/*
 * May translations be cached: only when the IOMMU tells us of its
 * device-TLB invalidations.  An x86 IOMMU does so with device-iotlb=on
 * only, and registering for them without it ends QEMU: ask it first.
 */
static bool pldma_ats_cache_usable(PLDMAPCIState *s)
{
    bool ambiguous = false;
    Object *iommu;

    if (!s->ats_cache) {
        return false;
    }
    iommu = object_resolve_path_type("", "x86-iommu", &ambiguous);
    if (ambiguous) {
        return false;
    }
    return !iommu || object_property_get_bool(iommu, "device-iotlb", NULL);
}

/* Listen for the invalidations of @pasid; false if we cannot */
static bool pldma_ats_cache_listen(PLDMAPCIState *s, uint32_t pasid)
{
    PCIDevice *pd = PCI_DEVICE(s);
    PLDMAATSCacheNotifier *free = NULL;
    uint32_t i;

    for (i = 0; i < PLDMA_ATS_CACHE_PASIDS; i++) {
        PLDMAATSCacheNotifier *an = &s->atsc_n[i];

        if (an->registered && an->pasid == pasid) {
            return true;
        }
        if (!an->registered && !free) {
            free = an;
        }
    }
    if (!free || !pldma_ats_cache_usable(s) ||
        pci_iommu_init_iotlb_notifier(pd, &free->n, pldma_ats_cache_notify,
                                      free)) {
        return false;
    }
    free->s = s;
    free->pasid = pasid;
    if (pci_iommu_register_iotlb_notifier(pd, pasid, &free->n)) {
        return false;
    }
    free->registered = true;
    trace_pldma_ats_cache_listen(pasid);
    return true;
}

/* A cached translation of @va for @pasid that allows @need, or NULL */
static PLDMAATSCacheEntry *pldma_ats_cache_lookup(PLDMAPCIState *s,
                                                  uint32_t pasid, hwaddr va,
                                                  IOMMUAccessFlags need)
{
    uint32_t i;

    for (i = 0; i < PLDMA_ATS_CACHE_ENTRIES; i++) {
        PLDMAATSCacheEntry *a = &s->atsc[i];

        if (a->valid && a->pasid == pasid &&
            (va & ~a->e.addr_mask) == a->e.iova && (a->e.perm & need) == need) {
            return a;
        }
    }
    return NULL;
}

/* Keep the translation @e of @pasid (a page, from an ATS completion) */
static void pldma_ats_cache_insert(PLDMAPCIState *s, uint32_t pasid,
                                   const IOMMUTLBEntry *e)
{
    PLDMAATSCacheEntry *a = NULL;
    uint32_t i;

    if (!pldma_ats_cache_listen(s, pasid)) {
        return;
    }
    /* the same page again (a wider permission), else round robin */
    for (i = 0; i < PLDMA_ATS_CACHE_ENTRIES && !a; i++) {
        if (s->atsc[i].valid && s->atsc[i].pasid == pasid &&
            s->atsc[i].e.iova == e->iova) {
            a = &s->atsc[i];
        }
    }
    if (!a) {
        a = &s->atsc[s->atsc_next];
        s->atsc_next = (s->atsc_next + 1) % PLDMA_ATS_CACHE_ENTRIES;
    }
    a->e = *e;
    a->pasid = pasid;
    a->valid = true;
}

/*
 * With ATS enabled, a PASID-tagged access is translated by the ATS cache, or
 * else by an ATS translation request for its PASID, for the page of @va,
 * whose answer the ATS cache keeps; the permission the access needs missing is
 * a fault (e->perm IOMMU_NONE), which report mode hands to the driver.
 */
bool pldma_pci_translate(PLDMACore *core, hwaddr va, bool is_write,
                         MemTxAttrs attrs, IOMMUTLBEntry *e)
{
    PLDMAPCIState *s = pldma_pci(core);
    PCIDevice *pd = PCI_DEVICE(s);
    IOMMUAccessFlags need = is_write ? IOMMU_WO : IOMMU_RO;
    PLDMAATSCacheEntry *a;
    uint32_t err = 0;
    ssize_t n;

    if (attrs.unspecified || !pcie_ats_enabled(pd)) {
        return false;
    }
    a = pldma_ats_cache_lookup(s, attrs.pid, va, need);
    if (a) {
        *e = a->e;
        return true;
    }
    n = pci_ats_request_translation(pd, attrs.pid, false, false, va, 1,
                                    !is_write, e, 1, &err);
    if (n != 1 || err || !(e->perm & need)) {
        trace_pldma_pci_ats_fault(attrs.pid, va, is_write, n, err);
        *e = (IOMMUTLBEntry) { .perm = IOMMU_NONE };
        if (core->pri_mode) {
            pldma_pri_fault(pldma_pci(core), attrs.pid, va, is_write);
        }
        return true;
    }
    trace_pldma_pci_ats(attrs.pid, va, e->translated_addr, e->addr_mask,
                        e->perm);
    pldma_ats_cache_insert(s, attrs.pid, e);
    return true;
}
