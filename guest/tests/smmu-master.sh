# SPDX-License-Identifier: GPL-2.0-or-later
# The unmodified arm-smmu-v3 driver sees stall and SVA support for a platform
# master whose node has dma-can-stall and pasid-num-bits, and none for one
# without dma-can-stall.
. /tests/lib.sh

feat=$(dmesg | sed -n 's/.*arm-smmu-v3.*features 0x\([0-9a-f]*\).*/\1/p' | head -n1)
feat=$((0x${feat:-0}))
check "SMMU advertises stalls (ARM_SMMU_FEAT_STALLS)" test $((feat & (1 << 11))) -ne 0
check "SMMU advertises SVA (ARM_SMMU_FEAT_SVA)" test $((feat & (1 << 17))) -ne 0
check "SMMU advertises 2-level CD tables" test $((feat & (1 << 1))) -ne 0

stall_node= report_node=
for n in /proc/device-tree/platform-bus*/pldma@*; do
	[ -d "$n" ] || continue
	if [ -e "$n/dma-can-stall" ]; then stall_node=$n; else report_node=$n; fi
done
check "stall-mode PLDMA node has dma-can-stall" test -n "$stall_node"
check "report-mode PLDMA node has no dma-can-stall" test -n "$report_node"
hexcells() { od -An -tx1 "$1" 2>/dev/null | tr -d ' \n'; }
bits=$(hexcells "$stall_node/pasid-num-bits")
check "pasid-num-bits = 20" test "$bits" = 00000014
check "node has iommus and dma-coherent" test -e "$stall_node/iommus" -a -e "$stall_node/dma-coherent"
sid=$(hexcells "$stall_node/iommus" | cut -c9-16)
check "its StreamID is above every PCI requester ID (0x10000)" test "$sid" = 00010000

# The driver enables IOMMU_DEV_FEAT_IOPF, which arm-smmu-v3 grants a platform
# master only when it is stall-capable, then SVA; both happen at probe.
check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "stall-mode device probed with IOPF + SVA" sh -c "dmesg | grep -q 'pldma0: .*stall mode'"
check "report-mode device probed with SVA" sh -c "dmesg | grep -q 'pldma1: .*report mode'"
# A transfer into untouched memory stalls in the SMMU, Linux's IOPF resolves it
# and CMD_RESUME lets the device continue.
check "stall-mode copy of untouched memory verified" pldma-demo 65536
stalls=$(sed -n 's/^ *stalls: *//p' /sys/kernel/debug/pldma/pldma0/stats)
echo "# stalls resolved by IOPF on pldma0: $stalls"
check "stalls were raised and resumed" test "${stalls:-0}" -gt 0
check "rmmod pldma" rmmod pldma
done_testing
