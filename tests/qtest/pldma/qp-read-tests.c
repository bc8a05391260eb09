/*
 * The PLDMA QP's RDMA READs against the test as a peer: responder
 * faults, retries, duplicates, pipelining, zero-length READs
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

/*
 * A responder fault on a READ request, as a standard requester (Linux
 * rxe) sends it: one packet, READ Response Only expected.  The RNR NAK
 * names the request's PSN; once resolved, the "resend now" ACK must name
 * the PSN before it (the last good one), never the READ's own PSN: an
 * Acknowledge of a READ's last PSN tells rxe's completer that the READ is
 * done, and it completes SUCCESS with none of the data (seen on the wire,
 * tests/rxe/run).  Then the resent request gets its response.
 */
static void test_read_fault_resume(void)
{
    Peer pe;
    uint8_t f[2048], data[PAGE];
    uint64_t pa, va;
    uint32_t rkey, psn, i, len;
    uint8_t rec[PLDMA_FR_SIZE];
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_READ, true);
    for (i = 0; i < PAGE; i++) {
        data[i] = i * 13 + 5;
    }
    pa = alloc_pa(&pe.n, PAGE);
    qtest_memwrite(pe.n.qts, pa, data, PAGE);
    va = VA_BASE + (pa - ALLOC_BASE);       /* not mapped: a fault */
    rkey = key_register(&pe.n, 0, PASID | PLDMA_CHB_PASID_EN, va, PAGE,
                        PLDMA_KEY_ACC_READ);

    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, va + 256, rkey,
                     512, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, pe.epsn);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==, va);
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    /* "resolved, resend now": an ACK of the PSN before the READ */
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RESUME_TX), ==, 1);
    g_assert_cmphex(psn, ==, (pe.epsn - 1) & 0xffffff);
    /* the requester resends the READ: its response, whole */
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, pe.epsn);
    g_assert_cmpint(rx.syn, ==, 0x1f);
    peer_close(&pe);
}

/*
 * KEY REGISTER over a key whose fault record is unanswered: the
 * connections waiting for that answer had their time bound through the
 * key only, and REGISTER cleared it, so they waited (RNR NAKs) without
 * end.  Now the new registration ends the old fault FAILED: the waiting
 * READ gets NAK remote operational error at once.
 */
static void test_key_reregister_fault(void)
{
    uint8_t f[2048], rec[PLDMA_FR_SIZE];
    uint32_t rkey, psn, len;
    uint64_t pa, va;
    Peer pe;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_READ, true);
    pa = alloc_pa(&pe.n, PAGE);
    rkey = unmapped_key(&pe, 0, pa, &va, PLDMA_KEY_ACC_READ);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, va, rkey, 512,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    /* the same index registered again, the record still unanswered */
    key_register(&pe.n, 0, PASID | PLDMA_CHB_PASID_EN, va, PAGE,
                 PLDMA_KEY_ACC_READ);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL), ==, 0x63);
    g_assert_cmphex(psn, ==, pe.epsn);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    peer_close(&pe);
}

/*
 * A READ of two pages, @data, whose second page faults at the responder:
 * its first four responses (First, Middle...) come, then nothing; the
 * fault record is taken.  Returns the rkey; *@pa and *@va the memory's.
 */
static uint32_t read_held_start(Peer *pe, uint8_t *data, uint64_t *pa,
                                uint64_t *va)
{
    uint8_t f[2048], rec[PLDMA_FR_SIZE];
    uint32_t rkey, i, len;
    Rx rx;

    peer_open_smmu(pe, PLDMA_KEY_ACC_READ, true);
    *pa = alloc_pa(&pe->n, 2 * PAGE);
    qtest_memwrite(pe->n.qts, *pa, data, 2 * PAGE);
    *va = VA_BASE + (*pa - ALLOC_BASE);
    qsmmu_map(&pe->n.s, pe->n.pt_root, *va, *pa, true);  /* page 1: a fault */
    rkey = key_register(&pe->n, 0, PASID | PLDMA_CHB_PASID_EN, *va, 2 * PAGE,
                        PLDMA_KEY_ACC_READ);
    len = roce_frame(f, IP_B, 0x0c, pe->qpn, pe->epsn, true, *va, rkey,
                     2 * PAGE, -1, 0, NULL, 0);
    qpldma_stream_send(pe->fd, f, len);
    for (i = 0; i < 4; i++) {
        g_assert_true(peer_rx(pe, &rx));
        g_assert_cmphex(rx.op, ==, i ? 0x0e : 0x0d);
        g_assert_cmphex(rx.psn, ==, (pe->epsn + i) & 0xffffff);
    }
    /* held: nothing, no RNR NAK */
    g_assert_false(peer_rx(pe, &rx));
    qpldma_fq_pop(&pe->n.d, pe->n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==,
                    *va + PAGE);
    return rkey;
}

/*
 * A responder fault inside a READ's response stream, seen on the wire by
 * a standard requester (this test): the responses stop at the faulting
 * page with no RNR NAK or Acknowledge (Linux rxe's completer does not
 * expect one among a READ's responses), a retry of the rest of the READ
 * gets no answer while the fault is pending, and once it is resolved the
 * retried request is served: First..Last from its PSN, nothing else.
 */
