// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-hostile: in-guest checks that one hostile or unlucky user of
 * /dev/pldmaN cannot hurt another, and that valid transfers never fail.
 * Driven by guest/tests/pldma-hostile.sh.  Prints "# ..." notes, exits 0
 * on success, 1 on failure, 77 when the device it needs is absent.
 *
 *   uffd STRATEGY served|never   kernel strategy on userfaultfd memory; a
 *                                range never served must not block another
 *                                process, nor close()
 *   memlock                      pins are long-term and counted against
 *                                RLIMIT_MEMLOCK; on-demand strategies are not
 *   pasid DEV                    failed open()s do not use up PASIDs
 *   userlimit DEV N              an unprivileged user gets at most N channels
 *   touchclamp                   touch-ahead stays inside the transfer
 *   mmapflags                    channel page: MAP_SHARED only, I/O VMA
 *   tokens                       fault tokens unique after queue overflow
 *   slowuser                     a resolver that never makes progress is
 *                                cut off after about 1 s
 *   fthread                      libpldma's fault thread does not spin on
 *                                persistent errors
 *   compact STRATEGY N [race]    N 1 MiB copies while memory is compacted
 *                                in a loop (race: also MADV_DONTNEED of the
 *                                source and MADV_COLLAPSE of the destination)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-util.h"
#include "pldma-check.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

#define SKIP 77
#define PG 4096UL

static double now_s(void)
{
	return pldma_now_ns() / 1e9;
}

static int mode_for(int strategy)
{
	return strategy == PLDMA_STRAT_STALL ? PLDMA_MODE_STALL :
	       strategy >= PLDMA_STRAT_ONE ? PLDMA_MODE_REPORT : 0;
}

/* ------------------------------------------------------------------ */
/* userfaultfd                                                         */
/* ------------------------------------------------------------------ */

struct uffd_src {
	int fd;
	uint8_t *p;
	size_t len;
	uint32_t seed;
	volatile int stop;
	volatile unsigned long served;
	pthread_t thr;
};

static void *uffd_server(void *arg)
{
	struct uffd_src *u = arg;
	uint8_t *page = aligned_alloc(PG, PG);

	while (!u->stop) {
		struct pollfd pfd = { .fd = u->fd, .events = POLLIN };
		struct uffdio_copy c;
		struct uffd_msg msg;
		uint64_t addr, off;
		size_t i;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(u->fd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		addr = msg.arg.pagefault.address & ~(PG - 1);
		off = addr - (uintptr_t)u->p;
		for (i = 0; i < PG; i++)
			page[i] = pu_byte(u->seed, off + i);
		c.dst = addr;
		c.src = (uintptr_t)page;
		c.len = PG;
		c.mode = 0;
		c.copy = 0;
		if (ioctl(u->fd, UFFDIO_COPY, &c) && errno != EEXIST)
			perror("UFFDIO_COPY");
		u->served++;
	}
	free(page);
	return NULL;
}

static int uffd_src_init(struct uffd_src *u, size_t len, uint32_t seed,
			 int serve)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };

	memset(u, 0, sizeof(*u));
	u->len = len;
	u->seed = seed;
	u->fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u->fd < 0 || ioctl(u->fd, UFFDIO_API, &api))
		return -1;
	u->p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u->p == MAP_FAILED)
		return -1;
	reg.range.start = (uintptr_t)u->p;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(u->fd, UFFDIO_REGISTER, &reg))
		return -1;
	if (serve)
		pthread_create(&u->thr, NULL, uffd_server, u);
	return 0;
}

/* A second process: 20 copies of 64 KiB with a kernel strategy. */
static int bystander(int strategy)
{
	struct pldma_chan *ch = pldma_open_mode(mode_for(strategy));
	size_t size = 65536;
	uint8_t *src = pu_src_alloc(size, 21), *dst = pu_dst_alloc(size, 0);
	struct pldma_result r;
	int i, ret;

	if (!ch || !src || !dst)
		return 3;
	for (i = 0; i < 20; i++) {
		pu_drop(src, size);
		pu_drop(dst, size);
		ret = pldma_copy(ch, dst, src, size, strategy, 16, &r);
		if (ret || r.status != PLDMA_ST_SUCCESS ||
		    pu_verify(dst, size, 21) >= 0) {
			printf("# bystander: copy %d: ret %d status %u\n", i,
			       ret, r.status);
			return 4;
		}
	}
	pldma_close(ch);
	return 0;
}

