// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-verbs-peer: the Linux soft-RoCE (rdma_rxe) end of an RC connection
 * to a PLDMA (tests/rxe/run).  Plain verbs against Debian's unmodified
 * libibverbs: nothing here knows PLDMA, the other end is judged by what
 * rxe accepts on the wire.
 *
 * The connection data travel over the TCP side channel of pldma-peer
 * (guest/lib/pldma-peer.h), whose text protocol this program speaks on
 * both ends:
 *
 *   pair HOST PORT NODE SIZE...
 *        requester: rxe -> PLDMA.  Asks the PLDMA node's window server
 *        (pldma-rdma serve) for a QP ("QP NODE QPN PSN IP MAC MTU", IP as
 *        a host-order 32-bit number, the reply the same of the PLDMA's
 *        QP), then for each size: an untouched PLDMA window ("MR"),
 *        one RDMA WRITE of pu_byte(seed, .) into it, checked there
 *        ("CHECK"); an untouched window holding pu_byte(seed + 1, .)
 *        that one RDMA READ fetches, checked here.  Every page of the
 *        PLDMA's windows is a responder fault (RNR NAK, rxe resends).
 *   msg HOST PORT SIZE...
 *        SEND/RECV with a PLDMA node's `pldma-rdma msg listen` (side A;
 *        this is side B), in its protocol: both send "QP QPN PSN IP MAC
 *        MTU RKEY VA" (a 16 MiB window for WRITE with immediate) and
 *        connect an RC QP with a receive queue; for each size a SEND
 *        A->B then B->A, received in three SGEs, data verified (the
 *        PLDMA's receive buffers untouched: responder faults); then each
 *        way a SEND before any receive WQE (RNR NAKs until it is posted),
 *        a SEND with immediate (solicited) and a 1 MiB RDMA WRITE with
 *        immediate into the window, whose receive WQE has no SGE.  The
 *        PLDMA side runs with PLDMA_MSG_PEER=verbs (no CQ overflow round,
 *        which is the PLDMA's own).
 *   serve PORT [NQUIT]
 *        responder: PLDMA -> rxe.  Serves QP, MR, CHECK, FREE and QUIT
 *        (NODE, STRATEGY ignored: the memory is rxe's, registered with
 *        ibv_reg_mr; with -o untouched and on demand where rxe has ODP
 *        for RC WRITE and READ, Linux 7.1), one connection at a time,
 *        until NQUIT (1) QUITs: one from each PLDMA node it serves
 *        (tests/rdma/run-vde has two).
 *
 * Both learn the PLDMA's IP and MAC from the QP exchange and add a
 * permanent neighbour entry for it on the rxe device's netdev (PLDMA has
 * no Ethernet function, so nothing would answer ARP), before the QP goes
 * to RTR (ib_core resolves the destination MAC there).
 *
 * Results are TAP lines without numbers ("ok - ..."); the host script
 * numbers them.  Options before the command: -d DEV (rxe0), -s STRATEGY
 * (the PLDMA responder's fault strategy for its windows, as pldma-peer's MR
 * request takes it: one, touchN, default), -o (serve: untouched windows on
 * demand where rxe has ODP).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "pldma-line.h"
#include "pldma-tap.h"
#include "pldma-util.h"		/* pu_byte(): the pattern both ends check */
#include "pldma-verbs.h"

#define PG		4096UL
#define MAX_MRS		64
#define CQ_DEPTH	16
#define MTU_BYTES	1024	/* IBV_MTU_1024: a 1500-byte Ethernet MTU */
#define POLL_SECS	300	/* one message, RNR retries included */

static const char *devname = "rxe0";
static const char *strat = "default";	/* the PLDMA's responder strategy */

/* ------------------------------------------------------------------ */
/* The rxe device and its QP                                          */
/* ------------------------------------------------------------------ */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static int gid_index = -1;
static union ibv_gid sgid;
static char ifname[IF_NAMESIZE];
static struct line_qp self;
/*
 * -o: windows left untouched, registered on demand, where rxe has ODP for
 * RC WRITE and READ (Linux 7.1).  Off by default: 7.1.8's rxe copies each
 * packet to the start of its page (__rxe_odp_mr_copy() in rxe_odp.c adds
 * neither the offset in the page nor the bytes already copied), so data
 * lands in the wrong place while rxe ACKs it (docs/testing.md).
 */
static int want_odp, odp;
/* msg: the QP gets a receive queue (three SGEs a receive WQE) */
static int qp_rq;

/* The peer's QP (pldma-line.h's format), with a QPN and a PSN of 24 bits */
static int info_parse(const char *s, struct line_qp *q)
{
	if (line_qp_parse(s, q) || !q->qpn || q->qpn > 0xffffff ||
	    q->psn > 0xffffff)
		return -1;
	return 0;
}

/*
 * The device, a PD, a CQ, and the RoCEv2 GID holding an IPv4 address
 * (::ffff:a.b.c.d): its address and netdev are this end's IP and MAC.
 */
static int dev_open(void)
{
	struct ibv_port_attr pa;
	int n;

	ctx = pv_open(devname, &n);
	if (!ctx) {
		note("no verbs device %s (%d devices)", devname, n);
		return -1;
	}
	if (ibv_query_port(ctx, PV_PORT, &pa)) {
		note("ibv_query_port: %s", strerror(errno));
		return -1;
	}
	gid_index = pv_ipv4_gid(ctx, pa.gid_tbl_len, &sgid, ifname);
	if (gid_index < 0) {
		note("%s has no RoCEv2 GID with an IPv4 address (is the netdev up with an address?)",
		     devname);
		return -1;
	}
	memcpy(&self.ip, sgid.raw + 12, 4);
	self.ip = ntohl(self.ip);
	if (pv_read_mac(ifname, self.mac))
		return -1;
	self.mtu = MTU_BYTES;
	{
		struct ibv_device_attr_ex dx;
		const uint32_t need = IBV_ODP_SUPPORT_WRITE |
				      IBV_ODP_SUPPORT_READ;

		odp = want_odp && !ibv_query_device_ex(ctx, NULL, &dx) &&
		      (dx.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
		      (dx.odp_caps.per_transport_caps.rc_odp_caps & need) ==
		      need;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0) : NULL;
	if (!cq) {
		note("PD/CQ: %s", strerror(errno));
		return -1;
	}
	note("%s: port state %d, active MTU %d, GID index %d (%s), netdev %s, windows on demand (ODP): %s",
	     devname, pa.state, 128 << pa.active_mtu, gid_index,
	     inet_ntoa((struct in_addr){ htonl(self.ip) }), ifname,
	     odp ? "yes" : "no");
	return 0;
}

static void qp_destroy(void)
{
	if (qp)
		ibv_destroy_qp(qp);
	qp = NULL;
}

/* A new QP in INIT; self.qpn and a random 24-bit start PSN */
static int qp_create(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = qp_rq ? 8 : 1,
			 .max_send_sge = 1, .max_recv_sge = qp_rq ? 3 : 1 },
		.sq_sig_all = 1,
	};
	uint32_t r;

	qp_destroy();
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		return -errno;
	if (pv_qp_init(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_LOCAL_WRITE))
		return -errno;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		return -EIO;
	self.qpn = qp->qp_num;
	self.psn = r & 0xffffff;
	return 0;
}