static void test_read_fault_held(void)
{
    Peer pe;
    uint8_t f[2048], data[2 * PAGE];
    uint64_t pa, va;
    uint32_t rkey, i, len;
    Rx rx;

    for (i = 0; i < sizeof(data); i++) {
        data[i] = i * 7 + 1;
    }
    rkey = read_held_start(&pe, data, &pa, &va);
    /* the requester times out and asks for the rest: still nothing */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 4) & 0xffffff, true,
                     va + PAGE, rkey, PAGE, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    /* resolved: the rest, as the retry asked, and no "resend now" */
    qsmmu_map(&pe.n.s, pe.n.pt_root, va + PAGE, pa + PAGE, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    for (i = 0; i < 4; i++) {
        g_assert_true(peer_rx(&pe, &rx));
        g_assert_cmphex(rx.op, ==, i == 0 ? 0x0d : i == 3 ? 0x0f : 0x0e);
        g_assert_cmphex(rx.psn, ==, (pe.epsn + 4 + i) & 0xffffff);
    }
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RESUME_TX), ==, 0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_ACK_TX), ==, 0);
    peer_close(&pe);
}

/*
 * A new READ that comes while the one before it is held inside its
 * responses (a responder fault, with up to max_rd_atomic requests in
 * flight) waits behind it: no RNR NAK, which would make the requester
 * drop the held stream's responses when it goes on and wait out its RNR
 * timer (a millisecond a fault, `pldma-rbench read-one` 50 times slower
 * with 16 READs in flight).  Once the fault is resolved the held READ's
 * rest comes, then the new one's response, in order.
 */
static void test_read_held_queue(void)
{
    Peer pe;
    uint8_t f[2048], data[2 * PAGE];
    uint64_t pa, va;
    uint32_t rkey, i, len, psn2;
    Rx rx;

    for (i = 0; i < sizeof(data); i++) {
        data[i] = i * 5 + 3;
    }
    rkey = read_held_start(&pe, data, &pa, &va);
    /* the next READ, 1 KiB of page 0, at the PSN after the first's 8 */
    psn2 = (pe.epsn + 8) & 0xffffff;
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, psn2, true, va + 512, rkey, KiB,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    /* resolved: the held READ's rest, then the new READ's one response */
    qsmmu_map(&pe.n.s, pe.n.pt_root, va + PAGE, pa + PAGE, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    for (i = 4; i < 8; i++) {
        g_assert_true(peer_rx(&pe, &rx));
        g_assert_cmphex(rx.op, ==, i == 7 ? 0x0f : 0x0e);
        g_assert_cmphex(rx.psn, ==, (pe.epsn + i) & 0xffffff);
        g_assert_cmpmem(rx.data, rx.plen, data + i * KiB, KiB);
    }
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, psn2);
    g_assert_cmpmem(rx.data, rx.plen, data + 512, KiB);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_RNR), ==, 0);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_RTS);
    peer_close(&pe);
}

/*
 * After an RNR NAK the responder holds the rest of the message its
 * requester already sent (parking), silently: no sequence NAK naming the
 * RNR NAKed PSN, which tells a standard requester (Linux rxe's completer:
 * COMPST_ERROR_RETRY) to resend at once, cancelling its RNR wait and
 * spending a retry each time (tests/rxe/run saw one per responder fault).
 * Once the fault is resolved the held segments land and one ACK names the
 * last of them; the message sent again is all duplicates, ACKed.
 */
static void test_rnr_then_silence(void)
{
    Peer pe;
    uint8_t f[2048], pl[1024];
    uint64_t pa, va;
    uint32_t rkey, psn, i, len, seq0, ooo0, parked0;
    uint8_t rec[PLDMA_FR_SIZE];
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_WRITE, true);
    for (i = 0; i < sizeof(pl); i++) {
        pl[i] = i * 11 + 3;
    }
    pa = alloc_pa(&pe.n, PAGE);
    rkey = unmapped_key(&pe, 0, pa, &va, PLDMA_KEY_ACC_WRITE);

    /* WRITE First of two segments: RNR NAK */
    len = roce_frame(f, IP_B, 0x06, pe.qpn, pe.epsn, true, va, rkey, 2048,
                     -1, 0, pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, NULL) & 0xe0, ==, 0x20);
    g_assert_cmphex(psn, ==, pe.epsn);
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    /* the Last, sent before the NAK arrived: held, no answer */
    seq0 = ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ);
    ooo0 = ncnt(&pe.n, PLDMA_NCNT_OOO);
    parked0 = ncnt(&pe.n, PLDMA_NCNT_PARKED);
    g_assert_cmpuint(parked0, ==, 1);       /* the First */
    len = roce_frame(f, IP_B, 0x08, pe.qpn, (pe.epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl, 1024);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_PARKED), ==, parked0 + 1);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_OOO), ==, ooo0);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, seq0);
    g_assert_false(peer_rx(&pe, &rx));
    /* resolved: both land, one ACK at the Last */
    qsmmu_map(&pe.n.s, pe.n.pt_root, va, pa, true);
    qpldma_key_cmd(&pe.n.d, 0, PLDMA_KEY_CMD_RESOLVED);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    qpldma_mem_check(pe.n.qts, pa, pl, 1024);
    qpldma_mem_check(pe.n.qts, pa + 1024, pl, 1024);
    /* the message again, whole: duplicates, ACKed at its last PSN */
    len = roce_frame(f, IP_B, 0x06, pe.qpn, pe.epsn, true, va, rkey, 2048,
                     -1, 0, pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    len = roce_frame(f, IP_B, 0x08, pe.qpn, (pe.epsn + 1) & 0xffffff, false,
                     0, 0, 0, -1, 0, pl, 1024);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmpint(peer_answer(&pe, &psn, NULL), ==, 0x1f);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, seq0);
    qpldma_mem_check(pe.n.qts, pa, pl, 1024);
    qpldma_mem_check(pe.n.qts, pa + 1024, pl, 1024);
    peer_close(&pe);
}

