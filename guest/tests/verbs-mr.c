// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verbs-mr: memory registration on PLDMA's ib_device through Debian's
 * unmodified libibverbs and PLDMA's provider, with what a hostile or
 * careless user does.  TAP on stdout, one line per check; exit 1 if any
 * failed.
 *
 *   pinned vs ODP: a plain MR pins (the process's VmPin grows by its size),
 *       an IBV_ACCESS_ON_DEMAND MR pins nothing; with RLIMIT_MEMLOCK at
 *       1 MiB and CAP_IPC_LOCK dropped, a 4 MiB pinned MR fails with ENOMEM
 *       and the 4 MiB ODP MR works;
 *   keys: a remote-access MR's lkey and rkey are the device key, two MRs of
 *       one buffer have different rkeys, local-only MRs take no key, a
 *       context holds at most its share of keys (EDQUOT) and gets them back
 *       at deregistration;
 *   implicit ODP: ibv_reg_mr(pd, NULL, SIZE_MAX, ON_DEMAND | ...) works,
 *       and without ON_DEMAND fails;
 *   channels: a context costs no channel of the device (4 here) until it
 *       has a QP, so 12 contexts open at once; their QPs take the free
 *       channels, then EBUSY; a closed context gives its channel back; one
 *       context's QPs take a channel each, and a destroyed QP's channel
 *       goes to the context's next QP;
 *   bad values: length 0, remote write without local write, MW bind, an
 *       address range that is not user memory, a forged MR handle (ours
 *       and, from a child process with its own context, the parent's);
 *   the kernel verbs of QP1 (post_send, post_recv, poll_cq: ib_gsi.c),
 *       reached through uverbs' write() commands on our own RC QP and CQ:
 *       refused with EOPNOTSUPP, nothing posted; a UD QP created (and
 *       destroyed: verbs-ud has the rest), a user AH without a GID
 *       refused.
 *
 * usage: verbs-mr DEVICE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "pldma-verbs.h"

/* The process's pinned memory (VmPin of /proc/self/status), kB */
static long vmpin_kb(void)
{
	return pv_read_long("/proc/self/status", "VmPin: %ld kB");
}

/*
 * A uverbs write() command: header, then @len bytes of @body; 0 or the
 * errno of a refusal
 */
static int uverbs_write(struct ibv_context *ctx, __u32 cmd, const void *body,
			size_t len, size_t resp_len)
{
	char buf[512];
	struct ib_uverbs_cmd_hdr *h = (struct ib_uverbs_cmd_hdr *)buf;

	if (sizeof(*h) + len > sizeof(buf))
		return E2BIG;
	h->command = cmd;
	h->in_words = (sizeof(*h) + len) / 4;
	h->out_words = (resp_len + 3) / 4;
	memcpy(buf + sizeof(*h), body, len);
	return write(ctx->cmd_fd, buf, sizeof(*h) + len) < 0 ? errno : 0;
}

/*
 * The verbs that serve the kernel's QP1 exist now (ib_gsi.c), so uverbs
 * passes its write() commands for them on; on a user QP or CQ they must
 * be refused, not run on the device's rings
 */
static void kernel_verbs_refused(struct ibv_context *ctx, struct ibv_qp *qp,
				 struct ibv_cq *cq)
{
	struct {
		struct ib_uverbs_post_send c;
		struct ib_uverbs_send_wr wr;
	} ps = { 0 };
	struct {
		struct ib_uverbs_post_recv c;
		struct ib_uverbs_recv_wr wr;
	} pr = { 0 };
	struct ib_uverbs_poll_cq pc = { 0 };
	__u32 resp[64] = { 0 };
	int err;

	ps.c.response = (uintptr_t)resp;
	ps.c.qp_handle = qp->handle;
	ps.c.wr_count = 1;
	ps.c.wqe_size = sizeof(ps.wr);
	ps.wr.wr_id = 1;
	ps.wr.opcode = IBV_WR_SEND;
	err = uverbs_write(ctx, IB_USER_VERBS_CMD_POST_SEND, &ps, sizeof(ps),
			   sizeof(struct ib_uverbs_post_send_resp));
	check(err == EOPNOTSUPP,
	      "uverbs POST_SEND on our RC QP: EOPNOTSUPP (%s)", strerror(err));
	pr.c.response = (uintptr_t)resp;
	pr.c.qp_handle = qp->handle;
	pr.c.wr_count = 1;
	pr.c.wqe_size = sizeof(pr.wr);
	pr.wr.wr_id = 2;
	err = uverbs_write(ctx, IB_USER_VERBS_CMD_POST_RECV, &pr, sizeof(pr),
			   sizeof(struct ib_uverbs_post_recv_resp));
	check(err == EOPNOTSUPP,
	      "uverbs POST_RECV on our RC QP: EOPNOTSUPP (%s)", strerror(err));
	pc.response = (uintptr_t)resp;
	pc.cq_handle = cq->handle;
	pc.ne = 4;
	err = uverbs_write(ctx, IB_USER_VERBS_CMD_POLL_CQ, &pc, sizeof(pc),
			   sizeof(struct ib_uverbs_poll_cq_resp) +
			   4 * sizeof(struct ib_uverbs_wc));
	check(err == EOPNOTSUPP,
	      "uverbs POLL_CQ on our CQ: EOPNOTSUPP (%s)", strerror(err));
	check(ibv_poll_cq(cq, 1, (struct ibv_wc *)resp) == 0,
	      "nothing was posted: the CQ is empty");
}

/* reg_mr that must fail: returns errno, or 0 if it succeeded (and undoes) */
static int reg_fails(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	if (mr) {
		ibv_dereg_mr(mr);
		return 0;
	}
	return errno ? errno : -1;
}

/* struct verbs_mr of libibverbs' driver.h, which no -dev package ships */
struct fake_mr {
	struct ibv_mr ibv_mr;
	int mr_type;
	int access;
};

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	    IBV_ACCESS_REMOTE_READ)

static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	syscall(SYS_capset, &h, d);
}

