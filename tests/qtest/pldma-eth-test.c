/*
 * QTest for the PLDMA's Ethernet function: the frames of the RDMA link
 * that are not RoCEv2 for the node go to a receive ring, a transmit ring's
 * frames go out on the same link
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Node 1 (no SMMU: ring and buffer addresses are guest physical) listens
 * on a -netdev stream socket; the test is the other end of the link and
 * sends and receives raw frames itself.  One test links two QEMUs.
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pldma.h"

#define PLDMA_BASE      0x0c000000ULL
#define RAM_BASE        0x40000000ULL
#define RX_RING         (RAM_BASE + 0x01000000ULL)
#define TX_RING         (RAM_BASE + 0x01010000ULL)
#define RX_BUFS         (RAM_BASE + 0x01100000ULL)
#define TX_BUFS         (RAM_BASE + 0x01200000ULL)
#define BUF_SIZE        0x800ULL        /* a 1514-byte frame fits */
#define UART_MMIO       0x09000000ULL   /* -M virt's PL011: not RAM */
#define MTU_FRAME       1514

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t peer_mac[6] = { 0x52, 0x54, 0x00, 0x4c, 0x44, 0x02 };

typedef struct Node {
    QTestState *qts;
    QPldma d;
    uint8_t mac[6];
    uint32_t rx_size, tx_size;
    uint32_t rx_tail, tx_tail;
} Node;

typedef struct Peer {
    Node n;
    int fd;
    QPldmaLink link;
} Peer;

static uint32_t ecnt(Node *n, int i)
{
    return qpldma_rd(&n->d, PLDMA_ETH_CNT(i));
}

static void desc_write(Node *n, uint64_t d, uint64_t addr, uint32_t len)
{
    uint8_t b[PLDMA_ETH_DESC_SIZE] = { 0 };

    stq_le_p(b + PLDMA_ETH_DESC_ADDR, addr);
    stl_le_p(b + PLDMA_ETH_DESC_LEN, len);
    qtest_memwrite(n->qts, d, b, sizeof(b));
}

static uint32_t desc_status(Node *n, uint64_t ring, uint32_t i, uint32_t *len)
{
    uint64_t d = ring + (uint64_t)i * PLDMA_ETH_DESC_SIZE;

    if (len) {
        *len = qtest_readl(n->qts, d + PLDMA_ETH_DESC_LEN);
    }
    return qtest_readl(n->qts, d + PLDMA_ETH_DESC_STATUS);
}

/* Configure the RX ring (@rx entries) and the TX ring (@tx entries) */
static void rings_init(Node *n, uint32_t rx, uint32_t tx)
{
    n->rx_size = rx;
    n->tx_size = tx;
    n->rx_tail = n->tx_tail = 0;
    qtest_memset(n->qts, RX_RING, 0, rx * PLDMA_ETH_DESC_SIZE);
    qtest_memset(n->qts, TX_RING, 0, tx * PLDMA_ETH_DESC_SIZE);
    qpldma_wr(&n->d, PLDMA_ETH_RX_BASE_LO, (uint32_t)RX_RING);
    qpldma_wr(&n->d, PLDMA_ETH_RX_BASE_HI, RX_RING >> 32);
    qpldma_wr(&n->d, PLDMA_ETH_RX_SIZE, rx);
    qpldma_wr(&n->d, PLDMA_ETH_TX_BASE_LO, (uint32_t)TX_RING);
    qpldma_wr(&n->d, PLDMA_ETH_TX_BASE_HI, TX_RING >> 32);
    qpldma_wr(&n->d, PLDMA_ETH_TX_SIZE, tx);
}

/* Post @count receive buffers of @len bytes (slot i: RX_BUFS + i * 2K) */
static void rx_post(Node *n, uint32_t count, uint32_t len)
{
    while (count--) {
        uint32_t i = n->rx_tail;

        desc_write(n, RX_RING + i * PLDMA_ETH_DESC_SIZE,
                   RX_BUFS + i * BUF_SIZE, len);
        n->rx_tail = (i + 1) % n->rx_size;
    }
    qpldma_wr(&n->d, PLDMA_ETH_RX_TAIL, n->rx_tail);
}

/* Post one frame (or a descriptor for @addr, @len when @f is NULL) */
static uint32_t tx_post(Node *n, const uint8_t *f, uint64_t addr,
                        uint32_t len)
{
    uint32_t i = n->tx_tail;

    if (f) {
        addr = TX_BUFS + i * BUF_SIZE;
        qtest_memwrite(n->qts, addr, f, len);
    }
    desc_write(n, TX_RING + i * PLDMA_ETH_DESC_SIZE, addr, len);
    n->tx_tail = (i + 1) % n->tx_size;
    qpldma_wr(&n->d, PLDMA_ETH_TX_TAIL, n->tx_tail);
    return i;
}

