// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guest-exit: end the QEMU run with a given exit status.
 *
 * Uses the Arm semihosting SYS_EXIT call (HLT #0xF000 on AArch64), which QEMU
 * serves when started with -semihosting-config enable=on,userspace=on: QEMU
 * itself exits with the status, so a failing test inside the guest fails the
 * host-side command that started it, without parsing console text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SYS_EXIT			0x18
#define ADP_STOPPED_APPLICATION_EXIT	0x20026

static long semihost(long op, void *arg)
{
	register long x0 __asm__("x0") = op;
	register void *x1 __asm__("x1") = arg;

	__asm__ volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
	return x0;
}

int main(int argc, char **argv)
{
	unsigned long block[2];
	char *end;
	long status;

	if (argc != 2) {
		fprintf(stderr, "usage: %s STATUS\n", argv[0]);
		return 2;
	}
	status = strtol(argv[1], &end, 0);
	if (*end || status < 0 || status > 255) {
		fprintf(stderr, "%s: bad status '%s'\n", argv[0], argv[1]);
		return 2;
	}
	sync();
	block[0] = ADP_STOPPED_APPLICATION_EXIT;
	block[1] = status;
	semihost(SYS_EXIT, block);
	/* Only reached when semihosting is disabled (HLT then traps: SIGTRAP). */
	return 1;
}
