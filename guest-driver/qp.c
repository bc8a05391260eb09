// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: RC queue pairs (PLDMA_CAP_QP), the guest side.  An open file
 * creates at most one QP: the file's channel becomes the QP's send queue
 * and the file's PASID its protection domain, both set by the driver at
 * RESET->INIT and never chosen by the user.  The owner moves the QP
 * through INIT, RTR and RTS with verbs' attributes and mask; the driver
 * checks every value, stages it in the QP_* registers of the global page
 * under pd->key_mutex (as the keys are staged) and says what the device
 * answered.  Only the creating file can modify, query or destroy its QP;
 * destroy and release() move it to RESET, which ends its connection (the
 * device gives it a new QPN, so frames of the old one never match).
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/dma-mapping.h>
#include <linux/uaccess.h>

#include "pldma_drv.h"
#include "pldma_trace.h"

/* What the owner may set: PD and SQ are the driver's */
#define PLDMA_QPA_USER	(PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS |	\
			 PLDMA_QPA_AV | PLDMA_QPA_PATH_MTU |		\
			 PLDMA_QPA_TIMEOUT | PLDMA_QPA_RETRY_CNT |	\
			 PLDMA_QPA_RNR_RETRY | PLDMA_QPA_RQ_PSN |	\
			 PLDMA_QPA_MIN_RNR_TIMER | PLDMA_QPA_SQ_PSN |	\
			 PLDMA_QPA_DEST_QPN | PLDMA_QPA_MAX_QP_RD_ATOMIC)
#define PLDMA_QPS_NAME(st, name) \
	[st] = name,
static const char * const pldma_qps_names[] = {
	PLDMA_QPS_NAMES(PLDMA_QPS_NAME)
};

#undef PLDMA_QPS_NAME

const char *pldma_qp_state_name(u32 state)
{
	if (state >= ARRAY_SIZE(pldma_qps_names) || !pldma_qps_names[state])
		return "?";
	return pldma_qps_names[state];
}

/* "rc", "uc" or "ud": a QP's transport (PLDMA_QP_TYPE_*) */
const char *pldma_qp_type_name(u32 type)
{
	switch (type) {
	case PLDMA_QP_TYPE_RC:
		return "rc";
	case PLDMA_QP_TYPE_UC:
		return "uc";
	case PLDMA_QP_TYPE_UD:
		return "ud";
	default:
		return "?";
	}
}

static u32 pldma_mac_lo(const u8 *mac)
{
	return mac[0] | mac[1] << 8 | mac[2] << 16 | (u32)mac[3] << 24;
}

static u32 pldma_mac_hi(const u8 *mac)
{
	return mac[4] | mac[5] << 8;
}

static void pldma_mac_set(u8 *mac, u32 lo, u32 hi)
{
	mac[0] = lo;
	mac[1] = lo >> 8;
	mac[2] = lo >> 16;
	mac[3] = lo >> 24;
	mac[4] = hi;
	mac[5] = hi >> 8;
}

/* At probe, after the device's reset (every QP in RESET) */
void pldma_qp_init(struct pldma_dev *pd)
{
	unsigned int i;

	for (i = 0; i < PLDMA_MAX_QPS; i++) {
		pd->qps[i].pd = pd;
		pd->qps[i].idx = i;
		pd->qps[i].send_cq = PLDMA_CQ_NONE;
		pd->qps[i].recv_cq = PLDMA_CQ_NONE;
		pd->qps[i].srq = PLDMA_SRQ_NONE;
	}
	pd->num_qps = 0;
	if (!(pd->cap & PLDMA_CAP_QP) || !pd->node_id)
		return;
	pd->num_qps = min_t(u32, pldma_rd(pd, PLDMA_QP_NUM), PLDMA_MAX_QPS);
	pd->ip = pldma_rd(pd, PLDMA_NET_IP);
	pldma_mac_set(pd->mac, pldma_rd(pd, PLDMA_NET_MAC_LO),
		      pldma_rd(pd, PLDMA_NET_MAC_HI));
	dev_info(pd->dev, "%u queue pairs, IP %pI4h, MAC %pM\n", pd->num_qps,
		 &pd->ip, pd->mac);
}

/* The file's QP by @qpn, pd->key_mutex held; NULL: not the file's */
static struct pldma_qp *pldma_qp_find(struct pldma_ctx *ctx, u32 qpn)
{
	struct pldma_qp *qp = ctx->qp;

