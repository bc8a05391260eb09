/*
 * QTest for pldma-pci's fault-mode=pri: PCIe page requests through
 * intel-iommu's page request queue, on q35
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The test plays the OS: it programs intel-iommu in scalable mode with
 * first-stage tables for PASID 1 (a context entry with Page Request
 * Enable), its invalidation queue and its page request queue; it enables
 * the device's PASID, ATS and PRI capabilities through ECAM, reads the
 * page requests the device makes when a copy's destination is not mapped,
 * maps the pages and answers with page group responses posted to the
 * invalidation queue.  See docs/specs/pldma.rst, "Page requests (PRI)".
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/pldma.h"
#include "hw/i386/intel_iommu_internal.h"
#include "hw/pci-host/q35.h"
#include "standard-headers/linux/pci_regs.h"

#define ECAM            MCH_HOST_BRIDGE_PCIEXBAR_DEFAULT
#define DEVFN           QPCI_DEVFN(4, 0)
#define RP_DEVFN        QPCI_DEVFN(3, 0)    /* the hot-plug test's port */
#define EP_BAR          0xc0000000ULL       /* its endpoint's BAR 0 */
#define PASID_CAP       0x100
#define ATS_CAP         0x108
#define PRI_CAP         0x110
#define PASID           1
#define NCH             2
#define TABLES          0x01000000ULL   /* IOMMU tables, a bump allocator */
#define TABLES_END      0x02000000ULL
#define IQ_ENTRIES      128             /* IQA.QS 0, 256-bit (IQA.DW) */
#define PRQ_ENTRIES     128             /* PQA.PQS 0 */
/* the process's addresses: VA == PA, so the test reads what DMA wrote */
#define VA_RING(ch)     (0x04000000ULL + (ch) * 0x1000)
#define VA_COMPL(ch)    (0x04010000ULL + (ch) * 0x1000)
#define VA_SRC(ch)      (0x05000000ULL + (ch) * 0x100000)
#define VA_DST(ch)      (0x06000000ULL + (ch) * 0x100000)
#define PAGE            0x1000ULL
#define RING_SIZE       4

#define SM_ARGS "-M q35 -m 256M -nodefaults " \
                "-device intel-iommu,x-scalable-mode=on,x-flts=on," \
                "x-pasid-mode=on,device-iotlb=on,x-prs=on,x-smpwc=on " \
                "-device pldma-pci,addr=4.0,num-channels=2"

typedef struct PageReq {
    uint16_t rid;
    uint32_t pasid;
    uint16_t prgi;
    uint64_t addr;
    bool read, write, lpig;
} PageReq;

typedef struct Fixture {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    QPldma d;
    QPldmaRing ring[NCH];
    uint64_t next;          /* bump allocator */
    uint64_t root, ctx, pdir, ptbl, pml4, iq, prq;
    uint32_t iqt;
    uint32_t prqh;
    uint8_t busn, devfn;    /* the endpoint's (bus 0, or behind a port) */
} Fixture;

static uint64_t vtd_rdq(Fixture *f, uint32_t off)
{
    return qtest_readq(f->qts, Q35_HOST_BRIDGE_IOMMU_ADDR + off);
}

static uint32_t vtd_rdl(Fixture *f, uint32_t off)
{
    return qtest_readl(f->qts, Q35_HOST_BRIDGE_IOMMU_ADDR + off);
}

static void vtd_wrq(Fixture *f, uint32_t off, uint64_t val)
{
    qtest_writeq(f->qts, Q35_HOST_BRIDGE_IOMMU_ADDR + off, val);
}

static void vtd_wrl(Fixture *f, uint32_t off, uint32_t val)
{
    qtest_writel(f->qts, Q35_HOST_BRIDGE_IOMMU_ADDR + off, val);
}

static uint64_t ecam(Fixture *f, uint32_t off)
{
    return ECAM + ((uint64_t)f->busn << 20) + (f->devfn << 12) + off;
}

static uint16_t rid(Fixture *f)
{
    return PCI_BUILD_BDF(f->busn, f->devfn);
}

static uint16_t cfg_rdw(Fixture *f, uint32_t off)
{
    return qtest_readw(f->qts, ecam(f, off));
}

static uint32_t cfg_rdl(Fixture *f, uint32_t off)
{
    return qtest_readl(f->qts, ecam(f, off));
}

static void cfg_wrw(Fixture *f, uint32_t off, uint16_t val)
{
    qtest_writew(f->qts, ecam(f, off), val);
}

static void cfg_wrl(Fixture *f, uint32_t off, uint32_t val)
{
    qtest_writel(f->qts, ecam(f, off), val);
}

static uint64_t tbl_alloc(Fixture *f)
{
    uint64_t pa = f->next;

    f->next += PAGE;
    g_assert_cmphex(f->next, <=, TABLES_END);
    qtest_memset(f->qts, pa, 0, PAGE);
    return pa;
}

/* Map the page of @va to @pa in the first-stage tables, user, RW */
static void map_to(Fixture *f, uint64_t va, uint64_t pa)
{
    uint64_t table = f->pml4;
    int level;

    for (level = 4; level > 1; level--) {
        uint64_t pte_pa = table + ((va >> (12 + 9 * (level - 1))) & 0x1ff) * 8;
        uint64_t pte = qtest_readq(f->qts, pte_pa);

        if (!(pte & VTD_FL_P)) {
            pte = tbl_alloc(f) | VTD_FL_P | VTD_FL_RW | VTD_FL_US;
            qtest_writeq(f->qts, pte_pa, pte);
        }
        table = pte & ~0xfffULL & ((1ULL << 52) - 1);
    }
    qtest_writeq(f->qts, table + ((va >> 12) & 0x1ff) * 8,
                 (pa & ~0xfffULL) | VTD_FL_P | VTD_FL_RW | VTD_FL_US);
}

/* ... to itself */
static void map(Fixture *f, uint64_t va)
{
    map_to(f, va, va);
}

static void map_range(Fixture *f, uint64_t va, uint64_t len)
{
    uint64_t p;

    for (p = va & ~(PAGE - 1); p < va + len; p += PAGE) {
        map(f, p);
    }
}

static void gcmd(Fixture *f, uint32_t cmd, uint32_t sts)
{
    vtd_wrl(f, DMAR_GCMD_REG, cmd);
    g_assert_cmphex(vtd_rdl(f, DMAR_GSTS_REG) & sts, ==, sts);
}

