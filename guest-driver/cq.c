// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: completion queues (PLDMA_CAP_CQ), the guest side.  A CQ is a ring
 * of CQEs in memory the driver allocates for the device (DMA without
 * PASID, as the fault queue) and maps read-only into its owner; the device
 * checks the CQ's PD (the owner's PASID) against the channel of every CQ
 * doorbell, so polling, consuming and arming need no system call.  The
 * driver creates and destroys CQs (CQ_* staging registers, under
 * pd->key_mutex like the keys and the QPs), counts their events for
 * PLDMA_IOC_CQ_WAIT, records CQs and QPs the device put in error, maps the
 * rings of CQs and receive queues (qp.c allocates those), and serves the
 * responder faults of receive buffers in the owner's address space as
 * remote.c serves the faults of registered windows.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "pldma_drv.h"
#include "pldma_trace.h"

/* At probe, after the device's reset (every CQ NONE), with the QPs known */
void pldma_cq_init(struct pldma_dev *pd)
{
	unsigned int i;

	for (i = 0; i < PLDMA_MAX_CQS; i++) {
		pd->cqs[i].idx = i;
		init_waitqueue_head(&pd->cqs[i].wq);
	}
	for (i = 0; i < PLDMA_MAX_QPS; i++)
		INIT_WORK(&pd->qps[i].work, pldma_recv_fault_work);
	pd->num_cqs = 0;
	if (!(pd->cap & PLDMA_CAP_CQ) || !pd->num_qps)
		return;
	pd->num_cqs = min_t(u32, pldma_rd(pd, PLDMA_CQ_NUM), PLDMA_MAX_CQS);
	dev_info(pd->dev, "%u completion queues\n", pd->num_cqs);
}

