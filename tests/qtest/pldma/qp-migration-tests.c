/*
 * Migration of a PLDMA node with a link: requester, responder, a
 * zero-length READ resource, atomics on both sides, corrupted streams
 * refused
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "pldma/framework.h"

/*
 * ---- migration of a node with a link (docs/specs/pldma.rst, "Remote
 * DMA", migration) ----
 *
 * A (node 1, the side that connects, reconnect-ms) runs a 4 MiB RDMA
 * WRITE on QP 0 and a 4 MiB RDMA READ on QP 1 to B.  Mid-transfer B is
 * stopped (its socket fills, A's frames wait in the net layer), A is
 * migrated through a file to a new QEMU with the same command line, which
 * connects to B again; B goes on.  Both transfers complete, byte for byte,
 * and the peer saw retransmissions only.
 */
#define MIG_LEN         (4 * MiB)

#define MIG_SEGS        (MIG_LEN / 1024)

#define MIG_NODE_ARGS   "-M virt -m 512M -nodefaults " \
                        "-device pldma,id=dma0,netdev=n0,node-id=%d " \
                        "-netdev %s"

typedef struct Mig {
    Pair *p;
    bool resp;              /* migrate B, the responder (A otherwise) */
    char *a_args, *b_args;
    uint32_t a_psn[2], b_psn[2];
    uint64_t a_src, a_dst, b_dst, b_src;
    uint64_t compl[2];
    uint8_t *wdata, *rdata;
} Mig;

/* Load @path into a new QEMU with @args; NULL (and no QEMU) if refused */
static QTestState *mig_load(const char *args, const char *path)
{
    g_autofree char *uri = g_strdup_printf("exec:cat %s", path);
    QTestState *dst = qtest_initf("%s -incoming defer", args);
    QDict *rsp;

    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    if (qpldma_migration_wait(dst, 60)) {
        return dst;
    }
    /* refused: the destination still answers, nothing crashed or hung */
    rsp = qtest_qmp(dst, "{ 'execute': 'query-status' }");
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    qtest_quit(dst);
    return NULL;
}

