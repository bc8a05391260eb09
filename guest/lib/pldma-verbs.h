/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the verbs programs of the guest (pldma-verbs-peer, pldma-edm,
 * verbs-odp-pressure, verbs-rdma, verbs-mr, verbs-srq, verbs-ud) do alike
 * on plain libibverbs: open a device by name, find the RoCEv2 GID that
 * holds an IPv4 address and its netdev's MAC, add the permanent neighbour
 * entry a peer without ARP needs, and take an RC QP through INIT, RTR and
 * RTS; and what the verbs tests (verbs-*.c) share: their numbered TAP
 * lines, untouched registered memory, a known byte pattern, polling a CQ
 * with a timeout.  Nothing here knows PLDMA: any provider (rxe, pldma)
 * will do.  Built only against a verbs sysroot (meson -Dverbs_sysroot=...).
 */
#ifndef PLDMA_VERBS_H
#define PLDMA_VERBS_H

#include <stddef.h>
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
 * The verbs device named @name opened, a PD of it, and GID @gid_index of
 * PV_PORT in @gid: the PD (its context: pd->context), or NULL
 */
struct ibv_pd *pv_open_pd(const char *name, int gid_index,
			  union ibv_gid *gid);

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

/*
 * RC @qp (its source GID @sgid_index) through INIT (remote @access), RTR
 * and RTS to @peer at @peer_gid, on this host's link (hop limit 1, MTU
 * 1024, one READ in flight), each side's start PSN 0x1000 + its QPN %
 * 4096: 0 or -1 (errno).  Both ends of a pair in one process.
 */
int pv_qp_connect(struct ibv_qp *qp, int sgid_index, unsigned int access,
		  const struct ibv_qp *peer, const union ibv_gid *peer_gid);

/* One completion of @cq within @ms: 1, 0 (none came), -1 (poll error) */
int pv_poll_ms(struct ibv_cq *cq, int ms, struct ibv_wc *wc);

/* One completion of @cq within 20 s: 0, or -1 (none, or a poll error) */
int pv_poll1(struct ibv_cq *cq, struct ibv_wc *wc);

/* @len bytes of anonymous memory, never touched (no page yet), or NULL */
void *pv_untouched(size_t len);

/*
 * pv_untouched(@len) registered on @pd with @access, and
 * IBV_ACCESS_ON_DEMAND when @odp: the MR (mr->addr the memory), or NULL
 */
struct ibv_mr *pv_untouched_mr(struct ibv_pd *pd, size_t len,
			       unsigned int access, int odp);

/* Pages of [@p, @p + @len) resident (mincore()), or -1; @p page-aligned */
int pv_resident(const void *p, size_t len);

/*
 * The number of the first line of file @path that @fmt (one %ld) matches:
 * "VmPin: %ld kB" of /proc/self/status, a counter's "%ld"; -1 if none
 */
long pv_read_long(const char *path, const char *fmt);

/* @len bytes of the pattern of @seed (pldma-util.h's pu_byte()) */
void pv_fill(uint8_t *p, size_t len, unsigned int seed);

/*
 * The verbs tests' TAP: check() prints "ok N - <message>" or "not ok N -
 * ...", numbered from 1, and counts the failures; tap_failed() is their
 * count so far; tap_done() prints the plan "1..N" after the last check and
 * returns the program's exit status, 1 if any check failed, else 0.
 */
void check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int tap_failed(void);
int tap_done(void);

#endif