/*
 * RTR then RTS to @peer: the rxe QP's attributes as rdma-core's
 * ibv_rc_pingpong sets them (ACK timeout 14, 7 retries), with infinite
 * RNR retries (the PLDMA's responder faults are RNR NAKs).
 */
static int qp_connect(const struct line_qp *peer)
{
	struct pv_path p = {
		.dest_qpn = peer->qpn, .rq_psn = peer->psn,
		.mtu = IBV_MTU_1024, .sgid_index = gid_index,
		.hop_limit = 64, .max_dest_rd_atomic = 16,
	};
	uint32_t ip = htonl(peer->ip);
	int ret;

	ret = pv_neigh_add(ifname, ip, peer->mac);
	if (ret && ret != -EEXIST) {
		note("neighbour entry for the peer: %s", strerror(-ret));
		return ret;
	}
	/* ::ffff:a.b.c.d */
	memset(p.dgid.raw + 10, 0xff, 2);
	memcpy(p.dgid.raw + 12, &ip, 4);
	if (pv_qp_rtr(qp, &p)) {
		ret = -errno;
		note("modify QP to RTR: %s", strerror(errno));
		return ret;
	}
	if (pv_qp_rts(qp, self.psn)) {
		ret = -errno;
		note("modify QP to RTS: %s", strerror(errno));
		return ret;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Requester: rxe -> PLDMA                                            */
/* ------------------------------------------------------------------ */

/* One signaled RDMA WRITE or READ, waited for: its completion status */
static int rdma_op(enum ibv_wr_opcode op, struct ibv_mr *mr, size_t len,
		   uint32_t rkey, uint64_t rva, double *secs)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = rva, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	double t0 = now();
	int n;

	if (ibv_post_send(qp, &wr, &bad))
		return -errno;
	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (!n)
			usleep(200);
	} while (!n && now() - t0 < POLL_SECS);
	*secs = now() - t0;
	if (n < 0)
		return -EIO;
	if (!n)
		return -ETIMEDOUT;
	return wc.status;
}

