/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, the engine
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A model of a user-level DMA engine in the spirit of the ExaNeSt PLDMA.
 * Channels read descriptors from a ring in the virtual address space of
 * their owner (through the owner's PASID in the IOMMU) and move data in
 * bounded chunks from a bottom half.  A failed translation either parks the
 * channel until the SMMU resumes it (stall mode) or is reported to the
 * driver through a fault queue (report mode) and waits for RESTART or
 * CANCEL: those paths are in fault.c.  The bus front-ends are
 * sysbus.c (platform) and pci.c (PCIe).  See docs/specs/pldma.rst.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "system/address-spaces.h"
#include "system/memory.h"
#include "pldma-internal.h"
#include "trace.h"

/* Descriptors a channel may complete in one scheduling turn */
#define PLDMA_DESCS_PER_TURN 16
/*
 * Work done inline, from the guest's MMIO write that lets a channel go on
 * (a CMD_RESUME in the SMMU's command queue, or RESTART), rather than from
 * the bottom half: at most this many bytes and descriptors, and this many
 * channel runs, between two runs of the bottom half, whatever number of
 * commands one guest write carries.
 */
#define PLDMA_INLINE_BUDGET (64 * KiB)
#define PLDMA_INLINE_DESCS  PLDMA_DESCS_PER_TURN
#define PLDMA_INLINE_RUNS   16
/*
 * Work of one bottom-half invocation, over all channels (see pldma_bh):
 * about a millisecond of copying on a current host
 */
#define PLDMA_BH_BYTES      (16 * MiB)
#define PLDMA_BH_DESCS      256
#define PLDMA_BH_ROUNDS     256


const char *pldma_state_name(uint32_t st)
{
    static const char *const names[] = {
        [PLDMA_STATE_DISABLED] = "DISABLED",
        [PLDMA_STATE_IDLE] = "IDLE",
        [PLDMA_STATE_RUNNING] = "RUNNING",
        [PLDMA_STATE_STALLED] = "STALLED",
        [PLDMA_STATE_FAULTED] = "FAULTED",
        [PLDMA_STATE_ERROR] = "ERROR",
    };
    return st < ARRAY_SIZE(names) ? names[st] : "?";
}

void pldma_set_state(PLDMAChannel *ch, uint32_t st)
{
    if (ch->state != st) {
        trace_pldma_ch_state(ch->idx, pldma_state_name(ch->state),
                             pldma_state_name(st));
        ch->state = st;
    }
}

static bool pldma_ring_valid(PLDMAChannel *ch)
{
    return ch->ring_size >= PLDMA_RING_MIN_ENTRIES &&
           ch->ring_size <= PLDMA_RING_MAX_ENTRIES &&
           is_power_of_2(ch->ring_size) &&
           QEMU_IS_ALIGNED(ch->ring_base, PLDMA_DESC_SIZE);
}

void pldma_ch_error(PLDMAChannel *ch, uint32_t err)
{
    trace_pldma_ch_error(ch->idx, err);
    ch->error = err;
    pldma_stalls_forget(ch);
    pldma_set_state(ch, PLDMA_STATE_ERROR);
    pldma_raise(ch->s, PLDMA_IRQ_CH_ERROR);
}

/*
 * End the descriptor in flight with @status: the completion record it
 * writes next (PHASE_COMPL) carries @status, @flags (PLDMA_FR_F_*: what
 * failed) and @va (where); a success or a descriptor refused before any
 * access carries 0 and 0.
 */
void pldma_ch_end_desc(PLDMAChannel *ch, uint32_t status, uint32_t flags,
                       uint64_t va)
{
    trace_pldma_desc_end(ch->idx, ch->head, status, flags, va);
    ch->cstatus = status;
    ch->cflags = flags;
    ch->cfault_va = va;
    ch->phase = PLDMA_PHASE_COMPL;
}

/* Forget the descriptor in flight and all channel state */
static void pldma_ch_reset(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    uint32_t idx = ch->idx;

    trace_pldma_ch_reset(idx);
    s->link->ch_end(ch);
    s->link->ch_reset(ch);
    pldma_stalls_forget(ch);
    memset(ch, 0, offsetof(PLDMAChannel, cnt_bytes));
    ch->s = s;
    ch->idx = idx;
    ch->state = PLDMA_STATE_DISABLED;
}

static void pldma_ch_clear_counters(PLDMAChannel *ch)
{
    ch->cnt_bytes = 0;
    ch->cnt_descs = 0;
    ch->cnt_stalls = 0;
    ch->cnt_faults = 0;
    ch->cnt_restarts = 0;
    ch->cnt_aborts = 0;
    ch->cnt_cancels = 0;
    ch->cnt_errors = 0;
    ch->cnt_ahead = 0;
}

static bool pldma_ranges_overlap(uint64_t a, uint64_t b, uint64_t len)
{
    return a < b + len && b < a + len;
}

/* The descriptor opcodes (pldma-regs.h), one row each */
const PLDMAOpInfo pldma_op_info[PLDMA_OP_TABLE_SIZE] = PLDMA_OP_TABLE;

/*
 * Are the descriptor's reserved fields zero?  IMM is used by the _IMM
 * opcodes and FLUSH, IMM and RSVD1 together by an atomic (its SWAP
 * operand)
 */
static bool pldma_desc_reserved_ok(PLDMAChannel *ch, const uint8_t *d)
{
    bool atomic = pldma_op_atomic(ch->op);

    return !(ch->dflags & ~PLDMA_DF_VALID_MASK) &&
           ch->ahead <= PLDMA_AHEAD_MAX &&
           !(ldl_le_p(d + PLDMA_DESC_AHEAD) & ~0xffffU) &&
           (!ldl_le_p(d + PLDMA_DESC_IMM) || pldma_op_has_imm(ch->op) ||
            atomic || (pldma_op_flags(ch->op) & PLDMA_OPF_FLUSH)) &&
           !lduw_le_p(d + PLDMA_DESC_RSVD2) &&
           (!ldl_le_p(d + PLDMA_DESC_RSVD1) || atomic);
}

/* Decode and validate the descriptor; returns 0 or a PLDMA_ST_* */
static uint32_t pldma_decode(PLDMAChannel *ch, const uint8_t *d)
{
    PLDMACore *s = ch->s;

    ch->op = d[PLDMA_DESC_OPCODE];
    ch->dflags = d[PLDMA_DESC_FLAGS];
    ch->len = ldl_le_p(d + PLDMA_DESC_LEN);
    ch->src = ldq_le_p(d + PLDMA_DESC_SRC);
    ch->dst = ldq_le_p(d + PLDMA_DESC_DST);
    ch->pattern = ldq_le_p(d + PLDMA_DESC_PATTERN);
    ch->compl_va = ldq_le_p(d + PLDMA_DESC_COMPL);
    ch->cookie = ldq_le_p(d + PLDMA_DESC_COOKIE);
    ch->done = 0;
    ch->cflags = 0;
    ch->cfault_va = 0;
    ch->ahead = d[PLDMA_DESC_AHEAD];
    ch->nsge = d[PLDMA_DESC_NUM_SGE];

    trace_pldma_desc(ch->idx, ch->head, ch->op, ch->dflags, ch->len,
                     ch->src, ch->dst, ch->compl_va);

    if (ch->compl_va & 7) {
        PLDMA_GUEST_ERR(pldma_err_desc_compl_align,
                        "ch%u: desc %u: misaligned completion record "
                        "0x%" PRIx64, ch->idx, ch->head, ch->compl_va);
        ch->compl_va = 0;
        return PLDMA_ST_BAD_DESC;
    }
    if (!pldma_desc_reserved_ok(ch, d)) {
        PLDMA_GUEST_ERR(pldma_err_desc_reserved,
                        "ch%u: desc %u: reserved bits set", ch->idx, ch->head);
        return PLDMA_ST_BAD_DESC;
    }
    if (!(pldma_op_flags(ch->op) & PLDMA_OPF_VALID)) {
        PLDMA_GUEST_ERR(pldma_err_desc_opcode,
                        "ch%u: desc %u: bad opcode 0x%x", ch->idx, ch->head,
                        ch->op);
        return PLDMA_ST_BAD_OPCODE;
    }
    if (pldma_op_remote(ch->op)) {
        return ch->s->link->decode(ch, d);
    }
    if (ch->op == PLDMA_OP_NOP) {
        return ch->nsge ? PLDMA_ST_BAD_DESC : 0;
    }
    if (ldl_le_p(d + PLDMA_DESC_RKEY)) {
        PLDMA_GUEST_ERR(pldma_err_desc_rkey_local,
                        "ch%u: desc %u: rkey on a local operation", ch->idx,
                        ch->head);
        return PLDMA_ST_BAD_DESC;
    }
    if (ch->nsge) {
        PLDMA_GUEST_ERR(pldma_err_desc_sge_local,
                        "ch%u: desc %u: SGE list on a local operation",
                        ch->idx, ch->head);
        return PLDMA_ST_BAD_DESC;
    }
    if (ch->len == 0 || ch->len > s->max_transfer) {
        PLDMA_GUEST_ERR(pldma_err_desc_length, "ch%u: desc %u: bad length %u",
                        ch->idx, ch->head, ch->len);
        return PLDMA_ST_BAD_LENGTH;
    }
    if (ch->dst + ch->len < ch->dst ||
        (ch->op == PLDMA_OP_COPY && ch->src + ch->len < ch->src)) {
        PLDMA_GUEST_ERR(pldma_err_desc_wraps, "ch%u: desc %u: address wraps",
                        ch->idx, ch->head);
        return PLDMA_ST_BAD_LENGTH;
    }
    if (ch->op == PLDMA_OP_COPY &&
        pldma_ranges_overlap(ch->src, ch->dst, ch->len)) {
        PLDMA_GUEST_ERR(pldma_err_desc_overlap,
                        "ch%u: desc %u: overlapping copy", ch->idx, ch->head);
        return PLDMA_ST_OVERLAP;
    }
    return 0;
}

/* PHASE_FETCH; returns false if the channel cannot go on */
static bool pldma_fetch(PLDMAChannel *ch)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t va, fva;
    PLDMAAccess r;
    uint32_t st;

    if (!pldma_ring_valid(ch) || ch->head >= ch->ring_size) {
        PLDMA_GUEST_ERR(pldma_err_ring_invalid, "ch%u: invalid ring 0x%" PRIx64
                        " size %u", ch->idx, ch->ring_base, ch->ring_size);
        pldma_ch_error(ch, PLDMA_ERR_RING_CONFIG);
        return false;
    }
    va = ch->ring_base + (uint64_t)ch->head * PLDMA_DESC_SIZE;
    r = pldma_rw(ch->s, ch, va, d, sizeof(d), false, &fva);
    if (r != PLDMA_ACC_OK) {
        pldma_access_failed(ch, r, fva, false);
        return false;
    }
    pldma_timing_desc(ch);
    st = pldma_decode(ch, d);
    if (st || ch->op == PLDMA_OP_NOP) {
        pldma_ch_end_desc(ch, st ? st : PLDMA_ST_SUCCESS, 0, 0);
    } else {
        ch->phase = PLDMA_PHASE_XFER;
    }
    return true;
}

