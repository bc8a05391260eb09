// SPDX-License-Identifier: GPL-2.0-or-later
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-util.h"

#define HUGE (2UL << 20)

void *pu_src_alloc(size_t len, uint32_t seed)
{
	uint8_t buf[65536];
	size_t off = 0, i, n;
	void *p;
	int fd;

	fd = memfd_create("pldma-src", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	while (off < len) {
		n = len - off < sizeof(buf) ? len - off : sizeof(buf);
		for (i = 0; i < n; i++)
			buf[i] = pu_byte(seed, off + i);
		if (write(fd, buf, n) != (ssize_t)n) {
			close(fd);
			return NULL;
		}
		off += n;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

void *pu_dst_alloc(size_t len, int thp)
{
	size_t map = len + HUGE;
	uint8_t *p, *a;

	p = mmap(NULL, map, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(HUGE - 1));
	if (a > p)
		munmap(p, a - p);
	if (p + map > a + len)
		munmap(a + len, p + map - (a + len));
	if (thp == 1)
		madvise(a, len, MADV_HUGEPAGE);
	else if (thp == 0)
		madvise(a, len, MADV_NOHUGEPAGE);
	return a;
}

void pu_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

int pu_drop(void *p, size_t len)
{
	return madvise(p, len, MADV_DONTNEED) ? -errno : 0;
}

long pu_verify(const void *p, size_t len, uint32_t seed)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != pu_byte(seed, i))
			return (long)i;
	return -1;
}

long pu_resident(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p & ~4095UL;
	size_t n = (((uintptr_t)p + len + 4095) & ~4095UL) - a;
	uint64_t e;
	long cnt = 0;
	size_t i;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (i = 0; i < n / 4096; i++) {
		if (pread(fd, &e, 8, ((a >> 12) + i) * 8) != 8)
			break;
		if (e & (1ULL << 63))
			cnt++;
	}
	close(fd);
	return cnt;
}

static struct pldma_chan *pu_chans[3];
static const char *pu_device;

void pu_use_device(const char *path)
{
	pu_device = path;
}

/* The channel of pu_use_device()'s device, if @mode is its mode (or 0) */
static struct pldma_chan *pu_device_chan(int mode)
{
	struct pldma_chan *ch = pu_chans[PLDMA_MODE_STALL];
	int m;

	if (!ch)
		ch = pu_chans[PLDMA_MODE_REPORT];
	if (!ch) {
		ch = pldma_open(pu_device);
		if (!ch)
			return NULL;
		m = pldma_fault_mode(ch);
		if (m != PLDMA_MODE_STALL && m != PLDMA_MODE_REPORT) {
			pldma_close(ch);
			return NULL;
		}
		pu_chans[m] = ch;
		/* the thread only ever sees faults of the "user" strategy */
		if (m == PLDMA_MODE_REPORT)
			pldma_fault_thread_start(ch, NULL, NULL);
	}
	return !mode || pldma_fault_mode(ch) == mode ? ch : NULL;
}

struct pldma_chan *pu_chan_for(int strategy)
{
	unsigned int modes = pldma_strategy_modes(strategy);
	int mode;

	/* a strategy of one fault mode needs a channel in that mode */
	if (modes == PLDMA_MODE_BIT(PLDMA_MODE_STALL)) {
		mode = PLDMA_MODE_STALL;
	} else if (modes == PLDMA_MODE_BIT(PLDMA_MODE_REPORT)) {
		mode = PLDMA_MODE_REPORT;
	} else {
		if (pu_device)
			return pu_device_chan(0);
		/* pin / prefault: on the stall device when there is one */
		if (pu_chans[PLDMA_MODE_STALL])
			return pu_chans[PLDMA_MODE_STALL];
		if (pu_chans[PLDMA_MODE_REPORT])
			return pu_chans[PLDMA_MODE_REPORT];
		if (!pu_chan_for(PLDMA_STRAT_STALL))
			return pu_chan_for(PLDMA_STRAT_ONE);
		return pu_chans[PLDMA_MODE_STALL];
	}
	if (pu_device)
		return pu_device_chan(mode);
	if (!pu_chans[mode]) {
		pu_chans[mode] = pldma_open_mode(mode);
		/* the thread only ever sees faults of the "user" strategy */
		if (pu_chans[mode] && mode == PLDMA_MODE_REPORT)
			pldma_fault_thread_start(pu_chans[mode], NULL, NULL);
	}
	return pu_chans[mode];
}

void pu_chan_close_all(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		pldma_close(pu_chans[i]);
		pu_chans[i] = NULL;
	}
}

size_t pu_parse_size(const char *s)
{
	char *end;
	size_t v = strtoul(s, &end, 0);

	if (*end == 'K' || *end == 'k')
		v <<= 10;
	else if (*end == 'M' || *end == 'm')
		v <<= 20;
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void pu_med_min(double *t, int n, double *med, double *min)
{
	qsort(t, n, sizeof(double), cmp_double);
	*med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	*min = t[0];
}