/* Save the peer's node to a file; returns its path (the node is gone) */
static char *peer_save(Peer *pe)
{
    g_autofree char *uri = NULL;
    char *path;
    int fd;

    fd = g_file_open_tmp("pldma-qpmig-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    uri = g_strdup_printf("exec:cat > %s", path);
    qtest_qmp_assert_success(pe->n.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(qpldma_migration_wait(pe->n.qts, 60));
    qtest_quit(pe->n.qts);
    close(pe->fd);
    return path;
}

/*
 * Migrate the peer's node: saved, loaded into a new QEMU (@stopped: with
 * -S, continued once its link is back), which the peer connects to again.
 * Returns the new node's QTestState (pe->n's now).
 */
static QTestState *peer_migrate(Peer *pe, bool stopped)
{
    g_autofree char *path = peer_save(pe), *args = NULL;
    QTestState *to;

    args = stopped ? g_strdup_printf("%s -S", pe->args) : g_strdup(pe->args);
    to = mig_load(args, path);
    g_assert_nonnull(to);
    unlink(path);
    pe->n.qts = to;
    pe->n.d.qts = to;
    pe->fd = qpldma_link_connect(&pe->link);
    qpldma_link_wait(to);
    if (stopped) {
        qtest_qmp_assert_success(to, "{ 'execute': 'cont' }");
    }
    return to;
}

/* QP @idx of A (SQ channel @idx) to QP @idx of B, random PSNs */
static void mig_connect(Mig *m, uint32_t idx)
{
    Pair *p = m->p;
    uint8_t mac_a[6], mac_b[6];
    QPldmaQPAttr at;

    m->a_psn[idx] = rand_psn();
    m->b_psn[idx] = rand_psn();
    qpldma_mac(&p->a.d, mac_a);
    qpldma_mac(&p->b.d, mac_b);
    attr_to(&at, mac_a, IP_A, qpldma_qpn(&p->a.d, idx), m->b_psn[idx],
            m->a_psn[idx], idx);
    qp_connect(&p->b, idx, &at);
    attr_to(&at, mac_b, IP_B, qpldma_qpn(&p->b.d, idx), m->a_psn[idx],
            m->b_psn[idx], idx);
    qp_connect(&p->a, idx, &at);
}

/*
 * Start the pair, the WRITE (QP 0) and the READ (QP 1), stop one node in
 * the middle of them and save the other (A, or B with m->resp) to a file;
 * returns its path (the saved node is gone)
 */
static char *mig_start(Mig *m)
{
    g_autofree char *a_net = NULL, *b_net = NULL;
    g_autofree char *uri = NULL;
    char *path;
    QPldmaRing r0, r1;
    uint32_t wkey, rkey;
    Node *mig;
    Pair *p;
    int fd, i;

    p = m->p = g_new0(Pair, 1);
    qpldma_link_init(&p->link, "pldma-qpmig-XXXXXX");
    b_net = qpldma_link_netdev(&p->link, true);
    a_net = qpldma_link_netdev(&p->link, false);
    m->b_args = g_strdup_printf(MIG_NODE_ARGS, 2, b_net);
    m->a_args = g_strdup_printf(MIG_NODE_ARGS, 1, a_net);
    node_start(&p->b, m->b_args);
    node_start(&p->a, m->a_args);
    qpldma_link_wait(p->a.qts);
    qpldma_link_wait(p->b.qts);
    mig_connect(m, 0);
    mig_connect(m, 1);
    ring_init(&p->a, &r0, 0);
    ring_init(&p->a, &r1, 1);

    m->a_src = alloc_pa(&p->a, MIG_LEN);
    m->a_dst = alloc_pa(&p->a, MIG_LEN);
    m->b_dst = alloc_pa(&p->b, MIG_LEN);
    m->b_src = alloc_pa(&p->b, MIG_LEN);
    m->wdata = qpldma_mem_random(p->a.qts, m->a_src, MIG_LEN);
    m->rdata = qpldma_mem_random(p->b.qts, m->b_src, MIG_LEN);
    wkey = key_register(&p->b, 0, 0, m->b_dst, MIG_LEN, PLDMA_KEY_ACC_WRITE);
    rkey = key_register(&p->b, 1, 0, m->b_src, MIG_LEN, PLDMA_KEY_ACC_READ);

    m->compl[0] = post(&p->a, &r0, PLDMA_OP_RDMA_WRITE, MIG_LEN,
                       m->a_src, m->b_dst, wkey);
    m->compl[1] = post(&p->a, &r1, PLDMA_OP_RDMA_READ, MIG_LEN,
                       m->a_dst, m->b_src, rkey);
    /* some of both is through, then B stops taking frames */
    for (i = 0; i < 5000 && ncnt(&p->b, PLDMA_NCNT_RX_FRAMES) < 300; i++) {
        g_usleep(200);
    }
    qtest_qmp_assert_success(m->resp ? p->a.qts : p->b.qts,
                             "{ 'execute': 'stop' }");
    g_usleep(100 * 1000);
    for (i = 0; i < 2; i++) {
        g_assert_cmpuint(qtest_readl(p->a.qts, m->compl[i] +
                                     PLDMA_COMPL_STATUS), ==,
                         PLDMA_ST_PENDING);
    }
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_RX_FRAMES), >, 0);

    fd = g_file_open_tmp("pldma-qpmig-XXXXXX", &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    uri = g_strdup_printf("exec:cat > %s", path);
    mig = m->resp ? &p->b : &p->a;
    qtest_qmp_assert_success(mig->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(qpldma_migration_wait(mig->qts, 60));
    /*
     * The source goes: its connection closes.  B (server=on) listens
     * again; A (reconnect-ms) connects again, to a new B that listens on
     * the same path (QEMU unlinks it first).
     */
    qtest_quit(mig->qts);
    mig->qts = NULL;
    return path;
}

/*
 * The migrated node runs on @dst now: the other goes on, both transfers
 * complete, checked
 */
static void mig_finish(Mig *m, QTestState *dst)
{
    Pair *p = m->p;
    Node *mig = m->resp ? &p->b : &p->a;
    QPldmaQPAttr q;
    uint64_t bytes;
    uint32_t i;

    mig->qts = dst;
    mig->d.qts = dst;
    p->timers = true;
    qtest_qmp_assert_success(m->resp ? p->a.qts : p->b.qts,
                             "{ 'execute': 'cont' }");
    for (i = 0; i < 2; i++) {
        g_assert_cmpuint(wait_compl(p, m->compl[i], &bytes), ==,
                         PLDMA_ST_SUCCESS);
        g_assert_cmpuint(bytes, ==, MIG_LEN);
    }
    qpldma_mem_check(p->b.qts, m->b_dst, m->wdata, MIG_LEN);
    qpldma_mem_check(p->a.qts, m->a_dst, m->rdata, MIG_LEN);

    /* the connections go on: PSNs past both messages, both ends in RTS */
    for (i = 0; i < 2; i++) {
        qpldma_qp_query(&p->a.d, i, &q);
        g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTS);
        g_assert_cmphex(q.sq_psn, ==, (m->a_psn[i] + MIG_SEGS) & 0xffffff);
        qpldma_qp_query(&p->b.d, i, &q);
        g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTS);
        if (i == 0) {
            g_assert_cmphex(q.rq_psn, ==, (m->a_psn[0] + MIG_SEGS) & 0xffffff);
        }
    }
    /*
     * Retransmissions, nothing else: no NAK but sequence, no drop.  A
     * migrated requester resends what was not acknowledged; a migrated
     * responder's peer resends what was lost, if anything was.
     */
    if (!m->resp) {
        g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_RETX_SEGS), >, 0);
    }
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_ACCESS), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_INVALID), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_OPERR), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    g_assert_cmpuint(ncnt(&p->b, PLDMA_NCNT_QP_DROPPED), ==, 0);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_QP_DROPPED), ==, 0);
    g_assert_cmpuint(ncnt(&p->a, PLDMA_NCNT_NAK_RX_ACCESS) +
                     ncnt(&p->a, PLDMA_NCNT_NAK_RX_INVALID) +
                     ncnt(&p->a, PLDMA_NCNT_NAK_RX_OPERR), ==, 0);
    g_test_message("A resent %u segments, B took %u duplicates",
                   ncnt(&p->a, PLDMA_NCNT_RETX_SEGS),
                   ncnt(&p->b, PLDMA_NCNT_DUPS));
    pair_stop(p);
    g_free(m->a_args);
    g_free(m->b_args);
    g_free(m->wdata);
    g_free(m->rdata);
}

