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
 * queue and waits for RESTART or CANCEL (core.c).  An access that
 * cannot be recovered completes the descriptor with an error status.
 * See docs/specs/pldma.rst, "Faults".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qemu/host-utils.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "system/memory.h"
#include "pldma-internal.h"
#include "trace.h"

/*
 * Report mode: post a fault record, never silently; false if it could not
 * be posted (queue disabled, full, or its write failed: counted, IRQ)
 */
bool pldma_post_fault(PLDMACore *s, const PLDMAFaultRec *r)
{
    uint8_t rec[PLDMA_FR_SIZE] = { 0 };
    uint32_t next;
    uint64_t fva;
    uint32_t seq = s->fault_seq++;

    stw_le_p(rec + PLDMA_FR_CHANNEL, r->channel);
    stw_le_p(rec + PLDMA_FR_FLAGS, r->flags);
    stl_le_p(rec + PLDMA_FR_PASID, r->pasid_reg);
    stq_le_p(rec + PLDMA_FR_VA, r->va);
    stl_le_p(rec + PLDMA_FR_DONE, r->done);
    stl_le_p(rec + PLDMA_FR_DESC, r->desc);
    stl_le_p(rec + PLDMA_FR_SEQ, seq);
    stl_le_p(rec + PLDMA_FR_LEN, r->len);

    next = s->fq_size ? (s->fq_tail + 1) & (s->fq_size - 1) : 0;
    if (!(s->fq_ctrl & PLDMA_FQ_CTRL_ENABLE) || next == s->fq_head) {
        trace_pldma_fq_overflow(r->channel, seq, s->fq_head, s->fq_tail);
        s->fq_status |= PLDMA_FQ_STATUS_OVERFLOW;
        goto lost;
    }
    if (pldma_rw(s, NULL, s->fq_base + (uint64_t)s->fq_tail * PLDMA_FR_SIZE,
                 rec, sizeof(rec), true, &fva) != PLDMA_ACC_OK) {
        PLDMA_GUEST_ERR(pldma_err_fq_write, "fault queue write at 0x%" PRIx64
                        " failed", fva);
        s->fq_status |= PLDMA_FQ_STATUS_WRITE_ERR;
        goto lost;
    }
    trace_pldma_fq_post(r->channel, seq, s->fq_tail, r->va);
    s->fq_tail = next;
    pldma_raise(s, PLDMA_IRQ_FAULT);
    return true;

lost:
    if (s->fq_overflows != UINT32_MAX) {
        s->fq_overflows++;
    }
    pldma_raise(s, PLDMA_IRQ_FQ_OVERFLOW);
    return false;
}

/* ---- outstanding stalls (max-outstanding) ---- */

#define PLDMA_PROBE_PAGE    4096ULL

void pldma_probes_clear(PLDMAChannel *ch)
{
    ch->nprobes = 0;
    ch->probe_aborted = false;
}

static void pldma_orphan_add(PLDMAChannel *ch, uint16_t stag)
{
    if (ch->norphans < ARRAY_SIZE(ch->orphan_stag)) {
        ch->orphan_stag[ch->norphans++] = stag;
        trace_pldma_ch_stall_orphaned(ch->idx, stag, ch->norphans);
    }
}

/*
 * The channel stops waiting for its parked access and its accesses ahead
 * (CANCEL of a STALLED channel, a reset, an error): the SMMU keeps them
 * until the OS answers, so remember their STAGs as orphans.
 */
void pldma_stalls_forget(PLDMAChannel *ch)
{
    int i;

    if (ch->stall_pending) {
        pldma_orphan_add(ch, ch->stag);
    }
    for (i = 0; i < ch->nprobes; i++) {
        pldma_orphan_add(ch, ch->probe_stag[i]);
    }
    ch->stall_pending = false;
    pldma_probes_clear(ch);
}

static void pldma_orphan_remove(PLDMAChannel *ch, int i)
{
    trace_pldma_ch_orphan_answered(ch->idx, ch->orphan_stag[i]);
    ch->orphan_stag[i] = ch->orphan_stag[--ch->norphans];
}

/* Orphans the SMMU no longer holds (answered, terminated, reset) go */
static uint8_t pldma_orphans_pending(PLDMACore *s, PLDMAChannel *ch)
{
    int i = 0;

    while (i < ch->norphans) {
        if (s->ops->stall_is_pending &&
            s->ops->stall_is_pending(s, ch->orphan_stag[i])) {
            i++;
        } else {
            pldma_orphan_remove(ch, i);
        }
    }
    return ch->norphans;
}

