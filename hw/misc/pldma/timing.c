/*
 * PLDMA: the engine's timing model
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Off by default (property timing=off): the engine then moves data at host
 * memmove() speed and a descriptor completes as soon as the bottom half
 * gets to it.  With timing=on, every channel keeps the QEMU_CLOCK_VIRTUAL
 * time at which the work it has done so far ends (tm_ready), and does its
 * next step (fetch, a chunk of data, the completion record) only when that
 * time has come, from a timer of its own.  So a descriptor's completion
 * record and interrupt appear when its modeled time has passed, and a
 * guest on -icount sees the modeled time on its own clock.
 *
 * What a step costs (docs/specs/pldma.rst, "Timing model"):
 *  - a descriptor: desc-latency-ns (its fetch, the completion record's
 *    write, the interrupt: PCIe round trips, not bandwidth);
 *  - data: bytes / dma-bandwidth, exact over any chunking (the remainder
 *    is carried in tm_rem);
 *  - a translation (one per page of a translated engine, and per ring or
 *    record access): xlat-latency-ns, plus walk-latency-ns when the page
 *    misses the device's translation cache (an LRU of atc-entries pages,
 *    keyed by PASID and page, filled by successful translations).  Up to
 *    xlat-ahead of them are in flight ahead of the data (ATS allows many
 *    outstanding translation requests, an SMMU many walks): a channel's
 *    translations go out, in order, as soon as its addresses are known
 *    (the descriptor fetched, the channel started or resumed after a
 *    fault), each when the data has got to the one xlat-ahead before it,
 *    and the data waits only for a translation not yet back (0: each
 *    translation when the data gets to it, one after another);
 *  - a fault: fault-latency-ns, the stall/event round trip inside the SMMU
 *    (event record, MSI; and the retried access after CMD_RESUME or
 *    RESTART), charged when the channel goes on.  The guest's own fault
 *    handling costs what its instructions cost on -icount.
 *
 *  - remote DMA: a WRITE or SEND segment's payload costs its DMA read;
 *    then every frame takes the link (pldma_timing_wire(): its turn on the
 *    port's transmitter, its bits at link-bandwidth, link-latency-ns) and
 *    net.c hands it on at its arrival time.
 *
 * A channel's time is rebased to "now" only when the guest starts it (a
 * doorbell on an idle channel), when it goes on after a fault (both in a
 * vCPU's MMIO access, at an exact instruction count under -icount), and
 * when a remote step starts at an instant the network decided (a timer).
 * Every other step happens at a timer deadline the model computed, and
 * the bottom half's work runs from a timer due at once (pldma_schedule()),
 * so that the modeled times do not depend on when the host ran the
 * bottom half.
 *
 * Defaults: a DMA engine behind a PCIe Gen4 x16 link (PCI Express Base
 * Specification 4.0: 16 GT/s per lane, 128b/130b, 31.5 GB/s per direction
 * before TLP overhead; 256-byte payloads with 4-DW headers leave ~28.6
 * GB/s, and 25 GB/s allows for DLLPs and read-completion splitting), with
 * PCIe read round trips and IOTLB misses of the order measured by
 * pcie-bench (Neugebauer et al., "Understanding PCIe performance for end
 * host networking", SIGCOMM 2018): see docs/specs/pldma.rst.
 */

#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "migration/vmstate.h"
#include "pldma-internal.h"
#include "trace.h"

static bool pldma_timing_is_ch(PLDMACore *s, PLDMAChannel *ch)
{
    return ch >= s->ch && ch < s->ch + PLDMA_MAX_CHANNELS;
}

/*
 * From the channel's time on, the addresses of its next translations are
 * known: they may go out, xlat-ahead at once.  (Translations prefetched
 * before a fault are dropped with it: the faulting one was first.)
 */
static void pldma_timing_known(PLDMAChannel *ch)
{
    ch->tm_xl_base = ch->tm_ready;
    ch->tm_xl_n = 0;
    trace_pldma_timing_known(ch->idx, ch->tm_xl_base);
}

static void pldma_timing_expired(void *opaque)
{
    PLDMAChannel *ch = opaque;

    trace_pldma_timing_expired(ch->idx, ch->tm_ready);
    pldma_run_timed(ch->s);
}

