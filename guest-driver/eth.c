// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: the Ethernet function (PLDMA_CAP_ETH) as a net_device.  A RoCE
 * NIC is an Ethernet NIC: the frames of the PLDMA's link that are not
 * RoCEv2 for this node reach the receive ring, the transmit ring's frames
 * go out on the same link, so ARP resolves a peer's MAC and IP runs over
 * the PLDMA's own port.  The interface's IPv4 address is the node's RoCE
 * GID: setting one ("ip addr add 10.0.0.1/24 dev pldmaeth0") writes it to
 * PLDMA_NET_IP; without one the device's default, 10.0.0.<node-id>, stays.
 *
 * Rings and buffers are coherent DMA memory without PASID (as the fault
 * queue), one fixed buffer per slot: frames are copied in and out, which
 * keeps the mapping work out of the data path of a device that is a
 * model anyway.  One NAPI context serves both rings; IRQ_ETH follows
 * ETH_EVENTS & ETH_EVENT_MASK, so the interrupt handler masks the events
 * and NAPI unmasks them when it is done (an event that came meanwhile
 * raises the interrupt again).
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "pldma_drv.h"

#define PLDMA_ETH_RING		128	/* descriptors per ring */
#define PLDMA_ETH_BUF		2048	/* bytes per slot: an MTU frame */
#define PLDMA_ETH_EVENTS_ON	(PLDMA_ETH_EV_RX | PLDMA_ETH_EV_TX | \
				 PLDMA_ETH_EV_LINK | PLDMA_ETH_EV_ERROR)

struct pldma_eth_desc {
	__le64 addr;
	__le32 len;
	__le32 status;
};

struct pldma_eth_ring {
	struct pldma_eth_desc *desc;
	dma_addr_t desc_dma;
	u8 *buf;			/* PLDMA_ETH_RING slots */
	dma_addr_t buf_dma;
	u32 next;			/* next descriptor the driver looks at */
	u32 tail;			/* one past the last posted */
};

struct pldma_eth {
	struct pldma_dev *pd;
	struct net_device *ndev;
	struct napi_struct napi;
	struct pldma_eth_ring rx;
	struct pldma_eth_ring tx;
	struct notifier_block inet_nb;
	u32 default_ip;			/* NET_IP at probe */
};

static_assert(sizeof(struct pldma_eth_desc) == PLDMA_ETH_DESC_SIZE);

static u32 pldma_eth_ring_next(u32 i)
{
	return (i + 1) & (PLDMA_ETH_RING - 1);
}

/* Free TX slots: one stays empty so that a full ring is not an empty one */
static u32 pldma_eth_tx_space(struct pldma_eth *eth)
{
	return (READ_ONCE(eth->tx.next) - eth->tx.tail - 1) &
	       (PLDMA_ETH_RING - 1);
}

static void pldma_eth_rx_post(struct pldma_eth *eth, u32 i)
{
	struct pldma_eth_desc *d = &eth->rx.desc[i];

	d->addr = cpu_to_le64(eth->rx.buf_dma + (u64)i * PLDMA_ETH_BUF);
	d->len = cpu_to_le32(PLDMA_ETH_BUF);
	d->status = 0;
}

static void pldma_eth_link(struct pldma_eth *eth)
{
	if (pldma_rd(eth->pd, PLDMA_ETH_STATUS) & PLDMA_ETH_STATUS_LINK)
		netif_carrier_on(eth->ndev);
	else
		netif_carrier_off(eth->ndev);
}

/* Receive up to @budget frames; re-post their buffers */
static int pldma_eth_rx(struct pldma_eth *eth, int budget)
{
	struct net_device *ndev = eth->ndev;
	struct pldma_eth_ring *r = &eth->rx;
	int done = 0;

	while (done < budget) {
		struct pldma_eth_desc *d = &r->desc[r->next];
		u32 st = le32_to_cpu(READ_ONCE(d->status));
		struct sk_buff *skb;
		u32 len;

		if (st == PLDMA_ETH_ST_PENDING)
			break;
		dma_rmb();	/* the frame and LEN before STATUS */
		len = le32_to_cpu(d->len);
		if (st != PLDMA_ETH_ST_OK || len < ETH_HLEN ||
		    len > PLDMA_ETH_BUF) {
			ndev->stats.rx_errors++;
			if (st == PLDMA_ETH_ST_BAD_LEN)
				ndev->stats.rx_length_errors++;
		} else if (pldma_gsi_rx(eth->pd, r->buf + (u64)r->next *
					PLDMA_ETH_BUF, len)) {
			/* RoCEv2 UD to this node: QP1's (ib_gsi.c) */
			ndev->stats.rx_packets++;
			ndev->stats.rx_bytes += len;
		} else {
			skb = napi_alloc_skb(&eth->napi, len);
			if (!skb) {
				ndev->stats.rx_dropped++;
			} else {
				skb_put_data(skb, r->buf + (u64)r->next *
					     PLDMA_ETH_BUF, len);
				skb->protocol = eth_type_trans(skb, ndev);
				ndev->stats.rx_packets++;
				ndev->stats.rx_bytes += len;
				napi_gro_receive(&eth->napi, skb);
			}
		}
		/* the slot just consumed is free: post the one at the tail */
		pldma_eth_rx_post(eth, r->tail);
		r->tail = pldma_eth_ring_next(r->tail);
		r->next = pldma_eth_ring_next(r->next);
		done++;
	}
	if (done) {
		dma_wmb();	/* descriptors before the doorbell */
		pldma_wr(eth->pd, PLDMA_ETH_RX_TAIL, r->tail);
	}
	return done;
}