/* The OS answered a stall: if it was an orphan, forget it */
static bool pldma_orphan_resumed(PLDMACore *s, uint16_t stag)
{
    uint32_t i;
    int j;

    for (i = 0; i < s->num_channels; i++) {
        PLDMAChannel *ch = &s->ch[i];

        for (j = 0; j < ch->norphans; j++) {
            if (ch->orphan_stag[j] == stag) {
                pldma_orphan_remove(ch, j);
                return true;
            }
        }
    }
    return false;
}

static int pldma_probe_find(PLDMAChannel *ch, uint64_t page)
{
    int i;

    for (i = 0; i < ch->nprobes; i++) {
        if (ch->probe_va[i] == page) {
            return i;
        }
    }
    return -1;
}

static void pldma_probe_remove(PLDMAChannel *ch, int i)
{
    ch->nprobes--;
    ch->probe_stag[i] = ch->probe_stag[ch->nprobes];
    ch->probe_va[i] = ch->probe_va[ch->nprobes];
}

/*
 * The channel's next access is to a page whose access ahead is still
 * stalled: rather than stall a second time on it, park on that stall.
 */
bool pldma_probe_adopt(PLDMAChannel *ch, uint64_t va)
{
    int i = pldma_probe_find(ch, va & ~(PLDMA_PROBE_PAGE - 1));

    if (i < 0) {
        return false;
    }
    ch->stag = ch->probe_stag[i];
    ch->stall_va = va;
    ch->stall_adopted = true;
    trace_pldma_ch_probe_adopted(ch->idx, ch->stag, va);
    pldma_probe_remove(ch, i);
    return true;
}

/*
 * One access ahead: only its translation, which the SMMU may stall (stall
 * mode) or terminate (report mode).  Returns whether the page is usable.
 */
static bool pldma_probe(PLDMAChannel *ch, uint64_t page, bool is_write)
{
    PLDMADma d = pldma_ch_dma(ch);
    IOMMUTLBEntry e;

    RCU_READ_LOCK_GUARD();
    d.probing = true;
    e = pldma_dma_translate(ch->s, &d, page, is_write);
    return e.perm & (is_write ? IOMMU_WO : IOMMU_RO);
}

/*
 * Batched faults: the missing pages among the first ch->ahead pages of
 * @base's buffer from the current position, as a bitmap.  The faulting
 * page is known to be missing; the others are probed.
 */
static uint64_t pldma_ahead_map(PLDMAChannel *ch, uint64_t base,
                                bool is_write, uint64_t fpage, bool fwrite)
{
    uint64_t first = (base + ch->done) & ~(PLDMA_PROBE_PAGE - 1);
    uint64_t last = base + ch->len - 1;
    uint64_t map = 0;
    uint32_t i;

    if (last < base) {
        last = UINT64_MAX;
    }
    for (i = 0; i < ch->ahead; i++) {
        uint64_t page = first + i * PLDMA_PROBE_PAGE;

        if (page > last || page < first) {
            break;
        }
        if ((page == fpage && is_write == fwrite) ||
            !pldma_probe(ch, page, is_write)) {
            map |= 1ULL << i;
        }
    }
    return map;
}

/*
 * Report mode, descriptor AHEAD > 0: before reporting the fault, look at
 * the pages ahead in the same descriptor, source and destination, with
 * translation-only accesses, and list the missing ones in the channel's
 * AHEAD_* registers, so that the OS resolves them in one round trip
 * (docs/specs/pldma.rst, "Batched faults").  At most 2 x 64 translations.
 */
static void pldma_report_ahead(PLDMAChannel *ch, uint64_t fva, bool fwrite)
{
    uint64_t fpage = fva & ~(PLDMA_PROBE_PAGE - 1);

    ch->ahead_dst = (ch->dst + ch->done) & ~(PLDMA_PROBE_PAGE - 1);
    ch->ahead_dst_map = pldma_ahead_map(ch, ch->dst, true, fpage, fwrite);
    if (ch->op == PLDMA_OP_COPY) {
        ch->ahead_src = (ch->src + ch->done) & ~(PLDMA_PROBE_PAGE - 1);
        ch->ahead_src_map = pldma_ahead_map(ch, ch->src, false, fpage,
                                            fwrite);
    }
    ch->fault_info |= PLDMA_FR_F_AHEAD;
    ch->cnt_ahead += ctpop64(ch->ahead_src_map) + ctpop64(ch->ahead_dst_map);
    trace_pldma_ch_fault_ahead(ch->idx, ch->ahead_src, ch->ahead_src_map,
                               ch->ahead_dst, ch->ahead_dst_map);
}

/*
 * The channel's access at @fva has just stalled: as a DMA master with
 * several transactions in flight, issue the accesses ahead in the same
 * descriptor, page by page, source and destination, so that the SMMU
 * stalls each missing page with its own STAG and the OS resolves them as a
 * batch.  They only translate: data still moves in order, once the parked
 * access is resumed (docs/specs/pldma.rst, "Outstanding stalls").
 */
