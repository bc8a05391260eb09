// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verbs-srq: shared receive queues through Debian's libibverbs and PLDMA's
 * provider, between two PLDMA ib_devices of this guest (one process, a
 * context on each).  On the receiving device R: an SRQ and two RC QPs
 * that receive from it; on the sending device S: two RC QPs, each
 * connected to one of R's.  Checked:
 *
 *  - what is refused: an SRQ larger than max_srq_wr, with more SGEs than
 *    max_srq_sge, with srq_limit >= max_wr, with max_wr 0 (EINVAL); a QP
 *    of another PD on the SRQ (EINVAL); ibv_post_recv on a QP of the SRQ
 *    (EINVAL, as verbs say); a receive WR of 4 SGEs (EINVAL); a resize
 *    (EOPNOTSUPP: no IBV_DEVICE_SRQ_RESIZE); a limit >= max_wr (EINVAL);
 *  - SENDs from both of S's QPs, one at a time, alternating: each takes
 *    the SRQ's next WQE (FIFO across R's QPs: wr_id), completes on the QP
 *    it arrived on (wc.qp_num, wc.src_qp, the immediate), its bytes
 *    compared, also scattered into a WQE's two SGEs; the receive buffers
 *    are never touched before (mmap'd, not written: with odp, an
 *    IBV_ACCESS_ON_DEMAND MR, and mincore() says no page is resident, so
 *    the device faults on every one);
 *  - the limit: armed at 8 with 10 WQEs posted (query_srq says 8), no
 *    event after the takes that leave 9 and 8, IBV_EVENT_SRQ_LIMIT_REACHED
 *    for this SRQ after the one that leaves 7, the limit then disarmed
 *    (query_srq: 0) and no second event;
 *  - a list of 10 receive WRs with room for 9: ENOMEM at the 10th
 *    (bad_wr), the 9 before it posted and received in order;
 *  - destroying the SRQ while QPs use it: EBUSY (ib_core's count of its
 *    users), and the SRQ still works after; once the QPs are gone, it is
 *    destroyed.
 *
 * TAP on stdout; exit 1 if any check failed.
 *
 * usage: verbs-srq DEV_R GID_INDEX_R DEV_S GID_INDEX_S [odp]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "pldma-verbs.h"

#define NWQE	32		/* receive slots of 8 KiB in R's buffer */
#define SLOT	8192
#define SRQ_WR	15		/* a ring of 16 */
#define LIMIT	8

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	uint8_t *buf;		/* NWQE * SLOT */
	union ibv_gid gid;
	int gid_index;
};

static int open_end(struct end *e, const char *dev, int gi, int odp)
{
	e->gid_index = gi;
	e->pd = pv_open_pd(dev, gi, &e->gid);
	if (!e->pd)
		return -1;
	e->ctx = e->pd->context;
	e->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	if (!e->cq)
		return -1;
	/* never written by the CPU: with odp, no page of it is there */
	e->mr = pv_untouched_mr(e->pd, NWQE * SLOT, IBV_ACCESS_LOCAL_WRITE,
				odp);
	if (!e->mr)
		return -1;
	e->buf = e->mr->addr;
	return 0;
}

static struct ibv_qp *new_qp(struct end *e, struct ibv_pd *pd,
			     struct ibv_srq *srq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC, .send_cq = e->cq, .recv_cq = e->cq,
		.srq = srq,
		/*
		 * with an SRQ the receive caps are ignored, as verbs say:
		 * more WRs than an RQ can have (4095) must not matter
		 */
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 5000 : 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);

	if (qp && cap)
		*cap = qa.cap;
	return qp;
}

/* QP @i of @e to @pe's QP @i (SENDs only: no remote access) */
static int connect_qp(const struct end *e, const struct end *pe, int i)
{
	return pv_qp_connect(e->qp[i], e->gid_index, 0, pe->qp[i], &pe->gid);
}

/* An async event of @ctx within @ms, or -1 */
static int async_event(struct ibv_context *ctx, int ms,
		       struct ibv_async_event *ev)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -1;
	return ibv_get_async_event(ctx, ev);
}

/*
 * Message k: 4096 bytes into a WQE of one SGE (even k), 3000 into a WQE
 * of two (odd k: 1000 at the slot, 2000 a page further)
 */