	lockdep_assert_held(&ctx->pd->key_mutex);
	return qp && qp->ctx == ctx && qp->qpn == qpn ? qp : NULL;
}

static int pldma_qp_status_errno(u32 st)
{
	switch (st) {
	case PLDMA_QP_ST_OK:
		return 0;
	case PLDMA_QP_ST_BAD_STATE:
	case PLDMA_QP_ST_BAD_ATTR:
		return -EINVAL;
	case PLDMA_QP_ST_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

/*
 * At RESET->INIT: stage what the driver sets, QP_SEL selected (SQ, PD, the
 * RQ or SRQ, the CQs, the transport); the mask bits that name them
 */
static u32 pldma_qp_stage_init(struct pldma_ctx *ctx, struct pldma_qp *qp)
{
	struct pldma_dev *pd = ctx->pd;
	u32 mask = PLDMA_QPA_PD | PLDMA_QPA_SQ;

	pldma_wr(pd, PLDMA_QP_SQ, ctx->ch);
	pldma_wr(pd, PLDMA_QP_PD, ctx->pasid | PLDMA_CHB_PASID_EN);
	pldma_wr(pd, PLDMA_QP_PD_TAG, qp->pd_tag);
	/* and the RQ and the CQs (CAP.CQ), which are the driver's too */
	if (pd->num_cqs) {
		mask |= PLDMA_QPA_CQ;
		pldma_wr(pd, PLDMA_QP_SEND_CQ, qp->send_cq);
		pldma_wr(pd, PLDMA_QP_RECV_CQ, qp->recv_cq);
	}
	if (qp->rq) {
		mask |= PLDMA_QPA_RQ;
		pldma_wr(pd, PLDMA_QP_RQ_BASE_LO, lower_32_bits(qp->rq_dma));
		pldma_wr(pd, PLDMA_QP_RQ_BASE_HI, upper_32_bits(qp->rq_dma));
		pldma_wr(pd, PLDMA_QP_RQ_SIZE, qp->rq_entries);
	}
	/* or the SRQ it receives from, in place of an RQ */
	if (qp->srq != PLDMA_SRQ_NONE) {
		mask |= PLDMA_QPA_SRQ;
		pldma_wr(pd, PLDMA_QP_SRQ, qp->srq);
	}
	/* and its transport, when it is not RC (CAP.UC, CAP.UD) */
	if (qp->type != PLDMA_QP_TYPE_RC) {
		mask |= PLDMA_QPA_TYPE;
		pldma_wr(pd, PLDMA_QP_TYPE, qp->type);
	}
	return mask;
}

/*
 * Stage the attributes of @a that @mask names and MODIFY, pd->key_mutex
 * held and the device present.  @mask was checked (pldma_qp_check).
 */
static int pldma_qp_modify_hw(struct pldma_ctx *ctx, struct pldma_qp *qp,
			      u32 mask, const struct pldma_qp_attr *a)
{
	struct pldma_dev *pd = ctx->pd;
	u32 cur, st;

	lockdep_assert_held(&pd->key_mutex);
	pldma_wr(pd, PLDMA_QP_SEL, qp->idx);
	cur = pldma_rd(pd, PLDMA_QP_STATE);
	/* the SQ and the PD are set by the driver, when the QP leaves RESET */
	if (cur == PLDMA_QPS_RESET && mask & PLDMA_QPA_STATE &&
	    a->qp_state == PLDMA_QPS_INIT)
		mask |= pldma_qp_stage_init(ctx, qp);
	pldma_wr(pd, PLDMA_QP_ATTR_MASK, mask);
	if (mask & PLDMA_QPA_STATE)
		pldma_wr(pd, PLDMA_QP_NEW_STATE, a->qp_state);
	if (mask & PLDMA_QPA_ACCESS_FLAGS)
		pldma_wr(pd, PLDMA_QP_ACCESS,
			 (a->access & PLDMA_MR_ACCESS_WRITE ?
			  PLDMA_KEY_ACC_WRITE : 0) |
			 (a->access & PLDMA_MR_ACCESS_READ ?
			  PLDMA_KEY_ACC_READ : 0) |
			 (a->access & PLDMA_MR_ACCESS_ATOMIC ?
			  PLDMA_KEY_ACC_ATOMIC : 0));
	if (mask & PLDMA_QPA_DEST_QPN)
		pldma_wr(pd, PLDMA_QP_DEST_QPN, a->dest_qpn);
	if (mask & PLDMA_QPA_QKEY)
		pldma_wr(pd, PLDMA_QP_QKEY, a->qkey);
	if (mask & PLDMA_QPA_AV) {
		pldma_wr(pd, PLDMA_QP_DEST_IP, a->dest_ip);
		pldma_wr(pd, PLDMA_QP_DEST_MAC_LO, pldma_mac_lo(a->dest_mac));
		pldma_wr(pd, PLDMA_QP_DEST_MAC_HI, pldma_mac_hi(a->dest_mac));
	}
	if (mask & PLDMA_QPA_SQ_PSN)
		pldma_wr(pd, PLDMA_QP_SQ_PSN, a->sq_psn);
	if (mask & PLDMA_QPA_RQ_PSN)
		pldma_wr(pd, PLDMA_QP_RQ_PSN, a->rq_psn);
	if (mask & PLDMA_QPA_PATH_MTU)
		pldma_wr(pd, PLDMA_QP_PATH_MTU, a->path_mtu);
	/* (the device takes each field its mask bit names) */
	if (mask & (PLDMA_QPA_TIMEOUT | PLDMA_QPA_RETRY_CNT |
		    PLDMA_QPA_RNR_RETRY | PLDMA_QPA_MIN_RNR_TIMER |
		    PLDMA_QPA_MAX_QP_RD_ATOMIC))
		pldma_wr(pd, PLDMA_QP_TIMERS,
			 PLDMA_QPT_MAKE(a->retry_cnt, a->rnr_retry,
					a->min_rnr_timer, a->timeout) |
			 PLDMA_QPT_RD_ATOMIC(a->max_rd_atomic));
	pldma_wr(pd, PLDMA_QP_CMD, PLDMA_QP_CMD_MODIFY);
	st = pldma_rd(pd, PLDMA_QP_STATUS);
	/* a QP that entered RESET has a new QPN */
	qp->qpn = pldma_rd(pd, PLDMA_QP_QPN);
	if (!st) {
		if (mask & PLDMA_QPA_DEST_QPN)
			qp->dest_qpn = a->dest_qpn;
		if (mask & PLDMA_QPA_AV)
			qp->dest_ip = a->dest_ip;
	}
	trace_pldma_qp_modify(pd->id, qp->qpn, qp->type, ctx->ch, ctx->pasid,
			      ctx->tgid, mask, cur, mask & PLDMA_QPA_STATE ?
			      a->qp_state : cur, a->dest_qpn, a->dest_ip, st);
	return pldma_qp_status_errno(st);
}

/* Every user value, before any register is touched */
static int pldma_qp_check(const struct pldma_qp_attr *a)
{
	u32 m = a->attr_mask;

	if (a->rsvd0 || a->rsvd1[0] || a->rsvd1[1] || a->rsvd1[2] ||
	    a->rsvd[0] || a->rsvd[1])
		return -EINVAL;
	/* (a Q_Key: for a UD QP only, pldma_qp_modify()) */
	if (!m || m & ~(PLDMA_QPA_USER | PLDMA_QPA_QKEY))
		return -EINVAL;
	if (m & PLDMA_QPA_STATE && a->qp_state != PLDMA_QPS_RESET &&
	    a->qp_state != PLDMA_QPS_INIT && a->qp_state != PLDMA_QPS_RTR &&
	    a->qp_state != PLDMA_QPS_RTS && a->qp_state != PLDMA_QPS_ERR)
		return -EINVAL;
	if (m & PLDMA_QPA_ACCESS_FLAGS &&
	    a->access & ~(PLDMA_MR_ACCESS_WRITE | PLDMA_MR_ACCESS_READ |
			  PLDMA_MR_ACCESS_ATOMIC))
		return -EINVAL;
	if (m & PLDMA_QPA_DEST_QPN &&
	    (a->dest_qpn > PLDMA_PSN_MASK || a->dest_qpn < 2))
		return -EINVAL;
	/* a unicast IPv4 address and MAC: not 0, broadcast or multicast */
	if (m & PLDMA_QPA_AV &&
	    (!a->dest_ip || a->dest_ip == U32_MAX ||
	     (a->dest_ip >> 28) == 0xe || a->dest_mac[0] & 1 ||
	     !(pldma_mac_lo(a->dest_mac) | pldma_mac_hi(a->dest_mac))))
		return -EINVAL;
	if ((m & PLDMA_QPA_SQ_PSN && a->sq_psn > PLDMA_PSN_MASK) ||
	    (m & PLDMA_QPA_RQ_PSN && a->rq_psn > PLDMA_PSN_MASK))
		return -EINVAL;
	if (m & PLDMA_QPA_PATH_MTU &&
	    (a->path_mtu < PLDMA_MTU_256 || a->path_mtu > PLDMA_MTU_4096))
		return -EINVAL;
	/* the timer fields share one register: all or none */
	if (m & (PLDMA_QPA_TIMEOUT | PLDMA_QPA_RETRY_CNT |
		 PLDMA_QPA_RNR_RETRY | PLDMA_QPA_MIN_RNR_TIMER)) {
		if (a->timeout > 31 || a->retry_cnt > 7 || a->rnr_retry > 7 ||
		    a->min_rnr_timer > 31)
			return -EINVAL;
	}
	if (m & PLDMA_QPA_MAX_QP_RD_ATOMIC &&
	    a->max_rd_atomic > PLDMA_QP_MAX_RD_ATOMIC)
		return -EINVAL;
	return 0;
}

/* The RQ or SRQ and the CQs of a new QP: every value before any register */
static int pldma_qp_create_check(struct pldma_dev *pd,
				 const struct pldma_qp_create *c, u32 srq)
{
	if (c->qpn || c->rq_mmap_size || c->rq_mmap_offset ||
	    c->flags & ~(PLDMA_QPC_SEND_CQ | PLDMA_QPC_RECV_CQ))
		return -EINVAL;
	if (!(c->flags & PLDMA_QPC_SEND_CQ) && c->send_cq)
		return -EINVAL;
	if (!(c->flags & PLDMA_QPC_RECV_CQ) && c->recv_cq)
		return -EINVAL;
	if (!pd->num_qps)
		return -EOPNOTSUPP;
	if ((c->flags || c->rq_entries) && !pd->num_cqs)
		return -EOPNOTSUPP;
	/* an SRQ takes the place of the RQ, and its WQEs complete to a CQ */
	if (srq != PLDMA_SRQ_NONE &&
	    (c->rq_entries || !(c->flags & PLDMA_QPC_RECV_CQ)))
		return -EINVAL;
	if (srq != PLDMA_SRQ_NONE && srq >= pd->num_srqs)
		return -ENOENT;
	if (c->rq_entries && (c->rq_entries < PLDMA_RQ_MIN_ENTRIES ||
			      c->rq_entries > PLDMA_RQ_MAX_ENTRIES ||
			      !is_power_of_2(c->rq_entries)))
		return -EINVAL;
	if ((c->flags & PLDMA_QPC_SEND_CQ && c->send_cq >= pd->num_cqs) ||
	    (c->flags & PLDMA_QPC_RECV_CQ && c->recv_cq >= pd->num_cqs))
		return -ENOENT;
	return 0;
}

/*
 * The CQs and the SRQ of a new QP, held (pd->key_mutex held): they must be
 * the file's (the device checks their PD too); *@send_cq and *@recv_cq
 * the CQs held, or PLDMA_CQ_NONE; nothing held on an error
 */
static int pldma_qp_get_refs(struct pldma_ctx *ctx,
			     const struct pldma_qp_create *c, u32 srq,
			     u16 pd_tag, u32 *send_cq, u32 *recv_cq)
{
	struct pldma_dev *pd = ctx->pd;
	int ret = 0;

	if (c->flags & PLDMA_QPC_SEND_CQ) {
		ret = pldma_cq_get(ctx, c->send_cq);
		if (ret)
			return ret;
		*send_cq = c->send_cq;
	}
	if (c->flags & PLDMA_QPC_RECV_CQ) {
		ret = pldma_cq_get(ctx, c->recv_cq);
		if (ret)
			goto err_send;
		*recv_cq = c->recv_cq;
	}
	if (srq != PLDMA_SRQ_NONE) {
		ret = pldma_srq_get(ctx, srq, pd_tag);
		if (ret)
			goto err_recv;
	}
	return 0;

err_recv:
	if (*recv_cq != PLDMA_CQ_NONE)
		pldma_cq_put(pd, *recv_cq);
	*recv_cq = PLDMA_CQ_NONE;
err_send:
	if (*send_cq != PLDMA_CQ_NONE)
		pldma_cq_put(pd, *send_cq);
	*send_cq = PLDMA_CQ_NONE;
	return ret;
}

/*
 * Create the QP of @ctx as @cp asks (QPN and RQ mmap data out), every
 * value checked; the ioctl and the ib_device's create_qp (ib_qp.c) come
 * here with the device known present (pd->gone_sem held).  @srq: the
 * index of an SRQ of the context, of the PD @pd_tag, that the QP receives
 * from (no RQ then; the ib_device's only), or PLDMA_SRQ_NONE.  @type:
 * PLDMA_QP_TYPE_RC, or _UC or _UD (the ib_device's only, CAP.UC, CAP.UD).
 */
int pldma_qp_create(struct pldma_ctx *ctx, struct pldma_qp_create *cp,
		    u16 pd_tag, u32 srq, u32 type)
{
	struct pldma_dev *pd = ctx->pd;
	u32 send_cq = PLDMA_CQ_NONE, recv_cq = PLDMA_CQ_NONE;
	struct pldma_qp_create c = *cp;
	struct pldma_qp *qp = NULL;
	dma_addr_t rq_dma = 0;
	void *rq = NULL;
	u32 rq_size = 0;
	unsigned int i;
	int ret;

	ret = pldma_qp_create_check(pd, &c, srq);
	if (ret)
		return ret;
	if (c.rq_entries) {
		rq_size = PAGE_ALIGN(c.rq_entries * PLDMA_RWQE_SIZE);
		rq = dmam_alloc_coherent(pd->dev, rq_size, &rq_dma, GFP_KERNEL);
		if (!rq)
			return -ENOMEM;
	}
	mutex_lock(&pd->key_mutex);
	ret = -EBUSY;		/* the file's channel is one QP's SQ */
	if (ctx->qp)
		goto out;
	for (i = 0; i < pd->num_qps; i++) {
		if (!pd->qps[i].ctx) {
			qp = &pd->qps[i];
			break;
		}
	}
	ret = -ENOSPC;
	if (!qp)
		goto out;
	pldma_wr(pd, PLDMA_QP_SEL, qp->idx);
	ret = -EIO;
	if (pldma_rd(pd, PLDMA_QP_STATE) != PLDMA_QPS_RESET)
		goto out;
	ret = pldma_qp_get_refs(ctx, &c, srq, pd_tag, &send_cq, &recv_cq);
	if (ret)
		goto out;
	qp->qpn = pldma_rd(pd, PLDMA_QP_QPN);
	qp->dest_qpn = 0;
	qp->dest_ip = 0;
	qp->send_cq = send_cq;
	qp->recv_cq = recv_cq;
	qp->srq = srq;
	qp->type = type;
	qp->pd_tag = pd_tag;
	qp->rq_dma = rq_dma;
	qp->rq_entries = c.rq_entries;
	qp->rq_size = rq_size;
	atomic_set(&qp->rq_mapped, 0);
	spin_lock_irq(&pd->lock);
	qp->rec_valid = false;
	qp->rq = rq;
	qp->ib_qp = NULL;
	qp->ctx = ctx;
	ctx->qp = qp;
	spin_unlock_irq(&pd->lock);
	rq = NULL;
	cp->qpn = qp->qpn;
	cp->rq_mmap_size = rq_size;
	cp->rq_mmap_offset = rq_size ? PLDMA_MMAP_RQ : 0;
	trace_pldma_qp_create(pd->id, qp->qpn, type, ctx->ch, ctx->pasid,
			      ctx->tgid);
	ret = 0;
out:
	mutex_unlock(&pd->key_mutex);
	if (rq)
		dmam_free_coherent(pd->dev, rq_size, rq, rq_dma);
	return ret;
}

/* Called with the device known present (pd->gone_sem held). */
long pldma_ioc_qp_create(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_qp_create c;
	int ret;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	/* the file: one PD, no SRQ */
	ret = pldma_qp_create(ctx, &c, 0, PLDMA_SRQ_NONE, PLDMA_QP_TYPE_RC);
	if (!ret && copy_to_user(arg, &c, sizeof(c))) {
		/* nobody learnt the QPN: the QP goes again */
		pldma_qp_release(ctx);
		ret = -EFAULT;
	}
	return ret;
}

/* Modify the QP @a->qpn of @ctx; @a->qpn out: its QPN now */
int pldma_qp_modify(struct pldma_ctx *ctx, struct pldma_qp_attr *a)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_qp *qp;
	int ret;

	ret = pldma_qp_check(a);
	if (ret)
		return ret;
	mutex_lock(&pd->key_mutex);
	qp = pldma_qp_find(ctx, a->qpn);
	if (!qp) {
		ret = -ENOENT;
	} else if (a->attr_mask & PLDMA_QPA_QKEY &&
		   qp->type != PLDMA_QP_TYPE_UD) {
		ret = -EINVAL;		/* a Q_Key is a datagram QP's */
	} else {
		ret = pldma_qp_modify_hw(ctx, qp, a->attr_mask, a);
		a->qpn = qp->qpn;
	}
	mutex_unlock(&pd->key_mutex);
	return ret;
}

long pldma_ioc_qp_modify(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_qp_attr a;
	int ret;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	ret = pldma_qp_modify(ctx, &a);
	if (ret)
		return ret;
	/* the QPN, new if the QP entered RESET */
	return put_user(a.qpn, (u32 __user *)arg) ? -EFAULT : 0;
}

long pldma_ioc_qp_query(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_qp_attr a;
	int ret;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	ret = pldma_qp_query(ctx, &a);
	if (ret)
		return ret;
	return copy_to_user(arg, &a, sizeof(a)) ? -EFAULT : 0;
}

/* The attributes of the QP @ap->qpn of @ctx, from the device */
int pldma_qp_query(struct pldma_ctx *ctx, struct pldma_qp_attr *ap)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_qp_attr a = *ap;
	struct pldma_qp *qp;
	u32 st, t;

	mutex_lock(&pd->key_mutex);
	qp = pldma_qp_find(ctx, a.qpn);
	if (!qp) {
		mutex_unlock(&pd->key_mutex);
		return -ENOENT;
	}
	memset(&a, 0, sizeof(a));
	pldma_wr(pd, PLDMA_QP_SEL, qp->idx);
	pldma_wr(pd, PLDMA_QP_CMD, PLDMA_QP_CMD_QUERY);
	st = pldma_rd(pd, PLDMA_QP_STATUS);
	if (st) {
		mutex_unlock(&pd->key_mutex);
		return pldma_qp_status_errno(st);
	}
	a.qpn = pldma_rd(pd, PLDMA_QP_QPN);
	a.attr_mask = PLDMA_QPA_USER;
	a.qp_state = pldma_rd(pd, PLDMA_QP_STATE);
	t = pldma_rd(pd, PLDMA_QP_ACCESS);
	a.access = (t & PLDMA_KEY_ACC_WRITE ? PLDMA_MR_ACCESS_WRITE : 0) |
		   (t & PLDMA_KEY_ACC_READ ? PLDMA_MR_ACCESS_READ : 0) |
		   (t & PLDMA_KEY_ACC_ATOMIC ? PLDMA_MR_ACCESS_ATOMIC : 0);
	a.dest_qpn = pldma_rd(pd, PLDMA_QP_DEST_QPN);
	a.dest_ip = pldma_rd(pd, PLDMA_QP_DEST_IP);
	pldma_mac_set(a.dest_mac, pldma_rd(pd, PLDMA_QP_DEST_MAC_LO),
		      pldma_rd(pd, PLDMA_QP_DEST_MAC_HI));
	a.sq_psn = pldma_rd(pd, PLDMA_QP_SQ_PSN) & PLDMA_PSN_MASK;
	a.rq_psn = pldma_rd(pd, PLDMA_QP_RQ_PSN) & PLDMA_PSN_MASK;
	a.path_mtu = pldma_rd(pd, PLDMA_QP_PATH_MTU);
	t = pldma_rd(pd, PLDMA_QP_TIMERS);
	a.timeout = PLDMA_QPT_TIMEOUT(t);
	a.retry_cnt = PLDMA_QPT_RETRY_CNT(t);
	a.rnr_retry = PLDMA_QPT_RNR_RETRY(t);
	a.min_rnr_timer = PLDMA_QPT_MIN_RNR_TIMER(t);
	a.max_rd_atomic = PLDMA_QPT_MAX_RD_ATOMIC(t);
	if (qp->type == PLDMA_QP_TYPE_UD) {
		a.attr_mask |= PLDMA_QPA_QKEY;
		a.qkey = pldma_rd(pd, PLDMA_QP_QKEY);
	}
	mutex_unlock(&pd->key_mutex);
	*ap = a;
	return 0;
}

