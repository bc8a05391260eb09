// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ODP under pressure, on plain libibverbs (any provider: rxe, pldma).
 *
 * A responder (server) registers a buffer and a requester (client) RDMA
 * WRITEs a new pattern into all of it, round after round.  Before every
 * round both sides drop their buffer with madvise(MADV_DONTNEED), as
 * rdma-core's tests/test_odp.py does: with on-demand paging (-o) the
 * device's mappings of those pages are invalidated, and the WRITE's pages
 * must be faulted in again on both sides; the responder then compares every
 * byte with the round's pattern.  The connection is exchanged over TCP.
 *
 *   verbs-odp-pressure [-d DEV] [-g GIDX] [-s SIZE] [-n ROUNDS] [-o]
 *                      [-m KIB] server PORT | client HOST PORT
 *   verbs-odp-pressure [-d DEV] [-s SIZE] -m KIB memlock
 *
 * -o      register the buffer with IBV_ACCESS_ON_DEMAND (else pinned)
 * -m KIB  set RLIMIT_MEMLOCK to KIB KiB and drop CAP_IPC_LOCK first (the
 *         guest runs as root, and the capability bypasses the limit)
 * memlock: with the limit, a pinned MR of SIZE must fail with ENOMEM and
 *         an ODP MR of SIZE must be registered; then exit.
 *
 * Without -g, the port's first RoCEv2 GID holding an IPv4 address is used.
 * Exit status 0: every round's data verified (or the memlock checks held).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <linux/capability.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pldma-verbs.h"

static const char *dev_name;
static int gidx = -1;
static size_t size = 4 << 20;
static unsigned int rounds = 20;
static int odp;

struct conn {
	uint32_t qpn, psn, rkey, mtu;	/* mtu: the port's active enum ibv_mtu */
	uint64_t addr;
	uint8_t gid[16];
};

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gidx;
	enum ibv_mtu mtu;	/* the port's active MTU, then the path's */
};

#define die(...) do { \
		fprintf(stderr, "verbs-odp-pressure: " __VA_ARGS__); \
		fputc('\n', stderr); \
		exit(1); \
	} while (0)

static struct ibv_context *open_dev(void)
{
	struct ibv_context *c = pv_open(dev_name, NULL);

	if (!c)
		die("no RDMA device %s: %s", dev_name ? dev_name : "at all",
		    strerror(errno));
	return c;
}

/* the first RoCEv2 GID that holds an IPv4 address (::ffff:a.b.c.d) */
static int pick_gid(struct ibv_context *c)
{
	struct ibv_port_attr pa;
	union ibv_gid g;
	int i;

	if (ibv_query_port(c, PV_PORT, &pa))
		die("ibv_query_port: %s", strerror(errno));
	i = pv_ipv4_gid(c, pa.gid_tbl_len, &g, NULL);
	if (i < 0)
		die("no RoCEv2 IPv4 GID on %s port %d",
		    ibv_get_device_name(c->device), PV_PORT);
	return i;
}

static int mr_access(void)
{
	return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	       IBV_ACCESS_REMOTE_READ | (odp ? IBV_ACCESS_ON_DEMAND : 0);
}

static void check_odp_caps(struct ibv_context *c)
{
	struct ibv_device_attr_ex a;

	if (ibv_query_device_ex(c, NULL, &a))
		die("ibv_query_device_ex: %s", strerror(errno));
	if (!(a.odp_caps.general_caps & IBV_ODP_SUPPORT))
		die("%s does not advertise IBV_ODP_SUPPORT",
		    ibv_get_device_name(c->device));
	if (!(a.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE))
		die("%s: no RC WRITE in its ODP caps (rc_odp_caps 0x%x)",
		    ibv_get_device_name(c->device),
		    a.odp_caps.per_transport_caps.rc_odp_caps);
}

