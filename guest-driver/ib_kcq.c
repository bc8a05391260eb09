// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA's kernel verbs: completion queues in memory (struct pldma_sw_cq),
 * for the kernel's QPs (QP1, ib_gsi.c): a ring of ib_wc filled by the
 * GSI QP's send and receive paths and polled by ib_core's MAD layer.  A
 * user CQ is a device CQ (ib_cq.c), polled in user space.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "pldma_drv.h"
#include "pldma_ib.h"

#define PLDMA_SW_CQ_MAX		16384

int pldma_sw_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr)
{
	struct pldma_ib_cq *cq = to_pcq(ibcq);
	struct pldma_sw_cq *sw;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > PLDMA_SW_CQ_MAX ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	sw = kvzalloc(struct_size(sw, wc, attr->cqe), GFP_KERNEL);
	if (!sw)
		return -ENOMEM;
	spin_lock_init(&sw->lock);
	sw->entries = attr->cqe;
	cq->sw = sw;
	ibcq->cqe = attr->cqe;
	return 0;
}

void pldma_sw_cq_destroy(struct ib_cq *ibcq)
{
	struct pldma_ib_cq *cq = to_pcq(ibcq);

	kvfree(cq->sw);
	cq->sw = NULL;
}

/*
 * A completion: false if the CQ is full (the completion is lost and the
 * CQ's consumer gets IB_EVENT_CQ_ERR, as a device's CQ overrun does)
 */
bool pldma_sw_cq_push(struct ib_cq *ibcq, const struct ib_wc *wc,
		      bool solicited)
{
	struct pldma_sw_cq *sw = to_pcq(ibcq)->sw;
	bool fire = false, full;
	unsigned long flags;

	spin_lock_irqsave(&sw->lock, flags);
	full = sw->count == sw->entries;
	if (!full) {
		sw->wc[(sw->head + sw->count) % sw->entries] = *wc;
		sw->count++;
		if (sw->notify == IB_CQ_NEXT_COMP ||
		    (sw->notify == IB_CQ_SOLICITED && solicited)) {
			sw->notify = 0;
			fire = true;
		}
	}
	spin_unlock_irqrestore(&sw->lock, flags);
	if (full) {
		struct ib_event ev = {
			.device = ibcq->device,
			.element.cq = ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		if (ibcq->event_handler)
			ibcq->event_handler(&ev, ibcq->cq_context);
		return false;
	}
	if (fire && ibcq->comp_handler)
		ibcq->comp_handler(ibcq, ibcq->cq_context);
	return true;
}

int pldma_ib_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct pldma_sw_cq *sw = to_pcq(ibcq)->sw;
	unsigned long flags;
	int n;

	if (!sw)		/* a device CQ: polled in user space */
		return -EOPNOTSUPP;
	spin_lock_irqsave(&sw->lock, flags);
	for (n = 0; n < num && sw->count; n++) {
		wc[n] = sw->wc[sw->head];
		sw->head = (sw->head + 1) % sw->entries;
		sw->count--;
	}
	spin_unlock_irqrestore(&sw->lock, flags);
	return n;
}

int pldma_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct pldma_sw_cq *sw = to_pcq(ibcq)->sw;
	unsigned long irqflags;
	int ret = 0;

	if (!sw)		/* a device CQ: armed through the channel page */
		return -EOPNOTSUPP;
	spin_lock_irqsave(&sw->lock, irqflags);
	if (sw->notify != IB_CQ_NEXT_COMP)
		sw->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && sw->count)
		ret = 1;
	spin_unlock_irqrestore(&sw->lock, irqflags);
	return ret;
}
