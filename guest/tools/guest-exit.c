// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guest-exit: end the QEMU run with a given exit status.
 *
 * On aarch64, uses the Arm semihosting SYS_EXIT call (HLT #0xF000), which
 * QEMU serves when started with -semihosting-config enable=on,userspace=on;
 * on x86-64, a 32-bit write of the status to the isa-debug-exit port
 * (-device isa-debug-exit,iobase=0xf4,iosize=4), after which QEMU exits with
 * (status << 1) | 1, which scripts/run-guest decodes.  Either way QEMU
 * itself exits with the status, so a failing test inside the guest fails the
 * host-side command that started it, without parsing console text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __x86_64__
#include <sys/io.h>

#define DEBUG_EXIT_PORT	0xf4

static void guest_exit(long status)
{
	if (ioperm(DEBUG_EXIT_PORT, 4, 1)) {
		perror("ioperm");
		return;
	}
	outl((unsigned int)status, DEBUG_EXIT_PORT);
}
#else

#define SYS_EXIT			0x18
#define ADP_STOPPED_APPLICATION_EXIT	0x20026

static long semihost(long op, void *arg)
{
	register long x0 __asm__("x0") = op;
	register void *x1 __asm__("x1") = arg;

	__asm__ volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
	return x0;
}

static void guest_exit(long status)
{
	unsigned long block[2];

	block[0] = ADP_STOPPED_APPLICATION_EXIT;
	block[1] = status;
	semihost(SYS_EXIT, block);
}
#endif

int main(int argc, char **argv)
{
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
	guest_exit(status);
	/*
	 * Only reached when the exit device is absent: semihosting disabled
	 * (HLT then traps: SIGTRAP), or no isa-debug-exit on x86.
	 */
	return 1;
}
