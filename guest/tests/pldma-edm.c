// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-edm: EDM's DM-Handler on this platform (tests/edm/run).  A process
 * whose memory lives on another node: a userfaultfd handler thread serves
 * each missing page of a region with an RDMA READ from a memory node, and
 * evicts pages back with an RDMA WRITE and MADV_DONTNEED when the number
 * of resident pages reaches a threshold.  The process's own PLDMA transfers
 * (libpldma COPY and FILL into and out of the region) fault on those pages
 * and are served through the same handler.
 *
 *   pldma-edm [-d DEV] memnode PORT PAGES
 *        the memory node: a store of PAGES pages registered for remote
 *        READ and WRITE on verbs device DEV, one RC QP per client
 *        connection (TCP, PORT), served one after the other until a client
 *        sends QUIT.  After a client's run it checks the store against the
 *        pattern the client says it must hold (CHECK).
 *   pldma-edm [-d DEV] [-s STRATEGY] [-t THRESHOLD] [-r ROUNDS] [-S]
 *             client HOST PORT PAGES
 *        the compute node: a region of PAGES + 1 pages (the last has no
 *        page at the memory node), the workload below, and one summary
 *        line "# edm totals: ..." that tests/edm/run checks.
 *   pldma-edm quit HOST PORT
 *
 * The RDMA side is plain verbs against Debian's unmodified libibverbs, so
 * DEV is any RoCE device: rxe (rdma_rxe on a virtio-net NIC) today, the
 * PLDMA's own ib_device once it exists.  DEV defaults to the first device.
 *
 * The handler.  A page the memory node holds (it was evicted before) is
 * fetched with an RDMA READ into a registered staging page and placed with
 * UFFDIO_COPY; a page never written before (first touch) is placed with
 * UFFDIO_ZEROPAGE; a page that cannot be served (beyond the store) gets
 * UFFDIO_POISON, so its fault fails at once (SIGBUS for a CPU access, an
 * error for a DMA) instead of waiting forever.  Before a page is placed,
 * if THRESHOLD pages are resident, the oldest (FIFO) is evicted:
 * write-protected (UFFDIO_WRITEPROTECT, so no write slips in unseen),
 * copied to the staging page, RDMA WRITten to its slot at the memory node,
 * and dropped with MADV_DONTNEED, after which the next access faults again.
 * Every page is written back (no dirty tracking): the counts are exact.
 *
 * Which PLDMA fault strategy reaches the handler: the report-mode kernel
 * strategies (one, touchN, batchN) make the page present with
 * fixup_user_fault() and FAULT_FLAG_ALLOW_RETRY, so handle_userfault()
 * queues a message and waits for the handler; `user` forwards the fault to
 * libpldma's fault thread, whose MADV_POPULATE_{READ,WRITE} waits the same
 * way.  Stall mode does not: the SMMU's IOPF handler (iommu_sva_handle_mm)
 * calls handle_mm_fault() without FAULT_FLAG_ALLOW_RETRY, and
 * handle_userfault() answers such a fault VM_FAULT_SIGBUS at once, without
 * a message: the stalled transfer ends with an error (-S checks that on a
 * stall-mode PLDMA, if the guest has one).  The default is `one`: one page
 * per fault, so the counts are exact; touch-ahead would fetch pages ahead
 * of the device, and a window wider than THRESHOLD would evict pages the
 * device has yet to reach.
 *
 * The workload (H = PAGES / 2; every phase starts and ends with all pages
 * evicted, "flush", so its counts do not depend on the one before):
 *   1. first touch: the CPU writes pattern 1 into pages [0, H): H zero pages
 *   2. ROUNDS rounds: the CPU checks pattern r and writes r + 1 in [0, H),
 *      page by page: H fetches each round, data compared
 *   3. PLDMA COPY [0, H) to a local buffer: H device faults, H fetches,
 *      the copy compared byte for byte
 *   4. PLDMA FILL of [H, PAGES), never touched: PAGES - H device faults, as
 *      many zero pages; then the CPU checks the fill (PAGES - H fetches)
 *   5. PLDMA COPY [0, H) to [H, 2H) inside the region: 2H device faults
 *      and fetches; then the CPU checks the whole region (2H fetches)
 *   then the memory node checks its store (CHECK): the pattern the region
 *      holds, so every eviction's WRITE landed there
 *   6. PLDMA COPY from page PAGES (no page at the memory node): poisoned,
 *      the transfer ends with an error, 1 device fault
 *   -S: a stall-mode COPY from a missing page of the region ends with an
 *      error, and the handler never hears of it
 *   7. a writer thread writes words of 8 pages once each while 64 faults of
 *      the main thread evict them: no write may be lost (the counts of
 *      this phase depend on timing and are only printed; -W leaves the
 *      eviction's write protection out, to show the lost writes)
 *
 * Results are TAP lines without numbers ("ok - ..."), numbered by the host.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "pldma.h"
#include "pldma-line.h"
#include "pldma-tap.h"
#include "pldma-util.h"
#include "pldma-verbs.h"

/* Linux 6.6+ (the cross toolchain's headers are older) */
#ifndef UFFDIO_POISON
#define UFFD_FEATURE_POISON	(1 << 14)
#define _UFFDIO_POISON		(0x08)
struct uffdio_poison {
	struct uffdio_range range;
	__u64 mode;
	__s64 updated;
};
#define UFFDIO_POISON		_IOWR(UFFDIO, _UFFDIO_POISON, struct uffdio_poison)
#endif

#define PG		4096UL
#define MAX_PAGES	65536	/* 256 MiB at the memory node */
#define POLL_MS		20000	/* one RDMA op */
#define IDLE_MS		300000	/* the memory node waits for a client */

static const char *devname;

/* ------------------------------------------------------------------ */
/* TCP side channel: one text line each way                           */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Verbs: the device, one RC QP, one-sided READ and WRITE             */
/* ------------------------------------------------------------------ */

struct wire {
	uint32_t qpn, psn, rkey;
	uint64_t addr, pages;
	uint8_t gid[16], mac[6];
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static int gid_index = -1;
static union ibv_gid sgid;
static char ifname[IF_NAMESIZE];
static uint8_t self_mac[6];

/* DEV (or the first device), a PD, a CQ, its RoCEv2 GID holding an IPv4
 * address (::ffff:a.b.c.d) and that GID's netdev */
static int dev_open(void)
{
	struct ibv_port_attr pa;
	int n;

	ctx = pv_open(devname, &n);
	if (!ctx) {
		note("no verbs device %s (%d devices)", devname ? devname : "at all", n);
		return -1;
	}
	devname = strdup(ibv_get_device_name(ctx->device));
	if (ibv_query_port(ctx, PV_PORT, &pa)) {
		note("ibv_query_port: %s", strerror(errno));
		return -1;
	}
	gid_index = pv_ipv4_gid(ctx, pa.gid_tbl_len, &sgid, ifname);
	if (gid_index < 0) {
		note("%s has no RoCEv2 GID with an IPv4 address", devname);
		return -1;
	}
	if (pv_read_mac(ifname, self_mac))
		return -1;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	if (!cq) {
		note("PD/CQ: %s", strerror(errno));
		return -1;
	}
	note("verbs device %s: port state %d, GID index %d (%u.%u.%u.%u), netdev %s",
	     devname, pa.state, gid_index, sgid.raw[12], sgid.raw[13],
	     sgid.raw[14], sgid.raw[15], ifname);
	return 0;
}

/* A permanent neighbour entry for the peer: a peer without an Ethernet
 * function of its own (a PLDMA port) answers no ARP. */
static void neigh_add(const uint8_t gid[16], const uint8_t mac[6])
{
	uint32_t ip;
	int ret;

	memcpy(&ip, gid + 12, 4);
	ret = pv_neigh_add(ifname, ip, mac);
	if (ret)
		note("neighbour entry for the peer: %s", strerror(-ret));
}

static int qp_create(struct wire *self)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	uint32_t psn;

	qp = ibv_create_qp(pd, &ia);
	if (!qp || pv_qp_init(qp, IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_WRITE)) {
		note("QP to INIT: %s", strerror(errno));
		return -1;
	}
	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = 4242;
	self->qpn = qp->qp_num;
	self->psn = psn & 0xffffff;
	memcpy(self->gid, sgid.raw, 16);
	memcpy(self->mac, self_mac, 6);
	return 0;
}

static int qp_connect(const struct wire *self, const struct wire *peer)
{
	struct pv_path p = {
		.dest_qpn = peer->qpn, .rq_psn = peer->psn,
		.mtu = IBV_MTU_1024, .sgid_index = gid_index,
		.hop_limit = 64, .max_dest_rd_atomic = 1,
	};

	memcpy(p.dgid.raw, peer->gid, 16);
	neigh_add(peer->gid, peer->mac);
	if (pv_qp_rtr(qp, &p)) {
		note("QP to RTR: %s", strerror(errno));
		return -1;
	}
	if (pv_qp_rts(qp, self->psn)) {
		note("QP to RTS: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void wire_fmt(char *buf, size_t len, const char *tag,
		     const struct wire *w)
{
	int n, i;

	n = snprintf(buf, len, "%s %u %u %u %llu %llu ", tag, w->qpn, w->psn,
		     w->rkey, (unsigned long long)w->addr,
		     (unsigned long long)w->pages);
	for (i = 0; i < 16; i++)
		n += snprintf(buf + n, len - n, "%02x", w->gid[i]);
	snprintf(buf + n, len - n, " %02x:%02x:%02x:%02x:%02x:%02x",
		 w->mac[0], w->mac[1], w->mac[2], w->mac[3], w->mac[4],
		 w->mac[5]);
}

static int wire_parse(const char *s, const char *tag, struct wire *w)
{
	unsigned long long addr, pages;
	unsigned int m[6], i;
	char t[8], gid[40];

	memset(w, 0, sizeof(*w));
	if (sscanf(s, "%7s %u %u %u %llu %llu %39s %x:%x:%x:%x:%x:%x", t,
		   &w->qpn, &w->psn, &w->rkey, &addr, &pages, gid, &m[0],
		   &m[1], &m[2], &m[3], &m[4], &m[5]) != 13 ||
	    strcmp(t, tag) || strlen(gid) != 32 || !w->qpn ||
	    w->qpn > 0xffffff || w->psn > 0xffffff || pages > MAX_PAGES)
		return -1;
	w->addr = addr;
	w->pages = pages;
	for (i = 0; i < 16; i++) {
		unsigned int b;

		if (sscanf(gid + 2 * i, "%2x", &b) != 1)
			return -1;
		w->gid[i] = b;
	}
	for (i = 0; i < 6; i++) {
		if (m[i] > 0xff)
			return -1;
		w->mac[i] = m[i];
	}
	return 0;
}

/* One signaled READ or WRITE of len bytes, waited for (bounded) */
static int rdma_op(enum ibv_wr_opcode op, struct ibv_mr *mr, void *local,
		   size_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	double end = now() + POLL_MS / 1000.0;
	int n;

	if (ibv_post_send(qp, &wr, &bad)) {
		note("ibv_post_send: %s", strerror(errno));
		return -1;
	}
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
		if (now() > end) {
			note("RDMA %s: no completion in %d ms",
			     op == IBV_WR_RDMA_READ ? "READ" : "WRITE", POLL_MS);
			return -1;
		}
	}
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		note("RDMA %s: completion %s",
		     op == IBV_WR_RDMA_READ ? "READ" : "WRITE",
		     n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The memory node                                                    */
/* ------------------------------------------------------------------ */

/* The pattern of round `seed` over n pages: byte i of base is
 * pu_byte(seed, origin * PG + i); returns the first index that differs
 * or -1 */
static long check_pages(const uint8_t *base, size_t origin, size_t n,
			uint32_t seed)
{
	size_t i;

	for (i = 0; i < n * PG; i++)
		if (base[i] != pu_byte(seed, origin * PG + i))
			return (long)i;
	return -1;
}

static int memnode(int port, unsigned long pages)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct wire self = { 0 }, peer;
	struct ibv_mr *mr;
	uint8_t *store;
	int ls, one = 1, quit = 0;
	char line[256];

	if (dev_open())
		return 1;
	store = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (store == MAP_FAILED)
		return 1;
	mr = ibv_reg_mr(pd, store, pages * PG, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		note("ibv_reg_mr of the store: %s", strerror(errno));
		return 1;
	}
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ls, 4)) {
		note("listen on %d: %s", port, strerror(errno));
		return 1;
	}
	note("memory node: %lu pages at %p, rkey %#x, port %d", pages,
	     (void *)store, mr->rkey, port);
	while (!quit) {
		struct pollfd pfd = { .fd = ls, .events = POLLIN };
		int fd;

		/* a client that never comes (its node died) ends the node */
		if (poll(&pfd, 1, IDLE_MS) != 1) {
			result(0, "memory node: no client for %d s", IDLE_MS / 1000);
			break;
		}
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			return 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (!recv_line(fd, line, sizeof(line))) {
			unsigned int seed, first, n, origin;
			long bad;

			if (!strcmp(line, "QUIT")) {
				quit = 1;
				sendf(fd, "OK");
				break;
			}
			if (!strncmp(line, "EDM ", 4)) {
				if (qp || wire_parse(line, "EDM", &peer) ||
				    qp_create(&self)) {
					sendf(fd, "ERR");
					continue;
				}
				self.rkey = mr->rkey;
				self.addr = (uintptr_t)store;
				self.pages = pages;
				wire_fmt(line, sizeof(line), "MEM", &self);
				if (qp_connect(&self, &peer)) {
					sendf(fd, "ERR");
					continue;
				}
				sendf(fd, "%s", line);
				continue;
			}
			/* CHECK SEED FIRST N ORIGIN: pages [FIRST, FIRST + N)
			 * hold the pattern of SEED from page ORIGIN on */
			if (sscanf(line, "CHECK %u %u %u %u", &seed, &first, &n,
				   &origin) == 4 && first <= pages &&
			    n <= pages - first && n && origin <= pages) {
				bad = check_pages(store + first * PG, origin, n, seed);
				result(bad < 0, "memory node: its store holds pattern %u in pages %u..%u%s",
				       seed, first, first + n - 1,
				       bad < 0 ? "" : " (a byte differs)");
				if (bad >= 0)
					note("first difference at offset %ld", bad);
				sendf(fd, bad < 0 ? "OK" : "BAD %ld", bad);
				continue;
			}
			sendf(fd, "ERR");
		}
		close(fd);
		if (qp) {
			ibv_destroy_qp(qp);
			qp = NULL;
		}
	}
	close(ls);
	ibv_dereg_mr(mr);
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* The compute node: region, handler, workload                        */
/* ------------------------------------------------------------------ */

struct counts {
	unsigned long fetches, evictions, zeropages, poisoned, msgs,
		      dev_msgs, dups, wp_faults;
};

static int uffd;
static uint8_t *region;
static unsigned long npages;	/* region pages: the store's + 1 */
static unsigned long store_pages;
static unsigned int threshold = 16;
static struct wire mem;		/* the memory node's QP and store */
static struct ibv_mr *stage_mr;
static uint8_t *stage;
static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *resident, *remote;	/* per page */
static unsigned long *fifo, fifo_head, fifo_len;
static struct counts cnt;
static pid_t main_tid;
static volatile int stop;
static int broken;		/* an RDMA op failed: serve nothing more */
static int use_wp = 1;		/* write-protect a page before evicting it */

/*
 * Evict the oldest resident page: write-protect, copy, RDMA WRITE,
 * MADV_DONTNEED.  The write protection (UFFDIO_WRITEPROTECT; the region is
 * registered for WP faults too) holds any writer of the page, a thread or
 * the PLDMA, from the copy until the page is gone: without it a write
 * landing between the copy and MADV_DONTNEED would be lost.  The held
 * writer's WP fault is answered after the eviction (serve()).
 */
static int evict_one(void)
{
	unsigned long p = fifo[fifo_head];
	uint8_t *va = region + p * PG;

	if (use_wp) {
		struct uffdio_writeprotect w = {
			.range = { .start = (uintptr_t)va, .len = PG },
			.mode = UFFDIO_WRITEPROTECT_MODE_WP,
		};

		if (ioctl(uffd, UFFDIO_WRITEPROTECT, &w)) {
			note("UFFDIO_WRITEPROTECT: %s", strerror(errno));
			return -1;
		}
	}
	memcpy(stage, va, PG);
	if (rdma_op(IBV_WR_RDMA_WRITE, stage_mr, stage, PG,
		    mem.addr + p * PG, mem.rkey))
		return -1;
	if (madvise(va, PG, MADV_DONTNEED)) {
		note("MADV_DONTNEED: %s", strerror(errno));
		return -1;
	}
	fifo_head = (fifo_head + 1) % npages;
	fifo_len--;
	resident[p] = 0;
	remote[p] = 1;
	cnt.evictions++;
	return 0;
}

static int flush_all(void)
{
	int ret = 0;

	pthread_mutex_lock(&lk);
	while (fifo_len && !ret)
		ret = evict_one();
	pthread_mutex_unlock(&lk);
	return ret;
}

static int poison(uint64_t addr)
{
	struct uffdio_poison u = {
		.range = { .start = addr, .len = PG },
	};

	cnt.poisoned++;
	return ioctl(uffd, UFFDIO_POISON, &u) && errno != EEXIST ? -1 : 0;
}

/* One fault message, under lk */
static int serve(const struct uffd_msg *m)
{
	uint64_t addr = m->arg.pagefault.address & ~(PG - 1);
	unsigned long p = (addr - (uintptr_t)region) / PG;

	if (m->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) {
		/*
		 * A write held by an eviction's write protection.  The page is
		 * gone now: wake the writer, whose retry is a missing fault
		 * (and a fetch of what it was about to change).  A resident
		 * page (an eviction that failed) is unprotected, which wakes.
		 */
		struct uffdio_writeprotect w = {
			.range = { .start = addr, .len = PG }, .mode = 0,
		};
		struct uffdio_range r = { .start = addr, .len = PG };

		cnt.wp_faults++;
		if (p < npages && resident[p])
			return ioctl(uffd, UFFDIO_WRITEPROTECT, &w);
		return ioctl(uffd, UFFDIO_WAKE, &r);
	}
	cnt.msgs++;
	if ((pid_t)m->arg.pagefault.feat.ptid != main_tid)
		cnt.dev_msgs++;
	if (p >= store_pages || broken)
		return poison(addr);
	if (resident[p]) {
		/* a second fault on a page placed meanwhile: wake it */
		struct uffdio_range r = { .start = addr, .len = PG };

		cnt.dups++;
		return ioctl(uffd, UFFDIO_WAKE, &r);
	}
	while (fifo_len >= threshold)
		if (evict_one())
			goto fail;
	if (remote[p]) {
		struct uffdio_copy c = {
			.dst = addr, .src = (uintptr_t)stage, .len = PG,
		};

		if (rdma_op(IBV_WR_RDMA_READ, stage_mr, stage, PG,
			    mem.addr + p * PG, mem.rkey))
			goto fail;
		if (ioctl(uffd, UFFDIO_COPY, &c) && errno != EEXIST) {
			note("UFFDIO_COPY: %s", strerror(errno));
			goto fail;
		}
		cnt.fetches++;
	} else {
		struct uffdio_zeropage z = {
			.range = { .start = addr, .len = PG },
		};

		if (ioctl(uffd, UFFDIO_ZEROPAGE, &z) && errno != EEXIST) {
			note("UFFDIO_ZEROPAGE: %s", strerror(errno));
			goto fail;
		}
		cnt.zeropages++;
	}
	resident[p] = 1;
	fifo[(fifo_head + fifo_len) % npages] = p;
	fifo_len++;
	return 0;
fail:
	/* the memory node is gone: nothing more can be served, and no fault
	 * may wait forever */
	broken = 1;
	return poison(addr);
}

static void *handler(void *arg)
{
	(void)arg;
	while (!stop) {
		struct pollfd pfd = { .fd = uffd, .events = POLLIN };
		struct uffd_msg m;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(uffd, &m, sizeof(m)) != sizeof(m))
			continue;
		if (m.event != UFFD_EVENT_PAGEFAULT)
			continue;
		pthread_mutex_lock(&lk);
		if (serve(&m))
			note("serving %#llx failed: %s",
			     (unsigned long long)m.arg.pagefault.address,
			     strerror(errno));
		pthread_mutex_unlock(&lk);
	}
	return NULL;
}

static void snap(struct counts *c)
{
	pthread_mutex_lock(&lk);
	*c = cnt;
	pthread_mutex_unlock(&lk);
}

/* Check one phase's counts: fetches, zero pages and handler messages from
 * the device path (not the main thread) against what it must produce */
static void phase_check(const char *what, const struct counts *b,
			unsigned long fetch, unsigned long zero,
			unsigned long dev, double t0)
{
	struct counts a;

	snap(&a);
	result(a.fetches - b->fetches == fetch &&
	       a.zeropages - b->zeropages == zero &&
	       a.dev_msgs - b->dev_msgs == dev && a.dups == b->dups,
	       "%s: %lu fetches (RDMA READ), %lu zero pages, %lu faults from the device path, %lu evictions (RDMA WRITE) [want %lu, %lu, %lu], %.2f s",
	       what, a.fetches - b->fetches, a.zeropages - b->zeropages,
	       a.dev_msgs - b->dev_msgs, a.evictions - b->evictions,
	       fetch, zero, dev, now() - t0);
}

static int strategy = PLDMA_STRAT_ONE;
static unsigned int touch;
static unsigned long dev_faults;

/* A PLDMA transfer that must succeed; its device faults are counted */
static int xfer_ok(struct pldma_chan *ch, const char *what, uint8_t op,
		   void *dst, const void *src, size_t len, uint64_t pat)
{
	struct pldma_xfer x = {
		.opcode = op, .dst = dst, .src = src, .len = len,
		.pattern = pat, .strategy = strategy, .touch = touch,
	};
	struct pldma_result r;
	int ret = pldma_run(ch, &x, 60000, &r);

	dev_faults += r.faults;
	result(!ret && r.status == PLDMA_ST_SUCCESS && r.bytes == len,
	       "%s: PLDMA %s of %zu bytes: status %u, %llu bytes, %llu device faults, %.1f ms",
	       what, op == PLDMA_OP_FILL ? "FILL" : "COPY", len, r.status,
	       (unsigned long long)r.bytes, (unsigned long long)r.faults,
	       r.time_ns / 1e6);
	return ret || r.status != PLDMA_ST_SUCCESS;
}

static void fill_pages(size_t first, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n * PG; i++)
		region[first * PG + i] = pu_byte(seed, first * PG + i);
}