static int pldma_cq_status_errno(u32 st)
{
	switch (st) {
	case PLDMA_CQ_ST_OK:
		return 0;
	case PLDMA_CQ_ST_BAD_CONFIG:
		return -EINVAL;
	case PLDMA_CQ_ST_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

/* CQ_CMD on @cq, pd->key_mutex held and the device present */
static int pldma_cq_cmd(struct pldma_dev *pd, struct pldma_cq *cq, u32 cmd)
{
	lockdep_assert_held(&pd->key_mutex);
	pldma_wr(pd, PLDMA_CQ_SEL, cq->idx);
	pldma_wr(pd, PLDMA_CQ_CMD, cmd);
	return pldma_cq_status_errno(pldma_rd(pd, PLDMA_CQ_STATUS));
}

/*
 * The file's CQ @idx, pd->key_mutex held; NULL: not the file's (a
 * ucontext's QP channel takes the CQs of its ucontext, ctx->parent)
 */
static struct pldma_cq *pldma_cq_find(struct pldma_ctx *ctx, u32 idx)
{
	struct pldma_dev *pd = ctx->pd;

	lockdep_assert_held(&pd->key_mutex);
	if (idx >= pd->num_cqs || !pd->cqs[idx].ctx ||
	    (pd->cqs[idx].ctx != ctx && pd->cqs[idx].ctx != ctx->parent))
		return NULL;
	return &pd->cqs[idx];
}

/*
 * Create a CQ of @ctx as @cp asks (the index and mmap data out), every
 * value checked; the ioctl and the ib_device's create_cq (ib_cq.c) come
 * here with the device known present (pd->gone_sem held).
 */
int pldma_cq_create(struct pldma_ctx *ctx, struct pldma_cq_create *cp)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_cq_create c = *cp;
	struct pldma_cq *cq = NULL;
	dma_addr_t dma;
	unsigned int i;
	void *ring;
	u32 size;
	int ret;

	if (c.cq || c.mmap_offset || c.mmap_size || c.rsvd[0] || c.rsvd[1] ||
	    c.rsvd[2])
		return -EINVAL;
	if (!pd->num_cqs)
		return -EOPNOTSUPP;
	if (c.entries < PLDMA_CQ_MIN_ENTRIES ||
	    c.entries > PLDMA_CQ_MAX_ENTRIES || !is_power_of_2(c.entries))
		return -EINVAL;
	size = PAGE_ALIGN(c.entries * PLDMA_CQE_SIZE);
	/* zeroed: no CQE has the first pass's owner bit yet */
	ring = dmam_alloc_coherent(pd->dev, size, &dma, GFP_KERNEL);
	if (!ring)
		return -ENOMEM;

	mutex_lock(&pd->key_mutex);
	ret = -EDQUOT;
	if (ctx->ncqs >= PLDMA_MAX_FILE_CQS)
		goto err;
	for (i = 0; i < pd->num_cqs; i++) {
		if (!pd->cqs[i].ctx) {
			cq = &pd->cqs[i];
			break;
		}
	}
	ret = -ENOSPC;
	if (!cq)
		goto err;
	pldma_wr(pd, PLDMA_CQ_SEL, cq->idx);
	pldma_wr(pd, PLDMA_CQ_BASE_LO, lower_32_bits(dma));
	pldma_wr(pd, PLDMA_CQ_BASE_HI, upper_32_bits(dma));
	pldma_wr(pd, PLDMA_CQ_SIZE, c.entries);
	pldma_wr(pd, PLDMA_CQ_PD, ctx->pasid | PLDMA_CHB_PASID_EN);
	ret = pldma_cq_cmd(pd, cq, PLDMA_CQ_CMD_CREATE);
	if (ret) {
		dev_dbg(pd->dev, "cq %u: create failed (%d)\n", cq->idx, ret);
		goto err;
	}
	cq->entries = c.entries;
	cq->size = size;
	cq->dma = dma;
	cq->nqps = 0;
	atomic_set(&cq->mapped, 0);
	atomic_set(&cq->events, 0);
	spin_lock_irq(&pd->lock);
	cq->error = false;
	cq->ring = ring;
	cq->ib_cq = NULL;
	cq->ctx = ctx;
	spin_unlock_irq(&pd->lock);
	ctx->ncqs++;
	trace_pldma_cq_create(pd->id, cq->idx, c.entries, ctx->pasid,
			      ctx->tgid);
	mutex_unlock(&pd->key_mutex);

	cp->cq = cq->idx;
	cp->mmap_offset = PLDMA_MMAP_CQ(cq->idx);
	cp->mmap_size = size;
	return 0;
err:
	mutex_unlock(&pd->key_mutex);
	dmam_free_coherent(pd->dev, size, ring, dma);
	return ret;
}

/*
 * Destroy @cq of @ctx, pd->key_mutex held: refused while a QP uses it or
 * its ring is mapped (the memory must outlive both).  With the device
 * gone, its memory is left to devres (freed after the removal).
 */
static int pldma_cq_free(struct pldma_ctx *ctx, struct pldma_cq *cq)
{
	struct pldma_dev *pd = ctx->pd;
	void *ring;
	int ret;

	lockdep_assert_held(&pd->key_mutex);
	if (cq->nqps)
		return -EBUSY;
	spin_lock_irq(&pd->lock);
	if (atomic_read(&cq->mapped) && !pd->gone) {
		spin_unlock_irq(&pd->lock);
		return -EBUSY;
	}
	/* no mmap() finds it any more, no event goes to ib_core */
	cq->ctx = NULL;
	cq->ib_cq = NULL;
	ring = cq->ring;
	cq->ring = NULL;
	spin_unlock_irq(&pd->lock);
	if (!pd->gone) {
		ret = pldma_cq_cmd(pd, cq, PLDMA_CQ_CMD_DESTROY);
		if (ret) {
			/* the device may still write it: keep it */
			dev_warn(pd->dev, "cq %u: not destroyed (%d)\n",
				 cq->idx, ret);
			spin_lock_irq(&pd->lock);
			cq->ring = ring;
			cq->ctx = ctx;
			spin_unlock_irq(&pd->lock);
			return ret;
		}
		dmam_free_coherent(pd->dev, cq->size, ring, cq->dma);
	}
	trace_pldma_cq_destroy(pd->id, cq->idx, cq->entries, ctx->pasid,
			       ctx->tgid);
	ctx->ncqs--;
	wake_up_interruptible_all(&cq->wq);
	return 0;
}

int pldma_cq_destroy(struct pldma_ctx *ctx, u32 idx)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_cq *cq;
	int ret = -ENOENT;

	mutex_lock(&pd->key_mutex);
	cq = pldma_cq_find(ctx, idx);
	if (cq)
		ret = pldma_cq_free(ctx, cq);
	mutex_unlock(&pd->key_mutex);
	return ret;
}

