// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: shared receive queues (PLDMA_CAP_SRQ), the guest side.  An SRQ is
 * a ring of receive WQEs (PLDMA_RWQE_*, as a QP's RQ) followed by its
 * doorbell record (PLDMA_SRQ_DBREC_*), in memory the driver allocates for
 * the device (DMA without PASID, as the CQ and RQ rings) and maps
 * read-write to its owner: the owner writes WQEs and then the record's
 * TAIL, the device takes the WQE at HEAD and writes HEAD back, so posting
 * needs no system call and no MMIO doorbell.  A QP receives from an SRQ
 * instead of an RQ when it leaves RESET (PLDMA_QPA_SRQ, qp.c); the SRQ
 * must have the QP's PASID and PD tag, and the device refuses to destroy
 * it while a QP out of RESET uses it.
 *
 * The driver creates, arms and destroys SRQs (SRQ_* staging registers,
 * under pd->key_mutex as the CQs and QPs), gives out their indices from
 * pd->srq_map, and hands the device's limit and error events (IRQ_SRQ:
 * SRQ_EVENTS, SRQ_ERRORS) to ib_core.  SRQs are the ib_device's alone
 * (ib_srq.c): the char device's files have none.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/bitmap.h>
#include <linux/dma-mapping.h>
#include <linux/log2.h>

#include "pldma_drv.h"
#include "pldma_trace.h"

/* At probe, after the device's reset (every SRQ NONE), with the CQs known */
void pldma_srq_init(struct pldma_dev *pd)
{
	unsigned int i;

	for (i = 0; i < PLDMA_MAX_SRQS; i++)
		pd->srqs[i].idx = i;
	bitmap_zero(pd->srq_map, PLDMA_MAX_SRQS);
	pd->num_srqs = 0;
	if (!(pd->cap & PLDMA_CAP_SRQ) || !pd->num_cqs)
		return;
	pd->num_srqs = min_t(u32, pldma_rd(pd, PLDMA_SRQ_NUM), PLDMA_MAX_SRQS);
	dev_info(pd->dev, "%u shared receive queues\n", pd->num_srqs);
}

static int pldma_srq_status_errno(u32 st)
{
	switch (st) {
	case PLDMA_SRQ_ST_OK:
		return 0;
	case PLDMA_SRQ_ST_BAD_CONFIG:
		return -EINVAL;
	case PLDMA_SRQ_ST_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

/* SRQ_CMD on @srq (staged before), pd->key_mutex held, the device present */
static int pldma_srq_cmd(struct pldma_dev *pd, struct pldma_srq *srq, u32 cmd)
{
	lockdep_assert_held(&pd->key_mutex);
	pldma_wr(pd, PLDMA_SRQ_SEL, srq->idx);
	pldma_wr(pd, PLDMA_SRQ_CMD, cmd);
	return pldma_srq_status_errno(pldma_rd(pd, PLDMA_SRQ_STATUS));
}

/*
 * The SRQ @idx of @ctx, pd->key_mutex held; NULL: not its (a ucontext's
 * QP channel takes the SRQs of its ucontext, ctx->parent)
 */
static struct pldma_srq *pldma_srq_find(struct pldma_ctx *ctx, u32 idx)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_srq *srq;

	lockdep_assert_held(&pd->key_mutex);
	if (idx >= pd->num_srqs)
		return NULL;
	srq = &pd->srqs[idx];
	if (!srq->ctx || (srq->ctx != ctx && srq->ctx != ctx->parent))
		return NULL;
	return srq;
}

/*
 * Create an SRQ of @ctx of @entries receive WQEs (2^k), for the PD
 * @pd_tag of its PASID: its index and the size of its mapping (the ring
 * and the record, whole pages) out.  The ib_device's create_srq comes here
 * with the device present (ib_core unregisters it before the removal).
 */
int pldma_srq_create(struct pldma_ctx *ctx, u32 entries, u16 pd_tag,
		     u32 *idx, u32 *mmap_size)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_srq *srq;
	dma_addr_t dma;
	unsigned long i;
	void *ring;
	u32 size;
	int ret;

	if (!pd->num_srqs)
		return -EOPNOTSUPP;
	if (entries < PLDMA_SRQ_MIN_ENTRIES ||
	    entries > PLDMA_SRQ_MAX_ENTRIES || !is_power_of_2(entries))
		return -EINVAL;
	size = PAGE_ALIGN(entries * PLDMA_RWQE_SIZE + PLDMA_SRQ_DBREC_SIZE);
	/* zeroed: the record's TAIL and HEAD are 0, as the device starts */
	ring = dmam_alloc_coherent(pd->dev, size, &dma, GFP_KERNEL);
	if (!ring)
		return -ENOMEM;

	mutex_lock(&pd->key_mutex);
	ret = -EDQUOT;
	if (ctx->nsrqs >= PLDMA_MAX_CTX_SRQS)
		goto err;
	i = find_first_zero_bit(pd->srq_map, pd->num_srqs);
	ret = -ENOSPC;
	if (i >= pd->num_srqs)
		goto err;
	srq = &pd->srqs[i];
	pldma_wr(pd, PLDMA_SRQ_SEL, srq->idx);
	pldma_wr(pd, PLDMA_SRQ_BASE_LO, lower_32_bits(dma));
	pldma_wr(pd, PLDMA_SRQ_BASE_HI, upper_32_bits(dma));
	pldma_wr(pd, PLDMA_SRQ_SIZE, entries);
	pldma_wr(pd, PLDMA_SRQ_PD, ctx->pasid | PLDMA_CHB_PASID_EN);
	pldma_wr(pd, PLDMA_SRQ_PD_TAG, pd_tag);
	ret = pldma_srq_cmd(pd, srq, PLDMA_SRQ_CMD_CREATE);
	if (ret) {
		dev_dbg(pd->dev, "srq %u: create failed (%d)\n", srq->idx, ret);
		goto err;
	}
	__set_bit(srq->idx, pd->srq_map);
	srq->entries = entries;
	srq->size = size;
	srq->dma = dma;
	srq->pd_tag = pd_tag;
	srq->nqps = 0;
	atomic_set(&srq->mapped, 0);
	atomic_set(&srq->events, 0);
	spin_lock_irq(&pd->lock);
	srq->error = false;
	srq->ring = ring;
	srq->ib_srq = NULL;
	srq->ctx = ctx;
	spin_unlock_irq(&pd->lock);
	ctx->nsrqs++;
	trace_pldma_srq_create(pd->id, srq->idx, entries, ctx->pasid,
			       ctx->tgid);
	mutex_unlock(&pd->key_mutex);

	*idx = srq->idx;
	*mmap_size = size;
	return 0;
err:
	mutex_unlock(&pd->key_mutex);
	dmam_free_coherent(pd->dev, size, ring, dma);
	return ret;
}