static void setup(struct ctx *x)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	x->ctx = open_dev();
	if (odp)
		check_odp_caps(x->ctx);
	x->gidx = gidx >= 0 ? gidx : pick_gid(x->ctx);
	{
		struct ibv_port_attr pa;

		if (ibv_query_port(x->ctx, PV_PORT, &pa))
			die("ibv_query_port: %s", strerror(errno));
		x->mtu = pa.active_mtu;
	}
	if (ibv_query_gid(x->ctx, PV_PORT, x->gidx, &x->gid))
		die("ibv_query_gid %d: %s", x->gidx, strerror(errno));
	x->pd = ibv_alloc_pd(x->ctx);
	if (!x->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	x->cq = ibv_create_cq(x->ctx, 8, NULL, NULL, 0);
	if (!x->cq)
		die("ibv_create_cq: %s", strerror(errno));
	x->buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->buf == MAP_FAILED)
		die("mmap %zu: %s", size, strerror(errno));
	x->mr = ibv_reg_mr(x->pd, x->buf, size, mr_access());
	if (!x->mr)
		die("ibv_reg_mr %s of %zu bytes: %s", odp ? "ODP" : "pinned",
		    size, strerror(errno));
	qa.send_cq = qa.recv_cq = x->cq;
	x->qp = ibv_create_qp(x->pd, &qa);
	if (!x->qp)
		die("ibv_create_qp: %s", strerror(errno));
	if (pv_qp_init(x->qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ))
		die("modify_qp INIT: %s", strerror(errno));
}

static void connect_qp(struct ctx *x, const struct conn *me,
		       const struct conn *peer)
{
	struct pv_path p = {
		.dest_qpn = peer->qpn, .rq_psn = peer->psn,
		.sgid_index = x->gidx, .hop_limit = 64,
		.max_dest_rd_atomic = 1,
	};

	/* the smaller of the two ports' active MTUs */
	if (peer->mtu < IBV_MTU_256 || peer->mtu > IBV_MTU_4096)
		die("the peer sent a bad MTU %u", peer->mtu);
	if ((enum ibv_mtu)peer->mtu < x->mtu)
		x->mtu = peer->mtu;
	p.mtu = x->mtu;
	memcpy(p.dgid.raw, peer->gid, 16);
	if (pv_qp_rtr(x->qp, &p))
		die("modify_qp RTR: %s", strerror(errno));
	if (pv_qp_rts(x->qp, me->psn))
		die("modify_qp RTS: %s", strerror(errno));
}

static void xfer(int fd, void *p, size_t n, int out)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = out ? write(fd, b, n) : read(fd, b, n);

		if (r <= 0)
			die("TCP %s: %s", out ? "write" : "read",
			    r ? strerror(errno) : "connection closed");
		b += r;
		n -= r;
	}
}

static uint64_t word(unsigned int round, size_t i)
{
	return ((uint64_t)(round + 1) << 48) ^ (i * 0x9e3779b97f4a7c15ull);
}

static void fill(uint8_t *b, unsigned int round)
{
	uint64_t *w = (uint64_t *)b;
	size_t i;

	for (i = 0; i < size / 8; i++)
		w[i] = word(round, i);
}

/* the first wrong byte's offset, or -1 */
static long verify(const uint8_t *b, unsigned int round)
{
	size_t i, j;

	for (i = 0; i < size / 8; i++) {
		uint64_t want = word(round, i);

		if (memcmp(b + i * 8, &want, 8))
			for (j = 0; j < 8; j++)
				if (b[i * 8 + j] != ((const uint8_t *)&want)[j])
					return i * 8 + j;
	}
	return -1;
}

static void drop(struct ctx *x)
{
	if (madvise(x->buf, size, MADV_DONTNEED))
		die("madvise(MADV_DONTNEED): %s", strerror(errno));
}

static void my_conn(struct ctx *x, struct conn *c)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	memset(c, 0, sizeof(*c));
	c->qpn = htonl(x->qp->qp_num);
	c->psn = htonl((t.tv_nsec ^ getpid()) & 0xffffff);
	c->rkey = htonl(x->mr->rkey);
	c->mtu = htonl(x->mtu);
	c->addr = htobe64((uintptr_t)x->buf);
	memcpy(c->gid, x->gid.raw, 16);
}

