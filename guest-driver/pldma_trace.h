/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PLDMA driver tracepoints: the life of a device fault in the driver
 * (received, pages made present, forwarded to user space, restarted or
 * cancelled), pinning, the binding of a channel to a PASID, and remote
 * DMA: windows registered and revoked, responder faults and their answer,
 * queue pairs created, modified and destroyed; completion queues and
 * shared receive queues, their events and errors.
 *
 *   echo 1 > /sys/kernel/tracing/events/pldma/enable
 *
 * Copyright (c) 2026 The PLDMA authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pldma

#if !defined(_PLDMA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _PLDMA_TRACE_H

#include <linux/tracepoint.h>

/* the names of uapi/pldma.h's PLDMA_STRATEGY_TABLE, for the trace tools */
#define pldma_show_strategy(s)					\
	__print_symbolic(s,					\
			 { PLDMA_STRAT_PIN, "pin" },		\
			 { PLDMA_STRAT_PREFAULT, "prefault" },	\
			 { PLDMA_STRAT_STALL, "stall" },		\
			 { PLDMA_STRAT_ONE, "one" },		\
			 { PLDMA_STRAT_TOUCH, "touch" },		\
			 { PLDMA_STRAT_USER, "user" },		\
			 { PLDMA_STRAT_BATCH, "batch" })

#define pldma_show_cancel(r)					\
	__print_symbolic(r,					\
			 { PLDMA_TR_UNRESOLVED, "unresolved" },	\
			 { PLDMA_TR_REFAULTS, "refault-limit" },	\
			 { PLDMA_TR_NO_PROGRESS, "no-progress" },	\
			 { PLDMA_TR_USER, "user" },		\
			 { PLDMA_TR_SLOW, "slow-fault-in" })

/* A fault the channel's work item takes (report mode). */
TRACE_EVENT(pldma_fault,
	    TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, u32 flags, u32 desc,
		     u32 done, u32 strategy, u32 token),
	    TP_ARGS(dev, ch, pasid, va, flags, desc, done, strategy, token),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, ch)
			     __field(u32, pasid)
			     __field(u64, va)
			     __field(u32, flags)
			     __field(u32, desc)
			     __field(u32, done)
			     __field(u32, strategy)
			     __field(u32, token)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->ch = ch;
			   __entry->pasid = pasid;
			   __entry->va = va;
			   __entry->flags = flags;
			   __entry->desc = desc;
			   __entry->done = done;
			   __entry->strategy = strategy;
			   __entry->token = token;
			   ),
	    TP_printk("pldma%d ch%u pasid %u va %#llx flags %s%s%s desc %u done %u strategy %s token %u",
		      __entry->dev, __entry->ch, __entry->pasid, __entry->va,
		      __entry->flags & PLDMA_FR_F_WRITE ? "W" : "R",
		      __entry->flags & PLDMA_FR_F_DESC ? "D" : "",
		      __entry->flags & PLDMA_FR_F_COMPL ? "C" : "",
		      __entry->desc, __entry->done,
		      pldma_show_strategy(__entry->strategy), __entry->token)
);

/* Pages the driver made present for a fault (kernel strategies). */
TRACE_EVENT(pldma_fault_in,
	    TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, u32 strategy,
		     unsigned int want, int done, s64 us),
	    TP_ARGS(dev, ch, pasid, va, strategy, want, done, us),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, ch)
			     __field(u32, pasid)
			     __field(u64, va)
			     __field(u32, strategy)
			     __field(unsigned int, want)
			     __field(int, done)
			     __field(s64, us)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->ch = ch;
			   __entry->pasid = pasid;
			   __entry->va = va;
			   __entry->strategy = strategy;
			   __entry->want = want;
			   __entry->done = done;
			   __entry->us = us;
			   ),
	    TP_printk("pldma%d ch%u pasid %u va %#llx strategy %s pages %d of %u in %lld us",
		      __entry->dev, __entry->ch, __entry->pasid, __entry->va,
		      pldma_show_strategy(__entry->strategy), __entry->done,
		      __entry->want, __entry->us)
);

