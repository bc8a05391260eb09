/*
 * Fixtures of the PLDMA qtests: nodes with their QTestState and allocator,
 * two nodes linked by -netdev stream, the test itself as the peer of a
 * node on a socket (its own RoCEv2 frames), keys, QPs with their queues,
 * posting and waiting; and the descriptor rings of the engine on one node
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "pldma/framework.h"

/* ---- nodes ---- */

uint64_t alloc_pa(Node *n, uint64_t size)
{
    uint64_t pa = QEMU_ALIGN_UP(n->next, PAGE);

    n->next = pa + QEMU_ALIGN_UP(size, PAGE);
    qtest_memset(n->qts, pa, 0, QEMU_ALIGN_UP(size, PAGE));
    return pa;
}

void node_start(Node *n, const char *args)
{
    n->qts = qtest_init(args);
    n->next = ALLOC_BASE;
    qpldma_init(&n->d, n->qts, PLDMA_BASE);
}

uint32_t ncnt(Node *n, int i)
{
    return qpldma_ncnt(&n->d, i);
}

/*
 * A buffer: physical pages, mapped at VA_BASE + (pa - ALLOC_BASE) in the
 * PASID's tables when the node has an SMMU (pages in @hole left out).
 * Returns the address the device uses.
 */
uint64_t buffer(Node *n, uint64_t size, uint64_t *pa, int hole)
{
    uint64_t off, va;

    *pa = alloc_pa(n, size);
    if (!n->smmu) {
        return *pa;
    }
    va = VA_BASE + (*pa - ALLOC_BASE);
    for (off = 0; off < size; off += PAGE) {
        if (hole < 0 || off != (uint64_t)hole * PAGE) {
            qsmmu_map(&n->s, n->pt_root, va + off, *pa + off, true);
        }
    }
    return va;
}

/* A node's PD: its PASID behind its SMMU, else none */
uint32_t node_pd(Node *n)
{
    return n->smmu ? (PASID | PLDMA_CHB_PASID_EN) : 0;
}

/* ---- SMMU ---- */

/*
 * @n's SMMU in front of its PLDMA: a linear CD table of 2^@cd_log2
 * contexts, no-PASID traffic (the fault queue) bypassing stage 1, stalls
 * allowed unless the device is in @report mode (as Linux does without
 * dma-can-stall)
 */
void node_smmu_init(Node *n, uint32_t cd_log2, bool report)
{
    n->smmu = true;
    n->report = report;
    qsmmu_init(&n->s, n->qts, QSMMU_VIRT_BASE, SMMU_MEM, SMMU_MEM_SIZE);
    qsmmu_enable(&n->s);
    n->cd_table = qsmmu_cd_table(&n->s, cd_log2);
    qsmmu_set_ste_s1(&n->s, SID, n->cd_table, cd_log2, QSMMU_S1DSS_BYPASS,
                     report);
}

/*
 * Create the context descriptor (address space) of @pasid, its ASID the
 * PASID; returns the root of its stage-1 tables
 */
uint64_t node_smmu_pasid(Node *n, uint32_t pasid)
{
    g_assert_cmpuint(pasid, <, NODE_PASIDS);
    n->pasid_root[pasid] = qsmmu_pgtable_new(&n->s);
    qsmmu_write_cd(&n->s, n->cd_table, pasid, pasid, n->pasid_root[pasid],
                   !n->report);
    qsmmu_cfgi_cd(&n->s, SID, pasid);
    return n->pasid_root[pasid];
}

/* A fault queue of 64 records */
void node_fq_init(Node *n)
{
    n->fq = alloc_pa(n, 64 * PLDMA_FR_SIZE);
    qpldma_wr(&n->d, PLDMA_FQ_BASE_LO, (uint32_t)n->fq);
    qpldma_wr(&n->d, PLDMA_FQ_BASE_HI, n->fq >> 32);
    qpldma_wr(&n->d, PLDMA_FQ_SIZE, 64);
    qpldma_wr(&n->d, PLDMA_FQ_CTRL, PLDMA_FQ_CTRL_ENABLE);
}

/*
 * @n's SMMU (2^CD_LOG2 contexts) in report mode or (@stall) in stall
 * mode: PASID's stage-1 tables (n->pt_root); with @fq a fault queue
 */
void smmu_setup(Node *n, bool stall, bool fq)
{
    node_smmu_init(n, CD_LOG2, !stall);
    n->pt_root = node_smmu_pasid(n, PASID);
    if (fq) {
        node_fq_init(n);
    }
}

/* ---- two nodes linked by -netdev stream ---- */

/*
 * A node on @netdev, with properties @dev and @extra (NULL: none),
 * fault-mode @mode unless NULL; with @smmu behind its SMMU, PASID's
 * tables, a fault queue in report mode
 */
void node_start_net(Node *n, const char *dev, const char *netdev,
                    bool smmu, const char *mode, const char *extra)
{
    g_autofree char *args = NULL;

    args = g_strdup_printf("-M virt%s -m 512M -nodefaults "
                           "-device pldma,id=dma0%s%s,netdev=n0,%s%s "
                           "-netdev %s", smmu ? ",iommu=smmuv3" : "",
                           mode ? ",fault-mode=" : "", mode ? mode : "",
                           dev, extra ? extra : "", netdev);
    node_start(n, args);
    if (smmu) {
        smmu_setup(n, strcmp(mode, "report"), !strcmp(mode, "report"));
    }
}

/*
 * B (node 2) listens, A (node 1) connects; either may have an SMMU and
 * extra properties.  With @o->connect, the link's registers are checked
 * and QP 0 is connected to QP 0, PSNs from 0.
 */
Pair *pair_start_args(const PairArgs *o)
{
    Pair *p = g_new0(Pair, 1);
    g_autofree char *a_link = NULL, *a_net = NULL, *b_net = NULL;

    qpldma_link_init(&p->link, o->tmpl);
    p->pcap = g_strdup_printf("%s/a.pcap", p->link.dir);
    b_net = qpldma_link_netdev(&p->link, true);
    a_link = qpldma_link_netdev(&p->link, false);
    a_net = g_strdup_printf("%s%s%s", a_link,
                            o->capture ? " -object filter-dump,id=f0,"
                                         "netdev=n0,file=" : "",
                            o->capture ? p->pcap : "");
    node_start_net(&p->b, "node-id=2", b_net, o->b_smmu, o->b_mode,
                   o->b_extra);
    if (o->b_smmu && o->fq_stall && strcmp(o->b_mode, "report")) {
        node_fq_init(&p->b);
    }
    node_start_net(&p->a, "node-id=1", a_net, o->a_smmu, o->a_mode,
                   o->a_extra);
    qpldma_link_wait(p->a.qts);
    qpldma_link_wait(p->b.qts);
    if (!o->connect) {
        return p;
    }
    g_assert_cmpuint(qpldma_rd(&p->a.d, PLDMA_CAP) & PLDMA_CAP_REMOTE, !=, 0);
    g_assert_cmpuint(qpldma_rd(&p->a.d, PLDMA_NET_NODE), ==, 1);
    g_assert_cmpuint(qpldma_rd(&p->b.d, PLDMA_NET_NODE), ==, 2);
    p->path_mtu = PLDMA_MTU_1024;
    pair_connect_zero(p);
    return p;
}

