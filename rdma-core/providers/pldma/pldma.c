// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-core provider for PLDMA: what pldma.ko's ib_device implements, and
 * nothing more: device and port queries, the context (the kernel binds the
 * process's mm to the device by SVA and returns its PASID), PDs and MRs
 * (pinned, or IBV_ACCESS_ON_DEMAND: nothing pinned, the device faults
 * through the PASID; implicit ODP with addr NULL, length SIZE_MAX), CQs
 * (and extended CQs: ibv_start_poll ...), RC, UC and UD QPs (and
 * extended QPs: the ibv_wr_* post-send API), SRQs and AHs (a UD send
 * descriptor carries its AH's address vector).  The data path is here, in user
 * space, through the pages the kernel maps: a work request is a
 * descriptor in the SQ ring (our memory) or a receive WQE in the RQ ring,
 * and one doorbell write per batch (PLDMA_CH_RING_TAIL, PLDMA_CH_RQ_TAIL
 * of the context's channel page, mapped by the context's first QP: the
 * page claims one of the device's few channels, which a context without a
 * QP must not hold), or a receive WQE in an SRQ's ring, made the device's
 * by the TAIL of the ring's doorbell record (memory, not a register);
 * completions are polled from the CQ ring by its owner bit and consumed or
 * armed by a doorbell (PLDMA_CH_CQ_DB).  No system call per work request.
 * Verbs that are absent here (MW, XRC, ...) return EOPNOTSUPP from
 * libibverbs (its default ops), as ib_core does for the kernel's.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "pldma.h"

static int pldma_query_device(struct ibv_context *ctx,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int pldma_query_port(struct ibv_context *ctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *pldma_alloc_pd(struct ibv_context *ctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp,
			     sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int pldma_dealloc_pd(struct ibv_pd *pd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(pd);
	if (ret)
		return ret;
	free(pd);
	return 0;
}

static struct ibv_mr *pldma_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/* Prefetch: the kernel makes an ODP MR's range present (Touch-Ahead) */
static int pldma_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			   uint32_t flags, struct ibv_sge *sg_list,
			   uint32_t num_sge)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

static int pldma_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

/*
 * The channel page at mmap() offset @off of the uverbs file (a QP's, from
 * its create response), mapped once: NULL and errno if it cannot be.
 */
static void *pldma_map_db(struct pldma_context *ctx, uint64_t off)
{
	void *page = NULL;
	unsigned int i;

	pthread_mutex_lock(&ctx->db_lock);
	for (i = 0; i < ctx->ndbs; i++)
		if (ctx->dbs[i].off == off)
			page = ctx->dbs[i].page;
	if (!page && ctx->ndbs == PLDMA_MAX_CHANNELS) {
		errno = EPROTO;
	} else if (!page) {
		page = mmap(NULL, ctx->db_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, ctx->vctx.context.cmd_fd, off);
		if (page == MAP_FAILED) {
			page = NULL;
		} else {
			ctx->dbs[ctx->ndbs].off = off;
			ctx->dbs[ctx->ndbs++].page = page;
			if (!ctx->db)
				__atomic_store_n(&ctx->db, page,
						 __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&ctx->db_lock);
	return page;
}

static uint32_t pldma_db_rd(void *page, uint32_t off)
{
	return le32toh(mmio_read32_le((uint8_t *)page + off));
}

static void pldma_db_wr(void *page, uint32_t off, uint32_t v)
{
	mmio_write32_le((uint8_t *)page + off, htole32(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint32_t get32(const volatile uint8_t *p)
{
	uint32_t v;

	memcpy(&v, (const void *)p, 4);
	return le32toh(v);
}

/* ------------------------------------------------------------------ */
/* CQs                                                                */
/* ------------------------------------------------------------------ */

struct pldma_create_cq_resp_all {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct pldma_create_cq_resp drv;
};

struct pldma_create_cq_ex_resp_all {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct pldma_create_cq_resp drv;
};

/* After the kernel made the CQ: its ring, mapped; errno and -1 if not */
static int pldma_cq_ring(struct pldma_cq *cq, struct ibv_context *ibctx,
			 const struct pldma_create_cq_resp *drv)
{
	cq->idx = drv->cq;
	cq->entries = drv->entries;
	cq->ring_size = drv->mmap_size;
	cq->ring_off = drv->mmap_offset;
	if (!cq->entries || cq->entries & (cq->entries - 1) ||
	    (uint64_t)cq->entries * PLDMA_CQE_SIZE > cq->ring_size) {
		errno = EPROTO;
		return -1;
	}
	cq->ring = mmap(NULL, cq->ring_size, PROT_READ, MAP_SHARED,
			ibctx->cmd_fd, cq->ring_off);
	if (cq->ring == MAP_FAILED) {
		cq->ring = NULL;
		return -1;
	}
	return 0;
}

static struct ibv_cq *pldma_create_cq(struct ibv_context *ibctx, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct pldma_create_cq_resp_all resp = {};
	struct ibv_create_cq cmd = {};
	struct pldma_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		errno = ret;
		goto err_free;
	}
	if (pldma_cq_ring(cq, ibctx, &resp.drv))
		goto err_destroy;
	return &cq->vcq.cq;

err_destroy:
	ret = errno;
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	errno = ret;
err_free:
	free(cq);
	return NULL;
}

static int pldma_destroy_cq(struct ibv_cq *ibcq)
{
	struct pldma_cq *cq = to_pcq(ibcq);
	int ret;

	/* the kernel keeps a mapped ring: unmap first */
	if (cq->ring)
		munmap((void *)cq->ring, cq->ring_size);
	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret) {
		/* still ours: map it again (NULL ring if that fails) */
		cq->ring = mmap(NULL, cq->ring_size, PROT_READ, MAP_SHARED,
				ibcq->context->cmd_fd, cq->ring_off);
		if (cq->ring == MAP_FAILED)
			cq->ring = NULL;
		return ret;
	}
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

/* With cq->lock held */
static void pldma_cq_doorbell(struct pldma_cq *cq, unsigned int cmd)
{
	struct pldma_context *ctx = to_pctx(cq->vcq.cq.context);
	void *db = __atomic_load_n(&ctx->db, __ATOMIC_ACQUIRE);

	if (!db) {
		/* no QP yet, so no CQE: arm when a QP comes */
		if (cmd == PLDMA_CQ_DB_CMD_ARM ||
		    (cmd == PLDMA_CQ_DB_CMD_ARM_SOL && !cq->arm_pending))
			cq->arm_pending = cmd;
		return;
	}
	/* what was read of the ring before the device may reuse it */
	udma_from_device_barrier();
	pldma_db_wr(db, PLDMA_CH_CQ_DB,
		    PLDMA_CQ_DB_MAKE(cmd, cq->idx, cq->ci));
}

/* The channel page is mapped: ring an arm that waited for it */
static void pldma_cq_flush_arm(struct ibv_cq *ibcq)
{
	struct pldma_cq *cq = to_pcq(ibcq);

	pthread_spin_lock(&cq->lock);
	if (cq->arm_pending) {
		pldma_cq_doorbell(cq, cq->arm_pending);
		cq->arm_pending = 0;
	}
	pthread_spin_unlock(&cq->lock);
}

/* The CQE at the consumer index if the device has written it, or NULL */
static const volatile uint8_t *pldma_cqe_next(struct pldma_cq *cq)
{
	const volatile uint8_t *e = cq->ring +
		(size_t)(cq->ci & (cq->entries - 1)) * PLDMA_CQE_SIZE;
	/* the first pass over the ring has owner 1, the next 0, ... */
	uint8_t phase = !((cq->ci / cq->entries) & 1);

	if ((e[PLDMA_CQE_OWNER] & 1) != phase)
		return NULL;
	/* the owner byte before the rest of the entry */
	udma_from_device_barrier();
	return e;
}

static int pldma_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct pldma_cq *cq = to_pcq(ibcq);
	int got = 0;

	pthread_spin_lock(&cq->lock);
	while (got < ne) {
		const volatile uint8_t *e = pldma_cqe_next(cq);
		struct ibv_wc *w = &wc[got];
		uint64_t wr_id;
		uint32_t imm;

		if (!e)
			break;
		memset(w, 0, sizeof(*w));
		memcpy(&wr_id, (const void *)(e + PLDMA_CQE_WR_ID), 8);
		w->wr_id = le64toh(wr_id);
		w->status = e[PLDMA_CQE_STATUS];
		w->opcode = e[PLDMA_CQE_OPCODE];
		w->vendor_err = get32(e + PLDMA_CQE_VENDOR_ERR);
		w->byte_len = get32(e + PLDMA_CQE_BYTE_LEN);
		w->qp_num = get32(e + PLDMA_CQE_QPN);
		w->src_qp = get32(e + PLDMA_CQE_SRC_QP);
		if (e[PLDMA_CQE_FLAGS] & PLDMA_CQE_F_IMM) {
			/* as on the wire: verbs' __be32 */
			memcpy(&imm, (const void *)(e + PLDMA_CQE_IMM), 4);
			w->imm_data = imm;
			w->wc_flags |= IBV_WC_WITH_IMM;
		}
		/*
		 * a UD receive: the buffer starts with the GRH (40 bytes, the
		 * IPv4 header in its last 20); slid, sl, pkey_index 0
		 */
		if (e[PLDMA_CQE_FLAGS] & PLDMA_CQE_F_GRH)
			w->wc_flags |= IBV_WC_GRH;
		cq->ci = (cq->ci + 1) & 0xffffff;
		got++;
	}
	if (got)
		pldma_cq_doorbell(cq, PLDMA_CQ_DB_CMD_CI);
	pthread_spin_unlock(&cq->lock);
	return got;
}

static int pldma_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct pldma_cq *cq = to_pcq(ibcq);

	pthread_spin_lock(&cq->lock);
	pldma_cq_doorbell(cq, solicited_only ? PLDMA_CQ_DB_CMD_ARM_SOL :
					       PLDMA_CQ_DB_CMD_ARM);
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/*
 * Extended CQs (ibv_create_cq_ex): the same ring, polled one entry at a
 * time (start_poll, next_poll, end_poll) and read field by field.  The
 * entry being read is consumed by the next next_poll() or end_poll(),
 * which also reports the consumer index; the lock is held from a
 * start_poll() that found an entry to the end_poll().
 */
#define PLDMA_WC_FLAGS	IBV_WC_STANDARD_FLAGS

static struct pldma_cq *ex_to_pcq(struct ibv_cq_ex *cqx)
{
	return to_pcq(ibv_cq_ex_to_cq(cqx));
}

static int pldma_cqx_load(struct pldma_cq *cq)
{
	const volatile uint8_t *e = pldma_cqe_next(cq);
	uint64_t wr_id;

	cq->cur = e;
	if (!e)
		return ENOENT;
	memcpy(&wr_id, (const void *)(e + PLDMA_CQE_WR_ID), 8);
	cq->vcq.cq_ex.wr_id = le64toh(wr_id);
	cq->vcq.cq_ex.status = e[PLDMA_CQE_STATUS];
	return 0;
}

static int pldma_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct pldma_cq *cq = ex_to_pcq(cqx);

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	cq->consumed = 0;
	if (pldma_cqx_load(cq)) {
		pthread_spin_unlock(&cq->lock);
		return ENOENT;
	}
	return 0;
}

static int pldma_next_poll(struct ibv_cq_ex *cqx)
{
	struct pldma_cq *cq = ex_to_pcq(cqx);

	if (cq->cur) {
		cq->ci = (cq->ci + 1) & 0xffffff;
		cq->consumed++;
	}
	return pldma_cqx_load(cq);
}

static void pldma_end_poll(struct ibv_cq_ex *cqx)
{
	struct pldma_cq *cq = ex_to_pcq(cqx);

	if (cq->cur) {
		cq->ci = (cq->ci + 1) & 0xffffff;
		cq->consumed++;
		cq->cur = NULL;
	}
	if (cq->consumed)
		pldma_cq_doorbell(cq, PLDMA_CQ_DB_CMD_CI);
	pthread_spin_unlock(&cq->lock);
}

/* a CQE's opcode and status are verbs' (pldma-regs.h's PLDMA_WC_*) */
static_assert(PLDMA_WC_SEND == IBV_WC_SEND &&
	      PLDMA_WC_RDMA_WRITE == IBV_WC_RDMA_WRITE &&
	      PLDMA_WC_RDMA_READ == IBV_WC_RDMA_READ &&
	      PLDMA_WC_COMP_SWAP == IBV_WC_COMP_SWAP &&
	      PLDMA_WC_FETCH_ADD == IBV_WC_FETCH_ADD &&
	      PLDMA_WC_FLUSH == IBV_WC_FLUSH &&
	      PLDMA_WC_ATOMIC_WRITE == IBV_WC_ATOMIC_WRITE &&
	      PLDMA_WC_RECV == IBV_WC_RECV &&
	      PLDMA_WC_RECV_RDMA_WITH_IMM == IBV_WC_RECV_RDMA_WITH_IMM,
	      "CQE opcodes are verbs' work completion opcodes");
static_assert(PLDMA_WC_ST_LOC_LEN_ERR == IBV_WC_LOC_LEN_ERR &&
	      PLDMA_WC_ST_LOC_QP_OP_ERR == IBV_WC_LOC_QP_OP_ERR &&
	      PLDMA_WC_ST_LOC_PROT_ERR == IBV_WC_LOC_PROT_ERR &&
	      PLDMA_WC_ST_WR_FLUSH_ERR == IBV_WC_WR_FLUSH_ERR &&
	      PLDMA_WC_ST_REM_INV_REQ_ERR == IBV_WC_REM_INV_REQ_ERR &&
	      PLDMA_WC_ST_REM_ACCESS_ERR == IBV_WC_REM_ACCESS_ERR &&
	      PLDMA_WC_ST_REM_OP_ERR == IBV_WC_REM_OP_ERR &&
	      PLDMA_WC_ST_RETRY_EXC_ERR == IBV_WC_RETRY_EXC_ERR &&
	      PLDMA_WC_ST_RNR_RETRY_EXC_ERR == IBV_WC_RNR_RETRY_EXC_ERR &&
	      PLDMA_WC_ST_GENERAL_ERR == IBV_WC_GENERAL_ERR,
	      "CQE statuses are verbs' work completion statuses");

static enum ibv_wc_opcode pldma_read_opcode(struct ibv_cq_ex *cqx)
{
	return ex_to_pcq(cqx)->cur[PLDMA_CQE_OPCODE];
}

static uint32_t pldma_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return get32(ex_to_pcq(cqx)->cur + PLDMA_CQE_VENDOR_ERR);
}

static uint32_t pldma_read_byte_len(struct ibv_cq_ex *cqx)
{
	return get32(ex_to_pcq(cqx)->cur + PLDMA_CQE_BYTE_LEN);
}

static __be32 pldma_read_imm_data(struct ibv_cq_ex *cqx)
{
	__be32 imm;

	/* as on the wire: verbs' __be32 */
	memcpy(&imm, (const void *)(ex_to_pcq(cqx)->cur + PLDMA_CQE_IMM), 4);
	return imm;
}

static uint32_t pldma_read_qp_num(struct ibv_cq_ex *cqx)
{
	return get32(ex_to_pcq(cqx)->cur + PLDMA_CQE_QPN);
}

static uint32_t pldma_read_src_qp(struct ibv_cq_ex *cqx)
{
	return get32(ex_to_pcq(cqx)->cur + PLDMA_CQE_SRC_QP);
}

static unsigned int pldma_read_wc_flags(struct ibv_cq_ex *cqx)
{
	uint8_t f = ex_to_pcq(cqx)->cur[PLDMA_CQE_FLAGS];

	return (f & PLDMA_CQE_F_IMM ? IBV_WC_WITH_IMM : 0) |
	       (f & PLDMA_CQE_F_GRH ? IBV_WC_GRH : 0);
}

/* InfiniBand link fields: none on a RoCE port */
static uint32_t pldma_read_slid(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint8_t pldma_read_sl(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint8_t pldma_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return 0;
}

static struct ibv_cq_ex *pldma_create_cq_ex(struct ibv_context *ibctx,
					    struct ibv_cq_init_attr_ex *attr)
{
	struct pldma_create_cq_ex_resp_all resp = {};
	struct ibv_create_cq_ex cmd = {};
	struct ibv_cq_ex *cqx;
	struct pldma_cq *cq;
	int ret;

	if (attr->comp_mask || attr->wc_flags & ~(uint64_t)PLDMA_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp), 0);
	if (ret) {
		errno = ret;
		goto err_free;
	}
	if (pldma_cq_ring(cq, ibctx, &resp.drv))
		goto err_destroy;
	cqx = &cq->vcq.cq_ex;
	cqx->start_poll = pldma_start_poll;
	cqx->next_poll = pldma_next_poll;
	cqx->end_poll = pldma_end_poll;
	cqx->read_opcode = pldma_read_opcode;
	cqx->read_vendor_err = pldma_read_vendor_err;
	cqx->read_wc_flags = pldma_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = pldma_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = pldma_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = pldma_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = pldma_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = pldma_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = pldma_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = pldma_read_dlid_path_bits;
	return cqx;

err_destroy:
	ret = errno;
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	errno = ret;
err_free:
	free(cq);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* QPs                                                                */
/* ------------------------------------------------------------------ */

struct pldma_create_qp_resp_all {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct pldma_create_qp_resp drv;
};

static struct pldma_qp *pldma_create_qp_common(struct ibv_context *ibctx,
					       struct ibv_qp_init_attr_ex *attr)
{
	struct pldma_context *ctx = to_pctx(ibctx);
	struct pldma_create_qp_resp_all resp = {};
	struct ibv_create_qp cmd = {};
	struct pldma_qp *qp;
	uint64_t base;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	if (ret) {
		errno = ret;
		goto err_free;
	}
	qp->sq_entries = resp.drv.sq_entries;
	qp->rq_entries = resp.drv.rq_entries;
	qp->rq_size = resp.drv.rq_mmap_size;
	qp->sq_sig_all = attr->sq_sig_all;
	if (qp->sq_entries < PLDMA_RING_MIN_ENTRIES ||
	    qp->sq_entries > PLDMA_RING_MAX_ENTRIES ||
	    qp->sq_entries & (qp->sq_entries - 1) ||
	    (uint64_t)qp->rq_entries * PLDMA_RWQE_SIZE > qp->rq_size) {
		errno = EPROTO;
		goto err_destroy;
	}
	/* the SQ ring: descriptors in our memory, the channel runs them */
	if (posix_memalign((void **)&qp->sq, 4096,
			   (size_t)qp->sq_entries * PLDMA_DESC_SIZE)) {
		errno = ENOMEM;
		goto err_destroy;
	}
	memset(qp->sq, 0, (size_t)qp->sq_entries * PLDMA_DESC_SIZE);
	if (posix_memalign((void **)&qp->sgl, 4096, (size_t)qp->sq_entries *
			   PLDMA_DESC_MAX_SGE * PLDMA_SGE_SIZE)) {
		errno = ENOMEM;
		goto err_sq;
	}
	qp->max_inline = resp.drv.max_inline;
	qp->ud_max_msg = resp.drv.ud_max_msg;
	if (qp->max_inline > PLDMA_IB_MAX_INLINE ||
	    (attr->qp_type == IBV_QPT_UD && !qp->ud_max_msg)) {
		errno = EPROTO;
		goto err_sq;
	}
	if (qp->max_inline &&
	    posix_memalign((void **)&qp->inl, 4096,
			   (size_t)qp->sq_entries * qp->max_inline)) {
		errno = ENOMEM;
		goto err_sq;
	}
	/* the QP's channel: its page */
	if (resp.drv.db_mmap_size != ctx->db_size) {
		errno = EPROTO;
		goto err_sq;
	}
	qp->db = pldma_map_db(ctx, resp.drv.db_mmap_offset);
	if (!qp->db)
		goto err_sq;
	pldma_cq_flush_arm(attr->send_cq);
	pldma_cq_flush_arm(attr->recv_cq);
	/* the channel is idle (HEAD == TAIL), perhaps after an earlier QP */
	if (pldma_db_rd(qp->db, PLDMA_CH_RING_TAIL) !=
	    pldma_db_rd(qp->db, PLDMA_CH_RING_HEAD)) {
		errno = EBUSY;
		goto err_sq;
	}
	base = (uintptr_t)qp->sq;
	pldma_db_wr(qp->db, PLDMA_CH_RING_BASE_LO, (uint32_t)base);
	pldma_db_wr(qp->db, PLDMA_CH_RING_BASE_HI, (uint32_t)(base >> 32));
	/*
	 * A ring size starts the ring over (HEAD = TAIL = 0): our first
	 * descriptor goes to slot 0, not to the TAIL an earlier QP of this
	 * channel left, or the device would run the zeroed slots before it
	 */
	pldma_db_wr(qp->db, PLDMA_CH_RING_SIZE, qp->sq_entries);
	qp->sq_tail = pldma_db_rd(qp->db, PLDMA_CH_RING_TAIL);
	if (qp->sq_tail != 0 ||
	    pldma_db_rd(qp->db, PLDMA_CH_RING_SIZE) != qp->sq_entries) {
		errno = EBUSY;
		goto err_sq;
	}
	if (qp->rq_size) {
		qp->rq = mmap(NULL, qp->rq_size, PROT_READ | PROT_WRITE,
			      MAP_SHARED, ibctx->cmd_fd,
			      resp.drv.rq_mmap_offset);
		if (qp->rq == MAP_FAILED)
			goto err_sq;
	}
	attr->cap.max_send_wr = qp->sq_entries - 1;
	attr->cap.max_recv_wr = qp->rq_entries ? qp->rq_entries - 1 : 0;
	attr->cap.max_send_sge = PLDMA_DESC_MAX_SGE;
	/* a QP of an SRQ has no receive queue of its own */
	attr->cap.max_recv_sge = attr->srq ? 0 : PLDMA_RWQE_MAX_SGE;
	attr->cap.max_inline_data = qp->max_inline;
	return qp;

err_sq:
	free(qp->inl);
	free(qp->sgl);
	free(qp->sq);
err_destroy:
	ret = errno;
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	errno = ret;
err_free:
	free(qp);
	return NULL;
}

static struct ibv_qp *pldma_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ax = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct pldma_qp *qp = pldma_create_qp_common(pd->context, &ax);

	if (!qp)
		return NULL;
	attr->cap = ax.cap;
	return &qp->vqp.qp;
}

/* The device's descriptor opcodes (pldma-regs.h), one row each */
static const struct {
	const char *name;
	unsigned int flags, wc;
} pldma_op_info[PLDMA_OP_TABLE_SIZE] = PLDMA_OP_TABLE;

/*
 * Start the descriptor of SQ slot @slot, for both post-send APIs: opcode,
 * flags (EINVAL: a send flag the device does not have; IBV_SEND_INLINE
 * is the provider's, pldma_desc_inline()) and wr_id as its cookie; *@dp
 * the descriptor
 */
static int pldma_desc_begin(struct pldma_qp *qp, uint32_t slot, uint8_t op,
			    uint64_t wr_id, unsigned int send_flags,
			    uint8_t **dp)
{
	uint8_t *d = qp->sq + (size_t)slot * PLDMA_DESC_SIZE, flags = 0;

	if (send_flags & ~(IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
			   IBV_SEND_FENCE | IBV_SEND_INLINE))
		return EINVAL;
	/* UC: SEND and RDMA WRITE only (the ops that carry their data) */
	if (qp->vqp.qp.qp_type == IBV_QPT_UC &&
	    (pldma_op_info[op].flags & (PLDMA_OPF_REMOTE | PLDMA_OPF_PAYLOAD)) ==
	    PLDMA_OPF_REMOTE)
		return EINVAL;
	/* UD: SEND and SEND with immediate only */
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && op != PLDMA_OP_SEND &&
	    op != PLDMA_OP_SEND_IMM)
		return EINVAL;
	if (qp->sq_sig_all || send_flags & IBV_SEND_SIGNALED)
		flags |= PLDMA_DF_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		flags |= PLDMA_DF_SOLICITED;
	memset(d, 0, PLDMA_DESC_SIZE);
	d[PLDMA_DESC_OPCODE] = op;
	d[PLDMA_DESC_FLAGS] = flags;
	put64(d + PLDMA_DESC_COOKIE, wr_id);
	*dp = d;
	return 0;
}

/*
 * The local buffers of descriptor @d (slot @slot): one SGE in place, more
 * through the slot's list, which the device reads until the request is
 * done (PLDMA_DESC_NUM_SGE); EINVAL beyond PLDMA_DESC_MAX_SGE entries or
 * the device's max transfer
 */
static int pldma_desc_sges(struct pldma_qp *qp, struct pldma_context *ctx,
			   uint32_t slot, uint8_t *d, size_t n,
			   const struct ibv_sge *sg)
{
	uint8_t *list = qp->sgl + (size_t)slot * PLDMA_DESC_MAX_SGE *
				  PLDMA_SGE_SIZE, *e = list;
	uint64_t addr = 0, len = 0;
	size_t i;

	if (n > PLDMA_DESC_MAX_SGE)
		return EINVAL;
	if (n == 1) {
		addr = sg[0].addr;
		len = sg[0].length;
	} else if (n > 1) {
		for (i = 0; i < n; i++, e += PLDMA_SGE_SIZE) {
			put64(e + PLDMA_SGE_ADDR, sg[i].addr);
			put32(e + PLDMA_SGE_LEN, sg[i].length);
			put32(e + PLDMA_SGE_LKEY, sg[i].lkey);
			len += sg[i].length;
		}
		addr = (uintptr_t)list;
		d[PLDMA_DESC_NUM_SGE] = n;
	}
	/* (a UD datagram is one packet: at most the MTU) */
	if (len > ctx->max_xfer || (qp->ud_max_msg && len > qp->ud_max_msg))
		return EINVAL;
	put32(d + PLDMA_DESC_LEN, len);
	/* what is sent comes from SRC; what comes back (READ, atomic) to DST */
	put64(d + (pldma_op_info[d[PLDMA_DESC_OPCODE]].flags &
		   PLDMA_OPF_PAYLOAD ? PLDMA_DESC_SRC : PLDMA_DESC_DST), addr);
	return 0;
}

/*
 * Inline data for descriptor @d (slot @slot): @n buffers copied into the
 * slot's own buffer now, which the descriptor then points at, so the
 * caller may reuse them as soon as the post returns; the lkeys are not
 * used.  EINVAL beyond max_inline bytes or for a READ (nothing to send).
 */
static int pldma_desc_inline(struct pldma_qp *qp, uint32_t slot, uint8_t *d,
			     size_t n, const struct ibv_data_buf *buf)
{
	uint8_t *p = qp->inl + (size_t)slot * qp->max_inline;
	size_t i, len = 0;

	if (!qp->max_inline ||
	    !(pldma_op_info[d[PLDMA_DESC_OPCODE]].flags & PLDMA_OPF_PAYLOAD))
		return EINVAL;
	for (i = 0; i < n; i++) {
		if (buf[i].length > qp->max_inline - len)
			return EINVAL;
		memcpy(p + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	if (qp->ud_max_msg && len > qp->ud_max_msg)
		return EINVAL;
	put32(d + PLDMA_DESC_LEN, len);
	put64(d + PLDMA_DESC_SRC, (uintptr_t)p);
	d[PLDMA_DESC_NUM_SGE] = 0;
	return 0;
}

/* ... from a gather list (ibv_post_send()'s IBV_SEND_INLINE) */
static int pldma_desc_inline_sges(struct pldma_qp *qp, uint32_t slot,
				  uint8_t *d, int n, const struct ibv_sge *sg)
{
	struct ibv_data_buf buf[PLDMA_DESC_MAX_SGE];
	int i;

	if (n > PLDMA_DESC_MAX_SGE)
		return EINVAL;
	for (i = 0; i < n; i++)
		buf[i] = (struct ibv_data_buf){
			.addr = (void *)(uintptr_t)sg[i].addr,
			.length = sg[i].length,
		};
	return pldma_desc_inline(qp, slot, d, n, buf);
}

/*
 * The new post-send API (ibv_qp_ex, ibv_wr_*): a work request is built
 * in its SQ slot by the calls that name it (an opcode, then its SGEs), and
 * wr_complete() rings the doorbell once for all of them.  An error in any
 * (a full ring, too many SGEs, too much inline data) is kept until
 * wr_complete(),
 * which then drops every request since wr_start() and returns it.
 */
#define PLDMA_SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_WRITE |			\
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		\
			 IBV_QP_EX_WITH_RDMA_READ |			\
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |		\
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |		\
			 IBV_QP_EX_WITH_ATOMIC_WRITE |			\
			 IBV_QP_EX_WITH_FLUSH)

static struct pldma_qp *ex_to_pqp(struct ibv_qp_ex *qpx)
{
	return to_pqp(&qpx->qp_base);
}

static void pldma_wr_start(struct ibv_qp_ex *qpx)
{
	struct pldma_qp *qp = ex_to_pqp(qpx);

	pthread_spin_lock(&qp->sq_lock);
	qp->ex_start = qp->sq_tail;
	qp->ex_head = pldma_db_rd(qp->db, PLDMA_CH_RING_HEAD);
	/* (no send before RTS: as post_send) */
	qp->ex_err = qpx->qp_base.state < IBV_QPS_RTS ? EINVAL : 0;
	qp->ex_cur = NULL;
}

/* A new request of @op in the next slot (NULL: an error, kept) */
static uint8_t *pldma_wr_new(struct ibv_qp_ex *qpx, uint8_t op)
{
	struct pldma_qp *qp = ex_to_pqp(qpx);
	uint32_t next = (qp->sq_tail + 1) & (qp->sq_entries - 1);
	uint8_t *d;

	qp->ex_cur = NULL;
	if (qp->ex_err)
		return NULL;
	if (next == qp->ex_head) {
		qp->ex_head = pldma_db_rd(qp->db, PLDMA_CH_RING_HEAD);
		if (next == qp->ex_head) {
			qp->ex_err = ENOMEM;
			return NULL;
		}
	}
	qp->ex_err = pldma_desc_begin(qp, qp->sq_tail, op, qpx->wr_id,
				      qpx->wr_flags, &d);
	if (qp->ex_err)
		return NULL;
	qp->ex_slot = qp->sq_tail;
	qp->sq_tail = next;
	qp->ex_cur = d;
	return d;
}

static void pldma_wr_send(struct ibv_qp_ex *qpx)
{
	pldma_wr_new(qpx, PLDMA_OP_SEND);
}

static void pldma_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	uint8_t *d = pldma_wr_new(qpx, PLDMA_OP_SEND_IMM);

	if (d)
		memcpy(d + PLDMA_DESC_IMM, &imm, 4);
}

static void pldma_wr_remote(struct ibv_qp_ex *qpx, uint8_t op, uint32_t rkey,
			    uint64_t raddr, const __be32 *imm)
{
	uint8_t *d = pldma_wr_new(qpx, op);

	if (!d)
		return;
	put64(d + PLDMA_DESC_REMOTE_VA, raddr);
	put32(d + PLDMA_DESC_RKEY, rkey);
	if (imm)
		memcpy(d + PLDMA_DESC_IMM, imm, 4);
}

static void pldma_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t raddr)
{
	pldma_wr_remote(qpx, PLDMA_OP_RDMA_WRITE, rkey, raddr, NULL);
}

static void pldma_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t raddr, __be32 imm)
{
	pldma_wr_remote(qpx, PLDMA_OP_RDMA_WRITE_IMM, rkey, raddr, &imm);
}

static void pldma_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t raddr)
{
	pldma_wr_remote(qpx, PLDMA_OP_RDMA_READ, rkey, raddr, NULL);
}

/*
 * An atomic's operands (PLDMA_DESC_ATOMIC_*): SRC is the compare value
 * or the addend, not an address; the 8 bytes found go to the SGE (DST)
 */
static void pldma_desc_atomic(uint8_t *d, uint32_t rkey, uint64_t raddr,
			      uint64_t cmp_add, uint64_t swap)
{
	put64(d + PLDMA_DESC_REMOTE_VA, raddr);
	put32(d + PLDMA_DESC_RKEY, rkey);
	put64(d + PLDMA_DESC_ATOMIC_CMP_ADD, cmp_add);
	put64(d + PLDMA_DESC_ATOMIC_SWAP, swap);
}

/*
 * A UD send's address vector (PLDMA_DESC_UD_*), in the fields a SEND
 * leaves alone: the AH's MAC and IPv4 address, the destination QP and its
 * Q_Key (bit 31 set: the device sends the QP's own, IBA 10.2.5)
 */
static void pldma_desc_ud(uint8_t *d, struct ibv_ah *ah, uint32_t remote_qpn,
			  uint32_t remote_qkey)
{
	struct pldma_ah *pah = to_pah(ah);

	memset(d + PLDMA_DESC_UD_DMAC, 0, 8);
	memcpy(d + PLDMA_DESC_UD_DMAC, pah->dmac, 6);
	put32(d + PLDMA_DESC_UD_DEST_IP, pah->dest_ip);
	put32(d + PLDMA_DESC_UD_QKEY, remote_qkey);
	put32(d + PLDMA_DESC_UD_DEST_QPN, remote_qpn & 0xffffff);
}

static void pldma_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct pldma_qp *qp = ex_to_pqp(qpx);

	if (!qp->ex_cur || qp->ex_err)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_UD || !ah)
		qp->ex_err = EINVAL;
	else
		pldma_desc_ud(qp->ex_cur, ah, remote_qpn, remote_qkey);
}