/* Post frame @f of @len bytes with PLDMA_ETH_TX_ICRC, sent as @sent bytes */
static uint32_t tx_post_icrc(Node *n, const uint8_t *f, uint32_t len,
                             uint32_t sent)
{
    uint64_t addr = TX_BUFS + n->tx_tail * BUF_SIZE;

    qtest_memwrite(n->qts, addr, f, len);
    return tx_post(n, NULL, addr, sent | PLDMA_ETH_TX_ICRC);
}

/*
 * Wait (~30 s at most: a loaded 2-core host runs the other QEMU late)
 * until register @reg reads @want
 */
static void wait_reg(Node *n, uint32_t reg, uint32_t want)
{
    int i;

    for (i = 0; i < 30000 && qpldma_rd(&n->d, reg) != want; i++) {
        g_usleep(1000);
    }
    g_assert_cmpuint(qpldma_rd(&n->d, reg), ==, want);
}

/* An Ethernet frame: @dst, @src, @type, then a pattern; returns @len */
static uint32_t eth_frame(uint8_t *f, const uint8_t *dst, const uint8_t *src,
                          uint16_t type, uint32_t len, uint8_t seed)
{
    uint32_t i;

    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    stw_be_p(f + 12, type);
    for (i = 14; i < len; i++) {
        f[i] = seed + i * 13;
    }
    return len;
}

/* An ARP request, padded to the 60-byte minimum as a NIC sends it */
static uint32_t arp_frame(uint8_t *f, const uint8_t *src, uint32_t sip,
                          uint32_t tip)
{
    memset(f, 0, 60);
    memcpy(f, bcast, 6);
    memcpy(f + 6, src, 6);
    stw_be_p(f + 12, 0x0806);
    stw_be_p(f + 14, 1);            /* Ethernet */
    stw_be_p(f + 16, 0x0800);       /* IPv4 */
    f[18] = 6;
    f[19] = 4;
    stw_be_p(f + 20, 1);            /* request */
    memcpy(f + 22, src, 6);
    stl_be_p(f + 28, sip);
    stl_be_p(f + 38, tip);
    return 60;
}

static void peer_open(Peer *pe, const char *extra)
{
    g_autofree char *net = NULL;
    Node *n = &pe->n;

    qpldma_link_init(&pe->link, "pldma-eth-XXXXXX");
    net = qpldma_link_netdev(&pe->link, true);
    memset(n, 0, sizeof(*n));
    n->qts = qtest_initf("-M virt -m 512M -nodefaults "
                         "-device pldma,id=dma0,netdev=n0,node-id=1%s "
                         "-netdev %s", extra ? extra : "", net);
    qpldma_init(&n->d, n->qts, PLDMA_BASE);
    qpldma_mac(&n->d, n->mac);
    pe->fd = qpldma_link_connect(&pe->link);
    qpldma_link_wait(n->qts);
}

static void peer_close(Peer *pe)
{
    close(pe->fd);
    qtest_quit(pe->n.qts);
    qpldma_link_cleanup(&pe->link);
}

