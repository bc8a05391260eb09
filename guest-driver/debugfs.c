// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: the device's counters in debugfs, /sys/kernel/debug/pldma/pldmaN/stats
 * (PLDMA_IOC_GET_STATS gives a file's own), and with a link .../net: the
 * device's network counters (PLDMA_NET_CNT) and the registered windows,
 * and with queue pairs .../qps: the QP table, with CQs .../cqs: the CQ table,
 * with SRQs .../srqs: the SRQ table.
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "pldma_drv.h"

static struct dentry *pldma_dbg_root;

static int pldma_stats_show(struct seq_file *m, void *v)
{
	struct pldma_dev *pd = m->private;
	struct pldma_ctx *ctx;
	unsigned int i;

	seq_printf(m, "mode: %s\nchannels: %u\n", pldma_mode_name(pd),
		   pd->nch);
	for (i = 0; i < PLDMA_STRAT_NUM; i++)
		seq_printf(m, "faults_%s: %lld\n",
			   i == PLDMA_STRAT_STALL && pd->pri_mode ? "pri" :
			   pldma_strategy_name(i),
			   atomic64_read(&pd->st.faults[i]));
	seq_printf(m, "stalls: %lld\n", atomic64_read(&pd->st.stalls));
	seq_printf(m, "pages_present: %lld\n",
		   atomic64_read(&pd->st.pages_present));
	seq_printf(m, "touch_ahead_pages: %lld\n",
		   atomic64_read(&pd->st.touch_pages));
	seq_printf(m, "batch_pages: %lld\n",
		   atomic64_read(&pd->st.batch_pages));
	seq_printf(m, "restarts: %lld\n", atomic64_read(&pd->st.restarts));
	seq_printf(m, "cancels: %lld\n", atomic64_read(&pd->st.cancels));
	seq_printf(m, "aborts: %lld\n", atomic64_read(&pd->st.aborts));
	seq_printf(m, "user_faults: %lld\n",
		   atomic64_read(&pd->st.user_faults));
	seq_printf(m, "pinned_pages: %lld\n",
		   atomic64_read(&pd->st.pinned_pages));
	seq_printf(m, "fq_overflows: %lld\n",
		   atomic64_read(&pd->st.fq_overflows));
	seq_printf(m, "channel_errors: %lld\n",
		   atomic64_read(&pd->st.ch_errors));
	seq_printf(m, "cancels_no_progress: %lld\n",
		   atomic64_read(&pd->st.cancel_noprogress));
	seq_printf(m, "slow_fault_in_periods: %lld\n",
		   atomic64_read(&pd->st.slow_extended));
	seq_printf(m, "cancels_refault_limit: %lld\n",
		   atomic64_read(&pd->st.cancel_refaults));
	seq_printf(m, "cancels_unresolved: %lld\n",
		   atomic64_read(&pd->st.cancel_unresolved));
	seq_printf(m, "refaults_after_move: %lld\n",
		   atomic64_read(&pd->st.moved_refaults));
	seq_printf(m, "completion_records_dropped: %lld\n",
		   atomic64_read(&pd->st.lost_records));
	seq_printf(m, "remote_faults: %lld\n",
		   atomic64_read(&pd->st.remote_faults));
	seq_printf(m, "remote_pages_present: %lld\n",
		   atomic64_read(&pd->st.remote_pages));
	seq_printf(m, "remote_failed: %lld\n",
		   atomic64_read(&pd->st.remote_failed));
	seq_printf(m, "remote_stale_records: %lld\n",
		   atomic64_read(&pd->st.remote_stale));
	seq_printf(m, "windows_registered: %lld\n",
		   atomic64_read(&pd->st.mrs));
	seq_printf(m, "stalled_channels: %#x\n",
		   pldma_rd(pd, PLDMA_STALLED_CHANNELS));
	seq_printf(m, "faulted_channels: %#x\n",
		   pldma_rd(pd, PLDMA_FAULTED_CHANNELS));
	seq_printf(m, "error_channels: %#x\n",
		   pldma_rd(pd, PLDMA_ERROR_CHANNELS));
	seq_puts(m, "fault_service_us_histogram:\n");
	for (i = 0; i < PLDMA_HIST_BUCKETS; i++)
		seq_printf(m, "  < %7lu: %lld\n", 1UL << i,
			   atomic64_read(&pd->st.hist[i]));
	seq_puts(m, "bound:\n");
	spin_lock_irq(&pd->lock);
	for (i = 0; i < pd->nch; i++) {
		ctx = pd->chans[i];
		if (ctx)
			seq_printf(m, "  ch%u pid %d pasid %u strategy %s\n",
				   i, ctx->tgid, ctx->pasid,
				   pldma_strategy_name(ctx->strategy));
	}
	spin_unlock_irq(&pd->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pldma_stats);

#define PLDMA_NCNT_NAME(i, name) \
	[i] = name,
static const char * const pldma_ncnt_names[PLDMA_NCNT_NUM] = {
	PLDMA_NCNT_NAMES(PLDMA_NCNT_NAME)
};

#undef PLDMA_NCNT_NAME

/*
 * The device's registers are read with the device known present; the key
 * table under the key mutex, so that entries are seen whole.
 */
static int pldma_net_show(struct seq_file *m, void *v)
{
	struct pldma_dev *pd = m->private;
	struct pldma_key *k;
	unsigned int i;

	down_read(&pd->gone_sem);
	if (pd->gone) {
		up_read(&pd->gone_sem);
		return -ENODEV;
	}
	seq_printf(m, "node: %u\nmtu: %u\n", pd->node_id, pd->mtu);
	for (i = 0; i < PLDMA_NCNT_NUM; i++)
		seq_printf(m, "%s: %u\n", pldma_ncnt_names[i],
			   pldma_rd(pd, PLDMA_NET_CNT(i)));
	seq_puts(m, "windows:\n");
	mutex_lock(&pd->key_mutex);
	for (i = 0; i < PLDMA_NUM_KEYS; i++) {
		k = &pd->keys[i];
		if (k->ctx)
			seq_printf(m, "  rkey %#x pid %d pasid %u va %#llx len %llu %s%s strategy %s touch %u\n",
				   k->rkey, k->ctx->tgid, k->ctx->pasid, k->va,
				   k->len,
				   k->access & PLDMA_KEY_ACC_WRITE ? "W" : "",
				   k->access & PLDMA_KEY_ACC_READ ? "R" : "",
				   pldma_strategy_name(k->strategy), k->touch);
	}
	mutex_unlock(&pd->key_mutex);
	up_read(&pd->gone_sem);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pldma_net);

/*
 * The QP table: every QP a file holds, and every other QP the device says
 * is not in RESET (a driver bug), with the device's QPN and state (QP_SEL
 * is staging: under the key mutex), its transport (rc, uc, ud) and the
 * destination its owner set (none for ud: each datagram names its own).
 */
static int pldma_qps_show(struct seq_file *m, void *v)
{
	struct pldma_dev *pd = m->private;
	struct pldma_qp *qp;
	u32 state, qpn;
	unsigned int i;

	down_read(&pd->gone_sem);
	if (pd->gone) {
		up_read(&pd->gone_sem);
		return -ENODEV;
	}
	seq_printf(m, "qps: %u\nip: %pI4h\nmac: %pM\n", pd->num_qps, &pd->ip,
		   pd->mac);
	mutex_lock(&pd->key_mutex);
	for (i = 0; i < pd->num_qps; i++) {
		qp = &pd->qps[i];
		pldma_wr(pd, PLDMA_QP_SEL, i);
		qpn = pldma_rd(pd, PLDMA_QP_QPN);
		state = pldma_rd(pd, PLDMA_QP_STATE);
		if (!qp->ctx && state == PLDMA_QPS_RESET)
			continue;
		seq_printf(m, "  qp %u qpn %#x %s", i, qpn,
			   pldma_qp_state_name(state));
		if (qp->ctx)
			seq_printf(m, " %s", pldma_qp_type_name(qp->type));
		if (qp->ctx && qp->srq != PLDMA_SRQ_NONE)
			seq_printf(m, " sq ch%u pid %d pasid %u dest qpn %#x ip %pI4h srq %u\n",
				   qp->ctx->ch, qp->ctx->tgid, qp->ctx->pasid,
				   qp->dest_qpn, &qp->dest_ip, qp->srq);
		else if (qp->ctx)
			seq_printf(m, " sq ch%u pid %d pasid %u dest qpn %#x ip %pI4h\n",
				   qp->ctx->ch, qp->ctx->tgid, qp->ctx->pasid,
				   qp->dest_qpn, &qp->dest_ip);
		else
			seq_puts(m, " free\n");
	}
	mutex_unlock(&pd->key_mutex);
	up_read(&pd->gone_sem);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pldma_qps);

static const char * const pldma_cqs_names[] = {
	[PLDMA_CQS_NONE] = "NONE",
	[PLDMA_CQS_ACTIVE] = "ACTIVE",
	[PLDMA_CQS_ERROR] = "ERROR",
};

/*
 * The CQ table: every CQ a file holds, and every other CQ the device says
 * exists (a driver bug), with the device's state and indices (CQ_SEL is
 * staging: under the key mutex) and the driver's view.
 */
static int pldma_cqs_show(struct seq_file *m, void *v)
{
	struct pldma_dev *pd = m->private;
	struct pldma_cq *cq;
	u32 state, pi, ci;
	unsigned int i;

	down_read(&pd->gone_sem);
	if (pd->gone) {
		up_read(&pd->gone_sem);
		return -ENODEV;
	}
	seq_printf(m, "cqs: %u\nevents: %lld\nerrors: %lld\nqp_errors: %lld\nrecv_faults: %lld\n",
		   pd->num_cqs, atomic64_read(&pd->st.cq_events),
		   atomic64_read(&pd->st.cq_errors),
		   atomic64_read(&pd->st.qp_errors),
		   atomic64_read(&pd->st.recv_faults));
	mutex_lock(&pd->key_mutex);
	for (i = 0; i < pd->num_cqs; i++) {
		cq = &pd->cqs[i];
		pldma_wr(pd, PLDMA_CQ_SEL, i);
		state = pldma_rd(pd, PLDMA_CQ_STATE);
		pi = pldma_rd(pd, PLDMA_CQ_PI);
		ci = pldma_rd(pd, PLDMA_CQ_CI);
		if (!cq->ctx && state == PLDMA_CQS_NONE)
			continue;
		seq_printf(m, "  cq %u %s pi %u ci %u", i,
			   state < ARRAY_SIZE(pldma_cqs_names) ?
			   pldma_cqs_names[state] : "?", pi, ci);
		if (cq->ctx)
			seq_printf(m, " entries %u pid %d pasid %u qps %u mapped %d events %d%s\n",
				   cq->entries, cq->ctx->tgid, cq->ctx->pasid,
				   cq->nqps, atomic_read(&cq->mapped),
				   atomic_read(&cq->events),
				   READ_ONCE(cq->error) ? " error" : "");
		else
			seq_puts(m, " free\n");
	}
	mutex_unlock(&pd->key_mutex);
	up_read(&pd->gone_sem);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pldma_cqs);

static const char * const pldma_srqs_names[] = {
	[PLDMA_SRQS_NONE] = "NONE",
	[PLDMA_SRQS_ACTIVE] = "ACTIVE",
	[PLDMA_SRQS_ERROR] = "ERROR",
};

/* The TAIL the owner of @srq last wrote in its doorbell record */
static u32 pldma_srq_tail(const struct pldma_srq *srq)
{
	const __le32 *rec = srq->ring + srq->entries * PLDMA_RWQE_SIZE;

	return le32_to_cpu(READ_ONCE(rec[PLDMA_SRQ_DBREC_TAIL / 4]));
}

/*
 * The SRQ table: every SRQ a context holds, and every other SRQ the
 * device says exists (a driver bug), with the device's state, HEAD and
 * armed limit (SRQ_SEL is staging: under the key mutex), the record's
 * TAIL and the driver's view.
 */
static int pldma_srqs_show(struct seq_file *m, void *v)
{
	struct pldma_dev *pd = m->private;
	struct pldma_srq *srq;
	u32 state, head, armed;
	unsigned int i;

	down_read(&pd->gone_sem);
	if (pd->gone) {
		up_read(&pd->gone_sem);
		return -ENODEV;
	}
	seq_printf(m, "srqs: %u\nlimit_events: %lld\nerrors: %lld\n",
		   pd->num_srqs, atomic64_read(&pd->st.srq_events),
		   atomic64_read(&pd->st.srq_errors));
	mutex_lock(&pd->key_mutex);
	for (i = 0; i < pd->num_srqs; i++) {
		srq = &pd->srqs[i];
		pldma_wr(pd, PLDMA_SRQ_SEL, i);
		state = pldma_rd(pd, PLDMA_SRQ_STATE);
		head = pldma_rd(pd, PLDMA_SRQ_HEAD);
		armed = pldma_rd(pd, PLDMA_SRQ_ARMED);
		if (!srq->ctx && state == PLDMA_SRQS_NONE)
			continue;
		seq_printf(m, "  srq %u %s head %u armed %u", i,
			   state < ARRAY_SIZE(pldma_srqs_names) ?
			   pldma_srqs_names[state] : "?", head, armed);
		if (srq->ctx)
			seq_printf(m, " tail %u entries %u pid %d pasid %u tag %u qps %u mapped %d events %d%s\n",
				   pldma_srq_tail(srq),
				   srq->entries, srq->ctx->tgid,
				   srq->ctx->pasid, srq->pd_tag, srq->nqps,
				   atomic_read(&srq->mapped),
				   atomic_read(&srq->events),
				   READ_ONCE(srq->error) ? " error" : "");
		else
			seq_puts(m, " free\n");
	}
	mutex_unlock(&pd->key_mutex);
	up_read(&pd->gone_sem);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pldma_srqs);

/* QP1's datagrams (ib_gsi.c): what the MAD layer sent and received */
static int pldma_gsi_show(struct seq_file *m, void *v)
{
	struct pldma_dev *pd = m->private;
	unsigned long flags;
	u64 st[4];
	bool up;

	spin_lock_irqsave(&pd->gsi_lock, flags);
	st[0] = pd->gsi_st.rx;
	st[1] = pd->gsi_st.rx_dropped;
	st[2] = pd->gsi_st.tx;
	st[3] = pd->gsi_st.tx_errors;
	up = pd->gsi;
	spin_unlock_irqrestore(&pd->gsi_lock, flags);
	seq_printf(m, "qp1 %s\nrx %llu\nrx_dropped %llu\ntx %llu\ntx_errors %llu\n",
		   up ? "up" : "none", st[0], st[1], st[2], st[3]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pldma_gsi);

void pldma_debugfs_add(struct pldma_dev *pd)
{
	pd->dbg = debugfs_create_dir(pd->name, pldma_dbg_root);
	debugfs_create_file("stats", 0444, pd->dbg, pd, &pldma_stats_fops);
	if (pd->node_id)
		debugfs_create_file("net", 0444, pd->dbg, pd, &pldma_net_fops);
	if (pd->num_qps) {
		debugfs_create_file("qps", 0444, pd->dbg, pd, &pldma_qps_fops);
		debugfs_create_file("gsi", 0444, pd->dbg, pd, &pldma_gsi_fops);
	}
	if (pd->num_cqs)
		debugfs_create_file("cqs", 0444, pd->dbg, pd, &pldma_cqs_fops);
	if (pd->num_srqs)
		debugfs_create_file("srqs", 0444, pd->dbg, pd, &pldma_srqs_fops);
}

void pldma_debugfs_remove(struct pldma_dev *pd)
{
	debugfs_remove_recursive(pd->dbg);
}

void pldma_debugfs_init(void)
{
	pldma_dbg_root = debugfs_create_dir("pldma", NULL);
}

void pldma_debugfs_exit(void)
{
	debugfs_remove(pldma_dbg_root);
}