static void pldma_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t raddr, uint64_t compare,
				    uint64_t swap)
{
	uint8_t *d = pldma_wr_new(qpx, PLDMA_OP_ATOMIC_CMP_SWAP);

	if (d)
		pldma_desc_atomic(d, rkey, raddr, compare, swap);
}

static void pldma_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				      uint64_t raddr, uint64_t add)
{
	uint8_t *d = pldma_wr_new(qpx, PLDMA_OP_ATOMIC_FETCH_ADD);

	if (d)
		pldma_desc_atomic(d, rkey, raddr, add, 0);
}

/*
 * IBA 1.5's Atomic Write: the 8 bytes at @atomic_wr, as they are, in the
 * descriptor (PLDMA_OP_ATOMIC_WRITE); no SGE, nothing comes back
 */
static void pldma_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t raddr, const void *atomic_wr)
{
	uint8_t *d = pldma_wr_new(qpx, PLDMA_OP_ATOMIC_WRITE);

	if (!d)
		return;
	pldma_desc_atomic(d, rkey, raddr, 0, 0);
	memcpy(d + PLDMA_DESC_ATOMIC_CMP_ADD, atomic_wr, PLDMA_ATOMIC_LEN);
	put32(d + PLDMA_DESC_LEN, PLDMA_ATOMIC_LEN);
}

