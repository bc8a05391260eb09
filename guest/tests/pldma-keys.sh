# SPDX-License-Identifier: GPL-2.0-or-later
# Remote-DMA keys against hostile and careless users: one user
# cannot take every key; revoking a key frees its forwarded fault.
. /tests/lib.sh

check "insmod pldma.ko" insmod /lib/modules/pldma.ko
chmod 0666 /dev/pldma1
t "uid 1000 gets 32 of 64 keys, uid 1001 still gets one" pldma-keys userkeys /dev/pldma1 32
chmod 0660 /dev/pldma1
t "revoking a key frees the file's forwarded-fault slot" pldma-keys revoke-fault
t "a QP takes only keys of its PD (the creating process's PASID)" pldma-keys qp-pd
check "rmmod pldma" rmmod pldma
check "no warning or oops" sh -c '! dmesg | grep -q "WARNING:\|Oops\|BUG:"'
done_testing
