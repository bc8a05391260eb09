// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-test: in-guest checks of pldma.ko + libpldma, driven by the
 * guest/tests/pldma-*.sh scripts.  Every subcommand prints "# ..." notes and
 * exits 0 on success, 1 on failure, 77 when the device it needs is absent.
 *
 *   copy STRATEGY SIZE ITERS [thp|nothp]   byte-exact copies, buffers
 *                                          dropped before every iteration
 *   touchratio                             touch16 vs one faults on 4 MiB
 *   batchratio                             batch16 vs one and touch16
 *   unmapped STRATEGY                      error completion within 1 s
 *   badargs                                ioctl/mmap argument validation
 *   isolation                              two processes, two channels
 *   kill                                   SIGKILL with a faulted channel
 *   poll                                   poll()/read() and EPOLLPRI
 *   thp STRATEGY                           THP cuts destination faults
 *   mixed                                  per-transfer strategies, queued
 *   stream SIZE MIN MAX PHASE...           copies in a loop, phases ended
 *                                          by the host (migration test)
 *
 * PLDMA_TEST_DEVICE=/dev/pldmaN takes every channel from that device (a
 * guest with two devices of the same fault mode), for every subcommand;
 * without it, libpldma's first device of the mode the strategy needs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-util.h"
#include "pldma-check.h"

#define SKIP 77

static struct pldma_chan *test_open_mode(int mode)
{
	const char *dev = getenv("PLDMA_TEST_DEVICE");

	return dev ? pldma_open(dev) : pldma_open_mode(mode);
}

static struct pldma_chan *chan_or_skip(int strategy)
{
	struct pldma_chan *ch = pu_chan_for(strategy);

	if (!ch) {
		printf("# no PLDMA device for this strategy\n");
		exit(SKIP);
	}
	return ch;
}

static int cmd_copy(int argc, char **argv)
{
	unsigned int touch;
	size_t size;
	int strategy, iters, thp = -1, i;
	uint64_t faults = 0, pages = 0, t = 0, fmin = ~0ULL, fmax = 0;
	struct pldma_chan *ch;
	uint8_t *src, *dst;
	char name[32];

	if (argc < 3 || pldma_strategy_parse(argv[0], &strategy, &touch))
		return 2;
	size = strtoul(argv[1], NULL, 0);
	iters = atoi(argv[2]);
	if (argc > 3)
		thp = !strcmp(argv[3], "thp");
	ch = chan_or_skip(strategy);
	src = pu_src_alloc(size, size + strategy);
	dst = pu_dst_alloc(size, thp);
	if (!src || !dst) {
		printf("# cannot allocate %zu bytes\n", size);
		return 1;
	}
	pldma_strategy_name(strategy, touch, name, sizeof(name));
	for (i = 0; i < iters; i++) {
		struct pldma_result r;
		long bad;
		int ret;

		pu_drop(src, size);
		pu_drop(dst, size);
		ret = pldma_copy(ch, dst, src, size, strategy, touch, &r);
		if (ret || r.status != PLDMA_ST_SUCCESS) {
			CHECK(0, "%s %zu iter %d: ret %d status %u va %#llx",
			      name, size, i, ret, r.status,
			      (unsigned long long)r.fault_va);
			break;
		}
		bad = pu_verify(dst, size, size + strategy);
		if (bad >= 0) {
			CHECK(0, "%s %zu iter %d: byte %ld differs", name,
			      size, i, bad);
			break;
		}
		faults += r.faults;
		pages += r.pages;
		t += r.time_ns;
		fmin = r.faults < fmin ? r.faults : fmin;
		fmax = r.faults > fmax ? r.faults : fmax;
	}
	if (!fails) {
		printf("# %s %zu B x %d%s: verified, faults/iter %.1f (min %llu max %llu), pages/iter %.1f, %.1f us/iter\n",
		       name, size, iters,
		       thp < 0 ? "" : thp ? " THP" : " no-THP",
		       (double)faults / iters, (unsigned long long)fmin,
		       (unsigned long long)fmax, (double)pages / iters,
		       t / 1000.0 / iters);
		/* demand paging must have faulted on untouched memory */
		if (strategy >= PLDMA_STRAT_STALL)
			CHECK(fmin > 0, "%s: no device faults", name);
		else
			CHECK(fmax <= 4, "%s: %llu faults with pages present",
			      name, (unsigned long long)fmax);
		/* PLDMA_TEST_FAULTS=LO:HI, the faults every copy must take */
		if (getenv("PLDMA_TEST_FAULTS")) {
			unsigned long long lo = 0, hi = ~0ULL;

			sscanf(getenv("PLDMA_TEST_FAULTS"), "%llu:%llu", &lo,
			       &hi);
			CHECK(fmin >= lo && fmax <= hi,
			      "%s: %llu..%llu faults per copy, expected %llu..%llu",
			      name, (unsigned long long)fmin,
			      (unsigned long long)fmax, lo, hi);
		}
	}
	pu_free(src, size);
	pu_free(dst, size);
	return fails ? 1 : 0;
}

static uint64_t faults_for(int strategy, unsigned int touch, size_t size)
{
	struct pldma_chan *ch = chan_or_skip(strategy);
	uint8_t *src = pu_src_alloc(size, 5), *dst = pu_dst_alloc(size, 0);
	struct pldma_result r;
	char name[32];
	int ret;

	ret = pldma_copy(ch, dst, src, size, strategy, touch, &r);
	CHECK(!ret && r.status == PLDMA_ST_SUCCESS, "copy: %d/%u", ret,
	      r.status);
	CHECK(pu_verify(dst, size, 5) < 0, "data differs");
	printf("# %s: %llu faults, %llu pages made present (%llu touch-ahead, %llu batched), %.1f us\n",
	       pldma_strategy_name(strategy, touch, name, sizeof(name)),
	       (unsigned long long)r.faults, (unsigned long long)r.pages,
	       (unsigned long long)r.touch_pages,
	       (unsigned long long)r.batch_pages, r.time_ns / 1000.0);
	pu_free(src, size);
	pu_free(dst, size);
	return r.faults;
}

