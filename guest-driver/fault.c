// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: serving a channel's page faults in report mode.  Each faulting
 * channel is served by its own work item (one page, a touch-ahead window,
 * a batch, or forwarded to the process), bounded by the refault limit and
 * the no-progress watchdog; in stall mode, where the IOMMU core serves the
 * faults, the no-progress check cancels a channel stalled for too long.
 * The interrupts that start this work are in irq.c, the responder's faults
 * in remote.c, strategies and pinning in strategy.c.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "pldma_drv.h"
#include "pldma_trace.h"

/* ------------------------------------------------------------------ */
/* Report-mode faults                                                 */
/* ------------------------------------------------------------------ */

void pldma_hist(struct pldma_dev *pd, ktime_t start)
{
	s64 us = ktime_us_delta(ktime_get(), start);
	unsigned int b = us > 0 ? fls64(us) : 0;

	b = min_t(unsigned int, b, PLDMA_HIST_BUCKETS - 1);
	atomic64_inc(&pd->st.hist[b]);
}

/*
 * Make up to @n pages from @va present in the bound mm.  Returns the number
 * of pages made present (0 if not even the faulting one could be).  Runs in
 * the channel's own work item, never under a lock another channel needs:
 * the fault may wait for a slow filler (userfaultfd, a file system), so it
 * is retryable and killable (fixup_user_fault() with @unlocked), and the
 * last reference to the mm may be ours, hence mmput_async().
 */
int pldma_fault_in(struct pldma_ctx *ctx, u64 va, bool write, unsigned int n)
{
	struct mm_struct *mm = ctx->mm;
	unsigned int flags = write ? FAULT_FLAG_WRITE : 0;
	unsigned long addr = va & PAGE_MASK, end = 0;
	struct vm_area_struct *vma;
	unsigned int done = 0;
	bool unlocked;

	if (!mmget_not_zero(mm))
		return 0;
	mmap_read_lock(mm);
	for (; done < n; done++, addr += PAGE_SIZE) {
		/* a touch-ahead window ends with the faulting VMA */
		vma = vma_lookup(mm, addr);
		if (!vma || (end && addr >= end))
			break;
		if (!end)
			end = vma->vm_end;
		unlocked = false;
		if (fixup_user_fault(mm, addr, flags, &unlocked))
			break;
		if (READ_ONCE(ctx->closing))
			break;
	}
	mmap_read_unlock(mm);
	mmput_async(mm);
	return done;
}

bool pldma_va_mapped(struct pldma_ctx *ctx, u64 va)
{
	struct mm_struct *mm = ctx->mm;
	bool ret;

	if (!mmget_not_zero(mm))
		return false;
	mmap_read_lock(mm);
	ret = vma_lookup(mm, va);
	mmap_read_unlock(mm);
	mmput_async(mm);
	return ret;
}

/*
 * Called with ctx->cmd_lock held.  RESTART or CANCEL a FAULTED channel, or
 * CANCEL a STALLED one (stall mode's no-progress check).
 */
static void pldma_ch_cmd(struct pldma_ctx *ctx, u32 cmd)
{
	u32 state;

	lockdep_assert_held(&ctx->cmd_lock);
	state = pldma_ch_rd(ctx, PLDMA_CH_STATE);
	if (state != PLDMA_STATE_FAULTED &&
	    !(state == PLDMA_STATE_STALLED && cmd == PLDMA_CMD_CANCEL))
		return;
	/*
	 * Cancelling a fault on the completion record drops the record:
	 * remember where, so that WAIT fails at once instead of sleeping
	 * until its timeout (the device raises CH_DONE for it).
	 */
	if (cmd == PLDMA_CMD_CANCEL &&
	    (pldma_ch_rd(ctx, PLDMA_CH_FAULT_INFO) & PLDMA_FR_F_COMPL)) {
		WRITE_ONCE(ctx->lost_compl,
			   (pldma_ch_rd(ctx, PLDMA_CH_FAULT_VA_LO) |
			    (u64)pldma_ch_rd(ctx, PLDMA_CH_FAULT_VA_HI) << 32) &
			   ~7ULL);
		pldma_count(ctx, lost_records, 1);
	}
	pldma_ch_wr(ctx, PLDMA_CH_CMD, cmd);
	if (cmd == PLDMA_CMD_RESTART)
		pldma_count(ctx, restarts, 1);
	else
		pldma_count(ctx, cancels, 1);
}

