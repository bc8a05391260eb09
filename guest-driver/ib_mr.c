// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA's ib_device: memory registration, both of the thesis's sides.
 *
 * A plain MR pins its pages, as every verbs driver does (ib_umem_get(),
 * charged to RLIMIT_MEMLOCK).  An IB_ACCESS_ON_DEMAND MR pins nothing: the
 * device reaches the process's memory through its PASID (the ucontext's
 * SVA bond) and its faults are served by the channel's fault mode (SMMU
 * stall, or report mode with the channel's strategy).  Either way, an MR
 * that grants remote access is a device key on (PASID, VA, length,
 * access): its rkey is the device's (a generation above the key index, so
 * a revoked key never matches again).  The lkey is the rkey, or for a
 * local-only MR a random value: the device does not check lkeys, a local
 * work request's protection is the PD's address space (the PASID).
 *
 * Implicit ODP (addr 0, length U64_MAX) is the whole user address space
 * of the PASID: a key covering [0, TASK_SIZE).
 *
 * ibv_advise_mr(PREFETCH, PREFETCH_WRITE) is Touch-Ahead done ahead: the
 * range of an ODP MR is made present through the mm (fixup_user_fault(),
 * as the report-mode fault service does), nothing pinned, so the device's
 * first access does not fault.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "pldma_drv.h"
#include "pldma_ib.h"

/*
 * The access flags a PLDMA MR may have (no flush, no MW).  Remote atomic
 * access grants the key's ATOMIC right where the device has atomics
 * (CAP.ATOMIC, atomic_cap IB_ATOMIC_HCA), and nothing elsewhere (an
 * atomic request then gets NAK Remote Access), as the QP's access flags
 * take it (ib_qp.c).
 */
#define PLDMA_IB_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE |		\
				 IB_ACCESS_REMOTE_WRITE |		\
				 IB_ACCESS_REMOTE_READ |		\
				 IB_ACCESS_REMOTE_ATOMIC |		\
				 IB_ACCESS_FLUSH_GLOBAL |		\
				 IB_ACCESS_ON_DEMAND |			\
				 IB_ACCESS_RELAXED_ORDERING)

static struct pldma_ib_ucontext *pldma_ib_uc(struct ib_udata *udata)
{
	return rdma_udata_to_drv_context(udata, struct pldma_ib_ucontext,
					 ibuc);
}

struct ib_mr *pldma_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 virt_addr, int access,
				   PLDMA_IB_DMAH_ARG
				   struct ib_udata *udata)
{
	struct pldma_ibdev *pib = to_pibdev(ibpd->device);
	struct pldma_reg_mr r = { };
	struct pldma_ib_ucontext *uc;
	struct pldma_ib_mr *mr;
	bool implicit;
	int ret;

	if (!udata || !PLDMA_IB_DMAH_NONE)
		return ERR_PTR(-EOPNOTSUPP);
	uc = pldma_ib_uc(udata);
	ret = pldma_ib_mm_check(uc);
	if (ret)
		return ERR_PTR(ret);
	if (access & ~PLDMA_IB_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	implicit = access & IB_ACCESS_ON_DEMAND && !start &&
		   length == U64_MAX;
	if (implicit) {
		/* the whole address space the PASID's page tables cover */
		if (virt_addr)
			return ERR_PTR(-EINVAL);
		length = TASK_SIZE;
	} else {
		if (!length || start + length < start)
			return ERR_PTR(-EINVAL);
		/* keys and the device speak the process's VAs: iova is VA */
		if (virt_addr != start)
			return ERR_PTR(-EOPNOTSUPP);
		if (!access_ok(u64_to_user_ptr(start), length))
			return ERR_PTR(-EFAULT);
	}

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	if (!(access & IB_ACCESS_ON_DEMAND)) {
		mr->umem = ib_umem_get(ibpd->device, start, length, access);
		if (IS_ERR(mr->umem)) {
			ret = PTR_ERR(mr->umem);
			goto err_free;
		}
	}
	r.access = (access & IB_ACCESS_REMOTE_WRITE ?
		    PLDMA_MR_ACCESS_WRITE : 0) |
		   (access & IB_ACCESS_REMOTE_READ ? PLDMA_MR_ACCESS_READ : 0) |
		   (access & IB_ACCESS_REMOTE_ATOMIC &&
		    uc->ctx->pd->cap & PLDMA_CAP_ATOMIC ?
		    PLDMA_MR_ACCESS_ATOMIC : 0) |
		   (access & IB_ACCESS_FLUSH_GLOBAL ? PLDMA_MR_ACCESS_FLUSH : 0);
	if (r.access) {
		r.va = start;
		r.len = length;
		/* an rkey for the QPs of its PD only, as verbs define it */
		ret = pldma_mr_register(uc->ctx, &r, to_ppd(ibpd)->tag);
		if (ret)
			goto err_release;
		mr->has_key = true;
		mr->ibmr.rkey = r.rkey;
		mr->ibmr.lkey = r.rkey;
	}
	mr->ibmr.iova = implicit ? 0 : virt_addr;
	mr->ibmr.length = length;
	mr->ibmr.pd = ibpd;
	mr->odp = !mr->umem;
	/* the lkey names the MR for advise_mr: a device key, or random */
	if (mr->has_key) {
		ret = xa_insert(&pib->mrs, mr->ibmr.lkey, mr, GFP_KERNEL);
	} else {
		do {
			mr->ibmr.lkey = get_random_u32();
			ret = xa_insert(&pib->mrs, mr->ibmr.lkey, mr,
					GFP_KERNEL);
		} while (ret == -EBUSY);
		mr->ibmr.rkey = 0;
	}
	if (ret)
		goto err_key;
	dev_dbg(&ibpd->device->dev,
		"MR %#llx+%#llx access %#x PASID %u lkey %#x rkey %#x %s\n",
		start, length, access, uc->pasid, mr->ibmr.lkey,
		mr->ibmr.rkey, implicit ? "implicit ODP" :
		mr->umem ? "pinned" : "ODP");
	return &mr->ibmr;

err_key:
	if (mr->has_key)
		pldma_mr_deregister(uc->ctx, mr->ibmr.rkey);
err_release:
	if (mr->umem)
		ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(ret);
}

int pldma_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct pldma_ib_mr *mr = to_pmr(ibmr);
	struct pldma_ib_ucontext *uc = pldma_ib_uc(udata);
	int ret;

