// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verbs-ud: unreliable datagram QPs through Debian's libibverbs and
 * PLDMA's provider: two UD QPs, A and B, on one device (its port loops a
 * frame to its own MAC back), an AH to the port's own IPv4 GID.  Checked:
 *
 *  - the device's caps (max_ah; with odp, UD ODP caps SEND and RECV), the
 *    QPs' transitions (a path at RTR refused: EINVAL), query_qp's Q_Key;
 *  - datagrams both ways, with and without immediate, inline too: each
 *    completes on the receiving QP with IBV_WC_GRH, src_qp the sender's
 *    QPN, byte_len 40 + payload; the payload compared byte for byte, and
 *    nothing written after it; the GRH: 20 zero bytes, then an IPv4
 *    header from and to the port's own address (its GID);
 *    ibv_init_ah_from_wc() on a received datagram gives an AH whose reply
 *    arrives; a datagram of the port's MTU arrives, one byte more is
 *    EINVAL at post; the extended post API (ibv_wr_set_ud_addr);
 *  - what UD refuses: RDMA WRITE, READ and atomics (EINVAL at post);
 *  - what the device drops, counting each in ud_dropped (the port's
 *    hardware counter): a wrong Q_Key, a Q_Key with bit 31 (the sender's
 *    own Q_Key is sent: delivered when it is the receiver's, dropped when
 *    not), no receive WQE, a datagram larger than the WQE's buffer; the
 *    WQE a dropped datagram did not take receives the next one (wr_id);
 *  - with odp: the receive buffers are ODP memory never touched
 *    (mincore(): no page resident); every datagram is sent until it
 *    arrives, at most 5 times (one into an untouched page may be dropped
 *    while the fault is served: counted in ud_dropped).  With odp-report
 *    (a device in report mode): the first datagram into an untouched page
 *    must be dropped, the driver's recv_faults (debugfs cqs) must count
 *    the fault, and a retry must bring the bytes.
 *
 * TAP on stdout; exit 1 if any check failed.
 *
 * usage: verbs-ud DEV GID_INDEX [pinned|odp|odp-report]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "pldma-verbs.h"

#define GRH	40		/* the GRH ahead of a datagram's payload */
#define NSLOT	64		/* receive slots of 8 KiB: 0..31 A's, 32.. B's */
#define SLOT	8192
#define QKEY_A	0x11111111u
#define QKEY_B	0x22222222u
#define TRIES	5

static int odp, odp_report;
static const char *dev;
static long drops_seen;		/* datagrams odp retries made up for */

struct ud {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq[2], *rcq[2];
	struct ibv_qp *qp[2];		/* A, B */
	struct ibv_mr *rmr, *smr;
	uint8_t *rbuf;			/* NSLOT * SLOT, never written by us */
	uint8_t *sbuf;			/* 64 KiB */
	union ibv_gid gid;
	int gid_index;
	uint32_t mtu;
	unsigned int next_slot[2];
};

static struct ud u;

/* A port counter (hw_counters/NAME), or -1 */
static long hw_counter(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	return pv_read_long(path, "%ld");
}

/* The driver's count of served receive-buffer faults (debugfs), or -1 */
static long recv_faults(void)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/debug/pldma/%s/cqs", dev);
	return pv_read_long(path, "recv_faults: %ld");
}

static struct ibv_qp *new_qp(struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD, .send_cq = scq, .recv_cq = rcq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(u.pd, &qa);

	if (qp && qa.cap.max_inline_data < 64) {
		ibv_destroy_qp(qp);
		errno = ERANGE;
		return NULL;
	}
	return qp;
}

/* RESET -> INIT (Q_Key @qkey) -> RTR -> RTS: 0, or the failing step */
static const char *ud_up(struct ibv_qp *qp, uint32_t qkey, int try_path)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = PV_PORT,
		.qkey = qkey,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return "INIT";
	if (try_path) {
		/* a UD QP has no path: RTR with one is refused */
		a = (struct ibv_qp_attr){
			.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
			.dest_qp_num = 2, .rq_psn = 0,
			.ah_attr = { .is_global = 1, .port_num = PV_PORT,
				     .grh = { .dgid = u.gid,
					      .sgid_index = u.gid_index,
					      .hop_limit = 1 } },
		};
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN) != EINVAL)
			return "RTR with a path was not EINVAL";
	}
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return "RTR";
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0x123 };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return "RTS";
	return NULL;
}