/*
 * Phase 7: a thread writes words of pages [0, W) once each, 0.5 ms apart,
 * while the main thread reads WREADS pages of [W, 2H) in turn, each a
 * fault whose eviction may take one of the writer's pages under it; the
 * writer stops when the reads are done.  Every word written must hold
 * what was written: a write landing between an eviction's copy and its
 * MADV_DONTNEED would be lost without the write protection (-W leaves it
 * out, and then writes are lost).
 */
#define WPAGES	8
#define WWORDS	4096	/* at most: 512 in each page */
#define WREADS	64
#define WMARK	0xed00000000000000ULL

static volatile int reads_done;
static unsigned long written;

/* the word of write k */
static volatile uint64_t *wword(unsigned long k)
{
	return (volatile uint64_t *)(region + (k % WPAGES) * PG) + k / WPAGES;
}

static void *writer(void *arg)
{
	unsigned long k;

	(void)arg;
	for (k = 0; k < WWORDS && !reads_done; k++) {
		*wword(k) = WMARK | k;
		usleep(500);
	}
	written = k;
	return NULL;
}

static void writer_phase(unsigned long H)
{
	unsigned long k, lost = 0, p = WPAGES, r;
	struct counts b, a;
	pthread_t w;
	double t0 = now();

	if (2 * H < WPAGES + threshold + 2)
		return;
	snap(&b);
	reads_done = 0;
	pthread_create(&w, NULL, writer, NULL);
	for (r = 0; r < WREADS; r++) {
		(void)*(volatile uint8_t *)(region + p * PG + 8);
		if (++p == 2 * H)
			p = WPAGES;
	}
	reads_done = 1;
	pthread_join(w, NULL);
	flush_all();
	for (k = 0; k < written; k++)
		if (*wword(k) != (WMARK | k))
			lost++;
	flush_all();
	snap(&a);
	result(!lost && written, "a writer thread beside the evictions: %lu words written, %lu lost; %lu evictions, %lu fetches, %lu writes held by an eviction's write protection (WP faults), %.2f s%s",
	       written, lost, a.evictions - b.evictions, a.fetches - b.fetches,
	       a.wp_faults - b.wp_faults, now() - t0,
	       use_wp ? "" : " (-W: no write protection)");
}

