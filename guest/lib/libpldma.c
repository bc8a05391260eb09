// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libpldma: see pldma.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "pldma.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

#define RING_ENTRIES	64
#define PAGE		4096UL

struct pldma_cq {
	struct pldma_chan *ch;		/* its doorbell's channel (the PD) */
	unsigned int idx;
	unsigned int entries;
	volatile uint8_t *ring;		/* mapped read-only */
	size_t size;
	uint32_t ci;			/* CQEs consumed, mod 2^24 */
	uint32_t events;		/* events seen (pldma_cq_wait_event) */
	uint32_t qp_errors;
};

struct pldma_chan {
	int fd;
	volatile uint32_t *regs;
	struct pldma_info info;
	uint8_t *ring;			/* RING_ENTRIES descriptors */
	volatile uint8_t *compl;	/* one completion record per slot */
	unsigned int tail;
	int strategy;			/* last strategy told to the driver */
	unsigned int touch;
	uint32_t qpn;			/* the channel's QP, 0: none */
	int qp_rts;			/* connected: RDMA goes to its peer */
	/* its receive queue (the driver's memory, mapped) */
	uint8_t *rq;
	size_t rq_size;
	unsigned int rq_entries;
	unsigned int rq_tail;
	struct pldma_cq *cqs[PLDMA_MAX_FILE_CQS];

	pthread_t fthread;
	int fthread_on;
	volatile int fstop;
	pldma_fault_fn ffn;
	void *farg;
	volatile uint64_t fcount;
};

uint64_t pldma_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void wr_barrier(void)
{
#ifdef __aarch64__
	/* normal-memory stores (descriptor) before the device doorbell */
	__asm__ volatile("dsb st" ::: "memory");
#else
	__sync_synchronize();
#endif
}

int pldma_fd(const struct pldma_chan *ch)
{
	return ch->fd;
}

const struct pldma_info *pldma_info(const struct pldma_chan *ch)
{
	return &ch->info;
}

int pldma_fault_mode(const struct pldma_chan *ch)
{
	return ch->info.fault_mode;
}

const char *pldma_mode_name(const struct pldma_chan *ch)
{
	if (ch->info.fault_mode == PLDMA_MODE_STALL)
		return ch->info.cap & PLDMA_CAP_FAULT_PRI ? "pri" : "stall";
	return ch->info.fault_mode == PLDMA_MODE_REPORT ? "report" : "?";
}

uint32_t pldma_reg(const struct pldma_chan *ch, uint32_t off)
{
	return ch->regs[off / 4];
}

uint32_t pldma_hw_counter(const struct pldma_chan *ch, uint32_t off)
{
	return ch->regs[(PLDMA_CH_CNT_OFFSET + off) / 4];
}

/* uapi/pldma.h's table of strategies */
static const struct pldma_strategy_info strats[] = PLDMA_STRATEGY_TABLE;
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
static_assert(ARRAY_SIZE(strats) == PLDMA_STRAT_NUM, "a row per strategy");

unsigned int pldma_strategy_modes(int strategy)
{
	return strategy >= 0 && strategy < PLDMA_STRAT_NUM ?
	       strats[strategy].modes : 0;
}

unsigned int pldma_strategy_window(int strategy)
{
	return strategy >= 0 && strategy < PLDMA_STRAT_NUM ?
	       strats[strategy].window : 0;
}

int pldma_supports(const struct pldma_chan *ch, int strategy)
{
	if (strategy < 0 || strategy >= PLDMA_STRAT_NUM ||
	    ch->info.fault_mode >= 32)
		return 0;
	return !!(strats[strategy].modes &
		  PLDMA_MODE_BIT(ch->info.fault_mode));
}

const char *pldma_strategy_name(int strategy, unsigned int touch, char *buf,
				size_t len)
{
	if (strategy < 0 || strategy >= PLDMA_STRAT_NUM)
		snprintf(buf, len, "?%d", strategy);
	else if (strats[strategy].window)
		snprintf(buf, len, "%s%u", strats[strategy].name, touch);
	else
		snprintf(buf, len, "%s", strats[strategy].name);
	return buf;
}

const char *pldma_chan_strategy_name(const struct pldma_chan *ch,
				     int strategy, unsigned int touch,
				     char *buf, size_t len)
{
	if (strategy == PLDMA_STRAT_STALL && ch &&
	    ch->info.cap & PLDMA_CAP_FAULT_PRI) {
		snprintf(buf, len, "pri");
		return buf;
	}
	return pldma_strategy_name(strategy, touch, buf, len);
}

int pldma_strategy_parse(const char *s, int *strategy, unsigned int *touch)
{
	int i;

	*touch = 0;
	if (!strcmp(s, "pri")) {
		*strategy = PLDMA_STRAT_STALL;
		return 0;
	}
	for (i = 0; i < PLDMA_STRAT_NUM; i++) {
		size_t n = strlen(strats[i].name);
		unsigned long w = 16;
		char *end;

		if (strncmp(s, strats[i].name, n) ||
		    (s[n] && !strats[i].window))
			continue;
		/* a window: the name alone takes 16 pages */
		if (s[n]) {
			w = strtoul(s + n, &end, 10);
			if (*end)
				return -EINVAL;
		}
		if (strats[i].window && (w < 1 || w > strats[i].window))
			return -EINVAL;
		*strategy = i;
		*touch = strats[i].window ? w : 0;
		return 0;
	}
	return -EINVAL;
}