/* Read the READ responses @pe's device sends for a request at @psn */
static uint32_t read_resps(Peer *pe, uint32_t psn, uint32_t n)
{
    uint32_t i;
    Rx rx;

    for (i = 0; i < n; i++) {
        g_assert_true(peer_rx(pe, &rx));
        g_assert_cmphex(rx.op, ==, n == 1 ? 0x10 : i == 0 ? 0x0d :
                        i == n - 1 ? 0x0f : 0x0e);
        g_assert_cmphex(rx.psn, ==, (psn + i) & 0xffffff);
    }
    return i;
}

/*
 * A READ request longer than the responder's PSN window (4096 PSNs, 4 MiB
 * at 1024 bytes a segment) on a QP: served whole, as IBA has it (Linux
 * rxe asks for the rest of a shortened READ only when its retransmit
 * timer fires: 275 timeouts a run of tests/rxe/run, and perftest's 1 MiB
 * ib_read_bw from rxe never completed), and asked again, as a standard
 * requester asks after a timeout (Linux rxe resends the same request, or
 * the rest of it): served again, not dropped as an old duplicate.  rxe's
 * 16 MiB READs hung (tests/rxe/run) when the retry, 16384 PSNs behind the
 * expected PSN, was dropped.
 */
static void test_long_read_retry(void)
{
    const uint32_t len = 4 * MiB + 4 * KiB, segs = len / 1024;
    Peer pe;
    uint8_t f[2048];
    uint32_t rkey, flen, drop0;
    uint64_t pa;

    g_assert_cmpuint(segs, >, 4096);
    peer_open(&pe, PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, len);
    rkey = key_register(&pe.n, 0, 0, pa, len, PLDMA_KEY_ACC_READ);
    flen = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey, len,
                      -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, flen);
    /* every response, First to Last, with consecutive PSNs */
    read_resps(&pe, pe.epsn, segs);
    /* the same request again: its responses again, from the start */
    drop0 = ncnt(&pe.n, PLDMA_NCNT_RX_DROPPED);
    qpldma_stream_send(pe.fd, f, flen);
    read_resps(&pe, pe.epsn, segs);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RX_DROPPED), ==, drop0);
    /* the rest of it from its 65th response, as rxe asks after a loss */
    flen = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 64) & 0xffffff, true,
                      pa + 64 * 1024, rkey, len - 64 * 1024, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, flen);
    read_resps(&pe, pe.epsn + 64, segs - 64);
    peer_close(&pe);
}

/*
 * Duplicate READ requests, as IBA has the responder take them (Linux
 * rxe's duplicate_request()): one that repeats a READ taken, or a part of
 * it with the same R_Key, is served again from its own PSN; one that asks
 * for more than the original, starts before it, has another R_Key, or
 * names a PSN no READ had is dropped without an answer, and nothing
 * moves.  Before, any duplicate in the PSN window was served as a READ
 * of its own.
 */
static void test_read_dup_subset(void)
{
    Peer pe;
    uint8_t f[2048];
    uint32_t rkey, rkey2, len, d0, e0 = 0;
    uint64_t pa;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, 16 * KiB);
    rkey = key_register(&pe.n, 0, 0, pa, 16 * KiB, PLDMA_KEY_ACC_READ);
    rkey2 = key_register(&pe.n, 1, 0, pa, 16 * KiB, PLDMA_KEY_ACC_READ);

    /* the original: 8 KiB at pa + 4 KiB, 8 responses */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa + 4 * KiB,
                     rkey, 8 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn, 8);
    /* the same again: served whole */
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn, 8);
    /* its last 6 KiB from their PSN: served from there */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 2) & 0xffffff, true,
                     pa + 6 * KiB, rkey, 6 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 2, 6);
    /* a part inside it: 1 KiB, one response */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 3) & 0xffffff, true,
                     pa + 7 * KiB, rkey, 1 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 3, 1);

    /* more than the original: past its end, before its start, or longer */
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 2) & 0xffffff, true,
                     pa + 6 * KiB, rkey, 8 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey,
                     8 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa + 4 * KiB,
                     rkey, 12 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    /* another R_Key over the same memory */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa + 4 * KiB,
                     rkey2, 8 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    /* a PSN before the original: no READ had it */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn - 1) & 0xffffff, true,
                     pa, rkey, 1 * KiB, -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 5);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_ACCESS) +
                     ncnt(&pe.n, PLDMA_NCNT_NAK_TX_INVALID) +
                     ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, e0);

    /* the next READ at the expected PSN: served, and so its repeat */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 8) & 0xffffff, true,
                     pa, rkey2, 2 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 8, 2);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 8, 2);
    /* and the first one's still: a part of it */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 7) & 0xffffff, true,
                     pa + 11 * KiB, rkey, 1 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    read_resps(&pe, pe.epsn + 7, 1);
    g_assert_false(peer_rx(&pe, &rx));
    peer_close(&pe);
}

/*
 * A zero-length READ request from the peer, as IBA has it: its R_Key and
 * VA are not checked (Linux rxe checks neither; rkey 0 is no key here),
 * one READ Response Only without payload answers it at its PSN, with the
 * MSN of one completed message, and it takes one PSN: the next READ is
 * at the PSN after it.  A repeat of it is answered again; one that names
 * another VA is not that READ, and is dropped.  Before, the responder
 * answered it with NAK invalid request.
 */
