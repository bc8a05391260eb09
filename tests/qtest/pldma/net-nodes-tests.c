/*
 * Three PLDMA nodes on a vde switch
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
 * Wait for node @w's completion at @compl, running the three nodes' clocks:
 * a vde_switch drops frames when a port's socket is full, which the
 * retransmit timers repair
 */
static void nodes_step(void *opaque)
{
    Node *n = opaque;
    int j;

    g_usleep(200);
    for (j = 0; j < 3; j++) {
        qtest_clock_step(n[j].qts, STEP_NS);
    }
}

static uint32_t node_wait(Node *n, int w, uint64_t compl)
{
    return qpldma_wait_compl(&n[w].d, compl, nodes_step, n, WAIT_STEPS, NULL);
}

static void test_three_nodes_vde(void)
{
    g_autofree char *dir = g_dir_make_tmp("pldma-vde-XXXXXX", NULL);
    g_autofree char *sw = g_strdup_printf("%s/switch", dir);
    g_autofree char *pidf = g_strdup_printf("%s/pid", dir);
    g_autofree char *cmd = NULL, *pid = NULL, *rm = NULL;
    const uint32_t len = 256 * KiB + 44;
    uint64_t src, dst, pa2, va2, pa3, va3, compl;
    g_autofree uint8_t *data = NULL;
    uint32_t k2, k3, i;
    Node n[3] = { 0 };
    QPldmaRing r12, r13, r32;
    /* QPs: node 1's 0 to node 2's 0, 1's 1 to 3's 1, 3's 0 to 2's 1 */
    QPldmaQPEnd e[6] = {
        { .d = &n[0].d, .qp = 0, .sq = 0 }, { .d = &n[1].d, .qp = 0, .sq = 0 },
        { .d = &n[0].d, .qp = 1, .sq = 1 }, { .d = &n[2].d, .qp = 1, .sq = 1 },
        { .d = &n[2].d, .qp = 0, .sq = 0 }, { .d = &n[1].d, .qp = 1, .sq = 1 },
    };
    int status;

    if (!g_find_program_in_path("vde_switch")) {
        g_test_skip("vde_switch (Debian's vde2) is not installed");
        return;
    }
    cmd = g_strdup_printf("vde_switch -s %s -d -p %s", sw, pidf);
    g_assert_true(g_spawn_command_line_sync(cmd, NULL, NULL, &status, NULL));
    g_assert_cmpint(status, ==, 0);
    for (i = 0; i < 3; i++) {
        g_autofree char *dev = g_strdup_printf("node-id=%u", i + 1);
        g_autofree char *net = g_strdup_printf("vde,id=n0,sock=%s", sw);

        node_start_net(&n[i], dev, net, false, "stall", NULL);
    }
    for (i = 0; i < 6; i += 2) {
        qpldma_qp_connect_pair(&e[i], &e[i + 1], PLDMA_MTU_1024);
    }
    ring_init(&n[0], &r12, 0);
    ring_init(&n[0], &r13, 1);
    ring_init(&n[2], &r32, 0);
    src = alloc_pa(&n[0], len);
    data = qpldma_mem_random(n[0].qts, src, len);
    va2 = buffer(&n[1], len, &pa2, -1);
    va3 = buffer(&n[2], len, &pa3, -1);
    k2 = key_register(&n[1], 0, node_pd(&n[1]), va2, len, PLDMA_KEY_ACC_WRITE |
                      PLDMA_KEY_ACC_READ);
    k3 = key_register(&n[2], 0, node_pd(&n[2]), va3, len, PLDMA_KEY_ACC_WRITE);

    /* node 1 writes to nodes 2 and 3, node 3 reads node 2 back */
    compl = post(&n[0], &r12, PLDMA_OP_RDMA_WRITE, len, src, va2, k2);
    g_assert_cmpuint(node_wait(n, 0, compl), ==, PLDMA_ST_SUCCESS);
    compl = post(&n[0], &r13, PLDMA_OP_RDMA_WRITE, len, src, va3, k3);
    g_assert_cmpuint(node_wait(n, 0, compl), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(n[1].qts, pa2, data, len);
    qpldma_mem_check(n[2].qts, pa3, data, len);
    dst = alloc_pa(&n[2], len);
    compl = post(&n[2], &r32, PLDMA_OP_RDMA_READ, len, dst, va2, k2);
    g_assert_cmpuint(node_wait(n, 2, compl), ==, PLDMA_ST_SUCCESS);
    qpldma_mem_check(n[2].qts, dst, data, len);
    /* beyond the range of the key: refused */
    compl = post(&n[2], &r32, PLDMA_OP_RDMA_WRITE, len, dst, va2 + 4096,
                 k2);
    g_assert_cmpuint(node_wait(n, 2, compl), ==, PLDMA_ST_REMOTE_ACCESS);

    for (i = 0; i < 3; i++) {
        qtest_quit(n[i].qts);
    }
    g_assert_true(g_file_get_contents(pidf, &pid, NULL, NULL));
    kill(atoi(pid), SIGTERM);
    rm = g_strdup_printf("rm -rf %s", dir);
    g_assert_true(g_spawn_command_line_sync(rm, NULL, NULL, &status, NULL));
}

void pldma_net_nodes_register(void)
{
    qtest_add_func("/pldma-net/three-nodes-vde", test_three_nodes_vde);
}