static struct pldma_chan *chan_open(const char *path, int quiet)
{
	struct pldma_version v;
	struct pldma_chan *ch;
	size_t rlen = RING_ENTRIES * PLDMA_DESC_SIZE;
	size_t clen = RING_ENTRIES * PLDMA_COMPL_SIZE;
	void *p;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return NULL;
	ch->fd = open(path, O_RDWR | O_CLOEXEC);
	if (ch->fd < 0) {
		if (!quiet)
			fprintf(stderr, "pldma: open %s: %s\n", path,
				strerror(errno));
		goto err_free;
	}
	if (ioctl(ch->fd, PLDMA_IOC_VERSION, &v) ||
	    v.uapi_version != PLDMA_UAPI_VERSION ||
	    ioctl(ch->fd, PLDMA_IOC_INFO, &ch->info)) {
		fprintf(stderr, "pldma: %s: version/info failed\n", path);
		goto err_close;
	}
	p = mmap(NULL, ch->info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ch->fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pldma: mmap %s: %s\n", path, strerror(errno));
		goto err_close;
	}
	ch->regs = p;
	p = mmap(NULL, rlen + clen, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		goto err_unmap;
	memset(p, 0, rlen + clen);
	ch->ring = p;
	ch->compl = (uint8_t *)p + rlen;
	ch->regs[PLDMA_CH_RING_BASE_LO / 4] = (uint32_t)(uintptr_t)ch->ring;
	ch->regs[PLDMA_CH_RING_BASE_HI / 4] = (uint32_t)((uintptr_t)ch->ring >> 32);
	ch->regs[PLDMA_CH_RING_SIZE / 4] = RING_ENTRIES;
	ch->tail = 0;
	ch->strategy = -1;
	return ch;

err_unmap:
	munmap((void *)ch->regs, ch->info.mmap_size);
err_close:
	close(ch->fd);
err_free:
	free(ch);
	return NULL;
}

struct pldma_chan *pldma_open(const char *path)
{
	return path ? chan_open(path, 0) : pldma_open_mode(0);
}

struct pldma_chan *pldma_open_mode(int mode)
{
	struct pldma_chan *ch;
	char path[32];
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/dev/pldma%d", i);
		if (access(path, F_OK))
			continue;
		ch = chan_open(path, 1);
		if (!ch)
			continue;
		if (!mode || (int)ch->info.fault_mode == mode)
			return ch;
		pldma_close(ch);
	}
	errno = ENODEV;
	return NULL;
}

void pldma_close(struct pldma_chan *ch)
{
	if (!ch)
		return;
	pldma_fault_thread_stop(ch);
	/* release() destroys the QP and the CQs: their rings just go */
	for (unsigned int i = 0; i < PLDMA_MAX_FILE_CQS; i++) {
		if (ch->cqs[i]) {
			munmap((void *)ch->cqs[i]->ring, ch->cqs[i]->size);
			free(ch->cqs[i]);
		}
	}
	if (ch->rq)
		munmap(ch->rq, ch->rq_size);
	/*
	 * Unmap the channel page, then close the file: the driver's release()
	 * stops the channel and waits for it to be quiet.  Only then is the
	 * ring and completion memory given back; unmapped earlier, its VAs
	 * could be reused by another thread's mmap() while the device may
	 * still fetch a descriptor from them or write a record into them.
	 */
	munmap((void *)ch->regs, ch->info.mmap_size);
	close(ch->fd);
	munmap(ch->ring, RING_ENTRIES * (PLDMA_DESC_SIZE + PLDMA_COMPL_SIZE));
	free(ch);
}

/* The strategy of the descriptor about to go into ring slot @slot */
static int set_strategy(struct pldma_chan *ch, int strategy,
			unsigned int touch, unsigned int slot)
{
	struct pldma_strategy s = {
		.strategy = strategy,
		.touch_ahead = pldma_strategy_window(strategy) ? touch : 0,
		.flags = PLDMA_STRATEGY_SLOT,
		.slot = slot,
	};

	if (ioctl(ch->fd, PLDMA_IOC_SET_STRATEGY, &s))
		return -errno;
	ch->strategy = strategy;
	ch->touch = s.touch_ahead;
	return 0;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);	/* little-endian host */
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static int populate(const void *addr, size_t len, int adv)
{
	uintptr_t a = (uintptr_t)addr & ~(PAGE - 1);
	uintptr_t e = ((uintptr_t)addr + len + PAGE - 1) & ~(PAGE - 1);

	if (madvise((void *)a, e - a, adv))
		return -errno;
	return (e - a) / PAGE;
}

/* pldma-regs.h's table of descriptor opcodes */
static const struct {
	const char *name;
	unsigned int flags, wc;
} pldma_ops[PLDMA_OP_TABLE_SIZE] = PLDMA_OP_TABLE;

