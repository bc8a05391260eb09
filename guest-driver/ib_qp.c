// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA's ib_device: RC, UC and UD queue pairs (UC and UD on a device
 * with CAP.UC, CAP.UD).  A verbs QP is the device QP of the
 * ucontext's channel context (qp.c): the context's channel is its send
 * queue, a ring of descriptors in the process's memory that the provider
 * gives the channel and rings through the channel page, and its receive
 * queue a ring in coherent memory mapped read-write to the process (its
 * doorbell PLDMA_CH_RQ_TAIL of the same page), or an SRQ of its PD
 * (ib_srq.c) in its place.  So a context has one QP.
 *
 * modify_qp passes ib_qp_attr to the device's QP attributes: the device's
 * attribute mask has the bit values of ib_qp_attr_mask (pldma-regs.h).
 * The address vector is RoCEv2's: the destination GID must be IPv4-mapped
 * (the device speaks IPv4/UDP), the destination MAC is the one ib_core
 * resolved (ah_attr.roce.dmac).  A UD QP has no path: each send names
 * its destination (an AH: the provider writes the AH's vector into the
 * descriptor), and its Q_Key is set at RESET->INIT (IB_QP_QKEY).
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#include <linux/log2.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "pldma_drv.h"
#include "pldma_ib.h"
#include "uapi/pldma-abi.h"

/* The attributes a modify may name (others: EOPNOTSUPP) */
#define PLDMA_IB_QP_MASK	(IB_QP_STATE | IB_QP_CUR_STATE |	\
				 IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | \
				 IB_QP_PORT | IB_QP_AV | IB_QP_PATH_MTU | \
				 IB_QP_TIMEOUT | IB_QP_RETRY_CNT |	\
				 IB_QP_RNR_RETRY | IB_QP_RQ_PSN |	\
				 IB_QP_MAX_QP_RD_ATOMIC |		\
				 IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN |	\
				 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_DEST_QPN | \
				 IB_QP_QKEY)
/* ... and those the device takes, with the same bit values */
#define PLDMA_IB_QP_DEV_MASK	(IB_QP_STATE | IB_QP_ACCESS_FLAGS |	\
				 IB_QP_AV | IB_QP_PATH_MTU |		\
				 IB_QP_TIMEOUT | IB_QP_RETRY_CNT |	\
				 IB_QP_RNR_RETRY | IB_QP_RQ_PSN |	\
				 IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN |	\
				 IB_QP_DEST_QPN | IB_QP_MAX_QP_RD_ATOMIC | \
				 IB_QP_QKEY)
static_assert(IB_QP_STATE == PLDMA_QPA_STATE);
static_assert(IB_QP_QKEY == PLDMA_QPA_QKEY);
static_assert(IB_QP_ACCESS_FLAGS == PLDMA_QPA_ACCESS_FLAGS);
static_assert(IB_QP_AV == PLDMA_QPA_AV);
static_assert(IB_QP_PATH_MTU == PLDMA_QPA_PATH_MTU);
static_assert(IB_QP_TIMEOUT == PLDMA_QPA_TIMEOUT);
static_assert(IB_QP_RETRY_CNT == PLDMA_QPA_RETRY_CNT);
static_assert(IB_QP_RNR_RETRY == PLDMA_QPA_RNR_RETRY);
static_assert(IB_QP_RQ_PSN == PLDMA_QPA_RQ_PSN);
static_assert(IB_QP_MIN_RNR_TIMER == PLDMA_QPA_MIN_RNR_TIMER);
static_assert(IB_QP_SQ_PSN == PLDMA_QPA_SQ_PSN);
static_assert(IB_QP_DEST_QPN == PLDMA_QPA_DEST_QPN);
static_assert(IB_QP_MAX_QP_RD_ATOMIC == PLDMA_QPA_MAX_QP_RD_ATOMIC);
static_assert(IB_QPS_RTS == PLDMA_QPS_RTS && IB_QPS_ERR == PLDMA_QPS_ERR);
static_assert(IB_MTU_4096 == PLDMA_MTU_4096);

static struct pldma_ib_ucontext *pldma_ib_uc(struct ib_udata *udata)
{
	return rdma_udata_to_drv_context(udata, struct pldma_ib_ucontext,
					 ibuc);
}

/*
 * A channel of @uc for a new QP's send queue: one of its idle ones, else
 * the context's own (claimed now), else a context of its own (a channel
 * claimed, the same mm bound: the same PASID); EBUSY: the device has no
 * channel free.  It is @uc's until the ucontext ends.
 */
