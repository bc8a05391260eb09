# SPDX-License-Identifier: GPL-2.0-or-later
# The guest booted with the IOMMU probed and the kernel's SVA support present:
# the SMMUv3 on aarch64, intel-iommu in scalable mode on x86-64.
. /tests/lib.sh

cfg() { zcat /proc/config.gz | grep -qx "$1"; }

if [ "$(uname -m)" = x86_64 ]; then
	for o in CONFIG_INTEL_IOMMU=y CONFIG_INTEL_IOMMU_SVM=y CONFIG_IOMMU_SVA=y \
		 CONFIG_IOMMU_IOPF=y CONFIG_PCI_ATS=y CONFIG_PCI_PRI=y \
		 CONFIG_PCI_PASID=y CONFIG_USERFAULTFD=y CONFIG_MODULES=y \
		 CONFIG_DEBUG_FS=y; do
		check "kernel config has $o" cfg "$o"
	done
	line=$(dmesg | grep -m1 'DMAR: dmar0: reg_base_addr')
	echo "# $line"
	check "intel-iommu (DMAR) probed" test -n "$line"
	ecap=$(echo "$line" | sed -n 's/.* ecap \([0-9a-f]*\).*/\1/p')
	ecap=$((0x${ecap:-0}))
	# VT-d extended capabilities (spec 11.4.3): SMTS 43, FLTS 47, PASID 40
	check "IOMMU in scalable mode (ECAP.SMTS)" test $((ecap & (1 << 43))) -ne 0
	check "IOMMU has first-stage translation (ECAP.FLTS)" test $((ecap & (1 << 47))) -ne 0
	check "IOMMU has PASIDs (ECAP.PASID)" test $((ecap & (1 << 40))) -ne 0
	check "IOMMU has the device IOTLB (ECAP.DT)" test $((ecap & (1 << 2))) -ne 0
	for b in 29:PRS 48:SMPWC; do
		[ $((ecap & (1 << ${b%%:*}))) -ne 0 ] || echo "# IOMMU lacks ECAP.${b#*:}"
	done
	check "iommu group for the IOMMU's devices" test -d /sys/kernel/iommu_groups
	done_testing
	exit
fi

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