static int cmd_uffd(int argc, char **argv)
{
	size_t size = 256 * 1024;
	struct pldma_result r;
	struct pldma_chan *ch;
	struct uffd_src u;
	unsigned int touch;
	int strategy, serve, st, ret;
	uint8_t *dst;
	double t0, t;
	pid_t pid;

	if (argc < 2 || pldma_strategy_parse(argv[0], &strategy, &touch))
		return 2;
	serve = !strcmp(argv[1], "served");
	ch = pldma_open_mode(PLDMA_MODE_REPORT);
	if (!ch)
		return SKIP;
	if (uffd_src_init(&u, size, 31, serve)) {
		printf("# userfaultfd: %s\n", strerror(errno));
		return 1;
	}
	dst = pu_dst_alloc(size, 0);
	if (serve) {
		ret = pldma_copy(ch, dst, u.p, size, strategy, touch, &r);
		printf("# %s on userfaultfd memory (served): ret %d status %u, %lu pages served, %.1f ms\n",
		       argv[0], ret, r.status, u.served, r.time_ns / 1e6);
		CHECK(!ret && r.status == PLDMA_ST_SUCCESS,
		      "copy from served userfaultfd memory failed");
		CHECK(pu_verify(dst, size, 31) < 0, "data differs");
		u.stop = 1;
		pthread_join(u.thr, NULL);
		pldma_close(ch);
		return fails ? 1 : 0;
	}

	/* Never served: another process copies meanwhile. */
	pid = fork();
	if (!pid) {
		usleep(100000);	/* let the first fault be taken */
		_exit(bystander(PLDMA_STRAT_ONE));
	}
	t0 = now_s();
	ret = pldma_copy(ch, dst, u.p, size, strategy, touch, &r);
	t = now_s() - t0;
	printf("# %s on a userfaultfd range nobody serves: ret %d status %u after %.0f ms\n",
	       argv[0], ret, r.status, t * 1000);
	CHECK(!ret && r.status != PLDMA_ST_SUCCESS,
	      "transfer did not end with an error status");
	CHECK(t < 3.0, "took %.1f s (bound: about 1 s)", t);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st),
	      "the other process's copies failed (status %#x)", st);
	if (!fails)
		printf("# another process copied 20 x 64 KiB meanwhile\n");
	/* close() must not wait for the filler either */
	t0 = now_s();
	pldma_close(ch);
	t = now_s() - t0;
	printf("# close() with the fault still unserved: %.1f ms\n", t * 1000);
	CHECK(t < 1.0, "close took %.1f s", t);
	close(u.fd);	/* releases whatever still waits for the range */
	usleep(200000);
	/* every channel can be claimed again */
	{
		struct pldma_chan *c[PLDMA_MAX_CHANNELS];
		int n = 0, i, nch = 0;

		c[0] = pldma_open_mode(PLDMA_MODE_REPORT);
		if (c[0])
			nch = PLDMA_CAP_NUM_CH(pldma_info(c[0])->cap), n = 1;
		while (n < nch && (c[n] = pldma_open_mode(PLDMA_MODE_REPORT)))
			n++;
		CHECK(n == nch && nch, "only %d of %d channels free", n, nch);
		for (i = 0; i < n; i++)
			pldma_close(c[i]);
	}
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Pinning and RLIMIT_MEMLOCK                                          */
/* ------------------------------------------------------------------ */

static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[cap / 32].effective &= ~(1U << (cap % 32));
	d[cap / 32].permitted &= ~(1U << (cap % 32));
	d[cap / 32].inheritable &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &h, d);
}

