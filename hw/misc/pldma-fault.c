/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, the fault paths
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What happens when a channel's access fails: in stall mode the SMMU parks
 * it and resumes it later (the stall master side: can_stall, stalled,
 * resumed); in report mode the engine writes a fault record to the fault
 * queue and waits for RESTART or CANCEL (pldma-core.c).  An access that
 * cannot be recovered completes the descriptor with an error status.
 * See docs/specs/pldma.rst, "Faults".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "pldma-internal.h"
#include "trace.h"

/* Report mode: post a fault record, never silently */
void pldma_post_fault(PLDMACore *s, PLDMAChannel *ch)
{
    uint8_t rec[PLDMA_FR_SIZE] = { 0 };
    uint32_t next;
    uint64_t fva;
    uint32_t seq = s->fault_seq++;

    stw_le_p(rec + PLDMA_FR_CHANNEL, ch->idx);
    stw_le_p(rec + PLDMA_FR_FLAGS, ch->fault_info);
    stl_le_p(rec + PLDMA_FR_PASID, ch->pasid_reg);
    stq_le_p(rec + PLDMA_FR_VA, ch->fault_va);
    stl_le_p(rec + PLDMA_FR_DONE, ch->fault_done);
    stl_le_p(rec + PLDMA_FR_DESC, ch->fault_desc);
    stl_le_p(rec + PLDMA_FR_SEQ, seq);
    stl_le_p(rec + PLDMA_FR_LEN, ch->len);

    next = s->fq_size ? (s->fq_tail + 1) & (s->fq_size - 1) : 0;
    if (!(s->fq_ctrl & PLDMA_FQ_CTRL_ENABLE) || next == s->fq_head) {
        trace_pldma_fq_overflow(ch->idx, seq, s->fq_head, s->fq_tail);
        s->fq_status |= PLDMA_FQ_STATUS_OVERFLOW;
        goto lost;
    }
    if (pldma_rw(s, NULL, s->fq_base + (uint64_t)s->fq_tail * PLDMA_FR_SIZE,
                 rec, sizeof(rec), true, &fva) != PLDMA_ACC_OK) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "pldma: fault queue write at 0x%" PRIx64 " failed\n",
                      fva);
        s->fq_status |= PLDMA_FQ_STATUS_WRITE_ERR;
        goto lost;
    }
    trace_pldma_fq_post(ch->idx, seq, s->fq_tail, ch->fault_va);
    s->fq_tail = next;
    pldma_raise(s, PLDMA_IRQ_FAULT);
    return;

lost:
    if (s->fq_overflows != UINT32_MAX) {
        s->fq_overflows++;
    }
    pldma_raise(s, PLDMA_IRQ_FQ_OVERFLOW);
}

/*
 * An access of the channel failed.  Record where, then park, report or
 * fail according to the kind of failure and the fault mode.
 */
void pldma_access_failed(PLDMAChannel *ch, PLDMAAccess r, uint64_t va,
                         bool is_write)
{
    PLDMACore *s = ch->s;
    uint32_t info = is_write ? PLDMA_FR_F_WRITE : 0;

    if (ch->phase == PLDMA_PHASE_FETCH) {
        info |= PLDMA_FR_F_DESC;
    } else if (ch->phase == PLDMA_PHASE_COMPL) {
        info |= PLDMA_FR_F_COMPL;
    }
    ch->fault_va = va;
    ch->fault_desc = ch->head;
    ch->fault_done = ch->done;

    if (r == PLDMA_ACC_STALLED) {
        ch->fault_info = info | PLDMA_FR_F_STALL;
        ch->stall_pending = true;
        ch->cnt_stalls++;
        trace_pldma_ch_stalled(ch->idx, ch->stag, va, is_write, ch->done);
        pldma_set_state(ch, PLDMA_STATE_STALLED);
        return;
    }
    ch->fault_info = info;
    if (r == PLDMA_ACC_FAULT && s->report_mode) {
        ch->cnt_faults++;
        trace_pldma_ch_fault(ch->idx, va, is_write, ch->done);
        pldma_set_state(ch, PLDMA_STATE_FAULTED);
        pldma_raise(s, PLDMA_IRQ_CH_FAULTED);
        pldma_post_fault(s, ch);
        return;
    }

    /* Unrecoverable: a target that is not RAM, or a non-stalling fault */
    qemu_log_mask(LOG_GUEST_ERROR,
                  "pldma: ch%u: %s %s at 0x%" PRIx64 "\n", ch->idx,
                  r == PLDMA_ACC_FAULT ? "translation fault" : "bus error",
                  is_write ? "writing" : "reading", va);
    switch (ch->phase) {
    case PLDMA_PHASE_FETCH:
        pldma_ch_error(ch, PLDMA_ERR_DESC_FETCH);
        break;
    case PLDMA_PHASE_XFER:
        ch->cstatus = r == PLDMA_ACC_FAULT ? PLDMA_ST_FAULT
                                           : PLDMA_ST_DMA_ERROR;
        ch->cflags = info;
        ch->cfault_va = va;
        ch->phase = PLDMA_PHASE_COMPL;
        break;
    default:
        pldma_ch_error(ch, PLDMA_ERR_COMPL_WRITE);
        break;
    }
}


