// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The verbs programs' common steps on plain libibverbs, and the verbs
 * tests' TAP lines (pldma-verbs.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pldma-util.h"		/* pu_byte() */
#include "pldma-verbs.h"

struct ibv_context *pv_open(const char *name, int *ndev)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n = 0, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (!list)
		err = errno;
	for (i = 0; list && i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			err = errno;
		break;
	}
	if (list)
		ibv_free_device_list(list);
	if (ndev)
		*ndev = n;
	if (!ctx)
		errno = err;
	return ctx;
}

struct ibv_pd *pv_open_pd(const char *name, int gid_index,
			  union ibv_gid *gid)
{
	struct ibv_context *ctx = pv_open(name, NULL);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;

	if (pd && !ibv_query_gid(ctx, PV_PORT, gid_index, gid))
		return pd;
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	return NULL;
}

int pv_ipv4_gid(struct ibv_context *ctx, int tbl_len, union ibv_gid *gid,
		char *ifname)
{
	int i;

	for (i = 0; i < tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, PV_PORT, i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    !IN6_IS_ADDR_V4MAPPED((struct in6_addr *)e.gid.raw))
			continue;
		if (ifname && !if_indextoname(e.ndev_ifindex, ifname))
			return -1;
		*gid = e.gid;
		return i;
	}
	return -1;
}

int pv_read_mac(const char *ifname, uint8_t mac[6])
{
	unsigned int m[6], i;
	char path[96];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]);
	fclose(f);
	if (n != 6)
		return -1;
	for (i = 0; i < 6; i++)
		mac[i] = m[i];
	return 0;
}

int pv_neigh_add(const char *ifname, uint32_t ip, const uint8_t mac[6])
{
	struct arpreq r = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&r.arp_pa;
	int s, ret;

	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = ip;
	r.arp_ha.sa_family = ARPHRD_ETHER;
	memcpy(r.arp_ha.sa_data, mac, 6);
	r.arp_flags = ATF_PERM | ATF_COM;
	snprintf(r.arp_dev, sizeof(r.arp_dev), "%s", ifname);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return -errno;
	ret = ioctl(s, SIOCSARP, &r) ? -errno : 0;
	close(s);
	return ret;
}

int pv_qp_init(struct ibv_qp *qp, unsigned int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = PV_PORT,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ? -1 : 0;
}

int pv_qp_rtr(struct ibv_qp *qp, const struct pv_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = p->mtu,
		.dest_qp_num = p->dest_qpn,
		.rq_psn = p->rq_psn,
		.max_dest_rd_atomic = p->max_dest_rd_atomic,
		.min_rnr_timer = 12,		/* 0.64 ms */
		.ah_attr = {
			.is_global = 1,
			.port_num = PV_PORT,
			.grh = { .dgid = p->dgid, .sgid_index = p->sgid_index,
				 .hop_limit = p->hop_limit },
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER) ? -1 : 0;
}

int pv_qp_rts(struct ibv_qp *qp, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = sq_psn,
		.timeout = 14,			/* 4.096 us << 14: 67 ms */
		.retry_cnt = 7,
		.rnr_retry = 7,			/* infinite */
		.max_rd_atomic = 1,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) ? -1 : 0;
}

int pv_qp_connect(struct ibv_qp *qp, int sgid_index, unsigned int access,
		  const struct ibv_qp *peer, const union ibv_gid *peer_gid)
{
	struct pv_path p = {
		.dest_qpn = peer->qp_num,
		.rq_psn = 0x1000 + peer->qp_num % 4096,
		.mtu = IBV_MTU_1024, .dgid = *peer_gid,
		.sgid_index = sgid_index, .hop_limit = 1,
		.max_dest_rd_atomic = 1,
	};

	if (pv_qp_init(qp, access) || pv_qp_rtr(qp, &p))
		return -1;
	return pv_qp_rts(qp, 0x1000 + qp->qp_num % 4096);
}

int pv_poll_ms(struct ibv_cq *cq, int ms, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		r = ibv_poll_cq(cq, 1, wc);
		if (r)
			return r == 1 ? 1 : -1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return 0;
		usleep(1000);
	}
}

int pv_poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return pv_poll_ms(cq, 20000, wc) == 1 ? 0 : -1;
}

void *pv_untouched(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct ibv_mr *pv_untouched_mr(struct ibv_pd *pd, size_t len,
			       unsigned int access, int odp)
{
	void *p = pv_untouched(len);

	if (odp)
		access |= IBV_ACCESS_ON_DEMAND;
	return p ? ibv_reg_mr(pd, p, len, access) : NULL;
}

int pv_resident(const void *p, size_t len)
{
	size_t pg = sysconf(_SC_PAGESIZE), i, n = (len + pg - 1) / pg;
	unsigned char *vec = malloc(n ? n : 1);
	int cnt = 0;

	if (!vec || mincore((void *)p, len, vec))
		cnt = -1;
	for (i = 0; cnt >= 0 && i < n; i++)
		cnt += vec[i] & 1;
	free(vec);
	return cnt;
}

long pv_read_long(const char *path, const char *fmt)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

void pv_fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pu_byte(seed, i);
}

/* The verbs tests' TAP: checks numbered, failures counted */
static int tap_n, tap_fails;

void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		tap_fails++;
}

int tap_failed(void)
{
	return tap_fails;
}

int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_fails ? 1 : 0;
}
