# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile and unlucky users: one process cannot block, starve or
# confuse another, pins are accounted, valid transfers never fail.
# pldma0 is in stall mode (pri on x86 with pldma-pci's fault-mode=pri), pldma1
# in report mode.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
iopf=$(iopf_strategy)
[ -n "$iopf" ] || echo "# no stall or pri device: the IOPF strategy's cases are left out"
t "one: served userfaultfd memory" pldma-hostile uffd one served
t "one: a userfaultfd range nobody serves blocks neither another process nor close()" pldma-hostile uffd one never
t "a resolver that makes no progress is cut off after ~1 s" pldma-hostile slowuser
t "libpldma's timeout follows progress: a slow transfer that moves completes" pldma-hostile slowprogress
t "pin is long-term and limited by RLIMIT_MEMLOCK, on-demand strategies are not" pldma-hostile memlock
t "failed open()s do not use up PASIDs" pldma-hostile pasid /dev/pldma1
chmod 0666 /dev/pldma0
t "an unprivileged user gets at most 2 of 4 channels" pldma-hostile userlimit /dev/pldma0 2
chmod 0660 /dev/pldma0
t "touch-ahead stays inside the transfer" pldma-hostile touchclamp
t "channel page: MAP_SHARED only, I/O VMA flags" pldma-hostile mmapflags
t "queue pairs without a link: EOPNOTSUPP, ENOENT, EFAULT, EINVAL" pldma-hostile noqp
t "libpldma's fault thread does not spin on persistent errors" pldma-hostile fthread
# Page migration must not fail valid transfers: compaction in a loop, then
# with MADV_DONTNEED of the source and MADV_COLLAPSE of the destination.
for s in user one touch16 pin prefault $iopf; do
	t "$s: 1 MiB copies under compaction in a loop, none fails" pldma-hostile compact $s 30
done
thp always
for s in user touch16 $iopf; do
	t "$s: compaction + MADV_DONTNEED + MADV_COLLAPSE races, none fails" pldma-hostile compact $s 15 race
done
thp madvise
check "rmmod pldma" rmmod pldma
# A two-entry fault queue overflows as soon as two channels fault together.
check "insmod pldma.ko fq_entries=2" insmod /lib/modules/pldma.ko fq_entries=2
t "fault tokens stay unique after fault-queue overflows" pldma-hostile tokens
check "rmmod pldma" rmmod pldma
check "no hung task" sh -c '! dmesg | grep -q "blocked for more than"'
check "no warning or oops" sh -c '! dmesg | grep -q "WARNING:\|Oops\|BUG:"'
done_testing
