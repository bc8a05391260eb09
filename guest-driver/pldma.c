// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine (QEMU model of the
 * ExaNeSt engine), one module for both buses: the platform device
 * ("exanest,pldma") and the PCIe endpoint (pldma-pci) share everything
 * below the bus glue at the end of this file.
 *
 * Every open of /dev/pldmaN binds the caller's mm to the device with SVA,
 * claims a free channel and ties it to the PASID.  The channel page can be
 * mmap()ed; descriptors, rings and completion records live in the process's
 * memory.  Page faults of the device are served according to the strategy
 * the file selected: stall mode is served by the IOMMU core (IOPF); in
 * report mode the driver makes one page or a window present in the bound mm
 * and restarts the channel, or forwards the fault to the process.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/eventfd.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/iommu.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-ats.h>
#include <linux/platform_device.h>
#include <linux/poll.h>
#include <linux/rwsem.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/unaligned.h>

#include <hw/misc/pldma-regs.h>
#include "uapi/pldma.h"
#include "pldma_compat.h"

/* why a fault was cancelled (tracepoints) */
#define PLDMA_TR_UNRESOLVED	1	/* not mapped, fault-in failed */
#define PLDMA_TR_REFAULTS	2	/* refault limit */
#define PLDMA_TR_NO_PROGRESS	3	/* watchdog */
#define PLDMA_TR_USER		4	/* RESOLVE(CANCEL) */

#define CREATE_TRACE_POINTS
#include "pldma_trace.h"

#define PLDMA_HIST_BUCKETS	21	/* <1us, then [2^(i-1), 2^i) us */
#define PLDMA_NO_PROGRESS_MS	1000	/* a faulted channel that does not move */
#define PLDMA_MAX_REFAULTS	8	/* same VA faulting again and again */
#define PLDMA_MAX_MOVES		64	/* ... after answers that resolved it */
#define PLDMA_MAX_PINS		64	/* pinned transfers in flight per file */
#define PLDMA_DRAIN_US		1000000	/* release(): wait for the channel */

static const char * const pldma_strat_names[PLDMA_STRAT_NUM] = {
	[PLDMA_STRAT_PIN] = "pin",
	[PLDMA_STRAT_PREFAULT] = "prefault",
	[PLDMA_STRAT_STALL] = "stall",
	[PLDMA_STRAT_ONE] = "one-by-one",
	[PLDMA_STRAT_TOUCH] = "touch-ahead",
	[PLDMA_STRAT_USER] = "user",
};

struct pldma_counters {
	atomic64_t faults[PLDMA_STRAT_NUM];
	atomic64_t stalls;
	atomic64_t pages_present;
	atomic64_t touch_pages;
	atomic64_t restarts;
	atomic64_t cancels;
	atomic64_t aborts;
	atomic64_t user_faults;
	atomic64_t pinned_pages;
	atomic64_t fq_overflows;
	atomic64_t ch_errors;
	atomic64_t cancel_noprogress;	/* by the watchdog */
	atomic64_t cancel_refaults;	/* livelock guard */
	atomic64_t cancel_unresolved;	/* not mapped, fault-in failed */
	atomic64_t moved_refaults;	/* resolved, then faulted again */
	atomic64_t lost_records;	/* completion write cancelled */
	atomic64_t hist[PLDMA_HIST_BUCKETS];
};

struct pldma_ctx;
struct pldma_dev;

/*
 * One interrupt: the platform device's line, INTx, or one MSI-X vector of
 * pldma-pci, which serves the IRQ_STATUS bits in @mask (docs/specs/pldma.rst,
 * "PCI device": vector n = IRQ_CH_DONE(n), then fault queue, then errors).
 */
struct pldma_vec {
	struct pldma_dev *pd;
	u32 mask;
};

#define PLDMA_MAX_VECS	PLDMA_PCI_NUM_VECS(PLDMA_MAX_CHANNELS)

/*
 * Refcounted: open files keep it (and the struct device) after the device
 * is removed (PCI hot-unplug); gone_sem/gone fence every register access
 * of a file against that removal.
 */
struct pldma_dev {
	struct kref ref;
	struct rw_semaphore gone_sem;
	bool gone;			/* removed: no register access */
	bool unregistered;
	struct device *dev;
	void __iomem *base;
	phys_addr_t phys;
	int irq;
	int id;
	u32 version;
	u32 cap;
	u32 nch;
	u32 max_xfer;
	u32 chunk;
	bool stall_mode;
	u32 irq_mask;
	struct pldma_vec vecs[PLDMA_MAX_VECS];
	char name[16];
	struct miscdevice misc;

	spinlock_t lock;		/* protects chans[] */
	struct pldma_ctx *chans[PLDMA_MAX_CHANNELS];
	struct workqueue_struct *wq;	/* fault service, one work per channel */
	unsigned long flags;
#define PLDMA_F_OVERFLOW	0

	__le32 *fq;			/* fault queue, PLDMA_FR_SIZE records */
	dma_addr_t fq_dma;
	u32 fq_head;
	u32 fq_entries;

	struct dentry *dbg;
	struct pldma_counters st;
};

struct pldma_pin {
	struct list_head node;
	u64 va;
	u32 done_at;			/* COMPLETED once its descriptor ran */
	struct page **pages;
	unsigned long npages;
	bool write;
};

struct pldma_slot_strat {
	u8 valid;
	u8 strategy;
	u16 touch;
};

struct pldma_fault_rec {
	u16 channel;
	u16 flags;
	u32 pasid;
	u64 va;
	u32 done;
	u32 desc;
	u32 seq;
	u32 len;
};

/*
 * One open file.  It lives until the file is released *and* no fault work
 * runs for it any more (ref): a fault-in may wait for a slow filler (a
 * userfaultfd handler) long after the channel was given back.
 */
struct pldma_ctx {
	struct kref ref;
	struct pldma_dev *pd;
	unsigned int ch;
	bool detached;			/* device removed while open */
	struct address_space *mapping;	/* of the node, to zap mmaps */
	void __iomem *chregs;
	struct iommu_sva *sva;
	u32 pasid;
	struct mm_struct *mm;
	pid_t tgid;
	kuid_t uid;			/* for the per-user channel limit */

	struct mutex mutex;		/* ioctl state: pins, strategy */
	u32 strategy;			/* channel default */
	u32 touch;
	struct pldma_slot_strat *slots;	/* per ring slot, or NULL */
	struct list_head pins;
	unsigned int npins;

	wait_queue_head_t wq;		/* completions, errors */
	wait_queue_head_t fwq;		/* forwarded faults */
	struct eventfd_ctx *efd;	/* under pd->lock */
	atomic_t events;
	u32 poll_seen;

	/*
	 * Report-mode fault service, per channel (pldma_fault_work): the IRQ
	 * thread only queues the work, so one tenant's slow fault never
	 * delays another's.  Every command to the channel and the state below
	 * are under cmd_lock; nothing sleeps on user memory under it.
	 */
	struct work_struct fault_work;
	struct delayed_work watchdog;	/* no progress for ~1 s: CANCEL */
	struct mutex cmd_lock;
	bool closing;			/* release() started: no more commands */
	bool fault_seen;
	bool fault_busy;		/* the current fault is taken, unanswered */
	u32 fault_cnt;			/* device FAULTS counter at that fault */
	u32 token;			/* identifies it; answers must match */
	ktime_t fault_start;
	u64 fault_va;
	u32 prog_completed;		/* position at the last progress */
	u32 prog_desc;
	u32 prog_done;
	u64 prog_va;
	unsigned int refaults;		/* at the same VA, unresolved */
	unsigned int moves;		/* at the same VA, after resolving */
	bool resolved;			/* the last RESTART made it present */
	u64 lost_compl;			/* record VA a CANCEL dropped */

