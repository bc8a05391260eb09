// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: the platform device ("exanest,pldma"): its register window and
 * its one level-triggered interrupt, over the shared core (core.c).
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/interrupt.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/platform_device.h>

#include "pldma_drv.h"

static int pldma_platform_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct pldma_dev *pd;
	struct resource *res;
	int ret;

	pd = pldma_dev_alloc(dev);
	if (!pd)
		return -ENOMEM;
	platform_set_drvdata(pdev, pd);

	pd->base = devm_platform_get_and_ioremap_resource(pdev, 0, &res);
	if (IS_ERR(pd->base))
		return PTR_ERR(pd->base);
	pd->phys = res->start;
	ret = pldma_core_probe(pd, resource_size(res));
	if (ret)
		return ret;

	/* one level-triggered line for every source */
	pd->irq = platform_get_irq(pdev, 0);
	if (pd->irq < 0)
		return pd->irq;
	pd->vecs[0].pd = pd;
	pd->vecs[0].mask = U32_MAX;
	ret = devm_request_threaded_irq(dev, pd->irq, pldma_irq,
					pldma_irq_thread, 0, dev_name(dev),
					&pd->vecs[0]);
	if (ret)
		return ret;
	return pldma_register(pd, "platform");
}

/*
 * rmmod: as pldma_pci_remove(), the RDMA device and open files are detached
 * here, before the bus's dma_cleanup, which wants every SVA binding (PASID)
 * gone and runs before the devres actions.  A verbs context does not hold
 * the module (ib_core disassociates it), so rmmod can come with one open.
 */
static void pldma_platform_remove(struct platform_device *pdev)
{
	pldma_unregister(platform_get_drvdata(pdev));
}

static const struct of_device_id pldma_of_match[] = {
	{ .compatible = PLDMA_DT_COMPATIBLE },
	{ }
};
MODULE_DEVICE_TABLE(of, pldma_of_match);

struct platform_driver pldma_platform_driver = {
	.probe = pldma_platform_probe,
	.remove = pldma_platform_remove,
	.driver = {
		.name = "pldma",
		.of_match_table = pldma_of_match,
		/* open files reference the device: no manual unbind */
		.suppress_bind_attrs = true,
	},
};