/* Called with the device known present (pd->gone_sem held). */
long pldma_ioc_cq_create(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_cq_create c;
	int ret;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	ret = pldma_cq_create(ctx, &c);
	if (ret)
		return ret;
	if (copy_to_user(arg, &c, sizeof(c))) {
		/* nobody learnt the index: the CQ goes again */
		pldma_cq_destroy(ctx, c.cq);
		return -EFAULT;
	}
	return 0;
}

long pldma_ioc_cq_destroy(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_cq_destroy d;

	if (copy_from_user(&d, arg, sizeof(d)))
		return -EFAULT;
	if (d.rsvd)
		return -EINVAL;
	return pldma_cq_destroy(ctx, d.cq);
}

/* A QP of @ctx takes CQ @idx (pd->key_mutex held) */
int pldma_cq_get(struct pldma_ctx *ctx, u32 idx)
{
	struct pldma_cq *cq = pldma_cq_find(ctx, idx);

	if (!cq)
		return -ENOENT;
	if (READ_ONCE(cq->error))
		return -EIO;
	cq->nqps++;
	return 0;
}

void pldma_cq_put(struct pldma_dev *pd, u32 idx)
{
	lockdep_assert_held(&pd->key_mutex);
	if (idx < pd->num_cqs && !WARN_ON(!pd->cqs[idx].nqps))
		pd->cqs[idx].nqps--;
}

/*
 * release() (after the QP's, so no QP uses them) and the device's removal
 * (after the mappings were zapped)
 */
void pldma_cq_release(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	unsigned int i;

	mutex_lock(&pd->key_mutex);
	for (i = 0; i < pd->num_cqs && ctx->ncqs; i++)
		if (pd->cqs[i].ctx == ctx && pldma_cq_free(ctx, &pd->cqs[i]))
			dev_warn(pd->dev, "cq %u: kept at release\n", i);
	mutex_unlock(&pd->key_mutex);
}

/* The device went: every CQ waiter of @ctx returns (ENODEV) */
void pldma_cq_wake_all(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	unsigned int i;

	for (i = 0; i < pd->num_cqs; i++)
		wake_up_interruptible_all(&pd->cqs[i].wq);
}

static bool pldma_cq_waited(struct pldma_ctx *ctx, struct pldma_cq *cq,
			    u32 seen)
{
	return (u32)atomic_read(&cq->events) != seen || READ_ONCE(cq->error) ||
	       READ_ONCE(cq->ctx) != ctx || READ_ONCE(ctx->detached);
}

/* Sleeps: not under pd->gone_sem (the removal wakes it) */
long pldma_ioc_cq_wait(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_cq_wait w;
	struct pldma_cq *cq;
	long ret = 0;

	if (copy_from_user(&w, arg, sizeof(w)))
		return -EFAULT;
	if (w.qp_errors || w.rsvd[0] || w.rsvd[1] || w.timeout_ms > 60000)
		return -EINVAL;
	/* the removal took every CQ of the file: that, not ENOENT */
	if (READ_ONCE(ctx->detached))
		return -ENODEV;
	if (w.cq >= pd->num_cqs)
		return -ENOENT;
	cq = &pd->cqs[w.cq];
	if (READ_ONCE(cq->ctx) != ctx)
		return -ENOENT;
	if (w.timeout_ms && !pldma_cq_waited(ctx, cq, w.events)) {
		ret = wait_event_interruptible_timeout(cq->wq,
						       pldma_cq_waited(ctx, cq,
								       w.events),
						       msecs_to_jiffies(w.timeout_ms));
		if (ret < 0)
			return ret;
	}
	if (READ_ONCE(ctx->detached))
		return -ENODEV;
	if (READ_ONCE(cq->ctx) != ctx)
		return -ENOENT;
	if (READ_ONCE(cq->error))
		return -EIO;
	if ((u32)atomic_read(&cq->events) == w.events)
		return -ETIMEDOUT;
	w.events = atomic_read(&cq->events);
	w.qp_errors = atomic_read(&ctx->qp_errors);
	return copy_to_user(arg, &w, sizeof(w)) ? -EFAULT : 0;
}

/* ------------------------------------------------------------------ */
/* mmap() of the rings                                                */
/* ------------------------------------------------------------------ */

static void pldma_ring_vm_open(struct vm_area_struct *vma)
{
	atomic_inc((atomic_t *)vma->vm_private_data);
}

