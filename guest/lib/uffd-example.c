// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-uffd-example: user-space fault resolution for the PLDMA device.
 *
 * The source buffer is anonymous memory registered with userfaultfd
 * (MISSING): its contents exist only in this program, which serves every
 * missing page with UFFDIO_COPY.  The DMA copies it to an untouched
 * destination with the "user" strategy: the driver forwards each device
 * fault to libpldma's fault-handler thread, which populates the page
 * (MADV_POPULATE_READ blocks until the userfaultfd thread has copied it in)
 * and asks the driver for RESTART.
 *
 * usage: pldma-uffd-example [size]   exit 0 when the data is verified
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-util.h"

#define SEED 77

static int uffd;
static uint8_t *src;
static size_t src_len;
static volatile int stop;
static volatile unsigned long served;

static void *uffd_server(void *arg)
{
	uint8_t *page = aligned_alloc(4096, 4096);

	(void)arg;
	while (!stop) {
		struct pollfd pfd = { .fd = uffd, .events = POLLIN };
		struct uffdio_copy c;
		struct uffd_msg msg;
		uint64_t addr, off;
		size_t i;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		addr = msg.arg.pagefault.address & ~4095ULL;
		off = addr - (uintptr_t)src;
		for (i = 0; i < 4096; i++)
			page[i] = pu_byte(SEED, off + i);
		c.dst = addr;
		c.src = (uintptr_t)page;
		c.len = 4096;
		c.mode = 0;
		c.copy = 0;
		if (ioctl(uffd, UFFDIO_COPY, &c) && errno != EEXIST)
			perror("UFFDIO_COPY");
		served++;
	}
	free(page);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t len = argc > 1 ? strtoul(argv[1], NULL, 0) : 256 * 1024;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct pldma_result r;
	struct pldma_chan *ch;
	pthread_t srv;
	uint8_t *dst;
	long bad;
	int ret;

	ch = pldma_open_mode(PLDMA_MODE_REPORT);
	if (!ch) {
		fprintf(stderr, "no PLDMA device in report mode\n");
		return 2;
	}
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		return 2;
	}
	src_len = len;
	src = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = pu_dst_alloc(len, -1);
	if (src == MAP_FAILED || !dst)
		return 2;
	reg.range.start = (uintptr_t)src;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return 2;
	}
	pthread_create(&srv, NULL, uffd_server, NULL);
	ret = pldma_fault_thread_start(ch, NULL, NULL);
	if (ret) {
		fprintf(stderr, "fault thread: %s\n", strerror(-ret));
		return 2;
	}

	ret = pldma_copy(ch, dst, src, len, PLDMA_STRAT_USER, 0, &r);
	stop = 1;
	pthread_join(srv, NULL);
	pldma_fault_thread_stop(ch);
	if (ret || r.status != PLDMA_ST_SUCCESS) {
		printf("uffd: copy failed: ret %d status %u fault_va %#llx\n",
		       ret, r.status, (unsigned long long)r.fault_va);
		return 1;
	}
	bad = pu_verify(dst, len, SEED);
	printf("uffd: %zu bytes, %llu device faults, %llu forwarded to the handler thread, %lu pages served by userfaultfd, %.1f us%s\n",
	       len, (unsigned long long)r.faults,
	       (unsigned long long)pldma_fault_thread_count(ch), served,
	       r.time_ns / 1000.0, bad < 0 ? ", data verified" : "");
	if (bad >= 0) {
		printf("uffd: mismatch at offset %ld\n", bad);
		return 1;
	}
	pldma_close(ch);
	return served ? 0 : 1;
}
