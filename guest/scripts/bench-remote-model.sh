# SPDX-License-Identifier: GPL-2.0-or-later
# `make bench MODEL=1 BENCH=remote`: RDMA WRITE and READ as bench-remote.sh
# measures them between two guests, here between two pairs of devices of
# one guest (bench-remote-model.opts), so that the timing model's link
# and the guest's -icount clock time both ends.  The window server
# (pldma-rbench -S) serves nodes 2 and 4 on the loopback interface; the
# requester (pldma-rbench -r) moves data from nodes 1 and 3 and prints the
# CSV between markers.
# Kernel command line: pldma.bench_iters=N, pldma.bench_sizes=4K,64K,...,
# pldma.bench_cases=write-pre,read-one,... (pldma-rbench -t; default all)
iters=5 sizes=4K,64K,1M,4M cases=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.bench_iters=*) iters=${arg#pldma.bench_iters=} ;;
	pldma.bench_sizes=*) sizes=${arg#pldma.bench_sizes=} ;;
	pldma.bench_cases=*) cases=${arg#pldma.bench_cases=} ;;
	esac
done
insmod /lib/modules/pldma.ko || exit 1
ip link set lo up || exit 1
pldma-rbench -S 5000 &
server=$!
echo "=== PLDMA-BENCH-CSV-BEGIN"
pldma-rbench -r 127.0.0.1:5000 -n 1:2 -T 3:4 -i "$iters" -s "$sizes" \
	${cases:+-t "$cases"}
rc=$?
echo "=== PLDMA-BENCH-CSV-END"
for d in /sys/kernel/debug/pldma/pldma*; do
	[ -f "$d/net" ] || continue
	echo "# $d/net:"; grep -v ': 0$' "$d/net" | sed 's/^/#   /'
done
pldma-rdma quit 127.0.0.1 5000 || rc=1
wait $server || rc=1
rmmod pldma
exit $rc
