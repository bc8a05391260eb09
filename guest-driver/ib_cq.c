// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA's ib_device: completion queues.  A verbs CQ is a device CQ of the
 * ucontext's channel context (cq.c: a ring of PLDMA_CQE_SIZE entries in
 * coherent memory, the CQ's PD the context's PASID), mapped read-only to
 * the process, which polls it and rings its consumer index and arms it
 * through the channel page (PLDMA_CH_CQ_DB): no system call per poll or
 * per request for notification.  An armed CQ that fires raises IRQ_CQ,
 * and the interrupt handler (pldma_cq_irq) calls the CQ's comp_handler:
 * the completion event of ibv_get_cq_event().
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "pldma_drv.h"
#include "pldma_ib.h"
#include "uapi/pldma-abi.h"

/* From the IRQ_CQ handler, pd->lock held: an armed CQ fired */
void pldma_ib_cq_event(void *p)
{
	struct ib_cq *ibcq = p;

	if (ibcq->comp_handler)
		ibcq->comp_handler(ibcq, ibcq->cq_context);
}

int pldma_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		       struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct pldma_ib_cq *cq = to_pcq(ibcq);
	struct pldma_create_cq_resp resp = { };
	struct pldma_cq_create c = { };
	struct pldma_ib_ucontext *uc;
	struct pldma_dev *pd;
	int ret;

	if (!udata)			/* the kernel's: in memory (ib_gsi.c) */
		return pldma_sw_cq_create(ibcq, attr);
	if (!udata->outlen)
		return -EINVAL;
	uc = rdma_udata_to_drv_context(udata, struct pldma_ib_ucontext, ibuc);
	ret = pldma_ib_mm_check(uc);
	if (ret)
		return ret;
	pd = uc->ctx->pd;
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (attr->cqe < 1 || attr->cqe >= PLDMA_CQ_MAX_ENTRIES)
		return -EINVAL;
	c.entries = max_t(u32, roundup_pow_of_two(attr->cqe + 1),
			  PLDMA_CQ_MIN_ENTRIES);
	ret = pldma_cq_create(uc->ctx, &c);
	if (ret)
		return ret;
	cq->idx = c.cq;
	cq->ring = pldma_ib_mmap_insert(uc, uc->ctx, PLDMA_IB_MMAP_CQ, c.cq,
					c.mmap_size, &resp.mmap_offset);
	if (IS_ERR(cq->ring)) {
		ret = PTR_ERR(cq->ring);
		goto err_destroy;
	}
	resp.cq = c.cq;
	resp.entries = c.entries;
	resp.mmap_size = c.mmap_size;
	ret = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (ret)
		goto err_remove;
	/* a CQE written at capacity puts the CQ in ERROR: one fewer */
	ibcq->cqe = c.entries - 1;
	spin_lock_irq(&pd->lock);
	pd->cqs[c.cq].ib_cq = ibcq;
	spin_unlock_irq(&pd->lock);
	return 0;

err_remove:
	rdma_user_mmap_entry_remove(cq->ring);
err_destroy:
	pldma_cq_destroy(uc->ctx, c.cq);
	return ret;
}

/*
 * Refused (EBUSY) while a QP uses it or its ring is mapped: the provider
 * unmaps the ring first.
 */
int pldma_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct pldma_ib_ucontext *uc;
	struct pldma_ib_cq *cq = to_pcq(ibcq);
	int ret;

	if (cq->sw) {
		pldma_sw_cq_destroy(ibcq);
		return 0;
	}
	uc = rdma_udata_to_drv_context(udata, struct pldma_ib_ucontext, ibuc);
	ret = pldma_cq_destroy(uc->ctx, cq->idx);
	if (ret)
		return ret;
	rdma_user_mmap_entry_remove(cq->ring);
	return 0;
}