/* The first byte of @b that is not pu_byte(@seed, .), or -1 */
static long first_bad(const uint8_t *b, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != pu_byte(seed, i))
			return (long)i;
	return -1;
}

/*
 * A WRITE and a READ of @len bytes: 0, -1 when one failed, -2 when one
 * completed in error (the QP is then in ERR and flushes the rest)
 */
static int xfer(int fd, unsigned int node, size_t len, uint32_t seed)
{
	unsigned long long va;
	struct ibv_mr *mr;
	uint32_t rkey;
	uint8_t *buf;
	double secs;
	char *r;
	size_t i;
	long bad = -1;
	int st, good = 1, qp_err = 0;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		result(0, "%zu bytes: buffer", len);
		return -1;
	}
	for (i = 0; i < len; i++)
		buf[i] = pu_byte(seed, i);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	r = line_rpc(fd, "MR %u %zu W 0 %s", node, len, strat);
	if (!mr || !r || sscanf(r, "OK %u %llu", &rkey, &va) != 2) {
		result(0, "WRITE %zu bytes: setup (%s)", len, r ? r : "no reply");
		good = 0;
		goto out;
	}
	st = rdma_op(IBV_WR_RDMA_WRITE, mr, len, rkey, va, &secs);
	r = st ? NULL : line_rpc(fd, "CHECK %u 0 %zu %u", rkey, len, seed);
	result(!st && line_ok(r),
	       "RDMA WRITE %zu bytes -> PLDMA: status %d (%s), %.1f ms, PLDMA's window checked: %s",
	       len, st, st > 0 ? ibv_wc_status_str(st) : st ? strerror(-st) : "ok",
	       secs * 1e3, r ? r : "-");
	good &= !st && line_ok(r);
	qp_err |= st != 0;
	line_rpc(fd, "FREE %u", rkey);
	if (st)
		goto out;

	memset(buf, 0, len);
	r = line_rpc(fd, "MR %u %zu R %u %s", node, len, seed + 1, strat);
	if (!r || sscanf(r, "OK %u %llu", &rkey, &va) != 2) {
		result(0, "READ %zu bytes: setup (%s)", len, r ? r : "no reply");
		good = 0;
		goto out;
	}
	st = rdma_op(IBV_WR_RDMA_READ, mr, len, rkey, va, &secs);
	if (!st)
		bad = first_bad(buf, len, seed + 1);
	result(!st && bad < 0,
	       "RDMA READ %zu bytes <- PLDMA: status %d (%s), %.1f ms, data verified (first bad byte %ld)",
	       len, st, st > 0 ? ibv_wc_status_str(st) : st ? strerror(-st) : "ok",
	       secs * 1e3, bad);
	good &= !st && bad < 0;
	qp_err |= st != 0;
	line_rpc(fd, "FREE %u", rkey);
out:
	if (mr)
		ibv_dereg_mr(mr);
	munmap(buf, len);
	return qp_err ? -2 : good ? 0 : -1;
}