/*
 * intel-iommu as Linux sets it up for SVA: scalable-mode root and context
 * entries (PRE), a PASID directory and table whose entries for PASID 0
 * (RID2PASID) and PASID use first-stage translation with one 4-level
 * table, the invalidation queue and the page request queue.
 */
static void iommu_setup(Fixture *f)
{
    uint64_t pe;
    int pasid;

    f->next = TABLES;
    f->root = tbl_alloc(f);
    f->ctx = tbl_alloc(f);
    f->pdir = tbl_alloc(f);
    f->ptbl = tbl_alloc(f);
    f->pml4 = tbl_alloc(f);
    f->iq = tbl_alloc(f);
    tbl_alloc(f);           /* the IQ is 4 KiB; the PRQ 4 KiB too */
    f->prq = tbl_alloc(f);
    f->iqt = 0;
    f->prqh = 0;

    qtest_writeq(f->qts, f->root + f->busn * 16, f->ctx | VTD_ROOT_ENTRY_P);
    qtest_writeq(f->qts, f->ctx + f->devfn * VTD_CTX_ENTRY_SCALABLE_SIZE,
                 f->pdir | VTD_SM_CONTEXT_ENTRY_PRE | VTD_CONTEXT_ENTRY_P);
    qtest_writeq(f->qts, f->pdir, f->ptbl | 1);
    for (pasid = 0; pasid <= PASID; pasid++) {
        pe = f->ptbl + pasid * VTD_PASID_ENTRY_SIZE;
        qtest_writeq(f->qts, pe, VTD_SM_PASID_ENTRY_FLT | VTD_PASID_ENTRY_P);
        qtest_writeq(f->qts, pe + 8, 1 + pasid);   /* domain ID */
        qtest_writeq(f->qts, pe + 16, f->pml4);    /* 4-level, FLPM 0 */
    }

    vtd_wrq(f, DMAR_RTADDR_REG, f->root | VTD_RTADDR_SMT);
    gcmd(f, VTD_GCMD_SRTP, VTD_GSTS_RTPS);
    vtd_wrq(f, DMAR_IQT_REG, 0);
    vtd_wrq(f, DMAR_IQA_REG, f->iq | VTD_IQA_DW_MASK);
    gcmd(f, VTD_GCMD_QIE, VTD_GSTS_QIES);
    vtd_wrq(f, DMAR_PQH_REG, 0);
    vtd_wrq(f, DMAR_PQT_REG, 0);
    vtd_wrq(f, DMAR_PQA_REG, f->prq);
    gcmd(f, VTD_GCMD_QIE | VTD_GCMD_TE, VTD_GSTS_QIES | VTD_GSTS_TES);
}

/* Page requests the IOMMU queued since the last call, at most @max */
static int prq_pop(Fixture *f, PageReq *r, int max)
{
    uint64_t tail = vtd_rdq(f, DMAR_PQT_REG) / VTD_PQA_ENTRY_SIZE;
    int n = 0;

    while (f->prqh != tail && n < max) {
        uint64_t d = f->prq + f->prqh * VTD_PQA_ENTRY_SIZE;
        uint64_t lo = qtest_readq(f->qts, d);
        uint64_t hi = qtest_readq(f->qts, d + 8);

        g_assert_cmphex(lo & 3, ==, VTD_PRD_TYPE);
        g_assert_cmphex(lo & VTD_PRD_PP(1), ==, VTD_PRD_PP(1));
        r[n] = (PageReq) {
            .rid = (lo >> 16) & 0xffff,
            .pasid = (lo >> 32) & 0xfffff,
            .prgi = (hi >> 3) & 0x1ff,
            .addr = hi & VTD_PRD_ADDR(~0ULL),
            .read = hi & VTD_PRD_RDR(1),
            .write = hi & VTD_PRD_WRR(1),
            .lpig = hi & VTD_PRD_LPIG(1),
        };
        n++;
        f->prqh = (f->prqh + 1) % PRQ_ENTRIES;
    }
    vtd_wrq(f, DMAR_PQH_REG, (uint64_t)f->prqh * VTD_PQA_ENTRY_SIZE);
    /* PRS.PPR is write-1-to-clear */
    vtd_wrl(f, DMAR_PRS_REG, VTD_PR_STATUS_PPR);
    return n;
}

/*
 * Submit one invalidation descriptor (256-bit, as Linux's in scalable
 * mode); the IOMMU processes it at once
 */
static void iq_submit(Fixture *f, uint64_t lo, uint64_t hi)
{
    uint64_t d = f->iq + f->iqt * 32;

    qtest_writeq(f->qts, d, lo);
    qtest_writeq(f->qts, d + 8, hi);
    qtest_writeq(f->qts, d + 16, 0);
    qtest_writeq(f->qts, d + 24, 0);
    f->iqt = (f->iqt + 1) % IQ_ENTRIES;
    vtd_wrq(f, DMAR_IQT_REG, (uint64_t)f->iqt << 5);
    g_assert_cmphex(vtd_rdl(f, DMAR_FSTS_REG) & VTD_FSTS_IQE, ==, 0);
}

/* A page group response (code 0 success, 1 invalid, 0xf failure) */
static void pg_respond(Fixture *f, uint16_t prgi, uint32_t code)
{
    iq_submit(f, VTD_INV_DESC_PGRESP | (1ULL << 4) |
              ((uint64_t)code << 12) | ((uint64_t)rid(f) << 16) |
              ((uint64_t)PASID << 32), (uint64_t)prgi << 3);
}

/* The IOMMU's own IOTLB, all of PASID (domain 1 + PASID, iommu_setup()) */
static void piotlb_inv(Fixture *f)
{
    iq_submit(f, VTD_INV_DESC_PIOTLB | VTD_INV_DESC_PIOTLB_ALL_IN_PASID |
              ((uint64_t)(1 + PASID) << 16) | ((uint64_t)PASID << 32), 0);
}

/* The device's TLB (its ATC), PASID, the page of @va */
static void dev_piotlb_inv(Fixture *f, uint64_t va)
{
    iq_submit(f, VTD_INV_DESC_DEV_PIOTLB | ((uint64_t)rid(f) << 16) |
              ((uint64_t)PASID << 32), va & ~(PAGE - 1));
}

static void step(void *opaque)
{
    Fixture *f = opaque;

    qtest_clock_step(f->qts, 1000);
}

