# SPDX-License-Identifier: GPL-2.0-or-later
# One of three guests on a switch (tests/rdma/run-vde; pldma.rdma=1|2|3 on
# the command line says which): each guest's PLDMA (report mode, node-id =
# its number) is on one vde_switch (-netdev vde), its virtio-net (the TCP
# side channel, 10.0.1.N) on another.  Every node WRITEs to and READs from
# both others, into never-touched windows (responder faults), data
# verified, while serving its own windows to them.
#
# pldma.rdma3_rxe=N: node N is no PLDMA but Linux's soft-RoCE
# (guest/scripts/rxe-peer.sh, 10.0.0.100 on the switch, side channel
# 10.0.1.N): this node reaches it with pldma-rdma verbs (its port 5001;
# local faults one by one where a standard responder copes with the READ
# re-requests they cause, prefaulted above), and it reaches this node's
# window server as the other PLDMA does.
. /tests/lib.sh
rdma_setup
case "$role" in
1|2|3) ;;
*) echo "not ok - pldma.rdma=1|2|3 missing from the command line"; exit 1 ;;
esac
rxe=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.rdma3_rxe=*) rxe=${arg#*=} ;;
	esac
done

insmod /lib/modules/pldma.ko; res $? "insmod pldma.ko"
ip link set lo up
ip addr add "10.0.1.$role/24" dev eth0 && ip link set eth0 up
res $? "side channel: eth0 10.0.1.$role"
# ends after both peers' QUIT
pldma-rdma serve 5000 2 &
server=$!
# responder strategies differ by pair: one-by-one and touch-ahead
for p in 1 2 3; do
	[ "$p" = "$role" ] && continue
	if [ "$p" = "$rxe" ]; then
		# the switch loses frames: sequence NAKs are RC recovering
		PLDMA_LOSSY_LINK=1 pldma-rdma verbs "10.0.1.$p" 5001 "$role" \
			one 4096 65659 || fails=$((fails + 1))
		PLDMA_LOSSY_LINK=1 pldma-rdma verbs "10.0.1.$p" 5001 "$role" \
			prefault 262144 || fails=$((fails + 1))
		continue
	fi
	if [ $(((role + p) % 2)) = 0 ]; then rs=touch16; else rs=one; fi
	pldma-rdma pair "10.0.1.$p" 5000 "$role" "$p" one "$rs" 4096 65659 262144 ||
		fails=$((fails + 1))
done
for p in 1 2 3; do
	[ "$p" = "$role" ] && continue
	port=5000
	[ "$p" = "$rxe" ] && port=5001
	pldma-rdma quit "10.0.1.$p" $port; res $? "node $p's server ends"
done
wait $server; res $? "our server ends (both peers done)"
d=$(grep -l "^node: $role\$" /sys/kernel/debug/pldma/pldma*/net 2>/dev/null | head -n1)
[ -n "$d" ] && { echo "# $d:"; grep -v ': 0$' "$d" | sed 's/^/#   /'; }
rmmod pldma; res $? "rmmod pldma"
kernel_reports
[ "$fails" = 0 ]