/*
 * Atomics across a migration, on both sides of the device's QP 0: the
 * responder's remembered result (pldma-conn/atomics) and the requester's
 * atomic in flight (pldma-net-req/atomic).  Before the save the test (a
 * peer) has had its FetchAdd executed and answered, and the device's
 * CmpSwap is unanswered.  On the destination (started paused, so that
 * the test is connected before the device sends) the CmpSwap goes out
 * again with its PSN and operands, and its answer lands in DST; the
 * FetchAdd sent again is a duplicate, answered from the saved result,
 * and the add is not done twice.
 */
static void test_migrate_atomic(void)
{
    uint8_t fa[256], f[256], d[PLDMA_DESC_SIZE];
    uint64_t pa, dst, compl, bytes;
    uint32_t rkey, alen, psn;
    bool seen_req = false, seen_ack = false;
    QTestState *to;
    QPldmaRing r;
    Peer pe;
    Rx rx;
    int i;

    peer_open(&pe, PLDMA_KEY_ACC_RW | PLDMA_KEY_ACC_ATOMIC);
    pa = alloc_pa(&pe.n, PAGE);
    qtest_writeq(pe.n.qts, pa + 32, 10);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE, PLDMA_KEY_ACC_ATOMIC);
    psn = pe.epsn;
    alen = atomic_req(fa, &pe, 0x14, psn, pa + 32, rkey, 3, 0);
    qpldma_stream_send(pe.fd, fa, alen);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x12);
    g_assert_cmpuint(ldq_be_p(rx.data), ==, 10);
    g_assert_cmpuint(qtest_readq(pe.n.qts, pa + 32), ==, 13);

    ring_init(&pe.n, &r, 0);
    dst = alloc_pa(&pe.n, PAGE);
    compl = alloc_pa(&pe.n, PLDMA_COMPL_SIZE);
    desc_atomic(d, PLDMA_OP_ATOMIC_CMP_SWAP, dst, 0x7000, 0x5151, 4, 6,
                compl);
    qpldma_ring_post(&pe.n.d, &r, d);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x13);
    g_assert_cmphex(rx.psn, ==, pe.sq_psn);

    to = peer_migrate(&pe, true);

    qpldma_stream_send(pe.fd, fa, alen);
    for (i = 0; i < 2; i++) {
        g_assert_true(peer_rx(&pe, &rx));
        if (rx.op == 0x13) {
            g_assert_false(seen_req);
            seen_req = true;
            g_assert_cmphex(rx.psn, ==, pe.sq_psn);
            g_assert_cmphex(ldq_be_p(rx.data), ==, 0x7000);
            g_assert_cmphex(ldl_be_p(rx.data + 8), ==, 0x5151);
            g_assert_cmpuint(ldq_be_p(rx.data + 12), ==, 6);
            g_assert_cmpuint(ldq_be_p(rx.data + 20), ==, 4);
        } else {
            g_assert_false(seen_ack);
            seen_ack = true;
            g_assert_cmphex(rx.op, ==, 0x12);
            g_assert_cmphex(rx.psn, ==, psn);
            g_assert_cmpuint(ldq_be_p(rx.data), ==, 10);
        }
    }
    g_assert_cmpuint(qtest_readq(to, pa + 32), ==, 13);
    qpldma_stream_send(pe.fd, f, atomic_ack(f, &pe, IP_B, pe.sq_psn, 4));
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, NULL, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(qtest_readq(to, dst), ==, 4);
    peer_close(&pe);
}

