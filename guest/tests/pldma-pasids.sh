# SPDX-License-Identifier: GPL-2.0-or-later
# More processes hold a PASID at once than 8 SubstreamID bits allow: each
# of 300 sleeping processes bound /dev/pldma0 (the channel reused after
# close), copied through its PASID and keeps the PASID until it exits.
. /tests/lib.sh
# On x86 (q35, pldma-pci behind intel-iommu) the PASIDs are the IOMMU's:
# its ECAP.PSS says 20 bits (patch 0038; QEMU 10.2 said 8, and the 256th
# bind failed with ENOSPC).
n=300
check "insmod pldma.ko" insmod /lib/modules/pldma.ko
grep -h "pasid-num-bits\|ssid" /sys/kernel/debug/pldma/pldma0/stats 2>/dev/null | sed 's/^/# /'
check "$((n + 1)) processes hold a PASID at once, each copied and verified" \
	pldma-pasids $n
st=/sys/kernel/debug/pldma/pldma0/stats
check "no channel left bound" sh -c "! grep -q '^  ch' $st"
check "rmmod pldma" rmmod pldma
done_testing