/* Registers: capability, link, MAC as a property, ring checks */
static void test_regs(void)
{
    Peer pe;
    Node *n = &pe.n;
    uint8_t mac[6];

    peer_open(&pe, ",mac=02:00:00:aa:bb:cc");
    g_assert_true(qpldma_rd(&n->d, PLDMA_CAP) & PLDMA_CAP_ETH);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_MAX_FRAME), ==,
                     PLDMA_ETH_FRAME_MAX);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_STATUS), ==,
                     PLDMA_ETH_STATUS_LINK);
    qpldma_mac(&n->d, mac);
    g_assert_true(memcmp(mac, "\x02\x00\x00\xaa\xbb\xcc", 6) == 0);
    /* the MAC is read-only */
    qpldma_wr(&n->d, PLDMA_NET_MAC_LO, 0);
    qpldma_mac(&n->d, mac);
    g_assert_true(memcmp(mac, "\x02\x00\x00\xaa\xbb\xcc", 6) == 0);

    /* the link follows QEMU's (set_link on the NIC): a LINK event each */
    qtest_qmp_assert_success(n->qts, "{'execute': 'set_link', 'arguments':"
                             " {'name': 'dma0', 'up': false}}");
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_STATUS), ==, 0);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_EVENTS), ==,
                     PLDMA_ETH_EV_LINK);
    qpldma_wr(&n->d, PLDMA_ETH_EVENTS, PLDMA_ETH_EV_LINK);
    qtest_qmp_assert_success(n->qts, "{'execute': 'set_link', 'arguments':"
                             " {'name': 'dma0', 'up': true}}");
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_STATUS), ==,
                     PLDMA_ETH_STATUS_LINK);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_EVENTS), ==,
                     PLDMA_ETH_EV_LINK);
    qpldma_wr(&n->d, PLDMA_ETH_EVENTS, PLDMA_ETH_EV_LINK);

    /* enabling a ring that is not configured: refused, an error event */
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_CTRL), ==, 0);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_STATUS), ==,
                     PLDMA_ETH_STATUS_LINK | PLDMA_ETH_STATUS_RX_ERR);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_EVENTS), ==,
                     PLDMA_ETH_EV_ERROR);
    /* not a power of two, too large, misaligned */
    qpldma_wr(&n->d, PLDMA_ETH_RX_SIZE, 6);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_CTRL), ==, 0);
    qpldma_wr(&n->d, PLDMA_ETH_RX_SIZE, PLDMA_ETH_RING_MAX * 2);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_CTRL), ==, 0);
    qpldma_wr(&n->d, PLDMA_ETH_RX_SIZE, 8);
    qpldma_wr(&n->d, PLDMA_ETH_RX_BASE_LO, (uint32_t)RX_RING + 8);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_CTRL), ==, 0);
    /* a tail past the ring is ignored */
    qpldma_wr(&n->d, PLDMA_ETH_RX_TAIL, 8);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_RX_TAIL), ==, 0);

    /* a good ring enables, clears the error; W1C events; IRQ_ETH */
    rings_init(n, 8, 8);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_TX_EN);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_CTRL), ==,
                     PLDMA_ETH_CTRL_RX_EN | PLDMA_ETH_CTRL_TX_EN);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_STATUS), ==,
                     PLDMA_ETH_STATUS_LINK);
    g_assert_false(qpldma_rd(&n->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_ETH);
    qpldma_wr(&n->d, PLDMA_ETH_EVENT_MASK, 0xffffffff);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_EVENT_MASK), ==,
                     PLDMA_ETH_EV_ALL);
    g_assert_true(qpldma_rd(&n->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_ETH);
    /* IRQ_ETH follows the events: a W1C of IRQ_STATUS does not clear it */
    qpldma_wr(&n->d, PLDMA_IRQ_STATUS, PLDMA_IRQ_ETH);
    g_assert_true(qpldma_rd(&n->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_ETH);
    qpldma_wr(&n->d, PLDMA_ETH_EVENTS, PLDMA_ETH_EV_ERROR);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_EVENTS), ==, 0);
    g_assert_false(qpldma_rd(&n->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_ETH);
    /* ring registers are fixed while the ring runs */
    qpldma_wr(&n->d, PLDMA_ETH_RX_SIZE, 16);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_RX_SIZE), ==, 8);
    /* a tail past the ring of a running ring stops it */
    qpldma_wr(&n->d, PLDMA_ETH_TX_TAIL, 9);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_CTRL), ==,
                     PLDMA_ETH_CTRL_RX_EN);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_STATUS), ==,
                     PLDMA_ETH_STATUS_LINK | PLDMA_ETH_STATUS_TX_ERR);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_EVENTS), ==,
                     PLDMA_ETH_EV_ERROR);
    peer_close(&pe);
}

