/*
 * QTest for the PLDMA virtual-address DMA engine
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The SMMUv3 stream table, context descriptors and stage-1 page tables are
 * built here in guest memory, as a Linux driver would, so that the device
 * is exercised through the real translation path with PASIDs, stalls and
 * terminated faults.
 *
 * The fixtures are in pldma/framework.c, the tests in
 * pldma/engine-*-tests.c by subject.
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "pldma/framework.h"

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    pldma_engine_copy_register();
    pldma_engine_stall_register();
    pldma_engine_report_register();
    pldma_engine_timing_register();
    return g_test_run();
}
