/*
 * The PLDMA QP state machine and its attributes, on one node
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

static void test_state_machine(void)
{
    static const uint8_t mac1[6] = { 0x52, 0x54, 0x00, 0x4c, 0x44, 0x01 };
    static const uint8_t peer[6] = { 0x52, 0x54, 0x00, 0x4c, 0x44, 0x02 };
    Node n;
    QPldmaQPAttr at, q;
    uint32_t qpn, qpn2, i, seen_gen = 0;
    uint8_t mac[6];

    node_start(&n, "-M virt -m 512M -nodefaults "
               "-device pldma,id=dma0,netdev=n0,node-id=1 "
               "-netdev hubport,id=n0,hubid=0");
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_CAP) & PLDMA_CAP_QP, !=, 0);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_NUM), ==, 16);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_NET_IP), ==, IP_A);
    qpldma_mac(&n.d, mac);
    g_assert_true(memcmp(mac, mac1, 6) == 0);
    qpldma_wr(&n.d, PLDMA_NET_IP, 0xc0a80001);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_NET_IP), ==, 0xc0a80001);

    /* QPNs: the index in bits 7:0, a generation above, never 0 or 1 */
    for (i = 0; i < 16; i++) {
        qpn = qpldma_qpn(&n.d, i);
        g_assert_cmphex(qpn & 0xff, ==, i);
        g_assert_cmphex(qpn >> 24, ==, 0);
        g_assert_cmphex(qpn >> 8, !=, 0);
        g_assert_cmpuint(qpldma_qp_state(&n.d, i), ==, PLDMA_QPS_RESET);
        seen_gen |= qpn >> 8;
    }
    g_assert_cmphex(seen_gen, !=, 0);

    attr_to(&at, peer, IP_B, 0x123456, 0xabcdef, 0x654321, 0);

    /* RESET: only INIT (and RESET, ERR) */
    at.state = PLDMA_QPS_RTR;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = PLDMA_QPS_RTS;
    refused(&n, 0, PLDMA_QPA_REQ_RTS, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = 4;               /* SQD: not a state of this device */
    refused(&n, 0, PLDMA_QPA_STATE, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = PLDMA_QPS_INIT;
    refused(&n, 0, PLDMA_QPA_REQ_INIT & ~PLDMA_QPA_SQ, &at,
            PLDMA_QP_ST_BAD_ATTR);
    refused(&n, 0, PLDMA_QPA_REQ_INIT & ~PLDMA_QPA_PD, &at,
            PLDMA_QP_ST_BAD_ATTR);
    refused(&n, 0, PLDMA_QPA_REQ_INIT | PLDMA_QPA_SQ_PSN, &at,
            PLDMA_QP_ST_BAD_ATTR);      /* not allowed at this step */
    at.sq = 4;                  /* num-channels is 4 */
    refused(&n, 0, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BAD_ATTR);
    at.sq = 0;
    at.pd = 1U << 30;           /* not a PASID register value */
    refused(&n, 0, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BAD_ATTR);
    at.pd = 0;
    at.access = PLDMA_KEY_ACC_MASK + 1;     /* not an access bit */
    refused(&n, 0, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BAD_ATTR);
    at.access = PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_INIT, &at), ==,
                     PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_INIT);

    /* channel 0 is QP 0's send queue: no other QP may take it */
    refused(&n, 1, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BUSY);

    /* INIT -> INIT with access flags; INIT -> RTS is no transition */
    at.access = PLDMA_KEY_ACC_WRITE;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_STATE |
                                      PLDMA_QPA_ACCESS_FLAGS, &at), ==,
                     PLDMA_QP_ST_OK);
    qpldma_qp_query(&n.d, 0, &q);
    g_assert_cmpuint(q.access, ==, PLDMA_KEY_ACC_WRITE);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_INIT);
    at.state = PLDMA_QPS_RTS;
    refused(&n, 0, PLDMA_QPA_REQ_RTS, &at, PLDMA_QP_ST_BAD_STATE);

    /* INIT -> RTR: every required attribute, each value checked */
    at.state = PLDMA_QPS_RTR;
    refused(&n, 0, PLDMA_QPA_REQ_RTR & ~PLDMA_QPA_RQ_PSN, &at,
            PLDMA_QP_ST_BAD_ATTR);
    refused(&n, 0, PLDMA_QPA_REQ_RTR & ~PLDMA_QPA_AV, &at,
            PLDMA_QP_ST_BAD_ATTR);
    refused(&n, 0, PLDMA_QPA_REQ_RTR & ~PLDMA_QPA_DEST_QPN, &at,
            PLDMA_QP_ST_BAD_ATTR);
    at.rq_psn = 0x1000000;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.rq_psn = 0x654321;
    at.path_mtu = 0;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.path_mtu = 6;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.path_mtu = PLDMA_MTU_2048;   /* above the device's mtu (1024) */
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.path_mtu = PLDMA_MTU_1024;
    at.dest_qpn = 0x1000000;
    refused(&n, 0, PLDMA_QPA_REQ_RTR, &at, PLDMA_QP_ST_BAD_ATTR);
    at.dest_qpn = 0x123456;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_RTR, &at), ==,
                     PLDMA_QP_ST_OK);
    qpldma_qp_query(&n.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTR);
    g_assert_cmphex(q.rq_psn, ==, 0x654321);
    g_assert_cmphex(q.dest_qpn, ==, 0x123456);
    g_assert_cmphex(q.dest_ip, ==, IP_B);
    g_assert_true(memcmp(q.dest_mac, peer, 6) == 0);

    /* RTR: no way back to INIT, RTS needs its attributes */
    at.state = PLDMA_QPS_INIT;
    refused(&n, 0, PLDMA_QPA_STATE, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = PLDMA_QPS_RTS;
    refused(&n, 0, PLDMA_QPA_REQ_RTS & ~PLDMA_QPA_SQ_PSN, &at,
            PLDMA_QP_ST_BAD_ATTR);
    at.sq_psn = 0x1000000;
    refused(&n, 0, PLDMA_QPA_REQ_RTS, &at, PLDMA_QP_ST_BAD_ATTR);
    at.sq_psn = 0xabcdef;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_REQ_RTS, &at), ==,
                     PLDMA_QP_ST_OK);
    qpldma_qp_query(&n.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_RTS);
    g_assert_cmphex(q.sq_psn, ==, 0xabcdef);
    g_assert_cmphex(q.timers, ==, TIMERS);

    /* RTS -> RTS with an optional attribute; RTS -> RTR refused */
    at.access = PLDMA_KEY_ACC_READ;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_STATE |
                                      PLDMA_QPA_ACCESS_FLAGS, &at), ==,
                     PLDMA_QP_ST_OK);
    refused(&n, 0, PLDMA_QPA_STATE | PLDMA_QPA_PATH_MTU, &at,
            PLDMA_QP_ST_BAD_ATTR);
    at.state = PLDMA_QPS_RTR;
    refused(&n, 0, PLDMA_QPA_STATE, &at, PLDMA_QP_ST_BAD_STATE);

    /* to ERR; ERR goes only to RESET (or ERR) */
    at.state = PLDMA_QPS_ERR;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 0, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 0), ==, PLDMA_QPS_ERR);
    at.state = PLDMA_QPS_RTS;
    refused(&n, 0, PLDMA_QPA_REQ_RTS, &at, PLDMA_QP_ST_BAD_STATE);
    at.state = PLDMA_QPS_INIT;
    refused(&n, 0, PLDMA_QPA_REQ_INIT, &at, PLDMA_QP_ST_BAD_STATE);

    /* ERR -> RESET: everything cleared, a new QPN of the same index */
    qpn = qpldma_qpn(&n.d, 0);
    qp_reset(&n, 0);
    qpldma_qp_query(&n.d, 0, &q);
    g_assert_cmpuint(q.state, ==, PLDMA_QPS_RESET);
    g_assert_cmphex(q.dest_qpn, ==, 0);
    g_assert_cmphex(q.sq_psn, ==, 0);
    qpn2 = qpldma_qpn(&n.d, 0);
    g_assert_cmphex(qpn2, !=, qpn);
    g_assert_cmphex(qpn2 & 0xff, ==, 0);

    /* INIT -> ERR -> RESET, and RESET -> RESET changes the QPN too */
    at.state = PLDMA_QPS_INIT;
    at.access = PLDMA_KEY_ACC_WRITE;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 3, PLDMA_QPA_REQ_INIT, &at), ==,
                     PLDMA_QP_ST_OK);
    at.state = PLDMA_QPS_ERR;
    g_assert_cmpuint(qpldma_qp_modify(&n.d, 3, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
    qpn = qpldma_qpn(&n.d, 5);
    qp_reset(&n, 5);
    g_assert_cmphex(qpldma_qpn(&n.d, 5), !=, qpn);

    /* bad index and command */
    qpldma_wr(&n.d, PLDMA_QP_SEL, 16);
    qpldma_wr(&n.d, PLDMA_QP_CMD, PLDMA_QP_CMD_MODIFY);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_STATUS), ==,
                     PLDMA_QP_ST_BAD_INDEX);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_QPN), ==, 0);
    qpldma_wr(&n.d, PLDMA_QP_SEL, 0);
    qpldma_wr(&n.d, PLDMA_QP_CMD, 7);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_STATUS), ==,
                     PLDMA_QP_ST_BAD_CMD);

    /* CTRL_RESET: every QP in RESET with a new QPN, NET_IP as at start */
    qpn = qpldma_qpn(&n.d, 3);
    qpldma_wr(&n.d, PLDMA_CTRL, PLDMA_CTRL_RESET);
    g_assert_cmpuint(qpldma_qp_state(&n.d, 3), ==, PLDMA_QPS_RESET);
    g_assert_cmphex(qpldma_qpn(&n.d, 3), !=, qpn);
    g_assert_cmphex(qpldma_rd(&n.d, PLDMA_NET_IP), ==, IP_A);
    qtest_quit(n.qts);

    /* no link: no QPs */
    node_start(&n, "-M virt -m 512M -nodefaults -device pldma,id=dma0");
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_CAP) & PLDMA_CAP_QP, ==, 0);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_NUM), ==, 0);
    qtest_quit(n.qts);

    /* num-qps */
    node_start(&n, "-M virt -m 512M -nodefaults "
               "-device pldma,id=dma0,netdev=n0,node-id=1,num-qps=3 "
               "-netdev hubport,id=n0,hubid=0");
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_NUM), ==, 3);
    qpldma_wr(&n.d, PLDMA_QP_SEL, 3);
    qpldma_wr(&n.d, PLDMA_QP_CMD, PLDMA_QP_CMD_QUERY);
    g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_QP_STATUS), ==,
                     PLDMA_QP_ST_BAD_INDEX);
    qtest_quit(n.qts);
}