static void test_migrate_requester(void)
{
    Mig m = { 0 };
    g_autofree char *path = mig_start(&m);
    QTestState *dst = mig_load(m.a_args, path);

    g_assert_nonnull(dst);
    unlink(path);
    mig_finish(&m, dst);
}

/* B, the responder, migrated in the middle of the WRITE and the READ */
static void test_migrate_responder(void)
{
    Mig m = { .resp = true };
    g_autofree char *path = mig_start(&m);
    QTestState *dst = mig_load(m.b_args, path);

    g_assert_nonnull(dst);
    unlink(path);
    mig_finish(&m, dst);
}

/*
 * A zero-length READ's resource migrates with its responder (the
 * pldma-conn/rdo-zero subsection): on the destination a repeat of that
 * READ is answered again, not dropped as a READ the QP never took
 */
static void test_migrate_zero_read(void)
{
    Peer pe;
    uint8_t f[256];
    uint32_t len;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_READ);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, 0x1000, 0, 0,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);

    peer_migrate(&pe, false);

    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, pe.epsn);
    g_assert_cmpuint(rx.plen, ==, 0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, 0);
    peer_close(&pe);
}

/* @len bytes of @data to a new temporary file; returns its path */
static char *mig_file(const uint8_t *data, size_t len)
{
    char *path;
    int fd = g_file_open_tmp("pldma-qpmig-XXXXXX", &path, NULL);

    g_assert(fd >= 0);
    close(fd);
    g_assert_true(g_file_set_contents(path, (const char *)data, len, NULL));
    return path;
}

/*
 * A responder connection in the stream (vmstate_pldma_conn, no subsection
 * needed): its size, and where its READ resources' next index is
 */
#define MIG_CONN_SIZE       470

#define MIG_CONN_RDO_NEXT   469

/*
 * A hostile stream: the in-flight WRITE's QP index, then its PSN; then,
 * of the connection of A's QP 0 (connected, nothing in progress), the
 * index of its next READ resource and its expected PSN, each corrupted
 * in A's saved state.  Each is refused on load with an error (the
 * destination answers its monitor), and the untouched stream still loads
 * and completes.  (A connection with nothing in progress was let through
 * unchecked: a READ after the load wrote past its 16 READ resources.)
 */
