# SPDX-License-Identifier: GPL-2.0-or-later
# `make demo`: show what the guest has for page-fault-tolerant DMA.
echo "--- PLDMA demo ---"
echo "kernel: $(uname -r)"
line=$(dmesg | grep -m1 'arm-smmu-v3.*features 0x')
if [ -z "$line" ]; then
	echo "arm-smmu-v3 did not probe"
	exit 1
fi
echo "SMMU probe: ${line#*] }"
feat=$(echo "$line" | sed -n 's/.*features 0x\([0-9a-f]*\).*/\1/p')
feat=$((0x$feat))
for b in 17:SVA 11:STALLS 13:STALL_FORCE 8:COHERENCY 1:2_LVL_CDTAB 9:TRANS_S1; do
	bit=${b%%:*}; name=${b#*:}
	if [ $((feat & (1 << bit))) -ne 0 ]; then v=yes; else v=no; fi
	printf '  ARM_SMMU_FEAT_%-12s %s\n' "$name" "$v"
done
echo "kernel SVA support:"
zcat /proc/config.gz | grep -E '^CONFIG_(ARM_SMMU_V3_SVA|IOMMU_SVA|IOMMU_IOPF)=' | sed 's/^/  /'
zcat /proc/config.gz | grep -q '^CONFIG_ARM_SMMU_V3_SVA=y' || exit 1
[ $((feat & (1 << 17))) -ne 0 ] || { echo "SMMU does not offer SVA"; exit 1; }
if [ -e /lib/modules/pldma.ko ] && [ -x /bin/pldma-demo ]; then
	insmod /lib/modules/pldma.ko || exit 1
	dmesg | grep 'pldma.*mode' | sed 's/^.*] /  /'
	pldma-demo || exit 1
	[ -x /bin/pldma-uffd-example ] && { pldma-uffd-example || exit 1; }
	echo "fault statistics (debugfs):"
	for f in /sys/kernel/debug/pldma/*/stats; do
		echo "  $f:"
		grep -v '^  <' "$f" | sed 's/^/    /'
	done
else
	echo "(the PLDMA device and driver are not part of this build yet)"
fi
echo "--- demo OK ---"
