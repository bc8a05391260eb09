// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: /dev/pldmaN, the user-space side.  One open file holds one
 * channel bound to the caller's mm (SVA); mmap() gives the channel page;
 * the ioctls of uapi/pldma.h submit, wait, set strategies and answer
 * forwarded faults.  A file detached by the device's removal fails every
 * operation with ENODEV.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/capability.h>
#include <linux/eventfd.h>
#include <linux/iommu.h>
#include <linux/iopoll.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>

#include "pldma_drv.h"
#include "pldma_trace.h"

static unsigned int user_channels;
module_param(user_channels, uint, 0644);
MODULE_PARM_DESC(user_channels,
		 "channels of one device a user (uid) may hold without CAP_SYS_RESOURCE; 0: half of them, rounded up");

static void pldma_ctx_free(struct kref *ref)
{
	struct pldma_ctx *ctx = container_of(ref, struct pldma_ctx, ref);

	pldma_dev_put(ctx->pd);
	mmdrop(ctx->mm);
	kvfree(ctx->slots);
	kfree(ctx);
}

void pldma_ctx_put(struct pldma_ctx *ctx)
{
	kref_put(&ctx->ref, pldma_ctx_free);
}

/* ------------------------------------------------------------------ */
/* File operations                                                    */
/* ------------------------------------------------------------------ */

/*
 * A context of the calling process, nothing claimed or bound yet; with
 * @pd->gone_sem held and the device present.
 */
static struct pldma_ctx *pldma_ctx_alloc(struct pldma_dev *pd,
					 struct address_space *mapping)
{
	struct pldma_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return NULL;
	kref_get(&pd->ref);
	ctx->pd = pd;
	ctx->ch = PLDMA_CH_NONE;
	ctx->mapping = mapping;
	mutex_init(&ctx->mutex);
	mutex_init(&ctx->claim_lock);
	spin_lock_init(&ctx->flock);
	init_waitqueue_head(&ctx->wq);
	init_waitqueue_head(&ctx->fwq);
	INIT_LIST_HEAD(&ctx->pins);
	kref_init(&ctx->ref);
	mutex_init(&ctx->cmd_lock);
	INIT_WORK(&ctx->fault_work, pldma_fault_work);
	INIT_DELAYED_WORK(&ctx->watchdog, pd->stall_mode ?
			  pldma_stall_watchdog : pldma_watchdog);
	ctx->strategy = pd->stall_mode ? PLDMA_STRAT_STALL : PLDMA_STRAT_ONE;
	ctx->touch = 16;
	ctx->prog_completed = U32_MAX;

	ctx->mm = current->mm;
	ctx->tgid = task_tgid_nr(current);
	ctx->uid = current_uid();
	return ctx;
}

/* Undo pldma_ctx_alloc() of a context never bound */
static void pldma_ctx_free_unbound(struct pldma_ctx *ctx)
{
	pldma_dev_put(ctx->pd);
	kfree(ctx);
}

/*
 * Claim a free channel for @ctx within the per-user limit (EBUSY: none
 * free, EDQUOT: the uid holds its share); the channel is not programmed.
 */
static int pldma_ch_claim(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	unsigned int ch, limit, mine = 0;

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
		return ch == pd->nch ? -EBUSY : -EDQUOT;
	}
	ctx->ch = ch;
	ctx->chregs = pd->base + PLDMA_CH_PAGE_OFFSET(ch);
	pd->chans[ch] = ctx;
	spin_unlock_irq(&pd->lock);
	return 0;
}

static void pldma_ch_unclaim(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;

	spin_lock_irq(&pd->lock);
	pd->chans[ctx->ch] = NULL;
	spin_unlock_irq(&pd->lock);
	ctx->ch = PLDMA_CH_NONE;
	ctx->chregs = NULL;
}

