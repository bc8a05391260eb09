/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the verbs programs of the guest (pldma-verbs-peer, pldma-edm,
 * verbs-odp-pressure, verbs-rdma, verbs-mr) do alike on plain libibverbs:
 * open a device by name, find the RoCEv2 GID that holds an IPv4 address
 * and its netdev's MAC, add the permanent neighbour entry a peer without
 * ARP needs, and take an RC QP through INIT, RTR and RTS.  Nothing here
 * knows PLDMA: any provider (rxe, pldma) will do.  Built only against a
 * verbs sysroot (meson -Dverbs_sysroot=...).
 */
#ifndef PLDMA_VERBS_H
#define PLDMA_VERBS_H

#include <stdint.h>

#include <infiniband/verbs.h>

/* The port every program uses */
#define PV_PORT		1

/*
 * The verbs device named @name (NULL: the first one), opened; NULL and
 * errno if there is none (ENODEV) or it does not open.  @ndev, when not
 * NULL, gets the number of devices there are.
 */
struct ibv_context *pv_open(const char *name, int *ndev);

/*
 * The first RoCEv2 GID of PV_PORT's @tbl_len that holds an IPv4 address
 * (::ffff:a.b.c.d): its index, and the GID in @gid; with @ifname (at least
 * IF_NAMESIZE bytes), the name of its netdev.  -1 if there is none.
 */
int pv_ipv4_gid(struct ibv_context *ctx, int tbl_len, union ibv_gid *gid,
		char *ifname);

/* The MAC of netdev @ifname (/sys/class/net/IF/address): 0 or -1 */
int pv_read_mac(const char *ifname, uint8_t mac[6]);

/*
 * A permanent neighbour entry on @ifname for IPv4 address @ip (network
 * order) at @mac (SIOCSARP, as `ip neigh add ... nud permanent` or
 * `arp -s` make one), for a peer that answers no ARP (a PLDMA port):
 * 0 or -errno.
 */
int pv_neigh_add(const char *ifname, uint32_t ip, const uint8_t mac[6]);

/* RESET -> INIT on PV_PORT, P_Key index 0, with @access: 0 or -1 (errno) */
int pv_qp_init(struct ibv_qp *qp, unsigned int access);

/* Where an RC QP goes at RTR: the peer's QP and the path to it */
struct pv_path {
	uint32_t dest_qpn;
	uint32_t rq_psn;		/* the peer's start PSN */
	enum ibv_mtu mtu;
	union ibv_gid dgid;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t max_dest_rd_atomic;	/* READs the peer may have in flight */
};

/* INIT -> RTR to @p (a GRH, RNR NAK timer 0.64 ms): 0 or -1 (errno) */
int pv_qp_rtr(struct ibv_qp *qp, const struct pv_path *p);

/*
 * RTR -> RTS from start PSN @sq_psn, as rdma-core's ibv_rc_pingpong sets
 * it (ACK timeout 14, 67 ms; 7 retries), with infinite RNR retries (a
 * faulting responder sends RNR NAKs) and one READ in flight: 0 or -1
 * (errno).
 */
int pv_qp_rts(struct ibv_qp *qp, uint32_t sq_psn);

#endif