static void test_zero_length_read(void)
{
    g_autofree uint8_t *data = NULL;
    Peer pe;
    uint8_t f[2048];
    uint32_t rkey, len, d0;
    uint64_t pa;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, 4 * KiB);
    rkey = key_register(&pe.n, 0, 0, pa, 4 * KiB, PLDMA_KEY_ACC_READ);
    data = qpldma_mem_random(pe.n.qts, pa, 4 * KiB);

    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, 0x1000, 0, 0,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.qpn, ==, pe.my_qpn);
    g_assert_cmphex(rx.psn, ==, pe.epsn);
    g_assert_cmphex(rx.syn, ==, 0x1f);
    g_assert_cmpuint(rx.msn, ==, 1);
    g_assert_cmpuint(rx.plen, ==, 0);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_TX_ACCESS) +
                     ncnt(&pe.n, PLDMA_NCNT_NAK_TX_INVALID) +
                     ncnt(&pe.n, PLDMA_NCNT_NAK_TX_SEQ), ==, 0);

    /* the same again (its response lost): answered again, the same way */
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, pe.epsn);
    g_assert_cmpuint(rx.plen, ==, 0);
    /* at its PSN with another VA, or a length: not that READ, dropped */
    d0 = ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, 0x2000, 0, 0,
                     -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey, 1024,
                     -1, 0, NULL, 0);
    peer_inject(&pe, f, len);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_QP_DROPPED), ==, d0 + 2);
    g_assert_false(peer_rx(&pe, &rx));

    /* it took one PSN: a READ of 1 KiB at the next one is served */
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 1) & 0xffffff, true,
                     pa, rkey, 1024, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x10);
    g_assert_cmphex(rx.psn, ==, (pe.epsn + 1) & 0xffffff);
    g_assert_cmpuint(rx.msn, ==, 2);
    g_assert_cmpuint(rx.plen, ==, 1024);
    peer_close(&pe);
}

/*
 * A local fault of the requester inside a READ's response stream (its
 * destination page not mapped, report mode): once RESTARTed, the READ is
 * asked again from the faulting page for the rest of the original request
 * only, a subset as IBA wants a repeated READ (Linux rxe's responder drops
 * any other), not for a new window past the original's end.  A response
 * of the original stream that arrives after it does not make the
 * requester ask a third time (a standard responder serves every
 * duplicate whole).  Then the READ completes, byte for byte.
 */
static void test_read_local_fault_subset(void)
{
    const uint32_t len = 128 * KiB, win = 64 * KiB;
    const uint64_t rva = 0x100000;
    Peer pe;
    uint8_t f[2048], d[PLDMA_DESC_SIZE], rec[PLDMA_FR_SIZE];
    g_autofree uint8_t *data = g_malloc(len);
    uint64_t dst, compl, ring, off, bytes;
    uint32_t i, flen, psn, reqs0;
    QPldmaRing r;
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ, true);
    for (i = 0; i < len; i++) {
        data[i] = i * 7 + (i >> 10);
    }
    /* VA = PA for the ring, the record and the destination but page 1 */
    ring = alloc_pa(&pe.n, PAGE);
    compl = alloc_pa(&pe.n, PAGE);
    dst = alloc_pa(&pe.n, len);
    qsmmu_map(&pe.n.s, pe.n.pt_root, ring, ring, true);
    qsmmu_map(&pe.n.s, pe.n.pt_root, compl, compl, true);
    for (off = 0; off < len; off += PAGE) {
        if (off != PAGE) {
            qsmmu_map(&pe.n.s, pe.n.pt_root, dst + off, dst + off, true);
        }
    }
    qpldma_ring_init(&pe.n.d, &r, 0, ring, 16, PASID | PLDMA_CHB_PASID_EN);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_READ, len, dst, rva, 0x4343, compl);
    qpldma_ring_post(&pe.n.d, &r, d);

    /* the first window's request */
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x0c);
    psn = rx.psn;
    g_assert_cmphex(psn, ==, pe.sq_psn);
    g_assert_cmphex(rx.va, ==, rva);
    g_assert_cmpuint(rx.dmalen, ==, win);
    /* 8 responses: the fifth lands on page 1 and faults */
    for (i = 0; i < 8; i++) {
        flen = roce_frame(f, IP_B, i ? 0x0e : 0x0d, pe.qpn,
                          (psn + i) & 0xffffff, false, 0, 0, 0,
                          i ? -1 : 0x1f, 0, data + i * 1024, 1024);
        peer_inject(&pe, f, flen);
    }
    qpldma_fq_pop(&pe.n.d, pe.n.fq, 64, rec, peer_step, NULL, WAIT_STEPS);
    g_assert_cmphex(ldq_le_p(rec + PLDMA_FR_VA) & ~(PAGE - 1), ==,
                    dst + PAGE);
    g_assert_false(peer_rx(&pe, &rx));
    qsmmu_map(&pe.n.s, pe.n.pt_root, dst + PAGE, dst + PAGE, true);
    qpldma_ch_wr(&pe.n.d, 0, PLDMA_CH_CMD, PLDMA_CMD_RESTART);

    /* asked again: from the faulting page to the original's end */
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x0c);
    g_assert_cmphex(rx.psn, ==, (psn + 4) & 0xffffff);
    g_assert_cmphex(rx.va, ==, rva + PAGE);
    g_assert_cmpuint(rx.dmalen, ==, win - PAGE);
    /* a late response of the first stream: no third request */
    reqs0 = ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES);
    flen = roce_frame(f, IP_B, 0x0e, pe.qpn, (psn + 9) & 0xffffff, false, 0,
                      0, 0, -1, 0, data + 9 * 1024, 1024);
    peer_inject(&pe, f, flen);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES), ==, reqs0);

    /* the responses to it, then the second window's */
    for (i = 4; i < 64; i++) {
        flen = roce_frame(f, IP_B, i == 4 ? 0x0d : i == 63 ? 0x0f : 0x0e,
                          pe.qpn, (psn + i) & 0xffffff, false, 0, 0, 0,
                          i == 4 || i == 63 ? 0x1f : -1, 0,
                          data + i * 1024, 1024);
        qpldma_stream_send(pe.fd, f, flen);
    }
    g_assert_true(peer_rx(&pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x0c);
    g_assert_cmphex(rx.psn, ==, (psn + 64) & 0xffffff);
    g_assert_cmphex(rx.va, ==, rva + win);
    g_assert_cmpuint(rx.dmalen, ==, len - win);
    for (i = 64; i < 128; i++) {
        flen = roce_frame(f, IP_B, i == 64 ? 0x0d : i == 127 ? 0x0f : 0x0e,
                          pe.qpn, (psn + i) & 0xffffff, false, 0, 0, 0,
                          i == 64 || i == 127 ? 0x1f : -1, 0,
                          data + i * 1024, 1024);
        qpldma_stream_send(pe.fd, f, flen);
    }
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, peer_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(pe.n.qts, dst, data, len);
    peer_close(&pe);
}