static void steps(Fixture *f, int n)
{
    while (n--) {
        step(f);
    }
}

static void pri_enable(Fixture *f, uint32_t alloc)
{
    cfg_wrl(f, PRI_CAP + PCI_PRI_ALLOC_REQ, alloc);
    cfg_wrw(f, PRI_CAP + PCI_PRI_CTRL, PCI_PRI_CTRL_ENABLE);
}

/* ECAM: the MCH's PCIEXBAR, as firmware sets it (a reset clears it) */
static void ecam_enable(Fixture *f)
{
    qtest_outl(f->qts, 0xcf8, 0x80000000 | (MCH_HOST_BRIDGE_PCIEXBAR + 4));
    qtest_outl(f->qts, 0xcfc, 0);
    qtest_outl(f->qts, 0xcf8, 0x80000000 | MCH_HOST_BRIDGE_PCIEXBAR);
    qtest_outl(f->qts, 0xcfc, ECAM | MCH_HOST_BRIDGE_PCIEXBAR_LENGTH_256M |
                              MCH_HOST_BRIDGE_PCIEXBAREN);
}

/*
 * The endpoint behind the port at RP_DEVFN, programmed by hand as
 * firmware would: bus 1 behind the port, BAR 0 at EP_BAR
 */
static void dev_setup_behind_port(Fixture *f)
{
    uint64_t rp = ECAM + (RP_DEVFN << 12);

    qtest_writel(f->qts, rp + PCI_PRIMARY_BUS, 0x00010100);
    qtest_writew(f->qts, rp + PCI_MEMORY_BASE, EP_BAR >> 16);
    qtest_writew(f->qts, rp + PCI_MEMORY_LIMIT, EP_BAR >> 16);
    qtest_writew(f->qts, rp + PCI_COMMAND,
                 PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    g_assert_cmphex(cfg_rdw(f, PCI_DEVICE_ID), ==, PLDMA_PCI_DEVICE_ID);
    cfg_wrl(f, PCI_BASE_ADDRESS_0, (uint32_t)EP_BAR);
    cfg_wrl(f, PCI_BASE_ADDRESS_1, 0);
    cfg_wrw(f, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    qpldma_init(&f->d, f->qts, EP_BAR);
}

static void dev_setup(Fixture *f)
{
    int ch;

    ecam_enable(f);
    if (f->busn) {
        dev_setup_behind_port(f);
    } else {
        f->dev = qpci_device_find(f->bus, DEVFN);
        g_assert(f->dev);
        qpci_device_enable(f->dev);
        f->bar = qpci_iomap(f->dev, PLDMA_PCI_BAR_REGS, NULL);
        qpldma_init(&f->d, f->qts, f->bar.addr);
    }

    cfg_wrw(f, PASID_CAP + PCI_PASID_CTRL, PCI_PASID_CTRL_ENABLE);
    cfg_wrw(f, ATS_CAP + PCI_ATS_CTRL, PCI_ATS_CTRL_ENABLE);
    for (ch = 0; ch < NCH; ch++) {
        map(f, VA_RING(ch));
        map(f, VA_COMPL(ch));
        qtest_memset(f->qts, VA_RING(ch), 0, PAGE);
        qpldma_ring_init(&f->d, &f->ring[ch], ch, VA_RING(ch), RING_SIZE,
                         PLDMA_CHB_PASID_EN | PASID);
    }
}

static void start(Fixture *f, const char *extra)
{
    memset(f, 0, sizeof(*f));
    f->devfn = DEVFN;
    f->qts = qtest_initf(SM_ARGS "%s", extra ? extra : "");
    f->bus = qpci_new_pc(f->qts, NULL);
    iommu_setup(f);
    dev_setup(f);
}

static void stop(Fixture *f)
{
    g_free(f->dev);
    qpci_free_pc(f->bus);
    qtest_quit(f->qts);
}

/* COPY of @len from a mapped source to an unmapped destination */
static void copy(Fixture *f, int ch, uint32_t len)
{
    uint8_t desc[PLDMA_DESC_SIZE];
    uint32_t i;

    map_range(f, VA_SRC(ch), len);
    for (i = 0; i < len; i += 4) {
        qtest_writel(f->qts, VA_SRC(ch) + i, i * 7 + ch);
    }
    qtest_memset(f->qts, VA_COMPL(ch), 0, PLDMA_COMPL_SIZE);
    qpldma_desc_copy(desc, len, VA_SRC(ch), VA_DST(ch), VA_COMPL(ch), 0);
    qpldma_ring_post(&f->d, &f->ring[ch], desc);
}

static void check_dst(Fixture *f, int ch, uint32_t len)
{
    uint32_t i;

    for (i = 0; i < len; i += 4) {
        g_assert_cmphex(qtest_readl(f->qts, VA_DST(ch) + i), ==, i * 7 + ch);
    }
}

static uint32_t wait_compl(Fixture *f, int ch)
{
    return qpldma_wait_compl(&f->d, VA_COMPL(ch), step, f, 1000, NULL);
}

static uint32_t ch_state(Fixture *f, int ch)
{
    return qpldma_ch_rd(&f->d, ch, PLDMA_CH_STATE);
}

/* Wait for @want page requests (and no more) */
static int wait_requests(Fixture *f, PageReq *r, int want)
{
    int n = 0, i;

    for (i = 0; i < 100 && n < want; i++) {
        step(f);
        n += prq_pop(f, r + n, 16 - n);
    }
    steps(f, 5);
    n += prq_pop(f, r + n, 16 - n);
    g_assert_cmpint(n, ==, want);
    return n;
}

/* start() with fault-mode=pri, @extra, and PRI enabled with @alloc */
static void start_pri(Fixture *f, const char *extra, uint32_t alloc)
{
    g_autofree char *args = g_strdup_printf(",fault-mode=pri%s",
                                            extra ? extra : "");

    start(f, args);
    pri_enable(f, alloc);
}

/* copy() on channel @ch, then wait for its @want page requests */
static void copy_faulting(Fixture *f, int ch, uint32_t len, PageReq *r,
                          int want)
{
    copy(f, ch, len);
    wait_requests(f, r, want);
}

/*
 * Answer @r (channel @ch's last missing page) as the OS does: map its
 * page and respond Success; the copy of @len completes with its bytes
 */
static void respond_done(Fixture *f, const PageReq *r, int ch, uint32_t len)
{
    map(f, r->addr);
    pg_respond(f, r->prgi, 0);
    g_assert_cmpuint(wait_compl(f, ch), ==, PLDMA_ST_SUCCESS);
    check_dst(f, ch, len);
}

/*
 * A RoCEv2 frame from the link's other end (node 2) to the device (node
 * 1): BTH opcode/psn with AckReq, a RETH; returns its length
 */
/* The test as the peer of the device's QP 0: its QPN and MAC */
#define PEER_QPN        0x4a0102
#define PEER_MAC        "\x52\x54\x00\x00\x00\x02"

typedef struct PeerQP {
    uint32_t qpn;           /* the device's QP 0 */
    uint8_t mac[6];         /* the device's */
} PeerQP;

static uint32_t peer_frame(const PeerQP *q, uint8_t *fr, uint8_t op,
                           uint32_t psn, uint64_t va, uint32_t rkey,
                           const uint8_t *pl, uint32_t plen)
{
    QPldmaRoce r = {
        .dst_mac = q->mac, .src_mac = (const uint8_t *)PEER_MAC,
        .src_ip = 0x0a000002, .dst_ip = 0x0a000001, .op = op,
        .qpn = q->qpn, .psn = psn, .reth = true, .va = va, .rkey = rkey,
        .dmalen = plen, .aeth_syn = -1, .pl = pl, .plen = plen,
    };

    return qpldma_roce_frame(fr, &r);
}

/*
 * The next answer the device sends the peer: its AETH syndrome, PSN and
 * MSN (stepping the clock while waiting, for the device's timers)
 */
static int peer_answer(Fixture *f, int fd, uint32_t *psn, uint32_t *msn)
{
    uint8_t fr[2048];
    uint32_t len = 0;
    int i;

    for (i = 0; i < 50 && !len; i++) {
        step(f);
        len = qpldma_stream_recv(fd, fr, sizeof(fr));
    }
    if (!len) {
        return -1;
    }
    g_assert_cmpuint(len, >=, 14 + 20 + 8 + 12 + 4 + 4);
    g_assert_cmpuint(fr[14 + 28], ==, 0x11);        /* Acknowledge */
    *psn = ldl_be_p(fr + 14 + 28 + 8) & 0xffffff;
    *msn = ldl_be_p(fr + 14 + 28 + 12) & 0xffffff;
    return fr[14 + 28 + 12];
}

/*
 * The responder in pri mode: a WRITE from the link into a page that the
 * key's PASID does not map becomes a page request of the responder's own
 * (no channel's), answered on the wire with an RNR NAK while the device
 * holds the segment.  Success: the held WRITE lands and is ACKed.
 * Invalid Request: the WRITE ends with NAK remote operational error,
 * nothing written.
 */
static void test_responder(void)
{
    uint8_t fr[2048], pl[256];
    g_autofree char *net = NULL, *extra = NULL;
    QPldmaLink link;
    PageReq r[16];
    uint32_t rkey, psn, msn, len, i;
    QPldmaQPEnd qp;
    PeerQP q;
    Fixture f;
    int fd;

    qpldma_link_init(&link, "x86-pldma-pri-XXXXXX");
    net = qpldma_link_netdev(&link, true);
    extra = g_strdup_printf(",netdev=n0,node-id=1 -netdev %s", net);
    start_pri(&f, extra, 8);
    fd = qpldma_link_connect(&link);
    qpldma_link_wait(f.qts);
    g_assert_cmpuint(qpldma_key_register(&f.d, 1, PLDMA_CHB_PASID_EN | PASID,
                                         VA_DST(0), 2 * PAGE,
                                         PLDMA_KEY_ACC_WRITE, &rkey), ==,
                     PLDMA_KEY_ST_OK);
    /* the device's QP 0, of the key's PD, connected to us, PSNs from 0 */
    qp = (QPldmaQPEnd){ .d = &f.d, .qp = 0, .sq = 0,
                        .pd = PLDMA_CHB_PASID_EN | PASID };
    qpldma_qp_connect_to(&qp, PEER_QPN, 0x0a000002,
                         (const uint8_t *)PEER_MAC, 0, PLDMA_MTU_1024);
    q.qpn = qpldma_qpn(&f.d, 0);
    qpldma_mac(&f.d, q.mac);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 11 + 5;
    }

    /* PSN 0, WRITE Only into the first page: a page request, RNR NAK */
    len = peer_frame(&q, fr, 0x0a, 0, VA_DST(0) + 64, rkey, pl, sizeof(pl));
    qpldma_stream_send(fd, fr, len);
    wait_requests(&f, r, 1);
    g_assert_cmphex(r[0].addr, ==, VA_DST(0));
    g_assert_cmpuint(r[0].pasid, ==, PASID);
    g_assert_true(r[0].write && r[0].lpig);
    g_assert_cmpint(peer_answer(&f, fd, &psn, &msn) & 0xe0, ==, 0x20);
    g_assert_cmpuint(psn, ==, 0);
    g_assert_cmpuint(qpldma_ncnt(&f.d, PLDMA_NCNT_RX_FAULTS), ==, 1);
    g_assert_cmphex(vtd_rdl(&f, DMAR_FSTS_REG) & (VTD_FSTS_PPF | VTD_FSTS_PFO),
                    ==, 0);

    /*
     * mapped and answered: the WRITE, held while its page was requested,
     * is applied and ACKed; nothing needs to be resent
     */
    map(&f, r[0].addr);
    pg_respond(&f, r[0].prgi, 0);
    g_assert_cmpint(peer_answer(&f, fd, &psn, &msn), <, 0x20);
    g_assert_cmpuint(psn, ==, 0);
    qpldma_mem_check(f.qts, VA_DST(0) + 64, pl, sizeof(pl));
    g_assert_cmpuint(qpldma_ncnt(&f.d, PLDMA_NCNT_PARKED), ==, 1);

    /* PSN 1 into the second page, which the OS cannot map */
    len = peer_frame(&q, fr, 0x0a, 1, VA_DST(0) + PAGE, rkey, pl, sizeof(pl));
    qpldma_stream_send(fd, fr, len);
    wait_requests(&f, r, 1);
    g_assert_cmphex(r[0].addr, ==, VA_DST(0) + PAGE);
    g_assert_cmpint(peer_answer(&f, fd, &psn, &msn) & 0xe0, ==, 0x20);
    pg_respond(&f, r[0].prgi, 1);
    g_assert_cmpint(peer_answer(&f, fd, &psn, &msn), ==, 0x63);
    g_assert_cmpuint(psn, ==, 1);
    g_assert_true(qpldma_mem_zero(f.qts, VA_DST(0) + PAGE, PAGE));

    close(fd);
    stop(&f);
    qpldma_link_cleanup(&link);
}

/*
 * The device's ATS translation cache.  A destination page moves to
 * another physical page; after the IOMMU's IOTLB is invalidated but not
 * the device's TLB, the device still writes the old page, as a device
 * with an ATC does (PCIe ATS: a translation stays usable until the
 * device-TLB invalidation); after the device-TLB invalidation it writes
 * the new one.  With ats-cache=off each access asks again: the IOTLB
 * invalidation alone moves it.
 */
static void test_ats_cache(void)
{
    const uint64_t alt = 0x07000000ULL;     /* the page's new home */
    Fixture f;
    int off;

    for (off = 0; off < 2; off++) {
        start(&f, off ? ",ats-cache=off" : NULL);
        map(&f, VA_DST(0));
        copy(&f, 0, PAGE);
        g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_SUCCESS);
        check_dst(&f, 0, PAGE);

        map_to(&f, VA_DST(0), alt);
        qtest_memset(f.qts, VA_DST(0), 0, PAGE);    /* the old page */
        qtest_memset(f.qts, alt, 0, PAGE);
        piotlb_inv(&f);
        copy(&f, 0, PAGE);
        g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_SUCCESS);
        if (!off) {
            check_dst(&f, 0, PAGE);
            g_assert_true(qpldma_mem_zero(f.qts, alt, PAGE));

            qtest_memset(f.qts, VA_DST(0), 0, PAGE);
            dev_piotlb_inv(&f, VA_DST(0));
            copy(&f, 0, PAGE);
            g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_SUCCESS);
        }
        g_assert_cmphex(qtest_readl(f.qts, alt + 4), ==, 4 * 7);
        g_assert_cmphex(qtest_readl(f.qts, alt + PAGE - 4), ==,
                        (PAGE - 4) * 7);
        g_assert_true(qpldma_mem_zero(f.qts, VA_DST(0), PAGE));
        if (!off) {
            /*
             * PASID off and on again: the ATC is forgotten with the
             * PASID (its notifier removed while PASID was still on; a
             * notifier left behind made the next registration loop
             * forever), so the page moving back needs the IOMMU's
             * invalidation only
             */
            cfg_wrw(&f, PASID_CAP + PCI_PASID_CTRL, 0);
            cfg_wrw(&f, PASID_CAP + PCI_PASID_CTRL, PCI_PASID_CTRL_ENABLE);
            map(&f, VA_DST(0));
            qtest_memset(f.qts, alt, 0, PAGE);
            piotlb_inv(&f);
            copy(&f, 0, PAGE);
            g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_SUCCESS);
            check_dst(&f, 0, PAGE);
            g_assert_true(qpldma_mem_zero(f.qts, alt, PAGE));
        }
        stop(&f);
    }
}

