# SPDX-License-Identifier: GPL-2.0-or-later
# The guest side of the migration test (tests/migration/run): a stream of
# demand-paged copies in every strategy, on a stall-mode and a report-mode
# PLDMA, while the host stops, migrates and restores the VM.  Each phase ends
# when the host writes "next N" on the console (or after MAX copies).
# The harness passes pldma.stream=SIZE,MIN,MAX,PHASE,... on the kernel
# command line; the defaults below are for a run by hand, without a host to
# end the phases (scripts/run-guest --test migrate-stream).
. /tests/lib.sh

args="1048576 4 40 stall one touch16 user pin prefault stall+user stall+stall+one+user"
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.stream=*) args=$(echo "${arg#pldma.stream=}" | tr , ' ') ;;
	esac
done

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
# 4 KiB pages: one device fault per page, so a stop often finds a channel
# STALLED or FAULTED
thp never
t "stream of verified copies: $args" pldma-test stream $args
for st in /sys/kernel/debug/pldma/pldma*/stats; do
	d=$(basename "$(dirname "$st")")
	check "$d: no channel left bound" sh -c "! grep -q '^  ch' $st"
	check "$d: no channel left stalled or faulted" sh -c "grep -q '^stalled_channels: 0x0$' $st && grep -q '^faulted_channels: 0x0$' $st"
	sed 's/^/# /' "$st"
done
check "no hung task" sh -c '! dmesg | grep -q "blocked for more than"'
check "rmmod pldma" rmmod pldma
done_testing
