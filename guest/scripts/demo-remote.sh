# SPDX-License-Identifier: GPL-2.0-or-later
# `make demo`, second part: remote DMA between two guests, booted by
# scripts/demo-remote (scripts/run-pair): node 1 in guest 1 and node 2 in
# guest 2, report mode, linked by -netdev stream.  Guest 2 serves windows
# (pldma-demo -S), guest 1 writes and reads them (pldma-demo -r).
role=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.rdma=*) role=${arg#pldma.rdma=} ;;
	esac
done
case "$role" in 1|2) ;; *) echo "pldma.rdma=1|2 missing"; exit 1 ;; esac
insmod /lib/modules/pldma.ko || exit 1
ip link set lo up
ip addr add "10.0.0.$role/24" dev eth0 && ip link set eth0 up || exit 1
if [ "$role" = 2 ]; then
	# until guest 1's QUIT
	pldma-demo -S 5000 >/dev/null
	exit $?
fi
echo "--- PLDMA remote demo ---"
dmesg | grep 'pldma.*remote DMA' | sed 's/^.*] /  /'
pldma-demo -r 10.0.0.2:5000:1:2
rc=$?
echo "the requester's network counters (/sys/kernel/debug/pldma/pldma0/net):"
grep -E '^(tx_frames|rx_frames|nak_rx_rnr|resume_rx|retx_segments|timeouts|ack_rx):' \
	/sys/kernel/debug/pldma/pldma0/net | sed 's/^/  /'
pldma-rdma quit 10.0.0.2 5000 || rc=1
[ "$rc" = 0 ] && echo "--- remote demo OK ---"
exit $rc