static long vm_pin_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int cmd_memlock(void)
{
	size_t big = 4 << 20, small = 512 << 10;
	struct rlimit rl = { 1 << 20, 1 << 20 };
	struct pldma_chan *ch;
	int strategies[] = { PLDMA_STRAT_STALL, PLDMA_STRAT_ONE,
			     PLDMA_STRAT_TOUCH, PLDMA_STRAT_USER,
			     PLDMA_STRAT_PREFAULT };
	struct pldma_result r;
	uint8_t *src, *dst;
	unsigned int i;
	int ret;

	CHECK(!drop_cap(CAP_IPC_LOCK), "cannot drop CAP_IPC_LOCK: %s",
	      strerror(errno));
	CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl), "setrlimit");
	src = pu_src_alloc(big, 41);
	dst = pu_dst_alloc(big, 0);
	if (!pu_chan_for(PLDMA_STRAT_PIN))
		return SKIP;

	/* Pinning is accounted (VmPin) and released at completion, even
	 * when the completion record cannot be read any more.
	 */
	ch = pu_chan_for(PLDMA_STRAT_PIN);
	{
		/* its own channel: a raw SUBMIT is not seen by libpldma */
		struct pldma_chan *raw = pldma_open_mode(pldma_fault_mode(ch));
		uint8_t *cr = mmap(NULL, PG, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				   -1, 0);
		struct pldma_submit s = {
			.opcode = PLDMA_OP_COPY, .len = small,
			.src = (uintptr_t)src, .dst = (uintptr_t)dst,
			.compl = (uintptr_t)cr, .strategy = PLDMA_STRAT_PIN,
		};
		uint32_t c0;
		struct pldma_stats st;
		long pin_in_flight, pin_after;
		int k;

		if (!raw)
			return 1;
		c0 = pldma_reg(raw, PLDMA_CH_COMPLETED);
		ret = ioctl(pldma_fd(raw), PLDMA_IOC_SUBMIT, &s);
		CHECK(!ret, "pin submit: %s", strerror(errno));
		pin_in_flight = vm_pin_kb();
		for (k = 0; k < 5000 && pldma_reg(raw, PLDMA_CH_COMPLETED) == c0; k++)
			usleep(1000);
		munmap(cr, PG);
		pldma_get_stats(raw, &st);	/* any call reaps */
		pin_after = vm_pin_kb();
		printf("# pin 512 KiB: VmPin %ld kB in flight, %ld kB after completion with the record unmapped\n",
		       pin_in_flight, pin_after);
		CHECK(pin_in_flight >= 1024, "pinned pages not accounted in VmPin");
		CHECK(pin_after == 0, "pages still pinned after completion");
		pldma_close(raw);
		pu_drop(dst, big);
	}

	ret = pldma_copy(ch, dst, src, big, PLDMA_STRAT_PIN, 0, &r);
	printf("# pin 4 MiB with RLIMIT_MEMLOCK 1 MiB: ret %d (%s) status %u\n",
	       ret, strerror(-ret), r.status);
	CHECK(ret == -ENOMEM, "pin over the memlock limit: ret %d status %u",
	      ret, r.status);
	CHECK(vm_pin_kb() == 0, "VmPin %ld kB after the refused pin",
	      vm_pin_kb());

	for (i = 0; i < sizeof(strategies) / sizeof(strategies[0]); i++) {
		char name[16];

		ch = pu_chan_for(strategies[i]);
		if (!ch || !pldma_supports(ch, strategies[i]))
			continue;
		pldma_strategy_name(strategies[i], 16, name, sizeof(name));
		pu_drop(src, big);
		pu_drop(dst, big);
		ret = pldma_copy(ch, dst, src, big, strategies[i], 16, &r);
		printf("# %s 4 MiB with RLIMIT_MEMLOCK 1 MiB: ret %d status %u\n",
		       name, ret, r.status);
		CHECK(!ret && r.status == PLDMA_ST_SUCCESS &&
		      pu_verify(dst, big, 41) < 0, "%s failed", name);
	}
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* PASIDs and channels                                                 */
/* ------------------------------------------------------------------ */

static int cmd_pasid(int argc, char **argv)
{
	const char *dev = argc > 0 ? argv[0] : "/dev/pldma0";
	struct pldma_chan *held[PLDMA_MAX_CHANNELS];
	int nheld = 0, i, nchild = 300, busy = 0, other = 0, st, fd;
	pid_t *kids = calloc(nchild, sizeof(*kids));
	int pfd[2];
	pid_t pid;
	char c;

	while (nheld < PLDMA_MAX_CHANNELS &&
	       (held[nheld] = pldma_open(dev)) != NULL)
		nheld++;
	if (!nheld)
		return SKIP;
	printf("# holding all %d channels of %s\n", nheld, dev);
	if (pipe(pfd))
		return 1;
	for (i = 0; i < nchild; i++) {
		kids[i] = fork();
		if (!kids[i]) {
			int k;

			/* the parent's channels must not stay open in here */
			for (k = 0; k < nheld; k++)
				close(pldma_fd(held[k]));
			fd = open(dev, O_RDWR);
			c = fd >= 0 ? 'o' : errno == EBUSY ? 'b' : 'x';
			if (write(pfd[1], &c, 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		if (read(pfd[0], &c, 1) != 1)
			break;
		if (c == 'b')
			busy++;
		else
			other++;
	}
	printf("# %d processes tried to open: %d EBUSY, %d other results\n",
	       nchild, busy, other);
	CHECK(busy == nchild, "%d opens did not fail with EBUSY", other);
	pldma_close(held[--nheld]);
	pid = fork();
	if (!pid) {
		for (i = 0; i < nheld; i++)
			close(pldma_fd(held[i]));
		fd = open(dev, O_RDWR);
		printf("# a new process opens the freed channel: %s\n",
		       fd >= 0 ? "ok" : strerror(errno));
		_exit(fd >= 0 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st),
	      "freed channel cannot be opened: PASIDs used up by failed opens");
	for (i = 0; i < nchild; i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], &st, 0);
		}
	}
	while (nheld)
		pldma_close(held[--nheld]);
	return fails ? 1 : 0;
}

