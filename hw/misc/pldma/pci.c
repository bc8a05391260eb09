/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, PCIe endpoint
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The PCI front-end of the engine in core.c:
 *   BAR 0  the same register pages as the platform device (global page,
 *          then one page per channel, each mmap-able on its own);
 *   BAR 2  MSI-X: one vector per channel (IRQ_CH_DONE(n)), one for the
 *          fault queue (IRQ_FAULT, IRQ_FQ_OVERFLOW, IRQ_CH_FAULTED) and one
 *          for errors (IRQ_CH_ERROR); INTx when MSI-X is off;
 *   the PCIe PASID extended capability (pcie_pasid_init), Max PASID Width
 *   = pasid-bits; a channel's DMA carries its PASID only while PASID
 *   Control.Enable is set;
 *   the PCIe ATS extended capability (pcie_ats_init): while ATS
 *   Control.Enable is set, a channel's PASID-tagged accesses are
 *   translated with ATS translation requests for that PASID
 *   (pci_ats_request_translation), the way an IOMMU without
 *   per-transaction PASID attributes (intel-iommu) serves PASIDs, and the
 *   translated addresses then accessed directly; the translations are
 *   kept in a translation cache (ATC) of PLDMA_ATC_ENTRIES pages until
 *   the IOMMU invalidates them (device-TLB invalidations, through an
 *   IOTLB notifier per PASID), or ATS or PASID is disabled;
 *   the PCIe PRI extended capability (pcie_pri_init, PRG Response PASID
 *   Required): with fault-mode=pri, a channel access whose ATS
 *   translation lacks the permission it needs becomes a page request
 *   (pci_pri_request_page) while PRI Control.Enable is set, and the
 *   channel waits in STALLED, on the stall state machine of fault.c with
 *   the PRGI as its STAG, until the page group response (the IOMMU's PRI
 *   notifier) resumes it or ends its descriptor.
 * Its StreamID is its requester ID.  PCIe endpoints are not stalled by an
 * SMMUv3 (the architecture gives them PRI, which Linux's arm-smmu-v3 does
 * not consume): behind it the device works in report mode; pri needs an
 * IOMMU with a page request queue (intel-iommu, x-prs=on).  See
 * docs/specs/pldma.rst, "PCI device" and "Page requests (PRI)".
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/qdev-properties.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/misc/pldma.h"
#include "pldma-internal.h"
#include "migration/vmstate.h"
#include "system/address-spaces.h"
#include "trace.h"

#define PLDMA_PCI_EXP_OFFSET    0x80
#define PLDMA_PCI_PASID_OFFSET  0x100
#define PLDMA_PCI_ATS_OFFSET    0x108   /* after PASID (8 bytes) */
#define PLDMA_PCI_PRI_OFFSET    0x110   /* after ATS, PCI_EXT_CAP_ATS_SIZEOF */
#define PLDMA_PRI_PAGE          4096ULL
#define PLDMA_PRI_NPRGI         (PCI_PRI_PRGI_MASK + 1)

static PLDMAPCIState *pldma_pci(PLDMACore *core)
{
    return container_of(core, PLDMAPCIState, core);
}

/* The MSI-X vector of IRQ_STATUS bit @bit */
static unsigned pldma_pci_vector(PLDMACore *core, unsigned bit)
{
    if (bit < PLDMA_MAX_CHANNELS) {
        return PLDMA_PCI_VEC_CH(bit);
    }
    if (BIT(bit) == PLDMA_IRQ_CH_ERROR || BIT(bit) == PLDMA_IRQ_CQ_ERROR ||
        BIT(bit) == PLDMA_IRQ_QP_ERROR) {
        return PLDMA_PCI_VEC_ERROR(core->num_channels);
    }
    if (BIT(bit) == PLDMA_IRQ_CQ) {
        return PLDMA_PCI_VEC_CQ(core->num_channels);
    }
    if (BIT(bit) == PLDMA_IRQ_ETH) {
        return PLDMA_PCI_VEC_ETH(core->num_channels);
    }
    return PLDMA_PCI_VEC_FAULT(core->num_channels);
}

/*
 * MSI-X messages are edges: a vector fires when one of its sources becomes
 * pending (set in IRQ_STATUS and enabled in IRQ_MASK); the driver clears
 * IRQ_STATUS in its handler.  Without MSI-X, INTx is the level.
 */
static void pldma_pci_update_irq(PLDMACore *core, uint32_t pending)
{
    PLDMAPCIState *s = pldma_pci(core);
    PCIDevice *pd = PCI_DEVICE(s);
    uint32_t rising = pending & ~s->msix_pending;

    s->msix_pending = pending;
    if (!msix_enabled(pd)) {
        pci_set_irq(pd, pending != 0);
        return;
    }
    pci_set_irq(pd, 0);
    while (rising) {
        unsigned bit = ctz32(rising);
        unsigned vec = pldma_pci_vector(core, bit);

        rising &= rising - 1;
        if (vec < PLDMA_PCI_NUM_VECS(core->num_channels)) {
            trace_pldma_pci_msix(bit, vec);
            msix_notify(pd, vec);
        }
    }
}

static bool pldma_pci_pasid_enabled(PLDMACore *core)
{
    return pcie_pasid_enabled(PCI_DEVICE(pldma_pci(core)));
}

