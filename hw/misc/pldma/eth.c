/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, Ethernet function
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A RoCE NIC is an Ethernet NIC: the link that carries PLDMA's RoCEv2
 * frames (net.c) also carries whatever else the guest sends, ARP and IP
 * first, so the guest resolves a peer's MAC with ARP and runs TCP (and
 * rdma_cm) over the same port, as on a ConnectX.  net.c's receive handler
 * hands every frame that is not RoCEv2 for this node to pldma_eth_rx();
 * the transmit ring's frames go out on the same NIC.
 *
 * Two rings of 16-byte descriptors (address, length, status) in memory
 * the driver allocates for DMA without PASID, as the fault queue; the
 * device writes each descriptor back (length, then status) and moves its
 * HEAD.  The link never waits for the guest: a frame that finds no
 * receive buffer is dropped and counted, and the transmit ring keeps at
 * most one frame in the net layer's queue (QEMU's flow control: nothing
 * more is sent until that frame's sent callback).  See
 * docs/specs/pldma.rst, "Ethernet function".
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "migration/vmstate.h"
#include "net/eth.h"
#include "net-internal.h"
#include "trace.h"

/* TX descriptors sent per bottom half run, before the next one */
#define PLDMA_ETH_TX_BUDGET     64

static const char *ring_name(bool tx)
{
    return tx ? "tx" : "rx";
}

static void eth_cnt(PLDMACore *s, unsigned i, uint32_t n)
{
    s->net->eth.cnt[i] += n;
}

static bool pldma_eth_link(PLDMACore *s)
{
    return s->nic && !qemu_get_queue(s->nic)->link_down;
}

/* IRQ_ETH is set while ETH_EVENTS & ETH_EVENT_MASK is not 0 */
void pldma_eth_irq_sync(PLDMACore *s)
{
    s->irq_status &= ~PLDMA_IRQ_ETH;
    if (s->net->eth.events & s->net->eth.event_mask) {
        s->irq_status |= PLDMA_IRQ_ETH;
    }
}

static void pldma_eth_event(PLDMACore *s, uint32_t ev)
{
    if ((s->net->eth.events & ev) != ev) {
        s->net->eth.events |= ev;
        trace_pldma_eth_event(s->net->eth.events, s->net->eth.event_mask);
    }
    pldma_eth_irq_sync(s);
}

static bool pldma_eth_ring_valid(const PLDMAEthRing *r)
{
    return r->size >= PLDMA_ETH_RING_MIN && r->size <= PLDMA_ETH_RING_MAX &&
           is_power_of_2(r->size) &&
           QEMU_IS_ALIGNED(r->base, PLDMA_ETH_DESC_SIZE) &&
           r->head < r->size && r->tail < r->size;
}

/* A ring whose descriptor cannot be read or written back stops */
static void pldma_eth_ring_error(PLDMACore *s, bool tx, uint64_t addr)
{
    PLDMAEthRing *r = tx ? &s->net->eth.tx : &s->net->eth.rx;

    PLDMA_GUEST_ERR(pldma_err_eth_ring_stopped,
                    "eth %s ring stopped at descriptor %u (0x%" PRIx64 ")",
                    ring_name(tx), r->head, addr);
    trace_pldma_eth_ring_error(ring_name(tx), r->head, addr);
    s->net->eth.ctrl &= ~(tx ? PLDMA_ETH_CTRL_TX_EN : PLDMA_ETH_CTRL_RX_EN);
    s->net->eth.status |= tx ? PLDMA_ETH_STATUS_TX_ERR
                             : PLDMA_ETH_STATUS_RX_ERR;
    trace_pldma_eth_ctrl(s->net->eth.ctrl, s->net->eth.status);
    pldma_eth_event(s, PLDMA_ETH_EV_ERROR);
}

/*
 * Write descriptor @r->head back (LEN, then STATUS) and move HEAD; false
 * (the ring stopped) if the descriptor is not writable
 */