/*
 * A pair, QPs not connected; B may have an SMMU, in report mode or
 * (@stall) in stall mode, with a fault queue in either
 */
Pair *pair_start_mode(bool b_smmu, bool stall)
{
    PairArgs o = {
        .tmpl = "pldma-qp-XXXXXX", .b_smmu = b_smmu,
        .b_mode = !b_smmu ? NULL : stall ? "stall" : "report",
        .fq_stall = true,
    };

    return pair_start_args(&o);
}

Pair *pair_start_smmu(bool b_smmu)
{
    return pair_start_mode(b_smmu, false);
}

Pair *pair_start(void)
{
    return pair_start_smmu(false);
}

/*
 * A pair connected QP 0 to QP 0 (PSNs from 0); either may have an SMMU
 * (fault-mode @a_mode, @b_mode), extra properties, A's frames captured
 */
Pair *pair_start_net_a(bool a_smmu, const char *a_mode, bool b_smmu,
                       const char *b_mode, const char *a_extra,
                       const char *b_extra, bool capture)
{
    PairArgs o = {
        .tmpl = "pldma-net-XXXXXX", .a_smmu = a_smmu, .b_smmu = b_smmu,
        .a_mode = a_mode, .b_mode = b_mode, .a_extra = a_extra,
        .b_extra = b_extra, .capture = capture, .connect = true,
    };

    return pair_start_args(&o);
}

Pair *pair_start_net(bool b_smmu, const char *b_mode, const char *a_extra,
                     const char *b_extra, bool capture)
{
    return pair_start_net_a(false, "stall", b_smmu, b_mode, a_extra, b_extra,
                            capture);
}

void pair_stop(Pair *p)
{
    if (p->a.qts) {
        qtest_quit(p->a.qts);
    }
    if (p->b.qts) {
        qtest_quit(p->b.qts);
    }
    if (p->pcap) {
        unlink(p->pcap);
    }
    qpldma_link_cleanup(&p->link);
    g_free(p->pcap);
    g_free(p);
}

/*
 * While waiting: let both nodes' virtual clocks run when the test needs
 * their timers (loss, RNR timer, a dead peer), else just let time pass:
 * the nodes answer each other from their main loops, and a clock stepped
 * much faster than the real link would fire retransmit timers spuriously.
 */
void step(void *opaque)
{
    Pair *p = opaque;

    g_usleep(200);
    if (!p->timers) {
        return;
    }
    qtest_clock_step(p->a.qts, STEP_NS);
    if (p->b.qts) {
        qtest_clock_step(p->b.qts, STEP_NS);
    }
}

/* ---- queue pairs ---- */

uint32_t rand_psn(void)
{
    return g_test_rand_int() & 0xffffff;
}

/* QP attributes of a connection to a peer */
void attr_to(QPldmaQPAttr *at, const uint8_t *mac, uint32_t ip,
             uint32_t qpn, uint32_t sq_psn, uint32_t rq_psn, int sq)
{
    memset(at, 0, sizeof(*at));
    at->sq = sq;
    at->pd = 0;
    at->access = PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ;
    at->dest_qpn = qpn;
    at->dest_ip = ip;
    memcpy(at->dest_mac, mac, 6);
    at->sq_psn = sq_psn;
    at->rq_psn = rq_psn;
    at->path_mtu = PLDMA_MTU_1024;
    at->timers = TIMERS;
}

/* RESET -> INIT -> RTR -> RTS with @at, each step checked */
void qp_connect(Node *n, uint32_t idx, QPldmaQPAttr *at)
{
    at->state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_INIT, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTR, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTS;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTS, at),
                     ==, PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(&n->d, idx), ==, PLDMA_QPS_RTS);
}

void qp_reset(Node *n, uint32_t idx)
{
    QPldmaQPAttr at = { .state = PLDMA_QPS_RESET };

    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
}

/*
 * A's QP 0 (SQ channel 0) to B's QP 0 (SQ channel 0, PD @b_pd), random
 * PSNs
 */
void pair_connect_pd(Pair *p, uint32_t *a_psn, uint32_t *b_psn,
                     uint32_t b_pd)
{
    uint8_t mac_a[6], mac_b[6];
    QPldmaQPAttr at;

    *a_psn = rand_psn();
    *b_psn = rand_psn();
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), *b_psn, *a_psn, 0);
    at.pd = b_pd;
    qp_connect(&p->b, 0, &at);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), *a_psn, *b_psn, 0);
    qp_connect(&p->a, 0, &at);
}

void pair_connect(Pair *p, uint32_t *a_psn, uint32_t *b_psn)
{
    pair_connect_pd(p, a_psn, b_psn, 0);
}

/*
 * Post an RDMA op on @r, with @rsvd in its reserved bytes 2-3 (0 but to
 * test their check); returns the record's PA
 */
uint64_t post_rsvd(Node *n, QPldmaRing *r, uint8_t op, uint16_t rsvd,
                   uint32_t len, uint64_t local, uint64_t rva,
                   uint32_t rkey)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t compl = alloc_pa(n, PLDMA_COMPL_SIZE);

    qpldma_desc_rdma(d, op, len, local, rva, rkey, compl);
    stw_le_p(d + PLDMA_DESC_RSVD2, rsvd);
    qpldma_ring_post(&n->d, r, d);
    return compl;
}

uint64_t post(Node *n, QPldmaRing *r, uint8_t op, uint32_t len,
              uint64_t local, uint64_t rva, uint32_t rkey)
{
    return post_rsvd(n, r, op, 0, len, local, rva, rkey);
}

uint32_t wait_compl(Pair *p, uint64_t compl, uint64_t *bytes)
{
    return qpldma_wait_compl(&p->a.d, compl, step, p, WAIT_STEPS, bytes);
}

void ring_init(Node *n, QPldmaRing *r, int ch)
{
    qpldma_ring_init(&n->d, r, ch, alloc_pa(n, 16 * PLDMA_DESC_SIZE), 16, 0);
}

uint32_t key_register(Node *n, uint32_t idx, uint32_t pasid_reg,
                      uint64_t va, uint64_t len, uint32_t access)
{
    uint32_t rkey;

    g_assert_cmpuint(qpldma_key_register(&n->d, idx, pasid_reg, va, len,
                                         access, &rkey), ==,
                     PLDMA_KEY_ST_OK);
    return rkey;
}