static void to_host(struct conn *c)
{
	c->qpn = ntohl(c->qpn);
	c->psn = ntohl(c->psn);
	c->rkey = ntohl(c->rkey);
	c->mtu = ntohl(c->mtu);
	c->addr = be64toh(c->addr);
}

static int server(const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(atoi(port)) };
	struct conn me, peer, mine;
	struct ctx x;
	int ls, fd, one = 1, bad = 0;
	unsigned int r;

	setup(&x);
	my_conn(&x, &me);
	mine = me;
	to_host(&mine);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (void *)&sa, sizeof(sa)) || listen(ls, 1))
		die("listen on %s: %s", port, strerror(errno));
	printf("# server: %s gid %d, %s MR of %zu bytes, %u rounds\n",
	       ibv_get_device_name(x.ctx->device), x.gidx,
	       odp ? "ODP" : "pinned", size, rounds);
	fflush(stdout);
	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	xfer(fd, &peer, sizeof(peer), 0);
	xfer(fd, &me, sizeof(me), 1);
	to_host(&peer);
	connect_qp(&x, &mine, &peer);
	for (r = 0; r < rounds; r++) {
		uint32_t msg = htonl(r);
		long off;

		/* the pages go; with ODP, the device's mapping of them too */
		drop(&x);
		xfer(fd, &msg, 4, 1);	/* go */
		xfer(fd, &msg, 4, 0);	/* the client's WRITE completed */
		if (ntohl(msg) != r)
			die("round %u: the client reports failure", r);
		off = verify(x.buf, r);
		if (off >= 0) {
			printf("# round %u: byte %ld wrong (0x%02x)\n", r, off,
			       x.buf[off]);
			bad++;
		}
		msg = htonl(off >= 0 ? 0xffffffffu : r);
		xfer(fd, &msg, 4, 1);
		if (off >= 0)
			break;	/* the client stops too */
	}
	/* r: the rounds verified before the first wrong one, if any */
	printf("verbs-odp-pressure: server: %u of %u rounds of %zu bytes verified%s (path MTU %d)\n",
	       r, rounds, size, bad ? ", the next one wrong" : "",
	       128 << x.mtu);
	return bad ? 1 : 0;
}

static int client(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *ai;
	struct conn me, peer, mine;
	struct ctx x;
	int fd = -1, tries;
	unsigned int r;

	setup(&x);
	my_conn(&x, &me);
	mine = me;
	to_host(&mine);
	if (getaddrinfo(host, port, &hints, &ai))
		die("cannot resolve %s", host);
	for (tries = 0; tries < 300; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(fd);
		fd = -1;
		usleep(100000);
	}
	if (fd < 0)
		die("connect to %s:%s: %s", host, port, strerror(errno));
	freeaddrinfo(ai);
	xfer(fd, &me, sizeof(me), 1);
	xfer(fd, &peer, sizeof(peer), 0);
	to_host(&peer);
	connect_qp(&x, &mine, &peer);
	for (r = 0; r < rounds; r++) {
		struct ibv_sge sge = { .addr = (uintptr_t)x.buf,
				       .length = size, .lkey = x.mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = r, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = peer.addr, .rkey = peer.rkey },
		}, *badwr;
		struct ibv_wc wc;
		uint32_t msg;
		time_t end;
		int n;

		xfer(fd, &msg, 4, 0);	/* go */
		/*
		 * the source's pages go too, then come back with new data
		 * that the device's mapping (ODP) no longer covers
		 */
		drop(&x);
		fill(x.buf, r);
		if (ibv_post_send(x.qp, &wr, &badwr))
			die("round %u: ibv_post_send: %s", r, strerror(errno));
		end = time(NULL) + 60;
		while ((n = ibv_poll_cq(x.cq, 1, &wc)) == 0 && time(NULL) < end)
			;
		if (n <= 0)
			die("round %u: no completion within 60 s (poll %d)", r, n);
		if (wc.status != IBV_WC_SUCCESS)
			die("round %u: WRITE completed with %s (%d)", r,
			    ibv_wc_status_str(wc.status), wc.status);
		msg = htonl(r);
		xfer(fd, &msg, 4, 1);
		xfer(fd, &msg, 4, 0);
		if (ntohl(msg) != r)
			die("round %u: the server found the data wrong", r);
	}
	printf("verbs-odp-pressure: client: %u rounds of %zu-byte RDMA WRITEs (%s MR, path MTU %d), all verified by the server\n",
	       rounds, size, odp ? "ODP" : "pinned", 128 << x.mtu);
	return 0;
}