static bool pldma_eth_complete(PLDMACore *s, bool tx, uint32_t len,
                               uint32_t st)
{
    PLDMAEthRing *r = tx ? &s->net->eth.tx : &s->net->eth.rx;
    uint64_t d = r->base + (uint64_t)r->head * PLDMA_ETH_DESC_SIZE;
    uint8_t b[4];
    uint64_t fva;

    stl_le_p(b, len);
    if (pldma_rw(s, NULL, d + PLDMA_ETH_DESC_LEN, b, 4, true, &fva) !=
        PLDMA_ACC_OK) {
        pldma_eth_ring_error(s, tx, fva);
        return false;
    }
    stl_le_p(b, st);
    if (pldma_rw(s, NULL, d + PLDMA_ETH_DESC_STATUS, b, 4, true, &fva) !=
        PLDMA_ACC_OK) {
        pldma_eth_ring_error(s, tx, fva);
        return false;
    }
    if (tx) {
        trace_pldma_eth_tx(r->head, len, st);
    } else {
        trace_pldma_eth_rx(r->head, len, st);
    }
    r->head = (r->head + 1) & (r->size - 1);
    if (st != PLDMA_ETH_ST_OK) {
        eth_cnt(s, tx ? PLDMA_ETH_CNT_TX_ERRORS : PLDMA_ETH_CNT_RX_ERRORS, 1);
    }
    pldma_eth_event(s, tx ? PLDMA_ETH_EV_TX : PLDMA_ETH_EV_RX);
    return true;
}

/* Read descriptor @r->head: its buffer and length; false if unreadable */
static bool pldma_eth_fetch(PLDMACore *s, bool tx, uint64_t *addr,
                            uint32_t *len)
{
    PLDMAEthRing *r = tx ? &s->net->eth.tx : &s->net->eth.rx;
    uint64_t d = r->base + (uint64_t)r->head * PLDMA_ETH_DESC_SIZE;
    uint8_t b[PLDMA_ETH_DESC_SIZE];
    uint64_t fva;

    if (pldma_rw(s, NULL, d, b, sizeof(b), false, &fva) != PLDMA_ACC_OK) {
        pldma_eth_ring_error(s, tx, fva);
        return false;
    }
    *addr = ldq_le_p(b + PLDMA_ETH_DESC_ADDR);
    *len = ldl_le_p(b + PLDMA_ETH_DESC_LEN);
    return true;
}

/* ---- receive ---- */

/*
 * RoCEv2 for this node: IPv4, UDP to port 4791 and to NET_IP.  Everything
 * else is the Ethernet
 * function's, malformed RoCEv2 for this node is net.c's to drop and count.
 */
static bool pldma_eth_is_roce(PLDMACore *s, const uint8_t *f, size_t size)
{
    const uint8_t *ip = f + ETH_HLEN;
    size_t ihl;
    uint32_t dst;

    if (size < ETH_HLEN + 20 || lduw_be_p(f + 12) != ETH_P_IP ||
        (ip[0] >> 4) != 4 || ip[9] != IP_PROTO_UDP) {
        return false;
    }
    ihl = (ip[0] & 0xf) * 4;
    if (ihl < 20 || size < ETH_HLEN + ihl + 4 ||
        (lduw_be_p(ip + 6) & IP_OFFMASK)) {
        return false;           /* a later fragment has no UDP header */
    }
    dst = ldl_be_p(ip + 16);
    if (dst != s->net->net_ip) {
        return false;
    }
    return lduw_be_p(ip + ihl + 2) == ROCE_UDP_PORT;
}

/*
 * A frame from the link (net.c's receive handler, outside channel runs):
 * false if it is not the Ethernet function's (RoCEv2 for this node, or
 * the receive ring is off), else consumed, delivered or dropped and counted
 */