/* The staged attributes and the state of QP @idx, to compare */
void snapshot(Node *n, uint32_t idx, QPldmaQPAttr *at, uint32_t *qpn)
{
    qpldma_qp_query(&n->d, idx, at);
    *qpn = qpldma_qpn(&n->d, idx);
}

/* A modify that must be refused with @status, leaving QP @idx as it was */
void refused(Node *n, uint32_t idx, uint32_t mask,
             const QPldmaQPAttr *at, uint32_t status)
{
    QPldmaQPAttr before, after;
    uint32_t qpn0, qpn1;

    snapshot(n, idx, &before, &qpn0);
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, mask, at), ==, status);
    snapshot(n, idx, &after, &qpn1);
    g_assert_cmpuint(qpn0, ==, qpn1);
    g_assert_true(memcmp(&before, &after, sizeof(before)) == 0);
}

/*
 * Pop B's next fault record: a responder fault at @va, offset @off; with
 * @pasid, of B's PASID
 */
void pop_remote_fault(Pair *p, uint32_t rkey, uint64_t va,
                      uint32_t off, bool is_write, bool pasid)
{
    Node *b = &p->b;
    uint8_t rec[PLDMA_FR_SIZE];

    qpldma_fq_pop(&b->d, b->fq, 64, rec, step, p, WAIT_STEPS);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_CHANNEL), ==, PLDMA_FR_CH_REMOTE);
    g_assert_cmphex(lduw_le_p(rec + PLDMA_FR_FLAGS), ==,
                    PLDMA_FR_F_REMOTE | (is_write ? PLDMA_FR_F_WRITE : 0));
    if (pasid) {
        g_assert_cmphex((uint32_t)ldl_le_p(rec + PLDMA_FR_PASID), ==,
                        PASID | PLDMA_CHB_PASID_EN);
    }
    g_assert_cmphex((uint32_t)ldl_le_p(rec + PLDMA_FR_DESC), ==, rkey);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==, va);
    g_assert_cmpuint(ldl_le_p(rec + PLDMA_FR_DONE), ==, off);
}

/* ---- a hostile peer: the test itself on the other end of the link ---- */

/* A RoCEv2 frame from @src to the device; returns its length */
uint32_t roce_frame(uint8_t *f, uint32_t src, uint8_t op, uint32_t qpn,
                    uint32_t psn, bool reth, uint64_t va, uint32_t rkey,
                    uint32_t dmalen, int aeth_syn, uint32_t msn,
                    const uint8_t *pl, uint32_t plen)
{
    QPldmaRoce r = {
        .dst_mac = (const uint8_t *)"\x52\x54\x00\x4c\x44\x01",
        .src_mac = (const uint8_t *)PEER_MAC,
        .src_ip = src, .dst_ip = IP_A, .op = op, .qpn = qpn, .psn = psn,
        .reth = reth, .va = va, .rkey = rkey, .dmalen = dmalen,
        .aeth_syn = aeth_syn, .msn = msn, .pl = pl, .plen = plen,
    };

    return qpldma_roce_frame(f, &r);
}

/* Send a frame and wait until the device has taken it */
void peer_inject(Peer *pe, const uint8_t *f, uint32_t len)
{
    uint32_t rx = ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES);
    int i;

    qpldma_stream_send(pe->fd, f, len);
    for (i = 0; i < 10000 && ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES) == rx; i++) {
        g_usleep(100);
    }
    g_assert_cmpuint(ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES), ==, rx + 1);
}

/*
 * The next frame the device sends us; false if none comes.  QEMU's own
 * announcements after a migration (RARP, broadcast) are not the device's:
 * skipped.
 */
bool peer_rx(Peer *pe, Rx *rx)
{
    uint8_t f[8192];
    uint32_t len;
    const uint8_t *q = f + 14 + 28;
    bool reth;

    do {
        len = qpldma_stream_recv(pe->fd, f, sizeof(f));
    } while (len >= 14 && lduw_be_p(f + 12) == 0x8035);
    if (!len) {
        return false;
    }
    g_assert_cmpuint(len, >=, 14 + 20 + 8 + 12 + 4);
    g_assert_true(memcmp(f, PEER_MAC, 6) == 0);
    rx->src_ip = ldl_be_p(f + 14 + 12);
    rx->dst_ip = ldl_be_p(f + 14 + 16);
    rx->op = q[0];
    rx->qpn = ldl_be_p(q + 4) & 0xffffff;
    rx->psn = ldl_be_p(q + 8) & 0xffffff;
    rx->syn = -1;
    /* (Acknowledge, Atomic Acknowledge, READ Response First/Last/Only) */
    if (rx->op == 0x11 || rx->op == 0x12 ||
        (rx->op >= 0x0d && rx->op <= 0x10 && rx->op != 0x0e)) {
        rx->syn = q[12];
        rx->msn = ldl_be_p(q + 12) & 0xffffff;
    }
    /* (WRITE First, Only, READ Request, Atomic Write) */
    reth = rx->op == 0x06 || rx->op == 0x0a || rx->op == 0x0c ||
           rx->op == 0x1d;
    if (reth) {
        rx->va = ldq_be_p(q + 12);
        rx->rkey = ldl_be_p(q + 20);
        rx->dmalen = ldl_be_p(q + 24);
    }
    /* UDP length - UDP, BTH, RETH or AETH, pad, ICRC */
    rx->plen = lduw_be_p(f + 14 + 20 + 4) - 8 - 12 -
               (rx->syn >= 0 ? 4 : 0) - (reth ? 16 : 0) -
               ((q[1] >> 4) & 3) - 4;
    memcpy(rx->data, q + 12 + (rx->syn >= 0 ? 4 : 0) + (reth ? 16 : 0),
           MIN(rx->plen, sizeof(rx->data)));
    return true;
}

/* The device's answer: syndrome and PSN of an Acknowledge, checked */
int peer_answer(Peer *pe, uint32_t *psn, uint32_t *msn)
{
    Rx rx;

    if (!peer_rx(pe, &rx)) {
        return -1;
    }
    g_assert_cmpuint(rx.op, ==, 0x11);
    g_assert_cmphex(rx.qpn, ==, pe->my_qpn);
    g_assert_cmphex(rx.dst_ip, ==, IP_B);
    g_assert_cmphex(rx.src_ip, ==, IP_A);
    *psn = rx.psn;
    if (msn) {
        *msn = rx.msn;
    }
    return rx.syn;
}

/*
 * The device's node @n listens on a socket with @dev (its command line but
 * the -netdev; the whole in pe->args), the test connects to it
 */