/*
 * A context holds no channel until its first QP (the QP's send queue):
 * more contexts than channels at once, QPs until the channels run out
 * (EBUSY), and a closed context's channel taken by the next QP.
 */
#define NCTX 12
static void channels(const char *name)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *c[NCTX] = {};
	struct ibv_pd *pd[NCTX] = {};
	struct ibv_cq *cq[NCTX] = {};
	struct ibv_qp *qp[NCTX] = {};
	int i, opened = 0, nqp = 0, err = 0;

	for (i = 0; i < NCTX; i++) {
		c[i] = pv_open(name, NULL);
		pd[i] = c[i] ? ibv_alloc_pd(c[i]) : NULL;
		cq[i] = pd[i] ? ibv_create_cq(c[i], 8, NULL, NULL, 0) : NULL;
		if (!cq[i])
			break;
		opened++;
	}
	check(opened == NCTX,
	      "%d contexts open at once, each with a PD and a CQ, no QP (%s)",
	      opened, opened == NCTX ? "ok" : strerror(errno));
	for (i = 0; i < opened; i++) {
		qa.send_cq = qa.recv_cq = cq[i];
		errno = 0;
		qp[i] = ibv_create_qp(pd[i], &qa);
		if (!qp[i]) {
			err = errno;
			break;
		}
		nqp++;
	}
	check(nqp > 0 && nqp < opened && err == EBUSY,
	      "their QPs take the device's free channels: %d QPs, then EBUSY (%s)",
	      nqp, strerror(err));
	if (nqp > 0 && nqp < opened) {
		ibv_destroy_qp(qp[0]);
		ibv_destroy_cq(cq[0]);
		ibv_dealloc_pd(pd[0]);
		check(!ibv_close_device(c[0]), "the first QP's context closed");
		c[0] = NULL;
		qa.send_cq = qa.recv_cq = cq[nqp];
		qp[nqp] = ibv_create_qp(pd[nqp], &qa);
		check(qp[nqp] != NULL,
		      "its channel is free again: a QP in context %d (%s)",
		      nqp, qp[nqp] ? "ok" : strerror(errno));
	}
	for (i = 0; i < opened; i++) {
		if (!c[i])
			continue;
		if (qp[i])
			ibv_destroy_qp(qp[i]);
		ibv_destroy_cq(cq[i]);
		ibv_dealloc_pd(pd[i]);
		ibv_close_device(c[i]);
	}
}