/* ---- fault-mode=pri: page requests ---- */

static uint16_t pldma_pri_status(PCIDevice *pd)
{
    return pci_get_word(pd->config + PLDMA_PCI_PRI_OFFSET + PCI_PRI_STATUS);
}

static void pldma_pri_status_set(PCIDevice *pd, uint16_t set, uint16_t clr)
{
    uint8_t *p = pd->config + PLDMA_PCI_PRI_OFFSET + PCI_PRI_STATUS;

    pci_set_word(p, (pci_get_word(p) & ~clr) | set);
}

static uint32_t pldma_pri_count(PLDMAPCIState *s, uint8_t state)
{
    uint32_t i, n = 0;

    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        n += s->pri_req[i].state == state;
    }
    return n;
}

static bool pldma_pri_prgi_busy(PLDMAPCIState *s, uint16_t prgi)
{
    uint32_t i;

    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        if (s->pri_req[i].state != PLDMA_PRI_FREE &&
            s->pri_req[i].prgi == prgi) {
            return true;
        }
    }
    return false;
}

static int pldma_pri_free_entry(PLDMAPCIState *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        if (s->pri_req[i].state == PLDMA_PRI_FREE) {
            return i;
        }
    }
    return -1;
}

/*
 * PRI Stopped: PRI disabled and no page request outstanding (PCIe 6.0,
 * 10.5.2.3)
 */
static void pldma_pri_update_stopped(PLDMAPCIState *s)
{
    PCIDevice *pd = PCI_DEVICE(s);
    bool stopped = !pcie_pri_enabled(pd) &&
                   !pldma_pri_count(s, PLDMA_PRI_SENT);

    pldma_pri_status_set(pd, stopped ? PCI_PRI_STATUS_STOPPED : 0,
                         stopped ? 0 : PCI_PRI_STATUS_STOPPED);
}

static void pldma_pri_notify(IOMMUPRINotifier *notifier,
                             IOMMUPRIResponse *response);

/* The IOMMU calls us back for page group responses of @pasid */
static bool pldma_pri_listen(PLDMAPCIState *s, uint32_t pasid)
{
    PLDMAPRINotifier *free = NULL;
    uint32_t i, j;

    for (i = 0; i < PLDMA_PRI_PASIDS; i++) {
        PLDMAPRINotifier *pn = &s->pri_n[i];

        if (pn->registered && pn->pasid == pasid) {
            return true;
        }
    }
    /* a slot that is unused, or whose PASID has nothing outstanding */
    for (i = 0; i < PLDMA_PRI_PASIDS && !free; i++) {
        PLDMAPRINotifier *pn = &s->pri_n[i];
        bool used = false;

        for (j = 0; pn->registered && j < PLDMA_PRI_ENTRIES; j++) {
            used |= s->pri_req[j].state != PLDMA_PRI_FREE &&
                    s->pri_req[j].pasid == pn->pasid;
        }
        if (!used) {
            free = pn;
        }
    }
    if (!free) {
        return false;
    }
    if (free->registered) {
        trace_pldma_pri_unlisten(free->pasid);
        pci_pri_unregister_notifier(PCI_DEVICE(s), free->pasid);
        free->registered = false;
    }
    free->s = s;
    free->pasid = pasid;
    free->n.notify = pldma_pri_notify;
    if (pci_pri_register_notifier(PCI_DEVICE(s), pasid, &free->n)) {
        return false;
    }
    free->registered = true;
    trace_pldma_pri_listen(pasid);
    return true;
}

static void pldma_pri_unlisten_all(PLDMAPCIState *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_PRI_PASIDS; i++) {
        if (s->pri_n[i].registered) {
            trace_pldma_pri_unlisten(s->pri_n[i].pasid);
            pci_pri_unregister_notifier(PCI_DEVICE(s), s->pri_n[i].pasid);
            s->pri_n[i].registered = false;
        }
    }
}

/*
 * A channel access (the faulting one, or one ahead of it while
 * max-outstanding probes) lacks its translation: queue a page request for
 * its page and stall the channel on it, its PRGI as the STAG.  The
 * faulting access opens a new page request group; the accesses ahead
 * join it, as long as the PRI allocation and our table leave room, so
 * that the OS resolves them with one response.  The bottom half sends
 * the group once it is complete.  Declined: the access is a plain fault.
 */