void peer_listen(Peer *pe, Node *n, const char *tmpl, const char *dev)
{
    g_autofree char *net = NULL;

    qpldma_link_init(&pe->link, tmpl);
    net = qpldma_link_netdev(&pe->link, true);
    pe->args = g_strdup_printf("%s -netdev %s", dev, net);
    node_start(n, pe->args);
    pe->d = &n->d;
    pe->fd = qpldma_link_connect(&pe->link);
    qpldma_link_wait(n->qts);
}

void peer_stop(Peer *pe, Node *n)
{
    close(pe->fd);
    qtest_quit(n->qts);
    qpldma_link_cleanup(&pe->link);
    g_free(pe->args);
    pe->args = NULL;
}

/*
 * Node 1 with QP 0 connected to us (QPN my_qpn at 10.0.0.2), @props added
 * to the device's properties; with @smmu, behind its SMMU in report mode,
 * the QP's PD is PASID
 */
void peer_open_props(Peer *pe, uint32_t access, bool smmu,
                     const char *props)
{
    g_autofree char *dev = NULL;
    QPldmaQPAttr at;

    memset(pe, 0, sizeof(*pe));
    dev = g_strdup_printf("-M virt%s -m 512M -nodefaults "
                          "-device pldma,id=dma0,netdev=n0,node-id=1%s%s",
                          smmu ? ",iommu=smmuv3" : "",
                          smmu ? ",fault-mode=report" : "", props);
    peer_listen(pe, &pe->n, "pldma-qpeer-XXXXXX", dev);
    if (smmu) {
        smmu_setup(&pe->n, false, true);
    }
    pe->my_qpn = 0x4a5b00 | (g_test_rand_int() & 0xff);
    pe->epsn = rand_psn();
    pe->sq_psn = rand_psn();
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe->my_qpn, pe->sq_psn,
            pe->epsn, 0);
    at.access = access;
    if (smmu) {
        at.pd = PASID | PLDMA_CHB_PASID_EN;
    }
    qp_connect(&pe->n, 0, &at);
    pe->qpn = qpldma_qpn(&pe->n.d, 0);
}

/*
 * The device's QP 0 to us again, after an error ended the connection:
 * RESET (a new QPN), then connected with new PSNs and @access
 */
void peer_reconnect(Peer *pe, uint32_t access)
{
    QPldmaQPAttr at;

    qp_reset(&pe->n, 0);
    qpldma_wr(&pe->n.d, PLDMA_QP_ERRORS_LO, 1);
    pe->epsn = rand_psn();
    pe->sq_psn = rand_psn();
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe->my_qpn, pe->sq_psn,
            pe->epsn, 0);
    at.access = access;
    qp_connect(&pe->n, 0, &at);
    pe->qpn = qpldma_qpn(&pe->n.d, 0);
}

void peer_open_smmu(Peer *pe, uint32_t access, bool smmu)
{
    peer_open_props(pe, access, smmu, "");
}

void peer_open(Peer *pe, uint32_t access)
{
    peer_open_smmu(pe, access, false);
}

void peer_step(void *opaque)
{
    g_usleep(200);
}

void peer_close(Peer *pe)
{
    peer_stop(pe, &pe->n);
}

/*
 * A page of the device's RAM at @pa whose VA in PASID's tables is not
 * mapped (an access faults), exposed as key @idx with @access; its rkey
 */
uint32_t unmapped_key(Peer *pe, uint32_t idx, uint64_t pa,
                             uint64_t *va, uint32_t access)
{
    *va = VA_BASE + (pa - ALLOC_BASE);
    return key_register(&pe->n, idx, PASID | PLDMA_CHB_PASID_EN, *va, PAGE,
                        access);
}

/* An atomic request (0x13 CmpSwap, 0x14 FetchAdd) at @psn */
uint32_t atomic_req(uint8_t *f, Peer *pe, uint8_t op, uint32_t psn,
                           uint64_t va, uint32_t rkey, uint64_t swap_add,
                           uint64_t compare)
{
    uint8_t aeth[ATOMIC_ETH];

    stq_be_p(aeth, va);
    stl_be_p(aeth + 8, rkey);
    stq_be_p(aeth + 12, swap_add);
    stq_be_p(aeth + 20, compare);
    return roce_frame(f, IP_B, op, pe->qpn, psn & 0xffffff, false, 0, 0, 0,
                      -1, 0, aeth, sizeof(aeth));
}

/* An Atomic Acknowledge of @psn from @src: AETH ACK, @orig found */
uint32_t atomic_ack(uint8_t *f, Peer *pe, uint32_t src, uint32_t psn,
                    uint64_t orig)
{
    uint8_t pl[12];

    stl_be_p(pl, 0x1f000001);
    stq_be_p(pl + 4, orig);
    return roce_frame(f, src, 0x12, pe->qpn, psn & 0xffffff, false, 0, 0, 0,
                      -1, 0, pl, sizeof(pl));
}

/* An atomic descriptor on the QP's send queue */
void desc_atomic(uint8_t *d, uint8_t op, uint64_t dst, uint64_t rva,
                        uint32_t rkey, uint64_t cmp_add, uint64_t swap,
                        uint64_t compl)
{
    qpldma_desc_rdma(d, op, PLDMA_ATOMIC_LEN, 0, rva, rkey, compl);
    stq_le_p(d + PLDMA_DESC_DST, dst);
    stq_le_p(d + PLDMA_DESC_ATOMIC_CMP_ADD, cmp_add);
    stq_le_p(d + PLDMA_DESC_ATOMIC_SWAP, swap);
}

/* A WRITE Only of @len bytes (<= 1024) from @src */
uint32_t write_only(uint8_t *f, Peer *pe, uint32_t src, uint32_t qpn,
                    uint32_t psn, uint64_t va, uint32_t rkey,
                    const uint8_t *pl, uint32_t len)
{
    return roce_frame(f, src, 0x0a, qpn, psn, true, va, rkey, len, -1, 0,
                      pl, len);
}

/* ---- CQs, receive queues ---- */

void cq_make(Node *n, QPldmaCQ *cq, uint32_t idx, uint32_t size,
             uint32_t pd)
{
    cq->idx = idx;
    cq->size = size;
    cq->ci = 0;
    cq->pa = alloc_pa(n, size * PLDMA_CQE_SIZE);
    g_assert_cmpuint(qpldma_cq_create(&n->d, idx, cq->pa, size, pd), ==,
                     PLDMA_CQ_ST_OK);
    g_assert_cmpuint(qpldma_cq_reg(&n->d, idx, PLDMA_CQ_STATE), ==,
                     PLDMA_CQS_ACTIVE);
}

