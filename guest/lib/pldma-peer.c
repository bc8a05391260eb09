// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The other guest of a remote DMA: window server and client over a TCP
 * side channel (pldma-peer.h has the protocol).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-line.h"
#include "pldma-peer.h"
#include "pldma-util.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

#define PG		4096UL
#define MAX_MRS		64

static struct pldma_chan *chans[PLDMA_NET_MAX_NODES];

/* A new channel on the device of node @node */
static struct pldma_chan *open_node(unsigned int node)
{
	char path[32];
	int i;

	for (i = 0; i < 16; i++) {
		struct pldma_chan *ch;

		snprintf(path, sizeof(path), "/dev/pldma%d", i);
		if (access(path, F_OK))
			continue;
		ch = pldma_open(path);
		if (!ch)
			continue;
		if (pldma_info(ch)->node_id == node)
			return ch;
		pldma_close(ch);
	}
	fprintf(stderr, "pldma: no device with node-id %u\n", node);
	return NULL;
}

struct pldma_chan *pp_chan_node(unsigned int node)
{
	if (!node || node >= PLDMA_NET_MAX_NODES)
		return NULL;
	if (!chans[node])
		chans[node] = open_node(node);
	return chans[node];
}

void pp_chan_forget(unsigned int node)
{
	if (node < PLDMA_NET_MAX_NODES) {
		pldma_close(chans[node]);
		chans[node] = NULL;
	}
}

static int parse_strat(const char *s, int *strategy, unsigned int *touch)
{
	if (!strcmp(s, "default")) {
		*strategy = -1;
		*touch = 0;
		return 0;
	}
	return pldma_strategy_parse(s, strategy, touch);
}

/* ------------------------------------------------------------------ */
/* Lines                                                              */
/* ------------------------------------------------------------------ */

char *pp_rpc(int fd, const char *fmt, ...)
{
	va_list ap;
	char *r;

	va_start(ap, fmt);
	r = line_vrpc(fd, fmt, ap);
	va_end(ap);
	return r;
}

int pp_ok(const char *r)
{
	return line_ok(r);
}

int pp_connect(const char *host, int port)
{
	return connect_to(host, port);
}

/* "QPN PSN IP MAC MTU" of a QP (pldma-line.h) */
static void qp_fmt(char *buf, size_t len, const struct pldma_qp_info *q)
{
	struct line_qp l = {
		.qpn = q->qpn, .psn = q->psn, .ip = q->ip, .mtu = q->mtu,
	};

	memcpy(l.mac, q->mac, 6);
	line_qp_fmt(buf, len, &l);
}

