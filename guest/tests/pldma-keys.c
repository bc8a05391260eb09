// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Remote-DMA keys against hostile and careless users, on one
 * guest whose two devices share a hub: node 1 (/dev/pldma0, requester)
 * and node 2 (/dev/pldma1, responder).
 *
 *   pldma-keys userkeys DEV LIMIT
 *	uid 1000 registers windows through as many files as it may open
 *	until refused: it gets LIMIT keys, then EDQUOT; uid 1001 still
 *	registers one.
 *   pldma-keys revoke-fault
 *	over an RC QP pair from node 1 to a QP of the owner's file on node 2,
 *	a responder fault forwarded to the owner (strategy user) and not
 *	answered; the owner revokes the key: the requester's write fails
 *	(fatal to the connection: a new QP pair) and the next window's fault
 *	is forwarded (the slot was released).
 *   pldma-keys qp-pd
 *	a QP of another file of node 1 moved RESET -> ERR takes no channel;
 *	an RC QP pair from node 1 to a QP of this process on node 2: its PD
 *	is this process's PASID, so a key another process registered on
 *	node 2 is refused (REMOTE_ACCESS, that memory untouched) and this
 *	process's own key works.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#define _GNU_SOURCE	/* setresuid, setresgid */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-check.h"

#define PG		4096

/* ------------------------------------------------------------------ */
/* Per-user key limit                                                  */
/* ------------------------------------------------------------------ */

/* As @uid: register one-page windows until refused; returns the count */
static int hog_keys(const char *dev, uid_t uid, int max, int *err)
{
	struct pldma_chan *ch[PLDMA_MAX_CHANNELS];
	int nch = 0, n = 0, ret = 0;
	uint32_t rkey;
	void *buf;

	*err = 0;
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) {
		*err = errno;
		return -1;
	}
	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		*err = errno;
		return -1;
	}
	while (n < max) {
		if (!nch || ret == -EDQUOT) {
			if (nch == PLDMA_MAX_CHANNELS)
				break;
			/* a full file: the next one, if this user may */
			ch[nch] = pldma_open(dev);
			if (!ch[nch]) {
				if (!ret)
					ret = -errno;
				break;
			}
			nch++;
		}
		ret = pldma_reg_mr(ch[nch - 1], buf, PG,
				   PLDMA_MR_ACCESS_WRITE, -1, 0, &rkey);
		if (!ret)
			n++;
		else if (ret != -EDQUOT)
			break;
	}
	*err = -ret;
	printf("# uid %u: %d keys through %d files, then %s\n", uid, n, nch,
	       strerror(*err));
	return n;
}