static int cmd_userlimit(int argc, char **argv)
{
	const char *dev = argc > 0 ? argv[0] : "/dev/pldma0";
	int limit = argc > 1 ? atoi(argv[1]) : 2;
	int fds[PLDMA_MAX_CHANNELS], n = 0, err = 0, st;
	pid_t pid;

	pid = fork();
	if (!pid) {
		if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
			_exit(3);
		while (n < PLDMA_MAX_CHANNELS) {
			fds[n] = open(dev, O_RDWR);
			if (fds[n] < 0) {
				err = errno;
				break;
			}
			n++;
		}
		printf("# uid 1000 opened %d channels of %s, then: %s\n", n,
		       dev, strerror(err));
		_exit(n == limit && err == EDQUOT ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st),
	      "an unprivileged user is not limited to %d channels", limit);
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Touch-ahead clamp, mmap flags                                       */
/* ------------------------------------------------------------------ */

static int cmd_touchclamp(void)
{
	size_t size = 64 << 10;
	struct pldma_chan *ch = pu_chan_for(PLDMA_STRAT_TOUCH);
	uint8_t *src, *dst;
	struct pldma_result r;
	long res;
	int ret, fd;

	if (!ch)
		return SKIP;
	src = pu_dst_alloc(size, 0);
	memset(src, 0x3c, size);
	/* destination: a shared file, its neighbours must stay clean */
	fd = memfd_create("pldma-dst", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, size))
		return 1;
	dst = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	madvise(dst, size, MADV_NOHUGEPAGE);
	ret = pldma_copy(ch, dst, src, PG, PLDMA_STRAT_TOUCH, 16, &r);
	res = pu_resident(dst, size);
	printf("# touch16, 4 KiB copy into a 64 KiB shared mapping: status %u, %ld pages of it mapped, %llu touch-ahead pages\n",
	       r.status, res, (unsigned long long)r.touch_pages);
	CHECK(!ret && r.status == PLDMA_ST_SUCCESS && dst[100] == 0x3c,
	      "copy failed");
	CHECK(res == 1, "touch-ahead mapped %ld pages for a 1-page transfer",
	      res);
	munmap(dst, size);

	/* 3 pages from the middle of the source: at most 3 made present */
	dst = pu_dst_alloc(size, 0);
	ret = pldma_copy(ch, dst + 5 * PG, src, 3 * PG, PLDMA_STRAT_TOUCH,
			 512, &r);
	res = pu_resident(dst, size);
	printf("# touch512, 12 KiB copy: %ld pages of the destination mapped\n",
	       res);
	CHECK(!ret && r.status == PLDMA_ST_SUCCESS, "copy failed");
	CHECK(res == 3, "touch-ahead mapped %ld pages for a 3-page transfer",
	      res);
	return fails ? 1 : 0;
}