/*
 * CQs @cq and @cq + 1 (PD @pd) of the sizes given, an RQ, the ring of
 * channel @ch
 */
void side_init_at(Node *n, Side *sd, uint32_t pd, uint32_t cq,
                  uint32_t scq_size, uint32_t rcq_size, int ch)
{
    memset(sd, 0, sizeof(*sd));
    sd->pd = pd;
    cq_make(n, &sd->scq, cq, scq_size, pd);
    cq_make(n, &sd->rcq, cq + 1, rcq_size, pd);
    sd->rq = alloc_pa(n, RQ_SIZE * PLDMA_RWQE_SIZE);
    ring_init(n, &sd->r, ch);
}

/* CQs 0 and 1 (PD @pd) of the sizes given, an RQ, the ring of channel 0 */
void side_init_cqs(Node *n, Side *sd, uint32_t pd, uint32_t scq_size,
                   uint32_t rcq_size)
{
    side_init_at(n, sd, pd, 0, scq_size, rcq_size, 0);
}

void side_init(Node *n, Side *sd, uint32_t pd, uint32_t scq_size)
{
    side_init_cqs(n, sd, pd, scq_size, CQ_SIZE);
}

/* RESET -> INIT (with the RQ and CQs of @sd) -> RTR -> RTS */
void qp_connect_cq(Node *n, uint32_t idx, QPldmaQPAttr *at, Side *sd)
{
    at->rq_base = sd->rq;
    at->rq_size = RQ_SIZE;
    at->send_cq = sd->scq.idx;
    at->recv_cq = sd->rcq.idx;
    at->pd = sd->pd;
    at->state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_RQ | PLDMA_QPA_CQ, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTR, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTS;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTS, at),
                     ==, PLDMA_QP_ST_OK);
}

/* A's QP 0 to B's QP 0, both with CQs and an RQ (B's PD @b_pd) */
void pair_connect_cq(Pair *p, Side *sa, Side *sb, uint32_t b_pd,
                     uint32_t a_scq_size)
{
    uint8_t mac_a[6], mac_b[6];
    uint32_t a_psn = rand_psn(), b_psn = rand_psn();
    QPldmaQPAttr at;

    side_init(&p->a, sa, 0, a_scq_size);
    side_init(&p->b, sb, b_pd, CQ_SIZE);
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), b_psn, a_psn, 0);
    qp_connect_cq(&p->b, 0, &at, sb);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), a_psn, b_psn, 0);
    qp_connect_cq(&p->a, 0, &at, sa);
}

/* Both QPs 0 to RESET and connected again (new PSNs), same CQs and RQs */
void pair_reconnect_cq(Pair *p, Side *sa, Side *sb)
{
    uint8_t mac_a[6], mac_b[6];
    uint32_t a_psn = rand_psn(), b_psn = rand_psn();
    QPldmaQPAttr at;

    qp_reset(&p->a, 0);
    qp_reset(&p->b, 0);
    sa->rq_tail = 0;
    sb->rq_tail = 0;
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, 0), b_psn, a_psn, 0);
    qp_connect_cq(&p->b, 0, &at, sb);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, 0), a_psn, b_psn, 0);
    qp_connect_cq(&p->a, 0, &at, sa);
}

/*
 * One node whose link's other end is the test (a socket it never reads):
 * its QPs talk to each other through the device's loopback.  Returns the
 * socket; @link is the link's directory, from template @tmpl.
 */
int loop_node_start(Node *n, QPldmaLink *link, const char *tmpl)
{
    g_autofree char *net = NULL, *args = NULL;
    int fd;

    qpldma_link_init(link, tmpl);
    net = qpldma_link_netdev(link, true);
    args = g_strdup_printf("-M virt -m 512M -nodefaults "
                           "-device pldma,id=dma0,netdev=n0,node-id=1 "
                           "-netdev %s", net);
    node_start(n, args);
    fd = qpldma_link_connect(link);
    qpldma_link_wait(n->qts);
    return fd;
}

/*
 * RESET -> INIT (UC, the RQ and CQs of @sd) -> RTR -> RTS, with the
 * attributes IBA table 91 has for UC: no RNR timer, no ACK timeout or
 * retries (which it refuses)
 */
void qp_connect_uc(Node *n, uint32_t idx, QPldmaQPAttr *at, Side *sd)
{
    at->type = PLDMA_QP_TYPE_UC;
    at->rq_base = sd->rq;
    at->rq_size = RQ_SIZE;
    at->send_cq = sd->scq.idx;
    at->recv_cq = sd->rcq.idx;
    at->pd = sd->pd;
    at->state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_RQ | PLDMA_QPA_CQ |
                                      PLDMA_QPA_TYPE, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTR, at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTR &
                                      ~PLDMA_QPA_MIN_RNR_TIMER, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTS;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTS, at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_STATE |
                                      PLDMA_QPA_SQ_PSN, at),
                     ==, PLDMA_QP_ST_OK);
}

/*
 * RESET -> INIT (UD, Q_Key @qkey, send queue channel @sq, the RQ and CQs
 * of @sd) -> RTR -> RTS, with IBA table 91's UD attributes: a Q_Key at
 * INIT (required), no path, no access flags (both refused)
 */
void qp_connect_ud(Node *n, uint32_t idx, uint32_t sq, uint32_t qkey,
                   Side *sd)
{
    QPldmaQPAttr at = {
        .type = PLDMA_QP_TYPE_UD, .qkey = qkey, .sq = sq, .pd = sd->pd,
        .rq_base = sd->rq, .rq_size = RQ_SIZE, .send_cq = sd->scq.idx,
        .recv_cq = sd->rcq.idx, .state = PLDMA_QPS_INIT,
        .sq_psn = rand_psn(),
    };
    uint32_t init = PLDMA_QPA_STATE | PLDMA_QPA_PD | PLDMA_QPA_SQ |
                    PLDMA_QPA_RQ | PLDMA_QPA_CQ | PLDMA_QPA_TYPE;

    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, init, &at), ==,
                     PLDMA_QP_ST_BAD_ATTR);
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, init | PLDMA_QPA_QKEY |
                                      PLDMA_QPA_ACCESS_FLAGS, &at), ==,
                     PLDMA_QP_ST_BAD_ATTR);
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, init | PLDMA_QPA_QKEY,
                                      &at), ==, PLDMA_QP_ST_OK);
    at.state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTR, &at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_STATE, &at),
                     ==, PLDMA_QP_ST_OK);
    at.state = PLDMA_QPS_RTS;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTS, &at),
                     ==, PLDMA_QP_ST_BAD_ATTR);
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_STATE |
                                      PLDMA_QPA_SQ_PSN, &at),
                     ==, PLDMA_QP_ST_OK);
}