static void pldma_pri_fault(PLDMAPCIState *s, uint32_t pasid, uint64_t va,
                            bool is_write)
{
    PLDMACore *core = &s->core;
    PCIDevice *pd = PCI_DEVICE(s);
    PLDMADma *d = core->xlat;
    uint32_t alloc = pcie_pri_get_req_alloc(pd);
    uint32_t busy = pldma_pri_count(s, PLDMA_PRI_QUEUED) +
                    pldma_pri_count(s, PLDMA_PRI_SENT);
    SMMUStallInfo info;
    PLDMAPRIReq *r;
    uint16_t prgi;
    int e, i;

    if (!d || !d->can_stall || !pcie_pri_enabled(pd) || !alloc ||
        (pldma_pri_status(pd) & PCI_PRI_STATUS_RF)) {
        trace_pldma_pri_declined(d && d->can_stall ? (int)d->idx : -1, va,
                                 pcie_pri_enabled(pd), alloc,
                                 pldma_pri_status(pd));
        return;
    }
    if (d->probing) {
        /* ahead: only into the channel's open group, within the allocation */
        if (s->pri_open < 0 || s->pri_open_ch != (int32_t)d->idx ||
            busy >= alloc) {
            return;
        }
    }
    if (!pldma_core_can_stall(core, core->stream_id)) {
        return;
    }
    e = pldma_pri_free_entry(s);
    if (e < 0 || (d->probing && pldma_pri_count(s, PLDMA_PRI_FREE) <=
                                core->num_channels)) {
        /* the last entries are kept for the faulting accesses */
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: ch%u: page request table "
                      "full\n", d->idx);
        return;
    }
    if (!pldma_pri_listen(s, pasid)) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: ch%u: no PRI notifier for "
                      "PASID %u\n", d->idx, pasid);
        return;
    }
    if (d->probing) {
        prgi = s->pri_open;
    } else {
        /* a new group: the next PRGI not in use, round robin */
        for (i = 0; i < PLDMA_PRI_NPRGI; i++) {
            prgi = (s->pri_next + i) & PCI_PRI_PRGI_MASK;
            if (!pldma_pri_prgi_busy(s, prgi)) {
                break;
            }
        }
        assert(i < PLDMA_PRI_NPRGI);    /* more PRGIs than entries */
        s->pri_next = (prgi + 1) & PCI_PRI_PRGI_MASK;
        s->pri_open = prgi;
        s->pri_open_ch = d->idx;
        s->pri_seq++;
    }
    r = &s->pri_req[e];
    *r = (PLDMAPRIReq) {
        .addr = va & ~(PLDMA_PRI_PAGE - 1),
        .pasid = pasid,
        .seq = s->pri_seq,
        .prgi = prgi,
        .state = PLDMA_PRI_QUEUED,
        .is_write = is_write,
    };
    trace_pldma_pri_queued(d->idx, pasid, prgi, r->addr, is_write,
                           d->probing);
    info = (SMMUStallInfo) {
        .sid = core->stream_id,
        .ssv = true,
        .ssid = pasid,
        .stag = prgi,
        .addr = va,
        .is_write = is_write,
    };
    pldma_core_stalled(core, &info);
    qemu_bh_schedule(s->pri_bh);
}

/* Is a page request group (@stag: its PRGI) still to be answered */
static bool pldma_pri_pending(PLDMACore *core, uint16_t stag)
{
    return pldma_pri_prgi_busy(pldma_pci(core), stag);
}

static void pldma_pri_notify(IOMMUPRINotifier *notifier,
                             IOMMUPRIResponse *response)
{
    PLDMAPRINotifier *pn = container_of(notifier, PLDMAPRINotifier, n);
    PLDMAPCIState *s = pn->s;
    uint32_t i, n = 0;

    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        PLDMAPRIReq *r = &s->pri_req[i];

        if (r->state == PLDMA_PRI_SENT && r->prgi == response->prgi &&
            r->pasid == pn->pasid) {
            r->state = PLDMA_PRI_ANSWERED;
            r->resp = response->response_code;
            n++;
        }
    }
    trace_pldma_pri_response(pn->pasid, response->prgi,
                             response->response_code, n);
    if (!n) {
        /* a PRGI with no group of ours outstanding */
        pldma_pri_status_set(PCI_DEVICE(s), PCI_PRI_STATUS_UPRGI, 0);
        return;
    }
    if (response->response_code == IOMMU_PRI_RESP_FAILURE) {
        /* the OS expects no more requests until it clears RF */
        pldma_pri_status_set(PCI_DEVICE(s), PCI_PRI_STATUS_RF, 0);
    }
    /* resume from the bottom half, outside of the IOMMU's queue walk */
    qemu_bh_schedule(s->pri_bh);
}

/*
 * Resume the channel(s) of an answered group: one resumed() per page of
 * it, since the faulting access and each access ahead (or a channel that
 * has parked on one of those) waits on the same STAG.  The entries stay
 * until then, so that the PRGI is not reused by a stall of this loop.
 */
static void pldma_pri_resume(PLDMAPCIState *s, uint16_t prgi, uint8_t code,
                             uint32_t state)
{
    PLDMACore *core = &s->core;
    SMMUStallResponse resp = code == IOMMU_PRI_RESP_SUCCESS ?
                             SMMU_STALL_RETRY : SMMU_STALL_ABORT;
    uint32_t i, n = 0;

    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        n += s->pri_req[i].state == state && s->pri_req[i].prgi == prgi;
    }
    trace_pldma_pri_resume(prgi, code, n);
    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        if (s->pri_req[i].state == state && s->pri_req[i].prgi == prgi) {
            s->pri_req[i].state = PLDMA_PRI_ANSWERED;
        }
    }
    for (i = 0; i < n; i++) {
        pldma_core_resumed(core, core->stream_id, prgi, resp);
    }
    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        if (s->pri_req[i].state == PLDMA_PRI_ANSWERED &&
            s->pri_req[i].prgi == prgi) {
            s->pri_req[i].state = PLDMA_PRI_FREE;
        }
    }
}