static struct pldma_ib_chan *pldma_ib_chan_get(struct pldma_ib_ucontext *uc)
{
	struct pldma_ctx *ctx;
	struct pldma_ib_chan *c;
	int ret;

	mutex_lock(&uc->chan_lock);
	list_for_each_entry(c, &uc->chans, node) {
		if (!c->busy)
			goto found;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		ret = -ENOMEM;
		goto err;
	}
	if (list_empty(&uc->chans)) {
		ret = pldma_ctx_claim(uc->ctx);
		if (ret)
			goto err_free;
		c->ctx = uc->ctx;
		c->db = uc->db;
		c->db_off = uc->db_off;
	} else {
		ctx = pldma_ctx_open(uc->ctx->pd, NULL, true);
		if (IS_ERR(ctx)) {
			ret = PTR_ERR(ctx);
			goto err_free;
		}
		ctx->parent = uc->ctx;
		c->db = pldma_ib_mmap_insert(uc, ctx, PLDMA_IB_MMAP_DB, 0,
					     PAGE_SIZE, &c->db_off);
		if (IS_ERR(c->db)) {
			ret = PTR_ERR(c->db);
			pldma_ctx_close(ctx);
			goto err_free;
		}
		c->ctx = ctx;
	}
	list_add_tail(&c->node, &uc->chans);
found:
	c->busy = true;
	mutex_unlock(&uc->chan_lock);
	return c;

err_free:
	kfree(c);
err:
	mutex_unlock(&uc->chan_lock);
	return ERR_PTR(ret);
}

static void pldma_ib_chan_put(struct pldma_ib_ucontext *uc,
			      struct pldma_ib_chan *c)
{
	mutex_lock(&uc->chan_lock);
	c->busy = false;
	mutex_unlock(&uc->chan_lock);
}

static void pldma_ib_qp_event(struct ib_qp *ibqp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = ibqp->device,
		.element.qp = ibqp,
		.event = type,
	};

	if (ibqp->event_handler)
		ibqp->event_handler(&ev, ibqp->qp_context);
}

/*
 * A QP of an SRQ entered ERR: the device flushed the WQE it held from the
 * SRQ in that same transition (PLDMA_QP_SRQ) and takes no other, so its
 * last WQE is reached (IBA 11.6.3.1, IB_EVENT_QP_LAST_WQE_REACHED: the
 * consumer may now destroy it without losing a WQE)
 */