static int pair(const char *host, int port, unsigned int node, int nsizes,
		char **sizes)
{
	struct line_qp peer;
	char buf[96], *r;
	int fd, i, ret;

	fd = connect_to(host, port);
	if (fd < 0) {
		result(0, "side channel to %s:%d", host, port);
		return 1;
	}
	ret = qp_create();
	line_qp_fmt(buf, sizeof(buf), &self);
	r = ret ? NULL : line_rpc(fd, "QP %u %s", node, buf);
	if (!r || strncmp(r, "OK ", 3) || info_parse(r + 3, &peer) ||
	    qp_connect(&peer)) {
		result(0, "RC QP %#x connected to PLDMA node %u (%s)", self.qpn,
		       node, r ? r : strerror(-ret));
		close(fd);
		return 1;
	}
	result(1, "RC QP %#x (PSN %#x) connected to PLDMA QP %#x (PSN %#x, %s, MAC %02x:%02x:%02x:%02x:%02x:%02x)",
	       self.qpn, self.psn, peer.qpn, peer.psn,
	       inet_ntoa((struct in_addr){ htonl(peer.ip) }), peer.mac[0],
	       peer.mac[1], peer.mac[2], peer.mac[3], peer.mac[4], peer.mac[5]);
	for (i = 0; i < nsizes; i++)
		if (xfer(fd, node, strtoul(sizes[i], NULL, 0), 0x7100 + i) == -2)
			break;	/* the QP is in ERR: the rest would flush */
	if (i < nsizes)
		result(0, "the sizes after %s skipped (the QP is in error)",
		       sizes[i]);
	close(fd);
	qp_destroy();
	return 0;
}

/* ------------------------------------------------------------------ */
/* Responder: PLDMA -> rxe                                            */
/* ------------------------------------------------------------------ */

struct window {
	struct ibv_mr *mr;
	uint8_t *addr;
	size_t len;
	int freed;	/* FREE came: deregistered when the connection ends */
};

static struct window wins[MAX_MRS];

static struct window *win_find(uint32_t rkey)
{
	int i;

	for (i = 0; i < MAX_MRS; i++)
		if (wins[i].mr && !wins[i].freed && wins[i].mr->rkey == rkey)
			return &wins[i];
	return NULL;
}

static void win_free(struct window *w)
{
	ibv_dereg_mr(w->mr);
	munmap(w->addr, w->len);
	memset(w, 0, sizeof(*w));
}

/*
 * A window of @len bytes.  With -o and ODP (Linux 7.1's rxe), untouched: a READ
 * window is a memfd written with write() and mapped, a WRITE window fresh
 * anonymous memory, registered IBV_ACCESS_ON_DEMAND: rxe's responder
 * faults the pages in as the PLDMA's requests reach them.  Without ODP the
 * pages are written here and ibv_reg_mr() pins them.
 */
static void serve_mr(int fd, size_t len, const char *access, uint32_t seed)
{
	int rd = !!strchr(access, 'R'), wr = !!strchr(access, 'W');
	struct window *w = NULL;
	uint8_t buf[4096];
	size_t i, off, n;
	int k, mfd = -1;

	for (k = 0; k < MAX_MRS && !w; k++)
		if (!wins[k].mr)
			w = &wins[k];
	if (!w || !len || len > (1UL << 30)) {
		sendf(fd, "ERR %d", EINVAL);
		return;
	}
	w->len = (len + PG - 1) & ~(PG - 1);
	if (rd && odp) {
		mfd = memfd_create("verbs-src", MFD_CLOEXEC);
		for (off = 0; mfd >= 0 && off < w->len; off += n) {
			n = w->len - off < sizeof(buf) ? w->len - off : sizeof(buf);
			for (i = 0; i < n; i++)
				buf[i] = pu_byte(seed, off + i);
			if (write(mfd, buf, n) != (ssize_t)n)
				break;
		}
		w->addr = mfd >= 0 && off == w->len ?
			  mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       mfd, 0) : MAP_FAILED;
		if (mfd >= 0)
			close(mfd);
	} else {
		w->addr = mmap(NULL, w->len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rd && w->addr != MAP_FAILED)
			for (i = 0; i < w->len; i++)
				w->addr[i] = pu_byte(seed, i);
	}
	if (w->addr == MAP_FAILED) {
		memset(w, 0, sizeof(*w));
		sendf(fd, "ERR %d", ENOMEM);
		return;
	}
	w->mr = ibv_reg_mr(pd, w->addr, w->len, IBV_ACCESS_LOCAL_WRITE |
			   (wr ? IBV_ACCESS_REMOTE_WRITE : 0) |
			   (rd ? IBV_ACCESS_REMOTE_READ : 0) |
			   (odp ? IBV_ACCESS_ON_DEMAND : 0));
	if (!w->mr) {
		k = errno;
		munmap(w->addr, w->len);
		memset(w, 0, sizeof(*w));
		sendf(fd, "ERR %d", k);
		return;
	}
	sendf(fd, "OK %u %llu", w->mr->rkey,
	      (unsigned long long)(uintptr_t)w->addr);
}