/* The oldest queued group, or -1 */
static int pldma_pri_oldest(PLDMAPCIState *s, uint8_t state)
{
    int i, best = -1;

    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        if (s->pri_req[i].state == state &&
            (best < 0 || (int32_t)(s->pri_req[i].seq -
                                   s->pri_req[best].seq) < 0)) {
            best = i;
        }
    }
    return best;
}

/* Send the group @prgi: its pages, the last one with LPIG */
static bool pldma_pri_send(PLDMAPCIState *s, uint16_t prgi, uint32_t n)
{
    PCIDevice *pd = PCI_DEVICE(s);
    uint32_t i, k = 0;

    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        PLDMAPRIReq *r = &s->pri_req[i];
        int ret;

        if (r->state != PLDMA_PRI_QUEUED || r->prgi != prgi) {
            continue;
        }
        r->last = ++k == n;
        ret = pci_pri_request_page(pd, r->pasid, false, false, r->addr,
                                   r->last, prgi, !r->is_write, r->is_write);
        trace_pldma_pri_sent(r->pasid, prgi, r->addr, r->is_write, r->last,
                             ret);
        if (ret) {
            qemu_log_mask(LOG_GUEST_ERROR, "pldma: page request (PASID %u "
                          "PRGI %u) refused by the IOMMU: %s\n", r->pasid,
                          prgi, strerror(-ret));
            return false;
        }
        r->state = PLDMA_PRI_SENT;
    }
    return true;
}

/*
 * The bottom half: resume the channels of answered groups, then send the
 * queued groups in order, each whole, while the PRI allocation has room.
 * A group that cannot be sent (PRI disabled, Response Failure, larger
 * than the allocation, refused by the IOMMU) ends its accesses as failed.
 */
static void pldma_pri_bh(void *opaque)
{
    PLDMAPCIState *s = opaque;
    PCIDevice *pd = PCI_DEVICE(s);
    int i;

    while ((i = pldma_pri_oldest(s, PLDMA_PRI_ANSWERED)) >= 0) {
        pldma_pri_resume(s, s->pri_req[i].prgi, s->pri_req[i].resp,
                         PLDMA_PRI_ANSWERED);
    }
    while ((i = pldma_pri_oldest(s, PLDMA_PRI_QUEUED)) >= 0) {
        uint16_t prgi = s->pri_req[i].prgi;
        uint32_t alloc = pcie_pri_get_req_alloc(pd);
        uint32_t sent = pldma_pri_count(s, PLDMA_PRI_SENT);
        uint32_t j, n = 0;

        for (j = 0; j < PLDMA_PRI_ENTRIES; j++) {
            n += s->pri_req[j].state == PLDMA_PRI_QUEUED &&
                 s->pri_req[j].prgi == prgi;
        }
        if (s->pri_open == prgi) {
            s->pri_open = -1;   /* complete: nothing joins it any more */
        }
        if (pcie_pri_enabled(pd) && n <= alloc &&
            !(pldma_pri_status(pd) & PCI_PRI_STATUS_RF) &&
            sent + n > alloc) {
            trace_pldma_pri_wait_alloc(prgi, n, sent, alloc);
            break;              /* until a response frees requests */
        }
        /*
         * A group larger than the whole allocation (the OS lowered it
         * while PRI was enabled) could never go out: it fails too.
         */
        if (!pcie_pri_enabled(pd) || n > alloc ||
            (pldma_pri_status(pd) & PCI_PRI_STATUS_RF) ||
            !pldma_pri_send(s, prgi, n)) {
            /* what was sent of a refused group is forgotten too */
            for (j = 0; j < PLDMA_PRI_ENTRIES; j++) {
                if (s->pri_req[j].state == PLDMA_PRI_SENT &&
                    s->pri_req[j].prgi == prgi) {
                    s->pri_req[j].state = PLDMA_PRI_QUEUED;
                }
            }
            pldma_pri_resume(s, prgi, IOMMU_PRI_RESP_FAILURE,
                             PLDMA_PRI_QUEUED);
        }
    }
    pldma_pri_update_stopped(s);
}

/*
 * Forget every page request (device reset, PRI Reset): the channels have
 * forgotten their stalls already (reset), or end the accesses that waited
 * on them as failed (PRI Reset).
 */
static void pldma_pri_clear(PLDMAPCIState *s, bool fail)
{
    int i;

    while (fail && (i = pldma_pri_oldest(s, PLDMA_PRI_SENT)) >= 0) {
        pldma_pri_resume(s, s->pri_req[i].prgi, IOMMU_PRI_RESP_FAILURE,
                         PLDMA_PRI_SENT);
    }
    while (fail && (i = pldma_pri_oldest(s, PLDMA_PRI_QUEUED)) >= 0) {
        pldma_pri_resume(s, s->pri_req[i].prgi, IOMMU_PRI_RESP_FAILURE,
                         PLDMA_PRI_QUEUED);
    }
    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        s->pri_req[i].state = PLDMA_PRI_FREE;
    }
    s->pri_open = -1;
}