/* Bind the process's mm to the device (SVA): ctx->pasid */
static int pldma_ctx_bind(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	int ret;

	ctx->sva = iommu_sva_bind_device(pd->dev, ctx->mm);
	if (IS_ERR(ctx->sva)) {
		ret = PTR_ERR(ctx->sva);
		/*
		 * Linux 6.12.y (stable) refuses every SVA bind on x86 with
		 * EOPNOTSUPP: the IOMMU could keep walking freed kernel
		 * page tables.  Say so once, not only through errno.
		 */
		if (ret == -EOPNOTSUPP && IS_ENABLED(CONFIG_X86))
			dev_warn_once(pd->dev,
				      "SVA is not available: this kernel refuses it on x86 (Linux 6.12.y does; 7.1 has it)\n");
		else
			dev_dbg(pd->dev, "SVA bind failed: %d\n", ret);
		return ret;
	}
	ctx->pasid = iommu_sva_get_pasid(ctx->sva);
	if (ctx->pasid == IOMMU_PASID_INVALID ||
	    ctx->pasid >= BIT(PLDMA_CAP_PASID_BITS(pd->cap))) {
		iommu_sva_unbind_device(ctx->sva);
		return -ENOSPC;
	}
	mmgrab(ctx->mm);
	return 0;
}

/*
 * Give @ctx's claimed channel the context's PASID and owner, and enable
 * it; on failure the channel is left without a PASID, still claimed.
 */
static int pldma_ch_enable(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	unsigned int ch = ctx->ch;

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
		pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_PASID, 0);
		pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_OWNER, 0);
		return -EIO;
	}
	pldma_wr(pd, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL,
		 PLDMA_CHB_CTRL_ENABLE);

	/* bounded time in stall mode; cancelled by pldma_ctx_unbind() */
	if (pd->stall_mode)
		queue_delayed_work(pd->wq, &ctx->watchdog,
				   msecs_to_jiffies(PLDMA_STALL_CHECK_MS));
	trace_pldma_bind(pd->id, ch, ctx->pasid, ctx->tgid);
	dev_dbg(pd->dev, "ch%u: bound to pid %d, PASID %u\n", ch, ctx->tgid,
		ctx->pasid);
	return 0;
}

/*
 * A channel context of the calling process: a channel claimed, the mm
 * bound (SVA), the channel enabled with the PASID.  An open file is one
 * (@mapping: the file's, to zap its mappings at removal).  With @claim
 * false (a ucontext of the ib_device, ib_main.c; @mapping NULL, ib_core
 * zaps), only the mm is bound: pldma_ctx_claim() gives it a channel when
 * it needs one, so that a context costs no channel until it has a QP.
 */
struct pldma_ctx *pldma_ctx_open(struct pldma_dev *pd,
				 struct address_space *mapping, bool claim)
{
	struct pldma_ctx *ctx;
	int ret;

	if (!(pd->cap & PLDMA_CAP_PASID) || !current->mm)
		return ERR_PTR(-ENODEV);

	down_read(&pd->gone_sem);
	if (pd->gone) {
		ret = -ENODEV;
		goto err_up;
	}
	ctx = pldma_ctx_alloc(pd, mapping);
	if (!ctx) {
		ret = -ENOMEM;
		goto err_up;
	}
	/*
	 * Claim a channel first, bind second: an mm keeps its PASID until it
	 * exits, so an open() that would fail with EBUSY must not allocate
	 * one (enough processes failing to open could use up the PASIDs).
	 */
	if (claim) {
		ret = pldma_ch_claim(ctx);
		if (ret)
			goto err_free;
	}
	ret = pldma_ctx_bind(ctx);
	if (ret)
		goto err_unclaim;
	if (claim) {
		ret = pldma_ch_enable(ctx);
		if (ret)
			goto err_unbind;
	}
	up_read(&pd->gone_sem);
	return ctx;

err_unbind:
	iommu_sva_unbind_device(ctx->sva);
	mmdrop(ctx->mm);
err_unclaim:
	if (claim)
		pldma_ch_unclaim(ctx);
err_free:
	pldma_ctx_free_unbound(ctx);
err_up:
	up_read(&pd->gone_sem);
	return ERR_PTR(ret);
}

/*
 * Give @ctx, a context opened without a channel, its channel now (a
 * ucontext's first QP, or the first mmap() of its channel page).  Once
 * claimed the channel stays the context's until pldma_ctx_close().  0 when
 * it has one.  From ib_core's verbs only, which run while the ib_device is
 * registered, before pldma_unregister() marks the device gone; mmap() calls
 * it under mmap_lock, so nothing here may take that (or pd->gone_sem).
 */
