// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA's kernel verbs: QP1, the port's GSI QP, for ib_core's MAD layer,
 * so that ib_cm and rdma_cm (rping, perftest's -R, librdmacm) run over the
 * PLDMA's own port.
 *
 * The device's UD QPs (CAP.UD) are user space's; QP1's management
 * datagrams, RoCEv2 UD (BTH opcode 0x64, a DETH) to QPN 1, the device
 * hands to its Ethernet function once it has checked their ICRC
 * (docs/specs/pldma.rst, "Ethernet function").  So, as a NIC's firmware would, this file serves
 * QP1 on the Ethernet rings: eth.c's receive poll gives it the UD
 * datagrams to this node's address before the network stack sees them,
 * and its sends are whole frames on the transmit ring whose ICRC the
 * device fills in (PLDMA_ETH_TX_ICRC, set by eth.c's xmit).
 *
 * Kernel objects, for the MAD layer: a PD (no PASID), CQs in memory
 * (ib_kcq.c), the GSI QP (struct pldma_gsi, here), address handles
 * (ib_ah.c) and the DMA MR (ib_mr.c).  Buffers are kernel virtual addresses: the ib_device has no
 * DMA device (ib_uses_virt_dma()), as rxe's.  User space's QPs (RC, UC
 * and UD) are the device's own (ib_qp.c); a kernel QP other than QP1 is
 * refused (EOPNOTSUPP), and so are these verbs on a user QP or CQ.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/ip.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "pldma_drv.h"
#include "pldma_ib.h"
#include "pldma_trace.h"

#define PLDMA_GSI_MAX_WR	4096	/* either queue */
#define PLDMA_GSI_MAX_SGE	4	/* send; a receive has one buffer */
#define PLDMA_ROCE_UDP_PORT	4791
#define PLDMA_BTH_LEN		12
#define PLDMA_DETH_LEN		8
#define PLDMA_ICRC_LEN		4
#define PLDMA_UD_SEND_ONLY	0x64
#define PLDMA_UD_SEND_ONLY_IMM	0x65
#define PLDMA_GSI_HDRS		(ETH_HLEN + sizeof(struct iphdr) + \
				 sizeof(struct udphdr) + PLDMA_BTH_LEN + \
				 PLDMA_DETH_LEN)
/* the GRH buffer space of a receive: 20 unused bytes, then IPv4's */
#define PLDMA_GRH_LEN		sizeof(struct ib_grh)

/* What a queued send frame keeps for its completion (skb->cb) */
struct pldma_gsi_cb {
	u64 wr_id;
	u32 len;
	bool signaled;
};

static struct pldma_gsi_cb *pldma_gsi_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct pldma_gsi_cb) > sizeof(skb->cb));
	return (struct pldma_gsi_cb *)skb->cb;
}

/* ---- the GSI QP ---- */

static void pldma_gsi_tx_work(struct work_struct *work);

