// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-rdma: RDMA WRITE and READ between two guests (tests/rdma/run).
 * Keys and addresses are exchanged over a small TCP side channel on the
 * guests' virtio-net link; the data goes over the PLDMA link.
 *
 *   serve PORT            responder: registers windows on request, checks
 *                         what was written, reports its counters; ends on
 *                         QUIT.  Windows are never touched by the
 *                         responder before the transfer (fresh memory, and
 *                         MADV_DONTNEED as rdma-core's ODP tests do), so
 *                         every page of a transfer is a responder fault.
 *   pair HOST PORT LNODE RNODE LSTRAT RSTRAT SIZE...
 *                         requester: WRITE and READ of each size from the
 *                         local device (node LNODE, local faults with
 *                         LSTRAT) to the responder's device (node RNODE,
 *                         responder faults with RSTRAT), data verified,
 *                         then the counters of both sides
 *   keys HOST PORT LNODE RNODE
 *                         revoked, read-only, out-of-range and closed-file
 *                         keys: the requester gets REMOTE_ACCESS and the
 *                         responder's memory is untouched
 *   quit HOST PORT        end the server
 *   selftest NODE         REG_MR/DEREG_MR argument checking (hostile
 *                         user space), quotas, INFO and NET_STATS
 *
 * Results are TAP lines without numbers ("ok - ..."); tests/rdma/run
 * numbers the lines of both guests.  Strategies: stall, one, touchN,
 * prefault, or "default" (the file's) for the responder.
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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-util.h"

#define PG		4096UL
#define MAX_MRS		64

static int fails;
static const char *tag = "";

static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s", ok ? "ok" : "not ok", tag);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		fails++;
}