/* A batched fault: the missing pages the device listed, made present */
TRACE_EVENT(pldma_batch,
	    TP_PROTO(int dev, u32 ch, u32 pasid, u64 src, u64 src_map, u64 dst,
		     u64 dst_map, unsigned int more),
	    TP_ARGS(dev, ch, pasid, src, src_map, dst, dst_map, more),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, ch)
			     __field(u32, pasid)
			     __field(u64, src)
			     __field(u64, src_map)
			     __field(u64, dst)
			     __field(u64, dst_map)
			     __field(unsigned int, more)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->ch = ch;
			   __entry->pasid = pasid;
			   __entry->src = src;
			   __entry->src_map = src_map;
			   __entry->dst = dst;
			   __entry->dst_map = dst_map;
			   __entry->more = more;
			   ),
	    TP_printk("pldma%d ch%u pasid %u src %#llx map %#llx dst %#llx map %#llx: %u more pages",
		      __entry->dev, __entry->ch, __entry->pasid, __entry->src,
		      __entry->src_map, __entry->dst, __entry->dst_map,
		      __entry->more)
);

DECLARE_EVENT_CLASS(pldma_fault_answer,
		    TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, u32 token, u32 reason),
		    TP_ARGS(dev, ch, pasid, va, token, reason),
		    TP_STRUCT__entry(__field(int, dev)
				     __field(u32, ch)
				     __field(u32, pasid)
				     __field(u64, va)
				     __field(u32, token)
				     __field(u32, reason)
				     ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->ch = ch;
				   __entry->pasid = pasid;
				   __entry->va = va;
				   __entry->token = token;
				   __entry->reason = reason;
				   ),
		    TP_printk("pldma%d ch%u pasid %u va %#llx token %u%s%s",
			      __entry->dev, __entry->ch, __entry->pasid, __entry->va,
			      __entry->token, __entry->reason ? " reason " : "",
			      __entry->reason ? pldma_show_cancel(__entry->reason) : "")
);

/* RESTART written for a fault: the device retries from the fault. */
DEFINE_EVENT(pldma_fault_answer, pldma_restart,
	     TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, u32 token, u32 reason),
	     TP_ARGS(dev, ch, pasid, va, token, reason));

/* CANCEL written: the descriptor completes CANCELLED. */
DEFINE_EVENT(pldma_fault_answer, pldma_cancel,
	     TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, u32 token, u32 reason),
	     TP_ARGS(dev, ch, pasid, va, token, reason));

/*
 * The no-progress watchdog found the fault-in still working (busy on a
 * CPU, e.g. a swap-in under memory pressure): another period, no CANCEL.
 */
DEFINE_EVENT(pldma_fault_answer, pldma_slow,
	     TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, u32 token, u32 reason),
	     TP_ARGS(dev, ch, pasid, va, token, reason));

/* A fault forwarded to the owning process (user strategy). */
DEFINE_EVENT(pldma_fault_answer, pldma_forward,
	     TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, u32 token, u32 reason),
	     TP_ARGS(dev, ch, pasid, va, token, reason));

DECLARE_EVENT_CLASS(pldma_pin_class,
		    TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, unsigned long npages,
			     bool write),
		    TP_ARGS(dev, ch, pasid, va, npages, write),
		    TP_STRUCT__entry(__field(int, dev)
				     __field(u32, ch)
				     __field(u32, pasid)
				     __field(u64, va)
				     __field(unsigned long, npages)
				     __field(bool, write)
				     ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->ch = ch;
				   __entry->pasid = pasid;
				   __entry->va = va;
				   __entry->npages = npages;
				   __entry->write = write;
				   ),
		    TP_printk("pldma%d ch%u pasid %u va %#llx pages %lu %s",
			      __entry->dev, __entry->ch, __entry->pasid, __entry->va,
			      __entry->npages, __entry->write ? "write" : "read")
);

DEFINE_EVENT(pldma_pin_class, pldma_pin,
	     TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, unsigned long npages,
		      bool write),
	     TP_ARGS(dev, ch, pasid, va, npages, write));

DEFINE_EVENT(pldma_pin_class, pldma_unpin,
	     TP_PROTO(int dev, u32 ch, u32 pasid, u64 va, unsigned long npages,
		      bool write),
	     TP_ARGS(dev, ch, pasid, va, npages, write));

