/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The side channel of the multi-node tests: a TCP connection carrying one
 * text line per request or reply (pldma-peer.h's protocol, and the
 * programs that speak verbs to rxe or to a memory node).
 */
#ifndef PLDMA_LINE_H
#define PLDMA_LINE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

/* One line (a '\n' is added); -1 if it does not fit in 255 bytes or fails */
static inline int __attribute__((format(printf, 2, 3)))
sendf(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(buf) - 1)
		return -1;
	buf[n++] = '\n';
	return write(fd, buf, n) == n ? 0 : -1;
}

/* One line into @buf, without its '\n' (cut at @len - 1); -1 at EOF */
static inline int recv_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	return 0;
}

/*
 * Connect to @host:@port (IPv4), with TCP_NODELAY; the other node may
 * still be booting, so try every 200 ms for 120 s.
 */
static inline int connect_to(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd, i, one = 1;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return -1;
	for (i = 0; i < 600; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			return fd;
		}
		close(fd);
		usleep(200000);
	}
	return -1;
}

#endif