	/* latest fault record of the channel and the forwarded fault */
	spinlock_t flock;
	bool rec_valid;
	struct pldma_fault_rec rec;
	bool uf_pending;
	bool uf_delivered;
	u32 uf_token;
	struct pldma_fault uf;

	u32 hw_last[PLDMA_CNT_NUM];
	struct pldma_counters st;
};

static struct dentry *pldma_dbg_root;
static DEFINE_IDA(pldma_ida);

/*
 * At most nch records are outstanding (a FAULTED channel waits for its
 * answer), so the default never overflows; a small queue (tests) does.
 */
static unsigned int fq_entries = 256;
module_param(fq_entries, uint, 0444);
MODULE_PARM_DESC(fq_entries, "fault queue records (report mode), 2..4096");

static unsigned int user_channels;
module_param(user_channels, uint, 0644);
MODULE_PARM_DESC(user_channels,
		 "channels of one device a user (uid) may hold without CAP_SYS_RESOURCE; 0: half of them, rounded up");

static u32 pldma_rd(struct pldma_dev *pd, u32 off)
{
	return readl(pd->base + off);
}

static void pldma_wr(struct pldma_dev *pd, u32 off, u32 val)
{
	writel(val, pd->base + off);
}

static u32 pldma_ch_rd(struct pldma_ctx *ctx, u32 off)
{
	return readl(ctx->chregs + off);
}

static void pldma_ch_wr(struct pldma_ctx *ctx, u32 off, u32 val)
{
	writel(val, ctx->chregs + off);
}

/* Count an event in the file's and the device's statistics. */
static void pldma_add(struct pldma_ctx *ctx, size_t off, s64 n)
{
	atomic64_add(n, (atomic64_t *)((char *)&ctx->st + off));
	atomic64_add(n, (atomic64_t *)((char *)&ctx->pd->st + off));
}

#define pldma_count(ctx, field, n) \
	pldma_add(ctx, offsetof(struct pldma_counters, field), n)

static void pldma_hist(struct pldma_dev *pd, ktime_t start)
{
	s64 us = ktime_us_delta(ktime_get(), start);
	unsigned int b = us > 0 ? fls64(us) : 0;

	b = min_t(unsigned int, b, PLDMA_HIST_BUCKETS - 1);
	atomic64_inc(&pd->st.hist[b]);
}

/* ------------------------------------------------------------------ */
/* Report-mode faults                                                  */
/* ------------------------------------------------------------------ */

static void pldma_dev_free(struct kref *ref)
{
	struct pldma_dev *pd = container_of(ref, struct pldma_dev, ref);

	put_device(pd->dev);
	kfree(pd);
}

static void pldma_dev_put(struct pldma_dev *pd)
{
	kref_put(&pd->ref, pldma_dev_free);
}

static void pldma_ctx_free(struct kref *ref)
{
	struct pldma_ctx *ctx = container_of(ref, struct pldma_ctx, ref);

	pldma_dev_put(ctx->pd);
	mmdrop(ctx->mm);
	kvfree(ctx->slots);
	kfree(ctx);
}

static void pldma_ctx_put(struct pldma_ctx *ctx)
{
	kref_put(&ctx->ref, pldma_ctx_free);
}

/*
 * Make up to @n pages from @va present in the bound mm.  Returns the number
 * of pages made present (0 if not even the faulting one could be).  Runs in
 * the channel's own work item, never under a lock another channel needs:
 * the fault may wait for a slow filler (userfaultfd, a file system), so it
 * is retryable and killable (fixup_user_fault() with @unlocked), and the
 * last reference to the mm may be ours, hence mmput_async().
 */
static int pldma_fault_in(struct pldma_ctx *ctx, u64 va, bool write,
			  unsigned int n)
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

static bool pldma_va_mapped(struct pldma_ctx *ctx, u64 va)
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

/* Called with ctx->cmd_lock held. */
static void pldma_ch_cmd(struct pldma_ctx *ctx, u32 cmd)
{
	lockdep_assert_held(&ctx->cmd_lock);
	if (pldma_ch_rd(ctx, PLDMA_CH_STATE) != PLDMA_STATE_FAULTED)
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
static bool pldma_answer(struct pldma_ctx *ctx, u32 token, u32 cmd,
			 bool resolved, u32 reason)
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

static void pldma_forward_fault(struct pldma_ctx *ctx,
				struct pldma_fault_rec *f, u32 token)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->flock, flags);
	memset(&ctx->uf, 0, sizeof(ctx->uf));
	ctx->uf.va = f->va;
	ctx->uf.flags = f->flags;
	/*
	 * The driver's token, not the record's sequence number: records
	 * lost to an overflow have none, and a RESOLVE must never match a
	 * later fault.
	 */
	ctx->uf.seq = token;
	ctx->uf.desc = f->desc;
	ctx->uf.done = f->done;
	ctx->uf.len = f->len;
	ctx->uf_token = token;
	ctx->uf_pending = true;
	ctx->uf_delivered = false;
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
			     u32 *strategy, unsigned int *n, u32 *token)
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
	if (*strategy == PLDMA_STRAT_TOUCH &&
	    !(f->flags & (PLDMA_FR_F_DESC | PLDMA_FR_F_COMPL))) {
		*n = touch;
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

static void pldma_serve_fault(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_fault_rec f;
	unsigned int n, refaults;
	u32 strategy, token;
	ktime_t start;
	bool taken;
	int done;

	mutex_lock(&ctx->cmd_lock);
	taken = pldma_take_fault(ctx, &f, &strategy, &n, &token);
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
	done = pldma_fault_in(ctx, f.va, f.flags & PLDMA_FR_F_WRITE, n);
	trace_pldma_fault_in(pd->id, ctx->ch, ctx->pasid, f.va, strategy, n,
			     done, ktime_us_delta(ktime_get(), start));
	if (done > 0) {
		pldma_count(ctx, pages_present, done);
		if (done > 1)
			pldma_count(ctx, touch_pages, done - 1);
		pldma_answer(ctx, token, PLDMA_CMD_RESTART, true, 0);
	} else {
		dev_dbg(pd->dev, "ch%u: cannot resolve fault at %#llx\n",
			ctx->ch, f.va);
		if (pldma_answer(ctx, token, PLDMA_CMD_CANCEL, false,
				 PLDMA_TR_UNRESOLVED))
			pldma_count(ctx, cancel_unresolved, 1);
	}
}

static void pldma_fault_work(struct work_struct *work)
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
 * the caller's timeout.  A late answer finds its token stale.
 */
static void pldma_watchdog(struct work_struct *work)
{
	struct pldma_ctx *ctx = container_of(to_delayed_work(work),
					     struct pldma_ctx, watchdog);
	bool cancelled = false;

	mutex_lock(&ctx->cmd_lock);
	if (!ctx->closing &&
	    pldma_ch_rd(ctx, PLDMA_CH_STATE) == PLDMA_STATE_FAULTED &&
	    pldma_ch_rd(ctx, PLDMA_CH_COMPLETED) == ctx->prog_completed &&
	    pldma_ch_rd(ctx, PLDMA_CH_FAULT_DESC) == ctx->prog_desc &&
	    pldma_ch_rd(ctx, PLDMA_CH_FAULT_DONE) == ctx->prog_done) {
		ctx->fault_busy = false;
		ctx->fault_seen = true;
		ctx->fault_cnt = pldma_ch_rd(ctx, PLDMA_CH_CNT_OFFSET +
					     PLDMA_CNT_FAULTS);
		ctx->token++;
		spin_lock_irq(&ctx->flock);
		ctx->uf_pending = false;
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
		if (queue_work(pd->wq, &ctx->fault_work))
			kref_get(&ctx->ref);
	}
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

static irqreturn_t pldma_irq_thread(int irq, void *data)
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
		if (f.channel < pd->nch)
			pldma_kick_channel(pd, f.channel, &f);
	}
	if (test_and_clear_bit(PLDMA_F_OVERFLOW, &pd->flags)) {
		atomic64_inc(&pd->st.fq_overflows);
		pldma_wr(pd, PLDMA_FQ_STATUS, PLDMA_FQ_STATUS_OVERFLOW |
			 PLDMA_FQ_STATUS_WRITE_ERR);
		pldma_scan_faulted(pd);
	}
	return IRQ_HANDLED;
}