/* A receive WQE on QP @q: the next slot of its own, @len bytes */
static uint8_t *post_recv(int q, uint32_t len, uint64_t wr_id)
{
	unsigned int s = q * NSLOT / 2 + u.next_slot[q]++ % (NSLOT / 2);
	uint8_t *p = u.rbuf + (size_t)s * SLOT;
	struct ibv_sge sg = { (uintptr_t)p, len, u.rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sg,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(u.qp[q], &wr, &bad) ? NULL : p;
}

struct dgram {
	int from;			/* 0: A, 1: B */
	struct ibv_ah *ah;
	uint32_t dqpn, qkey;
	int imm;			/* SEND_WITH_IMM, immediate 0xc0de0000 + seed */
	int inl;			/* IBV_SEND_INLINE from a stack buffer */
	uint32_t len;
	unsigned int seed;
};

/* Post @d and wait for its send completion: 0, or the errno of the post */
static int send_one(const struct dgram *d, const char **why)
{
	uint8_t stack[64];
	uint8_t *src = d->inl ? stack : u.sbuf;
	struct ibv_sge sg = { (uintptr_t)src, d->len, u.smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x5e0d0000 + d->seed, .sg_list = &sg, .num_sge = 1,
		.opcode = d->imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (d->inl ? IBV_SEND_INLINE : 0),
		.imm_data = htonl(0xc0de0000 + d->seed),
		.wr = { .ud = { .ah = d->ah, .remote_qpn = d->dqpn,
				.remote_qkey = d->qkey } },
	}, *bad;
	struct ibv_wc wc;
	int ret;

	pv_fill(src, d->len, d->seed);
	ret = ibv_post_send(u.qp[d->from], &wr, &bad);
	if (ret)
		return ret;
	/* inline: the posted copy is sent, not what the buffer holds now */
	if (d->inl)
		memset(stack, 0xee, sizeof(stack));
	if (pv_poll_ms(u.scq[d->from], 20000, &wc) != 1)
		*why = "no send completion";
	else if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr.wr_id ||
		 wc.opcode != IBV_WC_SEND)
		*why = "send completion in error";
	return 0;
}

/*
 * @d arrived at the other QP (its receive completion @wc, the WQE's
 * buffer @buf, @wr_id expected): NULL, or what is wrong
 */
static const char *check_dgram(const struct dgram *d, const struct ibv_wc *wc,
			       const uint8_t *buf, uint64_t wr_id)
{
	const struct iphdr *ip = (const void *)(buf + GRH - sizeof(*ip));
	int to = !d->from;
	uint8_t want[8192];
	uint32_t gip;
	size_t i;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV)
		return "receive completion in error";
	if (wc->wr_id != wr_id)
		return "not the WQE expected (wr_id)";
	if (wc->qp_num != u.qp[to]->qp_num || wc->src_qp != u.qp[d->from]->qp_num)
		return "wc.qp_num or wc.src_qp";
	if (!(wc->wc_flags & IBV_WC_GRH))
		return "no IBV_WC_GRH";
	if (wc->byte_len != GRH + d->len)
		return "byte_len is not 40 + payload";
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != !!d->imm ||
	    (d->imm && ntohl(wc->imm_data) != 0xc0de0000 + d->seed))
		return "immediate";
	if (wc->slid || wc->sl || wc->pkey_index)
		return "slid, sl or pkey_index not 0";
	for (i = 0; i < GRH - sizeof(*ip); i++)
		if (buf[i])
			return "the GRH's first 20 bytes are not 0";
	memcpy(&gip, u.gid.raw + 12, 4);
	if (ip->version != 4 || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
	    ip->saddr != gip || ip->daddr != gip)
		return "the GRH's IPv4 header (version, protocol, addresses)";
	pv_fill(want, d->len, d->seed);
	if (memcmp(buf + GRH, want, d->len))
		return "payload bytes";
	if (buf[GRH + d->len])
		return "a byte written after the payload";
	return NULL;
}