static void pldma_pri_write_config(PLDMAPCIState *s, bool was_enabled)
{
    PCIDevice *pd = PCI_DEVICE(s);
    uint8_t *ctrl = pd->config + PLDMA_PCI_PRI_OFFSET + PCI_PRI_CTRL;
    bool enabled = pcie_pri_enabled(pd);

    if (enabled != was_enabled) {
        trace_pldma_pri_enable(enabled, pcie_pri_get_req_alloc(pd));
    }
    if (pci_get_word(ctrl) & PCI_PRI_CTRL_RESET) {
        /* Reset reads 0; it clears the requests while PRI is disabled */
        pci_set_word(ctrl, pci_get_word(ctrl) & ~PCI_PRI_CTRL_RESET);
        if (!enabled) {
            trace_pldma_pri_reset(pldma_pri_count(s, PLDMA_PRI_SENT));
            pldma_pri_clear(s, true);
        }
    }
    if (enabled != was_enabled) {
        /* queued groups go out, or fail if PRI went off */
        qemu_bh_schedule(s->pri_bh);
    }
    pldma_pri_update_stopped(s);
}

/* ---- ATS translation cache ---- */

/* Drop the cached translations of @pasid in [start, start + mask] */
static void pldma_atc_drop(PLDMAPCIState *s, uint32_t pasid, hwaddr start,
                           hwaddr mask)
{
    uint32_t i, n = 0;

    for (i = 0; i < PLDMA_ATC_ENTRIES; i++) {
        PLDMAATCEntry *a = &s->atc[i];

        if (a->valid && a->pasid == pasid &&
            ranges_overlap(a->e.iova, a->e.addr_mask + 1, start & ~mask,
                           mask + 1)) {
            a->valid = false;
            n++;
        }
    }
    trace_pldma_atc_invalidate(pasid, start & ~mask, mask, n);
}

/* A device-TLB invalidation of the IOMMU, for the notifier's PASID */
static void pldma_atc_notify(IOMMUNotifier *n, IOMMUTLBEntry *iotlb)
{
    PLDMAATCNotifier *an = container_of(n, PLDMAATCNotifier, n);

    pldma_atc_drop(an->s, an->pasid, iotlb->iova, iotlb->addr_mask);
}

/*
 * Forget every cached translation, and stop listening for invalidations.
 * QEMU unregisters a PASID's notifier only while PASID is enabled: call
 * this before PASID goes off.  A notifier that stays registered (PASID
 * was off already) stays marked so, never to be inserted twice.
 */
static void pldma_atc_flush(PLDMAPCIState *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_ATC_ENTRIES; i++) {
        s->atc[i].valid = false;
    }
    for (i = 0; i < PLDMA_ATC_PASIDS; i++) {
        PLDMAATCNotifier *an = &s->atc_n[i];

        if (an->registered &&
            !pci_iommu_unregister_iotlb_notifier(PCI_DEVICE(s), an->pasid,
                                                 &an->n)) {
            trace_pldma_atc_unlisten(an->pasid);
            an->registered = false;
        }
    }
}

/*
 * May translations be cached: only when the IOMMU tells us of its
 * device-TLB invalidations.  An x86 IOMMU does so with device-iotlb=on
 * only, and registering for them without it ends QEMU: ask it first.
 */
static bool pldma_atc_usable(PLDMAPCIState *s)
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
static bool pldma_atc_listen(PLDMAPCIState *s, uint32_t pasid)
{
    PCIDevice *pd = PCI_DEVICE(s);
    PLDMAATCNotifier *free = NULL;
    uint32_t i;

    for (i = 0; i < PLDMA_ATC_PASIDS; i++) {
        PLDMAATCNotifier *an = &s->atc_n[i];

        if (an->registered && an->pasid == pasid) {
            return true;
        }
        if (!an->registered && !free) {
            free = an;
        }
    }
    if (!free || !pldma_atc_usable(s) ||
        pci_iommu_init_iotlb_notifier(pd, &free->n, pldma_atc_notify, free)) {
        return false;
    }
    free->s = s;
    free->pasid = pasid;
    if (pci_iommu_register_iotlb_notifier(pd, pasid, &free->n)) {
        return false;
    }
    free->registered = true;
    trace_pldma_atc_listen(pasid);
    return true;
}

/* A cached translation of @va for @pasid that allows @need, or NULL */
static PLDMAATCEntry *pldma_atc_lookup(PLDMAPCIState *s, uint32_t pasid,
                                       hwaddr va, IOMMUAccessFlags need)
{
    uint32_t i;

    for (i = 0; i < PLDMA_ATC_ENTRIES; i++) {
        PLDMAATCEntry *a = &s->atc[i];

        if (a->valid && a->pasid == pasid &&
            (va & ~a->e.addr_mask) == a->e.iova && (a->e.perm & need) == need) {
            return a;
        }
    }
    return NULL;
}

/* Keep the translation @e of @pasid (a page, from an ATS completion) */
static void pldma_atc_insert(PLDMAPCIState *s, uint32_t pasid,
                             const IOMMUTLBEntry *e)
{
    PLDMAATCEntry *a = NULL;
    uint32_t i;

    if (!pldma_atc_listen(s, pasid)) {
        return;
    }
    /* the same page again (a wider permission), else round robin */
    for (i = 0; i < PLDMA_ATC_ENTRIES && !a; i++) {
        if (s->atc[i].valid && s->atc[i].pasid == pasid &&
            s->atc[i].e.iova == e->iova) {
            a = &s->atc[i];
        }
    }
    if (!a) {
        a = &s->atc[s->atc_next];
        s->atc_next = (s->atc_next + 1) % PLDMA_ATC_ENTRIES;
    }
    a->e = *e;
    a->pasid = pasid;
    a->valid = true;
}

