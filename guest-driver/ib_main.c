// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA as a Linux RDMA device: one ib_device per PLDMA with queue pairs
 * (PLDMA_CAP_QP and a link), port 1 an Ethernet (RoCEv2) port.  User space
 * reaches it through uverbs and the rdma-core provider of this repository
 * (rdma-core/providers/pldma), which matches the device by name.
 *
 * Implemented: device and port queries (GIDs: ib_core's RoCEv2 table,
 * built from the PLDMA's net_device, pldmaeth<N>), ucontexts (a context
 * of the process, pldma_ctx_open(): its mm bound to the device by SVA, its
 * PASID the address space of the process's PDs; a channel only once it has
 * a QP), PDs, MRs
 * (ib_mr.c: pinned, ODP and implicit ODP), CQs (ib_cq.c), RC, UC and UD
 * QPs (ib_qp.c), SRQs (ib_srq.c), user AHs (ib_ah.c), and the mmap() of the context's channel
 * page and of the CQ, RQ and SRQ rings.  Kernel verbs serve QP1 alone (ib_gsi.c: the MAD layer's
 * GSI QP, for ib_cm and rdma_cm): a kernel PD, CQs in memory, address
 * handles.  Every other verb is absent from the ops, so ib_core and
 * libibverbs answer EOPNOTSUPP for it.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#include <linux/etherdevice.h>
#include <linux/iommu.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/sched/mm.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "pldma_drv.h"
#include "pldma_ib.h"
#include "uapi/pldma-abi.h"

#define PLDMA_IB_GID_TBL_LEN	16
#define PLDMA_IB_MAX_PD		0x10000

static int pldma_ib_query_device(struct ib_device *ibdev,
				 struct ib_device_attr *attr,
				 struct ib_udata *udata)
{
	struct pldma_dev *pd = to_pibdev(ibdev)->pd;

	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = (u64)(pd->version >> 16) << 32 |
		       (u64)(pd->version & 0xffff) << 16;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	/*
	 * The function's PCI IDs; the platform PLDMA (device tree) is the
	 * same engine and reports the IDs of the PCI function (a verbs
	 * device has a vendor: rdma-core's tests check it is not 0)
	 */
	attr->vendor_id = PLDMA_PCI_VENDOR_ID;
	attr->vendor_part_id = PLDMA_PCI_DEVICE_ID;
	attr->hw_ver = pd->version & 0xffff;
	if (dev_is_pci(pd->dev)) {
		struct pci_dev *pdev = to_pci_dev(pd->dev);

		attr->vendor_id = pdev->vendor;
		attr->vendor_part_id = pdev->device;
		attr->hw_ver = pdev->revision;
	}
	/* the device's resources; the verbs that use them are listed above */
	attr->max_qp = pd->num_qps;
	attr->max_cq = pd->num_cqs;
	attr->max_cqe = pd->num_cqs ? PLDMA_CQ_MAX_ENTRIES - 1 : 0;
	attr->max_qp_wr = PLDMA_RING_MAX_ENTRIES - 1;
	/* a descriptor's gather/scatter list (PLDMA_DESC_NUM_SGE) */
	attr->max_send_sge = PLDMA_DESC_MAX_SGE;
	attr->max_recv_sge = PLDMA_RWQE_MAX_SGE;
	attr->max_sge_rd = PLDMA_DESC_MAX_SGE;
	attr->max_qp_rd_atom = PLDMA_QP_MAX_RD_ATOMIC;
	/* SRQs (CAP.SRQ): a ring of 2^k WQEs holds 2^k - 1, of 3 SGEs each */
	attr->max_srq = pd->num_srqs;
	attr->max_srq_wr = pd->num_srqs ? PLDMA_SRQ_MAX_ENTRIES - 1 : 0;
	attr->max_srq_sge = pd->num_srqs ? PLDMA_RWQE_MAX_SGE : 0;
	attr->max_qp_init_rd_atom = PLDMA_QP_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = PLDMA_QP_MAX_RD_ATOMIC * pd->num_qps;
	/* atomic with respect to the device's own atomics (CAP.ATOMIC) */
	attr->atomic_cap = pd->cap & PLDMA_CAP_ATOMIC ? IB_ATOMIC_HCA
						      : IB_ATOMIC_NONE;
	attr->max_pd = PLDMA_IB_MAX_PD;
	attr->max_mr = PLDMA_NUM_KEYS;
	attr->max_pkeys = 1;
	/* AHs are the driver's (ib_ah.c): a UD send carries its vector */
	attr->max_ah = PLDMA_IB_MAX_AH;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN;
	/*
	 * IBA 1.5's Atomic Write (PLDMA_OP_ATOMIC_WRITE) and FLUSH for global
	 * visibility (PLDMA_OP_FLUSH; no memory of this device persists)
	 */
	attr->device_cap_flags |= IB_DEVICE_FLUSH_GLOBAL;
	if (pd->cap & PLDMA_CAP_ATOMIC)
		attr->device_cap_flags |= IB_DEVICE_ATOMIC_WRITE;
	/*
	 * ODP: an MR pins nothing, the device faults through the PASID, as
	 * requester and as responder, for every RC operation it does (an
	 * SRQ's receive buffers fault as an RQ's).  UD (CAP.UD): a send's
	 * buffer faults as an RC SEND's; a datagram whose receive buffer
	 * faults is dropped, the fault served for the next one (datagrams
	 * may be lost).  The kernel's buffers (QP1's) need no MR: they are
	 * virtual addresses.
	 */
	attr->kernel_cap_flags = IBK_ON_DEMAND_PAGING | IBK_LOCAL_DMA_LKEY;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		PLDMA_ODP_FLUSH |
		(pd->cap & PLDMA_CAP_ATOMIC ?
		 IB_ODP_SUPPORT_ATOMIC | PLDMA_ODP_ATOMIC_WRITE : 0) |
		(pd->num_srqs ? IB_ODP_SUPPORT_SRQ_RECV : 0);
	if (pd->cap & PLDMA_CAP_UD)
		attr->odp_caps.per_transport_caps.ud_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV;
	return 0;
}