/*
 * Send @d (with odp, again until it arrives, at most TRIES times) into a
 * WQE of @len bytes just posted (or @buf, @wr_id: one posted before) and
 * check what arrived; *@tries: the sends it took.  NULL, or why not.
 */
static const char *deliver_into(const struct dgram *d, uint8_t *buf,
				uint64_t wr_id, struct ibv_wc *wc, int *tries)
{
	static char why[128];
	const char *e = NULL;
	int t, r = 0, ret;

	for (t = 1; t <= (odp ? TRIES : 1); t++) {
		ret = send_one(d, &e);
		if (ret) {
			snprintf(why, sizeof(why), "post_send: %s",
				 strerror(ret));
			return why;
		}
		if (e)
			return e;
		r = pv_poll_ms(u.rcq[!d->from], odp ? 3000 : 5000, wc);
		if (r)
			break;
	}
	if (tries)
		*tries = t;
	if (r != 1)
		return r ? "receive poll error" : "nothing arrived";
	if (t > 1)
		drops_seen += t - 1;
	return check_dgram(d, wc, buf, wr_id);
}

static const char *deliver(const struct dgram *d, struct ibv_wc *wc,
			   int *tries, uint8_t **bufp)
{
	static uint64_t id = 100;
	uint8_t *buf = post_recv(!d->from, SLOT, ++id);

	if (!buf)
		return "post_recv failed";
	if (bufp)
		*bufp = buf;
	return deliver_into(d, buf, id, wc, tries);
}

/*
 * @d must not arrive (no completion within 1.5 s); ud_dropped + 1 (read
 * before and after: odp retries before count drops too); *@drop its value
 */
static const char *dropped(const struct dgram *d, long *drop)
{
	long d0 = hw_counter("ud_dropped"), d1;
	const char *e = NULL;
	struct ibv_wc wc;
	int ret;

	ret = send_one(d, &e);
	if (ret)
		return "post_send failed";
	if (e)
		return e;
	if (pv_poll_ms(u.rcq[!d->from], 1500, &wc))
		return "it arrived (or a poll error)";
	d1 = hw_counter("ud_dropped");
	*drop = d1;
	if (d0 < 0 || d1 != d0 + 1)
		return "ud_dropped did not count it (one)";
	return NULL;
}

static int post_bad_op(int q, enum ibv_wr_opcode op)
{
	struct ibv_sge sg = { (uintptr_t)u.sbuf, 8, u.smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)u.rbuf;
		wr.wr.atomic.rkey = u.rmr->rkey;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)u.rbuf;
		wr.wr.rdma.rkey = u.rmr->rkey;
	}
	return ibv_post_send(u.qp[q], &wr, &bad) == EINVAL && bad == &wr;
}

static int open_all(const char *name, int gi)
{
	int i;

	u.gid_index = gi;
	u.pd = pv_open_pd(name, gi, &u.gid);
	if (!u.pd)
		return -1;
	u.ctx = u.pd->context;
	for (i = 0; i < 2; i++) {
		u.scq[i] = ibv_create_cq(u.ctx, 32, NULL, NULL, 0);
		u.rcq[i] = ibv_create_cq(u.ctx, 32, NULL, NULL, 0);
		if (!u.scq[i] || !u.rcq[i])
			return -1;
	}
	/* never written by the CPU: with odp, no page of it is there */
	u.rmr = pv_untouched_mr(u.pd, NSLOT * SLOT, IBV_ACCESS_LOCAL_WRITE,
				odp);
	u.sbuf = pv_untouched(65536);
	if (!u.rmr || !u.sbuf)
		return -1;
	u.rbuf = u.rmr->addr;
	memset(u.sbuf, 0, 65536);
	u.smr = ibv_reg_mr(u.pd, u.sbuf, 65536, IBV_ACCESS_LOCAL_WRITE |
			   (odp ? IBV_ACCESS_ON_DEMAND : 0));
	return u.smr ? 0 : -1;
}