static void serve_check(int fd, uint32_t rkey, size_t off, size_t len,
			uint32_t seed)
{
	struct window *w = win_find(rkey);
	size_t i;

	if (!w || off > w->len || len > w->len - off) {
		sendf(fd, "ERR %d", EINVAL);
		return;
	}
	for (i = 0; i < len; i++)
		if (w->addr[off + i] != pu_byte(seed, i)) {
			size_t z = i;

			while (z < len && !w->addr[off + z])
				z++;
			note("CHECK of rkey %#x at +%zu: first bad byte %zu (%#x, expected %#x), zero up to %zu of %zu%s",
			     rkey, off, i, w->addr[off + i], pu_byte(seed, i),
			     z, len, odp ? " (ODP window)" : "");
			sendf(fd, "BAD %zu", i);
			return;
		}
	sendf(fd, "OK");
}

static void serve_qp(int fd, const char *line)
{
	struct line_qp peer;
	char buf[96];
	int ret;

	if (info_parse(line, &peer)) {
		sendf(fd, "ERR %d", EINVAL);
		return;
	}
	ret = qp_create();
	if (!ret)
		ret = qp_connect(&peer);
	if (ret) {
		qp_destroy();
		sendf(fd, "ERR %d", -ret);
		return;
	}
	note("RC QP %#x (PSN %#x) serving PLDMA QP %#x (PSN %#x)", self.qpn,
	     self.psn, peer.qpn, peer.psn);
	line_qp_fmt(buf, sizeof(buf), &self);
	sendf(fd, "OK %s", buf);
}

static int serve(int port, int nquit)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int ls, fd, one = 1, quit = 0, i;
	char line[256];

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 ||
	    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 4)) {
		result(0, "listen on port %d: %s", port, strerror(errno));
		return 1;
	}
	note("serving verbs windows on port %d until %d QUIT(s)", port, nquit);
	while (quit < nquit) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (!recv_line(fd, line, sizeof(line))) {
			unsigned long long x, y, z;
			char a1[32], a2[32];
			unsigned int node;
			struct window *w;
			int n = 0;

			if (sscanf(line, "MR %u %llu %31s %llu %31s", &node,
				   &x, a1, &y, a2) == 5) {
				serve_mr(fd, x, a1, y);
			} else if (sscanf(line, "CHECK %llu %llu %llu %31s",
					  &x, &y, &z, a1) == 4) {
				serve_check(fd, x, y, z, strtoul(a1, NULL, 0));
			} else if (sscanf(line, "FREE %llu", &x) == 1 &&
				   (w = win_find(x))) {
				/*
				 * Kept registered until the connection ends:
				 * a READ request the PLDMA sent again after a
				 * local fault can reach rxe after the READ
				 * completed, and a request on a deregistered
				 * key is a remote access NAK that moves rxe's
				 * QP to ERR (docs/testing.md)
				 */
				w->freed = 1;
				sendf(fd, "OK");
			} else if (sscanf(line, "QP %u %n", &node, &n) == 1 &&
				   n > 0) {
				serve_qp(fd, line + n);
			} else if (!strcmp(line, "QUIT")) {
				sendf(fd, "OK");
				quit++;
				break;
			} else {
				sendf(fd, "ERR %d", EINVAL);
			}
		}
		qp_destroy();
		close(fd);
		for (i = 0; i < MAX_MRS; i++)
			if (wins[i].mr && wins[i].freed)
				win_free(&wins[i]);
	}
	for (i = 0; i < MAX_MRS; i++)
		if (wins[i].mr)
			win_free(&wins[i]);
	close(ls);
	return 0;
}

/* ------------------------------------------------------------------ */
/* SEND/RECV: side B of pldma-rdma's msg protocol                     */
/* ------------------------------------------------------------------ */