static void note(const char *fmt, ...)
{
	va_list ap;

	printf("# %s", tag);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* The channel on the device of node @node (one per node, kept open) */
static struct pldma_chan *chans[PLDMA_NET_MAX_NODES];

static struct pldma_chan *chan_node(unsigned int node)
{
	char path[32];
	int i;

	if (!node || node >= PLDMA_NET_MAX_NODES)
		return NULL;
	if (chans[node])
		return chans[node];
	for (i = 0; i < 16; i++) {
		struct pldma_chan *ch;

		snprintf(path, sizeof(path), "/dev/pldma%d", i);
		if (access(path, F_OK))
			continue;
		ch = pldma_open(path);
		if (!ch)
			continue;
		if (pldma_info(ch)->node_id == node) {
			/* the report-mode device's own faults: the default */
			chans[node] = ch;
			return ch;
		}
		pldma_close(ch);
	}
	fprintf(stderr, "pldma-rdma: no device with node-id %u\n", node);
	return NULL;
}

/* A transfer that did not complete: what the channel and the link say */
static void dump_chan(struct pldma_chan *ch)
{
	struct pldma_net_stats ns;
	unsigned int i;

	note("channel: state %u error %u head %u tail %u completed %u last status %u fault va %#x%08x info %#x desc %u done %u",
	     pldma_reg(ch, PLDMA_CH_STATE), pldma_reg(ch, PLDMA_CH_ERROR),
	     pldma_reg(ch, PLDMA_CH_RING_HEAD), pldma_reg(ch, PLDMA_CH_RING_TAIL),
	     pldma_reg(ch, PLDMA_CH_COMPLETED),
	     pldma_reg(ch, PLDMA_CH_LAST_STATUS),
	     pldma_reg(ch, PLDMA_CH_FAULT_VA_HI),
	     pldma_reg(ch, PLDMA_CH_FAULT_VA_LO),
	     pldma_reg(ch, PLDMA_CH_FAULT_INFO),
	     pldma_reg(ch, PLDMA_CH_FAULT_DESC),
	     pldma_reg(ch, PLDMA_CH_FAULT_DONE));
	if (pldma_net_stats(ch, &ns))
		return;
	for (i = 0; i < ns.num; i++)
		if (ns.cnt[i])
			note("  %s: %u", pldma_net_counter_name(i), ns.cnt[i]);
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
/* Side channel: one text line a request, one a reply                  */
/* ------------------------------------------------------------------ */

static int sendf(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	return write(fd, buf, n) == n ? 0 : -1;
}

static int recv_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	return 0;
}

/* Send a request, return its reply (static buffer) or NULL */
static char *rpc(int fd, const char *fmt, ...)
{
	static char reply[256];
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (sendf(fd, "%s", buf) || recv_line(fd, reply, sizeof(reply)))
		return NULL;
	return reply;
}

static int connect_to(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int i, fd, one = 1;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return -1;
	/* the peer guest may still be booting */
	for (i = 0; i < 600; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			return fd;
		}
		close(fd);
		usleep(200000);
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* Responder                                                          */
/* ------------------------------------------------------------------ */

struct window {
	unsigned int node;
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
 * MR NODE LEN ACCESS SEED STRATEGY: a new window of LEN bytes: for READ
 * access a memfd holding pu_byte(SEED, .), else anonymous memory; either
 * way not mapped in the process (MADV_DONTNEED).  Reply: OK RKEY VA.
 */
static void serve_mr(int fd, unsigned int node, size_t len,
		     const char *access, uint32_t seed, const char *strat)
{
	struct pldma_chan *ch = chan_node(node);
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
	ret = pldma_reg_mr(ch, w->addr, w->len, acc, strategy, touch,
			   &w->rkey);
	if (ret) {
		win_free(w);
		sendf(fd, "ERR %d", -ret);
		return;
	}
	w->node = node;
	sendf(fd, "OK %u %llu", w->rkey, (unsigned long long)(uintptr_t)w->addr);
}

/* CHECK RKEY OFF LEN SEED: the window holds pu_byte(SEED, .) from OFF */
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

/* STATS NODE: responder faults (device), served, pages present (driver) */
static void serve_stats(int fd, unsigned int node)
{
	struct pldma_chan *ch = chan_node(node);
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

static int serve(int port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int ls, fd, one = 1, quit = 0;
	char line[256];

	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ls, 4)) {
		perror("pldma-rdma: listen");
		return 1;
	}
	note("serving on port %d", port);
	while (!quit) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (!recv_line(fd, line, sizeof(line))) {
			char a1[32], a2[32];
			unsigned long long x, y, z;
			unsigned int node;
			struct window *w;

			if (sscanf(line, "MR %u %llu %31s %llu %31s", &node,
				   &x, a1, &y, a2) == 5) {
				serve_mr(fd, node, x, a1, y, a2);
			} else if (sscanf(line, "CHECK %llu %llu %llu %31s",
					  &x, &y, &z, a1) == 4) {
				serve_check(fd, x, y, z, strtoul(a1, NULL, 0));
			} else if (sscanf(line, "DROP %llu", &x) == 1 &&
				   (w = win_find(x))) {
				sendf(fd, pu_drop(w->addr, w->len) ? "ERR" : "OK");
			} else if (sscanf(line, "DEREG %llu", &x) == 1 &&
				   (w = win_find(x)) && chans[w->node]) {
				int ret = pldma_dereg_mr(chans[w->node], w->rkey);

				/* the memory stays: a late write must fail */
				w->rkey = 0;
				sendf(fd, ret ? "ERR %d" : "OK", -ret);
			} else if (sscanf(line, "STATS %u", &node) == 1) {
				serve_stats(fd, node);
			} else if (sscanf(line, "CLOSE %u", &node) == 1 &&
				   node < PLDMA_NET_MAX_NODES) {
				/* release(): every key of the file revoked */
				pldma_close(chans[node]);
				chans[node] = NULL;
				sendf(fd, "OK");
			} else if (!strcmp(line, "QUIT")) {
				sendf(fd, "OK");
				quit = 1;
				break;
			} else {
				sendf(fd, "ERR %d", EINVAL);
			}
		}
		close(fd);
	}
	close(ls);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Requester                                                          */
/* ------------------------------------------------------------------ */

struct resp_stats {
	unsigned long long dev_faults, faults, pages, failed, rnr_tx;
};

static int get_resp_stats(int fd, unsigned int node, struct resp_stats *s)
{
	char *r = rpc(fd, "STATS %u", node);

	return r && sscanf(r, "OK %llu %llu %llu %llu %llu", &s->dev_faults,
			   &s->faults, &s->pages, &s->failed,
			   &s->rnr_tx) == 5 ? 0 : -1;
}

static int reg_remote(int fd, unsigned int node, size_t len,
		      const char *access, uint32_t seed, const char *strat,
		      uint32_t *rkey, uint64_t *rva)
{
	char *r = rpc(fd, "MR %u %zu %s %u %s", node, len, access, seed, strat);
	unsigned long long va;

	if (!r || sscanf(r, "OK %u %llu", rkey, &va) != 2) {
		note("MR %s: %s", access, r ? r : "(no reply)");
		return -1;
	}
	*rva = va;
	return 0;
}

static int reply_ok(const char *r)
{
	return r && !strncmp(r, "OK", 2);
}

/*
 * One WRITE and one READ of @len bytes, at offset @off of fresh windows.
 * The requester's own buffers are untouched too (memfd source, anonymous
 * destination): local faults on the requester, responder faults on the
 * responder.
 */
static int xfer_pair(int fd, struct pldma_chan *ch, unsigned int rnode,
		      int lstrat, unsigned int ltouch, const char *rstrat,
		      size_t len, size_t off, uint32_t seed)
{
	struct pldma_result res;
	uint32_t rkey;
	uint64_t rva;
	uint8_t *src, *dst;
	long bad;
	int ret;

	/* WRITE: local memfd source -> remote anonymous window */
	src = pu_src_alloc(len, seed);
	if (!src || reg_remote(fd, rnode, off + len, "W", 0, rstrat, &rkey,
			       &rva)) {
		result(0, "WRITE %zu bytes: setup", len);
		pu_free(src, len);
		return -EIO;
	}
	ret = pldma_rdma_write(ch, rnode, rkey, rva + off, src, len, lstrat,
			       ltouch, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS && res.bytes == len &&
	       reply_ok(rpc(fd, "CHECK %u %zu %zu %u", rkey, off, len, seed)),
	       "WRITE %zu bytes at +%zu: ret %d status %u bytes %llu, %.1f ms, local faults %llu, responder data verified",
	       len, off, ret, res.status, (unsigned long long)res.bytes,
	       res.time_ns / 1e6, (unsigned long long)res.faults);
	if (ret || res.status != PLDMA_ST_SUCCESS)
		dump_chan(ch);
	rpc(fd, "DEREG %u", rkey);
	pu_free(src, len);
	if (ret == -ETIMEDOUT)
		return ret;

	/* READ: remote memfd window holding seed + 1 -> local anonymous */
	dst = pu_dst_alloc(len, 0);
	if (!dst || reg_remote(fd, rnode, off + len, "R", seed + 1, rstrat,
			       &rkey, &rva)) {
		result(0, "READ %zu bytes: setup", len);
		pu_free(dst, len);
		return -EIO;
	}
	ret = pldma_rdma_read(ch, rnode, rkey, rva, dst, len, lstrat, ltouch,
			      &res);
	bad = ret ? 0 : pu_verify(dst, len, seed + 1);
	result(!ret && res.status == PLDMA_ST_SUCCESS && res.bytes == len &&
	       bad < 0,
	       "READ %zu bytes: ret %d status %u bytes %llu, %.1f ms, local faults %llu, data verified (first bad byte %ld)",
	       len, ret, res.status, (unsigned long long)res.bytes,
	       res.time_ns / 1e6, (unsigned long long)res.faults, bad);
	if (ret || res.status != PLDMA_ST_SUCCESS)
		dump_chan(ch);
	rpc(fd, "DEREG %u", rkey);
	pu_free(dst, len);
	return ret;
}

static int pair(const char *host, int port, unsigned int lnode,
		unsigned int rnode, const char *lstr, const char *rstr,
		int nsizes, char **sizes)
{
	struct pldma_net_stats n0, n1;
	struct resp_stats r0, r1;
	struct pldma_chan *ch;
	unsigned int ltouch, rtouch;
	int lstrat, rstrat, fd, i;
	static char tagbuf[96];

	snprintf(tagbuf, sizeof(tagbuf), "%s(node %u) -> %s(node %u): ", lstr,
		 lnode, rstr, rnode);
	tag = tagbuf;
	ch = chan_node(lnode);
	if (!ch || pldma_strategy_parse(lstr, &lstrat, &ltouch) ||
	    parse_strat(rstr, &rstrat, &rtouch)) {
		result(0, "local device and strategies");
		return 1;
	}
	fd = connect_to(host, port);
	if (fd < 0) {
		result(0, "side channel to %s:%d", host, port);
		return 1;
	}
	if (pldma_net_stats(ch, &n0) || get_resp_stats(fd, rnode, &r0)) {
		result(0, "counters");
		return 1;
	}
	for (i = 0; i < nsizes; i++) {
		size_t len = strtoul(sizes[i], NULL, 0);

		/* an odd length lands at an odd remote offset */
		if (xfer_pair(fd, ch, rnode, lstrat, ltouch, rstr, len,
			      len & 1 ? 123 : 0, 0x5a00 + i) == -ETIMEDOUT) {
			/* the ring is stuck behind it: give up this pair */
			result(0, "no transfer hangs (the rest of this pair skipped)");
			pldma_close(ch);
			chans[lnode] = NULL;
			close(fd);
			return 1;
		}
	}
	if (pldma_net_stats(ch, &n1) || get_resp_stats(fd, rnode, &r1)) {
		result(0, "counters");
		close(fd);
		return 1;
	}
#define D(f) ((unsigned int)(n1.cnt[f] - n0.cnt[f]))
	note("requester: %u RNR NAKs, %u resumes, %u segments (%u bytes) resent, %u timeouts, %u out-of-order",
	     D(PLDMA_NCNT_NAK_RX_RNR), D(PLDMA_NCNT_RESUME_RX),
	     D(PLDMA_NCNT_RETX_SEGS), D(PLDMA_NCNT_RETX_BYTES),
	     D(PLDMA_NCNT_TIMEOUTS), D(PLDMA_NCNT_OOO));
	note("responder: %llu faults (device), %llu served by the driver, %llu pages made present, %llu failed",
	     r1.dev_faults - r0.dev_faults, r1.faults - r0.faults,
	     r1.pages - r0.pages, r1.failed - r0.failed);
	result(r1.dev_faults > r0.dev_faults,
	       "responder faults: %llu", r1.dev_faults - r0.dev_faults);
	result(D(PLDMA_NCNT_NAK_RX_RNR) > 0 && D(PLDMA_NCNT_RETX_SEGS) > 0,
	       "requester: RNR NAKs (%u) and resends from the faulting segment (%u)",
	       D(PLDMA_NCNT_NAK_RX_RNR), D(PLDMA_NCNT_RETX_SEGS));
	if (rstrat == PLDMA_STRAT_ONE || rstrat == PLDMA_STRAT_TOUCH) {
		unsigned long long f = r1.faults - r0.faults;
		unsigned long long p = r1.pages - r0.pages;

		result(f > 0 && r1.failed == r0.failed &&
		       (rstrat == PLDMA_STRAT_ONE ? p == f : p > f),
		       "responder driver: %llu faults served %s, %llu pages present",
		       f, rstrat == PLDMA_STRAT_ONE ? "one page each" :
		       "with touch-ahead (more pages than faults)", p);
	}
#undef D
	close(fd);
	return 0;
}

/* Refused keys: REMOTE_ACCESS, and nothing written on the responder */
static int keys(const char *host, int port, unsigned int lnode,
		unsigned int rnode)
{
	const size_t len = 3 * PG;
	struct pldma_result res;
	struct pldma_chan *ch;
	static char tagbuf[64];
	uint32_t rkey, ro;
	uint64_t rva, rova;
	uint8_t *src;
	int fd, ret;

	snprintf(tagbuf, sizeof(tagbuf), "keys (node %u -> node %u): ",
		 lnode, rnode);
	tag = tagbuf;
	ch = chan_node(lnode);
	fd = connect_to(host, port);
	src = pu_src_alloc(len, 7);
	if (!ch || fd < 0 || !src) {
		result(0, "setup");
		return 1;
	}
	if (reg_remote(fd, rnode, len, "WR", 0, "default", &rkey, &rva) ||
	    reg_remote(fd, rnode, len, "R", 9, "default", &ro, &rova)) {
		result(0, "register windows");
		return 1;
	}
	ret = pldma_rdma_write(ch, rnode, rkey, rva, src, len, PLDMA_STRAT_PREFAULT,
			       0, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS, "a valid key works (status %u)",
	       res.status);
	ret = pldma_rdma_write(ch, rnode, rkey, rva + PG, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "beyond the window: REMOTE_ACCESS (status %u)", res.status);
	ret = pldma_rdma_write(ch, rnode, ro, rova, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS &&
	       reply_ok(rpc(fd, "CHECK %u 0 %zu 9", ro, len)),
	       "WRITE to a read-only window: REMOTE_ACCESS (status %u), its memory untouched",
	       res.status);
	result(reply_ok(rpc(fd, "DEREG %u", rkey)), "DEREG_MR");
	ret = pldma_rdma_write(ch, rnode, rkey, rva, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "deregistered key: REMOTE_ACCESS (status %u)", res.status);
	ret = pldma_rdma_read(ch, rnode, ro, rova, src, len,
			      PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS,
	       "the other key still works (status %u)", res.status);
	/* the owner's file closed (as at exit): every key revoked at once */
	result(reply_ok(rpc(fd, "CLOSE %u", rnode)), "responder closes its file");
	ret = pldma_rdma_read(ch, rnode, ro, rova, src, len,
			      PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "key of a released file: REMOTE_ACCESS (status %u)", res.status);
	ret = pldma_rdma_write(ch, rnode, 0x12345600 | 0x3f, rva, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "made-up key: REMOTE_ACCESS (status %u)", res.status);
	close(fd);
	pu_free(src, len);
	return 0;
}

static int quit(const char *host, int port)
{
	int fd = connect_to(host, port);

	return fd >= 0 && reply_ok(rpc(fd, "QUIT")) ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* Argument checking of the ioctls                                    */
/* ------------------------------------------------------------------ */

static int reg_raw(struct pldma_chan *ch, struct pldma_reg_mr *r)
{
	return ioctl(pldma_fd(ch), PLDMA_IOC_REG_MR, r) ? -errno : 0;
}

static int selftest(unsigned int node)
{
	struct pldma_chan *ch = chan_node(node), *other;
	const struct pldma_info *in;
	struct pldma_net_stats ns;
	uint32_t rkeys[PLDMA_NUM_KEYS], rk;
	uint8_t *buf;
	int i, n, ret, stall;

	static char tagbuf[32];

	snprintf(tagbuf, sizeof(tagbuf), "selftest node %u: ", node);
	tag = tagbuf;
	if (!ch) {
		result(0, "device with node-id %u", node);
		return 1;
	}
	in = pldma_info(ch);
	stall = in->fault_mode == PLDMA_MODE_STALL;
	result(in->node_id == node && in->mtu >= 256 && in->max_mrs > 0 &&
	       (in->cap & PLDMA_CAP_REMOTE),
	       "INFO: node %u, MTU %u, %u windows a file, CAP.REMOTE", in->node_id,
	       in->mtu, in->max_mrs);
	result(!pldma_net_stats(ch, &ns) && ns.node_id == node &&
	       ns.num == PLDMA_NCNT_NUM, "NET_STATS");
	buf = pu_dst_alloc(16 * PG, 0);

#define BAD(err, desc, ...) do {					\
		struct pldma_reg_mr r = { .va = (uintptr_t)buf,		\
			.len = PG, .access = PLDMA_MR_ACCESS_WRITE };	\
		__VA_ARGS__;						\
		ret = reg_raw(ch, &r);					\
		result(ret == -(err), "REG_MR %s: %s (got %s)", desc,	\
		       strerror(err), strerror(-ret));			\
	} while (0)
	BAD(EINVAL, "access 0", r.access = 0);
	BAD(EINVAL, "unknown access bit", r.access = 4);
	BAD(EINVAL, "length 0", r.len = 0);
	BAD(EINVAL, "wrapping range", r.va = ~0ULL - 100; r.len = 4096);
	BAD(EFAULT, "kernel address", r.va = 0xffff800000000000ULL);
	BAD(EFAULT, "beyond user space", r.len = 1ULL << 60);
	BAD(EINVAL, "unknown flag", r.flags = 0x80);
	BAD(EINVAL, "reserved field", r.rsvd[1] = 1);
	BAD(EINVAL, "strategy without PLDMA_MR_STRATEGY", r.strategy = 3);
	BAD(EINVAL, "pin strategy", r.flags = PLDMA_MR_STRATEGY;
	    r.strategy = PLDMA_STRAT_PIN);
	BAD(stall ? EOPNOTSUPP : EINVAL, "user strategy",
	    r.flags = PLDMA_MR_STRATEGY; r.strategy = PLDMA_STRAT_USER);
	BAD(EINVAL, "touch-ahead 0",
	    r.flags = PLDMA_MR_STRATEGY; r.strategy = PLDMA_STRAT_TOUCH);
	BAD(EINVAL, "touch-ahead too large",
	    r.flags = PLDMA_MR_STRATEGY; r.strategy = PLDMA_STRAT_TOUCH;
	    r.touch_ahead = PLDMA_TOUCH_MAX + 1);
	BAD(EINVAL, "unknown strategy", r.flags = PLDMA_MR_STRATEGY;
	    r.strategy = 99);
#undef BAD

	/* the per-file quota, then everything given back */
	for (n = 0; n < PLDMA_NUM_KEYS; n++)
		if (pldma_reg_mr(ch, buf + (n % 16) * PG, PG,
				 PLDMA_MR_ACCESS_READ, -1, 0, &rkeys[n]))
			break;
	ret = pldma_reg_mr(ch, buf, PG, PLDMA_MR_ACCESS_READ, -1, 0, &rk);
	result(n == (int)in->max_mrs && ret == -EDQUOT,
	       "quota: %d windows, then %s", n, strerror(-ret));
	for (i = 0, ret = 0; i < n; i++)
		ret |= pldma_dereg_mr(ch, rkeys[i]);
	result(!ret, "DEREG_MR of all %d", n);
	result(pldma_dereg_mr(ch, rkeys[0]) == -ENOENT, "DEREG_MR twice: ENOENT");
	result(pldma_dereg_mr(ch, 0xdead00ff) == -ENOENT,
	       "DEREG_MR of a made-up key: ENOENT");
	{
		struct pldma_dereg_mr d = { .rkey = rkeys[0], .rsvd = 1 };

		result(ioctl(pldma_fd(ch), PLDMA_IOC_DEREG_MR, &d) && errno == EINVAL,
		       "DEREG_MR reserved field: EINVAL");
	}
	/* another file cannot revoke this file's key */
	ret = pldma_reg_mr(ch, buf, 16 * PG, PLDMA_MR_ACCESS_WRITE, -1, 0, &rk);
	other = NULL;
	for (i = 0; i < 16 && !ret; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/dev/pldma%d", i);
		if (access(path, F_OK))
			continue;
		other = pldma_open(path);
		if (other && pldma_info(other)->node_id == node)
			break;
		pldma_close(other);
		other = NULL;
	}
	result(!ret && other && pldma_dereg_mr(other, rk) == -ENOENT &&
	       !pldma_dereg_mr(ch, rk),
	       "a key is revoked only by the file that registered it");
	pldma_close(other);
	pu_free(buf, 16 * PG);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "serve"))
		return serve(atoi(argv[2]));
	if (argc >= 9 && !strcmp(argv[1], "pair"))
		return pair(argv[2], atoi(argv[3]), atoi(argv[4]),
			    atoi(argv[5]), argv[6], argv[7], argc - 8,
			    argv + 8) || fails;
	if (argc == 6 && !strcmp(argv[1], "keys"))
		return keys(argv[2], atoi(argv[3]), atoi(argv[4]),
			    atoi(argv[5])) || fails;
	if (argc == 4 && !strcmp(argv[1], "quit"))
		return quit(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "selftest"))
		return selftest(atoi(argv[2])) || fails;
	fprintf(stderr,
		"usage: pldma-rdma serve PORT | pair HOST PORT LNODE RNODE LSTRAT RSTRAT SIZE... |\n"
		"       keys HOST PORT LNODE RNODE | quit HOST PORT | selftest NODE\n");
	return 2;
}