/*
 * IBA 1.5's FLUSH: the FETH's bits (PLDMA_DESC_FLUSH) are verbs' type
 * and, above them, its level
 */
static_assert(PLDMA_FLUSH_GLOBAL == IBV_FLUSH_GLOBAL &&
	      PLDMA_FLUSH_PERSISTENT == IBV_FLUSH_PERSISTENT &&
	      PLDMA_FLUSH_MR == IBV_FLUSH_MR << 4, "FETH bits are verbs'");

static void pldma_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			   uint64_t raddr, size_t len, uint8_t type,
			   uint8_t level)
{
	struct pldma_qp *qp = ex_to_pqp(qpx);
	uint8_t *d = pldma_wr_new(qpx, PLDMA_OP_FLUSH);

	if (!d)
		return;
	if (len > UINT32_MAX || level > IBV_FLUSH_MR) {
		qp->ex_err = EINVAL;
		return;
	}
	put64(d + PLDMA_DESC_REMOTE_VA, raddr);
	put32(d + PLDMA_DESC_RKEY, rkey);
	put32(d + PLDMA_DESC_LEN, len);
	put32(d + PLDMA_DESC_FLUSH, type | (uint32_t)level << 4);
}

static void pldma_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				  const struct ibv_sge *sg)
{
	struct pldma_qp *qp = ex_to_pqp(qpx);

	/* (after an error every call until wr_complete() is a no-op) */
	if (qp->ex_cur && !qp->ex_err)
		qp->ex_err = pldma_desc_sges(qp, to_pctx(qpx->qp_base.context),
					     qp->ex_slot, qp->ex_cur, num_sge,
					     sg);
}