DECLARE_EVENT_CLASS(pldma_bind_class,
		    TP_PROTO(int dev, u32 ch, u32 pasid, int pid),
		    TP_ARGS(dev, ch, pasid, pid),
		    TP_STRUCT__entry(__field(int, dev)
				     __field(u32, ch)
				     __field(u32, pasid)
				     __field(int, pid)
				     ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->ch = ch;
				   __entry->pasid = pasid;
				   __entry->pid = pid;
				   ),
		    TP_printk("pldma%d ch%u pasid %u pid %d",
			      __entry->dev, __entry->ch, __entry->pasid, __entry->pid)
);

/* A channel bound to a process's PASID (open) and given back (release). */
DEFINE_EVENT(pldma_bind_class, pldma_bind,
	     TP_PROTO(int dev, u32 ch, u32 pasid, int pid),
	     TP_ARGS(dev, ch, pasid, pid));

DEFINE_EVENT(pldma_bind_class, pldma_unbind,
	     TP_PROTO(int dev, u32 ch, u32 pasid, int pid),
	     TP_ARGS(dev, ch, pasid, pid));

/* A remote window registered (REG_MR): its key and strategy. */
TRACE_EVENT(pldma_mr_reg,
	    TP_PROTO(int dev, u32 pasid, int pid, u32 rkey, u64 va, u64 len,
		     u32 access, u32 strategy, u32 touch),
	    TP_ARGS(dev, pasid, pid, rkey, va, len, access, strategy, touch),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, pasid)
			     __field(int, pid)
			     __field(u32, rkey)
			     __field(u64, va)
			     __field(u64, len)
			     __field(u32, access)
			     __field(u32, strategy)
			     __field(u32, touch)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->pasid = pasid;
			   __entry->pid = pid;
			   __entry->rkey = rkey;
			   __entry->va = va;
			   __entry->len = len;
			   __entry->access = access;
			   __entry->strategy = strategy;
			   __entry->touch = touch;
			   ),
	    TP_printk("pldma%d pasid %u pid %d rkey %#x va %#llx len %llu access %s%s strategy %s touch %u",
		      __entry->dev, __entry->pasid, __entry->pid, __entry->rkey,
		      __entry->va, __entry->len,
		      __entry->access & PLDMA_KEY_ACC_WRITE ? "W" : "",
		      __entry->access & PLDMA_KEY_ACC_READ ? "R" : "",
		      pldma_show_strategy(__entry->strategy), __entry->touch)
);

#define pldma_show_revoke(r)					\
	__print_symbolic(r,					\
			 { PLDMA_KR_USER, "dereg" },		\
			 { PLDMA_KR_RELEASE, "release" },	\
			 { PLDMA_KR_DETACH, "device-removed" })

/* A key revoked: DEREG_MR, release() (process exit), device removal. */
TRACE_EVENT(pldma_mr_dereg,
	    TP_PROTO(int dev, u32 pasid, u32 rkey, u64 va, u64 len, u32 reason),
	    TP_ARGS(dev, pasid, rkey, va, len, reason),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, pasid)
			     __field(u32, rkey)
			     __field(u64, va)
			     __field(u64, len)
			     __field(u32, reason)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->pasid = pasid;
			   __entry->rkey = rkey;
			   __entry->va = va;
			   __entry->len = len;
			   __entry->reason = reason;
			   ),
	    TP_printk("pldma%d pasid %u rkey %#x va %#llx len %llu %s",
		      __entry->dev, __entry->pasid, __entry->rkey, __entry->va,
		      __entry->len, pldma_show_revoke(__entry->reason))
);

/* A responder fault taken by its key's work item (report mode). */
TRACE_EVENT(pldma_remote_fault,
	    TP_PROTO(int dev, u32 pasid, u32 rkey, u64 va, u32 flags, u32 done,
		     u32 len, u32 strategy, unsigned int want),
	    TP_ARGS(dev, pasid, rkey, va, flags, done, len, strategy, want),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, pasid)
			     __field(u32, rkey)
			     __field(u64, va)
			     __field(u32, flags)
			     __field(u32, done)
			     __field(u32, len)
			     __field(u32, strategy)
			     __field(unsigned int, want)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->pasid = pasid;
			   __entry->rkey = rkey;
			   __entry->va = va;
			   __entry->flags = flags;
			   __entry->done = done;
			   __entry->len = len;
			   __entry->strategy = strategy;
			   __entry->want = want;
			   ),
	    TP_printk("pldma%d pasid %u rkey %#x va %#llx %s offset %u of %u strategy %s pages %u",
		      __entry->dev, __entry->pasid, __entry->rkey, __entry->va,
		      __entry->flags & PLDMA_FR_F_WRITE ? "write" : "read",
		      __entry->done, __entry->len,
		      pldma_show_strategy(__entry->strategy), __entry->want)
);

