// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-core provider for PLDMA: what pldma.ko's ib_device implements, and
 * nothing more: device and port queries, the context (the kernel binds the
 * process's mm to the device by SVA and returns its PASID), PDs and MRs
 * (pinned, or IBV_ACCESS_ON_DEMAND: nothing pinned, the device faults
 * through the PASID; implicit ODP with addr NULL, length SIZE_MAX).  Verbs
 * that are absent here (CQ, QP, ...) return EOPNOTSUPP from libibverbs
 * (its default ops), as ib_core does for the kernel's.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int pldma_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

static void pldma_free_context(struct ibv_context *ibctx)
{
	struct pldma_context *ctx = to_pctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops pldma_ctx_ops = {
	.query_device_ex = pldma_query_device,
	.query_port = pldma_query_port,
	.alloc_pd = pldma_alloc_pd,
	.dealloc_pd = pldma_dealloc_pd,
	.reg_mr = pldma_reg_mr,
	.dereg_mr = pldma_dereg_mr,
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