int pldma_ctx_claim(struct pldma_ctx *ctx)
{
	int ret = 0;

	mutex_lock(&ctx->claim_lock);
	if (READ_ONCE(ctx->detached) || ctx->closing) {
		ret = -ENODEV;
		goto out;
	}
	if (pldma_ctx_has_ch(ctx))
		goto out;
	ret = pldma_ch_claim(ctx);
	if (ret)
		goto out;
	ret = pldma_ch_enable(ctx);
	if (ret)
		pldma_ch_unclaim(ctx);
out:
	mutex_unlock(&ctx->claim_lock);
	return ret;
}

static int pldma_open(struct inode *inode, struct file *file)
{
	struct pldma_dev *pd = container_of(file->private_data,
					    struct pldma_dev, misc);
	struct pldma_ctx *ctx;

	ctx = pldma_ctx_open(pd, file->f_mapping, true);
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	file->private_data = ctx;
	return nonseekable_open(inode, file);
}

/*
 * Stop @ctx's channel for good, with its command lock held: no command
 * from the fault work, the watchdog or a RESOLVE after this.  Drain before
 * the PASID goes away (as idxd does and the IOMMU API requires of
 * iommu_sva_unbind_device()): clearing ENABLE stops the channel after its
 * current chunk; wait, bounded, until it says DISABLED, so no DMA with this
 * PASID is in flight at the unbind.  The reset then abandons the descriptor
 * in progress, a FAULTED state and any stall the channel waits for.
 * Returns false when the channel did not say DISABLED in time (*@state).
 */