#define MSG_MAX		(16UL << 20)

static int msg_fd = -1;
static uint8_t *msg_win;		/* ours, for the peer's WRITE_IMM */
static struct ibv_mr *msg_win_mr;
static uint32_t msg_peer_rkey;
static uint64_t msg_peer_va;

static int msg_expect(const char *what)
{
	char buf[128];

	if (recv_line(msg_fd, buf, sizeof(buf)) ||
	    strncmp(buf, what, strlen(what))) {
		note("side channel: expected %s", what);
		return -1;
	}
	return 0;
}

/* The next completion of the QP's CQ (sends and receives share it) */
static int msg_poll(struct ibv_wc *wc)
{
	double t0 = now();
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (!n)
			usleep(200);
	} while (!n && now() - t0 < POLL_SECS);
	return n == 1 ? 0 : n < 0 ? -EIO : -ETIMEDOUT;
}

static uint8_t *msg_buf(size_t len, uint32_t seed, struct ibv_mr **mr)
{
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (b == MAP_FAILED)
		return NULL;
	for (i = 0; seed && i < len; i++)
		b[i] = pu_byte(seed, i);
	*mr = ibv_reg_mr(pd, b, len, IBV_ACCESS_LOCAL_WRITE);
	if (!*mr) {
		munmap(b, len);
		return NULL;
	}
	return b;
}

static void msg_buf_free(uint8_t *b, size_t len, struct ibv_mr *mr)
{
	if (mr)
		ibv_dereg_mr(mr);
	if (b)
		munmap(b, len);
}

/*
 * Receive one message of @len bytes into three SGEs; @late: tell the
 * sender to go before the receive WQE is posted (it takes RNR NAKs)
 */
static void msg_recv(const char *what, size_t len, uint32_t seed, int late,
		     uint32_t imm)
{
	size_t lens[3] = { len / 4, len / 2, len - len / 4 - len / 2 }, off = 0;
	struct ibv_sge sg[3];
	struct ibv_recv_wr wr = { .wr_id = 0x5000 + seed, .sg_list = sg }, *bad;
	struct ibv_wc wc = { 0 };
	struct ibv_mr *mr = NULL;
	uint8_t *b = msg_buf(len, 0, &mr);
	long bad_at = -2;
	int i, ret = -ENOMEM;

	for (i = 0; b && i < 3; i++) {
		if (!lens[i])
			continue;
		sg[wr.num_sge].addr = (uintptr_t)(b + off);
		sg[wr.num_sge].length = lens[i];
		sg[wr.num_sge].lkey = mr->lkey;
		wr.num_sge++;
		off += lens[i];
	}
	ret = b && !late ? ibv_post_recv(qp, &wr, &bad) : b ? 0 : -ENOMEM;
	sendf(msg_fd, "READY");
	if (b && late) {
		usleep(300000);
		ret = ibv_post_recv(qp, &wr, &bad);
	}
	ret = ret ? ret : msg_poll(&wc);
	if (!ret && wc.status == IBV_WC_SUCCESS)
		bad_at = first_bad(b, len, seed);
	result(!ret && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	       wc.byte_len == len && wc.wr_id == 0x5000 + seed &&
	       wc.qp_num == self.qpn &&
	       !!(wc.wc_flags & IBV_WC_WITH_IMM) == !!imm &&
	       (!imm || ntohl(wc.imm_data) == imm) && bad_at == -1,
	       "%s %zu bytes <- PLDMA received: %d, status %s, opcode %d, byte_len %u, qp %#x, imm %s%#x, data verified in %d SGEs (first bad byte %ld)",
	       what, len, ret, ibv_wc_status_str(wc.status), wc.opcode,
	       wc.byte_len, wc.qp_num,
	       wc.wc_flags & IBV_WC_WITH_IMM ? "" : "none ",
	       ntohl(wc.imm_data), wr.num_sge, bad_at);
	msg_buf_free(b, len, mr);
	sendf(msg_fd, "DONE");
}