/* Frames from the link: ARP-sized and MTU-sized, filtering, RoCEv2 */
static void test_rx(void)
{
    uint8_t f[2048], back[2048], pl[256] = { 0 };
    uint32_t len, st, drops;
    Peer pe;
    Node *n = &pe.n;

    peer_open(&pe, NULL);
    rings_init(n, 8, 8);
    rx_post(n, 7, BUF_SIZE);
    qpldma_wr(&n->d, PLDMA_ETH_EVENT_MASK, PLDMA_ETH_EV_RX);
    qpldma_wr(&n->d, PLDMA_IRQ_MASK, PLDMA_IRQ_ETH);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN);

    /* an ARP request (broadcast) */
    len = arp_frame(f, peer_mac, 0x0a000002, 0x0a000001);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 1);
    g_assert_cmpuint(desc_status(n, RX_RING, 0, &st), ==, PLDMA_ETH_ST_OK);
    g_assert_cmpuint(st, ==, 60);
    qpldma_mem_check(n->qts, RX_BUFS, f, 60);
    g_assert_true(qpldma_rd(&n->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_ETH);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_EVENTS), ==,
                     PLDMA_ETH_EV_RX);
    qpldma_wr(&n->d, PLDMA_ETH_EVENTS, PLDMA_ETH_EV_RX);
    g_assert_false(qpldma_rd(&n->d, PLDMA_IRQ_STATUS) & PLDMA_IRQ_ETH);

    /* an MTU-sized IPv4 frame to our MAC, and a 14-byte one */
    len = eth_frame(f, n->mac, peer_mac, 0x0800, MTU_FRAME, 1);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 2);
    g_assert_cmpuint(desc_status(n, RX_RING, 1, &st), ==, PLDMA_ETH_ST_OK);
    g_assert_cmpuint(st, ==, MTU_FRAME);
    qpldma_mem_check(n->qts, RX_BUFS + BUF_SIZE, f, MTU_FRAME);
    len = eth_frame(back, n->mac, peer_mac, 0x88b5, 14, 0);
    qpldma_stream_send(pe.fd, back, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 3);
    g_assert_cmpuint(desc_status(n, RX_RING, 2, &st), ==, PLDMA_ETH_ST_OK);
    g_assert_cmpuint(st, ==, 14);

    /* unicast to another MAC: filtered; promiscuous: delivered */
    len = eth_frame(f, (const uint8_t *)"\x52\x54\x00\x99\x99\x99", peer_mac,
                    0x0800, 100, 2);
    qpldma_stream_send(pe.fd, f, len);
    /* runts: counted, never written */
    qpldma_stream_send(pe.fd, f, 13);
    qpldma_stream_send(pe.fd, f, 0);
    /* (the empty frame is delivered with the next one: stream framing) */
    wait_reg(n, PLDMA_ETH_CNT(PLDMA_ETH_CNT_RX_RUNT), 1);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_PROMISC);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 4);
    qpldma_mem_check(n->qts, RX_BUFS + 3 * BUF_SIZE, f, 100);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_FILTERED), ==, 1);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_RUNT), ==, 2);

    /*
     * RoCEv2 for this node is the transport's (it drops this WRITE for
     * no QP and counts it); UDP 4791 to another IP is Ethernet's
     */
    {
        QPldmaRoce r = {
            .dst_mac = n->mac, .src_mac = peer_mac, .src_ip = 0x0a000002,
            .dst_ip = 0x0a000001, .op = 0x0a, .qpn = 0x123456, .psn = 0,
            .reth = true, .va = 0, .rkey = 1, .dmalen = 256, .aeth_syn = -1,
            .pl = pl, .plen = 256,
        };

        drops = qpldma_ncnt(&n->d, PLDMA_NCNT_RX_FRAMES);
        len = qpldma_roce_frame(f, &r);
        qpldma_stream_send(pe.fd, f, len);
        r.dst_ip = 0x0a000063;
        len = qpldma_roce_frame(f, &r);
        qpldma_stream_send(pe.fd, f, len);
        wait_reg(n, PLDMA_ETH_RX_HEAD, 5);
        g_assert_cmpuint(desc_status(n, RX_RING, 4, &st), ==,
                         PLDMA_ETH_ST_OK);
        g_assert_cmpuint(st, ==, len);
        qpldma_mem_check(n->qts, RX_BUFS + 4 * BUF_SIZE, f, len);
        g_assert_cmpuint(qpldma_ncnt(&n->d, PLDMA_NCNT_RX_FRAMES) - drops,
                         ==, 1);
    }
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_FRAMES), ==, 5);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_BYTES), ==,
                     60 + MTU_FRAME + 14 + 100 + len);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_NO_BUF), ==, 0);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_ERRORS), ==, 0);

    /* RX off: the port is RoCE-only again, other frames dropped there */
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, 0);
    drops = qpldma_ncnt(&n->d, PLDMA_NCNT_RX_DROPPED);
    len = arp_frame(f, peer_mac, 0x0a000002, 0x0a000001);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_NET_CNT(PLDMA_NCNT_RX_DROPPED), drops + 1);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_RX_HEAD), ==, 5);
    peer_close(&pe);
}

/* Frames to the link: ARP-sized and MTU-sized, byte for byte */
static void test_tx(void)
{
    uint8_t f[2048], got[2048];
    uint32_t len, st, i;
    Peer pe;
    Node *n = &pe.n;

    peer_open(&pe, NULL);
    rings_init(n, 4, 4);
    qpldma_wr(&n->d, PLDMA_ETH_EVENT_MASK, PLDMA_ETH_EV_TX);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_TX_EN);

    len = arp_frame(f, n->mac, 0x0a000001, 0x0a000002);
    tx_post(n, f, 0, 42);           /* unpadded, as Linux hands it over */
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, 42);
    g_assert_true(memcmp(got, f, 42) == 0);
    wait_reg(n, PLDMA_ETH_TX_HEAD, 1);
    g_assert_cmpuint(desc_status(n, TX_RING, 0, &st), ==, PLDMA_ETH_ST_OK);
    g_assert_cmpuint(st, ==, 42);
    g_assert_true(qpldma_rd(&n->d, PLDMA_ETH_EVENTS) & PLDMA_ETH_EV_TX);

    /* six MTU-sized frames through a ring of four: wraps, in order */
    for (i = 0; i < 6; i++) {
        len = eth_frame(f, peer_mac, n->mac, 0x0800, MTU_FRAME, i);
        tx_post(n, f, 0, len);
        g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==,
                         MTU_FRAME);
        g_assert_true(memcmp(got, f, MTU_FRAME) == 0);
    }
    wait_reg(n, PLDMA_ETH_TX_HEAD, 3);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_FRAMES), ==, 7);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_BYTES), ==,
                     42 + 6 * MTU_FRAME);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_ERRORS), ==, 0);
    /* nothing else went out */
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, 0);
    peer_close(&pe);
}