/*
 * The capability: PRI at 0x110 with PRG Response PASID Required and
 * Stopped, a capacity; PLDMA_CAP says pri.  While PRI is disabled a
 * missing page is an unrecoverable fault and no request is made; enabled,
 * the same copy waits for its page request's response.
 */
static void test_capability(void)
{
    Fixture f;
    PageReq r[16];

    start(&f, ",fault-mode=pri");
    g_assert_cmphex(cfg_rdl(&f, PRI_CAP) & 0xffff, ==, PCI_EXT_CAP_ID_PRI);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS), ==,
                    PCI_PRI_STATUS_PASID | PCI_PRI_STATUS_STOPPED);
    g_assert_cmpuint(cfg_rdl(&f, PRI_CAP + PCI_PRI_MAX_REQ), ==, 32);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_CAP) &
                    (PLDMA_CAP_FAULT_PRI | PLDMA_CAP_FAULT_STALL |
                     PLDMA_CAP_FAULT_REPORT), ==, PLDMA_CAP_FAULT_PRI);

    /* PRI disabled: no page request, the descriptor fails */
    copy(&f, 0, PAGE);
    g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_FAULT);
    g_assert_cmpint(prq_pop(&f, r, 16), ==, 0);

    /* enabled: Stopped clears, Reset reads 0, the copy waits for its page */
    pri_enable(&f, 8);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    PCI_PRI_STATUS_STOPPED, ==, 0);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_CTRL), ==,
                    PCI_PRI_CTRL_ENABLE);
    copy_faulting(&f, 0, PAGE, r, 1);
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_STALLED);
    g_assert_cmphex(r[0].rid, ==, DEVFN);
    g_assert_cmpuint(r[0].pasid, ==, PASID);
    g_assert_cmphex(r[0].addr, ==, VA_DST(0));
    g_assert_true(r[0].write);
    g_assert_false(r[0].read);
    g_assert_true(r[0].lpig);
    respond_done(&f, &r[0], 0, PAGE);
    stop(&f);

    /* report mode is still there, and stall is refused on PCI */
    f.qts = qtest_init(SM_ARGS);
    f.bus = qpci_new_pc(f.qts, NULL);
    f.dev = qpci_device_find(f.bus, DEVFN);
    qpci_device_enable(f.dev);
    f.bar = qpci_iomap(f.dev, PLDMA_PCI_BAR_REGS, NULL);
    qpldma_init(&f.d, f.qts, f.bar.addr);
    g_assert_cmphex(qpldma_rd(&f.d, PLDMA_CAP) &
                    (PLDMA_CAP_FAULT_PRI | PLDMA_CAP_FAULT_REPORT), ==,
                    PLDMA_CAP_FAULT_REPORT);
    stop(&f);
}