/*
 * Answer the fault identified by @token, unless it was answered already
 * (by the watchdog, a RESOLVE, or release()).  Returns whether it did.
 */
bool pldma_answer(struct pldma_ctx *ctx, u32 token, u32 cmd, bool resolved,
		  u32 reason)
{
	bool ret = false;

	mutex_lock(&ctx->cmd_lock);
	if (!ctx->closing && ctx->fault_busy && ctx->token == token) {
		ctx->fault_busy = false;
		ctx->resolved = cmd == PLDMA_CMD_RESTART && resolved;
		if (cmd == PLDMA_CMD_RESTART)
			trace_pldma_restart(ctx->pd->id, ctx->ch, ctx->pasid,
					    ctx->fault_va, token, 0);
		else
			trace_pldma_cancel(ctx->pd->id, ctx->ch, ctx->pasid,
					   ctx->fault_va, token, reason);
		pldma_ch_cmd(ctx, cmd);
		pldma_hist(ctx->pd, ctx->fault_start);
		ret = true;
	}
	mutex_unlock(&ctx->cmd_lock);
	return ret;
}

/*
 * Post a fault in the file's slot of @kind, for FAULT_GET, under flock
 * (held by the caller for PLDMA_FWD_REMOTE, which also checks the slot is
 * free; a LOCAL fault replaces the channel's previous one, which its token
 * made stale).  @seq is what RESOLVE must quote.
 */
void pldma_fwd_post(struct pldma_ctx *ctx, enum pldma_fwd_kind kind,
		    const struct pldma_fault_rec *f, u32 seq)
{
	struct pldma_fwd *w = &ctx->fwd[kind];

	lockdep_assert_held(&ctx->flock);
	memset(&w->f, 0, sizeof(w->f));
	w->f.va = f->va;
	w->f.flags = f->flags;
	w->f.seq = seq;
	w->f.desc = f->desc;
	w->f.done = f->done;
	w->f.len = f->len;
	w->pending = true;
	w->delivered = false;
}

static void pldma_forward_fault(struct pldma_ctx *ctx,
				struct pldma_fault_rec *f, u32 token)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->flock, flags);
	/*
	 * The driver's token, not the record's sequence number: records
	 * lost to an overflow have none, and a RESOLVE must never match a
	 * later fault.
	 */
	pldma_fwd_post(ctx, PLDMA_FWD_LOCAL, f, token);
	ctx->fwd[PLDMA_FWD_LOCAL].token = token;
	spin_unlock_irqrestore(&ctx->flock, flags);
	pldma_count(ctx, user_faults, 1);
	trace_pldma_forward(ctx->pd->id, ctx->ch, ctx->pasid, f->va, token, 0);
	wake_up_interruptible(&ctx->fwq);
}

/*
 * Take the channel's current fault, under cmd_lock.  The channel registers
 * describe it (a record may be stale or lost to an overflow); the record
 * only adds the descriptor length.  Returns false when there is nothing
 * new to serve, else fills @f, @strategy, @n (pages) and @token.
 */
static bool pldma_take_fault(struct pldma_ctx *ctx, struct pldma_fault_rec *f,
			     u32 *strategy, unsigned int *n, u32 *token,
			     struct pldma_batch *b)
{
	struct pldma_slot_strat *slots;
	u32 cnt, completed;
	u32 touch;

