# SPDX-License-Identifier: GPL-2.0-or-later
# Regression: a virtio-blk-pci device behind the patched SMMUv3 (with
# iommu_platform=on, so every virtqueue and data access is translated by the
# SMMU through the Linux DMA API) still reads and writes correctly.
. /tests/lib.sh

want=
for arg in $(cat /proc/cmdline); do
	case "$arg" in pldma.disk_sha256=*) want=${arg#*=} ;; esac
done
dev=/dev/vda
check "scratch disk present" test -b $dev
pci=$(readlink -f /sys/block/vda/device/..)
echo "# virtio-blk PCI function: ${pci##*/}"
check "virtio-blk-pci is behind the SMMU (has an IOMMU group)" test -e "$pci/iommu_group"
type=$(cat "$pci/iommu_group/type" 2>/dev/null)
echo "# its IOMMU domain type: $type"
check "its DMA goes through a translating domain" test "$type" = DMA -o "$type" = DMA-FQ

got=$(dd if=$dev bs=1M iflag=direct 2>/dev/null | sha256sum | cut -c1-64)
check "reading the disk through the SMMU returns the host's data" test "$got" = "$want"

dd if=/dev/urandom of=/tmp/pattern bs=1M count=8 2>/dev/null
dd if=/tmp/pattern of=$dev bs=1M oflag=direct conv=fsync 2>/dev/null
echo 3 >/proc/sys/vm/drop_caches
a=$(sha256sum </tmp/pattern | cut -c1-64)
b=$(dd if=$dev bs=1M count=8 iflag=direct 2>/dev/null | sha256sum | cut -c1-64)
check "8 MiB written through the SMMU read back identical" test "$a" = "$b"
done_testing
