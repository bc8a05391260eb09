# SPDX-License-Identifier: GPL-2.0-or-later
# The PLDMA node of tests/rxe/run: its PLDMA (node-id 1, 10.0.0.1) on the
# link of a Linux soft-RoCE (rxe) guest (10.0.0.100); the TCP side
# channel on the virtio-net NIC 52:54:00:00:00:01 (10.0.1.1, the rxe guest
# is 10.0.1.2).
#
# PLDMA -> rxe: pldma-rdma verbs, WRITE and READ of each size from local
# memory into the rxe guest's registered windows; rxe -> PLDMA: pldma-rdma
# serve, untouched windows (responder faults answered with RNR NAKs) for
# the rxe guest's requester; SEND/RECV both ways: pldma-rdma msg listen
# (port 5002) against the rxe guest's pldma-verbs-peer msg.
. /tests/lib.sh
rdma_setup
# boot cost of the initramfs (tests/rxe/run compares the two nodes)
echo "# boot: /init at $(cut -d' ' -f1 /proc/uptime) s; $(dmesg | grep -E 'Trying to unpack|Freeing initrd memory' | sed 's/^\[ *\([0-9.]*\)\] /\1 s: /' | paste -sd';')"
sizes="4096 65659 1048576 16777216"
# untouched local memory (local faults served one by one) for the sizes
# where a standard responder copes with PLDMA's READ re-requests (a local
# fault in a READ response stream makes the requester ask again from the
# faulting page while rxe still serves the earlier request: at 1 MiB those
# duplicates pile up until the READ times out, tests/rxe/run's findings);
# prefaulted local memory for the whole matrix
usizes="4096 65659"
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.rxe_sizes=*) sizes=$(echo "${arg#*=}" | tr , ' ') ;;
	pldma.rxe_usizes=*) usizes=$(echo "${arg#*=}" | tr , ' ') ;;
	esac
done

insmod /lib/modules/pldma.ko; res $? "insmod pldma.ko"
sc=
for d in /sys/class/net/*; do
	[ "$(cat "$d/address")" = 52:54:00:00:00:01 ] && sc=$(basename "$d")
done
ip link set lo up
ip addr add 10.0.1.1/24 dev "$sc" && ip link set "$sc" up
res $? "side channel: $sc 10.0.1.1"

pldma-rdma serve 5000 &
server=$!
# SEND/RECV both ways with the rxe guest's pldma-verbs-peer msg (side B):
# our receive buffers untouched (responder faults), a SEND before the
# receive WQE (RNR NAKs), SEND with immediate, WRITE with immediate
# shellcheck disable=SC2086
PLDMA_MSG_PEER=verbs pldma-rdma msg listen 5002 1 $sizes &
msgpid=$!
# shellcheck disable=SC2086
pldma-rdma verbs 10.0.1.2 5001 1 one $usizes || fails=$((fails + 1))
# shellcheck disable=SC2086
pldma-rdma verbs 10.0.1.2 5001 1 prefault $sizes || fails=$((fails + 1))
pldma-rdma quit 10.0.1.2 5001; res $? "the rxe guest's server ends"
wait $server; res $? "our server ends (the rxe guest is done with it)"
wait $msgpid; res $? "SEND/RECV with the rxe guest (pldma-rdma msg listen) passed"
for d in /sys/kernel/debug/pldma/pldma*; do
	[ -f "$d/net" ] || continue
	echo "# $d/net:"; grep -v ': 0$' "$d/net" | sed 's/^/#   /'
	[ -f "$d/qps" ] && { echo "# $d/qps:"; sed 's/^/#   /' "$d/qps"; }
done
rmmod pldma; res $? "rmmod pldma"
kernel_reports
[ "$fails" = 0 ]