/*
 * Port 1's state is its net_device's, up and with a carrier, as rxe's
 * (the link's carrier follows QEMU's set_link: eth.c); a PLDMA without an
 * Ethernet function is active with a link
 */
static enum ib_port_state pldma_ib_port_state(struct pldma_dev *pd)
{
	struct net_device *ndev = pldma_eth_netdev(pd);

	if (!ndev)
		return pd->node_id ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

/*
 * The port's MTU: the device's segment size (its mtu property), which is
 * also a UD QP's largest datagram
 */
enum ib_mtu pldma_ib_active_mtu(struct pldma_dev *pd)
{
	enum ib_mtu mtu = ib_mtu_int_to_enum(pd->mtu);

	return mtu && mtu <= IB_MTU_4096 ? mtu : IB_MTU_1024;
}

static int pldma_ib_query_port(struct ib_device *ibdev, u32 port,
			       struct ib_port_attr *attr)
{
	struct pldma_dev *pd = to_pibdev(ibdev)->pd;
	bool up = pldma_ib_port_state(pd) == IB_PORT_ACTIVE;

	/* ib_core zeroed *attr */
	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	/*
	 * The device's segment size (its mtu property): a QP's path MTU may
	 * not be larger (a connection request asking more is refused)
	 */
	attr->active_mtu = pldma_ib_active_mtu(pd);
	attr->max_mtu = attr->active_mtu;
	attr->gid_tbl_len = PLDMA_IB_GID_TBL_LEN;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = pd->max_xfer;
	attr->active_width = IB_WIDTH_1X;
	attr->active_speed = IB_SPEED_SDR;
	return 0;
}

static enum rdma_link_layer pldma_ib_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int pldma_ib_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *imm)
{
	struct ib_port_attr attr = {};
	int ret;