/*
 * A fault and the pages ahead of it (max-outstanding=4) go out as one
 * page request group: one PRGI, the last page with LPIG; one success
 * response completes the copy, with no second round trip, and resumes the
 * channel once.
 */
static void test_group_success(void)
{
    Fixture f;
    PageReq r[16];
    int i;

    start_pri(&f, ",max-outstanding=4", 8);
    copy_faulting(&f, 0, 4 * PAGE, r, 4);
    for (i = 0; i < 4; i++) {
        g_assert_cmphex(r[i].addr, ==, VA_DST(0) + i * PAGE);
        g_assert_cmpuint(r[i].prgi, ==, r[0].prgi);
        g_assert_true(r[i].write);
        g_assert(r[i].lpig == (i == 3));
        map(&f, r[i].addr);
    }
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_STALLED);
    /*
     * The translation requests that found no page were answered without
     * permission, not recorded as DMAR faults (patch "Do not record the
     * faults a Translation Request is answered with")
     */
    g_assert_cmphex(vtd_rdl(&f, DMAR_FSTS_REG) & (VTD_FSTS_PPF | VTD_FSTS_PFO),
                    ==, 0);
    pg_respond(&f, r[0].prgi, 0);
    g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_SUCCESS);
    check_dst(&f, 0, 4 * PAGE);
    g_assert_cmpint(prq_pop(&f, r, 16), ==, 0);
    g_assert_cmpuint(qpldma_rd(&f.d, PLDMA_CH_CNT(0) + PLDMA_CNT_STALLS), ==,
                     4);
    /*
     * ... and resumes the channel once: the pages ahead were answered by
     * the same response, so the channel does not park on each of them
     * and wait for the response to be replayed page by page (it was 4,
     * and each park probed up to 256 pages ahead again)
     */
    g_assert_cmpuint(qpldma_rd(&f.d, PLDMA_CH_CNT(0) + PLDMA_CNT_RESTARTS),
                     ==, 1);
    stop(&f);
}

