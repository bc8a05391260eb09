# SPDX-License-Identifier: GPL-2.0-or-later
# Surprise removal, driven by tests/hotplug/run: two processes copy through
# pldma-pci (behind a pcie-root-port) when the host device_dels it.  Each
# gets an error (the channel page is zapped: SIGBUS; WAIT: ENODEV), nothing
# hangs, and the module unloads afterwards.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "/dev/pldma0 is the PCI device" sh -c "readlink /sys/class/misc/pldma0/device/subsystem | grep -q '/pci\$'"
PLDMA_TEST_DEVICE=/dev/pldma0 pldma-test copy user 16777216 1000 >/tmp/u1 2>&1 &
p1=$!
PLDMA_TEST_DEVICE=/dev/pldma0 pldma-test copy one 16777216 1000 >/tmp/u2 2>&1 &
p2=$!
sleep 2
check "both processes hold a channel" sh -c "grep -c '^  ch' /sys/kernel/debug/pldma/pldma0/stats | grep -qx 2"
echo "=== PLDMA-UNPLUG-NOW"
wait $p1; r1=$?
wait $p2; r2=$?
sed 's/^/# user: /' /tmp/u1 | tail -n 3
sed 's/^/# one: /' /tmp/u2 | tail -n 3
echo "# exit status: user $r1, one $r2"
check "the user-strategy process got an error" test "$r1" != 0
check "the one-strategy process got an error" test "$r2" != 0
i=0
while [ -e /dev/pldma0 ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
check "/dev/pldma0 is gone" test ! -e /dev/pldma0
dmesg | grep 'pldma\|pciehp' | sed 's/^/# /'
check "every held channel was detached" test "$(dmesg | grep -c 'device removed while held')" = 2
check "no hung task, warning or oops" sh -c '! dmesg | grep -q "blocked for more than\|WARNING:\|Oops\|BUG:"'
check "rmmod pldma" rmmod pldma
check "module gone" sh -c '! grep -q "^pldma " /proc/modules'
done_testing