static void pldma_timing_kicked(void *opaque)
{
    PLDMACore *s = opaque;

    trace_pldma_timing_kick(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    pldma_run_timed(s);
}

/*
 * The engine has work to do now (a channel woken by the network, a READ
 * response to send, the rest of a turn).  Without the model, the bottom
 * half does it when the main loop gets to it.  With the model, a virtual-
 * clock timer due at this instant does: the bottom half's run time, and
 * so the virtual time it would see, depends on the host, while an expired
 * timer holds an -icount vCPU until it has run.
 */
void pldma_schedule(PLDMACore *s)
{
    if (s->tm.kick) {
        timer_mod_anticipate(s->tm.kick, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    } else {
        qemu_bh_schedule(s->bh);
    }
}

bool pldma_timing_realize(PLDMACore *s, Error **errp)
{
    PLDMATiming *tm = &s->tm;
    uint32_t i;

    if (tm->dma_mbs == 0 || tm->link_mbits == 0) {
        error_setg(errp, "dma-bandwidth and link-bandwidth must not be 0");
        return false;
    }
    if (tm->atc_entries < 1 || tm->atc_entries > PLDMA_ATC_MAX_ENTRIES) {
        error_setg(errp, "atc-entries must be between 1 and %d",
                   PLDMA_ATC_MAX_ENTRIES);
        return false;
    }
    if (tm->xlat_ahead > PLDMA_TM_XLAT_AHEAD_MAX) {
        error_setg(errp, "xlat-ahead must be between 0 and %d",
                   PLDMA_TM_XLAT_AHEAD_MAX);
        return false;
    }
    if (!tm->on) {
        return true;
    }
    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        tm->timer[i] = timer_new_ns(QEMU_CLOCK_VIRTUAL, pldma_timing_expired,
                                    &s->ch[i]);
    }
    tm->kick = timer_new_ns(QEMU_CLOCK_VIRTUAL, pldma_timing_kicked, s);
    return true;
}

void pldma_timing_unrealize(PLDMACore *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        if (s->tm.timer[i]) {
            timer_free(s->tm.timer[i]);
            s->tm.timer[i] = NULL;
        }
    }
    if (s->tm.kick) {
        timer_free(s->tm.kick);
        s->tm.kick = NULL;
    }
}

/* Engine reset: no step is pending, the translation cache is empty */
void pldma_timing_reset(PLDMACore *s)
{
    PLDMATiming *tm = &s->tm;
    uint32_t i;

    for (i = 0; i < PLDMA_MAX_CHANNELS; i++) {
        if (tm->timer[i]) {
            timer_del(tm->timer[i]);
        }
    }
    if (tm->kick) {
        timer_del(tm->kick);
    }
    memset(tm->wire_free, 0, sizeof(tm->wire_free));
    memset(tm->wire_rem, 0, sizeof(tm->wire_rem));
    memset(tm->atc_tag, 0, sizeof(tm->atc_tag));
    memset(tm->atc_pasid, 0, sizeof(tm->atc_pasid));
    memset(tm->atc_used, 0, sizeof(tm->atc_used));
    tm->atc_clock = 0;
}

/* The guest started @ch (doorbell on an idle channel): its time is now */
void pldma_timing_start(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    int64_t now;

    if (!s->tm.on) {
        return;
    }
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    ch->tm_ready = MAX(ch->tm_ready, now);
    ch->tm_fault = false;   /* e.g. a fault that ended in ERROR, then CANCEL */
    pldma_timing_known(ch);
    trace_pldma_timing_start(ch->idx, ch->tm_ready);
    /*
     * The first step runs from the timer too, not from the bottom half:
     * an expired virtual-clock timer holds an -icount vCPU until it has
     * run, so the fetch happens at the doorbell's instant.
     */
    timer_mod(s->tm.timer[ch->idx], ch->tm_ready);
}

/*
 * May @ch take its next step now?  If not, its timer is set for the time
 * its work so far ends, and the caller stops the channel's turn.
 */