bool pldma_eth_rx(PLDMACore *s, const uint8_t *f, size_t size)
{
    if (!(s->net->eth.ctrl & PLDMA_ETH_CTRL_RX_EN) ||
        pldma_eth_is_roce(s, f, size)) {
        return false;
    }
    pldma_eth_deliver(s, f, size);
    return true;
}

/*
 * Deliver a frame of the Ethernet function's (pldma_eth_rx(), or a RoCEv2
 * UD datagram from net.c) to the receive ring, or drop and count it
 */
void pldma_eth_deliver(PLDMACore *s, const uint8_t *f, size_t size)
{
    PLDMAEthRing *r = &s->net->eth.rx;
    uint64_t addr, fva;
    uint32_t blen, st;

    if (!(s->net->eth.ctrl & PLDMA_ETH_CTRL_RX_EN)) {
        pldma_net_cnt(s, PLDMA_NCNT_RX_DROPPED);
        trace_pldma_eth_rx_drop("receive ring off", size);
        return;
    }
    if (size < PLDMA_ETH_FRAME_MIN) {
        eth_cnt(s, PLDMA_ETH_CNT_RX_RUNT, 1);
        trace_pldma_eth_rx_drop("runt", size);
        return;
    }
    if (!(s->net->eth.ctrl & PLDMA_ETH_CTRL_PROMISC) && !(f[0] & 1) &&
        memcmp(f, s->conf->macaddr.a, ETH_ALEN)) {
        eth_cnt(s, PLDMA_ETH_CNT_RX_FILTERED, 1);
        trace_pldma_eth_rx_drop("filtered", size);
        return;
    }
    if (r->head == r->tail) {
        eth_cnt(s, PLDMA_ETH_CNT_RX_NO_BUF, 1);
        trace_pldma_eth_rx_drop("no buffer", size);
        return;
    }
    if (pldma_eth_fetch(s, false, &addr, &blen)) {
        if (size > blen || size > PLDMA_ETH_FRAME_MAX) {
            PLDMA_GUEST_ERR(pldma_err_eth_rx_too_long,
                            "eth rx: a %zu-byte frame does not fit descriptor "
                            "%u (%u bytes)", size, r->head, blen);
            st = PLDMA_ETH_ST_BAD_LEN;
        } else if (pldma_rw(s, NULL, addr, (void *)f, size, true, &fva) !=
                   PLDMA_ACC_OK) {
            PLDMA_GUEST_ERR(pldma_err_eth_rx_dma,
                            "eth rx: buffer write at 0x%" PRIx64 " failed",
                            fva);
            st = PLDMA_ETH_ST_DMA_ERROR;
        } else {
            st = PLDMA_ETH_ST_OK;
        }
        if (pldma_eth_complete(s, false, size, st) && st == PLDMA_ETH_ST_OK) {
            eth_cnt(s, PLDMA_ETH_CNT_RX_FRAMES, 1);
            eth_cnt(s, PLDMA_ETH_CNT_RX_BYTES, size);
        }
    }
    pldma_update_irq(s);
}

/* ---- transmit ---- */

static void pldma_eth_sent(NetClientState *nc, ssize_t len)
{
    PLDMACore *s = qemu_get_nic_opaque(nc);

    trace_pldma_eth_tx_resumed(len);
    s->net->eth.tx_blocked = false;
    qemu_bh_schedule(s->net->eth.tx_bh);
}

static bool pldma_eth_tx_ready(PLDMACore *s)
{
    return s->nic && s->vm_running && !s->net->eth.tx_blocked &&
           (s->net->eth.ctrl & PLDMA_ETH_CTRL_TX_EN) &&
           s->net->eth.tx.head != s->net->eth.tx.tail;
}

