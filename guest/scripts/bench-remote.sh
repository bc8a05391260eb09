# SPDX-License-Identifier: GPL-2.0-or-later
# `make bench` (BENCH=remote or all): RDMA WRITE and READ between two
# guests, booted by scripts/bench through scripts/run-pair:
#   link l0: node 1 (guest 1) <-> node 2 (guest 2, rnr-resume=on)
#   link l1: node 3 (guest 1) <-> node 4 (guest 2, rnr-resume=off)
# all report mode.  Guest 2 serves windows (pldma-rbench -S), guest 1
# measures (pldma-rbench -r) and prints the CSV between markers.
# Role "both" (bench-remote-model.sh, make bench MODEL=1): the four nodes
# in one guest, the window server in the background, on the loopback
# interface.
# Kernel command line: pldma.bench_iters=N, pldma.bench_sizes=4K,64K,...,
# pldma.bench_cases=write-pre,read-one,... (pldma-rbench -t; default all)
role=${PLDMA_RBENCH_ROLE:-} iters=5 sizes=4K,64K,1M,4M,16M cases=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.rdma=*) role=${arg#pldma.rdma=} ;;
	pldma.bench_iters=*) iters=${arg#pldma.bench_iters=} ;;
	pldma.bench_sizes=*) sizes=${arg#pldma.bench_sizes=} ;;
	pldma.bench_cases=*) cases=${arg#pldma.bench_cases=} ;;
	esac
done

# requester HOST: measure against the window server at HOST:5000, the CSV
# between markers, the devices' network counters, then stop the server
requester() {
	local rc d
	echo "=== PLDMA-BENCH-CSV-BEGIN"
	pldma-rbench -r "$1:5000" -n 1:2 -T 3:4 -i "$iters" -s "$sizes" \
		${cases:+-t "$cases"}
	rc=$?
	echo "=== PLDMA-BENCH-CSV-END"
	for d in /sys/kernel/debug/pldma/pldma*; do
		[ -f "$d/net" ] || continue
		echo "# $d/net:"; grep -v ': 0$' "$d/net" | sed 's/^/#   /'
	done
	pldma-rdma quit "$1" 5000 || rc=1
	return $rc
}

insmod /lib/modules/pldma.ko || exit 1
ip link set lo up
case "$role" in
1|2)
	ip addr add "10.0.0.$role/24" dev eth0 && ip link set eth0 up || exit 1
	;;
esac
case "$role" in
2)
	pldma-rbench -S 5000
	exit $?
	;;
1)
	requester 10.0.0.2
	rc=$?
	rmmod pldma
	exit $rc
	;;
both)
	pldma-rbench -S 5000 &
	server=$!
	requester 127.0.0.1
	rc=$?
	wait $server || rc=1
	rmmod pldma
	exit $rc
	;;
esac
echo "pldma.rdma=1|2 missing from the command line"
exit 1