static int cmd_touchratio(void)
{
	size_t size = 4 << 20;
	uint64_t one = faults_for(PLDMA_STRAT_ONE, 0, size);
	uint64_t touch = faults_for(PLDMA_STRAT_TOUCH, 16, size);
	uint64_t pages = 2 * size / 4096;

	printf("# 4 MiB untouched: one-by-one %llu faults, touch-ahead(16) %llu faults, ratio %.4f (1/16 = 0.0625)\n",
	       (unsigned long long)one, (unsigned long long)touch,
	       one ? (double)touch / one : 0);
	CHECK(one >= pages && one <= pages + 8,
	      "one-by-one: %llu faults for %llu pages",
	      (unsigned long long)one, (unsigned long long)pages);
	CHECK(touch * 16 >= one * 3 / 4 && touch * 16 <= one * 5 / 4,
	      "touch-ahead(16) not ~1/16 of one-by-one");
	return fails ? 1 : 0;
}

/*
 * Batched faults: each fault of a batch16 COPY lists the missing pages of
 * both buffers in a 16-page window, so 4 MiB untouched takes ~1/32 of
 * one-by-one's faults (source and destination pages fault separately
 * there), half of touch-ahead(16)'s, with the pages counted as batched.
 */
static int cmd_batchratio(void)
{
	size_t size = 4 << 20;
	uint64_t pages = 2 * size / 4096;
	uint64_t one = faults_for(PLDMA_STRAT_ONE, 0, size);
	uint64_t touch = faults_for(PLDMA_STRAT_TOUCH, 16, size);
	uint64_t batch = faults_for(PLDMA_STRAT_BATCH, 16, size);

	printf("# 4 MiB untouched: one-by-one %llu faults, touch-ahead(16) %llu, batch(16) %llu: batch/one %.4f (1/32 = 0.0312), batch/touch16 %.2f\n",
	       (unsigned long long)one, (unsigned long long)touch,
	       (unsigned long long)batch, one ? (double)batch / one : 0,
	       touch ? (double)batch / touch : 0);
	CHECK(one >= pages && one <= pages + 8,
	      "one-by-one: %llu faults for %llu pages",
	      (unsigned long long)one, (unsigned long long)pages);
	CHECK(batch * 32 >= one * 3 / 4 && batch * 32 <= one * 5 / 4,
	      "batch(16) not ~1/32 of one-by-one");
	CHECK(batch < touch, "batch(16) not fewer faults than touch-ahead(16)");
	return fails ? 1 : 0;
}

static int cmd_unmapped(int argc, char **argv)
{
	size_t size = 64 * 1024;
	struct pldma_result r;
	struct pldma_chan *ch;
	unsigned int touch;
	uint8_t *hole, *buf;
	int strategy, ret, dir;
	char name[32];

	if (argc < 1 || pldma_strategy_parse(argv[0], &strategy, &touch))
		return 2;
	ch = chan_or_skip(strategy);
	pldma_strategy_name(strategy, touch, name, sizeof(name));
	buf = pu_dst_alloc(size, -1);
	hole = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, size);
	for (dir = 0; dir < 2; dir++) {
		void *dst = dir ? hole : buf;
		void *src = dir ? buf : hole;

		ret = pldma_copy(ch, dst, src, size, strategy, touch, &r);
		printf("# %s: copy %s unmapped memory: ret %d, status %u, fault VA %#llx, %.1f us\n",
		       name, dir ? "to" : "from", ret, r.status,
		       (unsigned long long)r.fault_va, r.time_ns / 1000.0);
		CHECK(ret == 0 || ret == -EIO, "wait failed: %d", ret);
		CHECK(ret || r.status == PLDMA_ST_ABORTED ||
		      r.status == PLDMA_ST_CANCELLED ||
		      r.status == PLDMA_ST_FAULT, "status %u", r.status);
		CHECK(ret || (r.fault_va >= (uintptr_t)hole &&
			      r.fault_va < (uintptr_t)hole + size),
		      "fault VA %#llx outside the hole",
		      (unsigned long long)r.fault_va);
		CHECK(r.time_ns < 1000000000ull, "took %.3f s",
		      r.time_ns / 1e9);
		/* the channel must still work afterwards */
		memset(buf, 1, size);
		ret = pldma_copy(ch, buf + size / 2, buf, size / 2, strategy,
				 touch, &r);
		CHECK(!ret && r.status == PLDMA_ST_SUCCESS,
		      "channel unusable after the error: %d/%u", ret,
		      r.status);
	}
	return fails ? 1 : 0;
}

#define EXPECT_ERR(call, err) do {					\
	int _r = (call);						\
	CHECK(_r == -1 && errno == (err), "%s: got %d errno %d, want %d", \
	      #call, _r, _r ? errno : 0, err);				\
} while (0)