static int cmd_mmapflags(void)
{
	struct pldma_chan *ch = pldma_open(NULL);
	char line[256], flags[256] = "";
	int fd, in = 0;
	void *p;
	FILE *f;

	if (!ch)
		return SKIP;
	fd = pldma_fd(ch);
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	printf("# MAP_PRIVATE mmap of the channel page: %s\n",
	       p == MAP_FAILED ? strerror(errno) : "accepted");
	CHECK(p == MAP_FAILED && errno == EINVAL,
	      "MAP_PRIVATE mapping of the channel page accepted");
	if (p != MAP_FAILED) {
		/* what a write does to it: copy-on-write RAM, not MMIO */
		((volatile uint32_t *)p)[PLDMA_CH_RING_TAIL / 4] = 0;
		munmap(p, PG);
	}
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "MAP_SHARED mmap failed");
	f = fopen("/proc/self/smaps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx ", &a, &b) == 2)
			in = a == (uintptr_t)p;
		else if (in && !strncmp(line, "VmFlags:", 8))
			snprintf(flags, sizeof(flags), "%s", line + 8);
	}
	if (f)
		fclose(f);
	flags[strcspn(flags, "\n")] = 0;
	printf("# channel page VmFlags:%s\n", flags);
	CHECK(strstr(flags, " io") && strstr(flags, " pf") &&
	      strstr(flags, " de") && strstr(flags, " dd"),
	      "missing I/O VMA flags");
	pldma_close(ch);
	return fails ? 1 : 0;
}

/*
 * Queue pairs on a device without a link: no QP to create, nothing to
 * touch, and a bad pointer is EFAULT, not a crash.
 */
static int cmd_noqp(void)
{
	struct pldma_chan *ch = pldma_open(NULL);
	struct pldma_qp_create c = { 0 };
	struct pldma_qp_attr a = { .qpn = 0x1234, .attr_mask = PLDMA_QPA_STATE,
				   .qp_state = PLDMA_QPS_ERR };
	struct pldma_qp_destroy d = { .qpn = 0x1234 };
	struct pldma_qp_info l;
	int fd;

	if (!ch)
		return SKIP;
	fd = pldma_fd(ch);
	CHECK(pldma_info(ch)->num_qps == 0 && pldma_info(ch)->ip == 0,
	      "INFO reports QPs without a link");
	CHECK(ioctl(fd, PLDMA_IOC_QP_CREATE, &c) && errno == EOPNOTSUPP,
	      "QP_CREATE without a link is not EOPNOTSUPP");
	CHECK(pldma_qp_create(ch, &l) == -EOPNOTSUPP,
	      "pldma_qp_create() without a link is not EOPNOTSUPP");
	CHECK(ioctl(fd, PLDMA_IOC_QP_MODIFY, &a) && errno == ENOENT,
	      "QP_MODIFY of a made-up QPN is not ENOENT");
	CHECK(ioctl(fd, PLDMA_IOC_QP_QUERY, &a) && errno == ENOENT,
	      "QP_QUERY of a made-up QPN is not ENOENT");
	CHECK(ioctl(fd, PLDMA_IOC_QP_DESTROY, &d) && errno == ENOENT,
	      "QP_DESTROY of a made-up QPN is not ENOENT");
	CHECK(ioctl(fd, PLDMA_IOC_QP_MODIFY, (void *)16) && errno == EFAULT,
	      "QP_MODIFY of a bad pointer is not EFAULT");
	CHECK(ioctl(fd, PLDMA_IOC_QP_CREATE, (void *)16) && errno == EFAULT,
	      "QP_CREATE of a bad pointer is not EFAULT");
	a.attr_mask = PLDMA_QPA_PD;
	CHECK(ioctl(fd, PLDMA_IOC_QP_MODIFY, &a) && errno == EINVAL,
	      "QP_MODIFY with the PD in the mask is not EINVAL");
	pldma_close(ch);
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Fault tokens after an overflow of the fault queue                   */
/* ------------------------------------------------------------------ */

#define TOK_CH 3
#define TOK_MAX 512

struct tok_ctx {
	struct pldma_chan *ch;
	uint32_t seq[TOK_MAX];
	int n, stale_ok, stale_tried;
};

static void *tok_thread(void *arg)
{
	struct tok_ctx *t = arg;
	int fd = pldma_fd(t->ch);
	uint32_t prev = 0;
	int have_prev = 0, idle = 0;

	while (idle < 20 && t->n < TOK_MAX) {
		struct pldma_fault f = { .timeout_ms = 50 };
		struct pldma_fault_resolve r = { 0 };

		if (ioctl(fd, PLDMA_IOC_FAULT_GET, &f)) {
			idle++;
			continue;
		}
		idle = 0;
		t->seq[t->n++] = f.seq;
		/* a stale answer for the previous fault must not act */
		if (have_prev && prev != f.seq) {
			r.seq = prev;
			r.action = PLDMA_RESOLVE_CANCEL;
			t->stale_tried++;
			if (!ioctl(fd, PLDMA_IOC_FAULT_RESOLVE, &r))
				t->stale_ok++;
		}
		if (have_prev && prev == f.seq)
			t->stale_tried++;
		pldma_fault_populate(t->ch, &f, NULL);
		r.seq = f.seq;
		r.action = PLDMA_RESOLVE_RESTART;
		ioctl(fd, PLDMA_IOC_FAULT_RESOLVE, &r);
		prev = f.seq;
		have_prev = 1;
	}
	return NULL;
}

static long dbg_stat(const char *name)
{
	char line[128], path[64];
	long v = -1;
	size_t n = strlen(name);
	FILE *f;
	int i;

	for (i = 0; i < 4 && v < 0; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/pldma/pldma%d/stats", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f) || !strstr(line, "report")) {
			fclose(f);
			continue;
		}
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, name, n) && line[n] == ':')
				v = atol(line + n + 1);
		fclose(f);
	}
	return v;
}

