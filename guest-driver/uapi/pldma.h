/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * PLDMA driver user-space interface: /dev/pldmaN.
 *
 * One open file owns one channel of one PLDMA device, bound to the address
 * space (PASID) of the process that opened it.  The channel's register page
 * is mmap()-able (offset 0, exactly one page), and so are the rings of the
 * file's CQs and receive queue (at the offsets PLDMA_IOC_CQ_CREATE and
 * PLDMA_IOC_QP_CREATE return, whole, MAP_SHARED); descriptors and completion
 * records live in the process's own memory, see
 * include/hw/misc/pldma-regs.h for their layout.
 *
 * All structures are padded to multiples of 8 bytes and every reserved
 * field must be zero.
 */
#ifndef _UAPI_PLDMA_H
#define _UAPI_PLDMA_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define PLDMA_UAPI_VERSION	1

/* Fault strategies, selectable per transfer */
#define PLDMA_STRAT_PIN		0	/* pin_user_pages around the transfer */
#define PLDMA_STRAT_PREFAULT	1	/* user space populates (MADV_POPULATE) */
#define PLDMA_STRAT_STALL	2	/* stall mode: kernel IOPF resolves */
#define PLDMA_STRAT_ONE		3	/* report mode: driver faults one page */
#define PLDMA_STRAT_TOUCH	4	/* report mode: driver faults N pages */
#define PLDMA_STRAT_USER	5	/* report mode: forwarded to the process */
/*
 * Report mode, batched faults: the device lists the missing pages of the
 * descriptor within touch_ahead pages of the fault (1..PLDMA_BATCH_MAX, per
 * buffer), the driver makes them all present and restarts once.
 */
#define PLDMA_STRAT_BATCH	6
#define PLDMA_STRAT_NUM		7
#define PLDMA_BATCH_MAX		64	/* = the device's AHEAD window limit */

#define PLDMA_TOUCH_MAX		512	/* largest touch-ahead window, pages */

/* pldma_info.fault_mode */
#define PLDMA_MODE_STALL	1
#define PLDMA_MODE_REPORT	2
#define PLDMA_MODE_BIT(m)	(1U << (m))
#define PLDMA_MODES_BOTH	(PLDMA_MODE_BIT(PLDMA_MODE_STALL) | \
				 PLDMA_MODE_BIT(PLDMA_MODE_REPORT))

/*
 * The strategies as one table, a row per PLDMA_STRAT_* in their order:
 * its name (debugfs, the tracepoints, libpldma's parser and the tools
 * call it that), the fault modes it works in (PLDMA_MODE_BIT()s), the
 * largest window of pages it takes in touch_ahead (0: it takes none, and
 * touch_ahead must be 0), and PLDMA_STRATF_* flags.
 */
struct pldma_strategy_info {
	const char *name;
	__u32 modes;
	__u32 window;
	__u32 flags;
};

/*
 * It resolves a registered window's responder faults too (PLDMA_MR_STRATEGY);
 * the others are about a local transfer's own buffers
 */
#define PLDMA_STRATF_MR		0x1

#define PLDMA_STRATEGY_TABLE {						\
	{ "pin", PLDMA_MODES_BOTH, 0, 0 },				\
	{ "prefault", PLDMA_MODES_BOTH, 0, 0 },				\
	{ "stall", PLDMA_MODE_BIT(PLDMA_MODE_STALL), 0, PLDMA_STRATF_MR },	\
	{ "one", PLDMA_MODE_BIT(PLDMA_MODE_REPORT), 0, PLDMA_STRATF_MR },	\
	{ "touch", PLDMA_MODE_BIT(PLDMA_MODE_REPORT), PLDMA_TOUCH_MAX,	\
	  PLDMA_STRATF_MR },						\
	{ "user", PLDMA_MODE_BIT(PLDMA_MODE_REPORT), 0, PLDMA_STRATF_MR },	\
	{ "batch", PLDMA_MODE_BIT(PLDMA_MODE_REPORT), PLDMA_BATCH_MAX, 0 },	\
}

struct pldma_version {
	__u32 uapi_version;	/* PLDMA_UAPI_VERSION */
	__u32 hw_version;	/* PLDMA_VERSION register */
	__u32 rsvd[2];
};

