// SPDX-License-Identifier: GPL-2.0-only
/*
 * PLDMA: the device's counters in debugfs, /sys/kernel/debug/pldma/pldmaN/stats
 * (PLDMA_IOC_GET_STATS gives a file's own).
 *
 * Copyright (c) 2026 The PLDMA authors
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "pldma_drv.h"

static struct dentry *pldma_dbg_root;

static const char * const pldma_strat_names[PLDMA_STRAT_NUM] = {
	[PLDMA_STRAT_PIN] = "pin",
	[PLDMA_STRAT_PREFAULT] = "prefault",
	[PLDMA_STRAT_STALL] = "stall",
	[PLDMA_STRAT_ONE] = "one-by-one",
	[PLDMA_STRAT_TOUCH] = "touch-ahead",
	[PLDMA_STRAT_USER] = "user",
};

static int pldma_stats_show(struct seq_file *m, void *v)
{
	struct pldma_dev *pd = m->private;
	struct pldma_ctx *ctx;
	unsigned int i;

	seq_printf(m, "mode: %s\nchannels: %u\n",
		   pd->stall_mode ? "stall" : "report", pd->nch);
	for (i = 0; i < PLDMA_STRAT_NUM; i++)
		seq_printf(m, "faults_%s: %lld\n", pldma_strat_names[i],
			   atomic64_read(&pd->st.faults[i]));
	seq_printf(m, "stalls: %lld\n", atomic64_read(&pd->st.stalls));
	seq_printf(m, "pages_present: %lld\n",
		   atomic64_read(&pd->st.pages_present));
	seq_printf(m, "touch_ahead_pages: %lld\n",
		   atomic64_read(&pd->st.touch_pages));
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
	seq_printf(m, "cancels_refault_limit: %lld\n",
		   atomic64_read(&pd->st.cancel_refaults));
	seq_printf(m, "cancels_unresolved: %lld\n",
		   atomic64_read(&pd->st.cancel_unresolved));
	seq_printf(m, "refaults_after_move: %lld\n",
		   atomic64_read(&pd->st.moved_refaults));
	seq_printf(m, "completion_records_dropped: %lld\n",
		   atomic64_read(&pd->st.lost_records));
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
				   pldma_strat_names[ctx->strategy]);
	}
	spin_unlock_irq(&pd->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pldma_stats);

void pldma_debugfs_add(struct pldma_dev *pd)
{
	pd->dbg = debugfs_create_dir(pd->name, pldma_dbg_root);
	debugfs_create_file("stats", 0444, pd->dbg, pd, &pldma_stats_fops);
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
