# SPDX-License-Identifier: GPL-2.0-or-later
# The platform device and pldma-pci in one guest, both in report mode:
# /dev/pldma0 and /dev/pldma1 each copy correctly, alone and at the same
# time, with two processes isolated on each.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
dmesg | grep -i 'pldma' | sed 's/^/# /'
bus() { readlink "/sys/class/misc/$1/device/subsystem" | sed 's,.*/,,'; }
check "/dev/pldma0 and /dev/pldma1 exist" test -c /dev/pldma0 -a -c /dev/pldma1
check "one platform device, one PCI device" \
	test "$(bus pldma0) $(bus pldma1)" = "platform pci"
for d in pldma0 pldma1; do
	b=$(bus $d)
	export PLDMA_TEST_DEVICE=/dev/$d
	t "$d ($b): one, 1 MiB x5" pldma-test copy one 1048576 5
	t "$d ($b): touch16, 1 MiB x5" pldma-test copy touch16 1048576 5
	t "$d ($b): user, 64 KiB x20" pldma-test copy user 65536 20
	t "$d ($b): pin, 1 MiB x5" pldma-test copy pin 1048576 5
	t "$d ($b): two processes isolated" pldma-test isolation one
	unset PLDMA_TEST_DEVICE
done
# both devices at once, from two processes
PLDMA_TEST_DEVICE=/dev/pldma0 pldma-test copy one 4194304 4 >/tmp/c0 2>&1 &
p0=$!
PLDMA_TEST_DEVICE=/dev/pldma1 pldma-test copy one 4194304 4 >/tmp/c1 2>&1 &
p1=$!
wait $p0; r0=$?
wait $p1; r1=$?
sed 's/^/# pldma0: /' /tmp/c0; sed 's/^/# pldma1: /' /tmp/c1
check "both devices copy 4 MiB x4 at the same time" test "$r0 $r1" = "0 0"
for d in pldma0 pldma1; do
	st=/sys/kernel/debug/pldma/$d/stats
	check "$d: faults served by the driver" sh -c "grep -q '^faults_one: [1-9]' $st"
	check "$d: no channel left bound or faulted" \
		sh -c "! grep -q '^  ch' $st && grep -q '^faulted_channels: 0x0$' $st"
done
check "no hung task or warning" sh -c '! dmesg | grep -q "blocked for more than\|WARNING:\|Oops\|BUG:"'
check "rmmod pldma" rmmod pldma
done_testing