struct pldma_info {
	__u32 hw_version;
	__u32 cap;		/* PLDMA_CAP register */
	__u32 channel;		/* channel owned by this file */
	__u32 pasid;		/* PASID of the bound address space */
	__u32 fault_mode;	/* PLDMA_MODE_* */
	__u32 max_xfer;
	__u32 chunk_size;
	__u32 mmap_size;	/* size to mmap(): one page */
	__u32 node_id;		/* remote DMA: this node, 0 = no link */
	__u32 mtu;		/* remote DMA: payload bytes a segment */
	__u32 max_mrs;		/* remote windows an open file may hold */
	/* queue pairs (PLDMA_CAP_QP with a link), else all 0 */
	__u32 ip;		/* this NIC's IPv4 address, a.b.c.d as
				 * a << 24 | b << 16 | c << 8 | d
				 */
	__u8  mac[6];		/* this NIC's MAC */
	__u16 rsvd0;
	__u32 num_qps;		/* QPs of the device */
	__u32 num_cqs;		/* CQs of the device (PLDMA_CAP_CQ), else 0 */
};

/*
 * Without PLDMA_STRATEGY_SLOT: the channel's default strategy.  With it:
 * the strategy of the descriptor in ring slot @slot (a fault reports its
 * ring index), so transfers queued together can use different strategies;
 * it applies until that slot is set again.
 */
#define PLDMA_STRATEGY_SLOT	0x1

struct pldma_strategy {
	__u32 strategy;		/* PLDMA_STRAT_* */
	__u32 touch_ahead;	/* pages for PLDMA_STRAT_TOUCH, 1..PLDMA_TOUCH_MAX */
	__u32 flags;		/* PLDMA_STRATEGY_* */
	__u32 slot;		/* ring index with PLDMA_STRATEGY_SLOT, else 0 */
};

/*
 * Kernel-mediated submission: the driver writes the descriptor at the ring's
 * TAIL (the ring is set up by user space through the channel page), applies
 * the strategy (pins for PLDMA_STRAT_PIN) and rings the doorbell.  The
 * descriptor always gets PLDMA_DF_INTR.  compl is required for
 * PLDMA_STRAT_PIN.  Pins are long-term and counted in the process's pinned
 * memory (VmPin) against RLIMIT_MEMLOCK (unless CAP_IPC_LOCK): over the limit
 * the submission fails with ENOMEM.  They are released once the descriptor
 * has run, whether or not its completion record could be written or read.
 */
struct pldma_submit {
	__u8  opcode;		/* PLDMA_OP_COPY or PLDMA_OP_FILL */
	__u8  rsvd0;
	__u16 rsvd1;
	__u32 len;
	__u64 src;
	__u64 dst;
	__u64 pattern;
	__u64 compl;		/* completion record VA, 8-byte aligned */
	__u64 cookie;
	__u32 strategy;		/* PLDMA_STRAT_* */
	__u32 touch_ahead;
	__u32 index;		/* out: ring index used */
	__u32 rsvd2[3];
};

/*
 * Wait until the u32 status at compl is non-zero.  Errors: ETIMEDOUT, EIO
 * (the channel is in ERROR), ENODATA (the record will never come: the
 * driver cancelled a fault on the record itself, which drops it).
 */
struct pldma_wait {
	__u64 compl;
	__u32 timeout_ms;	/* 1..60000 */
	__u32 status;		/* out: PLDMA_ST_* */
};

/* A fault forwarded to the owner (PLDMA_STRAT_USER) */
struct pldma_fault {
	__u64 va;
	__u32 flags;		/* PLDMA_FR_F_* */
	__u32 seq;		/* token, unique per file: pass back in
				 * pldma_fault_resolve
				 */
	__u32 desc;
	__u32 done;
	__u32 len;
	__u32 timeout_ms;	/* in: how long to wait, 0 = do not wait */
	__u32 rsvd[4];
};

#define PLDMA_RESOLVE_RESTART	1
#define PLDMA_RESOLVE_CANCEL	2

struct pldma_fault_resolve {
	__u32 seq;
	__u32 action;		/* PLDMA_RESOLVE_* */
	__u32 rsvd[2];
};

/* Per-file statistics (the channel's hardware counters are in its page) */
struct pldma_stats {
	__u64 faults;		/* report-mode faults seen by the driver */
	__u64 stalls;		/* stall-mode faults (device counter) */
	__u64 pages_present;	/* pages the driver made present */
	__u64 touch_pages;	/* of which touch-ahead beyond the fault */
	__u64 restarts;
	__u64 cancels;
	__u64 aborts;
	__u64 user_faults;	/* forwarded to user space */
	__u64 pinned_pages;
	__u64 remote_faults;	/* responder faults on this file's windows */
	__u64 remote_pages;	/* pages made present for them */
	__u64 remote_failed;	/* answered KEY_CMD_FAILED */
	__u64 batch_pages;	/* batched faults: more pages made present */
	__u64 rsvd[3];
};

