/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * PLDMA uverbs ABI: the driver data that pldma.ko's ib_device and the
 * rdma-core provider (rdma-core/providers/pldma) exchange through uverbs'
 * udata.  Shared by both, as include/uapi/rdma/<driver>-abi.h is upstream.
 */
#ifndef PLDMA_ABI_USER_H
#define PLDMA_ABI_USER_H

#include <linux/types.h>

/* The uverbs ABI version the ib_device reports and the provider accepts. */
#define PLDMA_UVERBS_ABI_VERSION 2

/* The ib_device's name prefix: the provider matches it (VERBS_NAME_MATCH). */
#define PLDMA_IB_NAME_PREFIX "pldma"

/*
 * alloc_ucontext response: the address space the process's PDs use, and
 * the context's channel page (pldma-regs.h "Channel page": the SQ's ring
 * registers and doorbell, the CQ and RQ doorbells), to map with mmap() of
 * db_mmap_size bytes at db_mmap_offset of the uverbs file (MAP_SHARED).
 * A context holds no channel until its first QP, or the first mmap() of
 * that page, claims one (EBUSY: the device has none free); a provider maps
 * pages only for its QPs, so that a context without a QP costs none.  Each
 * QP's send queue is a channel of the context (the create_qp response
 * names its page: the context's own for the first, then others); the CQ
 * doorbell works through any of them (the same PASID).
 */
struct pldma_alloc_ucontext_resp {
	__u32 pasid;		/* the PASID the process's mm is bound to */
	__u32 num_qps;		/* QPs of the device */
	__u32 num_cqs;		/* CQs of the device (0: none) */
	__u32 max_xfer;		/* bytes a work request moves at most */
	__aligned_u64 db_mmap_offset;
	__u32 db_mmap_size;
	__u32 reserved;
};

/*
 * create_cq response: the CQ's ring of @entries CQEs (PLDMA_CQE_*), mapped
 * read-only (PROT_READ, MAP_SHARED) from @mmap_offset, @mmap_size bytes.
 * Consumer index and arming through the channel page (PLDMA_CH_CQ_DB).
 */
struct pldma_create_cq_resp {
	__u32 cq;		/* the device's CQ index */
	__u32 entries;		/* 2^k */
	__aligned_u64 mmap_offset;
	__u32 mmap_size;
	__u32 reserved;
};

/*
 * create_qp: the send queue is a ring of @sq_entries descriptors
 * (PLDMA_DESC_*) in the process's memory, at @sq_ring (64-byte aligned),
 * which the provider gives the QP's channel (PLDMA_CH_RING_BASE/SIZE,
 * the page at @db_mmap_offset) itself;
 * the response says the RQ ring (PLDMA_RWQE_*, read-write mapping), whose
 * doorbell is PLDMA_CH_RQ_TAIL; a QP of an SRQ has none (rq_entries 0).
 */
/*
 * Inline data (IBV_SEND_INLINE): the provider copies a SEND's or WRITE's
 * payload, at most this many bytes, into a buffer of its own for the SQ
 * slot when the WR is posted, and the descriptor points there: the device
 * reads it through the process's PASID like any other buffer, and the
 * slot is reused only once the device has completed it.
 */
#define PLDMA_IB_MAX_INLINE	256

struct pldma_create_qp_resp {
	__u32 rq_entries;	/* 2^k, 0: no RQ */
	__u32 rq_mmap_size;
	__aligned_u64 rq_mmap_offset;
	__u32 sq_entries;	/* 2^k: the ring the provider allocates */
	__u32 max_inline;	/* bytes of inline data a WR may carry */
	/* ABI 2: the QP's channel page (SQ ring, doorbells) to map */
	__aligned_u64 db_mmap_offset;
	__u32 db_mmap_size;
	/*
	 * A UD QP's largest datagram, the port's active MTU (a send of more
	 * is refused at post); 0 for a connected QP
	 */
	__u32 ud_max_msg;
};

/*
 * create_ah response (user AHs, for UD QPs): the address vector the
 * provider writes into a UD send descriptor (PLDMA_DESC_UD_*): the
 * destination MAC ib_core resolved, in wire order, and the destination
 * IPv4 address as PLDMA_DESC_UD_DEST_IP holds it (host order: 10.0.0.2
 * is 0x0a000002).
 */
struct pldma_create_ah_resp {
	__u8  dmac[6];
	__u16 reserved0;
	__u32 dest_ip;
	__u32 reserved[2];
};

/*
 * create_srq response: the SRQ's ring of @entries receive WQEs
 * (PLDMA_RWQE_*, as an RQ's) followed by its doorbell record
 * (PLDMA_SRQ_DBREC_*, at @entries * PLDMA_RWQE_SIZE), mapped read-write
 * (MAP_SHARED) from @mmap_offset, @mmap_size bytes.  The provider writes
 * WQEs and then the record's TAIL (one past the last WQE posted); the
 * device writes its HEAD (the next WQE it takes), so the ring is full when
 * TAIL + 1 is HEAD (mod @entries).  There is no doorbell register.  A QP
 * created with the SRQ has no RQ (its rq_entries is 0).
 */
struct pldma_create_srq_resp {
	__u32 srq;		/* the device's SRQ index */
	__u32 entries;		/* 2^k: max_wr is entries - 1 */
	__aligned_u64 mmap_offset;
	__u32 mmap_size;
	__u32 reserved;
};

#endif /* PLDMA_ABI_USER_H */