static void pldma_ring_vm_close(struct vm_area_struct *vma)
{
	atomic_dec((atomic_t *)vma->vm_private_data);
}

static const struct vm_operations_struct pldma_ring_vm_ops = {
	.open = pldma_ring_vm_open,
	.close = pldma_ring_vm_close,
};

/* @off is the ring @n of the offsets from @base, @max apart (n out) */
static bool pldma_ring_off(u64 off, u64 base, u64 max, u32 *n)
{
	u64 step = PLDMA_MMAP_CQ(1) - PLDMA_MMAP_CQ(0);

	if (off < base || off >= max || (off - base) & (step - 1))
		return false;
	*n = (off - base) / step;
	return true;
}

/*
 * The file's RQ ring (PLDMA_MMAP_RQ, read-write: the owner writes receive
 * WQEs), one of its CQ rings (PLDMA_MMAP_CQ(n), read-only: the device
 * writes it) or, for a ucontext, one of its SRQs (PLDMA_MMAP_SRQ(n),
 * read-write: the ring and its doorbell record), whole.  Each mapping
 * counts in the ring's @mapped, which keeps the ring (QP_DESTROY,
 * CQ_DESTROY and destroy_srq are EBUSY) until it goes; the count is taken
 * under pd->lock, where destroy looks at it.
 */