/* Signal an eventfd on every completion interrupt of the channel */
struct pldma_eventfd {
	__s32 fd;		/* eventfd, or -1 to stop signalling */
	__u32 rsvd;
};

/*
 * Remote DMA (PLDMA_CAP_REMOTE): expose [va, va + len) of the caller's
 * address space to RDMA WRITE and/or READ from the peers of the caller's
 * QPs (a key of the file's PASID, a QP's PD: QP_CREATE below).  Nothing is
 * pinned: a responder access to a missing page faults, and the driver makes
 * the page present with the window's strategy (report mode: one page, or a
 * touch-ahead window clamped to the window's range; stall mode: the IOMMU
 * core).  The returned rkey goes into the remote requester's descriptors
 * (PLDMA_DESC_RKEY); it is revoked by PLDMA_IOC_DEREG_MR and when the file
 * is released.  ENOSPC: the device's key table is full; EDQUOT: the file
 * holds max_mrs windows.
 */
#define PLDMA_MR_ACCESS_WRITE	0x1	/* remote RDMA WRITE (PLDMA_KEY_ACC_WRITE) */
#define PLDMA_MR_ACCESS_READ	0x2	/* remote RDMA READ (PLDMA_KEY_ACC_READ) */
#define PLDMA_MR_ACCESS_ATOMIC	0x4	/* remote atomics (PLDMA_KEY_ACC_ATOMIC) */
#define PLDMA_MR_ACCESS_FLUSH	0x8	/* remote FLUSH (PLDMA_KEY_ACC_FLUSH) */

/* pldma_reg_mr.flags */
#define PLDMA_MR_STRATEGY	0x1	/* strategy/touch_ahead given, else the
					 * file's default strategy
					 */

struct pldma_reg_mr {
	__u64 va;
	__u64 len;
	__u32 access;		/* PLDMA_MR_ACCESS_* */
	__u32 flags;		/* PLDMA_MR_* */
	__u32 strategy;		/* responder faults: PLDMA_STRAT_ONE or _TOUCH
				 * (report mode), PLDMA_STRAT_STALL (stall mode)
				 */
	__u32 touch_ahead;	/* pages for PLDMA_STRAT_TOUCH */
	__u32 rkey;		/* out */
	__u32 rsvd[3];
};

struct pldma_dereg_mr {
	__u32 rkey;
	__u32 rsvd;
};

/* The device's network counters (PLDMA_NCNT_*, wrapping 32-bit) */
#define PLDMA_NET_COUNTERS	32

struct pldma_net_stats {
	__u32 node_id;
	__u32 num;		/* counters valid in cnt[]: PLDMA_NCNT_NUM */
	__u32 cnt[PLDMA_NET_COUNTERS];
};

/*
 * Queue pairs (PLDMA_CAP_QP): RoCEv2 Reliable Connection endpoints, as
 * verbs model them.  PLDMA_IOC_QP_CREATE makes one QP on the file: the
 * file's channel becomes its send queue (RDMA WRITE and READ descriptors
 * of that channel go to the QP's peer; without a QP in RTS they fail) and
 * its protection domain is the file's PASID (incoming requests may only use
 * keys of this process).  A file holds at most one QP.  The QP starts in
 * RESET; PLDMA_IOC_QP_MODIFY moves it through INIT, RTR and RTS with the
 * attributes attr_mask names (PLDMA_QPA_* of pldma-regs.h: the bit values
 * of verbs' enum ibv_qp_attr_mask; PLDMA_QPA_PD and _SQ are the driver's
 * own and refused).  A QP that enters RESET gets a new QPN (returned in
 * qpn).  PLDMA_IOC_QP_DESTROY, and the release of the file, move the QP to
 * RESET and free it.  Only the file that created a QP can modify, query or
 * destroy it: any other QPN is ENOENT.
 */