static int cmd_badargs(void)
{
	struct pldma_chan *ch = test_open_mode(0);
	struct pldma_strategy s = { 0 };
	struct pldma_submit sub;
	struct pldma_wait w;
	struct pldma_fault f;
	struct pldma_fault_resolve fr;
	uint8_t *buf;
	int fd, n = 0;
	void *p;

	if (!ch)
		return SKIP;
	fd = pldma_fd(ch);
	buf = pu_dst_alloc(8192, -1);
	memset(buf, 0, 8192);

	s.strategy = 99;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, &s), EINVAL); n++;
	s.strategy = pldma_fault_mode(ch) == PLDMA_MODE_REPORT ?
		     PLDMA_STRAT_STALL : PLDMA_STRAT_ONE;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, &s), EOPNOTSUPP); n++;
	s.strategy = PLDMA_STRAT_PIN;
	s.flags = 2;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, &s), EINVAL); n++;
	s.flags = 0;
	s.slot = 5;	/* a slot without PLDMA_STRATEGY_SLOT */
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, &s), EINVAL); n++;
	s.flags = PLDMA_STRATEGY_SLOT;
	s.slot = PLDMA_RING_MAX_ENTRIES;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, &s), EINVAL); n++;
	s.flags = 0;
	s.slot = 0;
	s.touch_ahead = 4;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, &s), EINVAL); n++;
	if (pldma_fault_mode(ch) == PLDMA_MODE_REPORT) {
		s.strategy = PLDMA_STRAT_TOUCH;
		s.touch_ahead = 0;
		EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, &s), EINVAL); n++;
		s.touch_ahead = PLDMA_TOUCH_MAX + 1;
		EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, &s), EINVAL); n++;
	}
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, NULL), EFAULT); n++;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SET_STRATEGY, (void *)8), EFAULT); n++;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_INFO, (void *)0xffff000000001000ull),
		   EFAULT); n++;
	EXPECT_ERR(ioctl(fd, _IO(PLDMA_IOC_MAGIC, 0x7f), 0), ENOTTY); n++;
	EXPECT_ERR(ioctl(fd, _IOR(PLDMA_IOC_MAGIC, 0x01, int), buf), ENOTTY); n++;

#define SUB_OK() do {							\
	memset(&sub, 0, sizeof(sub));					\
	sub.opcode = PLDMA_OP_COPY;					\
	sub.len = 4096;							\
	sub.src = (uintptr_t)buf;					\
	sub.dst = (uintptr_t)buf + 4096;				\
	sub.compl = (uintptr_t)buf + 64;				\
	sub.strategy = PLDMA_STRAT_PIN;					\
} while (0)
	SUB_OK(); sub.opcode = 7;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.opcode = PLDMA_OP_RDMA_WRITE;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.len = 0;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.len = pldma_info(ch)->max_xfer + 1;
	if (sub.len) {
		EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL);
		n++;
	}
	SUB_OK(); sub.compl += 4;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.compl = 0;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.rsvd2[2] = 1;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.rsvd0 = 1;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.index = 3;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.strategy = 42;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EINVAL); n++;
	SUB_OK(); sub.src = 0xffff000000000000ull;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EFAULT); n++;
	SUB_OK(); sub.dst = 0xffff800000000000ull;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EFAULT); n++;
	SUB_OK(); sub.src = ~0ull - 100;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, &sub), EFAULT); n++;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_SUBMIT, NULL), EFAULT); n++;

	memset(&w, 0, sizeof(w));
	w.compl = (uintptr_t)buf + 64;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_WAIT, &w), EINVAL); n++;	/* timeout 0 */
	w.timeout_ms = 100000;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_WAIT, &w), EINVAL); n++;
	w.timeout_ms = 10;
	w.compl = 0;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_WAIT, &w), EINVAL); n++;
	w.compl = (uintptr_t)buf + 3;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_WAIT, &w), EINVAL); n++;
	w.compl = 0xffff000000000000ull;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_WAIT, &w), EFAULT); n++;
	w.compl = (uintptr_t)buf + 64;
	*(volatile uint32_t *)(buf + 64) = 0;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_WAIT, &w), ETIMEDOUT); n++;

	memset(&f, 0, sizeof(f));
	f.timeout_ms = 100000;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_FAULT_GET, &f), EINVAL); n++;
	f.timeout_ms = 0;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_FAULT_GET, &f), EAGAIN); n++;
	memset(&fr, 0, sizeof(fr));
	fr.action = 9;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_FAULT_RESOLVE, &fr), EINVAL); n++;
	fr.action = PLDMA_RESOLVE_RESTART;
	EXPECT_ERR(ioctl(fd, PLDMA_IOC_FAULT_RESOLVE, &fr), ENOENT); n++;

	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p == MAP_FAILED && errno == EINVAL, "mmap of 2 pages: %p", p);
	n++;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096);
	CHECK(p == MAP_FAILED && errno == EINVAL, "mmap at offset 4096: %p",
	      p);
	n++;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	CHECK(p == MAP_FAILED, "executable mmap allowed");
	n++;

	/* a valid request still works after all that */
	{
		struct pldma_result r;
		int ret;

		memset(buf, 0x5a, 4096);
		ret = pldma_copy(ch, buf + 4096, buf, 4096, PLDMA_STRAT_PIN, 0,
				 &r);
		CHECK(!ret && r.status == PLDMA_ST_SUCCESS &&
		      buf[4096 + 100] == 0x5a, "valid copy failed %d/%u",
		      ret, r.status);
		n++;
	}
	printf("# %d argument checks, %d failed\n", n, fails);
	pldma_close(ch);
	return fails ? 1 : 0;
}