static void pldma_probe_ahead(PLDMAChannel *ch, uint64_t fva, bool fwrite)
{
    PLDMACore *s = ch->s;
    uint64_t fpage = fva & ~(PLDMA_PROBE_PAGE - 1);
    uint32_t limit = s->max_outstanding - 1, tries = 0, k;
    int n;

    for (k = 0; ch->nprobes < limit && tries < 4 * PLDMA_MAX_OUTSTANDING;
         k++) {
        bool any = false;
        int w;

        for (w = 0; w < 2 && ch->nprobes < limit; w++) {
            bool is_write = w;
            uint64_t base, page;

            if (!is_write && ch->op != PLDMA_OP_COPY) {
                continue;
            }
            base = is_write ? ch->dst : ch->src;
            page = ((base + ch->done) & ~(PLDMA_PROBE_PAGE - 1)) +
                   k * PLDMA_PROBE_PAGE;
            if (page >= base + ch->len) {
                continue;
            }
            any = true;
            if ((page == fpage && is_write == fwrite) ||
                pldma_probe_find(ch, page) >= 0) {
                continue;
            }
            tries++;
            n = ch->nprobes;
            if (!pldma_probe(ch, page, is_write) && ch->nprobes == n) {
                /*
                 * missing and not stalled: the IOMMU or the device has no
                 * room for another outstanding stall (page request
                 * allocation, stall table), and every access further
                 * ahead would only cost a translation to learn the same
                 */
                trace_pldma_ch_probe_stop(ch->idx, page, ch->nprobes);
                return;
            }
        }
        if (!any) {
            break;
        }
    }
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
    pldma_timing_fault(ch);
    ch->fault_va = va;
    ch->fault_desc = ch->head;
    ch->fault_done = ch->done;
    ch->ahead_src = ch->ahead_src_map = 0;
    ch->ahead_dst = ch->ahead_dst_map = 0;

    if (r == PLDMA_ACC_STALLED) {
        ch->fault_info = info | PLDMA_FR_F_STALL;
        ch->stall_pending = true;
        if (!ch->stall_adopted) {
            ch->cnt_stalls++;
        }
        ch->stall_adopted = false;
        trace_pldma_ch_stalled(ch->idx, ch->stag, va, is_write, ch->done);
        pldma_set_state(ch, PLDMA_STATE_STALLED);
        if (s->max_outstanding > 1 && ch->phase == PLDMA_PHASE_XFER &&
            (ch->op == PLDMA_OP_COPY || ch->op == PLDMA_OP_FILL)) {
            pldma_probe_ahead(ch, va, is_write);
        }
        return;
    }
    ch->fault_info = info;
    if (r == PLDMA_ACC_FAULT && s->report_mode) {
        ch->cnt_faults++;
        trace_pldma_ch_fault(ch->idx, va, is_write, ch->done);
        if (ch->ahead && ch->phase == PLDMA_PHASE_XFER &&
            (ch->op == PLDMA_OP_COPY || ch->op == PLDMA_OP_FILL)) {
            pldma_report_ahead(ch, va, is_write);
        }
        pldma_set_state(ch, PLDMA_STATE_FAULTED);
        pldma_raise(s, PLDMA_IRQ_CH_FAULTED);
        pldma_post_fault(s, &(PLDMAFaultRec) {
            .channel = ch->idx, .flags = ch->fault_info,
            .pasid_reg = ch->pasid_reg, .va = ch->fault_va,
            .done = ch->fault_done, .desc = ch->fault_desc, .len = ch->len,
        });
        return;
    }

    /* Unrecoverable: a target that is not RAM, or a non-stalling fault */
    PLDMA_GUEST_ERR(pldma_err_access, "ch%u: %s %s at 0x%" PRIx64, ch->idx,
                    r == PLDMA_ACC_FAULT ? "translation fault" : "bus error",
                    is_write ? "writing" : "reading", va);
    switch (ch->phase) {
    case PLDMA_PHASE_FETCH:
        pldma_ch_error(ch, PLDMA_ERR_DESC_FETCH);
        break;
    case PLDMA_PHASE_XFER:
        pldma_ch_end_desc(ch, r == PLDMA_ACC_FAULT ? PLDMA_ST_FAULT
                                                   : PLDMA_ST_DMA_ERROR,
                          info, va);
        break;
    default:
        pldma_ch_error(ch, PLDMA_ERR_COMPL_WRITE);
        break;
    }
}


/* ---- stall master interface ---- */

/*
 * Only an access that someone resumes can be parked, in stall mode: a
 * channel's, or the responder's.  In report mode the engine reports faults
 * instead, and the device's own queues' accesses (the fault queue's
 * writes) have nobody to resume them: the SMMU terminates those.
 */
