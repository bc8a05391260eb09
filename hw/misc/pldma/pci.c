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
 *   kept in an ATS cache of PLDMA_ATS_CACHE_ENTRIES pages (pci-ats.c) until
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
#include "pci-internal.h"
#include "migration/vmstate.h"
#include "system/address-spaces.h"
#include "trace.h"

/* The MSI-X vector of IRQ_STATUS bit @bit */
static unsigned pldma_pci_vector(PLDMACore *core, unsigned bit)
{
    if (bit < PLDMA_MAX_CHANNELS) {
        return PLDMA_PCI_VEC_CH(bit);
    }
    if (BIT(bit) == PLDMA_IRQ_CH_ERROR || BIT(bit) == PLDMA_IRQ_CQ_ERROR ||
        BIT(bit) == PLDMA_IRQ_QP_ERROR || BIT(bit) == PLDMA_IRQ_SRQ) {
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
        pldma_ats_cache_flush(s);
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
    pldma_ats_cache_flush(s);
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
    /* PASID and ATS Control reset to 0 (disabled), the ATS cache first */
    pldma_ats_cache_flush(s);
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
