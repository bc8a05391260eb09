# SPDX-License-Identifier: GPL-2.0-or-later
# The Linux soft-RoCE (rdma_rxe) node of tests/rxe/run: rxe0 on the
# virtio-net NIC whose MAC is 52:54:00:00:02:01 (the RoCE link, shared with
# a PLDMA of the other guest, node-id 1, IP 10.0.0.1), 10.0.0.100 on it;
# the TCP side channel on 52:54:00:00:00:02 (10.0.1.2, the PLDMA guest is
# 10.0.1.1).  Needs the rdma userland (scripts/run-guest --rdma-userland,
# this test's .opts): Debian's libibverbs, librxe, ibverbs-utils, iproute2's
# rdma, and pldma-verbs-peer.
#
# rxe -> PLDMA: pldma-verbs-peer pair, to the PLDMA guest's window server;
# PLDMA -> rxe: pldma-verbs-peer serve, for the PLDMA guest's requester;
# SEND/RECV both ways: pldma-verbs-peer msg, side B of the PLDMA guest's
# pldma-rdma msg listen.
# On tests/rdma/run-vde's switch the same node serves and pairs with two
# PLDMA guests: pldma.rxe_peers=1,2 (their node ids, side channel
# 10.0.1.N), pldma.rxe_sc=3 (its own side channel address 10.0.1.3).
# Then rxe's counters: "# rxe0 COUNTER VALUE" lines that tests/rxe/run
# compares with its capture of the link, and TAP lines on those that must
# stay 0.
. /tests/lib.sh
rdma_setup
# boot cost of the initramfs (tests/rxe/run compares the two nodes)
echo "# boot: /init at $(cut -d' ' -f1 /proc/uptime) s; $(dmesg | grep -E 'Trying to unpack|Freeing initrd memory' | sed 's/^\[ *\([0-9.]*\)\] /\1 s: /' | paste -sd';')"
sizes="4096 65659 1048576 16777216"
# the PLDMA's responder faults, each an RNR NAK that rxe waits out (its
# timer, not the "resend now" ACK): touch-ahead keeps 16 MiB at 256 of them
strat=touch16
odp=
peers=1
scip=2
lossy=
msg=1
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.rxe_sizes=*) sizes=$(echo "${arg#*=}" | tr , ' ') ;;
	pldma.rxe_rstrat=*) strat=${arg#*=} ;;
	pldma.rxe_odp=1) odp=-o ;;
	pldma.rxe_peers=*) peers=$(echo "${arg#*=}" | tr , ' ') ;;
	pldma.rxe_sc=*) scip=${arg#*=} ;;
	pldma.rxe_lossy=1) lossy=1 ;;
	pldma.rxe_msg=0) msg= ;;
	esac
done
npeers=$(echo $peers | wc -w)

ifname_of() {
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address")" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}
data=$(ifname_of 52:54:00:00:02:01); res $? "the RoCE link's NIC: $data"
sc=$(ifname_of 52:54:00:00:00:02); res $? "the side channel's NIC: $sc"
ip link set lo up
# nothing but RoCE on the link: no IPv6 neighbour discovery or router
# solicitations for the PLDMA (which has no Ethernet function) to drop
echo 1 >/proc/sys/net/ipv6/conf/"$data"/disable_ipv6 2>/dev/null
ip addr add 10.0.0.100/24 dev "$data" && ip link set "$data" up
res $? "$data 10.0.0.100"
ip addr add "10.0.1.$scip/24" dev "$sc" && ip link set "$sc" up
res $? "side channel: $sc 10.0.1.$scip"
echo "# rxe node: Linux $(uname -r)"
echo "# rdma userland: $(tr '\n' ';' </usr/lib/aarch64-linux-gnu/rdma-userland.versions)"
rdma link add rxe0 type rxe netdev "$data"
res $? "rdma link add rxe0 type rxe netdev $data"
rdma link show | sed 's/^/# /'
ibv_devinfo -d rxe0 | grep -E 'transport|fw_ver|state|active_mtu|link_layer' | sed 's/^/# /'