/* Send what the transmit ring holds, PLDMA_ETH_TX_BUDGET frames a run */
static void pldma_eth_tx_bh(void *opaque)
{
    PLDMACore *s = opaque;
    uint32_t n;

    for (n = 0; n < PLDMA_ETH_TX_BUDGET && pldma_eth_tx_ready(s); n++) {
        uint64_t addr, fva;
        uint32_t len, st, icrc;
        bool send = false;

        if (!pldma_eth_fetch(s, true, &addr, &len)) {
            break;
        }
        icrc = len & PLDMA_ETH_TX_ICRC;
        len &= ~PLDMA_ETH_TX_ICRC;
        if (len < PLDMA_ETH_FRAME_MIN || len > PLDMA_ETH_FRAME_MAX) {
            PLDMA_GUEST_ERR(pldma_err_eth_tx_length,
                            "eth tx: descriptor %u: length %u",
                            s->net->eth.tx.head, len);
            st = PLDMA_ETH_ST_BAD_LEN;
        } else if (pldma_rw(s, NULL, addr, s->net->eth.buf, len, false, &fva) !=
                   PLDMA_ACC_OK) {
            PLDMA_GUEST_ERR(pldma_err_eth_tx_dma,
                            "eth tx: buffer read at 0x%" PRIx64 " failed",
                            fva);
            st = PLDMA_ETH_ST_DMA_ERROR;
        } else if (icrc && !pldma_hdr_icrc_fill(s->net->eth.buf, len)) {
            PLDMA_GUEST_ERR(pldma_err_eth_tx_not_roce,
                            "eth tx: descriptor %u: ICRC asked for a frame "
                            "that is not RoCEv2", s->net->eth.tx.head);
            st = PLDMA_ETH_ST_NOT_ROCE;
        } else {
            st = PLDMA_ETH_ST_OK;
            send = true;
        }
        /*
         * The frame is in s->net->eth.buf: complete the descriptor before the
         * net layer may deliver it (to a peer in this process) and call
         * back into us
         */
        if (!pldma_eth_complete(s, true, len, st)) {
            break;
        }
        if (send) {
            eth_cnt(s, PLDMA_ETH_CNT_TX_FRAMES, 1);
            eth_cnt(s, PLDMA_ETH_CNT_TX_BYTES, len);
            if (!qemu_send_packet_async(qemu_get_queue(s->nic), s->net->eth.buf,
                                        len, pldma_eth_sent)) {
                /* queued (and copied) by the net layer: wait for it */
                trace_pldma_eth_tx_blocked(len);
                s->net->eth.tx_blocked = true;
            }
        }
    }
    if (pldma_eth_tx_ready(s)) {
        qemu_bh_schedule(s->net->eth.tx_bh);
    }
    pldma_update_irq(s);
}

/* ---- link ---- */

void pldma_eth_link_changed(NetClientState *nc)
{
    PLDMACore *s = qemu_get_nic_opaque(nc);
    bool up = pldma_eth_link(s);

    if (up != s->net->eth.link_up) {
        trace_pldma_eth_link(up);
        s->net->eth.link_up = up;
        pldma_eth_event(s, PLDMA_ETH_EV_LINK);
        pldma_update_irq(s);
    }
}

void pldma_eth_vm_running(PLDMACore *s)
{
    if (s->net->eth.tx_bh) {
        qemu_bh_schedule(s->net->eth.tx_bh);
    }
}

/* ---- registers ---- */

static bool pldma_eth_ring_read(PLDMAEthRing *r, hwaddr off, uint64_t *val)
{
    switch (off) {
    case PLDMA_ETH_RX_BASE_LO - PLDMA_ETH_RX_BASE_LO:
        *val = (uint32_t)r->base;
        return true;
    case PLDMA_ETH_RX_BASE_HI - PLDMA_ETH_RX_BASE_LO:
        *val = r->base >> 32;
        return true;
    case PLDMA_ETH_RX_SIZE - PLDMA_ETH_RX_BASE_LO:
        *val = r->size;
        return true;
    case PLDMA_ETH_RX_HEAD - PLDMA_ETH_RX_BASE_LO:
        *val = r->head;
        return true;
    case PLDMA_ETH_RX_TAIL - PLDMA_ETH_RX_BASE_LO:
        *val = r->tail;
        return true;
    default:
        return false;
    }
}

