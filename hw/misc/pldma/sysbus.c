/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, platform device
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The sysbus front-end of the engine in core.c: one MMIO region, one
 * level interrupt, DMA through the SMMU as a platform master with its own
 * StreamID (smmu_platform_master_as), stalls through the SMMU's stall
 * master interface (TYPE_SMMU_STALL_MASTER).  See docs/specs/pldma.rst.
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/irq.h"
#include "hw/qdev-properties.h"
#include "hw/arm/smmu-common.h"
#include "hw/arm/smmu-stall.h"
#include "hw/misc/pldma.h"
#include "pldma-internal.h"
#include "migration/vmstate.h"
#include "system/address-spaces.h"

static void pldma_sysbus_update_irq(PLDMACore *core, uint32_t pending)
{
    PLDMAState *s = container_of(core, PLDMAState, core);

    qemu_set_irq(s->irq, pending != 0);
}

static bool pldma_sysbus_stall_is_pending(PLDMACore *core, uint16_t stag)
{
    PLDMAState *s = container_of(core, PLDMAState, core);

    return s->iommu && smmu_stall_is_pending(ARM_SMMU(s->iommu),
                                             core->stream_id, stag);
}

static const PLDMACoreOps pldma_sysbus_ops = {
    .update_irq = pldma_sysbus_update_irq,
    .stall_is_pending = pldma_sysbus_stall_is_pending,
};

/* ---- stall master interface: the SMMU talks to the engine ---- */

static bool pldma_can_stall(SMMUStallMaster *master, uint32_t sid)
{
    return pldma_core_can_stall(&PLDMA(master)->core, sid);
}

static void pldma_stalled(SMMUStallMaster *master, const SMMUStallInfo *info)
{
    pldma_core_stalled(&PLDMA(master)->core, info);
}

static void pldma_resumed(SMMUStallMaster *master, uint32_t sid,
                          uint16_t stag, SMMUStallResponse resp)
{
    pldma_core_resumed(&PLDMA(master)->core, sid, stag, resp);
}

/* ---- QOM ---- */

static void pldma_realize(DeviceState *dev, Error **errp)
{
    PLDMAState *s = PLDMA(dev);
    PLDMACore *core = &s->core;

    if (s->iommu) {
        core->dma_as = smmu_platform_master_as(ARM_SMMU(s->iommu), dev,
                                               core->stream_id, errp);
        if (!core->dma_as) {
            return;
        }
        core->translated = true;
    } else {
        core->dma_as = &address_space_memory;
        core->translated = false;
    }
    core->conf = &s->conf;
    if (!pldma_core_realize(core, dev, &pldma_sysbus_ops, "stall", errp)) {
        if (s->iommu) {
            smmu_platform_master_release(ARM_SMMU(s->iommu),
                                         core->stream_id);
        }
        return;
    }
    sysbus_init_mmio(SYS_BUS_DEVICE(dev), &core->iomem);
    sysbus_init_irq(SYS_BUS_DEVICE(dev), &s->irq);
}

static void pldma_unrealize(DeviceState *dev)
{
    PLDMAState *s = PLDMA(dev);

    pldma_core_unrealize(&s->core);
    if (s->iommu) {
        smmu_platform_master_release(ARM_SMMU(s->iommu), s->core.stream_id);
    }
}

static void pldma_reset_hold(Object *obj, ResetType type)
{
    PLDMAState *s = PLDMA(obj);

    pldma_core_reset(&s->core);
    qemu_set_irq(s->irq, 0);
}

static const VMStateDescription vmstate_pldma = {
    .name = TYPE_PLDMA,
    .version_id = 2,
    .minimum_version_id = 2,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(core, PLDMAState, 1, vmstate_pldma_core, PLDMACore),
        VMSTATE_END_OF_LIST()
    }
};

static const Property pldma_properties[] = {
    DEFINE_PLDMA_COMMON_PROPERTIES(PLDMAState, core),
    DEFINE_PROP_UINT32("stream-id", PLDMAState, core.stream_id,
                       SMMU_PLATFORM_SID_BASE),
    DEFINE_PROP_LINK("iommu", PLDMAState, iommu, TYPE_ARM_SMMU, Object *),
    DEFINE_NIC_PROPERTIES(PLDMAState, conf),
};

static void pldma_class_init(ObjectClass *klass, const void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    SMMUStallMasterClass *smc = SMMU_STALL_MASTER_CLASS(klass);

    dc->desc = "PLDMA page-fault-tolerant virtual-address DMA engine";
    dc->realize = pldma_realize;
    dc->unrealize = pldma_unrealize;
    dc->vmsd = &vmstate_pldma;
    dc->user_creatable = true;
    rc->phases.hold = pldma_reset_hold;
    device_class_set_props(dc, pldma_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    smc->can_stall = pldma_can_stall;
    smc->stalled = pldma_stalled;
    smc->resumed = pldma_resumed;

    pldma_core_class_init(klass, offsetof(PLDMAState, core));
    object_class_property_set_description(klass, "fault-mode",
        "stall (park on SMMU stalls, default) or report (fault queue)");
    object_class_property_set_description(klass, "stream-id",
        "SMMU StreamID of the device, >= 0x10000");
    object_class_property_set_description(klass, "iommu",
        "the SMMU (set by the board)");
}

static const TypeInfo pldma_types[] = {
    {
        .name = TYPE_PLDMA,
        .parent = TYPE_SYS_BUS_DEVICE,
        .instance_size = sizeof(PLDMAState),
        .class_init = pldma_class_init,
        .interfaces = (InterfaceInfo[]) {
            { TYPE_SMMU_STALL_MASTER },
            { }
        },
    },
};

DEFINE_TYPES(pldma_types)