/*
 * Destroy @srq of @ctx, pd->key_mutex held: refused while a QP uses it or
 * its ring is mapped (the memory must outlive both), and kept when the
 * device does not destroy it (it may still access the ring).  Only once
 * the device has destroyed it is its memory freed; with the device gone,
 * the memory is left to devres (freed after the removal).
 */
static int pldma_srq_free(struct pldma_ctx *ctx, struct pldma_srq *srq)
{
	struct pldma_dev *pd = ctx->pd;
	void *ring, *ib_srq;
	int ret;

	lockdep_assert_held(&pd->key_mutex);
	if (srq->nqps)
		return -EBUSY;
	spin_lock_irq(&pd->lock);
	if (atomic_read(&srq->mapped) && !pd->gone) {
		spin_unlock_irq(&pd->lock);
		return -EBUSY;
	}
	/* no mmap() finds it any more, no event goes to ib_core */
	srq->ctx = NULL;
	ib_srq = srq->ib_srq;
	srq->ib_srq = NULL;
	ring = srq->ring;
	srq->ring = NULL;
	spin_unlock_irq(&pd->lock);
	if (!pd->gone) {
		ret = pldma_srq_cmd(pd, srq, PLDMA_SRQ_CMD_DESTROY);
		if (ret) {
			dev_warn(pd->dev, "srq %u: not destroyed (%d)\n",
				 srq->idx, ret);
			spin_lock_irq(&pd->lock);
			srq->ring = ring;
			srq->ib_srq = ib_srq;
			srq->ctx = ctx;
			spin_unlock_irq(&pd->lock);
			return ret;
		}
		dmam_free_coherent(pd->dev, srq->size, ring, srq->dma);
	}
	__clear_bit(srq->idx, pd->srq_map);
	trace_pldma_srq_destroy(pd->id, srq->idx, srq->entries, ctx->pasid,
				ctx->tgid);
	ctx->nsrqs--;
	return 0;
}

int pldma_srq_destroy(struct pldma_ctx *ctx, u32 idx)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_srq *srq;
	int ret = -ENOENT;

	mutex_lock(&pd->key_mutex);
	srq = pldma_srq_find(ctx, idx);
	if (srq)
		ret = pldma_srq_free(ctx, srq);
	mutex_unlock(&pd->key_mutex);
	return ret;
}

/*
 * Arm the limit of SRQ @idx of @ctx at @limit WQEs (0: disarm): the
 * device raises a limit event, and disarms it, when a take leaves fewer
 * WQEs posted.
 */
