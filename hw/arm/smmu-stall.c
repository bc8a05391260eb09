/*
 * SMMU stall master interface
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A DMA master implementing TYPE_SMMU_STALL_MASTER is told by the SMMUv3
 * model when one of its transactions is stalled and how the stall is
 * resolved; see include/hw/arm/smmu-stall.h and
 * docs/specs/smmuv3-stall.rst.  smmu_platform_master_as() lives in
 * hw/arm/smmu-common.c.
 */

#include "qemu/osdep.h"
#include "qemu/module.h"
#include "hw/arm/smmu-stall.h"

static const TypeInfo smmu_stall_master_info = {
    .name = TYPE_SMMU_STALL_MASTER,
    .parent = TYPE_INTERFACE,
    .class_size = sizeof(SMMUStallMasterClass),
};

static void smmu_stall_master_register_types(void)
{
    type_register_static(&smmu_stall_master_info);
}

type_init(smmu_stall_master_register_types)