/* Reap the descriptors the device sent */
static void pldma_eth_tx_clean(struct pldma_eth *eth)
{
	struct net_device *ndev = eth->ndev;
	struct pldma_eth_ring *r = &eth->tx;

	while (r->next != r->tail) {
		struct pldma_eth_desc *d = &r->desc[r->next];
		u32 st = le32_to_cpu(READ_ONCE(d->status));

		if (st == PLDMA_ETH_ST_PENDING)
			break;
		if (st == PLDMA_ETH_ST_OK) {
			ndev->stats.tx_packets++;
			ndev->stats.tx_bytes += le32_to_cpu(d->len);
		} else {
			ndev->stats.tx_errors++;
		}
		/* the slot is the driver's again before ndo_start_xmit sees it */
		smp_store_release(&r->next, pldma_eth_ring_next(r->next));
	}
	smp_mb();	/* r->next before the queue state (ndo_start_xmit) */
	if (netif_queue_stopped(ndev) && pldma_eth_tx_space(eth) >= 1)
		netif_wake_queue(ndev);
}

static int pldma_eth_poll(struct napi_struct *napi, int budget)
{
	struct pldma_eth *eth = container_of(napi, struct pldma_eth, napi);
	struct pldma_dev *pd = eth->pd;
	u32 ev = pldma_rd(pd, PLDMA_ETH_EVENTS);
	int done;

	pldma_wr(pd, PLDMA_ETH_EVENTS, ev);
	if (ev & PLDMA_ETH_EV_LINK)
		pldma_eth_link(eth);
	if (ev & PLDMA_ETH_EV_ERROR)
		netdev_err(eth->ndev, "ring stopped by the device (status %#x): bring the interface down and up\n",
			   pldma_rd(pd, PLDMA_ETH_STATUS));
	pldma_eth_tx_clean(eth);
	done = pldma_eth_rx(eth, budget);
	if (done < budget && napi_complete_done(napi, done))
		pldma_wr(pd, PLDMA_ETH_EVENT_MASK, PLDMA_ETH_EVENTS_ON);
	return done;
}

/* From pldma_irq() when IRQ_ETH is pending: to NAPI */
void pldma_eth_irq(struct pldma_dev *pd)
{
	struct pldma_eth *eth = READ_ONCE(pd->eth);

	if (!eth)
		return;
	pldma_wr(pd, PLDMA_ETH_EVENT_MASK, 0);
	napi_schedule(&eth->napi);
}

static netdev_tx_t pldma_eth_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct pldma_eth *eth = netdev_priv(ndev);
	struct pldma_eth_ring *r = &eth->tx;
	struct pldma_eth_desc *d;
	u32 i = r->tail;

	if (skb_put_padto(skb, ETH_ZLEN)) {
		ndev->stats.tx_dropped++;
		return NETDEV_TX_OK;	/* freed by skb_put_padto() */
	}
	if (skb->len > PLDMA_ETH_BUF) {
		ndev->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	if (!pldma_eth_tx_space(eth)) {
		netif_stop_queue(ndev);
		return NETDEV_TX_BUSY;
	}
	skb_copy_bits(skb, 0, r->buf + (u64)i * PLDMA_ETH_BUF, skb->len);
	d = &r->desc[i];
	d->addr = cpu_to_le64(r->buf_dma + (u64)i * PLDMA_ETH_BUF);
	/*
	 * RoCEv2 UD of QP1 (ib_gsi.c: no socket, its mark): the device
	 * computes its ICRC.  Not for a socket's datagram that looks the
	 * same: an unprivileged user must not send MADs with a valid ICRC.
	 */
	d->len = cpu_to_le32(skb->len |
			     (!skb->sk && skb->mark == PLDMA_GSI_SKB_MARK &&
			      pldma_roce_ud_frame(r->buf + (u64)i *
						  PLDMA_ETH_BUF, skb->len) ?
			      PLDMA_ETH_TX_ICRC : 0));
	d->status = 0;
	r->tail = pldma_eth_ring_next(i);
	dma_wmb();	/* the frame and its descriptor before the doorbell */
	pldma_wr(eth->pd, PLDMA_ETH_TX_TAIL, r->tail);
	skb_tx_timestamp(skb);
	dev_consume_skb_any(skb);

	if (!pldma_eth_tx_space(eth)) {
		netif_stop_queue(ndev);
		smp_mb();	/* the stop before reading r->next again */
		if (pldma_eth_tx_space(eth))
			netif_wake_queue(ndev);
	}
	return NETDEV_TX_OK;
}