/* Two processes, same VA, different contents: each sees only its own. */
static int isolation_child(uint8_t *fixed, size_t size, uint8_t val,
			   uint8_t *other_only, int strategy)
{
	struct pldma_chan *ch;
	struct pldma_result r;
	uint8_t *buf, *dst;
	int i, ret, bad = 0;
	size_t j;

	buf = mmap(fixed, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (buf != fixed)
		return 3;
	memset(buf, val, size);
	dst = pu_dst_alloc(size, -1);
	ch = test_open_mode(strategy == PLDMA_STRAT_STALL ? PLDMA_MODE_STALL :
			     PLDMA_MODE_REPORT);
	if (!ch)
		return 4;
	printf("# pid %d: channel %u PASID %u\n", getpid(),
	       pldma_info(ch)->channel, pldma_info(ch)->pasid);
	if (strategy == PLDMA_STRAT_USER)
		pldma_fault_thread_start(ch, NULL, NULL);
	usleep(200000);		/* both processes hold their channel */
	for (i = 0; i < 10; i++) {
		pu_drop(dst, size);
		ret = pldma_copy(ch, dst, buf, size, strategy, 0, &r);
		if (ret || r.status != PLDMA_ST_SUCCESS)
			return 5;
		for (j = 0; j < size; j++)
			bad |= dst[j] != val;
		if (bad)
			return 6;
	}
	/* The other process's private buffer: not mapped here. */
	if (other_only) {
		ret = pldma_copy(ch, dst, other_only, size, strategy, 0, &r);
		if (!ret && r.status == PLDMA_ST_SUCCESS)
			return 7;
		for (j = 0; j < size; j++)
			bad |= dst[j] == 0xcc;
		if (bad)
			return 8;
	}
	pldma_close(ch);
	return 0;
}

static int cmd_isolation(int argc, char **argv)
{
	size_t size = 256 * 1024;
	uint8_t *fixed = (uint8_t *)0x500000000000ull;
	uint8_t *secret = (uint8_t *)0x510000000000ull;
	int strategy = PLDMA_STRAT_ONE, st[2], i;
	unsigned int touch;
	pid_t pid[2];

	if (argc > 0 && pldma_strategy_parse(argv[0], &strategy, &touch))
		return 2;
	if (!pu_chan_for(strategy))
		return SKIP;
	pu_chan_close_all();
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (!pid[i]) {
			if (i == 0) {
				uint8_t *s = mmap(secret, size,
						  PROT_READ | PROT_WRITE,
						  MAP_PRIVATE | MAP_ANONYMOUS |
						  MAP_FIXED_NOREPLACE, -1, 0);
				if (s != secret)
					_exit(3);
				memset(s, 0xcc, size);
				_exit(isolation_child(fixed, size, 0xaa, NULL,
						      strategy));
			}
			_exit(isolation_child(fixed, size, 0xbb, secret,
					      strategy));
		}
	}
	for (i = 0; i < 2; i++) {
		waitpid(pid[i], &st[i], 0);
		CHECK(WIFEXITED(st[i]) && WEXITSTATUS(st[i]) == 0,
		      "process %d: status %#x", i, st[i]);
	}
	if (!fails)
		printf("# both processes saw only their own memory; the second could not read the first's buffer\n");
	return fails ? 1 : 0;
}

/* A process killed while its channel waits for a fault: nothing leaks. */
static int cmd_kill(int argc, char **argv)
{
	int strategy = PLDMA_STRAT_USER, st, i, n;
	struct pldma_chan *chs[PLDMA_MAX_CHANNELS];
	unsigned int touch, nch;
	struct pldma_chan *ch;
	int pipefd[2];
	pid_t pid;
	char c;

	if (argc > 0 && pldma_strategy_parse(argv[0], &strategy, &touch))
		return 2;
	ch = test_open_mode(strategy == PLDMA_STRAT_STALL ? PLDMA_MODE_STALL :
			     PLDMA_MODE_REPORT);
	if (!ch)
		return SKIP;
	nch = PLDMA_CAP_NUM_CH(pldma_info(ch)->cap);
	pldma_close(ch);
	if (pipe(pipefd))
		return 1;
	pid = fork();
	if (!pid) {
		size_t size = 1 << 20;
		uint8_t *src = pu_src_alloc(size, 1);
		uint8_t *dst = pu_dst_alloc(size, -1);
		struct pldma_xfer x = {
			.opcode = PLDMA_OP_COPY, .dst = dst, .src = src,
			.len = size, .strategy = strategy,
		};
		unsigned int slot;

		ch = test_open_mode(strategy == PLDMA_STRAT_STALL ?
				     PLDMA_MODE_STALL : PLDMA_MODE_REPORT);
		if (!ch)
			_exit(3);
		/*
		 * user: no handler thread, the channel stays FAULTED;
		 * stall: many faults in flight while we die.
		 */
		pldma_submit(ch, &x, &slot);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	if (read(pipefd[0], &c, 1) != 1)
		return 1;
	usleep(20000);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st), "child status %#x", st);
	/*
	 * Every channel can be claimed again, within a second: the dead
	 * process's file may be released a little after waitpid() (its last
	 * mm reference can drop in a worker, mmput_async(), and the mapping's
	 * file reference with it).
	 */
	for (i = 0; i < 100; i++) {
		for (n = 0; n < (int)nch; n++) {
			chs[n] = test_open_mode(strategy == PLDMA_STRAT_STALL ?
						 PLDMA_MODE_STALL :
						 PLDMA_MODE_REPORT);
			if (!chs[n])
				break;
		}
		if (n == (int)nch)
			break;
		while (n > 0)
			pldma_close(chs[--n]);
		usleep(10000);
	}
	CHECK(n == (int)nch, "only %d of %u channels free after the kill",
	      n, nch);
	if (n > 0) {
		uint8_t *a = pu_src_alloc(65536, 3), *b = pu_dst_alloc(65536, -1);
		struct pldma_result r;

		for (i = 0; i < n; i++) {
			int ret = pldma_copy(chs[i], b, a, 65536,
					     pldma_fault_mode(chs[i]) ==
					     PLDMA_MODE_STALL ? PLDMA_STRAT_STALL :
					     PLDMA_STRAT_ONE, 0, &r);

			CHECK(!ret && r.status == PLDMA_ST_SUCCESS &&
			      pu_verify(b, 65536, 3) < 0,
			      "channel %d broken after the kill", i);
			pu_drop(b, 65536);
		}
	}
	for (i = 0; i < n; i++)
		pldma_close(chs[i]);
	if (!fails)
		printf("# killed process released its channel; %d channels usable\n",
		       n);
	return fails ? 1 : 0;
}

/*
 * Strategies are per transfer even when transfers are queued together:
 * a one-by-one copy and a touch-ahead(16) copy in the ring at once.
 */