static void pldma_ib_qp_last_wqe(struct ib_qp *ibqp)
{
	if (ibqp->srq)
		pldma_ib_qp_event(ibqp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/* From the IRQ_QP_ERROR handler, pd->lock held */
void pldma_ib_qp_fatal(void *p)
{
	pldma_ib_qp_event(p, IB_EVENT_QP_FATAL);
	pldma_ib_qp_last_wqe(p);
}

/* The device's transport of a user QP of @type; -EOPNOTSUPP: none */
static int pldma_ib_qp_type(struct pldma_dev *pd, enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return PLDMA_QP_TYPE_RC;
	case IB_QPT_UC:
		return pd->cap & PLDMA_CAP_UC ? PLDMA_QP_TYPE_UC : -EOPNOTSUPP;
	case IB_QPT_UD:
		return pd->cap & PLDMA_CAP_UD ? PLDMA_QP_TYPE_UD : -EOPNOTSUPP;
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * The SRQ (*@srq) and the caps a new QP asks, checked, and its rings'
 * sizes: a descriptor lists up to PLDMA_DESC_MAX_SGE buffers; inline data
 * is the provider's copy (pldma-abi.h); max_send_wr 0 is a receive-only
 * QP, whose SQ is the smallest ring; with an SRQ the receive caps are
 * ignored, as verbs say, and the QP has no RQ ring
 */
static int pldma_ib_qp_sizes(struct pldma_ib_qp *qp,
			     const struct ib_qp_init_attr *init, u32 *srq)
{
	const struct ib_qp_cap *cap = &init->cap;

	/*
	 * An SRQ in place of the RQ: one of the same PD (the device checks
	 * its PASID and PD tag)
	 */
	if (init->srq) {
		if (init->srq->srq_type != IB_SRQT_BASIC)
			return -EOPNOTSUPP;
		if (init->srq->pd != qp->ibqp.pd)
			return -EINVAL;
		*srq = to_psrq(init->srq)->idx;
	}
	if (cap->max_send_wr >= PLDMA_RING_MAX_ENTRIES ||
	    (!init->srq && (cap->max_recv_wr >= PLDMA_RQ_MAX_ENTRIES ||
			    cap->max_recv_sge > PLDMA_RWQE_MAX_SGE)) ||
	    cap->max_send_sge > PLDMA_DESC_MAX_SGE ||
	    cap->max_inline_data > PLDMA_IB_MAX_INLINE)
		return -EINVAL;
	qp->sq_entries = max_t(u32, roundup_pow_of_two(cap->max_send_wr + 1),
			       PLDMA_RING_MIN_ENTRIES);
	qp->rq_entries = cap->max_recv_wr && !init->srq ?
		max_t(u32, roundup_pow_of_two(cap->max_recv_wr + 1),
		      PLDMA_RQ_MIN_ENTRIES) : 0;
	return 0;
}

/*
 * The create response: the rings, the channel page and, for a UD QP, its
 * largest datagram (the port's MTU); then the caps the QP has
 */
static int pldma_ib_qp_resp(struct pldma_ib_qp *qp,
			    struct ib_qp_init_attr *init, u32 type,
			    u32 rq_mmap_size, u64 rq_off,
			    struct ib_udata *udata)
{
	struct pldma_dev *pd = qp->chan->ctx->pd;
	struct pldma_create_qp_resp resp = {
		.rq_entries = qp->rq_entries,
		.rq_mmap_size = rq_mmap_size,
		.rq_mmap_offset = rq_off,
		.sq_entries = qp->sq_entries,
		.max_inline = PLDMA_IB_MAX_INLINE,
		.db_mmap_offset = qp->chan->db_off,
		.db_mmap_size = PAGE_SIZE,
	};
	struct ib_qp_cap *cap = &init->cap;
	int ret;

	if (type == PLDMA_QP_TYPE_UD)
		resp.ud_max_msg = ib_mtu_enum_to_int(pldma_ib_active_mtu(pd));
	ret = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (ret)
		return ret;
	cap->max_send_wr = qp->sq_entries - 1;
	cap->max_recv_wr = qp->rq_entries ? qp->rq_entries - 1 : 0;
	cap->max_send_sge = PLDMA_DESC_MAX_SGE;
	cap->max_recv_sge = init->srq ? 0 : PLDMA_RWQE_MAX_SGE;
	cap->max_inline_data = PLDMA_IB_MAX_INLINE;
	qp->cap = *cap;
	return 0;
}

/*
 * A user QP: RC, UC (CAP.UC) or UD (CAP.UD); the kernel's is QP1 alone
 * (ib_gsi.c)
 */
int pldma_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata)
{
	struct pldma_ib_qp *qp = to_pqp(ibqp);
	struct pldma_qp_create c = { };
	struct pldma_ib_ucontext *uc;
	u32 srq = PLDMA_SRQ_NONE;
	struct pldma_dev *pd;
	u64 rq_off = 0;
	int ret, type;

	if (!udata)			/* the kernel's: QP1 only */
		return pldma_gsi_create_qp(ibqp, init);
	uc = pldma_ib_uc(udata);
	ret = pldma_ib_mm_check(uc);
	if (ret)
		return ret;
	pd = uc->ctx->pd;
	type = pldma_ib_qp_type(pd, init->qp_type);
	if (type < 0 || init->create_flags || !pd->num_cqs)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	ret = pldma_ib_qp_sizes(qp, init, &srq);
	if (ret)
		return ret;
	c.flags = PLDMA_QPC_SEND_CQ | PLDMA_QPC_RECV_CQ;
	c.send_cq = to_pcq(init->send_cq)->idx;
	c.recv_cq = to_pcq(init->recv_cq)->idx;
	c.rq_entries = qp->rq_entries;
	/* a channel of the context is the QP's send queue */
	qp->chan = pldma_ib_chan_get(uc);
	if (IS_ERR(qp->chan))
		return PTR_ERR(qp->chan);
	ret = pldma_qp_create(qp->chan->ctx, &c, to_ppd(ibqp->pd)->tag, srq,
			      type);
	if (ret)
		goto err_put;
	if (c.rq_mmap_size) {
		qp->rq = pldma_ib_mmap_insert(uc, qp->chan->ctx,
					      PLDMA_IB_MMAP_RQ, 0,
					      c.rq_mmap_size, &rq_off);
		if (IS_ERR(qp->rq)) {
			ret = PTR_ERR(qp->rq);
			qp->rq = NULL;
			goto err_destroy;
		}
	}
	ret = pldma_ib_qp_resp(qp, init, type, c.rq_mmap_size, rq_off, udata);
	if (ret)
		goto err_remove;
	qp->timeout = 14;
	qp->retry_cnt = 7;
	qp->rnr_retry = 7;
	qp->min_rnr_timer = 12;
	ibqp->qp_num = c.qpn;
	qp->uc = uc;
	spin_lock_irq(&pd->lock);
	qp->chan->ctx->qp->ib_qp = ibqp;
	spin_unlock_irq(&pd->lock);
	return 0;

err_remove:
	if (qp->rq)
		rdma_user_mmap_entry_remove(qp->rq);
err_destroy:
	pldma_qp_destroy(qp->chan->ctx, c.qpn);
err_put:
	pldma_ib_chan_put(uc, qp->chan);
	return ret;
}

/* The RoCEv2 address vector: an IPv4-mapped destination GID, its MAC */
static int pldma_ib_qp_av(const struct rdma_ah_attr *ah,
			  struct pldma_qp_attr *a)
{
	const struct ib_global_route *grh;
	const struct in6_addr *dgid;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(ah) != 1)
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (!grh->sgid_attr ||
	    grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	dgid = (const struct in6_addr *)grh->dgid.raw;
	if (!ipv6_addr_v4mapped(dgid))
		return -EINVAL;
	a->dest_ip = be32_to_cpu(dgid->s6_addr32[3]);
	memcpy(a->dest_mac, ah->roce.dmac, ETH_ALEN);
	return 0;
}

/*
 * The device's attributes @a of a modify, from verbs' @attr and @mask
 * (the state and the mask set already)
 */
static int pldma_ib_qp_attrs(struct pldma_ib_qp *qp,
			     const struct ib_qp_attr *attr, int mask,
			     struct pldma_qp_attr *a)
{
	int ret;

	/*
	 * Remote WRITE, READ and atomics (CAP.ATOMIC); flushes are not done
	 * by the device (it drops a flush), so that right is taken and not
	 * kept.
	 * ON_DEMAND is an MR's flag that means nothing to a QP: ignored, as
	 * rxe and mlx5 do (rdma-core's ODP tests set the MR's flags on the
	 * QP, its extended-QP tests the flush rights).
	 */
	if (mask & IB_QP_ACCESS_FLAGS) {
		if (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
					      IB_ACCESS_REMOTE_WRITE |
					      IB_ACCESS_REMOTE_READ |
					      IB_ACCESS_REMOTE_ATOMIC |
					      IB_ACCESS_FLUSH_GLOBAL |
					      IB_ACCESS_FLUSH_PERSISTENT |
					      IB_ACCESS_ON_DEMAND))
			return -EINVAL;
		a->access = (attr->qp_access_flags & IB_ACCESS_REMOTE_WRITE ?
			     PLDMA_MR_ACCESS_WRITE : 0) |
			    (attr->qp_access_flags & IB_ACCESS_REMOTE_READ ?
			     PLDMA_MR_ACCESS_READ : 0) |
			    (attr->qp_access_flags & IB_ACCESS_REMOTE_ATOMIC &&
			     qp->chan->ctx->pd->cap & PLDMA_CAP_ATOMIC ?
			     PLDMA_MR_ACCESS_ATOMIC : 0);
	}
	if (mask & IB_QP_AV) {
		ret = pldma_ib_qp_av(&attr->ah_attr, a);
		if (ret)
			return ret;
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qpn = attr->dest_qp_num;
	/* (UD only: ib_modify_qp_is_ok() takes a Q_Key of no other type) */
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	/* the timers share a register: the others keep their last values */
	a->timeout = mask & IB_QP_TIMEOUT ? attr->timeout : qp->timeout;
	a->retry_cnt = mask & IB_QP_RETRY_CNT ? attr->retry_cnt :
						qp->retry_cnt;
	a->rnr_retry = mask & IB_QP_RNR_RETRY ? attr->rnr_retry :
						qp->rnr_retry;
	a->min_rnr_timer = mask & IB_QP_MIN_RNR_TIMER ? attr->min_rnr_timer :
							qp->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	return 0;
}

int pldma_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		       int mask, struct ib_udata *udata)
{
	struct pldma_ib_qp *qp = to_pqp(ibqp);
	struct pldma_qp_attr a = { .qpn = ibqp->qp_num };
	enum ib_qp_state cur, new;
	int ret;

	if (qp->gsi)
		return pldma_gsi_modify_qp(ibqp, attr, mask);
	if (udata && udata->inlen)
		return -EINVAL;
	if (udata && pldma_ib_mm_check(pldma_ib_uc(udata)))
		return -EPERM;
	if (mask & ~PLDMA_IB_QP_MASK)
		return -EOPNOTSUPP;
	ret = pldma_qp_query(qp->chan->ctx, &a);
	if (ret)
		return ret;
	cur = a.qp_state;
	if (mask & IB_QP_CUR_STATE && attr->cur_qp_state != cur)
		return -EINVAL;
	new = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask))
		return -EINVAL;
	if ((mask & IB_QP_PORT && attr->port_num != 1) ||
	    (mask & IB_QP_PKEY_INDEX && attr->pkey_index) ||
	    (mask & IB_QP_MAX_QP_RD_ATOMIC &&
	     attr->max_rd_atomic > PLDMA_QP_MAX_RD_ATOMIC) ||
	    (mask & IB_QP_MAX_DEST_RD_ATOMIC &&
	     attr->max_dest_rd_atomic > PLDMA_QP_MAX_RD_ATOMIC))
		return -EINVAL;

	memset(&a, 0, sizeof(a));
	a.qpn = ibqp->qp_num;
	a.attr_mask = mask & PLDMA_IB_QP_DEV_MASK;
	a.qp_state = new;
	ret = pldma_ib_qp_attrs(qp, attr, mask, &a);
	if (ret)
		return ret;
	if (!a.attr_mask)
		return 0;
	ret = pldma_qp_modify(qp->chan->ctx, &a);
	if (ret)
		return ret;
	if (new == IB_QPS_ERR && cur != IB_QPS_ERR)
		pldma_ib_qp_last_wqe(ibqp);
	qp->timeout = a.timeout;
	qp->retry_cnt = a.retry_cnt;
	qp->rnr_retry = a.rnr_retry;
	qp->min_rnr_timer = a.min_rnr_timer;
	/* a QP that entered RESET has a new QPN (the device's generation) */
	ibqp->qp_num = a.qpn;
	return 0;
}