/*
 * A peer that stops reading: the TX ring waits for the net layer (one frame
 * queued there, nothing dropped), the node stays responsive, and every
 * frame goes out, in order, once the peer reads again
 */
static void test_tx_backpressure(void)
{
    const uint32_t nf = 511;
    uint8_t f[2048], got[2048];
    uint32_t i, head, last = 0;
    Peer pe;
    Node *n = &pe.n;

    peer_open(&pe, NULL);
    rings_init(n, nf + 1, nf + 1);
    for (i = 0; i < nf; i++) {
        eth_frame(f, peer_mac, n->mac, 0x0800, MTU_FRAME, i);
        qtest_memwrite(n->qts, TX_BUFS + i * BUF_SIZE, f, MTU_FRAME);
        desc_write(n, TX_RING + i * PLDMA_ETH_DESC_SIZE,
                   TX_BUFS + i * BUF_SIZE, MTU_FRAME);
    }
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_TX_EN);
    qpldma_wr(&n->d, PLDMA_ETH_TX_TAIL, nf);
    /* ~770 KB do not fit the socket: the ring stops short of its tail */
    for (i = 0; i < 100; i++) {
        g_usleep(20 * 1000);
        head = qpldma_rd(&n->d, PLDMA_ETH_TX_HEAD);
        if (i > 10 && head == last) {
            break;
        }
        last = head;
    }
    g_assert_cmpuint(head, >, 0);
    g_assert_cmpuint(head, <, nf);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_FRAMES), ==, head);
    /* the node answers (the monitor too) while its link is stuck */
    qtest_qmp_assert_success(n->qts, "{'execute': 'query-status'}");
    for (i = 0; i < nf; i++) {
        eth_frame(f, peer_mac, n->mac, 0x0800, MTU_FRAME, i);
        g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==,
                         MTU_FRAME);
        g_assert_true(memcmp(got, f, MTU_FRAME) == 0);
    }
    wait_reg(n, PLDMA_ETH_TX_HEAD, nf);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_FRAMES), ==, nf);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_ERRORS), ==, 0);
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, 0);
    peer_close(&pe);
}

/* A full receive ring drops and counts; the link goes on */
static void test_rx_full(void)
{
    uint8_t f[2048];
    uint32_t len, i;
    Peer pe;
    Node *n = &pe.n;

    peer_open(&pe, NULL);
    rings_init(n, 4, 4);
    rx_post(n, 3, BUF_SIZE);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_TX_EN);
    for (i = 0; i < 20; i++) {
        len = eth_frame(f, n->mac, peer_mac, 0x0800, 200 + i, i);
        qpldma_stream_send(pe.fd, f, len);
    }
    wait_reg(n, PLDMA_ETH_CNT(PLDMA_ETH_CNT_RX_NO_BUF), 17);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_FRAMES), ==, 3);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_RX_HEAD), ==, 3);
    for (i = 0; i < 3; i++) {
        len = eth_frame(f, n->mac, peer_mac, 0x0800, 200 + i, i);
        qpldma_mem_check(n->qts, RX_BUFS + i * BUF_SIZE, f, len);
    }
    /* the link still works both ways: a TX frame out, the next RX in */
    len = arp_frame(f, n->mac, 0x0a000001, 0x0a000002);
    tx_post(n, f, 0, len);
    {
        uint8_t got[128];

        g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==,
                         60);
    }
    rx_post(n, 2, BUF_SIZE);
    len = eth_frame(f, n->mac, peer_mac, 0x0800, 300, 9);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 0);
    qpldma_mem_check(n->qts, RX_BUFS + 3 * BUF_SIZE, f, len);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_NO_BUF), ==, 17);
    peer_close(&pe);
}

