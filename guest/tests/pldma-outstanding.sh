# SPDX-License-Identifier: GPL-2.0-or-later
# Outstanding stalls (max-outstanding=16 on the stall-mode device) under
# every strategy: data verified, and the faults each copy takes.  With
# accesses ahead, every missing page still stalls exactly once (an access
# that reaches a page whose access ahead is stalled waits for it), so a
# 4 MiB untouched copy takes at least its 1024 destination pages' stalls
# and at most one per page of both buffers (2048), plus the fetch and the
# completion record; without pages missing it takes none.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
for s in stall pin prefault one touch16 batch16 user; do
	t "$s: 64 KiB x20" pldma-test copy $s 65536 20
	t "$s: 1 MiB x5" pldma-test copy $s 1048576 5
done
t "stall: 4 MiB x3, 1024..2050 stalls each" \
	env PLDMA_TEST_FAULTS=1024:2050 pldma-test copy stall 4194304 3 nothp
t "batch16: 4 MiB x3, 64 faults each" \
	env PLDMA_TEST_FAULTS=64:64 pldma-test copy batch16 4194304 3 nothp
t "SIGKILL with outstanding stalls in flight leaks nothing" pldma-test kill stall
st=/sys/kernel/debug/pldma/pldma0/stats
check "no channel left stalled" sh -c "grep -q '^stalled_channels: 0x0$' $st"
sed 's/^/# /' $st
check "rmmod pldma" rmmod pldma
done_testing
