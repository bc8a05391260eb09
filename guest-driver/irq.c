// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: interrupts.  The hard handler acknowledges the device's status and
 * wakes completion waiters; the threaded handler drains the report-mode
 * fault queue and hands each record to its channel's work item (fault.c)
 * or, for a responder fault, to its key's (remote.c) or, for a receive
 * buffer's, to its QP's (cq.c).  CQ events and CQ and QP errors: cq.c;
 * SRQ limit events and errors: srq.c.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/eventfd.h>
#include <linux/interrupt.h>

#include "pldma_drv.h"
#include "pldma_trace.h"

/* ------------------------------------------------------------------ */
/* Interrupts                                                         */
/* ------------------------------------------------------------------ */

/* Hand the channel's fault to its work item (IRQ thread). */
static void pldma_kick_channel(struct pldma_dev *pd, unsigned int ch,
			       const struct pldma_fault_rec *f)
{
	struct pldma_ctx *ctx;

	spin_lock_irq(&pd->lock);
	ctx = pd->chans[ch];
	/* A record for a channel that was reset and reassigned since. */
	if (ctx && f && f->pasid != (ctx->pasid | PLDMA_CHB_PASID_EN))
		ctx = NULL;
	if (ctx) {
		if (f) {
			spin_lock(&ctx->flock);
			ctx->rec = *f;
			ctx->rec_valid = true;
			spin_unlock(&ctx->flock);
		}
		/*
		 * The work's reference, taken before the work can run (on
		 * another CPU) and drop it; given back if the work was
		 * queued already.  Never the last one: the channel table
		 * holds one while pd->lock is held.
		 */
		kref_get(&ctx->ref);
		if (!queue_work(pd->wq, &ctx->fault_work))
			pldma_ctx_put(ctx);
	}
	spin_unlock_irq(&pd->lock);
}

/* A responder fault: to the key's work item (IRQ thread). */
static void pldma_kick_key(struct pldma_dev *pd,
			   const struct pldma_fault_rec *f)
{
	struct pldma_key *k;

	if (PLDMA_RKEY_INDEX(f->desc) >= PLDMA_NUM_KEYS)
		return;
	k = &pd->keys[PLDMA_RKEY_INDEX(f->desc)];
	spin_lock_irq(&pd->lock);
	k->rec = *f;
	k->rec_valid = true;
	queue_work(pd->wq, &k->work);
	spin_unlock_irq(&pd->lock);
}

static void pldma_read_record(struct pldma_dev *pd, u32 idx,
			      struct pldma_fault_rec *f)
{
	__le32 *r = pd->fq + idx * (PLDMA_FR_SIZE / 4);

	dma_rmb();
	f->channel = le32_to_cpu(r[PLDMA_FR_CHANNEL / 4]) & 0xffff;
	f->flags = le32_to_cpu(r[PLDMA_FR_CHANNEL / 4]) >> 16;
	f->pasid = le32_to_cpu(r[PLDMA_FR_PASID / 4]);
	f->va = le32_to_cpu(r[PLDMA_FR_VA / 4]) |
		(u64)le32_to_cpu(r[PLDMA_FR_VA / 4 + 1]) << 32;
	f->done = le32_to_cpu(r[PLDMA_FR_DONE / 4]);
	f->desc = le32_to_cpu(r[PLDMA_FR_DESC / 4]);
	f->seq = le32_to_cpu(r[PLDMA_FR_SEQ / 4]);
	f->len = le32_to_cpu(r[PLDMA_FR_LEN / 4]);
}

/* After an overflow, faulted channels without a record are found here. */
static void pldma_scan_faulted(struct pldma_dev *pd)
{
	unsigned long bits = pldma_rd(pd, PLDMA_FAULTED_CHANNELS);
	unsigned int ch;

	for_each_set_bit(ch, &bits, pd->nch)
		pldma_kick_channel(pd, ch, NULL);
}

irqreturn_t pldma_irq_thread(int irq, void *data)
{
	struct pldma_vec *vec = data;
	struct pldma_dev *pd = vec->pd;
	struct pldma_fault_rec f;
	u32 tail;

	while (pd->fq) {
		tail = pldma_rd(pd, PLDMA_FQ_TAIL);
		if (tail == pd->fq_head)
			break;
		pldma_read_record(pd, pd->fq_head, &f);
		pd->fq_head = (pd->fq_head + 1) & (pd->fq_entries - 1);
		pldma_wr(pd, PLDMA_FQ_HEAD, pd->fq_head);
		/* a receive buffer's, whatever its channel field says */
		if ((f.flags & (PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV)) ==
		    (PLDMA_FR_F_REMOTE | PLDMA_FR_F_RECV))
			pldma_kick_recv(pd, &f);
		else if (f.channel < pd->nch)
			pldma_kick_channel(pd, f.channel, &f);
		else if (f.channel == PLDMA_FR_CH_REMOTE &&
			 f.flags & PLDMA_FR_F_REMOTE)
			pldma_kick_key(pd, &f);
	}
	if (test_and_clear_bit(PLDMA_F_OVERFLOW, &pd->flags)) {
		atomic64_inc(&pd->st.fq_overflows);
		pldma_wr(pd, PLDMA_FQ_STATUS, PLDMA_FQ_STATUS_OVERFLOW |
			 PLDMA_FQ_STATUS_WRITE_ERR);
		pldma_scan_faulted(pd);
		if (pd->node_id)
			pldma_keys_resync(pd);
		pldma_qps_resync(pd);
	}
	return IRQ_HANDLED;
}

/* data: the vector's pldma_vec; only the fault vector has a thread */
irqreturn_t pldma_irq(int irq, void *data)
{
	struct pldma_vec *vec = data;
	struct pldma_dev *pd = vec->pd;
	u32 status = pldma_rd(pd, PLDMA_IRQ_STATUS) & pd->irq_mask & vec->mask;
	unsigned long wake;
	struct pldma_ctx *ctx;
	unsigned int ch;

	if (!status)
		return IRQ_NONE;
	pldma_wr(pd, PLDMA_IRQ_STATUS, status);

	wake = status & PLDMA_IRQ_CH_DONE_ALL;
	if (status & PLDMA_IRQ_CH_ERROR) {
		wake |= pldma_rd(pd, PLDMA_ERROR_CHANNELS);
		atomic64_inc(&pd->st.ch_errors);
	}
	spin_lock(&pd->lock);
	for_each_set_bit(ch, &wake, pd->nch) {
		ctx = pd->chans[ch];
		if (ctx) {
			atomic_inc(&ctx->events);
			wake_up_interruptible(&ctx->wq);
			if (ctx->efd)
				eventfd_signal(ctx->efd);
		}
	}
	spin_unlock(&pd->lock);

	if (status & (PLDMA_IRQ_CQ | PLDMA_IRQ_CQ_ERROR | PLDMA_IRQ_QP_ERROR))
		pldma_cq_irq(pd, status);
	if (status & PLDMA_IRQ_SRQ)
		pldma_srq_irq(pd);
	if (status & PLDMA_IRQ_ETH)
		pldma_eth_irq(pd);
	if (status & PLDMA_IRQ_FQ_OVERFLOW)
		set_bit(PLDMA_F_OVERFLOW, &pd->flags);
	if (status & (PLDMA_IRQ_FAULT | PLDMA_IRQ_FQ_OVERFLOW |
		      PLDMA_IRQ_CH_FAULTED))
		return IRQ_WAKE_THREAD;
	return IRQ_HANDLED;
}