static bool pldma_ctx_stop(struct pldma_ctx *ctx, u32 *state)
{
	struct pldma_dev *pd = ctx->pd;
	u32 bind = PLDMA_CH_BIND(ctx->ch);
	int ret;

	lockdep_assert_held(&ctx->cmd_lock);
	ctx->closing = true;
	ctx->fault_busy = false;
	pldma_wr(pd, bind + PLDMA_CHB_CTRL, 0);
	ret = readl_poll_timeout(pd->base + bind + PLDMA_CHB_STATE, *state,
				 *state == PLDMA_STATE_DISABLED, 20,
				 PLDMA_DRAIN_US);
	pldma_wr(pd, bind + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
	pldma_wr(pd, bind + PLDMA_CHB_PASID, 0);
	spin_lock_irq(&ctx->flock);
	/* release() revokes the keys */
	ctx->fwd[PLDMA_FWD_LOCAL].pending = false;
	ctx->fwd[PLDMA_FWD_REMOTE].pending = false;
	spin_unlock_irq(&ctx->flock);
	return !ret;
}

/*
 * After pldma_ctx_stop(): unpin and unbind SVA (which lets the IOPF core
 * answer stalls still queued in the SMMU).  The channel is still claimed.
 * The watchdog (in stall mode a self-rearming check) sees closing and
 * stops; cancel_delayed_work_sync() waits for a run in progress.
 *
 * In stall mode this waits for every IOPF worker of the SMMU, including
 * one still blocked in a filler that does not answer, whose stall the
 * no-progress check cancelled on the device: release() of such a channel,
 * or of any other stall-mode channel behind that SMMU, returns once the
 * filler answers or fails (e.g. its FUSE server dies).  The process that
 * owns the fault is stuck before that anyway: the worker holds its
 * mmap_lock, and munmap() of the channel page needs it.
 */
static void pldma_ctx_unbind(struct pldma_ctx *ctx)
{
	cancel_delayed_work_sync(&ctx->watchdog);
	mutex_lock(&ctx->mutex);
	pldma_reap_pins(ctx, true);
	mutex_unlock(&ctx->mutex);
	/*
	 * Stall mode: let the IOPF workers finish with this PASID's faults
	 * before the unbind.  Since 6.16 the unbind of the last SVA domain
	 * takes the device out of the IOPF queue, which frees the fault groups
	 * still pending under a worker that is answering them (7.1: an oops in
	 * iopf_queue_remove_device() when a process was killed with stalls in
	 * flight).  The channel is quiet, so no new fault comes in.
	 */
	if (ctx->pd->stall_mode)
		iopf_queue_flush_dev(ctx->pd->dev);
	iommu_sva_unbind_device(ctx->sva);
	trace_pldma_unbind(ctx->pd->id, ctx->ch, ctx->pasid, ctx->tgid);
}

/* The end of pldma_ctx_open()'s context: its objects, channel, bond. */
void pldma_ctx_close(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	u32 state;

	down_read(&pd->gone_sem);
	if (ctx->detached) {
		/* pldma_ctx_detach() did the rest when the device went */
		up_read(&pd->gone_sem);
		goto out;
	}
	/*
	 * Quiesce (the SMMU's stall is then answered by the IOPF core or
	 * terminated by the unbind below).  A fault-in still waiting for its
	 * filler is not waited for: it holds its own reference to ctx and to
	 * the mm.
	 */
	/*
	 * The QP and the keys first: no remote access through this PASID
	 * any more, no request of the QP's peer served
	 */
	pldma_qp_release(ctx);
	pldma_srq_release(ctx);
	pldma_cq_release(ctx);
	pldma_revoke_all(ctx, PLDMA_KR_RELEASE);
	mutex_lock(&ctx->cmd_lock);
	if (pldma_ctx_has_ch(ctx)) {
		pldma_sync_hw_counters(ctx);
		if (!pldma_ctx_stop(ctx, &state))
			dev_warn(pd->dev, "ch%u: still in state %u after %u us, reset\n",
				 ctx->ch, state, PLDMA_DRAIN_US);
		pldma_wr(pd, PLDMA_CH_BIND(ctx->ch) + PLDMA_CHB_OWNER, 0);
	} else {
		/* a ucontext that never had a QP: only its mm is bound */
		ctx->closing = true;
	}
	mutex_unlock(&ctx->cmd_lock);
	pldma_ctx_unbind(ctx);

	/* Only now may another process get the channel. */
	if (pldma_ctx_has_ch(ctx)) {
		spin_lock_irq(&pd->lock);
		pd->chans[ctx->ch] = NULL;
		spin_unlock_irq(&pd->lock);
	}
	up_read(&pd->gone_sem);
out:
	if (ctx->efd)
		eventfd_ctx_put(ctx->efd);

	dev_dbg(pd->dev, "ch%u: released by pid %d\n", ctx->ch, ctx->tgid);
	pldma_ctx_put(ctx);
}

static int pldma_release(struct inode *inode, struct file *file)
{
	pldma_ctx_close(file->private_data);
	return 0;
}

static int pldma_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pldma_ctx *ctx = file->private_data;
	struct pldma_dev *pd = ctx->pd;

	if (current->mm != ctx->mm)
		return -EPERM;
	if (PAGE_SIZE != PLDMA_PAGE_SIZE)
		return -EINVAL;
	/*
	 * MAP_PRIVATE would turn the first doorbell write into a
	 * copy-on-write page of RAM: the device would never see it (and a
	 * private copy of a ring is no ring).
	 */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* a removed device's page is zapped by pldma_ctx_detach() */
	if (READ_ONCE(ctx->detached))
		return -ENODEV;
	/* the rings of the file's CQs and RQ (cq.c) */
	if (vma->vm_pgoff)
		return pldma_ring_mmap(ctx, vma);
	if (vma_pages(vma) != 1)
		return -EINVAL;
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
		     VM_DONTDUMP);
	vm_flags_clear(vma, VM_MAYEXEC);
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	return io_remap_pfn_range(vma, vma->vm_start,
				  (pd->phys + PLDMA_CH_PAGE_OFFSET(ctx->ch)) >>
				  PAGE_SHIFT, PAGE_SIZE, vma->vm_page_prot);
}

