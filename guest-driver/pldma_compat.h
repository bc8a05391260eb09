/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel API differences pldma.ko builds across, out of tree: upstream 6.12
 * LTS (the project's guest kernel) and the newest release.  Version checks
 * live here and nowhere else (checkpatch's LINUX_VERSION_CODE warning is
 * ignored for this file only, see the Makefile).
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#ifndef _PLDMA_COMPAT_H
#define _PLDMA_COMPAT_H

#include <linux/version.h>

/*
 * iommu_dev_enable_feature() and IOMMU_DEV_FEAT_IOPF/SVA were removed in
 * 6.16: the IOMMU driver enables what SVA needs when an SVA domain is
 * attached (arm-smmu-v3 enables IOPF itself for a stall-capable master).
 */
#if KERNEL_VERSION(6, 16, 0) > LINUX_VERSION_CODE
#define PLDMA_HAVE_IOMMU_DEV_FEAT	1
#else
#define PLDMA_HAVE_IOMMU_DEV_FEAT	0
#endif

/*
 * ib_device_ops.reg_user_mr gained a DMA handle argument (struct ib_dmah,
 * TLP processing hints) in 6.17.
 */
#if KERNEL_VERSION(6, 17, 0) > LINUX_VERSION_CODE
#define PLDMA_IB_DMAH_ARG
#define PLDMA_IB_DMAH_NONE	true
#else
struct ib_dmah;
#define PLDMA_IB_DMAH_ARG	struct ib_dmah *dmah,
#define PLDMA_IB_DMAH_NONE	(!dmah)
#endif

/*
 * ib_core dispatches a RoCE port's state events itself from its
 * net_device's (ib_dispatch_port_state_event(), 6.13); before, the driver
 * does, as rxe did.
 */
#if KERNEL_VERSION(6, 13, 0) > LINUX_VERSION_CODE
#define PLDMA_IB_OWN_PORT_EVENTS	1
#else
#define PLDMA_IB_OWN_PORT_EVENTS	0
#endif

/*
 * ODP for Atomic Write and FLUSH (IB_ODP_SUPPORT_ATOMIC_WRITE, _FLUSH) is
 * in ib_verbs.h since 6.16; before it there is no bit to say so
 */
#if KERNEL_VERSION(6, 16, 0) > LINUX_VERSION_CODE
#define PLDMA_ODP_ATOMIC_WRITE	0
#define PLDMA_ODP_FLUSH		0
#else
#define PLDMA_ODP_ATOMIC_WRITE	IB_ODP_SUPPORT_ATOMIC_WRITE
#define PLDMA_ODP_FLUSH		IB_ODP_SUPPORT_FLUSH
#endif

#endif /* _PLDMA_COMPAT_H */
