/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-core provider for PLDMA (the QEMU device of this repository):
 * user-space side of pldma.ko's ib_device.
 */
#ifndef PLDMA_PROVIDER_H
#define PLDMA_PROVIDER_H

#include <stdint.h>
#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>

#include "pldma-abi.h"

struct pldma_device {
	struct verbs_device vdev;
};

struct pldma_context {
	struct verbs_context vctx;
	uint32_t pasid;
	uint32_t num_qps;
	uint32_t num_cqs;
};

static inline struct pldma_context *to_pctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct pldma_context, vctx.context);
}

#endif /* PLDMA_PROVIDER_H */
