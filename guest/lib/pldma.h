/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libpldma: user-space access to the PLDMA engine through /dev/pldmaN.
 *
 * A struct pldma_chan is one open of a PLDMA device: one hardware channel
 * bound to this process's address space.  Transfers are submitted with a
 * fault strategy (PLDMA_STRAT_* from the driver's uapi header) and waited
 * for; the results carry the time and the faults the transfer took.
 */
#ifndef PLDMA_LIB_H
#define PLDMA_LIB_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/pldma.h"
#include "hw/misc/pldma-regs.h"

struct pldma_chan;

struct pldma_result {
	uint32_t status;	/* PLDMA_ST_* */
	uint32_t flags;		/* PLDMA_FR_F_* of the fault that ended it */
	uint64_t bytes;
	uint64_t fault_va;
	uint64_t time_ns;	/* strategy work + transfer + wait */
	uint64_t faults;	/* device faults (reported + stalls) */
	uint64_t restarts;	/* RESTARTs and RETRY resumes */
	uint64_t pages;		/* pages made present / pinned / populated */
	uint64_t touch_pages;	/* of which touch-ahead beyond the fault */
	uint64_t batch_pages;	/* of which listed by a batched fault */
};

/* Open /dev/pldmaN (path NULL: the first device that works). */
struct pldma_chan *pldma_open(const char *path);
/* Open the first device in fault mode PLDMA_MODE_STALL / _REPORT (0: any). */
struct pldma_chan *pldma_open_mode(int mode);
void pldma_close(struct pldma_chan *ch);

int pldma_fd(const struct pldma_chan *ch);
const struct pldma_info *pldma_info(const struct pldma_chan *ch);
int pldma_fault_mode(const struct pldma_chan *ch);
/*
 * The fault mode's name: "stall", "report", or "pri" (pldma-pci's PCIe page
 * requests: PLDMA_MODE_STALL to the interface, PLDMA_CAP_FAULT_PRI in cap)
 */
const char *pldma_mode_name(const struct pldma_chan *ch);
/* Whether this channel's device can run the strategy */
int pldma_supports(const struct pldma_chan *ch, int strategy);
/* uapi/pldma.h's table: the PLDMA_MODE_BIT()s @strategy works in, its window */
unsigned int pldma_strategy_modes(int strategy);
unsigned int pldma_strategy_window(int strategy);

/*
 * Strategy names: pin, prefault, stall, one, touchN (e.g. touch16), user;
 * "pri" parses as PLDMA_STRAT_STALL (the same strategy on a pri device)
 */
const char *pldma_strategy_name(int strategy, unsigned int touch,
				char *buf, size_t len);
/* The same, but PLDMA_STRAT_STALL is "pri" on a pri device */
const char *pldma_chan_strategy_name(const struct pldma_chan *ch,
				     int strategy, unsigned int touch,
				     char *buf, size_t len);
int pldma_strategy_parse(const char *s, int *strategy, unsigned int *touch);

/* Channel registers and counters (the mmap()ed channel page) */
uint32_t pldma_reg(const struct pldma_chan *ch, uint32_t off);
uint32_t pldma_hw_counter(const struct pldma_chan *ch, uint32_t off);

struct pldma_xfer {
	uint8_t opcode;		/* PLDMA_OP_COPY, _FILL, _RDMA_WRITE, _RDMA_READ */
	void *dst;		/* COPY, FILL, RDMA_READ */
	const void *src;	/* COPY, RDMA_WRITE */
	size_t len;
	uint64_t pattern;
	int strategy;		/* local faults; not PLDMA_STRAT_PIN for RDMA */
	unsigned int touch;	/* touch-ahead pages */
	uint64_t cookie;
	/* RDMA_WRITE/READ: the responder's window key and address */
	uint32_t rkey;
	uint64_t remote_va;
};

/*
 * Submit one descriptor; *slot receives the ring slot to wait for.
 * Returns 0 or -errno.  PLDMA_STRAT_PIN goes through the driver (it pins),
 * everything else writes the ring and rings the doorbell in the mmap()ed
 * channel page.
 */
int pldma_submit(struct pldma_chan *ch, const struct pldma_xfer *x,
		 unsigned int *slot);
/* Wait for a slot; fills status/bytes/fault_va.  0 or -errno (-ETIMEDOUT,
 * -EIO when the channel went to ERROR: it is cancelled before returning,
 * -ENODATA when the driver cancelled a fault on the completion record, so
 * the record was dropped; the transfer did not complete as far as the
 * caller can tell).
 */
int pldma_wait(struct pldma_chan *ch, unsigned int slot, int timeout_ms,
	       struct pldma_result *res);
/*
 * Submit + wait with time and fault accounting.  0 or -errno; -ETIMEDOUT
 * when the transfer made no progress (bytes, faults, restarts, pages made
 * present) for @timeout_ms: a long transfer that moves is waited for.
 * pldma_copy() and the RDMA helpers below use 60 s and 20 s.
 */
int pldma_run(struct pldma_chan *ch, const struct pldma_xfer *x,
	      int timeout_ms, struct pldma_result *res);
int pldma_copy(struct pldma_chan *ch, void *dst, const void *src, size_t len,
	       int strategy, unsigned int touch, struct pldma_result *res);

int pldma_get_stats(struct pldma_chan *ch, struct pldma_stats *st);
/* Signal eventfd efd on each completion interrupt (-1: stop) */
int pldma_set_eventfd(struct pldma_chan *ch, int efd);

/*
 * User fault strategy: a handler thread receives the faults of this
 * channel, calls fn (NULL: pldma_fault_populate) and asks for RESTART when
 * fn returns 0, CANCEL otherwise.  Environment: PLDMA_FAULT_CPU=n pins the
 * handler thread to CPU n.  The driver cancels a fault left unanswered for
 * a second.
 */
typedef int (*pldma_fault_fn)(struct pldma_chan *ch,
			      const struct pldma_fault *f, void *arg);
int pldma_fault_populate(struct pldma_chan *ch, const struct pldma_fault *f,
			 void *arg);
int pldma_fault_thread_start(struct pldma_chan *ch, pldma_fault_fn fn,
			     void *arg);
void pldma_fault_thread_stop(struct pldma_chan *ch);
/* Faults handled by the thread so far */
uint64_t pldma_fault_thread_count(const struct pldma_chan *ch);

uint64_t pldma_now_ns(void);

/*
 * Remote DMA (pldma_info()->node_id != 0: the device has a link).  Register
 * [addr, addr + len) for remote RDMA WRITE and/or READ (PLDMA_MR_ACCESS_*);
 * *rkey receives the key the remote requester puts in its descriptors; only
 * a QP whose PD is this process's (a QP of one of its channels) reaches it.
 * Nothing is pinned: responder faults are served with @strategy
 * (PLDMA_STRAT_ONE, _TOUCH with @touch pages, or _STALL on a stall-mode
 * device; < 0: the file's default).
 * The key lives until pldma_dereg_mr() or pldma_close().  0 or -errno.
 */
int pldma_reg_mr(struct pldma_chan *ch, void *addr, size_t len,
		 unsigned int access, int strategy, unsigned int touch,
		 uint32_t *rkey);
int pldma_dereg_mr(struct pldma_chan *ch, uint32_t rkey);
/*
 * RDMA WRITE @src -> (rkey, remote_va) and READ (...) -> @dst, to the peer
 * of the channel's QP, which must be connected (pldma_qp_create() and
 * pldma_qp_connect() below); on a channel without one the completion's
 * status is PLDMA_ST_BAD_OPCODE, on a QP not in RTS PLDMA_ST_BAD_QP.
 */
int pldma_rdma_write(struct pldma_chan *ch, uint32_t rkey,
		     uint64_t remote_va, const void *src, size_t len,
		     int strategy, unsigned int touch, struct pldma_result *res);
int pldma_rdma_read(struct pldma_chan *ch, uint32_t rkey,
		    uint64_t remote_va, void *dst, size_t len, int strategy,
		    unsigned int touch, struct pldma_result *res);
/* The device's network counters (PLDMA_NCNT_*) and their names */
int pldma_net_stats(struct pldma_chan *ch, struct pldma_net_stats *st);
const char *pldma_net_counter_name(unsigned int i);


/*
 * Queue pairs (pldma_info()->num_qps != 0): RC connections as verbs make
 * them.  pldma_qp_create() makes the channel's QP (the channel is its send
 * queue, the process's PASID its PD) and fills @local with what the peer
 * needs: QPN, a random 24-bit start PSN (getrandom), the NIC's IP and MAC.
 * After exchanging the infos (pldma-peer.h), pldma_qp_connect() moves the
 * QP through INIT (remote WRITE and READ allowed), RTR (the peer's QPN, PSN,
 * IP, MAC; the path MTU both devices take) and RTS (@local's PSN).  From then on
 * the channel's RDMA WRITE and READ go to the QP's peer (RDMA needs a
 * connected QP: there is no other way to name a peer).  Destroying the QP
 * (or closing the channel) moves it to RESET.  0 or -errno.
 */
#define PLDMA_QP_MIN_RNR_TIMER	14	/* IB code: 1.28 ms */
#define PLDMA_QP_TIMEOUT	14	/* 4.096 us << 14: 67 ms */

struct pldma_qp_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t ip;		/* as pldma_info.ip */
	uint8_t mac[6];
	uint32_t mtu;		/* the device's, bytes (0: unknown) */
	uint32_t timeout;	/* local ACK timeout, IB code (0: PLDMA_QP_TIMEOUT) */
};