/*
 * To RESET and free, pd->key_mutex held: refused while the RQ ring is
 * mapped (the memory must outlive the mapping).  With the device gone, the
 * ring is left to devres (freed after the removal).
 */
static int pldma_qp_free(struct pldma_ctx *ctx, struct pldma_qp *qp)
{
	struct pldma_qp_attr a = {
		.attr_mask = PLDMA_QPA_STATE,
		.qp_state = PLDMA_QPS_RESET,
	};
	struct pldma_dev *pd = ctx->pd;
	void *rq;
	int ret = 0;

	lockdep_assert_held(&pd->key_mutex);
	spin_lock_irq(&pd->lock);
	if (atomic_read(&qp->rq_mapped) && !pd->gone) {
		spin_unlock_irq(&pd->lock);
		return -EBUSY;
	}
	rq = qp->rq;
	qp->rq = NULL;
	spin_unlock_irq(&pd->lock);
	if (!pd->gone)
		ret = pldma_qp_modify_hw(ctx, qp, PLDMA_QPA_STATE, &a);
	if (ret)
		dev_warn(pd->dev, "QP %u: not reset (%d)\n", qp->idx, ret);
	/* in RESET the device uses neither the RQ, the SRQ nor the CQs */
	if (rq && !pd->gone && !ret)
		dmam_free_coherent(pd->dev, qp->rq_size, rq, qp->rq_dma);
	if (qp->send_cq != PLDMA_CQ_NONE)
		pldma_cq_put(pd, qp->send_cq);
	if (qp->recv_cq != PLDMA_CQ_NONE)
		pldma_cq_put(pd, qp->recv_cq);
	if (qp->srq != PLDMA_SRQ_NONE)
		pldma_srq_put(pd, qp->srq);
	qp->send_cq = PLDMA_CQ_NONE;
	qp->recv_cq = PLDMA_CQ_NONE;
	qp->srq = PLDMA_SRQ_NONE;
	trace_pldma_qp_destroy(pd->id, qp->qpn, ctx->ch, ctx->pasid, ctx->tgid);
	spin_lock_irq(&pd->lock);
	qp->rec_valid = false;
	qp->ib_qp = NULL;
	qp->ctx = NULL;
	ctx->qp = NULL;
	spin_unlock_irq(&pd->lock);
	return 0;
}