static bool pldma_fwd_ready(struct pldma_ctx *ctx)
{
	int i;

	for (i = 0; i < PLDMA_FWD_KINDS; i++)
		if (READ_ONCE(ctx->fwd[i].pending) &&
		    !READ_ONCE(ctx->fwd[i].delivered))
			return true;
	return false;
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
	if (pldma_fwd_ready(ctx))
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
	int i;

	if (copy_from_user(&f, arg, sizeof(f)))
		return -EFAULT;
	if (f.timeout_ms > 60000 || !pldma_rsvd_zero(f.rsvd, ARRAY_SIZE(f.rsvd)))
		return -EINVAL;
	if (f.timeout_ms) {
		ret = wait_event_interruptible_timeout(ctx->fwq,
						       pldma_fwd_ready(ctx) ||
						       READ_ONCE(ctx->detached),
						       msecs_to_jiffies(f.timeout_ms));
		if (ret < 0)
			return ret;
	}
	/*
	 * The channel's own fault first; a responder fault has flags
	 * PLDMA_FR_F_REMOTE and desc = rkey
	 */
	spin_lock_irq(&ctx->flock);
	for (i = 0; i < PLDMA_FWD_KINDS; i++) {
		struct pldma_fwd *w = &ctx->fwd[i];

		if (w->pending && !w->delivered) {
			w->delivered = true;
			f = w->f;
			break;
		}
	}
	spin_unlock_irq(&ctx->flock);
	if (i == PLDMA_FWD_KINDS)
		return -EAGAIN;
	return copy_to_user(arg, &f, sizeof(f)) ? -EFAULT : 0;
}

/*
 * The owner's answer to a forwarded responder fault: RESTART when it made
 * the page present (checked, as for a local fault), CANCEL when it cannot;
 * the key's fault ends RESOLVED or FAILED, and the requester resends or
 * completes REMOTE_ERROR.
 */
/*
 * The answer to the fault delivered in slot @kind as @seq: the slot is
 * free again and a copy of it in @w.  False if no such fault waits (never
 * delivered, answered already, or its cause went away).
 */
static bool pldma_fwd_claim(struct pldma_ctx *ctx, enum pldma_fwd_kind kind,
			    u32 seq, struct pldma_fwd *w)
{
	struct pldma_fwd *s = &ctx->fwd[kind];
	bool ok;

	spin_lock_irq(&ctx->flock);
	ok = s->pending && s->delivered && s->f.seq == seq;
	if (ok) {
		s->pending = false;
		*w = *s;
	}
	spin_unlock_irq(&ctx->flock);
	return ok;
}

static long pldma_resolve_remote(struct pldma_ctx *ctx,
				 const struct pldma_fault_resolve *r)
{
	struct pldma_fwd w;
	struct pldma_key *k;
	bool write, resolved = false;
	u32 rkey;
	u64 va;

	if (!pldma_fwd_claim(ctx, PLDMA_FWD_REMOTE, r->seq, &w))
		return -ENOENT;
	k = w.key;
	rkey = w.rkey;
	va = w.f.va;
	write = w.f.flags & PLDMA_FR_F_WRITE;
	if (r->action == PLDMA_RESOLVE_RESTART)
		resolved = pldma_touch_present(va, write);
	if (resolved)
		pldma_count(ctx, remote_pages, 1);
	else
		pldma_count(ctx, remote_failed, 1);
	/*
	 * a key revoked or reused since ignores it (generation in rkey); the
	 * ioctl holds pd->gone_sem
	 */
	__pldma_key_answer(k, rkey, resolved);
	trace_pldma_remote_resolved(ctx->pd->id, ctx->pasid, rkey, va, 1,
				    resolved, 0);
	return 0;
}