int pldma_ring_mmap(struct pldma_ctx *ctx, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct pldma_dev *pd = ctx->pd;
	atomic_t *mapped = NULL;
	dma_addr_t dma = 0;
	void *ring = NULL;
	bool cq = false, srq = false;
	u32 size = 0, n = 0;
	int ret;

	if (pldma_ring_off(off, PLDMA_MMAP_CQ(0), PLDMA_MMAP_CQ_MAX, &n))
		cq = true;
	else if (pldma_ring_off(off, PLDMA_MMAP_SRQ(0), PLDMA_MMAP_SRQ_MAX,
				&n))
		srq = true;
	else if (off != PLDMA_MMAP_RQ)
		return -EINVAL;
	/* the device writes CQEs: its owner only reads them */
	if (cq && vma->vm_flags & VM_WRITE)
		return -EACCES;
	spin_lock_irq(&pd->lock);
	if (cq) {
		struct pldma_cq *c = &pd->cqs[n];

		if (n < pd->num_cqs && c->ctx == ctx && c->ring) {
			ring = c->ring;
			dma = c->dma;
			size = c->size;
			mapped = &c->mapped;
		}
	} else if (srq) {
		struct pldma_srq *s = &pd->srqs[n];

		if (n < pd->num_srqs && s->ctx == ctx && s->ring) {
			ring = s->ring;
			dma = s->dma;
			size = s->size;
			mapped = &s->mapped;
		}
	} else if (ctx->qp && ctx->qp->rq) {
		ring = ctx->qp->rq;
		dma = ctx->qp->rq_dma;
		size = ctx->qp->rq_size;
		mapped = &ctx->qp->rq_mapped;
	}
	if (ring && vma->vm_end - vma->vm_start == size)
		atomic_inc(mapped);
	else
		ring = NULL;
	spin_unlock_irq(&pd->lock);
	if (!ring)
		return -EINVAL;

	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vm_flags_clear(vma, VM_MAYEXEC | (cq ? VM_MAYWRITE : 0));
	/* dma_mmap_coherent() maps from vm_pgoff within the buffer */
	vma->vm_pgoff = 0;
	ret = dma_mmap_coherent(pd->dev, vma, ring, dma, size);
	if (ret) {
		atomic_dec(mapped);
		return ret;
	}
	vma->vm_private_data = mapped;
	vma->vm_ops = &pldma_ring_vm_ops;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Interrupts: IRQ_CQ, IRQ_CQ_ERROR, IRQ_QP_ERROR (hard handler)      */
/* ------------------------------------------------------------------ */

/*
 * Read and clear (W1C) a 64-bit event bitmap until it reads 0: its IRQ
 * status bit is the bitmap's level, and an MSI-X vector fires only when
 * that level rises, so a bit set while we clear others must be taken
 * now.  Bounded: a bitmap still busy after PLDMA_W1C_ROUNDS is left for
 * the next interrupt (the level line re-fires; MSI-X at the next event).
 */
#define PLDMA_W1C_ROUNDS	8

u64 pldma_rd_w1c64(struct pldma_dev *pd, u32 lo)
{
	u64 all = 0, bits;
	unsigned int i;

	for (i = 0; i < PLDMA_W1C_ROUNDS; i++) {
		bits = pldma_rd(pd, lo) | (u64)pldma_rd(pd, lo + 4) << 32;
		if (!bits)
			break;
		if (lower_32_bits(bits))
			pldma_wr(pd, lo, lower_32_bits(bits));
		if (upper_32_bits(bits))
			pldma_wr(pd, lo + 4, upper_32_bits(bits));
		all |= bits;
	}
	return all;
}

void pldma_cq_irq(struct pldma_dev *pd, u32 status)
{
	unsigned long bits;
	struct pldma_cq *cq;
	struct pldma_qp *qp;
	unsigned int i;

	/*
	 * A QP's error first: the device raises it before it flushes the
	 * QP's work requests, and a consumer woken by the flush CQEs' event
	 * (CQ_WAIT returns the file's QP error count) must see it.  Taken
	 * after the events, a waiter on another CPU could read the count
	 * between the two (seen in the rdma suite on a loaded host).
	 */
	if (status & PLDMA_IRQ_QP_ERROR) {
		bits = pldma_rd_w1c64(pd, PLDMA_QP_ERRORS_LO);
		spin_lock(&pd->lock);
		for_each_set_bit(i, &bits, pd->num_qps) {
			qp = &pd->qps[i];
			atomic64_inc(&pd->st.qp_errors);
			trace_pldma_qp_error(pd->id, i, qp->qpn);
			if (!qp->ctx)
				continue;
			atomic_inc(&qp->ctx->qp_errors);
			wake_up_interruptible(&qp->ctx->wq);
			if (qp->ib_qp)
				pldma_ib_qp_fatal(qp->ib_qp);
		}
		spin_unlock(&pd->lock);
	}
	if (status & PLDMA_IRQ_CQ) {
		bits = pldma_rd_w1c64(pd, PLDMA_CQ_EVENTS_LO);
		spin_lock(&pd->lock);
		for_each_set_bit(i, &bits, pd->num_cqs) {
			cq = &pd->cqs[i];
			if (!cq->ctx)
				continue;
			atomic_inc(&cq->events);
			atomic64_inc(&pd->st.cq_events);
			trace_pldma_cq_event(pd->id, i, 0,
					     atomic_read(&cq->events));
			wake_up_interruptible(&cq->wq);
			if (cq->ib_cq)
				pldma_ib_cq_event(cq->ib_cq);
		}
		spin_unlock(&pd->lock);
	}
	if (status & PLDMA_IRQ_CQ_ERROR) {
		bits = pldma_rd_w1c64(pd, PLDMA_CQ_ERRORS_LO);
		spin_lock(&pd->lock);
		for_each_set_bit(i, &bits, pd->num_cqs) {
			cq = &pd->cqs[i];
			atomic64_inc(&pd->st.cq_errors);
			trace_pldma_cq_event(pd->id, i, 1,
					     atomic_read(&cq->events));
			if (!cq->ctx)
				continue;
			WRITE_ONCE(cq->error, true);
			wake_up_interruptible_all(&cq->wq);
		}
		spin_unlock(&pd->lock);
	}
}

/* ------------------------------------------------------------------ */
/* RECV-buffer responder faults (report mode)                         */
/* ------------------------------------------------------------------ */

/* A record with PLDMA_FR_F_RECV: to the QP's work item (IRQ thread). */
void pldma_kick_recv(struct pldma_dev *pd, const struct pldma_fault_rec *f)
{
	struct pldma_qp *qp;

	if (f->desc >= pd->num_qps)
		return;
	qp = &pd->qps[f->desc];
	spin_lock_irq(&pd->lock);
	qp->rec = *f;
	qp->rec_valid = true;
	queue_work(pd->wq, &qp->work);
	spin_unlock_irq(&pd->lock);
}

/*
 * Answer the RECV fault of @qp (QPN @qpn when the fault came): not if the
 * QP was reset or freed meanwhile, which ended the fault.
 */
static void pldma_recv_answer(struct pldma_ctx *ctx, struct pldma_qp *qp,
			      u32 qpn, bool resolved)
{
	struct pldma_dev *pd = ctx->pd;

	down_read(&pd->gone_sem);
	mutex_lock(&pd->key_mutex);
	if (!pd->gone && qp->ctx == ctx && qp->qpn == qpn) {
		pldma_wr(pd, PLDMA_QP_SEL, qp->idx);
		pldma_wr(pd, PLDMA_QP_CMD, resolved ? PLDMA_QP_CMD_RESOLVED :
						      PLDMA_QP_CMD_FAILED);
	}
	mutex_unlock(&pd->key_mutex);
	up_read(&pd->gone_sem);
}

/*
 * An incoming SEND (or the WQE of a WRITE with immediate) missed a page of
 * a receive buffer: the device NAKed the segment (RNR) and posted a record
 * (PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV, PASID = the QP's PD, DESC = the QP
 * index, DONE/LEN = offset and length of the message).  Make the page
 * present in the owner's mm (one page with PLDMA_STRAT_ONE, else a
 * touch-ahead window of the file's size, clamped to the rest of the
 * message and to the faulting VMA), then answer QP_CMD_RESOLVED, or
 * QP_CMD_FAILED when not even the faulting page can be made present (the
 * message ends with an error on both sides).  One work item per QP.
 */
void pldma_recv_fault_work(struct work_struct *work)
{
	struct pldma_qp *qp = container_of(work, struct pldma_qp, work);
	struct pldma_ctx *ctx = NULL;
	struct pldma_fault_rec f;
	struct pldma_dev *pd = qp->pd;
	unsigned int n = 1;
	u32 qpn = 0, strategy = 0;
	ktime_t start;
	int done;

	spin_lock_irq(&pd->lock);
	if (!qp->rec_valid) {
		spin_unlock_irq(&pd->lock);
		return;
	}
	f = qp->rec;
	qp->rec_valid = false;
	if (qp->ctx && f.pasid == (qp->ctx->pasid | PLDMA_CHB_PASID_EN)) {
		ctx = qp->ctx;
		kref_get(&ctx->ref);
		qpn = qp->qpn;
		strategy = READ_ONCE(ctx->strategy);
		if (strategy != PLDMA_STRAT_ONE)
			n = max_t(u32, READ_ONCE(ctx->touch), 1);
	}
	spin_unlock_irq(&pd->lock);
	if (!ctx) {
		/* the QP was reset or freed since, which ended the fault */
		atomic64_inc(&pd->st.remote_stale);
		return;
	}
	start = ktime_get();
	atomic64_inc(&pd->st.recv_faults);
	pldma_count(ctx, remote_faults, 1);
	if (f.len > f.done)
		n = min_t(u64, n, DIV_ROUND_UP(offset_in_page(f.va) +
					       (f.len - f.done), PAGE_SIZE));
	trace_pldma_remote_fault(pd->id, ctx->pasid, f.desc, f.va, f.flags,
				 f.done, f.len, strategy, n);
	done = pldma_fault_in(ctx, f.va, true, n);
	if (done > 0) {
		pldma_count(ctx, remote_pages, done);
	} else {
		dev_dbg(pd->dev, "qp %u: cannot resolve RECV fault at %#llx\n",
			qp->idx, f.va);
		pldma_count(ctx, remote_failed, 1);
	}
	pldma_recv_answer(ctx, qp, qpn, done > 0);
	trace_pldma_remote_resolved(pd->id, ctx->pasid, f.desc, f.va, n, done,
				    ktime_us_delta(ktime_get(), start));
	pldma_hist(pd, start);
	pldma_ctx_put(ctx);
}

/*
 * After a fault queue overflow, RECV fault records may be lost: RESOLVED
 * on every QP with a receive queue or an SRQ (one without a fault ignores it, one
 * whose page is still missing faults again).
 */
void pldma_qps_resync(struct pldma_dev *pd)
{
	unsigned int i;

	if (!pd->num_cqs)
		return;
	down_read(&pd->gone_sem);
	mutex_lock(&pd->key_mutex);
	for (i = 0; i < pd->num_qps && !pd->gone; i++) {
		if (pd->qps[i].ctx && (pd->qps[i].rq ||
				       pd->qps[i].srq != PLDMA_SRQ_NONE)) {
			pldma_wr(pd, PLDMA_QP_SEL, i);
			pldma_wr(pd, PLDMA_QP_CMD, PLDMA_QP_CMD_RESOLVED);
		}
	}
	mutex_unlock(&pd->key_mutex);
	up_read(&pd->gone_sem);
}