/* the PLDMA_OPF_* of @op (0: not an opcode) */
static unsigned int op_flags(unsigned int op)
{
	return op < PLDMA_OP_TABLE_SIZE ? pldma_ops[op].flags : 0;
}

int pldma_submit(struct pldma_chan *ch, const struct pldma_xfer *x,
		 unsigned int *slot)
{
	unsigned int tail = ch->tail, next = (tail + 1) % RING_ENTRIES;
	volatile uint8_t *cr = ch->compl + tail * PLDMA_COMPL_SIZE;
	uint8_t *d = ch->ring + tail * PLDMA_DESC_SIZE;
	int rdma, ret;

	if (x->strategy == PLDMA_STRAT_PIN &&
	    op_flags(x->opcode) & PLDMA_OPF_REMOTE)
		return -EINVAL;	/* the driver's SUBMIT pins COPY/FILL only */
	if (x->strategy == PLDMA_STRAT_PIN) {
		struct pldma_submit s = {
			.opcode = x->opcode,
			.len = x->len,
			.src = (uintptr_t)x->src,
			.dst = (uintptr_t)x->dst,
			.pattern = x->pattern,
			.compl = (uintptr_t)cr,
			.cookie = x->cookie,
			.strategy = PLDMA_STRAT_PIN,
		};

		if (x->len > UINT32_MAX)
			return -EINVAL;
		if (ioctl(ch->fd, PLDMA_IOC_SUBMIT, &s))
			return -errno;
		ch->strategy = PLDMA_STRAT_PIN;
		ch->touch = 0;
		ch->tail = (s.index + 1) % RING_ENTRIES;
		*slot = s.index;
		return 0;
	}

	rdma = !!(op_flags(x->opcode) & PLDMA_OPF_REMOTE);
	if (!x->len || x->len > ch->info.max_xfer)
		return -EINVAL;
	if (rdma && !ch->info.node_id)
		return -EOPNOTSUPP;
	if (next == pldma_reg(ch, PLDMA_CH_RING_HEAD))
		return -EBUSY;
	ret = set_strategy(ch, x->strategy, x->touch, tail);
	if (ret)
		return ret;
	if (x->strategy == PLDMA_STRAT_PREFAULT) {
		if (x->opcode == PLDMA_OP_COPY ||
		    x->opcode == PLDMA_OP_RDMA_WRITE)
			populate(x->src, x->len, MADV_POPULATE_READ);
		if (x->opcode != PLDMA_OP_RDMA_WRITE)
			populate(x->dst, x->len, MADV_POPULATE_WRITE);
	}

	memset((void *)cr, 0, PLDMA_COMPL_SIZE);
	memset(d, 0, PLDMA_DESC_SIZE);
	d[PLDMA_DESC_OPCODE] = x->opcode;
	d[PLDMA_DESC_FLAGS] = PLDMA_DF_INTR;
	put32(d + PLDMA_DESC_LEN, x->len);
	put64(d + PLDMA_DESC_SRC, (uintptr_t)x->src);
	put64(d + PLDMA_DESC_DST, (uintptr_t)x->dst);
	if (rdma) {
		/*
		 * to the peer of the channel's QP (RSVD2 stays 0); REMOTE_VA
		 * shares its offset with PATTERN
		 */
		put64(d + PLDMA_DESC_REMOTE_VA, x->remote_va);
		put32(d + PLDMA_DESC_RKEY, x->rkey);
	} else {
		put64(d + PLDMA_DESC_PATTERN, x->pattern);
	}
	put64(d + PLDMA_DESC_COMPL, (uintptr_t)cr);
	put64(d + PLDMA_DESC_COOKIE, x->cookie);
	/* batched faults: the device lists the missing pages in this window */
	if (x->strategy == PLDMA_STRAT_BATCH && !rdma)
		d[PLDMA_DESC_AHEAD] = ch->touch;
	wr_barrier();
	ch->regs[PLDMA_CH_RING_TAIL / 4] = next;
	ch->tail = next;
	*slot = tail;
	return 0;
}

int pldma_wait(struct pldma_chan *ch, unsigned int slot, int timeout_ms,
	       struct pldma_result *res)
{
	volatile uint8_t *cr = ch->compl + slot * PLDMA_COMPL_SIZE;
	struct pldma_wait w = {
		.compl = (uintptr_t)cr,
		.timeout_ms = timeout_ms,
	};

	if (slot >= RING_ENTRIES)
		return -EINVAL;
	if (ioctl(ch->fd, PLDMA_IOC_WAIT, &w)) {
		int err = -errno;

		if (err == -EIO) {
			/* channel ERROR: drop the rest of the ring */
			ch->regs[PLDMA_CH_CMD / 4] = PLDMA_CMD_CANCEL;
			ch->tail = pldma_reg(ch, PLDMA_CH_RING_TAIL);
		}
		return err;
	}
	__sync_synchronize();
	if (res) {
		res->status = w.status;
		memcpy(&res->flags, (const void *)(cr + PLDMA_COMPL_FLAGS), 4);
		memcpy(&res->bytes, (const void *)(cr + PLDMA_COMPL_BYTES), 8);
		memcpy(&res->fault_va, (const void *)(cr + PLDMA_COMPL_FAULT_VA),
		       8);
	}
	return 0;
}