static void pldma_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	pldma_wr_set_sge_list(qpx, 1, &sge);
}

static void pldma_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					  size_t num_buf,
					  const struct ibv_data_buf *buf)
{
	struct pldma_qp *qp = ex_to_pqp(qpx);

	if (qp->ex_cur && !qp->ex_err)
		qp->ex_err = pldma_desc_inline(qp, qp->ex_slot, qp->ex_cur,
					       num_buf, buf);
}

static void pldma_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	pldma_wr_set_inline_data_list(qpx, 1, &buf);
}

static void pldma_wr_abort(struct ibv_qp_ex *qpx)
{
	struct pldma_qp *qp = ex_to_pqp(qpx);

	qp->sq_tail = qp->ex_start;
	pthread_spin_unlock(&qp->sq_lock);
}

static int pldma_wr_complete(struct ibv_qp_ex *qpx)
{
	struct pldma_qp *qp = ex_to_pqp(qpx);
	int ret = qp->ex_err;

	if (ret) {
		qp->sq_tail = qp->ex_start;
	} else if (qp->sq_tail != qp->ex_start) {
		/* the descriptors before the doorbell */
		udma_to_device_barrier();
		pldma_db_wr(qp->db, PLDMA_CH_RING_TAIL, qp->sq_tail);
	}
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

static struct ibv_qp *pldma_create_qp_ex(struct ibv_context *ibctx,
					 struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_ex *qpx;
	struct pldma_qp *qp;

	if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS &&
	     attr->send_ops_flags & ~PLDMA_SEND_OPS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	qp = pldma_create_qp_common(ibctx, attr);
	if (!qp)
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qpx = &qp->vqp.qp_ex;
		qpx->wr_send = pldma_wr_send;
		qpx->wr_send_imm = pldma_wr_send_imm;
		qpx->wr_rdma_write = pldma_wr_rdma_write;
		qpx->wr_rdma_write_imm = pldma_wr_rdma_write_imm;
		qpx->wr_rdma_read = pldma_wr_rdma_read;
		qpx->wr_atomic_cmp_swp = pldma_wr_atomic_cmp_swp;
		qpx->wr_atomic_fetch_add = pldma_wr_atomic_fetch_add;
		qpx->wr_atomic_write = pldma_wr_atomic_write;
		qpx->wr_flush = pldma_wr_flush;
		qpx->wr_set_sge = pldma_wr_set_sge;
		qpx->wr_set_sge_list = pldma_wr_set_sge_list;
		qpx->wr_set_inline_data = pldma_wr_set_inline_data;
		qpx->wr_set_inline_data_list = pldma_wr_set_inline_data_list;
		qpx->wr_set_ud_addr = pldma_wr_set_ud_addr;
		qpx->wr_start = pldma_wr_start;
		qpx->wr_complete = pldma_wr_complete;
		qpx->wr_abort = pldma_wr_abort;
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return &qp->vqp.qp;
}

static int pldma_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			   int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

static int pldma_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int pldma_destroy_qp(struct ibv_qp *ibqp)
{
	struct pldma_qp *qp = to_pqp(ibqp);
	int ret;

	/* the kernel keeps a mapped RQ ring: unmap first */
	if (qp->rq_size)
		munmap(qp->rq, qp->rq_size);
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	free(qp->inl);
	free(qp->sgl);
	free(qp->sq);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	return 0;
}

static int pldma_send_desc(struct pldma_qp *qp, struct pldma_context *ctx,
			   const struct ibv_send_wr *wr, uint32_t slot)
{
	uint8_t *d, op;
	int ret;

	switch (wr->opcode) {
	case IBV_WR_SEND:
		op = PLDMA_OP_SEND;
		break;
	case IBV_WR_SEND_WITH_IMM:
		op = PLDMA_OP_SEND_IMM;
		break;
	case IBV_WR_RDMA_WRITE:
		op = PLDMA_OP_RDMA_WRITE;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		op = PLDMA_OP_RDMA_WRITE_IMM;
		break;
	case IBV_WR_RDMA_READ:
		op = PLDMA_OP_RDMA_READ;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		op = PLDMA_OP_ATOMIC_CMP_SWAP;
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		op = PLDMA_OP_ATOMIC_FETCH_ADD;
		break;
	default:
		return EINVAL;
	}
	if (wr->num_sge < 0)
		return EINVAL;
	ret = pldma_desc_begin(qp, slot, op, wr->wr_id, wr->send_flags, &d);
	if (ret)
		return ret;
	if (wr->send_flags & IBV_SEND_INLINE)
		ret = pldma_desc_inline_sges(qp, slot, d, wr->num_sge,
					     wr->sg_list);
	else
		ret = pldma_desc_sges(qp, ctx, slot, d, wr->num_sge,
				      wr->sg_list);
	if (ret)
		return ret;
	if (pldma_op_info[op].flags & PLDMA_OPF_ATOMIC) {
		pldma_desc_atomic(d, wr->wr.atomic.rkey,
				  wr->wr.atomic.remote_addr,
				  wr->wr.atomic.compare_add,
				  op == PLDMA_OP_ATOMIC_CMP_SWAP ?
				  wr->wr.atomic.swap : 0);
	} else if (pldma_op_info[op].flags & PLDMA_OPF_RKEY) {
		put64(d + PLDMA_DESC_REMOTE_VA, wr->wr.rdma.remote_addr);
		put32(d + PLDMA_DESC_RKEY, wr->wr.rdma.rkey);
	}
	/* as on the wire: verbs' __be32, stored as it is */
	if (pldma_op_info[op].flags & PLDMA_OPF_IMM)
		memcpy(d + PLDMA_DESC_IMM, &wr->imm_data, 4);
	/* a datagram names its destination */
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		pldma_desc_ud(d, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
			      wr->wr.ud.remote_qkey);
	}
	return 0;
}