/* ... answered: KEY_CMD_RESOLVED (pages > 0) or KEY_CMD_FAILED. */
TRACE_EVENT(pldma_remote_resolved,
	    TP_PROTO(int dev, u32 pasid, u32 rkey, u64 va, unsigned int want,
		     int done, s64 us),
	    TP_ARGS(dev, pasid, rkey, va, want, done, us),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, pasid)
			     __field(u32, rkey)
			     __field(u64, va)
			     __field(unsigned int, want)
			     __field(int, done)
			     __field(s64, us)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->pasid = pasid;
			   __entry->rkey = rkey;
			   __entry->va = va;
			   __entry->want = want;
			   __entry->done = done;
			   __entry->us = us;
			   ),
	    TP_printk("pldma%d pasid %u rkey %#x va %#llx pages %d/%u %s in %lld us",
		      __entry->dev, __entry->pasid, __entry->rkey, __entry->va,
		      __entry->done, __entry->want,
		      __entry->done > 0 ? "resolved" : "failed", __entry->us)
);

#define pldma_show_qp_state(s)					\
	__print_symbolic(s,					\
			 { PLDMA_QPS_RESET, "RESET" },		\
			 { PLDMA_QPS_INIT, "INIT" },		\
			 { PLDMA_QPS_RTR, "RTR" },		\
			 { PLDMA_QPS_RTS, "RTS" },		\
			 { PLDMA_QPS_ERR, "ERR" })

/* A QP of a file: its channel is the SQ, its PASID the PD. */
DECLARE_EVENT_CLASS(pldma_qp_owner,
		    TP_PROTO(int dev, u32 qpn, u32 ch, u32 pasid, pid_t pid),
		    TP_ARGS(dev, qpn, ch, pasid, pid),
		    TP_STRUCT__entry(__field(int, dev)
				     __field(u32, qpn)
				     __field(u32, ch)
				     __field(u32, pasid)
				     __field(pid_t, pid)
				     ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->qpn = qpn;
				   __entry->ch = ch;
				   __entry->pasid = pasid;
				   __entry->pid = pid;
				   ),
		    TP_printk("pldma%d qpn %#x sq ch%u pasid %u pid %d",
			      __entry->dev, __entry->qpn, __entry->ch,
			      __entry->pasid, __entry->pid)
);

#define pldma_show_qp_type(t)					\
	__print_symbolic(t,					\
			 { PLDMA_QP_TYPE_RC, "rc" },		\
			 { PLDMA_QP_TYPE_UC, "uc" },		\
			 { PLDMA_QP_TYPE_UD, "ud" })

/* Created, with its transport (PLDMA_QP_TYPE_*) */
TRACE_EVENT(pldma_qp_create,
	    TP_PROTO(int dev, u32 qpn, u32 type, u32 ch, u32 pasid, pid_t pid),
	    TP_ARGS(dev, qpn, type, ch, pasid, pid),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, qpn)
			     __field(u32, type)
			     __field(u32, ch)
			     __field(u32, pasid)
			     __field(pid_t, pid)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->type = type;
			   __entry->ch = ch;
			   __entry->pasid = pasid;
			   __entry->pid = pid;
			   ),
	    TP_printk("pldma%d qpn %#x %s sq ch%u pasid %u pid %d",
		      __entry->dev, __entry->qpn,
		      pldma_show_qp_type(__entry->type), __entry->ch,
		      __entry->pasid, __entry->pid)
);

/* Freed (QP_DESTROY, release(), removal), after its modify to RESET */
DEFINE_EVENT(pldma_qp_owner, pldma_qp_destroy,
	     TP_PROTO(int dev, u32 qpn, u32 ch, u32 pasid, pid_t pid),
	     TP_ARGS(dev, qpn, ch, pasid, pid));