int pldma_get_stats(struct pldma_chan *ch, struct pldma_stats *st)
{
	return ioctl(ch->fd, PLDMA_IOC_GET_STATS, st) ? -errno : 0;
}

int pldma_set_eventfd(struct pldma_chan *ch, int efd)
{
	struct pldma_eventfd e = { .fd = efd };

	return ioctl(ch->fd, PLDMA_IOC_SET_EVENTFD, &e) ? -errno : 0;
}

/*
 * A value that changes whenever the channel's transfer moves: bytes
 * written, faults and stalls taken, RESTARTs and RETRYs, pages the driver
 * made present or pinned for the file.
 */
static uint64_t pldma_progress(struct pldma_chan *ch)
{
	struct pldma_stats st;
	uint64_t p;

	p = pldma_hw_counter(ch, PLDMA_CNT_BYTES_LO) +
	    ((uint64_t)pldma_hw_counter(ch, PLDMA_CNT_BYTES_HI) << 32) +
	    pldma_hw_counter(ch, PLDMA_CNT_FAULTS) +
	    pldma_hw_counter(ch, PLDMA_CNT_STALLS) +
	    pldma_hw_counter(ch, PLDMA_CNT_RESTARTS);
	if (!pldma_get_stats(ch, &st))
		p += st.pages_present + st.pinned_pages;
	return p;
}

/* Wait for @slot until it completes or makes no progress for @idle_ms */
static int pldma_wait_progress(struct pldma_chan *ch, unsigned int slot,
			       int idle_ms, struct pldma_result *res)
{
	int step = idle_ms < 250 ? idle_ms : 250, ret;
	uint64_t p = pldma_progress(ch), q, last = pldma_now_ns();

	for (;;) {
		ret = pldma_wait(ch, slot, step, res);
		if (ret != -ETIMEDOUT)
			return ret;
		q = pldma_progress(ch);
		if (q != p) {
			p = q;
			last = pldma_now_ns();
		} else if (pldma_now_ns() - last >= idle_ms * 1000000ull) {
			return -ETIMEDOUT;
		}
	}
}