static uint32_t msg_len(unsigned int k)
{
	return k & 1 ? 3000 : 4096;
}

static void wqe(struct ibv_recv_wr *wr, struct ibv_sge *sg,
		const struct end *r, unsigned int k)
{
	uint8_t *slot = r->buf + (size_t)k * SLOT;

	sg[0] = (struct ibv_sge){ (uintptr_t)slot, k & 1 ? 1000 : SLOT,
				  r->mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)slot + 4096, 4096, r->mr->lkey };
	*wr = (struct ibv_recv_wr){ .wr_id = k, .sg_list = sg,
				    .num_sge = k & 1 ? 2 : 1 };
}

/*
 * Post WQEs @first .. @first + @cnt - 1 to @srq as one list; *@bad_at:
 * the index in the list of the one bad_wr named, -1 if none
 */
static int post_wqes(struct ibv_srq *srq, const struct end *r,
		     unsigned int first, unsigned int cnt, int *bad_at)
{
	struct ibv_recv_wr wr[NWQE], *bad = NULL;
	struct ibv_sge sg[NWQE][2];
	unsigned int i;
	int ret;

	for (i = 0; i < cnt; i++) {
		wqe(&wr[i], sg[i], r, first + i);
		wr[i].next = i + 1 < cnt ? &wr[i + 1] : NULL;
	}
	ret = ibv_post_srq_recv(srq, wr, &bad);
	if (bad_at)
		*bad_at = bad ? (int)(bad - wr) : -1;
	return ret;
}

/*
 * Message @k from S's QP k % 2 (SEND_WITH_IMM, immediate k): it must take
 * WQE @k, arrive on R's QP k % 2 from S's, and its bytes be in the WQE's
 * SGEs and nothing after them.  0, or a reason.
 */
static const char *send_msg(struct end *s, struct end *r, unsigned int k)
{
	unsigned int q = k % 2, len = msg_len(k);
	uint8_t *src = s->buf + (size_t)k * SLOT, *dst = r->buf + (size_t)k * SLOT;
	struct ibv_sge sge = { (uintptr_t)src, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1000 + k, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(k),
	}, *bad;
	struct ibv_wc wc;

	pv_fill(src, len, k);
	if (ibv_post_send(s->qp[q], &wr, &bad))
		return "post_send failed";
	if (pv_poll1(s->cq, &wc) || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != 1000 + k)
		return "no successful send completion";
	if (pv_poll1(r->cq, &wc))
		return "no receive completion";
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
		return "receive completion in error";
	if (wc.wr_id != k)
		return "not the SRQ's next WQE (wr_id)";
	if (wc.byte_len != len || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
	    ntohl(wc.imm_data) != k)
		return "length or immediate";
	if (wc.qp_num != r->qp[q]->qp_num || wc.src_qp != s->qp[q]->qp_num)
		return "wc.qp_num or wc.src_qp: not the QP it was sent to";
	if (k & 1) {
		if (memcmp(dst, src, 1000) || memcmp(dst + 4096, src + 1000,
						     2000) ||
		    dst[1000] || dst[4096 + 2000])
			return "bytes (two SGEs)";
	} else if (memcmp(dst, src, len) || dst[len]) {
		return "bytes";
	}
	return NULL;
}