int pldma_srq_arm(struct pldma_ctx *ctx, u32 idx, u32 limit)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_srq *srq;
	int ret = -ENOENT;

	mutex_lock(&pd->key_mutex);
	srq = pldma_srq_find(ctx, idx);
	if (srq && limit >= srq->entries) {
		ret = -EINVAL;
	} else if (srq) {
		pldma_wr(pd, PLDMA_SRQ_SEL, srq->idx);
		pldma_wr(pd, PLDMA_SRQ_LIMIT, limit);
		ret = pldma_srq_cmd(pd, srq, PLDMA_SRQ_CMD_ARM);
		trace_pldma_srq_arm(pd->id, srq->idx, limit, ret);
	}
	mutex_unlock(&pd->key_mutex);
	return ret;
}

/* The armed limit of SRQ @idx of @ctx (0: not armed, or fired since) */
int pldma_srq_query(struct pldma_ctx *ctx, u32 idx, u32 *limit)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_srq *srq;
	int ret = -ENOENT;

	mutex_lock(&pd->key_mutex);
	srq = pldma_srq_find(ctx, idx);
	if (srq) {
		pldma_wr(pd, PLDMA_SRQ_SEL, srq->idx);
		*limit = pldma_rd(pd, PLDMA_SRQ_ARMED);
		ret = 0;
	}
	mutex_unlock(&pd->key_mutex);
	return ret;
}

/*
 * A new QP of @ctx, of the PD @pd_tag, receives from SRQ @idx
 * (pd->key_mutex held): the SRQ must be the context's, of that PD, and
 * not in ERROR.
 */
int pldma_srq_get(struct pldma_ctx *ctx, u32 idx, u16 pd_tag)
{
	struct pldma_srq *srq = pldma_srq_find(ctx, idx);

	if (!srq)
		return -ENOENT;
	if (srq->pd_tag != pd_tag)
		return -EINVAL;
	if (READ_ONCE(srq->error))
		return -EIO;
	srq->nqps++;
	return 0;
}

/* ... and is freed, in RESET (pd->key_mutex held) */
void pldma_srq_put(struct pldma_dev *pd, u32 idx)
{
	lockdep_assert_held(&pd->key_mutex);
	if (idx < pd->num_srqs && !WARN_ON(!pd->srqs[idx].nqps))
		pd->srqs[idx].nqps--;
}

/*
 * The context's end (after its QPs', so that no QP uses them) and the
 * device's removal: every SRQ it still holds.  ib_core destroys a
 * ucontext's SRQs before, so this finds none but after a failure.
 */
void pldma_srq_release(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	unsigned int i;

	mutex_lock(&pd->key_mutex);
	for (i = 0; i < pd->num_srqs && ctx->nsrqs; i++)
		if (pd->srqs[i].ctx == ctx && pldma_srq_free(ctx, &pd->srqs[i]))
			dev_warn(pd->dev, "srq %u: kept at release\n", i);
	mutex_unlock(&pd->key_mutex);
}

/*
 * IRQ_SRQ (hard handler; on pldma-pci the error vector's): SRQs whose
 * limit was reached (SRQ_EVENTS: the device disarmed the limit) and SRQs
 * the device put in ERROR (SRQ_ERRORS), each to its ib_srq's event
 * handler.  The limit events first: an SRQ that reached its limit and
 * then failed had them in that order.
 */
void pldma_srq_irq(struct pldma_dev *pd)
{
	struct pldma_srq *srq;
	unsigned long bits;
	unsigned int i;

	bits = pldma_rd_w1c64(pd, PLDMA_SRQ_EVENTS_LO);
	if (bits) {
		spin_lock(&pd->lock);
		for_each_set_bit(i, &bits, pd->num_srqs) {
			srq = &pd->srqs[i];
			if (!srq->ctx)
				continue;
			atomic_inc(&srq->events);
			atomic64_inc(&pd->st.srq_events);
			trace_pldma_srq_event(pd->id, i, 0,
					      atomic_read(&srq->events));
			if (srq->ib_srq)
				pldma_ib_srq_event(srq->ib_srq, false);
		}
		spin_unlock(&pd->lock);
	}
	bits = pldma_rd_w1c64(pd, PLDMA_SRQ_ERRORS_LO);
	if (bits) {
		spin_lock(&pd->lock);
		for_each_set_bit(i, &bits, pd->num_srqs) {
			srq = &pd->srqs[i];
			atomic64_inc(&pd->st.srq_errors);
			trace_pldma_srq_event(pd->id, i, 1,
					      atomic_read(&srq->events));
			if (!srq->ctx)
				continue;
			WRITE_ONCE(srq->error, true);
			if (srq->ib_srq)
				pldma_ib_srq_event(srq->ib_srq, true);
		}
		spin_unlock(&pd->lock);
	}
}