/*
 * The responses to segments [@from, @to) of a READ at @psn whose requests
 * are @win segments each, one of them asked (again) from segment @asked:
 * First, Middle, Last or Only as their place in their request; the one at
 * segment @skip left out when @skip is not negative (a loss).  Waits until
 * the device has taken them all.
 */
static void read_resps_send(Peer *pe, uint32_t psn, uint32_t asked,
                            uint32_t from, uint32_t to, uint32_t win,
                            uint32_t nsegs, const uint8_t *data, int skip)
{
    uint32_t rx0 = ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES), i, n = 0, flen;
    uint8_t f[2048];
    bool first, last;
    int w;

    for (i = from; i < to; i++) {
        if ((int)i == skip) {
            continue;
        }
        /* (a request asked again starts where it was asked) */
        first = i == asked || i % win == 0;
        last = i % win == win - 1 || i == nsegs - 1;
        flen = roce_frame(f, IP_B, first ? (last ? 0x10 : 0x0d)
                                         : (last ? 0x0f : 0x0e),
                          pe->qpn, (psn + i) & 0xffffff, false, 0, 0, 0,
                          first || last ? 0x1f : -1, 0, data + i * KiB, KiB);
        qpldma_stream_send(pe->fd, f, flen);
        n++;
    }
    for (w = 0; w < 20000 && ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES) < rx0 + n;
         w++) {
        g_usleep(100);
    }
    g_assert_cmpuint(ncnt(&pe->n, PLDMA_NCNT_RX_FRAMES), ==, rx0 + n);
}

/*
 * Post an RDMA READ of @len bytes from @rva (rkey 0x4343) on channel 0,
 * the QP's send queue, into fresh mapped memory (*@dst), its completion
 * record at *@compl
 */
static void read_post(Peer *pe, uint32_t len, uint64_t rva, uint64_t *dst,
                      uint64_t *compl)
{
    uint8_t d[PLDMA_DESC_SIZE];
    uint64_t ring, off;
    QPldmaRing r;

    ring = alloc_pa(&pe->n, PAGE);
    *compl = alloc_pa(&pe->n, PAGE);
    *dst = alloc_pa(&pe->n, len);
    qsmmu_map(&pe->n.s, pe->n.pt_root, ring, ring, true);
    qsmmu_map(&pe->n.s, pe->n.pt_root, *compl, *compl, true);
    for (off = 0; off < len; off += PAGE) {
        qsmmu_map(&pe->n.s, pe->n.pt_root, *dst + off, *dst + off, true);
    }
    qpldma_ring_init(&pe->n.d, &r, 0, ring, 16, PASID | PLDMA_CHB_PASID_EN);
    qpldma_desc_rdma(d, PLDMA_OP_RDMA_READ, len, *dst, rva, 0x4343, *compl);
    qpldma_ring_post(&pe->n.d, &r, d);
}

/* The next frame is a READ request at segment @seg for @len bytes */
static void read_req_check(Peer *pe, uint32_t psn, uint64_t rva, uint32_t seg,
                           uint32_t len)
{
    Rx rx;

    g_assert_true(peer_rx(pe, &rx));
    g_assert_cmphex(rx.op, ==, 0x0c);
    g_assert_cmphex(rx.psn, ==, (psn + seg) & 0xffffff);
    g_assert_cmphex(rx.va, ==, rva + seg * KiB);
    g_assert_cmpuint(rx.dmalen, ==, len);
}

/*
 * READs in flight (QPT_MAX_RD_ATOMIC, IBA's initiator depth): a READ of
 * four windows and 1 KiB on a QP whose max_rd_atomic is 3 sends three
 * requests at once, each of a window (64 segments without the timing
 * model); the fourth only once the first's responses are all in (not
 * after 63 of them), the fifth once the second's are.  A response lost
 * inside the third asks again for the rest of the third only (a subset
 * of a request sent, as IBA wants a repeated READ), once however many of
 * the third's responses come after the gap; the fourth and fifth, whose
 * responses an in-order responder sends before those asked again, are
 * asked again once the first of those is in.  Then the READ completes,
 * byte for byte.  Before, one
 * request was outstanding whatever the QP said, and a READ waited a
 * round trip at every window.  The depth is refused beyond 16.
 */