	lockdep_assert_held(&ctx->cmd_lock);
	if (ctx->closing ||
	    pldma_ch_rd(ctx, PLDMA_CH_STATE) != PLDMA_STATE_FAULTED)
		return false;
	cnt = pldma_ch_rd(ctx, PLDMA_CH_CNT_OFFSET + PLDMA_CNT_FAULTS);
	if (ctx->fault_seen && cnt == ctx->fault_cnt)
		return false;	/* taken already */

	memset(f, 0, sizeof(*f));
	f->channel = ctx->ch;
	f->va = pldma_ch_rd(ctx, PLDMA_CH_FAULT_VA_LO) |
		(u64)pldma_ch_rd(ctx, PLDMA_CH_FAULT_VA_HI) << 32;
	f->flags = pldma_ch_rd(ctx, PLDMA_CH_FAULT_INFO);
	f->desc = pldma_ch_rd(ctx, PLDMA_CH_FAULT_DESC);
	f->done = pldma_ch_rd(ctx, PLDMA_CH_FAULT_DONE);
	f->seq = U32_MAX;
	spin_lock_irq(&ctx->flock);
	if (ctx->rec_valid && ctx->rec.va == f->va &&
	    ctx->rec.desc == f->desc && ctx->rec.done == f->done) {
		f->seq = ctx->rec.seq;
		f->len = ctx->rec.len;
	}
	ctx->rec_valid = false;
	spin_unlock_irq(&ctx->flock);

	ctx->fault_seen = true;
	ctx->fault_cnt = cnt;
	ctx->fault_busy = true;
	*token = ++ctx->token;
	ctx->fault_start = ktime_get();
	ctx->fault_va = f->va;

	/* Progress since the last fault re-arms the no-progress watchdog. */
	completed = pldma_ch_rd(ctx, PLDMA_CH_COMPLETED);
	if (completed != ctx->prog_completed || f->desc != ctx->prog_desc ||
	    f->done != ctx->prog_done) {
		ctx->prog_completed = completed;
		ctx->prog_desc = f->desc;
		ctx->prog_done = f->done;
		ctx->prog_va = f->va;
		ctx->refaults = 0;
		ctx->moves = 0;
		ctx->slow_periods = 0;
		mod_delayed_work(ctx->pd->wq, &ctx->watchdog,
				 msecs_to_jiffies(PLDMA_NO_PROGRESS_MS));
	} else if (f->va == ctx->prog_va) {
		/*
		 * The same access again.  After an answer that made the page
		 * present, the memory moved before the device retried
		 * (migration, compaction, THP collapse or split,
		 * MADV_DONTNEED): not a failure to resolve, so it does not
		 * count toward the refault limit, up to a livelock guard.
		 * After an answer that did not make it present, it counts.
		 */
		if (ctx->resolved && ++ctx->moves <= PLDMA_MAX_MOVES)
			pldma_count(ctx, moved_refaults, 1);
		else
			ctx->refaults++;
	} else {
		ctx->prog_va = f->va;
	}

