// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: remote DMA, the guest side of the device's key table.  An open
 * file registers windows of its address space for remote RDMA WRITE and
 * READ (PLDMA_IOC_REG_MR): the driver commits (PASID, VA, length, access)
 * to a free key through the privileged page and returns the rkey.  Nothing
 * is pinned: a responder access to a missing page is a responder fault,
 * served by the key's work item (below) with the owner's strategy.  The
 * keys belong to the file: DEREG_MR revokes one at once, release() (process
 * exit) and the device's removal revoke them all.  A file holds at most
 * PLDMA_MAX_MRS keys and a user at most user_keys (half the table by
 * default), so that one user cannot lock everyone else out.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "pldma_drv.h"
#include "pldma_trace.h"

static unsigned int user_keys;
module_param(user_keys, uint, 0644);
MODULE_PARM_DESC(user_keys,
		 "remote windows (keys) of one device a user (uid) may hold without CAP_SYS_RESOURCE; 0: half of them, rounded up");

void pldma_remote_init(struct pldma_dev *pd)
{
	unsigned int i;

	mutex_init(&pd->key_mutex);
	for (i = 0; i < PLDMA_NUM_KEYS; i++) {
		pd->keys[i].pd = pd;
		pd->keys[i].idx = i;
		INIT_WORK(&pd->keys[i].work, pldma_key_fault_work);
	}
	if (!(pd->cap & PLDMA_CAP_REMOTE))
		return;
	pd->node_id = pldma_rd(pd, PLDMA_NET_NODE);
	pd->mtu = pldma_rd(pd, PLDMA_NET_MTU);
	if (pd->node_id >= PLDMA_NET_MAX_NODES || !pd->mtu) {
		dev_warn(pd->dev, "bad node-id %u or MTU %u: no remote DMA\n",
			 pd->node_id, pd->mtu);
		pd->node_id = 0;
	}
}

/* The KEY_* register sequences: pd->key_mutex held, the device present. */
static void pldma_key_cmd(struct pldma_dev *pd, u32 idx, u32 cmd)
{
	lockdep_assert_held(&pd->key_mutex);
	pldma_wr(pd, PLDMA_KEY_SEL, idx);
	pldma_wr(pd, PLDMA_KEY_CMD, cmd);
}

static int pldma_key_commit(struct pldma_ctx *ctx, struct pldma_key *k)
{
	struct pldma_dev *pd = ctx->pd;
	u32 st, rkey;

	lockdep_assert_held(&pd->key_mutex);
	pldma_wr(pd, PLDMA_KEY_SEL, k->idx);
	pldma_wr(pd, PLDMA_KEY_PASID, ctx->pasid | PLDMA_CHB_PASID_EN);
	pldma_wr(pd, PLDMA_KEY_PD, k->pd_tag);
	pldma_wr(pd, PLDMA_KEY_VA_LO, lower_32_bits(k->va));
	pldma_wr(pd, PLDMA_KEY_VA_HI, upper_32_bits(k->va));
	pldma_wr(pd, PLDMA_KEY_LEN_LO, lower_32_bits(k->len));
	pldma_wr(pd, PLDMA_KEY_LEN_HI, upper_32_bits(k->len));
	pldma_wr(pd, PLDMA_KEY_ACCESS, k->access);
	pldma_wr(pd, PLDMA_KEY_CMD, PLDMA_KEY_CMD_REGISTER);
	st = pldma_rd(pd, PLDMA_KEY_STATUS);
	rkey = pldma_rd(pd, PLDMA_KEY_RKEY);
	if (st != PLDMA_KEY_ST_OK || !rkey || PLDMA_RKEY_INDEX(rkey) != k->idx) {
		dev_dbg(pd->dev, "key %u: status %u rkey %#x\n", k->idx, st,
			rkey);
		if (rkey)
			pldma_key_cmd(pd, k->idx, PLDMA_KEY_CMD_REVOKE);
		return st == PLDMA_KEY_ST_BAD_RANGE ||
		       st == PLDMA_KEY_ST_BAD_ACCESS ? -EINVAL : -EIO;
	}
	k->rkey = rkey;
	return 0;
}

/*
 * Revoke key @k of @ctx, pd->key_mutex held: at once in the device (a
 * request that arrives later is NAKed; a responder fault being served for
 * it ends with an error), then free the entry.  A fault work item still
 * running for it finds the entry changed and does not answer.
 */