/* MTU optional (0: unknown, the local device's is taken) */
static int qp_parse(const char *s, struct pldma_qp_info *q)
{
	struct line_qp l;

	memset(q, 0, sizeof(*q));
	if (line_qp_parse(s, &l))
		return -1;
	q->qpn = l.qpn;
	q->psn = l.psn;
	q->ip = l.ip;
	q->mtu = l.mtu;
	memcpy(q->mac, l.mac, 6);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Server                                                             */
/* ------------------------------------------------------------------ */

struct window {
	unsigned int node;
	unsigned int acc;
	uint32_t rkey;
	uint8_t *addr;
	size_t len;
};

static struct window wins[MAX_MRS];

static struct window *win_find(uint32_t rkey)
{
	int i;

	for (i = 0; i < MAX_MRS; i++)
		if (wins[i].addr && wins[i].rkey == rkey)
			return &wins[i];
	return NULL;
}

static void win_free(struct window *w)
{
	pu_free(w->addr, w->len);
	memset(w, 0, sizeof(*w));
}

/*
 * The QPs of the current side-channel connection, one a node: each on its
 * own channel of the node's device (its PD is this process's PASID, so the
 * windows of pp_chan_node() are its windows; CLOSE of that file leaves the
 * QP), for as long as the client stays connected.
 */
static struct pldma_chan *qp_chans[PLDMA_NET_MAX_NODES];

static void qp_close_all(void)
{
	unsigned int i;

	for (i = 0; i < PLDMA_NET_MAX_NODES; i++) {
		pldma_close(qp_chans[i]);
		qp_chans[i] = NULL;
	}
}

static void serve_qp(int fd, unsigned int node, const char *peer)
{
	struct pldma_qp_info remote, local;
	char buf[96];
	int ret;

	if (qp_parse(peer, &remote) || !node || node >= PLDMA_NET_MAX_NODES) {
		sendf(fd, "ERR %d", EINVAL);
		return;
	}
	pldma_close(qp_chans[node]);
	qp_chans[node] = open_node(node);
	if (!qp_chans[node]) {
		sendf(fd, "ERR %d", ENODEV);
		return;
	}
	ret = pldma_qp_create(qp_chans[node], &local);
	if (!ret)
		ret = pldma_qp_connect(qp_chans[node], &local, &remote);
	if (ret) {
		pldma_close(qp_chans[node]);
		qp_chans[node] = NULL;
		sendf(fd, "ERR %d", -ret);
		return;
	}
	qp_fmt(buf, sizeof(buf), &local);
	sendf(fd, "OK %s", buf);
}

/*
 * RELOAD: every file of this server closed (its windows and QP gone), then
 * pldma.ko removed and inserted again: the device is reset as at a reboot.
 * Other processes may still hold the module for a while: retried for 60 s.
 */
static void serve_reload(int fd)
{
	int i, st = -1;

	qp_close_all();
	for (i = 0; i < MAX_MRS; i++)
		if (wins[i].addr)
			win_free(&wins[i]);
	for (i = 0; i < PLDMA_NET_MAX_NODES; i++)
		pp_chan_forget(i);
	for (i = 0; i < 300; i++) {
		st = system("rmmod pldma 2>/dev/null");
		if (st == 0)
			break;
		usleep(200000);
	}
	if (st == 0)
		st = system("insmod /lib/modules/pldma.ko");
	if (st == 0)
		sendf(fd, "OK");
	else
		sendf(fd, "ERR %d", EBUSY);
}

static void serve_mr(int fd, unsigned int node, size_t len,
		     const char *access, uint32_t seed, const char *strat)
{
	struct pldma_chan *ch = pp_chan_node(node);
	unsigned int acc = 0, touch;
	struct window *w = NULL;
	int i, strategy, ret;

	if (strchr(access, 'W'))
		acc |= PLDMA_MR_ACCESS_WRITE;
	if (strchr(access, 'R'))
		acc |= PLDMA_MR_ACCESS_READ;
	for (i = 0; i < MAX_MRS; i++)
		if (!wins[i].addr)
			w = &wins[i];
	if (!ch || !w || !len || parse_strat(strat, &strategy, &touch)) {
		sendf(fd, "ERR %d", EINVAL);
		return;
	}
	w->len = (len + PG - 1) & ~(PG - 1);
	w->addr = acc & PLDMA_MR_ACCESS_READ ? pu_src_alloc(w->len, seed) :
					       pu_dst_alloc(w->len, 0);
	if (!w->addr) {
		memset(w, 0, sizeof(*w));
		sendf(fd, "ERR %d", ENOMEM);
		return;
	}
	pu_drop(w->addr, w->len);
	/*
	 * user: the driver forwards the window's responder faults to this
	 * process; its fault thread (libpldma) makes the page present
	 */
	if (strategy == PLDMA_STRAT_USER) {
		ret = pldma_fault_thread_start(ch, NULL, NULL);
		if (ret && ret != -EBUSY) {
			win_free(w);
			sendf(fd, "ERR %d", -ret);
			return;
		}
	}
	ret = pldma_reg_mr(ch, w->addr, w->len, acc, strategy, touch,
			   &w->rkey);
	if (ret) {
		win_free(w);
		sendf(fd, "ERR %d", -ret);
		return;
	}
	w->node = node;
	w->acc = acc;
	sendf(fd, "OK %u %llu", w->rkey, (unsigned long long)(uintptr_t)w->addr);
}

static void serve_check(int fd, uint32_t rkey, size_t off, size_t len,
			uint32_t seed)
{
	struct window *w = win_find(rkey);
	long bad;

	if (!w || off > w->len || len > w->len - off) {
		sendf(fd, "ERR %d", EINVAL);
		return;
	}
	bad = pu_verify(w->addr + off, len, seed);
	if (bad >= 0)
		sendf(fd, "BAD %ld", bad);
	else
		sendf(fd, "OK");
}

static void serve_pop(int fd, struct window *w)
{
	int adv = w->acc & PLDMA_MR_ACCESS_WRITE ? MADV_POPULATE_WRITE :
						   MADV_POPULATE_READ;
	volatile uint8_t *p = w->addr;
	size_t i;

	if (madvise(w->addr, w->len, adv)) {
		/* before 5.14: touch every page */
		for (i = 0; i < w->len; i += PG) {
			if (adv == MADV_POPULATE_WRITE)
				p[i] = p[i];
			else
				(void)p[i];
		}
	}
	sendf(fd, "OK");
}

static void serve_stats(int fd, unsigned int node)
{
	struct pldma_chan *ch = pp_chan_node(node);
	struct pldma_net_stats ns;
	struct pldma_stats st;

	if (!ch || pldma_net_stats(ch, &ns) || pldma_get_stats(ch, &st)) {
		sendf(fd, "ERR %d", EIO);
		return;
	}
	sendf(fd, "OK %u %llu %llu %llu %u", ns.cnt[PLDMA_NCNT_RX_FAULTS],
	      (unsigned long long)st.remote_faults,
	      (unsigned long long)st.remote_pages,
	      (unsigned long long)st.remote_failed,
	      ns.cnt[PLDMA_NCNT_NAK_TX_RNR]);
}

int pp_serve(int port, int nquit)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int ls, fd, one = 1, quits = 0;
	char line[256];

	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ls, 4)) {
		perror("pldma: listen");
		return 1;
	}
	printf("# serving windows on port %d\n", port);
	fflush(stdout);
	while (quits < nquit) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (!recv_line(fd, line, sizeof(line))) {
			char a1[32], a2[32];
			unsigned long long x, y, z;
			unsigned int node;
			struct window *w;
			int n = 0;

			if (sscanf(line, "MR %u %llu %31s %llu %31s", &node,
				   &x, a1, &y, a2) == 5) {
				serve_mr(fd, node, x, a1, y, a2);
			} else if (sscanf(line, "CHECK %llu %llu %llu %31s",
					  &x, &y, &z, a1) == 4) {
				serve_check(fd, x, y, z, strtoul(a1, NULL, 0));
			} else if (sscanf(line, "DROP %llu", &x) == 1 &&
				   (w = win_find(x))) {
				sendf(fd, pu_drop(w->addr, w->len) ? "ERR" : "OK");
			} else if (sscanf(line, "POP %llu", &x) == 1 &&
				   (w = win_find(x))) {
				serve_pop(fd, w);
			} else if (sscanf(line, "DEREG %llu", &x) == 1 &&
				   (w = win_find(x)) && chans[w->node]) {
				int ret = pldma_dereg_mr(chans[w->node], w->rkey);

				/* the memory stays: a late write must fail */
				w->rkey = 0;
				sendf(fd, ret ? "ERR %d" : "OK", -ret);
			} else if (sscanf(line, "FREE %llu", &x) == 1 &&
				   (w = win_find(x)) && chans[w->node]) {
				int ret = pldma_dereg_mr(chans[w->node], w->rkey);

				win_free(w);
				sendf(fd, ret ? "ERR %d" : "OK", -ret);
			} else if (sscanf(line, "QP %u %n", &node, &n) == 1 &&
				   n > 0) {
				serve_qp(fd, node, line + n);
			} else if (!strcmp(line, "RELOAD")) {
				serve_reload(fd);
			} else if (sscanf(line, "STATS %u", &node) == 1) {
				serve_stats(fd, node);
			} else if (sscanf(line, "CLOSE %u", &node) == 1 &&
				   node < PLDMA_NET_MAX_NODES) {
				/* release(): every key of the file revoked */
				pp_chan_forget(node);
				sendf(fd, "OK");
			} else if (!strcmp(line, "QUIT")) {
				sendf(fd, "OK");
				quits++;
				break;
			} else {
				sendf(fd, "ERR %d", EINVAL);
			}
		}
		/* the connection's QPs go with it */
		qp_close_all();
		close(fd);
	}
	close(ls);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Client                                                             */
