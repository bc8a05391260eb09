# SPDX-License-Identifier: GPL-2.0-or-later
# One of two guests on one PLDMA link and nothing else (tests/rdma/run-eth,
# pldma.rdma=1 or 2 on the command line says which): the PLDMA's Ethernet
# function as a net_device.  Its IPv4 address becomes the node's RoCE
# address (NET_IP); ping goes both ways; ARP learns the peer's MAC, the
# one its QPs use; and pldma-rdma runs RDMA WRITE and READ over a QP pair
# with its TCP side channel on the same interface, while ping runs too.
# TAP lines are unnumbered: tests/rdma/run-eth numbers those of both guests.
. /tests/lib.sh
rdma_setup
net=192.168.77
case "$role" in
1) me=$net.1 peer=$net.2 ;;
2) me=$net.2 peer=$net.1 ;;
*) echo "not ok - pldma.rdma=1|2 missing from the command line"; exit 1 ;;
esac
peer_role=$((3 - role))

insmod /lib/modules/pldma.ko; res $? "insmod pldma.ko"
ip link set lo up
dev=
for d in /sys/class/net/pldmaeth*; do
	[ -e "$d" ] && dev=${d##*/} && break
done
[ -n "$dev" ]; res $? "a PLDMA net_device: ${dev:-none}"
dbg=$(echo /sys/kernel/debug/pldma/pldma*/qps | cut -d' ' -f1)
grep -q "^ip: 10.0.0.$role\$" "$dbg"; res $? "RoCE address before: the default 10.0.0.$role"
ip addr add "$me/24" dev "$dev" && ip link set "$dev" up
res $? "$dev up with $me"
grep -q "^ip: $me\$" "$dbg"; res $? "RoCE address (NET_IP) follows the interface: $me"
ip -o link show "$dev" | sed 's/^/# /'

# the peer boots at its own pace: wait for it (at most 120 s)
i=0
until ping -c 1 -W 1 "$peer" >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -lt 120 ] || break
done
ping -c 5 -i 0.2 "$peer" >/tmp/ping.log 2>&1
grep -q ' 5 packets received' /tmp/ping.log; res $? "ping $peer: 5 of 5 answered"
tail -n 2 /tmp/ping.log | sed 's/^/# /'
mac=$(awk -v ip="$peer" '$1 == ip { print $4 }' /proc/net/arp)
[ "$mac" = "52:54:00:4c:44:0$peer_role" ]
res $? "ARP: $peer is at ${mac:-?}, the MAC of node $peer_role's PLDMA"

# RDMA over a QP pair and ping on the same link, at the same time
ping -c 60 -i 0.1 "$peer" >/tmp/ping2.log 2>&1 &
pinger=$!
if [ "$role" = 2 ]; then
	pldma-rdma serve 5000; res $? "our server ends"
else
	pldma-rdma pair "$peer" 5000 1 2 one one 4096 65659 1048576 ||
		fails=$((fails + 1))
	pldma-rdma quit "$peer" 5000; res $? "the peer's server ends"
fi
wait $pinger
grep -q ' 60 packets received' /tmp/ping2.log
res $? "ping $peer during RDMA: 60 of 60 answered"
tail -n 2 /tmp/ping2.log | sed 's/^/# /'
echo "# $dev: $(cat /sys/class/net/"$dev"/statistics/rx_packets) rx, $(cat /sys/class/net/"$dev"/statistics/tx_packets) tx, $(cat /sys/class/net/"$dev"/statistics/rx_errors) rx errors"
if [ "$role" = 2 ]; then
	# pldma-pci: the Ethernet function has its own MSI-X vector
	n=$(awk '/pldma .* eth$/ { for (i = 2; i <= NF; i++) {
		if ($i !~ /^[0-9]+$/) break; s += $i } } END { print s + 0 }' \
		/proc/interrupts)
	[ "$n" -gt 0 ]; res $? "pldma-pci: MSI-X vector 'eth': $n interrupts"
fi
d=${dbg%/qps}
echo "# $d/net:"; grep -v ': 0$' "$d/net" | sed 's/^/#   /'
# keep the link up until the peer is done with its pings
sleep 5
ip link set "$dev" down; res $? "$dev down"
rmmod pldma; res $? "rmmod pldma"
kernel_reports
[ "$fails" = 0 ]
