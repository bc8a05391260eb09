/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, PCIe page requests
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * fault-mode=pri on pldma-pci (pci.c): a channel access whose ATS
 * translation lacks the permission it needs becomes a page request
 * (pci_pri_request_page) while PRI Control.Enable is set, grouped by
 * channel into page request groups within the OS's allocation; the
 * channel waits in STALLED, on the stall state machine of fault.c with
 * the PRGI as its STAG, until the page group response (the IOMMU's PRI
 * notifier) resumes it or ends its descriptor.  See docs/specs/pldma.rst,
 * "Page requests (PRI)".
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "migration/vmstate.h"
#include "pci-internal.h"
#include "trace.h"

static uint16_t pldma_pri_status(PCIDevice *pd)
{
    return pci_get_word(pd->config + PLDMA_PCI_PRI_OFFSET + PCI_PRI_STATUS);
}

static void pldma_pri_status_set(PCIDevice *pd, uint16_t set, uint16_t clr)
{
    uint8_t *p = pd->config + PLDMA_PCI_PRI_OFFSET + PCI_PRI_STATUS;

    pci_set_word(p, (pci_get_word(p) & ~clr) | set);
}

uint32_t pldma_pri_count(PLDMAPCIState *s, uint8_t state)
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
bool pldma_pri_listen(PLDMAPCIState *s, uint32_t pasid)
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

void pldma_pri_unlisten_all(PLDMAPCIState *s)
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
/* (more PRGIs than entries: a group is always free) */
QEMU_BUILD_BUG_ON(PLDMA_PRI_ENTRIES >= PLDMA_PRI_NPRGI);

/*
 * A new page request group, channel @ch's: the next PRGI not in use,
 * round robin
 */
static uint16_t pldma_pri_new_group(PLDMAPCIState *s, uint32_t ch)
{
    uint16_t prgi = s->pri_next;
    int i;

    for (i = 0; i < PLDMA_PRI_NPRGI; i++) {
        prgi = (s->pri_next + i) & PCI_PRI_PRGI_MASK;
        if (!pldma_pri_prgi_busy(s, prgi)) {
            break;
        }
    }
    s->pri_next = (prgi + 1) & PCI_PRI_PRGI_MASK;
    s->pri_open = prgi;
    s->pri_open_ch = ch;
    s->pri_seq++;
    return prgi;
}

void pldma_pri_fault(PLDMAPCIState *s, uint32_t pasid, uint64_t va,
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
    int e;

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
        PLDMA_GUEST_ERR(pldma_err_pri_full, "ch%u: page request table full",
                        d->idx);
        return;
    }
    if (!pldma_pri_listen(s, pasid)) {
        PLDMA_GUEST_ERR(pldma_err_pri_no_notifier,
                        "ch%u: no PRI notifier for PASID %u", d->idx, pasid);
        return;
    }
    prgi = d->probing ? s->pri_open : pldma_pri_new_group(s, d->idx);
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
bool pldma_pri_pending(PLDMACore *core, uint16_t stag)
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
            PLDMA_GUEST_ERR(pldma_err_pri_refused,
                            "page request (PASID %u PRGI %u) refused by the "
                            "IOMMU: %s", r->pasid, prgi, strerror(-ret));
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
void pldma_pri_bh(void *opaque)
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
void pldma_pri_clear(PLDMAPCIState *s, bool fail)
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

void pldma_pri_write_config(PLDMAPCIState *s, bool was_enabled)
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

const VMStateDescription vmstate_pldma_pri_req = {
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