/* A UD SEND (@op: SEND or SEND_IMM) of @len bytes at @src to @av */
uint64_t post_ud(Node *n, Side *sd, uint8_t op, uint32_t len, uint64_t src,
                 const UdAv *av, uint32_t imm, uint64_t cookie)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t compl = alloc_pa(n, PLDMA_COMPL_SIZE);

    qpldma_desc_rdma(d, op, len, src, 0, 0, compl);
    d[PLDMA_DESC_FLAGS] = PLDMA_DF_SIGNALED;
    memset(d + PLDMA_DESC_UD_DMAC, 0, 8);
    memcpy(d + PLDMA_DESC_UD_DMAC, av->dmac, 6);
    stl_le_p(d + PLDMA_DESC_UD_DEST_IP, av->dip);
    stl_le_p(d + PLDMA_DESC_UD_QKEY, av->qkey);
    stl_le_p(d + PLDMA_DESC_UD_DEST_QPN, av->dqpn);
    stl_le_p(d + PLDMA_DESC_IMM, imm);
    stq_le_p(d + PLDMA_DESC_COOKIE, cookie);
    qpldma_ring_post(&n->d, &sd->r, d);
    return compl;
}

/* ---- shared receive queues ---- */

uint32_t srq_create(Node *n, uint32_t idx, uint64_t base,
                    uint32_t size, uint32_t pd, uint32_t tag)
{
    qpldma_wr(&n->d, PLDMA_SRQ_SEL, idx);
    qpldma_wr(&n->d, PLDMA_SRQ_BASE_LO, (uint32_t)base);
    qpldma_wr(&n->d, PLDMA_SRQ_BASE_HI, base >> 32);
    qpldma_wr(&n->d, PLDMA_SRQ_SIZE, size);
    qpldma_wr(&n->d, PLDMA_SRQ_PD, pd);
    qpldma_wr(&n->d, PLDMA_SRQ_PD_TAG, tag);
    qpldma_wr(&n->d, PLDMA_SRQ_CMD, PLDMA_SRQ_CMD_CREATE);
    return qpldma_rd(&n->d, PLDMA_SRQ_STATUS);
}

uint32_t srq_cmd(Node *n, uint32_t idx, uint32_t cmd, uint32_t limit)
{
    qpldma_wr(&n->d, PLDMA_SRQ_SEL, idx);
    qpldma_wr(&n->d, PLDMA_SRQ_LIMIT, limit);
    qpldma_wr(&n->d, PLDMA_SRQ_CMD, cmd);
    return qpldma_rd(&n->d, PLDMA_SRQ_STATUS);
}

uint32_t srq_reg(Node *n, uint32_t idx, uint32_t reg)
{
    qpldma_wr(&n->d, PLDMA_SRQ_SEL, idx);
    return qpldma_rd(&n->d, reg);
}

uint64_t srq_rec(const Srq *q)
{
    return q->pa + (uint64_t)q->size * PLDMA_RWQE_SIZE;
}

void srq_make(Node *n, Srq *q, uint32_t idx, uint32_t size,
              uint32_t pd)
{
    q->idx = idx;
    q->size = size;
    q->tail = 0;
    q->pa = alloc_pa(n, size * PLDMA_RWQE_SIZE + PLDMA_SRQ_DBREC_SIZE);
    g_assert_cmpuint(srq_create(n, idx, q->pa, size, pd, 0), ==,
                     PLDMA_SRQ_ST_OK);
    g_assert_cmpuint(srq_reg(n, idx, PLDMA_SRQ_STATE), ==,
                     PLDMA_SRQS_ACTIVE);
}

/* Post one WQE of one entry: the WQE, then the record's TAIL */
void srq_post(Node *n, Srq *q, uint64_t wr_id, uint64_t addr,
              uint32_t len)
{
    qpldma_rwqe(n->qts, q->pa + (uint64_t)q->tail * PLDMA_RWQE_SIZE, wr_id,
                1, &addr, &len);
    q->tail = (q->tail + 1) % q->size;
    qtest_writel(n->qts, srq_rec(q) + PLDMA_SRQ_DBREC_TAIL, q->tail);
}

/* The HEAD the device wrote into the record, checked against SRQ_HEAD */
uint32_t srq_head(Node *n, const Srq *q)
{
    uint32_t head = qtest_readl(n->qts, srq_rec(q) + PLDMA_SRQ_DBREC_HEAD);

    g_assert_cmpuint(srq_reg(n, q->idx, PLDMA_SRQ_HEAD), ==, head);
    return head;
}

/* RESET -> INIT (SRQ @srq, the CQs of @sd, receive CQ @rcq) -> RTS */
void qp_connect_srq(Node *n, uint32_t idx, QPldmaQPAttr *at,
                    Side *sd, uint32_t rcq, uint32_t srq)
{
    at->srq = srq;
    at->send_cq = sd->scq.idx;
    at->recv_cq = rcq;
    at->pd = sd->pd;
    at->state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_INIT |
                                      PLDMA_QPA_SRQ | PLDMA_QPA_CQ, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTR, at),
                     ==, PLDMA_QP_ST_OK);
    at->state = PLDMA_QPS_RTS;
    g_assert_cmpuint(qpldma_qp_modify(&n->d, idx, PLDMA_QPA_REQ_RTS, at),
                     ==, PLDMA_QP_ST_OK);
}

/* Post a receive WQE on @n's QP 0 (SQ channel 0) */
void post_recv(Node *n, Side *sd, uint64_t wr_id, uint32_t nsge,
               const uint64_t *addr, const uint32_t *len)
{
    qpldma_rwqe(n->qts, sd->rq + (uint64_t)sd->rq_tail * PLDMA_RWQE_SIZE,
                wr_id, nsge, addr, len);
    sd->rq_tail = (sd->rq_tail + 1) % RQ_SIZE;
    qpldma_ch_wr(&n->d, 0, PLDMA_CH_RQ_TAIL, sd->rq_tail);
}

/* Post a SEND, SEND_IMM or WRITE(_IMM) on @sd's ring; returns its record */
uint64_t post_op(Node *n, Side *sd, uint8_t op, uint8_t flags,
                 uint32_t len, uint64_t src, uint64_t rva,
                 uint32_t rkey, uint32_t imm, uint64_t cookie)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t compl = alloc_pa(n, PLDMA_COMPL_SIZE);

    qpldma_desc_rdma(d, op, len, src, rva, rkey, compl);
    d[PLDMA_DESC_FLAGS] = flags;
    stl_le_p(d + PLDMA_DESC_IMM, imm);
    stq_le_p(d + PLDMA_DESC_COOKIE, cookie);
    qpldma_ring_post(&n->d, &sd->r, d);
    return compl;
}