bool pldma_timing_gate(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;
    int64_t now;

    if (!s->tm.on) {
        return true;
    }
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    if (ch->tm_fault) {
        /* the channel goes on after a fault: the SMMU's round trip */
        ch->tm_fault = false;
        ch->tm_ready = MAX(ch->tm_ready, now) + s->tm.fault_ns;
        pldma_timing_known(ch);
        trace_pldma_timing_fault(ch->idx, now, ch->tm_ready);
    }
    if (ch->tm_ready <= now) {
        return true;
    }
    trace_pldma_timing_wait(ch->idx, now, ch->tm_ready);
    timer_mod(s->tm.timer[ch->idx], ch->tm_ready);
    return false;
}

/*
 * @ch goes on after a fault, from the guest's access that resolved it
 * (CMD_RESUME in the SMMU's queue, RESTART): with the model on, its next
 * step is timed from this instant, from its timer, and never from the
 * bottom half whose run time depends on the host.  Returns true if the
 * model took the channel over (pldma_run_now() then does nothing).
 */
bool pldma_timing_resume(PLDMAChannel *ch)
{
    PLDMACore *s = ch->s;

    if (!s->tm.on) {
        return false;
    }
    if (!pldma_timing_gate(ch)) {
        return true;            /* the timer is set */
    }
    /* already due: an expired timer runs it before the vCPU goes on */
    timer_mod(s->tm.timer[ch->idx], ch->tm_ready);
    return true;
}

/* Is @ch waiting for its timer (not work for the bottom half)? */
bool pldma_timing_waiting(PLDMAChannel *ch)
{
    QEMUTimer *t = ch->s->tm.timer[ch->idx];

    return ch->s->tm.on && t && timer_pending(t);
}

/* A descriptor fetched: its cost, and its addresses are known */
void pldma_timing_desc(PLDMAChannel *ch)
{
    if (ch->s->tm.on) {
        ch->tm_ready += ch->s->tm.desc_ns;
        pldma_timing_known(ch);
    }
}

void pldma_timing_bytes(PLDMAChannel *ch, uint64_t n)
{
    PLDMATiming *tm = &ch->s->tm;
    uint64_t q;

    if (!tm->on) {
        return;
    }
    /* n bytes at dma_mbs bytes/us take n * 1000 / dma_mbs ns */
    q = n * 1000 + ch->tm_rem;
    ch->tm_ready += q / tm->dma_mbs;
    ch->tm_rem = q % tm->dma_mbs;
}

/*
 * A remote operation's step starts at an instant the network decided (an
 * ACK's arrival, a timer): the channel's time is now if it was idle
 */
void pldma_timing_rebase(PLDMAChannel *ch)
{
    if (ch->s->tm.on) {
        ch->tm_ready = MAX(ch->tm_ready,
                           qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    }
}

/*
 * A frame of @len bytes, ready to go at @ready (0: now), on direction
 * @dir of the link: it goes when the transmitter is free, takes its bits
 * at link-bandwidth (with the Ethernet overhead the frame does not carry:
 * padding to the minimum frame, preamble, FCS, inter-frame gap; bits are
 * exact over frames, the remainder carried), and arrives link-latency-ns
 * after its last bit left.  Returns the arrival time.
 */
int64_t pldma_timing_wire(PLDMACore *s, unsigned int dir, int64_t ready,
                          size_t len)
{
    PLDMATiming *tm = &s->tm;
    int64_t start = MAX(MAX(ready, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)),
                        tm->wire_free[dir]);
    uint64_t bits = (MAX(len, PLDMA_TM_WIRE_MIN_FRAME) +
                     PLDMA_TM_WIRE_OVERHEAD) * 8;
    uint64_t q = bits * 1000 + tm->wire_rem[dir];

    tm->wire_free[dir] = start + q / tm->link_mbits;
    tm->wire_rem[dir] = q % tm->link_mbits;
    trace_pldma_timing_wire(dir, len, start, tm->wire_free[dir] + tm->link_ns);
    return tm->wire_free[dir] + tm->link_ns;
}

/*
 * @ch found a fault (the IOMMU reported or stalled it): the guest's time
 * from here, or from the end of the channel's modeled work if that is
 * later, to the resume that lets the channel go on is what the OS's fault
 * path costs the channel (trace pldma_timing_fault_at, then
 * pldma_timing_fault; scripts/bench splits a stall's cost with them)
 */
