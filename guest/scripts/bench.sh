# SPDX-License-Identifier: GPL-2.0-or-later
# `make bench`: every fault strategy over untouched buffers, CSV on the
# console between markers (scripts/bench extracts it and plots it).
# Kernel command line: pldma.bench_iters=N (default 7),
# pldma.bench_sizes=4K,64K,... (default 4K,64K,1M,4M),
# pldma.bench_strats=prefault,stall,... (pldma-bench -t; default all)
iters=7 sizes=4K,64K,1M,4M strats=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.bench_iters=*) iters=${arg#pldma.bench_iters=} ;;
	pldma.bench_sizes=*) sizes=${arg#pldma.bench_sizes=} ;;
	pldma.bench_strats=*) strats=${arg#pldma.bench_strats=} ;;
	esac
done
insmod /lib/modules/pldma.ko || exit 1
echo "=== PLDMA-BENCH-CSV-BEGIN"
pldma-bench -i "$iters" -s "$sizes" ${strats:+-t "$strats"}
rc=$?
echo "=== PLDMA-BENCH-CSV-END"
rmmod pldma
exit $rc