static void test_read_in_flight(void)
{
    const uint32_t len = 4 * 64 * KiB + KiB, nsegs = len / KiB;
    const uint64_t rva = 0x200000;
    g_autofree uint8_t *data = g_malloc(len);
    uint64_t dst, compl, bytes;
    QPldmaQPAttr at;
    uint32_t i, psn;
    Peer pe;
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ, true);
    qpldma_qp_query(&pe.n.d, 0, &at);
    g_assert_cmpuint(PLDMA_QPT_MAX_RD_ATOMIC(at.timers), ==, 0);
    at.timers |= PLDMA_QPT_RD_ATOMIC(17);
    g_assert_cmpuint(qpldma_qp_modify(&pe.n.d, 0, PLDMA_QPA_STATE |
                                      PLDMA_QPA_MAX_QP_RD_ATOMIC, &at), ==,
                     PLDMA_QP_ST_BAD_ATTR);
    at.timers = (at.timers & ~PLDMA_QPT_RD_ATOMIC(31)) |
                PLDMA_QPT_RD_ATOMIC(3);
    g_assert_cmpuint(qpldma_qp_modify(&pe.n.d, 0, PLDMA_QPA_STATE |
                                      PLDMA_QPA_MAX_QP_RD_ATOMIC, &at), ==,
                     PLDMA_QP_ST_OK);
    qpldma_qp_query(&pe.n.d, 0, &at);
    g_assert_cmpuint(PLDMA_QPT_MAX_RD_ATOMIC(at.timers), ==, 3);
    g_assert_cmpuint(at.state, ==, PLDMA_QPS_RTS);

    for (i = 0; i < len; i++) {
        data[i] = i * 13 + (i >> 10);
    }
    read_post(&pe, len, rva, &dst, &compl);

    /* three requests at once, a window each */
    psn = pe.sq_psn;
    for (i = 0; i < 3; i++) {
        read_req_check(&pe, psn, rva, 64 * i, 64 * KiB);
    }
    g_assert_false(peer_rx(&pe, &rx));
    /* the fourth when the first is answered whole, the fifth likewise */
    read_resps_send(&pe, psn, 0, 0, 63, 64, nsegs, data, -1);
    g_assert_false(peer_rx(&pe, &rx));
    read_resps_send(&pe, psn, 0, 63, 64, 64, nsegs, data, -1);
    read_req_check(&pe, psn, rva, 192, 64 * KiB);
    g_assert_false(peer_rx(&pe, &rx));
    read_resps_send(&pe, psn, 64, 64, 128, 64, nsegs, data, -1);
    read_req_check(&pe, psn, rva, 256, KiB);
    g_assert_false(peer_rx(&pe, &rx));

    /*
     * The third's response at segment 130 is lost: its rest is asked
     * again, once, while the responder, in order, answers the fourth and
     * the fifth (dropped, behind the gap)
     */
    read_resps_send(&pe, psn, 128, 128, 192, 64, nsegs, data, 130);
    read_req_check(&pe, psn, rva, 130, 62 * KiB);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_OOO), ==, 61);
    read_resps_send(&pe, psn, 192, 192, nsegs, 64, nsegs, data, -1);
    g_assert_false(peer_rx(&pe, &rx));
    /*
     * Served again from 130: the fourth and the fifth are asked again as
     * soon as the first response asked again is in, not after a timeout
     */
    read_resps_send(&pe, psn, 130, 130, 131, 64, nsegs, data, -1);
    read_req_check(&pe, psn, rva, 192, 64 * KiB);
    read_req_check(&pe, psn, rva, 256, KiB);
    g_assert_false(peer_rx(&pe, &rx));
    read_resps_send(&pe, psn, 130, 131, 192, 64, nsegs, data, -1);
    read_resps_send(&pe, psn, 192, 192, nsegs, 64, nsegs, data, -1);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, peer_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(pe.n.qts, dst, data, len);
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RETX_SEGS), ==, 3);
    peer_close(&pe);
}

/*
 * RNR NAKs for READs in flight: a responder fault at the first of three
 * outstanding READ requests RNR NAKs it, then each request behind it as
 * it comes.  That is one wait and one RNR retry, however many requests
 * were in flight: with rnr_retry 1 the READ goes on (before, every NAK
 * counted a retry, and the second ended it REMOTE_RNR).  The "resolved,
 * resend now" ACK asks the three again; they complete the READ.
 */
