/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Buffers for PLDMA tests, demos and benchmarks: a source whose contents
 * are known but whose pages are not mapped in the process (a memfd written
 * with write(), then mmap()ed: every access through the mapping is a minor
 * fault, and MADV_DONTNEED drops the mapping but keeps the data), and an
 * anonymous destination that MADV_DONTNEED turns back into never-touched
 * memory.
 */
#ifndef PLDMA_UTIL_H
#define PLDMA_UTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every 256-byte block of 16 MiB differs (i * 131 alone repeats every 256
 * bytes: a 1 KiB segment landing at the wrong offset of its page went
 * unseen, as Linux 7.1.8's rxe ODP does it, docs/testing.md)
 */
static inline uint8_t pu_byte(uint32_t seed, size_t i)
{
	return (uint8_t)(i * 131 + (i >> 8) * 7 + (i >> 16) * 13 + seed * 29 +
			 1);
}

/* Source: memfd of len bytes of pu_byte(seed, i), mapped, not touched */
void *pu_src_alloc(size_t len, uint32_t seed);
/* Destination: anonymous, 2 MiB aligned, not touched; thp: 1 on, 0 off,
 * -1 leave to the system setting
 */
void *pu_dst_alloc(size_t len, int thp);
void pu_free(void *p, size_t len);
/* Unmap the pages of [p, p+len) from the process (MADV_DONTNEED) */
int pu_drop(void *p, size_t len);
/* First index where p differs from pu_byte(seed, .), or -1 */
long pu_verify(const void *p, size_t len, uint32_t seed);
/* Pages of [p, p+len) mapped in the process (from /proc/self/pagemap) */
long pu_resident(const void *p, size_t len);

/* Benchmarks: "64K", "4M", "4096" in bytes */
size_t pu_parse_size(const char *s);
/* Sort @t[0..n) and return its median and minimum (n > 0) */
void pu_med_min(double *t, int n, double *med, double *min);

struct pldma_chan;
/* A channel (opened once, shared) on a device able to run the strategy;
 * the report-mode channel gets the default fault-handler thread.
 */
struct pldma_chan *pu_chan_for(int strategy);
/* From now on pu_chan_for() takes its channel from the device at @path
 * only (NULL: any device); a strategy its fault mode cannot run gets none.
 */
void pu_use_device(const char *path);
void pu_chan_close_all(void);

#endif