/*
 * rkeys: a REGISTER gives a random nonzero 24-bit generation, never the
 * index's last one (after a revoke too), not a counter
 */
static void test_rkey_random(void)
{
    uint32_t rkey, prev = 0, steps = 0, i;
    Node n;

    node_start(&n, "-M virt -m 512M -nodefaults "
               "-device pldma,id=dma0,netdev=n0,node-id=1 "
               "-netdev hubport,id=n0,hubid=0");
    for (i = 0; i < 32; i++) {
        if (i & 1) {
            qpldma_key_cmd(&n.d, 5, PLDMA_KEY_CMD_REVOKE);
            g_assert_cmpuint(qpldma_rd(&n.d, PLDMA_KEY_RKEY), ==, 0);
        }
        rkey = key_register(&n, 5, 0, ALLOC_BASE, PAGE, PLDMA_KEY_ACC_WRITE);
        g_assert_cmphex(PLDMA_RKEY_INDEX(rkey), ==, 5);
        g_assert_cmphex(PLDMA_RKEY_GEN(rkey), !=, 0);
        g_assert_cmphex(rkey, !=, prev);
        if (i && PLDMA_RKEY_GEN(rkey) == ((PLDMA_RKEY_GEN(prev) + 1) &
                                           0xffffff)) {
            steps++;
        }
        prev = rkey;
    }
    g_assert_cmpuint(steps, <, 4);  /* not a counter */
    qtest_quit(n.qts);
}

void pldma_qp_state_register(void)
{
    qtest_add_func("/pldma-qp/state-machine", test_state_machine);
    qtest_add_func("/pldma-qp/rkey-random", test_rkey_random);
}