int pldma_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_qp_init_attr *init)
{
	struct pldma_ib_qp *qp = to_pqp(ibqp);
	struct pldma_qp_attr a = { .qpn = ibqp->qp_num };
	int ret;

	if (qp->gsi)
		return pldma_gsi_query_qp(ibqp, attr, mask, init);
	ret = pldma_qp_query(qp->chan->ctx, &a);
	if (ret)
		return ret;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = a.qp_state;
	attr->cur_qp_state = a.qp_state;
	attr->path_mtu = a.path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qp_access_flags = IB_ACCESS_LOCAL_WRITE |
		(a.access & PLDMA_MR_ACCESS_WRITE ? IB_ACCESS_REMOTE_WRITE : 0) |
		(a.access & PLDMA_MR_ACCESS_READ ? IB_ACCESS_REMOTE_READ : 0) |
		(a.access & PLDMA_MR_ACCESS_ATOMIC ? IB_ACCESS_REMOTE_ATOMIC : 0);
	attr->dest_qp_num = a.dest_qpn;
	attr->qkey = a.qkey;
	attr->sq_psn = a.sq_psn;
	attr->rq_psn = a.rq_psn;
	attr->timeout = a.timeout;
	attr->retry_cnt = a.retry_cnt;
	attr->rnr_retry = a.rnr_retry;
	attr->min_rnr_timer = a.min_rnr_timer;
	attr->port_num = 1;
	attr->max_rd_atomic = a.max_rd_atomic;
	attr->max_dest_rd_atomic = PLDMA_QP_MAX_RD_ATOMIC;
	attr->cap = qp->cap;
	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->sq_sig_type = IB_SIGNAL_REQ_WR;
	return 0;
}

/* Refused (EBUSY) while the RQ ring is mapped: the provider unmaps it. */
int pldma_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct pldma_ib_qp *qp = to_pqp(ibqp);
	struct pldma_ib_ucontext *uc;
	int ret;

	if (qp->gsi) {
		pldma_gsi_destroy_qp(ibqp);
		return 0;
	}
	uc = pldma_ib_uc(udata);
	ret = pldma_qp_destroy(qp->chan->ctx, ibqp->qp_num);
	if (ret)
		return ret;
	if (qp->rq)
		rdma_user_mmap_entry_remove(qp->rq);
	/* idle: the context's next QP takes the channel */
	pldma_ib_chan_put(uc, qp->chan);
	return 0;
}
