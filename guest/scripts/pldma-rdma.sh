# SPDX-License-Identifier: GPL-2.0-or-later
# One of two guests doing RDMA WRITE and READ to each other, booted by
# tests/rdma/run (pldma.rdma=1 or 2 on the command line says which).
#
# Each guest has two PLDMA devices, each linked to one of the other guest's:
#   link l0: node 1 (guest 1, stall)  <-> node 2 (guest 2, report, rnr-resume)
#   link l1: node 3 (guest 1, report) <-> node 4 (guest 2, report, RNR timer)
# and a virtio-net link for the TCP side channel (10.0.0.1 <-> 10.0.0.2) over
# which pldma-rdma exchanges keys and addresses.  Both guests serve windows
# on port 5000 and request transfers from the other, at the same time.
# TAP lines are unnumbered: tests/rdma/run numbers those of both guests.
. /tests/lib.sh
rdma_setup
case "$role" in
1) me=10.0.0.1 peer=10.0.0.2 ;;
2) me=10.0.0.2 peer=10.0.0.1 ;;
*) echo "not ok - pldma.rdma=1|2 missing from the command line"; exit 1 ;;
esac

insmod /lib/modules/pldma.ko; res $? "insmod pldma.ko"
dmesg | grep -i 'pldma.*remote' | sed 's/^/# /'
ip link set lo up
ip addr add "$me/24" dev eth0 && ip link set eth0 up
res $? "side channel: eth0 $me"
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
echo 1 >/sys/kernel/tracing/events/pldma/pldma_mr_reg/enable
echo 1 >/sys/kernel/tracing/events/pldma/pldma_remote_resolved/enable
echo 1 >/sys/kernel/tracing/events/pldma/pldma_qp_modify/enable
echo 1 >/sys/kernel/tracing/events/pldma/pldma_cq_create/enable
echo 1 >/sys/kernel/tracing/events/pldma/pldma_cq_event/enable

pldma-rdma serve 5000 &
server=$!
sizes="4096 65659 1048576"
# SEND/RECV (CQs, receive queues), each way, on both links: l1 (report
# both sides, RNR timer) on port 5001, then l0 (stall <-> report, resend
# now) on port 5002
msizes="4096 65659 1048576 16777216"
if [ "$role" = 1 ]; then
	pldma-rdma selftest 1 || fails=$((fails + 1))
	pldma-rdma selftest 3 || fails=$((fails + 1))
	# shellcheck disable=SC2086
	pldma-rdma msg listen 5001 3 $msizes || fails=$((fails + 1))
	# shellcheck disable=SC2086
	pldma-rdma msg listen 5002 1 $msizes || fails=$((fails + 1))
	# stall requester -> report responder (resend-now), both responder
	# strategies; report <-> report (RNR timer): every report-side local
	# strategy against one-by-one and touch-ahead on the responder
	for p in "1 2 stall one" "1 2 stall touch16" "3 4 one one" \
		 "3 4 one touch16" "3 4 one touch64" "3 4 touch16 one" \
		 "3 4 touch16 touch16" "3 4 prefault one" \
		 "3 4 prefault touch16" "3 4 user one" "3 4 user touch16" \
		 "3 4 batch16 one" "3 4 batch16 touch16" "1 2 stall user" \
		 "3 4 one user" "3 4 touch16 user"; do
		# shellcheck disable=SC2086
		pldma-rdma pair "$peer" 5000 $p $sizes || fails=$((fails + 1))
	done
	pldma-rdma keys "$peer" 5000 3 4 || fails=$((fails + 1))
else
	pldma-rdma selftest 2 || fails=$((fails + 1))
	# shellcheck disable=SC2086
	pldma-rdma msg connect "$peer" 5001 4 $msizes || fails=$((fails + 1))
	# shellcheck disable=SC2086
	pldma-rdma msg connect "$peer" 5002 2 $msizes || fails=$((fails + 1))
	# report requester -> stall responder (IOPF resolves the responder's
	# stall), every report-side local strategy
	for p in "2 1 one stall" "2 1 touch16 stall" "2 1 user stall" \
		 "2 1 prefault stall" "2 1 batch16 stall"; do
		# shellcheck disable=SC2086
		pldma-rdma pair "$peer" 5000 $p $sizes || fails=$((fails + 1))
	done
fi
pldma-rdma quit "$peer" 5000; res $? "the peer's server ends"
# ours ends when the peer is done with it
wait $server; res $? "our server ends"
for d in /sys/kernel/debug/pldma/pldma*; do
	[ -f "$d/net" ] || continue
	echo "# $d/net:"; grep -v ': 0$' "$d/net" | sed 's/^/#   /'
	grep -E '^remote_' "$d/stats" | sed 's/^/#   /'
	[ -f "$d/qps" ] && { echo "# $d/qps:"; sed 's/^/#   /' "$d/qps"; }
	[ -f "$d/cqs" ] && { echo "# $d/cqs:"; sed 's/^/#   /' "$d/cqs"; }
done
echo "# trace (first and last windows registered, responder faults served):"
grep -m 2 -E 'pldma_(mr_reg|remote_resolved)' /sys/kernel/tracing/trace | sed 's/^/#   /'
grep -E 'pldma_(mr_reg|remote_resolved)' /sys/kernel/tracing/trace | tail -n 2 | sed 's/^/#   /'
echo "# trace (QP transitions the device refused, then a connection):"
grep -m 2 -E 'pldma_qp_modify.* status [1-9]' /sys/kernel/tracing/trace | sed 's/^/#   /'
grep -m 2 -E 'pldma_qp_modify.*(INIT -> RTR|RTR -> RTS).* status 0' /sys/kernel/tracing/trace | sed 's/^/#   /'
echo "# trace (first CQs created, first CQ events):"
grep -m 2 -E 'pldma_cq_create' /sys/kernel/tracing/trace | sed 's/^/#   /'
grep -m 2 -E 'pldma_cq_event' /sys/kernel/tracing/trace | sed 's/^/#   /'
rmmod pldma; res $? "rmmod pldma"
kernel_reports
[ "$fails" = 0 ]