/* ------------------------------------------------------------------ */

int pp_stats(int fd, unsigned int node, struct pp_stats *s)
{
	char *r = pp_rpc(fd, "STATS %u", node);

	return r && sscanf(r, "OK %llu %llu %llu %llu %llu", &s->dev_faults,
			   &s->faults, &s->pages, &s->failed,
			   &s->rnr_tx) == 5 ? 0 : -1;
}

int pp_reg_remote(int fd, unsigned int node, size_t len, const char *access,
		  uint32_t seed, const char *strat, uint32_t *rkey,
		  uint64_t *rva)
{
	char *r = pp_rpc(fd, "MR %u %zu %s %u %s", node, len, access, seed,
			 strat);
	unsigned long long va;

	if (!r || sscanf(r, "OK %u %llu", rkey, &va) != 2) {
		printf("# MR %s on node %u: %s\n", access, node,
		       r ? r : "(no reply)");
		return -1;
	}
	*rva = va;
	return 0;
}

unsigned int pp_qp_timeout;

int pp_qp_connect(int fd, struct pldma_chan *ch, unsigned int rnode)
{
	struct pldma_qp_info local, remote;
	char buf[96], *r;
	int ret;

	if (pldma_qp_num(ch))
		pldma_qp_destroy(ch);
	ret = pldma_qp_create(ch, &local);
	if (ret) {
		printf("# QP create: %s\n", strerror(-ret));
		return ret;
	}
	qp_fmt(buf, sizeof(buf), &local);
	r = pp_rpc(fd, "QP %u %s", rnode, buf);
	if (!r || strncmp(r, "OK ", 3) || qp_parse(r + 3, &remote)) {
		printf("# QP on node %u: %s\n", rnode, r ? r : "(no reply)");
		pldma_qp_destroy(ch);
		return -EIO;
	}
	local.timeout = pp_qp_timeout;
	ret = pldma_qp_connect(ch, &local, &remote);
	if (ret) {
		printf("# QP connect to qpn %#x: %s\n", remote.qpn,
		       strerror(-ret));
		pldma_qp_destroy(ch);
	}
	return ret;
}
