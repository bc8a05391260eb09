// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verbs-rdma: the RC operations ibv_rc_pingpong does not use, through
 * Debian's libibverbs and PLDMA's provider, between two PLDMA ib_devices
 * of this guest (one process, one context on each, an RC QP between
 * them): RDMA WRITE, RDMA READ, WRITE_WITH_IMM, SEND_WITH_IMM into two
 * receive SGEs, unsignaled work requests, WRITE, READ and SEND with
 * gather/scatter lists (4 SGEs; one more than max_send_sge is refused), a
 * WRITE with a forged rkey, which must complete with an error and write
 * nothing, inline WRITE and SEND from buffers reused before their
 * completion, atomics (FetchAdd,
 * CmpSwap both ways, on dropped pages with odp), a receive-only QP
 * (max_send_wr 0) that takes a SEND, and one with the
 * rkey of another PD of the same context (REM_ACCESS_ERR, nothing
 * written).  Every transfer's
 * bytes are compared.  B's CQ has a completion channel and is armed
 * before B's QP exists (the provider maps the channel page, and rings the
 * arm, only with the first QP): its first CQE must still raise the event.  TAP on stdout; exit 1 if any check failed.
 *
 * usage: verbs-rdma DEV_A GID_INDEX_A DEV_B GID_INDEX_B [odp]
 *   odp: the MRs are IBV_ACCESS_ON_DEMAND and the buffers untouched
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "pldma-verbs.h"

#define LEN	(64 * 1024)
/* inline data each QP asks for (the provider's PLDMA_IB_MAX_INLINE) */
#define INLINE	256

/* more SGEs than any QP is given (the test's array) */
#define MAX_SGES 64

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;	/* B's: armed before its QP */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* 2 * LEN */
	union ibv_gid gid;
	int gid_index;
	uint32_t max_send_sge;	/* what the QP was given */
};

static int setup(struct end *e, const char *dev, int gi, int odp,
		 int events)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 2,
			 .max_inline_data = INLINE },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	e->gid_index = gi;
	e->pd = pv_open_pd(dev, gi, &e->gid);
	if (!e->pd)
		return -1;
	e->ctx = e->pd->context;
	if (events)
		e->ch = ibv_create_comp_channel(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 64, NULL, e->ch, 0);
	if (!e->cq)
		return -1;
	/* armed while the context has no QP, so no channel page yet */
	if (events && ibv_req_notify_cq(e->cq, 0))
		return -1;
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->qp || qa.cap.max_inline_data < INLINE ||
	    qa.cap.max_send_sge < 4 || qa.cap.max_send_sge >= MAX_SGES)
		return -1;
	e->max_send_sge = qa.cap.max_send_sge;
	e->mr = pv_untouched_mr(e->pd, 2 * LEN, access, odp);
	if (!e->mr)
		return -1;
	e->buf = e->mr->addr;
	return 0;
}

static int connect_qp(struct end *e, const struct end *peer)
{
	return pv_qp_connect(e->qp, e->gid_index, IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
			     peer->qp, &peer->gid);
}

/*
 * New RC QPs of @a's and @b's first PDs, connected to each other; @b's
 * asks for a send queue of @b_send_wr entries (0: receive only, as
 * qperf's receiving side asks)
 */
static int new_qps_wr(struct end *a, struct end *b, uint32_t a_send_wr,
		      uint32_t b_send_wr)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = a_send_wr, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 2 },
	};

	qa.send_cq = a->cq;
	qa.recv_cq = a->cq;
	a->qp = ibv_create_qp(a->pd, &qa);
	qa.send_cq = b->cq;
	qa.recv_cq = b->cq;
	qa.cap.max_send_wr = b_send_wr;
	b->qp = ibv_create_qp(b->pd, &qa);
	if (!a->qp || !b->qp)
		return -1;
	return connect_qp(a, b) || connect_qp(b, a) ? -1 : 0;
}

static int new_qps_sq(struct end *a, struct end *b, uint32_t b_send_wr)
{
	return new_qps_wr(a, b, 16, b_send_wr);
}

static int new_qps(struct end *a, struct end *b)
{
	return new_qps_sq(a, b, 16);
}