/*
 * Invalid Request ends the descriptor (ABORTED); Response Failure too,
 * and sets PRI Status.RF, after which faults make no request (FAULT)
 * until the OS clears RF.  A response for a PRGI with nothing
 * outstanding sets UPRGI and changes nothing else.
 */
static void test_failure_invalid(void)
{
    Fixture f;
    PageReq r[16];

    start_pri(&f, NULL, 8);

    copy_faulting(&f, 0, PAGE, r, 1);
    pg_respond(&f, r[0].prgi, 1);
    g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_ABORTED);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    (PCI_PRI_STATUS_RF | PCI_PRI_STATUS_UPRGI), ==, 0);

    copy_faulting(&f, 0, PAGE, r, 1);
    pg_respond(&f, r[0].prgi, 0xf);
    g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_ABORTED);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    PCI_PRI_STATUS_RF, ==, PCI_PRI_STATUS_RF);

    copy(&f, 0, PAGE);
    g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_FAULT);
    g_assert_cmpint(prq_pop(&f, r, 16), ==, 0);

    /* the same PRGI again: nothing is outstanding under it */
    pg_respond(&f, r[0].prgi, 0);
    steps(&f, 5);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    PCI_PRI_STATUS_UPRGI, ==, PCI_PRI_STATUS_UPRGI);

    cfg_wrw(&f, PRI_CAP + PCI_PRI_STATUS,
            PCI_PRI_STATUS_RF | PCI_PRI_STATUS_UPRGI);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    (PCI_PRI_STATUS_RF | PCI_PRI_STATUS_UPRGI), ==, 0);
    copy_faulting(&f, 0, PAGE, r, 1);
    respond_done(&f, &r[0], 0, PAGE);
    stop(&f);
}

/* Two channels' groups answered in the opposite order */
static void test_out_of_order(void)
{
    Fixture f;
    PageReq r[16];

    start_pri(&f, NULL, 8);
    copy(&f, 0, PAGE);
    copy_faulting(&f, 1, PAGE, r, 2);
    g_assert_cmpuint(r[0].prgi, !=, r[1].prgi);
    g_assert_cmphex(r[0].addr, ==, VA_DST(0));
    g_assert_cmphex(r[1].addr, ==, VA_DST(1));

    respond_done(&f, &r[1], 1, PAGE);
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qtest_readl(f.qts, VA_COMPL(0)), ==, PLDMA_ST_PENDING);

    respond_done(&f, &r[0], 0, PAGE);
    stop(&f);
}

/*
 * An allocation of 1: one request outstanding at a time.  The second
 * channel's request waits until the first is answered, and no page ahead
 * is requested (max-outstanding=4) beyond the allocation.
 */
static void test_alloc_limit(void)
{
    Fixture f;
    PageReq r[16];

    start_pri(&f, ",max-outstanding=4", 1);
    copy(&f, 0, 2 * PAGE);
    copy_faulting(&f, 1, PAGE, r, 1);
    g_assert_cmphex(r[0].addr, ==, VA_DST(0));
    g_assert_true(r[0].lpig);
    g_assert_cmpuint(ch_state(&f, 1), ==, PLDMA_STATE_STALLED);

    map(&f, VA_DST(0));
    pg_respond(&f, r[0].prgi, 0);
    /* channel 1's request goes out, then channel 0's next page */
    wait_requests(&f, r, 1);
    g_assert_cmphex(r[0].addr, ==, VA_DST(1));
    respond_done(&f, &r[0], 1, PAGE);
    wait_requests(&f, r, 1);
    g_assert_cmphex(r[0].addr, ==, VA_DST(0) + PAGE);
    respond_done(&f, &r[0], 0, 2 * PAGE);
    stop(&f);
}

/*
 * A system reset with a request outstanding: the device forgets it (PRI
 * disabled and Stopped, no allocation, the channel disabled); the old
 * response, once the OS has set everything up again, reaches nobody, and
 * the device works again.
 */
static void test_reset(void)
{
    Fixture f;
    PageReq r[16];

    start_pri(&f, NULL, 8);
    copy_faulting(&f, 0, PAGE, r, 1);
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_STALLED);

    qobject_unref(qtest_qmp(f.qts, "{ 'execute': 'system_reset' }"));
    qtest_qmp_eventwait(f.qts, "RESET");
    ecam_enable(&f);
    g_assert_cmphex(cfg_rdl(&f, PRI_CAP) & 0xffff, ==, PCI_EXT_CAP_ID_PRI);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_CTRL), ==, 0);
    g_assert_cmpuint(cfg_rdl(&f, PRI_CAP + PCI_PRI_ALLOC_REQ), ==, 0);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS), ==,
                    PCI_PRI_STATUS_PASID | PCI_PRI_STATUS_STOPPED);

    g_free(f.dev);
    iommu_setup(&f);
    dev_setup(&f);
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_IDLE);
    pri_enable(&f, 8);
    map(&f, VA_DST(0));
    pg_respond(&f, r[0].prgi, 0);
    steps(&f, 5);
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_IDLE);

    copy_faulting(&f, 0, 2 * PAGE, r, 1);
    g_assert_cmphex(r[0].addr, ==, VA_DST(0) + PAGE);
    respond_done(&f, &r[0], 0, 2 * PAGE);
    stop(&f);
}