static int cmd_mixed(void)
{
	size_t size = 1 << 20;
	struct pldma_chan *ch = chan_or_skip(PLDMA_STRAT_ONE);
	uint8_t *s1 = pu_src_alloc(size, 11), *d1 = pu_dst_alloc(size, 0);
	uint8_t *s2 = pu_src_alloc(size, 12), *d2 = pu_dst_alloc(size, 0);
	struct pldma_xfer x1 = {
		.opcode = PLDMA_OP_COPY, .dst = d1, .src = s1, .len = size,
		.strategy = PLDMA_STRAT_ONE,
	};
	struct pldma_xfer x2 = {
		.opcode = PLDMA_OP_COPY, .dst = d2, .src = s2, .len = size,
		.strategy = PLDMA_STRAT_TOUCH, .touch = 16,
	};
	struct pldma_stats st0, st1;
	struct pldma_result r1, r2;
	unsigned int slot1, slot2;
	uint64_t faults;

	CHECK(!pldma_get_stats(ch, &st0), "stats");
	CHECK(!pldma_submit(ch, &x1, &slot1), "submit one");
	CHECK(!pldma_submit(ch, &x2, &slot2), "submit touch16");
	CHECK(!pldma_wait(ch, slot1, 10000, &r1) &&
	      r1.status == PLDMA_ST_SUCCESS, "one: %u", r1.status);
	CHECK(!pldma_wait(ch, slot2, 10000, &r2) &&
	      r2.status == PLDMA_ST_SUCCESS, "touch16: %u", r2.status);
	CHECK(pu_verify(d1, size, 11) < 0 && pu_verify(d2, size, 12) < 0,
	      "data differs");
	CHECK(!pldma_get_stats(ch, &st1), "stats");
	faults = st1.faults - st0.faults;
	printf("# one-by-one then touch-ahead(16), 1 MiB each, queued together: %llu faults, %llu touch-ahead pages (one alone: 273, or 513 without fault-around; touch16 alone: 32)\n",
	       (unsigned long long)faults,
	       (unsigned long long)(st1.touch_pages - st0.touch_pages));
	/* one: 273 faults with page-cache fault-around, 513 without */
	CHECK(faults >= 273 + 30 && faults <= 513 + 34 &&
	      st1.touch_pages - st0.touch_pages >= 400,
	      "each transfer did not get its own strategy");
	return fails ? 1 : 0;
}

/* Transparent huge pages: far fewer device faults on the destination */
static int cmd_thp(int argc, char **argv)
{
	size_t size = 4 << 20;
	uint64_t faults[2];
	unsigned int touch;
	int strategy, thp;

	if (argc < 1 || pldma_strategy_parse(argv[0], &strategy, &touch))
		return 2;
	for (thp = 0; thp < 2; thp++) {
		struct pldma_chan *ch = chan_or_skip(strategy);
		uint8_t *src = pu_src_alloc(size, 4), *dst = pu_dst_alloc(size, thp);
		struct pldma_result r;
		int ret;

		ret = pldma_copy(ch, dst, src, size, strategy, touch, &r);
		CHECK(!ret && r.status == PLDMA_ST_SUCCESS &&
		      pu_verify(dst, size, 4) < 0, "copy %d/%u", ret, r.status);
		faults[thp] = r.faults;
		pu_free(src, size);
		pu_free(dst, size);
	}
	printf("# %s, 4 MiB: %llu faults with MADV_NOHUGEPAGE, %llu with MADV_HUGEPAGE\n",
	       argv[0], (unsigned long long)faults[0],
	       (unsigned long long)faults[1]);
	CHECK(faults[1] < faults[0], "THP did not reduce the faults");
	return fails ? 1 : 0;
}

/* poll(): EPOLLIN after a completion, re-armed by read(); EPOLLPRI for a
 * forwarded fault (user strategy, report mode).
 */
