/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-core provider for PLDMA (the QEMU device of this repository):
 * user-space side of pldma.ko's ib_device.
 */
#ifndef PLDMA_PROVIDER_H
#define PLDMA_PROVIDER_H

#include <pthread.h>
#include <stdint.h>
#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>

#include "pldma-abi.h"
#include "pldma-regs.h"

struct pldma_device {
	struct verbs_device vdev;
};

struct pldma_context {
	struct verbs_context vctx;
	uint32_t pasid;
	uint32_t num_qps;
	uint32_t num_cqs;
	uint32_t max_xfer;
	/*
	 * The channel pages of the context's QPs (SQ ring, SQ/RQ/CQ
	 * doorbells), each mapped once, by the first QP on that channel
	 * (pldma_map_db()), until the context ends: a context without a QP
	 * maps none (the page claims one of the device's few channels).  db
	 * is the first, for the CQ doorbells (any channel of the context
	 * takes them): NULL until then, set once under db_lock, read with
	 * acquire.
	 */
	void *db;
	size_t db_size;
	pthread_mutex_t db_lock;
	unsigned int ndbs;
	struct {
		uint64_t off;
		void *page;
	} dbs[PLDMA_MAX_CHANNELS];
};

/* A CQ: its ring mapped read-only, polled here */
struct pldma_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	uint32_t idx;
	uint32_t entries;
	uint32_t ci;			/* CQEs consumed, mod 2^24 */
	volatile uint8_t *ring;
	size_t ring_size;
	uint64_t ring_off;		/* its mmap() offset */
	/* extended CQ: the entry being read, and how many were consumed */
	const volatile uint8_t *cur;
	uint32_t consumed;
	/*
	 * An arm asked for before the context had its channel page (under
	 * lock; 0: none): no CQE can come before a QP exists, and the first
	 * QP that uses this CQ rings it (pldma_cq_flush_arm()).
	 */
	unsigned int arm_pending;
};

/*
 * An SRQ: its ring of receive WQEs and, after it, the doorbell record
 * (PLDMA_SRQ_DBREC_*), mapped read-write.  We write WQEs, then the
 * record's TAIL; the device writes its HEAD.
 */
struct pldma_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;
	uint8_t *ring;			/* NULL: not mapped (destroy failed) */
	size_t ring_size;
	uint64_t ring_off;		/* its mmap() offset */
	uint32_t idx;
	uint32_t entries;
	uint32_t tail;			/* one past the last WQE posted */
};

/* A QP: the SQ ring in our memory, the RQ ring mapped (none with an SRQ) */
struct pldma_qp {
	struct verbs_qp vqp;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	void *db;			/* its channel's page */
	uint8_t *sq;
	/* per SQ slot, PLDMA_DESC_MAX_SGE entries: a WR's gather list */
	uint8_t *sgl;
	/* per SQ slot, max_inline bytes: a WR's inline data, copied */
	uint8_t *inl;
	uint32_t max_inline;
	uint32_t ud_max_msg;		/* UD: the largest datagram (MTU) */
	uint32_t sq_entries;
	uint32_t sq_tail;
	uint8_t *rq;
	size_t rq_size;
	uint32_t rq_entries;
	uint32_t rq_tail;
	int sq_sig_all;
	/* ibv_qp_ex between wr_start() and wr_complete(), under sq_lock */
	uint32_t ex_start;		/* sq_tail at wr_start() */
	uint32_t ex_head;		/* the ring's HEAD as last read */
	uint32_t ex_slot;		/* the current request's slot */
	uint8_t *ex_cur;		/* ... its descriptor, NULL: none */
	int ex_err;			/* the first error since wr_start() */
};

/*
 * An address handle: the kernel's (it checks the GID), and the vector a
 * UD send descriptor carries (PLDMA_DESC_UD_*), from its response
 */
struct pldma_ah {
	struct ibv_ah ibv_ah;
	uint8_t dmac[6];		/* wire order */
	uint32_t dest_ip;		/* as PLDMA_DESC_UD_DEST_IP holds it */
};

static inline struct pldma_context *to_pctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct pldma_context, vctx.context);
}

static inline struct pldma_cq *to_pcq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct pldma_cq, vcq.cq);
}

static inline struct pldma_qp *to_pqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct pldma_qp, vqp.qp);
}

static inline struct pldma_ah *to_pah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct pldma_ah, ibv_ah);
}

static inline struct pldma_srq *to_psrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct pldma_srq, vsrq.srq);
}

#endif /* PLDMA_PROVIDER_H */