int pldma_gsi_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init)
{
	struct pldma_dev *pd = to_pibdev(ibqp->device)->pd;
	struct pldma_ib_qp *qp = to_pqp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	struct pldma_gsi *gsi;
	unsigned long flags;

	if (init->qp_type != IB_QPT_GSI || init->srq || init->create_flags)
		return -EOPNOTSUPP;
	if (!pldma_eth_netdev(pd))
		return -EOPNOTSUPP;	/* no Ethernet function to carry it */
	if (init->port_num != 1 || !init->send_cq || !init->recv_cq ||
	    !to_pcq(init->send_cq)->sw || !to_pcq(init->recv_cq)->sw)
		return -EINVAL;
	if (!cap->max_send_wr || cap->max_send_wr > PLDMA_GSI_MAX_WR ||
	    !cap->max_recv_wr || cap->max_recv_wr > PLDMA_GSI_MAX_WR ||
	    cap->max_send_sge > PLDMA_GSI_MAX_SGE || cap->max_recv_sge > 1 ||
	    cap->max_inline_data)
		return -EINVAL;
	gsi = kzalloc(sizeof(*gsi), GFP_KERNEL);
	if (!gsi)
		return -ENOMEM;
	gsi->rq = kcalloc(cap->max_recv_wr, sizeof(*gsi->rq), GFP_KERNEL);
	if (!gsi->rq) {
		kfree(gsi);
		return -ENOMEM;
	}
	gsi->pd = pd;
	gsi->qp = qp;
	spin_lock_init(&gsi->lock);
	skb_queue_head_init(&gsi->sq);
	INIT_WORK(&gsi->tx_work, pldma_gsi_tx_work);
	gsi->state = IB_QPS_RESET;
	gsi->rq_size = cap->max_recv_wr;
	gsi->sq_max = cap->max_send_wr;
	gsi->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	cap->max_send_sge = PLDMA_GSI_MAX_SGE;
	cap->max_recv_sge = 1;
	qp->cap = *cap;
	qp->gsi = gsi;
	ibqp->qp_num = 1;

	spin_lock_irqsave(&pd->gsi_lock, flags);
	if (pd->gsi) {
		spin_unlock_irqrestore(&pd->gsi_lock, flags);
		kfree(gsi->rq);
		kfree(gsi);
		qp->gsi = NULL;
		return -EBUSY;
	}
	pd->gsi = gsi;
	spin_unlock_irqrestore(&pd->gsi_lock, flags);
	dev_dbg(pd->dev, "%s: GSI QP created (SQ %u, RQ %u)\n", pd->name,
		cap->max_send_wr, cap->max_recv_wr);
	return 0;
}

/* gsi->lock held: every receive WQE completes with WR_FLUSH_ERR */
static void pldma_gsi_flush_rq(struct pldma_gsi *gsi)
{
	struct ib_qp *ibqp = &gsi->qp->ibqp;

	while (gsi->rq_count) {
		struct ib_wc wc = {
			.wr_id = gsi->rq[gsi->rq_head].wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
			.qp = ibqp,
			.port_num = 1,
		};

		gsi->rq_head = (gsi->rq_head + 1) % gsi->rq_size;
		gsi->rq_count--;
		pldma_sw_cq_push(ibqp->recv_cq, &wc, false);
	}
}

int pldma_gsi_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask)
{
	struct pldma_gsi *gsi = to_pqp(ibqp)->gsi;
	enum ib_qp_state cur, next;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&gsi->lock, flags);
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : gsi->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (cur != gsi->state ||
	    !ib_modify_qp_is_ok(cur, next, IB_QPT_GSI, mask)) {
		ret = -EINVAL;
		goto out;
	}
	if ((mask & IB_QP_PKEY_INDEX && attr->pkey_index) ||
	    (mask & IB_QP_PORT && attr->port_num != 1)) {
		ret = -EINVAL;
		goto out;
	}
	if (mask & IB_QP_QKEY)
		gsi->qkey = attr->qkey;
	if (mask & IB_QP_SQ_PSN)
		gsi->sq_psn = attr->sq_psn & 0xffffff;
	gsi->state = next;
	if (next == IB_QPS_ERR)
		pldma_gsi_flush_rq(gsi);
	else if (next == IB_QPS_RESET)
		gsi->rq_count = 0;
out:
	spin_unlock_irqrestore(&gsi->lock, flags);
	return ret;
}

int pldma_gsi_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		       struct ib_qp_init_attr *init)
{
	struct pldma_ib_qp *qp = to_pqp(ibqp);
	struct pldma_gsi *gsi = qp->gsi;
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&gsi->lock, flags);
	attr->qp_state = gsi->state;
	attr->cur_qp_state = gsi->state;
	attr->qkey = gsi->qkey;
	attr->sq_psn = gsi->sq_psn;
	spin_unlock_irqrestore(&gsi->lock, flags);
	attr->port_num = 1;
	attr->cap = qp->cap;
	init->qp_type = IB_QPT_GSI;
	init->port_num = 1;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = qp->cap;
	init->sq_sig_type = gsi->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

