// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-bench: time DMA copies per fault strategy and size over untouched
 * buffers (MADV_DONTNEED on source and destination before every run).
 *
 * usage: pldma-bench [-i ITERS] [-s SIZE[,SIZE...]] [-t STRAT[,STRAT...]]
 *                    [-H 0|1] [-k] [-L] [-E SETS [-R]]
 *
 * Options for the study (scripts/study):
 *   -H 1|0   destination madvise(MADV_HUGEPAGE) / MADV_NOHUGEPAGE
 *            (default: neither, the system's THP setting decides)
 *   -k       keep going: a failed transfer prints "# FAIL ..." and ends
 *            only its case (default: exit 1)
 *   -L       drop CAP_IPC_LOCK first, so that RLIMIT_MEMLOCK (ulimit -l)
 *            applies to pin even for root
 *   -E SETS  eviction: SETS working sets (source + destination of each
 *            size) kept mapped, copied round robin ITERS times without
 *            MADV_DONTNEED, so that what memory pressure evicted between
 *            two transfers faults again; rows
 *            "evict,strategy,size,round,set,time_us,faults,pages,swapins"
 *            (swapins: /proc/vmstat pswpin during the transfer)
 *   -R       with -E: mlock() every working set first, as a memory
 *            registration pins it, and fail if that fails
 *
 * Strategy "warm" (not in the default list): the stall strategy over
 * buffers already faulted in by one untimed copy and never dropped, so
 * that time_us is the device's transfer alone plus submission and
 * completion (the sanity check of the timing model, docs/study.md).
 *
 * stdout: CSV "strategy,size,time_us,faults,pages", one row per run, then
 * "# " comment lines with the median and minimum per case and the ratios of
 * interest, computed on the minimum (best of ITERS: on a loaded TCG host
 * the median mostly measures how often the vCPUs were descheduled), with
 * the ratio of the medians alongside (scripts/plot-bench turns the CSV into
 * PNGs).  time_us covers everything
 * the strategy costs: madvise(MADV_POPULATE_*) for prefault, pin + transfer
 * + unpin for pin, fault service for the demand-paged ones.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-util.h"

#define MAX_CASES 64
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

static void ratio(const char *what, const char *a, const char *b,
		  size_t size, double goal)
{
	struct bcase *x = find(a, size), *y = find(b, size);

	if (!x || !y) {
		printf("# ratio %s: n/a (%s or %s not run)\n", what, a, b);
		return;
	}
	printf("# ratio %s = %.3f (best of %d: %.1f us / %.1f us; medians %.3f; goal <= %.2f: %s)\n",
	       what, x->min / y->min, x->n, x->min, y->min, x->med / y->med,
	       goal, x->min / y->min <= goal ? "met" : "NOT met");
}

/* The fastest demand-paged strategy against prefault */
static void best_demand(size_t size)
{
	struct bcase *b = NULL, *p = find("prefault", size);
	int i;

	for (i = 0; i < ncases; i++) {
		struct bcase *c = &cases[i];

		/* "warm" faults nothing: it is no demand-paged strategy */
		if (c->size != size || !c->n ||
		    c->strategy < PLDMA_STRAT_STALL || !strcmp(c->name, "warm"))
			continue;
		if (!b || c->min < b->min)
			b = c;
	}
	if (!b || !p)
		return;
	printf("# ratio best demand-paged (%s)/prefaulted 4MiB = %.3f (best of %d; goal <= 1.25: %s)\n",
	       b->name, b->min / p->min, b->n,
	       b->min / p->min <= 1.25 ? "met" : "NOT met");
}

/* ---- study options (-k, -L, -E, -R) ---- */

static int keep_going;

static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].inheritable &= ~(1U << (CAP_IPC_LOCK % 32));
	return syscall(SYS_capset, &h, d);
}