/* Bad descriptors complete in error, bad rings stop; nothing is sent */
static void test_bad_desc(void)
{
    uint8_t f[2048], got[2048];
    uint32_t len, st;
    Peer pe;
    Node *n = &pe.n;

    peer_open(&pe, NULL);
    rings_init(n, 8, 8);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_TX_EN);

    /* TX: too short, too long, a buffer that is not RAM; then a good one */
    tx_post(n, NULL, TX_BUFS, 13);
    tx_post(n, NULL, TX_BUFS, PLDMA_ETH_FRAME_MAX + 1);
    tx_post(n, NULL, 0xffffffffffff0000ULL, 100);
    tx_post(n, NULL, UART_MMIO, 100);
    len = eth_frame(f, peer_mac, n->mac, 0x0800, 64, 3);
    tx_post(n, f, 0, len);
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, 64);
    g_assert_true(memcmp(got, f, 64) == 0);
    wait_reg(n, PLDMA_ETH_TX_HEAD, 5);
    g_assert_cmpuint(desc_status(n, TX_RING, 0, NULL), ==,
                     PLDMA_ETH_ST_BAD_LEN);
    g_assert_cmpuint(desc_status(n, TX_RING, 1, NULL), ==,
                     PLDMA_ETH_ST_BAD_LEN);
    g_assert_cmpuint(desc_status(n, TX_RING, 2, NULL), ==,
                     PLDMA_ETH_ST_DMA_ERROR);
    g_assert_cmpuint(desc_status(n, TX_RING, 3, NULL), ==,
                     PLDMA_ETH_ST_DMA_ERROR);
    g_assert_cmpuint(desc_status(n, TX_RING, 4, NULL), ==, PLDMA_ETH_ST_OK);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_ERRORS), ==, 4);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_FRAMES), ==, 1);

    /* RX: a buffer too small, one that is not RAM; then a good one */
    desc_write(n, RX_RING, RX_BUFS, 100);
    desc_write(n, RX_RING + PLDMA_ETH_DESC_SIZE, UART_MMIO, BUF_SIZE);
    desc_write(n, RX_RING + 2 * PLDMA_ETH_DESC_SIZE, RX_BUFS + BUF_SIZE,
               BUF_SIZE);
    qtest_memset(n->qts, RX_BUFS, 0, 2 * BUF_SIZE);
    qpldma_wr(&n->d, PLDMA_ETH_RX_TAIL, 3);
    for (st = 0; st < 3; st++) {
        len = eth_frame(f, n->mac, peer_mac, 0x0800, 101, st);
        qpldma_stream_send(pe.fd, f, len);
    }
    wait_reg(n, PLDMA_ETH_RX_HEAD, 3);
    g_assert_cmpuint(desc_status(n, RX_RING, 0, &len), ==,
                     PLDMA_ETH_ST_BAD_LEN);
    g_assert_cmpuint(len, ==, 101);
    g_assert_true(qpldma_mem_zero(n->qts, RX_BUFS, BUF_SIZE));
    g_assert_cmpuint(desc_status(n, RX_RING, 1, NULL), ==,
                     PLDMA_ETH_ST_DMA_ERROR);
    g_assert_cmpuint(desc_status(n, RX_RING, 2, NULL), ==, PLDMA_ETH_ST_OK);
    qpldma_mem_check(n->qts, RX_BUFS + BUF_SIZE, f, 101);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_ERRORS), ==, 2);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_FRAMES), ==, 1);

    /* a ring that is not in RAM stops at its first descriptor */
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, 0);
    qpldma_wr(&n->d, PLDMA_ETH_EVENTS, PLDMA_ETH_EV_ALL);
    qpldma_wr(&n->d, PLDMA_ETH_TX_BASE_LO, (uint32_t)UART_MMIO);
    qpldma_wr(&n->d, PLDMA_ETH_TX_BASE_HI, 0);
    qpldma_wr(&n->d, PLDMA_ETH_TX_SIZE, 4);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_TX_EN);
    qpldma_wr(&n->d, PLDMA_ETH_TX_TAIL, 1);
    wait_reg(n, PLDMA_ETH_CTRL, 0);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_STATUS), ==,
                     PLDMA_ETH_STATUS_LINK | PLDMA_ETH_STATUS_TX_ERR);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_EVENTS), ==,
                     PLDMA_ETH_EV_ERROR);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_TX_HEAD), ==, 0);
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, 0);
    peer_close(&pe);
}

/* A reset in the middle of both rings: they stop, and nothing moves after */
static void test_reset(void)
{
    uint8_t f[2048], got[2048];
    uint32_t len, i;
    Peer pe;
    Node *n = &pe.n;

    peer_open(&pe, NULL);
    rings_init(n, 8, 8);
    rx_post(n, 7, BUF_SIZE);
    qpldma_wr(&n->d, PLDMA_ETH_EVENT_MASK, PLDMA_ETH_EV_ALL);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_TX_EN);
    len = eth_frame(f, n->mac, peer_mac, 0x0800, 500, 1);
    qpldma_stream_send(pe.fd, f, len);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 2);
    tx_post(n, f, 0, 200);
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, 200);

    /* the engine's reset: every register back to 0, no IRQ_ETH */
    qpldma_wr(&n->d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    for (i = PLDMA_ETH_CTRL; i <= PLDMA_ETH_TX_TAIL; i += 4) {
        if (i != PLDMA_ETH_STATUS) {
            g_assert_cmpuint(qpldma_rd(&n->d, i), ==, 0);
        }
    }
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_STATUS), ==,
                     PLDMA_ETH_STATUS_LINK);
    for (i = 0; i < PLDMA_ETH_CNT_NUM; i++) {
        g_assert_cmpuint(ecnt(n, i), ==, 0);
    }
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_IRQ_STATUS), ==, 0);

    /* frames after it land nowhere; a TX doorbell sends nothing */
    qtest_memset(n->qts, RX_BUFS + 2 * BUF_SIZE, 0, 5 * BUF_SIZE);
    qpldma_stream_send(pe.fd, f, len);
    tx_post(n, f, 0, 100);
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, 0);
    g_assert_true(qpldma_mem_zero(n->qts, RX_BUFS + 2 * BUF_SIZE,
                                  5 * BUF_SIZE));
    g_assert_cmpuint(desc_status(n, RX_RING, 2, NULL), ==, 0);

    /* set up again, it works; then ETH_CTRL_RESET alone */
    rings_init(n, 8, 8);
    rx_post(n, 7, BUF_SIZE);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_TX_EN);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 1);
    qpldma_mem_check(n->qts, RX_BUFS, f, len);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RESET);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_CTRL), ==, 0);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_RX_HEAD), ==, 0);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_RX_SIZE), ==, 0);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_FRAMES), ==, 0);
    peer_close(&pe);
}

