# SPDX-License-Identifier: GPL-2.0-or-later
# The report-mode suite (pldma-report.sh, unchanged) against -device pldma-pci:
# one-by-one, touch-ahead, user, pin and prefault, isolation, SIGKILL, plus
# the PCI side: MSI-X vectors in use, PASID enabled in config space.
PLDMA_BUS=pci

# interrupts counted on the vectors whose name ends in $1 (all CPUs)
pci_irqs() {
	awk -v v="$1" '$NF == v && $(NF - 2) == "pldma" {
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i
	} END { print n + 0 }' /proc/interrupts
}

suite_extra() {
	grep pldma /proc/interrupts | sed 's/^/# /'
	check "MSI-X: one vector per channel plus fault and error" \
		test "$(grep -c 'pldma .* \(ch[0-9]*\|fault\|error\)$' /proc/interrupts)" = 6
	check "MSI-X: completions arrived on the channel vectors" \
		test "$(pci_irqs ch0)" -gt 0
	check "MSI-X: faults arrived on the fault vector" \
		test "$(pci_irqs fault)" -gt 0
	cfg=/sys/class/misc/pldma0/device/config
	# PASID extended capability at 0x100: Control (Enable = bit 0) at 0x106
	check "PASID Enable set in the PASID capability" \
		test $(( 0x$(od -An -tx2 -j 262 -N 2 "$cfg" | tr -d ' ') & 1 )) = 1
}

. /tests/pldma-report.sh