void pldma_gsi_destroy_qp(struct ib_qp *ibqp)
{
	struct pldma_ib_qp *qp = to_pqp(ibqp);
	struct pldma_gsi *gsi = qp->gsi;
	struct pldma_dev *pd = gsi->pd;
	unsigned long flags;

	/* the receive path sees it no more; then no send is left */
	spin_lock_irqsave(&pd->gsi_lock, flags);
	pd->gsi = NULL;
	spin_unlock_irqrestore(&pd->gsi_lock, flags);
	spin_lock_irqsave(&gsi->lock, flags);
	gsi->state = IB_QPS_RESET;
	spin_unlock_irqrestore(&gsi->lock, flags);
	cancel_work_sync(&gsi->tx_work);
	skb_queue_purge(&gsi->sq);
	kfree(gsi->rq);
	kfree(gsi);
	qp->gsi = NULL;
}

int pldma_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct pldma_gsi *gsi = to_pqp(ibqp)->gsi;
	unsigned long flags;
	int ret = 0;

	if (!gsi) {		/* a user QP's RQ is a ring of its own */
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&gsi->lock, flags);
	for (; wr; wr = wr->next) {
		struct pldma_gsi_rwqe *e;

		if (gsi->state == IB_QPS_RESET || wr->num_sge != 1) {
			ret = -EINVAL;
			break;
		}
		if (gsi->rq_count == gsi->rq_size) {
			ret = -ENOMEM;
			break;
		}
		e = &gsi->rq[(gsi->rq_head + gsi->rq_count) % gsi->rq_size];
		e->wr_id = wr->wr_id;
		e->addr = wr->sg_list[0].addr;
		e->length = wr->sg_list[0].length;
		gsi->rq_count++;
	}
	if (gsi->state == IB_QPS_ERR)
		pldma_gsi_flush_rq(gsi);
	spin_unlock_irqrestore(&gsi->lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/*
 * One UD SEND as a whole frame: Ethernet to the AH's MAC, IPv4 (DF, no
 * options), UDP to 4791 (checksum 0, as RoCEv2 allows), BTH, DETH, the
 * gathered payload, pad, and four bytes of ICRC that the device computes
 */
static struct sk_buff *pldma_gsi_frame(struct pldma_gsi *gsi,
				       struct net_device *ndev,
				       const struct ib_ud_wr *wr, u32 psn,
				       u32 qkey)
{
	const struct pldma_ib_ah *ah = to_pah(wr->ah);
	bool imm = wr->wr.opcode == IB_WR_SEND_WITH_IMM;
	u32 len = 0, pad, l4, i;
	struct sk_buff *skb;
	struct udphdr *uh;
	struct iphdr *iph;
	u8 *p;

	for (i = 0; i < wr->wr.num_sge; i++) {
		if (wr->wr.sg_list[i].length > IB_MGMT_MAD_SIZE * 16 - len)
			return ERR_PTR(-EINVAL);
		len += wr->wr.sg_list[i].length;
	}
	pad = (4 - (len & 3)) & 3;
	l4 = sizeof(*uh) + PLDMA_BTH_LEN + PLDMA_DETH_LEN + (imm ? 4 : 0) +
	     len + pad + PLDMA_ICRC_LEN;
	if (sizeof(*iph) + l4 > ndev->mtu)
		return ERR_PTR(-EMSGSIZE);
	skb = alloc_skb(NET_IP_ALIGN + ETH_HLEN + sizeof(*iph) + l4, GFP_ATOMIC);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	skb_reserve(skb, NET_IP_ALIGN);

	p = skb_put(skb, ETH_HLEN);
	ether_addr_copy(p, ah->dmac);
	ether_addr_copy(p + ETH_ALEN, ndev->dev_addr);
	put_unaligned_be16(ETH_P_IP, p + 2 * ETH_ALEN);

	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = ah->tos;
	iph->tot_len = htons(sizeof(*iph) + l4);
	iph->frag_off = htons(IP_DF);
	iph->ttl = ah->ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = ah->saddr;
	iph->daddr = ah->daddr;
	ip_send_check(iph);

	uh = skb_put_zero(skb, sizeof(*uh));
	uh->source = htons(rdma_get_udp_sport(0, 1, wr->remote_qpn));
	uh->dest = htons(PLDMA_ROCE_UDP_PORT);
	uh->len = htons(l4);

	p = skb_put_zero(skb, PLDMA_BTH_LEN + PLDMA_DETH_LEN);
	p[0] = imm ? PLDMA_UD_SEND_ONLY_IMM : PLDMA_UD_SEND_ONLY;
	p[1] = (wr->wr.send_flags & IB_SEND_SOLICITED ? 0x80 : 0) | pad << 4;
	put_unaligned_be16(IB_DEFAULT_PKEY_FULL, p + 2);
	put_unaligned_be32(wr->remote_qpn & 0xffffff, p + 4);
	put_unaligned_be32(psn, p + 8);
	put_unaligned_be32(qkey, p + 12);
	put_unaligned_be32(1, p + 16);		/* source QP */
	if (imm)
		skb_put_data(skb, &wr->wr.ex.imm_data, 4);
	for (i = 0; i < wr->wr.num_sge; i++)
		skb_put_data(skb, (void *)(uintptr_t)wr->wr.sg_list[i].addr,
			     wr->wr.sg_list[i].length);
	skb_put_zero(skb, pad + PLDMA_ICRC_LEN);

	skb->dev = ndev;
	skb->protocol = htons(ETH_P_IP);
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, ETH_HLEN);
	skb_set_transport_header(skb, ETH_HLEN + sizeof(*iph));
	pldma_gsi_cb(skb)->len = len;
	return skb;
}