/* The extended post API: ibv_wr_send, ibv_wr_set_ud_addr, ibv_wr_set_sge */
static const char *qpx_send(struct ibv_ah *ah)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_UD, .send_cq = u.scq[0],
		.recv_cq = u.rcq[0],
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = u.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	struct dgram d = { .from = 0, .len = 333, .seed = 77, .imm = 1 };
	struct ibv_qp *qp = ibv_create_qp_ex(u.ctx, &qa);
	const char *e = NULL;
	struct ibv_qp_ex *qx;
	struct ibv_wc wc;
	uint8_t *buf;
	int t = 0, r = 0;

	if (!qp)
		return "ibv_create_qp_ex failed";
	qx = ibv_qp_to_qp_ex(qp);
	if (ud_up(qp, QKEY_A, 0)) {
		e = "INIT, RTR, RTS";
		goto out;
	}
	buf = post_recv(1, SLOT, 4242);
	pv_fill(u.sbuf, d.len, d.seed);
	while (!r && t < (odp ? TRIES : 1)) {
		t++;
		ibv_wr_start(qx);
		qx->wr_id = 4343;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_imm(qx, htonl(0xc0de0000 + d.seed));
		ibv_wr_set_ud_addr(qx, ah, u.qp[1]->qp_num, QKEY_B);
		ibv_wr_set_sge(qx, u.smr->lkey, (uintptr_t)u.sbuf, d.len);
		if (ibv_wr_complete(qx)) {
			e = "ibv_wr_complete failed";
			goto out;
		}
		if (pv_poll_ms(u.scq[0], 20000, &wc) != 1 ||
		    wc.status != IBV_WC_SUCCESS || wc.wr_id != 4343) {
			e = "no successful send completion";
			goto out;
		}
		r = pv_poll_ms(u.rcq[1], odp ? 3000 : 5000, &wc);
	}
	if (r != 1) {
		e = "nothing arrived";
		goto out;
	}
	drops_seen += t - 1;
	/* (from the third QP: check_dgram wants A's QPN) */
	if (wc.src_qp != qp->qp_num) {
		e = "wc.src_qp is not the extended QP's";
		goto out;
	}
	wc.src_qp = u.qp[0]->qp_num;
	e = check_dgram(&d, &wc, buf, 4242);
out:
	if (ibv_destroy_qp(qp) && !e)
		e = "destroy_qp failed";
	return e;
}