/* The next CQE of @cq on the peer's node, which must come */
void peer_cqe(Peer *pe, QPldmaCQ *cq, uint8_t *cqe)
{
    int i;

    for (i = 0; i < WAIT_STEPS && !qpldma_cq_poll(&pe->n.d, cq, cqe); i++) {
        peer_step(NULL);
    }
    g_assert_cmpint(i, <, WAIT_STEPS);
}

/* Wait for the next CQE of @cq on @n */
void wait_cqe(Pair *p, Node *n, QPldmaCQ *cq, uint8_t *cqe)
{
    int i;

    for (i = 0; i < WAIT_STEPS; i++) {
        if (qpldma_cq_poll(&n->d, cq, cqe)) {
            return;
        }
        step(p);
    }
    g_assert_not_reached();
}

void check_cqe(const uint8_t *e, uint64_t wr_id, uint8_t opcode,
               uint8_t status, uint32_t bytes, uint32_t qpn,
               uint32_t src_qp, uint8_t flags, uint32_t imm,
               uint32_t vendor)
{
    g_assert_cmphex(ldq_le_p(e + PLDMA_CQE_WR_ID), ==, wr_id);
    g_assert_cmpuint(e[PLDMA_CQE_OPCODE], ==, opcode);
    g_assert_cmpuint(e[PLDMA_CQE_STATUS], ==, status);
    if (status == PLDMA_WC_ST_SUCCESS) {
        g_assert_cmpuint(ldl_le_p(e + PLDMA_CQE_BYTE_LEN), ==, bytes);
    }
    g_assert_cmphex(ldl_le_p(e + PLDMA_CQE_QPN), ==, qpn);
    g_assert_cmphex(ldl_le_p(e + PLDMA_CQE_SRC_QP), ==, src_qp);
    g_assert_cmphex(e[PLDMA_CQE_FLAGS], ==, flags);
    g_assert_cmphex((uint32_t)ldl_le_p(e + PLDMA_CQE_IMM), ==, imm);
    g_assert_cmpuint(ldl_le_p(e + PLDMA_CQE_VENDOR_ERR), ==, vendor);
}
/* ---- the link: QP 0 to QP 0 from PSN 0, A's capture ---- */

/* A's QP 0 to B's QP 0 (both send queues on channel 0), PSNs from 0 */
void pair_connect_zero(Pair *p)
{
    QPldmaQPEnd a = {
        .d = &p->a.d, .sq = 0, .pd = node_pd(&p->a), .timers = p->a_timers,
    };
    QPldmaQPEnd b = {
        .d = &p->b.d, .sq = 0, .pd = node_pd(&p->b), .timers = p->b_timers,
    };

    qpldma_qp_connect_pair(&a, &b, p->path_mtu);
}

/*
 * Both QPs through RESET, then connected again, after an error ended the
 * connection (IBA: a remote access error, an invalid request, a remote
 * operational error or retries that ran out end it on both ends); A's
 * ring anew at @r
 */
void pair_reconnect(Pair *p, QPldmaRing *r)
{
    qpldma_qp_reset(&p->a.d, 0);
    qpldma_qp_reset(&p->b.d, 0);
    qpldma_wr(&p->a.d, PLDMA_QP_ERRORS_LO, 1);
    qpldma_wr(&p->b.d, PLDMA_QP_ERRORS_LO, 1);
    pair_connect_zero(p);
    if (r) {
        ring_init(&p->a, r, 0);
    }
}

/*
 * A's capture as tshark decodes it: "Info<TAB>PSN<TAB>AETH syndrome" a
 * line, the Info column without its " QP=..." tail; NULL without tshark.
 * Quits A, which flushes the capture.
 */
char *capture_decode(Pair *p)
{
    g_autofree char *cmd = NULL, *out = NULL;
    g_auto(GStrv) lines = NULL;
    GString *res;
    int status, i;

    qtest_quit(p->a.qts);
    p->a.qts = NULL;
    if (!g_find_program_in_path("tshark")) {
        g_test_message("tshark not installed: capture not checked");
        return NULL;
    }
    cmd = g_strdup_printf("tshark -r %s -Y infiniband -T fields "
                          "-e _ws.col.Info -e infiniband.bth.psn "
                          "-e infiniband.aeth.syndrome", p->pcap);
    g_assert_true(g_spawn_command_line_sync(cmd, &out, NULL, &status, NULL));
    g_assert_cmpint(status, ==, 0);
    res = g_string_new(NULL);
    lines = g_strsplit(out, "\n", -1);
    for (i = 0; lines[i]; i++) {
        char *qp = strstr(lines[i], " QP=");
        char *tab = strchr(lines[i], '\t');

        if (qp && tab && qp < tab) {
            memmove(qp, tab, strlen(tab) + 1);
        }
        if (*lines[i]) {
            g_string_append_printf(res, "%s\n", lines[i]);
        }
    }
    return g_string_free(res, false);
}
/*
 * ---- the engine on one node: its own descriptor rings, the SMMU in
 * stall mode ----
 */

void smmu_resume(Node *t, uint16_t stag, int resp)
{
    qsmmu_resume(&t->s, SID, stag, resp);
    g_assert_false(qsmmu_cmdq_error(&t->s));
}

/* Wait for a stall event of our StreamID; returns its STAG */
uint16_t smmu_wait_stall(Node *t, uint32_t pasid, uint64_t va)
{
    uint64_t ev[4];
    int i;

    for (i = 0; i < POLL_MAX; i++) {
        if (!qsmmu_pop_event(&t->s, ev)) {
            continue;
        }
        if (QSMMU_EVT_TYPE(ev) >= QSMMU_EVT_F_TRANSLATION &&
            QSMMU_EVT_TYPE(ev) <= QSMMU_EVT_F_PERMISSION &&
            QSMMU_EVT_STALL(ev)) {
            g_assert_cmphex(QSMMU_EVT_SID(ev), ==, SID);
            g_assert_true(QSMMU_EVT_SSV(ev));
            g_assert_cmpuint(QSMMU_EVT_SSID(ev), ==, pasid);
            g_assert_cmphex(QSMMU_EVT_ADDR(ev) & ~(PAGE - 1), ==,
                            va & ~(PAGE - 1));
            return QSMMU_EVT_STAG(ev);
        }
    }
    g_assert_not_reached();
}

void map_page(Node *t, uint32_t pasid, uint64_t va, uint64_t pa)
{
    bool remap = qsmmu_va_to_pa(&t->s, t->pasid_root[pasid], va) != 0;

    qsmmu_map(&t->s, t->pasid_root[pasid], va, pa, true);
    if (remap) {
        qsmmu_tlbi_va(&t->s, pasid, va);
    }
}

