# SPDX-License-Identifier: GPL-2.0-or-later
# PLDMA as a Linux RDMA device, seen by Debian's unmodified rdma-core
# (libibverbs1, ibverbs-utils) through PLDMA's provider: pldma.ko registers
# one ib_device per PLDMA with QPs; ibv_devices lists them, ibv_devinfo -v
# opens them (a ucontext: the process's mm bound by SVA) and shows port 1,
# an Ethernet (RoCEv2) port.  ibv_rc_pingpong gets a PD and stops at the
# first verb that is not implemented (memory registration), with the error
# libibverbs gives for an absent verb.
. /tests/lib.sh

insmod /lib/modules/pldma.ko; check "insmod pldma.ko" test $? = 0
dmesg | grep -i 'RDMA device' | sed 's/^.*\] /# /'

n=$(ls /sys/class/infiniband 2>/dev/null | grep -c '^pldma')
check "two ib_devices in /sys/class/infiniband (found $n)" test "$n" = 2
for u in /sys/class/infiniband_verbs/uverbs*; do
	[ "$(cat "$u/ibdev" 2>/dev/null)" = pldma0 ] || continue
	check "pldma0: $(basename "$u"), uverbs ABI version 1 (pldma-abi.h)" \
		test "$(cat "$u/abi_version")" = 1
done

O=/tmp/verbs.out
f() { grep -Eq "$1" $O; }
nf() { ! grep -Eq "$1" $O; }
ibv_devices >$O 2>&1; rc=$?
sed 's/^/# /' $O
check "ibv_devices exits 0" test $rc = 0
check "ibv_devices lists pldma0 with its GUID" f '^[[:space:]]+pldma0[[:space:]]+[0-9a-f]{16}'
check "ibv_devices lists pldma1 with its GUID" f '^[[:space:]]+pldma1[[:space:]]+[0-9a-f]{16}'
check "ibv_devices: no libibverbs warning (provider loaded)" nf '[Ww]arning'

for d in pldma0 pldma1; do
	ibv_devinfo -v -d $d >$O 2>&1; rc=$?
	sed 's/^/# /' $O
	check "$d: ibv_devinfo -v exits 0 (context opened: SVA bind)" test $rc = 0
	check "$d: transport InfiniBand (RoCE is IB transport)" f 'transport:[[:space:]]+InfiniBand'
	check "$d: fw_ver from the device's VERSION register" f 'fw_ver:[[:space:]]+[0-9]+\.[0-9]+\.0'
	check "$d: phys_port_cnt 1" f 'phys_port_cnt:[[:space:]]+1'
	check "$d: port 1 PORT_ACTIVE" f 'state:[[:space:]]+PORT_ACTIVE'
	check "$d: port 1 link_layer Ethernet" f 'link_layer:[[:space:]]+Ethernet'
	check "$d: port 1 max_mtu 4096" f 'max_mtu:[[:space:]]+4096'
	check "$d: max_qp from the device (QP_NUM)" f 'max_qp:[[:space:]]+[1-9]'
	check "$d: max_pkeys 1" f 'max_pkeys:[[:space:]]+1'
	check "$d: no ODP advertised (not implemented)" nf 'ON_DEMAND_PAGING'
done

# Two processes at once: two ucontexts, two SVA bonds (two PASIDs)
ibv_devinfo -d pldma0 >/tmp/a 2>&1 & a=$!
ibv_devinfo -d pldma0 >/tmp/b 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
check "two processes open pldma0 at once" test "$ra$rb" = 00

# A verbs program: the PD is allocated, then reg_mr is absent (EOPNOTSUPP)
timeout 20 ibv_rc_pingpong -d pldma0 -g 0 >$O 2>&1; rc=$?
sed 's/^/# /' $O
check "ibv_rc_pingpong: the PD is allocated" nf "Couldn't allocate PD"
check "ibv_rc_pingpong: stops at memory registration (reg_mr absent: EOPNOTSUPP)" f "Couldn't register MR"
check "ibv_rc_pingpong exits non-zero (not implemented: MR, CQ, QP)" test $rc != 0

# Removal with a context open (ibv_asyncwatch holds one and waits for
# async events): ib_core disassociates it (SVA unbound before the bus's DMA
# cleanup: no IOMMU warning), the process gets IBV_EVENT_DEVICE_FATAL, and
# the removal does not wait for it to exit.
ibv_asyncwatch -d pldma1 >/tmp/aw 2>&1 & aw=$!
i=0
while ! grep -q 'async event FD' /tmp/aw && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "ibv_asyncwatch holds a pldma1 context" grep -q 'async event FD' /tmp/aw
timeout 30 rmmod pldma; check "rmmod pldma with a context open (ib_devices unregistered)" test $? = 0
i=0
while ! grep -q 'DEVICE_FATAL' /tmp/aw && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
sed 's/^/# /' /tmp/aw
check "the context's process saw IBV_EVENT_DEVICE_FATAL" grep -q 'IBV_EVENT_DEVICE_FATAL' /tmp/aw
kill $aw 2>/dev/null; wait $aw 2>/dev/null
n=$(ls /sys/class/infiniband 2>/dev/null | grep -c '^pldma')
check "no pldma ib_device after rmmod (found $n)" test "$n" = 0
done_testing