static void test_migrate_hostile(void)
{
    static const char name[] = "pldma-net/state";
    Mig m = { 0 };
    g_autofree char *path = mig_start(&m);
    g_autofree uint8_t *data = NULL;
    uint8_t *sub, *ch0, *conn0, want[8] = { 0 };
    QTestState *dst;
    gsize len;
    int i;

    g_assert_true(g_file_get_contents(path, (char **)&data, &len, NULL));
    sub = memmem(data, len, name, strlen(name));
    g_assert_nonnull(sub);
    /* QEMU_VM_SUBSECTION, the name's length, the name, the version */
    g_assert_cmpuint(sub[-1], ==, strlen(name));
    g_assert_cmpuint(sub[-2], ==, 0x05);
    ch0 = sub + strlen(name) + 4;
    /* channel 0's requester: 1 + QP index, PSN (be32) */
    g_assert_cmpuint(ch0[0], ==, 1);
    g_assert_cmphex(ldl_be_p(ch0 + 1), ==, m.a_psn[0]);
    /*
     * The connection of A's QP 0: its expected PSN (B's first) and MSN 0,
     * the first such bytes of the subsection; QP 1's follows it
     */
    stl_be_p(want, m.b_psn[0]);
    conn0 = memmem(ch0, len - (ch0 - data), want, sizeof(want));
    g_assert_nonnull(conn0);
    g_assert_cmphex(ldl_be_p(conn0 + MIG_CONN_SIZE), ==, m.b_psn[1]);
    g_assert_cmpuint(conn0[MIG_CONN_RDO_NEXT], <, 16);

    for (i = 0; i < 4; i++) {
        g_autofree uint8_t *bad = g_memdup2(data, len);
        g_autofree char *bad_path = NULL;
        uint8_t *bch0 = bad + (ch0 - data);
        uint8_t *bconn0 = bad + (conn0 - data);

        if (i == 0) {
            bch0[0] = 0x40;             /* QP 63: beyond num-qps */
        } else if (i == 1) {
            stl_be_p(bch0 + 1, m.a_psn[0] | 0x01000000);   /* > 24 bits */
        } else if (i == 2) {
            bconn0[MIG_CONN_RDO_NEXT] = 0xff;  /* of 16 READ resources */
        } else {
            stl_be_p(bconn0, m.b_psn[0] | 0x01000000);     /* > 24 bits */
        }
        bad_path = mig_file(bad, len);
        g_assert_null(mig_load(m.a_args, bad_path));
        unlink(bad_path);
    }
    /*
     * A destination whose mtu is below the stream's path MTU and
     * requester MTU (1024) refuses it, and does not abort later on a
     * frame it could not build
     */
    {
        g_auto(GStrv) parts = g_strsplit(m.a_args, "node-id=1 ", 2);
        g_autofree char *small = g_strjoin("node-id=1,mtu=512 ", parts[0],
                                           parts[1], NULL);

        g_assert_null(mig_load(small, path));
    }
    dst = mig_load(m.a_args, path);
    g_assert_nonnull(dst);
    unlink(path);
    mig_finish(&m, dst);
}

/*
 * A QP of an SRQ holds the WQE a SEND's First took when the device
 * migrates: on the destination the SEND's Last completes in that WQE
 * (bytes compared, no second WQE taken), the next SEND takes the next
 * WQE, and the limit armed on the source fires there.
 */
static void test_migrate_srq(void)
{
    uint8_t f[2048], pl[1524], e[PLDMA_CQE_SIZE];
    uint64_t buf[2];
    uint32_t len, i, psn;
    QPldmaQPAttr at;
    QTestState *to;
    Side sd;
    Srq q;
    Peer pe;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 13 + 5;
    }
    qp_reset(&pe.n, 0);
    side_init(&pe.n, &sd, 0, CQ_SIZE);
    srq_make(&pe.n, &q, 9, 4, 0);
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe.my_qpn, pe.sq_psn,
            pe.epsn, 0);
    qp_connect_srq(&pe.n, 0, &at, &sd, sd.rcq.idx, q.idx);
    pe.qpn = qpldma_qpn(&pe.n.d, 0);
    for (i = 0; i < 2; i++) {
        buf[i] = alloc_pa(&pe.n, sizeof(pl));
        srq_post(&pe.n, &q, 0x71 + i, buf[i], sizeof(pl));
    }
    g_assert_cmpuint(srq_cmd(&pe.n, q.idx, PLDMA_SRQ_CMD_ARM, 1), ==,
                     PLDMA_SRQ_ST_OK);
    psn = pe.epsn;
    len = roce_frame(f, IP_B, 0x00, pe.qpn, psn, false, 0, 0, 0, -1, 0, pl,
                     1024);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(srq_head(&pe.n, &q), ==, 1);

    to = peer_migrate(&pe, true);

    len = roce_frame(f, IP_B, 0x02, pe.qpn, (psn + 1) & 0xffffff, false, 0,
                     0, 0, -1, 0, pl + 1024, sizeof(pl) - 1024);
    peer_inject(&pe, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x11);
    g_assert_cmphex(rx.psn, ==, (psn + 1) & 0xffffff);
    peer_cqe(&pe, &sd.rcq, e);
    check_cqe(e, 0x71, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, sizeof(pl),
              pe.qpn, pe.my_qpn, 0, 0, 0);
    qpldma_mem_check(to, buf[0], pl, sizeof(pl));
    g_assert_cmpuint(srq_head(&pe.n, &q), ==, 1);
    g_assert_cmphex(qpldma_rd(&pe.n.d, PLDMA_SRQ_EVENTS_LO), ==, 0);

    len = roce_frame(f, IP_B, 0x04, pe.qpn, (psn + 2) & 0xffffff, false, 0,
                     0, 0, -1, 0, pl, 100);
    peer_inject(&pe, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x11);
    peer_cqe(&pe, &sd.rcq, e);
    check_cqe(e, 0x72, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, 100, pe.qpn,
              pe.my_qpn, 0, 0, 0);
    qpldma_mem_check(to, buf[1], pl, 100);
    g_assert_cmpuint(srq_head(&pe.n, &q), ==, 2);
    g_assert_cmphex(qpldma_rd(&pe.n.d, PLDMA_SRQ_EVENTS_LO), ==, 1u << q.idx);
    peer_close(&pe);
}