/* PHASE_XFER: move up to *budget bytes; returns false to stop the turn */
static bool pldma_xfer(PLDMAChannel *ch, uint64_t *budget)
{
    PLDMACore *s = ch->s;

    if (pldma_op_remote(ch->op)) {
        return s->link->xfer(ch, budget);
    }
    while (ch->done < ch->len) {
        if (ch->probe_aborted) {
            /* an access ahead was aborted: the descriptor ends with it */
            pldma_ch_end_desc(ch, PLDMA_ST_ABORTED,
                              ch->fault_info & ~PLDMA_FR_F_STALL,
                              ch->fault_va);
            return true;
        }
        hwaddr want = MIN(ch->len - ch->done, *budget);
        uint64_t dva = ch->dst + ch->done;
        PLDMAMap md, ms;
        PLDMAAccess r;
        hwaddr n;

        if (want == 0) {
            return false;
        }
        /* each page's access at its modeled time, so are its faults */
        if (!pldma_timing_gate(ch)) {
            return false;
        }
        if (ch->op == PLDMA_OP_COPY) {
            uint64_t sva = ch->src + ch->done;

            r = pldma_ch_map(ch, sva, want, false, &ms);
            if (r != PLDMA_ACC_OK) {
                pldma_access_failed(ch, r, sva, false);
                return false;
            }
            r = pldma_ch_map(ch, dva, ms.len, true, &md);
            if (r != PLDMA_ACC_OK) {
                pldma_unmap(&ms, 0);
                pldma_access_failed(ch, r, dva, true);
                return false;
            }
            n = md.len;
            memmove(md.host, ms.host, n);
            pldma_unmap(&ms, n);
        } else {
            uint64_t i, pat = ror64(ch->pattern, 8 * (ch->done & 7));
            uint8_t *q;

            r = pldma_ch_map(ch, dva, want, true, &md);
            if (r != PLDMA_ACC_OK) {
                pldma_access_failed(ch, r, dva, true);
                return false;
            }
            /* byte k of the transfer is byte (k % 8) of the pattern */
            n = md.len;
            q = md.host;
            for (i = 0; i + 8 <= n; i += 8) {
                stq_le_p(q + i, pat);
            }
            for (; i < n; i++) {
                q[i] = pat >> (8 * (i & 7));
            }
        }
        pldma_unmap(&md, n);
        ch->done += n;
        ch->cnt_bytes += n;
        pldma_timing_bytes(ch, n);
        *budget -= n;
    }
    pldma_ch_end_desc(ch, PLDMA_ST_SUCCESS, 0, 0);
    return true;
}

static void pldma_advance(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;

    trace_pldma_desc_done(ch->idx, ch->head, ch->cstatus, ch->done);
    /* (the CQE of a QP's send queue, before its QP may go to ERR) */
    s->link->desc_done(ch);
    s->link->ch_end(ch);
    pldma_probes_clear(ch);
    ch->head = (ch->head + 1) & (ch->ring_size - 1);
    ch->completed++;
    ch->last_status = ch->cstatus;
    ch->cnt_descs++;
    if (ch->cstatus != PLDMA_ST_SUCCESS) {
        ch->cnt_errors++;
    }
    if ((ch->dflags & PLDMA_DF_INTR) || ch->cstatus != PLDMA_ST_SUCCESS) {
        pldma_raise(s, PLDMA_IRQ_CH_DONE(ch->idx));
    }
    ch->phase = PLDMA_PHASE_FETCH;
    ch->dflags = 0;
}

/* PHASE_COMPL */
static bool pldma_complete(PLDMAChannel *ch)
{
    uint8_t rec[PLDMA_COMPL_SIZE];
    uint64_t fva;
    PLDMAAccess r;

    if (ch->compl_va) {
        stl_le_p(rec + PLDMA_COMPL_STATUS, ch->cstatus);
        stl_le_p(rec + PLDMA_COMPL_FLAGS, ch->cflags);
        stq_le_p(rec + PLDMA_COMPL_BYTES, ch->done);
        stq_le_p(rec + PLDMA_COMPL_FAULT_VA, ch->cfault_va);
        stq_le_p(rec + PLDMA_COMPL_COOKIE, ch->cookie);
        /* everything but the status, then the status */
        r = pldma_rw(ch->s, ch, ch->compl_va + 4, rec + 4, sizeof(rec) - 4,
                     true, &fva);
        if (r == PLDMA_ACC_OK) {
            /* the status must not be visible before the other fields */
            smp_wmb();
            r = pldma_rw(ch->s, ch, ch->compl_va, rec, 4, true, &fva);
        }
        if (r != PLDMA_ACC_OK) {
            pldma_access_failed(ch, r, fva, true);
            return false;
        }
    }
    pldma_advance(ch);
    return true;
}

/*
 * One scheduling turn of a RUNNING channel: at most *@budget bytes and
 * *@descs descriptors, both decremented by what the turn used.
 */
