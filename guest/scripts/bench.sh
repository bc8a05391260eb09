# SPDX-License-Identifier: GPL-2.0-or-later
# `make bench`: every fault strategy over untouched buffers, CSV on the
# console between markers (scripts/bench extracts it and plots it).
insmod /lib/modules/pldma.ko || exit 1
echo "=== PLDMA-BENCH-CSV-BEGIN"
pldma-bench -i "${PLDMA_BENCH_ITERS:-7}" -s 4K,64K,1M,4M
rc=$?
echo "=== PLDMA-BENCH-CSV-END"
rmmod pldma
exit $rc