/* Whether the @len bytes at @p are all @v */
static int all_are(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static int send_wr(struct end *e, enum ibv_wr_opcode op, uint64_t wr_id,
		   void *addr, uint32_t len, uint64_t raddr, uint32_t rkey,
		   uint32_t imm, unsigned int flags)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = flags, .imm_data = htonl(imm),
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	struct end a = {}, b = {};
	struct ibv_sge sg[2], sge3[MAX_SGES], gl[4];
	int i;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr swr, *sbad;
	struct ibv_wc wc;
	int odp, ret;

	if (argc < 5) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B [odp]\n",
			argv[0]);
		return 2;
	}
	odp = argc > 5 && !strcmp(argv[5], "odp");
	check(!setup(&a, argv[1], atoi(argv[2]), odp, 0) &&
	      !setup(&b, argv[3], atoi(argv[4]), odp, 1),
	      "%s and %s: context, PD, CQ (%s's armed before its QP), RC QP, %s MR of 128 KiB",
	      argv[1], argv[3], argv[3], odp ? "ODP" : "pinned");
	if (tap_failed())
		return 1;
	check(!connect_qp(&a, &b) && !connect_qp(&b, &a),
	      "QPs %#x <-> %#x: INIT, RTR (RoCEv2 AV), RTS", a.qp->qp_num,
	      b.qp->qp_num);
	if (tap_failed())
		return 1;

	/* RDMA WRITE a -> b */
	pv_fill(a.buf, LEN, 1);
	ret = send_wr(&a, IBV_WR_RDMA_WRITE, 11, a.buf, LEN,
		      (uintptr_t)b.buf, b.mr->rkey, 0, IBV_SEND_SIGNALED);
	check(!ret && !pv_poll1(a.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == 11,
	      "RDMA WRITE 64 KiB: completion (status %d, opcode %d)",
	      wc.status, wc.opcode);
	check(!memcmp(a.buf, b.buf, LEN), "RDMA WRITE: the bytes arrived");

	/* RDMA READ b -> a (second half of a) */
	pv_fill(b.buf + LEN, LEN, 2);
	ret = send_wr(&a, IBV_WR_RDMA_READ, 12, a.buf + LEN, LEN,
		      (uintptr_t)b.buf + LEN, b.mr->rkey, 0,
		      IBV_SEND_SIGNALED);
	check(!ret && !pv_poll1(a.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == LEN,
	      "RDMA READ 64 KiB: completion (status %d, opcode %d, %u bytes)",
	      wc.status, wc.opcode, wc.byte_len);
	check(!memcmp(a.buf + LEN, b.buf + LEN, LEN),
	      "RDMA READ: the bytes arrived");

	/* WRITE_WITH_IMM a -> b: consumes a receive WQE of b */
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 21;
	check(!ibv_post_recv(b.qp, &rwr, &rbad), "post_recv (no SGE)");
	pv_fill(a.buf, 4096, 3);
	ret = send_wr(&a, IBV_WR_RDMA_WRITE_WITH_IMM, 13, a.buf, 4096,
		      (uintptr_t)b.buf + 8192, b.mr->rkey, 0xfeed0001,
		      IBV_SEND_SIGNALED);
	check(!ret && !pv_poll1(a.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == 13, "WRITE_WITH_IMM: requester completion");
	check(!pv_poll1(b.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 21 &&
	      wc.wc_flags & IBV_WC_WITH_IMM &&
	      ntohl(wc.imm_data) == 0xfeed0001 &&
	      wc.qp_num == b.qp->qp_num && wc.src_qp == a.qp->qp_num,
	      "WRITE_WITH_IMM: responder RECV_RDMA_WITH_IMM, imm %#x, qp/src_qp",
	      ntohl(wc.imm_data));
	{
		/* the arm made before b's QP existed took effect */
		struct pollfd pfd = { .fd = b.ch->fd, .events = POLLIN };
		struct ibv_cq *ecq = NULL;
		void *ectx;

		check(poll(&pfd, 1, 10000) == 1 &&
		      !ibv_get_cq_event(b.ch, &ecq, &ectx) && ecq == b.cq,
		      "%s: the CQ armed before its QP existed raised its completion event",
		      argv[3]);
		if (ecq)
			ibv_ack_cq_events(ecq, 1);
	}
	check(!memcmp(a.buf, b.buf + 8192, 4096),
	      "WRITE_WITH_IMM: the bytes arrived");

	/* SEND_WITH_IMM 1000 bytes into two receive SGEs (300 + 700) */
	sg[0] = (struct ibv_sge){ (uintptr_t)b.buf + 100, 300, b.mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)b.buf + 5000, 700, b.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 22, .sg_list = sg, .num_sge = 2 };
	check(!ibv_post_recv(b.qp, &rwr, &rbad), "post_recv (two SGEs)");
	pv_fill(a.buf, 1000, 4);
	ret = send_wr(&a, IBV_WR_SEND_WITH_IMM, 14, a.buf, 1000, 0, 0,
		      0xabcd, IBV_SEND_SIGNALED);
	check(!ret && !pv_poll1(a.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_SEND, "SEND_WITH_IMM: requester completion");
	check(!pv_poll1(b.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_RECV && wc.byte_len == 1000 &&
	      wc.wr_id == 22 && ntohl(wc.imm_data) == 0xabcd,
	      "SEND_WITH_IMM: RECV of 1000 bytes (%u), imm %#x", wc.byte_len,
	      ntohl(wc.imm_data));
	check(!memcmp(a.buf, b.buf + 100, 300) &&
	      !memcmp(a.buf + 300, b.buf + 5000, 700),
	      "SEND_WITH_IMM: scattered into both SGEs");

	/* unsignaled, then signaled: one completion */
	pv_fill(a.buf, 8192, 5);
	ret = send_wr(&a, IBV_WR_RDMA_WRITE, 15, a.buf, 4096,
		      (uintptr_t)b.buf, b.mr->rkey, 0, 0);
	ret |= send_wr(&a, IBV_WR_RDMA_WRITE, 16, a.buf + 4096, 4096,
		       (uintptr_t)b.buf + 4096, b.mr->rkey, 0,
		       IBV_SEND_SIGNALED);
	check(!ret && !pv_poll1(a.cq, &wc) && wc.wr_id == 16 &&
	      wc.status == IBV_WC_SUCCESS && ibv_poll_cq(a.cq, 1, &wc) == 0,
	      "unsignaled WRITE then signaled: one completion, the signaled one's");
	check(!memcmp(a.buf, b.buf, 8192), "both WRITEs' bytes arrived");

	/*
	 * gather and scatter lists: a WRITE from 4 SGEs of a (1000, 3000,
	 * 0, 2777 bytes: segments of 1024 straddle them), READ back into 3
	 */
	pv_fill(a.buf, 8192, 6);
	memset(b.buf + 16384, 0, 8192);
	gl[0] = (struct ibv_sge){ (uintptr_t)a.buf + 7000, 1000, a.mr->lkey };
	gl[1] = (struct ibv_sge){ (uintptr_t)a.buf, 3000, a.mr->lkey };
	gl[2] = (struct ibv_sge){ (uintptr_t)a.buf + 3000, 0, a.mr->lkey };
	gl[3] = (struct ibv_sge){ (uintptr_t)a.buf + 4000, 2777, a.mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 31, .sg_list = gl, .num_sge = 4,
				    .opcode = IBV_WR_RDMA_WRITE,
				    .send_flags = IBV_SEND_SIGNALED };
	swr.wr.rdma.remote_addr = (uintptr_t)b.buf + 16384;
	swr.wr.rdma.rkey = b.mr->rkey;
	check(!ibv_post_send(a.qp, &swr, &sbad) && !pv_poll1(a.cq, &wc) &&
	      wc.wr_id == 31 && wc.status == IBV_WC_SUCCESS,
	      "RDMA WRITE gathered from 4 SGEs (6777 bytes): completion (status %d)",
	      wc.status);
	check(!memcmp(b.buf + 16384, a.buf + 7000, 1000) &&
	      !memcmp(b.buf + 17384, a.buf, 3000) &&
	      !memcmp(b.buf + 20384, a.buf + 4000, 2777) && !b.buf[23161],
	      "gathered WRITE: the 4 pieces arrived in order, nothing after");
	memset(a.buf + LEN, 0, 8192);
	gl[0] = (struct ibv_sge){ (uintptr_t)a.buf + LEN + 5000, 2000, a.mr->lkey };
	gl[1] = (struct ibv_sge){ (uintptr_t)a.buf + LEN, 1, a.mr->lkey };
	gl[2] = (struct ibv_sge){ (uintptr_t)a.buf + LEN + 100, 4776, a.mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 32, .sg_list = gl, .num_sge = 3,
				    .opcode = IBV_WR_RDMA_READ,
				    .send_flags = IBV_SEND_SIGNALED };
	swr.wr.rdma.remote_addr = (uintptr_t)b.buf + 16384;
	swr.wr.rdma.rkey = b.mr->rkey;
	check(!ibv_post_send(a.qp, &swr, &sbad) && !pv_poll1(a.cq, &wc) &&
	      wc.wr_id == 32 && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == 6777,
	      "RDMA READ scattered into 3 SGEs: completion (status %d, %u bytes)",
	      wc.status, wc.byte_len);
	check(!memcmp(a.buf + LEN + 5000, b.buf + 16384, 2000) &&
	      a.buf[LEN] == b.buf[18384] &&
	      !memcmp(a.buf + LEN + 100, b.buf + 18385, 4776) &&
	      !a.buf[LEN + 1] && !a.buf[LEN + 4876] && !a.buf[LEN + 7000],
	      "scattered READ: each SGE holds its piece, nothing between");
	/* SEND gathered from 2 SGEs into one receive SGE */
	sg[0] = (struct ibv_sge){ (uintptr_t)b.buf + 32768, 4096, b.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 23, .sg_list = sg, .num_sge = 1 };
	check(!ibv_post_recv(b.qp, &rwr, &rbad), "post_recv (one SGE)");
	gl[0] = (struct ibv_sge){ (uintptr_t)a.buf + 100, 300, a.mr->lkey };
	gl[1] = (struct ibv_sge){ (uintptr_t)a.buf + 5000, 1200, a.mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 33, .sg_list = gl, .num_sge = 2,
				    .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	check(!ibv_post_send(a.qp, &swr, &sbad) && !pv_poll1(a.cq, &wc) &&
	      wc.wr_id == 33 && wc.status == IBV_WC_SUCCESS &&
	      !pv_poll1(b.cq, &wc) && wc.wr_id == 23 &&
	      wc.status == IBV_WC_SUCCESS && wc.byte_len == 1500 &&
	      !memcmp(b.buf + 32768, a.buf + 100, 300) &&
	      !memcmp(b.buf + 33068, a.buf + 5000, 1200),
	      "SEND gathered from 2 SGEs: one RECV of 1500 bytes, in order");

	/*
	 * Inline data: the payload is taken when the WR is posted, so the
	 * buffers (two, on the stack, no MR: no lkey is used) are overwritten
	 * before the completion; the peer must still get what was posted
	 */
	{
		uint8_t in1[200], in2[56], want[256];
		struct ibv_sge il[2] = {
			{ (uintptr_t)in1, sizeof(in1), 0 },
			{ (uintptr_t)in2, sizeof(in2), 0 },
		};

		pv_fill(in1, sizeof(in1), 41);
		pv_fill(in2, sizeof(in2), 42);
		memcpy(want, in1, sizeof(in1));
		memcpy(want + sizeof(in1), in2, sizeof(in2));
		memset(b.buf + 40000, 0, 512);
		swr = (struct ibv_send_wr){
			.wr_id = 51, .sg_list = il, .num_sge = 2,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
		};
		swr.wr.rdma.remote_addr = (uintptr_t)b.buf + 40000;
		swr.wr.rdma.rkey = b.mr->rkey;
		ret = ibv_post_send(a.qp, &swr, &sbad);
		memset(in1, 0xee, sizeof(in1));
		memset(in2, 0xee, sizeof(in2));
		check(!ret && !pv_poll1(a.cq, &wc) && wc.wr_id == 51 &&
		      wc.status == IBV_WC_SUCCESS &&
		      !memcmp(b.buf + 40000, want, 256) && !b.buf[40256],
		      "inline RDMA WRITE of 256 bytes from 2 buffers reused at once: the posted bytes arrived");
		sg[0] = (struct ibv_sge){ (uintptr_t)b.buf + 41000, 1024,
					  b.mr->lkey };
		rwr = (struct ibv_recv_wr){ .wr_id = 52, .sg_list = sg,
					    .num_sge = 1 };
		check(!ibv_post_recv(b.qp, &rwr, &rbad),
		      "post_recv (for an inline SEND)");
		pv_fill(in1, 64, 43);
		memcpy(want, in1, 64);
		swr = (struct ibv_send_wr){
			.wr_id = 53, .sg_list = il, .num_sge = 1,
			.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htonl(0x1234),
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
		};
		il[0].length = 64;
		ret = ibv_post_send(a.qp, &swr, &sbad);
		memset(in1, 0xee, 64);
		check(!ret && !pv_poll1(a.cq, &wc) && wc.wr_id == 53 &&
		      wc.status == IBV_WC_SUCCESS && !pv_poll1(b.cq, &wc) &&
		      wc.wr_id == 52 && wc.status == IBV_WC_SUCCESS &&
		      wc.byte_len == 64 && wc.wc_flags & IBV_WC_WITH_IMM &&
		      ntohl(wc.imm_data) == 0x1234 &&
		      !memcmp(b.buf + 41000, want, 64),
		      "inline SEND with immediate of 64 bytes: one RECV, the posted bytes");
		il[0].length = 200;
		il[1].length = 57;
		swr.num_sge = 2;
		swr.opcode = IBV_WR_RDMA_WRITE;
		check(ibv_post_send(a.qp, &swr, &sbad) == EINVAL &&
		      sbad == &swr,
		      "inline WRITE of 257 bytes (max_inline_data 256): EINVAL");
		il[1].length = 56;
		swr.opcode = IBV_WR_RDMA_READ;
		check(ibv_post_send(a.qp, &swr, &sbad) == EINVAL,
		      "inline READ (nothing to send): EINVAL");
	}

	/* what the provider refuses at once */
	memset(&swr, 0, sizeof(swr));
	for (i = 0; i <= (int)a.max_send_sge; i++)
		sge3[i] = (struct ibv_sge){ (uintptr_t)a.buf, 8, a.mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = sge3,
				    .num_sge = a.max_send_sge + 1,
				    .opcode = IBV_WR_SEND };
	check(ibv_post_send(a.qp, &swr, &sbad) == EINVAL && sbad == &swr,
	      "post_send with max_send_sge + 1 SGEs (%u): EINVAL, bad_wr set",
	      a.max_send_sge + 1);

	/*
	 * Atomics (atomic_cap IBV_ATOMIC_HCA): FetchAdd, a CmpSwap that
	 * swaps and one that does not, each returning the 8 bytes found into
	 * A's buffer.  With odp, B's target page and A's result page are
	 * dropped first (MADV_DONTNEED): a responder fault and a requester
	 * one on the way, and the add still done once.
	 */
	{
		uint8_t *tp = b.buf + 2 * LEN - 4096, *rp = a.buf + 2 * LEN - 4096;
		volatile uint64_t *t = (uint64_t *)(tp + 64);
		volatile uint64_t *res = (uint64_t *)(rp + 128);
		struct ibv_sge as = { (uintptr_t)res, 8, a.mr->lkey };

		if (odp) {
			madvise(tp, 4096, MADV_DONTNEED);
			madvise(rp, 4096, MADV_DONTNEED);
		} else {
			*t = 0;
			*res = ~0ULL;
		}
		swr = (struct ibv_send_wr){
			.wr_id = 70, .sg_list = &as, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IBV_SEND_SIGNALED,
		};
		swr.wr.atomic.remote_addr = (uintptr_t)t;
		swr.wr.atomic.rkey = b.mr->rkey;
		swr.wr.atomic.compare_add = 5;
		check(!ibv_post_send(a.qp, &swr, &sbad) &&
		      !pv_poll1(a.cq, &wc) && wc.wr_id == 70 &&
		      wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_FETCH_ADD && wc.byte_len == 8 &&
		      *res == 0 && *t == 5,
		      "atomic FetchAdd 5: completion (status %s, opcode %d, %u bytes), 0 found, 5 there",
		      ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
		swr.wr_id = 71;
		swr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		swr.wr.atomic.compare_add = 5;
		swr.wr.atomic.swap = 0x1122334455667788ULL;
		check(!ibv_post_send(a.qp, &swr, &sbad) &&
		      !pv_poll1(a.cq, &wc) && wc.wr_id == 71 &&
		      wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_COMP_SWAP && *res == 5 &&
		      *t == 0x1122334455667788ULL,
		      "atomic CmpSwap 5 -> 0x1122334455667788: swapped, 5 found");
		swr.wr_id = 72;
		swr.wr.atomic.swap = 1;
		check(!ibv_post_send(a.qp, &swr, &sbad) &&
		      !pv_poll1(a.cq, &wc) && wc.wr_id == 72 &&
		      wc.status == IBV_WC_SUCCESS &&
		      *res == 0x1122334455667788ULL &&
		      *t == 0x1122334455667788ULL,
		      "atomic CmpSwap that compares unequal: nothing stored, the value found");
	}

	/* a forged rkey: a completion error, nothing written */
	memset(b.buf + LEN, 0x5a, 4096);
	pv_fill(a.buf, 4096, 6);
	ret = send_wr(&a, IBV_WR_RDMA_WRITE, 17, a.buf, 4096,
		      (uintptr_t)b.buf + LEN, b.mr->rkey ^ 0x100, 0,
		      IBV_SEND_SIGNALED);
	check(!ret && !pv_poll1(a.cq, &wc) && wc.wr_id == 17 &&
	      wc.status != IBV_WC_SUCCESS,
	      "WRITE with a forged rkey: completion error (%s)",
	      ibv_wc_status_str(wc.status));
	check(all_are(b.buf + LEN, 4096, 0x5a), "forged rkey: nothing written");

	/*
	 * Two PDs of B's context: a QP of B's first PD takes no key of its
	 * second, though both have the context's address space (the device
	 * tells them apart by their PD tag); with the first PD's key the
	 * same WRITE lands.  The forged rkey ended the QPs: new ones.
	 */
	check(!ibv_destroy_qp(a.qp) && !ibv_destroy_qp(b.qp), "QPs destroyed");
	{
		struct ibv_pd *pd2 = ibv_alloc_pd(b.ctx);
		struct ibv_mr *mr2 = pd2 ?
			ibv_reg_mr(pd2, b.buf + LEN, 4096,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE) : NULL;

		check(pd2 && mr2, "a second PD of B's context, an MR of it");
		check(!new_qps(&a, &b), "new QPs connected");
		memset(b.buf + LEN, 0x5a, 4096);
		pv_fill(a.buf, 4096, 7);
		ret = mr2 ? send_wr(&a, IBV_WR_RDMA_WRITE, 18, a.buf, 4096,
				    (uintptr_t)b.buf + LEN, mr2->rkey, 0,
				    IBV_SEND_SIGNALED) : -1;
		check(!ret && !pv_poll1(a.cq, &wc) && wc.wr_id == 18 &&
		      wc.status == IBV_WC_REM_ACCESS_ERR,
		      "WRITE to a QP of PD 1 with PD 2's rkey: %s",
		      ibv_wc_status_str(wc.status));
		check(all_are(b.buf + LEN, 4096, 0x5a),
		      "another PD's rkey: nothing written");
		check(!ibv_destroy_qp(a.qp) && !ibv_destroy_qp(b.qp) &&
		      !new_qps(&a, &b), "QPs destroyed, new ones connected");
		ret = send_wr(&a, IBV_WR_RDMA_WRITE, 19, a.buf, 4096,
			      (uintptr_t)b.buf + LEN, b.mr->rkey, 0,
			      IBV_SEND_SIGNALED);
		check(!ret && !pv_poll1(a.cq, &wc) && wc.wr_id == 19 &&
		      wc.status == IBV_WC_SUCCESS &&
		      !memcmp(b.buf + LEN, a.buf, 4096),
		      "the same WRITE with PD 1's rkey: written");
		check(mr2 && !ibv_dereg_mr(mr2) && !ibv_dealloc_pd(pd2),
		      "the second PD's MR deregistered, the PD deallocated");
	}
	check(!ibv_destroy_qp(a.qp) && !ibv_destroy_qp(b.qp), "QPs destroyed");

	/* a receive-only QP: a send queue of depth 0 asked for, SENDs taken */
	check(!new_qps_sq(&a, &b, 0),
	      "a QP with max_send_wr 0 (receive only), connected");
	sg[0] = (struct ibv_sge){ (uintptr_t)b.buf + 45000, 2048, b.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 61, .sg_list = sg, .num_sge = 1 };
	pv_fill(a.buf, 2048, 9);
	ret = ibv_post_recv(b.qp, &rwr, &rbad) ||
	      send_wr(&a, IBV_WR_SEND, 62, a.buf, 2048, 0, 0, 0,
		      IBV_SEND_SIGNALED);
	check(!ret && !pv_poll1(a.cq, &wc) && wc.wr_id == 62 &&
	      wc.status == IBV_WC_SUCCESS && !pv_poll1(b.cq, &wc) &&
	      wc.wr_id == 61 && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == 2048 && !memcmp(b.buf + 45000, a.buf, 2048),
	      "a SEND of 2 KiB into the receive-only QP: received, the bytes compared");
	check(!ibv_destroy_qp(a.qp) && !ibv_destroy_qp(b.qp), "QPs destroyed");
	/*
	 * A QP on a channel that earlier QPs of the context used, with a
	 * smaller send queue: its ring starts at slot 0.  (The provider once
	 * kept the TAIL the last QP had left, though a new ring size sets the
	 * device's HEAD and TAIL to 0: the device then ran the zeroed slots
	 * before the QP's first descriptor, and a TAIL past the new ring
	 * failed create_qp with EBUSY; qperf's third test failed on it.)
	 */
	ret = new_qps(&a, &b);
	for (i = 0; !ret && i < 3; i++)
		ret = send_wr(&a, IBV_WR_RDMA_WRITE, 70 + i, a.buf, 64,
			      (uintptr_t)b.buf, b.mr->rkey, 0,
			      IBV_SEND_SIGNALED) || pv_poll1(a.cq, &wc) ||
		      wc.status != IBV_WC_SUCCESS;
	check(!ret && !ibv_destroy_qp(a.qp) && !ibv_destroy_qp(b.qp),
	      "three WRITEs on a send queue of 16, its QPs destroyed");
	ret = new_qps_wr(&a, &b, 1, 16);
	check(!ret,
	      "a QP with a send queue of 1 on the channel the last one used, connected");
	for (i = 0; !ret && i < 5; i++) {
		pv_fill(a.buf, 4096, 20 + i);
		ret = send_wr(&a, IBV_WR_RDMA_WRITE, 80 + i, a.buf, 4096,
			      (uintptr_t)b.buf + 4096 * i, b.mr->rkey, 0,
			      IBV_SEND_SIGNALED) || pv_poll1(a.cq, &wc) ||
		      wc.status != IBV_WC_SUCCESS || wc.wr_id != 80 + (uint64_t)i ||
		      memcmp(a.buf, b.buf + 4096 * i, 4096);
	}
	check(!ret, "five WRITEs of 4 KiB through its ring of two slots: completed in order, the bytes compared");
	check(a.qp && b.qp && !ibv_destroy_qp(a.qp) && !ibv_destroy_qp(b.qp),
	      "QPs destroyed");
	check(!ibv_dereg_mr(a.mr) && !ibv_dereg_mr(b.mr), "MRs deregistered");
	check(!ibv_destroy_cq(a.cq) && !ibv_destroy_cq(b.cq) &&
	      !ibv_destroy_comp_channel(b.ch),
	      "CQs and the completion channel destroyed");
	check(!ibv_dealloc_pd(a.pd) && !ibv_dealloc_pd(b.pd) &&
	      !ibv_close_device(a.ctx) && !ibv_close_device(b.ctx),
	      "PDs deallocated, contexts closed");
	return tap_done();
}