/* The destination of channel @ch's copy was never written (VA == PA) */
static void check_dst_untouched(Fixture *f, int ch, uint32_t len)
{
    uint32_t i;

    for (i = 0; i < len; i += 4) {
        g_assert_cmphex(qtest_readl(f->qts, VA_DST(ch) + i), ==, 0);
    }
}

/*
 * A group whose response is Success while only some of its pages were
 * made present: the channel goes on where it can and asks again for the
 * pages still missing, never reporting success for data that did not
 * arrive.  A group answered with Invalid Request ends the descriptor,
 * ABORTED, with nothing written.
 */
static void test_group_partial_invalid(void)
{
    Fixture f;
    PageReq r[16];
    int i;

    start_pri(&f, ",max-outstanding=4", 8);
    copy_faulting(&f, 0, 4 * PAGE, r, 4);
    map(&f, VA_DST(0));
    map(&f, VA_DST(0) + PAGE);
    pg_respond(&f, r[0].prgi, 0);
    /*
     * Pages 2 and 3 are asked for again, as one new group (the response
     * answered the whole first group: the channel ran on to page 2 and
     * asked for it and the page ahead); the copy has not completed
     */
    wait_requests(&f, r, 2);
    for (i = 0; i < 2; i++) {
        g_assert_cmphex(r[i].addr, ==, VA_DST(0) + (2 + i) * PAGE);
        g_assert_cmpuint(r[i].prgi, ==, r[0].prgi);
        g_assert(r[i].lpig == (i == 1));
        map(&f, r[i].addr);
    }
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(qtest_readl(f.qts, VA_COMPL(0)), ==, PLDMA_ST_PENDING);
    pg_respond(&f, r[0].prgi, 0);
    g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_SUCCESS);
    check_dst(&f, 0, 4 * PAGE);
    g_assert_cmpint(prq_pop(&f, r, 16), ==, 0);

    /* channel 1: four pages asked for, Invalid Request: nothing written */
    copy_faulting(&f, 1, 4 * PAGE, r, 4);
    pg_respond(&f, r[0].prgi, 1);
    g_assert_cmpuint(wait_compl(&f, 1), ==, PLDMA_ST_ABORTED);
    check_dst_untouched(&f, 1, 4 * PAGE);
    g_assert_cmpint(prq_pop(&f, r, 16), ==, 0);
    g_assert_cmpuint(ch_state(&f, 1), ==, PLDMA_STATE_IDLE);
    stop(&f);
}

/*
 * PRI Control.Enable cleared with a request outstanding: Stopped stays
 * clear until it is answered, a new fault makes no request (FAULT), and
 * the response still resumes the channel.  PRI Control.Reset (Enable
 * clear) with a request outstanding ends its descriptor (ABORTED) and
 * sets Stopped; the late response finds nothing (UPRGI).
 */
static void test_disable_pri_reset(void)
{
    Fixture f;
    PageReq r[16];

    start_pri(&f, NULL, 8);
    copy_faulting(&f, 0, PAGE, r, 1);
    cfg_wrw(&f, PRI_CAP + PCI_PRI_CTRL, 0);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    PCI_PRI_STATUS_STOPPED, ==, 0);
    copy(&f, 1, PAGE);
    g_assert_cmpuint(wait_compl(&f, 1), ==, PLDMA_ST_FAULT);
    g_assert_cmpint(prq_pop(&f, r + 1, 15), ==, 0);
    respond_done(&f, &r[0], 0, PAGE);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    PCI_PRI_STATUS_STOPPED, ==, PCI_PRI_STATUS_STOPPED);

    /* Reset: the waiting channel ends, nothing stays outstanding */
    pri_enable(&f, 8);
    copy_faulting(&f, 1, PAGE, r, 1);
    g_assert_cmpuint(ch_state(&f, 1), ==, PLDMA_STATE_STALLED);
    cfg_wrw(&f, PRI_CAP + PCI_PRI_CTRL, 0);
    cfg_wrw(&f, PRI_CAP + PCI_PRI_CTRL, PCI_PRI_CTRL_RESET);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_CTRL), ==, 0);
    g_assert_cmpuint(wait_compl(&f, 1), ==, PLDMA_ST_ABORTED);
    check_dst_untouched(&f, 1, PAGE);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    PCI_PRI_STATUS_STOPPED, ==, PCI_PRI_STATUS_STOPPED);
    pg_respond(&f, r[0].prgi, 0);
    steps(&f, 5);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    PCI_PRI_STATUS_UPRGI, ==, PCI_PRI_STATUS_UPRGI);
    stop(&f);
}

/*
 * CANCEL of a channel waiting for a page: its descriptor ends
 * (CANCELLED); the request stays outstanding, and until it is answered
 * the channel's faults make no new request.  The response then reaches
 * no channel (and is no UPRGI: the device still held the request), and
 * the next copy asks again.
 */
static void test_cancel(void)
{
    Fixture f;
    PageReq r[16];

    start_pri(&f, NULL, 8);
    copy_faulting(&f, 0, PAGE, r, 1);
    qpldma_ch_wr(&f.d, 0, PLDMA_CH_CMD, PLDMA_CMD_CANCEL);
    g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_CANCELLED);
    check_dst_untouched(&f, 0, PAGE);

    copy(&f, 0, PAGE);
    g_assert_cmpuint(wait_compl(&f, 0), ==, PLDMA_ST_FAULT);
    g_assert_cmpint(prq_pop(&f, r + 1, 15), ==, 0);

    pg_respond(&f, r[0].prgi, 0);
    steps(&f, 5);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_STATUS) &
                    PCI_PRI_STATUS_UPRGI, ==, 0);
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_IDLE);

    copy_faulting(&f, 0, PAGE, r, 1);
    respond_done(&f, &r[0], 0, PAGE);
    stop(&f);
}

/*
 * Migration with page requests outstanding: with an allocation of 1,
 * channel 0's group of one page is sent and channel 1's waits, queued.
 * The machine moves through a file to a new QEMU; there the response to
 * channel 0's request (from the page request queue, which moved with the
 * guest's memory) resumes it, channel 1's request goes out, and both
 * copies complete with their bytes.
 */
