// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-demo: one DMA copy per fault strategy, each over freshly mmap()ed,
 * never-touched source and destination buffers, verified byte for byte.
 * Then one copy from an unmapped address per strategy, which must end with
 * an error completion within a second.
 *
 * usage: pldma-demo [-d /dev/pldmaN] [size]     (default 1 MiB)
 *        pldma-demo -r HOST:PORT:LNODE:RNODE [size]
 *        pldma-demo -S PORT
 * -d: every transfer on that device (its fault mode decides which
 * strategies run); without it, the first device of the mode each needs.
 * -r: remote DMA instead: RDMA WRITE and READ from the local device of
 * node LNODE into never-touched windows of another guest's node RNODE,
 * whose window server (pldma-demo -S PORT) is at HOST:PORT; every page is
 * a responder fault, served one by one or with Touch-Ahead(16); data
 * verified, with the responder's faults and the requester's RNR NAKs,
 * resumes and resent segments.
 * Exit status: 0 when every available strategy verified its data, 1 when a
 * byte differed or a transfer failed, 2 when no PLDMA device works.
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

static const struct {
	int strategy;
	unsigned int touch;
} strategies[] = {
	{ PLDMA_STRAT_PIN, 0 },
	{ PLDMA_STRAT_PREFAULT, 0 },
	{ PLDMA_STRAT_STALL, 0 },
	{ PLDMA_STRAT_ONE, 0 },
	{ PLDMA_STRAT_TOUCH, 16 },
	{ PLDMA_STRAT_USER, 0 },
};

static const char *status_name(uint32_t st)
{
	static const char *const n[] = {
		"PENDING", "SUCCESS", "ABORTED", "CANCELLED", "BAD_OPCODE",
		"BAD_LENGTH", "BAD_QP", "BAD_DESC", "OVERLAP", "DMA_ERROR",
		"FAULT", "REMOTE_ACCESS", "REMOTE_TIMEOUT", "REMOTE_RNR",
		"REMOTE_ERROR", "REMOTE_INVALID",
	};

	return st < sizeof(n) / sizeof(n[0]) ? n[st] : "?";
}

