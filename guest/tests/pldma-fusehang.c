// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-fusehang DEVICE STATS [slow]: a stall-mode transfer whose fault the
 * filler never answers ends by itself (bounded time in
 * every strategy).
 *
 * A minimal FUSE server, written against /dev/fuse's raw protocol (no
 * libfuse), exposes one 1 MiB file and never answers a READ.  Process A
 * maps that file and uses it as the source of a COPY in stall mode: the
 * SMMU stalls the read, Linux's IOPF worker calls handle_mm_fault(), which
 * waits for the READ, so the channel stays STALLED.  The driver's
 * no-progress check must cancel it: the transfer completes with
 * PLDMA_ST_CANCELLED after about 1 s (asserted: 0.9 to 4 s), without
 * the caller's timeout (6 s here), and the device's cancels_no_progress
 * counter (debugfs STATS) goes up by exactly one.  Meanwhile process B copies
 * valid, not yet present memory on another channel of the same device in
 * stall mode: its stalls are served by other IOPF workers while A's is still
 * blocked, and its data is verified.  Then the server is killed: the blocked
 * fault fails, the IOPF worker lets go of A's mm, and the close() of both
 * channels, which waited for it (see the driver's pldma_ctx_unbind()),
 * return.  Their durations are printed.
 *
 * With "slow", the server answers every READ, after SLOW_MS (400 ms, less
 * than the driver's 1 s no-progress limit) each: A's COPY then takes several
 * READs, over 1 s in all, and must complete with SUCCESS, its data
 * verified, and no cancel: the check only fires when nothing moved for 1 s.
 *
 * Nothing waits without a bound: every wait for a child has a timeout, and
 * the server is killed first on every path, so without the driver's check
 * this test fails (A's WAIT times out) instead of hanging.
 *
 * Exits 0 on success, 1 on failure, 77 when there is no stall-mode device
 * or no FUSE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-check.h"

#define SKIP		77
#define MNT		"/tmp/fusehang"
#define FILE_NAME	"file"
#define FILE_SIZE	(1u << 20)
#define B_SIZE		(4u << 20)
#define A_TIMEOUT_MS	6000	/* the caller's timeout: must not be needed */
#define FILE_INO	2
#define SLOW_MS		400	/* per READ in "slow" mode */

static int slow;		/* answer READs after SLOW_MS */

/* Shared with the server, which is SIGKILLed and cannot report. */
struct shared {
	volatile uint32_t reads;	/* READ requests seen, none answered */
	volatile uint32_t requests;
};

static double now_s(void)
{
	return pldma_now_ns() / 1e9;
}

/* The file's content, answered in "slow" mode */
static uint8_t file_byte(uint64_t off)
{
	return (uint8_t)(off * 13 + (off >> 12));
}

/* ------------------------------------------------------------------ */
/* The FUSE server                                                    */
/* ------------------------------------------------------------------ */

static void fill_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	a->blksize = 4096;
	if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0444;
		a->size = FILE_SIZE;
		a->blocks = FILE_SIZE / 512;
	}
}

static void reply(int fd, uint64_t unique, int error, const void *arg,
		  size_t len)
{
	struct fuse_out_header h = {
		.len = sizeof(h) + (error ? 0 : len),
		.error = error,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ &h, sizeof(h) },
		{ (void *)arg, error ? 0 : len },
	};

	/* ENOENT: the request was interrupted or the kernel gave up on it */
	if (writev(fd, iov, 2) < 0 && errno != ENOENT)
		perror("fuse reply");
}

