# SPDX-License-Identifier: GPL-2.0-or-later
# The guest booted with the SMMU probed and the kernel's SVA support present.
. /tests/lib.sh

cfg() { zcat /proc/config.gz | grep -qx "$1"; }
for o in CONFIG_ARM_SMMU_V3=y CONFIG_ARM_SMMU_V3_SVA=y CONFIG_IOMMU_SVA=y \
	 CONFIG_IOMMU_IOPF=y CONFIG_USERFAULTFD=y CONFIG_TRANSPARENT_HUGEPAGE=y \
	 CONFIG_MODULES=y CONFIG_DEBUG_FS=y; do
	check "kernel config has $o" cfg "$o"
done

line=$(dmesg | grep -m1 'arm-smmu-v3.*features 0x')
echo "# $line"
check "arm-smmu-v3 probed" test -n "$line"
feat=$(echo "$line" | sed -n 's/.*features 0x\([0-9a-f]*\).*/\1/p')
feat=$((0x${feat:-0}))
# ARM_SMMU_FEAT_* from drivers/iommu/arm/arm-smmu-v3/arm-smmu-v3.h (6.12)
check "SMMU reports SVA (ARM_SMMU_FEAT_SVA)" test $((feat & (1 << 17))) -ne 0
check "SMMU is coherent (ARM_SMMU_FEAT_COHERENCY)" test $((feat & (1 << 8))) -ne 0
if [ $((feat & (1 << 11))) -ne 0 ]; then
	echo "# SMMU supports stalls (ARM_SMMU_FEAT_STALLS)"
fi
check "iommu group for the SMMU's masters" test -d /sys/kernel/iommu_groups
done_testing