int pldma_qp_create(struct pldma_chan *ch, struct pldma_qp_info *local);
int pldma_qp_connect(struct pldma_chan *ch, const struct pldma_qp_info *local,
		     const struct pldma_qp_info *remote);
int pldma_qp_destroy(struct pldma_chan *ch);
/* The channel's QPN (0: none), raw modify (qpn filled in) and query */
uint32_t pldma_qp_num(const struct pldma_chan *ch);
int pldma_qp_modify(struct pldma_chan *ch, struct pldma_qp_attr *a);
int pldma_qp_query(struct pldma_chan *ch, struct pldma_qp_attr *a);

/*
 * Completion queues, receive queues, SEND and RECV (pldma_info()->num_cqs
 * != 0), as verbs: a CQ of @entries (2^k) CQEs on the channel's device,
 * polled in user space (the ring is mapped; the consumer index goes to the
 * device through the channel page), armed for one event with
 * pldma_req_notify_cq() and waited for with pldma_cq_wait_event().  A QP
 * made with pldma_qp_create_caps() has a receive queue of @rq_entries WQEs
 * (2^k, 0: none) and the given send and receive CQs (NULL: none); after
 * pldma_qp_connect(), pldma_post_send() queues SEND, SEND with immediate
 * and RDMA WRITE with immediate on the channel's ring (PLDMA_DF_SIGNALED:
 * a CQE on the send CQ, whose wr_id is the WR's), pldma_post_recv() a
 * receive WQE of up to PLDMA_RWQE_MAX_SGE buffers.  None of these makes a
 * system call but the wait.  Immediates are in host order here (the wire's
 * big-endian in descriptors and CQEs).  pldma_close() unmaps the rings; the
 * driver destroys the QP and the CQs.  0 or -errno, but pldma_poll_cq():
 * the number of completions in @wc.
 */
