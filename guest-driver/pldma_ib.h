/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PLDMA's ib_device (ib_main.c): the objects of the verbs it implements.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#ifndef _PLDMA_IB_H
#define _PLDMA_IB_H

#include <linux/etherdevice.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "pldma_compat.h"

struct pldma_dev;

struct pldma_ibdev {
	struct ib_device ibdev;
	struct pldma_dev *pd;
	struct xarray mrs;		/* lkey -> struct pldma_ib_mr */
	/* port 1 follows the net_device (RTNL): its last state, an event */
	struct notifier_block netdev_nb;
	enum ib_port_state port_state;
};

static inline struct pldma_ibdev *to_pibdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct pldma_ibdev, ibdev);
}

/*
 * A ucontext is a context of the process (pldma_ctx_open(), as an open
 * file of /dev/pldmaN is): its mm bound by SVA, its PASID the address
 * space of every PD, its CQs, and the keys and faults of its MRs served
 * through it.  Its QPs' send queues are channels (chans): its own,
 * claimed by its first QP, then contexts of their own (pldma_ib_chan).
 */
struct pldma_ib_ucontext {
	struct ib_ucontext ibuc;
	struct pldma_ctx *ctx;
	u32 pasid;			/* ctx->pasid */
	struct rdma_user_mmap_entry *db;	/* ctx's channel page */
	u64 db_off;
	struct mutex chan_lock;		/* chans, and each one's busy */
	struct list_head chans;
	struct ida pd_tags;		/* of its PDs */
};

/*
 * A channel of a ucontext, the send queue of one QP at a time: the
 * ucontext's own context (the first), or a context of its own, bound to
 * the same mm (the same PASID) with ctx->parent the ucontext's, whose CQs
 * its QP may use.  A channel stays the ucontext's until it ends, busy or
 * not, so that no mapping of its page outlives it; the next QP takes it.
 */
struct pldma_ib_chan {
	struct list_head node;
	struct pldma_ctx *ctx;
	struct rdma_user_mmap_entry *db;	/* its channel page */
	u64 db_off;
	bool busy;			/* a QP's send queue */
};

/* What an mmap() offset of the uverbs file maps */
enum pldma_ib_mmap_type {
	PLDMA_IB_MMAP_DB,		/* the context's channel page */
	PLDMA_IB_MMAP_CQ,		/* a CQ's ring (read-only) */
	PLDMA_IB_MMAP_RQ,		/* the QP's RQ ring */
	PLDMA_IB_MMAP_SRQ,		/* an SRQ's ring and doorbell record */
};

struct pldma_ib_mmap {
	struct rdma_user_mmap_entry rdma;
	enum pldma_ib_mmap_type type;
	u32 idx;			/* CQ or SRQ index */
	struct pldma_ctx *ctx;		/* DB, RQ: the channel's context */
};

struct rdma_user_mmap_entry *
pldma_ib_mmap_insert(struct pldma_ib_ucontext *uc, struct pldma_ctx *ctx,
		     enum pldma_ib_mmap_type type, u32 idx, size_t size,
		     u64 *offset);

/* A kernel CQ (ib_gsi.c): its completions in memory */
struct pldma_sw_cq {
	spinlock_t lock;		/* everything below */
	u32 entries;
	u32 head;			/* oldest completion */
	u32 count;
	enum ib_cq_notify_flags notify;	/* 0 or the armed request */
	struct ib_wc wc[];
};

struct pldma_ib_cq {
	struct ib_cq ibcq;
	u32 idx;			/* the device's CQ */
	struct rdma_user_mmap_entry *ring;
	struct pldma_sw_cq *sw;		/* a kernel CQ: no device CQ */
};

static inline struct pldma_ib_cq *to_pcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct pldma_ib_cq, ibcq);
}

/*
 * A QP of a ucontext (RC, UC or UD); its send queue is the channel
 * @chan.  The four timer attributes share one device register: the last
 * values set are kept, so that a modify naming some of them keeps the
 * others.
 */
struct pldma_ib_qp {
	struct ib_qp ibqp;
	struct pldma_gsi *gsi;		/* QP1, the kernel's (ib_gsi.c) */
	struct pldma_ib_ucontext *uc;
	struct pldma_ib_chan *chan;
	struct rdma_user_mmap_entry *rq;
	u32 sq_entries;
	u32 rq_entries;
	struct ib_qp_cap cap;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
};

static inline struct pldma_ib_qp *to_pqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct pldma_ib_qp, ibqp);
}

/* User AHs: there is no device object behind one, any number will do */
#define PLDMA_IB_MAX_AH		0x10000

enum ib_mtu pldma_ib_active_mtu(struct pldma_dev *pd);
int pldma_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		       struct uverbs_attr_bundle *attrs);
int pldma_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int pldma_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata);
int pldma_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		       int mask, struct ib_udata *udata);
int pldma_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_qp_init_attr *init);
int pldma_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/*
 * An SRQ of a ucontext (ib_srq.c): the device's SRQ @idx of the
 * ucontext's context, its ring and record mapped read-write
 */