static int pldma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	struct pldma_context *ctx = to_pctx(ibqp->context);
	struct pldma_qp *qp = to_pqp(ibqp);
	uint32_t mask = qp->sq_entries - 1, head, next;
	int ret = 0, n = 0;

	/*
	 * Not before RTS (the state libibverbs keeps from ibv_modify_qp, as
	 * mlx5 reads it): the device would run a descriptor of a QP that
	 * cannot send
	 */
	if (ibqp->state < IBV_QPS_RTS) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq_lock);
	head = pldma_db_rd(qp->db, PLDMA_CH_RING_HEAD);
	for (; wr; wr = wr->next) {
		next = (qp->sq_tail + 1) & mask;
		if (next == head) {
			/* full as last seen: look again once */
			head = pldma_db_rd(qp->db, PLDMA_CH_RING_HEAD);
			if (next == head) {
				ret = ENOMEM;
				break;
			}
		}
		ret = pldma_send_desc(qp, ctx, wr, qp->sq_tail);
		if (ret)
			break;
		qp->sq_tail = next;
		n++;
	}
	if (ret)
		*bad_wr = wr;
	if (n) {
		/* the descriptors before the doorbell */
		udma_to_device_barrier();
		pldma_db_wr(qp->db, PLDMA_CH_RING_TAIL, qp->sq_tail);
	}
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