bool pldma_eth_read(PLDMACore *s, hwaddr addr, uint64_t *val)
{
    if (!s->nic || addr < PLDMA_ETH_CTRL || addr >= PLDMA_ETH_CNT(40)) {
        return false;
    }
    if (addr >= PLDMA_ETH_CNT(0)) {
        if (addr >= PLDMA_ETH_CNT(PLDMA_ETH_CNT_NUM)) {
            return false;
        }
        *val = s->net->eth.cnt[(addr - PLDMA_ETH_CNT(0)) / 4];
        return true;
    }
    if (addr >= PLDMA_ETH_RX_BASE_LO && addr <= PLDMA_ETH_RX_TAIL) {
        return pldma_eth_ring_read(&s->net->eth.rx, addr - PLDMA_ETH_RX_BASE_LO,
                                   val);
    }
    if (addr >= PLDMA_ETH_TX_BASE_LO && addr <= PLDMA_ETH_TX_TAIL) {
        return pldma_eth_ring_read(&s->net->eth.tx, addr - PLDMA_ETH_TX_BASE_LO,
                                   val);
    }
    switch (addr) {
    case PLDMA_ETH_CTRL:
        *val = s->net->eth.ctrl;
        return true;
    case PLDMA_ETH_STATUS:
        *val = s->net->eth.status |
               (pldma_eth_link(s) ? PLDMA_ETH_STATUS_LINK : 0);
        return true;
    case PLDMA_ETH_EVENTS:
        *val = s->net->eth.events;
        return true;
    case PLDMA_ETH_EVENT_MASK:
        *val = s->net->eth.event_mask;
        return true;
    case PLDMA_ETH_MAX_FRAME:
        *val = PLDMA_ETH_FRAME_MAX;
        return true;
    default:
        return false;
    }
}

/* Everything but the link and the net layer's hold on a frame */
static void pldma_eth_clear(PLDMACore *s)
{
    s->net->eth.ctrl = 0;
    s->net->eth.status = 0;
    s->net->eth.events = 0;
    s->net->eth.event_mask = 0;
    memset(&s->net->eth.rx, 0, sizeof(s->net->eth.rx));
    memset(&s->net->eth.tx, 0, sizeof(s->net->eth.tx));
    memset(s->net->eth.cnt, 0, sizeof(s->net->eth.cnt));
    s->net->eth.link_up = pldma_eth_link(s);
    pldma_eth_irq_sync(s);
}

static void pldma_eth_ctrl(PLDMACore *s, uint32_t val)
{
    static const uint32_t en[2] = { PLDMA_ETH_CTRL_RX_EN,
                                    PLDMA_ETH_CTRL_TX_EN };
    static const uint32_t err[2] = { PLDMA_ETH_STATUS_RX_ERR,
                                     PLDMA_ETH_STATUS_TX_ERR };
    unsigned tx;

    if (val & PLDMA_ETH_CTRL_RESET) {
        trace_pldma_eth_reset();
        pldma_eth_clear(s);
        return;
    }
    val &= PLDMA_ETH_CTRL_RX_EN | PLDMA_ETH_CTRL_TX_EN |
           PLDMA_ETH_CTRL_PROMISC;
    for (tx = 0; tx < 2; tx++) {
        PLDMAEthRing *r = tx ? &s->net->eth.tx : &s->net->eth.rx;

        if (!(val & en[tx]) || (s->net->eth.ctrl & en[tx])) {
            continue;
        }
        /* enabling a ring: a new start, its last error forgotten */
        s->net->eth.status &= ~err[tx];
        if (!pldma_eth_ring_valid(r)) {
            PLDMA_GUEST_ERR(pldma_err_eth_ring_cfg,
                            "eth %s ring enabled with base 0x%" PRIx64
                            " size %u", ring_name(tx), r->base, r->size);
            val &= ~en[tx];
            s->net->eth.status |= err[tx];
            pldma_eth_event(s, PLDMA_ETH_EV_ERROR);
        }
    }
    s->net->eth.ctrl = val;
    trace_pldma_eth_ctrl(s->net->eth.ctrl, s->net->eth.status);
    qemu_bh_schedule(s->net->eth.tx_bh);
}

