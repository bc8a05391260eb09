/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The checks of a test program: CHECK(cond, fmt, ...) prints a TAP
 * diagnostic, "# FAIL function:line: message", when @cond is false and
 * counts the failure in @fails, which the program turns into its "not ok"
 * and its exit status.  One test program is one translation unit, so the
 * counter is a static of the file that includes this header.
 */
#ifndef PLDMA_CHECK_H
#define PLDMA_CHECK_H

#include <stdio.h>

static int fails;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("# FAIL %s:%d: ", __func__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		fails++;						\
	}								\
} while (0)

#endif