	ret = ib_query_port(ibdev, port, &attr);
	if (ret)
		return ret;
	imm->pkey_tbl_len = attr.pkey_tbl_len;
	imm->gid_tbl_len = attr.gid_tbl_len;
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int pldma_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			       u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/*
 * A ucontext is one process's use of the device: a context as an open
 * file of /dev/pldmaN is (pldma_ctx_open()), its mm bound to the device by
 * SVA; the PASID is the address space of every PD it makes.  Two processes
 * have two PASIDs and see nothing of each other's memory.  The context's
 * fault mode serves the faults of its ODP MRs.
 *
 * A ucontext claims no channel: the device has few (num-channels) and
 * programs keep contexts they do not use (rdma-core's tests keep one for
 * every test skipped in its setUp until the run ends).  Each QP's send
 * queue is a channel (ib_qp.c, pldma_ib_chan): the context's own, claimed
 * by its first QP or the first mmap() of its page (pldma_ctx_claim()),
 * then contexts of their own; each is kept until the context ends, so
 * that no mapping of a channel page outlives its channel.
 */
static int pldma_ib_alloc_ucontext(struct ib_ucontext *uctx,
				   struct ib_udata *udata)
{
	struct pldma_ib_ucontext *uc = to_pucontext(uctx);
	struct pldma_dev *pd = to_pibdev(uctx->device)->pd;
	struct pldma_alloc_ucontext_resp resp = {};
	int ret;

	if (!(pd->cap & PLDMA_CAP_PASID))
		return -EOPNOTSUPP;
	uc->ctx = pldma_ctx_open(pd, NULL, false);
	if (IS_ERR(uc->ctx))
		return PTR_ERR(uc->ctx);
	uc->pasid = uc->ctx->pasid;
	mutex_init(&uc->chan_lock);
	INIT_LIST_HEAD(&uc->chans);
	ida_init(&uc->pd_tags);

	uc->db = pldma_ib_mmap_insert(uc, uc->ctx, PLDMA_IB_MMAP_DB, 0,
				      PAGE_SIZE, &uc->db_off);
	resp.db_mmap_offset = uc->db_off;
	if (IS_ERR(uc->db)) {
		ret = PTR_ERR(uc->db);
		goto err_close;
	}
	resp.pasid = uc->pasid;
	resp.num_qps = pd->num_qps;
	resp.num_cqs = pd->num_cqs;
	resp.max_xfer = pd->max_xfer;
	resp.db_mmap_size = PAGE_SIZE;
	ret = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (ret)
		goto err_remove;
	dev_dbg(pd->dev, "%s: ucontext of pid %d, PASID %u\n",
		dev_name(&uctx->device->dev), task_tgid_nr(current),
		uc->pasid);
	return 0;

err_remove:
	rdma_user_mmap_entry_remove(uc->db);
err_close:
	pldma_ctx_close(uc->ctx);
	return ret;
}

/*
 * After every object of the context (QPs, CQs, MRs: their keys) was
 * destroyed: the QP channels of their own, then the context's own.
 */
static void pldma_ib_dealloc_ucontext(struct ib_ucontext *uctx)
{
	struct pldma_ib_ucontext *uc = to_pucontext(uctx);
	struct pldma_ib_chan *c, *tmp;

	list_for_each_entry_safe(c, tmp, &uc->chans, node) {
		list_del(&c->node);
		if (c->ctx != uc->ctx) {
			rdma_user_mmap_entry_remove(c->db);
			pldma_ctx_close(c->ctx);
		}
		kfree(c);
	}
	rdma_user_mmap_entry_remove(uc->db);
	pldma_ctx_close(uc->ctx);
	ida_destroy(&uc->pd_tags);
}

/*
 * Device removal with the context open: ib_core destroys its objects,
 * zaps the channel page's mappings (rdma_user_mmap_io) and calls
 * dealloc_ucontext (channel stopped, SVA unbound) before the device goes.
 */
static void pldma_ib_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

/* An mmap() offset of the context for a page or ring of @type */
struct rdma_user_mmap_entry *
pldma_ib_mmap_insert(struct pldma_ib_ucontext *uc, struct pldma_ctx *ctx,
		     enum pldma_ib_mmap_type type, u32 idx, size_t size,
		     u64 *offset)
{
	struct pldma_ib_mmap *e;
	int ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->type = type;
	e->idx = idx;
	e->ctx = ctx;
	ret = rdma_user_mmap_entry_insert(&uc->ibuc, &e->rdma, size);
	if (ret) {
		kfree(e);
		return ERR_PTR(ret);
	}
	*offset = rdma_user_mmap_get_offset(&e->rdma);
	return &e->rdma;
}

static void pldma_ib_mmap_free(struct rdma_user_mmap_entry *entry)
{
	kfree(container_of(entry, struct pldma_ib_mmap, rdma));
}

/*
 * The channel page (uncached, ib_core zaps it at removal), or a ring
 * (cq.c's pldma_ring_mmap(): a CQ's read-only, an RQ's or an SRQ's
 * read-write; a mapped ring keeps its CQ, QP or SRQ from being destroyed).
 */
static int pldma_ib_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct pldma_ib_ucontext *uc = to_pucontext(uctx);
	struct pldma_dev *pd = uc->ctx->pd;
	struct rdma_user_mmap_entry *entry;
	struct pldma_ib_mmap *e;
	int ret;