/*
 * With ATS enabled, a PASID-tagged access is translated by the ATC, or
 * else by an ATS translation request for its PASID, for the page of @va,
 * whose answer the ATC keeps; the permission the access needs missing is
 * a fault (e->perm IOMMU_NONE), which report mode hands to the driver.
 */
static bool pldma_pci_translate(PLDMACore *core, hwaddr va, bool is_write,
                                MemTxAttrs attrs, IOMMUTLBEntry *e)
{
    PLDMAPCIState *s = pldma_pci(core);
    PCIDevice *pd = PCI_DEVICE(s);
    IOMMUAccessFlags need = is_write ? IOMMU_WO : IOMMU_RO;
    PLDMAATCEntry *a;
    uint32_t err = 0;
    ssize_t n;

    if (attrs.unspecified || !pcie_ats_enabled(pd)) {
        return false;
    }
    a = pldma_atc_lookup(s, attrs.pid, va, need);
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
    pldma_atc_insert(s, attrs.pid, e);
    return true;
}

static const PLDMACoreOps pldma_pci_ops = {
    .update_irq = pldma_pci_update_irq,
    .pasid_enabled = pldma_pci_pasid_enabled,
    .stall_is_pending = pldma_pri_pending,
    .translate = pldma_pci_translate,
    .pri = true,
};

static void pldma_pci_write_config(PCIDevice *pd, uint32_t addr,
                                   uint32_t val, int len)
{
    PLDMAPCIState *s = PLDMA_PCI(pd);
    bool pasid_was = pldma_pci_pasid_enabled(&s->core);
    bool ats_was = pcie_ats_enabled(pd);
    bool pri_was = pcie_pri_enabled(pd);

    /*
     * The translations are of ATS, and of PASIDs: forget them before
     * either may go off (a write to either Control register)
     */
    if (ranges_overlap(addr, len, PLDMA_PCI_PASID_OFFSET + PCI_PASID_CTRL, 2) ||
        ranges_overlap(addr, len, PLDMA_PCI_ATS_OFFSET + PCI_ATS_CTRL, 2)) {
        pldma_atc_flush(s);
    }
    pci_default_write_config(pd, addr, val, len);
    if (ranges_overlap(addr, len, PLDMA_PCI_PRI_OFFSET,
                       PCI_EXT_CAP_PRI_SIZEOF)) {
        pldma_pri_write_config(s, pri_was);
    }
    /* the requester ID changes when the guest numbers the buses */
    s->core.stream_id = pci_requester_id(pd);
    if (pasid_was != pldma_pci_pasid_enabled(&s->core)) {
        trace_pldma_pci_pasid_enable(!pasid_was);
    }
    if (ats_was != pcie_ats_enabled(pd)) {
        trace_pldma_pci_ats_enable(!ats_was);
    }
    if (range_covers_byte(addr, len, PCI_COMMAND)) {
        /* INTx may have been masked or MSI-X switched */
        s->msix_pending = 0;
        pldma_pci_update_irq(&s->core, s->core.irq_status &
                                       s->core.irq_mask);
    }
}