struct pldma_cq;

struct pldma_qp_caps {
	unsigned int rq_entries;
	struct pldma_cq *send_cq;
	struct pldma_cq *recv_cq;
};

struct pldma_sge {
	void *addr;
	uint32_t len;
};

struct pldma_send_wr {
	uint64_t wr_id;
	uint8_t opcode;		/* PLDMA_OP_SEND, _SEND_IMM, _RDMA_WRITE_IMM */
	unsigned int flags;	/* PLDMA_DF_SIGNALED, PLDMA_DF_SOLICITED */
	const void *addr;
	uint32_t len;
	uint32_t imm;		/* _IMM opcodes */
	uint32_t rkey;		/* RDMA_WRITE_IMM: the peer's window */
	uint64_t remote_va;
};

struct pldma_wc {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t imm;		/* with PLDMA_CQE_F_IMM */
	uint32_t qpn;
	uint32_t src_qp;
	uint8_t opcode;		/* PLDMA_WC_* */
	uint8_t status;		/* PLDMA_WC_ST_* */
	uint8_t flags;		/* PLDMA_CQE_F_* */
	uint32_t vendor_err;	/* PLDMA_ST_* of an error */
};

struct pldma_cq *pldma_cq_create(struct pldma_chan *ch, unsigned int entries);
int pldma_cq_destroy(struct pldma_cq *cq);
unsigned int pldma_cq_index(const struct pldma_cq *cq);
int pldma_qp_create_caps(struct pldma_chan *ch, const struct pldma_qp_caps *caps,
			 struct pldma_qp_info *local);
int pldma_post_send(struct pldma_chan *ch, const struct pldma_send_wr *wr);
int pldma_post_recv(struct pldma_chan *ch, uint64_t wr_id,
		    const struct pldma_sge *sg, unsigned int nsge);
int pldma_poll_cq(struct pldma_cq *cq, int n, struct pldma_wc *wc);
int pldma_req_notify_cq(struct pldma_cq *cq, int solicited_only);
/*
 * Wait (up to @timeout_ms, 0: do not) for an event of @cq since the last
 * one this returned: -ETIMEDOUT, -EIO (the CQ is in ERROR), 0
 */
int pldma_cq_wait_event(struct pldma_cq *cq, int timeout_ms);
/* Events seen and the QP's fatal errors, as of the last wait */
uint32_t pldma_cq_events(const struct pldma_cq *cq);
uint32_t pldma_cq_qp_errors(const struct pldma_cq *cq);

#endif
