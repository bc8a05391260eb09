# SPDX-License-Identifier: GPL-2.0-or-later
# pldma.ko on a report-mode device: one-by-one, touch-ahead and user-space
# fault resolution (plus pin and prefault).  PLDMA_BUS names the bus of the
# device under test (pldma-report-pci.sh: pci); a function suite_extra, if
# defined, runs before rmmod.
. /tests/lib.sh
bus=${PLDMA_BUS:-platform}

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "/dev/pldma0 exists" test -c /dev/pldma0
check "pldma0 is the $bus device" sh -c "readlink /sys/class/misc/pldma0/device/subsystem | grep -q '/$bus\$'"
dmesg | grep -i pldma | sed 's/^/# /'

# Iterations per size: MADV_DONTNEED on both buffers before each one.
# 16 MiB runs fewer iterations: TCG copies about 100-200 MB/s.
for s in one touch16 batch16 user pin prefault; do
	t "$s: 4 KiB x100" pldma-test copy $s 4096 100
	t "$s: 64 KiB x100" pldma-test copy $s 65536 100
	t "$s: 1 MiB x10" pldma-test copy $s 1048576 10
	t "$s: 16 MiB x2" pldma-test copy $s 16777216 2
done
thp never
# Page-cache fault-around would map 16 source pages per read fault whatever
# the strategy: turn it off to count the strategy's own faults.
far=$(cat /sys/kernel/debug/fault_around_bytes)
echo 4096 >/sys/kernel/debug/fault_around_bytes
t "touch-ahead(16) takes ~1/16 of one-by-one's faults (4 MiB)" pldma-test touchratio
t "queued transfers keep their own strategy (one + touch16)" pldma-test mixed
t "batch(16): one fault lists both buffers' missing pages, ~1/32 of one-by-one's faults (4 MiB)" pldma-test batchratio
echo "$far" >/sys/kernel/debug/fault_around_bytes
for s in one touch16 batch16 user; do
	t "$s: 4 MiB x3, THP never" pldma-test copy $s 4194304 3 nothp
done
thp always
for s in one touch16 user; do
	t "$s: 4 MiB x3, THP always" pldma-test copy $s 4194304 3 thp
done
thp madvise
for s in one touch16 user; do
	t "$s: MADV_HUGEPAGE destination takes fewer faults" pldma-test thp $s
done
t "user strategy serves userfaultfd memory (UFFDIO_COPY)" pldma-uffd-example 1048576
for s in one touch16 user pin prefault; do
	t "$s: unmapped address -> error completion within 1 s" pldma-test unmapped $s
done
t "bad ioctl/mmap arguments rejected" pldma-test badargs
t "poll()/read()/eventfd on completion; POLLPRI for user faults; unanswered fault cancelled" pldma-test poll
t "two processes on two channels are isolated" pldma-test isolation one
t "two processes, user strategy, isolated" pldma-test isolation user
t "SIGKILL with a forwarded fault pending leaks nothing" pldma-test kill user
t "SIGKILL while the driver resolves faults leaks nothing" pldma-test kill one
t "pin: present pages whose PTEs were aged take one fault per window, not per page" pldma-test aged pin
t "prefault: the same" pldma-test aged prefault
st=/sys/kernel/debug/pldma/pldma0/stats
check "no channel left bound" sh -c "! grep -q '^  ch' $st"
check "no channel left stalled or faulted" sh -c "grep -q '^stalled_channels: 0x0$' $st && grep -q '^faulted_channels: 0x0$' $st"
check "no hung task" sh -c '! dmesg | grep -q "blocked for more than"'
sed 's/^/# /' /sys/kernel/debug/pldma/pldma0/stats
! type suite_extra >/dev/null 2>&1 || suite_extra
check "rmmod pldma" rmmod pldma
done_testing