static void pldma_eth_ring_regs(struct pldma_dev *pd, u32 base_lo,
				struct pldma_eth_ring *r)
{
	/* BASE_LO, BASE_HI, SIZE: the same layout for both rings */
	pldma_wr(pd, base_lo, lower_32_bits(r->desc_dma));
	pldma_wr(pd, base_lo + 4, upper_32_bits(r->desc_dma));
	pldma_wr(pd, base_lo + 8, PLDMA_ETH_RING);
}

static int pldma_eth_open(struct net_device *ndev)
{
	struct pldma_eth *eth = netdev_priv(ndev);
	struct pldma_dev *pd = eth->pd;
	u32 ctrl = PLDMA_ETH_CTRL_RX_EN | PLDMA_ETH_CTRL_TX_EN;
	u32 i;

	pldma_wr(pd, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RESET);
	memset(eth->tx.desc, 0, PLDMA_ETH_RING * sizeof(*eth->tx.desc));
	eth->tx.next = 0;
	eth->tx.tail = 0;
	for (i = 0; i < PLDMA_ETH_RING - 1; i++)
		pldma_eth_rx_post(eth, i);
	eth->rx.next = 0;
	eth->rx.tail = PLDMA_ETH_RING - 1;
	pldma_eth_ring_regs(pd, PLDMA_ETH_RX_BASE_LO, &eth->rx);
	pldma_eth_ring_regs(pd, PLDMA_ETH_TX_BASE_LO, &eth->tx);
	dma_wmb();
	pldma_wr(pd, PLDMA_ETH_RX_TAIL, eth->rx.tail);
	if (ndev->flags & IFF_PROMISC)
		ctrl |= PLDMA_ETH_CTRL_PROMISC;
	pldma_wr(pd, PLDMA_ETH_CTRL, ctrl);
	if (pldma_rd(pd, PLDMA_ETH_CTRL) != ctrl) {
		pldma_wr(pd, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RESET);
		netdev_err(ndev, "the device refused the rings\n");
		return -EIO;
	}
	napi_enable(&eth->napi);
	pldma_eth_link(eth);
	netif_start_queue(ndev);
	pldma_wr(pd, PLDMA_ETH_EVENT_MASK, PLDMA_ETH_EVENTS_ON);
	return 0;
}

static int pldma_eth_stop(struct net_device *ndev)
{
	struct pldma_eth *eth = netdev_priv(ndev);
	struct pldma_dev *pd = eth->pd;

	netif_stop_queue(ndev);
	pldma_wr(pd, PLDMA_ETH_EVENT_MASK, 0);
	/* the device stops using the rings at once */
	pldma_wr(pd, PLDMA_ETH_CTRL, 0);
	napi_disable(&eth->napi);
	pldma_wr(pd, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RESET);
	netif_carrier_off(ndev);
	return 0;
}

static void pldma_eth_set_rx_mode(struct net_device *ndev)
{
	struct pldma_eth *eth = netdev_priv(ndev);
	struct pldma_dev *pd = eth->pd;
	u32 ctrl = pldma_rd(pd, PLDMA_ETH_CTRL);

	/* every multicast is received; unicast filtering is the MAC's */
	if (ndev->flags & IFF_PROMISC)
		ctrl |= PLDMA_ETH_CTRL_PROMISC;
	else
		ctrl &= ~PLDMA_ETH_CTRL_PROMISC;
	pldma_wr(pd, PLDMA_ETH_CTRL, ctrl);
}