struct pldma_ib_srq {
	struct ib_srq ibsrq;
	struct pldma_ctx *ctx;		/* the ucontext's */
	u32 idx;
	u32 entries;			/* 2^k: max_wr is one fewer */
	struct rdma_user_mmap_entry *ring;
};

static inline struct pldma_ib_srq *to_psrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct pldma_ib_srq, ibsrq);
}

int pldma_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			struct ib_udata *udata);
int pldma_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata);
int pldma_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int pldma_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

/*
 * QP1, the port's GSI QP, in software on the Ethernet rings (ib_gsi.c):
 * the MAD layer's.  Receive WQEs are kernel virtual buffers; a send is a
 * whole frame queued on @sq until tx_work puts it on the transmit ring.
 */
struct pldma_gsi_rwqe {
	u64 wr_id;
	u64 addr;
	u32 length;
};

struct pldma_gsi {
	struct pldma_dev *pd;
	struct pldma_ib_qp *qp;
	spinlock_t lock;		/* everything below */
	enum ib_qp_state state;
	u32 qkey;
	u32 sq_psn;
	bool sig_all;
	u32 sq_max;
	struct sk_buff_head sq;
	struct work_struct tx_work;
	struct pldma_gsi_rwqe *rq;
	u32 rq_size;
	u32 rq_head;			/* oldest posted WQE */
	u32 rq_count;
};

/* An address handle (kernel only: the MAD layer's): RoCEv2 over IPv4 */
struct pldma_ib_ah {
	struct ib_ah ibah;
	__be32 saddr;
	__be32 daddr;
	u8 dmac[ETH_ALEN];
	u8 tos;
	u8 ttl;
};

static inline struct pldma_ib_ah *to_pah(struct ib_ah *ibah)
{
	return container_of(ibah, struct pldma_ib_ah, ibah);
}

int pldma_sw_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr);
void pldma_sw_cq_destroy(struct ib_cq *ibcq);
bool pldma_sw_cq_push(struct ib_cq *ibcq, const struct ib_wc *wc,
		      bool solicited);
int pldma_ib_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int pldma_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
struct ib_mr *pldma_ib_get_dma_mr(struct ib_pd *ibpd, int access);
int pldma_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		       struct ib_udata *udata);
int pldma_ib_destroy_ah(struct ib_ah *ibah, u32 flags);
int pldma_gsi_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init);
int pldma_gsi_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask);
int pldma_gsi_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		       struct ib_qp_init_attr *init);
void pldma_gsi_destroy_qp(struct ib_qp *ibqp);
int pldma_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr);
int pldma_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);

/*
 * A PD: the ucontext's PASID and a tag of its own among the ucontext's
 * PDs (1..PLDMA_PD_TAG_MAX; 0 is the char device's), which its MRs' keys
 * and its QPs carry: a key answers only a QP of its PD (KEY_PD, QP_PD_TAG)
 */
struct pldma_ib_pd {
	struct ib_pd ibpd;
	u32 pasid;			/* the ucontext's */
	u16 tag;
};

/*
 * An MR: a device key (rkey) when it grants remote access; pinned pages
 * (umem) unless IB_ACCESS_ON_DEMAND, where the device walks the PASID's
 * page tables and its faults are served by the channel's fault mode.
 */
struct pldma_ib_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;		/* NULL: ODP, nothing pinned */
	bool has_key;			/* ibmr.rkey is a device key */
	bool odp;			/* nothing pinned */
};

static inline struct pldma_ib_mr *to_pmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct pldma_ib_mr, ibmr);
}

struct ib_mr *pldma_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 virt_addr, int access,
				   PLDMA_IB_DMAH_ARG
				   struct ib_udata *udata);
int pldma_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int pldma_ib_advise_mr(struct ib_pd *ibpd,
		       enum ib_uverbs_advise_mr_advice advice, u32 flags,
		       struct ib_sge *sg_list, u32 num_sge,
		       struct uverbs_attr_bundle *attrs);

static inline struct pldma_ib_ucontext *to_pucontext(struct ib_ucontext *uc)
{
	return container_of(uc, struct pldma_ib_ucontext, ibuc);
}

/*
 * A verbs call that makes or uses an object of ucontext @uc's address
 * space comes from that address space: a forked child, or a process the
 * uverbs file was handed to, would register the owner's memory on its
 * PASID or drive its QPs (the char device refuses the same, cdev.c).
 * Destroying is not refused: ib_core cleans up from any context.
 */
static inline int pldma_ib_mm_check(const struct pldma_ib_ucontext *uc)
{
	return current->mm == uc->ctx->mm ? 0 : -EPERM;
}

static inline struct pldma_ib_pd *to_ppd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct pldma_ib_pd, ibpd);
}

#endif /* _PLDMA_IB_H */