static void test_read_rnr_in_flight(void)
{
    const uint32_t len = 3 * 64 * KiB, nsegs = len / KiB;
    const uint64_t rva = 0x300000;
    g_autofree uint8_t *data = g_malloc(len);
    uint64_t dst, compl, bytes;
    uint8_t f[2048];
    QPldmaQPAttr at;
    uint32_t i, psn, flen;
    Peer pe;
    Rx rx;

    peer_open_smmu(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ, true);
    /* again from RESET: rnr_retry 1, three READs in flight */
    qp_reset(&pe.n, 0);
    pe.epsn = rand_psn();
    pe.sq_psn = rand_psn();
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, pe.my_qpn, pe.sq_psn,
            pe.epsn, 0);
    at.pd = PASID | PLDMA_CHB_PASID_EN;
    at.timers = PLDMA_QPT_MAKE(7, 1, 1, 16) | PLDMA_QPT_RD_ATOMIC(3);
    qp_connect(&pe.n, 0, &at);
    g_assert_cmpuint(qpldma_qp_modify(&pe.n.d, 0, PLDMA_QPA_STATE |
                                      PLDMA_QPA_MAX_QP_RD_ATOMIC, &at), ==,
                     PLDMA_QP_ST_OK);
    pe.qpn = qpldma_qpn(&pe.n.d, 0);

    for (i = 0; i < len; i++) {
        data[i] = i * 11 + (i >> 12);
    }
    read_post(&pe, len, rva, &dst, &compl);

    psn = pe.sq_psn;
    for (i = 0; i < 3; i++) {
        read_req_check(&pe, psn, rva, 64 * i, 64 * KiB);
    }
    /* an RNR NAK (timer code 14, 0.96 ms) for each of the three */
    for (i = 0; i < 3; i++) {
        flen = roce_frame(f, IP_B, 0x11, pe.qpn, (psn + 64 * i) & 0xffffff,
                          false, 0, 0, 0, 0x20 | 14, 0, NULL, 0);
        qpldma_stream_send(pe.fd, f, flen);
    }
    for (i = 0; i < 20000 && ncnt(&pe.n, PLDMA_NCNT_NAK_RX_RNR) < 3; i++) {
        g_usleep(100);
    }
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_NAK_RX_RNR), ==, 3);
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_RNR_WAITS), ==, 1);
    g_assert_false(peer_rx(&pe, &rx));
    /* resolved, resend now: the ACK of the PSN before the first */
    flen = roce_frame(f, IP_B, 0x11, pe.qpn, (psn - 1) & 0xffffff, false,
                      0, 0, 0, 0x1f, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, flen);
    for (i = 0; i < 3; i++) {
        read_req_check(&pe, psn, rva, 64 * i, 64 * KiB);
    }
    g_assert_false(peer_rx(&pe, &rx));
    read_resps_send(&pe, psn, 0, 0, nsegs, 64, nsegs, data, -1);
    g_assert_cmpuint(qpldma_wait_compl(&pe.n.d, compl, peer_step, NULL,
                                       WAIT_STEPS, &bytes), ==,
                     PLDMA_ST_SUCCESS);
    g_assert_cmpuint(bytes, ==, len);
    qpldma_mem_check(pe.n.qts, dst, data, len);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_RTS);
    peer_close(&pe);
}

/* The next frame is READ response @i of a READ at @psn of @n responses */
static void read_resp_check(Peer *pe, uint32_t psn, uint32_t i, uint32_t n,
                            const uint8_t *data, uint32_t msn)
{
    uint8_t op = n == 1 ? 0x10 : i == 0 ? 0x0d : i == n - 1 ? 0x0f : 0x0e;
    Rx rx;

    g_assert_true(peer_rx(pe, &rx));
    g_assert_cmphex(rx.op, ==, op);
    g_assert_cmphex(rx.psn, ==, (psn + i) & 0xffffff);
    g_assert_cmpuint(rx.plen, ==, 1024);
    g_assert_true(memcmp(rx.data, data + i * 1024, 1024) == 0);
    if (op != 0x0e) {
        g_assert_cmphex(rx.syn, ==, 0x1f);
        g_assert_cmpuint(rx.msn, ==, msn);
    }
}

/*
 * Pipelined READs (IBA: up to max_dest_rd_atomic per QP, answered in
 * order).  The responder kept one response stream per connection and
 * each request overwrote it: of two READs that arrived together the
 * first got none of its responses, and a 1 MiB READ still streaming was
 * cut off by the next.  Now two 8 KiB READs sent back to back get their
 * 16 responses in PSN order, each payload the memory's, each READ's MSN
 * its own (counted when it starts being answered); the two again, as a
 * requester's retry sends them (duplicates), the same, the MSN unmoved;
 * then a 1 MiB READ and a 2 KiB one behind it, every response of both.
 */
static void test_read_pipelined(void)
{
    const uint64_t size = MiB + 16 * KiB;
    g_autofree uint8_t *data = NULL;
    uint32_t rkey, len, i, round, psn;
    uint8_t f[2048];
    uint64_t pa;
    Peer pe;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, size);
    data = qpldma_mem_random(pe.n.qts, pa, size);
    rkey = key_register(&pe.n, 0, 0, pa, size, PLDMA_KEY_ACC_READ);
    for (round = 0; round < 2; round++) {
        for (i = 0; i < 2; i++) {
            len = roce_frame(f, IP_B, 0x0c, pe.qpn,
                             (pe.epsn + 8 * i) & 0xffffff, true,
                             pa + i * 8 * KiB, rkey, 8 * KiB, -1, 0, NULL, 0);
            qpldma_stream_send(pe.fd, f, len);
        }
        for (i = 0; i < 16; i++) {
            /* (a duplicate's responses carry the MSN as it is) */
            read_resp_check(&pe, pe.epsn + (i / 8) * 8, i % 8, 8,
                            data + (i / 8) * 8 * KiB, round ? 2 : i / 8 + 1);
        }
        g_assert_false(peer_rx(&pe, &rx));
    }
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_DUPS), ==, 2);

    /* 1 MiB, then 2 KiB behind it */
    psn = (pe.epsn + 16) & 0xffffff;
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, psn, true, pa, rkey, MiB, -1, 0,
                     NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (psn + 1024) & 0xffffff, true,
                     pa + MiB, rkey, 2 * KiB, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    for (i = 0; i < 1024; i++) {
        read_resp_check(&pe, psn, i, 1024, data, 3);
    }
    for (i = 0; i < 2; i++) {
        read_resp_check(&pe, psn + 1024, i, 2, data + MiB, 4);
    }
    g_assert_false(peer_rx(&pe, &rx));
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_RTS);
    peer_close(&pe);
}