/* data: the vector's pldma_vec; only the fault vector has a thread */
static irqreturn_t pldma_irq(int irq, void *data)
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

	if (status & PLDMA_IRQ_FQ_OVERFLOW)
		set_bit(PLDMA_F_OVERFLOW, &pd->flags);
	if (status & (PLDMA_IRQ_FAULT | PLDMA_IRQ_FQ_OVERFLOW |
		      PLDMA_IRQ_CH_FAULTED))
		return IRQ_WAKE_THREAD;
	return IRQ_HANDLED;
}

/* ------------------------------------------------------------------ */
/* Stall-mode counters: the IOMMU core serves the faults, the device   */
/* counts them.                                                        */
/* ------------------------------------------------------------------ */

static void pldma_sync_hw_counters(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	u32 base = PLDMA_CH_CNT(ctx->ch);
	u32 v, d;

	if (!pd->stall_mode)
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

static void pldma_unpin(struct pldma_ctx *ctx, struct pldma_pin *p)
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
static int pldma_pin_range(struct pldma_ctx *ctx, u64 va, u32 len, bool write,
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
static void pldma_reap_pins(struct pldma_ctx *ctx, bool all)
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

/* ------------------------------------------------------------------ */
/* File operations                                                     */
/* ------------------------------------------------------------------ */

static int pldma_open(struct inode *inode, struct file *file)
{
	struct pldma_dev *pd = container_of(file->private_data,
					    struct pldma_dev, misc);
	unsigned int ch, limit, mine = 0;
	struct pldma_ctx *ctx;
	int ret;

	if (!(pd->cap & PLDMA_CAP_PASID) || !current->mm)
		return -ENODEV;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	down_read(&pd->gone_sem);
	if (pd->gone) {
		up_read(&pd->gone_sem);
		kfree(ctx);
		return -ENODEV;
	}
	kref_get(&pd->ref);
	ctx->pd = pd;
	ctx->mapping = file->f_mapping;
	mutex_init(&ctx->mutex);
	spin_lock_init(&ctx->flock);
	init_waitqueue_head(&ctx->wq);
	init_waitqueue_head(&ctx->fwq);
	INIT_LIST_HEAD(&ctx->pins);
	kref_init(&ctx->ref);
	mutex_init(&ctx->cmd_lock);
	INIT_WORK(&ctx->fault_work, pldma_fault_work);
	INIT_DELAYED_WORK(&ctx->watchdog, pldma_watchdog);
	ctx->strategy = pd->stall_mode ? PLDMA_STRAT_STALL : PLDMA_STRAT_ONE;
	ctx->touch = 16;
	ctx->prog_completed = U32_MAX;

	ctx->mm = current->mm;
	ctx->tgid = task_tgid_nr(current);
	ctx->uid = current_uid();

	/*
	 * Claim a channel first, bind second: an mm keeps its PASID until it
	 * exits, so an open() that would fail with EBUSY must not allocate
	 * one (enough processes failing to open could use up the PASIDs).
	 */
	limit = user_channels ? user_channels : DIV_ROUND_UP(pd->nch, 2);
	if (capable(CAP_SYS_RESOURCE))
		limit = UINT_MAX;
	spin_lock_irq(&pd->lock);
	for (ch = 0; ch < pd->nch; ch++)
		if (pd->chans[ch] && uid_eq(pd->chans[ch]->uid, ctx->uid))
			mine++;
	for (ch = 0; ch < pd->nch; ch++)
		if (!pd->chans[ch])
			break;
	if (ch == pd->nch || mine >= limit) {
		spin_unlock_irq(&pd->lock);
		ret = ch == pd->nch ? -EBUSY : -EDQUOT;
		goto err_free;
	}
	ctx->ch = ch;
	ctx->chregs = pd->base + PLDMA_CH_PAGE_OFFSET(ch);
	pd->chans[ch] = ctx;
	spin_unlock_irq(&pd->lock);

	ctx->sva = iommu_sva_bind_device(pd->dev, current->mm);
	if (IS_ERR(ctx->sva)) {
		ret = PTR_ERR(ctx->sva);
		dev_dbg(pd->dev, "SVA bind failed: %d\n", ret);
		goto err_unclaim;
	}
	ctx->pasid = iommu_sva_get_pasid(ctx->sva);
	if (ctx->pasid == IOMMU_PASID_INVALID ||
	    ctx->pasid >= BIT(PLDMA_CAP_PASID_BITS(pd->cap))) {
		ret = -ENOSPC;
		goto err_unbind;
	}

	pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
	pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL,
		 PLDMA_CHB_CTRL_CLR_CNT);
	pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_PASID,
		 ctx->pasid | PLDMA_CHB_PASID_EN);
	pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_OWNER, ctx->tgid);
	if (pldma_rd(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_PASID) !=
	    (ctx->pasid | PLDMA_CHB_PASID_EN)) {
		dev_warn(pd->dev, "ch%u: PASID %u not accepted\n", ch,
			 ctx->pasid);
		ret = -EIO;
		goto err_unbind;
	}
	pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL,
		 PLDMA_CHB_CTRL_ENABLE);

	mmgrab(ctx->mm);
	trace_pldma_bind(pd->id, ch, ctx->pasid, ctx->tgid);
	dev_dbg(pd->dev, "ch%u: bound to pid %d, PASID %u\n", ch, ctx->tgid,
		ctx->pasid);
	file->private_data = ctx;
	up_read(&pd->gone_sem);
	return nonseekable_open(inode, file);

err_unbind:
	pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_PASID, 0);
	iommu_sva_unbind_device(ctx->sva);
err_unclaim:
	spin_lock_irq(&pd->lock);
	pd->chans[ch] = NULL;
	spin_unlock_irq(&pd->lock);
err_free:
	up_read(&pd->gone_sem);
	pldma_dev_put(pd);
	kfree(ctx);
	return ret;
}

