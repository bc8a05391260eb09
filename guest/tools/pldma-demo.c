// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-demo: one DMA copy per fault strategy, each over freshly mmap()ed,
 * never-touched source and destination buffers, verified byte for byte.
 * Then one copy from an unmapped address per strategy, which must end with
 * an error completion within a second.
 *
 * usage: pldma-demo [-d /dev/pldmaN] [size]     (default 1 MiB)
 * -d: every transfer on that device (its fault mode decides which
 * strategies run); without it, the first device of the mode each needs.
 * Exit status: 0 when every available strategy verified its data, 1 when a
 * byte differed or a transfer failed, 2 when no PLDMA device works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pldma.h"
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
		"BAD_LENGTH", "BAD_NODE", "BAD_DESC", "OVERLAP", "DMA_ERROR",
		"FAULT",
	};

	return st < sizeof(n) / sizeof(n[0]) ? n[st] : "?";
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int failed = 0, ran = 0;
	unsigned int i;
	size_t size;

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

		pldma_strategy_name(s, strategies[i].touch, name, sizeof(name));
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
			       name, pldma_fault_mode(ch) == PLDMA_MODE_STALL ?
			       "stall" : "report", ret ? strerror(-ret) : "ok",
			       status_name(r.status));
			failed++;
			continue;
		}
		bad = pu_verify(dst, size, i);
		printf("%-10s %-7s %8llu %8llu %10.1f  %s\n", name,
		       pldma_fault_mode(ch) == PLDMA_MODE_STALL ? "stall" :
		       "report", (unsigned long long)r.faults,
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
		pldma_strategy_name(s, strategies[i].touch, name, sizeof(name));
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