/* ---- stall master interface ---- */

/*
 * Only a channel's own access in stall mode can be parked.  In report mode
 * the engine reports faults instead, and the fault queue's writes (no
 * channel) have nobody to resume them: the SMMU terminates those.
 */
bool pldma_core_can_stall(PLDMACore *s, uint32_t sid)
{
    if (s->report_mode || !s->cur || sid != s->stream_id) {
        trace_pldma_smmu_stall_declined(sid, s->report_mode, s->cur != NULL);
        return false;
    }
    return true;
}

void pldma_core_stalled(PLDMACore *s, const SMMUStallInfo *info)
{
    PLDMAChannel *ch = s->cur;

    trace_pldma_smmu_stalled(info->sid, info->ssv, info->ssid, info->stag,
                             info->addr, info->is_write);
    if (!ch || info->sid != s->stream_id) {
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: stall (sid 0x%x stag %u) "
                      "outside of a channel access\n", info->sid, info->stag);
        return;
    }
    ch->stall_seen = true;
    ch->stag = info->stag;
    ch->stall_va = info->addr;
}

void pldma_core_resumed(PLDMACore *s, uint32_t sid, uint16_t stag,
                        SMMUStallResponse resp)
{
    PLDMAChannel *ch = NULL;
    uint32_t i;

    for (i = 0; i < s->num_channels; i++) {
        if (s->ch[i].state == PLDMA_STATE_STALLED &&
            s->ch[i].stall_pending && s->ch[i].stag == stag) {
            ch = &s->ch[i];
            break;
        }
    }
    trace_pldma_smmu_resumed(sid, stag, resp, ch ? (int)ch->idx : -1);
    if (!ch && sid == s->stream_id && pldma_net_resumed(s, stag, resp)) {
        return;             /* a responder access of the RDMA link */
    }
    if (!ch || sid != s->stream_id) {
        /* e.g. the channel was reset while stalled */
        return;
    }
    ch->stall_pending = false;
    if (resp == SMMU_STALL_RETRY) {
        ch->cnt_restarts++;
        pldma_set_state(ch, PLDMA_STATE_RUNNING);
        /* from the CMD_RESUME, with the SMMU's mutex released */
        pldma_run_now(ch);
        return;
    }
    ch->cnt_aborts++;
    switch (ch->phase) {
    case PLDMA_PHASE_FETCH:
        pldma_ch_error(ch, PLDMA_ERR_DESC_FETCH);
        break;
    case PLDMA_PHASE_XFER:
        ch->cstatus = PLDMA_ST_ABORTED;
        ch->cflags = ch->fault_info & ~PLDMA_FR_F_STALL;
        ch->cfault_va = ch->fault_va;
        ch->phase = PLDMA_PHASE_COMPL;
        pldma_set_state(ch, PLDMA_STATE_RUNNING);
        break;
    default:
        pldma_ch_error(ch, PLDMA_ERR_COMPL_WRITE);
        break;
    }
    /* terminations also come from SMMU resets and invalidations */
    qemu_bh_schedule(s->bh);
}

