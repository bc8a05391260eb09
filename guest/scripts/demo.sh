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
	echo "PLDMA devices (one engine, two buses):"
	pci=
	for m in /sys/class/misc/pldma*; do
		d=${m##*/}
		bus=$(readlink "$m/device/subsystem"); bus=${bus##*/}
		mode=$(sed -n 's/^mode: //p' "/sys/kernel/debug/pldma/$d/stats")
		dev=$(readlink -f "$m/device"); dev=${dev##*/}
		printf '  /dev/%-7s %-9s %-7s mode  %s\n' "$d" "$bus" "$mode" "$dev"
		[ "$bus" = pci ] && [ -z "$pci" ] && pci=$d
	done
	echo "== the platform devices (stall and report mode)"
	pldma-demo || exit 1
	if [ -n "$pci" ]; then
		echo "== the PCIe device /dev/$pci (pldma-pci: report mode, MSI-X)"
		pldma-demo -d "/dev/$pci" || exit 1
		echo "its MSI-X vectors (one per channel, fault queue, errors):"
		bdf=$(readlink -f "/sys/class/misc/$pci/device"); bdf=${bdf##*/}
		grep "pldma $bdf " /proc/interrupts | awk '{ n = 0
			for (i = 2; $i ~ /^[0-9]+$/; i++) n += $i
			printf "  %-6s %6d interrupts\n", $NF, n }'
	fi
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