static void pldma_pci_realize(PCIDevice *pd, Error **errp)
{
    PLDMAPCIState *s = PLDMA_PCI(pd);
    PLDMACore *core = &s->core;
    uint64_t bar_size;
    unsigned i, nvec;

    if (core->fault_mode_str && strcmp(core->fault_mode_str, "report") &&
        strcmp(core->fault_mode_str, "pri")) {
        error_setg(errp, "pldma-pci supports fault-mode=report or pri: an "
                   "IOMMU does not stall PCIe endpoints (they use PRI)");
        return;
    }
    core->dma_as = pci_get_address_space(pd);
    core->translated = pci_device_iommu_address_space(pd) !=
                       &address_space_memory;
    core->stream_id = pci_requester_id(pd);
    core->conf = &s->conf;
    if (!pldma_core_realize(core, DEVICE(pd), &pldma_pci_ops, "report",
                            errp)) {
        return;
    }

    pci_config_set_interrupt_pin(pd->config, 1);
    bar_size = pow2ceil(PLDMA_MMIO_SIZE(core->num_channels));
    memory_region_init(&s->bar0, OBJECT(s), "pldma-pci-bar0", bar_size);
    memory_region_add_subregion(&s->bar0, 0, &core->iomem);
    pci_register_bar(pd, PLDMA_PCI_BAR_REGS,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    nvec = PLDMA_PCI_NUM_VECS(core->num_channels);
    if (msix_init_exclusive_bar(pd, nvec, PLDMA_PCI_BAR_MSIX, errp)) {
        goto fail;
    }
    for (i = 0; i < nvec; i++) {
        msix_vector_use(pd, i);
    }
    if (pcie_endpoint_cap_init(pd, PLDMA_PCI_EXP_OFFSET) < 0) {
        error_setg(errp, "pldma-pci: cannot add the PCIe capability");
        goto fail_msix;
    }
    /* PASID: no execute or privileged mode, Max PASID Width = pasid-bits */
    pcie_pasid_init(pd, PLDMA_PCI_PASID_OFFSET, core->pasid_bits, false,
                    false);
    /* ATS: translations of whole pages (page aligned) */
    pcie_ats_init(pd, PLDMA_PCI_ATS_OFFSET, true);
    /* PRI, whose responses Linux requires to carry the PASID */
    pcie_pri_init(pd, PLDMA_PCI_PRI_OFFSET, PLDMA_PRI_CAPACITY, true);
    /*
     * Status.Stopped is read-only but ours to change (it follows Enable
     * and the outstanding requests): a migration target, where PRI starts
     * stopped, must not compare it with the source's
     */
    pci_set_word(pd->cmask + PLDMA_PCI_PRI_OFFSET + PCI_PRI_STATUS,
                 pci_get_word(pd->cmask + PLDMA_PCI_PRI_OFFSET +
                              PCI_PRI_STATUS) & ~PCI_PRI_STATUS_STOPPED);
    s->pri_bh = qemu_bh_new_guarded(pldma_pri_bh, s,
                                    &DEVICE(pd)->mem_reentrancy_guard);
    s->pri_open = -1;
    return;

fail_msix:
    msix_uninit_exclusive_bar(pd);
fail:
    pldma_core_unrealize(core);
}

static void pldma_pci_exit(PCIDevice *pd)
{
    PLDMAPCIState *s = PLDMA_PCI(pd);

    trace_pldma_pci_exit(s->core.num_channels);
    /* no page group response or invalidation may reach us once gone */
    pldma_pri_unlisten_all(s);
    pldma_atc_flush(s);
    qemu_bh_delete(s->pri_bh);
    s->pri_bh = NULL;
    pldma_core_unrealize(&s->core);
    /*
     * The register pages sit in a container of ours: as a subregion they
     * hold a reference on their owner, us, which only our finalization
     * would drop.  Take them out, or the device is never freed (and QEMU
     * never sends DEVICE_DELETED).
     */
    memory_region_del_subregion(&s->bar0, &s->core.iomem);
    pcie_cap_exit(pd);
    msix_uninit_exclusive_bar(pd);
}

static void pldma_pci_reset_hold(Object *obj, ResetType type)
{
    PLDMAPCIState *s = PLDMA_PCI(obj);

    PCIDevice *pd = PCI_DEVICE(s);

    pldma_core_reset(&s->core);
    s->msix_pending = 0;
    msix_reset(pd);
    /* PASID and ATS Control reset to 0 (disabled), the ATC first */
    pldma_atc_flush(s);
    pci_set_word(pd->config + PLDMA_PCI_PASID_OFFSET + PCI_PASID_CTRL, 0);
    pci_set_word(pd->config + PLDMA_PCI_ATS_OFFSET + PCI_ATS_CTRL, 0);
    /*
     * PRI: disabled, no allocation, its requests forgotten (the channels
     * forgot their stalls above); a late response finds no group (UPRGI)
     */
    trace_pldma_pri_reset(pldma_pri_count(s, PLDMA_PRI_SENT));
    qemu_bh_cancel(s->pri_bh);
    pldma_pri_clear(s, false);
    pldma_pri_unlisten_all(s);
    pci_set_word(pd->config + PLDMA_PCI_PRI_OFFSET + PCI_PRI_CTRL, 0);
    pci_set_long(pd->config + PLDMA_PCI_PRI_OFFSET + PCI_PRI_ALLOC_REQ, 0);
    pci_set_word(pd->config + PLDMA_PCI_PRI_OFFSET + PCI_PRI_STATUS,
                 PCI_PRI_STATUS_PASID | PCI_PRI_STATUS_STOPPED);
}

/* A migrated page request: reject what the device could not have made */
static int pldma_pri_req_post_load(void *opaque, int version_id)
{
    PLDMAPRIReq *r = opaque;

    /* (its PASID is checked against pasid-bits by pldma_pci_post_load) */
    if (r->state >= PLDMA_PRI_NSTATES || r->prgi > PCI_PRI_PRGI_MASK ||
        (r->addr & (PLDMA_PRI_PAGE - 1)) ||
        r->resp > IOMMU_PRI_RESP_FAILURE) {
        error_report("pldma-pci: migrated page request rejected (state %u "
                     "PRGI %u PASID %u)", r->state, r->prgi, r->pasid);
        return -EINVAL;
    }
    return 0;
}

static const VMStateDescription vmstate_pldma_pri_req = {
    .name = "pldma-pci/pri-request",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = pldma_pri_req_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(addr, PLDMAPRIReq),
        VMSTATE_UINT32(pasid, PLDMAPRIReq),
        VMSTATE_UINT32(seq, PLDMAPRIReq),
        VMSTATE_UINT16(prgi, PLDMAPRIReq),
        VMSTATE_UINT8(state, PLDMAPRIReq),
        VMSTATE_BOOL(is_write, PLDMAPRIReq),
        VMSTATE_BOOL(last, PLDMAPRIReq),
        VMSTATE_UINT8(resp, PLDMAPRIReq),
        VMSTATE_END_OF_LIST()
    }
};

/*
 * Outstanding page requests migrate as they are (the IOMMU's page request
 * queue migrates with it): sent ones are answered on the destination, so
 * listen for their PASIDs again; queued and answered ones are handled by
 * the bottom half.  They are loaded before the engine, whose channels
 * check that the request they wait on is held (pldma_pri_pending).
 */