static int fault_fn(struct pldma_chan *ch, const struct pldma_fault *f,
		    void *arg)
{
	return pldma_fault_populate(ch, f, arg);
}

static int client(const char *host, int port, unsigned long pages,
		  unsigned int rounds, int stall_check)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_POISON,
	};
	struct uffdio_register reg = { 0 };
	struct wire self = { 0 };
	struct counts c0;
	struct pldma_chan *ch;
	pthread_t th;
	unsigned long H = pages / 2, fillp = pages - H, r, p;
	uint8_t *local;
	char line[256], sname[32];
	double t0, tstart = now();
	long bad;
	int fd, user_thread = 0;
	uint64_t fpat = 0x5a5a0000a5a5ffffULL;

	if (pages < 4 || pages > MAX_PAGES || threshold < 2) {
		note("PAGES must be 4..%d, THRESHOLD at least 2", MAX_PAGES);
		return 2;
	}
	main_tid = gettid();
	ch = pldma_open_mode(PLDMA_MODE_REPORT);
	if (!ch) {
		note("no PLDMA device in report mode");
		return 1;
	}
	if (!pldma_supports(ch, strategy)) {
		note("the PLDMA cannot run strategy %s",
		     pldma_strategy_name(strategy, touch, sname, sizeof(sname)));
		return 1;
	}
	if (dev_open())
		return 1;
	fd = connect_to(host, port);
	if (fd < 0) {
		note("cannot reach the memory node at %s:%d", host, port);
		return 1;
	}
	if (qp_create(&self))
		return 1;
	wire_fmt(line, sizeof(line), "EDM", &self);
	if (sendf(fd, "%s", line) || recv_line(fd, line, sizeof(line)) ||
	    wire_parse(line, "MEM", &mem) || qp_connect(&self, &mem)) {
		note("connecting to the memory node failed: %s", line);
		return 1;
	}
	store_pages = mem.pages < pages ? mem.pages : pages;
	result(store_pages == pages, "connected to the memory node: RC QP %u <-> %u on %s, its store %llu pages (we use %lu)",
	       self.qpn, mem.qpn, devname, (unsigned long long)mem.pages, pages);
	if (store_pages != pages)
		return 1;

	/* the region: PAGES pages at the memory node, + 1 that is not */
	npages = pages + 1;
	region = mmap(NULL, npages * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	resident = calloc(npages, 1);
	remote = calloc(npages, 1);
	fifo = calloc(npages, sizeof(*fifo));
	stage = aligned_alloc(PG, PG);
	local = pu_dst_alloc(H * PG, -1);
	if (region == MAP_FAILED || !resident || !remote || !fifo || !stage ||
	    !local)
		return 1;
	memset(stage, 0, PG);
	memset(local, 0, H * PG);
	stage_mr = ibv_reg_mr(pd, stage, PG, IBV_ACCESS_LOCAL_WRITE);
	if (!stage_mr) {
		note("ibv_reg_mr of the staging page: %s", strerror(errno));
		return 1;
	}
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		note("userfaultfd with THREAD_ID and POISON: %s", strerror(errno));
		return 1;
	}
	reg.range.start = (uintptr_t)region;
	reg.range.len = npages * PG;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING |
		   (use_wp ? UFFDIO_REGISTER_MODE_WP : 0);
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		note("UFFDIO_REGISTER: %s", strerror(errno));
		return 1;
	}
	pthread_create(&th, NULL, handler, NULL);
	if (strategy == PLDMA_STRAT_USER) {
		if (pldma_fault_thread_start(ch, fault_fn, NULL)) {
			note("libpldma's fault thread did not start");
			return 1;
		}
		user_thread = 1;
	}
	note("region of %lu pages (+1 beyond the store), threshold %u resident pages, %u rounds, PLDMA strategy %s",
	     pages, threshold, rounds,
	     pldma_strategy_name(strategy, touch, sname, sizeof(sname)));

	/* 1. first touch */
	snap(&c0);
	t0 = now();
	fill_pages(0, H, 1);
	flush_all();
	phase_check("first touch of pages 0..H-1 by the CPU", &c0, 0, H, 0, t0);

	/* 2. rounds: check, rewrite, evict, refetch */
	for (r = 1; r <= rounds; r++) {
		snap(&c0);
		t0 = now();
		/* page by page: one fault each, the rewrite finds it resident */
		bad = -1;
		for (p = 0; p < H; p++) {
			long b = check_pages(region + p * PG, p, 1, r);

			if (b >= 0 && bad < 0)
				bad = p * PG + b;
			fill_pages(p, 1, r + 1);
		}
		flush_all();
		snprintf(line, sizeof(line), "round %lu: pattern %lu refetched and compared, %lu written", r, r, r + 1);
		result(bad < 0, "%s%s", line, bad < 0 ? "" : " (a byte differs)");
		if (bad >= 0)
			note("first difference at offset %ld", bad);
		phase_check(line, &c0, H, 0, 0, t0);
	}

	/* 3. PLDMA COPY out of the region */
	snap(&c0);
	t0 = now();
	if (!xfer_ok(ch, "region -> local", PLDMA_OP_COPY, local, region,
		     H * PG, 0)) {
		bad = check_pages(local, 0, H, rounds + 1);
		result(bad < 0, "region -> local: the copy holds pattern %u, byte for byte",
		       rounds + 1);
	}
	flush_all();
	phase_check("PLDMA COPY region -> local", &c0, H, 0, H, t0);

	/* 4. PLDMA FILL into never-touched pages, then read back */
	snap(&c0);
	t0 = now();
	xfer_ok(ch, "fill of pages H..", PLDMA_OP_FILL, region + H * PG, NULL,
		fillp * PG, fpat);
	flush_all();
	phase_check("PLDMA FILL of never-touched pages", &c0, 0, fillp, fillp, t0);
	snap(&c0);
	t0 = now();
	{
		const uint64_t *q = (const uint64_t *)(region + H * PG);
		size_t i, n = fillp * PG / 8;

		for (i = 0; i < n && q[i] == fpat; i++)
			;
		result(i == n, "the FILL, evicted and refetched, reads back (%zu of %zu words)",
		       i, n);
	}
	flush_all();
	phase_check("CPU reads the FILL back", &c0, fillp, 0, 0, t0);

	/* 5. PLDMA COPY inside the region, then the CPU checks all of it */
	snap(&c0);
	t0 = now();
	xfer_ok(ch, "region 0..H-1 -> H..2H-1", PLDMA_OP_COPY,
		region + H * PG, region, H * PG, 0);
	flush_all();
	phase_check("PLDMA COPY inside the region", &c0, 2 * H, 0, 2 * H, t0);
	snap(&c0);
	t0 = now();
	{
		long b1 = check_pages(region, 0, H, rounds + 1);
		long b2 = check_pages(region + H * PG, 0, H, rounds + 1);

		result(b1 < 0 && b2 < 0, "the copy inside the region, evicted and refetched, equals its source byte for byte");
	}
	flush_all();
	phase_check("CPU checks the region", &c0, 2 * H, 0, 0, t0);

	/* the memory node holds what the region holds: pages [0, H) and
	 * their copy in [H, 2H) */
	if (sendf(fd, "CHECK %u 0 %lu 0", rounds + 1, H) ||
	    recv_line(fd, line, sizeof(line)))
		line[0] = 0;
	result(!strcmp(line, "OK"), "the memory node's pages 0..H-1 hold the region's last contents (%s)", line);
	if (sendf(fd, "CHECK %u %lu %lu 0", rounds + 1, H, H) ||
	    recv_line(fd, line, sizeof(line)))
		line[0] = 0;
	result(!strcmp(line, "OK"), "the memory node's pages H..2H-1 hold the PLDMA's copy (%s)", line);

	/* 6. a page the memory node does not have: poisoned, the DMA fails */
	{
		struct pldma_xfer x = {
			.opcode = PLDMA_OP_COPY, .dst = local,
			.src = region + pages * PG, .len = PG,
			.strategy = strategy, .touch = touch,
		};
		struct pldma_result res;
		unsigned long p0 = cnt.poisoned;
		int ret;

		t0 = now();
		ret = pldma_run(ch, &x, 10000, &res);
		dev_faults += res.faults;
		result(ret != -ETIMEDOUT && res.status != PLDMA_ST_SUCCESS &&
		       cnt.poisoned == p0 + 1,
		       "a page beyond the memory node's store: poisoned (%lu), the PLDMA COPY ends with an error (ret %d, status %u, fault VA %s) in %.2f s",
		       cnt.poisoned - p0, ret, res.status,
		       res.fault_va == (uintptr_t)region + pages * PG ?
		       "that page" : "another", now() - t0);
	}

	/* -S: stall mode cannot wait for a userfaultfd */
	if (stall_check) {
		struct pldma_chan *sch = pldma_open_mode(PLDMA_MODE_STALL);
		struct pldma_xfer x = {
			.opcode = PLDMA_OP_COPY, .dst = local, .src = region,
			.len = PG, .strategy = PLDMA_STRAT_STALL,
		};
		struct pldma_result res;
		struct counts b;
		int ret;

		if (!sch) {
			result(0, "stall mode: no stall-mode PLDMA");
		} else {
			snap(&b);
			t0 = now();
			ret = pldma_run(sch, &x, 10000, &res);
			snap(&c0);
			result(ret != -ETIMEDOUT && res.status != PLDMA_ST_SUCCESS &&
			       c0.msgs == b.msgs,
			       "stall mode: a COPY from a missing page ends with an error (ret %d, status %u) in %.2f s, and the handler got no fault (%lu): IOPF faults without FAULT_FLAG_ALLOW_RETRY, userfaultfd answers SIGBUS",
			       ret, res.status, now() - t0, c0.msgs - b.msgs);
			pldma_close(sch);
		}
	}

	/* the totals of phases 1-6, whose counts are exact */
	note("totals: fetches=%lu evictions=%lu zeropages=%lu poisoned=%lu devfaults=%lu handler_msgs=%lu from_device_path=%lu dups=%lu time=%.1f",
	     cnt.fetches, cnt.evictions, cnt.zeropages, cnt.poisoned,
	     dev_faults, cnt.msgs, cnt.dev_msgs, cnt.dups, now() - tstart);
	printf("# edm totals: pages=%lu threshold=%u rounds=%u strategy=%s fetches=%lu evictions=%lu zeropages=%lu poisoned=%lu devfaults=%lu\n",
	       pages, threshold, rounds, sname, cnt.fetches, cnt.evictions,
	       cnt.zeropages, cnt.poisoned, dev_faults);

	/* 7. a writer thread beside the evictions */
	writer_phase(H);

	stop = 1;
	pthread_join(th, NULL);
	if (user_thread)
		pldma_fault_thread_stop(ch);

	close(fd);

	pldma_close(ch);
	return fails ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: pldma-edm [-d DEV] memnode PORT PAGES\n"
		"       pldma-edm [-d DEV] [-s STRATEGY] [-t THRESHOLD] [-r ROUNDS] [-S] [-W] client HOST PORT PAGES\n"
		"       pldma-edm quit HOST PORT\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned int rounds = 3;
	int opt, stall_check = 0;

	tap_tag = "edm: ";
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "d:s:t:r:SW")) != -1) {
		switch (opt) {
		case 'd':
			devname = optarg;
			break;
		case 's':
			if (pldma_strategy_parse(optarg, &strategy, &touch) ||
			    strategy == PLDMA_STRAT_PIN ||
			    strategy == PLDMA_STRAT_STALL) {
				fprintf(stderr, "strategy %s: one, touchN, batchN or user (the faults must reach the userfaultfd)\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			threshold = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'S':
			stall_check = 1;
			break;
		case 'W':
			use_wp = 0;
			break;
		default:
			return usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 3 && !strcmp(argv[0], "memnode"))
		return memnode(atoi(argv[1]), strtoul(argv[2], NULL, 0));
	if (argc == 4 && !strcmp(argv[0], "client")) {
		int ret = client(argv[1], atoi(argv[2]),
				 strtoul(argv[3], NULL, 0), rounds,
				 stall_check);

		if (ret && !fails)
			result(0, "client: the setup failed (see above)");
		return ret;
	}
	if (argc == 3 && !strcmp(argv[0], "quit")) {
		char line[64];
		int fd = connect_to(argv[1], atoi(argv[2]));

		if (fd < 0 || sendf(fd, "QUIT") || recv_line(fd, line, sizeof(line)))
			return 1;
		return strcmp(line, "OK") != 0;
	}
	return usage();
}