/* To RESET and free: the QP @qpn of @ctx only */
int pldma_qp_destroy(struct pldma_ctx *ctx, u32 qpn)
{
	struct pldma_dev *pd = ctx->pd;
	struct pldma_qp *qp;
	int ret = -ENOENT;

	mutex_lock(&pd->key_mutex);
	qp = pldma_qp_find(ctx, qpn);
	if (qp)
		ret = pldma_qp_free(ctx, qp);
	mutex_unlock(&pd->key_mutex);
	return ret;
}

long pldma_ioc_qp_destroy(struct pldma_ctx *ctx, void __user *arg)
{
	struct pldma_qp_destroy d;

	if (copy_from_user(&d, arg, sizeof(d)))
		return -EFAULT;
	if (d.rsvd)
		return -EINVAL;
	return pldma_qp_destroy(ctx, d.qpn);
}

/*
 * release() and the device's removal, before the channel stops and the
 * PASID goes: the QP to RESET, so that no request of its peer is served
 * any more.
 */
void pldma_qp_release(struct pldma_ctx *ctx)
{
	struct pldma_dev *pd = ctx->pd;

	mutex_lock(&pd->key_mutex);
	if (ctx->qp && pldma_qp_free(ctx, ctx->qp))
		dev_warn(pd->dev, "QP %u: kept at release\n", ctx->qp->idx);
	mutex_unlock(&pd->key_mutex);
}
