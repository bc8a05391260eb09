/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PLDMA's ib_device (ib_main.c): the objects of the verbs it implements.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#ifndef _PLDMA_IB_H
#define _PLDMA_IB_H

#include <rdma/ib_verbs.h>

#include "pldma_compat.h"

struct pldma_dev;

struct pldma_ibdev {
	struct ib_device ibdev;
	struct pldma_dev *pd;
};

/*
 * A ucontext is a channel context of the process (pldma_ctx_open(), as an
 * open file of /dev/pldmaN): its mm bound by SVA, its PASID the address
 * space of every PD, and the keys and faults of its MRs served through it.
 */
struct pldma_ib_ucontext {
	struct ib_ucontext ibuc;
	struct pldma_ctx *ctx;
	u32 pasid;			/* ctx->pasid */
};

struct pldma_ib_pd {
	struct ib_pd ibpd;
	u32 pasid;			/* the ucontext's */
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

static inline struct pldma_ib_ucontext *to_pucontext(struct ib_ucontext *uc)
{
	return container_of(uc, struct pldma_ib_ucontext, ibuc);
}

static inline struct pldma_ib_pd *to_ppd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct pldma_ib_pd, ibpd);
}

#endif /* _PLDMA_IB_H */