/*
 * A UD QP migrates with its type and Q_Key: on the destination a peer's
 * datagram with that Q_Key lands after its GRH, one with another is
 * dropped
 */
static void test_migrate_ud(void)
{
    const uint32_t qkey = 0x7a7a0001;
    uint8_t f[2048], pl[300], e[PLDMA_CQE_SIZE], mac[6];
    uint32_t l = sizeof(pl) + PLDMA_UD_GRH_LEN, i, qpn;
    QPldmaRoce r = {
        .dst_mac = mac, .src_mac = (const uint8_t *)PEER_MAC,
        .src_ip = IP_B, .dst_ip = IP_A, .op = 0x64, .deth = true,
        .src_qpn = 0x4242, .aeth_syn = -1, .pl = pl, .plen = sizeof(pl),
    };
    QTestState *to;
    uint64_t buf;
    Side sd;
    Peer pe;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 17 + 1;
    }
    qp_reset(&pe.n, 0);
    side_init(&pe.n, &sd, 0, CQ_SIZE);
    qp_connect_ud(&pe.n, 0, 0, qkey, &sd);
    qpn = qpldma_qpn(&pe.n.d, 0);
    buf = alloc_pa(&pe.n, l);
    post_recv(&pe.n, &sd, 0x5d, 1, &buf, &l);
    qpldma_mac(&pe.n.d, mac);

    to = peer_migrate(&pe, true);

    r.qpn = qpn;
    r.qkey = qkey + 1;
    peer_inject(&pe, f, qpldma_roce_frame(f, &r));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_UD_DROPPED), ==, 1);
    r.qkey = qkey;
    peer_inject(&pe, f, qpldma_roce_frame(f, &r));
    peer_cqe(&pe, &sd.rcq, e);
    check_cqe(e, 0x5d, PLDMA_WC_RECV, PLDMA_WC_ST_SUCCESS, l, qpn, 0x4242,
              PLDMA_CQE_F_GRH, 0, 0);
    qpldma_mem_check(to, buf + PLDMA_UD_GRH_LEN, pl, sizeof(pl));
    peer_close(&pe);
}

void pldma_qp_migration_register(void)
{
    qtest_add_func("/pldma-qp/migrate-requester", test_migrate_requester);
    qtest_add_func("/pldma-qp/migrate-responder", test_migrate_responder);
    qtest_add_func("/pldma-qp/migrate-hostile", test_migrate_hostile);
    qtest_add_func("/pldma-qp/migrate-zero-read", test_migrate_zero_read);
    qtest_add_func("/pldma-qp/migrate-atomic", test_migrate_atomic);
    qtest_add_func("/pldma-qp/migrate-srq", test_migrate_srq);
    qtest_add_func("/pldma-qp/migrate-ud", test_migrate_ud);
}
