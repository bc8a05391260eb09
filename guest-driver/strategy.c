// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: the per-transfer strategies (checked and set per file or per ring
 * slot), the stall-mode counters the driver reads from the device (the
 * IOMMU core serves those faults), and pinning as ib_umem_get() does it.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "pldma_drv.h"
#include "pldma_trace.h"

/* ------------------------------------------------------------------ */
/* Strategies                                                         */
/* ------------------------------------------------------------------ */

static const struct pldma_strategy_info pldma_strats[] = PLDMA_STRATEGY_TABLE;
static_assert(ARRAY_SIZE(pldma_strats) == PLDMA_STRAT_NUM);

const char *pldma_strategy_name(u32 strategy)
{
	return strategy < PLDMA_STRAT_NUM ? pldma_strats[strategy].name : "?";
}

/*
 * A strategy of the table (uapi/pldma.h) for the device's fault mode, with
 * a window in its range when it takes one and none when it does not
 */
int pldma_check_strategy(struct pldma_ctx *ctx, u32 strategy, u32 touch)
{
	u32 mode = ctx->pd->stall_mode ? PLDMA_MODE_STALL : PLDMA_MODE_REPORT;
	u32 window;

	if (strategy >= PLDMA_STRAT_NUM)
		return -EINVAL;
	window = pldma_strats[strategy].window;
	if (window ? touch < 1 || touch > window : touch)
		return -EINVAL;
	if (!(pldma_strats[strategy].modes & PLDMA_MODE_BIT(mode)))
		return -EOPNOTSUPP;
	return 0;
}

/* A strategy of the table that also serves a registered window's faults */
bool pldma_strategy_for_mr(u32 strategy)
{
	return strategy < PLDMA_STRAT_NUM &&
	       pldma_strats[strategy].flags & PLDMA_STRATF_MR;
}

static_assert(PLDMA_BATCH_MAX == PLDMA_AHEAD_MAX);

void pldma_set_strategy(struct pldma_ctx *ctx, u32 strategy, u32 touch)
{
	WRITE_ONCE(ctx->touch, touch ? touch : 1);
	WRITE_ONCE(ctx->strategy, strategy);
}

