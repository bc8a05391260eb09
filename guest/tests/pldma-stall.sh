# SPDX-License-Identifier: GPL-2.0-or-later
# pldma.ko on a stall-mode device: pin, prefault and stall (IOPF) strategies.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "/dev/pldma0 exists" test -c /dev/pldma0
dmesg | grep -i pldma | sed 's/^/# /'

# Iterations per size: MADV_DONTNEED on both buffers before each one.
# 16 MiB runs fewer iterations: TCG copies about 100-200 MB/s.
for s in pin prefault stall; do
	t "$s: 4 KiB x100" pldma-test copy $s 4096 100
	t "$s: 64 KiB x100" pldma-test copy $s 65536 100
	t "$s: 1 MiB x10" pldma-test copy $s 1048576 10
	t "$s: 16 MiB x2" pldma-test copy $s 16777216 2
done
thp always
t "stall: 4 MiB x3, THP always" pldma-test copy stall 4194304 3 thp
thp never
t "stall: 4 MiB x3, THP never" pldma-test copy stall 4194304 3 nothp
thp madvise
for s in stall; do
	t "$s: MADV_HUGEPAGE destination takes fewer faults" pldma-test thp $s
done
for s in pin prefault stall; do
	t "$s: unmapped address -> error completion within 1 s" pldma-test unmapped $s
done
t "bad ioctl/mmap arguments rejected" pldma-test badargs
t "poll(): POLLIN on completion, re-armed by read(); eventfd" pldma-test poll
t "two processes on two channels are isolated" pldma-test isolation stall
t "SIGKILL with stalls in flight leaks nothing" pldma-test kill stall
st=/sys/kernel/debug/pldma/pldma0/stats
check "no channel left bound" sh -c "! grep -q '^  ch' $st"
check "no channel left stalled or faulted" sh -c "grep -q '^stalled_channels: 0x0$' $st && grep -q '^faulted_channels: 0x0$' $st"
check "no hung task" sh -c '! dmesg | grep -q "blocked for more than"'
sed 's/^/# /' /sys/kernel/debug/pldma/pldma0/stats
check "rmmod pldma" rmmod pldma
done_testing