	if (vma->vm_flags & VM_EXEC || pldma_ib_mm_check(uc))
		return -EPERM;
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	e = container_of(entry, struct pldma_ib_mmap, rdma);
	vm_flags_clear(vma, VM_MAYEXEC);
	switch (e->type) {
	case PLDMA_IB_MMAP_DB:
		/* the page of a channel (the context's claimed now if need be) */
		ret = pldma_ctx_claim(e->ctx);
		if (ret)
			break;
		/*
		 * Not into a child: its writes would run descriptors in this
		 * process's address space (the channel's PASID)
		 */
		vm_flags_set(vma, VM_DONTCOPY);
		ret = rdma_user_mmap_io(uctx, vma,
					(pd->phys +
					 PLDMA_CH_PAGE_OFFSET(e->ctx->ch)) >>
					PAGE_SHIFT, PAGE_SIZE,
					pgprot_noncached(vma->vm_page_prot),
					entry);
		break;
	case PLDMA_IB_MMAP_CQ:
		vma->vm_pgoff = PLDMA_MMAP_CQ(e->idx) >> PAGE_SHIFT;
		ret = pldma_ring_mmap(uc->ctx, vma);
		break;
	case PLDMA_IB_MMAP_RQ:
		vma->vm_pgoff = PLDMA_MMAP_RQ >> PAGE_SHIFT;
		ret = pldma_ring_mmap(e->ctx, vma);
		break;
	case PLDMA_IB_MMAP_SRQ:
		vma->vm_pgoff = PLDMA_MMAP_SRQ(e->idx) >> PAGE_SHIFT;
		ret = pldma_ring_mmap(uc->ctx, vma);
		break;
	default:
		ret = -EINVAL;
	}
	rdma_user_mmap_entry_put(entry);
	return ret;
}

static int pldma_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct pldma_ib_pd *ppd = to_ppd(ibpd);
	struct pldma_ib_ucontext *uc;
	int tag;

	/* the kernel's (the MAD layer's, for QP1): no address space */
	if (!udata)
		return 0;
	uc = rdma_udata_to_drv_context(udata, struct pldma_ib_ucontext, ibuc);
	if (pldma_ib_mm_check(uc))
		return -EPERM;
	tag = ida_alloc_range(&uc->pd_tags, 1, PLDMA_PD_TAG_MAX, GFP_KERNEL);
	if (tag < 0)
		return tag;
	ppd->pasid = uc->pasid;
	ppd->tag = tag;
	return 0;
}

static int pldma_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct pldma_ib_pd *ppd = to_ppd(ibpd);
	struct pldma_ib_ucontext *uc;

	if (!udata || !ppd->tag)
		return 0;
	uc = rdma_udata_to_drv_context(udata, struct pldma_ib_ucontext, ibuc);
	ida_free(&uc->pd_tags, ppd->tag);
	return 0;
}