/*
 * One context, QPs until the device has no channel left (EBUSY): each QP
 * a channel of its own, distinct QPNs; the channel of a destroyed QP goes
 * to the context's next QP, none other being free.
 */
static void many_qps(const char *name)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *c = pv_open(name, NULL);
	struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(c, 64, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp[16];
	int i, j, n = 0, err = 0, distinct = 1;

	check(cq != NULL, "one more context, PD and CQ");
	if (!cq)
		return;
	qa.send_cq = qa.recv_cq = cq;
	while (n < 16) {
		errno = 0;
		qp[n] = ibv_create_qp(pd, &qa);
		if (!qp[n]) {
			err = errno;
			break;
		}
		n++;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			distinct &= qp[i]->qp_num != qp[j]->qp_num;
	check(n >= 2 && n < 16 && err == EBUSY && distinct,
	      "one context: %d QPs, distinct QPNs, each a channel, then EBUSY (%s)",
	      n, strerror(err));
	if (n >= 2) {
		check(!ibv_destroy_qp(qp[0]), "one of them destroyed");
		qp[0] = ibv_create_qp(pd, &qa);
		check(qp[0] != NULL,
		      "the context's next QP takes its channel (%s)",
		      qp[0] ? "ok" : strerror(errno));
	}
	for (i = 0; i < n; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	check(!ibv_close_device(c), "its context closed: its channels freed");
}

int main(int argc, char **argv)
{
	const size_t MB = 1 << 20;
	struct ibv_device_attr_ex attr = {};
	struct ibv_mr *mr, *mr2, *mrs[64];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct fake_mr fake;
	long pin0, pin1;
	int i, nk, err;
	pid_t pid;
	char *buf, *pbuf;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	ctx = pv_open(argv[1], NULL);
	check(ctx != NULL, "%s: context opened", argv[1]);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	check(pd != NULL, "PD allocated");
	if (!pd)
		return 1;

	check(!ibv_query_device_ex(ctx, NULL, &attr) &&
	      attr.odp_caps.general_caps & IBV_ODP_SUPPORT &&
	      attr.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT,
	      "query_device_ex: ODP and implicit ODP advertised (general caps %#llx)",
	      (unsigned long long)attr.odp_caps.general_caps);

	/* pinned against on demand */
	buf = pv_untouched(4 * MB);
	pin0 = vmpin_kb();
	mr = ibv_reg_mr(pd, buf, 4 * MB, RW);
	pin1 = vmpin_kb();
	check(mr != NULL, "pinned MR of 4 MiB registered");
	check(pin0 >= 0 && pin1 - pin0 == 4096,
	      "pinned MR: VmPin grew by 4096 kB (%ld -> %ld)", pin0, pin1);
	if (mr) {
		check(mr->rkey && mr->lkey == mr->rkey,
		      "remote-access MR: lkey = rkey = the device key (%#x)",
		      mr->rkey);
		mr2 = ibv_reg_mr(pd, buf, 4 * MB, RW);
		check(mr2 && mr2->rkey != mr->rkey,
		      "two MRs of one buffer: two keys (%#x, %#x)", mr->rkey,
		      mr2 ? mr2->rkey : 0);
		if (mr2)
			ibv_dereg_mr(mr2);
		check(!ibv_dereg_mr(mr), "pinned MR deregistered");
		check(vmpin_kb() == pin0, "deregistered: VmPin back to %ld kB",
		      pin0);
	}
	mr = ibv_reg_mr(pd, buf, 4 * MB, RW | IBV_ACCESS_ON_DEMAND);
	check(mr != NULL, "ODP MR of 4 MiB (untouched) registered");
	check(vmpin_kb() == pin0, "ODP MR: nothing pinned (VmPin %ld kB)",
	      vmpin_kb());
	if (mr)
		check(!ibv_dereg_mr(mr), "ODP MR deregistered");
	/*
	 * prefetch (ibv_advise_mr): an ODP MR's range made present; a fresh
	 * mapping (the pinned MR above faulted all of buf in)
	 */
	pbuf = pv_untouched(4 * MB);
	mr = pbuf ? ibv_reg_mr(pd, pbuf, 4 * MB, RW | IBV_ACCESS_ON_DEMAND) :
		    NULL;
	check(mr != NULL, "ODP MR of 4 MiB for prefetch");
	if (mr) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)pbuf + MB, .length = MB,
			.lkey = mr->lkey,
		};
		unsigned char vec[256];
		int present;

		check(mincore(pbuf + MB, MB, vec) == 0 && !(vec[0] & 1),
		      "ODP MR: its pages are not present before prefetch");
		err = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		check(err == 0, "ibv_advise_mr PREFETCH_WRITE of 1 MiB (%s)",
		      strerror(err));
		present = pv_resident(pbuf + MB, MB);
		check(present == 256,
		      "prefetch: all 256 pages present (%d), VmPin still %ld kB",
		      present, vmpin_kb());
		check(vmpin_kb() == pin0, "prefetch pinned nothing");
		sge.length = 4 * MB;
		err = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		check(err == EINVAL, "prefetch past the MR's end: EINVAL (%s)",
		      strerror(err));
		sge.length = 4096;
		sge.lkey ^= 0x100;
		err = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		check(err == ENOENT, "prefetch with a forged lkey: ENOENT (%s)",
		      strerror(err));
		ibv_dereg_mr(mr);
	}
	mr = ibv_reg_mr(pd, buf, 4 * MB, IBV_ACCESS_LOCAL_WRITE);
	check(mr != NULL && mr->rkey == 0,
	      "local-only MR: registered, no remote key (lkey %#x)",
	      mr ? mr->lkey : 0);
	if (mr)
		ibv_dereg_mr(mr);

	/* implicit ODP */
	mr = ibv_reg_mr(pd, NULL, SIZE_MAX, RW | IBV_ACCESS_ON_DEMAND);
	check(mr != NULL && mr->rkey,
	      "implicit ODP MR (NULL, SIZE_MAX) registered (rkey %#x): %s",
	      mr ? mr->rkey : 0, mr ? "ok" : strerror(errno));
	if (mr)
		check(!ibv_dereg_mr(mr), "implicit ODP MR deregistered");
	err = reg_fails(pd, NULL, SIZE_MAX, RW);
	check(err != 0, "(NULL, SIZE_MAX) without ON_DEMAND refused (%s)",
	      strerror(err));

	/* bad values */
	err = reg_fails(pd, buf, 0, RW);
	check(err == EINVAL, "length 0: EINVAL (%s)", strerror(err));
	err = reg_fails(pd, buf, 4 * MB, IBV_ACCESS_REMOTE_WRITE);
	check(err == EINVAL, "remote write without local write: EINVAL (%s)",
	      strerror(err));
	/* the device's atomics (atomic_cap HCA): a key with the right */
	{
		struct ibv_device_attr da;

		check(!ibv_query_device(pd->context, &da) &&
		      da.atomic_cap == IBV_ATOMIC_HCA,
		      "atomic_cap IBV_ATOMIC_HCA (%d)", da.atomic_cap);
	}
	mr = ibv_reg_mr(pd, buf, 4 * MB, RW | IBV_ACCESS_REMOTE_ATOMIC);
	check(mr != NULL && mr->rkey,
	      "remote atomic access: registered (%s)",
	      mr ? "ok" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	err = reg_fails(pd, buf, 4 * MB, RW | IBV_ACCESS_MW_BIND);
	check(err == EOPNOTSUPP, "memory-window bind access: EOPNOTSUPP (%s)",
	      strerror(err));
	err = reg_fails(pd, (void *)0xffff000000000000ULL, 4 * MB,
			RW | IBV_ACCESS_ON_DEMAND);
	check(err != 0, "ODP MR of kernel addresses refused (%s)",
	      strerror(err));
	err = reg_fails(pd, (void *)0xffff000000000000ULL, 4 * MB, RW);
	check(err != 0, "pinned MR of kernel addresses refused (%s)",
	      strerror(err));
	err = reg_fails(pd, (void *)(uintptr_t)-4096, 8192,
			RW | IBV_ACCESS_ON_DEMAND);
	check(err == EINVAL, "range that wraps: EINVAL (%s)", strerror(err));

	/* keys: a context's share, given back at deregistration */
	for (nk = 0; nk < 64; nk++) {
		mrs[nk] = ibv_reg_mr(pd, buf, 4096, RW | IBV_ACCESS_ON_DEMAND);
		if (!mrs[nk])
			break;
	}
	err = errno;
	check(nk > 0 && nk < 64 && err == EDQUOT,
	      "remote-access MRs: %d keys, then EDQUOT (%s)", nk,
	      strerror(err));
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	check(mr != NULL, "a local-only MR still registers (takes no key)");
	if (mr)
		ibv_dereg_mr(mr);
	for (i = 0; i < nk; i++)
		ibv_dereg_mr(mrs[i]);
	mr = ibv_reg_mr(pd, buf, 4096, RW | IBV_ACCESS_ON_DEMAND);
	check(mr != NULL, "keys given back: a key registers again");

	/*
	 * A forked child has the parent's uverbs file, not its address
	 * space: it may neither register memory (an implicit ODP MR would
	 * cover the parent's whole address space, on its PASID) nor make a
	 * CQ in the parent's context
	 */
	pid = fork();
	if (pid == 0) {
		struct ibv_mr *m2;

		m2 = ibv_reg_mr(pd, NULL, SIZE_MAX, RW | IBV_ACCESS_ON_DEMAND);
		if (m2 || errno != EPERM)
			_exit(1);
		m2 = ibv_reg_mr(pd, buf, 4096, RW | IBV_ACCESS_ON_DEMAND);
		if (m2 || errno != EPERM)
			_exit(2);
		if (ibv_create_cq(ctx, 8, NULL, NULL, 0) || errno != EPERM)
			_exit(3);
		_exit(0);
	}
	waitpid(pid, &i, 0);
	check(WIFEXITED(i) && WEXITSTATUS(i) == 0,
	      "a forked child cannot register memory (implicit ODP or not) or make a CQ in its parent's context: EPERM (exit %d)",
	      WIFEXITED(i) ? WEXITSTATUS(i) : -1);

	/* forged handles */
	if (mr) {
		memset(&fake, 0, sizeof(fake));
		fake.ibv_mr = *mr;
		fake.ibv_mr.handle = mr->handle + 1000;
		err = ibv_dereg_mr(&fake.ibv_mr);
		check(err != 0, "dereg of a forged MR handle refused (%s)",
		      strerror(err));
		pid = fork();
		if (pid == 0) {
			struct ibv_context *c2 = pv_open(argv[1], NULL);
			struct ibv_pd *pd2 = c2 ? ibv_alloc_pd(c2) : NULL;

			if (!pd2)
				_exit(2);
			/* the parent's MR, by its handle, in our context */
			fake.ibv_mr = *mr;
			fake.ibv_mr.context = c2;
			fake.ibv_mr.pd = pd2;
			_exit(ibv_dereg_mr(&fake.ibv_mr) ? 0 : 1);
		}
		waitpid(pid, &i, 0);
		check(WIFEXITED(i) && WEXITSTATUS(i) == 0,
		      "another process cannot deregister our MR by its handle");
		check(!ibv_dereg_mr(mr), "our MR is still ours to deregister");
	}

	/* a QP's handle, forged here and in another process */
	{
		struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
		struct ibv_qp_init_attr qa = {
			.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp *qp = cq ? ibv_create_qp(pd, &qa) : NULL;
		struct ibv_qp_attr qattr = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
		};
		static char fakeqp[1024];
		struct ibv_qp *f = (struct ibv_qp *)fakeqp, *ud;

		check(qp != NULL, "CQ and RC QP created");
		if (qp) {
			struct ibv_qp *qp2 = ibv_create_qp(pd, &qa);

			check(qp2 && qp2->qp_num != qp->qp_num,
			      "a second QP in the context, on a channel of its own: QPN %#x (%s)",
			      qp2 ? qp2->qp_num : 0,
			      qp2 ? "ok" : strerror(errno));
			if (qp2)
				check(!ibv_destroy_qp(qp2), "second QP destroyed");
			qa.cap.max_inline_data = 257;
			errno = 0;
			check(ibv_create_qp(pd, &qa) == NULL && errno == EINVAL,
			      "257 bytes of inline data asked for (256 at most): EINVAL (%s)",
			      strerror(errno));
			qa.cap.max_inline_data = 64;
			qp2 = ibv_create_qp(pd, &qa);
			check(qp2 && qa.cap.max_inline_data == 256,
			      "64 bytes of inline data asked for: a QP with max_inline_data %u (%s)",
			      qa.cap.max_inline_data,
			      qp2 ? "ok" : strerror(errno));
			if (qp2)
				check(!ibv_destroy_qp(qp2), "inline QP destroyed");
			*f = *qp;
			f->handle = qp->handle + 1000;
			err = ibv_modify_qp(f, &qattr, IBV_QP_STATE |
					    IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					    IBV_QP_ACCESS_FLAGS);
			check(err != 0, "modify of a forged QP handle refused (%s)",
			      strerror(err));
			pid = fork();
			if (pid == 0) {
				struct ibv_context *c2 = pv_open(argv[1], NULL);

				if (!c2)
					_exit(2);
				*f = *qp;
				f->context = c2;
				_exit(ibv_modify_qp(f, &qattr, IBV_QP_STATE |
						    IBV_QP_PKEY_INDEX |
						    IBV_QP_PORT |
						    IBV_QP_ACCESS_FLAGS) ? 0 : 1);
			}
			waitpid(pid, &i, 0);
			check(WIFEXITED(i) && WEXITSTATUS(i) == 0,
			      "another process cannot modify our QP by its handle");
			check(!ibv_modify_qp(qp, &qattr, IBV_QP_STATE |
					     IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS),
			      "our QP is still ours: RESET -> INIT");
			kernel_verbs_refused(ctx, qp, cq);
			/* (a device with CAP.UD: verbs-ud has the rest) */
			qa.qp_type = IBV_QPT_UD;
			qa.cap.max_inline_data = 0;
			errno = 0;
			ud = ibv_create_qp(pd, &qa);
			check(ud && !ibv_destroy_qp(ud),
			      "a UD QP: created and destroyed (%s)",
			      strerror(errno));
			qa.qp_type = IBV_QPT_RC;
			{
				struct ibv_ah_attr aa = {
					.is_global = 1, .port_num = 1,
				};

				errno = 0;
				check(ibv_create_ah(pd, &aa) == NULL,
				      "a user AH: refused (%s)",
				      strerror(errno));
			}
			qattr.qp_state = IBV_QPS_RTS;
			check(ibv_modify_qp(qp, &qattr, IBV_QP_STATE) != 0,
			      "INIT -> RTS without its attributes refused");
			check(!ibv_destroy_qp(qp), "QP destroyed");
		}
		if (cq)
			check(!ibv_destroy_cq(cq), "CQ destroyed");
	}

	channels(argv[1]);
	many_qps(argv[1]);

	/* RLIMIT_MEMLOCK: pinned fails, ODP works */
	drop_ipc_lock();
	{
		struct rlimit rl = { .rlim_cur = MB, .rlim_max = MB };

		check(!setrlimit(RLIMIT_MEMLOCK, &rl),
		      "RLIMIT_MEMLOCK 1 MiB, CAP_IPC_LOCK dropped");
	}
	err = reg_fails(pd, buf, 4 * MB, RW);
	check(err == ENOMEM, "pinned MR of 4 MiB over the limit: ENOMEM (%s)",
	      strerror(err));
	mr = ibv_reg_mr(pd, buf, 4 * MB, RW | IBV_ACCESS_ON_DEMAND);
	check(mr != NULL, "ODP MR of 4 MiB under the same limit: registered");
	if (mr)
		ibv_dereg_mr(mr);

	check(!ibv_dealloc_pd(pd), "PD deallocated");
	check(!ibv_close_device(ctx), "context closed");
	return tap_done();
}