/* Send one message of @len bytes: SEND, SEND with immediate, WRITE_IMM */
static void msg_send(const char *what, enum ibv_wr_opcode op, size_t len,
		     uint32_t seed, uint32_t imm)
{
	struct ibv_mr *mr = NULL;
	uint8_t *b = msg_buf(len, seed, &mr);
	struct ibv_sge sge = { .length = len };
	struct ibv_send_wr wr = {
		.wr_id = 0x7000 + seed, .sg_list = &sge, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED |
		(op == IBV_WR_SEND_WITH_IMM ? IBV_SEND_SOLICITED : 0),
		.imm_data = htonl(imm),
		.wr.rdma = { .remote_addr = msg_peer_va, .rkey = msg_peer_rkey },
	}, *bad;
	struct ibv_wc wc = { 0 };
	double t0;
	int ret;

	if (!b || msg_expect("READY")) {
		result(0, "%s %zu bytes: setup", what, len);
		msg_buf_free(b, len, mr);
		return;
	}
	sge.addr = (uintptr_t)b;
	sge.lkey = mr->lkey;
	t0 = now();
	ret = ibv_post_send(qp, &wr, &bad) ? -errno : msg_poll(&wc);
	result(!ret && wc.status == IBV_WC_SUCCESS && wc.wr_id == wr.wr_id &&
	       wc.opcode == (op == IBV_WR_RDMA_WRITE_WITH_IMM ?
			     IBV_WC_RDMA_WRITE : IBV_WC_SEND),
	       "%s %zu bytes -> PLDMA sent: %d, status %s, opcode %d, %.1f ms",
	       what, len, ret, ibv_wc_status_str(wc.status), wc.opcode,
	       (now() - t0) * 1e3);
	msg_buf_free(b, len, mr);
	msg_expect("DONE");
}

/* The peer's RDMA WRITE with immediate into our window */
static void msg_recv_wimm(size_t len, uint32_t seed, uint32_t imm)
{
	struct ibv_recv_wr wr = { .wr_id = 0x6000 + seed }, *bad;
	struct ibv_wc wc = { 0 };
	long bad_at = -2;
	int ret;

	memset(msg_win, 0, len);
	ret = ibv_post_recv(qp, &wr, &bad);
	sendf(msg_fd, "READY");
	ret = ret ? ret : msg_poll(&wc);
	if (!ret && wc.status == IBV_WC_SUCCESS)
		bad_at = first_bad(msg_win, len, seed);
	result(!ret && wc.status == IBV_WC_SUCCESS &&
	       wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	       (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == imm &&
	       wc.wr_id == wr.wr_id && bad_at == -1,
	       "WRITE_IMM %zu bytes <- PLDMA: %d, status %s, opcode %d, imm %#x (want %#x), byte_len %u, window verified (first bad byte %ld)",
	       len, ret, ibv_wc_status_str(wc.status), wc.opcode,
	       ntohl(wc.imm_data), imm, wc.byte_len, bad_at);
	sendf(msg_fd, "DONE");
}

static int msg_setup(void)
{
	struct line_qp peer;
	char buf[160], mac[32], info[96];
	unsigned int m[6];
	int ret, i;

	qp_rq = 1;
	ret = qp_create();
	msg_win = ret ? NULL : mmap(NULL, MSG_MAX, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	msg_win_mr = msg_win && msg_win != MAP_FAILED ?
		ibv_reg_mr(pd, msg_win, MSG_MAX, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!msg_win_mr) {
		result(0, "msg: QP with a receive queue and a window (%d)", ret);
		return -1;
	}
	line_qp_fmt(info, sizeof(info), &self);
	sendf(msg_fd, "QP %s %u %llu", info, msg_win_mr->rkey,
	      (unsigned long long)(uintptr_t)msg_win);
	if (recv_line(msg_fd, buf, sizeof(buf)) ||
	    sscanf(buf, "QP %u %u %u %31s %u %u %llu", &peer.qpn, &peer.psn,
		   &peer.ip, mac, &peer.mtu, &msg_peer_rkey,
		   (unsigned long long *)&msg_peer_va) != 7 ||
	    sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5]) != 6) {
		result(0, "msg: the PLDMA's QP line");
		return -1;
	}
	for (i = 0; i < 6; i++)
		peer.mac[i] = m[i];
	ret = qp_connect(&peer);
	result(!ret, "msg: RC QP %#x with a receive queue connected to the PLDMA's QP %#x (%d)",
	       self.qpn, peer.qpn, ret);
	return ret;
}