static int pldma_pci_post_load(void *opaque, int version_id)
{
    PLDMAPCIState *s = opaque;
    PCIDevice *pd = PCI_DEVICE(s);
    uint32_t i, sent = pldma_pri_count(s, PLDMA_PRI_SENT);

    s->core.stream_id = pci_requester_id(pd);
    if (sent > PLDMA_PRI_CAPACITY ||
        (sent && !s->core.pri_mode) ||
        (s->pri_open >= 0 && (s->pri_open > PCI_PRI_PRGI_MASK ||
                              s->pri_open_ch < 0 ||
                              /* (a responder's group: no channel's) */
                              (s->pri_open_ch >= s->core.num_channels &&
                               s->pri_open_ch != PLDMA_FR_CH_REMOTE)))) {
        error_report("pldma-pci: migrated page requests rejected (%u sent, "
                     "open group %d)", sent, s->pri_open);
        return -EINVAL;
    }
    s->pri_next &= PCI_PRI_PRGI_MASK;
    for (i = 0; i < PLDMA_PRI_PASIDS; i++) {
        s->pri_n[i].registered = false;
    }
    for (i = 0; i < PLDMA_PRI_ENTRIES; i++) {
        if (s->pri_req[i].state == PLDMA_PRI_FREE) {
            continue;
        }
        if (!pldma_pasid_valid(&s->core, s->pri_req[i].pasid)) {
            error_report("pldma-pci: migrated page request for PASID %u "
                         "beyond pasid-bits", s->pri_req[i].pasid);
            return -EINVAL;
        }
        if (!pldma_pri_listen(s, s->pri_req[i].pasid)) {
            error_report("pldma-pci: no PRI notifier for migrated PASID %u",
                         s->pri_req[i].pasid);
            return -EINVAL;
        }
    }
    trace_pldma_pri_migrated(sent, pldma_pri_count(s, PLDMA_PRI_QUEUED));
    qemu_bh_schedule(s->pri_bh);
    return 0;
}

static const VMStateDescription vmstate_pldma_pci = {
    .name = TYPE_PLDMA_PCI,
    .version_id = 2,
    .minimum_version_id = 1,
    .post_load = pldma_pci_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, PLDMAPCIState),
        VMSTATE_MSIX(parent_obj, PLDMAPCIState),
        /* before the engine: its channels check their requests */
        VMSTATE_STRUCT_ARRAY(pri_req, PLDMAPCIState, PLDMA_PRI_ENTRIES, 2,
                             vmstate_pldma_pri_req, PLDMAPRIReq),
        VMSTATE_UINT32_V(pri_seq, PLDMAPCIState, 2),
        VMSTATE_UINT16_V(pri_next, PLDMAPCIState, 2),
        VMSTATE_INT32_V(pri_open, PLDMAPCIState, 2),
        VMSTATE_INT32_V(pri_open_ch, PLDMAPCIState, 2),
        VMSTATE_STRUCT(core, PLDMAPCIState, 1, vmstate_pldma_core, PLDMACore),
        VMSTATE_UINT32(msix_pending, PLDMAPCIState),
        VMSTATE_END_OF_LIST()
    }
};

static const Property pldma_pci_properties[] = {
    DEFINE_PLDMA_COMMON_PROPERTIES(PLDMAPCIState, core),
    DEFINE_NIC_PROPERTIES(PLDMAPCIState, conf),
    DEFINE_PROP_BOOL("ats-cache", PLDMAPCIState, ats_cache, true),
};

static void pldma_pci_class_init(ObjectClass *klass, const void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    pc->realize = pldma_pci_realize;
    pc->exit = pldma_pci_exit;
    pc->config_write = pldma_pci_write_config;
    /* the driver matches PLDMA_PCI_VENDOR_ID: the same QEMU vendor ID */
    QEMU_BUILD_BUG_ON(PLDMA_PCI_VENDOR_ID != PCI_VENDOR_ID_QEMU);
    pc->vendor_id = PCI_VENDOR_ID_QEMU;
    pc->device_id = PLDMA_PCI_DEVICE_ID;
    pc->revision = PLDMA_VERSION_MAJOR;
    pc->class_id = PCI_CLASS_SYSTEM_OTHER;
    dc->desc = "PLDMA page-fault-tolerant virtual-address DMA engine (PCIe)";
    dc->vmsd = &vmstate_pldma_pci;
    dc->hotpluggable = true;
    rc->phases.hold = pldma_pci_reset_hold;
    device_class_set_props(dc, pldma_pci_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);

    pldma_core_class_init(klass, offsetof(PLDMAPCIState, core));
    object_class_property_set_description(klass, "fault-mode",
        "report (the default): faults go to the fault queue; pri: a "
        "missing translation becomes a PCIe page request (PRI) and the "
        "channel waits for the page group response");
    object_class_property_set_description(klass, "ats-cache",
        "keep ATS translations until the IOMMU invalidates them (on, the "
        "default), or ask for one at every access");
}

static const TypeInfo pldma_pci_types[] = {
    {
        .name = TYPE_PLDMA_PCI,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PLDMAPCIState),
        .class_init = pldma_pci_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_PCIE_DEVICE },
            { }
        },
    },
};

DEFINE_TYPES(pldma_pci_types)
