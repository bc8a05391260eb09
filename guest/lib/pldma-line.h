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
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

/* A request and its reply line (a static buffer), or NULL */
static inline char *line_vrpc(int fd, const char *fmt, va_list ap)
{
	static char reply[256];
	char buf[256];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (sendf(fd, "%s", buf) || recv_line(fd, reply, sizeof(reply)))
		return NULL;
	return reply;
}

static inline char *__attribute__((format(printf, 2, 3)))
line_rpc(int fd, const char *fmt, ...)
{
	va_list ap;
	char *r;

	va_start(ap, fmt);
	r = line_vrpc(fd, fmt, ap);
	va_end(ap);
	return r;
}

/* A reply that says "OK ..." */
static inline int line_ok(const char *r)
{
	return r && !strncmp(r, "OK", 2);
}

/*
 * A QP as the QP request and its reply carry it: "QPN PSN IP MAC MTU",
 * IP a host-order 32-bit number (as pldma_info.ip), MAC aa:bb:.., MTU in
 * bytes, optional (0: unknown).
 */
struct line_qp {
	uint32_t qpn, psn, ip, mtu;
	uint8_t mac[6];
};

static inline void line_qp_fmt(char *buf, size_t len, const struct line_qp *q)
{
	snprintf(buf, len, "%u %u %u %02x:%02x:%02x:%02x:%02x:%02x %u",
		 q->qpn, q->psn, q->ip, q->mac[0], q->mac[1], q->mac[2],
		 q->mac[3], q->mac[4], q->mac[5], q->mtu);
}

/* 0, or -1 if @s is no QP */
static inline int line_qp_parse(const char *s, struct line_qp *q)
{
	unsigned int m[6], i;

	memset(q, 0, sizeof(*q));
	if (sscanf(s, "%u %u %u %x:%x:%x:%x:%x:%x %u", &q->qpn, &q->psn,
		   &q->ip, &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
		   &q->mtu) < 9)
		return -1;
	for (i = 0; i < 6; i++) {
		if (m[i] > 0xff)
			return -1;
		q->mac[i] = m[i];
	}
	return 0;
}

#endif