static int cmd_poll(void)
{
	struct pldma_chan *ch = test_open_mode(0);
	size_t size = 65536;
	uint8_t *src = pu_src_alloc(size, 9), *dst = pu_dst_alloc(size, -1);
	struct pldma_xfer x = {
		.opcode = PLDMA_OP_COPY, .dst = dst, .src = src, .len = size,
		.strategy = PLDMA_STRAT_PREFAULT,
	};
	struct pollfd pfd;
	struct pldma_result r;
	unsigned int slot;
	uint32_t cnt;
	int ret;

	if (!ch)
		return SKIP;
	pfd.fd = pldma_fd(ch);
	pfd.events = POLLIN | POLLPRI;
	CHECK(read(pfd.fd, &cnt, 4) == 4, "read");
	CHECK(poll(&pfd, 1, 0) == 0, "readable before any transfer");
	ret = pldma_submit(ch, &x, &slot);
	CHECK(!ret, "submit %d", ret);
	ret = poll(&pfd, 1, 5000);
	CHECK(ret == 1 && (pfd.revents & POLLIN), "no POLLIN: %d %#x", ret,
	      pfd.revents);
	CHECK(read(pfd.fd, &cnt, 4) == 4 && cnt == 1, "completed %u", cnt);
	CHECK(poll(&pfd, 1, 0) == 0, "still readable after read()");
	ret = pldma_wait(ch, slot, 1000, &r);
	CHECK(!ret && r.status == PLDMA_ST_SUCCESS && pu_verify(dst, size, 9) < 0,
	      "transfer %d/%u", ret, r.status);

	/* eventfd: signalled on completion; argument checks */
	{
		struct pldma_eventfd e = { .fd = -5 };
		int efd = eventfd(0, EFD_CLOEXEC);
		struct pollfd ep = { .fd = efd, .events = POLLIN };
		uint64_t v = 0;

		EXPECT_ERR(ioctl(pfd.fd, PLDMA_IOC_SET_EVENTFD, &e), EINVAL);
		e.fd = pfd.fd;	/* not an eventfd */
		EXPECT_ERR(ioctl(pfd.fd, PLDMA_IOC_SET_EVENTFD, &e), EINVAL);
		e.fd = efd;
		e.rsvd = 1;
		EXPECT_ERR(ioctl(pfd.fd, PLDMA_IOC_SET_EVENTFD, &e), EINVAL);
		CHECK(!pldma_set_eventfd(ch, efd), "SET_EVENTFD");
		pu_drop(dst, size);
		ret = pldma_submit(ch, &x, &slot);
		CHECK(poll(&ep, 1, 5000) == 1, "eventfd not signalled");
		CHECK(read(efd, &v, 8) == 8 && v >= 1, "eventfd count %llu",
		      (unsigned long long)v);
		ret = pldma_wait(ch, slot, 1000, &r);
		CHECK(!ret && r.status == PLDMA_ST_SUCCESS, "transfer %d/%u",
		      ret, r.status);
		CHECK(!pldma_set_eventfd(ch, -1), "clear eventfd");
		close(efd);
		printf("# eventfd signalled %llu time(s) for one completion\n",
		       (unsigned long long)v);
	}

	if (pldma_fault_mode(ch) == PLDMA_MODE_REPORT) {
		struct pldma_fault f = { 0 };
		struct pldma_fault_resolve fr = { 0 };

		pu_drop(dst, size);
		pu_drop(src, size);
		x.strategy = PLDMA_STRAT_USER;
		ret = pldma_submit(ch, &x, &slot);
		CHECK(!ret, "submit %d", ret);
		pfd.events = POLLPRI;
		ret = poll(&pfd, 1, 5000);
		CHECK(ret == 1 && (pfd.revents & POLLPRI), "no POLLPRI: %d %#x",
		      ret, pfd.revents);
		/* answer by hand, then let the library's thread do the rest */
		CHECK(!ioctl(pfd.fd, PLDMA_IOC_FAULT_GET, &f), "FAULT_GET");
		CHECK(f.va >= (uintptr_t)src && f.va < (uintptr_t)src + size,
		      "fault VA %#llx not in the source",
		      (unsigned long long)f.va);
		CHECK(poll(&pfd, 1, 0) == 0, "POLLPRI after FAULT_GET");
		CHECK(!pldma_fault_populate(ch, &f, NULL), "populate");
		fr.seq = f.seq;
		fr.action = PLDMA_RESOLVE_RESTART;
		CHECK(!ioctl(pfd.fd, PLDMA_IOC_FAULT_RESOLVE, &fr), "RESOLVE");
		CHECK(ioctl(pfd.fd, PLDMA_IOC_FAULT_RESOLVE, &fr) == -1 &&
		      errno == ENOENT, "second RESOLVE accepted");
		pldma_fault_thread_start(ch, NULL, NULL);
		ret = pldma_wait(ch, slot, 5000, &r);
		CHECK(!ret && r.status == PLDMA_ST_SUCCESS &&
		      pu_verify(dst, size, 9) < 0, "user transfer %d/%u", ret,
		      r.status);
		printf("# user strategy: POLLPRI, FAULT_GET at %#llx, RESTART by hand, %llu faults by the thread\n",
		       (unsigned long long)f.va,
		       (unsigned long long)pldma_fault_thread_count(ch));

		/* Nobody answers: the driver cancels after a second. */
		pldma_fault_thread_stop(ch);
		pu_drop(dst, size);
		ret = pldma_run(ch, &x, 5000, &r);
		printf("# user strategy without a handler: status %u after %.0f ms\n",
		       r.status, r.time_ns / 1e6);
		CHECK(!ret && r.status == PLDMA_ST_CANCELLED,
		      "unanswered fault: %d/%u", ret, r.status);
		CHECK(r.time_ns < 1500000000ull, "took %.0f ms",
		      r.time_ns / 1e6);
	}
	pldma_close(ch);
	return fails ? 1 : 0;
}

/*
 * stream SIZE MIN MAX PHASE...: a stream of demand-paged copies for the
 * host's migration test (tests/migration/run), which stops, migrates and
 * restores the guest while it runs.  A PHASE is a strategy, or several
 * joined with '+' that run at the same time, each on its own channel:
 * stall on the stall-mode device, one, touchN and user on the report-mode
 * device, pin and prefault on the stall-mode device when there is one.
 * Each strategy copies SIZE bytes again and again, STREAM_DEPTH descriptors
 * queued at a time, from sources of known contents to destinations, both
 * dropped (MADV_DONTNEED) before every copy, and verifies every byte.  A
 * phase ends once each of its strategies has done MIN copies and the host
 * has written "next N" on the console (N: the phase's number, from 1, or a
 * later one's), or after MAX copies.  The console shows, for the host,
 *
 *   === PLDMA-STREAM START N PHASE
 *   === PLDMA-STREAM END N PHASE copies=C verified=V
 *
 * PLDMA_STREAM_USER_DELAY_US (default 200) slows the user strategy's fault
 * handler, so that its channel is often FAULTED when the host stops the VM.
 */
#define STREAM_DEPTH	2
#define STREAM_MAX_PAR	4

struct stream_worker {
	pthread_t thread;
	int strategy;
	unsigned int touch;
	char name[32];
	struct pldma_chan *ch;
	size_t size;
	unsigned int min, max;
	uint32_t seed;
	uint8_t *src[STREAM_DEPTH], *dst[STREAM_DEPTH];
	volatile int *stop;
	unsigned int copies, verified, errors;
	uint32_t faults;	/* device stalls + reported faults */
	volatile int done;
};

static unsigned int stream_user_delay_us = 200;

static int stream_user_fault(struct pldma_chan *ch,
			     const struct pldma_fault *f, void *arg)
{
	(void)arg;
	if (stream_user_delay_us)
		usleep(stream_user_delay_us);
	return pldma_fault_populate(ch, f, NULL);
}

static uint32_t stream_faults(struct pldma_chan *ch)
{
	return pldma_hw_counter(ch, PLDMA_CNT_STALLS) +
	       pldma_hw_counter(ch, PLDMA_CNT_FAULTS);
}