static void pldma_key_revoke(struct pldma_ctx *ctx, struct pldma_key *k,
			     u32 reason)
{
	struct pldma_dev *pd = ctx->pd;

	lockdep_assert_held(&pd->key_mutex);
	if (!pd->gone)
		pldma_key_cmd(pd, k->idx, PLDMA_KEY_CMD_REVOKE);
	trace_pldma_mr_dereg(pd->id, ctx->pasid, k->rkey, k->va, k->len,
			     reason);
	spin_lock_irq(&pd->lock);
	k->ctx = NULL;
	k->rec_valid = false;
	/*
	 * The REVOKE ended the key's fault: a forwarded one no longer holds
	 * the file's slot (an answer to it finds no fault, -ENOENT).  Under
	 * pd->lock, so that pldma_forward_remote() either forwarded before
	 * or sees the key gone.
	 */
	spin_lock(&ctx->flock);
	if (ctx->fwd[PLDMA_FWD_REMOTE].pending &&
	    ctx->fwd[PLDMA_FWD_REMOTE].key == k)
		ctx->fwd[PLDMA_FWD_REMOTE].pending = false;
	spin_unlock(&ctx->flock);
	spin_unlock_irq(&pd->lock);
	ctx->nmrs--;
}

/*
 * Keys held by @uid, pd->key_mutex held.  A key's file lives while the key
 * does: release() revokes them under the mutex.
 */
static unsigned int pldma_user_keys(struct pldma_dev *pd, kuid_t uid)
{
	unsigned int i, n = 0;

	lockdep_assert_held(&pd->key_mutex);
	for (i = 0; i < PLDMA_NUM_KEYS; i++)
		if (pd->keys[i].ctx && uid_eq(pd->keys[i].ctx->uid, uid))
			n++;
	return n;
}

/* Strategy of a window's responder faults: validated, or the file's. */
static int pldma_mr_strategy(struct pldma_ctx *ctx,
			     const struct pldma_reg_mr *r, struct pldma_key *k)
{
	bool stall = ctx->pd->stall_mode;
	int ret;

	if (!(r->flags & PLDMA_MR_STRATEGY)) {
		if (r->strategy || r->touch_ahead)
			return -EINVAL;
		k->strategy = READ_ONCE(ctx->strategy);
		k->touch = READ_ONCE(ctx->touch);
		if (stall)
			k->strategy = PLDMA_STRAT_STALL;
		else if (k->strategy != PLDMA_STRAT_TOUCH)
			k->strategy = PLDMA_STRAT_ONE;
		return 0;
	}
	ret = pldma_check_strategy(ctx, r->strategy, r->touch_ahead);
	if (ret)
		return ret;
	/* (the user strategy forwards the responder's faults to the owner) */
	if (!pldma_strategy_for_mr(r->strategy))
		return -EINVAL;
	k->strategy = r->strategy;
	k->touch = r->touch_ahead ? r->touch_ahead : 1;
	return 0;
}

/*
 * Register the window @r of @ctx's address space (@r->rkey out), every
 * value checked.  The ioctl and the ib_device's reg_mr (ib_mr.c) both
 * come here, with the device known present.
 */