	if (!udata) {		/* the kernel's (ib_gsi.c): no key, no pages */
		kfree(mr);
		return 0;
	}
	xa_erase(&to_pibdev(ibmr->device)->mrs, ibmr->lkey);
	/* the key first: no remote access once the pages may go */
	if (mr->has_key) {
		ret = pldma_mr_deregister(uc->ctx, ibmr->rkey);
		if (ret)
			dev_warn(&ibmr->device->dev, "MR rkey %#x: %d\n",
				 ibmr->rkey, ret);
	}
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

/*
 * ibv_advise_mr: each SGE must lie in an MR of @ibpd (by its lkey).  A
 * pinned MR is present already; an ODP MR's range is faulted in through
 * the mm, page by page, VMA by VMA (killable).  PREFETCH_NO_FAULT asks
 * for nothing that is not present: nothing to do.
 */
int pldma_ib_advise_mr(struct ib_pd *ibpd,
		       enum ib_uverbs_advise_mr_advice advice, u32 flags,
		       struct ib_sge *sg_list, u32 num_sge,
		       struct uverbs_attr_bundle *attrs)
{
	struct pldma_ibdev *pib = to_pibdev(ibpd->device);
	struct pldma_ib_ucontext *uc;
	bool write, odp = false, found;
	u64 iova = 0, len = 0, va, end;
	struct pldma_ib_mr *mr;
	unsigned int n;
	u32 i;
	int got;

	if (!attrs)
		return -EOPNOTSUPP;
	uc = pldma_ib_uc(&attrs->driver_udata);
	if (pldma_ib_mm_check(uc))
		return -EPERM;
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;
	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	for (i = 0; i < num_sge; i++) {
		/* values, not the MR: another thread may deregister it */
		found = false;
		xa_lock(&pib->mrs);
		mr = xa_load(&pib->mrs, sg_list[i].lkey);
		if (mr && mr->ibmr.pd == ibpd) {
			iova = mr->ibmr.iova;
			len = mr->ibmr.length;
			odp = mr->odp;
			found = true;
		}
		xa_unlock(&pib->mrs);
		if (!found)
			return -ENOENT;
		va = sg_list[i].addr;
		end = va + sg_list[i].length;
		if (end < va || va < iova || end > iova + len)
			return -EINVAL;
		if (!odp || advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
			continue;
		for (va &= PAGE_MASK; va < end; va += (u64)got * PAGE_SIZE) {
			if (fatal_signal_pending(current))
				return -EINTR;
			n = min_t(u64, (end - va + PAGE_SIZE - 1) >> PAGE_SHIFT,
				  PLDMA_AHEAD_MAX);
			got = pldma_fault_in(uc->ctx, va, write, n);
			if (!got)
				return -EFAULT;
			cond_resched();
		}
	}
	return 0;
}

/*
 * A kernel MR of all memory: the local DMA lkey, which this file does not
 * look at (a buffer is its kernel virtual address).  ib_core asks for one
 * only for a PD with an unsafe global rkey: nothing remote is granted.
 */
struct ib_mr *pldma_ib_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct pldma_ib_mr *mr;

	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->ibmr.lkey = ibpd->device->local_dma_lkey;
	mr->ibmr.rkey = mr->ibmr.lkey;
	return &mr->ibmr;
}