static void *stream_run(void *p)
{
	struct stream_worker *w = p;
	uint32_t f0 = stream_faults(w->ch);
	unsigned int slot[STREAM_DEPTH];
	int ret, k, n;

	while (!w->errors && w->copies < w->max &&
	       !(w->copies >= w->min && *w->stop)) {
		for (n = 0; n < STREAM_DEPTH; n++) {
			struct pldma_xfer x = {
				.opcode = PLDMA_OP_COPY, .dst = w->dst[n],
				.src = w->src[n], .len = w->size,
				.strategy = w->strategy, .touch = w->touch,
				.cookie = w->copies + n,
			};

			pu_drop(w->src[n], w->size);
			pu_drop(w->dst[n], w->size);
			ret = pldma_submit(w->ch, &x, &slot[n]);
			if (ret) {
				printf("# FAIL stream %s copy %u: submit %d\n",
				       w->name, w->copies + n, ret);
				w->errors++;
				break;
			}
		}
		for (k = 0; k < n; k++) {
			struct pldma_result r = { 0 };
			long bad;

			ret = pldma_wait(w->ch, slot[k], 60000, &r);
			w->copies++;
			if (ret || r.status != PLDMA_ST_SUCCESS) {
				printf("# FAIL stream %s copy %u: wait %d, status %u, %llu bytes done, fault VA %#llx\n",
				       w->name, w->copies - 1, ret, r.status,
				       (unsigned long long)r.bytes,
				       (unsigned long long)r.fault_va);
				w->errors++;
				continue;
			}
			bad = pu_verify(w->dst[k], w->size, w->seed + k);
			if (bad >= 0) {
				printf("# FAIL stream %s copy %u: byte %ld differs\n",
				       w->name, w->copies - 1, bad);
				w->errors++;
				continue;
			}
			w->verified++;
		}
	}
	w->faults = stream_faults(w->ch) - f0;
	__sync_synchronize();
	w->done = 1;
	return NULL;
}

/* The console, unbuffered and silent, for the host's "next N" lines */
static int stream_tty_open(struct termios *saved)
{
	static const char *const paths[] = { "/dev/ttyAMA0", "/dev/console" };
	struct termios t;
	unsigned int i;
	int fd = -1;

	for (i = 0; i < 2 && fd < 0; i++)
		fd = open(paths[i], O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (tcgetattr(fd, saved)) {
		close(fd);
		return -1;
	}
	t = *saved;
	t.c_lflag &= ~(ICANON | ECHO | ECHONL);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	tcsetattr(fd, TCSANOW, &t);
	return fd;
}

/*
 * Whether the console has brought "next N" for @phase or a later one; @line
 * keeps a partial line.  A later phase's "next" is remembered, so that
 * someone typing ahead by hand does not get stuck in a phase.
 */
static int stream_next(int tty, int phase, char *line, size_t len)
{
	static int next_max;
	size_t n = strlen(line);
	int want;
	char c;

	while (read(tty, &c, 1) == 1) {
		if (c != '\n' && c != '\r') {
			if (n + 1 < len) {
				line[n++] = c;
				line[n] = 0;
			}
			continue;
		}
		if (sscanf(line, "next %d", &want) == 1 && want > next_max)
			next_max = want;
		n = 0;
		line[0] = 0;
	}
	return next_max >= phase;
}

static struct pldma_chan *stream_chan(int strategy)
{
	struct pldma_chan *ch;

	switch (strategy) {
	case PLDMA_STRAT_STALL:
		return test_open_mode(PLDMA_MODE_STALL);
	case PLDMA_STRAT_ONE:
	case PLDMA_STRAT_TOUCH:
	case PLDMA_STRAT_USER:
	case PLDMA_STRAT_BATCH:
		return test_open_mode(PLDMA_MODE_REPORT);
	}
	ch = test_open_mode(PLDMA_MODE_STALL);
	return ch ? ch : test_open_mode(PLDMA_MODE_REPORT);
}

static int stream_phase(int phase, const char *spec, size_t size,
			unsigned int min, unsigned int max, int tty,
			unsigned int *copies, unsigned int *verified)
{
	struct stream_worker w[STREAM_MAX_PAR];
	char buf[64], line[32] = "", *tok, *save;
	volatile int stop = 0;
	int nw = 0, i, k, all, bad = 0;
	unsigned int c = 0, v = 0;

	memset(w, 0, sizeof(w));
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, "+", &save); tok;
	     tok = strtok_r(NULL, "+", &save)) {
		struct stream_worker *x = &w[nw];

		if (nw == STREAM_MAX_PAR ||
		    pldma_strategy_parse(tok, &x->strategy, &x->touch)) {
			printf("# FAIL stream: bad phase '%s'\n", spec);
			bad = 1;
			break;
		}
		nw++;
		pldma_strategy_name(x->strategy, x->touch, x->name,
				    sizeof(x->name));
		x->size = size;
		x->min = min;
		x->max = max;
		x->stop = &stop;
		x->seed = phase * 16 + nw * 4;
		x->ch = stream_chan(x->strategy);
		if (!x->ch) {
			printf("# FAIL stream: no PLDMA device for %s\n",
			       x->name);
			bad = 1;
			break;
		}
		for (k = 0; k < STREAM_DEPTH; k++) {
			x->src[k] = pu_src_alloc(size, x->seed + k);
			x->dst[k] = pu_dst_alloc(size, -1);
			if (!x->src[k] || !x->dst[k]) {
				printf("# FAIL stream: cannot allocate %zu bytes\n",
				       size);
				bad = 1;
			}
		}
		if (x->strategy == PLDMA_STRAT_USER &&
		    pldma_fault_thread_start(x->ch, stream_user_fault, NULL)) {
			printf("# FAIL stream: no fault thread\n");
			bad = 1;
		}
	}
	if (!bad) {
		printf("=== PLDMA-STREAM START %d %s\n", phase, spec);
		for (i = 0; i < nw; i++)
			pthread_create(&w[i].thread, NULL, stream_run, &w[i]);
		do {
			if (tty >= 0) {
				struct pollfd pfd = { .fd = tty, .events = POLLIN };

				if (poll(&pfd, 1, 100) > 0 &&
				    stream_next(tty, phase, line, sizeof(line)))
					stop = 1;
			} else {
				usleep(100000);
			}
			for (all = 1, i = 0; i < nw; i++)
				all &= w[i].done;
		} while (!all);
		for (i = 0; i < nw; i++) {
			pthread_join(w[i].thread, NULL);
			printf("# stream phase %d %s: %u copies of %zu B, %u verified, %u device faults\n",
			       phase, w[i].name, w[i].copies, size,
			       w[i].verified, w[i].faults);
			c += w[i].copies;
			v += w[i].verified;
			bad |= w[i].errors != 0;
		}
		printf("=== PLDMA-STREAM END %d %s copies=%u verified=%u\n",
		       phase, spec, c, v);
	}
	for (i = 0; i < nw; i++) {
		for (k = 0; k < STREAM_DEPTH; k++) {
			pu_free(w[i].src[k], size);
			pu_free(w[i].dst[k], size);
		}
		pldma_close(w[i].ch);
	}
	*copies += c;
	*verified += v;
	return bad;
}