static void pldma_ch_run(PLDMAChannel *ch, uint64_t *budget, uint32_t *descs)
{
    while (ch->state == PLDMA_STATE_RUNNING) {
        switch (ch->phase) {
        case PLDMA_PHASE_FETCH:
            if (ch->head == ch->tail) {
                pldma_set_state(ch, PLDMA_STATE_IDLE);
                return;
            }
            if (*descs == 0 || *budget == 0) {
                return;
            }
            if (!pldma_timing_gate(ch) || !pldma_fetch(ch)) {
                return;
            }
            break;
        case PLDMA_PHASE_XFER:
            if (!pldma_timing_gate(ch) || !pldma_xfer(ch, budget)) {
                return;
            }
            break;
        case PLDMA_PHASE_COMPL:
            if (!pldma_timing_gate(ch) || !pldma_complete(ch)) {
                return;
            }
            (*descs)--;
            break;
        default:
            g_assert_not_reached();
        }
    }
}

/*
 * The bottom half serves the RUNNING channels round robin, one turn
 * (chunk-size bytes, PLDMA_DESCS_PER_TURN descriptors) each per round, and
 * goes on with further rounds until nothing runs or the work of this
 * invocation reaches PLDMA_BH_BYTES / PLDMA_BH_DESCS; then it yields to the
 * main loop and reschedules itself.  chunk-size thus decides fairness
 * between channels, the BH budget how long the main loop waits.  One BH
 * invocation per chunk cost a main loop iteration per 256 KiB, which made
 * a 64 MiB COPY 1.5-2.5x slower than memcpy (docs/performance.md).
 */
void pldma_bh(void *opaque)
{
    PLDMACore *s = opaque;
    uint64_t total = PLDMA_BH_BYTES;
    uint32_t total_descs = PLDMA_BH_DESCS;
    bool again;
    uint32_t i, round;

    if (!s->vm_running) {
        /* a stopped VM's devices do not DMA; resumed by the run state */
        return;
    }
    s->busy = true;
    for (round = 0; round < PLDMA_BH_ROUNDS; round++) {
        again = false;
        for (i = 0; i < s->num_channels && total && total_descs; i++) {
            PLDMAChannel *ch = &s->ch[(s->rr + i) % s->num_channels];

            if (ch->state == PLDMA_STATE_RUNNING) {
                uint64_t budget = MIN(s->chunk_size, total);
                uint32_t descs = MIN(PLDMA_DESCS_PER_TURN, total_descs);

                pldma_ch_run(ch, &budget, &descs);
                total -= MIN(s->chunk_size, total) - budget;
                total_descs -= MIN(PLDMA_DESCS_PER_TURN, total_descs) - descs;
                /*
                 * a remote op waiting for the network is not work, nor a
                 * channel waiting for its modeled time (timing.c)
                 */
                again |= ch->state == PLDMA_STATE_RUNNING &&
                         !(ch->phase == PLDMA_PHASE_XFER &&
                           pldma_op_remote(ch->op) && s->link->waiting(ch)) &&
                         !pldma_timing_waiting(ch);
            }
        }
        /* READ responses of the responder side */
        if (total && s->link->bh(s, &total)) {
            again = true;
        }
        s->rr = (s->rr + 1) % s->num_channels;
        if (!again || !total || !total_descs) {
            break;
        }
    }
    s->busy = false;
    /* the guest's next writes may continue channels inline again */
    s->inline_bytes = PLDMA_INLINE_BUDGET;
    s->inline_descs = PLDMA_INLINE_DESCS;
    s->inline_runs = PLDMA_INLINE_RUNS;
    pldma_update_irq(s);
    if (again) {
        pldma_schedule(s);
    }
    s->link->flush(s);
}

/*
 * Continue @ch at once, from the guest's access that lets it go on (its
 * CMD_RESUME in the SMMU's command queue, or RESTART), rather than from
 * the bottom half.  Under TCG the bottom half runs in the main loop
 * thread: waking it, and its taking the BQL, cost tens of microseconds per
 * fault, and milliseconds when that thread is not scheduled on a busy
 * host (docs/performance.md).  Running here, the next fault of a demand-
 * paged transfer is raised before the command returns.
 *
 * The work is bounded per guest MMIO write, not per command: one write of
 * CMDQ_PROD can carry many RESUMEs, each for the stall the previous one
 * raised.  The inline budget (PLDMA_INLINE_*) is shared by every inline
 * run until the bottom half, which does the rest, runs and refills it.
 *
 * DMA goes to RAM only, but the SMMU may write an event anywhere the guest
 * put its queue, including these registers.  The device's re-entrancy
 * guard is engaged around the run, as for an MMIO access or the bottom
 * half, so that such a write is refused rather than reset the channel
 * under the access.  A resolution that arrives while a run is in progress
 * (s->busy: the SMMU terminated a stall from within one of our
 * translations) is left to the bottom half.
 */
void pldma_run_now(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    MemReentrancyGuard *guard = &s->dev->mem_reentrancy_guard;
    bool engaged = guard->engaged_in_io;

    if (ch->state != PLDMA_STATE_RUNNING || pldma_timing_resume(ch)) {
        return;
    }
    if (s->busy || !s->vm_running || !s->inline_runs || !s->inline_bytes ||
        !s->inline_descs) {
        trace_pldma_ch_deferred(ch->idx);
        pldma_schedule(s);
        return;
    }
    s->inline_runs--;
    s->busy = true;
    guard->engaged_in_io = true;
    pldma_ch_run(ch, &s->inline_bytes, &s->inline_descs);
    guard->engaged_in_io = engaged;
    s->busy = false;
    pldma_update_irq(s);
    /* the rest of the work, and a new inline budget */
    pldma_schedule(s);
    s->link->flush(s);
}

/*
 * The timing model's steps (timing.c), from a virtual-clock timer: as the
 * bottom half, with the device's re-entrancy guard engaged
 */
void pldma_run_timed(PLDMACore *s)
{
    MemReentrancyGuard *guard = &s->dev->mem_reentrancy_guard;
    bool engaged = guard->engaged_in_io;

    if (s->busy) {
        qemu_bh_schedule(s->bh);
        return;
    }
    guard->engaged_in_io = true;
    pldma_bh(s);
    guard->engaged_in_io = engaged;
}

static void pldma_kick(PLDMAChannel *ch)
{
    if (ch->state == PLDMA_STATE_IDLE && ch->head != ch->tail) {
        pldma_set_state(ch, PLDMA_STATE_RUNNING);
        pldma_timing_start(ch);
    }
    if (ch->state == PLDMA_STATE_RUNNING) {
        pldma_schedule(ch->s);
    }
}

/* ---- user commands ---- */

static void pldma_cmd(PLDMAChannel *ch, uint32_t cmd)
{
    PLDMACore *s = ch->s;

    trace_pldma_ch_cmd(ch->idx, cmd, pldma_state_name(ch->state));
    if (cmd == PLDMA_CMD_CANCEL && ch->state == PLDMA_STATE_ERROR) {
        /* a remote message in flight is over: the next one gets new PSNs */
        s->link->ch_end(ch);
        ch->head = ch->tail;
        ch->phase = PLDMA_PHASE_FETCH;
        pldma_set_state(ch, PLDMA_STATE_IDLE);
        return;
    }
    /*
     * CANCEL also ends a STALLED channel's descriptor, so that a driver can
     * bound the time of a stall-mode transfer: the channel forgets the
     * stall, and the SMMU's later resumed() for it is ignored.
     */
    if (cmd == PLDMA_CMD_CANCEL && ch->state == PLDMA_STATE_STALLED) {
        trace_pldma_ch_stall_cancelled(ch->idx, ch->stag);
        pldma_stalls_forget(ch);
        ch->fault_info &= ~PLDMA_FR_F_STALL;
    } else if (ch->state != PLDMA_STATE_FAULTED ||
               (cmd != PLDMA_CMD_RESTART && cmd != PLDMA_CMD_CANCEL)) {
        PLDMA_GUEST_ERR(pldma_err_cmd_ignored,
                        "ch%u: command %u in state %s ignored", ch->idx, cmd,
                        pldma_state_name(ch->state));
        ch->error = PLDMA_ERR_BAD_CMD;
        return;
    }
    if (cmd == PLDMA_CMD_RESTART) {
        ch->cnt_restarts++;
    } else {
        ch->cnt_cancels++;
        switch (ch->phase) {
        case PLDMA_PHASE_FETCH:
            /* skip the unreadable descriptor */
            ch->head = (ch->head + 1) & (ch->ring_size - 1);
            break;
        case PLDMA_PHASE_XFER:
            pldma_ch_end_desc(ch, PLDMA_ST_CANCELLED, ch->fault_info,
                              ch->fault_va);
            break;
        default:
            /* drop the completion record */
            ch->compl_va = 0;
            break;
        }
    }
    pldma_set_state(ch, PLDMA_STATE_RUNNING);
    if (cmd == PLDMA_CMD_RESTART) {
        pldma_run_now(ch);
        return;
    }
    pldma_schedule(s);
}