static int pldma_release(struct inode *inode, struct file *file)
{
	struct pldma_ctx *ctx = file->private_data;
	struct pldma_dev *pd = ctx->pd;
	u32 bind = PLDMA_CH_BIND(ctx->ch);
	u32 state;

	down_read(&pd->gone_sem);
	if (ctx->detached) {
		/* pldma_ctx_detach() did the rest when the device went */
		up_read(&pd->gone_sem);
		goto out;
	}
	/*
	 * Quiesce: no command from the fault work, the watchdog or a RESOLVE
	 * after this; the reset abandons the descriptor in progress, a
	 * FAULTED state and any stall the channel waits for (the SMMU's
	 * stall is then answered by the IOPF core or terminated by the
	 * unbind below).  A fault-in still waiting for its filler is not
	 * waited for: it holds its own reference to ctx and to the mm.
	 */
	mutex_lock(&ctx->cmd_lock);
	ctx->closing = true;
	ctx->fault_busy = false;
	pldma_sync_hw_counters(ctx);
	/*
	 * Drain before the PASID goes away (as idxd does and the IOMMU API
	 * requires of iommu_sva_unbind_device()): clearing ENABLE stops the
	 * channel after its current chunk; wait, bounded, until it says
	 * DISABLED, so no DMA with this PASID is in flight at the unbind.
	 */
	pldma_wr(pd, bind + PLDMA_CHB_CTRL, 0);
	if (readl_poll_timeout(pd->base + bind + PLDMA_CHB_STATE, state,
			       state == PLDMA_STATE_DISABLED, 20,
			       PLDMA_DRAIN_US))
		dev_warn(pd->dev, "ch%u: still in state %u after %u us, resetting\n",
			 ctx->ch, state, PLDMA_DRAIN_US);
	pldma_wr(pd, bind + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
	pldma_wr(pd, bind + PLDMA_CHB_PASID, 0);
	pldma_wr(pd, bind + PLDMA_CHB_OWNER, 0);
	spin_lock_irq(&ctx->flock);
	ctx->uf_pending = false;
	spin_unlock_irq(&ctx->flock);
	mutex_unlock(&ctx->cmd_lock);
	cancel_delayed_work_sync(&ctx->watchdog);

	mutex_lock(&ctx->mutex);
	pldma_reap_pins(ctx, true);
	mutex_unlock(&ctx->mutex);

	iommu_sva_unbind_device(ctx->sva);
	trace_pldma_unbind(pd->id, ctx->ch, ctx->pasid, ctx->tgid);

	/* Only now may another process get the channel. */
	spin_lock_irq(&pd->lock);
	pd->chans[ctx->ch] = NULL;
	spin_unlock_irq(&pd->lock);
	up_read(&pd->gone_sem);
out:
	if (ctx->efd)
		eventfd_ctx_put(ctx->efd);

	dev_dbg(pd->dev, "ch%u: released by pid %d\n", ctx->ch, ctx->tgid);
	pldma_ctx_put(ctx);
	return 0;
}

static int pldma_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pldma_ctx *ctx = file->private_data;
	struct pldma_dev *pd = ctx->pd;

	if (current->mm != ctx->mm)
		return -EPERM;
	if (vma->vm_pgoff || vma_pages(vma) != 1 || PAGE_SIZE != PLDMA_PAGE_SIZE)
		return -EINVAL;
	/*
	 * MAP_PRIVATE would turn the first doorbell write into a
	 * copy-on-write page of RAM: the device would never see it.
	 */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* a removed device's page is zapped by pldma_ctx_detach() */
	if (READ_ONCE(ctx->detached))
		return -ENODEV;
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
		     VM_DONTDUMP);
	vm_flags_clear(vma, VM_MAYEXEC);
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	return io_remap_pfn_range(vma, vma->vm_start,
				  (pd->phys + PLDMA_CH_PAGE_OFFSET(ctx->ch)) >>
				  PAGE_SHIFT, PAGE_SIZE, vma->vm_page_prot);
}

static bool pldma_uf_ready(struct pldma_ctx *ctx)
{
	return READ_ONCE(ctx->uf_pending) && !READ_ONCE(ctx->uf_delivered);
}

static __poll_t pldma_poll(struct file *file, poll_table *wait)
{
	struct pldma_ctx *ctx = file->private_data;
	__poll_t mask = 0;
	u32 state;

	poll_wait(file, &ctx->wq, wait);
	poll_wait(file, &ctx->fwq, wait);
	down_read(&ctx->pd->gone_sem);
	if (ctx->detached) {
		up_read(&ctx->pd->gone_sem);
		return EPOLLERR | EPOLLHUP;
	}
	if (pldma_ch_rd(ctx, PLDMA_CH_COMPLETED) != READ_ONCE(ctx->poll_seen))
		mask |= EPOLLIN | EPOLLRDNORM;
	state = pldma_ch_rd(ctx, PLDMA_CH_STATE);
	if (state == PLDMA_STATE_ERROR)
		mask |= EPOLLERR;
	up_read(&ctx->pd->gone_sem);
	if (pldma_uf_ready(ctx))
		mask |= EPOLLPRI;
	return mask;
}

/* read(): a u32, the channel's COMPLETED count; re-arms EPOLLIN. */
static ssize_t pldma_read(struct file *file, char __user *buf, size_t len,
			  loff_t *ppos)
{
	struct pldma_ctx *ctx = file->private_data;
	u32 completed;

	if (len < sizeof(completed))
		return -EINVAL;
	down_read(&ctx->pd->gone_sem);
	if (ctx->detached) {
		up_read(&ctx->pd->gone_sem);
		return -ENODEV;
	}
	completed = pldma_ch_rd(ctx, PLDMA_CH_COMPLETED);
	up_read(&ctx->pd->gone_sem);
	WRITE_ONCE(ctx->poll_seen, completed);
	if (put_user(completed, (u32 __user *)buf))
		return -EFAULT;
	return sizeof(completed);
}

static bool pldma_rsvd_zero(const u32 *r, unsigned int n)
{
	while (n--)
		if (r[n])
			return false;
	return true;
}

static int pldma_check_strategy(struct pldma_ctx *ctx, u32 strategy,
				u32 touch)
{
	bool stall = ctx->pd->stall_mode;

	switch (strategy) {
	case PLDMA_STRAT_PIN:
	case PLDMA_STRAT_PREFAULT:
		break;
	case PLDMA_STRAT_STALL:
		if (!stall)
			return -EOPNOTSUPP;
		break;
	case PLDMA_STRAT_TOUCH:
		if (touch < 1 || touch > PLDMA_TOUCH_MAX)
			return -EINVAL;
		fallthrough;
	case PLDMA_STRAT_ONE:
	case PLDMA_STRAT_USER:
		if (stall)
			return -EOPNOTSUPP;
		break;
	default:
		return -EINVAL;
	}
	if (strategy != PLDMA_STRAT_TOUCH && touch)
		return -EINVAL;
	return 0;
}

static void pldma_set_strategy(struct pldma_ctx *ctx, u32 strategy, u32 touch)
{
	WRITE_ONCE(ctx->touch, touch ? touch : 1);
	WRITE_ONCE(ctx->strategy, strategy);
}

/* Called with ctx->mutex held. */
static int pldma_set_slot_strategy(struct pldma_ctx *ctx, u32 slot,
				   u32 strategy, u32 touch)
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

static long pldma_ioc_strategy(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_strategy s;
	int ret;

	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;
	if (s.flags & ~PLDMA_STRATEGY_SLOT)
		return -EINVAL;
	if (s.flags & PLDMA_STRATEGY_SLOT ? s.slot >= PLDMA_RING_MAX_ENTRIES :
					    s.slot)
		return -EINVAL;
	ret = pldma_check_strategy(ctx, s.strategy, s.touch_ahead);
	if (ret)
		return ret;
	if (!(s.flags & PLDMA_STRATEGY_SLOT)) {
		pldma_set_strategy(ctx, s.strategy, s.touch_ahead);
		return 0;
	}
	mutex_lock(&ctx->mutex);
	ret = pldma_set_slot_strategy(ctx, s.slot, s.strategy, s.touch_ahead);
	mutex_unlock(&ctx->mutex);
	return ret;
}