static long pldma_ioc_fault_resolve(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_fwd w;
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

	if (r.seq & PLDMA_RUF_SEQ)
		return pldma_resolve_remote(ctx, &r);
	if (!pldma_fwd_claim(ctx, PLDMA_FWD_LOCAL, r.seq, &w))
		return -ENOENT;
	token = w.token;
	va = w.f.va;
	write = w.f.flags & PLDMA_FR_F_WRITE;
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
	s.batch_pages = atomic64_read(&ctx->st.batch_pages);
	s.restarts = atomic64_read(&ctx->st.restarts);
	s.cancels = atomic64_read(&ctx->st.cancels);
	s.aborts = atomic64_read(&ctx->st.aborts);
	s.user_faults = atomic64_read(&ctx->st.user_faults);
	s.pinned_pages = atomic64_read(&ctx->st.pinned_pages);
	s.remote_faults = atomic64_read(&ctx->st.remote_faults);
	s.remote_pages = atomic64_read(&ctx->st.remote_pages);
	s.remote_failed = atomic64_read(&ctx->st.remote_failed);
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
			.node_id = pd->node_id,
			.mtu = pd->node_id ? pd->mtu : 0,
			.max_mrs = pd->node_id ? PLDMA_MAX_MRS : 0,
			.ip = pd->num_qps ? pd->ip : 0,
			.num_qps = pd->num_qps,
			.num_cqs = pd->num_cqs,
		};

		if (pd->num_qps)
			memcpy(i.mac, pd->mac, sizeof(i.mac));

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
	case PLDMA_IOC_REG_MR:
		return pldma_ioc_reg_mr(ctx, uarg);
	case PLDMA_IOC_DEREG_MR:
		return pldma_ioc_dereg_mr(ctx, uarg);
	case PLDMA_IOC_NET_STATS:
		return pldma_ioc_net_stats(ctx, uarg);
	case PLDMA_IOC_QP_CREATE:
		return pldma_ioc_qp_create(ctx, uarg);
	case PLDMA_IOC_QP_MODIFY:
		return pldma_ioc_qp_modify(ctx, uarg);
	case PLDMA_IOC_QP_QUERY:
		return pldma_ioc_qp_query(ctx, uarg);
	case PLDMA_IOC_QP_DESTROY:
		return pldma_ioc_qp_destroy(ctx, uarg);
	case PLDMA_IOC_CQ_CREATE:
		return pldma_ioc_cq_create(ctx, uarg);
	case PLDMA_IOC_CQ_DESTROY:
		return pldma_ioc_cq_destroy(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * Every command but the sleeping ones (WAIT, CQ_WAIT, FAULT_GET: they fence their
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
	if (cmd == PLDMA_IOC_CQ_WAIT)
		return pldma_ioc_cq_wait(ctx, uarg);
	if (cmd == PLDMA_IOC_FAULT_GET)
		return READ_ONCE(ctx->detached) ? -ENODEV :
		       pldma_ioc_fault_get(ctx, uarg);
	down_read(&ctx->pd->gone_sem);
	ret = ctx->detached ? -ENODEV : pldma_ioctl_locked(ctx, cmd, uarg);
	up_read(&ctx->pd->gone_sem);
	return ret;
}

const struct file_operations pldma_fops = {
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
/* Device removal                                                     */
/* ------------------------------------------------------------------ */

/*
 * The device goes (PCI hot-unplug) while @ctx holds a channel: stop the
 * channel, zap the process's mapping of the channel page (a later access
 * is SIGBUS), unpin, unbind, and wake every sleeper; from now on each
 * file operation fails with ENODEV and release() only frees.
 */
void pldma_ctx_detach(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;
	u32 state;

	pldma_qp_release(ctx);
	pldma_revoke_all(ctx, PLDMA_KR_DETACH);
	mutex_lock(&ctx->cmd_lock);
	pldma_ctx_stop(ctx, &state);
	WRITE_ONCE(ctx->detached, true);
	mutex_unlock(&ctx->cmd_lock);
	if (ctx->mapping)
		unmap_mapping_range(ctx->mapping, 0, 0, 1);
	/* the rings' mappings are gone: devres frees their memory */
	pldma_srq_release(ctx);
	pldma_cq_release(ctx);
	pldma_ctx_unbind(ctx);

	spin_lock_irq(&pd->lock);
	pd->chans[ctx->ch] = NULL;
	if (ctx->efd)
		eventfd_signal(ctx->efd);
	spin_unlock_irq(&pd->lock);
	wake_up_interruptible_all(&ctx->wq);
	wake_up_interruptible_all(&ctx->fwq);
	pldma_cq_wake_all(ctx);
	dev_info(pd->dev, "ch%u: device removed while held by pid %d\n",
		 ctx->ch, ctx->tgid);
}