static void pldma_write_tail(PLDMAChannel *ch, uint32_t val)
{
    if (ch->state == PLDMA_STATE_DISABLED) {
        PLDMA_GUEST_ERR(pldma_err_db_disabled,
                        "ch%u: doorbell on a disabled channel", ch->idx);
        ch->error = PLDMA_ERR_DISABLED;
        return;
    }
    if (ch->state == PLDMA_STATE_ERROR) {
        PLDMA_GUEST_ERR(pldma_err_db_error, "ch%u: doorbell in ERROR",
                        ch->idx);
        return;
    }
    if (!pldma_ring_valid(ch)) {
        PLDMA_GUEST_ERR(pldma_err_db_ring_invalid,
                        "ch%u: doorbell with invalid ring 0x%" PRIx64
                        " size %u", ch->idx, ch->ring_base, ch->ring_size);
        pldma_ch_error(ch, PLDMA_ERR_RING_CONFIG);
        return;
    }
    if (val >= ch->ring_size) {
        PLDMA_GUEST_ERR(pldma_err_db_tail, "ch%u: tail %u out of range",
                        ch->idx, val);
        pldma_ch_error(ch, PLDMA_ERR_RING_INDEX);
        return;
    }
    ch->tail = val;
    pldma_kick(ch);
}

/* ---- MMIO ---- */

static uint64_t pldma_cnt_read(PLDMAChannel *ch, hwaddr off)
{
    switch (off) {
    case PLDMA_CNT_BYTES_LO:
        return (uint32_t)ch->cnt_bytes;
    case PLDMA_CNT_BYTES_HI:
        return ch->cnt_bytes >> 32;
    case PLDMA_CNT_DESCS:
        return ch->cnt_descs;
    case PLDMA_CNT_STALLS:
        return ch->cnt_stalls;
    case PLDMA_CNT_FAULTS:
        return ch->cnt_faults;
    case PLDMA_CNT_RESTARTS:
        return ch->cnt_restarts;
    case PLDMA_CNT_ABORTS:
        return ch->cnt_aborts;
    case PLDMA_CNT_CANCELS:
        return ch->cnt_cancels;
    case PLDMA_CNT_ERRORS:
        return ch->cnt_errors;
    case PLDMA_CNT_AHEAD:
        return ch->cnt_ahead;
    default:
        return 0;
    }
}

static uint32_t pldma_state_bitmap(PLDMACore *s, uint32_t st)
{
    uint32_t i, map = 0;

    for (i = 0; i < s->num_channels; i++) {
        if (s->ch[i].state == st) {
            map |= 1U << i;
        }
    }
    return map;
}

static uint32_t pldma_cap(PLDMACore *s)
{
    uint32_t cap = s->num_channels;

    cap |= s->report_mode ? PLDMA_CAP_FAULT_REPORT :
           s->pri_mode ? PLDMA_CAP_FAULT_PRI : PLDMA_CAP_FAULT_STALL;
    if (s->translated) {
        cap |= PLDMA_CAP_PASID | PLDMA_FSET(s->pasid_bits, 20, 16);
    }
    if (s->nic) {
        cap |= PLDMA_CAP_REMOTE | PLDMA_CAP_QP | PLDMA_CAP_CQ |
               PLDMA_CAP_ETH | PLDMA_CAP_ATOMIC | PLDMA_CAP_UC | PLDMA_CAP_UD |
               (s->num_srqs ? PLDMA_CAP_SRQ : 0);
    }
    return cap;
}

static uint64_t pldma_global_read(PLDMACore *s, hwaddr addr)
{
    PLDMAChannel *ch;
    uint64_t val;

    if (addr >= PLDMA_CH_BIND(0) && addr < PLDMA_CH_BIND(s->num_channels)) {
        ch = &s->ch[(addr - PLDMA_CH_BIND(0)) / PLDMA_CH_BIND_STRIDE];
        switch (addr & (PLDMA_CH_BIND_STRIDE - 1)) {
        case PLDMA_CHB_PASID:
            return ch->pasid_reg;
        case PLDMA_CHB_CTRL:
            return ch->ctrl & PLDMA_CHB_CTRL_ENABLE;
        case PLDMA_CHB_OWNER:
            return ch->owner;
        default:
            return ch->state;
        }
    }
    if (addr >= PLDMA_CH_CNT(0) && addr < PLDMA_CH_CNT(s->num_channels)) {
        ch = &s->ch[(addr - PLDMA_CH_CNT(0)) / PLDMA_CH_CNT_STRIDE];
        return pldma_cnt_read(ch, (addr - PLDMA_CH_CNT(0)) % 0x40);
    }
    if (s->link->read(s, addr, &val)) {
        return val;
    }

    switch (addr) {
    case PLDMA_ID:
        return PLDMA_ID_VALUE;
    case PLDMA_VERSION:
        return PLDMA_VERSION_VALUE;
    case PLDMA_CAP:
        return pldma_cap(s);
    case PLDMA_MAX_XFER:
        return s->max_transfer;
    case PLDMA_CTRL:
        return 0;
    case PLDMA_STREAM_ID:
        return s->stream_id;
    case PLDMA_CHUNK_SIZE:
        return s->chunk_size;
    case PLDMA_IRQ_STATUS:
        return s->irq_status;
    case PLDMA_IRQ_MASK:
        return s->irq_mask;
    case PLDMA_FAULTED_CHANNELS:
        return pldma_state_bitmap(s, PLDMA_STATE_FAULTED);
    case PLDMA_ERROR_CHANNELS:
        return pldma_state_bitmap(s, PLDMA_STATE_ERROR);
    case PLDMA_STALLED_CHANNELS:
        return pldma_state_bitmap(s, PLDMA_STATE_STALLED);
    case PLDMA_FQ_BASE_LO:
        return (uint32_t)s->fq_base;
    case PLDMA_FQ_BASE_HI:
        return s->fq_base >> 32;
    case PLDMA_FQ_SIZE:
        return s->fq_size;
    case PLDMA_FQ_HEAD:
        return s->fq_head;
    case PLDMA_FQ_TAIL:
        return s->fq_tail;
    case PLDMA_FQ_CTRL:
        return s->fq_ctrl;
    case PLDMA_FQ_STATUS:
        return s->fq_status;
    case PLDMA_FQ_OVERFLOWS:
        return s->fq_overflows;
    default:
        PLDMA_GUEST_ERR(pldma_err_global_read_undef,
                        "read of undefined global register 0x%" HWADDR_PRIx,
                        addr);
        return 0;
    }
}

static void pldma_reset_engine(PLDMACore *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        s->ch[i].s = s;
        s->ch[i].idx = i;
        pldma_ch_reset(&s->ch[i]);
        pldma_ch_clear_counters(&s->ch[i]);
    }
    s->irq_status = 0;
    s->irq_mask = 0;
    s->fq_base = 0;
    s->fq_size = 0;
    s->fq_head = 0;
    s->fq_tail = 0;
    s->fq_ctrl = 0;
    s->fq_status = 0;
    s->fq_overflows = 0;
    s->fault_seq = 0;
    s->rr = 0;
    s->inline_bytes = PLDMA_INLINE_BUDGET;
    s->inline_descs = PLDMA_INLINE_DESCS;
    s->inline_runs = PLDMA_INLINE_RUNS;
    pldma_timing_reset(s);
    s->link->reset(s);
}

/*
 * A PASID the device can issue: below 2^pasid-bits (which realize bounds
 * by the SMMU's SSID width).
 */
bool pldma_pasid_valid(const PLDMACore *s, uint32_t pasid)
{
    return pasid < (1U << s->pasid_bits);
}

/*
 * A PASID register value (CHB_PASID, KEY_PASID, a QP's or CQ's PD): EN
 * and a PASID the device can issue, nothing else.
 */
