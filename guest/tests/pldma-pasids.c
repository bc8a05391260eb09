// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-pasids N: more processes than 8 PASID bits allow, each with its own
 * PASID at the same time.
 *
 * Linux allocates PASIDs from one global space and an mm keeps its PASID
 * until it dies, even after it unbinds.  N processes are started one after
 * the other; each opens the device (binding its mm), copies 4 KiB through
 * its PASID, checks the bytes, closes the file (so the channel is reused by
 * the next one) and sleeps, holding its PASID.  Then this process does the
 * same as the (N + 1)th.  With the SubstreamID limited to 8 bits, the 256th
 * bind failed with -ENOSPC; with 20 bits all succeed.
 *
 * Prints one TAP-style comment with the counts and the highest PASID seen;
 * exits 0 only if every process bound, copied and verified.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pldma.h"

#define XFER 4096

/* One bind and copy; returns 0, or a positive errno */
static int bind_and_copy(uint32_t *pasid)
{
	static uint8_t src[XFER], dst[XFER];
	struct pldma_result res;
	struct pldma_chan *ch;
	int i, r;

	for (i = 0; i < XFER; i++)
		src[i] = (uint8_t)(i * 13 + getpid());
	memset(dst, 0, sizeof(dst));
	ch = pldma_open("/dev/pldma0");
	if (!ch)
		return errno ? errno : EIO;
	*pasid = pldma_info(ch)->pasid;
	r = pldma_copy(ch, dst, src, XFER, PLDMA_STRAT_PREFAULT, 0, &res);
	pldma_close(ch);
	if (r)
		return -r;
	return memcmp(dst, src, XFER) ? EBADMSG : 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300;
	int fds[2], i, good = 0, first_err = 0, r;
	uint32_t pasid, max_pasid = 0;
	pid_t *pids;

	if (n < 1 || n > 4000 || pipe(fds)) {
		fprintf(stderr, "usage: pldma-pasids N (1..4000)\n");
		return 2;
	}
	pids = calloc(n, sizeof(*pids));
	for (i = 0; i < n; i++) {
		struct { int err; uint32_t pasid; } msg = { 0, 0 };

		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			break;
		}
		if (pids[i] == 0) {
			msg.err = bind_and_copy(&msg.pasid);
			if (write(fds[1], &msg, sizeof(msg)) != sizeof(msg))
				_exit(1);
			if (!msg.err)
				pause();	/* keep the mm, hence the PASID */
			_exit(1);
		}
		/* one at a time: the next one reuses the channel */
		if (read(fds[0], &msg, sizeof(msg)) != sizeof(msg))
			msg.err = EPIPE;
		if (msg.err) {
			if (!first_err)
				fprintf(stderr, "process %d: %s\n", i + 1,
					strerror(msg.err));
			first_err = first_err ? first_err : i + 1;
			continue;
		}
		good++;
		if (msg.pasid > max_pasid)
			max_pasid = msg.pasid;
	}
	r = bind_and_copy(&pasid);
	if (!r && pasid > max_pasid)
		max_pasid = pasid;
	printf("# %d of %d sleeping processes bound a PASID and copied; "
	       "then one more: %s; highest PASID %u\n", good, n,
	       r ? strerror(r) : "ok", max_pasid);
	if (first_err)
		printf("# first failure: process %d\n", first_err);
	for (i = 0; i < n; i++) {
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	}
	free(pids);
	return good == n && !r ? 0 : 1;
}
