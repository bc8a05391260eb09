// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA's ib_device: shared receive queues.  A verbs SRQ is a device SRQ
 * of the ucontext's context (srq.c: a ring of receive WQEs and its
 * doorbell record in coherent memory; the SRQ's PD is the context's PASID
 * and the verbs PD's tag), mapped read-write to the process: the provider
 * writes WQEs and then the record's TAIL, so ibv_post_srq_recv() makes no
 * system call.  RC QPs of the same PD receive from it instead of an RQ
 * (ib_qp.c).  modify_srq arms the limit (IB_SRQ_LIMIT); when a take
 * leaves fewer WQEs posted, the device disarms it and raises IRQ_SRQ, and
 * the interrupt handler (srq.c) calls the SRQ's event handler with
 * IB_EVENT_SRQ_LIMIT_REACHED, or IB_EVENT_SRQ_ERR for an SRQ the device
 * put in ERROR.  The ring is not resized (no IB_DEVICE_SRQ_RESIZE).
 *
 * SRQs are for user space only: kernel consumers (IPoIB, the NVMe and
 * SCSI targets) post through ops.post_srq_recv, which this device does
 * not have, so create_srq without udata is EOPNOTSUPP.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "pldma_drv.h"
#include "pldma_ib.h"
#include "uapi/pldma-abi.h"

/* From the IRQ_SRQ handler, pd->lock held */
void pldma_ib_srq_event(void *p, bool error)
{
	struct ib_srq *ibsrq = p;
	struct ib_event ev = {
		.device = ibsrq->device,
		.element.srq = ibsrq,
		.event = error ? IB_EVENT_SRQ_ERR : IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (ibsrq->event_handler)
		ibsrq->event_handler(&ev, ibsrq->srq_context);
}

int pldma_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			struct ib_udata *udata)
{
	struct pldma_ib_srq *srq = to_psrq(ibsrq);
	struct pldma_create_srq_resp resp = { };
	struct ib_srq_attr *attr = &init->attr;
	struct pldma_ib_ucontext *uc;
	struct pldma_dev *pd;
	u32 size;
	int ret;

	/* the kernel's consumers would post through ops.post_srq_recv */
	if (!udata)
		return -EOPNOTSUPP;
	if (!udata->outlen)
		return -EINVAL;
	uc = rdma_udata_to_drv_context(udata, struct pldma_ib_ucontext, ibuc);
	ret = pldma_ib_mm_check(uc);
	if (ret)
		return ret;
	pd = uc->ctx->pd;
	if (init->srq_type != IB_SRQT_BASIC || !pd->num_srqs)
		return -EOPNOTSUPP;
	/*
	 * a ring of 2^k WQEs holds 2^k - 1 (full when TAIL + 1 is HEAD); the
	 * limit, which only modify_srq arms, must be below the WQEs it has
	 */
	if (!attr->max_wr || attr->max_wr >= PLDMA_SRQ_MAX_ENTRIES ||
	    attr->max_sge > PLDMA_RWQE_MAX_SGE ||
	    attr->srq_limit >= attr->max_wr)
		return -EINVAL;
	srq->entries = max_t(u32, roundup_pow_of_two(attr->max_wr + 1),
			     PLDMA_SRQ_MIN_ENTRIES);
	ret = pldma_srq_create(uc->ctx, srq->entries, to_ppd(ibsrq->pd)->tag,
			       &srq->idx, &size);
	if (ret)
		return ret;
	srq->ctx = uc->ctx;
	srq->ring = pldma_ib_mmap_insert(uc, uc->ctx, PLDMA_IB_MMAP_SRQ,
					 srq->idx, size, &resp.mmap_offset);
	if (IS_ERR(srq->ring)) {
		ret = PTR_ERR(srq->ring);
		goto err_destroy;
	}
	resp.srq = srq->idx;
	resp.entries = srq->entries;
	resp.mmap_size = size;
	ret = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (ret)
		goto err_remove;
	attr->max_wr = srq->entries - 1;
	attr->max_sge = PLDMA_RWQE_MAX_SGE;
	spin_lock_irq(&pd->lock);
	pd->srqs[srq->idx].ib_srq = ibsrq;
	spin_unlock_irq(&pd->lock);
	return 0;

err_remove:
	rdma_user_mmap_entry_remove(srq->ring);
err_destroy:
	pldma_srq_destroy(uc->ctx, srq->idx);
	return ret;
}

/*
 * IB_SRQ_LIMIT arms the limit (0 disarms); IB_SRQ_MAX_WR would resize the
 * ring, which the device cannot do under a live SRQ: EOPNOTSUPP, as the
 * device capabilities say (no IB_DEVICE_SRQ_RESIZE).
 */
int pldma_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct pldma_ib_srq *srq = to_psrq(ibsrq);
	struct pldma_ib_ucontext *uc;

	if (udata) {
		uc = rdma_udata_to_drv_context(udata, struct pldma_ib_ucontext,
					       ibuc);
		if (udata->inlen)
			return -EINVAL;
		if (pldma_ib_mm_check(uc))
			return -EPERM;
	}
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit >= srq->entries - 1)
		return -EINVAL;
	return pldma_srq_arm(srq->ctx, srq->idx, attr->srq_limit);
}

/* The limit is the device's: 0 once it fired (or was never armed) */
int pldma_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct pldma_ib_srq *srq = to_psrq(ibsrq);
	u32 limit;
	int ret;

	ret = pldma_srq_query(srq->ctx, srq->idx, &limit);
	if (ret)
		return ret;
	attr->max_wr = srq->entries - 1;
	attr->max_sge = PLDMA_RWQE_MAX_SGE;
	attr->srq_limit = limit;
	return 0;
}

/*
 * ib_core refuses (EBUSY) while a QP uses the SRQ; the device is asked to
 * destroy it before its memory goes, and it is refused (EBUSY) while its
 * ring is mapped: the provider unmaps it first.
 */
int pldma_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct pldma_ib_srq *srq = to_psrq(ibsrq);
	int ret;

	ret = pldma_srq_destroy(srq->ctx, srq->idx);
	if (ret)
		return ret;
	rdma_user_mmap_entry_remove(srq->ring);
	return 0;
}
