# SPDX-License-Identifier: GPL-2.0-or-later
# Valid transfers do not fail under memory pressure.  In a
# 128 MiB guest swapping to zram, fourteen working sets of 2 x 4 MiB are copied
# round robin, so that each copy swaps in what the others evicted, and a
# single page's fault-in can take seconds (reclaim and decompression in
# the fault work).  The no-progress watchdog (1 s) cancelled such copies
# (status CANCELLED) in one-by-one, touch-ahead and batch, 4 of 4 cases;
# it must tell a slow, busy fault-in from a filler that does not answer.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "/dev/pldma0 exists" test -c /dev/pldma0
z=/sys/block/zram0
check "zram swap of 512M" sh -c "echo 512M >$z/disksize && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"
thp never
st=/sys/kernel/debug/pldma/pldma0/stats
grep -E '^(MemTotal|MemAvailable|SwapTotal):' /proc/meminfo | sed 's/^/# /'
for s in one touch16 batch16; do
	t "$s: 14 working sets of 2 x 4 MiB, 2 rounds, under memory pressure: every copy completes" \
		sh -c "pldma-bench -E 14 -i 2 -s 4M -t $s >/tmp/evict-$s.out; r=\$?; grep -E '^# (FAIL|evict)' /tmp/evict-$s.out | head -5; exit \$r"
done
grep -E '^(pswpin|pswpout) ' /proc/vmstat | sed 's/^/# /'
grep -E '^(cancels_no_progress|slow_fault_in_periods):' $st | sed 's/^/# /'
check "no copy cancelled for lack of progress" grep -q '^cancels_no_progress: 0$' $st
check "swap-ins happened (the pressure was real)" sh -c "[ \$(awk '/^pswpin /{print \$2}' /proc/vmstat) -gt 1000 ]"
swapoff /dev/zram0
kernel_reports
check "rmmod pldma" rmmod pldma
done_testing