bool pldma_pasid_reg_valid(const PLDMACore *s, uint32_t reg)
{
    return pldma_pasid_valid(s, PLDMA_CHB_PASID_VALUE(reg)) &&
           !(reg & ~(PLDMA_CHB_PASID_EN | PLDMA_FMASK(19, 0)));
}

static void pldma_chb_write(PLDMACore *s, PLDMAChannel *ch, hwaddr off,
                            uint32_t val)
{
    switch (off) {
    case PLDMA_CHB_PASID:
        if (ch->ctrl & PLDMA_CHB_CTRL_ENABLE) {
            PLDMA_GUEST_ERR(pldma_err_pasid_busy,
                            "ch%u: PASID write while enabled ignored",
                            ch->idx);
            return;
        }
        if (!pldma_pasid_reg_valid(s, val)) {
            PLDMA_GUEST_ERR(pldma_err_pasid_range,
                            "ch%u: PASID 0x%x out of range", ch->idx, val);
            return;
        }
        ch->pasid_reg = val;
        trace_pldma_ch_bind(ch->idx, val);
        break;
    case PLDMA_CHB_CTRL:
        if (val & PLDMA_CHB_CTRL_CLR_CNT) {
            pldma_ch_clear_counters(ch);
        }
        if (val & PLDMA_CHB_CTRL_RESET) {
            pldma_ch_reset(ch);
        }
        if ((val & PLDMA_CHB_CTRL_ENABLE) &&
            !(ch->ctrl & PLDMA_CHB_CTRL_ENABLE)) {
            ch->ctrl |= PLDMA_CHB_CTRL_ENABLE;
            pldma_set_state(ch, PLDMA_STATE_IDLE);
            ch->phase = PLDMA_PHASE_FETCH;
            if (pldma_ring_valid(ch) && ch->tail < ch->ring_size) {
                pldma_kick(ch);
            }
        } else if (!(val & PLDMA_CHB_CTRL_ENABLE) &&
                   (ch->ctrl & PLDMA_CHB_CTRL_ENABLE)) {
            ch->ctrl &= ~PLDMA_CHB_CTRL_ENABLE;
            pldma_stalls_forget(ch);
            s->link->ch_end(ch);
            ch->phase = PLDMA_PHASE_FETCH;
            pldma_set_state(ch, PLDMA_STATE_DISABLED);
        }
        break;
    case PLDMA_CHB_OWNER:
        ch->owner = val;
        break;
    default:
        PLDMA_GUEST_ERR(pldma_err_ch_state_ro,
                        "write to read-only channel state of ch%u", ch->idx);
        break;
    }
}

/* A write to the fault queue's registers */
static void pldma_fq_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case PLDMA_FQ_BASE_LO:
    case PLDMA_FQ_BASE_HI:
    case PLDMA_FQ_SIZE:
        if (s->fq_ctrl & PLDMA_FQ_CTRL_ENABLE) {
            PLDMA_GUEST_ERR(pldma_err_fq_cfg_busy,
                            "fault queue configuration write while enabled "
                            "ignored");
            break;
        }
        if (addr == PLDMA_FQ_BASE_LO) {
            s->fq_base = deposit64(s->fq_base, 0, 32, val & ~0x1fU);
        } else if (addr == PLDMA_FQ_BASE_HI) {
            s->fq_base = deposit64(s->fq_base, 32, 32, val);
        } else if (val < PLDMA_FQ_MIN_ENTRIES || val > PLDMA_FQ_MAX_ENTRIES ||
                   !is_power_of_2(val)) {
            PLDMA_GUEST_ERR(pldma_err_fq_size, "bad fault queue size %u", val);
        } else {
            /* a new size starts an empty queue, as ENABLE does */
            s->fq_size = val;
            s->fq_head = s->fq_tail = 0;
        }
        break;
    case PLDMA_FQ_HEAD:
        if (val >= s->fq_size) {
            PLDMA_GUEST_ERR(pldma_err_fq_head,
                            "fault queue head %u out of range", val);
            break;
        }
        s->fq_head = val;
        break;
    case PLDMA_FQ_CTRL:
        if ((val & PLDMA_FQ_CTRL_ENABLE) && !s->fq_size) {
            PLDMA_GUEST_ERR(pldma_err_fq_no_size,
                            "fault queue enabled without a size");
            break;
        }
        if ((val & PLDMA_FQ_CTRL_ENABLE) &&
            !(s->fq_ctrl & PLDMA_FQ_CTRL_ENABLE)) {
            s->fq_head = s->fq_tail = 0;
        }
        s->fq_ctrl = val & PLDMA_FQ_CTRL_ENABLE;
        trace_pldma_fq_ctrl(s->fq_ctrl, s->fq_base, s->fq_size);
        break;
    }
}

static void pldma_global_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    if (addr >= PLDMA_CH_BIND(0) && addr < PLDMA_CH_BIND(s->num_channels)) {
        unsigned int n = (addr - PLDMA_CH_BIND(0)) / PLDMA_CH_BIND_STRIDE;

        pldma_chb_write(s, &s->ch[n], addr & (PLDMA_CH_BIND_STRIDE - 1), val);
        return;
    }
    if (s->link->write(s, addr, val)) {
        return;
    }

    switch (addr) {
    case PLDMA_CTRL:
        if (val & PLDMA_CTRL_RESET) {
            trace_pldma_reset();
            pldma_reset_engine(s);
        }
        break;
    case PLDMA_IRQ_STATUS:
        s->irq_status &= ~val;
        /* the link's bits (IRQ_CQ, CQ_ERROR, QP_ERROR, ETH) follow it */
        s->link->irq_sync(s);
        break;
    case PLDMA_IRQ_MASK:
        s->irq_mask = val;
        break;
    case PLDMA_FQ_BASE_LO:
    case PLDMA_FQ_BASE_HI:
    case PLDMA_FQ_SIZE:
    case PLDMA_FQ_HEAD:
    case PLDMA_FQ_CTRL:
        pldma_fq_write(s, addr, val);
        break;
    case PLDMA_FQ_STATUS:
        s->fq_status &= ~val;
        break;
    default:
        PLDMA_GUEST_ERR(pldma_err_global_write_ro,
                        "write 0x%x to read-only or undefined global register "
                        "0x%" HWADDR_PRIx, val, addr);
        break;
    }
}

static uint64_t pldma_ch_read(PLDMAChannel *ch, hwaddr off)
{
    uint64_t val;

    if (off >= PLDMA_CH_CNT_OFFSET && off < PLDMA_CH_CNT_OFFSET + 0x40) {
        return pldma_cnt_read(ch, off - PLDMA_CH_CNT_OFFSET);
    }
    /* the link's registers on the page (the CQ and RQ doorbells) */
    if (ch->s->link->ch_read(ch, off, &val)) {
        return val;
    }
    switch (off) {
    case PLDMA_CH_RING_BASE_LO:
        return (uint32_t)ch->ring_base;
    case PLDMA_CH_RING_BASE_HI:
        return ch->ring_base >> 32;
    case PLDMA_CH_RING_SIZE:
        return ch->ring_size;
    case PLDMA_CH_RING_HEAD:
        return ch->head;
    case PLDMA_CH_RING_TAIL:
        return ch->tail;
    case PLDMA_CH_STATE:
        return ch->state;
    case PLDMA_CH_ERROR:
        return ch->error;
    case PLDMA_CH_COMPLETED:
        return ch->completed;
    case PLDMA_CH_LAST_STATUS:
        return ch->last_status;
    case PLDMA_CH_FAULT_VA_LO:
        return (uint32_t)ch->fault_va;
    case PLDMA_CH_FAULT_VA_HI:
        return ch->fault_va >> 32;
    case PLDMA_CH_FAULT_INFO:
        return ch->fault_info;
    case PLDMA_CH_FAULT_DESC:
        return ch->fault_desc;
    case PLDMA_CH_FAULT_DONE:
        return ch->fault_done;
    case PLDMA_CH_PASID:
        return ch->pasid_reg;
    case PLDMA_CH_AHEAD_SRC_LO:
        return (uint32_t)ch->ahead_src;
    case PLDMA_CH_AHEAD_SRC_HI:
        return ch->ahead_src >> 32;
    case PLDMA_CH_AHEAD_SRC_MAP_LO:
        return (uint32_t)ch->ahead_src_map;
    case PLDMA_CH_AHEAD_SRC_MAP_HI:
        return ch->ahead_src_map >> 32;
    case PLDMA_CH_AHEAD_DST_LO:
        return (uint32_t)ch->ahead_dst;
    case PLDMA_CH_AHEAD_DST_HI:
        return ch->ahead_dst >> 32;
    case PLDMA_CH_AHEAD_DST_MAP_LO:
        return (uint32_t)ch->ahead_dst_map;
    case PLDMA_CH_AHEAD_DST_MAP_HI:
        return ch->ahead_dst_map >> 32;
    case PLDMA_CH_CMD:
        return 0;
    default:
        PLDMA_GUEST_ERR(pldma_err_ch_read_undef,
                        "ch%u: read of undefined register 0x%" HWADDR_PRIx,
                        ch->idx, off);
        return 0;
    }
}