/* A QP_CMD_MODIFY and the device's answer (PLDMA_QP_ST_*) */
TRACE_EVENT(pldma_qp_modify,
	    TP_PROTO(int dev, u32 qpn, u32 type, u32 ch, u32 pasid, pid_t pid,
		     u32 mask, u32 cur, u32 next, u32 dest_qpn, u32 dest_ip,
		     u32 status),
	    TP_ARGS(dev, qpn, type, ch, pasid, pid, mask, cur, next, dest_qpn,
		    dest_ip, status),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, qpn)
			     __field(u32, type)
			     __field(u32, ch)
			     __field(u32, pasid)
			     __field(pid_t, pid)
			     __field(u32, mask)
			     __field(u32, cur)
			     __field(u32, next)
			     __field(u32, dest_qpn)
			     __field(u32, dest_ip)
			     __field(u32, status)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->type = type;
			   __entry->ch = ch;
			   __entry->pasid = pasid;
			   __entry->pid = pid;
			   __entry->mask = mask;
			   __entry->cur = cur;
			   __entry->next = next;
			   __entry->dest_qpn = dest_qpn;
			   __entry->dest_ip = dest_ip;
			   __entry->status = status;
			   ),
	    TP_printk("pldma%d qpn %#x %s sq ch%u pasid %u pid %d mask %#x %s -> %s dest qpn %#x ip %pI4h status %u",
		      __entry->dev, __entry->qpn,
		      pldma_show_qp_type(__entry->type), __entry->ch,
		      __entry->pasid, __entry->pid, __entry->mask,
		      pldma_show_qp_state(__entry->cur),
		      pldma_show_qp_state(__entry->next), __entry->dest_qpn,
		      &__entry->dest_ip, __entry->status)
);

/* A CQ created or destroyed on a file (its PD is the file's PASID) */
DECLARE_EVENT_CLASS(pldma_cq_owner,
		    TP_PROTO(int dev, u32 cq, u32 entries, u32 pasid, pid_t pid),
		    TP_ARGS(dev, cq, entries, pasid, pid),
		    TP_STRUCT__entry(__field(int, dev)
				     __field(u32, cq)
				     __field(u32, entries)
				     __field(u32, pasid)
				     __field(pid_t, pid)
				     ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->cq = cq;
				   __entry->entries = entries;
				   __entry->pasid = pasid;
				   __entry->pid = pid;
				   ),
		    TP_printk("pldma%d cq %u entries %u pasid %u pid %d",
			      __entry->dev, __entry->cq, __entry->entries,
			      __entry->pasid, __entry->pid)
);

DEFINE_EVENT(pldma_cq_owner, pldma_cq_create,
	     TP_PROTO(int dev, u32 cq, u32 entries, u32 pasid, pid_t pid),
	     TP_ARGS(dev, cq, entries, pasid, pid));

/* CQ_DESTROY, release(), removal */
DEFINE_EVENT(pldma_cq_owner, pldma_cq_destroy,
	     TP_PROTO(int dev, u32 cq, u32 entries, u32 pasid, pid_t pid),
	     TP_ARGS(dev, cq, entries, pasid, pid));

/* An armed CQ fired (error 0, CQ_EVENTS) or the CQ went to ERROR (1) */
TRACE_EVENT(pldma_cq_event,
	    TP_PROTO(int dev, u32 cq, int error, u32 events),
	    TP_ARGS(dev, cq, error, events),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, cq)
			     __field(int, error)
			     __field(u32, events)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->cq = cq;
			   __entry->error = error;
			   __entry->events = events;
			   ),
	    TP_printk("pldma%d cq %u %s events %u", __entry->dev, __entry->cq,
		      __entry->error ? "ERROR" : "event", __entry->events)
);

/* A QP entered ERR by itself (QP_ERRORS) */
TRACE_EVENT(pldma_qp_error,
	    TP_PROTO(int dev, u32 idx, u32 qpn),
	    TP_ARGS(dev, idx, qpn),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, idx)
			     __field(u32, qpn)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->idx = idx;
			   __entry->qpn = qpn;
			   ),
	    TP_printk("pldma%d qp %u qpn %#x ERR", __entry->dev, __entry->idx,
		      __entry->qpn)
);