/* Called with ctx->mutex held. */
int pldma_set_slot_strategy(struct pldma_ctx *ctx, u32 slot, u32 strategy,
			    u32 touch)
{
	struct pldma_slot_strat *slots = ctx->slots;

	if (WARN_ON_ONCE(slot >= PLDMA_RING_MAX_ENTRIES))
		return -EINVAL;
	if (!slots) {
		slots = kvcalloc(PLDMA_RING_MAX_ENTRIES, sizeof(*slots),
				 GFP_KERNEL);
		if (!slots)
			return -ENOMEM;
		/* pairs with smp_load_acquire() in pldma_handle_fault() */
		smp_store_release(&ctx->slots, slots);
	}
	WRITE_ONCE(slots[slot].valid, 0);
	WRITE_ONCE(slots[slot].strategy, strategy);
	WRITE_ONCE(slots[slot].touch, touch ? touch : 1);
	WRITE_ONCE(slots[slot].valid, 1);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Stall-mode counters: the IOMMU core serves the faults, the device   */
/* counts them.                                                        */
/* ------------------------------------------------------------------ */

void pldma_sync_hw_counters(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	u32 base = PLDMA_CH_CNT(ctx->ch);
	u32 v, d;

	if (!pd->stall_mode || !pldma_ctx_has_ch(ctx))
		return;
	v = pldma_rd(pd, base + PLDMA_CNT_STALLS);
	d = v - ctx->hw_last[PLDMA_CNT_STALLS / 4];
	ctx->hw_last[PLDMA_CNT_STALLS / 4] = v;
	pldma_count(ctx, stalls, d);
	pldma_count(ctx, faults[READ_ONCE(ctx->strategy)], d);
	v = pldma_rd(pd, base + PLDMA_CNT_RESTARTS);
	d = v - ctx->hw_last[PLDMA_CNT_RESTARTS / 4];
	ctx->hw_last[PLDMA_CNT_RESTARTS / 4] = v;
	pldma_count(ctx, restarts, d);
	v = pldma_rd(pd, base + PLDMA_CNT_ABORTS);
	d = v - ctx->hw_last[PLDMA_CNT_ABORTS / 4];
	ctx->hw_last[PLDMA_CNT_ABORTS / 4] = v;
	pldma_count(ctx, aborts, d);
}

/* ------------------------------------------------------------------ */
/* Pinning                                                             */
/* ------------------------------------------------------------------ */

void pldma_unpin(struct pldma_ctx *ctx, struct pldma_pin *p)
{
	trace_pldma_unpin(ctx->pd->id, ctx->ch, ctx->pasid, p->va, p->npages,
			  p->write);
	list_del(&p->node);
	ctx->npins--;
	unpin_user_pages_dirty_lock(p->pages, p->npages, p->write);
	atomic64_sub(p->npages, &ctx->mm->pinned_vm);
	kvfree(p->pages);
	kfree(p);
}

/*
 * Pin like ib_umem_get() does: long-term (FOLL_LONGTERM: the pages leave
 * ZONE_MOVABLE and CMA first, and fs-dax is refused), counted in the mm's
 * pinned_vm (VmPin) against RLIMIT_MEMLOCK unless CAP_IPC_LOCK.  Returns
 * -ENOMEM over the limit, -EFAULT when the range cannot be pinned.
 * Called by the owner (current->mm == ctx->mm) with ctx->mutex held.
 */
int pldma_pin_range(struct pldma_ctx *ctx, u64 va, u32 len, bool write,
		    u32 done_at)
{
	unsigned long first = va >> PAGE_SHIFT;
	unsigned long last = (va + len - 1) >> PAGE_SHIFT;
	unsigned long n = last - first + 1, got = 0;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned int gup = FOLL_LONGTERM | (write ? FOLL_WRITE : 0);
	struct mm_struct *mm = ctx->mm;
	struct pldma_pin *p;
	long ret;

	if (atomic64_add_return(n, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(n, &mm->pinned_vm);
		return -ENOMEM;
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		goto err_acct;
	p->pages = kvmalloc_array(n, sizeof(*p->pages), GFP_KERNEL);
	if (!p->pages)
		goto err_free;
	while (got < n) {
		ret = pin_user_pages_fast((first + got) << PAGE_SHIFT,
					  min_t(unsigned long, n - got, INT_MAX),
					  gup, p->pages + got);
		if (ret <= 0)
			break;
		got += ret;
	}
	if (got < n) {
		unpin_user_pages(p->pages, got);
		kvfree(p->pages);
		kfree(p);
		atomic64_sub(n, &mm->pinned_vm);
		return -EFAULT;
	}
	p->npages = n;
	p->va = va;
	p->write = write;
	trace_pldma_pin(ctx->pd->id, ctx->ch, ctx->pasid, va, n, write);
	p->done_at = done_at;
	list_add_tail(&p->node, &ctx->pins);
	ctx->npins++;
	pldma_count(ctx, pinned_pages, n);
	return 0;

err_free:
	kfree(p);
err_acct:
	atomic64_sub(n, &mm->pinned_vm);
	return -ENOMEM;
}

/*
 * Unpin transfers whose descriptor has run (or all), whatever became of
 * the completion record: the channel's COMPLETED count passed the one the
 * descriptor was queued for, or the channel is idle (nothing is pending:
 * descriptors dropped by CANCEL in ERROR state never complete).
 */
void pldma_reap_pins(struct pldma_ctx *ctx, bool all)
{
	struct pldma_pin *p, *tmp;
	u32 completed;

	if (list_empty(&ctx->pins))
		return;
	if (!all && pldma_ch_rd(ctx, PLDMA_CH_STATE) == PLDMA_STATE_IDLE)
		all = true;
	completed = pldma_ch_rd(ctx, PLDMA_CH_COMPLETED);
	list_for_each_entry_safe(p, tmp, &ctx->pins, node) {
		if (!all && (s32)(completed - p->done_at) < 0)
			continue;
		pldma_unpin(ctx, p);
	}
}