	*strategy = READ_ONCE(ctx->strategy);
	touch = READ_ONCE(ctx->touch);
	/* pairs with smp_store_release() in pldma_set_slot_strategy() */
	slots = smp_load_acquire(&ctx->slots);
	if (slots && f->desc < PLDMA_RING_MAX_ENTRIES &&
	    READ_ONCE(slots[f->desc].valid)) {
		*strategy = READ_ONCE(slots[f->desc].strategy);
		touch = READ_ONCE(slots[f->desc].touch);
	}
	*n = 1;
	memset(b, 0, sizeof(*b));
	if (*strategy == PLDMA_STRAT_BATCH && (f->flags & PLDMA_FR_F_AHEAD)) {
		b->src = pldma_ch_rd64(ctx, PLDMA_CH_AHEAD_SRC_LO);
		b->src_map = pldma_ch_rd64(ctx, PLDMA_CH_AHEAD_SRC_MAP_LO);
		b->dst = pldma_ch_rd64(ctx, PLDMA_CH_AHEAD_DST_LO);
		b->dst_map = pldma_ch_rd64(ctx, PLDMA_CH_AHEAD_DST_MAP_LO);
	}
	/*
	 * A pinned or prefaulted buffer faults only where its page is present
	 * but its PTE is old: reclaim's aging (or MADV_COLD) cleared the access
	 * flag, which pinning does not prevent and GUP does not set again, and
	 * the SMMU has no HTTU (Linux does not enable HA for SVA contexts
	 * anyway).  Its neighbours were most likely aged with it: refresh a
	 * window, so that an aged buffer costs one fault per window, not one
	 * per page.
	 */
	if ((*strategy == PLDMA_STRAT_TOUCH || *strategy == PLDMA_STRAT_PIN ||
	     *strategy == PLDMA_STRAT_PREFAULT) &&
	    !(f->flags & (PLDMA_FR_F_DESC | PLDMA_FR_F_COMPL))) {
		*n = *strategy == PLDMA_STRAT_TOUCH ? touch : PLDMA_AGED_WINDOW;
		/*
		 * Never past the transfer: the faulting buffer has len - done
		 * bytes left from va (the device faults at buffer + done).
		 * Without the record's length (overflow) only the VMA clamps.
		 */
		if (f->len > f->done)
			*n = min_t(u64, *n,
				   DIV_ROUND_UP(offset_in_page(f->va) +
						f->len - f->done, PAGE_SIZE));
	}
	pldma_count(ctx, faults[*strategy], 1);
	trace_pldma_fault(ctx->pd->id, ctx->ch, ctx->pasid, f->va, f->flags,
			  f->desc, f->done, *strategy, *token);
	return true;
}

/*
 * A batched fault: make present the pages the device listed as missing in
 * @map (bit i: the page at @base + i * PLDMA_AHEAD_PAGE), a run of
 * consecutive pages at a time.  Returns the pages made present.
 */
static unsigned int pldma_fault_in_map(struct pldma_ctx *ctx, u64 base,
				       u64 map, bool write)
{
	unsigned int i = 0, j, done = 0;

	while (map >> i) {
		i += __ffs64(map >> i);
		for (j = i; j < 64 && (map & BIT_ULL(j)); j++)
			;
		done += max(pldma_fault_in(ctx, base + i * PLDMA_AHEAD_PAGE,
					   write, j - i), 0);
		if (j >= 64)
			break;
		i = j;
	}
	return done;
}

/* The fault work starts or ends serving the channel's fault itself */
static void pldma_resolver_set(struct pldma_ctx *ctx, bool on)
{
	struct task_struct *old;

	if (on)
		get_task_struct(current);
	spin_lock_irq(&ctx->flock);
	old = ctx->resolver;
	ctx->resolver = on ? current : NULL;
	ctx->resolver_rt = on ? READ_ONCE(current->se.sum_exec_runtime) : 0;
	spin_unlock_irq(&ctx->flock);
	if (old)
		put_task_struct(old);
}

/*
 * Is the channel's fault-in still working, rather than waiting for a
 * filler?  Its task ran for PLDMA_BUSY_NS since the last look (reclaim
 * and zram decompression run on a CPU; a FUSE read or a userfaultfd that
 * nobody answers sleeps), and it has not had PLDMA_SLOW_PERIODS yet.
 */
static bool pldma_resolver_busy(struct pldma_ctx *ctx)
{
	bool busy = false;
	u64 rt;

	spin_lock_irq(&ctx->flock);
	if (ctx->resolver && ctx->slow_periods < PLDMA_SLOW_PERIODS) {
		rt = READ_ONCE(ctx->resolver->se.sum_exec_runtime);
		busy = rt - ctx->resolver_rt >= PLDMA_BUSY_NS;
		ctx->resolver_rt = rt;
		if (busy)
			ctx->slow_periods++;
	}
	spin_unlock_irq(&ctx->flock);
	return busy;
}