/* A receive WQE (PLDMA_RWQE_*) for @wr at @w, of an RQ or an SRQ */
static void pldma_rwqe_fill(uint8_t *w, const struct ibv_recv_wr *wr)
{
	int i;

	memset(w, 0, PLDMA_RWQE_SIZE);
	put64(w + PLDMA_RWQE_WR_ID, wr->wr_id);
	put32(w + PLDMA_RWQE_NUM_SGE, wr->num_sge);
	for (i = 0; i < wr->num_sge; i++) {
		put64(w + PLDMA_RWQE_SGE(i) + PLDMA_SGE_ADDR,
		      wr->sg_list[i].addr);
		put32(w + PLDMA_RWQE_SGE(i) + PLDMA_SGE_LEN,
		      wr->sg_list[i].length);
		put32(w + PLDMA_RWQE_SGE(i) + PLDMA_SGE_LKEY,
		      wr->sg_list[i].lkey);
	}
}

/*
 * Write @wr's WQEs at *@tail of the receive ring @wqes of @entries while it
 * has room: it is full when TAIL + 1 is the HEAD @head(@arg) reports,
 * read again once before ENOMEM.  *@n: the WQEs written; 0, or the errno
 * of the first work request not posted (*@bad_wr).  The caller hands
 * them to the device.
 */