int pldma_mr_register(struct pldma_ctx *ctx, struct pldma_reg_mr *rp,
		      u16 pd_tag)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_key tmp = { }, *k = NULL;
	struct pldma_reg_mr r = *rp;
	unsigned int i, limit;
	int ret;

	if (r.rsvd[0] || r.rsvd[1] || r.rsvd[2] || r.flags & ~PLDMA_MR_STRATEGY)
		return -EINVAL;
	if (!pd->node_id)
		return -EOPNOTSUPP;
	if (!r.access || r.access & ~(PLDMA_MR_ACCESS_WRITE |
				      PLDMA_MR_ACCESS_READ |
				      PLDMA_MR_ACCESS_ATOMIC |
				      PLDMA_MR_ACCESS_FLUSH))
		return -EINVAL;
	if (r.access & PLDMA_MR_ACCESS_ATOMIC && !(pd->cap & PLDMA_CAP_ATOMIC))
		return -EOPNOTSUPP;
	if (!r.len || r.va + r.len < r.va)
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(r.va), r.len))
		return -EFAULT;
	ret = pldma_mr_strategy(ctx, &r, &tmp);
	if (ret)
		return ret;

	/*
	 * Per file and per user: one user's files cannot take every key, as
	 * they cannot take every channel (user_channels)
	 */
	limit = user_keys ? user_keys : DIV_ROUND_UP(PLDMA_NUM_KEYS, 2);
	if (capable(CAP_SYS_RESOURCE))
		limit = UINT_MAX;
	mutex_lock(&pd->key_mutex);
	ret = -EDQUOT;
	if (ctx->nmrs >= PLDMA_MAX_MRS ||
	    pldma_user_keys(pd, ctx->uid) >= limit)
		goto out;
	for (i = 0; i < PLDMA_NUM_KEYS; i++) {
		if (!pd->keys[i].ctx) {
			k = &pd->keys[i];
			break;
		}
	}
	ret = -ENOSPC;
	if (!k)
		goto out;
	/* a work item of the entry's last owner only reads it under pd->lock */
	spin_lock_irq(&pd->lock);
	k->va = r.va;
	k->len = r.len;
	k->access = (r.access & PLDMA_MR_ACCESS_WRITE ? PLDMA_KEY_ACC_WRITE : 0) |
		    (r.access & PLDMA_MR_ACCESS_READ ? PLDMA_KEY_ACC_READ : 0) |
		    (r.access & PLDMA_MR_ACCESS_ATOMIC ?
		     PLDMA_KEY_ACC_ATOMIC : 0) |
		    (r.access & PLDMA_MR_ACCESS_FLUSH ? PLDMA_KEY_ACC_FLUSH : 0);
	k->pd_tag = pd_tag;
	k->strategy = tmp.strategy;
	k->touch = tmp.touch;
	k->rec_valid = false;
	spin_unlock_irq(&pd->lock);
	ret = pldma_key_commit(ctx, k);
	if (ret)
		goto out;
	spin_lock_irq(&pd->lock);
	k->ctx = ctx;
	spin_unlock_irq(&pd->lock);
	ctx->nmrs++;
	atomic64_inc(&pd->st.mrs);
	rp->rkey = k->rkey;
	trace_pldma_mr_reg(pd->id, ctx->pasid, ctx->tgid, k->rkey, k->va,
			   k->len, k->access, k->strategy, k->touch);
out:
	mutex_unlock(&pd->key_mutex);
	return ret;
}

/* Revoke key @rkey of @ctx: only the context that registered it. */
int pldma_mr_deregister(struct pldma_ctx *ctx, u32 rkey)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_key *k;
	int ret = -ENOENT;

	if (PLDMA_RKEY_INDEX(rkey) >= PLDMA_NUM_KEYS)
		return -ENOENT;
	k = &pd->keys[PLDMA_RKEY_INDEX(rkey)];
	mutex_lock(&pd->key_mutex);
	if (k->ctx == ctx && k->rkey == rkey) {
		pldma_key_revoke(ctx, k, PLDMA_KR_USER);
		ret = 0;
	}
	mutex_unlock(&pd->key_mutex);
	return ret;
}

/* Called with the device known present (pd->gone_sem held). */
long pldma_ioc_reg_mr(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_reg_mr r;
	int ret;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	/* for the QPs of the file's PD (its PASID), as a verbs MR's */
	ret = pldma_mr_register(ctx, &r, 0);	/* the file: one PD */
	if (ret)
		return ret;
	if (copy_to_user(arg, &r, sizeof(r))) {
		pldma_mr_deregister(ctx, r.rkey);
		return -EFAULT;
	}
	return 0;
}

long pldma_ioc_dereg_mr(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_dereg_mr d;

	if (copy_from_user(&d, arg, sizeof(d)))
		return -EFAULT;
	if (d.rsvd)
		return -EINVAL;
	return pldma_mr_deregister(ctx, d.rkey);
}

/* release() and the device's removal: before the PASID goes away. */
void pldma_revoke_all(struct pldma_ctx *ctx, u32 reason)
{
	struct pldma_dev *pd = ctx->pd;
	unsigned int i;

	mutex_lock(&pd->key_mutex);
	for (i = 0; i < PLDMA_NUM_KEYS && ctx->nmrs; i++)
		if (pd->keys[i].ctx == ctx)
			pldma_key_revoke(ctx, &pd->keys[i], reason);
	mutex_unlock(&pd->key_mutex);
}