int pldma_run(struct pldma_chan *ch, const struct pldma_xfer *x,
	      int timeout_ms, struct pldma_result *res)
{
	struct pldma_stats s0, s1;
	uint32_t f0, st0, r0;
	uint64_t t0, t1;
	unsigned int slot;
	int ret;

	memset(res, 0, sizeof(*res));
	if (timeout_ms <= 0)
		return -EINVAL;
	if (pldma_get_stats(ch, &s0))
		return -errno;
	f0 = pldma_hw_counter(ch, PLDMA_CNT_FAULTS);
	st0 = pldma_hw_counter(ch, PLDMA_CNT_STALLS);
	r0 = pldma_hw_counter(ch, PLDMA_CNT_RESTARTS);
	t0 = pldma_now_ns();
	ret = pldma_submit(ch, x, &slot);
	if (!ret)
		ret = pldma_wait_progress(ch, slot, timeout_ms, res);
	t1 = pldma_now_ns();
	res->time_ns = t1 - t0;
	res->faults = (uint32_t)(pldma_hw_counter(ch, PLDMA_CNT_FAULTS) - f0) +
		      (uint32_t)(pldma_hw_counter(ch, PLDMA_CNT_STALLS) - st0);
	res->restarts = (uint32_t)(pldma_hw_counter(ch, PLDMA_CNT_RESTARTS) - r0);
	if (!pldma_get_stats(ch, &s1)) {
		res->pages = s1.pages_present - s0.pages_present;
		res->touch_pages = s1.touch_pages - s0.touch_pages;
		res->batch_pages = s1.batch_pages - s0.batch_pages;
		if (x->strategy == PLDMA_STRAT_PIN)
			res->pages += s1.pinned_pages - s0.pinned_pages;
	}
	if (x->strategy == PLDMA_STRAT_PREFAULT)
		res->pages += (x->opcode == PLDMA_OP_COPY ? 2 : 1) *
			      ((x->len + PAGE - 1) / PAGE);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Remote DMA                                                         */
/* ------------------------------------------------------------------ */

int pldma_reg_mr(struct pldma_chan *ch, void *addr, size_t len,
		 unsigned int access, int strategy, unsigned int touch,
		 uint32_t *rkey)
{
	struct pldma_reg_mr r = {
		.va = (uintptr_t)addr,
		.len = len,
		.access = access,
	};

	if (strategy >= 0) {
		r.flags = PLDMA_MR_STRATEGY;
		r.strategy = strategy;
		r.touch_ahead = pldma_strategy_window(strategy) ? touch : 0;
	}
	if (ioctl(ch->fd, PLDMA_IOC_REG_MR, &r))
		return -errno;
	*rkey = r.rkey;
	return 0;
}

int pldma_dereg_mr(struct pldma_chan *ch, uint32_t rkey)
{
	struct pldma_dereg_mr d = { .rkey = rkey };

	return ioctl(ch->fd, PLDMA_IOC_DEREG_MR, &d) ? -errno : 0;
}

int pldma_rdma_write(struct pldma_chan *ch, uint32_t rkey,
		     uint64_t remote_va, const void *src, size_t len,
		     int strategy, unsigned int touch, struct pldma_result *res)
{
	struct pldma_xfer x = {
		.opcode = PLDMA_OP_RDMA_WRITE,
		.src = src,
		.len = len,
		.strategy = strategy,
		.touch = touch,
		.rkey = rkey,
		.remote_va = remote_va,
	};
	struct pldma_result r;

	/* the requester's retries end a message well before this */
	return pldma_run(ch, &x, 20000, res ? res : &r);
}

int pldma_rdma_read(struct pldma_chan *ch, uint32_t rkey,
		    uint64_t remote_va, void *dst, size_t len, int strategy,
		    unsigned int touch, struct pldma_result *res)
{
	struct pldma_xfer x = {
		.opcode = PLDMA_OP_RDMA_READ,
		.dst = dst,
		.len = len,
		.strategy = strategy,
		.touch = touch,
		.rkey = rkey,
		.remote_va = remote_va,
	};
	struct pldma_result r;

	return pldma_run(ch, &x, 20000, res ? res : &r);
}

/* ------------------------------------------------------------------ */
/* Queue pairs                                                        */
/* ------------------------------------------------------------------ */

static uint32_t random_psn(void)
{
	uint32_t v = 0;

	/*
	 * as rdma-core's applications (lrand48) and the kernel's CM
	 * (get_random_u32) do: a connection never starts where an old one
	 * of the same QPNs may have left its peer
	 */
	while (getrandom(&v, sizeof(v), 0) != sizeof(v))
		if (errno != EINTR && errno != EAGAIN)
			break;
	return v & 0xffffff;
}

int pldma_qp_create(struct pldma_chan *ch, struct pldma_qp_info *local)
{
	return pldma_qp_create_caps(ch, NULL, local);
}

int pldma_qp_create_caps(struct pldma_chan *ch, const struct pldma_qp_caps *caps,
			 struct pldma_qp_info *local)
{
	struct pldma_qp_create c = { 0 };
	void *rq = NULL;

	if (!ch->info.num_qps)
		return -EOPNOTSUPP;
	if (caps) {
		c.rq_entries = caps->rq_entries;
		if (caps->send_cq) {
			c.flags |= PLDMA_QPC_SEND_CQ;
			c.send_cq = caps->send_cq->idx;
		}
		if (caps->recv_cq) {
			c.flags |= PLDMA_QPC_RECV_CQ;
			c.recv_cq = caps->recv_cq->idx;
		}
	}
	if (ioctl(ch->fd, PLDMA_IOC_QP_CREATE, &c))
		return -errno;
	if (c.rq_mmap_size) {
		rq = mmap(NULL, c.rq_mmap_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED, ch->fd, c.rq_mmap_offset);
		if (rq == MAP_FAILED) {
			int err = -errno;
			struct pldma_qp_destroy d = { .qpn = c.qpn };

			ioctl(ch->fd, PLDMA_IOC_QP_DESTROY, &d);
			return err;
		}
	}
	ch->rq = rq;
	ch->rq_size = c.rq_mmap_size;
	ch->rq_entries = c.rq_entries;
	ch->rq_tail = 0;
	ch->qpn = c.qpn;
	ch->qp_rts = 0;
	memset(local, 0, sizeof(*local));
	local->qpn = c.qpn;
	local->psn = random_psn();
	local->ip = ch->info.ip;
	memcpy(local->mac, ch->info.mac, sizeof(local->mac));
	local->mtu = ch->info.mtu;
	return 0;
}

int pldma_qp_modify(struct pldma_chan *ch, struct pldma_qp_attr *a)
{
	a->qpn = ch->qpn;
	if (ioctl(ch->fd, PLDMA_IOC_QP_MODIFY, a))
		return -errno;
	ch->qpn = a->qpn;	/* new after a RESET */
	return 0;
}

int pldma_qp_query(struct pldma_chan *ch, struct pldma_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qpn = ch->qpn;
	return ioctl(ch->fd, PLDMA_IOC_QP_QUERY, a) ? -errno : 0;
}

uint32_t pldma_qp_num(const struct pldma_chan *ch)
{
	return ch->qpn;
}

static uint32_t mtu_code(uint32_t bytes)
{
	uint32_t c = PLDMA_MTU_4096;

	while (c > PLDMA_MTU_256 && PLDMA_MTU_BYTES(c) > bytes)
		c--;
	return c;
}

int pldma_qp_connect(struct pldma_chan *ch, const struct pldma_qp_info *local,
		     const struct pldma_qp_info *remote)
{
	struct pldma_qp_attr a = {
		.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS,
		.qp_state = PLDMA_QPS_INIT,
		.access = PLDMA_MR_ACCESS_WRITE | PLDMA_MR_ACCESS_READ,
	};
	int ret;

	if (!ch->qpn || local->qpn != ch->qpn)
		return -ENOENT;
	ret = pldma_qp_modify(ch, &a);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_AV | PLDMA_QPA_PATH_MTU |
		      PLDMA_QPA_DEST_QPN | PLDMA_QPA_RQ_PSN |
		      PLDMA_QPA_MIN_RNR_TIMER;
	a.qp_state = PLDMA_QPS_RTR;
	a.dest_ip = remote->ip;
	memcpy(a.dest_mac, remote->mac, sizeof(a.dest_mac));
	a.path_mtu = mtu_code(remote->mtu && remote->mtu < ch->info.mtu ?
			      remote->mtu : ch->info.mtu);
	a.dest_qpn = remote->qpn;
	a.rq_psn = remote->psn;
	a.min_rnr_timer = PLDMA_QP_MIN_RNR_TIMER;
	a.timeout = PLDMA_QP_TIMEOUT;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	ret = pldma_qp_modify(ch, &a);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_SQ_PSN | PLDMA_QPA_TIMEOUT |
		      PLDMA_QPA_RETRY_CNT | PLDMA_QPA_RNR_RETRY |
		      PLDMA_QPA_MAX_QP_RD_ATOMIC;
	a.qp_state = PLDMA_QPS_RTS;
	/* READs in flight: as many as a PLDMA's responder takes */
	a.max_rd_atomic = PLDMA_QP_MAX_RD_ATOMIC;
	a.sq_psn = local->psn;
	a.min_rnr_timer = PLDMA_QP_MIN_RNR_TIMER;
	a.timeout = local->timeout ? local->timeout : PLDMA_QP_TIMEOUT;
	a.retry_cnt = 7;
	a.rnr_retry = 7;	/* infinite, as perftest: faults RNR */
	ret = pldma_qp_modify(ch, &a);
	if (ret)
		return ret;
	ch->qp_rts = 1;
	return 0;
}

int pldma_qp_destroy(struct pldma_chan *ch)
{
	struct pldma_qp_destroy d = { .qpn = ch->qpn };

	if (!ch->qpn)
		return -ENOENT;
	/* the driver keeps the RQ ring while it is mapped */
	if (ch->rq)
		munmap(ch->rq, ch->rq_size);
	ch->rq = NULL;
	ch->rq_size = 0;
	ch->rq_entries = 0;
	ch->qp_rts = 0;
	ch->qpn = 0;
	return ioctl(ch->fd, PLDMA_IOC_QP_DESTROY, &d) ? -errno : 0;
}

/* ------------------------------------------------------------------ */
/* Completion queues, SEND and RECV                                   */
/* ------------------------------------------------------------------ */

struct pldma_cq *pldma_cq_create(struct pldma_chan *ch, unsigned int entries)
{
	struct pldma_cq_create c = { .entries = entries };
	struct pldma_cq *cq;
	unsigned int slot;
	void *p;

	for (slot = 0; slot < PLDMA_MAX_FILE_CQS; slot++)
		if (!ch->cqs[slot])
			break;
	if (slot == PLDMA_MAX_FILE_CQS) {
		errno = EDQUOT;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	if (ioctl(ch->fd, PLDMA_IOC_CQ_CREATE, &c))
		goto err_free;
	p = mmap(NULL, c.mmap_size, PROT_READ, MAP_SHARED, ch->fd,
		 c.mmap_offset);
	if (p == MAP_FAILED) {
		int err = errno;
		struct pldma_cq_destroy d = { .cq = c.cq };

		ioctl(ch->fd, PLDMA_IOC_CQ_DESTROY, &d);
		errno = err;
		goto err_free;
	}
	cq->ch = ch;
	cq->idx = c.cq;
	cq->entries = entries;
	cq->ring = p;
	cq->size = c.mmap_size;
	ch->cqs[slot] = cq;
	return cq;

err_free:
	free(cq);
	return NULL;
}

int pldma_cq_destroy(struct pldma_cq *cq)
{
	struct pldma_cq_destroy d = { .cq = cq->idx };
	struct pldma_chan *ch = cq->ch;
	unsigned int i;
	int ret;

	/* the driver keeps the ring while it is mapped */
	munmap((void *)cq->ring, cq->size);
	ret = ioctl(ch->fd, PLDMA_IOC_CQ_DESTROY, &d) ? -errno : 0;
	for (i = 0; i < PLDMA_MAX_FILE_CQS; i++)
		if (ch->cqs[i] == cq)
			ch->cqs[i] = NULL;
	free(cq);
	return ret;
}

unsigned int pldma_cq_index(const struct pldma_cq *cq)
{
	return cq->idx;
}

uint32_t pldma_cq_events(const struct pldma_cq *cq)
{
	return cq->events;
}

uint32_t pldma_cq_qp_errors(const struct pldma_cq *cq)
{
	return cq->qp_errors;
}

static void cq_doorbell(struct pldma_cq *cq, unsigned int cmd)
{
	/* what was read of the ring before the device may reuse it */
	__sync_synchronize();
	cq->ch->regs[PLDMA_CH_CQ_DB / 4] = PLDMA_CQ_DB_MAKE(cmd, cq->idx, cq->ci);
}

int pldma_poll_cq(struct pldma_cq *cq, int n, struct pldma_wc *wc)
{
	unsigned int mask = cq->entries - 1;
	int got = 0;

	while (got < n) {
		volatile uint8_t *e = cq->ring + (cq->ci & mask) * PLDMA_CQE_SIZE;
		/* the first pass over the ring has owner 1, the next 0, ... */
		uint8_t phase = !((cq->ci / cq->entries) & 1);
		uint32_t v;

		if ((e[PLDMA_CQE_OWNER] & 1) != phase)
			break;
		/* the owner byte before the rest of the entry */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(&wc[got].wr_id, (const void *)(e + PLDMA_CQE_WR_ID), 8);
		memcpy(&wc[got].byte_len, (const void *)(e + PLDMA_CQE_BYTE_LEN), 4);
		memcpy(&v, (const void *)(e + PLDMA_CQE_IMM), 4);
		wc[got].imm = ntohl(v);
		memcpy(&wc[got].qpn, (const void *)(e + PLDMA_CQE_QPN), 4);
		memcpy(&wc[got].src_qp, (const void *)(e + PLDMA_CQE_SRC_QP), 4);
		wc[got].opcode = e[PLDMA_CQE_OPCODE];
		wc[got].status = e[PLDMA_CQE_STATUS];
		wc[got].flags = e[PLDMA_CQE_FLAGS];
		memcpy(&wc[got].vendor_err, (const void *)(e + PLDMA_CQE_VENDOR_ERR), 4);
		cq->ci = (cq->ci + 1) & 0xffffff;
		got++;
	}
	if (got)
		cq_doorbell(cq, PLDMA_CQ_DB_CMD_CI);
	return got;
}

int pldma_req_notify_cq(struct pldma_cq *cq, int solicited_only)
{
	cq_doorbell(cq, solicited_only ? PLDMA_CQ_DB_CMD_ARM_SOL :
					 PLDMA_CQ_DB_CMD_ARM);
	return 0;
}

int pldma_cq_wait_event(struct pldma_cq *cq, int timeout_ms)
{
	struct pldma_cq_wait w = {
		.cq = cq->idx,
		.timeout_ms = timeout_ms,
		.events = cq->events,
	};

	if (ioctl(cq->ch->fd, PLDMA_IOC_CQ_WAIT, &w))
		return -errno;
	cq->events = w.events;
	cq->qp_errors = w.qp_errors;
	return 0;
}

int pldma_post_send(struct pldma_chan *ch, const struct pldma_send_wr *wr)
{
	unsigned int tail = ch->tail, next = (tail + 1) % RING_ENTRIES;
	volatile uint8_t *cr = ch->compl + tail * PLDMA_COMPL_SIZE;
	uint8_t *d = ch->ring + tail * PLDMA_DESC_SIZE;
	int imm;

	if (!ch->qp_rts)
		return -ENOTCONN;
	/* the opcodes that take a receive WQE of the peer */
	if (!(op_flags(wr->opcode) & PLDMA_OPF_RECV))
		return -EINVAL;
	if (wr->flags & ~(PLDMA_DF_SIGNALED | PLDMA_DF_SOLICITED) ||
	    wr->len > ch->info.max_xfer ||
	    (!wr->len && wr->opcode == PLDMA_OP_RDMA_WRITE_IMM))
		return -EINVAL;
	if (next == pldma_reg(ch, PLDMA_CH_RING_HEAD))
		return -EBUSY;
	imm = !!(pldma_ops[wr->opcode].flags & PLDMA_OPF_IMM);
	memset((void *)cr, 0, PLDMA_COMPL_SIZE);
	memset(d, 0, PLDMA_DESC_SIZE);
	d[PLDMA_DESC_OPCODE] = wr->opcode;
	d[PLDMA_DESC_FLAGS] = wr->flags;
	put32(d + PLDMA_DESC_LEN, wr->len);
	put64(d + PLDMA_DESC_SRC, (uintptr_t)wr->addr);
	if (pldma_ops[wr->opcode].flags & PLDMA_OPF_RKEY) {
		put64(d + PLDMA_DESC_REMOTE_VA, wr->remote_va);
		put32(d + PLDMA_DESC_RKEY, wr->rkey);
	}
	if (imm)
		put32(d + PLDMA_DESC_IMM, htonl(wr->imm));
	put64(d + PLDMA_DESC_COMPL, (uintptr_t)cr);
	put64(d + PLDMA_DESC_COOKIE, wr->wr_id);
	wr_barrier();
	ch->regs[PLDMA_CH_RING_TAIL / 4] = next;
	ch->tail = next;
	return 0;
}

int pldma_post_recv(struct pldma_chan *ch, uint64_t wr_id,
		    const struct pldma_sge *sg, unsigned int nsge)
{
	unsigned int tail = ch->rq_tail, next, i;
	uint8_t *w;

	if (!ch->rq)
		return -ENOTCONN;
	if (nsge > PLDMA_RWQE_MAX_SGE)
		return -EINVAL;
	next = (tail + 1) & (ch->rq_entries - 1);
	if (next == pldma_reg(ch, PLDMA_CH_RQ_HEAD))
		return -EBUSY;
	w = ch->rq + (size_t)tail * PLDMA_RWQE_SIZE;
	memset(w, 0, PLDMA_RWQE_SIZE);
	put64(w + PLDMA_RWQE_WR_ID, wr_id);
	put32(w + PLDMA_RWQE_NUM_SGE, nsge);
	for (i = 0; i < nsge; i++) {
		put64(w + PLDMA_RWQE_SGE(i) + PLDMA_SGE_ADDR,
		      (uintptr_t)sg[i].addr);
		put32(w + PLDMA_RWQE_SGE(i) + PLDMA_SGE_LEN, sg[i].len);
	}
	wr_barrier();
	ch->regs[PLDMA_CH_RQ_TAIL / 4] = next;
	ch->rq_tail = next;
	return 0;
}

int pldma_net_stats(struct pldma_chan *ch, struct pldma_net_stats *st)
{
	return ioctl(ch->fd, PLDMA_IOC_NET_STATS, st) ? -errno : 0;
}

#define PLDMA_NCNT_NAME(i, name) \
	[i] = name,
static const char *const ncnt_names[PLDMA_NCNT_NUM] = {
	PLDMA_NCNT_NAMES(PLDMA_NCNT_NAME)
};

#undef PLDMA_NCNT_NAME

const char *pldma_net_counter_name(unsigned int i)
{
	return i < PLDMA_NCNT_NUM ? ncnt_names[i] : "?";
}

int pldma_copy(struct pldma_chan *ch, void *dst, const void *src, size_t len,
	       int strategy, unsigned int touch, struct pldma_result *res)
{
	struct pldma_xfer x = {
		.opcode = PLDMA_OP_COPY,
		.dst = dst,
		.src = src,
		.len = len,
		.strategy = strategy,
		.touch = touch,
	};
	struct pldma_result r;

	/* no progress for 60 s: generous, TCG on a loaded host can be slow */
	return pldma_run(ch, &x, 60000, res ? res : &r);
}

/* ------------------------------------------------------------------ */
/* User-space fault handling                                          */
/* ------------------------------------------------------------------ */

int pldma_fault_populate(struct pldma_chan *ch, const struct pldma_fault *f,
			 void *arg)
{
	int ret;

	(void)ch;
	(void)arg;
	ret = populate((void *)(uintptr_t)f->va, 1,
		       (f->flags & PLDMA_FR_F_WRITE) ? MADV_POPULATE_WRITE :
						       MADV_POPULATE_READ);
	return ret < 0 ? ret : 0;
}

static void *fault_thread(void *p)
{
	struct pldma_chan *ch = p;
	const char *cpu = getenv("PLDMA_FAULT_CPU");
	unsigned int backoff_us = 0;

	if (cpu) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(cpu), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}

	while (!ch->fstop) {
		struct pldma_fault f = { .timeout_ms = 50 };
		struct pldma_fault_resolve r = { 0 };
		int ret;

		if (ioctl(ch->fd, PLDMA_IOC_FAULT_GET, &f)) {
			if (errno == EAGAIN || errno == EINTR) {
				backoff_us = 0;
				continue;	/* nothing yet */
			}
			/*
			 * A persistent error (the descriptor was closed or
			 * replaced, a driver gone): do not spin, retry at
			 * most every 100 ms until stopped.
			 */
			backoff_us = backoff_us ? backoff_us * 2 : 1000;
			if (backoff_us > 100000)
				backoff_us = 100000;
			usleep(backoff_us);
			continue;
		}
		backoff_us = 0;
		ret = ch->ffn(ch, &f, ch->farg);
		r.seq = f.seq;
		r.action = ret ? PLDMA_RESOLVE_CANCEL : PLDMA_RESOLVE_RESTART;
		ioctl(ch->fd, PLDMA_IOC_FAULT_RESOLVE, &r);
		ch->fcount++;
	}
	return NULL;
}

int pldma_fault_thread_start(struct pldma_chan *ch, pldma_fault_fn fn,
			     void *arg)
{
	int ret;

	if (ch->fthread_on)
		return -EBUSY;
	ch->ffn = fn ? fn : pldma_fault_populate;
	ch->farg = arg;
	ch->fstop = 0;
	ret = pthread_create(&ch->fthread, NULL, fault_thread, ch);
	if (ret)
		return -ret;
	ch->fthread_on = 1;
	return 0;
}

void pldma_fault_thread_stop(struct pldma_chan *ch)
{
	if (!ch->fthread_on)
		return;
	ch->fstop = 1;
	pthread_join(ch->fthread, NULL);
	ch->fthread_on = 0;
}

uint64_t pldma_fault_thread_count(const struct pldma_chan *ch)
{
	return ch->fcount;
}