static void serve(int fd, struct shared *sh)
{
	static char buf[FUSE_MIN_READ_BUFFER + (128 << 10)];
	struct fuse_in_header *in = (void *)buf;
	void *arg = buf + sizeof(*in);

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			if (errno != ENODEV)	/* unmounted */
				perror("read /dev/fuse");
			_exit(0);
		}
		if ((size_t)n < sizeof(*in))
			continue;
		sh->requests++;
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *ii = arg;
			struct fuse_init_out o = {
				.major = FUSE_KERNEL_VERSION,
				.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
					 ii->minor : FUSE_KERNEL_MINOR_VERSION,
				.max_readahead = 128 << 10,
				.max_write = 4096,
			};

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o;

			if (in->nodeid != FUSE_ROOT_ID ||
			    strcmp(arg, FILE_NAME)) {
				reply(fd, in->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&o, 0, sizeof(o));
			o.nodeid = FILE_INO;
			o.generation = 1;
			o.entry_valid = 3600;
			o.attr_valid = 3600;
			fill_attr(&o.attr, FILE_INO);
			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o;

			memset(&o, 0, sizeof(o));
			o.attr_valid = 3600;
			fill_attr(&o.attr, in->nodeid);
			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			struct fuse_open_out o = { .fh = 1 };

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ: {
			const struct fuse_read_in *r = arg;
			static uint8_t data[128 << 10];
			uint64_t i, len = 0;

			sh->reads++;
			if (!slow)
				break;	/* never answered */
			if (r->offset < FILE_SIZE)
				len = FILE_SIZE - r->offset;
			if (len > r->size)
				len = r->size;
			if (len > sizeof(data))
				len = sizeof(data);
			for (i = 0; i < len; i++)
				data[i] = file_byte(r->offset + i);
			usleep(SLOW_MS * 1000);
			reply(fd, in->unique, 0, data, len);
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
		case FUSE_DESTROY:
			reply(fd, in->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;		/* no reply */
		default:
			reply(fd, in->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
}

/* Mounts MNT and serves it; writes one int (0 or errno) to @ready. */
static void server(int ready, struct shared *sh)
{
	char opts[128];
	int fd, err = 0;

	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
	} else {
		snprintf(opts, sizeof(opts),
			 "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
		if (mount("pldma-fusehang", MNT, "fuse", MS_NOSUID | MS_NODEV,
			  opts))
			err = errno;
	}
	if (write(ready, &err, sizeof(err)) != sizeof(err) || err)
		_exit(1);
	close(ready);
	serve(fd, sh);
}

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

/* Read exactly @len bytes from @fd within @ms; 0, or -1 (timeout, EOF). */
static int read_within(int fd, void *buf, size_t len, int ms)
{
	double end = now_s() + ms / 1e3;
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)((end - now_s()) * 1e3);
		ssize_t n;

		if (left < 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

/* waitpid() with a bound: the exit status, or -1 when it did not exit. */
static int wait_within(pid_t pid, int ms)
{
	double end = now_s() + ms / 1e3;
	int st;

	do {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0)
			return -1;
		usleep(10000);
	} while (now_s() < end);
	return -1;
}

/* The "cancels_no_progress: N" line of the device's debugfs stats. */
static long long cancels_no_progress(const char *stats)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen(stats, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cancels_no_progress: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* What A and B report, once after the transfer and once after close(). */
struct msg {
	int ret;		/* 0, -errno, or 1: data mismatch */
	uint32_t status;
	uint64_t bytes;
	uint64_t fault_va;
	uint64_t base;
	uint64_t time_ns;
};

static void send_msg(int fd, const struct msg *m)
{
	if (write(fd, m, sizeof(*m)) != sizeof(*m))
		_exit(2);
}

/* A: COPY from the FUSE file, never readable, in stall mode. */
static void proc_a(const char *dev, int out)
{
	struct pldma_result res;
	struct pldma_chan *ch;
	struct pldma_xfer x;
	struct msg m = { 0 };
	uint64_t t;
	void *src, *dst;
	int fd;

	ch = pldma_open(dev);
	fd = open(MNT "/" FILE_NAME, O_RDONLY);
	src = fd < 0 ? MAP_FAILED :
	      mmap(NULL, FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	dst = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!ch || src == MAP_FAILED || dst == MAP_FAILED) {
		m.ret = -(errno ? errno : EIO);
		send_msg(out, &m);
		send_msg(out, &m);
		_exit(1);
	}
	memset(&x, 0, sizeof(x));
	x.opcode = PLDMA_OP_COPY;
	x.dst = dst;
	x.src = src;
	x.len = FILE_SIZE;
	x.strategy = PLDMA_STRAT_STALL;
	m.ret = pldma_run(ch, &x, slow ? 30000 : A_TIMEOUT_MS, &res);
	if (slow && !m.ret && res.status == PLDMA_ST_SUCCESS) {
		size_t i;

		for (i = 0; i < FILE_SIZE; i++)
			if (((uint8_t *)dst)[i] != file_byte(i))
				m.ret = 1;
	}
	m.status = res.status;
	m.bytes = res.bytes;
	m.fault_va = res.fault_va;
	m.base = (uintptr_t)src;
	m.time_ns = res.time_ns;
	send_msg(out, &m);
	/* waits for the IOPF worker still blocked in the filler */
	t = pldma_now_ns();
	pldma_close(ch);
	m.time_ns = pldma_now_ns() - t;
	send_msg(out, &m);
	_exit(0);
}

/* B: a valid COPY on another channel, destination not yet present. */
static void proc_b(const char *dev, int out)
{
	struct pldma_result res;
	struct pldma_chan *ch;
	struct msg m = { 0 };
	uint8_t *src, *dst;
	uint64_t t;
	size_t i;

	ch = pldma_open(dev);
	src = mmap(NULL, B_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, B_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ch || src == MAP_FAILED || dst == MAP_FAILED) {
		m.ret = -(errno ? errno : EIO);
		send_msg(out, &m);
		send_msg(out, &m);
		_exit(1);
	}
	for (i = 0; i < B_SIZE; i++)
		src[i] = (uint8_t)(i * 7 + (i >> 12));
	m.ret = pldma_copy(ch, dst, src, B_SIZE, PLDMA_STRAT_STALL, 0, &res);
	m.status = res.status;
	m.bytes = res.bytes;
	m.time_ns = res.time_ns;
	m.fault_va = res.faults;
	if (!m.ret && memcmp(src, dst, B_SIZE))
		m.ret = 1;
	send_msg(out, &m);
	t = pldma_now_ns();
	pldma_close(ch);
	m.time_ns = pldma_now_ns() - t;
	send_msg(out, &m);
	_exit(0);
}

static pid_t spawn(void (*fn)(const char *, int), const char *dev, int *rd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		fn(dev, p[1]);
	}
	close(p[1]);
	*rd = p[0];
	return pid;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/pldma0";
	const char *stats = argc > 2 ? argv[2] :
			    "/sys/kernel/debug/pldma/pldma0/stats";
	struct msg a = { 0 }, a2 = { 0 }, b = { 0 }, b2 = { 0 };
	pid_t srv, pa = -1, pb = -1;
	long long c0, c1;
	int ready[2], ra = -1, rb = -1, err = 0, st;
	double t_kill, t;
	struct pldma_chan *probe;
	struct shared *sh;
	struct stat sb;

	setvbuf(stdout, NULL, _IOLBF, 0);
	slow = argc > 3 && !strcmp(argv[3], "slow");
	probe = pldma_open(dev);
	if (!probe || pldma_fault_mode(probe) != PLDMA_MODE_STALL) {
		printf("# %s: not a stall-mode PLDMA\n", dev);
		return SKIP;
	}
	pldma_close(probe);
	if (access("/dev/fuse", R_OK | W_OK)) {
		printf("# no /dev/fuse\n");
		return SKIP;
	}
	c0 = cancels_no_progress(stats);
	if (c0 < 0) {
		printf("# cannot read cancels_no_progress from %s\n", stats);
		return 1;
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	mkdir(MNT, 0755);
	if (sh == MAP_FAILED || pipe(ready))
		return 1;
	srv = fork();
	if (srv == 0) {
		close(ready[0]);
		server(ready[1], sh);
	}
	close(ready[1]);
	if (read_within(ready[0], &err, sizeof(err), 5000) || err) {
		printf("# FUSE mount failed: %s\n", strerror(err ? err : EIO));
		kill(srv, SIGKILL);
		waitpid(srv, NULL, 0);
		return err == ENODEV ? SKIP : 1;
	}
	close(ready[0]);
	/* LOOKUP and GETATTR, answered */
	if (stat(MNT "/" FILE_NAME, &sb) || sb.st_size != FILE_SIZE) {
		printf("# FAIL: stat of the FUSE file: %s\n", strerror(errno));
		fails++;
		goto out;
	}

	/* A: its READ reaches the server (and stays unanswered) */
	pa = spawn(proc_a, dev, &ra);
	for (t = now_s() + 5; !sh->reads && now_s() < t;)
		usleep(10000);
	CHECK(sh->reads, "the server got no READ within 5 s");
	if (slow) {
		if (read_within(ra, &a, sizeof(a), 35000)) {
			printf("# FAIL: A did not report within 35 s\n");
			fails++;
			goto out;
		}
		printf("# A: COPY from the FUSE file, every READ answered after "
		       "%d ms: %s after %.3f s, status %u, %u READs\n", SLOW_MS,
		       a.ret == 1 ? "data mismatch" : a.ret ?
		       strerror(-a.ret) : "verified", a.time_ns / 1e9,
		       a.status, sh->reads);
		CHECK(!a.ret && a.status == PLDMA_ST_SUCCESS,
		      "A: ret %d, status %u", a.ret, a.status);
		/* otherwise it proves nothing about the limit */
		CHECK(a.time_ns > 1000000000ull,
		      "A: took %.3f s, not longer than the 1 s limit",
		      a.time_ns / 1e9);
		c1 = cancels_no_progress(stats);
		printf("# cancels_no_progress: %lld -> %lld\n", c0, c1);
		CHECK(c1 == c0, "cancels_no_progress went from %lld to %lld",
		      c0, c1);
		goto out;
	}

	/* B, while A's fault is blocked in the filler */
	pb = spawn(proc_b, dev, &rb);
	if (read_within(rb, &b, sizeof(b), 20000)) {
		printf("# FAIL: B did not finish its copy within 20 s\n");
		fails++;
	} else {
		printf("# B: 4 MiB stall-mode copy beside the blocked fault: "
		       "%s, status %u, %llu stalls, %.1f ms, server READs %u "
		       "(none answered)\n",
		       b.ret == 1 ? "data mismatch" : b.ret ? strerror(-b.ret) :
		       "verified", b.status, (unsigned long long)b.fault_va,
		       b.time_ns / 1e6, sh->reads);
		CHECK(!b.ret && b.status == PLDMA_ST_SUCCESS,
		      "B: ret %d, status %u", b.ret, b.status);
	}

	if (read_within(ra, &a, sizeof(a), A_TIMEOUT_MS + 5000)) {
		printf("# FAIL: A did not report within %d ms\n",
		       A_TIMEOUT_MS + 5000);
		fails++;
	} else {
		printf("# A: COPY from the unanswered FUSE file: %s after %.3f s",
		       a.ret ? strerror(-a.ret) : "completed", a.time_ns / 1e9);
		if (!a.ret)
			printf(", status %u, %llu bytes done, fault at source + %#llx",
			       a.status, (unsigned long long)a.bytes,
			       (unsigned long long)(a.fault_va - a.base));
		printf("\n");
		CHECK(!a.ret, "A: WAIT failed: %s (no cancel within the "
		      "caller's %d ms)", strerror(-a.ret), A_TIMEOUT_MS);
		CHECK(a.ret || a.status == PLDMA_ST_CANCELLED,
		      "A: status %u, expected CANCELLED (%u)", a.status,
		      PLDMA_ST_CANCELLED);
		CHECK(a.ret || (a.time_ns >= 900000000ull &&
			       a.time_ns <= 4000000000ull),
		      "A: took %.3f s, expected 0.9 to 4 s", a.time_ns / 1e9);
		CHECK(a.ret || (a.bytes < FILE_SIZE && a.fault_va >= a.base &&
			       a.fault_va < a.base + FILE_SIZE),
		      "A: fault VA %#llx outside the source",
		      (unsigned long long)a.fault_va);
	}
	c1 = cancels_no_progress(stats);
	printf("# cancels_no_progress: %lld -> %lld\n", c0, c1);
	CHECK(c1 == c0 + 1, "cancels_no_progress went from %lld to %lld",
	      c0, c1);

out:
	/* The server goes first: everything else may be waiting for it. */
	printf("# server: %u requests, %u READs%s; killing it\n",
	       sh->requests, sh->reads, slow ? "" : " unanswered");
	t_kill = now_s();
	kill(srv, SIGKILL);
	st = wait_within(srv, 10000);
	CHECK(st >= 0, "the FUSE server did not exit");
	if (pa > 0) {
		if (read_within(ra, &a2, sizeof(a2), 10000)) {
			printf("# FAIL: A's close() did not return within 10 s "
			       "of the server's death\n");
			fails++;
		} else {
			printf("# A: close() took %.3f s, returned %.3f s after "
			       "the server was killed\n", a2.time_ns / 1e9,
			       now_s() - t_kill);
		}
		st = wait_within(pa, 10000);
		CHECK(st == 0, "A exited with %d", st);
	}
	if (pb > 0) {
		if (read_within(rb, &b2, sizeof(b2), 10000)) {
			printf("# FAIL: B's close() did not return within 10 s "
			       "of the server's death\n");
			fails++;
		} else {
			printf("# B: close() took %.3f s\n", b2.time_ns / 1e9);
		}
		st = wait_within(pb, 10000);
		CHECK(st == 0, "B exited with %d", st);
	}
	if (umount2(MNT, MNT_DETACH))
		perror("umount " MNT);
	return fails ? 1 : 0;
}
