// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The verbs programs' common steps on plain libibverbs (pldma-verbs.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

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
