# SPDX-License-Identifier: GPL-2.0-or-later
# Both fault modes at once (two PLDMA instances): the demo over every
# strategy, the IOPF strategy's fault count (stall, or pri on x86), and one
# benchmark run with its ratios.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "two PLDMA devices" test -c /dev/pldma0 -a -c /dev/pldma1
pldma-demo 1048576 >/tmp/demo.txt
st=$?
cat /tmp/demo.txt
check "pldma-demo: every strategy verified" test $st = 0
# the IOMMU's IOPF strategy (stall on the platform pldma, pri on pldma-pci)
# took a fault for each of the 256 untouched destination pages at least
s=$(iopf_strategy)
if [ -n "$s" ]; then
	check "pldma-demo: $s took >= 256 faults for 1 MiB, none resolved by the driver" \
		awk -v s="$s" '$1 == s && $2 == s && $NF == "verified" {
			ok = $3 >= 256 && $4 == 0 } END { exit !ok }' /tmp/demo.txt
fi
pldma-bench -i 3 -s 64K,4M >/tmp/bench.csv
check "pldma-bench ran" test $? = 0
# the CSV goes to the console: scripts/plot-bench can read the log
cat /tmp/bench.csv
check "rmmod pldma" rmmod pldma
done_testing