static void pldma_ch_write(PLDMAChannel *ch, hwaddr off, uint32_t val)
{
    bool quiet = ch->state == PLDMA_STATE_DISABLED ||
                 ch->state == PLDMA_STATE_IDLE;

    if (ch->s->link->ch_write(ch, off, val)) {
        return;
    }
    switch (off) {
    case PLDMA_CH_RING_BASE_LO:
    case PLDMA_CH_RING_BASE_HI:
    case PLDMA_CH_RING_SIZE:
        if (!quiet) {
            PLDMA_GUEST_ERR(pldma_err_ring_cfg_state,
                            "ch%u: ring configuration in state %s ignored",
                            ch->idx, pldma_state_name(ch->state));
            return;
        }
        if (off == PLDMA_CH_RING_BASE_LO) {
            ch->ring_base = deposit64(ch->ring_base, 0, 32, val);
        } else if (off == PLDMA_CH_RING_BASE_HI) {
            ch->ring_base = deposit64(ch->ring_base, 32, 32, val);
        } else {
            ch->ring_size = val;
            ch->head = ch->tail = 0;
        }
        trace_pldma_ch_ring(ch->idx, ch->ring_base, ch->ring_size);
        break;
    case PLDMA_CH_RING_TAIL:
        trace_pldma_ch_doorbell(ch->idx, val, ch->head);
        pldma_write_tail(ch, val);
        break;
    case PLDMA_CH_CMD:
        pldma_cmd(ch, val);
        break;
    default:
        PLDMA_GUEST_ERR(pldma_err_ch_write_ro,
                        "ch%u: write 0x%x to read-only or undefined register "
                        "0x%" HWADDR_PRIx, ch->idx, val, off);
        break;
    }
}

static uint64_t pldma_read(void *opaque, hwaddr addr, unsigned size)
{
    PLDMACore *s = opaque;
    uint64_t val;

    if (addr < PLDMA_PAGE_SIZE) {
        val = pldma_global_read(s, addr);
    } else {
        uint32_t n = addr / PLDMA_PAGE_SIZE - 1;

        val = pldma_ch_read(&s->ch[n], addr % PLDMA_PAGE_SIZE);
    }
    trace_pldma_mmio_read(addr, val);
    return val;
}

static void pldma_write(void *opaque, hwaddr addr, uint64_t val,
                        unsigned size)
{
    PLDMACore *s = opaque;

    trace_pldma_mmio_write(addr, val);
    if (addr < PLDMA_PAGE_SIZE) {
        pldma_global_write(s, addr, val);
    } else {
        uint32_t n = addr / PLDMA_PAGE_SIZE - 1;

        pldma_ch_write(&s->ch[n], addr % PLDMA_PAGE_SIZE, val);
    }
    /* state changes above may have raised or cleared interrupt sources */
    pldma_update_irq(s);
}