/* An SRQ created or destroyed (ib_srq.c; its PD is the context's PASID) */
DECLARE_EVENT_CLASS(pldma_srq_owner,
		    TP_PROTO(int dev, u32 srq, u32 entries, u32 pasid, pid_t pid),
		    TP_ARGS(dev, srq, entries, pasid, pid),
		    TP_STRUCT__entry(__field(int, dev)
				     __field(u32, srq)
				     __field(u32, entries)
				     __field(u32, pasid)
				     __field(pid_t, pid)
				     ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->srq = srq;
				   __entry->entries = entries;
				   __entry->pasid = pasid;
				   __entry->pid = pid;
				   ),
		    TP_printk("pldma%d srq %u entries %u pasid %u pid %d",
			      __entry->dev, __entry->srq, __entry->entries,
			      __entry->pasid, __entry->pid)
);

DEFINE_EVENT(pldma_srq_owner, pldma_srq_create,
	     TP_PROTO(int dev, u32 srq, u32 entries, u32 pasid, pid_t pid),
	     TP_ARGS(dev, srq, entries, pasid, pid));

/* destroy_srq, the context's end, removal */
DEFINE_EVENT(pldma_srq_owner, pldma_srq_destroy,
	     TP_PROTO(int dev, u32 srq, u32 entries, u32 pasid, pid_t pid),
	     TP_ARGS(dev, srq, entries, pasid, pid));

/* An SRQ's limit armed (modify_srq; 0 disarms), and the device's status */
TRACE_EVENT(pldma_srq_arm,
	    TP_PROTO(int dev, u32 srq, u32 limit, int ret),
	    TP_ARGS(dev, srq, limit, ret),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, srq)
			     __field(u32, limit)
			     __field(int, ret)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->srq = srq;
			   __entry->limit = limit;
			   __entry->ret = ret;
			   ),
	    TP_printk("pldma%d srq %u limit %u ret %d", __entry->dev,
		      __entry->srq, __entry->limit, __entry->ret)
);

/* An SRQ's limit reached (error 0, SRQ_EVENTS) or the SRQ in ERROR (1) */
TRACE_EVENT(pldma_srq_event,
	    TP_PROTO(int dev, u32 srq, int error, u32 events),
	    TP_ARGS(dev, srq, error, events),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, srq)
			     __field(int, error)
			     __field(u32, events)
			     ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->srq = srq;
			   __entry->error = error;
			   __entry->events = events;
			   ),
	    TP_printk("pldma%d srq %u %s events %u", __entry->dev,
		      __entry->srq, __entry->error ? "ERROR" : "limit",
		      __entry->events)
);

/* QP1 (ib_gsi.c): a UD datagram received (status -1: dropped) or sent */
DECLARE_EVENT_CLASS(pldma_gsi_dgram,
		    TP_PROTO(int dev, u32 ip, u32 qpn, u32 len, int status),
		    TP_ARGS(dev, ip, qpn, len, status),
		    TP_STRUCT__entry(__field(int, dev)
				     __field(u32, ip)
				     __field(u32, qpn)
				     __field(u32, len)
				     __field(int, status)
				     ),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->ip = ip;
				   __entry->qpn = qpn;
				   __entry->len = len;
				   __entry->status = status;
				   ),
		    TP_printk("pldma%d %pI4h qp %u len %u status %d",
			      __entry->dev, &__entry->ip, __entry->qpn,
			      __entry->len, __entry->status)
);

DEFINE_EVENT(pldma_gsi_dgram, pldma_gsi_rx,
	     TP_PROTO(int dev, u32 ip, u32 qpn, u32 len, int status),
	     TP_ARGS(dev, ip, qpn, len, status));

DEFINE_EVENT(pldma_gsi_dgram, pldma_gsi_tx,
	     TP_PROTO(int dev, u32 ip, u32 qpn, u32 len, int status),
	     TP_ARGS(dev, ip, qpn, len, status));

#endif /* _PLDMA_TRACE_H */

/* This part must be outside protection */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pldma_trace
#include <trace/define_trace.h>