static void pldma_serve_fault(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_batch b;
	struct pldma_fault_rec f;
	unsigned int n, refaults;
	u32 strategy, token;
	ktime_t start;
	bool taken;
	int done;

	mutex_lock(&ctx->cmd_lock);
	taken = pldma_take_fault(ctx, &f, &strategy, &n, &token, &b);
	refaults = ctx->refaults;
	mutex_unlock(&ctx->cmd_lock);
	if (!taken)
		return;

	/* The same access failing again without progress: give up. */
	if (refaults > PLDMA_MAX_REFAULTS) {
		dev_dbg(pd->dev, "ch%u: VA %#llx keeps faulting\n", ctx->ch,
			f.va);
		if (pldma_answer(ctx, token, PLDMA_CMD_CANCEL, false,
				 PLDMA_TR_REFAULTS))
			pldma_count(ctx, cancel_refaults, 1);
		return;
	}

	if (strategy == PLDMA_STRAT_USER) {
		if (pldma_va_mapped(ctx, f.va))
			pldma_forward_fault(ctx, &f, token);
		else if (pldma_answer(ctx, token, PLDMA_CMD_CANCEL, false,
				      PLDMA_TR_UNRESOLVED))
			pldma_count(ctx, cancel_unresolved, 1);
		return;
	}

	start = ktime_get();
	pldma_resolver_set(ctx, true);
	done = pldma_fault_in(ctx, f.va, f.flags & PLDMA_FR_F_WRITE, n);
	trace_pldma_fault_in(pd->id, ctx->ch, ctx->pasid, f.va, strategy, n,
			     done, ktime_us_delta(ktime_get(), start));
	if (done > 0) {
		pldma_count(ctx, pages_present, done);
		if (done > 1)
			pldma_count(ctx, touch_pages, done - 1);
		if (b.src_map || b.dst_map) {
			/* the faulting page is listed too: present already */
			unsigned int more;

			more = pldma_fault_in_map(ctx, b.src, b.src_map, false) +
			       pldma_fault_in_map(ctx, b.dst, b.dst_map, true);
			more = more > 0 ? more - 1 : 0;
			pldma_count(ctx, pages_present, more);
			pldma_count(ctx, batch_pages, more);
			trace_pldma_batch(pd->id, ctx->ch, ctx->pasid, b.src,
					  b.src_map, b.dst, b.dst_map, more);
		}
		pldma_resolver_set(ctx, false);
		pldma_answer(ctx, token, PLDMA_CMD_RESTART, true, 0);
	} else {
		pldma_resolver_set(ctx, false);
		dev_dbg(pd->dev, "ch%u: cannot resolve fault at %#llx\n",
			ctx->ch, f.va);
		if (pldma_answer(ctx, token, PLDMA_CMD_CANCEL, false,
				 PLDMA_TR_UNRESOLVED))
			pldma_count(ctx, cancel_unresolved, 1);
	}
}

void pldma_fault_work(struct work_struct *work)
{
	struct pldma_ctx *ctx = container_of(work, struct pldma_ctx,
					     fault_work);

	pldma_serve_fault(ctx);
	pldma_ctx_put(ctx);
}

/*
 * A faulted channel that made no progress for PLDMA_NO_PROGRESS_MS (the
 * fault-in waits for a filler that does not answer, a forwarded fault is
 * not answered, or it is answered without the page becoming present):
 * cancel the descriptor, so the transfer ends with an error status without
 * the caller's timeout.  A late answer finds its token stale.  But a
 * fault-in that is working, not waiting (a swap-in under memory pressure
 * took 2 s a page in a thrashing guest: its task reclaims and decompresses
 * on a CPU), gets more periods (pldma_resolver_busy()): a valid transfer
 * does not fail because memory is short.
 */