static void test_migrate(void)
{
    g_autofree char *path = NULL;
    QTestState *dst;
    Fixture f;
    PageReq r[16];

    start_pri(&f, ",max-outstanding=4", 1);
    copy(&f, 0, PAGE);
    copy_faulting(&f, 1, PAGE, r, 1);
    g_assert_cmphex(r[0].addr, ==, VA_DST(0));
    g_assert_cmpuint(ch_state(&f, 1), ==, PLDMA_STATE_STALLED);

    path = qpldma_migrate_to_file(f.qts, "x86-pldma-pri-XXXXXX");
    g_free(f.dev);
    qpci_free_pc(f.bus);
    qtest_quit(f.qts);

    dst = qtest_initf(SM_ARGS ",fault-mode=pri,max-outstanding=4 "
                      "-incoming defer");
    g_assert_true(qpldma_migrate_from_file(dst, path));
    unlink(path);
    f.qts = dst;
    f.d.qts = dst;
    f.bus = qpci_new_pc(dst, NULL);
    f.dev = qpci_device_find(f.bus, DEVFN);
    g_assert(f.dev);

    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_STALLED);
    g_assert_cmpuint(ch_state(&f, 1), ==, PLDMA_STATE_STALLED);
    g_assert_cmphex(cfg_rdw(&f, PRI_CAP + PCI_PRI_CTRL), ==,
                    PCI_PRI_CTRL_ENABLE);
    g_assert_cmpint(prq_pop(&f, r + 1, 15), ==, 0);
    respond_done(&f, &r[0], 0, PAGE);
    wait_requests(&f, r, 1);
    g_assert_cmphex(r[0].addr, ==, VA_DST(1));
    respond_done(&f, &r[0], 1, PAGE);
    stop(&f);
}

/*
 * Hot-unplug with a request outstanding: pldma-pci behind a
 * pcie-root-port (native PCIe hot-plug: ACPI's is off), a channel
 * waiting for its page.  device_del and the OS's answer (slot power
 * off) remove it (DEVICE_DELETED, the object finalized); the page group
 * response the OS then sends for the request reaches nobody (the
 * device's PRI notifier went with it: no use after free), intel-iommu
 * takes it without an error, and QEMU runs on.
 */
static void test_unplug(void)
{
    Fixture f;
    PageReq r[16];
    uint64_t rp = ECAM + (RP_DEVFN << 12);
    uint32_t exp = 0, cap, i;
    uint16_t sltctl;
    QDict *ev = NULL;

    memset(&f, 0, sizeof(f));
    f.busn = 1;
    f.devfn = 0;
    f.qts = qtest_init("-M q35 -m 256M -nodefaults "
                       "-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support"
                       "=off "
                       "-device intel-iommu,x-scalable-mode=on,x-flts=on,"
                       "x-pasid-mode=on,device-iotlb=on,x-prs=on,x-smpwc=on "
                       "-device pcie-root-port,id=rp1,bus=pcie.0,addr=3.0,"
                       "chassis=1,slot=1 "
                       "-device pldma-pci,id=dma1,bus=rp1,num-channels=2,"
                       "fault-mode=pri");
    iommu_setup(&f);
    dev_setup(&f);
    pri_enable(&f, 8);
    copy_faulting(&f, 0, PAGE, r, 1);
    g_assert_cmphex(r[0].rid, ==, rid(&f));
    g_assert_cmpuint(ch_state(&f, 0), ==, PLDMA_STATE_STALLED);

    qtest_qmp_device_del_send(f.qts, "dma1");
    for (cap = qtest_readb(f.qts, rp + PCI_CAPABILITY_LIST); cap;
         cap = qtest_readb(f.qts, rp + cap + PCI_CAP_LIST_NEXT)) {
        if (qtest_readb(f.qts, rp + cap) == PCI_CAP_ID_EXP) {
            exp = cap;
            break;
        }
    }
    g_assert_cmpuint(exp, !=, 0);
    sltctl = qtest_readw(f.qts, rp + exp + PCI_EXP_SLTCTL);
    sltctl &= ~PCI_EXP_SLTCTL_PIC;
    sltctl |= PCI_EXP_SLTCTL_PWR_IND_OFF | PCI_EXP_SLTCTL_PCC;
    qtest_writew(f.qts, rp + exp + PCI_EXP_SLTCTL, sltctl);
    for (i = 0; i < 500 && !ev; i++) {
        qtest_qmp_assert_success(f.qts, "{ 'execute': 'query-status' }");
        ev = qtest_qmp_event_ref(f.qts, "DEVICE_DELETED");
        if (!ev) {
            g_usleep(2000);
        }
    }
    g_assert_nonnull(ev);
    g_assert_cmpstr(qdict_get_try_str(qdict_get_qdict(ev, "data"),
                                      "device"), ==, "dma1");
    qobject_unref(ev);
    g_assert_cmphex(cfg_rdw(&f, PCI_VENDOR_ID), ==, 0xffff);

    /* the late response: taken by the IOMMU, delivered to nobody */
    map(&f, VA_DST(0));
    pg_respond(&f, r[0].prgi, 0);
    steps(&f, 5);
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'query-status' }");
    check_dst_untouched(&f, 0, PAGE);
    qtest_quit(f.qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/x86/pldma-pri/capability", test_capability);
    qtest_add_func("/x86/pldma-pri/ats-cache", test_ats_cache);
    qtest_add_func("/x86/pldma-pri/group-success", test_group_success);
    qtest_add_func("/x86/pldma-pri/failure-invalid", test_failure_invalid);
    qtest_add_func("/x86/pldma-pri/out-of-order", test_out_of_order);
    qtest_add_func("/x86/pldma-pri/alloc-limit", test_alloc_limit);
    qtest_add_func("/x86/pldma-pri/group-partial-invalid",
                   test_group_partial_invalid);
    qtest_add_func("/x86/pldma-pri/disable-pri-reset",
                   test_disable_pri_reset);
    qtest_add_func("/x86/pldma-pri/cancel", test_cancel);
    qtest_add_func("/x86/pldma-pri/reset", test_reset);
    qtest_add_func("/x86/pldma-pri/migrate", test_migrate);
    qtest_add_func("/x86/pldma-pri/unplug", test_unplug);
    qtest_add_func("/x86/pldma-pri/responder", test_responder);
    return g_test_run();
}