static void pldma_eth_ring_write(PLDMACore *s, bool tx, hwaddr off,
                                 uint32_t val)
{
    PLDMAEthRing *r = tx ? &s->net->eth.tx : &s->net->eth.rx;
    uint32_t en = tx ? PLDMA_ETH_CTRL_TX_EN : PLDMA_ETH_CTRL_RX_EN;

    if (off == PLDMA_ETH_RX_TAIL - PLDMA_ETH_RX_BASE_LO) {
        if (val >= r->size) {
            PLDMA_GUEST_ERR(pldma_err_eth_tail, "eth %s tail %u >= size %u",
                            ring_name(tx), val, r->size);
            if (s->net->eth.ctrl & en) {
                pldma_eth_ring_error(s, tx, r->base);
            }
            return;
        }
        r->tail = val;
        trace_pldma_eth_tail(ring_name(tx), r->tail, r->head);
        if (tx) {
            qemu_bh_schedule(s->net->eth.tx_bh);
        }
        return;
    }
    if (off == PLDMA_ETH_RX_HEAD - PLDMA_ETH_RX_BASE_LO) {
        PLDMA_GUEST_ERR(pldma_err_eth_head_ro, "eth %s head is read-only",
                        ring_name(tx));
        return;
    }
    if (s->net->eth.ctrl & en) {
        PLDMA_GUEST_ERR(pldma_err_eth_ring_cfg_busy,
                        "eth %s ring configuration while enabled ignored",
                        ring_name(tx));
        return;
    }
    switch (off) {
    case PLDMA_ETH_RX_BASE_LO - PLDMA_ETH_RX_BASE_LO:
        r->base = deposit64(r->base, 0, 32, val);
        break;
    case PLDMA_ETH_RX_BASE_HI - PLDMA_ETH_RX_BASE_LO:
        r->base = deposit64(r->base, 32, 32, val);
        break;
    case PLDMA_ETH_RX_SIZE - PLDMA_ETH_RX_BASE_LO:
        r->size = val;
        r->head = r->tail = 0;
        break;
    default:
        g_assert_not_reached();
    }
    trace_pldma_eth_ring(ring_name(tx), r->base, r->size);
}

bool pldma_eth_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    if (!s->nic || addr < PLDMA_ETH_CTRL || addr >= PLDMA_ETH_CNT(40)) {
        return false;
    }
    if (addr >= PLDMA_ETH_RX_BASE_LO && addr <= PLDMA_ETH_RX_TAIL) {
        pldma_eth_ring_write(s, false, addr - PLDMA_ETH_RX_BASE_LO, val);
        return true;
    }
    if (addr >= PLDMA_ETH_TX_BASE_LO && addr <= PLDMA_ETH_TX_TAIL) {
        pldma_eth_ring_write(s, true, addr - PLDMA_ETH_TX_BASE_LO, val);
        return true;
    }
    switch (addr) {
    case PLDMA_ETH_CTRL:
        pldma_eth_ctrl(s, val);
        return true;
    case PLDMA_ETH_EVENTS:
        s->net->eth.events &= ~val;
        trace_pldma_eth_event(s->net->eth.events, s->net->eth.event_mask);
        pldma_eth_irq_sync(s);
        return true;
    case PLDMA_ETH_EVENT_MASK:
        s->net->eth.event_mask = val & PLDMA_ETH_EV_ALL;
        trace_pldma_eth_event(s->net->eth.events, s->net->eth.event_mask);
        pldma_eth_irq_sync(s);
        return true;
    default:
        return false;       /* read-only or undefined: core.c says so */
    }
}

