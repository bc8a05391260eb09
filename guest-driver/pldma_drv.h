/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PLDMA driver internals, shared by the files of pldma.ko:
 *
 *   core.c      module init/exit; probe and removal shared by both buses
 *   cdev.c      /dev/pldmaN: open, release, mmap, poll, read, the ioctls
 *   irq.c       interrupts: completions, draining the fault queue
 *   fault.c     a channel's report-mode fault service (one-by-one,
 *               touch-ahead, batch, forwarding), the no-progress watchdogs
 *   strategy.c  the strategies, stall-mode counters, pinning
 *   platform.c  platform_driver glue ("exanest,pldma")
 *   pci.c       pci_driver glue (pldma-pci: pcim_*, MSI-X, PASID)
 *   remote.c    remote DMA: the key table (registered windows), the
 *               REG_MR/DEREG_MR/NET_STATS ioctls, and the service of their
 *               responder faults
 *   qp.c        RC queue pairs: the QP_CREATE/MODIFY/QUERY/DESTROY ioctls
 *   cq.c        completion queues (CQ_CREATE/DESTROY/WAIT), mmap() of CQ,
 *               RQ and SRQ rings, CQ and QP error interrupts, the service
 *               of RECV-buffer responder faults
 *   srq.c       shared receive queues (the ib_device's alone: ib_srq.c),
 *               their limit and error interrupts
 *   debugfs.c   /sys/kernel/debug/pldma/pldmaN/{stats,net}
 *   eth.c       the Ethernet function: a net_device on the PLDMA's link,
 *               whose IPv4 address is the node's RoCE address (NET_IP)
 *
 * Every open of /dev/pldmaN binds the caller's mm to the device with SVA,
 * claims a free channel and ties it to the PASID.  The channel page can be
 * mmap()ed; descriptors, rings and completion records live in the process's
 * memory.  Page faults of the device are served according to the strategy
 * the file selected: stall mode is served by the IOMMU core (IOPF), and so
 * is pri mode (pldma-pci's PCIe page requests, the PCIe equivalent of the
 * SMMU's stall: to the driver a stall mode under another name); in
 * report mode the driver makes one page or a window present in the bound mm
 * and restarts the channel, or forwards the fault to the process.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#ifndef _PLDMA_DRV_H
#define _PLDMA_DRV_H

#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <hw/misc/pldma-regs.h>
#include "uapi/pldma.h"

/* why a fault was cancelled (tracepoints) */
#define PLDMA_TR_UNRESOLVED	1	/* not mapped, fault-in failed */
#define PLDMA_TR_REFAULTS	2	/* refault limit */
#define PLDMA_TR_NO_PROGRESS	3	/* watchdog */
#define PLDMA_TR_USER		4	/* RESOLVE(CANCEL) */
#define PLDMA_TR_SLOW		5	/* watchdog: the fault-in is busy */

#define PLDMA_HIST_BUCKETS	21	/* <1us, then [2^(i-1), 2^i) us */
#define PLDMA_NO_PROGRESS_MS	1000	/* a faulted channel that does not move */
#define PLDMA_AGED_WINDOW	64	/* pages refreshed at a pinned page's fault */
/*
 * A fault-in that is still working when the no-progress watchdog fires
 * (its task ran at least PLDMA_BUSY_NS on a CPU in the last period: a
 * swap-in under memory pressure reclaims and decompresses) gets another
 * period, up to PLDMA_SLOW_PERIODS in all; one that sleeps (a filler that
 * does not answer) does not.
 */
#define PLDMA_BUSY_NS		(20 * NSEC_PER_MSEC)
#define PLDMA_SLOW_PERIODS	30
#define PLDMA_STALL_CHECK_MS	(PLDMA_NO_PROGRESS_MS / 4) /* stall mode: poll */
#define PLDMA_MAX_REFAULTS	8	/* same VA faulting again and again */
#define PLDMA_MAX_MOVES		64	/* ... after answers that resolved it */
#define PLDMA_MAX_PINS		64	/* pinned transfers in flight per file */
#define PLDMA_DRAIN_US		1000000	/* release(): wait for the channel */
#define PLDMA_MAX_MRS		16	/* remote windows (keys) per open file */
#define PLDMA_MAX_CTX_SRQS	8	/* SRQs per ucontext (srq.c) */

/* why a key was revoked (tracepoints) */
#define PLDMA_KR_USER		1	/* DEREG_MR */
#define PLDMA_KR_RELEASE	2	/* the file was released */
#define PLDMA_KR_DETACH		3	/* the device was removed */

struct pldma_counters {
	atomic64_t faults[PLDMA_STRAT_NUM];
	atomic64_t stalls;
	atomic64_t pages_present;
	atomic64_t touch_pages;
	atomic64_t batch_pages;
	atomic64_t restarts;
	atomic64_t cancels;
	atomic64_t aborts;
	atomic64_t user_faults;
	atomic64_t pinned_pages;
	atomic64_t fq_overflows;
	atomic64_t ch_errors;
	atomic64_t cancel_noprogress;	/* by the watchdog */
	atomic64_t slow_extended;	/* watchdog periods given to a busy
					 * fault-in
					 */
	atomic64_t cancel_refaults;	/* livelock guard */
	atomic64_t cancel_unresolved;	/* not mapped, fault-in failed */
	atomic64_t moved_refaults;	/* resolved, then faulted again */
	atomic64_t lost_records;	/* completion write cancelled */
	atomic64_t remote_faults;	/* responder faults served */
	atomic64_t remote_pages;	/* pages made present for them */
	atomic64_t remote_failed;	/* answered KEY_CMD_FAILED */
	atomic64_t remote_stale;	/* records of revoked keys (device) */
	atomic64_t mrs;			/* windows registered (device) */
	atomic64_t cq_events;		/* IRQ_CQ events (device) */
	atomic64_t cq_errors;		/* CQs gone to ERROR (device) */
	atomic64_t qp_errors;		/* QPs gone to ERR (device) */
	atomic64_t recv_faults;		/* RECV-buffer responder faults */
	atomic64_t srq_events;		/* IRQ_SRQ limit events (device) */
	atomic64_t srq_errors;		/* SRQs gone to ERROR (device) */
	atomic64_t hist[PLDMA_HIST_BUCKETS];
};

struct pldma_ctx;
struct pldma_dev;
struct pldma_eth;
struct pldma_ibdev;
struct pldma_gsi;

/*
 * The latest fault record of a channel or of a key (responder fault).
 */
struct pldma_fault_rec {
	u16 channel;
	u16 flags;
	u32 pasid;
	u64 va;
	u32 done;
	u32 desc;
	u32 seq;
	u32 len;
};

/*
 * One QP of the device (PLDMA_CAP_QP).  ctx is the file that created it
 * (NULL: free, and the QP is in RESET); everything here changes under
 * pd->key_mutex.  The destination is what the owner last set (debugfs);
 * the state is the device's (QP_STATE: the device moves a QP to ERR).
 */
struct pldma_qp {
	struct pldma_dev *pd;
	struct pldma_ctx *ctx;		/* also under pd->lock */
	u32 idx;
	u32 qpn;
	u32 dest_qpn;
	u32 dest_ip;
	/*
	 * PLDMA_CAP_CQ: the receive queue (driver memory, mappable by the
	 * owner; rq and ctx change under pd->lock too, for mmap()) and the
	 * CQs (PLDMA_CQ_NONE or an index of the owner's CQ)
	 */
	void *rq;
	dma_addr_t rq_dma;
	u32 rq_entries;
	u32 rq_size;			/* bytes, whole pages */
	atomic_t rq_mapped;		/* VMAs of the ring */
	u32 send_cq;
	u32 recv_cq;
	u32 srq;			/* PLDMA_SRQ_NONE or the index of the
					 * owner's SRQ it receives from (no RQ)
					 */
	u32 type;			/* PLDMA_QP_TYPE_RC, _UC or _UD */
	void *ib_qp;			/* struct ib_qp of ib_qp.c, or NULL;
					 * under pd->lock
					 */
	u16 pd_tag;			/* its PD within the PASID (QP_PD_TAG) */
	/* RECV-buffer responder faults (cq.c), rec under pd->lock */
	bool rec_valid;
	struct pldma_fault_rec rec;
	struct work_struct work;
};

/*
 * One CQ of the device (PLDMA_CAP_CQ).  ctx (the owner, NULL: free) and
 * ring are set and cleared under both pd->key_mutex and pd->lock (the
 * interrupt and mmap() look CQs up under pd->lock); the rest changes only
 * while ctx is NULL, but nqps (under pd->key_mutex), the mappings, the
 * event count and the error flag.
 */
struct pldma_cq {
	struct pldma_ctx *ctx;
	u32 idx;
	u32 entries;
	u32 size;			/* bytes, whole pages */
	void *ring;
	dma_addr_t dma;
	unsigned int nqps;		/* QPs using it */
	atomic_t mapped;		/* VMAs of the ring */
	atomic_t events;		/* IRQ_CQ for it since creation */
	bool error;			/* CQ_ERRORS said so */
	void *ib_cq;			/* struct ib_cq of ib_cq.c, or NULL;
					 * under pd->lock
					 */
	wait_queue_head_t wq;		/* PLDMA_IOC_CQ_WAIT */
};

/*
 * One SRQ of the device (PLDMA_CAP_SRQ), a ucontext's (ib_srq.c): a ring
 * of receive WQEs and, after it, its doorbell record (PLDMA_SRQ_DBREC_*),
 * in memory the driver allocates for the device (DMA without PASID) and
 * maps read-write to its owner, who posts WQEs and writes the record's
 * TAIL; the device writes its HEAD.  ctx (the owner, NULL: free) and ring
 * are set and cleared under both pd->key_mutex and pd->lock (the
 * interrupt and mmap() look SRQs up under pd->lock), its index in
 * pd->srq_map under pd->key_mutex; the rest changes only while ctx is
 * NULL, but nqps (under pd->key_mutex), the mappings, the event count and
 * the error flag.
 */
struct pldma_srq {
	struct pldma_ctx *ctx;
	u32 idx;
	u32 entries;
	u32 size;			/* bytes: ring and record, whole pages */
	void *ring;
	dma_addr_t dma;
	u16 pd_tag;			/* its PD within the PASID (SRQ_PD_TAG) */
	unsigned int nqps;		/* QPs receiving from it */
	atomic_t mapped;		/* VMAs of the ring */
	atomic_t events;		/* limit events since creation */
	bool error;			/* SRQ_ERRORS said so */
	void *ib_srq;			/* struct ib_srq of ib_srq.c, or NULL;
					 * under pd->lock
					 */
};

/* mmap() offsets of the rings (pgoff 0 is the channel page) */
#define PLDMA_MMAP_RQ		BIT_ULL(32)
#define PLDMA_MMAP_CQ(n)	((2ULL << 32) + ((u64)(n) << 24))
#define PLDMA_MMAP_CQ_MAX	PLDMA_MMAP_CQ(PLDMA_MAX_CQS)
#define PLDMA_MMAP_SRQ(n)	((3ULL << 32) + ((u64)(n) << 24))
#define PLDMA_MMAP_SRQ_MAX	PLDMA_MMAP_SRQ(PLDMA_MAX_SRQS)

/*
 * One entry of the device's key table: a window [va, va + len) of the
 * owner's address space exposed to remote requesters.  ctx is set and
 * cleared under both pd->key_mutex and pd->lock (the IRQ thread looks keys
 * up under pd->lock); the rest changes only while ctx is NULL.  The work
 * serves the key's responder faults (remote.c).
 */
#define PLDMA_RUF_SEQ		BIT(31)	/* seq of a forwarded responder fault */

/*
 * A fault forwarded to the file's process (strategy user), which reads it
 * with FAULT_GET and answers with RESOLVE: the channel's own fault
 * (PLDMA_FWD_LOCAL, answered with RESTART/CANCEL under its token) or a
 * responder fault on one of the file's windows (PLDMA_FWD_REMOTE, answered
 * with KEY_CMD_RESOLVED/FAILED on the key; its seq has PLDMA_RUF_SEQ set).
 * A slot holds one fault until it is answered or its cause goes away.
 */
enum pldma_fwd_kind {
	PLDMA_FWD_LOCAL,
	PLDMA_FWD_REMOTE,
	PLDMA_FWD_KINDS,
};

struct pldma_fwd {
	bool pending;			/* posted, not answered */
	bool delivered;			/* read by FAULT_GET */
	struct pldma_fault f;		/* what FAULT_GET returns */
	u32 token;			/* LOCAL: the driver's fault token */
	struct pldma_key *key;		/* REMOTE: the key and its rkey */
	u32 rkey;
};

struct pldma_key {
	struct pldma_dev *pd;
	struct pldma_ctx *ctx;		/* owner, NULL: free */
	u32 idx;
	u32 rkey;
	u64 va;
	u64 len;
	u32 access;			/* PLDMA_KEY_ACC_* */
	u16 pd_tag;			/* its PD within the PASID (KEY_PD) */
	u32 strategy;			/* PLDMA_STRAT_ONE, _TOUCH, _USER, _STALL */
	u32 touch;
	bool rec_valid;			/* under pd->lock */
	struct pldma_fault_rec rec;
	struct work_struct work;
};

/*
 * One interrupt: the platform device's line, INTx, or one MSI-X vector of
 * pldma-pci, which serves the IRQ_STATUS bits in @mask (docs/specs/pldma.rst,
 * "PCI device": vector n = IRQ_CH_DONE(n), then fault queue, then errors).
 */
struct pldma_vec {
	struct pldma_dev *pd;
	u32 mask;
};

#define PLDMA_MAX_VECS	PLDMA_PCI_NUM_VECS(PLDMA_MAX_CHANNELS)

/*
 * Refcounted: open files keep it (and the struct device) after the device
 * is removed (PCI hot-unplug); gone_sem/gone fence every register access
 * of a file against that removal.
 */
struct pldma_dev {
	struct kref ref;
	struct rw_semaphore gone_sem;
	bool gone;			/* removed: no register access */
	bool unregistered;
	struct device *dev;
	void __iomem *base;
	phys_addr_t phys;
	int irq;
	int id;
	u32 version;
	u32 cap;
	u32 nch;
	u32 max_xfer;
	u32 chunk;
	bool stall_mode;	/* stall or pri: the IOMMU's IOPF serves faults */
	bool pri_mode;		/* pri: the faults are PCIe page requests */
	bool iopf;		/* < 6.16: IOMMU_DEV_FEAT_IOPF enabled */
	u32 irq_mask;
	struct pldma_vec vecs[PLDMA_MAX_VECS];
	char name[16];
	struct miscdevice misc;

	spinlock_t lock;		/* protects chans[] */
	struct pldma_ctx *chans[PLDMA_MAX_CHANNELS];
	struct workqueue_struct *wq;	/* fault service, one work per channel */
	unsigned long flags;
#define PLDMA_F_OVERFLOW	0

	__le32 *fq;			/* fault queue, PLDMA_FR_SIZE records */
	dma_addr_t fq_dma;
	u32 fq_head;
	u32 fq_entries;

	/* remote DMA (PLDMA_CAP_REMOTE with a link: node_id != 0) */
	u32 node_id;
	u32 mtu;
	/*
	 * The staging registers of the global page (KEY_*, QP_*), key and
	 * QP ownership
	 */
	struct mutex key_mutex;
	struct pldma_key keys[PLDMA_NUM_KEYS];
	/* queue pairs (PLDMA_CAP_QP with a link, else num_qps = 0) */
	u32 num_qps;
	u32 ip;
	u8 mac[6];
	struct pldma_qp qps[PLDMA_MAX_QPS];
	/* completion queues (PLDMA_CAP_CQ with QPs, else num_cqs = 0) */
	u32 num_cqs;
	struct pldma_cq cqs[PLDMA_MAX_CQS];
	/* shared receive queues (PLDMA_CAP_SRQ with CQs, else num_srqs = 0) */
	u32 num_srqs;
	DECLARE_BITMAP(srq_map, PLDMA_MAX_SRQS);	/* allocated indices */
	struct pldma_srq srqs[PLDMA_MAX_SRQS];
	struct pldma_eth *eth;		/* the net_device's, or NULL */

	/* the RDMA device (ib_main.c), with QPs */
	struct pldma_ibdev *ib;
	/* its QP1 (ib_gsi.c), which eth.c's receive path serves */
	spinlock_t gsi_lock;		/* gsi, gsi_st */
	struct pldma_gsi *gsi;
	struct {
		u64 rx;			/* UD datagrams to QP1 */
		u64 rx_dropped;		/* malformed, no QP, no WQE, key */
		u64 tx;
		u64 tx_errors;		/* not taken by the transmit ring */
	} gsi_st;

	struct dentry *dbg;
	struct pldma_counters st;
};

struct pldma_pin {
	struct list_head node;
	u64 va;
	u32 done_at;			/* COMPLETED once its descriptor ran */
	struct page **pages;
	unsigned long npages;
	bool write;
};

struct pldma_slot_strat {
	u8 valid;
	u8 strategy;
	u16 touch;
};

/*
 * One open file.  It lives until the file is released *and* no fault work
 * runs for it any more (ref): a fault-in may wait for a slow filler (a
 * userfaultfd handler) long after the channel was given back.
 */
struct pldma_ctx {
	struct kref ref;
	struct pldma_dev *pd;
	unsigned int ch;		/* PLDMA_CH_NONE: none claimed yet */
	/* a ucontext's second and later QP channels: the ucontext's ctx */
	struct pldma_ctx *parent;
	struct mutex claim_lock;	/* pldma_ctx_claim() */
	bool detached;			/* device removed while open */
	struct address_space *mapping;	/* of the node, to zap mmaps */
	void __iomem *chregs;
	struct iommu_sva *sva;
	u32 pasid;
	struct mm_struct *mm;
	pid_t tgid;
	kuid_t uid;			/* for the per-user channel limit */

	struct mutex mutex;		/* ioctl state: pins, strategy */
	u32 strategy;			/* channel default */
	u32 touch;
	struct pldma_slot_strat *slots;	/* per ring slot, or NULL */
	struct list_head pins;
	unsigned int npins;

	wait_queue_head_t wq;		/* completions, errors */
	wait_queue_head_t fwq;		/* forwarded faults */
	struct eventfd_ctx *efd;	/* under pd->lock */
	atomic_t events;
	u32 poll_seen;

	/*
	 * Report-mode fault service, per channel (pldma_fault_work): the IRQ
	 * thread only queues the work, so one tenant's slow fault never
	 * delays another's.  Every command to the channel and the state below
	 * are under cmd_lock; nothing sleeps on user memory under it.
	 */
	struct work_struct fault_work;
	/*
	 * No progress for ~1 s: CANCEL.  Report mode: armed by each fault
	 * that made progress (pldma_watchdog).  Stall mode, where the driver
	 * sees no fault: re-armed every PLDMA_STALL_CHECK_MS while the file
	 * is open (pldma_stall_watchdog).
	 */
	struct delayed_work watchdog;
	struct mutex cmd_lock;		/* CH_CMD writes, the state below */
	bool closing;			/* release() started: no more commands */
	bool fault_seen;
	bool fault_busy;		/* the current fault is taken, unanswered */
	u32 fault_cnt;			/* device FAULTS counter at that fault */
	u32 token;			/* identifies it; answers must match */
	ktime_t fault_start;
	/*
	 * The task serving the channel's fault now (the fault work, in
	 * pldma_fault_in()), its CPU time at the watchdog's last look, and
	 * the periods given to it; under flock
	 */
	struct task_struct *resolver;
	u64 resolver_rt;
	unsigned int slow_periods;
	u64 fault_va;
	u32 prog_completed;		/* position at the last progress */
	u32 prog_desc;
	u32 prog_done;
	u64 prog_va;
	ktime_t stall_since;		/* stall mode: STALLED at prog_* since */
	bool stall_seen;		/* prog_* and stall_since are valid */
	unsigned int refaults;		/* at the same VA, unresolved */
	unsigned int moves;		/* at the same VA, after resolving */
	bool resolved;			/* the last RESTART made it present */
	u64 lost_compl;			/* record VA a CANCEL dropped */

	/* latest fault record of the channel and the forwarded fault */
	spinlock_t flock;
	bool rec_valid;
	struct pldma_fault_rec rec;
	/* faults forwarded to the process, one slot of each kind, flock */
	struct pldma_fwd fwd[PLDMA_FWD_KINDS];
	u32 ruf_seq;			/* last responder fault's number */

	u32 hw_last[PLDMA_CNT_NUM];
	unsigned int nmrs;		/* keys held, under pd->key_mutex */
	struct pldma_qp *qp;		/* the file's QP, under pd->key_mutex
					 * (set and cleared under pd->lock too)
					 */
	unsigned int ncqs;		/* CQs held, under pd->key_mutex */
	unsigned int nsrqs;		/* SRQs held, under pd->key_mutex */
	atomic_t qp_errors;		/* its QP entered ERR (QP_ERRORS) */
	struct pldma_counters st;
};

/* The fault mode's name: "pri" is stall mode through PCIe page requests */
/* ctx->ch of a context that holds no channel (a ucontext before its QP) */
#define PLDMA_CH_NONE	UINT_MAX

static inline bool pldma_ctx_has_ch(const struct pldma_ctx *ctx)
{
	return READ_ONCE(ctx->ch) != PLDMA_CH_NONE;
}

static inline const char *pldma_mode_name(const struct pldma_dev *pd)
{
	if (pd->pri_mode)
		return "pri";
	return pd->stall_mode ? "stall" : "report";
}

static inline u32 pldma_rd(struct pldma_dev *pd, u32 off)
{
	return readl(pd->base + off);
}

static inline void pldma_wr(struct pldma_dev *pd, u32 off, u32 val)
{
	writel(val, pd->base + off);
}

/* A batched fault's missing pages (channel AHEAD_* registers) */
struct pldma_batch {
	u64 src, src_map;
	u64 dst, dst_map;
};

static inline u32 pldma_ch_rd(struct pldma_ctx *ctx, u32 off)
{
	return readl(ctx->chregs + off);
}

static inline u64 pldma_ch_rd64(struct pldma_ctx *ctx, u32 lo)
{
	return pldma_ch_rd(ctx, lo) | (u64)pldma_ch_rd(ctx, lo + 4) << 32;
}

static inline void pldma_ch_wr(struct pldma_ctx *ctx, u32 off, u32 val)
{
	writel(val, ctx->chregs + off);
}

/* Count an event in the file's and the device's statistics. */
static inline void pldma_add(struct pldma_ctx *ctx, size_t off, s64 n)
{
	atomic64_add(n, (atomic64_t *)((char *)&ctx->st + off));
	atomic64_add(n, (atomic64_t *)((char *)&ctx->pd->st + off));
}

#define pldma_count(ctx, field, n) \
	pldma_add(ctx, offsetof(struct pldma_counters, field), n)

/* core.c */
void pldma_dev_put(struct pldma_dev *pd);
struct pldma_dev *pldma_dev_alloc(struct device *dev);
int pldma_core_probe(struct pldma_dev *pd, resource_size_t size);
int pldma_register(struct pldma_dev *pd, const char *bus);
int pldma_ib_register(struct pldma_dev *pd);
bool pldma_gsi_rx(struct pldma_dev *pd, const u8 *f, u32 size);
bool pldma_roce_ud_frame(const u8 *f, u32 size);
/*
 * skb->mark of the frames of QP1 (ib_gsi.c), the only ones whose ICRC the
 * device is asked to fill in: a frame that only looks like RoCEv2 UD (a
 * user's UDP datagram to port 4791) is sent as it is, its ICRC the user's
 */
#define PLDMA_GSI_SKB_MARK	0x504c4431	/* "PLD1" */
void pldma_ib_unregister(struct pldma_dev *pd);
void pldma_unregister(void *data);

/* cdev.c */
extern const struct file_operations pldma_fops;
void pldma_ctx_put(struct pldma_ctx *ctx);
struct pldma_ctx *pldma_ctx_open(struct pldma_dev *pd,
				 struct address_space *mapping, bool claim);
int pldma_ctx_claim(struct pldma_ctx *ctx);
void pldma_ctx_close(struct pldma_ctx *ctx);
struct net_device *pldma_eth_netdev(struct pldma_dev *pd);
void pldma_ctx_detach(struct pldma_ctx *ctx);

/* irq.c */
irqreturn_t pldma_irq(int irq, void *data);
irqreturn_t pldma_irq_thread(int irq, void *data);

/* fault.c */
void pldma_fault_work(struct work_struct *work);
void pldma_watchdog(struct work_struct *work);
void pldma_stall_watchdog(struct work_struct *work);
bool pldma_answer(struct pldma_ctx *ctx, u32 token, u32 cmd, bool resolved,
		  u32 reason);
bool pldma_touch_present(u64 va, bool write);
int pldma_fault_in(struct pldma_ctx *ctx, u64 va, bool write, unsigned int n);
bool pldma_va_mapped(struct pldma_ctx *ctx, u64 va);
void pldma_fwd_post(struct pldma_ctx *ctx, enum pldma_fwd_kind kind,
		    const struct pldma_fault_rec *f, u32 seq);
void pldma_hist(struct pldma_dev *pd, ktime_t start);

/* strategy.c */
int pldma_check_strategy(struct pldma_ctx *ctx, u32 strategy, u32 touch);
bool pldma_strategy_for_mr(u32 strategy);
const char *pldma_strategy_name(u32 strategy);
void pldma_set_strategy(struct pldma_ctx *ctx, u32 strategy, u32 touch);
int pldma_set_slot_strategy(struct pldma_ctx *ctx, u32 slot, u32 strategy,
			    u32 touch);
void pldma_sync_hw_counters(struct pldma_ctx *ctx);
void pldma_unpin(struct pldma_ctx *ctx, struct pldma_pin *p);
int pldma_pin_range(struct pldma_ctx *ctx, u64 va, u32 len, bool write,
		    u32 done_at);
void pldma_reap_pins(struct pldma_ctx *ctx, bool all);

/* remote.c */
void pldma_remote_init(struct pldma_dev *pd);
int pldma_mr_register(struct pldma_ctx *ctx, struct pldma_reg_mr *r,
		      u16 pd_tag);
int pldma_mr_deregister(struct pldma_ctx *ctx, u32 rkey);
long pldma_ioc_reg_mr(struct pldma_ctx *ctx, void __user *arg);
long pldma_ioc_dereg_mr(struct pldma_ctx *ctx, void __user *arg);
long pldma_ioc_net_stats(struct pldma_ctx *ctx, void __user *arg);
void pldma_revoke_all(struct pldma_ctx *ctx, u32 reason);
void __pldma_key_answer(struct pldma_key *k, u32 rkey, bool resolved);
void pldma_key_answer(struct pldma_key *k, u32 rkey, bool resolved);
void pldma_keys_resync(struct pldma_dev *pd);
void pldma_key_fault_work(struct work_struct *work);

/* qp.c */
void pldma_qp_init(struct pldma_dev *pd);
int pldma_qp_create(struct pldma_ctx *ctx, struct pldma_qp_create *c,
		    u16 pd_tag, u32 srq, u32 type);
int pldma_qp_modify(struct pldma_ctx *ctx, struct pldma_qp_attr *a);
int pldma_qp_query(struct pldma_ctx *ctx, struct pldma_qp_attr *a);
int pldma_qp_destroy(struct pldma_ctx *ctx, u32 qpn);
long pldma_ioc_qp_create(struct pldma_ctx *ctx, void __user *arg);
long pldma_ioc_qp_modify(struct pldma_ctx *ctx, void __user *arg);
long pldma_ioc_qp_query(struct pldma_ctx *ctx, void __user *arg);
long pldma_ioc_qp_destroy(struct pldma_ctx *ctx, void __user *arg);
void pldma_qp_release(struct pldma_ctx *ctx);
const char *pldma_qp_state_name(u32 state);
const char *pldma_qp_type_name(u32 type);

/* cq.c */
void pldma_cq_init(struct pldma_dev *pd);
int pldma_cq_create(struct pldma_ctx *ctx, struct pldma_cq_create *c);
int pldma_cq_destroy(struct pldma_ctx *ctx, u32 idx);
void pldma_ib_cq_event(void *ib_cq);
void pldma_ib_qp_fatal(void *ib_qp);
long pldma_ioc_cq_create(struct pldma_ctx *ctx, void __user *arg);
long pldma_ioc_cq_destroy(struct pldma_ctx *ctx, void __user *arg);
long pldma_ioc_cq_wait(struct pldma_ctx *ctx, void __user *arg);
void pldma_cq_release(struct pldma_ctx *ctx);
void pldma_cq_wake_all(struct pldma_ctx *ctx);
int pldma_ring_mmap(struct pldma_ctx *ctx, struct vm_area_struct *vma);
void pldma_cq_irq(struct pldma_dev *pd, u32 status);
u64 pldma_rd_w1c64(struct pldma_dev *pd, u32 lo);
void pldma_kick_recv(struct pldma_dev *pd, const struct pldma_fault_rec *f);
void pldma_recv_fault_work(struct work_struct *work);
void pldma_qps_resync(struct pldma_dev *pd);
int pldma_cq_get(struct pldma_ctx *ctx, u32 idx);
void pldma_cq_put(struct pldma_dev *pd, u32 idx);

/* srq.c */
void pldma_srq_init(struct pldma_dev *pd);
int pldma_srq_create(struct pldma_ctx *ctx, u32 entries, u16 pd_tag,
		     u32 *idx, u32 *mmap_size);
int pldma_srq_destroy(struct pldma_ctx *ctx, u32 idx);
int pldma_srq_arm(struct pldma_ctx *ctx, u32 idx, u32 limit);
int pldma_srq_query(struct pldma_ctx *ctx, u32 idx, u32 *limit);
int pldma_srq_get(struct pldma_ctx *ctx, u32 idx, u16 pd_tag);
void pldma_srq_put(struct pldma_dev *pd, u32 idx);
void pldma_srq_release(struct pldma_ctx *ctx);
void pldma_srq_irq(struct pldma_dev *pd);
void pldma_ib_srq_event(void *ib_srq, bool error);
/* eth.c */
int pldma_eth_register(struct pldma_dev *pd);
void pldma_eth_irq(struct pldma_dev *pd);

/* debugfs.c */
void pldma_debugfs_init(void);
void pldma_debugfs_exit(void);
void pldma_debugfs_add(struct pldma_dev *pd);
void pldma_debugfs_remove(struct pldma_dev *pd);

/* platform.c, pci.c */
extern struct platform_driver pldma_platform_driver;
extern struct pci_driver pldma_pci_driver;

#endif /* _PLDMA_DRV_H */