void pldma_watchdog(struct work_struct *work)
{
	struct pldma_ctx *ctx = container_of(to_delayed_work(work),
					     struct pldma_ctx, watchdog);
	bool cancelled = false, stuck;

	mutex_lock(&ctx->cmd_lock);
	stuck = !ctx->closing &&
		pldma_ch_rd(ctx, PLDMA_CH_STATE) == PLDMA_STATE_FAULTED &&
		pldma_ch_rd(ctx, PLDMA_CH_COMPLETED) == ctx->prog_completed &&
		pldma_ch_rd(ctx, PLDMA_CH_FAULT_DESC) == ctx->prog_desc &&
		pldma_ch_rd(ctx, PLDMA_CH_FAULT_DONE) == ctx->prog_done;
	if (stuck && pldma_resolver_busy(ctx)) {
		/* slow, not hung: a swap-in under memory pressure */
		trace_pldma_slow(ctx->pd->id, ctx->ch, ctx->pasid,
				 ctx->fault_va, ctx->token, PLDMA_TR_SLOW);
		pldma_count(ctx, slow_extended, 1);
		mod_delayed_work(ctx->pd->wq, &ctx->watchdog,
				 msecs_to_jiffies(PLDMA_NO_PROGRESS_MS));
	} else if (stuck) {
		ctx->fault_busy = false;
		ctx->fault_seen = true;
		ctx->fault_cnt = pldma_ch_rd(ctx, PLDMA_CH_CNT_OFFSET +
					     PLDMA_CNT_FAULTS);
		ctx->token++;
		spin_lock_irq(&ctx->flock);
		ctx->fwd[PLDMA_FWD_LOCAL].pending = false;
		spin_unlock_irq(&ctx->flock);
		trace_pldma_cancel(ctx->pd->id, ctx->ch, ctx->pasid,
				   ctx->fault_va, ctx->token,
				   PLDMA_TR_NO_PROGRESS);
		pldma_ch_cmd(ctx, PLDMA_CMD_CANCEL);
		pldma_count(ctx, cancel_noprogress, 1);
		pldma_hist(ctx->pd, ctx->fault_start);
		cancelled = true;
	}
	mutex_unlock(&ctx->cmd_lock);
	if (cancelled)
		dev_dbg(ctx->pd->dev, "ch%u: no progress for %u ms, cancelled\n",
			ctx->ch, PLDMA_NO_PROGRESS_MS);
}

/*
 * Stall mode: the IOMMU core serves the faults (IOPF), the driver gets no
 * interrupt and never learns that one started.  A fault whose filler does
 * not answer (a FUSE or NFS server, a userfaultfd nobody serves, a swap
 * device that hangs) would keep the channel STALLED for as long as the
 * filler takes, forever if it never answers.  So every open file polls its
 * channel every PLDMA_STALL_CHECK_MS: a channel found STALLED at the same
 * position (descriptors completed, faulting descriptor, bytes done in it,
 * faulting VA) for PLDMA_NO_PROGRESS_MS is cancelled, as a FAULTED one is
 * in report mode.  The device then ends the descriptor with CANCELLED,
 * its bytes done and the faulting VA, and forgets the stall.  A stall that
 * makes progress, however long the transfer, is never cancelled: any
 * movement restarts the count.  It costs one register read per open file
 * per period while the channel is not STALLED.
 *
 * The fault itself is not ended: the IOPF worker stays in handle_mm_fault()
 * until the filler answers, holding the mm's mmap_lock for reading, and the
 * SMMU keeps the stalled transaction until the worker answers it (the
 * device ignores that late resume).  Meanwhile other faults, of this and
 * other processes, are served by other workers.  But what needs the fault
 * over waits for the filler: munmap() and mmap() in that process (its
 * close() of the channel page first of all), and release() of any
 * stall-mode channel behind the same SMMU, whose pldma_ctx_unbind() flushes
 * the SMMU's IOPF workqueue (iopf_queue_flush_dev()).  A filler that dies
 * or is aborted (a killed FUSE server) ends the fault with SIGBUS; then
 * all of these go on.
 *
 * The CANCEL races with a resume that comes in between the reads and the
 * command: the channel then either runs (the CANCEL is ignored, CH_ERROR =
 * BAD_CMD) or has stalled again further on, and that fresh stall is
 * cancelled after more than PLDMA_NO_PROGRESS_MS of none.
 */