/*
 * A READ that the bottom half ends in a NAK (a bus error: the key's range
 * is no memory) did not complete: the NAK's MSN does not count it.  It
 * did (MSN 2 after one WRITE), though the MSN counts completed messages.
 */
static void test_read_nak_msn(void)
{
    uint8_t f[2048], pl[256];
    uint32_t rkey, bad, len, psn, msn;
    uint64_t pa;
    Peer pe;

    memset(pl, 0x77, sizeof(pl));
    peer_open(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, PAGE,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    /* no RAM there, nor anything else */
    bad = key_register(&pe.n, 1, 0, 0x7000000000ULL, PAGE,
                       PLDMA_KEY_ACC_READ);
    len = write_only(f, &pe, IP_B, pe.qpn, pe.epsn, pa, rkey, pl,
                     sizeof(pl));
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, &msn), ==, 0x1f);
    g_assert_cmpuint(msn, ==, 1);
    len = roce_frame(f, IP_B, 0x0c, pe.qpn, (pe.epsn + 1) & 0xffffff, true,
                     0x7000000000ULL, bad, 1024, -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    g_assert_cmphex(peer_answer(&pe, &psn, &msn), ==, 0x63);
    g_assert_cmphex(psn, ==, (pe.epsn + 1) & 0xffffff);
    g_assert_cmpuint(msn, ==, 1);
    g_assert_cmpuint(qpldma_qp_state(&pe.n.d, 0), ==, PLDMA_QPS_ERR);
    peer_close(&pe);
}

/*
 * One READ must not starve the device: a 32 MiB READ on QP 0 whose
 * responses the peer does not read fills the link (the backend blocks),
 * then a WRITE on QP 1 owes an ACK.  That ACK was dropped (the frame
 * found the backend full), and the WRITE's requester needed tries and
 * seconds.  Now it waits with the answers and goes out as soon as the
 * backend takes frames again, among the first frames the peer reads.
 */
static void test_read_no_starve(void)
{
    const uint32_t big = 32 * MiB;
    uint8_t f[2048], pl[512];
    uint32_t rkey, len, i, epsn1, qpn1, my1 = 0x4a5c11;
    uint64_t pa, pa1;
    QPldmaQPAttr at;
    bool acked = false;
    Peer pe;
    Rx rx;

    peer_open(&pe, PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    pa = alloc_pa(&pe.n, big);
    pa1 = alloc_pa(&pe.n, PAGE);
    rkey = key_register(&pe.n, 0, 0, pa, big + PAGE,
                        PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ);
    /* QP 1 (SQ 1) to our second QP */
    epsn1 = rand_psn();
    attr_to(&at, (const uint8_t *)PEER_MAC, IP_B, my1, rand_psn(), epsn1, 1);
    qp_connect(&pe.n, 1, &at);
    qpn1 = qpldma_qpn(&pe.n.d, 1);

    len = roce_frame(f, IP_B, 0x0c, pe.qpn, pe.epsn, true, pa, rkey, big,
                     -1, 0, NULL, 0);
    qpldma_stream_send(pe.fd, f, len);
    /* until the link is full: the device sends no more */
    for (i = 0; i < 200; i++) {
        uint32_t tx = ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES);

        g_usleep(20 * 1000);
        if (i > 5 && ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES) == tx) {
            break;
        }
    }
    g_assert_cmpuint(ncnt(&pe.n, PLDMA_NCNT_TX_FRAMES), <, big / 1024);
    memset(pl, 0x6d, sizeof(pl));
    len = write_only(f, &pe, IP_B, qpn1, epsn1, pa1, rkey, pl, sizeof(pl));
    peer_inject(&pe, f, len);
    qpldma_mem_check(pe.n.qts, pa1, pl, sizeof(pl));
    /* the ACK of QP 1 comes among the next frames */
    for (i = 0; i < 4096 && !acked; i++) {
        g_assert_true(peer_rx(&pe, &rx));
        if (rx.op == 0x11 && rx.qpn == my1) {
            g_assert_cmphex(rx.syn, ==, 0x1f);
            g_assert_cmphex(rx.psn, ==, epsn1);
            acked = true;
        } else {
            g_assert_cmphex(rx.qpn, ==, pe.my_qpn);
        }
    }
    g_test_message("QP 1's ACK after %u frames of QP 0's READ", i);
    g_assert_true(acked);
    peer_close(&pe);
}

void pldma_qp_read_register(void)
{
    qtest_add_func("/pldma-qp/read-pipelined", test_read_pipelined);
    qtest_add_func("/pldma-qp/read-nak-msn", test_read_nak_msn);
    qtest_add_func("/pldma-qp/read-no-starve", test_read_no_starve);
    qtest_add_func("/pldma-qp/zero-length-read", test_zero_length_read);
    qtest_add_func("/pldma-qp/read-fault-resume", test_read_fault_resume);
    qtest_add_func("/pldma-qp/rnr-then-silence", test_rnr_then_silence);
    qtest_add_func("/pldma-qp/read-fault-held", test_read_fault_held);
    qtest_add_func("/pldma-qp/read-held-queue", test_read_held_queue);
    qtest_add_func("/pldma-qp/key-reregister-fault", test_key_reregister_fault);
    qtest_add_func("/pldma-qp/long-read-retry", test_long_read_retry);
    qtest_add_func("/pldma-qp/read-dup-subset", test_read_dup_subset);
    qtest_add_func("/pldma-qp/read-local-fault-subset",
                   test_read_local_fault_subset);
    qtest_add_func("/pldma-qp/read-in-flight", test_read_in_flight);
    qtest_add_func("/pldma-qp/read-rnr-in-flight", test_read_rnr_in_flight);
}