static int cmd_stream(int argc, char **argv)
{
	unsigned int min, max, copies = 0, verified = 0;
	const char *delay = getenv("PLDMA_STREAM_USER_DELAY_US");
	struct termios saved;
	int tty, i, bad = 0;
	size_t size;

	if (argc < 4)
		return 2;
	size = strtoul(argv[0], NULL, 0);
	min = strtoul(argv[1], NULL, 0);
	max = strtoul(argv[2], NULL, 0);
	if (!size || !max || min > max)
		return 2;
	if (delay)
		stream_user_delay_us = strtoul(delay, NULL, 0);
	tty = stream_tty_open(&saved);
	if (tty < 0)
		printf("# stream: no console input, phases run %u copies\n",
		       max);
	for (i = 3; i < argc; i++)
		bad |= stream_phase(i - 2, argv[i], size, min, max, tty,
				    &copies, &verified);
	if (tty >= 0) {
		tcsetattr(tty, TCSANOW, &saved);
		close(tty);
	}
	printf("# stream: %d phases, %u copies of %zu B, %u verified\n",
	       argc - 3, copies, size, verified);
	CHECK(!bad && copies == verified, "%u of %u copies not verified",
	      copies - verified, copies);
	return fails ? 1 : 0;
}

/*
 * Pinned, present, but aged: both buffers are present, then MADV_COLD
 * clears their PTEs' access flags, as reclaim's aging does to pinned pages
 * too (the study saw 500 to 1000 device faults per 4 MiB for pin
 * in its eviction round).  GUP pins present pages without making their
 * PTEs young, and an SMMU without HTTU (QEMU's; and Linux does not enable
 * HA for SVA contexts) takes an access-flag fault on an old PTE.  The
 * driver answers the first such fault of a pinned or prefaulted transfer
 * by refreshing a window of the buffer: at most one fault per
 * PLDMA_AGED_WINDOW pages of each buffer.
 */
static int cmd_aged(int argc, char **argv)
{
	size_t size = 4 << 20, pages = size / 4096;
	int strategy = argc > 0 && !strcmp(argv[0], "prefault") ?
		PLDMA_STRAT_PREFAULT : PLDMA_STRAT_PIN;
	struct pldma_chan *ch = chan_or_skip(strategy);
	uint8_t *src = pu_src_alloc(size, 9), *dst = pu_dst_alloc(size, 0);
	volatile uint8_t sink = 0;
	struct pldma_result r;
	size_t i;
	int ret;

	for (i = 0; i < size; i += 4096) {
		sink += src[i];
		dst[i] = 0;
	}
	(void)sink;
	CHECK(pu_resident(src, size) == (long)pages &&
	      pu_resident(dst, size) == (long)pages, "buffers not present");
	CHECK(!madvise(src, size, MADV_COLD) && !madvise(dst, size, MADV_COLD),
	      "MADV_COLD: %s", strerror(errno));
	ret = pldma_copy(ch, dst, src, size, strategy, 0, &r);
	CHECK(!ret && r.status == PLDMA_ST_SUCCESS, "copy: %d/%u", ret,
	      r.status);
	CHECK(pu_verify(dst, size, 9) < 0, "data differs");
	printf("# %s of 2 x 4 MiB present but aged: %llu device faults, %.1f us\n",
	       strategy == PLDMA_STRAT_PIN ? "pin" : "prefault",
	       (unsigned long long)r.faults, r.time_ns / 1000.0);
	/* one window per buffer, and one more where a window ends mid-copy */
	CHECK(r.faults <= 2 * (pages / 64 + 1),
	      "%llu faults for %zu aged pages: one per page is not refreshed",
	      (unsigned long long)r.faults, 2 * pages);
	pu_free(src, size);
	pu_free(dst, size);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pu_use_device(getenv("PLDMA_TEST_DEVICE"));
	if (argc < 2) {
		fprintf(stderr, "usage: pldma-test copy|touchratio|unmapped|badargs|isolation|kill|stream|aged ...\n");
		return 2;
	}
	if (!strcmp(argv[1], "copy"))
		ret = cmd_copy(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "touchratio"))
		ret = cmd_touchratio();
	else if (!strcmp(argv[1], "batchratio"))
		ret = cmd_batchratio();
	else if (!strcmp(argv[1], "unmapped"))
		ret = cmd_unmapped(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "badargs"))
		ret = cmd_badargs();
	else if (!strcmp(argv[1], "isolation"))
		ret = cmd_isolation(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "mixed"))
		ret = cmd_mixed();
	else if (!strcmp(argv[1], "thp"))
		ret = cmd_thp(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "poll"))
		ret = cmd_poll();
	else if (!strcmp(argv[1], "kill"))
		ret = cmd_kill(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "stream"))
		ret = cmd_stream(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "aged"))
		ret = cmd_aged(argc - 2, argv + 2);
	else
		ret = 2;
	pu_chan_close_all();
	return ret;
}
