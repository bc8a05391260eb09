/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * TAP lines of a test program that numbers nothing itself: result() prints
 * "ok - <tag><message>" or "not ok - ..." and counts the failure in
 * pldma-check.h's @fails; note() prints a "# <tag>" diagnostic.  @tap_tag
 * names the part of the program that speaks ("rxe: ", "edm: ", "msg A: ").
 * One test program is one translation unit: the statics are its own.
 */
#ifndef PLDMA_TAP_H
#define PLDMA_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "pldma-check.h"

static const char *tap_tag = "";

static inline void __attribute__((format(printf, 2, 3)))
result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s", ok ? "ok" : "not ok", tap_tag);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		fails++;
}

static inline void __attribute__((format(printf, 1, 2)))
note(const char *fmt, ...)
{
	va_list ap;

	printf("# %s", tap_tag);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* CLOCK_MONOTONIC, in seconds */
static inline double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

#endif
