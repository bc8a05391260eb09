/*
 * QTest for the PLDMA's remote DMA: two QEMU processes, each with a pldma
 * on -M virt, linked by -netdev stream over a unix socket
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Node A (node-id 1) is the requester, node B (node-id 2) the responder,
 * through A's QP 0 (send queue channel 0) connected to B's QP 0, PSNs
 * from 0, B's PD its PASID when it has an SMMU.  Data is compared byte
 * for byte; responder faults are made by leaving
 * pages out of B's SMMU page tables, and resolved as a driver would: map
 * the page, then KEY_CMD_RESOLVED (report mode) or CMD_RESUME (stall).
 * The capture of one test is read back with tshark when it is installed.
 *
 * The fixtures are in pldma/framework.c, the tests in pldma/net-*-tests.c
 * by subject.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "pldma/framework.h"

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (strcmp(qtest_get_arch(), "aarch64")) {
        return g_test_run();
    }
    pldma_net_transfer_register();
    pldma_net_fault_register();
    pldma_net_peer_register();
    pldma_net_nodes_register();
    return g_test_run();
}