/*
 * With PLDMA_CAP_CQ a QP can have a receive queue and completion queues,
 * given at creation and staged by the driver at RESET->INIT (verbs'
 * ibv_create_qp: max_recv_wr, send_cq, recv_cq).  The RQ is a ring of
 * rq_entries receive WQEs (PLDMA_RWQE_* of pldma-regs.h) in memory the
 * driver allocates: map rq_mmap_size bytes at rq_mmap_offset (MAP_SHARED),
 * write WQEs there and ring PLDMA_CH_RQ_TAIL on the channel page.  The
 * send and receive CQs (flags PLDMA_QPC_SEND_CQ, PLDMA_QPC_RECV_CQ) are
 * CQs of this file (PLDMA_IOC_CQ_CREATE); without them the QP writes no
 * CQEs for that side.  A QP without an RQ answers SEND and WRITE with
 * immediate with RNR NAKs.  A fault on a receive buffer is a responder
 * fault the driver serves in the file's address space (report mode: the
 * file's strategy, one page or a touch-ahead window; stall mode: the IOMMU
 * core).  PLDMA_IOC_QP_DESTROY is EBUSY while the RQ is mapped.
 */
#define PLDMA_QPC_SEND_CQ	0x1
#define PLDMA_QPC_RECV_CQ	0x2

struct pldma_qp_create {
	__u32 qpn;		/* out */
	__u32 flags;		/* PLDMA_QPC_* */
	__u32 rq_entries;	/* 0: no RQ; else 2^k, PLDMA_RQ_MIN..MAX_ENTRIES */
	__u32 send_cq;		/* with PLDMA_QPC_SEND_CQ: a CQ of this file */
	__u32 recv_cq;		/* with PLDMA_QPC_RECV_CQ: likewise */
	__u32 rq_mmap_size;	/* out: the RQ ring's size, whole pages */
	__u64 rq_mmap_offset;	/* out: its mmap() offset */
};

struct pldma_qp_attr {
	__u32 qpn;		/* in: the file's QP; out: its QPN now */
	__u32 attr_mask;	/* PLDMA_QPA_*: which fields below count */
	__u32 qp_state;		/* PLDMA_QPS_*; QUERY: the current state */
	__u32 access;		/* PLDMA_MR_ACCESS_*: remote requests allowed */
	__u32 dest_qpn;		/* 24 bits, not 0 or 1 */
	__u32 dest_ip;		/* IPv4 as pldma_info.ip (GID ::ffff:ip) */
	__u8  dest_mac[6];	/* unicast */
	__u16 rsvd0;
	__u32 sq_psn;		/* 24 bits */
	__u32 rq_psn;		/* 24 bits */
	__u32 path_mtu;		/* PLDMA_MTU_* (as enum ibv_mtu) */
	__u8  timeout;		/* 0..31: 4.096 us << timeout */
	__u8  retry_cnt;	/* 0..7 */
	__u8  rnr_retry;	/* 0..7, 7 = infinite */
	__u8  min_rnr_timer;	/* 0..31, IB code */
	/*
	 * PLDMA_QPA_MAX_QP_RD_ATOMIC: the READ requests kept outstanding,
	 * 0..PLDMA_QP_MAX_RD_ATOMIC (0 counts as 1)
	 */
	__u8  max_rd_atomic;
	__u8  rsvd1[3];
	/*
	 * PLDMA_QPA_QKEY: the Q_Key of an unreliable datagram QP (the
	 * ib_device's UD QPs only; a file's QP is RC: EINVAL)
	 */
	__u32 qkey;
	__u32 rsvd[2];
};

struct pldma_qp_destroy {
	__u32 qpn;
	__u32 rsvd;
};

/*
 * Completion queues (PLDMA_CAP_CQ), as verbs' CQs: a ring of @entries CQEs
 * (PLDMA_CQE_* of pldma-regs.h) in memory the driver allocates for the
 * device (DMA without PASID), and mapped read-only by the owner: map
 * mmap_size bytes at mmap_offset (MAP_SHARED, PROT_READ).  The device
 * writes each CQE, then its owner byte (bit 0 is 1 on the first pass over
 * the ring and flips at every wrap), so polling needs no system call.  The
 * owner reports what it consumed, and arms the CQ for one event, through
 * PLDMA_CH_CQ_DB on its channel page (PLDMA_CQ_DB_MAKE); the CQ's PD is
 * the file's PASID, so no other process's doorbell reaches it.  A file
 * holds at most PLDMA_MAX_FILE_CQS CQs (EDQUOT); ENOSPC: the device has no
 * free CQ.  PLDMA_IOC_CQ_DESTROY is EBUSY while a QP uses the CQ or the
 * ring is mapped; release() destroys the rest.
 */
#define PLDMA_MAX_FILE_CQS	8