/*
 * Answer the responder fault of @k (as registered with @rkey): RESOLVED
 * lets the requester resend, FAILED ends its message with an error.  Not
 * if the key was revoked meanwhile: that ended the fault already.  The
 * caller holds pd->gone_sem (the ioctl path does, for the whole ioctl:
 * taking it again for read could deadlock behind a waiting remover).
 */
void __pldma_key_answer(struct pldma_key *k, u32 rkey, bool resolved)
{
	struct pldma_dev *pd = k->pd;

	lockdep_assert_held(&pd->gone_sem);
	mutex_lock(&pd->key_mutex);
	if (!pd->gone && k->ctx && k->rkey == rkey)
		pldma_key_cmd(pd, k->idx, resolved ? PLDMA_KEY_CMD_RESOLVED :
						     PLDMA_KEY_CMD_FAILED);
	mutex_unlock(&pd->key_mutex);
}

/* pldma_key_answer() for callers that do not hold pd->gone_sem */
void pldma_key_answer(struct pldma_key *k, u32 rkey, bool resolved)
{
	struct pldma_dev *pd = k->pd;

	down_read(&pd->gone_sem);
	__pldma_key_answer(k, rkey, resolved);
	up_read(&pd->gone_sem);
}

/*
 * After a fault queue overflow, responder fault records may be lost: say
 * RESOLVED on every key, so that no requester waits for an answer that
 * never comes.  A key without a fault ignores it; one whose page is still
 * missing faults again and posts a new record.
 */
void pldma_keys_resync(struct pldma_dev *pd)
{
	unsigned int i;

	down_read(&pd->gone_sem);
	mutex_lock(&pd->key_mutex);
	for (i = 0; i < PLDMA_NUM_KEYS && !pd->gone; i++)
		if (pd->keys[i].ctx)
			pldma_key_cmd(pd, i, PLDMA_KEY_CMD_RESOLVED);
	mutex_unlock(&pd->key_mutex);
	up_read(&pd->gone_sem);
}

long pldma_ioc_net_stats(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_net_stats s = { };
	unsigned int i;

	if (!pd->node_id)
		return -EOPNOTSUPP;
	s.node_id = pd->node_id;
	s.num = PLDMA_NCNT_NUM;
	BUILD_BUG_ON(PLDMA_NCNT_NUM > PLDMA_NET_COUNTERS);
	for (i = 0; i < PLDMA_NCNT_NUM; i++)
		s.cnt[i] = pldma_rd(pd, PLDMA_NET_CNT(i));
	return copy_to_user(arg, &s, sizeof(s)) ? -EFAULT : 0;
}

/* ------------------------------------------------------------------ */
/* Responder faults (remote DMA, report mode)                         */
/* ------------------------------------------------------------------ */

/*
 * Forward a responder fault to the window's owner (strategy user, the
 * thesis's fault library and EDM's path): it makes the page present and
 * answers with RESOLVE, which becomes KEY_CMD_RESOLVED (or FAILED) on the
 * key.  The file has one slot for them: while it is taken, the driver
 * resolves the fault itself (false).  A forwarded fault nobody answers
 * holds its key only (not the connection), and the requester gets RNR
 * NAKs until its QP's RNR retry count ends the message (REMOTE_RNR) or the
 * device's bound (PLDMA_RESP_FAULT_TIMEOUT_MS) ends the fault as FAILED;
 * revoking the key (DEREG_MR, release()) ends the fault and frees the
 * slot (pldma_key_revoke()).
 */
