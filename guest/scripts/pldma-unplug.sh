# SPDX-License-Identifier: GPL-2.0-or-later
# Surprise removal, then hot-plug, driven by tests/hotplug/run: two
# processes copy through pldma-pci (behind a pcie-root-port) when the host
# device_dels it, and a third holds CQs and a QP with a receive queue, their
# rings mapped, and waits for a CQ event.  Each gets an error (the channel
# page and the rings are zapped: SIGBUS; WAIT, CQ_WAIT: ENODEV) and nothing
# hangs.  Then the host device_adds a new
# pldma-pci on the same root port: pciehp enumerates it, the still loaded
# pldma.ko probes it, and report-mode copies on it are verified byte for
# byte.  The module unloads afterwards.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "/dev/pldma0 is the PCI device" sh -c "readlink /sys/class/misc/pldma0/device/subsystem | grep -q '/pci\$'"
olddev=$(readlink -f /sys/class/misc/pldma0/device)
port=${olddev%/*}
echo "# pldma0: $olddev"
PLDMA_TEST_DEVICE=/dev/pldma0 pldma-test copy user 16777216 1000 >/tmp/u1 2>&1 &
p1=$!
PLDMA_TEST_DEVICE=/dev/pldma0 pldma-test copy one 16777216 1000 >/tmp/u2 2>&1 &
p2=$!
pldma-rdma cqhold 1 >/tmp/u3 2>&1 &
p3=$!
sleep 2
check "the three processes hold a channel" sh -c "grep -c '^  ch' /sys/kernel/debug/pldma/pldma0/stats | grep -qx 3"
check "the CQ holder holds its CQs" grep -q '^  cq 1 ACTIVE' /sys/kernel/debug/pldma/pldma0/cqs
echo "=== PLDMA-UNPLUG-NOW"
wait $p1; r1=$?
wait $p2; r2=$?
wait $p3; r3=$?
sed 's/^/# user: /' /tmp/u1 | tail -n 3
sed 's/^/# one: /' /tmp/u2 | tail -n 3
sed 's/^/# cqhold: /' /tmp/u3
echo "# exit status: user $r1, one $r2, cqhold $r3"
check "the CQ holder saw ENODEV, lost its mappings and closed" test "$r3" = 0
check "the user-strategy process got an error" test "$r1" != 0
check "the one-strategy process got an error" test "$r2" != 0
i=0
while [ -e /dev/pldma0 ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
check "/dev/pldma0 is gone" test ! -e /dev/pldma0
dmesg | grep 'pldma\|pciehp' | sed 's/^/# /'
check "every held channel was detached" test "$(dmesg | grep -c 'device removed while held')" = 3

# Hot-plug: the host device_adds pldma-pci1 on rp1 when it reads this.
pcidev() {
	for m in /sys/class/misc/pldma*; do
		[ -e "$m/device" ] || continue
		readlink "$m/device/subsystem" | grep -q '/pci$' || continue
		basename "$m"
		return 0
	done
	return 1
}
echo "=== PLDMA-PLUG-NOW"
i=0
while ! new=$(pcidev) && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
if [ -z "$new" ]; then
	# pciehp did not bring it up: look for it by hand, to tell the cases apart
	echo "# no new device after ${i} s; rescanning the bus"
	echo 1 >/sys/bus/pci/rescan
	sleep 2
	new=$(pcidev)
	check "the new pldma-pci appeared without a manual rescan" false
else
	echo "# $new appeared ${i} s after PLDMA-PLUG-NOW"
	check "the new pldma-pci appeared without a manual rescan" true
fi
dmesg | grep 'pldma\|pciehp' | tail -n 8 | sed 's/^/# /'
if [ -n "$new" ]; then
	st=/sys/kernel/debug/pldma/$new/stats
	newdev=$(readlink -f "/sys/class/misc/$new/device")
	echo "# $new: $newdev"
	check "$new sits behind the same root port" test "${newdev%/*}" = "$port"
	check "$new is bound to pldma-pci" sh -c "readlink $newdev/driver | grep -q '/pldma-pci\$'"
	check "$new is in report mode" grep -q '^mode: report$' "$st"
	export PLDMA_TEST_DEVICE=/dev/$new
	t "$new: one, 1 MiB x3, bytes compared" pldma-test copy one 1048576 3
	t "$new: user, 64 KiB x10, bytes compared" pldma-test copy user 65536 10
	unset PLDMA_TEST_DEVICE
	grep -v '^  <' "$st" | sed 's/^/# /'
	check "$new: faults served by the driver (report mode)" \
		sh -c "grep -q '^faults_one: [1-9]' $st && grep -q '^faults_user: [1-9]' $st"
	check "$new: no channel left bound or faulted" \
		sh -c "! grep -q '^  ch' $st && grep -q '^faulted_channels: 0x0$' $st"
else
	not_ok "a pldma-pci to copy with after the hot-plug"
fi
check "no hung task, warning or oops" sh -c '! dmesg | grep -q "blocked for more than\|WARNING:\|Oops\|BUG:"'
check "rmmod pldma" rmmod pldma
check "module gone" sh -c '! grep -q "^pldma " /proc/modules'
done_testing