/* ---- life cycle ---- */

void pldma_eth_reset(PLDMACore *s)
{
    trace_pldma_eth_reset();
    pldma_eth_clear(s);
}

void pldma_eth_realize(PLDMACore *s)
{
    s->net->eth.tx_bh = qemu_bh_new_guarded(pldma_eth_tx_bh, s,
                                            &s->dev->mem_reentrancy_guard);
    s->net->eth.buf = g_malloc(PLDMA_ETH_FRAME_MAX);
    pldma_eth_clear(s);
}

void pldma_eth_unrealize(PLDMACore *s)
{
    if (s->net->eth.tx_bh) {
        qemu_bh_delete(s->net->eth.tx_bh);
        s->net->eth.tx_bh = NULL;
    }
    g_free(s->net->eth.buf);
    s->net->eth.buf = NULL;
}

static bool pldma_eth_ring_loaded_ok(const PLDMAEthRing *r, bool enabled)
{
    if (!enabled) {
        return r->size == 0 || (r->head < r->size && r->tail < r->size);
    }
    return pldma_eth_ring_valid(r);
}

static int pldma_eth_post_load(void *opaque, int version_id)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;
    PLDMAEth *e = &n->eth;

    if (!pldma_eth_ring_loaded_ok(&e->rx, e->ctrl & PLDMA_ETH_CTRL_RX_EN) ||
        !pldma_eth_ring_loaded_ok(&e->tx, e->ctrl & PLDMA_ETH_CTRL_TX_EN) ||
        (e->ctrl & ~(PLDMA_ETH_CTRL_RX_EN | PLDMA_ETH_CTRL_TX_EN |
                     PLDMA_ETH_CTRL_PROMISC))) {
        error_report("pldma: migrated Ethernet function rejected (ctrl 0x%x "
                     "rx ring %u/%u/%u tx ring %u/%u/%u)", e->ctrl,
                     e->rx.size, e->rx.head, e->rx.tail,
                     e->tx.size, e->tx.head, e->tx.tail);
        return -EINVAL;
    }
    s->net->eth.event_mask &= PLDMA_ETH_EV_ALL;
    /*
     * A frame the net layer had queued for us is not migrated: dropped,
     * as a lossy Ethernet may (ARP, TCP resend); the ring goes on
     */
    s->net->eth.tx_blocked = false;
    pldma_eth_irq_sync(s);
    qemu_bh_schedule(s->net->eth.tx_bh);
    return 0;
}

static bool pldma_eth_needed(void *opaque)
{
    PLDMANet *n = opaque;
    PLDMACore *s = n->s;

    return s->nic != NULL;
}

const VMStateDescription vmstate_pldma_eth = {
    .name = "pldma-net/eth",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pldma_eth_needed,
    .post_load = pldma_eth_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(eth.ctrl, PLDMANet),
        VMSTATE_UINT32(eth.status, PLDMANet),
        VMSTATE_UINT32(eth.events, PLDMANet),
        VMSTATE_UINT32(eth.event_mask, PLDMANet),
        VMSTATE_BOOL(eth.link_up, PLDMANet),
        VMSTATE_UINT64(eth.rx.base, PLDMANet),
        VMSTATE_UINT32(eth.rx.size, PLDMANet),
        VMSTATE_UINT32(eth.rx.head, PLDMANet),
        VMSTATE_UINT32(eth.rx.tail, PLDMANet),
        VMSTATE_UINT64(eth.tx.base, PLDMANet),
        VMSTATE_UINT32(eth.tx.size, PLDMANet),
        VMSTATE_UINT32(eth.tx.head, PLDMANet),
        VMSTATE_UINT32(eth.tx.tail, PLDMANet),
        VMSTATE_UINT32_ARRAY(eth.cnt, PLDMANet, PLDMA_ETH_CNT_NUM),
        VMSTATE_END_OF_LIST()
    },
};
