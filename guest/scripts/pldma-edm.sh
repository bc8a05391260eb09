# SPDX-License-Identifier: GPL-2.0-or-later
# The compute node of tests/edm/run (pldma.rdma=1), and its memory node
# (pldma.rdma=2): EDM's DM-Handler on verbs (guest/tests/pldma-edm.c).
#
# Both: the NIC 52:54:00:00:0e:0N (N = role) on the shared link, rxe0 on it
# (Linux's soft-RoCE: the verbs device, -d), 10.0.0.N; or on node 1 with
# pldma.edm_dev=pldmaN, that PLDMA's Ethernet port; pldma-edm comes on
# a small read-only virtio-blk disk holding a cpio archive (tests/edm/run
# cross-builds it against Debian's libibverbs, which this node's rdma
# userland carries: .opts, --rdma-userland).
# Node 1 loads pldma.ko and runs the client: a userfaultfd region whose
# pages live at node 2, its own PLDMA transfers faulting on them.
# Node 2 serves its store until node 1 says QUIT.
# Kernel command line: pldma.edm_pages=N, pldma.edm_threshold=T,
# pldma.edm_rounds=R, pldma.edm_strategies=S,S... (a client run each, the
# first with the stall-mode check -S), pldma.edm_dev=DEV, pldma.edm_nowp=1
# (evictions without write protection: the writer phase must fail).
. /tests/lib.sh
rdma_setup
pages=64 threshold=16 rounds=3 strats=one,user dev=rxe0 nowp=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.edm_pages=*) pages=${arg#*=} ;;
	pldma.edm_threshold=*) threshold=${arg#*=} ;;
	pldma.edm_rounds=*) rounds=${arg#*=} ;;
	pldma.edm_strategies=*) strats=${arg#*=} ;;
	pldma.edm_dev=*) dev=${arg#*=} ;;
	pldma.edm_nowp=1) nowp=-W ;;
	esac
done

(cd / && cpio -i -d -u </dev/vda 2>/dev/null) && [ -x /usr/bin/pldma-edm ]
res $? "pldma-edm unpacked from the virtio-blk disk"
# node 1's PLDMA may be its NIC on the link (tests/edm/run --verbs pldma:
# its Ethernet port, whose address is the RoCE address)
if [ "$role" = 1 ]; then
	insmod /lib/modules/pldma.ko; res $? "insmod pldma.ko"
fi
nic=
for d in /sys/class/net/*; do
	[ "$(cat "$d/address")" = "52:54:00:00:0e:0$role" ] && nic=$(basename "$d")
done
ip link set lo up
echo 1 >/proc/sys/net/ipv6/conf/"$nic"/disable_ipv6 2>/dev/null
ip addr add "10.0.0.$role/24" dev "$nic" && ip link set "$nic" up
res $? "$nic 10.0.0.$role"
if [ "$dev" = rxe0 ]; then
	rdma link add rxe0 type rxe netdev "$nic"
	res $? "rdma link add rxe0 type rxe netdev $nic"
fi

if [ "$role" = 2 ]; then
	echo "# memory node: Linux $(uname -r)"
	pldma-edm -d "$dev" memnode 5100 "$pages" || fails=$((fails + 1))
else
	echo "# compute node: Linux $(uname -r), verbs device $dev"
	stall=-S
	for strat in $(echo "$strats" | tr , ' '); do
		pldma-edm -d "$dev" -s "$strat" -t "$threshold" -r "$rounds" $stall $nowp \
			client 10.0.0.2 5100 "$pages" || fails=$((fails + 1))
		stall=
	done
	pldma-edm quit 10.0.0.2 5100; res $? "the memory node's server ends"
	for d in /sys/kernel/debug/pldma/pldma*; do
		[ -f "$d/stats" ] || continue
		echo "# $d/stats:"; grep -v ': 0$' "$d/stats" | sed 's/^/#   /'
	done
	rmmod pldma; res $? "rmmod pldma"
fi
kernel_reports
[ "$fails" = 0 ]
