// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA's verbs: address handles, RoCEv2 over IPv4, for the kernel's UD
 * sends (QP1, ib_gsi.c) and user space's (create_user_ah): a UD QP's send
 * descriptor carries the address vector, which the provider writes from
 * what the response gives it (pldma_create_ah_resp: the MAC ib_core
 * resolved, ah_attr->roce.dmac, and the IPv4 address).  Programs also
 * test a GID by making an AH of it (UCX picks its GID index so, and falls
 * back to the link-local entry when every AH fails); a GID that is not
 * IPv4 is EAFNOSUPPORT here, so they pick the IPv4 RoCEv2 entry, as on
 * rxe.
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#include <linux/etherdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "pldma_drv.h"
#include "pldma_ib.h"
#include "uapi/pldma-abi.h"

int pldma_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		       struct ib_udata *udata)
{
	struct pldma_ib_ah *ah = to_pah(ibah);
	const struct rdma_ah_attr *attr = init->ah_attr;
	const struct ib_global_route *grh;
	const struct in6_addr *sgid, *dgid;

	if (udata && udata->inlen)
		return -EINVAL;
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	if (!grh->sgid_attr ||
	    grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	sgid = (const struct in6_addr *)grh->sgid_attr->gid.raw;
	dgid = (const struct in6_addr *)grh->dgid.raw;
	if (!ipv6_addr_v4mapped(sgid) || !ipv6_addr_v4mapped(dgid))
		return -EAFNOSUPPORT;	/* RoCEv2 over IPv4 only */
	ah->saddr = sgid->s6_addr32[3];
	ah->daddr = dgid->s6_addr32[3];
	ah->tos = grh->traffic_class;
	ah->ttl = grh->hop_limit > 1 ? grh->hop_limit : 64;
	ether_addr_copy(ah->dmac, attr->roce.dmac);
	if (udata && udata->outlen) {
		struct pldma_create_ah_resp resp = {
			.dest_ip = be32_to_cpu(ah->daddr),
		};

		/* a UD send needs a unicast MAC; ib_core resolved it */
		if (!is_valid_ether_addr(ah->dmac))
			return -EINVAL;
		ether_addr_copy(resp.dmac, ah->dmac);
		return ib_copy_to_udata(udata, &resp,
					min(udata->outlen, sizeof(resp)));
	}
	return 0;
}

int pldma_ib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}