# shellcheck disable=SC2086
pldma-verbs-peer $odp serve 5001 "$npeers" &
server=$!
for p in $peers; do
	# shellcheck disable=SC2086
	pldma-verbs-peer -s "$strat" pair "10.0.1.$p" 5000 "$p" $sizes ||
		fails=$((fails + 1))
done
# SEND/RECV both ways with the PLDMA guest's pldma-rdma msg listen (port
# 5002; not on tests/rdma/run-vde's switch: pldma.rxe_msg=0)
C=/sys/class/infiniband/rxe0/ports/1/hw_counters
oos0=$(cat "$C/out_of_seq_request")
if [ -n "$msg" ]; then
	for p in $peers; do
		# shellcheck disable=SC2086
		pldma-verbs-peer msg "10.0.1.$p" 5002 $sizes || fails=$((fails + 1))
	done
fi
oos1=$(cat "$C/out_of_seq_request")
for p in $peers; do
	pldma-verbs-peer quit "10.0.1.$p" 5000
	res $? "PLDMA node $p's server ends"
done
wait $server; res $? "our verbs server ends (the PLDMA guests are done with it)"

for f in "$C"/*; do
	echo "# rxe0 $(basename "$f") $(cat "$f")"
done
rdma statistic show link rxe0/1 | sed 's/^/# /'
# what rxe counts as an error of the peer's or of the link's: none may
# have happened.  On a switch (pldma.rxe_lossy=1, tests/rdma/run-vde) the
# link loses frames: vde_switch drops what a port's socket cannot queue
# (net.unix.max_dgram_qlen, 10 datagrams) while its QEMU is busy, so
# sequence errors both ways are RC doing its job there, and only a retry
# count running out is a failure
seqc="out_of_seq_request rcvd_seq_err"
# A SEND before rxe's receive WQE (msg) is RNR NAKed by rxe, and the
# segments the PLDMA already sent behind it reach rxe out of sequence:
# rxe counts them (out_of_seq_request), as any responder's RNR NAK does.
# Before msg nothing may have come out of sequence.
if [ -n "$msg" ]; then
	[ "$oos0" = 0 ]
	res $? "rxe0 out_of_seq_request before SEND/RECV: $oos0"
	echo "# rxe0 out_of_seq_request during SEND/RECV: $((oos1 - oos0)) (segments behind rxe's own RNR NAKs of the SEND before its receive WQE)"
	seqc="rcvd_seq_err"
fi
if [ -n "$lossy" ]; then
	for c in $seqc; do
		echo "# rxe0 $c: $(cat "$C/$c" 2>/dev/null) (lost frames on the switch, recovered)"
	done
	seqc=
fi
for c in $seqc retry_exceeded_err retry_rnr_exceeded_err send_err link_downed; do
	v=$(cat "$C/$c" 2>/dev/null)
	[ "$v" = 0 ]; res $? "rxe0 $c: ${v:-missing}"
done
# not errors, but what PLDMA costs a standard peer (tests/rxe/run's
# findings): completer_retry_err, rxe's retransmit timer expiring (the
# PLDMA's READ responder stops after a window of 64 responses and waits
# for a new request); duplicate_request, the PLDMA requester asking again
# for READ responses it dropped on a local fault
echo "# rxe0 retransmit timeouts (completer_retry_err): $(cat "$C/completer_retry_err")"
echo "# rxe0 duplicate requests served (duplicate_request): $(cat "$C/duplicate_request")"
v=$(cat "$C/rcvd_rnr_err")
[ "${v:-0}" -gt 0 ]; res $? "rxe0 rcvd_rnr_err: $v (the PLDMA's responder faults, RNR NAKed)"
kernel_reports
[ "$fails" = 0 ]
