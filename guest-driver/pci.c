// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: the PCIe endpoint (-device pldma-pci): BAR 0 with pcim_*, PASID,
 * MSI-X with the device's fixed vector layout (INTx otherwise), over the
 * shared core (core.c).  Report mode only (docs/specs/pldma.rst, "PCI
 * device").
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-ats.h>

#include "pldma_drv.h"

static void pldma_pci_disable_pasid(void *data)
{
	pci_disable_pasid(data);
}

/*
 * PASID: arm-smmu-v3 enables it when it probes a master that has the
 * capability (that is what gives the master SubstreamIDs); enable it here
 * only if nobody did.  The device tags DMA with a channel's PASID only
 * while PASID Control.Enable is set.
 */
static int pldma_pci_pasid(struct pci_dev *pdev)
{
	int ret;

	if (pci_pasid_features(pdev) < 0 || pdev->pasid_enabled)
		return 0;
	ret = pci_enable_pasid(pdev, 0);
	if (ret) {
		dev_warn(&pdev->dev, "cannot enable PASID: %d\n", ret);
		return 0;
	}
	return devm_add_action_or_reset(&pdev->dev, pldma_pci_disable_pasid,
					pdev);
}

static int pldma_pci_request_irq(struct pldma_dev *pd, unsigned int idx,
				 u32 mask, bool thread, unsigned long flags,
				 const char *what)
{
	struct pci_dev *pdev = to_pci_dev(pd->dev);
	const char *name;
	int irq;

	irq = pci_irq_vector(pdev, idx);
	if (irq < 0)
		return irq;
	name = devm_kasprintf(pd->dev, GFP_KERNEL, "pldma %s %s",
			      pci_name(pdev), what);
	if (!name)
		return -ENOMEM;
	pd->vecs[idx].pd = pd;
	pd->vecs[idx].mask = mask;
	return devm_request_threaded_irq(pd->dev, irq, pldma_irq,
					 thread ? pldma_irq_thread : NULL,
					 flags, name, &pd->vecs[idx]);
}

/*
 * MSI-X with the device's fixed layout (PLDMA_PCI_VEC_*): all of it or
 * nothing, since a source whose vector is not allocated stays masked.
 * Otherwise INTx, the level of IRQ_STATUS & IRQ_MASK, for every source.
 */
static int pldma_pci_irqs(struct pldma_dev *pd)
{
	struct pci_dev *pdev = to_pci_dev(pd->dev);
	u32 hwnch = PLDMA_CAP_NUM_CH(pd->cap);
	bool cq = pd->cap & PLDMA_CAP_CQ;
	bool eth = pd->cap & PLDMA_CAP_ETH;
	/*
	 * A device without CQs or the Ethernet function (no link) has no
	 * vectors for them: the last ones
	 */
	unsigned int nvec = eth ? PLDMA_PCI_NUM_VECS(hwnch) :
			    cq ? PLDMA_PCI_VEC_ETH(hwnch) :
			    PLDMA_PCI_VEC_CQ(hwnch);
	unsigned int ch;
	char what[8];
	int ret;

	if (hwnch > PLDMA_MAX_CHANNELS)
		ret = -EINVAL;
	else
		ret = pci_alloc_irq_vectors(pdev, nvec, nvec, PCI_IRQ_MSIX);
	if (ret < 0) {
		ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_INTX);
		if (ret < 0)
			return dev_err_probe(pd->dev, ret, "no interrupt\n");
		return pldma_pci_request_irq(pd, 0, U32_MAX, true, IRQF_SHARED,
					     "intx");
	}
	for (ch = 0; ch < pd->nch; ch++) {
		snprintf(what, sizeof(what), "ch%u", ch);
		ret = pldma_pci_request_irq(pd, PLDMA_PCI_VEC_CH(ch),
					    PLDMA_IRQ_CH_DONE(ch), false, 0,
					    what);
		if (ret)
			return ret;
	}
	ret = pldma_pci_request_irq(pd, PLDMA_PCI_VEC_FAULT(hwnch),
				    PLDMA_IRQ_FAULT | PLDMA_IRQ_FQ_OVERFLOW |
				    PLDMA_IRQ_CH_FAULTED, true, 0, "fault");
	if (ret)
		return ret;
	ret = pldma_pci_request_irq(pd, PLDMA_PCI_VEC_ERROR(hwnch),
				    PLDMA_IRQ_CH_ERROR | PLDMA_IRQ_CQ_ERROR |
				    PLDMA_IRQ_QP_ERROR | PLDMA_IRQ_SRQ, false, 0,
				    "error");
	if (ret)
		return ret;
	if (cq) {
		ret = pldma_pci_request_irq(pd, PLDMA_PCI_VEC_CQ(hwnch),
					    PLDMA_IRQ_CQ, false, 0, "cq");
		if (ret)
			return ret;
	}
	if (!eth)
		return 0;
	return pldma_pci_request_irq(pd, PLDMA_PCI_VEC_ETH(hwnch),
				     PLDMA_IRQ_ETH, false, 0, "eth");
}

static int pldma_pci_probe(struct pci_dev *pdev,
			   const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct pldma_dev *pd;
	int ret;

	pd = pldma_dev_alloc(dev);
	if (!pd)
		return -ENOMEM;
	pci_set_drvdata(pdev, pd);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pd->base = pcim_iomap_region(pdev, PLDMA_PCI_BAR_REGS, KBUILD_MODNAME);
	if (IS_ERR(pd->base))
		return PTR_ERR(pd->base);
	pd->phys = pci_resource_start(pdev, PLDMA_PCI_BAR_REGS);
	pci_set_master(pdev);
	ret = pldma_pci_pasid(pdev);
	if (ret)
		return ret;
	ret = pldma_core_probe(pd, pci_resource_len(pdev,
						    PLDMA_PCI_BAR_REGS));
	if (ret)
		return ret;
	ret = pldma_pci_irqs(pd);
	if (ret)
		return ret;
	return pldma_register(pd, pdev->msix_enabled ? "pci msi-x" : "pci intx");
}

/*
 * Hot-unplug (or rmmod): open files are detached here, not in the devres
 * actions, because the IOMMU core wants every SVA binding gone before the
 * bus's dma_cleanup, which runs between remove() and the devres release.
 */
static void pldma_pci_remove(struct pci_dev *pdev)
{
	pldma_unregister(pci_get_drvdata(pdev));
}

static const struct pci_device_id pldma_pci_ids[] = {
	{ PCI_DEVICE(PLDMA_PCI_VENDOR_ID, PLDMA_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, pldma_pci_ids);

struct pci_driver pldma_pci_driver = {
	.name = "pldma-pci",
	.id_table = pldma_pci_ids,
	.probe = pldma_pci_probe,
	.remove = pldma_pci_remove,
	/* as for the platform device; hot-unplug detaches open files */
	.driver.suppress_bind_attrs = true,
};
