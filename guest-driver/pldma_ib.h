/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PLDMA's ib_device (ib_main.c): the objects of the verbs it implements.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#ifndef _PLDMA_IB_H
#define _PLDMA_IB_H

#include <rdma/ib_verbs.h>

struct pldma_dev;

struct pldma_ibdev {
	struct ib_device ibdev;
	struct pldma_dev *pd;
};

struct pldma_ib_ucontext {
	struct ib_ucontext ibuc;
	struct iommu_sva *sva;		/* the process's mm, bound */
	u32 pasid;			/* its address space on the device */
};

struct pldma_ib_pd {
	struct ib_pd ibpd;
	u32 pasid;			/* the ucontext's */
};

static inline struct pldma_ib_ucontext *to_pucontext(struct ib_ucontext *uc)
{
	return container_of(uc, struct pldma_ib_ucontext, ibuc);
}

static inline struct pldma_ib_pd *to_ppd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct pldma_ib_pd, ibpd);
}

#endif /* _PLDMA_IB_H */
