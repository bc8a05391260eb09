# SPDX-License-Identifier: GPL-2.0-or-later
# pldma.ko binds to the device and exposes /dev/pldma0 (quick smoke test).
. /tests/lib.sh
check "insmod pldma.ko" insmod /lib/modules/pldma.ko
dmesg | grep -i 'pldma\|smmu' | sed 's/^/# /'
check "/dev/pldma0 exists" test -c /dev/pldma0
check "debugfs stats" test -r /sys/kernel/debug/pldma/pldma0/stats
cat /sys/kernel/debug/pldma/pldma0/stats 2>/dev/null | grep -v '^  <' | sed 's/^/# /'
check "pldma-demo 64 KiB" pldma-demo 65536
check "rmmod pldma" rmmod pldma
done_testing