static int cmd_userkeys(int argc, char **argv)
{
	const char *dev = argc > 0 ? argv[0] : "/dev/pldma1";
	int limit = argc > 1 ? atoi(argv[1]) : PLDMA_NUM_KEYS / 2;
	int hold[2], done[2], st, n, err;
	char c = 0;
	pid_t hog, other;

	if (pipe(hold) || pipe(done))
		return 2;
	hog = fork();
	if (!hog) {
		n = hog_keys(dev, 1000, PLDMA_NUM_KEYS, &err);
		c = n == limit && err == EDQUOT;
		if (write(done[1], &c, 1) != 1)
			_exit(3);
		/* keep the keys until the other user has tried */
		if (read(hold[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	if (read(done[0], &c, 1) != 1)
		c = 0;
	CHECK(c, "uid 1000 did not get exactly %d keys, then EDQUOT", limit);

	other = fork();
	if (!other) {
		n = hog_keys(dev, 1001, 1, &err);
		_exit(n == 1 ? 0 : 1);
	}
	waitpid(other, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st),
	      "uid 1001 got no key while uid 1000 held its keys");
	if (write(hold[1], &c, 1) != 1)
		return 2;
	waitpid(hog, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "uid 1000's process failed");
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Revoking a key with a forwarded responder fault                     */
/* ------------------------------------------------------------------ */

struct writer {
	pthread_t th;
	struct pldma_chan *ch;
	uint32_t rkey;
	void *remote;
	const void *src;
	struct pldma_result res;
	int ret;
};

static void *writer_fn(void *arg)
{
	struct writer *w = arg;

	w->ret = pldma_rdma_write(w->ch, w->rkey, (uintptr_t)w->remote,
				  w->src, PG, PLDMA_STRAT_PREFAULT, 0, &w->res);
	return NULL;
}

/*
 * An RC QP pair between @req's channel and @resp's (its PD is the PASID of
 * the process that opened @resp: the keys @resp's process registered are
 * the ones it takes); @again: destroy the old pair first (a remote access
 * error ends the connection, as on IB).  0 or -errno.
 */
static int qp_pair(struct pldma_chan *req, struct pldma_chan *resp, int again)
{
	struct pldma_qp_info lq = { 0 }, rq = { 0 };
	int ret = 0;

	if (again) {
		ret = pldma_qp_destroy(req);
		ret = ret ? ret : pldma_qp_destroy(resp);
	}
	ret = ret ? ret : pldma_qp_create(req, &lq);
	ret = ret ? ret : pldma_qp_create(resp, &rq);
	ret = ret ? ret : pldma_qp_connect(req, &lq, &rq);
	ret = ret ? ret : pldma_qp_connect(resp, &rq, &lq);
	CHECK(!ret, "%sQP pair node %u qpn %#x <-> node %u qpn %#x: %s",
	      again ? "a new " : "", pldma_info(req)->node_id, lq.qpn,
	      pldma_info(resp)->node_id, rq.qpn, strerror(-ret));
	return ret;
}

/* The state of the channel's QP, for the log */
static const char *qp_state(struct pldma_chan *ch)
{
	struct pldma_qp_attr a;

	if (pldma_qp_query(ch, &a))
		return "?";
#define QPS_NAME(st, name) if (a.qp_state == (st)) return name;
	PLDMA_QPS_NAMES(QPS_NAME)
#undef QPS_NAME
	return "?";
}

/* A forwarded fault within @ms, or -errno */
static int get_fault(struct pldma_chan *ch, int ms, struct pldma_fault *f)
{
	memset(f, 0, sizeof(*f));
	f->timeout_ms = ms;
	return ioctl(pldma_fd(ch), PLDMA_IOC_FAULT_GET, f) ? -errno : 0;
}

static int cmd_revoke_fault(void)
{
	struct pldma_chan *req = pldma_open("/dev/pldma0");
	struct pldma_chan *own = pldma_open("/dev/pldma1");
	struct pldma_fault_resolve r = { .action = PLDMA_RESOLVE_RESTART };
	struct writer wa = { 0 }, wb = { 0 };
	uint32_t rka, rkb;
	struct pldma_fault f;
	uint8_t *src, *a, *b;
	int ret;

	if (!req || !own || !pldma_info(req)->node_id ||
	    !pldma_info(own)->node_id || !pldma_info(req)->num_qps ||
	    !pldma_info(own)->num_qps) {
		printf("# no pair of linked devices with queue pairs\n");
		return 77;
	}
	src = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	/* the windows: never touched, so their pages are missing */
	a = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || a == MAP_FAILED || b == MAP_FAILED)
		return 2;
	memset(src, 0x5a, PG);
	ret = pldma_reg_mr(own, a, PG, PLDMA_MR_ACCESS_WRITE, PLDMA_STRAT_USER,
			   0, &rka);
	ret = ret ? ret : pldma_reg_mr(own, b, PG, PLDMA_MR_ACCESS_WRITE,
				       PLDMA_STRAT_USER, 0, &rkb);
	CHECK(!ret, "REG_MR with strategy user: %s", strerror(-ret));
	/* the responder's QP on the owner's file: the keys' PD */
	if (ret || qp_pair(req, own, 0))
		return 1;

	/* A's fault is forwarded; nobody answers it; A is revoked */
	wa = (struct writer){ .ch = req, .rkey = rka, .remote = a, .src = src };
	pthread_create(&wa.th, NULL, writer_fn, &wa);
	ret = get_fault(own, 5000, &f);
	CHECK(!ret && f.desc == rka && (f.flags & PLDMA_FR_F_REMOTE),
	      "no forwarded fault for window A: %s, desc %#x", strerror(-ret),
	      f.desc);
	r.seq = f.seq;
	CHECK(!pldma_dereg_mr(own, rka), "DEREG_MR of window A");
	pthread_join(wa.th, NULL);
	printf("# write to the revoked window: ret %d status %u bytes %llu\n",
	       wa.ret, wa.res.status, (unsigned long long)wa.res.bytes);
	CHECK(wa.res.status != PLDMA_ST_SUCCESS,
	      "a write to a revoked window succeeded");
	printf("# then the requester's QP is %s, the responder's %s\n",
	       qp_state(req), qp_state(own));
	if (qp_pair(req, own, 1))
		return 1;

	/* B's fault must be forwarded too: the slot is free again */
	wb = (struct writer){ .ch = req, .rkey = rkb, .remote = b, .src = src };
	pthread_create(&wb.th, NULL, writer_fn, &wb);
	ret = get_fault(own, 5000, &f);
	/* the dead fault cannot be answered any more */
	CHECK(ioctl(pldma_fd(own), PLDMA_IOC_FAULT_RESOLVE, &r) &&
	      errno == ENOENT, "the revoked window's fault was answerable");
	CHECK(!ret && f.desc == rkb,
	      "window B's fault not forwarded (%s, desc %#x): the revoked key's fault still holds the slot",
	      strerror(-ret), f.desc);
	if (!ret && f.desc == rkb) {
		memset(b, 0, PG);
		r.seq = f.seq;
		CHECK(!ioctl(pldma_fd(own), PLDMA_IOC_FAULT_RESOLVE, &r),
		      "RESOLVE of window B's fault: %s", strerror(errno));
	}
	pthread_join(wb.th, NULL);
	CHECK(!wb.ret && wb.res.status == PLDMA_ST_SUCCESS &&
	      b[0] == 0x5a && b[PG - 1] == 0x5a,
	      "write to window B: ret %d status %u", wb.ret, wb.res.status);
	pldma_close(req);
	pldma_close(own);
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* A QP's protection domain                                            */
/* ------------------------------------------------------------------ */

static int cmd_qp_pd(void)
{
	struct pldma_chan *req = pldma_open("/dev/pldma0");
	struct pldma_chan *resp = pldma_open("/dev/pldma1");
	struct pldma_chan *x = NULL;
	struct pldma_result res;
	int p1[2], p2[2], ret, st;
	uint32_t rk_other = 0, rk_mine;
	uint8_t *src, *mine, *theirs;
	pid_t child;
	char c = 0;

	if (!req || !resp || !pldma_info(req)->num_qps ||
	    !pldma_info(resp)->num_qps) {
		printf("# no pair of linked devices with queue pairs\n");
		return 77;
	}
	src = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	mine = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	/* shared with the child: this process sees what lands there */
	theirs = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (src == MAP_FAILED || mine == MAP_FAILED || theirs == MAP_FAILED ||
	    pipe(p1) || pipe(p2))
		return 2;
	memset(src, 0x5a, PG);
	memset(theirs, 0x11, PG);
	child = fork();
	if (!child) {
		/* another process (another PASID): a window on node 2 */
		struct pldma_chan *ch = pldma_open("/dev/pldma1");
		uint32_t rk = 0;

		if (ch)
			pldma_reg_mr(ch, theirs, PG, PLDMA_MR_ACCESS_WRITE, -1, 0,
				     &rk);
		if (write(p1[1], &rk, sizeof(rk)) != sizeof(rk) ||
		    read(p2[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	if (child < 0 || read(p1[0], &rk_other, sizeof(rk_other)) !=
	    sizeof(rk_other))
		rk_other = 0;
	CHECK(rk_other, "the other process's window");
	ret = pldma_reg_mr(resp, mine, PG, PLDMA_MR_ACCESS_WRITE, -1, 0,
			   &rk_mine);
	CHECK(!ret, "REG_MR: %s", strerror(-ret));
	/*
	 * A QP of another file of node 1, moved RESET -> ERR at once (the
	 * ioctl allows it, as IBA does; Linux's verbs do not): it takes no
	 * send queue, so the pair below still connects and its WRITE lands.
	 * The device used to give such a QP channel 0, this file's, which
	 * then refused this file's QP (BUSY) and flushed its work.
	 */
	x = pldma_open("/dev/pldma0");
	if (x) {
		struct pldma_qp_info xi;
		struct pldma_qp_attr xa = {
			.attr_mask = PLDMA_QPA_STATE, .qp_state = PLDMA_QPS_ERR,
		};
		int xr = pldma_qp_create(x, &xi);

		xr = xr ? xr : pldma_qp_modify(x, &xa);
		CHECK(!xr && pldma_qp_query(x, &xa) == 0 &&
		      xa.qp_state == PLDMA_QPS_ERR,
		      "a QP of another file, RESET -> ERR: %s (state %u)",
		      strerror(-xr), xa.qp_state);
	}
	ret = ret ? ret : qp_pair(req, resp, 0);
	if (!ret && rk_other) {
		ret = pldma_rdma_write(req, rk_other, (uintptr_t)theirs, src,
				       PG, PLDMA_STRAT_PREFAULT, 0, &res);
		printf("# WRITE with another PD's key: ret %d status %u\n", ret,
		       res.status);
		CHECK(!ret && res.status == PLDMA_ST_REMOTE_ACCESS &&
		      theirs[0] == 0x11 && theirs[PG - 1] == 0x11,
		      "a key of another process was taken on this QP (status %u, byte %#x)",
		      res.status, theirs[0]);
		/* a remote access error ends the connection, as on IB */
		qp_pair(req, resp, 1);
		ret = pldma_rdma_write(req, rk_mine, (uintptr_t)mine, src, PG,
				       PLDMA_STRAT_PREFAULT, 0, &res);
		CHECK(!ret && res.status == PLDMA_ST_SUCCESS &&
		      mine[0] == 0x5a && mine[PG - 1] == 0x5a,
		      "WRITE with the QP's own PD's key: ret %d status %u",
		      ret, res.status);
	}
	if (child > 0) {
		(void)!write(p2[1], &c, 1);
		waitpid(child, &st, 0);
	}
	pldma_close(x);
	pldma_close(req);
	pldma_close(resp);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: pldma-keys userkeys|revoke-fault|qp-pd ...\n");
		return 2;
	}
	if (!strcmp(argv[1], "userkeys"))
		return cmd_userkeys(argc - 2, argv + 2);
	if (!strcmp(argv[1], "revoke-fault"))
		return cmd_revoke_fault();
	if (!strcmp(argv[1], "qp-pd"))
		return cmd_qp_pd();
	return 2;
}