/*
 * The link's counters (pldma-regs.h's PLDMA_NCNT_*, the debugfs "net"
 * file's) as the port's hardware counters, for "rdma statistic" and
 * /sys/class/infiniband/<dev>/ports/1/hw_counters
 */
#define PLDMA_IB_STAT(i, n) \
	[i] = { .name = n },
static const struct rdma_stat_desc pldma_ib_stat_descs[PLDMA_NCNT_NUM] = {
	PLDMA_NCNT_NAMES(PLDMA_IB_STAT)
};

#undef PLDMA_IB_STAT

static struct rdma_hw_stats *pldma_ib_alloc_port_stats(struct ib_device *ibdev,
						       u32 port)
{
	return rdma_alloc_hw_stats_struct(pldma_ib_stat_descs, PLDMA_NCNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* All counters at once; the device's registers only while it is present */
static int pldma_ib_get_hw_stats(struct ib_device *ibdev,
				 struct rdma_hw_stats *stats, u32 port,
				 int index)
{
	struct pldma_dev *pd = to_pibdev(ibdev)->pd;
	unsigned int i;

	down_read(&pd->gone_sem);
	if (pd->gone) {
		up_read(&pd->gone_sem);
		return -ENODEV;
	}
	for (i = 0; i < PLDMA_NCNT_NUM; i++)
		stats->value[i] = pldma_rd(pd, PLDMA_NET_CNT(i));
	up_read(&pd->gone_sem);
	return PLDMA_NCNT_NUM;
}

static const struct ib_device_ops pldma_ib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = PLDMA_UVERBS_ABI_VERSION,

	.query_device = pldma_ib_query_device,
	.query_port = pldma_ib_query_port,
	.alloc_hw_port_stats = pldma_ib_alloc_port_stats,
	.get_hw_stats = pldma_ib_get_hw_stats,
	.get_link_layer = pldma_ib_link_layer,
	.get_port_immutable = pldma_ib_port_immutable,
	.query_pkey = pldma_ib_query_pkey,
	.alloc_ucontext = pldma_ib_alloc_ucontext,
	.dealloc_ucontext = pldma_ib_dealloc_ucontext,
	.disassociate_ucontext = pldma_ib_disassociate_ucontext,
	.alloc_pd = pldma_ib_alloc_pd,
	.dealloc_pd = pldma_ib_dealloc_pd,
	.reg_user_mr = pldma_ib_reg_user_mr,
	.dereg_mr = pldma_ib_dereg_mr,
	.advise_mr = pldma_ib_advise_mr,
	.mmap = pldma_ib_mmap,
	.mmap_free = pldma_ib_mmap_free,
	.create_cq = pldma_ib_create_cq,
	.destroy_cq = pldma_ib_destroy_cq,
	.create_qp = pldma_ib_create_qp,
	.modify_qp = pldma_ib_modify_qp,
	.query_qp = pldma_ib_query_qp,
	.destroy_qp = pldma_ib_destroy_qp,
	.create_srq = pldma_ib_create_srq,
	.modify_srq = pldma_ib_modify_srq,
	.query_srq = pldma_ib_query_srq,
	.destroy_srq = pldma_ib_destroy_srq,
	.post_send = pldma_ib_post_send,
	.post_recv = pldma_ib_post_recv,
	.poll_cq = pldma_ib_poll_cq,
	.req_notify_cq = pldma_ib_req_notify_cq,
	.get_dma_mr = pldma_ib_get_dma_mr,
	.create_ah = pldma_ib_create_ah,
	.create_user_ah = pldma_ib_create_ah,
	.destroy_ah = pldma_ib_destroy_ah,

	INIT_RDMA_OBJ_SIZE(ib_ah, pldma_ib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, pldma_ib_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, pldma_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, pldma_ib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, pldma_ib_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, pldma_ib_srq, ibsrq),
};

/*
 * The net_device went up or down, or its carrier moved: a port event
 * (IB_EVENT_PORT_ACTIVE, IB_EVENT_PORT_ERR) when port 1's state changed.
 * Kernels that do it themselves for a port with a net_device do not get
 * this notifier (PLDMA_IB_OWN_PORT_EVENTS).
 */
static int pldma_ib_netdev_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct pldma_ibdev *pib = container_of(nb, struct pldma_ibdev,
					       netdev_nb);
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct ib_event ev = {
		.device = &pib->ibdev,
		.element.port_num = 1,
	};
	enum ib_port_state st;

	if (ndev != pldma_eth_netdev(pib->pd) ||
	    (event != NETDEV_UP && event != NETDEV_DOWN &&
	     event != NETDEV_CHANGE))
		return NOTIFY_DONE;
	st = pldma_ib_port_state(pib->pd);
	if (st == pib->port_state)
		return NOTIFY_DONE;
	pib->port_state = st;
	ev.event = st == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					  IB_EVENT_PORT_ERR;
	dev_dbg(pib->pd->dev, "%s: port 1 %s\n", dev_name(&pib->ibdev.dev),
		st == IB_PORT_ACTIVE ? "active" : "down");
	ib_dispatch_event(&ev);
	return NOTIFY_OK;
}