static long pldma_ioc_submit(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_dev *pd = ctx->pd;
	u8 desc[PLDMA_DESC_SIZE] = { };
	struct pldma_submit s;
	u32 size, head, tail;
	bool pinned = false;
	u64 ring;
	int ret;

	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;
	if (s.rsvd0 || s.rsvd1 || s.index ||
	    !pldma_rsvd_zero(s.rsvd2, ARRAY_SIZE(s.rsvd2)))
		return -EINVAL;
	if (s.opcode != PLDMA_OP_COPY && s.opcode != PLDMA_OP_FILL)
		return -EINVAL;
	if (!s.len || s.len > pd->max_xfer)
		return -EINVAL;
	if (s.compl & 7 || (s.strategy == PLDMA_STRAT_PIN && !s.compl))
		return -EINVAL;
	if (s.opcode == PLDMA_OP_COPY && (!s.src || !access_ok(u64_to_user_ptr(s.src), s.len)))
		return -EFAULT;
	if (!s.dst || !access_ok(u64_to_user_ptr(s.dst), s.len))
		return -EFAULT;
	if (s.compl && !access_ok(u64_to_user_ptr(s.compl), PLDMA_COMPL_SIZE))
		return -EFAULT;
	ret = pldma_check_strategy(ctx, s.strategy, s.touch_ahead);
	if (ret)
		return ret;

	mutex_lock(&ctx->mutex);
	size = pldma_ch_rd(ctx, PLDMA_CH_RING_SIZE);
	ring = pldma_ch_rd(ctx, PLDMA_CH_RING_BASE_LO) |
	       (u64)pldma_ch_rd(ctx, PLDMA_CH_RING_BASE_HI) << 32;
	ret = -ENXIO;	/* ring not set up through the channel page */
	if (size < PLDMA_RING_MIN_ENTRIES || size > PLDMA_RING_MAX_ENTRIES ||
	    !is_power_of_2(size) || !ring || ring & (PLDMA_DESC_SIZE - 1))
		goto out;
	/*
	 * TAIL is written by user space through the channel page and HEAD
	 * comes from the device: bound both before they index anything
	 * (slots[], the ring).  The model keeps them below RING_SIZE; a
	 * driver must not rely on that.
	 */
	head = pldma_ch_rd(ctx, PLDMA_CH_RING_HEAD);
	tail = pldma_ch_rd(ctx, PLDMA_CH_RING_TAIL);
	ret = -EIO;
	if (head >= size || tail >= size)
		goto out;
	ret = -EBUSY;
	if (((tail + 1) & (size - 1)) == head)
		goto out;

	ret = pldma_set_slot_strategy(ctx, tail, s.strategy, s.touch_ahead);
	if (ret)
		goto out;
	if (s.strategy == PLDMA_STRAT_PIN) {
		/*
		 * HEAD before COMPLETED: a descriptor completing in between
		 * makes done_at one too late (safe), never too early.
		 */
		u32 done_at = ((tail - head) & (size - 1)) + 1;

		done_at += pldma_ch_rd(ctx, PLDMA_CH_COMPLETED);
		pldma_reap_pins(ctx, false);
		ret = -EBUSY;
		if (ctx->npins + 2 > PLDMA_MAX_PINS)
			goto out;
		/*
		 * Over RLIMIT_MEMLOCK the submission fails.  A range that
		 * cannot be pinned (not mapped) still runs: the device faults
		 * and the error is reported in the completion record like
		 * with every other strategy.
		 */
		if (s.opcode == PLDMA_OP_COPY) {
			ret = pldma_pin_range(ctx, s.src, s.len, false,
					      done_at);
			if (ret == -ENOMEM)
				goto out;
			pinned = !ret;
		}
		ret = pldma_pin_range(ctx, s.dst, s.len, true, done_at);
		if (ret == -ENOMEM) {
			if (pinned)	/* the source's pin, just added */
				pldma_unpin(ctx, list_last_entry(&ctx->pins,
								 struct pldma_pin,
								 node));
			goto out;
		}
	}

	desc[PLDMA_DESC_OPCODE] = s.opcode;
	desc[PLDMA_DESC_FLAGS] = PLDMA_DF_INTR;
	put_unaligned_le32(s.len, desc + PLDMA_DESC_LEN);
	put_unaligned_le64(s.src, desc + PLDMA_DESC_SRC);
	put_unaligned_le64(s.dst, desc + PLDMA_DESC_DST);
	put_unaligned_le64(s.pattern, desc + PLDMA_DESC_PATTERN);
	put_unaligned_le64(s.compl, desc + PLDMA_DESC_COMPL);
	put_unaligned_le64(s.cookie, desc + PLDMA_DESC_COOKIE);
	ret = -EFAULT;
	if (s.compl && put_user(0, (u32 __user *)u64_to_user_ptr(s.compl)))
		goto out;
	if (copy_to_user(u64_to_user_ptr(ring + (u64)tail * PLDMA_DESC_SIZE),
			 desc, sizeof(desc)))
		goto out;
	/* The descriptor must be visible before the doorbell (writel). */
	pldma_ch_wr(ctx, PLDMA_CH_RING_TAIL, (tail + 1) & (size - 1));
	s.index = tail;
	ret = copy_to_user(arg, &s, sizeof(s)) ? -EFAULT : 0;
out:
	mutex_unlock(&ctx->mutex);
	return ret;
}