/*
 * RoCEv2 UD datagrams (QP1's, the OS's GSI QP): to the receive ring when
 * their ICRC is good, dropped and counted when it is not; on the way out
 * the device fills in the ICRC of a descriptor with PLDMA_ETH_TX_ICRC, and
 * refuses it on a frame that is not RoCEv2
 */
static void test_ud(void)
{
    uint8_t f[2048], got[2048], mad[8 + 256];
    uint32_t len, st, drops, i;
    Peer pe;
    Node *n = &pe.n;
    QPldmaRoce r = {
        .src_mac = peer_mac, .src_ip = 0x0a000002, .dst_ip = 0x0a000001,
        .op = 0x64, .qpn = 1, .psn = 7, .aeth_syn = -1,
        .pl = mad, .plen = sizeof(mad),
    };

    stl_be_p(mad, 0x80010000);          /* DETH: Q_Key of QP1, source QP 1 */
    stl_be_p(mad + 4, 1);
    for (i = 8; i < sizeof(mad); i++) {
        mad[i] = i * 7;
    }
    peer_open(&pe, NULL);
    r.dst_mac = n->mac;
    rings_init(n, 4, 4);
    rx_post(n, 3, BUF_SIZE);
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_TX_EN);

    /* in: byte for byte, not the transport's */
    drops = qpldma_ncnt(&n->d, PLDMA_NCNT_RX_DROPPED);
    len = qpldma_roce_frame(f, &r);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 1);
    g_assert_cmpuint(desc_status(n, RX_RING, 0, &st), ==, PLDMA_ETH_ST_OK);
    g_assert_cmpuint(st, ==, len);
    qpldma_mem_check(n->qts, RX_BUFS, f, len);
    g_assert_cmpuint(qpldma_ncnt(&n->d, PLDMA_NCNT_RX_FRAMES), ==, 0);

    /* a bad ICRC: dropped by the device, never to the ring */
    f[len - 1] ^= 1;
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_NET_CNT(PLDMA_NCNT_RX_DROPPED), drops + 1);
    f[len - 1] ^= 1;
    /* the immediate form, with a good ICRC, is delivered */
    r.op = 0x65;
    len = qpldma_roce_frame(f, &r);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_ETH_RX_HEAD, 2);
    qpldma_mem_check(n->qts, RX_BUFS + BUF_SIZE, f, len);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_RX_FRAMES), ==, 2);

    /* out: the ICRC zeroed, the device writes it */
    r.op = 0x64;
    r.dst_mac = peer_mac;
    r.src_mac = n->mac;
    r.src_ip = 0x0a000001;
    r.dst_ip = 0x0a000002;
    len = qpldma_roce_frame(f, &r);
    memcpy(got, f, len);
    memset(got + len - 4, 0, 4);
    i = tx_post_icrc(n, got, len, len);
    memset(got, 0, sizeof(got));
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, len);
    g_assert_true(memcmp(got, f, len) == 0);
    wait_reg(n, PLDMA_ETH_TX_HEAD, 1);
    g_assert_cmpuint(desc_status(n, TX_RING, i, &st), ==, PLDMA_ETH_ST_OK);
    g_assert_cmpuint(st, ==, len);

    /* not RoCEv2 (an ARP request), or truncated: refused, nothing sent */
    len = arp_frame(f, n->mac, 0x0a000001, 0x0a000002);
    i = tx_post_icrc(n, f, len, len);
    wait_reg(n, PLDMA_ETH_TX_HEAD, 2);
    g_assert_cmpuint(desc_status(n, TX_RING, i, NULL), ==,
                     PLDMA_ETH_ST_NOT_ROCE);
    len = qpldma_roce_frame(f, &r);
    i = tx_post_icrc(n, f, len, len - 8);
    wait_reg(n, PLDMA_ETH_TX_HEAD, 3);
    g_assert_cmpuint(desc_status(n, TX_RING, i, NULL), ==,
                     PLDMA_ETH_ST_NOT_ROCE);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_FRAMES), ==, 1);
    g_assert_cmpuint(ecnt(n, PLDMA_ETH_CNT_TX_ERRORS), ==, 2);
    g_assert_cmpuint(qpldma_stream_recv(pe.fd, got, sizeof(got)), ==, 0);

    /* RX off: a good UD datagram is dropped and counted */
    qpldma_wr(&n->d, PLDMA_ETH_CTRL, 0);
    r.dst_mac = n->mac;
    r.src_mac = peer_mac;
    r.src_ip = 0x0a000002;
    r.dst_ip = 0x0a000001;
    len = qpldma_roce_frame(f, &r);
    qpldma_stream_send(pe.fd, f, len);
    wait_reg(n, PLDMA_NET_CNT(PLDMA_NCNT_RX_DROPPED), drops + 2);
    g_assert_cmpuint(qpldma_rd(&n->d, PLDMA_ETH_RX_HEAD), ==, 2);
    peer_close(&pe);
}