void pldma_timing_fault(PLDMAChannel *ch)
{
    if (ch->s->tm.on && pldma_timing_is_ch(ch->s, ch)) {
        ch->tm_fault = true;
        trace_pldma_timing_fault_at(ch->idx,
                                    qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
                                    ch->tm_ready);
    }
}

/*
 * @ch translated the page of @va (@addr_mask: its size - 1) for PASID
 * @pid: a lookup in the device's translation cache, a walk on a miss.
 */
void pldma_timing_xlat(PLDMACore *s, PLDMAChannel *ch, uint64_t va,
                       uint64_t addr_mask, uint32_t pid)
{
    PLDMATiming *tm = &s->tm;
    uint64_t tag = (va & ~addr_mask) | 1;
    uint32_t i, victim = 0, cost;
    int64_t start;
    bool hit = false;

    if (!tm->on || !ch || !pldma_timing_is_ch(s, ch)) {
        return;
    }
    tm->atc_clock++;
    for (i = 0; i < tm->atc_entries; i++) {
        if (tm->atc_tag[i] == tag && tm->atc_pasid[i] == pid) {
            hit = true;
            victim = i;
            break;
        }
        if (tm->atc_used[i] < tm->atc_used[victim]) {
            victim = i;
        }
    }
    tm->atc_tag[victim] = tag;
    tm->atc_pasid[victim] = pid;
    tm->atc_used[victim] = tm->atc_clock;
    cost = tm->xlat_ns + (hit ? 0 : tm->walk_ns);
    if (tm->xlat_ahead == 0) {
        ch->tm_ready += cost;
    } else {
        /*
         * This translation went out at the base, or when the data got to
         * the translation xlat-ahead before it, whichever is later, and
         * the data goes on when it is back
         */
        i = ch->tm_xl_n % tm->xlat_ahead;
        start = ch->tm_xl_base;
        if (ch->tm_xl_n >= tm->xlat_ahead) {
            start = MAX(start, ch->tm_xl_used[i]);
        }
        ch->tm_ready = MAX(ch->tm_ready, start + cost);
        ch->tm_xl_used[i] = ch->tm_ready;
        ch->tm_xl_n++;
    }
    trace_pldma_timing_xlat(ch->idx, va, pid, hit, ch->tm_ready);
}

static bool pldma_timing_ch_needed(void *opaque)
{
    PLDMAChannel *ch = opaque;

    return ch->tm_ready || ch->tm_rem || ch->tm_fault;
}

/*
 * How far ahead of the virtual clock a channel's modeled work may end: a
 * turn's chunk and a fault's round trip are micro- to milliseconds, so a
 * stream that puts it further holds the channel back for no work done
 */
#define PLDMA_TM_MAX_AHEAD_NS   (10 * NANOSECONDS_PER_SECOND)

static int pldma_timing_ch_post_load(void *opaque, int version_id)
{
    PLDMAChannel *ch = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    /* the remainder of a division by this device's dma-bandwidth */
    if (ch->tm_rem >= ch->s->tm.dma_mbs || ch->tm_ready < 0 ||
        ch->tm_ready > now + PLDMA_TM_MAX_AHEAD_NS) {
        error_report("pldma: ch%u: migrated timing state rejected (ready "
                     "%" PRId64 " ns, now %" PRId64 ")", ch->idx,
                     ch->tm_ready, now);
        return -EINVAL;
    }
    return 0;
}

static bool pldma_timing_xl_needed(void *opaque)
{
    PLDMAChannel *ch = opaque;

    return ch->tm_xl_base || ch->tm_xl_n;
}

static int pldma_timing_xl_post_load(void *opaque, int version_id)
{
    PLDMAChannel *ch = opaque;
    int64_t lim = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  PLDMA_TM_MAX_AHEAD_NS;
    bool bad = ch->tm_xl_base < 0 || ch->tm_xl_base > lim;
    uint32_t i;

    for (i = 0; i < PLDMA_TM_XLAT_AHEAD_MAX; i++) {
        bad |= ch->tm_xl_used[i] < 0 || ch->tm_xl_used[i] > lim;
    }
    if (bad) {
        error_report("pldma: ch%u: migrated translation times rejected",
                     ch->idx);
        return -EINVAL;
    }
    return 0;
}

