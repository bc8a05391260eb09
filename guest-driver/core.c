// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine (QEMU model of the
 * ExaNeSt engine), one module for both buses: the platform device
 * ("exanest,pldma", platform.c) and the PCIe endpoint (pldma-pci, pci.c)
 * share everything else.  This file: the device's lifetime, the probe and
 * removal both buses call, and the module.  pldma_drv.h says what is where.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/bitops.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/iommu.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-ats.h>
#include <linux/platform_device.h>
#include <linux/slab.h>

#include "pldma_drv.h"
#include "pldma_compat.h"

#define CREATE_TRACE_POINTS
#include "pldma_trace.h"

static DEFINE_IDA(pldma_ida);

/*
 * At most nch records are outstanding (a FAULTED channel waits for its
 * answer), so the default never overflows; a small queue (tests) does.
 */
static unsigned int fq_entries = 256;
module_param(fq_entries, uint, 0444);
MODULE_PARM_DESC(fq_entries, "fault queue records (report mode), 2..4096");

static void pldma_dev_free(struct kref *ref)
{
	struct pldma_dev *pd = container_of(ref, struct pldma_dev, ref);

	put_device(pd->dev);
	kfree(pd);
}

void pldma_dev_put(struct pldma_dev *pd)
{
	kref_put(&pd->ref, pldma_dev_free);
}

/* ------------------------------------------------------------------ */
/* Probe and teardown, shared by both buses                           */
/* ------------------------------------------------------------------ */

static void pldma_destroy_wq(void *data)
{
	struct pldma_dev *pd = data;

	/* waits for fault work still serving files released earlier */
	destroy_workqueue(pd->wq);
}

static void pldma_quiesce(void *data)
{
	struct pldma_dev *pd = data;

	pldma_wr(pd, PLDMA_IRQ_MASK, 0);
	pldma_wr(pd, PLDMA_FQ_CTRL, 0);
	pldma_wr(pd, PLDMA_CTRL, PLDMA_CTRL_RESET);
}

void pldma_unregister(void *data)
{
	struct pldma_dev *pd = data;
	struct pldma_ctx *ctx;
	unsigned int ch;

	if (pd->unregistered)
		return;
	pd->unregistered = true;
	pldma_ib_unregister(pd);
	pldma_debugfs_remove(pd);
	misc_deregister(&pd->misc);
	ida_free(&pldma_ida, pd->id);

	/* no open(), release() or fenced file operation runs meanwhile */
	down_write(&pd->gone_sem);
	pd->gone = true;
	for (ch = 0; ch < pd->nch; ch++) {
		spin_lock_irq(&pd->lock);
		ctx = pd->chans[ch];
		if (ctx)
			kref_get(&ctx->ref);
		spin_unlock_irq(&pd->lock);
		if (ctx) {
			pldma_ctx_detach(ctx);
			pldma_ctx_put(ctx);
		}
	}
	up_write(&pd->gone_sem);
}

#if PLDMA_HAVE_IOMMU_DEV_FEAT
static void pldma_disable_features(void *data)
{
	struct pldma_dev *pd = data;

	iommu_dev_disable_feature(pd->dev, IOMMU_DEV_FEAT_SVA);
	if (pd->iopf)
		iommu_dev_disable_feature(pd->dev, IOMMU_DEV_FEAT_IOPF);
}

/*
 * IOPF before SVA: for stall and pri mode, and for any PCIe function with
 * a PRI capability (intel-iommu refuses SVA for a function that supports
 * PRI without it enabled, whatever its fault mode; IOPF enables it).
 */
static bool pldma_wants_iopf(struct pldma_dev *pd)
{
	return pd->stall_mode ||
	       (dev_is_pci(pd->dev) && pci_pri_supported(to_pci_dev(pd->dev)));
}

static int pldma_enable_sva(struct pldma_dev *pd)
{
	struct device *dev = pd->dev;
	int ret;

	pd->iopf = pldma_wants_iopf(pd);
	if (pd->iopf) {
		ret = iommu_dev_enable_feature(dev, IOMMU_DEV_FEAT_IOPF);
		if (ret)
			return dev_err_probe(dev, ret, "cannot enable IOPF\n");
	}
	ret = iommu_dev_enable_feature(dev, IOMMU_DEV_FEAT_SVA);
	if (ret) {
		if (pd->iopf)
			iommu_dev_disable_feature(dev, IOMMU_DEV_FEAT_IOPF);
		return dev_err_probe(dev, ret, "cannot enable SVA\n");
	}
	return devm_add_action_or_reset(dev, pldma_disable_features, pd);
}
#else
/*
 * Since 6.16 there are no IOMMU_DEV_FEAT_* features: the IOMMU driver
 * enables what SVA needs when an SVA domain is attached (arm-smmu-v3
 * enables IOPF itself for a stall-capable master, refcounted), and a
 * driver only calls iommu_sva_bind_device().  A device the IOMMU cannot
 * do SVA for fails there, at open(), instead of at probe.
 */