void unmap_page(Node *t, uint32_t pasid, uint64_t va)
{
    qsmmu_unmap(&t->s, t->pasid_root[pasid], va);
    qsmmu_tlbi_va(&t->s, pasid, va);
}

/*
 * A buffer of the "process" @pasid: physical pages, mapped at @va when
 * the SMMU is in use (else va == pa).  Returns the physical address.
 */
uint64_t buf(Node *t, uint32_t pasid, uint64_t va, uint64_t size,
             bool mapped)
{
    uint64_t pa = alloc_pa(t, size), off;

    if (t->smmu && mapped) {
        for (off = 0; off < size; off += PAGE) {
            map_page(t, pasid, va + off, pa + off);
        }
    }
    return pa;
}

void engine_ring_init(Node *t, Ring *r, int ch, uint32_t pasid, uint64_t va,
                      uint32_t size)
{
    r->ch = ch;
    r->size = size;
    r->tail = 0;
    r->pa = buf(t, pasid, va, size * PLDMA_DESC_SIZE, true);
    r->va = t->smmu ? va : r->pa;

    qpldma_wr(&t->d, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    qpldma_wr(&t->d, PLDMA_CH_BIND(ch) + PLDMA_CHB_PASID,
         t->smmu ? (pasid | PLDMA_CHB_PASID_EN) : 0);
    qpldma_wr(&t->d, PLDMA_CH_BIND(ch) + PLDMA_CHB_OWNER, 1000 + ch);
    qpldma_wr(&t->d, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    qpldma_ch_wr(&t->d, ch, PLDMA_CH_RING_BASE_LO, (uint32_t)r->va);
    qpldma_ch_wr(&t->d, ch, PLDMA_CH_RING_BASE_HI, r->va >> 32);
    qpldma_ch_wr(&t->d, ch, PLDMA_CH_RING_SIZE, size);
    g_assert_cmpuint(qpldma_ch_rd(&t->d, ch, PLDMA_CH_STATE), ==,
                     PLDMA_STATE_IDLE);
}

void desc_put(Node *t, Ring *r, uint8_t op, uint32_t len, uint64_t src,
              uint64_t dst, uint64_t pattern, uint64_t compl,
              uint64_t cookie)
{
    uint8_t d[PLDMA_DESC_SIZE] = { 0 };

    d[PLDMA_DESC_OPCODE] = op;
    d[PLDMA_DESC_FLAGS] = PLDMA_DF_INTR;
    stl_le_p(d + PLDMA_DESC_LEN, len);
    stq_le_p(d + PLDMA_DESC_SRC, src);
    stq_le_p(d + PLDMA_DESC_DST, dst);
    stq_le_p(d + PLDMA_DESC_PATTERN, pattern);
    stq_le_p(d + PLDMA_DESC_COMPL, compl);
    stq_le_p(d + PLDMA_DESC_COOKIE, cookie);
    qtest_memwrite(t->qts, r->pa + r->tail * PLDMA_DESC_SIZE, d, sizeof(d));
    r->tail = (r->tail + 1) % r->size;
}

void ring_kick(Node *t, Ring *r)
{
    qpldma_ch_wr(&t->d, r->ch, PLDMA_CH_RING_TAIL, r->tail);
}

uint32_t wait_state(Node *t, int ch, uint32_t want)
{
    uint32_t st = 0;
    int i;

    for (i = 0; i < POLL_MAX; i++) {
        st = qpldma_ch_rd(&t->d, ch, PLDMA_CH_STATE);
        if (st == want) {
            break;
        }
    }
    g_assert_cmpuint(st, ==, want);
    return st;
}

/* Wait for the completion record at @pa; returns its status */
uint32_t engine_wait_compl(Node *t, uint64_t pa, uint64_t *bytes,
                           uint64_t *fault_va)
{
    uint8_t rec[PLDMA_COMPL_SIZE];
    int i;

    for (i = 0; i < POLL_MAX; i++) {
        if (qtest_readl(t->qts, pa + PLDMA_COMPL_STATUS)) {
            break;
        }
    }
    qtest_memread(t->qts, pa, rec, sizeof(rec));
    if (bytes) {
        *bytes = ldq_le_p(rec + PLDMA_COMPL_BYTES);
    }
    if (fault_va) {
        *fault_va = ldq_le_p(rec + PLDMA_COMPL_FAULT_VA);
    }
    return ldl_le_p(rec + PLDMA_COMPL_STATUS);
}

void fill_random(Node *t, uint64_t pa, size_t len, uint8_t **out)
{
    uint8_t *b = g_malloc(len);
    size_t i;

    for (i = 0; i < len; i++) {
        b[i] = g_test_rand_int();
    }
    qtest_memwrite(t->qts, pa, b, len);
    *out = b;
}

void check_mem(Node *t, uint64_t pa, const uint8_t *expect, size_t len)
{
    g_autofree uint8_t *b = g_malloc(len);

    qtest_memread(t->qts, pa, b, len);
    g_assert_true(memcmp(b, expect, len) == 0);
}

Node *engine_start(const char *mode, bool smmu, const char *extra)
{
    Node *t = g_new0(Node, 1);

    t->smmu = smmu;
    t->report = !strcmp(mode, "report");
    t->args = g_strdup_printf("-M virt%s -m 512M -nodefaults "
                              "-device pldma,id=dma0,fault-mode=%s%s",
                              smmu ? ",iommu=smmuv3" : "", mode,
                              extra ? extra : "");
    node_start(t, t->args);
    if (smmu) {
        node_smmu_init(t, ENGINE_CD_LOG2, t->report);
    }
    return t;
}

void engine_stop(Node *t)
{
    qtest_quit(t->qts);
    g_free(t->args);
    g_free(t);
}

/*
 * Migrate @t through a file to a new QEMU with the same command line.
 * Returns true if the target accepted the stream; @t then runs there.
 * A refused stream leaves @t on the (stopped) source.
 */
bool engine_migrate(Node *t)
{
    g_autofree char *path = NULL;
    g_autofree char *out_uri = NULL;
    g_autofree char *in_uri = NULL;
    QTestState *dst;
    bool ok;
    int fd;

    fd = g_file_open_tmp("pldma-mig-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    out_uri = g_strdup_printf("exec:cat > %s", path);
    in_uri = g_strdup_printf("exec:cat %s", path);

    qtest_qmp_assert_success(t->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", out_uri);
    g_assert_true(qpldma_migration_wait(t->qts, 30));

    dst = qtest_initf("%s -incoming defer", t->args);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", in_uri);
    ok = qpldma_migration_wait(dst, 30);
    unlink(path);
    if (ok) {
        qtest_quit(t->qts);
        t->qts = dst;
        t->d.qts = dst;
        t->s.qts = dst;
    } else {
        qtest_quit(dst);
    }
    return ok;
}