static int cmd_tokens(void)
{
	size_t size = 256 << 10;
	struct tok_ctx t[TOK_CH];
	pthread_t thr[TOK_CH];
	uint8_t *src[TOK_CH], *dst[TOK_CH];
	unsigned int slot[TOK_CH];
	long ovf0 = dbg_stat("fq_overflows");
	int i, j, k, dup = 0, stale_ok = 0, bad = 0, nseq = 0;

	for (i = 0; i < TOK_CH; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].ch = pldma_open_mode(PLDMA_MODE_REPORT);
		if (!t[i].ch)
			return SKIP;
		src[i] = pu_src_alloc(size, 50 + i);
		dst[i] = pu_dst_alloc(size, 0);
	}
	for (i = 0; i < TOK_CH; i++)
		pthread_create(&thr[i], NULL, tok_thread, &t[i]);
	/* doorbells back to back: the faults arrive together */
	for (i = 0; i < TOK_CH; i++) {
		struct pldma_xfer x = {
			.opcode = PLDMA_OP_COPY, .dst = dst[i], .src = src[i],
			.len = size, .strategy = PLDMA_STRAT_USER,
		};

		CHECK(!pldma_submit(t[i].ch, &x, &slot[i]), "submit");
	}
	for (i = 0; i < TOK_CH; i++) {
		struct pldma_result r;

		pldma_wait(t[i].ch, slot[i], 20000, &r);
		if (r.status != PLDMA_ST_SUCCESS ||
		    pu_verify(dst[i], size, 50 + i) >= 0)
			bad++;
	}
	for (i = 0; i < TOK_CH; i++) {
		pthread_join(thr[i], NULL);
		nseq += t[i].n;
		stale_ok += t[i].stale_ok;
		for (j = 0; j < t[i].n; j++)
			for (k = 0; k < j; k++)
				if (t[i].seq[j] == t[i].seq[k]) {
					dup++;
					break;
				}
		pldma_close(t[i].ch);
	}
	printf("# %d channels, %d forwarded faults, fault queue overflows %ld, duplicate tokens %d, stale answers accepted %d, failed transfers %d\n",
	       TOK_CH, nseq, dbg_stat("fq_overflows") - ovf0, dup, stale_ok,
	       bad);
	CHECK(dbg_stat("fq_overflows") > ovf0,
	      "the fault queue never overflowed (load with fq_entries=2)");
	CHECK(!dup, "%d fault tokens reused on the same channel", dup);
	CHECK(!stale_ok, "%d stale RESOLVEs acted on a later fault", stale_ok);
	CHECK(!bad, "%d transfers failed", bad);
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Bounded time: a resolver that never makes progress                 */
/* ------------------------------------------------------------------ */

static int slow_noop(struct pldma_chan *ch, const struct pldma_fault *f,
		     void *arg)
{
	(void)ch;
	(void)f;
	(void)arg;
	usleep(300000);
	return 0;	/* RESTART, without making the page present */
}

static int cmd_slowuser(void)
{
	struct pldma_chan *ch = pldma_open_mode(PLDMA_MODE_REPORT);
	size_t size = 64 << 10;
	uint8_t *src = pu_src_alloc(size, 61), *dst = pu_dst_alloc(size, 0);
	struct pldma_result r;
	int ret;

	if (!ch)
		return SKIP;
	pldma_fault_thread_start(ch, slow_noop, NULL);
	ret = pldma_copy(ch, dst, src, size, PLDMA_STRAT_USER, 0, &r);
	printf("# resolver answers RESTART every 300 ms without making the page present: ret %d status %u after %.0f ms, %llu faults\n",
	       ret, r.status, r.time_ns / 1e6,
	       (unsigned long long)pldma_fault_thread_count(ch));
	CHECK(!ret && r.status == PLDMA_ST_CANCELLED, "status %u", r.status);
	CHECK(r.time_ns < 1600000000ull, "no progress for %.1f s before the error",
	      r.time_ns / 1e9);
	pldma_fault_thread_stop(ch);
	pldma_close(ch);
	return fails ? 1 : 0;
}