static bool pldma_forward_remote(struct pldma_ctx *ctx, struct pldma_key *k,
				 const struct pldma_fault_rec *f)
{
	struct pldma_dev *pd = ctx->pd;
	u32 seq;

	/* not for a key revoked since: its REVOKE ended the fault */
	spin_lock_irq(&pd->lock);
	spin_lock(&ctx->flock);
	if (ctx->fwd[PLDMA_FWD_REMOTE].pending || ctx->closing ||
	    k->ctx != ctx || k->rkey != f->desc) {
		spin_unlock(&ctx->flock);
		spin_unlock_irq(&pd->lock);
		return false;
	}
	seq = PLDMA_RUF_SEQ | ++ctx->ruf_seq;
	pldma_fwd_post(ctx, PLDMA_FWD_REMOTE, f, seq);
	ctx->fwd[PLDMA_FWD_REMOTE].key = k;
	ctx->fwd[PLDMA_FWD_REMOTE].rkey = f->desc;
	spin_unlock(&ctx->flock);
	spin_unlock_irq(&pd->lock);
	pldma_count(ctx, user_faults, 1);
	trace_pldma_forward(ctx->pd->id, ctx->ch, ctx->pasid, f->va, seq, 0);
	wake_up_interruptible(&ctx->fwq);
	return true;
}

/*
 * An incoming RDMA WRITE or READ missed a page of key @k's window: the
 * device NAKed the segment (RNR) and posted a record (PLDMA_FR_F_REMOTE,
 * DESC = rkey, DONE/LEN = offset and length of the message).  Make the page
 * present in the owner's mm with the window's strategy, as for a local
 * fault (pldma_fault_in(): one page, or a touch-ahead window, here clamped
 * to the key's range and to the rest of the message), then answer
 * KEY_CMD_RESOLVED, or KEY_CMD_FAILED when not even the faulting page can
 * be made present: the requester never waits for an answer that does not
 * come.  One work item per key, so one owner's slow filler never delays
 * another's.
 */
void pldma_key_fault_work(struct work_struct *work)
{
	struct pldma_key *k = container_of(work, struct pldma_key, work);
	struct pldma_dev *pd = k->pd;
	struct pldma_ctx *ctx = NULL;
	struct pldma_fault_rec f;
	u64 kva = 0, klen = 0, left;
	u32 strategy = 0, touch = 1;
	unsigned int n = 1;
	ktime_t start;
	int done = 0;

	spin_lock_irq(&pd->lock);
	if (!k->rec_valid) {
		spin_unlock_irq(&pd->lock);
		return;
	}
	f = k->rec;
	k->rec_valid = false;
	if (k->ctx && k->rkey == f.desc &&
	    f.pasid == (k->ctx->pasid | PLDMA_CHB_PASID_EN)) {
		ctx = k->ctx;
		kref_get(&ctx->ref);
		kva = k->va;
		klen = k->len;
		strategy = k->strategy;
		touch = k->touch;
	}
	spin_unlock_irq(&pd->lock);
	if (!ctx) {
		/* revoked since, which ended the fault: a stale record */
		atomic64_inc(&pd->st.remote_stale);
		return;
	}

	start = ktime_get();
	pldma_count(ctx, remote_faults, 1);
	if (strategy == PLDMA_STRAT_USER && f.va >= kva && f.va - kva < klen &&
	    pldma_va_mapped(ctx, f.va) && pldma_forward_remote(ctx, k, &f)) {
		/* the owner answers with RESOLVE (pldma_ioc_fault_resolve) */
		pldma_ctx_put(ctx);
		return;
	}
	/* the device checked the range; a driver does not rely on it */
	if (f.va >= kva && f.va - kva < klen) {
		if (strategy == PLDMA_STRAT_TOUCH) {
			left = kva + klen - f.va;
			if (f.len > f.done)
				left = min_t(u64, left, f.len - f.done);
			n = min_t(u64, touch,
				  DIV_ROUND_UP(offset_in_page(f.va) + left,
					       PAGE_SIZE));
		}
		trace_pldma_remote_fault(pd->id, ctx->pasid, f.desc, f.va,
					 f.flags, f.done, f.len, strategy, n);
		done = pldma_fault_in(ctx, f.va, f.flags & PLDMA_FR_F_WRITE, n);
	}
	if (done > 0) {
		pldma_count(ctx, remote_pages, done);
	} else {
		dev_dbg(pd->dev, "key %#x: cannot resolve fault at %#llx\n",
			f.desc, f.va);
		pldma_count(ctx, remote_failed, 1);
	}
	pldma_key_answer(k, f.desc, done > 0);
	trace_pldma_remote_resolved(pd->id, ctx->pasid, f.desc, f.va, n, done,
				    ktime_us_delta(ktime_get(), start));
	pldma_hist(pd, start);
	pldma_ctx_put(ctx);
}