/*
 * Register the ib_device of a PLDMA with queue pairs, named after the
 * misc device (pldmaN).  pldma_unregister() unregisters it first thing,
 * before the channels and SVA bonds go.
 */
int pldma_ib_register(struct pldma_dev *pd)
{
	struct net_device *ndev;
	struct pldma_ibdev *pib;
	struct ib_device *ibdev;
	int ret;

	if (!pd->num_qps)
		return 0;
	pib = ib_alloc_device(pldma_ibdev, ibdev);
	if (!pib)
		return -ENOMEM;
	pib->pd = pd;
	xa_init(&pib->mrs);
	ibdev = &pib->ibdev;
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->dev.parent = pd->dev;
	/* EUI-64 of the port's MAC, as RoCE NICs do */
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, pd->mac);
	strscpy(ibdev->node_desc, pd->name, sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &pldma_ib_ops);
	/*
	 * The RoCEv2 GID table: ib_core fills it from the net_device's
	 * addresses (an IPv4 address is the IPv4-mapped GID the device uses,
	 * PLDMA_NET_IP) and follows its changes.
	 */
	ndev = pldma_eth_netdev(pd);
	if (ndev) {
		ret = ib_device_set_netdev(ibdev, ndev, 1);
		if (ret)
			goto err_dealloc;
	}

	/*
	 * No DMA device: the device reaches user memory through PASIDs, and
	 * the kernel's QP1 buffers are read and written by ib_gsi.c, so the
	 * MAD layer's DMA addresses are kernel virtual ones (as rxe's)
	 */
	ret = ib_register_device(ibdev, pd->name, NULL);
	if (ret)
		goto err_dealloc;
	if (ndev && PLDMA_IB_OWN_PORT_EVENTS) {
		rtnl_lock();
		pib->port_state = pldma_ib_port_state(pd);
		rtnl_unlock();
		pib->netdev_nb.notifier_call = pldma_ib_netdev_event;
		ret = register_netdevice_notifier(&pib->netdev_nb);
		if (ret) {
			ib_unregister_device(ibdev);
			goto err_dealloc;
		}
	}
	pd->ib = pib;
	dev_info(pd->dev, "%s: RDMA device %s, RoCEv2 port 1%s%s\n", pd->name,
		 dev_name(&ibdev->dev), ndev ? ", GIDs of " : "",
		 ndev ? netdev_name(ndev) : "");
	return 0;

err_dealloc:
	ib_dealloc_device(ibdev);
	return ret;
}

/* Waits for no user: the contexts still open are disassociated. */
void pldma_ib_unregister(struct pldma_dev *pd)
{
	struct pldma_ibdev *pib = pd->ib;

	if (!pib)
		return;
	pd->ib = NULL;
	if (pib->netdev_nb.notifier_call)
		unregister_netdevice_notifier(&pib->netdev_nb);
	ib_unregister_device(&pib->ibdev);
	ib_dealloc_device(&pib->ibdev);
}