int pldma_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr)
{
	struct pldma_gsi *gsi = to_pqp(ibqp)->gsi;
	struct net_device *ndev;
	unsigned long flags;
	bool queued = false;
	int ret = 0;

	if (!gsi) {		/* a user QP's SQ is its channel */
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	ndev = pldma_eth_netdev(gsi->pd);
	spin_lock_irqsave(&gsi->lock, flags);
	for (; wr; wr = wr->next) {
		const struct ib_ud_wr *ud = ud_wr(wr);
		struct sk_buff *skb;
		u32 qkey;

		if (gsi->state != IB_QPS_RTS || !ud->ah || !ndev ||
		    (wr->opcode != IB_WR_SEND &&
		     wr->opcode != IB_WR_SEND_WITH_IMM) ||
		    wr->num_sge > PLDMA_GSI_MAX_SGE) {
			ret = -EINVAL;
			break;
		}
		if (skb_queue_len(&gsi->sq) >= gsi->sq_max) {
			ret = -ENOMEM;
			break;
		}
		/* a Q_Key with its top bit set means the QP's (IBA 10.2.5) */
		qkey = ud->remote_qkey & 0x80000000 ? gsi->qkey :
						      ud->remote_qkey;
		skb = pldma_gsi_frame(gsi, ndev, ud, gsi->sq_psn, qkey);
		if (IS_ERR(skb)) {
			ret = PTR_ERR(skb);
			break;
		}
		gsi->sq_psn = (gsi->sq_psn + 1) & 0xffffff;
		pldma_gsi_cb(skb)->wr_id = wr->wr_id;
		pldma_gsi_cb(skb)->signaled = gsi->sig_all ||
					      wr->send_flags & IB_SEND_SIGNALED;
		__skb_queue_tail(&gsi->sq, skb);
		queued = true;
	}
	spin_unlock_irqrestore(&gsi->lock, flags);
	/* sent from process context: the caller may hold a lock, IRQs off */
	if (queued)
		schedule_work(&gsi->tx_work);
	if (ret)
		*bad_wr = wr;
	return ret;
}

static void pldma_gsi_tx_work(struct work_struct *work)
{
	struct pldma_gsi *gsi = container_of(work, struct pldma_gsi, tx_work);
	struct pldma_dev *pd = gsi->pd;
	struct sk_buff *skb;

	for (;;) {
		struct ib_wc wc = {
			.opcode = IB_WC_SEND,
			.qp = &gsi->qp->ibqp,
			.port_num = 1,
		};
		struct pldma_gsi_cb cb;
		unsigned long flags;
		u32 daddr, dqpn;
		int ret;

		spin_lock_irqsave(&gsi->lock, flags);
		skb = __skb_dequeue(&gsi->sq);
		spin_unlock_irqrestore(&gsi->lock, flags);
		if (!skb)
			break;
		cb = *pldma_gsi_cb(skb);
		daddr = ntohl(ip_hdr(skb)->daddr);
		dqpn = get_unaligned_be32(skb_transport_header(skb) +
					  sizeof(struct udphdr) + 4) & 0xffffff;
		if (daddr == READ_ONCE(pd->ip)) {
			/*
			 * To this node (rdma_cm between two IDs of one port):
			 * looped back here, as the device loops RC traffic to
			 * its own address; it never reaches the wire
			 */
			local_bh_disable();
			pldma_gsi_rx(pd, skb->data, skb->len);
			local_bh_enable();
			consume_skb(skb);
			ret = NET_XMIT_SUCCESS;
		} else {
			/* ours: the device fills in its ICRC (eth.c) */
			skb->mark = PLDMA_GSI_SKB_MARK;
			ret = dev_queue_xmit(skb);
		}
		wc.wr_id = cb.wr_id;
		wc.byte_len = cb.len;
		wc.status = net_xmit_eval(ret) ? IB_WC_GENERAL_ERR :
						 IB_WC_SUCCESS;
		spin_lock_irqsave(&pd->gsi_lock, flags);
		if (wc.status == IB_WC_SUCCESS)
			pd->gsi_st.tx++;
		else
			pd->gsi_st.tx_errors++;
		spin_unlock_irqrestore(&pd->gsi_lock, flags);
		trace_pldma_gsi_tx(pd->id, daddr, dqpn, cb.len, ret);
		if (cb.signaled || wc.status != IB_WC_SUCCESS)
			pldma_sw_cq_push(gsi->qp->ibqp.send_cq, &wc, false);
	}
}

/*
 * A RoCEv2 UD datagram, whole (Ethernet, IPv4 without options, UDP to
 * 4791, BTH with a UD SEND opcode, DETH, room for the ICRC): QP1's on
 * receive, and on transmit a frame whose ICRC the device fills in (eth.c)
 */
bool pldma_roce_ud_frame(const u8 *f, u32 size)
{
	const struct iphdr *iph = (const struct iphdr *)(f + ETH_HLEN);
	const struct udphdr *uh = (const struct udphdr *)(iph + 1);
	const u8 *bth = (const u8 *)(uh + 1);

	return size >= PLDMA_GSI_HDRS + PLDMA_ICRC_LEN &&
	       get_unaligned_be16(f + 2 * ETH_ALEN) == ETH_P_IP &&
	       iph->version == 4 && iph->ihl == 5 &&
	       iph->protocol == IPPROTO_UDP &&
	       uh->dest == htons(PLDMA_ROCE_UDP_PORT) &&
	       (bth[0] == PLDMA_UD_SEND_ONLY || bth[0] == PLDMA_UD_SEND_ONLY_IMM);
}

/*
 * A frame from the Ethernet function's receive ring (eth.c's NAPI poll):
 * true if it is a RoCEv2 UD datagram to this node, which QP1 takes (or
 * drops and counts), false if it is the network stack's
 */
bool pldma_gsi_rx(struct pldma_dev *pd, const u8 *f, u32 size)
{
	const struct iphdr *iph = (const struct iphdr *)(f + ETH_HLEN);
	const struct udphdr *uh = (const struct udphdr *)(iph + 1);
	const u8 *bth = (const u8 *)(uh + 1), *deth = bth + PLDMA_BTH_LEN;
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.port_num = 1,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
			    IB_WC_WITH_SMAC,
		.network_hdr_type = RDMA_NETWORK_IPV4,
	};
	u32 iplen, l4, hdrs, plen, qpn = 0;
	const char *why = NULL;
	struct pldma_gsi *gsi;
	unsigned long flags;
	bool imm;

	if (!pldma_roce_ud_frame(f, size) ||
	    ntohl(iph->daddr) != READ_ONCE(pd->ip))
		return false;

	imm = bth[0] == PLDMA_UD_SEND_ONLY_IMM;
	hdrs = sizeof(*uh) + PLDMA_BTH_LEN + PLDMA_DETH_LEN + (imm ? 4 : 0);
	iplen = ntohs(iph->tot_len);
	l4 = ntohs(uh->len);
	qpn = get_unaligned_be32(bth + 4) & 0xffffff;
	spin_lock_irqsave(&pd->gsi_lock, flags);
	gsi = pd->gsi;
	if (iplen > size - ETH_HLEN || l4 != iplen - sizeof(*iph) ||
	    l4 < hdrs + ((bth[1] >> 4) & 3) + PLDMA_ICRC_LEN) {
		why = "malformed";
		goto drop;
	}
	plen = l4 - hdrs - ((bth[1] >> 4) & 3) - PLDMA_ICRC_LEN;
	if (!gsi || qpn != 1) {
		why = "no such QP";
		goto drop;
	}
	spin_lock(&gsi->lock);
	if ((get_unaligned_be16(bth + 2) & 0x7fff) != 0x7fff ||
	    get_unaligned_be32(deth) != gsi->qkey) {
		why = "P_Key or Q_Key";
	} else if (gsi->state != IB_QPS_RTR && gsi->state != IB_QPS_RTS) {
		why = "QP not ready";
	} else if (!gsi->rq_count) {
		why = "no receive WQE";
	} else if (gsi->rq[gsi->rq_head].length < PLDMA_GRH_LEN + plen) {
		/*
		 * Larger than the buffer: dropped, the WQE kept (as rxe drops a
		 * UD message too long for it).  A completion in error would
		 * cost the MAD layer the buffer: it reposts none after an
		 * error, so a peer could starve QP1 of them.
		 */
		why = "larger than the receive buffer";
	} else {
		struct pldma_gsi_rwqe *e = &gsi->rq[gsi->rq_head];
		u8 *buf = (u8 *)(uintptr_t)e->addr;

		gsi->rq_head = (gsi->rq_head + 1) % gsi->rq_size;
		gsi->rq_count--;
		wc.wr_id = e->wr_id;
		wc.qp = &gsi->qp->ibqp;
		wc.src_qp = get_unaligned_be32(deth + 4) & 0xffffff;
		wc.pkey_index = 0;
		ether_addr_copy(wc.smac, f + ETH_ALEN);
		memset(buf, 0, PLDMA_GRH_LEN - sizeof(*iph));
		memcpy(buf + PLDMA_GRH_LEN - sizeof(*iph), iph, sizeof(*iph));
		memcpy(buf + PLDMA_GRH_LEN, (const u8 *)uh + hdrs, plen);
		wc.byte_len = PLDMA_GRH_LEN + plen;
		if (imm) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			memcpy(&wc.ex.imm_data, deth + PLDMA_DETH_LEN, 4);
		}
		pldma_sw_cq_push(wc.qp->recv_cq, &wc, bth[1] & 0x80);
	}
	spin_unlock(&gsi->lock);
	if (why)
		goto drop;
	pd->gsi_st.rx++;
	spin_unlock_irqrestore(&pd->gsi_lock, flags);
	trace_pldma_gsi_rx(pd->id, ntohl(iph->saddr), wc.src_qp, plen,
			   wc.status);
	return true;

drop:
	pd->gsi_st.rx_dropped++;
	spin_unlock_irqrestore(&pd->gsi_lock, flags);
	dev_dbg_ratelimited(pd->dev, "%s: UD datagram from %pI4 to QP %u dropped: %s\n",
			    pd->name, &iph->saddr, qpn, why);
	trace_pldma_gsi_rx(pd->id, ntohl(iph->saddr), qpn, 0, -1);
	return true;
}