static int pldma_enable_sva(struct pldma_dev *pd)
{
	return 0;
}
#endif

static void pldma_dev_put_action(void *data)
{
	pldma_dev_put(data);
}

/* The device's state, freed when the device and every open file are gone. */
struct pldma_dev *pldma_dev_alloc(struct device *dev)
{
	struct pldma_dev *pd;

	pd = kzalloc(sizeof(*pd), GFP_KERNEL);
	if (!pd)
		return NULL;
	kref_init(&pd->ref);
	init_rwsem(&pd->gone_sem);
	spin_lock_init(&pd->lock);
	spin_lock_init(&pd->gsi_lock);
	pd->dev = get_device(dev);
	if (devm_add_action_or_reset(dev, pldma_dev_put_action, pd))
		return NULL;
	return pd;
}

/*
 * Bus-independent part of probe, with pd->dev, pd->base and pd->phys set
 * by the glue (@size: the register window).  Leaves the interrupts masked;
 * the glue requests its vectors, then calls pldma_register().
 */
int pldma_core_probe(struct pldma_dev *pd, resource_size_t size)
{
	struct device *dev = pd->dev;
	u32 nch, mask;
	int ret;

	if (pldma_rd(pd, PLDMA_ID) != PLDMA_ID_VALUE)
		return dev_err_probe(dev, -ENODEV, "bad ID register\n");
	pd->version = pldma_rd(pd, PLDMA_VERSION);
	if (pd->version >> 16 != PLDMA_VERSION_MAJOR)
		return dev_err_probe(dev, -ENODEV, "unsupported version %#x\n",
				     pd->version);
	pd->cap = pldma_rd(pd, PLDMA_CAP);
	nch = min_t(u32, PLDMA_CAP_NUM_CH(pd->cap), PLDMA_MAX_CHANNELS);
	nch = min_t(u32, nch, size / PLDMA_PAGE_SIZE - 1);
	if (!nch)
		return dev_err_probe(dev, -ENODEV, "no channels\n");
	pd->nch = nch;
	/*
	 * pri (pldma-pci behind an IOMMU with PRI): the channel waits in
	 * STALLED while the IOMMU's IOPF serves the page request, exactly as
	 * in stall mode, so the driver treats it as stall mode.
	 */
	pd->pri_mode = pd->cap & PLDMA_CAP_FAULT_PRI;
	pd->stall_mode = pd->cap & (PLDMA_CAP_FAULT_STALL | PLDMA_CAP_FAULT_PRI);
	pd->max_xfer = pldma_rd(pd, PLDMA_MAX_XFER);
	pd->chunk = pldma_rd(pd, PLDMA_CHUNK_SIZE);
	pldma_remote_init(pd);
	pldma_qp_init(pd);
	pldma_cq_init(pd);
	pldma_srq_init(pd);

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	/* Unbound and without a max_active limit: channels fault in parallel. */
	pd->wq = alloc_workqueue("pldma_fault/%s", WQ_UNBOUND, 0,
				 dev_name(dev));
	if (!pd->wq)
		return -ENOMEM;
	ret = devm_add_action_or_reset(dev, pldma_destroy_wq, pd);
	if (ret)
		return ret;

	pldma_wr(pd, PLDMA_IRQ_MASK, 0);
	pldma_wr(pd, PLDMA_CTRL, PLDMA_CTRL_RESET);
	ret = devm_add_action_or_reset(dev, pldma_quiesce, pd);
	if (ret)
		return ret;

	if (pd->cap & PLDMA_CAP_PASID) {
		ret = pldma_enable_sva(pd);
		if (ret)
			return ret;
	} else {
		dev_warn(dev, "no IOMMU: user channels unavailable\n");
	}

	if (!pd->stall_mode) {
		pd->fq_entries = roundup_pow_of_two(clamp(fq_entries,
							  PLDMA_FQ_MIN_ENTRIES,
							  PLDMA_FQ_MAX_ENTRIES));
		pd->fq = dmam_alloc_coherent(dev, pd->fq_entries *
					     PLDMA_FR_SIZE, &pd->fq_dma,
					     GFP_KERNEL);
		if (!pd->fq)
			return -ENOMEM;
		pldma_wr(pd, PLDMA_FQ_CTRL, 0);
		pldma_wr(pd, PLDMA_FQ_BASE_LO, lower_32_bits(pd->fq_dma));
		pldma_wr(pd, PLDMA_FQ_BASE_HI, upper_32_bits(pd->fq_dma));
		pldma_wr(pd, PLDMA_FQ_SIZE, pd->fq_entries);
		pldma_wr(pd, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
		pd->fq_head = 0;
	}

	mask = (u32)(BIT(nch) - 1) | PLDMA_IRQ_CH_ERROR;
	if (pd->fq)
		mask |= PLDMA_IRQ_FAULT | PLDMA_IRQ_FQ_OVERFLOW;
	if (pd->num_cqs)
		mask |= PLDMA_IRQ_CQ | PLDMA_IRQ_CQ_ERROR | PLDMA_IRQ_QP_ERROR;
	if (pd->num_srqs)
		mask |= PLDMA_IRQ_SRQ;
	if (pd->cap & PLDMA_CAP_ETH && pd->num_qps)
		mask |= PLDMA_IRQ_ETH;	/* eth.c's net_device */
	pd->irq_mask = mask;
	return 0;
}

/* Unmask the interrupts, create /dev/pldmaN and the debugfs directory. */
int pldma_register(struct pldma_dev *pd, const char *bus)
{
	struct device *dev = pd->dev;
	int ret;

	pldma_wr(pd, PLDMA_IRQ_MASK, pd->irq_mask);

	pd->id = ida_alloc(&pldma_ida, GFP_KERNEL);
	if (pd->id < 0)
		return pd->id;
	snprintf(pd->name, sizeof(pd->name), "pldma%d", pd->id);
	pd->misc.minor = MISC_DYNAMIC_MINOR;
	pd->misc.name = pd->name;
	pd->misc.fops = &pldma_fops;
	pd->misc.parent = dev;
	/* access is granted by group (udev), see guest-driver/README.md */
	pd->misc.mode = 0660;
	ret = misc_register(&pd->misc);
	if (ret) {
		ida_free(&pldma_ida, pd->id);
		return ret;
	}
	pldma_debugfs_add(pd);
	ret = devm_add_action_or_reset(dev, pldma_unregister, pd);
	if (ret)
		return ret;
	ret = pldma_eth_register(pd);
	if (ret)
		return ret;

	dev_info(dev, "%s: v%u.%u, %u channels, %s mode, %s, stream %#x\n",
		 pd->name, pd->version >> 16, pd->version & 0xffff, pd->nch,
		 pldma_mode_name(pd), bus,
		 pldma_rd(pd, PLDMA_STREAM_ID));
	if (pd->node_id)
		dev_info(dev, "%s: remote DMA, node %u, MTU %u\n", pd->name,
			 pd->node_id, pd->mtu);
	/* the char device works without it: not fatal */
	ret = pldma_ib_register(pd);
	if (ret)
		dev_warn(dev, "%s: no RDMA device: %d\n", pd->name, ret);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Module                                                             */
/* ------------------------------------------------------------------ */

static int __init pldma_init(void)
{
	int ret;

	pldma_debugfs_init();
	ret = platform_driver_register(&pldma_platform_driver);
	if (ret)
		goto err_dbg;
	ret = pci_register_driver(&pldma_pci_driver);
	if (ret)
		goto err_platform;
	return 0;

err_platform:
	platform_driver_unregister(&pldma_platform_driver);
err_dbg:
	pldma_debugfs_exit();
	return ret;
}
module_init(pldma_init);

static void __exit pldma_exit(void)
{
	pci_unregister_driver(&pldma_pci_driver);
	platform_driver_unregister(&pldma_platform_driver);
	pldma_debugfs_exit();
}
module_exit(pldma_exit);

MODULE_DESCRIPTION("PLDMA page-fault-tolerant virtual-address DMA engine");
MODULE_AUTHOR("The PLDMA authors");
MODULE_LICENSE("GPL");