/* Datagrams both ways, with and without immediate, inline; a reply AH */
static void traffic(struct ibv_ah *ah)
{
	struct dgram d = { .from = 0, .ah = ah, .dqpn = u.qp[1]->qp_num,
			   .qkey = QKEY_B, .len = 200, .seed = 1 };
	struct ibv_ah_attr aa;
	struct ibv_ah *reply = NULL;
	struct ibv_wc wc;
	const char *e;
	uint8_t *buf = NULL;
	int tries = 0;

	e = deliver(&d, &wc, &tries, &buf);
	check(!e, "A -> B SEND of 200 B: B's completion with IBV_WC_GRH, src_qp A (%#x), byte_len 240, the GRH's IPv4 addresses the GID's, bytes compared (%d send(s))%s%s",
	      u.qp[0]->qp_num, tries, e ? ": " : "", e ? e : "");
	if (odp && !e)
		check(tries > 1 || !odp_report,
		      "odp: the first datagram into an untouched page took %d sends%s",
		      tries, odp_report ? " (report mode: dropped at least once)" : "");
	memset(&aa, 0, sizeof(aa));
	check(!e && !ibv_init_ah_from_wc(u.ctx, PV_PORT, &wc,
					 (struct ibv_grh *)buf, &aa) &&
	      aa.is_global && !memcmp(&aa.grh.dgid, &u.gid, 16),
	      "ibv_init_ah_from_wc() on it: the sender's GID (the port's own)");
	reply = e ? NULL : ibv_create_ah(u.pd, &aa);
	check(reply != NULL, "an AH from that: created");
	if (!reply)
		return;
	d = (struct dgram){ .from = 1, .ah = reply, .dqpn = wc.src_qp,
			    .qkey = QKEY_A, .imm = 1, .len = 300, .seed = 2 };
	e = deliver(&d, &wc, &tries, NULL);
	check(!e, "B -> A reply SEND_WITH_IMM of 300 B through that AH to wc.src_qp: immediate and bytes right%s%s",
	      e ? ": " : "", e ? e : "");
	d = (struct dgram){ .from = 0, .ah = ah, .dqpn = u.qp[1]->qp_num,
			    .qkey = QKEY_B, .imm = 1, .len = 1000, .seed = 3 };
	e = deliver(&d, &wc, &tries, NULL);
	check(!e, "A -> B SEND_WITH_IMM of 1000 B%s%s", e ? ": " : "",
	      e ? e : "");
	d = (struct dgram){ .from = 1, .ah = ah, .dqpn = u.qp[0]->qp_num,
			    .qkey = QKEY_A, .len = 64, .seed = 4, .inl = 1 };
	e = deliver(&d, &wc, &tries, NULL);
	check(!e, "B -> A inline SEND of 64 B, its buffer overwritten after the post: the posted bytes arrive%s%s",
	      e ? ": " : "", e ? e : "");
	d = (struct dgram){ .from = 1, .ah = ah, .dqpn = u.qp[0]->qp_num,
			    .qkey = QKEY_A, .len = u.mtu, .seed = 5, .imm = 1 };
	e = deliver(&d, &wc, &tries, NULL);
	check(!e, "B -> A SEND_WITH_IMM of the MTU, %u B%s%s", u.mtu,
	      e ? ": " : "", e ? e : "");
	d.len = u.mtu + 1;
	check(send_one(&d, &e) == EINVAL,
	      "a SEND of MTU + 1 (%u B): EINVAL at post", u.mtu + 1);
	ibv_destroy_ah(reply);
}

/* Q_Keys: a wrong one, bit 31's rule */
static void qkeys(struct ibv_ah *ah, long *drop)
{
	struct dgram d = { .from = 0, .ah = ah, .dqpn = u.qp[1]->qp_num,
			   .qkey = 0x33333333, .len = 100, .seed = 10 };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc;
	const char *e;
	uint8_t *buf;

	buf = post_recv(1, SLOT, 500);
	e = buf ? dropped(&d, drop) : "post_recv failed";
	check(!e, "A -> B with a wrong Q_Key (0x33333333): not delivered, ud_dropped + 1 (%ld)%s%s",
	      *drop, e ? ": " : "", e ? e : "");
	d.qkey = QKEY_B;
	d.seed = 11;
	e = buf ? deliver_into(&d, buf, 500, &wc, NULL) : "no WQE";
	check(!e, "then with B's Q_Key: arrives in the WQE the dropped one left (wr_id 500)%s%s",
	      e ? ": " : "", e ? e : "");

	/* bit 31: the sender's own Q_Key goes out */
	qa = (struct ibv_qp_attr){ .qkey = QKEY_B };
	check(!ibv_modify_qp(u.qp[0], &qa, IBV_QP_QKEY),
	      "modify A in RTS: Q_Key 0x%08x", QKEY_B);
	memset(&qa, 0, sizeof(qa));
	check(!ibv_query_qp(u.qp[0], &qa, IBV_QP_QKEY | IBV_QP_STATE, &qi) &&
	      qa.qkey == QKEY_B && qa.qp_state == IBV_QPS_RTS,
	      "query_qp A: Q_Key 0x%08x, RTS", qa.qkey);
	d = (struct dgram){ .from = 0, .ah = ah, .dqpn = u.qp[1]->qp_num,
			    .qkey = 0x80000000, .len = 120, .seed = 12 };
	e = deliver(&d, &wc, NULL, NULL);
	check(!e, "A -> B with remote_qkey 0x80000000 (A's own, now B's): delivered%s%s",
	      e ? ": " : "", e ? e : "");
	qa = (struct ibv_qp_attr){ .qkey = QKEY_A };
	check(!ibv_modify_qp(u.qp[0], &qa, IBV_QP_QKEY),
	      "A's Q_Key back to 0x%08x", QKEY_A);
	buf = post_recv(1, SLOT, 501);
	d.seed = 13;
	e = buf ? dropped(&d, drop) : "post_recv failed";
	check(!e, "A -> B with remote_qkey 0x80000000 (A's own, not B's): dropped, ud_dropped + 1%s%s",
	      e ? ": " : "", e ? e : "");
	d.qkey = QKEY_B;
	e = buf ? deliver_into(&d, buf, 501, &wc, NULL) : "no WQE";
	check(!e, "the WQE it left takes the next datagram%s%s",
	      e ? ": " : "", e ? e : "");
}

