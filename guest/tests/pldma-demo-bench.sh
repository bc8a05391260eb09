# SPDX-License-Identifier: GPL-2.0-or-later
# Both fault modes at once (two PLDMA instances): the demo over every
# strategy, and one benchmark run with its ratios.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "two PLDMA devices" test -c /dev/pldma0 -a -c /dev/pldma1
check "pldma-demo: every strategy verified" pldma-demo 1048576
pldma-bench -i 3 -s 64K,4M >/tmp/bench.csv
check "pldma-bench ran" test $? = 0
# the CSV goes to the console: scripts/plot-bench can read the log
cat /tmp/bench.csv
check "rmmod pldma" rmmod pldma
done_testing
