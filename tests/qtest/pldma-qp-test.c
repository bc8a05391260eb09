/*
 * QTest for the PLDMA's RC queue pairs (docs/specs/pldma.rst, "Queue
 * pairs"): the state machine and its attributes, two QEMU processes
 * connected QP to QP over -netdev stream, and the test itself as a
 * hostile peer that injects frames
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The fixtures are in pldma/framework.c, the tests in pldma/qp-*-tests.c
 * by subject.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "pldma/framework.h"

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!qtest_has_device("pldma")) {
        return g_test_run();
    }
    pldma_qp_state_register();
    pldma_qp_transfer_register();
    pldma_qp_peer_register();
    pldma_qp_read_register();
    pldma_qp_cq_register();
    pldma_qp_recv_register();
    pldma_qp_loopback_register();
    pldma_qp_migration_register();
    return g_test_run();
}