/*
 * RLIMIT_MEMLOCK to kib KiB, and CAP_IPC_LOCK dropped (root ignores the
 * limit with it: ib_umem_get() checks capable(CAP_IPC_LOCK))
 */
static void limit_memlock(long kib)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	struct rlimit rl = { .rlim_cur = kib << 10, .rlim_max = kib << 10 };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		die("setrlimit(RLIMIT_MEMLOCK, %ld KiB): %s", kib, strerror(errno));
	if (syscall(SYS_capget, &h, d))
		die("capget: %s", strerror(errno));
	d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].inheritable &= ~(1u << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &h, d))
		die("capset (dropping CAP_IPC_LOCK): %s", strerror(errno));
	printf("# RLIMIT_MEMLOCK %ld KiB, CAP_IPC_LOCK dropped\n", kib);
}

/* with the limit: a pinned MR of size fails with ENOMEM, an ODP MR works */
static int memlock(void)
{
	struct ibv_context *c = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_mr *mr;
	uint8_t *b;
	int bad = 0;

	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (b == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(b, 0x5a, size);
	errno = 0;
	mr = ibv_reg_mr(pd, b, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (mr) {
		printf("not ok - pinned MR of %zu bytes registered over the memlock limit\n", size);
		ibv_dereg_mr(mr);
		bad++;
	} else if (errno != ENOMEM) {
		printf("not ok - pinned MR of %zu bytes failed with %s, not ENOMEM\n",
		       size, strerror(errno));
		bad++;
	} else {
		printf("ok - pinned MR of %zu bytes over the memlock limit: ENOMEM\n", size);
	}
	odp = 1;
	check_odp_caps(c);
	mr = ibv_reg_mr(pd, b, size, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	if (!mr) {
		printf("not ok - ODP MR of %zu bytes under the memlock limit: %s\n",
		       size, strerror(errno));
		bad++;
	} else {
		printf("ok - ODP MR of %zu bytes under the memlock limit registered\n", size);
		ibv_dereg_mr(mr);
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	long kib = 0;
	int o;

	while ((o = getopt(argc, argv, "d:g:s:n:om:")) != -1) {
		switch (o) {
		case 'd':
			dev_name = optarg;
			break;
		case 'g':
			gidx = atoi(optarg);
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'o':
			odp = 1;
			break;
		case 'm':
			kib = strtol(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (!size || size % 8 || size > (1ul << 30) || !rounds || rounds > 100000)
		die("bad size (a multiple of 8, at most 1 GiB) or rounds");
	if (kib > 0)
		limit_memlock(kib);
	if (optind < argc && !strcmp(argv[optind], "memlock") && kib > 0)
		return memlock();
	if (optind + 2 == argc && !strcmp(argv[optind], "server"))
		return server(argv[optind + 1]);
	if (optind + 3 == argc && !strcmp(argv[optind], "client"))
		return client(argv[optind + 1], argv[optind + 2]);
usage:
	fprintf(stderr, "usage: verbs-odp-pressure [-d DEV] [-g GIDX] [-s SIZE] [-n ROUNDS] [-o] [-m KIB]\n"
		"         server PORT | client HOST PORT | memlock (with -m)\n");
	return 2;
}