/* Two QEMUs: an ARP request from A, the reply from B, through the devices */
static void test_two_nodes(void)
{
    QPldmaLink link;
    g_autofree char *an = NULL, *bn = NULL;
    Node a = { 0 }, b = { 0 };
    uint8_t f[2048];
    uint32_t st;

    qpldma_link_init(&link, "pldma-eth2-XXXXXX");
    bn = qpldma_link_netdev(&link, true);
    an = qpldma_link_netdev(&link, false);
    b.qts = qtest_initf("-M virt -m 512M -nodefaults -device pldma,"
                        "netdev=n0,node-id=2 -netdev %s", bn);
    a.qts = qtest_initf("-M virt -m 512M -nodefaults -device pldma,"
                        "netdev=n0,node-id=1 -netdev %s", an);
    qpldma_link_wait(b.qts);
    qpldma_init(&a.d, a.qts, PLDMA_BASE);
    qpldma_init(&b.d, b.qts, PLDMA_BASE);
    qpldma_mac(&a.d, a.mac);
    qpldma_mac(&b.d, b.mac);
    rings_init(&a, 4, 4);
    rings_init(&b, 4, 4);
    rx_post(&a, 3, BUF_SIZE);
    rx_post(&b, 3, BUF_SIZE);
    qpldma_wr(&a.d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_TX_EN);
    qpldma_wr(&b.d, PLDMA_ETH_CTRL, PLDMA_ETH_CTRL_RX_EN |
              PLDMA_ETH_CTRL_TX_EN);

    arp_frame(f, a.mac, 0x0a000001, 0x0a000002);
    tx_post(&a, f, 0, 60);
    wait_reg(&b, PLDMA_ETH_RX_HEAD, 1);
    qpldma_mem_check(b.qts, RX_BUFS, f, 60);
    /* the reply, an MTU-sized frame to A's MAC */
    eth_frame(f, a.mac, b.mac, 0x0800, MTU_FRAME, 7);
    tx_post(&b, f, 0, MTU_FRAME);
    wait_reg(&a, PLDMA_ETH_RX_HEAD, 1);
    g_assert_cmpuint(desc_status(&a, RX_RING, 0, &st), ==, PLDMA_ETH_ST_OK);
    g_assert_cmpuint(st, ==, MTU_FRAME);
    qpldma_mem_check(a.qts, RX_BUFS, f, MTU_FRAME);
    g_assert_cmpuint(ecnt(&a, PLDMA_ETH_CNT_TX_FRAMES), ==, 1);
    g_assert_cmpuint(ecnt(&b, PLDMA_ETH_CNT_TX_FRAMES), ==, 1);
    qtest_quit(a.qts);
    qtest_quit(b.qts);
    qpldma_link_cleanup(&link);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (strcmp(qtest_get_arch(), "aarch64")) {
        return g_test_run();
    }
    qtest_add_func("/pldma-eth/regs", test_regs);
    qtest_add_func("/pldma-eth/rx", test_rx);
    qtest_add_func("/pldma-eth/tx", test_tx);
    qtest_add_func("/pldma-eth/tx-backpressure", test_tx_backpressure);
    qtest_add_func("/pldma-eth/rx-full", test_rx_full);
    qtest_add_func("/pldma-eth/bad-desc", test_bad_desc);
    qtest_add_func("/pldma-eth/reset", test_reset);
    qtest_add_func("/pldma-eth/two-nodes", test_two_nodes);
    qtest_add_func("/pldma-eth/ud", test_ud);
    return g_test_run();
}