/*
 * A transfer that moves is not timed out: every fault is answered after
 * 150 ms, the copy takes far longer than pldma_run()'s timeout of 500 ms,
 * but it never stops making progress for that long.
 */
static int slow_populate(struct pldma_chan *ch, const struct pldma_fault *f,
			 void *arg)
{
	usleep(150000);
	return pldma_fault_populate(ch, f, arg);
}

static int cmd_slowprogress(void)
{
	struct pldma_chan *ch = pldma_open_mode(PLDMA_MODE_REPORT);
	size_t size = 16 << 12;
	uint8_t *src = pu_src_alloc(size, 67), *dst = pu_dst_alloc(size, 0);
	struct pldma_xfer x = {
		.opcode = PLDMA_OP_COPY,
		.dst = dst,
		.src = src,
		.len = size,
		.strategy = PLDMA_STRAT_USER,
	};
	struct pldma_result r;
	int ret;

	if (!ch)
		return SKIP;
	pldma_fault_thread_start(ch, slow_populate, NULL);
	ret = pldma_run(ch, &x, 500, &r);
	printf("# 16 pages, each fault answered after 150 ms, timeout 500 ms: ret %d status %u after %.0f ms, %llu faults\n",
	       ret, r.status, r.time_ns / 1e6,
	       (unsigned long long)pldma_fault_thread_count(ch));
	CHECK(!ret && r.status == PLDMA_ST_SUCCESS,
	      "a transfer that made progress timed out (ret %d status %u)",
	      ret, r.status);
	CHECK(!ret && pu_verify(dst, size, 67) < 0, "destination differs");
	pldma_fault_thread_stop(ch);
	pldma_close(ch);
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* libpldma's fault thread on a persistent error                       */
/* ------------------------------------------------------------------ */

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int cmd_fthread(void)
{
	struct pldma_chan *ch = pldma_open_mode(PLDMA_MODE_REPORT);
	double c0, c1;
	int null;

	if (!ch)
		return SKIP;
	pldma_fault_thread_start(ch, NULL, NULL);
	usleep(100000);
	/* the channel's descriptor now refers to something else: every
	 * FAULT_GET fails with ENOTTY
	 */
	null = open("/dev/null", O_RDWR);
	dup2(null, pldma_fd(ch));
	close(null);
	c0 = cpu_s();
	sleep(1);
	c1 = cpu_s();
	printf("# fault thread on a descriptor that is not a PLDMA: %.0f ms of CPU in 1 s\n",
	       (c1 - c0) * 1000);
	CHECK(c1 - c0 < 0.2, "the fault thread spins");
	pldma_close(ch);
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Valid transfers under compaction, THP collapse and MADV_DONTNEED    */
/* ------------------------------------------------------------------ */

struct race {
	uint8_t *src, *dst;
	size_t size;
	volatile int stop;
	unsigned long drops, collapses;
	int collapse_err;
};

static void *race_thread(void *arg)
{
	struct race *r = arg;

	while (!r->stop) {
		/* the source is a file: dropping its mapping keeps the data */
		if (!madvise(r->src, r->size, MADV_DONTNEED))
			r->drops++;
		if (!madvise(r->dst, r->size, MADV_COLLAPSE))
			r->collapses++;
		else
			r->collapse_err = errno;
		usleep(2000);
	}
	return NULL;
}

#define NSTAT 5
static const char *const stat_names[NSTAT] = {
	"cancels_no_progress", "cancels_refault_limit", "cancels_unresolved",
	"refaults_after_move", "completion_records_dropped",
};

static int cmd_compact(int argc, char **argv)
{
	long st0[NSTAT];
	size_t size = 1 << 20;
	int strategy, n, i, cancelled = 0, other = 0, bad = 0, race = 0;
	unsigned int touch;
	struct pldma_chan *ch;
	uint8_t *src, *dst;
	struct race rc = { 0 };
	pthread_t rthr;
	char name[16];
	pid_t pid;
	double t0;

	if (argc < 2 || pldma_strategy_parse(argv[0], &strategy, &touch))
		return 2;
	n = atoi(argv[1]);
	race = argc > 2 && !strcmp(argv[2], "race");
	if (race)
		size = 2 << 20;	/* one huge page to collapse */
	ch = pu_chan_for(strategy);
	if (!ch || !pldma_supports(ch, strategy))
		return SKIP;
	pldma_strategy_name(strategy, touch, name, sizeof(name));
	src = pu_src_alloc(size, 71);
	dst = pu_dst_alloc(size, race ? 1 : -1);
	for (i = 0; i < NSTAT; i++)
		st0[i] = dbg_stat(stat_names[i]);
	pid = fork();
	if (!pid) {
		for (;;) {
			int fd = open("/proc/sys/vm/compact_memory", O_WRONLY);

			if (fd < 0 || write(fd, "1", 1) != 1)
				_exit(3);
			close(fd);
		}
	}
	if (race) {
		rc.src = src;
		rc.dst = dst;
		rc.size = size;
		pthread_create(&rthr, NULL, race_thread, &rc);
	}
	t0 = now_s();
	for (i = 0; i < n; i++) {
		struct pldma_result r;
		int ret;

		pu_drop(src, size);
		pu_drop(dst, size);
		ret = pldma_copy(ch, dst, src, size, strategy, touch, &r);
		if (!ret && r.status == PLDMA_ST_CANCELLED)
			cancelled++;
		else if (ret || r.status != PLDMA_ST_SUCCESS)
			other++;
		else if (pu_verify(dst, size, 71) >= 0)
			bad++;
		if (ret || r.status != PLDMA_ST_SUCCESS)
			printf("# %s iter %d: ret %d status %u bytes %llu va %#llx; channel state %u completed %u last status %u head %u tail %u\n",
			       name, i, ret, r.status,
			       (unsigned long long)r.bytes,
			       (unsigned long long)r.fault_va,
			       pldma_reg(ch, PLDMA_CH_STATE),
			       pldma_reg(ch, PLDMA_CH_COMPLETED),
			       pldma_reg(ch, PLDMA_CH_LAST_STATUS),
			       pldma_reg(ch, PLDMA_CH_RING_HEAD),
			       pldma_reg(ch, PLDMA_CH_RING_TAIL));
	}
	rc.stop = 1;
	if (race)
		pthread_join(rthr, NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("# %s, %d x %zu KiB while compacting%s in a loop (%.1f s): %d CANCELLED, %d other errors, %d with wrong data%s\n",
	       name, n, size >> 10,
	       race ? " + MADV_DONTNEED + MADV_COLLAPSE" : "",
	       now_s() - t0, cancelled, other, bad, "");
	if (race)
		printf("# %lu source drops, %lu collapses (last error: %s)\n",
		       rc.drops, rc.collapses, strerror(rc.collapse_err));
	if (mode_for(strategy) != PLDMA_MODE_STALL && st0[0] >= 0) {
		printf("# report-mode driver:");
		for (i = 0; i < NSTAT; i++)
			printf(" %s +%ld", stat_names[i],
			       dbg_stat(stat_names[i]) - st0[i]);
		printf("\n");
	}
	CHECK(!cancelled && !other && !bad, "valid transfers failed");
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: pldma-hostile CMD [ARGS]\n");
		return 2;
	}
	if (!strcmp(argv[1], "uffd"))
		ret = cmd_uffd(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "memlock"))
		ret = cmd_memlock();
	else if (!strcmp(argv[1], "pasid"))
		ret = cmd_pasid(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "userlimit"))
		ret = cmd_userlimit(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "touchclamp"))
		ret = cmd_touchclamp();
	else if (!strcmp(argv[1], "mmapflags"))
		ret = cmd_mmapflags();
	else if (!strcmp(argv[1], "noqp"))
		ret = cmd_noqp();
	else if (!strcmp(argv[1], "tokens"))
		ret = cmd_tokens();
	else if (!strcmp(argv[1], "slowuser"))
		ret = cmd_slowuser();
	else if (!strcmp(argv[1], "slowprogress"))
		ret = cmd_slowprogress();
	else if (!strcmp(argv[1], "fthread"))
		ret = cmd_fthread();
	else if (!strcmp(argv[1], "compact"))
		ret = cmd_compact(argc - 2, argv + 2);
	else
		ret = 2;
	pu_chan_close_all();
	return ret;
}