/* Messages @first .. @last - 1, each checked: the first failure's reason */
static const char *send_msgs(struct end *s, struct end *r,
			     unsigned int first, unsigned int last)
{
	static char why[96];
	const char *e;
	unsigned int k;

	for (k = first; k < last; k++) {
		e = send_msg(s, r, k);
		if (e) {
			snprintf(why, sizeof(why), "message %u: %s", k, e);
			return why;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct end r = {}, s = {};
	struct ibv_device_attr_ex dx;
	struct ibv_srq_init_attr sa;
	struct ibv_srq_attr qa;
	struct ibv_async_event ev;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sg[4];
	struct ibv_qp_cap cap;
	struct ibv_srq *srq, *bogus;
	struct ibv_pd *pd2;
	const char *why;
	int odp, ret, i, bad_at;

	if (argc < 5) {
		fprintf(stderr, "usage: %s DEV_R GID_R DEV_S GID_S [odp]\n",
			argv[0]);
		return 2;
	}
	odp = argc > 5 && !strcmp(argv[5], "odp");
	check(!open_end(&r, argv[1], atoi(argv[2]), odp) &&
	      !open_end(&s, argv[3], atoi(argv[4]), odp),
	      "%s (receiver) and %s (sender): context, PD, CQ, %s MR of %d KiB",
	      argv[1], argv[3], odp ? "ODP" : "pinned", NWQE * SLOT / 1024);
	if (tap_failed())
		return 1;

	memset(&dx, 0, sizeof(dx));
	ret = ibv_query_device_ex(r.ctx, NULL, &dx);
	check(!ret && dx.orig_attr.max_srq > 0 &&
	      dx.orig_attr.max_srq_wr >= SRQ_WR &&
	      dx.orig_attr.max_srq_sge >= 2,
	      "%s: max_srq %d, max_srq_wr %d, max_srq_sge %d", argv[1],
	      dx.orig_attr.max_srq, dx.orig_attr.max_srq_wr,
	      dx.orig_attr.max_srq_sge);
	check(!ret && dx.odp_caps.per_transport_caps.rc_odp_caps &
	      IBV_ODP_SUPPORT_SRQ_RECV,
	      "%s: ODP caps for RC include SRQ_RECV (%#x)", argv[1],
	      dx.odp_caps.per_transport_caps.rc_odp_caps);
	if (tap_failed())
		return 1;

	/* what create_srq refuses */
	sa = (struct ibv_srq_init_attr){
		.attr = { .max_wr = dx.orig_attr.max_srq_wr + 1, .max_sge = 1 } };
	errno = 0;
	bogus = ibv_create_srq(r.pd, &sa);
	check(!bogus && errno == EINVAL,
	      "create_srq with max_wr max_srq_wr + 1 (%u): EINVAL (%s)",
	      dx.orig_attr.max_srq_wr + 1, strerror(errno));
	sa.attr = (struct ibv_srq_attr){ .max_wr = 8,
					 .max_sge = dx.orig_attr.max_srq_sge + 1 };
	errno = 0;
	bogus = bogus ? bogus : ibv_create_srq(r.pd, &sa);
	check(!bogus && errno == EINVAL,
	      "create_srq with max_sge max_srq_sge + 1 (%u): EINVAL (%s)",
	      dx.orig_attr.max_srq_sge + 1, strerror(errno));
	sa.attr = (struct ibv_srq_attr){ .max_wr = 8, .max_sge = 1,
					 .srq_limit = 8 };
	errno = 0;
	bogus = bogus ? bogus : ibv_create_srq(r.pd, &sa);
	check(!bogus && errno == EINVAL,
	      "create_srq with srq_limit 8 = max_wr: EINVAL (%s)",
	      strerror(errno));
	sa.attr = (struct ibv_srq_attr){ .max_wr = 0, .max_sge = 1 };
	errno = 0;
	bogus = bogus ? bogus : ibv_create_srq(r.pd, &sa);
	check(!bogus && errno == EINVAL, "create_srq with max_wr 0: EINVAL (%s)",
	      strerror(errno));
	if (bogus)
		ibv_destroy_srq(bogus);

	sa.attr = (struct ibv_srq_attr){ .max_wr = SRQ_WR, .max_sge = 2 };
	srq = ibv_create_srq(r.pd, &sa);
	check(srq && sa.attr.max_wr == SRQ_WR && sa.attr.max_sge >= 2,
	      "create_srq max_wr %d, max_sge 2: created, max_wr %u, max_sge %u",
	      SRQ_WR, sa.attr.max_wr, sa.attr.max_sge);
	if (!srq)
		return 1;
	memset(&qa, 0xff, sizeof(qa));
	check(!ibv_query_srq(srq, &qa) && qa.max_wr == SRQ_WR &&
	      qa.srq_limit == 0,
	      "query_srq: max_wr %u, srq_limit %u (not armed)", qa.max_wr,
	      qa.srq_limit);

	/* a QP of another PD of the context cannot receive from it */
	pd2 = ibv_alloc_pd(r.ctx);
	errno = 0;
	r.qp[0] = pd2 ? new_qp(&r, pd2, srq, NULL) : NULL;
	check(pd2 && !r.qp[0] && errno == EINVAL,
	      "a QP of another PD on the SRQ: EINVAL (%s)", strerror(errno));
	if (r.qp[0])
		ibv_destroy_qp(r.qp[0]);
	check(pd2 && !ibv_dealloc_pd(pd2), "that PD deallocated");

	/* R's QPs receive from the SRQ; S's QPs are plain */
	r.qp[0] = new_qp(&r, r.pd, srq, &cap);
	r.qp[1] = new_qp(&r, r.pd, srq, NULL);
	s.qp[0] = new_qp(&s, s.pd, NULL, NULL);
	s.qp[1] = new_qp(&s, s.pd, NULL, NULL);
	check(r.qp[0] && r.qp[1] && s.qp[0] && s.qp[1] &&
	      cap.max_recv_wr == 0,
	      "two QPs of the SRQ, asking max_recv_wr 5000 (ignored; they have %u: no RQ of their own), two senders",
	      r.qp[0] ? cap.max_recv_wr : 0);
	if (tap_failed())
		return 1;
	ret = 0;
	for (i = 0; i < 2; i++)
		ret |= connect_qp(&r, &s, i) || connect_qp(&s, &r, i);
	check(!ret, "QPs %#x <-> %#x and %#x <-> %#x: INIT, RTR, RTS",
	      r.qp[0]->qp_num, s.qp[0]->qp_num, r.qp[1]->qp_num,
	      s.qp[1]->qp_num);
	if (tap_failed())
		return 1;

	/* what post_recv and post_srq_recv refuse */
	sg[0] = (struct ibv_sge){ (uintptr_t)r.buf, 64, r.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 99, .sg_list = sg, .num_sge = 1 };
	rbad = NULL;
	check(ibv_post_recv(r.qp[0], &rwr, &rbad) == EINVAL && rbad == &rwr,
	      "ibv_post_recv on a QP of the SRQ: EINVAL, bad_wr set");
	for (i = 0; i < 4; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)r.buf, 64, r.mr->lkey };
	rwr.num_sge = 4;
	rbad = NULL;
	check(ibv_post_srq_recv(srq, &rwr, &rbad) == EINVAL && rbad == &rwr,
	      "post_srq_recv with 4 SGEs: EINVAL, bad_wr set");
	if (odp)
		check(pv_resident(r.buf, NWQE * SLOT) == 0,
		      "the receive buffers: no page resident (never touched)");

	/* 8 messages, alternating senders, each into the SRQ's next WQE */
	check(!post_wqes(srq, &r, 0, 8, NULL),
	      "post_srq_recv: 8 WQEs in one list (odd ones of 2 SGEs)");
	why = send_msgs(&s, &r, 0, 8);
	check(!why,
	      "8 SENDs from both QPs in turn: each took the next WQE and arrived on its QP, bytes compared%s%s",
	      why ? ": " : "", why ? why : "");

	/* the limit: 10 posted, armed at 8; an event when fewer than 8 */
	check(!post_wqes(srq, &r, 8, 10, NULL), "10 more WQEs posted");
	qa = (struct ibv_srq_attr){ .srq_limit = SRQ_WR };
	check(ibv_modify_srq(srq, &qa, IBV_SRQ_LIMIT) == EINVAL,
	      "modify_srq with srq_limit %d = max_wr: EINVAL", SRQ_WR);
	qa = (struct ibv_srq_attr){ .max_wr = 2 * SRQ_WR };
	ret = ibv_modify_srq(srq, &qa, IBV_SRQ_MAX_WR);
	check(ret == EOPNOTSUPP,
	      "modify_srq IBV_SRQ_MAX_WR (resize): EOPNOTSUPP (%s)",
	      strerror(ret));
	qa = (struct ibv_srq_attr){ .srq_limit = LIMIT };
	check(!ibv_modify_srq(srq, &qa, IBV_SRQ_LIMIT),
	      "modify_srq IBV_SRQ_LIMIT %d: armed", LIMIT);
	memset(&qa, 0, sizeof(qa));
	check(!ibv_query_srq(srq, &qa) && qa.srq_limit == LIMIT,
	      "query_srq: srq_limit %u", qa.srq_limit);
	why = send_msgs(&s, &r, 8, 10);
	check(!why && async_event(r.ctx, 500, &ev) < 0,
	      "two SENDs leave 8 WQEs, not fewer: no async event%s%s",
	      why ? ": " : "", why ? why : "");
	why = send_msgs(&s, &r, 10, 11);
	ret = why ? -1 : async_event(r.ctx, 10000, &ev);
	check(!ret && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
	      ev.element.srq == srq,
	      "one more leaves 7: IBV_EVENT_SRQ_LIMIT_REACHED for the SRQ (%s)%s%s",
	      ret ? "none" : ibv_event_type_str(ev.event_type),
	      why ? ": " : "", why ? why : "");
	if (!ret)
		ibv_ack_async_event(&ev);
	memset(&qa, 0xff, sizeof(qa));
	check(!ibv_query_srq(srq, &qa) && qa.srq_limit == 0,
	      "query_srq after the event: srq_limit %u (disarmed)",
	      qa.srq_limit);
	why = send_msgs(&s, &r, 11, 12);
	check(!why && async_event(r.ctx, 500, &ev) < 0,
	      "one more SEND (6 left): no second event%s%s",
	      why ? ": " : "", why ? why : "");

	/* 6 posted (WQEs 12..17), room for 9 more: a list of 10 */
	ret = post_wqes(srq, &r, 18, 10, &bad_at);
	check(ret == ENOMEM && bad_at == 9,
	      "post_srq_recv of 10 with room for 9: ENOMEM (%s), bad_wr the 10th (index %d)",
	      strerror(ret), bad_at);

	/* ib_core counts the SRQ's QPs: no destroy while they use it */
	ret = ibv_destroy_srq(srq);
	check(ret == EBUSY, "destroy_srq while two QPs use it: EBUSY (%s)",
	      strerror(ret));
	why = send_msgs(&s, &r, 12, 14);
	check(!why, "two more SENDs: the SRQ works after the refused destroy%s%s",
	      why ? ": " : "", why ? why : "");
	check(!post_wqes(srq, &r, 27, 2, NULL),
	      "2 WQEs posted into the room the SENDs made (15 posted)");
	why = send_msgs(&s, &r, 14, 29);
	check(!why, "15 SENDs take every WQE posted, in order (WQEs 14 .. 28)%s%s",
	      why ? ": " : "", why ? why : "");

	/*
	 * A QP of the SRQ to ERR: IBV_EVENT_QP_LAST_WQE_REACHED for it (IBA
	 * 11.6.3.1: it holds no WQE of the SRQ any more, destroy is safe)
	 */
	{
		struct ibv_qp_attr ea = { .qp_state = IBV_QPS_ERR };

		ret = ibv_modify_qp(r.qp[1], &ea, IBV_QP_STATE) ? -1 :
		      async_event(r.ctx, 10000, &ev);
		check(!ret && ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
		      ev.element.qp == r.qp[1],
		      "a QP of the SRQ to ERR: IBV_EVENT_QP_LAST_WQE_REACHED for it (%s)",
		      ret ? "none" : ibv_event_type_str(ev.event_type));
		if (!ret)
			ibv_ack_async_event(&ev);
	}
	check(!ibv_destroy_qp(r.qp[0]) && !ibv_destroy_qp(r.qp[1]) &&
	      !ibv_destroy_qp(s.qp[0]) && !ibv_destroy_qp(s.qp[1]),
	      "QPs destroyed");
	ret = ibv_destroy_srq(srq);
	check(!ret, "destroy_srq once no QP uses it: 0 (%s)", strerror(ret));
	check(!ibv_dereg_mr(r.mr) && !ibv_dereg_mr(s.mr) &&
	      !ibv_destroy_cq(r.cq) && !ibv_destroy_cq(s.cq) &&
	      !ibv_dealloc_pd(r.pd) && !ibv_dealloc_pd(s.pd) &&
	      !ibv_close_device(r.ctx) && !ibv_close_device(s.ctx),
	      "MRs, CQs, PDs, contexts closed");
	return tap_done();
}