static const MemoryRegionOps pldma_ops = {
    .read = pldma_read,
    .write = pldma_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* ---- life cycle, for the front-ends ---- */

/*
 * While the VM is stopped (migration, a debugger, "stop") the engine does
 * not run: the bottom half returns and is scheduled again when the VM runs.
 * Without this, channels went on writing guest RAM and raising faults with
 * the vCPUs stopped, and a stopped VM could never be saved mid-copy.
 */
static void pldma_vm_state_change(void *opaque, bool running, RunState state)
{
    PLDMACore *s = opaque;

    s->vm_running = running;
    trace_pldma_vm_running(running);
    if (running) {
        pldma_schedule(s);
        s->link->vm_running(s);
    }
}

/*
 * Check the common properties, set up the engine and its registers
 * (s->iomem, for the front-end to map) for @dev; the front-end has set
 * s->dma_as, s->translated and s->stream_id.
 */
bool pldma_core_realize(PLDMACore *s, DeviceState *dev,
                        const PLDMACoreOps *ops, const char *default_mode,
                        Error **errp)
{
    const char *mode = s->fault_mode_str ? s->fault_mode_str : default_mode;

    if (s->num_channels < 1 || s->num_channels > PLDMA_MAX_CHANNELS) {
        error_setg(errp, "num-channels must be between 1 and %d",
                   PLDMA_MAX_CHANNELS);
        return false;
    }
    if (!strcmp(mode, "stall")) {
        s->report_mode = false;
    } else if (!strcmp(mode, "report")) {
        s->report_mode = true;
    } else if (!strcmp(mode, "pri") && ops->pri) {
        /* the stall state machine, with page requests for stalls (pci.c) */
        s->report_mode = false;
        s->pri_mode = true;
    } else {
        error_setg(errp, "fault-mode must be 'stall' or 'report'");
        return false;
    }
    if (s->pasid_bits > SMMU_STALL_MAX_SSID_BITS) {
        error_setg(errp, "pasid-bits must be at most %d",
                   SMMU_STALL_MAX_SSID_BITS);
        return false;
    }
    if (s->chunk_size < 4096 || s->chunk_size > 64 * MiB) {
        error_setg(errp, "chunk-size must be between 4 KiB and 64 MiB");
        return false;
    }
    if (s->max_transfer == 0) {
        error_setg(errp, "max-transfer must not be 0");
        return false;
    }
    if (s->max_outstanding < 1 || s->max_outstanding > PLDMA_MAX_OUTSTANDING) {
        error_setg(errp, "max-outstanding must be between 1 and %d",
                   PLDMA_MAX_OUTSTANDING);
        return false;
    }

    if (!pldma_timing_realize(s, errp)) {
        return false;
    }
    s->dev = dev;
    s->ops = ops;
    s->link = &pldma_net_link;
    memory_region_init_io(&s->iomem, OBJECT(dev), &pldma_ops, s, "pldma",
                          PLDMA_MMIO_SIZE(s->num_channels));
    s->bh = qemu_bh_new_guarded(pldma_bh, s, &dev->mem_reentrancy_guard);
    s->vm_running = runstate_is_running();
    s->vmsh = qemu_add_vm_change_state_handler(pldma_vm_state_change, s);
    pldma_reset_engine(s);
    if (!s->link->realize(s, errp)) {
        pldma_core_unrealize(s);
        return false;
    }
    return true;
}

void pldma_core_unrealize(PLDMACore *s)
{
    s->link->unrealize(s);
    pldma_timing_unrealize(s);
    qemu_del_vm_change_state_handler(s->vmsh);
    s->vmsh = NULL;
    qemu_bh_delete(s->bh);
    s->bh = NULL;
    s->dma_as = NULL;
}

void pldma_core_reset(PLDMACore *s)
{
    trace_pldma_reset();
    qemu_bh_cancel(s->bh);
    pldma_reset_engine(s);
}

/*
 * "channels": the state and counters of every channel, for management
 * and tests (qom-get), e.g. [{"state": "STALLED", "stalls": 3, ...}, ...]
 */
static void pldma_get_channels(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    static const struct {
        const char *name;
        uint32_t off;
    } cnt[] = {
        { "descs", PLDMA_CNT_DESCS },
        { "stalls", PLDMA_CNT_STALLS },
        { "faults", PLDMA_CNT_FAULTS },
        { "restarts", PLDMA_CNT_RESTARTS },
        { "aborts", PLDMA_CNT_ABORTS },
        { "cancels", PLDMA_CNT_CANCELS },
        { "errors", PLDMA_CNT_ERRORS },
        { "ahead", PLDMA_CNT_AHEAD },
    };
    PLDMACore *s = (PLDMACore *)((char *)obj + (ptrdiff_t)opaque);
    bool ok = false;
    uint32_t i, j;

    if (!visit_start_list(v, name, NULL, 0, errp)) {
        return;
    }
    for (i = 0; i < s->num_channels; i++) {
        PLDMAChannel *ch = &s->ch[i];
        char *state = (char *)pldma_state_name(ch->state);
        uint32_t head = ch->head, tail = ch->tail, val;
        uint64_t bytes = ch->cnt_bytes;

        if (!visit_start_struct(v, NULL, NULL, 0, errp)) {
            goto out;
        }
        ok = visit_type_str(v, "state", &state, errp) &&
             visit_type_uint32(v, "head", &head, errp) &&
             visit_type_uint32(v, "tail", &tail, errp) &&
             visit_type_uint64(v, "bytes", &bytes, errp);
        for (j = 0; ok && j < ARRAY_SIZE(cnt); j++) {
            val = pldma_cnt_read(ch, cnt[j].off);
            ok = visit_type_uint32(v, cnt[j].name, &val, errp);
        }
        ok = ok && visit_check_struct(v, errp);
        visit_end_struct(v, NULL);
        if (!ok) {
            goto out;
        }
    }
    ok = visit_check_list(v, errp);
out:
    visit_end_list(v, NULL);
}

/* Why channel @ch's stalls are not loadable (migration), or NULL */
static const char *pldma_ch_check_stalls(PLDMACore *s, PLDMAChannel *ch)
{
    int i;

    if (ch->stall_pending != (ch->state == PLDMA_STATE_STALLED)) {
        return "stall bookkeeping disagrees with the state";
    }
    /*
     * A parked transaction migrates with the SMMU's table of stalls
     * (subsection smmuv3/stalls, loaded before us), which resumes or
     * terminates it later.  Without it the channel would wait forever.
     */
    if (ch->stall_pending &&
        (!s->ops->stall_is_pending || !s->ops->stall_is_pending(s, ch->stag))) {
        return "stalled on a transaction the SMMU does not hold";
    }
    if (ch->nprobes >= s->max_outstanding ||
        ((ch->nprobes || ch->probe_aborted) &&
         ch->phase != PLDMA_PHASE_XFER)) {
        return "outstanding stalls beyond max-outstanding or outside a "
               "transfer";
    }
    if (ch->ahead > PLDMA_AHEAD_MAX) {
        return "batch window beyond 64 pages";
    }
    if (ch->norphans > ARRAY_SIZE(ch->orphan_stag)) {
        return "more orphaned stalls than the table holds";
    }
    for (i = 0; i < ch->nprobes; i++) {
        if (!s->ops->stall_is_pending ||
            !s->ops->stall_is_pending(s, ch->probe_stag[i])) {
            return "an outstanding stall the SMMU does not hold";
        }
    }
    return NULL;
}

/* Why the migrated state of @ch is inconsistent, or NULL */
static const char *pldma_ch_check(PLDMACore *s, PLDMAChannel *ch)
{
    bool enabled = ch->ctrl & PLDMA_CHB_CTRL_ENABLE;

    if (ch->idx >= s->num_channels) {
        return ch->state != PLDMA_STATE_DISABLED || ch->ctrl ?
               "channel beyond num-channels in use" : NULL;
    }
    if (ch->state > PLDMA_STATE_ERROR || ch->phase > PLDMA_PHASE_COMPL) {
        return "bad state or phase";
    }
    if (ch->ctrl & ~PLDMA_CHB_CTRL_ENABLE ||
        enabled != (ch->state != PLDMA_STATE_DISABLED)) {
        return "CTRL disagrees with the state";
    }
    if (!pldma_pasid_reg_valid(s, ch->pasid_reg)) {
        return "PASID beyond pasid-bits";
    }
    if (ch->ring_size ? ch->head >= ch->ring_size || ch->tail >= ch->ring_size
                      : ch->head || ch->tail) {
        return "ring index beyond RING_SIZE";
    }
    if (ch->state >= PLDMA_STATE_RUNNING && ch->state != PLDMA_STATE_ERROR &&
        !pldma_ring_valid(ch)) {
        return "active channel with an invalid ring";
    }
    if (ch->phase != PLDMA_PHASE_FETCH && ch->done > ch->len) {
        return "more bytes done than the descriptor holds";
    }
    if (ch->nsge > PLDMA_DESC_MAX_SGE ||
        (ch->nsge && ch->phase == PLDMA_PHASE_XFER &&
         !pldma_op_remote(ch->op))) {
        return "SGE list beyond PLDMA_DESC_MAX_SGE, or on a local operation";
    }
    if (ch->phase == PLDMA_PHASE_XFER &&
        ((ch->len == 0 && !pldma_op_remote(ch->op)) ||
         ch->len > s->max_transfer ||
         !(pldma_op_flags(ch->op) & PLDMA_OPF_VALID) ||
         ch->op == PLDMA_OP_NOP)) {
        return "transfer of a bad descriptor (length beyond max-transfer)";
    }
    if (ch->state != PLDMA_STATE_DISABLED &&
        ch->phase != PLDMA_PHASE_FETCH && pldma_op_remote(ch->op)) {
        const char *why = s->link->ch_check(s, ch);

        if (why) {
            return why;
        }
    }
    return pldma_ch_check_stalls(s, ch);
}

/* The stream comes from outside: reject what the device could not reach */
static int pldma_post_load(void *opaque, int version_id)
{
    PLDMACore *s = opaque;
    const char *why;
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        PLDMAChannel *ch = &s->ch[i];

        ch->s = s;
        ch->idx = i;
        ch->stall_adopted = false;
        why = pldma_ch_check(s, ch);
        if (why) {
            error_report("pldma: migrated channel %u rejected: %s "
                         "(state %u phase %u ring %u head %u tail %u)",
                         i, why, ch->state, ch->phase, ch->ring_size,
                         ch->head, ch->tail);
            return -EINVAL;
        }
    }
    if (s->fq_size ? s->fq_size < PLDMA_FQ_MIN_ENTRIES ||
                     s->fq_size > PLDMA_FQ_MAX_ENTRIES ||
                     !is_power_of_2(s->fq_size) ||
                     s->fq_head >= s->fq_size || s->fq_tail >= s->fq_size
                   : s->fq_head || s->fq_tail ||
                     (s->fq_ctrl & PLDMA_FQ_CTRL_ENABLE)) {
        error_report("pldma: migrated fault queue rejected (size %u head %u "
                     "tail %u)", s->fq_size, s->fq_head, s->fq_tail);
        return -EINVAL;
    }
    if (s->fq_ctrl & ~PLDMA_FQ_CTRL_ENABLE || s->rr >= s->num_channels) {
        error_report("pldma: migrated control state rejected");
        return -EINVAL;
    }
    s->xlat = NULL;
    s->busy = false;
    s->inline_bytes = PLDMA_INLINE_BUDGET;
    s->inline_descs = PLDMA_INLINE_DESCS;
    s->inline_runs = PLDMA_INLINE_RUNS;
    pldma_schedule(s);
    return 0;
}

static bool pldma_probes_needed(void *opaque)
{
    PLDMAChannel *ch = opaque;

    return ch->nprobes || ch->probe_aborted;
}