/* No WQE; a WQE too small; what UD refuses */
static void drops(struct ibv_ah *ah, long *drop)
{
	struct dgram d = { .from = 1, .ah = ah, .dqpn = u.qp[0]->qp_num,
			   .qkey = QKEY_A, .len = 200, .seed = 20 };
	struct ibv_wc wc;
	const char *e;
	uint8_t *buf;

	e = dropped(&d, drop);
	check(!e, "B -> A with no receive WQE posted on A: dropped, ud_dropped + 1%s%s",
	      e ? ": " : "", e ? e : "");
	buf = post_recv(0, GRH + 100, 600);
	d.seed = 21;
	e = buf ? dropped(&d, drop) : "post_recv failed";
	check(!e, "B -> A of 200 B into a WQE of 40 + 100 B: dropped, ud_dropped + 1%s%s",
	      e ? ": " : "", e ? e : "");
	d.len = 100;
	d.seed = 22;
	e = buf ? deliver_into(&d, buf, 600, &wc, NULL) : "no WQE";
	check(!e, "then 100 B: into that same WQE (wr_id 600), byte_len 140%s%s",
	      e ? ": " : "", e ? e : "");
	check(post_bad_op(0, IBV_WR_RDMA_WRITE), "RDMA WRITE on a UD QP: EINVAL at post, bad_wr set");
	check(post_bad_op(0, IBV_WR_RDMA_WRITE_WITH_IMM), "RDMA WRITE with immediate on a UD QP: EINVAL");
	check(post_bad_op(0, IBV_WR_RDMA_READ), "RDMA READ on a UD QP: EINVAL");
	check(post_bad_op(0, IBV_WR_ATOMIC_FETCH_AND_ADD), "an atomic on a UD QP: EINVAL");
	check(pv_poll_ms(u.scq[0], 300, &wc) == 0,
	      "and no completion for any of them");
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	const char *e;
	long drop0, drop, rf0, rf1;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV GID_INDEX [pinned|odp|odp-report]\n",
			argv[0]);
		return 2;
	}
	dev = argv[1];
	odp = argc > 3 && !strncmp(argv[3], "odp", 3);
	odp_report = argc > 3 && !strcmp(argv[3], "odp-report");
	check(!open_all(dev, atoi(argv[2])),
	      "%s: context, PD, 4 CQs, %s MRs (receive buffers never touched)",
	      dev, odp ? "ODP" : "pinned");
	if (tap_failed())
		return 1;
	memset(&dx, 0, sizeof(dx));
	check(!ibv_query_device_ex(u.ctx, NULL, &dx) && dx.orig_attr.max_ah > 0,
	      "max_ah %d", dx.orig_attr.max_ah);
	if (odp)
		check((dx.odp_caps.per_transport_caps.ud_odp_caps &
		       (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV)) ==
		      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV),
		      "UD ODP caps: SEND and RECV (%#x)",
		      dx.odp_caps.per_transport_caps.ud_odp_caps);
	check(!ibv_query_port(u.ctx, PV_PORT, &pa) && pa.active_mtu,
	      "port 1: active MTU %d", 128 << pa.active_mtu);
	u.mtu = 128 << pa.active_mtu;
	for (i = 0; i < 2; i++)
		u.qp[i] = new_qp(u.scq[i], u.rcq[i]);
	check(u.qp[0] && u.qp[1], "two UD QPs, A and B (64 B inline)");
	if (tap_failed())
		return 1;
	e = ud_up(u.qp[0], QKEY_A, 1);
	check(!e, "A %#x: INIT (Q_Key 0x%08x), RTR with a path refused (EINVAL), RTR, RTS%s%s",
	      u.qp[0]->qp_num, QKEY_A, e ? ": " : "", e ? e : "");
	e = ud_up(u.qp[1], QKEY_B, 0);
	check(!e, "B %#x: INIT (Q_Key 0x%08x), RTR, RTS%s%s", u.qp[1]->qp_num,
	      QKEY_B, e ? ": " : "", e ? e : "");
	memset(&qa, 0, sizeof(qa));
	memset(&qi, 0, sizeof(qi));
	check(!ibv_query_qp(u.qp[1], &qa, IBV_QP_QKEY | IBV_QP_STATE, &qi) &&
	      qa.qkey == QKEY_B && qa.qp_state == IBV_QPS_RTS &&
	      qi.qp_type == IBV_QPT_UD,
	      "query_qp B: Q_Key 0x%08x, state %d, type %d (UD)", qa.qkey,
	      qa.qp_state, qi.qp_type);
	aa = (struct ibv_ah_attr){
		.is_global = 1, .port_num = PV_PORT,
		.grh = { .dgid = u.gid, .sgid_index = u.gid_index,
			 .hop_limit = 64 },
	};
	ah = ibv_create_ah(u.pd, &aa);
	check(ah != NULL, "an AH to the port's own GID (index %d)",
	      u.gid_index);
	if (tap_failed())
		return 1;
	if (odp)
		check(pv_resident(u.rbuf, NSLOT * SLOT) == 0,
		      "the receive buffers: no page resident (never touched)");
	drop0 = drop = hw_counter("ud_dropped");
	rf0 = recv_faults();
	check(drop0 >= 0, "%s's ud_dropped counter (hw_counters): %ld", dev,
	      drop0);

	traffic(ah);
	e = qpx_send(ah);
	check(!e, "ibv_create_qp_ex UD QP: ibv_wr_send_imm + ibv_wr_set_ud_addr + ibv_wr_set_sge to B, 333 B arrive%s%s",
	      e ? ": " : "", e ? e : "");
	qkeys(ah, &drop);
	drops(ah, &drop);

	drop = hw_counter("ud_dropped");
	rf1 = recv_faults();
	printf("# %s: ud_dropped %ld -> %ld, recv_faults %ld -> %ld, %ld datagram(s) sent again (odp)\n",
	       dev, drop0, drop, rf0, rf1, drops_seen);
	check(drop0 >= 0 && drop - drop0 == 4 + drops_seen,
	      "ud_dropped counted the 4 drops asked%s (%ld)",
	      odp ? " and the ones odp retries made up for" : "",
	      drop - drop0);
	if (odp_report)
		check(rf1 > rf0 && drops_seen > 0,
		      "report mode: the driver served receive-buffer faults (recv_faults %ld -> %ld)",
		      rf0, rf1);
	check(!ibv_destroy_ah(ah) && !ibv_destroy_qp(u.qp[0]) &&
	      !ibv_destroy_qp(u.qp[1]), "AH and QPs destroyed");
	check(!ibv_dereg_mr(u.rmr) && !ibv_dereg_mr(u.smr) &&
	      !ibv_destroy_cq(u.scq[0]) && !ibv_destroy_cq(u.scq[1]) &&
	      !ibv_destroy_cq(u.rcq[0]) && !ibv_destroy_cq(u.rcq[1]) &&
	      !ibv_dealloc_pd(u.pd) && !ibv_close_device(u.ctx),
	      "MRs, CQs, PD, context closed");
	return tap_done();
}