static int pldma_recv_ring_fill(uint8_t *wqes, uint32_t entries,
				uint32_t *tail, uint32_t (*head)(void *),
				void *arg, struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr, int *n)
{
	uint32_t mask = entries - 1, h = head(arg), next;

	for (*n = 0; wr; wr = wr->next) {
		next = (*tail + 1) & mask;
		if (next == h) {
			h = head(arg);
			if (next == h)
				break;
		}
		if (wr->num_sge < 0 || wr->num_sge > PLDMA_RWQE_MAX_SGE) {
			*bad_wr = wr;
			return EINVAL;
		}
		pldma_rwqe_fill(wqes + (size_t)*tail * PLDMA_RWQE_SIZE, wr);
		*tail = next;
		(*n)++;
	}
	if (!wr)
		return 0;
	*bad_wr = wr;
	return ENOMEM;
}

/* The RQ's HEAD, as the QP's channel page reads it */
static uint32_t pldma_qp_rq_head(void *arg)
{
	struct pldma_qp *qp = arg;

	return pldma_db_rd(qp->db, PLDMA_CH_RQ_HEAD);
}

static int pldma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct pldma_qp *qp = to_pqp(ibqp);
	int ret, n;

	/*
	 * a QP of an SRQ receives what is posted to the SRQ (verbs: EINVAL);
	 * nor does a QP in RESET take receives
	 */
	if (ibqp->srq || !qp->rq_entries || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq_lock);
	ret = pldma_recv_ring_fill(qp->rq, qp->rq_entries, &qp->rq_tail,
				   pldma_qp_rq_head, qp, wr, bad_wr, &n);
	if (n) {
		udma_to_device_barrier();
		pldma_db_wr(qp->db, PLDMA_CH_RQ_TAIL, qp->rq_tail);
	}
	pthread_spin_unlock(&qp->rq_lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* SRQs                                                               */
/* ------------------------------------------------------------------ */

struct pldma_create_srq_resp_all {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct pldma_create_srq_resp drv;
};

/* The doorbell record's u32 at @off (PLDMA_SRQ_DBREC_*), after the WQEs */
static uint32_t *pldma_srq_rec(struct pldma_srq *srq, uint32_t off)
{
	return (uint32_t *)(srq->ring +
			    (size_t)srq->entries * PLDMA_RWQE_SIZE + off);
}

/* The next WQE the device takes, as it last wrote it */
static uint32_t pldma_srq_head(struct pldma_srq *srq)
{
	return le32toh(__atomic_load_n(pldma_srq_rec(srq,
						     PLDMA_SRQ_DBREC_HEAD),
				       __ATOMIC_ACQUIRE));
}

static uint32_t pldma_srq_head_of(void *arg)
{
	return pldma_srq_head(arg);
}

/* The ring and its record, mapped; -1 and errno if not (ring NULL) */
static int pldma_srq_map(struct pldma_srq *srq, struct ibv_context *ibctx)
{
	void *p = mmap(NULL, srq->ring_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, ibctx->cmd_fd, srq->ring_off);

	srq->ring = p == MAP_FAILED ? NULL : p;
	return srq->ring ? 0 : -1;
}

static struct ibv_srq *pldma_create_srq(struct ibv_pd *pd,
					struct ibv_srq_init_attr *attr)
{
	struct pldma_create_srq_resp_all resp = {};
	struct ibv_create_srq cmd = {};
	struct pldma_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret) {
		errno = ret;
		goto err_free;
	}
	srq->idx = resp.drv.srq;
	srq->entries = resp.drv.entries;
	srq->ring_size = resp.drv.mmap_size;
	srq->ring_off = resp.drv.mmap_offset;
	if (srq->entries < PLDMA_SRQ_MIN_ENTRIES ||
	    srq->entries > PLDMA_SRQ_MAX_ENTRIES ||
	    srq->entries & (srq->entries - 1) ||
	    (uint64_t)srq->entries * PLDMA_RWQE_SIZE + PLDMA_SRQ_DBREC_SIZE >
	    srq->ring_size) {
		errno = EPROTO;
		goto err_destroy;
	}
	if (pldma_srq_map(srq, pd->context))
		goto err_destroy;
	/* a new SRQ's record is zeroed: the device starts at WQE 0 too */
	srq->tail = 0;
	return &srq->vsrq.srq;

err_destroy:
	ret = errno;
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
	errno = ret;
err_free:
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return NULL;
}

