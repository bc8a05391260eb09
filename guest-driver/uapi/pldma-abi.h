/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * PLDMA uverbs ABI: the driver data that pldma.ko's ib_device and the
 * rdma-core provider (rdma-core/providers/pldma) exchange through uverbs'
 * udata.  Shared by both, as include/uapi/rdma/<driver>-abi.h is upstream.
 */
#ifndef PLDMA_ABI_USER_H
#define PLDMA_ABI_USER_H

#include <linux/types.h>

/* The uverbs ABI version the ib_device reports and the provider accepts. */
#define PLDMA_UVERBS_ABI_VERSION 1

/* The ib_device's name prefix: the provider matches it (VERBS_NAME_MATCH). */
#define PLDMA_IB_NAME_PREFIX "pldma"

/* alloc_ucontext response: the address space the process's PDs use. */
struct pldma_alloc_ucontext_resp {
	__u32 pasid;		/* the PASID the process's mm is bound to */
	__u32 num_qps;		/* QPs of the device */
	__u32 num_cqs;		/* CQs of the device (0: none) */
	__u32 reserved;
};

#endif /* PLDMA_ABI_USER_H */