/* -r: WRITE and READ against another guest's untouched windows */
static int remote_demo(const char *spec, size_t size)
{
	static const char *const rstrats[] = { "one", "touch16" };
	unsigned int lnode, rnode, i, op;
	struct pldma_chan *ch;
	char host[64];
	int port, fd, failed = 0;

	if (sscanf(spec, "%63[^:]:%d:%u:%u", host, &port, &lnode, &rnode) != 4) {
		fprintf(stderr, "usage: pldma-demo -r HOST:PORT:LNODE:RNODE [size]\n");
		return 2;
	}
	ch = pp_chan_node(lnode);
	if (!ch) {
		printf("no PLDMA device with node-id %u\n", lnode);
		return 2;
	}
	fd = pp_connect(host, port);
	if (fd < 0) {
		printf("no window server at %s:%d\n", host, port);
		return 2;
	}
	/* an RC connection: the channel's RDMA goes to the peer's QP */
	if (pp_qp_connect(fd, ch, rnode)) {
		printf("no QP connection to node %u\n", rnode);
		close(fd);
		return 2;
	}
	printf("PLDMA remote demo: node %u -> node %u (%s), %zu KiB, MTU %u\n"
	       "never-touched windows on the responder, resident buffers on the requester\n",
	       lnode, rnode, host, size >> 10, pldma_info(ch)->mtu);
	printf("%-5s %-9s %10s %7s %6s %5s %7s %8s %5s  %s\n", "op",
	       "responder", "time(us)", "rfaults", "rpages", "RNR", "resumes",
	       "resent", "tmo", "result");
	for (op = 0; op < 2; op++) {
		for (i = 0; i < 2; i++) {
			struct pldma_net_stats n0, n1;
			struct pp_stats s0, s1;
			struct pldma_result r;
			uint8_t *buf;
			uint32_t rkey, seed = 0x40 + op * 2 + i;
			uint64_t rva;
			long bad = -1;
			int ret;

			/*
			 * WRITE: a memfd source; READ: a zeroed destination;
			 * both resident, so that the faults are the responder's
			 */
			buf = op ? pu_dst_alloc(size, -1) : pu_src_alloc(size, seed);
			if (buf && op)
				memset(buf, 0, size);
			else if (buf)
				pu_verify(buf, size, seed);
			if (!buf || pp_reg_remote(fd, rnode, size, op ? "R" : "W",
						  seed, rstrats[i], &rkey, &rva) ||
			    pldma_net_stats(ch, &n0) || pp_stats(fd, rnode, &s0)) {
				printf("%-5s %-9s setup FAILED\n", op ? "READ" : "WRITE",
				       rstrats[i]);
				failed++;
				continue;
			}
			if (op)
				ret = pldma_rdma_read(ch, rkey, rva, buf, size,
						      PLDMA_STRAT_ONE, 0, &r);
			else
				ret = pldma_rdma_write(ch, rkey, rva, buf, size,
						       PLDMA_STRAT_ONE, 0, &r);
			pldma_net_stats(ch, &n1);
			pp_stats(fd, rnode, &s1);
			if (!ret && r.status == PLDMA_ST_SUCCESS) {
				if (op)
					bad = pu_verify(buf, size, seed);
				else
					bad = pp_ok(pp_rpc(fd, "CHECK %u 0 %zu %u",
							   rkey, size, seed)) ? -1 : 0;
			}
#define D(f) (n1.cnt[f] - n0.cnt[f])
			if (ret || r.status != PLDMA_ST_SUCCESS) {
				printf("%-5s %-9s transfer FAILED: %s, status %s\n",
				       op ? "READ" : "WRITE", rstrats[i],
				       ret ? strerror(-ret) : "ok",
				       status_name(r.status));
				failed++;
			} else {
				printf("%-5s %-9s %10.1f %7llu %6llu %5u %7u %8u %5u  %s\n",
				       op ? "READ" : "WRITE", rstrats[i],
				       r.time_ns / 1000.0,
				       s1.dev_faults - s0.dev_faults,
				       s1.pages - s0.pages,
				       D(PLDMA_NCNT_NAK_RX_RNR),
				       D(PLDMA_NCNT_RESUME_RX),
				       D(PLDMA_NCNT_RETX_SEGS),
				       D(PLDMA_NCNT_TIMEOUTS),
				       bad < 0 ? "data verified" : "DATA DIFFERS");
				if (bad >= 0)
					failed++;
			}
#undef D
			pp_rpc(fd, "FREE %u", rkey);
			pu_free(buf, size);
		}
	}
	printf("  rfaults: responder faults (RNR NAKs sent); rpages: pages its driver made present;\n"
	       "  RNR, resumes: RNR NAKs and \"resolved, resend now\" the requester got; resent: segments\n"
	       "  sent again from the faulting one (Go-back-N); tmo: retransmit timeouts\n");
	close(fd);
	pp_chan_forget(lnode);
	printf("%s\n", failed ? "remote demo FAILED" :
	       "remote WRITE and READ: data verified");
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int failed = 0, ran = 0;
	unsigned int i;
	size_t size;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "-S"))
		return pp_serve(atoi(argv[2]), 1);
	if (argc > 2 && !strcmp(argv[1], "-r"))
		return remote_demo(argv[2], argc > 3 ?
				   strtoul(argv[3], NULL, 0) : 1 << 20);
	if (argc > 2 && !strcmp(argv[1], "-d")) {
		dev = argv[2];
		argc -= 2;
		argv += 2;
	}
	size = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	pu_use_device(dev);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("PLDMA demo: copy %zu KiB, fresh untouched buffers per strategy%s%s\n",
	       size >> 10, dev ? ", all on " : "", dev ? dev : "");
	printf("%-10s %-7s %8s %8s %10s  %s\n", "strategy", "device", "faults",
	       "pages", "time(us)", "result");
	for (i = 0; i < sizeof(strategies) / sizeof(strategies[0]); i++) {
		int s = strategies[i].strategy;
		struct pldma_chan *ch = pu_chan_for(s);
		struct pldma_result r;
		uint8_t *src, *dst;
		char name[32];
		long bad;
		int ret;

		pldma_chan_strategy_name(ch, s, strategies[i].touch, name,
					 sizeof(name));
		if (!ch) {
			printf("%-10s (no device in %s mode: skipped)\n", name,
			       s == PLDMA_STRAT_STALL ? "stall" : "report");
			continue;
		}
		src = pu_src_alloc(size, i);
		dst = pu_dst_alloc(size, -1);
		if (!src || !dst) {
			printf("%-10s cannot allocate buffers\n", name);
			return 2;
		}
		ret = pldma_copy(ch, dst, src, size, s, strategies[i].touch,
				 &r);
		ran++;
		if (ret || r.status != PLDMA_ST_SUCCESS) {
			printf("%-10s %-7s transfer FAILED: %s, status %s\n",
			       name, pldma_mode_name(ch),
			       ret ? strerror(-ret) : "ok",
			       status_name(r.status));
			failed++;
			continue;
		}
		bad = pu_verify(dst, size, i);
		printf("%-10s %-7s %8llu %8llu %10.1f  %s\n", name,
		       pldma_mode_name(ch), (unsigned long long)r.faults,
		       (unsigned long long)r.pages, r.time_ns / 1000.0,
		       bad < 0 ? "data verified" : "DATA DIFFERS");
		if (bad >= 0) {
			printf("    first difference at byte %ld\n", bad);
			failed++;
		}
		pu_free(src, size);
		pu_free(dst, size);
	}

	printf("\nunmapped source address (must fail within 1 s):\n");
	for (i = 0; i < sizeof(strategies) / sizeof(strategies[0]); i++) {
		int s = strategies[i].strategy;
		struct pldma_chan *ch = pu_chan_for(s);
		struct pldma_result r;
		uint8_t *hole, *dst;
		char name[32];
		int ret;

		if (!ch)
			continue;
		pldma_chan_strategy_name(ch, s, strategies[i].touch, name,
					 sizeof(name));
		dst = pu_dst_alloc(65536, -1);
		hole = mmap(NULL, 65536, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		munmap(hole, 65536);
		ret = pldma_copy(ch, dst, hole, 65536, s, strategies[i].touch,
				 &r);
		printf("%-10s %s, status %s, fault VA %#llx, %.1f us%s\n", name,
		       ret ? strerror(-ret) : "completed",
		       status_name(r.status), (unsigned long long)r.fault_va,
		       r.time_ns / 1000.0,
		       (!ret && r.status != PLDMA_ST_ABORTED &&
			r.status != PLDMA_ST_CANCELLED &&
			r.status != PLDMA_ST_FAULT) ||
		       r.time_ns > 1000000000ull ? "  <-- WRONG" : "");
		if ((!ret && r.status != PLDMA_ST_ABORTED &&
		     r.status != PLDMA_ST_CANCELLED &&
		     r.status != PLDMA_ST_FAULT) || r.time_ns > 1000000000ull)
			failed++;
		pu_free(dst, 65536);
	}
	pu_chan_close_all();
	if (!ran) {
		printf("no PLDMA device found\n");
		return 2;
	}
	printf("%s\n", failed ? "demo FAILED" : "all strategies: data verified");
	return failed ? 1 : 0;
}