static long pldma_ioc_wait(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_wait w;
	long rem;
	int seen;
	u32 st;
	int ret = 0;

	if (copy_from_user(&w, arg, sizeof(w)))
		return -EFAULT;
	if (w.status || !w.compl || w.compl & 7 || !w.timeout_ms ||
	    w.timeout_ms > 60000)
		return -EINVAL;
	rem = msecs_to_jiffies(w.timeout_ms);
	for (;;) {
		seen = atomic_read(&ctx->events);
		if (get_user(st, (u32 __user *)u64_to_user_ptr(w.compl)))
			return -EFAULT;
		if (st)
			break;
		if (READ_ONCE(ctx->lost_compl) == w.compl &&
		    cmpxchg(&ctx->lost_compl, w.compl, 0) == w.compl) {
			ret = -ENODATA;	/* its record was cancelled */
			break;
		}
		down_read(&ctx->pd->gone_sem);
		if (ctx->detached)
			ret = -ENODEV;
		else if (pldma_ch_rd(ctx, PLDMA_CH_STATE) == PLDMA_STATE_ERROR)
			ret = -EIO;
		up_read(&ctx->pd->gone_sem);
		if (ret)
			break;
		rem = wait_event_interruptible_timeout(ctx->wq,
						       atomic_read(&ctx->events) != seen ||
						       READ_ONCE(ctx->detached),
						       rem);
		if (rem < 0)
			return rem;
		if (!rem) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	down_read(&ctx->pd->gone_sem);
	if (!ctx->detached) {
		mutex_lock(&ctx->mutex);
		pldma_reap_pins(ctx, false);
		pldma_sync_hw_counters(ctx);
		mutex_unlock(&ctx->mutex);
	}
	up_read(&ctx->pd->gone_sem);
	if (ret)
		return ret;
	w.status = st;
	return copy_to_user(arg, &w, sizeof(w)) ? -EFAULT : 0;
}

static long pldma_ioc_fault_get(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_fault f;
	long ret;

	if (copy_from_user(&f, arg, sizeof(f)))
		return -EFAULT;
	if (f.timeout_ms > 60000 || !pldma_rsvd_zero(f.rsvd, ARRAY_SIZE(f.rsvd)))
		return -EINVAL;
	if (f.timeout_ms) {
		ret = wait_event_interruptible_timeout(ctx->fwq,
						       pldma_uf_ready(ctx) ||
						       READ_ONCE(ctx->detached),
						       msecs_to_jiffies(f.timeout_ms));
		if (ret < 0)
			return ret;
	}
	spin_lock_irq(&ctx->flock);
	if (!ctx->uf_pending || ctx->uf_delivered) {
		spin_unlock_irq(&ctx->flock);
		return -EAGAIN;
	}
	ctx->uf_delivered = true;
	f = ctx->uf;
	spin_unlock_irq(&ctx->flock);
	return copy_to_user(arg, &f, sizeof(f)) ? -EFAULT : 0;
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
static bool pldma_touch_present(u64 va, bool write)
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

static long pldma_ioc_fault_resolve(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_fault_resolve r;
	bool write, resolved = false;
	u32 cmd, token;
	u64 va;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (!pldma_rsvd_zero(r.rsvd, ARRAY_SIZE(r.rsvd)))
		return -EINVAL;
	if (r.action == PLDMA_RESOLVE_RESTART)
		cmd = PLDMA_CMD_RESTART;
	else if (r.action == PLDMA_RESOLVE_CANCEL)
		cmd = PLDMA_CMD_CANCEL;
	else
		return -EINVAL;

	spin_lock_irq(&ctx->flock);
	if (!ctx->uf_pending || !ctx->uf_delivered || ctx->uf.seq != r.seq) {
		spin_unlock_irq(&ctx->flock);
		return -ENOENT;
	}
	ctx->uf_pending = false;
	token = ctx->uf_token;
	va = ctx->uf.va;
	write = ctx->uf.flags & PLDMA_FR_F_WRITE;
	spin_unlock_irq(&ctx->flock);
	/*
	 * Did the answer make the page present?  (The caller is the owner:
	 * current->mm == ctx->mm.)  If so and the device faults there again,
	 * the memory moved; if not, the resolver made no progress.
	 */
	if (cmd == PLDMA_CMD_RESTART)
		resolved = pldma_touch_present(va, write);
	/*
	 * The MMIO access is made with interrupts enabled: under TCG an
	 * access with interrupts masked can wait for milliseconds.
	 */
	pldma_answer(ctx, token, cmd, resolved,
		     cmd == PLDMA_CMD_CANCEL ? PLDMA_TR_USER : 0);
	return 0;
}

static long pldma_ioc_stats(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_stats s = { };
	unsigned int i;

	mutex_lock(&ctx->mutex);
	pldma_reap_pins(ctx, false);
	pldma_sync_hw_counters(ctx);
	mutex_unlock(&ctx->mutex);
	for (i = 0; i < PLDMA_STRAT_NUM; i++)
		if (i != PLDMA_STRAT_STALL)
			s.faults += atomic64_read(&ctx->st.faults[i]);
	s.stalls = atomic64_read(&ctx->st.stalls);
	s.pages_present = atomic64_read(&ctx->st.pages_present);
	s.touch_pages = atomic64_read(&ctx->st.touch_pages);
	s.restarts = atomic64_read(&ctx->st.restarts);
	s.cancels = atomic64_read(&ctx->st.cancels);
	s.aborts = atomic64_read(&ctx->st.aborts);
	s.user_faults = atomic64_read(&ctx->st.user_faults);
	s.pinned_pages = atomic64_read(&ctx->st.pinned_pages);
	return copy_to_user(arg, &s, sizeof(s)) ? -EFAULT : 0;
}

static long pldma_ioc_eventfd(struct pldma_ctx *ctx, void __user *arg)
{
	struct eventfd_ctx *efd = NULL, *old;
	struct pldma_dev *pd = ctx->pd;
	struct pldma_eventfd e;

	if (copy_from_user(&e, arg, sizeof(e)))
		return -EFAULT;
	if (e.rsvd || e.fd < -1)
		return -EINVAL;
	if (e.fd >= 0) {
		efd = eventfd_ctx_fdget(e.fd);
		if (IS_ERR(efd))
			return PTR_ERR(efd);
	}
	spin_lock_irq(&pd->lock);
	old = ctx->efd;
	ctx->efd = efd;
	spin_unlock_irq(&pd->lock);
	if (old)
		eventfd_ctx_put(old);
	return 0;
}

static long pldma_ioctl_locked(struct pldma_ctx *ctx, unsigned int cmd,
			       void __user *uarg)
{
	struct pldma_dev *pd = ctx->pd;

	switch (cmd) {
	case PLDMA_IOC_VERSION: {
		struct pldma_version v = {
			.uapi_version = PLDMA_UAPI_VERSION,
			.hw_version = pd->version,
		};

		return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
	}
	case PLDMA_IOC_INFO: {
		struct pldma_info i = {
			.hw_version = pd->version,
			.cap = pd->cap,
			.channel = ctx->ch,
			.pasid = ctx->pasid,
			.fault_mode = pd->stall_mode ? PLDMA_MODE_STALL :
						       PLDMA_MODE_REPORT,
			.max_xfer = pd->max_xfer,
			.chunk_size = pd->chunk,
			.mmap_size = PAGE_SIZE,
		};

		return copy_to_user(uarg, &i, sizeof(i)) ? -EFAULT : 0;
	}
	case PLDMA_IOC_SET_STRATEGY:
		return pldma_ioc_strategy(ctx, uarg);
	case PLDMA_IOC_SUBMIT:
		return pldma_ioc_submit(ctx, uarg);
	case PLDMA_IOC_WAIT:
		return pldma_ioc_wait(ctx, uarg);
	case PLDMA_IOC_FAULT_GET:
		return pldma_ioc_fault_get(ctx, uarg);
	case PLDMA_IOC_FAULT_RESOLVE:
		return pldma_ioc_fault_resolve(ctx, uarg);
	case PLDMA_IOC_GET_STATS:
		return pldma_ioc_stats(ctx, uarg);
	case PLDMA_IOC_SET_EVENTFD:
		return pldma_ioc_eventfd(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * Every command but the sleeping ones (WAIT, FAULT_GET: they fence their
 * own register accesses) runs with the device known present.
 */
static long pldma_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pldma_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	if (current->mm != ctx->mm)
		return -EPERM;
	if (cmd == PLDMA_IOC_WAIT)
		return pldma_ioc_wait(ctx, uarg);
	if (cmd == PLDMA_IOC_FAULT_GET)
		return READ_ONCE(ctx->detached) ? -ENODEV :
		       pldma_ioc_fault_get(ctx, uarg);
	down_read(&ctx->pd->gone_sem);
	ret = ctx->detached ? -ENODEV : pldma_ioctl_locked(ctx, cmd, uarg);
	up_read(&ctx->pd->gone_sem);
	return ret;
}

static const struct file_operations pldma_fops = {
	.owner = THIS_MODULE,
	.open = pldma_open,
	.release = pldma_release,
	.mmap = pldma_mmap,
	.poll = pldma_poll,
	.read = pldma_read,
	.unlocked_ioctl = pldma_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* ------------------------------------------------------------------ */
/* debugfs                                                             */
/* ------------------------------------------------------------------ */

static int pldma_stats_show(struct seq_file *m, void *v)
{
	struct pldma_dev *pd = m->private;
	struct pldma_ctx *ctx;
	unsigned int i;

	seq_printf(m, "mode: %s\nchannels: %u\n",
		   pd->stall_mode ? "stall" : "report", pd->nch);
	for (i = 0; i < PLDMA_STRAT_NUM; i++)
		seq_printf(m, "faults_%s: %lld\n", pldma_strat_names[i],
			   atomic64_read(&pd->st.faults[i]));
	seq_printf(m, "stalls: %lld\n", atomic64_read(&pd->st.stalls));
	seq_printf(m, "pages_present: %lld\n",
		   atomic64_read(&pd->st.pages_present));
	seq_printf(m, "touch_ahead_pages: %lld\n",
		   atomic64_read(&pd->st.touch_pages));
	seq_printf(m, "restarts: %lld\n", atomic64_read(&pd->st.restarts));
	seq_printf(m, "cancels: %lld\n", atomic64_read(&pd->st.cancels));
	seq_printf(m, "aborts: %lld\n", atomic64_read(&pd->st.aborts));
	seq_printf(m, "user_faults: %lld\n",
		   atomic64_read(&pd->st.user_faults));
	seq_printf(m, "pinned_pages: %lld\n",
		   atomic64_read(&pd->st.pinned_pages));
	seq_printf(m, "fq_overflows: %lld\n",
		   atomic64_read(&pd->st.fq_overflows));
	seq_printf(m, "channel_errors: %lld\n",
		   atomic64_read(&pd->st.ch_errors));
	seq_printf(m, "cancels_no_progress: %lld\n",
		   atomic64_read(&pd->st.cancel_noprogress));
	seq_printf(m, "cancels_refault_limit: %lld\n",
		   atomic64_read(&pd->st.cancel_refaults));
	seq_printf(m, "cancels_unresolved: %lld\n",
		   atomic64_read(&pd->st.cancel_unresolved));
	seq_printf(m, "refaults_after_move: %lld\n",
		   atomic64_read(&pd->st.moved_refaults));
	seq_printf(m, "completion_records_dropped: %lld\n",
		   atomic64_read(&pd->st.lost_records));
	seq_printf(m, "stalled_channels: %#x\n",
		   pldma_rd(pd, PLDMA_STALLED_CHANNELS));
	seq_printf(m, "faulted_channels: %#x\n",
		   pldma_rd(pd, PLDMA_FAULTED_CHANNELS));
	seq_printf(m, "error_channels: %#x\n",
		   pldma_rd(pd, PLDMA_ERROR_CHANNELS));
	seq_puts(m, "fault_service_us_histogram:\n");
	for (i = 0; i < PLDMA_HIST_BUCKETS; i++)
		seq_printf(m, "  < %7lu: %lld\n", 1UL << i,
			   atomic64_read(&pd->st.hist[i]));
	seq_puts(m, "bound:\n");
	spin_lock_irq(&pd->lock);
	for (i = 0; i < pd->nch; i++) {
		ctx = pd->chans[i];
		if (ctx)
			seq_printf(m, "  ch%u pid %d pasid %u strategy %s\n",
				   i, ctx->tgid, ctx->pasid,
				   pldma_strat_names[ctx->strategy]);
	}
	spin_unlock_irq(&pd->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pldma_stats);

/* ------------------------------------------------------------------ */
/* Probe and teardown, shared by both buses                            */
/* ------------------------------------------------------------------ */

static void pldma_destroy_wq(void *data)
{
	struct pldma_dev *pd = data;

	/* waits for fault work still serving files released earlier */
	destroy_workqueue(pd->wq);
}

static void pldma_quiesce(void *data)
{
	struct pldma_dev *pd = data;

	pldma_wr(pd, PLDMA_IRQ_MASK, 0);
	pldma_wr(pd, PLDMA_FQ_CTRL, 0);
	pldma_wr(pd, PLDMA_CTRL, PLDMA_CTRL_RESET);
}

/*
 * The device goes (PCI hot-unplug) while @ctx holds a channel: stop the
 * channel, zap the process's mapping of the channel page (a later access
 * is SIGBUS), unpin, unbind, and wake every sleeper; from now on each
 * file operation fails with ENODEV and release() only frees.
 */
static void pldma_ctx_detach(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	u32 bind = PLDMA_CH_BIND(ctx->ch);
	u32 state;

	mutex_lock(&ctx->cmd_lock);
	ctx->closing = true;
	ctx->fault_busy = false;
	pldma_wr(pd, bind + PLDMA_CHB_CTRL, 0);
	readl_poll_timeout(pd->base + bind + PLDMA_CHB_STATE, state,
			   state == PLDMA_STATE_DISABLED, 20, PLDMA_DRAIN_US);
	pldma_wr(pd, bind + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
	pldma_wr(pd, bind + PLDMA_CHB_PASID, 0);
	spin_lock_irq(&ctx->flock);
	ctx->uf_pending = false;
	spin_unlock_irq(&ctx->flock);
	WRITE_ONCE(ctx->detached, true);
	mutex_unlock(&ctx->cmd_lock);
	cancel_delayed_work_sync(&ctx->watchdog);
	unmap_mapping_range(ctx->mapping, 0, 0, 1);

	mutex_lock(&ctx->mutex);
	pldma_reap_pins(ctx, true);
	mutex_unlock(&ctx->mutex);
	iommu_sva_unbind_device(ctx->sva);
	trace_pldma_unbind(pd->id, ctx->ch, ctx->pasid, ctx->tgid);

	spin_lock_irq(&pd->lock);
	pd->chans[ctx->ch] = NULL;
	if (ctx->efd)
		eventfd_signal(ctx->efd);
	spin_unlock_irq(&pd->lock);
	wake_up_interruptible_all(&ctx->wq);
	wake_up_interruptible_all(&ctx->fwq);
	dev_info(pd->dev, "ch%u: device removed while held by pid %d\n",
		 ctx->ch, ctx->tgid);
}

static void pldma_unregister(void *data)
{
	struct pldma_dev *pd = data;
	struct pldma_ctx *ctx;
	unsigned int ch;

	if (pd->unregistered)
		return;
	pd->unregistered = true;
	debugfs_remove_recursive(pd->dbg);
	misc_deregister(&pd->misc);
	ida_free(&pldma_ida, pd->id);

	/* no open(), release() or fenced file operation runs meanwhile */
	down_write(&pd->gone_sem);
	pd->gone = true;
	for (ch = 0; ch < pd->nch; ch++) {
		spin_lock_irq(&pd->lock);
		ctx = pd->chans[ch];
		if (ctx)
			kref_get(&ctx->ref);
		spin_unlock_irq(&pd->lock);
		if (ctx) {
			pldma_ctx_detach(ctx);
			pldma_ctx_put(ctx);
		}
	}
	up_write(&pd->gone_sem);
}

#if PLDMA_HAVE_IOMMU_DEV_FEAT
static void pldma_disable_features(void *data)
{
	struct pldma_dev *pd = data;

	iommu_dev_disable_feature(pd->dev, IOMMU_DEV_FEAT_SVA);
	if (pd->stall_mode)
		iommu_dev_disable_feature(pd->dev, IOMMU_DEV_FEAT_IOPF);
}

static int pldma_enable_sva(struct pldma_dev *pd)
{
	struct device *dev = pd->dev;
	int ret;

	if (pd->stall_mode) {
		ret = iommu_dev_enable_feature(dev, IOMMU_DEV_FEAT_IOPF);
		if (ret)
			return dev_err_probe(dev, ret, "cannot enable IOPF\n");
	}
	ret = iommu_dev_enable_feature(dev, IOMMU_DEV_FEAT_SVA);
	if (ret) {
		if (pd->stall_mode)
			iommu_dev_disable_feature(dev, IOMMU_DEV_FEAT_IOPF);
		return dev_err_probe(dev, ret, "cannot enable SVA\n");
	}
	return devm_add_action_or_reset(dev, pldma_disable_features, pd);
}
#else
/*
 * Since 6.16 there are no IOMMU_DEV_FEAT_* features: the IOMMU driver
 * enables what SVA needs when an SVA domain is attached (arm-smmu-v3
 * enables IOPF itself for a stall-capable master, refcounted), and a
 * driver only calls iommu_sva_bind_device().  A device the IOMMU cannot
 * do SVA for fails there, at open(), instead of at probe.
 */
static int pldma_enable_sva(struct pldma_dev *pd)
{
	return 0;
}
#endif

static void pldma_dev_put_action(void *data)
{
	pldma_dev_put(data);
}

/* The device's state, freed when the device and every open file are gone. */
static struct pldma_dev *pldma_dev_alloc(struct device *dev)
{
	struct pldma_dev *pd;

	pd = kzalloc(sizeof(*pd), GFP_KERNEL);
	if (!pd)
		return NULL;
	kref_init(&pd->ref);
	init_rwsem(&pd->gone_sem);
	spin_lock_init(&pd->lock);
	pd->dev = get_device(dev);
	if (devm_add_action_or_reset(dev, pldma_dev_put_action, pd))
		return NULL;
	return pd;
}

/*
 * Bus-independent part of probe, with pd->dev, pd->base and pd->phys set
 * by the glue (@size: the register window).  Leaves the interrupts masked;
 * the glue requests its vectors, then calls pldma_register().
 */
static int pldma_core_probe(struct pldma_dev *pd, resource_size_t size)
{
	struct device *dev = pd->dev;
	u32 nch, mask;
	int ret;

	if (pldma_rd(pd, PLDMA_ID) != PLDMA_ID_VALUE)
		return dev_err_probe(dev, -ENODEV, "bad ID register\n");
	pd->version = pldma_rd(pd, PLDMA_VERSION);
	if (pd->version >> 16 != PLDMA_VERSION_MAJOR)
		return dev_err_probe(dev, -ENODEV, "unsupported version %#x\n",
				     pd->version);
	pd->cap = pldma_rd(pd, PLDMA_CAP);
	nch = min_t(u32, PLDMA_CAP_NUM_CH(pd->cap), PLDMA_MAX_CHANNELS);
	nch = min_t(u32, nch, size / PLDMA_PAGE_SIZE - 1);
	if (!nch)
		return dev_err_probe(dev, -ENODEV, "no channels\n");
	pd->nch = nch;
	pd->stall_mode = pd->cap & PLDMA_CAP_FAULT_STALL;
	pd->max_xfer = pldma_rd(pd, PLDMA_MAX_XFER);
	pd->chunk = pldma_rd(pd, PLDMA_CHUNK_SIZE);

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	/* Unbound and without a max_active limit: channels fault in parallel. */
	pd->wq = alloc_workqueue("pldma_fault/%s", WQ_UNBOUND, 0,
				 dev_name(dev));
	if (!pd->wq)
		return -ENOMEM;
	ret = devm_add_action_or_reset(dev, pldma_destroy_wq, pd);
	if (ret)
		return ret;

	pldma_wr(pd, PLDMA_IRQ_MASK, 0);
	pldma_wr(pd, PLDMA_CTRL, PLDMA_CTRL_RESET);
	ret = devm_add_action_or_reset(dev, pldma_quiesce, pd);
	if (ret)
		return ret;

	if (pd->cap & PLDMA_CAP_PASID) {
		ret = pldma_enable_sva(pd);
		if (ret)
			return ret;
	} else {
		dev_warn(dev, "no IOMMU: user channels unavailable\n");
	}

	if (!pd->stall_mode) {
		pd->fq_entries = roundup_pow_of_two(clamp(fq_entries,
							  PLDMA_FQ_MIN_ENTRIES,
							  PLDMA_FQ_MAX_ENTRIES));
		pd->fq = dmam_alloc_coherent(dev, pd->fq_entries *
					     PLDMA_FR_SIZE, &pd->fq_dma,
					     GFP_KERNEL);
		if (!pd->fq)
			return -ENOMEM;
		pldma_wr(pd, PLDMA_FQ_CTRL, 0);
		pldma_wr(pd, PLDMA_FQ_BASE_LO, lower_32_bits(pd->fq_dma));
		pldma_wr(pd, PLDMA_FQ_BASE_HI, upper_32_bits(pd->fq_dma));
		pldma_wr(pd, PLDMA_FQ_SIZE, pd->fq_entries);
		pldma_wr(pd, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
		pd->fq_head = 0;
	}

	mask = (u32)(BIT(nch) - 1) | PLDMA_IRQ_CH_ERROR;
	if (pd->fq)
		mask |= PLDMA_IRQ_FAULT | PLDMA_IRQ_FQ_OVERFLOW;
	pd->irq_mask = mask;
	return 0;
}

/* Unmask the interrupts, create /dev/pldmaN and the debugfs directory. */
static int pldma_register(struct pldma_dev *pd, const char *bus)
{
	struct device *dev = pd->dev;
	int ret;

	pldma_wr(pd, PLDMA_IRQ_MASK, pd->irq_mask);

	pd->id = ida_alloc(&pldma_ida, GFP_KERNEL);
	if (pd->id < 0)
		return pd->id;
	snprintf(pd->name, sizeof(pd->name), "pldma%d", pd->id);
	pd->misc.minor = MISC_DYNAMIC_MINOR;
	pd->misc.name = pd->name;
	pd->misc.fops = &pldma_fops;
	pd->misc.parent = dev;
	/* access is granted by group (udev), see README */
	pd->misc.mode = 0660;
	ret = misc_register(&pd->misc);
	if (ret) {
		ida_free(&pldma_ida, pd->id);
		return ret;
	}
	pd->dbg = debugfs_create_dir(pd->name, pldma_dbg_root);
	debugfs_create_file("stats", 0444, pd->dbg, pd, &pldma_stats_fops);
	ret = devm_add_action_or_reset(dev, pldma_unregister, pd);
	if (ret)
		return ret;

	dev_info(dev, "%s: v%u.%u, %u channels, %s mode, %s, stream %#x\n",
		 pd->name, pd->version >> 16, pd->version & 0xffff, pd->nch,
		 pd->stall_mode ? "stall" : "report", bus,
		 pldma_rd(pd, PLDMA_STREAM_ID));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Platform glue                                                       */
/* ------------------------------------------------------------------ */

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

static const struct of_device_id pldma_of_match[] = {
	{ .compatible = PLDMA_DT_COMPATIBLE },
	{ }
};
MODULE_DEVICE_TABLE(of, pldma_of_match);

static struct platform_driver pldma_platform_driver = {
	.probe = pldma_platform_probe,
	.driver = {
		.name = "pldma",
		.of_match_table = pldma_of_match,
		/* open files reference the device: no manual unbind */
		.suppress_bind_attrs = true,
	},
};

/* ------------------------------------------------------------------ */
/* PCI glue                                                            */
/* ------------------------------------------------------------------ */

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
	unsigned int nvec = PLDMA_PCI_NUM_VECS(hwnch);
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
	return pldma_pci_request_irq(pd, PLDMA_PCI_VEC_ERROR(hwnch),
				     PLDMA_IRQ_CH_ERROR, false, 0, "error");
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

static struct pci_driver pldma_pci_driver = {
	.name = "pldma-pci",
	.id_table = pldma_pci_ids,
	.probe = pldma_pci_probe,
	.remove = pldma_pci_remove,
	/* as for the platform device; hot-unplug detaches open files */
	.driver.suppress_bind_attrs = true,
};

/* ------------------------------------------------------------------ */
/* Module                                                              */
/* ------------------------------------------------------------------ */

static int __init pldma_init(void)
{
	int ret;

	pldma_dbg_root = debugfs_create_dir("pldma", NULL);
	ret = platform_driver_register(&pldma_platform_driver);
	if (ret)
		goto err_dbg;
	ret = pci_register_driver(&pldma_pci_driver);
	if (ret)
		goto err_platform;
	return 0;

err_platform:
	platform_driver_unregister(&pldma_platform_driver);
err_dbg:
	debugfs_remove(pldma_dbg_root);
	return ret;
}
module_init(pldma_init);

static void __exit pldma_exit(void)
{
	pci_unregister_driver(&pldma_pci_driver);
	platform_driver_unregister(&pldma_platform_driver);
	debugfs_remove(pldma_dbg_root);
}
module_exit(pldma_exit);

MODULE_DESCRIPTION("PLDMA page-fault-tolerant virtual-address DMA engine");
MODULE_AUTHOR("The PLDMA authors");
MODULE_LICENSE("GPL");