static long vmstat(const char *key)
{
	char line[128];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ' ') {
			v = atol(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

/* One transfer's failure, as a "# FAIL" line; 1 if it should end the run */
static int report_fail(const char *name, size_t size, int ret,
		       const struct pldma_result *r, long bad)
{
	if (ret || r->status != PLDMA_ST_SUCCESS)
		printf("# FAIL %s %zu B: ret %d (%s), status %u\n", name, size,
		       ret, ret ? strerror(-ret) : "ok", r->status);
	else
		printf("# FAIL %s %zu B: data differs at offset %ld\n", name,
		       size, bad);
	fprintf(stderr, "%s %zu: failed (%d/%u)\n", name, size, ret,
		r->status);
	return !keep_going;
}

/* -E: nsets working sets of size, rounds round-robin passes, no drop */
static int run_evict(struct pldma_chan *ch, int strategy, unsigned int touch,
		     size_t size, int nsets, int rounds, int thp, int reg)
{
	uint8_t **src = calloc(nsets, sizeof(*src));
	uint8_t **dst = calloc(nsets, sizeof(*dst));
	char name[24];
	int s, r, rc = 0;

	pldma_chan_strategy_name(ch, strategy, touch, name, sizeof(name));
	for (s = 0; s < nsets; s++) {
		src[s] = pu_src_alloc(size, s + 1);
		dst[s] = pu_dst_alloc(size, thp);
		if (!src[s] || !dst[s]) {
			printf("# FAIL %s %zu B: cannot allocate working set %d\n",
			       name, size, s);
			return 1;
		}
	}
	for (s = 0; reg && s < nsets; s++) {
		if (mlock(src[s], size) || mlock(dst[s], size)) {
			printf("# FAIL register %s %zu B: mlock of working set %d of %d: %s (%zu MiB locked of %zu MiB)\n",
			       name, size, s + 1, nsets, strerror(errno),
			       (2 * size * s) >> 20, (2 * size * nsets) >> 20);
			return 1;
		}
		printf("# registered working set %d of %d (%zu MiB locked)\n",
		       s + 1, nsets, (2 * size * (s + 1)) >> 20);
	}
	for (r = 0; r < rounds && !rc; r++) {
		for (s = 0; s < nsets; s++) {
			struct pldma_result res;
			long sw0 = vmstat("pswpin"), bad = -1;
			int ret;

			ret = pldma_copy(ch, dst[s], src[s], size, strategy,
					 touch, &res);
			if (!ret && res.status == PLDMA_ST_SUCCESS)
				bad = pu_verify(dst[s], size, s + 1);
			if (ret || res.status != PLDMA_ST_SUCCESS || bad >= 0) {
				rc = 1;
				if (report_fail(name, size, ret, &res, bad))
					return 1;
				break;
			}
			printf("evict,%s,%zu,%d,%d,%.1f,%llu,%llu,%ld\n", name,
			       size, r, s, res.time_ns / 1000.0,
			       (unsigned long long)res.faults,
			       (unsigned long long)res.pages,
			       vmstat("pswpin") - sw0);
		}
	}
	for (s = 0; s < nsets; s++) {
		pu_free(src[s], size);
		pu_free(dst[s], size);
	}
	free(src);
	free(dst);
	return rc && !keep_going;
}

int main(int argc, char **argv)
{
	const char *sizes = "4K,64K,1M,4M";
	const char *strats = "pin,prefault,stall,one,touch16,touch64,touch256,batch16,batch64,user";
	int iters = 5, opt, i, j, k;
	char *list, *tok, *save;
	size_t size_v[16];
	int nsizes = 0;
	int thp = -1, evict = 0, reg = 0;

	while ((opt = getopt(argc, argv, "i:s:t:H:kLE:R")) != -1) {
		switch (opt) {
		case 'H':
			thp = atoi(optarg) ? 1 : 0;
			break;
		case 'k':
			keep_going = 1;
			break;
		case 'L':
			if (drop_ipc_lock()) {
				perror("capset (dropping CAP_IPC_LOCK)");
				return 2;
			}
			break;
		case 'E':
			evict = atoi(optarg);
			break;
		case 'R':
			reg = 1;
			break;
		case 'i':
			iters = atoi(optarg);
			break;
		case 's':
			sizes = optarg;
			break;
		case 't':
			strats = optarg;
			break;
		default:
			fprintf(stderr, "usage: pldma-bench [-i ITERS] [-s SIZES] [-t STRATEGIES] [-H 0|1] [-k] [-L] [-E SETS [-R]]\n");
			return 2;
		}
	}
	if (iters < 1 || iters > MAX_ITERS)
		return 2;
	list = strdup(sizes);
	for (tok = strtok_r(list, ",", &save); tok && nsizes < 16;
	     tok = strtok_r(NULL, ",", &save))
		size_v[nsizes++] = pu_parse_size(tok);
	free(list);

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("strategy,size,time_us,faults,pages\n");
	list = strdup(strats);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int strategy, warm = !strcmp(tok, "warm");
		unsigned int touch;
		struct pldma_chan *ch;

		if (warm) {
			strategy = PLDMA_STRAT_STALL;
			touch = 0;
		} else if (pldma_strategy_parse(tok, &strategy, &touch)) {
			fprintf(stderr, "unknown strategy %s\n", tok);
			return 2;
		}
		ch = pu_chan_for(strategy);
		if (!ch) {
			printf("# %s: no device for it, skipped\n", tok);
			continue;
		}
		for (k = 0; evict > 0 && k < nsizes; k++)
			if (run_evict(ch, strategy, touch, size_v[k], evict,
				      iters, thp, reg))
				return 1;
		for (k = 0; !evict && k < nsizes && ncases < MAX_CASES; k++) {
			struct bcase *c = &cases[ncases++];
			size_t size = size_v[k];
			uint8_t *src = pu_src_alloc(size, k);
			uint8_t *dst = pu_dst_alloc(size, thp);

			if (!src || !dst) {
				fprintf(stderr, "cannot allocate %zu\n", size);
				return 2;
			}
			pldma_chan_strategy_name(ch, strategy, touch, c->name,
						 sizeof(c->name));
			if (warm) {
				struct pldma_result r;

				snprintf(c->name, sizeof(c->name), "warm");
				if (pldma_copy(ch, dst, src, size, strategy,
					       touch, &r) ||
				    r.status != PLDMA_ST_SUCCESS) {
					printf("# FAIL warm-up %zu B\n", size);
					return 1;
				}
			}
			c->strategy = strategy;
			c->touch = touch;
			c->size = size;
			for (i = 0; i < iters; i++) {
				struct pldma_result r;
				long bad = -1;
				int ret;

				if (!warm) {
					pu_drop(src, size);
					pu_drop(dst, size);
				}
				ret = pldma_copy(ch, dst, src, size, strategy,
						 touch, &r);
				if (!ret && r.status == PLDMA_ST_SUCCESS)
					bad = pu_verify(dst, size, k);
				if (ret || r.status != PLDMA_ST_SUCCESS ||
				    bad >= 0) {
					if (report_fail(c->name, size, ret, &r,
							bad))
						return 1;
					break;
				}
				printf("%s,%zu,%.3f,%llu,%llu\n", c->name, size,
				       r.time_ns / 1000.0,
				       (unsigned long long)r.faults,
				       (unsigned long long)r.pages);
				c->t[c->n++] = r.time_ns / 1000.0;
				c->faults += r.faults;
			}
			pu_free(src, size);
			pu_free(dst, size);
		}
	}
	free(list);

	for (j = 0; j < ncases; j++) {
		struct bcase *c = &cases[j];

		if (!c->n)
			continue;
		pu_med_min(c->t, c->n, &c->med, &c->min);
		printf("# %-9s %9zu B: median %10.1f us, min %10.1f us, %8.1f faults\n",
		       c->name, c->size, c->med, c->min, c->faults / c->n);
	}
	ratio("touch16/one 4MiB untouched", "touch16", "one", 4 << 20, 0.33);
	ratio("batch16/one 4MiB untouched", "batch16", "one", 4 << 20, 0.33);
	/* the stall strategy is "pri" on pldma-pci's fault-mode=pri */
	if (find("pri", 4 << 20)) {
		ratio("pri/pin(+transfer+unpin) 4MiB", "pri", "pin", 4 << 20,
		      0.8);
		ratio("demand-paged(pri)/prefaulted 4MiB", "pri", "prefault",
		      4 << 20, 1.25);
	} else {
		ratio("stall/pin(+transfer+unpin) 4MiB", "stall", "pin",
		      4 << 20, 0.8);
		ratio("demand-paged(stall)/prefaulted 4MiB", "stall",
		      "prefault", 4 << 20, 1.25);
	}
	ratio("demand-paged(touch16)/prefaulted 4MiB", "touch16", "prefault",
	      4 << 20, 1.25);
	ratio("demand-paged(batch64)/prefaulted 4MiB", "batch64", "prefault",
	      4 << 20, 1.25);
	best_demand(4 << 20);
	pu_chan_close_all();
	return 0;
}