struct pldma_cq_create {
	__u32 entries;		/* 2^k, PLDMA_CQ_MIN..MAX_ENTRIES */
	__u32 cq;		/* out: the CQ index (CQEs, doorbells, QPs) */
	__u64 mmap_offset;	/* out */
	__u32 mmap_size;	/* out: whole pages */
	__u32 rsvd[3];
};

struct pldma_cq_destroy {
	__u32 cq;
	__u32 rsvd;
};

/*
 * Wait for an event of CQ @cq, as ibv_get_cq_event(): the driver counts
 * the CQ's events (an armed CQ that fired: IRQ_CQ); the call returns as
 * soon as the count differs from @events (the count the caller last saw,
 * 0 at first) and says the count in @events.  So an event that came between
 * arming the CQ and the call is never lost: arm (PLDMA_CQ_DB_CMD_ARM), poll
 * the CQ once more, then wait.  timeout_ms 0 does not sleep.  @qp_errors
 * is the number of times the file's QP entered ERR by itself (a transport
 * error: verbs' IB_EVENT_QP_FATAL; its work requests complete with
 * PLDMA_WC_ST_WR_FLUSH_ERR).  Errors: ETIMEDOUT; EIO: the CQ went to ERROR
 * (overflow, or a CQE write failed: it takes no more CQEs, destroy it);
 * ENOENT: not a CQ of this file; ENODEV: the device was removed.
 */
struct pldma_cq_wait {
	__u32 cq;
	__u32 timeout_ms;	/* 0..60000 */
	__u32 events;		/* in: the count last seen; out: the count */
	__u32 qp_errors;	/* out */
	__u32 rsvd[2];
};

#define PLDMA_IOC_MAGIC		0xb7

#define PLDMA_IOC_VERSION	_IOR(PLDMA_IOC_MAGIC, 0x00, struct pldma_version)
#define PLDMA_IOC_INFO		_IOR(PLDMA_IOC_MAGIC, 0x01, struct pldma_info)
#define PLDMA_IOC_SET_STRATEGY	_IOW(PLDMA_IOC_MAGIC, 0x02, struct pldma_strategy)
#define PLDMA_IOC_SUBMIT	_IOWR(PLDMA_IOC_MAGIC, 0x03, struct pldma_submit)
#define PLDMA_IOC_WAIT		_IOWR(PLDMA_IOC_MAGIC, 0x04, struct pldma_wait)
#define PLDMA_IOC_FAULT_GET	_IOWR(PLDMA_IOC_MAGIC, 0x05, struct pldma_fault)
#define PLDMA_IOC_FAULT_RESOLVE	_IOW(PLDMA_IOC_MAGIC, 0x06, struct pldma_fault_resolve)
#define PLDMA_IOC_GET_STATS	_IOR(PLDMA_IOC_MAGIC, 0x07, struct pldma_stats)
#define PLDMA_IOC_SET_EVENTFD	_IOW(PLDMA_IOC_MAGIC, 0x08, struct pldma_eventfd)
#define PLDMA_IOC_REG_MR	_IOWR(PLDMA_IOC_MAGIC, 0x09, struct pldma_reg_mr)
#define PLDMA_IOC_DEREG_MR	_IOW(PLDMA_IOC_MAGIC, 0x0a, struct pldma_dereg_mr)
#define PLDMA_IOC_NET_STATS	_IOR(PLDMA_IOC_MAGIC, 0x0b, struct pldma_net_stats)
#define PLDMA_IOC_QP_CREATE	_IOWR(PLDMA_IOC_MAGIC, 0x0c, struct pldma_qp_create)
#define PLDMA_IOC_QP_MODIFY	_IOWR(PLDMA_IOC_MAGIC, 0x0d, struct pldma_qp_attr)
#define PLDMA_IOC_QP_QUERY	_IOWR(PLDMA_IOC_MAGIC, 0x0e, struct pldma_qp_attr)
#define PLDMA_IOC_QP_DESTROY	_IOW(PLDMA_IOC_MAGIC, 0x0f, struct pldma_qp_destroy)
#define PLDMA_IOC_CQ_CREATE	_IOWR(PLDMA_IOC_MAGIC, 0x10, struct pldma_cq_create)
#define PLDMA_IOC_CQ_DESTROY	_IOW(PLDMA_IOC_MAGIC, 0x11, struct pldma_cq_destroy)
#define PLDMA_IOC_CQ_WAIT	_IOWR(PLDMA_IOC_MAGIC, 0x12, struct pldma_cq_wait)

#endif /* _UAPI_PLDMA_H */