/* Side B: the sizes each way, then the late SEND, SEND_IMM and WRITE_IMM */
static int msg(const char *host, int port, int nsizes, char **sizes)
{
	uint32_t imm;
	size_t len;
	int i, dir;

	msg_fd = connect_to(host, port);
	if (msg_fd < 0) {
		result(0, "msg: side channel to %s:%d", host, port);
		return 1;
	}
	if (msg_setup())
		goto out;
	for (i = 0; i < nsizes; i++) {
		len = strtoul(sizes[i], NULL, 0);
		if (!len || len > MSG_MAX) {
			result(0, "msg: size %s", sizes[i]);
			continue;
		}
		for (dir = 0; dir < 2; dir++) {
			if (dir == 1)
				msg_send("SEND", IBV_WR_SEND, len, i + 1, 0);
			else
				msg_recv("SEND", len, i + 1, 0, 0);
		}
	}
	for (dir = 0; dir < 2; dir++) {
		imm = 0xc0de0000 | dir;
		if (dir == 1) {
			msg_send("SEND before RECV", IBV_WR_SEND, 65536,
				 100 + dir, 0);
			msg_send("SEND_IMM", IBV_WR_SEND_WITH_IMM, 4096,
				 110 + dir, imm);
			msg_send("WRITE_IMM", IBV_WR_RDMA_WRITE_WITH_IMM,
				 1 << 20, 120 + dir, imm ^ 0xffff);
		} else {
			msg_recv("SEND before RECV", 65536, 100 + dir, 1, 0);
			msg_recv("SEND_IMM", 4096, 110 + dir, 0, imm);
			msg_recv_wimm(1 << 20, 120 + dir, imm ^ 0xffff);
		}
	}
	sendf(msg_fd, "BYE");
	result(!msg_expect("BYE"), "msg: the PLDMA side says BYE");
out:
	qp_destroy();
	if (msg_win_mr)
		ibv_dereg_mr(msg_win_mr);
	if (msg_win && msg_win != MAP_FAILED)
		munmap(msg_win, MSG_MAX);
	close(msg_fd);
	return fails ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: pldma-verbs-peer [-d DEV] [-s STRATEGY] pair HOST PORT NODE SIZE...\n"
		"       pldma-verbs-peer [-d DEV] [-o] serve PORT [NQUIT]\n"
		"       pldma-verbs-peer [-d DEV] msg HOST PORT SIZE...\n"
		"       pldma-verbs-peer quit HOST PORT\n");
	return 2;
}

int main(int argc, char **argv)
{
	int opt, fd;
	char *r;

	tap_tag = "rxe: ";
	while ((opt = getopt(argc, argv, "+d:os:")) != -1) {
		if (opt == 'd')
			devname = optarg;
		else if (opt == 'o')
			want_odp = 1;
		else if (opt == 's')
			strat = optarg;
		else
			return usage();
	}
	argc -= optind;
	argv += optind;
	if (argc == 3 && !strcmp(argv[0], "quit")) {
		fd = connect_to(argv[1], atoi(argv[2]));
		r = fd < 0 ? NULL : line_rpc(fd, "QUIT");
		return line_ok(r) ? 0 : 1;
	}
	if (argc >= 5 && !strcmp(argv[0], "pair")) {
		if (dev_open()) {
			result(0, "verbs device %s", devname);
			return 1;
		}
		pair(argv[1], atoi(argv[2]), atoi(argv[3]), argc - 4, argv + 4);
	} else if (argc >= 4 && !strcmp(argv[0], "msg")) {
		if (dev_open()) {
			result(0, "verbs device %s", devname);
			return 1;
		}
		msg(argv[1], atoi(argv[2]), argc - 3, argv + 3);
	} else if ((argc == 2 || argc == 3) && !strcmp(argv[0], "serve")) {
		int nquit = argc == 3 ? atoi(argv[2]) : 1;

		if (nquit < 1 || nquit > 64)
			return usage();
		if (dev_open()) {
			result(0, "verbs device %s", devname);
			return 1;
		}
		serve(atoi(argv[1]), nquit);
	} else {
		return usage();
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	return fails ? 1 : 0;
}
