# SPDX-License-Identifier: GPL-2.0-or-later
# Bounded time in stall mode: a COPY from a FUSE file
# whose READ is never answered is cancelled by the driver after ~1 s without
# progress, while another process's stall-mode copy completes; killing the
# FUSE server then lets both close() and rmmod finish.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
check "/dev/pldma0 exists" test -c /dev/pldma0
st=/sys/kernel/debug/pldma/pldma0/stats
t "stall: a fault nobody answers is cancelled after ~1 s, another channel goes on" \
	pldma-fusehang /dev/pldma0 $st
t "stall: a copy whose stalls each wait 400 ms for FUSE, 1 MiB over > 1 s, is not cancelled" \
	pldma-fusehang /dev/pldma0 $st slow
check "no channel left bound" sh -c "! grep -q '^  ch' $st"
check "no channel left stalled or faulted" sh -c "grep -q '^stalled_channels: 0x0$' $st && grep -q '^faulted_channels: 0x0$' $st"
check "no hung task" sh -c '! dmesg | grep -q "blocked for more than"'
sed 's/^/# /' $st
check "rmmod pldma" rmmod pldma
done_testing