/* IBV_SRQ_LIMIT arms the limit; the kernel refuses IBV_SRQ_MAX_WR */
static int pldma_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			    int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd));
}

static int pldma_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

static int pldma_destroy_srq(struct ibv_srq *ibsrq)
{
	struct pldma_srq *srq = to_psrq(ibsrq);
	int ret;

	/*
	 * The kernel keeps a mapped ring: unmap first.  ib_core refuses
	 * (EBUSY) while a QP uses the SRQ: then it is still ours, and its
	 * ring is mapped again, the same memory with the same TAIL and HEAD
	 * (a post meanwhile waits for the lock; with no mapping, EINVAL).
	 */
	pthread_spin_lock(&srq->lock);
	if (srq->ring)
		munmap(srq->ring, srq->ring_size);
	srq->ring = NULL;
	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret) {
		pldma_srq_map(srq, ibsrq->context);
		pthread_spin_unlock(&srq->lock);
		return ret;
	}
	pthread_spin_unlock(&srq->lock);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

/*
 * WQEs at the TAIL while the ring has room (full when TAIL + 1 is the
 * HEAD the device wrote back: ENOMEM), then one TAIL write after a
 * barrier: the device reads TAIL from the record when it has taken the
 * WQEs it knew of, so there is no doorbell to ring.
 */
static int pldma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	struct pldma_srq *srq = to_psrq(ibsrq);
	int ret, n;

	pthread_spin_lock(&srq->lock);
	if (!srq->ring) {
		pthread_spin_unlock(&srq->lock);
		*bad_wr = wr;
		return EINVAL;
	}
	ret = pldma_recv_ring_fill(srq->ring, srq->entries, &srq->tail,
				   pldma_srq_head_of, srq, wr, bad_wr, &n);
	if (n) {
		/* the WQEs before the TAIL that gives them to the device */
		udma_to_device_barrier();
		__atomic_store_n(pldma_srq_rec(srq, PLDMA_SRQ_DBREC_TAIL),
				 htole32(srq->tail), __ATOMIC_RELAXED);
	}
	pthread_spin_unlock(&srq->lock);
	return ret;
}

/*
 * Address handles: the kernel's (it checks the GID: RoCEv2 over IPv4, and
 * resolves the MAC), which answers with the address vector a UD send
 * descriptor carries.  Programs also make them to test a GID (UCX).
 */
struct pldma_create_ah_resp_all {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct pldma_create_ah_resp drv;
};

static struct ibv_ah *pldma_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct pldma_create_ah_resp_all resp = {};
	struct pldma_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	memcpy(ah->dmac, resp.drv.dmac, 6);
	ah->dest_ip = resp.drv.dest_ip;
	return &ah->ibv_ah;
}

static int pldma_destroy_ah(struct ibv_ah *ah)
{
	int ret = ibv_cmd_destroy_ah(ah);

	if (ret)
		return ret;
	free(to_pah(ah));
	return 0;
}

static void pldma_free_context(struct ibv_context *ibctx)
{
	struct pldma_context *ctx = to_pctx(ibctx);
	unsigned int i;

	for (i = 0; i < ctx->ndbs; i++)
		munmap(ctx->dbs[i].page, ctx->db_size);
	pthread_mutex_destroy(&ctx->db_lock);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops pldma_ctx_ops = {
	.query_device_ex = pldma_query_device,
	.query_port = pldma_query_port,
	.alloc_pd = pldma_alloc_pd,
	.create_ah = pldma_create_ah,
	.destroy_ah = pldma_destroy_ah,
	.dealloc_pd = pldma_dealloc_pd,
	.reg_mr = pldma_reg_mr,
	.dereg_mr = pldma_dereg_mr,
	.advise_mr = pldma_advise_mr,
	.create_cq = pldma_create_cq,
	.create_cq_ex = pldma_create_cq_ex,
	.poll_cq = pldma_poll_cq,
	.req_notify_cq = pldma_req_notify_cq,
	.destroy_cq = pldma_destroy_cq,
	.create_qp = pldma_create_qp,
	.create_qp_ex = pldma_create_qp_ex,
	.query_qp = pldma_query_qp,
	.modify_qp = pldma_modify_qp,
	.destroy_qp = pldma_destroy_qp,
	.post_send = pldma_post_send,
	.post_recv = pldma_post_recv,
	.create_srq = pldma_create_srq,
	.modify_srq = pldma_modify_srq,
	.query_srq = pldma_query_srq,
	.destroy_srq = pldma_destroy_srq,
	.post_srq_recv = pldma_post_srq_recv,
	.free_context = pldma_free_context,
};

/* ib_uverbs_get_context_resp followed by the driver's data (udata). */
struct pldma_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct pldma_alloc_ucontext_resp drv;
};

static struct verbs_context *pldma_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd, void *private_data)
{
	struct pldma_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct pldma_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp))) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		return NULL;
	}
	ctx->pasid = resp.drv.pasid;
	ctx->num_qps = resp.drv.num_qps;
	ctx->num_cqs = resp.drv.num_cqs;
	ctx->max_xfer = resp.drv.max_xfer;
	ctx->db_size = resp.drv.db_mmap_size;
	pthread_mutex_init(&ctx->db_lock, NULL);
	verbs_set_ops(&ctx->vctx, &pldma_ctx_ops);
	return &ctx->vctx;
}

static struct verbs_device *pldma_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct pldma_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void pldma_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct pldma_device, vdev));
}

static const struct verbs_match_ent pldma_match_table[] = {
	VERBS_NAME_MATCH(PLDMA_IB_NAME_PREFIX, NULL),
	{},
};

static const struct verbs_device_ops pldma_dev_ops = {
	.name = "pldma",
	.match_min_abi_version = PLDMA_UVERBS_ABI_VERSION,
	.match_max_abi_version = PLDMA_UVERBS_ABI_VERSION,
	.match_table = pldma_match_table,
	.alloc_device = pldma_device_alloc,
	.uninit_device = pldma_device_free,
	.alloc_context = pldma_alloc_context,
};

PROVIDER_DRIVER(pldma, pldma_dev_ops);