void pldma_stall_watchdog(struct work_struct *work)
{
	struct pldma_ctx *ctx = container_of(to_delayed_work(work),
					     struct pldma_ctx, watchdog);
	u32 completed, desc, done;
	bool cancelled = false;
	u64 va = 0;

	mutex_lock(&ctx->cmd_lock);
	if (ctx->closing)
		goto out;
	if (pldma_ch_rd(ctx, PLDMA_CH_STATE) != PLDMA_STATE_STALLED) {
		ctx->stall_seen = false;
		goto rearm;
	}
	completed = pldma_ch_rd(ctx, PLDMA_CH_COMPLETED);
	desc = pldma_ch_rd(ctx, PLDMA_CH_FAULT_DESC);
	done = pldma_ch_rd(ctx, PLDMA_CH_FAULT_DONE);
	va = pldma_ch_rd(ctx, PLDMA_CH_FAULT_VA_LO) |
	     (u64)pldma_ch_rd(ctx, PLDMA_CH_FAULT_VA_HI) << 32;
	if (!ctx->stall_seen || completed != ctx->prog_completed ||
	    desc != ctx->prog_desc || done != ctx->prog_done ||
	    va != ctx->prog_va) {
		/* a new stall, or this one moved: count from now */
		ctx->stall_seen = true;
		ctx->stall_since = ktime_get();
		ctx->prog_completed = completed;
		ctx->prog_desc = desc;
		ctx->prog_done = done;
		ctx->prog_va = va;
		goto rearm;
	}
	if (ktime_ms_delta(ktime_get(), ctx->stall_since) <
	    PLDMA_NO_PROGRESS_MS)
		goto rearm;

	ctx->stall_seen = false;
	ctx->token++;
	trace_pldma_cancel(ctx->pd->id, ctx->ch, ctx->pasid, va, ctx->token,
			   PLDMA_TR_NO_PROGRESS);
	pldma_ch_cmd(ctx, PLDMA_CMD_CANCEL);
	pldma_count(ctx, cancel_noprogress, 1);
	cancelled = true;
rearm:
	queue_delayed_work(ctx->pd->wq, &ctx->watchdog,
			   msecs_to_jiffies(PLDMA_STALL_CHECK_MS));
out:
	mutex_unlock(&ctx->cmd_lock);
	if (cancelled)
		dev_dbg(ctx->pd->dev,
			"ch%u: stalled at %#llx without progress for %u ms, cancelled\n",
			ctx->ch, va, PLDMA_NO_PROGRESS_MS);
}

/*
 * A page the resolver made present may still be unusable by the SMMU: a
 * migrated page comes back with an old PTE (AF clear), and without HTTU
 * the SMMU faults on it again, while MADV_POPULATE_* and GUP, which find
 * the page present, leave the PTE old.  That made the user strategy fault
 * on the same VA until the refault limit cancelled valid transfers under
 * compaction.  So, if the page is present, fault it in once more from the
 * kernel: on a present PTE that only sets young (and dirty for a write),
 * and never waits for a filler.  Returns whether the page is present.
 */
bool pldma_touch_present(u64 va, bool write)
{
	struct mm_struct *mm = current->mm;
	struct page *page;
	bool unlocked = false;
	int ret;

	if (!get_user_page_fast_only(va, write ? FOLL_WRITE : 0, &page))
		return false;
	put_page(page);
	if (mmap_read_lock_killable(mm))
		return true;
	ret = fixup_user_fault(mm, va & PAGE_MASK,
			       write ? FAULT_FLAG_WRITE : 0, &unlocked);
	mmap_read_unlock(mm);
	return !ret;
}