/* The translations ahead of the data, so that they are back when they were */
static const VMStateDescription vmstate_pldma_channel_xlat_ahead = {
    .name = "pldma/channel/timing/xlat-ahead",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_timing_xl_needed,
    .post_load = pldma_timing_xl_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_INT64(tm_xl_base, PLDMAChannel),
        VMSTATE_UINT32(tm_xl_n, PLDMAChannel),
        VMSTATE_INT64_ARRAY(tm_xl_used, PLDMAChannel,
                            PLDMA_TM_XLAT_AHEAD_MAX),
        VMSTATE_END_OF_LIST()
    }
};

/* Timers are not migrated: post_load's bottom half sets them again */
const VMStateDescription vmstate_pldma_channel_timing = {
    .name = "pldma/channel/timing",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_timing_ch_needed,
    .post_load = pldma_timing_ch_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_INT64(tm_ready, PLDMAChannel),
        VMSTATE_UINT64(tm_rem, PLDMAChannel),
        VMSTATE_BOOL(tm_fault, PLDMAChannel),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_pldma_channel_xlat_ahead,
        NULL
    }
};

static bool pldma_timing_atc_needed(void *opaque)
{
    PLDMACore *s = opaque;

    return s->tm.on;
}

static int pldma_timing_atc_post_load(void *opaque, int version_id)
{
    PLDMACore *s = opaque;
    uint32_t i;

    for (i = 0; i < PLDMA_ATC_MAX_ENTRIES; i++) {
        if (s->tm.atc_used[i] > s->tm.atc_clock) {
            return -EINVAL;
        }
    }
    return 0;
}

/* The translation cache, so that hits and misses go on as they would */
const VMStateDescription vmstate_pldma_timing = {
    .name = "pldma-core/timing",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_timing_atc_needed,
    .post_load = pldma_timing_atc_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64_ARRAY(tm.atc_tag, PLDMACore, PLDMA_ATC_MAX_ENTRIES),
        VMSTATE_UINT32_ARRAY(tm.atc_pasid, PLDMACore, PLDMA_ATC_MAX_ENTRIES),
        VMSTATE_UINT64_ARRAY(tm.atc_used, PLDMACore, PLDMA_ATC_MAX_ENTRIES),
        VMSTATE_UINT64(tm.atc_clock, PLDMACore),
        VMSTATE_END_OF_LIST()
    }
};

void pldma_timing_class_init(ObjectClass *klass)
{
    object_class_property_set_description(klass, "timing",
        "timing model: descriptors complete after their modeled time on "
        "the virtual clock (on/off, default off)");
    object_class_property_set_description(klass, "dma-bandwidth",
        "timing model: DMA bandwidth in MB/s (10^6 bytes per second)");
    object_class_property_set_description(klass, "desc-latency-ns",
        "timing model: cost of each descriptor in ns (fetch, completion "
        "record, interrupt)");
    object_class_property_set_description(klass, "xlat-latency-ns",
        "timing model: cost of each translation (page) in ns");
    object_class_property_set_description(klass, "walk-latency-ns",
        "timing model: added cost in ns of a translation that misses the "
        "device's translation cache (ATS request and SMMU table walk)");
    object_class_property_set_description(klass, "atc-entries",
        "timing model: pages in the device's translation cache (LRU), "
        "1..256");
    object_class_property_set_description(klass, "xlat-ahead",
        "timing model: translations in flight ahead of the data, 0..32 "
        "(0: each when the data gets to its page)");
    object_class_property_set_description(klass, "fault-latency-ns",
        "timing model: stall/fault round trip inside the SMMU in ns, "
        "charged when a channel goes on after a fault");
    object_class_property_set_description(klass, "link-bandwidth",
        "timing model, remote DMA: link bandwidth in Mbit/s; frames leave "
        "one after another at this rate");
    object_class_property_set_description(klass, "link-latency-ns",
        "timing model, remote DMA: one-way latency in ns from a frame's "
        "last bit out to its arrival");
}