/* Outstanding stalls ahead of the parked access (max-outstanding) */
static const VMStateDescription vmstate_pldma_probes = {
    .name = "pldma/channel/outstanding",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_probes_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(probe_aborted, PLDMAChannel),
        VMSTATE_UINT8(nprobes, PLDMAChannel),
        VMSTATE_UINT16_ARRAY(probe_stag, PLDMAChannel,
                             PLDMA_MAX_OUTSTANDING - 1),
        VMSTATE_UINT64_ARRAY(probe_va, PLDMAChannel,
                             PLDMA_MAX_OUTSTANDING - 1),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_orphans_needed(void *opaque)
{
    PLDMAChannel *ch = opaque;

    return ch->norphans;
}

/* Stalls the channel stopped waiting for, still held by the SMMU */
static const VMStateDescription vmstate_pldma_orphans = {
    .name = "pldma/channel/orphans",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_orphans_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(norphans, PLDMAChannel),
        VMSTATE_UINT16_ARRAY(orphan_stag, PLDMAChannel,
                             PLDMA_MAX_OUTSTANDING),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_ahead_needed(void *opaque)
{
    PLDMAChannel *ch = opaque;

    return ch->ahead || ch->ahead_src_map || ch->ahead_dst_map ||
           ch->cnt_ahead;
}

/* Batched faults: the descriptor's window and the last fault's pages */
static const VMStateDescription vmstate_pldma_ahead = {
    .name = "pldma/channel/ahead",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_ahead_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(ahead, PLDMAChannel),
        VMSTATE_UINT64(ahead_src, PLDMAChannel),
        VMSTATE_UINT64(ahead_src_map, PLDMAChannel),
        VMSTATE_UINT64(ahead_dst, PLDMAChannel),
        VMSTATE_UINT64(ahead_dst_map, PLDMAChannel),
        VMSTATE_UINT32(cnt_ahead, PLDMAChannel),
        VMSTATE_END_OF_LIST()
    }
};

static bool pldma_sgl_needed(void *opaque)
{
    PLDMAChannel *ch = opaque;

    return ch->nsge;
}

/* The descriptor in flight lists its local buffers (NUM_SGE) */
static const VMStateDescription vmstate_pldma_sgl = {
    .name = "pldma/channel/sgl",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_sgl_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(nsge, PLDMAChannel),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_pldma_channel = {
    .name = "pldma/channel",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(pasid_reg, PLDMAChannel),
        VMSTATE_UINT32(ctrl, PLDMAChannel),
        VMSTATE_UINT32(owner, PLDMAChannel),
        VMSTATE_UINT64(ring_base, PLDMAChannel),
        VMSTATE_UINT32(ring_size, PLDMAChannel),
        VMSTATE_UINT32(head, PLDMAChannel),
        VMSTATE_UINT32(tail, PLDMAChannel),
        VMSTATE_UINT32(state, PLDMAChannel),
        VMSTATE_UINT32(error, PLDMAChannel),
        VMSTATE_UINT32(completed, PLDMAChannel),
        VMSTATE_UINT32(last_status, PLDMAChannel),
        VMSTATE_UINT64(fault_va, PLDMAChannel),
        VMSTATE_UINT32(fault_info, PLDMAChannel),
        VMSTATE_UINT32(fault_desc, PLDMAChannel),
        VMSTATE_UINT32(fault_done, PLDMAChannel),
        VMSTATE_UINT32(phase, PLDMAChannel),
        VMSTATE_UINT8(op, PLDMAChannel),
        VMSTATE_UINT8(dflags, PLDMAChannel),
        VMSTATE_UINT32(len, PLDMAChannel),
        VMSTATE_UINT64(src, PLDMAChannel),
        VMSTATE_UINT64(dst, PLDMAChannel),
        VMSTATE_UINT64(pattern, PLDMAChannel),
        VMSTATE_UINT64(compl_va, PLDMAChannel),
        VMSTATE_UINT64(cookie, PLDMAChannel),
        VMSTATE_UINT64(done, PLDMAChannel),
        VMSTATE_UINT32(cstatus, PLDMAChannel),
        VMSTATE_UINT32(cflags, PLDMAChannel),
        VMSTATE_UINT64(cfault_va, PLDMAChannel),
        VMSTATE_BOOL(stall_pending, PLDMAChannel),
        VMSTATE_UINT16(stag, PLDMAChannel),
        VMSTATE_UINT64(cnt_bytes, PLDMAChannel),
        VMSTATE_UINT32(cnt_descs, PLDMAChannel),
        VMSTATE_UINT32(cnt_stalls, PLDMAChannel),
        VMSTATE_UINT32(cnt_faults, PLDMAChannel),
        VMSTATE_UINT32(cnt_restarts, PLDMAChannel),
        VMSTATE_UINT32(cnt_aborts, PLDMAChannel),
        VMSTATE_UINT32(cnt_cancels, PLDMAChannel),
        VMSTATE_UINT32(cnt_errors, PLDMAChannel),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_pldma_probes,
        &vmstate_pldma_ahead,
        &vmstate_pldma_orphans,
        &vmstate_pldma_channel_timing,
        &vmstate_pldma_sgl,
        NULL
    }
};

const VMStateDescription vmstate_pldma_core = {
    .name = "pldma-core",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = pldma_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(irq_status, PLDMACore),
        VMSTATE_UINT32(irq_mask, PLDMACore),
        VMSTATE_UINT64(fq_base, PLDMACore),
        VMSTATE_UINT32(fq_size, PLDMACore),
        VMSTATE_UINT32(fq_head, PLDMACore),
        VMSTATE_UINT32(fq_tail, PLDMACore),
        VMSTATE_UINT32(fq_ctrl, PLDMACore),
        VMSTATE_UINT32(fq_status, PLDMACore),
        VMSTATE_UINT32(fq_overflows, PLDMACore),
        VMSTATE_UINT32(fault_seq, PLDMACore),
        VMSTATE_UINT32(rr, PLDMACore),
        VMSTATE_STRUCT_ARRAY(ch, PLDMACore, PLDMA_MAX_CHANNELS, 1,
                             vmstate_pldma_channel, PLDMAChannel),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_pldma_timing,
        &vmstate_pldma_link,    /* last: checked against the above */
        NULL
    }
};

/* Class properties of both front-ends; @core_offset locates the engine */
void pldma_core_class_init(ObjectClass *klass, ptrdiff_t core_offset)
{
    object_class_property_add(klass, "channels", "PldmaChannelInfo-list",
                              pldma_get_channels, NULL, NULL,
                              (void *)core_offset);
    object_class_property_set_description(klass, "channels",
        "read-only: state and counters of each channel");
    object_class_property_set_description(klass, "num-channels",
        "number of channels, 1..16 (one 4 KiB user page each)");
    object_class_property_set_description(klass, "pasid-bits",
        "PASID width advertised to the guest, in bits, 0..20");
    object_class_property_set_description(klass, "max-transfer",
        "largest descriptor length in bytes");
    object_class_property_set_description(klass, "chunk-size",
        "bytes a channel moves per scheduling turn, 4 KiB..64 MiB");
    object_class_property_set_description(klass, "max-outstanding",
        "stalled accesses a channel may have at once (stall mode), 1..64");
    object_class_property_set_description(klass, "node-id",
        "node number on the RDMA link, 1..63 (required with netdev=)");
    object_class_property_set_description(klass, "num-qps",
        "number of RC queue pairs with a link, 1..64");
    object_class_property_set_description(klass, "num-cqs",
        "number of completion queues with a link, 1..64");
    object_class_property_set_description(klass, "num-srqs",
        "number of shared receive queues with a link, 0..64");
    object_class_property_set_description(klass, "mtu",
        "RDMA payload bytes per segment, power of 2, 256..4096, "
        "the same on every node");
    object_class_property_set_description(klass, "resp-fault-timeout",
        "milliseconds (virtual clock) a reported responder fault waits for "
        "its answer before the message is NAKed, 0 = no bound");
    object_class_property_set_description(klass, "retransmit-timeout",
        "RDMA retransmit timeout in microseconds (virtual clock) of a QP "
        "whose ACK timeout is 0, 1..10000000");
    object_class_property_set_description(klass, "rnr-resume",
        "responder tells the requester to resend as soon as a fault "
        "is resolved (on/off)");
    object_class_property_set_description(klass, "park-send",
        "hold SEND segments behind a receive buffer's fault too (default "
        "off: Linux rxe's requester can lose the completion of a SEND "
        "acknowledged while it resends it after an RNR NAK)");
    object_class_property_set_description(klass, "park-size",
        "bytes of WRITE and SEND segments the responder holds behind its "
        "faults, to apply when they are resolved (0: none, dropped and "
        "resent)");
    pldma_timing_class_init(klass);
    object_class_property_set_description(klass, "x-drop-every",
        "test knob: drop 1 sent frame in N at random (0: never)");
    object_class_property_set_description(klass, "x-dup-every",
        "test knob: send 1 frame in N twice at random (0: never)");
    object_class_property_set_description(klass, "x-reorder-every",
        "test knob: hold 1 frame in N behind the next (0: never)");
}