static const struct net_device_ops pldma_eth_ops = {
	.ndo_open = pldma_eth_open,
	.ndo_stop = pldma_eth_stop,
	.ndo_start_xmit = pldma_eth_xmit,
	.ndo_set_rx_mode = pldma_eth_set_rx_mode,
	.ndo_validate_addr = eth_validate_addr,
};

/* The interface's IPv4 address is the node's RoCE GID (PLDMA_NET_IP) */
static int pldma_eth_inetaddr(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct pldma_eth *eth = container_of(nb, struct pldma_eth, inet_nb);
	struct in_ifaddr *ifa = ptr;
	struct pldma_dev *pd = eth->pd;
	u32 ip = ntohl(ifa->ifa_local);

	if (ifa->ifa_dev->dev != eth->ndev)
		return NOTIFY_DONE;
	mutex_lock(&pd->key_mutex);
	if (event == NETDEV_UP) {
		pd->ip = ip;
	} else if (event == NETDEV_DOWN && pd->ip == ip) {
		pd->ip = eth->default_ip;
	} else {
		mutex_unlock(&pd->key_mutex);
		return NOTIFY_DONE;
	}
	pldma_wr(pd, PLDMA_NET_IP, pd->ip);
	mutex_unlock(&pd->key_mutex);
	netdev_info(eth->ndev, "RoCE address (NET_IP) %pI4h\n", &pd->ip);
	return NOTIFY_OK;
}

static void pldma_eth_notifier_remove(void *data)
{
	struct pldma_eth *eth = data;

	unregister_inetaddr_notifier(&eth->inet_nb);
}

static void pldma_eth_detach(void *data)
{
	struct pldma_dev *pd = data;

	WRITE_ONCE(pd->eth, NULL);
}

static int pldma_eth_ring_alloc(struct pldma_dev *pd,
				struct pldma_eth_ring *r)
{
	r->desc = dmam_alloc_coherent(pd->dev, PLDMA_ETH_RING *
				      sizeof(*r->desc), &r->desc_dma,
				      GFP_KERNEL);
	r->buf = dmam_alloc_coherent(pd->dev, PLDMA_ETH_RING * PLDMA_ETH_BUF,
				     &r->buf_dma, GFP_KERNEL);
	return r->desc && r->buf ? 0 : -ENOMEM;
}

/*
 * At registration, with the interrupts requested: a net_device for a
 * PLDMA with a link and the Ethernet function; devm-managed, so it goes
 * (unregistered, then freed) before the device is quiesced
 */
int pldma_eth_register(struct pldma_dev *pd)
{
	struct net_device *ndev;
	struct pldma_eth *eth;
	int ret;

	if (!(pd->cap & PLDMA_CAP_ETH) || !pd->node_id || !pd->num_qps)
		return 0;
	ndev = devm_alloc_etherdev(pd->dev, sizeof(*eth));
	if (!ndev)
		return -ENOMEM;
	SET_NETDEV_DEV(ndev, pd->dev);
	strscpy(ndev->name, "pldmaeth%d", sizeof(ndev->name));
	eth = netdev_priv(ndev);
	eth->pd = pd;
	eth->ndev = ndev;
	eth->default_ip = pd->ip;
	ret = pldma_eth_ring_alloc(pd, &eth->rx);
	if (!ret)
		ret = pldma_eth_ring_alloc(pd, &eth->tx);
	if (ret)
		return ret;
	eth_hw_addr_set(ndev, pd->mac);
	ndev->netdev_ops = &pldma_eth_ops;
	/* ether_setup()'s MTU range, 68..1500: a frame fits a slot */
	netif_napi_add(ndev, &eth->napi, pldma_eth_poll);
	netif_carrier_off(ndev);

	pd->eth = eth;
	ret = devm_add_action_or_reset(pd->dev, pldma_eth_detach, pd);
	if (ret)
		return ret;
	ret = devm_register_netdev(pd->dev, ndev);
	if (ret)
		return ret;
	eth->inet_nb.notifier_call = pldma_eth_inetaddr;
	ret = register_inetaddr_notifier(&eth->inet_nb);
	if (ret)
		return ret;
	ret = devm_add_action_or_reset(pd->dev, pldma_eth_notifier_remove, eth);
	if (ret)
		return ret;
	netdev_info(ndev, "%s: Ethernet function, MAC %pM\n", pd->name,
		    pd->mac);
	return 0;
}

/* The PLDMA's net_device, or NULL: the ib_device's GIDs come from it. */
struct net_device *pldma_eth_netdev(struct pldma_dev *pd)
{
	return pd->eth ? pd->eth->ndev : NULL;
}