bool pldma_core_can_stall(PLDMACore *s, uint32_t sid)
{
    PLDMADma *d = s->xlat;

    if (s->report_mode || !d || !d->can_stall || sid != s->stream_id) {
        trace_pldma_smmu_stall_declined(sid, s->report_mode,
                                        d && d->can_stall);
        return false;
    }
    if (d->ch && pldma_orphans_pending(s, d->ch)) {
        trace_pldma_smmu_stall_declined_orphans(d->ch->idx,
                                                d->ch->norphans);
        return false;
    }
    return true;
}

void pldma_core_stalled(PLDMACore *s, const SMMUStallInfo *info)
{
    PLDMADma *d = s->xlat;
    PLDMAChannel *ch;

    trace_pldma_smmu_stalled(info->sid, info->ssv, info->ssid, info->stag,
                             info->addr, info->is_write);
    if (!d || !d->can_stall || info->sid != s->stream_id) {
        PLDMA_GUEST_ERR(pldma_err_stall_foreign,
                        "stall (sid 0x%x stag %u) outside of a channel access",
                        info->sid, info->stag);
        return;
    }
    ch = d->ch;
    if (d->probing && ch) {
        /* an access ahead: one more outstanding stall of the channel */
        if (ch->nprobes < PLDMA_MAX_OUTSTANDING - 1) {
            ch->probe_stag[ch->nprobes] = info->stag;
            ch->probe_va[ch->nprobes] = info->addr & ~(PLDMA_PROBE_PAGE - 1);
            ch->nprobes++;
            ch->cnt_stalls++;
            trace_pldma_ch_probe_stalled(ch->idx, info->stag, info->addr,
                                         ch->nprobes);
        }
        return;
    }
    d->stalled = true;
    d->stag = info->stag;
    d->stall_va = info->addr;
}

/* A resolution of an access ahead; false if @stag is none of those */
static bool pldma_probe_resumed(PLDMACore *s, uint16_t stag,
                                SMMUStallResponse resp)
{
    uint32_t i;
    int j;

    for (i = 0; i < s->num_channels; i++) {
        PLDMAChannel *ch = &s->ch[i];

        for (j = 0; j < ch->nprobes; j++) {
            if (ch->probe_stag[j] != stag) {
                continue;
            }
            trace_pldma_ch_probe_resumed(i, stag, resp);
            pldma_probe_remove(ch, j);
            if (resp != SMMU_STALL_RETRY) {
                /* the descriptor ends with the error (pldma_xfer) */
                ch->probe_aborted = true;
                ch->cnt_aborts++;
                pldma_schedule(s);
            }
            return true;
        }
    }
    return false;
}

/*
 * The channel's own stall @stag was answered with success: its accesses
 * ahead that share @stag were answered by the same response.  Only a page
 * group response (PRI) does that: the faulting page and the pages ahead
 * form one group, one PRGI.  Forget them before the channel runs on, or it
 * would park on each of them in turn (pldma_probe_adopt), be resumed once
 * per page of the group, and probe ahead again at every park.  The IOMMU's
 * SMMUv3 gives every stall a STAG of its own, so there this finds none.
 */
static void pldma_probes_answered(PLDMAChannel *ch, uint16_t stag)
{
    int j = 0;

    while (j < ch->nprobes) {
        if (ch->probe_stag[j] == stag) {
            trace_pldma_ch_probe_resumed(ch->idx, stag, SMMU_STALL_RETRY);
            pldma_probe_remove(ch, j);
        } else {
            j++;
        }
    }
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
    if (!ch && sid == s->stream_id && pldma_orphan_resumed(s, stag)) {
        return;             /* a stall the channel stopped waiting for */
    }
    if (!ch && sid == s->stream_id && pldma_probe_resumed(s, stag, resp)) {
        return;             /* an access ahead (max-outstanding) */
    }
    if (!ch && sid == s->stream_id && s->link->resumed(s, stag, resp)) {
        return;             /* a responder access of the RDMA link */
    }
    if (!ch || sid != s->stream_id) {
        /* e.g. the channel was reset while stalled */
        return;
    }
    ch->stall_pending = false;
    if (resp == SMMU_STALL_RETRY) {
        pldma_probes_answered(ch, stag);
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
        pldma_ch_end_desc(ch, PLDMA_ST_ABORTED,
                          ch->fault_info & ~PLDMA_FR_F_STALL, ch->fault_va);
        pldma_set_state(ch, PLDMA_STATE_RUNNING);
        break;
    default:
        pldma_ch_error(ch, PLDMA_ERR_COMPL_WRITE);
        break;
    }
    /* terminations also come from SMMU resets and invalidations */
    pldma_schedule(s);
}

