// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-rbench: time remote DMA, RDMA WRITE and READ between two guests
 * (make bench, BENCH=remote: scripts/bench, guest/scripts/bench-remote.sh).
 *
 * usage: pldma-rbench -r HOST:PORT -n LNODE:RNODE [-T LNODE:RNODE]
 *                     [-i ITERS] [-s SIZE[,SIZE...]] [-t CASE[,CASE...]]
 *        pldma-rbench -S PORT          (the responder: a window server)
 *
 * The requester (-r) asks the window server of the other guest
 * (pldma-rbench -S, or pldma-rdma serve: guest/lib/pldma-peer.c) at
 * HOST:PORT for windows on its device of node RNODE and moves data to and
 * from them from its own device of node LNODE; -T names a second pair
 * whose responder has rnr-resume=off, for the NAK-timer cases.
 *
 * stdout: CSV "strategy,size,time_us,faults,pages" as pldma-bench's, where
 * "strategy" is the case (write-touch16, read-pre, copy, ...) and faults
 * and pages are the responder's (its device's responder faults, the pages
 * its driver made present), one row per run; then "# " lines with the
 * median and minimum per case (with the responder faults, and the
 * segments the requester resent and its retransmit timeouts, per
 * transfer: the network counters of its device) and the ratios, computed
 * on the minimum
 * (best of ITERS) with the ratio of the medians alongside
 * (scripts/plot-bench ... bench-remote turns the CSV into PNGs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-peer.h"
#include "pldma-util.h"

#define MAX_CASES 128
#define MAX_ITERS 1000

struct bcase {
	char name[24];
	int strategy;
	unsigned int touch;
	size_t size;
	double t[MAX_ITERS];
	int n;
	double med;
	double min;
	double faults;
	double timeouts;	/* the requester's retransmit timeouts */
	double resent;		/* and segments it sent again */
};

static struct bcase cases[MAX_CASES];
static int ncases;

static struct bcase *find(const char *name, size_t size)
{
	int i;

	for (i = 0; i < ncases; i++)
		if (!strcmp(cases[i].name, name) && cases[i].size == size &&
		    cases[i].n)
			return &cases[i];
	return NULL;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

/*
 * Remote cases: NAME is OP-RESPONDER[-timer]: write or read; pre = the
 * responder's window prefaulted (made present before every iteration),
 * else the responder strategy (one, touchN) over a window dropped with
 * MADV_DONTNEED before every iteration; -timer runs on the -T pair, whose
 * responder has rnr-resume=off (the requester waits for the RNR NAK's
 * timer) instead of the -n pair's (rnr-resume=on: "resolved, resend now").
 * "copy" is a local COPY of the same size on the requester's device.
 * The requester's own buffers are always resident (no local faults).
 */
static const char *remote_cases_default =
	"copy,write-pre,read-pre,write-one,write-touch16,write-touch64,"
	"write-touch256,read-one,read-touch16,read-touch64,read-touch256,"
	"write-one-timer,write-touch16-timer,read-one-timer";

/* Make the requester's buffer present: written (zero) or read */
static void populate(void *p, size_t len, int write)
{
	volatile uint8_t *b = p;
	size_t i;

	if (write)
		memset(p, 0, len);
	else if (madvise(p, len, MADV_POPULATE_READ))
		for (i = 0; i < len; i += 4096)
			(void)b[i];
}

/* One remote case at one size: 0, or 1 on a failed transfer */
static int remote_case(struct bcase *c, const char *cname, int fd,
		       unsigned int lnode, unsigned int rnode, size_t size,
		       int iters, uint32_t seed)
{
	struct pldma_chan *ch = pp_chan_node(lnode);
	char op[16] = "", rstr[16] = "";
	int write, pre, i;
	uint32_t rkey = 0;
	uint64_t rva = 0;
	uint8_t *src = NULL, *dst = NULL;
	long bad = -1;

	if (!ch)
		return 1;
	if (strcmp(cname, "copy") &&
	    sscanf(cname, "%15[a-z]-%15[a-z0-9]", op, rstr) != 2)
		return 1;
	if (!strcmp(cname, "copy"))
		snprintf(op, sizeof(op), "copy");
	write = !strcmp(op, "write");
	pre = !strcmp(rstr, "pre");
	if (!strcmp(op, "copy")) {
		src = pu_src_alloc(size, seed);
		dst = pu_dst_alloc(size, 0);
		if (!src || !dst)
			return 1;
		populate(src, size, 0);
		populate(dst, size, 1);
	} else if (write) {
		src = pu_src_alloc(size, seed);
		if (!src || pp_reg_remote(fd, rnode, size, "W", 0,
					  pre ? "one" : rstr, &rkey, &rva))
			return 1;
		populate(src, size, 0);
	} else {
		dst = pu_dst_alloc(size, 0);
		if (!dst || pp_reg_remote(fd, rnode, size, "R", seed,
					  pre ? "one" : rstr, &rkey, &rva))
			return 1;
		populate(dst, size, 1);
	}
	snprintf(c->name, sizeof(c->name), "%s", cname);
	c->size = size;
	for (i = 0; i < iters; i++) {
		struct pp_stats s0 = { 0 }, s1 = { 0 };
		struct pldma_net_stats n0, n1;
		struct pldma_result r;
		int ret;

		if (dst && i == iters - 1)
			memset(dst, 0, size);	/* what the last one verifies */
		if (rkey) {
			/* untouched; prefaulted: present and zero again */
			if (!pp_ok(pp_rpc(fd, "DROP %u", rkey)) ||
			    (pre && !pp_ok(pp_rpc(fd, "POP %u", rkey))) ||
			    pp_stats(fd, rnode, &s0))
				return 1;
		}
		if (pldma_net_stats(ch, &n0))
			return 1;
		if (!rkey)
			ret = pldma_copy(ch, dst, src, size, PLDMA_STRAT_ONE, 0,
					 &r);
		else if (write)
			ret = pldma_rdma_write(ch, rkey, rva, src, size,
					       PLDMA_STRAT_ONE, 0, &r);
		else
			ret = pldma_rdma_read(ch, rkey, rva, dst, size,
					      PLDMA_STRAT_ONE, 0, &r);
		if (pldma_net_stats(ch, &n1) ||
		    (rkey && pp_stats(fd, rnode, &s1)))
			return 1;
		c->timeouts += (uint32_t)(n1.cnt[PLDMA_NCNT_TIMEOUTS] -
					  n0.cnt[PLDMA_NCNT_TIMEOUTS]);
		c->resent += (uint32_t)(n1.cnt[PLDMA_NCNT_RETX_SEGS] -
					n0.cnt[PLDMA_NCNT_RETX_SEGS]);
		if (ret || r.status != PLDMA_ST_SUCCESS || r.bytes != size) {
			fprintf(stderr, "%s %zu: failed (%d, status %u, %llu bytes)\n",
				cname, size, ret, r.status,
				(unsigned long long)r.bytes);
			printf("# %s %zu: FAILED (ret %d, status %u, %llu bytes)\n",
			       cname, size, ret, r.status,
			       (unsigned long long)r.bytes);
			return 1;
		}
		/* faults and pages: the responder's (the local side has none) */
		printf("%s,%zu,%.3f,%llu,%llu\n", cname, size, r.time_ns / 1000.0,
		       rkey ? s1.dev_faults - s0.dev_faults :
		       (unsigned long long)r.faults,
		       rkey ? s1.pages - s0.pages :
		       (unsigned long long)r.pages);
		c->t[c->n++] = r.time_ns / 1000.0;
		c->faults += rkey ? s1.dev_faults - s0.dev_faults : r.faults;
	}
	if (write && rkey)
		bad = pp_ok(pp_rpc(fd, "CHECK %u 0 %zu %u", rkey, size, seed)) ?
		      -1 : 0;
	else
		bad = pu_verify(dst, size, seed);
	if (rkey)
		pp_rpc(fd, "FREE %u", rkey);
	pu_free(src, size);
	pu_free(dst, size);
	if (bad >= 0) {
		printf("# %s %zu: DATA DIFFERS (at %ld)\n", cname, size, bad);
		return 1;
	}
	return 0;
}

static void rratio(const char *what, const char *a, const char *b,
		   size_t size, double goal)
{
	struct bcase *x = find(a, size), *y = find(b, size);

	if (!x || !y)
		return;
	printf("# ratio %s %zuMiB = %.3f (best of %d: %.1f us / %.1f us; medians %.3f",
	       what, size >> 20, x->min / y->min, x->n, x->min, y->min,
	       x->med / y->med);
	if (goal > 0)
		printf("; goal <= %.2f: %s", goal,
		       x->min / y->min <= goal ? "met" : "NOT met");
	printf(")\n");
}

/* The fastest demand-paged responder strategy of @op against prefaulted */
static void rbest(const char *op, size_t size)
{
	static const char *const s[] = { "one", "touch16", "touch64", "touch256" };
	char n[32], pre[32], what[96];
	struct bcase *b = NULL, *c;
	unsigned int i;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		snprintf(n, sizeof(n), "%s-%s", op, s[i]);
		c = find(n, size);
		if (c && (!b || c->min < b->min))
			b = c;
	}
	if (!b)
		return;
	snprintf(pre, sizeof(pre), "%s-pre", op);
	snprintf(what, sizeof(what), "%s demand-paged(%s)/prefaulted", op,
		 b->name + strlen(op) + 1);
	rratio(what, b->name, pre, size, 1.25);
}

static int remote_bench(const char *hostport, const char *pair,
			const char *tpair, const char *clist, int iters,
			const size_t *size_v, int nsizes)
{
	unsigned int ln, rn, tln = 0, trn = 0;
	char host[64], *list, *tok, *save;
	int port, fd, j, k, fails = 0;

	if (sscanf(hostport, "%63[^:]:%d", host, &port) != 2 ||
	    sscanf(pair, "%u:%u", &ln, &rn) != 2 ||
	    (tpair && sscanf(tpair, "%u:%u", &tln, &trn) != 2)) {
		fprintf(stderr, "pldma-bench: -r HOST:PORT -n LNODE:RNODE [-T LNODE:RNODE]\n");
		return 2;
	}
	fd = pp_connect(host, port);
	if (fd < 0 || !pp_chan_node(ln) || (tln && !pp_chan_node(tln))) {
		fprintf(stderr, "pldma-bench: no server at %s or no device\n",
			hostport);
		return 2;
	}
	/* RC connections: each local channel's RDMA goes to its peer's QP */
	if (pp_qp_connect(fd, pp_chan_node(ln), rn) ||
	    (tln && pp_qp_connect(fd, pp_chan_node(tln), trn))) {
		fprintf(stderr, "pldma-bench: no QP connection\n");
		return 2;
	}
	printf("strategy,size,time_us,faults,pages\n");
	/* size by size, so that a slow large case comes last */
	for (k = 0; k < nsizes; k++) {
		list = strdup(clist);
		for (tok = strtok_r(list, ",", &save); tok && ncases < MAX_CASES;
		     tok = strtok_r(NULL, ",", &save)) {
			int timer = strstr(tok, "-timer") != NULL;

			if (timer && !tln)
				continue;
			if (remote_case(&cases[ncases++], tok, fd,
					timer ? tln : ln, timer ? trn : rn,
					size_v[k], iters, 0x70 + k))
				fails++;
		}
		free(list);
	}
	for (j = 0; j < ncases; j++) {
		struct bcase *c = &cases[j];

		if (!c->n)
			continue;
		pu_med_min(c->t, c->n, &c->med, &c->min);
		printf("# %-19s %9zu B: median %10.1f us, min %10.1f us, %7.1f MiB/s (best); per transfer: %6.1f responder faults, %7.1f segments resent, %4.1f timeouts\n",
		       c->name, c->size, c->med, c->min,
		       c->size / 1048576.0 / (c->min / 1e6), c->faults / c->n,
		       c->resent / c->n, c->timeouts / c->n);
	}
	for (k = 0; k < nsizes; k++) {
		size_t sz = size_v[k];

		if (sz < (1 << 20))
			continue;
		rratio("recv touch16/one WRITE", "write-touch16", "write-one", sz, 0.33);
		rratio("recv touch64/one WRITE", "write-touch64", "write-one", sz, 0.33);
		rratio("recv touch256/one WRITE", "write-touch256", "write-one", sz, 0.33);
		rratio("recv touch16/one READ", "read-touch16", "read-one", sz, 0.33);
		rratio("recv touch64/one READ", "read-touch64", "read-one", sz, 0.33);
		rratio("recv touch256/one READ", "read-touch256", "read-one", sz, 0.33);
		rbest("write", sz);
		rbest("read", sz);
		rratio("NAK timer/resend-now WRITE one", "write-one-timer", "write-one", sz, 0);
		rratio("NAK timer/resend-now WRITE touch16", "write-touch16-timer", "write-touch16", sz, 0);
		rratio("NAK timer/resend-now READ one", "read-one-timer", "read-one", sz, 0);
	}
	for (k = 0; k < nsizes; k++) {
		struct bcase *w = find("write-pre", size_v[k]);
		struct bcase *r = find("read-pre", size_v[k]);
		struct bcase *c = find("copy", size_v[k]);

		if (!c || !w)
			continue;
		printf("# ratio remote WRITE/local COPY throughput %zuKiB = %.3f (best of %d: WRITE %.1f us, COPY %.1f us; medians %.3f)",
		       size_v[k] >> 10, c->min / w->min, w->n, w->min, c->min,
		       c->med / w->med);
		if (r)
			printf("; READ/COPY %.3f", c->min / r->min);
		printf("\n");
	}
	pp_chan_forget(ln);
	pp_chan_forget(tln);
	close(fd);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *sizes = "4K,64K,1M,4M,16M";
	const char *rhost = NULL, *rpair = "1:2", *rtpair = NULL;
	const char *rcases = remote_cases_default;
	int iters = 3, opt;
	char *list, *tok, *save;
	size_t size_v[16];
	int nsizes = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "i:s:t:r:n:T:S:")) != -1) {
		switch (opt) {
		case 'i':
			iters = atoi(optarg);
			break;
		case 's':
			sizes = optarg;
			break;
		case 't':
			rcases = optarg;
			break;
		case 'r':
			rhost = optarg;
			break;
		case 'n':
			rpair = optarg;
			break;
		case 'T':
			rtpair = optarg;
			break;
		case 'S':
			return pp_serve(atoi(optarg), 1);
		default:
			rhost = NULL;
			optind = argc;
			break;
		}
	}
	if (!rhost || iters < 1 || iters > MAX_ITERS) {
		fprintf(stderr, "usage: pldma-rbench -r HOST:PORT -n LNODE:RNODE [-T LNODE:RNODE] [-i ITERS] [-s SIZES] [-t CASES]\n"
			"       pldma-rbench -S PORT\n");
		return 2;
	}
	list = strdup(sizes);
	for (tok = strtok_r(list, ",", &save); tok && nsizes < 16;
	     tok = strtok_r(NULL, ",", &save))
		size_v[nsizes++] = pu_parse_size(tok);
	free(list);
	return remote_bench(rhost, rpair, rtpair, rcases, iters, size_v, nsizes);
}
