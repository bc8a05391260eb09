# SPDX-License-Identifier: GPL-2.0-or-later
# The driver's tracepoints in /sys/kernel/tracing: a fault's life in the
# driver (report mode: received, pages made present or forwarded, RESTART or
# CANCEL), pin/unpin and bind/unbind, next to the IOMMU core's events (stall
# mode: kprobes on iommu_report_device_fault() and iopf_group_response(),
# plus the iommu:* tracepoints, whose io_page_fault 6.12's arm-smmu-v3 never
# emits for IOPF).  pldma0 is in stall mode, pldma1 in report mode.
. /tests/lib.sh

T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
check "tracefs at $T" test -f $T/trace
check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "pldma tracepoints registered" test -d $T/events/pldma/pldma_fault
echo 0 >$T/tracing_on
echo 4096 >$T/buffer_size_kb
: >$T/trace
echo 1 >$T/events/pldma/enable
echo 1 >$T/events/iommu/enable
# struct iopf_fault: prm.pasid at +12, prm.addr at +24 (6.12)
echo 'p:iommu_core/report_device_fault iommu_report_device_fault pasid=+12(%x1):u32 addr=+24(%x1):x64' >>$T/kprobe_events
echo 'p:iommu_core/iopf_group_response iopf_group_response status=%x1:u32' >>$T/kprobe_events
check "kprobe events on the IOMMU core's fault path" test -d $T/events/iommu_core/report_device_fault
echo 1 >$T/events/iommu_core/enable
echo 1 >$T/tracing_on
t "report mode, one: 64 KiB copy" pldma-test copy one 65536 1
t "report mode, touch16: 64 KiB copy" pldma-test copy touch16 65536 1
t "report mode, user: 64 KiB copy" pldma-test copy user 65536 1
t "stall mode, stall: 64 KiB copy" pldma-test copy stall 65536 1
t "pin: 64 KiB copy" pldma-test copy pin 65536 1
t "a resolver without progress is cancelled" pldma-hostile slowuser
echo 0 >$T/tracing_on
cat $T/trace >/tmp/trace.txt
n() { grep -c "$1" /tmp/trace.txt; }
for e in pldma_bind pldma_unbind pldma_fault: pldma_fault_in pldma_restart pldma_cancel pldma_forward pldma_pin pldma_unpin report_device_fault iopf_group_response io_page_fault; do
	echo "# $e: $(n "$e") events"
done
check "bind and unbind of every channel" test "$(n 'pldma_bind:')" -ge 6 -a "$(n 'pldma_bind:')" = "$(n 'pldma_unbind:')"
check "faults received, pages made present, restarts" test "$(n 'pldma_fault:')" -gt 0 -a "$(n 'pldma_fault_in:')" -gt 0 -a "$(n 'pldma_restart:')" -gt 0
check "faults forwarded to user space" test "$(n 'pldma_forward:')" -gt 0
check "cancel for no progress" grep -q 'pldma_cancel:.*reason no-progress' /tmp/trace.txt
check "pin and unpin" test "$(n 'pldma_pin:')" -gt 0 -a "$(n 'pldma_pin:')" = "$(n 'pldma_unpin:')"
check "the IOMMU core's stall reports and responses" test "$(n 'report_device_fault:')" -gt 0 -a "$(n 'iopf_group_response:')" -gt 0

# One fault's life in report mode: received, pages made present, RESTART.
echo "# one fault of the 'one' strategy:"
grep -m1 -A2 'pldma_fault: pldma1 .*strategy one' /tmp/trace.txt | sed 's/^/#   /'
# A stall in stall mode: the IOMMU core reports it with the PASID of the
# stall-mode channel bound last before it, and answers it.
awk '/pldma_bind: pldma0 / { for (i = 1; i <= NF; i++) if ($i == "pasid") b[$(i + 1)] = $0 }
     /report_device_fault:/ && !done { split($NF, x, "="); p = $(NF - 1); sub("pasid=", "", p)
	if (p in b) { print b[p]; print; found = 1 } done = 1; next }
     done == 1 && /iopf_group_response:/ { print; done = 2 }
     END { exit !found }' /tmp/trace.txt >/tmp/stall.txt
st=$?
echo "# a stall and the channel binding its PASID belongs to:"
sed 's/^/#   /' /tmp/stall.txt
check "stalls reach the IOMMU core with a stall-mode channel's PASID" test $st = 0
echo 0 >$T/events/enable
echo >$T/kprobe_events
check "rmmod pldma" rmmod pldma
done_testing
